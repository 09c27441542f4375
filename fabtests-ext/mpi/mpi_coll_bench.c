/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_coll_bench: time of MPI_Allreduce and MPI_Alltoall against message
 * size, on all ranks of MPI_COMM_WORLD.
 *
 *   mpirun -np N mpi_coll_bench [-c COLL[,COLL]] [-s SIZE[,SIZE..]]
 *                               [-i ITERATIONS] [-x WARMUP] [-t SECONDS]
 *                               [-o text|kv]
 *
 * SIZE is, for allreduce, the bytes of the vector every rank contributes
 * and receives (SIZE / 8 doubles, MPI_SUM; SIZE must be a multiple of 8),
 * and for alltoall the bytes each rank sends to each rank, itself
 * included (MPI_BYTE; a rank sends and receives N * SIZE bytes per call).
 *
 * Per collective and size, every rank runs WARMUP untimed calls, a barrier,
 * then ITERATIONS timed calls back to back; its time per call is the mean
 * over its loop. The figure reported ("usec", key us) is the largest of
 * the ranks' means: a collective is as slow as its slowest rank. The
 * smallest and the average of the means come beside it. By default the
 * iterations shrink with the size: 32 MiB / SIZE, at least 8 and at most
 * 1000, with a tenth of that (at least 3) of warm-up; and, so that a slow
 * stack does not take minutes per size, to what fits in SECONDS (-t,
 * default 1) at the pace of the second and third warm-up calls (at least 4
 * timed calls), the warm-up to a fifth of that (not with -x below 3). The
 * ranks agree on the counts (the slowest rank's pace decides).
 *
 * After the timed loop, one more call with inputs that differ from the
 * timed ones is checked element by element on every rank; a wrong result
 * is reported (check=failed) and makes the exit status 1. Otherwise this
 * is a benchmark: it prints figures and asserts nothing about them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpi_p2p.h"

#define MAX_SIZES 64
/* Largest -i or -x. */
#define COUNT_MAX 100000000
#define ITER_BYTES (32UL << 20)
#define MIN_ITERS 8
#define MAX_ITERS 1000
/* Timed calls at least, when the time target cuts the count. */
#define MIN_TIMED_ITERS 4
/* Warm-up calls that measure the pace. */
#define PACE_ITERS 2

enum coll_kind {
	COLL_ALLREDUCE = 1 << 0,
	COLL_ALLTOALL = 1 << 1,
};

struct cb_options {
	size_t sizes[MAX_SIZES];
	int n_sizes, iterations, warmup, colls, kv;
	double seconds;		/* time target of a timed loop; 0: none */
};

/* One collective call on prepared buffers. */
typedef void (*coll_call)(void *in, void *out, size_t size);

/* What one rank measured and found for one collective and size. */
struct cb_result {
	double mean_us;		/* this rank's time per call */
	int iterations, warmup;	/* the calls it made (the same on every rank) */
	long bad;		/* elements that failed the check */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpirun -np N mpi_coll_bench [-c COLL[,COLL]] [-s SIZE[,SIZE..]] [-i ITERATIONS]\n"
		"                                   [-x WARMUP] [-o text|kv]\n"
		"  -c COLLS  allreduce, alltoall or both (default allreduce,alltoall)\n"
		"  -s SIZES  sizes, K/M suffixes (default 8,16,64,256,1K,4K,16K,64K,256K,1M,4M):\n"
		"            allreduce: bytes of the vector (SIZE/8 doubles, a multiple of 8);\n"
		"            alltoall: bytes each rank sends to each rank\n"
		"  -i N      timed calls per size (default 32M/SIZE, 8 to 1000)\n"
		"  -x N      untimed calls before them (default a tenth, at least 3)\n"
		"  -t SECS   without -i, fewer timed calls where they would take longer\n"
		"            (default 1; 0: no limit)\n"
		"  -o FMT    text (default) or kv (one RESULT key=value line per size)\n"
		"Reports the largest over the ranks of each rank's mean time per call.\n");
}

static int parse_colls(const char *list, struct cb_options *o)
{
	char *copy = strdup(list), *item, *save = NULL;
	int ret = 0;

	o->colls = 0;
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (!strcmp(item, "allreduce")) {
			o->colls |= COLL_ALLREDUCE;
		} else if (!strcmp(item, "alltoall")) {
			o->colls |= COLL_ALLTOALL;
		} else {
			fprintf(stderr, "mpi_coll_bench: -c: '%s' is neither allreduce nor alltoall\n",
				item);
			ret = -1;
			break;
		}
	}
	free(copy);
	return ret || !o->colls ? -1 : 0;
}

/* 0: run, 1: exit 0 (help), 2: usage error. */
static int parse_options(int argc, char **argv, struct cb_options *o)
{
	const char *sizes = "8,16,64,256,1K,4K,16K,64K,256K,1M,4M";
	const char *colls = "allreduce,alltoall";
	int opt, s;

	memset(o, 0, sizeof(*o));
	o->iterations = -1;
	o->warmup = -1;
	o->seconds = 1.0;
	while ((opt = getopt(argc, argv, "c:s:i:x:t:o:h")) != -1) {
		switch (opt) {
		case 'c': colls = optarg; break;
		case 's': sizes = optarg; break;
		case 'i':
			if (mpi_parse_int(optarg, 1, COUNT_MAX, &o->iterations))
				goto bad;
			break;
		case 'x':
			if (mpi_parse_int(optarg, 0, COUNT_MAX, &o->warmup))
				goto bad;
			break;
		case 't': {
			char *end;

			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno || end == optarg || *end || o->seconds < 0 || o->seconds > 3600)
				goto bad;
			break;
		}
		case 'o':
			if (!strcmp(optarg, "kv")) {
				o->kv = 1;
			} else if (strcmp(optarg, "text")) {
				fprintf(stderr, "mpi_coll_bench: -o %s: expected text or kv\n", optarg);
				return 2;
			}
			break;
		default: return mpi_option_help(opt, usage);
		}
	}
	if (mpi_no_operands("mpi_coll_bench", argc, argv))
		return 2;
	if (parse_colls(colls, o))
		return 2;
	o->n_sizes = mpi_parse_size_list("mpi_coll_bench", sizes, 1, 0x7fffffff, o->sizes,
					 MAX_SIZES);
	if (o->n_sizes < 0)
		return 2;
	for (s = 0; s < o->n_sizes; s++) {
		if ((o->colls & COLL_ALLREDUCE) && o->sizes[s] % sizeof(double)) {
			fprintf(stderr, "mpi_coll_bench: allreduce sums doubles: size %zu is not "
				"a multiple of %zu\n", o->sizes[s], sizeof(double));
			return 2;
		}
	}
	return 0;
bad:
	fprintf(stderr, "mpi_coll_bench: -%c '%s' is not a valid number\n", opt, optarg);
	return 2;
}

/* The timed calls and their warm-up, as far as the size decides them. */
static void counts_for_size(const struct cb_options *o, size_t size, int *iterations,
			    int *warmup)
{
	size_t n = ITER_BYTES / size;

	*iterations = o->iterations > 0 ? o->iterations :
		      n < MIN_ITERS ? MIN_ITERS : n > MAX_ITERS ? MAX_ITERS : (int)n;
	if (o->warmup >= 0)
		*warmup = o->warmup;
	else
		*warmup = *iterations / 10 < PACE_ITERS + 1 ? PACE_ITERS + 1 : *iterations / 10;
}

/*
 * Warms up, then times the calls. Without -i (and with at least
 * PACE_ITERS + 1 warm-up calls), PACE_ITERS warm-up calls after the first
 * (which may open connections) give the slowest rank's pace, and the
 * counts shrink to what fits in o->seconds: every rank computes them from
 * the same reduced pace, so they all make the same number of calls.
 */
static double time_calls(const struct cb_options *o, coll_call call, void *in, void *out,
			 size_t size, int *iterations, int *warmup)
{
	double start, pace, fit;
	int it, done = 0;

	counts_for_size(o, size, iterations, warmup);
	if (o->iterations <= 0 && o->seconds > 0 && *warmup > PACE_ITERS) {
		call(in, out, size);
		start = MPI_Wtime();
		for (done = 1; done <= PACE_ITERS; done++)
			call(in, out, size);
		pace = (MPI_Wtime() - start) / PACE_ITERS;
		MPI_Allreduce(MPI_IN_PLACE, &pace, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		fit = pace > 0 ? o->seconds / pace : MAX_ITERS;
		if (fit < *iterations)
			*iterations = fit < MIN_TIMED_ITERS ? MIN_TIMED_ITERS : (int)fit;
		if (o->warmup < 0 && fit / 5 < *warmup)
			*warmup = fit / 5 < done ? done : (int)(fit / 5);
	}
	for (it = done; it < *warmup; it++)
		call(in, out, size);
	MPI_Barrier(MPI_COMM_WORLD);
	start = MPI_Wtime();
	for (it = 0; it < *iterations; it++)
		call(in, out, size);
	return (MPI_Wtime() - start) * 1e6 / *iterations;
}

static void *alloc_or_abort(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);

	if (!p) {
		fprintf(stderr, "mpi_coll_bench: out of memory for %zu bytes\n", bytes);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

/*
 * Element i of rank r's allreduce input is (r + 1) * (((i + salt) % 251) + 1):
 * small integers, so the sum over the ranks is exact in a double whatever
 * order the reduction takes.
 */
static double allreduce_input(int rank, size_t i, unsigned salt)
{
	return (double)(rank + 1) * (double)((i + salt) % 251 + 1);
}

static void fill_allreduce(double *in, size_t count, int rank, unsigned salt)
{
	size_t i;

	for (i = 0; i < count; i++)
		in[i] = allreduce_input(rank, i, salt);
}

static long check_allreduce(const double *out, size_t count, int rank, int nranks,
			    unsigned salt, size_t size)
{
	double ranks_sum = (double)nranks * (nranks + 1) / 2;
	long bad = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		double want = ranks_sum * (double)((i + salt) % 251 + 1);

		if (out[i] != want) {
			if (!bad)
				fprintf(stderr, "mpi_coll_bench: allreduce %zu B: rank %d: element "
					"%zu is %g, expected %g\n", size, rank, i, out[i], want);
			bad++;
		}
	}
	return bad;
}

static void call_allreduce(void *in, void *out, size_t size)
{
	MPI_Allreduce(in, out, (int)(size / sizeof(double)), MPI_DOUBLE, MPI_SUM,
		      MPI_COMM_WORLD);
}

static void run_allreduce(const struct cb_options *o, int rank, int nranks, size_t size,
			  unsigned salt, struct cb_result *res)
{
	size_t count = size / sizeof(double);
	double *in = alloc_or_abort(size), *out = alloc_or_abort(size);

	/* Touched before timing, so page faults are not measured. */
	fill_allreduce(in, count, rank, 0);
	memset(out, 0, size);
	res->mean_us = time_calls(o, call_allreduce, in, out, size, &res->iterations,
				  &res->warmup);

	fill_allreduce(in, count, rank, salt);
	memset(out, 0xff, size);
	call_allreduce(in, out, size);
	res->bad = check_allreduce(out, count, rank, nranks, salt, size);
	free(in);
	free(out);
}

/* Byte k of what rank src sends to rank dst. */
static uint8_t alltoall_byte(int src, int dst, size_t k, unsigned salt)
{
	return (uint8_t)((unsigned)src * 37 + (unsigned)dst * 11 + k * 7 + (k >> 8) + salt);
}

static void fill_alltoall(uint8_t *in, size_t size, int rank, int nranks, unsigned salt)
{
	size_t k;
	int dst;

	for (dst = 0; dst < nranks; dst++)
		for (k = 0; k < size; k++)
			in[(size_t)dst * size + k] = alltoall_byte(rank, dst, k, salt);
}

static long check_alltoall(const uint8_t *out, size_t size, int rank, int nranks,
			   unsigned salt)
{
	long bad = 0;
	size_t k;
	int src;

	for (src = 0; src < nranks; src++)
		for (k = 0; k < size; k++) {
			uint8_t got = out[(size_t)src * size + k];
			uint8_t want = alltoall_byte(src, rank, k, salt);

			if (got == want)
				continue;
			if (!bad)
				fprintf(stderr, "mpi_coll_bench: alltoall %zu B: rank %d: byte %zu "
					"from rank %d is 0x%02x, expected 0x%02x\n", size, rank,
					k, src, got, want);
			bad++;
		}
	return bad;
}

static void call_alltoall(void *in, void *out, size_t size)
{
	MPI_Alltoall(in, (int)size, MPI_BYTE, out, (int)size, MPI_BYTE, MPI_COMM_WORLD);
}

static void run_alltoall(const struct cb_options *o, int rank, int nranks, size_t size,
			 unsigned salt, struct cb_result *res)
{
	size_t total = size * (size_t)nranks;
	uint8_t *in = alloc_or_abort(total), *out = alloc_or_abort(total);

	fill_alltoall(in, size, rank, nranks, 0);
	memset(out, 0, total);
	res->mean_us = time_calls(o, call_alltoall, in, out, size, &res->iterations,
				  &res->warmup);

	fill_alltoall(in, size, rank, nranks, salt);
	memset(out, 0, total);
	call_alltoall(in, out, size);
	res->bad = check_alltoall(out, size, rank, nranks, salt);
	free(in);
	free(out);
}

/* Gathers the ranks' figures on rank 0 and prints them; returns 1 on a
 * failed check (on every rank), else 0. */
static int report(const struct cb_options *o, const char *coll, int rank, int nranks,
		  size_t size, const struct cb_result *res)
{
	double max_us, min_us, sum_us;
	long bad;

	MPI_Reduce(&res->mean_us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&res->mean_us, &min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	MPI_Reduce(&res->mean_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&res->bad, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		if (o->kv)
			printf("RESULT tool=mpi_coll_bench coll=%s ranks=%d size=%zu iters=%d "
			       "warmup=%d us=%.3f min_us=%.3f avg_us=%.3f check=%s bad=%ld "
			       "status=%s\n", coll, nranks, size, res->iterations, res->warmup, max_us,
			       min_us, sum_us / nranks, bad ? "failed" : "ok", bad,
			       bad ? "failed" : "ok");
		else
			printf("  %-10s %12zu %8d %14.2f %14.2f %14.2f  %s\n", coll, size,
			       res->iterations, max_us, min_us, sum_us / nranks,
			       bad ? "WRONG RESULT" : "ok");
		fflush(stdout);
	}
	return bad ? 1 : 0;
}

static int run_coll(const struct cb_options *o, enum coll_kind kind, int rank, int nranks)
{
	const char *name = kind == COLL_ALLREDUCE ? "allreduce" : "alltoall";
	int s, failed = 0;

	for (s = 0; s < o->n_sizes; s++) {
		size_t size = o->sizes[s];
		struct cb_result res = { 0 };
		/* Differs from size to size and from the timed calls' 0. */
		unsigned salt = (unsigned)s + 1;

		if (kind == COLL_ALLREDUCE)
			run_allreduce(o, rank, nranks, size, salt, &res);
		else
			run_alltoall(o, rank, nranks, size, salt, &res);
		failed |= report(o, name, rank, nranks, size, &res);
	}
	return failed;
}

int main(int argc, char **argv)
{
	struct cb_options o;
	int rank, nranks, failed = 0, ret = parse_options(argc, argv, &o);

	if (ret)
		return ret == 1 ? 0 : 2;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (rank == 0) {
		printf("# mpi_coll_bench: %d ranks; usec per call: the largest of the ranks' means "
		       "(min, avg beside it)\n", nranks);
		if (!o.kv)
			printf("# %-10s %12s %8s %14s %14s %14s  %s\n", "coll", "bytes", "iters",
			       "usec (max)", "usec (min)", "usec (avg)", "check");
		fflush(stdout);
	}
	if (o.colls & COLL_ALLREDUCE)
		failed |= run_coll(&o, COLL_ALLREDUCE, rank, nranks);
	if (o.colls & COLL_ALLTOALL)
		failed |= run_coll(&o, COLL_ALLTOALL, rank, nranks);
	if (failed && rank == 0)
		fprintf(stderr, "mpi_coll_bench: a collective returned a wrong result\n");
	MPI_Finalize();
	return failed;
}
