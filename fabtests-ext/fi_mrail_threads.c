/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_threads: many application threads on one FI_THREAD_SAFE
 * endpoint and one CQ at once.
 *
 *   server:  fi_mrail_threads [-a] [-r R] [-p PROV] [-E PORT]
 *   client:  fi_mrail_threads [-a] [-t T] [-n N] [-p PROV] [-E PORT] SERVER
 *
 * The server registers one region (key 1) and binds a counter to it with
 * fi_mr_bind (FI_REMOTE_WRITE | FI_REMOTE_READ), as SHMEM runtimes do, and
 * FI_REMOTE_WRITE and FI_REMOTE_READ counters to its endpoint. The
 * client's T threads each run N iterations on the client's single
 * endpoint, all at once: fi_inject_write and fi_write into the thread's own
 * cells of the region, a large (striped) fi_write every eighth iteration,
 * fi_atomic FI_SUM on the thread's word and on a word all threads share,
 * fi_fetch_atomic FI_SUM on a shared ticket word, a tagged send with the
 * thread's tag (eager, and every fourth one by rendezvous) and an fi_inject;
 * then fi_read of what it wrote and an FI_ATOMIC_READ of its word, checked
 * against what it must be. The server's R threads post the tagged receives
 * (one server thread per tag, so each tag's messages must arrive in send
 * order) and untagged receives, all at once, and check every byte.
 *
 * All threads share one CQ: every operation's context says which thread
 * owns it, and a thread that reads another's completion hands it over by
 * marking the context done; each thread then sees each of its completions
 * exactly once. At the end: the region byte for byte, the shared words
 * exactly (the tickets the fetches returned are exactly 0..T*N-1), the
 * region's counters, the endpoints' counters and every completion counted
 * exactly. Prints "N of N checks passed"; exits 0 only if all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/mrail_check.h"
#include "common/mrail_ctl.h"
#include "common/mrail_setup.h"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define PROG "fi_mrail_threads"
#define REGION_KEY 1
#define WAIT_S 120
#define MAX_THREADS 64
#define MAX_ITERS 2000
#define OP_MAGIC 0x7468726561647321ULL

/* Per-thread cells of the region and the sizes that go in them. */
#define INJECT_CELL 64
#define WRITE_CELL 512
#define LARGE_AREA 65536
#define MAX_MSG 65536
#define INJECT_MSG 64
#define TAG_BASE 0x1000
/* Receives each server thread keeps posted per tag, and untagged ones. */
#define TAGGED_WINDOW 2
#define UNTAGGED_WINDOW 4

/* Words at the start of the region: the shared sum, the ticket, then one
 * per client thread; the threads' cells follow from WORDS_LEN on. */
#define WORD_SHARED 0
#define WORD_TICKET 1
#define WORD_THREAD(t) (2 + (t))
#define WORDS_LEN 4096

enum kind { K_INJECT_WRITE = 1, K_WRITE, K_LARGE, K_TAGGED, K_INJECT_MSG };

struct params {
	uint32_t threads, iters;
};

/* What both sides derive the test from. */
static unsigned n_threads = 8, n_iters = 100;

static uint64_t seed_of(unsigned t, unsigned i, enum kind k)
{
	return ((uint64_t) k << 48) | ((uint64_t) t << 32) | i;
}

static size_t inject_write_len(unsigned t, unsigned i)
{
	return 1 + (i * 7 + t * 3) % INJECT_CELL;
}

static size_t write_len(unsigned t, unsigned i)
{
	return 1 + (i * 13 + t * 5) % WRITE_CELL;
}

/* Every eighth iteration, staggered by thread, writes the large area with
 * more than fits inline (16312 bytes): the target pulls it in stripes. */
static bool has_large(unsigned t, unsigned i)
{
	return i % 8 == t % 8;
}

static size_t large_len(unsigned t, unsigned i)
{
	return 16384 + 1 + (t * 4099 + i * 97) % (LARGE_AREA - 16384 - 1);
}

/* Every fourth tagged send goes by rendezvous (above the 16336-byte eager
 * limit), the others eagerly. */
static size_t tagged_len(unsigned t, unsigned i)
{
	if (i % 4 == 3)
		return 40000 + 1000 * (t % 16) + i % 1000;
	return 16 + (i * 37 + t * 11) % (16336 - 16);
}

static size_t inject_msg_len(unsigned t, unsigned i)
{
	return 16 + (i + t) % (INJECT_MSG - 16);
}

static size_t slice_len(void)
{
	return (size_t) n_iters * (INJECT_CELL + WRITE_CELL) + LARGE_AREA;
}

static size_t inject_cell_at(unsigned t, unsigned i)
{
	return WORDS_LEN + t * slice_len() + (size_t) i * INJECT_CELL;
}

static size_t write_cell_at(unsigned t, unsigned i)
{
	return WORDS_LEN + t * slice_len() + (size_t) n_iters * INJECT_CELL +
	       (size_t) i * WRITE_CELL;
}

static size_t large_at(unsigned t)
{
	return WORDS_LEN + t * slice_len() + (size_t) n_iters * (INJECT_CELL + WRITE_CELL);
}

static size_t region_size(void)
{
	return WORDS_LEN + n_threads * slice_len();
}

/* A message starts with who sent it; the pattern of (t, i) follows. */
struct msg_hdr {
	uint32_t t, i;
	uint64_t len;
};

static void fill_msg(uint8_t *buf, unsigned t, unsigned i, size_t len, enum kind k)
{
	struct msg_hdr hdr = { .t = t, .i = i, .len = len };

	memcpy(buf, &hdr, sizeof(hdr));
	check_pattern_fill(buf + sizeof(hdr), len - sizeof(hdr), seed_of(t, i, k));
}

/* ---- libfabric objects ---- */

/* One CQ takes both directions. */
static struct mrail_setup fab;
/* Client: FI_SEND, FI_WRITE, FI_READ. Server: FI_RECV, FI_REMOTE_WRITE
 * and FI_REMOTE_READ on the endpoint, and the region's counter (mrail
 * keeps one per region, bound for both kinds of access). */
static struct fid_cntr *send_cntr, *write_cntr, *read_cntr, *recv_cntr;
static struct fid_cntr *rwrite_cntr, *rread_cntr, *region_cntr;
static fi_addr_t peer;
static int sock = -1;

static void open_objects(const char *prov, bool auto_progress, bool server)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *info;

	info = ctl_getinfo_thread(prov, FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |
				  FI_SEND | FI_RECV | FI_READ | FI_WRITE |
				  FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT,
				  0, auto_progress, FI_THREAD_SAFE);
	check(info->domain_attr->threading == FI_THREAD_SAFE,
	      "fi_getinfo offers FI_THREAD_SAFE (got threading %d)",
	      (int) info->domain_attr->threading);
	setup_open(&fab, info, &cq_attr, 0);
	if (server) {
		recv_cntr = setup_cntr(&fab, FI_RECV, FI_WAIT_UNSPEC);
		rwrite_cntr = setup_cntr(&fab, FI_REMOTE_WRITE, FI_WAIT_UNSPEC);
		rread_cntr = setup_cntr(&fab, FI_REMOTE_READ, FI_WAIT_UNSPEC);
		region_cntr = setup_cntr(&fab, 0, FI_WAIT_UNSPEC);
	} else {
		send_cntr = setup_cntr(&fab, FI_SEND, FI_WAIT_UNSPEC);
		write_cntr = setup_cntr(&fab, FI_WRITE, FI_WAIT_UNSPEC);
		read_cntr = setup_cntr(&fab, FI_READ, FI_WAIT_UNSPEC);
	}
	setup_enable(&fab);
}

/* The bound counters close with the endpoint; the region's (the server's
 * only) is ours. */
static void close_objects(void)
{
	struct fid *region[] = { SETUP_FID(region_cntr) };

	setup_close(&fab, region, 1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* ---- threads, operations and the shared CQ ---- */

/*
 * One posted operation. The context passed to libfabric is the operation
 * itself; whichever thread reads its completion off the shared CQ fills in
 * what it says and then bumps done (release), which the owner reads
 * (acquire). A second completion for the same operation shows as done > 1.
 */
struct op {
	struct fi_context2 fctx;	/* first: the context libfabric sees */
	uint64_t magic;
	unsigned owner;
	uint64_t flags, tag;
	size_t len;
	int err;
	bool posted;	/* by its owner: whether there is a completion to await */
	atomic_uint done;
};

struct worker {
	unsigned id;
	pthread_t thread;
	/* Counted by this thread only; read by main after the join. */
	uint64_t completions;	/* its operations' completions it saw */
	uint64_t handed_over;	/* others' completions it read for them */
	uint64_t writes, reads, sends;	/* operations it posted, by counter */
	uint64_t tagged_seen, untagged_seen;
	unsigned failures;
	char first_failure[256];
};

/* Completions whose context is no operation, and any op completed twice. */
static atomic_uint stray_completions, duplicate_completions;

static void worker_fail(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void worker_fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->failures++) {
		va_start(ap, fmt);
		vsnprintf(w->first_failure, sizeof(w->first_failure), fmt, ap);
		va_end(ap);
	}
}

static void op_init(struct op *op, unsigned owner)
{
	memset(op, 0, sizeof(*op));
	op->magic = OP_MAGIC;
	op->owner = owner;
	atomic_init(&op->done, 0);
}

static void deliver(struct worker *self, struct op *op, uint64_t flags, uint64_t tag,
		    size_t len, int err)
{
	if (!op || op->magic != OP_MAGIC) {
		atomic_fetch_add(&stray_completions, 1);
		return;
	}
	op->flags = flags;
	op->tag = tag;
	op->len = len;
	op->err = err;
	if (op->owner != self->id)
		self->handed_over++;
	if (atomic_fetch_add_explicit(&op->done, 1, memory_order_release))
		atomic_fetch_add(&duplicate_completions, 1);
}

/*
 * Takes what the shared CQ has and hands each completion to its
 * operation; sleeps up to a millisecond in fi_cq_sread when there is
 * nothing, so the threads that wait do not keep the cores from the ones
 * that work (and from the progress thread).
 */
static void poll_cq(struct worker *self)
{
	struct fi_cq_tagged_entry e[8];
	struct fi_cq_err_entry err;
	ssize_t n, k;

	n = fi_cq_read(fab.cq, e, 8);
	if (n == -FI_EAGAIN)
		n = fi_cq_sread(fab.cq, e, 8, NULL, 1);
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(fab.cq, &err, 0) == 1)
			deliver(self, err.op_context, err.flags, err.tag, err.len,
				err.err ? err.err : FI_EOTHER);
		return;
	}
	for (k = 0; k < n; k++)
		deliver(self, e[k].op_context, e[k].flags, e[k].tag, e[k].len, 0);
}

/*
 * Waits for op's completion. A completion that never comes ends the
 * program: the operation (on this thread's stack) may still complete later,
 * and nothing may then write into it.
 */
static void op_wait(struct worker *w, struct op *op, const char *what)
{
	double deadline = now_s() + WAIT_S;
	char why[160];

	while (!atomic_load_explicit(&op->done, memory_order_acquire)) {
		poll_cq(w);
		if (now_s() > deadline) {
			snprintf(why, sizeof(why), "thread %u: %s: no completion after "
				 "%d s", w->id, what, WAIT_S);
			ctl_die(why, ETIMEDOUT);
		}
	}
	w->completions++;
}

/* A posted op's completion must be a success with exactly flags. */
static void op_expect(struct worker *w, struct op *op, const char *what,
		      uint64_t flags)
{
	if (!op->posted)
		return;		/* the failed post was counted */
	op_wait(w, op, what);
	if (op->err)
		worker_fail(w, "%s: error completion: %s", what, fi_strerror(op->err));
	else if (op->flags != flags)
		worker_fail(w, "%s: completion flags %#" PRIx64 ", expected %#" PRIx64,
			    what, op->flags, flags);
}

/*
 * Posts with call (an expression of ret), retrying while the endpoint says
 * -FI_EAGAIN and progressing the shared CQ meanwhile. Evaluates to true
 * when posted.
 */
#define POST(w, what, call) ({						\
	double deadline_ = now_s() + WAIT_S;				\
	ssize_t ret_;							\
	while ((ret_ = (call)) == -FI_EAGAIN && now_s() < deadline_)	\
		poll_cq(w);						\
	if (ret_)							\
		worker_fail(w, "%s: %s", what, fi_strerror((int) -ret_)); \
	!ret_;								\
})

/* ---- client ---- */

struct client_bufs {
	uint8_t inject[INJECT_CELL], write[WRITE_CELL], back[WRITE_CELL];
	uint8_t msg[MAX_MSG], inject_msg[INJECT_MSG];
	uint8_t large[LARGE_AREA], large_back[LARGE_AREA];
	uint64_t one, add_own, add_shared, fetched, own_now, dummy;
};

static uint64_t region_key = REGION_KEY;
static uint64_t *tickets;	/* [t * n_iters + i]: what thread t's fetch got */

/* Counts a posted operation on count; marks op (when there is one) as
 * having a completion to await. */
static void posted(struct op *op, bool ok, uint64_t *count)
{
	if (op)
		op->posted = ok;
	*count += ok;
}

/* Iteration i of thread t: the first round of operations, all in flight at
 * once, then the round that reads back. */
static void client_iteration(struct worker *w, struct client_bufs *b, unsigned i)
{
	unsigned t = w->id;
	struct op write_op, own_op, shared_op, ticket_op, send_op, large_op;
	struct op back_op, large_back_op, read_own_op;
	size_t len = write_len(t, i), big = has_large(t, i) ? large_len(t, i) : 0;
	size_t mlen = tagged_len(t, i), ilen = inject_write_len(t, i), at;
	uint64_t own_expect = (uint64_t) (i + 1) * (i + 2) / 2;

	op_init(&write_op, t);
	op_init(&large_op, t);
	op_init(&own_op, t);
	op_init(&shared_op, t);
	op_init(&ticket_op, t);
	op_init(&send_op, t);
	op_init(&back_op, t);
	op_init(&large_back_op, t);
	op_init(&read_own_op, t);

	check_pattern_fill(b->inject, ilen, seed_of(t, i, K_INJECT_WRITE));
	posted(NULL, POST(w, "fi_inject_write", fi_inject_write(fab.ep, b->inject, ilen,
			  peer, inject_cell_at(t, i), region_key)), &w->writes);

	check_pattern_fill(b->write, len, seed_of(t, i, K_WRITE));
	posted(&write_op, POST(w, "fi_write", fi_write(fab.ep, b->write, len, NULL, peer,
			       write_cell_at(t, i), region_key, &write_op)), &w->writes);
	if (big) {
		check_pattern_fill(b->large, big, seed_of(t, i, K_LARGE));
		posted(&large_op, POST(w, "large fi_write", fi_write(fab.ep, b->large, big,
				       NULL, peer, large_at(t), region_key, &large_op)),
		       &w->writes);
	}

	b->add_own = i + 1;
	posted(&own_op, POST(w, "fi_atomic on the thread's word", fi_atomic(fab.ep,
			     &b->add_own, 1, NULL, peer, WORD_THREAD(t) * 8, region_key,
			     FI_UINT64, FI_SUM, &own_op)), &w->writes);
	b->add_shared = t + 1;
	posted(&shared_op, POST(w, "fi_atomic on the shared word", fi_atomic(fab.ep,
				&b->add_shared, 1, NULL, peer, WORD_SHARED * 8, region_key,
				FI_UINT64, FI_SUM, &shared_op)), &w->writes);
	b->one = 1;
	b->fetched = UINT64_MAX;
	posted(&ticket_op, POST(w, "fi_fetch_atomic on the ticket", fi_fetch_atomic(fab.ep,
				&b->one, 1, NULL, &b->fetched, NULL, peer, WORD_TICKET * 8,
				region_key, FI_UINT64, FI_SUM, &ticket_op)), &w->reads);

	fill_msg(b->msg, t, i, mlen, K_TAGGED);
	posted(&send_op, POST(w, "fi_tsend", fi_tsend(fab.ep, b->msg, mlen, NULL, peer,
			      TAG_BASE + t, &send_op)), &w->sends);
	fill_msg(b->inject_msg, t, i, inject_msg_len(t, i), K_INJECT_MSG);
	posted(NULL, POST(w, "fi_inject", fi_inject(fab.ep, b->inject_msg,
			  inject_msg_len(t, i), peer)), &w->sends);

	op_expect(w, &write_op, "fi_write", FI_RMA | FI_WRITE);
	op_expect(w, &large_op, "large fi_write", FI_RMA | FI_WRITE);
	op_expect(w, &own_op, "fi_atomic on the thread's word", FI_ATOMIC | FI_WRITE);
	op_expect(w, &shared_op, "fi_atomic on the shared word", FI_ATOMIC | FI_WRITE);
	op_expect(w, &ticket_op, "fi_fetch_atomic on the ticket", FI_ATOMIC | FI_READ);
	op_expect(w, &send_op, "fi_tsend", FI_TAGGED | FI_SEND);
	tickets[(size_t) t * n_iters + i] = b->fetched;

	/* Every RMA and atomic is delivery complete (fi_mrail(7)): what it
	 * wrote is there to be read back. */
	memset(b->back, 0, len);
	posted(&back_op, POST(w, "fi_read", fi_read(fab.ep, b->back, len, NULL, peer,
			      write_cell_at(t, i), region_key, &back_op)), &w->reads);
	if (large_op.posted) {
		memset(b->large_back, 0, big);
		posted(&large_back_op, POST(w, "large fi_read", fi_read(fab.ep,
					    b->large_back, big, NULL, peer, large_at(t),
					    region_key, &large_back_op)), &w->reads);
	}
	b->own_now = UINT64_MAX;
	posted(&read_own_op, POST(w, "FI_ATOMIC_READ of the thread's word",
				  fi_fetch_atomic(fab.ep, &b->dummy, 1, NULL, &b->own_now,
						  NULL, peer, WORD_THREAD(t) * 8,
						  region_key, FI_UINT64, FI_ATOMIC_READ,
						  &read_own_op)), &w->reads);

	op_expect(w, &back_op, "fi_read", FI_RMA | FI_READ);
	at = check_pattern_mismatch(b->back, len, seed_of(t, i, K_WRITE));
	if (back_op.posted && at != len)
		worker_fail(w, "iteration %u: fi_read of the %zu bytes fi_write wrote "
			    "differs at byte %zu", i, len, at);
	if (large_back_op.posted) {
		op_expect(w, &large_back_op, "large fi_read", FI_RMA | FI_READ);
		at = check_pattern_mismatch(b->large_back, big, seed_of(t, i, K_LARGE));
		if (at != big)
			worker_fail(w, "iteration %u: large fi_read of %zu bytes "
				    "differs at byte %zu", i, big, at);
	}
	op_expect(w, &read_own_op, "FI_ATOMIC_READ", FI_ATOMIC | FI_READ);
	if (read_own_op.posted && b->own_now != own_expect)
		worker_fail(w, "iteration %u: the thread's word is %" PRIu64 ", its "
			    "own sums make %" PRIu64, i, b->own_now, own_expect);
}

static void *client_thread(void *arg)
{
	struct worker *w = arg;
	struct client_bufs *b = calloc(1, sizeof(*b));
	unsigned i;

	if (!b)
		ctl_die("calloc", ENOMEM);
	for (i = 0; i < n_iters && w->failures < 10; i++)
		client_iteration(w, b, i);
	free(b);
	return NULL;
}

static void check_tickets(void)
{
	size_t total = (size_t) n_threads * n_iters, k, bad = 0;
	uint8_t *seen = calloc(total, 1);

	if (!seen)
		ctl_die("calloc", ENOMEM);
	for (k = 0; k < total; k++) {
		if (tickets[k] >= total || seen[tickets[k]]++)
			bad++;
	}
	check(!bad, "client: the %zu fetch-and-adds on the ticket returned each of "
	      "0..%zu exactly once (%zu did not)", total, total - 1, bad);
	free(seen);
}

static void client_progress(void)
{
	(void) fi_cntr_read(write_cntr);
}

static void check_cntr(const char *what, struct fid_cntr *cntr, uint64_t expect)
{
	double deadline = now_s() + 60;

	while (fi_cntr_read(cntr) < expect && !fi_cntr_readerr(cntr) &&
	       now_s() < deadline)
		usleep(1000);
	check(fi_cntr_read(cntr) == expect && !fi_cntr_readerr(cntr),
	      "%s counter %" PRIu64 " (errors %" PRIu64 "), expected %" PRIu64,
	      what, fi_cntr_read(cntr), fi_cntr_readerr(cntr), expect);
}

static void check_workers(const char *side, struct worker *workers, unsigned n,
			  uint64_t expect_completions_each)
{
	uint64_t handed = 0;
	unsigned k;

	for (k = 0; k < n; k++) {
		check(!workers[k].failures, "%s thread %u: %u failures%s%s", side, k,
		      workers[k].failures, workers[k].failures ? ", first: " : "",
		      workers[k].first_failure);
		if (expect_completions_each)
			check(workers[k].completions == expect_completions_each,
			      "%s thread %u: %" PRIu64 " completions, expected %" PRIu64,
			      side, k, workers[k].completions, expect_completions_each);
		handed += workers[k].handed_over;
	}
	check(!atomic_load(&stray_completions) && !atomic_load(&duplicate_completions),
	      "%s: %u completions for no operation, %u operations completed twice",
	      side, atomic_load(&stray_completions), atomic_load(&duplicate_completions));
	printf(PROG ": %s: %" PRIu64 " completions read by one thread for another\n",
	       side, handed);
}

static void check_cq_empty(const char *side)
{
	struct fi_cq_tagged_entry e;

	check(fi_cq_read(fab.cq, &e, 1) == -FI_EAGAIN, "%s: no completion left over", side);
}

static void run_client(void)
{
	struct params p = { .threads = n_threads, .iters = n_iters };
	struct worker *workers = calloc(n_threads, sizeof(*workers));
	uint64_t writes = 0, reads = 0, sends = 0, large = 0;
	int32_t status;
	double start;
	unsigned t, i;

	tickets = calloc((size_t) n_threads * n_iters, sizeof(*tickets));
	if (!workers || !tickets)
		ctl_die("calloc", ENOMEM);
	ctl_write(sock, &p, sizeof(p));
	peer = ctl_swap_names(sock, fab.ep, fab.av);
	ctl_read(sock, &status, sizeof(status), client_progress);	/* registered */

	start = now_s();
	for (t = 0; t < n_threads; t++) {
		workers[t].id = t;
		if (pthread_create(&workers[t].thread, NULL, client_thread, &workers[t]))
			ctl_die("pthread_create", EAGAIN);
	}
	for (t = 0; t < n_threads; t++) {
		pthread_join(workers[t].thread, NULL);
		writes += workers[t].writes;
		reads += workers[t].reads;
		sends += workers[t].sends;
		for (i = 0; i < n_iters; i++)
			large += has_large(t, i);
	}
	printf(PROG ": %u threads x %u iterations on one endpoint in %.2f s\n",
	       n_threads, n_iters, now_s() - start);

	/* Per iteration: fi_write, 2 atomics, the fetch, the send, fi_read and
	 * the atomic read complete, and the large write and read every eighth. */
	check_workers("client", workers, n_threads, 0);
	for (t = 0; t < n_threads; t++) {
		uint64_t expect = 7 * (uint64_t) n_iters;

		for (i = 0; i < n_iters; i++)
			expect += 2 * has_large(t, i);
		check(workers[t].completions == expect, "client thread %u: %" PRIu64
		      " completions, expected %" PRIu64, t, workers[t].completions, expect);
	}
	check(writes == (uint64_t) n_threads * n_iters * 4 + large &&
	      reads == (uint64_t) n_threads * n_iters * 3 + large &&
	      sends == (uint64_t) n_threads * n_iters * 2,
	      "client: every operation was posted (%" PRIu64 " writes, %" PRIu64
	      " reads, %" PRIu64 " sends)", writes, reads, sends);
	check_cntr("client: FI_WRITE", write_cntr, writes);
	check_cntr("client: FI_READ", read_cntr, reads);
	check_cntr("client: FI_SEND", send_cntr, sends);
	check_cq_empty("client");
	check_tickets();

	ctl_write(sock, &status, sizeof(status));	/* done */
	ctl_read(sock, &status, sizeof(status), client_progress);
	check(status == 0, "client: the server reports %d failed checks", (int) status);
	free(workers);
	free(tickets);
}

/* ---- server ---- */

static uint8_t *region;
/* [t * n_iters + i]: how many untagged messages of (t, i) arrived. */
static atomic_uchar *untagged_seen;
static unsigned n_server_threads = 4;

struct rx_slot {
	struct op op;
	bool posted;
	unsigned expect_i;	/* tagged: the iteration this one must hold */
	uint8_t *buf;
};

static void check_tagged(struct worker *w, struct rx_slot *s, unsigned t)
{
	const struct msg_hdr *hdr = (const void *) s->buf;
	size_t len = tagged_len(t, s->expect_i), at;

	if (s->op.err) {
		worker_fail(w, "tagged receive of thread %u: error %s", t,
			    fi_strerror(s->op.err));
		return;
	}
	if (s->op.flags != (FI_TAGGED | FI_RECV) || s->op.tag != TAG_BASE + t ||
	    s->op.len != len || hdr->t != t || hdr->i != s->expect_i || hdr->len != len) {
		worker_fail(w, "tag %#x: message %u expected (%zu bytes), got flags %#"
			    PRIx64 " tag %#" PRIx64 " %zu bytes from thread %u "
			    "iteration %u", TAG_BASE + t, s->expect_i, len, s->op.flags,
			    s->op.tag, s->op.len, hdr->t, hdr->i);
		return;
	}
	at = check_pattern_mismatch(s->buf + sizeof(*hdr), len - sizeof(*hdr),
				    seed_of(t, s->expect_i, K_TAGGED));
	if (at != len - sizeof(*hdr))
		worker_fail(w, "tagged message %u of thread %u differs at byte %zu",
			    s->expect_i, t, at + sizeof(*hdr));
	w->tagged_seen++;
}

static void check_untagged(struct worker *w, struct rx_slot *s)
{
	struct msg_hdr hdr;
	size_t at;

	if (s->op.err) {
		worker_fail(w, "untagged receive: error %s", fi_strerror(s->op.err));
		return;
	}
	memcpy(&hdr, s->buf, sizeof(hdr));
	if (s->op.flags != (FI_MSG | FI_RECV) || hdr.t >= n_threads ||
	    hdr.i >= n_iters || s->op.len != inject_msg_len(hdr.t, hdr.i) ||
	    hdr.len != s->op.len) {
		worker_fail(w, "untagged message: flags %#" PRIx64 ", %zu bytes, "
			    "header says thread %u iteration %u", s->op.flags,
			    s->op.len, hdr.t, hdr.i);
		return;
	}
	at = check_pattern_mismatch(s->buf + sizeof(hdr), hdr.len - sizeof(hdr),
				    seed_of(hdr.t, hdr.i, K_INJECT_MSG));
	if (at != hdr.len - sizeof(hdr))
		worker_fail(w, "untagged message of thread %u iteration %u differs at "
			    "byte %zu", hdr.t, hdr.i, at + sizeof(hdr));
	atomic_fetch_add(&untagged_seen[(size_t) hdr.t * n_iters + hdr.i], 1);
	w->untagged_seen++;
}

/*
 * Server thread w receives the tagged messages of the client threads t
 * with t % R == w->id (one receiver per tag keeps the tag's posting order,
 * which is the order its messages must match in) and its share of the
 * untagged ones, keeping a few of each posted at once.
 */
static void *server_thread(void *arg)
{
	struct worker *w = arg;
	unsigned r = w->id, t, k;
	uint64_t untagged_quota = (uint64_t) n_threads * n_iters / n_server_threads +
				  (r < (uint64_t) n_threads * n_iters % n_server_threads);
	uint64_t untagged_posted = 0, untagged_done = 0, tagged_left = 0;
	unsigned *next_post = calloc(n_threads, sizeof(*next_post));
	struct rx_slot *tagged = calloc((size_t) n_threads * TAGGED_WINDOW,
					sizeof(*tagged));
	struct rx_slot *untagged = calloc(UNTAGGED_WINDOW, sizeof(*untagged));
	double deadline = now_s() + WAIT_S;

	if (!next_post || !tagged || !untagged)
		ctl_die("calloc", ENOMEM);
	for (t = r; t < n_threads; t += n_server_threads) {
		tagged_left += n_iters;
		for (k = 0; k < TAGGED_WINDOW; k++) {
			tagged[t * TAGGED_WINDOW + k].buf = malloc(MAX_MSG);
			if (!tagged[t * TAGGED_WINDOW + k].buf)
				ctl_die("malloc", ENOMEM);
		}
	}
	for (k = 0; k < UNTAGGED_WINDOW; k++) {
		untagged[k].buf = malloc(INJECT_MSG);
		if (!untagged[k].buf)
			ctl_die("malloc", ENOMEM);
	}

	while (tagged_left || untagged_done < untagged_quota) {
		bool idle = true;

		if (now_s() > deadline) {
			worker_fail(w, "%" PRIu64 " tagged and %" PRIu64 " untagged "
				    "messages still missing after %d s", tagged_left,
				    untagged_quota - untagged_done, WAIT_S);
			/* Receives still posted keep their slots and buffers. */
			return NULL;
		}
		for (t = r; t < n_threads; t += n_server_threads) {
			for (k = 0; k < TAGGED_WINDOW; k++) {
				struct rx_slot *s = &tagged[t * TAGGED_WINDOW + k];

				if (s->posted && atomic_load_explicit(&s->op.done,
						memory_order_acquire)) {
					s->posted = false;
					w->completions++;
					tagged_left--;
					check_tagged(w, s, t);
					idle = false;
				}
			}
			/* Repost in order: the slot of the oldest message
			 * completes first only if matching kept order, which
			 * check_tagged verifies through expect_i. */
			for (k = 0; k < TAGGED_WINDOW && next_post[t] < n_iters; k++) {
				struct rx_slot *s = &tagged[t * TAGGED_WINDOW +
							    next_post[t] % TAGGED_WINDOW];

				if (s->posted)
					break;
				op_init(&s->op, r);
				s->expect_i = next_post[t];
				if (!POST(w, "fi_trecv", fi_trecv(fab.ep, s->buf, MAX_MSG, NULL,
						FI_ADDR_UNSPEC, TAG_BASE + t, 0, &s->op)))
					break;
				s->posted = true;
				next_post[t]++;
			}
		}
		for (k = 0; k < UNTAGGED_WINDOW; k++) {
			struct rx_slot *s = &untagged[k];

			if (s->posted && atomic_load_explicit(&s->op.done,
							      memory_order_acquire)) {
				s->posted = false;
				w->completions++;
				untagged_done++;
				check_untagged(w, s);
				idle = false;
			}
			if (!s->posted && untagged_posted < untagged_quota) {
				op_init(&s->op, r);
				if (!POST(w, "fi_recv", fi_recv(fab.ep, s->buf, INJECT_MSG, NULL,
							       FI_ADDR_UNSPEC, &s->op)))
					break;
				s->posted = true;
				untagged_posted++;
			}
		}
		if (idle)
			poll_cq(w);
	}
	for (t = r; t < n_threads; t += n_server_threads)
		for (k = 0; k < TAGGED_WINDOW; k++)
			free(tagged[t * TAGGED_WINDOW + k].buf);
	for (k = 0; k < UNTAGGED_WINDOW; k++)
		free(untagged[k].buf);
	free(untagged);
	free(tagged);
	free(next_post);
	return NULL;
}

static void server_progress(void)
{
	(void) fi_cntr_read(recv_cntr);
}

static uint64_t region_word(unsigned k)
{
	uint64_t v;

	memcpy(&v, region + 8 * k, sizeof(v));
	return v;
}

/* Cell [at, at + cell) must hold len bytes of seed's pattern, then zeros. */
static bool cell_holds(size_t at, size_t cell, size_t len, uint64_t seed)
{
	size_t k;

	if (check_pattern_mismatch(region + at, len, seed) != len)
		return false;
	for (k = len; k < cell; k++)
		if (region[at + k])
			return false;
	return true;
}

static void check_region(void)
{
	uint8_t *large = malloc(LARGE_AREA);
	uint64_t shared = 0, own = (uint64_t) n_iters * (n_iters + 1) / 2;
	unsigned t, i, bad_inject = 0, bad_write = 0, bad_large = 0, bad_own = 0;

	if (!large)
		ctl_die("malloc", ENOMEM);
	for (t = 0; t < n_threads; t++) {
		shared += (uint64_t) (t + 1) * n_iters;
		bad_own += region_word(WORD_THREAD(t)) != own;
		memset(large, 0, LARGE_AREA);
		for (i = 0; i < n_iters; i++) {
			bad_inject += !cell_holds(inject_cell_at(t, i), INJECT_CELL,
						  inject_write_len(t, i),
						  seed_of(t, i, K_INJECT_WRITE));
			bad_write += !cell_holds(write_cell_at(t, i), WRITE_CELL,
						 write_len(t, i), seed_of(t, i, K_WRITE));
			if (has_large(t, i))
				check_pattern_fill(large, large_len(t, i),
						   seed_of(t, i, K_LARGE));
		}
		bad_large += memcmp(large, region + large_at(t), LARGE_AREA) != 0;
	}
	check(!bad_inject, "server: %u of %u fi_inject_write cells hold other bytes",
	      bad_inject, n_threads * n_iters);
	check(!bad_write, "server: %u of %u fi_write cells hold other bytes",
	      bad_write, n_threads * n_iters);
	check(!bad_large, "server: %u of %u large areas hold other bytes than the "
	      "writes left there", bad_large, n_threads);
	check(!bad_own, "server: %u of %u threads' words differ from %" PRIu64,
	      bad_own, n_threads, own);
	check(region_word(WORD_SHARED) == shared, "server: the shared word is %" PRIu64
	      ", the threads' sums make %" PRIu64, region_word(WORD_SHARED), shared);
	check(region_word(WORD_TICKET) == (uint64_t) n_threads * n_iters,
	      "server: the ticket is %" PRIu64 " after %u fetch-and-adds",
	      region_word(WORD_TICKET), n_threads * n_iters);
	for (t = 2 + n_threads; t < WORDS_LEN / 8; t++)
		bad_own += region_word(t) != 0;
	check(!bad_own, "server: no word past the threads' words touched");
	free(large);
}

static void check_untagged_once(void)
{
	size_t total = (size_t) n_threads * n_iters, k, bad = 0;

	for (k = 0; k < total; k++)
		bad += atomic_load(&untagged_seen[k]) != 1;
	check(!bad, "server: every fi_inject message arrived exactly once (%zu "
	      "of %zu did not)", bad, total);
}

static void run_server(void)
{
	struct worker *workers;
	struct fid_mr *mr;
	struct params p;
	uint64_t large = 0, rwrites, rreads, tagged = 0, untagged = 0;
	int32_t status = 0;
	double deadline;
	unsigned t, i;
	int ret;

	ctl_read(sock, &p, sizeof(p), NULL);
	if (!p.threads || p.threads > MAX_THREADS || !p.iters || p.iters > MAX_ITERS)
		ctl_die("the client's thread and iteration counts", EINVAL);
	n_threads = p.threads;
	n_iters = p.iters;
	peer = ctl_swap_names(sock, fab.ep, fab.av);

	if (posix_memalign((void **) &region, 4096, region_size()))
		region = NULL;
	untagged_seen = calloc((size_t) n_threads * n_iters, sizeof(*untagged_seen));
	workers = calloc(n_server_threads, sizeof(*workers));
	if (!region || !untagged_seen || !workers)
		ctl_die("allocating the region", ENOMEM);
	memset(region, 0, region_size());
	if ((ret = fi_mr_reg(fab.domain, region, region_size(),
			     FI_REMOTE_READ | FI_REMOTE_WRITE, 0, REGION_KEY,
			     FI_RMA_EVENT, &mr, NULL)) ||
	    (ret = fi_mr_bind(mr, &region_cntr->fid, FI_REMOTE_WRITE | FI_REMOTE_READ)) ||
	    (ret = fi_mr_enable(mr)))
		ctl_die("registering the region and binding its counters", ret);

	for (t = 0; t < n_server_threads; t++) {
		workers[t].id = t;
		if (pthread_create(&workers[t].thread, NULL, server_thread, &workers[t]))
			ctl_die("pthread_create", EAGAIN);
	}
	ctl_write(sock, &status, sizeof(status));	/* registered, receiving */
	ctl_read(sock, &status, sizeof(status), server_progress);	/* done */
	for (t = 0; t < n_server_threads; t++) {
		pthread_join(workers[t].thread, NULL);
		tagged += workers[t].tagged_seen;
		untagged += workers[t].untagged_seen;
	}
	check_workers("server", workers, n_server_threads, 0);
	check(tagged == (uint64_t) n_threads * n_iters && untagged == tagged,
	      "server: %" PRIu64 " tagged and %" PRIu64 " untagged messages received "
	      "and checked, expected %u each", tagged, untagged, n_threads * n_iters);
	check_untagged_once();

	/* The region's counters: per iteration fi_inject_write, fi_write and
	 * two plain atomics write; the fetch-and-add, fi_read and the atomic
	 * read read (fi_mrail(7): fetching atomics count as remote reads). */
	for (t = 0; t < n_threads; t++)
		for (i = 0; i < n_iters; i++)
			large += has_large(t, i);
	rwrites = (uint64_t) n_threads * n_iters * 4 + large;
	rreads = (uint64_t) n_threads * n_iters * 3 + large;
	deadline = now_s() + 60;
	while ((fi_cntr_read(rwrite_cntr) < rwrites || fi_cntr_read(rread_cntr) < rreads ||
		fi_cntr_read(region_cntr) < rwrites + rreads) && now_s() < deadline)
		server_progress();
	check_cntr("server: the region's (fi_mr_bind FI_REMOTE_WRITE | FI_REMOTE_READ)",
		   region_cntr, rwrites + rreads);
	check_cntr("server: FI_REMOTE_WRITE", rwrite_cntr, rwrites);
	check_cntr("server: FI_REMOTE_READ", rread_cntr, rreads);
	check_cntr("server: FI_RECV", recv_cntr, 2 * (uint64_t) n_threads * n_iters);
	check_cq_empty("server");
	check_region();

	status = check_failures;
	ctl_write(sock, &status, sizeof(status));
	fi_close(&mr->fid);
	free(workers);
	free(untagged_seen);
	free(region);
}

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " [-a] [-t T] [-n N] [-r R] [-p PROV] [-E PORT] "
		"[SERVER]\n"
		"  -a        ask for FI_PROGRESS_AUTO\n"
		"  -t T      client threads (default 8, at most %d)\n"
		"  -n N      iterations per client thread (default 100, at most %d)\n"
		"  -r R      server threads posting receives (default 4)\n"
		"  -p PROV   provider (default mrail)\n"
		"  -E PORT   control connection port (default 47650)\n",
		MAX_THREADS, MAX_ITERS);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *prov = "mrail";
	bool auto_progress = false, client;
	unsigned port = 47650;
	int opt;

	ctl_prog = PROG;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "at:n:r:p:E:h")) != -1) {
		switch (opt) {
		case 'a': auto_progress = true; break;
		case 't': n_threads = (unsigned) atoi(optarg); break;
		case 'n': n_iters = (unsigned) atoi(optarg); break;
		case 'r': n_server_threads = (unsigned) atoi(optarg); break;
		case 'p': prov = optarg; break;
		case 'E': port = (unsigned) atoi(optarg); break;
		default: usage();
		}
	}
	if (!n_threads || n_threads > MAX_THREADS || !n_iters || n_iters > MAX_ITERS ||
	    !n_server_threads || n_server_threads > MAX_THREADS)
		usage();
	client = optind < argc;
	ctl_connect(client ? argv[optind] : NULL, port, &sock, 1);
	open_objects(prov, auto_progress, !client);
	if (client)
		run_client();
	else
		run_server();
	close_objects();
	close(sock);
	return check_summary(PROG);
}
