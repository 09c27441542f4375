/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_unwind: an open that fails part way leaves nothing behind.
 *
 *   fi_mrail_unwind -t fabric|domain|progress|av|named_av|cq|cntr|eq|mr|enable [-v]
 *
 * Meant to run under tests/integration/libmrail_fault.so with
 * FI_MRAIL_PRIVATE_CORE=0 (test_unwind.sh does both): the program sets
 * MRAIL_FAULT itself so that the open of the object under test fails on
 * the last rail (for the mrail-made wait objects and the progress thread:
 * on mrail's eventfd). Each case opens and closes the object once (whatever
 * a core provider sets up for a whole process is set up then) and checks
 * that the failing open returns the injected error, that as many fds are
 * open and as many heap bytes in use after it as before, that a retry
 * succeeds, and, for AVs and endpoints, that the retried object carries a
 * message to the endpoint's own address byte for byte. Heap bytes are
 * glibc's (run with its tcache off, or freed chunks count as in use) or,
 * in an ASan build, ASan's allocator's; LeakSanitizer alone would miss a
 * core object left open, which the core still points to.
 */
#include <dirent.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_mrail.h>

#include "common/mrail_check.h"

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static size_t rails;

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *d;
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n - 1;	/* the directory's own fd */
}

/* An ASan build's allocator, which glibc's mallinfo2 does not see. */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

/* Heap bytes in use: an open that fails must give back what it took. */
static size_t heap_in_use(void)
{
	if (__sanitizer_get_current_allocated_bytes)
		return __sanitizer_get_current_allocated_bytes();
	return mallinfo2().uordblks;
}

static const char *err_str(int ret)
{
	return ret ? fi_strerror(ret < 0 ? -ret : ret) : "success";
}

/* One open of the object under test: 0 or a negative error. */
typedef int (*open_fn)(struct fid **fid);

/*
 * The pattern every case follows: open and close once; open again, which
 * the fault makes fail (whatever its first failure sets up for good, a
 * warning's buffers, is set up then); count fds and heap bytes; open a third
 * time, failing the same way, and count again; open a fourth time, which
 * must work; then use the object when use is given, and close it.
 */
static void fail_then_retry(const char *what, open_fn open_obj, int want,
			    void (*use)(struct fid *fid))
{
	struct fid *fid = NULL;
	size_t heap;
	int fds, ret, i;

	ret = open_obj(&fid);
	check_what(ret == 0, what, "first open: %s", err_str(ret));
	if (ret)
		return;
	fi_close(fid);
	for (i = 0; i < 2; i++) {
		fid = NULL;
		fds = count_fds();
		heap = heap_in_use();
		ret = open_obj(&fid);
		check_what(ret == want, what, "open with the fault returns %d (%s), "
			   "want %d (%s)", ret, err_str(ret), want, err_str(want));
		if (!ret) {
			fi_close(fid);
			return;
		}
	}
	check_what(count_fds() == fds && heap_in_use() == heap, what,
		   "after the failed open %d fds are open and %zu heap bytes in "
		   "use, as before it: %d and %zu", count_fds(), heap_in_use(),
		   fds, heap);
	ret = open_obj(&fid);
	check_what(ret == 0, what, "the retry succeeds: %s", err_str(ret));
	if (ret)
		return;
	if (use)
		use(fid);
	ret = fi_close(fid);
	check_what(ret == 0 && count_fds() == fds, what, "closed (%s); %d fds "
		   "open, as before: %d", err_str(ret), count_fds(), fds);
}

/* The open functions hand back the object's fid, NULL when it failed. */
static int open_fabric(struct fid **fid)
{
	struct fid_fabric *f = NULL;
	int ret = fi_fabric(info->fabric_attr, &f, NULL);

	return *fid = f ? &f->fid : NULL, ret;
}

static int open_domain_with(struct fi_info *fi, struct fid **fid)
{
	struct fid_domain *d = NULL;
	int ret = fi_domain(fabric, fi, &d, NULL);

	return *fid = d ? &d->fid : NULL, ret;
}

static int open_domain(struct fid **fid)
{
	return open_domain_with(info, fid);
}

static int open_progress_domain(struct fid **fid)
{
	struct fi_info *fi = fi_dupinfo(info);
	int ret;

	fi->domain_attr->data_progress = FI_PROGRESS_AUTO;
	fi->domain_attr->control_progress = FI_PROGRESS_AUTO;
	ret = open_domain_with(fi, fid);
	fi_freeinfo(fi);
	return ret;
}

static int open_av_named(const char *name, void **map_addr, struct fid **fid)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .count = 16, .name = (char *) name };
	struct fid_av *av = NULL;
	int ret = fi_av_open(domain, &attr, &av, NULL);

	*map_addr = attr.map_addr;
	return *fid = av ? &av->fid : NULL, ret;
}

static int open_av(struct fid **fid)
{
	void *map_addr;

	return open_av_named(NULL, &map_addr, fid);
}

/* fi_av(3): mrail fills in a named AV's map_addr; after a failed open it
 * must not point into a region unmapped again, nor the region stay. */
static int open_named_av(struct fid **fid)
{
	char name[64], path[128];
	void *map_addr;
	struct stat st;
	int ret;

	snprintf(name, sizeof(name), "unwind.%d", (int) getpid());
	snprintf(path, sizeof(path), "/dev/shm/mrail_av.%u.%s", (unsigned) getuid(), name);
	ret = open_av_named(name, &map_addr, fid);
	if (ret)
		check_what(!map_addr && stat(path, &st), "named_av", "after the "
			   "failed open map_addr is %p (want NULL) and %s %s", map_addr,
			   path, stat(path, &st) ? "is gone" : "is left behind");
	else
		check_what(map_addr != NULL, "named_av", "an open returns a map_addr");
	return ret;
}

static int open_cq(struct fid **fid)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD };
	struct fid_cq *cq = NULL;
	int ret = fi_cq_open(domain, &attr, &cq, NULL);

	return *fid = cq ? &cq->fid : NULL, ret;
}

static int open_cntr(struct fid **fid)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_FD };
	struct fid_cntr *cntr = NULL;
	int ret = fi_cntr_open(domain, &attr, &cntr, NULL);

	return *fid = cntr ? &cntr->fid : NULL, ret;
}

static int open_eq(struct fid **fid)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD };
	struct fid_eq *eq = NULL;
	int ret = fi_eq_open(fabric, &attr, &eq, NULL);

	return *fid = eq ? &eq->fid : NULL, ret;
}

static int open_mr(struct fid **fid)
{
	static uint8_t buf[4096];
	struct fid_mr *mr = NULL;
	int ret = fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_READ | FI_REMOTE_WRITE,
			    0, 0x5eed, 0, &mr, NULL);

	return *fid = mr ? &mr->fid : NULL, ret;
}

/* An endpoint on the domain, bound to av and one CQ, not yet enabled. */
static struct fid_ep *ep;
static struct fid_cq *ep_cq;
static struct fid_av *ep_av;

static int ep_open_bound(struct fid_av *av)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_MSG };
	int ret;

	ep_av = av;
	ret = fi_cq_open(domain, &attr, &ep_cq, NULL);
	if (!ret)
		ret = fi_endpoint(domain, info, &ep, NULL);
	if (!ret)
		ret = fi_ep_bind(ep, &av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(ep, &ep_cq->fid, FI_TRANSMIT | FI_RECV);
	return ret;
}

static void ep_close(void)
{
	if (ep)
		fi_close(&ep->fid);
	if (ep_cq)
		fi_close(&ep_cq->fid);
	ep = NULL;
	ep_cq = NULL;
}

/* A message to the endpoint's own address, checked byte for byte, with
 * exactly one send and one receive completion. */
static void send_to_self(const char *what)
{
	struct fi_cq_msg_entry comp[4];
	uint8_t sbuf[300], rbuf[sizeof(sbuf)] = { 0 };
	char addr[256];
	size_t len = sizeof(addr);
	fi_addr_t self = FI_ADDR_NOTAVAIL;
	int got = 0, ret, i;
	ssize_t n;
	time_t end = time(NULL) + 10;

	check_pattern_fill(sbuf, sizeof(sbuf), 42);
	ret = fi_getname(&ep->fid, addr, &len);
	if (!ret && fi_av_insert(ep_av, addr, 1, &self, 0, NULL) != 1)
		ret = -FI_EINVAL;
	if (!ret)
		ret = (int) fi_recv(ep, rbuf, sizeof(rbuf), NULL, self, rbuf);
	/* The first send to a peer may wait for its rails' connections:
	 * reading the CQ drives them. */
	while (!ret && (n = fi_send(ep, sbuf, sizeof(sbuf), NULL, self, sbuf)) &&
	       time(NULL) < end) {
		if (n != -FI_EAGAIN)
			ret = (int) n;
		else if ((n = fi_cq_read(ep_cq, comp + got, 1)) > 0)
			got++;
	}
	while (!ret && got < 2 && time(NULL) < end) {
		n = fi_cq_read(ep_cq, comp + got, 1);
		if (n > 0)
			got++;
		else if (n != -FI_EAGAIN)
			ret = (int) n;
	}
	/* Anything more would be a completion too many. */
	for (i = 0; !ret && i < 20; i++) {
		usleep(5000);
		if (fi_cq_read(ep_cq, comp + 2, 1) != -FI_EAGAIN)
			got++;
	}
	check_what(!ret && got == 2 && ((comp[0].op_context == sbuf &&
					 comp[1].op_context == rbuf) ||
					(comp[0].op_context == rbuf &&
					 comp[1].op_context == sbuf)) &&
		   check_pattern_mismatch(rbuf, sizeof(rbuf), 42) == sizeof(rbuf),
		   what, "a message to itself arrives byte for byte with one send "
		   "and one receive completion (%s, %d completions, first wrong "
		   "byte %zu of %zu)", err_str(ret), got,
		   check_pattern_mismatch(rbuf, sizeof(rbuf), 42), sizeof(rbuf));
}

/* The AV an open_av fid is: struct fid_av begins with its fid (libfabric
 * 2.x offers applications no container_of). */
static struct fid_av *av_of(struct fid *fid)
{
	return (struct fid_av *) fid;
}

/* The retried AV works: an endpoint bound to it sends to itself. */
static void use_av(struct fid *fid)
{
	int ret = ep_open_bound(av_of(fid));

	if (!ret)
		ret = fi_enable(ep);
	check_what(ret == 0, "av", "an endpoint on the retried AV: %s", err_str(ret));
	if (!ret)
		send_to_self("av");
	ep_close();
}

/* fi_enable: the last rail cannot open its CQ. Then it works. */
static void test_enable(int want)
{
	struct fid *av_fid = NULL;
	size_t heap;
	int fds, ret;

	ret = open_av(&av_fid);
	if (!ret)
		ret = ep_open_bound(av_of(av_fid));
	if (!ret)
		ret = fi_enable(ep);
	check_what(ret == 0, "enable", "a first endpoint: %s", err_str(ret));
	ep_close();
	if (ret)
		goto out;
	ret = ep_open_bound(ep_av);
	fds = count_fds();
	heap = heap_in_use();
	if (!ret)
		ret = fi_enable(ep);
	check_what(ret == want && count_fds() == fds && heap_in_use() == heap,
		   "enable", "fi_enable with the fault returns %d (want %d); %d fds "
		   "open and %zu heap bytes in use, as before: %d and %zu", ret,
		   want, count_fds(), heap_in_use(), fds, heap);
	ret = fi_enable(ep);
	check_what(ret == 0, "enable", "fi_enable again succeeds: %s", err_str(ret));
	if (!ret)
		send_to_self("enable");
	ep_close();
out:
	if (av_fid)
		fi_close(av_fid);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name, *op;
		open_fn open;
	} cases[] = {
		{ "fabric", "fabric", open_fabric },
		{ "domain", "domain", open_domain },
		{ "progress", "eventfd", open_progress_domain },
		{ "av", "av", open_av },
		{ "named_av", "av", open_named_av },
		{ "cq", "eventfd", open_cq },
		{ "cntr", "eventfd", open_cntr },
		{ "eq", "eventfd", open_eq },
		{ "mr", "mr", open_mr },
		{ "enable", "cq", NULL },
		{ "enable_ep", "ep", NULL },
	};
	const size_t ncases = sizeof(cases) / sizeof(cases[0]);
	struct fi_info *hints;
	const char *which = NULL, *p;
	char fault[64];
	size_t i, per;
	int c, ret, want;

	while ((c = getopt(argc, argv, "t:v")) != -1) {
		if (c == 't')
			which = optarg;
		else if (c == 'v')
			check_verbose = true;
	}
	for (i = 0; which && i < ncases && strcmp(which, cases[i].name); i++)
		;
	if (!which || i == ncases) {
		fprintf(stderr, "usage: %s -t fabric|domain|progress|av|named_av|cq|"
			"cntr|eq|mr|enable|enable_ep [-v]\n", argv[0]);
		return 2;
	}

	hints = fi_allocinfo();
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	check_what(ret == 0, "fi_getinfo(mrail)", "%s", err_str(ret));
	if (ret)
		return check_summary("fi_mrail_unwind");
	/* The domain is named "mr0+mr1": one port per rail. */
	for (rails = 1, p = info->domain_attr->name; *p; p++)
		rails += *p == '+';
	/* The first attempt opens a rail's object once per rail, the next
	 * two fail on their last rail: every rail before it has to be undone.
	 * fi_enable fails once. */
	per = strcmp(cases[i].op, "eventfd") ? rails : 1;
	snprintf(fault, sizeof(fault), "%s:%zu,%zu", cases[i].op, 2 * per,
		 cases[i].open ? 3 * per : 0);
	setenv("MRAIL_FAULT", fault, 1);
	printf("%s: %zu rails, fault %s\n", cases[i].name, rails, fault);
	want = strcmp(cases[i].op, "eventfd") ? -FI_ENOSPC : -FI_EMFILE;

	/* What the object under test is opened on. */
	ret = cases[i].open == open_fabric ? 0 :
	      fi_fabric(info->fabric_attr, &fabric, NULL);
	if (!ret && fabric && cases[i].open != open_domain &&
	    cases[i].open != open_progress_domain && cases[i].open != open_eq)
		ret = fi_domain(fabric, info, &domain, NULL);
	check_what(ret == 0, "what the object is opened on", "%s", err_str(ret));
	if (ret)
		goto out;
	if (!cases[i].open)
		test_enable(want);
	else
		fail_then_retry(which, cases[i].open, want,
				cases[i].open == open_av ? use_av : NULL);
out:
	check_close(domain ? &domain->fid : NULL, "close the domain");
	check_close(fabric ? &fabric->fid : NULL, "close the fabric");
	fi_freeinfo(info);
	return check_summary("fi_mrail_unwind");
}
