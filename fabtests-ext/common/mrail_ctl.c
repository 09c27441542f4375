/* SPDX-License-Identifier: BSD-2-Clause */
#include "mrail_ctl.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_errno.h>

const char *ctl_prog = "fabtests-ext";

void ctl_die(const char *what, int ret)
{
	fprintf(stderr, "%s: %s: %s\n", ctl_prog, what, fi_strerror(ret < 0 ? -ret : ret));
	exit(2);
}

void ctl_write(int sock, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = write(sock, p, len);
		if (n <= 0)
			ctl_die("control connection write", n < 0 ? errno : EPIPE);
		p += n;
		len -= (size_t) n;
	}
}

void ctl_read(int sock, void *buf, size_t len, void (*progress)(void))
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		if (poll(&pfd, 1, 1) <= 0) {
			if (progress)
				progress();
			continue;
		}
		n = read(sock, p, len);
		if (n <= 0)
			ctl_die("control connection read", n < 0 ? errno : EPIPE);
		p += n;
		len -= (size_t) n;
	}
}

int ctl_connect(const char *server, unsigned port, int *socks, int clients)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	char service[16];
	int one = 1, lsock, tries, sock = -1, n = 0;

	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(server, service, &hints, &ai))
		ctl_die("getaddrinfo of the control connection", EINVAL);
	if (server) {
		for (tries = 0; tries < 100; tries++) {
			sock = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(sock, ai->ai_addr, ai->ai_addrlen))
				break;
			close(sock);
			sock = -1;
			usleep(100000);
		}
		if (sock < 0)
			ctl_die("connect to the server", ECONNREFUSED);
		setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		socks[n++] = sock;
	} else {
		lsock = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(lsock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		((struct sockaddr_in *) ai->ai_addr)->sin_addr.s_addr = INADDR_ANY;
		if (bind(lsock, ai->ai_addr, ai->ai_addrlen) || listen(lsock, 8))
			ctl_die("listen", errno);
		while (n < clients) {
			sock = accept(lsock, NULL, NULL);
			if (sock < 0)
				ctl_die("accept", errno);
			setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			socks[n++] = sock;
		}
		close(lsock);
	}
	freeaddrinfo(ai);
	return n;
}

/* Sends ep's name over sock and reads the peer's into theirs (256 bytes). */
static size_t swap_names(int sock, struct fid_ep *ep, uint8_t *theirs)
{
	uint8_t ours[256];
	size_t len = sizeof(ours);
	uint64_t n;
	int ret;

	ret = fi_getname(&ep->fid, ours, &len);
	if (ret)
		ctl_die("fi_getname", ret);
	n = len;
	ctl_write(sock, &n, sizeof(n));
	ctl_write(sock, ours, len);
	ctl_read(sock, &n, sizeof(n), NULL);
	if (n > 256)
		ctl_die("the peer's name is too long", EINVAL);
	ctl_read(sock, theirs, n, NULL);
	return (size_t) n;
}

void ctl_give_name(int sock, struct fid_ep *ep)
{
	uint8_t theirs[256];

	swap_names(sock, ep, theirs);
}

fi_addr_t ctl_swap_names(int sock, struct fid_ep *ep, struct fid_av *av)
{
	uint8_t theirs[256];
	fi_addr_t peer;
	int ret;

	swap_names(sock, ep, theirs);
	ret = fi_av_insert(av, theirs, 1, &peer, 0, NULL);
	if (ret != 1)
		ctl_die("fi_av_insert of the peer", ret < 0 ? ret : -FI_EINVAL);
	return peer;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

void ctl_meet(const char *dir, unsigned rank, unsigned n, struct fid_ep *ep,
	      struct fid_av *av, fi_addr_t *addrs)
{
	uint8_t name[256];
	char path[512], tmp[512];
	size_t len = sizeof(name);
	double deadline = mono_s() + 60;
	unsigned r;
	FILE *f;
	int ret;

	ret = fi_getname(&ep->fid, name, &len);
	if (ret)
		ctl_die("fi_getname", ret);
	/* Written aside, then renamed: a reader sees all of it or nothing. */
	snprintf(tmp, sizeof(tmp), "%s/.name.%u", dir, rank);
	snprintf(path, sizeof(path), "%s/name.%u", dir, rank);
	f = fopen(tmp, "w");
	if (!f || fwrite(name, 1, len, f) != len || fclose(f) || rename(tmp, path))
		ctl_die("writing our name to the meeting directory", errno);
	for (r = 0; r < n; r++) {
		snprintf(path, sizeof(path), "%s/name.%u", dir, r);
		while (!(f = fopen(path, "r"))) {
			if (mono_s() > deadline)
				ctl_die("waiting for a rank's name", ETIMEDOUT);
			usleep(10000);
		}
		len = fread(name, 1, sizeof(name), f);
		fclose(f);
		ret = fi_av_insert(av, name, 1, &addrs[r], 0, NULL);
		if (ret != 1)
			ctl_die("fi_av_insert of a rank's name", ret < 0 ? ret : -FI_EINVAL);
	}
}

struct fi_info *ctl_getinfo(const char *prov, uint64_t caps, uint64_t mr_mode,
			    bool auto_progress)
{
	return ctl_getinfo_thread(prov, caps, mr_mode, auto_progress, FI_THREAD_UNSPEC);
}

struct fi_info *ctl_getinfo_thread(const char *prov, uint64_t caps, uint64_t mr_mode,
				   bool auto_progress, enum fi_threading threading)
{
	struct fi_info *info;
	char what[256];
	int ret;

	ret = ctl_try_getinfo(prov, caps, mr_mode, auto_progress, threading, &info);
	if (ret) {
		snprintf(what, sizeof(what), "fi_getinfo of %s for %s", prov,
			 fi_tostr(&caps, FI_TYPE_CAPS));
		ctl_die(what, ret);
	}
	return info;
}

int ctl_try_getinfo(const char *prov, uint64_t caps, uint64_t mr_mode,
		    bool auto_progress, enum fi_threading threading,
		    struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = caps;
	hints->mode = FI_CONTEXT;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = (int) mr_mode;
	hints->domain_attr->threading = threading;
	if (auto_progress) {
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
		hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
	}
	hints->fabric_attr->prov_name = strdup(prov);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, info);
	fi_freeinfo(hints);
	return ret;
}

fi_addr_t ctl_join_all(struct fid_ep *ep, struct fid_av *av, struct fid_eq *eq,
		       struct fid_cq *cq, const fi_addr_t *addrs, unsigned n,
		       struct fid_av_set **set, struct fid_mc **mc)
{
	struct fi_av_set_attr attr = {
		.count = n, .start_addr = addrs[0], .end_addr = addrs[n - 1],
		.stride = 1,
	};
	struct fi_eq_entry entry;
	fi_addr_t group;
	unsigned waited_ms;
	uint32_t event;
	ssize_t got;
	int ret;

	ret = fi_av_set(av, &attr, set, NULL);
	if (!ret)
		ret = fi_av_set_addr(*set, &group);
	if (!ret)
		ret = fi_join_collective(ep, group, *set, 0, mc, NULL);
	if (ret)
		ctl_die("joining the collective", ret);
	for (waited_ms = 0;; waited_ms++) {
		got = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
		if (got != -FI_EAGAIN)
			break;
		(void) fi_cq_read(cq, NULL, 0);
		if (waited_ms == 60000)
			ctl_die("waiting for FI_JOIN_COMPLETE", ETIMEDOUT);
		usleep(1000);
	}
	if (got < 0 || event != FI_JOIN_COMPLETE)
		ctl_die("waiting for FI_JOIN_COMPLETE", got < 0 ? (int) got : EIO);
	return fi_mc_addr(*mc);
}

bool ctl_opt(struct ctl_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case 'u':
		o->target_inserts = false;
		return true;
	case 'a':
		o->auto_progress = true;
		return true;
	case 'p':
		o->prov = arg;
		return true;
	case 'E':
		o->port = (unsigned) atoi(arg);
		return true;
	default:
		return false;
	}
}
