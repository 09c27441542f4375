/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_traffic: synthetic traffic between N emulated hosts, one process
 * each, in the manner of the experiments of Coll et al. and Petrini et al.
 *
 *   fi_mrail_traffic -n N -r RANK -d DIR [-P PATTERN] [-l GBPS] [-s MEAN]
 *                    [-t SECONDS] [-f FRACTION] [-k HOTS] [-q QUEUE]
 *                    [-w WINDOW] [-S SEED] [-p PROV] [-a]
 *
 * The N processes (N a power of two) meet through DIR as fi_mrail_barrier's
 * do (ctl_meet); rank 0 then writes a start time there. For -t seconds from
 * it every process generates messages: sizes exponential of mean -s (capped,
 * see mrail_traffic.h), gaps exponential with the mean that makes the
 * offered load -l Gbit/s, destinations by -P. A generated message waits in a
 * queue of -q entries until one of -w send buffers is free; while the queue
 * is full, messages whose time comes are not generated but counted
 * (backlog_msgs). Its latency runs from its generation time, so queueing at
 * the source is part of it.
 *
 * Each message starts with a header (source, per-destination sequence,
 * generation time on CLOCK_REALTIME, which the hosts' namespaces share, and
 * length); every byte after it is traffic_byte(source, sequence, offset).
 * Receivers check all of it, and that no sequence number of a source arrives
 * twice. After the window every process sends what is still queued,
 * waits for its sends to complete, writes how many messages it sent to each
 * peer to DIR/sent.RANK, and waits until it has received exactly what each
 * peer says it sent. Exit 0 when every check passed, 1 when one failed, 2
 * for a usage or setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "whole_number.h"
#include "common/mrail_bench.h"
#include "common/mrail_ctl.h"
#include "common/mrail_setup.h"
#include "common/mrail_traffic.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define PROG "fi_mrail_traffic"
#define HDR_MAGIC 0x6d747266u		/* "frtm" */
#define RX_POSTED 32
#define MAX_WINDOW 256
#define CQ_BATCH 16
#define FILE_WAIT_S 60
/* How long a rank waits for messages its peers say they sent. */
#define DRAIN_WAIT_S 30
/* Rank 0 sets the start this far ahead, for every rank to read it. */
#define START_LEAD_NS 500000000ULL
/* Error lines printed at most; all are counted. */
#define MAX_ERROR_LINES 10

struct traffic_hdr {
	uint32_t magic;
	uint32_t src;
	uint64_t seq;		/* per destination, from 0 */
	uint64_t gen_ns;	/* CLOCK_REALTIME */
	uint64_t len;		/* the whole message, header included */
};
#define HDR_SIZE sizeof(struct traffic_hdr)

/* A generated message waiting for a send buffer. */
struct queued_msg {
	uint64_t gen_ns;
	uint64_t seq;
	uint32_t dst;
	uint32_t len;
};

struct slot {
	struct fi_context ctx;	/* first: the completion's op_context is the slot */
	uint8_t *buf;
	uint32_t dst;
	uint32_t len;
	bool busy;
};

static struct {
	unsigned n, rank;
	const char *dir;
	enum traffic_pattern pattern;
	double load_gbps;
	size_t mean_size;
	double duration_s;
	double hot_fraction;
	unsigned hot_count;
	unsigned queue_cap;
	unsigned window;
	uint64_t seed;
	const char *prov;
	bool auto_progress;
} opt = {
	.pattern = TRAFFIC_UNIFORM, .load_gbps = 0.1, .mean_size = 16384,
	.duration_s = 5.0, .hot_fraction = 0.2, .hot_count = 2, .queue_cap = 4096,
	.window = 16, .seed = 1,
};

static struct mrail_setup fab;
static fi_addr_t addrs[TRAFFIC_MAX_HOSTS];
static size_t max_size;

static struct slot tx[MAX_WINDOW], rx[RX_POSTED];
static unsigned tx_busy;
static struct queued_msg *queue;
static unsigned q_head, q_count;

/* Counts of this rank. */
static uint64_t next_seq[TRAFFIC_MAX_HOSTS];	/* generated, per destination */
static uint64_t sent[TRAFFIC_MAX_HOSTS];	/* sends completed, per destination */
static uint64_t gen_bytes, sent_bytes, backlog_msgs;
static uint64_t recv_msgs[TRAFFIC_MAX_HOSTS];
/*
 * The sequence numbers received from each source, one bit each: a number
 * seen twice is an error, and at the end the count must be what the source
 * sent, so with no repeat every number below it arrived. Completions do not
 * come in send order (a rendezvous message completes after an eager one
 * matched behind it), so the order itself is not checked.
 */
static struct {
	uint8_t *bits;
	uint64_t nbytes;
	uint64_t max_seq;
} seen[TRAFFIC_MAX_HOSTS];
static uint64_t recv_total, recv_bytes, recv_window_bytes;
static uint64_t errors;
static uint64_t last_completion_ns;
static uint64_t window_start_ns, window_end_ns;
static struct traffic_hist hist;

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* A check that failed: counted, and said (the first few). */
static void __attribute__((format(printf, 1, 2))) check_failed(const char *fmt, ...)
{
	va_list ap;

	if (errors++ >= MAX_ERROR_LINES)
		return;
	fprintf(stderr, PROG ": rank %u: ", opt.rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the endpoint ---- */

static void open_objects(void)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG, .size = 1024,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *info;
	unsigned i;

	/* No FI_MR_LOCAL: buffers go unregistered to any provider. */
	info = ctl_getinfo(opt.prov, FI_MSG, strcmp(opt.prov, "mrail") ? FI_MR_VIRT_ADDR |
			   FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT : 0,
			   opt.auto_progress);
	if (info->ep_attr->max_msg_size < max_size) {
		fprintf(stderr, PROG ": %s carries messages of at most %zu bytes; -s %zu "
			"needs %zu\n", opt.prov, info->ep_attr->max_msg_size, opt.mean_size,
			max_size);
		exit(2);
	}
	setup_open(&fab, info, &cq_attr, 0);
	setup_enable(&fab);
	for (i = 0; i < opt.window; i++)
		if (!(tx[i].buf = malloc(max_size)))
			ctl_die("send buffers", ENOMEM);
	for (i = 0; i < RX_POSTED; i++)
		if (!(rx[i].buf = malloc(max_size)))
			ctl_die("receive buffers", ENOMEM);
	queue = calloc(opt.queue_cap, sizeof(*queue));
	if (!queue)
		ctl_die("the source queue", ENOMEM);
}

static void post_recv(struct slot *s)
{
	ssize_t ret;

	while ((ret = fi_recv(fab.ep, s->buf, max_size, NULL, FI_ADDR_UNSPEC,
			      &s->ctx)) == -FI_EAGAIN)
		(void) fi_cq_read(fab.cq, NULL, 0);
	if (ret)
		ctl_die("fi_recv", (int) ret);
}

/* ---- receiving ---- */

/* Sets seq's bit for src: whether it was set already. */
static bool mark_seen(uint32_t src, uint64_t seq)
{
	uint64_t byte = seq / 8, grow;
	uint8_t *bits, mask = (uint8_t) (1u << (seq % 8));
	bool was;

	if (byte >= seen[src].nbytes) {
		grow = seen[src].nbytes ? seen[src].nbytes : 1024;
		while (grow <= byte)
			grow *= 2;
		bits = realloc(seen[src].bits, grow);
		if (!bits)
			ctl_die("the received-message bitmap", ENOMEM);
		memset(bits + seen[src].nbytes, 0, grow - seen[src].nbytes);
		seen[src].bits = bits;
		seen[src].nbytes = grow;
	}
	was = seen[src].bits[byte] & mask;
	seen[src].bits[byte] |= mask;
	if (seq > seen[src].max_seq)
		seen[src].max_seq = seq;
	return was;
}

static void received(struct slot *s, size_t len)
{
	struct traffic_hdr hdr;
	uint64_t now = realtime_ns();
	size_t bad;

	if (len < HDR_SIZE) {
		check_failed("a message of %zu bytes, shorter than the header", len);
		return;
	}
	memcpy(&hdr, s->buf, HDR_SIZE);
	/* No run numbers 2^40 messages: a larger sequence is corrupt too. */
	if (hdr.magic != HDR_MAGIC || hdr.src >= opt.n || hdr.src == opt.rank ||
	    hdr.seq >= (1ULL << 40)) {
		check_failed("a message of %zu bytes with a corrupt header (magic %#x, "
			     "source %u, sequence %" PRIu64 ")", len, hdr.magic, hdr.src,
			     hdr.seq);
		return;
	}
	recv_msgs[hdr.src]++;
	recv_total++;
	recv_bytes += len;
	if (now >= window_start_ns && now < window_end_ns)
		recv_window_bytes += len;
	if (hdr.len != len)
		check_failed("message %" PRIu64 " from rank %u: %zu bytes arrived, its "
			     "header says %" PRIu64, hdr.seq, hdr.src, len, hdr.len);
	if (mark_seen(hdr.src, hdr.seq))
		check_failed("from rank %u: message %" PRIu64 " arrived twice", hdr.src,
			     hdr.seq);
	bad = traffic_check(s->buf, hdr.src, hdr.seq, HDR_SIZE, len);
	if (bad < len)
		check_failed("message %" PRIu64 " from rank %u: byte %zu of %zu is %#04x, "
			     "expected %#04x", hdr.seq, hdr.src, bad, len, s->buf[bad],
			     traffic_byte(hdr.src, hdr.seq, bad));
	traffic_hist_add(&hist, now > hdr.gen_ns ? now - hdr.gen_ns : 0);
}

/* Takes n completions (none if n <= 0): checks and reposts receives, frees
 * send buffers. Returns how many there were. */
static unsigned handle(const struct fi_cq_msg_entry *e, ssize_t n)
{
	struct slot *s;
	ssize_t i;

	for (i = 0; i < n; i++) {
		s = e[i].op_context;
		if (e[i].flags & FI_RECV) {
			received(s, e[i].len);
			post_recv(s);
		} else {
			sent[s->dst]++;
			sent_bytes += s->len;
			s->busy = false;
			tx_busy--;
		}
	}
	if (n > 0)
		last_completion_ns = realtime_ns();
	return n > 0 ? (unsigned) n : 0;
}

static void cq_error(void)
{
	struct fi_cq_err_entry err;
	char what[64];

	memset(&err, 0, sizeof(err));
	if (fi_cq_readerr(fab.cq, &err, 0) != 1)
		ctl_die("fi_cq_readerr", EIO);
	snprintf(what, sizeof(what), "rank %u: a %s completed in error", opt.rank,
		 err.flags & FI_RECV ? "receive" : "send");
	ctl_die(what, err.err ? err.err : EIO);
}

static unsigned poll_cq(void)
{
	struct fi_cq_msg_entry e[CQ_BATCH];
	unsigned total = 0;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(fab.cq, e, CQ_BATCH);
		if (n == -FI_EAGAIN)
			return total;
		if (n == -FI_EAVAIL)
			cq_error();
		if (n < 0)
			ctl_die("fi_cq_read", (int) n);
		total += handle(e, n);
	}
}

/*
 * Nothing to do before until_ns: sleep in fi_cq_sread if that is over a
 * few milliseconds away (the ranks outnumber the cores), else briefly.
 */
static void idle_until(uint64_t until_ns)
{
	struct fi_cq_msg_entry e[CQ_BATCH];
	struct timespec ts = { 0, 0 };
	uint64_t now = realtime_ns(), left;
	ssize_t n;

	if (until_ns <= now)
		return;
	left = until_ns - now;
	if (left > 2000000) {
		n = fi_cq_sread(fab.cq, e, CQ_BATCH, NULL,
				(int) (left / 1000000 - 1 < 100 ? left / 1000000 - 1 : 100));
		if (n == -FI_EAVAIL)
			cq_error();
		if (n < 0 && n != -FI_EAGAIN && n != -FI_ETIMEDOUT)
			ctl_die("fi_cq_sread", (int) n);
		handle(e, n);
		return;
	}
	ts.tv_nsec = (long) (left < 50000 ? left : 50000);
	nanosleep(&ts, NULL);
}

/* Waits up to ms for a completion (sends in flight, none can be posted). */
static void wait_completion(int ms)
{
	struct fi_cq_msg_entry e[CQ_BATCH];
	ssize_t n;

	n = fi_cq_sread(fab.cq, e, CQ_BATCH, NULL, ms);
	if (n == -FI_EAVAIL)
		cq_error();
	if (n < 0 && n != -FI_EAGAIN && n != -FI_ETIMEDOUT)
		ctl_die("fi_cq_sread", (int) n);
	handle(e, n);
}

/* ---- generating and sending ---- */

static void generate(const struct traffic_dest *d, struct traffic_rng *rng,
		     uint64_t gen_ns, size_t min_size)
{
	struct queued_msg *m;
	uint32_t dst;
	size_t len;

	if (q_count == opt.queue_cap) {
		backlog_msgs++;
		return;
	}
	dst = traffic_dest_next(d, rng);
	len = traffic_size_sample(rng, (double) opt.mean_size, min_size, max_size);
	m = &queue[(q_head + q_count++) % opt.queue_cap];
	m->gen_ns = gen_ns;
	m->dst = dst;
	m->len = (uint32_t) len;
	m->seq = next_seq[dst]++;
	gen_bytes += len;
}

/* Posts queued messages while a send buffer is free. Returns how many. */
static unsigned post_sends(void)
{
	struct queued_msg *m;
	struct traffic_hdr hdr;
	struct slot *s = NULL;
	unsigned posted = 0, i;
	ssize_t ret;

	while (q_count && tx_busy < opt.window) {
		m = &queue[q_head];
		for (i = 0; i < opt.window; i++)
			if (!tx[i].busy)
				break;
		s = &tx[i];
		hdr = (struct traffic_hdr) { .magic = HDR_MAGIC, .src = opt.rank,
					     .seq = m->seq, .gen_ns = m->gen_ns,
					     .len = m->len };
		memcpy(s->buf, &hdr, HDR_SIZE);
		traffic_fill(s->buf, opt.rank, m->seq, HDR_SIZE, m->len);
		ret = fi_send(fab.ep, s->buf, m->len, NULL, addrs[m->dst], &s->ctx);
		if (ret == -FI_EAGAIN)
			break;	/* the provider is full: progress, then again */
		if (ret)
			ctl_die("fi_send", (int) ret);
		s->busy = true;
		s->dst = m->dst;
		s->len = m->len;
		tx_busy++;
		q_head = (q_head + 1) % opt.queue_cap;
		q_count--;
		posted++;
	}
	return posted;
}

static void run(void)
{
	struct traffic_dest d = { .pattern = opt.pattern, .n = opt.n, .self = opt.rank,
				  .hot_fraction = opt.hot_fraction,
				  .hot_count = opt.hot_count };
	struct traffic_rng rng;
	double size_mean, gap;
	uint64_t now, next_gen;
	bool sends = traffic_dest_sends(&d);
	unsigned work;

	/* One stream per rank: the same seed makes the same run. */
	traffic_rng_seed(&rng, opt.seed * 0x100000001b3ULL + opt.rank);
	size_mean = traffic_size_mean((double) opt.mean_size, HDR_SIZE, max_size);
	gap = traffic_gap_ns(size_mean, opt.load_gbps);
	next_gen = window_start_ns + (uint64_t) traffic_exp(&rng, gap);
	while ((now = realtime_ns()) < window_start_ns) {
		poll_cq();
		idle_until(window_start_ns);
	}
	last_completion_ns = now;
	for (;;) {
		now = realtime_ns();
		while (sends && next_gen <= now && next_gen < window_end_ns) {
			generate(&d, &rng, next_gen, HDR_SIZE);
			next_gen += (uint64_t) traffic_exp(&rng, gap);
		}
		work = post_sends();
		work += poll_cq();
		if (now >= window_end_ns && !q_count && !tx_busy)
			break;
		/* A completion read since now was taken is later than now. */
		if (now >= window_end_ns && now > last_completion_ns &&
		    now - last_completion_ns > (uint64_t) DRAIN_WAIT_S * 1000000000ULL) {
			fprintf(stderr, PROG ": rank %u: no send completed for %d s: %u "
				"messages still queued, %u sends outstanding\n", opt.rank,
				DRAIN_WAIT_S, q_count, tx_busy);
			exit(2);
		}
		if (work)
			continue;
		if (now < window_end_ns && !q_count)
			idle_until(sends && next_gen < window_end_ns ? next_gen : window_end_ns);
		else if (tx_busy)
			wait_completion(1);
		else
			idle_until(now + 50000);
	}
}

/* ---- the meeting directory ---- */

/* Writes text to DIR/name.RANK aside, then renames it: a reader sees all of
 * it or nothing. */
static void put_file(const char *name, const char *text)
{
	char path[512], tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s.%u", opt.dir, name, opt.rank);
	snprintf(path, sizeof(path), "%s/%s.%u", opt.dir, name, opt.rank);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		ctl_die("writing to the meeting directory", errno);
}

/* Reads DIR/name.RANK into buf, waiting for it (progressing the endpoint
 * meanwhile: peers may still need this rank's receives). */
static void get_file(const char *name, unsigned rank, char *buf, size_t size)
{
	uint64_t deadline = realtime_ns() + (uint64_t) FILE_WAIT_S * 1000000000ULL;
	char path[512], what[600];
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%u", opt.dir, name, rank);
	while (!(f = fopen(path, "r"))) {
		if (realtime_ns() > deadline) {
			snprintf(what, sizeof(what), "waiting %d s for rank %u's %s",
				 FILE_WAIT_S, rank, path);
			ctl_die(what, ETIMEDOUT);
		}
		poll_cq();
		idle_until(realtime_ns() + 5000000);
	}
	len = fread(buf, 1, size - 1, f);
	buf[len] = '\0';
	fclose(f);
}

static void agree_start(void)
{
	char text[64];

	if (opt.rank == 0) {
		snprintf(text, sizeof(text), "%" PRIu64 "\n", realtime_ns() + (uint64_t) START_LEAD_NS);
		put_file("start", text);
	}
	get_file("start", 0, text, sizeof(text));
	window_start_ns = strtoull(text, NULL, 10);
	if (!window_start_ns)
		ctl_die("the start time rank 0 wrote", EINVAL);
	window_end_ns = window_start_ns + (uint64_t) (opt.duration_s * 1e9);
}

/*
 * Every rank says what it sent to whom; this one waits until it has
 * received that much from each (or DRAIN_WAIT_S without a new message), then
 * all meet once more so nobody closes while a peer still receives, and the
 * counts must be equal.
 */
static void exchange_counts(void)
{
	uint64_t expect[TRAFFIC_MAX_HOSTS] = { 0 }, v = 0, last = 0, stall_ns = 0;
	char text[TRAFFIC_MAX_HOSTS * 24 + 16], *p, *end;
	size_t len = 0;
	unsigned r, k;
	bool short_any;

	for (r = 0; r < opt.n; r++)
		len += (size_t) snprintf(text + len, sizeof(text) - len, "%" PRIu64 "%c",
					 sent[r], r + 1 < opt.n ? ' ' : '\n');
	put_file("sent", text);
	for (r = 0; r < opt.n; r++) {
		if (r == opt.rank)
			continue;
		get_file("sent", r, text, sizeof(text));
		p = text;
		for (k = 0; k <= opt.rank; k++) {
			errno = 0;
			v = strtoull(p, &end, 10);
			if (end == p || errno)
				ctl_die("a rank's sent counts in the meeting directory", EINVAL);
			p = end;
		}
		expect[r] = v;
	}
	for (;;) {
		short_any = false;
		for (r = 0; r < opt.n; r++)
			short_any |= recv_msgs[r] < expect[r];
		if (!short_any)
			break;
		if (recv_total != last) {
			last = recv_total;
			stall_ns = realtime_ns();
		} else if (!stall_ns) {
			stall_ns = realtime_ns();
		} else if (realtime_ns() - stall_ns > (uint64_t) DRAIN_WAIT_S * 1000000000ULL) {
			break;
		}
		if (!poll_cq())
			idle_until(realtime_ns() + 5000000);
	}
	put_file("done", "done\n");
	for (r = 0; r < opt.n; r++)
		if (r != opt.rank)
			get_file("done", r, text, sizeof(text));
	for (r = 0; r < opt.n; r++) {
		if (r == opt.rank)
			continue;
		if (recv_msgs[r] != expect[r])
			check_failed("from rank %u: received %" PRIu64 " messages, it sent %"
				     PRIu64, r, recv_msgs[r], expect[r]);
		else if (expect[r] && seen[r].max_seq != expect[r] - 1)
			check_failed("from rank %u: message %" PRIu64 " arrived, it sent %"
				     PRIu64, r, seen[r].max_seq, expect[r]);
	}
}

/* ---- options ---- */

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -n N -r RANK -d DIR [-P PATTERN] [-l GBPS] [-s MEAN] "
		"[-t SECONDS]\n"
		"       [-f FRACTION] [-k HOTS] [-q QUEUE] [-w WINDOW] [-S SEED] "
		"[-p PROV] [-a]\n"
		"  PATTERN: uniform (default), bitrev, butterfly, complement, transpose,\n"
		"           shuffle, neighbour, hotspot, hotspots\n", argv0);
}

static int bad_value(char o, const char *arg, const char *want)
{
	fprintf(stderr, PROG ": -%c %s: %s\n", o, arg, want);
	return 2;
}

/* A real number in (low, high]. */
static bool parse_real(const char *arg, double low, double high, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end || errno || !isfinite(v) || v <= low || v > high)
		return false;
	*out = v;
	return true;
}

static bool parse_count(const char *arg, uint64_t low, uint64_t high, unsigned *out)
{
	uint64_t v;

	if (mrail_parse_whole(arg, high, &v) || v < low)
		return false;
	*out = (unsigned) v;
	return true;
}

/* 0, or main's exit status (2) after saying what is wrong. */
static int parse_options(int argc, char **argv)
{
	bool have_n = false, have_r = false;
	int o;

	opt.prov = getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "mrail";
	while ((o = getopt(argc, argv, "n:r:d:P:l:s:t:f:k:q:w:S:p:ah")) != -1) {
		switch (o) {
		case 'n':
			if (!parse_count(optarg, 2, TRAFFIC_MAX_HOSTS, &opt.n) ||
			    !traffic_is_pow2(opt.n))
				return bad_value('n', optarg, "the hosts are a power of two, 2 to 64");
			have_n = true;
			break;
		case 'r':
			if (!parse_count(optarg, 0, TRAFFIC_MAX_HOSTS - 1, &opt.rank))
				return bad_value('r', optarg, "a rank is a whole number below N");
			have_r = true;
			break;
		case 'd':
			opt.dir = optarg;
			break;
		case 'P':
			if (traffic_pattern_parse(optarg, &opt.pattern))
				return bad_value('P', optarg, "no such pattern; uniform, bitrev, "
						 "butterfly, complement, transpose, shuffle, "
						 "neighbour, hotspot or hotspots");
			break;
		case 'l':
			if (!parse_real(optarg, 0, 1000, &opt.load_gbps))
				return bad_value('l', optarg, "the load is Gbit/s, above 0 and "
						 "at most 1000");
			break;
		case 's':
			if (bench_parse_size(optarg, &opt.mean_size) || !opt.mean_size ||
			    opt.mean_size > TRAFFIC_MAX_MSG)
				return bad_value('s', optarg, "the mean size is 1 byte to 1m "
						 "(suffixes k, m)");
			break;
		case 't':
			if (!parse_real(optarg, 0, 3600, &opt.duration_s))
				return bad_value('t', optarg, "seconds, above 0, at most 3600");
			break;
		case 'f':
			if (!parse_real(optarg, -1e-300, 1, &opt.hot_fraction))
				return bad_value('f', optarg, "a fraction, 0 to 1");
			break;
		case 'k':
			if (!parse_count(optarg, 1, TRAFFIC_MAX_HOSTS, &opt.hot_count))
				return bad_value('k', optarg, "hot hosts, 1 to N");
			break;
		case 'q':
			if (!parse_count(optarg, 1, 1u << 24, &opt.queue_cap))
				return bad_value('q', optarg, "queue entries, 1 to 16777216");
			break;
		case 'w':
			if (!parse_count(optarg, 1, MAX_WINDOW, &opt.window))
				return bad_value('w', optarg, "sends in flight, 1 to 256");
			break;
		case 'S':
			if (mrail_parse_whole(optarg, UINT64_MAX, &opt.seed))
				return bad_value('S', optarg, "a seed is a whole number");
			break;
		case 'p':
			opt.prov = optarg;
			break;
		case 'a':
			opt.auto_progress = true;
			break;
		case 'h':
			usage(argv[0]);
			return 1;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected operand '%s'\n", argv[optind]);
		usage(argv[0]);
		return 2;
	}
	if (!have_n || !have_r || !opt.dir) {
		fprintf(stderr, PROG ": -n N, -r RANK and -d DIR are needed\n");
		usage(argv[0]);
		return 2;
	}
	if (opt.rank >= opt.n) {
		fprintf(stderr, PROG ": -r %u: a rank is below N (%u)\n", opt.rank, opt.n);
		return 2;
	}
	if (opt.pattern == TRAFFIC_HOTSPOTS && opt.hot_count > opt.n) {
		fprintf(stderr, PROG ": -k %u: more hot hosts than hosts (%u)\n",
			opt.hot_count, opt.n);
		return 2;
	}
	return 0;
}

/* ---- report ---- */

static void report(void)
{
	double offered = traffic_gbps(gen_bytes, opt.duration_s);
	double accepted = traffic_gbps(recv_window_bytes, opt.duration_s);
	double mean = traffic_hist_mean(&hist) / 1000.0;
	double p50 = (double) traffic_hist_quantile(&hist, 0.5) / 1000.0;
	double p99 = (double) traffic_hist_quantile(&hist, 0.99) / 1000.0;
	uint64_t sent_total = 0;
	unsigned r;

	for (r = 0; r < opt.n; r++)
		sent_total += sent[r];
	printf("RESULT rank=%u hosts=%u pattern=%s provider=%s load_gbps=%.4f "
	       "mean_size=%zu max_size=%zu offered_gbps=%.4f accepted_gbps=%.4f "
	       "sent_msgs=%" PRIu64 " sent_bytes=%" PRIu64 " backlog_msgs=%" PRIu64
	       " recv_msgs=%" PRIu64 " recv_bytes=%" PRIu64 " lat_us_mean=%.1f "
	       "lat_us_p50=%.1f lat_us_p99=%.1f duration_s=%.3f errors=%" PRIu64 "\n",
	       opt.rank, opt.n, traffic_pattern_name(opt.pattern), opt.prov, opt.load_gbps,
	       opt.mean_size, max_size, offered, accepted, sent_total, sent_bytes,
	       backlog_msgs, recv_total, recv_bytes, mean, p50, p99, opt.duration_s,
	       errors);
	printf(PROG ": rank %u of %u, %s at %.3f Gbit/s: offered %.3f, accepted %.3f "
	       "Gbit/s; sent %" PRIu64 ", received %" PRIu64 " messages; latency mean "
	       "%.1f us, p50 %.1f us, p99 %.1f us; %s\n", opt.rank, opt.n,
	       traffic_pattern_name(opt.pattern), opt.load_gbps, offered, accepted,
	       sent_total, recv_total, mean, p50, p99,
	       errors ? "CHECKS FAILED" : "every message and byte checked");
}

int main(int argc, char **argv)
{
	unsigned i;
	int ret;

	ctl_prog = PROG;
	ret = parse_options(argc, argv);
	if (ret)
		return ret == 1 ? 0 : ret;
	max_size = traffic_size_max(opt.mean_size, HDR_SIZE);
	open_objects();
	for (i = 0; i < RX_POSTED; i++)
		post_recv(&rx[i]);
	ctl_meet(opt.dir, opt.rank, opt.n, fab.ep, fab.av, addrs);
	agree_start();
	run();
	exchange_counts();
	report();
	fflush(stdout);
	/* Receives still posted are cancelled by the close. */
	setup_close(&fab, NULL, 0);
	for (i = 0; i < opt.window; i++)
		free(tx[i].buf);
	for (i = 0; i < RX_POSTED; i++)
		free(rx[i].buf);
	free(queue);
	for (i = 0; i < opt.n; i++)
		free(seen[i].bits);
	return errors ? 1 : 0;
}
