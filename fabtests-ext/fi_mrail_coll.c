/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_coll: mrail's collectives (fi_av_set, fi_join_collective,
 * fi_barrier, fi_broadcast, fi_allreduce) across N processes.
 *
 * Every process of a run is started with the same -n N and -d DIR (a
 * directory all of them share: the emulated hosts share the filesystem)
 * and its own index -i 0..N-1. A process writes its mrail address to
 * DIR/addr.I, reads everyone's, inserts them in index order (so fi_addr I
 * is process I), makes an AV set of all of them and joins it.
 *
 * Barrier check: R barriers in a row; before each, process L (-L) sleeps
 * 200 ms. Each process writes, per barrier, the CLOCK_REALTIME time it
 * entered and the time the barrier completed to DIR/stamp.I. After a last
 * barrier every process reads every stamp file and checks that no process
 * left barrier k before the last process entered it.
 *
 * Broadcast and allreduce checks: values that depend on the process index,
 * the root and the round, compared element by element with what they
 * must be (sum, min, max, bor, band, bxor on integers; sum of integral
 * doubles; broadcast of int64 and double arrays from several roots).
 *
 * Processes sleep in fi_cq_sread and fi_eq_sread: they outnumber the cores.
 * Prints "fi_mrail_coll: X of Y checks passed"; exits 0 when all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "common/mrail_check.h"

#define MAX_PROCS 64
#define MAX_ROUNDS 64
#define WAIT_MS 30000
#define BULK_MSGS 8

struct state {
	int n, index, late, rounds;
	const char *dir;
	bool manual;
	/* -B: bulk traffic around the ring during the barriers. */
	size_t bulk;
	struct fid_cq *rx_cq;
	struct fid_cntr *send_cntr;
	uint8_t *sbuf, *rbuf;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_av_set *set;
	struct fid_mc *mc;
	fi_addr_t coll;
	fi_addr_t addrs[MAX_PROCS];
};

static void die(const char *what, int ret)
{
	fprintf(stderr, "fi_mrail_coll: %s: %s (%d)\n", what,
		fi_strerror(ret < 0 ? -ret : ret), ret);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void open_objects(struct state *s)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	if (!hints)
		die("fi_allocinfo", -FI_ENOMEM);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_COLLECTIVE;
	hints->fabric_attr->prov_name = strdup("mrail");
	hints->domain_attr->data_progress =
		s->manual ? FI_PROGRESS_MANUAL : FI_PROGRESS_AUTO;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s->info);
	fi_freeinfo(hints);
	if (ret)
		die("fi_getinfo (FI_COLLECTIVE from mrail)", ret);
	check(s->info->caps & FI_COLLECTIVE, "fi_getinfo offers FI_COLLECTIVE when asked");
	if ((ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL)) ||
	    (ret = fi_domain(s->fabric, s->info, &s->domain, NULL)) ||
	    (ret = fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL)) ||
	    (ret = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL)) ||
	    (ret = fi_av_open(s->domain, &av_attr, &s->av, NULL)) ||
	    (ret = fi_endpoint(s->domain, s->info, &s->ep, NULL)) ||
	    (ret = fi_ep_bind(s->ep, &s->eq->fid, 0)) ||
	    (ret = fi_ep_bind(s->ep, &s->av->fid, 0)))
		die("opening the objects", ret);
	if (!s->bulk) {
		ret = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	} else {
		/* The sends complete on a counter, the receives on a CQ of
		 * their own: the transmit CQ gets the collectives only. */
		struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
						  .wait_obj = FI_WAIT_UNSPEC };

		if ((ret = fi_cq_open(s->domain, &cq_attr, &s->rx_cq, NULL)) ||
		    (ret = fi_cntr_open(s->domain, &cntr_attr, &s->send_cntr, NULL)) ||
		    (ret = fi_ep_bind(s->ep, &s->cq->fid,
				      FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) ||
		    (ret = fi_ep_bind(s->ep, &s->rx_cq->fid, FI_RECV)) ||
		    (ret = fi_ep_bind(s->ep, &s->send_cntr->fid, FI_SEND)))
			die("opening the bulk objects", ret);
	}
	if (ret ||
	    (ret = fi_enable(s->ep)))
		die("opening the objects", ret);
}

/* Publishes our address, then waits for everyone's and inserts them. */
static void exchange_addresses(struct state *s)
{
	char path[4096], tmp[4200], name[256];
	size_t len = sizeof(name);
	int i, ret, waited;
	FILE *f;

	ret = fi_getname(&s->ep->fid, name, &len);
	if (ret)
		die("fi_getname", ret);
	snprintf(path, sizeof(path), "%s/addr.%d", s->dir, s->index);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fwrite(name, 1, len, f) != len || fclose(f) || rename(tmp, path))
		die("writing our address", -FI_EIO);
	for (i = 0; i < s->n; i++) {
		snprintf(path, sizeof(path), "%s/addr.%d", s->dir, i);
		for (waited = 0; !(f = fopen(path, "r")); waited += 10) {
			if (waited > 60000)
				die("waiting for the other processes' addresses", -FI_ETIMEDOUT);
			usleep(10000);
		}
		len = fread(name, 1, sizeof(name), f);
		fclose(f);
		ret = fi_av_insert(s->av, name, 1, &s->addrs[i], 0, NULL);
		if (ret != 1)
			die("fi_av_insert", ret < 0 ? ret : -FI_EINVAL);
		if (s->addrs[i] != (fi_addr_t) i)
			die("fi_av_insert gave an unexpected index", -FI_EINVAL);
	}
}

static void join(struct state *s)
{
	struct fi_av_set_attr attr = {
		.count = (size_t) s->n, .start_addr = 0,
		.end_addr = (fi_addr_t) s->n - 1, .stride = 1,
	};
	struct fi_eq_entry entry;
	struct fid_av_set *half;
	fi_addr_t set_addr;
	uint32_t event = 0;
	ssize_t ret;
	int waited;

	ret = fi_av_set(s->av, &attr, &s->set, NULL);
	if (ret)
		die("fi_av_set", (int) ret);
	/* The set operations, on a second set: the evens, then all. */
	attr.stride = 2;
	attr.count = 0;
	ret = fi_av_set(s->av, &attr, &half, NULL);
	check(!ret, "fi_av_set with stride 2: %zd", ret);
	if (!ret) {
		check(fi_av_set_insert(half, 0) == -FI_EINVAL,
		      "fi_av_set_insert of a member refused");
		check(fi_av_set_diff(half, s->set) == 0 &&
		      fi_av_set_insert(half, 0) == 0,
		      "fi_av_set_diff empties it, insert refills");
		check(fi_av_set_union(half, s->set) == 0 &&
		      fi_av_set_intersect(half, s->set) == 0,
		      "fi_av_set_union and intersect");
		check(fi_av_set_remove(half, (fi_addr_t) s->n) == -FI_EINVAL,
		      "fi_av_set_remove of a non-member refused");
		fi_close(&half->fid);
	}
	ret = fi_av_set_addr(s->set, &set_addr);
	if (ret)
		die("fi_av_set_addr", (int) ret);
	ret = fi_join_collective(s->ep, set_addr, s->set, 0, &s->mc, &s->mc);
	if (ret)
		die("fi_join_collective", (int) ret);
	if (s->manual) {
		/* Manual progress: the EQ does not drive the endpoint, a CQ
		 * read does (fi_domain(3)); sleep between the two. */
		for (waited = 0; waited < WAIT_MS * 10; waited++) {
			fi_cq_read(s->cq, NULL, 0);
			ret = fi_eq_read(s->eq, &event, &entry, sizeof(entry), 0);
			if (ret != -FI_EAGAIN)
				break;
			usleep(100);
		}
	} else {
		ret = fi_eq_sread(s->eq, &event, &entry, sizeof(entry), WAIT_MS, 0);
	}
	check(ret == sizeof(entry) && event == FI_JOIN_COMPLETE &&
	      entry.fid == &s->mc->fid && entry.context == &s->mc,
	      "FI_JOIN_COMPLETE on the EQ (ret %zd, event %u)", ret, event);
	if (ret != sizeof(entry))
		die("fi_eq_sread (join)", (int) ret);
	s->coll = fi_mc_addr(s->mc);
}

/* Waits for the one completion of an operation with context ctx. */
static bool wait_done(struct state *s, void *ctx, const char *what)
{
	struct fi_cq_data_entry entry;
	struct fi_cq_err_entry err = { 0 };
	ssize_t ret;

	do {
		ret = fi_cq_sread(s->cq, &entry, 1, NULL, WAIT_MS);
	} while (ret == -FI_EAGAIN && s->manual);
	if (ret == -FI_EAVAIL) {
		fi_cq_readerr(s->cq, &err, 0);
		check(false, "%s completed with error %s", what, fi_strerror(err.err));
		return false;
	}
	check(ret == 1 && entry.op_context == ctx &&
	      (entry.flags & FI_COLLECTIVE),
	      "%s: one completion with its context and FI_COLLECTIVE (ret %zd)",
	      what, ret);
	return ret == 1;
}

static void barrier(struct state *s, const char *what)
{
	ssize_t ret;
	int ctx;

	while ((ret = s->bulk ? fi_barrier2(s->ep, s->coll, FI_COMPLETION, &ctx) :
		      fi_barrier(s->ep, s->coll, &ctx)) == -FI_EAGAIN)
		usleep(100);
	if (ret)
		die("fi_barrier", (int) ret);
	wait_done(s, &ctx, what);
}

static uint8_t bulk_byte(int from, int k, size_t j)
{
	return (uint8_t) (from * 131 + k * 7 + j * 13 + (j >> 8));
}

/* Rendezvous-sized messages around the ring (to index + 1, from index -
 * 1), posted before the barriers and checked after them. */
static void bulk_start(struct state *s)
{
	int k, right = (s->index + 1) % s->n, left = (s->index + s->n - 1) % s->n;
	size_t j;
	ssize_t ret;

	s->sbuf = malloc(s->bulk * BULK_MSGS);
	s->rbuf = calloc(BULK_MSGS, s->bulk);
	if (!s->sbuf || !s->rbuf)
		die("bulk buffers", -FI_ENOMEM);
	for (k = 0; k < BULK_MSGS; k++) {
		for (j = 0; j < s->bulk; j++)
			s->sbuf[k * s->bulk + j] = bulk_byte(s->index, k, j);
		ret = fi_recv(s->ep, s->rbuf + k * s->bulk, s->bulk, NULL,
			      s->addrs[left], NULL);
		if (ret)
			die("fi_recv (bulk)", (int) ret);
	}
	for (k = 0; k < BULK_MSGS; k++) {
		while ((ret = fi_send(s->ep, s->sbuf + k * s->bulk, s->bulk, NULL,
				      s->addrs[right], NULL)) == -FI_EAGAIN)
			usleep(100);
		if (ret)
			die("fi_send (bulk)", (int) ret);
	}
}

static void bulk_finish(struct state *s)
{
	struct fi_cq_data_entry entry;
	int k, got = 0, bad = 0, left = (s->index + s->n - 1) % s->n;
	size_t j;
	ssize_t ret;

	while (got < BULK_MSGS) {
		ret = fi_cq_sread(s->rx_cq, &entry, 1, NULL, WAIT_MS);
		if (ret != 1)
			break;
		got++;
	}
	ret = fi_cntr_wait(s->send_cntr, BULK_MSGS, WAIT_MS);
	check(got == BULK_MSGS && !ret, "%d bulk messages of %zu bytes received "
	      "(%d) and sent (%zd) during the barriers", BULK_MSGS, s->bulk, got, ret);
	for (k = 0; k < BULK_MSGS; k++)
		for (j = 0; j < s->bulk; j++)
			bad += s->rbuf[k * s->bulk + j] != bulk_byte(left, k, j);
	check(!bad, "bulk data from process %d: %d wrong bytes", left, bad);
	free(s->sbuf);
	free(s->rbuf);
}

static void test_barriers(struct state *s)
{
	uint64_t enter[MAX_ROUNDS], leave[MAX_ROUNDS];
	uint64_t last_enter[MAX_ROUNDS] = { 0 }, first_leave[MAX_ROUNDS];
	char path[4096];
	int r, i, k, early = 0;
	FILE *f;

	for (r = 0; r < s->rounds; r++) {
		if (s->index == s->late)
			usleep(200000);
		enter[r] = now_ns();
		barrier(s, "fi_barrier");
		leave[r] = now_ns();
	}
	snprintf(path, sizeof(path), "%s/stamp.%d", s->dir, s->index);
	f = fopen(path, "w");
	if (!f)
		die("writing our stamps", -FI_EIO);
	for (r = 0; r < s->rounds; r++)
		fprintf(f, "%d %" PRIu64 " %" PRIu64 "\n", r, enter[r], leave[r]);
	fclose(f);
	/* Everyone's stamps are written once everyone passed this one. */
	barrier(s, "fi_barrier after the stamps");
	for (r = 0; r < s->rounds; r++)
		first_leave[r] = UINT64_MAX;
	for (i = 0; i < s->n; i++) {
		uint64_t e, l;

		snprintf(path, sizeof(path), "%s/stamp.%d", s->dir, i);
		f = fopen(path, "r");
		check(f != NULL, "process %d's stamps are there", i);
		if (!f)
			continue;
		while (fscanf(f, "%d %" SCNu64 " %" SCNu64, &k, &e, &l) == 3) {
			if (k < 0 || k >= s->rounds)
				continue;
			if (e > last_enter[k])
				last_enter[k] = e;
			if (l < first_leave[k])
				first_leave[k] = l;
		}
		fclose(f);
	}
	for (r = 0; r < s->rounds; r++) {
		if (first_leave[r] < last_enter[r]) {
			early++;
			printf("barrier %d: a process left %.3f ms before the "
			       "last one entered\n", r,
			       (double) (last_enter[r] - first_leave[r]) / 1e6);
		}
	}
	check(!early, "%d barriers over %d processes, process %d late by 200 ms: "
	      "none left before the last entered (%d early)", s->rounds, s->n,
	      s->late, early);
	printf("fi_mrail_coll: process %d waited %.1f ms in barrier 0, %.1f ms "
	       "in barrier %d (late %d)\n", s->index,
	       (double) (leave[0] - enter[0]) / 1e6,
	       (double) (leave[s->rounds - 1] - enter[s->rounds - 1]) / 1e6,
	       s->rounds - 1, s->late);
}

/* Process i's value of element e in round r. */
static int64_t value(int i, int e, int r)
{
	return (int64_t) (i + 1) * 1000 + e * 37 - r * 5 + (i % 3 ? -i : i * i);
}

static void test_broadcast(struct state *s)
{
	int64_t ibuf[64];
	double dbuf[16];
	int round, root, e, bad, ctx;
	ssize_t ret;

	for (round = 0; round < 4; round++) {
		root = (round * 5 + 1) % s->n;
		for (e = 0; e < 64; e++)
			ibuf[e] = s->index == root ? value(root, e, round) : -1;
		while ((ret = fi_broadcast(s->ep, ibuf, 64, NULL, s->coll,
					   s->addrs[root], FI_INT64, FI_COMPLETION, &ctx)) == -FI_EAGAIN)
			usleep(100);
		check(!ret, "fi_broadcast int64 from %d: %zd", root, ret);
		if (!ret && wait_done(s, &ctx, "fi_broadcast")) {
			for (bad = 0, e = 0; e < 64; e++)
				bad += ibuf[e] != value(root, e, round);
			check(!bad, "broadcast of 64 int64 from %d: %d wrong", root, bad);
		}
		for (e = 0; e < 16; e++)
			dbuf[e] = s->index == root ? (double) value(root, e, round) / 4 : 0;
		ret = fi_broadcast(s->ep, dbuf, 16, NULL, s->coll, s->addrs[root],
				   FI_DOUBLE, FI_COMPLETION, &ctx);
		check(!ret, "fi_broadcast double from %d: %zd", root, ret);
		if (!ret && wait_done(s, &ctx, "fi_broadcast")) {
			for (bad = 0, e = 0; e < 16; e++)
				bad += dbuf[e] != (double) value(root, e, round) / 4;
			check(!bad, "broadcast of 16 doubles from %d: %d wrong", root, bad);
		}
	}
}

static void allreduce_i64(struct state *s, enum fi_op op, const char *name,
			  int round)
{
	int64_t in[32], out[32], want[32];
	int i, e, bad = 0, ctx;
	ssize_t ret;

	for (e = 0; e < 32; e++) {
		in[e] = value(s->index, e, round);
		out[e] = 0x5a5a;
		for (i = 0; i < s->n; i++) {
			int64_t v = value(i, e, round);

			if (!i)
				want[e] = v;
			else if (op == FI_SUM)
				want[e] += v;
			else if (op == FI_MIN)
				want[e] = v < want[e] ? v : want[e];
			else if (op == FI_MAX)
				want[e] = v > want[e] ? v : want[e];
			else if (op == FI_BOR)
				want[e] |= v;
			else if (op == FI_BAND)
				want[e] &= v;
			else
				want[e] ^= v;
		}
	}
	while ((ret = fi_allreduce(s->ep, in, 32, NULL, out, NULL, s->coll,
				   FI_INT64, op, FI_COMPLETION, &ctx)) == -FI_EAGAIN)
		usleep(100);
	check(!ret, "fi_allreduce %s: %zd", name, ret);
	if (ret || !wait_done(s, &ctx, "fi_allreduce"))
		return;
	for (e = 0; e < 32; e++)
		bad += out[e] != want[e];
	check(!bad, "allreduce %s of 32 int64 over %d: %d wrong", name, s->n, bad);
}

static void test_allreduce(struct state *s)
{
	double in[8], out[8], want[8];
	int e, i, bad = 0, ctx, round;
	struct fi_collective_attr attr = { .op = FI_SUM, .datatype = FI_DOUBLE };
	ssize_t ret;

	check(fi_query_collective(s->domain, FI_ALLREDUCE, &attr, 0) == 0 &&
	      attr.datatype_attr.count >= 8, "fi_query_collective: allreduce sum double");
	attr.op = FI_CSWAP;
	check(fi_query_collective(s->domain, FI_ALLREDUCE, &attr, 0) == -FI_EOPNOTSUPP,
	      "fi_query_collective: no allreduce cswap");
	check(fi_query_collective(s->domain, FI_ALLTOALL, &attr, 0) == -FI_ENOSYS,
	      "fi_query_collective: no alltoall");
	for (round = 0; round < 2; round++) {
		allreduce_i64(s, FI_SUM, "sum", round);
		allreduce_i64(s, FI_MIN, "min", round);
		allreduce_i64(s, FI_MAX, "max", round);
		allreduce_i64(s, FI_BOR, "bor", round);
		allreduce_i64(s, FI_BAND, "band", round);
		allreduce_i64(s, FI_BXOR, "bxor", round);
	}
	for (e = 0; e < 8; e++) {
		in[e] = (double) value(s->index, e, 9);
		for (want[e] = 0, i = 0; i < s->n; i++)
			want[e] += (double) value(i, e, 9);
	}
	ret = fi_allreduce(s->ep, in, 8, NULL, out, NULL, s->coll, FI_DOUBLE,
			   FI_SUM, FI_COMPLETION, &ctx);
	check(!ret, "fi_allreduce sum double: %zd", ret);
	if (!ret && wait_done(s, &ctx, "fi_allreduce")) {
		for (e = 0; e < 8; e++)
			bad += out[e] != want[e];
		check(!bad, "allreduce sum of 8 doubles: %d wrong", bad);
	}
	ret = fi_allreduce(s->ep, in, 8, NULL, out, NULL, s->coll, FI_DOUBLE,
			   FI_BXOR, 0, &ctx);
	check(ret == -FI_EOPNOTSUPP, "fi_allreduce bxor on doubles refused: %zd", ret);
	ret = fi_allreduce(s->ep, in, 100000, NULL, out, NULL, s->coll, FI_DOUBLE,
			   FI_SUM, 0, &ctx);
	check(ret == -FI_EOPNOTSUPP, "fi_allreduce of too many elements refused: %zd", ret);
	check(fi_barrier(s->ep, 12345, &ctx) == -FI_EINVAL,
	      "fi_barrier on an address that is no group refused");
}

int main(int argc, char **argv)
{
	struct state s = { .late = 0, .rounds = 5 };
	int opt;

	while ((opt = getopt(argc, argv, "n:i:d:L:R:B:mv")) != -1) {
		switch (opt) {
		case 'n': s.n = atoi(optarg); break;
		case 'i': s.index = atoi(optarg); break;
		case 'd': s.dir = optarg; break;
		case 'L': s.late = atoi(optarg); break;
		case 'R': s.rounds = atoi(optarg); break;
		case 'm': s.manual = true; break;
		case 'B': s.bulk = strtoul(optarg, NULL, 0) << 10; break;
		case 'v': check_verbose = true; break;
		default:
			fprintf(stderr, "usage: %s -n N -i INDEX -d DIR [-L LATE] "
				"[-R ROUNDS] [-B KIB (bulk traffic)] [-m (manual progress)] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (s.n < 1 || s.n > MAX_PROCS || s.index < 0 || s.index >= s.n ||
	    !s.dir || s.late < 0 || s.late >= s.n || s.rounds < 1 ||
	    s.rounds > MAX_ROUNDS) {
		fprintf(stderr, "fi_mrail_coll: need -n 1..%d, -i 0..N-1, -d DIR, "
			"-L 0..N-1, -R 1..%d\n", MAX_PROCS, MAX_ROUNDS);
		return 2;
	}
	open_objects(&s);
	exchange_addresses(&s);
	join(&s);
	if (s.bulk && s.n > 1)
		bulk_start(&s);
	test_barriers(&s);
	if (s.bulk && s.n > 1)
		bulk_finish(&s);
	test_broadcast(&s);
	test_allreduce(&s);
	barrier(&s, "the last fi_barrier");
	fi_close(&s.mc->fid);
	fi_close(&s.set->fid);
	fi_close(&s.ep->fid);
	fi_close(&s.av->fid);
	fi_close(&s.cq->fid);
	if (s.bulk) {
		fi_close(&s.rx_cq->fid);
		fi_close(&s.send_cntr->fid);
	}
	fi_close(&s.eq->fid);
	fi_close(&s.domain->fid);
	fi_close(&s.fabric->fid);
	fi_freeinfo(s.info);
	printf("fi_mrail_coll: %d of %d checks passed\n",
	       check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
