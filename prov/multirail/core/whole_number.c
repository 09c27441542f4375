#include "whole_number.h"

#include <errno.h>

int mrail_parse_whole(const char *text, uint64_t max, uint64_t *out)
{
	uint64_t value = 0, digit;
	const char *p = text;

	if (!p || !*p)
		return -EINVAL;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		digit = (uint64_t) (*p - '0');
		/* value * 10 + digit > max, without overflowing. */
		if (value > (max - digit) / 10 || digit > max)
			return -EINVAL;
		value = value * 10 + digit;
	}
	*out = value;
	return 0;
}
