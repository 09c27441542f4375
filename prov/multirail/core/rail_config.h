/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FI_MRAIL_RAILS: which rails to open and where each one attaches.
 *
 *   rails  := rail { "," rail }
 *   rail   := stack "@" attach
 *   stack  := prov { ";" prov }          e.g. "tcp;ofi_rxm", "udp;ofi_rxd"
 *   prov   := [a-z0-9_]+
 *   attach := ifname-or-domain | ipv4 | ipv6 | ipv4 "/" len | ipv6 "/" len
 *
 * Blanks around a rail are ignored. The same string serves every host: an
 * interface name or a subnet picks that host's own port on the rail.
 * This file only parses; whether an interface, address or provider exists on
 * this host is decided by rail_select.h and src/.
 */
#ifndef MRAIL_RAIL_CONFIG_H
#define MRAIL_RAIL_CONFIG_H

#include <stddef.h>

#include "mrail_ip.h"
#include "mrail_limits.h"

enum mrail_attach_kind {
	MRAIL_ATTACH_NAME,	/* interface name, else a libfabric domain name */
	MRAIL_ATTACH_ADDR,	/* one local IP address */
	MRAIL_ATTACH_SUBNET,	/* the local address inside this subnet */
};

struct mrail_rail_spec {
	char stack[MRAIL_STACK_NAME_MAX];
	enum mrail_attach_kind kind;
	/* Canonical attach text: the name, the address, or network/len with
	 * host bits cleared. Two rails with equal stack and attach are duplicates. */
	char attach[MRAIL_ATTACH_MAX];
	struct mrail_ip addr;		/* ADDR: the address; SUBNET: the network */
	unsigned prefix_len;		/* SUBNET only */
};

struct mrail_rail_config {
	size_t count;
	struct mrail_rail_spec rails[MRAIL_MAX_RAILS];
};

/*
 * Parses text into config. On failure returns -EINVAL and writes into err a
 * sentence naming the offending rail (1-based position and text) and why it
 * is refused: empty list, empty rail, missing '@', bad stack name, bad
 * address or prefix, duplicate rail, more than MRAIL_MAX_RAILS rails, text
 * longer than MRAIL_RAILS_STR_MAX.
 */
int mrail_rail_config_parse(const char *text, struct mrail_rail_config *config,
			    char *err, size_t err_len);

/* "stack@attach", the canonical form of one rail. */
int mrail_rail_spec_format(const struct mrail_rail_spec *spec, char *buf, size_t len);

#endif /* MRAIL_RAIL_CONFIG_H */
