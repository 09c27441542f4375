/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_hostile: a peer that breaks the mrail wire protocol must cost the
 * receiver one error completion per bad message, never a crash, and mrail
 * must keep delivering valid messages afterwards.
 *
 *   server (victim):   fi_mrail_hostile [-p mrail] [-E PORT] [-v]
 *   client (attacker): fi_mrail_hostile [-E PORT] [-v] SERVER_IP
 *
 * The server opens mrail. The client does not: it decodes the server's
 * mrail address, opens each rail's core provider stack itself (bound to the
 * local address on the subnet of the server's rail), gives the server an
 * mrail address made of those core endpoints, and sends raw rail messages:
 * malformed ones, then valid ones built with the wire encoder. The two meet
 * on a TCP control connection (port -E) and go through fixed phases; in each
 * the server must see exactly as many FI_EIO error completions (op_context
 * NULL) as the client says it sent malformed messages, plus the valid
 * messages, checked byte for byte, and nothing else.
 *
 * Prints "PASS: ..." or "FAIL: ..." per check, then a summary; exits 0 only
 * if every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
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

#include "addr_codec.h"
#include "wire.h"

#include "common/mrail_setup.h"

/* The receiver's eager limit: a 16 KiB rail buffer less the header. */
#define EAGER_LIMIT (16384 - MRAIL_WIRE_HDR_LEN)
#define WAIT_MS 20000
#define QUIET_MS 200
#define VALID_TAG 0x6d7261696cULL

static int verbose, checks, failures;

static void check(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s: %s", ok ? "PASS" : "FAIL", what);
	if (fmt && !ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
}

static void say(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void fatal(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\nfi_mrail_hostile: aborted after %d of %d checks passed\n",
	       checks - failures, checks);
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* The bytes of valid message number n: the receiver recomputes them. */
static void fill_pattern(uint8_t *buf, size_t len, unsigned n)
{
	uint32_t x = 0x9e3779b9u * (n + 1);
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t) x;
	}
}

/* Index of the first byte that differs from the pattern, or len. */
static size_t pattern_mismatch(const uint8_t *buf, size_t len, unsigned n)
{
	uint8_t *want = malloc(len ? len : 1);
	size_t i;

	if (!want)
		fatal("out of memory");
	fill_pattern(want, len, n);
	for (i = 0; i < len && buf[i] == want[i]; i++)
		;
	free(want);
	return i;
}

/* ------------------------------------------------------ control connection */

static int sock = -1;

static void oob_listen_accept(unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct pollfd pfd;
	int one = 1, lfd;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		fatal("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = htons((uint16_t) port);
	if (bind(lfd, (struct sockaddr *) &sin, sizeof(sin)) || listen(lfd, 1))
		fatal("cannot listen on TCP port %u: %s", port, strerror(errno));
	pfd = (struct pollfd) { .fd = lfd, .events = POLLIN };
	if (poll(&pfd, 1, WAIT_MS) != 1)
		fatal("no client on TCP port %u within %d s", port, WAIT_MS / 1000);
	sock = accept(lfd, NULL, NULL);
	if (sock < 0)
		fatal("accept: %s", strerror(errno));
	close(lfd);
}

static void oob_connect(const char *host, unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint64_t deadline = now_ms() + WAIT_MS;

	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		fatal("server address %s is not an IPv4 address", host);
	sin.sin_port = htons((uint16_t) port);
	for (;;) {
		sock = socket(AF_INET, SOCK_STREAM, 0);
		if (sock < 0)
			fatal("socket: %s", strerror(errno));
		if (!connect(sock, (struct sockaddr *) &sin, sizeof(sin)))
			return;
		close(sock);
		if (now_ms() > deadline)
			fatal("cannot connect to %s port %u: %s", host, port,
			      strerror(errno));
		usleep(100 * 1000);
	}
}

static void oob_send(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(sock, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("control connection: send: %s", strerror(errno));
		p += n;
		len -= (size_t) n;
	}
}

static void oob_recv(void *buf, size_t len, const char *what)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		if (poll(&pfd, 1, WAIT_MS) != 1)
			fatal("the peer did not %s within %d s", what, WAIT_MS / 1000);
		n = recv(sock, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("control connection closed while waiting for the "
			      "peer to %s", what);
		p += n;
		len -= (size_t) n;
	}
}

static bool oob_readable(void)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

static void oob_send_u32(uint32_t value)
{
	uint32_t wire = htonl(value);

	oob_send(&wire, sizeof(wire));
}

static uint32_t oob_recv_u32(const char *what)
{
	uint32_t wire;

	oob_recv(&wire, sizeof(wire), what);
	return ntohl(wire);
}

static void oob_send_blob(const void *buf, size_t len)
{
	oob_send_u32((uint32_t) len);
	oob_send(buf, len);
}

static size_t oob_recv_blob(void *buf, size_t cap, const char *what)
{
	uint32_t len = oob_recv_u32(what);

	if (len > cap)
		fatal("the peer sent %u bytes for %s, at most %zu expected", len,
		      what, cap);
	oob_recv(buf, len, what);
	return len;
}

/* ------------------------------------------------------------- the victim */

struct server {
	struct mrail_setup fab;	/* one CQ both ways */
	fi_addr_t peer;
};

/* A receive the server posted for a valid message. */
struct expect {
	struct fi_context2 ctx;
	const char *name;
	unsigned pattern;	/* fill_pattern number of its data */
	size_t len;
	bool tagged;
	uint8_t *buf;
	bool done;
};

/* What one phase's completions turned out to be. */
struct tally {
	unsigned eio;		/* FI_EIO, op_context NULL */
	unsigned other_err;	/* any other error completion */
	unsigned stray;		/* a success not for one of the expected receives */
};

static void server_take(struct server *s, struct expect *exp, size_t nexp,
			struct tally *t)
{
	struct fi_cq_tagged_entry ent;
	struct fi_cq_err_entry err;
	size_t i, bad;
	ssize_t ret;

	ret = fi_cq_read(s->fab.cq, &ent, 1);
	if (ret == -FI_EAGAIN)
		return;
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(s->fab.cq, &err, 0) != 1)
			fatal("fi_cq_readerr returned nothing after -FI_EAVAIL");
		if (err.err == FI_EIO && !err.op_context) {
			t->eio++;
			say("  error completion %u: %s\n", t->eio, fi_strerror(err.err));
		} else {
			t->other_err++;
			printf("    unexpected error completion: err %d (%s), "
			       "op_context %p\n", err.err, fi_strerror(err.err),
			       err.op_context);
		}
		return;
	}
	if (ret != 1)
		fatal("fi_cq_read: %s", fi_strerror((int) -ret));
	for (i = 0; i < nexp; i++) {
		if (ent.op_context != &exp[i].ctx || exp[i].done)
			continue;
		exp[i].done = true;
		check(ent.len == exp[i].len, exp[i].name, "length %zu, expected %zu",
		      ent.len, exp[i].len);
		check(exp[i].tagged ? ent.tag == VALID_TAG &&
		      (ent.flags & (FI_RECV | FI_TAGGED)) == (FI_RECV | FI_TAGGED) :
		      (ent.flags & (FI_RECV | FI_MSG | FI_TAGGED)) == (FI_RECV | FI_MSG),
		      "  its completion flags and tag", "flags 0x%" PRIx64
		      ", tag 0x%" PRIx64, ent.flags, ent.tag);
		bad = pattern_mismatch(exp[i].buf, exp[i].len, exp[i].pattern);
		check(bad == exp[i].len, "  its data, byte for byte",
		      "byte %zu of %zu differs", bad, exp[i].len);
		return;
	}
	t->stray++;
	printf("    unexpected completion: op_context %p, len %zu\n",
	       ent.op_context, ent.len);
}

static bool all_done(const struct expect *exp, size_t nexp)
{
	size_t i;

	for (i = 0; i < nexp; i++)
		if (!exp[i].done)
			return false;
	return true;
}

/* Reads completions until the phase's errors and receives are all in (or
 * the deadline), then for QUIET_MS more: anything then is one too many. */
static void server_phase(struct server *s, const char *phase, struct expect *exp,
			 size_t nexp)
{
	struct tally t = { 0 };
	uint64_t deadline, quiet_end = 0;
	unsigned announced = 0;
	bool have_count = false;
	size_t i;
	ssize_t ret;
	char what[160];

	for (i = 0; i < nexp; i++) {
		exp[i].buf = calloc(1, exp[i].len + 64);
		if (!exp[i].buf)
			fatal("out of memory");
		/* Room for 64 bytes more: a longer message must show as such. */
		if (exp[i].tagged)
			ret = fi_trecv(s->fab.ep, exp[i].buf, exp[i].len + 64, NULL,
				       s->peer, VALID_TAG, 0, &exp[i].ctx);
		else
			ret = fi_recv(s->fab.ep, exp[i].buf, exp[i].len + 64, NULL,
				      s->peer, &exp[i].ctx);
		if (ret)
			fatal("%s: posting a receive: %s", phase,
			      fi_strerror((int) -ret));
	}
	oob_send_u32(1);	/* receives posted: attack */

	/* Completions are read while the count is awaited: the rails only
	 * accept the attacker's connections when mrail is progressed. */
	deadline = now_ms() + 2 * WAIT_MS;
	for (;;) {
		server_take(s, exp, nexp, &t);
		if (!have_count && oob_readable()) {
			announced = oob_recv_u32("say how many malformed messages "
						 "it sent");
			have_count = true;
			printf("fi_mrail_hostile: %s: %u malformed messages "
			       "announced\n", phase, announced);
		}
		if (have_count && !quiet_end && t.eio >= announced &&
		    all_done(exp, nexp))
			quiet_end = now_ms() + QUIET_MS;
		if (quiet_end && now_ms() > quiet_end)
			break;
		if (now_ms() > deadline)
			break;
	}
	if (!have_count)
		fatal("%s: the client never said how many malformed messages it "
		      "sent", phase);
	snprintf(what, sizeof(what), "%s: one FI_EIO error completion (op_context "
		 "NULL) per malformed message", phase);
	check(t.eio == announced, what, "%u, expected %u", t.eio, announced);
	for (i = 0; i < nexp; i++) {
		snprintf(what, sizeof(what), "%s: %s arrived", phase, exp[i].name);
		check(exp[i].done, what, "no completion within %d s", WAIT_MS / 1000);
		free(exp[i].buf);
	}
	snprintf(what, sizeof(what), "%s: no other completion, nor one more within "
		 "%d ms", phase, QUIET_MS);
	check(!t.other_err && !t.stray, what, "%u other errors, %u stray completions",
	      t.other_err, t.stray);
}

static int run_server(const char *prov, unsigned port)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	uint8_t ours[MRAIL_ADDR_MAX_LEN], theirs[MRAIL_ADDR_MAX_LEN];
	struct server s = { 0 };
	struct fi_info *hints;
	size_t len = sizeof(ours), their_len;
	int ret;
	struct expect phase1[] = {
		{ .name = "valid EAGER at the eager limit (16336 bytes), "
			  "numbered after the malformed requests",
		  .pattern = 0, .len = EAGER_LIMIT },
	};
	struct expect phase2[] = {
		{ .name = "valid tagged EAGER, next in sequence (after the "
			  "sequence attacks)",
		  .pattern = 1, .len = 1000, .tagged = true },
		{ .name = "valid EAGER after it (on the other rail)",
		  .pattern = 2, .len = 4096 },
	};

	hints = fi_allocinfo();
	if (!hints)
		fatal("out of memory");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = 0;
	hints->fabric_attr->prov_name = strdup(prov);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s.fab.info);
	fi_freeinfo(hints);
	if (ret)
		fatal("fi_getinfo(%s): %s", prov, fi_strerror(-ret));
	if ((ret = setup_try_open(&s.fab, s.fab.info, &cq_attr, 0)) ||
	    (ret = fi_enable(s.fab.ep)) ||
	    (ret = fi_getname(&s.fab.ep->fid, ours, &len)))
		fatal("opening %s: %s", prov, fi_strerror(-ret));
	check(true, "server: mrail endpoint open", NULL);

	oob_listen_accept(port);
	oob_send_blob(ours, len);
	their_len = oob_recv_blob(theirs, sizeof(theirs), "send its address");
	ret = fi_av_insert(s.fab.av, theirs, 1, &s.peer, 0, NULL);
	check(ret == 1, "server: insert the attacker's mrail address", "returned %d",
	      ret);
	if (ret != 1)
		fatal("cannot go on without the peer in the AV");
	say("server: attacker's address is %zu bytes\n", their_len);

	server_phase(&s, "phase 1 (malformed headers and payloads)", phase1, 1);
	server_phase(&s, "phase 2 (sequence attacks)", phase2, 2);

	oob_send_u32(failures ? 0 : 1);
	check(fi_close(&s.fab.ep->fid) == 0, "server: close the endpoint", NULL);
	s.fab.ep = NULL;
	setup_close(&s.fab, NULL, 0);
	printf("fi_mrail_hostile: server: %d of %d checks passed\n",
	       checks - failures, checks);
	return failures ? 1 : 0;
}

/* ----------------------------------------------------------- the attacker */

struct rail {
	struct mrail_setup fab;	/* one CQ both ways */
	fi_addr_t server;
};

static struct rail rails[MRAIL_MAX_RAILS];
static unsigned rail_count;

/* This host's IPv4 address on the subnet of peer (the peer's own address
 * when it is local: the development case of both roles on one host). */
static int local_addr_for(const struct sockaddr_in *peer, char *out, size_t cap)
{
	struct ifaddrs *list, *ifa;
	uint32_t want = peer->sin_addr.s_addr, mask, addr;
	int found = 0;

	if (getifaddrs(&list))
		return -1;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
		    !ifa->ifa_netmask)
			continue;
		addr = ((struct sockaddr_in *) ifa->ifa_addr)->sin_addr.s_addr;
		mask = ((struct sockaddr_in *) ifa->ifa_netmask)->sin_addr.s_addr;
		if (addr == want || (!found && (addr & mask) == (want & mask))) {
			inet_ntop(AF_INET, &addr, out, (socklen_t) cap);
			found = addr == want ? 2 : 1;
			if (found == 2)
				break;
		}
	}
	freeifaddrs(list);
	return found ? 0 : -1;
}

static void open_rail(unsigned r, const struct mrail_rail_addr *srv,
		      struct mrail_rail_addr *mine)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct rail *rl = &rails[r];
	struct sockaddr_in sin;
	struct fi_info *hints;
	char local[INET_ADDRSTRLEN];
	size_t len = sizeof(mine->bytes);
	int ret;

	if (srv->format != FI_SOCKADDR_IN || srv->len != sizeof(sin))
		fatal("rail %u: the server's core address is not an IPv4 socket "
		      "address (format %u, %u bytes)", r + 1, srv->format, srv->len);
	memcpy(&sin, srv->bytes, sizeof(sin));
	if (local_addr_for(&sin, local, sizeof(local)))
		fatal("rail %u: no local IPv4 address on the subnet of %s", r + 1,
		      inet_ntoa(sin.sin_addr));

	hints = fi_allocinfo();
	if (!hints)
		fatal("out of memory");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->fabric_attr->prov_name = strdup(srv->stack);
	ret = fi_getinfo(FI_VERSION(1, 17), local, NULL, FI_SOURCE, hints, &rl->fab.info);
	fi_freeinfo(hints);
	if (ret)
		fatal("rail %u: fi_getinfo(%s at %s): %s", r + 1, srv->stack, local,
		      fi_strerror(-ret));
	if ((ret = setup_try_open(&rl->fab, rl->fab.info, &cq_attr, 0)) ||
	    (ret = fi_enable(rl->fab.ep)) ||
	    (ret = fi_getname(&rl->fab.ep->fid, mine->bytes, &len)))
		fatal("rail %u: opening %s at %s: %s", r + 1, srv->stack, local,
		      fi_strerror(-ret));
	if (fi_av_insert(rl->fab.av, srv->bytes, 1, &rl->server, 0, NULL) != 1)
		fatal("rail %u: cannot insert the server's core address", r + 1);
	strcpy(mine->stack, srv->stack);
	mine->format = rl->fab.info->addr_format;
	mine->len = (uint16_t) len;
	say("rail %u: %s bound to %s\n", r + 1, srv->stack, local);
}

/* Sends one rail message and waits for its send completion. rxm connects
 * on first use: -FI_EAGAIN until then, retried while progressing. */
static void rail_send(unsigned r, const void *buf, size_t len, const char *what)
{
	struct rail *rl = &rails[r % rail_count];
	struct fi_context2 ctx;
	struct fi_cq_entry ent;
	struct fi_cq_err_entry err;
	uint64_t deadline = now_ms() + WAIT_MS;
	ssize_t ret;

	for (;;) {
		ret = fi_send(rl->fab.ep, buf, len, NULL, rl->server, &ctx);
		if (ret != -FI_EAGAIN)
			break;
		(void) fi_cq_read(rl->fab.cq, &ent, 1);
		if (now_ms() > deadline)
			fatal("%s: fi_send kept returning -FI_EAGAIN", what);
	}
	if (ret)
		fatal("%s: fi_send: %s", what, fi_strerror((int) -ret));
	for (;;) {
		ret = fi_cq_read(rl->fab.cq, &ent, 1);
		if (ret == 1 && ent.op_context == &ctx)
			break;
		if (ret == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(rl->fab.cq, &err, 0);
			fatal("%s: send failed: %s", what, fi_strerror(err.err));
		}
		if (ret != -FI_EAGAIN && ret != 1)
			fatal("%s: fi_cq_read: %s", what, fi_strerror((int) -ret));
		if (now_ms() > deadline)
			fatal("%s: no send completion within %d s", what,
			      WAIT_MS / 1000);
	}
	say("  sent on rail %u: %s (%zu bytes)\n", r % rail_count + 1, what, len);
}

static void put_le(uint8_t *p, uint64_t value, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t) (value >> (8 * i));
}

/* The key the server knows us by: that of the address we gave it. */
static uint64_t my_key;

/* A valid header for hdr, sent by us, into buf; it is a bug here if the
 * encoder refuses. */
static void encode(const struct mrail_wire_hdr *hdr, uint8_t *buf)
{
	struct mrail_wire_hdr ours = *hdr;

	ours.sender = my_key;
	if (mrail_wire_hdr_encode(&ours, buf, MRAIL_WIRE_HDR_LEN) != MRAIL_WIRE_HDR_LEN)
		fatal("the wire encoder refused a header meant to be valid "
		      "(op %u)", hdr->op);
}

/*
 * Sends a request the server numbers (WRITE, READ_REQ, ATOMIC): one whose
 * header it can decode takes the next number of our stream, *seq, and
 * runs there once in that order, however malformed its payload (it is
 * refused then); one whose header is refused is dropped before it is
 * numbered, and takes none.
 */
static void numbered_send(unsigned r, uint8_t *buf, size_t len, uint64_t *seq,
			  const char *what)
{
	const struct mrail_wire_limits limits = {
		.max_eager = EAGER_LIMIT, .max_msg = UINT64_MAX,
		.rail_count = (uint8_t) rail_count,
	};
	struct mrail_wire_hdr hdr;
	char err[256];

	if (!mrail_wire_hdr_decode(buf, len, &limits, &hdr, err, sizeof(err)))
		mrail_wire_number(buf, len, (*seq)++);
	rail_send(r, buf, len, what);
}

/* An EAGER of len bytes of pattern n, sequence seq; tagged or not. */
static size_t build_eager(uint8_t *buf, uint64_t seq, size_t len, unsigned n,
			  bool tagged)
{
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_EAGER, .payload_len = (uint32_t) len, .seq = seq,
		.flags = tagged ? MRAIL_WIRE_F_TAGGED : 0,
		.tag = tagged ? VALID_TAG : 0,
	};

	encode(&hdr, buf);
	fill_pattern(buf + MRAIL_WIRE_HDR_LEN, len, n);
	return MRAIL_WIRE_HDR_LEN + len;
}

/* An RTS for the server's rail count with the given descriptor fields. */
static size_t build_rts(uint8_t *buf, unsigned server_rails, uint64_t total,
			uint64_t base, unsigned claimed_rails)
{
	size_t plen = MRAIL_WIRE_RTS_FIXED_LEN + 8 * (size_t) server_rails;
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_RTS, .payload_len = (uint32_t) plen, .req_id = 77,
	};
	uint8_t *p = buf + MRAIL_WIRE_HDR_LEN;

	encode(&hdr, buf);
	memset(p, 0, plen);
	put_le(p, total, 8);
	put_le(p + 8, base, 8);
	p[16] = (uint8_t) claimed_rails;
	return MRAIL_WIRE_HDR_LEN + plen;
}

/* An RMA request op with an RMA descriptor of len bytes and data bytes
 * of inline data (a WRITE with the INLINE flag, or a READ_REQ). */
static size_t build_rma(uint8_t *buf, uint8_t op, uint8_t flags, uint64_t len,
			size_t data)
{
	struct mrail_wire_hdr hdr = {
		.op = op, .flags = flags, .req_id = 78,
		.payload_len = (uint32_t) (MRAIL_WIRE_RMA_LEN + data),
	};
	uint8_t *p = buf + MRAIL_WIRE_HDR_LEN;

	encode(&hdr, buf);
	put_le(p, 1, 8);
	put_le(p + 8, 0, 8);
	put_le(p + 16, len, 8);
	fill_pattern(p + MRAIL_WIRE_RMA_LEN, data, 103);
	return MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN + data;
}

/* An ATOMIC request: descriptor (key 1, addr, count, op, datatype, kind)
 * then data bytes of operand and compare data, however many the rules say. */
static size_t build_atomic(uint8_t *buf, uint64_t addr, uint64_t count,
			   uint8_t op, uint8_t datatype, uint8_t kind, size_t data)
{
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_ATOMIC, .req_id = 79,
		.payload_len = (uint32_t) (MRAIL_WIRE_ATOMIC_LEN + data),
	};
	uint8_t *p = buf + MRAIL_WIRE_HDR_LEN;

	encode(&hdr, buf);
	memset(p, 0, MRAIL_WIRE_ATOMIC_LEN);
	put_le(p, 1, 8);
	put_le(p + 8, addr, 8);
	put_le(p + 16, count, 8);
	p[24] = op;
	p[25] = datatype;
	p[26] = kind;
	fill_pattern(p + MRAIL_WIRE_ATOMIC_LEN, data, 104);
	return MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_LEN + data;
}

static size_t build_ack(uint8_t *buf, uint64_t req_id, int32_t status)
{
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_ACK, .payload_len = MRAIL_WIRE_ACK_LEN, .req_id = req_id,
	};

	encode(&hdr, buf);
	memset(buf + MRAIL_WIRE_HDR_LEN, 0, MRAIL_WIRE_ACK_LEN);
	put_le(buf + MRAIL_WIRE_HDR_LEN, (uint32_t) status, 4);
	return MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ACK_LEN;
}

static size_t build_hello(uint8_t *buf, const uint8_t *payload, size_t len)
{
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_HELLO, .payload_len = (uint32_t) len,
	};

	encode(&hdr, buf);
	memcpy(buf + MRAIL_WIRE_HDR_LEN, payload, len);
	return MRAIL_WIRE_HDR_LEN + len;
}

static int run_client(const char *server_ip, unsigned port)
{
	uint8_t srv_blob[MRAIL_ADDR_MAX_LEN], my_blob[MRAIL_ADDR_MAX_LEN];
	struct mrail_addr srv_addr, my_addr = { 0 };
	char err[MRAIL_ERR_MAX];
	uint8_t *buf;
	size_t len, srv_len;
	ssize_t my_len;
	unsigned r, sent, ok;
	uint64_t seq = 0;

	buf = calloc(1, 16384 + 64);
	if (!buf)
		fatal("out of memory");
	oob_connect(server_ip, port);
	srv_len = oob_recv_blob(srv_blob, sizeof(srv_blob), "send its address");
	if (mrail_addr_decode(srv_blob, srv_len, &srv_addr, err, sizeof(err)))
		fatal("the server's mrail address does not decode: %s", err);
	rail_count = srv_addr.rail_count;
	my_addr.rail_count = srv_addr.rail_count;
	for (r = 0; r < rail_count; r++)
		open_rail(r, &srv_addr.rails[r], &my_addr.rails[r]);
	check(true, "client: opened the server's core stack on every rail", "%u rails",
	      rail_count);
	my_len = mrail_addr_encode(&my_addr, my_blob, sizeof(my_blob));
	if (my_len < 0)
		fatal("cannot encode an mrail address of our rails: %zd", my_len);
	oob_send_blob(my_blob, (size_t) my_len);
	my_key = mrail_addr_key(&my_addr);

	/* ---- phase 1: malformed messages, then a valid one ---- */
	oob_recv_u32("post its phase 1 receives");
	sent = 0;

	len = build_eager(buf, 0, 8, 100, false);
	buf[0] = MRAIL_WIRE_VERSION + 1;
	rail_send(sent++, buf, len, "wrong version byte");

	len = build_eager(buf, 0, 8, 100, false);
	buf[1] = 0xee;
	rail_send(sent++, buf, len, "unknown op 238");

	len = build_eager(buf, 0, 8, 100, false);
	rail_send(sent++, buf, 20, "a 20-byte message: header cut short");

	len = build_eager(buf, 0, 8, 100, false);
	fill_pattern(buf + MRAIL_WIRE_HDR_LEN, 24, 100);
	rail_send(sent++, buf, MRAIL_WIRE_HDR_LEN + 24,
		  "payload_len 8 with 24 bytes after the header");

	len = build_eager(buf, 0, 8, 100, false);
	buf[3] = 0x5a;
	rail_send(sent++, buf, len, "nonzero reserved byte");

	len = build_eager(buf, 0, 8, 100, false);
	put_le(buf + 40, 0, 8);
	rail_send(sent++, buf, len, "sender key 0");

	len = build_eager(buf, 0, 8, 100, false);
	put_le(buf + 16, 0x1234, 8);
	rail_send(sent++, buf, len, "tag without the TAGGED flag");

	len = build_rts(buf, rail_count, 4096, 0x10000, rail_count + 1);
	rail_send(sent++, buf, len, "RTS claiming one rail more than the server has");

	len = build_rts(buf, rail_count, 0, 0x10000, rail_count);
	rail_send(sent++, buf, len, "RTS of total length 0");

	len = build_rts(buf, rail_count, 4096, UINT64_MAX - 100, rail_count);
	rail_send(sent++, buf, len, "RTS whose base + length wraps past 2^64");

	len = build_ack(buf, 0xdead0001, 0);
	rail_send(sent++, buf, len, "ACK for a request never sent");

	len = build_ack(buf, 0xdead0002, -5000);
	rail_send(sent++, buf, len, "ACK with status -5000, not an errno");

	/* A HELLO must carry a full address this endpoint's rails can reach
	 * (a valid one is answered: fi_mrail_msg -N tests that). */
	len = build_hello(buf, (const uint8_t *) "not an mrail address", 20);
	rail_send(sent++, buf, len, "HELLO whose payload is not an mrail address");
	{
		uint8_t blob[MRAIL_ADDR_MAX_LEN];
		struct mrail_addr bad;
		ssize_t n;

		if (mrail_addr_make_partial(my_addr.rails[0].stack,
					    my_addr.rails[0].format,
					    my_addr.rails[0].bytes,
					    my_addr.rails[0].len, &bad) ||
		    (n = mrail_addr_encode(&bad, blob, sizeof(blob))) < 0)
			fatal("cannot build a partial mrail address");
		len = build_hello(buf, blob, (size_t) n);
		rail_send(sent++, buf, len, "HELLO carrying a partial address");

		bad = my_addr;
		snprintf(bad.rails[0].stack, sizeof(bad.rails[0].stack), "%s",
			 strcmp(bad.rails[0].stack, "udp;ofi_rxd") ?
			 "udp;ofi_rxd" : "tcp;ofi_rxm");
		n = mrail_addr_encode(&bad, blob, sizeof(blob));
		if (n < 0)
			fatal("cannot build an incompatible mrail address");
		len = build_hello(buf, blob, (size_t) n);
		rail_send(sent++, buf, len, "HELLO from rails of another stack");
	}

	/* RMA requests: each refused as a whole, answered with an error. */
	len = build_rma(buf, MRAIL_OP_WRITE, MRAIL_WIRE_F_INLINE, 100, 8);
	numbered_send(sent++, buf, len, &seq,
		      "inline WRITE of 100 bytes carrying 8");

	len = build_rma(buf, MRAIL_OP_WRITE, MRAIL_WIRE_F_INLINE, 8, 8);
	put_le(buf + 32, 0, 8);
	numbered_send(sent++, buf, len, &seq, "WRITE with request id 0");

	len = build_rma(buf, MRAIL_OP_READ_REQ, 0, (uint64_t) 1 << 62, 0);
	numbered_send(sent++, buf, len, &seq,
		      "READ_REQ of 2^62 bytes, over the size limit");

	{
		struct mrail_wire_hdr hdr = {
			.op = MRAIL_OP_READ_RESP, .req_id = 0xdead0003,
			.payload_len = (uint32_t) (MRAIL_WIRE_GRANT_LEN +
				MRAIL_WIRE_RTS_FIXED_LEN + 8 * rail_count),
		};
		uint8_t *p = buf + MRAIL_WIRE_HDR_LEN;

		encode(&hdr, buf);
		memset(p, 0, hdr.payload_len);
		put_le(p, 5, 8);
		put_le(p + MRAIL_WIRE_GRANT_LEN, 4096, 8);
		p[MRAIL_WIRE_GRANT_LEN + 16] = (uint8_t) rail_count;
		rail_send(sent++, buf, MRAIL_WIRE_HDR_LEN + hdr.payload_len,
			  "READ_RESP for a read never asked");
	}

	/* Atomics: each refused as a whole, nothing applied, answered with
	 * an error (the target's memory is the regions', never touched). */
	len = build_atomic(buf, 0, 3, FI_SUM, FI_UINT64, 0, 16);
	numbered_send(sent++, buf, len, &seq,
		      "ATOMIC of 3 uint64 carrying 16 bytes");

	len = build_atomic(buf, 0, 1, FI_BOR, FI_DOUBLE, 0, 8);
	numbered_send(sent++, buf, len, &seq, "ATOMIC FI_BOR on a double");

	len = build_atomic(buf, UINT64_MAX - 4, 1, FI_SUM, FI_UINT64, 1, 8);
	numbered_send(sent++, buf, len, &seq, "fetch ATOMIC whose range wraps");

	len = build_atomic(buf, 0, 1, FI_CSWAP, FI_UINT64, 0, 16);
	numbered_send(sent++, buf, len, &seq,
		      "FI_CSWAP sent as a plain ATOMIC");

	{
		struct mrail_wire_hdr hdr = {
			.op = MRAIL_OP_ATOMIC_RESP, .req_id = 0xdead0004,
			.payload_len = MRAIL_WIRE_ATOMIC_RESP_LEN + 8,
		};

		encode(&hdr, buf);
		memset(buf + MRAIL_WIRE_HDR_LEN, 0, hdr.payload_len);
		rail_send(sent++, buf, MRAIL_WIRE_HDR_LEN + hdr.payload_len,
			  "ATOMIC_RESP for an atomic never asked");
	}

	/* Valid: exactly at the eager limit, a full 16 KiB rail message,
	 * numbered after the requests above. */
	len = build_eager(buf, seq++, EAGER_LIMIT, 0, false);
	rail_send(0, buf, len, "valid EAGER of 16336 bytes, numbered next");
	oob_send_u32(sent);

	/* ---- phase 2: sequence numbers, then the stream goes on ---- */
	oob_recv_u32("post its phase 2 receives");
	sent = 0;

	/* A second copy of a numbered message is what a sender whose rail
	 * failed sends: dropped without a report (fi_mrail(7), RAIL FAILURE),
	 * and nothing else may come of it. */
	len = build_eager(buf, 0, 64, 101, false);
	rail_send(1, buf, len, "second copy of message seq 0");

	len = build_eager(buf, seq + ((uint64_t) 1 << 21), 64, 102, false);
	rail_send(0, buf, len, "EAGER seq 2^21 ahead");
	sent++;

	/* Well formed, from a sender the server has not inserted: libfabric
	 * allows that, so it is kept for when the AV learns the sender,
	 * never reported and never taken for ours. */
	len = build_eager(buf, 0, 64, 104, false);
	put_le(buf + 40, my_key ^ 1, 8);
	rail_send(1, buf, len, "EAGER seq 0 from a sender key not in the AV");

	len = build_eager(buf, seq++, 1000, 1, true);
	rail_send(1, buf, len, "valid tagged EAGER, the next in sequence");
	len = build_eager(buf, seq++, 4096, 2, false);
	rail_send(0, buf, len, "valid EAGER after it");
	oob_send_u32(sent);

	ok = oob_recv_u32("report its verdict");
	check(ok == 1, "client: the server passed every check", NULL);
	for (r = 0; r < rail_count; r++)
		setup_close(&rails[r].fab, NULL, 0);
	free(buf);
	printf("fi_mrail_hostile: client: %d of %d checks passed\n",
	       checks - failures, checks);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *prov = "mrail";
	unsigned port = 47593;
	int opt;

	while ((opt = getopt(argc, argv, "p:E:vh")) != -1) {
		switch (opt) {
		case 'p':
			prov = optarg;
			break;
		case 'E':
			port = (unsigned) strtoul(optarg, NULL, 10);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-p PROV] [-E PORT] [-v]   (server)\n"
				"       %s [-E PORT] [-v] SERVER_IP      (client)\n",
				argv[0], argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (optind < argc)
		return run_client(argv[optind], port);
	return run_server(prov, port);
}
