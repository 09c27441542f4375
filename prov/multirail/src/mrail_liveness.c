/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Peer liveness: the endpoint's side of core/liveness.c. Every rail send
 * reports whether the peer's rail took it, every message from a peer says
 * it lives, and now and then (MRAIL_LIVENESS_CHECK_NS) progress probes the
 * silent peers this endpoint waits on and gives up on those whose rails
 * have refused everything for FI_MRAIL_PEER_TIMEOUT seconds: their waiting
 * operations complete with FI_EHOSTUNREACH, and later sends to them fail
 * with -FI_EHOSTUNREACH, instead of waiting for ever.
 */
#include "mrail.h"
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

void mrail_liveness_sent(struct mrail_ep *ep, fi_addr_t dest, ssize_t ret)
{
	if (ret && ret != -FI_EAGAIN)
		return;
	if (!ep->live_timeout_ns || mrail_ep_reserve_peer(ep, dest))
		return;
	mrail_live_sent(&ep->live[dest], ret == -FI_EAGAIN, live_now_ns());
}

void mrail_liveness_heard(struct mrail_ep *ep, fi_addr_t peer)
{
	if (!ep->live_timeout_ns || mrail_ep_reserve_peer(ep, peer))
		return;
	mrail_live_heard(&ep->live[peer], live_now_ns());
}

bool mrail_liveness_unreachable(const struct mrail_ep *ep, fi_addr_t dest)
{
	return dest < ep->peer_cap && ep->live[dest].unreachable;
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
	/* No free buffer: the rails are busy, try at the next check. */
	(void) mrail_ctrl_send_now(ep, dest, msg, sizeof(msg));
}

static void give_up(struct mrail_ep *ep, fi_addr_t dest)
{
	ep->live[dest].unreachable = true;
	MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 ": its rails have refused every "
		   "message for %" PRIu64 " s (FI_MRAIL_PEER_TIMEOUT): it is taken "
		   "for dead, its operations fail with FI_EHOSTUNREACH\n",
		   (uint64_t) dest, (uint64_t) (ep->live_timeout_ns / 1000000000ULL));
	mrail_rdv_fail_peer(ep, dest, FI_EHOSTUNREACH);
}

void mrail_liveness_progress(struct mrail_ep *ep)
{
	uint64_t now;
	bool *waited;
	size_t i;

	if (!ep->live_timeout_ns || !ep->peer_cap)
		return;
	now = live_now_ns();
	if (now < ep->live_next_check_ns)
		return;
	ep->live_next_check_ns = now + MRAIL_LIVENESS_CHECK_NS;
	waited = calloc(ep->peer_cap, sizeof(*waited));
	if (!waited)
		return;
	mrail_rdv_mark_waited(ep, waited);
	for (i = 0; i < ep->peer_cap; i++) {
		switch (mrail_live_judge(&ep->live[i], now, ep->live_timeout_ns,
					 waited[i])) {
		case MRAIL_LIVE_PROBE:
			ep->live[i].probed_ns = now;
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
