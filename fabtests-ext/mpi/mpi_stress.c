/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_stress: all-to-all point-to-point traffic among every rank for a
 * fixed time, for running MPI over mrail (or any libfabric provider,
 * through Open MPI's mtl ofi) with many peers at once.
 *
 *   mpirun -np N mpi_stress [-t SECONDS] [-M BYTES] [-n WINDOW] [-s SEED]
 *                           [-W SECONDS] [-G MIB] [-w SECONDS]
 *
 * In every round each rank has WINDOW messages in flight to and from every
 * other rank, posted with MPI_Irecv, MPI_Isend and now and then MPI_Issend,
 * completed together by MPI_Waitall. Sizes, from 0 bytes to BYTES, come
 * from the seed, the round, the pair and the message's index, so both
 * sides know them: sizes on both sides of mrail's eager limit (16336 bytes)
 * and of tcp;ofi_rxm's eager (16 KiB) and SAR (128 KiB) limits, and sizes
 * spread over every power of two. Some rounds receive one index from every
 * peer with MPI_ANY_SOURCE, others every message of one peer with
 * MPI_ANY_TAG. Every byte is checked (the payload is a function of
 * sender, receiver, round and index), with the status and the bytes past
 * the message; message counts must be exact and nothing may be left over.
 *
 * VmRSS (/proc/self/status) is sampled on every rank at the end of the
 * warm-up, three times between it and the end, and at the end; the run
 * fails when any rank grew by more than MIB after the warm-up.
 *
 * Rank 0 prints "PASS: NAME" or "FAIL: NAME: WHY" for stress:traffic and
 * stress:memory, the samples of every rank, and one summary line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_p2p.h"

/* Samples of VmRSS: warm-up, three between, end. */
#define RSS_SAMPLES 5

/* Bits of the flags all ranks agree on every round (MPI_BOR). */
#define FLAG_STOP	1	/* rank 0: time is up; any rank: it failed */
#define FLAG_SAMPLE	2	/* rank 0: sample VmRSS after this round */

/* Rounds in which receives are wildcards; the other rounds name source
 * and tag. ANY_SOURCE and ANY_TAG receives never share a round: a
 * source-wildcard receive could take a message an ANY_TAG receive of the
 * same round counts on, which would then match a message of the next. */
enum round_mode { ROUND_EXACT, ROUND_ANY_SOURCE, ROUND_EXACT_AGAIN, ROUND_ANY_TAG, ROUND_MODES };

/* Tags: index and round modulo TAG_ROUNDS. Ranks are at most one round
 * apart (a rank finishes a round only when every peer has sent it that
 * round's messages), so tags of nearby rounds never repeat. */
#define TAG_ROUNDS 1024

/* Sizes at the protocol limits: mrail's eager payload is 16336 bytes (a
 * 16 KiB buffer less its 48-byte header); tcp;ofi_rxm sends up to about
 * 16 KiB eagerly, up to 128 KiB by segmentation and reassembly, larger
 * messages by rendezvous. */
static const size_t edge_sizes[] = {
	0, 1, 8, 1000, 4095, 4096, 16320, 16335, 16336, 16337, 16384, 16385,
	65536, 131071, 131072, 131073, 262144, 1 * MiB - 1, 1 * MiB,
};
#define N_EDGE_SIZES (sizeof(edge_sizes) / sizeof(edge_sizes[0]))

struct options {
	unsigned seconds;	/* -t */
	unsigned warmup;	/* -W; 0: a sixth of the run */
	unsigned timeout;	/* -w; 0: twice the run, plus 120 s */
	size_t max_size;	/* -M */
	int window;		/* -n */
	uint64_t seed;		/* -s */
	unsigned growth_mib;	/* -G */
};

struct rss_sample {
	double seconds;		/* since the start of the traffic */
	long kib;
};

struct stress {
	struct test_ctx *t;
	const struct options *o;
	int npeers;		/* size - 1; peer slot j is rank + 1 + j */
	size_t slot_bytes;	/* max_size plus the guard */
	unsigned char *send_buf, *recv_buf;	/* npeers * window slots each */
	MPI_Request *reqs;	/* receives, sends, the flags' allreduce */
	MPI_Status *statuses;
	char *seen;		/* per source: its ANY_SOURCE message came */
	uint64_t round;
	uint64_t sent, received, bytes_sent, bytes_received;
	struct rss_sample samples[RSS_SAMPLES];
	int n_samples;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpirun -np N mpi_stress [-t SECONDS] [-M BYTES] [-n WINDOW] [-s SEED]\n"
		"                              [-W SECONDS] [-G MIB] [-w SECONDS]\n"
		"  -t SEC    how long the traffic runs (default 60)\n"
		"  -M BYTES  largest message (K, M suffixes; default 1M)\n"
		"  -n N      messages in flight per pair and direction (default 4)\n"
		"  -s SEED   seed of the sizes and payloads (default 1)\n"
		"  -W SEC    warm-up before the first VmRSS sample (default: a sixth of -t)\n"
		"  -G MIB    largest VmRSS growth of a rank after the warm-up (default 8)\n"
		"  -w SEC    watchdog: end the job after SEC (default 2 * -t + 120)\n");
}

/* 0: run; 1: exit 0 (help); 2: usage error. Needs no MPI. */
static int parse_options(int argc, char **argv, struct options *o)
{
	unsigned long value;
	int opt;

	*o = (struct options){ .seconds = 60, .max_size = 1 * MiB, .window = 4, .seed = 1,
			       .growth_mib = 8 };
	while ((opt = getopt(argc, argv, "t:M:n:s:W:G:w:h")) != -1) {
		switch (opt) {
		case 't':
			if (mpi_parse_seconds("mpi_stress", opt, optarg, 1, &o->seconds))
				return 2;
			break;
		case 'W':
			if (mpi_parse_seconds("mpi_stress", opt, optarg, 0, &o->warmup))
				return 2;
			break;
		case 'w':
			if (mpi_parse_seconds("mpi_stress", opt, optarg, 0, &o->timeout))
				return 2;
			break;
		case 'M':
			if (mpi_parse_size(optarg, 64 * MiB, &o->max_size)) {
				fprintf(stderr, "mpi_stress: -M '%s': not a size up to 64M\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (mpi_parse_uint(optarg, 64, &value) || value == 0) {
				fprintf(stderr, "mpi_stress: -n '%s': not a count 1..64\n", optarg);
				return 2;
			}
			o->window = (int)value;
			break;
		case 's':
			if (mpi_parse_uint(optarg, ~0UL, &value)) {
				fprintf(stderr, "mpi_stress: -s '%s': not a number\n", optarg);
				return 2;
			}
			o->seed = value;
			break;
		case 'G':
			if (mpi_parse_uint(optarg, 1 << 20, &value)) {
				fprintf(stderr, "mpi_stress: -G '%s': not a number of MiB\n", optarg);
				return 2;
			}
			o->growth_mib = (unsigned)value;
			break;
		default:
			return mpi_option_help(opt, usage);
		}
	}
	if (mpi_no_operands("mpi_stress", argc, argv))
		return 2;
	if (!o->warmup)
		o->warmup = o->seconds / 6 ? o->seconds / 6 : 1;
	if (o->warmup >= o->seconds) {
		fprintf(stderr, "mpi_stress: the warm-up (-W %u) must end before the run (-t %u)\n",
			o->warmup, o->seconds);
		return 2;
	}
	if (!o->timeout)
		o->timeout = 2 * o->seconds + 120;
	return 0;
}

/* ---- what every message is: both sides derive it ---- */

/* The seed of the payload of message idx of a round from src to dst;
 * everything else about the message derives from it too. */
static uint64_t message_seed(const struct stress *s, int src, int dst, int idx)
{
	uint64_t index = s->round * (uint64_t)s->o->window + (uint64_t)idx;

	return payload_seed(src, dst, index) ^ payload_seed(-1, -1, s->o->seed);
}

static size_t message_size(const struct stress *s, int src, int dst, int idx)
{
	uint64_t h = payload_seed(-2, 0, message_seed(s, src, dst, idx));
	size_t size, bits, max_bits = 0;

	while (max_bits < 63 && ((size_t)1 << max_bits) <= s->o->max_size)
		max_bits++;
	switch (h % 8) {
	case 0: case 1: case 2: case 3:
		size = edge_sizes[(h >> 8) % N_EDGE_SIZES];
		break;
	case 7:
		size = (h >> 8) % 64;
		break;
	default:
		/* Every power of two as likely, so that most messages stay
		 * small and a round moves a few MiB. */
		bits = (size_t)((h >> 8) % (max_bits + 1));
		size = bits ? ((size_t)1 << (bits - 1)) + (size_t)((h >> 16) % ((uint64_t)1 << (bits - 1))) : 0;
		break;
	}
	return size < s->o->max_size ? size : s->o->max_size;
}

static int message_tag(const struct stress *s, int idx)
{
	return (int)(s->round % TAG_ROUNDS) * s->o->window + idx;
}

static enum round_mode round_mode(const struct stress *s)
{
	return (enum round_mode)(s->round % ROUND_MODES);
}

/* Which index (ANY_SOURCE rounds) or peer slot (ANY_TAG rounds) the
 * round's wildcards are for. */
static int round_wild(const struct stress *s, int count)
{
	return (int)((s->round / ROUND_MODES) % (uint64_t)count);
}

static int peer_rank(const struct stress *s, int slot)
{
	return (s->t->rank + 1 + slot) % s->t->size;
}

static unsigned char *slot_buf(const struct stress *s, unsigned char *base, int slot, int idx)
{
	return base + ((size_t)slot * (size_t)s->o->window + (size_t)idx) * s->slot_bytes;
}

/* ---- one round ---- */

static long read_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int post_receives(struct stress *s, MPI_Request *reqs)
{
	enum round_mode mode = round_mode(s);
	int w = s->o->window, me = s->t->rank, slot, idx;

	for (slot = 0; slot < s->npeers; slot++) {
		int src = peer_rank(s, slot);

		for (idx = 0; idx < w; idx++) {
			unsigned char *buf = slot_buf(s, s->recv_buf, slot, idx);
			int source = src, tag = message_tag(s, idx);
			size_t expect = message_size(s, src, me, idx), count;

			if (mode == ROUND_ANY_SOURCE && idx == round_wild(s, w)) {
				/* Any peer's message of this index may land
				 * here: room for the largest, all of it
				 * preset so that the guard after any is too. */
				int p;

				for (expect = 0, p = 0; p < s->npeers; p++)
					if (message_size(s, peer_rank(s, p), me, idx) > expect)
						expect = message_size(s, peer_rank(s, p), me, idx);
				memset(buf, GUARD_FILL, expect + GUARD_BYTES);
				source = MPI_ANY_SOURCE;
			} else {
				memset(buf + expect, GUARD_FILL, GUARD_BYTES);
				if (mode == ROUND_ANY_TAG && slot == round_wild(s, s->npeers))
					tag = MPI_ANY_TAG;
			}
			/* Room for the guard too: a longer message is seen
			 * by its count, not cut. */
			count = expect + GUARD_BYTES;
			if (!MPI_OK(s->t, MPI_Irecv(buf, (int)count, MPI_BYTE, source, tag,
						    s->t->comm, &reqs[slot * w + idx])))
				return 0;
		}
	}
	return 1;
}

static int post_sends(struct stress *s, MPI_Request *reqs)
{
	int w = s->o->window, me = s->t->rank, slot, idx;

	for (slot = 0; slot < s->npeers; slot++) {
		/* Fan out in the opposite order of the receives' peers, so
		 * that every rank is first somebody's first sender. */
		int dst_slot = s->npeers - 1 - slot, dst = peer_rank(s, dst_slot);

		for (idx = 0; idx < w; idx++) {
			unsigned char *buf = slot_buf(s, s->send_buf, dst_slot, idx);
			size_t len = message_size(s, me, dst, idx);
			int tag = message_tag(s, idx), rc;
			MPI_Request *req = &reqs[dst_slot * w + idx];

			payload_fill(buf, len, message_seed(s, me, dst, idx));
			/* Some synchronous sends: mtl ofi adds its own
			 * acknowledgement to those. */
			if (idx == w - 1 && s->round % 5 == 2)
				rc = MPI_Issend(buf, (int)len, MPI_BYTE, dst, tag, s->t->comm, req);
			else
				rc = MPI_Isend(buf, (int)len, MPI_BYTE, dst, tag, s->t->comm, req);
			if (!MPI_OK(s->t, rc))
				return 0;
			s->sent++;
			s->bytes_sent += len;
		}
	}
	return 1;
}

/* The receive in slot/idx, completed with status st: from the expected
 * source (any peer not yet seen, for an ANY_SOURCE receive), with the
 * expected tag, count and payload, nothing written past it. */
static void check_receive(struct stress *s, int slot, int idx, const MPI_Status *st)
{
	enum round_mode mode = round_mode(s);
	int me = s->t->rank, src = peer_rank(s, slot), tag = message_tag(s, idx);
	unsigned char *buf = slot_buf(s, s->recv_buf, slot, idx);
	char what[96];
	size_t len, bad;
	uint64_t seed;

	if (mode == ROUND_ANY_SOURCE && idx == round_wild(s, s->o->window)) {
		src = st->MPI_SOURCE;
		if (src < 0 || src >= s->t->size || src == me) {
			test_fail(s->t, "round %llu: ANY_SOURCE receive of index %d: MPI_SOURCE %d is no peer",
				  (unsigned long long)s->round, idx, src);
			return;
		}
		if (s->seen[src]++) {
			test_fail(s->t, "round %llu: index %d from rank %d received twice",
				  (unsigned long long)s->round, idx, src);
			return;
		}
	}
	len = message_size(s, src, me, idx);
	snprintf(what, sizeof(what), "round %llu: message %d from rank %d (%zu B)",
		 (unsigned long long)s->round, idx, src, len);
	if (!check_status(s->t, st, src, tag, len, what))
		return;
	seed = message_seed(s, src, me, idx);
	bad = payload_mismatch(buf, len, seed);
	if (bad != len) {
		test_fail(s->t, "%s: byte %zu is 0x%02x, expected 0x%02x", what, bad, buf[bad],
			  payload_byte(seed, bad));
		return;
	}
	if (!check_untouched(s->t, buf, len, len + GUARD_BYTES, GUARD_FILL, what))
		return;
	s->received++;
	s->bytes_received += len;
}

/* One round; returns the flags every rank agreed on. */
static int run_round(struct stress *s, int my_flags)
{
	int n = s->npeers * s->o->window, flags = FLAG_STOP, slot, idx, i;
	MPI_Request *recvs = s->reqs, *sends = s->reqs + n, *flags_req = s->reqs + 2 * n;

	/* Requests a failed post left out stay null: MPI_Waitall skips them. */
	for (i = 0; i < 2 * n + 1; i++)
		s->reqs[i] = MPI_REQUEST_NULL;
	memset(s->seen, 0, (size_t)s->t->size);
	if (s->t->failures)
		my_flags |= FLAG_STOP;
	/* A rank that cannot post still joins the allreduce, so that every
	 * rank stops after this round. */
	if (!post_receives(s, recvs) || !post_sends(s, sends))
		my_flags |= FLAG_STOP;
	if (!MPI_OK(s->t, MPI_Iallreduce(&my_flags, &flags, 1, MPI_INT, MPI_BOR, s->t->comm,
					 flags_req)))
		return FLAG_STOP;
	if (!waitall_ok(s->t, 2 * n + 1, s->reqs, s->statuses))
		return flags | FLAG_STOP;
	for (slot = 0; slot < s->npeers; slot++)
		for (idx = 0; idx < s->o->window; idx++)
			check_receive(s, slot, idx, &s->statuses[slot * s->o->window + idx]);
	return flags;
}

/* ---- the run ---- */

static void sample_rss(struct stress *s, double seconds)
{
	if (s->n_samples < RSS_SAMPLES)
		s->samples[s->n_samples++] = (struct rss_sample){ seconds, read_rss_kib() };
}

/* Rank 0's flags for the next round: stop when time is up, sample at the
 * end of the warm-up and three times between it and the end. */
static int rank0_flags(const struct stress *s, double elapsed, int *next_sample)
{
	const struct options *o = s->o;
	double at = o->warmup + (double)(o->seconds - o->warmup) * *next_sample / (RSS_SAMPLES - 1);
	int flags = 0;

	if (elapsed >= o->seconds)
		return FLAG_STOP;
	if (*next_sample < RSS_SAMPLES - 1 && elapsed >= at) {
		flags |= FLAG_SAMPLE;
		++*next_sample;
	}
	return flags;
}

static void traffic(struct stress *s, double *seconds)
{
	int flags = 0, next_sample = 0;
	double start;

	MPI_Barrier(s->t->comm);
	start = MPI_Wtime();
	for (s->round = 0; !(flags & FLAG_STOP); s->round++) {
		int mine = s->t->rank == 0 ? rank0_flags(s, MPI_Wtime() - start, &next_sample) : 0;

		flags = run_round(s, mine);
		if (flags & FLAG_SAMPLE)
			sample_rss(s, MPI_Wtime() - start);
	}
	*seconds = MPI_Wtime() - start;
	sample_rss(s, *seconds);
}

/* Nothing may be left over: every message sent was received once. */
static void check_leftovers(struct stress *s)
{
	double until;
	int flag = 0;
	MPI_Status st;

	MPI_Barrier(s->t->comm);
	until = MPI_Wtime() + 0.2;
	while (!flag && MPI_Wtime() < until)
		if (!MPI_OK(s->t, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, s->t->comm, &flag, &st)))
			return;
	if (flag)
		test_fail(s->t, "a message left over after the last round: from rank %d, tag %d",
			  st.MPI_SOURCE, st.MPI_TAG);
}

/* Message and byte totals: every rank received exactly what the rounds
 * say, and all ranks together received what they sent. */
static void check_counts(struct stress *s, uint64_t totals[4])
{
	uint64_t mine[4] = { s->sent, s->received, s->bytes_sent, s->bytes_received };
	uint64_t expect = s->round * (uint64_t)s->npeers * (uint64_t)s->o->window;

	if (!s->t->failures && (s->received != expect || s->sent != expect))
		test_fail(s->t, "%llu rounds: sent %llu and received %llu messages, expected %llu each",
			  (unsigned long long)s->round, (unsigned long long)s->sent,
			  (unsigned long long)s->received, (unsigned long long)expect);
	MPI_Allreduce(mine, totals, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (!s->t->failures && (totals[0] != totals[1] || totals[2] != totals[3]))
		test_fail(s->t, "all ranks sent %llu messages (%llu B), received %llu (%llu B)",
			  (unsigned long long)totals[0], (unsigned long long)totals[2],
			  (unsigned long long)totals[1], (unsigned long long)totals[3]);
}

/* Growth of VmRSS after the warm-up (first sample): the largest later
 * sample less the first, in KiB; -1 without samples. */
static long rss_growth(const struct rss_sample *samples, int n)
{
	long growth = 0;
	int i;

	if (n < 2 || samples[0].kib < 0)
		return -1;
	for (i = 1; i < n; i++)
		if (samples[i].kib - samples[0].kib > growth)
			growth = samples[i].kib - samples[0].kib;
	return growth;
}

struct rss_report {
	long warm_max, end_max, growth_max;
	int growth_rank;
};

/* Every rank's samples to rank 0, which prints them (indented); the
 * bound is checked on every rank. */
static void check_memory(struct stress *s, struct test_ctx *m, struct rss_report *r)
{
	const long bound = (long)s->o->growth_mib * 1024;
	double mine[2 * RSS_SAMPLES], *all = NULL;
	int i, p, size = s->t->size;
	long growth = rss_growth(s->samples, s->n_samples);

	for (i = 0; i < RSS_SAMPLES; i++) {
		mine[2 * i] = i < s->n_samples ? s->samples[i].seconds : -1;
		mine[2 * i + 1] = i < s->n_samples ? (double)s->samples[i].kib : -1;
	}
	if (growth < 0)
		test_fail(m, "VmRSS not sampled after the warm-up of %u s: the traffic ended at %.1f s",
			  s->o->warmup, s->samples[s->n_samples - 1].seconds);
	else if (growth > bound)
		test_fail(m, "VmRSS grew by %ld KiB after the warm-up (%ld KiB at %.1f s), more than %ld KiB",
			  growth, s->samples[0].kib, s->samples[0].seconds, bound);
	if (s->t->rank == 0)
		all = xmalloc(sizeof(mine) * (size_t)size);
	MPI_Gather(mine, 2 * RSS_SAMPLES, MPI_DOUBLE, all, 2 * RSS_SAMPLES, MPI_DOUBLE, 0,
		   MPI_COMM_WORLD);
	*r = (struct rss_report){ -1, -1, -1, -1 };
	if (s->t->rank != 0)
		return;
	for (p = 0; p < size; p++) {
		double *row = all + (size_t)p * 2 * RSS_SAMPLES;
		struct rss_sample got[RSS_SAMPLES];
		char line[512];
		int n = 0, len;

		len = snprintf(line, sizeof(line), "    rank %d VmRSS:", p);
		for (i = 0; i < RSS_SAMPLES && row[2 * i] >= 0; i++, n++) {
			got[i] = (struct rss_sample){ row[2 * i], (long)row[2 * i + 1] };
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %ld KiB at %.0f s%s",
					got[i].kib, got[i].seconds,
					i + 1 < RSS_SAMPLES && row[2 * i + 2] >= 0 ? "," : "");
		}
		growth = rss_growth(got, n);
		printf("%s; growth %+ld KiB\n", line, growth);
		if (n && got[0].kib > r->warm_max)
			r->warm_max = got[0].kib;
		if (n && got[n - 1].kib > r->end_max)
			r->end_max = got[n - 1].kib;
		if (growth > r->growth_max) {
			r->growth_max = growth;
			r->growth_rank = p;
		}
	}
	free(all);
}

static void stress_init(struct stress *s, struct test_ctx *t, const struct options *o)
{
	size_t bytes, n = (size_t)(t->size - 1) * (size_t)o->window;

	memset(s, 0, sizeof(*s));
	s->t = t;
	s->o = o;
	s->npeers = t->size - 1;
	s->slot_bytes = o->max_size + GUARD_BYTES;
	bytes = n * s->slot_bytes;
	s->send_buf = xmalloc(bytes);
	s->recv_buf = xmalloc(bytes);
	/* Touched once now, so that VmRSS later sees only what MPI and the
	 * provider allocate, not the program's buffers. */
	memset(s->send_buf, 0, bytes);
	memset(s->recv_buf, GUARD_FILL, bytes);
	s->reqs = xmalloc(sizeof(MPI_Request) * (2 * n + 1));
	s->statuses = xmalloc(sizeof(MPI_Status) * (2 * n + 1));
	s->seen = xmalloc((size_t)t->size);
}

static void stress_fini(struct stress *s)
{
	free(s->send_buf);
	free(s->recv_buf);
	free(s->reqs);
	free(s->statuses);
	free(s->seen);
}

int main(int argc, char **argv)
{
	static struct options o;
	struct test_ctx t = { 0 }, m = { 0 };
	struct rss_report rss;
	struct stress s;
	uint64_t totals[4];
	double seconds = 0;
	int rank, size, failed = 0, ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : 2;
	if (!suite_init(&argc, &argv, &rank, &size))
		return 1;
	t = (struct test_ctx){ .rank = rank, .size = size, .max_size = o.max_size };
	m = t;
	stress_init(&s, &t, &o);
	sub_test_begin(&t, "stress:traffic", o.timeout);
	traffic(&s, &seconds);
	check_leftovers(&s);
	check_counts(&s, totals);
	failed += !sub_test_end(&t, "stress:traffic", seconds);
	sub_test_begin(&m, "stress:memory", 120);
	check_memory(&s, &m, &rss);
	failed += !sub_test_end(&m, "stress:memory", 0);
	if (rank == 0)
		printf("mpi_stress: %llu rounds, %llu messages, %.1f MiB in %.1f s on %d ranks"
		       " (window %d, max %zu B); VmRSS max %ld KiB at warm-up (%u s), %ld KiB at end,"
		       " growth max %+ld KiB (rank %d), bound %u MiB\n",
		       (unsigned long long)s.round, (unsigned long long)totals[1],
		       (double)totals[3] / (double)MiB, seconds, size, o.window, o.max_size,
		       rss.warm_max, o.warmup, rss.end_max, rss.growth_max, rss.growth_rank,
		       o.growth_mib);
	stress_fini(&s);
	MPI_Finalize();
	return failed ? 1 : 0;
}
