/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_bw: MPI bandwidth and latency between ranks 0 and 1.
 *
 *   mpirun -np 2 mpi_bw [-s SIZE[,SIZE..]] [-w WINDOW] [-i ITERATIONS]
 *                       [-x WARMUP] [-l]
 *
 * Bandwidth (default): per size, rank 0 keeps WINDOW MPI_Isend of SIZE bytes
 * in flight towards rank 1, which has WINDOW MPI_Irecv posted, ITERATIONS
 * times; after each window rank 1 answers with a 1-byte message, and rank
 * 0's clock runs from the first window to the last answer. Prints MB/s
 * (10^6 bytes) and Gbit/s. Latency (-l): a ping-pong of SIZE bytes; prints
 * half the round trip in microseconds. Ranks beyond 1 only wait.
 *
 * A benchmark: it prints figures and asserts nothing about them;
 * mpi_p2p checks correctness.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpi_p2p.h"

#define BW_TAG 1
#define ACK_TAG 2
#define PING_TAG 3
#define MAX_SIZES 64
/* Largest -w, -i or -x. */
#define COUNT_MAX 100000000

struct bw_options {
	size_t sizes[MAX_SIZES];
	int n_sizes, window, iterations, warmup, latency;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpirun -np 2 mpi_bw [-s SIZE[,SIZE..]] [-w WINDOW] [-i ITERATIONS] [-x WARMUP] [-l]\n"
		"  -s SIZES  message sizes, K/M suffixes (default bandwidth 1K,4K,16K,64K,256K,1M,4M;\n"
		"            latency 0,1,8,64,512,4K,16K)\n"
		"  -w N      sends in flight per window (default 64)\n"
		"  -i N      timed windows or ping-pongs per size (default 20; latency 1000)\n"
		"  -x N      untimed ones before them (default 2; latency 100)\n"
		"  -l        ping-pong latency instead of bandwidth\n");
}

/* 0: run, 1: exit 0 (help), 2: usage error. */
static int parse_options(int argc, char **argv, struct bw_options *o)
{
	const char *sizes = NULL;
	int opt, iterations = -1, warmup = -1;

	memset(o, 0, sizeof(*o));
	o->window = 64;
	while ((opt = getopt(argc, argv, "s:w:i:x:lh")) != -1) {
		switch (opt) {
		case 's': sizes = optarg; break;
		case 'w':
			if (mpi_parse_int(optarg, 1, COUNT_MAX, &o->window))
				goto bad;
			break;
		case 'i':
			if (mpi_parse_int(optarg, 1, COUNT_MAX, &iterations))
				goto bad;
			break;
		case 'x':
			if (mpi_parse_int(optarg, 0, COUNT_MAX, &warmup))
				goto bad;
			break;
		case 'l': o->latency = 1; break;
		default: return mpi_option_help(opt, usage);
		}
	}
	if (mpi_no_operands("mpi_bw", argc, argv))
		return 2;
	if (!sizes)
		sizes = o->latency ? "0,1,8,64,512,4K,16K" : "1K,4K,16K,64K,256K,1M,4M";
	o->n_sizes = mpi_parse_size_list("mpi_bw", sizes, 0, 0x7fffffff, o->sizes, MAX_SIZES);
	if (o->n_sizes < 0)
		return 2;
	o->iterations = iterations >= 0 ? iterations : o->latency ? 1000 : 20;
	o->warmup = warmup >= 0 ? warmup : o->latency ? 100 : 2;
	return 0;
bad:
	fprintf(stderr, "mpi_bw: -%c '%s' is not a valid count\n", opt, optarg);
	return 2;
}

/* One window: WINDOW sends from rank 0 into separate slots of rank 1's
 * buffer (receives into one shared buffer would be erroneous MPI), then
 * rank 1's answer. */
static void bw_window(MPI_Comm pair, int rank, const struct bw_options *o, size_t size,
		      char *buf, MPI_Request *reqs)
{
	char ack = 0;
	int i;

	for (i = 0; i < o->window; i++) {
		if (rank == 0)
			MPI_Isend(buf + size * (size_t)i, (int)size, MPI_BYTE, 1, BW_TAG,
				  pair, &reqs[i]);
		else
			MPI_Irecv(buf + size * (size_t)i, (int)size, MPI_BYTE, 0, BW_TAG,
				  pair, &reqs[i]);
	}
	MPI_Waitall(o->window, reqs, MPI_STATUSES_IGNORE);
	if (rank == 0)
		MPI_Recv(&ack, 1, MPI_BYTE, 1, ACK_TAG, pair, MPI_STATUS_IGNORE);
	else
		MPI_Send(&ack, 1, MPI_BYTE, 0, ACK_TAG, pair);
}

static void run_bandwidth(MPI_Comm pair, int rank, const struct bw_options *o)
{
	MPI_Request *reqs = malloc(sizeof(*reqs) * (size_t)o->window);
	int s, it;

	if (rank == 0)
		printf("# mpi_bw: bandwidth, rank 0 -> 1, window %d, %d windows per size (+%d warm-up)\n"
		       "# %12s %12s %10s %10s\n", o->window, o->iterations, o->warmup,
		       "bytes", "MB/s", "Gbit/s", "seconds");
	for (s = 0; s < o->n_sizes; s++) {
		size_t size = o->sizes[s], total = size * (size_t)o->window;
		char *buf = malloc(total ? total : 1);
		double start, seconds, bytes;

		if (!buf || !reqs) {
			fprintf(stderr, "mpi_bw: out of memory for %d x %zu bytes\n", o->window, size);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		/* Touched before timing, so page faults are not measured. */
		memset(buf, rank + 1, total);
		for (it = 0; it < o->warmup; it++)
			bw_window(pair, rank, o, size, buf, reqs);
		MPI_Barrier(pair);
		start = MPI_Wtime();
		for (it = 0; it < o->iterations; it++)
			bw_window(pair, rank, o, size, buf, reqs);
		seconds = MPI_Wtime() - start;
		bytes = (double)size * o->window * o->iterations;
		if (rank == 0)
			printf("  %12zu %12.2f %10.3f %10.4f\n", size, bytes / seconds / 1e6,
			       bytes * 8 / seconds / 1e9, seconds);
		fflush(stdout);
		free(buf);
	}
	free(reqs);
}

static void run_latency(MPI_Comm pair, int rank, const struct bw_options *o)
{
	int s, it;

	if (rank == 0)
		printf("# mpi_bw: ping-pong latency, ranks 0 <-> 1, %d round trips per size (+%d warm-up)\n"
		       "# %12s %14s\n", o->iterations, o->warmup, "bytes", "usec one-way");
	for (s = 0; s < o->n_sizes; s++) {
		size_t size = o->sizes[s];
		char *buf = malloc(size ? size : 1);
		double start = 0;

		if (!buf) {
			fprintf(stderr, "mpi_bw: out of memory for %zu bytes\n", size);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		memset(buf, rank + 1, size);
		MPI_Barrier(pair);
		for (it = 0; it < o->warmup + o->iterations; it++) {
			if (it == o->warmup)
				start = MPI_Wtime();
			if (rank == 0) {
				MPI_Send(buf, (int)size, MPI_BYTE, 1, PING_TAG, pair);
				MPI_Recv(buf, (int)size, MPI_BYTE, 1, PING_TAG, pair,
					 MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, (int)size, MPI_BYTE, 0, PING_TAG, pair,
					 MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)size, MPI_BYTE, 0, PING_TAG, pair);
			}
		}
		if (rank == 0)
			printf("  %12zu %14.2f\n", size,
			       (MPI_Wtime() - start) * 1e6 / (2.0 * o->iterations));
		fflush(stdout);
		free(buf);
	}
}

int main(int argc, char **argv)
{
	struct bw_options o;
	int rank, size, ret = parse_options(argc, argv, &o);
	MPI_Comm pair;

	if (ret)
		return ret == 1 ? 0 : 2;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_bw: needs at least 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	/* Ranks 0 and 1 get a communicator of their own, so their barriers
	 * between sizes do not involve the waiting ranks. */
	MPI_Comm_split(MPI_COMM_WORLD, rank <= 1 ? 0 : MPI_UNDEFINED, rank, &pair);
	if (rank <= 1) {
		if (o.latency)
			run_latency(pair, rank, &o);
		else
			run_bandwidth(pair, rank, &o);
		MPI_Comm_free(&pair);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
