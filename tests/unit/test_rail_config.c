/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/rail_config.c: FI_MRAIL_RAILS parsing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <criterion/criterion.h>

#include "rail_config.h"

static void parse_ok(const char *text, struct mrail_rail_config *config)
{
	char err[MRAIL_ERR_MAX] = "";
	int ret;

	ret = mrail_rail_config_parse(text, config, err, sizeof(err));
	cr_assert_eq(ret, 0, "\"%s\" should parse, got %d: %s", text, ret, err);
}

static void assert_spec(const struct mrail_rail_spec *spec, const char *stack,
			enum mrail_attach_kind kind, const char *attach,
			unsigned prefix_len)
{
	cr_assert_str_eq(spec->stack, stack);
	cr_assert_eq(spec->kind, kind, "kind of %s@%s is %d, expected %d",
		     spec->stack, spec->attach, spec->kind, kind);
	cr_assert_str_eq(spec->attach, attach);
	if (kind == MRAIL_ATTACH_SUBNET)
		cr_assert_eq(spec->prefix_len, prefix_len, "prefix of %s is %u",
			     spec->attach, spec->prefix_len);
}

/* text must be one rail, parsed to exactly this. */
static void assert_one_rail(const char *text, const char *stack,
			    enum mrail_attach_kind kind, const char *attach,
			    unsigned prefix_len)
{
	struct mrail_rail_config config;

	parse_ok(text, &config);
	cr_assert_eq(config.count, 1, "\"%s\" gives %zu rails", text,
		     config.count);
	assert_spec(&config.rails[0], stack, kind, attach, prefix_len);
}

/* Refused with -EINVAL and a terminated message containing every needle. */
static void assert_refused_with(const char *text, ...)
{
	struct mrail_rail_config config;
	char err[MRAIL_ERR_MAX];
	const char *needle;
	va_list ap;
	int ret;

	memset(err, 'x', sizeof(err));
	ret = mrail_rail_config_parse(text, &config, err, sizeof(err));
	cr_assert_eq(ret, -EINVAL, "\"%s\" should be refused, got %d", text,
		     ret);
	cr_assert_not_null(memchr(err, '\0', sizeof(err)),
			   "err not terminated");
	cr_assert(strlen(err) > 0);

	va_start(ap, text);
	while ((needle = va_arg(ap, const char *)))
		cr_assert_not_null(strstr(err, needle), "error for \"%s\" "
				   "is\n  %s\nwhich lacks\n  %s", text, err,
				   needle);
	va_end(ap);
}

#define assert_refused(text, ...) assert_refused_with(text, __VA_ARGS__, NULL)

#define EIGHT_RAILS \
	"tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1,tcp;ofi_rxm@mr2,tcp;ofi_rxm@mr3," \
	"tcp;ofi_rxm@mr4,tcp;ofi_rxm@mr5,tcp;ofi_rxm@mr6,tcp;ofi_rxm@mr7"

/* A string of n copies of c. */
static char *repeat(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/* ---- valid forms ---- */

Test(config_valid, interface_names)
{
	char name[MRAIL_ATTACH_MAX], text[256];

	assert_one_rail("tcp;ofi_rxm@mr0", "tcp;ofi_rxm", MRAIL_ATTACH_NAME,
			"mr0", 0);
	assert_one_rail("tcp;ofi_rxm@eth0.100", "tcp;ofi_rxm",
			MRAIL_ATTACH_NAME, "eth0.100", 0);
	assert_one_rail("tcp;ofi_rxm@eth0:1", "tcp;ofi_rxm", MRAIL_ATTACH_NAME,
			"eth0:1", 0);
	assert_one_rail("tcp;ofi_rxm@enp0s31f6", "tcp;ofi_rxm",
			MRAIL_ATTACH_NAME, "enp0s31f6", 0);
	assert_one_rail("tcp;ofi_rxm@Mr-0_A.b:c", "tcp;ofi_rxm",
			MRAIL_ATTACH_NAME, "Mr-0_A.b:c", 0);
	assert_one_rail("tcp;ofi_rxm@a", "tcp;ofi_rxm", MRAIL_ATTACH_NAME, "a",
			0);
	/* Names are case-sensitive: MR0 is not mr0. */
	assert_one_rail("tcp;ofi_rxm@MR0", "tcp;ofi_rxm", MRAIL_ATTACH_NAME,
			"MR0", 0);

	/* Longer than an interface name can be: domain names may be. */
	repeat(name, 'd', MRAIL_ATTACH_MAX - 1);
	snprintf(text, sizeof(text), "verbs;ofi_rxm@%s", name);
	assert_one_rail(text, "verbs;ofi_rxm", MRAIL_ATTACH_NAME, name, 0);
}

Test(config_valid, domain_names)
{
	assert_one_rail("verbs;ofi_rxm@mlx5_0", "verbs;ofi_rxm",
			MRAIL_ATTACH_NAME, "mlx5_0", 0);
	assert_one_rail("psm3@hfi1_0", "psm3", MRAIL_ATTACH_NAME, "hfi1_0", 0);
	assert_one_rail("efa@rdmap0s6-rdm", "efa", MRAIL_ATTACH_NAME,
			"rdmap0s6-rdm", 0);
	assert_one_rail("cxi@cxi0", "cxi", MRAIL_ATTACH_NAME, "cxi0", 0);
	/* Dots without only digits are fine in a name. */
	assert_one_rail("udp;ofi_rxd@eth0.100", "udp;ofi_rxd",
			MRAIL_ATTACH_NAME, "eth0.100", 0);
}

Test(config_invalid, mistyped_ipv4_is_not_a_name)
{
	assert_refused("udp;ofi_rxd@198.18.1.300", "rail 1",
		       "\"198.18.1.300\" is not a valid IPv4 address");
	assert_refused("tcp;ofi_rxm@mr0,tcp;ofi_rxm@198.18.2", "rail 2",
		       "\"198.18.2\" is not a valid IPv4 address");
}

Test(config_valid, stacks)
{
	char stack[MRAIL_STACK_NAME_MAX], text[256];

	assert_one_rail("udp;ofi_rxd@mr1", "udp;ofi_rxd", MRAIL_ATTACH_NAME,
			"mr1", 0);
	assert_one_rail("sockets@mr1", "sockets", MRAIL_ATTACH_NAME, "mr1", 0);
	assert_one_rail("a@mr1", "a", MRAIL_ATTACH_NAME, "mr1", 0);
	assert_one_rail("_9;x_y;0@mr1", "_9;x_y;0", MRAIL_ATTACH_NAME, "mr1",
			0);

	repeat(stack, 's', MRAIL_STACK_NAME_MAX - 1);
	stack[10] = ';';
	snprintf(text, sizeof(text), "%s@mr0", stack);
	assert_one_rail(text, stack, MRAIL_ATTACH_NAME, "mr0", 0);
}

Test(config_valid, ipv4_address)
{
	struct mrail_rail_config config;
	static const uint8_t expect[4] = { 198, 18, 0, 1 };

	parse_ok("tcp;ofi_rxm@198.18.0.1", &config);
	assert_spec(&config.rails[0], "tcp;ofi_rxm", MRAIL_ATTACH_ADDR,
		    "198.18.0.1", 0);
	cr_assert_eq(config.rails[0].addr.family, AF_INET);
	cr_assert_arr_eq(config.rails[0].addr.bytes, expect, sizeof(expect));
	assert_one_rail("tcp;ofi_rxm@0.0.0.0", "tcp;ofi_rxm", MRAIL_ATTACH_ADDR,
			"0.0.0.0", 0);
}

Test(config_valid, ipv6_address_is_canonical)
{
	struct mrail_rail_config config;

	parse_ok("tcp;ofi_rxm@2001:DB8:0:0::0001", &config);
	assert_spec(&config.rails[0], "tcp;ofi_rxm", MRAIL_ATTACH_ADDR,
		    "2001:db8::1", 0);
	cr_assert_eq(config.rails[0].addr.family, AF_INET6);
	cr_assert_eq(config.rails[0].addr.bytes[15], 1);
	assert_one_rail("tcp;ofi_rxm@::1", "tcp;ofi_rxm", MRAIL_ATTACH_ADDR,
			"::1", 0);
	assert_one_rail("tcp;ofi_rxm@::", "tcp;ofi_rxm", MRAIL_ATTACH_ADDR,
			"::", 0);
	assert_one_rail("tcp;ofi_rxm@::ffff:198.18.0.1", "tcp;ofi_rxm",
			MRAIL_ATTACH_ADDR, "::ffff:198.18.0.1", 0);
	assert_one_rail("tcp;ofi_rxm@fe80::A:b", "tcp;ofi_rxm",
			MRAIL_ATTACH_ADDR, "fe80::a:b", 0);
}

Test(config_valid, ipv4_subnet_clears_host_bits)
{
	struct mrail_rail_config config;
	static const uint8_t expect[4] = { 198, 18, 1, 0 };

	parse_ok("tcp;ofi_rxm@198.18.1.5/24", &config);
	assert_spec(&config.rails[0], "tcp;ofi_rxm", MRAIL_ATTACH_SUBNET,
		    "198.18.1.0/24", 24);
	cr_assert_eq(config.rails[0].addr.family, AF_INET);
	cr_assert_arr_eq(config.rails[0].addr.bytes, expect, sizeof(expect));

	assert_one_rail("tcp;ofi_rxm@198.18.1.0/24", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "198.18.1.0/24", 24);
	assert_one_rail("tcp;ofi_rxm@198.19.7.7/15", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "198.18.0.0/15", 15);
	assert_one_rail("tcp;ofi_rxm@198.18.1.5/32", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "198.18.1.5/32", 32);
	assert_one_rail("tcp;ofi_rxm@198.18.1.255/28", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "198.18.1.240/28", 28);
	assert_one_rail("tcp;ofi_rxm@198.18.1.5/0", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "0.0.0.0/0", 0);
	assert_one_rail("tcp;ofi_rxm@0.0.0.0/0", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "0.0.0.0/0", 0);
	assert_one_rail("tcp;ofi_rxm@198.18.1.5/9", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "198.0.0.0/9", 9);
}

Test(config_valid, ipv6_subnet_clears_host_bits)
{
	struct mrail_rail_config config;

	parse_ok("tcp;ofi_rxm@2001:DB8:1:2:3:4:5:6/64", &config);
	assert_spec(&config.rails[0], "tcp;ofi_rxm", MRAIL_ATTACH_SUBNET,
		    "2001:db8:1:2::/64", 64);
	cr_assert_eq(config.rails[0].addr.family, AF_INET6);
	cr_assert_eq(config.rails[0].addr.bytes[8], 0);

	assert_one_rail("tcp;ofi_rxm@2001:db8::1/128", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "2001:db8::1/128", 128);
	assert_one_rail("tcp;ofi_rxm@2001:db8::1/0", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "::/0", 0);
	assert_one_rail("tcp;ofi_rxm@2001:db8:ffff::/36", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "2001:db8:f000::/36", 36);
	assert_one_rail("tcp;ofi_rxm@fd00::7/33", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "fd00::/33", 33);
	/* An IPv6 prefix may exceed 32; only IPv4 stops there. */
	assert_one_rail("tcp;ofi_rxm@::ffff:198.18.1.5/120", "tcp;ofi_rxm",
			MRAIL_ATTACH_SUBNET, "::ffff:198.18.1.0/120", 120);
}

Test(config_valid, several_rails_keep_their_order)
{
	struct mrail_rail_config config;

	parse_ok("tcp;ofi_rxm@mr0,tcp;ofi_rxm@198.18.1.0/24,"
		 "udp;ofi_rxd@198.18.2.1,verbs;ofi_rxm@2001:db8::1", &config);
	cr_assert_eq(config.count, 4);
	assert_spec(&config.rails[0], "tcp;ofi_rxm", MRAIL_ATTACH_NAME, "mr0",
		    0);
	assert_spec(&config.rails[1], "tcp;ofi_rxm", MRAIL_ATTACH_SUBNET,
		    "198.18.1.0/24", 24);
	assert_spec(&config.rails[2], "udp;ofi_rxd", MRAIL_ATTACH_ADDR,
		    "198.18.2.1", 0);
	assert_spec(&config.rails[3], "verbs;ofi_rxm", MRAIL_ATTACH_ADDR,
		    "2001:db8::1", 0);
}

Test(config_valid, blanks_around_rails_and_commas_are_ignored)
{
	struct mrail_rail_config config;

	parse_ok("  tcp;ofi_rxm@mr0 ,\ttcp;ofi_rxm@198.18.1.5/24\t , "
		 "\t udp;ofi_rxd@mr2 \t", &config);
	cr_assert_eq(config.count, 3);
	assert_spec(&config.rails[0], "tcp;ofi_rxm", MRAIL_ATTACH_NAME, "mr0",
		    0);
	assert_spec(&config.rails[1], "tcp;ofi_rxm", MRAIL_ATTACH_SUBNET,
		    "198.18.1.0/24", 24);
	assert_spec(&config.rails[2], "udp;ofi_rxd", MRAIL_ATTACH_NAME, "mr2",
		    0);
	assert_one_rail(" tcp;ofi_rxm@::1 ", "tcp;ofi_rxm", MRAIL_ATTACH_ADDR,
			"::1", 0);
}

Test(config_valid, same_port_on_another_stack_is_another_rail)
{
	struct mrail_rail_config config;

	parse_ok("tcp;ofi_rxm@mr0,udp;ofi_rxd@mr0,tcp;ofi_rxm@MR0", &config);
	cr_assert_eq(config.count, 3);
	/* Address and /32 subnet differ here; resolution finds the port. */
	parse_ok("tcp;ofi_rxm@198.18.0.1,tcp;ofi_rxm@198.18.0.1/32", &config);
	cr_assert_eq(config.count, 2);
	cr_assert_eq(config.rails[0].kind, MRAIL_ATTACH_ADDR);
	cr_assert_eq(config.rails[1].kind, MRAIL_ATTACH_SUBNET);
}

Test(config_valid, max_rails)
{
	struct mrail_rail_config config;
	char want[32];
	size_t i;

	parse_ok(EIGHT_RAILS, &config);
	cr_assert_eq(config.count, MRAIL_MAX_RAILS);
	for (i = 0; i < config.count; i++) {
		snprintf(want, sizeof(want), "mr%zu", i);
		assert_spec(&config.rails[i], "tcp;ofi_rxm", MRAIL_ATTACH_NAME,
			    want, 0);
	}
}

/*
 * MRAIL_MAX_RAILS rails of maximal stack and name, padded with blanks to
 * exactly len characters.
 */
static void build_long_text(char *text, size_t len)
{
	char stack[MRAIL_STACK_NAME_MAX], name[MRAIL_ATTACH_MAX];
	size_t i, used = 0;

	repeat(stack, 's', MRAIL_STACK_NAME_MAX - 1);
	for (i = 0; i < MRAIL_MAX_RAILS; i++) {
		repeat(name, 'n', MRAIL_ATTACH_MAX - 1);
		name[0] = (char) ('a' + i);
		used += (size_t) sprintf(text + used, "%s%s@%s", i ? "," : "",
					 stack, name);
	}
	cr_assert_leq(used, len);
	memset(text + used, ' ', len - used);
	text[len] = '\0';
}

Test(config_valid, text_of_exactly_the_limit)
{
	struct mrail_rail_config config;
	char text[MRAIL_RAILS_STR_MAX + 2];

	build_long_text(text, MRAIL_RAILS_STR_MAX);
	parse_ok(text, &config);
	cr_assert_eq(config.count, MRAIL_MAX_RAILS);
	cr_assert_eq(strlen(config.rails[7].attach), MRAIL_ATTACH_MAX - 1);
	cr_assert_eq(config.rails[7].attach[0], 'h');
}

/* ---- invalid forms ---- */

Test(config_invalid, empty_text)
{
	assert_refused(NULL, "FI_MRAIL_RAILS is empty");
	assert_refused("", "FI_MRAIL_RAILS is empty");
	assert_refused(" ", "FI_MRAIL_RAILS is empty");
	assert_refused(" \t \t", "FI_MRAIL_RAILS is empty", "tcp;ofi_rxm@mr0");
}

Test(config_invalid, empty_rails)
{
	assert_refused(",", "rail 1 \"\": empty rail");
	assert_refused(" , ", "rail 1 \"\": empty rail");
	assert_refused(",tcp;ofi_rxm@mr0", "rail 1 \"\": empty rail");
	assert_refused("tcp;ofi_rxm@mr0,", "rail 2 \"\": empty rail");
	assert_refused("tcp;ofi_rxm@mr0, \t", "rail 2 \"\": empty rail");
	assert_refused("tcp;ofi_rxm@mr0,,tcp;ofi_rxm@mr1",
		       "rail 2 \"\": empty rail");
	assert_refused("tcp;ofi_rxm@mr0, ,tcp;ofi_rxm@mr1",
		       "rail 2 \"\": empty rail");
}

Test(config_invalid, missing_at)
{
	assert_refused("tcp;ofi_rxm", "rail 1 \"tcp;ofi_rxm\"", "no '@'",
		       "stack@attach");
	assert_refused("mr0", "rail 1 \"mr0\"", "no '@'");
	assert_refused("tcp;ofi_rxm@mr0,tcp;ofi_rxm mr1",
		       "rail 2 \"tcp;ofi_rxm mr1\"", "no '@'");
	/* ',' splits rails even inside what was meant as a stack. */
	assert_refused("tcp,ofi_rxm@mr0", "rail 1 \"tcp\"", "no '@'");
}

Test(config_invalid, more_than_one_at)
{
	assert_refused("tcp;ofi_rxm@mr0@mr1", "rail 1 \"tcp;ofi_rxm@mr0@mr1\"",
		       "more than one '@'");
	assert_refused("tcp;ofi_rxm@@mr0", "more than one '@'");
}

Test(config_invalid, empty_stack)
{
	assert_refused("@mr0", "rail 1 \"@mr0\"",
		       "no provider stack before '@'");
	assert_refused("tcp;ofi_rxm@mr0, @mr1", "rail 2 \"@mr1\"",
		       "no provider stack");
}

Test(config_invalid, empty_attach)
{
	assert_refused("tcp;ofi_rxm@", "rail 1 \"tcp;ofi_rxm@\"",
		       "nothing after '@'");
	assert_refused("tcp;ofi_rxm@ ,tcp;ofi_rxm@mr1",
		       "rail 1 \"tcp;ofi_rxm@\"", "nothing after '@'");
}

Test(config_invalid, stack_characters)
{
	assert_refused("TCP;ofi_rxm@mr0", "rail 1 \"TCP;ofi_rxm@mr0\"",
		       "'T' at position 1", "lower case");
	assert_refused("tcp ;ofi_rxm@mr0", "' ' at position 4");
	assert_refused("tcp; ofi_rxm@mr0", "' ' at position 5");
	assert_refused("tcp;ofi_rxm @mr0", "' ' at position 12");
	assert_refused("tcp\t;ofi_rxm@mr0", "0x09 at position 4",
		       "rail 1 \"tcp\\x09;ofi_rxm@mr0\"");
	assert_refused("tcp;ofi-rxm@mr0", "'-' at position 8",
		       "a-z, 0-9 and '_'");
	assert_refused("tcp.ofi_rxm@mr0", "'.' at position 4");
	assert_refused("tcp\x01@mr0", "0x01 at position 4",
		       "\"tcp\\x01@mr0\"");
	assert_refused("t\xc3\xa9p@mr0", "0xc3 at position 2");
	assert_refused("tcp\"@mr0", "'\"' at position 4", "\"tcp\\\"@mr0\"");
}

Test(config_invalid, stack_empty_provider_name)
{
	assert_refused(";tcp@mr0", "rail 1 \";tcp@mr0\"", "\";tcp\"",
		       "empty provider name");
	assert_refused("tcp;@mr0", "\"tcp;\"", "empty provider name");
	assert_refused("tcp;;ofi_rxm@mr0", "\"tcp;;ofi_rxm\"",
		       "empty provider name");
	assert_refused(";@mr0", "empty provider name");
	assert_refused(";;@mr0", "empty provider name");
}

Test(config_invalid, stack_too_long)
{
	char stack[MRAIL_STACK_NAME_MAX + 8], text[256];

	repeat(stack, 's', MRAIL_STACK_NAME_MAX);
	snprintf(text, sizeof(text), "%s@mr0", stack);
	assert_refused(text, "rail 1 \"ssss",
		       "provider stack is 64 characters long", "at most 63");
}

Test(config_invalid, subnet_missing_parts)
{
	assert_refused("tcp;ofi_rxm@/24", "rail 1 \"tcp;ofi_rxm@/24\"",
		       "subnet \"/24\" has no address before '/'");
	assert_refused("tcp;ofi_rxm@198.18.1.0/",
		       "subnet \"198.18.1.0/\" has no prefix length after '/'");
	assert_refused("tcp;ofi_rxm@/", "no address before '/'");
}

Test(config_invalid, subnet_address)
{
	assert_refused("tcp;ofi_rxm@198.18.1/24",
		       "rail 1 \"tcp;ofi_rxm@198.18.1/24\"",
		       "subnet address \"198.18.1\" is not a numeric IPv4 "
		       "or IPv6");
	assert_refused("tcp;ofi_rxm@mr0/24", "subnet address \"mr0\"");
	assert_refused("tcp;ofi_rxm@198.18.1.0 /24",
		       "subnet address \"198.18.1.0 \"");
	assert_refused("tcp;ofi_rxm@ 198.18.1.0/24",
		       "subnet address \" 198.18.1.0\"");
	assert_refused("tcp;ofi_rxm@[::1]/128", "subnet address \"[::1]\"");
	assert_refused("tcp;ofi_rxm@198.18.1.256/24",
		       "subnet address \"198.18.1.256\"");
	assert_refused("tcp;ofi_rxm@fe80::1%mr0/64",
		       "subnet address \"fe80::1%mr0\"");
}

Test(config_invalid, prefix_out_of_range)
{
	char err[MRAIL_ERR_MAX];
	struct mrail_rail_config config;

	cr_assert_eq(mrail_rail_config_parse("tcp;ofi_rxm@198.18.0.0/24,"
					     "tcp;ofi_rxm@198.18.1.0/33",
					     &config, err, sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err,
			 "rail 2 \"tcp;ofi_rxm@198.18.1.0/33\": prefix length "
			 "33 is out of range for IPv4 (0..32)");

	assert_refused("tcp;ofi_rxm@2001:db8::/129",
		       "prefix length 129 is out of range for IPv6 (0..128)");
	assert_refused("tcp;ofi_rxm@198.18.1.0/128",
		       "prefix length 128 is out of range for IPv4 (0..32)");
	assert_refused("tcp;ofi_rxm@198.18.1.0/1000",
		       "prefix length 1000 is out of range for IPv4");
	assert_refused(
		"tcp;ofi_rxm@::/99999999999999999999999",
		"prefix length 99999999999999999999999 is out of range for "
		"IPv6");
}

Test(config_invalid, prefix_not_decimal)
{
	assert_refused("tcp;ofi_rxm@198.18.1.0/+24",
		       "rail 1 \"tcp;ofi_rxm@198.18.1.0/+24\"",
		       "prefix length \"+24\" is not a decimal number",
		       "0..32");
	assert_refused("tcp;ofi_rxm@198.18.1.0/-1",
		       "prefix length \"-1\" is not a decimal");
	assert_refused("tcp;ofi_rxm@198.18.1.0/ 24",
		       "prefix length \" 24\" is not a decimal");
	assert_refused("tcp;ofi_rxm@198.18.1.0/24 x", "prefix length \"24 x\"");
	assert_refused("tcp;ofi_rxm@198.18.1.0/0x18", "prefix length \"0x18\"");
	assert_refused("tcp;ofi_rxm@198.18.1.0/24a", "prefix length \"24a\"");
	assert_refused("tcp;ofi_rxm@198.18.1.0/2 4", "prefix length \"2 4\"");
	assert_refused("tcp;ofi_rxm@198.18.1.0/24/8", "prefix length \"24/8\"");
	assert_refused("tcp;ofi_rxm@2001:db8::/six4", "prefix length \"six4\"",
		       "0..128");
}

Test(config_invalid, prefix_leading_zero)
{
	assert_refused("tcp;ofi_rxm@198.18.1.0/024",
		       "prefix length \"024\" has a leading zero (write 24)");
	assert_refused("tcp;ofi_rxm@198.18.1.0/00",
		       "prefix length \"00\" has a leading zero (write 0)");
}

Test(config_invalid, name_characters)
{
	assert_refused("tcp;ofi_rxm@mr 0", "rail 1 \"tcp;ofi_rxm@mr 0\"",
		       "' ' at position 3",
		       "letters, digits, '_', '.', ':' and '-'");
	assert_refused("tcp;ofi_rxm@mr0!", "'!' at position 4");
	assert_refused("tcp;ofi_rxm@ mr0", "rail 1 \"tcp;ofi_rxm@ mr0\"",
		       "' ' at position 1");
	assert_refused("tcp;ofi_rxm@fe80::1%mr0", "'%' at position 8");
	assert_refused("tcp;ofi_rxm@[::1]", "'[' at position 1");
	assert_refused("tcp;ofi_rxm@mr0\n", "0x0a at position 4",
		       "\"tcp;ofi_rxm@mr0\\x0a\"");
	assert_refused("tcp;ofi_rxm@m\xc3\xa9", "0xc3 at position 2");
	assert_refused("tcp;ofi_rxm@mr0;x", "';' at position 4");
}

Test(config_invalid, name_too_long)
{
	char name[MRAIL_ATTACH_MAX + 8], text[256];

	repeat(name, 'n', MRAIL_ATTACH_MAX);
	snprintf(text, sizeof(text), "tcp;ofi_rxm@%s", name);
	assert_refused(text, "rail 1 \"tcp;ofi_rxm@nnnn",
		       "interface or domain name is 64 characters long",
		       "at most 63");
}

Test(config_invalid, duplicate_rails_name_both_positions)
{
	assert_refused("tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr0",
		       "rail 2 \"tcp;ofi_rxm@mr0\"", "same rail as rail 1",
		       "tcp;ofi_rxm@mr0");
	assert_refused("tcp;ofi_rxm@198.18.1.5/24,tcp;ofi_rxm@mr1,"
		       "tcp;ofi_rxm@198.18.1.7/24",
		       "rail 3 \"tcp;ofi_rxm@198.18.1.7/24\"",
		       "same rail as rail 1", "tcp;ofi_rxm@198.18.1.0/24");
	assert_refused("verbs;ofi_rxm@2001:db8::1, verbs;ofi_rxm@2001:DB8:0::1",
		       "rail 2 \"verbs;ofi_rxm@2001:DB8:0::1\"",
		       "same rail as rail 1", "verbs;ofi_rxm@2001:db8::1");
	assert_refused("tcp;ofi_rxm@::/0,tcp;ofi_rxm@2001:db8::/0",
		       "rail 2", "same rail as rail 1", "::/0");
}

Test(config_invalid, too_many_rails)
{
	assert_refused(EIGHT_RAILS ",tcp;ofi_rxm@mr8",
		       "rail 9 \"tcp;ofi_rxm@mr8\"", "more than 8 rails",
		       "at most 8");
	/* A ',' at the end is the real mistake, not the count. */
	assert_refused(EIGHT_RAILS ",", "rail 9 \"\": empty rail");
}

Test(config_invalid, text_too_long)
{
	char text[MRAIL_RAILS_STR_MAX + 2];

	build_long_text(text, MRAIL_RAILS_STR_MAX + 1);
	assert_refused(text, "FI_MRAIL_RAILS is longer than 1024 characters");
}

Test(config_invalid, long_rail_text_is_cut_so_the_reason_fits)
{
	char text[512], name[300];

	repeat(name, 'n', 200);
	snprintf(text, sizeof(text), "tcp;ofi_rxm@%s", name);
	assert_refused(text, "rail 1 \"tcp;ofi_rxm@nnn", "...\"",
		       "interface or domain name is 200 characters long");
}

Test(config_invalid, first_error_wins)
{
	assert_refused("tcp;ofi_rxm@mr0,TCP@mr1,@mr2", "rail 2 \"TCP@mr1\"");
}

/* ---- the caller's error buffer ---- */

Test(config_err, null_or_empty_buffer_is_not_written)
{
	struct mrail_rail_config config;
	char err[8] = "unused";

	cr_assert_eq(mrail_rail_config_parse("bad", &config, NULL, 100),
		     -EINVAL);
	cr_assert_eq(mrail_rail_config_parse("bad", &config, err, 0), -EINVAL);
	cr_assert_str_eq(err, "unused");
}

Test(config_err, short_buffer_is_cut_and_terminated)
{
	struct mrail_rail_config config;
	char err[12];

	memset(err, 'x', sizeof(err));
	cr_assert_eq(mrail_rail_config_parse("tcp;ofi_rxm", &config, err, 10),
		     -EINVAL);
	cr_assert_str_eq(err, "rail 1 \"t");
	cr_assert_eq(err[10], 'x', "nothing past err_len");

	cr_assert_eq(mrail_rail_config_parse("", &config, err, 1), -EINVAL);
	cr_assert_str_eq(err, "");
}

Test(config_err, null_config_is_refused)
{
	char err[MRAIL_ERR_MAX];

	cr_assert_eq(mrail_rail_config_parse("tcp;ofi_rxm@mr0", NULL, err,
					     sizeof(err)), -EINVAL);
	cr_assert(strlen(err) > 0);
}

/* ---- formatting ---- */

Test(spec_format, canonical_text_parses_back_to_the_same_rail)
{
	static const char *const texts[] = {
		"tcp;ofi_rxm@mr0",
		"tcp;ofi_rxm@198.18.1.5/24",
		"tcp;ofi_rxm@198.18.0.1",
		"verbs;ofi_rxm@2001:DB8::1:0:0:1",
		"udp;ofi_rxd@fd00::77/64",
		"psm3@hfi1_0",
		"tcp;ofi_rxm@0.0.0.0/0",
		"tcp;ofi_rxm@::/0",
	};
	static const char *const canonical[] = {
		"tcp;ofi_rxm@mr0",
		"tcp;ofi_rxm@198.18.1.0/24",
		"tcp;ofi_rxm@198.18.0.1",
		"verbs;ofi_rxm@2001:db8::1:0:0:1",
		"udp;ofi_rxd@fd00::/64",
		"psm3@hfi1_0",
		"tcp;ofi_rxm@0.0.0.0/0",
		"tcp;ofi_rxm@::/0",
	};
	struct mrail_rail_config first, again;
	char buf[MRAIL_STACK_NAME_MAX + MRAIL_ATTACH_MAX];
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		parse_ok(texts[i], &first);
		cr_assert_eq(mrail_rail_spec_format(&first.rails[0], buf,
						    sizeof(buf)), 0);
		cr_assert_str_eq(buf, canonical[i]);
		parse_ok(buf, &again);
		cr_assert_eq(again.count, 1);
		cr_assert_str_eq(again.rails[0].stack, first.rails[0].stack);
		cr_assert_str_eq(again.rails[0].attach, first.rails[0].attach);
		cr_assert_eq(again.rails[0].kind, first.rails[0].kind);
		cr_assert_eq(again.rails[0].prefix_len,
			     first.rails[0].prefix_len);
		cr_assert(mrail_ip_equal(&again.rails[0].addr,
					 &first.rails[0].addr) ||
			  first.rails[0].kind == MRAIL_ATTACH_NAME);
	}
}

Test(spec_format, longest_rail_fits_stack_plus_attach_max)
{
	struct mrail_rail_config config;
	char text[MRAIL_RAILS_STR_MAX + 2];
	char buf[MRAIL_STACK_NAME_MAX + MRAIL_ATTACH_MAX];

	build_long_text(text, MRAIL_RAILS_STR_MAX);
	parse_ok(text, &config);
	cr_assert_eq(mrail_rail_spec_format(&config.rails[0], buf, sizeof(buf)),
		     0);
	cr_assert_eq(strlen(buf), sizeof(buf) - 1);
}

Test(spec_format, short_buffer)
{
	struct mrail_rail_config config;
	char buf[32];

	parse_ok("tcp;ofi_rxm@mr0", &config);
	cr_assert_eq(mrail_rail_spec_format(&config.rails[0], buf, 16), 0);
	cr_assert_str_eq(buf, "tcp;ofi_rxm@mr0");
	cr_assert_eq(mrail_rail_spec_format(&config.rails[0], buf, 15),
		     -ENOSPC);
	cr_assert_str_eq(buf, "tcp;ofi_rxm@mr");
	cr_assert_eq(mrail_rail_spec_format(&config.rails[0], buf, 0), -ENOSPC);
	cr_assert_eq(mrail_rail_spec_format(NULL, buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(mrail_rail_spec_format(&config.rails[0], NULL, 4),
		     -EINVAL);
}
