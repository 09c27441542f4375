/* SPDX-License-Identifier: BSD-2-Clause */
#include "barrier_model.h"
#include "barrier.h"
#include "mrail_err.h"

#include <errno.h>

double mrail_barrier_model_x(uint32_t n)
{
	return (double) mrail_barrier_ceil_log2(n) - 1.0;
}

int mrail_barrier_model_fit(const uint32_t *n, const double *t, size_t count,
			    struct mrail_barrier_model *model, char *err,
			    size_t err_len)
{
	double xbar = 0, ybar = 0, sxx = 0, sxy = 0, syy = 0, dx, dy, r;
	size_t i;

	if (count < 2) {
		mrail_write_err(err, err_len,
				"the barrier model needs at least two samples, not %zu",
				count);
		return -EINVAL;
	}
	for (i = 0; i < count; i++) {
		if (n[i] < 1) {
			mrail_write_err(err, err_len,
					"sample %zu: a barrier has at least one process",
					i);
			return -EINVAL;
		}
		if (!__builtin_isfinite(t[i])) {
			mrail_write_err(err, err_len,
					"sample %zu (N = %u): the time is not a finite number",
					i, n[i]);
			return -EINVAL;
		}
		xbar += mrail_barrier_model_x(n[i]);
		ybar += t[i];
	}
	xbar /= (double) count;
	ybar /= (double) count;
	/* Centered sums: no cancellation between large raw sums. */
	for (i = 0; i < count; i++) {
		dx = mrail_barrier_model_x(n[i]) - xbar;
		dy = t[i] - ybar;
		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	if (sxx == 0) {
		mrail_write_err(err, err_len,
				"every sample has the same ceil(log2 N): measure at least two of N = 2, 4, 8, ... to fit a slope");
		return -EINVAL;
	}
	model->b = sxy / sxx;
	model->a = ybar - model->b * xbar;
	model->rss = 0;
	for (i = 0; i < count; i++) {
		r = t[i] - mrail_barrier_model_predict(model, n[i]);
		model->rss += r * r;
	}
	model->r2 = syy > 0 ? 1.0 - model->rss / syy : 1.0;
	model->samples = count;
	return 0;
}

double mrail_barrier_model_predict(const struct mrail_barrier_model *model,
				   uint32_t n)
{
	return model->a + mrail_barrier_model_x(n) * model->b;
}
