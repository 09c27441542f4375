/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_coll: shared declarations of the MPI collective correctness suite.
 * The driver (failure records, watchdog, verdict lines) is mpi_p2p's, in
 * mpi_p2p_common.c: see mpi_p2p.h.
 */
#ifndef MPI_COLL_H
#define MPI_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi_p2p.h"

/* One call of one collective on one communicator. */
struct coll_run {
	struct test_ctx *t;	/* where failures are recorded */
	MPI_Comm comm;
	const char *comm_name;	/* "world", "split", "dup" */
	int rank, size;		/* in comm */
	bool nonblocking;	/* the MPI_I* form, completed by MPI_Wait */
	size_t bytes;		/* per block (per rank pair, per rank) */
	int root;
	int salt;		/* changes every element of every call */
	int variant;		/* which collective a function of several runs */
};

struct coll_kind {
	const char *name;
	void (*run)(struct coll_run *r);
	int rooted;
	/* Passed in coll_run: one function serves collectives that differ
	 * only in the call and what the result holds. */
	int variant;
};

extern const struct coll_kind coll_kinds[];
extern const size_t coll_kind_count;

/* Element index of rank's sequence for a salt: what movement collectives
 * carry (32-bit), and what reductions add up (64-bit, exact). */
uint32_t coll_value(int rank, size_t index, int salt);
int64_t coll_rvalue(int rank, size_t index, int salt);

#endif
