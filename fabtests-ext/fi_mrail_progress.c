/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_progress: functional test of counters bound to an endpoint and of
 * FI_PROGRESS_AUTO, between two processes (two hosts of the emulated
 * cluster). The server receives, the client sends.
 *
 *   fi_mrail_progress [-t counters|auto|manual] [-p PROV] [-E PORT] [-v] [SERVER]
 *
 * counters: manual progress; send and receive counters bound to the
 *   endpoint count every user operation exactly once, eager and rendezvous
 *   (striped over the rails), with FI_SELECTIVE_COMPLETION on the transmit
 *   CQ and inject; truncations and a cancelled receive count as errors; a
 *   counter bound for RMA counts nothing. CQ entries are checked too.
 * auto: FI_PROGRESS_AUTO. The server posts its receives and only sleeps in
 *   fi_cntr_wait; the client posts its sends and sleeps without any
 *   libfabric call, after which its counter's fd must be readable and the
 *   counter (which does not progress in auto mode) must show every send.
 *   Then both sit idle (asleep, then in a timed-out fi_cntr_wait) and
 *   report the CPU time the process used meanwhile, which must stay under
 *   IDLE_CPU_PERCENT of the idle time (a spinning thread takes all of it).
 *   In between, a second round the server waits for in fi_cq_sread only.
 * manual: the auto sequence under manual progress, the control: the fd must
 *   not be readable after the sleep, since nothing progressed.
 *
 * Data is checked byte for byte. Prints one line per failed check (every
 * check with -v), "fi_mrail_progress: N of M checks passed", and exits 0
 * only if all passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/mrail_check.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define DEFAULT_PORT		47610
#define WAIT_MS			30000
#define EAGER_LEN		1000
#define RDV_LEN			100000	/* > 16336: rendezvous, striped */
#define INJECT_LEN		64
#define N_EAGER			8
#define N_RDV			4
#define TRUNC_EAGER_CAP		100
#define TRUNC_RDV_CAP		20000
#define CANCEL_TAG		0xdeadULL
#define NAME_MAX_LEN		4096
/* What the client sleeps, without libfabric calls, after posting. */
#define SLEEP_MS		1500
/* The idle phases of the CPU check, each this long. */
#define IDLE_MS			2000
#define IDLE_CPU_PERCENT	10

enum test_set { SET_COUNTERS, SET_AUTO, SET_MANUAL };



static void __attribute__((noreturn)) die(const char *what, int ret)
{
	printf("FAILED: %s: %s\n", what, ret < 0 ? fi_strerror(-ret) : strerror(ret));
	printf("fi_mrail_progress: %d of %d checks passed\n", check_count - check_failures,
	       check_count + 1);
	exit(1);
}

static int64_t mono_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- out-of-band connection: names and synchronisation ---- */

static int oob_fd = -1;
/* Driven while waiting for the peer: with manual progress, a rendezvous
 * peer may need our ACK or our reads answered before it can go on. */
static struct fid_cntr *oob_progress_cntr;

static void oob_open(const char *server, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1, tries;

	if (!server) {
		int lfd = socket(AF_INET, SOCK_STREAM, 0);

		if (lfd < 0)
			die("socket", errno);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sin.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(lfd, (struct sockaddr *) &sin, sizeof(sin)) || listen(lfd, 1))
			die("bind/listen", errno);
		oob_fd = accept(lfd, NULL, NULL);
		if (oob_fd < 0)
			die("accept", errno);
		close(lfd);
		return;
	}
	if (inet_pton(AF_INET, server, &sin.sin_addr) != 1)
		die("server address (an IPv4 address)", EINVAL);
	for (tries = 0; tries < 100; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket", errno);
		if (!connect(fd, (struct sockaddr *) &sin, sizeof(sin))) {
			oob_fd = fd;
			return;
		}
		close(fd);
		sleep_ms(100);
	}
	die("connect to the server", errno);
}

static void oob_send(const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(oob_fd, p, len);
		if (n <= 0)
			die("out-of-band write", errno);
		p += n;
		len -= (size_t) n;
	}
}

static void oob_recv(void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	struct pollfd pfd = { .fd = oob_fd, .events = POLLIN };

	while (len) {
		if (oob_progress_cntr && poll(&pfd, 1, 1) == 0) {
			(void) fi_cntr_read(oob_progress_cntr);
			continue;
		}
		n = read(oob_fd, p, len);
		if (n <= 0)
			die("out-of-band read (the peer failed?)", n ? errno : EPIPE);
		p += n;
		len -= (size_t) n;
	}
}

static void oob_sync(void)
{
	char c = 's';

	oob_send(&c, 1);
	oob_recv(&c, 1);
}

/* ---- libfabric objects ---- */

struct session {
	bool server, auto_progress;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *tx_cq, *rx_cq;
	struct fid_cntr *send_cntr, *recv_cntr, *rma_cntr;
	struct fid_ep *ep;
	fi_addr_t peer;
};

static void open_session(struct session *s, const char *prov)
{
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
					  .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	char name[NAME_MAX_LEN], peer_name[NAME_MAX_LEN];
	size_t len = sizeof(name);
	struct fi_info *hints;
	uint32_t peer_len;
	int ret;

	hints = fi_allocinfo();
	if (!hints)
		die("fi_allocinfo", ENOMEM);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->fabric_attr->prov_name = strdup(prov);
	if (s->auto_progress)
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s->info);
	fi_freeinfo(hints);
	if (ret)
		die("fi_getinfo", ret);
	check_what(s->info->domain_attr->data_progress ==
	      (s->auto_progress ? FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL) &&
	      s->info->domain_attr->control_progress ==
	      (s->auto_progress ? FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL),
	      "fi_getinfo offers the progress asked for (manual by default)",
	      "data %d control %d", s->info->domain_attr->data_progress,
	      s->info->domain_attr->control_progress);
	check_what(s->info->domain_attr->cntr_cnt > 0, "fi_getinfo offers counters",
	      "cntr_cnt %zu", s->info->domain_attr->cntr_cnt);

	if ((ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL)) ||
	    (ret = fi_domain(s->fabric, s->info, &s->domain, NULL)) ||
	    (ret = fi_av_open(s->domain, &av_attr, &s->av, NULL)) ||
	    (ret = fi_cq_open(s->domain, &cq_attr, &s->tx_cq, NULL)) ||
	    (ret = fi_cq_open(s->domain, &cq_attr, &s->rx_cq, NULL)) ||
	    (ret = fi_cntr_open(s->domain, &cntr_attr, &s->send_cntr, NULL)) ||
	    (ret = fi_cntr_open(s->domain, &cntr_attr, &s->recv_cntr, NULL)) ||
	    (ret = fi_cntr_open(s->domain, &cntr_attr, &s->rma_cntr, NULL)) ||
	    (ret = fi_endpoint(s->domain, s->info, &s->ep, NULL)))
		die("open the fabric, domain, AV, CQs, counters and endpoint", ret);

	check_what(fi_ep_bind(s->ep, &s->send_cntr->fid, FI_TAGGED) == -FI_EBADFLAGS &&
	      fi_ep_bind(s->ep, &s->send_cntr->fid, 0) == -FI_EBADFLAGS,
	      "a counter bound with flags other than FI_SEND... is refused", NULL);
	if ((ret = fi_ep_bind(s->ep, &s->av->fid, 0)) ||
	    (ret = fi_ep_bind(s->ep, &s->tx_cq->fid,
			      FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) ||
	    (ret = fi_ep_bind(s->ep, &s->rx_cq->fid, FI_RECV)) ||
	    /* Bound for receives first, then moved: it must count sends only. */
	    (ret = fi_ep_bind(s->ep, &s->send_cntr->fid, FI_RECV)) ||
	    (ret = fi_ep_bind(s->ep, &s->recv_cntr->fid, FI_RECV)) ||
	    (ret = fi_ep_bind(s->ep, &s->send_cntr->fid, FI_SEND)) ||
	    (ret = fi_ep_bind(s->ep, &s->rma_cntr->fid, FI_READ | FI_WRITE |
			      FI_REMOTE_READ | FI_REMOTE_WRITE)) ||
	    (ret = fi_enable(s->ep)))
		die("bind and enable the endpoint", ret);
	check_what(fi_close(&s->send_cntr->fid) == -FI_EBUSY,
	      "a counter bound to an endpoint does not close", NULL);

	ret = fi_getname(&s->ep->fid, name, &len);
	if (ret)
		die("fi_getname", ret);
	peer_len = (uint32_t) len;
	oob_send(&peer_len, sizeof(peer_len));
	oob_send(name, len);
	oob_recv(&peer_len, sizeof(peer_len));
	if (peer_len > sizeof(peer_name))
		die("peer name length", EINVAL);
	oob_recv(peer_name, peer_len);
	if (fi_av_insert(s->av, peer_name, 1, &s->peer, 0, NULL) != 1)
		die("fi_av_insert of the peer", EINVAL);
	oob_progress_cntr = s->send_cntr;
}

static void close_session(struct session *s)
{
	struct fid *fids[] = {
		&s->ep->fid, &s->rma_cntr->fid, &s->recv_cntr->fid, &s->send_cntr->fid,
		&s->rx_cq->fid, &s->tx_cq->fid, &s->av->fid, &s->domain->fid,
		&s->fabric->fid,
	};
	size_t i;
	int ret;

	oob_progress_cntr = NULL;
	for (i = 0; i < sizeof(fids) / sizeof(fids[0]); i++) {
		ret = fi_close(fids[i]);
		if (ret)
			check_what(false, "fi_close", "object %zu: %s", i, fi_strerror(-ret));
	}
	fi_freeinfo(s->info);
}

/* ---- data ---- */

static uint8_t pattern(size_t msg, size_t i)
{
	return (uint8_t) (msg * 31 + i * 7 + (i >> 8));
}

static uint8_t *make_buf(size_t len, size_t msg, bool fill)
{
	uint8_t *buf = malloc(len ? len : 1);
	size_t i;

	if (!buf)
		die("malloc", ENOMEM);
	for (i = 0; i < len; i++)
		buf[i] = fill ? pattern(msg, i) : 0xee;
	return buf;
}

/* First byte of buf[0, len) that is not message msg's, or -1. */
static long mismatch(const uint8_t *buf, size_t len, size_t msg)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != pattern(msg, i))
			return (long) i;
	}
	return -1;
}

/* Posts a send, driving progress while the provider pushes back. */
static void post_send(struct session *s, const void *buf, size_t len, void *ctx,
		      uint64_t flags, bool inject)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = s->peer, .context = ctx,
	};
	int64_t deadline = mono_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;
	ssize_t ret;

	do {
		if (inject)
			ret = fi_inject(s->ep, buf, len, s->peer);
		else
			ret = fi_sendmsg(s->ep, &msg, flags);
		if (ret == -FI_EAGAIN)
			(void) fi_cq_read(s->tx_cq, NULL, 0);
	} while (ret == -FI_EAGAIN && mono_ns(CLOCK_MONOTONIC) < deadline);
	if (ret)
		die("post a send", (int) ret);
}

/* Waits until cntr counts target successes and target_err errors. */
static bool wait_counts(struct fid_cntr *cntr, uint64_t target, uint64_t target_err)
{
	int64_t deadline = mono_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;
	int ret;

	for (;;) {
		ret = fi_cntr_wait(cntr, target, 1000);
		if (ret && ret != -FI_EAVAIL && ret != -FI_ETIMEDOUT)
			return false;
		if (!ret && fi_cntr_readerr(cntr) >= target_err)
			return true;
		if (mono_ns(CLOCK_MONOTONIC) > deadline)
			return false;
	}
}

struct cq_counts {
	size_t ok, trunc, canceled, other_err;
	size_t trunc_olen_ok;
};

/* Takes everything the CQ holds now. */
static void drain_cq(struct fid_cq *cq, struct cq_counts *c)
{
	struct fi_cq_msg_entry entries[16];
	struct fi_cq_err_entry err;
	ssize_t n;
	int i;

	for (i = 0; i < 20; i++) {
		n = fi_cq_read(cq, entries, 16);
		if (n > 0) {
			c->ok += (size_t) n;
			i = 0;
			continue;
		}
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cq, &err, 0) != 1)
				break;
			if (err.err == FI_ETRUNC) {
				c->trunc++;
				if (err.olen == EAGER_LEN - TRUNC_EAGER_CAP ||
				    err.olen == RDV_LEN - TRUNC_RDV_CAP)
					c->trunc_olen_ok++;
			} else if (err.err == FI_ECANCELED) {
				c->canceled++;
			} else {
				c->other_err++;
			}
			i = 0;
			continue;
		}
		sleep_ms(1);
	}
}

/* ---- counters (manual progress) ---- */

/*
 * The server posts, in the order the client sends:
 *   N_EAGER eager receives, 1 for the inject, N_RDV rendezvous receives,
 *   1 eager and 1 rendezvous receive too small (truncated),
 * plus a tagged receive nobody sends to, which it cancels.
 */
#define SRV_RECVS (N_EAGER + 1 + N_RDV + 2)

static void counters_server(struct session *s)
{
	uint8_t *bufs[SRV_RECVS], *cancel_buf = make_buf(16, 0, false);
	size_t caps[SRV_RECVS], lens[SRV_RECVS], i;
	struct cq_counts cq = { 0 };
	uint64_t value, err;
	long bad;
	int ret;

	for (i = 0; i < SRV_RECVS; i++) {
		if (i < N_EAGER) {
			caps[i] = lens[i] = EAGER_LEN;
		} else if (i == N_EAGER) {
			caps[i] = lens[i] = INJECT_LEN;
		} else if (i < N_EAGER + 1 + N_RDV) {
			caps[i] = lens[i] = RDV_LEN;
		} else if (i == SRV_RECVS - 2) {
			caps[i] = lens[i] = TRUNC_EAGER_CAP;
		} else {
			caps[i] = lens[i] = TRUNC_RDV_CAP;
		}
		bufs[i] = make_buf(caps[i], i, false);
		ret = (int) fi_recv(s->ep, bufs[i], caps[i], NULL, FI_ADDR_UNSPEC,
				    &bufs[i]);
		if (ret)
			die("fi_recv", ret);
	}
	ret = (int) fi_trecv(s->ep, cancel_buf, 16, NULL, FI_ADDR_UNSPEC, CANCEL_TAG,
			     0, cancel_buf);
	if (ret)
		die("fi_trecv", ret);
	check_what(fi_cancel(&s->ep->fid, cancel_buf) == 0, "fi_cancel of a posted receive",
	      NULL);
	check_what(fi_cntr_readerr(s->recv_cntr) == 1 && fi_cntr_read(s->recv_cntr) == 0,
	      "the cancelled receive counts as one error", "value %llu err %llu",
	      (unsigned long long) fi_cntr_read(s->recv_cntr),
	      (unsigned long long) fi_cntr_readerr(s->recv_cntr));
	oob_sync();	/* receives posted */

	check_what(wait_counts(s->recv_cntr, N_EAGER + 1 + N_RDV, 3),
	      "the receive counter reaches its counts", NULL);
	/* Anything extra (a fragment counted) would have arrived by now. */
	oob_sync();	/* the client's sends are complete */
	drain_cq(s->rx_cq, &cq);
	value = fi_cntr_read(s->recv_cntr);
	err = fi_cntr_readerr(s->recv_cntr);
	check_what(value == N_EAGER + 1 + N_RDV && err == 3,
	      "receive counter: every receive counted once, errors in readerr",
	      "value %llu (want %d), err %llu (want 3: 2 truncations, 1 cancel)",
	      (unsigned long long) value, N_EAGER + 1 + N_RDV,
	      (unsigned long long) err);
	check_what(cq.ok == N_EAGER + 1 + N_RDV && cq.trunc == 2 && cq.trunc_olen_ok == 2 &&
	      cq.canceled == 1 && !cq.other_err,
	      "receive CQ: one entry per receive, truncations with olen, the cancel",
	      "ok %zu trunc %zu (olen right %zu) canceled %zu other errors %zu",
	      cq.ok, cq.trunc, cq.trunc_olen_ok, cq.canceled, cq.other_err);
	check_what(fi_cntr_read(s->send_cntr) == 0 && fi_cntr_readerr(s->send_cntr) == 0,
	      "the send counter (bound for FI_RECV, then moved) counted nothing", NULL);
	check_what(fi_cntr_read(s->rma_cntr) == 0 && fi_cntr_readerr(s->rma_cntr) == 0,
	      "the RMA counter counted nothing", NULL);
	for (i = 0; i < SRV_RECVS; i++) {
		bad = mismatch(bufs[i], lens[i], i);
		check_what(bad < 0, "received data, byte for byte", "message %zu: byte %ld",
		      i, bad);
		free(bufs[i]);
	}
	free(cancel_buf);
}

static void counters_client(struct session *s)
{
	uint8_t *bufs[SRV_RECVS];
	size_t lens[SRV_RECVS], i;
	struct cq_counts cq = { 0 };
	uint64_t value, err;

	for (i = 0; i < SRV_RECVS; i++) {
		if (i < N_EAGER)
			lens[i] = EAGER_LEN;
		else if (i == N_EAGER)
			lens[i] = INJECT_LEN;
		else if (i == SRV_RECVS - 2)
			lens[i] = EAGER_LEN;
		else
			lens[i] = RDV_LEN;
		bufs[i] = make_buf(lens[i], i, true);
	}
	oob_sync();	/* the server's receives are posted */
	for (i = 0; i < SRV_RECVS; i++) {
		if (i < N_EAGER)	/* no FI_COMPLETION: counted, not reported */
			post_send(s, bufs[i], lens[i], bufs[i], 0, false);
		else if (i == N_EAGER)
			post_send(s, bufs[i], lens[i], NULL, 0, true);
		else
			post_send(s, bufs[i], lens[i], bufs[i], FI_COMPLETION, false);
	}
	check_what(wait_counts(s->send_cntr, SRV_RECVS, 0),
	      "the send counter reaches its count", NULL);
	oob_sync();
	drain_cq(s->tx_cq, &cq);
	value = fi_cntr_read(s->send_cntr);
	err = fi_cntr_readerr(s->send_cntr);
	check_what(value == SRV_RECVS && err == 0,
	      "send counter: every send counted once (inject and unreported ones "
	      "too, rendezvous stripes not)", "value %llu (want %d), err %llu",
	      (unsigned long long) value, SRV_RECVS, (unsigned long long) err);
	check_what(cq.ok == N_RDV + 2 && !cq.trunc && !cq.canceled && !cq.other_err,
	      "transmit CQ: only the sends with FI_COMPLETION",
	      "ok %zu (want %d), errors %zu", cq.ok, N_RDV + 2,
	      cq.trunc + cq.canceled + cq.other_err);
	check_what(fi_cntr_read(s->recv_cntr) == 0 && fi_cntr_readerr(s->recv_cntr) == 0,
	      "the receive counter of the sender counted nothing", NULL);
	check_what(fi_cntr_read(s->rma_cntr) == 0 && fi_cntr_readerr(s->rma_cntr) == 0,
	      "the RMA counter counted nothing", NULL);
	for (i = 0; i < SRV_RECVS; i++)
		free(bufs[i]);
}

/* ---- auto (and its manual control) ---- */

#define AUTO_MSGS (N_EAGER + N_RDV)
/* The second round, which the server only waits for in fi_cq_sread. */
#define SREAD_MSGS 3

static size_t auto_len(size_t i)
{
	return i % 3 == 2 ? RDV_LEN : EAGER_LEN;
}

static bool fd_readable(struct fid_cntr *cntr)
{
	struct pollfd pfd = { .events = POLLIN };

	if (fi_control(&cntr->fid, FI_GETWAIT, &pfd.fd))
		return false;
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* CPU time of the process while it sleeps, then waits in vain. */
static void idle_check(struct session *s)
{
	int64_t cpu0, wall0, cpu, wall;
	uint64_t value;
	int ret;

	value = fi_cntr_read(s->send_cntr);
	cpu0 = mono_ns(CLOCK_PROCESS_CPUTIME_ID);
	wall0 = mono_ns(CLOCK_MONOTONIC);
	sleep_ms(IDLE_MS);
	ret = fi_cntr_wait(s->send_cntr, value + 1, IDLE_MS);
	cpu = mono_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	wall = mono_ns(CLOCK_MONOTONIC) - wall0;
	check_what(ret == -FI_ETIMEDOUT, "an idle fi_cntr_wait times out", "%s",
	      fi_strerror(-ret));
	printf("fi_mrail_progress: idle %s: %.1f ms of CPU in %.0f ms (%.2f%%)\n",
	       s->auto_progress ? "with FI_PROGRESS_AUTO" : "with manual progress",
	       cpu / 1e6, wall / 1e6, 100.0 * (double) cpu / (double) wall);
	/* Manual progress naps between progress rounds of a blocking call,
	 * by design: shown, not judged. */
	if (s->auto_progress)
		check_what(cpu * 100 < wall * IDLE_CPU_PERCENT,
		      "an idle process does not spin", "%.1f ms of CPU in %.0f ms",
		      cpu / 1e6, wall / 1e6);
}

/* The server's second round: it sleeps in fi_cq_sread only. */
static void sread_round(struct session *s)
{
	struct fi_cq_msg_entry entries[16];
	int64_t deadline = mono_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000;
	uint8_t *bufs[SREAD_MSGS];
	size_t i, got = 0;
	ssize_t n;
	long bad;
	int ret;

	/* Round one's entries: exactly one per receive. */
	while ((n = fi_cq_read(s->rx_cq, entries, 16)) > 0)
		got += (size_t) n;
	check_what(got == AUTO_MSGS && n == -FI_EAGAIN, "receive CQ: one entry per receive",
	      "%zu entries (want %d), then %s", got, AUTO_MSGS, fi_strerror((int) -n));
	for (i = 0; i < SREAD_MSGS; i++) {
		bufs[i] = make_buf(auto_len(i + 2), 100 + i, false);
		ret = (int) fi_recv(s->ep, bufs[i], auto_len(i + 2), NULL,
				    FI_ADDR_UNSPEC, bufs[i]);
		if (ret)
			die("fi_recv", ret);
	}
	oob_sync();	/* round two's receives posted */
	got = 0;
	while (got < SREAD_MSGS && mono_ns(CLOCK_MONOTONIC) < deadline) {
		n = fi_cq_sread(s->rx_cq, entries, 16, NULL, 1000);
		if (n > 0)
			got += (size_t) n;
		else if (n != -FI_EAGAIN)
			break;
	}
	check_what(got == SREAD_MSGS, "every receive completes while the server sleeps "
	      "in fi_cq_sread", "%zu of %d", got, SREAD_MSGS);
	for (i = 0; i < SREAD_MSGS; i++) {
		bad = mismatch(bufs[i], auto_len(i + 2), 100 + i);
		check_what(bad < 0, "received data, byte for byte", "message %zu: byte %ld",
		      100 + i, bad);
		free(bufs[i]);
	}
}

static void auto_server(struct session *s)
{
	uint8_t *bufs[AUTO_MSGS];
	uint64_t value;
	size_t i;
	long bad;
	int ret;

	for (i = 0; i < AUTO_MSGS; i++) {
		bufs[i] = make_buf(auto_len(i), i, false);
		ret = (int) fi_recv(s->ep, bufs[i], auto_len(i), NULL, FI_ADDR_UNSPEC,
				    bufs[i]);
		if (ret)
			die("fi_recv", ret);
	}
	oob_sync();	/* receives posted */
	/* Nothing but the wait: the progress thread must deliver. */
	ret = fi_cntr_wait(s->recv_cntr, AUTO_MSGS, WAIT_MS);
	value = fi_cntr_read(s->recv_cntr);
	check_what(ret == 0 && value == AUTO_MSGS,
	      "every receive completes while the server only waits in fi_cntr_wait",
	      "wait: %s, value %llu (want %d)", fi_strerror(-ret),
	      (unsigned long long) value, AUTO_MSGS);
	for (i = 0; i < AUTO_MSGS; i++) {
		bad = mismatch(bufs[i], auto_len(i), i);
		check_what(bad < 0, "received data, byte for byte", "message %zu: byte %ld",
		      i, bad);
		free(bufs[i]);
	}
	sread_round(s);
	oob_sync();	/* the client saw its count */
	idle_check(s);
	oob_sync();
}

static void auto_client(struct session *s)
{
	uint8_t *bufs[AUTO_MSGS];
	bool readable;
	uint64_t value;
	size_t i;
	int ret;

	for (i = 0; i < AUTO_MSGS; i++)
		bufs[i] = make_buf(auto_len(i), i, true);
	oob_sync();	/* the server's receives are posted */
	for (i = 0; i < AUTO_MSGS; i++)
		post_send(s, bufs[i], auto_len(i), bufs[i], FI_COMPLETION, false);
	/* Manual progress: a send the rail pushed back (the first ones, while
	 * the rail connects) is retried with progress, which may complete
	 * others; a read drains the fd of what happened until now. */
	if (!s->auto_progress)
		(void) fi_cntr_read(s->send_cntr);
	/* No libfabric call: only a progress thread can complete the sends. */
	sleep_ms(SLEEP_MS);
	readable = fd_readable(s->send_cntr);
	if (s->auto_progress) {
		/* In auto mode a read does not progress: it shows what the
		 * thread counted while the application slept. */
		value = fi_cntr_read(s->send_cntr);
		check_what(readable && value == AUTO_MSGS,
		      "the sends completed while the client slept (counter fd "
		      "readable, every send counted)", "fd %s, value %llu (want %d)",
		      readable ? "readable" : "not readable",
		      (unsigned long long) value, AUTO_MSGS);
	} else {
		check_what(!readable, "manual progress: nothing completed while the "
		      "client slept (counter fd not readable)", NULL);
	}
	ret = fi_cntr_wait(s->send_cntr, AUTO_MSGS, WAIT_MS);
	value = fi_cntr_read(s->send_cntr);
	check_what(ret == 0 && value == AUTO_MSGS && fi_cntr_readerr(s->send_cntr) == 0,
	      "send counter: every send counted once", "wait: %s, value %llu",
	      fi_strerror(-ret), (unsigned long long) value);
	for (i = 0; i < AUTO_MSGS; i++)
		free(bufs[i]);

	/* Round two: the server waits in fi_cq_sread. */
	for (i = 0; i < SREAD_MSGS; i++)
		bufs[i] = make_buf(auto_len(i + 2), 100 + i, true);
	oob_sync();
	for (i = 0; i < SREAD_MSGS; i++)
		post_send(s, bufs[i], auto_len(i + 2), bufs[i], FI_COMPLETION, false);
	ret = fi_cntr_wait(s->send_cntr, AUTO_MSGS + SREAD_MSGS, WAIT_MS);
	value = fi_cntr_read(s->send_cntr);
	check_what(ret == 0 && value == AUTO_MSGS + SREAD_MSGS,
	      "send counter: round two counted", "wait: %s, value %llu",
	      fi_strerror(-ret), (unsigned long long) value);
	for (i = 0; i < SREAD_MSGS; i++)
		free(bufs[i]);
	oob_sync();
	idle_check(s);
	oob_sync();
}

int main(int argc, char **argv)
{
	struct session s = { 0 };
	enum test_set set = SET_COUNTERS;
	const char *prov = "mrail";
	int port = DEFAULT_PORT, opt;

	while ((opt = getopt(argc, argv, "t:p:E:vh")) != -1) {
		switch (opt) {
		case 't':
			if (!strcmp(optarg, "counters"))
				set = SET_COUNTERS;
			else if (!strcmp(optarg, "auto"))
				set = SET_AUTO;
			else if (!strcmp(optarg, "manual"))
				set = SET_MANUAL;
			else
				goto usage;
			break;
		case 'p':
			prov = optarg;
			break;
		case 'E':
			port = atoi(optarg);
			break;
		case 'v':
			check_verbose = true;
			break;
		default:
			goto usage;
		}
	}
	s.server = optind == argc;
	s.auto_progress = set == SET_AUTO;
	oob_open(s.server ? NULL : argv[optind], port);
	open_session(&s, prov);
	if (set == SET_COUNTERS) {
		if (s.server)
			counters_server(&s);
		else
			counters_client(&s);
	} else {
		if (s.server)
			auto_server(&s);
		else
			auto_client(&s);
	}
	close_session(&s);
	close(oob_fd);
	printf("fi_mrail_progress: %d of %d checks passed\n", check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s [-t counters|auto|manual] [-p PROV] [-E PORT] [-v] "
		"[SERVER]\n", argv[0]);
	return 2;
}
