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

/*
 * This host's side: the links of the rails' interfaces. A peer beyond a
 * link that is down says nothing either (tcp takes sends into the socket
 * and retransmits them for minutes), so when every rail's link here has
 * been down for the timeout, the endpoint is cut off: every peer's waiting
 * operations fail with FI_EHOSTUNREACH, and so do new ones, until a link
 * is back. (A peer cut off at its own end is cut off here too: its
 * application's operations fail there.)
 */
struct mrail_live_links {
	uint64_t all_down_since_ns;	/* 0: some link up */
	bool cut_off;
};

/* The links at now_ns: any_up says whether one of them is up. Returns true
 * when this cuts the endpoint off (every link down for timeout_ns; 0: never
 * cut off); a link up again ends it. */
bool mrail_live_links_judge(struct mrail_live_links *l, bool any_up,
			    uint64_t now_ns, uint64_t timeout_ns);

/* FI_MRAIL_PEER_TIMEOUT: whole seconds 0..MRAIL_LIVE_TIMEOUT_MAX_S.
 * Returns 0 with *timeout_ns, or -EINVAL with a sentence in err. */
int mrail_live_parse_timeout(const char *text, uint64_t *timeout_ns, char *err,
			     size_t err_len);

#endif /* MRAIL_LIVENESS_H */
