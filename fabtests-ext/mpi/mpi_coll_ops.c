/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_coll: one function per collective, each run blocking or as its MPI_I*
 * form completed with MPI_Wait. Every element sent is a function of the
 * sending rank (in the communicator), its index and a salt that changes per
 * call, so every element received is checked against the value its sender
 * must have put there; gaps between the blocks of vector collectives are
 * preset and must stay untouched.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_coll.h"

/* Elements left between the blocks of a vector collective's buffer. */
#define GAP 3
#define GAP_FILL 0xdeadbeefu
/* Reduction values stay far below 2^63 for every rank count MPI runs. */
#define RVAL_SPAN 100003

/* ---- values ---- */

uint32_t coll_value(int rank, size_t index, int salt)
{
	uint64_t x = ((uint64_t)(uint32_t)rank << 40) ^ ((uint64_t)index << 8) ^ (uint32_t)salt;

	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

int64_t coll_rvalue(int rank, size_t index, int salt)
{
	return (int64_t)(rank + 1) * (int64_t)((index * 31 + (size_t)salt) % RVAL_SPAN + 1);
}

/* Sum of coll_rvalue over ranks [first, last]. */
static int64_t rsum(int first, int last, size_t index, int salt)
{
	int64_t sum = 0;
	int r;

	for (r = first; r <= last; r++)
		sum += coll_rvalue(r, index, salt);
	return sum;
}

/* ---- helpers ---- */

static uint32_t *u32_alloc(size_t count)
{
	return xmalloc(count * sizeof(uint32_t));
}

static void u32_fill(uint32_t *buf, size_t count, uint32_t value)
{
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = value;
}

/* Elements first.. of rank's sequence, what rank sends. */
static void u32_values(uint32_t *buf, size_t count, int rank, size_t first, int salt)
{
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = coll_value(rank, first + i, salt);
}

/* buf[0..count) must hold rank src's elements starting at index first. */
static int check_block(struct coll_run *r, const uint32_t *buf, size_t count,
		       int src, size_t first, const char *what)
{
	size_t i;

	for (i = 0; i < count; i++) {
		uint32_t want = coll_value(src, first + i, r->salt);

		if (buf[i] != want) {
			test_fail(r->t, "%s %s, %zu B, root %d: element %zu from rank %d is 0x%08x, expected 0x%08x",
				  r->comm_name, what, r->bytes, r->root, first + i, src, buf[i], want);
			return 0;
		}
	}
	return 1;
}

static int check_gap(struct coll_run *r, const uint32_t *buf, size_t count, const char *what)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (buf[i] != GAP_FILL) {
			test_fail(r->t, "%s %s, %zu B: gap element overwritten (0x%08x)",
				  r->comm_name, what, r->bytes, buf[i]);
			return 0;
		}
	}
	return 1;
}

static int check_sum(struct coll_run *r, const int64_t *buf, size_t count, size_t first,
		     int lo, int hi, const char *what)
{
	size_t i;

	for (i = 0; i < count; i++) {
		int64_t want = rsum(lo, hi, first + i, r->salt);

		if (buf[i] != want) {
			test_fail(r->t, "%s %s, %zu B, root %d: element %zu is %lld, expected %lld (ranks %d..%d)",
				  r->comm_name, what, r->bytes, r->root, first + i,
				  (long long)buf[i], (long long)want, lo, hi);
			return 0;
		}
	}
	return 1;
}

/* The blocking call's result, or the non-blocking one's and its wait's. */
static int complete(struct coll_run *r, int rc, MPI_Request *req, const char *call)
{
	char what[64];

	if (!r->nonblocking)
		return mpi_ok(r->t, rc, call);
	snprintf(what, sizeof(what), "MPI_I%s", call + 4);
	if (!mpi_ok(r->t, rc, what))
		return 0;
	return mpi_ok(r->t, MPI_Wait(req, MPI_STATUS_IGNORE), "MPI_Wait");
}

/* Elements of vector collectives: rank i's share for rank j, 0 included. */
static size_t vcount(size_t elems, int i, int j)
{
	return elems * (size_t)((i + 2 * j) % 3 + 1) / 3;
}

/* The blocks of a vector collective's buffer, one per rank q of the
 * communicator, GAP elements apart: vcount(n, i, j) elements, with q in
 * place of whichever of i and j is -1. */
struct vlayout {
	int *counts, *displs;
	size_t total;		/* elements, gaps included */
};

static void vlayout_init(struct vlayout *v, struct coll_run *r, size_t n, int i, int j)
{
	int q;

	v->counts = xmalloc(sizeof(int) * (size_t)r->size);
	v->displs = xmalloc(sizeof(int) * (size_t)r->size);
	v->total = 0;
	for (q = 0; q < r->size; q++) {
		v->counts[q] = (int)vcount(n, i < 0 ? q : i, j < 0 ? q : j);
		v->displs[q] = (int)v->total;
		v->total += (size_t)v->counts[q] + GAP;
	}
}

static void vlayout_free(struct vlayout *v)
{
	free(v->counts);
	free(v->displs);
}

/* Every rank q's block of buf must hold q's elements from index first:
 * the blocks of v, each followed by an untouched gap, or without v n
 * elements each, back to back. */
static int check_blocks(struct coll_run *r, const uint32_t *buf, const struct vlayout *v,
			size_t n, size_t first, const char *what)
{
	int q;

	for (q = 0; q < r->size; q++) {
		size_t at = v ? (size_t)v->displs[q] : (size_t)q * n;
		size_t count = v ? (size_t)v->counts[q] : n;

		if (!check_block(r, buf + at, count, q, first, what) ||
		    (v && !check_gap(r, buf + at + count, GAP, what)))
			return 0;
	}
	return 1;
}

/* ---- the collectives ---- */

static void coll_barrier(struct coll_run *r)
{
	MPI_Request req;
	int rc = r->nonblocking ? MPI_Ibarrier(r->comm, &req) : MPI_Barrier(r->comm);

	complete(r, rc, &req, "MPI_Barrier");
}

static void coll_bcast(struct coll_run *r)
{
	size_t n = r->bytes / 4;
	uint32_t *buf = u32_alloc(n);
	MPI_Request req;
	int rc;

	if (r->rank == r->root)
		u32_values(buf, n, r->root, 0, r->salt);
	else
		u32_fill(buf, n, GAP_FILL);
	rc = r->nonblocking ? MPI_Ibcast(buf, (int)n, MPI_UINT32_T, r->root, r->comm, &req)
			    : MPI_Bcast(buf, (int)n, MPI_UINT32_T, r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Bcast"))
		check_block(r, buf, n, r->root, 0, "bcast");
	free(buf);
}

/* The collectives that move n elements per rank pair. */
enum move_kind { MOVE_GATHER, MOVE_SCATTER, MOVE_ALLGATHER, MOVE_ALLTOALL };

static void coll_move(struct coll_run *r)
{
	enum move_kind kind = (enum move_kind)r->variant;
	size_t n = r->bytes / 4, total = n * (size_t)r->size;
	/* Scatter and all-to-all senders send a block per rank: block q holds
	 * indices q*n.. of the sender's sequence (the root's for scatter). */
	bool spread = kind == MOVE_SCATTER || kind == MOVE_ALLTOALL;
	size_t scount = spread ? total : n, rcount = kind == MOVE_SCATTER ? n : total;
	uint32_t *send = u32_alloc(scount), *recv = u32_alloc(rcount);
	size_t first = spread ? (size_t)r->rank * n : 0;
	MPI_Request req;
	int rc;

	u32_values(send, scount, kind == MOVE_SCATTER ? r->root : r->rank, 0, r->salt);
	u32_fill(recv, rcount, GAP_FILL);
	switch (kind) {
	case MOVE_GATHER:
		rc = r->nonblocking ? MPI_Igather(send, (int)n, MPI_UINT32_T, recv, (int)n,
						  MPI_UINT32_T, r->root, r->comm, &req)
				    : MPI_Gather(send, (int)n, MPI_UINT32_T, recv, (int)n,
						 MPI_UINT32_T, r->root, r->comm);
		if (complete(r, rc, &req, "MPI_Gather") && r->rank == r->root)
			check_blocks(r, recv, NULL, n, first, "gather");
		break;
	case MOVE_SCATTER:
		rc = r->nonblocking ? MPI_Iscatter(send, (int)n, MPI_UINT32_T, recv, (int)n,
						   MPI_UINT32_T, r->root, r->comm, &req)
				    : MPI_Scatter(send, (int)n, MPI_UINT32_T, recv, (int)n,
						  MPI_UINT32_T, r->root, r->comm);
		if (complete(r, rc, &req, "MPI_Scatter"))
			check_block(r, recv, n, r->root, first, "scatter");
		break;
	default:
		if (kind == MOVE_ALLGATHER)
			rc = r->nonblocking ? MPI_Iallgather(send, (int)n, MPI_UINT32_T, recv, (int)n,
							     MPI_UINT32_T, r->comm, &req)
					    : MPI_Allgather(send, (int)n, MPI_UINT32_T, recv, (int)n,
							    MPI_UINT32_T, r->comm);
		else
			rc = r->nonblocking ? MPI_Ialltoall(send, (int)n, MPI_UINT32_T, recv, (int)n,
							    MPI_UINT32_T, r->comm, &req)
					    : MPI_Alltoall(send, (int)n, MPI_UINT32_T, recv, (int)n,
							   MPI_UINT32_T, r->comm);
		if (complete(r, rc, &req, kind == MOVE_ALLGATHER ? "MPI_Allgather" : "MPI_Alltoall"))
			check_blocks(r, recv, NULL, n, first,
				     kind == MOVE_ALLGATHER ? "allgather" : "alltoall");
		break;
	}
	free(send);
	free(recv);
}

/* gatherv (variant false: checked at the root) and allgatherv (true:
 * everywhere): vector blocks. */
static void coll_gatherv(struct coll_run *r)
{
	bool all = r->variant;
	size_t n = r->bytes / 4, mine = vcount(n, r->rank, all ? 2 : 0);
	const char *what = all ? "allgatherv" : "gatherv";
	struct vlayout v;
	uint32_t *send, *recv;
	MPI_Request req;
	int rc;

	vlayout_init(&v, r, n, -1, all ? 2 : 0);
	send = u32_alloc(mine);
	recv = u32_alloc(v.total);
	u32_values(send, mine, r->rank, 0, r->salt);
	u32_fill(recv, v.total, GAP_FILL);
	if (all)
		rc = r->nonblocking ? MPI_Iallgatherv(send, (int)mine, MPI_UINT32_T, recv, v.counts,
						      v.displs, MPI_UINT32_T, r->comm, &req)
				    : MPI_Allgatherv(send, (int)mine, MPI_UINT32_T, recv, v.counts,
						     v.displs, MPI_UINT32_T, r->comm);
	else
		rc = r->nonblocking ? MPI_Igatherv(send, (int)mine, MPI_UINT32_T, recv, v.counts,
						   v.displs, MPI_UINT32_T, r->root, r->comm, &req)
				    : MPI_Gatherv(send, (int)mine, MPI_UINT32_T, recv, v.counts,
						  v.displs, MPI_UINT32_T, r->root, r->comm);
	if (complete(r, rc, &req, all ? "MPI_Allgatherv" : "MPI_Gatherv") &&
	    (all || r->rank == r->root))
		check_blocks(r, recv, &v, n, 0, what);
	free(send);
	free(recv);
	vlayout_free(&v);
}

static void coll_scatterv(struct coll_run *r)
{
	size_t n = r->bytes / 4, mine = vcount(n, r->rank, 1);
	struct vlayout v;
	uint32_t *send, *recv;
	MPI_Request req;
	int rc;

	vlayout_init(&v, r, n, -1, 1);
	send = u32_alloc(v.total);
	recv = u32_alloc(mine + GAP);
	u32_values(send, v.total, r->root, 0, r->salt);
	u32_fill(recv, mine + GAP, GAP_FILL);
	rc = r->nonblocking ? MPI_Iscatterv(send, v.counts, v.displs, MPI_UINT32_T, recv,
					    (int)mine, MPI_UINT32_T, r->root, r->comm, &req)
			    : MPI_Scatterv(send, v.counts, v.displs, MPI_UINT32_T, recv,
					   (int)mine, MPI_UINT32_T, r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Scatterv") &&
	    check_block(r, recv, mine, r->root, (size_t)v.displs[r->rank], "scatterv"))
		check_gap(r, recv + mine, GAP, "scatterv (past the receive count)");
	free(send);
	free(recv);
	vlayout_free(&v);
}

static void coll_alltoallv(struct coll_run *r)
{
	size_t n = r->bytes / 4;
	struct vlayout sv, rv;
	uint32_t *send, *recv;
	MPI_Request req;
	int rc, q;

	vlayout_init(&sv, r, n, r->rank, -1);
	vlayout_init(&rv, r, n, -1, r->rank);
	send = u32_alloc(sv.total);
	recv = u32_alloc(rv.total);
	/* What rank i sends rank j starts at index j * n of i's sequence. */
	for (q = 0; q < r->size; q++)
		u32_values(send + sv.displs[q], (size_t)sv.counts[q], r->rank, (size_t)q * n,
			   r->salt);
	u32_fill(recv, rv.total, GAP_FILL);
	rc = r->nonblocking ? MPI_Ialltoallv(send, sv.counts, sv.displs, MPI_UINT32_T, recv,
					     rv.counts, rv.displs, MPI_UINT32_T, r->comm, &req)
			    : MPI_Alltoallv(send, sv.counts, sv.displs, MPI_UINT32_T, recv,
					    rv.counts, rv.displs, MPI_UINT32_T, r->comm);
	if (complete(r, rc, &req, "MPI_Alltoallv"))
		check_blocks(r, recv, &rv, n, (size_t)r->rank * n, "alltoallv");
	free(send);
	free(recv);
	vlayout_free(&sv);
	vlayout_free(&rv);
}

static int64_t *i64_values(struct coll_run *r, size_t count)
{
	int64_t *buf = xmalloc(count * sizeof(int64_t));
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = coll_rvalue(r->rank, i, r->salt);
	return buf;
}

static int64_t *i64_poisoned(size_t count)
{
	int64_t *buf = xmalloc(count * sizeof(int64_t));
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = -1;
	return buf;
}

/* The sums of n elements per rank whose results only the ranks and the
 * root differ in. */
enum sum_kind { SUM_REDUCE, SUM_BLOCK, SUM_SCAN, SUM_EXSCAN };

static void coll_sum(struct coll_run *r)
{
	enum sum_kind kind = (enum sum_kind)r->variant;
	size_t n = r->bytes / 8;
	int64_t *send = i64_values(r, kind == SUM_BLOCK ? n * (size_t)r->size : n);
	int64_t *recv = i64_poisoned(n);
	bool check = true;
	size_t first = 0;
	int hi = r->size - 1;	/* the last rank whose elements add up */
	const char *call, *what;
	MPI_Request req;
	int rc;

	switch (kind) {
	case SUM_REDUCE:
		rc = r->nonblocking ? MPI_Ireduce(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->root,
						  r->comm, &req)
				    : MPI_Reduce(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->root,
						 r->comm);
		call = "MPI_Reduce";
		what = "reduce";
		check = r->rank == r->root;
		break;
	case SUM_BLOCK:
		rc = r->nonblocking ? MPI_Ireduce_scatter_block(send, recv, (int)n, MPI_INT64_T,
								MPI_SUM, r->comm, &req)
				    : MPI_Reduce_scatter_block(send, recv, (int)n, MPI_INT64_T,
							       MPI_SUM, r->comm);
		call = "MPI_Reduce_scatter_block";
		what = "reduce_scatter_block";
		first = (size_t)r->rank * n;
		break;
	case SUM_SCAN:
		rc = r->nonblocking ? MPI_Iscan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm,
						&req)
				    : MPI_Scan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm);
		call = "MPI_Scan";
		what = "scan";
		hi = r->rank;
		break;
	default:
		rc = r->nonblocking ? MPI_Iexscan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm,
						  &req)
				    : MPI_Exscan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm);
		call = "MPI_Exscan";
		what = "exscan";
		/* Rank 0's buffer is undefined after an exclusive scan. */
		check = r->rank > 0;
		hi = r->rank - 1;
		break;
	}
	if (complete(r, rc, &req, call) && check)
		check_sum(r, recv, n, first, 0, hi, what);
	free(send);
	free(recv);
}

static void coll_allreduce(struct coll_run *r)
{
	size_t n = r->bytes / 8;
	int64_t *send = i64_values(r, n), *recv = i64_poisoned(n);
	MPI_Request req;
	int rc;

	/* Every other call in place, as applications often do. */
	if (r->salt % 2) {
		memcpy(recv, send, n * sizeof(int64_t));
		rc = r->nonblocking ? MPI_Iallreduce(MPI_IN_PLACE, recv, (int)n, MPI_INT64_T,
						     MPI_SUM, r->comm, &req)
				    : MPI_Allreduce(MPI_IN_PLACE, recv, (int)n, MPI_INT64_T,
						    MPI_SUM, r->comm);
	} else {
		rc = r->nonblocking ? MPI_Iallreduce(send, recv, (int)n, MPI_INT64_T, MPI_SUM,
						     r->comm, &req)
				    : MPI_Allreduce(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm);
	}
	if (complete(r, rc, &req, "MPI_Allreduce"))
		check_sum(r, recv, n, 0, 0, r->size - 1,
			  r->salt % 2 ? "allreduce (in place)" : "allreduce");
	free(send);
	free(recv);
}

static void coll_reduce_scatter(struct coll_run *r)
{
	size_t n = r->bytes / 8, total = 0, first = 0, mine;
	int *counts = xmalloc(sizeof(int) * (size_t)r->size);
	int64_t *send, *recv;
	MPI_Request req;
	int rc, q;

	for (q = 0; q < r->size; q++) {
		counts[q] = (int)vcount(n, q, 0);
		if (q < r->rank)
			first += (size_t)counts[q];
		total += (size_t)counts[q];
	}
	mine = (size_t)counts[r->rank];
	send = i64_values(r, total);
	recv = i64_poisoned(mine);
	rc = r->nonblocking ? MPI_Ireduce_scatter(send, recv, counts, MPI_INT64_T, MPI_SUM,
						  r->comm, &req)
			    : MPI_Reduce_scatter(send, recv, counts, MPI_INT64_T, MPI_SUM, r->comm);
	if (complete(r, rc, &req, "MPI_Reduce_scatter"))
		check_sum(r, recv, mine, first, 0, r->size - 1, "reduce_scatter");
	free(send);
	free(recv);
	free(counts);
}

const struct coll_kind coll_kinds[] = {
	{ "barrier", coll_barrier, 0, 0 },
	{ "bcast", coll_bcast, 1, 0 },
	{ "gather", coll_move, 1, MOVE_GATHER },
	{ "gatherv", coll_gatherv, 1, false },
	{ "scatter", coll_move, 1, MOVE_SCATTER },
	{ "scatterv", coll_scatterv, 1, 0 },
	{ "allgather", coll_move, 0, MOVE_ALLGATHER },
	{ "allgatherv", coll_gatherv, 0, true },
	{ "alltoall", coll_move, 0, MOVE_ALLTOALL },
	{ "alltoallv", coll_alltoallv, 0, 0 },
	{ "reduce", coll_sum, 1, SUM_REDUCE },
	{ "allreduce", coll_allreduce, 0, 0 },
	{ "reduce_scatter", coll_reduce_scatter, 0, 0 },
	{ "reduce_scatter_block", coll_sum, 0, SUM_BLOCK },
	{ "scan", coll_sum, 0, SUM_SCAN },
	{ "exscan", coll_sum, 0, SUM_EXSCAN },
};
const size_t coll_kind_count = sizeof(coll_kinds) / sizeof(coll_kinds[0]);
