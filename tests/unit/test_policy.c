/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/policy.c: the multiplexing policies' exact pick
 * sequences, the local-dynamic rule under random loads, Select_Tx_NICs, the
 * name, weight and fraction parsers, and refusal of bad arguments.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdma/fi_ext_mrail.h>

#include "test_rng.h"

#include "policy.h"

/* The public header's enums are the same numbers as core's. */
_Static_assert((int) FI_MRAIL_MUX_RR == (int) MRAIL_MUX_RR &&
	       (int) FI_MRAIL_MUX_WEIGHTED == (int) MRAIL_MUX_WEIGHTED &&
	       (int) FI_MRAIL_MUX_WINDOW == (int) MRAIL_MUX_WINDOW &&
	       (int) FI_MRAIL_MUX_LOCAL_DYNAMIC == (int) MRAIL_MUX_LOCAL_DYNAMIC,
	       "fi_mrail_mux_policy and mrail_mux_policy differ");
_Static_assert((int) FI_MRAIL_STRIPE_EVEN == (int) MRAIL_STRIPE_EVEN &&
	       (int) FI_MRAIL_STRIPE_WEIGHTED == (int) MRAIL_STRIPE_WEIGHTED &&
	       (int) FI_MRAIL_STRIPE_ADAPTIVE == (int) MRAIL_STRIPE_ADAPTIVE &&
	       (int) FI_MRAIL_STRIPE_LOCAL_DYNAMIC == (int) MRAIL_STRIPE_LOCAL_DYNAMIC &&
	       (int) FI_MRAIL_STRIPE_DYNAMIC == (int) MRAIL_STRIPE_DYNAMIC &&
	       (int) FI_MRAIL_STRIPE_HYBRID == (int) MRAIL_STRIPE_HYBRID,
	       "fi_mrail_stripe_policy and mrail_stripe_policy differ");
_Static_assert((int) FI_MRAIL_MAX_RAILS == (int) MRAIL_MAX_RAILS, "rail limits differ");

static struct mrail_mux mux;

static void expect_sequence(const int *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = mrail_mux_pick(&mux, NULL);

		cr_expect_eq(got, want[i], "pick %zu: rail %d, expected %d", i, got,
			     want[i]);
	}
}

Test(mux, round_robin_cycles_the_rails)
{
	static const int want[] = { 0, 1, 2, 0, 1, 2, 0 };

	cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_RR, 3, NULL, 0), 0);
	expect_sequence(want, sizeof(want) / sizeof(want[0]));
}

Test(mux, one_rail_is_always_picked)
{
	cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_RR, 1, NULL, 0), 0);
	for (int i = 0; i < 5; i++)
		cr_expect_eq(mrail_mux_pick(&mux, NULL), 0);
}

Test(mux, weighted_three_to_one_interleaves)
{
	static const uint32_t w[] = { 3, 1 };
	static const int want[] = { 0, 0, 1, 0, 0, 0, 1, 0 };

	cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_WEIGHTED, 2, w, 0), 0);
	expect_sequence(want, sizeof(want) / sizeof(want[0]));
}

Test(mux, weighted_zero_weight_rail_is_never_picked)
{
	static const uint32_t w[] = { 1, 0, 2 };
	static const int want[] = { 2, 0, 2, 2, 0, 2 };

	cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_WEIGHTED, 3, w, 0), 0);
	expect_sequence(want, sizeof(want) / sizeof(want[0]));
}

/* Over every full cycle of sum(weights) picks, each rail exactly its weight,
 * for random weights (zeros included) on every rail count. */
Test(mux, weighted_proportions_are_exact_over_each_cycle)
{
	uint64_t rng = 0x3e16b7edULL;

	for (int iter = 0; iter < 300; iter++) {
		size_t rails = 1 + (size_t) test_rng_below(&rng, MRAIL_MAX_RAILS);
		uint32_t w[MRAIL_MAX_RAILS], total = 0;

		for (size_t r = 0; r < rails; r++) {
			w[r] = (uint32_t) test_rng_below(&rng, 9);
			total += w[r];
		}
		if (!total) {
			w[0] = 1;
			total = 1;
		}
		cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_WEIGHTED, rails, w, 0), 0);
		for (int cycle = 0; cycle < 3; cycle++) {
			uint32_t count[MRAIL_MAX_RAILS] = { 0 };

			for (uint32_t i = 0; i < total; i++) {
				int r = mrail_mux_pick(&mux, NULL);

				cr_assert(r >= 0 && (size_t) r < rails);
				count[r]++;
			}
			for (size_t r = 0; r < rails; r++)
				cr_assert_eq(count[r], w[r],
					     "iter %d cycle %d rail %zu: %u picks, weight %u",
					     iter, cycle, r, count[r], w[r]);
		}
	}
}

Test(mux, window_switches_every_w_messages)
{
	for (uint32_t window = 1; window <= 6; window++) {
		for (size_t rails = 1; rails <= 4; rails++) {
			cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_WINDOW, rails,
						    NULL, window), 0);
			for (uint32_t i = 0; i < 5 * window * rails; i++) {
				int want = (int) ((i / window) % rails);

				cr_assert_eq(mrail_mux_pick(&mux, NULL), want,
					     "W %u rails %zu message %u", window,
					     rails, i);
			}
		}
	}
}

Test(mux, local_dynamic_rotates_among_idle_rails)
{
	uint32_t out[4] = { 0, 0, 0, 0 };

	cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_LOCAL_DYNAMIC, 4, NULL, 0), 0);
	cr_expect_eq(mrail_mux_pick(&mux, out), 0);
	out[0] = 1;
	cr_expect_eq(mrail_mux_pick(&mux, out), 1);
	out[1] = 3;
	out[2] = 1;
	cr_expect_eq(mrail_mux_pick(&mux, out), 3);
	out[3] = 1;
	/* Everything busy: say so rather than pick a busy rail. */
	cr_expect_eq(mrail_mux_pick(&mux, out), -EAGAIN);
	out[1] = 0;
	cr_expect_eq(mrail_mux_pick(&mux, out), 1);
	cr_expect_eq(mrail_mux_pick(&mux, NULL), -EINVAL);
}

Test(mux, local_dynamic_never_picks_a_busy_rail_while_one_is_idle)
{
	uint64_t rng = 0x10ca1d7aULL;
	uint32_t seen[MRAIL_MAX_RAILS] = { 0 };

	cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_LOCAL_DYNAMIC, MRAIL_MAX_RAILS,
				    NULL, 0), 0);
	for (int iter = 0; iter < 100000; iter++) {
		uint32_t out[MRAIL_MAX_RAILS];
		bool any_idle = false;
		int r;

		for (int i = 0; i < MRAIL_MAX_RAILS; i++) {
			/* Mostly busy, so that the idle rails are few. */
			out[i] = test_rng_below(&rng, 4) ? (uint32_t) (1 + test_rng_below(&rng, 5)) : 0;
			any_idle |= !out[i];
		}
		r = mrail_mux_pick(&mux, out);
		if (!any_idle) {
			cr_assert_eq(r, -EAGAIN);
			continue;
		}
		cr_assert(r >= 0 && r < MRAIL_MAX_RAILS, "pick %d", r);
		cr_assert_eq(out[r], 0, "iter %d picked busy rail %d", iter, r);
		seen[r]++;
	}
	/* Fair: every rail is picked about equally often (1/8 each). */
	for (int i = 0; i < MRAIL_MAX_RAILS; i++)
		cr_expect_gt(seen[i], 7000, "rail %d picked %u times", i, seen[i]);
}

Test(mux, least_loaded_takes_the_lightest_and_rotates_ties)
{
	uint32_t out[3] = { 2, 1, 1 };

	cr_assert_eq(mrail_mux_init(&mux, MRAIL_MUX_LOCAL_DYNAMIC, 3, NULL, 0), 0);
	cr_expect_eq(mrail_mux_pick_least_loaded(&mux, out), 1);
	cr_expect_eq(mrail_mux_pick_least_loaded(&mux, out), 2);
	cr_expect_eq(mrail_mux_pick_least_loaded(&mux, out), 1);
	out[0] = 0;
	cr_expect_eq(mrail_mux_pick_least_loaded(&mux, out), 0);
	cr_expect_eq(mrail_mux_pick_least_loaded(&mux, NULL), -EINVAL);
}

Test(mux, bad_arguments_are_refused)
{
	static const uint32_t zero[MRAIL_MAX_RAILS + 1];
	static const uint32_t big[2] = { MRAIL_WEIGHT_MAX + 1, 1 };
	static const uint32_t ok[2] = { 1, 1 };

	cr_expect_eq(mrail_mux_init(&mux, MRAIL_MUX_RR, 0, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_mux_pick(&mux, NULL), -EINVAL);
	cr_expect_eq(mrail_mux_init(&mux, MRAIL_MUX_RR, MRAIL_MAX_RAILS + 1, NULL, 0),
		     -EINVAL);
	cr_expect_eq(mrail_mux_pick(&mux, NULL), -EINVAL);
	cr_expect_eq(mrail_mux_init(&mux, MRAIL_MUX_WEIGHTED, 2, zero, 0), -EINVAL);
	cr_expect_eq(mrail_mux_pick(&mux, NULL), -EINVAL);
	cr_expect_eq(mrail_mux_init(&mux, MRAIL_MUX_WEIGHTED, 2, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_mux_init(&mux, MRAIL_MUX_WEIGHTED, 2, big, 0), -EINVAL);
	cr_expect_eq(mrail_mux_init(&mux, MRAIL_MUX_WINDOW, 2, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_mux_init(&mux, MRAIL_MUX_COUNT, 2, ok, 1), -EINVAL);
	cr_expect_eq(mrail_mux_init(&mux, (enum mrail_mux_policy) -1, 2, ok, 1),
		     -EINVAL);
	cr_expect_eq(mrail_mux_init(NULL, MRAIL_MUX_RR, 2, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_mux_pick(NULL, NULL), -EINVAL);
	cr_expect_eq(mrail_mux_pick_least_loaded(NULL, zero), -EINVAL);
}

Test(select, ratio_chooses_how_many_idle_rails)
{
	uint8_t cursor = 0;
	uint32_t chosen;

	/* 4 candidates: ratio 0 -> 1, 0.5 -> 1 + round(1.5) = 3, 1 -> 4. */
	cr_expect_eq(mrail_select_rails(0xf, 4, 0.0, &cursor, &chosen), 1);
	cr_expect_eq(chosen, 0x1);
	cr_expect_eq(cursor, 1);
	cr_expect_eq(mrail_select_rails(0xf, 4, 0.5, &cursor, &chosen), 3);
	cr_expect_eq(chosen, 0xe);
	cr_expect_eq(cursor, 0);
	cr_expect_eq(mrail_select_rails(0xf, 4, 1.0, &cursor, &chosen), 4);
	cr_expect_eq(chosen, 0xf);
	cr_expect_eq(cursor, 0);
}

Test(select, starts_past_the_last_rail_chosen_and_skips_busy_ones)
{
	uint8_t cursor = 2;
	uint32_t chosen;

	/* Candidates 0, 1, 3 (rail 2 busy); 2 of them starting at rail 2. */
	cr_expect_eq(mrail_select_rails(0xb, 4, 0.5, &cursor, &chosen), 2);
	cr_expect_eq(chosen, 0x9);
	cr_expect_eq(cursor, 1);
	cr_expect_eq(mrail_select_rails(0xb, 4, 0.5, &cursor, &chosen), 2);
	cr_expect_eq(chosen, 0xa);
	cr_expect_eq(cursor, 0);
	/* Bits above rail_count are not rails. */
	cr_expect_eq(mrail_select_rails(0xf0, 4, 1.0, &cursor, &chosen), 0);
	cr_expect_eq(chosen, 0);
}

Test(select, idle_rails_mask)
{
	static const uint32_t out[5] = { 0, 3, 0, 0, 1 };

	cr_expect_eq(mrail_idle_rails(out, 5), 0xd);
	cr_expect_eq(mrail_idle_rails(out, 0), 0);
	cr_expect_eq(mrail_idle_rails(NULL, 5), 0);
	cr_expect_eq(mrail_idle_rails(out, MRAIL_MAX_RAILS + 1), 0);
}

Test(select, bad_arguments_are_refused)
{
	uint8_t cursor = 0, far = 4;
	uint32_t chosen;

	cr_expect_eq(mrail_select_rails(0xf, 4, NAN, &cursor, &chosen), -EINVAL);
	cr_expect_eq(mrail_select_rails(0xf, 4, -0.1, &cursor, &chosen), -EINVAL);
	cr_expect_eq(mrail_select_rails(0xf, 4, 1.5, &cursor, &chosen), -EINVAL);
	cr_expect_eq(mrail_select_rails(0xf, 0, 1.0, &cursor, &chosen), -EINVAL);
	cr_expect_eq(mrail_select_rails(0xf, MRAIL_MAX_RAILS + 1, 1.0, &cursor,
					&chosen), -EINVAL);
	cr_expect_eq(mrail_select_rails(0xf, 4, 1.0, &far, &chosen), -EINVAL);
	cr_expect_eq(mrail_select_rails(0xf, 4, 1.0, NULL, &chosen), -EINVAL);
	cr_expect_eq(mrail_select_rails(0xf, 4, 1.0, &cursor, NULL), -EINVAL);
}

Test(parse, every_policy_name_round_trips)
{
	char err[MRAIL_ERR_MAX];

	for (int i = 0; i < MRAIL_MUX_COUNT; i++) {
		enum mrail_mux_policy p;

		cr_assert_eq(mrail_mux_policy_parse(mrail_mux_policy_name(i), &p,
						    err, sizeof(err)), 0);
		cr_expect_eq((int) p, i);
	}
	for (int i = 0; i < MRAIL_STRIPE_COUNT; i++) {
		enum mrail_stripe_policy p;

		cr_assert_eq(mrail_stripe_policy_parse(mrail_stripe_policy_name(i),
						       &p, err, sizeof(err)), 0);
		cr_expect_eq((int) p, i);
	}
	cr_expect_str_eq(mrail_mux_policy_name(MRAIL_MUX_COUNT), "unknown");
	cr_expect_str_eq(mrail_stripe_policy_name(MRAIL_STRIPE_COUNT), "unknown");
}

Test(parse, names_and_blanks)
{
	enum mrail_mux_policy m;
	enum mrail_stripe_policy s;

	cr_expect_eq(mrail_mux_policy_parse(" window\t", &m, NULL, 0), 0);
	cr_expect_eq(m, MRAIL_MUX_WINDOW);
	cr_expect_eq(mrail_stripe_policy_parse("hybrid", &s, NULL, 0), 0);
	cr_expect_eq(s, MRAIL_STRIPE_HYBRID);
	cr_expect_eq(mrail_stripe_policy_parse("weighted", &s, NULL, 0), 0);
	cr_expect_eq(s, MRAIL_STRIPE_WEIGHTED);
	cr_expect_eq(mrail_mux_policy_parse("RR", &m, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_mux_policy_parse("", &m, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_mux_policy_parse("rrx", &m, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_mux_policy_parse(NULL, &m, NULL, 0), -EINVAL);
}

Test(parse, errors_name_the_bad_value_and_the_right_variable)
{
	enum mrail_mux_policy m;
	enum mrail_stripe_policy s;
	char err[MRAIL_ERR_MAX];

	cr_assert_eq(mrail_mux_policy_parse("fastest", &m, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'fastest'"), "%s", err);
	cr_expect(strstr(err, "local_dynamic"), "%s", err);
	cr_assert_eq(mrail_mux_policy_parse("adaptive", &m, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "FI_MRAIL_STRIPE_POLICY"), "%s", err);
	cr_assert_eq(mrail_stripe_policy_parse("window", &s, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'window'"), "%s", err);
	cr_expect(strstr(err, "FI_MRAIL_POLICY"), "%s", err);
	cr_assert_eq(mrail_stripe_policy_parse("evenly", &s, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'evenly'") && strstr(err, "hybrid"), "%s", err);
}

Test(parse, weights)
{
	uint32_t w[MRAIL_MAX_RAILS];
	char err[MRAIL_ERR_MAX];
	size_t n;

	cr_assert_eq(mrail_weights_parse("4,1", w, &n, err, sizeof(err)), 0);
	cr_expect_eq(n, 2);
	cr_expect_eq(w[0], 4);
	cr_expect_eq(w[1], 1);
	cr_assert_eq(mrail_weights_parse(" 10 , 0 ,3", w, &n, err, sizeof(err)), 0);
	cr_expect_eq(n, 3);
	cr_expect_eq(w[1], 0);
	cr_expect_eq(w[2], 3);
	cr_assert_eq(mrail_weights_parse("1,1,1,1,1,1,1,1", w, &n, NULL, 0), 0);
	cr_expect_eq(n, MRAIL_MAX_RAILS);

	cr_expect_eq(mrail_weights_parse("0,0", w, &n, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "every weight is 0"), "%s", err);
	cr_expect_eq(mrail_weights_parse("1,1,1,1,1,1,1,1,1", w, &n, err, sizeof(err)),
		     -EINVAL);
	cr_expect(strstr(err, "more than"), "%s", err);
	cr_expect_eq(mrail_weights_parse("4,-1", w, &n, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'4,-1'") && strstr(err, "weight 2"), "%s", err);
	cr_expect_eq(mrail_weights_parse("1048577", w, &n, err, sizeof(err)), -EINVAL);
	cr_expect_eq(mrail_weights_parse("99999999999999999999999", w, &n, NULL, 0),
		     -EINVAL);
	cr_expect_eq(mrail_weights_parse("", w, &n, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_weights_parse("1,", w, &n, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_weights_parse("1;2", w, &n, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_weights_parse("1.5", w, &n, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_weights_parse(NULL, w, &n, NULL, 0), -EINVAL);
}

Test(parse, fractions)
{
	char err[MRAIL_ERR_MAX];
	double v;

	cr_assert_eq(mrail_fraction_parse("0.5", false, &v, err, sizeof(err)), 0);
	cr_expect_eq(v, 0.5);
	cr_assert_eq(mrail_fraction_parse("0", false, &v, err, sizeof(err)), 0);
	cr_expect_eq(v, 0.0);
	cr_assert_eq(mrail_fraction_parse("1", true, &v, err, sizeof(err)), 0);
	cr_expect_eq(v, 1.0);
	cr_expect_eq(mrail_fraction_parse("1", false, &v, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'1'") && strstr(err, "[0, 1)"), "%s", err);
	cr_expect_eq(mrail_fraction_parse("-0.1", true, &v, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_fraction_parse("nan", true, &v, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_fraction_parse("inf", true, &v, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_fraction_parse("0.5x", true, &v, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "not a decimal number"), "%s", err);
	cr_expect_eq(mrail_fraction_parse("", true, &v, NULL, 0), -EINVAL);
	cr_expect_eq(mrail_fraction_parse(NULL, true, &v, NULL, 0), -EINVAL);
}
