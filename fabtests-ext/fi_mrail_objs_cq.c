/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs -t counters and -t cq: counter values and waits, CQ formats,
 * waits, fds, injects and errors; and the self-endpoint (an endpoint that
 * sends to its own address) the other sections send with.
 */
#include "fi_mrail_objs.h"

/* ---- counters ---- */

int open_cntr(struct fid_domain *domain, enum fi_wait_obj wait_obj,
		     struct fid_cntr **cntr)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP,
		.wait_obj = wait_obj,
	};

	return fi_cntr_open(domain, &attr, cntr, NULL);
}

static void test_cntr_values(struct fid_cntr *cntr)
{
	check_what(fi_cntr_read(cntr) == 0 && fi_cntr_readerr(cntr) == 0,
	      "a new counter reads 0 and 0 errors", NULL);
	check_what(fi_cntr_add(cntr, 5) == 0 && fi_cntr_read(cntr) == 5, "add 5: 5", NULL);
	check_what(fi_cntr_add(cntr, 3) == 0 && fi_cntr_read(cntr) == 8, "add 3: 8", NULL);
	check_what(fi_cntr_set(cntr, 2) == 0 && fi_cntr_read(cntr) == 2, "set 2: 2", NULL);
	check_what(fi_cntr_adderr(cntr, 4) == 0 && fi_cntr_readerr(cntr) == 4 &&
	      fi_cntr_read(cntr) == 2, "adderr 4: 4 errors, count still 2", NULL);
	check_what(fi_cntr_seterr(cntr, 1) == 0 && fi_cntr_readerr(cntr) == 1 &&
	      fi_cntr_read(cntr) == 2, "seterr 1: 1 error, count still 2", NULL);
	check_what(fi_cntr_add(cntr, UINT64_MAX - 2) == 0 && fi_cntr_read(cntr) == UINT64_MAX,
	      "add up to UINT64_MAX", NULL);
	check_what(fi_cntr_set(cntr, 2) == 0 && fi_cntr_read(cntr) == 2, "set back to 2",
	      NULL);
}

static void test_cntr_wait(struct fid_cntr *cntr)
{
	struct later later;
	int64_t start, took;
	int ret;

	check_what(fi_cntr_wait(cntr, 2, 0) == 0, "wait for a threshold already met", NULL);
	check_what(fi_cntr_wait(cntr, 0, -1) == 0, "wait for threshold 0", NULL);
	ret = fi_cntr_wait(cntr, 3, 0);
	check_what(ret == -FI_ETIMEDOUT, "wait with timeout 0 below the threshold",
	      "returned %d", ret);

	start = now_ns();
	ret = fi_cntr_wait(cntr, 3, 200);
	took = now_ns() - start;
	check_what(ret == -FI_ETIMEDOUT && took >= 200 * 1000000LL && fi_cntr_read(cntr) == 2,
	      "wait times out, not before 200 ms", "returned %d after %lld us", ret,
	      (long long) took / 1000);

	step = "fi_cntr_wait woken by fi_cntr_add from another thread";
	later_start(&later, LATER_CNTR_ADD, cntr, 5);
	ret = fi_cntr_wait(cntr, 7, -1);
	check_what(ret == 0 && fi_cntr_read(cntr) == 7 && later_join(&later) == 0,
	      "wait(7, infinite) is woken by an add from another thread",
	      "returned %d, count %llu", ret, (unsigned long long) fi_cntr_read(cntr));

	step = "fi_cntr_wait for three adds of 1";
	later_start(&later, LATER_CNTR_ADD_STEPS, cntr, 3);
	start = now_ns();
	ret = fi_cntr_wait(cntr, 10, 10000);
	took = now_ns() - start;
	check_what(ret == 0 && fi_cntr_read(cntr) == 10,
	      "wait(10) returns only after the third of three adds",
	      "returned %d after %lld us, count %llu", ret, (long long) took / 1000,
	      (unsigned long long) fi_cntr_read(cntr));
	check_what(later_join(&later) == 0 && took >= 2 * (LATER_MS / 2) * 1000000LL,
	      "... which came at least 100 ms after the first", NULL);

	step = "fi_cntr_wait woken by an error";
	later_start(&later, LATER_CNTR_ADDERR, cntr, 1);
	ret = fi_cntr_wait(cntr, 1000, -1);
	check_what(ret == -FI_EAVAIL && later_join(&later) == 0 &&
	      fi_cntr_readerr(cntr) == 2 && fi_cntr_read(cntr) == 10,
	      "a change of the error count ends the wait with -FI_EAVAIL",
	      "returned %d, errors %llu", ret,
	      (unsigned long long) fi_cntr_readerr(cntr));
	step = "counters";
}

static void test_cntr_fd(struct fid_fabric *fabric, struct fid_domain *domain)
{
	struct fid_cntr *cntr = NULL;
	enum fi_wait_obj obj = FI_WAIT_NONE;
	struct fid *fids[1];
	struct pollfd pfd;
	struct later later;
	int fd = -1, ret;

	ret = open_cntr(domain, FI_WAIT_FD, &cntr);
	check_what(ret == 0, "open a counter with FI_WAIT_FD", "%s", fi_strerror(-ret));
	if (ret)
		return;
	fids[0] = &cntr->fid;
	ret = fi_control(&cntr->fid, FI_GETWAIT, &fd);
	check_what(ret == 0 && fd >= 0, "FI_GETWAIT gives an fd", "returned %d, fd %d", ret,
	      fd);
	check_what(fi_control(&cntr->fid, FI_GETWAITOBJ, &obj) == 0 && obj == FI_WAIT_FD,
	      "FI_GETWAITOBJ says FI_WAIT_FD", NULL);
	if (fd < 0)
		goto out;
	check_what(!readable(fd) && fi_trywait(fabric, fids, 1) == 0,
	      "an unchanged counter: fd not readable, fi_trywait 0", NULL);
	fi_cntr_add(cntr, 1);
	check_what(readable(fd) && fi_trywait(fabric, fids, 1) == -FI_EAGAIN,
	      "after an add: fd readable, fi_trywait -FI_EAGAIN", NULL);
	check_what(fi_cntr_read(cntr) == 1 && !readable(fd) &&
	      fi_trywait(fabric, fids, 1) == 0,
	      "reading the counter drains the fd", NULL);
	fi_cntr_adderr(cntr, 1);
	check_what(readable(fd), "an error makes the fd readable", NULL);
	check_what(fi_cntr_readerr(cntr) == 1 && !readable(fd),
	      "reading the error count drains the fd", NULL);
	fi_cntr_set(cntr, 5);
	check_what(readable(fd) && fi_cntr_read(cntr) == 5 && !readable(fd),
	      "a set makes it readable, a read drains it", NULL);

	step = "poll on a counter's fd until another thread adds";
	check_what(fi_trywait(fabric, fids, 1) == 0, "fi_trywait before blocking", NULL);
	later_start(&later, LATER_CNTR_ADD, cntr, 2);
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	ret = poll(&pfd, 1, -1);
	check_what(ret == 1 && (pfd.revents & POLLIN) && later_join(&later) == 0 &&
	      fi_cntr_read(cntr) == 7,
	      "poll(fd) wakes when another thread adds 2", "poll %d", ret);

	step = "fi_cntr_wait on an FI_WAIT_FD counter";
	later_start(&later, LATER_CNTR_ADD, cntr, 1);
	ret = fi_cntr_wait(cntr, 8, -1);
	check_what(ret == 0 && later_join(&later) == 0 && fi_cntr_read(cntr) == 8,
	      "fi_cntr_wait on an FI_WAIT_FD counter", "returned %d", ret);
	step = "counters";
out:
	check_what(fi_close(&cntr->fid) == 0, "close the FI_WAIT_FD counter", NULL);
}

static void test_cntr_refusals(struct fid_domain *domain)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr = NULL;
	int ret;

	attr.events = (enum fi_cntr_events) 7;
	ret = fi_cntr_open(domain, &attr, &cntr, NULL);
	check_what(ret == -FI_ENOSYS, "counter events other than FI_CNTR_EVENTS_COMP",
	      "returned %d", ret);
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.wait_obj = FI_WAIT_SET;
	ret = fi_cntr_open(domain, &attr, &cntr, NULL);
	check_what(ret == -FI_ENOSYS, "FI_WAIT_SET counters are refused", "returned %d", ret);
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	ret = fi_cntr_open(domain, &attr, &cntr, NULL);
	check_what(ret == -FI_ENOSYS, "FI_WAIT_MUTEX_COND counters are refused", "returned %d",
	      ret);
	attr.wait_obj = FI_WAIT_NONE;
	attr.flags = 1;
	ret = fi_cntr_open(domain, &attr, &cntr, NULL);
	check_what(ret == -FI_EINVAL, "counter flags must be 0", "returned %d", ret);
}

void test_counters(struct fid_fabric *fabric, struct fid_domain *domain)
{
	struct fid_cntr *cntr = NULL, *none = NULL;
	enum fi_wait_obj obj = FI_WAIT_FD;
	struct fid *fids[1];
	int fd = -1, ret;
	int64_t start;

	ret = open_cntr(domain, FI_WAIT_UNSPEC, &cntr);
	check_what(ret == 0, "open a counter with FI_WAIT_UNSPEC", "%s", fi_strerror(-ret));
	if (ret)
		return;
	test_cntr_values(cntr);
	test_cntr_wait(cntr);
	check_what(fi_control(&cntr->fid, FI_GETWAIT, &fd) == -FI_ENODATA,
	      "FI_GETWAIT on FI_WAIT_UNSPEC: -FI_ENODATA", NULL);
	check_what(fi_control(&cntr->fid, FI_GETWAITOBJ, &obj) == 0 && obj == FI_WAIT_UNSPEC,
	      "FI_GETWAITOBJ says FI_WAIT_UNSPEC", NULL);
	fids[0] = &cntr->fid;
	check_what(fi_trywait(fabric, fids, 1) == -FI_EINVAL,
	      "fi_trywait refuses a counter without FI_WAIT_FD", NULL);

	test_cntr_fd(fabric, domain);

	ret = open_cntr(domain, FI_WAIT_NONE, &none);
	check_what(ret == 0, "open a counter with FI_WAIT_NONE", "%s", fi_strerror(-ret));
	if (!ret) {
		check_what(fi_cntr_add(none, 4) == 0 && fi_cntr_read(none) == 4,
		      "FI_WAIT_NONE: add and read", NULL);
		start = now_ns();
		ret = fi_cntr_wait(none, 5, 50);
		check_what(ret == -FI_ETIMEDOUT && now_ns() - start >= 50 * 1000000LL,
		      "FI_WAIT_NONE: fi_cntr_wait still times out properly",
		      "returned %d", ret);
	}
	test_cntr_refusals(domain);

	check_what(fi_close(&domain->fid) == -FI_EBUSY,
	      "the domain refuses to close while counters are open", NULL);
	check_what(fi_close(&cntr->fid) == 0, "close the FI_WAIT_UNSPEC counter", NULL);
	if (none)
		check_what(fi_close(&none->fid) == 0, "close the FI_WAIT_NONE counter", NULL);
}

/* ---- completion queues ---- */

/* Opens an endpoint sending to cq_tx and receiving to cq_rx, with an AV
 * of its own, and binds them: everything but fi_enable. */
int self_ep_bind(struct fid_domain *domain, struct fi_info *info,
			struct fid_cq *cq_tx, struct fid_cq *cq_rx, struct self_ep *s)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	if ((ret = fi_av_open(domain, &av_attr, &s->av, NULL)) ||
	    (ret = fi_endpoint(domain, info, &s->ep, NULL)) ||
	    (ret = fi_ep_bind(s->ep, &s->av->fid, 0)) ||
	    (ret = fi_ep_bind(s->ep, &cq_tx->fid, FI_TRANSMIT)))
		return ret;
	return fi_ep_bind(s->ep, &cq_rx->fid, FI_RECV);
}

/* Puts an enabled endpoint's own address in its AV (s->self). */
int self_ep_address(struct self_ep *s)
{
	uint8_t addr[1024];
	size_t len = sizeof(addr);
	int ret;

	ret = fi_getname(&s->ep->fid, addr, &len);
	if (ret)
		return ret;
	ret = fi_av_insert(s->av, addr, 1, &s->self, 0, NULL);
	return ret == 1 ? 0 : (ret < 0 ? ret : -FI_EINVAL);
}

/* Opens an endpoint sending to cq_tx and receiving to cq_rx, and puts its
 * own address in its AV. */
int self_ep_open(struct fid_domain *domain, struct fi_info *info,
			struct fid_cq *cq_tx, struct fid_cq *cq_rx, struct self_ep *s)
{
	int ret;

	if ((ret = self_ep_bind(domain, info, cq_tx, cq_rx, s)) ||
	    (ret = fi_enable(s->ep)))
		return ret;
	return self_ep_address(s);
}

/* Sends len bytes to ourselves; while the rails connect, reads cq_rx (and
 * so progresses) and keeps a completion it returns. */
int self_send(struct self_ep *s, struct fid_cq *cq_rx, const void *buf, size_t len,
		     void *ctx, struct fi_cq_msg_entry *rx, bool *got_rx)
{
	ssize_t ret;

	while ((ret = fi_send(s->ep, buf, len, NULL, s->self, ctx)) == -FI_EAGAIN) {
		if (!*got_rx && fi_cq_read(cq_rx, rx, 1) == 1)
			*got_rx = true;
	}
	return (int) ret;
}

static void test_cq_unspec(struct fid_fabric *fabric, struct fid_domain *domain)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_CONTEXT,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_entry comp;
	enum fi_wait_obj obj = FI_WAIT_NONE;
	struct fid_cq *cq = NULL;
	struct fid *fids[1];
	struct later later;
	int64_t start, took;
	ssize_t ret;
	int fd = -1;

	ret = fi_cq_open(domain, &attr, &cq, NULL);
	check_what(ret == 0, "open a CQ with FI_WAIT_UNSPEC", "%s", fi_strerror((int) -ret));
	if (ret)
		return;
	check_what(fi_cq_read(cq, &comp, 1) == -FI_EAGAIN &&
	      fi_cq_readerr(cq, &err, 0) == -FI_EAGAIN,
	      "an empty CQ: read and readerr -FI_EAGAIN", NULL);
	ret = fi_cq_sread(cq, &comp, 1, NULL, 0);
	check_what(ret == -FI_EAGAIN, "sread with timeout 0 on an empty CQ", "returned %zd",
	      ret);
	start = now_ns();
	ret = fi_cq_sread(cq, &comp, 1, NULL, 150);
	took = now_ns() - start;
	check_what(ret == -FI_EAGAIN && took >= 150 * 1000000LL,
	      "sread times out with -FI_EAGAIN, not before 150 ms",
	      "returned %zd after %lld us", ret, (long long) took / 1000);

	step = "fi_cq_sread(infinite) woken by fi_cq_signal from another thread";
	later_start(&later, LATER_CQ_SIGNAL, cq, 0);
	ret = fi_cq_sread(cq, &comp, 1, NULL, -1);
	check_what(ret == -FI_EAGAIN && later_join(&later) == 0,
	      "fi_cq_signal from another thread wakes sread(infinite): -FI_EAGAIN",
	      "returned %zd", ret);

	step = "fi_cq_sread after an earlier fi_cq_signal";
	check_what(fi_cq_signal(cq) == 0, "signal with no reader waiting", NULL);
	ret = fi_cq_sread(cq, &comp, 1, NULL, -1);
	check_what(ret == -FI_EAGAIN, "the pending signal ends the next sread", "returned %zd",
	      ret);
	start = now_ns();
	ret = fi_cq_sread(cq, &comp, 1, NULL, 100);
	took = now_ns() - start;
	check_what(ret == -FI_EAGAIN && took >= 100 * 1000000LL,
	      "one signal ends one sread: the next one waits its timeout",
	      "returned %zd after %lld us", ret, (long long) took / 1000);
	step = "cq";

	check_what(fi_control(&cq->fid, FI_GETWAIT, &fd) == -FI_ENODATA,
	      "FI_GETWAIT on FI_WAIT_UNSPEC: -FI_ENODATA", NULL);
	check_what(fi_control(&cq->fid, FI_GETWAITOBJ, &obj) == 0 && obj == FI_WAIT_UNSPEC,
	      "FI_GETWAITOBJ says FI_WAIT_UNSPEC", NULL);
	fids[0] = &cq->fid;
	check_what(fi_trywait(fabric, fids, 1) == -FI_EINVAL,
	      "fi_trywait refuses a CQ without FI_WAIT_FD", NULL);
	check_what(fi_close(&cq->fid) == 0, "close the FI_WAIT_UNSPEC CQ", NULL);
}

static void test_cq_refusals(struct fid_domain *domain)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_cq *cq = NULL;
	int ret;

	attr.wait_obj = FI_WAIT_SET;
	ret = fi_cq_open(domain, &attr, &cq, NULL);
	check_what(ret == -FI_ENOSYS, "FI_WAIT_SET CQs are refused", "returned %d", ret);
	attr.wait_obj = FI_WAIT_MUTEX_COND;
	ret = fi_cq_open(domain, &attr, &cq, NULL);
	check_what(ret == -FI_ENOSYS, "FI_WAIT_MUTEX_COND CQs are refused", "returned %d",
	      ret);
	attr.wait_obj = FI_WAIT_UNSPEC;
	attr.wait_cond = (enum fi_cq_wait_cond) 9;
	ret = fi_cq_open(domain, &attr, &cq, NULL);
	check_what(ret == -FI_EINVAL, "an unknown wait condition is refused", "returned %d",
	      ret);
	attr.wait_cond = FI_CQ_COND_THRESHOLD;
	ret = fi_cq_open(domain, &attr, &cq, NULL);
	check_what(ret == 0, "FI_CQ_COND_THRESHOLD is accepted (as a hint)", "returned %d",
	      ret);
	if (!ret)
		fi_close(&cq->fid);
}

/* The FD CQ alone: signals make it readable, reads drain it. */
static void test_cq_fd_signal(struct fid_fabric *fabric, struct fid_cq *cq, int fd)
{
	struct fi_cq_msg_entry comp;
	struct fid *fids[1] = { &cq->fid };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct later later;
	ssize_t ret;

	check_what(!readable(fd) && fi_trywait(fabric, fids, 1) == 0,
	      "an empty FD CQ: fd not readable, fi_trywait 0", NULL);
	fi_cq_signal(cq);
	check_what(readable(fd), "fi_cq_signal makes the fd readable", NULL);
	ret = fi_cq_sread(cq, &comp, 1, NULL, -1);
	check_what(ret == -FI_EAGAIN && !readable(fd),
	      "sread consumes the signal, -FI_EAGAIN, and drains the fd",
	      "returned %zd", ret);

	step = "poll on a CQ's fd until another thread signals";
	later_start(&later, LATER_CQ_SIGNAL, cq, 0);
	ret = poll(&pfd, 1, -1);
	check_what(ret == 1 && (pfd.revents & POLLIN) && later_join(&later) == 0,
	      "poll(fd) wakes on fi_cq_signal from another thread", "poll %zd", ret);
	check_what(fi_cq_read(cq, &comp, 1) == -FI_EAGAIN && !readable(fd),
	      "a read that finds the CQ empty drains the fd", NULL);
	ret = fi_cq_sread(cq, &comp, 1, NULL, -1);
	check_what(ret == -FI_EAGAIN, "the signal is still there for the next sread",
	      "returned %zd", ret);
	step = "cq";
}

/* Waits, progressing through cq_rx, until fd turns readable. */
static bool wait_readable(struct fid_cq *cq_rx, int fd)
{
	struct fi_cq_msg_entry comp;

	while (!readable(fd)) {
		if (fi_cq_read(cq_rx, &comp, 1) != -FI_EAGAIN)
			return false;
		sleep_ms(1);
	}
	return true;
}

/* fi_sendmsg or fi_tsendmsg (tag 7) of len bytes to ourselves with flags,
 * retried like self_send. */
static int self_sendmsg(struct self_ep *s, struct fid_cq *cq_rx, void *buf, size_t len,
			void *ctx, uint64_t flags, bool tagged,
			struct fi_cq_msg_entry *rx, bool *got_rx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1, .addr = s->self,
			      .context = ctx };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1,
				      .addr = s->self, .tag = 7, .context = ctx };
	ssize_t ret;

	for (;;) {
		ret = tagged ? fi_tsendmsg(s->ep, &tmsg, flags) :
			       fi_sendmsg(s->ep, &msg, flags);
		if (ret != -FI_EAGAIN)
			return (int) ret;
		if (!*got_rx && fi_cq_read(cq_rx, rx, 1) == 1)
			*got_rx = true;
	}
}

/*
 * FI_INJECT on fi_sendmsg / fi_tsendmsg: the buffer is the application's
 * again at return (it is overwritten at once and the receiver must still
 * see the original bytes), and the send completes like any other
 * (fi_msg(3)); fi_inject itself never completes. Completions are counted
 * exactly: a later plain send's completion must be the next one.
 */
static void test_cq_inject(struct self_ep *s, struct fid_cq *cq_tx, struct fid_cq *cq_rx)
{
	static const char payload[] = "mrail objs: FI_INJECT, completed";
	char sbuf[sizeof(payload)], rbuf[64];
	struct fi_cq_msg_entry rx = { 0 }, tx = { 0 };
	int ctx_rx, ctx_inj, ctx_after, t, extra;
	bool got_rx;
	ssize_t ret;

	for (t = 0; t < 2; t++) {
		const char *how = t ? "fi_tsendmsg(FI_INJECT)" : "fi_sendmsg(FI_INJECT)";

		got_rx = false;
		memset(rbuf, 0, sizeof(rbuf));
		ret = t ? fi_trecv(s->ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 7, 0,
				   &ctx_rx) :
			  fi_recv(s->ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &ctx_rx);
		check(ret == 0, "%s: post the receive: %zd", how, ret);
		memcpy(sbuf, payload, sizeof(payload));
		ret = self_sendmsg(s, cq_rx, sbuf, sizeof(sbuf), &ctx_inj, FI_INJECT,
				   t == 1, &rx, &got_rx);
		/* The buffer is ours again: what the receiver gets must not
		 * depend on it any more. */
		memset(sbuf, 0xb, sizeof(sbuf));
		check(ret == 0, "%s: posted: %zd", how, ret);
		if (!got_rx)
			ret = fi_cq_sread(cq_rx, &rx, 1, NULL, -1);
		check((got_rx || ret == 1) && rx.op_context == &ctx_rx &&
		      rx.len == sizeof(payload) && !memcmp(rbuf, payload, sizeof(payload)),
		      "%s: received byte for byte (sread %zd, len %zu)", how, ret, rx.len);
		ret = fi_cq_sread(cq_tx, &tx, 1, NULL, 30000);
		check(ret == 1 && tx.op_context == &ctx_inj &&
		      (tx.flags & FI_SEND) == FI_SEND,
		      "%s: one send completion with its context (sread %zd)", how, ret);
	}

	/* fi_inject: received, never completed. */
	got_rx = false;
	memset(rbuf, 0, sizeof(rbuf));
	fi_recv(s->ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &ctx_rx);
	memcpy(sbuf, payload, sizeof(payload));
	while ((ret = fi_inject(s->ep, sbuf, sizeof(sbuf), s->self)) == -FI_EAGAIN)
		if (!got_rx && fi_cq_read(cq_rx, &rx, 1) == 1)
			got_rx = true;
	memset(sbuf, 0xb, sizeof(sbuf));
	check(ret == 0, "fi_inject: posted: %zd", ret);
	if (!got_rx)
		ret = fi_cq_sread(cq_rx, &rx, 1, NULL, -1);
	check((got_rx || ret == 1) && !memcmp(rbuf, payload, sizeof(payload)),
	      "fi_inject: received byte for byte");
	got_rx = false;
	fi_recv(s->ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &ctx_rx);
	ret = self_send(s, cq_rx, payload, 8, &ctx_after, &rx, &got_rx);
	check(ret == 0, "a plain send after fi_inject: %zd", ret);
	if (!got_rx)
		fi_cq_sread(cq_rx, &rx, 1, NULL, -1);
	for (extra = 0;; extra++) {
		ret = fi_cq_sread(cq_tx, &tx, 1, NULL, 30000);
		if (ret != 1 || tx.op_context == &ctx_after)
			break;
	}
	check(ret == 1 && extra == 0,
	      "fi_inject completes nothing: the next send completion is the plain "
	      "send's (%d before it, sread %zd)", extra, ret);
	check(fi_cq_read(cq_tx, &tx, 1) == -FI_EAGAIN, "no further send completion");
}

/* Messages to ourselves: completions on the FD CQ (transmit) and on an
 * FI_WAIT_UNSPEC CQ (receive) that both progress the endpoint. */
static void test_cq_completions(struct fid_fabric *fabric, struct fid_domain *domain,
				struct fi_info *info, struct fid_cq *cq_tx, int fd)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	static const char payload[] = "mrail objs: a completion on every CQ";
	char rbuf[64], small[4];
	struct fi_cq_msg_entry rx = { 0 }, tx = { 0 };
	struct fi_cq_err_entry err = { 0 };
	struct fid *fids[1] = { &cq_tx->fid };
	struct self_ep s = { 0 };
	struct fid_cq *cq_rx = NULL;
	int ctx_rx, ctx_tx, ctx_small;
	bool got_rx = false;
	ssize_t ret;

	ret = fi_cq_open(domain, &attr, &cq_rx, NULL);
	check_what(ret == 0, "open the receive CQ", "%s", fi_strerror((int) -ret));
	if (ret)
		return;
	ret = self_ep_open(domain, info, cq_tx, cq_rx, &s);
	check_what(ret == 0, "an endpoint that can send to itself", "%s",
	      fi_strerror((int) -ret));
	if (ret)
		goto out;
	check_what(fi_trywait(fabric, fids, 1) == -FI_EAGAIN,
	      "fi_trywait: -FI_EAGAIN while an endpoint needs progress", NULL);

	step = "a message to ourselves";
	memset(rbuf, 0, sizeof(rbuf));
	ret = fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &ctx_rx);
	check_what(ret == 0, "post a receive", "%zd", ret);
	ret = self_send(&s, cq_rx, payload, sizeof(payload), &ctx_tx, &rx, &got_rx);
	check_what(ret == 0, "send to ourselves", "%zd", ret);
	if (!got_rx)
		ret = fi_cq_sread(cq_rx, &rx, 1, NULL, -1);
	check_what((got_rx || ret == 1) && rx.op_context == &ctx_rx &&
	      rx.len == sizeof(payload) &&
	      (rx.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG) &&
	      !memcmp(rbuf, payload, sizeof(payload)),
	      "sread(infinite) returns the receive, data byte for byte",
	      "returned %zd, len %zu", ret, rx.len);

	step = "the FD CQ turning readable with a transmit completion";
	check_what(wait_readable(cq_rx, fd),
	      "the transmit completion makes the FD CQ readable", NULL);
	check_what(fi_trywait(fabric, fids, 1) == -FI_EAGAIN,
	      "fi_trywait: -FI_EAGAIN with a completion queued", NULL);
	ret = fi_cq_read(cq_tx, &tx, 1);
	check_what(ret == 1 && tx.op_context == &ctx_tx &&
	      (tx.flags & (FI_SEND | FI_MSG)) == (FI_SEND | FI_MSG),
	      "read the transmit completion", "returned %zd", ret);
	check_what(!readable(fd), "reading the last completion drains the fd", NULL);

	step = "sread with a timeout, completions arriving";
	got_rx = false;
	memset(rbuf, 0, sizeof(rbuf));
	fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &ctx_rx);
	self_send(&s, cq_rx, payload, 10, &ctx_tx, &rx, &got_rx);
	if (!got_rx)
		ret = fi_cq_sread(cq_rx, &rx, 1, NULL, 30000);
	check_what((got_rx || ret == 1) && rx.len == 10 && !memcmp(rbuf, payload, 10) &&
	      rbuf[10] == 0,
	      "sread(30 s) returns a 10-byte receive", "returned %zd", ret);
	ret = fi_cq_sread(cq_tx, &tx, 1, NULL, -1);
	check_what(ret == 1 && tx.op_context == &ctx_tx, "sread on the FD CQ", "returned %zd",
	      ret);

	step = "FI_INJECT sends";
	test_cq_inject(&s, cq_tx, cq_rx);

	step = "a truncated receive: sread -FI_EAVAIL";
	got_rx = false;
	fi_recv(s.ep, small, sizeof(small), NULL, FI_ADDR_UNSPEC, &ctx_small);
	self_send(&s, cq_rx, payload, 16, &ctx_tx, &rx, &got_rx);
	ret = fi_cq_sread(cq_rx, &rx, 1, NULL, -1);
	check_what(!got_rx && ret == -FI_EAVAIL,
	      "an error completion: sread returns -FI_EAVAIL", "returned %zd", ret);
	ret = fi_cq_readerr(cq_rx, &err, 0);
	check_what(ret == 1 && err.err == FI_ETRUNC && err.op_context == &ctx_small &&
	      err.olen == 12 && !memcmp(small, payload, 4),
	      "readerr: FI_ETRUNC, 12 bytes over, the first 4 delivered",
	      "returned %zd, err %d, olen %zu", ret, err.err, err.olen);
	check_what(fi_cq_read(cq_rx, &rx, 1) == -FI_EAGAIN, "nothing after the error", NULL);
	ret = fi_cq_sread(cq_tx, &tx, 1, NULL, -1);
	check_what(ret == 1 && tx.op_context == &ctx_tx, "its send completed", "returned %zd",
	      ret);
	step = "cq";

	check_what(fi_close(&cq_rx->fid) == -FI_EBUSY,
	      "a CQ refuses to close while an endpoint uses it", NULL);
out:
	if (s.ep)
		check_what(fi_close(&s.ep->fid) == 0, "close the endpoint", NULL);
	if (s.av)
		fi_close(&s.av->fid);
	check_what(fi_close(&cq_rx->fid) == 0, "close the receive CQ", NULL);
}

void test_cq(struct fid_fabric *fabric, struct fid_domain *domain,
		    struct fi_info *info)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD };
	enum fi_wait_obj obj = FI_WAIT_NONE;
	struct fid_cq *cq = NULL;
	int fd = -1, ret;

	test_cq_unspec(fabric, domain);
	test_cq_refusals(domain);

	ret = fi_cq_open(domain, &attr, &cq, NULL);
	check_what(ret == 0, "open a CQ with FI_WAIT_FD", "%s", fi_strerror(-ret));
	if (ret)
		return;
	ret = fi_control(&cq->fid, FI_GETWAIT, &fd);
	check_what(ret == 0 && fd >= 0, "FI_GETWAIT gives an fd", "returned %d, fd %d", ret,
	      fd);
	check_what(fi_control(&cq->fid, FI_GETWAITOBJ, &obj) == 0 && obj == FI_WAIT_FD,
	      "FI_GETWAITOBJ says FI_WAIT_FD", NULL);
	if (fd >= 0) {
		test_cq_fd_signal(fabric, cq, fd);
		test_cq_completions(fabric, domain, info, cq, fd);
	}
	check_what(fi_close(&cq->fid) == 0, "close the FD CQ", NULL);
}
