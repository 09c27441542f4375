/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_bw: streaming bandwidth between two hosts, in fabtests' style.
 *
 *   server: fi_mrail_bw [-p PROV] [-E PORT] [-S SIZES] [-n ITERS] [-W WINDOW]
 *                       [-w WARMUP] [-T | -r] [-i MS [-I FILE]] [-o text|csv|kv]
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
 *
 * With -r the client streams RMA writes instead: the server registers a
 * region of WINDOW slots of the size (within the same memory bound) and
 * sends its key and address over the control connection; the client keeps
 * WINDOW fi_write calls in flight, slot after slot, waits for every one to
 * complete, then sends one message which the server answers: that answer
 * stops the clock, so the figure counts only bytes that have landed
 * whatever completion level the provider gives. Each stream writes its own
 * pattern (a function of the stream and the byte's offset), the server
 * clears the region before and checks every slot written after it, and a
 * mismatch fails the run: the benchmark cannot report garbage.
 *
 * With -i MS the client prints, during each timed stream, one line
 * "T_MS GBIT" every MS milliseconds: the end of the interval since the
 * stream started and the payload completed in it, in Gbit/s, after a
 * "# ..." line giving the stream's start on the realtime clock (so that a
 * script can place other events on the same time line). *
 * With -R N (a baseline for a bare provider), each side opens N endpoints
 * of the provider, the stream's k-th message goes on endpoint k mod N, the
 * answers on the first, and every poll reads every endpoint's CQ: a
 * multirail layer over that provider at its simplest.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_errno.h>

#include "common/mrail_bench.h"

#define BW_PROG			"fi_mrail_bw"
#define BW_DEFAULT_PORT		47593
#define BW_DEFAULT_SIZES	"16k"
#define BW_DEFAULT_WINDOW	64
#define BW_DATA_TAG		0x6277
#define BW_ACK_TAG		0x6278
/* -r: the message that tells the server a stream of writes is done. */
#define BW_DONE_TAG		0x6279
/* -r: the key the server asks for (the provider's, under FI_MR_PROV_KEY). */
#define BW_RMA_KEY		0x6277
/* -i: at most an hour between reports, at least 1 ms. */
#define BW_MAX_INTERVAL_MS	3600000
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
	unsigned interval_ms;	/* -i: 0 for no interval reports */
	const char *interval_path;	/* -I: NULL for standard output */
};

/* The buffers and contexts of one size. */
struct bw_run {
	size_t size;
	size_t iters;
	size_t warmup;
	char *bufs;		/* nbufs receive buffers or slots, or one send buffer */
	size_t nbufs;
	/* window data contexts, then the ack's, then (-r) the done message's */
	struct bench_ctx *ctx;
	/* -r: the server's region, and where the client writes to. */
	struct fid_mr *mr;
	uint64_t key;
	uint64_t raddr;
	size_t slots;
	/* Streams of this size so far: each writes its own pattern. */
	unsigned stream;
};

/* -i: the interval report of the timed stream running. */
struct bw_ticker {
	FILE *out;
	double interval;	/* seconds */
	double start;
	double last;
	uint64_t last_done;
	size_t size;
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
		"  -r          RMA writes (fi_write) into a region the server\n"
		"              registered; the server checks the data\n"
		"  -i MS       client: print \"T_MS GBIT\" every MS milliseconds\n"
		"              of each timed stream\n"
		"  -I FILE     write those lines to FILE instead of standard output\n"
		"Without -n, each size moves about %u MiB in %d to %d messages.\n",
		argv0, bench_common_usage, BW_DEFAULT_WINDOW, BW_AUTO_BYTES >> 20,
		BW_AUTO_MIN_ITERS, BW_AUTO_MAX_ITERS);
}

static size_t bw_iters(const struct bw_opts *o, size_t size)
{
	return bench_iters(&o->common, size, BW_AUTO_BYTES, BW_AUTO_MIN_ITERS,
			   BW_AUTO_MAX_ITERS);
}

/* Never more warm-up messages than one window holds. */
static size_t bw_warmup(const struct bw_opts *o, size_t iters)
{
	return o->warmup_given ? o->warmup :
	       bench_warmup(iters, BW_AUTO_WARMUP_DIVISOR, o->window);
}

/* ---- interval reports (-i) ---- */

static void bw_tick(struct bench *b, void *arg)
{
	struct bw_ticker *t = arg;
	double now = bench_now();

	if (now - t->last < t->interval)
		return;
	fprintf(t->out, "%.1f %.4f\n", (now - t->start) * 1e3,
		(double) (b->tx_done - t->last_done) * (double) t->size * 8 /
		(now - t->last) / 1e9);
	fflush(t->out);
	t->last = now;
	t->last_done = b->tx_done;
}

/* Starts the reports of a timed stream, whose clock started at start. */
static void bw_ticker_start(struct bench *b, struct bw_ticker *t,
			    const struct bw_opts *o, const struct bw_run *r,
			    double start)
{
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	t->interval = o->interval_ms / 1e3;
	t->start = t->last = start;
	t->last_done = b->tx_done;
	t->size = r->size;
	fprintf(t->out, "# %s %s %s size=%zu interval_ms=%u start_realtime=%.6f\n",
		BW_PROG, o->common.prov, bench_mode_name(&o->common), r->size,
		o->interval_ms, (double) wall.tv_sec + (double) wall.tv_nsec / 1e9);
	fflush(t->out);
	b->progress_hook = bw_tick;
	b->progress_arg = t;
}

static void bw_ticker_stop(struct bench *b)
{
	b->progress_hook = NULL;
	b->progress_arg = NULL;
}

/* ---- the data pattern of RMA streams (-r) ---- */

/*
 * The 64-bit word at byte offset off (a multiple of 8) of a slot written
 * by stream seed: differs between streams and between every two words of
 * a slot, so a stripe that landed at the wrong offset, was not written or
 * is left from an earlier stream shows.
 */
static uint64_t bw_pattern_word(uint64_t seed, size_t off)
{
	uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t) off + 1) *
		     0xbf58476d1ce4e5b9ull;

	return x ^ (x >> 29);
}

static void bw_pattern_fill(char *buf, size_t len, uint64_t seed)
{
	uint64_t word;
	size_t off;

	for (off = 0; off < len; off += sizeof(word)) {
		word = bw_pattern_word(seed, off);
		memcpy(buf + off, &word, len - off < sizeof(word) ?
					 len - off : sizeof(word));
	}
}

/* Returns the offset of the first byte of buf that is not the pattern, or
 * len if all are. */
static size_t bw_pattern_check(const char *buf, size_t len, uint64_t seed)
{
	uint64_t word;
	size_t off, n, i;

	for (off = 0; off < len; off += sizeof(word)) {
		word = bw_pattern_word(seed, off);
		n = len - off < sizeof(word) ? len - off : sizeof(word);
		if (!memcmp(buf + off, &word, n))
			continue;
		for (i = 0; i < n && buf[off + i] == ((char *) &word)[i]; i++)
			;
		return off + i;
	}
	return len;
}

/* ---- one stream ---- */

/*
 * Client: COUNT messages out, then the server's ack. The clock starts once
 * the server has its first window of receives posted (the sync), and stops
 * at the ack.
 */
static int bw_send_stream(struct bench *b, const struct bw_opts *o,
			  struct bw_run *r, size_t count, struct bw_ticker *ticker,
			  double *secs)
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
	if (ticker)
		bw_ticker_start(b, ticker, o, r, start);
	for (posted = 0; posted < count; posted++) {
		/* A busy context is a send still in flight: the window is full. */
		ctx = &r->ctx[posted % o->window];
		ret = bench_wait_ctx(b, ctx);
		if (ret)
			goto out;
		ret = bench_post_send(b, o->common.tagged, r->bufs, r->size,
				      BW_DATA_TAG, ctx);
		if (ret)
			goto out;
	}
	ret = bench_wait_ctx(b, ack_ctx);
	if (ret)
		goto out;
	*secs = bench_now() - start;
	/* Every context is back before the next stream reuses them. */
	for (posted = 0; posted < o->window && !ret; posted++)
		ret = bench_wait_ctx(b, &r->ctx[posted]);
out:
	bw_ticker_stop(b);
	return ret;
}

/*
 * Client, -r: COUNT writes into the server's slots in turn, WINDOW in
 * flight; once all have completed, the done message, and the server's
 * answer stops the clock. Then the server's verdict on the data.
 */
static int bw_write_stream(struct bench *b, const struct bw_opts *o,
			   struct bw_run *r, size_t count, struct bw_ticker *ticker,
			   double *secs)
{
	struct bench_ctx *ack_ctx = &r->ctx[o->window];
	struct bench_ctx *done_ctx = &r->ctx[o->window + 1];
	struct bench_ctx *ctx;
	uint64_t bad;
	double start;
	size_t posted;
	char ack, done = 1;
	int ret;

	bw_pattern_fill(r->bufs, r->size, ++r->stream);
	ret = bench_post_recv(b, true, &ack, sizeof(ack), BW_ACK_TAG, ack_ctx);
	if (!ret)
		ret = bench_sync(b);
	if (ret)
		return ret;
	start = bench_now();
	if (ticker)
		bw_ticker_start(b, ticker, o, r, start);
	for (posted = 0; posted < count; posted++) {
		ctx = &r->ctx[posted % o->window];
		ret = bench_wait_ctx(b, ctx);
		if (ret)
			goto out;
		ret = bench_post_write(b, r->bufs, r->size, r->raddr +
				       (posted % r->slots) * r->size, r->key, ctx);
		if (ret)
			goto out;
	}
	for (posted = 0; posted < o->window && !ret; posted++)
		ret = bench_wait_ctx(b, &r->ctx[posted]);
	bw_ticker_stop(b);
	if (!ret)
		ret = bench_post_send(b, true, &done, sizeof(done), BW_DONE_TAG,
				      done_ctx);
	if (!ret)
		ret = bench_wait_ctx(b, ack_ctx);
	if (!ret)
		*secs = bench_now() - start;
	if (!ret)
		ret = bench_wait_ctx(b, done_ctx);
	if (!ret)
		ret = bench_exchange_u64(b, 0, &bad);
	if (!ret && bad) {
		fprintf(stderr, "%s: the server found the data of the %zu-byte "
			"writes wrong: slot %" PRIu64 ", byte %" PRIu64 " (see its "
			"output)\n", BW_PROG, r->size, (bad - 1) / r->size,
			(bad - 1) % r->size);
		ret = -FI_EIO;
	}
out:
	bw_ticker_stop(b);
	return ret;
}

/*
 * Server, -r: clears the region, lets the client write until its done
 * message, answers it, then checks every slot written and tells the client
 * (0, or 1 + the region offset of the first wrong byte).
 */
static int bw_target_stream(struct bench *b, const struct bw_opts *o,
			    struct bw_run *r, size_t count)
{
	struct bench_ctx *ack_ctx = &r->ctx[o->window];
	struct bench_ctx *done_ctx = &r->ctx[o->window + 1];
	size_t slot, written, off;
	uint64_t bad = 0, unused;
	char ack = 1, done;
	int ret;

	r->stream++;
	memset(r->bufs, 0, r->slots * r->size);
	ret = bench_post_recv(b, true, &done, sizeof(done), BW_DONE_TAG, done_ctx);
	if (!ret)
		ret = bench_sync(b);
	/* The provider may need this side to progress to land the data. */
	if (!ret)
		ret = bench_wait_ctx(b, done_ctx);
	if (!ret)
		ret = bench_post_send(b, true, &ack, sizeof(ack), BW_ACK_TAG, ack_ctx);
	if (!ret)
		ret = bench_wait_ctx(b, ack_ctx);
	if (ret)
		return ret;
	written = count < r->slots ? count : r->slots;
	for (slot = 0; slot < written && !bad; slot++) {
		off = bw_pattern_check(r->bufs + slot * r->size, r->size, r->stream);
		if (off == r->size)
			continue;
		bad = slot * r->size + off + 1;
		fprintf(stderr, "%s: stream %u of %zu writes of %zu bytes: slot %zu "
			"byte %zu is %#x, not the pattern written\n", BW_PROG,
			r->stream, count, r->size, slot, off,
			(unsigned char) r->bufs[slot * r->size + off]);
	}
	ret = bench_exchange_u64(b, bad, &unused);
	return ret ? ret : bad ? -FI_EIO : 0;
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
	r->ctx = calloc(o->window + 2, sizeof(*r->ctx));
	if (!r->bufs || !r->ctx) {
		free(r->bufs);
		free(r->ctx);
		return -FI_ENOMEM;
	}
	/* Fault the pages in now rather than in the timed stream. */
	memset(r->bufs, 0xb5, r->nbufs * slot);
	return 0;
}

/*
 * -r: the server registers its buffers as one region of slots and tells
 * the client the key, the region's remote address and the slot count.
 */
static int bw_rma_setup(struct bench *b, struct bw_run *r)
{
	uint64_t key = 0, raddr = 0, slots = 0;
	int ret;

	if (b->is_server) {
		ret = bench_mr_reg(b, r->bufs, r->nbufs * r->size, FI_REMOTE_WRITE,
				   BW_RMA_KEY, &r->mr, &key, &raddr);
		if (ret)
			return ret;
		slots = r->nbufs;
	}
	ret = bench_exchange_u64(b, key, &r->key);
	if (!ret)
		ret = bench_exchange_u64(b, raddr, &r->raddr);
	if (!ret)
		ret = bench_exchange_u64(b, slots, &slots);
	if (ret)
		return ret;
	if (b->is_server) {
		r->slots = r->nbufs;
	} else if (!slots || slots > BW_RX_MEMORY) {
		fprintf(stderr, "%s: the server offers %" PRIu64 " slots\n", BW_PROG,
			slots);
		return -FI_EINVAL;
	} else {
		r->slots = (size_t) slots;
	}
	return 0;
}

static void bw_run_free(struct bw_run *r)
{
	if (r->mr)
		fi_close(&r->mr->fid);
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
			       "gbit_per_s=%.4f msg_per_s=%.0f status=ok%s",
			       r->iters, r->warmup, o->window, secs, gbps, msg_rate,
			       c->rma ? " data=checked" : "");
		printf(" max_msg_size=%zu\n", b->max_msg_size);
		break;
	}
	fflush(stdout);
}

/* One untimed and one timed stream of the mode asked for. */
static int bw_streams(struct bench *b, const struct bw_opts *o,
		      struct bw_run *r, struct bw_ticker *ticker, double *secs)
{
	int ret;

	if (b->is_server && o->common.rma) {
		ret = bw_target_stream(b, o, r, r->warmup);
		return ret ? ret : bw_target_stream(b, o, r, r->iters);
	}
	if (b->is_server) {
		ret = bw_recv_stream(b, o, r, r->warmup);
		return ret ? ret : bw_recv_stream(b, o, r, r->iters);
	}
	if (o->common.rma) {
		ret = bw_write_stream(b, o, r, r->warmup, NULL, secs);
		return ret ? ret : bw_write_stream(b, o, r, r->iters, ticker, secs);
	}
	ret = bw_send_stream(b, o, r, r->warmup, NULL, secs);
	return ret ? ret : bw_send_stream(b, o, r, r->iters, ticker, secs);
}

static int bw_size(struct bench *b, const struct bw_opts *o, size_t size,
		   struct bw_ticker *ticker)
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
	if (o->common.rma)
		ret = bw_rma_setup(b, &r);
	if (!ret)
		ret = bw_streams(b, o, &r, ticker, &secs);
	if (!ret && !b->is_server)
		bw_report(b, o, &r, secs, false);
	bw_run_free(&r);
	return ret;
}

static int bw_parse_args(int argc, char **argv, struct bw_opts *o)
{
	size_t value, i;
	int opt;

	bench_opts_init(&o->common, BW_DEFAULT_SIZES, BW_DEFAULT_PORT);
	o->common.striped_tag = BW_DATA_TAG;
	o->window = BW_DEFAULT_WINDOW;
	while ((opt = bench_getopt(&o->common, argc, argv,
				   BENCH_COMMON_OPTS "W:w:thri:I:")) > 0) {
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
			if (bench_parse_warmup(optarg, &o->warmup, &o->warmup_given))
				return 2;
			break;
		case 't':
			o->common.tagged = true;
			break;
		case 'r':
			o->common.rma = true;
			break;
		case 'i':
			if (bench_parse_size(optarg, &value) || !value ||
			    value > BW_MAX_INTERVAL_MS) {
				fprintf(stderr, "-i %s: expected milliseconds, 1 to "
					"%d\n", optarg, BW_MAX_INTERVAL_MS);
				return 2;
			}
			o->interval_ms = (unsigned) value;
			break;
		case 'I':
			o->interval_path = optarg;
			break;
		default:
			return bench_bad_opt(opt, usage, argv[0]);
		}
	}
	if (opt == BENCH_OPT_BAD || bench_parse_operands(&o->common, argc, argv, usage))
		return 2;
	if (o->common.rma && o->common.tagged) {
		fprintf(stderr, "-r and -T: RMA writes are not tagged; give one\n");
		return 2;
	}
	for (i = 0; o->common.rma && i < o->common.nsizes; i++) {
		if (!o->common.sizes[i]) {
			fprintf(stderr, "-S: -r writes at least 1 byte; size 0 has "
				"nothing to check\n");
			return 2;
		}
	}
	if (o->interval_path && !o->interval_ms) {
		fprintf(stderr, "-I %s: needs -i MS, the interval\n",
			o->interval_path);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = { .prog = BW_PROG };
	struct bw_ticker ticker = { .out = stdout };
	struct bw_ticker *ticks = NULL;
	struct bw_opts o = { 0 };
	char tool_options[64], warmup[32] = "auto";
	size_t i;
	int ret;

	ret = bw_parse_args(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;

	if (o.warmup_given)
		snprintf(warmup, sizeof(warmup), "%zu", o.warmup);
	/* -i is the client's own business; -r must match. */
	snprintf(tool_options, sizeof(tool_options), "-W %zu -w %s%s", o.window,
		 warmup, o.common.rma ? " -r" : "");
	if (o.interval_ms && o.common.server) {
		ticks = &ticker;
		if (o.interval_path) {
			ticker.out = fopen(o.interval_path, "w");
			if (!ticker.out) {
				fprintf(stderr, "%s: -I %s: %s\n", BW_PROG,
					o.interval_path, strerror(errno));
				return 1;
			}
		}
	}
	ret = bench_open(&b, &o.common, tool_options);
	if (ret) {
		ret = 1;
		goto out;
	}
	if (!b.is_server && o.common.format == BENCH_FORMAT_CSV)
		printf("tool,prov,mode,size,iters,warmup,window,seconds,gbit_per_s,"
		       "msg_per_s,status,max_msg_size\n");
	for (i = 0; i < o.common.nsizes && !ret; i++)
		ret = bw_size(&b, &o, o.common.sizes[i], ticks);
	/* The peer may still be reading its last completions. */
	if (!ret)
		ret = bench_sync(&b);
	bench_close(&b);
out:
	if (ticker.out != stdout && fclose(ticker.out)) {
		fprintf(stderr, "%s: -I %s: %s\n", BW_PROG, o.interval_path,
			strerror(errno));
		ret = 1;
	}
	return ret ? 1 : 0;
}
