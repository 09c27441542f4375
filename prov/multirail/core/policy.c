/* SPDX-License-Identifier: BSD-2-Clause */
#include "policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrail_err.h"

static const char *const mux_names[MRAIL_MUX_COUNT] = {
	[MRAIL_MUX_RR] = "rr",
	[MRAIL_MUX_WEIGHTED] = "weighted",
	[MRAIL_MUX_WINDOW] = "window",
	[MRAIL_MUX_LOCAL_DYNAMIC] = "local_dynamic",
};

static const char *const stripe_names[MRAIL_STRIPE_COUNT] = {
	[MRAIL_STRIPE_EVEN] = "even",
	[MRAIL_STRIPE_WEIGHTED] = "weighted",
	[MRAIL_STRIPE_ADAPTIVE] = "adaptive",
	[MRAIL_STRIPE_LOCAL_DYNAMIC] = "local_dynamic",
	[MRAIL_STRIPE_DYNAMIC] = "dynamic",
	[MRAIL_STRIPE_HYBRID] = "hybrid",
};

#define MUX_LIST "rr, weighted, window, local_dynamic"
#define STRIPE_LIST "even, weighted, adaptive, local_dynamic, dynamic, hybrid"

/* The text without surrounding blanks, as [*start, *start + *len). */
static void trim(const char *text, const char **start, size_t *len)
{
	size_t n = strlen(text);

	while (n && (*text == ' ' || *text == '\t')) {
		text++;
		n--;
	}
	while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
		n--;
	*start = text;
	*len = n;
}

static int find_name(const char *const *names, int count, const char *text)
{
	const char *s;
	size_t len;
	int i;

	trim(text, &s, &len);
	for (i = 0; i < count; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], s, len))
			return i;
	return -1;
}

int mrail_mux_policy_parse(const char *text, enum mrail_mux_policy *out,
			   char *err, size_t err_len)
{
	int i;

	if (!text || !out) {
		mrail_write_err(err, err_len, "no multiplexing policy given");
		return -EINVAL;
	}
	i = find_name(mux_names, MRAIL_MUX_COUNT, text);
	if (i >= 0) {
		*out = (enum mrail_mux_policy) i;
		return 0;
	}
	/* "dynamic" and "hybrid" reserve rails before striping: they only make
	 * sense for transfers that can wait for the reservation. */
	if (find_name(stripe_names, MRAIL_STRIPE_COUNT, text) >= 0)
		mrail_write_err(err, err_len,
				"'%s' is a striping policy, not a multiplexing one: "
				"set it in FI_MRAIL_STRIPE_POLICY; multiplexing "
				"policies are " MUX_LIST, text);
	else
		mrail_write_err(err, err_len,
				"unknown multiplexing policy '%s'; valid: " MUX_LIST,
				text);
	return -EINVAL;
}

int mrail_stripe_policy_parse(const char *text, enum mrail_stripe_policy *out,
			      char *err, size_t err_len)
{
	int i;

	if (!text || !out) {
		mrail_write_err(err, err_len, "no striping policy given");
		return -EINVAL;
	}
	i = find_name(stripe_names, MRAIL_STRIPE_COUNT, text);
	if (i >= 0) {
		*out = (enum mrail_stripe_policy) i;
		return 0;
	}
	if (find_name(mux_names, MRAIL_MUX_COUNT, text) >= 0)
		mrail_write_err(err, err_len,
				"'%s' is a multiplexing policy, not a striping one: "
				"set it in FI_MRAIL_POLICY; striping policies are "
				STRIPE_LIST, text);
	else
		mrail_write_err(err, err_len,
				"unknown striping policy '%s'; valid: " STRIPE_LIST,
				text);
	return -EINVAL;
}

const char *mrail_mux_policy_name(enum mrail_mux_policy policy)
{
	if ((unsigned) policy >= MRAIL_MUX_COUNT)
		return "unknown";
	return mux_names[policy];
}

const char *mrail_stripe_policy_name(enum mrail_stripe_policy policy)
{
	if ((unsigned) policy >= MRAIL_STRIPE_COUNT)
		return "unknown";
	return stripe_names[policy];
}

int mrail_weights_parse(const char *text, uint32_t weights[MRAIL_MAX_RAILS],
			size_t *count, char *err, size_t err_len)
{
	const char *p = text;
	uint64_t total = 0;
	size_t n = 0;

	if (!text || !weights || !count) {
		mrail_write_err(err, err_len, "no weights given");
		return -EINVAL;
	}
	for (;;) {
		unsigned long long v;
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		/* strtoull would accept a sign and wrap a negative value. */
		if (*p < '0' || *p > '9') {
			mrail_write_err(err, err_len,
					"weights '%s': weight %zu is not a "
					"decimal integer", text, n + 1);
			return -EINVAL;
		}
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || v > MRAIL_WEIGHT_MAX) {
			mrail_write_err(err, err_len,
					"weights '%s': weight %zu is above the "
					"largest, %u", text, n + 1, MRAIL_WEIGHT_MAX);
			return -EINVAL;
		}
		if (n == MRAIL_MAX_RAILS) {
			mrail_write_err(err, err_len,
					"weights '%s': more than %d weights, one "
					"per rail", text, MRAIL_MAX_RAILS);
			return -EINVAL;
		}
		weights[n++] = (uint32_t) v;
		total += v;
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (*p != ',') {
			mrail_write_err(err, err_len,
					"weights '%s': expected ',' after weight "
					"%zu", text, n);
			return -EINVAL;
		}
		p++;
	}
	if (!total) {
		mrail_write_err(err, err_len,
				"weights '%s': every weight is 0, no rail could "
				"carry data", text);
		return -EINVAL;
	}
	*count = n;
	return 0;
}

int mrail_fraction_parse(const char *text, bool allow_one, double *out,
			 char *err, size_t err_len)
{
	const char *range = allow_one ? "[0, 1]" : "[0, 1)";
	char *end;
	double v;

	if (!text || !out) {
		mrail_write_err(err, err_len, "no number given");
		return -EINVAL;
	}
	errno = 0;
	v = strtod(text, &end);
	while (*end == ' ' || *end == '\t')
		end++;
	if (end == text || *end || errno) {
		mrail_write_err(err, err_len, "'%s' is not a decimal number", text);
		return -EINVAL;
	}
	/* The comparisons are false for NaN, so NaN is refused too. */
	if (!(v >= 0.0 && (allow_one ? v <= 1.0 : v < 1.0))) {
		mrail_write_err(err, err_len, "'%s' is outside %s", text, range);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int mrail_mux_init(struct mrail_mux *mux, enum mrail_mux_policy policy,
		   size_t rail_count, const uint32_t *weights, uint32_t window)
{
	uint32_t total = 0;
	size_t i;

	if (!mux)
		return -EINVAL;
	memset(mux, 0, sizeof(*mux));
	/* rail_count 0 marks the state unusable until a good init. */
	if ((unsigned) policy >= MRAIL_MUX_COUNT || rail_count < 1 ||
	    rail_count > MRAIL_MAX_RAILS)
		return -EINVAL;
	if (policy == MRAIL_MUX_WEIGHTED) {
		if (!weights)
			return -EINVAL;
		for (i = 0; i < rail_count; i++) {
			if (weights[i] > MRAIL_WEIGHT_MAX)
				return -EINVAL;
			total += weights[i];
		}
		if (!total)
			return -EINVAL;
		memcpy(mux->weight, weights, rail_count * sizeof(*weights));
		mux->weight_total = total;
	}
	if (policy == MRAIL_MUX_WINDOW && !window)
		return -EINVAL;
	mux->policy = policy;
	mux->window = window;
	mux->rail_count = (uint8_t) rail_count;
	return 0;
}

/*
 * Smooth weighted round-robin: every rail earns its weight in credit per
 * pick, the richest rail is picked and pays the total. Over sum(weights)
 * picks each rail earns and pays exactly weight * total, so the credits
 * return to zero and the cycle repeats; in between, a rail is picked as soon
 * as it has earned its turn, which interleaves the rails.
 */
static int pick_weighted(struct mrail_mux *mux)
{
	int best = -1;
	size_t i;

	for (i = 0; i < mux->rail_count; i++) {
		if (!mux->weight[i])
			continue;
		mux->credit[i] += mux->weight[i];
		if (best < 0 || mux->credit[i] > mux->credit[best])
			best = (int) i;
	}
	mux->credit[best] -= mux->weight_total;
	return best;
}

static int pick_window(struct mrail_mux *mux)
{
	int rail;

	if (mux->sent_in_window == mux->window) {
		mux->next = (uint8_t) ((mux->next + 1) % mux->rail_count);
		mux->sent_in_window = 0;
	}
	rail = mux->next;
	mux->sent_in_window++;
	return rail;
}

static int pick_local_dynamic(struct mrail_mux *mux, const uint32_t *outstanding)
{
	size_t i, rail;

	if (!outstanding)
		return -EINVAL;
	for (i = 0; i < mux->rail_count; i++) {
		rail = (mux->next + i) % mux->rail_count;
		if (!outstanding[rail]) {
			mux->next = (uint8_t) ((rail + 1) % mux->rail_count);
			return (int) rail;
		}
	}
	return -EAGAIN;
}

int mrail_mux_pick(struct mrail_mux *mux, const uint32_t *outstanding)
{
	int rail;

	if (!mux || !mux->rail_count)
		return -EINVAL;
	switch (mux->policy) {
	case MRAIL_MUX_RR:
		rail = mux->next;
		mux->next = (uint8_t) ((rail + 1) % mux->rail_count);
		return rail;
	case MRAIL_MUX_WEIGHTED:
		return pick_weighted(mux);
	case MRAIL_MUX_WINDOW:
		return pick_window(mux);
	case MRAIL_MUX_LOCAL_DYNAMIC:
		return pick_local_dynamic(mux, outstanding);
	default:
		return -EINVAL;
	}
}

int mrail_mux_pick_least_loaded(struct mrail_mux *mux, const uint32_t *outstanding)
{
	size_t i, rail, best;

	if (!mux || !mux->rail_count || !outstanding)
		return -EINVAL;
	best = mux->next % mux->rail_count;
	for (i = 1; i < mux->rail_count; i++) {
		rail = (mux->next + i) % mux->rail_count;
		if (outstanding[rail] < outstanding[best])
			best = rail;
	}
	mux->next = (uint8_t) ((best + 1) % mux->rail_count);
	return (int) best;
}

uint32_t mrail_idle_rails(const uint32_t *outstanding, size_t rail_count)
{
	uint32_t idle = 0;
	size_t i;

	if (!outstanding || rail_count > MRAIL_MAX_RAILS)
		return 0;
	for (i = 0; i < rail_count; i++)
		if (!outstanding[i])
			idle |= 1u << i;
	return idle;
}

int mrail_select_rails(uint32_t candidates, size_t rail_count, double ratio,
		       uint8_t *cursor, uint32_t *chosen)
{
	unsigned n, k, taken = 0;
	size_t i, rail, start;

	if (!cursor || !chosen || rail_count < 1 || rail_count > MRAIL_MAX_RAILS ||
	    *cursor >= rail_count || !(ratio >= 0.0 && ratio <= 1.0))
		return -EINVAL;
	candidates &= (1u << rail_count) - 1;
	*chosen = 0;
	n = (unsigned) __builtin_popcount(candidates);
	if (!n)
		return 0;
	/* The cast truncates a non-negative value: rounds half up. */
	k = 1 + (unsigned) (ratio * (n - 1) + 0.5);
	start = *cursor;
	for (i = 0; i < rail_count && taken < k; i++) {
		rail = (start + i) % rail_count;
		if (!(candidates & (1u << rail)))
			continue;
		*chosen |= 1u << rail;
		taken++;
		*cursor = (uint8_t) ((rail + 1) % rail_count);
	}
	return (int) k;
}
