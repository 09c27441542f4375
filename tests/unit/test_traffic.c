/* SPDX-License-Identifier: BSD-2-Clause */
/* fi_mrail_traffic's arithmetic: patterns, random draws, payload, histogram. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mrail_traffic.h"

static const enum traffic_pattern perms[] = {
	TRAFFIC_BITREV, TRAFFIC_BUTTERFLY, TRAFFIC_COMPLEMENT, TRAFFIC_TRANSPOSE,
	TRAFFIC_SHUFFLE, TRAFFIC_NEIGHBOUR,
};
#define NPERMS (sizeof(perms) / sizeof(perms[0]))

Test(traffic, pattern_names_round_trip_and_unknown_ones_are_refused)
{
	enum traffic_pattern p = TRAFFIC_HOTSPOT;
	int i;

	for (i = 0; i < TRAFFIC_NPATTERNS; i++) {
		cr_assert_eq(traffic_pattern_parse(traffic_pattern_name((enum traffic_pattern) i),
						   &p), 0);
		cr_assert_eq(p, (enum traffic_pattern) i);
	}
	p = TRAFFIC_HOTSPOT;
	cr_assert_lt(traffic_pattern_parse("bit-reversal", &p), 0);
	cr_assert_lt(traffic_pattern_parse("", &p), 0);
	cr_assert_lt(traffic_pattern_parse("Uniform", &p), 0);
	cr_assert_eq(p, TRAFFIC_HOTSPOT, "a refused name changed the output");
}

Test(traffic, permutations_at_n8_map_as_their_formulas_say)
{
	/* bitrev: 001 -> 100, 011 -> 110, 110 -> 011 */
	cr_assert_eq(traffic_perm(TRAFFIC_BITREV, 8, 1), 4);
	cr_assert_eq(traffic_perm(TRAFFIC_BITREV, 8, 3), 6);
	cr_assert_eq(traffic_perm(TRAFFIC_BITREV, 8, 6), 3);
	cr_assert_eq(traffic_perm(TRAFFIC_BITREV, 8, 5), 5);
	/* butterfly: 001 -> 100, 110 -> 011, 010 -> 010 */
	cr_assert_eq(traffic_perm(TRAFFIC_BUTTERFLY, 8, 1), 4);
	cr_assert_eq(traffic_perm(TRAFFIC_BUTTERFLY, 8, 6), 3);
	cr_assert_eq(traffic_perm(TRAFFIC_BUTTERFLY, 8, 2), 2);
	/* complement */
	cr_assert_eq(traffic_perm(TRAFFIC_COMPLEMENT, 8, 0), 7);
	cr_assert_eq(traffic_perm(TRAFFIC_COMPLEMENT, 8, 5), 2);
	/* transpose at b = 3: rotate left by 2; 001 -> 100, 100 -> 010 */
	cr_assert_eq(traffic_perm(TRAFFIC_TRANSPOSE, 8, 1), 4);
	cr_assert_eq(traffic_perm(TRAFFIC_TRANSPOSE, 8, 4), 2);
	/* shuffle: rotate left by 1; 100 -> 001, 011 -> 110 */
	cr_assert_eq(traffic_perm(TRAFFIC_SHUFFLE, 8, 4), 1);
	cr_assert_eq(traffic_perm(TRAFFIC_SHUFFLE, 8, 3), 6);
	/* neighbour */
	cr_assert_eq(traffic_perm(TRAFFIC_NEIGHBOUR, 8, 7), 0);
	cr_assert_eq(traffic_perm(TRAFFIC_NEIGHBOUR, 8, 2), 3);
}

Test(traffic, transpose_at_n16_swaps_the_two_halves_of_the_index)
{
	unsigned i;

	for (i = 0; i < 16; i++)
		cr_assert_eq(traffic_perm(TRAFFIC_TRANSPOSE, 16, i), ((i & 3) << 2) | (i >> 2),
			     "transpose(%u)", i);
}

Test(traffic, every_permutation_is_a_bijection_for_every_power_of_two)
{
	unsigned n, i, k, image;
	bool seen[TRAFFIC_MAX_HOSTS];

	for (n = 2; n <= TRAFFIC_MAX_HOSTS; n *= 2) {
		for (k = 0; k < NPERMS; k++) {
			memset(seen, 0, sizeof(seen));
			for (i = 0; i < n; i++) {
				image = traffic_perm(perms[k], n, i);
				cr_assert_lt(image, n, "%s(%u) at n=%u is out of range",
					     traffic_pattern_name(perms[k]), i, n);
				cr_assert_not(seen[image], "%s hits %u twice at n=%u",
					      traffic_pattern_name(perms[k]), image, n);
				seen[image] = true;
			}
		}
	}
}

Test(traffic, hosts_a_permutation_fixes_send_nothing)
{
	struct traffic_dest d = { .pattern = TRAFFIC_BITREV, .n = 8 };
	unsigned i, senders = 0;

	for (i = 0; i < 8; i++) {
		d.self = i;
		if (traffic_dest_sends(&d))
			senders++;
		else
			cr_assert(i == 0 || i == 2 || i == 5 || i == 7, "bitrev fixes %u", i);
	}
	/* 000, 010, 101 and 111 are palindromes. */
	cr_assert_eq(senders, 4);
	d.pattern = TRAFFIC_COMPLEMENT;
	for (i = 0; i < 8; i++) {
		d.self = i;
		cr_assert(traffic_dest_sends(&d));
	}
}

Test(traffic, random_patterns_never_pick_self_and_reach_every_other_host)
{
	struct traffic_dest d = { .pattern = TRAFFIC_UNIFORM, .n = 8, .self = 3 };
	struct traffic_rng r;
	unsigned hits[8] = { 0 }, i, dst;

	traffic_rng_seed(&r, 7);
	for (i = 0; i < 70000; i++) {
		dst = traffic_dest_next(&d, &r);
		cr_assert_lt(dst, 8);
		cr_assert_neq(dst, 3);
		hits[dst]++;
	}
	for (i = 0; i < 8; i++)
		if (i != 3)	/* 10000 expected, sd 93 */
			cr_assert(hits[i] > 9500 && hits[i] < 10500, "host %u: %u", i, hits[i]);
}

Test(traffic, hotspot_sends_its_fraction_to_host_0)
{
	struct traffic_dest d = { .pattern = TRAFFIC_HOTSPOT, .n = 4, .self = 2,
				  .hot_fraction = 0.2 };
	struct traffic_rng r;
	unsigned hits[4] = { 0 }, i;
	const unsigned draws = 100000;

	traffic_rng_seed(&r, 11);
	for (i = 0; i < draws; i++)
		hits[traffic_dest_next(&d, &r)]++;
	cr_assert_eq(hits[2], 0);
	/* 0.2 + 0.8 / 3 = 0.4667 to host 0, 0.2667 to each of the others. */
	cr_assert(fabs(hits[0] / (double) draws - 0.4667) < 0.01, "host 0: %u", hits[0]);
	cr_assert(fabs(hits[1] / (double) draws - 0.2667) < 0.01, "host 1: %u", hits[1]);
	/* Host 0 itself spreads uniformly. */
	d.self = 0;
	memset(hits, 0, sizeof(hits));
	for (i = 0; i < draws; i++)
		hits[traffic_dest_next(&d, &r)]++;
	cr_assert_eq(hits[0], 0);
	for (i = 1; i < 4; i++)
		cr_assert(fabs(hits[i] / (double) draws - 1.0 / 3) < 0.01, "host %u", i);
}

Test(traffic, hotspots_spread_the_fraction_over_the_hot_hosts_but_self)
{
	struct traffic_dest d = { .pattern = TRAFFIC_HOTSPOTS, .n = 8, .self = 1,
				  .hot_fraction = 0.5, .hot_count = 3 };
	struct traffic_rng r;
	unsigned hits[8] = { 0 }, i;
	const unsigned draws = 140000;

	traffic_rng_seed(&r, 5);
	for (i = 0; i < draws; i++)
		hits[traffic_dest_next(&d, &r)]++;
	cr_assert_eq(hits[1], 0);
	/* Hot others 0 and 2: 0.5 / 2 + 0.5 / 7 = 0.3214 each; 0.0714 the rest. */
	cr_assert(fabs(hits[0] / (double) draws - 0.3214) < 0.01, "host 0: %u", hits[0]);
	cr_assert(fabs(hits[2] / (double) draws - 0.3214) < 0.01, "host 2: %u", hits[2]);
	for (i = 3; i < 8; i++)
		cr_assert(fabs(hits[i] / (double) draws - 0.0714) < 0.005, "host %u: %u", i,
			  hits[i]);
}

Test(traffic, a_seed_gives_the_same_stream_and_another_seed_another)
{
	struct traffic_rng a, b, c;
	unsigned i, same = 0;

	traffic_rng_seed(&a, 42);
	traffic_rng_seed(&b, 42);
	traffic_rng_seed(&c, 43);
	for (i = 0; i < 1000; i++) {
		uint64_t x = traffic_rng_next(&a);

		cr_assert_eq(x, traffic_rng_next(&b));
		same += x == traffic_rng_next(&c);
	}
	cr_assert_eq(same, 0);
}

Test(traffic, exponential_draws_have_the_mean_and_the_spread_of_the_law)
{
	struct traffic_rng r;
	const unsigned draws = 200000;
	double x, sum = 0, sum2 = 0, mean, var;
	unsigned i, above = 0;

	traffic_rng_seed(&r, 1);
	for (i = 0; i < draws; i++) {
		x = traffic_exp(&r, 1000.0);
		cr_assert(x >= 0 && isfinite(x));
		sum += x;
		sum2 += x * x;
		above += x > 1000.0;
	}
	mean = sum / draws;
	var = sum2 / draws - mean * mean;
	/* Standard error of the mean: 1000 / sqrt(200000) = 2.2. */
	cr_assert(fabs(mean - 1000.0) < 10.0, "mean %f", mean);
	/* Variance mean^2; P(X > mean) = 1/e. */
	cr_assert(fabs(sqrt(var) - 1000.0) < 20.0, "sd %f", sqrt(var));
	cr_assert(fabs(above / (double) draws - exp(-1.0)) < 0.005, "above %u", above);
}

Test(traffic, sizes_are_clamped_and_their_mean_is_the_closed_form)
{
	struct traffic_rng r;
	const unsigned draws = 200000;
	size_t min = 32, max = traffic_size_max(16384, 32), s;
	double sum = 0, expect;
	unsigned i, at_max = 0;

	cr_assert_eq(max, 8 * 16384);
	cr_assert_eq(traffic_size_max(512 * 1024, 32), TRAFFIC_MAX_MSG);
	cr_assert_eq(traffic_size_max(2, 32), 32);
	traffic_rng_seed(&r, 3);
	for (i = 0; i < draws; i++) {
		s = traffic_size_sample(&r, 16384.0, min, max);
		cr_assert(s >= min && s <= max);
		at_max += s == max;
		sum += (double) s;
	}
	expect = traffic_size_mean(16384.0, min, max);
	/* 32 + 16384 (e^-1/512 - e^-8) = 16378.5 */
	cr_assert(fabs(expect - 16378.5) < 1.0, "closed form %f", expect);
	cr_assert(fabs(sum / draws - expect) < 0.01 * expect, "mean %f, expected %f",
		  sum / draws, expect);
	/* P(X >= 8 mean) = e^-8: 67 of 200000. */
	cr_assert(at_max > 30 && at_max < 110, "%u at the cap", at_max);
}

Test(traffic, gap_and_rate_arithmetic)
{
	/* 16 KiB at 0.1 Gbit/s: 131072 bits every 1.31 ms. */
	cr_assert_float_eq(traffic_gap_ns(16384.0, 0.1), 1310720.0, 1e-6);
	cr_assert_float_eq(traffic_gap_ns(125.0, 1.0), 1000.0, 1e-9);
	cr_assert_float_eq(traffic_gbps(125000000, 1.0), 1.0, 1e-12);
	cr_assert_float_eq(traffic_gbps(250000000, 4.0), 0.5, 1e-12);
	cr_assert_float_eq(traffic_gbps(1000, 0.0), 0.0, 1e-12);
}

Test(traffic, payload_depends_on_source_sequence_and_offset)
{
	uint8_t a[4096], b[4096];
	size_t i, diff_src = 0, diff_seq = 0;

	traffic_fill(a, 1, 9, 0, sizeof(a));
	for (i = 0; i < sizeof(a); i++)
		cr_assert_eq(a[i], traffic_byte(1, 9, i));
	/* From an odd offset, too. */
	memset(b, 0, sizeof(b));
	traffic_fill(b, 1, 9, 13, 1000);
	cr_assert_eq(b[12], 0);
	cr_assert_eq(b[1000], 0);
	cr_assert_eq(memcmp(a + 13, b + 13, 1000 - 13), 0);
	cr_assert_eq(traffic_check(a, 1, 9, 0, sizeof(a)), sizeof(a));
	cr_assert_eq(traffic_check(b, 1, 9, 13, 1000), 1000);
	for (i = 0; i < sizeof(a); i++) {
		diff_src += traffic_byte(2, 9, i) != a[i];
		diff_seq += traffic_byte(1, 10, i) != a[i];
	}
	/* A byte agrees by chance 1 time in 256. */
	cr_assert_gt(diff_src, 4000);
	cr_assert_gt(diff_seq, 4000);
	/* Blocks of a message differ from each other: a misplaced stripe shows. */
	cr_assert_neq(memcmp(a, a + 1024, 1024), 0);
	a[777] ^= 0x10;
	cr_assert_eq(traffic_check(a, 1, 9, 0, sizeof(a)), 777);
	cr_assert_eq(traffic_check(a, 1, 9, 778, sizeof(a)), sizeof(a));
}

Test(traffic, histogram_quantiles_are_within_a_bucket_and_the_mean_exact)
{
	struct traffic_hist *h = calloc(1, sizeof(*h));
	uint64_t q;
	unsigned i;

	cr_assert_not_null(h);
	cr_assert_eq(traffic_hist_quantile(h, 0.5), 0);
	/* 1..1000 us */
	for (i = 1; i <= 1000; i++)
		traffic_hist_add(h, (uint64_t) i * 1000);
	cr_assert_eq(h->count, 1000);
	cr_assert_float_eq(traffic_hist_mean(h), 500500.0, 1e-6);
	q = traffic_hist_quantile(h, 0.5);
	cr_assert(q <= 500000 && q > 500000 * (1 - 1.0 / 32), "p50 %lu", (unsigned long) q);
	q = traffic_hist_quantile(h, 0.99);
	cr_assert(q <= 990000 && q > 990000 * (1 - 1.0 / 32), "p99 %lu", (unsigned long) q);
	q = traffic_hist_quantile(h, 1.0);
	cr_assert(q <= 1000000 && q > 1000000 * (1 - 1.0 / 32), "max %lu", (unsigned long) q);
	/* Small values are exact. */
	memset(h, 0, sizeof(*h));
	traffic_hist_add(h, 7);
	traffic_hist_add(h, 31);
	traffic_hist_add(h, 32);
	cr_assert_eq(traffic_hist_quantile(h, 0.3), 7);
	cr_assert_eq(traffic_hist_quantile(h, 0.6), 31);
	cr_assert_eq(traffic_hist_quantile(h, 1.0), 32);
	/* The largest value has a bucket. */
	traffic_hist_add(h, UINT64_MAX);
	cr_assert_gt(traffic_hist_quantile(h, 1.0), UINT64_MAX / 2);
	free(h);
}
