/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AV sets (fi_av_set(3)): an ordered list of an AV's addresses, local to
 * this process, from which fi_join_collective makes a collective group.
 * The list operations are core/coll.c's; this file checks the addresses
 * against the AV and keeps the list's memory.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_coll.h"
#include "coll.h"

#include <inttypes.h>
#include <stdlib.h>

struct mrail_av_set {
	struct fid_av_set set_fid;
	struct mrail_av *av;
	uint64_t *addrs;	/* fi_addr_t, in set order */
	size_t n, cap;
	fi_addr_t coll_addr;	/* what fi_av_set_addr returns */
};

/* Every set has its own address, so a join can tell whose it was given. */
static uint64_t next_set_serial;

static struct fi_ops mrail_av_set_fi_ops;
static struct fi_ops_av_set mrail_av_set_ops;

static struct mrail_av_set *set_of(const struct fid_av_set *fid)
{
	if (!fid || fid->fid.fclass != FI_CLASS_AV_SET ||
	    fid->fid.ops != &mrail_av_set_fi_ops)
		return NULL;
	return container_of(fid, struct mrail_av_set, set_fid);
}

int mrail_av_set_members(const struct fid_av_set *fid, struct mrail_av **av,
			 const uint64_t **addrs, size_t *n, fi_addr_t *coll_addr)
{
	struct mrail_av_set *set = set_of(fid);

	if (!set)
		return -FI_EINVAL;
	*av = set->av;
	*addrs = set->addrs;
	*n = set->n;
	*coll_addr = set->coll_addr;
	return 0;
}

static int set_reserve(struct mrail_av_set *set, size_t want)
{
	uint64_t *addrs;
	size_t cap = set->cap ? set->cap : 16;

	if (want <= set->cap)
		return 0;
	if (want > MRAIL_BARRIER_MAX_N)
		return -FI_ENOSPC;
	while (cap < want)
		cap *= 2;
	addrs = realloc(set->addrs, cap * sizeof(*addrs));
	if (!addrs)
		return -FI_ENOMEM;
	set->addrs = addrs;
	set->cap = cap;
	return 0;
}

/* An entry the application may name (not one it removed). */
static bool addr_in_av(struct mrail_av *av, fi_addr_t addr)
{
	return mrail_av_canon(av, addr) != FI_ADDR_NOTAVAIL;
}

static int mrail_av_set_insert(struct fid_av_set *fid, fi_addr_t addr)
{
	struct mrail_av_set *set = set_of(fid);
	int ret;

	if (!set)
		return -FI_EINVAL;
	mrail_domain_lock(set->av->domain);
	if (!addr_in_av(set->av, addr)) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_set_insert: address %" PRIu64
			   " is not in the AV\n", (uint64_t) addr);
		ret = -FI_EINVAL;
		goto out;
	}
	ret = set_reserve(set, set->n + 1);
	if (!ret)
		ret = mrail_addr_list_insert(set->addrs, &set->n, set->cap, addr);
	if (ret == -EALREADY) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_set_insert: address %" PRIu64
			   " is in the set already\n", (uint64_t) addr);
		ret = -FI_EINVAL;
	}
out:
	pthread_mutex_unlock(&set->av->domain->lock);
	return ret;
}

static int mrail_av_set_remove(struct fid_av_set *fid, fi_addr_t addr)
{
	struct mrail_av_set *set = set_of(fid);
	int ret;

	if (!set)
		return -FI_EINVAL;
	mrail_domain_lock(set->av->domain);
	ret = mrail_addr_list_remove(set->addrs, &set->n, addr) ? -FI_EINVAL : 0;
	pthread_mutex_unlock(&set->av->domain->lock);
	if (ret)
		MRAIL_WARN(FI_LOG_AV, "fi_av_set_remove: address %" PRIu64
			   " is not in the set\n", (uint64_t) addr);
	return ret;
}

/* Both sets must come from the same AV: their addresses mean nothing in
 * another. */
static int two_sets(struct fid_av_set *dst_fid, const struct fid_av_set *src_fid,
		    struct mrail_av_set **dst, struct mrail_av_set **src,
		    const char *call)
{
	*dst = set_of(dst_fid);
	*src = set_of(src_fid);
	if (!*dst || !*src)
		return -FI_EINVAL;
	if ((*dst)->av != (*src)->av) {
		MRAIL_WARN(FI_LOG_AV, "%s: the two AV sets belong to different "
			   "AVs\n", call);
		return -FI_EINVAL;
	}
	return 0;
}

static int mrail_av_set_union(struct fid_av_set *dst_fid,
			      const struct fid_av_set *src_fid)
{
	struct mrail_av_set *dst, *src;
	int ret;

	ret = two_sets(dst_fid, src_fid, &dst, &src, "fi_av_set_union");
	if (ret)
		return ret;
	mrail_domain_lock(dst->av->domain);
	ret = set_reserve(dst, dst->n + src->n);
	if (!ret)
		ret = mrail_addr_list_union(dst->addrs, &dst->n, dst->cap,
					    src->addrs, src->n) ? -FI_ENOSPC : 0;
	pthread_mutex_unlock(&dst->av->domain->lock);
	return ret;
}

static int mrail_av_set_intersect(struct fid_av_set *dst_fid,
				  const struct fid_av_set *src_fid)
{
	struct mrail_av_set *dst, *src;
	int ret;

	ret = two_sets(dst_fid, src_fid, &dst, &src, "fi_av_set_intersect");
	if (ret)
		return ret;
	mrail_domain_lock(dst->av->domain);
	mrail_addr_list_intersect(dst->addrs, &dst->n, src->addrs, src->n);
	pthread_mutex_unlock(&dst->av->domain->lock);
	return 0;
}

static int mrail_av_set_diff(struct fid_av_set *dst_fid,
			     const struct fid_av_set *src_fid)
{
	struct mrail_av_set *dst, *src;
	int ret;

	ret = two_sets(dst_fid, src_fid, &dst, &src, "fi_av_set_diff");
	if (ret)
		return ret;
	mrail_domain_lock(dst->av->domain);
	mrail_addr_list_diff(dst->addrs, &dst->n, src->addrs, src->n);
	pthread_mutex_unlock(&dst->av->domain->lock);
	return 0;
}

static int mrail_av_set_addr(struct fid_av_set *fid, fi_addr_t *coll_addr)
{
	struct mrail_av_set *set = set_of(fid);

	if (!set || !coll_addr)
		return -FI_EINVAL;
	*coll_addr = set->coll_addr;
	return 0;
}

static int mrail_av_set_close(struct fid *fid)
{
	struct mrail_av_set *set = container_of(fid, struct mrail_av_set,
						set_fid.fid);
	struct mrail_domain *domain = set->av->domain;

	mrail_domain_lock(domain);
	domain->refs--;
	pthread_mutex_unlock(&domain->lock);
	free(set->addrs);
	free(set);
	return 0;
}

/* The initial members: attr's range, or every address with FI_UNIVERSE. */
static int set_fill(struct mrail_av_set *set, const struct fi_av_set_attr *attr)
{
	struct mrail_av *av = set->av;
	char err[MRAIL_ERR_MAX];
	uint64_t addr;
	long len;
	int ret;

	if (attr->flags & FI_UNIVERSE) {
		for (addr = 0; addr < mrail_av_app_count(av); addr++) {
			/* One member per peer, however often it was
			 * inserted. */
			if (!addr_in_av(av, addr) ||
			    mrail_av_shown(av, mrail_av_canon(av, addr)) != addr)
				continue;
			ret = set_reserve(set, set->n + 1);
			if (ret)
				return ret;
			set->addrs[set->n++] = addr;
		}
		return 0;
	}
	if (attr->start_addr == FI_ADDR_NOTAVAIL &&
	    attr->end_addr == FI_ADDR_NOTAVAIL)
		return 0;
	if (av->type != FI_AV_TABLE) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_set: start_addr and end_addr need an "
			   "FI_AV_TABLE AV (fi_av_set(3)); set them to "
			   "FI_ADDR_NOTAVAIL and insert the addresses\n");
		return -FI_EINVAL;
	}
	len = mrail_addr_range_len(attr->start_addr, attr->end_addr,
				   attr->stride, attr->count, err, sizeof(err));
	if (len < 0) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_set: %s\n", err);
		return -FI_EINVAL;
	}
	ret = set_reserve(set, (size_t) len);
	if (ret)
		return ret;
	/* Addresses in the range that the AV does not hold are left out
	 * (fi_av_set(3): "valid addresses in the AV which fall within"). */
	for (addr = attr->start_addr; addr <= attr->end_addr;
	     addr += attr->stride) {
		if (addr_in_av(av, addr))
			set->addrs[set->n++] = addr;
		if (attr->end_addr - addr < attr->stride)
			break;
	}
	return 0;
}

int mrail_av_set_open(struct fid_av *av_fid, struct fi_av_set_attr *attr,
		      struct fid_av_set **set_fid, void *context)
{
	struct mrail_av *av = container_of(av_fid, struct mrail_av, av_fid);
	struct mrail_av_set *set;
	int ret;

	if (!attr || !set_fid)
		return -FI_EINVAL;
	if (attr->comm_key_size || attr->comm_key) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_set: mrail has no fabric manager, so "
			   "no communication keys: set comm_key_size to 0 and "
			   "insert the members\n");
		return -FI_ENOSYS;
	}
	set = calloc(1, sizeof(*set));
	if (!set)
		return -FI_ENOMEM;
	set->av = av;
	mrail_domain_lock(av->domain);
	ret = set_fill(set, attr);
	if (ret) {
		pthread_mutex_unlock(&av->domain->lock);
		free(set->addrs);
		free(set);
		return ret;
	}
	set->coll_addr = MRAIL_COLL_SET_ADDR_BIT |
			__atomic_add_fetch(&next_set_serial, 1, __ATOMIC_RELAXED);
	av->domain->refs++;
	pthread_mutex_unlock(&av->domain->lock);

	set->set_fid.fid.fclass = FI_CLASS_AV_SET;
	set->set_fid.fid.context = context;
	set->set_fid.fid.ops = &mrail_av_set_fi_ops;
	set->set_fid.ops = &mrail_av_set_ops;
	*set_fid = &set->set_fid;
	return 0;
}

static struct fi_ops mrail_av_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_av_set_close,
	.bind = mrail_no_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static struct fi_ops_av_set mrail_av_set_ops = {
	.size = sizeof(struct fi_ops_av_set),
	.set_union = mrail_av_set_union,
	.intersect = mrail_av_set_intersect,
	.diff = mrail_av_set_diff,
	.insert = mrail_av_set_insert,
	.remove = mrail_av_set_remove,
	.addr = mrail_av_set_addr,
};
