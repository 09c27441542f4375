/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/rail_select.c over simulated interface tables and
 * simulated provider offers.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <criterion/criterion.h>

#include "rail_select.h"

/* ---- simulated interfaces ---- */

static struct mrail_host_iface iface(const char *name, const char *addr,
				     bool up)
{
	struct mrail_host_iface entry;

	memset(&entry, 0, sizeof(entry));
	cr_assert_lt(strlen(name), sizeof(entry.name));
	strcpy(entry.name, name);
	cr_assert_eq(mrail_ip_parse(addr, &entry.addr), 0,
		     "bad test address %s", addr);
	entry.up = up;
	entry.loopback = mrail_ip_is_loopback(&entry.addr);
	return entry;
}

/*
 * One emulated host, in getifaddrs order: loopback, a management port, and
 * rails mr0..mr4, with the traps rail matching must get right.
 */
enum {
	LO_V4, LO_V6, ETH0_V4,
	MR0_LINK_LOCAL,		/* listed before mr0's IPv4 addresses */
	MR0_V4, MR0_V4_SECOND,
	MR1_V4, MR1_V6,
	MR2_DOWN,
	MR6_V6_ONLY,
	MR3_V4, MR4_V4,		/* two interfaces in 198.18.3.0/24 */
	HOST_IFACES
};

static struct mrail_host_iface host[HOST_IFACES];

static void host_setup(void)
{
	host[LO_V4] = iface("lo", "127.0.0.1", true);
	host[LO_V6] = iface("lo", "::1", true);
	host[ETH0_V4] = iface("eth0", "198.19.0.1", true);
	host[MR0_LINK_LOCAL] = iface("mr0", "fe80::1", true);
	host[MR0_V4] = iface("mr0", "198.18.0.1", true);
	host[MR0_V4_SECOND] = iface("mr0", "198.18.0.2", true);
	host[MR1_V4] = iface("mr1", "198.18.1.1", true);
	host[MR1_V6] = iface("mr1", "2001:db8:1::1", true);
	host[MR2_DOWN] = iface("mr2", "198.18.2.1", false);
	host[MR6_V6_ONLY] = iface("mr6", "2001:db8:6::1", true);
	host[MR3_V4] = iface("mr3", "198.18.3.1", true);
	host[MR4_V4] = iface("mr4", "198.18.3.2", true);
}

static struct mrail_rail_spec spec_of(const char *rail)
{
	struct mrail_rail_config config;
	char err[MRAIL_ERR_MAX];

	cr_assert_eq(mrail_rail_config_parse(rail, &config, err, sizeof(err)),
		     0, "test rail %s: %s", rail, err);
	return config.rails[0];
}

static int match_rail(const char *rail, char *err, size_t err_len)
{
	struct mrail_rail_spec spec = spec_of(rail);

	return mrail_rail_match_iface(&spec, host, HOST_IFACES, err, err_len);
}

static void assert_matches(const char *rail, int expect)
{
	char err[MRAIL_ERR_MAX] = "";
	int ret = match_rail(rail, err, sizeof(err));

	cr_assert_eq(ret, expect, "%s matched %d (%s), expected %d", rail, ret,
		     err, expect);
}

/* Fails with expect and a message holding every needle. */
static void assert_match_fails_with(const char *rail, int expect, ...)
{
	char err[MRAIL_ERR_MAX];
	const char *needle;
	va_list ap;
	int ret;

	memset(err, 'x', sizeof(err));
	ret = match_rail(rail, err, sizeof(err));
	cr_assert_eq(ret, expect, "%s gave %d, expected %d", rail, ret, expect);
	cr_assert_not_null(memchr(err, '\0', sizeof(err)),
			   "err not terminated");

	va_start(ap, expect);
	while ((needle = va_arg(ap, const char *)))
		cr_assert_not_null(strstr(err, needle),
				   "error for %s is\n  %s\nwhich lacks\n  %s",
				   rail, err, needle);
	va_end(ap);
}

#define assert_match_fails(rail, expect, ...) \
	assert_match_fails_with(rail, expect, __VA_ARGS__, NULL)

TestSuite(match_name, .init = host_setup);
TestSuite(match_addr, .init = host_setup);
TestSuite(match_subnet, .init = host_setup);
TestSuite(match_args, .init = host_setup);

Test(match_name, prefers_the_first_ipv4_address)
{
	assert_matches("tcp;ofi_rxm@mr0", MR0_V4);
	assert_matches("tcp;ofi_rxm@mr1", MR1_V4);
	assert_matches("tcp;ofi_rxm@eth0", ETH0_V4);
	assert_matches("tcp;ofi_rxm@lo", LO_V4);
}

Test(match_name, ipv6_only_interface_gives_its_first_address)
{
	assert_matches("tcp;ofi_rxm@mr6", MR6_V6_ONLY);
}

/* A link that is down is a failed rail, not a mistake: the interface
 * matches, and its up flag tells the caller. */
Test(match_name, down_interface_matches)
{
	assert_matches("tcp;ofi_rxm@mr2", MR2_DOWN);
	cr_assert_not(host[MR2_DOWN].up);
}

Test(match_name, unknown_name_is_enoent_so_the_caller_tries_a_domain)
{
	assert_match_fails("verbs;ofi_rxm@mlx5_0", -ENOENT,
			   "no network interface named \"mlx5_0\"");
	assert_match_fails("tcp;ofi_rxm@mr9", -ENOENT, "\"mr9\"");
}

Test(match_name, exact_and_case_sensitive)
{
	assert_match_fails("tcp;ofi_rxm@MR0", -ENOENT, "\"MR0\"");
	assert_match_fails("tcp;ofi_rxm@mr", -ENOENT, "\"mr\"");
	assert_match_fails("tcp;ofi_rxm@mr00", -ENOENT, "\"mr00\"");
	assert_match_fails("tcp;ofi_rxm@eth", -ENOENT, "\"eth\"");
}

Test(match_name, longer_name_never_matches_on_its_first_fifteen_characters)
{
	struct mrail_host_iface longest[2];
	struct mrail_rail_spec spec = spec_of("tcp;ofi_rxm@abcdefghijklmnop");

	longest[0] = iface("abcdefghijklmno", "198.18.0.1", true);
	/* Not terminated, as a careless caller might leave it. */
	longest[1] = iface("x", "198.18.1.1", true);
	memset(longest[1].name, 'a', sizeof(longest[1].name));
	cr_assert_eq(mrail_rail_match_iface(&spec, longest, 2, NULL, 0),
		     -ENOENT);

	spec = spec_of("tcp;ofi_rxm@abcdefghijklmno");
	cr_assert_eq(mrail_rail_match_iface(&spec, longest, 2, NULL, 0), 0);
	spec = spec_of("tcp;ofi_rxm@aaaaaaaaaaaaaaaa");
	cr_assert_eq(mrail_rail_match_iface(&spec, longest, 2, NULL, 0),
		     -ENOENT);
}

Test(match_addr, exact_address)
{
	assert_matches("tcp;ofi_rxm@198.18.0.2", MR0_V4_SECOND);
	assert_matches("tcp;ofi_rxm@198.18.1.1", MR1_V4);
	assert_matches("tcp;ofi_rxm@2001:db8:1::1", MR1_V6);
	assert_matches("tcp;ofi_rxm@2001:DB8:1:0::1", MR1_V6);
	assert_matches("tcp;ofi_rxm@fe80::1", MR0_LINK_LOCAL);
	assert_matches("tcp;ofi_rxm@127.0.0.1", LO_V4);
}

Test(match_addr, missing_address)
{
	assert_match_fails(
		"tcp;ofi_rxm@198.18.9.9", -ENOENT,
		"no network interface on this host has address 198.18.9.9");
	/* The same four bytes in another family are another address. */
	assert_match_fails("tcp;ofi_rxm@::ffff:198.18.0.1", -ENOENT,
			   "::ffff:198.18.0.1");
	assert_match_fails("tcp;ofi_rxm@198.18.0.3", -ENOENT, "198.18.0.3");
}

Test(match_addr, address_on_a_down_interface_matches)
{
	assert_matches("tcp;ofi_rxm@198.18.2.1", MR2_DOWN);
}

Test(match_subnet, one_interface_inside)
{
	assert_matches("tcp;ofi_rxm@198.18.1.0/24", MR1_V4);
	assert_matches("tcp;ofi_rxm@2001:db8:1::/64", MR1_V6);
	assert_matches("tcp;ofi_rxm@2001:db8:6::/48", MR6_V6_ONLY);
	assert_matches("tcp;ofi_rxm@fe80::/10", MR0_LINK_LOCAL);
	assert_matches("tcp;ofi_rxm@198.18.0.2/32", MR0_V4_SECOND);
	assert_matches("tcp;ofi_rxm@127.0.0.0/8", LO_V4);
	assert_matches("tcp;ofi_rxm@198.19.0.0/16", ETH0_V4);
}

Test(match_subnet, several_addresses_of_one_interface_give_its_first)
{
	assert_matches("tcp;ofi_rxm@198.18.0.0/24", MR0_V4);
	assert_matches("tcp;ofi_rxm@198.18.0.0/30", MR0_V4);
}

Test(match_subnet, two_interfaces_inside_are_ambiguous)
{
	assert_match_fails("tcp;ofi_rxm@198.18.3.0/24", -EEXIST,
			   "interfaces mr3 (198.18.3.1) and mr4 (198.18.3.2)",
			   "198.18.3.0/24", "name one interface");
	assert_match_fails("tcp;ofi_rxm@198.18.0.0/15", -EEXIST,
			   "interfaces eth0 (198.19.0.1) and mr0 (198.18.0.1)",
			   "198.18.0.0/15");
	assert_match_fails("tcp;ofi_rxm@2001:db8::/32", -EEXIST, "mr1", "mr6");
	assert_match_fails("tcp;ofi_rxm@0.0.0.0/0", -EEXIST, "lo", "eth0");
	/* Ambiguity does not depend on which link happens to be up. */
	assert_match_fails("tcp;ofi_rxm@198.18.2.0/23", -EEXIST, "mr2", "mr3");
}

Test(match_subnet, nothing_inside)
{
	assert_match_fails("tcp;ofi_rxm@198.18.9.0/24", -ENOENT,
			   "no network interface on this host has an address "
			   "in subnet 198.18.9.0/24");
	assert_match_fails("tcp;ofi_rxm@2001:db8:7::/48", -ENOENT,
			   "2001:db8:7::/48");
}

Test(match_subnet, only_a_down_interface_inside_matches)
{
	assert_matches("tcp;ofi_rxm@198.18.2.0/24", MR2_DOWN);
}

Test(match_args, empty_table_and_bad_arguments)
{
	struct mrail_rail_spec spec = spec_of("tcp;ofi_rxm@mr0");
	char err[MRAIL_ERR_MAX];

	cr_assert_eq(mrail_rail_match_iface(&spec, host, 0, err, sizeof(err)),
		     -ENOENT);
	cr_assert_eq(mrail_rail_match_iface(&spec, NULL, 0, err, sizeof(err)),
		     -ENOENT);
	cr_assert_eq(mrail_rail_match_iface(&spec, NULL, 3, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_rail_match_iface(NULL, host, HOST_IFACES, err,
					    sizeof(err)), -EINVAL);
	spec.kind = (enum mrail_attach_kind) 42;
	cr_assert_eq(mrail_rail_match_iface(&spec, host, HOST_IFACES, err,
					    sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "42"));
}

Test(match_args, error_buffer_may_be_absent_or_short)
{
	char err[8];

	cr_assert_eq(match_rail("tcp;ofi_rxm@mr9", NULL, 100), -ENOENT);
	memcpy(err, "unused", 7);
	cr_assert_eq(match_rail("tcp;ofi_rxm@mr9", err, 0), -ENOENT);
	cr_assert_str_eq(err, "unused");
	cr_assert_eq(match_rail("tcp;ofi_rxm@198.18.3.0/24", err, sizeof(err)),
		     -EEXIST);
	cr_assert_eq(strlen(err), sizeof(err) - 1);
}

/* ---- duplicate finder ---- */

Test(find_duplicate, distinct_keys)
{
	const char *keys[] = { "tcp;ofi_rxm@mr0", "tcp;ofi_rxm@mr1",
			       "udp;ofi_rxd@mr0" };
	size_t first = 99, second = 99;

	cr_assert_not(mrail_rails_find_duplicate(keys, 3, &first, &second));
	cr_assert_eq(first, 99, "untouched when there is no duplicate");
	cr_assert_eq(second, 99);
	cr_assert_not(mrail_rails_find_duplicate(keys, 1, &first, &second));
	cr_assert_not(mrail_rails_find_duplicate(keys, 0, &first, &second));
	cr_assert_not(mrail_rails_find_duplicate(NULL, 0, &first, &second));
}

Test(find_duplicate, reports_the_pair)
{
	const char *keys[] = { "tcp;ofi_rxm@mr0", "tcp;ofi_rxm@mr1",
			       "tcp;ofi_rxm@mr0" };
	size_t first, second;

	cr_assert(mrail_rails_find_duplicate(keys, 3, &first, &second));
	cr_assert_eq(first, 0);
	cr_assert_eq(second, 2);
	/* Only the first two keys: no duplicate among them. */
	cr_assert_not(mrail_rails_find_duplicate(keys, 2, &first, &second));
}

Test(find_duplicate, first_pair_in_order_of_its_first_rail)
{
	const char *keys[] = { "x", "y", "y", "x" };
	size_t first, second;

	cr_assert(mrail_rails_find_duplicate(keys, 4, &first, &second));
	cr_assert_eq(first, 0);
	cr_assert_eq(second, 3);
	cr_assert(mrail_rails_find_duplicate(keys + 1, 3, &first, &second));
	cr_assert_eq(first, 0);
	cr_assert_eq(second, 1);
}

Test(find_duplicate, null_keys_and_outputs)
{
	const char *keys[] = { NULL, "a", NULL, "a" };
	size_t first, second;

	cr_assert(mrail_rails_find_duplicate(keys, 4, &first, &second));
	cr_assert_eq(first, 1);
	cr_assert_eq(second, 3);
	cr_assert(mrail_rails_find_duplicate(keys, 4, NULL, NULL));
	cr_assert_not(mrail_rails_find_duplicate(keys, 3, NULL, NULL));
}

Test(find_duplicate, keys_compare_exactly)
{
	const char *keys[] = { "tcp;ofi_rxm@mr0", "tcp;ofi_rxm@MR0",
			       "tcp;ofi_rxm@mr0 " };

	cr_assert_not(mrail_rails_find_duplicate(keys, 3, NULL, NULL));
}

/* ---- stack ranks ---- */

Test(stack_rank, preference_order)
{
	cr_assert_eq(mrail_stack_rank("verbs;ofi_rxm"), 0);
	cr_assert_eq(mrail_stack_rank("psm3"), 1);
	cr_assert_eq(mrail_stack_rank("psm2"), 2);
	cr_assert_eq(mrail_stack_rank("opx"), 3);
	cr_assert_eq(mrail_stack_rank("efa"), 4);
	cr_assert_eq(mrail_stack_rank("cxi"), 5);
	cr_assert_eq(mrail_stack_rank("tcp;ofi_rxm"), 10);
	cr_assert_eq(mrail_stack_rank("udp;ofi_rxd"), 11);
	cr_assert_eq(mrail_stack_rank("sockets"), 20);
	cr_assert_eq(mrail_stack_rank("net;ofi_rxm"), 30);
	cr_assert_eq(mrail_stack_rank("net"), 30);
}

Test(stack_rank, other_stacks_sit_between_udp_and_sockets)
{
	cr_assert_eq(mrail_stack_rank("ucx"), 15);
	cr_assert_eq(mrail_stack_rank("usnic"), 15);
	cr_assert_eq(mrail_stack_rank("tcp"), 15);
	cr_assert_eq(mrail_stack_rank("verbs"), 15);
	cr_assert_eq(mrail_stack_rank("verbs;ofi_rxd"), 15);
	cr_assert_eq(mrail_stack_rank("psm3;ofi_rxm"), 15);
	cr_assert_eq(mrail_stack_rank("udp"), 15);
	cr_assert_eq(mrail_stack_rank("shmem"), 15,
		     "a prefix of shm is no shm");
	cr_assert_eq(mrail_stack_rank("xofi_rxm"), 15);
}

Test(stack_rank, never_a_rail)
{
	static const char *const never[] = {
		"shm",
		"sm2",
		"shm;ofi_rxm",
		"tcp;shm",
		"sm2;ofi_rxd",
		"mrail",
		"ofi_mrail",
		"tcp;ofi_mrail",
		"mrail;ofi_rxm",
		"ofi_hook_perf",
		"tcp;ofi_hook_noop;ofi_rxm",
		"verbs;ofi_hook_trace",
		"ofi_rxm",
		"ofi_rxd",
		"ofi_rxm;ofi_rxd",
		"ofi_anything",
	};
	size_t i;

	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		cr_assert_eq(mrail_stack_rank(never[i]), -1, "%s ranks %d",
			     never[i], mrail_stack_rank(never[i]));
}

Test(stack_rank, malformed_names_are_never_a_rail)
{
	static const char *const bad[] = {
		"",	 "TCP", "tcp;", ";tcp", "tcp;;ofi_rxm", "tcp ofi_rxm",
		"tcp-x", ";",
	};
	char longest[MRAIL_STACK_NAME_MAX + 1];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(mrail_stack_rank(bad[i]), -1, "\"%s\"", bad[i]);
	cr_assert_eq(mrail_stack_rank(NULL), -1);

	memset(longest, 'a', MRAIL_STACK_NAME_MAX - 1);
	longest[MRAIL_STACK_NAME_MAX - 1] = '\0';
	cr_assert_eq(mrail_stack_rank(longest), 15);
	longest[MRAIL_STACK_NAME_MAX - 1] = 'a';
	longest[MRAIL_STACK_NAME_MAX] = '\0';
	cr_assert_eq(mrail_stack_rank(longest), -1);
}

/* ---- discovery ---- */

static struct mrail_rail_candidate cand(const char *stack, const char *domain,
					int family, bool loopback)
{
	struct mrail_rail_candidate c;

	memset(&c, 0, sizeof(c));
	strcpy(c.stack, stack);
	strcpy(c.domain, domain);
	c.family = family;
	c.loopback = loopback;
	return c;
}

#define DISCOVER_CAP 16

/* Discovers over cands and checks the picks, in order, are expect. */
static void assert_discovers(const struct mrail_rail_candidate *cands,
			     size_t count, size_t max_picks,
			     const size_t *expect, size_t expect_count)
{
	size_t picks[DISCOVER_CAP], n, i;

	cr_assert_leq(max_picks, DISCOVER_CAP);
	for (i = 0; i < DISCOVER_CAP; i++)
		picks[i] = 777;
	n = mrail_discover_rails(cands, count, picks, max_picks);
	cr_assert_eq(n, expect_count, "picked %zu offers, expected %zu", n,
		     expect_count);
	for (i = 0; i < n; i++)
		cr_assert_eq(picks[i], expect[i],
			     "pick %zu is offer %zu (%s@%s), "
			     "expected offer %zu",
			     i, picks[i], cands[picks[i]].stack,
			     cands[picks[i]].domain, expect[i]);
	for (i = n; i < DISCOVER_CAP; i++)
		cr_assert_eq(picks[i], 777, "nothing written past the picks");
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Up to MRAIL_MAX_RAILS picks over a whole table give exactly expect[]. */
#define assert_discovers_all(cands, expect) \
	assert_discovers(cands, COUNT(cands), MRAIL_MAX_RAILS, expect, \
			 COUNT(expect))

Test(discover, best_stack_then_its_domains_in_name_order)
{
	struct mrail_rail_candidate cands[] = {
		cand("tcp;ofi_rxm", "mr1", AF_INET, false),		/* 0 */
		cand("tcp;ofi_rxm", "mr0", AF_INET, false),		/* 1 */
		cand("udp;ofi_rxd", "mr0", AF_INET, false),		/* 2 */
		cand("shm", "shm", 0, false),				/* 3 */
		cand("verbs;ofi_rxm", "mlx5_1", AF_INET, false),	/* 4 */
		cand("sockets", "mr0", AF_INET, false),			/* 5 */
		cand("verbs;ofi_rxm", "mlx5_0", AF_INET, false),	/* 6 */
	};
	const size_t expect[] = { 6, 4 };

	assert_discovers_all(cands, expect);
}

Test(discover, tcp_over_udp_and_loopback_skipped)
{
	struct mrail_rail_candidate cands[] = {
		cand("udp;ofi_rxd", "mr0", AF_INET, false),		/* 0 */
		cand("tcp;ofi_rxm", "mr1", AF_INET, false),		/* 1 */
		cand("tcp;ofi_rxm", "lo", AF_INET, true),		/* 2 */
		cand("tcp;ofi_rxm", "mr0", AF_INET, false),		/* 3 */
		cand("tcp;ofi_rxm", "eth0", AF_INET, false),		/* 4 */
		cand("tcp;ofi_rxm", "lo", AF_INET6, true),		/* 5 */
	};
	const size_t expect[] = { 4, 3, 1 };

	assert_discovers_all(cands, expect);
}

Test(discover, stack_with_only_loopback_offers_is_passed_over)
{
	struct mrail_rail_candidate cands[] = {
		cand("verbs;ofi_rxm", "rxe_lo", AF_INET, true),		/* 0 */
		cand("tcp;ofi_rxm", "lo", AF_INET, true),		/* 1 */
		cand("udp;ofi_rxd", "mr1", AF_INET, false),		/* 2 */
		cand("udp;ofi_rxd", "lo", AF_INET, true),		/* 3 */
		cand("udp;ofi_rxd", "mr0", AF_INET, false),		/* 4 */
	};
	const size_t expect[] = { 4, 2 };

	assert_discovers_all(cands, expect);
}

Test(discover, ipv4_preferred_within_a_domain_and_ipv6_only_domains_kept)
{
	struct mrail_rail_candidate cands[] = {
		cand("tcp;ofi_rxm", "mr0", AF_INET6, false),		/* 0 */
		cand("tcp;ofi_rxm", "mr1", AF_INET6, false),		/* 1 */
		cand("tcp;ofi_rxm", "mr0", AF_INET, false),		/* 2 */
		cand("tcp;ofi_rxm", "mr0", AF_INET, false),		/* 3 */
		cand("tcp;ofi_rxm", "mr2", 0, false),			/* 4 */
		cand("tcp;ofi_rxm", "mr2", AF_INET6, false),		/* 5 */
		cand("tcp;ofi_rxm", "mr3", AF_INET6, false),		/* 6 */
		cand("tcp;ofi_rxm", "mr3", AF_INET, false),		/* 7 */
	};
	/* mr0: IPv4, first of two; mr1: IPv6 only; mr2: first of non-IPv4. */
	const size_t expect[] = { 2, 1, 4, 7 };

	assert_discovers_all(cands, expect);
}

Test(discover, domain_order_is_bytewise_and_independent_of_offer_order)
{
	struct mrail_rail_candidate forward[] = {
		cand("tcp;ofi_rxm", "mr2", AF_INET, false),
		cand("tcp;ofi_rxm", "mr10", AF_INET, false),
		cand("tcp;ofi_rxm", "Mr5", AF_INET, false),
		cand("tcp;ofi_rxm", "mr1", AF_INET, false),
	};
	struct mrail_rail_candidate backward[] = {
		forward[3], forward[2], forward[1], forward[0],
	};
	/* "Mr5" < "mr1" < "mr10" < "mr2", as strcmp orders them. */
	const size_t expect_forward[] = { 2, 3, 1, 0 };
	const size_t expect_backward[] = { 1, 0, 2, 3 };

	assert_discovers_all(forward, expect_forward);
	assert_discovers_all(backward, expect_backward);
}

Test(discover, never_a_rail_stacks_give_nothing)
{
	struct mrail_rail_candidate cands[] = {
		cand("shm", "shm", 0, false),
		cand("sm2", "sm2", 0, false),
		cand("ofi_rxm", "mr0", AF_INET, false),
		cand("mrail", "mr0", AF_INET, false),
		cand("ofi_mrail", "mr0", AF_INET, false),
		cand("tcp;ofi_hook_perf;ofi_rxm", "mr0", AF_INET, false),
		cand("tcp;ofi_rxm", "lo", AF_INET, true),
	};

	assert_discovers(cands, COUNT(cands), MRAIL_MAX_RAILS, NULL, 0);
}

Test(discover, equal_ranks_go_to_the_first_offered_stack)
{
	struct mrail_rail_candidate cands[] = {
		cand("net", "mr0", AF_INET, false),	  /* 0: 30 */
		cand("usnic", "usnic_1", AF_INET, false), /* 1: 15 */
		cand("ucx", "mlx5_0", 0, false),	  /* 2: 15 */
		cand("usnic", "usnic_0", AF_INET, false), /* 3: 15 */
		cand("ucx", "mlx5_1", 0, false),	  /* 4: 15 */
	};
	const size_t expect[] = { 3, 1 };

	assert_discovers_all(cands, expect);
}

Test(discover, sockets_before_experimental_net)
{
	struct mrail_rail_candidate cands[] = {
		cand("net;ofi_rxm", "mr0", AF_INET, false),
		cand("sockets", "mr1", AF_INET, false),
		cand("net", "mr1", AF_INET, false),
		cand("sockets", "mr0", AF_INET, false),
	};
	const size_t expect[] = { 3, 1 };

	assert_discovers_all(cands, expect);
}

Test(discover, max_picks_bounds_the_result)
{
	struct mrail_rail_candidate cands[] = {
		cand("tcp;ofi_rxm", "mr4", AF_INET, false),		/* 0 */
		cand("tcp;ofi_rxm", "mr3", AF_INET, false),		/* 1 */
		cand("tcp;ofi_rxm", "mr2", AF_INET, false),		/* 2 */
		cand("tcp;ofi_rxm", "mr1", AF_INET, false),		/* 3 */
		cand("tcp;ofi_rxm", "mr0", AF_INET, false),		/* 4 */
	};
	const size_t expect[] = { 4, 3, 2, 1, 0 };
	size_t picks[1] = { 777 };

	assert_discovers(cands, COUNT(cands), 3, expect, 3);
	assert_discovers(cands, COUNT(cands), 1, expect, 1);
	assert_discovers(cands, COUNT(cands), 5, expect, 5);
	assert_discovers(cands, COUNT(cands), 6, expect, 5);
	assert_discovers(cands, COUNT(cands), 0, NULL, 0);
	cr_assert_eq(mrail_discover_rails(cands, COUNT(cands), NULL, 4), 0);
	cr_assert_eq(mrail_discover_rails(cands, COUNT(cands), picks, 1), 1);
	cr_assert_eq(picks[0], 4);
}

Test(discover, max_rails_of_many_domains)
{
	struct mrail_rail_candidate cands[12];
	size_t picks[MRAIL_MAX_RAILS], i;

	for (i = 0; i < COUNT(cands); i++) {
		memset(&cands[i], 0, sizeof(cands[i]));
		strcpy(cands[i].stack, "tcp;ofi_rxm");
		snprintf(cands[i].domain, sizeof(cands[i].domain), "mr%c",
			 (char) ('z' - i));
		cands[i].family = AF_INET;
	}
	cr_assert_eq(mrail_discover_rails(cands, COUNT(cands), picks,
					  MRAIL_MAX_RAILS), MRAIL_MAX_RAILS);
	/* Domains "mro".."mrz": the first eight by name are the last offers. */
	for (i = 0; i < MRAIL_MAX_RAILS; i++)
		cr_assert_eq(picks[i], COUNT(cands) - 1 - i);
}

Test(discover, unterminated_names_are_no_offer)
{
	struct mrail_rail_candidate cands[] = {
		cand("verbs;ofi_rxm", "mlx5_0", AF_INET, false),	/* 0 */
		cand("verbs;ofi_rxm", "mlx5_1", AF_INET, false),	/* 1 */
		cand("tcp;ofi_rxm", "mr0", AF_INET, false),		/* 2 */
	};
	const size_t expect[] = { 2 };

	memset(cands[0].domain, 'd', sizeof(cands[0].domain));
	memset(cands[1].stack, 's', sizeof(cands[1].stack));
	assert_discovers_all(cands, expect);
}

Test(discover, no_offers)
{
	size_t picks[MRAIL_MAX_RAILS];

	cr_assert_eq(mrail_discover_rails(NULL, 0, picks, MRAIL_MAX_RAILS), 0);
	cr_assert_eq(mrail_discover_rails(NULL, 5, picks, MRAIL_MAX_RAILS), 0);
}

/* ---- fi_getinfo(node, FI_SOURCE): which rail node names ---- */

static struct mrail_rail_ident ident(const char *port, const char *addr)
{
	struct mrail_rail_ident rail = { .port = port };

	if (addr)
		cr_assert_eq(mrail_ip_parse(addr, &rail.addr), 0, "bad test address %s",
			     addr);
	return rail;
}

Test(match_source, any_rails_address_selects_the_set)
{
	struct mrail_rail_ident rails[] = {
		ident("mr0", "198.18.1.1"), ident("mr1", "198.18.2.1"),
	};

	cr_assert_eq(mrail_rails_match_source("198.18.1.1", rails, 2), 0);
	cr_assert_eq(mrail_rails_match_source("198.18.2.1", rails, 2), 1);
}

Test(match_source, any_rails_interface_or_domain_selects_the_set)
{
	struct mrail_rail_ident rails[] = {
		ident("mr0", "198.18.1.1"), ident("mlx5_1", NULL),
	};

	cr_assert_eq(mrail_rails_match_source("mr0", rails, 2), 0);
	cr_assert_eq(mrail_rails_match_source("mlx5_1", rails, 2), 1);
}

Test(match_source, other_addresses_and_names_select_nothing)
{
	struct mrail_rail_ident rails[] = {
		ident("mr0", "198.18.1.1"), ident("mr1", "198.18.2.1"),
	};

	/* Another host on the rail's subnet, an address of no rail, an
	 * interface that is no rail, a prefix of a rail's name. */
	cr_assert_eq(mrail_rails_match_source("198.18.1.2", rails, 2), -1);
	cr_assert_eq(mrail_rails_match_source("127.0.0.1", rails, 2), -1);
	cr_assert_eq(mrail_rails_match_source("eth0", rails, 2), -1);
	cr_assert_eq(mrail_rails_match_source("mr", rails, 2), -1);
	cr_assert_eq(mrail_rails_match_source("", rails, 2), -1);
	cr_assert_eq(mrail_rails_match_source(NULL, rails, 2), -1);
	cr_assert_eq(mrail_rails_match_source("mr0", NULL, 2), -1);
	cr_assert_eq(mrail_rails_match_source("mr0", rails, 0), -1);
}

Test(match_source, ipv6_spellings_match_the_same_address)
{
	struct mrail_rail_ident rails[] = {
		ident("mr0", "2001:db8::1"), ident("mr1", NULL),
	};

	cr_assert_eq(mrail_rails_match_source("2001:0db8:0:0::1", rails, 2), 0);
	/* A rail without an IP address is matched by name only. */
	cr_assert_eq(mrail_rails_match_source("::", rails, 2), -1);
}
