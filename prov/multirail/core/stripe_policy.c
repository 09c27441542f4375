/* SPDX-License-Identifier: BSD-2-Clause */
#include "stripe_policy.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

static bool weights_ok(const uint32_t *weights, size_t rail_count)
{
	uint32_t total = 0;
	size_t i;

	if (!weights)
		return false;
	for (i = 0; i < rail_count; i++) {
		if (weights[i] > MRAIL_WEIGHT_MAX)
			return false;
		total += weights[i];
	}
	return total != 0;
}

/*
 * One split over the rails in active: stripe k ends at the aligned
 * cumulative proportion, the last at len, so rounding never accumulates and
 * the lengths sum to len. 128-bit products: len may be any uint64_t.
 */
static size_t split_once(uint64_t len, size_t rail_count, const uint32_t *weights,
			 uint32_t active, uint64_t align,
			 struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	uint64_t total = 0, cum = 0, start = 0, end;
	size_t i, n = 0;

	for (i = 0; i < rail_count; i++)
		if (active & (1u << i))
			total += weights[i];
	for (i = 0; i < rail_count; i++) {
		if (!(active & (1u << i)))
			continue;
		cum += weights[i];
		if (cum == total)
			end = len;
		else
			end = (uint64_t) ((unsigned __int128) len * cum / total) &
			      ~(align - 1);
		out[n].rail = (uint8_t) i;
		out[n].offset = start;
		out[n].len = end - start;
		start = end;
		n++;
	}
	return n;
}

/* The active rail to give up first: smallest weight, highest index. */
static size_t lightest_rail(const uint32_t *weights, size_t rail_count,
			    uint32_t active)
{
	size_t i, best = rail_count;

	for (i = 0; i < rail_count; i++)
		if ((active & (1u << i)) &&
		    (best == rail_count || weights[i] <= weights[best]))
			best = i;
	return best;
}

int mrail_stripe_weighted(uint64_t len, size_t rail_count, const uint32_t *weights,
			  uint64_t min_stripe, uint64_t align,
			  struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	uint32_t active = 0;
	size_t i, n;

	if (rail_count < 1 || rail_count > MRAIL_MAX_RAILS || !out ||
	    !weights_ok(weights, rail_count) || !min_stripe || !align ||
	    (align & (align - 1)))
		return -EINVAL;
	if (!len)
		return 0;
	for (i = 0; i < rail_count; i++)
		if (weights[i])
			active |= 1u << i;

	for (;;) {
		bool short_stripe = false;

		n = split_once(len, rail_count, weights, active, align, out);
		if (n == 1)
			return 1;
		for (i = 0; i < n; i++)
			short_stripe |= out[i].len < min_stripe || !out[i].len;
		if (!short_stripe)
			return (int) n;
		active &= ~(1u << lightest_rail(weights, rail_count, active));
	}
}

static bool adaptive_ok(const struct mrail_adaptive *ad)
{
	return ad && ad->rail_count >= 1 && ad->rail_count <= MRAIL_MAX_RAILS;
}

int mrail_adaptive_init(struct mrail_adaptive *ad, size_t rail_count, double alpha)
{
	size_t i;

	if (!ad)
		return -EINVAL;
	memset(ad, 0, sizeof(*ad));
	/* The negated test also refuses NaN. */
	if (rail_count < 1 || rail_count > MRAIL_MAX_RAILS ||
	    !(alpha >= 0.0 && alpha < 1.0))
		return -EINVAL;
	ad->rail_count = (uint8_t) rail_count;
	ad->alpha = alpha;
	for (i = 0; i < rail_count; i++)
		ad->share[i] = 1.0 / (double) rail_count;
	ad->even = true;
	return 0;
}

static void shares_to_weights(const struct mrail_adaptive *ad,
			      uint32_t weights[MRAIL_MAX_RAILS])
{
	size_t i;

	/* Shares are in [0, 1] and sum to 1: no weight exceeds the scale, and
	 * the largest share is at least 1/8, so not every weight is 0. */
	for (i = 0; i < ad->rail_count; i++)
		weights[i] = (uint32_t) (ad->share[i] * MRAIL_ADAPTIVE_SCALE + 0.5);
}

/* The rail left out longest, once it has been left out long enough. */
static int probe_due(const struct mrail_adaptive *ad, uint32_t used)
{
	int best = -1;
	size_t i;

	for (i = 0; i < ad->rail_count; i++) {
		if (used & (1u << i) ||
		    ad->left_out[i] < MRAIL_ADAPTIVE_PROBE_EVERY)
			continue;
		if (best < 0 || ad->left_out[i] > ad->left_out[best])
			best = (int) i;
	}
	return best;
}

/*
 * Gives rail the last min_stripe bytes (rounded up to align) and splits the
 * rest by weight over the others. Returns the stripe count, or 0 when len
 * cannot hold the probe beside a minimum stripe (the plan is then left as
 * it was).
 */
static int plan_probe(uint64_t len, size_t rail_count, const uint32_t *weights,
		      size_t rail, uint64_t min_stripe, uint64_t align,
		      struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	struct mrail_stripe probe_out[MRAIL_MAX_RAILS];
	uint32_t others[MRAIL_MAX_RAILS];
	uint64_t probe_len, rest;
	int n;

	probe_len = mrail_stripe_align_up(min_stripe, align);
	if (!probe_len || len <= probe_len)
		return 0;
	rest = (len - probe_len) & ~(align - 1);
	if (rest < min_stripe || !rest)
		return 0;
	memcpy(others, weights, rail_count * sizeof(*others));
	others[rail] = 0;
	n = mrail_stripe_weighted(rest, rail_count, others, min_stripe, align,
				  probe_out);
	if (n <= 0)
		return 0;
	probe_out[n].rail = (uint8_t) rail;
	probe_out[n].offset = rest;
	probe_out[n].len = len - rest;
	memcpy(out, probe_out, (size_t) (n + 1) * sizeof(*out));
	return n + 1;
}

/* The rail of a short transfer (see stripe_policy.h): smooth weighted
 * round-robin over the shares of the rails not too slow for one. */
static uint8_t short_transfer_rail(struct mrail_adaptive *ad)
{
	double top = 0.0, total = 0.0;
	size_t i, best = ad->rail_count;

	for (i = 0; i < ad->rail_count; i++)
		if (ad->share[i] > top)
			top = ad->share[i];
	for (i = 0; i < ad->rail_count; i++) {
		if (ad->share[i] * MRAIL_ADAPTIVE_SHORT_RATIO < top)
			continue;
		ad->credit[i] += ad->share[i];
		total += ad->share[i];
		if (best == ad->rail_count || ad->credit[i] > ad->credit[best])
			best = i;
	}
	ad->credit[best] -= total;
	return (uint8_t) best;
}

/*
 * Weights that let every rail end its queue and its part of len together,
 * each rail working at its share of the total rate: the water level T
 * (bytes of the total rate) with sum over the rails of
 * max(0, share * T - queued) = len, found by adding the rails in the order
 * their queues end. A rail whose queue ends after T gets nothing.
 */
static void weights_queued(const struct mrail_adaptive *ad, uint64_t len,
			   const uint64_t *queued, uint32_t weights[MRAIL_MAX_RAILS])
{
	double ends[MRAIL_MAX_RAILS], level = 0.0, share_sum = 0.0;
	double bytes = (double) len;
	uint32_t active = 0;
	size_t i, k;

	for (i = 0; i < ad->rail_count; i++) {
		weights[i] = 0;
		ends[i] = ad->share[i] > 0.0 ? (double) queued[i] / ad->share[i]
					      : INFINITY;
	}
	for (k = 0; k < ad->rail_count; k++) {
		size_t next = ad->rail_count;

		for (i = 0; i < ad->rail_count; i++)
			if (!(active & (1u << i)) && isfinite(ends[i]) &&
			    (next == ad->rail_count || ends[i] < ends[next]))
				next = i;
		/* The next rail's queue ends after the level: done. */
		if (next == ad->rail_count || (active && ends[next] >= level))
			break;
		active |= 1u << next;
		bytes += (double) queued[next];
		share_sum += ad->share[next];
		level = bytes / share_sum;
	}
	for (i = 0; i < ad->rail_count; i++) {
		double part;

		if (!(active & (1u << i)))
			continue;
		part = ad->share[i] * level - (double) queued[i];
		if (part > 0.0)
			weights[i] = (uint32_t) (part / (double) len *
						 MRAIL_ADAPTIVE_SCALE + 0.5);
	}
}

/* Every share within band (a fraction) of an equal one. */
static bool shares_within(const struct mrail_adaptive *ad, double band)
{
	double equal = 1.0 / (double) ad->rail_count;
	size_t i;

	for (i = 0; i < ad->rail_count; i++)
		if (fabs(ad->share[i] - equal) > band * equal)
			return false;
	return true;
}

/*
 * Even striping, as the even policy does it (its minimum stripe rounded up
 * to align), the first rail in turn. A transfer that goes whole on one rail
 * takes instead the rail with the least queued when the one in turn has
 * more than two such transfers above it: over rails of different speed
 * whose shares have not yet left the band (the meter needs a window or
 * more), a stream of short transfers would otherwise go at the slow
 * rail's pace, while the queues show at once which rail keeps up.
 */
static int plan_even(struct mrail_adaptive *ad, uint64_t len, const uint64_t *queued,
		     uint64_t min_stripe, uint64_t align,
		     struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	size_t i, least = 0;
	int n;

	n = mrail_stripe_even(len, ad->rail_count, ad->even_next,
			      mrail_stripe_align_up(min_stripe, align), align, out);
	if (n > 0)
		ad->even_next = (uint8_t) ((ad->even_next + 1) % ad->rail_count);
	if (n != 1 || !queued)
		return n;
	for (i = 1; i < ad->rail_count; i++)
		if (queued[i] < queued[least])
			least = i;
	if (queued[out[0].rail] - queued[least] > 2 * len)
		out[0].rail = (uint8_t) least;
	return n;
}

int mrail_adaptive_plan_queued(struct mrail_adaptive *ad, uint64_t len,
			       const uint64_t *queued, uint64_t min_stripe,
			       uint64_t align, struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	uint32_t weights[MRAIL_MAX_RAILS], used = 0, total = 0;
	bool any_queued = false;
	int n, i, probe;

	if (!adaptive_ok(ad))
		return -EINVAL;
	ad->even = shares_within(ad, ad->even ? MRAIL_ADAPTIVE_EVEN_LEAVE
					       : MRAIL_ADAPTIVE_EVEN_ENTER);
	if (ad->even)
		return plan_even(ad, len, queued, min_stripe, align, out);
	for (i = 0; queued && i < ad->rail_count; i++)
		any_queued |= queued[i] != 0;
	if (any_queued && len) {
		weights_queued(ad, len, queued, weights);
		for (i = 0; i < ad->rail_count; i++)
			total += weights[i];
	}
	/* No queue, or one so lopsided that every part rounds to 0: the
	 * shares alone. */
	if (!total)
		shares_to_weights(ad, weights);
	n = mrail_stripe_weighted(len, ad->rail_count, weights, min_stripe, align,
				  out);
	if (n <= 0)
		return n;
	/* Unqueued rails take short transfers in turn; with queues, the
	 * split above already gave it to the rail that ends first. */
	if (n == 1 && !total)
		out[0].rail = short_transfer_rail(ad);
	for (i = 0; i < n; i++)
		used |= 1u << out[i].rail;
	probe = probe_due(ad, used);
	if (probe >= 0) {
		int probed = plan_probe(len, ad->rail_count, weights, (size_t) probe,
					min_stripe, align, out);

		if (probed > 0) {
			n = probed;
			used = 0;
			for (i = 0; i < n; i++)
				used |= 1u << out[i].rail;
		}
	}
	for (i = 0; i < ad->rail_count; i++) {
		if (used & (1u << i))
			ad->left_out[i] = 0;
		else if (ad->left_out[i] < UINT32_MAX)
			ad->left_out[i]++;
	}
	return n;
}

int mrail_adaptive_plan(struct mrail_adaptive *ad, uint64_t len,
			uint64_t min_stripe, uint64_t align,
			struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	return mrail_adaptive_plan_queued(ad, len, NULL, min_stripe, align, out);
}

int mrail_adaptive_update(struct mrail_adaptive *ad,
			  const struct mrail_rail_sample *samples, size_t count)
{
	double rate[MRAIL_MAX_RAILS], rate_sum = 0.0, measured_share = 0.0, sum;
	bool measured[MRAIL_MAX_RAILS];
	size_t i, n = 0;

	if (!adaptive_ok(ad) || !samples || count != ad->rail_count)
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!(samples[i].seconds >= 0.0) || isinf(samples[i].seconds))
			return -EINVAL;

	for (i = 0; i < count; i++) {
		measured[i] = samples[i].bytes && samples[i].seconds > 0.0;
		if (!measured[i])
			continue;
		rate[i] = (double) samples[i].bytes / samples[i].seconds;
		rate_sum += rate[i];
		measured_share += ad->share[i];
		n++;
	}
	/* One rail alone says nothing about relative speed; a sub-normal time
	 * can make a rate infinite, which says nothing usable either. */
	if (n < 2 || !isfinite(rate_sum) || !(rate_sum > 0.0))
		return 0;

	for (i = 0; i < count; i++)
		if (measured[i])
			ad->share[i] = ad->alpha * ad->share[i] +
				       (1.0 - ad->alpha) * measured_share *
					       rate[i] / rate_sum;
	/* Keep the total exactly 1 despite rounding over many updates. */
	sum = 0.0;
	for (i = 0; i < count; i++)
		sum += ad->share[i];
	for (i = 0; i < count; i++)
		ad->share[i] /= sum;
	return 0;
}

int mrail_adaptive_shares(const struct mrail_adaptive *ad,
			  double shares[MRAIL_MAX_RAILS])
{
	if (!adaptive_ok(ad) || !shares)
		return -EINVAL;
	memcpy(shares, ad->share, ad->rail_count * sizeof(*shares));
	return ad->rail_count;
}
