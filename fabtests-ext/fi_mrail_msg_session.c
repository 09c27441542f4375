/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The plumbing under every fi_mrail_msg test: how checks are counted and
 * reported, the payload patterns and guarded buffers messages land in, and
 * the TCP control connection the two sides meet and synchronise on.
 */
#include "fi_mrail_msg.h"

/* ------------------------------------------------------------------ checks */

struct checks chk;

/* Closed by fatal(), so the peer stops at once instead of timing out. */
static int control_fd = -1;

void check_begin(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(chk.name, sizeof(chk.name), fmt, ap);
	va_end(ap);
	chk.open = true;
	chk.reasons = 0;
	chk.why[0] = '\0';
}

void check_fail(const char *fmt, ...)
{
	va_list ap;

	if (!chk.reasons++) {
		va_start(ap, fmt);
		vsnprintf(chk.why, sizeof(chk.why), fmt, ap);
		va_end(ap);
	}
}

void check_end(void)
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

void check_once(bool ok, const char *name, const char *detail)
{
	check_begin("%s", name);
	if (!ok)
		check_fail("%s", detail ? detail : "failed");
	check_end();
}

void note_skip(const char *what, const char *why)
{
	printf("skipped: %s: %s\n", what, why);
	fflush(stdout);
}

void print_summary(void)
{
	printf("fi_mrail_msg: %d of %d checks passed\n", chk.total - chk.failed,
	       chk.total);
	fflush(stdout);
}

/* Ends the run: after a timeout or a refused post the two sides are out of
 * step, and every later check would only repeat the first failure. */
void fatal(const char *fmt, ...)
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

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

bool is_sender(const struct session *s, enum direction dir)
{
	return (dir == CLIENT_TO_SERVER) != s->is_server;
}

/* Each side checks what it sees, so a check name says which side that is. */
const char *dir_name(const struct session *s, enum direction dir)
{
	if (dir == CLIENT_TO_SERVER)
		return is_sender(s, dir) ? "client->server, sender's side" :
					   "client->server, receiver's side";
	return is_sender(s, dir) ? "server->client, sender's side" :
				   "server->client, receiver's side";
}

/* -------------------------------------------------------- data and guards */

/* The bytes of message (pat, size, iter) come four at a time, little end
 * first, from a hash of their word's index mixed with a seed of the three:
 * these loops run over every byte the tests move, and byte by byte they
 * outweighed the transfer itself.
 *
 * Nor does AddressSanitizer check them: they touch only this program's own
 * buffers, the sanitizer is there to watch the provider, and its check of
 * each byte was half of a sanitized run's time. (The helpers carry the
 * attribute too: gcc inlines no function into one with other sanitizer
 * attributes.) */
#define PATTERN_LOOP __attribute__((no_sanitize_address))

PATTERN_LOOP
static uint32_t pattern_seed(enum pattern pat, size_t size, uint32_t iter)
{
	uint32_t x = (uint32_t) pat * 0x9e3779b1u;

	x ^= (uint32_t) size * 0x85ebca6bu;
	x = (x ^ (x >> 13)) * 0xc2b2ae35u;
	x ^= iter * 0x27d4eb2fu;
	return (x ^ (x >> 15)) * 0x2c1b3c6du;
}

/* The word holding byte idx, as it lies in memory. */
PATTERN_LOOP
static inline uint32_t pattern_word(uint32_t seed, size_t idx)
{
	uint32_t x = seed ^ (uint32_t) (idx / 4) * 0x165667b1u;

	x = (x ^ (x >> 16)) * 0x85ebca6bu;
	x ^= x >> 13;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap32(x);
#endif
	return x;
}

/* Byte idx alone: one lookup, or a part word at either end of a buffer. */
PATTERN_LOOP
static inline uint8_t pattern_at(uint32_t seed, size_t idx)
{
	uint32_t word = pattern_word(seed, idx);
	uint8_t bytes[4];

	memcpy(bytes, &word, sizeof(bytes));
	return bytes[idx % 4];
}

uint8_t pattern_byte(enum pattern pat, size_t size, uint32_t iter, size_t idx)
{
	return pattern_at(pattern_seed(pat, size, iter), idx);
}

/* The pattern's bytes, each XORed with flip, over p[0, len). */
PATTERN_LOOP
static void store_pattern(uint8_t *p, size_t len, uint32_t seed, uint8_t flip)
{
	uint32_t flips = flip * 0x01010101u, word;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		word = pattern_word(seed, i) ^ flips;
		memcpy(p + i, &word, sizeof(word));
	}
	for (; i < len; i++)
		p[i] = pattern_at(seed, i) ^ flip;
}

PATTERN_LOOP
void fill_pattern(uint8_t *p, size_t len, enum pattern pat, size_t size,
			 uint32_t iter)
{
	store_pattern(p, len, pattern_seed(pat, size, iter), 0);
}

/* The complement of what should arrive: a byte the provider never wrote
 * cannot pass for a received one. */
PATTERN_LOOP
void poison_for(uint8_t *p, size_t len, enum pattern pat, size_t size,
		       uint32_t iter)
{
	store_pattern(p, len, pattern_seed(pat, size, iter), 0xff);
}

/* Index of the first byte in [from, len) that differs from the pattern:
 * whole words compared while they match, the bytes of the one that does
 * not (and of a part word at either end) one at a time. */
PATTERN_LOOP
size_t first_mismatch(const uint8_t *p, size_t from, size_t len,
			     enum pattern pat, size_t size, uint32_t iter)
{
	uint32_t seed = pattern_seed(pat, size, iter), word;
	size_t i = from;

	for (; i < len && i % 4; i++)
		if (p[i] != pattern_at(seed, i))
			return i;
	for (; i + 4 <= len; i += 4) {
		memcpy(&word, p + i, sizeof(word));
		if (word != pattern_word(seed, i))
			break;
	}
	for (; i < len; i++)
		if (p[i] != pattern_at(seed, i))
			break;
	return i;
}

static uint8_t guard_byte(size_t i)
{
	return (uint8_t) (0xa5 ^ (i * 0x3b));
}

void buf_alloc(struct buf *b, size_t cap)
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

void buf_free(struct buf *b)
{
	free(b->mem);
	b->mem = b->data = NULL;
}

void bufs_alloc(struct buf *bufs, size_t n, size_t cap)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_alloc(&bufs[i], cap);
}

void bufs_free(struct buf *bufs, size_t n)
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

bool expect_guards(const struct buf *b, const char *where)
{
	long off = buf_damaged_guard(b);

	if (off)
		check_fail("%s: guard byte at offset %ld of a %zu-byte buffer "
			   "overwritten", where, off, b->cap);
	return !off;
}

bool expect_payload(const struct buf *b, size_t len, enum pattern pat,
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
	uint64_t now = now_ms();

	return sock_connect_within(ai, now < deadline ? (int) (deadline - now) : 0);
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

void oob_open(struct session *s)
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
void stop_if_stuck(const struct session *s)
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

void oob_signal(struct session *s, enum sync_code code)
{
	uint8_t byte = (uint8_t) code;

	oob_send(s, &byte, 1);
}

void oob_wait_signal(struct session *s, enum sync_code code, const char *what)
{
	uint8_t byte;

	oob_recv(s, &byte, 1, what);
	if (byte != (uint8_t) code)
		fatal("out of step with the peer: got sync '%c' while waiting "
		      "for '%c' (%s)", byte, code, what);
}

/* Both sides signal, then both wait: neither passes until both arrived. */
void oob_sync(struct session *s, enum sync_code code, const char *what)
{
	oob_signal(s, code);
	oob_wait_signal(s, code, what);
}

/* Both sides must run the same sizes and iterations, or they fall out of
 * step in ways that look like provider bugs. */
void oob_hello(struct session *s)
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

void oob_exchange_names(struct session *s, const uint8_t *ours,
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
