/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_getinfo for mrail: one FI_EP_RDM offer that stands for all rails.
 */
#include "mrail.h"
#include "mrail_cq.h"
#include "mrail_ep.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mrail_ip.h"
#include "offer.h"

/*
 * libfabric's private fi_getinfo flags (include/ofi.h, not installed): a
 * utility provider such as ofi_rxm or ofi_rxd looking for a core provider to
 * layer on. mrail is not a core to layer on, and answering would recurse.
 */
#define MRAIL_OFI_INTERNAL_FLAGS ((1ULL << 58) | (1ULL << 59) | (1ULL << 60))

/* fi_endpoint(3)'s generic tag format (what ofi_rxm advertises): every bit
 * of the 64-bit tag is the application's to use. */
#define MRAIL_TAG_FORMAT 0xaaaaaaaaaaaaaaaaULL

/* Peers on this host are reached over the rails like any other. */
#define MRAIL_CAPS (FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_SOURCE | \
		    FI_DIRECTED_RECV | FI_MULTI_RECV | FI_LOCAL_COMM | \
		    FI_REMOTE_COMM | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | \
		    FI_REMOTE_WRITE | FI_ATOMIC | FI_RMA_EVENT | FI_TRIGGER)

/* Offered only to hints that ask for them (fi_collective(3): the
 * application asks for FI_COLLECTIVE); never in a default offer.
 * FI_NAMED_RX_CTX: a scalable endpoint's one receive context is named by
 * fi_rx_addr(addr, 0, bits), which is addr. FI_SHARED_AV: named AVs other
 * processes on the node open (mrail_av_shared.c). FI_SOURCE_ERR: an unknown
 * sender's address in an error completion (mrail_user_complete). */
#define MRAIL_CAPS_ON_REQUEST (FI_COLLECTIVE | FI_NAMED_RX_CTX | FI_SHARED_AV | \
			       FI_SOURCE_ERR)

/* Secondary capabilities reported even unasked: peers on this host and on
 * others go the same way, so neither costs anything. */
#define MRAIL_CAPS_FREE (FI_LOCAL_COMM | FI_REMOTE_COMM)

/* Sequence numbers restore send order whatever rail a message took; no
 * other ordering is promised (RMA and atomics may take any rail). */
#define MRAIL_MSG_ORDER FI_ORDER_SAS

static const struct mrail_offer_prov mrail_offer_prov = {
	.supported = MRAIL_CAPS | MRAIL_CAPS_ON_REQUEST,
	.on_request = MRAIL_CAPS_ON_REQUEST,
	.free_secondary = MRAIL_CAPS_FREE,
};

/* What the hints ask that mrail's offer decides: capabilities, mr_mode
 * and ordering. */
struct offer_terms {
	struct mrail_offer_caps caps;
	int mr_mode;
	uint32_t addr_format;
	uint32_t api_version;		/* the caller's, echoed in fabric_attr */
};

static int hints_negotiate(uint32_t version, const struct fi_info *hints,
			   struct offer_terms *terms)
{
	const struct fi_domain_attr *dom = hints ? hints->domain_attr : NULL;
	const struct fi_tx_attr *tx = hints ? hints->tx_attr : NULL;
	const struct fi_rx_attr *rx = hints ? hints->rx_attr : NULL;
	/* comp_order is a 1.x field: 2.x callers "should set it to 0"
	 * (fi_endpoint(3) of 2.x), so only a 1.x caller's value is checked. */
	uint64_t tx_comp = tx && version < MRAIL_FI_VERSION_2 ? tx->comp_order : 0;
	uint64_t rx_comp = rx && version < MRAIL_FI_VERSION_2 ? rx->comp_order : 0;
	char err[200] = "";
	int ret;

	terms->api_version = version;
	ret = mrail_offer_caps(&mrail_offer_prov, hints ? hints->caps : 0,
			       dom ? dom->caps : 0, tx ? tx->caps : 0,
			       rx ? rx->caps : 0, &terms->caps, err, sizeof(err));
	if (!ret)
		ret = mrail_offer_mr_mode(version, dom ? dom->mr_mode : 0,
					  &terms->mr_mode, err, sizeof(err));
	if (ret) {
		MRAIL_INFO(FI_LOG_CORE, "%s\n", err);
		return -FI_ENODATA;
	}
	if (tx && (!mrail_offer_order_ok(MRAIL_MSG_ORDER, tx->msg_order) ||
		   !mrail_offer_order_ok(MRAIL_ORDER_NONE, tx_comp))) {
		MRAIL_INFO(FI_LOG_CORE, "hints->tx_attr asks for message order "
			   "%#llx, completion order %#llx; mrail keeps only "
			   "send-after-send order (FI_ORDER_SAS)\n",
			   (unsigned long long) tx->msg_order,
			   (unsigned long long) tx_comp);
		return -FI_ENODATA;
	}
	if (rx && (!mrail_offer_order_ok(MRAIL_MSG_ORDER, rx->msg_order) ||
		   !mrail_offer_order_ok(MRAIL_ORDER_NONE, rx_comp))) {
		MRAIL_INFO(FI_LOG_CORE, "hints->rx_attr asks for message order "
			   "%#llx, completion order %#llx; mrail keeps only "
			   "send-after-send order (FI_ORDER_SAS)\n",
			   (unsigned long long) rx->msg_order,
			   (unsigned long long) rx_comp);
		return -FI_ENODATA;
	}
	return 0;
}

/* Set while this thread is inside mrail_getinfo: with the application's own
 * libfabric as corelib, discovery would otherwise reach mrail again. */
static __thread bool in_getinfo;

/* FI_PROVIDER lists mrail among the providers to use (not "^mrail,..."). */
static bool env_names_mrail(void)
{
	const char *filter = getenv("FI_PROVIDER");
	const char *cur, *end;
	size_t len = strlen(FI_MRAIL_PROV_NAME);

	if (!filter || filter[0] == '^')
		return false;
	for (cur = filter; *cur; cur = *end ? end + 1 : end) {
		end = strchrnul(cur, ',');
		if ((size_t) (end - cur) == len &&
		    !strncasecmp(cur, FI_MRAIL_PROV_NAME, len))
			return true;
	}
	return false;
}

static bool asked_for_mrail(const struct fi_info *hints)
{
	if (hints && hints->fabric_attr && hints->fabric_attr->prov_name &&
	    !strcasecmp(hints->fabric_attr->prov_name, FI_MRAIL_PROV_NAME))
		return true;
	return env_names_mrail();
}

/* Requests mrail can never satisfy, refused before any rail is touched. */
static bool hints_exclude_mrail(const struct fi_info *hints)
{
	if (!hints)
		return false;
	if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_RDM)
		return true;
	if (hints->caps & ~(MRAIL_CAPS | MRAIL_CAPS_ON_REQUEST)) {
		MRAIL_INFO(FI_LOG_CORE, "hints ask for capabilities mrail lacks: %s\n",
			   fi_tostr(&(uint64_t){ hints->caps & ~(MRAIL_CAPS |
						MRAIL_CAPS_ON_REQUEST) },
				    FI_TYPE_CAPS));
		return true;
	}
	/* One transmit and one receive context, or shared ones
	 * (mrail_stx.c, mrail_srx.c): no scalable endpoints. */
	if (hints->ep_attr && ((hints->ep_attr->tx_ctx_cnt > 1 &&
				hints->ep_attr->tx_ctx_cnt != FI_SHARED_CONTEXT) ||
			       (hints->ep_attr->rx_ctx_cnt > 1 &&
				hints->ep_attr->rx_ctx_cnt != FI_SHARED_CONTEXT)))
		return true;
	return false;
}

char *mrail_railset_join_names(const struct mrail_railset *set, bool fabric_names)
{
	char buf[MRAIL_MAX_RAILS * (MRAIL_ATTACH_MAX + 1) + 1] = "";
	size_t i, used = 0;

	for (i = 0; i < set->count; i++) {
		const struct fi_info *info = set->rails[i].info;
		const char *name = fabric_names ?
			(info->fabric_attr->name ? info->fabric_attr->name : "?") :
			set->rails[i].port;

		used += (size_t) snprintf(buf + used, sizeof(buf) - used, "%s%s",
					  i ? "+" : "", name);
		if (used >= sizeof(buf))
			return NULL;
	}
	return strdup(buf);
}

static bool hints_match_names(const struct fi_info *hints, const struct fi_info *info)
{
	if (!hints)
		return true;
	if (hints->domain_attr && hints->domain_attr->name &&
	    strcmp(hints->domain_attr->name, info->domain_attr->name))
		return false;
	if (hints->fabric_attr && hints->fabric_attr->name &&
	    strcmp(hints->fabric_attr->name, info->fabric_attr->name))
		return false;
	return true;
}

/* What the rails still decide: the endpoint can promise only what its
 * weakest rail offers. */
static void info_limit_to_rails(const struct mrail_railset *set, struct fi_info *info)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		const struct fi_info *rail = set->rails[i].info;

		if (!i || rail->rx_attr->size < info->rx_attr->size)
			info->rx_attr->size = rail->rx_attr->size;
		if (!i || rail->domain_attr->ep_cnt < info->domain_attr->ep_cnt)
			info->domain_attr->ep_cnt = rail->domain_attr->ep_cnt;
		if (!i || rail->domain_attr->cq_cnt < info->domain_attr->cq_cnt)
			info->domain_attr->cq_cnt = rail->domain_attr->cq_cnt;
	}
}

/* A socket address format: the endpoint is named by its first rail. */
static int info_set_addr_rail0(const struct mrail_rail_addr *rail, void **addr,
			       size_t *addrlen)
{
	*addr = malloc(rail->len);
	if (!*addr)
		return -FI_ENOMEM;
	memcpy(*addr, rail->bytes, rail->len);
	*addrlen = rail->len;
	return 0;
}

static int info_set_src_addr(const struct mrail_railset *set, struct fi_info *info)
{
	struct mrail_addr addr;
	size_t needed;
	ssize_t len;
	int ret;

	ret = mrail_railset_local_addr(set, &addr);
	if (ret)
		return ret;
	if (info->addr_format != FI_ADDR_MRAIL)
		return info_set_addr_rail0(&addr.rails[0], &info->src_addr,
					   &info->src_addrlen);
	/* 0: the rails' addresses break the rules every peer enforces. */
	needed = mrail_addr_encoded_len(&addr);
	if (!needed) {
		MRAIL_WARN(FI_LOG_CORE, "the rails' addresses do not form a valid "
			   "mrail address\n");
		return -FI_EINVAL;
	}
	info->src_addr = malloc(needed);
	if (!info->src_addr)
		return -FI_ENOMEM;
	len = mrail_addr_encode(&addr, info->src_addr, needed);
	if (len < 0) {
		MRAIL_WARN(FI_LOG_CORE, "cannot encode the local rail addresses: %s\n",
			   strerror((int) -len));
		return -FI_EINVAL;
	}
	info->src_addrlen = (size_t) len;
	return 0;
}

static bool hints_want_auto(const struct fi_info *hints)
{
	return hints && hints->domain_attr &&
	       (hints->domain_attr->data_progress == FI_PROGRESS_AUTO ||
		hints->domain_attr->control_progress == FI_PROGRESS_AUTO);
}

/*
 * fi_getinfo(node, service): the peer's address names its rail 0 only
 * (MRAIL_ADDR_FLAG_PARTIAL). Inserted into an AV, it lets this endpoint
 * send a HELLO over rail 0; the peer answers with its full address.
 */
static int info_set_dest_addr(const struct mrail_railset *set, uint32_t version,
			      const char *node, const char *service,
			      struct fi_info *info)
{
	struct mrail_addr peer;
	size_t needed;
	int ret;

	ret = mrail_railset_peer_addr(set, version, node, service, &peer);
	if (ret)
		return ret;
	if (info->addr_format != FI_ADDR_MRAIL)
		return info_set_addr_rail0(&peer.rails[0], &info->dest_addr,
					   &info->dest_addrlen);
	needed = mrail_addr_encoded_len(&peer);
	info->dest_addr = needed ? malloc(needed) : NULL;
	if (!info->dest_addr)
		return -FI_ENOMEM;
	if (mrail_addr_encode(&peer, info->dest_addr, needed) < 0)
		return -FI_EINVAL;
	info->dest_addrlen = needed;
	return 0;
}

static int info_from_railset(const struct mrail_railset *set,
			     const struct fi_info *hints,
			     const struct offer_terms *terms, struct fi_info **out)
{
	struct fi_info *info;
	int ret;

	info = fi_allocinfo();
	if (!info)
		return -FI_ENOMEM;

	info->caps = terms->caps.caps;
	info->mode = 0;
	info->addr_format = terms->addr_format;
	info->ep_attr->type = FI_EP_RDM;
	info->ep_attr->protocol = FI_PROTO_UNSPEC;
	info->ep_attr->protocol_version = 1;
	/* Tags travel whole in mrail's header: all 64 bits are the caller's
	 * (MPI libraries size their tag fields from this). */
	info->ep_attr->mem_tag_format = MRAIL_TAG_FORMAT;

	info->domain_attr->name = mrail_railset_join_names(set, false);
	/* mrail serialises every object on its domain lock, which serves any
	 * threading level: the one asked for is the one offered. */
	info->domain_attr->threading = hints && hints->domain_attr &&
				       hints->domain_attr->threading ?
				       hints->domain_attr->threading : FI_THREAD_SAFE;
	/* Manual unless asked: the progress thread of FI_PROGRESS_AUTO costs
	 * a thread per domain and wait objects on the rails' CQs. */
	info->domain_attr->control_progress = hints_want_auto(hints) ?
		FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL;
	info->domain_attr->data_progress = info->domain_attr->control_progress;
	/* Counters are mrail's own, as many as memory allows. */
	info->domain_attr->cntr_cnt = MRAIL_CNTR_CNT;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_UNSPEC;
	info->domain_attr->mr_mode = terms->mr_mode;
	info->domain_attr->caps = terms->caps.domain_caps;
	/* One IO vector per region (mrail_mr_regv), keys of 64 bits chosen
	 * by the application. */
	info->domain_attr->mr_iov_limit = 1;
	info->domain_attr->mr_key_size = sizeof(uint64_t);
	info->domain_attr->cq_data_size = sizeof(uint64_t);
	info->ep_attr->tx_ctx_cnt = hints && hints->ep_attr &&
		hints->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT ? FI_SHARED_CONTEXT : 1;
	info->ep_attr->rx_ctx_cnt = hints && hints->ep_attr &&
		hints->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT ? FI_SHARED_CONTEXT : 1;
	/* Scalable endpoints (fi_scalable_ep) get one context each way. */
	info->domain_attr->tx_ctx_cnt = 1;
	info->domain_attr->rx_ctx_cnt = 1;
	info->domain_attr->max_ep_tx_ctx = 1;
	info->domain_attr->max_ep_rx_ctx = 1;
	info->domain_attr->max_ep_stx_ctx = MRAIL_STX_MAX_EPS;
	info->domain_attr->max_ep_srx_ctx = MRAIL_SRX_MAX_EPS;
	info->tx_attr->caps = terms->caps.tx_caps;
	info->rx_attr->caps = terms->caps.rx_caps;
	/* Defaults of fi_send, fi_recv...: what was asked, where supported. */
	if (hints && hints->tx_attr)
		info->tx_attr->op_flags = hints->tx_attr->op_flags & MRAIL_TX_OP_FLAGS;
	if (hints && hints->rx_attr)
		info->rx_attr->op_flags = hints->rx_attr->op_flags & MRAIL_RX_OP_FLAGS;
	info_limit_to_rails(set, info);
	/* Eager messages are copied into mrail's own buffers, larger ones go
	 * by rendezvous: these limits are mrail's, whatever the rails allow. */
	info->ep_attr->max_msg_size = MRAIL_MAX_MSG;
	info->tx_attr->inject_size = MRAIL_EAGER_MAX;
	info->tx_attr->iov_limit = MRAIL_IOV_LIMIT;
	/* RMA: one remote range per operation (mrail_rma.c). */
	info->tx_attr->rma_iov_limit = 1;
	info->rx_attr->iov_limit = MRAIL_IOV_LIMIT;
	info->tx_attr->size = MRAIL_TX_BUFS_PER_RAIL * set->count;
	info->tx_attr->msg_order = MRAIL_MSG_ORDER;
	info->rx_attr->msg_order = MRAIL_MSG_ORDER;

	info->fabric_attr->name = mrail_railset_join_names(set, true);
	info->fabric_attr->prov_version = MRAIL_PROV_VERSION;
	info->fabric_attr->api_version = terms->api_version;

	if (!info->domain_attr->name || !info->fabric_attr->name) {
		ret = -FI_ENOMEM;
		goto err;
	}
	ret = info_set_src_addr(set, info);
	if (ret)
		goto err;
	*out = info;
	return 0;
err:
	fi_freeinfo(info);
	return ret;
}

int mrail_getinfo(uint32_t version, const char *node, const char *service,
		  uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
	struct mrail_railset set;
	struct fi_info *offer = NULL;
	struct offer_terms terms;
	bool asked_by_name = asked_for_mrail(hints);
	int ret;

	mrail_corelib_thread_enter();
	*info = NULL;
	if (in_getinfo || (flags & MRAIL_OFI_INTERNAL_FLAGS) ||
	    hints_exclude_mrail(hints) || hints_negotiate(version, hints, &terms))
		return -FI_ENODATA;

	in_getinfo = true;
	ret = mrail_railset_resolve(version, service, flags, &set);
	in_getinfo = false;
	if (ret)
		return -FI_ENODATA;

	/* FI_SOURCE: node is where to bind. Each rail binds to its own
	 * port, so any one rail's interface or address selects the set. */
	if (node && (flags & FI_SOURCE) &&
	    mrail_railset_match_source(&set, node) < 0) {
		MRAIL_INFO(FI_LOG_CORE, "FI_SOURCE node \"%s\" is not the interface "
			   "or address of any rail (%zu rails)\n", node, set.count);
		ret = -FI_ENODATA;
		goto out;
	}
	if (set.count < 2 && !asked_by_name) {
		MRAIL_INFO(FI_LOG_CORE, "%zu rail found; mrail lists itself with two "
			   "or more rails unless asked for by name\n", set.count);
		ret = -FI_ENODATA;
		goto out;
	}
	if (!set.count) {
		ret = -FI_ENODATA;
		goto out;
	}
	/* A bad FI_MRAIL_* policy variable fails like a bad FI_MRAIL_RAILS. */
	ret = mrail_policy_env_check(&set);
	if (ret)
		goto out;
	ret = mrail_liveness_env(&(uint64_t) { 0 });
	if (ret)
		goto out;
	ret = mrail_health_env(&(struct mrail_health_config) { 0 });
	if (ret)
		goto out;
	ret = mrail_idle_env(&(uint64_t) { 0 });
	if (ret)
		goto out;

	if (mrail_offer_addr_format(hints ? hints->addr_format : FI_FORMAT_UNSPEC,
				    set.rails[0].info->addr_format, FI_ADDR_MRAIL,
				    &terms.addr_format)) {
		MRAIL_INFO(FI_LOG_CORE, "hints ask for address format %u; mrail "
			   "takes its own (FI_ADDR_MRAIL) or, when its first "
			   "rail uses one, a socket address (FI_SOCKADDR*)\n",
			   hints->addr_format);
		ret = -FI_ENODATA;
		goto out;
	}
	ret = info_from_railset(&set, hints, &terms, &offer);
	if (ret)
		goto out;
	if (!hints_match_names(hints, offer)) {
		fi_freeinfo(offer);
		ret = -FI_ENODATA;
		goto out;
	}
	if (node && !(flags & FI_SOURCE)) {
		in_getinfo = true;
		ret = info_set_dest_addr(&set, version, node, service, offer);
		in_getinfo = false;
		if (ret) {
			fi_freeinfo(offer);
			ret = -FI_ENODATA;
			goto out;
		}
	}
	*info = offer;
out:
	mrail_railset_release(&set);
	return ret;
}
