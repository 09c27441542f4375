/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_getinfo offer decisions (offer.h).
 */
#include "offer.h"

#include <errno.h>

#include "mrail_compat.h"
#include "mrail_err.h"

/* Names the lowest bit of bits for an error sentence. */
static const char *cap_name(uint64_t bits)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{ FI_MSG, "FI_MSG" }, { FI_RMA, "FI_RMA" },
		{ FI_TAGGED, "FI_TAGGED" }, { FI_ATOMIC, "FI_ATOMIC" },
		{ FI_MULTICAST, "FI_MULTICAST" },
		{ FI_NAMED_RX_CTX, "FI_NAMED_RX_CTX" },
		{ FI_DIRECTED_RECV, "FI_DIRECTED_RECV" },
		{ FI_VARIABLE_MSG, "FI_VARIABLE_MSG" }, { FI_HMEM, "FI_HMEM" },
		{ FI_COLLECTIVE, "FI_COLLECTIVE" }, { FI_SHARED_AV, "FI_SHARED_AV" },
		{ FI_FENCE, "FI_FENCE" }, { FI_RMA_PMEM, "FI_RMA_PMEM" },
		{ FI_SOURCE_ERR, "FI_SOURCE_ERR" }, { FI_TRIGGER, "FI_TRIGGER" },
		{ FI_RMA_EVENT, "FI_RMA_EVENT" }, { FI_SOURCE, "FI_SOURCE" },
		{ FI_MULTI_RECV, "FI_MULTI_RECV" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (bits & names[i].bit)
			return names[i].name;
	return "an unknown capability bit";
}

static int refuse(uint64_t lacking, const char *where, char *err, size_t err_len)
{
	mrail_write_err(err, err_len, "%s asks for %s (bits %#llx), which mrail "
			"does not support", where, cap_name(lacking),
			(unsigned long long) lacking);
	return -ENODATA;
}

int mrail_offer_caps(const struct mrail_offer_prov *prov, uint64_t asked,
		     uint64_t hint_domain_caps, uint64_t hint_tx_caps,
		     uint64_t hint_rx_caps, struct mrail_offer_caps *out,
		     char *err, size_t err_len)
{
	uint64_t caps, named = asked | hint_tx_caps | hint_rx_caps;

	if (named & ~prov->supported)
		return refuse(named & ~prov->supported, "hints->caps", err, err_len);
	if (hint_domain_caps & ~(prov->supported & MRAIL_OFFER_DOMAIN))
		return refuse(hint_domain_caps &
			      ~(prov->supported & MRAIL_OFFER_DOMAIN),
			      "hints->domain_attr->caps", err, err_len);

	if (!asked) {
		/* No caps named: the default offer. The contexts' caps, when
		 * named, still say which primary capabilities are used. */
		caps = prov->supported & ~prov->on_request;
		if (hint_tx_caps | hint_rx_caps)
			caps = (caps & ~MRAIL_OFFER_PRIMARY) |
			       ((hint_tx_caps | hint_rx_caps) & MRAIL_OFFER_PRIMARY);
	} else {
		caps = asked | (prov->free_secondary & prov->supported);
	}
	caps |= hint_domain_caps;
	/* A capability named without any of its modifiers has all of them
	 * (fi_getinfo(3)); saying so lets the caller see what it has. */
	if ((caps & (FI_MSG | FI_TAGGED | FI_COLLECTIVE)) &&
	    !(caps & (FI_SEND | FI_RECV)))
		caps |= (FI_SEND | FI_RECV) & prov->supported;
	if ((caps & (FI_RMA | FI_ATOMIC)) &&
	    !(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		caps |= (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE) &
			prov->supported;

	out->caps = caps;
	out->tx_caps = caps & MRAIL_OFFER_TX;
	out->rx_caps = caps & MRAIL_OFFER_RX;
	/* Contexts named with fewer capabilities than the endpoint keep
	 * to what they named. */
	if (hint_tx_caps)
		out->tx_caps &= hint_tx_caps | ~MRAIL_OFFER_PRIMARY;
	if (hint_rx_caps)
		out->rx_caps &= hint_rx_caps | ~MRAIL_OFFER_PRIMARY;
	out->domain_caps = caps & MRAIL_OFFER_DOMAIN;
	return 0;
}

int mrail_offer_mr_mode(uint32_t api_version, int asked, int *mr_mode,
			char *err, size_t err_len)
{
	if (api_version < FI_VERSION(1, 5)) {
		if (asked == MRAIL_MR_UNSPEC || asked == MRAIL_MR_SCALABLE) {
			*mr_mode = MRAIL_MR_SCALABLE;
			return 0;
		}
		mrail_write_err(err, err_len, "mr_mode %d: mrail offers only "
				"FI_MR_SCALABLE (offsets, application keys)", asked);
		return -ENODATA;
	}
	if (asked & MRAIL_MR_BASIC) {
		mrail_write_err(err, err_len, "mr_mode FI_MR_BASIC: mrail addresses "
				"regions by offset with keys the application "
				"chooses, it cannot use virtual addresses");
		return -ENODATA;
	}
	if ((asked & MRAIL_MR_SCALABLE) && asked != MRAIL_MR_SCALABLE) {
		mrail_write_err(err, err_len, "mr_mode %#x mixes FI_MR_SCALABLE with "
				"other bits, which fi_domain(3) forbids", asked);
		return -ENODATA;
	}
	*mr_mode = asked == MRAIL_MR_SCALABLE ? MRAIL_MR_SCALABLE : 0;
	return 0;
}

int mrail_offer_addr_format(uint32_t asked, uint32_t rail0_format,
			    uint32_t mrail_format, uint32_t *format)
{
	bool rail0_ip = rail0_format == FI_SOCKADDR_IN ||
			rail0_format == FI_SOCKADDR_IN6;

	if (asked == FI_FORMAT_UNSPEC || asked == mrail_format)
		*format = mrail_format;
	else if ((asked == FI_SOCKADDR && rail0_ip) ||
		 (rail0_ip && asked == rail0_format))
		*format = rail0_format;
	else
		return -ENODATA;
	return 0;
}

bool mrail_offer_order_ok(uint64_t offered, uint64_t asked)
{
	return !(asked & ~offered);
}
