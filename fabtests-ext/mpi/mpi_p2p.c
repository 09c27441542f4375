/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_p2p: an MPI point-to-point correctness suite, for running MPI over
 * mrail (or any libfabric provider, through Open MPI's mtl ofi).
 *
 *   mpirun -np N mpi_p2p [-t NAME[,NAME..]] [-M BYTES] [-w WINDOW]
 *                        [-u COUNT] [-T SECONDS]
 *   mpi_p2p -l            list the sub-tests
 *
 * Every sub-test runs on all ranks (2 or more; pairs, rings, fan-ins and
 * all-to-all patterns adapt to the number) and checks payloads byte for
 * byte, status fields and completion counts. Rank 0 prints one line per
 * sub-test, "PASS: NAME" or "FAIL: NAME: WHY", and the exit status is
 * nonzero when any failed. A sub-test that makes no progress for SECONDS
 * prints its FAIL line from the rank that waited and ends the job.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_p2p.h"

struct sub_test {
	const char *name;
	void (*run)(struct test_ctx *t);
	const char *what;
};

static const struct sub_test sub_tests[] = {
	{ "blocking", test_blocking, "MPI_Send/MPI_Recv ping-pong in pairs, size sweep" },
	{ "sendrecv", test_sendrecv, "MPI_Sendrecv around a ring, size sweep" },
	{ "waitall", test_waitall, "WINDOW Isend/Irecv per peer, mixed sizes, MPI_Waitall" },
	{ "testany", test_testany, "WINDOW Isend/Irecv per peer, mixed sizes, MPI_Testany" },
	{ "waitsome", test_waitsome, "WINDOW Isend/Irecv per peer, mixed sizes, MPI_Waitsome" },
	{ "any-source", test_any_source, "MPI_ANY_SOURCE receives of a fan-in from every rank" },
	{ "any-tag", test_any_tag, "MPI_ANY_TAG receives, in send order per source" },
	{ "any-source-any-tag", test_any_source_any_tag, "both wildcards, in send order per source" },
	{ "ring", test_ring, "a token passed around all ranks, size sweep" },
	{ "alltoall", test_alltoall, "every rank to every rank at once, sizes up to 8 MiB" },
	{ "probe", test_probe, "MPI_Probe then MPI_Recv, size sweep" },
	{ "iprobe", test_iprobe, "MPI_Iprobe polled until found, size sweep" },
	{ "mprobe", test_mprobe, "MPI_Mprobe + MPI_Mrecv, size sweep; a matched message is claimed" },
	{ "improbe", test_improbe, "MPI_Improbe polled + MPI_Mrecv/MPI_Imrecv, size sweep" },
	{ "unexpected", test_unexpected, "COUNT small and some large messages before any receive" },
	{ "unexpected-fan-in", test_unexpected_fan_in, "unexpected messages from every rank to rank 0" },
	{ "ordering", test_ordering, "non-overtaking of mixed eager and rendezvous sizes on one tag" },
	{ "truncate", test_truncate, "MPI_ERR_TRUNCATE, nothing written past the buffer, comm usable" },
	{ "cancel", test_cancel, "MPI_Cancel of receives that never match" },
};
#define N_SUB_TESTS (sizeof(sub_tests) / sizeof(sub_tests[0]))

struct options {
	int selected[N_SUB_TESTS];
	size_t max_size;
	int window, storm_count;
	unsigned timeout;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpirun -np N mpi_p2p [-t NAME[,NAME..]] [-M BYTES] [-w WINDOW] [-u COUNT] [-T SECONDS]\n"
		"       mpi_p2p -l\n"
		"  -t NAME   run only these sub-tests (repeatable; default: all)\n"
		"  -M BYTES  largest message (K, M, G suffixes; default 64M)\n"
		"  -w N      requests in flight per peer in waitall/testany/waitsome (default 512)\n"
		"  -u N      small messages of the unexpected storm (default 2000)\n"
		"  -T SEC    fail a sub-test that runs longer than SEC (default 120, 0: never)\n"
		"  -l        list the sub-tests and exit\n");
}

static int select_sub_tests(struct options *o, const char *list)
{
	char *copy = strdup(list), *name, *save = NULL;
	size_t i;
	int ret = 0;

	for (name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < N_SUB_TESTS; i++)
			if (strcmp(name, sub_tests[i].name) == 0)
				break;
		if (i == N_SUB_TESTS) {
			fprintf(stderr, "mpi_p2p: unknown sub-test '%s' (-l lists them)\n", name);
			ret = -1;
			break;
		}
		o->selected[i] = 1;
	}
	free(copy);
	return ret;
}

/* 0: run; 1: exit 0 (listed, help); 2: usage error. Needs no MPI, so
 * "mpi_p2p -l" works without mpirun. */
static int parse_options(int argc, char **argv, struct options *o)
{
	int opt, any = 0;
	size_t i;
	unsigned long timeout;
	char *end;

	memset(o, 0, sizeof(*o));
	o->max_size = 64 * MiB;
	o->window = 512;
	o->storm_count = 2000;
	o->timeout = 120;
	while ((opt = getopt(argc, argv, "t:M:w:u:T:lh")) != -1) {
		switch (opt) {
		case 't':
			if (select_sub_tests(o, optarg))
				return 2;
			any = 1;
			break;
		case 'M':
			if (mpi_parse_size(optarg, 0x7fffffff, &o->max_size) ||
			    o->max_size < 8) {
				fprintf(stderr, "mpi_p2p: -M '%s': not a size from 8 to 2G-1\n", optarg);
				return 2;
			}
			break;
		case 'w':
			if (mpi_parse_int(optarg, 1, 1000000, &o->window)) {
				fprintf(stderr, "mpi_p2p: -w '%s': not a count 1..1000000\n", optarg);
				return 2;
			}
			break;
		case 'u':
			if (mpi_parse_int(optarg, 1, 1000000, &o->storm_count)) {
				fprintf(stderr, "mpi_p2p: -u '%s': not a count 1..1000000\n", optarg);
				return 2;
			}
			break;
		case 'T':
			errno = 0;
			timeout = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || timeout > 86400) {
				fprintf(stderr, "mpi_p2p: -T '%s': not a number of seconds\n", optarg);
				return 2;
			}
			o->timeout = (unsigned)timeout;
			break;
		case 'l':
			for (i = 0; i < N_SUB_TESTS; i++)
				printf("%-20s %s\n", sub_tests[i].name, sub_tests[i].what);
			return 1;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "mpi_p2p: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!any)
		for (i = 0; i < N_SUB_TESTS; i++)
			o->selected[i] = 1;
	return 0;
}

/* Runs one sub-test on every rank; returns 1 when it passed everywhere. */
static int run_sub_test(const struct sub_test *st, const struct options *o, int rank, int size)
{
	struct test_ctx t = {
		.rank = rank, .size = size, .max_size = o->max_size,
		.window = o->window, .storm_count = o->storm_count,
	};
	double started;

	sub_test_begin(&t, st->name, o->timeout);
	started = MPI_Wtime();
	st->run(&t);
	return sub_test_end(&t, st->name, MPI_Wtime() - started);
}

int main(int argc, char **argv)
{
	struct options o;
	int rank, size, passed = 0, failed = 0, ret;
	size_t i;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : 2;

	if (!suite_init(&argc, &argv, &rank, &size))
		return 1;
	for (i = 0; i < N_SUB_TESTS; i++) {
		if (!o.selected[i])
			continue;
		if (run_sub_test(&sub_tests[i], &o, rank, size))
			passed++;
		else
			failed++;
	}
	if (rank == 0)
		printf("mpi_p2p: %d passed, %d failed on %d ranks (max size %zu)\n",
		       passed, failed, size, o.max_size);
	MPI_Finalize();
	return failed ? 1 : 0;
}
