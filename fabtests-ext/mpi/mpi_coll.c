/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_coll: an MPI collective correctness suite, for running MPI over
 * mrail (or any libfabric provider, through Open MPI's mtl ofi).
 *
 *   mpirun -np N mpi_coll [-t NAME[,NAME..]] [-M BYTES] [-w SECONDS] [-i N]
 *   mpi_coll -l            list the sub-tests
 *
 * Every MPI-1 collective (and reduce_scatter_block, scan, exscan), blocking
 * and as its MPI_I* form, from 0 bytes per block up to 4 MiB, on
 * MPI_COMM_WORLD, on halves split by rank parity (in reverse rank order)
 * and on a duplicate of MPI_COMM_WORLD; then, per communicator, a loop
 * mixing collectives, sizes and roots, and non-blocking collectives in
 * flight together. Every element is checked against the value its sender
 * put there. Rank 0 prints one line per sub-test, "PASS: NAME" or "FAIL:
 * NAME: WHY"; a sub-test that runs longer than the watchdog prints which
 * one hung, from the rank that waited, and ends the job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_coll.h"

enum comm_kind { COMM_WORLD, COMM_SPLIT, COMM_DUP, COMM_KINDS };
static const char *const comm_names[COMM_KINDS] = { "world", "split", "dup" };

/* Per-block sizes: around mrail's eager limit (16 KiB less its 48-byte
 * header) and the core providers' usual ones, up to rendezvous sizes. */
static const size_t sweep[] = {
	0, 8, 1000, 16336, 16392, 64 * KiB, 1 * MiB, 4 * MiB,
};
#define SWEEP_LEN (sizeof(sweep) / sizeof(sweep[0]))

/* A sub-test: one collective (blocking or not), the mixed loop, or the
 * concurrent non-blocking set, on one communicator. */
enum sub_kind { SUB_COLL, SUB_MIXED, SUB_MULTI_NB };

struct sub_test {
	char name[48];
	enum comm_kind comm;
	enum sub_kind kind;
	const struct coll_kind *coll;
	bool nonblocking;
};

#define MAX_SUB_TESTS (COMM_KINDS * (2 * 16 + 2))

struct options {
	struct sub_test subs[MAX_SUB_TESTS];
	int selected[MAX_SUB_TESTS];
	size_t n_subs;
	size_t max_size;
	unsigned timeout;
	int mixed_iters;
};

static void build_sub_tests(struct options *o)
{
	size_t c, k;

	o->n_subs = 0;
	for (c = 0; c < COMM_KINDS; c++) {
		for (k = 0; k < coll_kind_count && o->n_subs + 2 <= MAX_SUB_TESTS; k++) {
			struct sub_test *b = &o->subs[o->n_subs++];
			struct sub_test *nb = &o->subs[o->n_subs++];

			*b = (struct sub_test){ .comm = c, .kind = SUB_COLL, .coll = &coll_kinds[k] };
			snprintf(b->name, sizeof(b->name), "%s:%s", comm_names[c], coll_kinds[k].name);
			*nb = *b;
			nb->nonblocking = true;
			snprintf(nb->name, sizeof(nb->name), "%s:i%s", comm_names[c], coll_kinds[k].name);
		}
		if (o->n_subs + 2 > MAX_SUB_TESTS)
			break;
		o->subs[o->n_subs] = (struct sub_test){ .comm = c, .kind = SUB_MIXED };
		snprintf(o->subs[o->n_subs].name, sizeof(o->subs[0].name), "%s:mixed", comm_names[c]);
		o->n_subs++;
		o->subs[o->n_subs] = (struct sub_test){ .comm = c, .kind = SUB_MULTI_NB };
		snprintf(o->subs[o->n_subs].name, sizeof(o->subs[0].name), "%s:multi-nb", comm_names[c]);
		o->n_subs++;
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpirun -np N mpi_coll [-t NAME[,NAME..]] [-M BYTES] [-w SECONDS] [-i N]\n"
		"       mpi_coll -l\n"
		"  -t NAME   run only these sub-tests; NAME is COMM:COLL (world:ibcast), a\n"
		"            collective on every communicator (ibcast), or a communicator\n"
		"            (split); repeatable (default: all)\n"
		"  -M BYTES  largest block (K, M suffixes; default 4M; 0 and 8 always run)\n"
		"  -w SEC    watchdog: a sub-test running longer fails the job (default 60)\n"
		"  -i N      calls of the mixed loops (default 48)\n"
		"  -l        list the sub-tests and exit\n");
}

/* NAME selects the sub-test of that name, or every sub-test whose
 * collective part or communicator part it is. */
static int select_sub_tests(void *arg, const char *name)
{
	struct options *o = arg;
	int found = 0;
	size_t i;

	for (i = 0; i < o->n_subs; i++) {
		const char *colon = strchr(o->subs[i].name, ':');
		size_t comm_len = (size_t)(colon - o->subs[i].name);

		if (strcmp(name, o->subs[i].name) == 0 || strcmp(name, colon + 1) == 0 ||
		    (strlen(name) == comm_len && strncmp(name, o->subs[i].name, comm_len) == 0)) {
			o->selected[i] = 1;
			found++;
		}
	}
	return found;
}

/* 0: run; 1: exit 0 (listed, help); 2: usage error. Needs no MPI. */
static int parse_options(int argc, char **argv, struct options *o)
{
	unsigned long value;
	int opt, any = 0;
	size_t i;

	memset(o, 0, sizeof(*o));
	build_sub_tests(o);
	o->max_size = 4 * MiB;
	o->timeout = 60;
	o->mixed_iters = 48;
	while ((opt = getopt(argc, argv, "t:M:w:i:lh")) != -1) {
		switch (opt) {
		case 't':
			if (mpi_select_names("mpi_coll", optarg, select_sub_tests, o))
				return 2;
			any = 1;
			break;
		case 'M':
			if (mpi_parse_size(optarg, 64 * MiB, &o->max_size)) {
				fprintf(stderr, "mpi_coll: -M '%s': not a size up to 64M\n", optarg);
				return 2;
			}
			break;
		case 'w':
			if (mpi_parse_seconds("mpi_coll", opt, optarg, 0, &o->timeout))
				return 2;
			break;
		case 'i':
			if (mpi_parse_uint(optarg, 100000, &value) || value == 0) {
				fprintf(stderr, "mpi_coll: -i '%s': not a count 1..100000\n", optarg);
				return 2;
			}
			o->mixed_iters = (int)value;
			break;
		case 'l':
			for (i = 0; i < o->n_subs; i++)
				printf("%s\n", o->subs[i].name);
			return 1;
		default:
			return mpi_option_help(opt, usage);
		}
	}
	if (mpi_no_operands("mpi_coll", argc, argv))
		return 2;
	if (!any)
		for (i = 0; i < o->n_subs; i++)
			o->selected[i] = 1;
	return 0;
}

/* The sweep up to max_size; 0 and 8 bytes always run. */
static size_t sizes_up_to(size_t max_size, size_t *sizes)
{
	size_t i, n = 0;

	for (i = 0; i < SWEEP_LEN; i++)
		if (sweep[i] <= max_size || sweep[i] <= 8)
			sizes[n++] = sweep[i];
	/* A -M between two sweep sizes is itself tested (whole elements). */
	if (max_size > 8 && sizes[n - 1] != (max_size & ~(size_t)7))
		sizes[n++] = max_size & ~(size_t)7;
	return n;
}

/* The communicator a sub-test runs on; t->comm is already a duplicate of
 * MPI_COMM_WORLD (sub_test_begin). Halves are in reverse rank order, so a
 * rank's number differs from its MPI_COMM_WORLD one. */
static int open_comm(struct test_ctx *t, enum comm_kind kind, MPI_Comm *comm)
{
	switch (kind) {
	case COMM_WORLD:
		*comm = MPI_COMM_WORLD;
		return 1;
	case COMM_DUP:
		*comm = t->comm;
		return 1;
	default:
		return MPI_OK(t, MPI_Comm_split(MPI_COMM_WORLD, t->rank % 2, t->size - t->rank, comm));
	}
}

static void close_comm(enum comm_kind kind, MPI_Comm *comm)
{
	if (kind == COMM_SPLIT)
		MPI_Comm_free(comm);
}

static void run_one(struct coll_run *r, const struct coll_kind *kind, bool nonblocking,
		    size_t bytes, int salt)
{
	r->nonblocking = nonblocking;
	r->bytes = bytes;
	r->salt = salt;
	r->variant = kind->variant;
	r->root = kind->rooted ? salt % r->size : 0;
	kind->run(r);
}

/* Several non-blocking collectives in flight on one communicator at once,
 * completed together: a broadcast, a sum and an all-to-all per size. */
static void run_multi_nb(struct coll_run *r, const size_t *sizes, size_t n_sizes)
{
	size_t k, i, q;

	for (k = 0; k < n_sizes && !r->t->failures; k++) {
		size_t n32 = sizes[k] / 4, n64 = sizes[k] / 8, total = n32 * (size_t)r->size;
		uint32_t *bc = xmalloc(n32 * 4), *a2a_s = xmalloc(total * 4), *a2a_r = xmalloc(total * 4);
		int64_t *sum_s = xmalloc(n64 * 8), *sum_r = xmalloc(n64 * 8);
		int root = (int)k % r->size, salt = (int)k + 1000;
		MPI_Request reqs[3];

		for (i = 0; i < n32; i++)
			bc[i] = r->rank == root ? coll_value(root, i, salt) : 0;
		for (i = 0; i < total; i++)
			a2a_s[i] = coll_value(r->rank, i, salt + 1);
		for (i = 0; i < n64; i++)
			sum_s[i] = coll_rvalue(r->rank, i, salt + 2);
		if (!MPI_OK(r->t, MPI_Ibcast(bc, (int)n32, MPI_UINT32_T, root, r->comm, &reqs[0])) ||
		    !MPI_OK(r->t, MPI_Iallreduce(sum_s, sum_r, (int)n64, MPI_INT64_T, MPI_SUM,
						 r->comm, &reqs[1])) ||
		    !MPI_OK(r->t, MPI_Ialltoall(a2a_s, (int)n32, MPI_UINT32_T, a2a_r, (int)n32,
						MPI_UINT32_T, r->comm, &reqs[2])) ||
		    !waitall_ok(r->t, 3, reqs, MPI_STATUSES_IGNORE))
			goto next;
		for (i = 0; i < n32; i++)
			if (bc[i] != coll_value(root, i, salt)) {
				test_fail(r->t, "%s multi-nb %zu B: ibcast element %zu wrong",
					  r->comm_name, sizes[k], i);
				break;
			}
		for (q = 0; q < (size_t)r->size; q++)
			for (i = 0; i < n32; i++)
				if (a2a_r[q * n32 + i] != coll_value((int)q, r->rank * n32 + i, salt + 1)) {
					test_fail(r->t, "%s multi-nb %zu B: ialltoall element %zu from rank %zu wrong",
						  r->comm_name, sizes[k], i, q);
					q = (size_t)r->size;
					break;
				}
		for (i = 0; i < n64; i++) {
			int64_t want = 0;
			int p;

			for (p = 0; p < r->size; p++)
				want += coll_rvalue(p, i, salt + 2);
			if (sum_r[i] != want) {
				test_fail(r->t, "%s multi-nb %zu B: iallreduce element %zu is %lld, expected %lld",
					  r->comm_name, sizes[k], i, (long long)sum_r[i], (long long)want);
				break;
			}
		}
next:
		free(bc);
		free(a2a_s);
		free(a2a_r);
		free(sum_s);
		free(sum_r);
	}
}

static const char *sub_test_name(const void *arg, size_t i, char *buf, size_t len)
{
	const struct options *o = arg;

	(void)buf;
	(void)len;
	return o->subs[i].name;
}

/* Sub-test i on every rank, in t (sub_test_begin's). */
static void run_sub_test(const void *arg, size_t i, struct test_ctx *t)
{
	const struct options *o = arg;
	const struct sub_test *st = &o->subs[i];
	size_t sizes[SWEEP_LEN + 1], n_sizes = sizes_up_to(o->max_size, sizes), k;
	struct coll_run r = { .t = t, .comm_name = comm_names[st->comm] };
	int it;

	if (!open_comm(t, st->comm, &r.comm))
		return;
	MPI_Comm_rank(r.comm, &r.rank);
	MPI_Comm_size(r.comm, &r.size);
	switch (st->kind) {
	case SUB_COLL:
		/* Stop at the first failing size: one reason is enough. */
		for (k = 0; k < n_sizes && !t->failures; k++)
			run_one(&r, st->coll, st->nonblocking, sizes[k], (int)k);
		break;
	case SUB_MIXED:
		/* Strides coprime with the table lengths visit every
		 * collective with many sizes, roots and both forms. */
		for (it = 0; it < o->mixed_iters && !t->failures; it++)
			run_one(&r, &coll_kinds[((size_t)it * 5) % coll_kind_count], it % 3 == 0,
				sizes[((size_t)it * 3) % n_sizes], it + 100);
		break;
	case SUB_MULTI_NB:
		run_multi_nb(&r, sizes, n_sizes);
		break;
	}
	close_comm(st->comm, &r.comm);
}

int main(int argc, char **argv)
{
	static struct options o;
	int ret = parse_options(argc, argv, &o);
	const struct suite suite = {
		.prog = "mpi_coll", .count = o.n_subs, .selected = o.selected,
		.name = sub_test_name, .run = run_sub_test, .arg = &o,
		.timeout = o.timeout, .limit = "max block", .max_size = o.max_size,
		.world_returns_errors = 1,
	};

	if (ret)
		return ret == 1 ? 0 : 2;
	return suite_main(&suite, &argc, &argv);
}
