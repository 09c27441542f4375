/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs: functional test of mrail's counters, CQ wait objects,
 * event queues, memory registration, fi_trywait, poll sets, scalable
 * endpoints, operation tables and fi_getinfo's answers to hints, in one
 * process (no
 * peer: messages for the CQ checks go to the process's own address).
 *
 *   fi_mrail_objs [-t counters|cq|eq|mr|trywait|poll|sep|ops|getinfo|sockaddr|all|exit] [-v]
 *
 * -t ops checks every operation table of every object (as large as the
 * headers know, no NULL entry) and calls the operations mrail refuses
 * (connection management, scalable contexts, fi_set_ops...), which must
 * return -FI_ENOSYS; -t getinfo checks that hints are honoured or refused
 * (caps, ordering, mr_mode); -t sockaddr uses an FI_SOCKADDR_IN offer
 * with an FI_EVENT AV and sends to the endpoint's own socket address.
 *
 * -t exit (not part of all) opens an FI_PROGRESS_AUTO domain, sends a
 * message to itself through the progress thread, and exits with every
 * object still open, as applications that fail do: libfabric then cleans
 * up and unloads mrail while mrail's progress thread is busy.
 *
 * Every check asserts exact values: counts, event bytes, keys, return
 * codes. Timed waits are checked never to return before their timeout (no
 * upper bounds: a slow machine is not a failure); a blocking call that
 * never returns is caught by a watchdog. Prints one line per failed check
 * (every check with -v) and exits 0 only if every check passed.
 */
#include <getopt.h>
#include <netinet/in.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/mrail_check.h"
#include "mrail_compat.h"

/* Poll sets, wait sets and fi_av_bind are deprecated in libfabric 2.x, not
 * removed, and mrail implements them: this program tests them on purpose. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_mrail.h>

/* Seconds a section may take before the watchdog calls it hung. */
#define WATCHDOG_S 120
/* How long the helper thread waits before acting on an object. */
#define LATER_MS 100

static const char *volatile step = "start";


static void on_watchdog(int sig)
{
	static const char head[] = "FAILED: watchdog: no return after "
				   "120 s in: ";
	const char *s = step;

	(void) sig;
	if (write(STDOUT_FILENO, head, sizeof(head) - 1) < 0 ||
	    write(STDOUT_FILENO, s, strlen(s)) < 0 || write(STDOUT_FILENO, "\n", 1) < 0)
		_exit(3);
	_exit(3);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long) (ms % 1000) * 1000000,
	};

	while (nanosleep(&ts, &ts))
		;
}

/* Whether fd is readable right now. */
static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* ---- a helper thread that acts on an object after LATER_MS ---- */

enum later_kind {
	LATER_CNTR_ADD,		/* fi_cntr_add(cntr, value) */
	LATER_CNTR_ADD_STEPS,	/* fi_cntr_add(cntr, 1), value times */
	LATER_CNTR_ADDERR,	/* fi_cntr_adderr(cntr, value) */
	LATER_CQ_SIGNAL,	/* fi_cq_signal(cq) */
	LATER_EQ_WRITE,		/* fi_eq_write(eq, FI_NOTIFY, entry) */
};

struct later {
	pthread_t thread;
	enum later_kind kind;
	void *obj;
	uint64_t value;
	struct fi_eq_entry entry;
	int ret;
};

static void *later_run(void *arg)
{
	struct later *l = arg;
	uint64_t i;

	sleep_ms(LATER_MS);
	switch (l->kind) {
	case LATER_CNTR_ADD:
		l->ret = fi_cntr_add(l->obj, l->value);
		break;
	case LATER_CNTR_ADD_STEPS:
		for (i = 0; i < l->value && !l->ret; i++) {
			if (i)
				sleep_ms(LATER_MS / 2);
			l->ret = fi_cntr_add(l->obj, 1);
		}
		break;
	case LATER_CNTR_ADDERR:
		l->ret = fi_cntr_adderr(l->obj, l->value);
		break;
	case LATER_CQ_SIGNAL:
		l->ret = fi_cq_signal(l->obj);
		break;
	case LATER_EQ_WRITE:
		l->ret = (int) fi_eq_write(l->obj, FI_NOTIFY, &l->entry, sizeof(l->entry),
					   0);
		break;
	}
	return NULL;
}

static void later_start(struct later *l, enum later_kind kind, void *obj, uint64_t value)
{
	l->kind = kind;
	l->obj = obj;
	l->value = value;
	l->ret = 0;
	if (pthread_create(&l->thread, NULL, later_run, l)) {
		perror("pthread_create");
		exit(2);
	}
}

static int later_join(struct later *l)
{
	pthread_join(l->thread, NULL);
	return l->ret;
}

/* ---- counters ---- */

static int open_cntr(struct fid_domain *domain, enum fi_wait_obj wait_obj,
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

static void test_counters(struct fid_fabric *fabric, struct fid_domain *domain)
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

struct self_ep {
	struct fid_av *av;
	struct fid_ep *ep;
	fi_addr_t self;
};

/* Opens an endpoint sending to cq_tx and receiving to cq_rx, with an AV
 * of its own, and binds them: everything but fi_enable. */
static int self_ep_bind(struct fid_domain *domain, struct fi_info *info,
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
static int self_ep_address(struct self_ep *s)
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
static int self_ep_open(struct fid_domain *domain, struct fi_info *info,
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
static int self_send(struct self_ep *s, struct fid_cq *cq_rx, const void *buf, size_t len,
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

static void test_cq(struct fid_fabric *fabric, struct fid_domain *domain,
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

/* ---- event queues ---- */

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t) (seed + i * 7);
}

static void test_eq_events(struct fid_eq *eq)
{
	struct fi_eq_entry in = {
		.fid = &eq->fid,
		.context = (void *) 0x1234,
		.data = 42,
	};
	struct fi_eq_entry out;
	uint8_t sent[3][100], got[128];
	static const size_t lens[3] = { 8, 24, 100 };
	uint32_t event = 0;
	ssize_t ret;
	size_t i;

	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_what(ret == sizeof(in), "write an event", "returned %zd", ret);
	memset(&out, 0, sizeof(out));
	ret = fi_eq_read(eq, &event, &out, sizeof(out), FI_PEEK);
	check_what(ret == sizeof(in) && event == FI_NOTIFY && !memcmp(&out, &in, sizeof(in)),
	      "FI_PEEK reads it, byte for byte", "returned %zd, event %u", ret, event);
	memset(&out, 0, sizeof(out));
	event = 0;
	ret = fi_eq_read(eq, &event, &out, sizeof(out), 0);
	check_what(ret == sizeof(in) && event == FI_NOTIFY && !memcmp(&out, &in, sizeof(in)),
	      "... and leaves it for the next read", "returned %zd", ret);
	check_what(fi_eq_read(eq, &event, &out, sizeof(out), 0) == -FI_EAGAIN,
	      "a read consumes it", NULL);

	for (i = 0; i < 3; i++) {
		fill(sent[i], lens[i], (uint8_t) (i * 31 + 1));
		ret = fi_eq_write(eq, (uint32_t) (11 + i), sent[i], lens[i], 0);
		check_what(ret == (ssize_t) lens[i], "write events of 8, 24 and 100 bytes",
		      "event %zu returned %zd", i, ret);
	}
	for (i = 0; i < 3; i++) {
		if (i == 2) {
			ret = fi_eq_read(eq, &event, got, 99, 0);
			check_what(ret == -FI_ETOOSMALL,
			      "a buffer 1 byte short: -FI_ETOOSMALL", "returned %zd",
			      ret);
		}
		memset(got, 0, sizeof(got));
		event = 0;
		ret = fi_eq_read(eq, &event, got, sizeof(got), 0);
		check_what(ret == (ssize_t) lens[i] && event == 11 + i &&
		      !memcmp(got, sent[i], lens[i]) && got[lens[i]] == 0,
		      "events come back in order, exact length and bytes",
		      "event %zu: returned %zd, event %u", i, ret, event);
	}
	check_what(fi_eq_read(eq, &event, got, sizeof(got), 0) == -FI_EAGAIN,
	      "then it is empty", NULL);
}

static void test_eq_limits(struct fid_eq *eq, size_t size)
{
	struct fi_eq_entry in = { .fid = &eq->fid };
	uint8_t big[4097] = { 0 };
	uint32_t event;
	ssize_t ret;
	size_t i;

	for (i = 0; i < size; i++) {
		in.data = i;
		ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
		if (ret != sizeof(in))
			break;
	}
	check_what(i == size, "fill the EQ to its size", "%zu of %zu written", i, size);
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_what(ret == -FI_EAGAIN, "one more: -FI_EAGAIN", "returned %zd", ret);
	ret = fi_eq_read(eq, &event, &in, sizeof(in), 0);
	check_what(ret == sizeof(in) && in.data == 0, "read the oldest", "returned %zd", ret);
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_what(ret == sizeof(in), "then there is room for one", "returned %zd", ret);
	for (i = 1; i <= size; i++) {
		ret = fi_eq_read(eq, &event, &in, sizeof(in), 0);
		if (ret != sizeof(in) || in.data != (i < size ? i : 0))
			break;
	}
	check_what(i == size + 1, "read back in order", "stopped at %zu", i);

	check_what(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 1) == -FI_EBADFLAGS,
	      "write refuses flags", NULL);
	check_what(fi_eq_read(eq, &event, &in, sizeof(in), FI_PEEK << 1) == -FI_EBADFLAGS,
	      "read refuses flags other than FI_PEEK", NULL);
	check_what(fi_eq_write(eq, FI_NOTIFY, big, sizeof(big), 0) == -FI_EINVAL,
	      "an event over 4096 bytes is refused", NULL);
	check_what(fi_eq_write(eq, FI_NOTIFY, big, 4096, 0) == 4096 &&
	      fi_eq_read(eq, &event, big, 4096, 0) == 4096, "a 4096-byte event", NULL);
}

static void test_eq_sread(struct fid_eq *eq)
{
	struct fi_eq_entry out = { 0 };
	struct later later = { .entry = { .context = (void *) 0x77, .data = 7 } };
	uint32_t event = 0;
	int64_t start, took;
	ssize_t ret;

	ret = fi_eq_sread(eq, &event, &out, sizeof(out), 0, 0);
	check_what(ret == -FI_EAGAIN, "sread with timeout 0 on an empty EQ", "returned %zd",
	      ret);
	start = now_ns();
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), 150, 0);
	took = now_ns() - start;
	check_what(ret == -FI_EAGAIN && took >= 150 * 1000000LL,
	      "sread times out with -FI_EAGAIN, not before 150 ms",
	      "returned %zd after %lld us", ret, (long long) took / 1000);

	step = "fi_eq_sread(infinite) woken by fi_eq_write from another thread";
	later.entry.fid = &eq->fid;
	later_start(&later, LATER_EQ_WRITE, eq, 0);
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), -1, FI_PEEK);
	check_what(ret == sizeof(out) && later_join(&later) == sizeof(out) &&
	      event == FI_NOTIFY && !memcmp(&out, &later.entry, sizeof(out)),
	      "sread(infinite, FI_PEEK) returns an event written by another thread",
	      "returned %zd", ret);
	memset(&out, 0, sizeof(out));
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), -1, 0);
	check_what(ret == sizeof(out) && out.data == 7 &&
	      fi_eq_read(eq, &event, &out, sizeof(out), 0) == -FI_EAGAIN,
	      "the peeked event is read once more, then gone", "returned %zd", ret);
	step = "eq";
}

static void test_eq_fd(struct fid_fabric *fabric)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD, .flags = FI_WRITE };
	struct fi_eq_entry entry = { .data = 3 };
	struct pollfd pfd = { .events = POLLIN };
	struct later later;
	struct fid_eq *eq = NULL;
	struct fid *fids[1];
	uint32_t event;
	int fd = -1, ret;

	ret = fi_eq_open(fabric, &attr, &eq, NULL);
	check_what(ret == 0, "open an EQ with FI_WAIT_FD", "%s", fi_strerror(-ret));
	if (ret)
		return;
	fids[0] = &eq->fid;
	ret = fi_control(&eq->fid, FI_GETWAIT, &fd);
	check_what(ret == 0 && fd >= 0, "FI_GETWAIT gives an fd", "returned %d", ret);
	if (fd < 0)
		goto out;
	check_what(!readable(fd) && fi_trywait(fabric, fids, 1) == 0,
	      "an empty EQ: fd not readable, fi_trywait 0", NULL);
	fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0);
	check_what(readable(fd) && fi_trywait(fabric, fids, 1) == -FI_EAGAIN,
	      "an event: fd readable, fi_trywait -FI_EAGAIN", NULL);
	check_what(fi_eq_read(eq, &event, &entry, sizeof(entry), FI_PEEK) == sizeof(entry) &&
	      readable(fd), "a peek leaves it readable", NULL);
	check_what(fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == sizeof(entry) &&
	      !readable(fd) && fi_trywait(fabric, fids, 1) == 0,
	      "reading the last event drains the fd", NULL);

	step = "poll on an EQ's fd until another thread writes";
	later.entry = entry;
	later_start(&later, LATER_EQ_WRITE, eq, 0);
	pfd.fd = fd;
	ret = poll(&pfd, 1, -1);
	check_what(ret == 1 && (pfd.revents & POLLIN) && later_join(&later) == sizeof(entry) &&
	      fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == sizeof(entry) &&
	      entry.data == 3, "poll(fd) wakes on a write from another thread", NULL);
	step = "eq";
out:
	check_what(fi_close(&eq->fid) == 0, "close the FD EQ", NULL);
}

static void test_eq(struct fid_fabric *fabric)
{
	struct fi_eq_attr attr = {
		.size = 4,
		.wait_obj = FI_WAIT_UNSPEC,
		.flags = FI_WRITE,
	};
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_entry entry = { 0 };
	enum fi_wait_obj obj = FI_WAIT_NONE;
	struct fid_eq *eq = NULL, *ro = NULL;
	char text[64];
	uint32_t event;
	int fd = -1, ret;

	ret = fi_eq_open(fabric, &attr, &eq, NULL);
	check_what(ret == 0, "open an EQ (FI_WRITE, size 4, FI_WAIT_UNSPEC)", "%s",
	      fi_strerror(-ret));
	if (ret)
		return;
	check_what(fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == -FI_EAGAIN &&
	      fi_eq_readerr(eq, &err, 0) == -FI_EAGAIN,
	      "an empty EQ: read and readerr -FI_EAGAIN", NULL);
	test_eq_events(eq);
	test_eq_limits(eq, 4);
	test_eq_sread(eq);
	check_what(!strcmp(fi_eq_strerror(eq, FI_ETRUNC, NULL, text, sizeof(text)),
	      fi_strerror(FI_ETRUNC)) && !strcmp(text, fi_strerror(FI_ETRUNC)),
	      "fi_eq_strerror", "%s", text);
	check_what(fi_control(&eq->fid, FI_GETWAIT, &fd) == -FI_ENODATA,
	      "FI_GETWAIT on FI_WAIT_UNSPEC: -FI_ENODATA", NULL);
	check_what(fi_control(&eq->fid, FI_GETWAITOBJ, &obj) == 0 && obj == FI_WAIT_UNSPEC,
	      "FI_GETWAITOBJ says FI_WAIT_UNSPEC", NULL);
	check_what(fi_close(&eq->fid) == 0, "close the EQ", NULL);

	attr.flags = 0;
	ret = fi_eq_open(fabric, &attr, &ro, NULL);
	check_what(ret == 0 &&
	      fi_eq_write(ro, FI_NOTIFY, &entry, sizeof(entry), 0) == -FI_EINVAL,
	      "without FI_WRITE, fi_eq_write is refused", NULL);
	if (!ret)
		fi_close(&ro->fid);
	attr.wait_obj = FI_WAIT_SET;
	check_what(fi_eq_open(fabric, &attr, &ro, NULL) == -FI_ENOSYS,
	      "FI_WAIT_SET EQs are refused", NULL);
	attr.wait_obj = FI_WAIT_NONE;
	attr.flags = FI_SEND;
	check_what(fi_eq_open(fabric, &attr, &ro, NULL) == -FI_EINVAL,
	      "EQ flags other than FI_WRITE, FI_AFFINITY are refused", NULL);

	test_eq_fd(fabric);
}

/* ---- memory registration ---- */

#define MR_MANY 64
static uint8_t region[4][8192];

static void test_mr_reg(struct fid_domain *domain)
{
	struct fid_mr *mr0 = NULL, *mr1 = NULL, *mr2 = NULL, *dup = (void *) 0x1;
	struct iovec iov = { .iov_base = region[1], .iov_len = 4096 };
	struct fi_mr_attr attr = {
		.mr_iov = &iov, .iov_count = 1, .access = FI_SEND | FI_RECV,
		.requested_key = 0x1003, .context = (void *) 0x3003,
		.iface = FI_HMEM_SYSTEM,
	};
	int ret;

	ret = fi_mr_reg(domain, region[0], sizeof(region[0]),
			FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0x1001, 0, &mr0,
			(void *) 0x3001);
	check_what(ret == 0, "fi_mr_reg with key 0x1001", "%s", fi_strerror(-ret));
	if (ret)
		return;
	check_what(fi_mr_key(mr0) == 0x1001 && fi_mr_desc(mr0) != NULL &&
	      mr0->fid.fclass == FI_CLASS_MR && mr0->fid.context == (void *) 0x3001,
	      "its key, descriptor, class and context", "key %#llx",
	      (unsigned long long) fi_mr_key(mr0));

	ret = fi_mr_reg(domain, region[1], 64, FI_REMOTE_READ, 0, 0x1001, 0, &dup, NULL);
	check_what(ret == -FI_ENOKEY && dup == (void *) 0x1,
	      "the same key again: -FI_ENOKEY, nothing returned", "returned %d", ret);

	ret = fi_mr_regv(domain, &iov, 1, FI_READ | FI_WRITE, 0, 0x1002, 0, &mr1, NULL);
	check_what(ret == 0 && fi_mr_key(mr1) == 0x1002 && fi_mr_desc(mr1) != fi_mr_desc(mr0),
	      "fi_mr_regv with one IO vector", "returned %d", ret);
	ret = fi_mr_regv(domain, &iov, 2, FI_READ, 0, 0x2002, 0, &dup, NULL);
	check_what(ret == -FI_EINVAL, "fi_mr_regv with two IO vectors is refused", "%d", ret);
	ret = fi_mr_regv(domain, &iov, 0, FI_READ, 0, 0x2002, 0, &dup, NULL);
	check_what(ret == -FI_EINVAL, "fi_mr_regv with none is refused", "%d", ret);

	iov.iov_base = region[2];
	ret = fi_mr_regattr(domain, &attr, 0, &mr2);
	check_what(ret == 0 && fi_mr_key(mr2) == 0x1003 && mr2->fid.context == (void *) 0x3003,
	      "fi_mr_regattr: key and context from the attributes", "returned %d", ret);
	attr.requested_key = 0x2003;
	attr.iface = FI_HMEM_CUDA;
	ret = fi_mr_regattr(domain, &attr, 0, &dup);
	check_what(ret == -FI_ENOSYS, "device memory is refused", "returned %d", ret);
	attr.iface = FI_HMEM_SYSTEM;
	attr.auth_key_size = 4;
	ret = fi_mr_regattr(domain, &attr, 0, &dup);
	check_what(ret == -FI_EINVAL, "an authorization key is refused", "returned %d", ret);

	check_what(fi_mr_reg(domain, region[3], 0, FI_READ, 0, 0x2004, 0, &dup, NULL) ==
	      -FI_EINVAL,
	      "length 0 is refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ, 1, 0x2004, 0, &dup, NULL) ==
	      -FI_EINVAL,
	      "a nonzero offset is refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ | FI_COLLECTIVE, 0, 0x2004, 0,
			&dup, NULL) == -FI_EINVAL,
	      "access bits beyond the six are refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ, 0, 0x2004, FI_RMA_PMEM, &dup,
			NULL) == -FI_EBADFLAGS, "unknown flags are refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ, 0, FI_KEY_NOTAVAIL, 0, &dup,
			NULL) == -FI_EKEYREJECTED,
	      "key FI_KEY_NOTAVAIL is refused", NULL);
	check_what(dup == (void *) 0x1, "no refused registration returned an MR", NULL);

	check_what(fi_mr_enable(mr0) == 0, "fi_mr_enable: nothing to do, 0", NULL);
	iov.iov_base = region[0] + 100;
	iov.iov_len = 200;
	check_what(fi_mr_refresh(mr0, &iov, 1, 0) == 0, "fi_mr_refresh inside the region",
	      NULL);
	iov.iov_len = sizeof(region[0]);
	check_what(fi_mr_refresh(mr0, &iov, 1, 0) == -FI_EINVAL,
	      "fi_mr_refresh past its end is refused", NULL);
	check_what(fi_mr_bind(mr0, &domain->fid, 0) == -FI_EINVAL,
	      "fi_mr_bind: regions bind to nothing with mr_mode 0", NULL);

	check_what(fi_close(&domain->fid) == -FI_EBUSY,
	      "the domain refuses to close while MRs are open", NULL);
	check_what(fi_close(&mr0->fid) == 0, "close the first MR", NULL);
	mr0 = NULL;
	ret = fi_mr_reg(domain, region[3], 64, FI_REMOTE_WRITE, 0, 0x1001, 0, &mr0, NULL);
	check_what(ret == 0 && fi_mr_key(mr0) == 0x1001, "its key is free again", "%d", ret);
	if (mr0)
		fi_close(&mr0->fid);
	check_what(fi_close(&mr1->fid) == 0 && fi_close(&mr2->fid) == 0, "close the others",
	      NULL);
}

static void test_mr_many(struct fid_domain *domain)
{
	static const uint64_t extremes[] = { 0, 1, UINT64_MAX - 1, (uint64_t) 1 << 63 };
	struct fid_mr *mrs[MR_MANY] = { 0 };
	struct fid_cntr *cntr = NULL;
	size_t i, ok = 0, keys_ok = 0;
	uint64_t key;
	int ret;

	for (i = 0; i < MR_MANY; i++) {
		key = i < 4 ? extremes[i] : 0x5000 + i * 0x10001;
		ret = fi_mr_reg(domain, region[i % 4] + i, 128, FI_REMOTE_READ, 0, key, 0,
				&mrs[i], NULL);
		ok += ret == 0;
		keys_ok += ret == 0 && fi_mr_key(mrs[i]) == key;
	}
	check_what(ok == MR_MANY && keys_ok == MR_MANY,
	      "64 regions, overlapping, keys 0, 1, 2^63, UINT64_MAX - 1 and 60 more",
	      "%zu registered, %zu with their key", ok, keys_ok);
	if (!open_cntr(domain, FI_WAIT_NONE, &cntr)) {
		check_what(mrs[4] && fi_mr_bind(mrs[4], &cntr->fid, FI_REMOTE_WRITE) == 0,
		      "fi_mr_bind to a counter", NULL);
		check_what(fi_close(&cntr->fid) == -FI_EBUSY,
		      "a counter a region counts on refuses to close", NULL);
	}
	for (i = 0, ok = 0; i < MR_MANY; i++)
		ok += mrs[i] && fi_close(&mrs[i]->fid) == 0;
	check_what(ok == MR_MANY, "close them all", "%zu closed", ok);
	if (cntr)
		check_what(fi_close(&cntr->fid) == 0, "then the counter closes", NULL);
}

/* RMA to ourselves and its completion (len bytes; 0 on success). */
/* The completion of the one operation in flight, ctx's: 0, or why not. */
static int self_wait(struct fid_cq *cq_tx, void *ctx)
{
	struct fi_cq_msg_entry tx;
	ssize_t ret = fi_cq_sread(cq_tx, &tx, 1, NULL, 30000);

	return ret == 1 && tx.op_context == ctx ? 0 : (ret < 0 ? (int) ret : -FI_EIO);
}

static int self_rma(struct self_ep *s, struct fid_cq *cq_tx, bool write, void *buf,
		    size_t len, uint64_t key, void *ctx)
{
	struct fi_cq_msg_entry tx;
	ssize_t ret;

	do {
		ret = write ? fi_write(s->ep, buf, len, NULL, s->self, 0, key, ctx) :
			      fi_read(s->ep, buf, len, NULL, s->self, 0, key, ctx);
		if (ret == -FI_EAGAIN)
			fi_cq_read(cq_tx, &tx, 0);
	} while (ret == -FI_EAGAIN);
	return ret ? (int) ret : self_wait(cq_tx, ctx);
}

#define MR_CNTR_BIG (256 * 1024)
static uint8_t mr_cntr_win[2][MR_CNTR_BIG], mr_cntr_local[MR_CNTR_BIG];

/* One atomic on the first 8 bytes of key's region, FI_UINT64: a fetching
 * one (op), or with compare != NULL a compare one (FI_CSWAP); the old value
 * into *old. Waits for its completion. */
static int self_fetch_atomic(struct self_ep *s, struct fid_cq *cq_tx, enum fi_op op,
			     uint64_t operand, const uint64_t *compare, uint64_t key,
			     uint64_t *old, void *ctx)
{
	struct fi_cq_msg_entry tx;
	ssize_t ret;

	do {
		ret = compare ?
			fi_compare_atomic(s->ep, &operand, 1, NULL, compare, NULL,
					  old, NULL, s->self, 0, key, FI_UINT64,
					  FI_CSWAP, ctx) :
			fi_fetch_atomic(s->ep, &operand, 1, NULL, old, NULL, s->self,
					0, key, FI_UINT64, op, ctx);
		if (ret == -FI_EAGAIN)
			fi_cq_read(cq_tx, &tx, 0);
	} while (ret == -FI_EAGAIN);
	return ret ? (int) ret : self_wait(cq_tx, ctx);
}

/*
 * Atomics on regions with counters (fi_mr(3): FI_REMOTE_WRITE counts every
 * atomic that modifies the region, fetching and compare ones included, as
 * SOS's counter of what it received needs): a fetch-add and a
 * compare-swap count on the write counter, an FI_ATOMIC_READ does not; on
 * the region counted both ways a fetch-add (a read and a write) counts
 * once. Completions are delivery complete, so the target has counted
 * before the initiator's completion. cw and crw hold 2 and 4 on entry.
 */
static void test_mr_cntr_atomics(struct self_ep *s, struct fid_cq *cq_tx,
				 struct fid_cntr *cw, struct fid_cntr *crw)
{
	uint64_t before, old = 0, seen, compare;
	int ctx, ret;

	memcpy(&before, mr_cntr_win[0], sizeof(before));
	ret = self_fetch_atomic(s, cq_tx, FI_SUM, 5, NULL, 0x7001, &old, &ctx);
	memcpy(&seen, mr_cntr_win[0], sizeof(seen));
	check(ret == 0 && old == before && seen == before + 5,
	      "fetch-add 5 on the write-counted region: %d, old %#" PRIx64
	      " (want %#" PRIx64 "), now %#" PRIx64, ret, old, before, seen);
	check(fi_cntr_read(cw) == 3 && fi_cntr_readerr(cw) == 0,
	      "a fetch-add modifies the region: its write counter 3 (read %"
	      PRIu64 ")", fi_cntr_read(cw));
	ret = self_fetch_atomic(s, cq_tx, FI_ATOMIC_READ, 0, NULL, 0x7001, &old, &ctx);
	check(ret == 0 && old == before + 5, "FI_ATOMIC_READ: %d, %#" PRIx64, ret, old);
	check(fi_cntr_read(cw) == 3, "FI_ATOMIC_READ does not count on the write "
	      "counter (read %" PRIu64 ")", fi_cntr_read(cw));
	compare = before + 5;
	ret = self_fetch_atomic(s, cq_tx, FI_CSWAP, 0x5a5a, &compare, 0x7001, &old, &ctx);
	memcpy(&seen, mr_cntr_win[0], sizeof(seen));
	check(ret == 0 && old == before + 5 && seen == 0x5a5a,
	      "compare-swap on the write-counted region: %d, now %#" PRIx64, ret, seen);
	check(fi_cntr_read(cw) == 4, "a compare-swap counts on the write counter: 4 "
	      "(read %" PRIu64 ")", fi_cntr_read(cw));
	ret = self_fetch_atomic(s, cq_tx, FI_SUM, 1, NULL, 0x7002, &old, &ctx);
	check(ret == 0, "fetch-add on the region counted both ways: %d", ret);
	check(fi_cntr_read(crw) == 5, "it counts once there: 5 (read %" PRIu64 ")",
	      fi_cntr_read(crw));
}

/*
 * fi_mr_bind to counters (FI_RMA_EVENT): a region counts the remote
 * accesses of the kinds it was bound for, each once, whatever the path
 * (inline or striped rendezvous), on an endpoint writing to and reading
 * from its own regions. Counts are exact; data is checked byte for byte.
 */

static void test_mr_cntr(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_MSG };
	struct fid_cntr *cw = NULL, *crw = NULL, *other = NULL;
	struct fid_mr *mw = NULL, *mrw = NULL;
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct self_ep s = { 0 };
	size_t sizes[2] = { 100, MR_CNTR_BIG }, i;
	int ctx, ret;

	if ((ret = open_cntr(domain, FI_WAIT_UNSPEC, &cw)) ||
	    (ret = open_cntr(domain, FI_WAIT_UNSPEC, &crw)) ||
	    (ret = open_cntr(domain, FI_WAIT_UNSPEC, &other)) ||
	    (ret = fi_mr_reg(domain, mr_cntr_win[0], MR_CNTR_BIG,
			     FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0x7001, 0, &mw, NULL)) ||
	    (ret = fi_mr_reg(domain, mr_cntr_win[1], MR_CNTR_BIG,
			     FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0x7002, 0, &mrw, NULL)) ||
	    (ret = fi_cq_open(domain, &attr, &cq_tx, NULL)) ||
	    (ret = fi_cq_open(domain, &attr, &cq_rx, NULL))) {
		check_what(false, "counters, regions and CQs for RMA events", "%s",
			   fi_strerror(-ret));
		goto out;
	}
	check_what(fi_mr_bind(mw, &cw->fid, FI_REMOTE_WRITE | FI_SEND) == -FI_EBADFLAGS,
		   "fi_mr_bind with FI_SEND: -FI_EBADFLAGS", NULL);
	check_what(fi_mr_bind(mw, &cw->fid, 0) == -FI_EINVAL,
		   "fi_mr_bind without a kind of access: -FI_EINVAL", NULL);
	check_what(fi_mr_bind(mw, &cq_tx->fid, FI_REMOTE_WRITE) == -FI_EINVAL,
		   "fi_mr_bind to a CQ: -FI_EINVAL", NULL);
	check_what(fi_mr_bind(mw, &cw->fid, FI_REMOTE_WRITE) == 0,
		   "bind a write counter", NULL);
	check_what(fi_mr_bind(mw, &other->fid, FI_REMOTE_READ) == -FI_EBUSY,
		   "a second counter on one region: -FI_EBUSY", NULL);
	check_what(fi_mr_bind(mrw, &crw->fid, FI_REMOTE_WRITE) == 0 &&
		   fi_mr_bind(mrw, &crw->fid, FI_REMOTE_READ) == 0,
		   "bind a counter for writes, then for reads too", NULL);

	ret = self_ep_open(domain, info, cq_tx, cq_rx, &s);
	check_what(ret == 0, "an endpoint that reaches its own regions", "%s",
		   fi_strerror(-ret));
	if (ret)
		goto out;
	for (i = 0; i < 2; i++) {
		size_t len = sizes[i];
		uint64_t seed = 0x70 + i;

		check_pattern_fill(mr_cntr_local, len, seed);
		ret = self_rma(&s, cq_tx, true, mr_cntr_local, len, 0x7001, &ctx);
		check(ret == 0 && check_pattern_mismatch(mr_cntr_win[0], len, seed) == len,
		      "write %zu bytes to the write-counted region: %d, byte for byte",
		      len, ret);
		ret = fi_cntr_wait(cw, i + 1, 10000);
		check(ret == 0 && fi_cntr_read(cw) == i + 1 && fi_cntr_readerr(cw) == 0,
		      "its counter: %zu (wait %d, read %" PRIu64 ")", i + 1, ret,
		      fi_cntr_read(cw));
		memset(mr_cntr_local, 0, len);
		ret = self_rma(&s, cq_tx, false, mr_cntr_local, len, 0x7001, &ctx);
		check(ret == 0 && check_pattern_mismatch(mr_cntr_local, len, seed) == len,
		      "read %zu bytes back: %d, byte for byte", len, ret);
		check(fi_cntr_read(cw) == i + 1,
		      "a read does not count on a write counter (%" PRIu64 ")",
		      fi_cntr_read(cw));

		check_pattern_fill(mr_cntr_local, len, seed + 8);
		ret = self_rma(&s, cq_tx, true, mr_cntr_local, len, 0x7002, &ctx);
		check(ret == 0, "write %zu bytes to the region counted both ways: %d",
		      len, ret);
		ret = self_rma(&s, cq_tx, false, mr_cntr_local, len, 0x7002, &ctx);
		check(ret == 0 && check_pattern_mismatch(mr_cntr_local, len, seed + 8) == len,
		      "read them back: %d, byte for byte", ret);
		ret = fi_cntr_wait(crw, 2 * (i + 1), 10000);
		check(ret == 0 && fi_cntr_read(crw) == 2 * (i + 1),
		      "its counter counts the write and the read: %zu (read %" PRIu64 ")",
		      2 * (i + 1), fi_cntr_read(crw));
	}
	test_mr_cntr_atomics(&s, cq_tx, cw, crw);
	check(fi_cntr_read(other) == 0, "the refused counter counted nothing");
	check_what(fi_close(&cw->fid) == -FI_EBUSY,
		   "a counter a region counts on refuses to close", NULL);
out:
	if (s.ep)
		check_what(fi_close(&s.ep->fid) == 0, "close the endpoint", NULL);
	if (s.av)
		fi_close(&s.av->fid);
	if (mw)
		check_what(fi_close(&mw->fid) == 0, "close the regions", NULL);
	if (mrw)
		fi_close(&mrw->fid);
	if (cw)
		check_what(fi_close(&cw->fid) == 0, "then their counters close", NULL);
	if (crw)
		fi_close(&crw->fid);
	if (other)
		fi_close(&other->fid);
	if (cq_tx)
		fi_close(&cq_tx->fid);
	if (cq_rx)
		fi_close(&cq_rx->fid);
}

/* A second domain whose registrations complete on an EQ (FI_REG_MR). */
static void test_mr_async(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_domain *domain)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD };
	struct fid_domain *domain2 = NULL;
	struct fid_eq *eq = NULL, *eq2 = NULL;
	struct fid_mr *mr = NULL, *mr_d1 = NULL, *dup = NULL;
	struct fi_eq_entry entry = { 0 };
	uint32_t event = 0;
	int fd = -1, ret;
	ssize_t n;

	if ((ret = fi_domain(fabric, info, &domain2, NULL)) ||
	    (ret = fi_eq_open(fabric, &attr, &eq, NULL)) ||
	    (ret = fi_eq_open(fabric, &attr, &eq2, NULL)) ||
	    (ret = fi_control(&eq->fid, FI_GETWAIT, &fd))) {
		check_what(false, "a second domain and two EQs", "%s", fi_strerror(-ret));
		goto out;
	}
	ret = fi_domain_bind(domain2, &eq->fid, MRAIL_BIND_REG_MR);
	check_what(ret == 0, "bind an EQ to the domain with FI_REG_MR", "%d", ret);
	check_what(fi_domain_bind(domain2, &eq2->fid, 0) == -FI_EINVAL,
	      "a second EQ is refused", NULL);
	check_what(fi_close(&eq->fid) == -FI_EBUSY, "the bound EQ refuses to close", NULL);

	ret = fi_mr_reg(domain2, region[0], 256, FI_REMOTE_READ, 0, 0x1001, 0, &mr,
			(void *) 0x4001);
	check_what(ret == 0 && readable(fd), "register: 0, and the EQ's fd turns readable",
	      "returned %d", ret);
	n = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	check_what(n == sizeof(entry) && event == FI_MR_COMPLETE && mr &&
	      entry.fid == &mr->fid && entry.context == (void *) 0x4001,
	      "FI_MR_COMPLETE names the MR and its context", "returned %zd, event %u", n,
	      event);
	ret = fi_mr_reg(domain, region[1], 256, FI_REMOTE_READ, 0, 0x1001, 0, &mr_d1,
			NULL);
	check_what(ret == 0, "keys are per domain: 0x1001 in the first domain too", "%d", ret);
	ret = fi_mr_reg(domain2, region[1], 256, FI_REMOTE_READ, 0, 0x1001, 0, &dup,
			NULL);
	check_what(ret == -FI_ENOKEY &&
	      fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == -FI_EAGAIN,
	      "a refused registration reports no event", "returned %d", ret);
	if (mr_d1)
		fi_close(&mr_d1->fid);
	if (mr)
		check_what(fi_close(&mr->fid) == 0, "close the MR", NULL);
	check_what(fi_close(&domain2->fid) == 0, "close the second domain", NULL);
	domain2 = NULL;
	check_what(fi_close(&eq->fid) == 0, "then its EQ closes", NULL);
	eq = NULL;
out:
	if (domain2)
		fi_close(&domain2->fid);
	if (eq)
		fi_close(&eq->fid);
	if (eq2)
		fi_close(&eq2->fid);
}

static void test_mr(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain *domain)
{
	test_mr_reg(domain);
	test_mr_many(domain);
	test_mr_async(fabric, info, domain);
	test_mr_cntr(domain, info);
}

/* ---- every operation table: full, and unsupported calls refused ---- */

/*
 * An ops table is a size followed by function pointers. The table must be
 * as large as this program's headers know it (size) and hold no NULL
 * entry: libfabric's inline calls jump through any of them without a
 * check, so a NULL one is a crash at PC 0 (fi_shutdown was).
 */
static void check_table(const char *what, const void *table, size_t known)
{
	const size_t *size = table;
	void *const *fn;
	size_t i, n, nulls = 0;

	check(table != NULL, "%s: table present", what);
	if (!table)
		return;
	check(*size >= known, "%s: size %zu, headers know %zu", what, *size, known);
	n = (known - sizeof(size_t)) / sizeof(void *);
	fn = (void *const *) ((const char *) table + sizeof(size_t));
	for (i = 0; i < n; i++)
		nulls += !fn[i];
	check(nulls == 0, "%s: %zu of %zu entries NULL", what, nulls, n);
	/* The calls that follow may jump through a NULL entry: say so first. */
	fflush(stdout);
}

#define CHECK_TABLE(what, table, type) check_table(what, table, sizeof(type))

/* The generic fid operations every object carries, and the two every
 * mrail object refuses. */
static void check_fid(const char *what, struct fid *fid)
{
	char name[96], buf[64];
	void *ops = NULL;
	int ret;

	snprintf(name, sizeof(name), "%s fi_ops", what);
	CHECK_TABLE(name, fid->ops, struct fi_ops);
	ret = fi_open_ops(fid, "mrail_no_such_ops", 0, &ops, NULL);
	check(ret == -FI_ENOSYS, "%s: fi_open_ops = %d (want -FI_ENOSYS)", what, ret);
	ret = fi_set_ops(fid, "mrail_no_such_ops", 0, buf, NULL);
	check(ret == -FI_ENOSYS, "%s: fi_set_ops = %d (want -FI_ENOSYS)", what, ret);
	ret = fid->ops->tostr(fid, buf, sizeof(buf));
	check(ret == -FI_ENOSYS, "%s: tostr = %d (want -FI_ENOSYS)", what, ret);
}

/* A call an object may implement or refuse: either way a number, and
 * nothing opened is left behind. */
static void check_opt_open(const char *what, int ret, struct fid *opened)
{
	check(ret == 0 || (ret < 0 && ret > -1000), "%s = %d (0 or -FI_errno)",
	      what, ret);
	if (!ret && opened)
		check(fi_close(opened) == 0, "%s: close what it opened", what);
}

static void test_ops(struct fid_fabric *fabric, struct fid_domain *domain,
		     struct fi_info *info)
{
	struct fi_eq_attr eq_attr = { .size = 8, .wait_obj = FI_WAIT_NONE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_av_set_attr set_attr = { .count = 4, .start_addr = FI_ADDR_NOTAVAIL,
					   .end_addr = FI_ADDR_NOTAVAIL };
	struct fi_poll_attr poll_attr = { 0 };
	struct fi_wait_attr wait_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_tx_attr tx_attr = { 0 };
	struct fi_rx_attr rx_attr = { 0 };
	struct fid_eq *eq = NULL;
	struct fid_cq *cq = NULL;
	struct fid_cntr *cntr = NULL;
	struct fid_av *av = NULL;
	struct fid_av_set *set = NULL;
	struct fid_ep *ep = NULL, *ep2 = NULL, *ctx = NULL, *sep = NULL;
	struct fid_domain *domain2 = NULL;
	struct fid_poll *pollset = NULL;
	struct fid_wait *waitset = NULL;
	struct fid_stx *stx = NULL;
	struct fid_mr *mr = NULL;
	uint8_t addr[512];
	size_t len = sizeof(addr);
	int ret;

	CHECK_TABLE("fabric fi_ops_fabric", fabric->ops, struct fi_ops_fabric);
	check_fid("fabric", &fabric->fid);
	CHECK_TABLE("domain fi_ops_domain", domain->ops, struct fi_ops_domain);
	CHECK_TABLE("domain fi_ops_mr", domain->mr, struct fi_ops_mr);
	check_fid("domain", &domain->fid);

	/* fi_domain2 / fi_endpoint2 without flags are fi_domain /
	 * fi_endpoint; flags asking for peer providers are refused. */
	ret = fi_domain2(fabric, info, &domain2, 0, NULL);
	check(ret == 0, "fi_domain2(flags 0) = %d", ret);
	if (!ret)
		check(fi_close(&domain2->fid) == 0, "close the fi_domain2 domain");
	domain2 = NULL;
	ret = fi_domain2(fabric, info, &domain2, FI_PEER, NULL);
	check(ret == -FI_EBADFLAGS, "fi_domain2(FI_PEER) = %d (want -FI_EBADFLAGS)", ret);
	ret = fi_passive_ep(fabric, info, (struct fid_pep **) &ctx, NULL);
	check_opt_open("fi_passive_ep", ret, ctx ? &ctx->fid : NULL);
	ctx = NULL;
	ret = fi_wait_open(fabric, &wait_attr, &waitset);
	check_opt_open("fi_wait_open", ret, waitset ? &waitset->fid : NULL);
	ret = fi_poll_open(domain, &poll_attr, &pollset);
	check_opt_open("fi_poll_open", ret, pollset ? &pollset->fid : NULL);
	ret = fi_stx_context(domain, &tx_attr, &stx, NULL);
	check_opt_open("fi_stx_context", ret, stx ? &stx->fid : NULL);
	ret = fi_srx_context(domain, &rx_attr, &ctx, NULL);
	check_opt_open("fi_srx_context", ret, ctx ? &ctx->fid : NULL);
	ctx = NULL;
	ret = fi_scalable_ep(domain, info, &sep, NULL);
	check_opt_open("fi_scalable_ep", ret, sep ? &sep->fid : NULL);

	if ((ret = fi_eq_open(fabric, &eq_attr, &eq, NULL))) {
		check(false, "fi_eq_open = %d", ret);
	} else {
		CHECK_TABLE("eq fi_ops_eq", eq->ops, struct fi_ops_eq);
		check_fid("eq", &eq->fid);
	}
	if ((ret = fi_cq_open(domain, &cq_attr, &cq, NULL))) {
		check(false, "fi_cq_open = %d", ret);
	} else {
		CHECK_TABLE("cq fi_ops_cq", cq->ops, struct fi_ops_cq);
		check_fid("cq", &cq->fid);
	}
	if ((ret = fi_cntr_open(domain, &cntr_attr, &cntr, NULL))) {
		check(false, "fi_cntr_open = %d", ret);
	} else {
		CHECK_TABLE("cntr fi_ops_cntr", cntr->ops, struct fi_ops_cntr);
		check_fid("cntr", &cntr->fid);
	}
	if ((ret = fi_av_open(domain, &av_attr, &av, NULL))) {
		check(false, "fi_av_open = %d", ret);
	} else {
		CHECK_TABLE("av fi_ops_av", av->ops, struct fi_ops_av);
		check_fid("av", &av->fid);
		ret = fi_av_set(av, &set_attr, &set, NULL);
		if (!ret) {
			CHECK_TABLE("av set fi_ops_av_set", set->ops,
				    struct fi_ops_av_set);
			check_fid("av set", &set->fid);
			check(fi_close(&set->fid) == 0, "close the av set");
		} else {
			check_opt_open("fi_av_set", ret, NULL);
		}
	}
	if ((ret = fi_mr_reg(domain, region[0], 64, FI_SEND, 0, 0x3001, 0, &mr,
			     NULL))) {
		check(false, "fi_mr_reg = %d", ret);
	} else {
		check_fid("mr", &mr->fid);
		check(fi_close(&mr->fid) == 0, "close the mr");
	}

	ret = fi_endpoint2(domain, info, &ep2, FI_PEER, NULL);
	check(ret == -FI_EBADFLAGS, "fi_endpoint2(FI_PEER) = %d (want -FI_EBADFLAGS)", ret);
	ret = fi_endpoint2(domain, info, &ep2, 0, NULL);
	check(ret == 0, "fi_endpoint2(flags 0) = %d", ret);
	if (!ret)
		check(fi_close(&ep2->fid) == 0, "close the fi_endpoint2 endpoint");

	ret = fi_endpoint(domain, info, &ep, NULL);
	check(ret == 0, "fi_endpoint = %d", ret);
	if (ret)
		goto out;
	CHECK_TABLE("ep fi_ops_ep", ep->ops, struct fi_ops_ep);
	CHECK_TABLE("ep fi_ops_cm", ep->cm, struct fi_ops_cm);
	CHECK_TABLE("ep fi_ops_msg", ep->msg, struct fi_ops_msg);
	CHECK_TABLE("ep fi_ops_tagged", ep->tagged, struct fi_ops_tagged);
	CHECK_TABLE("ep fi_ops_rma", ep->rma, struct fi_ops_rma);
	CHECK_TABLE("ep fi_ops_atomic", ep->atomic, struct fi_ops_atomic);
	CHECK_TABLE("ep fi_ops_collective", ep->collective, struct fi_ops_collective);
	check_fid("ep", &ep->fid);
	if (av && cq && eq &&
	    ((ret = fi_ep_bind(ep, &av->fid, 0)) ||
	     (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	     (ret = fi_enable(ep)))) {
		check(false, "bind and enable the endpoint: %d", ret);
		goto out;
	}

	/* Connection management of a connectionless endpoint: refused,
	 * never a crash (fi_shutdown was a NULL entry). */
	ret = fi_shutdown(ep, 0);
	check(ret == -FI_ENOSYS, "fi_shutdown = %d (want -FI_ENOSYS)", ret);
	ret = fi_connect(ep, addr, NULL, 0);
	check(ret == -FI_ENOSYS, "fi_connect = %d (want -FI_ENOSYS)", ret);
	ret = fi_accept(ep, NULL, 0);
	check(ret == -FI_ENOSYS, "fi_accept = %d (want -FI_ENOSYS)", ret);
	ret = fi_getpeer(ep, addr, &len);
	check(ret == -FI_ENOSYS, "fi_getpeer = %d (want -FI_ENOSYS)", ret);
	ret = ep->cm->listen((struct fid_pep *) ep);
	check(ret == -FI_ENOSYS, "listen = %d (want -FI_ENOSYS)", ret);
	ret = ep->cm->reject((struct fid_pep *) ep, &ep->fid, NULL, 0);
	check(ret == -FI_ENOSYS, "reject = %d (want -FI_ENOSYS)", ret);
	len = sizeof(addr);
	ret = fi_getname(&ep->fid, addr, &len);
	check(ret == 0 && len > 0, "fi_getname = %d, %zu bytes", ret, len);
	ret = fi_setname(&ep->fid, addr, len);
	check(ret == -FI_ENOSYS, "fi_setname = %d (want -FI_ENOSYS)", ret);
	/* Contexts of scalable endpoints, and the deprecated size calls. */
	ret = fi_tx_context(ep, 0, &tx_attr, &ctx, NULL);
	check(ret == -FI_ENOSYS, "fi_tx_context = %d (want -FI_ENOSYS)", ret);
	ret = fi_rx_context(ep, 0, &rx_attr, &ctx, NULL);
	check(ret == -FI_ENOSYS, "fi_rx_context = %d (want -FI_ENOSYS)", ret);
	check(ep->ops->rx_size_left(ep) == -FI_ENOSYS, "rx_size_left = -FI_ENOSYS");
	check(ep->ops->tx_size_left(ep) == -FI_ENOSYS, "tx_size_left = -FI_ENOSYS");
out:
	if (ep)
		check(fi_close(&ep->fid) == 0, "close the endpoint");
	if (av)
		check(fi_close(&av->fid) == 0, "close the av");
	if (cntr)
		check(fi_close(&cntr->fid) == 0, "close the counter");
	if (cq)
		check(fi_close(&cq->fid) == 0, "close the cq");
	if (eq)
		check(fi_close(&eq->fid) == 0, "close the eq");
}

/* ---- fi_getinfo: what the hints ask is honoured or refused ---- */

/* fi_getinfo for mrail with the hints init made; *info NULL on error. */
static int getinfo_with(struct fi_info *hints, uint32_t version, struct fi_info **info)
{
	*info = NULL;
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	return fi_getinfo(version, NULL, NULL, 0, hints, info);
}

static void test_getinfo(void)
{
	struct fi_info *hints = fi_allocinfo(), *info, *fi;
	int ret;

	/* Primary caps: exactly the ones asked; contexts hold only their
	 * own bits; free secondary caps and the domain's caps shown. */
	hints->caps = FI_MSG;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0, "getinfo caps FI_MSG = %d", ret);
	for (fi = info; fi; fi = fi->next) {
		check(!(fi->caps & (FI_TAGGED | FI_RMA | FI_ATOMIC | FI_COLLECTIVE |
				    FI_DIRECTED_RECV)),
		      "caps FI_MSG: no other primary cap (%#llx)",
		      (unsigned long long) fi->caps);
		check((fi->caps & (FI_MSG | FI_SEND | FI_RECV)) ==
		      (FI_MSG | FI_SEND | FI_RECV), "caps FI_MSG: FI_SEND|FI_RECV implied");
		check(!(fi->tx_attr->caps & (FI_RECV | FI_LOCAL_COMM | FI_SOURCE)),
		      "tx_attr->caps %#llx: no receive or domain bit",
		      (unsigned long long) fi->tx_attr->caps);
		check(!(fi->rx_attr->caps & (FI_SEND | FI_LOCAL_COMM)),
		      "rx_attr->caps %#llx: no send or domain bit",
		      (unsigned long long) fi->rx_attr->caps);
		check(fi->domain_attr->caps == (FI_LOCAL_COMM | FI_REMOTE_COMM),
		      "domain_attr->caps %#llx", (unsigned long long) fi->domain_attr->caps);
		check(fi->domain_attr->mr_iov_limit == 1, "mr_iov_limit %zu",
		      fi->domain_attr->mr_iov_limit);
		check(fi->domain_attr->mr_key_size == 8, "mr_key_size %zu",
		      fi->domain_attr->mr_key_size);
	}
	fi_freeinfo(info);

	/* Any API version the library serves is answered (fi_version(3)),
	 * and the offer says which one it follows. */
	{
		const uint32_t versions[] = { FI_VERSION(1, 5), FI_VERSION(1, 17),
					      fi_version() };
		size_t i;

		for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
			ret = getinfo_with(hints, versions[i], &info);
			check(ret == 0 && info->fabric_attr->api_version == versions[i],
			      "getinfo at API %u.%u = %d, api_version %#x",
			      FI_MAJOR(versions[i]), FI_MINOR(versions[i]), ret,
			      ret ? 0 : info->fabric_attr->api_version);
			fi_freeinfo(info);
		}
	}
	/* comp_order binds 1.x callers only; 2.x callers "should set it
	 * to 0" (fi_endpoint(3) of 2.x) and mrail does not hold them to it. */
	hints->tx_attr->comp_order = MRAIL_ORDER_STRICT;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo API 1.17, comp_order STRICT = %d "
	      "(want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	if (fi_version() >= FI_VERSION(2, 0)) {
		ret = getinfo_with(hints, fi_version(), &info);
		check(ret == 0, "getinfo API %u.%u, comp_order set = %d (want 0)",
		      FI_MAJOR(fi_version()), FI_MINOR(fi_version()), ret);
		fi_freeinfo(info);
	}
	hints->tx_attr->comp_order = 0;

	/* Secondary caps asked are given or refused. */
	hints->caps = FI_MSG | FI_SOURCE | FI_MULTI_RECV;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->caps & (FI_SOURCE | FI_MULTI_RECV)) ==
	      (FI_SOURCE | FI_MULTI_RECV), "getinfo asked FI_SOURCE|FI_MULTI_RECV = %d", ret);
	check(!ret && (info->rx_attr->caps & FI_SOURCE) && !(info->tx_attr->caps & FI_SOURCE),
	      "FI_SOURCE is a receive cap");
	fi_freeinfo(info);
	/* Named AVs: given when asked, in caps or domain caps, never unasked. */
	hints->caps = FI_MSG;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && !(info->caps & FI_SHARED_AV) &&
	      !(info->domain_attr->caps & FI_SHARED_AV),
	      "FI_SHARED_AV is given only when asked");
	fi_freeinfo(info);
	hints->caps = FI_MSG | FI_SHARED_AV;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->caps & FI_SHARED_AV) &&
	      (info->domain_attr->caps & FI_SHARED_AV),
	      "getinfo asked FI_SHARED_AV = %d, given", ret);
	fi_freeinfo(info);
	hints->caps = FI_MSG;
	hints->domain_attr->caps = FI_SHARED_AV;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->domain_attr->caps & FI_SHARED_AV),
	      "getinfo domain caps FI_SHARED_AV = %d, given", ret);
	fi_freeinfo(info);
	hints->domain_attr->caps = 0;

	/* Ordering: send-after-send only. */
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->tx_attr->msg_order & FI_ORDER_SAS),
	      "getinfo msg_order SAS = %d", ret);
	fi_freeinfo(info);
	hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo tx msg_order RAW = %d (want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	hints->tx_attr->msg_order = 0;
	hints->rx_attr->msg_order = MRAIL_ORDER_DATA;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo rx msg_order DATA = %d (want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	hints->rx_attr->msg_order = 0;

	/* mr_mode: offsets and application keys only. */
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode = MRAIL_MR_BASIC;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo FI_MR_BASIC = %d (want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = MRAIL_MR_SCALABLE;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && info->domain_attr->mr_mode == MRAIL_MR_SCALABLE,
	      "getinfo FI_MR_SCALABLE = %d, mr_mode %d", ret, ret ? -1 :
	      info->domain_attr->mr_mode);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY |
				      FI_MR_ALLOCATED;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && info->domain_attr->mr_mode == 0,
	      "getinfo mr_mode bits allowed = %d, mr_mode %d", ret, ret ? -1 :
	      info->domain_attr->mr_mode);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* ---- socket address format and FI_EVENT AVs ---- */

/*
 * Hints asking for FI_SOCKADDR_IN get an offer in that format: the
 * endpoint's name is its first rail's IPv4 address, which an FI_EVENT AV
 * takes (reported on its EQ, a bad address as an error entry with its
 * index) and a message to it reaches this endpoint, byte for byte, once
 * the HELLO has completed the peer.
 */
static void test_sockaddr(struct fid_fabric *fabric)
{
	struct fi_eq_attr eq_attr = { .size = 16, .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	static const char payload[] = "mrail objs: to a socket address";
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct fid_domain *dom = NULL;
	struct fid_eq *eq = NULL;
	struct fid_cq *cq = NULL;
	struct fid_av *av = NULL;
	struct fid_ep *ep = NULL;
	struct sockaddr_in addrs[2], back;
	struct fi_eq_entry entry = { 0 };
	struct fi_eq_err_entry err = { 0 };
	struct fi_cq_msg_entry comp;
	fi_addr_t fa[2] = { FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL };
	char text[64], rbuf[64] = "";
	size_t len = sizeof(addrs[0]), tlen = sizeof(text);
	uint32_t event = 0;
	int ctx, rctx, sctx, ret, got;
	ssize_t n;

	hints->addr_format = FI_SOCKADDR_IN;
	hints->caps = FI_MSG;
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	check(ret == 0 && info->addr_format == FI_SOCKADDR_IN &&
	      info->src_addrlen == sizeof(struct sockaddr_in),
	      "getinfo FI_SOCKADDR_IN: %d, format %u, src_addrlen %zu", ret,
	      ret ? 0 : info->addr_format, ret ? 0 : info->src_addrlen);
	hints->addr_format = FI_SOCKADDR_IB;
	check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &(struct fi_info *){ 0 }) ==
	      -FI_ENODATA, "getinfo FI_SOCKADDR_IB: -FI_ENODATA");
	fi_freeinfo(hints);
	if (ret)
		return;
	if ((ret = fi_domain(fabric, info, &dom, NULL)) ||
	    (ret = fi_eq_open(fabric, &eq_attr, &eq, NULL)) ||
	    (ret = fi_cq_open(dom, &cq_attr, &cq, NULL)) ||
	    (ret = fi_av_open(dom, &av_attr, &av, NULL)) ||
	    (ret = fi_endpoint(dom, info, &ep, NULL))) {
		check(false, "objects in FI_SOCKADDR_IN format: %d", ret);
		goto out;
	}
	ret = fi_av_insert(av, addrs, 1, fa, 0, &ctx);
	check(ret == -FI_ENOEQ, "FI_EVENT AV without an EQ: %d (want -FI_ENOEQ)", ret);
	if ((ret = fi_av_bind(av, &eq->fid, 0)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(ep))) {
		check(false, "bind and enable: %d", ret);
		goto out;
	}
	ret = fi_getname(&ep->fid, &addrs[0], &len);
	check(ret == 0 && len == sizeof(addrs[0]) && addrs[0].sin_family == AF_INET &&
	      addrs[0].sin_port != 0,
	      "fi_getname: an IPv4 socket address (%d, %zu bytes)", ret, len);
	memset(&addrs[1], 0, sizeof(addrs[1]));
	ret = fi_av_insert(av, addrs, 2, fa, 0, &ctx);
	check(ret == 0, "FI_EVENT insert of a good and a bad address: %d", ret);
	n = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	check(n == -FI_EAVAIL, "the bad address first: an error entry (%zd)", n);
	n = fi_eq_readerr(eq, &err, 0);
	check(n == sizeof(err) && err.fid == &av->fid && err.context == &ctx &&
	      err.data == 1 && err.err == FI_EINVAL,
	      "error entry: the AV, the context, index 1, FI_EINVAL (%zd, data %" PRIu64
	      ", err %d)", n, err.data, err.err);
	n = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	check(n == sizeof(entry) && event == FI_AV_COMPLETE && entry.fid == &av->fid &&
	      entry.context == &ctx && entry.data == 1,
	      "FI_AV_COMPLETE: 1 inserted (%zd, event %u, data %" PRIu64 ")", n, event,
	      entry.data);
	check(fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == -FI_EAGAIN,
	      "nothing more on the EQ");
	check(fa[0] != FI_ADDR_NOTAVAIL && fa[1] == FI_ADDR_NOTAVAIL,
	      "fi_addr: the good one set, the bad one FI_ADDR_NOTAVAIL");
	len = sizeof(back);
	ret = fi_av_lookup(av, fa[0], &back, &len);
	check(ret == 0 && len == sizeof(back) && !memcmp(&back, &addrs[0], sizeof(back)),
	      "fi_av_lookup gives the socket address back (%d, %zu bytes)", ret, len);
	fi_av_straddr(av, &addrs[0], text, &tlen);
	check(!strncmp(text, "fi_sockaddr_in://", 17), "fi_av_straddr: %s", text);

	/* A message to ourselves through the socket address. */
	ret = fi_recv(ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &rctx);
	check(ret == 0, "post a receive: %d", ret);
	got = 0;
	while ((n = fi_send(ep, payload, sizeof(payload), NULL, fa[0], &sctx)) == -FI_EAGAIN)
		fi_cq_read(cq, &comp, 0);
	check(n == 0, "send to our socket address: %zd", n);
	while (got < 2) {
		n = fi_cq_sread(cq, &comp, 1, NULL, 30000);
		if (n != 1)
			break;
		got += comp.op_context == &rctx || comp.op_context == &sctx;
	}
	check(got == 2 && !memcmp(rbuf, payload, sizeof(payload)),
	      "send and receive complete, data byte for byte (%d completions)", got);
out:
	if (ep)
		check(fi_close(&ep->fid) == 0, "close the endpoint");
	if (av)
		check(fi_close(&av->fid) == 0, "close the FI_EVENT AV");
	if (cq)
		fi_close(&cq->fid);
	if (eq)
		check(fi_close(&eq->fid) == 0, "then its EQ");
	if (dom)
		fi_close(&dom->fid);
	fi_freeinfo(info);
}

/* ---- fi_trywait over several objects ---- */

static void test_trywait(struct fid_fabric *fabric, struct fid_domain *domain)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_CONTEXT,
		.wait_obj = FI_WAIT_FD,
	};
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD, .flags = FI_WRITE };
	struct fi_eq_entry entry = { 0 };
	struct fi_cq_entry comp;
	struct fid_cntr *cntr = NULL;
	struct fid_cq *cq = NULL;
	struct fid_eq *eq = NULL;
	struct fid *fids[3];
	uint32_t event;
	int ret;

	if ((ret = open_cntr(domain, FI_WAIT_FD, &cntr)) ||
	    (ret = fi_cq_open(domain, &cq_attr, &cq, NULL)) ||
	    (ret = fi_eq_open(fabric, &eq_attr, &eq, NULL))) {
		check_what(false, "open an FD counter, CQ and EQ", "%s", fi_strerror(-ret));
		goto out;
	}
	fids[0] = &cntr->fid;
	fids[1] = &cq->fid;
	fids[2] = &eq->fid;
	check_what(fi_trywait(fabric, fids, 3) == 0, "three quiet objects: 0", NULL);
	check_what(fi_trywait(fabric, fids, 0) == 0, "no objects: 0", NULL);
	fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0);
	check_what(fi_trywait(fabric, fids, 3) == -FI_EAGAIN,
	      "an event on the last: -FI_EAGAIN", NULL);
	fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	fi_cntr_add(cntr, 1);
	check_what(fi_trywait(fabric, fids, 3) == -FI_EAGAIN, "a counter change: -FI_EAGAIN",
	      NULL);
	fi_cntr_read(cntr);
	check_what(fi_trywait(fabric, fids, 3) == 0, "all seen: 0 again", NULL);
	fi_cq_signal(cq);
	fi_cq_read(cq, &comp, 1);
	check_what(fi_trywait(fabric, fids, 3) == 0, "a signal does not queue anything", NULL);
	fids[1] = &domain->fid;
	check_what(fi_trywait(fabric, fids, 3) == -FI_EINVAL, "a domain is no wait object",
	      NULL);
out:
	if (cntr)
		fi_close(&cntr->fid);
	if (cq)
		fi_close(&cq->fid);
	if (eq)
		fi_close(&eq->fid);
}

#define EXIT_BUSY_MSGS 32
static uint8_t busy[EXIT_BUSY_MSGS][1 << 20];

/* Exits from inside: see the top of the file. */
/* ---- scalable endpoints ---- */

/* Reads one completion from cq within about 10 s, progressing it. */
static bool sep_read_one(struct fid_cq *cq, struct fi_cq_msg_entry *comp)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (fi_cq_read(cq, comp, 1) == 1)
			return true;
		usleep(1000);
	}
	return false;
}

static void test_sep(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .rx_ctx_bits = 1 };
	static const char payload[] = "mrail objs: through a scalable endpoint";
	struct fid_ep *sep = NULL, *tx = NULL, *rx = NULL, *extra = NULL;
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct fi_cq_msg_entry comp = { 0 };
	struct fi_info *sinfo;
	struct fid_av *av = NULL;
	uint8_t addr[1024];
	size_t len = sizeof(addr);
	char rbuf[64] = "";
	fi_addr_t self = FI_ADDR_NOTAVAIL;
	int ctx_tx, ctx_rx, sep_ctx, tx_ctx, rx_ctx, ret;
	ssize_t sret;

	sinfo = fi_dupinfo(info);
	sinfo->ep_attr->tx_ctx_cnt = 2;
	sinfo->ep_attr->rx_ctx_cnt = 2;
	ret = fi_scalable_ep(domain, sinfo, &sep, &sep_ctx);
	check_what(ret == -FI_EINVAL, "fi_scalable_ep refuses two contexts", "%s",
		   fi_strerror(-ret));
	sinfo->ep_attr->tx_ctx_cnt = 1;
	sinfo->ep_attr->rx_ctx_cnt = 1;
	sep = NULL;
	ret = fi_scalable_ep(domain, sinfo, &sep, &sep_ctx);
	check_what(ret == 0 && sep && sep->fid.fclass == FI_CLASS_SEP,
		   "fi_scalable_ep with one context each way", "%s", fi_strerror(-ret));
	fi_freeinfo(sinfo);
	if (ret)
		return;
	if (fi_cq_open(domain, &cq_attr, &cq_tx, NULL) ||
	    fi_cq_open(domain, &cq_attr, &cq_rx, NULL) ||
	    fi_av_open(domain, &av_attr, &av, NULL)) {
		check_what(false, "open two CQs and an AV with rx_ctx_bits", NULL);
		goto out;
	}
	ret = fi_tx_context(sep, 1, NULL, &extra, NULL);
	check_what(ret == -FI_EINVAL, "fi_tx_context index 1 is refused", "%s",
		   fi_strerror(-ret));
	ret = fi_tx_context(sep, 0, NULL, &tx, &tx_ctx);
	check_what(ret == 0 && tx->fid.fclass == FI_CLASS_TX_CTX &&
		   tx->fid.context == &tx_ctx, "fi_tx_context 0", "%s",
		   fi_strerror(-ret));
	ret = fi_rx_context(sep, 0, NULL, &rx, &rx_ctx);
	check_what(ret == 0 && rx->fid.fclass == FI_CLASS_RX_CTX &&
		   rx->fid.context == &rx_ctx, "fi_rx_context 0", "%s",
		   fi_strerror(-ret));
	if (!tx || !rx)
		goto out;
	ret = fi_ep_bind(tx, &cq_rx->fid, FI_RECV);
	check_what(ret == -FI_EINVAL, "a transmit context refuses a receive CQ", "%s",
		   fi_strerror(-ret));
	ret = fi_ep_bind(tx, &av->fid, 0);
	check_what(ret == -FI_EINVAL, "a context refuses the AV", "%s", fi_strerror(-ret));
	if ((ret = fi_scalable_ep_bind(sep, &av->fid, 0)) ||
	    (ret = fi_ep_bind(tx, &cq_tx->fid, FI_TRANSMIT)) ||
	    (ret = fi_ep_bind(rx, &cq_rx->fid, FI_RECV)) ||
	    (ret = fi_enable(tx)) || (ret = fi_enable(rx)) || (ret = fi_enable(sep)) ||
	    (ret = fi_getname(&sep->fid, addr, &len))) {
		check_what(false, "bind and enable the scalable endpoint", "%s",
			   fi_strerror(-ret));
		goto out;
	}
	ret = fi_av_insert(av, addr, 1, &self, 0, NULL);
	check_what(ret == 1, "insert our own address", "%d", ret);
	ret = fi_recv(rx, rbuf, sizeof(rbuf), NULL, fi_rx_addr(self, 0, 1), &ctx_rx);
	check_what(ret == 0, "fi_recv on the receive context", "%s", fi_strerror(-ret));
	do {
		sret = fi_send(tx, payload, sizeof(payload), NULL, fi_rx_addr(self, 0, 1),
			       &ctx_tx);
		if (sret == -FI_EAGAIN)
			fi_cq_read(cq_tx, NULL, 0);
	} while (sret == -FI_EAGAIN);
	check_what(sret == 0, "fi_send on the transmit context to rx context 0", "%s",
		   fi_strerror((int) -sret));
	check_what(sep_read_one(cq_tx, &comp) && comp.op_context == &ctx_tx &&
		   (comp.flags & FI_SEND), "the send completes on the transmit "
		   "context's CQ", NULL);
	check_what(sep_read_one(cq_rx, &comp) && comp.op_context == &ctx_rx &&
		   (comp.flags & FI_RECV) && comp.len == sizeof(payload) &&
		   !memcmp(rbuf, payload, sizeof(payload)),
		   "the message arrives whole on the receive context's CQ", NULL);
	sret = fi_send(tx, payload, 1, NULL, fi_rx_addr(self, 1, 1), NULL);
	check_what(sret == -FI_EINVAL, "a send to receive context 1 is refused", "%s",
		   fi_strerror((int) -sret));
	ret = fi_close(&sep->fid);
	check_what(ret == -FI_EBUSY, "the scalable endpoint refuses to close with "
		   "contexts open", "%s", fi_strerror(-ret));
out:
	if (tx)
		fi_close(&tx->fid);
	if (rx)
		fi_close(&rx->fid);
	if (cq_tx)
		check_what(fi_close(&cq_tx->fid) == 0, "a closed context's CQ closes "
			   "before the scalable endpoint", NULL);
	if (cq_rx)
		fi_close(&cq_rx->fid);
	check_what(fi_close(&sep->fid) == 0, "close the scalable endpoint", NULL);
	if (av)
		fi_close(&av->fid);
}

/* ---- poll sets ---- */

/* Polls until the set reports something or about 10 s pass; returns how
 * many contexts fi_poll gave and keeps them in ctx. */
static int poll_until_any(struct fid_poll *set, void **ctx, int count)
{
	int i, n = 0;

	for (i = 0; i < 10000 && !n; i++) {
		n = fi_poll(set, ctx, count);
		if (!n)
			usleep(1000);
	}
	return n;
}

static bool poll_has(void **ctx, int n, const void *want)
{
	int i;

	for (i = 0; i < n; i++) {
		if (ctx[i] == want)
			return true;
	}
	return false;
}

static void test_poll(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	static const char payload[] = "mrail objs: seen through a poll set";
	int cq_tx_tag, cq_rx_tag, cntr_tag, ctx_tx, ctx_rx;
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct fi_cq_msg_entry rx = { 0 }, tx = { 0 };
	struct fid_cntr *cntr = NULL;
	struct fid_poll *set = NULL;
	struct self_ep s = { 0 };
	char rbuf[64] = "";
	void *ctx[8];
	bool got_rx = false;
	int n, ret;

	if (fi_cq_open(domain, &cq_attr, &cq_tx, &cq_tx_tag) ||
	    fi_cq_open(domain, &cq_attr, &cq_rx, &cq_rx_tag) ||
	    fi_cntr_open(domain, &cntr_attr, &cntr, &cntr_tag)) {
		check_what(false, "open two CQs and a counter for the poll set", NULL);
		goto out;
	}
	ret = fi_poll_open(domain, &(struct fi_poll_attr) { .flags = 1 }, &set);
	check_what(ret == -FI_EINVAL, "fi_poll_open refuses reserved flags", "%s",
		   fi_strerror(-ret));
	ret = fi_poll_open(domain, &(struct fi_poll_attr) { 0 }, &set);
	check_what(ret == 0, "fi_poll_open", "%s", fi_strerror(-ret));
	if (ret)
		goto out;
	check_what(fi_poll_add(set, &cq_tx->fid, 0) == 0 &&
		   fi_poll_add(set, &cq_rx->fid, 0) == 0 &&
		   fi_poll_add(set, &cntr->fid, 0) == 0,
		   "fi_poll_add two CQs and a counter", NULL);
	ret = fi_poll_add(set, &cq_rx->fid, 0);
	check_what(ret == -FI_EALREADY, "a CQ added twice is refused", "%s",
		   fi_strerror(-ret));
	ret = fi_poll_add(set, &domain->fid, 0);
	check_what(ret == -FI_EINVAL, "a domain is no poll set member", "%s",
		   fi_strerror(-ret));
	n = fi_poll(set, ctx, 8);
	check_what(n == 0, "an idle poll set reports nothing", "fi_poll gave %d", n);

	ret = fi_cntr_add(cntr, 3);
	n = poll_until_any(set, ctx, 8);
	check_what(ret == 0 && n == 1 && ctx[0] == &cntr_tag,
		   "a counter that moved is reported, alone", "fi_poll gave %d", n);
	n = fi_poll(set, ctx, 8);
	check_what(n == 0, "the same count is not reported twice", "fi_poll gave %d", n);

	ret = self_ep_open(domain, info, cq_tx, cq_rx, &s);
	check_what(ret == 0, "an endpoint that can send to itself", "%s",
		   fi_strerror(-ret));
	if (ret)
		goto close_set;
	if (fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, s.self, &ctx_rx) ||
	    self_send(&s, cq_rx, payload, sizeof(payload), &ctx_tx, &rx, &got_rx)) {
		check_what(false, "post a receive and a send to ourselves", NULL);
		goto close_set;
	}
	/* The receive may already have been read while the send waited for
	 * the rails; otherwise the poll set must show both CQs. */
	n = poll_until_any(set, ctx, 8);
	if (!got_rx && n < 2 && !poll_has(ctx, n, &cq_rx_tag))
		n += poll_until_any(set, ctx + n, 8 - n);
	check_what(poll_has(ctx, n, &cq_tx_tag), "the send's CQ is reported", NULL);
	check_what(got_rx || poll_has(ctx, n, &cq_rx_tag), "the receive's CQ is reported",
		   NULL);
	check_what(fi_cq_read(cq_tx, &tx, 1) == 1 && tx.op_context == &ctx_tx,
		   "the reported send completion is there", NULL);
	if (!got_rx)
		got_rx = fi_cq_read(cq_rx, &rx, 1) == 1;
	check_what(got_rx && rx.op_context == &ctx_rx && rx.len == sizeof(payload) &&
		   !memcmp(rbuf, payload, sizeof(payload)),
		   "the reported receive holds the message", NULL);
	n = fi_poll(set, ctx, 8);
	check_what(n == 0, "drained CQs are not reported", "fi_poll gave %d", n);

	ret = fi_poll(set, ctx, 1);
	check_what(ret == 0, "fi_poll with room for one context", "%d", ret);
	ret = fi_close(&cq_rx->fid);
	check_what(ret == -FI_EBUSY, "a CQ in a poll set refuses to close", "%s",
		   fi_strerror(-ret));
close_set:
	if (s.ep)
		fi_close(&s.ep->fid);
	if (s.av)
		fi_close(&s.av->fid);
	ret = fi_close(&set->fid);
	check_what(ret == -FI_EBUSY, "a poll set with members refuses to close", "%s",
		   fi_strerror(-ret));
	check_what(fi_poll_del(set, &cq_tx->fid, 0) == 0 &&
		   fi_poll_del(set, &cq_rx->fid, 0) == 0 &&
		   fi_poll_del(set, &cntr->fid, 0) == 0, "fi_poll_del every member", NULL);
	ret = fi_poll_del(set, &cntr->fid, 0);
	check_what(ret == -FI_ENOENT, "a member removed twice is not found", "%s",
		   fi_strerror(-ret));
	check_what(fi_close(&set->fid) == 0, "close the empty poll set", NULL);
out:
	if (cntr)
		fi_close(&cntr->fid);
	if (cq_rx)
		fi_close(&cq_rx->fid);
	if (cq_tx)
		fi_close(&cq_tx->fid);
}

/* Waits for a line on standard input: the script's go-ahead. */
static bool wait_for_script(const char *said)
{
	char line[64];

	printf("enable: %s\n", said);
	fflush(stdout);
	return fgets(line, sizeof(line), stdin) != NULL;
}

/*
 * -t enable, run by a script that takes a rail's address away and gives it
 * back (not in "all"): an endpoint whose fi_enable fails because one rail
 * cannot open must be left as it was, every rail opened so far closed
 * again, so that fi_enable can be called once more and then work: a
 * message to itself arrives byte for byte, with one send and one receive
 * completion. Standard output says "enable: ready", "enable: refused" and
 * "enable: enabled" at the three points where it waits for a line.
 */
/* Reads one completion from cq, progressing meanwhile: 0, or an error. */
static int read_one(struct fid_cq *cq, struct fi_cq_msg_entry *comp)
{
	ssize_t n;

	while ((n = fi_cq_read(cq, comp, 1)) == -FI_EAGAIN)
		;
	return n == 1 ? 0 : (int) n;
}

static void test_enable_retry(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct fi_cq_msg_entry rx = { 0 }, tx = { 0 };
	char sbuf[200], rbuf[sizeof(sbuf)];
	struct self_ep s = { 0 };
	bool got_rx = false, data_ok;
	size_t i;
	int ret;

	ret = fi_cq_open(domain, &cq_attr, &cq_tx, NULL);
	if (!ret)
		ret = fi_cq_open(domain, &cq_attr, &cq_rx, NULL);
	if (!ret)
		ret = self_ep_bind(domain, info, cq_tx, cq_rx, &s);
	check_what(ret == 0, "open and bind an endpoint", "%s", ret ? fi_strerror(-ret) : "");
	if (ret || !wait_for_script("ready"))
		goto out;

	ret = fi_enable(s.ep);
	check_what(ret != 0, "fi_enable fails while a rail's address is gone",
		   "it returned %d", ret);
	if (!ret || !wait_for_script("refused"))
		goto out;

	ret = fi_enable(s.ep);
	check_what(ret == 0, "fi_enable again, the address back, succeeds", "%s",
		   ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;
	for (i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (char) (i * 7 + 3);
	memset(rbuf, 0, sizeof(rbuf));
	ret = self_ep_address(&s);
	if (!ret)
		ret = (int) fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, s.self, rbuf);
	if (!ret)
		ret = self_send(&s, cq_rx, sbuf, sizeof(sbuf), sbuf, &rx, &got_rx);
	check_what(ret == 0, "post a receive and a send to itself", "%s",
		   ret ? fi_strerror(-ret) : "");
	step = "enable: the message to itself";
	if (!ret && !got_rx)
		ret = read_one(cq_rx, &rx);
	if (!ret)
		ret = read_one(cq_tx, &tx);
	data_ok = !memcmp(sbuf, rbuf, sizeof(sbuf));
	check_what(ret == 0 && rx.op_context == rbuf && tx.op_context == sbuf && data_ok &&
		   fi_cq_read(cq_rx, &rx, 1) == -FI_EAGAIN &&
		   fi_cq_read(cq_tx, &tx, 1) == -FI_EAGAIN,
		   "after the retried fi_enable a message arrives byte for byte, with "
		   "one send and one receive completion", "%s, data %s",
		   ret ? fi_strerror(-ret) : "completions read",
		   data_ok ? "equal" : "differs");
	/* The script counts the rails' listening sockets now: one per tcp
	 * rail, none left over from the failed attempt. */
	(void) wait_for_script("enabled");
out:
	if (s.ep)
		check_what(fi_close(&s.ep->fid) == 0, "close the endpoint", NULL);
	if (s.av)
		fi_close(&s.av->fid);
	if (cq_rx)
		fi_close(&cq_rx->fid);
	if (cq_tx)
		fi_close(&cq_tx->fid);
}

static void test_exit_open(struct fid_fabric *fabric, struct fi_info *info)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	static const char payload[] = "mrail objs: exit with objects open";
	struct fi_cq_msg_entry comp;
	struct fi_info *auto_info;
	struct fid_domain *domain;
	struct self_ep s = { 0 };
	struct fid_cq *cq;
	char rbuf[sizeof(payload)] = { 0 };
	int ctx_rx, ctx_tx, n_rx = 0, n_tx = 0, n_other = 0, i;
	bool got_rx = false;
	ssize_t ret;

	auto_info = fi_dupinfo(info);
	auto_info->domain_attr->data_progress = FI_PROGRESS_AUTO;
	auto_info->domain_attr->control_progress = FI_PROGRESS_AUTO;
	if ((ret = fi_domain(fabric, auto_info, &domain, NULL)) ||
	    (ret = fi_cq_open(domain, &attr, &cq, NULL)) ||
	    (ret = self_ep_open(domain, auto_info, cq, cq, &s)) ||
	    (ret = fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, s.self, &ctx_rx)) ||
	    (ret = self_send(&s, cq, payload, sizeof(payload), &ctx_tx,
			     &comp, &got_rx))) {
		check_what(false, "an FI_PROGRESS_AUTO endpoint sending to itself",
			   "%s", fi_strerror((int) -ret));
		goto out;
	}
	/* Nothing but sleeps in fi_cq_sread: the progress thread does the
	 * rest. After both, 100 ms more must bring no other completion. */
	for (;;) {
		if (got_rx) {
			n_rx += comp.op_context == &ctx_rx;
			n_tx += comp.op_context == &ctx_tx;
			n_other += comp.op_context != &ctx_rx && comp.op_context != &ctx_tx;
		}
		got_rx = fi_cq_sread(cq, &comp, 1, NULL,
				     n_rx && n_tx ? 100 : 10000) == 1;
		if (!got_rx)
			break;
	}
	check_what(n_rx == 1 && n_tx == 1 && !n_other,
		   "the send and the receive complete, once each",
		   "receives %d, sends %d, others %d", n_rx, n_tx, n_other);
	check_what(!memcmp(rbuf, payload, sizeof(payload)), "the message arrived intact",
		   NULL);
	/* Leave the thread busy: transfers to ourselves still in flight. */
	for (i = 0; i < EXIT_BUSY_MSGS; i++) {
		if (fi_recv(s.ep, busy[i], sizeof(busy[i]), NULL, s.self, NULL) ||
		    fi_send(s.ep, busy[i], sizeof(busy[i]), NULL, s.self, NULL))
			break;
	}
out:
	printf("fi_mrail_objs: %d of %d checks passed\n", check_count - check_failures,
	       check_count);
	fflush(stdout);
	exit(check_failures ? 1 : 0);
}

int main(int argc, char **argv)
{
	struct fid_fabric *fabric = NULL;
	struct fid_domain *domain = NULL;
	struct fi_info *hints, *info = NULL;
	const char *which = "all";
	int opt, ret;

	while ((opt = getopt(argc, argv, "t:vh")) != -1) {
		switch (opt) {
		case 't':
			which = optarg;
			break;
		case 'v':
			check_verbose = true;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-t counters|cq|eq|mr|trywait|poll|sep|ops|getinfo|sockaddr|all|exit|enable] [-v]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (strcmp(which, "all") && strcmp(which, "counters") && strcmp(which, "cq") &&
	    strcmp(which, "eq") && strcmp(which, "mr") && strcmp(which, "trywait") &&
	    strcmp(which, "poll") && strcmp(which, "sep") && strcmp(which, "ops") &&
	    strcmp(which, "getinfo") &&
	    strcmp(which, "sockaddr") && strcmp(which, "exit") && strcmp(which, "enable")) {
		fprintf(stderr, "fi_mrail_objs: unknown test set \"%s\"\n", which);
		return 2;
	}
	signal(SIGALRM, on_watchdog);
	alarm(WATCHDOG_S);

	hints = fi_allocinfo();
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	check_what(ret == 0, "fi_getinfo(mrail)", "%s", ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;
	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	check_what(ret == 0, "fi_fabric", "%s", ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;
	ret = fi_domain(fabric, info, &domain, NULL);
	check_what(ret == 0, "fi_domain", "%s", ret ? fi_strerror(-ret) : "");
	if (ret)
		goto out;

	if (!strcmp(which, "all") || !strcmp(which, "counters")) {
		step = "counters";
		test_counters(fabric, domain);
	}
	if (!strcmp(which, "all") || !strcmp(which, "cq")) {
		step = "cq";
		test_cq(fabric, domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "eq")) {
		step = "eq";
		test_eq(fabric);
	}
	if (!strcmp(which, "all") || !strcmp(which, "mr")) {
		step = "mr";
		test_mr(fabric, info, domain);
	}
	if (!strcmp(which, "all") || !strcmp(which, "trywait")) {
		step = "trywait";
		test_trywait(fabric, domain);
	}
	if (!strcmp(which, "all") || !strcmp(which, "poll")) {
		step = "poll sets";
		test_poll(domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "sep")) {
		step = "scalable endpoints";
		test_sep(domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "ops")) {
		step = "ops";
		test_ops(fabric, domain, info);
	}
	if (!strcmp(which, "all") || !strcmp(which, "getinfo")) {
		step = "getinfo";
		test_getinfo();
	}
	if (!strcmp(which, "all") || !strcmp(which, "sockaddr")) {
		step = "sockaddr";
		test_sockaddr(fabric);
	}
	if (!strcmp(which, "enable")) {
		step = "enable, fail, enable again";
		test_enable_retry(domain, info);
	}
	if (!strcmp(which, "exit")) {
		step = "exit with objects open";
		test_exit_open(fabric, info);
	}
	step = "close";
out:
	if (domain)
		check_what(fi_close(&domain->fid) == 0, "close the domain", NULL);
	if (fabric)
		check_what(fi_close(&fabric->fid) == 0, "close the fabric", NULL);
	fi_freeinfo(info);
	printf("fi_mrail_objs: %d of %d checks passed\n", check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
