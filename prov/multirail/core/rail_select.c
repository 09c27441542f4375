/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which local port each rail uses (see rail_select.h).
 *
 * Messages written into err name the interface, address or subnet at fault
 * but not the rail: the caller knows the rail's position and prefixes it.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "mrail_err.h"
#include "rail_select.h"

/* An address as text, or a note of its unknown family. */
#define IP_TEXT_LEN (INET6_ADDRSTRLEN + 32)

/* Ranks of mrail_stack_rank(): smaller is better. */
#define STACK_RANK_NEVER	(-1)
#define STACK_RANK_UNKNOWN	15

static const struct {
	const char *stack;
	int rank;
} stack_ranks[] = {
	{ "verbs;ofi_rxm",	0 },
	{ "psm3",		1 },
	{ "psm2",		2 },
	{ "opx",		3 },
	{ "efa",		4 },
	{ "cxi",		5 },
	{ "tcp;ofi_rxm",	10 },
	{ "udp;ofi_rxd",	11 },
	{ "sockets",		20 },
	/* Experimental in libfabric 1.17: only when nothing else is there. */
	{ "net;ofi_rxm",	30 },
	{ "net",		30 },
};

/* Interface names come from the kernel; never trust them to be terminated. */
static int iface_name_len(const struct mrail_host_iface *iface)
{
	return (int) strnlen(iface->name, sizeof(iface->name));
}

static bool iface_has_name(const struct mrail_host_iface *iface,
			   const char *name)
{
	size_t len = strnlen(name, MRAIL_ATTACH_MAX);

	return len < sizeof(iface->name) &&
	       (int) len == iface_name_len(iface) &&
	       !memcmp(iface->name, name, len);
}

static bool ifaces_same_name(const struct mrail_host_iface *a,
			     const struct mrail_host_iface *b)
{
	return iface_name_len(a) == iface_name_len(b) &&
	       !memcmp(a->name, b->name, (size_t) iface_name_len(a));
}

static void format_ip(const struct mrail_ip *ip, char *buf, size_t len)
{
	if (mrail_ip_format(ip, buf, len))
		snprintf(buf, len, "(address family %d)", ip->family);
}

/* Several addresses on the named interface: IPv4 first, as the header says. */
static int match_iface_name(const struct mrail_rail_spec *spec,
			    const struct mrail_host_iface *ifaces, int count,
			    char *err, size_t err_len)
{
	int i, found = -ENOENT;

	for (i = 0; i < count; i++) {
		if (!iface_has_name(&ifaces[i], spec->attach))
			continue;
		if (ifaces[i].addr.family == AF_INET)
			return i;
		if (found < 0)
			found = i;
	}
	if (found < 0)
		mrail_write_err(err, err_len,
			"no network interface named \"%.*s\" on this host",
			MRAIL_ATTACH_MAX - 1, spec->attach);
	return found;
}

static int match_iface_addr(const struct mrail_rail_spec *spec,
			    const struct mrail_host_iface *ifaces, int count,
			    char *err, size_t err_len)
{
	char addr[IP_TEXT_LEN];
	int i;

	for (i = 0; i < count; i++) {
		if (mrail_ip_equal(&ifaces[i].addr, &spec->addr))
			return i;
	}
	format_ip(&spec->addr, addr, sizeof(addr));
	mrail_write_err(err, err_len,
		"no network interface on this host has address %s", addr);
	return -ENOENT;
}

/*
 * A subnet picks a port only when it is unambiguous: addresses of two
 * interfaces inside it would let the choice depend on the order getifaddrs
 * happens to list them, and differ from host to host.
 */
static int match_iface_subnet(const struct mrail_rail_spec *spec,
			      const struct mrail_host_iface *ifaces, int count,
			      char *err, size_t err_len)
{
	char first_addr[IP_TEXT_LEN], other_addr[IP_TEXT_LEN];
	int i, found = -ENOENT;

	for (i = 0; i < count; i++) {
		if (!mrail_ip_in_subnet(&ifaces[i].addr, &spec->addr,
					spec->prefix_len))
			continue;
		if (found < 0) {
			found = i;
			continue;
		}
		if (ifaces_same_name(&ifaces[found], &ifaces[i]))
			continue;

		format_ip(&ifaces[found].addr, first_addr, sizeof(first_addr));
		format_ip(&ifaces[i].addr, other_addr, sizeof(other_addr));
		mrail_write_err(err, err_len,
			"interfaces %.*s (%s) and %.*s (%s) both have "
			"addresses in subnet %.*s; name one interface instead",
			iface_name_len(&ifaces[found]), ifaces[found].name,
			first_addr, iface_name_len(&ifaces[i]), ifaces[i].name,
			other_addr, MRAIL_ATTACH_MAX - 1, spec->attach);
		return -EEXIST;
	}
	if (found < 0)
		mrail_write_err(err, err_len,
			"no network interface on this host has an address in "
			"subnet %.*s", MRAIL_ATTACH_MAX - 1, spec->attach);
	return found;
}

int mrail_rail_match_iface(const struct mrail_rail_spec *spec,
			   const struct mrail_host_iface *ifaces, size_t count,
			   char *err, size_t err_len)
{
	int n, match;

	if (!spec || (!ifaces && count)) {
		mrail_write_err(err, err_len, "no rail or interface list to match");
		return -EINVAL;
	}
	/* Indices are returned as int; no host has this many addresses. */
	n = count > INT_MAX ? INT_MAX : (int) count;

	switch (spec->kind) {
	case MRAIL_ATTACH_NAME:
		match = match_iface_name(spec, ifaces, n, err, err_len);
		break;
	case MRAIL_ATTACH_ADDR:
		match = match_iface_addr(spec, ifaces, n, err, err_len);
		break;
	case MRAIL_ATTACH_SUBNET:
		match = match_iface_subnet(spec, ifaces, n, err, err_len);
		break;
	default:
		mrail_write_err(err, err_len, "unknown attach kind %d",
			  (int) spec->kind);
		return -EINVAL;
	}
	return match;
}

bool mrail_rails_find_duplicate(const char *const *keys, size_t count,
				size_t *first, size_t *second)
{
	size_t i, j;

	if (!keys)
		return false;
	for (i = 0; i < count; i++) {
		if (!keys[i])
			continue;
		for (j = i + 1; j < count; j++) {
			if (!keys[j] || strcmp(keys[i], keys[j]))
				continue;
			if (first)
				*first = i;
			if (second)
				*second = j;
			return true;
		}
	}
	return false;
}

int mrail_rails_match_source(const char *node, const struct mrail_rail_ident *rails,
			     size_t count)
{
	struct mrail_ip ip;
	bool is_ip;
	size_t i;

	if (!node || !rails)
		return -1;
	is_ip = !mrail_ip_parse(node, &ip);
	for (i = 0; i < count; i++) {
		if (rails[i].port && !strcmp(rails[i].port, node))
			return (int) i;
		if (is_ip && rails[i].addr.family && mrail_ip_equal(&ip, &rails[i].addr))
			return (int) i;
	}
	return -1;
}

static bool char_in_provider_name(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Provider names are [a-z0-9_]+, joined by single ';'. */
static bool stack_name_is_valid(const char *stack)
{
	size_t i, len = strnlen(stack, MRAIL_STACK_NAME_MAX);

	if (!len || len == MRAIL_STACK_NAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		if (char_in_provider_name(stack[i]))
			continue;
		if (stack[i] != ';' || i == 0 || i == len - 1 ||
		    stack[i - 1] == ';')
			return false;
	}
	return true;
}

static bool provider_is(const char *prov, size_t len, const char *name)
{
	return strlen(name) == len && !memcmp(prov, name, len);
}

static bool provider_has_prefix(const char *prov, size_t len,
				const char *prefix)
{
	size_t prefix_len = strlen(prefix);

	return len >= prefix_len && !memcmp(prov, prefix, prefix_len);
}

/*
 * Shared memory only reaches this host, mrail over mrail would recurse,
 * and hooks wrap some other stack that is offered on its own anyway.
 */
static bool provider_excludes_stack(const char *prov, size_t len)
{
	return provider_is(prov, len, "shm") || provider_is(prov, len, "sm2") ||
	       provider_is(prov, len, "mrail") ||
	       provider_is(prov, len, "ofi_mrail") ||
	       provider_has_prefix(prov, len, "ofi_hook_");
}

/*
 * libfabric names its utility providers "ofi_*": one of them first in a
 * stack (the core position) has no network of its own to drive.
 */
static bool stack_can_never_be_a_rail(const char *stack)
{
	const char *prov = stack, *sep;
	size_t len;

	if (!strncmp(stack, "ofi_", 4))
		return true;
	for (;;) {
		sep = strchr(prov, ';');
		len = sep ? (size_t) (sep - prov) : strlen(prov);
		if (provider_excludes_stack(prov, len))
			return true;
		if (!sep)
			return false;
		prov = sep + 1;
	}
}

int mrail_stack_rank(const char *stack)
{
	size_t i;

	if (!stack || !stack_name_is_valid(stack) ||
	    stack_can_never_be_a_rail(stack))
		return STACK_RANK_NEVER;
	for (i = 0; i < sizeof(stack_ranks) / sizeof(stack_ranks[0]); i++) {
		if (!strcmp(stack, stack_ranks[i].stack))
			return stack_ranks[i].rank;
	}
	return STACK_RANK_UNKNOWN;
}

/* Offers are built by src/ from fi_info; an unterminated name is no offer. */
static bool candidate_is_usable(const struct mrail_rail_candidate *cand)
{
	return !cand->loopback &&
	       memchr(cand->stack, '\0', sizeof(cand->stack)) &&
	       memchr(cand->domain, '\0', sizeof(cand->domain));
}

/* The first offer of the best-ranked stack; ties go to the earlier offer. */
static const char *discover_best_stack(const struct mrail_rail_candidate *cands,
				       size_t count)
{
	const char *best = NULL;
	int rank, best_rank = INT_MAX;
	size_t i;

	for (i = 0; i < count; i++) {
		if (!candidate_is_usable(&cands[i]))
			continue;
		rank = mrail_stack_rank(cands[i].stack);
		if (rank < 0 || rank >= best_rank)
			continue;
		best_rank = rank;
		best = cands[i].stack;
	}
	return best;
}

/* Within one domain: IPv4 over any other family, else the earlier offer. */
static bool candidate_beats(const struct mrail_rail_candidate *cand,
			    const struct mrail_rail_candidate *best)
{
	int order = strcmp(cand->domain, best->domain);

	if (order)
		return order < 0;
	return cand->family == AF_INET && best->family != AF_INET;
}

/*
 * The offer for the smallest domain name after prev_domain (any domain when
 * NULL). Walking domains in name order keeps rail i the same port on every
 * host however each host's providers happen to order their offers.
 */
static bool discover_next_domain(const struct mrail_rail_candidate *cands,
				 size_t count, const char *stack,
				 const char *prev_domain, size_t *pick)
{
	const struct mrail_rail_candidate *best = NULL;
	size_t i;

	for (i = 0; i < count; i++) {
		const struct mrail_rail_candidate *cand = &cands[i];

		if (!candidate_is_usable(cand) || strcmp(cand->stack, stack))
			continue;
		if (prev_domain && strcmp(cand->domain, prev_domain) <= 0)
			continue;
		if (best && !candidate_beats(cand, best))
			continue;
		best = cand;
		*pick = i;
	}
	return best != NULL;
}

size_t mrail_discover_rails(const struct mrail_rail_candidate *cands,
			    size_t count, size_t *picks, size_t max_picks)
{
	const char *stack, *prev_domain = NULL;
	size_t picked;

	if (!cands || !picks || !max_picks)
		return 0;
	stack = discover_best_stack(cands, count);
	if (!stack)
		return 0;

	for (picked = 0; picked < max_picks; picked++) {
		if (!discover_next_domain(cands, count, stack, prev_domain,
					  &picks[picked]))
			break;
		prev_domain = cands[picks[picked]].domain;
	}
	return picked;
}
