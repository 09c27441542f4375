/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/barrier.c. The heart is a discrete-event simulator of
 * n processes (n = 1..64) running the schedules exactly as counter-triggered
 * operations would, through core/trigger.c's queues (one per counter): at
 * entry a process arms every step of the barrier on its counter and
 * threshold; a step fires when its counter reaches the threshold (sends,
 * then the chain token to the next counter); an arrival increments the
 * receiver's counter. Messages are delivered in an order
 * drawn from a fixed-seed generator (any delay), one process enters late,
 * and two barriers run back to back, the others re-entering at once.
 *
 * Causality is tracked with one bit per process and barrier: a message
 * carries everything its sender knows. A process may complete barrier e only
 * when every process's entry into e is in its causal past, and (directly)
 * not before the late process has entered. The dissemination and pairwise
 * runs must meet a fast peer's second-barrier message overtaking its first
 * (counted in overtakes), so the cumulative thresholds are really tested.
 *
 * The same simulator runs the two counter disciplines barrier.h rejects
 * (one shared arrival counter; per-step counters without chain tokens) and
 * must catch processes leaving early, which shows it can fail.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "barrier.h"
#include "trigger.h"

#define SIM_MAX_N	64
#define SIM_EPOCHS	2
#define SIM_MAX_EVENTS	(SIM_MAX_N * SIM_EPOCHS * 2 * MRAIL_BARRIER_MAX_DEGREE)

struct sim_event {
	bool entry;		/* else a message */
	uint32_t to;
	uint32_t counter;	/* physical counter at to */
	uint32_t epoch;		/* barrier the sender was in */
	uint64_t known[SIM_EPOCHS];
};

/* A triggered operation: step k of barrier e, in core/trigger.c's queue. */
struct sim_op {
	struct mrail_trig_op trig;	/* first: the queue hands this back */
	uint32_t step;
	uint32_t epoch;
};

struct sim_proc {
	struct mrail_barrier_schedule sched;
	uint64_t counter[MRAIL_BARRIER_MAX_COUNTERS];
	/* One pending-operation queue per counter, as the provider will. */
	struct mrail_trig_queue queue[MRAIL_BARRIER_MAX_COUNTERS];
	struct sim_op op[MRAIL_BARRIER_MAX_COUNTERS][SIM_EPOCHS];
	uint32_t fired[MRAIL_BARRIER_MAX_COUNTERS];
	uint64_t known[SIM_EPOCHS];
	uint32_t epoch;		/* barrier it is in; SIM_EPOCHS when done */
	uint32_t completed;
};

struct sim_result {
	uint32_t completions;
	uint32_t early;		/* completed without every entry in its past */
	uint32_t before_late;	/* completed before the late process entered */
	uint64_t messages;
	/* Second-barrier messages that reached a step still waiting in the
	 * first barrier: the fast-peer case the counters must get right. */
	uint32_t overtakes;
	bool deadlock;
	bool overflow;
};

struct sim {
	uint32_t n;
	/* The unsound discipline barrier.h rejects: one arrival counter. */
	bool shared;
	/* Also rejected: steps armed independently, with no chain token. */
	bool no_chain;
	uint32_t late;		/* SIM_MAX_N: nobody */
	bool late_entered;
	bool late_entry_queued;
	uint64_t rng;
	struct sim_proc proc[SIM_MAX_N];
	struct sim_event ev[SIM_MAX_EVENTS];
	uint32_t n_ev;
	struct sim_result res;
};

static uint64_t all_mask(uint32_t n)
{
	return n == 64 ? ~0ull : (1ull << n) - 1;
}

static uint32_t phys(const struct sim *s, uint32_t k)
{
	return s->shared ? 0 : k;
}

/* Shared discipline: cumulative thresholds over every step on counter 0. */
static uint64_t threshold(const struct sim *s, const struct sim_proc *p,
			  uint32_t k, uint32_t e)
{
	uint64_t total = 0, prefix = 0;
	uint32_t j;

	if (s->no_chain && k && k < p->sched.n_steps)
		return (uint64_t) (e + 1) * (p->sched.steps[k].wait_count - 1);
	if (!s->shared)
		return mrail_barrier_threshold(&p->sched, k, e);
	for (j = 0; j <= p->sched.n_steps; j++) {
		uint64_t c = j < p->sched.n_steps ?
			     p->sched.steps[j].wait_count : 1;

		total += c;
		if (j <= k)
			prefix += c;
	}
	return e * total + prefix;
}

static void push(struct sim *s, const struct sim_event *ev)
{
	if (s->n_ev == SIM_MAX_EVENTS) {
		s->res.overflow = true;
		return;
	}
	s->ev[s->n_ev++] = *ev;
}

static void enter(struct sim *s, uint32_t r);
static void bump(struct sim *s, uint32_t r, uint32_t c);

static void complete(struct sim *s, uint32_t r, uint32_t e)
{
	struct sim_proc *p = &s->proc[r];
	struct sim_event ev = { .entry = true, .to = r };

	s->res.completions++;
	if (p->known[e] != all_mask(s->n))
		s->res.early++;
	if (!s->late_entered)
		s->res.before_late++;
	p->completed++;
	p->epoch = e + 1;
	if (p->epoch == SIM_EPOCHS)
		return;
	/* Everyone but the late process is fast: straight into the next. */
	if (r == s->late)
		push(s, &ev);
	else
		enter(s, r);
}

/* Issues every operation the queue of counter c says must fire now. */
static void drain(struct sim *s, uint32_t r, uint32_t c)
{
	struct sim_proc *p = &s->proc[r];
	struct mrail_barrier_step *step;
	struct mrail_trig_op *trig;
	struct sim_event ev;
	uint32_t e, i, k;

	while ((trig = mrail_trig_pop_ready(&p->queue[c]))) {
		k = ((struct sim_op *) trig)->step;
		e = ((struct sim_op *) trig)->epoch;
		p->fired[k]++;
		if (k == p->sched.n_steps) {
			complete(s, r, e);
			continue;
		}
		step = &p->sched.steps[k];
		for (i = 0; i < step->n_sends; i++) {
			memset(&ev, 0, sizeof(ev));
			ev.to = step->sends[i].peer;
			ev.counter = phys(s, step->sends[i].counter);
			ev.epoch = e;
			memcpy(ev.known, p->known, sizeof(ev.known));
			push(s, &ev);
			s->res.messages++;
		}
		/* Without chain tokens only the done counter still learns
		 * that the last step fired. */
		if (!s->no_chain || k + 1 == p->sched.n_steps)
			bump(s, r, phys(s, k + 1));
	}
}

/* Counter c of r moved: the operations armed on it may fire. */
static void bump(struct sim *s, uint32_t r, uint32_t c)
{
	struct sim_proc *p = &s->proc[r];

	p->counter[c]++;
	mrail_trig_set_value(&p->queue[c], p->counter[c]);
	drain(s, r, c);
}

static void enter(struct sim *s, uint32_t r)
{
	struct sim_proc *p = &s->proc[r];
	uint32_t e = p->epoch, k;

	if (r == s->late)
		s->late_entered = true;
	p->known[e] |= 1ull << r;
	/* fi_barrier arms the whole chain at once. */
	for (k = 0; k <= p->sched.n_steps; k++) {
		p->op[k][e].step = k;
		p->op[k][e].epoch = e;
		cr_assert_geq(mrail_trig_arm(&p->queue[phys(s, k)],
					     &p->op[k][e].trig,
					     threshold(s, p, k, e)), 0);
	}
	for (k = 0; k <= p->sched.n_steps; k++)
		drain(s, r, k);
}

static void deliver(struct sim *s, const struct sim_event *ev)
{
	struct sim_proc *p = &s->proc[ev->to];
	uint32_t e;

	if (ev->entry) {
		enter(s, ev->to);
		return;
	}
	if (ev->epoch > 0 && !p->fired[ev->counter])
		s->res.overtakes++;
	for (e = 0; e < SIM_EPOCHS; e++)
		p->known[e] |= ev->known[e];
	bump(s, ev->to, ev->counter);
}

static void sim_run(struct sim *s, enum mrail_barrier_alg alg, uint32_t degree,
		    uint32_t n, uint32_t late, uint64_t seed)
{
	struct sim_event ev;
	uint32_t r, i;
	char err[128];

	memset(&s->res, 0, sizeof(s->res));
	memset(s->proc, 0, sizeof(s->proc));
	s->n = n;
	s->late = late;
	s->late_entered = late >= n;
	s->late_entry_queued = false;
	s->rng = seed;
	s->n_ev = 0;
	for (r = 0; r < n; r++) {
		for (i = 0; i < MRAIL_BARRIER_MAX_COUNTERS; i++)
			mrail_trig_queue_init(&s->proc[r].queue[i], 0);
		cr_assert_eq(mrail_barrier_schedule(alg, degree, n, r,
						    &s->proc[r].sched, err,
						    sizeof(err)), 0, "%s", err);
		if (r != late) {
			ev = (struct sim_event) { .entry = true, .to = r };
			push(s, &ev);
		}
	}
	for (;;) {
		if (!s->n_ev) {
			/* The late process enters once nothing else can move. */
			if (late < n && !s->late_entry_queued) {
				s->late_entry_queued = true;
				ev = (struct sim_event) { .entry = true, .to = late };
				push(s, &ev);
				continue;
			}
			break;
		}
		i = (uint32_t) test_rng_below(&s->rng, s->n_ev);
		ev = s->ev[i];
		s->ev[i] = s->ev[--s->n_ev];
		deliver(s, &ev);
	}
	s->res.deadlock = s->res.completions != n * SIM_EPOCHS;
}

static struct sim sim;

static void check_alg(enum mrail_barrier_alg alg, uint32_t degree,
		      uint32_t seeds)
{
	struct mrail_barrier_cost cost;
	struct sim_proc *p;
	uint32_t n, seed, k, r, overtakes = 0;
	char err[128];

	for (n = 1; n <= SIM_MAX_N; n++) {
		cr_assert_eq(mrail_barrier_cost(alg, degree, n, &cost, err,
						sizeof(err)), 0, "%s", err);
		for (seed = 0; seed < seeds; seed++) {
			sim.shared = false;
			sim.no_chain = false;
			/* Seed 0: nobody late; otherwise a rotating latecomer. */
			sim_run(&sim, alg, degree, n,
				seed ? (seed * 7 + n) % n : SIM_MAX_N,
				0x9e3779b97f4a7c15ull * (n * 131 + seed + 1));
			cr_assert(!sim.res.overflow);
			overtakes += sim.res.overtakes;
			cr_assert(!sim.res.deadlock,
				  "%s/%u n=%u seed %u: %u of %u completions",
				  mrail_barrier_alg_name(alg), degree, n, seed,
				  sim.res.completions, n * SIM_EPOCHS);
			cr_assert_eq(sim.res.early, 0,
				     "%s/%u n=%u seed %u: left before all entered",
				     mrail_barrier_alg_name(alg), degree, n,
				     seed);
			cr_assert_eq(sim.res.before_late, 0,
				     "%s/%u n=%u seed %u: left before the late one entered",
				     mrail_barrier_alg_name(alg), degree, n,
				     seed);
			cr_assert_eq(sim.res.messages,
				     SIM_EPOCHS * cost.messages,
				     "%s/%u n=%u: %llu messages, formula %llu",
				     mrail_barrier_alg_name(alg), degree, n,
				     (unsigned long long) sim.res.messages,
				     (unsigned long long) (SIM_EPOCHS *
							   cost.messages));
			/* Every step fired once per barrier, every counter
			 * got exactly its count: nothing left over to
			 * confuse a third barrier. */
			for (r = 0; r < n; r++) {
				p = &sim.proc[r];
				cr_assert_eq(p->completed, SIM_EPOCHS);
				cr_assert_leq(p->sched.n_steps, cost.max_steps);
				for (k = 0; k <= p->sched.n_steps; k++) {
					cr_assert_eq(p->fired[k], SIM_EPOCHS);
					cr_assert_eq(p->queue[k].pending, 0);
					cr_assert_eq(p->op[k][0].trig.state,
						     MRAIL_TRIG_FIRED);
					cr_assert_eq(p->counter[k],
						     mrail_barrier_threshold(&p->sched, k,
									     SIM_EPOCHS - 1));
				}
			}
		}
	}
	/*
	 * In a tree nobody enters the next barrier before its parent's release,
	 * which needs this barrier's whole gather: no message can overtake. The
	 * other two must have met the case, or the test proved nothing.
	 */
	if (alg == MRAIL_BARRIER_GATHER)
		cr_assert_eq(overtakes, 0);
	else
		cr_assert_gt(overtakes, 0, "%s: no fast peer's next-barrier message ever overtook",
			     mrail_barrier_alg_name(alg));
}

Test(barrier_sim, dissemination)
{
	check_alg(MRAIL_BARRIER_DISSEMINATION, 0, 6);
}

Test(barrier_sim, pairwise)
{
	check_alg(MRAIL_BARRIER_PAIRWISE, 0, 6);
}

Test(barrier_sim, gather_degrees)
{
	static const uint32_t degrees[] = { 2, 3, 4, 7, 32 };
	size_t i;

	for (i = 0; i < sizeof(degrees) / sizeof(degrees[0]); i++)
		check_alg(MRAIL_BARRIER_GATHER, degrees[i], 6);
}

/*
 * The discipline barrier.h rejects: all arrivals on one cumulative counter.
 * The same simulator must catch a process leaving early, which shows it can
 * fail (and why the schedules use one counter per step).
 */
Test(barrier_sim, shared_counter_is_unsound)
{
	uint32_t n, seed, bad = 0;

	for (n = 3; n <= 16; n++) {
		for (seed = 1; seed <= 20; seed++) {
			sim.shared = true;
			sim.no_chain = false;
			sim_run(&sim, MRAIL_BARRIER_DISSEMINATION, 0, n,
				seed % n, seed * 1000003ull + n);
			bad += sim.res.early;
		}
	}
	sim.shared = false;
	cr_assert_gt(bad, 0, "one shared counter never left early: the simulator sees nothing");
}

/* Per-step counters but no chain token: a later round's arrival fires its
 * step before the earlier step did, and someone leaves early. */
Test(barrier_sim, unchained_steps_are_unsound)
{
	uint32_t n, seed, bad = 0;

	for (n = 3; n <= 16; n++) {
		for (seed = 1; seed <= 20; seed++) {
			sim.shared = false;
			sim.no_chain = true;
			sim_run(&sim, MRAIL_BARRIER_DISSEMINATION, 0, n,
				seed % n, seed * 1000003ull + n);
			bad += sim.res.early;
		}
	}
	sim.no_chain = false;
	cr_assert_gt(bad, 0, "unchained steps never left early: the simulator sees nothing");
}

static void expect_send(const struct mrail_barrier_step *step, uint32_t i,
			uint32_t peer, uint32_t counter)
{
	cr_assert_gt(step->n_sends, i);
	cr_assert_eq(step->sends[i].peer, peer);
	cr_assert_eq(step->sends[i].counter, counter);
}

Test(barrier, dissemination_shape)
{
	struct mrail_barrier_schedule s;

	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_DISSEMINATION, 0, 5,
					    3, &s, NULL, 0), 0);
	cr_assert_eq(s.n_steps, 4);	/* 3 rounds + the final wait */
	cr_assert_eq(s.steps[0].wait_count, 0);
	expect_send(&s.steps[0], 0, 4, 1);
	cr_assert_eq(s.steps[1].wait_count, 2);
	expect_send(&s.steps[1], 0, 0, 2);
	expect_send(&s.steps[2], 0, 2, 3);
	cr_assert_eq(s.steps[3].n_sends, 0);
	cr_assert_eq(s.steps[3].wait_count, 2);
	cr_assert_eq(mrail_barrier_threshold(&s, 0, 5), 0);
	cr_assert_eq(mrail_barrier_threshold(&s, 2, 0), 2);
	cr_assert_eq(mrail_barrier_threshold(&s, 2, 1), 4);
	cr_assert_eq(mrail_barrier_threshold(&s, 4, 2), 3);	/* done */
	cr_assert_eq(mrail_barrier_n_counters(&s), 5);
}

Test(barrier, pairwise_shape)
{
	struct mrail_barrier_schedule s;

	/* n = 6: core 0..3, extras 4 and 5 fold into 0 and 1. */
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_PAIRWISE, 0, 6, 1,
					    &s, NULL, 0), 0);
	cr_assert_eq(s.n_steps, 3);
	cr_assert_eq(s.steps[0].wait_count, 1);	/* fold-in from 5 */
	expect_send(&s.steps[0], 0, 0, 1);
	expect_send(&s.steps[1], 0, 3, 2);
	expect_send(&s.steps[2], 0, 5, 1);	/* release */
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_PAIRWISE, 0, 6, 3,
					    &s, NULL, 0), 0);
	cr_assert_eq(s.steps[0].wait_count, 0);
	cr_assert_eq(s.steps[2].n_sends, 0);
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_PAIRWISE, 0, 6, 5,
					    &s, NULL, 0), 0);
	cr_assert_eq(s.n_steps, 2);
	expect_send(&s.steps[0], 0, 1, 0);
	cr_assert_eq(s.steps[1].wait_count, 2);
	cr_assert_eq(s.steps[1].n_sends, 0);
}

Test(barrier, gather_shape)
{
	struct mrail_barrier_schedule s;

	/* degree 3, n = 6: 0 -> {1,2,3}, 1 -> {4,5}. */
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_GATHER, 3, 6, 0, &s,
					    NULL, 0), 0);
	cr_assert_eq(s.n_steps, 1);
	cr_assert_eq(s.steps[0].wait_count, 3);
	cr_assert_eq(s.steps[0].n_sends, 3);
	expect_send(&s.steps[0], 2, 3, 1);
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_GATHER, 3, 6, 1, &s,
					    NULL, 0), 0);
	cr_assert_eq(s.n_steps, 2);
	cr_assert_eq(s.steps[0].wait_count, 2);
	expect_send(&s.steps[0], 0, 0, 0);
	cr_assert_eq(s.steps[1].n_sends, 2);
	expect_send(&s.steps[1], 1, 5, 1);
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_GATHER, 3, 6, 5, &s,
					    NULL, 0), 0);
	cr_assert_eq(s.steps[0].wait_count, 0);
	expect_send(&s.steps[0], 0, 1, 0);
	cr_assert_eq(s.steps[1].n_sends, 0);
}

Test(barrier, cost_formulas)
{
	struct mrail_barrier_cost c;

	cr_assert_eq(mrail_barrier_cost(MRAIL_BARRIER_DISSEMINATION, 0, 1000,
					&c, NULL, 0), 0);
	cr_assert_eq(c.messages, 10000);
	cr_assert_eq(c.hops, 10);
	cr_assert_eq(mrail_barrier_cost(MRAIL_BARRIER_PAIRWISE, 0, 12, &c,
					NULL, 0), 0);
	cr_assert_eq(c.messages, 8 * 3 + 2 * 4);
	cr_assert_eq(c.hops, 3 + 2);
	cr_assert_eq(mrail_barrier_cost(MRAIL_BARRIER_PAIRWISE, 0, 16, &c,
					NULL, 0), 0);
	cr_assert_eq(c.hops, 4);
	cr_assert_eq(mrail_barrier_cost(MRAIL_BARRIER_GATHER, 2, 7, &c, NULL,
					0), 0);
	cr_assert_eq(c.messages, 12);
	cr_assert_eq(c.hops, 4);
	cr_assert_eq(mrail_barrier_cost(MRAIL_BARRIER_GATHER, 2, 8, &c, NULL,
					0), 0);
	cr_assert_eq(c.hops, 6);
	cr_assert_eq(mrail_barrier_cost(MRAIL_BARRIER_DISSEMINATION, 0, 1, &c,
					NULL, 0), 0);
	cr_assert_eq(c.messages, 0);
	cr_assert_eq(c.max_steps, 1);
}

Test(barrier, limits)
{
	struct mrail_barrier_schedule s;
	struct mrail_barrier_cost c;
	char err[160];
	enum mrail_barrier_alg a;
	uint32_t r;

	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_DISSEMINATION, 0, 0,
					    0, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "1 to 65536"), "%s", err);
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_PAIRWISE, 0, 4, 4,
					    &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "rank 4"), "%s", err);
	cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_GATHER, 1, 4, 0, &s,
					    err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "degree"), "%s", err);
	cr_assert_eq(mrail_barrier_cost(MRAIL_BARRIER_GATHER, 33, 4, &c, err,
					sizeof(err)), -EINVAL);
	a = (enum mrail_barrier_alg) 9;
	cr_assert_eq(mrail_barrier_cost(a, 2, 4, &c, err, sizeof(err)),
		     -EINVAL);
	/* The largest group fits the fixed arrays. */
	for (r = 0; r < 4; r++) {
		cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_DISSEMINATION,
						    0, MRAIL_BARRIER_MAX_N, r,
						    &s, NULL, 0), 0);
		cr_assert_eq(s.n_steps, 17);
		cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_PAIRWISE, 0,
						    MRAIL_BARRIER_MAX_N - 1,
						    MRAIL_BARRIER_MAX_N - 2 - r,
						    &s, NULL, 0), 0);
		cr_assert_eq(mrail_barrier_schedule(MRAIL_BARRIER_GATHER, 32,
						    MRAIL_BARRIER_MAX_N, r, &s,
						    NULL, 0), 0);
		cr_assert_eq(s.steps[s.n_steps - 1].n_sends, 32);
	}
	cr_assert_eq(mrail_barrier_ceil_log2(1), 0);
	cr_assert_eq(mrail_barrier_ceil_log2(5), 3);
	cr_assert_eq(mrail_barrier_ceil_log2(65536), 16);
}

Test(barrier, parse)
{
	enum mrail_barrier_alg a;
	uint32_t k = 99;
	char err[200];

	cr_assert_eq(mrail_barrier_parse("dissemination", &a, &k, err,
					 sizeof(err)), 0);
	cr_assert_eq(a, MRAIL_BARRIER_DISSEMINATION);
	cr_assert_eq(k, 0);
	cr_assert_eq(mrail_barrier_parse("pairwise", &a, &k, err,
					 sizeof(err)), 0);
	cr_assert_eq(a, MRAIL_BARRIER_PAIRWISE);
	cr_assert_eq(mrail_barrier_parse("gather", &a, &k, err, sizeof(err)),
		     0);
	cr_assert_eq(a, MRAIL_BARRIER_GATHER);
	cr_assert_eq(k, 2);
	cr_assert_eq(mrail_barrier_parse("gather:8", &a, &k, err,
					 sizeof(err)), 0);
	cr_assert_eq(k, 8);
	cr_assert_eq(mrail_barrier_parse("gather:1", &a, &k, err,
					 sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "2 to 32"), "%s", err);
	cr_assert_eq(mrail_barrier_parse("gather:", &a, &k, err,
					 sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_barrier_parse("gather:4x", &a, &k, err,
					 sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_barrier_parse("gather:-4", &a, &k, err,
					 sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_barrier_parse("tree", &a, &k, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "FI_MRAIL_BARRIER=tree"), "%s", err);
	cr_assert_eq(mrail_barrier_parse("", &a, &k, err, sizeof(err)),
		     -EINVAL);
	cr_assert_eq(mrail_barrier_parse(NULL, &a, &k, err, sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(mrail_barrier_alg_name(MRAIL_BARRIER_GATHER),
			 "gather");
}
