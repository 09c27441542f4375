/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Barrier schedules for counter-triggered chains (Yu et al. 2003: the host starts
 * the barrier once, the network side fires each next message itself).
 *
 * A schedule is what one rank r of n does, as a list of steps. Step k is one
 * triggered operation group armed on the rank's own counter k:
 *
 *	when counter k reaches threshold(k, epoch), send one zero-byte message
 *	to each of sends[] (incrementing the peer's counter sends[i].counter),
 *	and add 1 to my own counter k + 1 (the chain token).
 *
 * Counter n_steps is the "done" counter: the barrier of a given epoch is
 * complete at this rank when it reaches epoch + 1.
 *
 * Counter discipline (why one counter per step, and why chain tokens):
 *  - One shared arrival counter is unsound. In a dissemination barrier a
 *    round-2 message may overtake the round-1 message; with one counter it
 *    satisfies round 1's threshold, the rank sends round 2 without having
 *    heard from its round-1 peer, and a downstream rank completes before
 *    every rank has entered (tests/unit/test_barrier.c shows it).
 *  - So every step has its own counter, which only the messages meant for
 *    that step increment (a distinct target counter per step: with RMA
 *    events, a distinct memory region bound to its own counter).
 *  - Triggered operations on different counters fire independently, so a
 *    step cannot otherwise know that the previous one has fired. Each step
 *    therefore also adds 1 to the next step's counter (FI_OP_CNTR_ADD
 *    deferred work, or a zero-byte write to self), and that token is part of
 *    the next step's count. Steps thus fire in order, like the paper's NIC.
 *  - Counters are cumulative across back-to-back barriers and never reset:
 *    per barrier, counter k receives exactly wait_count messages and tokens,
 *    so epoch e (0-based) waits for (e + 1) * wait_count. A fast peer's
 *    message for epoch e + 1 can arrive before its epoch-e message and be
 *    counted for epoch e; that is harmless, because the peer sent it after
 *    completing epoch e, so every rank's entry into epoch e is already in its
 *    causal past. Resetting counters between barriers would instead lose
 *    such early messages. No fi_cntr_set between barriers.
 *  - A step with wait_count 0 (the first step of a rank that waits for
 *    nobody) has threshold 0, already reached when armed: it fires at
 *    once, which is what fi_trigger(3) allows.
 *
 * Algorithms (n ranks, L = ceil(log2 n)):
 *  - DISSEMINATION: step m < L sends to (r + 2^m) mod n; step m + 1 waits
 *    for that round's arrival. L + 1 steps, n * L messages, L hops.
 *  - PAIRWISE: recursive doubling over the largest power of two m <= n; each
 *    of the n - m extra ranks x folds into rank x - m before (its step 0)
 *    and is released by it after (its step 1): log2(m) (+ 2 when n is not a
 *    power of two) hops, m * log2(m) + 2 * (n - m) messages.
 *  - GATHER: a tree of degree k rooted at 0 (children of r are r*k + 1 ..
 *    r*k + k): a rank sends to its parent once all its children arrived,
 *    then releases its children once its parent's release arrived.
 *    2 * (n - 1) messages, 2 * depth hops.
 *
 * Pure: no allocation, no I/O.
 */
#ifndef MRAIL_BARRIER_H
#define MRAIL_BARRIER_H

#include <stddef.h>
#include <stdint.h>

/* Largest group: log2 of it bounds the steps. */
#define MRAIL_BARRIER_MAX_N		65536u
/* Tree degrees accepted by GATHER: a step sends to at most this many. */
#define MRAIL_BARRIER_MIN_DEGREE	2u
#define MRAIL_BARRIER_MAX_DEGREE	32u
/* Dissemination at MAX_N: 16 rounds, 17 steps; pairwise: 17 steps. */
#define MRAIL_BARRIER_MAX_STEPS		17u
/* Steps plus the done counter. */
#define MRAIL_BARRIER_MAX_COUNTERS	(MRAIL_BARRIER_MAX_STEPS + 1)

enum mrail_barrier_alg {
	MRAIL_BARRIER_DISSEMINATION,
	MRAIL_BARRIER_PAIRWISE,
	MRAIL_BARRIER_GATHER,
};

struct mrail_barrier_send {
	uint32_t peer;		/* rank */
	uint32_t counter;	/* the peer's counter (its step) it increments */
};

struct mrail_barrier_step {
	/* Increments of this step's counter (arrivals plus the chain token
	 * from step k - 1) needed per barrier. */
	uint32_t wait_count;
	uint32_t n_sends;
	struct mrail_barrier_send sends[MRAIL_BARRIER_MAX_DEGREE];
};

struct mrail_barrier_schedule {
	enum mrail_barrier_alg alg;
	uint32_t rank;
	uint32_t n;
	uint32_t degree;	/* GATHER only; 0 otherwise */
	uint32_t n_steps;	/* >= 1; counter n_steps is the done counter */
	struct mrail_barrier_step steps[MRAIL_BARRIER_MAX_STEPS];
};

/* Whole-group figures of one barrier. */
struct mrail_barrier_cost {
	uint32_t max_steps;	/* most steps any rank has */
	uint64_t messages;	/* zero-byte messages sent by all ranks */
	uint32_t hops;		/* messages on the critical path */
};

/*
 * Fills sched with rank's schedule. degree is used by GATHER only and must be
 * MIN_DEGREE..MAX_DEGREE. Returns 0, or -EINVAL (n out of 1..MAX_N, rank >=
 * n, bad degree or algorithm) with a sentence in err.
 */
int mrail_barrier_schedule(enum mrail_barrier_alg alg, uint32_t degree,
			   uint32_t n, uint32_t rank,
			   struct mrail_barrier_schedule *sched,
			   char *err, size_t err_len);

/* The threshold at which step (or the done counter, step == n_steps) of the
 * 0-based barrier epoch is satisfied: (epoch + 1) * its count per barrier. */
uint64_t mrail_barrier_threshold(const struct mrail_barrier_schedule *sched,
				 uint32_t step, uint64_t epoch);

/* Number of counters a rank needs: n_steps + 1 (the done counter). */
static inline uint32_t
mrail_barrier_n_counters(const struct mrail_barrier_schedule *sched)
{
	return sched->n_steps + 1;
}

/* Closed-form cost of one barrier over n ranks; same errors as above. */
int mrail_barrier_cost(enum mrail_barrier_alg alg, uint32_t degree, uint32_t n,
		       struct mrail_barrier_cost *cost, char *err,
		       size_t err_len);

/*
 * Parses a FI_MRAIL_BARRIER value: "dissemination", "pairwise", "gather"
 * (degree 2) or "gather:K" (K in MIN_DEGREE..MAX_DEGREE). Case-sensitive.
 * degree is set to 0 for the first two. Returns 0 or -EINVAL with err.
 */
int mrail_barrier_parse(const char *name, enum mrail_barrier_alg *alg,
			uint32_t *degree, char *err, size_t err_len);

/* "dissemination", "pairwise", "gather" or "unknown". */
const char *mrail_barrier_alg_name(enum mrail_barrier_alg alg);

/* ceil(log2 n) for n >= 1. */
uint32_t mrail_barrier_ceil_log2(uint32_t n);

#endif /* MRAIL_BARRIER_H */
