/* SPDX-License-Identifier: BSD-2-Clause */
#include "stripe.h"

#include <errno.h>

int mrail_stripe_even(uint64_t len, size_t rail_count, size_t first_rail,
		      uint64_t min_stripe, uint64_t align,
		      struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	uint64_t share, offset = 0;
	size_t stripes, i;

	if (rail_count < 1 || rail_count > MRAIL_MAX_RAILS ||
	    first_rail >= rail_count || !min_stripe || !align ||
	    (align & (align - 1)))
		return -EINVAL;
	if (!len)
		return 0;

	/* As many rails as can each take a full minimum stripe, at least one. */
	stripes = len / min_stripe < rail_count ? (size_t) (len / min_stripe) :
						  rail_count;
	if (!stripes)
		stripes = 1;

	/* Aligned equal shares; the last stripe absorbs what rounding left. */
	share = (len / stripes) & ~(align - 1);
	if (!share)
		stripes = 1;
	for (i = 0; i < stripes; i++) {
		out[i].rail = (uint8_t) ((first_rail + i) % rail_count);
		out[i].offset = offset;
		out[i].len = i + 1 == stripes ? len - offset : share;
		offset += out[i].len;
	}
	return (int) stripes;
}

uint64_t mrail_stripe_align_up(uint64_t v, uint64_t align)
{
	if (!align || v > UINT64_MAX - (align - 1))
		return 0;
	return (v + align - 1) & ~(align - 1);
}
