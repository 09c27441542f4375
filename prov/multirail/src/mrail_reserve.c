/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Endpoint-reserving dynamic striping, wired (see mrail_reserve.h for how
 * it maps onto the receiver-driven rendezvous). Each rail of an endpoint
 * has one core/reserve.h port; RSV messages (core/wire.h) travel on the
 * rail they concern. A pulled transfer keeps a core/reserve_xfer.h account
 * of its requests, moved on from progress, so that a peer that never
 * answers costs at most MRAIL_RSV_TIMEOUT_NS: the transfer then goes on
 * the rails it was granted, or unreserved, whole on one rail.
 *
 * Every function runs with the domain lock held.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_msg.h"
#include "mrail_reserve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include "policy.h"

#define RSV_MSG_LEN (MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RSV_LEN)

struct mrail_rsv_ep {
	struct mrail_rsv_rail rail[MRAIL_MAX_RAILS];
	/* The transfer whose request is out on the rail, or which holds it. */
	struct mrail_rsv_req *owner[MRAIL_MAX_RAILS];
	uint8_t cursor;		/* where the next choice of rails starts */
	uint64_t ignored;	/* stale or duplicate messages */
};

/* core/reserve.h names nodes with 32 bits: the sender key, folded. Both
 * ends fold alike, so they order a conflict alike. */
static uint32_t rsv_node(uint64_t key)
{
	return (uint32_t) (key ^ (key >> 32));
}

static struct mrail_rsv_ep *rsv_get(struct mrail_ep *ep)
{
	struct mrail_rsv_ep *rsv;
	size_t rail;

	if (ep->rsv)
		return ep->rsv;
	rsv = calloc(1, sizeof(*rsv));
	if (!rsv) {
		MRAIL_WARN(FI_LOG_EP_DATA, "out of memory for the rail "
			   "reservation state: transfers go unreserved\n");
		return NULL;
	}
	for (rail = 0; rail < ep->rail_count; rail++)
		mrail_rsv_init(&rsv->rail[rail], rsv_node(ep->self_key), 0);
	ep->rsv = rsv;
	return rsv;
}

/* ---- sending control messages on their rail ---- */

static void rsv_send(struct mrail_ep *ep, struct mrail_rsv_ep *rsv, size_t rail,
		     fi_addr_t dest, const struct mrail_rsv_msg *m)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_RSV,
		.payload_len = MRAIL_WIRE_RSV_LEN,
	};
	uint8_t msg[RSV_MSG_LEN];
	int ret;

	if (mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN) < 0 ||
	    mrail_wire_rsv_encode(m, msg + MRAIL_WIRE_HDR_LEN,
				  MRAIL_WIRE_RSV_LEN) < 0) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: cannot encode a reservation "
			   "message of type %d\n", rail + 1, (int) m->type);
		return;
	}
	/* Bound to its rail: a reservation is for that rail. The queue keeps
	 * each rail's messages in order. */
	ret = mrail_ctrl_post(ep, MRAIL_LANE_NORMAL, dest, rail, msg, sizeof(msg));
	if (ret)
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: cannot send a reservation "
			   "message to peer %" PRIu64 ": %s (the peer's timeout "
			   "recovers)\n", rail + 1, (uint64_t) dest,
			   fi_strerror(-ret));
}

/* Feeds one event to rail's port; sends what it says to dest. */
static int rsv_step(struct mrail_ep *ep, struct mrail_rsv_ep *rsv, size_t rail,
		    fi_addr_t dest, const struct mrail_rsv_event *ev,
		    struct mrail_rsv_actions *act)
{
	enum mrail_rsv_state before = rsv->rail[rail].state;
	size_t i;
	int ret;

	ret = mrail_rsv_step(&rsv->rail[rail], ev, act);
	if (ret)
		return ret;
	if (rsv->rail[rail].state != before)
		MRAIL_DBG(FI_LOG_EP_DATA, "rail %zu: reservation state %d -> %d "
			  "(event %d from node %" PRIu32 ")\n", rail + 1,
			  (int) before, (int) rsv->rail[rail].state,
			  (int) ev->type, ev->peer);
	for (i = 0; i < act->count; i++)
		rsv_send(ep, rsv, rail, dest, &act->msg[i]);
	if (act->ignored)
		rsv->ignored++;
	return 0;
}

/* ---- arriving messages ---- */

void mrail_rsv_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			 const struct mrail_wire_hdr *hdr, const uint8_t *payload)
{
	struct mrail_rsv_actions act;
	struct mrail_rsv_event ev;
	struct mrail_rsv_msg msg;
	struct mrail_rsv_ep *rsv;
	struct mrail_rsv_req *req;
	char err[MRAIL_ERR_MAX];

	mrail_assert_locked(ep->domain);

	if (mrail_wire_rsv_decode(payload, hdr->payload_len, &msg, err,
				  sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		return;
	}
	rsv = rsv_get(ep);
	if (!rsv)
		return;
	msg.from = rsv_node(hdr->sender);
	msg.to = rsv->rail[rail].node;
	if (mrail_rsv_event_from_msg(&msg, msg.to, &ev) ||
	    rsv_step(ep, rsv, rail, peer, &ev, &act)) {
		snprintf(err, sizeof(err), "reservation message of type %d from "
			 "peer %" PRIu64 " makes no sense", (int) msg.type,
			 (uint64_t) peer);
		mrail_cq_report_bad_message(ep, rail, err);
		return;
	}
	if (act.notice == MRAIL_RSV_NOTICE_NONE)
		return;
	req = rsv->owner[rail];
	if (act.notice == MRAIL_RSV_NOTICE_REFUSED) {
		if (req)
			mrail_rsv_xfer_answer(&req->xfer, (unsigned) rail, false);
		rsv->owner[rail] = NULL;
		return;
	}
	/* GRANTED: the path is the transfer's until it ends. */
	if (req && !mrail_rsv_xfer_answer(&req->xfer, (unsigned) rail, true))
		return;
	ev = (struct mrail_rsv_event) { .type = MRAIL_RSV_LOCAL_ABORT };
	rsv_step(ep, rsv, rail, peer, &ev, &act);
	rsv->owner[rail] = NULL;
}

/* ---- transfers ---- */

bool mrail_rsv_wanted(struct mrail_ep *ep, uint64_t len)
{
	const struct fi_mrail_policy_attr *attr = &ep->policy.attr;

	if (attr->stripe_policy == MRAIL_STRIPE_DYNAMIC)
		return true;
	return attr->stripe_policy == MRAIL_STRIPE_HYBRID &&
	       mrail_hybrid_reserves(len, attr->hybrid_threshold);
}

void mrail_rsv_begin(struct mrail_ep *ep, struct mrail_rsv_req *req, fi_addr_t peer)
{
	(void) ep;
	memset(req, 0, sizeof(*req));
	req->active = true;
	req->waiting = true;
	req->peer = peer;
	mrail_rsv_xfer_start(&req->xfer, mrail_now_ns(), MRAIL_RSV_TIMEOUT_NS,
			     MRAIL_RSV_MAX_WAIT_NS);
}

/* The rails that work for the peer (mrail_health.c): a transfer asks for
 * no other and stripes over no other. */
static uint32_t rsv_usable(const struct mrail_ep *ep, fi_addr_t peer)
{
	uint32_t usable = 0;
	size_t rail;

	for (rail = 0; rail < ep->rail_count; rail++) {
		if (mrail_rail_usable(ep, peer, rail))
			usable |= 1u << rail;
	}
	return usable;
}

/* Asks peer for some of the free rails, as many as stripe_ratio says. */
static void rsv_ask(struct mrail_ep *ep, struct mrail_rsv_ep *rsv,
		    struct mrail_rsv_req *req, uint32_t node, uint32_t free_rails,
		    uint64_t now)
{
	struct mrail_rsv_event ev = { .type = MRAIL_RSV_LOCAL_RTS, .peer = node };
	struct mrail_rsv_actions act;
	uint32_t chosen = 0, asked = 0;
	size_t rail;

	if (mrail_select_rails(free_rails, ep->rail_count,
			       ep->policy.attr.stripe_ratio, &rsv->cursor,
			       &chosen) <= 0)
		chosen = 0;
	for (rail = 0; rail < ep->rail_count; rail++) {
		if (!(chosen & (1u << rail)))
			continue;
		if (rsv_step(ep, rsv, rail, req->peer, &ev, &act) || !act.count)
			continue;
		rsv->owner[rail] = req;
		asked |= 1u << rail;
	}
	mrail_rsv_xfer_asked(&req->xfer, asked, now, MRAIL_RSV_RETRY_NS);
}

/* Abandons req's requests still out (an ABORT goes in case of a CTS). */
static void rsv_abandon(struct mrail_ep *ep, struct mrail_rsv_ep *rsv,
			struct mrail_rsv_req *req)
{
	struct mrail_rsv_event ev = { .type = MRAIL_RSV_LOCAL_TIMEOUT };
	struct mrail_rsv_actions act;
	size_t rail;

	for (rail = 0; rail < ep->rail_count; rail++) {
		if (!(req->xfer.asked & (1u << rail)))
			continue;
		rsv_step(ep, rsv, rail, req->peer, &ev, &act);
		mrail_rsv_xfer_answer(&req->xfer, (unsigned) rail, false);
		if (rsv->owner[rail] == req)
			rsv->owner[rail] = NULL;
	}
}

/* Stripes over the rails granted; one the split leaves without a stripe
 * (the minimum stripe) goes back at once. */
static int rsv_stripe(struct mrail_ep *ep, struct mrail_rsv_ep *rsv,
		      struct mrail_rsv_req *req, uint64_t len,
		      struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	struct mrail_rsv_event ev = { .type = MRAIL_RSV_LOCAL_ABORT };
	struct mrail_rsv_actions act;
	uint32_t used = 0;
	size_t rail;
	int n, s;

	n = mrail_policy_stripe_over(ep, len,
				     req->xfer.granted & rsv_usable(ep, req->peer),
				     out);
	for (s = 0; s < n; s++)
		used |= 1u << out[s].rail;
	for (rail = 0; rail < ep->rail_count && n >= 0; rail++) {
		if (!(req->xfer.granted & (1u << rail)) || (used & (1u << rail)) ||
		    rsv->owner[rail] != req)
			continue;
		if (rsv->rail[rail].state == MRAIL_RSV_SENDING)
			rsv_step(ep, rsv, rail, req->peer, &ev, &act);
		rsv->owner[rail] = NULL;
	}
	return n;
}

int mrail_rsv_poll(struct mrail_ep *ep, struct mrail_rsv_req *req, uint64_t len,
		   struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	struct mrail_rsv_ep *rsv = rsv_get(ep);
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, req->peer);
	uint32_t free_rails, usable, node;
	bool others_busy;
	uint64_t now;
	size_t rail;

	if (!req->waiting)
		return -FI_EINVAL;
	if (!rsv || !peer || !peer->key)
		goto fallback;
	node = rsv_node(peer->key);
	if (node == rsv->rail[0].node) {
		/* Our own address: no port pair to reserve. */
		req->waiting = false;
		return mrail_policy_stripe_over(ep, len, ~0u, out);
	}
	for (;;) {
		free_rails = 0;
		others_busy = false;
		usable = rsv_usable(ep, req->peer);
		for (rail = 0; rail < ep->rail_count; rail++) {
			if (rsv->rail[rail].state == MRAIL_RSV_FREE &&
			    (usable & (1u << rail)))
				free_rails |= 1u << rail;
			if (rsv->owner[rail] && rsv->owner[rail] != req)
				others_busy = true;
		}
		now = mrail_now_ns();
		switch (mrail_rsv_xfer_next(&req->xfer, free_rails, others_busy,
					    now, MRAIL_RSV_TIMEOUT_NS)) {
		case MRAIL_RSV_NEXT_WAIT:
			return -FI_EAGAIN;
		case MRAIL_RSV_NEXT_ASK:
			rsv_ask(ep, rsv, req, node, free_rails, now);
			return -FI_EAGAIN;
		case MRAIL_RSV_NEXT_TIMEOUT:
			MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 " did not answer "
				   "a rail reservation within %" PRIu64 " ms\n",
				   (uint64_t) req->peer,
				   MRAIL_RSV_TIMEOUT_NS / 1000000);
			rsv_abandon(ep, rsv, req);
			continue;
		case MRAIL_RSV_NEXT_GO:
			req->waiting = false;
			return rsv_stripe(ep, rsv, req, len, out);
		case MRAIL_RSV_NEXT_FALLBACK:
			goto fallback;
		}
	}
fallback:
	MRAIL_WARN(FI_LOG_EP_DATA, "no rail reserved with peer %" PRIu64
		   " in time: the transfer goes whole on one rail, unreserved "
		   "(fi_mrail(7), dynamic striping)\n", (uint64_t) req->peer);
	req->waiting = false;
	return mrail_policy_stripe_over(ep, len, 0, out);
}

void mrail_rsv_end(struct mrail_ep *ep, struct mrail_rsv_req *req)
{
	struct mrail_rsv_event ev = { .type = MRAIL_RSV_LOCAL_ABORT };
	struct mrail_rsv_ep *rsv = ep->rsv;
	struct mrail_rsv_actions act;
	size_t rail;

	if (!req->active)
		return;
	req->active = false;
	if (!rsv)
		return;
	rsv_abandon(ep, rsv, req);
	for (rail = 0; rail < ep->rail_count; rail++) {
		if (rsv->owner[rail] != req)
			continue;
		/* A rail a peer released behind our back is FREE already. */
		if (rsv->rail[rail].state == MRAIL_RSV_SENDING)
			rsv_step(ep, rsv, rail, req->peer, &ev, &act);
		rsv->owner[rail] = NULL;
	}
}

/*
 * The rail failed for the peer: what its port holds with the peer is let
 * go here at once, as the messages that would end it (ours and the
 * peer's) wait on the dead link. Our request to the peer counts as
 * refused; a path the peer granted us is given back (its transfer's
 * stripe moves to another rail, mrail_rdv.c); a path we granted the peer
 * is freed as if its ABORT had come. The ABORTs this sends go on the rail,
 * and arrive, stale and ignored, if the link comes back; so do the peer's.
 */
void mrail_rsv_rail_failed(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	struct mrail_av_peer *p = mrail_av_get_peer(ep->av, peer);
	struct mrail_rsv_ep *rsv = ep->rsv;
	struct mrail_rsv_actions act;
	struct mrail_rsv_event ev;
	struct mrail_rsv_rail *port;
	uint32_t node;

	if (!rsv || !p || !p->key || rail >= ep->rail_count)
		return;
	node = rsv_node(p->key);
	port = &rsv->rail[rail];
	if (port->out_rts && port->out_peer == node) {
		ev = (struct mrail_rsv_event) { .type = MRAIL_RSV_LOCAL_TIMEOUT };
		rsv_step(ep, rsv, rail, peer, &ev, &act);
		if (rsv->owner[rail])
			mrail_rsv_xfer_answer(&rsv->owner[rail]->xfer,
					      (unsigned) rail, false);
		rsv->owner[rail] = NULL;
	}
	if (port->state == MRAIL_RSV_SENDING && port->out_peer == node) {
		ev = (struct mrail_rsv_event) { .type = MRAIL_RSV_LOCAL_ABORT };
		rsv_step(ep, rsv, rail, peer, &ev, &act);
		rsv->owner[rail] = NULL;
	}
	if (port->state == MRAIL_RSV_RECEIVING && port->in_peer == node) {
		ev = (struct mrail_rsv_event) { .type = MRAIL_RSV_REMOTE_ABORT,
						.peer = node, .seq = port->in_seq };
		rsv_step(ep, rsv, rail, peer, &ev, &act);
	}
}

uint32_t mrail_rsv_rail_state(const struct mrail_ep *ep, size_t rail)
{
	return ep->rsv ? (uint32_t) ep->rsv->rail[rail].state : FI_MRAIL_RAIL_FREE;
}

void mrail_rsv_flush(struct mrail_ep *ep)
{
	struct mrail_rsv_ep *rsv = ep->rsv;

	if (!rsv)
		return;
	if (rsv->ignored)
		MRAIL_INFO(FI_LOG_EP_CTRL, "%" PRIu64 " stale or duplicate rail "
			   "reservation messages were ignored\n", rsv->ignored);
	free(rsv);
	ep->rsv = NULL;
}
