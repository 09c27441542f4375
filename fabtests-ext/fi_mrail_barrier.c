/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_barrier: barrier benchmark, one process per rank.
 *
 *   fi_mrail_barrier -n N -r RANK -d DIR [-m offload|host] [-t lat|overlap|skew]
 *                    [-A ALG] [-i ITERS] [-p PROV] [-a]
 *
 * N processes, started by a launcher (ci/bench-barrier) on emulated hosts
 * of one machine, meet through DIR, a directory they all see: each writes
 * its endpoint name to DIR/name.RANK and inserts everyone's, in rank
 * order. Timestamps that ranks compare (the skew test) go through a file
 * all of them map, DIR/clock; CLOCK_MONOTONIC is the one clock of the
 * machine.
 *
 * Modes:
 *   offload  fi_barrier on a collective joined over all N ranks (mrail runs
 *            the algorithm of FI_MRAIL_BARRIER itself, as counter-chained
 *            triggered operations; with -a its progress thread completes it
 *            without the application). With -p 'tcp;ofi_rxm', libfabric's
 *            own collective barrier for reference.
 *   host     the same algorithm (-A, as FI_MRAIL_BARRIER: dissemination,
 *            pairwise, gather[:K]) done by the application: zero-byte
 *            tagged sends and receives, step after step.
 * Every wait sleeps in fi_cq_sread, never spins: the ranks outnumber the
 * cores.
 *
 * Tests:
 *   lat      ITERS barriers after 10 untimed ones: mean microseconds each.
 *   overlap  each iteration: start the barrier, compute for 1 ms without
 *            any libfabric call (-c spin: on the clock, the default; -c
 *            sleep: asleep, work done off this core), then wait for it.
 *            Prints the mean time beyond the computation (the barrier time
 *            left exposed). host mode can only send its first step before
 *            computing.
 *   skew     each iteration: a barrier to line up, then rank 0 computes 1 ms
 *            before it enters; the others enter at once. Every other rank
 *            prints the mean time from rank 0's entry to its own exit.
 * Each rank prints one line "fi_mrail_barrier: rank R test T mode M N n
 * value V us" (rank 0 prints -1 for skew), and for lat a second one,
 * "... switches S per barrier": the context switches of the process, all
 * its threads, per timed barrier. Exit 0 on success.
 *
 *   fi_mrail_barrier -F N:US,N:US,...
 *
 * fits the model of Yu et al. (2003, section 8),
 * T = T_init + (ceil(log2 N) - 1) * T_trig + T_adj, to the samples by
 * least squares (core/barrier_model.c) and prints the intercept
 * T_init + T_adj, the slope T_trig, r^2 and T at N = 1024.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "barrier_model.h"
#include "common/mrail_ctl.h"
#include "common/mrail_setup.h"

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define PROG "fi_mrail_barrier"
#define MAX_RANKS 64
#define WARMUP 10
#define COMPUTE_NS 1000000ULL
#define WAIT_MS 60000
/* Host-driven barrier tags: this bit, the barrier's epoch, the step. */
#define HOST_TAG_BIT (1ULL << 62)

static uint32_t n_ranks, rank;
static const char *dir;
static bool auto_progress, offload = true;
/* One CQ both ways; an EQ, bound to the endpoint for offload's joins. */
static struct mrail_setup fab;
static fi_addr_t addrs[MAX_RANKS];

/* offload */
static struct fid_av_set *av_set;
static struct fid_mc *mc;
static fi_addr_t coll_addr;

/* host */
static struct mrail_barrier_schedule sched;
static uint64_t epoch;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static bool compute_sleeps;	/* -c sleep */

/*
 * The computation, with no libfabric call: spinning on the clock for ns
 * (-c spin, the default), or asleep for ns (-c sleep: work done away from
 * this core, which leaves the core to whoever needs it; with more processes
 * than cores, spinning ones also measure how the scheduler shares them).
 */
static void compute(uint64_t ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long) ns };
	uint64_t end = now_ns() + ns;

	if (compute_sleeps) {
		nanosleep(&ts, NULL);
		return;
	}
	while (now_ns() < end)
		;
}

static void open_objects(const char *prov)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *info;

	/* Other providers (tcp;ofi_rxm for reference) want the usual modes. */
	info = ctl_getinfo(prov, FI_MSG | FI_TAGGED | (offload ? FI_COLLECTIVE : 0),
			   strcmp(prov, "mrail") ? FI_MR_LOCAL | FI_MR_VIRT_ADDR |
			   FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT : 0,
			   auto_progress);
	setup_open(&fab, info, &cq_attr, offload ? SETUP_BIND_EQ : SETUP_EQ);
	setup_enable(&fab);
}

/* Sleeps in fi_cq_sread for one completion; fatal on error or timeout. */
static void cq_wait(struct fi_cq_tagged_entry *entry)
{
	struct fi_cq_err_entry err;
	uint64_t deadline = now_ns() + (uint64_t) WAIT_MS * 1000000ULL;
	ssize_t n;

	for (;;) {
		n = fi_cq_sread(fab.cq, entry, 1, NULL, 100);
		if (n == 1)
			return;
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(fab.cq, &err, 0);
			ctl_die("a barrier operation failed", err.err);
		}
		if (n != -FI_EAGAIN && n != -FI_ETIMEDOUT)
			ctl_die("fi_cq_sread", (int) n);
		if (now_ns() > deadline)
			ctl_die("a barrier did not complete", ETIMEDOUT);
	}
}

/* ---- offload: fi_barrier ---- */

static void offload_start(struct fi_context2 *ctx)
{
	ssize_t ret;

	while ((ret = fi_barrier(fab.ep, coll_addr, ctx)) == -FI_EAGAIN)
		(void) fi_cq_read(fab.cq, NULL, 0);
	if (ret)
		ctl_die("fi_barrier", (int) ret);
}

static void offload_finish(struct fi_context2 *ctx)
{
	struct fi_cq_tagged_entry entry;

	cq_wait(&entry);
	if (entry.op_context != ctx)
		ctl_die("a completion that is not the barrier's", EIO);
}

/* ---- host: the same schedule with tagged messages ---- */

struct host_barrier {
	struct fi_context2 recv_ctx[MRAIL_BARRIER_MAX_STEPS * MRAIL_BARRIER_MAX_DEGREE];
	struct fi_context2 send_ctx[MRAIL_BARRIER_MAX_STEPS * MRAIL_BARRIER_MAX_DEGREE];
	uint32_t arrived[MRAIL_BARRIER_MAX_STEPS];
	uint32_t sends_out;
	uint32_t step;		/* the next step to send */
};

static uint32_t arrivals(uint32_t k)
{
	return sched.steps[k].wait_count - (k ? 1 : 0);
}

static uint64_t host_tag(uint64_t e, uint32_t step)
{
	return HOST_TAG_BIT | (e << 8) | step;
}

/* Sends every step whose arrivals are all in, in order. */
static void host_advance(struct host_barrier *hb)
{
	const struct mrail_barrier_step *st;
	uint32_t i;
	ssize_t ret;

	while (hb->step < sched.n_steps && hb->arrived[hb->step] == arrivals(hb->step)) {
		st = &sched.steps[hb->step];
		for (i = 0; i < st->n_sends; i++) {
			while ((ret = fi_tsend(fab.ep, NULL, 0, NULL, addrs[st->sends[i].peer],
					       host_tag(epoch, st->sends[i].counter),
					       &hb->send_ctx[hb->sends_out])) == -FI_EAGAIN)
				(void) fi_cq_read(fab.cq, NULL, 0);
			if (ret)
				ctl_die("fi_tsend", (int) ret);
			hb->sends_out++;
		}
		hb->step++;
	}
}

static void host_start(struct host_barrier *hb)
{
	uint32_t k, i, posted = 0;
	ssize_t ret;

	memset(hb, 0, sizeof(*hb));
	for (k = 0; k < sched.n_steps; k++) {
		for (i = 0; i < arrivals(k); i++) {
			ret = fi_trecv(fab.ep, NULL, 0, NULL, FI_ADDR_UNSPEC, host_tag(epoch, k),
				       0, &hb->recv_ctx[posted++]);
			if (ret)
				ctl_die("fi_trecv", (int) ret);
		}
	}
	host_advance(hb);
}

static void host_finish(struct host_barrier *hb)
{
	struct fi_cq_tagged_entry entry;
	uint32_t recvs = 0, sends = 0, k, want = 0;

	for (k = 0; k < sched.n_steps; k++)
		want += arrivals(k);
	while (hb->step < sched.n_steps || recvs < want || sends < hb->sends_out) {
		cq_wait(&entry);
		if (entry.flags & FI_RECV) {
			recvs++;
			hb->arrived[entry.tag & 0xff]++;
			host_advance(hb);
		} else {
			sends++;
		}
	}
	epoch++;
}

/* ---- one barrier, either way ---- */

static struct host_barrier hb;
static struct fi_context2 barrier_ctx;

static void barrier_start(void)
{
	if (offload)
		offload_start(&barrier_ctx);
	else
		host_start(&hb);
}

static void barrier_finish(void)
{
	if (offload)
		offload_finish(&barrier_ctx);
	else
		host_finish(&hb);
}

static void barrier(void)
{
	barrier_start();
	barrier_finish();
}

/* ---- tests ---- */

/* Context switches of the whole process (all its threads) so far. */
static uint64_t context_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		ctl_die("getrusage", errno);
	return (uint64_t) ru.ru_nvcsw + (uint64_t) ru.ru_nivcsw;
}

/* lat: the process's context switches per timed barrier, the wake-ups a
 * sleeping barrier costs (each one is microseconds of its latency). */
static double lat_switches;

static double test_lat(unsigned iters)
{
	uint64_t t0, s0;
	unsigned i;

	for (i = 0; i < WARMUP; i++)
		barrier();
	s0 = context_switches();
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		barrier();
	t0 = now_ns() - t0;
	lat_switches = (double) (context_switches() - s0) / iters;
	return (double) t0 / iters / 1000.0;
}

/* The mean of (barrier start to its end) minus (the computation alone,
 * as long as it really took). */
static double test_overlap(unsigned iters)
{
	uint64_t t0, c0, c1, total = 0;
	unsigned i;

	for (i = 0; i < WARMUP; i++)
		barrier();
	for (i = 0; i < iters; i++) {
		barrier();	/* line up */
		t0 = now_ns();
		barrier_start();
		c0 = now_ns();
		compute(COMPUTE_NS);
		c1 = now_ns();
		barrier_finish();
		total += now_ns() - t0 - (c1 - c0);
	}
	return (double) total / iters / 1000.0;
}

static double test_skew(unsigned iters)
{
	volatile uint64_t *late_entry;
	uint64_t total = 0;
	char path[512];
	unsigned i;
	int fd;

	snprintf(path, sizeof(path), "%s/clock", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096))
		ctl_die("the shared clock file", errno);
	late_entry = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (late_entry == MAP_FAILED)
		ctl_die("mmap of the shared clock file", errno);
	close(fd);
	for (i = 0; i < WARMUP; i++)
		barrier();
	for (i = 0; i < iters; i++) {
		barrier();	/* line up */
		if (rank == 0) {
			compute(COMPUTE_NS);
			*late_entry = now_ns();
			__sync_synchronize();
			barrier();
			continue;
		}
		barrier();
		/* Nobody leaves before rank 0 entered, which it wrote first. */
		__sync_synchronize();
		total += now_ns() - *late_entry;
	}
	munmap((void *) late_entry, 4096);
	return rank == 0 ? -1.0 : (double) total / iters / 1000.0;
}

static int fit(const char *spec)
{
	struct mrail_barrier_model model;
	uint32_t n[32];
	double t[32];
	size_t count = 0;
	char err[160], *end;
	const char *p = spec;

	while (*p && count < 32) {
		n[count] = (uint32_t) strtoul(p, &end, 10);
		if (*end != ':')
			break;
		t[count] = strtod(end + 1, &end);
		count++;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end)
			break;
	}
	if (*p || mrail_barrier_model_fit(n, t, count, &model, err, sizeof(err))) {
		fprintf(stderr, PROG ": -F %s: %s\n", spec, *p ? "want N:US,N:US,..." : err);
		return 2;
	}
	printf(PROG ": fit T_init+T_adj %.1f us, T_trig %.1f us, r2 %.3f, "
	       "predicted N=1024 %.1f us\n", model.a, model.b, model.r2,
	       mrail_barrier_model_predict(&model, 1024));
	return 0;
}

int main(int argc, char **argv)
{
	const char *prov = "mrail", *test = "lat", *alg = "dissemination";
	unsigned iters = 200;
	uint32_t degree;
	char err[160];
	double value;
	int opt;

	ctl_prog = PROG;
	while ((opt = getopt(argc, argv, "n:r:d:m:t:A:i:p:aF:c:h")) != -1) {
		switch (opt) {
		case 'c': compute_sleeps = !strcmp(optarg, "sleep"); break;
		case 'F': return fit(optarg);
		case 'n': n_ranks = (uint32_t) atoi(optarg); break;
		case 'r': rank = (uint32_t) atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'm': offload = !strcmp(optarg, "offload"); break;
		case 't': test = optarg; break;
		case 'A': alg = optarg; break;
		case 'i': iters = (unsigned) atoi(optarg); break;
		case 'p': prov = optarg; break;
		case 'a': auto_progress = true; break;
		default:
			fprintf(stderr, "usage: %s -n N -r RANK -d DIR [-m offload|host] "
				"[-t lat|overlap|skew] [-A ALG] [-i ITERS] [-p PROV] [-a] "
				"[-c spin|sleep]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n_ranks < 2 || n_ranks > MAX_RANKS || rank >= n_ranks || !dir || !iters) {
		fprintf(stderr, PROG ": -n 2..%d, -r below it, -d and -i > 0 are needed\n",
			MAX_RANKS);
		return 2;
	}
	if (!offload) {
		enum mrail_barrier_alg a;

		if (mrail_barrier_parse(alg, &a, &degree, err, sizeof(err)) ||
		    mrail_barrier_schedule(a, degree ? degree : 2, n_ranks, rank, &sched,
					   err, sizeof(err))) {
			fprintf(stderr, PROG ": -A %s: %s\n", alg, err);
			return 2;
		}
	}
	open_objects(prov);
	ctl_meet(dir, rank, n_ranks, fab.ep, fab.av, addrs);
	if (offload)
		coll_addr = ctl_join_all(fab.ep, fab.av, fab.eq, fab.cq, addrs, n_ranks,
					 &av_set, &mc);
	if (!strcmp(test, "lat"))
		value = test_lat(iters);
	else if (!strcmp(test, "overlap"))
		value = test_overlap(iters);
	else if (!strcmp(test, "skew"))
		value = test_skew(iters);
	else
		ctl_die("-t takes lat, overlap or skew", EINVAL);
	/* A last barrier: nobody closes while a peer still needs it. */
	barrier();
	printf(PROG ": rank %u test %s mode %s N %u value %.2f us\n", rank, test,
	       offload ? "offload" : "host", n_ranks, value);
	if (!strcmp(test, "lat"))
		printf(PROG ": rank %u test lat mode %s N %u switches %.2f per "
		       "barrier\n", rank, offload ? "offload" : "host", n_ranks,
		       lat_switches);
	if (offload) {
		fi_close(&mc->fid);
		fi_close(&av_set->fid);
	}
	setup_close(&fab, NULL, 0);
	return 0;
}
