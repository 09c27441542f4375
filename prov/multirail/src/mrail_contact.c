/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who may send what to whom: first contact and flow control.
 *
 * First contact (HELLO): a peer must know our full address before our
 * messages can be matched to us, and we need its full address before we
 * can send it anything but a HELLO (core/first_contact.h decides which).
 *
 * Flow control (CREDIT): a sender may have MRAIL_TX_CREDITS messages on
 * the rails to a peer; the receiver gives them back in batches of
 * MRAIL_CREDIT_BATCH as it takes them off its rails, so a fast sender
 * cannot fill a slow receiver's rail buffers with one peer's traffic.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_msg.h"
#include "first_contact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
/* What a queued HELLO is (mrail_deferred_call's arg). */
#define HELLO_REPLY 1u
#define HELLO_INTRO 2u

/* Sends a HELLO now: 0, -FI_EAGAIN (rail 0 has no free buffer) or an
 * error, which the queue passes to hello_failed. */
static int hello_send(struct mrail_ep *ep, fi_addr_t dest, uint32_t kind)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	bool reply = kind & HELLO_REPLY, intro = kind & HELLO_INTRO;
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_HELLO,
		.flags = mrail_hello_flags(reply, intro),
	};
	struct mrail_rail_buf *buf;
	size_t len = MRAIL_RAIL_BUF_LEN - MRAIL_WIRE_HDR_LEN;
	int ret;

	if (!peer)
		return -FI_EINVAL;
	buf = mrail_tx_buf_on_rail(ep, 0);
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

static void hello_failed(struct mrail_ep *ep, fi_addr_t dest, uint32_t kind,
			 int err)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);

	MRAIL_WARN(FI_LOG_EP_DATA, "cannot send a HELLO to peer %" PRIu64
		   ": %s\n", (uint64_t) dest, fi_strerror(-err));
	/* The next send to it tries again. */
	if (kind & HELLO_REPLY)
		return;
	ep->peers[dest].introduced = false;
	if (peer && !(kind & HELLO_INTRO))
		peer->hello_sent = false;
}

static void hello_queue(struct mrail_ep *ep, fi_addr_t peer, bool reply,
			bool intro)
{
	MRAIL_DBG(FI_LOG_EP_DATA, "HELLO%s to peer %" PRIu64 "\n",
		  reply ? " REPLY" : intro ? " (introduction)" : "",
		  (uint64_t) peer);
	/* Over rail 0, the rail a partial address names. */
	mrail_deferred_call(ep, MRAIL_LANE_NORMAL, peer, 0, hello_send,
			    hello_failed, (reply ? HELLO_REPLY : 0) |
			    (intro ? HELLO_INTRO : 0));
}

/*
 * A HELLO or its REPLY: the sender's full address. It may come from a peer
 * the AV does not know yet, so everything in it is checked before the AV
 * sees it, including that the header's sender key is the address's (the
 * engine passes FI_ADDR_NOTAVAIL as the peer: the HELLO says who it is).
 */
void mrail_hello_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t unknown,
			   const struct mrail_wire_hdr *hdr, const uint8_t *payload)
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
	MRAIL_INFO(FI_LOG_EP_DATA, "rail %zu: HELLO%s from peer %" PRIu64
		   " (sender key 0x%016" PRIx64 ")\n", rail + 1,
		   hdr->flags & MRAIL_WIRE_F_REPLY ? " REPLY" :
		   hdr->flags & MRAIL_WIRE_F_INTRO ? " (introduction)" : "",
		   (uint64_t) peer, hdr->sender);
	if (mrail_peer_reserve(ep, peer)) {
		snprintf(why, sizeof(why), "out of memory for the peer that "
			 "sent a HELLO");
		goto bad;
	}
	/* Whatever kind it is, its sender holds our full address now (or
	 * will, from our REPLY): our sends to it need no introduction. */
	ep->peers[peer].introduced = true;
	if (mrail_hello_wants_reply(hdr->flags))
		hello_queue(ep, peer, true, false);
	return;
bad:
	mrail_cq_report_bad_message(ep, rail, why);
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
		ep->peers[dest].introduced = true;
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

	if (!peer || mrail_peer_reserve(ep, dest))
		return -FI_EINVAL;
	switch (mrail_contact_step(peer->addr.flags & MRAIL_ADDR_FLAG_PARTIAL,
				   ep->peers[dest].introduced)) {
	case MRAIL_CONTACT_AWAIT_REPLY:
		return first_contact(ep, dest) ? 0 : -FI_EAGAIN;
	case MRAIL_CONTACT_INTRODUCE:
		ep->peers[dest].introduced = true;
		hello_queue(ep, dest, false, true);
		return 0;
	case MRAIL_CONTACT_SEND:
		break;
	}
	return 0;
}

/* ---- flow control: CREDIT ---- */

/* A CREDIT from peer: how many of our messages it has taken off its rails in
 * all, and the first numbered one it still waits for. CREDITs travel on
 * every rail, so an older one may come after a newer one. */
void mrail_credit_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    const struct mrail_wire_hdr *hdr, const uint8_t *payload)
{
	struct mrail_wire_credit credit;
	char err[MRAIL_ERR_MAX];
	struct mrail_peer *p;
	uint64_t returned;

	if (mrail_wire_credit_decode(payload, hdr->payload_len, &credit, err,
				     sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		return;
	}
	if (mrail_peer_reserve(ep, peer))
		return;
	p = &ep->peers[peer];
	mrail_replay_acked(ep, peer, credit.next_seq);
	mrail_replay_awaited(ep, peer, credit.next_seq);
	if (credit.taken <= p->tx_returned)
		return;
	returned = credit.taken - p->tx_returned;
	p->tx_returned = credit.taken;
	if (returned > MRAIL_TX_CREDITS - p->tx_credits) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 " returned %" PRIu64
			   " credits, more than the %" PRIu32 " it holds\n",
			   (uint64_t) peer, returned,
			   MRAIL_TX_CREDITS - p->tx_credits);
		p->tx_credits = MRAIL_TX_CREDITS;
		return;
	}
	p->tx_credits += (uint32_t) returned;
}

/* Sends peer our running totals for it: what we took, what we wait for. */
static void credit_send(struct mrail_ep *ep, fi_addr_t peer)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_CREDIT,
		.payload_len = MRAIL_WIRE_CREDIT_LEN,
	};
	uint8_t msg[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_CREDIT_LEN];
	struct mrail_peer_rx *rx = &ep->peers[peer].rx;
	const struct mrail_wire_credit credit = {
		.taken = rx->taken,
		.next_seq = rx->ready ? rx->reorder.next : 0,
	};

	mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN);
	mrail_wire_credit_encode(&credit, msg + MRAIL_WIRE_HDR_LEN,
				 MRAIL_WIRE_CREDIT_LEN);
	MRAIL_DBG(FI_LOG_EP_DATA, "returning %" PRIu32 " credits to peer %"
		  PRIu64 " (%" PRIu64 " in all, next seq %" PRIu64 ")\n",
		  rx->credits_owed, (uint64_t) peer, credit.taken,
		  credit.next_seq);
	rx->credits_owed = 0;
	rx->ack_due = false;
	mrail_ctrl_send(ep, peer, msg, sizeof(msg));
}

void mrail_credit_ack_due(struct mrail_ep *ep, fi_addr_t peer)
{
	struct mrail_peer_rx *rx = &ep->peers[peer].rx;

	if (rx->ack_due)
		return;
	rx->ack_due = true;
	rx->ack_due_ns = mrail_now_ns();
}

/* One credit-spending message from peer is off our rails: once a batch
 * has gathered, the peer gets them back. */
void mrail_credit_owe(struct mrail_ep *ep, fi_addr_t peer)
{
	struct mrail_peer_rx *rx;

	if (mrail_peer_reserve(ep, peer))
		return;
	rx = &ep->peers[peer].rx;
	rx->taken++;
	if (++rx->credits_owed < MRAIL_CREDIT_BATCH)
		return;
	credit_send(ep, peer);
}

void mrail_credit_refresh(struct mrail_ep *ep, fi_addr_t peer)
{
	if (peer < ep->peer_cap && ep->peers[peer].rx.ready)
		credit_send(ep, peer);
}

void mrail_credit_send_overdue(struct mrail_ep *ep, fi_addr_t peer,
			       uint64_t now)
{
	struct mrail_peer_rx *rx = &ep->peers[peer].rx;
	uint64_t half = ep->health.timeout_ns / 2;

	if (!rx->ready)
		return;
	/* The peer keeps a copy of each until we say it arrived, and probes
	 * us when we have not said so for long (ask_peer, mrail_health.c):
	 * a peer that sent a last few and went quiet hears it anyway. */
	if (rx->ack_due && now - rx->ack_due_ns >= half) {
		credit_send(ep, peer);
		return;
	}
	if (!rx->reorder.held)
		return;
	if (rx->gap_seq != rx->reorder.next || !rx->gap_since_ns) {
		rx->gap_seq = rx->reorder.next;
		rx->gap_since_ns = now;
		return;
	}
	/* Later messages arrived and this one not, half a rail timeout on:
	 * perhaps lost with a rail that went down and up again unnoticed. */
	if (now - rx->gap_since_ns < half || now - rx->gap_told_ns < half)
		return;
	MRAIL_DBG(FI_LOG_EP_DATA, "peer %" PRIu64 ": message %" PRIu64 " still "
		  "missing behind %zu later ones\n", (uint64_t) peer,
		  rx->gap_seq, rx->reorder.held);
	rx->gap_told_ns = now;
	credit_send(ep, peer);
}
