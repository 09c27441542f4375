/*
 * Unit tests of core/addr_codec.c: the mrail address blob is exchanged
 * between hosts, so the decoder is fed every malformed form and a stream of
 * random mutations, always from buffers of exactly the length given, so that
 * AddressSanitizer catches any read past it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "addr_codec.h"

/* fi_info addr_format values as libfabric 1.17 numbers them; opaque here. */
#define TEST_FORMAT_SOCKADDR_IN		2
#define TEST_FORMAT_SOCKADDR_IN6	3

/* ---- building addresses ---- */

static void set_rail(struct mrail_rail_addr *rail, const char *stack,
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

/* Rails alternate over two stacks, so that the rail order matters. */
static void make_addr(struct mrail_addr *addr, unsigned rails, uint8_t flags)
{
	unsigned i;

	memset(addr, 0, sizeof(*addr));
	addr->rail_count = (uint8_t) rails;
	addr->flags = flags;
	for (i = 0; i < rails && i < MRAIL_MAX_RAILS; i++)
		set_rail(&addr->rails[i], i % 2 ? "udp;ofi_rxd" : "tcp;ofi_rxm",
			 TEST_FORMAT_SOCKADDR_IN, 16, (uint8_t) (0x10 * i + 1));
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
		set_rail(&addr->rails[i], stack, 0xfedcba98u,
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

static void assert_round_trip(const struct mrail_addr *addr)
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
}

/* ---- round trips ---- */

Test(addr_round_trip, one_rail)
{
	struct mrail_addr addr;

	make_addr(&addr, 1, 0);
	assert_round_trip(&addr);
	/* "tcp;ofi_rxm" is 11 bytes, the core address 16. */
	cr_assert_eq(mrail_addr_encoded_len(&addr),
		     MRAIL_ADDR_HEADER_LEN + MRAIL_ADDR_RAIL_OVERHEAD + 27);
}

Test(addr_round_trip, two_rails)
{
	struct mrail_addr addr;

	make_addr(&addr, 2, 0);
	set_rail(&addr.rails[1], "udp;ofi_rxd", TEST_FORMAT_SOCKADDR_IN6, 28,
		 0x77);
	assert_round_trip(&addr);
}

Test(addr_round_trip, max_rails)
{
	struct mrail_addr addr;

	make_addr(&addr, MRAIL_MAX_RAILS, 0);
	assert_round_trip(&addr);
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
	set_rail(&addr.rails[0], "a", 0, 1, 0);
	assert_round_trip(&addr);
	cr_assert_eq(mrail_addr_encoded_len(&addr),
		     MRAIL_ADDR_HEADER_LEN + MRAIL_ADDR_RAIL_OVERHEAD + 1 + 1);
}

Test(addr_round_trip, every_stack_character)
{
	struct mrail_addr addr;

	make_addr(&addr, 2, 0);
	set_rail(&addr.rails[0], "abcdefghijklmnopqrstuvwxyz;0123456789_",
		 7, 4, 1);
	set_rail(&addr.rails[1], "_;_", 8, 4, 2);
	assert_round_trip(&addr);
}

/* ---- exact layout ---- */

Test(addr_layout, bytes_are_little_endian_and_in_order)
{
	static const uint8_t expect[] = {
		/* header: magic, version, rail count, flags, reserved */
		'm', 'r', 'a', MRAIL_ADDR_VERSION, 1, MRAIL_ADDR_FLAG_PARTIAL,
		0, 0,
		/* rail 1: name length, name, format, address length, address */
		3, 't', 'c', 'p',
		0x01, 0x02, 0x03, 0x04,
		0x03, 0x00,
		0xaa, 0xbb, 0xcc,
	};
	struct mrail_addr addr, decoded;
	uint8_t blob[64];
	char err[MRAIL_ERR_MAX];

	memset(&addr, 0, sizeof(addr));
	addr.rail_count = 1;
	addr.flags = MRAIL_ADDR_FLAG_PARTIAL;
	strcpy(addr.rails[0].stack, "tcp");
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
	cr_assert_str_eq(decoded.rails[0].stack, "tcp");
	cr_assert_eq(decoded.rails[0].bytes[3], 0,
		     "decoded struct is zero past len");
	cr_assert_eq(decoded.rails[0].stack[5], 0);
	cr_assert_eq(decoded.rails[3].len, 0);
}

Test(addr_layout, length_fields_above_one_byte)
{
	struct mrail_addr addr;
	uint8_t blob[MRAIL_ADDR_MAX_LEN];

	make_addr(&addr, 1, 0);
	addr.rails[0].len = MRAIL_RAIL_ADDR_MAX;
	encode_ok(&addr, blob, sizeof(blob));
	/* header 8, name length 1, "tcp;ofi_rxm" 11, format 4: length at 24. */
	cr_assert_eq(blob[24], MRAIL_RAIL_ADDR_MAX & 0xff);
	cr_assert_eq(blob[25], MRAIL_RAIL_ADDR_MAX >> 8);
}

/* ---- malformed blobs ---- */

/* Offset of rail i's first byte (its name length) in addr's encoding. */
static size_t rail_offset(const struct mrail_addr *addr, unsigned rail)
{
	size_t off = MRAIL_ADDR_HEADER_LEN;
	unsigned i;

	for (i = 0; i < rail; i++)
		off += MRAIL_ADDR_RAIL_OVERHEAD + strlen(addr->rails[i].stack) +
		       addr->rails[i].len;
	return off;
}

/* A valid two-rail blob and its decoded form, for tests to break. */
struct sample {
	struct mrail_addr addr;
	uint8_t blob[MRAIL_ADDR_MAX_LEN + 16];
	size_t len;
};

static void sample_init(struct sample *s)
{
	make_addr(&s->addr, 2, 0);
	s->len = encode_ok(&s->addr, s->blob, sizeof(s->blob));
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
	assert_byte_refused(3, 0, "version 0 is not supported", "version 1");
	assert_byte_refused(3, 2, "version 2 is not supported");
	assert_byte_refused(3, 255, "version 255 is not supported");
}

Test(addr_malformed, rail_count)
{
	struct sample s;

	assert_byte_refused(4, 0, "has 0 rails, must have 1..8");
	assert_byte_refused(4, 9, "has 9 rails, must have 1..8");
	assert_byte_refused(4, 255, "has 255 rails");

	/* Counts that disagree with the rails that follow. */
	assert_byte_refused(4, 1, "34 stray bytes after its last rail",
			    "rail 1 ends at offset 42 of 76");
	sample_init(&s);
	s.blob[4] = 3;
	assert_decode_fails(s.blob, s.len, "truncated",
			    "rail 3 stack name length");
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

Test(addr_malformed, reserved)
{
	assert_byte_refused(6, 0x01, "reserved field is 0x0001, must be zero");
	assert_byte_refused(7, 0x01, "reserved field is 0x0100");
	assert_byte_refused(7, 0x80, "reserved field is 0x8000");
}

Test(addr_malformed, stack_name_length)
{
	struct sample s;
	size_t rail1, rail2;

	sample_init(&s);
	rail1 = rail_offset(&s.addr, 0);
	rail2 = rail_offset(&s.addr, 1);
	assert_byte_refused(rail1, 0, "rail 1 stack name length 0 is out of "
			    "range (1..63)");
	assert_byte_refused(rail1, 64,
			    "rail 1 stack name length 64 is out of range");
	assert_byte_refused(rail1, 255, "rail 1 stack name length 255");
	assert_byte_refused(rail2, 0, "rail 2 stack name length 0");
	assert_byte_refused(rail2, MRAIL_STACK_NAME_MAX,
			    "rail 2 stack name length 64");
}

Test(addr_malformed, stack_name_characters)
{
	struct sample s;
	size_t name1, name2;

	sample_init(&s);
	name1 = rail_offset(&s.addr, 0) + 1;
	name2 = rail_offset(&s.addr, 1) + 1;
	assert_byte_refused(name1, 'T',
			    "rail 1 stack name has byte 0x54 at position 1",
			    "only a-z, 0-9, '_' and ';'");
	assert_byte_refused(name1 + 3, 0,
			    "rail 1 stack name has byte 0x00 at position 4");
	assert_byte_refused(name1 + 10, ' ', "byte 0x20 at position 11");
	assert_byte_refused(name1 + 4, '-', "byte 0x2d at position 5");
	assert_byte_refused(name1 + 4, '.', "byte 0x2e");
	assert_byte_refused(name1 + 4, '@', "byte 0x40");
	assert_byte_refused(name1 + 4, '"', "byte 0x22");
	assert_byte_refused(name2 + 2, 0xff,
			    "rail 2 stack name has byte 0xff at position 3");
	assert_byte_refused(name2 + 2, 0x80, "rail 2 stack name has byte 0x80");
}

Test(addr_malformed, stack_name_empty_provider)
{
	struct sample s;
	size_t name1, name2;

	sample_init(&s);
	name1 = rail_offset(&s.addr, 0) + 1;
	name2 = rail_offset(&s.addr, 1) + 1;
	/* "tcp;ofi_rxm" is 11 bytes: 0..2 "tcp", 3 ';', 4..10 "ofi_rxm". */
	assert_byte_refused(name1, ';', "rail 1 stack name \";cp;ofi_rxm\"",
			    "empty provider name");
	assert_byte_refused(name1 + 10, ';', "\"tcp;ofi_rx;\"",
			    "empty provider name");
	assert_byte_refused(name1 + 4, ';', "\"tcp;;fi_rxm\"",
			    "empty provider name");
	assert_byte_refused(name2 + 2, ';',
			    "rail 2 stack name \"ud;;ofi_rxd\"");
}

Test(addr_malformed, stack_name_of_only_separators)
{
	struct mrail_addr addr;
	uint8_t blob[64];
	size_t len;

	make_addr(&addr, 1, 0);
	set_rail(&addr.rails[0], "x", 1, 1, 0);
	len = encode_ok(&addr, blob, sizeof(blob));
	blob[MRAIL_ADDR_HEADER_LEN + 1] = ';';
	assert_decode_fails(blob, len, "rail 1 stack name \";\"",
			    "empty provider name");
}

Test(addr_malformed, core_address_length)
{
	struct sample s;
	size_t len1, len2;

	sample_init(&s);
	len1 = rail_offset(&s.addr, 0) + 1 + strlen(s.addr.rails[0].stack) + 4;
	len2 = rail_offset(&s.addr, 1) + 1 + strlen(s.addr.rails[1].stack) + 4;
	assert_byte_refused(
		len1, 0,
		"rail 1 core address length 0 is out of range (1..128)");
	assert_byte_refused(len1, MRAIL_RAIL_ADDR_MAX + 1,
			    "rail 1 core address length 129 is out of range");
	assert_byte_refused(len1 + 1, 1, "rail 1 core address length 272");
	assert_byte_refused(len2 + 1, 0xff, "rail 2 core address length 65296");

	sample_init(&s);
	s.blob[len1] = 0xff;
	s.blob[len1 + 1] = 0xff;
	assert_decode_fails(s.blob, s.len, "rail 1 core address length 65535");
}

Test(addr_malformed, every_truncation_of_a_valid_blob)
{
	struct mrail_addr addr;
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	size_t len, cut;
	unsigned rails;

	for (rails = 1; rails <= MRAIL_MAX_RAILS;
	     rails += MRAIL_MAX_RAILS - 1) {
		make_addr(&addr, rails, 0);
		len = encode_ok(&addr, blob, sizeof(blob));
		for (cut = 0; cut < len; cut++)
			assert_decode_fails(blob, cut, "truncated");
	}

	make_max_addr(&addr);
	len = encode_ok(&addr, blob, sizeof(blob));
	for (cut = 0; cut < len; cut++)
		assert_decode_fails(blob, cut, "truncated");
}

Test(addr_malformed, truncation_names_the_field)
{
	struct sample s;
	size_t rail2;

	sample_init(&s);
	rail2 = rail_offset(&s.addr, 1);
	assert_decode_fails(s.blob, 0,
			    "truncated: 0 bytes, the header alone is 8");
	assert_decode_fails(s.blob, 7, "truncated: 7 bytes");
	assert_decode_fails(s.blob, 8, "rail 1 stack name length needs 1 "
			    "bytes at offset 8");
	assert_decode_fails(
		s.blob, 12,
		"rail 1 stack name needs 11 bytes at offset 9, 3 remain");
	assert_decode_fails(s.blob, 21, "rail 1 core address format");
	assert_decode_fails(s.blob, 25, "rail 1 core address length");
	assert_decode_fails(s.blob, 26, "rail 1 core address needs 16 bytes");
	assert_decode_fails(s.blob, rail2, "rail 2 stack name length");
	assert_decode_fails(s.blob, s.len - 1,
			    "rail 2 core address needs 16 bytes", "15 remain");
}

Test(addr_malformed, trailing_bytes)
{
	struct sample s;

	sample_init(&s);
	s.blob[s.len] = 0;
	assert_decode_fails(s.blob, s.len + 1,
			    "1 stray byte after its last rail",
			    "rail 2 ends at offset 76 of 77");
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
	}

	/* A name that fills the array has no NUL: 64 characters is too long. */
	make_addr(&addr, 1, 0);
	memset(addr.rails[0].stack, 'a', sizeof(addr.rails[0].stack));
	assert_encode_refuses(&addr, "unterminated stack");
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

/* Values where range checks tend to be off by one. */
static uint8_t fuzz_edge_value(uint64_t *state)
{
	static const uint8_t edges[] = {
		0, 1, 2, 8, 9, 0x3e, 0x3f, 0x40, 0x7f, 0x80, 0x81, 0xfe, 0xff,
		';', 'a',
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

Test(addr_fuzz, mutations_fail_cleanly_or_round_trip_exactly)
{
	struct mrail_addr seeds[4], decoded;
	uint8_t blob[FUZZ_CAP], again[MRAIL_ADDR_MAX_LEN];
	uint64_t state = 0x2545f491;
	size_t len, seed_len[4], accepted = 0, refused = 0;
	unsigned i, round, changes;
	char err[MRAIL_ERR_MAX];
	uint8_t seed_blob[4][MRAIL_ADDR_MAX_LEN];

	make_addr(&seeds[0], 1, 0);
	make_addr(&seeds[1], 2, 0);
	make_addr(&seeds[2], 1, MRAIL_ADDR_FLAG_PARTIAL);
	make_max_addr(&seeds[3]);
	for (i = 0; i < 4; i++)
		seed_len[i] = encode_ok(&seeds[i], seed_blob[i],
					sizeof(seed_blob[i]));

	for (round = 0; round < 20000; round++) {
		i = round % 4;
		memcpy(blob, seed_blob[i], seed_len[i]);
		len = seed_len[i];
		changes = 1 + fuzz_below(&state, 4);
		while (changes--)
			len = fuzz_mutate(&state, blob, len);

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
	set_rail(&peer.rails[0], "tcp;ofi_rxm", TEST_FORMAT_SOCKADDR_IN6, 28,
		 0x99);
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

	make_addr(&addr, 3, 0);
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

	cr_assert_eq(mrail_addr_make_partial("tcp;ofi_rxm", TEST_FORMAT_SOCKADDR_IN,
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
	other.rails[0].format = TEST_FORMAT_SOCKADDR_IN6;
	cr_assert_not(mrail_addr_same_rail(&full, &other, 0), "format differs");
	other = full;
	other.rails[0].len--;
	cr_assert_not(mrail_addr_same_rail(&full, &other, 0), "length differs");
	other = full;
	strcpy(other.rails[0].stack, "udp;ofi_rxd");
	cr_assert_not(mrail_addr_same_rail(&full, &other, 0), "stack differs");
}
