/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_opflags: operation flags of an RDM endpoint, between two hosts,
 * in fabtests' style.
 *
 *   server: fi_mrail_opflags [-p PROV] [-E PORT] [-T]
 *   client: fi_mrail_opflags [same options] SERVER_ADDR
 *
 * Checks, on both sides unless said otherwise:
 *  - fi_control FI_GETOPSFLAG / FI_SETOPSFLAG: the defaults read back as
 *    set, for FI_TRANSMIT and FI_RECV; flags naming both sides or neither
 *    are refused with -FI_EINVAL, unsupported flags with -FI_EBADFLAGS.
 *  - FI_DELIVERY_COMPLETE (fi_cq(3): no completion until the peer has
 *    processed the message). The server posts its receive, then sleeps
 *    without calling libfabric; meanwhile the client sends and watches its
 *    CQ for WATCH_MS. With FI_DELIVERY_COMPLETE the send must not complete
 *    in that window, and must complete once the server wakes. As a control
 *    that the window can tell the difference, an eager send without the
 *    flag must complete in it (a rail's own send completion does not wait
 *    for the peer). Eager and rendezvous sizes, through fi_sendmsg's flag
 *    and through the endpoint default (FI_SETOPSFLAG, then fi_send).
 *  - every received payload byte for byte, and the exact completion counts.
 *
 * Exits 0 when every check passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/socket.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "common/mrail_bench.h"
#include "common/mrail_check.h"

#define OF_PROG			"fi_mrail_opflags"
#define OF_DEFAULT_PORT		47596
#define OF_TAG			0x0f1a6500ULL
/* How long the client watches its CQ while the server sleeps, and how long
 * the server sleeps: the watch ends well inside the sleep. */
#define WATCH_MS		400
#define SERVER_SLEEP_MS		1000

/* -R: a rail's own send completion may wait for the peer (udp;ofi_rxd
 * acknowledges at its level), so the control is reported, not checked. */
static bool peer_paced_rails;
/* -t: everything runs on a thread this program starts, not on main. */
static bool on_thread;


static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long) (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static uint8_t pattern(size_t size, unsigned round, size_t i)
{
	return (uint8_t) (i * 131 + size * 7 + round * 29 + 1);
}

/*
 * The server's "asleep" signal travels outside the harness, from server to
 * client, sent after the server's last libfabric call before its sleep: a
 * bench_sync would let the server progress (and so take the message) while
 * waiting for the client's half of the exchange.
 */
#define GO_BYTE 'g'

static int go_send(struct bench *b)
{
	char c = GO_BYTE;

	return send(b->sock, &c, 1, MSG_NOSIGNAL) == 1 ? 0 : -FI_EIO;
}

static int go_wait(struct bench *b)
{
	struct pollfd pfd = { .fd = b->sock, .events = POLLIN };
	char c = 0;
	int n;

	do {
		n = poll(&pfd, 1, 30000);
	} while (n < 0 && errno == EINTR);
	if (n != 1 || recv(b->sock, &c, 1, 0) != 1 || c != GO_BYTE) {
		fprintf(stderr, "%s: no word from the peer on the control "
			"connection\n", OF_PROG);
		return -FI_EIO;
	}
	return 0;
}

/* ---- FI_GETOPSFLAG / FI_SETOPSFLAG ---- */

static uint64_t get_ops_flags(struct bench *b, uint64_t side, int *ret)
{
	uint64_t flags = side;

	*ret = fi_control(&b->ep->fid, FI_GETOPSFLAG, &flags);
	return flags;
}

static int set_ops_flags(struct bench *b, uint64_t flags)
{
	return fi_control(&b->ep->fid, FI_SETOPSFLAG, &flags);
}

static void check_ops_flags(struct bench *b)
{
	uint64_t flags;
	int ret;

	flags = get_ops_flags(b, FI_TRANSMIT, &ret);
	check(ret == 0, "FI_GETOPSFLAG(FI_TRANSMIT) returned %d", ret);
	check(ret || (flags & FI_TRANSMIT), "FI_GETOPSFLAG(FI_TRANSMIT) "
	      "dropped FI_TRANSMIT: 0x%" PRIx64, flags);

	ret = set_ops_flags(b, FI_TRANSMIT | FI_DELIVERY_COMPLETE | FI_COMPLETION);
	check(ret == 0, "FI_SETOPSFLAG(FI_TRANSMIT|FI_DELIVERY_COMPLETE|"
	      "FI_COMPLETION) returned %d", ret);
	flags = get_ops_flags(b, FI_TRANSMIT, &ret);
	check(!ret && flags == (FI_TRANSMIT | FI_DELIVERY_COMPLETE | FI_COMPLETION),
	      "transmit flags read back as 0x%" PRIx64 " (ret %d)", flags, ret);

	ret = set_ops_flags(b, FI_RECV | FI_COMPLETION);
	check(ret == 0, "FI_SETOPSFLAG(FI_RECV|FI_COMPLETION) returned %d", ret);
	flags = get_ops_flags(b, FI_RECV, &ret);
	check(!ret && flags == (FI_RECV | FI_COMPLETION),
	      "receive flags read back as 0x%" PRIx64 " (ret %d)", flags, ret);
	/* Setting one side leaves the other alone. */
	flags = get_ops_flags(b, FI_TRANSMIT, &ret);
	check(!ret && flags == (FI_TRANSMIT | FI_DELIVERY_COMPLETE | FI_COMPLETION),
	      "setting receive flags changed the transmit ones to 0x%" PRIx64, flags);

	ret = set_ops_flags(b, FI_TRANSMIT | FI_RECV | FI_COMPLETION);
	check(ret == -FI_EINVAL, "FI_SETOPSFLAG naming both sides returned %d, "
	      "expected -FI_EINVAL", ret);
	(void) get_ops_flags(b, 0, &ret);
	check(ret == -FI_EINVAL, "FI_GETOPSFLAG naming no side returned %d, "
	      "expected -FI_EINVAL", ret);
	ret = set_ops_flags(b, FI_TRANSMIT | FI_MULTICAST);
	check(ret == -FI_EBADFLAGS, "FI_SETOPSFLAG(FI_TRANSMIT|FI_MULTICAST) "
	      "returned %d, expected -FI_EBADFLAGS", ret);

	/* Back to plain defaults for what follows. */
	check(set_ops_flags(b, FI_TRANSMIT | FI_COMPLETION) == 0,
	      "restoring the transmit defaults failed");
}

/* ---- delivery complete ---- */

enum send_mode {
	SEND_PLAIN,		/* fi_sendmsg, FI_COMPLETION only */
	SEND_DC_FLAG,		/* fi_sendmsg with FI_DELIVERY_COMPLETE */
	SEND_DC_DEFAULT,	/* fi_send, FI_DELIVERY_COMPLETE by default */
};

static const char *mode_name(enum send_mode mode)
{
	switch (mode) {
	case SEND_PLAIN:
		return "plain send";
	case SEND_DC_FLAG:
		return "fi_sendmsg(FI_DELIVERY_COMPLETE)";
	default:
		return "fi_send with FI_DELIVERY_COMPLETE by default";
	}
}

static ssize_t post_send(struct bench *b, bool tagged, enum send_mode mode,
			 void *buf, size_t len, struct bench_ctx *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	uint64_t flags = FI_COMPLETION;
	ssize_t ret;

	if (mode == SEND_DC_DEFAULT)
		return bench_post_send(b, tagged, buf, len, OF_TAG, ctx);
	if (mode == SEND_DC_FLAG)
		flags |= FI_DELIVERY_COMPLETE;
	ctx->busy = true;
	do {
		if (tagged) {
			struct fi_msg_tagged msg = {
				.msg_iov = &iov, .iov_count = 1, .addr = b->peer,
				.tag = OF_TAG, .context = &ctx->fi_ctx,
			};
			ret = fi_tsendmsg(b->ep, &msg, flags);
		} else {
			struct fi_msg msg = {
				.msg_iov = &iov, .iov_count = 1, .addr = b->peer,
				.context = &ctx->fi_ctx,
			};
			ret = fi_sendmsg(b->ep, &msg, flags);
		}
		if (ret == -FI_EAGAIN)
			(void) bench_progress(b);
	} while (ret == -FI_EAGAIN);
	if (ret)
		ctx->busy = false;
	return ret;
}

/* The client's half of one case: send, watch, then wait for completion. */
static int client_case(struct bench *b, bool tagged, enum send_mode mode,
		       size_t size, unsigned round, uint8_t *buf)
{
	struct bench_ctx ctx = { 0 };
	uint64_t before = b->tx_done, in_window;
	double end;
	size_t i;
	int ret;

	for (i = 0; i < size; i++)
		buf[i] = pattern(size, round, i);
	if (mode == SEND_DC_DEFAULT) {
		ret = set_ops_flags(b, FI_TRANSMIT | FI_COMPLETION | FI_DELIVERY_COMPLETE);
		check(ret == 0, "FI_SETOPSFLAG before fi_send returned %d", ret);
	}
	/* The server has posted its receive and is asleep once this arrives. */
	ret = go_wait(b);
	if (ret)
		return ret;
	ret = (int) post_send(b, tagged, mode, buf, size, &ctx);
	if (ret) {
		check(false, "%s of %zu bytes: post returned %d", mode_name(mode),
		      size, ret);
		return ret;
	}
	end = bench_now() + WATCH_MS / 1000.0;
	while (bench_now() < end) {
		ret = bench_progress(b);
		if (ret < 0)
			return ret;
	}
	in_window = b->tx_done - before;
	if (mode == SEND_PLAIN && peer_paced_rails)
		printf("note: control: a plain eager send of %zu bytes completed "
		       "%" PRIu64 " times while the peer slept (-R: not checked)\n",
		       size, in_window);
	else if (mode == SEND_PLAIN)
		check(in_window == 1, "control: a plain eager send of %zu bytes "
		      "completed %" PRIu64 " times while the peer slept (expected "
		      "1): the test cannot tell delivery complete apart", size,
		      in_window);
	else
		check(in_window == 0, "%s of %zu bytes completed while the peer "
		      "had not taken it (%" PRIu64 " completions)", mode_name(mode),
		      size, in_window);
	ret = bench_wait_ctx(b, &ctx);
	check(ret == 0, "%s of %zu bytes did not complete after the peer woke: %d",
	      mode_name(mode), size, ret);
	check(b->tx_done - before == 1, "%s of %zu bytes: %" PRIu64 " send "
	      "completions, expected exactly 1", mode_name(mode), size,
	      b->tx_done - before);
	if (mode == SEND_DC_DEFAULT)
		check(set_ops_flags(b, FI_TRANSMIT | FI_COMPLETION) == 0,
		      "restoring the transmit defaults failed");
	return bench_sync(b);
}

static int server_case(struct bench *b, bool tagged, size_t size, unsigned round,
		       uint8_t *buf)
{
	struct bench_ctx ctx = { 0 };
	uint64_t before = b->rx_done;
	size_t i, bad = size;
	int ret;

	memset(buf, 0xee, size);
	ret = bench_post_recv(b, tagged, buf, size, OF_TAG, &ctx);
	if (ret)
		return ret;
	ret = go_send(b);
	if (ret)
		return ret;
	/* No libfabric call at all: nothing of ours can be delivered. */
	sleep_ms(SERVER_SLEEP_MS);
	ret = bench_wait_ctx(b, &ctx);
	check(ret == 0, "receive of %zu bytes failed: %d", size, ret);
	check(b->rx_done - before == 1, "receive of %zu bytes: %" PRIu64
	      " completions, expected exactly 1", size, b->rx_done - before);
	for (i = 0; i < size; i++) {
		if (buf[i] != pattern(size, round, i)) {
			bad = i;
			break;
		}
	}
	check(bad == size, "receive of %zu bytes: byte %zu is 0x%02x, expected "
	      "0x%02x", size, bad, bad < size ? buf[bad] : 0,
	      bad < size ? pattern(size, round, bad) : 0);
	return bench_sync(b);
}

static int run_cases(struct bench *b, bool tagged)
{
	/* Eager (up to mrail's inject size) and rendezvous sizes. */
	static const size_t sizes[] = { 8, 16336, 1 << 20 };
	static const enum send_mode modes[] = {
		SEND_PLAIN, SEND_DC_FLAG, SEND_DC_DEFAULT,
	};
	size_t s, m, max = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
	unsigned round = 0;
	uint8_t *buf;
	int ret = 0;

	buf = malloc(max);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", OF_PROG);
		return -FI_ENOMEM;
	}
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && !ret; s++) {
		for (m = 0; m < sizeof(modes) / sizeof(modes[0]) && !ret; m++) {
			/* Without the flag a rendezvous send completes on the
			 * receiver's ACK anyway: no control to run there. */
			if (modes[m] == SEND_PLAIN && sizes[s] > 16336)
				continue;
			if (sizes[s] > b->max_msg_size)
				continue;
			round++;
			ret = b->is_server ?
			      server_case(b, tagged, sizes[s], round, buf) :
			      client_case(b, tagged, modes[m], sizes[s], round, buf);
		}
	}
	free(buf);
	return ret;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-p PROV] [-E PORT] [-T] [-R] [-t] [SERVER_ADDR]\n"
		"Checks FI_GETOPSFLAG/FI_SETOPSFLAG and FI_DELIVERY_COMPLETE.\n"
		"  -p PROV  provider (default mrail)\n"
		"  -E PORT  TCP port of the control connection\n"
		"  -T       tagged messages (fi_tsendmsg/fi_trecv)\n"
		"  -R       rails whose own send completions wait for the peer\n"
		"           (udp;ofi_rxd): report the control send, do not check it\n"
		"  -t       do everything from a thread the program starts (libfabric\n"
		"           is never called from the main thread)\n",
		argv0);
}

struct run {
	struct bench_opts opts;
	int ret;
};

static void *run_all(void *arg)
{
	struct run *run = arg;
	struct bench b = { .prog = OF_PROG };
	char tool_options[32];
	int ret;

	snprintf(tool_options, sizeof(tool_options), "opflags%s%s",
		 peer_paced_rails ? " -R" : "", on_thread ? " -t" : "");
	ret = bench_open(&b, &run->opts, tool_options);
	if (ret) {
		run->ret = 1;
		return NULL;
	}
	check_ops_flags(&b);
	ret = run_cases(&b, run->opts.tagged);
	if (ret)
		check(false, "the run stopped early: %s", fi_strerror(-ret));
	bench_close(&b);
	run->ret = 0;
	return NULL;
}

int main(int argc, char **argv)
{
	struct run run = { 0 };
	struct bench_opts o;
	pthread_t thread;
	int opt, ret;

	bench_opts_init(&o, "8", OF_DEFAULT_PORT);
	while ((opt = getopt(argc, argv, "p:E:TRth")) != -1) {
		if (opt == 'h') {
			usage(argv[0]);
			return 0;
		}
		if (opt == 'R') {
			peer_paced_rails = true;
			continue;
		}
		if (opt == 't') {
			on_thread = true;
			continue;
		}
		ret = bench_parse_opt(&o, opt, optarg);
		if (ret) {
			usage(argv[0]);
			return 2;
		}
	}
	if (bench_parse_operands(&o, argc, argv, usage))
		return 2;
	run.opts = o;
	if (on_thread) {
		ret = pthread_create(&thread, NULL, run_all, &run);
		if (ret) {
			fprintf(stderr, "%s: pthread_create: %s\n", OF_PROG,
				strerror(ret));
			return 1;
		}
		pthread_join(thread, NULL);
	} else {
		run_all(&run);
	}
	if (run.ret)
		return 1;
	printf("%s: %u of %u checks passed\n", OF_PROG, check_count - check_failures, check_count);
	return check_failures ? 1 : 0;
}
