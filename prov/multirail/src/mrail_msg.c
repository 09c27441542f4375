/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages: the receive path shared by every protocol, the eager protocol,
 * and fi_ops_msg. A message up to MRAIL_EAGER_MAX bytes travels whole on one
 * rail (round-robin); a larger one by rendezvous (mrail_rdv.c). Either way it
 * carries the sender's per-peer sequence number, and the receiver puts
 * arrivals back in send order (core/reorder.c) before matching
 * (core/match.c), so matching order holds whatever rail each message took.
 */
#include "mrail_msg.h"
#include "mrail_reserve.h"
#include "first_contact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

size_t mrail_iov_total(const struct iovec *iov, size_t count)
{
	size_t i, total = 0;

	for (i = 0; i < count; i++)
		total += iov[i].iov_len;
	return total;
}

static size_t copy_to_iov(const struct iovec *iov, size_t count, const uint8_t *src,
			  size_t len)
{
	size_t i, done = 0, n;

	for (i = 0; i < count && done < len; i++) {
		n = iov[i].iov_len < len - done ? iov[i].iov_len : len - done;
		if (n)
			memcpy(iov[i].iov_base, src + done, n);
		done += n;
	}
	return done;
}

/* ---- completions ---- */

void mrail_user_complete(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			 bool report)
{
	struct mrail_cq_entry shown;
	struct mrail_cntr *cntr = NULL;
	struct mrail_cq *cq = ep->tx_cq;

	mrail_assert_locked(ep->domain);

	/* Sources are canonical entries inside mrail: the application sees
	 * one it has not removed, or FI_ADDR_NOTAVAIL for a sender it never
	 * inserted; with FI_SOURCE_ERR that is an FI_EADDRNOTAVAIL error
	 * carrying the sender's address (fi_cq(3)), the message received. */
	fi_addr_t slot = entry->src;
	bool unknown_src = false;

	if (entry->src != FI_ADDR_NOTAVAIL && ep->av) {
		shown = *entry;
		shown.src = mrail_av_shown(ep->av, entry->src);
		unknown_src = shown.src == FI_ADDR_NOTAVAIL;
		entry = &shown;
	}
	/* An operation a trigger issued completes as the application's. */
	if (ep->domain->trig_live && mrail_trigger_complete(ep, entry, report))
		return;
	if (unknown_src && !entry->err && (entry->flags & FI_RECV) &&
	    (ep->caps & FI_SOURCE_ERR) && ep->rx_cq &&
	    (shown.src_addr = mrail_av_raw_addr(ep->av, slot,
						&shown.src_addrlen))) {
		shown.err = FI_EADDRNOTAVAIL;
		shown.prov_errno = -FI_EADDRNOTAVAIL;
	}
	if (entry->flags & FI_SEND) {
		cntr = ep->send_cntr;
	} else if (entry->flags & FI_RECV) {
		cntr = ep->recv_cntr;
		cq = ep->rx_cq;
	} else if (entry->flags & FI_READ) {
		cntr = ep->read_cntr;
	} else if (entry->flags & FI_WRITE) {
		cntr = ep->write_cntr;
	}
	if (cntr) {
		/* An unknown source is no failure: the message arrived. */
		if (entry->err && entry->err != FI_EADDRNOTAVAIL)
			mrail_cntr_inc_err(cntr);
		else
			mrail_cntr_inc(cntr);
	}
	if (!(report || entry->err) || !cq || mrail_cq_write(cq, entry))
		free(entry->src_addr);
}

/* ---- receive side ---- */

struct mrail_cq_entry mrail_recv_entry(const struct mrail_recv *recv,
				       const struct mrail_rx_msg *msg)
{
	return (struct mrail_cq_entry) {
		.op_context = recv->context,
		.flags = FI_RECV | (recv->tagged ? FI_TAGGED : FI_MSG) |
			 (msg->has_data ? FI_REMOTE_CQ_DATA : 0),
		.buf = recv->iov_count ? recv->iov[0].iov_base : NULL,
		.data = msg->data,
		.tag = msg->item.tag,
		.src = msg->item.src,
	};
}

bool mrail_recv_wants_completion(const struct mrail_ep *ep, uint64_t flags, int err)
{
	return err || !ep->rx_selective || (flags & FI_COMPLETION);
}

void mrail_recv_write_completion(struct mrail_ep *ep, struct mrail_recv *multi,
				 uint64_t flags, struct mrail_cq_entry *entry)
{
	bool last = false;

	if (multi) {
		multi->multi_inflight--;
		last = multi->multi_released && !multi->multi_inflight;
	}
	/* The application learns the buffer is its own again only from this
	 * flag, so that completion is written whatever FI_COMPLETION says. */
	if (last)
		entry->flags |= FI_MULTI_RECV;
	/* Counted once per message, a multi-receive's included. */
	mrail_user_complete(ep, entry,
			    last || mrail_recv_wants_completion(ep, flags, entry->err));
	if (last)
		free(multi);
}

void mrail_multi_recv_drop_part(struct mrail_recv *multi)
{
	multi->multi_inflight--;
	if (multi->multi_released && !multi->multi_inflight)
		free(multi);
}

void mrail_recv_complete(struct mrail_ep *ep, struct mrail_recv *recv,
			 struct mrail_rx_msg *msg)
{
	size_t cap = mrail_iov_total(recv->iov, recv->iov_count);
	struct mrail_cq_entry entry;

	mrail_assert_locked(ep->domain);

	if (msg->rdv) {
		mrail_rdv_recv_start(ep, recv, msg);
		return;
	}
	entry = mrail_recv_entry(recv, msg);
	entry.len = copy_to_iov(recv->iov, recv->iov_count, msg->payload, msg->len);
	if (msg->len > cap) {
		entry.err = FI_ETRUNC;
		entry.prov_errno = -FI_ETRUNC;
		entry.olen = msg->len - cap;
	}
	mrail_recv_write_completion(ep, recv->multi, recv->flags, &entry);
	free(recv);
	free(msg);
}

/*
 * A message matched a multi-receive buffer: it gets a receive of its own
 * over the next bytes of the buffer, so eager copies, rendezvous reads and
 * truncation work as for any receive. Returns whether the buffer takes
 * more messages; if not it may be gone already (its last part completed).
 */
static bool multi_recv_deliver(struct mrail_ep *ep, struct mrail_recv *buf,
			       struct mrail_rx_msg *msg)
{
	struct mrail_recv *part = calloc(1, sizeof(*part));
	struct mrail_cq_entry entry;
	size_t off, take;
	bool release;

	if (!part) {
		MRAIL_WARN(FI_LOG_EP_DATA, "out of memory: a message for a "
			   "multi-receive buffer is dropped\n");
		entry = mrail_recv_entry(buf, msg);
		entry.src = mrail_av_shown(ep->av, entry.src);
		entry.flags &= ~(uint64_t) FI_MULTI_RECV;
		entry.err = FI_ENOMEM;
		entry.prov_errno = -FI_ENOMEM;
		mrail_cq_write(ep->rx_cq, &entry);
		mrail_rx_msg_discard(ep, msg);
		return true;
	}
	release = mrail_multi_space_claim(&buf->space, msg->len, &off, &take);
	part->iov[0].iov_base = (uint8_t *) buf->iov[0].iov_base + off;
	part->iov[0].iov_len = take;
	part->iov_count = 1;
	part->context = buf->context;
	part->flags = buf->flags & ~(uint64_t) FI_MULTI_RECV;
	part->multi = buf;
	buf->multi_inflight++;
	buf->multi_released = release;
	mrail_recv_complete(ep, part, msg);
	return !release;
}

/* A new multi-receive buffer first takes the messages already waiting. */
static void multi_recv_post(struct mrail_ep *ep, struct mrail_match_queue *queue,
			    struct mrail_recv *buf)
{
	struct mrail_match_item *msg;

	while ((msg = mrail_match_post_recv(queue, &buf->item))) {
		if (!multi_recv_deliver(ep, buf,
					container_of(msg, struct mrail_rx_msg, item)))
			return;
	}
}

void mrail_rx_msg_discard(struct mrail_ep *ep, struct mrail_rx_msg *msg)
{
	if (msg->rdv)
		mrail_rdv_ack_sender(ep, msg->item.src, msg->req_id, 0);
	free(msg);
}

/* An in-order message meets the receives waiting for it. */
static void deliver_in_order(struct mrail_ep *ep, struct mrail_rx_msg *msg)
{
	struct mrail_match_queue *queue = msg->tagged ? ep->tagq : ep->msgq;
	struct mrail_match_item *recv;
	struct mrail_recv *posted;

	/* Taken in order, matched or buffered: that is delivery complete
	 * for a sender that asked for it (fi_cq(3)). */
	if (msg->ack_req)
		mrail_rdv_ack_sender(ep, msg->item.src, msg->req_id, 0);
	msg->ep = ep;
	recv = mrail_match_arrive(queue, &msg->item);
	if (!recv)
		return;
	posted = container_of(recv, struct mrail_recv, item);
	if (!(posted->flags & FI_MULTI_RECV)) {
		mrail_recv_complete(ep, posted, msg);
		return;
	}
	/* Room left: it keeps its place ahead of younger receives. */
	if (multi_recv_deliver(ep, posted, msg))
		mrail_match_repost_front(queue, recv);
}

static struct mrail_peer_rx *peer_rx(struct mrail_ep *ep, fi_addr_t peer)
{
	struct mrail_peer_rx *rx;

	if (mrail_ep_reserve_peer(ep, peer))
		return NULL;
	rx = &ep->rx_peers[peer];
	if (!rx->ready) {
		if (mrail_reorder_init(&rx->reorder, MRAIL_REORDER_WINDOW))
			return NULL;
		rx->ready = true;
	}
	return rx;
}

/* Malformed input is reported where the application looks: an error
 * completion with no operation attached, and a warning saying what. */
void mrail_rx_report_bad_message(struct mrail_ep *ep, size_t rail, const char *why)
{
	struct mrail_cq_entry entry = {
		.flags = FI_RECV, .err = FI_EIO, .prov_errno = -FI_EIO,
		.src = FI_ADDR_NOTAVAIL,
	};

	MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a message from a peer: %s\n",
		   rail + 1, why);
	mrail_cq_write(ep->rx_cq, &entry);
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
	buf->held_len = len;
	buf->held_next = ep->held;
	ep->held = buf;
}

static void rx_retry_held(struct mrail_ep *ep);

/* ---- first contact: HELLO ---- */

/*
 * A peer inserted from fi_getinfo(node, service) is known by its rail 0
 * alone (a partial address). The first send to it queues a HELLO carrying
 * our full address over rail 0 and returns -FI_EAGAIN; the peer learns us
 * from it (on every rail) and answers with a HELLO REPLY carrying its full
 * address, which completes our entry. Sends wait for that answer, so no
 * data message ever reaches a peer before the HELLO that introduces us,
 * whatever order a rail keeps.
 *
 * A peer we hold in full may still not know us: Open MPI inserts only the
 * peers it sends to, and a barrier or gather root receives from every rank
 * before it sends to any. So the first send to such a peer is preceded by
 * an introduction (a HELLO with the INTRO flag, not answered), and the
 * data follows at once; a message that overtakes it on another rail waits
 * at the receiver until the introduction arrives (core/first_contact.h).
 */
struct mrail_hello {
	struct mrail_hello *next;
	fi_addr_t peer;
	bool reply;
	bool intro;
};

/* A transmit buffer of one rail (HELLOs go over rail 0 only). */
static struct mrail_rail_buf *tx_buf_on_rail(struct mrail_ep *ep, size_t rail)
{
	struct mrail_rail_buf *buf = ep->tx_free[rail];

	if (!buf)
		return NULL;
	ep->tx_free[rail] = buf->free_next;
	buf->free_next = NULL;
	buf->rdv_req_id = 0;
	buf->credit_peer = FI_ADDR_NOTAVAIL;
	buf->complete_user = false;
	return buf;
}

/* Returns 0, -FI_EAGAIN (try again from progress) or another error. */
static int hello_send(struct mrail_ep *ep, const struct mrail_hello *hello)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, hello->peer);
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_HELLO,
		.flags = mrail_hello_flags(hello->reply, hello->intro),
	};
	struct mrail_rail_buf *buf;
	size_t len = MRAIL_RAIL_BUF_LEN - MRAIL_WIRE_HDR_LEN;
	int ret;

	if (!peer)
		return -FI_EINVAL;
	buf = tx_buf_on_rail(ep, 0);
	if (!buf)
		return -FI_EAGAIN;
	/* Our name is the rails' bound addresses, known once enabled. */
	ret = mrail_ep_full_name(ep, buf->data + MRAIL_WIRE_HDR_LEN, &len);
	if (ret) {
		mrail_tx_buf_put(ep, buf);
		return ret;
	}
	hdr.payload_len = (uint32_t) len;
	if (mrail_wire_hdr_encode(&hdr, buf->data, MRAIL_WIRE_HDR_LEN) < 0) {
		mrail_tx_buf_put(ep, buf);
		return -FI_EINVAL;
	}
	buf->user = (struct mrail_cq_entry) { .src = FI_ADDR_NOTAVAIL };
	return (int) mrail_tx_buf_send(ep, buf, MRAIL_WIRE_HDR_LEN + len, peer);
}

static void hello_queue(struct mrail_ep *ep, fi_addr_t peer, bool reply,
			bool intro)
{
	struct mrail_hello *hello;

	LL_FOREACH(ep->hellos, hello) {
		if (hello->peer == peer && hello->reply == reply)
			return;
	}
	hello = malloc(sizeof(*hello));
	if (!hello) {
		MRAIL_WARN(FI_LOG_EP_DATA, "out of memory: cannot greet peer %"
			   PRIu64 "\n", (uint64_t) peer);
		return;
	}
	*hello = (struct mrail_hello) { .peer = peer, .reply = reply, .intro = intro };
	LL_APPEND(ep->hellos, hello);
	mrail_hello_progress(ep);
}

void mrail_hello_progress(struct mrail_ep *ep)
{
	struct mrail_hello *hello, *tmp;
	struct mrail_av_peer *peer;
	int ret;

	LL_FOREACH_SAFE(ep->hellos, hello, tmp) {
		ret = hello_send(ep, hello);
		if (ret == -FI_EAGAIN)
			continue;
		if (ret) {
			MRAIL_WARN(FI_LOG_EP_DATA, "cannot send a HELLO to peer %"
				   PRIu64 ": %s\n", (uint64_t) hello->peer,
				   fi_strerror(-ret));
			/* The next send to it tries again. */
			peer = mrail_av_get_peer(ep->av, hello->peer);
			if (!hello->reply)
				ep->introduced[hello->peer] = false;
			if (peer && !hello->reply && !hello->intro)
				peer->hello_sent = false;
		}
		LL_DELETE(ep->hellos, hello);
		free(hello);
	}
}

/*
 * A HELLO or its REPLY: the sender's full address. It may come from a peer
 * the AV does not know yet, so everything in it is checked before the AV
 * sees it, including that the header's sender key is the address's.
 */
static void rx_hello(struct mrail_ep *ep, size_t rail, const struct mrail_wire_hdr *hdr,
		     const uint8_t *payload)
{
	char err[MRAIL_ERR_MAX], why[MRAIL_ERR_MAX + 64];
	struct mrail_addr addr;
	fi_addr_t peer;

	if (mrail_addr_decode(payload, hdr->payload_len, &addr, err, sizeof(err))) {
		snprintf(why, sizeof(why), "HELLO carries no valid address: %s", err);
		goto bad;
	}
	if (addr.flags & MRAIL_ADDR_FLAG_PARTIAL) {
		snprintf(why, sizeof(why), "HELLO carries a partial address");
		goto bad;
	}
	if (mrail_addr_check_compatible(&ep->domain->local_addr, &addr, err,
					sizeof(err))) {
		snprintf(why, sizeof(why), "HELLO from a peer that cannot reach "
			 "this endpoint's rails: %s", err);
		goto bad;
	}
	if (hdr->sender != mrail_addr_key(&addr)) {
		snprintf(why, sizeof(why), "HELLO's sender key 0x%016" PRIx64
			 " is not the key of the address it carries",
			 hdr->sender);
		goto bad;
	}
	if (mrail_av_learn_peer(ep->av, &addr, &peer)) {
		snprintf(why, sizeof(why), "cannot insert the peer that sent a "
			 "HELLO into the AV");
		goto bad;
	}
	MRAIL_INFO(FI_LOG_EP_DATA, "rail %zu: HELLO%s from peer %" PRIu64 "\n",
		   rail + 1, hdr->flags & MRAIL_WIRE_F_REPLY ? " REPLY" :
		   hdr->flags & MRAIL_WIRE_F_INTRO ? " (introduction)" : "",
		   (uint64_t) peer);
	if (mrail_ep_reserve_peer(ep, peer)) {
		snprintf(why, sizeof(why), "out of memory for the peer that "
			 "sent a HELLO");
		goto bad;
	}
	/* Whatever kind it is, its sender holds our full address now (or
	 * will, from our REPLY): our sends to it need no introduction. */
	ep->introduced[peer] = true;
	if (mrail_hello_wants_reply(hdr->flags))
		hello_queue(ep, peer, true, false);
	return;
bad:
	mrail_rx_report_bad_message(ep, rail, why);
}

/* A decoded EAGER or RTS as a message for the matching engine. */
static struct mrail_rx_msg *rx_msg_from_wire(struct mrail_ep *ep,
					     const struct mrail_wire_hdr *hdr,
					     const uint8_t *payload, fi_addr_t peer,
					     char *err, size_t err_len)
{
	struct mrail_rx_msg *msg;
	struct mrail_wire_rts rts;
	bool rdv = hdr->op == MRAIL_OP_RTS;

	if (rdv && mrail_wire_rts_decode(payload, hdr->payload_len, &ep->limits,
					 &rts, err, err_len))
		return NULL;
	msg = malloc(sizeof(*msg) + (rdv ? 0 : hdr->payload_len));
	if (!msg) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	memset(msg, 0, sizeof(*msg));
	msg->item.src = peer;
	msg->item.tag = hdr->tag;
	msg->tagged = hdr->flags & MRAIL_WIRE_F_TAGGED;
	msg->has_data = hdr->flags & MRAIL_WIRE_F_CQ_DATA;
	msg->data = hdr->cq_data;
	msg->rdv = rdv;
	msg->ack_req = hdr->flags & MRAIL_WIRE_F_ACK_REQ;
	if (msg->ack_req)
		msg->req_id = hdr->req_id;
	if (rdv) {
		msg->rts = rts;
		msg->req_id = hdr->req_id;
		msg->len = rts.total_len;
	} else {
		msg->len = hdr->payload_len;
		memcpy(msg->payload, payload, hdr->payload_len);
	}
	return msg;
}

/* What became of one received mrail message. */
enum rx_verdict {
	RX_DONE,		/* consumed, or dropped after a report */
	RX_AHEAD,		/* ahead of its peer's window: keep, retry later */
	RX_STRANGER,		/* from a sender key the AV does not know yet */
};

/* ---- flow control ---- */

/* A CREDIT from peer: it took that many of our messages off its rails. */
static void rx_credit(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
		      const struct mrail_wire_hdr *hdr, const uint8_t *payload)
{
	char err[MRAIL_ERR_MAX];
	uint32_t credits;

	if (mrail_wire_credit_decode(payload, hdr->payload_len, &credits, err,
				     sizeof(err))) {
		mrail_rx_report_bad_message(ep, rail, err);
		return;
	}
	if (mrail_ep_reserve_peer(ep, peer))
		return;
	if (credits > MRAIL_TX_CREDITS - ep->tx_credits[peer]) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 " returned %" PRIu32
			   " credits, more than the %" PRIu32 " it holds\n",
			   (uint64_t) peer, credits,
			   MRAIL_TX_CREDITS - ep->tx_credits[peer]);
		ep->tx_credits[peer] = MRAIL_TX_CREDITS;
		return;
	}
	ep->tx_credits[peer] += credits;
}

/* One credit-spending message from peer is off our rails: once a batch
 * has gathered, the peer gets them back. */
static void rx_owe_credit(struct mrail_ep *ep, fi_addr_t peer)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_CREDIT,
		.payload_len = MRAIL_WIRE_CREDIT_LEN,
	};
	uint8_t msg[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_CREDIT_LEN];
	struct mrail_peer_rx *rx;

	if (mrail_ep_reserve_peer(ep, peer))
		return;
	rx = &ep->rx_peers[peer];
	if (++rx->credits_owed < MRAIL_CREDIT_BATCH)
		return;
	mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN);
	mrail_wire_credit_encode(rx->credits_owed, msg + MRAIL_WIRE_HDR_LEN,
				 MRAIL_WIRE_CREDIT_LEN);
	rx->credits_owed = 0;
	mrail_ctrl_send(ep, peer, msg, sizeof(msg));
}

static enum rx_verdict rx_from_peer(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
				    const struct mrail_wire_hdr *hdr,
				    const uint8_t *payload);

/* *sender is the header's sender key, for RX_STRANGER. */
static enum rx_verdict rx_dispatch(struct mrail_ep *ep, size_t rail,
				   const uint8_t *data, size_t len, uint64_t *sender)
{
	const uint8_t *payload = data + MRAIL_WIRE_HDR_LEN;
	struct mrail_wire_hdr hdr;
	enum rx_verdict verdict;
	char err[MRAIL_ERR_MAX];
	fi_addr_t peer;

	if (mrail_wire_hdr_decode(data, len, &ep->limits, &hdr, err, sizeof(err))) {
		mrail_rx_report_bad_message(ep, rail, err);
		return RX_DONE;
	}
	if (hdr.op == MRAIL_OP_HELLO) {
		rx_hello(ep, rail, &hdr, payload);
		return RX_DONE;
	}
	peer = mrail_av_peer_of_key(ep->av, hdr.sender);
	if (peer == FI_ADDR_NOTAVAIL) {
		*sender = hdr.sender;
		return RX_STRANGER;
	}
	verdict = rx_from_peer(ep, rail, peer, &hdr, payload);
	/* Taken off the rail, whatever became of it: the sender may send
	 * another. One held for later is counted when it is taken. */
	if (verdict == RX_DONE && mrail_wire_needs_credit(data, len))
		rx_owe_credit(ep, peer);
	return verdict;
}

/* A decoded message from a peer the AV knows. */
static enum rx_verdict rx_from_peer(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
				    const struct mrail_wire_hdr *hdr_in,
				    const uint8_t *payload)
{
	const struct mrail_wire_hdr hdr = *hdr_in;
	struct mrail_peer_rx *rx;
	struct mrail_rx_msg *msg;
	char err[MRAIL_ERR_MAX];
	void *next;
	int ret;

	mrail_liveness_heard(ep, peer);
	if (hdr.op == MRAIL_OP_PROBE)
		return RX_DONE;		/* its arrival was the point */
	if (hdr.op == MRAIL_OP_CREDIT) {
		rx_credit(ep, rail, peer, &hdr, payload);
		return RX_DONE;
	}
	if (hdr.op == MRAIL_OP_ACK) {
		mrail_rdv_handle_ack(ep, rail, peer, &hdr, payload);
		return RX_DONE;
	}
	if (hdr.op == MRAIL_OP_RSV) {
		mrail_rsv_handle_rx(ep, rail, peer, &hdr, payload);
		return RX_DONE;
	}
	if (hdr.op == MRAIL_OP_COLL) {
		mrail_coll_handle_rx(ep, rail, peer, &hdr, payload);
		return RX_DONE;
	}
	if (hdr.op == MRAIL_OP_ATOMIC || hdr.op == MRAIL_OP_ATOMIC_RESP) {
		mrail_atomic_handle_rx(ep, rail, peer, &hdr, payload);
		return RX_DONE;
	}
	if (hdr.op >= MRAIL_OP_WRITE) {
		mrail_rma_handle_rx(ep, rail, peer, &hdr, payload);
		return RX_DONE;
	}
	rx = peer_rx(ep, peer);
	if (!rx) {
		mrail_rx_report_bad_message(ep, rail, "out of memory");
		return RX_DONE;
	}
	msg = rx_msg_from_wire(ep, &hdr, payload, peer, err, sizeof(err));
	if (!msg) {
		mrail_rx_report_bad_message(ep, rail, err);
		return RX_DONE;
	}

	ret = mrail_reorder_push(&rx->reorder, hdr.seq, msg);
	if (ret == -ERANGE && hdr.seq - rx->reorder.next < MRAIL_SEQ_HOSTILE_DISTANCE) {
		free(msg);
		return RX_AHEAD;
	}
	if (ret) {
		free(msg);
		snprintf(err, sizeof(err), "%s sequence number %" PRIu64
			 " from peer %" PRIu64 " (next expected %" PRIu64 ")",
			 ret == -EALREADY ? "duplicate" : "impossibly far ahead",
			 hdr.seq, (uint64_t) peer, rx->reorder.next);
		mrail_rx_report_bad_message(ep, rail, err);
		return RX_DONE;
	}
	while ((next = mrail_reorder_pop(&rx->reorder)))
		deliver_in_order(ep, next);
	ep->window_moved = true;
	return RX_DONE;
}

/* ---- messages from senders not in the AV yet ---- */

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
	MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: a message from sender key 0x%016"
		  PRIx64 " waits for the AV to learn it\n", rail + 1, sender);
}

/* Retries every waiting message in arrival order; those whose sender is
 * still unknown, or which are still ahead of their peer's window, stay. */
void mrail_msg_retry_strangers(struct mrail_ep *ep)
{
	struct mrail_stranger_msg *msg, *tmp;
	uint64_t sender;

	ep->stranger_generation = ep->av->key_generation;
	LL_FOREACH_SAFE(ep->strangers, msg, tmp) {
		if (rx_dispatch(ep, msg->rail, msg->data, msg->len, &sender) != RX_DONE)
			continue;
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

bool mrail_msg_handle_rx(struct mrail_ep *ep, struct mrail_rail_buf *buf,
			 size_t len)
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
		break;
	}
	/* A HELLO may have taught the AV a key; a delivery may have moved a
	 * window that held messages wait for. */
	if (ep->strangers && (ep->window_moved ||
			      ep->stranger_generation != ep->av->key_generation))
		mrail_msg_retry_strangers(ep);
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
		if (mrail_msg_handle_rx(ep, buf, buf->held_len) &&
		    mrail_ep_repost_rx(ep, buf))
			MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: cannot repost a "
				   "receive buffer\n", buf->rc.rail + 1);
	}
}

ssize_t mrail_post_recv(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
			uint64_t flags, bool tagged)
{
	struct mrail_match_queue *queue = tagged ? ep->tagq : ep->msgq;
	struct mrail_match_item *msg;
	struct mrail_recv *recv;

	if (count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	/* Each message's completion points at its data: one contiguous
	 * buffer. Tagged multi-receive is not in fi_tagged(3) of 1.17. */
	if ((flags & FI_MULTI_RECV) && (tagged || count != 1))
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	recv = calloc(1, sizeof(*recv));
	if (!recv)
		return -FI_ENOMEM;
	if (count)
		memcpy(recv->iov, iov, count * sizeof(*iov));
	recv->iov_count = count;
	recv->context = context;
	recv->flags = flags;
	recv->tagged = tagged;
	recv->item.tag = tagged ? tag : 0;
	recv->item.ignore = tagged ? ignore : 0;

	mrail_domain_lock(ep->domain);
	/* Messages carry their peer's canonical entry (mrail_av_canon). */
	recv->item.src = MRAIL_MATCH_ANY_SRC;
	if ((ep->caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC) {
		recv->item.src = mrail_av_canon(ep->av, src);
		if (recv->item.src == FI_ADDR_NOTAVAIL) {
			pthread_mutex_unlock(&ep->domain->lock);
			MRAIL_WARN(FI_LOG_EP_DATA, "a receive from fi_addr %" PRIu64
				   ", which is not in the AV\n", (uint64_t) src);
			free(recv);
			return -FI_EINVAL;
		}
	}
	if (flags & FI_MULTI_RECV) {
		recv->space.cap = iov[0].iov_len;
		/* fi_endpoint(3): the minimum in force when it was posted. */
		recv->space.min = ep->min_multi_recv;
		multi_recv_post(ep, queue, recv);
	} else {
		msg = mrail_match_post_recv(queue, &recv->item);
		/* Delivered by the endpoint it arrived on (a shared
		 * receive context's message may be another's). */
		if (msg)
			mrail_recv_complete(container_of(msg, struct mrail_rx_msg,
							 item)->ep, recv,
					    container_of(msg, struct mrail_rx_msg, item));
	}
	/* A rendezvous may have started reading. */
	mrail_progress_kick(ep->domain);
	pthread_mutex_unlock(&ep->domain->lock);
	return 0;
}

/*
 * A cancelled multi-receive buffer is released; while rendezvous reads into
 * it are still running, their last completion carries FI_MULTI_RECV and
 * frees it instead.
 */
static void cancel_complete(struct mrail_ep *ep, struct mrail_recv *recv)
{
	bool multi = recv->flags & FI_MULTI_RECV;
	bool last = multi && !recv->multi_inflight;

	/* A cancelled receive counts as a failed one. */
	mrail_user_complete(ep, &(struct mrail_cq_entry) {
		.op_context = recv->context,
		.flags = FI_RECV | (recv->tagged ? FI_TAGGED : FI_MSG) |
			 (last ? FI_MULTI_RECV : 0),
		.buf = recv->iov_count ? recv->iov[0].iov_base : NULL,
		.tag = recv->item.tag,
		.src = FI_ADDR_NOTAVAIL,
		.err = FI_ECANCELED, .prov_errno = -FI_ECANCELED,
	}, true);
	recv->multi_released = true;
	if (!multi || last)
		free(recv);
}

/* fi_cancel names its receive by context; only posted receives can go. */
ssize_t mrail_msg_cancel(struct mrail_ep *ep, void *context)
{
	struct mrail_match_queue *queues[] = { ep->tagq, ep->msgq };
	struct mrail_match_item *item;
	struct mrail_recv *recv;
	size_t q;

	for (q = 0; q < 2; q++) {
		for (item = queues[q]->posted; item; item = item->next) {
			recv = container_of(item, struct mrail_recv, item);
			if (recv->context != context)
				continue;
			mrail_match_cancel_recv(queues[q], item);
			cancel_complete(ep, recv);
			return 0;
		}
	}
	return -FI_ENOENT;
}

/* ---- send side ---- */

void mrail_msg_handle_tx(struct mrail_ep *ep, struct mrail_rail_buf *buf, int err)
{
	if (err) {
		/* rail_handle_error logged the rail's own error. */
		buf->user.err = err;
		buf->user.prov_errno = -err;
		/* The peer never got it, so it returns no credit for it. */
		if (buf->credit_peer != FI_ADDR_NOTAVAIL)
			ep->tx_credits[buf->credit_peer]++;
	}
	if (buf->rdv_req_id) {
		/* An RTS, or an eager FI_DELIVERY_COMPLETE send: it
		 * completes on the ACK, or fails here. */
		if (err)
			mrail_rdv_send_failed(ep, buf->rdv_req_id, err);
	} else if (buf->user.flags & FI_SEND) {
		/* An eager send (inject too: counted, never reported). */
		mrail_user_complete(ep, &buf->user, buf->complete_user);
	}
	/* mrail's own messages (ACK, CREDIT, HELLO, a response) belong to no
	 * operation of this endpoint: the warning above is all there is to
	 * say. An error entry without an operation context would only crash
	 * applications that read the context of every error (Open MPI 4.1's
	 * mtl ofi does). */
	mrail_tx_buf_put(ep, buf);
}

struct mrail_rail_buf *mrail_tx_buf_get(struct mrail_ep *ep)
{
	struct mrail_rail_buf *buf;
	int rail = mrail_policy_tx_rail(ep);	/* the multiplexing policy */

	if (rail < 0)
		return NULL;
	buf = ep->tx_free[rail];
	ep->tx_free[rail] = buf->free_next;
	buf->free_next = NULL;
	buf->rdv_req_id = 0;
	buf->credit_peer = FI_ADDR_NOTAVAIL;
	buf->complete_user = false;
	return buf;
}

void mrail_tx_buf_put(struct mrail_ep *ep, struct mrail_rail_buf *buf)
{
	buf->free_next = ep->tx_free[buf->rc.rail];
	ep->tx_free[buf->rc.rail] = buf;
}

/*
 * The rail of *bufp pushed back. ofi_rxm does that on the first send to a
 * peer over a rail, while it sets up the connection, so an application
 * that has talked to a peer over one rail would see -FI_EAGAIN from a send
 * that round-robin put on another. Instead the message moves to a free
 * buffer of another rail the peer can be reached on (the order of messages
 * is the sequence numbers' business); the rail that pushed back gets its
 * buffer back. Returns 0 with *bufp sent, or the last rail's refusal.
 */
static ssize_t tx_send_elsewhere(struct mrail_ep *ep, struct mrail_rail_buf **bufp,
				 size_t len, const struct mrail_av_peer *peer)
{
	struct mrail_rail_buf *buf = *bufp, *other;
	size_t n, rail;
	ssize_t ret = -FI_EAGAIN;

	for (n = 1; n < ep->rail_count && ret == -FI_EAGAIN; n++) {
		rail = (buf->rc.rail + n) % ep->rail_count;
		/* A partial peer has rail 0 only; a rail of weight 0
		 * never carries messages. */
		if (rail >= peer->rails_held || !ep->tx_free[rail] ||
		    (ep->policy.mux.policy == MRAIL_MUX_WEIGHTED &&
		     !ep->policy.mux.weight[rail]))
			continue;
		other = ep->tx_free[rail];
		ep->tx_free[rail] = other->free_next;
		other->free_next = NULL;
		memcpy(other->data, buf->data, len);
		other->complete_user = buf->complete_user;
		other->user = buf->user;
		other->rdv_req_id = buf->rdv_req_id;
		other->credit_peer = FI_ADDR_NOTAVAIL;
		ret = fi_send(ep->rail_eps[rail], other->data, len,
			      ep->rail_desc[rail], peer->rail_fi_addr[rail],
			      &other->rc.ctx);
		mrail_policy_tx_posted(ep, rail, other->data, len, ret);
		if (ret) {
			mrail_tx_buf_put(ep, other);
			continue;
		}
		mrail_tx_buf_put(ep, buf);
		*bufp = other;
	}
	return ret;
}

/*
 * Sends an encoded message. One that spends a credit (a request) waits with
 * -FI_EAGAIN while the peer has returned none; callers unwind as for a
 * rail that pushes back.
 */
ssize_t mrail_tx_buf_send(struct mrail_ep *ep, struct mrail_rail_buf *buf,
			  size_t len, const struct mrail_av_peer *peer)
{
	fi_addr_t dest = (fi_addr_t) (peer - ep->av->peers);
	bool spends = mrail_wire_needs_credit(buf->data, len);
	size_t rail = buf->rc.rail;
	ssize_t ret;

	mrail_assert_locked(ep->domain);

	if (mrail_liveness_unreachable(ep, dest)) {
		mrail_tx_buf_put(ep, buf);
		return -FI_EHOSTUNREACH;
	}
	if (spends) {
		if (mrail_ep_reserve_peer(ep, dest)) {
			mrail_tx_buf_put(ep, buf);
			return -FI_ENOMEM;
		}
		if (!ep->tx_credits[dest]) {
			mrail_tx_buf_put(ep, buf);
			return -FI_EAGAIN;
		}
	}
	ret = fi_send(ep->rail_eps[rail], buf->data, len, ep->rail_desc[rail],
		      peer->rail_fi_addr[rail], &buf->rc.ctx);
	mrail_policy_tx_posted(ep, rail, buf->data, len, ret);
	if (ret == -FI_EAGAIN)
		ret = tx_send_elsewhere(ep, &buf, len, peer);
	mrail_liveness_sent(ep, dest, ret);
	if (ret) {
		mrail_tx_buf_put(ep, buf);
		return ret;
	}
	if (spends) {
		ep->tx_credits[dest]--;
		buf->credit_peer = dest;
	}
	return 0;
}

/* acked: FI_DELIVERY_COMPLETE, the user completion waits for an ACK. */
static ssize_t send_eager(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			  fi_addr_t dest, struct mrail_wire_hdr *hdr,
			  const struct mrail_cq_entry *user, bool complete_user,
			  bool acked)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	size_t i, off = MRAIL_WIRE_HDR_LEN;
	struct mrail_rail_buf *buf;
	uint64_t req_id = 0;
	ssize_t ret;

	buf = mrail_tx_buf_get(ep);
	if (!buf) {
		mrail_ep_progress(ep);
		return -FI_EAGAIN;
	}
	if (acked) {
		req_id = mrail_ack_wait_add(ep, dest, user, complete_user);
		if (!req_id) {
			mrail_tx_buf_put(ep, buf);
			return -FI_ENOMEM;
		}
		hdr->flags |= MRAIL_WIRE_F_ACK_REQ;
		hdr->req_id = req_id;
	}
	mrail_wire_hdr_encode(hdr, buf->data, MRAIL_WIRE_HDR_LEN);
	/* MPI sends 0 bytes from NULL (barriers): memcpy may not see it. */
	for (i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		memcpy(buf->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	/* An acked send completes from the ACK, or from a failed send. */
	buf->complete_user = complete_user && !acked;
	buf->rdv_req_id = req_id;
	buf->user = *user;
	ret = mrail_tx_buf_send(ep, buf, off, peer);
	if (ret && req_id)
		mrail_ack_wait_cancel(ep, req_id);
	if (ret == -FI_EAGAIN)
		mrail_ep_progress(ep);
	return ret;
}

/*
 * A send to a partial entry (a peer named by fi_getinfo(node, service) or
 * a socket address) needs the peer's full address first: the HELLO goes
 * out and this waits, progressing, up to MRAIL_FIRST_CONTACT_MS for the
 * answer. Applications post their first send once and expect it taken
 * (fabtests' scalable_ep does), as the core providers take it while they
 * connect. True once the entry is complete; false: the caller says
 * -FI_EAGAIN and the HELLO stays under way.
 */
static bool first_contact(struct mrail_ep *ep, fi_addr_t dest)
{
	uint64_t deadline_ns = mrail_now_ns() + MRAIL_FIRST_CONTACT_MS * 1000000ULL;
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);

	if (!peer->hello_sent) {
		peer->hello_sent = true;
		ep->introduced[dest] = true;
		hello_queue(ep, dest, false, false);
	}
	do {
		mrail_ep_progress(ep);
		/* Progress may grow the AV's table: look the entry up again. */
		peer = mrail_av_get_peer(ep->av, dest);
		if (!peer || !(peer->addr.flags & MRAIL_ADDR_FLAG_PARTIAL))
			return peer != NULL;
	} while (mrail_now_ns() < deadline_ns);
	return false;
}

ssize_t mrail_contact_prepare(struct mrail_ep *ep, fi_addr_t dest)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);

	if (!peer || mrail_ep_reserve_peer(ep, dest))
		return -FI_EINVAL;
	switch (mrail_contact_step(peer->addr.flags & MRAIL_ADDR_FLAG_PARTIAL,
				   ep->introduced[dest])) {
	case MRAIL_CONTACT_AWAIT_REPLY:
		return first_contact(ep, dest) ? 0 : -FI_EAGAIN;
	case MRAIL_CONTACT_INTRODUCE:
		ep->introduced[dest] = true;
		hello_queue(ep, dest, false, true);
		return 0;
	case MRAIL_CONTACT_SEND:
		break;
	}
	return 0;
}

ssize_t mrail_send_common(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			  fi_addr_t dest, uint64_t tag, uint64_t data, void *context,
			  uint64_t flags, bool tagged, bool inject)
{
	size_t len = mrail_iov_total(iov, count);
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = len > MRAIL_EAGER_MAX ? MRAIL_OP_RTS : MRAIL_OP_EAGER,
		.flags = (tagged ? MRAIL_WIRE_F_TAGGED : 0) |
			 ((flags & FI_REMOTE_CQ_DATA) ? MRAIL_WIRE_F_CQ_DATA : 0),
		.tag = tagged ? tag : 0,
		.cq_data = (flags & FI_REMOTE_CQ_DATA) ? data : 0,
	};
	struct mrail_cq_entry user = {
		.op_context = context,
		.flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG),
		.src = FI_ADDR_NOTAVAIL,
	};
	/* fi_inject calls never complete; FI_INJECT on fi_sendmsg only says
	 * the buffer is free at return, the send completes as usual
	 * (fi_msg(3)). */
	bool complete_user = !inject && (!ep->tx_selective || (flags & FI_COMPLETION));
	bool copy_now = inject || (flags & FI_INJECT);
	struct mrail_av_peer *peer;
	ssize_t ret;

	if (count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	if ((copy_now && len > MRAIL_EAGER_MAX) || len > MRAIL_MAX_MSG)
		return -FI_EMSGSIZE;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;

	mrail_domain_lock(ep->domain);
	/* Every entry of the peer sends in its one sequence stream. */
	dest = mrail_av_canon(ep->av, dest);
	peer = mrail_av_get_peer(ep->av, dest);
	if (!peer || mrail_ep_reserve_peer(ep, dest)) {
		ret = -FI_EINVAL;
		goto out;
	}
	ret = mrail_contact_prepare(ep, dest);
	if (ret)
		goto out;
	hdr.seq = ep->tx_seq[dest];
	if (hdr.op == MRAIL_OP_EAGER) {
		hdr.payload_len = (uint32_t) len;
		ret = send_eager(ep, iov, count, dest, &hdr, &user, complete_user,
				 flags & FI_DELIVERY_COMPLETE);
	} else {
		ret = mrail_rdv_send(ep, iov, count, dest, &hdr, &user, complete_user);
	}
	/* The sequence number is spent only by a send the rail accepted. */
	if (!ret) {
		ep->tx_seq[dest]++;
		mrail_progress_kick(ep->domain);
	}
out:
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

/* Frees messages and receives still queued when the endpoint closes. */
void mrail_msg_flush(struct mrail_ep *ep)
{
	struct mrail_match_queue *queues[] = { ep->msgq, ep->tagq };
	struct mrail_match_item *item, *next;
	struct mrail_hello *hello;
	size_t q, i;
	void *held;

	for (q = 0; q < 2; q++) {
		/* A shared receive context's queues hold other endpoints'
		 * messages and the context's receives: only ours go. */
		for (item = queues[q]->unexpected; item; item = next) {
			next = item->next;
			if (container_of(item, struct mrail_rx_msg, item)->ep != ep)
				continue;
			mrail_match_remove_unexpected(queues[q], item);
			free(container_of(item, struct mrail_rx_msg, item));
		}
		while (!ep->srx && (item = queues[q]->posted)) {
			struct mrail_recv *recv =
				container_of(item, struct mrail_recv, item);

			mrail_match_cancel_recv(queues[q], item);
			/* Parts still reading free it (mrail_rdv_flush). */
			recv->multi_released = true;
			if (!recv->multi_inflight)
				free(recv);
		}
	}
	for (i = 0; i < ep->peer_cap; i++) {
		while (ep->rx_peers[i].ready &&
		       (held = mrail_reorder_drain(&ep->rx_peers[i].reorder)))
			free(held);
	}
	mrail_rdv_flush(ep);
	strangers_free(ep);
	while ((hello = ep->hellos)) {
		LL_DELETE(ep->hellos, hello);
		free(hello);
	}
}

/* ---- fi_ops_msg ---- */

#define EP(fid) container_of(fid, struct mrail_ep, ep_fid)

static ssize_t mrail_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			  fi_addr_t src, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return mrail_post_recv(EP(ep), &iov, 1, src, 0, 0, context,
			       EP(ep)->rx_op_flags, false);
}

static ssize_t mrail_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			   size_t count, fi_addr_t src, void *context)
{
	return mrail_post_recv(EP(ep), iov, count, src, 0, 0, context, EP(ep)->rx_op_flags,
			       false);
}

static ssize_t mrail_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			     uint64_t flags)
{
	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep), FI_OP_RECV, msg, NULL, NULL, flags);
	return mrail_post_recv(EP(ep), msg->msg_iov, msg->iov_count, msg->addr, 0, 0,
			       msg->context, flags, false);
}

static ssize_t mrail_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, 0, 0, context,
				 EP(ep)->tx_op_flags, false, false);
}

static ssize_t mrail_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			   size_t count, fi_addr_t dest, void *context)
{
	return mrail_send_common(EP(ep), iov, count, dest, 0, 0, context,
				 EP(ep)->tx_op_flags, false, false);
}

static ssize_t mrail_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			     uint64_t flags)
{
	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep), FI_OP_SEND, msg, NULL, NULL, flags);
	return mrail_send_common(EP(ep), msg->msg_iov, msg->iov_count, msg->addr, 0,
				 msg->data, msg->context, flags, false, false);
}

static ssize_t mrail_inject(struct fid_ep *ep, const void *buf, size_t len,
			    fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	/* No completion, but a bound counter counts it: on delivery when
	 * the endpoint's default is FI_DELIVERY_COMPLETE. */
	return mrail_send_common(EP(ep), &iov, 1, dest, 0, 0, NULL,
				 EP(ep)->tx_op_flags & FI_DELIVERY_COMPLETE, false, true);
}

static ssize_t mrail_senddata(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, uint64_t data, fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, 0, data, context,
				 EP(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, false, false);
}

static ssize_t mrail_injectdata(struct fid_ep *ep, const void *buf, size_t len,
				uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, 0, data, NULL,
				 FI_REMOTE_CQ_DATA |
				 (EP(ep)->tx_op_flags & FI_DELIVERY_COMPLETE), false, true);
}

struct fi_ops_msg mrail_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = mrail_recv,
	.recvv = mrail_recvv,
	.recvmsg = mrail_recvmsg,
	.send = mrail_send,
	.sendv = mrail_sendv,
	.sendmsg = mrail_sendmsg,
	.inject = mrail_inject,
	.senddata = mrail_senddata,
	.injectdata = mrail_injectdata,
};
