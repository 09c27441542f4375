/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/barrier_model.c: the least-squares fit of Yu et al.'s (2003)
 * T = T_init + (ceil(log2 N) - 1) * T_trig + T_adj on exact data, on data
 * with fixed-seed noise, and its refusals.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "barrier_model.h"

Test(barrier_model, exact)
{
	uint32_t n[15];
	double t[15];
	struct mrail_barrier_model m;
	char err[160];
	size_t i;

	/* a = T_init + T_adj = 3 + 2, b = T_trig = 2.5, N = 2..16. */
	for (i = 0; i < 15; i++) {
		n[i] = (uint32_t) i + 2;
		t[i] = 3.0 + 2.0 + mrail_barrier_model_x(n[i]) * 2.5;
	}
	cr_assert_eq(mrail_barrier_model_fit(n, t, 15, &m, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_float_eq(m.a, 5.0, 1e-12);
	cr_assert_float_eq(m.b, 2.5, 1e-12);
	cr_assert_float_eq(m.rss, 0.0, 1e-20);
	cr_assert_float_eq(m.r2, 1.0, 1e-12);
	cr_assert_eq(m.samples, 15);
	/* ceil(log2 1024) - 1 = 9. */
	cr_assert_float_eq(mrail_barrier_model_predict(&m, 1024), 27.5, 1e-9);
	cr_assert_float_eq(mrail_barrier_model_predict(&m, 1000), 27.5, 1e-9);
	cr_assert_float_eq(mrail_barrier_model_predict(&m, 1025), 30.0, 1e-9);
	cr_assert_float_eq(mrail_barrier_model_x(1), -1.0, 0);
	cr_assert_float_eq(mrail_barrier_model_x(2), 0.0, 0);
}

Test(barrier_model, noise)
{
	static const uint32_t sizes[] = { 2, 3, 4, 6, 8, 12, 16 };
	uint32_t n[700];
	double t[700], noise;
	struct mrail_barrier_model m;
	uint64_t rng = 0xdeadbeefcafef00dull;
	size_t i;

	/* 100 samples per size, noise uniform in [-20, 20] around
	 * a = 80, b = 30 (microseconds, say). */
	for (i = 0; i < 700; i++) {
		n[i] = sizes[i % 7];
		noise = ((double) test_rng_below(&rng, 40001) - 20000.0) / 1000.0;
		t[i] = 80.0 + mrail_barrier_model_x(n[i]) * 30.0 + noise;
	}
	cr_assert_eq(mrail_barrier_model_fit(n, t, 700, &m, NULL, 0), 0);
	/* Standard errors here are about 1 (a) and 0.5 (b). */
	cr_assert_float_eq(m.a, 80.0, 4.0, "a = %f", m.a);
	cr_assert_float_eq(m.b, 30.0, 2.0, "b = %f", m.b);
	cr_assert_gt(m.rss, 0.0);
	cr_assert(m.r2 > 0.8 && m.r2 < 1.0, "r2 = %f", m.r2);
	cr_assert_float_eq(mrail_barrier_model_predict(&m, 1024),
			   80.0 + 9 * 30.0, 25.0);
}

Test(barrier_model, refusals)
{
	uint32_t n[3] = { 3, 4, 0 }, two[2] = { 2, 4 };
	double t[3] = { 1, 2, 3 }, bad[2] = { 1, 0 };
	struct mrail_barrier_model m;
	char err[200];

	cr_assert_eq(mrail_barrier_model_fit(n, t, 1, &m, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "two samples"), "%s", err);
	/* 3 and 4 share ceil(log2 N) = 2: no slope. */
	cr_assert_eq(mrail_barrier_model_fit(n, t, 2, &m, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "same ceil(log2 N)"), "%s", err);
	cr_assert_eq(mrail_barrier_model_fit(n, t, 3, &m, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "sample 2"), "%s", err);
	bad[1] = __builtin_nan("");
	cr_assert_eq(mrail_barrier_model_fit(two, bad, 2, &m, err,
					     sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "finite"), "%s", err);
	bad[1] = __builtin_inf();
	cr_assert_eq(mrail_barrier_model_fit(two, bad, 2, &m, err,
					     sizeof(err)), -EINVAL);
	/* A flat line is a fit with r2 = 1. */
	bad[1] = 1;
	cr_assert_eq(mrail_barrier_model_fit(two, bad, 2, &m, err,
					     sizeof(err)), 0);
	cr_assert_float_eq(m.b, 0.0, 0);
	cr_assert_float_eq(m.r2, 1.0, 0);
}
