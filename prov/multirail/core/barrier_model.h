/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Seed 002's barrier latency model, T = T_init + (ceil(log2 N) - 1) * T_trig
 * + T_adj, fitted by least squares to measured (N, T) samples and used to
 * extrapolate (the paper goes to 1024 processes).
 *
 * T_init (starting the barrier) and T_adj (the last round's adjustment) are
 * both constant in N, so a linear fit cannot tell them apart: the fit gives
 * the intercept a = T_init + T_adj and the slope b = T_trig. Reports should
 * say so rather than split a.
 */
#ifndef MRAIL_BARRIER_MODEL_H
#define MRAIL_BARRIER_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct mrail_barrier_model {
	double a;	/* T_init + T_adj */
	double b;	/* T_trig */
	double rss;	/* residual sum of squares */
	double r2;	/* 1 - rss / total sum of squares; 1 when T is constant */
	size_t samples;
};

/* The regressor of n: ceil(log2 n) - 1 (-1 for n = 1). */
double mrail_barrier_model_x(uint32_t n);

/*
 * Fits the model to count samples (n[i] >= 1, t[i] finite). Needs at least
 * two distinct values of ceil(log2 n), for example N = 2 and N = 4 (N = 3
 * and N = 4 are the same point of the model). Returns 0, or -EINVAL with a
 * sentence in err.
 */
int mrail_barrier_model_fit(const uint32_t *n, const double *t, size_t count,
			    struct mrail_barrier_model *model, char *err,
			    size_t err_len);

/* a + (ceil(log2 n) - 1) * b. */
double mrail_barrier_model_predict(const struct mrail_barrier_model *model,
				   uint32_t n);

#endif /* MRAIL_BARRIER_MODEL_H */
