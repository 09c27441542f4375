/*
 * When a polling caller gives its core away (core/idle.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "idle.h"

Test(idle, yields_only_after_the_given_number_of_empty_reads_in_a_row)
{
	unsigned empty = 0, i;

	for (i = 1; i < 4; i++)
		cr_assert_not(mrail_idle_note(&empty, false, 4), "empty read %u", i);
	cr_assert(mrail_idle_note(&empty, false, 4));
	/* And after every further empty read. */
	cr_assert(mrail_idle_note(&empty, false, 4));
	cr_assert_eq(empty, 5);
}

Test(idle, a_read_that_finds_something_starts_the_count_again)
{
	unsigned empty = 0;

	cr_assert_not(mrail_idle_note(&empty, false, 2));
	cr_assert(mrail_idle_note(&empty, false, 2));
	cr_assert_not(mrail_idle_note(&empty, true, 2));
	cr_assert_eq(empty, 0);
	cr_assert_not(mrail_idle_note(&empty, false, 2));
	cr_assert(mrail_idle_note(&empty, false, 2));
}

Test(idle, one_yields_at_every_empty_read_and_zero_never)
{
	unsigned empty = 0, never = 0, i;

	for (i = 0; i < 100; i++) {
		cr_assert(mrail_idle_note(&empty, false, 1));
		cr_assert_not(mrail_idle_note(&never, false, 0));
	}
	cr_assert_eq(never, 100);
}

Test(idle, the_count_saturates_instead_of_wrapping_to_zero)
{
	unsigned empty = UINT_MAX - 1;

	cr_assert(mrail_idle_note(&empty, false, 4));
	cr_assert_eq(empty, UINT_MAX);
	cr_assert(mrail_idle_note(&empty, false, 4));
	cr_assert_eq(empty, UINT_MAX);
}

Test(idle, parses_whole_numbers_in_range)
{
	char err[128];
	unsigned n = 77;

	cr_assert_eq(mrail_idle_parse("0", &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(mrail_idle_parse("16", &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 16);
	cr_assert_eq(mrail_idle_parse("1000000", &n, err, sizeof(err)), 0);
	cr_assert_eq(n, MRAIL_IDLE_YIELD_AFTER_MAX);
}

Test(idle, refuses_anything_else_with_a_message_and_keeps_the_value)
{
	const char *bad[] = { "", "-1", "+3", "4x", "1.5", "1000001",
			      "99999999999999999999999", " 4", NULL };
	char err[128];
	unsigned n = 7;
	int i;

	cr_assert_eq(mrail_idle_parse(NULL, &n, err, sizeof(err)), -EINVAL);
	for (i = 0; bad[i]; i++) {
		err[0] = '\0';
		cr_assert_eq(mrail_idle_parse(bad[i], &n, err, sizeof(err)), -EINVAL,
			     "'%s' accepted", bad[i]);
		cr_assert_neq(strstr(err, "empty reads"), NULL, "message: %s", err);
		cr_assert_eq(n, 7);
	}
}
