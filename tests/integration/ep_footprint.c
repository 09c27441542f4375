/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How much memory an enabled endpoint costs: opens one fabric, domain, AV
 * and CQ, then N RDM endpoints (each bound and enabled, none connected),
 * and prints the growth of the resident set per endpoint.
 *
 *   ep_footprint [N]        (default 8)
 *
 * Prints "provider NAME" and "per_endpoint_kib K"; exits 0 when all N
 * endpoints were enabled.
 */
#include <stdio.h>
#include <stdlib.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define MAX_ENDPOINTS 64

/* The resident set in KiB, from /proc/self/statm (pages). */
static long resident_kib(void)
{
	long size, resident = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * 4;
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "ep_footprint: %s: %s\n", what, fi_strerror(-ret));
	return 1;
}

int main(int argc, char **argv)
{
	struct fid_ep *eps[MAX_ENDPOINTS];
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	long before, after;
	int count = argc > 1 ? atoi(argv[1]) : 8;
	int i, ret;

	if (count < 1 || count > MAX_ENDPOINTS) {
		fprintf(stderr, "usage: ep_footprint [N], 1 <= N <= %d\n",
			MAX_ENDPOINTS);
		return 2;
	}
	hints = fi_allocinfo();
	if (!hints)
		return fail("fi_allocinfo", -FI_ENOMEM);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret)
		return fail("fi_getinfo", ret);
	printf("provider %s\n", info->fabric_attr->prov_name);

	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	if (ret)
		return fail("fi_fabric", ret);
	ret = fi_domain(fabric, info, &domain, NULL);
	if (ret)
		return fail("fi_domain", ret);
	ret = fi_av_open(domain, &av_attr, &av, NULL);
	if (ret)
		return fail("fi_av_open", ret);
	ret = fi_cq_open(domain, &cq_attr, &cq, NULL);
	if (ret)
		return fail("fi_cq_open", ret);

	before = resident_kib();
	for (i = 0; i < count; i++) {
		ret = fi_endpoint(domain, info, &eps[i], NULL);
		if (ret)
			return fail("fi_endpoint", ret);
		ret = fi_ep_bind(eps[i], &av->fid, 0);
		if (!ret)
			ret = fi_ep_bind(eps[i], &cq->fid, FI_TRANSMIT | FI_RECV);
		if (ret)
			return fail("fi_ep_bind", ret);
		ret = fi_enable(eps[i]);
		if (ret)
			return fail("fi_enable", ret);
	}
	after = resident_kib();
	if (before < 0 || after < 0)
		return fail("/proc/self/statm", -FI_EIO);
	printf("endpoints %d\n", count);
	printf("per_endpoint_kib %ld\n", (after - before) / count);

	for (i = 0; i < count; i++)
		fi_close(&eps[i]->fid);
	fi_close(&cq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	return 0;
}
