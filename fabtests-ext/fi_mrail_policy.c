/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_policy: functional test of mrail's rail policies through
 * fi_control (rdma/fi_ext_mrail.h) between two processes.
 *
 *   server:  fi_mrail_policy [-E PORT] -x TEST [OPTIONS]
 *   client:  fi_mrail_policy [-E PORT] -x TEST [OPTIONS] SERVER
 *   either:  fi_mrail_policy -g      (fi_getinfo only; exit 3 if it fails)
 *
 * Tests (-x):
 *   mux     the client sends eager messages of -s bytes (default 1000) in
 *           batches up to each cumulative count of -c (default 4,8,12);
 *           after each batch both sides read FI_MRAIL_GET_STATS and check
 *           per rail exactly: the client's tx_ops and tx_bytes, the
 *           server's rx_ops and rx_bytes, against the client's
 *           multiplexing policy (rr: message j on rail j mod R; window W:
 *           rail (j / W) mod R; weighted: weight_i messages per rail per
 *           cycle, checked at counts that are whole cycles).
 *   stripe  the client sends -n messages of -S bytes (default 1 MiB) by
 *           rendezvous; the server (the side that reads, so the side whose
 *           striping policy splits them) checks that each rail read
 *           exactly what core/stripe's split of its policy gives (even,
 *           weighted), or for adaptive and local_dynamic that all bytes
 *           arrived and the shares sum to 1.
 *           dynamic and hybrid: the split is exact too, as one transfer at
 *           a time is granted every rail it asks for (stripe_ratio 1: all,
 *           0: one, in turn); -L SIZE adds -n messages of SIZE after them
 *           (hybrid: below the threshold each goes whole, rails in turn).
 *           The sender counts exactly the reservation messages it answers
 *           (a CTS per rail, then an RTS and an ABORT per rail received).
 *   cross   both sides send -n messages of -S bytes to each other at once
 *           (crossing transfers, their reservations conflicting), and
 *           receive the other's: data byte for byte, exact completion
 *           counts, every byte read once.
 *   fanin   -k K clients (fanin runs its own setup, not fabtests'): each
 *           sends -n tagged messages of -S bytes at once to the server,
 *           whose one endpoint reads them all, the clients contending for
 *           its rails; data, tags, exact completion counts and bytes.
 *   control bad FI_MRAIL_SET_POLICY input: -FI_EINVAL and nothing changed.
 * After stripe, cross and fanin every rail of every endpoint must end FREE
 * (no reservation left behind), waited for at most 10 s of progress.
 * Every message is checked byte for byte. -P NAME / -X NAME set the
 * multiplexing (client) / striping (server) policy at run time with
 * FI_MRAIL_SET_POLICY, with -w WEIGHTS and -W WINDOW, and check that
 * FI_MRAIL_GET_POLICY returns it; without them the FI_MRAIL_* variables
 * decide. Prints "N of N checks passed"; exits 0 only if all passed.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_tagged.h>

#include "common/mrail_bench.h"
#include "common/mrail_check.h"
#include "common/mrail_ctl.h"
#include "common/mrail_setup.h"
#include "stripe.h"
#include "stripe_policy.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_ext_mrail.h>

#define PROG "fi_mrail_policy"
#define DEFAULT_PORT 47820
#define MAX_CHECKPOINTS 16
#define STRIPE_ALIGN 4096	/* fi_mrail(7): stripes start 4 KiB aligned */

static const char *mux_names[] = { "rr", "weighted", "window", "local_dynamic" };
static const char *stripe_names[] = { "even", "weighted", "adaptive",
				      "local_dynamic", "dynamic", "hybrid" };

struct test {
	const char *what;
	const char *set_mux, *set_stripe;
	uint32_t weights[FI_MRAIL_MAX_RAILS];
	size_t weight_count;
	uint32_t window;
	size_t checkpoints[MAX_CHECKPOINTS];
	size_t ncheckpoints;
	size_t msg_size;
	size_t rdv_size;
	size_t rdv_count;
	size_t rdv_size2;	/* -L: a second size, 0 for none */
	double ratio;		/* -r: stripe_ratio to set, < 0 for none */
	int64_t threshold;	/* -T: hybrid_threshold to set, < 0 for none */
	unsigned clients;	/* -k: fanin clients */
};

static int name_index(const char *name, const char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return (int) i;
	return -1;
}

static uint8_t pattern_byte(uint64_t seed, size_t i)
{
	return (uint8_t) (seed * 131 + i * 7 + (i >> 8) + 1);
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(seed, i);
}

static size_t mismatch(const uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern_byte(seed, i))
			return i;
	return len;
}

static int get_stats_ep(struct fid_ep *ep, struct fi_mrail_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return fi_control(&ep->fid, FI_MRAIL_GET_STATS, st);
}

static int get_stats(struct bench *b, struct fi_mrail_stats *st)
{
	return get_stats_ep(b->ep, st);
}

static int get_policy(struct bench *b, struct fi_mrail_policy_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	return fi_control(&b->ep->fid, FI_MRAIL_GET_POLICY, attr);
}

/* -P / -X: sets a policy at run time and checks GET returns it. */
static void set_policy(struct bench *b, const struct test *t, bool mux,
		       const char *name)
{
	struct fi_mrail_policy_attr attr, back;
	int idx, ret;
	size_t i;

	idx = mux ? name_index(name, mux_names, 4) : name_index(name, stripe_names, 6);
	check(idx >= 0, "policy name '%s' known to the test", name);
	if (idx < 0 || get_policy(b, &attr))
		return;
	if (mux)
		attr.mux_policy = (uint32_t) idx;
	else
		attr.stripe_policy = (uint32_t) idx;
	if (t->weight_count) {
		memset(attr.weights, 0, sizeof(attr.weights));
		for (i = 0; i < t->weight_count; i++)
			attr.weights[i] = t->weights[i];
	}
	if (t->window)
		attr.window = t->window;
	if (t->ratio >= 0)
		attr.stripe_ratio = t->ratio;
	if (t->threshold >= 0)
		attr.hybrid_threshold = (uint64_t) t->threshold;
	ret = fi_control(&b->ep->fid, FI_MRAIL_SET_POLICY, &attr);
	check(ret == 0, "FI_MRAIL_SET_POLICY %s policy %s: %s",
	      mux ? "multiplexing" : "striping", name, fi_strerror(-ret));
	ret = get_policy(b, &back);
	check(!ret && !memcmp(&attr, &back, sizeof(attr)),
	      "FI_MRAIL_GET_POLICY returns what FI_MRAIL_SET_POLICY set");
}

/* ---- mux ---- */

/* Messages 0..n-1 that the client's policy puts on rail r (see top). */
static bool expected_mux(const struct fi_mrail_policy_attr *p, size_t n,
			 size_t r, uint64_t *out)
{
	uint64_t total = 0;
	size_t i, rails = p->rail_count, j;

	*out = 0;
	switch (p->mux_policy) {
	case FI_MRAIL_MUX_RR:
		for (j = 0; j < n; j++)
			*out += j % rails == r;
		return true;
	case FI_MRAIL_MUX_WINDOW:
		for (j = 0; j < n; j++)
			*out += (j / p->window) % rails == r;
		return true;
	case FI_MRAIL_MUX_WEIGHTED:
		for (i = 0; i < rails; i++)
			total += p->weights[i];
		if (!total || n % total)
			return false;
		*out = n / total * p->weights[r];
		return true;
	default:
		return false;
	}
}

/* Messages first..last-1 (pattern seed base + index), checked whole. */
static int mux_messages(struct bench *b, const struct test *t, uint8_t *buf,
			uint64_t first, uint64_t last, uint64_t base)
{
	struct bench_ctx ctx = { 0 };
	uint64_t j;
	size_t at;
	int ret = 0;

	for (j = first; j < last && !ret; j++) {
		if (b->is_server) {
			memset(buf, 0, t->msg_size);
			ret = bench_post_recv(b, false, buf, t->msg_size, 0, &ctx);
			if (!ret)
				ret = bench_wait_ctx(b, &ctx);
			at = mismatch(buf, t->msg_size, base + j);
			check_what(!ret && at == t->msg_size, "message data",
				   "message %" PRIu64 " byte %zu", base + j, at);
		} else {
			fill(buf, t->msg_size, base + j);
			ret = bench_post_send(b, false, buf, t->msg_size, 0, &ctx);
			if (!ret)
				ret = bench_wait_ctx(b, &ctx);
			check(!ret, "send %" PRIu64 ": %s", base + j, fi_strerror(-ret));
		}
	}
	return ret;
}

static int run_mux(struct bench *b, const struct test *t)
{
	struct fi_mrail_policy_attr pol;
	struct fi_mrail_stats st;
	uint64_t v, expect, sent = 0, got;
	uint8_t *buf = malloc(t->msg_size);
	size_t c, r;
	int ret = 0;

	if (!buf)
		return -FI_ENOMEM;
	/* Both sides have the same rails; the rest is the client's. */
	check(get_policy(b, &pol) == 0, "FI_MRAIL_GET_POLICY");
	/* Warm-up: a rail still connecting pushes back and the message takes
	 * the policy's next rail; once every rail is up, a SET_POLICY
	 * restarts the sequence from rail 0 and the counts are exact. */
	ret = mux_messages(b, t, buf, 0, 4 * (uint64_t) pol.rail_count, 5000);
	if (ret)
		goto out;
	bench_sync(b);
	if (!b->is_server && t->set_mux) {
		set_policy(b, t, true, t->set_mux);
	} else if (!b->is_server) {
		ret = fi_control(&b->ep->fid, FI_MRAIL_SET_POLICY, &pol);
		check(ret == 0, "FI_MRAIL_SET_POLICY of its own policy (restart): %s",
		      fi_strerror(-ret));
	}
	/* The server learns the client's policy to know what to expect. */
	if (!b->is_server)
		check(get_policy(b, &pol) == 0, "FI_MRAIL_GET_POLICY");
	bench_exchange_u64(b, pol.mux_policy, &v);
	if (b->is_server)
		pol.mux_policy = (uint32_t) v;
	bench_exchange_u64(b, pol.window, &v);
	if (b->is_server)
		pol.window = (uint32_t) v;
	bench_exchange_u64(b, pol.rail_count, &v);
	if (b->is_server)
		pol.rail_count = (uint32_t) v;
	for (r = 0; r < FI_MRAIL_MAX_RAILS; r++) {
		bench_exchange_u64(b, pol.weights[r], &v);
		if (b->is_server)
			pol.weights[r] = (uint32_t) v;
	}
	printf("%s: client multiplexing policy %s over %u rails, window %u, "
	       "weights %u,%u,%u,%u\n", PROG, pol.mux_policy < 4 ?
	       mux_names[pol.mux_policy] : "?", pol.rail_count, pol.window,
	       pol.weights[0], pol.weights[1], pol.weights[2], pol.weights[3]);
	check(fi_control(&b->ep->fid, FI_MRAIL_RESET_STATS, NULL) == 0,
	      "FI_MRAIL_RESET_STATS");
	bench_sync(b);

	for (c = 0; c < t->ncheckpoints; c++) {
		if (t->checkpoints[c] > sent) {
			ret = mux_messages(b, t, buf, sent, t->checkpoints[c], 0);
			if (ret)
				goto out;
			sent = t->checkpoints[c];
		}
		bench_sync(b);
		check(get_stats(b, &st) == 0 && st.rail_count == pol.rail_count,
		      "FI_MRAIL_GET_STATS: %u rails", st.rail_count);
		for (r = 0; r < pol.rail_count; r++) {
			if (!expected_mux(&pol, sent, r, &expect))
				continue;
			got = b->is_server ? st.rail[r].rx_ops : st.rail[r].tx_ops;
			check(got == expect, "after %" PRIu64 " messages: rail %zu %s "
			      "%" PRIu64 " operations, expected %" PRIu64, sent, r,
			      b->is_server ? "received" : "sent", got, expect);
			got = b->is_server ? st.rail[r].rx_bytes : st.rail[r].tx_bytes;
			check(got == expect * t->msg_size, "after %" PRIu64 " messages: "
			      "rail %zu %s %" PRIu64 " bytes, expected %" PRIu64, sent,
			      r, b->is_server ? "received" : "sent", got,
			      expect * t->msg_size);
			check(st.rail[r].errors == 0, "rail %zu: no errors", r);
		}
		printf("%s: after %" PRIu64 " messages, per rail:", PROG, sent);
		for (r = 0; r < pol.rail_count; r++)
			printf(" %" PRIu64, b->is_server ? st.rail[r].rx_ops :
			       st.rail[r].tx_ops);
		printf("\n");
		bench_sync(b);
	}
out:
	free(buf);
	return ret;
}

/* ---- stripe ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*
 * Dynamic striping holds rails only during a transfer: once all is done,
 * every rail must go back to FREE (the last ABORT may still be on its
 * way, so progress for up to 10 s first). progress drives the endpoint.
 */
static void check_rails_free(struct fid_ep *ep, int (*progress)(void *), void *arg,
			     const char *who)
{
	struct fi_mrail_stats st;
	double deadline = now_s() + 10;
	bool all_free = false;
	size_t r;

	while (!all_free) {
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		if (fi_control(&ep->fid, FI_MRAIL_GET_STATS, &st))
			break;
		all_free = true;
		for (r = 0; r < st.rail_count; r++)
			all_free = all_free && st.rail[r].state == FI_MRAIL_RAIL_FREE;
		if (all_free || now_s() > deadline)
			break;
		if (progress(arg) < 0)
			break;
	}
	for (r = 0; r < st.rail_count; r++)
		check(st.rail[r].state == FI_MRAIL_RAIL_FREE, "%s: rail %zu ends "
		      "FREE (state %u): no reservation left behind", who, r,
		      st.rail[r].state);
}

static int bench_progress_cb(void *arg)
{
	return bench_progress(arg);
}

static bool reserving(const struct fi_mrail_policy_attr *pol, size_t size)
{
	return pol->stripe_policy == FI_MRAIL_STRIPE_DYNAMIC ||
	       (pol->stripe_policy == FI_MRAIL_STRIPE_HYBRID &&
		size > pol->hybrid_threshold);
}

/*
 * What the reading side's policy makes each rail read of count messages of
 * size bytes, one at a time, added to expect; false when not exactly
 * known. *rails_per_msg: rails a reserving transfer holds.
 */
static bool expected_split(const struct fi_mrail_policy_attr *pol, size_t size,
			   size_t count, uint64_t *expect, size_t *rails_per_msg)
{
	struct mrail_stripe stripes[FI_MRAIL_MAX_RAILS];
	uint32_t ones[FI_MRAIL_MAX_RAILS] = { 0 };
	const uint32_t *weights = pol->weights;
	size_t r, rails = pol->rail_count;
	int n, s;

	*rails_per_msg = 0;
	switch (pol->stripe_policy) {
	case FI_MRAIL_STRIPE_EVEN:
		if (size % (STRIPE_ALIGN * rails))
			return false;
		for (r = 0; r < rails; r++)
			expect[r] += count * (size / rails);
		return true;
	case FI_MRAIL_STRIPE_DYNAMIC:
	case FI_MRAIL_STRIPE_HYBRID:
		if (!reserving(pol, size) || pol->stripe_ratio == 0.0) {
			/* Whole, on each rail in turn. */
			if (count % rails)
				return false;
			for (r = 0; r < rails; r++)
				expect[r] += count / rails * size;
			*rails_per_msg = reserving(pol, size) ? 1 : 0;
			return true;
		}
		if (pol->stripe_ratio != 1.0)
			return false;
		for (r = 0; r < rails; r++)
			ones[r] = 1;
		weights = ones;
		*rails_per_msg = rails;
		break;
	case FI_MRAIL_STRIPE_WEIGHTED:
		break;
	default:
		return false;
	}
	/* Weighted, or equal shares over every rail. */
	n = mrail_stripe_weighted(size, rails, weights, pol->min_stripe,
				  STRIPE_ALIGN, stripes);
	check(n > 0, "mrail_stripe_weighted's split");
	for (s = 0; s < n; s++)
		expect[stripes[s].rail] += count * stripes[s].len;
	return n > 0;
}

/* count messages of size bytes, one at a time, pattern seeds from seed. */
static int stripe_messages(struct bench *b, uint8_t *buf, size_t size, size_t count,
			   uint64_t seed)
{
	struct bench_ctx ctx = { 0 };
	size_t k, at;
	int ret = 0;

	for (k = 0; k < count; k++) {
		if (b->is_server) {
			memset(buf, 0, size);
			ret = bench_post_recv(b, false, buf, size, 0, &ctx);
			if (!ret)
				ret = bench_wait_ctx(b, &ctx);
			at = mismatch(buf, size, seed + k);
			check_what(!ret && at == size, "rendezvous data",
				   "message %zu of %zu bytes, byte %zu", k, size, at);
		} else {
			fill(buf, size, seed + k);
			ret = bench_post_send(b, false, buf, size, 0, &ctx);
			if (!ret)
				ret = bench_wait_ctx(b, &ctx);
			check(!ret, "rendezvous send %zu of %zu bytes: %s", k, size,
			      fi_strerror(-ret));
		}
		if (ret)
			break;
	}
	return ret;
}

/* One 8-byte message each way, checked: whatever first contact costs
 * (mrail introduces each endpoint to its peer with its first send) is paid
 * before a test counts rail operations. */
static int first_contact_both_ways(struct bench *b, uint8_t *buf)
{
	struct bench_ctx ctx = { 0 };
	int turn, ret = 0;

	for (turn = 0; turn < 2 && !ret; turn++) {
		bool receive = b->is_server == (turn == 0);

		if (receive) {
			memset(buf, 0, 8);
			ret = bench_post_recv(b, false, buf, 8, 0, &ctx);
		} else {
			fill(buf, 8, 7 + turn);
			ret = bench_post_send(b, false, buf, 8, 0, &ctx);
		}
		if (!ret)
			ret = bench_wait_ctx(b, &ctx);
		check(!ret && (!receive || mismatch(buf, 8, 7 + turn) == 8),
		      "first contact, message %d: %s", turn, fi_strerror(-ret));
	}
	return ret;
}

static int run_stripe(struct bench *b, const struct test *t)
{
	struct fi_mrail_policy_attr pol;
	struct fi_mrail_stats st;
	uint64_t expect[FI_MRAIL_MAX_RAILS] = { 0 }, tx = 0, rx = 0, total = 0;
	uint64_t want_tx, want_rx, v;
	size_t sizes[2] = { t->rdv_size, t->rdv_size2 }, nsizes = t->rdv_size2 ? 2 : 1;
	size_t big = t->rdv_size > t->rdv_size2 ? t->rdv_size : t->rdv_size2;
	uint8_t *buf = malloc(big);
	size_t r, i, per_msg, ctrl = 0;
	double share_sum = 0;
	bool exact = true;
	int ret = 0;

	if (!buf)
		return -FI_ENOMEM;
	if (b->is_server && t->set_stripe)
		set_policy(b, t, false, t->set_stripe);
	check(get_policy(b, &pol) == 0, "FI_MRAIL_GET_POLICY");
	/* The sender learns the reader's policy: its split decides. */
	bench_exchange_u64(b, pol.stripe_policy, &v);
	if (!b->is_server)
		pol.stripe_policy = (uint32_t) v;
	bench_exchange_u64(b, pol.hybrid_threshold, &v);
	if (!b->is_server)
		pol.hybrid_threshold = v;
	bench_exchange_u64(b, (uint64_t) (pol.stripe_ratio * 1e6), &v);
	if (!b->is_server)
		pol.stripe_ratio = (double) v / 1e6;
	/* First contact (each side's introduction to the other) before the
	 * counting starts: what is counted below is the striping alone. */
	ret = first_contact_both_ways(b, buf);
	if (ret)
		goto out;
	check(fi_control(&b->ep->fid, FI_MRAIL_RESET_STATS, NULL) == 0,
	      "FI_MRAIL_RESET_STATS");
	bench_sync(b);
	for (i = 0; i < nsizes && !ret; i++) {
		ret = stripe_messages(b, buf, sizes[i], t->rdv_count, 1000 + 100 * i);
		exact = expected_split(&pol, sizes[i], t->rdv_count, expect, &per_msg) &&
			exact;
		ctrl += t->rdv_count * per_msg;
	}
	if (ret)
		goto out;
	bench_sync(b);
	check(get_stats(b, &st) == 0, "FI_MRAIL_GET_STATS");
	if (!b->is_server) {
		/* One RTS per message and one ACK each; and per rail a
		 * reserving transfer held: our CTS, its RTS and ABORT. */
		for (r = 0; r < st.rail_count; r++) {
			tx += st.rail[r].tx_ops;
			rx += st.rail[r].rx_ops;
			total += st.rail[r].tx_bytes + st.rail[r].rx_bytes;
		}
		want_tx = t->rdv_count * nsizes + ctrl;
		want_rx = t->rdv_count * nsizes + 2 * ctrl;
		check(tx == want_tx && rx == want_rx && total == 0,
		      "sender: %" PRIu64 " messages sent, %" PRIu64 " received, %"
		      PRIu64 " bytes of eager data (expected %" PRIu64 ", %" PRIu64
		      ", 0)", tx, rx, total, want_tx, want_rx);
		goto out;
	}
	printf("%s: striping %s, rail bytes read:", PROG,
	       pol.stripe_policy < 6 ? stripe_names[pol.stripe_policy] : "?");
	for (r = 0; r < st.rail_count; r++) {
		printf(" %" PRIu64 " (share %.3f)", st.rail[r].rx_bytes,
		       st.rail[r].weight);
		total += st.rail[r].rx_bytes;
		share_sum += st.rail[r].weight;
		if (exact)
			check(st.rail[r].rx_bytes == expect[r], "rail %zu read %"
			      PRIu64 " bytes, expected %" PRIu64, r,
			      st.rail[r].rx_bytes, expect[r]);
		check(st.rail[r].errors == 0 && st.rail[r].in_flight == 0,
		      "rail %zu: no errors, nothing in flight", r);
	}
	printf("\n");
	check(total == t->rdv_count * (t->rdv_size + t->rdv_size2), "all rails "
	      "read %" PRIu64 " bytes, expected %zu", total,
	      t->rdv_count * (t->rdv_size + t->rdv_size2));
	check(fabs(share_sum - 1.0) < 1e-9, "shares sum to 1 (%.12f)", share_sum);
out:
	if (!ret)
		check_rails_free(b->ep, bench_progress_cb, b, b->is_server ?
				 "reader" : "sender");
	bench_sync(b);
	free(buf);
	return ret;
}

/* ---- cross: both ways at once ---- */

/* Prints, after the caller's heading, the bytes each rail read and how
 * many rails carried data, checking that none had errors: the bytes read
 * over all rails. */
static uint64_t report_rails_read(const struct fi_mrail_stats *st)
{
	uint64_t total = 0;
	unsigned used = 0;
	size_t r;

	for (r = 0; r < st->rail_count; r++) {
		printf(" %" PRIu64, st->rail[r].rx_bytes);
		total += st->rail[r].rx_bytes;
		used += st->rail[r].rx_bytes > 0;
		check(st->rail[r].errors == 0, "rail %zu: no errors", r);
	}
	printf(" (%u rails carried data)\n", used);
	return total;
}

static int run_cross(struct bench *b, const struct test *t)
{
	size_t n = t->rdv_count, size = t->rdv_size, k, at;
	uint8_t *in = calloc(n, size), *out = malloc(n * size);
	struct bench_ctx *ctx = calloc(2 * n, sizeof(*ctx));
	uint64_t self = b->is_server ? 1 : 2, other = 3 - self, total = 0;
	uint64_t tx0 = b->tx_done, rx0 = b->rx_done;
	struct fi_mrail_stats st;
	int ret = 0;

	if (!in || !out || !ctx) {
		ret = -FI_ENOMEM;
		goto out;
	}
	if (t->set_stripe)
		set_policy(b, t, false, t->set_stripe);
	check(fi_control(&b->ep->fid, FI_MRAIL_RESET_STATS, NULL) == 0,
	      "FI_MRAIL_RESET_STATS");
	for (k = 0; k < n; k++)
		fill(out + k * size, size, self * 10000 + k);
	for (k = 0; k < n && !ret; k++)
		ret = bench_post_recv(b, true, in + k * size, size, k, &ctx[k]);
	bench_sync(b);	/* both have their receives posted */
	for (k = 0; k < n && !ret; k++)
		ret = bench_post_send(b, true, out + k * size, size, k, &ctx[n + k]);
	if (!ret)
		ret = bench_wait(b, &b->tx_done, tx0 + n);
	if (!ret)
		ret = bench_wait(b, &b->rx_done, rx0 + n);
	check(!ret, "%zu sends and %zu receives of %zu bytes completed both "
	      "ways: %s", n, n, size, fi_strerror(-ret));
	if (ret)
		goto out;
	check(b->tx_done - tx0 == n && b->rx_done - rx0 == n, "exactly %zu send "
	      "and %zu receive completions (got %" PRIu64 ", %" PRIu64 ")", n, n,
	      b->tx_done - tx0, b->rx_done - rx0);
	for (k = 0; k < n; k++) {
		at = mismatch(in + k * size, size, other * 10000 + k);
		check_what(at == size, "crossing data", "message %zu byte %zu", k, at);
	}
	bench_sync(b);
	check(get_stats(b, &st) == 0, "FI_MRAIL_GET_STATS");
	printf("%s: crossing, rail bytes read here:", PROG);
	total = report_rails_read(&st);
	check(total == n * size, "this side read %" PRIu64 " bytes, expected %zu",
	      total, n * size);
	check_rails_free(b->ep, bench_progress_cb, b, "crossing");
	bench_sync(b);
out:
	free(in);
	free(out);
	free(ctx);
	return ret;
}

/* ---- fanin: several senders, one reader ---- */

#define FANIN_MAX 8

struct fanin {
	int socks[FANIN_MAX];
	unsigned nsocks;
	struct mrail_setup fab;	/* one CQ both ways */
	fi_addr_t peers[FANIN_MAX];
	uint64_t tx_done, rx_done, errors;
};

static int sock_all(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t) n;
	}
	return 0;
}

static int fanin_connect(struct fanin *f, const char *server, unsigned port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	char service[16];
	double deadline = now_s() + 30;
	int fd;

	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(server, service, &hints, &ai))
		return -1;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		if (now_s() > deadline)
			break;
		usleep(100000);
	}
	freeaddrinfo(ai);
	f->socks[0] = fd;
	f->nsocks = fd >= 0;
	return fd >= 0 ? 0 : -1;
}

static int fanin_accept(struct fanin *f, unsigned port, unsigned clients)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t) port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *) &sin, sizeof(sin)) || listen(fd, 8)) {
		close(fd);
		return -1;
	}
	while (f->nsocks < clients) {
		f->socks[f->nsocks] = accept(fd, NULL, NULL);
		if (f->socks[f->nsocks] < 0)
			break;
		f->nsocks++;
	}
	close(fd);
	return f->nsocks == clients ? 0 : -1;
}

static int fanin_open(struct fanin *f)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024 };
	uint8_t ours[256], theirs[256];
	size_t len = sizeof(ours);
	uint64_t n;
	unsigned i;
	int ret;

	ret = ctl_try_getinfo("mrail", FI_MSG | FI_TAGGED, 0, false, FI_THREAD_UNSPEC,
			      &f->fab.info);
	if (ret)
		return ret;
	if ((ret = setup_try_open(&f->fab, f->fab.info, &cq_attr, 0)) ||
	    (ret = fi_enable(f->fab.ep)) ||
	    (ret = fi_getname(&f->fab.ep->fid, ours, &len)))
		return ret;
	for (i = 0; i < f->nsocks; i++) {
		n = len;
		if (sock_all(f->socks[i], &n, sizeof(n), true) ||
		    sock_all(f->socks[i], ours, len, true) ||
		    sock_all(f->socks[i], &n, sizeof(n), false) || n > sizeof(theirs) ||
		    sock_all(f->socks[i], theirs, n, false))
			return -FI_EIO;
		if (fi_av_insert(f->fab.av, theirs, 1, &f->peers[i], 0, NULL) != 1)
			return -FI_EINVAL;
	}
	return 0;
}

static void fanin_close(struct fanin *f)
{
	unsigned i;

	setup_close(&f->fab, NULL, 0);
	for (i = 0; i < f->nsocks; i++)
		close(f->socks[i]);
}

static int fanin_progress(void *arg)
{
	struct fanin *f = arg;
	struct fi_cq_tagged_entry e[16];
	struct fi_cq_err_entry err = { 0 };
	ssize_t n, i;

	n = fi_cq_read(f->fab.cq, e, 16);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		fi_cq_readerr(f->fab.cq, &err, 0);
		fprintf(stderr, "%s: error completion: %s\n", PROG,
			fi_strerror(err.err));
		f->errors++;
		return 1;
	}
	if (n < 0)
		return (int) n;
	for (i = 0; i < n; i++) {
		if (e[i].flags & FI_RECV)
			f->rx_done++;
		else
			f->tx_done++;
	}
	return (int) n;
}

/* Progresses until *counter reaches target, or 60 s without one more. */
static int fanin_wait(struct fanin *f, const uint64_t *counter, uint64_t target)
{
	double deadline = now_s() + 60;
	int ret;

	while (*counter < target) {
		ret = fanin_progress(f);
		if (ret < 0)
			return ret;
		if (ret > 0)
			deadline = now_s() + 60;
		else if (now_s() > deadline)
			return -FI_ETIMEDOUT;
	}
	return 0;
}

static ssize_t fanin_post(struct fanin *f, bool send, void *buf, size_t len,
			  fi_addr_t peer, uint64_t tag)
{
	ssize_t ret;

	do {
		ret = send ? fi_tsend(f->fab.ep, buf, len, NULL, peer, tag, NULL) :
			     fi_trecv(f->fab.ep, buf, len, NULL, FI_ADDR_UNSPEC, tag, 0,
				      NULL);
		if (ret == -FI_EAGAIN)
			fanin_progress(f);
	} while (ret == -FI_EAGAIN);
	return ret;
}

static int run_fanin(const struct test *t, const char *server, unsigned port)
{
	size_t n = t->rdv_count, size = t->rdv_size, k, at;
	unsigned clients = server ? 1 : t->clients, i;
	struct fanin f = { .nsocks = 0 };
	struct fi_mrail_stats st;
	uint64_t total = 0, idx = 0, done = 0;
	uint8_t *bufs = NULL, go = 1;
	int ret;

	ret = server ? fanin_connect(&f, server, port) :
		       fanin_accept(&f, port, clients);
	check(!ret, "%s %u control connection(s)", server ? "made" : "accepted",
	      clients);
	if (ret)
		return -FI_EIO;
	ret = fanin_open(&f);
	check(!ret, "mrail endpoint open, addresses exchanged: %s",
	      fi_strerror(-ret));
	if (ret)
		goto out;
	bufs = calloc((size_t) clients * n, size);
	if (!bufs) {
		ret = -FI_ENOMEM;
		goto out;
	}
	if (!server) {
		/* Receives first, then every client is told its index and
		 * goes: their transfers overlap. */
		for (i = 0; i < clients && !ret; i++)
			for (k = 0; k < n && !ret; k++)
				ret = (int) fanin_post(&f, false, bufs + (i * n + k) * size,
						       size, 0, (uint64_t) i << 32 | k);
		for (i = 0; i < clients && !ret; i++) {
			idx = i;
			if (sock_all(f.socks[i], &idx, sizeof(idx), true))
				ret = -FI_EIO;
		}
		if (!ret)
			ret = fanin_wait(&f, &f.rx_done, (uint64_t) clients * n);
		check(!ret && !f.errors, "%" PRIu64 " of %zu messages from %u "
		      "senders received: %s", f.rx_done, clients * n, clients,
		      fi_strerror(-ret));
		check(f.rx_done == clients * n && f.tx_done == 0, "exactly %zu "
		      "receive completions (got %" PRIu64 ", %" PRIu64 " sends)",
		      clients * n, f.rx_done, f.tx_done);
		for (i = 0; i < clients; i++)
			for (k = 0; k < n; k++) {
				at = mismatch(bufs + (i * n + k) * size, size,
					      (i + 1) * 10000 + k);
				check_what(at == size, "fan-in data", "sender %u "
					   "message %zu byte %zu", i, k, at);
			}
		if (!get_stats_ep(f.fab.ep, &st)) {
			printf("%s: fan-in of %u senders, rail bytes read:", PROG,
			       clients);
			total = report_rails_read(&st);
			check(total == clients * n * size, "read %" PRIu64 " bytes, "
			      "expected %zu", total, clients * n * size);
		}
		check_rails_free(f.fab.ep, fanin_progress, &f, "fan-in reader");
		/* The senders may close once their rails are free too. */
		for (i = 0; i < clients; i++) {
			if (sock_all(f.socks[i], &done, sizeof(done), false))
				ret = -FI_EIO;
			sock_all(f.socks[i], &go, 1, true);
		}
	} else {
		if (sock_all(f.socks[0], &idx, sizeof(idx), false)) {
			ret = -FI_EIO;
			goto out;
		}
		for (k = 0; k < n; k++)
			fill(bufs + k * size, size, (idx + 1) * 10000 + k);
		for (k = 0; k < n && !ret; k++)
			ret = (int) fanin_post(&f, true, bufs + k * size, size,
					       f.peers[0], idx << 32 | k);
		if (!ret)
			ret = fanin_wait(&f, &f.tx_done, n);
		check(!ret && !f.errors && f.tx_done == n, "sender %" PRIu64 ": "
		      "exactly %zu send completions (got %" PRIu64 "): %s", idx, n,
		      f.tx_done, fi_strerror(-ret));
		check_rails_free(f.fab.ep, fanin_progress, &f, "fan-in sender");
		done = 1;
		sock_all(f.socks[0], &done, sizeof(done), true);
		/* Keep serving reads until the reader has everything. */
		while (!ret && read(f.socks[0], &go, 1) < 0)
			;
	}
out:
	free(bufs);
	fanin_close(&f);
	return ret;
}

/* ---- control ---- */

static void bad_set(struct bench *b, const char *what,
		    void (*spoil)(struct fi_mrail_policy_attr *))
{
	struct fi_mrail_policy_attr before, attr, after;
	int ret;

	get_policy(b, &before);
	attr = before;
	spoil(&attr);
	ret = fi_control(&b->ep->fid, FI_MRAIL_SET_POLICY, &attr);
	get_policy(b, &after);
	check(ret == -FI_EINVAL && !memcmp(&before, &after, sizeof(before)),
	      "SET_POLICY with %s: %s (expected -FI_EINVAL), policy unchanged: %s",
	      what, fi_strerror(-ret),
	      memcmp(&before, &after, sizeof(before)) ? "no" : "yes");
}

static void spoil_mux(struct fi_mrail_policy_attr *a) { a->mux_policy = 99; }
static void spoil_stripe(struct fi_mrail_policy_attr *a) { a->stripe_policy = 77; }
static void spoil_threshold(struct fi_mrail_policy_attr *a) { a->hybrid_threshold = (1ull << 40) + 1; }
static void spoil_ratio_nan(struct fi_mrail_policy_attr *a) { a->stripe_ratio = NAN; }
static void spoil_zero_weights(struct fi_mrail_policy_attr *a) { memset(a->weights, 0, sizeof(a->weights)); }
static void spoil_big_weight(struct fi_mrail_policy_attr *a) { a->weights[0] = (1u << 20) + 1; }
static void spoil_extra_weight(struct fi_mrail_policy_attr *a) { a->weights[FI_MRAIL_MAX_RAILS - 1] = 1; }
static void spoil_window(struct fi_mrail_policy_attr *a) { a->window = 0; }
static void spoil_reserved(struct fi_mrail_policy_attr *a) { a->reserved = 1; }
static void spoil_alpha_one(struct fi_mrail_policy_attr *a) { a->adaptive_alpha = 1.0; }
static void spoil_alpha_nan(struct fi_mrail_policy_attr *a) { a->adaptive_alpha = NAN; }
static void spoil_alpha_neg(struct fi_mrail_policy_attr *a) { a->adaptive_alpha = -0.25; }
static void spoil_ratio(struct fi_mrail_policy_attr *a) { a->stripe_ratio = 1.5; }
static void spoil_min_stripe(struct fi_mrail_policy_attr *a) { a->min_stripe = 0; }
static void spoil_size(struct fi_mrail_policy_attr *a) { a->size = 4; }

static int run_control(struct bench *b)
{
	struct fi_mrail_policy_attr before, after;
	struct fi_mrail_stats st = { .size = 0 };
	int ret;

	bad_set(b, "mux_policy 99", spoil_mux);
	bad_set(b, "stripe_policy 77", spoil_stripe);
	bad_set(b, "hybrid_threshold above the largest message", spoil_threshold);
	bad_set(b, "stripe_ratio NaN", spoil_ratio_nan);
	bad_set(b, "all weights 0", spoil_zero_weights);
	bad_set(b, "a weight above 2^20", spoil_big_weight);
	bad_set(b, "a weight beyond the rail count", spoil_extra_weight);
	bad_set(b, "window 0", spoil_window);
	bad_set(b, "reserved 1", spoil_reserved);
	bad_set(b, "adaptive_alpha 1", spoil_alpha_one);
	bad_set(b, "adaptive_alpha NaN", spoil_alpha_nan);
	bad_set(b, "adaptive_alpha -0.25", spoil_alpha_neg);
	bad_set(b, "stripe_ratio 1.5", spoil_ratio);
	bad_set(b, "min_stripe 0", spoil_min_stripe);
	bad_set(b, "size 4", spoil_size);

	get_policy(b, &before);
	ret = fi_control(&b->ep->fid, FI_MRAIL_SET_POLICY, NULL);
	get_policy(b, &after);
	check(ret == -FI_EINVAL && !memcmp(&before, &after, sizeof(before)),
	      "SET_POLICY with NULL: %s (expected -FI_EINVAL)", fi_strerror(-ret));
	ret = fi_control(&b->ep->fid, FI_MRAIL_GET_POLICY, NULL);
	check(ret == -FI_EINVAL, "GET_POLICY with NULL: %s", fi_strerror(-ret));
	ret = fi_control(&b->ep->fid, FI_MRAIL_GET_STATS, &st);
	check(ret == -FI_EINVAL, "GET_STATS with size 0: %s", fi_strerror(-ret));
	ret = fi_control(&b->ep->fid, FI_PROV_SPECIFIC_MRAIL + 100, NULL);
	check(ret == -FI_ENOSYS, "an unknown mrail command: %s (expected "
	      "-FI_ENOSYS)", fi_strerror(-ret));
	/* A good SET of what GET said changes nothing and succeeds. */
	ret = fi_control(&b->ep->fid, FI_MRAIL_SET_POLICY, &before);
	get_policy(b, &after);
	check(ret == 0 && !memcmp(&before, &after, sizeof(before)),
	      "SET_POLICY of GET_POLICY's answer: %s", fi_strerror(-ret));
	bench_sync(b);
	return 0;
}

/* ---- main ---- */

static int getinfo_only(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->fabric_attr->prov_name = strdup("mrail");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	printf("%s: fi_getinfo: %s\n", PROG, ret ? fi_strerror(-ret) : "an offer");
	fi_freeinfo(info);
	return ret ? 3 : 0;
}

static void usage(const char *argv0)
{
	printf("usage: %s [-E PORT] -x mux|stripe|cross|fanin|control [-c COUNTS]\n"
	       "          [-s SIZE] [-n MSGS] [-S SIZE] [-L SIZE] [-k CLIENTS]\n"
	       "          [-P MUX] [-X STRIPE] [-w W0,W1,..] [-W WINDOW]\n"
	       "          [-r STRIPE_RATIO] [-T HYBRID_THRESHOLD] [SERVER]\n"
	       "       %s -g   (fi_getinfo for mrail only)\n", argv0, argv0);
}

static int parse_list(const char *text, size_t *out, size_t max, size_t *n)
{
	char *end;

	*n = 0;
	while (*text && *n < max) {
		out[(*n)++] = strtoull(text, &end, 10);
		if (end == text || (*end && *end != ','))
			return -1;
		text = *end ? end + 1 : end;
	}
	return *text ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct test t = { .msg_size = 1000, .rdv_size = 1 << 20, .rdv_count = 2,
			  .checkpoints = { 4, 8, 12 }, .ncheckpoints = 3,
			  .ratio = -1, .threshold = -1, .clients = 2 };
	struct bench b = { .prog = PROG };
	struct bench_opts o;
	size_t list[FI_MRAIL_MAX_RAILS], i;
	char tool_options[512] = "";
	int opt, ret;

	bench_opts_init(&o, "8", DEFAULT_PORT);
	while ((opt = getopt(argc, argv, "E:x:c:s:n:S:L:r:T:k:P:X:w:W:gh")) != -1) {
		if (opt != 'E' && opt != 'g' && opt != 'h' &&
		    strlen(tool_options) + strlen(optarg) + 8 < sizeof(tool_options))
			snprintf(tool_options + strlen(tool_options),
				 sizeof(tool_options) - strlen(tool_options),
				 " -%c %s", opt, optarg);
		switch (opt) {
		case 'E': o.port = (unsigned) atoi(optarg); break;
		case 'x': t.what = optarg; break;
		case 'c':
			if (parse_list(optarg, t.checkpoints, MAX_CHECKPOINTS,
				       &t.ncheckpoints))
				goto bad;
			break;
		case 's': t.msg_size = strtoull(optarg, NULL, 0); break;
		case 'n': t.rdv_count = strtoull(optarg, NULL, 0); break;
		case 'S': t.rdv_size = strtoull(optarg, NULL, 0); break;
		case 'L': t.rdv_size2 = strtoull(optarg, NULL, 0); break;
		case 'r': t.ratio = atof(optarg); break;
		case 'T': t.threshold = strtoll(optarg, NULL, 0); break;
		case 'k': t.clients = (unsigned) atoi(optarg); break;
		case 'P': t.set_mux = optarg; break;
		case 'X': t.set_stripe = optarg; break;
		case 'w':
			if (parse_list(optarg, list, FI_MRAIL_MAX_RAILS,
				       &t.weight_count))
				goto bad;
			for (i = 0; i < t.weight_count; i++)
				t.weights[i] = (uint32_t) list[i];
			break;
		case 'W': t.window = (uint32_t) atoi(optarg); break;
		case 'g': return getinfo_only();
		case 'h': usage(argv[0]); return 0;
		default: goto bad;
		}
	}
	if (optind < argc)
		o.server = argv[optind++];
	if (optind < argc || !t.what || !t.msg_size || !t.rdv_size ||
	    !t.clients || t.clients > FANIN_MAX)
		goto bad;
	if (!strcmp(t.what, "fanin")) {
		ret = run_fanin(&t, o.server, o.port);
		if (ret)
			printf("%s: test fanin stopped: %s\n", PROG, fi_strerror(-ret));
		printf("%s: %d of %d checks passed\n", PROG,
		       check_count - check_failures, check_count);
		return ret || check_failures ? 1 : 0;
	}
	ret = bench_open(&b, &o, tool_options);
	if (ret)
		return 2;
	if (!strcmp(t.what, "mux"))
		ret = run_mux(&b, &t);
	else if (!strcmp(t.what, "stripe"))
		ret = run_stripe(&b, &t);
	else if (!strcmp(t.what, "cross"))
		ret = run_cross(&b, &t);
	else if (!strcmp(t.what, "control"))
		ret = run_control(&b);
	else
		ret = -FI_EINVAL;
	bench_close(&b);
	if (ret)
		printf("%s: test %s stopped: %s\n", PROG, t.what, fi_strerror(-ret));
	printf("%s: %d of %d checks passed\n", PROG, check_count - check_failures,
	       check_count);
	return ret || check_failures ? 1 : 0;
bad:
	usage(argv[0]);
	return 2;
}
