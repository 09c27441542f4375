/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * When a polling caller gives its core away (core/idle.c), on a simulated
 * clock.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "idle.h"

#define US 1000ULL
#define SPIN (50 * US)

Test(idle, spins_until_the_reads_have_found_nothing_for_the_spin_time)
{
	struct mrail_idle idle = { 0 };

	cr_assert_not(mrail_idle_note(&idle, false, 1000 * US, SPIN));
	cr_assert_not(mrail_idle_note(&idle, false, 1020 * US, SPIN));
	cr_assert_not(mrail_idle_note(&idle, false, 1049 * US, SPIN));
	cr_assert(mrail_idle_note(&idle, false, 1050 * US, SPIN));
	/* And at every further empty read. */
	cr_assert(mrail_idle_note(&idle, false, 1051 * US, SPIN));
	cr_assert(mrail_idle_note(&idle, false, 9000 * US, SPIN));
}

Test(idle, a_read_that_finds_something_starts_the_spin_again)
{
	struct mrail_idle idle = { 0 };

	cr_assert_not(mrail_idle_note(&idle, false, 0, SPIN));
	cr_assert(mrail_idle_note(&idle, false, 60 * US, SPIN));
	cr_assert_not(mrail_idle_note(&idle, true, 61 * US, SPIN));
	cr_assert_not(mrail_idle_note(&idle, false, 70 * US, SPIN));
	cr_assert_not(mrail_idle_note(&idle, false, 119 * US, SPIN));
	cr_assert(mrail_idle_note(&idle, false, 120 * US, SPIN));
}

Test(idle, zero_never_yields)
{
	struct mrail_idle idle = { 0 };
	uint64_t t;

	for (t = 0; t < 10000 * US; t += 100 * US)
		cr_assert_not(mrail_idle_note(&idle, false, t, 0));
}

Test(idle, one_microsecond_yields_almost_at_once)
{
	struct mrail_idle idle = { 0 };

	cr_assert_not(mrail_idle_note(&idle, false, 5 * US, 1 * US));
	cr_assert(mrail_idle_note(&idle, false, 6 * US, 1 * US));
}

Test(idle, a_clock_that_goes_back_counts_as_no_time)
{
	struct mrail_idle idle = { 0 };

	cr_assert_not(mrail_idle_note(&idle, false, 1000 * US, SPIN));
	cr_assert_not(mrail_idle_note(&idle, false, 900 * US, SPIN));
	cr_assert(mrail_idle_note(&idle, false, 1050 * US, SPIN));
}

Test(idle, parses_whole_microseconds_in_range)
{
	char err[128];
	unsigned n = 77;

	cr_assert_eq(mrail_idle_parse("0", &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(mrail_idle_parse("250", &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 250);
	cr_assert_eq(mrail_idle_parse("1000000", &n, err, sizeof(err)), 0);
	cr_assert_eq(n, MRAIL_IDLE_SPIN_US_MAX);
}

Test(idle, refuses_anything_else_with_a_message_and_keeps_the_value)
{
	const char *bad[] = { "", "-1", "+3", "4x", "50us", "1.5", "1000001",
			      "99999999999999999999999", " 4", NULL };
	char err[128];
	unsigned n = 7;
	int i;

	cr_assert_eq(mrail_idle_parse(NULL, &n, err, sizeof(err)), -EINVAL);
	for (i = 0; bad[i]; i++) {
		err[0] = '\0';
		cr_assert_eq(mrail_idle_parse(bad[i], &n, err, sizeof(err)), -EINVAL,
			     "'%s' accepted", bad[i]);
		cr_assert_neq(strstr(err, "microseconds"), NULL, "message: %s", err);
		cr_assert_eq(n, 7);
	}
}
