/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Transmit: everything mrail sends goes out in one of the rails' transmit
 * buffers, taken here (from the rail the multiplexing policy picks, or a
 * given one), sent here (mrail_tx_buf_send: credits, liveness, another rail
 * when one pushes back) and given back here.
 *
 * And the deferred-work queue: mrail's own messages to peers (ACKs,
 * READ_RESPs, ATOMIC_RESPs, CREDITs, reservation messages, collective
 * signals, HELLOs) that found no free transmit buffer when they were due.
 * They wait in the order they were due, and the progress engine sends them
 * at the start of every round (mrail_deferred_progress), before it issues
 * new reads. Two lanes: collective signals go in the urgent lane, drained
 * first, so a barrier's next step never waits behind bulk traffic's ACKs.
 * Within a lane order is kept per rail (core/deferred.c): a message bound
 * to a rail (reservations, HELLOs) waits only for that rail's earlier ones,
 * a message any rail may carry waits for every earlier one of its kind.
 *
 * Caller holds the domain lock throughout.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_msg.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

/*
 * One message waiting: its bytes, or (send set) a message made when it goes,
 * by send(ep, peer, arg), with failed(ep, peer, arg, err) told when it
 * cannot go. A HELLO is made so: it carries our name.
 */
struct mrail_deferred {
	/* List links, the rail, and the peer (item.peer, an fi_addr_t). */
	struct mrail_deferred_item item;
	mrail_deferred_send_fn send;
	mrail_deferred_failed_fn failed;
	uint32_t arg;
	size_t len;		/* bytes: at most one rail buffer */
	uint8_t msg[];
};

/* ---- transmit buffers ---- */

struct mrail_rail_buf *mrail_tx_buf_on_rail(struct mrail_ep *ep, size_t rail)
{
	struct mrail_rail_buf *buf = ep->tx_free[rail];

	if (!buf)
		return NULL;
	ep->tx_free[rail] = buf->free_next;
	buf->free_next = NULL;
	buf->rdv_req_id = 0;
	buf->credit_peer = FI_ADDR_NOTAVAIL;
	buf->dest = FI_ADDR_NOTAVAIL;
	buf->any_rail = false;
	buf->posted = false;
	buf->superseded = false;
	buf->len = 0;
	buf->complete_user = false;
	return buf;
}

struct mrail_rail_buf *mrail_tx_buf_get(struct mrail_ep *ep)
{
	int rail = mrail_policy_tx_rail(ep);	/* the multiplexing policy */
	struct mrail_rail_buf *buf;

	if (rail < 0)
		return NULL;
	buf = mrail_tx_buf_on_rail(ep, (size_t) rail);
	if (buf)
		buf->any_rail = true;
	return buf;
}

void mrail_tx_buf_put(struct mrail_ep *ep, struct mrail_rail_buf *buf)
{
	buf->free_next = ep->tx_free[buf->rc.rail];
	ep->tx_free[buf->rc.rail] = buf;
}

/* A free buffer of another rail holding buf's message (len bytes) and
 * what its completion does; buf itself is untouched. NULL: none free. */
static struct mrail_rail_buf *tx_buf_copy_to(struct mrail_ep *ep,
					     const struct mrail_rail_buf *buf,
					     size_t len, size_t rail)
{
	struct mrail_rail_buf *other = mrail_tx_buf_on_rail(ep, rail);

	if (!other)
		return NULL;
	memcpy(other->data, buf->data, len);
	other->complete_user = buf->complete_user;
	other->user = buf->user;
	other->rdv_req_id = buf->rdv_req_id;
	other->any_rail = buf->any_rail;
	return other;
}

/*
 * The policy put *bufp on a rail that has failed for the peer: the message
 * moves to the next rail that has not, with a free buffer; it stays where
 * it is when there is none (the rail may yet come back).
 */
static void tx_steer(struct mrail_ep *ep, struct mrail_rail_buf **bufp,
		     size_t len, fi_addr_t dest)
{
	const struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	struct mrail_rail_buf *buf = *bufp, *other;
	size_t n, rail;

	for (n = 1; n < ep->rail_count && peer; n++) {
		rail = (buf->rc.rail + n) % ep->rail_count;
		if (rail >= peer->rails_held || !mrail_rail_usable(ep, dest, rail))
			continue;
		other = tx_buf_copy_to(ep, buf, len, rail);
		if (!other)
			continue;
		mrail_tx_buf_put(ep, buf);
		*bufp = other;
		return;
	}
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
	fi_addr_t dest = (fi_addr_t) (peer - ep->av->peers);
	size_t n, rail;
	ssize_t ret = -FI_EAGAIN;

	for (n = 1; n < ep->rail_count && ret == -FI_EAGAIN; n++) {
		rail = (buf->rc.rail + n) % ep->rail_count;
		/* A partial peer has rail 0 only; a rail of weight 0
		 * never carries messages, nor one failed for the peer. */
		if (rail >= peer->rails_held ||
		    (ep->policy.mux.policy == MRAIL_MUX_WEIGHTED &&
		     !ep->policy.mux.weight[rail]) ||
		    !mrail_rail_usable(ep, dest, rail))
			continue;
		other = tx_buf_copy_to(ep, buf, len, rail);
		if (!other)
			continue;
		ret = fi_send(ep->rail_eps[rail], other->data, len,
			      ep->rail_desc[rail], peer->rail_fi_addr[rail],
			      &other->rc.ctx);
		mrail_policy_tx_posted(ep, rail, other->data, len, ret);
		if (ret) {
			if (ret == -FI_EAGAIN)
				mrail_rail_refused(ep, dest, rail);
			mrail_tx_buf_put(ep, other);
			continue;
		}
		mrail_tx_buf_put(ep, buf);
		*bufp = other;
	}
	return ret;
}

/*
 * A rail refused to start the send of *bufp to a peer (ofi_rxm answers
 * -FI_ENETUNREACH at once when the rail's interface is down here). The rail
 * fails for that peer, and the message goes to the next rail that has not,
 * until one takes it. Returns the last rail's answer.
 */
static ssize_t tx_fail_over(struct mrail_ep *ep, struct mrail_rail_buf **bufp,
			    size_t len, const struct mrail_av_peer *peer,
			    fi_addr_t dest, ssize_t ret)
{
	size_t rail, tries;

	for (tries = 1; ret && ret != -FI_EAGAIN && tries < ep->rail_count;
	     tries++) {
		rail = (*bufp)->rc.rail;
		mrail_rail_error(ep, dest, rail);
		/* A message bound to its rail (a probe), or the peer's last
		 * rail: the error stands. */
		if (!(*bufp)->any_rail || mrail_rail_usable(ep, dest, rail))
			break;
		tx_steer(ep, bufp, len, dest);
		/* No other rail has a free buffer now: wait for one. */
		if ((*bufp)->rc.rail == rail)
			return -FI_EAGAIN;
		rail = (*bufp)->rc.rail;
		ret = fi_send(ep->rail_eps[rail], (*bufp)->data, len,
			      ep->rail_desc[rail], peer->rail_fi_addr[rail],
			      &(*bufp)->rc.ctx);
		mrail_policy_tx_posted(ep, rail, (*bufp)->data, len, ret);
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
	uint64_t seq;
	bool numbered = mrail_wire_sequenced(buf->data, len, &seq);
	size_t rail = buf->rc.rail;
	ssize_t ret;

	mrail_assert_locked(ep->domain);

	if (mrail_liveness_unreachable(ep, dest)) {
		mrail_tx_buf_put(ep, buf);
		return -FI_EHOSTUNREACH;
	}
	if ((spends || numbered) && mrail_peer_reserve(ep, dest)) {
		mrail_tx_buf_put(ep, buf);
		return -FI_ENOMEM;
	}
	/* Every numbered message to the peer, whichever AV entry named it,
	 * takes the next number of its one stream; a number is spent only by
	 * a message a rail accepted. */
	if (numbered)
		mrail_wire_number(buf->data, len, ep->peers[dest].tx_seq);
	if (spends && !ep->peers[dest].tx_credits) {
		mrail_tx_buf_put(ep, buf);
		return -FI_EAGAIN;
	}
	if (buf->any_rail && !mrail_rail_usable(ep, dest, rail)) {
		tx_steer(ep, &buf, len, dest);
		rail = buf->rc.rail;
		/* The rails that work for the peer have no free buffer now:
		 * wait for one rather than use the failed rail. */
		if (!mrail_rail_usable(ep, dest, rail) &&
		    mrail_rail_usable_after(ep, dest, rail) >= 0) {
			mrail_tx_buf_put(ep, buf);
			return -FI_EAGAIN;
		}
	}
	ret = fi_send(ep->rail_eps[rail], buf->data, len, ep->rail_desc[rail],
		      peer->rail_fi_addr[rail], &buf->rc.ctx);
	mrail_policy_tx_posted(ep, rail, buf->data, len, ret);
	if (ret == -FI_EAGAIN) {
		mrail_rail_refused(ep, dest, rail);
		ret = tx_send_elsewhere(ep, &buf, len, peer);
	} else if (ret)
		ret = tx_fail_over(ep, &buf, len, peer, dest, ret);
	mrail_liveness_sent(ep, dest, ret);
	if (ret) {
		mrail_tx_buf_put(ep, buf);
		return ret;
	}
	buf->dest = dest;
	buf->len = len;
	buf->posted = true;
	mrail_rail_posted(ep, dest, buf->rc.rail);
	if (numbered)
		ep->peers[dest].tx_seq++;
	if (spends) {
		ep->peers[dest].tx_credits--;
		buf->credit_peer = dest;
	}
	return 0;
}

/* Messages sent again when their rail fails: the numbered requests, which
 * the peer runs once whichever copy comes first (an atomic, a write with CQ
 * data included), the answers a sender waits on, which the requester takes
 * once, and CREDITs, whose totals only grow. */
static bool tx_may_resend(const struct mrail_rail_buf *buf)
{
	uint64_t seq;

	if (buf->len < MRAIL_WIRE_HDR_LEN || !buf->any_rail)
		return false;
	return mrail_wire_sequenced(buf->data, buf->len, &seq) ||
	       mrail_wire_answer(buf->data, buf->len) ||
	       buf->data[1] == MRAIL_OP_CREDIT;
}

int mrail_tx_resend(struct mrail_ep *ep, struct mrail_rail_buf *buf)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, buf->dest);
	struct mrail_rail_buf *copy;
	size_t n, rail;
	ssize_t ret;

	if (!peer || buf->superseded || !tx_may_resend(buf))
		return -FI_EINVAL;
	for (n = 1; n < ep->rail_count; n++) {
		rail = (buf->rc.rail + n) % ep->rail_count;
		if (rail >= peer->rails_held ||
		    !mrail_rail_usable(ep, buf->dest, rail))
			continue;
		copy = tx_buf_copy_to(ep, buf, buf->len, rail);
		if (!copy)
			continue;
		mrail_wire_answer_mark_again(copy->data, buf->len);
		ret = fi_send(ep->rail_eps[rail], copy->data, buf->len,
			      ep->rail_desc[rail], peer->rail_fi_addr[rail],
			      &copy->rc.ctx);
		mrail_policy_tx_posted(ep, rail, copy->data, buf->len, ret);
		if (ret) {
			mrail_tx_buf_put(ep, copy);
			continue;
		}
		copy->credit_peer = buf->credit_peer;
		copy->dest = buf->dest;
		copy->len = buf->len;
		copy->posted = true;
		mrail_rail_posted(ep, copy->dest, rail);
		mrail_rail_reissued(ep, buf->dest, buf->rc.rail, buf->len);
		/* What its completion would have done is the copy's now. */
		buf->superseded = true;
		buf->credit_peer = FI_ADDR_NOTAVAIL;
		buf->complete_user = false;
		buf->rdv_req_id = 0;
		buf->user.flags = 0;
		return 0;
	}
	return -FI_EAGAIN;
}

bool mrail_tx_resend_stuck(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	struct mrail_rail_buf *buf;
	bool left = false;
	size_t i;

	for (i = 0; i < MRAIL_TX_BUFS_PER_RAIL; i++) {
		buf = &ep->tx_bufs[rail][i];
		if (buf->posted && !buf->superseded && buf->dest == peer &&
		    tx_may_resend(buf) && mrail_tx_resend(ep, buf)) {
			MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: a message to peer %"
				  PRIu64 " stays on the failed rail for now: no "
				  "other rail could take it\n", rail + 1,
				  (uint64_t) peer);
			left = true;
		}
	}
	return left;
}

/* ---- control messages and the deferred-work queue ---- */

int mrail_ctrl_send_now(struct mrail_ep *ep, fi_addr_t dest, size_t rail,
			const void *msg, size_t len)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	struct mrail_rail_buf *buf;

	if (!peer || len > MRAIL_RAIL_BUF_LEN)
		return -FI_EINVAL;
	buf = rail == MRAIL_ANY_RAIL ? mrail_tx_buf_get(ep) :
				       mrail_tx_buf_on_rail(ep, rail);
	if (!buf)
		return -FI_EAGAIN;
	memcpy(buf->data, msg, len);
	buf->user = (struct mrail_cq_entry) { .src = FI_ADDR_NOTAVAIL };
	/* The buffer goes back to its free list on failure. */
	return (int) mrail_tx_buf_send(ep, buf, len, peer);
}

static int deferred_send(struct mrail_ep *ep, const struct mrail_deferred *d)
{
	if (d->send)
		return d->send(ep, d->item.peer, d->arg);
	return mrail_ctrl_send_now(ep, d->item.peer, d->item.rail, d->msg, d->len);
}

static void deferred_failed(struct mrail_ep *ep, const struct mrail_deferred *d,
			    int err)
{
	if (d->failed) {
		d->failed(ep, d->item.peer, d->arg, err);
		return;
	}
	MRAIL_WARN(FI_LOG_EP_DATA, "cannot send a control message to peer %"
		   PRIu64 "%s: %s\n", (uint64_t) d->item.peer,
		   d->item.rail == MRAIL_ANY_RAIL ? "" : " on its rail",
		   fi_strerror(-err));
}

static struct mrail_deferred *deferred_of(struct mrail_deferred_item *item)
{
	return container_of(item, struct mrail_deferred, item);
}

static int drain_try(struct mrail_deferred_item *item, void *ep)
{
	return deferred_send(ep, deferred_of(item));
}

static void drain_done(struct mrail_deferred_item *item, int ret, void *ep)
{
	if (ret)
		deferred_failed(ep, deferred_of(item), ret);
	free(deferred_of(item));
}

void mrail_deferred_progress(struct mrail_ep *ep)
{
	size_t lane;

	mrail_assert_locked(ep->domain);

	for (lane = 0; lane < MRAIL_LANES; lane++)
		mrail_deferred_drain(&ep->deferred[lane], drain_try, drain_done, ep);
}

/* Whether an earlier message of d's lane must go before d: one to the
 * same peer, of the same kind (core/deferred.h). */
static bool deferred_behind(const struct mrail_ep *ep, enum mrail_lane lane,
			    const struct mrail_deferred *d)
{
	const struct mrail_deferred_item *item;

	LL_FOREACH(ep->deferred[lane], item) {
		if (item->peer == d->item.peer && item->rail == d->item.rail)
			return true;
	}
	return false;
}

/* Sends d now unless an earlier message it must follow waits, else queues
 * it. 0: sent or queued; an error: it can never go (d is freed, the caller
 * says so). */
static int deferred_post(struct mrail_ep *ep, enum mrail_lane lane,
			 struct mrail_deferred *d)
{
	int ret = -FI_EAGAIN;

	if (!deferred_behind(ep, lane, d))
		ret = deferred_send(ep, d);
	if (ret == -FI_EAGAIN) {
		MRAIL_DBG(FI_LOG_EP_DATA, "a message to peer %" PRIu64 " waits "
			  "for its turn or a transmit buffer\n",
			  (uint64_t) d->item.peer);
		LL_APPEND(ep->deferred[lane], &d->item);
		return 0;
	}
	free(d);
	return ret;
}

int mrail_ctrl_post(struct mrail_ep *ep, enum mrail_lane lane, fi_addr_t dest,
		    size_t rail, const void *msg, size_t len)
{
	struct mrail_deferred *d;

	mrail_assert_locked(ep->domain);

	if (len > MRAIL_RAIL_BUF_LEN)
		return -FI_EINVAL;
	d = malloc(sizeof(*d) + len);
	if (!d)
		return -FI_ENOMEM;
	*d = (struct mrail_deferred) {
		.item.rail = rail, .item.peer = dest, .len = len,
	};
	memcpy(d->msg, msg, len);
	return deferred_post(ep, lane, d);
}

void mrail_ctrl_send(struct mrail_ep *ep, fi_addr_t dest, const void *msg,
		     size_t len)
{
	int ret;

	ret = mrail_ctrl_post(ep, MRAIL_LANE_NORMAL, dest, MRAIL_ANY_RAIL, msg, len);
	if (ret)
		MRAIL_WARN(FI_LOG_EP_DATA, "cannot answer peer %" PRIu64 ": %s; "
			   "what waits for the answer there fails by its "
			   "timeout\n", (uint64_t) dest, fi_strerror(-ret));
}

void mrail_deferred_call(struct mrail_ep *ep, enum mrail_lane lane,
			 fi_addr_t dest, size_t rail, mrail_deferred_send_fn send,
			 mrail_deferred_failed_fn failed, uint32_t arg)
{
	struct mrail_deferred_item *item;
	struct mrail_deferred *d;
	int ret;

	mrail_assert_locked(ep->domain);

	/* The same message twice would say nothing more. */
	LL_FOREACH(ep->deferred[lane], item) {
		d = deferred_of(item);
		if (d->send == send && d->item.peer == dest && d->arg == arg)
			return;
	}
	d = malloc(sizeof(*d));
	if (!d) {
		failed(ep, dest, arg, -FI_ENOMEM);
		return;
	}
	*d = (struct mrail_deferred) {
		.item.rail = rail, .item.peer = dest, .send = send, .failed = failed,
		.arg = arg,
	};
	ret = deferred_post(ep, lane, d);
	if (ret)
		failed(ep, dest, arg, ret);
}

bool mrail_deferred_pending(const struct mrail_ep *ep)
{
	size_t lane;

	for (lane = 0; lane < MRAIL_LANES; lane++) {
		if (ep->deferred[lane])
			return true;
	}
	return false;
}

void mrail_deferred_drop_peer(struct mrail_ep *ep, fi_addr_t peer)
{
	struct mrail_deferred_item *item, *tmp;
	size_t lane;

	for (lane = 0; lane < MRAIL_LANES; lane++) {
		LL_FOREACH_SAFE(ep->deferred[lane], item, tmp) {
			if (item->peer != peer)
				continue;
			LL_DELETE(ep->deferred[lane], item);
			free(deferred_of(item));
		}
	}
}

void mrail_deferred_flush(struct mrail_ep *ep)
{
	struct mrail_deferred_item *item;
	size_t lane;

	for (lane = 0; lane < MRAIL_LANES; lane++) {
		while ((item = ep->deferred[lane])) {
			LL_DELETE(ep->deferred[lane], item);
			free(deferred_of(item));
		}
	}
}
