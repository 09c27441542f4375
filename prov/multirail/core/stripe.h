/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Even striping of one transfer over the rails: which bytes each rail moves.
 * Issue 4 adds weighted and adaptive splits beside this one; the rendezvous
 * path only needs "rail r moves [offset, offset + len)".
 */
#ifndef MRAIL_STRIPE_H
#define MRAIL_STRIPE_H

#include <stddef.h>
#include <stdint.h>

#include "mrail_limits.h"

struct mrail_stripe {
	uint8_t rail;
	uint64_t offset;
	uint64_t len;
};

/*
 * Splits len bytes into at most rail_count contiguous stripes, in offset
 * order, on rails first_rail, first_rail + 1, ... (modulo rail_count), so
 * that successive transfers can start on different rails. Every stripe but
 * the last has the same length, a multiple of align (a power of two, 1 for
 * none); the last takes the rest, so it is the longest, by less than
 * stripes * align. When min_stripe is a multiple of align, no stripe is
 * shorter than min_stripe unless the whole transfer is: a rail's share must
 * pay its per-operation cost.
 *
 * Returns the number of stripes written to out (room for MRAIL_MAX_RAILS),
 * 0 when len is 0, or -EINVAL for rail_count outside 1..MRAIL_MAX_RAILS,
 * first_rail >= rail_count, min_stripe 0, or align not a power of two.
 */
int mrail_stripe_even(uint64_t len, size_t rail_count, size_t first_rail,
		      uint64_t min_stripe, uint64_t align,
		      struct mrail_stripe out[MRAIL_MAX_RAILS]);

/*
 * v rounded up to a multiple of align (a power of two), or 0 when that does
 * not fit in 64 bits (or align is 0). Even striping keeps min_stripe only
 * when it is aligned, so callers hand it mrail_stripe_align_up(min_stripe,
 * align); a 0 there makes mrail_stripe_even refuse with -EINVAL.
 */
uint64_t mrail_stripe_align_up(uint64_t v, uint64_t align);

#endif /* MRAIL_STRIPE_H */
