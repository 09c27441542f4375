/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_setup: the fabric, domain, AV, CQs, EQ and endpoint a
 * fabtests-ext program opens from the fi_info it chose, in one struct, so
 * that every program opens, binds and closes them the same way.
 * setup_open, setup_cntr and setup_enable are fatal on failure, reported
 * through ctl_die (mrail_ctl.h) under ctl_prog.
 */
#ifndef MRAIL_SETUP_H
#define MRAIL_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

/* Counters bound to one endpoint, at most. */
#define SETUP_MAX_CNTRS	8

struct mrail_setup {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;	/* transmit completions; receive ones too, */
	struct fid_cq *rx_cq;	/* unless this one is open (SETUP_SPLIT_CQ) */
	struct fid_eq *eq;	/* SETUP_EQ only */
	struct fid_ep *ep;
	/* setup_cntr's bound counters, for setup_close: they outlive the
	 * endpoint. */
	struct fid_cntr *cntrs[SETUP_MAX_CNTRS];
	unsigned ncntrs;
};

/* What setup_open opens besides the fabric, domain, AV, CQ and endpoint. */
#define SETUP_SPLIT_CQ	(1u << 0)	/* a receive CQ of its own */
#define SETUP_EQ	(1u << 1)	/* an EQ (16 entries, FI_WAIT_UNSPEC) */
#define SETUP_BIND_EQ	(1u << 2)	/* an EQ, bound to the endpoint */

/*
 * Takes info (setup_close frees it) and opens its fabric and domain, an
 * FI_AV_TABLE AV, the CQ (and with SETUP_SPLIT_CQ rx_cq) of cq_attr, the
 * EQ the flags ask for and the endpoint, with the AV and CQs bound to it.
 * The endpoint is not enabled, so counters can still be bound.
 */
void setup_open(struct mrail_setup *s, struct fi_info *info,
		struct fi_cq_attr *cq_attr, unsigned flags);
/* The same for a program that reports failures its own way: 0, or the
 * negative fi_errno of the call that failed, with what was opened before
 * it left in *s for setup_close. */
int setup_try_open(struct mrail_setup *s, struct fi_info *info,
		   struct fi_cq_attr *cq_attr, unsigned flags);

/* A completion counter waiting on wait_obj, bound to the endpoint for
 * bind_flags (FI_SEND, FI_REMOTE_WRITE...) and closed by setup_close; or,
 * when bind_flags is 0, left unbound and to the caller to close. */
struct fid_cntr *setup_cntr(struct mrail_setup *s, uint64_t bind_flags,
			    enum fi_wait_obj wait_obj);

void setup_enable(struct mrail_setup *s);

/* The fid of obj, NULL when obj is: for setup_close's list. */
#define SETUP_FID(obj)	((obj) ? &(obj)->fid : NULL)

/*
 * Closes the endpoint, then bound[0..n) (memory regions, unbound
 * counters: what had to outlive the endpoint; NULL entries are skipped)
 * and the bound counters, then the CQs, the EQ, the AV, the domain and
 * the fabric, and frees the info. Errors are not reported: the program is
 * done with the objects either way.
 */
void setup_close(struct mrail_setup *s, struct fid *const *bound, size_t n);

#endif /* MRAIL_SETUP_H */
