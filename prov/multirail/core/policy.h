/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rail policies: which rail a whole message takes (multiplexing), and the
 * names and parameters of the policies that split one transfer over several
 * rails (striping, see stripe_policy.h and reserve.h).
 *
 * Two knobs, as in Liu et al. 2004 (section 4.4): a multiplexing policy for everything sent
 * whole (eager messages, small RMA, control messages) and a striping policy
 * for large transfers (rendezvous data, large RMA). Every decision here is a
 * pure function of a caller-owned state struct and the caller's inputs (local
 * outstanding counts); nothing reads a clock or takes a lock, so the caller
 * serialises calls on one state (mrail holds the endpoint lock).
 */
#ifndef MRAIL_POLICY_H
#define MRAIL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrail_limits.h"

/* The largest integer weight of one rail: keeps every sum and product of
 * weights far from overflow (MRAIL_MAX_RAILS * MRAIL_WEIGHT_MAX < 2^24). */
#define MRAIL_WEIGHT_MAX (1u << 20)

/* Multiplexing policies (FI_MRAIL_POLICY). The values are those of
 * enum fi_mrail_mux_policy in rdma/fi_ext_mrail.h. */
enum mrail_mux_policy {
	MRAIL_MUX_RR = 0,		/* "rr": rails in turn */
	MRAIL_MUX_WEIGHTED = 1,		/* "weighted": smooth weighted round-robin */
	MRAIL_MUX_WINDOW = 2,		/* "window": W messages per rail, then the next */
	MRAIL_MUX_LOCAL_DYNAMIC = 3,	/* "local_dynamic": only idle rails (Coll et al. 2001, Algorithm 1) */
	MRAIL_MUX_COUNT
};

/* Striping policies (FI_MRAIL_STRIPE_POLICY). The values are those of
 * enum fi_mrail_stripe_policy in rdma/fi_ext_mrail.h. */
enum mrail_stripe_policy {
	MRAIL_STRIPE_EVEN = 0,		/* "even": equal shares (stripe.h) */
	MRAIL_STRIPE_WEIGHTED = 1,	/* "weighted": shares by fixed weights */
	MRAIL_STRIPE_ADAPTIVE = 2,	/* "adaptive": weights from delivery times */
	MRAIL_STRIPE_LOCAL_DYNAMIC = 3,	/* "local_dynamic": idle rails only, by ratio */
	MRAIL_STRIPE_DYNAMIC = 4,	/* "dynamic": reserve both ends first (reserve.h) */
	MRAIL_STRIPE_HYBRID = 5,	/* "hybrid": whole below a threshold, else dynamic */
	MRAIL_STRIPE_COUNT
};

/*
 * Parse a policy name (exact, lower case; blanks around it are ignored).
 * Returns 0, or -EINVAL with err naming the bad value and listing the valid
 * ones; a striping name given as a multiplexing policy (or the reverse) says
 * which variable it belongs to.
 */
int mrail_mux_policy_parse(const char *text, enum mrail_mux_policy *out,
			   char *err, size_t err_len);
int mrail_stripe_policy_parse(const char *text, enum mrail_stripe_policy *out,
			      char *err, size_t err_len);

/* The name a policy parses from, or "unknown" for a value out of range. */
const char *mrail_mux_policy_name(enum mrail_mux_policy policy);
const char *mrail_stripe_policy_name(enum mrail_stripe_policy policy);

/*
 * FI_MRAIL_WEIGHTS: "w0,w1,..." one decimal integer 0..MRAIL_WEIGHT_MAX per
 * rail, in rail order, at least one of them not 0. Writes the weights and
 * their number (1..MRAIL_MAX_RAILS); the caller checks that it matches the
 * rails it opened. Returns 0 or -EINVAL with err filled in.
 */
int mrail_weights_parse(const char *text, uint32_t weights[MRAIL_MAX_RAILS],
			size_t *count, char *err, size_t err_len);

/*
 * A fraction for FI_MRAIL_ADAPTIVE_ALPHA ([0, 1): allow_one false) or
 * FI_MRAIL_STRIPE_RATIO ([0, 1]: allow_one true), as a decimal number.
 * Returns 0 or -EINVAL (not a number, NaN, out of range) with err filled in.
 */
int mrail_fraction_parse(const char *text, bool allow_one, double *out,
			 char *err, size_t err_len);

/* State of one multiplexing policy over one endpoint's rails. Owned by the
 * caller; set up with mrail_mux_init, read and changed only through these
 * functions. */
struct mrail_mux {
	enum mrail_mux_policy policy;
	uint8_t rail_count;
	uint8_t next;			/* rr, window, local_dynamic: next rail to try */
	uint32_t window;		/* window: messages per rail before switching */
	uint32_t sent_in_window;	/* window: messages the current rail took */
	uint32_t weight[MRAIL_MAX_RAILS];	/* weighted */
	int64_t credit[MRAIL_MAX_RAILS];	/* weighted: smooth WRR running credit */
	uint32_t weight_total;			/* weighted */
};

/*
 * Sets up mux for rail_count rails (1..MRAIL_MAX_RAILS). weights (rail_count
 * entries, each <= MRAIL_WEIGHT_MAX, not all 0) is read only by WEIGHTED and
 * may be NULL otherwise; a rail of weight 0 is never picked. window (>= 1) is
 * read only by WINDOW. Returns 0, or -EINVAL for anything else (mux is then
 * left unusable: every pick returns -EINVAL).
 */
int mrail_mux_init(struct mrail_mux *mux, enum mrail_mux_policy policy,
		   size_t rail_count, const uint32_t *weights, uint32_t window);

/*
 * The rail for the next message sent whole.
 *  RR:       0, 1, ..., rail_count - 1, 0, ...
 *  WEIGHTED: smooth weighted round-robin: over every cycle of sum(weights)
 *            picks each rail is picked exactly its weight times, spread as
 *            evenly as the weights allow (3:1 gives 0 0 1 0, not 0 0 0 1),
 *            the same sequence on every run.
 *  WINDOW:   W consecutive picks of one rail, then W of the next (Liu et al.
 *            2004, 4.4: messages of a window cannot overtake one another).
 *  LOCAL_DYNAMIC: only a rail whose outstanding[rail] is 0 (nothing in
 *            flight locally), the first such rail at or after the one after
 *            the last pick. -EAGAIN when every rail is busy: Alg. 1 waits;
 *            a caller that cannot wait uses mrail_mux_pick_least_loaded.
 * outstanding (rail_count entries) is read only by LOCAL_DYNAMIC and may be
 * NULL otherwise. Returns the rail, -EAGAIN, or -EINVAL.
 */
int mrail_mux_pick(struct mrail_mux *mux, const uint32_t *outstanding);

/*
 * The rail with the fewest outstanding operations, ties going to the first
 * at or after the rail after the last pick (so equal loads still rotate).
 * Any policy's state may be used; the pick moves its rotation point.
 * Returns the rail or -EINVAL.
 */
int mrail_mux_pick_least_loaded(struct mrail_mux *mux, const uint32_t *outstanding);

/* Bit r set when outstanding[r] is 0, for r < rail_count (0 if bad input). */
uint32_t mrail_idle_rails(const uint32_t *outstanding, size_t rail_count);

/*
 * Select_Tx_NICs of Coll et al. 2001: from the rails set in candidates (bits below
 * rail_count), choose k = 1 + floor(ratio * (n - 1) + 0.5) of the n
 * candidates (ratio 0: one rail, 1: all of them), taking them in rail order
 * starting at the first candidate at or after *cursor and wrapping; *cursor
 * then points past the last rail chosen, so the next selection starts on the
 * following rail (fairness). Writes the chosen set to *chosen and returns k,
 * 0 when there is no candidate, or -EINVAL (ratio NaN or outside [0, 1],
 * rail_count out of range, *cursor >= rail_count, NULL pointers).
 */
int mrail_select_rails(uint32_t candidates, size_t rail_count, double ratio,
		       uint8_t *cursor, uint32_t *chosen);

#endif /* MRAIL_POLICY_H */
