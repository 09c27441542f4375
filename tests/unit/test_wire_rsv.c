/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the RSV op of core/wire.c (op 11): the reservation control
 * messages of dynamic striping, as header and payload, every field checked,
 * and random payloads that never crash the decoder and round-trip when
 * accepted.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "mrail_limits.h"
#include "reserve.h"
#include "wire.h"

#define SENDER 0x0123456789abcdefull

static const struct mrail_wire_limits limits = {
	.max_eager = 16384, .max_msg = 1ull << 32, .rail_count = 2,
};

static size_t rsv_msg(uint8_t *buf, const struct mrail_rsv_msg *m)
{
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_RSV, .payload_len = MRAIL_WIRE_RSV_LEN,
		.sender = SENDER,
	};

	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, MRAIL_WIRE_HDR_LEN),
		     MRAIL_WIRE_HDR_LEN);
	cr_assert_eq(mrail_wire_rsv_encode(m, buf + MRAIL_WIRE_HDR_LEN,
					   MRAIL_WIRE_RSV_LEN), MRAIL_WIRE_RSV_LEN);
	return MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RSV_LEN;
}

static void refused(const uint8_t *payload, const char *want)
{
	struct mrail_rsv_msg m;
	char err[MRAIL_ERR_MAX] = "";

	memset(&m, 0x5a, sizeof(m));
	cr_assert_eq(mrail_wire_rsv_decode(payload, MRAIL_WIRE_RSV_LEN, &m, err,
					   sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, want), "error \"%s\" lacks \"%s\"", err,
			   want);
	cr_assert_eq(m.type, 0);
	cr_assert_eq(m.seq, 0);
	cr_assert_eq(m.counter, 0);
}

Test(wire_rsv, every_type_round_trips_through_header_and_payload)
{
	static const int32_t counters[] = { 0, 1, -1, INT32_MAX, INT32_MIN };
	uint8_t buf[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RSV_LEN];
	struct mrail_rsv_msg in = { 0 }, out;
	struct mrail_wire_hdr hdr;
	char err[MRAIL_ERR_MAX];
	size_t len, c;
	int t;

	for (t = MRAIL_RSV_MSG_RTS; t <= MRAIL_RSV_MSG_ACK; t++) {
		for (c = 0; c < 5; c++) {
			if (t != MRAIL_RSV_MSG_RTS && counters[c])
				continue;
			in.type = (enum mrail_rsv_msg_type) t;
			in.seq = 0xfedcba98u - (uint32_t) c;
			in.counter = counters[c];
			in.from = 7;
			in.to = 9;
			len = rsv_msg(buf, &in);
			cr_assert_eq(mrail_wire_hdr_decode(buf, len, &limits, &hdr,
							   err, sizeof(err)), 0,
				     "%s", err);
			cr_assert_eq(hdr.op, MRAIL_OP_RSV);
			cr_assert_eq(hdr.sender, SENDER);
			cr_assert_eq(mrail_wire_rsv_decode(buf + MRAIL_WIRE_HDR_LEN,
							   hdr.payload_len, &out,
							   err, sizeof(err)), 0,
				     "%s", err);
			cr_assert_eq(out.type, in.type);
			cr_assert_eq(out.seq, in.seq);
			cr_assert_eq(out.counter, in.counter);
			/* Not on the wire: the header and the rail say. */
			cr_assert_eq(out.from, 0);
			cr_assert_eq(out.to, 0);
			cr_assert_not(mrail_wire_needs_credit(buf, len),
				      "a control message spends no credit");
		}
	}
}

Test(wire_rsv, payload_layout_is_little_endian_as_documented)
{
	struct mrail_rsv_msg m = { .type = MRAIL_RSV_MSG_RTS, .seq = 0x04030201,
				   .counter = -2 };
	static const uint8_t want[MRAIL_WIRE_RSV_LEN] = {
		0, 0, 0, 0, 0x01, 0x02, 0x03, 0x04,
		0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0,
	};
	uint8_t p[MRAIL_WIRE_RSV_LEN];

	cr_assert_eq(mrail_wire_rsv_encode(&m, p, sizeof(p)), MRAIL_WIRE_RSV_LEN);
	cr_assert_arr_eq(p, want, sizeof(want));
}

Test(wire_rsv, header_rules)
{
	uint8_t buf[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RSV_LEN + 1];
	struct mrail_rsv_msg m = { .type = MRAIL_RSV_MSG_CTS, .seq = 3 };
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_RSV, .payload_len = MRAIL_WIRE_RSV_LEN,
		.sender = SENDER,
	};
	char err[MRAIL_ERR_MAX];
	size_t len;

	/* Wrong payload lengths. */
	hdr.payload_len = MRAIL_WIRE_RSV_LEN - 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), -EINVAL);
	hdr.payload_len = MRAIL_WIRE_RSV_LEN + 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), -EINVAL);
	/* No seq, req_id, flags, tag. */
	hdr.payload_len = MRAIL_WIRE_RSV_LEN;
	hdr.seq = 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), -EINVAL);
	hdr.seq = 0;
	hdr.req_id = 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), -EINVAL);
	hdr.req_id = 0;
	hdr.flags = MRAIL_WIRE_F_REPLY;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), -EINVAL);

	/* The decoder says which, on raw bytes. */
	len = rsv_msg(buf, &m);
	buf[4] = MRAIL_WIRE_RSV_LEN + 1;	/* payload length field */
	buf[len] = 0;
	cr_assert_eq(mrail_wire_hdr_decode(buf, len + 1, &limits, &hdr, err,
					   sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "RSV payload of 17 bytes"), "%s", err);
	len = rsv_msg(buf, &m);
	buf[8] = 1;				/* seq */
	cr_assert_eq(mrail_wire_hdr_decode(buf, len, &limits, &hdr, err,
					   sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "RSV carries seq"), "%s", err);
	len = rsv_msg(buf, &m);
	buf[32] = 1;				/* req_id */
	cr_assert_eq(mrail_wire_hdr_decode(buf, len, &limits, &hdr, err,
					   sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "RSV carries req_id"), "%s", err);
	len = rsv_msg(buf, &m);
	buf[2] = MRAIL_WIRE_F_TAGGED;		/* flags */
	cr_assert_eq(mrail_wire_hdr_decode(buf, len, &limits, &hdr, err,
					   sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "not allowed for RSV"), "%s", err);
}

Test(wire_rsv, payload_rules)
{
	struct mrail_rsv_msg m = { .type = MRAIL_RSV_MSG_RTS, .seq = 5,
				   .counter = 4 };
	uint8_t p[MRAIL_WIRE_RSV_LEN], bad[MRAIL_WIRE_RSV_LEN];
	struct mrail_rsv_msg out;
	char err[MRAIL_ERR_MAX];
	unsigned i;

	cr_assert_eq(mrail_wire_rsv_encode(&m, p, sizeof(p)), MRAIL_WIRE_RSV_LEN);
	memcpy(bad, p, sizeof(p));
	bad[0] = 5;
	refused(bad, "RSV type 5 is unknown");
	bad[0] = 0xff;
	refused(bad, "RSV type 255 is unknown");
	for (i = 1; i < 4; i++) {
		memcpy(bad, p, sizeof(p));
		bad[i] = 0x80;
		refused(bad, "RSV reserved byte");
	}
	for (i = 12; i < 16; i++) {
		memcpy(bad, p, sizeof(p));
		bad[i] = 1;
		refused(bad, "RSV reserved word");
	}
	memcpy(bad, p, sizeof(p));
	bad[0] = MRAIL_RSV_MSG_NACK;		/* keeps the RTS's counter */
	refused(bad, "carries counter 4");

	/* Short, long, missing. */
	cr_assert_eq(mrail_wire_rsv_decode(p, sizeof(p) - 1, &out, err,
					   sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "RSV payload of 15 bytes"), "%s", err);
	cr_assert_eq(mrail_wire_rsv_decode(p, sizeof(p) + 1, &out, err,
					   sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_wire_rsv_decode(NULL, sizeof(p), &out, err,
					   sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_wire_rsv_decode(p, sizeof(p), NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_wire_rsv_decode(p, sizeof(p), &out, NULL, 0), 0);

	/* The encoder refuses what every decoder refuses. */
	m.type = (enum mrail_rsv_msg_type) 5;
	cr_assert_eq(mrail_wire_rsv_encode(&m, p, sizeof(p)), -EINVAL);
	m.type = MRAIL_RSV_MSG_ABORT;
	cr_assert_eq(mrail_wire_rsv_encode(&m, p, sizeof(p)), -EINVAL);
	m.counter = 0;
	cr_assert_eq(mrail_wire_rsv_encode(&m, p, sizeof(p) - 1), -ENOSPC);
	cr_assert_eq(mrail_wire_rsv_encode(&m, NULL, sizeof(p)), -EINVAL);
	cr_assert_eq(mrail_wire_rsv_encode(NULL, p, sizeof(p)), -EINVAL);
}

Test(wire_rsv, random_payloads_never_crash_and_round_trip_when_accepted)
{
	uint64_t rng = 0x5eed0011;
	uint8_t p[MRAIL_WIRE_RSV_LEN], again[MRAIL_WIRE_RSV_LEN];
	struct mrail_rsv_msg m;
	unsigned n, i, accepted = 0;

	for (n = 0; n < 200000; n++) {
		for (i = 0; i < sizeof(p); i++) {
			/* Mostly zero bytes, so that some are valid. */
			p[i] = test_rng_below(&rng, 4) ? 0 :
			       (uint8_t) test_rng_next(&rng);
		}
		if (mrail_wire_rsv_decode(p, sizeof(p), &m, NULL, 0))
			continue;
		accepted++;
		cr_assert_eq(mrail_wire_rsv_encode(&m, again, sizeof(again)),
			     MRAIL_WIRE_RSV_LEN);
		cr_assert_arr_eq(again, p, sizeof(p), "one encoding only");
	}
	cr_assert_gt(accepted, 100, "only %u random payloads were valid", accepted);
}
