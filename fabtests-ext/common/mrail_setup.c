/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_setup: opening, binding and closing the objects of one endpoint,
 * for every fabtests-ext program that runs over a control connection.
 */
#include <errno.h>

#include <rdma/fi_errno.h>

#include "mrail_ctl.h"
#include "mrail_setup.h"

int setup_try_open(struct mrail_setup *s, struct fi_info *info,
		   struct fi_cq_attr *cq_attr, unsigned flags)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_eq_attr eq_attr = { .size = 16, .wait_obj = FI_WAIT_UNSPEC };
	bool split = flags & SETUP_SPLIT_CQ;
	int ret;

	*s = (struct mrail_setup) { .info = info };
	if ((ret = fi_fabric(info->fabric_attr, &s->fabric, NULL)) ||
	    (ret = fi_domain(s->fabric, info, &s->domain, NULL)) ||
	    (ret = fi_av_open(s->domain, &av_attr, &s->av, NULL)) ||
	    (ret = fi_cq_open(s->domain, cq_attr, &s->cq, NULL)) ||
	    (split && (ret = fi_cq_open(s->domain, cq_attr, &s->rx_cq, NULL))) ||
	    ((flags & (SETUP_EQ | SETUP_BIND_EQ)) &&
	     (ret = fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL))) ||
	    (ret = fi_endpoint(s->domain, info, &s->ep, NULL)) ||
	    (ret = fi_ep_bind(s->ep, &s->av->fid, 0)) ||
	    ((flags & SETUP_BIND_EQ) && (ret = fi_ep_bind(s->ep, &s->eq->fid, 0))) ||
	    (ret = fi_ep_bind(s->ep, &s->cq->fid,
			      split ? FI_TRANSMIT : FI_TRANSMIT | FI_RECV)) ||
	    (split && (ret = fi_ep_bind(s->ep, &s->rx_cq->fid, FI_RECV))))
		return ret;
	return 0;
}

void setup_open(struct mrail_setup *s, struct fi_info *info,
		struct fi_cq_attr *cq_attr, unsigned flags)
{
	int ret = setup_try_open(s, info, cq_attr, flags);

	if (ret)
		ctl_die("opening the endpoint", ret);
}

struct fid_cntr *setup_cntr(struct mrail_setup *s, uint64_t bind_flags,
			    enum fi_wait_obj wait_obj)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = wait_obj };
	struct fid_cntr *cntr;
	int ret;

	ret = fi_cntr_open(s->domain, &attr, &cntr, NULL);
	if (ret)
		ctl_die("fi_cntr_open", ret);
	if (!bind_flags)
		return cntr;
	if (s->ncntrs == SETUP_MAX_CNTRS)
		ctl_die("more counters than SETUP_MAX_CNTRS", EINVAL);
	ret = fi_ep_bind(s->ep, &cntr->fid, bind_flags);
	if (ret)
		ctl_die("fi_ep_bind (counter)", ret);
	s->cntrs[s->ncntrs++] = cntr;
	return cntr;
}

void setup_enable(struct mrail_setup *s)
{
	int ret = fi_enable(s->ep);

	if (ret)
		ctl_die("fi_enable", ret);
}

static void close_fid(struct fid *fid)
{
	if (fid)
		(void) fi_close(fid);
}

void setup_close(struct mrail_setup *s, struct fid *const *bound, size_t n)
{
	size_t i;

	close_fid(SETUP_FID(s->ep));
	/* A memory region may count into a counter: regions first. */
	for (i = 0; i < n; i++)
		close_fid(bound[i]);
	for (i = 0; i < s->ncntrs; i++)
		close_fid(&s->cntrs[i]->fid);
	close_fid(SETUP_FID(s->cq));
	close_fid(SETUP_FID(s->rx_cq));
	close_fid(SETUP_FID(s->eq));
	close_fid(SETUP_FID(s->av));
	close_fid(SETUP_FID(s->domain));
	close_fid(SETUP_FID(s->fabric));
	fi_freeinfo(s->info);
	*s = (struct mrail_setup) { 0 };
}
