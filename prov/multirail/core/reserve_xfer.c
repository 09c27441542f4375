/* SPDX-License-Identifier: BSD-2-Clause */
#include "reserve_xfer.h"

#include <string.h>

#include "mrail_limits.h"

void mrail_rsv_xfer_start(struct mrail_rsv_xfer *x, uint64_t now, uint64_t timeout_ns,
			  uint64_t max_wait_ns)
{
	memset(x, 0, sizeof(*x));
	x->deadline_ns = now + timeout_ns;
	x->retry_ns = now;
	x->give_up_ns = now + (max_wait_ns > timeout_ns ? max_wait_ns : timeout_ns);
}

enum mrail_rsv_next mrail_rsv_xfer_next(struct mrail_rsv_xfer *x, uint32_t free_rails,
					bool others_busy, uint64_t now,
					uint64_t timeout_ns)
{
	if (x->asked)
		return now >= x->deadline_ns ? MRAIL_RSV_NEXT_TIMEOUT :
		       MRAIL_RSV_NEXT_WAIT;
	if (x->granted)
		return MRAIL_RSV_NEXT_GO;
	if (others_busy) {
		uint64_t later = now + timeout_ns;

		if (later > x->give_up_ns)
			later = x->give_up_ns;
		if (x->deadline_ns < later)
			x->deadline_ns = later;
	}
	if (now >= x->deadline_ns)
		return MRAIL_RSV_NEXT_FALLBACK;
	if (free_rails && now >= x->retry_ns)
		return MRAIL_RSV_NEXT_ASK;
	return MRAIL_RSV_NEXT_WAIT;
}

void mrail_rsv_xfer_asked(struct mrail_rsv_xfer *x, uint32_t rails, uint64_t now,
			  uint64_t retry_ns)
{
	x->asked |= rails;
	x->retry_ns = now + retry_ns;
}

int mrail_rsv_xfer_answer(struct mrail_rsv_xfer *x, unsigned rail, bool granted)
{
	uint32_t bit;

	if (rail >= MRAIL_MAX_RAILS)
		return -1;
	bit = 1u << rail;
	if (!(x->asked & bit))
		return -1;
	x->asked &= ~bit;
	if (granted)
		x->granted |= bit;
	return 0;
}
