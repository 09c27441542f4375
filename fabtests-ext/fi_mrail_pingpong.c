/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_pingpong: message latency between two hosts, in fabtests' style.
 *
 *   server: fi_mrail_pingpong [-p PROV] [-E PORT] [-S SIZES] [-n ITERS]
 *                             [-w WARMUP] [-T] [-o text|csv|kv]
 *   client: fi_mrail_pingpong [same options] SERVER_ADDR
 *
 * For each size the client sends one message (fi_send, or fi_tsend with
 * -T) and the server sends one back as soon as it has it; WARMUP untimed
 * round trips, then ITERS timed ones. Both sides busy-poll the CQ
 * (fi_cq_read), so no wake-up is measured. Each receive is posted before
 * the message it waits for can arrive. The client reports half the round
 * trip in microseconds: mean, median, minimum and maximum. Sizes above the
 * max_msg_size of either side are skipped, and the report says so. A
 * benchmark: it measures and asserts nothing about speed.
 *
 * With -B, the bidirectional ping-pong of Ben Fredj and Renault: in each
 * round both sides send at once and wait for the peer's message, so every
 * message crosses one going the other way; the client reports the time of
 * one such exchange.
 *
 * With -R N (a baseline for a bare provider), each side opens N endpoints
 * of the provider, sends and receives round trip k's messages on endpoint
 * k mod N, and reads every endpoint's CQ on each poll: the least a
 * multirail layer over that provider pays per message.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "common/mrail_bench.h"

#define PP_PROG			"fi_mrail_pingpong"
#define PP_DEFAULT_PORT		47594
#define PP_DEFAULT_SIZES	"8"
#define PP_TAG			0x7070
/*
 * Without -n, each size makes PP_AUTO_MAX_ITERS round trips, fewer for
 * large messages so a size moves about PP_AUTO_BYTES each way, but never
 * fewer than PP_AUTO_MIN_ITERS (a median needs a few samples).
 */
#define PP_AUTO_MAX_ITERS	10000
#define PP_AUTO_MIN_ITERS	20
#define PP_AUTO_BYTES		(64u << 20)
/* Without -w, the warm-up is this fraction of the iterations. */
#define PP_AUTO_WARMUP_DIVISOR	10

struct pp_opts {
	struct bench_opts common;
	size_t warmup;
	bool warmup_given;
	bool bidir;	/* -B */
};

struct pp_stats {
	double mean_us;
	double median_us;
	double min_us;
	double max_us;
};

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [OPTIONS] [SERVER_ADDR]\n"
		"Measures half round trips (microseconds) per message size.\n"
		"%s"
		"  -w WARMUP   untimed round trips before each size (default: a\n"
		"              tenth of the iterations)\n"
		"  -B          bidirectional: both sides send at once each round;\n"
		"              reports the time of one exchange\n"
		"Without -n, each size makes %d round trips, fewer for large\n"
		"messages (about %u MiB each way) but at least %d.\n",
		argv0, bench_common_usage, PP_AUTO_MAX_ITERS, PP_AUTO_BYTES >> 20,
		PP_AUTO_MIN_ITERS);
}

static size_t pp_iters(const struct pp_opts *o, size_t size)
{
	return bench_iters(&o->common, size, PP_AUTO_BYTES, PP_AUTO_MIN_ITERS,
			   PP_AUTO_MAX_ITERS);
}

static size_t pp_warmup(const struct pp_opts *o, size_t iters)
{
	return o->warmup_given ? o->warmup :
	       bench_warmup(iters, PP_AUTO_WARMUP_DIVISOR, SIZE_MAX);
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

/* Sorts the samples (seconds of half round trip) to find the median. */
static void pp_stats(double *samples, size_t n, struct pp_stats *st)
{
	double sum = 0;
	size_t i;

	qsort(samples, n, sizeof(*samples), compare_doubles);
	for (i = 0; i < n; i++)
		sum += samples[i];
	st->mean_us = sum / (double) n * 1e6;
	st->median_us = (n % 2 ? samples[n / 2] :
			 (samples[n / 2 - 1] + samples[n / 2]) / 2) * 1e6;
	st->min_us = samples[0] * 1e6;
	st->max_us = samples[n - 1] * 1e6;
}

/*
 * One timed step: waits for the previous send (done long before the answer
 * it drew came back, so waiting costs the clock nothing), sends, and waits
 * for rx_ctx's message. *elapsed: from the send to that message.
 */
static int pp_send_and_wait(struct bench *b, bool tagged, char *tx_buf, size_t size,
			    struct bench_ctx *tx_ctx, struct bench_ctx *rx_ctx,
			    double *elapsed)
{
	double start;
	int ret;

	ret = bench_wait_ctx(b, tx_ctx);
	if (ret)
		return ret;
	start = bench_now();
	ret = bench_post_send(b, tagged, tx_buf, size, PP_TAG, tx_ctx);
	if (!ret)
		ret = bench_wait_ctx(b, rx_ctx);
	*elapsed = bench_now() - start;
	return ret;
}

/*
 * ROUNDS round trips. The client times each one into samples (NULL: the
 * warm-up); the server only answers. The receive for the next message is
 * posted before this side sends, so the peer's answer never arrives
 * unexpected.
 */
static int pp_rounds(struct bench *b, const struct pp_opts *o, size_t size,
		     char *tx_buf, char *rx_buf, size_t rounds, double *samples)
{
	struct bench_ctx tx_ctx = { 0 }, rx_ctx = { 0 };
	bool tagged = o->common.tagged;
	double elapsed;
	size_t i;
	int ret;

	/* Both sides start together, or the first round measures the
	 * peer's setup. */
	if (!rounds)
		return bench_sync(b);
	ret = bench_post_recv(b, tagged, rx_buf, size, PP_TAG, &rx_ctx);
	if (!ret)
		ret = bench_sync(b);
	for (i = 0; i < rounds && !ret; i++) {
		if (b->is_server) {
			ret = bench_wait_ctx(b, &rx_ctx);
			if (!ret && i + 1 < rounds)
				ret = bench_post_recv(b, tagged, rx_buf, size,
						      PP_TAG, &rx_ctx);
			if (!ret)
				ret = bench_wait_ctx(b, &tx_ctx);
			if (!ret)
				ret = bench_post_send(b, tagged, tx_buf, size,
						      PP_TAG, &tx_ctx);
			continue;
		}
		ret = pp_send_and_wait(b, tagged, tx_buf, size, &tx_ctx, &rx_ctx, &elapsed);
		if (ret)
			break;
		if (samples)
			samples[i] = elapsed / 2;
		if (i + 1 < rounds)
			ret = bench_post_recv(b, tagged, rx_buf, size, PP_TAG, &rx_ctx);
	}
	/* The contexts live in this frame: both must be back. */
	if (!ret)
		ret = bench_wait_ctx(b, &tx_ctx);
	return ret;
}

/*
 * -B: ROUNDS exchanges, both sides sending at once and then waiting for
 * the peer's message; both time each one (samples NULL: the warm-up, or
 * the server). Two receives stay posted, for this exchange and the next,
 * since the peer sends its next message as soon as ours has arrived, which
 * may be before its own has reached us.
 */
static int pp_exchanges(struct bench *b, const struct pp_opts *o, size_t size,
			char *tx_buf, char *const rx_bufs[2], size_t rounds,
			double *samples)
{
	struct bench_ctx tx_ctx = { 0 }, rx_ctx[2];
	bool tagged = o->common.tagged;
	double elapsed;
	size_t i;
	int ret = 0;

	memset(rx_ctx, 0, sizeof(rx_ctx));
	if (!rounds)
		return bench_sync(b);
	for (i = 0; i < 2 && i < rounds && !ret; i++)
		ret = bench_post_recv(b, tagged, rx_bufs[i], size, PP_TAG, &rx_ctx[i]);
	if (!ret)
		ret = bench_sync(b);
	for (i = 0; i < rounds && !ret; i++) {
		ret = pp_send_and_wait(b, tagged, tx_buf, size, &tx_ctx, &rx_ctx[i % 2],
				       &elapsed);
		if (ret)
			break;
		if (samples)
			samples[i] = elapsed;
		if (i + 2 < rounds)
			ret = bench_post_recv(b, tagged, rx_bufs[i % 2], size, PP_TAG,
					      &rx_ctx[i % 2]);
	}
	if (!ret)
		ret = bench_wait_ctx(b, &tx_ctx);
	return ret;
}

/* Either kind of round, as -B says. */
static int pp_run(struct bench *b, const struct pp_opts *o, size_t size,
		  char *tx_buf, char *const rx_bufs[2], size_t rounds, double *samples)
{
	if (o->bidir)
		return pp_exchanges(b, o, size, tx_buf, rx_bufs, rounds, samples);
	return pp_rounds(b, o, size, tx_buf, rx_bufs[0], rounds, samples);
}

/* st NULL: the size was skipped. */
static void pp_report(const struct bench *b, const struct pp_opts *o,
		      size_t size, size_t iters, size_t warmup,
		      const struct pp_stats *st)
{
	const struct bench_opts *c = &o->common;
	const struct pp_stats zero = { 0 };
	bool skipped = !st;

	if (skipped) {
		st = &zero;
		iters = 0;
		warmup = 0;
	}
	switch (c->format) {
	case BENCH_FORMAT_TEXT:
		if (skipped)
			printf("%s: %s %s %zu: skipped: provider max_msg_size %zu\n",
			       PP_PROG, c->prov, bench_mode_name(c), size,
			       b->max_msg_size);
		else
			printf("%s: %s %s %zu x %zu: %s mean %.2f us, "
			       "median %.2f us (min %.2f, max %.2f)\n", PP_PROG,
			       c->prov, bench_mode_name(c), size, iters,
			       o->bidir ? "bidirectional exchange" : "half round trip",
			       st->mean_us, st->median_us, st->min_us, st->max_us);
		break;
	case BENCH_FORMAT_CSV:
		printf("%s,%s,%s,%zu,%zu,%zu,%.3f,%.3f,%.3f,%.3f,%s,%zu\n", PP_PROG,
		       c->prov, bench_mode_name(c), size, iters, warmup,
		       st->mean_us, st->median_us, st->min_us, st->max_us,
		       skipped ? "skipped" : "ok", b->max_msg_size);
		break;
	case BENCH_FORMAT_KV:
		printf("RESULT tool=%s prov=%s mode=%s size=%zu%s", PP_PROG, c->prov,
		       bench_mode_name(c), size, o->bidir ? " bidir=1" : "");
		if (skipped)
			printf(" status=skipped reason=max_msg_size");
		else
			printf(" iters=%zu warmup=%zu mean_us=%.3f median_us=%.3f "
			       "min_us=%.3f max_us=%.3f status=ok", iters, warmup,
			       st->mean_us, st->median_us, st->min_us, st->max_us);
		printf(" max_msg_size=%zu\n", b->max_msg_size);
		break;
	}
	fflush(stdout);
}

static int pp_size(struct bench *b, const struct pp_opts *o, size_t size)
{
	size_t iters = pp_iters(o, size), warmup = pp_warmup(o, iters);
	size_t slot = size ? size : 1;
	double *samples = NULL;
	char *tx_buf, *rx_bufs[2] = { NULL, NULL };
	struct pp_stats st;
	int ret = -FI_ENOMEM;

	if (size > b->max_msg_size) {
		if (!b->is_server)
			pp_report(b, o, size, iters, warmup, NULL);
		return 0;
	}
	tx_buf = malloc(slot);
	if (!tx_buf)
		goto out;
	rx_bufs[0] = malloc(slot);
	/* -B keeps two receives posted. */
	rx_bufs[1] = o->bidir ? malloc(slot) : NULL;
	if (!rx_bufs[0] || (o->bidir && !rx_bufs[1]))
		goto free_rx;
	if (!b->is_server) {
		samples = calloc(iters, sizeof(*samples));
		if (!samples)
			goto free_rx;
	}
	/* Fault the pages in now rather than in the timed rounds. */
	memset(tx_buf, 0x5a, slot);
	memset(rx_bufs[0], 0, slot);
	if (rx_bufs[1])
		memset(rx_bufs[1], 0, slot);

	ret = pp_run(b, o, size, tx_buf, rx_bufs, warmup, NULL);
	if (!ret)
		ret = pp_run(b, o, size, tx_buf, rx_bufs, iters, samples);
	if (!ret && samples) {
		pp_stats(samples, iters, &st);
		pp_report(b, o, size, iters, warmup, &st);
	}
	free(samples);
free_rx:
	free(rx_bufs[1]);
	free(rx_bufs[0]);
	free(tx_buf);
out:
	if (ret == -FI_ENOMEM)
		fprintf(stderr, "%s: no memory for %zu-byte messages\n", PP_PROG, size);
	return ret;
}

static int pp_parse_args(int argc, char **argv, struct pp_opts *o)
{
	int opt;

	bench_opts_init(&o->common, PP_DEFAULT_SIZES, PP_DEFAULT_PORT);
	o->common.striped_tag = PP_TAG;
	while ((opt = bench_getopt(&o->common, argc, argv,
				   BENCH_COMMON_OPTS "w:Bh")) > 0) {
		switch (opt) {
		case 'B':
			o->bidir = true;
			break;
		case 'w':
			if (bench_parse_warmup(optarg, &o->warmup, &o->warmup_given))
				return 2;
			break;
		default:
			return bench_bad_opt(opt, usage, argv[0]);
		}
	}
	if (opt == BENCH_OPT_BAD)
		return 2;
	return bench_parse_operands(&o->common, argc, argv, usage);
}

int main(int argc, char **argv)
{
	struct bench b = { .prog = PP_PROG };
	struct pp_opts o = { 0 };
	char tool_options[64];
	size_t i;
	int ret;

	ret = pp_parse_args(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;

	if (o.warmup_given)
		snprintf(tool_options, sizeof(tool_options), "-w %zu%s", o.warmup,
			 o.bidir ? " -B" : "");
	else
		snprintf(tool_options, sizeof(tool_options), "-w auto%s",
			 o.bidir ? " -B" : "");
	ret = bench_open(&b, &o.common, tool_options);
	if (ret)
		return 1;
	if (!b.is_server && o.common.format == BENCH_FORMAT_CSV)
		printf("tool,prov,mode,size,iters,warmup,mean_us,median_us,min_us,"
		       "max_us,status,max_msg_size\n");
	for (i = 0; i < o.common.nsizes && !ret; i++)
		ret = pp_size(&b, &o, o.common.sizes[i]);
	/* The peer may still be reading its last completions. */
	if (!ret)
		ret = bench_sync(&b);
	bench_close(&b);
	return ret ? 1 : 0;
}
