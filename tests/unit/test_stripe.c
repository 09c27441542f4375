/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/stripe.c: exact splits for chosen sizes, the minimum
 * stripe rule, rotation of the first rail, argument checks, and random sizes
 * checked against the invariants the rendezvous path relies on (stripes tile
 * the transfer exactly, in order, each on a distinct rail).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "stripe.h"
#include "test_stripe_check.h"

Test(stripe, one_mib_over_two_rails_splits_in_halves)
{
	cr_assert_eq(mrail_stripe_even(MIB, 2, 0, 16 * KIB, 64, out), 2);
	expect_stripe(0, 0, 0, MIB / 2);
	expect_stripe(1, 1, MIB / 2, MIB / 2);
}

Test(stripe, first_rail_rotates_the_assignment)
{
	cr_assert_eq(mrail_stripe_even(3 * MIB, 4, 2, 16 * KIB, 1, out), 4);
	expect_stripe(0, 2, 0, 3 * MIB / 4);
	expect_stripe(1, 3, 3 * MIB / 4, 3 * MIB / 4);
	expect_stripe(2, 0, 6 * MIB / 4, 3 * MIB / 4);
	expect_stripe(3, 1, 9 * MIB / 4, 3 * MIB / 4);
}

Test(stripe, remainder_goes_to_the_last_stripe)
{
	/* 100001 bytes over 3 rails aligned to 64: 33280 + 33280 + 33441. */
	cr_assert_eq(mrail_stripe_even(100001, 3, 0, 16 * KIB, 64, out), 3);
	expect_stripe(0, 0, 0, 33280);
	expect_stripe(1, 1, 33280, 33280);
	expect_stripe(2, 2, 66560, 33441);
}

Test(stripe, minimum_stripe_limits_the_rails_used)
{
	/* 40 KiB with a 16 KiB minimum: two stripes of 20 KiB, not four of 10. */
	cr_assert_eq(mrail_stripe_even(40 * KIB, 4, 1, 16 * KIB, 1, out), 2);
	expect_stripe(0, 1, 0, 20 * KIB);
	expect_stripe(1, 2, 20 * KIB, 20 * KIB);
}

Test(stripe, transfer_below_the_minimum_stays_whole)
{
	cr_assert_eq(mrail_stripe_even(5000, 4, 3, 16 * KIB, 64, out), 1);
	expect_stripe(0, 3, 0, 5000);
}

Test(stripe, exactly_the_minimum_per_rail_uses_every_rail)
{
	cr_assert_eq(mrail_stripe_even(64 * KIB, 4, 0, 16 * KIB, 4096, out), 4);
	for (int i = 0; i < 4; i++)
		expect_stripe(i, (unsigned) i, (uint64_t) i * 16 * KIB, 16 * KIB);
}

Test(stripe, alignment_larger_than_a_share_gives_one_stripe)
{
	/* Two 3000-byte shares cannot both start on a 4096 boundary. */
	cr_assert_eq(mrail_stripe_even(6000, 2, 0, 1000, 4096, out), 1);
	expect_stripe(0, 0, 0, 6000);
}

Test(stripe, zero_length_has_no_stripes)
{
	cr_expect_eq(mrail_stripe_even(0, 2, 0, 1, 1, out), 0);
}

Test(stripe, bad_arguments_are_refused)
{
	cr_expect_eq(mrail_stripe_even(MIB, 0, 0, 1, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_even(MIB, MRAIL_MAX_RAILS + 1, 0, 1, 1, out),
		     -EINVAL);
	cr_expect_eq(mrail_stripe_even(MIB, 2, 2, 1, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_even(MIB, 2, 0, 0, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_even(MIB, 2, 0, 1, 0, out), -EINVAL);
	cr_expect_eq(mrail_stripe_even(MIB, 2, 0, 1, 48, out), -EINVAL);
}

Test(stripe, largest_transfer_does_not_overflow)
{
	uint64_t len = UINT64_MAX;

	cr_assert_eq(mrail_stripe_even(len, 8, 0, MIB, 4096, out), 8);
	cr_expect_eq(out[7].offset + out[7].len, len);
	cr_expect_eq(out[0].len, (len / 8) & ~4095ULL);
}

Test(stripe, random_sizes_tile_the_transfer)
{
	uint64_t rng = 0x5eed5717e5ULL;

	for (int iter = 0; iter < 20000; iter++) {
		uint64_t len = 1 + test_rng_below(&rng, 64 * MIB);
		size_t rails = 1 + (size_t) test_rng_below(&rng, MRAIL_MAX_RAILS);
		size_t first = (size_t) test_rng_below(&rng, rails);
		uint64_t align = 1ULL << test_rng_below(&rng, 13);
		uint64_t min_stripe = align * (1 + test_rng_below(&rng, 64));
		bool used[MRAIL_MAX_RAILS] = { false };
		uint64_t next = 0;
		int n = mrail_stripe_even(len, rails, first, min_stripe, align, out);

		cr_assert_gt(n, 0);
		cr_assert_leq((size_t) n, rails);
		cr_assert_eq(out[0].rail, first);
		for (int i = 0; i < n; i++) {
			cr_assert_eq(out[i].offset, next, "len %llu stripe %d",
				     (unsigned long long) len, i);
			cr_assert_gt(out[i].len, 0);
			cr_assert_eq(out[i].offset % align, 0);
			cr_assert(!used[out[i].rail], "rail %u used twice", out[i].rail);
			used[out[i].rail] = true;
			if (n > 1)
				cr_assert_geq(out[i].len, min_stripe,
					      "len %llu min %llu stripe %d is %llu",
					      (unsigned long long) len,
					      (unsigned long long) min_stripe, i,
					      (unsigned long long) out[i].len);
			if (i + 1 < n)
				cr_assert_eq(out[i].len, out[0].len);
			next += out[i].len;
		}
		cr_assert_eq(next, len);
		cr_assert_lt(out[n - 1].len - out[0].len, (uint64_t) n * align);
	}
}

/* The minimum stripe even striping uses: rounded up to the alignment, 0
 * (refused by mrail_stripe_even) when that overflows or align is 0. */
Test(stripe, align_up_rounds_to_the_alignment_or_says_0)
{
	cr_expect_eq(mrail_stripe_align_up(16384, 4096), 16384);
	cr_expect_eq(mrail_stripe_align_up(16385, 4096), 20480);
	cr_expect_eq(mrail_stripe_align_up(1, 4096), 4096);
	cr_expect_eq(mrail_stripe_align_up(0, 4096), 0);
	cr_expect_eq(mrail_stripe_align_up(7, 1), 7);
	cr_expect_eq(mrail_stripe_align_up(UINT64_MAX - 4095, 4096), UINT64_MAX - 4095);
	cr_expect_eq(mrail_stripe_align_up(UINT64_MAX - 4094, 4096), 0);
	cr_expect_eq(mrail_stripe_align_up(100, 0), 0);
}
