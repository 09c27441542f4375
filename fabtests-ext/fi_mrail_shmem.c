/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_shmem: a SHMEM-style program over mrail, one process per rank.
 *
 *   fi_mrail_shmem -n N -r RANK -d DIR [-R ROUNDS] [-s BYTES] [-p PROV] [-a]
 *
 * Every rank registers a symmetric heap (the same key everywhere) with one
 * slot per rank and round parity. In round k each rank puts its block (a
 * pattern of its rank and k, BYTES long) into its own slot of the heap of
 * rank (RANK + d) mod N, d = 1 + k mod (N - 1) (never itself), with
 * FI_DELIVERY_COMPLETE (SHMEM's quiet), then enters fi_barrier (mrail's
 * counter-chained barrier) and, once it leaves, checks byte for byte the
 * slot rank (RANK - d) mod N wrote into its own heap this round. Slots alternate with the round's parity, so a fast
 * rank's next put cannot land on a slot still being checked: the barrier
 * after the check stands between them. At the end every rank checks that
 * its FI_REMOTE_WRITE counter counted exactly one put per round and that
 * no other slot was touched.
 *
 * The ranks meet through DIR (see ctl_meet). Prints "N of N checks passed";
 * exit 0 only if all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mrail_check.h"
#include "common/mrail_ctl.h"
#include "common/mrail_setup.h"

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define PROG "fi_mrail_shmem"
#define MAX_RANKS 64
#define HEAP_KEY 0x5eed
#define WAIT_MS 60000

static unsigned n_ranks, rank;
/* One CQ both ways; an EQ bound to the endpoint for the join. */
static struct mrail_setup fab;
static struct fid_cntr *rwrite_cntr;
static struct fid_mr *heap_mr;
static struct fid_av_set *av_set;
static struct fid_mc *mc;
static fi_addr_t addrs[MAX_RANKS], world;
static uint8_t *heap;
static size_t block;

static void open_objects(const char *prov, bool auto_progress)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT, .size = 256,
				      .wait_obj = FI_WAIT_UNSPEC };

	setup_open(&fab, ctl_getinfo(prov, FI_MSG | FI_RMA | FI_WRITE | FI_REMOTE_WRITE |
				     FI_RMA_EVENT | FI_COLLECTIVE, 0, auto_progress),
		   &cq_attr, SETUP_BIND_EQ);
	rwrite_cntr = setup_cntr(&fab, FI_REMOTE_WRITE, FI_WAIT_NONE);
	setup_enable(&fab);
}

/* The group first, then what the endpoint used. */
static void close_objects(void)
{
	struct fid *bound[] = { &heap_mr->fid };

	fi_close(&mc->fid);
	fi_close(&av_set->fid);
	setup_close(&fab, bound, 1);
}

/* Slot of writer w for round parity p, as an offset into the heap. */
static size_t slot(unsigned w, unsigned p)
{
	return ((size_t) p * n_ranks + w) * block;
}

/* How far round's puts go: never to the putter itself. */
static unsigned distance(unsigned round)
{
	return 1 + round % (n_ranks - 1);
}

static uint64_t seed(unsigned writer, unsigned round)
{
	return ((uint64_t) writer << 32) | round;
}

static void wait_one(void *context, const char *what)
{
	struct fi_cq_entry entry;
	struct fi_cq_err_entry err;
	ssize_t n;

	for (;;) {
		n = fi_cq_sread(fab.cq, &entry, 1, NULL, WAIT_MS);
		if (n == 1) {
			if (entry.op_context != context)
				ctl_die(what, EIO);
			return;
		}
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(fab.cq, &err, 0);
			ctl_die(what, err.err);
		}
		if (n != -FI_EAGAIN)
			ctl_die(what, (int) n);
	}
}

static void barrier(void)
{
	struct fi_context2 ctx;
	ssize_t ret;

	while ((ret = fi_barrier(fab.ep, world, &ctx)) == -FI_EAGAIN)
		(void) fi_cq_read(fab.cq, NULL, 0);
	if (ret)
		ctl_die("fi_barrier", (int) ret);
	wait_one(&ctx, "the barrier");
}

static void put(unsigned round, uint8_t *src)
{
	unsigned to = (rank + distance(round)) % n_ranks;
	struct iovec iov = { .iov_base = src, .iov_len = block };
	struct fi_rma_iov rma = { .addr = slot(rank, round % 2), .len = block,
				  .key = HEAP_KEY };
	struct fi_msg_rma msg = { .msg_iov = &iov, .iov_count = 1, .addr = addrs[to],
				  .rma_iov = &rma, .rma_iov_count = 1, .context = src };
	ssize_t ret;

	check_pattern_fill(src, block, seed(rank, round));
	while ((ret = fi_writemsg(fab.ep, &msg, FI_DELIVERY_COMPLETE | FI_COMPLETION)) ==
	       -FI_EAGAIN)
		(void) fi_cq_read(fab.cq, NULL, 0);
	if (ret)
		ctl_die("fi_writemsg", (int) ret);
	wait_one(src, "a put");		/* delivered: SHMEM's quiet */
}

int main(int argc, char **argv)
{
	const char *prov = "mrail", *dir = NULL;
	unsigned rounds = 20, round, from, w, p;
	bool auto_progress = false;
	uint8_t *src;
	size_t heap_len, at;
	int opt, ret;

	ctl_prog = PROG;
	block = 4096;
	while ((opt = getopt(argc, argv, "n:r:d:R:s:p:ah")) != -1) {
		switch (opt) {
		case 'n': n_ranks = (unsigned) atoi(optarg); break;
		case 'r': rank = (unsigned) atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'R': rounds = (unsigned) atoi(optarg); break;
		case 's': block = (size_t) atol(optarg); break;
		case 'p': prov = optarg; break;
		case 'a': auto_progress = true; break;
		default:
			fprintf(stderr, "usage: %s -n N -r RANK -d DIR [-R ROUNDS] "
				"[-s BYTES] [-p PROV] [-a]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n_ranks < 2 || n_ranks > MAX_RANKS || rank >= n_ranks || !dir || !rounds ||
	    !block || block > (1 << 24)) {
		fprintf(stderr, PROG ": -n 2..%d, -r below it, -d, -R > 0 and -s 1..16M "
			"are needed\n", MAX_RANKS);
		return 2;
	}
	heap_len = 2 * n_ranks * block;
	heap = calloc(1, heap_len);
	src = malloc(block);
	if (!heap || !src)
		ctl_die("allocating the heap", ENOMEM);
	open_objects(prov, auto_progress);
	ret = fi_mr_reg(fab.domain, heap, heap_len, FI_REMOTE_WRITE, 0, HEAP_KEY, 0,
			&heap_mr, NULL);
	if (ret)
		ctl_die("fi_mr_reg of the heap", ret);
	ctl_meet(dir, rank, n_ranks, fab.ep, fab.av, addrs);
	world = ctl_join_all(fab.ep, fab.av, fab.eq, fab.cq, addrs, n_ranks, &av_set, &mc);
	barrier();	/* every heap is registered before the first put */
	for (round = 0; round < rounds; round++) {
		put(round, src);
		barrier();
		from = (rank + n_ranks - distance(round)) % n_ranks;
		at = check_pattern_mismatch(heap + slot(from, round % 2), block,
					    seed(from, round));
		check(at == block, "rank %u round %u: rank %u's put %s", rank, round, from,
		      at == block ? "arrived intact" : "differs");
		/* Everyone has checked this parity before the round after next
		 * writes it again. */
	}
	barrier();
	check(fi_cntr_read(rwrite_cntr) == rounds, "rank %u: %" PRIu64 " remote writes "
	      "counted, %u puts made to it", rank, fi_cntr_read(rwrite_cntr), rounds);
	/* Only the slots the puts named hold anything. */
	for (p = 0; p < 2; p++) {
		for (w = 0; w < n_ranks; w++) {
			bool written = false;

			for (round = p; round < rounds; round += 2)
				written |= (rank + n_ranks - distance(round)) % n_ranks == w;
			if (written)
				continue;
			for (at = 0; at < block && !heap[slot(w, p) + at]; at++)
				;
			check(at == block, "rank %u: slot of rank %u, parity %u, untouched",
			      rank, w, p);
		}
	}
	close_objects();
	free(heap);
	free(src);
	printf(PROG ": %d of %d checks passed\n", check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
