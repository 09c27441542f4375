/* SPDX-License-Identifier: BSD-2-Clause */
#include "ratelimit.h"

bool mrail_ratelimit_allow(struct mrail_ratelimit *rl, uint64_t now_ns,
			   uint64_t interval_ns, uint32_t burst,
			   uint64_t *suppressed)
{
	/* A window that ended, or a clock that went back, starts anew. */
	if (now_ns < rl->window_start_ns ||
	    now_ns - rl->window_start_ns >= interval_ns) {
		rl->window_start_ns = now_ns;
		rl->allowed = 0;
	}
	if (rl->allowed >= burst) {
		rl->suppressed++;
		return false;
	}
	rl->allowed++;
	*suppressed = rl->suppressed;
	rl->suppressed = 0;
	return true;
}
