/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Endpoint-reserving dynamic striping (Coll et al. 2001, Algorithms 2-5) on mrail's
 * receiver-driven rendezvous (mrail_reserve.c).
 *
 * In mrail the endpoint that gets the data reads it (mrail_rdv.c), so the
 * reader plays the paper's sender: before striping a pulled transfer it
 * asks the data's owner, on each rail it wants, for that rail's port
 * (RSV RTS); the owner grants (CTS) or refuses (NACK) by core/reserve.h's
 * state machine. The reader stripes over the rails granted and releases
 * them (ABORT) when the transfer is done. Each port pair on a rail thus
 * carries one transfer, in one direction, at a time.
 */
#ifndef MRAIL_RESERVE_SRC_H
#define MRAIL_RESERVE_SRC_H

#include "mrail.h"

#include "reserve_xfer.h"
#include "stripe.h"

/* How long a transfer waits for rails before it goes unreserved, whole
 * on one rail (fi_mrail(7)); and the pause between two request rounds
 * that won nothing. */
#define MRAIL_RSV_TIMEOUT_NS ((uint64_t) 1000000000)
/* The longest a transfer waits while its endpoint's other transfers hold
 * the rails (one of them may be stuck on a peer that went away). */
#define MRAIL_RSV_MAX_WAIT_NS ((uint64_t) 10000000000)
#define MRAIL_RSV_RETRY_NS ((uint64_t) 1000000)

/* One pulled transfer's reservation (in struct mrail_rdv_recv). */
struct mrail_rsv_req {
	bool active;		/* reserving, or holding rails */
	bool waiting;		/* not striped yet */
	fi_addr_t peer;
	struct mrail_rsv_xfer xfer;
};

/* Whether a pulled transfer of len bytes reserves rails first (dynamic;
 * hybrid above its threshold). */
bool mrail_rsv_wanted(struct mrail_ep *ep, uint64_t len);

/* Starts reserving rails of peer for req. */
void mrail_rsv_begin(struct mrail_ep *ep, struct mrail_rsv_req *req, fi_addr_t peer);

/*
 * Moves req's reservation on. Returns -FI_EAGAIN while it waits, else the
 * transfer's stripes of len bytes written to out (over the rails granted,
 * or whole on one rail when none was) as mrail_policy_stripe returns them.
 */
int mrail_rsv_poll(struct mrail_ep *ep, struct mrail_rsv_req *req, uint64_t len,
		   struct mrail_stripe out[MRAIL_MAX_RAILS]);

/* The transfer is over: its rails go back (ABORT to the peer). */
void mrail_rsv_end(struct mrail_ep *ep, struct mrail_rsv_req *req);

/* An RSV message from peer arrived on rail. */
void mrail_rsv_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			 const struct mrail_wire_hdr *hdr, const uint8_t *payload);

/* The rail failed for the peer (mrail_health.c): its port lets go of what
 * it holds with the peer, and a request to the peer on it is refused. */
void mrail_rsv_rail_failed(struct mrail_ep *ep, fi_addr_t peer, size_t rail);

/* The reservation state of rail (enum fi_mrail_rail_state). */
uint32_t mrail_rsv_rail_state(const struct mrail_ep *ep, size_t rail);

/* The endpoint is closing: forgets everything, sends nothing. */
void mrail_rsv_flush(struct mrail_ep *ep);

/* Policy side (mrail_policy.c): len bytes over the rails set in rails,
 * equal shares; with rails 0, whole on one rail picked round-robin. */
int mrail_policy_stripe_over(struct mrail_ep *ep, uint64_t len, uint32_t rails,
			     struct mrail_stripe out[MRAIL_MAX_RAILS]);

#endif /* MRAIL_RESERVE_SRC_H */
