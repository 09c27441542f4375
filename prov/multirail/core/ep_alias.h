/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The default operation flags of an endpoint alias (fi_ep_alias,
 * fi_endpoint(3)). An alias differs from its endpoint only by the flags
 * its calls without a flags argument (fi_send, fi_write, fi_recv...) use.
 * It starts with its parent's transmit and receive flags; the flags given
 * to fi_ep_alias name one side (FI_TRANSMIT or FI_RECV, not both) and
 * replace that side's flags with the others given. No side and no other
 * flag keeps the parent's flags.
 *
 * Pure: no libfabric object, no I/O.
 */
#ifndef MRAIL_EP_ALIAS_H
#define MRAIL_EP_ALIAS_H

#include <stdint.h>

struct mrail_op_flags {
	uint64_t tx, rx;
};

/*
 * The alias's flags from its parent's (*flags in and out) and the request.
 * tx_allowed/rx_allowed: the flags each side may hold. Returns 0, -EINVAL
 * (both sides named, or flags without a side) or -ENOTSUP (a flag the
 * named side may not hold); *flags is unchanged on error.
 */
int mrail_alias_op_flags(uint64_t request, uint64_t tx_allowed,
			 uint64_t rx_allowed, struct mrail_op_flags *flags);

#endif /* MRAIL_EP_ALIAS_H */
