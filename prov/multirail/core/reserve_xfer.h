/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One transfer's side of endpoint-reserving dynamic striping (Coll et al.
 * 2001, Algorithm 2): which rails it asked the peer for, which it holds, and what it
 * should do next. The per-rail protocol is reserve.h's; this only keeps
 * the transfer's account of it and decides, from a clock the caller
 * passes, when to ask, when to stop waiting, and when to go. Pure.
 *
 * The rules, so that nothing waits for ever:
 *  - while requests are out, wait for their answers until the deadline,
 *    then abandon them (TIMEOUT: the caller raises LOCAL_TIMEOUT on each);
 *  - once every request is answered, go on the rails granted, if any;
 *  - granted none: ask again (not sooner than the retry time) when a rail
 *    of ours is free; past the deadline, go without reservation
 *    (FALLBACK);
 *  - while another transfer of this endpoint holds or asks for rails, the
 *    deadline moves on: that transfer ends and releases them, whereas a
 *    rail a peer holds, or a peer that never answers, may never be
 *    released; but never past max_wait after the start, as that transfer
 *    may be stuck on a peer that went away.
 */
#ifndef MRAIL_RESERVE_XFER_H
#define MRAIL_RESERVE_XFER_H

#include <stdbool.h>
#include <stdint.h>

struct mrail_rsv_xfer {
	uint32_t asked;		/* rails whose request awaits an answer */
	uint32_t granted;	/* rails reserved for this transfer */
	uint64_t deadline_ns;	/* stops waiting at this time */
	uint64_t retry_ns;	/* asks again no sooner than this */
	uint64_t give_up_ns;	/* the deadline never moves past this */
};

enum mrail_rsv_next {
	MRAIL_RSV_NEXT_WAIT,	 /* answers, or free rails, are to come */
	MRAIL_RSV_NEXT_ASK,	 /* ask for some of the free rails now */
	MRAIL_RSV_NEXT_TIMEOUT,	 /* abandon the requests still out */
	MRAIL_RSV_NEXT_GO,	 /* stripe over the rails granted */
	MRAIL_RSV_NEXT_FALLBACK, /* no rail granted in time: go unreserved */
};

/* A transfer starting at now that waits timeout_ns for rails (more while
 * its endpoint's other transfers hold them, up to max_wait_ns). */
void mrail_rsv_xfer_start(struct mrail_rsv_xfer *x, uint64_t now, uint64_t timeout_ns,
			  uint64_t max_wait_ns);

/*
 * What to do at time now. free_rails: this endpoint's rails that are FREE;
 * others_busy: another transfer of this endpoint asks for or holds rails
 * (it moves the deadline to now + timeout_ns, at most to the give-up time).
 */
enum mrail_rsv_next mrail_rsv_xfer_next(struct mrail_rsv_xfer *x, uint32_t free_rails,
					bool others_busy, uint64_t now,
					uint64_t timeout_ns);

/* Requests went out on rails at now; the next round waits retry_ns. */
void mrail_rsv_xfer_asked(struct mrail_rsv_xfer *x, uint32_t rails, uint64_t now,
			  uint64_t retry_ns);

/* The request on rail was answered (granted or not), or abandoned.
 * Returns -1 when rail had no request of this transfer out, else 0. */
int mrail_rsv_xfer_answer(struct mrail_rsv_xfer *x, unsigned rail, bool granted);

#endif /* MRAIL_RESERVE_XFER_H */
