/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rail health, per peer: is rail k still a way to reach peer p?
 *
 * A core provider whose link went down says nothing: ofi_rxm over tcp keeps
 * the operations queued while TCP retransmits, for minutes. So a rail is
 * judged by what it does beside its siblings to the same peer:
 *  - it reported an error for an operation to the peer: failed at once;
 *  - it has had operations to the peer in flight and nothing back (no
 *    completion, nothing from the peer on it) for half the rail timeout,
 *    or it has taken sends to the peer and not heard from it for half the
 *    rail timeout (a send completes once the socket has it, so a link that
 *    died under a stream of sends shows nothing in flight): the rail gets
 *    a probe (and its siblings one each, from the caller), still up. The
 *    probe unanswered for the rail timeout, while the peer has been heard
 *    on another working rail for half the timeout: failed, as "stalled".
 *    Only the peer's own doing counts as a sibling's progress (a message
 *    from it, a read it served): a send completes locally even when the
 *    peer is gone. If every rail goes quiet, the peer is slow or dead, not
 *    a rail, and no rail is failed: that is the peer timeout's business
 *    (liveness.h). So the last working rail to a peer is never failed by
 *    a stall;
 *  - it refused every operation to the peer (-FI_EAGAIN) for the rail
 *    timeout while the peer was heard on a sibling: failed, as "stalled".
 * A failed rail gets a probe every probe interval. Its echo (or a read the
 * peer served on the rail) brings it back; a probe unanswered within the rail
 * timeout returns it to failed, and the next probe follows.
 *
 * What the caller does on each verdict (reissue what was in flight on a
 * failed rail, leave it out of every policy's choice for that peer, send
 * the probe) is not decided here. These are pure functions of the records
 * and a clock, as the unit tests drive them.
 */
#ifndef MRAIL_RAIL_HEALTH_H
#define MRAIL_RAIL_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FI_MRAIL_RAIL_TIMEOUT, in milliseconds: its default and its range. */
#define MRAIL_HEALTH_TIMEOUT_DEFAULT_MS 500
#define MRAIL_HEALTH_TIMEOUT_MIN_MS 10
#define MRAIL_HEALTH_TIMEOUT_MAX_MS 60000

enum mrail_health_state {
	MRAIL_HEALTH_UP,
	MRAIL_HEALTH_FAILED,
	MRAIL_HEALTH_PROBING,	/* failed, a probe out and not yet answered */
};

enum mrail_health_reason {
	MRAIL_HEALTH_NO_REASON,
	MRAIL_HEALTH_ERROR,	/* the rail reported an error */
	MRAIL_HEALTH_STALLED,	/* nothing back while a sibling worked */
};

/* One rail of one peer. All zero is a working rail with nothing in flight. */
struct mrail_rail_health {
	uint8_t state;		/* enum mrail_health_state */
	uint8_t reason;		/* enum mrail_health_reason of the last failure */
	uint32_t in_flight;	/* operations to the peer posted, not completed */
	/* Last completion or arrival on the rail, or the post that started
	 * its busy spell: the stall clock runs from here. */
	uint64_t progress_ns;
	uint64_t heard_ns;	/* last time the peer was heard on the rail */
	uint64_t sent_ns;	/* last send to the peer the rail completed */
	/* A probe to the working rail, for sends unanswered on it, waiting
	 * for its echo since then; or 0. */
	uint64_t echo_wait_ns;
	/* Since when, during that wait, the peer has been heard on a sibling
	 * (first seen by a judgement); or 0. */
	uint64_t alive_ns;
	uint64_t changed_ns;	/* last change of state */
	uint64_t probed_ns;	/* last probe sent */
	/* Since when the rail has refused every message to the peer
	 * (-FI_EAGAIN: ofi_rxm while it connects), or 0. */
	uint64_t refused_ns;
	uint64_t failures, recoveries;
	/* Operations the caller sent again elsewhere when the rail failed,
	 * and their bytes (counted by the caller, for statistics). */
	uint64_t reissued_ops, reissued_bytes;
};

struct mrail_health_config {
	uint64_t timeout_ns;		/* the rail timeout */
	uint64_t probe_interval_ns;	/* between probes of a failed rail */
};

enum mrail_health_action {
	MRAIL_HEALTH_NOTHING,
	/* The rail failed for the peer: what was in flight on it is the
	 * caller's to complete elsewhere (the record forgets it). */
	MRAIL_HEALTH_FAIL,
	MRAIL_HEALTH_PROBE,	/* send the peer a probe on the rail */
};

/* An operation to the peer was posted on the rail at now_ns. */
void mrail_health_posted(struct mrail_rail_health *h, uint64_t now_ns);

/*
 * The rail refused to take an operation to the peer for now (it was tried
 * elsewhere). A rail that refuses everything for the rail timeout while
 * the peer is heard on another rail fails like a stalled one: a rail
 * connecting to a peer whose link is down refuses until tcp gives up.
 */
void mrail_health_refused(struct mrail_rail_health *h, uint64_t now_ns);

/*
 * One of those completed locally (a send). That restarts the stall clock
 * only while the peer was heard on the rail within the timeout: a rail
 * whose link died goes on completing sends until its socket fills.
 */
void mrail_health_completed(struct mrail_rail_health *h, uint64_t now_ns,
			    const struct mrail_health_config *cfg);

/* A probe's send completed: no longer in flight, and no send that wants an
 * answer (its echo is awaited by other means). */
void mrail_health_probe_completed(struct mrail_rail_health *h);

/* What was heard from the peer on a rail, and what it proves. */
enum mrail_health_heard_kind {
	/* A message from the peer arrived: its way to us works. */
	MRAIL_HEARD_ARRIVAL,
	/* An operation of ours it serves (a read) completed: both ways work,
	 * and that operation is no longer in flight. */
	MRAIL_HEARD_SERVED,
	/* The echo of a probe of ours: both ways work. */
	MRAIL_HEARD_ECHO,
};

/*
 * The peer was heard on the rail. Returns true when this brought a failed
 * rail back: only what proves our way to the peer works does. A rail over
 * TCP whose link returns delivers the peer's messages while ours still wait
 * in our socket for its retransmission timer, seconds after a long outage;
 * sending there on the peer's word alone would stall what we send.
 */
bool mrail_health_heard(struct mrail_rail_health *h,
			enum mrail_health_heard_kind kind, uint64_t now_ns);

/* The rail reported an error for the peer. Returns true when this failed a
 * working rail (the caller then acts as on MRAIL_HEALTH_FAIL). */
bool mrail_health_error(struct mrail_rail_health *h, uint64_t now_ns);

/*
 * What to do about rail `rail` of a peer whose rails are rails[0..count)
 * at now_ns. The verdict is applied to the record: FAIL leaves it failed
 * with nothing in flight, PROBE leaves a failed rail probing. A working
 * rail the peer was never heard on, while it was on another, gets one
 * PROBE (and stays up): an answer shows the rail works, and none makes it
 * stall like any operation would, so a rail whose link is down at the
 * peer fails even while no traffic of the application goes on it.
 */
enum mrail_health_action mrail_health_judge(struct mrail_rail_health *rails,
					    size_t count, size_t rail,
					    uint64_t now_ns,
					    const struct mrail_health_config *cfg);

static inline bool mrail_health_usable(const struct mrail_rail_health *h)
{
	return h->state == MRAIL_HEALTH_UP;
}

/* A rail whose link is down here from the start: failed, its first probe
 * due at once. */
void mrail_health_start_failed(struct mrail_rail_health *h);

size_t mrail_health_usable_count(const struct mrail_rail_health *rails,
				 size_t count);

/* "up", "failed", "probing"; the reason as a phrase for a log line. */
const char *mrail_health_state_name(enum mrail_health_state state);
const char *mrail_health_reason_text(enum mrail_health_reason reason);

/* FI_MRAIL_RAIL_TIMEOUT: whole milliseconds, MRAIL_HEALTH_TIMEOUT_MIN_MS to
 * MRAIL_HEALTH_TIMEOUT_MAX_MS. Returns 0 with *timeout_ns, or -EINVAL with
 * a sentence in err. */
int mrail_health_parse_timeout(const char *text, uint64_t *timeout_ns,
			       char *err, size_t err_len);

#endif /* MRAIL_RAIL_HEALTH_H */
