/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/addr_codec.c: the mrail address blob is exchanged
 * between hosts, so the decoder is fed every malformed form and a stream of
 * random mutations, always from buffers of exactly the length given, so that
 * AddressSanitizer catches any read past it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <criterion/criterion.h>
#include <rdma/fabric.h>

#include "test_rng.h"

#include "addr_codec.h"

_Static_assert(MRAIL_ADDR_FORMAT_SOCKADDR_IN == FI_SOCKADDR_IN,
	       "the codec's IPv4 format is libfabric's");
_Static_assert(MRAIL_ADDR_FORMAT_SOCKADDR_IN6 == FI_SOCKADDR_IN6,
	       "the codec's IPv6 format is libfabric's");

#define FMT_IN		MRAIL_ADDR_FORMAT_SOCKADDR_IN
#define FMT_IN6		MRAIL_ADDR_FORMAT_SOCKADDR_IN6
#define IPV4_RAIL_LEN	7	/* descriptor + 4 + 2 */
#define IPV6_RAIL_LEN	19	/* descriptor + 16 + 2 */
#define RAW_RAIL_FIXED	6	/* descriptor + format + length */

/* ---- building addresses ---- */

static void set_raw_rail(struct mrail_rail_addr *rail, const char *stack,
			 uint32_t format, uint16_t len, uint8_t seed)
{
	uint16_t i;

	cr_assert_lt(strlen(stack), sizeof(rail->stack));
	memset(rail, 0, sizeof(*rail));
	strcpy(rail->stack, stack);
	rail->format = format;
	rail->len = len;
	for (i = 0; i < len && i < sizeof(rail->bytes); i++)
		rail->bytes[i] = (uint8_t) (seed + i * 7);
}

static void set_ipv4_rail(struct mrail_rail_addr *rail, const char *stack,
			  const char *ip, uint16_t port)
{
	struct sockaddr_in sin;

	memset(rail, 0, sizeof(*rail));
	memset(&sin, 0, sizeof(sin));
	cr_assert_lt(strlen(stack), sizeof(rail->stack));
	strcpy(rail->stack, stack);
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	rail->format = FMT_IN;
	rail->len = sizeof(sin);
	memcpy(rail->bytes, &sin, sizeof(sin));
}

static void set_ipv6_rail(struct mrail_rail_addr *rail, const char *stack,
			  const char *ip, uint16_t port, uint32_t flowinfo,
			  uint32_t scope)
{
	struct sockaddr_in6 sin6;

	memset(rail, 0, sizeof(*rail));
	memset(&sin6, 0, sizeof(sin6));
	cr_assert_lt(strlen(stack), sizeof(rail->stack));
	strcpy(rail->stack, stack);
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	sin6.sin6_flowinfo = htonl(flowinfo);
	sin6.sin6_scope_id = scope;
	cr_assert_eq(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1);
	rail->format = FMT_IN6;
	rail->len = sizeof(sin6);
	memcpy(rail->bytes, &sin6, sizeof(sin6));
}

/* IPv4 rails as the testbed has them, alternating over two stacks so that
 * the rail order matters. */
static void make_addr(struct mrail_addr *addr, unsigned rails, uint8_t flags)
{
	char ip[INET_ADDRSTRLEN];
	unsigned i;

	memset(addr, 0, sizeof(*addr));
	addr->rail_count = (uint8_t) rails;
	addr->flags = flags;
	for (i = 0; i < rails && i < MRAIL_MAX_RAILS; i++) {
		snprintf(ip, sizeof(ip), "198.18.%u.2", i + 1);
		set_ipv4_rail(&addr->rails[i],
			      i % 2 ? "udp;ofi_rxd" : "tcp;ofi_rxm", ip,
			      (uint16_t) (4711 + i));
	}
}

/* Every form and both ways of naming a stack in one address. */
static void make_mixed_addr(struct mrail_addr *addr)
{
	make_addr(addr, 6, 0);
	set_ipv4_rail(&addr->rails[0], "tcp;ofi_rxm", "198.18.1.2", 4711);
	set_ipv6_rail(&addr->rails[1], "verbs;ofi_rxm", "fd00::2", 4712, 0, 0);
	set_ipv4_rail(&addr->rails[2], "tcp;ofi_mrx", "198.18.3.2", 65535);
	set_ipv6_rail(&addr->rails[3], "udp;ofi_rxd", "fe80::1", 0, 0, 3);
	set_raw_rail(&addr->rails[4], "psm3", 0x0000000b, 24, 0x40);
	set_raw_rail(&addr->rails[5], "foo;bar_baz", 0xfedcba98u, 5, 0x90);
}

/* The largest address there can be: every field at its maximum. */
static void make_max_addr(struct mrail_addr *addr)
{
	char stack[MRAIL_STACK_NAME_MAX];
	unsigned i;

	memset(addr, 0, sizeof(*addr));
	addr->rail_count = MRAIL_MAX_RAILS;
	for (i = 0; i < MRAIL_MAX_RAILS; i++) {
		memset(stack, 'a' + i, MRAIL_STACK_NAME_MAX - 1);
		stack[MRAIL_STACK_NAME_MAX - 1] = '\0';
		stack[5] = ';';
		set_raw_rail(&addr->rails[i], stack, 0xfedcba98u,
			     MRAIL_RAIL_ADDR_MAX, (uint8_t) i);
	}
}

static size_t encode_ok(const struct mrail_addr *addr, uint8_t *buf, size_t cap)
{
	size_t need = mrail_addr_encoded_len(addr);
	ssize_t len;

	cr_assert_gt(need, 0, "a valid address has an encoded length");
	cr_assert_leq(need, cap);
	len = mrail_addr_encode(addr, buf, cap);
	cr_assert_eq(len, (ssize_t) need,
		     "encode wrote %zd, encoded_len said %zu", len, need);
	return (size_t) len;
}

/* Decodes from a heap copy of exactly len bytes: ASan sees any overread. */
static int decode_exact(const uint8_t *bytes, size_t len,
			struct mrail_addr *addr, char *err, size_t err_len)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	cr_assert_not_null(copy);
	memcpy(copy, bytes, len);
	ret = mrail_addr_decode(copy, len, addr, err, err_len);
	free(copy);
	return ret;
}

static void assert_addr_equal(const struct mrail_addr *a,
			      const struct mrail_addr *b)
{
	unsigned i;

	cr_assert_eq(a->rail_count, b->rail_count);
	cr_assert_eq(a->flags, b->flags);
	for (i = 0; i < a->rail_count; i++) {
		cr_assert_str_eq(a->rails[i].stack, b->rails[i].stack,
				 "rail %u", i);
		cr_assert_eq(a->rails[i].format, b->rails[i].format, "rail %u",
			     i);
		cr_assert_eq(a->rails[i].len, b->rails[i].len, "rail %u", i);
		cr_assert_arr_eq(a->rails[i].bytes, b->rails[i].bytes,
				 a->rails[i].len, "rail %u", i);
	}
	/* Both are zero past what they carry, so the whole structs agree. */
	cr_assert_arr_eq(a, b, sizeof(*a));
}

/* Returns the encoded length. */
static size_t assert_round_trip(const struct mrail_addr *addr)
{
	uint8_t blob[MRAIL_ADDR_MAX_LEN], again[MRAIL_ADDR_MAX_LEN];
	struct mrail_addr decoded;
	char err[MRAIL_ERR_MAX] = "";
	size_t len;
	int ret;

	len = encode_ok(addr, blob, sizeof(blob));
	ret = decode_exact(blob, len, &decoded, err, sizeof(err));
	cr_assert_eq(ret, 0, "round trip decode failed: %s", err);
	assert_addr_equal(&decoded, addr);
	cr_assert_eq(encode_ok(&decoded, again, sizeof(again)), len);
	cr_assert_arr_eq(again, blob, len);
	return len;
}

/* ---- round trips ---- */

Test(addr_round_trip, one_to_eight_ipv4_rails)
{
	struct mrail_addr addr;
	unsigned rails;
	size_t len;

	for (rails = 1; rails <= MRAIL_MAX_RAILS; rails++) {
		make_addr(&addr, rails, 0);
		len = assert_round_trip(&addr);
		cr_assert_eq(len, MRAIL_ADDR_HEADER_LEN + rails * IPV4_RAIL_LEN,
			     "%u rails", rails);
		for (unsigned i = 0; i < rails; i++)
			cr_assert_eq(mrail_addr_rail_form(&addr.rails[i]),
				     MRAIL_ADDR_FORM_IPV4);
	}
}

/* What the format is for: MPI keeps endpoint names in FI_NAME_MAX bytes. */
Test(addr_round_trip, ipv4_rails_fit_fi_name_max)
{
	struct mrail_addr addr;

	make_addr(&addr, 4, 0);
	cr_assert_leq(mrail_addr_encoded_len(&addr), FI_NAME_MAX);
	make_addr(&addr, MRAIL_MAX_RAILS, 0);
	cr_assert_leq(mrail_addr_encoded_len(&addr), FI_NAME_MAX);
	make_addr(&addr, 1, MRAIL_ADDR_FLAG_PARTIAL);
	cr_assert_leq(mrail_addr_encoded_len(&addr), FI_NAME_MAX);
}

Test(addr_round_trip, mixed_stacks_and_forms)
{
	struct mrail_addr addr;
	size_t len;

	make_mixed_addr(&addr);
	len = assert_round_trip(&addr);
	cr_assert_eq(len, MRAIL_ADDR_HEADER_LEN +
		     IPV4_RAIL_LEN +
		     IPV6_RAIL_LEN +
		     IPV4_RAIL_LEN + 1 + strlen("tcp;ofi_mrx") +
		     RAW_RAIL_FIXED + sizeof(struct sockaddr_in6) +
		     RAW_RAIL_FIXED + 24 +
		     RAW_RAIL_FIXED + 1 + strlen("foo;bar_baz") + 5);
}

Test(addr_round_trip, ipv6_without_scope_is_compact)
{
	struct mrail_addr addr;

	make_addr(&addr, 2, 0);
	set_ipv6_rail(&addr.rails[0], "tcp;ofi_rxm", "2001:db8::1", 4711, 0, 0);
	set_ipv6_rail(&addr.rails[1], "udp;ofi_rxd", "::", 0, 0, 0);
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_IPV6);
	cr_assert_eq(assert_round_trip(&addr),
		     MRAIL_ADDR_HEADER_LEN + 2 * IPV6_RAIL_LEN);
}

/* Whatever a compact form would not give back byte for byte goes raw. */
Test(addr_round_trip, socket_addresses_a_compact_form_cannot_carry)
{
	struct mrail_addr addr;
	struct sockaddr_in sin;

	make_addr(&addr, 1, 0);
	set_ipv6_rail(&addr.rails[0], "tcp;ofi_rxm", "fe80::1", 1, 0, 2);
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_RAW,
		     "IPv6 with a scope");
	cr_assert_eq(assert_round_trip(&addr), MRAIL_ADDR_HEADER_LEN +
		     RAW_RAIL_FIXED + sizeof(struct sockaddr_in6));

	set_ipv6_rail(&addr.rails[0], "tcp;ofi_rxm", "fe80::1", 1, 0x12345, 0);
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_RAW,
		     "IPv6 with a flow label");
	assert_round_trip(&addr);

	set_ipv4_rail(&addr.rails[0], "tcp;ofi_rxm", "198.18.1.1", 7);
	addr.rails[0].bytes[offsetof(struct sockaddr_in, sin_zero) + 3] = 1;
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_RAW,
		     "IPv4 with padding that is not zero");
	assert_round_trip(&addr);

	set_ipv4_rail(&addr.rails[0], "tcp;ofi_rxm", "198.18.1.1", 7);
	addr.rails[0].format = FI_SOCKADDR;
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_RAW,
		     "a sockaddr_in of format FI_SOCKADDR");
	assert_round_trip(&addr);

	set_ipv4_rail(&addr.rails[0], "tcp;ofi_rxm", "198.18.1.1", 7);
	addr.rails[0].len = sizeof(struct sockaddr_in6);
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_RAW,
		     "a sockaddr_in with a longer length");
	assert_round_trip(&addr);

	set_ipv4_rail(&addr.rails[0], "tcp;ofi_rxm", "198.18.1.1", 7);
	memcpy(&sin, addr.rails[0].bytes, sizeof(sin));
	sin.sin_family = AF_INET6;
	memcpy(addr.rails[0].bytes, &sin, sizeof(sin));
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_RAW,
		     "format FI_SOCKADDR_IN with another family");
	assert_round_trip(&addr);

	set_ipv4_rail(&addr.rails[0], "tcp;ofi_rxm", "198.18.1.1", 7);
	addr.rails[0].format = FMT_IN6;
	cr_assert_eq(mrail_addr_rail_form(&addr.rails[0]), MRAIL_ADDR_FORM_RAW,
		     "a sockaddr_in said to be FI_SOCKADDR_IN6");
	assert_round_trip(&addr);
}

Test(addr_round_trip, every_known_stack_by_index)
{
	struct mrail_addr addr;
	const char *name;
	unsigned i, j;

	cr_assert_geq(mrail_addr_stack_count(), 2);
	cr_assert_leq(mrail_addr_stack_count(), MRAIL_ADDR_STACK_MASK);
	cr_assert_null(mrail_addr_stack_name(0));
	cr_assert_null(mrail_addr_stack_name(mrail_addr_stack_count() + 1));
	cr_assert_str_eq(mrail_addr_stack_name(1), "tcp;ofi_rxm");
	cr_assert_str_eq(mrail_addr_stack_name(2), "udp;ofi_rxd");
	for (i = 1; i <= mrail_addr_stack_count(); i++) {
		name = mrail_addr_stack_name(i);
		cr_assert_not_null(name);
		cr_assert_lt(strlen(name), MRAIL_STACK_NAME_MAX);
		cr_assert_eq(mrail_addr_stack_index(name), i, "%s", name);
		for (j = 1; j < i; j++)
			cr_assert_str_neq(mrail_addr_stack_name(j), name);
		make_addr(&addr, 1, 0);
		memset(addr.rails[0].stack, 0, sizeof(addr.rails[0].stack));
		strcpy(addr.rails[0].stack, name);
		/* A table name the decoder refused would fail here. */
		cr_assert_eq(assert_round_trip(&addr),
			     MRAIL_ADDR_HEADER_LEN + IPV4_RAIL_LEN, "%s", name);
	}
	cr_assert_eq(mrail_addr_stack_index("tcp;ofi_rx"), 0);
	cr_assert_eq(mrail_addr_stack_index("tcp;ofi_rxm;x"), 0);
	cr_assert_eq(mrail_addr_stack_index(NULL), 0);
}

Test(addr_round_trip, largest_address_is_max_len)
{
	struct mrail_addr addr;

	make_max_addr(&addr);
	cr_assert_eq(mrail_addr_encoded_len(&addr), MRAIL_ADDR_MAX_LEN);
	assert_round_trip(&addr);
}

Test(addr_round_trip, partial)
{
	struct mrail_addr addr;

	make_addr(&addr, 1, MRAIL_ADDR_FLAG_PARTIAL);
	assert_round_trip(&addr);
}

Test(addr_round_trip, shortest_fields)
{
	struct mrail_addr addr;

	make_addr(&addr, 1, 0);
	set_raw_rail(&addr.rails[0], "a", 0, 1, 0);
	cr_assert_eq(assert_round_trip(&addr),
		     MRAIL_ADDR_HEADER_LEN + RAW_RAIL_FIXED + 1 + 1 + 1);
}

Test(addr_round_trip, every_stack_character)
{
	struct mrail_addr addr;

	make_addr(&addr, 2, 0);
	set_raw_rail(&addr.rails[0], "abcdefghijklmnopqrstuvwxyz;0123456789_",
		     7, 4, 1);
	set_raw_rail(&addr.rails[1], "_;_", 8, 4, 2);
	assert_round_trip(&addr);
}

/* Random valid addresses: every combination of rails, stacks and forms. */
Test(addr_round_trip, random_valid_addresses)
{
	static const char *const inline_stacks[] = {
		"x", "tcp;ofi_mrx", "a;b;c", "ofi_rxm", "tcp;ofi_rxm;ofi_hook",
	};
	struct mrail_addr addr;
	uint64_t state = 0x9e3779b97f4a7c15ull;
	char ip[INET6_ADDRSTRLEN];
	unsigned round, i, count;
	uint16_t len;

	for (round = 0; round < 3000; round++) {
		count = 1 + (unsigned) test_rng_below(&state, MRAIL_MAX_RAILS);
		make_addr(&addr, count, 0);
		for (i = 0; i < count; i++) {
			const char *stack = test_rng_below(&state, 3) ?
				mrail_addr_stack_name(1 + (unsigned) test_rng_below(
					&state, mrail_addr_stack_count())) :
				inline_stacks[test_rng_below(&state, 5)];

			switch (test_rng_below(&state, 3)) {
			case 0:
				snprintf(ip, sizeof(ip), "%u.%u.%u.%u",
					 (unsigned) test_rng_below(&state, 256),
					 (unsigned) test_rng_below(&state, 256),
					 (unsigned) test_rng_below(&state, 256),
					 (unsigned) test_rng_below(&state, 256));
				set_ipv4_rail(&addr.rails[i], stack, ip,
					      (uint16_t) test_rng_next(&state));
				break;
			case 1:
				snprintf(ip, sizeof(ip), "fd%02x::%x:%x",
					 (unsigned) test_rng_below(&state, 256),
					 (unsigned) test_rng_below(&state, 65536),
					 (unsigned) test_rng_below(&state, 65536));
				set_ipv6_rail(&addr.rails[i], stack, ip,
					      (uint16_t) test_rng_next(&state),
					      0, (uint32_t) test_rng_below(&state, 2));
				break;
			default:
				len = (uint16_t) (1 + test_rng_below(
					&state, MRAIL_RAIL_ADDR_MAX));
				set_raw_rail(&addr.rails[i], stack,
					     (uint32_t) test_rng_next(&state), len,
					     (uint8_t) test_rng_next(&state));
			}
		}
		assert_round_trip(&addr);
	}
}

/* ---- exact layout ---- */

Test(addr_layout, ipv4_rails_by_stack_index)
{
	static const uint8_t expect[] = {
		/* header: magic, version, rail count, flags */
		'm', 'r', 'a', MRAIL_ADDR_VERSION, 2, 0,
		/* rail 1: IPv4 form, stack 1; address; port 4711 */
		0x21, 198, 18, 1, 2, 0x12, 0x67,
		/* rail 2: IPv4 form, stack 2 */
		0x22, 198, 18, 2, 2, 0x12, 0x68,
	};
	struct mrail_addr addr, decoded;
	uint8_t blob[64];
	char err[MRAIL_ERR_MAX];

	make_addr(&addr, 2, 0);
	cr_assert_eq(encode_ok(&addr, blob, sizeof(blob)), sizeof(expect));
	cr_assert_arr_eq(blob, expect, sizeof(expect));
	cr_assert_eq(decode_exact(expect, sizeof(expect), &decoded, err,
				  sizeof(err)), 0, "%s", err);
	assert_addr_equal(&decoded, &addr);
}

Test(addr_layout, ipv6_rail)
{
	static const uint8_t expect[] = {
		'm', 'r', 'a', MRAIL_ADDR_VERSION, 1, 0,
		/* IPv6 form, stack 3 (verbs;ofi_rxm); 2001:db8::7; port 258 */
		0x43, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x07, 0x01, 0x02,
	};
	struct mrail_addr addr, decoded;
	uint8_t blob[64];
	char err[MRAIL_ERR_MAX];

	make_addr(&addr, 1, 0);
	set_ipv6_rail(&addr.rails[0], "verbs;ofi_rxm", "2001:db8::7", 258, 0, 0);
	cr_assert_eq(encode_ok(&addr, blob, sizeof(blob)), sizeof(expect));
	cr_assert_arr_eq(blob, expect, sizeof(expect));
	cr_assert_eq(decode_exact(expect, sizeof(expect), &decoded, err,
				  sizeof(err)), 0, "%s", err);
	assert_addr_equal(&decoded, &addr);
}

Test(addr_layout, inline_stack_and_raw_address)
{
	static const uint8_t expect[] = {
		'm', 'r', 'a', MRAIL_ADDR_VERSION, 1, MRAIL_ADDR_FLAG_PARTIAL,
		/* raw form, inline stack: name length, name */
		0x60, 3, 't', 'c', 'x',
		/* format, address length, address */
		0x01, 0x02, 0x03, 0x04,
		0x03,
		0xaa, 0xbb, 0xcc,
	};
	struct mrail_addr addr, decoded;
	uint8_t blob[64];
	char err[MRAIL_ERR_MAX];

	memset(&addr, 0, sizeof(addr));
	addr.rail_count = 1;
	addr.flags = MRAIL_ADDR_FLAG_PARTIAL;
	strcpy(addr.rails[0].stack, "tcx");
	addr.rails[0].format = 0x04030201;
	addr.rails[0].len = 3;
	addr.rails[0].bytes[0] = 0xaa;
	addr.rails[0].bytes[1] = 0xbb;
	addr.rails[0].bytes[2] = 0xcc;
	/* Bytes past len or past the name's NUL are not encoded... */
	addr.rails[0].bytes[3] = 0xdd;
	addr.rails[0].stack[5] = 'z';
	/* ...nor are rails past rail_count. */
	addr.rails[3].len = 999;

	cr_assert_eq(encode_ok(&addr, blob, sizeof(blob)), sizeof(expect));
	cr_assert_arr_eq(blob, expect, sizeof(expect));

	cr_assert_eq(decode_exact(expect, sizeof(expect), &decoded, err,
				  sizeof(err)), 0, "%s", err);
	cr_assert_eq(decoded.rails[0].format, 0x04030201);
	cr_assert_eq(decoded.rails[0].len, 3);
	cr_assert_str_eq(decoded.rails[0].stack, "tcx");
	cr_assert_eq(decoded.rails[0].bytes[3], 0,
		     "decoded struct is zero past len");
	cr_assert_eq(decoded.rails[0].stack[5], 0);
	cr_assert_eq(decoded.rails[3].len, 0);
}

/* The decoder builds the socket address the core provider's AV takes. */
Test(addr_layout, decoded_ipv4_is_a_plain_sockaddr_in)
{
	static const uint8_t blob[] = {
		'm', 'r', 'a', MRAIL_ADDR_VERSION, 1, 0,
		0x21, 198, 18, 2, 7, 0xab, 0xcd,
	};
	struct mrail_addr addr;
	struct sockaddr_in sin;
	char err[MRAIL_ERR_MAX];

	cr_assert_eq(decode_exact(blob, sizeof(blob), &addr, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_str_eq(addr.rails[0].stack, "tcp;ofi_rxm");
	cr_assert_eq(addr.rails[0].format, FI_SOCKADDR_IN);
	cr_assert_eq(addr.rails[0].len, sizeof(sin));
	memcpy(&sin, addr.rails[0].bytes, sizeof(sin));
	cr_assert_eq(sin.sin_family, AF_INET);
	cr_assert_eq(ntohs(sin.sin_port), 0xabcd);
	cr_assert_eq(ntohl(sin.sin_addr.s_addr), 0xc6120207);
}

/* ---- malformed blobs ---- */

/* A valid blob and its decoded form, for tests to break: rail 1 is IPv4
 * over stack 1 (offset 6..12), rail 2 raw over an inline stack ("ab", at
 * offset 13: descriptor, length 2, name, format, length 3, address). */
struct sample {
	struct mrail_addr addr;
	uint8_t blob[MRAIL_ADDR_MAX_LEN + 16];
	size_t len;
};

#define S_RAIL1		6
#define S_RAIL2		13
#define S_NAME2		(S_RAIL2 + 2)
#define S_FORMAT2	(S_NAME2 + 2)
#define S_ALEN2		(S_FORMAT2 + 4)
#define S_LEN		(S_ALEN2 + 1 + 3)

static void sample_init(struct sample *s)
{
	make_addr(&s->addr, 2, 0);
	set_raw_rail(&s->addr.rails[1], "ab", 0x11, 3, 0x30);
	s->len = encode_ok(&s->addr, s->blob, sizeof(s->blob));
	cr_assert_eq(s->len, S_LEN);
	cr_assert_eq(s->blob[S_RAIL2], 0x60);
	cr_assert_eq(s->blob[S_RAIL2 + 1], 2);
}

static void assert_decode_fails_with(const uint8_t *blob, size_t len, ...)
{
	struct mrail_addr addr;
	char err[MRAIL_ERR_MAX];
	const char *needle;
	va_list ap;
	int ret;

	memset(err, 'x', sizeof(err));
	memset(&addr, 0x5a, sizeof(addr));
	ret = decode_exact(blob, len, &addr, err, sizeof(err));
	cr_assert_eq(ret, -EINVAL,
		     "decode of %zu bytes gave %d, expected -EINVAL", len, ret);
	cr_assert_not_null(memchr(err, '\0', sizeof(err)),
			   "err not terminated");
	cr_assert_eq(addr.rail_count, 0, "a refused address is left zeroed");

	va_start(ap, len);
	while ((needle = va_arg(ap, const char *)))
		cr_assert_not_null(strstr(err, needle),
				   "error is\n  %s\nwhich lacks\n  %s", err,
				   needle);
	va_end(ap);
}

#define assert_decode_fails(blob, len, ...) \
	assert_decode_fails_with(blob, len, __VA_ARGS__, NULL)

/* Sets one byte of a fresh sample and expects the decoder to say why. */
#define assert_byte_refused(offset, value, ...) do {			\
	struct sample s_;						\
	sample_init(&s_);						\
	s_.blob[(offset)] = (uint8_t) (value);				\
	assert_decode_fails(s_.blob, s_.len, __VA_ARGS__);		\
} while (0)

Test(addr_malformed, magic)
{
	assert_byte_refused(0, 'M', "not an mrail address", "\"mra\"");
	assert_byte_refused(1, 'x', "not an mrail address");
	assert_byte_refused(2, 0, "not an mrail address");
	/* Even a blob too short for a header is told apart by its start. */
	assert_decode_fails((const uint8_t *) "mrx", 3, "not an mrail address");
	assert_decode_fails((const uint8_t *) "x", 1, "not an mrail address");
}

Test(addr_malformed, version)
{
	assert_byte_refused(3, 0, "version 0 is not supported", "version 2");
	assert_byte_refused(3, 3, "version 3 is not supported");
	assert_byte_refused(3, 255, "version 255 is not supported");
}

/* A version 1 address, as the previous mrail wrote it for one tcp;ofi_rxm
 * rail, is named for what it is, also when cut right after its version. */
Test(addr_malformed, version_1_blob)
{
	static const uint8_t v1[] = {
		'm', 'r', 'a', 1, 1, 0, 0, 0,
		11, 't', 'c', 'p', ';', 'o', 'f', 'i', '_', 'r', 'x', 'm',
		2, 0, 0, 0, 16, 0,
		2, 0, 0x12, 0x67, 198, 18, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0,
	};

	assert_decode_fails(v1, sizeof(v1), "version 1 is not supported",
			    "speaks version 2",
			    "every process must run the same mrail");
	assert_decode_fails(v1, 4, "version 1 is not supported");
}

Test(addr_malformed, rail_count)
{
	struct sample s;

	assert_byte_refused(4, 0, "has 0 rails, must have 1..8");
	assert_byte_refused(4, 9, "has 9 rails, must have 1..8");
	assert_byte_refused(4, 255, "has 255 rails");

	/* Counts that disagree with the rails that follow. */
	assert_byte_refused(4, 1, "12 stray bytes after its last rail",
			    "rail 1 ends at offset 13 of 25");
	sample_init(&s);
	s.blob[4] = 3;
	assert_decode_fails(s.blob, s.len, "truncated", "rail 3 descriptor");
}

Test(addr_malformed, flags)
{
	assert_byte_refused(5, 0x02, "unknown flag bits 0x02");
	assert_byte_refused(5, 0x80, "unknown flag bits 0x80");
	assert_byte_refused(5, 0xff, "unknown flag bits 0xfe", "flags 0xff");
	assert_byte_refused(
		5, MRAIL_ADDR_FLAG_PARTIAL,
		"partial mrail address has 2 rails, must have exactly 1");
}

Test(addr_malformed, address_form)
{
	unsigned form;
	char want[64];

	for (form = 0; form < 8; form++) {
		if (form >= MRAIL_ADDR_FORM_IPV4 && form <= MRAIL_ADDR_FORM_RAW)
			continue;
		snprintf(want, sizeof(want), "has address form %u", form);
		assert_byte_refused(S_RAIL1, form << MRAIL_ADDR_FORM_SHIFT | 1,
				    "rail 1 descriptor", want,
				    "must be 1 (IPv4), 2 (IPv6) or 3 (raw)");
		assert_byte_refused(S_RAIL2, form << MRAIL_ADDR_FORM_SHIFT,
				    "rail 2 descriptor", want);
	}
}

Test(addr_malformed, stack_index)
{
	unsigned index;
	char want[64];

	for (index = mrail_addr_stack_count() + 1;
	     index <= MRAIL_ADDR_STACK_MASK; index++) {
		snprintf(want, sizeof(want), "rail 1 names stack %u", index);
		assert_byte_refused(S_RAIL1, 0x20 | index, want,
				    "this mrail knows stacks 1..");
	}
}

/* The same bytes read another way must fail cleanly too. */
Test(addr_malformed, form_changed_under_the_bytes)
{
	/* IPv4 bytes read as IPv6: its 18 bytes run to the end. */
	assert_byte_refused(S_RAIL1, 0x41, "truncated", "rail 2 descriptor");
	/* IPv4 bytes read as raw: format 198.18.1.2, length 0x12. */
	assert_byte_refused(S_RAIL1, 0x61, "rail 1 core address needs 18 bytes");
	/* Rail 1 inline: its first address byte (198) is a name length. */
	assert_byte_refused(S_RAIL1, 0x20, "rail 1 stack name length 198");
	/* Rail 2's inline name read as a table index: its length (2) and name
	 * are then an IPv4 address. */
	assert_byte_refused(S_RAIL2, 0x21, "stray bytes");
}

Test(addr_malformed, stack_name_length)
{
	assert_byte_refused(S_RAIL2 + 1, 0, "rail 2 stack name length 0 is out "
			    "of range (1..63)");
	assert_byte_refused(S_RAIL2 + 1, 64,
			    "rail 2 stack name length 64 is out of range");
	assert_byte_refused(S_RAIL2 + 1, 255, "rail 2 stack name length 255");
	assert_byte_refused(S_RAIL2 + 1, 63, "truncated",
			    "rail 2 stack name needs 63 bytes");
}

Test(addr_malformed, stack_name_characters)
{
	assert_byte_refused(S_NAME2, 'A',
			    "rail 2 stack name has byte 0x41 at position 1",
			    "only a-z, 0-9, '_' and ';'");
	assert_byte_refused(S_NAME2 + 1, 0,
			    "rail 2 stack name has byte 0x00 at position 2");
	assert_byte_refused(S_NAME2 + 1, ' ', "byte 0x20 at position 2");
	assert_byte_refused(S_NAME2, '-', "byte 0x2d at position 1");
	assert_byte_refused(S_NAME2, '.', "byte 0x2e");
	assert_byte_refused(S_NAME2, '@', "byte 0x40");
	assert_byte_refused(S_NAME2, '"', "byte 0x22");
	assert_byte_refused(S_NAME2 + 1, 0xff, "byte 0xff at position 2");
	assert_byte_refused(S_NAME2 + 1, 0x80, "byte 0x80");
}

Test(addr_malformed, stack_name_empty_provider)
{
	assert_byte_refused(S_NAME2, ';', "rail 2 stack name \";b\"",
			    "empty provider name");
	assert_byte_refused(S_NAME2 + 1, ';', "rail 2 stack name \"a;\"",
			    "empty provider name");
}

Test(addr_malformed, stack_name_of_only_separators)
{
	struct mrail_addr addr;
	uint8_t blob[64];
	size_t len;

	make_addr(&addr, 1, 0);
	set_raw_rail(&addr.rails[0], "x", 1, 1, 0);
	len = encode_ok(&addr, blob, sizeof(blob));
	blob[MRAIL_ADDR_HEADER_LEN + 2] = ';';
	assert_decode_fails(blob, len, "rail 1 stack name \";\"",
			    "empty provider name");
}

/* One encoding per address: a known stack is never written inline. */
Test(addr_malformed, known_stack_written_inline)
{
	static const uint8_t blob[] = {
		'm', 'r', 'a', MRAIL_ADDR_VERSION, 1, 0,
		0x20, 11, 't', 'c', 'p', ';', 'o', 'f', 'i', '_', 'r', 'x', 'm',
		198, 18, 1, 2, 0x12, 0x67,
	};

	assert_decode_fails(blob, sizeof(blob),
			    "rail 1 stack name \"tcp;ofi_rxm\" is written inline",
			    "known stack 1");
}

Test(addr_malformed, core_address_length)
{
	assert_byte_refused(S_ALEN2, 0,
			    "rail 2 core address length 0 is out of range "
			    "(1..128)");
	assert_byte_refused(S_ALEN2, MRAIL_RAIL_ADDR_MAX + 1,
			    "rail 2 core address length 129 is out of range");
	assert_byte_refused(S_ALEN2, 255, "rail 2 core address length 255");
	assert_byte_refused(S_ALEN2, 4, "truncated",
			    "rail 2 core address needs 4 bytes", "3 remain");
}

/* One encoding per address: what a compact form carries is never raw. */
Test(addr_malformed, compact_address_written_raw)
{
	struct mrail_addr addr;
	uint8_t blob[128];
	size_t len, i;
	uint8_t *p;

	for (i = 0; i < 2; i++) {
		make_addr(&addr, 1, 0);
		if (i)
			set_ipv6_rail(&addr.rails[0], "tcp;ofi_rxm", "fd00::1",
				      9, 0, 0);
		/* Written by hand as the raw form. */
		memcpy(blob, "mra", 3);
		blob[3] = MRAIL_ADDR_VERSION;
		blob[4] = 1;
		blob[5] = 0;
		p = blob + 6;
		*p++ = 0x61;
		*p++ = (uint8_t) addr.rails[0].format;
		*p++ = 0;
		*p++ = 0;
		*p++ = 0;
		*p++ = (uint8_t) addr.rails[0].len;
		memcpy(p, addr.rails[0].bytes, addr.rails[0].len);
		len = (size_t) (p - blob) + addr.rails[0].len;
		assert_decode_fails(blob, len, "rail 1 core address is in the raw "
				    "form", i ? "must use the IPv6 form" :
				    "must use the IPv4 form");
	}
}

static void assert_every_truncation_fails(const struct mrail_addr *addr)
{
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	size_t len, cut;

	len = encode_ok(addr, blob, sizeof(blob));
	for (cut = 0; cut < len; cut++)
		assert_decode_fails(blob, cut, "truncated");
}

Test(addr_malformed, every_truncation_of_a_valid_blob)
{
	struct mrail_addr addr;
	unsigned rails;

	for (rails = 1; rails <= MRAIL_MAX_RAILS; rails++) {
		make_addr(&addr, rails, 0);
		assert_every_truncation_fails(&addr);
	}
	make_mixed_addr(&addr);
	assert_every_truncation_fails(&addr);
	make_max_addr(&addr);
	assert_every_truncation_fails(&addr);
}

Test(addr_malformed, truncation_names_the_field)
{
	struct sample s;

	sample_init(&s);
	assert_decode_fails(s.blob, 0,
			    "truncated: 0 bytes, the header alone is 6");
	assert_decode_fails(s.blob, 5, "truncated: 5 bytes");
	assert_decode_fails(s.blob, 6, "rail 1 descriptor needs 1 bytes at "
			    "offset 6");
	assert_decode_fails(s.blob, 12, "rail 1 IPv4 address and port needs 6 "
			    "bytes at offset 7, 5 remain of 12");
	assert_decode_fails(s.blob, S_RAIL2, "rail 2 descriptor");
	assert_decode_fails(s.blob, S_RAIL2 + 1, "rail 2 stack name length");
	assert_decode_fails(s.blob, S_NAME2 + 1,
			    "rail 2 stack name needs 2 bytes", "1 remain");
	assert_decode_fails(s.blob, S_FORMAT2 + 3, "rail 2 core address format");
	assert_decode_fails(s.blob, S_ALEN2, "rail 2 core address length");
	assert_decode_fails(s.blob, s.len - 1,
			    "rail 2 core address needs 3 bytes", "2 remain");
}

Test(addr_malformed, trailing_bytes)
{
	struct sample s;

	sample_init(&s);
	s.blob[s.len] = 0;
	assert_decode_fails(s.blob, s.len + 1,
			    "1 stray byte after its last rail",
			    "rail 2 ends at offset 25 of 26");
	memset(&s.blob[s.len], 'm', 8);
	assert_decode_fails(s.blob, s.len + 8, "8 stray bytes");
}

Test(addr_malformed, trailing_byte_after_the_largest_address)
{
	struct mrail_addr addr;
	uint8_t blob[MRAIL_ADDR_MAX_LEN + 1];
	size_t len;

	make_max_addr(&addr);
	len = encode_ok(&addr, blob, sizeof(blob));
	blob[len] = 1;
	assert_decode_fails(blob, len + 1, "1 stray byte");
}

Test(addr_malformed, null_arguments)
{
	struct mrail_addr addr;
	char err[MRAIL_ERR_MAX];
	struct sample s;

	sample_init(&s);
	cr_assert_eq(mrail_addr_decode(s.blob, s.len, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_addr_decode(NULL, 5, &addr, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_addr_decode(NULL, 0, &addr, err, sizeof(err)),
		     -EINVAL);
	cr_assert_not_null(strstr(err, "truncated"));
}

Test(addr_malformed, error_buffer_may_be_absent_or_short)
{
	struct mrail_addr addr;
	char err[8] = "unused";
	struct sample s;

	sample_init(&s);
	s.blob[3] = 9;
	cr_assert_eq(mrail_addr_decode(s.blob, s.len, &addr, NULL, 64),
		     -EINVAL);
	cr_assert_eq(mrail_addr_decode(s.blob, s.len, &addr, err, 0), -EINVAL);
	cr_assert_str_eq(err, "unused");
	cr_assert_eq(mrail_addr_decode(s.blob, s.len, &addr, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(strlen(err), sizeof(err) - 1);
	cr_assert_eq(mrail_addr_decode(s.blob, s.len, &addr, err, 1), -EINVAL);
	cr_assert_str_eq(err, "");
}

/* ---- the encoder refuses what the decoder would ---- */

static void assert_encode_refuses(const struct mrail_addr *addr,
				  const char *why)
{
	uint8_t blob[MRAIL_ADDR_MAX_LEN];

	memset(blob, 0xee, sizeof(blob));
	cr_assert_eq(mrail_addr_encoded_len(addr), 0, "%s: no encoded length",
		     why);
	cr_assert_eq(mrail_addr_encode(addr, blob, sizeof(blob)), -EINVAL,
		     "%s: encode should refuse", why);
	cr_assert_eq(blob[0], 0xee, "%s: nothing written", why);
}

Test(addr_encode, refuses_bad_header_fields)
{
	struct mrail_addr addr;

	make_addr(&addr, 1, 0);
	addr.rail_count = 0;
	assert_encode_refuses(&addr, "no rails");
	make_addr(&addr, MRAIL_MAX_RAILS, 0);
	addr.rail_count = MRAIL_MAX_RAILS + 1;
	assert_encode_refuses(&addr, "too many rails");
	make_addr(&addr, 1, 0x02);
	assert_encode_refuses(&addr, "unknown flag");
	make_addr(&addr, 1, 0x80 | MRAIL_ADDR_FLAG_PARTIAL);
	assert_encode_refuses(&addr, "unknown flag with partial");
	make_addr(&addr, 2, MRAIL_ADDR_FLAG_PARTIAL);
	assert_encode_refuses(&addr, "partial with two rails");
}

Test(addr_encode, refuses_bad_stack_names)
{
	static const char *const bad[] = {
		"", "TCP", "tcp;", ";tcp", "tcp;;ofi_rxm", ";", "tcp ofi",
		"tcp-x", "t\xc3\xa9p",
	};
	struct mrail_addr addr;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		make_addr(&addr, 2, 0);
		strcpy(addr.rails[1].stack, bad[i]);
		assert_encode_refuses(&addr, bad[i]);
		set_raw_rail(&addr.rails[1], bad[i], 9, 9, 9);
		assert_encode_refuses(&addr, bad[i]);
	}

	/* A name that fills the array has no NUL: 64 characters is too long. */
	make_addr(&addr, 1, 0);
	memset(addr.rails[0].stack, 'a', sizeof(addr.rails[0].stack));
	assert_encode_refuses(&addr, "unterminated stack");
	cr_assert_eq(mrail_addr_rail_encoded_len(&addr.rails[0]), 0);
}

Test(addr_encode, refuses_bad_core_address_lengths)
{
	struct mrail_addr addr;

	make_addr(&addr, 2, 0);
	addr.rails[1].len = 0;
	assert_encode_refuses(&addr, "empty core address");
	addr.rails[1].len = MRAIL_RAIL_ADDR_MAX + 1;
	assert_encode_refuses(&addr, "core address too long");
	addr.rails[1].len = 0xffff;
	assert_encode_refuses(&addr, "core address far too long");
	cr_assert_eq(mrail_addr_rail_encoded_len(&addr.rails[1]), 0);
	cr_assert_eq(mrail_addr_rail_encoded_len(NULL), 0);
}

Test(addr_encode, rail_encoded_len_by_form)
{
	struct mrail_rail_addr rail;

	set_ipv4_rail(&rail, "tcp;ofi_rxm", "198.18.1.1", 1);
	cr_assert_eq(mrail_addr_rail_encoded_len(&rail), IPV4_RAIL_LEN);
	set_ipv4_rail(&rail, "tcp;ofi_mrx", "198.18.1.1", 1);
	cr_assert_eq(mrail_addr_rail_encoded_len(&rail), IPV4_RAIL_LEN + 12);
	set_ipv6_rail(&rail, "udp;ofi_rxd", "::1", 1, 0, 0);
	cr_assert_eq(mrail_addr_rail_encoded_len(&rail), IPV6_RAIL_LEN);
	set_raw_rail(&rail, "udp;ofi_rxd", 77, 100, 0);
	cr_assert_eq(mrail_addr_rail_encoded_len(&rail), RAW_RAIL_FIXED + 100);
}

Test(addr_encode, short_buffer_is_enospc_and_untouched)
{
	struct mrail_addr addr;
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	size_t need;

	make_addr(&addr, 2, 0);
	need = mrail_addr_encoded_len(&addr);
	memset(blob, 0xee, sizeof(blob));
	cr_assert_eq(mrail_addr_encode(&addr, blob, need - 1), -ENOSPC);
	cr_assert_eq(mrail_addr_encode(&addr, blob, 0), -ENOSPC);
	cr_assert_eq(blob[0], 0xee);
	cr_assert_eq(mrail_addr_encode(&addr, blob, need), (ssize_t) need);
	cr_assert_eq(blob[need], 0xee, "nothing past the address");
}

Test(addr_encode, null_arguments)
{
	struct mrail_addr addr;
	uint8_t blob[8];

	make_addr(&addr, 1, 0);
	cr_assert_eq(mrail_addr_encoded_len(NULL), 0);
	cr_assert_eq(mrail_addr_encode(NULL, blob, sizeof(blob)), -EINVAL);
	cr_assert_eq(mrail_addr_encode(&addr, NULL, MRAIL_ADDR_MAX_LEN),
		     -EINVAL);
}

/* ---- fuzzing the decoder ---- */

static uint32_t fuzz_below(uint64_t *state, uint32_t bound)
{
	return (uint32_t) test_rng_below(state, bound);
}

/* Values where range checks tend to be off by one, and descriptors of
 * every form next to the valid ones. */
static uint8_t fuzz_edge_value(uint64_t *state)
{
	static const uint8_t edges[] = {
		0, 1, 2, 8, 9, 0x0f, 0x10, 0x1f, 0x20, 0x21, 0x22, 0x2f, 0x3e,
		0x3f, 0x40, 0x41, 0x5f, 0x60, 0x61, 0x7f, 0x80, 0x81, 0x9f,
		0xc0, 0xe0, 0xfe, 0xff, ';', 'a',
	};

	return edges[fuzz_below(state, sizeof(edges))];
}

#define FUZZ_CAP (MRAIL_ADDR_MAX_LEN + 64)

/* One random change to blob; returns its new length. */
static size_t fuzz_mutate(uint64_t *state, uint8_t *blob, size_t len)
{
	size_t pos = len ? fuzz_below(state, (uint32_t) len) : 0;

	switch (fuzz_below(state, 7)) {
	case 0:
		if (len)
			blob[pos] ^= (uint8_t) (1u << fuzz_below(state, 8));
		return len;
	case 1:
		if (len)
			blob[pos] = (uint8_t) test_rng_next(state);
		return len;
	case 2:
		if (len)
			blob[pos] = fuzz_edge_value(state);
		return len;
	case 3:
		return fuzz_below(state, (uint32_t) len + 1);
	case 4:
		if (len < FUZZ_CAP)
			blob[len++] = (uint8_t) test_rng_next(state);
		return len;
	case 5:
		if (len < FUZZ_CAP) {
			memmove(&blob[pos + 1], &blob[pos], len - pos);
			blob[pos] = fuzz_edge_value(state);
			len++;
		}
		return len;
	default:
		if (len) {
			memmove(&blob[pos], &blob[pos + 1], len - pos - 1);
			len--;
		}
		return len;
	}
}

#define FUZZ_SEEDS 6

Test(addr_fuzz, mutations_fail_cleanly_or_round_trip_exactly)
{
	struct mrail_addr seeds[FUZZ_SEEDS], decoded;
	uint8_t blob[FUZZ_CAP], again[MRAIL_ADDR_MAX_LEN];
	uint8_t seed_blob[FUZZ_SEEDS][MRAIL_ADDR_MAX_LEN];
	uint64_t state = 0x2545f491;
	size_t len, seed_len[FUZZ_SEEDS], accepted = 0, refused = 0, used;
	unsigned i, round, changes;
	char err[MRAIL_ERR_MAX];
	uint8_t *copy;

	make_addr(&seeds[0], 1, 0);
	make_addr(&seeds[1], 4, 0);
	make_addr(&seeds[2], 1, MRAIL_ADDR_FLAG_PARTIAL);
	make_mixed_addr(&seeds[3]);
	make_max_addr(&seeds[4]);
	make_addr(&seeds[5], 2, 0);
	set_raw_rail(&seeds[5].rails[1], "ab", 0x11, 3, 0x30);
	for (i = 0; i < FUZZ_SEEDS; i++)
		seed_len[i] = encode_ok(&seeds[i], seed_blob[i],
					sizeof(seed_blob[i]));

	for (round = 0; round < 30000; round++) {
		i = round % FUZZ_SEEDS;
		memcpy(blob, seed_blob[i], seed_len[i]);
		len = seed_len[i];
		changes = 1 + fuzz_below(&state, 4);
		while (changes--)
			len = fuzz_mutate(&state, blob, len);

		/* The prefix decoder reads no further than the exact one. */
		copy = malloc(len ? len : 1);
		cr_assert_not_null(copy);
		memcpy(copy, blob, len);
		if (!mrail_addr_decode_prefix(copy, len, &decoded, &used, NULL,
					      0))
			cr_assert_leq(used, len, "round %u", round);
		free(copy);

		memset(err, 'x', sizeof(err));
		if (decode_exact(blob, len, &decoded, err, sizeof(err))) {
			cr_assert_not_null(memchr(err, '\0', sizeof(err)),
					   "round %u: err not terminated",
					   round);
			cr_assert_gt(strlen(err), 0,
				     "round %u: no reason given", round);
			refused++;
			continue;
		}
		cr_assert_eq(mrail_addr_encoded_len(&decoded), len, "round %u",
			     round);
		cr_assert_eq(mrail_addr_encode(&decoded, again, sizeof(again)),
			     (ssize_t) len, "round %u: re-encode length",
			     round);
		cr_assert_arr_eq(again, blob, len,
				 "round %u: re-encoded bytes differ", round);
		accepted++;
	}
	/* Both outcomes must have been exercised for the loop to mean much. */
	cr_assert_gt(accepted, 1000, "only %zu mutations decoded", accepted);
	cr_assert_gt(refused, 1000, "only %zu mutations refused", refused);
}

/* Random bytes after a valid header: descriptors of every kind. */
Test(addr_fuzz, random_rails_after_a_valid_header)
{
	uint8_t blob[64], again[MRAIL_ADDR_MAX_LEN];
	struct mrail_addr decoded;
	uint64_t state = 0x51ed270b;
	size_t len, i, accepted = 0;
	unsigned round;

	for (round = 0; round < 50000; round++) {
		len = MRAIL_ADDR_HEADER_LEN + fuzz_below(&state, 40);
		memcpy(blob, "mra", 3);
		blob[3] = MRAIL_ADDR_VERSION;
		blob[4] = (uint8_t) (1 + fuzz_below(&state, 3));
		blob[5] = 0;
		for (i = MRAIL_ADDR_HEADER_LEN; i < len; i++)
			blob[i] = (uint8_t) test_rng_next(&state);
		/* Descriptors mostly valid, so that decoding gets further. */
		blob[MRAIL_ADDR_HEADER_LEN] = (uint8_t) ((1 + fuzz_below(&state, 3))
			<< MRAIL_ADDR_FORM_SHIFT | fuzz_below(&state, 32));
		if (decode_exact(blob, len, &decoded, NULL, 0))
			continue;
		cr_assert_eq(mrail_addr_encode(&decoded, again, sizeof(again)),
			     (ssize_t) len, "round %u", round);
		cr_assert_arr_eq(again, blob, len, "round %u", round);
		accepted++;
	}
	cr_assert_gt(accepted, 100, "only %zu decoded", accepted);
}

/* ---- compatibility ---- */

static void assert_incompatible(const struct mrail_addr *local,
				const struct mrail_addr *peer,
				const char *needle)
{
	char err[MRAIL_ERR_MAX];

	memset(err, 'x', sizeof(err));
	cr_assert_eq(mrail_addr_check_compatible(local, peer, err, sizeof(err)),
		     -EINVAL);
	cr_assert_not_null(memchr(err, '\0', sizeof(err)));
	cr_assert_not_null(strstr(err, needle),
			   "error is\n  %s\nwhich lacks\n  %s", err, needle);
}

Test(addr_compat, equal_addresses)
{
	struct mrail_addr local, peer;
	char err[MRAIL_ERR_MAX] = "";

	make_addr(&local, 2, 0);
	make_addr(&peer, 2, 0);
	cr_assert_eq(mrail_addr_check_compatible(&local, &peer, err,
						 sizeof(err)),
		     0, "%s", err);
}

Test(addr_compat, core_addresses_may_differ)
{
	struct mrail_addr local, peer;

	make_addr(&local, 2, 0);
	make_addr(&peer, 2, 0);
	set_raw_rail(&peer.rails[0], "tcp;ofi_rxm", FMT_IN6, 28, 0x99);
	cr_assert_eq(mrail_addr_check_compatible(&local, &peer, NULL, 0), 0);
}

Test(addr_compat, different_rail_count)
{
	struct mrail_addr local, peer;

	make_addr(&local, 2, 0);
	make_addr(&peer, 3, 0);
	assert_incompatible(&local, &peer,
			    "peer has 3 rails, this endpoint has 2");
	assert_incompatible(&peer, &local,
			    "peer has 2 rails, this endpoint has 3");
}

Test(addr_compat, different_stack_at_the_second_rail)
{
	struct mrail_addr local, peer;

	make_addr(&local, 2, 0);
	make_addr(&peer, 2, 0);
	strcpy(peer.rails[1].stack, "verbs;ofi_rxm");
	assert_incompatible(&local, &peer,
			    "rail 2: peer uses \"verbs;ofi_rxm\", "
			    "this endpoint uses \"udp;ofi_rxd\"");
}

Test(addr_compat, same_stacks_in_another_order)
{
	struct mrail_addr local, peer;

	make_addr(&local, 2, 0);
	make_addr(&peer, 2, 0);
	strcpy(peer.rails[0].stack, "udp;ofi_rxd");
	strcpy(peer.rails[1].stack, "tcp;ofi_rxm");
	assert_incompatible(&local, &peer, "rail 1: peer uses \"udp;ofi_rxd\"");
}

Test(addr_compat, partial_peer_is_checked_on_its_first_rail)
{
	struct mrail_addr local, peer;

	make_addr(&local, 4, 0);
	make_addr(&peer, 1, MRAIL_ADDR_FLAG_PARTIAL);
	cr_assert_eq(mrail_addr_check_compatible(&local, &peer, NULL, 0), 0);

	strcpy(peer.rails[0].stack, "udp;ofi_rxd");
	assert_incompatible(&local, &peer, "rail 1: peer uses \"udp;ofi_rxd\", "
			    "this endpoint uses \"tcp;ofi_rxm\"");
}

Test(addr_compat, invalid_rail_counts)
{
	struct mrail_addr local, peer;

	make_addr(&local, 2, 0);
	make_addr(&peer, 2, 0);
	peer.rail_count = 0;
	assert_incompatible(&local, &peer, "peer address has 0 rails");
	peer.rail_count = MRAIL_MAX_RAILS + 1;
	assert_incompatible(&local, &peer, "peer address has 9 rails");
	peer.rail_count = 2;
	local.rail_count = 0;
	assert_incompatible(&local, &peer, "local address has 0 rails");
	cr_assert_eq(mrail_addr_check_compatible(NULL, &peer, NULL, 0),
		     -EINVAL);
	cr_assert_eq(mrail_addr_check_compatible(&local, NULL, NULL, 0),
		     -EINVAL);
}

Test(addr_compat, decoded_peer_against_local)
{
	struct mrail_addr local, peer;
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	char err[MRAIL_ERR_MAX];
	size_t len;

	make_addr(&local, MRAIL_MAX_RAILS, 0);
	len = encode_ok(&local, blob, sizeof(blob));
	cr_assert_eq(decode_exact(blob, len, &peer, err, sizeof(err)), 0);
	cr_assert_eq(mrail_addr_check_compatible(&local, &peer, err,
						 sizeof(err)),
		     0);
}

/* ---- several addresses in one buffer ---- */

/* fi_av_insert hands several addresses back to back in one buffer. */
Test(addr_prefix, packed_addresses_decode_one_after_another)
{
	struct mrail_addr one, two, got;
	uint8_t buf[2 * MRAIL_ADDR_MAX_LEN];
	char err[MRAIL_ERR_MAX] = "";
	size_t len_one, len_two, used;

	make_addr(&one, 2, 0);
	make_max_addr(&two);
	len_one = encode_ok(&one, buf, sizeof(buf));
	len_two = encode_ok(&two, buf + len_one, sizeof(buf) - len_one);

	cr_assert_eq(mrail_addr_decode_prefix(buf, len_one + len_two, &got, &used,
					      err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(used, len_one);
	cr_assert_eq(memcmp(&got, &one, sizeof(got)), 0);

	cr_assert_eq(mrail_addr_decode_prefix(buf + used, len_two, &got, &used,
					      err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(used, len_two);
	cr_assert_eq(memcmp(&got, &two, sizeof(got)), 0);
}

Test(addr_prefix, every_truncation_fails_with_nothing_consumed)
{
	struct mrail_addr addr, got;
	uint8_t full[MRAIL_ADDR_MAX_LEN];
	char err[MRAIL_ERR_MAX];
	size_t len, cut, used;
	uint8_t *copy;

	make_mixed_addr(&addr);
	len = encode_ok(&addr, full, sizeof(full));
	for (cut = 0; cut < len; cut++) {
		/* Exactly cut bytes on the heap: ASan sees any overread. */
		copy = malloc(cut ? cut : 1);
		cr_assert_not_null(copy);
		memcpy(copy, full, cut);
		used = 12345;
		cr_assert_eq(mrail_addr_decode_prefix(copy, cut, &got, &used, err,
						      sizeof(err)), -EINVAL,
			     "cut at %zu accepted", cut);
		cr_assert_eq(used, 0);
		free(copy);
	}
}

Test(addr_prefix, exact_decode_still_refuses_what_follows)
{
	struct mrail_addr addr, got;
	uint8_t buf[MRAIL_ADDR_MAX_LEN + 1];
	char err[MRAIL_ERR_MAX] = "";
	size_t len, used;

	make_addr(&addr, 1, 0);
	len = encode_ok(&addr, buf, sizeof(buf));
	buf[len] = 0x42;
	cr_assert_eq(mrail_addr_decode(buf, len + 1, &got, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "stray byte"), "%s", err);
	cr_assert_eq(mrail_addr_decode_prefix(buf, len + 1, &got, &used, err,
					      sizeof(err)), 0, "%s", err);
	cr_assert_eq(used, len);
}

/* ---- partial addresses from fi_getinfo(node, service) ---- */

Test(addr_partial, make_partial_round_trips)
{
	uint8_t sin[16] = { 2, 0, 0x12, 0x34, 198, 18, 1, 1 };
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	struct mrail_addr addr, back;
	char err[MRAIL_ERR_MAX];
	ssize_t len;

	cr_assert_eq(mrail_addr_make_partial("tcp;ofi_rxm", FMT_IN,
					     sin, sizeof(sin), &addr), 0);
	cr_assert_eq(addr.rail_count, 1);
	cr_assert_eq(addr.flags, MRAIL_ADDR_FLAG_PARTIAL);
	len = mrail_addr_encode(&addr, blob, sizeof(blob));
	cr_assert_gt(len, 0);
	cr_assert_eq(mrail_addr_decode(blob, (size_t) len, &back, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(back.flags, MRAIL_ADDR_FLAG_PARTIAL);
	cr_assert(mrail_addr_same_rail(&addr, &back, 0));
}

Test(addr_partial, make_partial_refuses_what_cannot_encode)
{
	uint8_t big[MRAIL_RAIL_ADDR_MAX + 1] = { 0 };
	char long_stack[MRAIL_STACK_NAME_MAX + 4];
	struct mrail_addr addr;

	memset(long_stack, 'a', sizeof(long_stack) - 1);
	long_stack[sizeof(long_stack) - 1] = '\0';
	cr_assert_eq(mrail_addr_make_partial("tcp", 2, big, 0, &addr), -EINVAL);
	cr_assert_eq(mrail_addr_make_partial("tcp", 2, big, sizeof(big), &addr),
		     -EINVAL);
	cr_assert_eq(mrail_addr_make_partial("", 2, big, 4, &addr), -EINVAL);
	cr_assert_eq(mrail_addr_make_partial(long_stack, 2, big, 4, &addr), -EINVAL);
	cr_assert_eq(mrail_addr_make_partial("TCP bad", 2, big, 4, &addr), -EINVAL);
	cr_assert_eq(mrail_addr_make_partial("tcp;ofi_rxm", 2, big,
					     MRAIL_RAIL_ADDR_MAX, &addr), 0);
}

Test(addr_partial, same_rail_compares_stack_format_and_bytes)
{
	struct mrail_addr full, partial, other;

	make_addr(&full, 3, 0);
	cr_assert_eq(mrail_addr_make_partial(full.rails[0].stack,
					     full.rails[0].format,
					     full.rails[0].bytes, full.rails[0].len,
					     &partial), 0);
	cr_assert(mrail_addr_same_rail(&full, &partial, 0));
	cr_assert(mrail_addr_same_rail(&partial, &full, 0));
	cr_assert_not(mrail_addr_same_rail(&full, &partial, 1),
		      "the partial address has no rail 1");
	cr_assert(mrail_addr_same_rail(&full, &full, 2));
	cr_assert_not(mrail_addr_same_rail(&full, &full, 3));
	cr_assert_not(mrail_addr_same_rail(&full, &full, MRAIL_MAX_RAILS + 5));

	other = full;
	other.rails[0].bytes[3] ^= 1;
	cr_assert_not(mrail_addr_same_rail(&full, &other, 0), "bytes differ");
	other = full;
	other.rails[0].format = FMT_IN6;
	cr_assert_not(mrail_addr_same_rail(&full, &other, 0), "format differs");
	other = full;
	other.rails[0].len--;
	cr_assert_not(mrail_addr_same_rail(&full, &other, 0), "length differs");
	other = full;
	strcpy(other.rails[0].stack, "udp;ofi_rxd");
	cr_assert_not(mrail_addr_same_rail(&full, &other, 0), "stack differs");
}

/* ---- the sender key ---- */

/* What the receiver hashes (the address it decoded) must give what the
 * sender hashed (its own name), for every form the codec has. */
Test(addr_key, survives_a_round_trip_through_the_wire)
{
	struct mrail_addr sent, received;
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	char err[MRAIL_ERR_MAX];
	ssize_t len;
	unsigned rails;

	for (rails = 1; rails <= MRAIL_MAX_RAILS + 2; rails++) {
		if (rails <= MRAIL_MAX_RAILS)
			make_addr(&sent, rails, 0);
		else if (rails == MRAIL_MAX_RAILS + 1)
			make_mixed_addr(&sent);
		else
			make_max_addr(&sent);
		len = mrail_addr_encode(&sent, blob, sizeof(blob));
		cr_assert_gt(len, 0);
		cr_assert_eq(mrail_addr_decode(blob, (size_t) len, &received, err,
					       sizeof(err)), 0, "%s", err);
		cr_assert_neq(mrail_addr_key(&sent), 0);
		cr_assert_eq(mrail_addr_key(&received), mrail_addr_key(&sent),
			     "case %u", rails);
	}
}

/* Any difference a peer's identity rests on changes the key. */
Test(addr_key, differs_between_peers)
{
	struct mrail_addr a, b;

	make_addr(&a, 2, 0);
	b = a;
	cr_assert_eq(mrail_addr_key(&a), mrail_addr_key(&b));
	set_ipv4_rail(&b.rails[1], "udp;ofi_rxd", "198.18.2.2", 4713);
	cr_assert_neq(mrail_addr_key(&a), mrail_addr_key(&b), "port on rail 2");
	b = a;
	set_ipv4_rail(&b.rails[0], "tcp;ofi_rxm", "198.18.1.3", 4711);
	cr_assert_neq(mrail_addr_key(&a), mrail_addr_key(&b), "host on rail 1");
	b = a;
	b.flags = MRAIL_ADDR_FLAG_PARTIAL;
	b.rail_count = 1;
	cr_assert_neq(mrail_addr_key(&a), mrail_addr_key(&b),
		      "a partial address is not its peer's name");
}

Test(addr_key, is_zero_only_for_what_cannot_be_encoded)
{
	struct mrail_addr addr;

	make_addr(&addr, 2, 0);
	addr.rail_count = 0;
	cr_assert_eq(mrail_addr_key(&addr), 0);
	make_addr(&addr, 2, 0);
	addr.rails[0].stack[0] = '\0';
	cr_assert_eq(mrail_addr_key(&addr), 0);
}
