/*
 * fi_mrail_bw: streaming bandwidth between two hosts, in fabtests' style.
 *
 *   server: fi_mrail_bw [-p PROV] [-E PORT] [-S SIZES] [-n ITERS] [-W WINDOW]
 *                       [-w WARMUP] [-T] [-o text|csv|kv]
 *   client: fi_mrail_bw [same options] SERVER_ADDR
 *
 * For each size the client streams ITERS messages (fi_send, or fi_tsend
 * with -T), keeping WINDOW sends in flight; the server keeps WINDOW
 * receives posted and answers with one message when it has received all of
 * them, which stops the client's clock. A warm-up stream of the same size
 * goes first, untimed, so connections the provider opens lazily and TCP's
 * slow start are not measured. Sizes above the max_msg_size of either side
 * are skipped, and the report says so. The client reports; the server only
 * speaks on failure. A benchmark: it measures and asserts nothing about
 * speed; fi_mrail_msg checks correctness.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "common/mrail_bench.h"

#define BW_PROG			"fi_mrail_bw"
#define BW_DEFAULT_PORT		47593
#define BW_DEFAULT_SIZES	"16k"
#define BW_DEFAULT_WINDOW	64
#define BW_DATA_TAG		0x6277
#define BW_ACK_TAG		0x6278
/*
 * Without -n, each size streams about BW_AUTO_BYTES, within the bounds
 * below: enough to dwarf setup costs at large sizes, bounded in message
 * count so the small sizes of a sweep do not take minutes.
 */
#define BW_AUTO_BYTES		(64u << 20)
#define BW_AUTO_MIN_ITERS	32
#define BW_AUTO_MAX_ITERS	20000
/* Without -w, the warm-up is this fraction of the iterations... */
#define BW_AUTO_WARMUP_DIVISOR	10
/* ...and the receiver cycles through at most this much buffer memory. */
#define BW_RX_MEMORY		(64u << 20)

struct bw_opts {
	struct bench_opts common;
	size_t window;
	size_t warmup;		/* 0: chosen per size */
	bool warmup_given;
};

/* The buffers and contexts of one size. */
struct bw_run {
	size_t size;
	size_t iters;
	size_t warmup;
	char *bufs;		/* nbufs receive buffers, or one send buffer */
	size_t nbufs;
	struct bench_ctx *ctx;	/* window data contexts, then the ack's */
};

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [OPTIONS] [SERVER_ADDR]\n"
		"Streams messages to the server and reports the bandwidth per size.\n"
		"%s"
		"  -W WINDOW   sends in flight (default %d)\n"
		"  -w WARMUP   untimed messages before each size (default: a tenth\n"
		"              of the iterations, at most WINDOW)\n"
		"  -t          same as -T\n"
		"Without -n, each size moves about %u MiB in %d to %d messages.\n",
		argv0, bench_common_usage, BW_DEFAULT_WINDOW, BW_AUTO_BYTES >> 20,
		BW_AUTO_MIN_ITERS, BW_AUTO_MAX_ITERS);
}

static size_t bw_iters(const struct bw_opts *o, size_t size)
{
	size_t iters;

	if (o->common.iters)
		return o->common.iters;
	iters = size ? BW_AUTO_BYTES / size : BW_AUTO_MAX_ITERS;
	if (iters < BW_AUTO_MIN_ITERS)
		iters = BW_AUTO_MIN_ITERS;
	if (iters > BW_AUTO_MAX_ITERS)
		iters = BW_AUTO_MAX_ITERS;
	return iters;
}

static size_t bw_warmup(const struct bw_opts *o, size_t iters)
{
	size_t warmup;

	if (o->warmup_given)
		return o->warmup;
	warmup = iters / BW_AUTO_WARMUP_DIVISOR;
	if (warmup > o->window)
		warmup = o->window;
	return warmup ? warmup : 1;
}

/* ---- one stream ---- */

/*
 * Client: COUNT messages out, then the server's ack. The clock starts once
 * the server has its first window of receives posted (the sync), and stops
 * at the ack.
 */
static int bw_send_stream(struct bench *b, const struct bw_opts *o,
			  struct bw_run *r, size_t count, double *secs)
{
	struct bench_ctx *ack_ctx = &r->ctx[o->window];
	struct bench_ctx *ctx;
	double start;
	size_t posted;
	char ack;
	int ret;

	ret = bench_post_recv(b, o->common.tagged, &ack, sizeof(ack), BW_ACK_TAG,
			      ack_ctx);
	if (!ret)
		ret = bench_sync(b);
	if (ret)
		return ret;
	start = bench_now();
	for (posted = 0; posted < count; posted++) {
		/* A busy context is a send still in flight: the window is full. */
		ctx = &r->ctx[posted % o->window];
		ret = bench_wait_ctx(b, ctx);
		if (ret)
			return ret;
		ret = bench_post_send(b, o->common.tagged, r->bufs, r->size,
				      BW_DATA_TAG, ctx);
		if (ret)
			return ret;
	}
	ret = bench_wait_ctx(b, ack_ctx);
	if (ret)
		return ret;
	*secs = bench_now() - start;
	/* Every context is back before the next stream reuses them. */
	for (posted = 0; posted < o->window && !ret; posted++)
		ret = bench_wait_ctx(b, &r->ctx[posted]);
	return ret;
}

static int bw_post_data_recv(struct bench *b, const struct bw_opts *o,
			     struct bw_run *r, size_t index)
{
	struct bench_ctx *ctx = &r->ctx[index % o->window];
	int ret;

	/* A busy context is a receive not yet matched: the window is full. */
	ret = bench_wait_ctx(b, ctx);
	if (ret)
		return ret;
	return bench_post_recv(b, o->common.tagged,
			       r->bufs + (index % r->nbufs) * r->size, r->size,
			       BW_DATA_TAG, ctx);
}

/* Server: keeps the window of receives posted until COUNT messages arrived,
 * then acknowledges. */
static int bw_recv_stream(struct bench *b, const struct bw_opts *o,
			  struct bw_run *r, size_t count)
{
	struct bench_ctx *ack_ctx = &r->ctx[o->window];
	size_t posted;
	char ack = 1;
	int ret = 0;

	for (posted = 0; posted < count && posted < o->window && !ret; posted++)
		ret = bw_post_data_recv(b, o, r, posted);
	if (!ret)
		ret = bench_sync(b);
	for (; posted < count && !ret; posted++)
		ret = bw_post_data_recv(b, o, r, posted);
	for (posted = 0; posted < o->window && !ret; posted++)
		ret = bench_wait_ctx(b, &r->ctx[posted]);
	if (!ret)
		ret = bench_post_send(b, o->common.tagged, &ack, sizeof(ack),
				      BW_ACK_TAG, ack_ctx);
	if (!ret)
		ret = bench_wait_ctx(b, ack_ctx);
	return ret;
}

/* ---- one size ---- */

static int bw_run_alloc(struct bw_run *r, const struct bw_opts *o, bool receiver)
{
	size_t slot = r->size ? r->size : 1;

	r->nbufs = 1;
	if (receiver) {
		r->nbufs = BW_RX_MEMORY / slot;
		if (r->nbufs > o->window)
			r->nbufs = o->window;
		if (!r->nbufs)
			r->nbufs = 1;
	}
	r->bufs = malloc(r->nbufs * slot);
	r->ctx = calloc(o->window + 1, sizeof(*r->ctx));
	if (!r->bufs || !r->ctx) {
		free(r->bufs);
		free(r->ctx);
		return -FI_ENOMEM;
	}
	/* Fault the pages in now rather than in the timed stream. */
	memset(r->bufs, 0xb5, r->nbufs * slot);
	return 0;
}

static void bw_run_free(struct bw_run *r)
{
	free(r->bufs);
	free(r->ctx);
}

static void bw_report(const struct bench *b, const struct bw_opts *o,
		      const struct bw_run *r, double secs, bool skipped)
{
	const struct bench_opts *c = &o->common;
	double gbps = 0, msg_rate = 0;

	if (!skipped && secs > 0) {
		gbps = (double) r->size * (double) r->iters * 8 / secs / 1e9;
		msg_rate = (double) r->iters / secs;
	}
	switch (c->format) {
	case BENCH_FORMAT_TEXT:
		if (skipped)
			printf("%s: %s %s %zu: skipped: provider max_msg_size %zu\n",
			       BW_PROG, c->prov, bench_mode_name(c), r->size,
			       b->max_msg_size);
		else
			printf("%s: %s %s %zu x %zu: %.3f Gbit/s (%.1f MB/s, %.3f s)\n",
			       BW_PROG, c->prov, bench_mode_name(c), r->size,
			       r->iters, gbps, gbps * 1e3 / 8, secs);
		break;
	case BENCH_FORMAT_CSV:
		printf("%s,%s,%s,%zu,%zu,%zu,%zu,%.6f,%.4f,%.0f,%s,%zu\n", BW_PROG,
		       c->prov, bench_mode_name(c), r->size, skipped ? 0 : r->iters,
		       skipped ? 0 : r->warmup, o->window, skipped ? 0 : secs, gbps,
		       msg_rate, skipped ? "skipped" : "ok", b->max_msg_size);
		break;
	case BENCH_FORMAT_KV:
		printf("RESULT tool=%s prov=%s mode=%s size=%zu", BW_PROG, c->prov,
		       bench_mode_name(c), r->size);
		if (skipped)
			printf(" status=skipped reason=max_msg_size");
		else
			printf(" iters=%zu warmup=%zu window=%zu seconds=%.6f "
			       "gbit_per_s=%.4f msg_per_s=%.0f status=ok",
			       r->iters, r->warmup, o->window, secs, gbps, msg_rate);
		printf(" max_msg_size=%zu\n", b->max_msg_size);
		break;
	}
	fflush(stdout);
}

static int bw_size(struct bench *b, const struct bw_opts *o, size_t size)
{
	struct bw_run r = { .size = size };
	double secs = 0;
	int ret;

	r.iters = bw_iters(o, size);
	r.warmup = bw_warmup(o, r.iters);
	if (size > b->max_msg_size) {
		if (!b->is_server)
			bw_report(b, o, &r, 0, true);
		return 0;
	}
	ret = bw_run_alloc(&r, o, b->is_server);
	if (ret) {
		fprintf(stderr, "%s: no memory for %zu-byte messages\n", BW_PROG, size);
		return ret;
	}
	if (b->is_server) {
		ret = bw_recv_stream(b, o, &r, r.warmup);
		if (!ret)
			ret = bw_recv_stream(b, o, &r, r.iters);
	} else {
		ret = bw_send_stream(b, o, &r, r.warmup, &secs);
		if (!ret)
			ret = bw_send_stream(b, o, &r, r.iters, &secs);
		if (!ret)
			bw_report(b, o, &r, secs, false);
	}
	bw_run_free(&r);
	return ret;
}

static int bw_parse_args(int argc, char **argv, struct bw_opts *o)
{
	size_t value;
	int opt, ret;

	bench_opts_init(&o->common, BW_DEFAULT_SIZES, BW_DEFAULT_PORT);
	o->window = BW_DEFAULT_WINDOW;
	while ((opt = getopt(argc, argv, BENCH_COMMON_OPTS "W:w:th")) != -1) {
		ret = bench_parse_opt(&o->common, opt, optarg);
		if (ret <= 0) {
			if (ret)
				return 2;
			continue;
		}
		switch (opt) {
		case 'W':
			if (bench_parse_size(optarg, &value) || !value) {
				fprintf(stderr, "-W %s: expected a positive count\n",
					optarg);
				return 2;
			}
			o->window = value;
			break;
		case 'w':
			if (bench_parse_size(optarg, &o->warmup)) {
				fprintf(stderr, "-w %s: expected a count\n", optarg);
				return 2;
			}
			o->warmup_given = true;
			break;
		case 't':
			o->common.tagged = true;
			break;
		case 'h':
			usage(argv[0]);
			return 1;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		o->common.server = argv[optind++];
	if (optind < argc) {
		usage(argv[0]);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = { .prog = BW_PROG };
	struct bw_opts o = { 0 };
	char tool_options[64];
	size_t i;
	int ret;

	ret = bw_parse_args(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;

	if (o.warmup_given)
		snprintf(tool_options, sizeof(tool_options), "-W %zu -w %zu",
			 o.window, o.warmup);
	else
		snprintf(tool_options, sizeof(tool_options), "-W %zu -w auto",
			 o.window);
	ret = bench_open(&b, &o.common, tool_options);
	if (ret)
		return 1;
	if (!b.is_server && o.common.format == BENCH_FORMAT_CSV)
		printf("tool,prov,mode,size,iters,warmup,window,seconds,gbit_per_s,"
		       "msg_per_s,status,max_msg_size\n");
	for (i = 0; i < o.common.nsizes && !ret; i++)
		ret = bw_size(&b, &o, o.common.sizes[i]);
	/* The peer may still be reading its last completions. */
	if (!ret)
		ret = bench_sync(&b);
	bench_close(&b);
	return ret ? 1 : 0;
}
