/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Collectives (mrail_av_set.c, mrail_coll.c): AV sets, joined groups and
 * their operations. Caller holds the domain lock for handle_rx, progress
 * and ep_close.
 */
#ifndef MRAIL_COLL_SRC_H
#define MRAIL_COLL_SRC_H

#include "mrail.h"

#include <rdma/fi_collective.h>

struct mrail_av;

/* fi_addr_t values naming an AV set (fi_av_set_addr) and a joined group
 * (fi_mc_addr): far above any AV index. */
#define MRAIL_COLL_SET_ADDR_BIT ((uint64_t) 1 << 61)
#define MRAIL_COLL_GROUP_ADDR_BIT ((uint64_t) 1 << 62)

struct mrail_coll_ep;

int mrail_av_set_open(struct fid_av *av, struct fi_av_set_attr *attr,
		      struct fid_av_set **set, void *context);
/* The AV, members (fi_addr_t in set order) and address of an AV set mrail
 * opened; -FI_EINVAL for anything else. */
int mrail_av_set_members(const struct fid_av_set *set, struct mrail_av **av,
			 const uint64_t **addrs, size_t *n, fi_addr_t *coll_addr);
extern struct fi_ops_collective mrail_coll_ops;
/* fi_join (fi_join_collective) on an endpoint. */
int mrail_coll_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context);
int mrail_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			   struct fi_collective_attr *attr, uint64_t flags);
/* A COLL message from a peer the AV knows. */
void mrail_coll_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			  const struct mrail_wire_hdr *hdr, const uint8_t *payload);
/* The endpoint closes: its groups' operations are dropped. */
void mrail_coll_ep_close(struct mrail_ep *ep);

#endif /* MRAIL_COLL_SRC_H */
