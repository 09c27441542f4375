/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/offer.c: every combination of the primary
 * capabilities and of the secondary ones asked of a provider set like
 * mrail's, checked against fi_getinfo(3)'s rules (asked bits honoured or
 * refused, no primary capability unasked, contexts' caps within their
 * context and within the endpoint's), then mr_mode by API version, then
 * ordering.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <rdma/fi_ext_mrail.h>

#include "mrail_compat.h"
#include "offer.h"

#define SUPPORTED (FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_SOURCE | \
		   FI_DIRECTED_RECV | FI_MULTI_RECV | FI_LOCAL_COMM | \
		   FI_REMOTE_COMM | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | \
		   FI_REMOTE_WRITE | FI_ATOMIC | FI_RMA_EVENT | FI_TRIGGER | \
		   FI_COLLECTIVE)

static const struct mrail_offer_prov prov = {
	.supported = SUPPORTED,
	.on_request = FI_COLLECTIVE,
	.free_secondary = FI_LOCAL_COMM | FI_REMOTE_COMM,
};

#define SECONDARY (FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | FI_SHARED_AV | \
		   FI_TRIGGER | FI_FENCE | FI_LOCAL_COMM | FI_REMOTE_COMM | \
		   FI_SOURCE_ERR | FI_RMA_PMEM)
#define MODS (MRAIL_OFFER_MOD_TX | MRAIL_OFFER_MOD_RX)

/* The bits of mask, one at a time, to enumerate subsets of mask. */
static size_t split_bits(uint64_t mask, uint64_t *bits)
{
	size_t n = 0;

	for (; mask; mask &= mask - 1)
		bits[n++] = mask & -mask;
	return n;
}

static uint64_t subset(const uint64_t *bits, size_t n, uint64_t index)
{
	uint64_t set = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (index & (1ULL << i))
			set |= bits[i];
	return set;
}

static void check_offer(uint64_t asked, const struct mrail_offer_caps *got)
{
	uint64_t asked_primary = asked & MRAIL_OFFER_PRIMARY;

	cr_assert_eq(got->caps & asked, asked, "asked %#lx: missing %#lx",
		     (unsigned long) asked, (unsigned long) (asked & ~got->caps));
	cr_assert_eq(got->caps & MRAIL_OFFER_PRIMARY, asked_primary,
		     "asked %#lx: primary caps %#lx", (unsigned long) asked,
		     (unsigned long) got->caps);
	cr_assert_eq(got->caps & ~(asked | SECONDARY | MODS), 0,
		     "asked %#lx: extra %#lx", (unsigned long) asked,
		     (unsigned long) got->caps);
	cr_assert_eq(got->caps & SECONDARY & ~asked & ~prov.free_secondary, 0);
	cr_assert_eq(got->tx_caps & ~MRAIL_OFFER_TX, 0);
	cr_assert_eq(got->rx_caps & ~MRAIL_OFFER_RX, 0);
	cr_assert_eq(got->tx_caps & ~got->caps, 0);
	cr_assert_eq(got->rx_caps & ~got->caps, 0);
	cr_assert_eq(got->tx_caps & asked_primary & MRAIL_OFFER_TX,
		     asked_primary & MRAIL_OFFER_TX);
	cr_assert_eq(got->rx_caps & asked_primary & MRAIL_OFFER_RX,
		     asked_primary & MRAIL_OFFER_RX);
	cr_assert_eq(got->domain_caps, got->caps & MRAIL_OFFER_DOMAIN);
	/* Modifiers: a message capability with neither direction named
	 * has both, an RMA or atomic one all four. */
	if ((asked & (FI_MSG | FI_TAGGED)) && !(asked & (FI_SEND | FI_RECV)))
		cr_assert_eq(got->caps & (FI_SEND | FI_RECV), FI_SEND | FI_RECV);
	if ((asked & (FI_RMA | FI_ATOMIC)) &&
	    !(asked & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		cr_assert_eq(got->caps & (FI_READ | FI_WRITE | FI_REMOTE_READ |
					  FI_REMOTE_WRITE),
			     FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
}

Test(offer, every_primary_and_secondary_combination)
{
	uint64_t bits[64];
	size_t n = split_bits(MRAIL_OFFER_PRIMARY | SECONDARY, bits);
	uint64_t i, offered = 0, refused = 0;

	for (i = 0; i < (1ULL << n); i++) {
		uint64_t asked = subset(bits, n, i);
		struct mrail_offer_caps got = { 0 };
		char err[160] = "";
		int ret;

		if (!asked)
			continue;
		ret = mrail_offer_caps(&prov, asked, 0, 0, 0, &got, err, sizeof(err));
		if (asked & ~SUPPORTED) {
			cr_assert_eq(ret, -ENODATA, "asked %#lx", (unsigned long) asked);
			cr_assert_neq(err[0], '\0');
			refused++;
			continue;
		}
		cr_assert_eq(ret, 0, "asked %#lx: %s", (unsigned long) asked, err);
		check_offer(asked, &got);
		offered++;
	}
	/* 6 supported of 10 primary, 6 supported of 10 secondary bits. */
	cr_assert_eq(offered, (1ULL << 12) - 1);
	cr_assert_eq(offered + refused, (1ULL << n) - 1);
}

Test(offer, default_offer_leaves_out_caps_on_request)
{
	struct mrail_offer_caps got;

	cr_assert_eq(mrail_offer_caps(&prov, 0, 0, 0, 0, &got, NULL, 0), 0);
	cr_assert_eq(got.caps, SUPPORTED & ~FI_COLLECTIVE);
	cr_assert_eq(got.tx_caps, got.caps & MRAIL_OFFER_TX);
	cr_assert_eq(got.rx_caps, got.caps & MRAIL_OFFER_RX);
	cr_assert_eq(got.domain_caps, FI_LOCAL_COMM | FI_REMOTE_COMM);
	/* No FI_LOCAL_COMM in a transmit or receive context's caps. */
	cr_assert_eq(got.tx_caps & (FI_LOCAL_COMM | FI_REMOTE_COMM | FI_RECV), 0);
	cr_assert_eq(got.rx_caps & (FI_LOCAL_COMM | FI_SEND), 0);
}

Test(offer, domain_caps)
{
	struct mrail_offer_caps got;
	char err[160] = "";

	cr_assert_eq(mrail_offer_caps(&prov, FI_MSG, FI_LOCAL_COMM, 0, 0, &got,
				      NULL, 0), 0);
	cr_assert_eq(got.domain_caps & FI_LOCAL_COMM, FI_LOCAL_COMM);
	cr_assert_eq(mrail_offer_caps(&prov, FI_MSG, FI_SHARED_AV, 0, 0, &got,
				      err, sizeof(err)), -ENODATA);
	cr_assert(strstr(err, "FI_SHARED_AV"), "%s", err);
	cr_assert_eq(mrail_offer_caps(&prov, FI_MSG, FI_MSG, 0, 0, &got, NULL, 0),
		     -ENODATA);
}

Test(offer, context_caps)
{
	struct mrail_offer_caps got;

	cr_assert_eq(mrail_offer_caps(&prov, FI_MSG | FI_TAGGED, 0, FI_MSG,
				      FI_MSG | FI_TAGGED, &got, NULL, 0), 0);
	cr_assert_eq(got.tx_caps & MRAIL_OFFER_PRIMARY, FI_MSG);
	cr_assert_eq(got.rx_caps & MRAIL_OFFER_PRIMARY, FI_MSG | FI_TAGGED);
	cr_assert_eq(mrail_offer_caps(&prov, FI_MSG, 0, FI_HMEM, 0, &got, NULL, 0),
		     -ENODATA);
	/* Caps named on the contexts only say what the endpoint uses. */
	cr_assert_eq(mrail_offer_caps(&prov, 0, 0, FI_TAGGED, FI_TAGGED, &got,
				      NULL, 0), 0);
	cr_assert_eq(got.caps & MRAIL_OFFER_PRIMARY, FI_TAGGED);
}

Test(offer, mr_mode)
{
	static const struct {
		uint32_t version;
		int asked;
		int ret;
		int mode;
	} cases[] = {
		{ FI_VERSION(1, 0), MRAIL_MR_UNSPEC, 0, MRAIL_MR_SCALABLE },
		{ FI_VERSION(1, 4), MRAIL_MR_SCALABLE, 0, MRAIL_MR_SCALABLE },
		{ FI_VERSION(1, 0), MRAIL_MR_BASIC, -ENODATA, 0 },
		{ FI_VERSION(1, 4), FI_MR_LOCAL, -ENODATA, 0 },
		{ FI_VERSION(1, 5), 0, 0, 0 },
		{ FI_VERSION(1, 17), MRAIL_MR_SCALABLE, 0, MRAIL_MR_SCALABLE },
		{ FI_VERSION(1, 17), MRAIL_MR_BASIC, -ENODATA, 0 },
		{ FI_VERSION(1, 17), MRAIL_MR_BASIC | FI_MR_LOCAL, -ENODATA, 0 },
		{ FI_VERSION(1, 17), MRAIL_MR_SCALABLE | FI_MR_LOCAL, -ENODATA, 0 },
		{ FI_VERSION(1, 17), FI_MR_LOCAL | FI_MR_VIRT_ADDR |
		  FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0, 0 },
		{ FI_VERSION(1, 17), FI_MR_ENDPOINT | FI_MR_RAW, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[160] = "";
		int mode = -1;
		int ret = mrail_offer_mr_mode(cases[i].version, cases[i].asked, &mode,
					      err, sizeof(err));

		cr_assert_eq(ret, cases[i].ret, "case %zu: %d", i, ret);
		if (ret) {
			cr_assert_neq(err[0], '\0', "case %zu", i);
			cr_assert_eq(mode, -1, "case %zu", i);
		} else {
			cr_assert_eq(mode, cases[i].mode, "case %zu: %d", i, mode);
		}
	}
}

/* FI_ADDR_MRAIL's value in every build so far (1.x builds spelled it
 * FI_PROV_SPECIFIC | 0x6d72): spelled out, so that a change shows. */
#define MRAIL_FORMAT_VALUE 0x80006d72u

Test(offer, addr_format_is_stable)
{
	cr_assert_eq(FI_ADDR_MRAIL, MRAIL_FORMAT_VALUE, "%#x", (unsigned) FI_ADDR_MRAIL);
}

Test(offer, addr_format)
{
	static const struct {
		uint32_t asked, rail0;
		int ret;
		uint32_t format;
	} cases[] = {
		{ FI_FORMAT_UNSPEC, FI_SOCKADDR_IN, 0, MRAIL_FORMAT_VALUE },
		{ MRAIL_FORMAT_VALUE, FI_ADDR_IB_UD, 0, MRAIL_FORMAT_VALUE },
		{ FI_SOCKADDR, FI_SOCKADDR_IN, 0, FI_SOCKADDR_IN },
		{ FI_SOCKADDR, FI_SOCKADDR_IN6, 0, FI_SOCKADDR_IN6 },
		{ FI_SOCKADDR_IN, FI_SOCKADDR_IN, 0, FI_SOCKADDR_IN },
		{ FI_SOCKADDR_IN6, FI_SOCKADDR_IN6, 0, FI_SOCKADDR_IN6 },
		{ FI_SOCKADDR_IN6, FI_SOCKADDR_IN, -ENODATA, 0 },
		{ FI_SOCKADDR_IN, FI_SOCKADDR_IN6, -ENODATA, 0 },
		{ FI_SOCKADDR, FI_SOCKADDR_IB, -ENODATA, 0 },
		{ FI_SOCKADDR_IB, FI_SOCKADDR_IB, -ENODATA, 0 },
		{ FI_ADDR_STR, FI_SOCKADDR_IN, -ENODATA, 0 },
		{ FI_ADDR_PSMX2, FI_SOCKADDR_IN, -ENODATA, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t format = 12345;
		int ret = mrail_offer_addr_format(cases[i].asked, cases[i].rail0, MRAIL_FORMAT_VALUE,
						  &format);

		cr_assert_eq(ret, cases[i].ret, "case %zu: %d", i, ret);
		cr_assert_eq(format, ret ? 12345 : cases[i].format, "case %zu: %u", i,
			     format);
	}
}

Test(offer, order_every_combination)
{
	uint64_t asked;

	for (asked = 0; asked <= (MRAIL_ORDER_STRICT | MRAIL_ORDER_DATA); asked++) {
		if (asked & ~(MRAIL_ORDER_STRICT | MRAIL_ORDER_DATA))
			continue;
		cr_assert_eq(mrail_offer_order_ok(FI_ORDER_SAS, asked),
			     asked == 0 || asked == FI_ORDER_SAS, "%#lx",
			     (unsigned long) asked);
	}
	cr_assert(mrail_offer_order_ok(MRAIL_ORDER_STRICT, FI_ORDER_RAW | FI_ORDER_SAS));
}
