/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How many peer-caused warnings get through (core/ratelimit.c), on a
 * simulated clock.
 */
#include <criterion/criterion.h>

#include "ratelimit.h"

#define MS 1000000ULL
#define SEC (1000 * MS)

Test(ratelimit, lets_a_burst_through_then_holds_the_rest_of_the_window_back)
{
	struct mrail_ratelimit rl = { 0 };
	uint64_t suppressed = 99;
	int i;

	for (i = 0; i < 3; i++) {
		cr_assert(mrail_ratelimit_allow(&rl, 5 * SEC + i * MS, SEC, 3,
						&suppressed));
		cr_assert_eq(suppressed, 0);
	}
	for (i = 0; i < 7; i++)
		cr_assert_not(mrail_ratelimit_allow(&rl, 5 * SEC + 500 * MS, SEC, 3,
						    &suppressed));
	cr_assert_eq(rl.suppressed, 7);
}

Test(ratelimit, the_first_after_the_window_says_how_many_were_held_back)
{
	struct mrail_ratelimit rl = { 0 };
	uint64_t suppressed = 0;
	int i;

	for (i = 0; i < 12; i++)
		mrail_ratelimit_allow(&rl, 2 * SEC, SEC, 2, &suppressed);
	/* Still inside the window: held back. */
	cr_assert_not(mrail_ratelimit_allow(&rl, 3 * SEC - 1, SEC, 2, &suppressed));
	cr_assert(mrail_ratelimit_allow(&rl, 3 * SEC, SEC, 2, &suppressed));
	cr_assert_eq(suppressed, 11);
	/* Told once: the next one let through reports none. */
	cr_assert(mrail_ratelimit_allow(&rl, 3 * SEC + 1, SEC, 2, &suppressed));
	cr_assert_eq(suppressed, 0);
	cr_assert_not(mrail_ratelimit_allow(&rl, 3 * SEC + 2, SEC, 2, &suppressed));
}

Test(ratelimit, a_clock_that_goes_back_starts_a_new_window)
{
	struct mrail_ratelimit rl = { 0 };
	uint64_t suppressed;

	cr_assert(mrail_ratelimit_allow(&rl, 10 * SEC, SEC, 1, &suppressed));
	cr_assert_not(mrail_ratelimit_allow(&rl, 10 * SEC, SEC, 1, &suppressed));
	cr_assert(mrail_ratelimit_allow(&rl, 4 * SEC, SEC, 1, &suppressed));
	cr_assert_eq(suppressed, 1);
}

Test(ratelimit, a_zero_burst_holds_everything_back)
{
	struct mrail_ratelimit rl = { 0 };
	uint64_t suppressed;

	cr_assert_not(mrail_ratelimit_allow(&rl, 0, SEC, 0, &suppressed));
	cr_assert_not(mrail_ratelimit_allow(&rl, 5 * SEC, SEC, 0, &suppressed));
	cr_assert_eq(rl.suppressed, 2);
}
