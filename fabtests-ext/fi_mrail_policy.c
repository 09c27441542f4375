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
 *   control bad FI_MRAIL_SET_POLICY input: -FI_EINVAL and nothing changed.
 * Every message is checked byte for byte. -P NAME / -X NAME set the
 * multiplexing (client) / striping (server) policy at run time with
 * FI_MRAIL_SET_POLICY, with -w WEIGHTS and -W WINDOW, and check that
 * FI_MRAIL_GET_POLICY returns it; without them the FI_MRAIL_* variables
 * decide. Prints "N of N checks passed"; exits 0 only if all passed.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mrail_bench.h"
#include "common/mrail_check.h"
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

static int get_stats(struct bench *b, struct fi_mrail_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return fi_control(&b->ep->fid, FI_MRAIL_GET_STATS, st);
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

static int run_stripe(struct bench *b, const struct test *t)
{
	struct fi_mrail_policy_attr pol;
	struct fi_mrail_stats st;
	struct mrail_stripe stripes[FI_MRAIL_MAX_RAILS];
	struct bench_ctx ctx = { 0 };
	uint64_t expect[FI_MRAIL_MAX_RAILS] = { 0 }, tx = 0, rx = 0, total = 0;
	uint8_t *buf = malloc(t->rdv_size);
	double share_sum = 0;
	bool exact = false;
	size_t k, r, at;
	int n, ret = 0, s;

	if (!buf)
		return -FI_ENOMEM;
	if (b->is_server && t->set_stripe)
		set_policy(b, t, false, t->set_stripe);
	check(get_policy(b, &pol) == 0, "FI_MRAIL_GET_POLICY");
	check(fi_control(&b->ep->fid, FI_MRAIL_RESET_STATS, NULL) == 0,
	      "FI_MRAIL_RESET_STATS");
	bench_sync(b);
	for (k = 0; k < t->rdv_count; k++) {
		if (b->is_server) {
			memset(buf, 0, t->rdv_size);
			ret = bench_post_recv(b, false, buf, t->rdv_size, 0, &ctx);
			if (!ret)
				ret = bench_wait_ctx(b, &ctx);
			at = mismatch(buf, t->rdv_size, 1000 + k);
			check_what(!ret && at == t->rdv_size, "rendezvous data",
				   "message %zu byte %zu", k, at);
		} else {
			fill(buf, t->rdv_size, 1000 + k);
			ret = bench_post_send(b, false, buf, t->rdv_size, 0, &ctx);
			if (!ret)
				ret = bench_wait_ctx(b, &ctx);
			check(!ret, "rendezvous send %zu: %s", k, fi_strerror(-ret));
		}
		if (ret)
			goto out;
	}
	bench_sync(b);
	check(get_stats(b, &st) == 0, "FI_MRAIL_GET_STATS");
	if (!b->is_server) {
		/* The client sent one RTS per message and got one ACK each. */
		for (r = 0; r < st.rail_count; r++) {
			tx += st.rail[r].tx_ops;
			rx += st.rail[r].rx_ops;
			total += st.rail[r].tx_bytes + st.rail[r].rx_bytes;
		}
		check(tx == t->rdv_count && rx == t->rdv_count && total == 0,
		      "sender: %" PRIu64 " RTS sent, %" PRIu64 " ACKs received, %"
		      PRIu64 " bytes of eager data (expected %zu, %zu, 0)", tx, rx,
		      total, t->rdv_count, t->rdv_count);
		goto out;
	}
	if (pol.stripe_policy == FI_MRAIL_STRIPE_EVEN &&
	    t->rdv_size % (STRIPE_ALIGN * pol.rail_count) == 0) {
		for (r = 0; r < pol.rail_count; r++)
			expect[r] = t->rdv_count * (t->rdv_size / pol.rail_count);
		exact = true;
	} else if (pol.stripe_policy == FI_MRAIL_STRIPE_WEIGHTED) {
		n = mrail_stripe_weighted(t->rdv_size, pol.rail_count, pol.weights,
					  pol.min_stripe, STRIPE_ALIGN, stripes);
		check(n > 0, "mrail_stripe_weighted's split");
		for (s = 0; s < n; s++)
			expect[stripes[s].rail] += t->rdv_count * stripes[s].len;
		exact = n > 0;
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
	check(total == t->rdv_count * t->rdv_size, "all rails read %" PRIu64
	      " bytes, expected %zu", total, t->rdv_count * t->rdv_size);
	check(fabs(share_sum - 1.0) < 1e-9, "shares sum to 1 (%.12f)", share_sum);
out:
	bench_sync(b);
	free(buf);
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
static void spoil_dynamic(struct fi_mrail_policy_attr *a) { a->stripe_policy = FI_MRAIL_STRIPE_DYNAMIC; }
static void spoil_hybrid(struct fi_mrail_policy_attr *a) { a->stripe_policy = FI_MRAIL_STRIPE_HYBRID; }
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
	bad_set(b, "stripe_policy dynamic (not wired)", spoil_dynamic);
	bad_set(b, "stripe_policy hybrid (not wired)", spoil_hybrid);
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
	printf("usage: %s [-E PORT] -x mux|stripe|control [-c COUNTS] [-s SIZE]\n"
	       "          [-n MSGS] [-S SIZE] [-P MUX] [-X STRIPE] [-w W0,W1,..]\n"
	       "          [-W WINDOW] [SERVER]\n"
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
			  .checkpoints = { 4, 8, 12 }, .ncheckpoints = 3 };
	struct bench b = { .prog = PROG };
	struct bench_opts o;
	size_t list[FI_MRAIL_MAX_RAILS], i;
	char tool_options[512] = "";
	int opt, ret;

	bench_opts_init(&o, "8", DEFAULT_PORT);
	while ((opt = getopt(argc, argv, "E:x:c:s:n:S:P:X:w:W:gh")) != -1) {
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
	if (optind < argc || !t.what || !t.msg_size || !t.rdv_size)
		goto bad;
	ret = bench_open(&b, &o, tool_options);
	if (ret)
		return 2;
	if (!strcmp(t.what, "mux"))
		ret = run_mux(&b, &t);
	else if (!strcmp(t.what, "stripe"))
		ret = run_stripe(&b, &t);
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
