/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The RMA part of the wire codec: WRITE, READ_REQ and READ_RESP headers,
 * the RMA descriptor and the READ_RESP grant. Messages are built with the
 * encoders, then damaged byte by byte where a hostile peer could.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "wire.h"

#define RAILS 2
#define MAX_EAGER 16336u

static const struct mrail_wire_limits limits = {
	.max_eager = MAX_EAGER,
	.max_msg = 1ull << 40,
	.rail_count = RAILS,
};

static uint8_t msg[MRAIL_WIRE_HDR_LEN + MAX_EAGER + 64];

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/*
 * A whole rail message: header, then payload_len bytes already in place.
 * Written raw (the encoder refuses what the decoder would), so that the
 * tests can hand the decoder what a hostile peer would send.
 */
static size_t build(uint8_t op, uint8_t flags, uint32_t payload_len, uint64_t req_id)
{
	memset(msg, 0, MRAIL_WIRE_HDR_LEN);
	msg[0] = MRAIL_WIRE_VERSION;
	msg[1] = op;
	msg[2] = flags;
	msg[4] = (uint8_t) payload_len;
	msg[5] = (uint8_t) (payload_len >> 8);
	msg[6] = (uint8_t) (payload_len >> 16);
	msg[7] = (uint8_t) (payload_len >> 24);
	put_le64(msg + 24, flags & MRAIL_WIRE_F_CQ_DATA ? 0x1234 : 0);
	put_le64(msg + 32, req_id);
	put_le64(msg + 40, 7);	/* the sender's key */
	return MRAIL_WIRE_HDR_LEN + payload_len;
}

static int decode(size_t len, struct mrail_wire_hdr *hdr)
{
	char err[256];

	return mrail_wire_hdr_decode(msg, len, &limits, hdr, err, sizeof(err));
}

static size_t put_rma(uint8_t *p, uint64_t key, uint64_t addr, uint64_t len)
{
	struct mrail_wire_rma rma = { .key = key, .addr = addr, .len = len };

	cr_assert_eq(mrail_wire_rma_encode(&rma, p, MRAIL_WIRE_RMA_LEN),
		     MRAIL_WIRE_RMA_LEN);
	return MRAIL_WIRE_RMA_LEN;
}

static size_t put_rts(uint8_t *p, uint64_t total_len, uint8_t rails)
{
	struct mrail_wire_rts rts = {
		.total_len = total_len, .base = 0x10000, .rail_count = rails,
		.keys = { 11, 22, 33, 44 },
	};
	int n = mrail_wire_rts_encode(&rts, p, 512);

	cr_assert_gt(n, 0);
	return (size_t) n;
}

Test(wire_rma, inline_write_round_trip)
{
	uint8_t *payload = msg + MRAIL_WIRE_HDR_LEN;
	struct mrail_wire_hdr hdr;
	struct mrail_wire_rma rma;
	size_t n = put_rma(payload, 7, 100, 5);
	char err[256];

	memcpy(payload + n, "hello", 5);
	build(MRAIL_OP_WRITE, MRAIL_WIRE_F_INLINE | MRAIL_WIRE_F_CQ_DATA,
	      (uint32_t) n + 5, 9);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + n + 5, &hdr), 0);
	cr_assert_eq(hdr.op, MRAIL_OP_WRITE);
	cr_assert_eq(hdr.req_id, 9);
	cr_assert_eq(hdr.cq_data, 0x1234);
	cr_assert_eq(mrail_wire_rma_decode(payload, hdr.payload_len, true, &limits,
					   &rma, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rma.key, 7);
	cr_assert_eq(rma.addr, 100);
	cr_assert_eq(rma.len, 5);
}

Test(wire_rma, inline_write_length_must_match_data)
{
	uint8_t *payload = msg + MRAIL_WIRE_HDR_LEN;
	struct mrail_wire_rma rma;
	char err[256];

	put_rma(payload, 7, 0, 6);
	cr_assert_eq(mrail_wire_rma_decode(payload, MRAIL_WIRE_RMA_LEN + 5, true,
					   &limits, &rma, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "inline WRITE"), "%s", err);
	cr_assert_eq(rma.len, 0, "a refused descriptor is zeroed");
	put_rma(payload, 7, 0, 4);
	cr_assert_eq(mrail_wire_rma_decode(payload, MRAIL_WIRE_RMA_LEN + 5, true,
					   &limits, &rma, err, sizeof(err)), -EINVAL);
}

Test(wire_rma, inline_write_over_eager_limit)
{
	struct mrail_wire_hdr hdr;

	build(MRAIL_OP_WRITE, MRAIL_WIRE_F_INLINE, MAX_EAGER + 1, 9);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MAX_EAGER + 1, &hdr), -EMSGSIZE);
	build(MRAIL_OP_WRITE, MRAIL_WIRE_F_INLINE, MRAIL_WIRE_RMA_LEN - 1, 9);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN - 1, &hdr), -EINVAL);
}

Test(wire_rma, striped_write_carries_rts_for_our_rails)
{
	uint8_t *payload = msg + MRAIL_WIRE_HDR_LEN;
	struct mrail_wire_hdr hdr;
	size_t n = put_rma(payload, 1, 0, 1 << 20);

	n += put_rts(payload + n, 1 << 20, RAILS);
	build(MRAIL_OP_WRITE, 0, (uint32_t) n, 3);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + n, &hdr), 0);

	/* Another rail count: refused, the keys would not be ours. */
	n = put_rma(payload, 1, 0, 1 << 20);
	n += put_rts(payload + n, 1 << 20, RAILS + 1);
	build(MRAIL_OP_WRITE, 0, (uint32_t) n, 3);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + n, &hdr), -EINVAL);

	/* Not a descriptor at all. */
	build(MRAIL_OP_WRITE, 0, MRAIL_WIRE_RMA_LEN + 5, 3);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN + 5, &hdr), -EINVAL);
}

Test(wire_rma, every_rma_op_needs_a_request_id)
{
	struct mrail_wire_hdr hdr = { .sender = 7, .op = MRAIL_OP_READ_REQ,
				      .payload_len = MRAIL_WIRE_RMA_LEN };

	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.req_id = 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), MRAIL_WIRE_HDR_LEN);
	put_rma(msg + MRAIL_WIRE_HDR_LEN, 1, 2, 3);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN, &hdr), 0);
	/* Zero the request id on the wire: refused. */
	memset(msg + 32, 0, 8);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN, &hdr), -EINVAL);
}

Test(wire_rma, flags_allowed_per_op)
{
	struct mrail_wire_hdr hdr = { .sender = 7, .op = MRAIL_OP_READ_REQ, .req_id = 1,
				      .payload_len = MRAIL_WIRE_RMA_LEN,
				      .flags = MRAIL_WIRE_F_INLINE };

	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.flags = MRAIL_WIRE_F_TAGGED;
	hdr.op = MRAIL_OP_WRITE;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
	hdr.flags = 0;
	hdr.seq = 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL,
		     "RMA requests are not sequenced");
	/* INLINE belongs to WRITE only. */
	hdr = (struct mrail_wire_hdr) { .op = MRAIL_OP_EAGER,
					.flags = MRAIL_WIRE_F_INLINE };
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, msg, sizeof(msg)), -EINVAL);
}

Test(wire_rma, read_req_exact_length)
{
	struct mrail_wire_hdr hdr;

	put_rma(msg + MRAIL_WIRE_HDR_LEN, 1, 2, 3);
	build(MRAIL_OP_READ_REQ, 0, MRAIL_WIRE_RMA_LEN, 5);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN, &hdr), 0);
	build(MRAIL_OP_READ_REQ, 0, MRAIL_WIRE_RMA_LEN + 1, 5);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN + 1, &hdr), -EINVAL);
}

Test(wire_rma, descriptor_limits)
{
	uint8_t p[MRAIL_WIRE_RMA_LEN];
	struct mrail_wire_rma rma = { .key = 1, .addr = UINT64_MAX, .len = 1 };
	char err[256];

	cr_assert_eq(mrail_wire_rma_encode(&rma, p, sizeof(p)), -EINVAL, "wraps");
	rma.addr = 0;
	cr_assert_eq(mrail_wire_rma_encode(&rma, p, sizeof(p) - 1), -ENOSPC);

	/* Over the message size limit. */
	put_rma(p, 1, 0, limits.max_msg + 1);
	cr_assert_eq(mrail_wire_rma_decode(p, sizeof(p), false, &limits, &rma, err,
					   sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "exceeds"), "%s", err);
	/* addr + len wrapping, written raw (the encoder refuses it). */
	put_rma(p, 1, UINT64_MAX - 10, 10);
	cr_assert_eq(mrail_wire_rma_decode(p, sizeof(p), false, &limits, &rma, err,
					   sizeof(err)), 0);
	memset(p + 8, 0xff, 8);
	cr_assert_eq(mrail_wire_rma_decode(p, sizeof(p), false, &limits, &rma, err,
					   sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "wraps"), "%s", err);
	/* Truncated. */
	cr_assert_eq(mrail_wire_rma_decode(p, sizeof(p) - 1, false, &limits, &rma,
					   err, sizeof(err)), -EINVAL);
}

Test(wire_rma, read_resp_and_grant)
{
	uint8_t *payload = msg + MRAIL_WIRE_HDR_LEN;
	struct mrail_wire_hdr hdr;
	uint64_t grant, offset;
	size_t n;

	cr_assert_eq(mrail_wire_grant_encode(0, 5, payload, 64), -EINVAL);
	cr_assert_eq(mrail_wire_grant_encode(42, 5, payload, 15), -ENOSPC);
	n = (size_t) mrail_wire_grant_encode(42, 4096, payload, 64);
	cr_assert_eq(n, MRAIL_WIRE_GRANT_LEN);
	n += put_rts(payload + n, 100, RAILS);
	build(MRAIL_OP_READ_RESP, 0, (uint32_t) n, 8);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + n, &hdr), 0);
	cr_assert_eq(mrail_wire_grant_decode(payload, hdr.payload_len, &grant,
					     &offset, NULL, 0), 0);
	cr_assert_eq(grant, 42);
	cr_assert_eq(offset, 4096);

	/* A zero grant id names nothing. */
	memset(payload, 0, 8);
	cr_assert_eq(mrail_wire_grant_decode(payload, hdr.payload_len, &grant,
					     &offset, NULL, 0), -EINVAL);
	cr_assert_eq(mrail_wire_grant_decode(payload, 15, &grant, &offset, NULL, 0),
		     -EINVAL);
	/* A READ_RESP without a descriptor for our rails. */
	n = MRAIL_WIRE_GRANT_LEN + put_rts(payload + MRAIL_WIRE_GRANT_LEN, 100, 1);
	build(MRAIL_OP_READ_RESP, 0, (uint32_t) n, 8);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + n, &hdr), -EINVAL);
	build(MRAIL_OP_READ_RESP, 0, MRAIL_WIRE_GRANT_LEN, 8);
	cr_assert_eq(decode(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_GRANT_LEN, &hdr), -EINVAL);
}
