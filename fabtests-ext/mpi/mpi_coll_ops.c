/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_coll: one function per collective, each run blocking or as its MPI_I*
 * form completed with MPI_Wait. Every element sent is a function of the
 * sending rank (in the communicator), its index and a salt that changes per
 * call, so every element received is checked against the value its sender
 * must have put there; gaps between the blocks of vector collectives are
 * preset and must stay untouched.
 */
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
	size_t i;
	int rc;

	if (r->rank == r->root) {
		for (i = 0; i < n; i++)
			buf[i] = coll_value(r->root, i, r->salt);
	} else {
		u32_fill(buf, n, GAP_FILL);
	}
	rc = r->nonblocking ? MPI_Ibcast(buf, (int)n, MPI_UINT32_T, r->root, r->comm, &req)
			    : MPI_Bcast(buf, (int)n, MPI_UINT32_T, r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Bcast"))
		check_block(r, buf, n, r->root, 0, "bcast");
	free(buf);
}

static void coll_gather(struct coll_run *r)
{
	size_t n = r->bytes / 4, total = n * (size_t)r->size;
	uint32_t *send = u32_alloc(n), *recv = u32_alloc(total);
	MPI_Request req;
	size_t i;
	int rc, q;

	for (i = 0; i < n; i++)
		send[i] = coll_value(r->rank, i, r->salt);
	u32_fill(recv, total, GAP_FILL);
	rc = r->nonblocking ? MPI_Igather(send, (int)n, MPI_UINT32_T, recv, (int)n, MPI_UINT32_T,
					  r->root, r->comm, &req)
			    : MPI_Gather(send, (int)n, MPI_UINT32_T, recv, (int)n, MPI_UINT32_T,
					 r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Gather") && r->rank == r->root)
		for (q = 0; q < r->size; q++)
			if (!check_block(r, recv + (size_t)q * n, n, q, 0, "gather"))
				break;
	free(send);
	free(recv);
}

static void coll_gatherv(struct coll_run *r)
{
	size_t n = r->bytes / 4, mine = vcount(n, r->rank, 0), total = 0;
	int *counts = xmalloc(sizeof(int) * (size_t)r->size);
	int *displs = xmalloc(sizeof(int) * (size_t)r->size);
	uint32_t *send, *recv;
	MPI_Request req;
	size_t i;
	int rc, q;

	for (q = 0; q < r->size; q++) {
		counts[q] = (int)vcount(n, q, 0);
		displs[q] = (int)total;
		total += (size_t)counts[q] + GAP;
	}
	send = u32_alloc(mine);
	recv = u32_alloc(total);
	for (i = 0; i < mine; i++)
		send[i] = coll_value(r->rank, i, r->salt);
	u32_fill(recv, total, GAP_FILL);
	rc = r->nonblocking ? MPI_Igatherv(send, (int)mine, MPI_UINT32_T, recv, counts, displs,
					   MPI_UINT32_T, r->root, r->comm, &req)
			    : MPI_Gatherv(send, (int)mine, MPI_UINT32_T, recv, counts, displs,
					  MPI_UINT32_T, r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Gatherv") && r->rank == r->root)
		for (q = 0; q < r->size; q++)
			if (!check_block(r, recv + displs[q], (size_t)counts[q], q, 0, "gatherv") ||
			    !check_gap(r, recv + displs[q] + counts[q], GAP, "gatherv"))
				break;
	free(send);
	free(recv);
	free(counts);
	free(displs);
}

static void coll_scatter(struct coll_run *r)
{
	size_t n = r->bytes / 4, total = n * (size_t)r->size;
	uint32_t *send = u32_alloc(total), *recv = u32_alloc(n);
	MPI_Request req;
	size_t i;
	int rc;

	/* The root's block for rank q holds indices q*n.. of its sequence. */
	for (i = 0; i < total; i++)
		send[i] = coll_value(r->root, i, r->salt);
	u32_fill(recv, n, GAP_FILL);
	rc = r->nonblocking ? MPI_Iscatter(send, (int)n, MPI_UINT32_T, recv, (int)n, MPI_UINT32_T,
					   r->root, r->comm, &req)
			    : MPI_Scatter(send, (int)n, MPI_UINT32_T, recv, (int)n, MPI_UINT32_T,
					  r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Scatter"))
		check_block(r, recv, n, r->root, (size_t)r->rank * n, "scatter");
	free(send);
	free(recv);
}

static void coll_scatterv(struct coll_run *r)
{
	size_t n = r->bytes / 4, mine = vcount(n, r->rank, 1), total = 0;
	int *counts = xmalloc(sizeof(int) * (size_t)r->size);
	int *displs = xmalloc(sizeof(int) * (size_t)r->size);
	uint32_t *send, *recv;
	MPI_Request req;
	size_t i;
	int rc, q;

	for (q = 0; q < r->size; q++) {
		counts[q] = (int)vcount(n, q, 1);
		displs[q] = (int)total;
		total += (size_t)counts[q] + GAP;
	}
	send = u32_alloc(total);
	recv = u32_alloc(mine + GAP);
	for (i = 0; i < total; i++)
		send[i] = coll_value(r->root, i, r->salt);
	u32_fill(recv, mine + GAP, GAP_FILL);
	rc = r->nonblocking ? MPI_Iscatterv(send, counts, displs, MPI_UINT32_T, recv, (int)mine,
					    MPI_UINT32_T, r->root, r->comm, &req)
			    : MPI_Scatterv(send, counts, displs, MPI_UINT32_T, recv, (int)mine,
					   MPI_UINT32_T, r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Scatterv") &&
	    check_block(r, recv, mine, r->root, (size_t)displs[r->rank], "scatterv"))
		check_gap(r, recv + mine, GAP, "scatterv (past the receive count)");
	free(send);
	free(recv);
	free(counts);
	free(displs);
}

static void coll_allgather(struct coll_run *r)
{
	size_t n = r->bytes / 4, total = n * (size_t)r->size;
	uint32_t *send = u32_alloc(n), *recv = u32_alloc(total);
	MPI_Request req;
	size_t i;
	int rc, q;

	for (i = 0; i < n; i++)
		send[i] = coll_value(r->rank, i, r->salt);
	u32_fill(recv, total, GAP_FILL);
	rc = r->nonblocking ? MPI_Iallgather(send, (int)n, MPI_UINT32_T, recv, (int)n,
					     MPI_UINT32_T, r->comm, &req)
			    : MPI_Allgather(send, (int)n, MPI_UINT32_T, recv, (int)n,
					    MPI_UINT32_T, r->comm);
	if (complete(r, rc, &req, "MPI_Allgather"))
		for (q = 0; q < r->size; q++)
			if (!check_block(r, recv + (size_t)q * n, n, q, 0, "allgather"))
				break;
	free(send);
	free(recv);
}

static void coll_allgatherv(struct coll_run *r)
{
	size_t n = r->bytes / 4, mine = vcount(n, r->rank, 2), total = 0;
	int *counts = xmalloc(sizeof(int) * (size_t)r->size);
	int *displs = xmalloc(sizeof(int) * (size_t)r->size);
	uint32_t *send, *recv;
	MPI_Request req;
	size_t i;
	int rc, q;

	for (q = 0; q < r->size; q++) {
		counts[q] = (int)vcount(n, q, 2);
		displs[q] = (int)total;
		total += (size_t)counts[q] + GAP;
	}
	send = u32_alloc(mine);
	recv = u32_alloc(total);
	for (i = 0; i < mine; i++)
		send[i] = coll_value(r->rank, i, r->salt);
	u32_fill(recv, total, GAP_FILL);
	rc = r->nonblocking ? MPI_Iallgatherv(send, (int)mine, MPI_UINT32_T, recv, counts, displs,
					      MPI_UINT32_T, r->comm, &req)
			    : MPI_Allgatherv(send, (int)mine, MPI_UINT32_T, recv, counts, displs,
					     MPI_UINT32_T, r->comm);
	if (complete(r, rc, &req, "MPI_Allgatherv"))
		for (q = 0; q < r->size; q++)
			if (!check_block(r, recv + displs[q], (size_t)counts[q], q, 0, "allgatherv") ||
			    !check_gap(r, recv + displs[q] + counts[q], GAP, "allgatherv"))
				break;
	free(send);
	free(recv);
	free(counts);
	free(displs);
}

static void coll_alltoall(struct coll_run *r)
{
	size_t n = r->bytes / 4, total = n * (size_t)r->size;
	uint32_t *send = u32_alloc(total), *recv = u32_alloc(total);
	MPI_Request req;
	size_t i;
	int rc, q;

	/* Block q of every sender goes to rank q: indices q*n.. of its
	 * sequence. */
	for (i = 0; i < total; i++)
		send[i] = coll_value(r->rank, i, r->salt);
	u32_fill(recv, total, GAP_FILL);
	rc = r->nonblocking ? MPI_Ialltoall(send, (int)n, MPI_UINT32_T, recv, (int)n,
					    MPI_UINT32_T, r->comm, &req)
			    : MPI_Alltoall(send, (int)n, MPI_UINT32_T, recv, (int)n,
					   MPI_UINT32_T, r->comm);
	if (complete(r, rc, &req, "MPI_Alltoall"))
		for (q = 0; q < r->size; q++)
			if (!check_block(r, recv + (size_t)q * n, n, q, (size_t)r->rank * n, "alltoall"))
				break;
	free(send);
	free(recv);
}

static void coll_alltoallv(struct coll_run *r)
{
	size_t n = r->bytes / 4, stotal = 0, rtotal = 0;
	size_t per = sizeof(int) * (size_t)r->size;
	int *scounts = xmalloc(per), *sdispls = xmalloc(per);
	int *rcounts = xmalloc(per), *rdispls = xmalloc(per);
	uint32_t *send, *recv;
	MPI_Request req;
	size_t i;
	int rc, q;

	for (q = 0; q < r->size; q++) {
		scounts[q] = (int)vcount(n, r->rank, q);
		sdispls[q] = (int)stotal;
		stotal += (size_t)scounts[q] + GAP;
		rcounts[q] = (int)vcount(n, q, r->rank);
		rdispls[q] = (int)rtotal;
		rtotal += (size_t)rcounts[q] + GAP;
	}
	send = u32_alloc(stotal);
	recv = u32_alloc(rtotal);
	/* What rank i sends rank j starts at index j * n of i's sequence. */
	for (q = 0; q < r->size; q++)
		for (i = 0; i < (size_t)scounts[q]; i++)
			send[(size_t)sdispls[q] + i] = coll_value(r->rank, (size_t)q * n + i, r->salt);
	u32_fill(recv, rtotal, GAP_FILL);
	rc = r->nonblocking ? MPI_Ialltoallv(send, scounts, sdispls, MPI_UINT32_T, recv, rcounts,
					     rdispls, MPI_UINT32_T, r->comm, &req)
			    : MPI_Alltoallv(send, scounts, sdispls, MPI_UINT32_T, recv, rcounts,
					    rdispls, MPI_UINT32_T, r->comm);
	if (complete(r, rc, &req, "MPI_Alltoallv"))
		for (q = 0; q < r->size; q++)
			if (!check_block(r, recv + rdispls[q], (size_t)rcounts[q], q,
					 (size_t)r->rank * n, "alltoallv") ||
			    !check_gap(r, recv + rdispls[q] + rcounts[q], GAP, "alltoallv"))
				break;
	free(send);
	free(recv);
	free(scounts);
	free(sdispls);
	free(rcounts);
	free(rdispls);
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

static void coll_reduce(struct coll_run *r)
{
	size_t n = r->bytes / 8;
	int64_t *send = i64_values(r, n), *recv = i64_poisoned(n);
	MPI_Request req;
	int rc;

	rc = r->nonblocking ? MPI_Ireduce(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->root,
					  r->comm, &req)
			    : MPI_Reduce(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->root, r->comm);
	if (complete(r, rc, &req, "MPI_Reduce") && r->rank == r->root)
		check_sum(r, recv, n, 0, 0, r->size - 1, "reduce");
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

static void coll_reduce_scatter_block(struct coll_run *r)
{
	size_t n = r->bytes / 8;
	int64_t *send = i64_values(r, n * (size_t)r->size), *recv = i64_poisoned(n);
	MPI_Request req;
	int rc;

	rc = r->nonblocking ? MPI_Ireduce_scatter_block(send, recv, (int)n, MPI_INT64_T, MPI_SUM,
							r->comm, &req)
			    : MPI_Reduce_scatter_block(send, recv, (int)n, MPI_INT64_T, MPI_SUM,
						       r->comm);
	if (complete(r, rc, &req, "MPI_Reduce_scatter_block"))
		check_sum(r, recv, n, (size_t)r->rank * n, 0, r->size - 1, "reduce_scatter_block");
	free(send);
	free(recv);
}

static void coll_scan(struct coll_run *r)
{
	size_t n = r->bytes / 8;
	int64_t *send = i64_values(r, n), *recv = i64_poisoned(n);
	MPI_Request req;
	int rc;

	rc = r->nonblocking ? MPI_Iscan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm, &req)
			    : MPI_Scan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm);
	if (complete(r, rc, &req, "MPI_Scan"))
		check_sum(r, recv, n, 0, 0, r->rank, "scan");
	free(send);
	free(recv);
}

static void coll_exscan(struct coll_run *r)
{
	size_t n = r->bytes / 8;
	int64_t *send = i64_values(r, n), *recv = i64_poisoned(n);
	MPI_Request req;
	int rc;

	rc = r->nonblocking ? MPI_Iexscan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm, &req)
			    : MPI_Exscan(send, recv, (int)n, MPI_INT64_T, MPI_SUM, r->comm);
	/* Rank 0's buffer is undefined after an exclusive scan. */
	if (complete(r, rc, &req, "MPI_Exscan") && r->rank > 0)
		check_sum(r, recv, n, 0, 0, r->rank - 1, "exscan");
	free(send);
	free(recv);
}

const struct coll_kind coll_kinds[] = {
	{ "barrier", coll_barrier, 0 },
	{ "bcast", coll_bcast, 1 },
	{ "gather", coll_gather, 1 },
	{ "gatherv", coll_gatherv, 1 },
	{ "scatter", coll_scatter, 1 },
	{ "scatterv", coll_scatterv, 1 },
	{ "allgather", coll_allgather, 0 },
	{ "allgatherv", coll_allgatherv, 0 },
	{ "alltoall", coll_alltoall, 0 },
	{ "alltoallv", coll_alltoallv, 0 },
	{ "reduce", coll_reduce, 1 },
	{ "allreduce", coll_allreduce, 0 },
	{ "reduce_scatter", coll_reduce_scatter, 0 },
	{ "reduce_scatter_block", coll_reduce_scatter_block, 0 },
	{ "scan", coll_scan, 0 },
	{ "exscan", coll_exscan, 0 },
};
const size_t coll_kind_count = sizeof(coll_kinds) / sizeof(coll_kinds[0]);
