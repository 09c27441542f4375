/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_trigger: functional test of triggered operations (FI_TRIGGER
 * with FI_TRIGGER_THRESHOLD) and deferred work (FI_QUEUE_WORK,
 * FI_CANCEL_WORK, FI_FLUSH_WORK) between two processes.
 *
 *   server:  fi_mrail_trigger [-a] [-p PROV] [-E PORT]
 *   client:  fi_mrail_trigger [-a] [-p PROV] [-E PORT] SERVER
 *
 * The client arms operations on counters and moves the counters; the
 * server receives what fires (tagged receives that take any tag, in
 * arrival order), checks every byte and reports back over a TCP control
 * connection. Checked exactly:
 *  - nothing fires below its threshold (the server sees nothing for a
 *    while), and the operation fires once the counter reaches it;
 *  - thresholds fire in threshold order, then posting order, when the
 *    counter jumps past several at once;
 *  - a chain: a write fires on a counter, a send on the write counter, a
 *    fetch-add on the send counter; data, fetched values and completion
 *    order checked; triggered read and compare-swap;
 *  - FI_INJECT: the bytes sent are those of the buffer at posting time;
 *  - completions carry the fi_triggered_context, one per operation, and
 *    a fired operation that fails is an error completion with it;
 *  - fi_cancel before the threshold: one FI_ECANCELED completion, nothing
 *    sent after; a counter with armed operations refuses to close;
 *  - a triggered receive posted by the counter matches a message that
 *    arrived before it;
 *  - the server's reply fires from its recv counter while the server
 *    sleeps without any libfabric call (-a: FI_PROGRESS_AUTO), or waits
 *    in fi_cntr_wait (manual progress);
 *  - deferred work: fires on count + errors, counts on its completion
 *    counter and not on the endpoint's, writes a CQ entry only with
 *    FI_COMPLETION; FI_OP_CNTR_ADD chains; cancel and flush (all, or one
 *    triggering counter's); bad requests refused.
 * Prints "N of N checks passed" or the failed checks; exits 0 only if all
 * passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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
#include <rdma/fi_trigger.h>

#define PROG "fi_mrail_trigger"
#define WINDOW_LEN 65536
#define WINDOW_KEY 7
#define ATOMIC_OFF 4096		/* a uint64_t in the window */
#define MAX_RECVS 8
#define MSG_LEN 1024
#define PING_TAG 0x51
#define PONG_TAG 0x52
#define TRECV_TAG 0x53
#define QUIET_MS 300
#define WAIT_MS 20000

/* ---- objects ---- */

/* A CQ each way: cq for transmit, rx_cq for receive. */
static struct mrail_setup fab;
static struct fid_cntr *send_cntr, *recv_cntr, *write_cntr, *read_cntr;
static fi_addr_t peer;
static bool auto_progress;
static int ctl_sock;	/* the control connection */

/* A counter for a trigger to watch, bound to nothing. */
static struct fid_cntr *cntr_new(void)
{
	return setup_cntr(&fab, 0, FI_WAIT_UNSPEC);
}

static void open_objects(const char *prov)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 256,
				      .wait_obj = FI_WAIT_UNSPEC };

	setup_open(&fab, ctl_getinfo(prov, FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |
				     FI_READ | FI_WRITE | FI_REMOTE_READ |
				     FI_REMOTE_WRITE | FI_TRIGGER, 0, auto_progress),
		   &cq_attr, SETUP_SPLIT_CQ);
	send_cntr = setup_cntr(&fab, FI_SEND, FI_WAIT_UNSPEC);
	recv_cntr = setup_cntr(&fab, FI_RECV, FI_WAIT_UNSPEC);
	write_cntr = setup_cntr(&fab, FI_WRITE, FI_WAIT_UNSPEC);
	read_cntr = setup_cntr(&fab, FI_READ, FI_WAIT_UNSPEC);
	setup_enable(&fab);
}

/* ---- data ---- */

static void fill(uint8_t *p, size_t len, uint64_t tag)
{
	check_pattern_fill(p, len, tag);
}

static bool matches(const uint8_t *p, size_t len, uint64_t tag)
{
	return check_pattern_mismatch(p, len, tag) == len;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/*
 * One completion of cq within ms: 1 and *entry, or 0 on timeout. An error
 * completion is returned too, with *err filled in and -FI_EAVAIL.
 */
static int cq_next(struct fid_cq *cq, struct fi_cq_tagged_entry *entry,
		   struct fi_cq_err_entry *err, unsigned ms)
{
	uint64_t deadline = now_ms() + ms;
	ssize_t n;

	do {
		n = fi_cq_sread(cq, entry, 1, NULL, 10);
		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			if (fi_cq_readerr(cq, err, 0) == 1)
				return -FI_EAVAIL;
		} else if (n != -FI_EAGAIN && n != -FI_ETIMEDOUT) {
			ctl_die("fi_cq_sread", (int) n);
		}
	} while (now_ms() < deadline);
	return 0;
}

/* ---- control protocol ---- */

enum cmd_type {
	CMD_RECV = 1,	/* count receives of len bytes: tags in arrival order */
	CMD_QUIET,	/* nothing may arrive for QUIET_MS */
	CMD_WINDOW,	/* window[0, len) holds the pattern of tag arg */
	CMD_PONG,	/* reply to a ping from a trigger on the recv counter */
	CMD_TRECV_ARM,	/* arm a triggered receive of TRECV_TAG */
	CMD_TRECV_FIRE,	/* then move its counter: it must match */
	CMD_DONE,
};

struct cmd {
	uint32_t type;
	uint32_t count;
	uint64_t len;
	uint64_t arg;
};

struct reply {
	uint32_t ok;
	uint32_t count;
	uint64_t tags[MAX_RECVS];
	char why[160];
};

static void send_reply(struct reply *r)
{
	ctl_write(ctl_sock, r, sizeof(*r));
}

/* Drives the endpoint without taking completions off its CQs: with manual
 * progress, what fired must still leave while a process waits for its peer. */
static void progress(void)
{
	(void) fi_cntr_read(recv_cntr);
}

static struct reply ask(uint32_t type, uint32_t count, uint64_t len, uint64_t arg)
{
	struct cmd c = { .type = type, .count = count, .len = len, .arg = arg };
	struct reply r;

	ctl_write(ctl_sock, &c, sizeof(c));
	ctl_read(ctl_sock, &r, sizeof(r), auto_progress ? NULL : progress);
	r.why[sizeof(r.why) - 1] = '\0';
	return r;
}

/* ---- server ---- */

static uint8_t *window;
static struct fid_mr *window_mr;
static uint8_t rbuf[MAX_RECVS][MSG_LEN];

static void server_recv(const struct cmd *c, struct reply *r)
{
	struct fi_context ctx[MAX_RECVS];
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	uint32_t i;
	int ret;

	r->ok = 1;
	for (i = 0; i < c->count && i < MAX_RECVS; i++) {
		memset(rbuf[i], 0, sizeof(rbuf[i]));
		ret = (int) fi_trecv(fab.ep, rbuf[i], MSG_LEN, NULL, FI_ADDR_UNSPEC, 0,
				     ~0ULL, &ctx[i]);
		if (ret)
			ctl_die("fi_trecv", ret);
	}
	for (i = 0; i < c->count && i < MAX_RECVS; i++) {
		ret = cq_next(fab.rx_cq, &entry, &err, WAIT_MS);
		if (ret != 1) {
			r->ok = 0;
			snprintf(r->why, sizeof(r->why), "receive %u of %u: %s", i + 1,
				 c->count, ret ? fi_strerror(err.err) : "nothing arrived");
			return;
		}
		r->tags[r->count++] = entry.tag;
		/* Completions come in posting order, so entry i is rbuf[i]. */
		if (entry.op_context != &ctx[i] || entry.len != c->len ||
		    !matches(rbuf[i], c->len, entry.tag)) {
			r->ok = 0;
			snprintf(r->why, sizeof(r->why), "receive %u (tag %#" PRIx64
				 "): %zu bytes, context %s, data %s", i + 1, entry.tag,
				 entry.len, entry.op_context == &ctx[i] ? "right" : "wrong",
				 matches(rbuf[i], c->len, entry.tag) ? "right" : "wrong");
		}
	}
}

static void server_quiet(struct reply *r)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	struct fi_context ctx;
	int ret;

	ret = (int) fi_trecv(fab.ep, rbuf[0], MSG_LEN, NULL, FI_ADDR_UNSPEC, 0, ~0ULL, &ctx);
	if (ret)
		ctl_die("fi_trecv", ret);
	ret = cq_next(fab.rx_cq, &entry, &err, QUIET_MS);
	if (ret == 1) {
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "a message with tag %#" PRIx64
			 " arrived", entry.tag);
		return;
	}
	ret = (int) fi_cancel(&fab.ep->fid, &ctx);
	if (ret)
		ctl_die("fi_cancel of the quiet receive", ret);
	ret = cq_next(fab.rx_cq, &entry, &err, WAIT_MS);
	if (ret != -FI_EAVAIL || err.err != FI_ECANCELED || err.op_context != &ctx) {
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "the cancelled quiet receive did not "
			 "complete with FI_ECANCELED");
		return;
	}
	r->ok = 1;
}

/* A tagged send of MSG_LEN bytes of tag's pattern, armed on cntr. */
static ssize_t tsend_triggered(struct fi_triggered_context *tctx, struct fid_cntr *cntr,
			       size_t threshold, uint8_t *buf, size_t len, uint64_t tag,
			       fi_addr_t dest, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .tag = tag,
		.context = tctx,
	};

	tctx->event_type = FI_TRIGGER_THRESHOLD;
	tctx->trigger.threshold.cntr = cntr;
	tctx->trigger.threshold.threshold = threshold;
	return fi_tsendmsg(fab.ep, &msg, flags | FI_TRIGGER);
}

/*
 * The pong is armed on the recv counter before the ping can arrive, and
 * fires when the ping is received. With FI_PROGRESS_AUTO the server makes
 * no libfabric call at all until the client has seen the pong (it tells the
 * server so over the control connection).
 */
static void server_pong(struct reply *r)
{
	static uint8_t pong[MSG_LEN], ping[MSG_LEN];
	struct fi_triggered_context tctx;
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	struct fi_context ping_ctx;
	uint64_t received = fi_cntr_read(recv_cntr), sent = fi_cntr_read(send_cntr);
	uint32_t seen;
	ssize_t ret;

	fill(pong, MSG_LEN, PONG_TAG);
	ret = fi_trecv(fab.ep, ping, MSG_LEN, NULL, FI_ADDR_UNSPEC, PING_TAG, 0, &ping_ctx);
	if (!ret)
		ret = tsend_triggered(&tctx, recv_cntr, received + 1, pong, MSG_LEN,
				      PONG_TAG, peer, 0);
	if (ret)
		ctl_die("arming the pong", (int) ret);
	r->ok = 1;
	send_reply(r);		/* armed: the client may ping */
	/* Manual progress: the wait's progress fires the pong. Either way
	 * the server then waits for the client's word without progressing. */
	if (!auto_progress)
		(void) fi_cntr_wait(send_cntr, sent + 1, WAIT_MS);
	ctl_read(ctl_sock, &seen, sizeof(seen), NULL);
	memset(r, 0, sizeof(*r));
	r->ok = 1;
	if (cq_next(fab.rx_cq, &entry, &err, WAIT_MS) != 1 || entry.op_context != &ping_ctx ||
	    !matches(ping, MSG_LEN, PING_TAG)) {
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "the ping was not received intact");
	} else if (cq_next(fab.cq, &entry, &err, WAIT_MS) != 1 || entry.op_context != &tctx ||
		   entry.flags != (FI_SEND | FI_TAGGED)) {
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "the pong's send completion did not "
			 "come with its fi_triggered_context");
	} else if (fi_cntr_read(send_cntr) != sent + 1) {
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "the send counter moved by %" PRIu64,
			 fi_cntr_read(send_cntr) - sent);
	}
	r->count = seen;
}

static struct fi_triggered_context trecv_tctx;
static struct fid_cntr *trecv_cntr;

static void server_trecv_arm(struct reply *r)
{
	struct iovec iov = { .iov_base = rbuf[0], .iov_len = MSG_LEN };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = TRECV_TAG, .context = &trecv_tctx,
	};
	ssize_t ret;

	memset(rbuf[0], 0, MSG_LEN);
	trecv_cntr = cntr_new();
	trecv_tctx.event_type = FI_TRIGGER_THRESHOLD;
	trecv_tctx.trigger.threshold.cntr = trecv_cntr;
	trecv_tctx.trigger.threshold.threshold = 1;
	ret = fi_trecvmsg(fab.ep, &msg, FI_TRIGGER);
	r->ok = !ret;
	if (ret)
		snprintf(r->why, sizeof(r->why), "fi_trecvmsg(FI_TRIGGER): %s",
			 fi_strerror((int) -ret));
}

static void server_trecv_fire(struct reply *r)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	int ret;

	/* The message is here (the client saw its send complete), but the
	 * receive is not posted until the counter moves. */
	ret = cq_next(fab.rx_cq, &entry, &err, QUIET_MS);
	if (ret) {
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "the triggered receive completed "
			 "before its counter moved");
		return;
	}
	fi_cntr_add(trecv_cntr, 1);
	ret = cq_next(fab.rx_cq, &entry, &err, WAIT_MS);
	r->ok = ret == 1 && entry.op_context == &trecv_tctx && entry.tag == TRECV_TAG &&
		entry.len == MSG_LEN && matches(rbuf[0], MSG_LEN, TRECV_TAG);
	if (!r->ok)
		snprintf(r->why, sizeof(r->why), "the triggered receive: %s",
			 ret == 1 ? "wrong context, tag, length or data" :
			 ret ? fi_strerror(err.err) : "no completion");
	fi_close(&trecv_cntr->fid);
}

static void server_window(const struct cmd *c, struct reply *r)
{
	r->ok = matches(window, c->len, c->arg);
	if (!r->ok)
		snprintf(r->why, sizeof(r->why), "the window does not hold the "
			 "written pattern");
}

static void serve(void)
{
	struct cmd c;
	struct reply r;
	int ret;

	window = calloc(1, WINDOW_LEN);
	if (!window)
		ctl_die("calloc", ENOMEM);
	ret = fi_mr_reg(fab.domain, window, WINDOW_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE,
			0, WINDOW_KEY, 0, &window_mr, NULL);
	if (ret)
		ctl_die("fi_mr_reg of the window", ret);
	for (;;) {
		/* Manual progress: the client's RMA and atomics need ours. */
		ctl_read(ctl_sock, &c, sizeof(c), auto_progress ? NULL : progress);
		memset(&r, 0, sizeof(r));
		switch (c.type) {
		case CMD_RECV: server_recv(&c, &r); break;
		case CMD_QUIET: server_quiet(&r); break;
		case CMD_WINDOW: server_window(&c, &r); break;
		case CMD_PONG: server_pong(&r); break;
		case CMD_TRECV_ARM: server_trecv_arm(&r); break;
		case CMD_TRECV_FIRE: server_trecv_fire(&r); break;
		case CMD_DONE:
			fi_close(&window_mr->fid);
			free(window);
			send_reply(&r);
			return;
		default:
			ctl_die("unknown command", EINVAL);
		}
		check(r.ok, "server: command %u: %s", c.type, r.ok ? "ok" : r.why);
		send_reply(&r);
	}
}

/* ---- client ---- */

static uint8_t sbuf[MAX_RECVS][MSG_LEN];

/* The next transmit completion must be this context (and flags). */
static void expect_tx(const char *what, void *context, uint64_t flags)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	int ret = cq_next(fab.cq, &entry, &err, WAIT_MS);

	if (ret == 1)
		check(entry.op_context == context && entry.flags == flags,
		      "%s: completion with %s context, flags %#" PRIx64 " (want %#" PRIx64
		      ")", what, entry.op_context == context ? "its" : "another",
		      entry.flags, flags);
	else
		check(false, "%s: %s", what, ret ? fi_strerror(err.err) : "no completion");
}

/* The next count transmit completions carry these contexts, each once, in
 * any order: sends that went on different rails complete in rail order. */
static void expect_tx_set(const char *what, void **contexts, int count, uint64_t flags)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	bool seen[8] = { false };
	int i, j, ret, found = 0;

	for (i = 0; i < count; i++) {
		ret = cq_next(fab.cq, &entry, &err, WAIT_MS);
		if (ret != 1 || entry.flags != flags)
			break;
		for (j = 0; j < count; j++) {
			if (!seen[j] && entry.op_context == contexts[j]) {
				seen[j] = true;
				found++;
				break;
			}
		}
	}
	check(found == count, "%s: %d completions, each with its own context (%d found)",
	      what, count, found);
}

static void expect_tx_none(const char *what, unsigned ms)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	int ret = cq_next(fab.cq, &entry, &err, ms);

	check(ret == 0, "%s: no transmit completion (got %s)", what,
	      ret == 1 ? "a completion" : ret ? "an error" : "none");
}

static void expect_tx_error(const char *what, void *context, int want)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	int ret = cq_next(fab.cq, &entry, &err, WAIT_MS);

	check(ret == -FI_EAVAIL && err.op_context == context && err.err == want,
	      "%s: error completion %s with %s context", what,
	      ret == -FI_EAVAIL ? fi_strerror(err.err) : "missing",
	      ret == -FI_EAVAIL && err.op_context == context ? "its" : "another");
}

static void expect_recv(const char *what, uint32_t count, const uint64_t *tags)
{
	struct reply r = ask(CMD_RECV, count, MSG_LEN, 0);
	bool order = r.count == count;
	uint32_t i;

	for (i = 0; order && i < count; i++)
		order = r.tags[i] == tags[i];
	check(r.ok && order, "%s: the server received %u of %u messages intact, %s%s%s",
	      what, r.count, count, order ? "in the expected order" : "in the wrong order",
	      r.ok ? "" : ": ", r.ok ? "" : r.why);
}

static void expect_quiet(const char *what)
{
	struct reply r = ask(CMD_QUIET, 0, 0, 0);

	check(r.ok, "%s: nothing reached the server in %d ms%s%s", what, QUIET_MS,
	      r.ok ? "" : ": ", r.ok ? "" : r.why);
}

static void test_threshold(void)
{
	struct fid_cntr *trig = cntr_new();
	struct fi_triggered_context tctx;
	uint64_t tag = 0x100;

	fill(sbuf[0], MSG_LEN, tag);
	check(!tsend_triggered(&tctx, trig, 3, sbuf[0], MSG_LEN, tag, peer, 0),
	      "threshold: fi_tsendmsg(FI_TRIGGER) armed at 3");
	fi_cntr_add(trig, 1);
	fi_cntr_add(trig, 1);
	expect_quiet("threshold: counter at 2");
	expect_tx_none("threshold: counter at 2", 50);
	fi_cntr_add(trig, 1);
	expect_recv("threshold: counter at 3", 1, &tag);
	expect_tx("threshold: fired send", &tctx, FI_SEND | FI_TAGGED);
	expect_tx_none("threshold: exactly one completion", 100);
	fi_close(&trig->fid);
}

/* Thresholds 5, 3, 4, 3, 1 posted in that order: 1 fires alone, then a jump
 * to 10 fires the rest as 3 (first), 3 (second), 4, 5. */
static void test_order(void)
{
	static const size_t thresholds[5] = { 5, 3, 4, 3, 1 };
	const uint64_t first = 0x204, rest[4] = { 0x201, 0x203, 0x202, 0x200 };
	struct fid_cntr *trig = cntr_new();
	struct fi_triggered_context tctx[5];
	int i, ok = 0;

	for (i = 0; i < 5; i++) {
		fill(sbuf[i], MSG_LEN, 0x200 + (uint64_t) i);
		ok += !tsend_triggered(&tctx[i], trig, thresholds[i], sbuf[i], MSG_LEN,
				       0x200 + (uint64_t) i, peer, 0);
	}
	check(ok == 5, "order: 5 triggered sends armed");
	fi_cntr_add(trig, 2);
	expect_recv("order: counter at 2", 1, &first);
	expect_tx("order: threshold 1", &tctx[4], FI_SEND | FI_TAGGED);
	fi_cntr_set(trig, 10);
	/* The order is the receiver's: mrail delivers in send order. */
	expect_recv("order: counter set to 10", 4, rest);
	expect_tx_set("order: the other four", (void *[]) { &tctx[0], &tctx[1], &tctx[2],
							      &tctx[3] }, 4, FI_SEND | FI_TAGGED);
	expect_tx_none("order: five completions in all", 100);
	fi_close(&trig->fid);
}

/* write (on a fresh counter) -> send (on the write counter) -> fetch-add
 * (on the send counter) -> read and compare-swap. */
static void test_chain(void)
{
	struct fid_cntr *trig = cntr_new();
	struct fi_triggered_context t_write, t_send, t_fetch, t_read, t_cswap;
	uint64_t writes = fi_cntr_read(write_cntr), sends = fi_cntr_read(send_cntr);
	uint64_t reads = fi_cntr_read(read_cntr), tag = 0x300;
	static uint8_t wbuf[256], rdbuf[256];
	uint64_t add = 5, fetched = 99, compare = 5, swap = 77, cs_old = 99, now = 0;
	struct iovec wiov = { .iov_base = wbuf, .iov_len = sizeof(wbuf) };
	struct iovec riov = { .iov_base = rdbuf, .iov_len = sizeof(rdbuf) };
	struct fi_rma_iov rma = { .addr = 0, .len = sizeof(wbuf), .key = WINDOW_KEY };
	struct fi_rma_ioc rioc = { .addr = ATOMIC_OFF, .count = 1, .key = WINDOW_KEY };
	struct fi_ioc aioc = { .addr = &add, .count = 1 };
	struct fi_ioc fioc = { .addr = &fetched, .count = 1 };
	struct fi_ioc cioc = { .addr = &compare, .count = 1 };
	struct fi_ioc sioc = { .addr = &swap, .count = 1 };
	struct fi_ioc oioc = { .addr = &cs_old, .count = 1 };
	struct fi_msg_rma wmsg = { .msg_iov = &wiov, .iov_count = 1, .addr = peer,
				   .rma_iov = &rma, .rma_iov_count = 1, .context = &t_write };
	struct fi_msg_rma rmsg = { .msg_iov = &riov, .iov_count = 1, .addr = peer,
				   .rma_iov = &rma, .rma_iov_count = 1, .context = &t_read };
	struct fi_msg_atomic amsg = { .msg_iov = &aioc, .iov_count = 1, .addr = peer,
				      .rma_iov = &rioc, .rma_iov_count = 1,
				      .datatype = FI_UINT64, .op = FI_SUM,
				      .context = &t_fetch };
	struct fi_msg_atomic cmsg = { .msg_iov = &sioc, .iov_count = 1, .addr = peer,
				      .rma_iov = &rioc, .rma_iov_count = 1,
				      .datatype = FI_UINT64, .op = FI_CSWAP,
				      .context = &t_cswap };
	struct fi_triggered_context *all[] = { &t_write, &t_send, &t_fetch, &t_read,
					       &t_cswap };
	struct fid_cntr *on[] = { trig, write_cntr, send_cntr, read_cntr, read_cntr };
	size_t at[] = { 1, writes + 1, sends + 1, reads + 1, reads + 2 };
	struct reply r;
	int i;

	fill(wbuf, sizeof(wbuf), 9);
	fill(sbuf[0], MSG_LEN, tag);
	for (i = 0; i < 5; i++) {
		all[i]->event_type = FI_TRIGGER_THRESHOLD;
		all[i]->trigger.threshold.cntr = on[i];
		all[i]->trigger.threshold.threshold = at[i];
	}
	check(!fi_writemsg(fab.ep, &wmsg, FI_TRIGGER), "chain: triggered write armed");
	check(!tsend_triggered(&t_send, write_cntr, writes + 1, sbuf[0], MSG_LEN, tag,
			       peer, 0), "chain: triggered send armed");
	check(!fi_fetch_atomicmsg(fab.ep, &amsg, &fioc, NULL, 1, FI_TRIGGER),
	      "chain: triggered fetch-add armed");
	check(!fi_readmsg(fab.ep, &rmsg, FI_TRIGGER), "chain: triggered read armed");
	check(!fi_compare_atomicmsg(fab.ep, &cmsg, &cioc, NULL, 1, &oioc, NULL, 1, FI_TRIGGER),
	      "chain: triggered compare-swap armed");
	expect_tx_none("chain: nothing before the first counter moves", 100);
	fi_cntr_add(trig, 1);
	expect_tx("chain: write", &t_write, FI_RMA | FI_WRITE);
	expect_tx("chain: send", &t_send, FI_SEND | FI_TAGGED);
	expect_tx("chain: fetch-add", &t_fetch, FI_ATOMIC | FI_READ);
	expect_tx("chain: read", &t_read, FI_RMA | FI_READ);
	expect_tx("chain: compare-swap", &t_cswap, FI_ATOMIC | FI_READ);
	expect_recv("chain: the send", 1, &tag);
	r = ask(CMD_WINDOW, 0, sizeof(wbuf), 9);
	check(r.ok, "chain: the write landed in the window");
	check(matches(rdbuf, sizeof(rdbuf), 9), "chain: the read brought the written bytes");
	check(fetched == 0 && cs_old == 5, "chain: fetch-add fetched %" PRIu64 " (want 0), "
	      "compare-swap found %" PRIu64 " (want 5)", fetched, cs_old);
	check(!fi_fetch_atomic(fab.ep, &add, 1, NULL, &now, NULL, peer, ATOMIC_OFF, WINDOW_KEY,
			       FI_UINT64, FI_ATOMIC_READ, &now), "chain: read back the word");
	expect_tx("chain: read back", &now, FI_ATOMIC | FI_READ);
	check(now == 77, "chain: the word is %" PRIu64 " after the swap (want 77)", now);
	check(fi_cntr_read(write_cntr) == writes + 1 && fi_cntr_read(send_cntr) == sends + 1,
	      "chain: the write and send counters moved by exactly one");
	fi_close(&trig->fid);
}

static void test_inject(void)
{
	struct fid_cntr *trig = cntr_new();
	struct fi_triggered_context tctx;
	uint64_t tag = 0x400, sends = fi_cntr_read(send_cntr);

	fill(sbuf[0], MSG_LEN, tag);
	check(!tsend_triggered(&tctx, trig, 1, sbuf[0], MSG_LEN, tag, peer, FI_INJECT),
	      "inject: triggered FI_INJECT send armed");
	memset(sbuf[0], 0xab, MSG_LEN);		/* reusable once the call returned */
	fi_cntr_add(trig, 1);
	expect_recv("inject: the bytes of posting time arrive", 1, &tag);
	/* As fi_tsendmsg(FI_INJECT) does (fi_msg(3)): the flag frees the
	 * buffer at return, the send still completes, once. */
	expect_tx("inject: it completes with its triggered context", &tctx,
		  FI_SEND | FI_TAGGED);
	expect_tx_none("inject: exactly one completion", 100);
	check(fi_cntr_read(send_cntr) == sends + 1, "inject: the send counter counts it");
	fi_close(&trig->fid);
}

static void test_errors(void)
{
	struct fid_cntr *trig = cntr_new();
	struct fi_triggered_context tctx;
	uint64_t errs = fi_cntr_readerr(send_cntr);
	struct iovec iov = { .iov_base = sbuf[0], .iov_len = 8 };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
			      .context = &tctx };
	ssize_t ret;

	/* A bad destination is found when the send is issued. */
	check(!tsend_triggered(&tctx, trig, 1, sbuf[0], 8, 0x500, 4242, 0),
	      "errors: send to an unknown fi_addr armed");
	fi_cntr_add(trig, 1);
	expect_tx_error("errors: it fails when it fires", &tctx, FI_EINVAL);
	check(fi_cntr_readerr(send_cntr) == errs + 1, "errors: the send counter's error "
	      "count moved by one");
	tctx.event_type = FI_TRIGGER_XPU;
	ret = fi_sendmsg(fab.ep, &msg, FI_TRIGGER);
	check(ret == -FI_ENOSYS, "errors: FI_TRIGGER_XPU refused with -FI_ENOSYS (%zd)", ret);
	tctx.event_type = FI_TRIGGER_THRESHOLD;
	tctx.trigger.threshold.cntr = NULL;
	ret = fi_sendmsg(fab.ep, &msg, FI_TRIGGER);
	check(ret == -FI_EINVAL, "errors: no counter refused with -FI_EINVAL (%zd)", ret);
	tctx.trigger.threshold.cntr = trig;
	ret = fi_recvmsg(fab.ep, &msg, FI_TRIGGER | FI_MULTI_RECV);
	check(ret == -FI_EINVAL, "errors: a triggered FI_MULTI_RECV refused (%zd)", ret);
	tctx.trigger.threshold.threshold = 5;
	ret = fi_sendmsg(fab.ep, &msg, FI_TRIGGER);
	check(ret == 0, "errors: armed at 5");
	ret = fi_sendmsg(fab.ep, &msg, FI_TRIGGER);
	check(ret == -FI_EBUSY, "errors: one context armed twice refused (%zd)", ret);
	check(fi_cancel(&fab.ep->fid, &tctx) == 0, "errors: the armed one cancelled");
	expect_tx_error("errors: its FI_ECANCELED completion", &tctx, FI_ECANCELED);
	expect_tx_none("errors: nothing else", 100);
	fi_close(&trig->fid);
}

static void test_cancel(void)
{
	struct fid_cntr *trig = cntr_new();
	struct fi_triggered_context tctx;
	int ret;

	fill(sbuf[0], MSG_LEN, 0x600);
	check(!tsend_triggered(&tctx, trig, 100, sbuf[0], MSG_LEN, 0x600, peer, 0),
	      "cancel: armed at 100");
	ret = fi_close(&trig->fid);
	check(ret == -FI_EBUSY, "cancel: a counter with an armed operation refuses to "
	      "close (%d)", ret);
	check(fi_cancel(&fab.ep->fid, &tctx) == 0, "cancel: fi_cancel");
	expect_tx_error("cancel: one FI_ECANCELED completion", &tctx, FI_ECANCELED);
	check(fi_cancel(&fab.ep->fid, &tctx) == -FI_ENOENT, "cancel: a second fi_cancel finds "
	      "nothing");
	fi_cntr_add(trig, 100);
	expect_quiet("cancel: the counter reaches 100 and nothing is sent");
	expect_tx_none("cancel: nothing more completes", 50);
	check(fi_close(&trig->fid) == 0, "cancel: the counter closes once nothing is armed");
}

static void test_trecv(void)
{
	struct reply r = ask(CMD_TRECV_ARM, 0, 0, 0);
	struct fi_context ctx;

	check(r.ok, "triggered receive: armed at the server%s%s", r.ok ? "" : ": ", r.why);
	fill(sbuf[0], MSG_LEN, TRECV_TAG);
	check(!fi_tsend(fab.ep, sbuf[0], MSG_LEN, NULL, peer, TRECV_TAG, &ctx),
	      "triggered receive: message sent before it is posted");
	expect_tx("triggered receive: the message went", &ctx, FI_SEND | FI_TAGGED);
	r = ask(CMD_TRECV_FIRE, 0, 0, 0);
	check(r.ok, "triggered receive: posted by its counter, it matched the waiting "
	      "message%s%s", r.ok ? "" : ": ", r.why);
}

static void test_pong(void)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	struct fi_context ctx, pctx;
	static uint8_t pong[MSG_LEN];
	struct reply r;
	uint32_t seen;
	int ret;

	r = ask(CMD_PONG, 0, 0, 0);
	check(r.ok, "pong: armed at the server");
	ret = (int) fi_trecv(fab.ep, pong, MSG_LEN, NULL, peer, PONG_TAG, 0, &pctx);
	fill(sbuf[0], MSG_LEN, PING_TAG);
	if (!ret)
		ret = (int) fi_tsend(fab.ep, sbuf[0], MSG_LEN, NULL, peer, PING_TAG, &ctx);
	check(!ret, "pong: ping sent");
	expect_tx("pong: ping", &ctx, FI_SEND | FI_TAGGED);
	ret = cq_next(fab.rx_cq, &entry, &err, WAIT_MS);
	seen = ret == 1 && entry.op_context == &pctx && matches(pong, MSG_LEN, PONG_TAG);
	check(seen, "pong: the server's triggered reply arrived intact, %s",
	      auto_progress ? "the server making no libfabric call (FI_PROGRESS_AUTO)" :
	      "the server waiting in fi_cntr_wait");
	ctl_write(ctl_sock, &seen, sizeof(seen));
	ctl_read(ctl_sock, &r, sizeof(r), NULL);
	check(r.ok, "pong: the server's completions%s%s", r.ok ? "" : ": ", r.why);
}

/* ---- endpoint aliases ---- */

/* fi_ep_alias: an alias whose transmit default is FI_TRIGGER turns a plain
 * fi_tsend into a triggered one (as fi_rdm_rma_trigger uses it), and one
 * with no flags sends like the endpoint; both complete on the endpoint's
 * CQ, once. */
static void test_alias(void)
{
	struct fid_cntr *trig = cntr_new();
	struct fi_triggered_context tctx = { .event_type = FI_TRIGGER_THRESHOLD };
	struct fid_ep *trig_alias = NULL, *plain = NULL, *bad = NULL;
	uint64_t flags, tag = 0x900, ep_flags = FI_TRANSMIT;
	struct fi_context ctx;
	ssize_t ret;

	check(fi_control(&fab.ep->fid, FI_GETOPSFLAG, &ep_flags) == 0,
	      "alias: the endpoint's transmit flags");
	ret = fi_ep_alias(fab.ep, &trig_alias, FI_TRANSMIT | FI_TRIGGER);
	check(!ret && trig_alias, "alias: fi_ep_alias(FI_TRANSMIT | FI_TRIGGER) (%zd)", ret);
	if (ret)
		goto out;
	flags = FI_TRANSMIT;
	check(fi_control(&trig_alias->fid, FI_GETOPSFLAG, &flags) == 0 &&
	      flags == (FI_TRANSMIT | FI_TRIGGER),
	      "alias: its transmit flags are FI_TRIGGER alone (%#llx)",
	      (unsigned long long) flags);
	flags = FI_TRANSMIT;
	check(fi_control(&fab.ep->fid, FI_GETOPSFLAG, &flags) == 0 && flags == ep_flags,
	      "alias: the endpoint's transmit flags did not change");
	tctx.trigger.threshold.cntr = trig;
	tctx.trigger.threshold.threshold = 2;
	fill(sbuf[0], MSG_LEN, tag);
	ret = fi_tsend(trig_alias, sbuf[0], MSG_LEN, NULL, peer, tag, &tctx);
	check(!ret, "alias: fi_tsend through it is armed (%zd)", ret);
	fi_cntr_add(trig, 1);
	expect_quiet("alias: counter at 1");
	fi_cntr_add(trig, 1);
	expect_recv("alias: counter at 2 fired the plain fi_tsend", 1, &tag);
	expect_tx("alias: its completion on the endpoint's CQ", &tctx,
		  FI_SEND | FI_TAGGED);

	ret = fi_ep_alias(fab.ep, &plain, 0);
	check(!ret, "alias: fi_ep_alias with no flags (%zd)", ret);
	if (!ret) {
		tag = 0x901;
		fill(sbuf[1], MSG_LEN, tag);
		ret = fi_tsend(plain, sbuf[1], MSG_LEN, NULL, peer, tag, &ctx);
		check(!ret, "alias: a plain alias sends at once (%zd)", ret);
		expect_recv("alias: the plain alias's send arrived", 1, &tag);
		expect_tx("alias: its completion", &ctx, FI_SEND | FI_TAGGED);
	}
	expect_tx_none("alias: exactly one completion each", 100);

	check(fi_ep_alias(fab.ep, &bad, FI_TRANSMIT | FI_RECV) == -FI_EINVAL && !bad,
	      "alias: both sides named refused");
	check(fi_ep_alias(fab.ep, &bad, FI_RECV | FI_DELIVERY_COMPLETE) == -FI_EBADFLAGS &&
	      !bad, "alias: a transmit flag on the receive side refused");
	check(fi_close(&fab.ep->fid) == -FI_EBUSY,
	      "alias: the endpoint refuses to close while aliases are open");
	if (plain)
		check(fi_close(&plain->fid) == 0, "alias: the plain alias closes");
	check(fi_close(&trig_alias->fid) == 0, "alias: the triggering alias closes");
out:
	fi_close(&trig->fid);
}

/* ---- deferred work ---- */

static struct fi_deferred_work *dw_send(struct fi_deferred_work *dw, struct fi_op_tagged *op,
					struct fid_cntr *trig, uint64_t threshold,
					struct fid_cntr *done, uint64_t tag, uint64_t flags,
					struct iovec *iov)
{
	memset(dw, 0, sizeof(*dw));
	memset(op, 0, sizeof(*op));
	op->ep = fab.ep;
	op->msg.msg_iov = iov;
	op->msg.iov_count = 1;
	op->msg.addr = peer;
	op->msg.tag = tag;
	op->flags = flags;
	dw->threshold = threshold;
	dw->triggering_cntr = trig;
	dw->completion_cntr = done;
	dw->op_type = FI_OP_TSEND;
	dw->op.tagged = op;
	return dw;
}

static void test_deferred(void)
{
	struct fid_cntr *trig = cntr_new(), *done = cntr_new(), *u = cntr_new();
	struct fid_cntr *t5 = cntr_new(), *t6 = cntr_new(), *t7;
	struct fi_deferred_work dw[6], bad;
	struct fi_op_tagged op[6];
	struct fi_op_cntr add = { .cntr = u, .value = 5 };
	struct iovec iov[6];
	uint64_t sends = fi_cntr_read(send_cntr), tag;
	int i, ret;

	for (i = 0; i < 6; i++) {
		fill(sbuf[i], MSG_LEN, 0x700 + (uint64_t) i);
		iov[i] = (struct iovec) { .iov_base = sbuf[i], .iov_len = MSG_LEN };
	}
	/* Count plus errors reach 2; the completion counter, not the CQ. */
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[0], &op[0], trig, 2, done, 0x700, 0, &iov[0]));
	check(!ret, "deferred: FI_QUEUE_WORK of a send at 2 (%d)", ret);
	fi_cntr_add(trig, 1);
	expect_quiet("deferred: count 1");
	fi_cntr_adderr(trig, 1);
	tag = 0x700;
	expect_recv("deferred: count 1 + 1 error fires it", 1, &tag);
	check(!fi_cntr_wait(done, 1, WAIT_MS), "deferred: the completion counter reached 1");
	expect_tx_none("deferred: no CQ entry without FI_COMPLETION", 100);
	check(fi_cntr_read(send_cntr) == sends, "deferred: the endpoint's send counter "
	      "did not count it");

	/* FI_COMPLETION: a CQ entry with the fi_deferred_work as context. */
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[1], &op[1], trig, 2, done, 0x701, FI_COMPLETION,
				 &iov[1]));
	check(!ret, "deferred: FI_COMPLETION work, threshold already reached (%d)", ret);
	tag = 0x701;
	expect_recv("deferred: issued at once", 1, &tag);
	expect_tx("deferred: its CQ entry", &dw[1], FI_SEND | FI_TAGGED);
	check(!fi_cntr_wait(done, 2, WAIT_MS), "deferred: the completion counter reached 2");

	/* A counter operation chains into a send. */
	memset(&dw[2], 0, sizeof(dw[2]));
	dw[2].threshold = 1;
	dw[2].triggering_cntr = t6;
	dw[2].op_type = FI_OP_CNTR_ADD;
	dw[2].op.cntr = &add;
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[3], &op[3], u, 5, done, 0x703, 0, &iov[3]));
	ret = ret ? ret : fi_control(&fab.domain->fid, FI_QUEUE_WORK, &dw[2]);
	check(!ret, "deferred: FI_OP_CNTR_ADD on one counter, a send on its target (%d)",
	      ret);
	fi_cntr_add(t6, 1);
	tag = 0x703;
	expect_recv("deferred: the add fired the send", 1, &tag);
	check(fi_cntr_read(u) == 5, "deferred: the added-to counter is 5 (%" PRIu64 ")",
	      fi_cntr_read(u));
	check(!fi_cntr_wait(done, 3, WAIT_MS), "deferred: the completion counter reached 3");

	/* Cancel one; flush one counter's; flush all. */
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[4], &op[4], trig, 100, done, 0x704, 0, &iov[4]));
	check(!ret, "deferred: queued at 100");
	check(fi_control(&fab.domain->fid, FI_CANCEL_WORK, &dw[4]) == 0,
	      "deferred: FI_CANCEL_WORK");
	check(fi_control(&fab.domain->fid, FI_CANCEL_WORK, &dw[4]) == -FI_ENOENT,
	      "deferred: a second FI_CANCEL_WORK finds nothing");
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[4], &op[4], t5, 1, done, 0x704, 0, &iov[4]));
	ret = ret ? ret : fi_control(&fab.domain->fid, FI_QUEUE_WORK,
				     dw_send(&dw[5], &op[5], t6, 2, done, 0x705, 0, &iov[5]));
	check(!ret, "deferred: one queued on each of two counters");
	memset(&bad, 0, sizeof(bad));
	bad.triggering_cntr = t5;
	check(fi_control(&fab.domain->fid, FI_FLUSH_WORK, &bad) == 0,
	      "deferred: FI_FLUSH_WORK of one counter's work");
	fi_cntr_add(trig, 200);
	fi_cntr_add(t5, 5);
	expect_quiet("deferred: cancelled and flushed work does not fire");
	fi_cntr_add(t6, 1);
	tag = 0x705;
	expect_recv("deferred: the other counter's work still fires", 1, &tag);
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[4], &op[4], t5, 1000, done, 0x704, 0, &iov[4]));
	check(!ret && fi_close(&t5->fid) == -FI_EBUSY,
	      "deferred: a counter with queued work refuses to close");
	check(fi_control(&fab.domain->fid, FI_FLUSH_WORK, NULL) == 0,
	      "deferred: FI_FLUSH_WORK");
	fi_cntr_add(t5, 1000);
	expect_quiet("deferred: flushed work does not fire");
	check(fi_cntr_read(done) == 4, "deferred: the completion counter counted 4 "
	      "(%" PRIu64 ")", fi_cntr_read(done));
	expect_tx_none("deferred: no CQ entries", 50);

	/* One struct fi_deferred_work queued twice while the first request
	 * waits, its operation described anew in between (as
	 * fi_rdm_deferred_wq does): a request is copied when queued, so both
	 * fire, once each, each with the data it was queued with. */
	t7 = cntr_new();
	fill(sbuf[0], MSG_LEN, 0x710);
	fill(sbuf[1], MSG_LEN, 0x711);
	iov[0] = (struct iovec) { .iov_base = sbuf[0], .iov_len = MSG_LEN };
	iov[1] = (struct iovec) { .iov_base = sbuf[1], .iov_len = MSG_LEN };
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[0], &op[0], t7, 2, done, 0x710, 0, &iov[0]));
	ret = ret ? ret : fi_control(&fab.domain->fid, FI_QUEUE_WORK,
				     dw_send(&dw[0], &op[0], t7, 3, done, 0x711, 0,
					     &iov[1]));
	check(!ret, "deferred reuse: one struct queued twice while pending (%d)", ret);
	fi_cntr_add(t7, 2);
	tag = 0x710;
	expect_recv("deferred reuse: the first request fired at 2", 1, &tag);
	fi_cntr_add(t7, 1);
	tag = 0x711;
	expect_recv("deferred reuse: the second request fired at 3", 1, &tag);
	check(!fi_cntr_wait(done, 6, WAIT_MS) && fi_cntr_read(done) == 6,
	      "deferred reuse: the completion counter counted both (%" PRIu64 ")",
	      fi_cntr_read(done));
	/* Completed: the same struct again, at a threshold already reached. */
	fill(sbuf[2], MSG_LEN, 0x712);
	iov[2] = (struct iovec) { .iov_base = sbuf[2], .iov_len = MSG_LEN };
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[0], &op[0], t7, 3, done, 0x712, 0, &iov[2]));
	check(!ret, "deferred reuse: queued again once completed (%d)", ret);
	tag = 0x712;
	expect_recv("deferred reuse: fired at once", 1, &tag);
	check(!fi_cntr_wait(done, 7, WAIT_MS), "deferred reuse: counted 7");
	/* FI_CANCEL_WORK cancels every waiting request made with the struct. */
	ret = fi_control(&fab.domain->fid, FI_QUEUE_WORK,
			 dw_send(&dw[0], &op[0], t7, 50, done, 0x713, 0, &iov[0]));
	ret = ret ? ret : fi_control(&fab.domain->fid, FI_QUEUE_WORK,
				     dw_send(&dw[0], &op[0], t7, 60, done, 0x714, 0,
					     &iov[1]));
	check(!ret && fi_control(&fab.domain->fid, FI_CANCEL_WORK, &dw[0]) == 0 &&
	      fi_control(&fab.domain->fid, FI_CANCEL_WORK, &dw[0]) == -FI_ENOENT,
	      "deferred reuse: FI_CANCEL_WORK took both requests, then none");
	fi_cntr_add(t7, 100);
	expect_quiet("deferred reuse: the cancelled requests do not fire");
	check(fi_cntr_read(done) == 7, "deferred reuse: nothing more counted (%" PRIu64 ")",
	      fi_cntr_read(done));
	expect_tx_none("deferred reuse: no CQ entries", 50);
	fi_close(&t7->fid);

	/* Bad requests. */
	check(fi_control(&fab.domain->fid, FI_QUEUE_WORK, NULL) == -FI_EINVAL,
	      "deferred: no request refused");
	dw_send(&bad, &op[0], NULL, 1, NULL, 0x7ff, 0, &iov[0]);
	check(fi_control(&fab.domain->fid, FI_QUEUE_WORK, &bad) == -FI_EINVAL,
	      "deferred: no triggering counter refused");
	memset(&bad, 0, sizeof(bad));
	bad.triggering_cntr = trig;
	bad.completion_cntr = done;
	bad.op_type = FI_OP_CNTR_SET;
	bad.op.cntr = &add;
	check(fi_control(&fab.domain->fid, FI_QUEUE_WORK, &bad) == -FI_EINVAL,
	      "deferred: a counter operation with a completion counter refused");
	bad.op_type = (enum fi_op_type) 99;
	check(fi_control(&fab.domain->fid, FI_QUEUE_WORK, &bad) == -FI_ENOSYS,
	      "deferred: an unknown operation type refused with -FI_ENOSYS");
	check(fi_cntr_read(send_cntr) == sends, "deferred: the endpoint's send counter "
	      "never counted deferred work");
	fi_close(&trig->fid);
	fi_close(&done->fid);
	fi_close(&u->fid);
	fi_close(&t5->fid);
	fi_close(&t6->fid);
}

static void run_client(void)
{
	test_threshold();
	test_order();
	test_chain();
	test_inject();
	test_errors();
	test_cancel();
	test_trecv();
	test_pong();
	test_deferred();
	test_alias();
	ask(CMD_DONE, 0, 0, 0);
}

int main(int argc, char **argv)
{
	const char *prov = "mrail";
	unsigned port = 47630;
	int opt;

	ctl_prog = PROG;
	while ((opt = getopt(argc, argv, "ap:E:vh")) != -1) {
		switch (opt) {
		case 'a': auto_progress = true; break;
		case 'p': prov = optarg; break;
		case 'E': port = (unsigned) atoi(optarg); break;
		case 'v': check_verbose = true; break;
		default:
			fprintf(stderr, "usage: %s [-a] [-p PROV] [-E PORT] [-v] [SERVER]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	open_objects(prov);
	ctl_connect(optind < argc ? argv[optind] : NULL, port, &ctl_sock, 1);
	peer = ctl_swap_names(ctl_sock, fab.ep, fab.av);
	if (optind < argc)
		run_client();
	else
		serve();
	close(ctl_sock);
	setup_close(&fab, NULL, 0);
	printf("%s: %d of %d checks passed\n", PROG, check_count - check_failures,
	       check_count);
	return check_failures ? 1 : 0;
}
