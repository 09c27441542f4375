/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rail policies of an endpoint, wired to the data path: which rail a
 * message sent whole takes (multiplexing, core/policy.h), how a pulled
 * transfer is split over the rails (striping: core/stripe.h and
 * core/stripe_policy.h), the per-rail statistics, and the fi_control
 * commands of rdma/fi_ext_mrail.h that read and change them.
 *
 * The decisions are core/'s; this file feeds them what only the provider
 * knows (transmit buffers and reads in flight, the time a rail took) and
 * keeps the counts. Every function but env_check, init and control runs
 * with the domain lock held, called from the data path.
 */
#include "mrail.h"
#include "mrail_ep.h"
#include "mrail_reserve.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrail_err.h"
#include "whole_number.h"

/* Defaults of the settings no variable gives (fi_mrail(7), POLICIES). */
#define POLICY_WINDOW_DEFAULT 8
#define POLICY_STRIPE_RATIO_DEFAULT 1.0
#define POLICY_HYBRID_THRESHOLD_DEFAULT 16384
/* The largest FI_MRAIL_MIN_STRIPE: the largest message. */
#define POLICY_MIN_STRIPE_MAX MRAIL_MAX_MSG
/* Link speeds become weights of at most this (then divided by their
 * greatest common divisor), so a weighted round-robin cycle stays short. */
#define POLICY_SPEED_WEIGHT_SCALE 1000

/* The first fields a caller's struct must hold: size and mux_policy. */
#define POLICY_ATTR_MIN_SIZE (2 * sizeof(uint32_t))
#define POLICY_STATS_MIN_SIZE (2 * sizeof(uint32_t))

/* ---- settings from the environment ---- */

/* A decimal integer in [min, max], nothing else (blanks around it allowed). */
static int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out,
		     char *err, size_t err_len)
{
	size_t start = strspn(text, " \t"), len = strlen(text + start);
	uint64_t v;

	while (len && (text[start + len - 1] == ' ' || text[start + len - 1] == '\t'))
		len--;
	if (mrail_parse_whole_len(text + start, len, UINT64_MAX, &v)) {
		mrail_write_err(err, err_len, "'%s' is not a decimal integer", text);
		return -EINVAL;
	}
	if (v < min || v > max) {
		mrail_write_err(err, err_len, "%" PRIu64 " is outside %" PRIu64
				"..%" PRIu64, v, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Weights when FI_MRAIL_WEIGHTS is unset: the rails' link speeds where
 * every rail reports one (in proportion, smallest terms), else all equal.
 * Shaped or virtual links report the speed of their device, not of their
 * path: FI_MRAIL_WEIGHTS or adaptive striping serve those.
 */
static void weights_from_rails(const struct mrail_railset *set, uint32_t *weights)
{
	uint64_t speed[MRAIL_MAX_RAILS], max = 0;
	bool all_known = true;
	uint32_t g = 0;
	size_t i;

	for (i = 0; i < set->count; i++) {
		const struct fi_info *info = set->rails[i].info;

		speed[i] = info && info->nic && info->nic->link_attr ?
			   info->nic->link_attr->speed : 0;
		all_known = all_known && speed[i];
		max = speed[i] > max ? speed[i] : max;
	}
	for (i = 0; i < set->count; i++) {
		weights[i] = 1;
		if (all_known)
			weights[i] = (uint32_t) ((speed[i] * POLICY_SPEED_WEIGHT_SCALE +
						  max / 2) / max);
		if (!weights[i])
			weights[i] = 1;
		g = gcd32(g, weights[i]);
	}
	for (i = 0; i < set->count && g > 1; i++)
		weights[i] /= g;
}

/* Warns that variable name has the bad value text, saying why. */
static int env_refuse(const char *name, const char *text, const char *why)
{
	MRAIL_WARN(FI_LOG_CORE, "%s=\"%s\" is invalid: %s; fix or unset it\n",
		   name, text, why);
	return -FI_ENODATA;
}

/*
 * The settings the FI_MRAIL_* variables give for the rails of set, or
 * -FI_ENODATA after a warning naming the variable and its value.
 */
static int attr_from_env(const struct mrail_railset *set,
			 struct fi_mrail_policy_attr *attr)
{
	enum mrail_mux_policy mux = MRAIL_MUX_RR;
	enum mrail_stripe_policy stripe = MRAIL_STRIPE_ADAPTIVE;
	char err[MRAIL_ERR_MAX];
	size_t count;
	uint64_t v;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->rail_count = (uint32_t) set->count;
	attr->window = POLICY_WINDOW_DEFAULT;
	attr->adaptive_alpha = MRAIL_ADAPTIVE_ALPHA_DEFAULT;
	attr->stripe_ratio = POLICY_STRIPE_RATIO_DEFAULT;
	attr->min_stripe = MRAIL_RDV_MIN_STRIPE;
	attr->hybrid_threshold = POLICY_HYBRID_THRESHOLD_DEFAULT;

	if (mrail_env.policy &&
	    mrail_mux_policy_parse(mrail_env.policy, &mux, err, sizeof(err)))
		return env_refuse("FI_MRAIL_POLICY", mrail_env.policy, err);
	attr->mux_policy = mux;
	if (mrail_env.stripe_policy &&
	    mrail_stripe_policy_parse(mrail_env.stripe_policy, &stripe, err,
				      sizeof(err)))
		return env_refuse("FI_MRAIL_STRIPE_POLICY", mrail_env.stripe_policy,
				  err);
	attr->stripe_policy = stripe;

	if (mrail_env.weights) {
		if (mrail_weights_parse(mrail_env.weights, attr->weights, &count,
					err, sizeof(err)))
			return env_refuse("FI_MRAIL_WEIGHTS", mrail_env.weights, err);
		if (count != set->count) {
			snprintf(err, sizeof(err), "%zu weights for %zu rails: give "
				 "one weight per rail, in the order of "
				 "FI_MRAIL_RAILS", count, set->count);
			return env_refuse("FI_MRAIL_WEIGHTS", mrail_env.weights, err);
		}
	} else {
		weights_from_rails(set, attr->weights);
	}
	if (mrail_env.window) {
		if (parse_u64(mrail_env.window, 1, UINT32_MAX, &v, err, sizeof(err)))
			return env_refuse("FI_MRAIL_WINDOW", mrail_env.window, err);
		attr->window = (uint32_t) v;
	}
	if (mrail_env.adaptive_alpha &&
	    mrail_fraction_parse(mrail_env.adaptive_alpha, false,
				 &attr->adaptive_alpha, err, sizeof(err)))
		return env_refuse("FI_MRAIL_ADAPTIVE_ALPHA", mrail_env.adaptive_alpha,
				  err);
	if (mrail_env.min_stripe) {
		if (parse_u64(mrail_env.min_stripe, 1, POLICY_MIN_STRIPE_MAX, &v, err,
			      sizeof(err)))
			return env_refuse("FI_MRAIL_MIN_STRIPE", mrail_env.min_stripe,
					  err);
		attr->min_stripe = v;
	}
	if (mrail_env.stripe_ratio &&
	    mrail_fraction_parse(mrail_env.stripe_ratio, true, &attr->stripe_ratio,
				 err, sizeof(err)))
		return env_refuse("FI_MRAIL_STRIPE_RATIO", mrail_env.stripe_ratio, err);
	if (mrail_env.hybrid_threshold) {
		if (parse_u64(mrail_env.hybrid_threshold, 0, POLICY_MIN_STRIPE_MAX,
			      &v, err, sizeof(err)))
			return env_refuse("FI_MRAIL_HYBRID_THRESHOLD",
					  mrail_env.hybrid_threshold, err);
		attr->hybrid_threshold = v;
	}
	return 0;
}

/* FI_MRAIL_ADAPTIVE_WINDOW in nanoseconds, or -FI_ENODATA after a warning. */
static int window_from_env(uint64_t *window_ns)
{
	char err[MRAIL_ERR_MAX];
	uint64_t ms = MRAIL_METER_WINDOW_MS_DEFAULT;

	if (mrail_env.adaptive_window &&
	    parse_u64(mrail_env.adaptive_window, 0, MRAIL_METER_WINDOW_MS_MAX, &ms,
		      err, sizeof(err)))
		return env_refuse("FI_MRAIL_ADAPTIVE_WINDOW",
				  mrail_env.adaptive_window, err);
	*window_ns = ms * 1000000u;
	return 0;
}

int mrail_policy_env_check(const struct mrail_railset *set)
{
	struct fi_mrail_policy_attr attr;
	uint64_t window_ns;
	int ret;

	if (!set->count)
		return 0;
	ret = attr_from_env(set, &attr);
	return ret ? ret : window_from_env(&window_ns);
}

/* ---- applying settings ---- */

/* Checks every field of attr for an endpoint of rail_count rails; warns
 * naming the first bad one. */
static int attr_validate(const struct fi_mrail_policy_attr *attr, size_t rail_count)
{
	uint64_t total = 0;
	size_t i;

	if (attr->mux_policy >= MRAIL_MUX_COUNT) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: mux_policy %u is "
			   "not an enum fi_mrail_mux_policy\n", attr->mux_policy);
		return -FI_EINVAL;
	}
	if (attr->stripe_policy >= MRAIL_STRIPE_COUNT) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: stripe_policy %u is "
			   "not an enum fi_mrail_stripe_policy\n", attr->stripe_policy);
		return -FI_EINVAL;
	}
	for (i = 0; i < MRAIL_MAX_RAILS; i++) {
		if (i >= rail_count && attr->weights[i]) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: weights[%zu] "
				   "is %u but the endpoint has %zu rails\n", i,
				   attr->weights[i], rail_count);
			return -FI_EINVAL;
		}
		if (attr->weights[i] > MRAIL_WEIGHT_MAX) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: weights[%zu] "
				   "%u is above %u\n", i, attr->weights[i],
				   MRAIL_WEIGHT_MAX);
			return -FI_EINVAL;
		}
		total += attr->weights[i];
	}
	if (!total) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: every weight is 0\n");
		return -FI_EINVAL;
	}
	if (!attr->window || attr->reserved) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: window must be at "
			   "least 1 (is %u) and reserved 0 (is %u)\n", attr->window,
			   attr->reserved);
		return -FI_EINVAL;
	}
	/* Written so that NaN fails too. */
	if (!(attr->adaptive_alpha >= 0.0 && attr->adaptive_alpha < 1.0)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: adaptive_alpha %g "
			   "is outside [0, 1)\n", attr->adaptive_alpha);
		return -FI_EINVAL;
	}
	if (!(attr->stripe_ratio >= 0.0 && attr->stripe_ratio <= 1.0)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: stripe_ratio %g "
			   "is outside [0, 1]\n", attr->stripe_ratio);
		return -FI_EINVAL;
	}
	if (attr->hybrid_threshold > POLICY_MIN_STRIPE_MAX) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: hybrid_threshold %"
			   PRIu64 " is above the largest message, %" PRIu64 "\n",
			   attr->hybrid_threshold, (uint64_t) POLICY_MIN_STRIPE_MAX);
		return -FI_EINVAL;
	}
	if (!attr->min_stripe || attr->min_stripe > POLICY_MIN_STRIPE_MAX) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY: min_stripe %" PRIu64
			   " is outside 1..%" PRIu64 "\n", attr->min_stripe,
			   (uint64_t) POLICY_MIN_STRIPE_MAX);
		return -FI_EINVAL;
	}
	return 0;
}

static bool stripe_settings_differ(const struct fi_mrail_policy_attr *a,
				   const struct fi_mrail_policy_attr *b)
{
	return a->stripe_policy != b->stripe_policy ||
	       a->adaptive_alpha != b->adaptive_alpha;
}

/*
 * Makes attr (validated) the endpoint's settings. The multiplexing policy
 * starts afresh (from rail 0); adaptive striping starts afresh from even
 * shares when the striping policy or alpha changed, else keeps what it
 * learnt.
 */
static int policy_apply(struct mrail_ep *ep, const struct fi_mrail_policy_attr *attr,
			bool first)
{
	struct mrail_policy *pol = &ep->policy;
	int ret;

	/* Every SET restarts the multiplexing policy (rail 0, no credit),
	 * so an application can start a known sequence at any time. */
	ret = mrail_mux_init(&pol->mux, attr->mux_policy, ep->rail_count,
			     attr->weights, attr->window);
	if (ret)
		return -FI_EINVAL;
	if (first || stripe_settings_differ(&pol->attr, attr)) {
		ret = mrail_adaptive_init(&pol->adaptive, ep->rail_count,
					  attr->adaptive_alpha);
		if (ret)
			return -FI_EINVAL;
		mrail_meter_restart(&pol->meter, mrail_now_ns());
		pol->select_cursor = 0;
	}
	pol->attr = *attr;
	pol->attr.size = sizeof(pol->attr);
	pol->attr.rail_count = (uint32_t) ep->rail_count;
	return 0;
}

int mrail_policy_init(struct mrail_ep *ep)
{
	const struct mrail_railset *set = &ep->domain->fabric->rails;
	struct fi_mrail_policy_attr attr;
	uint64_t window_ns;
	int ret;

	memset(&ep->policy, 0, sizeof(ep->policy));
	ep->policy.align = MRAIL_STRIPE_ALIGN;
	/* fi_getinfo checked the same variables for the same rails. */
	ret = attr_from_env(set, &attr);
	if (!ret)
		ret = window_from_env(&window_ns);
	if (ret)
		return -FI_EINVAL;
	ret = mrail_meter_init(&ep->policy.meter, ep->rail_count, window_ns,
			       MRAIL_METER_MIN_BYTES, mrail_now_ns());
	if (ret)
		return -FI_EINVAL;
	ret = attr_validate(&attr, ep->rail_count);
	if (ret)
		return ret;
	return policy_apply(ep, &attr, true);
}

/* ---- statistics ---- */

/* Operations each rail has in flight: transmit buffers taken from its
 * free list, and reads of striped transfers. */
static void policy_outstanding(const struct mrail_ep *ep, uint32_t *out)
{
	const struct mrail_rail_buf *buf;
	uint32_t free_bufs;
	size_t rail;

	for (rail = 0; rail < ep->rail_count; rail++) {
		free_bufs = 0;
		for (buf = ep->tx_free[rail]; buf; buf = buf->free_next)
			free_bufs++;
		/* Before fi_enable the pools do not exist yet. */
		out[rail] = ep->enabled ? MRAIL_TX_BUFS_PER_RAIL - free_bufs : 0;
		out[rail] += ep->policy.rails[rail].reads_in_flight;
	}
}

/* The share of a striped transfer each rail is given now. */
static void policy_shares(const struct mrail_ep *ep, double *share)
{
	const struct mrail_policy *pol = &ep->policy;
	double total = 0;
	size_t rail;

	if (pol->attr.stripe_policy == MRAIL_STRIPE_ADAPTIVE &&
	    mrail_adaptive_shares(&pol->adaptive, share) == (int) ep->rail_count)
		return;
	for (rail = 0; rail < ep->rail_count; rail++)
		total += pol->attr.weights[rail];
	for (rail = 0; rail < ep->rail_count; rail++) {
		if (pol->attr.stripe_policy == MRAIL_STRIPE_WEIGHTED)
			share[rail] = pol->attr.weights[rail] / total;
		else
			share[rail] = 1.0 / (double) ep->rail_count;
	}
}

/*
 * User data a rail message carries: an EAGER message's payload, an inline
 * WRITE's data (after its descriptor). Control messages carry none. Reads
 * the op and flags bytes of the header (core/wire.h's layout); the message
 * is ours, or arrived and is only counted here.
 */
static uint64_t msg_user_bytes(const void *msg, size_t len)
{
	const uint8_t *hdr = msg;

	if (len < MRAIL_WIRE_HDR_LEN)
		return 0;
	len -= MRAIL_WIRE_HDR_LEN;
	if (hdr[1] == MRAIL_OP_EAGER)
		return len;
	if (hdr[1] == MRAIL_OP_WRITE && (hdr[2] & MRAIL_WIRE_F_INLINE) &&
	    len >= MRAIL_WIRE_RMA_LEN)
		return len - MRAIL_WIRE_RMA_LEN;
	return 0;
}

/*
 * Counts one post on a rail: an error, or an operation; true when it went
 * out. A rail that pushes back (-FI_EAGAIN) counts neither and keeps the
 * pick it was given: the retry goes to the policy's next rail, so a rail
 * that is full or still connecting does not hold the message back.
 */
/* A PROBE (liveness, rail health) is mrail checking a path, a CREDIT its
 * flow control's bookkeeping, sent when a batch gathers or a peer goes
 * quiet: neither is a message any policy placed, and the counts leave
 * them out, so that they count what the application's operations cost. */
static bool is_housekeeping(const void *msg, size_t len)
{
	uint8_t op;

	if (len < MRAIL_WIRE_HDR_LEN)
		return false;
	op = ((const uint8_t *) msg)[1];
	return op == MRAIL_OP_PROBE || op == MRAIL_OP_CREDIT;
}

static bool count_rail_post(struct mrail_rail_counts *c, ssize_t ret)
{
	if (ret == -FI_EAGAIN)
		return false;
	if (ret) {
		c->errors++;
		return false;
	}
	c->tx_ops++;
	return true;
}

void mrail_policy_tx_posted(struct mrail_ep *ep, size_t rail, const void *msg,
			    size_t len, ssize_t ret)
{
	struct mrail_rail_counts *c = &ep->policy.rails[rail];

	if ((!ret || ret == -FI_EAGAIN) && is_housekeeping(msg, len))
		return;
	if (!count_rail_post(c, ret))
		return;
	c->tx_bytes += msg_user_bytes(msg, len);
}

void mrail_policy_rx(struct mrail_ep *ep, size_t rail, const void *msg, size_t len)
{
	struct mrail_rail_counts *c = &ep->policy.rails[rail];

	if (is_housekeeping(msg, len))
		return;
	c->rx_ops++;
	c->rx_bytes += msg_user_bytes(msg, len);
}

void mrail_policy_error(struct mrail_ep *ep, size_t rail)
{
	ep->policy.rails[rail].errors++;
}

static void stats_fill(const struct mrail_ep *ep, struct fi_mrail_stats *stats)
{
	uint32_t outstanding[MRAIL_MAX_RAILS];
	double share[MRAIL_MAX_RAILS];
	size_t rail;

	memset(stats, 0, sizeof(*stats));
	stats->size = sizeof(*stats);
	stats->rail_count = (uint32_t) ep->rail_count;
	policy_outstanding(ep, outstanding);
	policy_shares(ep, share);
	for (rail = 0; rail < ep->rail_count; rail++) {
		const struct mrail_rail_counts *c = &ep->policy.rails[rail];
		struct fi_mrail_rail_stats *out = &stats->rail[rail];

		out->tx_bytes = c->tx_bytes;
		out->rx_bytes = c->rx_bytes;
		out->tx_ops = c->tx_ops;
		out->rx_ops = c->rx_ops;
		out->in_flight = outstanding[rail];
		out->errors = c->errors;
		out->weight = share[rail];
		out->state = mrail_rsv_rail_state(ep, rail);
	}
}

void mrail_policy_log_stats(struct mrail_ep *ep)
{
	const struct mrail_railset *set = &ep->domain->fabric->rails;
	const struct fi_mrail_policy_attr *attr = &ep->policy.attr;
	struct fi_mrail_stats stats;
	size_t rail;

	if (!fi_log_enabled(&mrail_prov, FI_LOG_INFO, FI_LOG_EP_CTRL))
		return;
	stats_fill(ep, &stats);
	MRAIL_INFO(FI_LOG_EP_CTRL, "endpoint closing: policy %s, striping %s, "
		   "%zu rails\n", mrail_mux_policy_name(attr->mux_policy),
		   mrail_stripe_policy_name(attr->stripe_policy), ep->rail_count);
	for (rail = 0; rail < ep->rail_count; rail++) {
		const struct fi_mrail_rail_stats *s = &stats.rail[rail];

		MRAIL_INFO(FI_LOG_EP_CTRL, "rail %zu (%s@%s): tx %" PRIu64 " ops %"
			   PRIu64 " bytes, rx %" PRIu64 " ops %" PRIu64 " bytes, "
			   "%" PRIu64 " in flight, %" PRIu64 " errors, share %.3f\n",
			   rail + 1, set->rails[rail].spec.stack, set->rails[rail].port,
			   s->tx_ops, s->tx_bytes, s->rx_ops, s->rx_bytes,
			   s->in_flight, s->errors, s->weight);
	}
}

/* ---- multiplexing ---- */

int mrail_policy_tx_rail(struct mrail_ep *ep)
{
	struct mrail_policy *pol = &ep->policy;
	uint32_t outstanding[MRAIL_MAX_RAILS];
	struct mrail_mux mux_before;
	bool ld = pol->mux.policy == MRAIL_MUX_LOCAL_DYNAMIC;
	size_t rail;
	int pick;

	mrail_assert_locked(ep->domain);

	if (ld)
		policy_outstanding(ep, outstanding);
	mux_before = pol->mux;
	pick = mrail_mux_pick(&pol->mux, ld ? outstanding : NULL);
	if (pick >= 0 && ep->tx_free[pick])
		return pick;
	/*
	 * The rail the policy wants has no free buffer (or, local_dynamic,
	 * none is idle): the least loaded rail that has one, rather than
	 * making the application wait for a slow rail. A rail of weight 0
	 * never carries data.
	 */
	policy_outstanding(ep, outstanding);
	for (rail = 0; rail < ep->rail_count; rail++) {
		if (!ep->tx_free[rail] || (pol->mux.policy == MRAIL_MUX_WEIGHTED &&
					   !pol->mux.weight[rail]))
			outstanding[rail] = UINT32_MAX;
	}
	pick = mrail_mux_pick_least_loaded(&pol->mux, outstanding);
	if (pick < 0 || outstanding[pick] == UINT32_MAX) {
		/* Nothing can be sent: the policy's turn is not used up. */
		pol->mux = mux_before;
		return -1;
	}
	return pick;
}

/* ---- striping ---- */

/* local_dynamic: the rails with nothing in flight (or, when every rail is
 * busy, the least busy ones), as many as stripe_ratio says, equal shares. */
static int stripe_local_dynamic(struct mrail_ep *ep, uint64_t len,
				struct mrail_stripe *out)
{
	struct mrail_policy *pol = &ep->policy;
	uint32_t outstanding[MRAIL_MAX_RAILS], weights[MRAIL_MAX_RAILS];
	uint32_t candidates, chosen = 0, least = UINT32_MAX;
	size_t rail;
	int ret;

	policy_outstanding(ep, outstanding);
	candidates = mrail_idle_rails(outstanding, ep->rail_count);
	if (!candidates) {
		for (rail = 0; rail < ep->rail_count; rail++)
			least = outstanding[rail] < least ? outstanding[rail] : least;
		for (rail = 0; rail < ep->rail_count; rail++)
			candidates |= outstanding[rail] == least ? 1u << rail : 0;
	}
	ret = mrail_select_rails(candidates, ep->rail_count, pol->attr.stripe_ratio,
				 &pol->select_cursor, &chosen);
	if (ret <= 0)
		return -FI_EINVAL;
	for (rail = 0; rail < ep->rail_count; rail++)
		weights[rail] = chosen & (1u << rail) ? 1 : 0;
	return mrail_stripe_weighted(len, ep->rail_count, weights,
				     pol->attr.min_stripe, pol->align, out);
}

bool mrail_policy_plan_now(struct mrail_ep *ep)
{
	const struct mrail_policy *pol = &ep->policy;

	return pol->attr.stripe_policy != MRAIL_STRIPE_ADAPTIVE ||
	       pol->planned_ahead < MRAIL_ADAPTIVE_AHEAD;
}

static void sub_clamped(uint64_t *total, uint64_t v)
{
	*total -= v < *total ? v : *total;
}

void mrail_policy_xfer_done(struct mrail_ep *ep, uint64_t ahead,
			    const struct mrail_stripe *stripes,
			    const uint64_t *unread, int count)
{
	struct mrail_policy *pol = &ep->policy;
	int s;

	if (!ahead)
		return;
	sub_clamped(&pol->planned_ahead, ahead);
	for (s = 0; s < count; s++)
		sub_clamped(&pol->queued[stripes[s].rail], unread[s]);
}

void mrail_policy_stripe_moved(struct mrail_ep *ep, size_t from, size_t to,
			       uint64_t bytes, uint64_t ahead)
{
	if (!ahead)
		return;
	sub_clamped(&ep->policy.queued[from], bytes);
	ep->policy.queued[to] += bytes;
}

int mrail_policy_stripe(struct mrail_ep *ep, uint64_t len,
			struct mrail_stripe out[MRAIL_MAX_RAILS], uint64_t *ahead)
{
	struct mrail_policy *pol = &ep->policy;
	int ret, i;

	mrail_assert_locked(ep->domain);

	*ahead = 0;
	switch (pol->attr.stripe_policy) {
	case MRAIL_STRIPE_EVEN:
		ret = mrail_stripe_even(len, ep->rail_count,
					ep->next_stripe_rail++ % ep->rail_count,
					mrail_stripe_align_up(pol->attr.min_stripe,
							      pol->align),
					pol->align, out);
		break;
	case MRAIL_STRIPE_WEIGHTED:
		ret = mrail_stripe_weighted(len, ep->rail_count, pol->attr.weights,
					    pol->attr.min_stripe, pol->align, out);
		break;
	case MRAIL_STRIPE_ADAPTIVE:
		ret = mrail_adaptive_plan_queued(&pol->adaptive, len, pol->queued,
						 pol->attr.min_stripe, pol->align,
						 out);
		if (ret > 0) {
			*ahead = len;
			pol->planned_ahead += len;
		}
		for (i = 0; i < ret; i++)
			pol->queued[out[i].rail] += out[i].len;
		break;
	case MRAIL_STRIPE_LOCAL_DYNAMIC:
		ret = stripe_local_dynamic(ep, len, out);
		break;
	case MRAIL_STRIPE_DYNAMIC:
	case MRAIL_STRIPE_HYBRID:
		/* Transfers that reserve rails are split by
		 * mrail_policy_stripe_over; the others go whole. */
		return mrail_policy_stripe_over(ep, len, 0, out);
	default:
		ret = -FI_EINVAL;
		break;
	}
	return ret < 0 ? -FI_EINVAL : ret;
}

/* dynamic, hybrid: equal shares over the rails reserved; none reserved
 * (hybrid's short transfers, or no grant in time): whole on the next rail
 * in turn. */
int mrail_policy_stripe_over(struct mrail_ep *ep, uint64_t len, uint32_t rails,
			     struct mrail_stripe out[MRAIL_MAX_RAILS])
{
	uint32_t weights[MRAIL_MAX_RAILS];
	size_t rail;
	int ret;

	rails &= (ep->rail_count >= 32 ? ~0u : (1u << ep->rail_count) - 1);
	if (!rails)
		rails = 1u << (ep->next_stripe_rail++ % ep->rail_count);
	for (rail = 0; rail < ep->rail_count; rail++)
		weights[rail] = rails & (1u << rail) ? 1 : 0;
	ret = mrail_stripe_weighted(len, ep->rail_count, weights,
				    ep->policy.attr.min_stripe, ep->policy.align,
				    out);
	return ret < 0 ? -FI_EINVAL : ret;
}

void mrail_policy_read_posted(struct mrail_ep *ep, size_t rail, ssize_t ret)
{
	struct mrail_rail_counts *c = &ep->policy.rails[rail];

	if (!count_rail_post(c, ret))
		return;
	c->reads_in_flight++;
	mrail_meter_start(&ep->policy.meter, rail, mrail_now_ns());
}

/*
 * Adaptive striping learns from the rail meter: once a window is over,
 * each rail's bytes over its busy time (core/rail_meter.h), not each
 * transfer's stripe times, which in a stream include the wait behind the
 * transfers split before it.
 */
static void policy_adaptive_learn(struct mrail_ep *ep, uint64_t now)
{
	struct mrail_policy *pol = &ep->policy;
	struct mrail_rail_sample samples[MRAIL_MAX_RAILS];

	if (pol->attr.stripe_policy != MRAIL_STRIPE_ADAPTIVE ||
	    mrail_meter_take(&pol->meter, now, samples) < 2)
		return;
	if (mrail_adaptive_update(&pol->adaptive, samples, ep->rail_count))
		MRAIL_WARN(FI_LOG_EP_DATA, "adaptive striping refused the rail "
			   "meter's measurements\n");
}

void mrail_policy_read_returned(struct mrail_ep *ep, size_t rail)
{
	struct mrail_rail_counts *c = &ep->policy.rails[rail];

	if (c->reads_in_flight)
		c->reads_in_flight--;
}

/* What a read that ended (read bytes, 0 when it failed) does to the plan
 * and the meter. */
static void read_counted(struct mrail_ep *ep, size_t rail, uint64_t len,
			 uint64_t read, uint64_t ahead, uint64_t now)
{
	if (ahead)
		sub_clamped(&ep->policy.queued[rail], len);
	mrail_meter_done(&ep->policy.meter, rail, read, now);
}

void mrail_policy_read_given_up(struct mrail_ep *ep, size_t rail, uint64_t len,
				uint64_t ahead)
{
	read_counted(ep, rail, len, 0, ahead, mrail_now_ns());
}

void mrail_policy_read_done(struct mrail_ep *ep, size_t rail, uint64_t len, int err,
			    uint64_t ahead)
{
	uint64_t now = mrail_now_ns();

	mrail_policy_read_returned(ep, rail);
	read_counted(ep, rail, len, err ? 0 : len, ahead, now);
	if (err)
		return;
	ep->policy.rails[rail].rx_bytes += len;
	policy_adaptive_learn(ep, now);
}

/* ---- fi_control ---- */

static int control_get_policy(struct mrail_ep *ep, struct fi_mrail_policy_attr *arg)
{
	struct fi_mrail_policy_attr attr = ep->policy.attr;
	size_t size;

	if (!arg || arg->size < POLICY_ATTR_MIN_SIZE)
		return -FI_EINVAL;
	size = arg->size < sizeof(attr) ? arg->size : sizeof(attr);
	attr.size = (uint32_t) size;
	memcpy(arg, &attr, size);
	return 0;
}

static int control_set_policy(struct mrail_ep *ep,
			      const struct fi_mrail_policy_attr *arg)
{
	struct fi_mrail_policy_attr attr = ep->policy.attr;
	size_t size;
	int ret;

	if (!arg || arg->size < POLICY_ATTR_MIN_SIZE) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_MRAIL_SET_POLICY needs a struct "
			   "fi_mrail_policy_attr with its size set\n");
		return -FI_EINVAL;
	}
	/* An older, shorter struct leaves the fields it lacks as they are. */
	size = arg->size < sizeof(attr) ? arg->size : sizeof(attr);
	memcpy(&attr, arg, size);
	ret = attr_validate(&attr, ep->rail_count);
	if (ret)
		return ret;
	return policy_apply(ep, &attr, false);
}

static int control_get_stats(struct mrail_ep *ep, struct fi_mrail_stats *arg)
{
	struct fi_mrail_stats stats;
	size_t size;

	if (!arg || arg->size < POLICY_STATS_MIN_SIZE)
		return -FI_EINVAL;
	stats_fill(ep, &stats);
	size = arg->size < sizeof(stats) ? arg->size : sizeof(stats);
	stats.size = (uint32_t) size;
	memcpy(arg, &stats, size);
	return 0;
}

static void control_reset_stats(struct mrail_ep *ep)
{
	size_t rail;

	for (rail = 0; rail < ep->rail_count; rail++) {
		struct mrail_rail_counts *c = &ep->policy.rails[rail];
		uint32_t reads = c->reads_in_flight;

		memset(c, 0, sizeof(*c));
		c->reads_in_flight = reads;
	}
}

int mrail_policy_control(struct mrail_ep *ep, int command, void *arg)
{
	int ret = 0;

	switch (command) {
	case FI_MRAIL_GET_POLICY:
	case FI_MRAIL_SET_POLICY:
	case FI_MRAIL_GET_STATS:
	case FI_MRAIL_RESET_STATS:
		break;
	default:
		return -FI_ENOSYS;
	}
	mrail_domain_lock(ep->domain);
	switch (command) {
	case FI_MRAIL_GET_POLICY:
		ret = control_get_policy(ep, arg);
		break;
	case FI_MRAIL_SET_POLICY:
		ret = control_set_policy(ep, arg);
		break;
	case FI_MRAIL_GET_STATS:
		ret = control_get_stats(ep, arg);
		break;
	case FI_MRAIL_RESET_STATS:
		control_reset_stats(ep);
		break;
	}
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}
