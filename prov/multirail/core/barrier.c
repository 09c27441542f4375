/* SPDX-License-Identifier: BSD-2-Clause */
#include "barrier.h"
#include "mrail_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint32_t mrail_barrier_ceil_log2(uint32_t n)
{
	uint32_t l = 0;

	while (l < 32 && ((uint64_t) 1 << l) < n)
		l++;
	return l;
}

/* Largest power of two <= n, for n >= 1. */
static uint32_t floor_pow2(uint32_t n)
{
	uint32_t m = 1;

	while ((uint64_t) m * 2 <= n)
		m *= 2;
	return m;
}

const char *mrail_barrier_alg_name(enum mrail_barrier_alg alg)
{
	switch (alg) {
	case MRAIL_BARRIER_DISSEMINATION:
		return "dissemination";
	case MRAIL_BARRIER_PAIRWISE:
		return "pairwise";
	case MRAIL_BARRIER_GATHER:
		return "gather";
	}
	return "unknown";
}

static int check_args(enum mrail_barrier_alg alg, uint32_t degree, uint32_t n,
		      char *err, size_t err_len)
{
	if (alg != MRAIL_BARRIER_DISSEMINATION && alg != MRAIL_BARRIER_PAIRWISE &&
	    alg != MRAIL_BARRIER_GATHER) {
		mrail_write_err(err, err_len, "unknown barrier algorithm %d",
				(int) alg);
		return -EINVAL;
	}
	if (n < 1 || n > MRAIL_BARRIER_MAX_N) {
		mrail_write_err(err, err_len,
				"a barrier group has 1 to %u processes, not %u",
				MRAIL_BARRIER_MAX_N, n);
		return -EINVAL;
	}
	if (alg == MRAIL_BARRIER_GATHER &&
	    (degree < MRAIL_BARRIER_MIN_DEGREE ||
	     degree > MRAIL_BARRIER_MAX_DEGREE)) {
		mrail_write_err(err, err_len,
				"the gather tree degree is %u to %u, not %u",
				MRAIL_BARRIER_MIN_DEGREE,
				MRAIL_BARRIER_MAX_DEGREE, degree);
		return -EINVAL;
	}
	return 0;
}

static struct mrail_barrier_step *add_step(struct mrail_barrier_schedule *s,
					   uint32_t wait_count)
{
	struct mrail_barrier_step *step = &s->steps[s->n_steps++];

	step->wait_count = wait_count;
	step->n_sends = 0;
	return step;
}

static void add_send(struct mrail_barrier_step *step, uint32_t peer,
		     uint32_t counter)
{
	step->sends[step->n_sends].peer = peer;
	step->sends[step->n_sends].counter = counter;
	step->n_sends++;
}

/*
 * Step m < L sends round m to r + 2^m, whose step m + 1 counts it. Every
 * step after the first waits for its round's arrival and the chain token.
 */
static void dissemination(struct mrail_barrier_schedule *s)
{
	uint32_t l = mrail_barrier_ceil_log2(s->n), m;
	struct mrail_barrier_step *step;

	for (m = 0; m <= l; m++) {
		step = add_step(s, m ? 2 : 0);
		if (m < l)
			add_send(step, (uint32_t) (((uint64_t) s->rank +
						    ((uint64_t) 1 << m)) % s->n),
				 m + 1);
	}
}

/*
 * Core ranks (< pow2) exchange with r ^ 2^m at step m, counted by the
 * partner's step m + 1. Core rank r < n - pow2 first waits for its extra
 * rank's fold-in (its counter 0) and last releases it (the extra's counter
 * 1). Extra ranks: step 0 folds in, step 1 waits for the release.
 */
static void pairwise(struct mrail_barrier_schedule *s)
{
	uint32_t pow2 = floor_pow2(s->n), l = mrail_barrier_ceil_log2(pow2), m;
	uint32_t extras = s->n - pow2, r = s->rank;
	struct mrail_barrier_step *step;

	if (r >= pow2) {
		step = add_step(s, 0);
		add_send(step, r - pow2, 0);
		add_step(s, 2);
		return;
	}
	for (m = 0; m <= l; m++) {
		step = add_step(s, m ? 2 : (r < extras ? 1 : 0));
		if (m < l)
			add_send(step, r ^ (1u << m), m + 1);
		else if (r < extras)
			add_send(step, r + pow2, 1);
	}
}

/*
 * Counter 0 counts the children's gather messages; a non-root's counter 1
 * counts its parent's release plus the chain token.
 */
static void gather(struct mrail_barrier_schedule *s)
{
	uint64_t first = (uint64_t) s->rank * s->degree + 1, c;
	uint32_t n_children = 0;
	struct mrail_barrier_step *step;

	for (c = first; c < first + s->degree && c < s->n; c++)
		n_children++;
	step = add_step(s, n_children);
	if (s->rank) {
		add_send(step, (s->rank - 1) / s->degree, 0);
		step = add_step(s, 2);
	}
	for (c = first; c < first + n_children; c++)
		add_send(step, (uint32_t) c, 1);
}

int mrail_barrier_schedule(enum mrail_barrier_alg alg, uint32_t degree,
			   uint32_t n, uint32_t rank,
			   struct mrail_barrier_schedule *sched,
			   char *err, size_t err_len)
{
	int ret;

	ret = check_args(alg, degree, n, err, err_len);
	if (ret)
		return ret;
	if (rank >= n) {
		mrail_write_err(err, err_len,
				"rank %u is not in a barrier group of %u",
				rank, n);
		return -EINVAL;
	}
	memset(sched, 0, sizeof(*sched));
	sched->alg = alg;
	sched->rank = rank;
	sched->n = n;
	sched->degree = alg == MRAIL_BARRIER_GATHER ? degree : 0;
	switch (alg) {
	case MRAIL_BARRIER_DISSEMINATION:
		dissemination(sched);
		break;
	case MRAIL_BARRIER_PAIRWISE:
		pairwise(sched);
		break;
	case MRAIL_BARRIER_GATHER:
		gather(sched);
		break;
	}
	return 0;
}

uint64_t mrail_barrier_threshold(const struct mrail_barrier_schedule *sched,
				 uint32_t step, uint64_t epoch)
{
	/* The done counter gets one chain token per barrier. */
	uint64_t count = step < sched->n_steps ?
			 sched->steps[step].wait_count : 1;

	return (epoch + 1) * count;
}

int mrail_barrier_cost(enum mrail_barrier_alg alg, uint32_t degree, uint32_t n,
		       struct mrail_barrier_cost *cost, char *err,
		       size_t err_len)
{
	uint32_t l, pow2, depth;
	uint64_t level, reach;
	int ret;

	ret = check_args(alg, degree, n, err, err_len);
	if (ret)
		return ret;
	switch (alg) {
	case MRAIL_BARRIER_DISSEMINATION:
		l = mrail_barrier_ceil_log2(n);
		cost->max_steps = l + 1;
		cost->messages = (uint64_t) n * l;
		cost->hops = l;
		break;
	case MRAIL_BARRIER_PAIRWISE:
		pow2 = floor_pow2(n);
		l = mrail_barrier_ceil_log2(pow2);
		/* Core ranks have l + 1 >= 2 steps when there are extras. */
		cost->max_steps = l + 1;
		cost->messages = (uint64_t) pow2 * l + 2ull * (n - pow2);
		cost->hops = l + (pow2 == n ? 0 : 2);
		break;
	case MRAIL_BARRIER_GATHER:
		/* depth: levels below the root needed to hold n ranks. */
		depth = 0;
		level = 1;
		reach = 1;
		while (reach < n) {
			level *= degree;
			reach += level;
			depth++;
		}
		cost->max_steps = n > 1 ? 2 : 1;
		cost->messages = 2ull * (n - 1);
		cost->hops = 2 * depth;
		break;
	}
	return 0;
}

int mrail_barrier_parse(const char *name, enum mrail_barrier_alg *alg,
			uint32_t *degree, char *err, size_t err_len)
{
	const char *arg;
	unsigned long k;
	char *end;

	if (!name || !*name) {
		mrail_write_err(err, err_len,
				"FI_MRAIL_BARRIER is empty: use dissemination, pairwise, gather or gather:K");
		return -EINVAL;
	}
	if (!strcmp(name, "dissemination") || !strcmp(name, "pairwise")) {
		*alg = name[0] == 'd' ? MRAIL_BARRIER_DISSEMINATION :
					MRAIL_BARRIER_PAIRWISE;
		*degree = 0;
		return 0;
	}
	if (!strcmp(name, "gather")) {
		*alg = MRAIL_BARRIER_GATHER;
		*degree = MRAIL_BARRIER_MIN_DEGREE;
		return 0;
	}
	if (!strncmp(name, "gather:", 7)) {
		arg = name + 7;
		errno = 0;
		k = *arg >= '0' && *arg <= '9' ? strtoul(arg, &end, 10) : 0;
		if (!k || errno || *end || k < MRAIL_BARRIER_MIN_DEGREE ||
		    k > MRAIL_BARRIER_MAX_DEGREE) {
			mrail_write_err(err, err_len,
					"FI_MRAIL_BARRIER=%s: the gather tree degree is a number from %u to %u (as in gather:4)",
					name, MRAIL_BARRIER_MIN_DEGREE,
					MRAIL_BARRIER_MAX_DEGREE);
			return -EINVAL;
		}
		*alg = MRAIL_BARRIER_GATHER;
		*degree = (uint32_t) k;
		return 0;
	}
	mrail_write_err(err, err_len,
			"FI_MRAIL_BARRIER=%s is not a barrier algorithm: use dissemination, pairwise, gather or gather:K (K from %u to %u)",
			name, MRAIL_BARRIER_MIN_DEGREE, MRAIL_BARRIER_MAX_DEGREE);
	return -EINVAL;
}
