/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>

#include <rdma/fabric.h>

#include "ep_alias.h"

int mrail_alias_op_flags(uint64_t request, uint64_t tx_allowed,
			 uint64_t rx_allowed, struct mrail_op_flags *flags)
{
	uint64_t side = request & (FI_TRANSMIT | FI_RECV);
	uint64_t rest = request & ~side;

	if (side == (FI_TRANSMIT | FI_RECV))
		return -EINVAL;
	if (!side)
		return rest ? -EINVAL : 0;
	if (rest & ~(side == FI_TRANSMIT ? tx_allowed : rx_allowed))
		return -ENOTSUP;
	if (side == FI_TRANSMIT)
		flags->tx = rest;
	else
		flags->rx = rest;
	return 0;
}
