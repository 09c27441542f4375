/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fabric: opens the core fabric of every rail.
 *
 * fi_fabric receives only the fabric attributes of mrail's offer, so the
 * rails are resolved again here, from the same FI_MRAIL_RAILS (or
 * discovery); the fabric name proves it is the same set.
 */
#include "mrail.h"
#include "mrail_cq.h"

#include <stdlib.h>
#include <string.h>

static void fabric_close_rails(struct mrail_fabric *fabric)
{
	size_t i;

	for (i = 0; i < fabric->rails.count; i++) {
		if (fabric->rail_fabrics[i])
			fi_close(&fabric->rail_fabrics[i]->fid);
		fabric->rail_fabrics[i] = NULL;
	}
}

static void fabric_free(struct mrail_fabric *fabric)
{
	fabric_close_rails(fabric);
	mrail_railset_release(&fabric->rails);
	free(fabric->name);
	free(fabric);
}

static int mrail_fabric_close(struct fid *fid)
{
	fabric_free(container_of(fid, struct mrail_fabric, fabric_fid.fid));
	return 0;
}

static struct fi_ops mrail_fabric_fi_ops;
static struct fi_ops_fabric mrail_fabric_ops;

int mrail_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric_fid,
		      void *context)
{
	struct mrail_fabric *fabric;
	size_t i;
	int ret;

	mrail_corelib_thread_enter();
	fabric = calloc(1, sizeof(*fabric));
	if (!fabric)
		return -FI_ENOMEM;
	ret = mrail_railset_resolve(MRAIL_FI_VERSION, NULL, 0, &fabric->rails);
	if (ret)
		goto err;
	fabric->name = mrail_railset_join_names(&fabric->rails, true);
	if (!fabric->name) {
		ret = -FI_ENOMEM;
		goto err;
	}
	if (attr->name && strcmp(attr->name, fabric->name)) {
		MRAIL_WARN(FI_LOG_FABRIC, "fabric \"%s\" is not the one mrail's "
			   "rails form now (\"%s\"): did FI_MRAIL_RAILS change "
			   "after fi_getinfo?\n", attr->name, fabric->name);
		ret = -FI_ENODATA;
		goto err;
	}

	for (i = 0; i < fabric->rails.count; i++) {
		ret = fabric->rails.lib->fabric(fabric->rails.rails[i].info->fabric_attr,
						&fabric->rail_fabrics[i], NULL);
		if (ret) {
			MRAIL_WARN(FI_LOG_FABRIC, "rail %zu (%s@%s): cannot open its "
				   "fabric: %s; no fabric was opened (the rails "
				   "before it closed theirs again): check this "
				   "rail's entry in FI_MRAIL_RAILS with fi_info -p "
				   "and the port, or leave the rail out\n", i + 1,
				   fabric->rails.rails[i].spec.stack,
				   fabric->rails.rails[i].port, fi_strerror(-ret));
			goto err;
		}
	}

	fabric->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fabric->fabric_fid.fid.context = context;
	fabric->fabric_fid.fid.ops = &mrail_fabric_fi_ops;
	fabric->fabric_fid.ops = &mrail_fabric_ops;
	fabric->fabric_fid.api_version = attr->api_version;
	*fabric_fid = &fabric->fabric_fid;
	return 0;
err:
	fabric_free(fabric);
	return ret;
}

static int mrail_fabric_no_pep(struct fid_fabric *fabric, struct fi_info *info,
			       struct fid_pep **pep, void *context)
{
	return -FI_ENOSYS;
}

static int mrail_fabric_no_wait(struct fid_fabric *fabric, struct fi_wait_attr *attr,
				struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

/*
 * 0 when the application may block on the native wait objects (FI_WAIT_FD)
 * of every CQ, counter and EQ in fids, -FI_EAGAIN when one of them has
 * something queued or needs progress first (see each object's trywait).
 */
static int mrail_fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
				int count)
{
	int i, ret;

	if (count < 0 || (count && !fids))
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		switch (fids[i] ? (int) fids[i]->fclass : -1) {
		case FI_CLASS_CQ:
			ret = mrail_cq_trywait(fids[i]);
			break;
		case FI_CLASS_CNTR:
			ret = mrail_cntr_trywait(fids[i]);
			break;
		case FI_CLASS_EQ:
			ret = mrail_eq_trywait(fids[i]);
			break;
		default:
			MRAIL_WARN(FI_LOG_FABRIC, "fi_trywait: object %d is not a "
				   "CQ, counter or EQ\n", i);
			ret = -FI_EINVAL;
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* fi_domain2: the flags (FI_PEER, ...) ask for sharing with a peer
 * provider, which mrail does not do; without flags it is fi_domain. */
static int mrail_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
				struct fid_domain **domain, uint64_t flags,
				void *context)
{
	if (flags) {
		MRAIL_WARN(FI_LOG_FABRIC, "fi_domain2: flags %#llx are not "
			   "supported; pass 0 or use fi_domain\n",
			   (unsigned long long) flags);
		return -FI_EBADFLAGS;
	}
	return mrail_domain_open(fabric, info, domain, context);
}

static struct fi_ops mrail_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_fabric_close,
	.bind = mrail_no_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static struct fi_ops_fabric mrail_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = mrail_domain_open,
	.passive_ep = mrail_fabric_no_pep,
	.eq_open = mrail_eq_open,
	.wait_open = mrail_fabric_no_wait,
	.trywait = mrail_fabric_trywait,
	.domain2 = mrail_fabric_domain2,
};
