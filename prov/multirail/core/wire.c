/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The mrail wire codec (layout in wire.h).
 *
 * Every byte a peer sends is hostile until checked: the decoders read only
 * within the length they are given, build integers byte by byte (no struct
 * overlays, no unaligned loads) and accept exactly one encoding of every
 * message, so that decoding and encoding again gives back the same bytes.
 * The rules that do not depend on the receiver's limits are shared with the
 * encoders, which refuse a message every peer would refuse: a bad header is
 * then a local bug reported at its source, not an error at every receiver.
 *
 * On failure the decoded header and RTS are zeroed (op 0 and rail count 0
 * are invalid, so a caller that ignores the return cannot take them for a
 * message); a refused ACK status is not written at all.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "addr_codec.h"
#include "mrail_err.h"
#include "wire.h"

/* Header field offsets. */
#define HDR_VERSION		0
#define HDR_OP			1
#define HDR_FLAGS		2
#define HDR_RESERVED		3
#define HDR_PAYLOAD_LEN		4
#define HDR_SEQ			8
#define HDR_TAG			16
#define HDR_CQ_DATA		24
#define HDR_REQ_ID		32
#define HDR_SENDER		40

/* RTS descriptor field offsets. */
#define RTS_TOTAL_LEN		0
#define RTS_BASE		8
#define RTS_RAIL_COUNT		16
#define RTS_RESERVED		17
#define RTS_RESERVED_LEN	7
#define RTS_KEYS		24
#define RTS_KEY_LEN		8

/* ACK payload field offsets. */
#define ACK_STATUS		0
#define ACK_RESERVED		4

/* Errno values stop below 4096: the kernel's MAX_ERRNO, as libfabric's. */
#define ACK_STATUS_MIN		(-4095)

/* Where a check explains a refusal; NULL when encoding, as nobody asks. */
struct wire_err {
	char *buf;
	size_t len;
};

static void wire_explain(const struct wire_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void wire_explain(const struct wire_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		mrail_vwrite_err(err->buf, err->len, fmt, ap);
		va_end(ap);
	}
}

/* Explains, then evaluates to ret: a macro so that static analysers, which
 * do not follow a variadic call, still see that a refusal is nonzero. */
#define wire_refuse(err, ret, ...) (wire_explain((err), __VA_ARGS__), (ret))

/* ---- byte order ---- */

static void put_le32(uint8_t *p, uint32_t value)
{
	p[0] = (uint8_t) value;
	p[1] = (uint8_t) (value >> 8);
	p[2] = (uint8_t) (value >> 16);
	p[3] = (uint8_t) (value >> 24);
}

static void put_le64(uint8_t *p, uint64_t value)
{
	put_le32(p, (uint32_t) value);
	put_le32(p + 4, (uint32_t) (value >> 32));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 |
	       (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t) get_le32(p) | (uint64_t) get_le32(p + 4) << 32;
}

/* Two's complement by arithmetic, not by an implementation-defined cast. */
static int32_t i32_from_bits(uint32_t bits)
{
	if (bits <= INT32_MAX)
		return (int32_t) bits;
	return -(int32_t) ~bits - 1;
}

static uint32_t i32_to_bits(int32_t value)
{
	if (value >= 0)
		return (uint32_t) value;
	return ~(uint32_t) -(value + 1);
}

/* ---- what each op may carry ---- */

struct wire_op_rules {
	const char *name;
	uint8_t flags;		/* flags the op may carry */
	bool ordered;		/* numbered by seq with the sender's others */
	bool needs_req_id;	/* is, or answers, a request: req_id nonzero */
	bool needs_credit;	/* spends one of the sender's credits */
	bool answer;		/* answers a request: kept, sent again AGAIN */
};

static const struct wire_op_rules wire_ops[] = {
	[MRAIL_OP_EAGER] = {
		.name = "EAGER",
		.flags = MRAIL_WIRE_F_TAGGED | MRAIL_WIRE_F_CQ_DATA |
			 MRAIL_WIRE_F_ACK_REQ,
		.ordered = true,
		.needs_credit = true,
	},
	[MRAIL_OP_RTS] = {
		.name = "RTS",
		.flags = MRAIL_WIRE_F_TAGGED | MRAIL_WIRE_F_CQ_DATA,
		.ordered = true,
		.needs_credit = true,
	},
	[MRAIL_OP_ACK] = {
		.name = "ACK", .flags = MRAIL_WIRE_F_AGAIN, .answer = true,
	},
	[MRAIL_OP_HELLO] = {
		.name = "HELLO", .flags = MRAIL_WIRE_F_REPLY | MRAIL_WIRE_F_INTRO,
	},
	[MRAIL_OP_WRITE] = {
		.name = "WRITE",
		.flags = MRAIL_WIRE_F_CQ_DATA | MRAIL_WIRE_F_INLINE,
		.ordered = true,
		.needs_req_id = true,
		.needs_credit = true,
	},
	[MRAIL_OP_READ_REQ] = {
		.name = "READ_REQ", .ordered = true, .needs_req_id = true,
		.needs_credit = true,
	},
	[MRAIL_OP_READ_RESP] = {
		.name = "READ_RESP", .flags = MRAIL_WIRE_F_AGAIN,
		.needs_req_id = true, .answer = true,
	},
	[MRAIL_OP_ATOMIC] = {
		.name = "ATOMIC", .ordered = true, .needs_req_id = true,
		.needs_credit = true,
	},
	[MRAIL_OP_ATOMIC_RESP] = {
		.name = "ATOMIC_RESP", .flags = MRAIL_WIRE_F_AGAIN,
		.needs_req_id = true, .answer = true,
	},
	[MRAIL_OP_CREDIT] = { .name = "CREDIT" },
	[MRAIL_OP_RSV] = { .name = "RSV" },
	[MRAIL_OP_PROBE] = { .name = "PROBE",
			      .flags = MRAIL_WIRE_F_ECHO | MRAIL_WIRE_F_REPLY },
	[MRAIL_OP_COLL] = { .name = "COLL", .ordered = true },
};

static const struct wire_op_rules *rules_for_op(unsigned op)
{
	if (op >= sizeof(wire_ops) / sizeof(wire_ops[0]) || !wire_ops[op].name)
		return NULL;
	return &wire_ops[op];
}

/*
 * A request id names an operation someone will answer or has answered: an
 * RTS (its data is read, then acknowledged), an EAGER that asks for an ACK,
 * and the ACK itself. Anywhere else it would be a field nobody reads.
 */
static bool hdr_carries_req_id(const struct mrail_wire_hdr *hdr)
{
	switch (hdr->op) {
	case MRAIL_OP_RTS:
	case MRAIL_OP_ACK:
	case MRAIL_OP_WRITE:
	case MRAIL_OP_READ_REQ:
	case MRAIL_OP_READ_RESP:
	case MRAIL_OP_ATOMIC:
	case MRAIL_OP_ATOMIC_RESP:
		return true;
	case MRAIL_OP_EAGER:
		return hdr->flags & MRAIL_WIRE_F_ACK_REQ;
	default:
		return false;
	}
}

static int check_op_and_flags(const struct wire_err *err,
			      const struct mrail_wire_hdr *hdr,
			      const struct wire_op_rules **rules)
{
	unsigned stray;

	*rules = rules_for_op(hdr->op);
	if (!*rules)
		return wire_refuse(err, -EINVAL,
			"unknown op %u (expected %d..%d: EAGER, RTS, ACK, "
			"HELLO, WRITE, READ_REQ, READ_RESP, ATOMIC, "
			"ATOMIC_RESP, CREDIT or RSV, or %d: COLL, %d: PROBE)",
			hdr->op, MRAIL_OP_EAGER, MRAIL_OP_RSV, MRAIL_OP_COLL,
			MRAIL_OP_PROBE);
	stray = hdr->flags & ~(unsigned) (*rules)->flags;
	if (stray)
		return wire_refuse(err, -EINVAL,
			"flags 0x%02x not allowed for %s (header flags 0x%02x, "
			"%s allows 0x%02x)", stray, (*rules)->name,
			hdr->flags, (*rules)->name, (*rules)->flags);
	if ((hdr->flags & MRAIL_WIRE_F_REPLY) && (hdr->flags & MRAIL_WIRE_F_INTRO))
		return wire_refuse(err, -EINVAL,
			"HELLO with both REPLY and INTRO (flags 0x%02x): an "
			"answer is never an introduction", hdr->flags);
	return 0;
}

/* Fields a flag or an op leaves unused must be zero: one encoding only. */
static int check_unused_fields(const struct wire_err *err,
			       const struct mrail_wire_hdr *hdr,
			       const struct wire_op_rules *rules)
{
	if (!rules->ordered && hdr->seq)
		return wire_refuse(err, -EINVAL,
			"%s carries seq %" PRIu64 ", expected 0 (only "
			"requests and collective signals are sequenced)",
			rules->name, hdr->seq);
	if (!(hdr->flags & MRAIL_WIRE_F_TAGGED) && hdr->tag)
		return wire_refuse(err, -EINVAL,
			"%s carries tag 0x%" PRIx64 " without the TAGGED "
			"flag, expected 0", rules->name, hdr->tag);
	if (!(hdr->flags & MRAIL_WIRE_F_CQ_DATA) && hdr->cq_data)
		return wire_refuse(err, -EINVAL,
			"%s carries cq_data 0x%" PRIx64 " without the CQ_DATA "
			"flag, expected 0", rules->name, hdr->cq_data);
	if (!hdr_carries_req_id(hdr) && hdr->req_id)
		return wire_refuse(err, -EINVAL,
			"%s carries req_id %" PRIu64 ", expected 0 (%s)",
			rules->name, hdr->req_id,
			hdr->op == MRAIL_OP_EAGER ?
			"no ACK_REQ flag" : "it answers no request");
	if (rules->needs_req_id && !hdr->req_id)
		return wire_refuse(err, -EINVAL,
			"%s carries req_id 0, expected the request it is or "
			"answers", rules->name);
	return 0;
}

/* Whether len is an RTS descriptor for 1..MRAIL_MAX_RAILS rails. */
static bool is_rts_len(uint64_t len)
{
	return len >= mrail_wire_rts_len(1) &&
	       len <= mrail_wire_rts_len(MRAIL_MAX_RAILS) &&
	       (len - MRAIL_WIRE_RTS_FIXED_LEN) % RTS_KEY_LEN == 0;
}

/* Payload lengths an op allows whatever the receiver's configuration. */
static int check_payload_shape(const struct wire_err *err,
			       const struct mrail_wire_hdr *hdr)
{
	uint32_t len = hdr->payload_len;
	uint32_t key_bytes;

	switch (hdr->op) {
	case MRAIL_OP_RTS:
		key_bytes = len >= MRAIL_WIRE_RTS_FIXED_LEN ?
		       len - MRAIL_WIRE_RTS_FIXED_LEN : 0;
		if (len < mrail_wire_rts_len(1) ||
		    len > mrail_wire_rts_len(MRAIL_MAX_RAILS) ||
		    key_bytes % RTS_KEY_LEN)
			return wire_refuse(err, -EINVAL,
				"RTS payload of %" PRIu32 " bytes is not a "
				"descriptor: expected %d + %d per rail, for "
				"1..%d rails", len, MRAIL_WIRE_RTS_FIXED_LEN,
				RTS_KEY_LEN, MRAIL_MAX_RAILS);
		return 0;
	case MRAIL_OP_ACK:
		if (len != MRAIL_WIRE_ACK_LEN)
			return wire_refuse(err, -EINVAL,
				"ACK payload of %" PRIu32 " bytes, expected %d",
				len, MRAIL_WIRE_ACK_LEN);
		return 0;
	case MRAIL_OP_WRITE:
		if (len < MRAIL_WIRE_RMA_LEN ||
		    (!(hdr->flags & MRAIL_WIRE_F_INLINE) &&
		     !is_rts_len(len - MRAIL_WIRE_RMA_LEN)))
			return wire_refuse(err, -EINVAL,
				"WRITE payload of %" PRIu32 " bytes, expected "
				"%d + the data (INLINE) or + an RTS descriptor",
				len, MRAIL_WIRE_RMA_LEN);
		return 0;
	case MRAIL_OP_READ_REQ:
		if (len != MRAIL_WIRE_RMA_LEN)
			return wire_refuse(err, -EINVAL,
				"READ_REQ payload of %" PRIu32 " bytes, expected "
				"%d", len, MRAIL_WIRE_RMA_LEN);
		return 0;
	case MRAIL_OP_READ_RESP:
		if (len < MRAIL_WIRE_GRANT_LEN ||
		    !is_rts_len(len - MRAIL_WIRE_GRANT_LEN))
			return wire_refuse(err, -EINVAL,
				"READ_RESP payload of %" PRIu32 " bytes, expected "
				"%d + an RTS descriptor", len,
				MRAIL_WIRE_GRANT_LEN);
		return 0;
	case MRAIL_OP_CREDIT:
		if (len != MRAIL_WIRE_CREDIT_LEN)
			return wire_refuse(err, -EINVAL,
				"CREDIT payload of %" PRIu32 " bytes, expected %d",
				len, MRAIL_WIRE_CREDIT_LEN);
		return 0;
	case MRAIL_OP_PROBE:
		if (len % 8 || len > MRAIL_WIRE_PROBE_ASK_MAX * 8)
			return wire_refuse(err, -EINVAL,
				"PROBE payload of %" PRIu32 " bytes, expected "
				"a whole number of request ids, at most %d",
				len, MRAIL_WIRE_PROBE_ASK_MAX);
		return 0;
	case MRAIL_OP_ATOMIC:
		if (len < MRAIL_WIRE_ATOMIC_LEN)
			return wire_refuse(err, -EINVAL,
				"ATOMIC payload of %" PRIu32 " bytes, expected "
				"%d + the operand and compare data", len,
				MRAIL_WIRE_ATOMIC_LEN);
		return 0;
	case MRAIL_OP_ATOMIC_RESP:
		if (len < MRAIL_WIRE_ATOMIC_RESP_LEN)
			return wire_refuse(err, -EINVAL,
				"ATOMIC_RESP payload of %" PRIu32 " bytes, "
				"expected %d + the result data", len,
				MRAIL_WIRE_ATOMIC_RESP_LEN);
		return 0;
	case MRAIL_OP_RSV:
		if (len != MRAIL_WIRE_RSV_LEN)
			return wire_refuse(err, -EINVAL,
				"RSV payload of %" PRIu32 " bytes, expected %d",
				len, MRAIL_WIRE_RSV_LEN);
		return 0;
	case MRAIL_OP_COLL:
		if (len < MRAIL_WIRE_COLL_LEN ||
		    len > MRAIL_WIRE_COLL_LEN + MRAIL_WIRE_COLL_MAX_DATA)
			return wire_refuse(err, -EINVAL,
				"COLL payload of %" PRIu32 " bytes, expected "
				"%d + at most %u bytes of data", len,
				MRAIL_WIRE_COLL_LEN, MRAIL_WIRE_COLL_MAX_DATA);
		return 0;
	case MRAIL_OP_HELLO:
		if (len < 1 || len > MRAIL_ADDR_MAX_LEN)
			return wire_refuse(err, -EINVAL,
				"HELLO payload of %" PRIu32 " bytes, expected "
				"an mrail address of 1..%d bytes", len,
				MRAIL_ADDR_MAX_LEN);
		return 0;
	default:
		/* EAGER: any length; only the receiver knows its limit. */
		return 0;
	}
}

/* Every rule that needs no knowledge of the receiver. */
static int check_hdr_rules(const struct wire_err *err,
			   const struct mrail_wire_hdr *hdr)
{
	const struct wire_op_rules *rules;
	int ret;

	if (!hdr->sender)
		return wire_refuse(err, -EINVAL,
			"sender key is 0 (every mrail endpoint has a nonzero one)");
	ret = check_op_and_flags(err, hdr, &rules);
	if (!ret)
		ret = check_unused_fields(err, hdr, rules);
	if (!ret)
		ret = check_payload_shape(err, hdr);
	return ret;
}

/* The receiver's own rail count: a bad one is a local bug, said as such. */
static int check_local_rail_count(const struct wire_err *err,
				  const struct mrail_wire_limits *limits)
{
	if (limits->rail_count < 1 || limits->rail_count > MRAIL_MAX_RAILS)
		return wire_refuse(err, -EINVAL,
			"this endpoint's rail count %u is out of range (1..%d)",
			limits->rail_count, MRAIL_MAX_RAILS);
	return 0;
}

static int check_rts_rail_count(const struct wire_err *err, unsigned count,
				const struct mrail_wire_limits *limits)
{
	if (count != limits->rail_count)
		return wire_refuse(err, -EINVAL,
			"RTS carries %u rails, this endpoint has %u",
			count, limits->rail_count);
	return 0;
}

/* Rules that depend on how the receiver is configured. */
static int check_payload_limits(const struct wire_err *err,
				const struct mrail_wire_hdr *hdr,
				const struct mrail_wire_limits *limits)
{
	unsigned rails;
	int ret;

	switch (hdr->op) {
	case MRAIL_OP_EAGER:
		if (hdr->payload_len > limits->max_eager)
			return wire_refuse(err, -EMSGSIZE,
				"EAGER payload of %" PRIu32 " bytes exceeds "
				"the eager limit %" PRIu32, hdr->payload_len,
				limits->max_eager);
		return 0;
	case MRAIL_OP_RTS:
		ret = check_local_rail_count(err, limits);
		if (ret)
			return ret;
		/* check_payload_shape made this a whole number of keys. */
		rails = (hdr->payload_len - MRAIL_WIRE_RTS_FIXED_LEN) /
			RTS_KEY_LEN;
		return check_rts_rail_count(err, rails, limits);
	case MRAIL_OP_WRITE:
		if (hdr->flags & MRAIL_WIRE_F_INLINE) {
			if (hdr->payload_len > limits->max_eager)
				return wire_refuse(err, -EMSGSIZE,
					"inline WRITE payload of %" PRIu32 " bytes "
					"exceeds the eager limit %" PRIu32,
					hdr->payload_len, limits->max_eager);
			return 0;
		}
		ret = check_local_rail_count(err, limits);
		if (ret)
			return ret;
		rails = (hdr->payload_len - MRAIL_WIRE_RMA_LEN -
			 MRAIL_WIRE_RTS_FIXED_LEN) / RTS_KEY_LEN;
		return check_rts_rail_count(err, rails, limits);
	case MRAIL_OP_READ_RESP:
		ret = check_local_rail_count(err, limits);
		if (ret)
			return ret;
		rails = (hdr->payload_len - MRAIL_WIRE_GRANT_LEN -
			 MRAIL_WIRE_RTS_FIXED_LEN) / RTS_KEY_LEN;
		return check_rts_rail_count(err, rails, limits);
	case MRAIL_OP_ATOMIC:
	case MRAIL_OP_ATOMIC_RESP:
		/* Both ends of an atomic fit in one rail message. */
		if (hdr->payload_len > limits->max_eager)
			return wire_refuse(err, -EMSGSIZE,
				"%s payload of %" PRIu32 " bytes exceeds the "
				"eager limit %" PRIu32, hdr->op == MRAIL_OP_ATOMIC ?
				"ATOMIC" : "ATOMIC_RESP", hdr->payload_len,
				limits->max_eager);
		return 0;
	default:
		return 0;
	}
}

/* The rules of an encoded message's op (at least a header), or NULL. */
static const struct wire_op_rules *rules_of_msg(const void *msg, size_t len)
{
	if (len < MRAIL_WIRE_HDR_LEN)
		return NULL;
	return rules_for_op(((const uint8_t *) msg)[HDR_OP]);
}

bool mrail_wire_needs_credit(const void *msg, size_t len)
{
	return len >= MRAIL_WIRE_HDR_LEN &&
	       mrail_wire_op_needs_credit(((const uint8_t *) msg)[HDR_OP]);
}

bool mrail_wire_op_needs_credit(uint8_t op)
{
	const struct wire_op_rules *rules = rules_for_op(op);

	return rules && rules->needs_credit;
}

bool mrail_wire_answer(const void *msg, size_t len)
{
	const struct wire_op_rules *rules = rules_of_msg(msg, len);

	return rules && rules->answer;
}

bool mrail_wire_answer_mark_again(void *msg, size_t len)
{
	uint8_t *p = msg;

	if (!mrail_wire_answer(msg, len))
		return false;
	p[HDR_FLAGS] |= MRAIL_WIRE_F_AGAIN;
	return true;
}

bool mrail_wire_number(void *msg, size_t len, uint64_t seq)
{
	const struct wire_op_rules *rules = rules_of_msg(msg, len);

	if (!rules || !rules->ordered)
		return false;
	put_le64((uint8_t *) msg + HDR_SEQ, seq);
	return true;
}

bool mrail_wire_sequenced(const void *msg, size_t len, uint64_t *seq)
{
	const struct wire_op_rules *rules = rules_of_msg(msg, len);

	if (!rules || !rules->ordered)
		return false;
	*seq = get_le64((const uint8_t *) msg + HDR_SEQ);
	return true;
}

/* ---- header ---- */

int mrail_wire_hdr_encode(const struct mrail_wire_hdr *hdr, void *buf,
			  size_t len)
{
	uint8_t *p = buf;

	if (!hdr || check_hdr_rules(NULL, hdr))
		return -EINVAL;
	if (len < MRAIL_WIRE_HDR_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;

	p[HDR_VERSION] = MRAIL_WIRE_VERSION;
	p[HDR_OP] = hdr->op;
	p[HDR_FLAGS] = hdr->flags;
	p[HDR_RESERVED] = 0;
	put_le32(&p[HDR_PAYLOAD_LEN], hdr->payload_len);
	put_le64(&p[HDR_SEQ], hdr->seq);
	put_le64(&p[HDR_TAG], hdr->tag);
	put_le64(&p[HDR_CQ_DATA], hdr->cq_data);
	put_le64(&p[HDR_REQ_ID], hdr->req_id);
	put_le64(&p[HDR_SENDER], hdr->sender);
	return MRAIL_WIRE_HDR_LEN;
}

/* What can be told before the fields mean anything: is this our header? */
static int check_hdr_frame(const struct wire_err *err, const uint8_t *p,
			   size_t len)
{
	uint32_t payload_len;

	if (len < MRAIL_WIRE_HDR_LEN)
		return wire_refuse(err, -EINVAL,
			"wire message is truncated: %zu bytes, the header "
			"alone is %d", len, MRAIL_WIRE_HDR_LEN);
	if (p[HDR_VERSION] != MRAIL_WIRE_VERSION)
		return wire_refuse(err, -EINVAL,
			"wire version %u is not supported (expected %d)",
			p[HDR_VERSION], MRAIL_WIRE_VERSION);
	if (p[HDR_RESERVED])
		return wire_refuse(err, -EINVAL,
			"header reserved byte is 0x%02x, expected 0",
			p[HDR_RESERVED]);
	payload_len = get_le32(&p[HDR_PAYLOAD_LEN]);
	if (payload_len != len - MRAIL_WIRE_HDR_LEN)
		return wire_refuse(err, -EINVAL,
			"payload length %" PRIu32 " does not match the %zu "
			"bytes received after the header", payload_len,
			len - MRAIL_WIRE_HDR_LEN);
	return 0;
}

static void load_hdr(const uint8_t *p, struct mrail_wire_hdr *hdr)
{
	hdr->op = p[HDR_OP];
	hdr->flags = p[HDR_FLAGS];
	hdr->payload_len = get_le32(&p[HDR_PAYLOAD_LEN]);
	hdr->seq = get_le64(&p[HDR_SEQ]);
	hdr->tag = get_le64(&p[HDR_TAG]);
	hdr->cq_data = get_le64(&p[HDR_CQ_DATA]);
	hdr->req_id = get_le64(&p[HDR_REQ_ID]);
	hdr->sender = get_le64(&p[HDR_SENDER]);
}

int mrail_wire_hdr_decode(const void *buf, size_t len,
			  const struct mrail_wire_limits *limits,
			  struct mrail_wire_hdr *hdr, char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	int ret;

	if (!hdr || !limits || (!buf && len))
		return wire_refuse(&werr, -EINVAL,
			"no wire message, limits or header to decode into");

	memset(hdr, 0, sizeof(*hdr));
	ret = check_hdr_frame(&werr, buf, len);
	if (ret)
		return ret;
	load_hdr(buf, hdr);
	ret = check_hdr_rules(&werr, hdr);
	if (!ret)
		ret = check_payload_limits(&werr, hdr, limits);
	if (ret)
		memset(hdr, 0, sizeof(*hdr));
	return ret;
}

/* ---- RTS ---- */

size_t mrail_wire_rts_len(uint8_t rail_count)
{
	return MRAIL_WIRE_RTS_FIXED_LEN + (size_t) rail_count * RTS_KEY_LEN;
}

/* The exclusive end, base + total_len, must be an address too. */
static int check_rts_extent(const struct wire_err *err, uint64_t total_len,
			    uint64_t base)
{
	if (!total_len)
		return wire_refuse(err, -EINVAL,
			"RTS total length 0, expected at least 1 byte (an "
			"empty message goes EAGER)");
	if (base > UINT64_MAX - total_len)
		return wire_refuse(err, -EINVAL,
			"RTS base 0x%" PRIx64 " + total length %" PRIu64
			" wraps past the end of the address space",
			base, total_len);
	return 0;
}

int mrail_wire_rts_encode(const struct mrail_wire_rts *rts, void *buf,
			  size_t len)
{
	uint8_t *p = buf;
	size_t need;
	unsigned i;

	if (!rts || rts->rail_count < 1 || rts->rail_count > MRAIL_MAX_RAILS ||
	    check_rts_extent(NULL, rts->total_len, rts->base))
		return -EINVAL;
	need = mrail_wire_rts_len(rts->rail_count);
	if (len < need)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;

	put_le64(&p[RTS_TOTAL_LEN], rts->total_len);
	put_le64(&p[RTS_BASE], rts->base);
	p[RTS_RAIL_COUNT] = rts->rail_count;
	memset(&p[RTS_RESERVED], 0, RTS_RESERVED_LEN);
	for (i = 0; i < rts->rail_count; i++)
		put_le64(&p[RTS_KEYS + i * RTS_KEY_LEN], rts->keys[i]);
	return (int) need;
}

/* Length and rail count: after this, every field lies within len. */
static int check_rts_frame(const struct wire_err *err, const uint8_t *p,
			   size_t len, const struct mrail_wire_limits *limits)
{
	unsigned count;
	int ret;

	ret = check_local_rail_count(err, limits);
	if (ret)
		return ret;
	if (len < MRAIL_WIRE_RTS_FIXED_LEN)
		return wire_refuse(err, -EINVAL,
			"RTS payload is truncated: %zu bytes, the fixed part "
			"alone is %d", len, MRAIL_WIRE_RTS_FIXED_LEN);
	count = p[RTS_RAIL_COUNT];
	ret = check_rts_rail_count(err, count, limits);
	if (ret)
		return ret;
	if (len != mrail_wire_rts_len((uint8_t) count))
		return wire_refuse(err, -EINVAL,
			"RTS payload of %zu bytes does not match its %u rails "
			"(expected %zu bytes)", len, count,
			mrail_wire_rts_len((uint8_t) count));
	return 0;
}

static int check_rts_reserved(const struct wire_err *err, const uint8_t *p)
{
	unsigned i;

	for (i = 0; i < RTS_RESERVED_LEN; i++) {
		if (p[RTS_RESERVED + i])
			return wire_refuse(err, -EINVAL,
				"RTS reserved byte %u is 0x%02x, expected 0",
				RTS_RESERVED + i, p[RTS_RESERVED + i]);
	}
	return 0;
}

static int check_rts_total_len(const struct wire_err *err, uint64_t total_len,
			       const struct mrail_wire_limits *limits)
{
	if (total_len > limits->max_msg)
		return wire_refuse(err, -EINVAL,
			"RTS total length %" PRIu64 " exceeds the message "
			"size limit %" PRIu64, total_len, limits->max_msg);
	return 0;
}

int mrail_wire_rts_decode(const void *payload, size_t len,
			  const struct mrail_wire_limits *limits,
			  struct mrail_wire_rts *rts, char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	unsigned i;
	int ret;

	if (!rts || !limits || (!payload && len))
		return wire_refuse(&werr, -EINVAL,
			"no RTS payload, limits or descriptor to decode into");

	memset(rts, 0, sizeof(*rts));
	ret = check_rts_frame(&werr, p, len, limits);
	if (!ret)
		ret = check_rts_reserved(&werr, p);
	if (ret)
		return ret;

	rts->total_len = get_le64(&p[RTS_TOTAL_LEN]);
	rts->base = get_le64(&p[RTS_BASE]);
	ret = check_rts_extent(&werr, rts->total_len, rts->base);
	if (!ret)
		ret = check_rts_total_len(&werr, rts->total_len, limits);
	if (ret) {
		memset(rts, 0, sizeof(*rts));
		return ret;
	}

	rts->rail_count = p[RTS_RAIL_COUNT];
	for (i = 0; i < rts->rail_count; i++)
		rts->keys[i] = get_le64(&p[RTS_KEYS + i * RTS_KEY_LEN]);
	return 0;
}

/* ---- ACK ---- */

static int check_ack_status(const struct wire_err *err, int32_t status)
{
	if (status > 0 || status < ACK_STATUS_MIN)
		return wire_refuse(err, -EINVAL,
			"ACK status %" PRId32 ", expected 0 or a negative "
			"errno (%d..0)", status, ACK_STATUS_MIN);
	return 0;
}

int mrail_wire_ack_encode(int32_t status, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (check_ack_status(NULL, status))
		return -EINVAL;
	if (len < MRAIL_WIRE_ACK_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;

	put_le32(&p[ACK_STATUS], i32_to_bits(status));
	put_le32(&p[ACK_RESERVED], 0);
	return MRAIL_WIRE_ACK_LEN;
}

int mrail_wire_ack_decode(const void *payload, size_t len, int32_t *status,
			  char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	uint32_t reserved;
	int32_t value;
	int ret;

	if (!status || (!payload && len))
		return wire_refuse(&werr, -EINVAL,
			"no ACK payload or status to decode into");
	if (len != MRAIL_WIRE_ACK_LEN)
		return wire_refuse(&werr, -EINVAL,
			"ACK payload of %zu bytes, expected %d", len,
			MRAIL_WIRE_ACK_LEN);

	reserved = get_le32(&p[ACK_RESERVED]);
	if (reserved)
		return wire_refuse(&werr, -EINVAL,
			"ACK reserved field is 0x%08" PRIx32 ", expected 0",
			reserved);
	value = i32_from_bits(get_le32(&p[ACK_STATUS]));
	ret = check_ack_status(&werr, value);
	if (ret)
		return ret;
	*status = value;
	return 0;
}

/* ---- RMA descriptor and READ_RESP grant ---- */

#define RMA_KEY			0
#define RMA_ADDR		8
#define RMA_LEN			16
#define GRANT_ID		0
#define GRANT_OFFSET		8

int mrail_wire_rma_encode(const struct mrail_wire_rma *rma, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (!rma || rma->addr > UINT64_MAX - rma->len)
		return -EINVAL;
	if (len < MRAIL_WIRE_RMA_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;
	put_le64(&p[RMA_KEY], rma->key);
	put_le64(&p[RMA_ADDR], rma->addr);
	put_le64(&p[RMA_LEN], rma->len);
	return MRAIL_WIRE_RMA_LEN;
}

int mrail_wire_rma_decode(const void *payload, size_t len, bool inline_data,
			  const struct mrail_wire_limits *limits,
			  struct mrail_wire_rma *rma, char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;

	if (!rma || !limits || (!payload && len))
		return wire_refuse(&werr, -EINVAL,
			"no RMA payload, limits or descriptor to decode into");
	memset(rma, 0, sizeof(*rma));
	if (len < MRAIL_WIRE_RMA_LEN)
		return wire_refuse(&werr, -EINVAL,
			"RMA descriptor is truncated: %zu bytes, expected %d",
			len, MRAIL_WIRE_RMA_LEN);
	rma->key = get_le64(&p[RMA_KEY]);
	rma->addr = get_le64(&p[RMA_ADDR]);
	rma->len = get_le64(&p[RMA_LEN]);
	if (rma->len > limits->max_msg) {
		wire_explain(&werr, "RMA length %" PRIu64 " exceeds the message "
			     "size limit %" PRIu64, rma->len, limits->max_msg);
		goto refuse;
	}
	if (rma->addr > UINT64_MAX - rma->len) {
		wire_explain(&werr, "RMA address 0x%" PRIx64 " + length %" PRIu64
			     " wraps past the end of the address space",
			     rma->addr, rma->len);
		goto refuse;
	}
	if (inline_data && len - MRAIL_WIRE_RMA_LEN != rma->len) {
		wire_explain(&werr, "inline WRITE of %" PRIu64 " bytes carries "
			     "%zu bytes of data", rma->len,
			     len - MRAIL_WIRE_RMA_LEN);
		goto refuse;
	}
	return 0;
refuse:
	memset(rma, 0, sizeof(*rma));
	return -EINVAL;
}

int mrail_wire_grant_encode(uint64_t grant_id, uint64_t offset, void *buf,
			    size_t len)
{
	uint8_t *p = buf;

	if (!grant_id)
		return -EINVAL;
	if (len < MRAIL_WIRE_GRANT_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;
	put_le64(&p[GRANT_ID], grant_id);
	put_le64(&p[GRANT_OFFSET], offset);
	return MRAIL_WIRE_GRANT_LEN;
}

int mrail_wire_grant_decode(const void *payload, size_t len, uint64_t *grant_id,
			    uint64_t *offset, char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	uint64_t id;

	if (!grant_id || !offset || (!payload && len))
		return wire_refuse(&werr, -EINVAL,
			"no READ_RESP payload or fields to decode into");
	if (len < MRAIL_WIRE_GRANT_LEN)
		return wire_refuse(&werr, -EINVAL,
			"READ_RESP grant is truncated: %zu bytes, expected %d",
			len, MRAIL_WIRE_GRANT_LEN);
	id = get_le64(&p[GRANT_ID]);
	if (!id)
		return wire_refuse(&werr, -EINVAL,
			"READ_RESP grant id 0, expected the target's request");
	*grant_id = id;
	*offset = get_le64(&p[GRANT_OFFSET]);
	return 0;
}

/* ---- CREDIT ---- */

int mrail_wire_credit_encode(const struct mrail_wire_credit *credit, void *buf,
			     size_t len)
{
	uint8_t *p = buf;

	if (!credit)
		return -EINVAL;
	if (len < MRAIL_WIRE_CREDIT_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;
	put_le64(p, credit->taken);
	put_le64(p + 8, credit->next_seq);
	return MRAIL_WIRE_CREDIT_LEN;
}

int mrail_wire_credit_decode(const void *payload, size_t len,
			     struct mrail_wire_credit *credit, char *err,
			     size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;

	*credit = (struct mrail_wire_credit) { 0 };
	if (len != MRAIL_WIRE_CREDIT_LEN || !p)
		return wire_refuse(&werr, -EINVAL,
			"CREDIT payload of %zu bytes, expected %d", len,
			MRAIL_WIRE_CREDIT_LEN);
	credit->taken = get_le64(p);
	credit->next_seq = get_le64(p + 8);
	return 0;
}

int mrail_wire_probe_ask_encode(const uint64_t *req_ids, size_t count,
				void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t i;

	if (count > MRAIL_WIRE_PROBE_ASK_MAX || (count && !req_ids))
		return -EINVAL;
	if (len < count * 8)
		return -ENOSPC;
	if (count && !buf)
		return -EINVAL;
	for (i = 0; i < count; i++)
		put_le64(p + i * 8, req_ids[i]);
	return (int) (count * 8);
}

int mrail_wire_probe_ask_decode(const void *payload, size_t len,
				uint64_t *req_ids, size_t *count, char *err,
				size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	size_t i;

	*count = 0;
	if (len % 8 || len > MRAIL_WIRE_PROBE_ASK_MAX * 8 || (len && !p))
		return wire_refuse(&werr, -EINVAL,
			"PROBE payload of %zu bytes, expected a whole number "
			"of request ids, at most %d", len,
			MRAIL_WIRE_PROBE_ASK_MAX);
	for (i = 0; i < len / 8; i++) {
		req_ids[i] = get_le64(p + i * 8);
		if (!req_ids[i])
			return wire_refuse(&werr, -EINVAL,
				"PROBE asks again for request id 0, which no "
				"request has");
	}
	*count = len / 8;
	return 0;
}

uint64_t mrail_wire_req_id(const void *msg, size_t len)
{
	if (!msg || len < MRAIL_WIRE_HDR_LEN)
		return 0;
	return get_le64((const uint8_t *) msg + HDR_REQ_ID);
}

/* ---- atomics ---- */

#define ATOMIC_KEY		0
#define ATOMIC_ADDR		8
#define ATOMIC_COUNT		16
#define ATOMIC_OP		24
#define ATOMIC_DATATYPE		25
#define ATOMIC_KIND		26
#define ATOMIC_RESERVED		27
#define ATOMIC_RESERVED_LEN	5

size_t mrail_wire_atomic_max_count(enum mrail_atomic_kind kind, size_t size,
				   uint32_t max_eager)
{
	size_t per_element;

	if (!size || (unsigned) kind >= MRAIL_ATOMIC_KIND_COUNT ||
	    max_eager < MRAIL_WIRE_ATOMIC_LEN)
		return 0;
	/* The request is the larger of the two messages: the response has
	 * at most one element's worth per element too, behind a shorter
	 * prefix. */
	per_element = kind == MRAIL_ATOMIC_COMPARE ? 2 * size : size;
	return (max_eager - MRAIL_WIRE_ATOMIC_LEN) / per_element;
}

/* Kind, op, datatype and count: the rules every receiver applies whatever
 * its limits. Fills *size with the datatype's. */
static int check_atomic_desc(const struct wire_err *err,
			     const struct mrail_wire_atomic *atomic,
			     size_t *size)
{
	int ret;

	if (atomic->kind >= MRAIL_ATOMIC_KIND_COUNT)
		return wire_refuse(err, -EINVAL,
			"atomic kind %u, expected 0..%d (plain, fetch, compare)",
			atomic->kind, MRAIL_ATOMIC_KIND_COUNT - 1);
	ret = mrail_atomic_valid((enum mrail_atomic_kind) atomic->kind,
				 (enum fi_op) atomic->op,
				 (enum fi_datatype) atomic->datatype, size);
	if (ret)
		return wire_refuse(err, -EINVAL,
			"atomic op %u on datatype %u is not a %s atomic this "
			"provider executes", atomic->op, atomic->datatype,
			atomic->kind == MRAIL_ATOMIC_PLAIN ? "plain" :
			atomic->kind == MRAIL_ATOMIC_FETCH ? "fetch" : "compare");
	if (!atomic->count)
		return wire_refuse(err, -EINVAL,
			"atomic of 0 elements, expected at least 1");
	if (atomic->count > UINT64_MAX / *size ||
	    atomic->addr > UINT64_MAX - atomic->count * *size)
		return wire_refuse(err, -EINVAL,
			"atomic address 0x%" PRIx64 " + %" PRIu64 " elements of "
			"%zu bytes wraps past the end of the address space",
			atomic->addr, atomic->count, *size);
	return 0;
}

int mrail_wire_atomic_encode(const struct mrail_wire_atomic *atomic, void *buf,
			     size_t len)
{
	uint8_t *p = buf;
	size_t size;

	if (!atomic || check_atomic_desc(NULL, atomic, &size))
		return -EINVAL;
	if (len < MRAIL_WIRE_ATOMIC_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;
	put_le64(&p[ATOMIC_KEY], atomic->key);
	put_le64(&p[ATOMIC_ADDR], atomic->addr);
	put_le64(&p[ATOMIC_COUNT], atomic->count);
	p[ATOMIC_OP] = atomic->op;
	p[ATOMIC_DATATYPE] = atomic->datatype;
	p[ATOMIC_KIND] = atomic->kind;
	memset(&p[ATOMIC_RESERVED], 0, ATOMIC_RESERVED_LEN);
	return MRAIL_WIRE_ATOMIC_LEN;
}

/* The count limit and the exact lengths of the data after the descriptor. */
static int check_atomic_data(const struct wire_err *err, size_t data_len,
			     const struct mrail_wire_limits *limits,
			     struct mrail_wire_atomic_req *req)
{
	const struct mrail_wire_atomic *d = &req->desc;
	size_t max;

	max = mrail_wire_atomic_max_count((enum mrail_atomic_kind) d->kind,
					  req->size, limits->max_eager);
	if (d->count > max)
		return wire_refuse(err, -EINVAL,
			"atomic of %" PRIu64 " elements of %zu bytes, at most "
			"%zu fit in one message", d->count, req->size, max);
	if (mrail_atomic_len((enum mrail_atomic_kind) d->kind,
			     (enum fi_op) d->op, (enum fi_datatype) d->datatype,
			     (size_t) d->count, &req->len))
		return wire_refuse(err, -EINVAL,
			"atomic of %" PRIu64 " elements has no length", d->count);
	if (data_len != req->len.operand + req->len.compare)
		return wire_refuse(err, -EINVAL,
			"atomic of %" PRIu64 " elements carries %zu bytes of "
			"data, expected %zu of operand and %zu of compare data",
			d->count, data_len, req->len.operand, req->len.compare);
	return 0;
}

static int check_atomic_reserved(const struct wire_err *err, const uint8_t *p)
{
	unsigned i;

	for (i = 0; i < ATOMIC_RESERVED_LEN; i++) {
		if (p[ATOMIC_RESERVED + i])
			return wire_refuse(err, -EINVAL,
				"atomic reserved byte %u is 0x%02x, expected 0",
				ATOMIC_RESERVED + i, p[ATOMIC_RESERVED + i]);
	}
	return 0;
}

int mrail_wire_atomic_decode(const void *payload, size_t len,
			     const struct mrail_wire_limits *limits,
			     struct mrail_wire_atomic_req *req, char *err,
			     size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	const uint8_t *data;
	int ret;

	if (!req || !limits || (!payload && len))
		return wire_refuse(&werr, -EINVAL,
			"no ATOMIC payload, limits or request to decode into");
	memset(req, 0, sizeof(*req));
	if (len < MRAIL_WIRE_ATOMIC_LEN)
		return wire_refuse(&werr, -EINVAL,
			"atomic descriptor is truncated: %zu bytes, expected %d",
			len, MRAIL_WIRE_ATOMIC_LEN);
	ret = check_atomic_reserved(&werr, p);
	if (ret)
		return ret;
	req->desc.key = get_le64(&p[ATOMIC_KEY]);
	req->desc.addr = get_le64(&p[ATOMIC_ADDR]);
	req->desc.count = get_le64(&p[ATOMIC_COUNT]);
	req->desc.op = p[ATOMIC_OP];
	req->desc.datatype = p[ATOMIC_DATATYPE];
	req->desc.kind = p[ATOMIC_KIND];
	ret = check_atomic_desc(&werr, &req->desc, &req->size);
	if (!ret)
		ret = check_atomic_data(&werr, len - MRAIL_WIRE_ATOMIC_LEN,
					limits, req);
	if (ret) {
		memset(req, 0, sizeof(*req));
		return ret;
	}
	data = p + MRAIL_WIRE_ATOMIC_LEN;
	req->operand = req->len.operand ? data : NULL;
	req->compare = req->len.compare ? data + req->len.operand : NULL;
	return 0;
}

int mrail_wire_atomic_resp_encode(int32_t status, void *buf, size_t len)
{
	/* The same eight bytes as an ACK's, with data behind them. */
	return mrail_wire_ack_encode(status, buf, len);
}

int mrail_wire_atomic_resp_decode(const void *payload, size_t len,
				  int32_t *status, const uint8_t **result,
				  size_t *result_len, char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	int32_t value;
	int ret;

	if (!status || !result || !result_len || (!payload && len))
		return wire_refuse(&werr, -EINVAL,
			"no ATOMIC_RESP payload or fields to decode into");
	if (len < MRAIL_WIRE_ATOMIC_RESP_LEN)
		return wire_refuse(&werr, -EINVAL,
			"ATOMIC_RESP is truncated: %zu bytes, expected at "
			"least %d", len, MRAIL_WIRE_ATOMIC_RESP_LEN);
	ret = mrail_wire_ack_decode(p, MRAIL_WIRE_ATOMIC_RESP_LEN, &value,
				    err, err_len);
	if (ret)
		return ret;
	if (value && len != MRAIL_WIRE_ATOMIC_RESP_LEN)
		return wire_refuse(&werr, -EINVAL,
			"ATOMIC_RESP with error %" PRId32 " carries %zu bytes "
			"of result, expected none", value,
			len - MRAIL_WIRE_ATOMIC_RESP_LEN);
	*status = value;
	*result_len = len - MRAIL_WIRE_ATOMIC_RESP_LEN;
	*result = *result_len ? p + MRAIL_WIRE_ATOMIC_RESP_LEN : NULL;
	return 0;
}

/* ---- RSV ---- */

#define RSV_TYPE		0
#define RSV_RESERVED		1
#define RSV_SEQ			4
#define RSV_COUNTER		8
#define RSV_RESERVED2		12

static int rsv_check(const struct wire_err *err, unsigned type, int32_t counter)
{
	if (type > MRAIL_RSV_MSG_ACK)
		return wire_refuse(err, -EINVAL,
			"RSV type %u is unknown (expected 0..%d: RTS, CTS, "
			"NACK, ABORT or ACK)", type, MRAIL_RSV_MSG_ACK);
	if (type != MRAIL_RSV_MSG_RTS && counter)
		return wire_refuse(err, -EINVAL,
			"RSV type %u carries counter %" PRId32 ", expected 0 "
			"(only an RTS carries one)", type, counter);
	return 0;
}

int mrail_wire_rsv_encode(const struct mrail_rsv_msg *msg, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (!msg || rsv_check(NULL, (unsigned) msg->type, msg->counter))
		return -EINVAL;
	if (len < MRAIL_WIRE_RSV_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;
	memset(p, 0, MRAIL_WIRE_RSV_LEN);
	p[RSV_TYPE] = (uint8_t) msg->type;
	put_le32(&p[RSV_SEQ], msg->seq);
	put_le32(&p[RSV_COUNTER], i32_to_bits(msg->counter));
	return MRAIL_WIRE_RSV_LEN;
}

int mrail_wire_rsv_decode(const void *payload, size_t len,
			  struct mrail_rsv_msg *msg, char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	int32_t counter;
	unsigned i;
	int ret;

	if (!msg)
		return wire_refuse(&werr, -EINVAL, "no RSV message to decode into");
	memset(msg, 0, sizeof(*msg));
	if (len != MRAIL_WIRE_RSV_LEN || !p)
		return wire_refuse(&werr, -EINVAL,
			"RSV payload of %zu bytes, expected %d", len,
			MRAIL_WIRE_RSV_LEN);
	for (i = RSV_RESERVED; i < RSV_SEQ; i++) {
		if (p[i])
			return wire_refuse(&werr, -EINVAL,
				"RSV reserved byte %u is 0x%02x, expected 0",
				i, p[i]);
	}
	if (get_le32(&p[RSV_RESERVED2]))
		return wire_refuse(&werr, -EINVAL,
			"RSV reserved word is 0x%08" PRIx32 ", expected 0",
			get_le32(&p[RSV_RESERVED2]));
	counter = i32_from_bits(get_le32(&p[RSV_COUNTER]));
	ret = rsv_check(&werr, p[RSV_TYPE], counter);
	if (ret)
		return ret;
	msg->type = (enum mrail_rsv_msg_type) p[RSV_TYPE];
	msg->seq = get_le32(&p[RSV_SEQ]);
	msg->counter = counter;
	return 0;
}

/* ---- COLL ---- */

#define COLL_GROUP		0
#define COLL_SEQ		8
#define COLL_COUNTER		16
#define COLL_KIND		20
#define COLL_DATATYPE		21
#define COLL_OP			22
#define COLL_RESERVED		23
#define COLL_DATA_LEN		24
#define COLL_RESERVED2		28

static int check_coll(const struct wire_err *err,
		      const struct mrail_wire_coll *coll)
{
	if (!coll->group)
		return wire_refuse(err, -EINVAL,
			"COLL group id is 0 (every group has a nonzero one)");
	if (coll->counter >= MRAIL_WIRE_COLL_MAX_COUNTERS)
		return wire_refuse(err, -EINVAL,
			"COLL counter %" PRIu32 ", expected 0..%u",
			coll->counter, MRAIL_WIRE_COLL_MAX_COUNTERS - 1);
	if (coll->data_len > MRAIL_WIRE_COLL_MAX_DATA)
		return wire_refuse(err, -EINVAL,
			"COLL data length %" PRIu32 " exceeds %u",
			coll->data_len, MRAIL_WIRE_COLL_MAX_DATA);
	switch (coll->kind) {
	case MRAIL_WIRE_COLL_BARRIER:
		if (coll->datatype || coll->op || coll->data_len)
			return wire_refuse(err, -EINVAL,
				"COLL barrier carries datatype %u, op %u and "
				"%" PRIu32 " bytes of data, expected none",
				coll->datatype, coll->op, coll->data_len);
		return 0;
	case MRAIL_WIRE_COLL_BCAST:
		if (coll->op)
			return wire_refuse(err, -EINVAL,
				"COLL broadcast carries op %u, expected 0",
				coll->op);
		return 0;
	case MRAIL_WIRE_COLL_ALLREDUCE:
		return 0;
	default:
		return wire_refuse(err, -EINVAL,
			"COLL kind %u is unknown (expected 1 barrier, "
			"2 broadcast or 3 allreduce)", coll->kind);
	}
}

int mrail_wire_coll_encode(const struct mrail_wire_coll *coll, void *buf,
			   size_t len)
{
	uint8_t *p = buf;

	if (!coll || check_coll(NULL, coll))
		return -EINVAL;
	if (len < MRAIL_WIRE_COLL_LEN)
		return -ENOSPC;
	if (!buf)
		return -EINVAL;
	put_le64(&p[COLL_GROUP], coll->group);
	put_le64(&p[COLL_SEQ], coll->seq);
	put_le32(&p[COLL_COUNTER], coll->counter);
	p[COLL_KIND] = coll->kind;
	p[COLL_DATATYPE] = coll->datatype;
	p[COLL_OP] = coll->op;
	p[COLL_RESERVED] = 0;
	put_le32(&p[COLL_DATA_LEN], coll->data_len);
	put_le32(&p[COLL_RESERVED2], 0);
	return MRAIL_WIRE_COLL_LEN;
}

int mrail_wire_coll_decode(const void *payload, size_t len,
			   struct mrail_wire_coll *coll, const uint8_t **data,
			   char *err, size_t err_len)
{
	const struct wire_err werr = { .buf = err, .len = err_len };
	const uint8_t *p = payload;
	int ret;

	if (!coll || !data || (!payload && len))
		return wire_refuse(&werr, -EINVAL,
			"no COLL payload or fields to decode into");
	memset(coll, 0, sizeof(*coll));
	*data = NULL;
	if (len < MRAIL_WIRE_COLL_LEN)
		return wire_refuse(&werr, -EINVAL,
			"COLL is truncated: %zu bytes, expected at least %d",
			len, MRAIL_WIRE_COLL_LEN);
	if (p[COLL_RESERVED] || get_le32(&p[COLL_RESERVED2]))
		return wire_refuse(&werr, -EINVAL,
			"COLL reserved fields are not zero");
	coll->group = get_le64(&p[COLL_GROUP]);
	coll->seq = get_le64(&p[COLL_SEQ]);
	coll->counter = get_le32(&p[COLL_COUNTER]);
	coll->kind = p[COLL_KIND];
	coll->datatype = p[COLL_DATATYPE];
	coll->op = p[COLL_OP];
	coll->data_len = get_le32(&p[COLL_DATA_LEN]);
	ret = check_coll(&werr, coll);
	if (!ret && coll->data_len != len - MRAIL_WIRE_COLL_LEN)
		ret = wire_refuse(&werr, -EINVAL,
			"COLL says %" PRIu32 " bytes of data, %zu follow",
			coll->data_len, len - MRAIL_WIRE_COLL_LEN);
	if (ret) {
		memset(coll, 0, sizeof(*coll));
		return ret;
	}
	*data = coll->data_len ? p + MRAIL_WIRE_COLL_LEN : NULL;
	return 0;
}
