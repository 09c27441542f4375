/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Failure injection for mrail's open paths, with no hook in mrail itself:
 * preloaded (LD_PRELOAD) into a program whose mrail opens its rails through
 * the application's libfabric (FI_MRAIL_PRIVATE_CORE=0; the private copy
 * lives in a link-map namespace a preloaded library does not reach), it
 * makes the K-th call of one core operation that mrail makes fail.
 *
 *   MRAIL_FAULT=OP:K[,K...]   OP is fabric, domain, av, cq, cntr, ep, mr
 *                             or eventfd; K a call that fails
 *
 * fabric and eventfd are the functions of those names called from mrail's
 * DSO; the others are the ops of the rail fabrics and domains mrail opened
 * (fi_domain, fi_av_open, fi_cq_open, fi_cntr_open, fi_endpoint, and
 * fi_mr_reg/regv/regattr), counted only there: what a utility provider
 * opens inside a rail is not mrail's step. The failing call returns
 * -FI_ENOSPC (eventfd: -1 with EMFILE), so that a test can tell the core's
 * error from one mrail made up. Calls are counted from 1, per OP, for the
 * whole process; every other call passes through unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

static pthread_mutex_t shim_lock = PTHREAD_MUTEX_INITIALIZER;
static char fault_op[16];
static long fault_at[8];
static long calls[8];

static const char *const op_names[] = {
	"fabric", "domain", "av", "cq", "cntr", "ep", "mr", "eventfd",
};

enum { OP_FABRIC, OP_DOMAIN, OP_AV, OP_CQ, OP_CNTR, OP_EP, OP_MR, OP_EVENTFD };

static void shim_parse(void)
{
	const char *spec = getenv("MRAIL_FAULT");
	const char *colon;
	char *end;
	size_t i;

	if (!spec || !(colon = strchr(spec, ':')) ||
	    (size_t) (colon - spec) >= sizeof(fault_op))
		return;
	memcpy(fault_op, spec, (size_t) (colon - spec));
	for (i = 0, end = (char *) colon; i < 8 && (*end == ':' || *end == ','); i++)
		fault_at[i] = strtol(end + 1, &end, 10);
}

/* True when this call of op is one to fail. */
static bool shim_fails(int op)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	bool fail = false;
	long n;
	size_t i;

	pthread_once(&once, shim_parse);
	pthread_mutex_lock(&shim_lock);
	n = ++calls[op];
	for (i = 0; i < 8 && fault_at[i]; i++)
		fail |= n == fault_at[i] && !strcmp(fault_op, op_names[op]);
	pthread_mutex_unlock(&shim_lock);
	if (fail)
		fprintf(stderr, "fault_shim: call %ld of %s fails\n", n,
			op_names[op]);
	return fail;
}

static bool called_from_mrail(const void *ret_addr)
{
	Dl_info info;

	return dladdr(ret_addr, &info) && info.dli_fname &&
	       strstr(info.dli_fname, "libmrail-fi");
}

/* The ops tables of wrapped objects: the copy each object points to, and
 * the provider's original its calls go on to. A handful of providers at
 * most, and never freed: objects of every age share them. */
#define SHIM_TABLES 16
static struct {
	void *orig, *copy;
} tables[SHIM_TABLES];

static void *shim_table(void *orig, size_t size, void (*patch)(void *))
{
	void *copy = NULL;
	size_t i;

	pthread_mutex_lock(&shim_lock);
	for (i = 0; i < SHIM_TABLES && tables[i].orig; i++) {
		if (tables[i].orig == orig || tables[i].copy == orig) {
			copy = tables[i].copy;
			goto out;
		}
	}
	if (i == SHIM_TABLES || !(copy = calloc(1, size)))
		goto out;
	/* The provider may be older than these headers: copy what it has. */
	memcpy(copy, orig, *(const size_t *) orig < size ? *(const size_t *) orig : size);
	patch(copy);
	tables[i].orig = orig;
	tables[i].copy = copy;
out:
	pthread_mutex_unlock(&shim_lock);
	return copy ? copy : orig;
}

static const void *shim_orig(const void *copy)
{
	const void *orig = NULL;
	size_t i;

	pthread_mutex_lock(&shim_lock);
	for (i = 0; i < SHIM_TABLES && tables[i].orig; i++)
		if (tables[i].copy == copy)
			orig = tables[i].orig;
	pthread_mutex_unlock(&shim_lock);
	return orig;
}

#define ORIG(type, ptr) ((const type *) shim_orig(ptr))

static int shim_av_open(struct fid_domain *d, struct fi_av_attr *attr,
			struct fid_av **av, void *context)
{
	if (shim_fails(OP_AV))
		return -FI_ENOSPC;
	return ORIG(struct fi_ops_domain, d->ops)->av_open(d, attr, av, context);
}

static int shim_cq_open(struct fid_domain *d, struct fi_cq_attr *attr,
			struct fid_cq **cq, void *context)
{
	if (shim_fails(OP_CQ))
		return -FI_ENOSPC;
	return ORIG(struct fi_ops_domain, d->ops)->cq_open(d, attr, cq, context);
}

static int shim_cntr_open(struct fid_domain *d, struct fi_cntr_attr *attr,
			  struct fid_cntr **cntr, void *context)
{
	if (shim_fails(OP_CNTR))
		return -FI_ENOSPC;
	return ORIG(struct fi_ops_domain, d->ops)->cntr_open(d, attr, cntr, context);
}

static int shim_endpoint(struct fid_domain *d, struct fi_info *info,
			 struct fid_ep **ep, void *context)
{
	if (shim_fails(OP_EP))
		return -FI_ENOSPC;
	return ORIG(struct fi_ops_domain, d->ops)->endpoint(d, info, ep, context);
}

static void patch_domain_ops(void *table)
{
	struct fi_ops_domain *ops = table;

	ops->av_open = shim_av_open;
	ops->cq_open = shim_cq_open;
	ops->cntr_open = shim_cntr_open;
	ops->endpoint = shim_endpoint;
}

/* The fid of a domain's memory registrations is the domain's own, the
 * first member of struct fid_domain (libfabric 2.x offers applications no
 * container_of). */
static const struct fi_ops_mr *mr_orig(struct fid *fid)
{
	return ORIG(struct fi_ops_mr, ((struct fid_domain *) fid)->mr);
}

static int shim_mr_reg(struct fid *fid, const void *buf, size_t len,
		       uint64_t access, uint64_t offset, uint64_t key,
		       uint64_t flags, struct fid_mr **mr, void *context)
{
	if (shim_fails(OP_MR))
		return -FI_ENOSPC;
	return mr_orig(fid)->reg(fid, buf, len, access, offset, key, flags, mr,
				 context);
}

static int shim_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
			uint64_t access, uint64_t offset, uint64_t key,
			uint64_t flags, struct fid_mr **mr, void *context)
{
	if (shim_fails(OP_MR))
		return -FI_ENOSPC;
	return mr_orig(fid)->regv(fid, iov, count, access, offset, key, flags,
				  mr, context);
}

static int shim_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			   uint64_t flags, struct fid_mr **mr)
{
	if (shim_fails(OP_MR))
		return -FI_ENOSPC;
	return mr_orig(fid)->regattr(fid, attr, flags, mr);
}

static void patch_mr_ops(void *table)
{
	struct fi_ops_mr *ops = table;

	ops->reg = shim_mr_reg;
	ops->regv = shim_mr_regv;
	ops->regattr = shim_mr_regattr;
}

static int shim_domain(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **domain, void *context)
{
	int ret;

	if (shim_fails(OP_DOMAIN))
		return -FI_ENOSPC;
	ret = ORIG(struct fi_ops_fabric, fabric->ops)->domain(fabric, info,
							      domain, context);
	if (ret)
		return ret;
	(*domain)->ops = shim_table((*domain)->ops, sizeof(struct fi_ops_domain),
				    patch_domain_ops);
	(*domain)->mr = shim_table((*domain)->mr, sizeof(struct fi_ops_mr),
				   patch_mr_ops);
	return 0;
}

static void patch_fabric_ops(void *table)
{
	((struct fi_ops_fabric *) table)->domain = shim_domain;
}

typedef int (*fabric_fn)(struct fi_fabric_attr *, struct fid_fabric **, void *);

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
	      void *context)
{
	static fabric_fn next;
	bool mine = called_from_mrail(__builtin_return_address(0));
	int ret;

	if (!next)
		next = (fabric_fn) dlsym(RTLD_NEXT, "fi_fabric");
	if (!next)
		return -FI_ENOSYS;
	if (mine && shim_fails(OP_FABRIC))
		return -FI_ENOSPC;
	ret = next(attr, fabric, context);
	if (!ret && mine)
		(*fabric)->ops = shim_table((*fabric)->ops,
					    sizeof(struct fi_ops_fabric),
					    patch_fabric_ops);
	return ret;
}

typedef int (*eventfd_fn)(unsigned int, int);

int eventfd(unsigned int initval, int flags)
{
	static eventfd_fn next;

	if (!next)
		next = (eventfd_fn) dlsym(RTLD_NEXT, "eventfd");
	if (called_from_mrail(__builtin_return_address(0)) &&
	    shim_fails(OP_EVENTFD)) {
		errno = EMFILE;
		return -1;
	}
	return next(initval, flags);
}
