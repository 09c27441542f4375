/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Endpoint-reserving dynamic allocation (Coll et al. 2001, Algorithms 2-5): before a
 * large transfer, the sender reserves its own port on a rail and the
 * receiver's port on the same rail, so that each port carries traffic in
 * one direction only; the priority counter of Algorithm 4 breaks the cycles
 * of requests that would otherwise refuse one another for ever (Fig. 2).
 *
 * One struct mrail_rsv_rail is one node's port on one rail (the paper's
 * NIC). mrail_rsv_step feeds it one event, local (from this node's sender or
 * receiver) or remote (a control message that arrived on this rail), and
 * returns what to do: control messages to send on the same rail, and a
 * notice for the local sender. Pure: no clock (timeouts are events the
 * caller raises), no I/O, no allocation.
 *
 * Differences from the paper, each for a reason:
 *  - Every request carries the requester's sequence number, and every reply
 *    and release names it; a reply or release that does not match the
 *    port's current request or grant is stale (a late reply, a duplicate,
 *    or a confused peer) and is ignored, except that a stale CTS is answered
 *    with ABORT so that the port which granted it is released.
 *  - Algorithm 4 breaks ties of equal counters by "node ids differ", which
 *    both sides satisfy, so both would claim priority. Here the request with
 *    the higher (counter, node id) pair wins, a total order both sides
 *    compute alike.
 *  - A CTS arriving while the port is FREE (the paper sends the local
 *    process a CTS) is answered with ABORT: no local sender waits for it.
 *  - The local side of a conflict uses the counter its own RTS carried, not
 *    its current one, so that both sides decide on the same two numbers.
 *  - LOCAL_TIMEOUT abandons an outstanding request (the paper's "timeout
 *    expires" in Algorithm 2), with an ABORT in case the CTS is on its way.
 */
#ifndef MRAIL_RESERVE_H
#define MRAIL_RESERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values are those of enum fi_mrail_rail_state in rdma/fi_ext_mrail.h. */
enum mrail_rsv_state {
	MRAIL_RSV_FREE = 0,
	MRAIL_RSV_RESERVED = 1,		/* our RTS is outstanding */
	MRAIL_RSV_SENDING = 2,		/* the receiver granted us the path */
	MRAIL_RSV_RECEIVING = 3,	/* we granted a sender the path */
};

/* Control messages, on the rail they concern. */
enum mrail_rsv_msg_type {
	MRAIL_RSV_MSG_RTS,	/* request to send: may I reserve your port? */
	MRAIL_RSV_MSG_CTS,	/* clear to send: reserved for you */
	MRAIL_RSV_MSG_NACK,	/* refused */
	MRAIL_RSV_MSG_ABORT,	/* sender releases a granted or pending path */
	MRAIL_RSV_MSG_ACK,	/* receiver got everything: path released */
};

struct mrail_rsv_msg {
	enum mrail_rsv_msg_type type;
	uint32_t from;		/* sending node */
	uint32_t to;		/* destination node */
	uint32_t seq;		/* the requester's sequence number of the request */
	int32_t counter;	/* RTS: the requester's priority counter */
};

enum mrail_rsv_event_type {
	/* From this node. */
	MRAIL_RSV_LOCAL_RTS,	 /* sender wants the path to peer */
	MRAIL_RSV_LOCAL_ABORT,	 /* sender will not use the path it was granted */
	MRAIL_RSV_LOCAL_ACK,	 /* receiver has the whole transfer */
	MRAIL_RSV_LOCAL_TIMEOUT, /* sender gives up waiting for a reply */
	/* Arrived on this rail (see mrail_rsv_event_from_msg). */
	MRAIL_RSV_REMOTE_RTS,
	MRAIL_RSV_REMOTE_CTS,
	MRAIL_RSV_REMOTE_NACK,
	MRAIL_RSV_REMOTE_ABORT,
	MRAIL_RSV_REMOTE_ACK,
};

struct mrail_rsv_event {
	enum mrail_rsv_event_type type;
	uint32_t peer;		/* LOCAL_RTS: destination; REMOTE_*: sender */
	uint32_t seq;		/* REMOTE_*: the message's seq */
	int32_t counter;	/* REMOTE_RTS: the requester's counter */
};

/* What the local sender learns from an event. */
enum mrail_rsv_notice {
	MRAIL_RSV_NOTICE_NONE,
	MRAIL_RSV_NOTICE_GRANTED,	/* send on this rail (or LOCAL_ABORT it) */
	MRAIL_RSV_NOTICE_REFUSED,	/* this rail will not carry the transfer now */
};

#define MRAIL_RSV_MAX_MSGS 2

struct mrail_rsv_actions {
	size_t count;
	struct mrail_rsv_msg msg[MRAIL_RSV_MAX_MSGS];
	enum mrail_rsv_notice notice;
	/* A remote message that matched nothing (stale, duplicate or bogus),
	 * for the caller to count; it changed no state. */
	bool ignored;
};

struct mrail_rsv_rail {
	enum mrail_rsv_state state;
	uint32_t node;		/* this node's id, unique among the nodes */
	int32_t counter;	/* Algorithm 4's priority counter */
	uint32_t next_seq;	/* sequence number of our next request */
	/* Our request: out_rts while it waits for a reply (RESERVED, or
	 * RECEIVING meanwhile); out_peer and out_seq also name the path while
	 * SENDING. out_counter is the counter our RTS carried: both ends of a
	 * conflict compare the values the two RTS carried, so they agree even
	 * if a counter moved since. */
	bool out_rts;
	uint32_t out_peer;
	uint32_t out_seq;
	int32_t out_counter;
	/* The request we granted (RECEIVING). */
	uint32_t in_peer;
	uint32_t in_seq;
};

/* A FREE port of node node, with Algorithm 4's initial priority counter. */
void mrail_rsv_init(struct mrail_rsv_rail *rail, uint32_t node, int32_t counter);

/*
 * Feeds one event. Fills act (messages to send, in order, each on this same
 * rail to msg.to; a notice for the local sender; whether a remote message
 * was ignored) and returns 0. Returns -EINVAL, with rail unchanged and act
 * empty, for a local event the state does not allow (LOCAL_ABORT unless
 * SENDING, LOCAL_ACK unless RECEIVING, LOCAL_TIMEOUT or LOCAL_DONE without
 * an outstanding request, LOCAL_RTS to this node itself) or an
 * unknown event type; a LOCAL_RTS while the port is busy is no error but a
 * REFUSED notice (Algorithm 3's "send NACK to local process").
 *
 * State changes (Table 1, with the differences listed above):
 *  FREE       LOCAL_RTS  -> RESERVED, RTS to peer
 *             REMOTE_RTS -> RECEIVING, CTS
 *  RESERVED   REMOTE_CTS -> SENDING, GRANTED
 *             REMOTE_NACK, LOCAL_TIMEOUT -> FREE, REFUSED (timeout: ABORT)
 *             REMOTE_RTS -> Algorithm 4: if our (counter, node) is higher,
 *                 NACK and counter - 1; else CTS, counter + 1, RECEIVING
 *                 with our request still out
 *  SENDING    REMOTE_ACK -> FREE;  LOCAL_ABORT -> FREE, ABORT to peer
 *             REMOTE_RTS -> NACK
 *  RECEIVING  LOCAL_ACK -> ACK to sender; REMOTE_ABORT -> (nothing sent);
 *                 either way RESERVED if our request is out, else FREE
 *             REMOTE_RTS -> NACK
 *             our request answered: CTS -> ABORT it and REFUSED (we are
 *                 receiving); NACK -> REFUSED; LOCAL_TIMEOUT -> ABORT, REFUSED
 */
int mrail_rsv_step(struct mrail_rsv_rail *rail, const struct mrail_rsv_event *ev,
		   struct mrail_rsv_actions *act);

/* The REMOTE_* event a received control message is, checking that it is
 * addressed to node. Returns 0 or -EINVAL (wrong node, unknown type). */
int mrail_rsv_event_from_msg(const struct mrail_rsv_msg *msg, uint32_t node,
			     struct mrail_rsv_event *ev);

/* Algorithm 5: a transfer of len bytes at most threshold goes whole on one
 * rail picked round-robin without reservation; a longer one reserves. */
static inline bool mrail_hybrid_reserves(uint64_t len, uint64_t threshold)
{
	return len > threshold;
}

#endif /* MRAIL_RESERVE_H */
