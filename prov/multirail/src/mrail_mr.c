/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory registration. mrail's domain has mr_mode 0: the application
 * chooses each region's key (requested_key), unique within the domain, and
 * peers address a region by offset from 0. An mrail MR registers the
 * memory on every rail's domain; a rail that takes requested keys gets the
 * same key, a rail that chooses its own (FI_MR_PROV_KEY) records its key in
 * rail_keys for the data path to translate. The domain finds a region by
 * key (mrail_mr_lookup) for RMA to come.
 *
 * fi_mr_desc is the mrail MR itself: mrail needs no descriptor for local
 * buffers (no FI_MR_LOCAL), but one passed back leads to the rails' own.
 */
#include "mrail.h"
#include "mrail_cq.h"
#include "mrail_mr.h"

#include <stdlib.h>
#include <string.h>

#include "mr_range.h"

#define MRAIL_MR_FLAGS FI_RMA_EVENT

static struct fi_ops mrail_mr_fi_ops;

struct mrail_mr *mrail_mr_lookup(struct mrail_domain *domain, uint64_t key)
{
	struct mrail_mr *mr = NULL;

	HASH_FIND(hh, mrail_domain_objs(domain)->mr_by_key, &key, sizeof(key), mr);
	return mr;
}

static void mr_close_rails(struct mrail_mr *mr)
{
	size_t rail;
	int ret;

	for (rail = 0; rail < mr->rail_count; rail++) {
		if (!mr->rail_mrs[rail])
			continue;
		ret = fi_close(&mr->rail_mrs[rail]->fid);
		if (ret)
			MRAIL_WARN(FI_LOG_MR, "rail %zu: cannot deregister memory: "
				   "%s\n", rail + 1, fi_strerror(-ret));
		mr->rail_mrs[rail] = NULL;
	}
}

/* Registers mr's memory on one rail under mr's key (lock held). */
static int mr_reg_rail(struct mrail_mr *mr, size_t rail)
{
	struct mrail_domain *domain = mr->domain;
	const struct mrail_rail *spec = &domain->fabric->rails.rails[rail];
	uint64_t mode = spec->info->domain_attr->mr_mode;
	int ret;

	if (mode & FI_MR_ENDPOINT) {
		MRAIL_WARN(FI_LOG_MR, "rail %zu (%s@%s) binds memory regions to "
			   "endpoints (FI_MR_ENDPOINT), which mrail's domain-wide "
			   "regions cannot do yet; use rails without it\n",
			   rail + 1, spec->spec.stack, spec->port);
		return -FI_ENOSYS;
	}
	ret = fi_mr_reg(domain->rail_domains[rail], mr->base, mr->len, mr->access,
			0, mr->key, 0, &mr->rail_mrs[rail], NULL);
	if (ret) {
		MRAIL_WARN(FI_LOG_MR, "rail %zu (%s@%s): cannot register %zu bytes "
			   "at %p with key %#llx: %s; the region is not registered "
			   "(the rails before it deregistered it again): for a "
			   "rail that pins memory raise RLIMIT_MEMLOCK (ulimit -l) "
			   "or register less\n", rail + 1, spec->spec.stack,
			   spec->port, mr->len, mr->base,
			   (unsigned long long) mr->key, fi_strerror(-ret));
		return ret;
	}
	mr->rail_desc[rail] = fi_mr_desc(mr->rail_mrs[rail]);
	mr->rail_keys[rail] = fi_mr_key(mr->rail_mrs[rail]);
	/* Only a key peers use is translated: for a region they cannot
	 * reach, libfabric 2.x's rails give none (FI_KEY_NOTAVAIL). */
	if (mr->rail_keys[rail] != mr->key &&
	    (mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		MRAIL_INFO(FI_LOG_MR, "rail %zu (%s@%s) %s: mrail key %#llx is rail "
			   "key %#llx there, which RMA over this rail must use "
			   "(key translation)\n", rail + 1, spec->spec.stack, spec->port,
			   (mode & FI_MR_PROV_KEY) ? "chooses its own keys" :
			   "did not take the requested key",
			   (unsigned long long) mr->key,
			   (unsigned long long) mr->rail_keys[rail]);
	return 0;
}

/* Checks what fi_mr_reg* share; the region is [base, base + len). */
static int mr_check_args(const void *base, size_t len, uint64_t access,
			 uint64_t offset, uint64_t requested_key, uint64_t flags)
{
	if (flags & ~MRAIL_MR_FLAGS)
		return -FI_EBADFLAGS;
	if (access & ~MRAIL_MR_ACCESS) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_reg: access bits %#llx are not "
			   "supported; use FI_SEND, FI_RECV, FI_READ, FI_WRITE, "
			   "FI_REMOTE_READ and FI_REMOTE_WRITE\n",
			   (unsigned long long) (access & ~MRAIL_MR_ACCESS));
		return -FI_EINVAL;
	}
	if (offset) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_reg: offset is reserved and must be 0\n");
		return -FI_EINVAL;
	}
	if (!mrail_mr_region_valid((uintptr_t) base, len)) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_reg: %zu bytes at %p is not a region "
			   "(the length must be > 0 and the region must not wrap)\n",
			   len, base);
		return -FI_EINVAL;
	}
	if (requested_key == FI_KEY_NOTAVAIL) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_reg: key %#llx is FI_KEY_NOTAVAIL, "
			   "which no region can have\n",
			   (unsigned long long) requested_key);
		return -FI_EKEYREJECTED;
	}
	return 0;
}

/* Reports a registration through the domain's EQ when it is bound with
 * FI_REG_MR (lock held); the region is already the application's. */
static void mr_report_async(struct mrail_mr *mr, void *context)
{
	struct mrail_domain_objs *objs = mrail_domain_objs(mr->domain);
	struct fi_eq_entry entry = {
		.fid = &mr->mr_fid.fid,
		.context = context,
	};
	int ret;

	if (!objs->reg_mr_async)
		return;
	ret = mrail_eq_write_event(objs->eq, FI_MR_COMPLETE, &entry, sizeof(entry), 0);
	if (ret)
		MRAIL_WARN(FI_LOG_MR, "cannot report the registration of key %#llx "
			   "on the domain's EQ: %s\n", (unsigned long long) mr->key,
			   fi_strerror(-ret));
}

static int mr_register(struct mrail_domain *domain, const void *base, size_t len,
		       uint64_t access, uint64_t offset, uint64_t requested_key,
		       uint64_t flags, struct fid_mr **mr_fid, void *context)
{
	struct mrail_domain_objs *objs = mrail_domain_objs(domain);
	unsigned int before;
	struct mrail_mr *mr;
	size_t rail;
	int ret;

	ret = mr_check_args(base, len, access, offset, requested_key, flags);
	if (ret)
		return ret;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->domain = domain;
	mr->key = requested_key;
	mr->base = (void *) base;
	mr->len = len;
	mr->access = access;
	mr->rail_count = domain->fabric->rails.count;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = context;
	mr->mr_fid.fid.ops = &mrail_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = requested_key;

	mrail_domain_lock(domain);
	if (mrail_mr_lookup(domain, requested_key)) {
		MRAIL_INFO(FI_LOG_MR, "fi_mr_reg: key %#llx is already in use in "
			   "this domain; request another key\n",
			   (unsigned long long) requested_key);
		ret = -FI_ENOKEY;
		goto err;
	}
	for (rail = 0; rail < mr->rail_count; rail++) {
		ret = mr_reg_rail(mr, rail);
		if (ret)
			goto err;
	}
	before = HASH_COUNT(objs->mr_by_key);
	HASH_ADD(hh, objs->mr_by_key, key, sizeof(mr->key), mr);
	if (HASH_COUNT(objs->mr_by_key) == before) {
		ret = -FI_ENOMEM;
		goto err;
	}
	domain->refs++;
	*mr_fid = &mr->mr_fid;
	mr_report_async(mr, context);
	pthread_mutex_unlock(&domain->lock);
	return 0;
err:
	mr_close_rails(mr);
	pthread_mutex_unlock(&domain->lock);
	free(mr);
	return ret;
}

int mrail_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		 uint64_t offset, uint64_t requested_key, uint64_t flags,
		 struct fid_mr **mr, void *context)
{
	struct mrail_domain *domain = container_of(fid, struct mrail_domain,
						   domain_fid.fid);

	mrail_corelib_thread_enter();
	return mr_register(domain, buf, len, access, offset, requested_key, flags,
			   mr, context);
}

/* One IO vector per region: every rail of this release takes one
 * (mr_iov_limit 1), and a region is then one contiguous range. */
int mrail_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count != 1 || !iov) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_regv: mrail registers exactly 1 IO "
			   "vector per region (mr_iov_limit), not %zu; register "
			   "each buffer on its own\n", iov ? count : 0);
		return -FI_EINVAL;
	}
	return mrail_mr_reg(fid, iov[0].iov_base, iov[0].iov_len, access, offset,
			    requested_key, flags, mr, context);
}

int mrail_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		     uint64_t flags, struct fid_mr **mr)
{
	if (!attr)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_regattr: mrail registers host memory "
			   "only (FI_HMEM_SYSTEM), not %s\n",
			   fi_tostr(&attr->iface, FI_TYPE_HMEM_IFACE));
		return -FI_ENOSYS;
	}
	if (attr->auth_key_size) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_regattr: mrail has no authorization "
			   "keys; set auth_key_size to 0\n");
		return -FI_EINVAL;
	}
	return mrail_mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
			     attr->offset, attr->requested_key, flags, mr,
			     attr->context);
}

/*
 * A counter: it counts the peers' accesses to this region of the kinds in
 * flags (FI_REMOTE_WRITE: RMA writes and atomics that write, FI_REMOTE_READ:
 * RMA reads and fetching atomics), each once it is done at this target
 * (mrail_rma_target_complete). One counter per region; binding it again
 * adds kinds. Nothing else binds: regions belong to the domain (mr_mode has
 * no FI_MR_ENDPOINT).
 */
static int mrail_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mrail_mr *mr = container_of(fid, struct mrail_mr, mr_fid.fid);
	struct mrail_cntr *cntr = mrail_cntr_from_fid(bfid);

	if (!cntr) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_bind: mrail's regions bind only to "
			   "mrail counters; they belong to the domain (mr_mode "
			   "has no FI_MR_ENDPOINT)\n");
		return -FI_EINVAL;
	}
	if (flags & ~(FI_REMOTE_WRITE | FI_REMOTE_READ)) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_bind: flags %#llx; a counter counts "
			   "FI_REMOTE_WRITE and/or FI_REMOTE_READ\n",
			   (unsigned long long) flags);
		return -FI_EBADFLAGS;
	}
	if (!flags) {
		MRAIL_WARN(FI_LOG_MR, "fi_mr_bind: say which accesses the counter "
			   "counts (FI_REMOTE_WRITE, FI_REMOTE_READ)\n");
		return -FI_EINVAL;
	}
	mrail_domain_lock(mr->domain);
	if (mr->cntr && mr->cntr != cntr) {
		pthread_mutex_unlock(&mr->domain->lock);
		MRAIL_WARN(FI_LOG_MR, "fi_mr_bind: this region already counts on "
			   "another counter; mrail keeps one per region\n");
		return -FI_EBUSY;
	}
	if (!mr->cntr)
		mrail_cntr_hold(cntr);
	mr->cntr = cntr;
	mr->cntr_flags |= flags;
	pthread_mutex_unlock(&mr->domain->lock);
	return 0;
}

/*
 * FI_ENABLE: regions are enabled when registered (no FI_MR_RMA_EVENT or
 * FI_MR_ENDPOINT), so there is nothing to do. FI_REFRESH: mrail's domain
 * has no FI_MR_MMU_NOTIFY; the range must still lie inside the region, and
 * rails that want the notification get it.
 */
static int mr_refresh(struct mrail_mr *mr, const struct fi_mr_modify *modify)
{
	const struct fi_mr_attr *attr = &modify->attr;
	uint64_t base = (uintptr_t) mr->base;
	size_t i, rail;
	int ret;

	if (modify->flags)
		return -FI_EBADFLAGS;
	if (attr->iov_count && !attr->mr_iov)
		return -FI_EINVAL;
	for (i = 0; i < attr->iov_count; i++) {
		if (!mrail_mr_range_within(base, mr->len,
					   (uintptr_t) attr->mr_iov[i].iov_base,
					   attr->mr_iov[i].iov_len, NULL)) {
			MRAIL_WARN(FI_LOG_MR, "fi_mr_refresh: IO vector %zu is not "
				   "inside the region\n", i);
			return -FI_EINVAL;
		}
	}
	for (rail = 0; rail < mr->rail_count; rail++) {
		if (!(mr->domain->fabric->rails.rails[rail].info->domain_attr->mr_mode &
		      FI_MR_MMU_NOTIFY))
			continue;
		ret = fi_mr_refresh(mr->rail_mrs[rail], attr->mr_iov, attr->iov_count, 0);
		if (ret) {
			MRAIL_WARN(FI_LOG_MR, "rail %zu: fi_mr_refresh failed: %s\n",
				   rail + 1, fi_strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int mrail_mr_control(struct fid *fid, int command, void *arg)
{
	struct mrail_mr *mr = container_of(fid, struct mrail_mr, mr_fid.fid);
	int ret;

	switch (command) {
	case FI_ENABLE:
		return 0;
	case FI_REFRESH:
		if (!arg)
			return -FI_EINVAL;
		mrail_domain_lock(mr->domain);
		ret = mr_refresh(mr, arg);
		pthread_mutex_unlock(&mr->domain->lock);
		return ret;
	default:
		return -FI_ENOSYS;
	}
}

static int mrail_mr_close(struct fid *fid)
{
	struct mrail_mr *mr = container_of(fid, struct mrail_mr, mr_fid.fid);
	struct mrail_domain *domain = mr->domain;

	mrail_domain_lock(domain);
	HASH_DEL(mrail_domain_objs(domain)->mr_by_key, mr);
	if (mr->cntr)
		mrail_cntr_release(mr->cntr);
	mr_close_rails(mr);
	domain->refs--;
	pthread_mutex_unlock(&domain->lock);
	free(mr);
	return 0;
}

static struct fi_ops mrail_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_mr_close,
	.bind = mrail_mr_bind,
	.control = mrail_mr_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};
