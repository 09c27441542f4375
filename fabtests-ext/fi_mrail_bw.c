/*
 * fi_mrail_bw: streaming bandwidth between two hosts, in fabtests' style.
 *
 *   server: fi_mrail_bw [-p PROV] [-E PORT] [-S SIZE] [-n COUNT] [-W WINDOW] [-t]
 *   client: fi_mrail_bw [same options] SERVER_ADDR
 *
 * The client streams COUNT messages of SIZE bytes (fi_send, or fi_tsend with
 * -t), keeping WINDOW sends in flight; the server keeps WINDOW receives
 * posted and answers with one message when it has received all of them,
 * which stops the client's clock. Both print the figure; the client's line
 * is "fi_mrail_bw: PROV SIZE x COUNT: N.NN Gbit/s". Addresses are exchanged
 * over a TCP connection to PORT. A benchmark: it measures, it asserts
 * nothing about speed; fi_mrail_msg checks correctness.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
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

#define BW_TAG 0x6277
#define OOB_TIMEOUT_MS 20000

struct bw_opts {
	const char *prov, *server;
	int port;
	size_t size, count, window;
	int tagged;
};

struct bw_ctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
	int sock;
};

static void die(const char *what, int ret)
{
	fprintf(stderr, "fi_mrail_bw: %s: %s\n", what,
		ret < 0 ? fi_strerror(-ret) : strerror(ret));
	exit(1);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- out-of-band connection: addresses and one start signal ---- */

static int oob_connect(const struct bw_opts *o)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	int fd, lfd, one = 1, tries;

	if (o->server) {
		if (inet_pton(AF_INET, o->server, &sin.sin_addr) != 1)
			die("server address is not IPv4", EINVAL);
		for (tries = 0; tries < OOB_TIMEOUT_MS / 100; tries++) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *) &sin, sizeof(sin)))
				return fd;
			close(fd);
			usleep(100 * 1000);
		}
		die("cannot reach the server", ETIMEDOUT);
	}
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *) &sin, sizeof(sin)) || listen(lfd, 1))
		die("cannot listen", errno);
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	if (poll(&pfd, 1, OOB_TIMEOUT_MS) != 1)
		die("no client came", ETIMEDOUT);
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	return fd;
}

static void oob_io(int fd, void *buf, size_t len, int sending)
{
	struct pollfd pfd = { .fd = fd, .events = sending ? POLLOUT : POLLIN };
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (poll(&pfd, 1, OOB_TIMEOUT_MS) != 1)
			die("control connection timed out", ETIMEDOUT);
		n = sending ? send(fd, (char *) buf + done, len - done, 0) :
			      recv(fd, (char *) buf + done, len - done, 0);
		if (n <= 0)
			die("control connection closed", n ? errno : ECONNRESET);
		done += (size_t) n;
	}
}

static void exchange_addresses(struct bw_ctx *c)
{
	char mine[4096], theirs[4096];
	size_t mine_len = sizeof(mine);
	uint32_t len;
	int ret;

	ret = fi_getname(&c->ep->fid, mine, &mine_len);
	if (ret)
		die("fi_getname", ret);
	len = htonl((uint32_t) mine_len);
	oob_io(c->sock, &len, sizeof(len), 1);
	oob_io(c->sock, mine, mine_len, 1);
	oob_io(c->sock, &len, sizeof(len), 0);
	len = ntohl(len);
	if (len > sizeof(theirs))
		die("peer address too long", EINVAL);
	oob_io(c->sock, theirs, len, 0);
	ret = fi_av_insert(c->av, theirs, 1, &c->peer, 0, NULL);
	if (ret != 1)
		die("fi_av_insert of the peer", ret < 0 ? ret : -FI_EINVAL);
}

/* ---- fabric ---- */

static void open_fabric(struct bw_ctx *c, const struct bw_opts *o)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 4096 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *hints = fi_allocinfo();
	int ret;

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = 0;
	hints->fabric_attr->prov_name = strdup(o->prov);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &c->info);
	fi_freeinfo(hints);
	if (ret)
		die("fi_getinfo", ret);
	if ((ret = fi_fabric(c->info->fabric_attr, &c->fabric, NULL)) ||
	    (ret = fi_domain(c->fabric, c->info, &c->domain, NULL)) ||
	    (ret = fi_av_open(c->domain, &av_attr, &c->av, NULL)) ||
	    (ret = fi_cq_open(c->domain, &cq_attr, &c->cq, NULL)) ||
	    (ret = fi_endpoint(c->domain, c->info, &c->ep, NULL)) ||
	    (ret = fi_ep_bind(c->ep, &c->av->fid, 0)) ||
	    (ret = fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(c->ep)))
		die("opening the endpoint", ret);
}

static void close_fabric(struct bw_ctx *c)
{
	fi_close(&c->ep->fid);
	fi_close(&c->cq->fid);
	fi_close(&c->av->fid);
	fi_close(&c->domain->fid);
	fi_close(&c->fabric->fid);
	fi_freeinfo(c->info);
}

/* Reads completions; returns how many, failing the run on an error. */
static size_t reap(struct bw_ctx *c)
{
	struct fi_cq_tagged_entry comp[64];
	struct fi_cq_err_entry err = { 0 };
	ssize_t n = fi_cq_read(c->cq, comp, 64);

	if (n == -FI_EAVAIL) {
		fi_cq_readerr(c->cq, &err, 0);
		die("error completion", -err.err);
	}
	if (n < 0 && n != -FI_EAGAIN)
		die("fi_cq_read", (int) n);
	return n > 0 ? (size_t) n : 0;
}

static void post_send(struct bw_ctx *c, const struct bw_opts *o, void *buf,
		      size_t len, struct fi_context *ctx)
{
	ssize_t ret;

	do {
		ret = o->tagged ? fi_tsend(c->ep, buf, len, NULL, c->peer, BW_TAG, ctx) :
				  fi_send(c->ep, buf, len, NULL, c->peer, ctx);
		if (ret == -FI_EAGAIN)
			reap(c);
	} while (ret == -FI_EAGAIN);
	if (ret)
		die("send", (int) ret);
}

static void post_recv(struct bw_ctx *c, const struct bw_opts *o, void *buf,
		      size_t len, struct fi_context *ctx)
{
	ssize_t ret;

	do {
		ret = o->tagged ? fi_trecv(c->ep, buf, len, NULL, c->peer, BW_TAG, 0, ctx) :
				  fi_recv(c->ep, buf, len, NULL, c->peer, ctx);
		if (ret == -FI_EAGAIN)
			reap(c);
	} while (ret == -FI_EAGAIN);
	if (ret)
		die("receive", (int) ret);
}

/* The client streams; the server's one reply says everything arrived. */
static double run_client(struct bw_ctx *c, const struct bw_opts *o, char *buf,
			 struct fi_context *ctx)
{
	size_t posted = 0, done = 0;
	double start;
	char ack;

	post_recv(c, o, &ack, 1, &ctx[o->window]);
	start = now_sec();
	while (done < o->count + 1) {
		while (posted < o->count && posted - done < o->window) {
			post_send(c, o, buf, o->size, &ctx[posted % o->window]);
			posted++;
		}
		done += reap(c);
	}
	return now_sec() - start;
}

static double run_server(struct bw_ctx *c, const struct bw_opts *o, char *buf,
			 struct fi_context *ctx)
{
	size_t posted = 0, done = 0;
	double start = 0;
	char ack = 1;

	while (posted < o->count && posted < o->window) {
		post_recv(c, o, buf + (posted % o->window) * o->size, o->size,
			  &ctx[posted % o->window]);
		posted++;
	}
	while (done < o->count) {
		size_t n = reap(c);

		if (n && !start)
			start = now_sec();
		done += n;
		while (posted < o->count && posted - done < o->window) {
			post_recv(c, o, buf + (posted % o->window) * o->size, o->size,
				  &ctx[posted % o->window]);
			posted++;
		}
	}
	post_send(c, o, &ack, 1, &ctx[o->window]);
	while (!reap(c))
		;
	return now_sec() - start;
}

int main(int argc, char **argv)
{
	struct bw_opts o = { .prov = "mrail", .port = 47593, .size = 16384,
			     .count = 4000, .window = 64 };
	struct fi_context *ctx;
	struct bw_ctx c = { 0 };
	double secs;
	char *buf, go = 1;
	int opt;

	while ((opt = getopt(argc, argv, "p:E:S:n:W:th")) != -1) {
		switch (opt) {
		case 'p': o.prov = optarg; break;
		case 'E': o.port = atoi(optarg); break;
		case 'S': o.size = strtoul(optarg, NULL, 0); break;
		case 'n': o.count = strtoul(optarg, NULL, 0); break;
		case 'W': o.window = strtoul(optarg, NULL, 0); break;
		case 't': o.tagged = 1; break;
		default:
			fprintf(stderr, "usage: %s [-p PROV] [-E PORT] [-S SIZE] [-n COUNT] "
				"[-W WINDOW] [-t] [SERVER_ADDR]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind < argc)
		o.server = argv[optind];
	if (!o.window || !o.count)
		die("-W and -n must be positive", EINVAL);

	buf = calloc(o.window, o.size ? o.size : 1);
	ctx = calloc(o.window + 1, sizeof(*ctx));
	if (!buf || !ctx)
		die("memory", ENOMEM);
	c.sock = oob_connect(&o);
	open_fabric(&c, &o);
	exchange_addresses(&c);
	/* Both endpoints exist before the client starts the clock. */
	oob_io(c.sock, &go, 1, 1);
	oob_io(c.sock, &go, 1, 0);

	secs = o.server ? run_client(&c, &o, buf, ctx) : run_server(&c, &o, buf, ctx);
	printf("fi_mrail_bw: %s %s %zu x %zu: %.3f Gbit/s (%.1f MB/s, %.3f s)\n",
	       o.prov, o.tagged ? "tagged" : "msg", o.size, o.count,
	       o.size * o.count * 8 / secs / 1e9, o.size * o.count / secs / 1e6, secs);
	close_fabric(&c);
	close(c.sock);
	free(buf);
	free(ctx);
	return 0;
}
