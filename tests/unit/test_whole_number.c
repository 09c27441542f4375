/* SPDX-License-Identifier: BSD-2-Clause */
/* mrail_parse_whole: digits only, bounded, nothing else. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "whole_number.h"

Test(whole_number, takes_digits_up_to_the_bound)
{
	uint64_t v = 7;

	cr_assert_eq(mrail_parse_whole("0", 10, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(mrail_parse_whole("10", 10, &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(mrail_parse_whole("0007", 10, &v), 0);
	cr_assert_eq(v, 7);
	cr_assert_eq(mrail_parse_whole("18446744073709551615", UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
}

Test(whole_number, refuses_anything_else_and_leaves_the_output)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "+1", "-1", "1.5", "1e3", "0x10", "12a", "a",
		"11", "18446744073709551616", "99999999999999999999999", NULL
	};
	uint64_t v;

	cr_assert_eq(mrail_parse_whole(NULL, 10, &v), -EINVAL);
	for (size_t i = 0; bad[i]; i++) {
		v = 42;
		cr_assert_eq(mrail_parse_whole(bad[i], 10, &v), -EINVAL,
			     "'%s' was taken", bad[i]);
		cr_assert_eq(v, 42, "'%s' changed the output", bad[i]);
	}
}

Test(whole_number, bound_of_zero_and_the_full_range)
{
	uint64_t v;

	cr_assert_eq(mrail_parse_whole("0", 0, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(mrail_parse_whole("1", 0, &v), -EINVAL);
	cr_assert_eq(mrail_parse_whole("18446744073709551610", UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX - 5);
	cr_assert_eq(mrail_parse_whole("18446744073709551620", UINT64_MAX, &v), -EINVAL);
}

Test(whole_number, part_of_a_longer_string)
{
	uint64_t v = 9;

	cr_assert_eq(mrail_parse_whole_len(" 42 ", 0, 100, &v), -EINVAL);
	cr_assert_eq(mrail_parse_whole_len("42 ", 2, 100, &v), 0);
	cr_assert_eq(v, 42);
	cr_assert_eq(mrail_parse_whole_len("4x", 2, 100, &v), -EINVAL);
	cr_assert_eq(v, 42);
	cr_assert_eq(mrail_parse_whole_len("123", 3, 100, &v), -EINVAL);
	cr_assert_eq(mrail_parse_whole_len("0000000000000000000000000000000000000005", 40,
					   100, &v), 0);
	cr_assert_eq(v, 5);
}
