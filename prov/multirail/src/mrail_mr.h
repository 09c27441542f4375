/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory registration (mrail_mr.c): a region registered on every rail
 * under the application's key, and its lookup by key; what the domain
 * keeps for its regions.
 */
#ifndef MRAIL_MR_SRC_H
#define MRAIL_MR_SRC_H

#include "mrail.h"

struct mrail_cntr;
struct mrail_eq;

/* The access bits a memory region may grant. */
#define MRAIL_MR_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)

/*
 * Memory region: the application's key, registered on every rail. A rail
 * that chooses its own keys (FI_MR_PROV_KEY) has a different key there,
 * in rail_keys; the data path translates. Domain lock for lookup.
 */
struct mrail_mr {
	struct fid_mr mr_fid;		/* mem_desc points back to this */
	struct mrail_domain *domain;
	uint64_t key;			/* requested_key, unique per domain */
	void *base;
	size_t len;
	uint64_t access;
	size_t rail_count;
	struct fid_mr *rail_mrs[MRAIL_MAX_RAILS];
	void *rail_desc[MRAIL_MAX_RAILS];
	uint64_t rail_keys[MRAIL_MAX_RAILS];	/* fi_mr_key on each rail */
	/* fi_mr_bind: the counter of remote accesses of the kinds in
	 * cntr_flags (FI_REMOTE_WRITE, FI_REMOTE_READ), or NULL. */
	struct mrail_cntr *cntr;
	uint64_t cntr_flags;
	UT_hash_handle hh;
};

int mrail_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		 uint64_t offset, uint64_t requested_key, uint64_t flags,
		 struct fid_mr **mr, void *context);
int mrail_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **mr, void *context);
int mrail_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		     uint64_t flags, struct fid_mr **mr);
/* The region registered under key in domain, or NULL. */
struct mrail_mr *mrail_mr_lookup(struct mrail_domain *domain, uint64_t key);

/*
 * What a domain keeps for its memory regions (mrail_mr.c) and the EQ
 * fi_domain_bind gave it. struct mrail_domain is shared with the data
 * path, so mrail_domain_open allocates this around it: every mrail_domain
 * is the first member of one. Guarded by domain.lock.
 */
struct mrail_domain_objs {
	struct mrail_domain domain;
	struct mrail_mr *mr_by_key;	/* uthash on mrail_mr.key */
	struct mrail_eq *eq;		/* fi_domain_bind: default EQ or NULL */
	bool reg_mr_async;		/* bound with FI_REG_MR */
};

static inline struct mrail_domain_objs *mrail_domain_objs(struct mrail_domain *domain)
{
	return container_of(domain, struct mrail_domain_objs, domain);
}

#endif /* MRAIL_MR_SRC_H */
