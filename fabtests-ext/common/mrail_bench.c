/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_bench: the harness of fi_mrail_bw and fi_mrail_pingpong; see
 * mrail_bench.h for what it does and how it reports failures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "mrail_bench.h"
#include "mrail_sock.h"

/* Long enough for the slowest setup seen on a loaded machine (a provider's
 * fi_getinfo with many rails, a lazily connected rail), short enough that
 * a vanished peer ends the run instead of hanging it. */
#define BENCH_WAIT_LIMIT_SEC	30
#define BENCH_CQ_BATCH		64
#define BENCH_CQ_SIZE		4096
#define BENCH_MAX_NAME_LEN	4096
#define BENCH_MAX_HELLO_LEN	2048
#define BENCH_CONNECT_RETRY_US	(100 * 1000)
/* Reading the clock on every empty poll would cost more than the poll. */
#define BENCH_POLLS_PER_CLOCK	1024
/* "all": every power of two up to this. */
#define BENCH_ALL_SIZES_MAX	(4u << 20)
/* The control connection uses one byte value for every sync. */
#define BENCH_SYNC_BYTE		's'

const char bench_common_usage[] =
	"  -p PROV     provider, e.g. mrail or 'tcp;ofi_rxm' (default mrail)\n"
	"  -E PORT     TCP port of the control connection\n"
	"  -S SIZES    message sizes: all, or a list of sizes and LOW:HIGH\n"
	"              power-of-two ranges, suffixes k m g (e.g. 8,64k,1m)\n"
	"  -n ITERS    iterations per size\n"
	"  -T          tagged messages (fi_tsend/fi_trecv)\n"
	"  -o FORMAT   text (default), csv, or kv (RESULT key=value lines)\n"
	"  -R N        a baseline: N endpoints of the provider, the data\n"
	"              messages sent on them in turn (default 1)\n";

static void bench_perror(const struct bench *b, const char *what, int ret)
{
	fprintf(stderr, "%s: %s: %s\n", b->prog, what,
		fi_strerror(ret < 0 ? -ret : ret));
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

const char *bench_mode_name(const struct bench_opts *o)
{
	if (o->rma)
		return "write";
	return o->tagged ? "tagged" : "msg";
}

/* ------------------------------------------------------------ command line */

void bench_opts_init(struct bench_opts *o, const char *default_sizes,
		     unsigned default_port)
{
	memset(o, 0, sizeof(*o));
	o->prov = "mrail";
	o->port = default_port;
	o->format = BENCH_FORMAT_TEXT;
	o->rails = 1;
	/* The defaults are the tools' own constants: they always parse. */
	bench_parse_sizes(default_sizes, o->sizes, &o->nsizes);
}

int bench_parse_size(const char *text, size_t *size)
{
	unsigned long long value, shift = 0;
	char *end;

	if (!text[0] || text[0] == '-' || text[0] == '+')
		return -FI_EINVAL;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno || end == text)
		return -FI_EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || value > (SIZE_MAX >> shift))
		return -FI_EINVAL;
	*size = (size_t) (value << shift);
	return 0;
}

static int bench_add_size(size_t *sizes, size_t *nsizes, size_t size)
{
	if (*nsizes == BENCH_MAX_SIZES)
		return -FI_E2BIG;
	sizes[(*nsizes)++] = size;
	return 0;
}

/* LOW:HIGH adds the powers of two in [LOW, HIGH], LOW itself first even
 * when it is not one. */
static int bench_add_range(size_t *sizes, size_t *nsizes, size_t low, size_t high)
{
	size_t size;
	int ret;

	if (low > high)
		return -FI_EINVAL;
	ret = bench_add_size(sizes, nsizes, low);
	for (size = 1; !ret && size <= high && size <= SIZE_MAX / 2; size *= 2) {
		if (size > low)
			ret = bench_add_size(sizes, nsizes, size);
	}
	return ret;
}

int bench_parse_sizes(const char *spec, size_t *sizes, size_t *nsizes)
{
	char *copy, *item, *save = NULL, *colon;
	size_t low, high;
	int ret = 0;

	*nsizes = 0;
	if (!strcmp(spec, "all"))
		return bench_add_range(sizes, nsizes, 1, BENCH_ALL_SIZES_MAX);

	copy = strdup(spec);
	if (!copy)
		return -FI_ENOMEM;
	for (item = strtok_r(copy, ",", &save); item && !ret;
	     item = strtok_r(NULL, ",", &save)) {
		colon = strchr(item, ':');
		if (!colon) {
			ret = bench_parse_size(item, &low);
			if (!ret)
				ret = bench_add_size(sizes, nsizes, low);
			continue;
		}
		*colon = '\0';
		ret = bench_parse_size(item, &low);
		if (!ret)
			ret = bench_parse_size(colon + 1, &high);
		if (!ret)
			ret = bench_add_range(sizes, nsizes, low, high);
	}
	free(copy);
	if (!ret && !*nsizes)
		ret = -FI_EINVAL;
	return ret;
}

size_t bench_iters(const struct bench_opts *o, size_t size, size_t auto_bytes,
		   size_t min_iters, size_t max_iters)
{
	size_t iters;

	if (o->iters)
		return o->iters;
	iters = size ? auto_bytes / size : max_iters;
	if (iters < min_iters)
		iters = min_iters;
	if (iters > max_iters)
		iters = max_iters;
	return iters;
}

size_t bench_warmup(size_t iters, size_t divisor, size_t cap)
{
	size_t warmup = iters / divisor;

	if (warmup > cap)
		warmup = cap;
	return warmup ? warmup : 1;
}

int bench_getopt(struct bench_opts *o, int argc, char **argv, const char *optstring)
{
	int opt, ret;

	while ((opt = getopt(argc, argv, optstring)) != -1) {
		ret = bench_parse_opt(o, opt, optarg);
		if (ret > 0)
			return opt;
		if (ret)
			return BENCH_OPT_BAD;
	}
	return -1;
}

int bench_parse_warmup(const char *arg, size_t *warmup, bool *given)
{
	if (bench_parse_size(arg, warmup)) {
		fprintf(stderr, "-w %s: expected a count\n", arg);
		return 2;
	}
	*given = true;
	return 0;
}

int bench_bad_opt(int opt, void (*usage)(const char *), const char *argv0)
{
	usage(argv0);
	return opt == 'h' ? 1 : 2;
}

int bench_parse_operands(struct bench_opts *o, int argc, char **argv,
			 void (*usage)(const char *))
{
	if (optind < argc)
		o->server = argv[optind++];
	if (optind < argc) {
		usage(argv[0]);
		return 2;
	}
	return 0;
}

int bench_parse_opt(struct bench_opts *o, int opt, const char *arg)
{
	size_t value;
	char *end;
	long port;

	switch (opt) {
	case 'p':
		o->prov = arg;
		return 0;
	case 'E':
		port = strtol(arg, &end, 10);
		if (*end || port < 1 || port > 65535) {
			fprintf(stderr, "-E %s: not a TCP port\n", arg);
			return -FI_EINVAL;
		}
		o->port = (unsigned) port;
		return 0;
	case 'S':
		if (bench_parse_sizes(arg, o->sizes, &o->nsizes)) {
			fprintf(stderr, "-S %s: expected all, or up to %d sizes and "
				"LOW:HIGH ranges such as 8,64k,1m or 8:4m\n",
				arg, BENCH_MAX_SIZES);
			return -FI_EINVAL;
		}
		return 0;
	case 'n':
		if (bench_parse_size(arg, &value) || !value) {
			fprintf(stderr, "-n %s: expected a positive count\n", arg);
			return -FI_EINVAL;
		}
		o->iters = value;
		return 0;
	case 'T':
		o->tagged = true;
		return 0;
	case 'o':
		if (!strcmp(arg, "text")) {
			o->format = BENCH_FORMAT_TEXT;
		} else if (!strcmp(arg, "csv")) {
			o->format = BENCH_FORMAT_CSV;
		} else if (!strcmp(arg, "kv")) {
			o->format = BENCH_FORMAT_KV;
		} else {
			fprintf(stderr, "-o %s: expected text, csv or kv\n", arg);
			return -FI_EINVAL;
		}
		return 0;
	case 'R':
		if (bench_parse_size(arg, &value) || !value ||
		    value > BENCH_MAX_RAILS) {
			fprintf(stderr, "-R %s: expected 1 to %d endpoints\n", arg,
				BENCH_MAX_RAILS);
			return -FI_EINVAL;
		}
		o->rails = value;
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------ control connection */

static int bench_listen_accept(struct bench *b, unsigned port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons((uint16_t) port),
	};
	struct pollfd pfd = { .events = POLLIN };
	int one = 1, lfd, fd = -1;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0) {
		fprintf(stderr, "%s: socket: %s\n", b->prog, strerror(errno));
		return -1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *) &sin, sizeof(sin)) || listen(lfd, 1)) {
		fprintf(stderr, "%s: cannot listen on TCP port %u: %s\n", b->prog,
			port, strerror(errno));
		goto out;
	}
	pfd.fd = lfd;
	if (poll(&pfd, 1, BENCH_WAIT_LIMIT_SEC * 1000) != 1) {
		fprintf(stderr, "%s: no client connected to TCP port %u within %d s\n",
			b->prog, port, BENCH_WAIT_LIMIT_SEC);
		goto out;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		fprintf(stderr, "%s: accept: %s\n", b->prog, strerror(errno));
out:
	close(lfd);
	return fd;
}

/* The server may start after the client: refusals are retried until the
 * wait limit. */
static int bench_connect(struct bench *b, const char *server, unsigned port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	double deadline = bench_now() + BENCH_WAIT_LIMIT_SEC;
	char service[16];
	int ret, fd;

	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(server, service, &hints, &res);
	if (ret) {
		fprintf(stderr, "%s: cannot resolve %s: %s\n", b->prog, server,
			gai_strerror(ret));
		return -1;
	}
	while ((fd = sock_connect_within(res, 1000)) < 0) {
		if (bench_now() > deadline) {
			fprintf(stderr, "%s: cannot connect to %s port %u within %d s: %s\n",
				b->prog, server, port, BENCH_WAIT_LIMIT_SEC,
				strerror(errno));
			break;
		}
		usleep(BENCH_CONNECT_RETRY_US);
	}
	freeaddrinfo(res);
	return fd;
}

static int bench_oob_send(struct bench *b, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(b->sock, p, len, MSG_NOSIGNAL);
		if (n <= 0) {
			fprintf(stderr, "%s: control connection: send: %s\n", b->prog,
				n ? strerror(errno) : "closed");
			return -FI_EIO;
		}
		p += n;
		len -= (size_t) n;
	}
	return 0;
}

/* Reads the CQ while it waits: the peer may need this side's provider to
 * progress (acknowledge, pull data) before it can answer. */
static int bench_oob_recv(struct bench *b, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = b->sock, .events = POLLIN };
	double deadline = bench_now() + BENCH_WAIT_LIMIT_SEC;
	char *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		if (b->nrails) {
			ret = bench_progress(b);
			if (ret < 0)
				return ret;
		}
		if (bench_now() > deadline) {
			fprintf(stderr, "%s: the peer did not answer on the control "
				"connection within %d s\n", b->prog, BENCH_WAIT_LIMIT_SEC);
			return -FI_ETIMEDOUT;
		}
		/* Without a CQ to read there is nothing to spin for. */
		if (poll(&pfd, 1, b->nrails ? 0 : 100) != 1)
			continue;
		n = recv(b->sock, p, len, MSG_DONTWAIT);
		if (n == 0) {
			fprintf(stderr, "%s: the peer closed the control connection "
				"(see its output)\n", b->prog);
			return -FI_EIO;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fprintf(stderr, "%s: control connection: recv: %s\n", b->prog,
				strerror(errno));
			return -FI_EIO;
		}
		p += n;
		len -= (size_t) n;
	}
	return 0;
}

static int bench_oob_open(struct bench *b, const struct bench_opts *o)
{
	int one = 1;

	b->sock = o->server ? bench_connect(b, o->server, o->port) :
			      bench_listen_accept(b, o->port);
	if (b->sock < 0)
		return -FI_EIO;
	/* Syncs are single bytes; Nagle would hold them back. */
	setsockopt(b->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/* Length-prefixed blobs: addresses and option texts. */
static int bench_oob_swap(struct bench *b, const void *ours, size_t our_len,
			  void *theirs, size_t *their_len, size_t max_len)
{
	uint32_t wire = htonl((uint32_t) our_len);
	int ret;

	ret = bench_oob_send(b, &wire, sizeof(wire));
	if (!ret)
		ret = bench_oob_send(b, ours, our_len);
	if (!ret)
		ret = bench_oob_recv(b, &wire, sizeof(wire));
	if (ret)
		return ret;
	*their_len = ntohl(wire);
	if (*their_len > max_len) {
		fprintf(stderr, "%s: the peer announced %zu bytes where at most %zu "
			"fit\n", b->prog, *their_len, max_len);
		return -FI_EINVAL;
	}
	return bench_oob_recv(b, theirs, *their_len);
}

int bench_sync(struct bench *b)
{
	char byte = BENCH_SYNC_BYTE;
	int ret;

	ret = bench_oob_send(b, &byte, 1);
	if (!ret)
		ret = bench_oob_recv(b, &byte, 1);
	if (!ret && byte != BENCH_SYNC_BYTE) {
		fprintf(stderr, "%s: out of step with the peer on the control "
			"connection\n", b->prog);
		ret = -FI_EIO;
	}
	return ret;
}

int bench_exchange_u64(struct bench *b, uint64_t ours, uint64_t *theirs)
{
	uint32_t out[2] = { htonl((uint32_t) (ours >> 32)), htonl((uint32_t) ours) };
	uint32_t in[2];
	int ret;

	ret = bench_oob_send(b, out, sizeof(out));
	if (!ret)
		ret = bench_oob_recv(b, in, sizeof(in));
	if (!ret)
		*theirs = (uint64_t) ntohl(in[0]) << 32 | ntohl(in[1]);
	return ret;
}

/* Two sides with different sizes or iteration counts fall out of step in
 * ways that look like provider hangs; say so at once instead. */
static int bench_check_peer_options(struct bench *b, const struct bench_opts *o,
				    const char *tool_options)
{
	char ours[BENCH_MAX_HELLO_LEN], theirs[BENCH_MAX_HELLO_LEN];
	size_t len, their_len, i;
	int ret;

	len = (size_t) snprintf(ours, sizeof(ours), "%s -p %s -n %zu -R %zu%s %s -S ",
				b->prog, o->prov, o->iters, o->rails,
				o->tagged ? " -T" : "", tool_options);
	for (i = 0; i < o->nsizes && len < sizeof(ours); i++)
		len += (size_t) snprintf(ours + len, sizeof(ours) - len, "%s%zu",
					 i ? "," : "", o->sizes[i]);
	if (len >= sizeof(ours))
		len = sizeof(ours) - 1;
	ret = bench_oob_swap(b, ours, len, theirs, &their_len, sizeof(theirs) - 1);
	if (ret)
		return ret;
	theirs[their_len] = '\0';
	if (their_len != len || memcmp(ours, theirs, len)) {
		fprintf(stderr, "%s: the peer runs with other options:\n  ours:   %s\n"
			"  theirs: %s\n", b->prog, ours, theirs);
		return -FI_EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ fabric */

static int bench_getinfo(struct bench *b, const struct bench_opts *o)
{
	const char *prov = o->prov;
	struct fi_info *hints;
	int ret;

	hints = fi_allocinfo();
	if (!hints)
		return -FI_ENOMEM;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->mode = FI_CONTEXT;
	/* Plain malloc'd buffers: no registration for any provider. */
	hints->domain_attr->mr_mode = 0;
	if (o->rma) {
		hints->caps |= FI_RMA;
		/* Only the regions RMA reaches are registered, by
		 * bench_mr_reg, which knows these modes. */
		hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
					      FI_MR_PROV_KEY;
	}
	hints->fabric_attr->prov_name = strdup(prov);
	if (!hints->fabric_attr->prov_name) {
		ret = -FI_ENOMEM;
		goto out;
	}
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &b->info);
	if (ret)
		fprintf(stderr, "%s: fi_getinfo for provider '%s' (FI_EP_RDM, "
			"FI_MSG|FI_TAGGED%s): %s\n", b->prog, prov,
			o->rma ? "|FI_RMA, mr_mode VIRT_ADDR|ALLOCATED|PROV_KEY at most" :
				 ", no MR", fi_strerror(-ret));
out:
	fi_freeinfo(hints);
	return ret;
}

static int bench_open_rail(struct bench *b, struct bench_rail *r)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.size = BENCH_CQ_SIZE,
		.wait_obj = FI_WAIT_NONE,
	};
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = 1 };
	int ret;

	ret = fi_fabric(b->info->fabric_attr, &r->fabric, NULL);
	if (ret) {
		bench_perror(b, "fi_fabric", ret);
		return ret;
	}
	ret = fi_domain(r->fabric, b->info, &r->domain, NULL);
	if (ret) {
		bench_perror(b, "fi_domain", ret);
		return ret;
	}
	ret = fi_av_open(r->domain, &av_attr, &r->av, NULL);
	if (ret) {
		bench_perror(b, "fi_av_open", ret);
		return ret;
	}
	ret = fi_cq_open(r->domain, &cq_attr, &r->cq, NULL);
	if (ret) {
		bench_perror(b, "fi_cq_open", ret);
		return ret;
	}
	ret = fi_endpoint(r->domain, b->info, &r->ep, NULL);
	if (ret) {
		bench_perror(b, "fi_endpoint", ret);
		return ret;
	}
	ret = fi_ep_bind(r->ep, &r->av->fid, 0);
	if (ret) {
		bench_perror(b, "fi_ep_bind (AV)", ret);
		return ret;
	}
	ret = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret) {
		bench_perror(b, "fi_ep_bind (CQ)", ret);
		return ret;
	}
	ret = fi_enable(r->ep);
	if (ret)
		bench_perror(b, "fi_enable", ret);
	return ret;
}

static int bench_exchange_addresses(struct bench *b, struct bench_rail *r)
{
	char ours[BENCH_MAX_NAME_LEN], theirs[BENCH_MAX_NAME_LEN];
	size_t our_len = sizeof(ours), their_len;
	int ret;

	ret = fi_getname(&r->ep->fid, ours, &our_len);
	if (ret) {
		bench_perror(b, "fi_getname", ret);
		return ret;
	}
	ret = bench_oob_swap(b, ours, our_len, theirs, &their_len, sizeof(theirs));
	if (ret)
		return ret;
	ret = fi_av_insert(r->av, theirs, 1, &r->peer, 0, NULL);
	if (ret != 1) {
		bench_perror(b, "fi_av_insert of the peer's address",
			     ret < 0 ? ret : -FI_EINVAL);
		return ret < 0 ? ret : -FI_EINVAL;
	}
	return 0;
}

/* Each rail is counted as soon as it exists, so bench_close closes what
 * a failure left half open. */
static int bench_open_rails(struct bench *b, const struct bench_opts *o)
{
	struct bench_rail *r;
	int ret;

	while (b->nrails < o->rails) {
		r = &b->rails[b->nrails++];
		ret = bench_open_rail(b, r);
		if (!ret)
			ret = bench_exchange_addresses(b, r);
		if (ret)
			return ret;
	}
	b->ep = b->rails[0].ep;
	b->peer = b->rails[0].peer;
	b->striped_tag = o->striped_tag;
	return 0;
}

static int bench_agree_max_msg_size(struct bench *b)
{
	uint64_t theirs;
	int ret;

	ret = bench_exchange_u64(b, b->info->ep_attr->max_msg_size, &theirs);
	if (ret)
		return ret;
	b->max_msg_size = b->info->ep_attr->max_msg_size;
	if (theirs < b->max_msg_size)
		b->max_msg_size = (size_t) theirs;
	return 0;
}

int bench_open(struct bench *b, const struct bench_opts *o,
	       const char *tool_options)
{
	const char *prog = b->prog;
	int ret;

	memset(b, 0, sizeof(*b));
	b->prog = prog;
	b->sock = -1;
	b->is_server = !o->server;
	/* Before the peer is waited for: a usage error, said at once. */
	if (o->rails > 1 && o->rma) {
		fprintf(stderr, "%s: -R %zu: the by-hand baseline stripes messages "
			"only, not RMA\n", prog, o->rails);
		return -FI_EINVAL;
	}
	ret = bench_oob_open(b, o);
	if (ret)
		return ret;
	ret = bench_check_peer_options(b, o, tool_options);
	if (ret)
		goto err;
	ret = bench_getinfo(b, o);
	if (ret)
		goto err;
	ret = bench_open_rails(b, o);
	if (ret)
		goto err;
	ret = bench_agree_max_msg_size(b);
	if (ret)
		goto err;
	/* Both endpoints are in the AV before either side sends. */
	ret = bench_sync(b);
	if (ret)
		goto err;
	return 0;
err:
	bench_close(b);
	return ret;
}

void bench_close(struct bench *b)
{
	struct bench_rail *r;

	while (b->nrails) {
		r = &b->rails[--b->nrails];
		if (r->ep)
			fi_close(&r->ep->fid);
		if (r->cq)
			fi_close(&r->cq->fid);
		if (r->av)
			fi_close(&r->av->fid);
		if (r->domain)
			fi_close(&r->domain->fid);
		if (r->fabric)
			fi_close(&r->fabric->fid);
		memset(r, 0, sizeof(*r));
	}
	if (b->info)
		fi_freeinfo(b->info);
	if (b->sock >= 0)
		close(b->sock);
	b->ep = NULL;
	b->info = NULL;
	b->sock = -1;
}

/* ------------------------------------------------------ memory registration */

int bench_mr_reg(struct bench *b, void *buf, size_t len, uint64_t access,
		 uint64_t requested_key, struct fid_mr **mr, uint64_t *key,
		 uint64_t *raddr)
{
	uint64_t mode = b->info->domain_attr->mr_mode;
	int ret;

	ret = fi_mr_reg(b->rails[0].domain, buf, len, access, 0, requested_key, 0, mr, NULL);
	if (ret) {
		fprintf(stderr, "%s: fi_mr_reg of %zu bytes (key %#" PRIx64 "): %s\n",
			b->prog, len, requested_key, fi_strerror(-ret));
		return ret;
	}
	*key = fi_mr_key(*mr);
	if (*key == FI_KEY_NOTAVAIL) {
		fprintf(stderr, "%s: fi_mr_key: the provider has no key for a "
			"%zu-byte region\n", b->prog, len);
		fi_close(&(*mr)->fid);
		*mr = NULL;
		return -FI_ENOKEY;
	}
	*raddr = mode & FI_MR_VIRT_ADDR ? (uint64_t) (uintptr_t) buf : 0;
	return 0;
}

/* ------------------------------------------------------------ data transfer */

static int bench_read_rail(struct bench *b, struct bench_rail *r)
{
	struct fi_cq_tagged_entry comp[BENCH_CQ_BATCH];
	struct fi_cq_err_entry err = { 0 };
	ssize_t n, i;

	n = fi_cq_read(r->cq, comp, BENCH_CQ_BATCH);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		if (fi_cq_readerr(r->cq, &err, 0) < 0) {
			bench_perror(b, "fi_cq_readerr", -FI_EOTHER);
			return -FI_EOTHER;
		}
		fprintf(stderr, "%s: error completion of a %s: %s (provider: %s)\n",
			b->prog, (err.flags & FI_RECV) ? "receive" : "send",
			fi_strerror(err.err),
			fi_cq_strerror(r->cq, err.prov_errno, err.err_data, NULL, 0));
		return err.err ? -err.err : -FI_EOTHER;
	}
	if (n < 0) {
		bench_perror(b, "fi_cq_read", (int) n);
		return (int) n;
	}
	for (i = 0; i < n; i++) {
		if (comp[i].flags & FI_RECV)
			b->rx_done++;
		else
			b->tx_done++;
		if (comp[i].op_context)
			((struct bench_ctx *) comp[i].op_context)->busy = false;
	}
	return (int) n;
}

int bench_progress(struct bench *b)
{
	int ret, total = 0;
	size_t i;

	for (i = 0; i < b->nrails; i++) {
		ret = bench_read_rail(b, &b->rails[i]);
		if (ret < 0)
			return ret;
		total += ret;
	}
	if (b->progress_hook)
		b->progress_hook(b, b->progress_arg);
	return total;
}

/*
 * Watches a busy-poll loop for a peer that is gone: gives up after the wait
 * limit without a completion. Reads the clock only once per many empty
 * polls, so watching costs the loop next to nothing.
 */
struct bench_watch {
	double deadline;
	unsigned idle;
};

static bool bench_stalled(struct bench_watch *w, int completions)
{
	if (completions) {
		w->deadline = 0;
		w->idle = 0;
		return false;
	}
	if (++w->idle % BENCH_POLLS_PER_CLOCK)
		return false;
	if (!w->deadline) {
		w->deadline = bench_now() + BENCH_WAIT_LIMIT_SEC;
		return false;
	}
	return bench_now() > w->deadline;
}

int bench_wait(struct bench *b, const uint64_t *counter, uint64_t target)
{
	struct bench_watch watch = { 0 };
	int ret;

	while (*counter < target) {
		ret = bench_progress(b);
		if (ret < 0)
			return ret;
		if (bench_stalled(&watch, ret)) {
			fprintf(stderr, "%s: nothing completed for %d s (%" PRIu64
				" of %" PRIu64 " done): the peer is gone or stuck\n",
				b->prog, BENCH_WAIT_LIMIT_SEC, *counter, target);
			return -FI_ETIMEDOUT;
		}
	}
	return 0;
}

int bench_wait_ctx(struct bench *b, const struct bench_ctx *ctx)
{
	struct bench_watch watch = { 0 };
	int ret;

	while (ctx->busy) {
		ret = bench_progress(b);
		if (ret < 0)
			return ret;
		if (bench_stalled(&watch, ret)) {
			fprintf(stderr, "%s: an operation did not complete for %d s: "
				"the peer is gone or stuck\n", b->prog,
				BENCH_WAIT_LIMIT_SEC);
			return -FI_ETIMEDOUT;
		}
	}
	return 0;
}

/* What one post does; every kind is retried the same way. */
struct bench_post_args {
	enum { BENCH_SEND, BENCH_RECV, BENCH_WRITE } op;
	bool tagged;
	void *buf;
	size_t len;
	uint64_t tag;
	uint64_t raddr;		/* BENCH_WRITE */
	uint64_t key;		/* BENCH_WRITE */
};

static const char *bench_post_name(const struct bench_post_args *a)
{
	switch (a->op) {
	case BENCH_SEND:
		return a->tagged ? "fi_tsend" : "fi_send";
	case BENCH_RECV:
		return a->tagged ? "fi_trecv" : "fi_recv";
	default:
		return "fi_write";
	}
}

static ssize_t bench_post_once(const struct bench_rail *r,
			       const struct bench_post_args *a,
			       struct bench_ctx *ctx)
{
	switch (a->op) {
	case BENCH_SEND:
		return a->tagged ?
		       fi_tsend(r->ep, a->buf, a->len, NULL, r->peer, a->tag, ctx) :
		       fi_send(r->ep, a->buf, a->len, NULL, r->peer, ctx);
	case BENCH_RECV:
		return a->tagged ?
		       fi_trecv(r->ep, a->buf, a->len, NULL, r->peer, a->tag, 0, ctx) :
		       fi_recv(r->ep, a->buf, a->len, NULL, r->peer, ctx);
	default:
		return fi_write(r->ep, a->buf, a->len, NULL, r->peer, a->raddr,
				a->key, ctx);
	}
}

/*
 * -R: the k-th striped send and the k-th striped receive both go to rail
 * k mod N, so the peer's k-th receive of that tag is posted where the k-th
 * message arrives, and each rail keeps its messages in order.
 */
static struct bench_rail *bench_post_rail(struct bench *b,
					  const struct bench_post_args *a)
{
	uint64_t *turn;

	if (b->nrails == 1 || a->op == BENCH_WRITE || a->tag != b->striped_tag)
		return &b->rails[0];
	turn = a->op == BENCH_SEND ? &b->striped_sends : &b->striped_recvs;
	return &b->rails[(*turn)++ % b->nrails];
}

static int bench_post(struct bench *b, const struct bench_post_args *a,
		      struct bench_ctx *ctx)
{
	struct bench_rail *rail = bench_post_rail(b, a);
	struct bench_watch watch = { 0 };
	ssize_t ret;

	for (;;) {
		ret = bench_post_once(rail, a, ctx);
		if (ret != -FI_EAGAIN)
			break;
		/* The provider's queue is full: completions free it. */
		ret = bench_progress(b);
		if (ret < 0)
			return (int) ret;
		if (bench_stalled(&watch, (int) ret)) {
			fprintf(stderr, "%s: the provider refused %s for %d s "
				"(-FI_EAGAIN)\n", b->prog, bench_post_name(a),
				BENCH_WAIT_LIMIT_SEC);
			return -FI_ETIMEDOUT;
		}
	}
	if (ret) {
		bench_perror(b, bench_post_name(a), (int) ret);
		return (int) ret;
	}
	ctx->busy = true;
	return 0;
}

int bench_post_send(struct bench *b, bool tagged, const void *buf, size_t len,
		    uint64_t tag, struct bench_ctx *ctx)
{
	/* One path posts sends and receives; fi_send only reads buf. */
	struct bench_post_args a = { .op = BENCH_SEND, .tagged = tagged,
				     .buf = (void *) buf, .len = len, .tag = tag };

	return bench_post(b, &a, ctx);
}

int bench_post_recv(struct bench *b, bool tagged, void *buf, size_t len,
		    uint64_t tag, struct bench_ctx *ctx)
{
	struct bench_post_args a = { .op = BENCH_RECV, .tagged = tagged,
				     .buf = buf, .len = len, .tag = tag };

	return bench_post(b, &a, ctx);
}

int bench_post_write(struct bench *b, const void *buf, size_t len,
		     uint64_t raddr, uint64_t key, struct bench_ctx *ctx)
{
	struct bench_post_args a = { .op = BENCH_WRITE, .buf = (void *) buf,
				     .len = len, .raddr = raddr, .key = key };

	return bench_post(b, &a, ctx);
}
