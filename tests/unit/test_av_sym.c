/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/av_sym.c: the nodes and services of fi_av_insertsym
 * ranges.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "av_sym.h"

static void assert_node(const char *base, size_t index, const char *expected)
{
	char out[64];

	memset(out, 'x', sizeof(out));
	cr_assert_eq(mrail_av_sym_node(base, index, out, sizeof(out)), 0,
		     "%s + %zu should be a node", base, index);
	cr_assert_str_eq(out, expected, "%s + %zu", base, index);
}

static void assert_service(const char *base, size_t index, const char *expected)
{
	char out[16];

	cr_assert_eq(mrail_av_sym_service(base, index, out, sizeof(out)), 0,
		     "%s + %zu should be a service", base, index);
	cr_assert_str_eq(out, expected, "%s + %zu", base, index);
}

Test(av_sym, the_man_page_example)
{
	/* fi_av(3): 10.1.1.1:5000, 10.1.1.1:5001, 10.1.1.2:5000, 10.1.1.2:5001
	 * and host10/host11 for a hostname. */
	assert_node("10.1.1.1", 0, "10.1.1.1");
	assert_node("10.1.1.1", 1, "10.1.1.2");
	assert_service("5000", 0, "5000");
	assert_service("5000", 1, "5001");
	assert_node("host10", 0, "host10");
	assert_node("host10", 1, "host11");
}

Test(av_sym, ipv4_carries_across_octets)
{
	assert_node("198.18.1.255", 1, "198.18.2.0");
	assert_node("198.18.1.250", 300, "198.18.3.38");
	assert_node("0.0.0.0", 16777216, "1.0.0.0");
	assert_node("255.255.255.254", 1, "255.255.255.255");
}

Test(av_sym, ipv4_overflow_is_refused)
{
	char out[64];

	cr_assert_eq(mrail_av_sym_node("255.255.255.255", 1, out, sizeof(out)), -ERANGE);
	cr_assert_eq(mrail_av_sym_node("255.255.255.200", 56, out, sizeof(out)), -ERANGE);
	cr_assert_eq(mrail_av_sym_node("1.2.3.4", (size_t) -1, out, sizeof(out)), -ERANGE);
}

Test(av_sym, ipv6_counts_too)
{
	char out[64];

	assert_node("fd00::1", 1, "fd00::2");
	assert_node("fd00::ffff", 1, "fd00::1:0");
	cr_assert_eq(mrail_av_sym_node("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1,
				       out, sizeof(out)), -ERANGE);
}

Test(av_sym, names_count_by_their_suffix_and_keep_its_width)
{
	assert_node("host9", 1, "host10");
	assert_node("host09", 1, "host10");
	assert_node("node001", 2, "node003");
	assert_node("node001", 999, "node1000");
	assert_node("h1", 3, "h4");
	assert_node("rack2-node7", 1, "rack2-node8");
}

Test(av_sym, names_without_a_suffix)
{
	char out[64];

	/* Index 0 needs no suffix: one node of any name. */
	assert_node("localhost", 0, "localhost");
	cr_assert_eq(mrail_av_sym_node("localhost", 1, out, sizeof(out)), -EINVAL);
	cr_assert_eq(mrail_av_sym_node("", 1, out, sizeof(out)), -EINVAL);
	cr_assert_eq(mrail_av_sym_node("host99999999999999999999", 1, out, sizeof(out)),
		     -ERANGE);
	cr_assert_eq(mrail_av_sym_node("host18446744073709551615", 1, out,
				       sizeof(out)), -ERANGE);
}

Test(av_sym, services)
{
	char out[16];

	assert_service("65534", 1, "65535");
	assert_service("0", 7, "7");
	/* A named service is fine alone. */
	assert_service("http", 0, "http");
	cr_assert_eq(mrail_av_sym_service("http", 1, out, sizeof(out)), -EINVAL);
	cr_assert_eq(mrail_av_sym_service("65535", 1, out, sizeof(out)), -ERANGE);
	cr_assert_eq(mrail_av_sym_service("70000", 1, out, sizeof(out)), -ERANGE);
	cr_assert_eq(mrail_av_sym_service("123456", 1, out, sizeof(out)), -EINVAL);
	cr_assert_eq(mrail_av_sym_service("", 1, out, sizeof(out)), -EINVAL);
	cr_assert_eq(mrail_av_sym_service("-1", 1, out, sizeof(out)), -EINVAL);
}

Test(av_sym, short_buffers_and_null)
{
	char out[8];

	cr_assert_eq(mrail_av_sym_node("198.18.1.1", 1, out, sizeof(out)), -ENOSPC);
	cr_assert_eq(mrail_av_sym_node("host0000009", 1, out, sizeof(out)), -ENOSPC);
	cr_assert_eq(mrail_av_sym_node("longername", 0, out, sizeof(out)), -ENOSPC);
	cr_assert_eq(mrail_av_sym_service("5000", 1, out, 4), -ENOSPC);
	cr_assert_eq(mrail_av_sym_node(NULL, 1, out, sizeof(out)), -EINVAL);
	cr_assert_eq(mrail_av_sym_service("5000", 1, NULL, 8), -EINVAL);
}
