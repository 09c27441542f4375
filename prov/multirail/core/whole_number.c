/* SPDX-License-Identifier: BSD-2-Clause */
#include "whole_number.h"

#include <errno.h>
#include <string.h>

int mrail_parse_whole_len(const char *text, size_t len, uint64_t max,
			  uint64_t *out)
{
	uint64_t value = 0, digit;
	size_t i;

	if (!text || !len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -EINVAL;
		digit = (uint64_t) (text[i] - '0');
		/* value * 10 + digit > max, without overflowing. */
		if (value > (max - digit) / 10 || digit > max)
			return -EINVAL;
		value = value * 10 + digit;
	}
	*out = value;
	return 0;
}

int mrail_parse_whole(const char *text, uint64_t max, uint64_t *out)
{
	return mrail_parse_whole_len(text, text ? strlen(text) : 0, max, out);
}
