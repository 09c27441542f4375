/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/stripe_policy.c: weighted striping's exact splits, its
 * minimum-stripe and alignment rules on random inputs, and adaptive striping
 * over simulated rails (a stripe's delivery time is bytes / rate, plus a
 * fixed per-operation cost where said), including recovery after a rate
 * change and re-probing of a starved rail.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "stripe_policy.h"
#include "test_stripe_check.h"

Test(weighted, four_to_one_unaligned)
{
	static const uint32_t w[] = { 4, 1 };

	/* 1 MiB * 4/5 = 838860.8: the first stripe ends at 838860. */
	cr_assert_eq(mrail_stripe_weighted(MIB, 2, w, 1, 1, out), 2);
	expect_stripe(0, 0, 0, 838860);
	expect_stripe(1, 1, 838860, MIB - 838860);
}

Test(weighted, four_to_one_aligned)
{
	static const uint32_t w[] = { 4, 1 };

	/* 838860 rounded down to 4096 is 835584. */
	cr_assert_eq(mrail_stripe_weighted(MIB, 2, w, 4096, 4096, out), 2);
	expect_stripe(0, 0, 0, 835584);
	expect_stripe(1, 1, 835584, MIB - 835584);
}

Test(weighted, equal_weights_match_even_striping)
{
	static const uint32_t w[] = { 7, 7, 7, 7 };
	struct mrail_stripe even[MRAIL_MAX_RAILS];

	cr_assert_eq(mrail_stripe_even(4 * MIB, 4, 0, 16 * KIB, 64, even), 4);
	cr_assert_eq(mrail_stripe_weighted(4 * MIB, 4, w, 16 * KIB, 64, out), 4);
	for (int i = 0; i < 4; i++)
		expect_stripe(i, even[i].rail, even[i].offset, even[i].len);
}

Test(weighted, zero_weight_rail_gets_nothing)
{
	static const uint32_t w[] = { 1, 0, 1 };

	cr_assert_eq(mrail_stripe_weighted(100 * KIB, 3, w, 1, 1, out), 2);
	expect_stripe(0, 0, 0, 50 * KIB);
	expect_stripe(1, 2, 50 * KIB, 50 * KIB);
}

Test(weighted, a_rail_below_the_minimum_is_dropped_and_its_share_redistributed)
{
	static const uint32_t w[] = { 4, 2, 1 };

	/* 70 KiB at 4:2:1 is 40 + 20 + 10 KiB; 10 < 16, so rail 2 goes and
	 * 70 KiB at 4:2 is 46.67 + 23.33 KiB. */
	cr_assert_eq(mrail_stripe_weighted(70 * KIB, 3, w, 16 * KIB, 1, out), 2);
	expect_stripe(0, 0, 0, 70 * KIB * 4 / 6);
	expect_stripe(1, 1, 70 * KIB * 4 / 6, 70 * KIB - 70 * KIB * 4 / 6);
}

Test(weighted, drops_continue_until_the_heaviest_rail_alone)
{
	static const uint32_t w[] = { 10, 1, 1 };

	cr_assert_eq(mrail_stripe_weighted(100 * KIB, 3, w, 16 * KIB, 64, out), 1);
	expect_stripe(0, 0, 0, 100 * KIB);
}

Test(weighted, equal_lightest_weights_drop_the_highest_index_first)
{
	static const uint32_t w[] = { 1, 1, 1 };

	/* 40 KiB over three: 13.3 KiB each < 16; drop rail 2, then 20 + 20. */
	cr_assert_eq(mrail_stripe_weighted(40 * KIB, 3, w, 16 * KIB, 1, out), 2);
	expect_stripe(0, 0, 0, 20 * KIB);
	expect_stripe(1, 1, 20 * KIB, 20 * KIB);
}

Test(weighted, transfer_below_the_minimum_stays_whole)
{
	static const uint32_t w[] = { 1, 3 };

	cr_assert_eq(mrail_stripe_weighted(5000, 2, w, 16 * KIB, 64, out), 1);
	expect_stripe(0, 1, 0, 5000);
}

Test(weighted, alignment_that_empties_a_stripe_drops_the_rail)
{
	static const uint32_t w[] = { 1, 1 };

	/* Two 3000-byte halves: the first would end at 0 on a 4096 boundary;
	 * of equal weights the higher rail goes. */
	cr_assert_eq(mrail_stripe_weighted(6000, 2, w, 1, 4096, out), 1);
	expect_stripe(0, 0, 0, 6000);
}

Test(weighted, zero_length_has_no_stripes)
{
	static const uint32_t w[] = { 1 };

	cr_expect_eq(mrail_stripe_weighted(0, 1, w, 1, 1, out), 0);
}

Test(weighted, largest_transfer_and_weights_do_not_overflow)
{
	uint32_t w[MRAIL_MAX_RAILS];
	uint64_t sum = 0;
	int n;

	for (int i = 0; i < MRAIL_MAX_RAILS; i++)
		w[i] = MRAIL_WEIGHT_MAX - (uint32_t) i;
	n = mrail_stripe_weighted(UINT64_MAX, MRAIL_MAX_RAILS, w, MIB, 4096, out);
	cr_assert_eq(n, MRAIL_MAX_RAILS);
	for (int i = 0; i < n; i++)
		sum += out[i].len;
	cr_expect_eq(sum, UINT64_MAX);
	cr_expect_eq(out[n - 1].offset + out[n - 1].len, UINT64_MAX);
}

Test(weighted, bad_arguments_are_refused)
{
	static const uint32_t ok[MRAIL_MAX_RAILS + 1] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	static const uint32_t zero[2] = { 0, 0 };
	static const uint32_t big[2] = { MRAIL_WEIGHT_MAX + 1, 1 };

	cr_expect_eq(mrail_stripe_weighted(MIB, 0, ok, 1, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, MRAIL_MAX_RAILS + 1, ok, 1, 1, out),
		     -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, 2, zero, 1, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, 2, big, 1, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, 2, NULL, 1, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, 2, ok, 0, 1, out), -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, 2, ok, 1, 0, out), -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, 2, ok, 1, 48, out), -EINVAL);
	cr_expect_eq(mrail_stripe_weighted(MIB, 2, ok, 1, 1, NULL), -EINVAL);
	/* Zero length is still checked: a bad call is never "nothing to do". */
	cr_expect_eq(mrail_stripe_weighted(0, 2, zero, 1, 1, out), -EINVAL);
}

/*
 * Random lengths, weights, minimums and alignments: the stripes tile the
 * transfer exactly in offset order, offsets are aligned, each rail appears
 * once, no stripe is below the minimum unless it is the only one, each is
 * within align of its exact share among the rails used, and the rails left
 * out are never heavier than one used.
 */
Test(weighted, random_inputs_keep_every_rule)
{
	uint64_t rng = 0x3e1647edULL;

	for (int iter = 0; iter < 20000; iter++) {
		size_t rails = 1 + (size_t) test_rng_below(&rng, MRAIL_MAX_RAILS);
		uint64_t len = 1 + test_rng_below(&rng, 64 * MIB);
		uint64_t align = 1ULL << test_rng_below(&rng, 13);
		uint64_t min_stripe = 1 + test_rng_below(&rng, 256 * KIB);
		uint32_t w[MRAIL_MAX_RAILS], total = 0, used_total = 0;
		bool used[MRAIL_MAX_RAILS] = { false };
		uint64_t next = 0;
		int n;

		for (size_t r = 0; r < rails; r++) {
			w[r] = (uint32_t) test_rng_below(&rng, 100);
			total += w[r];
		}
		if (!total)
			w[rails - 1] = 1;
		n = mrail_stripe_weighted(len, rails, w, min_stripe, align, out);
		cr_assert_gt(n, 0);
		cr_assert_leq((size_t) n, rails);
		for (int i = 0; i < n; i++) {
			cr_assert_eq(out[i].offset, next, "iter %d stripe %d", iter, i);
			cr_assert_eq(out[i].offset % align, 0);
			cr_assert_gt(out[i].len, 0);
			cr_assert_lt(out[i].rail, rails);
			cr_assert(!used[out[i].rail]);
			cr_assert_gt(w[out[i].rail], 0);
			if (i)
				cr_assert_gt(out[i].rail, out[i - 1].rail);
			if (n > 1)
				cr_assert_geq(out[i].len, min_stripe,
					      "iter %d stripe %d: %llu < %llu", iter, i,
					      (unsigned long long) out[i].len,
					      (unsigned long long) min_stripe);
			used[out[i].rail] = true;
			used_total += w[out[i].rail];
			next += out[i].len;
		}
		cr_assert_eq(next, len);
		for (int i = 0; i < n; i++) {
			double exact = (double) len * w[out[i].rail] / used_total;

			cr_assert_lt(fabs((double) out[i].len - exact), (double) align + 1e-6 * exact + 1,
				     "iter %d stripe %d: %llu vs %.1f", iter, i,
				     (unsigned long long) out[i].len, exact);
		}
		for (size_t r = 0; r < rails; r++)
			for (int i = 0; i < n && !used[r]; i++)
				cr_assert_leq(w[r], w[out[i].rail],
					      "rail %zu (weight %u) dropped before rail %u",
					      r, w[r], out[i].rail);
	}
}

/* ---- adaptive striping over simulated rails ---- */

struct sim_rails {
	size_t count;
	double rate[MRAIL_MAX_RAILS];	/* bytes per second */
	double op_cost;			/* seconds per stripe */
};

/* Plans one transfer, "sends" it, reports the delivery times; returns the
 * time the slowest stripe took. */
static double sim_transfer(struct mrail_adaptive *ad, const struct sim_rails *sim,
			   uint64_t len, uint64_t min_stripe)
{
	struct mrail_rail_sample samples[MRAIL_MAX_RAILS] = { { 0, 0.0 } };
	double makespan = 0.0;
	int n = mrail_adaptive_plan(ad, len, min_stripe, 64, out);

	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++) {
		double t = sim->op_cost + (double) out[i].len / sim->rate[out[i].rail];

		samples[out[i].rail].bytes = out[i].len;
		samples[out[i].rail].seconds = t;
		if (t > makespan)
			makespan = t;
	}
	cr_assert_eq(mrail_adaptive_update(ad, samples, sim->count), 0);
	return makespan;
}

/* Each share within 5% (relative) of the rate-proportional split. */
static bool near_optimal(const struct mrail_adaptive *ad, const struct sim_rails *sim)
{
	double shares[MRAIL_MAX_RAILS], total = 0.0;

	cr_assert_eq(mrail_adaptive_shares(ad, shares), (int) sim->count);
	for (size_t i = 0; i < sim->count; i++)
		total += sim->rate[i];
	for (size_t i = 0; i < sim->count; i++) {
		double best = sim->rate[i] / total;

		if (fabs(shares[i] - best) > 0.05 * best)
			return false;
	}
	return true;
}

/* Transfers until near optimal; returns how many it took (limit + 1 if
 * never), and checks that it then stays there. */
static int transfers_to_converge(struct mrail_adaptive *ad,
				 const struct sim_rails *sim, int limit)
{
	int taken = limit + 1;

	for (int i = 1; i <= limit; i++) {
		sim_transfer(ad, sim, MIB, 16 * KIB);
		if (near_optimal(ad, sim)) {
			taken = i;
			break;
		}
	}
	for (int i = 0; taken <= limit && i < 50; i++) {
		sim_transfer(ad, sim, MIB, 16 * KIB);
		cr_assert(near_optimal(ad, sim), "left the optimum %d transfers later", i);
	}
	return taken;
}

Test(adaptive, starts_even)
{
	struct mrail_adaptive ad;
	double shares[MRAIL_MAX_RAILS];

	cr_assert_eq(mrail_adaptive_init(&ad, 4, MRAIL_ADAPTIVE_ALPHA_DEFAULT), 0);
	cr_assert_eq(mrail_adaptive_shares(&ad, shares), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(shares[i], 0.25);
	cr_assert_eq(mrail_adaptive_plan(&ad, 4 * MIB, 1, 1, out), 4);
	for (int i = 0; i < 4; i++)
		expect_stripe(i, (unsigned) i, (uint64_t) i * MIB, MIB);
}

Test(adaptive, four_to_one_within_20_transfers_and_again_after_a_rate_halves)
{
	struct sim_rails sim = { .count = 2, .rate = { 4e8, 1e8 } };
	struct mrail_adaptive ad;
	int n;

	cr_assert_eq(mrail_adaptive_init(&ad, 2, MRAIL_ADAPTIVE_ALPHA_DEFAULT), 0);
	n = transfers_to_converge(&ad, &sim, 20);
	cr_expect_leq(n, 20, "4:1 took %d transfers", n);
	/* The fast rail loses half its rate: 2:1. */
	sim.rate[0] = 2e8;
	n = transfers_to_converge(&ad, &sim, 20);
	cr_expect_leq(n, 20, "2:1 after the change took %d transfers", n);
}

Test(adaptive, every_history_factor_up_to_0_8_converges_within_20)
{
	static const double alphas[] = { 0.0, 0.25, 0.5, 0.8 };

	for (size_t a = 0; a < sizeof(alphas) / sizeof(alphas[0]); a++) {
		struct sim_rails sim = { .count = 2, .rate = { 4e8, 1e8 } };
		struct mrail_adaptive ad;
		int n;

		cr_assert_eq(mrail_adaptive_init(&ad, 2, alphas[a]), 0);
		n = transfers_to_converge(&ad, &sim, 20);
		cr_expect_leq(n, 20, "alpha %.2f: 4:1 took %d", alphas[a], n);
		sim.rate[1] = 0.5e8;
		n = transfers_to_converge(&ad, &sim, 20);
		cr_expect_leq(n, 20, "alpha %.2f: 8:1 took %d", alphas[a], n);
	}
}

/* alpha 0 is equation 3: one transfer finds the exact split. */
Test(adaptive, no_history_converges_in_one_transfer)
{
	struct sim_rails sim = { .count = 3, .rate = { 3e8, 2e8, 1e8 } };
	struct mrail_adaptive ad;

	cr_assert_eq(mrail_adaptive_init(&ad, 3, 0.0), 0);
	cr_expect_eq(transfers_to_converge(&ad, &sim, 20), 1);
}

/* With a per-operation cost the rate-proportional split is not quite the
 * fastest, but the completion time still ends within 5% of the best one
 * (every stripe finishing at op_cost + len / sum(rates)). */
Test(adaptive, completion_time_near_best_with_per_operation_cost)
{
	struct sim_rails sim = { .count = 4, .rate = { 1.25e8, 1.25e8, 3.1e7, 6.2e7 },
				 .op_cost = 20e-6 };
	double best = sim.op_cost + (double) MIB / (1.25e8 + 1.25e8 + 3.1e7 + 6.2e7);
	struct mrail_adaptive ad;
	double t = 0.0;

	cr_assert_eq(mrail_adaptive_init(&ad, 4, MRAIL_ADAPTIVE_ALPHA_DEFAULT), 0);
	for (int i = 0; i < 20; i++)
		t = sim_transfer(&ad, &sim, MIB, 16 * KIB);
	cr_expect_leq(t, 1.05 * best, "took %g s, best %g s", t, best);
}

/* A rail that nearly stops falls below the minimum stripe and is left out;
 * re-probing sees it recover and its share comes back. */
Test(adaptive, a_starved_rail_is_reprobed_and_recovers)
{
	struct sim_rails sim = { .count = 2, .rate = { 1e8, 1e8 } };
	struct mrail_adaptive ad;
	double shares[MRAIL_MAX_RAILS];
	int probes = 0, n;

	cr_assert_eq(mrail_adaptive_init(&ad, 2, MRAIL_ADAPTIVE_ALPHA_DEFAULT), 0);
	sim.rate[1] = 1e5;
	for (int i = 0; i < 30; i++)
		sim_transfer(&ad, &sim, MIB, 64 * KIB);
	mrail_adaptive_shares(&ad, shares);
	cr_assert_lt(shares[1], 0.01, "slow rail kept share %g", shares[1]);

	/* Left out, except one probe of exactly the minimum stripe every
	 * MRAIL_ADAPTIVE_PROBE_EVERY + 1 transfers. */
	for (int i = 0; i < 3 * (MRAIL_ADAPTIVE_PROBE_EVERY + 1); i++) {
		n = mrail_adaptive_plan(&ad, MIB, 64 * KIB, 64, out);
		if (n == 2) {
			probes++;
			expect_stripe(1, 1, MIB - 64 * KIB, 64 * KIB);
		} else {
			cr_assert_eq(n, 1);
		}
	}
	cr_expect_eq(probes, 3);

	sim.rate[1] = 1e8;
	n = transfers_to_converge(&ad, &sim, 40);
	cr_expect_leq(n, 40, "recovery took %d transfers", n);
}

Test(adaptive, unmeasured_rails_keep_their_share)
{
	struct mrail_adaptive ad;
	double shares[MRAIL_MAX_RAILS];
	struct mrail_rail_sample s[3] = {
		{ .bytes = 300, .seconds = 1.0 },	/* rate 300 */
		{ .bytes = 0, .seconds = 0.0 },		/* not used */
		{ .bytes = 100, .seconds = 1.0 },	/* rate 100 */
	};

	cr_assert_eq(mrail_adaptive_init(&ad, 3, 0.0), 0);
	cr_assert_eq(mrail_adaptive_update(&ad, s, 3), 0);
	mrail_adaptive_shares(&ad, shares);
	/* Rails 0 and 2 split their 2/3 by 3:1; rail 1 keeps 1/3. */
	cr_expect_float_eq(shares[0], 0.5, 1e-12);
	cr_expect_float_eq(shares[1], 1.0 / 3, 1e-12);
	cr_expect_float_eq(shares[2], 1.0 / 6, 1e-12);

	/* Zero time (below the clock's resolution) is not a measurement
	 * either; one rail measured alone changes nothing. */
	s[2].seconds = 0.0;
	cr_assert_eq(mrail_adaptive_update(&ad, s, 3), 0);
	mrail_adaptive_shares(&ad, shares);
	cr_expect_float_eq(shares[0], 0.5, 1e-12);
	cr_expect_float_eq(shares[2], 1.0 / 6, 1e-12);

	/* A denormal time makes an infinite rate: no change, no NaN. */
	s[2].seconds = 4.9e-324;
	cr_assert_eq(mrail_adaptive_update(&ad, s, 3), 0);
	mrail_adaptive_shares(&ad, shares);
	cr_expect_float_eq(shares[0], 0.5, 1e-12);
}

Test(adaptive, history_factor_keeps_part_of_the_old_share)
{
	struct mrail_adaptive ad;
	double shares[MRAIL_MAX_RAILS];
	struct mrail_rail_sample s[2] = { { 400, 1.0 }, { 100, 1.0 } };

	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.75), 0);
	cr_assert_eq(mrail_adaptive_update(&ad, s, 2), 0);
	mrail_adaptive_shares(&ad, shares);
	/* 0.75 * 0.5 + 0.25 * 0.8 = 0.575 */
	cr_expect_float_eq(shares[0], 0.575, 1e-12);
	cr_expect_float_eq(shares[1], 0.425, 1e-12);
}

Test(adaptive, bad_inputs_are_refused_and_change_nothing)
{
	struct mrail_adaptive ad;
	double shares[MRAIL_MAX_RAILS];
	struct mrail_rail_sample s[2] = { { 400, 1.0 }, { 100, NAN } };

	cr_expect_eq(mrail_adaptive_init(&ad, 0, 0.5), -EINVAL);
	cr_expect_eq(mrail_adaptive_plan(&ad, MIB, 1, 1, out), -EINVAL);
	cr_expect_eq(mrail_adaptive_update(&ad, s, 0), -EINVAL);
	cr_expect_eq(mrail_adaptive_shares(&ad, shares), -EINVAL);
	cr_expect_eq(mrail_adaptive_init(&ad, MRAIL_MAX_RAILS + 1, 0.5), -EINVAL);
	cr_expect_eq(mrail_adaptive_init(&ad, 2, 1.0), -EINVAL);
	cr_expect_eq(mrail_adaptive_init(&ad, 2, -0.1), -EINVAL);
	cr_expect_eq(mrail_adaptive_init(&ad, 2, NAN), -EINVAL);
	cr_expect_eq(mrail_adaptive_init(&ad, 2, INFINITY), -EINVAL);
	cr_expect_eq(mrail_adaptive_init(NULL, 2, 0.5), -EINVAL);

	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.5), 0);
	cr_expect_eq(mrail_adaptive_update(&ad, s, 2), -EINVAL);
	s[1].seconds = -1.0;
	cr_expect_eq(mrail_adaptive_update(&ad, s, 2), -EINVAL);
	s[1].seconds = INFINITY;
	cr_expect_eq(mrail_adaptive_update(&ad, s, 2), -EINVAL);
	s[1].seconds = 1.0;
	cr_expect_eq(mrail_adaptive_update(&ad, s, 1), -EINVAL);
	cr_expect_eq(mrail_adaptive_update(&ad, s, 3), -EINVAL);
	cr_expect_eq(mrail_adaptive_update(&ad, NULL, 2), -EINVAL);
	cr_expect_eq(mrail_adaptive_update(NULL, s, 2), -EINVAL);
	cr_expect_eq(mrail_adaptive_plan(&ad, MIB, 0, 1, out), -EINVAL);
	cr_expect_eq(mrail_adaptive_plan(&ad, MIB, 1, 3, out), -EINVAL);
	cr_expect_eq(mrail_adaptive_plan(NULL, MIB, 1, 1, out), -EINVAL);
	mrail_adaptive_shares(&ad, shares);
	cr_expect_eq(shares[0], 0.5);
	cr_expect_eq(shares[1], 0.5);
}

/* Plans count short transfers (one 16 KiB stripe each, minimum 16 KiB) and
 * counts them per rail; checks each is whole on one rail. */
static void plan_short(struct mrail_adaptive *ad, int count, int per_rail[MRAIL_MAX_RAILS])
{
	for (int i = 0; i < count; i++) {
		cr_assert_eq(mrail_adaptive_plan(ad, 16 * KIB, 16 * KIB, 4096, out), 1);
		cr_assert_eq(out[0].offset, 0);
		cr_assert_eq(out[0].len, 16 * KIB);
		per_rail[out[0].rail]++;
	}
}

/* A stream of transfers too short for two stripes uses every rail by its
 * share, interleaved, instead of all going to the heaviest rail. */
Test(adaptive, short_transfers_take_turns_by_share)
{
	struct mrail_rail_sample s[2] = {
		{ .bytes = 4 * MIB, .seconds = 1.0 },
		{ .bytes = MIB, .seconds = 1.0 },
	};
	struct mrail_adaptive ad;
	int per_rail[MRAIL_MAX_RAILS] = { 0 };

	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.0), 0);
	/* Equal shares: strictly alternating. */
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(mrail_adaptive_plan(&ad, 16 * KIB, 16 * KIB, 4096, out), 1);
		cr_expect_eq(out[0].rail, (uint8_t) (i % 2), "transfer %d on rail %u",
			     i, out[0].rail);
	}
	/* 4:1 measured: 80 and 20 of 100. */
	cr_assert_eq(mrail_adaptive_update(&ad, s, 2), 0);
	plan_short(&ad, 100, per_rail);
	cr_expect_eq(per_rail[0], 80);
	cr_expect_eq(per_rail[1], 20);
}

/* A rail far slower than the best takes no whole short transfer, nor a
 * longer one that its share would leave too short a stripe. */
Test(adaptive, short_transfers_avoid_a_crawling_rail)
{
	struct mrail_rail_sample s[2] = {
		{ .bytes = 32 * MIB, .seconds = 1.0 },
		{ .bytes = MIB, .seconds = 1.0 },
	};
	struct mrail_adaptive ad;
	int per_rail[MRAIL_MAX_RAILS] = { 0 };

	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.0), 0);
	cr_assert_eq(mrail_adaptive_update(&ad, s, 2), 0);
	/* Rail 1's 1/33 of 32 KiB is too short: rail 0 takes it all. */
	cr_assert_eq(mrail_adaptive_plan(&ad, 32 * KIB, 16 * KIB, 4096, out), 1);
	expect_stripe(0, 0, 0, 32 * KIB);
	plan_short(&ad, 50, per_rail);
	cr_expect_eq(per_rail[0], 50);
	cr_expect_eq(per_rail[1], 0);
}

/* Shares within MRAIL_ADAPTIVE_EVEN_ENTER of even (100:104 is 0.490 and
 * 0.510): every transfer is split exactly as even striping splits it, the
 * first rail in turn, queues or not; 32 KiB goes as two 16 KiB stripes
 * rather than whole on the heavier rail. */
Test(adaptive, shares_near_even_split_as_even_striping_does)
{
	struct mrail_rail_sample s[2] = {
		{ .bytes = 100 * MIB, .seconds = 1.0 },
		{ .bytes = 104 * MIB, .seconds = 1.0 },
	};
	static const uint64_t queued[2] = { 0, 24 * KIB };
	struct mrail_stripe even[MRAIL_MAX_RAILS];
	struct mrail_adaptive ad;

	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.0), 0);
	cr_assert_eq(mrail_adaptive_update(&ad, s, 2), 0);
	for (int i = 0; i < 40; i++) {
		uint64_t len = (i % 2 ? 32 * KIB : 3 * MIB + 4096);
		int n = mrail_stripe_even(len, 2, (size_t) i % 2, 16 * KIB, 4096, even);

		cr_assert_eq(mrail_adaptive_plan_queued(&ad, len, i % 4 ? queued : NULL,
							16 * KIB, 4096, out), n);
		for (int k = 0; k < n; k++)
			expect_stripe(k, even[k].rail, even[k].offset, even[k].len);
	}
}

/* A transfer left whole on one rail takes the least queued rail once the
 * one in turn has more than two such transfers above it: over rails of
 * different speed whose shares are still even, the slow rail's queue
 * grows and the fast one takes the short transfers. */
Test(adaptive, near_even_short_transfers_avoid_a_rail_far_behind)
{
	static const uint64_t close[2] = { 32 * KIB, 0 }, behind[2] = { 32 * KIB + 4096, 0 };
	struct mrail_adaptive ad;

	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.5), 0);
	cr_assert_eq(mrail_adaptive_plan_queued(&ad, 16 * KIB, close, 16 * KIB, 4096, out), 1);
	expect_stripe(0, 0, 0, 16 * KIB);	/* rail 0's turn, 2 transfers above */
	cr_assert_eq(mrail_adaptive_plan_queued(&ad, 16 * KIB, close, 16 * KIB, 4096, out), 1);
	expect_stripe(0, 1, 0, 16 * KIB);
	cr_assert_eq(mrail_adaptive_plan_queued(&ad, 16 * KIB, behind, 16 * KIB, 4096, out), 1);
	expect_stripe(0, 1, 0, 16 * KIB);	/* rail 0's turn, but too far behind */
}

/* Hysteresis: shares that leave the band by more than
 * MRAIL_ADAPTIVE_EVEN_LEAVE split by the shares, and split evenly again
 * only once back within MRAIL_ADAPTIVE_EVEN_ENTER; between the two, each
 * keeps what it did. */
Test(adaptive, even_splitting_is_left_and_taken_again_with_hysteresis)
{
	struct mrail_rail_sample wide[2] = { { 300, 1.0 }, { 100, 1.0 } };
	struct mrail_rail_sample mid[2] = { { 535, 1.0 }, { 465, 1.0 } };
	struct mrail_rail_sample near[2] = { { 510, 1.0 }, { 490, 1.0 } };
	struct mrail_adaptive ad;

	/* Within LEAVE (0.535 < 0.55) from even: still even. */
	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.0), 0);
	cr_assert_eq(mrail_adaptive_update(&ad, mid, 2), 0);
	cr_assert_eq(mrail_adaptive_plan(&ad, MIB, 16 * KIB, 4096, out), 2);
	expect_stripe(0, 0, 0, 512 * KIB);
	/* Out of LEAVE: by the shares, 3:1. */
	cr_assert_eq(mrail_adaptive_update(&ad, wide, 2), 0);
	cr_assert_eq(mrail_adaptive_plan(&ad, MIB, 16 * KIB, 4096, out), 2);
	expect_stripe(0, 0, 0, 768 * KIB);
	/* Back within LEAVE but not ENTER (0.535 > 0.525): by the shares. */
	cr_assert_eq(mrail_adaptive_update(&ad, mid, 2), 0);
	cr_assert_eq(mrail_adaptive_plan(&ad, MIB, 16 * KIB, 4096, out), 2);
	cr_expect_neq(out[0].len, 512 * KIB);
	/* Within ENTER: even again. */
	cr_assert_eq(mrail_adaptive_update(&ad, near, 2), 0);
	cr_assert_eq(mrail_adaptive_plan(&ad, MIB, 16 * KIB, 4096, out), 2);
	cr_expect_eq(out[0].len, 512 * KIB);
	cr_expect_eq(out[1].len, 512 * KIB);
}

/* ---- adaptive striping over rails with queues ---- */

/* No queue: exactly mrail_adaptive_plan. */
Test(adaptive_queued, empty_queues_plan_by_the_shares)
{
	static const uint64_t none[2] = { 0, 0 };
	struct mrail_rail_sample s[2] = { { 300, 1.0 }, { 100, 1.0 } };
	struct mrail_adaptive a, b;
	struct mrail_stripe plain[MRAIL_MAX_RAILS];

	cr_assert_eq(mrail_adaptive_init(&a, 2, 0.0), 0);
	cr_assert_eq(mrail_adaptive_update(&a, s, 2), 0);
	b = a;
	for (int i = 0; i < 20; i++) {
		uint64_t len = (i % 3 == 0) ? 16 * KIB : MIB;
		int n = mrail_adaptive_plan(&a, len, 16 * KIB, 4096, plain);

		cr_assert_eq(mrail_adaptive_plan_queued(&b, len, none, 16 * KIB, 4096, out), n);
		for (int k = 0; k < n; k++)
			expect_stripe(k, plain[k].rail, plain[k].offset, plain[k].len);
	}
}

/* Shares 3:1, rail 1 64 KiB behind: 1 MiB more ends both queues together
 * if rail 0 takes 816 KiB and rail 1 208 KiB (by the shares alone: 768 and
 * 256). (Equal shares split evenly and ignore the queues.) */
Test(adaptive_queued, a_rail_behind_gets_less)
{
	static const uint64_t queued[2] = { 0, 64 * KIB };
	struct mrail_rail_sample s[2] = { { 300, 1.0 }, { 100, 1.0 } };
	struct mrail_adaptive ad;

	cr_assert_eq(mrail_adaptive_init(&ad, 2, 0.0), 0);
	cr_assert_eq(mrail_adaptive_update(&ad, s, 2), 0);
	cr_assert_eq(mrail_adaptive_plan_queued(&ad, MIB, queued, 16 * KIB, 4096, out), 2);
	expect_stripe(0, 0, 0, 816 * KIB);
	expect_stripe(1, 1, 816 * KIB, 208 * KIB);
}

/* A rail whose queue alone ends after the others would have moved the
 * whole transfer gets none of it; a short transfer goes to the rail that
 * ends it first, not by turns. */
Test(adaptive_queued, a_rail_far_behind_gets_nothing_and_short_ones_go_first_free)
{
	static const uint64_t far[3] = { 4 * MIB, 0, 8 * MIB };
	struct mrail_rail_sample s[3] = { { 200, 1.0 }, { 100, 1.0 }, { 100, 1.0 } };
	struct mrail_adaptive ad;

	/* Shares 0.5, 0.25, 0.25: rail 0 ends its queue at 8 MiB of the
	 * total rate, rail 2 at 32, and rail 1 moves 1 MiB by 4. */
	cr_assert_eq(mrail_adaptive_init(&ad, 3, 0.0), 0);
	cr_assert_eq(mrail_adaptive_update(&ad, s, 3), 0);
	cr_assert_eq(mrail_adaptive_plan_queued(&ad, MIB, far, 16 * KIB, 4096, out), 1);
	expect_stripe(0, 1, 0, MIB);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(mrail_adaptive_plan_queued(&ad, 16 * KIB, far, 16 * KIB,
							4096, out), 1);
		expect_stripe(0, 1, 0, 16 * KIB);
	}
}

/* Within MRAIL_ADAPTIVE_EVEN_LEAVE of even shares. */
static bool shares_near_even(const double *share, size_t rails)
{
	for (size_t r = 0; r < rails; r++)
		if (fabs(share[r] - 1.0 / (double) rails) >
		    MRAIL_ADAPTIVE_EVEN_LEAVE / (double) rails)
			return false;
	return true;
}

/*
 * Random shares and queues: the rails that get a stripe end together
 * (queued + stripe over share, within alignment and the minimum stripe's
 * redistribution), and no rail left out would have ended before them.
 */
Test(adaptive_queued, random_queues_end_together)
{
	uint64_t rng = 0x51c0ffeeULL;

	for (int iter = 0; iter < 5000; iter++) {
		size_t rails = 2 + (size_t) test_rng_below(&rng, MRAIL_MAX_RAILS - 1);
		struct mrail_rail_sample s[MRAIL_MAX_RAILS];
		uint64_t queued[MRAIL_MAX_RAILS], len = MIB + test_rng_below(&rng, 15 * MIB);
		double share[MRAIL_MAX_RAILS], end_lo = INFINITY, end_hi = 0.0;
		double min_share = 1.0, tol;
		bool used[MRAIL_MAX_RAILS] = { false };
		struct mrail_adaptive ad;
		int n;

		for (size_t r = 0; r < rails; r++) {
			s[r].bytes = 100 + test_rng_below(&rng, 900);
			s[r].seconds = 1.0;
			queued[r] = test_rng_below(&rng, 4) ? test_rng_below(&rng, 8 * MIB) : 0;
		}
		cr_assert_eq(mrail_adaptive_init(&ad, rails, 0.0), 0);
		cr_assert_eq(mrail_adaptive_update(&ad, s, rails), 0);
		mrail_adaptive_shares(&ad, share);
		/* Shares near even split evenly (tested above). */
		if (shares_near_even(share, rails))
			continue;
		/* 1-byte minimum stripe and alignment: the split is exact
		 * up to the weights' integer scale. */
		n = mrail_adaptive_plan_queued(&ad, len, queued, 1, 1, out);
		cr_assert_gt(n, 0);
		/* The stripes follow integer weights of scale
		 * MRAIL_ADAPTIVE_SCALE: each rail's bytes may be off by
		 * about rails / SCALE of len, its end by that over its share. */
		for (size_t r = 0; r < rails; r++)
			min_share = share[r] < min_share ? share[r] : min_share;
		tol = 2.0 * (double) rails * (double) len / MRAIL_ADAPTIVE_SCALE / min_share;
		for (int i = 0; i < n; i++) {
			double end = (double) (queued[out[i].rail] + out[i].len) /
				     share[out[i].rail];

			used[out[i].rail] = true;
			end_lo = end < end_lo ? end : end_lo;
			end_hi = end > end_hi ? end : end_hi;
		}
		cr_assert_leq(end_hi - end_lo, tol, "iter %d: ends %g..%g (tolerance %g)",
			      iter, end_lo, end_hi, tol);
		for (size_t r = 0; r < rails; r++)
			if (!used[r])
				cr_assert_geq((double) queued[r] / share[r], end_lo - tol,
					      "iter %d: rail %zu left out", iter, r);
	}
}
