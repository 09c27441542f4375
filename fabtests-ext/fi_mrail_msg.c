/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg: functional test of send/receive and tagged messaging over an
 * FI_EP_RDM endpoint of any provider, between two processes.
 *
 *   fi_mrail_msg [-p PROVIDER] [-E PORT] [-S MAXSIZE] [-I ITERS] [-v]
 *                [SERVER_ADDR]
 *
 * The server runs without an address, the client with the server's IP. Both
 * meet on a TCP control connection (port -E), swap fi_getname addresses
 * over it and use it for the few synchronisations the tests need. The
 * tests: send/recv ping-pong, tags and ignore masks, remote CQ data,
 * fi_inject and fi_sendmsg(FI_INJECT), ordering of unexpected messages,
 * truncation, multi-receive buffers, the same peer inserted twice (both
 * entries in turn, FI_DELIVERY_COMPLETE, then the first removed), with -N a
 * burst right after first contact, and an exact count of completions after
 * each test. Every receive buffer has guard bytes on
 * both sides. Prints failed checks (every check with -v) and exits 0 only if
 * every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include "mrail_compat.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define DEFAULT_PROV		"mrail"
#define DEFAULT_PORT		47592
#define DEFAULT_ITERS		10
#define MAX_NAME_LEN		4096
#define HELLO_LEN		160

/* Nothing in these tests legitimately takes this long: past it the peer is
 * gone or stuck, and waiting longer only hides that. */
#define WAIT_LIMIT_MS		20000
/* Long enough for a late duplicate to surface, short enough to run often. */
#define DRAIN_MS		100
/* Gives unexpected messages time to reach the receiver before it posts. */
#define ORDER_SETTLE_MS		2

#define CQ_SIZE			1024
#define CQ_BATCH		16
#define MAX_PENDING		256
#define GUARD_LEN		32
#define ORDER_BURST		64
/* run_late_insert: a burst alternating eager and rendezvous sizes, and how
 * long the server progresses before it inserts the client. */
#define LATE_BURST		16
#define LATE_EAGER_SIZE		1000
#define LATE_RDV_SIZE		100003
#define LATE_WAIT_MS		300
/* run_first_burst: sends posted right after the first contact (-N). */
#define FIRST_BURST		5
/* run_alias: sends alternating between a peer's two AV entries. */
#define ALIAS_BURST		12
/* Truncation cases: a small (eager) message and a large one, which a
 * multirail provider may move differently (mrail: by rendezvous). */
static const struct trunc_case {
	size_t posted, sent;
} trunc_cases[] = { { 4, 8 }, { 40000, 100003 } };

/*
 * Tags stay below bit 48 in case a provider keeps the top bits for itself.
 * Receive A ignores its low 16 bits, receive B bits 24..31; the sent tags set
 * bits in those ranges, and neither sent tag matches the other receive.
 */
#define TAG_A			0x00000000a1a10000ULL
#define TAG_A_IGNORE		0x000000000000ffffULL
#define TAG_B			0x00000b2b00000005ULL
#define TAG_B_IGNORE		0x00000000ff000000ULL
#define TAG_DATA		0x00000000dada0000ULL
#define TAG_ORDER		0x0000000000c0de00ULL
#define TAG_ORDER_IGNORE	0x00000000000000ffULL
#define TAG_TRUNC		0x0000000000007700ULL

/* Around 16 KiB: mrail's eager limit (16336) and rxm's; larger sizes go by
 * rendezvous in mrail and are striped over its rails. */
static const size_t test_sizes[] = { 0, 1, 7, 64, 1000, 4096, 8192, 16336, 16337,
				     16384, 65539, 1048583 };

enum direction {
	CLIENT_TO_SERVER,
	SERVER_TO_CLIENT,
};

/* Distinct payloads per test, so a message that lands in the wrong buffer
 * does not look right there. */
enum pattern {
	PAT_PING = 1,
	PAT_PONG,
	PAT_TAG_A,
	PAT_TAG_B,
	PAT_DATA_MSG,
	PAT_DATA_TAGGED,
	PAT_INJECT,
	PAT_ORDER,
	PAT_TRUNC,
	PAT_MULTI,
};

/* Bytes on the control connection; the peer checks it got the same one. */
enum sync_code {
	SYNC_START = 'A',
	SYNC_BOUND,
	SYNC_PING_PONG,
	SYNC_TAGGED,
	SYNC_CQ_DATA,
	SYNC_INJECT,
	SYNC_ORDER,
	SYNC_TRUNC,
	SYNC_OPTS,
	SYNC_MULTI,
	SYNC_LATE,
	SYNC_FIRST_BURST,
	SYNC_ALIAS,
	SYNC_ALIAS_REMOVED,
	SYNC_END,
	SIG_POSTED = 'p',
	SIG_SENT = 's',
};

enum op_kind {
	OP_SEND,
	OP_SENDDATA,
	OP_TSEND,
	OP_TSENDDATA,
	OP_RECV,
	OP_TRECV,
	OP_MRECV,	/* fi_recvmsg with FI_MULTI_RECV */
	OP_SENDMSG_INJECT,	/* fi_sendmsg with FI_INJECT: completes */
};

struct options {
	const char *prov;
	const char *server;
	unsigned port;
	size_t max_size;
	unsigned iters;
	bool verbose;
	bool by_node;	/* -N: the peer from fi_getinfo(node, service) */
	bool by_svc;	/* -A (with -N): from fi_av_insertsvc instead */
};

/* Messages one multi-receive buffer takes in these tests, at most. */
#define MULTI_MAX_PARTS		8

/* Every completion a multi-receive buffer got, in CQ order. */
struct multi_log {
	size_t count;
	struct fi_cq_tagged_entry entries[MULTI_MAX_PARTS + 2];
	int errs[MULTI_MAX_PARTS + 2];
	size_t olens[MULTI_MAX_PARTS + 2];
};

/* One posted operation and what the CQ said about it. */
struct op {
	struct fi_context fi_ctx;	/* FI_CONTEXT mode: ours until completion */
	enum op_kind kind;
	void *buf;
	size_t len;
	uint64_t tag;
	uint64_t ignore;
	uint64_t data;
	/* OP_TSEND: to this entry instead of the session's peer, and with
	 * FI_DELIVERY_COMPLETE (fi_tsendmsg). */
	bool has_dest;
	fi_addr_t dest;
	bool delivery_complete;
	int completions;
	struct fi_cq_tagged_entry entry;
	int err;			/* positive FI_E* of an error completion */
	size_t olen;
	char err_text[160];
	struct multi_log *multi;	/* OP_MRECV: its per-message completions */
};

/* A data area with guard bytes on both sides, to catch overruns. */
struct buf {
	uint8_t *mem;
	uint8_t *data;
	size_t cap;
};

struct session {
	struct options opt;
	struct trunc_case trunc;	/* the truncation case running */
	bool is_server;
	int sock;
	struct sockaddr_storage local_ip;	/* our end of the control link */
	struct fi_info *info_list;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
	/* The server inserts the client only after its first messages have
	 * arrived (run_late_insert): its name waits here until then. */
	uint8_t late_name[MAX_NAME_LEN];
	size_t late_len;

	struct op *pending[MAX_PENDING];
	size_t pending_count;
	unsigned tx_posted, rx_posted, tx_done, rx_done, stray;
	char stray_note[200];
	char stuck[200];	/* why a wait gave up; ends the run soon */
};

/* ------------------------------------------------------------------ checks */

/*
 * A check covers one scenario (a test at one size and direction, over all
 * iterations); it fails with the first reason found and counts the rest, so
 * the output stays readable however many iterations run.
 */
static struct {
	bool verbose;
	bool open;
	int total;
	int failed;
	int reasons;
	char name[160];
	char why[400];
} chk;

/* Closed by fatal(), so the peer stops at once instead of timing out. */
static int control_fd = -1;

static void check_begin(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(chk.name, sizeof(chk.name), fmt, ap);
	va_end(ap);
	chk.open = true;
	chk.reasons = 0;
	chk.why[0] = '\0';
}

static void check_fail(const char *fmt, ...)
{
	va_list ap;

	if (!chk.reasons++) {
		va_start(ap, fmt);
		vsnprintf(chk.why, sizeof(chk.why), fmt, ap);
		va_end(ap);
	}
}

static void check_end(void)
{
	chk.total++;
	chk.open = false;
	if (chk.reasons) {
		chk.failed++;
		if (chk.reasons > 1)
			printf("FAILED: %s: %s (and %d more)\n", chk.name, chk.why,
			       chk.reasons - 1);
		else
			printf("FAILED: %s: %s\n", chk.name, chk.why);
	} else if (chk.verbose) {
		printf("ok: %s\n", chk.name);
	}
	fflush(stdout);
}

static void check_once(bool ok, const char *name, const char *detail)
{
	check_begin("%s", name);
	if (!ok)
		check_fail("%s", detail ? detail : "failed");
	check_end();
}

static void note_skip(const char *what, const char *why)
{
	printf("skipped: %s: %s\n", what, why);
	fflush(stdout);
}

static void print_summary(void)
{
	printf("fi_mrail_msg: %d of %d checks passed\n", chk.total - chk.failed,
	       chk.total);
	fflush(stdout);
}

/* Ends the run: after a timeout or a refused post the two sides are out of
 * step, and every later check would only repeat the first failure. */
static void __attribute__((noreturn, format(printf, 1, 2))) fatal(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!chk.open)
		check_begin("run");
	check_fail("%s", msg);
	check_end();
	if (control_fd >= 0)
		close(control_fd);
	fprintf(stderr, "fi_mrail_msg: fatal: %s\n", msg);
	print_summary();
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static bool is_sender(const struct session *s, enum direction dir)
{
	return (dir == CLIENT_TO_SERVER) != s->is_server;
}

/* Each side checks what it sees, so a check name says which side that is. */
static const char *dir_name(const struct session *s, enum direction dir)
{
	if (dir == CLIENT_TO_SERVER)
		return is_sender(s, dir) ? "client->server, sender's side" :
					   "client->server, receiver's side";
	return is_sender(s, dir) ? "server->client, sender's side" :
				   "server->client, receiver's side";
}

/* -------------------------------------------------------- data and guards */

static uint8_t pattern_byte(enum pattern pat, size_t size, uint32_t iter, size_t idx)
{
	uint32_t x = (uint32_t) pat * 0x9e3779b1u;

	x ^= (uint32_t) size * 0x85ebca6bu;
	x = (x ^ (x >> 13)) * 0xc2b2ae35u;
	x ^= iter * 0x27d4eb2fu;
	x = (x ^ (x >> 15)) * 0x2c1b3c6du;
	x ^= (uint32_t) idx * 0x165667b1u;
	x = (x ^ (x >> 16)) * 0x85ebca6bu;
	return (uint8_t) (x ^ (x >> 13));
}

static void fill_pattern(uint8_t *p, size_t len, enum pattern pat, size_t size,
			 uint32_t iter)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(pat, size, iter, i);
}

/* The complement of what should arrive: a byte the provider never wrote
 * cannot pass for a received one. */
static void poison_for(uint8_t *p, size_t len, enum pattern pat, size_t size,
		       uint32_t iter)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t) ~pattern_byte(pat, size, iter, i);
}

/* Index of the first byte in [from, len) that differs from the pattern. */
static size_t first_mismatch(const uint8_t *p, size_t from, size_t len,
			     enum pattern pat, size_t size, uint32_t iter)
{
	size_t i;

	for (i = from; i < len; i++)
		if (p[i] != pattern_byte(pat, size, iter, i))
			break;
	return i;
}

static uint8_t guard_byte(size_t i)
{
	return (uint8_t) (0xa5 ^ (i * 0x3b));
}

static void buf_alloc(struct buf *b, size_t cap)
{
	size_t i;

	b->mem = malloc(cap + 2 * GUARD_LEN);
	if (!b->mem)
		fatal("out of memory for a %zu-byte buffer", cap);
	b->data = b->mem + GUARD_LEN;
	b->cap = cap;
	for (i = 0; i < GUARD_LEN; i++) {
		b->mem[i] = guard_byte(i);
		b->data[cap + i] = guard_byte(GUARD_LEN + i);
	}
}

static void buf_free(struct buf *b)
{
	free(b->mem);
	b->mem = b->data = NULL;
}

static void bufs_alloc(struct buf *bufs, size_t n, size_t cap)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_alloc(&bufs[i], cap);
}

static void bufs_free(struct buf *bufs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_free(&bufs[i]);
}

/* Offset from the data start of the first damaged guard byte, or 0 if none
 * (0 is always data, never guard). */
static long buf_damaged_guard(const struct buf *b)
{
	size_t i;

	for (i = 0; i < GUARD_LEN; i++) {
		if (b->mem[i] != guard_byte(i))
			return (long) i - GUARD_LEN;
	}
	for (i = 0; i < GUARD_LEN; i++) {
		if (b->data[b->cap + i] != guard_byte(GUARD_LEN + i))
			return (long) (b->cap + i);
	}
	return 0;
}

static bool expect_guards(const struct buf *b, const char *where)
{
	long off = buf_damaged_guard(b);

	if (off)
		check_fail("%s: guard byte at offset %ld of a %zu-byte buffer "
			   "overwritten", where, off, b->cap);
	return !off;
}

static bool expect_payload(const struct buf *b, size_t len, enum pattern pat,
			   size_t size, uint32_t iter, const char *where)
{
	size_t bad = first_mismatch(b->data, 0, len, pat, size, iter);
	bool ok = expect_guards(b, where);

	if (bad < len) {
		check_fail("%s: byte %zu of %zu is %#04x, expected %#04x", where,
			   bad, len, b->data[bad], pattern_byte(pat, size, iter, bad));
		ok = false;
	}
	return ok;
}

/* ------------------------------------------------------ control connection */

static int oob_accept(const struct options *opt)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct pollfd pfd;
	int one = 1, lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		fatal("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = htons((uint16_t) opt->port);
	if (bind(lfd, (struct sockaddr *) &sin, sizeof(sin)) || listen(lfd, 1))
		fatal("cannot listen on TCP port %u: %s", opt->port, strerror(errno));

	pfd.fd = lfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, WAIT_LIMIT_MS) != 1)
		fatal("no client connected to TCP port %u within %d s", opt->port,
		      WAIT_LIMIT_MS / 1000);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		fatal("accept: %s", strerror(errno));
	close(lfd);
	return fd;
}

/* A connect bounded by the deadline: a blocking one may retry SYNs to an
 * unreachable address for minutes. Returns the socket, or -1 with errno. */
static int oob_try_connect(const struct addrinfo *ai, uint64_t deadline)
{
	struct pollfd pfd = { .events = POLLOUT };
	socklen_t len = sizeof(int);
	int fd, flags, err = 0;
	uint64_t now;

	fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0)
		return -1;
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		if (errno != EINPROGRESS)
			goto fail;
		now = now_ms();
		pfd.fd = fd;
		if (poll(&pfd, 1, now < deadline ? (int) (deadline - now) : 0) != 1) {
			errno = ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			errno = err ? err : errno;
			goto fail;
		}
	}
	fcntl(fd, F_SETFL, flags);
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* The server may start a little later than the client: retry refusals. */
static int oob_connect(const struct options *opt)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	char port[16];
	int ret, fd;

	snprintf(port, sizeof(port), "%u", opt->port);
	ret = getaddrinfo(opt->server, port, &hints, &res);
	if (ret)
		fatal("cannot resolve %s: %s", opt->server, gai_strerror(ret));
	while ((fd = oob_try_connect(res, deadline)) < 0) {
		if (now_ms() >= deadline)
			fatal("cannot connect to %s port %u within %d s: %s",
			      opt->server, opt->port, WAIT_LIMIT_MS / 1000,
			      strerror(errno));
		usleep(100 * 1000);
	}
	freeaddrinfo(res);
	return fd;
}

static void oob_open(struct session *s)
{
	struct timeval send_limit = { .tv_sec = WAIT_LIMIT_MS / 1000 };
	socklen_t len = sizeof(s->local_ip);
	int one = 1;

	s->sock = s->is_server ? oob_accept(&s->opt) : oob_connect(&s->opt);
	control_fd = s->sock;
	setsockopt(s->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(s->sock, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof(send_limit));
	if (getsockname(s->sock, (struct sockaddr *) &s->local_ip, &len))
		memset(&s->local_ip, 0, sizeof(s->local_ip));
}

/* A wait that gave up lets its caller check what did complete (a message
 * in the wrong buffer says more than the timeout); the next call that needs
 * the peer in step ends the run. */
static void stop_if_stuck(const struct session *s)
{
	if (s->stuck[0])
		fatal("%s", s->stuck);
}

static void oob_send(struct session *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	stop_if_stuck(s);
	while (len) {
		n = send(s->sock, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			fatal("control connection: send: %s",
			      n ? strerror(errno) : "closed");
		p += n;
		len -= (size_t) n;
	}
}

static void progress(struct session *s);

/* Keeps the endpoint progressing while it waits: the peer may need us to
 * acknowledge or pull data before it can reach its side of the sync. */
static void oob_recv(struct session *s, void *buf, size_t len, const char *what)
{
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	struct pollfd pfd = { .fd = s->sock, .events = POLLIN };
	uint8_t *p = buf;
	ssize_t n;

	stop_if_stuck(s);
	while (len) {
		if (s->cq)
			progress(s);
		if (now_ms() > deadline)
			fatal("timed out after %d s waiting for the peer to %s "
			      "(see its output)", WAIT_LIMIT_MS / 1000, what);
		if (poll(&pfd, 1, 1) != 1)
			continue;
		n = recv(s->sock, p, len, MSG_DONTWAIT);
		if (n == 0)
			fatal("the peer ended the run (see its output) while we "
			      "waited for it to %s", what);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fatal("control connection: recv: %s", strerror(errno));
		}
		p += n;
		len -= (size_t) n;
	}
}

static void oob_signal(struct session *s, enum sync_code code)
{
	uint8_t byte = (uint8_t) code;

	oob_send(s, &byte, 1);
}

static void oob_wait_signal(struct session *s, enum sync_code code, const char *what)
{
	uint8_t byte;

	oob_recv(s, &byte, 1, what);
	if (byte != (uint8_t) code)
		fatal("out of step with the peer: got sync '%c' while waiting "
		      "for '%c' (%s)", byte, code, what);
}

/* Both sides signal, then both wait: neither passes until both arrived. */
static void oob_sync(struct session *s, enum sync_code code, const char *what)
{
	oob_signal(s, code);
	oob_wait_signal(s, code, what);
}

/* Both sides must run the same sizes and iterations, or they fall out of
 * step in ways that look like provider bugs. */
static void oob_hello(struct session *s)
{
	char ours[HELLO_LEN] = { 0 }, theirs[HELLO_LEN];

	snprintf(ours, sizeof(ours), "fi_mrail_msg 1 -p %s -S %zu -I %u%s",
		 s->opt.prov, s->opt.max_size, s->opt.iters,
		 s->opt.by_node ? " -N" : "");
	oob_send(s, ours, sizeof(ours));
	oob_recv(s, theirs, sizeof(theirs), "send its options");
	theirs[HELLO_LEN - 1] = '\0';
	if (strcmp(ours, theirs))
		fatal("the peer runs with other options: ours \"%s\", the peer's "
		      "\"%s\"", ours, theirs);
}

static void oob_exchange_names(struct session *s, const uint8_t *ours,
			       size_t our_len, uint8_t *theirs, size_t *their_len)
{
	uint32_t wire = htonl((uint32_t) our_len);

	oob_send(s, &wire, sizeof(wire));
	oob_send(s, ours, our_len);
	oob_recv(s, &wire, sizeof(wire), "send its address length");
	*their_len = ntohl(wire);
	if (!*their_len || *their_len > MAX_NAME_LEN)
		fatal("the peer announced a %zu-byte address (1 to %d expected)",
		      *their_len, MAX_NAME_LEN);
	oob_recv(s, theirs, *their_len, "send its address");
}

/* -------------------------------------------------------------- completions */

static bool op_is_tx(const struct op *op)
{
	return op->kind != OP_RECV && op->kind != OP_TRECV && op->kind != OP_MRECV;
}

static const char *op_name(enum op_kind kind)
{
	switch (kind) {
	case OP_SEND:
		return "fi_send";
	case OP_SENDDATA:
		return "fi_senddata";
	case OP_TSEND:
		return "fi_tsend";
	case OP_TSENDDATA:
		return "fi_tsenddata";
	case OP_RECV:
		return "fi_recv";
	case OP_TRECV:
		return "fi_trecv";
	case OP_MRECV:
		return "fi_recvmsg(FI_MULTI_RECV)";
	case OP_SENDMSG_INJECT:
		return "fi_sendmsg(FI_INJECT)";
	}
	return "?";
}

static void flags_str(uint64_t flags, char *out, size_t len)
{
	static const struct {
		uint64_t flag;
		const char *name;
	} names[] = {
		{ FI_SEND, "FI_SEND" }, { FI_RECV, "FI_RECV" },
		{ FI_MSG, "FI_MSG" }, { FI_TAGGED, "FI_TAGGED" },
		{ FI_REMOTE_CQ_DATA, "FI_REMOTE_CQ_DATA" },
		{ FI_MULTI_RECV, "FI_MULTI_RECV" },
	};
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(names) && used < len; i++) {
		if (!(flags & names[i].flag))
			continue;
		used += (size_t) snprintf(out + used, len - used, "%s%s",
					  used ? "|" : "", names[i].name);
		flags &= ~names[i].flag;
	}
	if (used < len && (flags || !used))
		snprintf(out + used, len - used, "%s%#llx", used ? "|" : "",
			 (unsigned long long) flags);
}

static void op_init(struct op *op, enum op_kind kind, void *buf, size_t len)
{
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->buf = buf;
	op->len = len;
}

static void pending_add(struct session *s, struct op *op)
{
	if (s->pending_count == MAX_PENDING)
		fatal("more than %d operations outstanding (a bug in this test)",
		      MAX_PENDING);
	s->pending[s->pending_count++] = op;
	if (op_is_tx(op))
		s->tx_posted++;
	else
		s->rx_posted++;
}

/*
 * The op a completion names, or NULL if the context is not one we have
 * outstanding (a duplicate, or garbage). It leaves the outstanding set,
 * except a multi-receive buffer, which stays until the completion that
 * releases it (FI_MULTI_RECV): every message into it names its context.
 */
static struct op *pending_take(struct session *s, void *context, uint64_t flags)
{
	struct op *op;
	size_t i;

	for (i = 0; i < s->pending_count; i++) {
		op = s->pending[i];
		if (&op->fi_ctx != context)
			continue;
		if (!op->multi || (flags & FI_MULTI_RECV))
			s->pending[i] = s->pending[--s->pending_count];
		return op;
	}
	return NULL;
}

/* Logs one completion of a multi-receive buffer; true if it released it
 * (only then does the operation count as completed). */
static bool multi_log_add(struct op *op, const struct fi_cq_tagged_entry *comp,
			  int err, size_t olen)
{
	struct multi_log *log = op->multi;

	if (log->count < ARRAY_SIZE(log->entries)) {
		log->entries[log->count] = *comp;
		log->errs[log->count] = err;
		log->olens[log->count] = olen;
	}
	log->count++;
	return comp->flags & FI_MULTI_RECV;
}

static void note_stray(struct session *s, const char *kind, void *context,
		       uint64_t flags, size_t len)
{
	char fl[96];

	if (!s->stray++) {
		flags_str(flags, fl, sizeof(fl));
		snprintf(s->stray_note, sizeof(s->stray_note),
			 "first: %s for context %p, flags %s, len %zu", kind,
			 context, fl, len);
	}
}

static void count_completion(struct session *s, const struct op *op)
{
	if (op_is_tx(op))
		s->tx_done++;
	else
		s->rx_done++;
}

static void record_completion(struct session *s, const struct fi_cq_tagged_entry *comp)
{
	struct op *op = pending_take(s, comp->op_context, comp->flags);

	if (!op) {
		note_stray(s, "a completion", comp->op_context, comp->flags, comp->len);
		return;
	}
	if (op->multi && !multi_log_add(op, comp, 0, 0))
		return;
	op->completions++;
	op->entry = *comp;
	count_completion(s, op);
}

static void record_error(struct session *s)
{
	struct fi_cq_err_entry err = { 0 };
	char prov_text[96];
	struct op *op;
	ssize_t ret;

	ret = fi_cq_readerr(s->cq, &err, 0);
	if (ret == -FI_EAGAIN)
		return;
	if (ret < 0)
		fatal("fi_cq_readerr: %s", fi_strerror((int) -ret));

	op = pending_take(s, err.op_context, err.flags);
	if (!op) {
		note_stray(s, fi_strerror(err.err), err.op_context, err.flags, err.len);
		return;
	}
	if (op->multi) {
		struct fi_cq_tagged_entry comp = {
			.op_context = err.op_context, .flags = err.flags,
			.len = err.len, .buf = err.buf, .data = err.data,
			.tag = err.tag,
		};

		if (!multi_log_add(op, &comp, err.err ? err.err : FI_EOTHER, err.olen))
			return;
	}
	op->completions++;
	op->err = err.err ? err.err : FI_EOTHER;
	op->olen = err.olen;
	op->entry.op_context = err.op_context;
	op->entry.flags = err.flags;
	op->entry.len = err.len;
	op->entry.tag = err.tag;
	op->entry.data = err.data;
	snprintf(op->err_text, sizeof(op->err_text), "%s (%s)",
		 fi_strerror(err.err),
		 fi_cq_strerror(s->cq, err.prov_errno, err.err_data, prov_text,
				sizeof(prov_text)));
	count_completion(s, op);
}

static void progress(struct session *s)
{
	struct fi_cq_tagged_entry comp[CQ_BATCH];
	ssize_t n, i;

	stop_if_stuck(s);
	n = fi_cq_read(s->cq, comp, CQ_BATCH);
	if (n == -FI_EAGAIN)
		return;
	if (n == -FI_EAVAIL) {
		record_error(s);
		return;
	}
	if (n < 0)
		fatal("fi_cq_read: %s", fi_strerror((int) -n));
	for (i = 0; i < n; i++)
		record_completion(s, &comp[i]);
}

static size_t ops_done(const struct op *ops, size_t n)
{
	size_t i, done = 0;

	for (i = 0; i < n; i++)
		if (ops[i].completions)
			done++;
	return done;
}

static void wait_ops(struct session *s, const struct op *ops, size_t n, const char *what)
{
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;

	while (ops_done(ops, n) < n) {
		progress(s);
		if (now_ms() > deadline) {
			snprintf(s->stuck, sizeof(s->stuck), "timed out after %d s "
				 "waiting for the completion of %s (%zu of %zu "
				 "completed)", WAIT_LIMIT_MS / 1000, what,
				 ops_done(ops, n), n);
			return;
		}
	}
}

/* Reads the CQ for a while when nothing should arrive: whatever does is
 * counted as stray. */
static void drain(struct session *s, unsigned ms)
{
	uint64_t end = now_ms() + ms;

	while (now_ms() < end)
		progress(s);
}

/* ------------------------------------------------------------------- posting */

static ssize_t post_once(struct session *s, struct op *op)
{
	void *ctx = &op->fi_ctx;

	switch (op->kind) {
	case OP_SEND:
		return fi_send(s->ep, op->buf, op->len, NULL, s->peer, ctx);
	case OP_SENDDATA:
		return fi_senddata(s->ep, op->buf, op->len, NULL, op->data, s->peer, ctx);
	case OP_TSEND: {
		fi_addr_t dest = op->has_dest ? op->dest : s->peer;
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct fi_msg_tagged msg = {
			.msg_iov = &iov, .iov_count = 1, .addr = dest,
			.tag = op->tag, .context = ctx,
		};

		if (op->delivery_complete)
			return fi_tsendmsg(s->ep, &msg,
					   FI_DELIVERY_COMPLETE | FI_COMPLETION);
		return fi_tsend(s->ep, op->buf, op->len, NULL, dest, op->tag, ctx);
	}
	case OP_TSENDDATA:
		return fi_tsenddata(s->ep, op->buf, op->len, NULL, op->data, s->peer,
				    op->tag, ctx);
	case OP_RECV:
		return fi_recv(s->ep, op->buf, op->len, NULL, FI_ADDR_UNSPEC, ctx);
	case OP_TRECV:
		return fi_trecv(s->ep, op->buf, op->len, NULL, FI_ADDR_UNSPEC, op->tag,
				op->ignore, ctx);
	case OP_MRECV: {
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct fi_msg msg = {
			.msg_iov = &iov, .iov_count = 1,
			.addr = FI_ADDR_UNSPEC, .context = ctx,
		};

		return fi_recvmsg(s->ep, &msg, FI_MULTI_RECV | FI_COMPLETION);
	}
	case OP_SENDMSG_INJECT: {
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct fi_msg msg = {
			.msg_iov = &iov, .iov_count = 1,
			.addr = s->peer, .context = ctx,
		};

		return fi_sendmsg(s->ep, &msg, FI_INJECT | FI_COMPLETION);
	}
	}
	return -FI_EINVAL;
}

/* -FI_EAGAIN means "progress and retry", as long as the wait stays bounded. */
static void post_op(struct session *s, struct op *op)
{
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	ssize_t ret;

	stop_if_stuck(s);
	while ((ret = post_once(s, op)) == -FI_EAGAIN) {
		progress(s);
		if (now_ms() > deadline)
			fatal("%s of %zu bytes still refused with -FI_EAGAIN after %d s",
			      op_name(op->kind), op->len, WAIT_LIMIT_MS / 1000);
	}
	if (ret)
		fatal("%s of %zu bytes: %s", op_name(op->kind), op->len,
		      fi_strerror((int) -ret));
	pending_add(s, op);
}

static void post_inject(struct session *s, const void *buf, size_t len)
{
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	ssize_t ret;

	stop_if_stuck(s);
	while ((ret = fi_inject(s->ep, buf, len, s->peer)) == -FI_EAGAIN) {
		progress(s);
		if (now_ms() > deadline)
			fatal("fi_inject of %zu bytes still refused with -FI_EAGAIN "
			      "after %d s", len, WAIT_LIMIT_MS / 1000);
	}
	if (ret)
		fatal("fi_inject of %zu bytes: %s", len, fi_strerror((int) -ret));
}

/* --------------------------------------------------------------- expectations */

static bool expect_completed(const struct op *op, uint64_t flags, const char *where)
{
	char got[96], want[96];

	if (op->completions != 1) {
		check_fail("%s: %s completed %d times", where, op_name(op->kind),
			   op->completions);
		return false;
	}
	if (op->err) {
		check_fail("%s: %s completed with an error: %s", where,
			   op_name(op->kind), op->err_text);
		return false;
	}
	if (op->entry.op_context != &op->fi_ctx) {
		check_fail("%s: %s completion carries context %p, posted with %p",
			   where, op_name(op->kind), op->entry.op_context,
			   (const void *) &op->fi_ctx);
		return false;
	}
	if (op->entry.flags != flags) {
		flags_str(op->entry.flags, got, sizeof(got));
		flags_str(flags, want, sizeof(want));
		check_fail("%s: %s completion flags %s, expected %s", where,
			   op_name(op->kind), got, want);
		return false;
	}
	return true;
}

static bool expect_received(const struct op *op, uint64_t flags, size_t len,
			    const char *where)
{
	if (!expect_completed(op, flags, where))
		return false;
	if (op->entry.len != len) {
		check_fail("%s: %s completion len %zu, expected %zu", where,
			   op_name(op->kind), op->entry.len, len);
		return false;
	}
	return true;
}

static bool expect_tag(const struct op *op, uint64_t tag, const char *where)
{
	if (op->entry.tag == tag)
		return true;
	check_fail("%s: completion tag %#llx, expected %#llx", where,
		   (unsigned long long) op->entry.tag, (unsigned long long) tag);
	return false;
}

/* After each test: nothing more may arrive, and every operation posted
 * completed exactly once. The sync keeps the next test's traffic out of
 * this drain. */
static void end_test(struct session *s, const char *test, enum sync_code code)
{
	drain(s, DRAIN_MS);
	check_begin("%s: exact completion counts", test);
	if (s->stray)
		check_fail("%u completions for no outstanding operation (%s)",
			   s->stray, s->stray_note);
	if (s->tx_done != s->tx_posted)
		check_fail("%u transmit completions for %u transmits posted",
			   s->tx_done, s->tx_posted);
	if (s->rx_done != s->rx_posted)
		check_fail("%u receive completions for %u receives posted",
			   s->rx_done, s->rx_posted);
	check_end();
	s->pending_count = 0;
	s->tx_posted = s->rx_posted = s->tx_done = s->rx_done = s->stray = 0;
	oob_sync(s, code, test);
}

/* ---------------------------------------------------------------- 1: ping-pong */

static void ping_pong_once(struct session *s, struct buf *tx, struct buf *rx,
			   size_t size, uint32_t iter)
{
	enum pattern out = s->is_server ? PAT_PONG : PAT_PING;
	enum pattern in = s->is_server ? PAT_PING : PAT_PONG;
	struct op ops[2];	/* [0] send, [1] receive */
	char where[48];

	snprintf(where, sizeof(where), "iteration %u", iter);
	poison_for(rx->data, size, in, size, iter);
	op_init(&ops[1], OP_RECV, rx->data, size);
	post_op(s, &ops[1]);
	if (s->is_server)
		wait_ops(s, &ops[1], 1, "the ping");

	fill_pattern(tx->data, size, out, size, iter);
	op_init(&ops[0], OP_SEND, tx->data, size);
	post_op(s, &ops[0]);
	wait_ops(s, ops, 2, s->is_server ? "the pong's send" : "the ping and pong");

	expect_completed(&ops[0], FI_SEND | FI_MSG, where);
	if (expect_received(&ops[1], FI_RECV | FI_MSG, size, where))
		expect_payload(rx, size, in, size, iter, where);
	else
		expect_guards(rx, where);
}

static void test_ping_pong(struct session *s, size_t size)
{
	struct buf tx, rx;
	uint32_t iter;

	buf_alloc(&tx, size);
	buf_alloc(&rx, size);
	check_begin("fi_send/fi_recv ping-pong, %zu bytes", size);
	for (iter = 0; iter < s->opt.iters; iter++)
		ping_pong_once(s, &tx, &rx, size, iter);
	check_end();
	buf_free(&tx);
	buf_free(&rx);
}

/* ----------------------------------------------------------- 2: tags and masks */

static uint64_t tag_a_sent(uint32_t iter)
{
	return TAG_A | ((0x0101u * iter + 0x11u) & TAG_A_IGNORE);
}

static uint64_t tag_b_sent(uint32_t iter)
{
	return TAG_B | ((uint64_t) ((iter + 1) & 0xff) << 24);
}

/* Receive A is posted first and B is sent first: a provider that matched
 * without the tag, or with the wrong mask, would put B into A's buffer. */
static void tagged_receive(struct session *s, struct buf *bufs, size_t size,
			   uint32_t iter)
{
	struct op ops[2];	/* [0] tag A, [1] tag B */
	char where[48];

	poison_for(bufs[0].data, size, PAT_TAG_A, size, iter);
	poison_for(bufs[1].data, size, PAT_TAG_B, size, iter);
	op_init(&ops[0], OP_TRECV, bufs[0].data, size);
	ops[0].tag = TAG_A;
	ops[0].ignore = TAG_A_IGNORE;
	op_init(&ops[1], OP_TRECV, bufs[1].data, size);
	ops[1].tag = TAG_B;
	ops[1].ignore = TAG_B_IGNORE;
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, ops, 2, "tagged receives A and B");

	snprintf(where, sizeof(where), "iteration %u, receive A", iter);
	if (expect_received(&ops[0], FI_RECV | FI_TAGGED, size, where) &&
	    expect_tag(&ops[0], tag_a_sent(iter), where))
		expect_payload(&bufs[0], size, PAT_TAG_A, size, iter, where);
	expect_guards(&bufs[0], where);
	snprintf(where, sizeof(where), "iteration %u, receive B", iter);
	if (expect_received(&ops[1], FI_RECV | FI_TAGGED, size, where) &&
	    expect_tag(&ops[1], tag_b_sent(iter), where))
		expect_payload(&bufs[1], size, PAT_TAG_B, size, iter, where);
	expect_guards(&bufs[1], where);
}

static void tagged_send(struct session *s, struct buf *bufs, size_t size,
			uint32_t iter)
{
	struct op ops[2];	/* [0] tag B, [1] tag A: B goes first */
	char where[48];

	fill_pattern(bufs[0].data, size, PAT_TAG_B, size, iter);
	fill_pattern(bufs[1].data, size, PAT_TAG_A, size, iter);
	op_init(&ops[0], OP_TSEND, bufs[0].data, size);
	ops[0].tag = tag_b_sent(iter);
	op_init(&ops[1], OP_TSEND, bufs[1].data, size);
	ops[1].tag = tag_a_sent(iter);
	oob_wait_signal(s, SIG_POSTED, "post tagged receives A and B");
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	wait_ops(s, ops, 2, "tagged sends B and A");

	snprintf(where, sizeof(where), "iteration %u, send B", iter);
	expect_completed(&ops[0], FI_SEND | FI_TAGGED, where);
	snprintf(where, sizeof(where), "iteration %u, send A", iter);
	expect_completed(&ops[1], FI_SEND | FI_TAGGED, where);
}

static void test_tagged(struct session *s, size_t size, enum direction dir)
{
	struct buf bufs[2];
	uint32_t iter;

	bufs_alloc(bufs, 2, size);
	check_begin("fi_tsend B then A into fi_trecv A and B with ignore masks, "
		    "%zu bytes, %s", size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			tagged_send(s, bufs, size, iter);
		else
			tagged_receive(s, bufs, size, iter);
	}
	check_end();
	bufs_free(bufs, 2);
}

/* -------------------------------------------------------------- 3: CQ data */

static uint64_t cq_data_value(const struct session *s, enum pattern pat,
			      size_t size, uint32_t iter)
{
	size_t bytes = s->info->domain_attr->cq_data_size;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | pattern_byte(pat, size, iter, 1000 + i);
	return bytes >= 8 ? v : v & ((1ULL << (8 * bytes)) - 1);
}

static bool expect_cq_data(const struct op *op, uint64_t data, const char *where)
{
	if (op->entry.data == data)
		return true;
	check_fail("%s: completion data %#llx, expected %#llx", where,
		   (unsigned long long) op->entry.data, (unsigned long long) data);
	return false;
}

static void cq_data_receive(struct session *s, struct buf *bufs, size_t size,
			    uint32_t iter)
{
	struct op ops[2];	/* [0] fi_recv, [1] fi_trecv */
	char where[64];

	poison_for(bufs[0].data, size, PAT_DATA_MSG, size, iter);
	poison_for(bufs[1].data, size, PAT_DATA_TAGGED, size, iter);
	op_init(&ops[0], OP_RECV, bufs[0].data, size);
	op_init(&ops[1], OP_TRECV, bufs[1].data, size);
	ops[1].tag = TAG_DATA;
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, ops, 2, "receives of fi_senddata and fi_tsenddata");

	snprintf(where, sizeof(where), "iteration %u, fi_senddata", iter);
	if (expect_received(&ops[0], FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA, size, where) &&
	    expect_cq_data(&ops[0], cq_data_value(s, PAT_DATA_MSG, size, iter), where))
		expect_payload(&bufs[0], size, PAT_DATA_MSG, size, iter, where);
	expect_guards(&bufs[0], where);
	snprintf(where, sizeof(where), "iteration %u, fi_tsenddata", iter);
	if (expect_received(&ops[1], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, size,
			    where) &&
	    expect_tag(&ops[1], TAG_DATA, where) &&
	    expect_cq_data(&ops[1], cq_data_value(s, PAT_DATA_TAGGED, size, iter), where))
		expect_payload(&bufs[1], size, PAT_DATA_TAGGED, size, iter, where);
	expect_guards(&bufs[1], where);
}

static void cq_data_send(struct session *s, struct buf *bufs, size_t size,
			 uint32_t iter)
{
	struct op ops[2];	/* [0] fi_senddata, [1] fi_tsenddata */
	char where[64];

	fill_pattern(bufs[0].data, size, PAT_DATA_MSG, size, iter);
	fill_pattern(bufs[1].data, size, PAT_DATA_TAGGED, size, iter);
	op_init(&ops[0], OP_SENDDATA, bufs[0].data, size);
	ops[0].data = cq_data_value(s, PAT_DATA_MSG, size, iter);
	op_init(&ops[1], OP_TSENDDATA, bufs[1].data, size);
	ops[1].data = cq_data_value(s, PAT_DATA_TAGGED, size, iter);
	ops[1].tag = TAG_DATA;
	oob_wait_signal(s, SIG_POSTED, "post receives for CQ data");
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	wait_ops(s, ops, 2, "fi_senddata and fi_tsenddata");

	snprintf(where, sizeof(where), "iteration %u, fi_senddata", iter);
	expect_completed(&ops[0], FI_SEND | FI_MSG, where);
	snprintf(where, sizeof(where), "iteration %u, fi_tsenddata", iter);
	expect_completed(&ops[1], FI_SEND | FI_TAGGED, where);
}

static void test_cq_data(struct session *s, size_t size, enum direction dir)
{
	struct buf bufs[2];
	uint32_t iter;

	bufs_alloc(bufs, 2, size);
	check_begin("fi_senddata/fi_tsenddata with remote CQ data, %zu bytes, %s",
		    size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			cq_data_send(s, bufs, size, iter);
		else
			cq_data_receive(s, bufs, size, iter);
	}
	check_end();
	bufs_free(bufs, 2);
}

/* ---------------------------------------------------------------- 4: inject */

static void inject_receive(struct session *s, struct buf *b, size_t size, uint32_t iter)
{
	struct op op;
	char where[48];

	snprintf(where, sizeof(where), "iteration %u", iter);
	poison_for(b->data, size, PAT_INJECT, size, iter);
	op_init(&op, OP_RECV, b->data, size);
	post_op(s, &op);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, &op, 1, "the receive of an injected message");
	if (expect_received(&op, FI_RECV | FI_MSG, size, where))
		expect_payload(b, size, PAT_INJECT, size, iter, where);
	else
		expect_guards(b, where);
}

/* fi_inject hands the buffer back on return: scribbling over it at once
 * shows whether the provider really took a copy. Every other iteration
 * sends with fi_sendmsg(FI_INJECT) instead, which hands it back as early but
 * still completes, once (fi_msg(3): only fi_inject has no completion). */
static void inject_send(struct session *s, struct buf *b, size_t size, uint32_t iter)
{
	char where[48];
	struct op op;

	fill_pattern(b->data, size, PAT_INJECT, size, iter);
	oob_wait_signal(s, SIG_POSTED, "post a receive for fi_inject");
	if (!(iter % 2)) {
		post_inject(s, b->data, size);
		poison_for(b->data, size, PAT_INJECT, size, iter);
		return;
	}
	op_init(&op, OP_SENDMSG_INJECT, b->data, size);
	post_op(s, &op);
	poison_for(b->data, size, PAT_INJECT, size, iter);
	wait_ops(s, &op, 1, "fi_sendmsg(FI_INJECT)");
	snprintf(where, sizeof(where), "iteration %u, fi_sendmsg(FI_INJECT)", iter);
	expect_completed(&op, FI_SEND | FI_MSG, where);
}

static void test_inject(struct session *s, size_t size, enum direction dir)
{
	struct buf b;
	uint32_t iter;

	buf_alloc(&b, size);
	check_begin("fi_inject (no transmit completion) and fi_sendmsg(FI_INJECT) "
		    "(one), %zu bytes, %s", size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			inject_send(s, &b, size, iter);
		else
			inject_receive(s, &b, size, iter);
	}
	check_end();
	buf_free(&b);
}

/* ------------------------------------------------- 5: ordering, unexpected */

/* Message k of a burst: byte 0 is k, the rest a pattern of (size, iter, k). */
static uint32_t order_iter(uint32_t iter, unsigned k)
{
	return iter * ORDER_BURST + k;
}

static void order_fill(uint8_t *p, size_t size, uint32_t iter, unsigned k)
{
	fill_pattern(p, size, PAT_ORDER, size, order_iter(iter, k));
	if (size)
		p[0] = (uint8_t) k;
}

static void order_poison(uint8_t *p, size_t size, uint32_t iter, unsigned k)
{
	poison_for(p, size, PAT_ORDER, size, order_iter(iter, k));
	if (size)
		p[0] = (uint8_t) ~k;
}

static void order_check_one(const struct op *op, const struct buf *b, size_t size,
			    uint32_t iter, unsigned k, bool tagged)
{
	uint64_t flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	char where[64];
	size_t bad;

	snprintf(where, sizeof(where), "iteration %u, receive %u", iter, k);
	expect_guards(b, where);
	if (!expect_received(op, flags, size, where))
		return;
	if (tagged && !expect_tag(op, TAG_ORDER | k, where))
		return;
	if (size && b->data[0] != (uint8_t) k) {
		check_fail("%s: got message %u, out of send order", where,
			   b->data[0]);
		return;
	}
	bad = first_mismatch(b->data, 1, size, PAT_ORDER, size, order_iter(iter, k));
	if (bad < size)
		check_fail("%s: byte %zu of %zu is %#04x, expected %#04x", where,
			   bad, size, b->data[bad],
			   pattern_byte(PAT_ORDER, size, order_iter(iter, k), bad));
}

/* Sends the whole burst before the receiver posts anything, then tells it
 * so; the transmits may only complete once it posts (rendezvous). */
static void order_send(struct session *s, struct op *ops, struct buf *bufs,
		       size_t size, uint32_t iter, bool tagged)
{
	uint64_t flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	char where[64];
	unsigned k;

	for (k = 0; k < ORDER_BURST; k++) {
		order_fill(bufs[k].data, size, iter, k);
		op_init(&ops[k], tagged ? OP_TSEND : OP_SEND, bufs[k].data, size);
		ops[k].tag = TAG_ORDER | k;
		post_op(s, &ops[k]);
	}
	oob_signal(s, SIG_SENT);
	wait_ops(s, ops, ORDER_BURST, "a burst of sends");
	for (k = 0; k < ORDER_BURST; k++) {
		snprintf(where, sizeof(where), "iteration %u, send %u", iter, k);
		expect_completed(&ops[k], flags, where);
	}
}

static void order_receive(struct session *s, struct op *ops, struct buf *bufs,
			  size_t size, uint32_t iter, bool tagged)
{
	unsigned k;

	oob_wait_signal(s, SIG_SENT, "send its burst");
	drain(s, ORDER_SETTLE_MS);
	for (k = 0; k < ORDER_BURST; k++) {
		order_poison(bufs[k].data, size, iter, k);
		op_init(&ops[k], tagged ? OP_TRECV : OP_RECV, bufs[k].data, size);
		ops[k].tag = TAG_ORDER;
		ops[k].ignore = TAG_ORDER_IGNORE;
		post_op(s, &ops[k]);
	}
	wait_ops(s, ops, ORDER_BURST, "receives of an unexpected burst");
	for (k = 0; k < ORDER_BURST; k++)
		order_check_one(&ops[k], &bufs[k], size, iter, k, tagged);
}

static void test_ordering(struct session *s, size_t size, enum direction dir,
			  bool tagged)
{
	struct op ops[ORDER_BURST];
	struct buf bufs[ORDER_BURST];
	uint32_t iter;

	bufs_alloc(bufs, ORDER_BURST, size);
	check_begin("%d %s sent before any receive, matched in send order, "
		    "%zu bytes, %s", ORDER_BURST,
		    tagged ? "fi_tsend" : "fi_send", size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			order_send(s, ops, bufs, size, iter, tagged);
		else
			order_receive(s, ops, bufs, size, iter, tagged);
	}
	check_end();
	bufs_free(bufs, ORDER_BURST);
}

/* ------------------------------------------------------------ 7: truncation */

/* The message that follows each truncated one has a pattern of its own. */
static uint32_t trunc_next_iter(uint32_t iter)
{
	return iter | 0x80000000u;
}

static void trunc_receive_short(struct session *s, struct buf *b, uint32_t iter,
				bool tagged)
{
	struct op op;
	char where[48];

	snprintf(where, sizeof(where), "iteration %u", iter);
	memset(b->data, 0, s->trunc.posted);
	op_init(&op, tagged ? OP_TRECV : OP_RECV, b->data, s->trunc.posted);
	op.tag = TAG_TRUNC;
	post_op(s, &op);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, &op, 1, "a receive too short for its message");
	expect_guards(b, where);
	if (op.completions != 1)
		check_fail("%s: %d completions", where, op.completions);
	else if (!op.err)
		check_fail("%s: a successful completion (len %zu), expected error "
			   "FI_ETRUNC", where, op.entry.len);
	else if (op.err != FI_ETRUNC)
		check_fail("%s: completion error %s, expected FI_ETRUNC", where,
			   op.err_text);
	else if (op.olen != s->trunc.sent - s->trunc.posted)
		check_fail("%s: olen %zu, expected %zu", where, op.olen,
			   s->trunc.sent - s->trunc.posted);
}

/* A truncation is the receiver's error alone: the endpoint must go on
 * delivering what follows. */
static void trunc_receive_next(struct session *s, struct buf *b, uint32_t iter,
			       bool tagged)
{
	uint32_t next = trunc_next_iter(iter);
	struct op op;
	char where[48];

	snprintf(where, sizeof(where), "iteration %u, the next message", iter);
	poison_for(b->data, s->trunc.sent, PAT_TRUNC, s->trunc.sent, next);
	op_init(&op, tagged ? OP_TRECV : OP_RECV, b->data, s->trunc.sent);
	op.tag = TAG_TRUNC;
	post_op(s, &op);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, &op, 1, "the message after a truncated one");
	if (expect_received(&op, FI_RECV | (tagged ? FI_TAGGED : FI_MSG), s->trunc.sent,
			    where))
		expect_payload(b, s->trunc.sent, PAT_TRUNC, s->trunc.sent, next, where);
	else
		expect_guards(b, where);
}

static void trunc_send_one(struct session *s, struct buf *b, uint32_t pattern_iter,
			   bool tagged, const char *where)
{
	struct op op;

	fill_pattern(b->data, s->trunc.sent, PAT_TRUNC, s->trunc.sent, pattern_iter);
	op_init(&op, tagged ? OP_TSEND : OP_SEND, b->data, s->trunc.sent);
	op.tag = TAG_TRUNC;
	oob_wait_signal(s, SIG_POSTED, "post a receive");
	post_op(s, &op);
	wait_ops(s, &op, 1, "a send to the truncation test's receiver");
	expect_completed(&op, FI_SEND | (tagged ? FI_TAGGED : FI_MSG), where);
}

static void trunc_send(struct session *s, struct buf *b, uint32_t iter, bool tagged)
{
	char where[64];

	snprintf(where, sizeof(where), "iteration %u, sending into a short buffer",
		 iter);
	trunc_send_one(s, b, iter, tagged, where);
	snprintf(where, sizeof(where), "iteration %u, sending the next message", iter);
	trunc_send_one(s, b, trunc_next_iter(iter), tagged, where);
}

static void test_truncation(struct session *s, enum direction dir, bool tagged)
{
	struct buf bufs[2];	/* the short receive, the next one */
	uint32_t iter;

	buf_alloc(&bufs[0], s->trunc.posted);
	buf_alloc(&bufs[1], s->trunc.sent);
	check_begin("%zu-byte %s into a %zu-byte receive: FI_ETRUNC, olen %zu, then "
		    "the next message intact, %s", s->trunc.sent,
		    tagged ? "fi_tsend" : "fi_send", s->trunc.posted,
		    s->trunc.sent - s->trunc.posted, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir)) {
			trunc_send(s, &bufs[1], iter, tagged);
			continue;
		}
		trunc_receive_short(s, &bufs[0], iter, tagged);
		trunc_receive_next(s, &bufs[1], iter, tagged);
	}
	check_end();
	bufs_free(bufs, 2);
}

/* ------------------------------------------------- 8: endpoint options */

static bool prov_is_mrail(const struct session *s)
{
	return !strcmp(s->info->fabric_attr->prov_name, "mrail");
}

static int get_size_opt(struct session *s, int level, int name, size_t *value,
			size_t *len)
{
	*len = sizeof(*value);
	return fi_getopt(&s->ep->fid, level, name, value, len);
}

static void check_opt_ret(int ret, int want, const char *name)
{
	char detail[120];

	snprintf(detail, sizeof(detail), "returned %d (%s), expected %d (%s)", ret,
		 fi_strerror(-ret), want, fi_strerror(-want));
	check_once(ret == want, name, detail);
}

/* fi_getopt/fi_setopt as fi_endpoint(3) has them; the values mrail
 * documents (fi_mrail(7)) are checked on mrail only. */
static void run_options(struct session *s)
{
	size_t value = 0, len, set = 12345;
	uint8_t tiny = 0;
	char detail[120];
	int ret;

	ret = get_size_opt(s, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &value, &len);
	snprintf(detail, sizeof(detail), "returned %d, optlen %zu, value %zu", ret,
		 len, value);
	check_once(!ret && len == sizeof(size_t), "fi_getopt FI_OPT_MIN_MULTI_RECV",
		   detail);
	if (prov_is_mrail(s))
		check_once(value == 16336, "mrail's default FI_OPT_MIN_MULTI_RECV is "
			   "16336 (its eager limit)", detail);
	ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &set,
			sizeof(set));
	check_opt_ret(ret, 0, "fi_setopt FI_OPT_MIN_MULTI_RECV 12345");
	ret = get_size_opt(s, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &value, &len);
	snprintf(detail, sizeof(detail), "returned %d, value %zu", ret, value);
	check_once(!ret && value == set, "fi_getopt FI_OPT_MIN_MULTI_RECV reads "
		   "back 12345", detail);

	ret = get_size_opt(s, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &value, &len);
	snprintf(detail, sizeof(detail), "returned %d, value %zu", ret, value);
	check_once(!ret && (!prov_is_mrail(s) || value == 0),
		   "fi_getopt FI_OPT_CM_DATA_SIZE (mrail: 0)", detail);

	ret = get_size_opt(s, FI_OPT_ENDPOINT, 0x7fff, &value, &len);
	check_opt_ret(ret, -FI_ENOPROTOOPT, "fi_getopt of an unknown option");
	ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, 0x7fff, &set, sizeof(set));
	check_opt_ret(ret, -FI_ENOPROTOOPT, "fi_setopt of an unknown option");
	ret = get_size_opt(s, FI_OPT_ENDPOINT + 77, FI_OPT_MIN_MULTI_RECV, &value,
			   &len);
	check_opt_ret(ret, -FI_ENOPROTOOPT, "fi_getopt at an unknown level");
	if (prov_is_mrail(s)) {
		ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
				&set, sizeof(set));
		check_opt_ret(ret, -FI_ENOPROTOOPT, "mrail: fi_setopt "
			      "FI_OPT_CM_DATA_SIZE (read-only)");
		ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				&tiny, sizeof(tiny));
		check_opt_ret(ret, -FI_EINVAL, "mrail: fi_setopt "
			      "FI_OPT_MIN_MULTI_RECV with a 1-byte value");
		len = 1;
		ret = fi_getopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				&tiny, &len);
		snprintf(detail, sizeof(detail), "returned %d, optlen %zu", ret, len);
		check_once(ret == -FI_ETOOSMALL && len == sizeof(size_t),
			   "mrail: fi_getopt into 1 byte: -FI_ETOOSMALL, optlen 8",
			   detail);
	}
	end_test(s, "endpoint options", SYNC_OPTS);
}

/* ------------------------------------------------ 9: FI_MULTI_RECV */

/* The minimum the receiver sets, and the room a buffer has after its last
 * message: below the minimum, so that message releases it. */
#define MULTI_MIN		256
#define MULTI_SLACK		100
/* The message after a buffer's last goes to an ordinary receive. */
#define MULTI_NEXT_LEN		77

/* Each list keeps MULTI_MIN bytes or more behind every message but the
 * last, so exactly these messages fill the buffer. */
static const struct multi_case {
	const char *name;
	size_t count;
	size_t sizes[MULTI_MAX_PARTS];
	/* Truncation cases: the buffer's size, which the last message
	 * overflows (FI_ETRUNC, and the buffer is full); 0: all fit. */
	size_t cap;
} multi_cases[] = {
	{ "eager", 6, { 1000, 7, 0, 4096, 16336, 300 }, 0 },
	{ "rendezvous", 3, { 65539, 16337, 100003 }, 0 },
	{ "eager and rendezvous", 5, { 64, 65539, 0, 16337, 1000 }, 0 },
	{ "eager, the last truncated", 2, { 1000, 5000 }, 1300 },
	{ "rendezvous, the last truncated", 2, { 20000, 100003 }, 60000 },
};

/* Where message i lands: messages are packed, each taking what fits. */
static size_t multi_offset(const struct multi_case *mc, size_t i)
{
	size_t off = 0, k;

	for (k = 0; k < i; k++)
		off += mc->sizes[k];
	return mc->cap && off > mc->cap ? mc->cap : off;
}

static size_t multi_cap(const struct multi_case *mc)
{
	return mc->cap ? mc->cap : multi_offset(mc, mc->count) + MULTI_SLACK;
}

/* The bytes of message i that fit in the buffer. */
static size_t multi_take(const struct multi_case *mc, size_t i)
{
	size_t room = multi_cap(mc) - multi_offset(mc, i);

	return mc->sizes[i] < room ? mc->sizes[i] : room;
}

static size_t multi_msg_len(const struct multi_case *mc, size_t i)
{
	return i < mc->count ? mc->sizes[i] : MULTI_NEXT_LEN;
}

static uint32_t multi_iter(size_t i, uint32_t iter)
{
	return (uint32_t) (iter * 64 + i);
}

static void multi_send(struct session *s, const struct multi_case *mc,
		       uint32_t iter, bool unexpected)
{
	struct op ops[MULTI_MAX_PARTS + 1];
	struct buf bufs[MULTI_MAX_PARTS + 1];
	size_t i, n = mc->count + 1, len;
	char where[64];

	for (i = 0; i < n; i++) {
		len = multi_msg_len(mc, i);
		buf_alloc(&bufs[i], len);
		fill_pattern(bufs[i].data, len, PAT_MULTI, len, multi_iter(i, iter));
		op_init(&ops[i], OP_SEND, bufs[i].data, len);
	}
	if (!unexpected)
		oob_wait_signal(s, SIG_POSTED, "post its multi-receive buffer");
	for (i = 0; i < n; i++)
		post_op(s, &ops[i]);
	if (unexpected)
		oob_signal(s, SIG_SENT);
	wait_ops(s, ops, n, "sends into a multi-receive buffer");
	for (i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "iteration %u, send %zu", iter, i);
		expect_completed(&ops[i], FI_SEND | FI_MSG, where);
	}
	bufs_free(bufs, n);
}

/* The message a completion reports: the first not yet seen that starts
 * where the completion points and has its length (0-byte messages share
 * an offset with the next one). */
static size_t multi_find(const struct multi_case *mc, const struct buf *b,
			 const struct fi_cq_tagged_entry *e, const bool *seen)
{
	size_t i;

	for (i = 0; i < mc->count; i++) {
		if (!seen[i] && e->len == multi_take(mc, i) &&
		    (uint8_t *) e->buf == b->data + multi_offset(mc, i))
			return i;
	}
	return SIZE_MAX;
}

static void multi_check_log(const struct multi_case *mc, const struct op *op,
			    const struct buf *b, uint32_t iter)
{
	const struct multi_log *log = op->multi;
	bool seen[MULTI_MAX_PARTS] = { false };
	const struct fi_cq_tagged_entry *e;
	size_t k, i, off, take;
	uint64_t want;
	char where[80];

	if (log->count != mc->count) {
		check_fail("iteration %u: %zu completions for %zu messages", iter,
			   log->count, mc->count);
		return;
	}
	for (k = 0; k < log->count; k++) {
		e = &log->entries[k];
		snprintf(where, sizeof(where), "iteration %u, completion %zu of %zu",
			 iter, k + 1, log->count);
		want = FI_RECV | FI_MSG | (k + 1 == log->count ? FI_MULTI_RECV : 0);
		if (e->flags != want) {
			char got[96], exp[96];

			flags_str(e->flags, got, sizeof(got));
			flags_str(want, exp, sizeof(exp));
			check_fail("%s: flags %s, expected %s (only the last one "
				   "releases the buffer)", where, got, exp);
		}
		if (e->op_context != &op->fi_ctx)
			check_fail("%s: context %p, posted with %p", where,
				   e->op_context, (const void *) &op->fi_ctx);
		i = multi_find(mc, b, e, seen);
		if (i == SIZE_MAX) {
			check_fail("%s: buf at offset %td, len %zu, error %s: no "
				   "message sent lands there", where,
				   (uint8_t *) e->buf - b->data, e->len,
				   log->errs[k] ? fi_strerror(log->errs[k]) : "none");
			continue;
		}
		seen[i] = true;
		off = multi_offset(mc, i);
		take = multi_take(mc, i);
		if (take < mc->sizes[i] && log->errs[k] != FI_ETRUNC)
			check_fail("%s: message %zu of %zu bytes, %zu of them fit: "
				   "error %s, expected FI_ETRUNC", where, i,
				   mc->sizes[i], take, log->errs[k] ?
				   fi_strerror(log->errs[k]) : "none");
		else if (take < mc->sizes[i] && log->olens[k] != mc->sizes[i] - take)
			check_fail("%s: truncated message %zu: olen %zu, expected "
				   "%zu", where, i, log->olens[k], mc->sizes[i] - take);
		else if (take == mc->sizes[i] && log->errs[k])
			check_fail("%s: error %s", where, fi_strerror(log->errs[k]));
		if (first_mismatch(b->data + off, 0, take, PAT_MULTI, mc->sizes[i],
				   multi_iter(i, iter)) < take)
			check_fail("%s: message %zu (%zu bytes at offset %zu) differs "
				   "from what was sent", where, i, take, off);
	}
}

static void multi_receive(struct session *s, const struct multi_case *mc,
			  struct buf *b, struct buf *next, uint32_t iter,
			  bool unexpected)
{
	struct multi_log log = { 0 };
	struct op ops[2];	/* [0] the multi-receive buffer, [1] the next */
	char where[64];

	memset(b->data, 0x5a, b->cap);
	poison_for(next->data, MULTI_NEXT_LEN, PAT_MULTI, MULTI_NEXT_LEN,
		   multi_iter(mc->count, iter));
	op_init(&ops[0], OP_MRECV, b->data, b->cap);
	ops[0].multi = &log;
	op_init(&ops[1], OP_RECV, next->data, MULTI_NEXT_LEN);
	if (unexpected) {
		oob_wait_signal(s, SIG_SENT, "send to the multi-receive buffer");
		drain(s, ORDER_SETTLE_MS);
	}
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	if (!unexpected)
		oob_signal(s, SIG_POSTED);
	wait_ops(s, ops, 2, "a multi-receive buffer and the receive after it");

	snprintf(where, sizeof(where), "iteration %u, the buffer", iter);
	expect_guards(b, where);
	multi_check_log(mc, &ops[0], b, iter);
	snprintf(where, sizeof(where), "iteration %u, the receive after it", iter);
	if (expect_received(&ops[1], FI_RECV | FI_MSG, MULTI_NEXT_LEN, where))
		expect_payload(next, MULTI_NEXT_LEN, PAT_MULTI, MULTI_NEXT_LEN,
			       multi_iter(mc->count, iter), where);
	else
		expect_guards(next, where);
}

static void test_multi_recv(struct session *s, const struct multi_case *mc,
			    enum direction dir, bool unexpected)
{
	struct buf b, next;
	uint32_t iter;

	buf_alloc(&b, multi_cap(mc));
	buf_alloc(&next, MULTI_NEXT_LEN);
	check_begin("%zu %s messages into one %zu-byte FI_MULTI_RECV buffer "
		    "(%s), one completion each, the last with FI_MULTI_RECV, then "
		    "an ordinary receive, %s", mc->count, mc->name, multi_cap(mc),
		    unexpected ? "posted after they arrived" : "posted first",
		    dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			multi_send(s, mc, iter, unexpected);
		else
			multi_receive(s, mc, &b, &next, iter, unexpected);
	}
	check_end();
	buf_free(&b);
	buf_free(&next);
}

static size_t multi_case_max(const struct multi_case *mc)
{
	size_t i, max = MULTI_NEXT_LEN;

	for (i = 0; i < mc->count; i++)
		max = mc->sizes[i] > max ? mc->sizes[i] : max;
	return max;
}

static void run_multi_recv(struct session *s)
{
	size_t min = MULTI_MIN, i;
	int dir, unexpected, ret;

	if (!(s->info->caps & FI_MULTI_RECV) &&
	    !(s->info->rx_attr->caps & FI_MULTI_RECV)) {
		note_skip("FI_MULTI_RECV", "the provider does not offer it");
		return;
	}
	ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min,
			sizeof(min));
	check_opt_ret(ret, 0, "fi_setopt FI_OPT_MIN_MULTI_RECV 256 for the "
		      "multi-receive tests");
	for (i = 0; i < ARRAY_SIZE(multi_cases); i++) {
		if (multi_case_max(&multi_cases[i]) > s->opt.max_size)
			continue;
		for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++)
			for (unexpected = 0; unexpected <= 1; unexpected++)
				test_multi_recv(s, &multi_cases[i], dir, unexpected);
	}
	end_test(s, "multi-receive", SYNC_MULTI);
}

/* ------------------------------------------------------------------- driver */

static size_t size_count(const struct session *s)
{
	size_t n = 0;

	while (n < ARRAY_SIZE(test_sizes) && test_sizes[n] <= s->opt.max_size)
		n++;
	return n;
}

static void run_ping_pong(struct session *s)
{
	size_t i;

	for (i = 0; i < size_count(s); i++)
		test_ping_pong(s, test_sizes[i]);
	end_test(s, "ping-pong", SYNC_PING_PONG);
}

static void run_tagged(struct session *s)
{
	size_t i;
	int dir;

	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++)
		for (i = 0; i < size_count(s); i++)
			test_tagged(s, test_sizes[i], dir);
	end_test(s, "tagged", SYNC_TAGGED);
}

static void run_cq_data(struct session *s)
{
	char why[96];
	size_t i;
	int dir;

	if (s->info->domain_attr->cq_data_size < 4) {
		snprintf(why, sizeof(why), "the provider carries %zu bytes of CQ "
			 "data, the test needs 4", s->info->domain_attr->cq_data_size);
		note_skip("fi_senddata/fi_tsenddata with remote CQ data", why);
		return;
	}
	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++)
		for (i = 0; i < size_count(s); i++)
			test_cq_data(s, test_sizes[i], dir);
	end_test(s, "remote CQ data", SYNC_CQ_DATA);
}

static void run_inject(struct session *s)
{
	size_t limit = s->info->tx_attr->inject_size, i, skipped = 0;
	char why[96];
	int dir;

	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++) {
		for (i = 0; i < size_count(s); i++) {
			if (test_sizes[i] <= limit)
				test_inject(s, test_sizes[i], dir);
			else if (dir == CLIENT_TO_SERVER)
				skipped++;
		}
	}
	if (skipped) {
		snprintf(why, sizeof(why), "%zu sizes above inject_size %zu", skipped,
			 limit);
		note_skip("fi_inject of larger messages", why);
	}
	end_test(s, "inject", SYNC_INJECT);
}

static void run_ordering(struct session *s)
{
	size_t i;
	int dir;

	check_once((s->info->tx_attr->msg_order & FI_ORDER_SAS) &&
		   (s->info->rx_attr->msg_order & FI_ORDER_SAS),
		   "the provider promises FI_ORDER_SAS (send after send)",
		   "msg_order lacks it; the ordering test runs anyway");
	if (size_count(s) && !test_sizes[0])
		note_skip("payload order of 0-byte fi_send bursts",
			  "no payload to number; the fi_tsend burst checks their "
			  "order by tag");
	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++) {
		for (i = 0; i < size_count(s); i++) {
			test_ordering(s, test_sizes[i], dir, false);
			test_ordering(s, test_sizes[i], dir, true);
		}
	}
	end_test(s, "ordering", SYNC_ORDER);
}

static void run_truncation(struct session *s)
{
	size_t i;
	int dir;

	for (i = 0; i < ARRAY_SIZE(trunc_cases); i++) {
		if (trunc_cases[i].sent > s->opt.max_size)
			continue;
		s->trunc = trunc_cases[i];
		for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++) {
			test_truncation(s, dir, false);
			test_truncation(s, dir, true);
		}
	}
	end_test(s, "truncation", SYNC_TRUNC);
}

/* ------------------------------------------------------------------- setup */

/* Without memory registration, a provider that needs local MRs is no use. */
static bool info_usable(const struct fi_info *info)
{
	return !(info->domain_attr->mr_mode & FI_MR_LOCAL) &&
	       !(info->mode & MRAIL_MODE_LOCAL_MR);
}

/*
 * A core provider offers one info per interface; the one carrying the
 * control connection is known to reach the peer. Providers with addresses
 * of their own format (mrail) are taken as they come.
 */
static bool info_on_local_ip(const struct fi_info *info,
			     const struct sockaddr_storage *local)
{
	const struct sockaddr *sa = info->src_addr;

	if (!sa || info->src_addrlen < sizeof(struct sockaddr_in) ||
	    sa->sa_family != local->ss_family)
		return false;
	if (info->addr_format != FI_SOCKADDR && info->addr_format != FI_SOCKADDR_IN &&
	    info->addr_format != FI_SOCKADDR_IN6)
		return false;
	if (sa->sa_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *) sa)->sin_addr,
			       &((const struct sockaddr_in *) local)->sin_addr,
			       sizeof(struct in_addr));
	if (sa->sa_family == AF_INET6 &&
	    info->src_addrlen >= sizeof(struct sockaddr_in6))
		return !memcmp(&((const struct sockaddr_in6 *) sa)->sin6_addr,
			       &((const struct sockaddr_in6 *) local)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

static struct fi_info *choose_info(struct session *s)
{
	struct fi_info *info, *first = NULL;

	for (info = s->info_list; info; info = info->next) {
		if (!info_usable(info)) {
			if (s->opt.verbose)
				printf("note: skipping domain %s: it needs FI_MR_LOCAL\n",
				       info->domain_attr->name);
			continue;
		}
		if (info_on_local_ip(info, &s->local_ip))
			return info;
		if (!first)
			first = info;
	}
	return first;
}

static struct fi_info *make_hints(const struct options *opt)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		fatal("fi_allocinfo: out of memory");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_MULTI_RECV;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = 0;
	/* The ordering test depends on it, so ask for it. */
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->fabric_attr->prov_name = strdup(opt->prov);
	return hints;
}

/* -N: the server binds to the service the client resolves with its node. */
static void by_node_service(const struct options *opt, char *service, size_t len)
{
	snprintf(service, len, "%u", opt->port + 1);
}

static int get_info(struct session *s)
{
	struct fi_info *hints = make_hints(&s->opt);
	const char *node = NULL, *service = NULL;
	char detail[200], port[16];
	uint64_t flags = 0;
	int ret;

	if (s->opt.by_node) {
		by_node_service(&s->opt, port, sizeof(port));
		service = port;
		if (s->is_server) {
			flags = FI_SOURCE;
			/* learn_peer_from_source: the client's address comes
			 * with its first message. */
			hints->caps |= FI_SOURCE | FI_SOURCE_ERR;
		} else {
			node = s->opt.server;
		}
	}
	ret = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints, &s->info_list);
	fi_freeinfo(hints);
	snprintf(detail, sizeof(detail), "%s", ret ? fi_strerror(-ret) : "");
	check_once(ret == 0, !s->opt.by_node ?
		   "fi_getinfo: FI_EP_RDM with FI_MSG|FI_TAGGED" : s->is_server ?
		   "fi_getinfo(NULL, service, FI_SOURCE): FI_EP_RDM bound to the "
		   "service" : "fi_getinfo(node, service): FI_EP_RDM with the "
		   "server as dest_addr", detail);
	if (ret)
		return ret;
	s->info = choose_info(s);
	check_once(s->info != NULL, "an info that needs no memory registration",
		   "every info the provider offers needs FI_MR_LOCAL");
	if (!s->info)
		return -FI_ENODATA;
	if (s->opt.by_node && !s->is_server)
		check_once(s->info->dest_addr && s->info->dest_addrlen,
			   "fi_getinfo(node, service) fills dest_addr", NULL);
	if (s->opt.verbose)
		printf("note: provider %s, fabric %s, domain %s, inject_size %zu, "
		       "cq_data_size %zu\n", s->info->fabric_attr->prov_name,
		       s->info->fabric_attr->name, s->info->domain_attr->name,
		       s->info->tx_attr->inject_size,
		       s->info->domain_attr->cq_data_size);
	return 0;
}

static int setup_step(int ret, const char *what)
{
	check_once(ret == 0, what, ret ? fi_strerror(-ret) : NULL);
	return ret;
}

static int open_endpoint(struct session *s)
{
	struct fi_cq_attr cq_attr = {
		.size = CQ_SIZE,
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = FI_WAIT_NONE,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = 2 };
	int ret;

	ret = setup_step(fi_fabric(s->info->fabric_attr, &s->fabric, NULL), "fi_fabric");
	if (!ret)
		ret = setup_step(fi_domain(s->fabric, s->info, &s->domain, NULL),
				 "fi_domain");
	if (!ret)
		ret = setup_step(fi_av_open(s->domain, &av_attr, &s->av, NULL),
				 "fi_av_open (table)");
	if (!ret)
		ret = setup_step(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL),
				 "fi_cq_open (tagged format)");
	if (!ret)
		ret = setup_step(fi_endpoint(s->domain, s->info, &s->ep, NULL),
				 "fi_endpoint");
	if (!ret)
		ret = setup_step(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV),
				 "bind the CQ for transmit and receive");
	if (!ret)
		ret = setup_step(fi_ep_bind(s->ep, &s->av->fid, 0), "bind the AV");
	if (!ret)
		ret = setup_step(fi_enable(s->ep), "fi_enable");
	return ret;
}

/* The AV entry of fi_addr, for comparing two entries byte for byte. */
static size_t av_entry(struct fid_av *av, fi_addr_t fi_addr, uint8_t *buf,
		       size_t cap)
{
	size_t len = cap;

	if (fi_addr == FI_ADDR_NOTAVAIL || fi_av_lookup(av, fi_addr, buf, &len) ||
	    len > cap)
		return 0;
	return len;
}

/*
 * -N -A: fi_av_insertsym over two nodes and two services must give the
 * entries four fi_av_insertsvc calls give, in fi_av(3)'s order (every
 * service of a node before the next node). In an AV of its own, so the
 * session's AV holds the server once.
 */
static void check_insertsym(struct session *s, const char *service)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .count = 8 };
	fi_addr_t sym[4], svc[4];
	uint8_t a[MAX_NAME_LEN], b[MAX_NAME_LEN];
	char nodes[2][INET_ADDRSTRLEN], services[2][16], detail[160];
	struct in_addr ip;
	struct fid_av *av;
	size_t k, la, lb;
	int ret;

	if (inet_pton(AF_INET, s->opt.server, &ip) != 1) {
		note_skip("fi_av_insertsym over 2 nodes", "the server address is "
			  "not numeric IPv4");
		return;
	}
	snprintf(nodes[0], sizeof(nodes[0]), "%s", s->opt.server);
	ip.s_addr = htonl(ntohl(ip.s_addr) + 1);
	inet_ntop(AF_INET, &ip, nodes[1], sizeof(nodes[1]));
	snprintf(services[0], sizeof(services[0]), "%s", service);
	snprintf(services[1], sizeof(services[1]), "%u", s->opt.port + 2);
	if (fi_av_open(s->domain, &attr, &av, NULL)) {
		check_once(false, "fi_av_open for the fi_av_insertsym check", NULL);
		return;
	}
	ret = fi_av_insertsym(av, nodes[0], 2, services[0], 2, sym, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d", ret);
	check_once(ret == 4, "fi_av_insertsym(2 nodes, 2 services) inserts 4",
		   detail);
	for (k = 0; k < 4; k++) {
		ret = fi_av_insertsvc(av, nodes[k / 2], services[k % 2], &svc[k], 0,
				      NULL);
		la = ret == 1 ? av_entry(av, sym[k], a, sizeof(a)) : 0;
		lb = ret == 1 ? av_entry(av, svc[k], b, sizeof(b)) : 0;
		snprintf(detail, sizeof(detail), "%s:%s: insertsvc returned %d, "
			 "entries of %zu and %zu bytes", nodes[k / 2],
			 services[k % 2], ret, la, lb);
		check_once(la && la == lb && !memcmp(a, b, la),
			   "fi_av_insertsym's entry equals fi_av_insertsvc's, in "
			   "order", detail);
	}
	/* Every service of a node before the next node: 0 and 1 differ. */
	la = av_entry(av, sym[0], a, sizeof(a));
	lb = av_entry(av, sym[1], b, sizeof(b));
	check_once(la && lb && (la != lb || memcmp(a, b, la)),
		   "fi_av_insertsym's first two entries differ (two services)",
		   NULL);
	ret = fi_av_insertsym(av, "not-numbered", 2, services[0], 1, sym, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d", ret);
	check_once(ret == -FI_EINVAL, "fi_av_insertsym refuses 2 nodes from a "
		   "name without a numeric suffix", detail);
	fi_close(&av->fid);
}

/*
 * -N, client: the only address of the server it has is dest_addr from
 * fi_getinfo(node, service), or with -A what fi_av_insertsvc makes of the
 * same node and service. Its first message makes the provider introduce us
 * (mrail: HELLO over its first rail).
 */
static int insert_dest_addr(struct session *s)
{
	char detail[64], service[16];
	uint8_t first = 0x42;
	struct op op;
	int ret;

	if (s->opt.by_svc) {
		by_node_service(&s->opt, service, sizeof(service));
		check_insertsym(s, service);
		ret = fi_av_insertsvc(s->av, s->opt.server, service, &s->peer, 0,
				      NULL);
		snprintf(detail, sizeof(detail), "returned %d", ret);
		check_once(ret == 1, "fi_av_insertsvc(server, PORT + 1)", detail);
	} else {
		if (!s->info->dest_addr)
			return -FI_EINVAL;
		ret = fi_av_insert(s->av, s->info->dest_addr, 1, &s->peer, 0, NULL);
		snprintf(detail, sizeof(detail), "returned %d", ret);
		check_once(ret == 1, "fi_av_insert of dest_addr from "
			   "fi_getinfo(node, service)", detail);
	}
	if (ret != 1)
		return -FI_EINVAL;
	op_init(&op, OP_SEND, &first, 1);
	post_op(s, &op);
	wait_ops(s, &op, 1, "the first message to the server");
	check_begin("the first message to a peer known by dest_addr alone");
	expect_completed(&op, FI_SEND | FI_MSG, "first message");
	check_end();
	return op.completions == 1 && !op.err ? 0 : -FI_EIO;
}

/*
 * -N, server: no address from the client at all. Its first message comes
 * from a sender the AV does not hold, so with FI_SOURCE_ERR it completes as
 * an FI_EADDRNOTAVAIL error whose err_data is the client's address
 * (fi_cq(3)); inserting that address is how the client is reached from
 * then on, and it must be the AV's first fi_addr_t (FI_AV_TABLE counts the
 * application's inserts, whatever mrail learned by itself before).
 */
static int learn_peer_from_source(struct session *s)
{
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_tagged_entry comp;
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	uint8_t first = 0, name[MAX_NAME_LEN], raw[MAX_NAME_LEN];
	struct fi_context ctx;
	size_t name_len = sizeof(name);
	char text[512], detail[200];
	size_t text_len = sizeof(text);
	fi_addr_t src = FI_ADDR_UNSPEC;
	ssize_t n;
	int ret;

	do {
		ret = (int) fi_recv(s->ep, &first, 1, NULL, FI_ADDR_UNSPEC, &ctx);
	} while (ret == -FI_EAGAIN && now_ms() < deadline);
	if (ret)
		fatal("fi_recv of the client's first message: %s", fi_strerror(-ret));
	while ((n = fi_cq_readfrom(s->cq, &comp, 1, &src)) == -FI_EAGAIN) {
		if (now_ms() > deadline)
			fatal("no first message from the client within %d s",
			      WAIT_LIMIT_MS / 1000);
	}
	if (n == -FI_EAVAIL) {
		err.err_data = raw;
		err.err_data_size = sizeof(raw);
		n = fi_cq_readerr(s->cq, &err, 0);
	}
	snprintf(detail, sizeof(detail), "fi_cq_readfrom gave %s, err %d (%s), "
		 "flags %#llx, len %zu, byte %#x, %zu bytes of address",
		 n == 1 ? "an error entry" : "no error entry", err.err,
		 fi_strerror(err.err), (unsigned long long) err.flags, err.len,
		 first, err.err_data_size);
	check_once(n == 1 && err.err == FI_EADDRNOTAVAIL &&
		   err.op_context == &ctx && err.flags == (FI_RECV | FI_MSG) &&
		   err.len == 1 && first == 0x42 && err.err_data_size > 0,
		   "the client's first message, from a sender not in the AV: "
		   "FI_EADDRNOTAVAIL with its address (FI_SOURCE_ERR)", detail);
	if (n != 1 || err.err != FI_EADDRNOTAVAIL || !err.err_data_size)
		return -FI_EINVAL;
	ret = fi_av_insert(s->av, raw, 1, &src, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d, fi_addr %llu", ret,
		 (unsigned long long) src);
	check_once(ret == 1 && src == 0, "fi_av_insert of that address gives the "
		   "AV's first fi_addr_t, 0", detail);
	if (ret != 1)
		return -FI_EINVAL;
	s->peer = src;
	ret = fi_av_lookup(s->av, src, name, &name_len);
	snprintf(detail, sizeof(detail), "returned %d, %zu bytes", ret, name_len);
	check_once(!ret && name_len == err.err_data_size &&
		   !memcmp(name, raw, name_len),
		   "fi_av_lookup of the client gives the address FI_SOURCE_ERR did",
		   detail);
	if (s->opt.verbose && !ret) {
		fi_av_straddr(s->av, name, text, &text_len);
		printf("note: learned the client as %s\n", text);
	}
	return 0;
}

static int insert_peer(struct session *s)
{
	uint8_t ours[MAX_NAME_LEN], theirs[MAX_NAME_LEN];
	size_t our_len = sizeof(ours), their_len;
	char detail[64];
	int ret;

	if (s->opt.by_node)
		return s->is_server ? learn_peer_from_source(s) : insert_dest_addr(s);

	ret = setup_step(fi_getname(&s->ep->fid, ours, &our_len), "fi_getname");
	if (ret)
		return ret;
	oob_exchange_names(s, ours, our_len, theirs, &their_len);
	if (s->is_server) {
		memcpy(s->late_name, theirs, their_len);
		s->late_len = their_len;
		return 0;
	}
	ret = fi_av_insert(s->av, theirs, 1, &s->peer, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d", ret);
	check_once(ret == 1, "fi_av_insert of the peer's address", detail);
	return ret == 1 ? 0 : -FI_EINVAL;
}

/*
 * libfabric lets a peer send as soon as it has inserted us, before we insert
 * it (Open MPI's add_procs can be that lazy). The client inserts the server
 * and sends a burst of eager and rendezvous messages; the server progresses
 * for a while without the client in its AV, where nothing may complete (no
 * error either), then inserts it and must receive every message, in send
 * order, byte for byte.
 */
static void run_late_insert(struct session *s)
{
	size_t sizes[LATE_BURST];
	struct op ops[LATE_BURST];
	struct buf bufs[LATE_BURST];
	char detail[64];
	unsigned k;
	int ret;

	for (k = 0; k < LATE_BURST; k++)
		sizes[k] = (k % 2 && LATE_RDV_SIZE <= s->opt.max_size) ?
			   LATE_RDV_SIZE : LATE_EAGER_SIZE;
	bufs_alloc(bufs, LATE_BURST, LATE_RDV_SIZE);
	if (!s->is_server) {
		check_begin("%d sends (eager and rendezvous) to a peer that has "
			    "not inserted us yet", LATE_BURST);
		for (k = 0; k < LATE_BURST; k++) {
			order_fill(bufs[k].data, sizes[k], 0, k);
			op_init(&ops[k], OP_TSEND, bufs[k].data, sizes[k]);
			ops[k].tag = TAG_ORDER | k;
			post_op(s, &ops[k]);
		}
		oob_signal(s, SIG_SENT);
		wait_ops(s, ops, LATE_BURST, "sends to a peer that had not "
			 "inserted us yet");
		for (k = 0; k < LATE_BURST; k++)
			expect_completed(&ops[k], FI_SEND | FI_TAGGED, "late insert");
	} else {
		oob_wait_signal(s, SIG_SENT, "send its burst");
		/* Whatever arrives now comes from a sender not in the AV; a
		 * completion of any kind would be counted as stray. */
		drain(s, LATE_WAIT_MS);
		ret = fi_av_insert(s->av, s->late_name, 1, &s->peer, 0, NULL);
		snprintf(detail, sizeof(detail), "returned %d", ret);
		check_once(ret == 1, "fi_av_insert of the client after its first "
			   "messages arrived", detail);
		check_begin("%d messages (eager and rendezvous) sent before we "
			    "inserted their sender, received in send order",
			    LATE_BURST);
		for (k = 0; ret == 1 && k < LATE_BURST; k++) {
			order_poison(bufs[k].data, sizes[k], 0, k);
			op_init(&ops[k], OP_TRECV, bufs[k].data, sizes[k]);
			ops[k].tag = TAG_ORDER;
			ops[k].ignore = TAG_ORDER_IGNORE;
			post_op(s, &ops[k]);
		}
		if (ret == 1) {
			wait_ops(s, ops, LATE_BURST, "messages sent before we "
				 "inserted their sender");
			for (k = 0; k < LATE_BURST; k++)
				order_check_one(&ops[k], &bufs[k], sizes[k], 0, k,
						true);
		} else {
			check_fail("not inserted");
		}
	}
	check_end();
	bufs_free(bufs, LATE_BURST);
	end_test(s, "late insert", SYNC_LATE);
}

/*
 * -N: fi_rdm_tagged_peek's pattern. Right after the first contact (over the
 * provider's first rail only) the client posts a few sends back to back and
 * takes -FI_EAGAIN as a failure, as that fabtest does. mrail round-robins
 * them onto rails whose connection ofi_rxm has not set up yet, which push
 * back while it connects: a send must then go on a rail that takes it.
 * The server receives them in send order, byte for byte.
 */
static void run_first_burst(struct session *s)
{
	struct op ops[FIRST_BURST];
	struct buf bufs[FIRST_BURST];
	char detail[96];
	unsigned k, refused = 0;
	ssize_t ret;

	bufs_alloc(bufs, FIRST_BURST, LATE_EAGER_SIZE);
	if (!s->is_server) {
		check_begin("%d sends right after the first contact, none refused "
			    "(a rail still connecting is no reason)", FIRST_BURST);
		for (k = 0; k < FIRST_BURST; k++) {
			order_fill(bufs[k].data, LATE_EAGER_SIZE, 0, k);
			op_init(&ops[k], OP_TSEND, bufs[k].data, LATE_EAGER_SIZE);
			ops[k].tag = TAG_ORDER | k;
			ret = post_once(s, &ops[k]);
			if (ret == -FI_EAGAIN) {
				refused++;
				post_op(s, &ops[k]);
				continue;
			}
			if (ret)
				fatal("fi_tsend right after the first contact: %s",
				      fi_strerror((int) -ret));
			pending_add(s, &ops[k]);
		}
		snprintf(detail, sizeof(detail), "%u of %d refused with -FI_EAGAIN",
			 refused, FIRST_BURST);
		if (refused && prov_is_mrail(s))
			check_fail("%s", detail);
		else if (refused)
			note_skip("sends without -FI_EAGAIN after the first contact",
				  detail);
		oob_signal(s, SIG_SENT);
		wait_ops(s, ops, FIRST_BURST, "sends right after the first contact");
		for (k = 0; k < FIRST_BURST; k++)
			expect_completed(&ops[k], FI_SEND | FI_TAGGED, "first burst");
	} else {
		check_begin("%d messages sent right after the first contact, in "
			    "send order", FIRST_BURST);
		oob_wait_signal(s, SIG_SENT, "send its first burst");
		for (k = 0; k < FIRST_BURST; k++) {
			order_poison(bufs[k].data, LATE_EAGER_SIZE, 0, k);
			op_init(&ops[k], OP_TRECV, bufs[k].data, LATE_EAGER_SIZE);
			ops[k].tag = TAG_ORDER;
			ops[k].ignore = TAG_ORDER_IGNORE;
			post_op(s, &ops[k]);
		}
		wait_ops(s, ops, FIRST_BURST, "the first burst");
		for (k = 0; k < FIRST_BURST; k++)
			order_check_one(&ops[k], &bufs[k], LATE_EAGER_SIZE, 0, k, true);
	}
	check_end();
	bufs_free(bufs, FIRST_BURST);
	end_test(s, "first burst", SYNC_FIRST_BURST);
}

/* The size of message k of the alias burst: eager, just past the eager
 * limit, and large (rendezvous in mrail), as far as -S allows. */
static size_t alias_size(const struct session *s, unsigned k)
{
	static const size_t sizes[] = { LATE_EAGER_SIZE, 16337, LATE_RDV_SIZE };
	size_t size = sizes[k % ARRAY_SIZE(sizes)];

	return size <= s->opt.max_size ? size : LATE_EAGER_SIZE;
}

/* One direction of the alias burst: the sender alternates between the
 * peer's two entries and between plain and FI_DELIVERY_COMPLETE sends. */
static void alias_burst(struct session *s, fi_addr_t alias, enum direction dir)
{
	struct op ops[ALIAS_BURST];
	struct buf bufs[ALIAS_BURST];
	char where[64];
	unsigned k;

	bufs_alloc(bufs, ALIAS_BURST, LATE_RDV_SIZE);
	check_begin("%d sends to a peer's two AV entries, in turn, plain and "
		    "FI_DELIVERY_COMPLETE, %s", ALIAS_BURST, dir_name(s, dir));
	if (is_sender(s, dir)) {
		oob_wait_signal(s, SIG_POSTED, "post its receives");
		for (k = 0; k < ALIAS_BURST; k++) {
			order_fill(bufs[k].data, alias_size(s, k), 0, k);
			op_init(&ops[k], OP_TSEND, bufs[k].data, alias_size(s, k));
			ops[k].tag = TAG_ORDER | k;
			ops[k].has_dest = true;
			ops[k].dest = k % 2 ? alias : s->peer;
			ops[k].delivery_complete = (k / 2) % 2;
			post_op(s, &ops[k]);
		}
		wait_ops(s, ops, ALIAS_BURST, "sends to a peer's two entries");
		for (k = 0; k < ALIAS_BURST; k++) {
			snprintf(where, sizeof(where), "send %u (to entry %s%s)", k,
				 k % 2 ? "2" : "1",
				 ops[k].delivery_complete ?
				 ", FI_DELIVERY_COMPLETE" : "");
			expect_completed(&ops[k], FI_SEND | FI_TAGGED, where);
		}
	} else {
		for (k = 0; k < ALIAS_BURST; k++) {
			order_poison(bufs[k].data, alias_size(s, k), 0, k);
			op_init(&ops[k], OP_TRECV, bufs[k].data, alias_size(s, k));
			ops[k].tag = TAG_ORDER;
			ops[k].ignore = TAG_ORDER_IGNORE;
			post_op(s, &ops[k]);
		}
		oob_signal(s, SIG_POSTED);
		wait_ops(s, ops, ALIAS_BURST, "messages sent to our two entries");
		for (k = 0; k < ALIAS_BURST; k++)
			order_check_one(&ops[k], &bufs[k], alias_size(s, k), 0, k,
					true);
	}
	check_end();
	bufs_free(bufs, ALIAS_BURST);
}

/*
 * The same peer inserted twice (fi_av(3) allows it; fabtests inserts the
 * address of a peer the provider already knows from its first message, and
 * with -N the first entry is mrail's partial one, or the one it learnt).
 * Both entries must reach the same peer as one: one send order, every send
 * completing once, FI_DELIVERY_COMPLETE and rendezvous included. Then the
 * first entry is removed and the second carries a ping-pong alone (mrail:
 * the removed one is refused).
 */
static void run_alias(struct session *s)
{
	uint8_t ours[MAX_NAME_LEN], theirs[MAX_NAME_LEN], dummy = 0;
	size_t our_len = sizeof(ours), their_len;
	fi_addr_t alias = FI_ADDR_NOTAVAIL, first = s->peer;
	char detail[96];
	ssize_t ret;

	if (fi_getname(&s->ep->fid, ours, &our_len))
		fatal("fi_getname for the alias test");
	oob_exchange_names(s, ours, our_len, theirs, &their_len);
	ret = fi_av_insert(s->av, theirs, 1, &alias, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %zd, fi_addr %llu and %llu", ret,
		 (unsigned long long) first, (unsigned long long) alias);
	/* fi_av(3) leaves duplicates to the provider: ofi_rxm hands back the
	 * same entry (counting its uses), mrail a second one. */
	check_once(ret == 1 && (alias != first || !prov_is_mrail(s)),
		   "fi_av_insert of a peer already in the AV gives an entry "
		   "(mrail: a second one)", detail);
	if (ret != 1) {
		end_test(s, "alias", SYNC_ALIAS);
		end_test(s, "alias removed", SYNC_ALIAS_REMOVED);
		return;
	}
	alias_burst(s, alias, CLIENT_TO_SERVER);
	alias_burst(s, alias, SERVER_TO_CLIENT);
	end_test(s, "alias", SYNC_ALIAS);

	ret = fi_av_remove(s->av, &first, 1, 0);
	snprintf(detail, sizeof(detail), "returned %zd", ret);
	check_once(!ret, "fi_av_remove of the peer's first entry", detail);
	s->peer = alias;
	if (prov_is_mrail(s)) {
		ret = fi_tsend(s->ep, &dummy, 1, NULL, first, TAG_ORDER, NULL);
		snprintf(detail, sizeof(detail), "returned %zd", ret);
		check_once(ret == -FI_EINVAL, "a send to the removed entry is "
			   "refused", detail);
	}
	/* The peer's state (its sequence stream, its waits) lives on. */
	test_ping_pong(s, alias_size(s, 2));
	test_ping_pong(s, LATE_EAGER_SIZE);
	end_test(s, "alias removed", SYNC_ALIAS_REMOVED);
}

static void close_fid(struct fid *fid, const char *what)
{
	int ret;

	if (!fid)
		return;
	ret = fi_close(fid);
	if (ret)
		check_once(false, what, fi_strerror(-ret));
}

static void close_all(struct session *s)
{
	close_fid(s->ep ? &s->ep->fid : NULL, "close the endpoint");
	close_fid(s->av ? &s->av->fid : NULL, "close the AV");
	close_fid(s->cq ? &s->cq->fid : NULL, "close the CQ");
	close_fid(s->domain ? &s->domain->fid : NULL, "close the domain");
	close_fid(s->fabric ? &s->fabric->fid : NULL, "close the fabric");
	fi_freeinfo(s->info_list);
	if (s->sock >= 0)
		close(s->sock);
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-p PROVIDER] [-E PORT] [-S MAXSIZE] [-I ITERS] "
		"[-N [-A]] [-v] [SERVER_ADDR]\n"
		"  -p  provider (default %s), e.g. \"tcp;ofi_rxm\"\n"
		"  -E  TCP port of the control connection (default %d)\n"
		"  -S  largest message size tested (default %zu)\n"
		"  -I  iterations per size (default %d)\n"
		"  -N  no address exchange: the client reaches the server with\n"
		"      fi_getinfo(SERVER_ADDR, PORT + 1) alone, the server binds\n"
		"      to PORT + 1 with FI_SOURCE and learns the client's address\n"
		"      from its first message (FI_SOURCE_ERR)\n"
		"  -A  with -N: the client inserts the server with fi_av_insertsvc\n"
		"      (and checks fi_av_insertsym) instead of fi_getinfo's dest_addr\n"
		"  -v  print every check\n"
		"The server runs without SERVER_ADDR, the client with it.\n",
		prog, DEFAULT_PROV, DEFAULT_PORT,
		test_sizes[ARRAY_SIZE(test_sizes) - 1], DEFAULT_ITERS);
}

static bool parse_uint(const char *text, unsigned long long max,
		       unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(text, &end, 10);
	return !errno && end != text && !*end && *text != '-' && *out <= max;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	unsigned long long v;
	int c;

	*opt = (struct options) {
		.prov = DEFAULT_PROV,
		.port = DEFAULT_PORT,
		.max_size = test_sizes[ARRAY_SIZE(test_sizes) - 1],
		.iters = DEFAULT_ITERS,
	};
	while ((c = getopt(argc, argv, "p:E:S:I:NAvh")) != -1) {
		switch (c) {
		case 'p':
			opt->prov = optarg;
			break;
		case 'E':
			/* -N uses the next port too. */
			if (!parse_uint(optarg, 65534, &v) || !v)
				goto bad;
			opt->port = (unsigned) v;
			break;
		case 'S':
			if (!parse_uint(optarg, SIZE_MAX, &v))
				goto bad;
			opt->max_size = (size_t) v;
			break;
		case 'I':
			if (!parse_uint(optarg, 1000000, &v) || !v)
				goto bad;
			opt->iters = (unsigned) v;
			break;
		case 'v':
			opt->verbose = true;
			break;
		case 'N':
			opt->by_node = true;
			break;
		case 'A':
			opt->by_svc = true;
			break;
		default:
			usage(argv[0]);
			return c == 'h' ? 1 : 2;
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr, "fi_mrail_msg: one server address at most\n");
		usage(argv[0]);
		return 2;
	}
	if (opt->by_svc && !opt->by_node) {
		fprintf(stderr, "fi_mrail_msg: -A goes with -N\n");
		usage(argv[0]);
		return 2;
	}
	opt->server = optind < argc ? argv[optind] : NULL;
	return 0;
bad:
	fprintf(stderr, "fi_mrail_msg: bad value \"%s\" for -%c\n", optarg, c);
	usage(argv[0]);
	return 2;
}

int main(int argc, char **argv)
{
	struct session s = { .sock = -1, .peer = FI_ADDR_NOTAVAIL };
	int ret;

	ret = parse_options(argc, argv, &s.opt);
	if (ret)
		return ret == 1 ? 0 : 2;
	chk.verbose = s.opt.verbose;
	s.is_server = !s.opt.server;

	oob_open(&s);
	oob_hello(&s);
	if (get_info(&s) || open_endpoint(&s))
		goto out;
	/* -N: the client's first message needs the server's rails bound. */
	if (s.opt.by_node)
		oob_sync(&s, SYNC_BOUND, "bind its endpoint");
	if (insert_peer(&s))
		goto out;
	oob_sync(&s, SYNC_START, "open its endpoint");

	if (!s.opt.by_node)
		run_late_insert(&s);
	else
		run_first_burst(&s);
	run_ping_pong(&s);
	run_tagged(&s);
	run_cq_data(&s);
	run_inject(&s);
	run_ordering(&s);
	run_truncation(&s);
	run_options(&s);
	run_multi_recv(&s);
	run_alias(&s);
	oob_sync(&s, SYNC_END, "finish");
out:
	close_all(&s);
	print_summary();
	return chk.failed ? 1 : 0;
}
