/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages a rail may have lost, sent again.
 *
 * A send completes once the rail's socket has it; a link that dies then
 * takes it along, and nothing says so. With two rails or more, a sender
 * keeps a copy of each request the peer runs once by its sequence number
 * (EAGER, RTS, WRITE, READ_REQ, ATOMIC) until the peer's CREDIT
 * acknowledges it, and of each answer it sent (ACK, READ_RESP, ATOMIC_RESP)
 * for a while (the peer's operation waits for it). When a rail fails for a
 * peer (mrail_health.c), what it carried and the peer has not acknowledged
 * goes again on another rail, and so does what is still queued on it
 * (mrail_tx_resend_stuck); when the peer says it still waits for a message
 * behind later ones (a CREDIT, mrail_contact.c), that one goes again. The
 * peer drops second copies (mrail_engine.c; for the answers mrail_rdv.c,
 * mrail_rma.c and mrail_atomic.c).
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
 * An answer's sender cannot tell whether it arrived; the peer waits for it
 * (its operation completes on it). Answers are kept this many rail
 * timeouts, well beyond the longest a rail takes to be judged failed
 * (about 1.5).
 */
#define MRAIL_ANSWER_KEEP_TIMEOUTS 4

static void replay_list_free(struct mrail_unacked **list)
{
	struct mrail_unacked *copy, *tmp;

	DL_FOREACH_SAFE(*list, copy, tmp) {
		DL_DELETE(*list, copy);
		free(copy);
	}
}

/* Drops the kept answers older than MRAIL_ANSWER_KEEP_TIMEOUTS timeouts. */
static void replay_answers_trim(struct mrail_ep *ep, struct mrail_peer *peer,
			     uint64_t now)
{
	struct mrail_unacked *copy;

	while ((copy = peer->answers) &&
	       now - copy->sent_ns > MRAIL_ANSWER_KEEP_TIMEOUTS *
				     ep->health.timeout_ns) {
		DL_DELETE(peer->answers, copy);
		free(copy);
	}
}

void mrail_replay_keep(struct mrail_ep *ep, const struct mrail_rail_buf *buf)
{
	struct mrail_unacked *copy;
	struct mrail_peer *peer;
	uint64_t seq = 0;
	bool numbered;

	/* With one rail there is nowhere to send a copy again. */
	if (ep->rail_count < 2 || !buf->any_rail || buf->dest >= ep->peer_cap)
		return;
	numbered = mrail_wire_sequenced(buf->data, buf->len, &seq);
	if (!numbered && !mrail_wire_answer(buf->data, buf->len))
		return;
	peer = &ep->peers[buf->dest];
	copy = malloc(sizeof(*copy) + buf->len);
	if (!copy) {
		MRAIL_DBG(FI_LOG_EP_DATA, "no memory to keep a message to peer %"
			  PRIu64 " until it is acknowledged: lost if its rail "
			  "fails\n", (uint64_t) buf->dest);
		return;
	}
	copy->seq = seq;
	copy->sent_ns = mrail_now_ns();
	copy->rail = buf->rc.rail;
	copy->len = buf->len;
	memcpy(copy->data, buf->data, buf->len);
	/* Its rail failed for the peer while it was out: it goes again at
	 * the next look (mrail_health_progress). */
	if (!mrail_rail_usable(ep, buf->dest, copy->rail))
		ep->replay_pending = true;
	if (numbered) {
		DL_APPEND(peer->unacked, copy);
		return;
	}
	replay_answers_trim(ep, peer, copy->sent_ns);
	DL_APPEND(peer->answers, copy);
}

void mrail_replay_acked(struct mrail_ep *ep, fi_addr_t peer, uint64_t next_seq)
{
	struct mrail_unacked *copy, *tmp;

	if (peer >= ep->peer_cap)
		return;
	DL_FOREACH_SAFE(ep->peers[peer].unacked, copy, tmp) {
		if (copy->seq < next_seq) {
			DL_DELETE(ep->peers[peer].unacked, copy);
			free(copy);
		}
	}
}

/*
 * Sends copy on the first rail after its own (or, with own_rail, from its
 * own on) that works for the peer and has a free buffer. It spends no
 * credit (the first copy did) and completes no operation (the first copy's
 * completion did). keep: its completion keeps a copy in turn (the caller
 * drops this one).
 */
static int replay_one(struct mrail_ep *ep, fi_addr_t dest,
		      const struct mrail_av_peer *peer,
		      const struct mrail_unacked *copy, bool own_rail, bool keep)
{
	struct mrail_rail_buf *buf;
	size_t n, rail;
	ssize_t ret;

	for (n = own_rail ? 0 : 1; n < ep->rail_count; n++) {
		rail = (copy->rail + n) % ep->rail_count;
		if (rail >= peer->rails_held || !mrail_rail_usable(ep, dest, rail))
			continue;
		buf = mrail_tx_buf_on_rail(ep, rail);
		if (!buf)
			continue;
		memcpy(buf->data, copy->data, copy->len);
		buf->user = (struct mrail_cq_entry) { .src = FI_ADDR_NOTAVAIL };
		ret = fi_send(ep->rail_eps[rail], buf->data, copy->len,
			      ep->rail_desc[rail], peer->rail_fi_addr[rail],
			      &buf->rc.ctx);
		mrail_policy_tx_posted(ep, rail, buf->data, copy->len, ret);
		if (ret) {
			mrail_tx_buf_put(ep, buf);
			continue;
		}
		buf->dest = dest;
		buf->any_rail = keep;
		buf->len = copy->len;
		buf->posted = true;
		mrail_rail_posted(ep, dest, rail);
		mrail_rail_reissued(ep, dest, copy->rail, copy->len);
		return 0;
	}
	return -FI_EAGAIN;
}

/* Sends again the copies of list whose rail failed for the peer; returns
 * whether some found no rail or no buffer yet. */
static bool replay_list(struct mrail_ep *ep, fi_addr_t dest,
			const struct mrail_av_peer *peer,
			struct mrail_unacked **list)
{
	struct mrail_unacked *copy, *tmp;
	bool left = false;

	DL_FOREACH_SAFE(*list, copy, tmp) {
		if (mrail_rail_usable(ep, dest, copy->rail))
			continue;
		/* The peer may have had the first copy of an answer. */
		mrail_wire_answer_mark_again(copy->data, copy->len);
		if (replay_one(ep, dest, peer, copy, false, true)) {
			left = true;
			continue;
		}
		MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu failed for peer %" PRIu64
			  ": message %" PRIu64 " (op %u) sent again\n",
			  copy->rail + 1, (uint64_t) dest, copy->seq,
			  copy->data[1]);
		/* Its new rail's completion keeps a new copy. */
		DL_DELETE(*list, copy);
		free(copy);
	}
	return left;
}

void mrail_replay_awaited(struct mrail_ep *ep, fi_addr_t dest, uint64_t seq)
{
	const struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	struct mrail_unacked *copy;
	uint64_t now;

	if (dest >= ep->peer_cap || !peer)
		return;
	DL_FOREACH(ep->peers[dest].unacked, copy) {
		if (copy->seq == seq)
			break;
	}
	now = mrail_now_ns();
	if (!copy || now - copy->sent_ns < ep->health.timeout_ns)
		return;
	if (replay_one(ep, dest, peer, copy, true, false))
		return;
	MRAIL_DBG(FI_LOG_EP_DATA, "peer %" PRIu64 " still waits for message %"
		  PRIu64 ": sent again\n", (uint64_t) dest, seq);
	copy->sent_ns = now;
}

/*
 * A peer returns word of what arrived within half a rail timeout
 * (mrail_credit_send_overdue): a copy unacknowledged this many timeouts after
 * it went out may have been lost in a rail connection that broke after
 * taking it, or the peer may just not be progressing.
 */
#define MRAIL_REPLAY_OVERDUE_TIMEOUTS 2

bool mrail_replay_overdue(const struct mrail_ep *ep, fi_addr_t dest, uint64_t now)
{
	const struct mrail_unacked *copy;

	if (dest >= ep->peer_cap)
		return false;
	DL_FOREACH(ep->peers[dest].unacked, copy) {
		if (now - copy->sent_ns >= MRAIL_REPLAY_OVERDUE_TIMEOUTS *
					   ep->health.timeout_ns)
			return true;
	}
	return false;
}

void mrail_replay_answers_asked(struct mrail_ep *ep, fi_addr_t dest,
				const uint64_t *req_ids, size_t count)
{
	const struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	struct mrail_unacked *copy;
	uint64_t now;
	size_t i;

	if (dest >= ep->peer_cap || !peer || !count)
		return;
	now = mrail_now_ns();
	replay_answers_trim(ep, &ep->peers[dest], now);
	DL_FOREACH(ep->peers[dest].answers, copy) {
		for (i = 0; i < count; i++) {
			if (mrail_wire_req_id(copy->data, copy->len) == req_ids[i])
				break;
		}
		if (i == count)
			continue;
		mrail_wire_answer_mark_again(copy->data, copy->len);
		/* Another rail first: its own may be the one that lost it. */
		if (replay_one(ep, dest, peer, copy, false, false) &&
		    replay_one(ep, dest, peer, copy, true, false))
			return;
		MRAIL_DBG(FI_LOG_EP_DATA, "peer %" PRIu64 " asked again for our "
			  "answer to its request %" PRIu64 ": sent again\n",
			  (uint64_t) dest, req_ids[i]);
	}
}

bool mrail_replay(struct mrail_ep *ep, fi_addr_t dest)
{
	const struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	size_t rail;
	bool left;

	if (dest >= ep->peer_cap || !peer)
		return false;
	left = false;
	for (rail = 0; rail < ep->rail_count; rail++) {
		if (!mrail_rail_usable(ep, dest, rail))
			left |= mrail_tx_resend_stuck(ep, dest, rail);
	}
	replay_answers_trim(ep, &ep->peers[dest], mrail_now_ns());
	left |= replay_list(ep, dest, peer, &ep->peers[dest].unacked);
	left |= replay_list(ep, dest, peer, &ep->peers[dest].answers);
	if (left)
		ep->replay_pending = true;
	return left;
}

void mrail_replay_free(struct mrail_ep *ep, fi_addr_t peer)
{
	if (peer >= ep->peer_cap)
		return;
	replay_list_free(&ep->peers[peer].unacked);
	replay_list_free(&ep->peers[peer].answers);
}
