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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_p2p.h"

struct sub_test {
	const char *name;
	void (*run)(struct test_ctx *t);
	int variant;	/* t->variant, for a run shared by sub-tests */
	const char *what;
};

static const struct sub_test sub_tests[] = {
	{ "blocking", test_blocking, 0, "MPI_Send/MPI_Recv ping-pong in pairs, size sweep" },
	{ "sendrecv", test_sendrecv, 0, "MPI_Sendrecv around a ring, size sweep" },
	{ "waitall", test_window, BY_WAITALL, "WINDOW Isend/Irecv per peer, mixed sizes, MPI_Waitall" },
	{ "testany", test_window, BY_TESTANY, "WINDOW Isend/Irecv per peer, mixed sizes, MPI_Testany" },
	{ "waitsome", test_window, BY_WAITSOME, "WINDOW Isend/Irecv per peer, mixed sizes, MPI_Waitsome" },
	{ "any-source", test_any_source, 0, "MPI_ANY_SOURCE receives of a fan-in from every rank" },
	{ "any-tag", test_any_tag, 0, "MPI_ANY_TAG receives, in send order per source" },
	{ "any-source-any-tag", test_any_source_any_tag, 0, "both wildcards, in send order per source" },
	{ "ring", test_ring, 0, "a token passed around all ranks, size sweep" },
	{ "alltoall", test_alltoall, 0, "every rank to every rank at once, sizes up to 8 MiB" },
	{ "probe", test_probes, BY_PROBE, "MPI_Probe then MPI_Recv, size sweep" },
	{ "iprobe", test_probes, BY_IPROBE, "MPI_Iprobe polled until found, size sweep" },
	{ "mprobe", test_probes, BY_MPROBE, "MPI_Mprobe + MPI_Mrecv, size sweep; a matched message is claimed" },
	{ "improbe", test_probes, BY_IMPROBE, "MPI_Improbe polled + MPI_Mrecv/MPI_Imrecv, size sweep" },
	{ "unexpected", test_unexpected, 0, "COUNT small and some large messages before any receive" },
	{ "unexpected-fan-in", test_unexpected_fan_in, 0, "unexpected messages from every rank to rank 0" },
	{ "ordering", test_ordering, 0, "non-overtaking of mixed eager and rendezvous sizes on one tag" },
	{ "truncate", test_truncate, 0, "MPI_ERR_TRUNCATE, nothing written past the buffer, comm usable" },
	{ "cancel", test_cancel, 0, "MPI_Cancel of receives that never match" },
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

static int select_sub_test(void *arg, const char *name)
{
	struct options *o = arg;
	size_t i;

	for (i = 0; i < N_SUB_TESTS; i++)
		if (strcmp(name, sub_tests[i].name) == 0) {
			o->selected[i] = 1;
			return 1;
		}
	return 0;
}

/* 0: run; 1: exit 0 (listed, help); 2: usage error. Needs no MPI, so
 * "mpi_p2p -l" works without mpirun. */
static int parse_options(int argc, char **argv, struct options *o)
{
	int opt, any = 0;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->max_size = 64 * MiB;
	o->window = 512;
	o->storm_count = 2000;
	o->timeout = 120;
	while ((opt = getopt(argc, argv, "t:M:w:u:T:lh")) != -1) {
		switch (opt) {
		case 't':
			if (mpi_select_names("mpi_p2p", optarg, select_sub_test, o))
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
			if (mpi_parse_seconds("mpi_p2p", opt, optarg, 0, &o->timeout))
				return 2;
			break;
		case 'l':
			for (i = 0; i < N_SUB_TESTS; i++)
				printf("%-20s %s\n", sub_tests[i].name, sub_tests[i].what);
			return 1;
		default:
			return mpi_option_help(opt, usage);
		}
	}
	if (mpi_no_operands("mpi_p2p", argc, argv))
		return 2;
	if (!any)
		for (i = 0; i < N_SUB_TESTS; i++)
			o->selected[i] = 1;
	return 0;
}

static const char *sub_test_name(const void *arg, size_t i, char *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return sub_tests[i].name;
}

static void run_sub_test(const void *arg, size_t i, struct test_ctx *t)
{
	const struct options *o = arg;

	t->window = o->window;
	t->storm_count = o->storm_count;
	t->variant = sub_tests[i].variant;
	sub_tests[i].run(t);
}

int main(int argc, char **argv)
{
	struct options o;
	int ret = parse_options(argc, argv, &o);
	const struct suite suite = {
		.prog = "mpi_p2p", .count = N_SUB_TESTS, .selected = o.selected,
		.name = sub_test_name, .run = run_sub_test, .arg = &o,
		.timeout = o.timeout, .limit = "max size", .max_size = o.max_size,
	};

	if (ret)
		return ret == 1 ? 0 : 2;
	return suite_main(&suite, &argc, &argv);
}
