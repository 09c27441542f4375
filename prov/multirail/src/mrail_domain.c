/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Domain: opens the core domain of every rail, on that rail's fabric, with
 * the core offer the rail was resolved to. It is allocated inside a struct
 * mrail_domain_objs, which adds what memory registration and the domain's
 * EQ need. Every object opened on it counts in refs, so the domain closes
 * only after them. With FI_PROGRESS_AUTO it owns the progress thread
 * (mrail_progress.c), started here and stopped on close.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_mr.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"
#include "mrail_coll.h"

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
	struct mrail_domain_objs *objs = mrail_domain_objs(domain);

	/* libfabric's rule: children first. */
	mrail_domain_lock(domain);
	if (domain->refs) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_DOMAIN, "fi_close: %zu objects (AVs, CQs, "
			   "endpoints, counters, memory regions) are still open on "
			   "this domain; close them first\n", domain->refs);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&domain->lock);
	mrail_progress_stop(domain);
	if (objs->eq)
		mrail_eq_detach(objs->eq);
	domain_close_rails(domain);
	pthread_mutex_destroy(&domain->lock);
	free(objs);
	return 0;
}

/* An EQ for the domain's asynchronous events; with MRAIL_BIND_REG_MR, memory
 * registrations are reported on it (FI_MR_COMPLETE). One EQ per domain. */
static int mrail_domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mrail_domain *domain =
		container_of(fid, struct mrail_domain, domain_fid.fid);
	struct mrail_domain_objs *objs = mrail_domain_objs(domain);
	struct mrail_eq *eq = mrail_eq_from_fid(bfid);
	int ret = 0;

	if (!eq) {
		MRAIL_WARN(FI_LOG_DOMAIN, "fi_domain_bind: a domain binds an "
			   "event queue opened on mrail's fabric, nothing else\n");
		return -FI_EINVAL;
	}
	if (flags & ~MRAIL_BIND_REG_MR)
		return -FI_EBADFLAGS;
	mrail_domain_lock(domain);
	if (objs->eq) {
		MRAIL_WARN(FI_LOG_DOMAIN, "fi_domain_bind: this domain already has "
			   "an event queue\n");
		ret = -FI_EINVAL;
	} else {
		objs->eq = eq;
		objs->reg_mr_async = flags & MRAIL_BIND_REG_MR;
		mrail_eq_attach(eq);
	}
	pthread_mutex_unlock(&domain->lock);
	return ret;
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
	struct mrail_domain_objs *objs;
	struct mrail_domain *domain;
	size_t i;
	int ret;

	mrail_corelib_thread_enter();
	if (!domain_name_matches(fabric, info))
		return -FI_EINVAL;
	objs = calloc(1, sizeof(*objs));
	if (!objs)
		return -FI_ENOMEM;
	domain = &objs->domain;
	domain->fabric = fabric;
	domain->progress_auto = info->domain_attr &&
		(info->domain_attr->data_progress == FI_PROGRESS_AUTO ||
		 info->domain_attr->control_progress == FI_PROGRESS_AUTO);
	mrail_domain_lock_init(&domain->lock);
	/* Checked by fi_getinfo: only a variable changed since then fails. */
	ret = mrail_idle_env(&domain->spin_ns);
	if (ret)
		goto err;

	ret = mrail_railset_local_addr(&fabric->rails, &domain->local_addr);
	if (ret)
		goto err;
	domain->addr_format = info->addr_format == FI_FORMAT_UNSPEC ?
			      FI_ADDR_MRAIL : info->addr_format;
	if (domain->addr_format != FI_ADDR_MRAIL &&
	    domain->addr_format != domain->local_addr.rails[0].format) {
		MRAIL_WARN(FI_LOG_DOMAIN, "fi_domain: address format %u is neither "
			   "mrail's nor the first rail's (%u); use the fi_info "
			   "fi_getinfo gave\n", info->addr_format,
			   domain->local_addr.rails[0].format);
		ret = -FI_EINVAL;
		goto err;
	}
	for (i = 0; i < fabric->rails.count; i++) {
		ret = fi_domain(fabric->rail_fabrics[i], fabric->rails.rails[i].info,
				&domain->rail_domains[i], NULL);
		if (ret) {
			MRAIL_WARN(FI_LOG_DOMAIN, "rail %zu (%s@%s): cannot open its "
				   "domain: %s; no domain was opened (the rails "
				   "before it closed theirs again): check this "
				   "rail's entry in FI_MRAIL_RAILS with fi_info -p "
				   "and the port, or leave the rail out\n", i + 1,
				   fabric->rails.rails[i].spec.stack,
				   fabric->rails.rails[i].port, fi_strerror(-ret));
			goto err;
		}
	}
	if (domain->progress_auto) {
		ret = mrail_progress_start(domain);
		if (ret)
			goto err;
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
	free(objs);
	return ret;
}

/* Deferred work queues (fi_trigger(3)); nothing else to control. */
static int mrail_domain_control(struct fid *fid, int command, void *arg)
{
	struct mrail_domain *domain =
		container_of(fid, struct mrail_domain, domain_fid.fid);

	return mrail_trigger_domain_control(domain, command, arg);
}

/* fi_endpoint2: the flags (FI_PEER, ...) ask for sharing with a peer
 * provider, which mrail does not do; without flags it is fi_endpoint. */
static int mrail_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
				  struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags) {
		MRAIL_WARN(FI_LOG_DOMAIN, "fi_endpoint2: flags %#llx are not "
			   "supported; pass 0 or use fi_endpoint\n",
			   (unsigned long long) flags);
		return -FI_EBADFLAGS;
	}
	return mrail_ep_open(domain, info, ep, context);
}

static struct fi_ops mrail_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_domain_close,
	.bind = mrail_domain_bind,
	.control = mrail_domain_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static struct fi_ops_domain mrail_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = mrail_av_open,
	.cq_open = mrail_cq_open,
	.endpoint = mrail_ep_open,
	.scalable_ep = mrail_sep_open,
	.cntr_open = mrail_cntr_open,
	.poll_open = mrail_poll_open,
	.stx_ctx = mrail_stx_open,
	.srx_ctx = mrail_srx_open,
	.query_atomic = mrail_query_atomic,
	.query_collective = mrail_query_collective,
	.endpoint2 = mrail_domain_endpoint2,
};

static struct fi_ops_mr mrail_domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mrail_mr_reg,
	.regv = mrail_mr_regv,
	.regattr = mrail_mr_regattr,
};
