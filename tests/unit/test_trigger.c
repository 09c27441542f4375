/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/trigger.c, the FI_TRIGGER_THRESHOLD queue of
 * fi_trigger(3): threshold order (also when the counter jumps), posting
 * order for equal thresholds, exactly once, cancel, thresholds reached when
 * armed, a counter set back down, and a randomized comparison against a
 * brute-force reference.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <utlist.h>

#include "test_rng.h"

#include "trigger.h"

#define N_OPS 8

static struct mrail_trig_queue q;
static struct mrail_trig_op ops[N_OPS];

static void setup(void)
{
	memset(ops, 0, sizeof(ops));
	mrail_trig_queue_init(&q, 0);
}

static int idx(const struct mrail_trig_op *op)
{
	return op ? (int) (op - ops) : -1;
}

/* Pops everything ready and checks it is exactly want[], in order. */
static void expect_fire(const int *want, size_t n_want)
{
	struct mrail_trig_op *op;
	size_t i;

	for (i = 0; i < n_want; i++) {
		op = mrail_trig_pop_ready(&q);
		cr_assert_eq(idx(op), want[i], "firing %zu: op %d, expected %d",
			     i, idx(op), want[i]);
		cr_assert_eq(op->state, MRAIL_TRIG_FIRED);
	}
	cr_assert_null(mrail_trig_pop_ready(&q), "an extra op fired");
}

TestSuite(trigger, .init = setup);

Test(trigger, threshold_then_posting_order)
{
	static const uint64_t thr[] = { 5, 3, 3, 1, 4 };
	static const int order[] = { 3, 1, 2, 4, 0 };
	size_t i;

	for (i = 0; i < 5; i++)
		cr_assert_eq(mrail_trig_arm(&q, &ops[i], thr[i]), 0);
	cr_assert_eq(q.pending, 5);
	expect_fire(NULL, 0);
	mrail_trig_set_value(&q, 10);
	expect_fire(order, 5);
	cr_assert_eq(q.pending, 0);
}

Test(trigger, counter_jumps)
{
	static const int first[] = { 3 }, second[] = { 1, 2, 4 }, last[] = { 0 };

	mrail_trig_arm(&q, &ops[0], 5);
	mrail_trig_arm(&q, &ops[1], 3);
	mrail_trig_arm(&q, &ops[2], 3);
	mrail_trig_arm(&q, &ops[3], 1);
	mrail_trig_arm(&q, &ops[4], 4);
	mrail_trig_set_value(&q, 2);
	expect_fire(first, 1);
	mrail_trig_set_value(&q, 4);
	expect_fire(second, 3);
	mrail_trig_set_value(&q, 4);
	expect_fire(NULL, 0);
	mrail_trig_set_value(&q, 1000);
	expect_fire(last, 1);
}

Test(trigger, exactly_once)
{
	mrail_trig_arm(&q, &ops[0], 2);
	mrail_trig_set_value(&q, 2);
	cr_assert_eq(idx(mrail_trig_pop_ready(&q)), 0);
	mrail_trig_set_value(&q, 3);
	expect_fire(NULL, 0);
	mrail_trig_set_value(&q, 0);
	mrail_trig_set_value(&q, 2);
	expect_fire(NULL, 0);
	cr_assert_eq(mrail_trig_cancel(&q, &ops[0]), -ENOENT);
	/* Pending twice is refused; re-arming after firing is a new op. */
	cr_assert_eq(mrail_trig_arm(&q, &ops[1], 9), 0);
	cr_assert_eq(mrail_trig_arm(&q, &ops[1], 9), -EBUSY);
	cr_assert_eq(q.pending, 1);
	cr_assert_eq(mrail_trig_arm(&q, &ops[0], 2), 1);
	cr_assert_eq(idx(mrail_trig_pop_ready(&q)), 0);
	expect_fire(NULL, 0);
}

Test(trigger, reached_when_armed)
{
	static const int first[] = { 0 }, both[] = { 1, 2 };

	mrail_trig_set_value(&q, 7);
	cr_assert_eq(mrail_trig_arm(&q, &ops[0], 7), 1);
	expect_fire(first, 1);
	cr_assert_eq(mrail_trig_arm(&q, &ops[1], 0), 1);
	cr_assert_eq(mrail_trig_arm(&q, &ops[3], 8), 0);
	cr_assert_eq(mrail_trig_arm(&q, &ops[2], 3), 1);
	expect_fire(both, 2);
	cr_assert_eq(q.pending, 1);
	cr_assert_eq(ops[3].state, MRAIL_TRIG_PENDING);
}

Test(trigger, cancel)
{
	static const int rest[] = { 0, 2 };
	struct mrail_trig_queue other;

	mrail_trig_queue_init(&other, 0);
	mrail_trig_arm(&q, &ops[0], 1);
	mrail_trig_arm(&q, &ops[1], 2);
	mrail_trig_arm(&q, &ops[2], 3);
	cr_assert_eq(mrail_trig_cancel(&other, &ops[1]), -ENOENT);
	cr_assert_eq(mrail_trig_cancel(&q, &ops[1]), 0);
	cr_assert_eq(ops[1].state, MRAIL_TRIG_CANCELLED);
	cr_assert_eq(mrail_trig_cancel(&q, &ops[1]), -ENOENT);
	cr_assert_eq(mrail_trig_cancel(&q, &ops[5]), -ENOENT);
	cr_assert_eq(q.pending, 2);
	mrail_trig_set_value(&q, 3);
	expect_fire(rest, 2);
	/* Head and tail cancellation keep the list whole. */
	mrail_trig_arm(&q, &ops[3], 10);
	mrail_trig_arm(&q, &ops[4], 11);
	mrail_trig_arm(&q, &ops[5], 12);
	cr_assert_eq(mrail_trig_cancel(&q, &ops[3]), 0);
	cr_assert_eq(mrail_trig_cancel(&q, &ops[5]), 0);
	mrail_trig_set_value(&q, 12);
	cr_assert_eq(idx(mrail_trig_pop_ready(&q)), 4);
	expect_fire(NULL, 0);
}

Test(trigger, counter_set_down)
{
	static const int one[] = { 0 };

	mrail_trig_set_value(&q, 10);
	mrail_trig_set_value(&q, 2);
	cr_assert_eq(mrail_trig_arm(&q, &ops[0], 5), 0);
	expect_fire(NULL, 0);
	mrail_trig_set_value(&q, 5);
	expect_fire(one, 1);
}

Test(trigger, take_ready_list)
{
	struct mrail_trig_op *ready = NULL, *op;
	static const int want[] = { 2, 0, 1 };
	uint64_t t;
	size_t i = 0;

	cr_assert_eq(mrail_trig_next_threshold(&q, &t), -ENOENT);
	mrail_trig_arm(&q, &ops[0], 4);
	mrail_trig_arm(&q, &ops[1], 4);
	mrail_trig_arm(&q, &ops[2], 2);
	mrail_trig_arm(&q, &ops[3], 6);
	cr_assert_eq(mrail_trig_next_threshold(&q, &t), 0);
	cr_assert_eq(t, 2);
	cr_assert_eq(mrail_trig_take_ready(&q, 1, &ready), 0);
	cr_assert_null(ready);
	cr_assert_eq(mrail_trig_take_ready(&q, 5, &ready), 3);
	DL_FOREACH(ready, op) {
		cr_assert_eq(idx(op), want[i]);
		i++;
	}
	cr_assert_eq(i, 3);
	cr_assert_eq(mrail_trig_next_threshold(&q, &t), 0);
	cr_assert_eq(t, 6);
}

/*
 * Random arms, cancels and counter moves on 64 ops, checked against a
 * reference that scans every op for the lowest (threshold, posting) pair.
 */
Test(trigger, random_against_reference)
{
	enum { N = 64, ROUNDS = 20000 };
	static struct mrail_trig_op op[N];
	bool ref_pending[N] = { false };
	uint64_t ref_seq[N] = { 0 }, ref_thr[N] = { 0 }, value = 0, seq = 0;
	uint64_t rng = 0x2545f4914f6cdd1dull, fired = 0;
	struct mrail_trig_op *got;
	int i, best, round, ret;

	memset(op, 0, sizeof(op));
	for (round = 0; round < ROUNDS; round++) {
		i = (int) test_rng_below(&rng, N);
		switch (test_rng_below(&rng, 4)) {
		case 0:
		case 1:
			ret = mrail_trig_arm(&q, &op[i],
					     value + test_rng_below(&rng, 8) - 2 *
					     (value >= 2));
			if (ref_pending[i]) {
				cr_assert_eq(ret, -EBUSY);
				break;
			}
			cr_assert_eq(ret, op[i].threshold <= value);
			ref_pending[i] = true;
			ref_thr[i] = op[i].threshold;
			ref_seq[i] = seq++;
			break;
		case 2:
			ret = mrail_trig_cancel(&q, &op[i]);
			cr_assert_eq(ret, ref_pending[i] ? 0 : -ENOENT);
			ref_pending[i] = false;
			break;
		default:
			value += test_rng_below(&rng, 3);
			mrail_trig_set_value(&q, value);
			break;
		}
		/* Drain; the reference names each op in turn. */
		for (;;) {
			best = -1;
			for (i = 0; i < N; i++)
				if (ref_pending[i] && ref_thr[i] <= value &&
				    (best < 0 || ref_thr[i] < ref_thr[best] ||
				     (ref_thr[i] == ref_thr[best] &&
				      ref_seq[i] < ref_seq[best])))
					best = i;
			got = mrail_trig_pop_ready(&q);
			cr_assert_eq(got ? (int) (got - op) : -1, best,
				     "round %d: fired %d, reference %d", round,
				     got ? (int) (got - op) : -1, best);
			if (best < 0)
				break;
			ref_pending[best] = false;
			fired++;
		}
	}
	cr_assert_gt(fired, ROUNDS / 4);
}
