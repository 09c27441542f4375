/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Weighted and adaptive striping (Liu et al. 2004, sections 4.4 and 4.5): how many bytes of
 * one transfer each rail moves when the rails are not equally fast. Even
 * striping is stripe.h's mrail_stripe_even; both write the same
 * struct mrail_stripe, so the rendezvous and RMA paths post any of them the
 * same way.
 *
 * Pure: weights and measurements come from the caller, times are plain
 * numbers (seconds) the caller measured; nothing here reads a clock.
 */
#ifndef MRAIL_STRIPE_POLICY_H
#define MRAIL_STRIPE_POLICY_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "mrail_limits.h"
#include "policy.h"
#include "stripe.h"

/*
 * Splits len bytes over the rails in proportion to weights (rail_count
 * entries, each 0..MRAIL_WEIGHT_MAX, not all 0). Stripes are written in rail
 * order, contiguous in offset order, and their lengths sum exactly to len.
 * Each stripe ends at len * (weights of the rails up to it) / (total weight)
 * rounded down to a multiple of align (a power of two, 1 for none), the last
 * at len: every offset is aligned and each share is within align of its
 * exact proportion.
 *
 * A rail of weight 0 gets nothing. No stripe is shorter than min_stripe
 * unless the whole transfer is: while some stripe would be (or would be
 * empty through alignment), the rail of smallest weight (the highest index
 * among equals) is dropped and the split recomputed over the others, so its
 * share goes to them in proportion to their weights. One rail left takes
 * all of len.
 *
 * Returns the number of stripes (room for MRAIL_MAX_RAILS in out), 0 when
 * len is 0, or -EINVAL for rail_count outside 1..MRAIL_MAX_RAILS, weights
 * NULL, all 0 or above MRAIL_WEIGHT_MAX, min_stripe 0, or align not a power
 * of two.
 */
int mrail_stripe_weighted(uint64_t len, size_t rail_count, const uint32_t *weights,
			  uint64_t min_stripe, uint64_t align,
			  struct mrail_stripe out[MRAIL_MAX_RAILS]);

/*
 * Adaptive striping (Liu et al. 2004, section 4.5, equation 4). The state is each rail's
 * share of a transfer, fractions summing to 1, starting even. The caller
 * reports, per rail, bytes moved and the time they took; the shares move
 * toward the split that would have made every rail finish together:
 *
 *   rate_i     = bytes_i / seconds_i
 *   measured_i = M * rate_i / sum(rate_k)        over the measured rails k
 *   share'_i   = alpha * share_i + (1 - alpha) * measured_i
 *
 * where M is the sum of the measured rails' current shares, so the rails not
 * measured keep theirs and the total stays 1. alpha is the history kept: 0
 * trusts the last report alone (equation 3), values near 1 adapt slowly
 * and ride out noise. (The paper's alpha in equation 4 weighs the new
 * information: it is 1 - this alpha.) Using each rail's bytes rather than its
 * share of the plan makes a stripe shortened by alignment or min_stripe
 * measure correctly.
 *
 * The seed times each stripe of one transfer, which is right when one
 * transfer is on the rails at a time. The provider reports instead what
 * core/rail_meter.h measured over a window of time: each rail's bytes over
 * the time it was busy. In a stream, stripes of many transfers queue on
 * each rail and a stripe's own time includes its wait behind the others;
 * busy time does not.
 *
 * A rail that moved 0 bytes, or whose time is 0 (below the clock's
 * resolution), is not measured; a report with fewer than two measured
 * rails tells nothing about their relative speeds and changes nothing.
 *
 * Re-probing: a rail whose share has fallen so low that min_stripe drops it
 * would never be measured again and never recover. mrail_adaptive_plan
 * therefore gives a rail left out of MRAIL_ADAPTIVE_PROBE_EVERY plans in a
 * row a probe stripe of min_stripe bytes (rounded up to align) in the next
 * plan long enough to hold it beside the others, so a rail that became fast
 * again is seen and its share grows back.
 *
 * Short transfers: one that the minimum stripe leaves on a single rail
 * (too short to split by the shares: 16 KiB with a 16 KiB minimum, or
 * 32 KiB whose shares are not exactly even once aligned) goes whole on one
 * rail. Always the heaviest rail would leave the others idle under a
 * stream of such transfers (and would never learn otherwise, as a one-rail
 * transfer measures nothing), so the rail is picked by smooth weighted
 * round-robin over the shares: each rail carries its share of them,
 * interleaved. A rail whose share is below 1/MRAIL_ADAPTIVE_SHORT_RATIO of
 * the largest takes none: a whole transfer on it would take longer than
 * that many on the fastest.
 */
#define MRAIL_ADAPTIVE_PROBE_EVERY 8
#define MRAIL_ADAPTIVE_SHORT_RATIO 16

/*
 * Rails measured equal: mrail_adaptive_plan_queued splits exactly as even
 * striping does (mrail_stripe_even, the first rail taken in turn, queues
 * ignored) from the start, and again once every share is back within
 * MRAIL_ADAPTIVE_EVEN_ENTER of 1/rail_count (0.475 to 0.525 on two rails);
 * it splits by the shares once one is further than MRAIL_ADAPTIVE_EVEN_LEAVE
 * from it (below 0.45 or above 0.55). On two rails of equal speed the
 * measured shares wander between about 0.47 and 0.53 from one window to
 * the next; splitting by that noise, and filling the queues by it, cost
 * 1.5-5% of their bandwidth at 16-128 KiB against even striping. The price:
 * rails less than about 20% apart in speed, which start equal, stay split
 * evenly (up to 10% below the best split at 20%).
 */
#define MRAIL_ADAPTIVE_EVEN_ENTER 0.05
#define MRAIL_ADAPTIVE_EVEN_LEAVE 0.10

/* FI_MRAIL_ADAPTIVE_ALPHA when unset: each report moves the shares half
 * way to what it measured, so a 4:1 pair of rails is within 5% of the best
 * split after 5 reports, and one noisy measurement moves them only half. */
#define MRAIL_ADAPTIVE_ALPHA_DEFAULT 0.5

/* Integer weights handed to mrail_stripe_weighted: shares scaled to this. */
#define MRAIL_ADAPTIVE_SCALE MRAIL_WEIGHT_MAX

struct mrail_adaptive {
	uint8_t rail_count;
	double alpha;
	double share[MRAIL_MAX_RAILS];
	/* Plans in a row that gave the rail nothing (re-probing). */
	uint32_t left_out[MRAIL_MAX_RAILS];
	/* Smooth weighted round-robin credit of short transfers. */
	double credit[MRAIL_MAX_RAILS];
	/* Splitting evenly (MRAIL_ADAPTIVE_EVEN_ENTER), and the first rail of
	 * the next even split. */
	bool even;
	uint8_t even_next;
};

/* One rail's bytes and the seconds they took, as the caller measured them. */
struct mrail_rail_sample {
	uint64_t bytes;
	double seconds;
};

/*
 * Starts adaptive striping over rail_count rails (1..MRAIL_MAX_RAILS) with
 * equal shares. Returns 0, or -EINVAL (rail_count out of range, alpha NaN or
 * outside [0, 1)); ad is then unusable (every call returns -EINVAL).
 */
int mrail_adaptive_init(struct mrail_adaptive *ad, size_t rail_count, double alpha);

/*
 * Splits the next transfer by the current shares, exactly as
 * mrail_stripe_weighted does with them (same rules, same -EINVAL cases),
 * plus the re-probe described above: the probed rail's stripe comes last,
 * and the round-robin of short transfers.
 */
int mrail_adaptive_plan(struct mrail_adaptive *ad, uint64_t len,
			uint64_t min_stripe, uint64_t align,
			struct mrail_stripe out[MRAIL_MAX_RAILS]);

/*
 * mrail_adaptive_plan for rails that still have queued[i] bytes (of
 * transfers split before) to move. Splitting by the shares alone would
 * keep a rail that fell behind (a burst of loss, a slower moment) behind
 * for good, its queue holding up every transfer while the others drain and
 * idle; an idle rail then pays each read's start-up again and measures
 * slower than it is. So the split instead fills the rails up to one level:
 * rail i, working at share_i of the total rate, ends its queue and its new
 * stripe at the same time as every other rail that gets one; a rail whose
 * queue alone ends later gets none this time. With no queue (queued NULL
 * or all 0) this is mrail_adaptive_plan exactly, short transfers taking
 * turns; with queues a transfer the minimum stripe leaves whole goes to
 * the rail that ends it first. Minimum stripe, alignment and re-probing
 * are as in mrail_adaptive_plan.
 */
int mrail_adaptive_plan_queued(struct mrail_adaptive *ad, uint64_t len,
			       const uint64_t *queued, uint64_t min_stripe,
			       uint64_t align, struct mrail_stripe out[MRAIL_MAX_RAILS]);

/*
 * Reports a measurement: samples[i] for rail i, count = the rail count.
 * Returns 0 (shares updated, or unchanged as described above) or -EINVAL,
 * with the shares untouched, when count differs from the rail count,
 * samples is NULL, or a time is negative, NaN or infinite.
 */
int mrail_adaptive_update(struct mrail_adaptive *ad,
			  const struct mrail_rail_sample *samples, size_t count);

/* The current shares (fractions summing to 1), for statistics and tests.
 * Returns the rail count or -EINVAL. */
int mrail_adaptive_shares(const struct mrail_adaptive *ad,
			  double shares[MRAIL_MAX_RAILS]);

#endif /* MRAIL_STRIPE_POLICY_H */
