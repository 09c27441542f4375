/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The atomic part of the wire codec: ATOMIC and ATOMIC_RESP headers, the
 * atomic descriptor with its operand and compare data, the response and
 * the count limit. Messages are built with the encoders, then damaged
 * byte by byte where a hostile peer could.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "wire.h"

#define MAX_EAGER 16336u

static const struct mrail_wire_limits limits = {
	.max_eager = MAX_EAGER,
	.max_msg = 1ull << 40,
	.rail_count = 2,
};

static uint8_t msg[MRAIL_WIRE_HDR_LEN + MAX_EAGER + 64];

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* A raw header over payload_len bytes already in place. */
static size_t build(uint8_t op, uint32_t payload_len, uint64_t req_id)
{
	memset(msg, 0, MRAIL_WIRE_HDR_LEN);
	msg[0] = MRAIL_WIRE_VERSION;
	msg[1] = op;
	msg[4] = (uint8_t) payload_len;
	msg[5] = (uint8_t) (payload_len >> 8);
	msg[6] = (uint8_t) (payload_len >> 16);
	msg[7] = (uint8_t) (payload_len >> 24);
	put_le64(msg + 32, req_id);
	put_le64(msg + 40, 7);	/* the sender's key */
	return MRAIL_WIRE_HDR_LEN + payload_len;
}

static int decode_hdr(size_t len, struct mrail_wire_hdr *hdr)
{
	char err[256];

	return mrail_wire_hdr_decode(msg, len, &limits, hdr, err, sizeof(err));
}

static int decode_req(size_t payload_len, struct mrail_wire_atomic_req *req,
		      char *err)
{
	return mrail_wire_atomic_decode(msg + MRAIL_WIRE_HDR_LEN, payload_len,
					&limits, req, err, 256);
}

/* Puts a descriptor and data_len bytes of pattern after it; returns the
 * payload length. */
static size_t put_req(const struct mrail_wire_atomic *a, size_t data_len)
{
	uint8_t *p = msg + MRAIL_WIRE_HDR_LEN;
	size_t i;

	cr_assert_eq(mrail_wire_atomic_encode(a, p, MRAIL_WIRE_ATOMIC_LEN),
		     MRAIL_WIRE_ATOMIC_LEN);
	for (i = 0; i < data_len; i++)
		p[MRAIL_WIRE_ATOMIC_LEN + i] = (uint8_t) (i * 7 + 1);
	return MRAIL_WIRE_ATOMIC_LEN + data_len;
}

/* The layout wire.h documents, byte by byte. */
Test(wire_atomic, descriptor_layout)
{
	const struct mrail_wire_atomic a = {
		.key = 0x0102030405060708ull, .addr = 0x1122334455667788ull,
		.count = 3, .op = FI_SUM, .datatype = FI_UINT32,
		.kind = MRAIL_ATOMIC_FETCH,
	};
	static const uint8_t want[MRAIL_WIRE_ATOMIC_LEN] = {
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		3, 0, 0, 0, 0, 0, 0, 0,
		FI_SUM, FI_UINT32, MRAIL_ATOMIC_FETCH, 0, 0, 0, 0, 0,
	};
	uint8_t p[MRAIL_WIRE_ATOMIC_LEN];

	cr_assert_eq(MRAIL_WIRE_ATOMIC_LEN, 32);
	memset(p, 0xee, sizeof(p));
	cr_assert_eq(mrail_wire_atomic_encode(&a, p, sizeof(p)),
		     MRAIL_WIRE_ATOMIC_LEN);
	cr_assert_arr_eq(p, want, sizeof(want));
	cr_assert_eq(mrail_wire_atomic_encode(&a, p, sizeof(p) - 1), -ENOSPC);
}

Test(wire_atomic, fetch_round_trip_with_header)
{
	const struct mrail_wire_atomic a = {
		.key = 42, .addr = 8, .count = 4, .op = FI_SUM,
		.datatype = FI_UINT64, .kind = MRAIL_ATOMIC_FETCH,
	};
	struct mrail_wire_atomic_req req;
	struct mrail_wire_hdr hdr;
	char err[256];
	size_t n = put_req(&a, 32);

	build(MRAIL_OP_ATOMIC, (uint32_t) n, 5);
	cr_assert_eq(decode_hdr(MRAIL_WIRE_HDR_LEN + n, &hdr), 0);
	cr_assert_eq(hdr.op, MRAIL_OP_ATOMIC);
	cr_assert_eq(hdr.req_id, 5);
	cr_assert_eq(decode_req(n, &req, err), 0, "%s", err);
	cr_assert_eq(req.desc.key, 42);
	cr_assert_eq(req.desc.addr, 8);
	cr_assert_eq(req.desc.count, 4);
	cr_assert_eq(req.desc.op, FI_SUM);
	cr_assert_eq(req.desc.datatype, FI_UINT64);
	cr_assert_eq(req.desc.kind, MRAIL_ATOMIC_FETCH);
	cr_assert_eq(req.size, 8);
	cr_assert_eq(req.len.operand, 32);
	cr_assert_eq(req.len.compare, 0);
	cr_assert_eq(req.len.result, 32);
	cr_assert_eq(req.operand, msg + MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_LEN);
	cr_assert_null(req.compare);
}

Test(wire_atomic, compare_data_follows_operand)
{
	const struct mrail_wire_atomic a = {
		.key = 1, .addr = 0, .count = 2, .op = FI_CSWAP,
		.datatype = FI_INT16, .kind = MRAIL_ATOMIC_COMPARE,
	};
	struct mrail_wire_atomic_req req;
	char err[256];
	size_t n = put_req(&a, 8);

	cr_assert_eq(decode_req(n, &req, err), 0, "%s", err);
	cr_assert_eq(req.len.operand, 4);
	cr_assert_eq(req.len.compare, 4);
	cr_assert_eq(req.compare, req.operand + 4);
	/* One byte short or long of operand + compare: refused. */
	cr_assert_eq(decode_req(n - 1, &req, err), -EINVAL);
	cr_assert(strstr(err, "expected 4 of operand and 4 of compare"), "%s", err);
	cr_assert_eq(req.desc.key, 0, "a refused request is zeroed");
	cr_assert_eq(decode_req(n + 1, &req, err), -EINVAL);
}

Test(wire_atomic, read_carries_no_operand)
{
	const struct mrail_wire_atomic a = {
		.key = 1, .count = 3, .op = FI_ATOMIC_READ,
		.datatype = FI_DOUBLE, .kind = MRAIL_ATOMIC_FETCH,
	};
	struct mrail_wire_atomic_req req;
	char err[256];
	size_t n = put_req(&a, 0);

	cr_assert_eq(decode_req(n, &req, err), 0, "%s", err);
	cr_assert_null(req.operand);
	cr_assert_eq(req.len.result, 24);
	n = put_req(&a, 24);
	cr_assert_eq(decode_req(n, &req, err), -EINVAL, "a read has no operand");
}

Test(wire_atomic, combinations_not_valid_are_refused)
{
	struct mrail_wire_atomic a = {
		.key = 1, .count = 1, .op = FI_BOR, .datatype = FI_FLOAT,
		.kind = MRAIL_ATOMIC_PLAIN,
	};
	struct mrail_wire_atomic_req req;
	uint8_t *p = msg + MRAIL_WIRE_HDR_LEN;
	char err[256];
	size_t n;

	/* Bitwise on a float, a swap as a plain atomic, a read as a plain
	 * one, a kind out of range: the encoder refuses, so does the
	 * decoder when a peer writes the bytes anyway. */
	cr_assert_eq(mrail_wire_atomic_encode(&a, p, 64), -EINVAL);
	a.datatype = FI_UINT32;
	n = put_req(&a, 4);
	p[25] = FI_FLOAT;
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
	cr_assert(strstr(err, "is not a plain atomic"), "%s", err);
	p[25] = FI_UINT32;
	p[24] = FI_CSWAP;
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
	p[24] = FI_ATOMIC_READ;
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
	p[24] = FI_BOR;
	p[26] = MRAIL_ATOMIC_KIND_COUNT;
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
	cr_assert(strstr(err, "atomic kind 3"), "%s", err);
	p[26] = MRAIL_ATOMIC_PLAIN;
	p[25] = 0xff;
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
	p[25] = FI_UINT32;
	p[24] = FI_ATOMIC_OP_LAST;
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
	p[24] = FI_BOR;
	cr_assert_eq(decode_req(n, &req, err), 0, "%s", err);
}

Test(wire_atomic, reserved_bytes_must_be_zero)
{
	const struct mrail_wire_atomic a = {
		.key = 1, .count = 1, .op = FI_SUM, .datatype = FI_INT8,
		.kind = MRAIL_ATOMIC_PLAIN,
	};
	struct mrail_wire_atomic_req req;
	char err[256];
	size_t n = put_req(&a, 1);
	int i;

	for (i = 27; i < 32; i++) {
		msg[MRAIL_WIRE_HDR_LEN + i] = 1;
		cr_assert_eq(decode_req(n, &req, err), -EINVAL, "byte %d", i);
		cr_assert(strstr(err, "reserved"), "%s", err);
		msg[MRAIL_WIRE_HDR_LEN + i] = 0;
	}
	cr_assert_eq(decode_req(n, &req, err), 0, "%s", err);
}

Test(wire_atomic, count_zero_and_wrap_refused)
{
	struct mrail_wire_atomic a = {
		.key = 1, .count = 0, .op = FI_SUM, .datatype = FI_UINT64,
		.kind = MRAIL_ATOMIC_PLAIN,
	};
	struct mrail_wire_atomic_req req;
	uint8_t *p = msg + MRAIL_WIRE_HDR_LEN;
	char err[256];
	size_t n;

	cr_assert_eq(mrail_wire_atomic_encode(&a, p, 64), -EINVAL);
	a.count = 1;
	n = put_req(&a, 8);
	put_le64(p + 16, 0);
	cr_assert_eq(decode_req(n - 8, &req, err), -EINVAL);
	cr_assert(strstr(err, "0 elements"), "%s", err);

	/* The last element would end past 2^64. */
	a.addr = UINT64_MAX - 7;
	cr_assert_eq(mrail_wire_atomic_encode(&a, p, 64), -EINVAL);
	a.addr = UINT64_MAX - 8;
	n = put_req(&a, 8);
	cr_assert_eq(decode_req(n, &req, err), 0, "%s", err);
	put_le64(p + 8, UINT64_MAX - 6);
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
	cr_assert(strstr(err, "wraps"), "%s", err);
	/* A count whose byte length alone overflows. */
	put_le64(p + 8, 0);
	put_le64(p + 16, UINT64_MAX / 4);
	cr_assert_eq(decode_req(n, &req, err), -EINVAL);
}

/* The documented limit: (eager - 32) / size, compare twice the size. */
Test(wire_atomic, max_count)
{
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_PLAIN, 8, MAX_EAGER),
		     2038);
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_FETCH, 8, MAX_EAGER),
		     2038);
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_COMPARE, 8, MAX_EAGER),
		     1019);
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_PLAIN, 1, MAX_EAGER),
		     16304);
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_COMPARE, 32, MAX_EAGER),
		     254);
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_PLAIN, 0, MAX_EAGER), 0);
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_KIND_COUNT, 8,
						 MAX_EAGER), 0);
	cr_assert_eq(mrail_wire_atomic_max_count(MRAIL_ATOMIC_PLAIN, 8, 31), 0);
}

/* At the limit the whole message fits; one more element is refused by the
 * descriptor's count even before the header's length would be. */
Test(wire_atomic, count_limit_at_the_edge)
{
	struct mrail_wire_atomic a = {
		.key = 1, .count = 1019, .op = FI_CSWAP, .datatype = FI_UINT64,
		.kind = MRAIL_ATOMIC_COMPARE,
	};
	struct mrail_wire_atomic_req req;
	struct mrail_wire_hdr hdr;
	char err[256];
	size_t n = put_req(&a, 1019 * 16);

	cr_assert_leq(n, MAX_EAGER);
	build(MRAIL_OP_ATOMIC, (uint32_t) n, 1);
	cr_assert_eq(decode_hdr(MRAIL_WIRE_HDR_LEN + n, &hdr), 0);
	cr_assert_eq(decode_req(n, &req, err), 0, "%s", err);

	a.count = 1020;
	n = put_req(&a, 0);
	/* The limit does not depend on whether the data made it. */
	cr_assert_eq(mrail_wire_atomic_decode(msg + MRAIL_WIRE_HDR_LEN,
					      n + 1020 * 16, &limits, &req, err,
					      sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "at most 1019 fit"), "%s", err);

	/* A header over the eager limit is refused as such. */
	build(MRAIL_OP_ATOMIC, MAX_EAGER + 1, 1);
	cr_assert_eq(decode_hdr(MRAIL_WIRE_HDR_LEN + MAX_EAGER + 1, &hdr),
		     -EMSGSIZE);
	build(MRAIL_OP_ATOMIC_RESP, MAX_EAGER + 1, 1);
	cr_assert_eq(decode_hdr(MRAIL_WIRE_HDR_LEN + MAX_EAGER + 1, &hdr),
		     -EMSGSIZE);
}

Test(wire_atomic, header_rules)
{
	struct mrail_wire_hdr hdr = { .sender = 7, .op = MRAIL_OP_ATOMIC,
				      .payload_len = MRAIL_WIRE_ATOMIC_LEN + 8 };

	/* A request id always, and a sequence number (the target runs each
	 * atomic once, in order); no flags, tag or CQ data. */
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.req_id = 3;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)),
		     MRAIL_WIRE_HDR_LEN);
	hdr.seq = 12;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)),
		     MRAIL_WIRE_HDR_LEN);
	hdr.flags = MRAIL_WIRE_F_INLINE;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.flags = MRAIL_WIRE_F_CQ_DATA;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.flags = MRAIL_WIRE_F_AGAIN;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.flags = 0;
	hdr.payload_len = MRAIL_WIRE_ATOMIC_LEN - 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);

	hdr = (struct mrail_wire_hdr) { .sender = 7, .op = MRAIL_OP_ATOMIC_RESP,
					.payload_len = MRAIL_WIRE_ATOMIC_RESP_LEN };
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.req_id = 3;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)),
		     MRAIL_WIRE_HDR_LEN);
	/* An answer: no sequence number; AGAIN marks a second copy. */
	hdr.seq = 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.seq = 0;
	hdr.flags = MRAIL_WIRE_F_AGAIN;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)),
		     MRAIL_WIRE_HDR_LEN);
	hdr.flags = 0;
	hdr.payload_len = MRAIL_WIRE_ATOMIC_RESP_LEN - 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);

	/* Request id 0 on the wire: refused. */
	build(MRAIL_OP_ATOMIC_RESP, MRAIL_WIRE_ATOMIC_RESP_LEN, 0);
	cr_assert_eq(decode_hdr(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_RESP_LEN,
				&hdr), -EINVAL);
	build(MRAIL_OP_ATOMIC_RESP, MRAIL_WIRE_ATOMIC_RESP_LEN, 9);
	cr_assert_eq(decode_hdr(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_RESP_LEN,
				&hdr), 0);
}

Test(wire_atomic, response)
{
	uint8_t p[MRAIL_WIRE_ATOMIC_RESP_LEN + 16];
	const uint8_t *result;
	size_t result_len;
	int32_t status;
	char err[256];

	cr_assert_eq(mrail_wire_atomic_resp_encode(0, p, sizeof(p)),
		     MRAIL_WIRE_ATOMIC_RESP_LEN);
	memset(p + 8, 0xab, 16);
	cr_assert_eq(mrail_wire_atomic_resp_decode(p, sizeof(p), &status, &result,
						   &result_len, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(status, 0);
	cr_assert_eq(result, p + 8);
	cr_assert_eq(result_len, 16);

	/* A plain atomic's answer: status only. */
	cr_assert_eq(mrail_wire_atomic_resp_decode(p, 8, &status, &result,
						   &result_len, err, sizeof(err)), 0);
	cr_assert_null(result);
	cr_assert_eq(result_len, 0);

	/* An error carries no result. */
	cr_assert_eq(mrail_wire_atomic_resp_encode(-EACCES, p, sizeof(p)),
		     MRAIL_WIRE_ATOMIC_RESP_LEN);
	cr_assert_eq(mrail_wire_atomic_resp_decode(p, 8, &status, &result,
						   &result_len, err, sizeof(err)), 0);
	cr_assert_eq(status, -EACCES);
	cr_assert_eq(mrail_wire_atomic_resp_decode(p, 9, &status, &result,
						   &result_len, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "expected none"), "%s", err);

	/* Positive status, reserved bytes, truncation. */
	cr_assert_eq(mrail_wire_atomic_resp_encode(5, p, sizeof(p)), -EINVAL);
	p[0] = 5; p[1] = p[2] = p[3] = 0;
	cr_assert_eq(mrail_wire_atomic_resp_decode(p, 8, &status, &result,
						   &result_len, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_wire_atomic_resp_encode(0, p, sizeof(p)), 8);
	p[6] = 1;
	cr_assert_eq(mrail_wire_atomic_resp_decode(p, 8, &status, &result,
						   &result_len, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_wire_atomic_resp_decode(p, 7, &status, &result,
						   &result_len, err, sizeof(err)),
		     -EINVAL);
}

/* Every valid combination round-trips at count 1 and at its limit. */
Test(wire_atomic, every_valid_combination_round_trips)
{
	struct mrail_wire_atomic_req req;
	struct mrail_atomic_len len;
	struct mrail_wire_atomic a;
	char err[256];
	unsigned kind, op, dt;
	size_t size, n, max, counts[2], c;
	int checked = 0;

	for (kind = 0; kind < MRAIL_ATOMIC_KIND_COUNT; kind++)
	for (op = 0; op <= FI_MSWAP; op++)
	for (dt = 0; dt <= FI_UINT128; dt++) {
		if (mrail_atomic_valid(kind, op, dt, &size))
			continue;
		max = mrail_wire_atomic_max_count(kind, size, MAX_EAGER);
		cr_assert_gt(max, 0);
		counts[0] = 1;
		counts[1] = max;
		for (c = 0; c < 2; c++) {
			a = (struct mrail_wire_atomic) {
				.key = 9, .addr = 64, .count = counts[c],
				.op = (uint8_t) op, .datatype = (uint8_t) dt,
				.kind = (uint8_t) kind,
			};
			cr_assert_eq(mrail_atomic_len(kind, op, dt, counts[c],
						      &len), 0);
			n = put_req(&a, len.operand + len.compare);
			cr_assert_leq(n, MAX_EAGER);
			cr_assert_leq(MRAIL_WIRE_ATOMIC_RESP_LEN + len.result,
				      MAX_EAGER);
			cr_assert_eq(decode_req(n, &req, err), 0,
				     "kind %u op %u dt %u count %zu: %s",
				     kind, op, dt, counts[c], err);
			cr_assert_eq(req.len.result, len.result);
			checked++;
		}
	}
	cr_assert_gt(checked, 100);
}
