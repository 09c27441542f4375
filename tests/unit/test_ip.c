/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/mrail_ip.c: numeric addresses, masks and subnets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <criterion/criterion.h>

#include "mrail_ip.h"

static struct mrail_ip ip_of(const char *text)
{
	struct mrail_ip ip;

	cr_assert_eq(mrail_ip_parse(text, &ip), 0, "\"%s\" should parse", text);
	return ip;
}

/* Parses text, checks its family, and that formatting gives canonical. */
static void assert_parses_as(const char *text, int family,
			     const char *canonical)
{
	char buf[INET6_ADDRSTRLEN];
	struct mrail_ip ip = ip_of(text);

	cr_assert_eq(ip.family, family, "\"%s\": family %d, expected %d", text,
		     ip.family, family);
	cr_assert_eq(mrail_ip_format(&ip, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, canonical, "\"%s\" formats as \"%s\"", text, buf);
}

static void assert_refused(const char *text)
{
	struct mrail_ip ip;

	memset(&ip, 0xa5, sizeof(ip));
	cr_assert_eq(mrail_ip_parse(text, &ip), -EINVAL,
		     "\"%s\" should be refused", text ? text : "(null)");
	/* A refused parse leaves the output alone. */
	cr_assert_eq(ip.family, (int) 0xa5a5a5a5);
}

Test(ip_parse, ipv4_forms)
{
	struct mrail_ip ip = ip_of("198.18.1.5");
	static const uint8_t expect[4] = { 198, 18, 1, 5 };

	cr_assert_eq(ip.family, AF_INET);
	cr_assert_arr_eq(ip.bytes, expect, sizeof(expect));
	assert_parses_as("0.0.0.0", AF_INET, "0.0.0.0");
	assert_parses_as("255.255.255.255", AF_INET, "255.255.255.255");
	assert_parses_as("127.0.0.1", AF_INET, "127.0.0.1");
	assert_parses_as("198.19.255.254", AF_INET, "198.19.255.254");
}

Test(ip_parse, ipv6_forms)
{
	struct mrail_ip ip = ip_of("2001:db8::1");
	static const uint8_t expect[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

	cr_assert_eq(ip.family, AF_INET6);
	cr_assert_arr_eq(ip.bytes, expect, sizeof(expect));
	assert_parses_as("::", AF_INET6, "::");
	assert_parses_as("::1", AF_INET6, "::1");
	assert_parses_as("0:0:0:0:0:0:0:1", AF_INET6, "::1");
	assert_parses_as("2001:0DB8:0000:0000:0000:0000:0000:0001", AF_INET6,
			 "2001:db8::1");
	assert_parses_as("fe80::a:b:c:d", AF_INET6, "fe80::a:b:c:d");
	assert_parses_as("2001:db8:1:2:3:4:5:6", AF_INET6,
			 "2001:db8:1:2:3:4:5:6");
	assert_parses_as("::ffff:198.18.0.1", AF_INET6, "::ffff:198.18.0.1");
	assert_parses_as("64:ff9b::198.18.0.1", AF_INET6, "64:ff9b::c612:1");
}

Test(ip_parse, refuses_what_is_not_exactly_a_numeric_address)
{
	assert_refused(NULL);
	assert_refused("");
	assert_refused(" ");
	assert_refused(" 198.18.0.1");
	assert_refused("198.18.0.1 ");
	assert_refused("\t198.18.0.1");
	assert_refused("198.18.0.1\n");
	assert_refused(" ::1");
	assert_refused("::1 ");
	assert_refused("198.18.0");
	assert_refused("198.18.0.1.2");
	assert_refused("198.18.0.256");
	assert_refused("198.18.0.-1");
	assert_refused("198.018.0.1");
	assert_refused("0x7f.0.0.1");
	assert_refused("198.18.0.1/24");
	assert_refused("localhost");
	assert_refused("mr0");
	assert_refused("::1%lo");
	assert_refused("fe80::1%mr0");
	assert_refused("[::1]");
	assert_refused("1:2:3:4:5:6:7:8:9");
	assert_refused("2001:db8:::1");
	assert_refused("2001:db8::g");
	assert_refused("12345::1");
	assert_refused(":");
}

Test(ip_parse, null_output_is_refused)
{
	cr_assert_eq(mrail_ip_parse("198.18.0.1", NULL), -EINVAL);
}

Test(ip_format, short_buffer_and_bad_family)
{
	struct mrail_ip ip = ip_of("198.18.10.200");
	char buf[INET6_ADDRSTRLEN];

	/* "198.18.10.200" is 13 characters: 14 bytes fit, 13 do not. */
	cr_assert_eq(mrail_ip_format(&ip, buf, 14), 0);
	cr_assert_str_eq(buf, "198.18.10.200");
	memset(buf, 'x', sizeof(buf));
	cr_assert_eq(mrail_ip_format(&ip, buf, 13), -ENOSPC);
	cr_assert_eq(buf[0], 'x', "nothing is written when it does not fit");
	cr_assert_eq(mrail_ip_format(&ip, buf, 0), -ENOSPC);

	ip.family = AF_UNIX;
	cr_assert_eq(mrail_ip_format(&ip, buf, sizeof(buf)), -EINVAL);
	ip.family = 0;
	cr_assert_eq(mrail_ip_format(&ip, buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(mrail_ip_format(NULL, buf, sizeof(buf)), -EINVAL);
}

Test(ip_format, longest_ipv6_fits_inet6_addrstrlen)
{
	struct mrail_ip ip =
		ip_of("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");
	char buf[INET6_ADDRSTRLEN];

	cr_assert_eq(mrail_ip_format(&ip, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

Test(ip_bits, per_family)
{
	cr_assert_eq(mrail_ip_bits(AF_INET), 32);
	cr_assert_eq(mrail_ip_bits(AF_INET6), 128);
	cr_assert_eq(mrail_ip_bits(0), 0);
	cr_assert_eq(mrail_ip_bits(AF_UNIX), 0);
}

static void assert_masks_to(const char *text, unsigned prefix_len,
			    const char *expect)
{
	struct mrail_ip ip = ip_of(text);
	struct mrail_ip want = ip_of(expect);

	mrail_ip_mask(&ip, prefix_len);
	cr_assert(mrail_ip_equal(&ip, &want), "%s/%u should mask to %s", text,
		  prefix_len, expect);
	cr_assert_arr_eq(ip.bytes, want.bytes, sizeof(ip.bytes));
}

Test(ip_mask, ipv4)
{
	assert_masks_to("198.18.1.5", 24, "198.18.1.0");
	assert_masks_to("198.18.1.5", 32, "198.18.1.5");
	assert_masks_to("198.18.1.5", 33, "198.18.1.5");
	assert_masks_to("198.18.1.5", 1000, "198.18.1.5");
	assert_masks_to("198.18.1.5", 0, "0.0.0.0");
	assert_masks_to("198.19.255.255", 15, "198.18.0.0");
	assert_masks_to("198.18.1.255", 28, "198.18.1.240");
	assert_masks_to("255.255.255.255", 1, "128.0.0.0");
	assert_masks_to("255.255.255.255", 31, "255.255.255.254");
	assert_masks_to("198.18.1.5", 8, "198.0.0.0");
	assert_masks_to("198.18.1.5", 16, "198.18.0.0");
}

Test(ip_mask, ipv6)
{
	assert_masks_to("2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::");
	assert_masks_to("2001:db8:1:2:3:4:5:6", 128, "2001:db8:1:2:3:4:5:6");
	assert_masks_to("2001:db8:1:2:3:4:5:6", 129, "2001:db8:1:2:3:4:5:6");
	assert_masks_to("2001:db8:1:2:3:4:5:6", 0, "::");
	assert_masks_to("2001:db8:1:2:3:4:5:ffff", 127,
			"2001:db8:1:2:3:4:5:fffe");
	assert_masks_to("2001:db8:ffff::", 36, "2001:db8:f000::");
	assert_masks_to("ffff::", 3, "e000::");
}

Test(ip_mask, unknown_family_and_null_are_left_alone)
{
	struct mrail_ip ip = { .family = 0, .bytes = { 1, 2, 3, 4 } };

	mrail_ip_mask(&ip, 0);
	cr_assert_eq(ip.bytes[0], 1);
	cr_assert_eq(ip.bytes[3], 4);
	mrail_ip_mask(NULL, 0);
}

Test(ip_equal, compares_family_and_significant_bytes)
{
	struct mrail_ip a = ip_of("198.18.0.1"), b = ip_of("198.18.0.1");
	struct mrail_ip v6 = ip_of("::ffff:198.18.0.1");

	cr_assert(mrail_ip_equal(&a, &b));
	/* Bytes past an IPv4 address carry nothing. */
	b.bytes[10] = 0x55;
	cr_assert(mrail_ip_equal(&a, &b));
	b.bytes[3] = 2;
	cr_assert_not(mrail_ip_equal(&a, &b));
	cr_assert_not(mrail_ip_equal(&a, &v6));
	cr_assert(mrail_ip_equal(&v6, &v6));

	b = ip_of("2001:db8::1");
	a = ip_of("2001:db8::2");
	cr_assert_not(mrail_ip_equal(&a, &b));
	a = ip_of("2001:0db8:0::1");
	cr_assert(mrail_ip_equal(&a, &b));
	cr_assert_not(mrail_ip_equal(&a, NULL));
	cr_assert_not(mrail_ip_equal(NULL, &a));
}

static bool in_subnet(const char *addr, const char *network,
		      unsigned prefix_len)
{
	struct mrail_ip ip = ip_of(addr), net = ip_of(network);

	return mrail_ip_in_subnet(&ip, &net, prefix_len);
}

Test(ip_in_subnet, ipv4)
{
	cr_assert(in_subnet("198.18.1.5", "198.18.1.0", 24));
	cr_assert(in_subnet("198.18.1.255", "198.18.1.0", 24));
	cr_assert_not(in_subnet("198.18.2.5", "198.18.1.0", 24));
	cr_assert(in_subnet("198.19.7.7", "198.18.0.0", 15));
	cr_assert_not(in_subnet("198.20.0.1", "198.18.0.0", 15));
	cr_assert(in_subnet("198.18.1.5", "198.18.1.5", 32));
	cr_assert_not(in_subnet("198.18.1.6", "198.18.1.5", 32));
	/* Host bits in the network are ignored, as ip(8) does. */
	cr_assert(in_subnet("198.18.1.9", "198.18.1.200", 24));
	cr_assert(in_subnet("198.18.1.14", "198.18.1.9", 29));
	cr_assert_not(in_subnet("198.18.1.16", "198.18.1.9", 29));
}

Test(ip_in_subnet, prefix_zero_matches_its_whole_family_only)
{
	cr_assert(in_subnet("1.2.3.4", "0.0.0.0", 0));
	cr_assert(in_subnet("255.255.255.255", "198.18.0.0", 0));
	cr_assert(in_subnet("2001:db8::1", "::", 0));
	cr_assert(in_subnet("::1", "fe80::", 0));
	cr_assert_not(in_subnet("1.2.3.4", "::", 0));
	cr_assert_not(in_subnet("::1", "0.0.0.0", 0));
}

Test(ip_in_subnet, ipv6)
{
	cr_assert(in_subnet("2001:db8:1:2::77", "2001:db8:1:2::", 64));
	cr_assert_not(in_subnet("2001:db8:1:3::77", "2001:db8:1:2::", 64));
	cr_assert(in_subnet("2001:db8::1", "2001:db8::1", 128));
	cr_assert_not(in_subnet("2001:db8::2", "2001:db8::1", 128));
	cr_assert(in_subnet("2001:db8::3", "2001:db8::2", 127));
}

Test(ip_in_subnet, family_mismatch_and_bad_prefix_are_outside)
{
	cr_assert_not(in_subnet("::ffff:198.18.1.5", "198.18.1.0", 24));
	cr_assert_not(in_subnet("198.18.1.5", "::ffff:198.18.1.0", 120));
	cr_assert_not(in_subnet("198.18.1.5", "198.18.1.5", 33));
	cr_assert_not(in_subnet("2001:db8::1", "2001:db8::1", 129));
	cr_assert_not(mrail_ip_in_subnet(NULL, NULL, 0));
}

static bool loopback(const char *text)
{
	struct mrail_ip ip = ip_of(text);

	return mrail_ip_is_loopback(&ip);
}

Test(ip_loopback, ipv4_127_slash_8_and_ipv6_one)
{
	cr_assert(loopback("127.0.0.1"));
	cr_assert(loopback("127.0.0.0"));
	cr_assert(loopback("127.255.255.255"));
	cr_assert(loopback("127.1.2.3"));
	cr_assert(loopback("::1"));
	cr_assert_not(loopback("126.255.255.255"));
	cr_assert_not(loopback("128.0.0.1"));
	cr_assert_not(loopback("198.18.0.1"));
	cr_assert_not(loopback("0.0.0.0"));
	cr_assert_not(loopback("::"));
	cr_assert_not(loopback("::2"));
	cr_assert_not(loopback("1::1"));
	cr_assert_not(loopback("::ffff:127.0.0.1"));
	cr_assert_not(mrail_ip_is_loopback(NULL));
}
