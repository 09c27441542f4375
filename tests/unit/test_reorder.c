/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/reorder.c: arrivals in every order a small window
 * allows, long random streams checked against an independent count of what
 * must have been delivered, duplicates, the window's edges and a stream
 * that runs past UINT64_MAX.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "reorder.h"

/* Items are addresses inside this array, so an item tells its sequence. */
#define ITEM_POOL 10000
static char item_pool[ITEM_POOL];

static void *item_of(uint64_t index)
{
	cr_assert_lt(index, ITEM_POOL);
	return &item_pool[index];
}

static uint64_t index_of(void *item)
{
	cr_assert_not_null(item);
	return (uint64_t) ((char *) item - item_pool);
}

/* Fixed-seed xorshift64: the same "random" streams on every run. */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

static size_t rng_below(size_t bound)
{
	return (size_t) test_rng_below(&rng_state, bound);
}

/* Pops everything now deliverable into out[]; returns how many. */
static size_t pop_ready(struct mrail_reorder *r, uint64_t *out, size_t room)
{
	size_t count = 0;
	void *item;

	while ((item = mrail_reorder_pop(r))) {
		cr_assert_lt(count, room);
		out[count++] = index_of(item);
	}
	return count;
}

static void init_ok(struct mrail_reorder *r, size_t window)
{
	cr_assert_eq(mrail_reorder_init(r, window), 0, "init window %zu",
		     window);
	cr_assert_eq(r->next, 0);
	cr_assert_eq(r->held, 0);
	cr_assert_eq(r->window, window);
}

/* ---- init ---- */

Test(reorder_init, refuses_bad_windows)
{
	static const size_t bad[] = {
		0, 3, 5, 6, 7, 12, 1000, 1023, 1025,
		((size_t) 1 << 20) + 1, (size_t) 1 << 21, (size_t) 1 << 30,
		SIZE_MAX,
	};
	struct mrail_reorder r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&r, 0xa5, sizeof(r));
		cr_assert_eq(mrail_reorder_init(&r, bad[i]), -EINVAL,
			     "window %zu", bad[i]);
		cr_assert_null(r.slots);
		cr_assert_null(r.slot_seq);
		mrail_reorder_fini(&r);
	}
	cr_assert_eq(mrail_reorder_init(NULL, 8), -EINVAL);
}

Test(reorder_init, accepts_every_power_of_two)
{
	struct mrail_reorder r;
	unsigned shift;

	for (shift = 0; shift <= 20; shift++) {
		init_ok(&r, (size_t) 1 << shift);
		cr_assert_null(mrail_reorder_pop(&r));
		cr_assert_null(mrail_reorder_drain(&r));
		mrail_reorder_fini(&r);
		cr_assert_null(r.slots);
		cr_assert_null(r.slot_seq);
	}
}

Test(reorder_init, fini_twice_is_harmless)
{
	struct mrail_reorder r;

	init_ok(&r, 4);
	mrail_reorder_fini(&r);
	mrail_reorder_fini(&r);
	cr_assert_null(r.slots);
}

/* ---- order ---- */

Test(reorder, in_order_stream)
{
	struct mrail_reorder r;
	uint64_t seq;

	init_ok(&r, 4);
	for (seq = 0; seq < 1000; seq++) {
		cr_assert_null(mrail_reorder_pop(&r));
		cr_assert_eq(mrail_reorder_push(&r, seq, item_of(seq)), 0);
		cr_assert_eq(r.held, 1);
		cr_assert_eq(mrail_reorder_pop(&r), item_of(seq));
		cr_assert_eq(r.next, seq + 1);
		cr_assert_eq(r.held, 0);
	}
	cr_assert_null(mrail_reorder_pop(&r));
	mrail_reorder_fini(&r);
}

Test(reorder, window_of_one_takes_only_next)
{
	struct mrail_reorder r;

	init_ok(&r, 1);
	cr_assert_eq(mrail_reorder_push(&r, 1, item_of(1)), -ERANGE);
	cr_assert_eq(mrail_reorder_push(&r, 0, item_of(0)), 0);
	cr_assert_eq(mrail_reorder_push(&r, 0, item_of(0)), -EALREADY);
	cr_assert_eq(mrail_reorder_push(&r, 1, item_of(1)), -ERANGE);
	cr_assert_eq(mrail_reorder_pop(&r), item_of(0));
	cr_assert_null(mrail_reorder_pop(&r));
	cr_assert_eq(mrail_reorder_push(&r, 0, item_of(0)), -EALREADY);
	cr_assert_eq(mrail_reorder_push(&r, 1, item_of(1)), 0);
	cr_assert_eq(mrail_reorder_pop(&r), item_of(1));
	cr_assert_eq(r.next, 2);
	mrail_reorder_fini(&r);
}

Test(reorder, null_item_is_refused)
{
	struct mrail_reorder r;

	init_ok(&r, 4);
	cr_assert_eq(mrail_reorder_push(&r, 0, NULL), -EINVAL);
	cr_assert_eq(r.held, 0);
	cr_assert_null(mrail_reorder_pop(&r));
	mrail_reorder_fini(&r);
}

/* Lexicographic next permutation; false after the last one. */
static bool next_permutation(uint64_t *a, size_t n)
{
	size_t i, j;
	uint64_t tmp;

	if (n < 2)
		return false;
	i = n - 1;
	while (i > 0 && a[i - 1] >= a[i])
		i--;
	if (i == 0)
		return false;
	j = n - 1;
	while (a[j] <= a[i - 1])
		j--;
	tmp = a[i - 1];
	a[i - 1] = a[j];
	a[j] = tmp;
	for (j = n - 1; i < j; i++, j--) {
		tmp = a[i];
		a[i] = a[j];
		a[j] = tmp;
	}
	return true;
}

/* How many of order[0..pushed) form a prefix 0, 1, ... once sorted. */
static uint64_t contiguous_prefix(const uint64_t *order, size_t pushed)
{
	bool seen[6] = { false };
	uint64_t next = 0;
	size_t i;

	for (i = 0; i < pushed; i++)
		seen[order[i]] = true;
	while (next < 6 && seen[next])
		next++;
	return next;
}

Test(reorder, every_permutation_of_six, .timeout = 30)
{
	uint64_t order[6] = { 0, 1, 2, 3, 4, 5 };
	uint64_t delivered[6];
	struct mrail_reorder r;
	size_t permutations = 0, count, i;

	do {
		init_ok(&r, 8);
		count = 0;
		for (i = 0; i < 6; i++) {
			cr_assert_eq(mrail_reorder_push(&r, order[i],
							item_of(order[i])), 0);
			count += pop_ready(&r, delivered + count, 6 - count);
			cr_assert_eq(count, contiguous_prefix(order, i + 1));
			cr_assert_eq(r.next, count);
			cr_assert_eq(r.held, i + 1 - count);
		}
		cr_assert_eq(count, 6);
		for (i = 0; i < 6; i++)
			cr_assert_eq(delivered[i], i,
				     "permutation %zu delivered %llu at %zu",
				     permutations,
				     (unsigned long long) delivered[i], i);
		cr_assert_null(mrail_reorder_drain(&r));
		mrail_reorder_fini(&r);
		permutations++;
	} while (next_permutation(order, 6));

	cr_assert_eq(permutations, 720);
}

/*
 * The same orders into a window of four: whatever lies four or more ahead
 * of next when it arrives is refused, and then never comes (the sender
 * would retransmit it), which leaves later ones held for drain.
 */
Test(reorder, permutations_beyond_a_small_window_are_refused, .timeout = 30)
{
	uint64_t order[6] = { 0, 1, 2, 3, 4, 5 };
	struct mrail_reorder r;
	size_t refused_total = 0, i;
	uint64_t model_next;
	bool accepted[6];
	int ret;

	do {
		init_ok(&r, 4);
		memset(accepted, 0, sizeof(accepted));
		model_next = 0;
		for (i = 0; i < 6; i++) {
			ret = mrail_reorder_push(&r, order[i],
						 item_of(order[i]));
			if (order[i] >= model_next + 4) {
				cr_assert_eq(ret, -ERANGE);
				refused_total++;
			} else {
				cr_assert_eq(ret, 0);
				accepted[order[i]] = true;
			}
			while (model_next < 6 && accepted[model_next]) {
				cr_assert_eq(mrail_reorder_pop(&r),
					     item_of(model_next));
				model_next++;
			}
			cr_assert_null(mrail_reorder_pop(&r));
			cr_assert_eq(r.next, model_next);
		}
		while (mrail_reorder_drain(&r))
			;
		cr_assert_eq(r.held, 0);
		mrail_reorder_fini(&r);
	} while (next_permutation(order, 6));

	cr_assert_gt(refused_total, 0);
}

/*
 * Arrivals drawn at random among the not yet sent sequence numbers that the
 * window admits, with the odd duplicate of an earlier one thrown in; after
 * every push next and held must be what the pushed set alone implies.
 */
static void random_stream(size_t window, uint64_t seed)
{
	static bool pushed[ITEM_POOL];
	uint64_t candidates[1 << 10];
	uint64_t expect_next = 0, delivered = 0, seq;
	struct mrail_reorder r;
	size_t pushes = 0, max_held = 0, n;
	size_t dup_delivered = 0, dup_held = 0;
	void *item;

	cr_assert_leq(window, sizeof(candidates) / sizeof(candidates[0]));
	memset(pushed, 0, sizeof(pushed));
	rng_seed(seed);
	init_ok(&r, window);

	while (pushes < ITEM_POOL) {
		n = 0;
		for (seq = expect_next; seq < expect_next + window &&
					seq < ITEM_POOL; seq++) {
			if (!pushed[seq])
				candidates[n++] = seq;
		}
		cr_assert_gt(n, 0);
		seq = candidates[rng_below(n)];

		cr_assert_eq(mrail_reorder_push(&r, seq, item_of(seq)), 0);
		pushed[seq] = true;
		pushes++;
		if (r.held > max_held)
			max_held = r.held;

		while ((item = mrail_reorder_pop(&r))) {
			cr_assert_eq(index_of(item), delivered);
			delivered++;
		}
		while (expect_next < ITEM_POOL && pushed[expect_next])
			expect_next++;
		cr_assert_eq(r.next, expect_next);
		cr_assert_eq(delivered, expect_next);
		cr_assert_eq(r.held, pushes - delivered);

		/* Now and then, a copy of one delivered or still held. */
		if (rng_below(8) == 0) {
			seq = rng_below(expect_next + window);
			if (seq < ITEM_POOL && pushed[seq]) {
				cr_assert_eq(mrail_reorder_push(&r, seq,
								item_of(seq)),
					     -EALREADY, "dup %llu",
					     (unsigned long long) seq);
				cr_assert_eq(r.held, pushes - delivered);
				if (seq < expect_next)
					dup_delivered++;
				else
					dup_held++;
			}
		}
	}

	cr_assert_eq(pushes, ITEM_POOL);
	cr_assert_eq(delivered, ITEM_POOL);
	cr_assert_eq(r.next, ITEM_POOL);
	cr_assert_eq(r.held, 0);
	cr_assert_leq(max_held, window);
	cr_assert_gt(dup_delivered, 0);
	cr_assert_gt(dup_held, 0);
	cr_assert_null(mrail_reorder_drain(&r));
	mrail_reorder_fini(&r);
}

Test(reorder, random_shuffles_window_16, .timeout = 30)
{
	random_stream(16, 0x9e3779b97f4a7c15ull);
}

Test(reorder, random_shuffles_window_256, .timeout = 30)
{
	random_stream(256, 0x0123456789abcdefull);
}

Test(reorder, random_shuffles_window_1024, .timeout = 30)
{
	random_stream(1024, 42);
}

/* ---- duplicates and the window's edges ---- */

Test(reorder, duplicates)
{
	struct mrail_reorder r;

	init_ok(&r, 8);
	cr_assert_eq(mrail_reorder_push(&r, 0, item_of(0)), 0);
	cr_assert_eq(mrail_reorder_push(&r, 0, item_of(100)), -EALREADY,
		     "held, not yet popped");
	cr_assert_eq(mrail_reorder_pop(&r), item_of(0));
	cr_assert_eq(mrail_reorder_push(&r, 0, item_of(0)), -EALREADY,
		     "already delivered");

	cr_assert_eq(mrail_reorder_push(&r, 3, item_of(3)), 0);
	cr_assert_eq(mrail_reorder_push(&r, 3, item_of(103)), -EALREADY,
		     "held early");
	cr_assert_eq(r.held, 1);
	cr_assert_null(mrail_reorder_pop(&r));

	cr_assert_eq(mrail_reorder_push(&r, 1, item_of(1)), 0);
	cr_assert_eq(mrail_reorder_push(&r, 2, item_of(2)), 0);
	cr_assert_eq(mrail_reorder_pop(&r), item_of(1));
	cr_assert_eq(mrail_reorder_pop(&r), item_of(2));
	cr_assert_eq(mrail_reorder_pop(&r), item_of(3), "not the duplicate");
	cr_assert_null(mrail_reorder_pop(&r));
	cr_assert_eq(r.next, 4);
	cr_assert_eq(r.held, 0);

	/* Delivered long ago: far behind, but still a duplicate. */
	cr_assert_eq(mrail_reorder_push(&r, 1, item_of(1)), -EALREADY);
	cr_assert_eq(mrail_reorder_push(&r, 3, item_of(3)), -EALREADY);
	cr_assert_eq(r.held, 0);
	mrail_reorder_fini(&r);
}

Test(reorder, window_edge)
{
	struct mrail_reorder r;
	uint64_t seq;

	init_ok(&r, 8);
	cr_assert_eq(mrail_reorder_push(&r, 8, item_of(8)), -ERANGE);
	cr_assert_eq(mrail_reorder_push(&r, 7, item_of(7)), 0);
	cr_assert_eq(mrail_reorder_push(&r, 1000, item_of(1000)), -ERANGE);
	cr_assert_eq(mrail_reorder_push(&r, UINT64_MAX / 2, item_of(1)),
		     -ERANGE);
	cr_assert_eq(r.held, 1);

	/* Slot 7 is taken by 7; 15 maps there too but lies beyond. */
	cr_assert_eq(mrail_reorder_push(&r, 15, item_of(15)), -ERANGE);

	for (seq = 0; seq < 7; seq++)
		cr_assert_eq(mrail_reorder_push(&r, seq, item_of(seq)), 0);
	cr_assert_eq(r.held, 8, "a full window");
	for (seq = 0; seq < 8; seq++)
		cr_assert_eq(mrail_reorder_pop(&r), item_of(seq));
	cr_assert_null(mrail_reorder_pop(&r));

	/* The window moved with next: 8 + 8 - 1 is now the last one in. */
	cr_assert_eq(r.next, 8);
	cr_assert_eq(mrail_reorder_push(&r, 16, item_of(16)), -ERANGE);
	cr_assert_eq(mrail_reorder_push(&r, 15, item_of(15)), 0);
	cr_assert_eq(r.held, 1);
	cr_assert_eq(mrail_reorder_drain(&r), item_of(15));
	mrail_reorder_fini(&r);
}

/* ---- past UINT64_MAX ---- */

/* Wrapping sequence numbers name items by their distance from base. */
static void *wrap_item(uint64_t base, uint64_t seq)
{
	return item_of(seq - base);
}

Test(reorder, wraps_past_uint64_max)
{
	static const uint64_t arrival[] = { 2, 0, UINT64_MAX - 1, 3,
					    UINT64_MAX, 1, UINT64_MAX - 3,
					    UINT64_MAX - 2 };
	const uint64_t base = UINT64_MAX - 3;
	struct mrail_reorder r;
	uint64_t expect = base;
	size_t i, delivered = 0;
	void *item;

	init_ok(&r, 8);
	r.next = base;

	/* next + window - 1 wraps to 3: in; next + window, 4: out. */
	cr_assert_eq(mrail_reorder_push(&r, 4, wrap_item(base, 4)), -ERANGE);
	cr_assert_eq(mrail_reorder_push(&r, base - 1, item_of(100)),
		     -EALREADY);

	for (i = 0; i < sizeof(arrival) / sizeof(arrival[0]); i++) {
		cr_assert_eq(mrail_reorder_push(&r, arrival[i],
						wrap_item(base, arrival[i])),
			     0, "seq %llu", (unsigned long long) arrival[i]);
		while ((item = mrail_reorder_pop(&r))) {
			cr_assert_eq(item, wrap_item(base, expect));
			expect++;
			delivered++;
		}
	}
	cr_assert_eq(delivered, 8);
	cr_assert_eq(r.next, 4);
	cr_assert_eq(r.held, 0);

	/* Sent before the wrap: behind next, so duplicates, not too far. */
	cr_assert_eq(mrail_reorder_push(&r, UINT64_MAX, item_of(100)),
		     -EALREADY);
	cr_assert_eq(mrail_reorder_push(&r, UINT64_MAX - 3, item_of(100)),
		     -EALREADY);
	cr_assert_eq(mrail_reorder_push(&r, 3, item_of(100)), -EALREADY);
	cr_assert_eq(mrail_reorder_push(&r, 11, item_of(11)), 0);
	cr_assert_eq(mrail_reorder_push(&r, 12, item_of(12)), -ERANGE);
	cr_assert_eq(mrail_reorder_drain(&r), item_of(11));
	mrail_reorder_fini(&r);
}

Test(reorder, wrap_reached_by_pushing_and_popping)
{
	struct mrail_reorder r;
	uint64_t seq;

	init_ok(&r, 4);
	r.next = UINT64_MAX - 5;
	for (seq = UINT64_MAX - 5; seq != 6; seq++) {
		cr_assert_eq(mrail_reorder_push(&r, seq,
						wrap_item(UINT64_MAX - 5, seq)),
			     0);
		cr_assert_eq(mrail_reorder_pop(&r),
			     wrap_item(UINT64_MAX - 5, seq));
	}
	cr_assert_eq(r.next, 6);
	cr_assert_eq(mrail_reorder_push(&r, UINT64_MAX, item_of(100)),
		     -EALREADY);
	mrail_reorder_fini(&r);
}

/* ---- drain ---- */

Test(reorder, drain_releases_everything_held, .timeout = 30)
{
	static const uint64_t held_seqs[] = { 1, 2, 5, 9, 14, 15 };
	bool released[16] = { false };
	struct mrail_reorder r;
	size_t count = 0, i;
	uint64_t seq;
	void *item;

	init_ok(&r, 16);
	for (i = 0; i < sizeof(held_seqs) / sizeof(held_seqs[0]); i++)
		cr_assert_eq(mrail_reorder_push(&r, held_seqs[i],
						item_of(held_seqs[i])), 0);
	cr_assert_null(mrail_reorder_pop(&r), "0 never came");
	cr_assert_eq(r.held, 6);

	while ((item = mrail_reorder_drain(&r))) {
		seq = index_of(item);
		cr_assert_lt(seq, 16);
		cr_assert(!released[seq], "%llu released twice",
			  (unsigned long long) seq);
		released[seq] = true;
		count++;
		cr_assert_eq(r.held, 6 - count);
	}
	cr_assert_eq(count, 6);
	for (i = 0; i < sizeof(held_seqs) / sizeof(held_seqs[0]); i++)
		cr_assert(released[held_seqs[i]]);
	cr_assert_null(mrail_reorder_drain(&r));
	cr_assert_null(mrail_reorder_pop(&r));
	for (i = 0; i < 16; i++)
		cr_assert_null(r.slots[i]);

	/* A late copy of something released is not taken a second time. */
	cr_assert_eq(mrail_reorder_push(&r, 15, item_of(15)), -EALREADY);
	cr_assert_eq(mrail_reorder_push(&r, 9, item_of(9)), -EALREADY);
	mrail_reorder_fini(&r);
}

Test(reorder, drain_of_a_full_large_window, .timeout = 30)
{
	const size_t window = (size_t) 1 << 13;
	struct mrail_reorder r;
	size_t count = 0;
	uint64_t seq;

	init_ok(&r, window);
	r.next = UINT64_MAX - 100;
	/* Everything but next itself, across the wrap. */
	for (seq = r.next + 1; seq != r.next + window; seq++)
		cr_assert_eq(mrail_reorder_push(&r, seq, item_of(0)), 0);
	cr_assert_eq(r.held, window - 1);
	while (mrail_reorder_drain(&r))
		count++;
	cr_assert_eq(count, window - 1);
	cr_assert_eq(r.held, 0);
	mrail_reorder_fini(&r);
}
