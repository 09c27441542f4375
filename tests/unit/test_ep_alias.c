/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/ep_alias.c: an alias inherits its parent's flags,
 * one named side is replaced (not OR'ed), the other kept; both sides,
 * flags without a side and flags a side may not hold are refused and
 * change nothing.
 */
#include <errno.h>
#include <stdint.h>

#include <criterion/criterion.h>
#include <rdma/fabric.h>

#include "ep_alias.h"

#define TX_OK (FI_COMPLETION | FI_DELIVERY_COMPLETE | FI_TRIGGER)
#define RX_OK (FI_COMPLETION | FI_MULTI_RECV | FI_TRIGGER)

static const struct mrail_op_flags parent = {
	.tx = FI_COMPLETION | FI_DELIVERY_COMPLETE,
	.rx = FI_MULTI_RECV,
};

Test(ep_alias, inherits_without_flags)
{
	struct mrail_op_flags f = parent;

	cr_assert_eq(mrail_alias_op_flags(0, TX_OK, RX_OK, &f), 0);
	cr_assert_eq(f.tx, parent.tx);
	cr_assert_eq(f.rx, parent.rx);
}

Test(ep_alias, transmit_side_replaced)
{
	struct mrail_op_flags f = parent;

	cr_assert_eq(mrail_alias_op_flags(FI_TRANSMIT | FI_TRIGGER, TX_OK, RX_OK, &f), 0);
	cr_assert_eq(f.tx, FI_TRIGGER, "replaced, not OR'ed: %#llx",
		     (unsigned long long) f.tx);
	cr_assert_eq(f.rx, parent.rx);
}

Test(ep_alias, receive_side_replaced)
{
	struct mrail_op_flags f = parent;

	cr_assert_eq(mrail_alias_op_flags(FI_RECV | FI_COMPLETION, TX_OK, RX_OK, &f), 0);
	cr_assert_eq(f.rx, FI_COMPLETION);
	cr_assert_eq(f.tx, parent.tx);
	/* A side named alone clears that side's flags. */
	cr_assert_eq(mrail_alias_op_flags(FI_RECV, TX_OK, RX_OK, &f), 0);
	cr_assert_eq(f.rx, 0);
}

Test(ep_alias, refusals_change_nothing)
{
	struct mrail_op_flags f = parent;

	cr_assert_eq(mrail_alias_op_flags(FI_TRANSMIT | FI_RECV, TX_OK, RX_OK, &f),
		     -EINVAL);
	cr_assert_eq(mrail_alias_op_flags(FI_COMPLETION, TX_OK, RX_OK, &f), -EINVAL);
	cr_assert_eq(mrail_alias_op_flags(FI_RECV | FI_DELIVERY_COMPLETE, TX_OK,
					  RX_OK, &f), -ENOTSUP);
	cr_assert_eq(mrail_alias_op_flags(FI_TRANSMIT | FI_MULTI_RECV, TX_OK,
					  RX_OK, &f), -ENOTSUP);
	cr_assert_eq(f.tx, parent.tx);
	cr_assert_eq(f.rx, parent.rx);
}
