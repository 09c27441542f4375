/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The progress and receive engine. One progress round (mrail_ep_progress)
 * reads every rail's CQ and drains the work that waits; every message a rail
 * delivers comes through rx_dispatch, which checks its header
 * (core/wire.c), finds its sender and hands it to its opcode's handler
 * (rx_ops): the protocol files own what each message means, this file owns
 * how it gets to them. Messages that open a receive (EAGER, RTS) are put
 * back in their sender's order first (core/reorder.c); a message ahead of
 * its sender's window keeps its rail buffer until the window moves, and one
 * from a sender the AV does not know yet waits for the AV to learn it.
 * Everything here runs with the domain lock held.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_coll.h"
#include "mrail_msg.h"
#include "mrail_reserve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

/* Rail completions taken per fi_cq_read. */
#define MRAIL_RAIL_CQ_BATCH 16

/* Gives a receive buffer to its rail (again). */
int mrail_rx_buf_post(struct mrail_ep *ep, struct mrail_rail_buf *buf)
{
	return (int) fi_recv(ep->rail_eps[buf->rc.rail], buf->data, MRAIL_RAIL_BUF_LEN,
			     ep->rail_desc[buf->rc.rail], FI_ADDR_UNSPEC, &buf->rc.ctx);
}

/* What became of one received mrail message. */
enum rx_verdict {
	RX_DONE,		/* consumed, or dropped after a report */
	/* A second copy of a numbered message (sent again when a rail
	 * failed), dropped: the first copy returned the credit. */
	RX_DUPLICATE,
	RX_AHEAD,		/* ahead of its peer's window: keep, retry later */
	RX_STRANGER,		/* from a sender key the AV does not know yet */
};

static struct mrail_peer_rx *peer_rx(struct mrail_ep *ep, fi_addr_t peer)
{
	struct mrail_peer_rx *rx;

	if (mrail_peer_reserve(ep, peer))
		return NULL;
	rx = &ep->peers[peer].rx;
	if (!rx->ready) {
		if (mrail_reorder_init(&rx->reorder, MRAIL_REORDER_WINDOW))
			return NULL;
		rx->ready = true;
	}
	return rx;
}

/*
 * A message ahead of its peer's reorder window arrived over a faster rail
 * while an older one is still on a slower rail. It stays in its bounce
 * buffer, which is not reposted: the rail then pushes back on the sender,
 * and memory stays bounded by the posted buffers. It is retried whenever
 * the window moves.
 */
static void rx_hold(struct mrail_ep *ep, struct mrail_rail_buf *buf, size_t len)
{
	MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: a message ahead of its sender's "
		  "window is held in its buffer\n", buf->rc.rail + 1);
	buf->held_len = len;
	buf->held_next = ep->held;
	ep->held = buf;
}

static void rx_run(struct mrail_ep *ep, fi_addr_t peer, struct mrail_rx_msg *msg);

/* A numbered request that is no message (WRITE, READ_REQ, ATOMIC, COLL),
 * held for its turn as it came: its header, rail and payload. */
static struct mrail_rx_msg *rx_request_hold(const struct mrail_wire_hdr *hdr,
					    const uint8_t *payload, size_t rail,
					    char *err, size_t err_len)
{
	struct mrail_rx_msg *msg = malloc(sizeof(*msg) + hdr->payload_len);

	if (!msg) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	memset(msg, 0, sizeof(*msg));
	msg->request = true;
	msg->hdr = *hdr;
	msg->rail = rail;
	msg->len = hdr->payload_len;
	memcpy(msg->payload, payload, hdr->payload_len);
	return msg;
}

/*
 * A numbered request (EAGER, RTS, WRITE, READ_REQ, ATOMIC, COLL): it waits
 * in its sender's reorder window until the ones sent before it have arrived,
 * then
 * runs in send order: a message goes to matching, the others to their
 * handler. A second copy is dropped here, so each runs once however many
 * rails carried it. One too far ahead for the window keeps its rail buffer
 * (RX_AHEAD).
 */
static enum rx_verdict rx_in_order(struct mrail_ep *ep, size_t rail,
				   fi_addr_t peer, const struct mrail_wire_hdr *hdr,
				   const uint8_t *payload)
{
	struct mrail_rx_msg *msg, *held;
	struct mrail_peer_rx *rx;
	char err[MRAIL_ERR_MAX];
	void *next;
	int ret;
	/* A collective signal is numbered but spends no credit. */
	bool credited = mrail_wire_op_needs_credit(hdr->op);

	rx = peer_rx(ep, peer);
	if (!rx) {
		mrail_cq_report_bad_message(ep, rail, "out of memory");
		if (credited)
			mrail_credit_owe(ep, peer);
		return RX_DONE;
	}
	if (hdr->op == MRAIL_OP_EAGER || hdr->op == MRAIL_OP_RTS)
		msg = mrail_msg_from_wire(ep, hdr, payload, peer, err, sizeof(err));
	else
		msg = rx_request_hold(hdr, payload, rail, err, sizeof(err));
	if (!msg) {
		mrail_cq_report_bad_message(ep, rail, err);
		if (credited)
			mrail_credit_owe(ep, peer);
		return RX_DONE;
	}

	ret = mrail_reorder_push(&rx->reorder, hdr->seq, msg);
	if (ret == -ERANGE && hdr->seq - rx->reorder.next < MRAIL_SEQ_HOSTILE_DISTANCE) {
		free(msg);
		return RX_AHEAD;
	}
	if (ret == -EALREADY) {
		free(msg);
		MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: dropped a second copy of "
			  "message %" PRIu64 " from peer %" PRIu64 "\n", rail + 1,
			  hdr->seq, (uint64_t) peer);
		rx->duplicates++;
		/* Sent again for want of our word that the first came. */
		mrail_credit_ack_due(ep, peer);
		return RX_DUPLICATE;
	}
	if (ret) {
		free(msg);
		snprintf(err, sizeof(err), "impossibly far ahead sequence number %"
			 PRIu64 " from peer %" PRIu64 " (next expected %" PRIu64 ")",
			 hdr->seq, (uint64_t) peer, rx->reorder.next);
		mrail_cq_report_bad_message(ep, rail, err);
		if (credited)
			mrail_credit_owe(ep, peer);
		return RX_DONE;
	}
	/* A numbered message returns its credit once it is in order, not
	 * when it arrives: behind a message lost with a rail, the sender then
	 * stops MRAIL_TX_CREDITS ahead of it, well inside the window, and the
	 * rail buffers stay free for the copy it sends again. */
	while ((next = mrail_reorder_pop(&rx->reorder))) {
		held = next;
		credited = !held->request ||
			   mrail_wire_op_needs_credit(held->hdr.op);
		rx_run(ep, peer, held);
		mrail_credit_ack_due(ep, peer);
		if (credited)
			mrail_credit_owe(ep, peer);
	}
	ep->window_moved = true;
	return RX_DONE;
}

typedef void (*mrail_rx_handler)(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
				 const struct mrail_wire_hdr *hdr,
				 const uint8_t *payload);

/* How a message of one opcode is taken. */
enum rx_route {
	RX_ROUTE_NONE,		/* not an opcode: dropped as bad */
	RX_ROUTE_IN_ORDER,	/* rx_in_order, then matching or its handler */
	RX_ROUTE_DIRECT,	/* its handler, at once, from a known peer */
	RX_ROUTE_ANY_SENDER,	/* its handler, at once, even from a stranger */
};

static const struct {
	enum rx_route route;
	mrail_rx_handler handle;
} rx_ops[] = {
	[MRAIL_OP_EAGER] = { RX_ROUTE_IN_ORDER, NULL },
	[MRAIL_OP_RTS] = { RX_ROUTE_IN_ORDER, NULL },
	[MRAIL_OP_ACK] = { RX_ROUTE_DIRECT, mrail_rdv_handle_ack },
	[MRAIL_OP_HELLO] = { RX_ROUTE_ANY_SENDER, mrail_hello_handle_rx },
	[MRAIL_OP_WRITE] = { RX_ROUTE_IN_ORDER, mrail_rma_handle_rx },
	[MRAIL_OP_READ_REQ] = { RX_ROUTE_IN_ORDER, mrail_rma_handle_rx },
	[MRAIL_OP_READ_RESP] = { RX_ROUTE_DIRECT, mrail_rma_handle_rx },
	[MRAIL_OP_ATOMIC] = { RX_ROUTE_IN_ORDER, mrail_atomic_handle_rx },
	[MRAIL_OP_ATOMIC_RESP] = { RX_ROUTE_DIRECT, mrail_atomic_handle_rx },
	[MRAIL_OP_CREDIT] = { RX_ROUTE_DIRECT, mrail_credit_handle_rx },
	[MRAIL_OP_RSV] = { RX_ROUTE_DIRECT, mrail_rsv_handle_rx },
	[MRAIL_OP_COLL] = { RX_ROUTE_IN_ORDER, mrail_coll_handle_rx },
	[MRAIL_OP_PROBE] = { RX_ROUTE_DIRECT, mrail_probe_handle_rx },
};

/* A numbered request whose turn came. */
static void rx_run(struct mrail_ep *ep, fi_addr_t peer, struct mrail_rx_msg *msg)
{
	if (!msg->request) {
		mrail_msg_deliver(ep, msg);
		return;
	}
	rx_ops[msg->hdr.op].handle(ep, msg->rail, peer, &msg->hdr, msg->payload);
	free(msg);
}

/* The route of an opcode from the wire: bounds-checked, since the header
 * decoder's idea of a valid opcode and this table must not have to agree
 * for the lookup to be safe. */
static enum rx_route rx_route_of(uint8_t op)
{
	return op < sizeof(rx_ops) / sizeof(rx_ops[0]) ? rx_ops[op].route
						      : RX_ROUTE_NONE;
}

/* One message off a rail: *sender is the header's sender key, for
 * RX_STRANGER. */
static enum rx_verdict rx_dispatch(struct mrail_ep *ep, size_t rail,
				   const uint8_t *data, size_t len, uint64_t *sender)
{
	const uint8_t *payload = data + MRAIL_WIRE_HDR_LEN;
	struct mrail_wire_hdr hdr;
	enum rx_verdict verdict = RX_DONE;
	char err[MRAIL_ERR_MAX];
	enum rx_route route;
	fi_addr_t peer;

	if (mrail_wire_hdr_decode(data, len, &ep->limits, &hdr, err, sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		return RX_DONE;
	}
	route = rx_route_of(hdr.op);
	if (route == RX_ROUTE_NONE) {
		snprintf(err, sizeof(err), "unknown opcode %u", (unsigned) hdr.op);
		mrail_cq_report_bad_message(ep, rail, err);
		return RX_DONE;
	}
	if (route == RX_ROUTE_ANY_SENDER) {
		rx_ops[hdr.op].handle(ep, rail, FI_ADDR_NOTAVAIL, &hdr, payload);
		return RX_DONE;
	}
	peer = mrail_av_peer_of_key(ep->av, hdr.sender);
	if (peer == FI_ADDR_NOTAVAIL) {
		*sender = hdr.sender;
		return RX_STRANGER;
	}
	mrail_liveness_heard(ep, peer);
	mrail_rail_heard(ep, peer, rail, MRAIL_HEARD_ARRIVAL);
	if (route == RX_ROUTE_IN_ORDER)
		verdict = rx_in_order(ep, rail, peer, &hdr, payload);
	else
		rx_ops[hdr.op].handle(ep, rail, peer, &hdr, payload);
	/* Taken off the rail, whatever became of it: the sender may send
	 * another. A numbered one counts when it is delivered (rx_in_order). */
	if (verdict == RX_DONE && route != RX_ROUTE_IN_ORDER &&
	    mrail_wire_needs_credit(data, len))
		mrail_credit_owe(ep, peer);
	return verdict;
}

/*
 * libfabric lets a peer that inserted us send before we insert it (Open
 * MPI's lazy add_procs does). Its messages are copied out of the rail's
 * buffer, which goes back to the rail at once so other peers are not held
 * up, and wait here, in arrival order, until the AV learns their sender key
 * (fi_av_insert, or the peer's HELLO). At most MRAIL_STRANGER_MAX of them
 * wait at a time; a message past that is dropped with a warning, since
 * nothing bounds what an unknown sender may send.
 */
struct mrail_stranger_msg {
	struct mrail_stranger_msg *next;
	size_t rail;
	size_t len;
	uint8_t data[];
};

static void stranger_keep(struct mrail_ep *ep, size_t rail, const uint8_t *data,
			  size_t len, uint64_t sender)
{
	struct mrail_stranger_msg *msg;
	if (ep->stranger_count >= MRAIL_STRANGER_MAX) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a message from "
			   "sender key 0x%016" PRIx64 ", which is not in the "
			   "AV: %d messages from unknown senders are waiting "
			   "already\n", rail + 1, sender, MRAIL_STRANGER_MAX);
		return;
	}
	msg = malloc(sizeof(*msg) + len);
	if (!msg) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: out of memory: dropped a "
			   "message from sender key 0x%016" PRIx64 ", which is "
			   "not in the AV yet\n", rail + 1, sender);
		return;
	}
	msg->next = NULL;
	msg->rail = rail;
	msg->len = len;
	memcpy(msg->data, data, len);
	LL_APPEND(ep->strangers, msg);
	ep->stranger_count++;
	MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: a message (op %u) from sender key "
		  "0x%016" PRIx64 " waits for the AV to learn it\n", rail + 1,
		  (unsigned) data[1], sender);
}

/* Retries every waiting message in arrival order; those whose sender is
 * still unknown, or which are still ahead of their peer's window, stay. */
static void strangers_retry(struct mrail_ep *ep)
{
	struct mrail_stranger_msg *msg, *tmp;
	uint64_t sender;

	ep->stranger_generation = ep->av->key_generation;
	LL_FOREACH_SAFE(ep->strangers, msg, tmp) {
		switch (rx_dispatch(ep, msg->rail, msg->data, msg->len, &sender)) {
		case RX_AHEAD:
		case RX_STRANGER:
			continue;
		case RX_DONE:
		case RX_DUPLICATE:
			break;
		}
		LL_DELETE(ep->strangers, msg);
		ep->stranger_count--;
		free(msg);
	}
}

static void strangers_free(struct mrail_ep *ep)
{
	struct mrail_stranger_msg *msg, *tmp;

	LL_FOREACH_SAFE(ep->strangers, msg, tmp) {
		LL_DELETE(ep->strangers, msg);
		free(msg);
	}
	ep->stranger_count = 0;
}

/* Frees what the engine holds for an endpoint that closes: messages ahead
 * of their window and messages from strangers. */
void mrail_engine_flush(struct mrail_ep *ep)
{
	size_t i;
	void *held;

	for (i = 0; i < ep->peer_cap; i++) {
		while (ep->peers[i].rx.ready &&
		       (held = mrail_reorder_drain(&ep->peers[i].rx.reorder)))
			free(held);
	}
	strangers_free(ep);
}

static void rx_retry_held(struct mrail_ep *ep);

/* Returns false when buf is held back for later (do not repost it). */
static bool rx_handle(struct mrail_ep *ep, struct mrail_rail_buf *buf, size_t len)
{
	size_t rail = buf->rc.rail;
	bool consumed = true;
	uint64_t sender = 0;

	mrail_assert_locked(ep->domain);

	ep->window_moved = false;
	switch (rx_dispatch(ep, rail, buf->data, len, &sender)) {
	case RX_AHEAD:
		rx_hold(ep, buf, len);
		consumed = false;
		break;
	case RX_STRANGER:
		stranger_keep(ep, rail, buf->data, len, sender);
		break;
	case RX_DONE:
	case RX_DUPLICATE:
		break;
	}
	/* A HELLO may have taught the AV a key; a delivery may have moved a
	 * window that held messages wait for. */
	if (ep->strangers && (ep->window_moved ||
			      ep->stranger_generation != ep->av->key_generation))
		strangers_retry(ep);
	if (ep->window_moved && ep->held)
		rx_retry_held(ep);
	return consumed;
}

/* The window moved: held buffers that now fit are consumed and reposted. */
static void rx_retry_held(struct mrail_ep *ep)
{
	struct mrail_rail_buf *list = ep->held, *buf;

	ep->held = NULL;
	while ((buf = list)) {
		list = buf->held_next;
		/* Holds itself again (onto ep->held) if it still does not fit. */
		if (rx_handle(ep, buf, buf->held_len) &&
		    mrail_rx_buf_post(ep, buf))
			MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: cannot repost a "
				   "receive buffer\n", buf->rc.rail + 1);
	}
}

/*
 * The error a user operation gets for a send or read a rail failed. mrail
 * never cancels those, so FI_ECANCELED from a rail means the rail gave up
 * on them (tcp reports its broken connections so): passed on, it would
 * read as the user's own fi_cancel, which an MPI takes for a cancelled
 * request rather than a failure. The warning logged names the rail's code.
 */
static int rail_error_for_user(int rail_err)
{
	return !rail_err || rail_err == FI_ECANCELED ? FI_EIO : rail_err;
}

static void rail_handle_error(struct mrail_ep *ep, size_t rail)
{
	struct fi_cq_err_entry err = { 0 };
	struct mrail_rail_ctx *rc;
	struct mrail_rail_buf *buf;

	if (fi_cq_readerr(ep->rail_cqs[rail], &err, 0) != 1)
		return;
	rc = err.op_context;
	/* Receive buffers cancelled as a rail endpoint closes are no error. */
	if (err.err != FI_ECANCELED || (rc && rc->kind != MRAIL_CTX_RX))
		mrail_policy_error(ep, rail);
	if (!rc)
		return;
	if (rc->kind == MRAIL_CTX_READ) {
		if (err.err)
			MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: a rendezvous read "
				   "failed: %s\n", rail + 1, fi_strerror(err.err));
		mrail_rdv_handle_read(ep, rc, rail_error_for_user(err.err));
		return;
	}
	buf = container_of(rc, struct mrail_rail_buf, rc);
	if (rc->kind == MRAIL_CTX_TX) {
		if (err.err)
			MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: a send failed: %s\n",
				   rail + 1, fi_strerror(err.err));
		mrail_msg_handle_tx(ep, buf, rail_error_for_user(err.err));
		return;
	}
	if (err.err != FI_ECANCELED) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: receive failed: %s\n",
			   rail + 1, fi_strerror(err.err));
		mrail_rx_buf_post(ep, buf);
	}
}

/*
 * Reads a rail's CQ until a read comes back short, and returns how many
 * completions it handled. Stopping at a short read rather than at an empty
 * one matters for latency: every read of an empty rail CQ makes the core
 * provider poll its sockets (a system call per message).
 */
static size_t rail_progress(struct mrail_ep *ep, size_t rail)
{
	struct fi_cq_msg_entry comps[MRAIL_RAIL_CQ_BATCH];
	struct mrail_rail_ctx *rc;
	struct mrail_rail_buf *buf;
	size_t done = 0;
	ssize_t n, i;

	for (;;) {
		n = fi_cq_read(ep->rail_cqs[rail], comps, MRAIL_RAIL_CQ_BATCH);
		if (n == -FI_EAVAIL) {
			rail_handle_error(ep, rail);
			done++;
			continue;
		}
		if (n <= 0)
			return done;
		done += (size_t) n;
		for (i = 0; i < n; i++) {
			rc = comps[i].op_context;
			if (rc->kind == MRAIL_CTX_READ) {
				mrail_rdv_handle_read(ep, rc, 0);
				continue;
			}
			buf = container_of(rc, struct mrail_rail_buf, rc);
			if (rc->kind == MRAIL_CTX_TX) {
				mrail_msg_handle_tx(ep, buf, 0);
				continue;
			}
			mrail_policy_rx(ep, rail, buf->data, comps[i].len);
			if (!rx_handle(ep, buf, comps[i].len))
				continue;
			if (mrail_rx_buf_post(ep, buf))
				MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: cannot repost a "
					   "receive buffer\n", rail + 1);
		}
		if (n < MRAIL_RAIL_CQ_BATCH)
			return done;
	}
}

size_t mrail_ep_progress(struct mrail_ep *ep)
{
	size_t rail, done = 0;

	mrail_assert_locked(ep->domain);

	if (!ep->enabled)
		return 0;
	for (rail = 0; rail < ep->rail_count; rail++)
		done += rail_progress(ep, rail);
	/* What waited for a transmit buffer goes before new reads take
	 * more; collective signals first (the queue's urgent lane). */
	if (mrail_deferred_pending(ep))
		mrail_deferred_progress(ep);
	if (ep->rdv_recvs)
		mrail_rdv_progress(ep);
	/* fi_av_insert may have named senders whose messages wait. */
	if (ep->strangers && ep->stranger_generation != ep->av->key_generation)
		strangers_retry(ep);
	mrail_liveness_progress(ep);
	mrail_health_progress(ep);
	return done;
}
