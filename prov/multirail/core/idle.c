#include "idle.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int mrail_idle_parse(const char *text, unsigned *spin_us, char *err,
		     size_t err_len)
{
	unsigned long n;
	char *end;

	/* strtoul would take leading spaces and signs. */
	if (!text || !isdigit((unsigned char) *text))
		goto bad;
	errno = 0;
	n = strtoul(text, &end, 10);
	if (errno || *end || n > MRAIL_IDLE_SPIN_US_MAX)
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
