#include "idle.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int mrail_idle_parse(const char *text, unsigned *yield_after, char *err,
		     size_t err_len)
{
	unsigned long n;
	char *end;

	/* strtoul would take leading spaces and signs. */
	if (!text || !isdigit((unsigned char) *text))
		goto bad;
	errno = 0;
	n = strtoul(text, &end, 10);
	if (errno || *end || n > MRAIL_IDLE_YIELD_AFTER_MAX)
		goto bad;
	*yield_after = (unsigned) n;
	return 0;
bad:
	snprintf(err, err_len, "'%s' is not a whole number of empty reads from 0 "
		 "(never yield the core) to %u", text ? text : "",
		 MRAIL_IDLE_YIELD_AFTER_MAX);
	return -EINVAL;
}

bool mrail_idle_note(unsigned *empty, bool found, unsigned yield_after)
{
	if (found) {
		*empty = 0;
		return false;
	}
	if (*empty < UINT_MAX)
		(*empty)++;
	return yield_after && *empty >= yield_after;
}
