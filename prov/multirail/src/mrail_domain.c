/*
 * Domain: opens the core domain of every rail, on that rail's fabric, with
 * the core offer the rail was resolved to.
 */
#include "mrail.h"

#include <stdlib.h>
#include <string.h>

static void domain_close_rails(struct mrail_domain *domain)
{
	size_t i;

	for (i = 0; i < domain->fabric->rails.count; i++) {
		if (domain->rail_domains[i])
			fi_close(&domain->rail_domains[i]->fid);
		domain->rail_domains[i] = NULL;
	}
}

static int mrail_domain_close(struct fid *fid)
{
	struct mrail_domain *domain =
		container_of(fid, struct mrail_domain, domain_fid.fid);

	/* libfabric's rule: children first. */
	if (domain->refs)
		return -FI_EBUSY;
	domain_close_rails(domain);
	pthread_mutex_destroy(&domain->lock);
	free(domain);
	return 0;
}

static bool domain_name_matches(const struct mrail_fabric *fabric,
				const struct fi_info *info)
{
	char *ours;
	bool same;

	if (!info->domain_attr || !info->domain_attr->name)
		return true;
	ours = mrail_railset_join_names(&fabric->rails, false);
	same = ours && !strcmp(ours, info->domain_attr->name);
	if (!same)
		MRAIL_WARN(FI_LOG_DOMAIN, "domain \"%s\" is not mrail's (\"%s\")\n",
			   info->domain_attr->name, ours ? ours : "?");
	free(ours);
	return same;
}

static struct fi_ops mrail_domain_fi_ops;
static struct fi_ops_domain mrail_domain_ops;
static struct fi_ops_mr mrail_domain_mr_ops;

int mrail_domain_open(struct fid_fabric *fabric_fid, struct fi_info *info,
		      struct fid_domain **domain_fid, void *context)
{
	struct mrail_fabric *fabric =
		container_of(fabric_fid, struct mrail_fabric, fabric_fid);
	struct mrail_domain *domain;
	size_t i;
	int ret;

	if (!domain_name_matches(fabric, info))
		return -FI_EINVAL;
	domain = calloc(1, sizeof(*domain));
	if (!domain)
		return -FI_ENOMEM;
	domain->fabric = fabric;
	pthread_mutex_init(&domain->lock, NULL);

	ret = mrail_railset_local_addr(&fabric->rails, &domain->local_addr);
	if (ret)
		goto err;
	for (i = 0; i < fabric->rails.count; i++) {
		ret = fi_domain(fabric->rail_fabrics[i], fabric->rails.rails[i].info,
				&domain->rail_domains[i], NULL);
		if (ret) {
			MRAIL_WARN(FI_LOG_DOMAIN, "rail %zu (%s@%s): cannot open its "
				   "domain: %s\n", i + 1,
				   fabric->rails.rails[i].spec.stack,
				   fabric->rails.rails[i].port, fi_strerror(-ret));
			goto err;
		}
	}

	domain->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	domain->domain_fid.fid.context = context;
	domain->domain_fid.fid.ops = &mrail_domain_fi_ops;
	domain->domain_fid.ops = &mrail_domain_ops;
	domain->domain_fid.mr = &mrail_domain_mr_ops;
	*domain_fid = &domain->domain_fid;
	return 0;
err:
	domain_close_rails(domain);
	pthread_mutex_destroy(&domain->lock);
	free(domain);
	return ret;
}

/* The objects beyond eager messaging are not part of this release. */
static int mrail_domain_no_ep(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_poll(struct fid_domain *domain, struct fi_poll_attr *attr,
				struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_stx(struct fid_domain *domain, struct fi_tx_attr *attr,
			       struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_srx(struct fid_domain *domain, struct fi_rx_attr *attr,
			       struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_atomic(struct fid_domain *domain,
				  enum fi_datatype datatype, enum fi_op op,
				  struct fi_atomic_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_collective(struct fid_domain *domain,
				      enum fi_collective_op coll,
				      struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_mr_reg(struct fid *fid, const void *buf, size_t len,
				  uint64_t access, uint64_t offset,
				  uint64_t requested_key, uint64_t flags,
				  struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_mr_regv(struct fid *fid, const struct iovec *iov,
				   size_t count, uint64_t access, uint64_t offset,
				   uint64_t requested_key, uint64_t flags,
				   struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

static int mrail_domain_no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
				      uint64_t flags, struct fid_mr **mr)
{
	return -FI_ENOSYS;
}

static struct fi_ops mrail_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_domain_close,
	.bind = mrail_no_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
};

static struct fi_ops_domain mrail_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = mrail_av_open,
	.cq_open = mrail_cq_open,
	.endpoint = mrail_ep_open,
	.scalable_ep = mrail_domain_no_ep,
	.cntr_open = mrail_cntr_open,
	.poll_open = mrail_domain_no_poll,
	.stx_ctx = mrail_domain_no_stx,
	.srx_ctx = mrail_domain_no_srx,
	.query_atomic = mrail_domain_no_atomic,
	.query_collective = mrail_domain_no_collective,
};

static struct fi_ops_mr mrail_domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mrail_domain_no_mr_reg,
	.regv = mrail_domain_no_mr_regv,
	.regattr = mrail_domain_no_mr_regattr,
};
