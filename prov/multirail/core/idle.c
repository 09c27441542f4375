/* SPDX-License-Identifier: BSD-2-Clause */
#include "idle.h"

#include <errno.h>
#include <stdio.h>

#include "whole_number.h"

int mrail_idle_parse(const char *text, unsigned *spin_us, char *err,
		     size_t err_len)
{
	uint64_t n;

	if (mrail_parse_whole(text, MRAIL_IDLE_SPIN_US_MAX, &n))
		goto bad;
	*spin_us = (unsigned) n;
	return 0;
bad:
	snprintf(err, err_len, "'%s' is not a whole number of microseconds from 0 "
		 "(never yield the core) to %u", text ? text : "",
		 MRAIL_IDLE_SPIN_US_MAX);
	return -EINVAL;
}

bool mrail_idle_note(struct mrail_idle *idle, bool found, uint64_t now_ns,
		     uint64_t spin_ns)
{
	if (found) {
		idle->empty = false;
		return false;
	}
	if (!idle->empty) {
		idle->empty = true;
		idle->empty_since_ns = now_ns;
	}
	/* A clock that went back (another thread's older reading) counts
	 * as no time spent. */
	return spin_ns && now_ns >= idle->empty_since_ns &&
	       now_ns - idle->empty_since_ns >= spin_ns;
}
