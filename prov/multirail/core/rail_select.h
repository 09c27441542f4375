/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decisions about which local port each rail uses, over plain descriptions of
 * the host's interfaces and of the core providers' offers.
 */
#ifndef MRAIL_RAIL_SELECT_H
#define MRAIL_RAIL_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "mrail_ip.h"
#include "mrail_limits.h"
#include "rail_config.h"

/* One address of one host interface (getifaddrs gives one entry per address). */
struct mrail_host_iface {
	char name[MRAIL_IFNAME_MAX];
	struct mrail_ip addr;
	bool up;
	bool loopback;
};

/*
 * Finds the interface address a rail attaches to.
 *  NAME:   the interface of that name (its first IPv4 address, else its
 *          first address); -ENOENT when no interface has the name, so the
 *          caller can try it as a domain name.
 *  ADDR:   the interface holding exactly that address; -ENOENT if none.
 *  SUBNET: the address inside the subnet; -ENOENT if none, -EEXIST when
 *          addresses of two different interfaces lie inside it (ambiguous).
 * An interface that is down matches too (ifaces[i].up says so): its link
 * may come back, and a rail on it is a failed rail, not a mistake.
 * Returns the index into ifaces, or a negative errno with err filled in.
 */
int mrail_rail_match_iface(const struct mrail_rail_spec *spec,
			   const struct mrail_host_iface *ifaces, size_t count,
			   char *err, size_t err_len);

/*
 * After resolution each rail has a key (stack and the interface or domain it
 * ended up on). Returns true and the first pair (i < j) of equal keys, which
 * would make two rails share one port.
 */
bool mrail_rails_find_duplicate(const char *const *keys, size_t count,
				size_t *first, size_t *second);

/* A resolved rail as fi_getinfo(node, FI_SOURCE) matches node against it. */
struct mrail_rail_ident {
	const char *port;	/* interface or domain the rail is on */
	struct mrail_ip addr;	/* its source address; family 0: none */
};

/*
 * fi_getinfo(3) with FI_SOURCE takes node as the local address to bind to.
 * Every rail of a set is bound together, so node selects the set when it
 * names any one rail: its interface or domain, or its IP address (in any
 * spelling mrail_ip_parse reads). Returns that rail's index, or -1.
 */
int mrail_rails_match_source(const char *node, const struct mrail_rail_ident *rails,
			     size_t count);

/* One RDM offer from the core providers, as discovery sees it. */
struct mrail_rail_candidate {
	char stack[MRAIL_STACK_NAME_MAX];
	char domain[MRAIL_ATTACH_MAX];
	int family;		/* AF_INET, AF_INET6, or 0 when not IP */
	bool loopback;
};

/*
 * Preference among core stacks for discovered rails: smaller is better.
 * Returns -1 for stacks that can never be a rail (shared memory, mrail
 * itself, utility stacks without a network core).
 */
int mrail_stack_rank(const char *stack);

/*
 * Discovery when FI_MRAIL_RAILS is unset: chooses the best-ranked stack that
 * has any non-loopback offer, then one offer per distinct domain of that
 * stack (IPv4 preferred over other families), ordered by domain name so
 * that every host lists its rails in the same order. Writes indices into
 * cands to picks and returns how many (at most max_picks).
 */
size_t mrail_discover_rails(const struct mrail_rail_candidate *cands, size_t count,
			    size_t *picks, size_t max_picks);

#endif /* MRAIL_RAIL_SELECT_H */
