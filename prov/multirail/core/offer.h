/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What one fi_getinfo offer of mrail promises, decided from the hints
 * (fi_getinfo(3), fi_domain(3), fi_endpoint(3)): its capability bits, its
 * memory registration mode and its ordering. Every function answers
 * -ENODATA when the hints ask for something mrail cannot give, so that
 * fi_getinfo refuses the request instead of offering less than was asked.
 */
#ifndef MRAIL_OFFER_H
#define MRAIL_OFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

/* fi_getinfo(3)'s split of the capability bits, and fi_endpoint(3)'s
 * split between transmit and receive contexts. */
#define MRAIL_OFFER_PRIMARY (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
			     FI_MULTICAST | FI_NAMED_RX_CTX | FI_DIRECTED_RECV | \
			     FI_VARIABLE_MSG | FI_HMEM | FI_COLLECTIVE)
#define MRAIL_OFFER_MOD_TX (FI_SEND | FI_READ | FI_WRITE)
#define MRAIL_OFFER_MOD_RX (FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define MRAIL_OFFER_DOMAIN (FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV)
#define MRAIL_OFFER_TX (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
			FI_MULTICAST | FI_NAMED_RX_CTX | FI_HMEM | \
			FI_COLLECTIVE | MRAIL_OFFER_MOD_TX | FI_TRIGGER | \
			FI_FENCE | FI_RMA_PMEM)
#define MRAIL_OFFER_RX (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
			FI_DIRECTED_RECV | FI_VARIABLE_MSG | FI_HMEM | \
			FI_COLLECTIVE | MRAIL_OFFER_MOD_RX | FI_RMA_PMEM | \
			FI_SOURCE | FI_SOURCE_ERR | FI_RMA_EVENT | \
			FI_MULTI_RECV | FI_TRIGGER)

/* A provider's capability set: what it can do at all, which of those it
 * shows only to hints that name them, and which secondary ones cost
 * nothing and are reported even unasked. */
struct mrail_offer_prov {
	uint64_t supported;
	uint64_t on_request;
	uint64_t free_secondary;
};

struct mrail_offer_caps {
	uint64_t caps;
	uint64_t tx_caps;
	uint64_t rx_caps;
	uint64_t domain_caps;
};

/*
 * The capabilities of an offer for hints asking for asked (0: the hints
 * name none, the default offer: everything supported but on_request),
 * hint_domain_caps (domain_attr->caps, 0: none named) and hint_tx_caps /
 * hint_rx_caps (the hints' tx_attr/rx_attr caps, 0: none named).
 *
 * Primary capabilities are exactly the ones asked (fi_getinfo(3): a
 * provider enables only the primary capabilities selected); a primary
 * capability asked with none of its modifiers gets all of them; secondary
 * capabilities are the ones asked plus prov->free_secondary. The transmit
 * and receive caps are the offer's bits that apply to each context.
 *
 * Returns 0, or -ENODATA (with a sentence in err) when any asked bit is
 * outside prov->supported.
 */
int mrail_offer_caps(const struct mrail_offer_prov *prov, uint64_t asked,
		     uint64_t hint_domain_caps, uint64_t hint_tx_caps,
		     uint64_t hint_rx_caps, struct mrail_offer_caps *out,
		     char *err, size_t err_len);

/*
 * The mr_mode of an offer to a caller of API version api_version (as
 * FI_VERSION builds it) whose hints hold asked (0 when the hints have no
 * domain_attr), for a provider that addresses regions by offset with keys
 * the application chooses and needs none of the mr_mode bits.
 *
 * Before 1.5, mr_mode is a value: FI_MR_UNSPEC or FI_MR_SCALABLE give
 * FI_MR_SCALABLE. From 1.5 on, the bits asked are what the application can
 * cope with; mrail needs none of them (0), except that the legacy value
 * FI_MR_SCALABLE alone is answered with itself. FI_MR_BASIC (virtual
 * addresses, provider keys) cannot be given, nor can the legacy values
 * mixed with other bits (fi_domain(3) forbids it): -ENODATA.
 */
int mrail_offer_mr_mode(uint32_t api_version, int asked, int *mr_mode,
			char *err, size_t err_len);

/*
 * The address format of an offer for hints asking for asked, over rails
 * whose first rail takes addresses of rail0_format. mrail's own format
 * (mrail_format: every rail's address) answers FI_FORMAT_UNSPEC and
 * itself. A socket address format the first rail uses (FI_SOCKADDR for
 * either IP family) gives that rail's format: such an address names a
 * peer by its first rail, and the rest is learnt from the peer. Anything
 * else: -ENODATA.
 */
int mrail_offer_addr_format(uint32_t asked, uint32_t rail0_format,
			    uint32_t mrail_format, uint32_t *format);

/*
 * Whether an offer giving the ordering bits in offered (msg_order or
 * comp_order) serves hints asking for asked: every asked bit is offered.
 */
bool mrail_offer_order_ok(uint64_t offered, uint64_t asked);

#endif /* MRAIL_OFFER_H */
