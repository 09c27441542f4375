/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Peer liveness: when does an endpoint give up on a peer?
 *
 * A core provider does not say that a peer is gone. ofi_rxm, whose peer
 * died, answers every send to it with -FI_EAGAIN for ever (it retries the
 * connection, which is refused), and a rendezvous sender waiting for the
 * receiver's ACK has nothing in flight that could fail at all. So mrail
 * watches each peer it has work with:
 *  - every rail send to the peer reports back: accepted (the peer is
 *    reachable) or refused with -FI_EAGAIN (the start of a refusal run is
 *    kept); anything received from the peer also ends a run;
 *  - a peer that mrail waits on (an ACK, a response) and has heard nothing
 *    from for a probe interval gets a PROBE, a message that needs no
 *    answer: a live peer's rail accepts it (the connection is up even if
 *    the application there makes no progress), a dead peer's refuses it;
 *  - a refusal run longer than the timeout makes the peer unreachable: its
 *    operations fail with FI_EHOSTUNREACH instead of waiting for ever.
 * The decision is this pure function of the peer's record and the clock.
 */
#ifndef MRAIL_LIVENESS_H
#define MRAIL_LIVENESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FI_MRAIL_PEER_TIMEOUT's default, in seconds; 0 turns the watch off. */
#define MRAIL_LIVE_TIMEOUT_DEFAULT_S 60
#define MRAIL_LIVE_TIMEOUT_MAX_S 86400
/* How often a waited-on, silent peer is probed. */
#define MRAIL_LIVE_PROBE_INTERVAL_NS 1000000000ULL

struct mrail_live_peer {
	uint64_t refused_since_ns;	/* start of the refusal run, 0: none */
	uint64_t heard_ns;		/* last message from it, or accepted send */
	uint64_t probed_ns;		/* last probe tried, 0: never */
	bool unreachable;
};

enum mrail_live_action {
	MRAIL_LIVE_NOTHING,
	MRAIL_LIVE_PROBE,		/* send it a PROBE */
	MRAIL_LIVE_UNREACHABLE,		/* fail its operations */
};

/* A rail send to the peer was accepted (refused false) or refused with
 * -FI_EAGAIN (refused true) at now_ns. */
void mrail_live_sent(struct mrail_live_peer *p, bool refused, uint64_t now_ns);

/* Something arrived from the peer at now_ns. */
void mrail_live_heard(struct mrail_live_peer *p, uint64_t now_ns);

/*
 * What to do about the peer at now_ns, with timeout_ns (0: never give up)
 * and waited_on (this endpoint waits for an answer from it). An
 * unreachable peer stays so: NOTHING.
 */
enum mrail_live_action mrail_live_judge(const struct mrail_live_peer *p,
					uint64_t now_ns, uint64_t timeout_ns,
					bool waited_on);

/* FI_MRAIL_PEER_TIMEOUT: whole seconds 0..MRAIL_LIVE_TIMEOUT_MAX_S.
 * Returns 0 with *timeout_ns, or -EINVAL with a sentence in err. */
int mrail_live_parse_timeout(const char *text, uint64_t *timeout_ns, char *err,
			     size_t err_len);

#endif /* MRAIL_LIVENESS_H */
