/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/wire.c: every mrail message comes from a peer, so the
 * decoders are fed each rule broken on its own, every truncation of valid
 * messages and a long stream of random mutations. Decoding always reads a
 * heap copy of exactly the length given, so AddressSanitizer catches any
 * read past it. Malformed messages are built byte by byte here, not with
 * the encoder under test, so that the layout is checked independently.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "addr_codec.h"
#include "mrail_limits.h"
#include "wire.h"

#define TEST_MAX_EAGER	16384u
#define TEST_MAX_MSG	(1ull << 32)
#define TEST_RAILS	2
#define TEST_SENDER	0x4142434445464748ull

#define ALL_FLAGS	(MRAIL_WIRE_F_TAGGED | MRAIL_WIRE_F_CQ_DATA | \
			 MRAIL_WIRE_F_ACK_REQ)

/* Big enough for any message the tests build, with room to grow it. */
#define MSG_CAP		(MRAIL_WIRE_HDR_LEN + TEST_MAX_EAGER + 64)

struct test_msg {
	uint8_t bytes[MSG_CAP];
	size_t len;
};

static const struct mrail_wire_limits test_limits = {
	.max_eager = TEST_MAX_EAGER,
	.max_msg = TEST_MAX_MSG,
	.rail_count = TEST_RAILS,
};

/* ---- raw bytes, written without the code under test ---- */

static void raw_le32(uint8_t *p, uint32_t v)
{
	unsigned i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void raw_le64(uint8_t *p, uint64_t v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* A header as the peer put it on the wire, fields exactly as given. */
static void raw_hdr(uint8_t *p, uint8_t version, uint8_t op, uint8_t flags,
		    uint8_t reserved, uint32_t payload_len, uint64_t seq,
		    uint64_t tag, uint64_t cq_data, uint64_t req_id)
{
	raw_le64(&p[40], TEST_SENDER);
	p[0] = version;
	p[1] = op;
	p[2] = flags;
	p[3] = reserved;
	raw_le32(&p[4], payload_len);
	raw_le64(&p[8], seq);
	raw_le64(&p[16], tag);
	raw_le64(&p[24], cq_data);
	raw_le64(&p[32], req_id);
}

static void fill_pattern(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t) (seed + i * 13);
}

/* A valid RTS payload for rails keys, raw. */
static size_t raw_rts(uint8_t *p, uint64_t total_len, uint64_t base,
		      unsigned rails)
{
	unsigned i;

	raw_le64(&p[0], total_len);
	raw_le64(&p[8], base);
	p[16] = (uint8_t) rails;
	memset(&p[17], 0, 7);
	for (i = 0; i < rails; i++)
		raw_le64(&p[24 + 8 * i], 0x1111111111111111ull * (i + 1));
	return 24 + 8 * (size_t) rails;
}

/*
 * A valid message of op and flags, raw: every field the rules allow is set
 * to something nonzero and distinctive, the rest are zero.
 */
static void raw_valid_msg(struct test_msg *m, uint8_t op, uint8_t flags,
			  uint32_t payload_len)
{
	uint64_t seq = 0, tag = 0, cq_data = 0, req_id = 0;
	uint8_t *payload = &m->bytes[MRAIL_WIRE_HDR_LEN];

	if (op == MRAIL_OP_EAGER || op == MRAIL_OP_RTS)
		seq = 0x0102030405060708ull;
	if (flags & MRAIL_WIRE_F_TAGGED)
		tag = 0xfedcba9876543210ull;
	if (flags & MRAIL_WIRE_F_CQ_DATA)
		cq_data = 0x8000000000000001ull;
	if (op == MRAIL_OP_RTS || op == MRAIL_OP_ACK ||
	    (op == MRAIL_OP_EAGER && (flags & MRAIL_WIRE_F_ACK_REQ)))
		req_id = 0xa5a5a5a55a5a5a5aull;

	cr_assert_leq(MRAIL_WIRE_HDR_LEN + (size_t) payload_len, MSG_CAP);
	raw_hdr(m->bytes, MRAIL_WIRE_VERSION, op, flags, 0, payload_len, seq,
		tag, cq_data, req_id);
	if (op == MRAIL_OP_RTS)
		raw_rts(payload, 1000, 0x7f0000001000ull,
			(payload_len - 24) / 8);
	else if (op == MRAIL_OP_ACK)
		memset(payload, 0, payload_len);
	else
		fill_pattern(payload, payload_len, op);
	m->len = MRAIL_WIRE_HDR_LEN + payload_len;
}

static void raw_valid_rts_msg(struct test_msg *m, unsigned rails)
{
	raw_valid_msg(m, MRAIL_OP_RTS, 0, (uint32_t) (24 + 8 * rails));
}

/* ---- decoding from buffers of exactly the length given ---- */

static uint8_t *heap_copy(const uint8_t *bytes, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	cr_assert_not_null(copy);
	memcpy(copy, bytes, len);
	return copy;
}

static int decode_hdr_exact(const uint8_t *bytes, size_t len,
			    const struct mrail_wire_limits *limits,
			    struct mrail_wire_hdr *hdr, char *err)
{
	uint8_t *copy = heap_copy(bytes, len);
	int ret;

	err[0] = '\0';
	ret = mrail_wire_hdr_decode(copy, len, limits, hdr, err, MRAIL_ERR_MAX);
	free(copy);
	return ret;
}

static int decode_rts_exact(const uint8_t *bytes, size_t len,
			    const struct mrail_wire_limits *limits,
			    struct mrail_wire_rts *rts, char *err)
{
	uint8_t *copy = heap_copy(bytes, len);
	int ret;

	err[0] = '\0';
	ret = mrail_wire_rts_decode(copy, len, limits, rts, err, MRAIL_ERR_MAX);
	free(copy);
	return ret;
}

static int decode_ack_exact(const uint8_t *bytes, size_t len, int32_t *status,
			    char *err)
{
	uint8_t *copy = heap_copy(bytes, len);
	int ret;

	err[0] = '\0';
	ret = mrail_wire_ack_decode(copy, len, status, err, MRAIL_ERR_MAX);
	free(copy);
	return ret;
}

static void assert_hdr_zero(const struct mrail_wire_hdr *hdr)
{
	static const struct mrail_wire_hdr zero;

	cr_assert_arr_eq(hdr, &zero, sizeof(zero),
			 "a refused header is left zeroed");
}

/* The decoder refuses m with ret and says so in words containing want. */
static void assert_msg_refused(const struct test_msg *m,
			       const struct mrail_wire_limits *limits,
			       int want_ret, const char *want)
{
	struct mrail_wire_hdr hdr;
	char err[MRAIL_ERR_MAX];
	int ret;

	memset(&hdr, 0x5a, sizeof(hdr));
	ret = decode_hdr_exact(m->bytes, m->len, limits, &hdr, err);
	cr_assert_eq(ret, want_ret, "decode returned %d, expected %d (%s)",
		     ret, want_ret, err);
	cr_assert_not_null(strstr(err, want), "error \"%s\" lacks \"%s\"",
			   err, want);
	assert_hdr_zero(&hdr);
}

static void assert_msg_accepted(const struct test_msg *m,
				const struct mrail_wire_limits *limits,
				struct mrail_wire_hdr *hdr)
{
	char err[MRAIL_ERR_MAX];
	int ret;

	ret = decode_hdr_exact(m->bytes, m->len, limits, hdr, err);
	cr_assert_eq(ret, 0, "valid message refused: %s", err);
}

/* hdr, which the decoder refuses, is refused by the encoder too. */
static void assert_encode_refused(const struct mrail_wire_hdr *hdr)
{
	uint8_t buf[MRAIL_WIRE_HDR_LEN];

	cr_assert_eq(mrail_wire_hdr_encode(hdr, buf, sizeof(buf)), -EINVAL,
		     "encoder accepted a header the decoder refuses");
	/* Refusal comes before any talk of room. */
	cr_assert_eq(mrail_wire_hdr_encode(hdr, buf, 0), -EINVAL);
}

static void assert_rts_refused(const uint8_t *payload, size_t len,
			       const struct mrail_wire_limits *limits,
			       const char *want)
{
	static const struct mrail_wire_rts zero;
	struct mrail_wire_rts rts;
	char err[MRAIL_ERR_MAX];
	int ret;

	memset(&rts, 0x5a, sizeof(rts));
	ret = decode_rts_exact(payload, len, limits, &rts, err);
	cr_assert_eq(ret, -EINVAL, "RTS decode returned %d (%s)", ret, err);
	cr_assert_not_null(strstr(err, want), "error \"%s\" lacks \"%s\"",
			   err, want);
	cr_assert_arr_eq(&rts, &zero, sizeof(zero),
			 "a refused RTS is left zeroed");
}

/* ---- round trips ---- */

/* hdr encodes, then m (hdr followed by payload) decodes back to hdr. */
static void assert_hdr_round_trip(const struct mrail_wire_hdr *hdr,
				  const uint8_t *payload,
				  const struct mrail_wire_limits *limits)
{
	struct test_msg m;
	struct mrail_wire_hdr back;
	int ret;

	ret = mrail_wire_hdr_encode(hdr, m.bytes, sizeof(m.bytes));
	cr_assert_eq(ret, MRAIL_WIRE_HDR_LEN, "encode op %u flags 0x%02x: %d",
		     hdr->op, hdr->flags, ret);
	memcpy(&m.bytes[MRAIL_WIRE_HDR_LEN], payload, hdr->payload_len);
	m.len = MRAIL_WIRE_HDR_LEN + hdr->payload_len;
	assert_msg_accepted(&m, limits, &back);
	cr_assert_eq(back.op, hdr->op);
	cr_assert_eq(back.flags, hdr->flags);
	cr_assert_eq(back.payload_len, hdr->payload_len);
	cr_assert_eq(back.seq, hdr->seq);
	cr_assert_eq(back.tag, hdr->tag);
	cr_assert_eq(back.cq_data, hdr->cq_data);
	cr_assert_eq(back.req_id, hdr->req_id);
	cr_assert_eq(back.sender, hdr->sender);
}

/* The raw valid message decodes, and encodes back to the same bytes. */
static void assert_raw_round_trip(const struct test_msg *m,
				  const struct mrail_wire_limits *limits)
{
	struct mrail_wire_hdr hdr;
	uint8_t again[MRAIL_WIRE_HDR_LEN];

	assert_msg_accepted(m, limits, &hdr);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, again, sizeof(again)),
		     MRAIL_WIRE_HDR_LEN);
	cr_assert_arr_eq(again, m->bytes, MRAIL_WIRE_HDR_LEN);
}

static void make_hdr(struct mrail_wire_hdr *hdr, uint8_t op, uint8_t flags,
		     uint32_t payload_len)
{
	struct test_msg m;
	char err[MRAIL_ERR_MAX];
	int ret;

	/* The raw builder knows the rules; the decoder checks it agrees. */
	raw_valid_msg(&m, op, flags, payload_len);
	ret = decode_hdr_exact(m.bytes, m.len, &test_limits, hdr, err);
	cr_assert_eq(ret, 0, "raw valid message refused: %s", err);
}

Test(wire_round_trip, eager_every_flag_combination)
{
	static const uint32_t lens[] = { 0, 1, 100, TEST_MAX_EAGER };
	static uint8_t payload[TEST_MAX_EAGER];
	struct mrail_wire_hdr hdr;
	struct test_msg m;
	unsigned flags, i;

	fill_pattern(payload, sizeof(payload), 3);
	for (flags = 0; flags <= ALL_FLAGS; flags++) {
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			raw_valid_msg(&m, MRAIL_OP_EAGER, (uint8_t) flags,
				      lens[i]);
			assert_raw_round_trip(&m, &test_limits);
			make_hdr(&hdr, MRAIL_OP_EAGER, (uint8_t) flags, lens[i]);
			assert_hdr_round_trip(&hdr, payload, &test_limits);
		}
	}
}

Test(wire_round_trip, rts_every_flag_combination_and_rail_count)
{
	struct mrail_wire_limits limits = test_limits;
	struct mrail_wire_hdr hdr;
	struct test_msg m;
	unsigned flags, rails;

	for (rails = 1; rails <= MRAIL_MAX_RAILS; rails++) {
		limits.rail_count = (uint8_t) rails;
		for (flags = 0; flags <= ALL_FLAGS; flags++) {
			if (flags & MRAIL_WIRE_F_ACK_REQ)
				continue;
			raw_valid_msg(&m, MRAIL_OP_RTS, (uint8_t) flags,
				      (uint32_t) mrail_wire_rts_len(
						(uint8_t) rails));
			assert_raw_round_trip(&m, &limits);
			assert_msg_accepted(&m, &limits, &hdr);
			assert_hdr_round_trip(&hdr,
					      &m.bytes[MRAIL_WIRE_HDR_LEN],
					      &limits);
		}
	}
}

Test(wire_round_trip, ack_and_hello)
{
	struct mrail_wire_hdr hdr;
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	assert_raw_round_trip(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_HELLO, 0, 1);
	assert_raw_round_trip(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_HELLO, 0, MRAIL_ADDR_MAX_LEN);
	assert_raw_round_trip(&m, &test_limits);

	/* ACK answers request ids at both ends of their range. */
	memset(&hdr, 0, sizeof(hdr));
	hdr.op = MRAIL_OP_ACK;
	hdr.payload_len = MRAIL_WIRE_ACK_LEN;
	hdr.sender = UINT64_MAX;
	assert_hdr_round_trip(&hdr, (const uint8_t[8]) { 0 }, &test_limits);
	hdr.req_id = UINT64_MAX;
	assert_hdr_round_trip(&hdr, (const uint8_t[8]) { 0 }, &test_limits);
}

Test(wire_round_trip, extreme_field_values)
{
	struct mrail_wire_hdr hdr = {
		.sender = TEST_SENDER,
		.op = MRAIL_OP_EAGER,
		.flags = ALL_FLAGS,
		.payload_len = 0,
		.seq = UINT64_MAX,
		.tag = UINT64_MAX,
		.cq_data = UINT64_MAX,
		.req_id = UINT64_MAX,
	};

	static const uint8_t no_payload[1];

	assert_hdr_round_trip(&hdr, no_payload, &test_limits);
	/* A flag allows its field but does not require it to be nonzero. */
	hdr.seq = hdr.tag = hdr.cq_data = hdr.req_id = 0;
	assert_hdr_round_trip(&hdr, no_payload, &test_limits);
}

Test(wire_round_trip, hello_carries_a_real_address)
{
	struct mrail_addr addr, back;
	struct mrail_wire_hdr hdr = { .sender = TEST_SENDER, .op = MRAIL_OP_HELLO };
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	char err[MRAIL_ERR_MAX] = "";
	struct test_msg m;
	ssize_t alen;
	int ret;

	memset(&addr, 0, sizeof(addr));
	addr.rail_count = 2;
	strcpy(addr.rails[0].stack, "tcp;ofi_rxm");
	strcpy(addr.rails[1].stack, "tcp;ofi_rxm");
	addr.rails[0].len = addr.rails[1].len = 16;
	fill_pattern(addr.rails[0].bytes, 16, 1);
	fill_pattern(addr.rails[1].bytes, 16, 2);
	alen = mrail_addr_encode(&addr, blob, sizeof(blob));
	cr_assert_gt(alen, 0);

	hdr.payload_len = (uint32_t) alen;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, m.bytes, sizeof(m.bytes)),
		     MRAIL_WIRE_HDR_LEN);
	memcpy(&m.bytes[MRAIL_WIRE_HDR_LEN], blob, (size_t) alen);
	m.len = MRAIL_WIRE_HDR_LEN + (size_t) alen;
	assert_msg_accepted(&m, &test_limits, &hdr);
	ret = mrail_addr_decode(&m.bytes[MRAIL_WIRE_HDR_LEN], hdr.payload_len,
				&back, err, sizeof(err));
	cr_assert_eq(ret, 0, "%s", err);
	cr_assert_arr_eq(&back, &addr, sizeof(addr));
}

/* ---- exact layout ---- */

Test(wire_layout, header_bytes_are_little_endian_at_documented_offsets)
{
	static const uint8_t want[MRAIL_WIRE_HDR_LEN] = {
		5, 1, 0x07, 0,
		0x10, 0x00, 0x00, 0x00,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,
		0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21,
		0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31,
		0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41,
	};
	struct mrail_wire_hdr hdr = {
		.sender = TEST_SENDER,
		.op = MRAIL_OP_EAGER,
		.flags = ALL_FLAGS,
		.payload_len = 16,
		.seq = 0x0102030405060708ull,
		.tag = 0x1112131415161718ull,
		.cq_data = 0x2122232425262728ull,
		.req_id = 0x3132333435363738ull,
	};
	uint8_t buf[MRAIL_WIRE_HDR_LEN + 1];

	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)),
		     MRAIL_WIRE_HDR_LEN);
	cr_assert_arr_eq(buf, want, sizeof(want));
	cr_assert_eq(buf[MRAIL_WIRE_HDR_LEN], 0xee, "wrote past the header");
}

Test(wire_layout, rts_bytes)
{
	static const uint8_t want[40] = {
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x10, 0x00, 0x00, 0x7f, 0x00, 0x00, 0x00,
		2, 0, 0, 0, 0, 0, 0, 0,
		0x0a, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	struct mrail_wire_rts rts = {
		.total_len = 0x100000,
		.base = 0x7f00001000ull,
		.rail_count = 2,
		.keys = { 10, UINT64_MAX, 0x99 },
	};
	uint8_t buf[41];

	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(mrail_wire_rts_len(2), 40);
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, sizeof(buf)), 40);
	cr_assert_arr_eq(buf, want, sizeof(want));
	cr_assert_eq(buf[40], 0xee, "wrote a key past the rail count");
}

Test(wire_layout, ack_bytes)
{
	static const uint8_t want[8] = { 0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0 };
	uint8_t buf[9];

	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(mrail_wire_ack_encode(-2, buf, sizeof(buf)),
		     MRAIL_WIRE_ACK_LEN);
	cr_assert_arr_eq(buf, want, sizeof(want));
	cr_assert_eq(buf[8], 0xee);
}

Test(wire_layout, rts_len)
{
	cr_assert_eq(mrail_wire_rts_len(1), MRAIL_WIRE_RTS_FIXED_LEN + 8);
	cr_assert_eq(mrail_wire_rts_len(MRAIL_MAX_RAILS),
		     MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS);
}

/* ---- header framing ---- */

Test(wire_hdr_frame, version)
{
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 4);
	m.bytes[0] = 1;
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "wire version 1 is not supported (expected 5)");
	m.bytes[0] = 0;
	assert_msg_refused(&m, &test_limits, -EINVAL, "wire version 0");
}

Test(wire_hdr_frame, reserved_byte)
{
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	m.bytes[3] = 0x80;
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "header reserved byte is 0x80, expected 0");
}

Test(wire_hdr_frame, payload_len_must_match_what_follows)
{
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 10);
	raw_le32(&m.bytes[4], 11);
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "payload length 11 does not match the 10 bytes");
	raw_le32(&m.bytes[4], 9);
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "payload length 9 does not match the 10 bytes");
	raw_le32(&m.bytes[4], UINT32_MAX);
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "payload length 4294967295 does not match");
}

/* Cutting a valid message anywhere leaves it refused, never overread. */
static void assert_every_truncation_refused(const struct test_msg *m,
					    const struct mrail_wire_limits *l)
{
	struct test_msg cut;
	size_t len;

	for (len = 0; len < m->len; len++) {
		cut = *m;
		cut.len = len;
		assert_msg_refused(&cut, l, -EINVAL,
				   len < MRAIL_WIRE_HDR_LEN ?
				   "wire message is truncated" :
				   "does not match the");
	}
}

Test(wire_hdr_frame, every_truncation_of_every_op)
{
	struct mrail_wire_limits limits = test_limits;
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, ALL_FLAGS, 100);
	assert_every_truncation_refused(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 0);
	assert_every_truncation_refused(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	assert_every_truncation_refused(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_HELLO, 0, 200);
	assert_every_truncation_refused(&m, &test_limits);
	limits.rail_count = MRAIL_MAX_RAILS;
	raw_valid_rts_msg(&m, MRAIL_MAX_RAILS);
	assert_every_truncation_refused(&m, &limits);
}

Test(wire_hdr_frame, truncation_message_names_lengths)
{
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 0);
	m.len = 47;
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "truncated: 47 bytes, the header alone is 48");
}

/* A receiver finds the peer by the sender key: without one, nobody sent it. */
Test(wire_hdr_frame, sender_key_zero)
{
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_EAGER, .payload_len = 4,
	};
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 4);
	memset(&m.bytes[40], 0, 8);
	assert_msg_refused(&m, &test_limits, -EINVAL, "sender key is 0");
	assert_encode_refused(&hdr);
	m.bytes[47] = 0x80;
	assert_msg_accepted(&m, &test_limits, &hdr);
	cr_assert_eq(hdr.sender, 0x8000000000000000ull);
}

/* ---- ops and flags ---- */

Test(wire_hdr_rules, unknown_op)
{
	static const uint8_t ops[] = { 0, 14, 0x7f, 0xff };
	struct mrail_wire_hdr hdr;
	struct test_msg m;
	char want[64];
	unsigned i;

	for (i = 0; i < sizeof(ops); i++) {
		raw_valid_msg(&m, MRAIL_OP_HELLO, 0, 4);
		m.bytes[1] = ops[i];
		snprintf(want, sizeof(want), "unknown op %u", ops[i]);
		assert_msg_refused(&m, &test_limits, -EINVAL, want);

		memset(&hdr, 0, sizeof(hdr));
		hdr.op = ops[i];
		hdr.payload_len = 4;
		assert_encode_refused(&hdr);
	}
}

static const char *op_name(uint8_t op)
{
	switch (op) {
	case MRAIL_OP_EAGER:
		return "EAGER";
	case MRAIL_OP_RTS:
		return "RTS";
	case MRAIL_OP_ACK:
		return "ACK";
	default:
		return "HELLO";
	}
}

static uint32_t valid_payload_len(uint8_t op)
{
	switch (op) {
	case MRAIL_OP_RTS:
		return (uint32_t) mrail_wire_rts_len(TEST_RAILS);
	case MRAIL_OP_ACK:
		return MRAIL_WIRE_ACK_LEN;
	default:
		return 16;
	}
}

/* Each single flag bit an op does not allow is refused by name. */
static void assert_flag_refused(uint8_t op, uint8_t allowed, uint8_t bit)
{
	struct mrail_wire_hdr hdr;
	struct test_msg m;
	char want[64];

	raw_valid_msg(&m, op, allowed, valid_payload_len(op));
	make_hdr(&hdr, op, allowed, valid_payload_len(op));
	m.bytes[2] = (uint8_t) (allowed | bit);
	snprintf(want, sizeof(want), "flags 0x%02x not allowed for %s",
		 bit, op_name(op));
	assert_msg_refused(&m, &test_limits, -EINVAL, want);
	hdr.flags = (uint8_t) (allowed | bit);
	assert_encode_refused(&hdr);
}

Test(wire_hdr_rules, flags_each_op_refuses)
{
	/* HELLO allows REPLY and INTRO, one at a time (hello_intro_flag
	 * checks the pair): each is the other's "allowed alongside". */
	static const struct {
		uint8_t op, allowed, also_allowed;
	} ops[] = {
		{ MRAIL_OP_EAGER, ALL_FLAGS, 0 },
		{ MRAIL_OP_RTS, MRAIL_WIRE_F_TAGGED | MRAIL_WIRE_F_CQ_DATA, 0 },
		{ MRAIL_OP_ACK, MRAIL_WIRE_F_AGAIN, 0 },
		{ MRAIL_OP_HELLO, MRAIL_WIRE_F_REPLY, MRAIL_WIRE_F_INTRO },
		{ MRAIL_OP_HELLO, MRAIL_WIRE_F_INTRO, MRAIL_WIRE_F_REPLY },
	};
	unsigned i, bit;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		for (bit = 1; bit <= 0x80; bit <<= 1) {
			if ((ops[i].allowed | ops[i].also_allowed) & bit)
				continue;
			/* With and without the allowed flags set alongside. */
			assert_flag_refused(ops[i].op, 0, (uint8_t) bit);
			assert_flag_refused(ops[i].op, ops[i].allowed,
					    (uint8_t) bit);
		}
	}
}

Test(wire_hdr_rules, hello_reply_flag)
{
	struct mrail_wire_hdr hdr, out;
	struct test_msg m;
	char err[MRAIL_ERR_MAX];

	raw_valid_msg(&m, MRAIL_OP_HELLO, MRAIL_WIRE_F_REPLY, 12);
	cr_assert_eq(mrail_wire_hdr_decode(m.bytes, m.len, &test_limits, &out, err,
					   sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.flags, MRAIL_WIRE_F_REPLY);
	make_hdr(&hdr, MRAIL_OP_HELLO, MRAIL_WIRE_F_REPLY, 12);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, m.bytes, sizeof(m.bytes)),
		     MRAIL_WIRE_HDR_LEN);
	/* REPLY belongs to HELLO alone. */
	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	m.bytes[2] = MRAIL_WIRE_F_REPLY;
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "flags 0x08 not allowed for ACK");
}

Test(wire_hdr_rules, hello_intro_flag)
{
	struct mrail_wire_hdr hdr, out;
	struct test_msg m;
	char err[MRAIL_ERR_MAX];

	raw_valid_msg(&m, MRAIL_OP_HELLO, MRAIL_WIRE_F_INTRO, 12);
	cr_assert_eq(mrail_wire_hdr_decode(m.bytes, m.len, &test_limits, &out, err,
					   sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.flags, MRAIL_WIRE_F_INTRO);
	make_hdr(&hdr, MRAIL_OP_HELLO, MRAIL_WIRE_F_INTRO, 12);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, m.bytes, sizeof(m.bytes)),
		     MRAIL_WIRE_HDR_LEN);
	/* An answer is never an introduction: one encoding per meaning. */
	raw_valid_msg(&m, MRAIL_OP_HELLO, 0, 12);
	m.bytes[2] = MRAIL_WIRE_F_REPLY | MRAIL_WIRE_F_INTRO;
	assert_msg_refused(&m, &test_limits, -EINVAL, "both REPLY and INTRO");
	make_hdr(&hdr, MRAIL_OP_HELLO, MRAIL_WIRE_F_INTRO, 12);
	hdr.flags |= MRAIL_WIRE_F_REPLY;
	assert_encode_refused(&hdr);
	/* INTRO belongs to HELLO alone. */
	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	m.bytes[2] = MRAIL_WIRE_F_INTRO;
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "flags 0x20 not allowed for ACK");
}

Test(wire_hdr_rules, flags_message_examples)
{
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	m.bytes[2] = MRAIL_WIRE_F_TAGGED;
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "flags 0x01 not allowed for ACK");
	raw_valid_msg(&m, MRAIL_OP_RTS, 0, valid_payload_len(MRAIL_OP_RTS));
	m.bytes[2] = MRAIL_WIRE_F_ACK_REQ;
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "flags 0x04 not allowed for RTS");
}

/* ---- fields that must be zero ---- */

/* Sets the u64 at off (in a raw message) and in hdr, checks both refused. */
static void assert_field_refused(uint8_t op, uint8_t flags, size_t off,
				 uint64_t value, const char *want)
{
	struct mrail_wire_hdr hdr;
	struct test_msg m;

	raw_valid_msg(&m, op, flags, valid_payload_len(op));
	make_hdr(&hdr, op, flags, valid_payload_len(op));
	raw_le64(&m.bytes[off], value);
	assert_msg_refused(&m, &test_limits, -EINVAL, want);
	switch (off) {
	case 8:
		hdr.seq = value;
		break;
	case 16:
		hdr.tag = value;
		break;
	case 24:
		hdr.cq_data = value;
		break;
	default:
		hdr.req_id = value;
		break;
	}
	assert_encode_refused(&hdr);
}

Test(wire_hdr_rules, seq_only_for_eager_and_rts)
{
	assert_field_refused(MRAIL_OP_ACK, 0, 8, 7,
			     "ACK carries seq 7, expected 0");
	assert_field_refused(MRAIL_OP_HELLO, 0, 8, UINT64_MAX,
			     "HELLO carries seq 18446744073709551615, "
			     "expected 0");
}

Test(wire_hdr_rules, tag_only_with_tagged)
{
	assert_field_refused(MRAIL_OP_EAGER, MRAIL_WIRE_F_CQ_DATA |
			     MRAIL_WIRE_F_ACK_REQ, 16, 0x42,
			     "EAGER carries tag 0x42 without the TAGGED flag");
	assert_field_refused(MRAIL_OP_RTS, 0, 16, 1,
			     "RTS carries tag 0x1 without the TAGGED flag");
	assert_field_refused(MRAIL_OP_ACK, 0, 16, 1ull << 63,
			     "ACK carries tag 0x8000000000000000");
	assert_field_refused(MRAIL_OP_HELLO, 0, 16, 3,
			     "HELLO carries tag 0x3");
}

Test(wire_hdr_rules, cq_data_only_with_cq_data)
{
	assert_field_refused(MRAIL_OP_EAGER, MRAIL_WIRE_F_TAGGED, 24, 0xabc,
			     "EAGER carries cq_data 0xabc without the CQ_DATA "
			     "flag");
	assert_field_refused(MRAIL_OP_RTS, MRAIL_WIRE_F_TAGGED, 24, 5,
			     "RTS carries cq_data 0x5");
	assert_field_refused(MRAIL_OP_ACK, 0, 24, 5, "ACK carries cq_data 0x5");
	assert_field_refused(MRAIL_OP_HELLO, 0, 24, 5,
			     "HELLO carries cq_data 0x5");
}

Test(wire_hdr_rules, req_id_only_where_answered)
{
	assert_field_refused(MRAIL_OP_EAGER, MRAIL_WIRE_F_TAGGED |
			     MRAIL_WIRE_F_CQ_DATA, 32, 12,
			     "EAGER carries req_id 12, expected 0 (no ACK_REQ");
	assert_field_refused(MRAIL_OP_HELLO, 0, 32, 1,
			     "HELLO carries req_id 1, expected 0");
}

/* ---- payload lengths ---- */

static void assert_payload_len_refused(uint8_t op, uint32_t len,
				       const struct mrail_wire_limits *limits,
				       int want_ret, const char *want)
{
	struct mrail_wire_hdr hdr = { .sender = TEST_SENDER, .op = op, .payload_len = len };
	struct test_msg m;

	if (op == MRAIL_OP_RTS || op == MRAIL_OP_ACK)
		hdr.req_id = 1;
	if (op == MRAIL_OP_EAGER || op == MRAIL_OP_RTS)
		hdr.seq = 1;
	raw_hdr(m.bytes, MRAIL_WIRE_VERSION, op, 0, 0, len, hdr.seq, 0, 0,
		hdr.req_id);
	cr_assert_leq(MRAIL_WIRE_HDR_LEN + (size_t) len, sizeof(m.bytes));
	fill_pattern(&m.bytes[MRAIL_WIRE_HDR_LEN], len, 9);
	m.len = MRAIL_WIRE_HDR_LEN + len;
	assert_msg_refused(&m, limits, want_ret, want);
	/* Only the receiver's limits are beyond what the encoder can know. */
	if (want_ret == -EINVAL && !strstr(want, "this endpoint"))
		assert_encode_refused(&hdr);
}

Test(wire_payload, eager_limit_boundaries)
{
	struct mrail_wire_limits limits = test_limits;
	struct mrail_wire_hdr hdr;
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, TEST_MAX_EAGER);
	assert_msg_accepted(&m, &limits, &hdr);
	cr_assert_eq(hdr.payload_len, TEST_MAX_EAGER);
	assert_payload_len_refused(MRAIL_OP_EAGER, TEST_MAX_EAGER + 1, &limits,
				   -EMSGSIZE, "EAGER payload of 16385 bytes "
				   "exceeds the eager limit 16384");

	/* A limit of 0 still lets an empty message through. */
	limits.max_eager = 0;
	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 0);
	assert_msg_accepted(&m, &limits, &hdr);
	assert_payload_len_refused(MRAIL_OP_EAGER, 1, &limits, -EMSGSIZE,
				   "EAGER payload of 1 bytes exceeds the eager "
				   "limit 0");
}

Test(wire_payload, eager_limit_message_example)
{
	static const struct mrail_wire_limits limits = {
		.max_eager = 16384, .max_msg = 1, .rail_count = 1,
	};
	struct mrail_wire_hdr hdr = {
		.sender = TEST_SENDER,
		.op = MRAIL_OP_EAGER, .payload_len = 70000,
	};
	char err[MRAIL_ERR_MAX] = "";
	uint8_t *msg = calloc(1, MRAIL_WIRE_HDR_LEN + 70000);
	int ret;

	cr_assert_not_null(msg);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN),
		     MRAIL_WIRE_HDR_LEN, "the encoder leaves limits to peers");
	ret = mrail_wire_hdr_decode(msg, MRAIL_WIRE_HDR_LEN + 70000, &limits,
				    &hdr, err, sizeof(err));
	free(msg);
	cr_assert_eq(ret, -EMSGSIZE);
	cr_assert_str_eq(err,
		"EAGER payload of 70000 bytes exceeds the eager limit 16384");
}

Test(wire_payload, ack_length)
{
	assert_payload_len_refused(MRAIL_OP_ACK, 0, &test_limits, -EINVAL,
				   "ACK payload of 0 bytes, expected 8");
	assert_payload_len_refused(MRAIL_OP_ACK, 7, &test_limits, -EINVAL,
				   "ACK payload of 7 bytes, expected 8");
	assert_payload_len_refused(MRAIL_OP_ACK, 9, &test_limits, -EINVAL,
				   "ACK payload of 9 bytes, expected 8");
}

Test(wire_payload, hello_min_and_max_length)
{
	struct mrail_wire_hdr hdr;
	struct test_msg m;
	char want[96];

	raw_valid_msg(&m, MRAIL_OP_HELLO, 0, 1);
	assert_msg_accepted(&m, &test_limits, &hdr);
	raw_valid_msg(&m, MRAIL_OP_HELLO, 0, MRAIL_ADDR_MAX_LEN);
	assert_msg_accepted(&m, &test_limits, &hdr);
	snprintf(want, sizeof(want), "HELLO payload of 0 bytes, expected an "
		 "mrail address of 1..%d bytes", MRAIL_ADDR_MAX_LEN);
	assert_payload_len_refused(MRAIL_OP_HELLO, 0, &test_limits, -EINVAL,
				   want);
	snprintf(want, sizeof(want), "HELLO payload of %d bytes",
		 MRAIL_ADDR_MAX_LEN + 1);
	assert_payload_len_refused(MRAIL_OP_HELLO, MRAIL_ADDR_MAX_LEN + 1,
				   &test_limits, -EINVAL, want);
}

Test(wire_payload, rts_length_is_a_whole_descriptor)
{
	static const uint32_t bad[] = {
		0, 23, 24, 31, 33, 39, 41, 24 + 8 * (MRAIL_MAX_RAILS + 1),
	};
	char want[64];
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want),
			 "RTS payload of %u bytes is not a descriptor", bad[i]);
		assert_payload_len_refused(MRAIL_OP_RTS, bad[i], &test_limits,
					   -EINVAL, want);
	}
}

Test(wire_payload, rts_rail_count_mismatch_in_header)
{
	struct mrail_wire_limits limits = test_limits;
	struct mrail_wire_hdr hdr;
	struct test_msg m;

	raw_valid_rts_msg(&m, 3);
	assert_msg_refused(&m, &limits, -EINVAL,
			   "RTS carries 3 rails, this endpoint has 2");
	limits.rail_count = 3;
	assert_msg_accepted(&m, &limits, &hdr);
	/* The shape is fine, so the encoder, knowing no receiver, agrees. */
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, m.bytes, sizeof(m.bytes)),
		     MRAIL_WIRE_HDR_LEN);
}

Test(wire_payload, receiver_rail_count_must_be_sane)
{
	struct mrail_wire_limits limits = test_limits;
	struct test_msg m;

	raw_valid_rts_msg(&m, 1);
	limits.rail_count = 0;
	assert_msg_refused(&m, &limits, -EINVAL,
			   "this endpoint's rail count 0 is out of range");
	limits.rail_count = MRAIL_MAX_RAILS + 1;
	assert_msg_refused(&m, &limits, -EINVAL,
			   "this endpoint's rail count 9 is out of range");
}

/* ---- header encoder and decoder arguments ---- */

Test(wire_hdr_args, encoder_room_and_null)
{
	struct mrail_wire_hdr hdr;
	uint8_t buf[MRAIL_WIRE_HDR_LEN];

	make_hdr(&hdr, MRAIL_OP_EAGER, 0, 0);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, MRAIL_WIRE_HDR_LEN - 1),
		     -ENOSPC);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, 0), -ENOSPC);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, NULL, sizeof(buf)), -EINVAL);
	cr_assert_eq(mrail_wire_hdr_encode(NULL, buf, sizeof(buf)), -EINVAL);
}

Test(wire_hdr_args, decoder_null_arguments)
{
	struct mrail_wire_hdr hdr;
	char err[MRAIL_ERR_MAX];
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 0);
	cr_assert_eq(mrail_wire_hdr_decode(m.bytes, m.len, NULL, &hdr, err,
					   sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_wire_hdr_decode(m.bytes, m.len, &test_limits, NULL,
					   err, sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_wire_hdr_decode(NULL, m.len, &test_limits, &hdr,
					   err, sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_wire_hdr_decode(NULL, 0, &test_limits, &hdr, err,
					   sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "truncated"));
}

Test(wire_hdr_args, error_buffer_optional_and_bounded)
{
	struct mrail_wire_hdr hdr;
	char err[8];
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 0);
	m.bytes[1] = 0x7f;
	cr_assert_eq(mrail_wire_hdr_decode(m.bytes, m.len, &test_limits, &hdr,
					   NULL, 0), -EINVAL);
	memset(err, 'x', sizeof(err));
	cr_assert_eq(mrail_wire_hdr_decode(m.bytes, m.len, &test_limits, &hdr,
					   err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "unknown");
}

/* ---- RTS payload ---- */

static void assert_rts_round_trip(const struct mrail_wire_rts *rts,
				  const struct mrail_wire_limits *limits)
{
	uint8_t buf[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	uint8_t again[sizeof(buf)];
	struct mrail_wire_rts back;
	char err[MRAIL_ERR_MAX];
	int len, ret;

	len = mrail_wire_rts_encode(rts, buf, sizeof(buf));
	cr_assert_eq(len, (int) mrail_wire_rts_len(rts->rail_count));
	ret = decode_rts_exact(buf, (size_t) len, limits, &back, err);
	cr_assert_eq(ret, 0, "%s", err);
	cr_assert_arr_eq(&back, rts, sizeof(back));
	cr_assert_eq(mrail_wire_rts_encode(&back, again, sizeof(again)), len);
	cr_assert_arr_eq(again, buf, (size_t) len);
}

static void make_rts(struct mrail_wire_rts *rts, unsigned rails)
{
	unsigned i;

	memset(rts, 0, sizeof(*rts));
	rts->total_len = 1 << 20;
	rts->base = 0x7f1234560000ull;
	rts->rail_count = (uint8_t) rails;
	for (i = 0; i < rails && i < MRAIL_MAX_RAILS; i++)
		rts->keys[i] = 0x0123456789abcdefull ^ ((uint64_t) i << 56);
}

Test(wire_rts, round_trip_one_and_max_rails)
{
	struct mrail_wire_limits limits = test_limits;
	struct mrail_wire_rts rts;

	limits.rail_count = 1;
	make_rts(&rts, 1);
	assert_rts_round_trip(&rts, &limits);
	limits.rail_count = MRAIL_MAX_RAILS;
	make_rts(&rts, MRAIL_MAX_RAILS);
	rts.keys[MRAIL_MAX_RAILS - 1] = UINT64_MAX;
	rts.keys[0] = 0;
	assert_rts_round_trip(&rts, &limits);
}

Test(wire_rts, rail_count_mismatch)
{
	uint8_t p[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	size_t len;

	len = raw_rts(p, 100, 0, 3);
	assert_rts_refused(p, len, &test_limits,
			   "RTS carries 3 rails, this endpoint has 2");
	len = raw_rts(p, 100, 0, 0);
	assert_rts_refused(p, len, &test_limits,
			   "RTS carries 0 rails, this endpoint has 2");
	len = raw_rts(p, 100, 0, 1);
	assert_rts_refused(p, len, &test_limits,
			   "RTS carries 1 rails, this endpoint has 2");
}

Test(wire_rts, length_must_match_rail_count)
{
	uint8_t p[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	size_t len;

	len = raw_rts(p, 100, 0, 2);
	assert_rts_refused(p, len + 8, &test_limits,
			   "RTS payload of 48 bytes does not match its 2 rails "
			   "(expected 40 bytes)");
	assert_rts_refused(p, len + 1, &test_limits, "does not match");
}

Test(wire_rts, every_truncation)
{
	uint8_t p[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_limits limits = test_limits;
	size_t len, cut;

	limits.rail_count = MRAIL_MAX_RAILS;
	len = raw_rts(p, 100, 0, MRAIL_MAX_RAILS);
	for (cut = 0; cut < len; cut++)
		assert_rts_refused(p, cut, &limits,
				   cut < MRAIL_WIRE_RTS_FIXED_LEN ?
				   "RTS payload is truncated" :
				   "does not match its 8 rails");
}

Test(wire_rts, reserved_bytes)
{
	uint8_t p[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	char want[64];
	size_t len;
	unsigned i;

	for (i = 17; i < 24; i++) {
		len = raw_rts(p, 100, 0, TEST_RAILS);
		p[i] = 0x10;
		snprintf(want, sizeof(want),
			 "RTS reserved byte %u is 0x10, expected 0", i);
		assert_rts_refused(p, len, &test_limits, want);
	}
}

Test(wire_rts, total_length_range)
{
	uint8_t p[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_limits limits = test_limits;
	struct mrail_wire_rts rts;
	char err[MRAIL_ERR_MAX];
	size_t len;

	len = raw_rts(p, 0, 0x1000, TEST_RAILS);
	assert_rts_refused(p, len, &limits, "RTS total length 0, expected");

	len = raw_rts(p, TEST_MAX_MSG, 0x1000, TEST_RAILS);
	cr_assert_eq(decode_rts_exact(p, len, &limits, &rts, err), 0, "%s", err);
	cr_assert_eq(rts.total_len, TEST_MAX_MSG);

	len = raw_rts(p, TEST_MAX_MSG + 1, 0x1000, TEST_RAILS);
	assert_rts_refused(p, len, &limits,
			   "RTS total length 4294967297 exceeds the message "
			   "size limit 4294967296");

	/* The largest length there is, where the limit allows it. */
	limits.max_msg = UINT64_MAX;
	len = raw_rts(p, UINT64_MAX, 0, TEST_RAILS);
	cr_assert_eq(decode_rts_exact(p, len, &limits, &rts, err), 0, "%s", err);
	len = raw_rts(p, UINT64_MAX, 1, TEST_RAILS);
	assert_rts_refused(p, len, &limits, "wraps");
}

Test(wire_rts, base_plus_length_must_not_wrap)
{
	uint8_t p[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_limits limits = test_limits;
	struct mrail_wire_rts rts;
	char err[MRAIL_ERR_MAX];
	size_t len;

	limits.max_msg = UINT64_MAX;
	/* Ending exactly at the top of the address space is fine... */
	len = raw_rts(p, 0x1000, UINT64_MAX - 0x1000, TEST_RAILS);
	cr_assert_eq(decode_rts_exact(p, len, &limits, &rts, err), 0, "%s", err);
	/* ...one byte further is not. */
	len = raw_rts(p, 0x1000, UINT64_MAX - 0xfff, TEST_RAILS);
	assert_rts_refused(p, len, &limits,
			   "RTS base 0xfffffffffffff000 + total length 4096 "
			   "wraps");
	len = raw_rts(p, 1, UINT64_MAX, TEST_RAILS);
	assert_rts_refused(p, len, &limits, "wraps");
}

Test(wire_rts, encoder_refuses_what_the_decoder_refuses)
{
	uint8_t buf[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_rts rts;

	make_rts(&rts, 0);
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, sizeof(buf)), -EINVAL);
	make_rts(&rts, MRAIL_MAX_RAILS + 1);
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, sizeof(buf)), -EINVAL);
	make_rts(&rts, 2);
	rts.total_len = 0;
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, sizeof(buf)), -EINVAL);
	make_rts(&rts, 2);
	rts.base = UINT64_MAX - rts.total_len + 1;
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, sizeof(buf)), -EINVAL);
	rts.base--;
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, sizeof(buf)), 40);
}

Test(wire_rts, encoder_room_and_null)
{
	uint8_t buf[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_rts rts;

	make_rts(&rts, 2);
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, 39), -ENOSPC);
	cr_assert_eq(mrail_wire_rts_encode(&rts, buf, 40), 40);
	cr_assert_eq(mrail_wire_rts_encode(&rts, NULL, 40), -EINVAL);
	cr_assert_eq(mrail_wire_rts_encode(NULL, buf, 40), -EINVAL);
}

Test(wire_rts, decoder_null_and_bad_limits)
{
	uint8_t p[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_limits limits = test_limits;
	struct mrail_wire_rts rts;
	char err[MRAIL_ERR_MAX];
	size_t len;

	len = raw_rts(p, 100, 0, 0);
	limits.rail_count = 0;
	assert_rts_refused(p, len, &limits,
			   "this endpoint's rail count 0 is out of range");
	len = raw_rts(p, 100, 0, TEST_RAILS);
	cr_assert_eq(mrail_wire_rts_decode(p, len, NULL, &rts, err,
					   sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_wire_rts_decode(p, len, &test_limits, NULL, err,
					   sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_wire_rts_decode(NULL, len, &test_limits, &rts, err,
					   sizeof(err)), -EINVAL);
}

/* ---- ACK payload ---- */

static void raw_ack(uint8_t *p, uint32_t status_bits, uint32_t reserved)
{
	raw_le32(p, status_bits);
	raw_le32(p + 4, reserved);
}

Test(wire_ack, status_range_round_trips)
{
	static const int32_t good[] = {
		0, -1, -EAGAIN, -EMSGSIZE, -ENOENT, -4095,
	};
	uint8_t buf[MRAIL_WIRE_ACK_LEN], again[MRAIL_WIRE_ACK_LEN];
	char err[MRAIL_ERR_MAX];
	int32_t status;
	unsigned i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(mrail_wire_ack_encode(good[i], buf, sizeof(buf)),
			     MRAIL_WIRE_ACK_LEN);
		status = 12345;
		cr_assert_eq(decode_ack_exact(buf, sizeof(buf), &status, err),
			     0, "%s", err);
		cr_assert_eq(status, good[i]);
		cr_assert_eq(mrail_wire_ack_encode(status, again, sizeof(again)),
			     MRAIL_WIRE_ACK_LEN);
		cr_assert_arr_eq(again, buf, sizeof(buf));
	}
}

Test(wire_ack, status_out_of_range)
{
	static const struct {
		uint32_t bits;
		int32_t status;
		const char *want;
	} bad[] = {
		{ 1, 1, "ACK status 1, expected 0 or a negative errno "
			"(-4095..0)" },
		{ 0x7fffffff, INT32_MAX, "ACK status 2147483647" },
		{ 0xfffff000, -4096, "ACK status -4096" },
		{ 0x80000000, INT32_MIN, "ACK status -2147483648" },
	};
	uint8_t buf[MRAIL_WIRE_ACK_LEN];
	char err[MRAIL_ERR_MAX];
	int32_t status;
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_ack(buf, bad[i].bits, 0);
		status = 12345;
		cr_assert_eq(decode_ack_exact(buf, sizeof(buf), &status, err),
			     -EINVAL);
		cr_assert_not_null(strstr(err, bad[i].want),
				   "error \"%s\" lacks \"%s\"", err,
				   bad[i].want);
		cr_assert_eq(status, 12345, "a refused status is not written");
		cr_assert_eq(mrail_wire_ack_encode(bad[i].status, buf,
						   sizeof(buf)), -EINVAL);
	}
}

Test(wire_ack, reserved_and_length)
{
	uint8_t buf[MRAIL_WIRE_ACK_LEN + 1] = { 0 };
	char err[MRAIL_ERR_MAX];
	int32_t status;
	size_t len;

	raw_ack(buf, 0, 1);
	cr_assert_eq(decode_ack_exact(buf, 8, &status, err), -EINVAL);
	cr_assert_not_null(strstr(err, "ACK reserved field is 0x00000001"),
			   "%s", err);
	raw_ack(buf, 0, 0x80000000u);
	cr_assert_eq(decode_ack_exact(buf, 8, &status, err), -EINVAL);
	cr_assert_not_null(strstr(err, "0x80000000, expected 0"), "%s", err);

	raw_ack(buf, (uint32_t) -5, 0);
	for (len = 0; len <= sizeof(buf); len++) {
		if (len == MRAIL_WIRE_ACK_LEN)
			continue;
		cr_assert_eq(decode_ack_exact(buf, len, &status, err), -EINVAL);
		cr_assert_not_null(strstr(err, "bytes, expected 8"), "%s",
				   err);
	}
}

Test(wire_ack, encoder_room_and_null)
{
	uint8_t buf[MRAIL_WIRE_ACK_LEN];
	char err[MRAIL_ERR_MAX];

	cr_assert_eq(mrail_wire_ack_encode(0, buf, 7), -ENOSPC);
	cr_assert_eq(mrail_wire_ack_encode(0, NULL, 8), -EINVAL);
	cr_assert_eq(mrail_wire_ack_decode(buf, 8, NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_wire_ack_decode(NULL, 8, (int32_t[1]) { 0 }, err,
					   sizeof(err)), -EINVAL);
}

/* ---- fuzzing the decoders ---- */

static size_t fuzz_below(uint64_t *state, size_t bound)
{
	return (size_t) test_rng_below(state, bound);
}

/* Values where range checks tend to be off by one. */
static uint64_t fuzz_edge(uint64_t *state)
{
	static const uint64_t edges[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 9, 0x7f, 0x80, 0xff, 16384, 16385,
		MRAIL_ADDR_MAX_LEN, MRAIL_ADDR_MAX_LEN + 1, 0x7fffffff,
		0x80000000, 0xffffffff, 0xfffff000, 0xfffff001,
		(uint64_t) 1 << 32, ((uint64_t) 1 << 32) + 1,
		INT64_MAX, (uint64_t) INT64_MAX + 1, UINT64_MAX - 1, UINT64_MAX,
	};

	return edges[fuzz_below(state, sizeof(edges) / sizeof(edges[0]))];
}

/* Offsets of the u32/u64 fields worth rewriting whole, header then RTS. */
static void fuzz_set_field(uint64_t *state, struct test_msg *m)
{
	static const size_t u64s[] = { 8, 16, 24, 32, 40, 48, 64, 72 };
	uint64_t value = fuzz_below(state, 2) ? fuzz_edge(state) :
			 test_rng_next(state);
	size_t off;

	if (fuzz_below(state, 4) == 0) {
		if (m->len >= 8)
			raw_le32(&m->bytes[4], (uint32_t) value);
		return;
	}
	off = u64s[fuzz_below(state, sizeof(u64s) / sizeof(u64s[0]))];
	if (off + 8 <= m->len)
		raw_le64(&m->bytes[off], value);
}

/* One random change to m. */
static void fuzz_mutate(uint64_t *state, struct test_msg *m)
{
	/* The first bytes and the RTS count are where the rules are. */
	size_t pos = fuzz_below(state, 2) ?
		     fuzz_below(state, MRAIL_WIRE_HDR_LEN + 24) :
		     fuzz_below(state, m->len);

	if (pos >= m->len)
		pos = m->len ? m->len - 1 : 0;
	switch (fuzz_below(state, 8)) {
	case 0:
		if (m->len)
			m->bytes[pos] ^= (uint8_t) (1u << fuzz_below(state, 8));
		break;
	case 1:
		if (m->len)
			m->bytes[pos] = (uint8_t) test_rng_next(state);
		break;
	case 2:
		if (m->len)
			m->bytes[pos] = (uint8_t) fuzz_edge(state);
		break;
	case 3:
		m->len = fuzz_below(state, m->len + 1);
		break;
	case 4:
		if (m->len < MSG_CAP)
			m->bytes[m->len++] = (uint8_t) test_rng_next(state);
		break;
	case 5:
		fuzz_set_field(state, m);
		break;
	default:
		/* Keep the length field honest, so deeper rules are reached. */
		if (m->len >= MRAIL_WIRE_HDR_LEN)
			raw_le32(&m->bytes[4],
				 (uint32_t) (m->len - MRAIL_WIRE_HDR_LEN));
		break;
	}
}

struct fuzz_tally {
	size_t accepted;
	size_t refused;
	size_t payload_accepted;
};

/* An accepted RTS or ACK payload must re-encode to the same bytes. */
static void fuzz_check_payload(const struct mrail_wire_hdr *hdr,
			       const uint8_t *payload,
			       const struct mrail_wire_limits *limits,
			       struct fuzz_tally *tally)
{
	uint8_t again[MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_rts rts;
	char err[MRAIL_ERR_MAX];
	int32_t status;
	int ret;

	if (hdr->op == MRAIL_OP_RTS) {
		ret = decode_rts_exact(payload, hdr->payload_len, limits, &rts,
				       err);
		if (ret) {
			cr_assert_eq(ret, -EINVAL);
			cr_assert_neq(err[0], '\0');
			return;
		}
		cr_assert_eq(mrail_wire_rts_encode(&rts, again, sizeof(again)),
			     (int) hdr->payload_len);
		cr_assert_arr_eq(again, payload, hdr->payload_len);
		tally->payload_accepted++;
	} else if (hdr->op == MRAIL_OP_ACK) {
		ret = decode_ack_exact(payload, hdr->payload_len, &status, err);
		if (ret) {
			cr_assert_eq(ret, -EINVAL);
			cr_assert_neq(err[0], '\0');
			return;
		}
		cr_assert_eq(mrail_wire_ack_encode(status, again, sizeof(again)),
			     MRAIL_WIRE_ACK_LEN);
		cr_assert_arr_eq(again, payload, MRAIL_WIRE_ACK_LEN);
		tally->payload_accepted++;
	}
}

static void fuzz_one(const struct test_msg *m,
		     const struct mrail_wire_limits *limits,
		     struct fuzz_tally *tally)
{
	uint8_t *copy = heap_copy(m->bytes, m->len);
	uint8_t again[MRAIL_WIRE_HDR_LEN];
	struct mrail_wire_hdr hdr;
	char err[MRAIL_ERR_MAX] = "";
	int ret;

	ret = mrail_wire_hdr_decode(copy, m->len, limits, &hdr, err,
				    sizeof(err));
	if (ret) {
		cr_assert(ret == -EINVAL || ret == -EMSGSIZE, "ret %d", ret);
		cr_assert_neq(err[0], '\0', "refused without a reason");
		assert_hdr_zero(&hdr);
		tally->refused++;
		free(copy);
		return;
	}
	cr_assert_eq(hdr.payload_len, m->len - MRAIL_WIRE_HDR_LEN);
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, again, sizeof(again)),
		     MRAIL_WIRE_HDR_LEN, "accepted header does not re-encode");
	cr_assert_arr_eq(again, copy, MRAIL_WIRE_HDR_LEN,
			 "accepted header re-encodes differently");
	/* The payload ends exactly where the heap copy does. */
	fuzz_check_payload(&hdr, copy + MRAIL_WIRE_HDR_LEN, limits, tally);
	tally->accepted++;
	free(copy);
}

#define FUZZ_ROUNDS 25000

static void fuzz_op(const struct test_msg *seeds, unsigned n_seeds,
		    const struct mrail_wire_limits *limits, uint64_t seed,
		    struct fuzz_tally *tally)
{
	uint64_t state = seed;
	struct test_msg m;
	unsigned round, changes;

	for (round = 0; round < FUZZ_ROUNDS; round++) {
		m = seeds[round % n_seeds];
		for (changes = 1 + fuzz_below(&state, 4); changes; changes--)
			fuzz_mutate(&state, &m);
		fuzz_one(&m, limits, tally);
	}
	cr_assert_gt(tally->accepted, 0, "fuzzing never produced a valid one");
	cr_assert_gt(tally->refused, FUZZ_ROUNDS / 4);
}

/* A small eager limit, so payload lengths on both sides of it occur. */
static const struct mrail_wire_limits fuzz_limits = {
	.max_eager = 64, .max_msg = 1 << 20, .rail_count = TEST_RAILS,
};

Test(wire_fuzz, eager)
{
	struct test_msg seeds[4];
	struct fuzz_tally tally = { 0 };

	raw_valid_msg(&seeds[0], MRAIL_OP_EAGER, 0, 0);
	raw_valid_msg(&seeds[1], MRAIL_OP_EAGER, ALL_FLAGS, 64);
	raw_valid_msg(&seeds[2], MRAIL_OP_EAGER, MRAIL_WIRE_F_TAGGED, 63);
	raw_valid_msg(&seeds[3], MRAIL_OP_EAGER, MRAIL_WIRE_F_ACK_REQ, 8);
	fuzz_op(seeds, 4, &fuzz_limits, 0x9e3779b97f4a7c15ull, &tally);
}

Test(wire_fuzz, rts)
{
	struct test_msg seeds[3];
	struct fuzz_tally tally = { 0 };

	raw_valid_msg(&seeds[0], MRAIL_OP_RTS, 0, 40);
	raw_valid_msg(&seeds[1], MRAIL_OP_RTS, MRAIL_WIRE_F_TAGGED |
		      MRAIL_WIRE_F_CQ_DATA, 40);
	raw_valid_rts_msg(&seeds[2], 3);
	fuzz_op(seeds, 3, &fuzz_limits, 0xd1b54a32d192ed03ull, &tally);
	cr_assert_gt(tally.payload_accepted, 0);
}

Test(wire_fuzz, ack)
{
	struct test_msg seeds[1];
	struct fuzz_tally tally = { 0 };

	raw_valid_msg(&seeds[0], MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	raw_ack(&seeds[0].bytes[MRAIL_WIRE_HDR_LEN], (uint32_t) -EIO, 0);
	fuzz_op(seeds, 1, &fuzz_limits, 0x2545f4914f6cdd1dull, &tally);
	cr_assert_gt(tally.payload_accepted, 0);
}

Test(wire_fuzz, hello)
{
	struct test_msg seeds[2];
	struct fuzz_tally tally = { 0 };

	raw_valid_msg(&seeds[0], MRAIL_OP_HELLO, 0, 1);
	raw_valid_msg(&seeds[1], MRAIL_OP_HELLO, 0, MRAIL_ADDR_MAX_LEN);
	fuzz_op(seeds, 2, &fuzz_limits, 0xbf58476d1ce4e5b9ull, &tally);
}

/* The payload decoders on their own, fed mutated payloads directly. */
Test(wire_fuzz, payload_decoders)
{
	struct mrail_wire_limits limits = fuzz_limits;
	struct fuzz_tally tally = { 0 };
	struct mrail_wire_hdr hdr = { 0 };
	uint64_t state = 0x94d049bb133111ebull;
	struct test_msg m, seed;
	unsigned round, changes;
	uint8_t *copy;

	for (round = 0; round < 2 * FUZZ_ROUNDS; round++) {
		/* Reuse the header mutator on a payload laid at offset 0. */
		if (round % 2) {
			limits.rail_count = (uint8_t) (1 + round % MRAIL_MAX_RAILS);
			seed.len = raw_rts(seed.bytes, 1 + round, round,
					   limits.rail_count);
			hdr.op = MRAIL_OP_RTS;
		} else {
			raw_ack(seed.bytes, (uint32_t) -(int32_t) (round % 4096),
				0);
			seed.len = MRAIL_WIRE_ACK_LEN;
			hdr.op = MRAIL_OP_ACK;
		}
		m = seed;
		for (changes = 1 + fuzz_below(&state, 3); changes; changes--)
			fuzz_mutate(&state, &m);
		hdr.payload_len = (uint32_t) m.len;
		copy = heap_copy(m.bytes, m.len);
		fuzz_check_payload(&hdr, copy, &limits, &tally);
		free(copy);
	}
	cr_assert_gt(tally.payload_accepted, 0);
}

/* ---- flow control: CREDIT ---- */

Test(wire_credit, round_trip_and_layout)
{
	struct mrail_wire_hdr hdr = {
		.sender = TEST_SENDER, .op = MRAIL_OP_CREDIT,
		.payload_len = MRAIL_WIRE_CREDIT_LEN,
	};
	static const uint8_t want[MRAIL_WIRE_CREDIT_LEN] = {
		0x20, 0x01, 0, 0, 0, 0, 0, 0,
		0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x80,
	};
	const struct mrail_wire_credit sent = {
		.taken = 0x120, .next_seq = 0x8001020304050607ull,
	};
	uint8_t payload[MRAIL_WIRE_CREDIT_LEN];
	struct mrail_wire_credit got;
	char err[MRAIL_ERR_MAX];

	cr_assert_eq(mrail_wire_credit_encode(&sent, payload, sizeof(payload)),
		     MRAIL_WIRE_CREDIT_LEN);
	cr_assert_arr_eq(payload, want, sizeof(want));
	assert_hdr_round_trip(&hdr, payload, &test_limits);
	cr_assert_eq(mrail_wire_credit_decode(payload, sizeof(payload), &got,
					      err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(got.taken, sent.taken);
	cr_assert_eq(got.next_seq, sent.next_seq);
}

Test(wire_credit, refused)
{
	uint8_t payload[MRAIL_WIRE_CREDIT_LEN + 1] = { 0 };
	const struct mrail_wire_credit none = { .taken = 0, .next_seq = 5 };
	struct mrail_wire_credit got = { 7, 7 };
	char err[MRAIL_ERR_MAX];
	struct test_msg m;

	cr_assert_eq(mrail_wire_credit_encode(NULL, payload, sizeof(payload)),
		     -EINVAL);
	cr_assert_eq(mrail_wire_credit_encode(&none, payload,
					      MRAIL_WIRE_CREDIT_LEN - 1), -ENOSPC);
	/* Nothing taken yet, waiting for message 5 (the first ones lost). */
	cr_assert_eq(mrail_wire_credit_encode(&none, payload, sizeof(payload)),
		     MRAIL_WIRE_CREDIT_LEN);
	cr_assert_eq(mrail_wire_credit_decode(payload, MRAIL_WIRE_CREDIT_LEN,
					      &got, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(got.taken, 0);
	cr_assert_eq(got.next_seq, 5);
	cr_assert_eq(mrail_wire_credit_decode(payload, MRAIL_WIRE_CREDIT_LEN + 1,
					      &got, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "expected 16"), "%s", err);
	cr_assert_eq(got.next_seq, 0, "cleared on refusal");
	cr_assert_eq(mrail_wire_credit_decode(payload, MRAIL_WIRE_CREDIT_LEN - 1,
					      &got, err, sizeof(err)), -EINVAL);
	/* The header rules: a CREDIT is numbered by nothing, answers nothing. */
	raw_valid_msg(&m, MRAIL_OP_CREDIT, 0, MRAIL_WIRE_CREDIT_LEN);
	assert_raw_round_trip(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_CREDIT, 0, 4);
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "CREDIT payload of 4 bytes, expected 16");
	raw_valid_msg(&m, MRAIL_OP_CREDIT, 0, MRAIL_WIRE_CREDIT_LEN);
	m.bytes[8] = 1;
	assert_msg_refused(&m, &test_limits, -EINVAL, "CREDIT carries seq 1");
	raw_valid_msg(&m, MRAIL_OP_CREDIT, 0, MRAIL_WIRE_CREDIT_LEN);
	m.bytes[32] = 1;
	assert_msg_refused(&m, &test_limits, -EINVAL, "CREDIT carries req_id 1");
}

Test(wire_credit, which_ops_spend_credits)
{
	static const struct {
		uint8_t op;
		bool spends;
	} cases[] = {
		{ MRAIL_OP_EAGER, true }, { MRAIL_OP_RTS, true },
		{ MRAIL_OP_WRITE, true }, { MRAIL_OP_READ_REQ, true },
		{ MRAIL_OP_ACK, false }, { MRAIL_OP_HELLO, false },
		{ MRAIL_OP_READ_RESP, false }, { MRAIL_OP_CREDIT, false },
		{ MRAIL_OP_ATOMIC, true }, { MRAIL_OP_ATOMIC_RESP, false },
		{ MRAIL_OP_COLL, false }, { MRAIL_OP_PROBE, false },
		{ 0, false }, { 0xff, false },
	};
	uint8_t msg[MRAIL_WIRE_HDR_LEN] = { 0 };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		msg[1] = cases[i].op;
		cr_assert_eq(mrail_wire_needs_credit(msg, sizeof(msg)),
			     cases[i].spends, "op %u", cases[i].op);
		cr_assert_eq(mrail_wire_op_needs_credit(cases[i].op),
			     cases[i].spends, "op %u", cases[i].op);
	}
	msg[1] = MRAIL_OP_EAGER;
	cr_assert_not(mrail_wire_needs_credit(msg, MRAIL_WIRE_HDR_LEN - 1),
		      "a message shorter than a header spends nothing");
}

Test(wire_credit, which_ops_are_numbered)
{
	static const uint8_t numbered[] = {
		MRAIL_OP_EAGER, MRAIL_OP_RTS, MRAIL_OP_WRITE, MRAIL_OP_READ_REQ,
		MRAIL_OP_ATOMIC, MRAIL_OP_COLL,
	};
	static const uint8_t unnumbered[] = {
		MRAIL_OP_ACK, MRAIL_OP_HELLO, MRAIL_OP_READ_RESP, MRAIL_OP_CREDIT,
		MRAIL_OP_ATOMIC_RESP, MRAIL_OP_RSV, MRAIL_OP_PROBE, 0xff,
	};
	uint8_t bytes[MRAIL_WIRE_HDR_LEN];
	uint64_t seq;
	size_t i;

	for (i = 0; i < sizeof(numbered); i++) {
		memset(bytes, 0, sizeof(bytes));
		bytes[1] = numbered[i];
		cr_assert(mrail_wire_number(bytes, sizeof(bytes),
					    0x0102030405060708ull),
			  "op %u", numbered[i]);
		cr_assert_eq(bytes[8], 0x08, "little-endian at offset 8");
		cr_assert_eq(bytes[15], 0x01);
		seq = 0;
		cr_assert(mrail_wire_sequenced(bytes, sizeof(bytes), &seq),
			  "op %u", numbered[i]);
		cr_assert_eq(seq, 0x0102030405060708ull);
		cr_assert_not(mrail_wire_sequenced(bytes, sizeof(bytes) - 1, &seq),
			      "shorter than a header");
		cr_assert_not(mrail_wire_number(bytes, sizeof(bytes) - 1, 9),
			      "shorter than a header");
	}
	for (i = 0; i < sizeof(unnumbered); i++) {
		memset(bytes, 0, sizeof(bytes));
		bytes[1] = unnumbered[i];
		seq = 7;
		cr_assert_not(mrail_wire_sequenced(bytes, sizeof(bytes), &seq),
			      "op %u", unnumbered[i]);
		cr_assert_eq(seq, 7, "left alone");
		cr_assert_not(mrail_wire_number(bytes, sizeof(bytes), 9),
			      "op %u", unnumbered[i]);
		cr_assert_eq(bytes[8], 0, "left alone");
	}
}

Test(wire_answer, a_second_copy_is_marked_and_still_valid)
{
	static const uint8_t answers[] = {
		MRAIL_OP_ACK, MRAIL_OP_READ_RESP, MRAIL_OP_ATOMIC_RESP,
	};
	static const uint8_t others[] = {
		MRAIL_OP_EAGER, MRAIL_OP_RTS, MRAIL_OP_HELLO, MRAIL_OP_WRITE,
		MRAIL_OP_READ_REQ, MRAIL_OP_CREDIT, MRAIL_OP_ATOMIC, MRAIL_OP_RSV,
		MRAIL_OP_PROBE, MRAIL_OP_COLL, 0xff,
	};
	uint8_t bytes[MRAIL_WIRE_HDR_LEN];
	struct mrail_wire_hdr hdr;
	char err[MRAIL_ERR_MAX];
	struct test_msg m;
	size_t i;

	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	cr_assert(mrail_wire_answer(m.bytes, m.len));
	cr_assert(mrail_wire_answer_mark_again(m.bytes, m.len));
	cr_assert_eq(m.bytes[2], MRAIL_WIRE_F_AGAIN);
	cr_assert_eq(mrail_wire_hdr_decode(m.bytes, m.len, &test_limits, &hdr,
					   err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hdr.flags, MRAIL_WIRE_F_AGAIN);
	cr_assert(mrail_wire_answer_mark_again(m.bytes, m.len), "twice: the same");
	assert_raw_round_trip(&m, &test_limits);
	for (i = 0; i < sizeof(answers); i++) {
		memset(bytes, 0, sizeof(bytes));
		bytes[1] = answers[i];
		cr_assert(mrail_wire_answer_mark_again(bytes, sizeof(bytes)),
			  "op %u", answers[i]);
		cr_assert_eq(bytes[2], MRAIL_WIRE_F_AGAIN);
	}
	/* Nothing else is marked, nor a message shorter than a header. */
	for (i = 0; i < sizeof(others); i++) {
		memset(bytes, 0, sizeof(bytes));
		bytes[1] = others[i];
		cr_assert_not(mrail_wire_answer(bytes, sizeof(bytes)),
			      "op %u", others[i]);
		cr_assert_not(mrail_wire_answer_mark_again(bytes, sizeof(bytes)));
		cr_assert_eq(bytes[2], 0);
	}
	raw_valid_msg(&m, MRAIL_OP_ACK, 0, MRAIL_WIRE_ACK_LEN);
	cr_assert_not(mrail_wire_answer_mark_again(m.bytes,
						   MRAIL_WIRE_HDR_LEN - 1));
	cr_assert_eq(m.bytes[2], 0);
	/* The flag is the answers' alone. */
	raw_valid_msg(&m, MRAIL_OP_CREDIT, 0, MRAIL_WIRE_CREDIT_LEN);
	m.bytes[2] = MRAIL_WIRE_F_AGAIN;
	assert_msg_refused(&m, &test_limits, -EINVAL, "CREDIT");
}

Test(wire_probe, unnumbered_spends_no_credit_and_asks_for_whole_request_ids)
{
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, 0);
	assert_raw_round_trip(&m, &test_limits);
	cr_assert_not(mrail_wire_needs_credit(m.bytes, m.len));
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, 8);
	assert_raw_round_trip(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, MRAIL_WIRE_PROBE_ASK_MAX * 8);
	assert_raw_round_trip(&m, &test_limits);
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, 12);
	assert_msg_refused(&m, &test_limits, -EINVAL,
			   "PROBE payload of 12 bytes, expected a whole number "
			   "of request ids, at most 16");
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, (MRAIL_WIRE_PROBE_ASK_MAX + 1) * 8);
	assert_msg_refused(&m, &test_limits, -EINVAL, "PROBE payload of 136 bytes");
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, 0);
	m.bytes[8] = 1;
	assert_msg_refused(&m, &test_limits, -EINVAL, "PROBE carries seq 1");
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, 0);
	m.bytes[32] = 1;
	assert_msg_refused(&m, &test_limits, -EINVAL, "PROBE carries req_id 1");
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, 0);
	m.bytes[2] = MRAIL_WIRE_F_TAGGED;
	assert_msg_refused(&m, &test_limits, -EINVAL, "not allowed for PROBE");
}

Test(wire_probe, may_ask_for_an_echo_or_be_one_and_nothing_else)
{
	struct test_msg m;

	raw_valid_msg(&m, MRAIL_OP_PROBE, MRAIL_WIRE_F_ECHO, 0);
	assert_raw_round_trip(&m, &test_limits);
	cr_assert_not(mrail_wire_needs_credit(m.bytes, m.len),
		      "a rail's probe must go even when credits are spent");
	raw_valid_msg(&m, MRAIL_OP_PROBE, MRAIL_WIRE_F_REPLY, 0);
	assert_raw_round_trip(&m, &test_limits);
	cr_assert_not(mrail_wire_needs_credit(m.bytes, m.len),
		      "an echo must go even when credits are spent");
	raw_valid_msg(&m, MRAIL_OP_EAGER, 0, 0);
	m.bytes[2] = MRAIL_WIRE_F_ECHO;
	assert_msg_refused(&m, &test_limits, -EINVAL, "not allowed for EAGER");
	raw_valid_msg(&m, MRAIL_OP_PROBE, 0, 0);
	m.bytes[2] = MRAIL_WIRE_F_AGAIN;
	assert_msg_refused(&m, &test_limits, -EINVAL, "not allowed for PROBE");
}

Test(wire_probe, ask_round_trip_and_refusals)
{
	const uint64_t ids[3] = { 1, 0x123456789abcdef0ULL, UINT64_MAX };
	uint8_t payload[MRAIL_WIRE_PROBE_ASK_MAX * 8 + 8];
	uint64_t got[MRAIL_WIRE_PROBE_ASK_MAX];
	char err[MRAIL_ERR_MAX];
	size_t count = 99;

	cr_assert_eq(mrail_wire_probe_ask_encode(ids, 3, payload, sizeof(payload)), 24);
	cr_assert_eq(mrail_wire_probe_ask_decode(payload, 24, got, &count, err,
						 sizeof(err)), 0, "%s", err);
	cr_assert_eq(count, 3);
	cr_assert_eq(memcmp(got, ids, sizeof(ids)), 0);
	/* None asked for: an empty payload. */
	cr_assert_eq(mrail_wire_probe_ask_encode(NULL, 0, NULL, 0), 0);
	cr_assert_eq(mrail_wire_probe_ask_decode(NULL, 0, got, &count, err,
						 sizeof(err)), 0, "%s", err);
	cr_assert_eq(count, 0);
	/* Too many, or no room. */
	cr_assert_eq(mrail_wire_probe_ask_encode(ids, MRAIL_WIRE_PROBE_ASK_MAX + 1,
						 payload, sizeof(payload)), -EINVAL);
	cr_assert_eq(mrail_wire_probe_ask_encode(ids, 3, payload, 23), -ENOSPC);
	/* No request has id 0: a peer asking for it is refused, and nothing
	 * is handed on. */
	memset(payload, 0, 16);
	payload[0] = 7;
	count = 99;
	cr_assert_eq(mrail_wire_probe_ask_decode(payload, 16, got, &count, err,
						 sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "request id 0"), "%s", err);
	cr_assert_eq(count, 0);
	cr_assert_eq(mrail_wire_probe_ask_decode(payload, 9, got, &count, err,
						 sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "PROBE payload of 9 bytes"), "%s", err);
}

Test(wire_probe, req_id_of_an_encoded_header)
{
	struct mrail_wire_hdr hdr = {
		.sender = 1, .op = MRAIL_OP_ACK, .req_id = 0xfeedULL,
		.payload_len = MRAIL_WIRE_ACK_LEN,
	};
	uint8_t msg[MRAIL_WIRE_HDR_LEN];

	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), MRAIL_WIRE_HDR_LEN);
	cr_assert_eq(mrail_wire_req_id(msg, sizeof(msg)), 0xfeedULL);
	cr_assert_eq(mrail_wire_req_id(msg, sizeof(msg) - 1), 0, "short");
	cr_assert_eq(mrail_wire_req_id(NULL, sizeof(msg)), 0);
}
