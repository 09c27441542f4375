/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Peers: everything an endpoint keeps about each peer (struct mrail_peer,
 * indexed by the peer's canonical fi_addr), and whether the peer lives.
 *
 * Liveness is the endpoint's side of core/liveness.c. Every rail send
 * reports whether the peer's rail took it, every message from a peer says
 * it lives, and now and then (MRAIL_LIVENESS_CHECK_NS) progress probes the
 * silent peers this endpoint waits on and gives up on those whose rails
 * have refused everything for FI_MRAIL_PEER_TIMEOUT seconds: their waiting
 * operations complete with FI_EHOSTUNREACH, and later sends to them fail
 * with -FI_EHOSTUNREACH, instead of waiting for ever. The same happens with
 * every peer, for as long as it lasts, when the link of every rail here has
 * been down for that long (cut_off).
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_ep.h"
#include "mrail_msg.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

/* How often progress looks at the peers. */
#define MRAIL_LIVENESS_CHECK_NS 250000000ULL

/* Coarse is enough for timeouts of seconds, and cheap on every send. */
static uint64_t live_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

int mrail_peer_reserve(struct mrail_ep *ep, fi_addr_t fi_addr)
{
	struct mrail_peer *peers;
	size_t cap, i;

	mrail_assert_locked(ep->domain);

	if (fi_addr < ep->peer_cap)
		return 0;
	cap = ep->peer_cap ? ep->peer_cap : 64;
	while (cap <= fi_addr)
		cap *= 2;
	peers = realloc(ep->peers, cap * sizeof(*peers));
	if (!peers)
		return -FI_ENOMEM;
	memset(peers + ep->peer_cap, 0, (cap - ep->peer_cap) * sizeof(*peers));
	for (i = ep->peer_cap; i < cap; i++) {
		peers[i].tx_credits = MRAIL_TX_CREDITS;
		mrail_health_peer_init(ep, &peers[i]);
	}
	ep->peers = peers;
	ep->peer_cap = cap;
	return 0;
}

void mrail_peers_free(struct mrail_ep *ep)
{
	size_t i;

	for (i = 0; i < ep->peer_cap; i++) {
		if (ep->peers[i].rx.ready)
			mrail_reorder_fini(&ep->peers[i].rx.reorder);
		mrail_replay_free(ep, (fi_addr_t) i);
	}
	free(ep->peers);
	ep->peers = NULL;
	ep->peer_cap = 0;
}

/* ---- liveness ---- */

void mrail_liveness_sent(struct mrail_ep *ep, fi_addr_t dest, ssize_t ret)
{
	if (ret && ret != -FI_EAGAIN)
		return;
	if (!ep->live_timeout_ns || mrail_peer_reserve(ep, dest))
		return;
	mrail_live_sent(&ep->peers[dest].live, ret == -FI_EAGAIN, live_now_ns());
}

void mrail_liveness_heard(struct mrail_ep *ep, fi_addr_t peer)
{
	if (!ep->live_timeout_ns || mrail_peer_reserve(ep, peer))
		return;
	mrail_live_heard(&ep->peers[peer].live, live_now_ns());
}

bool mrail_liveness_unreachable(const struct mrail_ep *ep, fi_addr_t dest)
{
	return ep->links.cut_off ||
	       (dest < ep->peer_cap && ep->peers[dest].live.unreachable);
}

/* A PROBE: whether the peer's rail takes it is the answer (the send
 * reports it to mrail_liveness_sent). */
static void probe(struct mrail_ep *ep, fi_addr_t dest)
{
	struct mrail_wire_hdr hdr = { .sender = ep->self_key, .op = MRAIL_OP_PROBE };
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, dest);
	uint8_t msg[MRAIL_WIRE_HDR_LEN];

	if (!peer || (peer->addr.flags & MRAIL_ADDR_FLAG_PARTIAL))
		return;
	mrail_wire_hdr_encode(&hdr, msg, sizeof(msg));
	MRAIL_DBG(FI_LOG_EP_DATA, "peer %" PRIu64 " is silent: probing it\n",
		  (uint64_t) dest);
	/* No free buffer: the rails are busy, try at the next check. */
	(void) mrail_ctrl_send_now(ep, dest, MRAIL_ANY_RAIL, msg, sizeof(msg));
}

static void give_up(struct mrail_ep *ep, fi_addr_t dest)
{
	ep->peers[dest].live.unreachable = true;
	MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 ": its rails have refused every "
		   "message for %" PRIu64 " s (FI_MRAIL_PEER_TIMEOUT): it is taken "
		   "for dead, its operations fail with FI_EHOSTUNREACH\n",
		   (uint64_t) dest, (uint64_t) (ep->live_timeout_ns / 1000000000ULL));
	mrail_rdv_fail_peer(ep, dest, FI_EHOSTUNREACH);
	mrail_replay_free(ep, dest);
}

/* Every rail's link here has been down for the timeout: what waits on
 * any peer fails, and new operations fail until a link is back. */
static void cut_off(struct mrail_ep *ep)
{
	size_t i;

	MRAIL_WARN(FI_LOG_EP_DATA, "the link of every rail is down on this "
		   "host and has been for %" PRIu64 " s (FI_MRAIL_PEER_TIMEOUT): "
		   "operations with every peer fail with FI_EHOSTUNREACH until "
		   "a link is back\n",
		   (uint64_t) (ep->live_timeout_ns / 1000000000ULL));
	for (i = 0; i < ep->peer_cap; i++) {
		mrail_rdv_fail_peer(ep, (fi_addr_t) i, FI_EHOSTUNREACH);
		mrail_replay_free(ep, (fi_addr_t) i);
	}
}

void mrail_liveness_progress(struct mrail_ep *ep)
{
	const struct mrail_railset *rails = &ep->domain->fabric->rails;
	bool *waited, was_cut;
	uint64_t now;
	size_t i;

	if (!ep->live_timeout_ns || !ep->peer_cap)
		return;
	now = live_now_ns();
	if (now < ep->live_next_check_ns)
		return;
	ep->live_next_check_ns = now + MRAIL_LIVENESS_CHECK_NS;
	was_cut = ep->links.cut_off;
	if (mrail_live_links_judge(&ep->links, mrail_railset_any_link_up(rails),
				   now, ep->live_timeout_ns))
		cut_off(ep);
	else if (was_cut && !ep->links.cut_off)
		MRAIL_WARN(FI_LOG_EP_DATA, "a rail's link is up again on this "
			   "host: operations with peers may go on\n");
	waited = calloc(ep->peer_cap, sizeof(*waited));
	if (!waited)
		return;
	mrail_rdv_mark_waited(ep, waited);
	for (i = 0; i < ep->peer_cap; i++) {
		switch (mrail_live_judge(&ep->peers[i].live, now, ep->live_timeout_ns,
					 waited[i])) {
		case MRAIL_LIVE_PROBE:
			ep->peers[i].live.probed_ns = now;
			probe(ep, (fi_addr_t) i);
			break;
		case MRAIL_LIVE_UNREACHABLE:
			give_up(ep, (fi_addr_t) i);
			break;
		default:
			break;
		}
	}
	free(waited);
}

int mrail_liveness_env(uint64_t *timeout_ns)
{
	char err[MRAIL_ERR_MAX];

	if (!mrail_env.peer_timeout) {
		*timeout_ns = (uint64_t) MRAIL_LIVE_TIMEOUT_DEFAULT_S * 1000000000ULL;
		return 0;
	}
	if (mrail_live_parse_timeout(mrail_env.peer_timeout, timeout_ns, err,
				     sizeof(err))) {
		MRAIL_WARN(FI_LOG_CORE, "FI_MRAIL_PEER_TIMEOUT: %s\n", err);
		return -FI_ENODATA;
	}
	return 0;
}
