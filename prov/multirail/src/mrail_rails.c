/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rails: from FI_MRAIL_RAILS (or discovery) to one core RDM offer per rail.
 *
 * The decisions (which interface a rail attaches to, which stack discovery
 * prefers, whether two rails collide) are made in core/rail_select.c; this
 * file gathers the facts they need from the host and from the core
 * providers, and turns refusals into warnings a user can act on.
 */
#include "mrail.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rail_select.h"

/* Modes mrail can satisfy for a rail: it keeps its own per-operation state. */
#define MRAIL_RAIL_MODES (FI_CONTEXT | FI_CONTEXT2)
#define MRAIL_RAIL_MR_MODES (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
			     FI_MR_PROV_KEY | FI_MR_ENDPOINT)

struct host_ifaces {
	size_t count;
	struct mrail_host_iface *list;
};

static int sockaddr_to_ip(const struct sockaddr *sa, struct mrail_ip *ip)
{
	memset(ip, 0, sizeof(*ip));
	switch (sa->sa_family) {
	case AF_INET:
		ip->family = AF_INET;
		memcpy(ip->bytes, &((const struct sockaddr_in *) sa)->sin_addr, 4);
		return 0;
	case AF_INET6:
		ip->family = AF_INET6;
		memcpy(ip->bytes, &((const struct sockaddr_in6 *) sa)->sin6_addr, 16);
		return 0;
	default:
		return -FI_EINVAL;
	}
}

static int host_ifaces_load(struct host_ifaces *ifaces)
{
	struct ifaddrs *all, *ifa;
	size_t n = 0;

	if (getifaddrs(&all)) {
		MRAIL_WARN(FI_LOG_CORE, "cannot list network interfaces: %s\n",
			   strerror(errno));
		return -FI_ENODATA;
	}
	for (ifa = all; ifa; ifa = ifa->ifa_next)
		n++;
	ifaces->list = calloc(n ? n : 1, sizeof(*ifaces->list));
	if (!ifaces->list) {
		freeifaddrs(all);
		return -FI_ENOMEM;
	}
	ifaces->count = 0;
	for (ifa = all; ifa; ifa = ifa->ifa_next) {
		struct mrail_host_iface *iface = &ifaces->list[ifaces->count];

		if (!ifa->ifa_addr || strlen(ifa->ifa_name) >= sizeof(iface->name))
			continue;
		if (sockaddr_to_ip(ifa->ifa_addr, &iface->addr))
			continue;
		strcpy(iface->name, ifa->ifa_name);
		iface->up = (ifa->ifa_flags & IFF_UP) && (ifa->ifa_flags & IFF_RUNNING);
		iface->loopback = ifa->ifa_flags & IFF_LOOPBACK;
		ifaces->count++;
	}
	freeifaddrs(all);
	return 0;
}

static void host_ifaces_free(struct host_ifaces *ifaces)
{
	free(ifaces->list);
	ifaces->list = NULL;
	ifaces->count = 0;
}

/* Strings handed to the corelib are borrowed: the private copy must never
 * free memory the application's allocator owns, so they are detached again
 * before the hints go back to it. */
static struct fi_info *rail_hints_alloc(const struct mrail_corelib *lib,
					char *stack, char *domain)
{
	struct fi_info *hints = lib->dupinfo(NULL);

	if (!hints)
		return NULL;
	/* Rendezvous reads the sender's buffer with RMA over every rail. */
	hints->caps = FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ;
	hints->mode = MRAIL_RAIL_MODES;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = MRAIL_RAIL_MR_MODES;
	hints->fabric_attr->prov_name = stack;
	hints->domain_attr->name = domain;
	return hints;
}

static void rail_hints_free(const struct mrail_corelib *lib, struct fi_info *hints)
{
	hints->fabric_attr->prov_name = NULL;
	hints->domain_attr->name = NULL;
	lib->freeinfo(hints);
}

/* Asks the core providers for the first RDM offer of stack on node (a local
 * address bound with FI_SOURCE) or on domain. */
static int rail_query(const struct mrail_corelib *lib, uint32_t version,
		      const char *stack, const char *domain, const char *node,
		      const char *service, struct fi_info **info)
{
	struct fi_info *hints, *offers = NULL, *cur;
	int ret;

	hints = rail_hints_alloc(lib, (char *) stack, (char *) domain);
	if (!hints)
		return -FI_ENOMEM;
	ret = lib->getinfo(version, node, service, node || service ? FI_SOURCE : 0,
			   hints, &offers);
	rail_hints_free(lib, hints);
	if (ret)
		return ret;

	/* The first offer is the core's best. Some cores (ofi_rxm over tcp)
	 * ignore a domain name in the hints, so it is checked here. */
	for (cur = offers; cur; cur = cur->next) {
		if (!domain || (cur->domain_attr->name &&
				!strcmp(cur->domain_attr->name, domain)))
			break;
	}
	if (!cur) {
		lib->freeinfo(offers);
		return -FI_ENODATA;
	}
	*info = lib->dupinfo(cur);
	lib->freeinfo(offers);
	return *info ? 0 : -FI_ENOMEM;
}

static bool stack_is_available(const struct mrail_corelib *lib, uint32_t version,
			       const char *stack)
{
	struct fi_info *info = NULL;

	if (rail_query(lib, version, stack, NULL, NULL, NULL, &info))
		return false;
	lib->freeinfo(info);
	return true;
}

/* Which of the three things a user can get wrong made a rail unavailable. */
static void rail_warn_unavailable(const struct mrail_corelib *lib, uint32_t version,
				  size_t index, const struct mrail_rail *rail,
				  const struct mrail_host_iface *iface, int ret)
{
	char text[MRAIL_STACK_NAME_MAX + MRAIL_ATTACH_MAX];
	char node[INET6_ADDRSTRLEN] = "";

	mrail_rail_spec_format(&rail->spec, text, sizeof(text));
	if (!stack_is_available(lib, version, rail->spec.stack)) {
		MRAIL_WARN(FI_LOG_CORE,
			   "FI_MRAIL_RAILS rail %zu \"%s\": provider stack \"%s\" is "
			   "unknown or has no RDM endpoint on this host (fi_info -t "
			   "FI_EP_RDM lists the stacks that do)\n",
			   index + 1, text, rail->spec.stack);
	} else if (iface) {
		mrail_ip_format(&iface->addr, node, sizeof(node));
		MRAIL_WARN(FI_LOG_CORE,
			   "FI_MRAIL_RAILS rail %zu \"%s\": \"%s\" offers no RDM "
			   "endpoint on interface %s (%s): %s\n", index + 1, text,
			   rail->spec.stack, iface->name, node, fi_strerror(-ret));
	} else {
		MRAIL_WARN(FI_LOG_CORE,
			   "FI_MRAIL_RAILS rail %zu \"%s\": no interface or libfabric "
			   "domain named \"%s\" on this host\n", index + 1, text,
			   rail->spec.attach);
	}
}

static int rail_resolve_spec(const struct mrail_corelib *lib, uint32_t version,
			     const struct host_ifaces *ifaces, const char *service,
			     size_t index, struct mrail_rail *rail)
{
	const struct mrail_host_iface *iface = NULL;
	char text[MRAIL_STACK_NAME_MAX + MRAIL_ATTACH_MAX];
	char node[INET6_ADDRSTRLEN];
	char err[MRAIL_ERR_MAX];
	int match, ret;

	rail->link_down = false;
	rail->is_iface = false;
	match = mrail_rail_match_iface(&rail->spec, ifaces->list, ifaces->count,
				       err, sizeof(err));
	if (match >= 0) {
		iface = &ifaces->list[match];
		mrail_ip_format(&iface->addr, node, sizeof(node));
		snprintf(rail->port, sizeof(rail->port), "%s", iface->name);
		rail->is_iface = true;
		if (!iface->up) {
			/* A link that is down is a failed rail, which comes
			 * back with its link. */
			rail->link_down = true;
			mrail_rail_spec_format(&rail->spec, text, sizeof(text));
			MRAIL_WARN(FI_LOG_CORE, "FI_MRAIL_RAILS rail %zu \"%s\": "
				   "interface %s (%s) is down: the rail starts "
				   "failed, and carries traffic once its link is "
				   "up and a probe on it is answered\n", index + 1,
				   text, iface->name, node);
		}
		ret = rail_query(lib, version, rail->spec.stack, NULL, node,
				 service, &rail->info);
	} else if (match == -ENOENT && rail->spec.kind == MRAIL_ATTACH_NAME) {
		/* Not an interface here: maybe a domain (verbs device, ...). */
		snprintf(rail->port, sizeof(rail->port), "%s", rail->spec.attach);
		ret = rail_query(lib, version, rail->spec.stack, rail->spec.attach,
				 NULL, service, &rail->info);
	} else {
		mrail_rail_spec_format(&rail->spec, text, sizeof(text));
		MRAIL_WARN(FI_LOG_CORE, "FI_MRAIL_RAILS rail %zu \"%s\": %s\n",
			   index + 1, text, err);
		return -FI_ENODATA;
	}
	if (ret) {
		rail->info = NULL;
		rail_warn_unavailable(lib, version, index, rail, iface, ret);
		return -FI_ENODATA;
	}
	return 0;
}

static int railset_from_config(uint32_t version, const char *service,
			       struct mrail_railset *set)
{
	struct mrail_rail_config config;
	struct host_ifaces ifaces = { 0 };
	char err[MRAIL_ERR_MAX];
	size_t i;
	int ret;

	if (mrail_rail_config_parse(mrail_env.rails, &config, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_CORE, "FI_MRAIL_RAILS=\"%s\" is invalid: %s\n",
			   mrail_env.rails, err);
		return -FI_ENODATA;
	}
	ret = host_ifaces_load(&ifaces);
	if (ret)
		return ret;

	for (i = 0; i < config.count; i++) {
		set->rails[i].spec = config.rails[i];
		ret = rail_resolve_spec(set->lib, version, &ifaces, service, i,
					&set->rails[i]);
		if (ret)
			break;
		set->count++;
	}
	host_ifaces_free(&ifaces);
	return ret;
}

/* Describes an offer for discovery; false when mrail could not name it. */
static bool candidate_from_offer(const struct fi_info *offer,
				 struct mrail_rail_candidate *cand)
{
	struct mrail_ip ip;

	memset(cand, 0, sizeof(*cand));
	if (!offer->fabric_attr->prov_name || !offer->domain_attr->name ||
	    strlen(offer->fabric_attr->prov_name) >= sizeof(cand->stack) ||
	    strlen(offer->domain_attr->name) >= sizeof(cand->domain))
		return false;
	strcpy(cand->stack, offer->fabric_attr->prov_name);
	strcpy(cand->domain, offer->domain_attr->name);
	if (offer->src_addr && offer->src_addrlen >= sizeof(struct sockaddr) &&
	    !sockaddr_to_ip(offer->src_addr, &ip)) {
		cand->family = ip.family;
		cand->loopback = mrail_ip_is_loopback(&ip);
	}
	return true;
}

static int railset_discover(uint32_t version, const char *service,
			    struct mrail_railset *set)
{
	const struct mrail_corelib *lib = set->lib;
	struct mrail_rail_candidate *cands = NULL;
	const struct fi_info **by_index = NULL;
	struct fi_info *hints, *offers = NULL, *cur;
	size_t picks[MRAIL_MAX_RAILS];
	size_t n = 0, i, picked;
	int ret;

	hints = rail_hints_alloc(lib, NULL, NULL);
	if (!hints)
		return -FI_ENOMEM;
	ret = lib->getinfo(version, NULL, service, service ? FI_SOURCE : 0, hints,
			   &offers);
	rail_hints_free(lib, hints);
	if (ret) {
		MRAIL_INFO(FI_LOG_CORE, "no core provider offers RDM endpoints: %s\n",
			   fi_strerror(-ret));
		return -FI_ENODATA;
	}

	for (cur = offers; cur; cur = cur->next)
		n++;
	cands = calloc(n, sizeof(*cands));
	by_index = calloc(n, sizeof(*by_index));
	if (!cands || !by_index) {
		ret = -FI_ENOMEM;
		goto out;
	}
	n = 0;
	for (cur = offers; cur; cur = cur->next) {
		if (candidate_from_offer(cur, &cands[n]))
			by_index[n++] = cur;
	}

	picked = mrail_discover_rails(cands, n, picks, MRAIL_MAX_RAILS);
	for (i = 0; i < picked; i++) {
		struct mrail_rail *rail = &set->rails[i];

		rail->info = lib->dupinfo(by_index[picks[i]]);
		if (!rail->info) {
			ret = -FI_ENOMEM;
			goto out;
		}
		strcpy(rail->spec.stack, cands[picks[i]].stack);
		rail->spec.kind = MRAIL_ATTACH_NAME;
		strcpy(rail->spec.attach, cands[picks[i]].domain);
		strcpy(rail->port, cands[picks[i]].domain);
		set->count++;
	}
	ret = 0;
	if (!picked)
		MRAIL_INFO(FI_LOG_CORE, "discovery found no network rail\n");
out:
	free(cands);
	free(by_index);
	lib->freeinfo(offers);
	return ret;
}

/* Two rails on one port would only split that port's bandwidth. */
static int railset_check_distinct(const struct mrail_railset *set)
{
	char keys[MRAIL_MAX_RAILS][MRAIL_STACK_NAME_MAX + MRAIL_ATTACH_MAX + 1];
	const char *key_ptrs[MRAIL_MAX_RAILS];
	size_t i, first, second;

	for (i = 0; i < set->count; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%s@%s",
			 set->rails[i].spec.stack, set->rails[i].port);
		key_ptrs[i] = keys[i];
	}
	if (!mrail_rails_find_duplicate(key_ptrs, set->count, &first, &second))
		return 0;
	MRAIL_WARN(FI_LOG_CORE,
		   "FI_MRAIL_RAILS rails %zu and %zu both resolve to %s: each rail "
		   "needs a port of its own\n", first + 1, second + 1, keys[first]);
	return -FI_ENODATA;
}

int mrail_railset_resolve(uint32_t version, const char *service, uint64_t flags,
			  struct mrail_railset *set)
{
	int ret;

	memset(set, 0, sizeof(*set));
	set->lib = mrail_corelib_get();
	if (!(flags & FI_SOURCE))
		service = NULL;

	if (mrail_env.rails)
		ret = railset_from_config(version, service, set);
	else
		ret = railset_discover(version, service, set);
	if (!ret)
		ret = railset_check_distinct(set);
	if (ret)
		mrail_railset_release(set);
	return ret;
}

void mrail_railset_release(struct mrail_railset *set)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		set->lib->freeinfo(set->rails[i].info);
		set->rails[i].info = NULL;
	}
	set->count = 0;
}

bool mrail_railset_any_link_up(const struct mrail_railset *set)
{
	struct ifreq req;
	bool up = false;
	size_t i;
	int fd;

	for (i = 0; i < set->count; i++) {
		if (!set->rails[i].is_iface)
			return true;	/* a domain: nothing to tell */
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true;
	for (i = 0; i < set->count && !up; i++) {
		memset(&req, 0, sizeof(req));
		snprintf(req.ifr_name, sizeof(req.ifr_name), "%s",
			 set->rails[i].port);
		/* An interface that cannot be asked may be up. */
		up = ioctl(fd, SIOCGIFFLAGS, &req) ||
		     ((req.ifr_flags & IFF_UP) &&
		      (req.ifr_flags & IFF_RUNNING));
	}
	close(fd);
	return up;
}

int mrail_railset_match_source(const struct mrail_railset *set, const char *node)
{
	struct mrail_rail_ident idents[MRAIL_MAX_RAILS];
	size_t i;

	memset(idents, 0, sizeof(idents));
	for (i = 0; i < set->count; i++) {
		const struct fi_info *info = set->rails[i].info;

		idents[i].port = set->rails[i].port;
		if (info->src_addr && info->src_addrlen >= sizeof(struct sockaddr) &&
		    sockaddr_to_ip(info->src_addr, &idents[i].addr))
			idents[i].addr.family = 0;
	}
	return mrail_rails_match_source(node, idents, set->count);
}

int mrail_railset_local_addr(const struct mrail_railset *set, struct mrail_addr *addr)
{
	size_t i;

	memset(addr, 0, sizeof(*addr));
	for (i = 0; i < set->count; i++) {
		const struct fi_info *info = set->rails[i].info;
		struct mrail_rail_addr *rail_addr = &addr->rails[i];

		if (!info->src_addr || !info->src_addrlen ||
		    info->src_addrlen > sizeof(rail_addr->bytes)) {
			MRAIL_WARN(FI_LOG_CORE, "rail %zu (%s@%s) has no usable "
				   "source address (%zu bytes)\n", i + 1,
				   set->rails[i].spec.stack, set->rails[i].port,
				   info->src_addrlen);
			return -FI_ENODATA;
		}
		strcpy(rail_addr->stack, set->rails[i].spec.stack);
		rail_addr->format = info->addr_format;
		rail_addr->len = (uint16_t) info->src_addrlen;
		memcpy(rail_addr->bytes, info->src_addr, info->src_addrlen);
	}
	addr->rail_count = (uint8_t) set->count;
	return 0;
}

int mrail_railset_peer_addr(const struct mrail_railset *set, uint32_t version,
			    const char *node, const char *service,
			    struct mrail_addr *peer)
{
	const struct mrail_corelib *lib = set->lib;
	const char *stack = set->rails[0].spec.stack;
	struct fi_info *hints, *offers = NULL, *cur;
	int ret;

	if (!set->count)
		return -FI_ENODATA;
	/* Rail 0's own stack resolves the peer, in the format its AV takes. */
	hints = rail_hints_alloc(lib, (char *) stack, NULL);
	if (!hints)
		return -FI_ENOMEM;
	ret = lib->getinfo(version, node, service, 0, hints, &offers);
	rail_hints_free(lib, hints);
	if (ret) {
		MRAIL_WARN(FI_LOG_CORE, "rail 1 (%s) cannot resolve node \"%s\" "
			   "service \"%s\": %s\n", stack, node,
			   service ? service : "", fi_strerror(-ret));
		return -FI_ENODATA;
	}
	for (cur = offers; cur; cur = cur->next) {
		if (cur->dest_addr && cur->dest_addrlen)
			break;
	}
	ret = cur ? mrail_addr_make_partial(stack, cur->addr_format, cur->dest_addr,
					    cur->dest_addrlen, peer) : -EINVAL;
	if (ret)
		MRAIL_WARN(FI_LOG_CORE, "rail 1 (%s): node \"%s\" service \"%s\" "
			   "resolves to no usable address\n", stack, node,
			   service ? service : "");
	lib->freeinfo(offers);
	return ret ? -FI_ENODATA : 0;
}
