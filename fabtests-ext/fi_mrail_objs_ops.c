/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs -t ops and -t getinfo: every operation table full and the
 * unsupported calls refused, and hints honoured or refused.
 */
#include "fi_mrail_objs.h"

/* ---- every operation table: full, and unsupported calls refused ---- */

/*
 * An ops table is a size followed by function pointers. The table must be
 * as large as this program's headers know it (size) and hold no NULL
 * entry: libfabric's inline calls jump through any of them without a
 * check, so a NULL one is a crash at PC 0 (fi_shutdown was).
 */
static void check_table(const char *what, const void *table, size_t known)
{
	const size_t *size = table;
	void *const *fn;
	size_t i, n, nulls = 0;

	check(table != NULL, "%s: table present", what);
	if (!table)
		return;
	check(*size >= known, "%s: size %zu, headers know %zu", what, *size, known);
	n = (known - sizeof(size_t)) / sizeof(void *);
	fn = (void *const *) ((const char *) table + sizeof(size_t));
	for (i = 0; i < n; i++)
		nulls += !fn[i];
	check(nulls == 0, "%s: %zu of %zu entries NULL", what, nulls, n);
	/* The calls that follow may jump through a NULL entry: say so first. */
	fflush(stdout);
}

#define CHECK_TABLE(what, table, type) check_table(what, table, sizeof(type))

/* The generic fid operations every object carries, and the two every
 * mrail object refuses. */
static void check_fid(const char *what, struct fid *fid)
{
	char name[96], buf[64];
	void *ops = NULL;
	int ret;

	snprintf(name, sizeof(name), "%s fi_ops", what);
	CHECK_TABLE(name, fid->ops, struct fi_ops);
	ret = fi_open_ops(fid, "mrail_no_such_ops", 0, &ops, NULL);
	check(ret == -FI_ENOSYS, "%s: fi_open_ops = %d (want -FI_ENOSYS)", what, ret);
	ret = fi_set_ops(fid, "mrail_no_such_ops", 0, buf, NULL);
	check(ret == -FI_ENOSYS, "%s: fi_set_ops = %d (want -FI_ENOSYS)", what, ret);
	ret = fid->ops->tostr(fid, buf, sizeof(buf));
	check(ret == -FI_ENOSYS, "%s: tostr = %d (want -FI_ENOSYS)", what, ret);
}

/* A call an object may implement or refuse: either way a number, and
 * nothing opened is left behind. */
static void check_opt_open(const char *what, int ret, struct fid *opened)
{
	check(ret == 0 || (ret < 0 && ret > -1000), "%s = %d (0 or -FI_errno)",
	      what, ret);
	if (!ret && opened)
		check(fi_close(opened) == 0, "%s: close what it opened", what);
}

void test_ops(struct fid_fabric *fabric, struct fid_domain *domain,
		     struct fi_info *info)
{
	struct fi_eq_attr eq_attr = { .size = 8, .wait_obj = FI_WAIT_NONE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_av_set_attr set_attr = { .count = 4, .start_addr = FI_ADDR_NOTAVAIL,
					   .end_addr = FI_ADDR_NOTAVAIL };
	struct fi_poll_attr poll_attr = { 0 };
	struct fi_wait_attr wait_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_tx_attr tx_attr = { 0 };
	struct fi_rx_attr rx_attr = { 0 };
	struct fid_eq *eq = NULL;
	struct fid_cq *cq = NULL;
	struct fid_cntr *cntr = NULL;
	struct fid_av *av = NULL;
	struct fid_av_set *set = NULL;
	struct fid_ep *ep = NULL, *ep2 = NULL, *ctx = NULL, *sep = NULL;
	struct fid_domain *domain2 = NULL;
	struct fid_poll *pollset = NULL;
	struct fid_wait *waitset = NULL;
	struct fid_stx *stx = NULL;
	struct fid_mr *mr = NULL;
	uint8_t addr[512];
	size_t len = sizeof(addr);
	int ret;

	CHECK_TABLE("fabric fi_ops_fabric", fabric->ops, struct fi_ops_fabric);
	check_fid("fabric", &fabric->fid);
	CHECK_TABLE("domain fi_ops_domain", domain->ops, struct fi_ops_domain);
	CHECK_TABLE("domain fi_ops_mr", domain->mr, struct fi_ops_mr);
	check_fid("domain", &domain->fid);

	/* fi_domain2 / fi_endpoint2 without flags are fi_domain /
	 * fi_endpoint; flags asking for peer providers are refused. */
	ret = fi_domain2(fabric, info, &domain2, 0, NULL);
	check(ret == 0, "fi_domain2(flags 0) = %d", ret);
	if (!ret)
		check(fi_close(&domain2->fid) == 0, "close the fi_domain2 domain");
	domain2 = NULL;
	ret = fi_domain2(fabric, info, &domain2, FI_PEER, NULL);
	check(ret == -FI_EBADFLAGS, "fi_domain2(FI_PEER) = %d (want -FI_EBADFLAGS)", ret);
	ret = fi_passive_ep(fabric, info, (struct fid_pep **) &ctx, NULL);
	check_opt_open("fi_passive_ep", ret, ctx ? &ctx->fid : NULL);
	ctx = NULL;
	ret = fi_wait_open(fabric, &wait_attr, &waitset);
	check_opt_open("fi_wait_open", ret, waitset ? &waitset->fid : NULL);
	ret = fi_poll_open(domain, &poll_attr, &pollset);
	check_opt_open("fi_poll_open", ret, pollset ? &pollset->fid : NULL);
	ret = fi_stx_context(domain, &tx_attr, &stx, NULL);
	check_opt_open("fi_stx_context", ret, stx ? &stx->fid : NULL);
	ret = fi_srx_context(domain, &rx_attr, &ctx, NULL);
	check_opt_open("fi_srx_context", ret, ctx ? &ctx->fid : NULL);
	ctx = NULL;
	ret = fi_scalable_ep(domain, info, &sep, NULL);
	check_opt_open("fi_scalable_ep", ret, sep ? &sep->fid : NULL);

	if ((ret = fi_eq_open(fabric, &eq_attr, &eq, NULL))) {
		check(false, "fi_eq_open = %d", ret);
	} else {
		CHECK_TABLE("eq fi_ops_eq", eq->ops, struct fi_ops_eq);
		check_fid("eq", &eq->fid);
	}
	if ((ret = fi_cq_open(domain, &cq_attr, &cq, NULL))) {
		check(false, "fi_cq_open = %d", ret);
	} else {
		CHECK_TABLE("cq fi_ops_cq", cq->ops, struct fi_ops_cq);
		check_fid("cq", &cq->fid);
	}
	if ((ret = fi_cntr_open(domain, &cntr_attr, &cntr, NULL))) {
		check(false, "fi_cntr_open = %d", ret);
	} else {
		CHECK_TABLE("cntr fi_ops_cntr", cntr->ops, struct fi_ops_cntr);
		check_fid("cntr", &cntr->fid);
	}
	if ((ret = fi_av_open(domain, &av_attr, &av, NULL))) {
		check(false, "fi_av_open = %d", ret);
	} else {
		CHECK_TABLE("av fi_ops_av", av->ops, struct fi_ops_av);
		check_fid("av", &av->fid);
		ret = fi_av_set(av, &set_attr, &set, NULL);
		if (!ret) {
			CHECK_TABLE("av set fi_ops_av_set", set->ops,
				    struct fi_ops_av_set);
			check_fid("av set", &set->fid);
			check(fi_close(&set->fid) == 0, "close the av set");
		} else {
			check_opt_open("fi_av_set", ret, NULL);
		}
	}
	if ((ret = fi_mr_reg(domain, region[0], 64, FI_SEND, 0, 0x3001, 0, &mr,
			     NULL))) {
		check(false, "fi_mr_reg = %d", ret);
	} else {
		check_fid("mr", &mr->fid);
		check(fi_close(&mr->fid) == 0, "close the mr");
	}

	ret = fi_endpoint2(domain, info, &ep2, FI_PEER, NULL);
	check(ret == -FI_EBADFLAGS, "fi_endpoint2(FI_PEER) = %d (want -FI_EBADFLAGS)", ret);
	ret = fi_endpoint2(domain, info, &ep2, 0, NULL);
	check(ret == 0, "fi_endpoint2(flags 0) = %d", ret);
	if (!ret)
		check(fi_close(&ep2->fid) == 0, "close the fi_endpoint2 endpoint");

	ret = fi_endpoint(domain, info, &ep, NULL);
	check(ret == 0, "fi_endpoint = %d", ret);
	if (ret)
		goto out;
	CHECK_TABLE("ep fi_ops_ep", ep->ops, struct fi_ops_ep);
	CHECK_TABLE("ep fi_ops_cm", ep->cm, struct fi_ops_cm);
	CHECK_TABLE("ep fi_ops_msg", ep->msg, struct fi_ops_msg);
	CHECK_TABLE("ep fi_ops_tagged", ep->tagged, struct fi_ops_tagged);
	CHECK_TABLE("ep fi_ops_rma", ep->rma, struct fi_ops_rma);
	CHECK_TABLE("ep fi_ops_atomic", ep->atomic, struct fi_ops_atomic);
	CHECK_TABLE("ep fi_ops_collective", ep->collective, struct fi_ops_collective);
	check_fid("ep", &ep->fid);
	if (av && cq && eq &&
	    ((ret = fi_ep_bind(ep, &av->fid, 0)) ||
	     (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	     (ret = fi_enable(ep)))) {
		check(false, "bind and enable the endpoint: %d", ret);
		goto out;
	}

	/* Connection management of a connectionless endpoint: refused,
	 * never a crash (fi_shutdown was a NULL entry). */
	ret = fi_shutdown(ep, 0);
	check(ret == -FI_ENOSYS, "fi_shutdown = %d (want -FI_ENOSYS)", ret);
	ret = fi_connect(ep, addr, NULL, 0);
	check(ret == -FI_ENOSYS, "fi_connect = %d (want -FI_ENOSYS)", ret);
	ret = fi_accept(ep, NULL, 0);
	check(ret == -FI_ENOSYS, "fi_accept = %d (want -FI_ENOSYS)", ret);
	ret = fi_getpeer(ep, addr, &len);
	check(ret == -FI_ENOSYS, "fi_getpeer = %d (want -FI_ENOSYS)", ret);
	ret = ep->cm->listen((struct fid_pep *) ep);
	check(ret == -FI_ENOSYS, "listen = %d (want -FI_ENOSYS)", ret);
	ret = ep->cm->reject((struct fid_pep *) ep, &ep->fid, NULL, 0);
	check(ret == -FI_ENOSYS, "reject = %d (want -FI_ENOSYS)", ret);
	len = sizeof(addr);
	ret = fi_getname(&ep->fid, addr, &len);
	check(ret == 0 && len > 0, "fi_getname = %d, %zu bytes", ret, len);
	ret = fi_setname(&ep->fid, addr, len);
	check(ret == -FI_ENOSYS, "fi_setname = %d (want -FI_ENOSYS)", ret);
	/* Contexts of scalable endpoints, and the deprecated size calls. */
	ret = fi_tx_context(ep, 0, &tx_attr, &ctx, NULL);
	check(ret == -FI_ENOSYS, "fi_tx_context = %d (want -FI_ENOSYS)", ret);
	ret = fi_rx_context(ep, 0, &rx_attr, &ctx, NULL);
	check(ret == -FI_ENOSYS, "fi_rx_context = %d (want -FI_ENOSYS)", ret);
	check(ep->ops->rx_size_left(ep) == -FI_ENOSYS, "rx_size_left = -FI_ENOSYS");
	check(ep->ops->tx_size_left(ep) == -FI_ENOSYS, "tx_size_left = -FI_ENOSYS");
out:
	if (ep)
		check(fi_close(&ep->fid) == 0, "close the endpoint");
	if (av)
		check(fi_close(&av->fid) == 0, "close the av");
	if (cntr)
		check(fi_close(&cntr->fid) == 0, "close the counter");
	if (cq)
		check(fi_close(&cq->fid) == 0, "close the cq");
	if (eq)
		check(fi_close(&eq->fid) == 0, "close the eq");
}

/* ---- fi_getinfo: what the hints ask is honoured or refused ---- */

/* fi_getinfo for mrail with the hints init made; *info NULL on error. */
static int getinfo_with(struct fi_info *hints, uint32_t version, struct fi_info **info)
{
	*info = NULL;
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	return fi_getinfo(version, NULL, NULL, 0, hints, info);
}

void test_getinfo(void)
{
	struct fi_info *hints = fi_allocinfo(), *info, *fi;
	int ret;

	/* Primary caps: exactly the ones asked; contexts hold only their
	 * own bits; free secondary caps and the domain's caps shown. */
	hints->caps = FI_MSG;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0, "getinfo caps FI_MSG = %d", ret);
	for (fi = info; fi; fi = fi->next) {
		check(!(fi->caps & (FI_TAGGED | FI_RMA | FI_ATOMIC | FI_COLLECTIVE |
				    FI_DIRECTED_RECV)),
		      "caps FI_MSG: no other primary cap (%#llx)",
		      (unsigned long long) fi->caps);
		check((fi->caps & (FI_MSG | FI_SEND | FI_RECV)) ==
		      (FI_MSG | FI_SEND | FI_RECV), "caps FI_MSG: FI_SEND|FI_RECV implied");
		check(!(fi->tx_attr->caps & (FI_RECV | FI_LOCAL_COMM | FI_SOURCE)),
		      "tx_attr->caps %#llx: no receive or domain bit",
		      (unsigned long long) fi->tx_attr->caps);
		check(!(fi->rx_attr->caps & (FI_SEND | FI_LOCAL_COMM)),
		      "rx_attr->caps %#llx: no send or domain bit",
		      (unsigned long long) fi->rx_attr->caps);
		check(fi->domain_attr->caps == (FI_LOCAL_COMM | FI_REMOTE_COMM),
		      "domain_attr->caps %#llx", (unsigned long long) fi->domain_attr->caps);
		check(fi->domain_attr->mr_iov_limit == 1, "mr_iov_limit %zu",
		      fi->domain_attr->mr_iov_limit);
		check(fi->domain_attr->mr_key_size == 8, "mr_key_size %zu",
		      fi->domain_attr->mr_key_size);
	}
	fi_freeinfo(info);

	/* Any API version the library serves is answered (fi_version(3)),
	 * and the offer says which one it follows. */
	{
		const uint32_t versions[] = { FI_VERSION(1, 5), FI_VERSION(1, 17),
					      fi_version() };
		size_t i;

		for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
			ret = getinfo_with(hints, versions[i], &info);
			check(ret == 0 && info->fabric_attr->api_version == versions[i],
			      "getinfo at API %u.%u = %d, api_version %#x",
			      FI_MAJOR(versions[i]), FI_MINOR(versions[i]), ret,
			      ret ? 0 : info->fabric_attr->api_version);
			fi_freeinfo(info);
		}
	}
	/* comp_order binds 1.x callers only; 2.x callers "should set it
	 * to 0" (fi_endpoint(3) of 2.x) and mrail does not hold them to it. */
	hints->tx_attr->comp_order = MRAIL_ORDER_STRICT;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo API 1.17, comp_order STRICT = %d "
	      "(want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	if (fi_version() >= FI_VERSION(2, 0)) {
		ret = getinfo_with(hints, fi_version(), &info);
		check(ret == 0, "getinfo API %u.%u, comp_order set = %d (want 0)",
		      FI_MAJOR(fi_version()), FI_MINOR(fi_version()), ret);
		fi_freeinfo(info);
	}
	hints->tx_attr->comp_order = 0;

	/* Secondary caps asked are given or refused. */
	hints->caps = FI_MSG | FI_SOURCE | FI_MULTI_RECV;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->caps & (FI_SOURCE | FI_MULTI_RECV)) ==
	      (FI_SOURCE | FI_MULTI_RECV), "getinfo asked FI_SOURCE|FI_MULTI_RECV = %d", ret);
	check(!ret && (info->rx_attr->caps & FI_SOURCE) && !(info->tx_attr->caps & FI_SOURCE),
	      "FI_SOURCE is a receive cap");
	fi_freeinfo(info);
	/* Named AVs: given when asked, in caps or domain caps, never unasked. */
	hints->caps = FI_MSG;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && !(info->caps & FI_SHARED_AV) &&
	      !(info->domain_attr->caps & FI_SHARED_AV),
	      "FI_SHARED_AV is given only when asked");
	fi_freeinfo(info);
	hints->caps = FI_MSG | FI_SHARED_AV;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->caps & FI_SHARED_AV) &&
	      (info->domain_attr->caps & FI_SHARED_AV),
	      "getinfo asked FI_SHARED_AV = %d, given", ret);
	fi_freeinfo(info);
	hints->caps = FI_MSG;
	hints->domain_attr->caps = FI_SHARED_AV;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->domain_attr->caps & FI_SHARED_AV),
	      "getinfo domain caps FI_SHARED_AV = %d, given", ret);
	fi_freeinfo(info);
	hints->domain_attr->caps = 0;

	/* Ordering: send-after-send only. */
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && (info->tx_attr->msg_order & FI_ORDER_SAS),
	      "getinfo msg_order SAS = %d", ret);
	fi_freeinfo(info);
	hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo tx msg_order RAW = %d (want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	hints->tx_attr->msg_order = 0;
	hints->rx_attr->msg_order = MRAIL_ORDER_DATA;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo rx msg_order DATA = %d (want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	hints->rx_attr->msg_order = 0;

	/* mr_mode: offsets and application keys only. */
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode = MRAIL_MR_BASIC;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == -FI_ENODATA, "getinfo FI_MR_BASIC = %d (want -FI_ENODATA)", ret);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = MRAIL_MR_SCALABLE;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && info->domain_attr->mr_mode == MRAIL_MR_SCALABLE,
	      "getinfo FI_MR_SCALABLE = %d, mr_mode %d", ret, ret ? -1 :
	      info->domain_attr->mr_mode);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY |
				      FI_MR_ALLOCATED;
	ret = getinfo_with(hints, FI_VERSION(1, 17), &info);
	check(ret == 0 && info->domain_attr->mr_mode == 0,
	      "getinfo mr_mode bits allowed = %d, mr_mode %d", ret, ret ? -1 :
	      info->domain_attr->mr_mode);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}
