/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_peerdeath: a peer that dies gives errors, never a hang; a peer
 * that lives but makes no progress is not taken for dead.
 *
 *   server:  fi_mrail_peerdeath [-p PROV] [-E PORT]
 *   client:  fi_mrail_peerdeath [-p PROV] [-E PORT] SERVER
 *
 * Run both with FI_MRAIL_PEER_TIMEOUT=T (a few seconds). The server opens
 * two endpoints: the one the client talks to, and a second one the client
 * only inserts. Checked, in order:
 *  1. alive but silent: after a first message has connected them, the
 *     client sends 1 MiB (rendezvous) while the server makes no libfabric
 *     call for 2 T; then the server receives it. The client's send must
 *     complete successfully, the data arrive intact.
 *  2. death with a rendezvous in flight: the client sends 1 MiB, the server
 *     exits without receiving it. The client's send must complete with
 *     FI_EHOSTUNREACH (its context), within T + 10 s.
 *  3. a send to the dead peer fails with -FI_EHOSTUNREACH (at once, or
 *     after -FI_EAGAIN for at most T + 10 s).
 *  4. a send to the server's second endpoint, which was never reached and
 *     is gone too, fails the same way within T + 10 s.
 * The client prints "N of N checks passed"; the server prints it before it
 * dies. Exit 0 only if all passed.
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

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define PROG "fi_mrail_peerdeath"
#define BIG (1 << 20)
#define MARGIN_S 10

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq, *cq2;
static struct fid_ep *ep, *ep2;
static int sock;
static unsigned timeout_s;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void open_ep(struct fid_ep **e, struct fid_cq **c)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 64 };
	int ret;

	if ((ret = fi_cq_open(domain, &cq_attr, c, NULL)) ||
	    (ret = fi_endpoint(domain, info, e, NULL)) ||
	    (ret = fi_ep_bind(*e, &av->fid, 0)) ||
	    (ret = fi_ep_bind(*e, &(*c)->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(*e)))
		ctl_die("opening an endpoint", ret);
}

static void open_objects(const char *prov, bool two)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	info = ctl_getinfo(prov, FI_MSG | FI_TAGGED, 0, false);
	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
	    (ret = fi_domain(fabric, info, &domain, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &av, NULL)))
		ctl_die("opening the domain", ret);
	open_ep(&ep, &cq);
	if (two)
		open_ep(&ep2, &cq2);
}

/* One completion within seconds: 1, -FI_EAVAIL with *err, or 0. */
static int cq_next(struct fi_cq_tagged_entry *entry, struct fi_cq_err_entry *err,
		   double seconds)
{
	double end = now_s() + seconds;
	ssize_t n;

	do {
		n = fi_cq_read(cq, entry, 1);
		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			fi_cq_readerr(cq, err, 0);
			return -FI_EAVAIL;
		}
		usleep(1000);
	} while (now_s() < end);
	return 0;
}

/* Sends len bytes, retrying -FI_EAGAIN for at most seconds: the last result. */
static ssize_t send_until(fi_addr_t dest, void *buf, size_t len, uint64_t tag,
			  void *ctx, double seconds)
{
	struct fi_cq_tagged_entry entry;
	double end = now_s() + seconds;
	ssize_t ret;

	while ((ret = fi_tsend(ep, buf, len, NULL, dest, tag, ctx)) == -FI_EAGAIN &&
	       now_s() < end) {
		(void) fi_cq_read(cq, &entry, 0);
		usleep(1000);
	}
	return ret;
}

static uint8_t big[BIG];

static void serve(void)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	struct fi_context ctx;
	uint8_t small[8];
	char cmd;
	int ret;

	/* 1: connect, then silence, then the receive. */
	ret = (int) fi_trecv(ep, small, sizeof(small), NULL, FI_ADDR_UNSPEC, 1, 0, &ctx);
	check(!ret && cq_next(&entry, &err, 60) == 1, "server: the first message");
	ctl_write(sock, "c", 1);
	ctl_read(sock, &cmd, 1, NULL);	/* the client posted its big send */
	sleep(2 * timeout_s);		/* no libfabric call */
	memset(big, 0, sizeof(big));
	ret = (int) fi_trecv(ep, big, BIG, NULL, FI_ADDR_UNSPEC, 2, 0, &ctx);
	check(!ret && cq_next(&entry, &err, 60) == 1 &&
	      check_pattern_mismatch(big, BIG, 2) == BIG,
	      "server: 1 MiB received intact after %u s without progress", 2 * timeout_s);
	ctl_write(sock, "r", 1);
	/* 2: the client's next big send is in flight; die without it. */
	ctl_read(sock, &cmd, 1, NULL);
	printf(PROG ": %d of %d checks passed\n", check_count - check_failures, check_count);
	fflush(stdout);
	_exit(check_failures ? 1 : 0);
}

static void client(fi_addr_t peer, fi_addr_t never)
{
	struct fi_cq_tagged_entry entry;
	struct fi_cq_err_entry err;
	struct fi_context ctx1, ctx2, ctx3;
	uint8_t small[8] = { 0 };
	double t0;
	char cmd;
	ssize_t ret;
	int got;

	check(send_until(peer, small, sizeof(small), 1, &ctx1, 60) == 0 &&
	      cq_next(&entry, &err, 60) == 1, "the first message connects");
	ctl_read(sock, &cmd, 1, NULL);
	check_pattern_fill(big, BIG, 2);
	ret = send_until(peer, big, BIG, 2, &ctx2, 60);
	ctl_write(sock, "s", 1);
	got = cq_next(&entry, &err, 4.0 * timeout_s + 60);
	check(!ret && got == 1 && entry.op_context == &ctx2,
	      "alive but silent for %u s: the 1 MiB send completes (%s)", 2 * timeout_s,
	      got == 1 ? "ok" : got ? fi_strerror(err.err) : "no completion");
	ctl_read(sock, &cmd, 1, NULL);

	check_pattern_fill(big, BIG, 3);
	ret = send_until(peer, big, BIG, 3, &ctx3, 60);
	check(!ret, "a second 1 MiB send posted (%zd)", ret);
	ctl_write(sock, "d", 1);	/* the server dies now */
	t0 = now_s();
	got = cq_next(&entry, &err, timeout_s + MARGIN_S);
	check(got == -FI_EAVAIL && err.err == FI_EHOSTUNREACH && err.op_context == &ctx3,
	      "death with a rendezvous in flight: FI_EHOSTUNREACH with its context after "
	      "%.1f s (%s)", now_s() - t0, got == -FI_EAVAIL ? fi_strerror(err.err) :
	      got ? "it completed" : "nothing");

	t0 = now_s();
	ret = send_until(peer, small, sizeof(small), 4, &ctx1, timeout_s + MARGIN_S);
	check(ret == -FI_EHOSTUNREACH, "a send to the dead peer: %s after %.1f s",
	      fi_strerror((int) -ret), now_s() - t0);

	t0 = now_s();
	ret = send_until(never, small, sizeof(small), 5, &ctx1, timeout_s + MARGIN_S);
	check(ret == -FI_EHOSTUNREACH, "a send to a peer never reached, gone: %s after "
	      "%.1f s", fi_strerror((int) -ret), now_s() - t0);
	check(cq_next(&entry, &err, 0.5) == 0, "no other completion");
}

int main(int argc, char **argv)
{
	const char *prov = "mrail", *env = getenv("FI_MRAIL_PEER_TIMEOUT");
	unsigned port = 47640;
	fi_addr_t peers[2];
	uint8_t name[256];
	size_t len;
	uint64_t n;
	int opt, ret;

	ctl_prog = PROG;
	while ((opt = getopt(argc, argv, "p:E:h")) != -1) {
		switch (opt) {
		case 'p': prov = optarg; break;
		case 'E': port = (unsigned) atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-p PROV] [-E PORT] [SERVER]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	timeout_s = env ? (unsigned) atoi(env) : 0;
	if (!timeout_s || timeout_s > 30) {
		fprintf(stderr, PROG ": set FI_MRAIL_PEER_TIMEOUT to 1..30 seconds\n");
		return 2;
	}
	open_objects(prov, optind >= argc);
	ctl_connect(optind < argc ? argv[optind] : NULL, port, &sock, 1);
	if (optind >= argc) {
		peers[0] = ctl_swap_names(sock, ep, av);
		len = sizeof(name);
		ret = fi_getname(&ep2->fid, name, &len);
		if (ret)
			ctl_die("fi_getname", ret);
		n = len;
		ctl_write(sock, &n, sizeof(n));
		ctl_write(sock, name, len);
		serve();
		return 0;
	}
	peers[0] = ctl_swap_names(sock, ep, av);
	ctl_read(sock, &n, sizeof(n), NULL);
	if (n > sizeof(name))
		ctl_die("the second name is too long", EINVAL);
	ctl_read(sock, name, n, NULL);
	if (fi_av_insert(av, name, 1, &peers[1], 0, NULL) != 1)
		ctl_die("fi_av_insert of the second name", EINVAL);
	client(peers[0], peers[1]);
	close(sock);
	fi_close(&ep->fid);
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	printf(PROG ": %d of %d checks passed\n", check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
