/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The mrail wire protocol: what one mrail endpoint sends another over a rail.
 * Every rail message carries exactly one mrail message: a fixed header, then
 * a payload whose meaning depends on the operation. Everything decoded here
 * comes from the network and is validated completely before use.
 *
 * Header (MRAIL_WIRE_HDR_LEN bytes, integers little-endian):
 *   0  u8   version (MRAIL_WIRE_VERSION)
 *   1  u8   op (enum mrail_wire_op)
 *   2  u8   flags (MRAIL_WIRE_F_*)
 *   3  u8   reserved, zero
 *   4  u32  payload length: exactly the bytes that follow the header
 *   8  u64  seq: per sender->receiver order of the requests (EAGER, RTS,
 *           WRITE, READ_REQ, ATOMIC) and collective signals (COLL): the
 *           receiver runs each once, in order
 *  16  u64  tag (TAGGED only, else zero)
 *  24  u64  remote CQ data (CQ_DATA only, else zero)
 *  32  u64  request id: the sender's operation (EAGER with ACK_REQ, RTS,
 *           WRITE, READ_REQ, ATOMIC), the one a READ_RESP, an ATOMIC_RESP
 *           or an ACK answers
 *  40  u64  sender key: mrail_addr_key() of the sender's own name, nonzero.
 *           The receiver finds the peer by it: a rail reports no source
 *           for a sender not yet in its AV, which libfabric allows to send
 *           first (the receiver keeps such messages until it learns the key)
 *
 * Payloads:
 *   EAGER  the message data, at most the receiver's eager limit
 *   RTS    rendezvous descriptor (below); the receiver reads the data
 *   ACK    i32 status (0 or a negative errno), u32 reserved zero. With
 *          AGAIN it may be a second copy (sent again when a rail failed);
 *          a second copy of an answer (ACK, READ_RESP, ATOMIC_RESP), flagged
 *          or not, answers a request of the receiver's that is no longer
 *          waiting, and is dropped quietly
 *   HELLO  the sender's full mrail address (addr_codec.h); with the REPLY
 *          flag it answers a HELLO, with the INTRO flag it introduces a
 *          sender that holds the receiver's full address (never both);
 *          neither is answered itself
 *   WRITE  RMA descriptor (below), then with the INLINE flag exactly its
 *          length of data, else an RTS descriptor of that length (the
 *          target reads the data, then ACKs request id)
 *   READ_REQ  RMA descriptor; answered with READ_RESP or an error ACK
 *   CREDIT u64 taken: how many of the sender's EAGER, RTS,
 *          WRITE, READ_REQ and ATOMIC messages the receiver has taken off
 *          its rails in all; the sender may have MRAIL_TX_CREDITS more than
 *          that sent (flow control). u64 next seq: the sequence number of
 *          the sender's next request the receiver waits for, every
 *          one before it having arrived (a sender keeps copies of those
 *          until then, to send again when a rail fails, or when a CREDIT
 *          shows the receiver still waiting for it a rail timeout later).
 *          Both only grow, so a CREDIT lost with a rail is made good by the
 *          next one.
 *   READ_RESP u64 grant id (nonzero), u64 offset into the target's region,
 *          then an RTS descriptor of the region (base, per rail keys); the
 *          initiator reads, then ACKs the grant id
 *   ATOMIC an atomic descriptor (below), then exactly the operand bytes,
 *          then exactly the compare bytes (core/atomic.h's mrail_atomic_len);
 *          the target applies it and answers request id with ATOMIC_RESP
 *   ATOMIC_RESP  i32 status (0 or a negative errno), u32 reserved zero;
 *          with status 0 then exactly the result bytes of a fetch or
 *          compare atomic (none for a plain one); an error carries none
 *   PROBE  none, or up to MRAIL_WIRE_PROBE_ASK_MAX u64 request ids of the
 *          sender's (nonzero) whose answers it has waited for long: the
 *          receiver sends again those of them it answered and still keeps.
 *          With ECHO the receiver answers with a PROBE REPLY on the same
 *          rail, and with a CREDIT
 *   RSV    a rail reservation message (Coll et al. 2001, Algorithms 2-4; core/reserve.h),
 *          about the rail it travels on; from is the header's sender key,
 *          to is the receiver. No seq, no req_id, no credit:
 *            0  u8   type (enum mrail_rsv_msg_type: RTS 0 .. ACK 4)
 *            1  u8[3] reserved, zero
 *            4  u32  seq: the requester's number of the request
 *            8  i32  counter: RTS the requester's priority counter, else 0
 *           12  u32  reserved, zero
 *
 * RMA descriptor (the target's region, as the application named it):
 *   0  u64  key
 *   8  u64  addr: offset into the region (mr_mode 0)
 *  16  u64  length (0..max_msg; addr + length must not wrap)
 *
 * Atomic descriptor (the target's elements, as the application named them):
 *   0  u64  key
 *   8  u64  addr: offset into the region (mr_mode 0)
 *  16  u64  count of elements, 1..mrail_wire_atomic_max_count; addr +
 *           count * datatype size must not wrap
 *  24  u8   op (enum fi_op)
 *  25  u8   datatype (enum fi_datatype)
 *  26  u8   kind (enum mrail_atomic_kind: plain, fetch, compare); the
 *           three must be a combination mrail_atomic_valid accepts
 *  27  u8[5] reserved, zero
 * A whole request and a whole response each fit in one rail message (at
 * most the receiver's eager limit of payload), which bounds count: see
 * mrail_wire_atomic_max_count.
 *
 * RTS descriptor:
 *   0  u64  total length of the message
 *   8  u64  base: remote address of the data (as fi_read takes it)
 *  16  u8   rail count, must equal the receiver's
 *  17  u8[7] reserved, zero
 *  24  u64  per rail: the MR key of the data on that rail
 */
#ifndef MRAIL_WIRE_H
#define MRAIL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "mrail_limits.h"
#include "reserve.h"

#define MRAIL_WIRE_VERSION 5
#define MRAIL_WIRE_HDR_LEN 48
#define MRAIL_WIRE_RTS_FIXED_LEN 24
#define MRAIL_WIRE_ACK_LEN 8
#define MRAIL_WIRE_RMA_LEN 24
#define MRAIL_WIRE_GRANT_LEN 16
#define MRAIL_WIRE_CREDIT_LEN 16
#define MRAIL_WIRE_ATOMIC_LEN 32
#define MRAIL_WIRE_ATOMIC_RESP_LEN 8
#define MRAIL_WIRE_RSV_LEN 16

enum mrail_wire_op {
	MRAIL_OP_EAGER = 1,	/* a whole message inline */
	MRAIL_OP_RTS = 2,	/* rendezvous: here is where to read the message */
	MRAIL_OP_ACK = 3,	/* the receiver is done with request id */
	MRAIL_OP_HELLO = 4,	/* first contact: the sender's full address */
	MRAIL_OP_WRITE = 5,	/* RMA write: inline data or where to read it */
	MRAIL_OP_READ_REQ = 6,	/* RMA read: asks for a region's rail keys */
	MRAIL_OP_READ_RESP = 7,	/* the keys: the initiator reads, then ACKs */
	MRAIL_OP_ATOMIC = 8,	/* an atomic the target applies itself */
	MRAIL_OP_ATOMIC_RESP = 9,	/* its outcome, and the fetched values */
	MRAIL_OP_CREDIT = 10,	/* flow control: the sender may send more */
	MRAIL_OP_RSV = 11,	/* rail reservation control (core/reserve.h) */
	MRAIL_OP_COLL = 12,	/* one step of a collective (fi_collective) */
	MRAIL_OP_PROBE = 13,	/* liveness, rail health; answers asked for */
};

#define MRAIL_WIRE_F_TAGGED	0x01	/* EAGER, RTS: tag is meaningful */
#define MRAIL_WIRE_F_CQ_DATA	0x02	/* EAGER, RTS: cq_data is meaningful */
#define MRAIL_WIRE_F_ACK_REQ	0x04	/* EAGER: answer with ACK when delivered */
#define MRAIL_WIRE_F_REPLY	0x08	/* HELLO, PROBE: the answer to one */
#define MRAIL_WIRE_F_INLINE	0x10	/* WRITE: the data follows the descriptor */
#define MRAIL_WIRE_F_INTRO	0x20	/* HELLO: an introduction, not answered */
#define MRAIL_WIRE_F_ECHO	0x40	/* PROBE: answer with a PROBE on its rail */
#define MRAIL_WIRE_F_AGAIN	0x80	/* answers: maybe a second copy */

struct mrail_wire_hdr {
	uint8_t op;
	uint8_t flags;
	uint32_t payload_len;
	uint64_t seq;
	uint64_t tag;
	uint64_t cq_data;
	uint64_t req_id;
	uint64_t sender;	/* the sender's key, never 0 */
};

struct mrail_wire_rts {
	uint64_t total_len;
	uint64_t base;
	uint8_t rail_count;
	uint64_t keys[MRAIL_MAX_RAILS];
};

/* An RMA descriptor: what the initiator asks of the target's region. */
struct mrail_wire_rma {
	uint64_t key;
	uint64_t addr;
	uint64_t len;
};

/* An atomic descriptor: what the initiator asks of the target's elements. */
struct mrail_wire_atomic {
	uint64_t key;
	uint64_t addr;
	uint64_t count;
	uint8_t op;		/* enum fi_op */
	uint8_t datatype;	/* enum fi_datatype */
	uint8_t kind;		/* enum mrail_atomic_kind */
};

/* A decoded ATOMIC request: its descriptor and where its data lies in the
 * payload it was decoded from (NULL where a part is empty). */
struct mrail_wire_atomic_req {
	struct mrail_wire_atomic desc;
	size_t size;			/* the datatype's size in bytes */
	struct mrail_atomic_len len;	/* each part's length, result's too */
	const uint8_t *operand;
	const uint8_t *compare;
};

/* Limits the receiver holds a peer to, from its own configuration. */
struct mrail_wire_limits {
	uint32_t max_eager;	/* largest EAGER payload accepted */
	uint64_t max_msg;	/* largest message (RTS total length) */
	uint8_t rail_count;	/* the receiver's rails; RTS must match */
};

/*
 * Writes hdr into buf. Returns MRAIL_WIRE_HDR_LEN, -ENOSPC when len is too
 * small, or -EINVAL when hdr breaks a rule the decoder enforces: sender key
 * 0, unknown op,
 * flags not allowed for the op, nonzero tag/cq_data without their flag,
 * nonzero seq on ACK/HELLO, nonzero req_id on HELLO or on EAGER without
 * ACK_REQ, a payload length the op does not allow (ACK != 8, HELLO outside
 * 1..MRAIL_ADDR_MAX_LEN, RTS != 24 + 8 * n for n in 1..MRAIL_MAX_RAILS).
 * The eager limit is not checked: only the receiver knows it.
 */
int mrail_wire_hdr_encode(const struct mrail_wire_hdr *hdr, void *buf, size_t len);

/*
 * Validates one received rail message of len bytes (header and payload) and
 * decodes its header. Checks version, a nonzero sender key, op, flags allowed for the op, reserved
 * bytes, that payload_len equals len - MRAIL_WIRE_HDR_LEN, that fields
 * without their flag are zero (and seq, req_id where the op has none), and
 * the payload length each op allows
 * (EAGER <= limits->max_eager, ACK == MRAIL_WIRE_ACK_LEN, RTS ==
 * fixed part + 8 * limits->rail_count, HELLO 1..MRAIL_ADDR_MAX_LEN,
 * READ_REQ == MRAIL_WIRE_RMA_LEN, WRITE INLINE MRAIL_WIRE_RMA_LEN..
 * limits->max_eager, other WRITE == MRAIL_WIRE_RMA_LEN + RTS, READ_RESP ==
 * MRAIL_WIRE_GRANT_LEN + RTS, ATOMIC MRAIL_WIRE_ATOMIC_LEN..max_eager,
 * ATOMIC_RESP MRAIL_WIRE_ATOMIC_RESP_LEN..max_eager; every RMA and atomic
 * op carries a nonzero req_id).
 * Returns 0, or -EINVAL (-EMSGSIZE for an EAGER over the limit) with err
 * naming the field, its value and what was expected.
 */
int mrail_wire_hdr_decode(const void *buf, size_t len,
			  const struct mrail_wire_limits *limits,
			  struct mrail_wire_hdr *hdr, char *err, size_t err_len);

/* Length of an RTS payload for rail_count rails. */
size_t mrail_wire_rts_len(uint8_t rail_count);

/* Returns bytes written, -ENOSPC, or -EINVAL (rail count 0 or too many,
 * total length 0, base + total length past 2^64). */
int mrail_wire_rts_encode(const struct mrail_wire_rts *rts, void *buf, size_t len);

/*
 * Decodes an RTS payload already sized by mrail_wire_hdr_decode: rail count
 * must equal limits->rail_count, total length 1..limits->max_msg, base +
 * total length must not wrap, reserved bytes zero. Returns 0 or -EINVAL.
 */
int mrail_wire_rts_decode(const void *payload, size_t len,
			  const struct mrail_wire_limits *limits,
			  struct mrail_wire_rts *rts, char *err, size_t err_len);

/* Returns MRAIL_WIRE_ACK_LEN, -ENOSPC, or -EINVAL when status is not 0 or
 * -4095..-1. */
int mrail_wire_ack_encode(int32_t status, void *buf, size_t len);

/* status must be 0 or a negative errno above -4096. */
int mrail_wire_ack_decode(const void *payload, size_t len, int32_t *status,
			  char *err, size_t err_len);

/* Returns MRAIL_WIRE_RMA_LEN, -ENOSPC, or -EINVAL (addr + len wraps). */
int mrail_wire_rma_encode(const struct mrail_wire_rma *rma, void *buf, size_t len);

/*
 * Decodes the RMA descriptor at the start of a WRITE or READ_REQ payload of
 * len bytes (already checked by mrail_wire_hdr_decode): length at most
 * limits->max_msg, addr + length must not wrap. For a WRITE with the INLINE
 * flag (inline true) the rest of the payload must be exactly the length.
 * Returns 0 or -EINVAL; on failure rma is zeroed.
 */
int mrail_wire_rma_decode(const void *payload, size_t len, bool inline_data,
			  const struct mrail_wire_limits *limits,
			  struct mrail_wire_rma *rma, char *err, size_t err_len);

/* The READ_RESP prefix. Encode: MRAIL_WIRE_GRANT_LEN, -ENOSPC, -EINVAL for
 * grant id 0. Decode: 0, or -EINVAL (short, or grant id 0). */
int mrail_wire_grant_encode(uint64_t grant_id, uint64_t offset, void *buf,
			    size_t len);
int mrail_wire_grant_decode(const void *payload, size_t len, uint64_t *grant_id,
			    uint64_t *offset, char *err, size_t err_len);

/*
 * Whether an encoded message (at least a header) spends a flow-control
 * credit: EAGER, RTS, WRITE, READ_REQ and ATOMIC, the requests a sender can send
 * without waiting for an answer. Answers and CREDIT itself spend none.
 */
bool mrail_wire_needs_credit(const void *msg, size_t len);

/* The same for an op (false for an unknown one). */
bool mrail_wire_op_needs_credit(uint8_t op);

/* Whether an encoded message (at least a header, written by us) answers a
 * request: ACK, READ_RESP, ATOMIC_RESP. A sender keeps these a while and
 * sends them again when their rail fails; the requester drops a second. */
bool mrail_wire_answer(const void *msg, size_t len);

/* Marks an encoded answer as maybe a second copy (MRAIL_WIRE_F_AGAIN);
 * returns whether msg is an answer. */
bool mrail_wire_answer_mark_again(void *msg, size_t len);

/* Whether an encoded message (at least a header, written by us) is one the
 * receiver numbers (the requests: EAGER, RTS, WRITE, READ_REQ, ATOMIC; and
 * collective signals, COLL), and then its seq in *seq. Each runs once at
 * the receiver, in order, however many copies arrive. */
bool mrail_wire_sequenced(const void *msg, size_t len, uint64_t *seq);

/* Writes seq into an encoded request that the receiver numbers (see
 * mrail_wire_sequenced); returns whether msg is one (else untouched). */
bool mrail_wire_number(void *msg, size_t len, uint64_t seq);

/* The request ids one PROBE may ask answers for again. */
#define MRAIL_WIRE_PROBE_ASK_MAX 16

/* PROBE payload: the request ids (count of them, 0..MRAIL_WIRE_PROBE_ASK_MAX)
 * whose answers the prober has waited for long. Encode: the payload length,
 * -ENOSPC or -EINVAL. Decode: 0, or -EINVAL with a sentence in err. */
int mrail_wire_probe_ask_encode(const uint64_t *req_ids, size_t count,
				void *buf, size_t len);
int mrail_wire_probe_ask_decode(const void *payload, size_t len,
				uint64_t *req_ids, size_t *count, char *err,
				size_t err_len);

/* The request id in an encoded header (at least MRAIL_WIRE_HDR_LEN bytes
 * written by us), else 0. */
uint64_t mrail_wire_req_id(const void *msg, size_t len);

/* CREDIT payload: the receiver's running totals for one sender. */
struct mrail_wire_credit {
	uint64_t taken;		/* credit-spending messages taken, in all */
	uint64_t next_seq;	/* the next request's sequence number awaited */
};

/* Encode: MRAIL_WIRE_CREDIT_LEN, -ENOSPC or -EINVAL. Decode: 0, or -EINVAL
 * for a wrong length. */
int mrail_wire_credit_encode(const struct mrail_wire_credit *credit, void *buf,
			     size_t len);
int mrail_wire_credit_decode(const void *payload, size_t len,
			     struct mrail_wire_credit *credit, char *err,
			     size_t err_len);

/*
 * The most elements one atomic of this kind on a datatype of size bytes
 * may carry, for a receiver whose eager limit is max_eager: the request
 * (descriptor, operand, for a compare atomic the compare data too) and
 * the response (status, result) must each fit in one rail message:
 *   plain, fetch: (max_eager - MRAIL_WIRE_ATOMIC_LEN) / size
 *   compare:      (max_eager - MRAIL_WIRE_ATOMIC_LEN) / (2 * size)
 * (FI_ATOMIC_READ, which carries no operand, keeps its kind's limit).
 * 0 for size 0, a kind outside its enum or an eager limit below the
 * descriptor. Backs the count of fi_atomicvalid and fi_query_atomic.
 */
size_t mrail_wire_atomic_max_count(enum mrail_atomic_kind kind, size_t size,
				   uint32_t max_eager);

/*
 * Writes the atomic descriptor (MRAIL_WIRE_ATOMIC_LEN bytes) into buf; the
 * caller appends the operand and compare bytes. Returns
 * MRAIL_WIRE_ATOMIC_LEN, -ENOSPC, or -EINVAL for what every receiver would
 * refuse: a combination mrail_atomic_valid does not accept, count 0, or
 * addr + count * size wrapping. The count limit is the receiver's.
 */
int mrail_wire_atomic_encode(const struct mrail_wire_atomic *atomic, void *buf,
			     size_t len);

/*
 * Decodes an ATOMIC payload of len bytes (already sized by
 * mrail_wire_hdr_decode): reserved bytes zero, kind, op and datatype a
 * combination mrail_atomic_valid accepts, count 1..max count for
 * limits->max_eager, addr + count * size not wrapping, and the rest of the
 * payload exactly the operand then the compare bytes mrail_atomic_len
 * gives. req's pointers point into payload. Returns 0 or -EINVAL (req
 * zeroed) with err saying why.
 */
int mrail_wire_atomic_decode(const void *payload, size_t len,
			     const struct mrail_wire_limits *limits,
			     struct mrail_wire_atomic_req *req, char *err,
			     size_t err_len);

/* The ATOMIC_RESP prefix: MRAIL_WIRE_ATOMIC_RESP_LEN, -ENOSPC, or -EINVAL
 * when status is not 0 or -4095..-1. The result bytes follow it. */
int mrail_wire_atomic_resp_encode(int32_t status, void *buf, size_t len);

/*
 * Decodes an ATOMIC_RESP payload: status 0 or a negative errno, reserved
 * zero, and no result bytes after an error. *result and *result_len give
 * the result bytes (NULL, 0 when none); only the initiator knows how many
 * it expects, and checks. Returns 0 or -EINVAL.
 */
int mrail_wire_atomic_resp_decode(const void *payload, size_t len,
				  int32_t *status, const uint8_t **result,
				  size_t *result_len, char *err, size_t err_len);

/*
 * RSV payload (MRAIL_WIRE_RSV_LEN bytes). Encode writes msg's type, seq and
 * counter (from and to are not on the wire: the header names the sender,
 * the rail reaches the receiver) and returns MRAIL_WIRE_RSV_LEN, -ENOSPC,
 * or -EINVAL for an unknown type or a nonzero counter on anything but an
 * RTS. Decode checks the same rules, the length and the reserved bytes,
 * and returns 0 with from and to zero, or -EINVAL (msg zeroed, err says
 * why).
 */
int mrail_wire_rsv_encode(const struct mrail_rsv_msg *msg, void *buf, size_t len);
int mrail_wire_rsv_decode(const void *payload, size_t len,
			  struct mrail_rsv_msg *msg, char *err, size_t err_len);

/*
 * COLL: one signal of a collective operation (src/mrail_coll.c).
 * Numbered with the sender's requests (seq), so that a copy sent again
 * when a rail fails runs once; spends no credit, answers nothing: tag,
 * cq_data and req_id are zero, no flags. The payload is a collective
 * descriptor, then
 * exactly its data length of data (a broadcast's or an allreduce's
 * elements, none for a barrier):
 *   0  u64  group id (nonzero): the same at every member of the group
 *   8  u64  operation sequence number within the group (0: the join)
 *  16  u32  counter: the receiver's step counter the signal increments,
 *           below MRAIL_WIRE_COLL_MAX_COUNTERS
 *  20  u8   kind (enum mrail_wire_coll_kind)
 *  21  u8   datatype (enum fi_datatype; 0 for a barrier)
 *  22  u8   op (enum fi_op; 0 for a barrier and a broadcast)
 *  23  u8   reserved, zero
 *  24  u32  data length, 0..MRAIL_WIRE_COLL_MAX_DATA (0 for a barrier)
 *  28  u32  reserved, zero
 * Whether the data fits the receiver's operation (same kind, datatype,
 * op and length) only the receiver can tell, once it has started it.
 */
#define MRAIL_WIRE_COLL_LEN 32
#define MRAIL_WIRE_COLL_MAX_DATA 4096u
#define MRAIL_WIRE_COLL_MAX_COUNTERS 18u

enum mrail_wire_coll_kind {
	MRAIL_WIRE_COLL_BARRIER = 1,	/* fi_barrier, and the join */
	MRAIL_WIRE_COLL_BCAST = 2,
	MRAIL_WIRE_COLL_ALLREDUCE = 3,
};

struct mrail_wire_coll {
	uint64_t group;
	uint64_t seq;
	uint32_t counter;
	uint8_t kind;
	uint8_t datatype;
	uint8_t op;
	uint32_t data_len;
};

/* Writes the descriptor (MRAIL_WIRE_COLL_LEN bytes); the caller appends
 * data_len bytes of data. Returns MRAIL_WIRE_COLL_LEN, -ENOSPC, or -EINVAL
 * for what every receiver refuses (see decode). */
int mrail_wire_coll_encode(const struct mrail_wire_coll *coll, void *buf,
			   size_t len);

/*
 * Decodes a COLL payload of len bytes: group nonzero, counter below
 * MRAIL_WIRE_COLL_MAX_COUNTERS, a known kind, reserved bytes zero, a
 * barrier with no datatype, op or data, a broadcast with no op, data
 * length at most MRAIL_WIRE_COLL_MAX_DATA and exactly the bytes after the
 * descriptor. *data points at them (NULL when none). Returns 0 or -EINVAL
 * (coll zeroed) with err saying why.
 */
int mrail_wire_coll_decode(const void *payload, size_t len,
			   struct mrail_wire_coll *coll, const uint8_t **data,
			   char *err, size_t err_len);

#endif /* MRAIL_WIRE_H */
