/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Endpoint: one core endpoint per rail, each with its own CQ and a pool of
 * bounce buffers, bound to the rail's AV. The engine (mrail_engine.c)
 * reads the rails' CQs; this file opens, enables, binds and closes.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"
#include "mrail_coll.h"
#include "mrail_msg.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * fi_getinfo(NULL, service, FI_SOURCE) bound every rail's source address in
 * mrail's src_addr to service, but fi_fabric resolves the rails anew
 * without it: a rail endpoint takes its address from the info the
 * application opened the endpoint with. The bytes are copied into the
 * corelib's own duplicate (its allocator owns the buffer).
 */
static struct fi_info *rail_info_dup(struct mrail_ep *ep, size_t rail)
{
	const struct mrail_railset *rails = &ep->domain->fabric->rails;
	const struct mrail_rail_addr *src = &ep->src.rails[rail];
	struct fi_info *info = rails->lib->dupinfo(rails->rails[rail].info);

	if (info && rail < ep->src.rail_count && info->src_addr &&
	    info->src_addrlen == src->len && info->addr_format == src->format &&
	    !strcmp(src->stack, rails->rails[rail].spec.stack))
		memcpy(info->src_addr, src->bytes, src->len);
	return info;
}

/*
 * A rail endpoint that libfabric before 2.0 cannot close. Its tcp provider
 * cancels, at close, an RMA read whose request is still queued (the link is
 * down, the socket full) with an error entry that has no context, and
 * ofi_rxm dereferences that context: the process dies with SIGSEGV in
 * fi_close. mrail has such reads only when the application closes the
 * endpoint while a rendezvous is in flight on a dead rail. Such a rail is
 * kept open instead, with its CQ and buffers, and nothing progresses it
 * again: a few kilobytes and a socket for the life of the process, against
 * a crash. (2.x reports no error for that request; checked with 2.6.)
 */
struct kept_rail {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	void *mem;
	struct kept_rail *next;
};

/* The rails kept, so that everything of theirs stays reachable (the core
 * provider's objects through the endpoint) while mrail is loaded. */
static struct kept_rail *kept_rails;
static pthread_mutex_t kept_rails_lock = PTHREAD_MUTEX_INITIALIZER;

/* LeakSanitizer's, when it is loaded: libfabric unloads mrail at exit, so
 * the list above is gone by the time a leak checker looks, and each record
 * is marked as kept on purpose (what it points to is then reachable). */
extern void __lsan_ignore_object(const void *p) __attribute__((weak));

static bool rail_close_crashes(const struct mrail_ep *ep, size_t rail)
{
	/* The private copy of libfabric the rails run in is the application's
	 * own file (mrail_corelib.c), so its version is fi_version()'s. */
	return ep->rail_eps[rail] && ep->policy.rails[rail].reads_in_flight &&
	       FI_MAJOR(fi_version()) < 2;
}

static void rail_keep_open(struct mrail_ep *ep, size_t rail)
{
	struct kept_rail *kept = calloc(1, sizeof(*kept));

	MRAIL_WARN(FI_LOG_EP_CTRL, "rail %zu of an endpoint closed with %" PRIu32
		   " reads in flight (its link is down, or the peer gone): it "
		   "is left open, as this libfabric (%u.%u) crashes closing it\n",
		   rail + 1, ep->policy.rails[rail].reads_in_flight,
		   FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	if (kept) {
		*kept = (struct kept_rail) {
			.ep = ep->rail_eps[rail], .cq = ep->rail_cqs[rail],
			.mr = ep->rail_mrs[rail], .mem = ep->rail_mem[rail],
		};
		if (__lsan_ignore_object) {
			__lsan_ignore_object(kept);
			if (kept->mem)
				__lsan_ignore_object(kept->mem);
		}
		pthread_mutex_lock(&kept_rails_lock);
		kept->next = kept_rails;
		kept_rails = kept;
		pthread_mutex_unlock(&kept_rails_lock);
	}
	ep->rail_eps[rail] = NULL;
	ep->rail_cqs[rail] = NULL;
	ep->rail_mrs[rail] = NULL;
	ep->rail_mem[rail] = NULL;
}

/* Closes what rail_enable opened of one rail, in any state it left it: the
 * rail is as before rail_enable, which may then run again. */
static void rail_disable(struct mrail_ep *ep, size_t rail)
{
	if (rail_close_crashes(ep, rail))
		rail_keep_open(ep, rail);
	if (ep->rail_eps[rail])
		fi_close(&ep->rail_eps[rail]->fid);
	if (ep->rail_cqs[rail])
		fi_close(&ep->rail_cqs[rail]->fid);
	if (ep->rail_mrs[rail])
		fi_close(&ep->rail_mrs[rail]->fid);
	free(ep->rail_mem[rail]);
	ep->rail_eps[rail] = NULL;
	ep->rail_cqs[rail] = NULL;
	ep->rail_mrs[rail] = NULL;
	ep->rail_desc[rail] = NULL;
	ep->rail_mem[rail] = NULL;
	ep->tx_free[rail] = NULL;
}

/* Opens, binds and enables one rail's endpoint and posts its receives;
 * on failure the caller undoes it with rail_disable. */
static int rail_enable(struct mrail_ep *ep, size_t rail)
{
	struct mrail_fabric *fabric = ep->domain->fabric;
	struct fi_info *info = fabric->rails.rails[rail].info, *bound;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG, .size = 1024 };
	size_t pool_len = (MRAIL_RX_BUFS_PER_RAIL + MRAIL_TX_BUFS_PER_RAIL) *
			  MRAIL_RAIL_BUF_LEN;
	struct fid_domain *domain = ep->domain->rail_domains[rail];
	size_t i;
	int ret;

	ep->rail_mr_mode[rail] = info->domain_attr->mr_mode;
	/* A wait object may cost a rail latency: only the progress thread,
	 * which sleeps on it, asks for one. */
	if (ep->domain->progress_auto)
		cq_attr.wait_obj = FI_WAIT_FD;
	/* The CQ before the endpoint: ofi_rxm (1.17) crashes closing an
	 * endpoint that never had its AV and CQ, which rail_disable would do
	 * if the CQ could not open after it. */
	ret = fi_cq_open(domain, &cq_attr, &ep->rail_cqs[rail], NULL);
	if (ret)
		return ret;
	bound = rail_info_dup(ep, rail);
	if (!bound)
		return -FI_ENOMEM;
	ret = fi_endpoint(domain, bound, &ep->rail_eps[rail], NULL);
	fabric->rails.lib->freeinfo(bound);
	if (ret)
		return ret;
	ret = fi_ep_bind(ep->rail_eps[rail], &ep->rail_cqs[rail]->fid,
			 FI_TRANSMIT | FI_RECV);
	if (ret)
		return ret;
	ret = fi_ep_bind(ep->rail_eps[rail], &ep->av->rail_avs[rail]->fid, 0);
	if (ret)
		return ret;
	ret = fi_enable(ep->rail_eps[rail]);
	if (ret)
		return ret;

	ep->rail_mem[rail] = calloc(1, pool_len);
	if (!ep->rail_mem[rail])
		return -FI_ENOMEM;
	if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
		ret = fi_mr_reg(domain, ep->rail_mem[rail], pool_len,
				FI_SEND | FI_RECV, 0, 0, 0, &ep->rail_mrs[rail], NULL);
		if (ret)
			return ret;
		ep->rail_desc[rail] = fi_mr_desc(ep->rail_mrs[rail]);
	}
	for (i = 0; i < MRAIL_TX_BUFS_PER_RAIL; i++) {
		struct mrail_rail_buf *buf = &ep->tx_bufs[rail][i];

		buf->rc.kind = MRAIL_CTX_TX;
		buf->rc.rail = rail;
		buf->ep = ep;
		buf->data = ep->rail_mem[rail] + i * MRAIL_RAIL_BUF_LEN;
		buf->free_next = ep->tx_free[rail];
		ep->tx_free[rail] = buf;
	}
	for (i = 0; i < MRAIL_RX_BUFS_PER_RAIL; i++) {
		struct mrail_rail_buf *buf = &ep->rx_bufs[rail][i];

		buf->rc.kind = MRAIL_CTX_RX;
		buf->rc.rail = rail;
		buf->ep = ep;
		buf->data = ep->rail_mem[rail] +
			    (MRAIL_TX_BUFS_PER_RAIL + i) * MRAIL_RAIL_BUF_LEN;
		ret = mrail_rx_buf_post(ep, buf);
		if (ret)
			return ret;
	}
	return 0;
}

static int ep_local_addr(struct mrail_ep *ep, struct mrail_addr *local);

static int ep_enable(struct mrail_ep *ep)
{
	struct mrail_railset *rails = &ep->domain->fabric->rails;
	struct mrail_addr local;
	size_t rail;
	int ret;

	if (ep->tx_shared && !ep->stx) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "an endpoint opened with tx_ctx_cnt "
			   "FI_SHARED_CONTEXT needs a shared transmit context "
			   "(fi_stx_context) bound before fi_enable\n");
		return -FI_EINVAL;
	}
	if (ep->rx_shared && !ep->srx) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "an endpoint opened with rx_ctx_cnt "
			   "FI_SHARED_CONTEXT needs a shared receive context "
			   "(fi_srx_context) bound before fi_enable\n");
		return -FI_EINVAL;
	}
	if (ep->srx) {
		ret = mrail_srx_check_enable(ep);
		if (ret)
			return ret;
	}
	if (!ep->av || !ep->tx_cq || !ep->rx_cq) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "bind an AV and a CQ for transmit and "
			   "receive before fi_enable\n");
		return -FI_ENOCQ;
	}
	for (rail = 0; rail < ep->rail_count; rail++) {
		ret = rail_enable(ep, rail);
		if (ret) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "rail %zu (%s@%s): cannot enable "
				   "its endpoint: %s; the endpoint stays disabled, "
				   "and fi_enable may be called again\n", rail + 1,
				   rails->rails[rail].spec.stack,
				   rails->rails[rail].port, fi_strerror(-ret));
			rail++;		/* this one is half open */
			goto close_rails;
		}
	}
	/* Every header we send names us by this key (wire.h). */
	ret = ep_local_addr(ep, &local);
	if (ret)
		goto close_rails;
	ep->self_key = mrail_addr_key(&local);
	if (!ep->self_key) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "this endpoint's rail addresses cannot "
			   "form an mrail address\n");
		ret = -FI_EINVAL;
		goto close_rails;
	}
	ret = mrail_progress_add_ep(ep->domain, ep);
	if (ret)
		goto close_rails;
	ep->enabled = true;
	return 0;

close_rails:
	/* Nothing was sent yet: closing the rails loses nothing. */
	while (rail--)
		rail_disable(ep, rail);
	ep->self_key = 0;
	return ret;
}

/*
 * FI_GETOPSFLAG and FI_SETOPSFLAG: *flags names FI_TRANSMIT or FI_RECV (one
 * of them) and, for SET, the new defaults of that side's calls.
 */
static int ep_ops_flags(struct mrail_ep *ep, int command, uint64_t *flags)
{
	uint64_t side, *op_flags, allowed;

	if (!flags)
		return -FI_EINVAL;
	side = *flags & (FI_TRANSMIT | FI_RECV);
	if (side == FI_TRANSMIT) {
		op_flags = &ep->tx_op_flags;
		allowed = MRAIL_TX_OP_FLAGS;
	} else if (side == FI_RECV) {
		op_flags = &ep->rx_op_flags;
		allowed = MRAIL_RX_OP_FLAGS;
	} else {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_GETOPSFLAG/FI_SETOPSFLAG need "
			   "exactly one of FI_TRANSMIT and FI_RECV\n");
		return -FI_EINVAL;
	}
	if (command == FI_GETOPSFLAG) {
		*flags = side | *op_flags;
		return 0;
	}
	if (*flags & ~(side | allowed)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "FI_SETOPSFLAG: flags 0x%" PRIx64
			   " are not operation flags mrail supports\n",
			   *flags & ~(side | allowed));
		return -FI_EBADFLAGS;
	}
	*op_flags = *flags & allowed;
	return 0;
}

static int mrail_ep_control(struct fid *fid, int command, void *arg)
{
	struct mrail_ep *ep = container_of(fid, struct mrail_ep, ep_fid.fid);
	int ret;

	switch (command) {
	case FI_ENABLE:
		mrail_domain_lock(ep->domain);
		ret = ep->enabled ? 0 : ep_enable(ep);
		pthread_mutex_unlock(&ep->domain->lock);
		return ret;
	case FI_ALIAS:
		return mrail_ep_alias(ep, arg);
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		mrail_domain_lock(ep->domain);
		ret = ep_ops_flags(ep, command, arg);
		pthread_mutex_unlock(&ep->domain->lock);
		return ret;
	case FI_MRAIL_GET_PEER_RAILS:
		mrail_domain_lock(ep->domain);
		ret = mrail_health_control(ep, arg);
		pthread_mutex_unlock(&ep->domain->lock);
		return ret;
	default:
		return mrail_policy_control(ep, command, arg);
	}
}

static int ep_bind_cq(struct mrail_ep *ep, struct mrail_cq *cq, uint64_t flags)
{
	int ret;

	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	ret = mrail_cq_attach_ep(cq, ep);
	if (ret)
		return ret;
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	return 0;
}

#define MRAIL_EP_CNTR_FLAGS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			     FI_REMOTE_READ | FI_REMOTE_WRITE)

/* The endpoint's counter slots, in the order of ep_cntr_bits. */
static struct mrail_cntr **ep_cntr_slot(struct mrail_ep *ep, size_t i)
{
	struct mrail_cntr **slots[] = {
		&ep->send_cntr, &ep->recv_cntr, &ep->read_cntr, &ep->write_cntr,
		&ep->rread_cntr, &ep->rwrite_cntr,
	};

	return slots[i];
}

static const uint64_t ep_cntr_bits[] = {
	FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE,
};

#define EP_CNTR_SLOTS (sizeof(ep_cntr_bits) / sizeof(ep_cntr_bits[0]))

static bool ep_uses_cntr(struct mrail_ep *ep, struct mrail_cntr *cntr)
{
	size_t i;

	for (i = 0; i < EP_CNTR_SLOTS; i++) {
		if (*ep_cntr_slot(ep, i) == cntr)
			return true;
	}
	return false;
}

/*
 * A counter counts the endpoint's operations of the kinds flags names; it
 * also drives the endpoint's progress when read or waited on, so it is
 * attached once, however many kinds it counts. A kind bound again moves to
 * the new counter.
 */
static int ep_bind_cntr(struct mrail_ep *ep, struct mrail_cntr *cntr, uint64_t flags)
{
	struct mrail_cntr **slot, *old;
	size_t i;
	int ret;

	if (!flags || (flags & ~MRAIL_EP_CNTR_FLAGS)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind of a counter takes FI_SEND, "
			   "FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ or "
			   "FI_REMOTE_WRITE, not %#llx\n", (unsigned long long) flags);
		return -FI_EBADFLAGS;
	}
	ret = mrail_cntr_attach_ep(cntr, ep);
	if (ret)
		return ret;
	for (i = 0; i < EP_CNTR_SLOTS; i++) {
		if (!(flags & ep_cntr_bits[i]))
			continue;
		slot = ep_cntr_slot(ep, i);
		old = *slot;
		*slot = cntr;
		if (old && old != cntr && !ep_uses_cntr(ep, old))
			mrail_cntr_detach_ep(old, ep);
	}
	return 0;
}

/* Every counter bound lets go of the endpoint (each once). */
static void ep_detach_cntrs(struct mrail_ep *ep)
{
	struct mrail_cntr *cntr;
	size_t i, j;
	bool seen;

	for (i = 0; i < EP_CNTR_SLOTS; i++) {
		cntr = *ep_cntr_slot(ep, i);
		seen = false;
		for (j = 0; j < i; j++)
			seen = seen || *ep_cntr_slot(ep, j) == cntr;
		if (cntr && !seen)
			mrail_cntr_detach_ep(cntr, ep);
	}
	for (i = 0; i < EP_CNTR_SLOTS; i++)
		*ep_cntr_slot(ep, i) = NULL;
}

/*
 * A scalable endpoint's context closed (caller holds the lock): the CQ and
 * counters of its side are unbound from the endpoint, so the application
 * can close them before the endpoint (fi_scalable_ep(3) closes contexts,
 * then their CQs). Later completions of that side find no CQ and no
 * counter to report to.
 */
void mrail_ep_context_closed(struct mrail_ep *ep, uint64_t side)
{
	uint64_t bits = side == FI_TRANSMIT ? (FI_SEND | FI_READ | FI_WRITE) :
			(FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE);
	struct mrail_cntr **slot, *cntr;
	size_t i;

	if (side == FI_TRANSMIT && ep->tx_cq) {
		if (ep->tx_cq != ep->rx_cq)
			mrail_cq_detach_ep(ep->tx_cq, ep);
		ep->tx_cq = NULL;
	} else if (side == FI_RECV && ep->rx_cq) {
		if (ep->rx_cq != ep->tx_cq)
			mrail_cq_detach_ep(ep->rx_cq, ep);
		ep->rx_cq = NULL;
	}
	for (i = 0; i < EP_CNTR_SLOTS; i++) {
		if (!(ep_cntr_bits[i] & bits))
			continue;
		slot = ep_cntr_slot(ep, i);
		cntr = *slot;
		*slot = NULL;
		if (cntr && !ep_uses_cntr(ep, cntr))
			mrail_cntr_detach_ep(cntr, ep);
	}
}

static int mrail_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mrail_ep *ep = container_of(fid, struct mrail_ep, ep_fid.fid);
	struct mrail_cntr *cntr;
	int ret = -FI_EINVAL;

	mrail_domain_lock(ep->domain);
	if (ep->enabled) {
		ret = -FI_EOPBADSTATE;
	} else if (bfid->fclass == FI_CLASS_AV) {
		ep->av = container_of(bfid, struct mrail_av, av_fid.fid);
		ret = 0;
	} else if (bfid->fclass == FI_CLASS_CQ) {
		ret = ep_bind_cq(ep, container_of(bfid, struct mrail_cq, cq_fid.fid),
				 flags);
	} else if (bfid->fclass == FI_CLASS_EQ) {
		/* fi_join_collective reports FI_JOIN_COMPLETE there. */
		ret = mrail_eq_from_fid(bfid) ? 0 : -FI_EINVAL;
		if (ret)
			MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: an event queue that "
				   "mrail did not open\n");
		if (!ret && !ep->eq) {
			ep->eq = mrail_eq_from_fid(bfid);
			mrail_eq_attach(ep->eq);
		}
	} else if (bfid->fclass == FI_CLASS_STX_CTX) {
		ret = mrail_stx_attach_ep(ep, bfid);
	} else if (bfid->fclass == FI_CLASS_SRX_CTX) {
		ret = mrail_srx_attach_ep(ep, bfid);
	} else if (bfid->fclass == FI_CLASS_CNTR) {
		cntr = mrail_cntr_from_fid(bfid);
		if (cntr)
			ret = ep_bind_cntr(ep, cntr, flags);
		else
			MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: a counter that "
				   "mrail did not open\n");
	}
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

/* Our full mrail address: the rails' own names carry the ports they were
 * bound to, known once the rails are enabled. */
static int ep_local_addr(struct mrail_ep *ep, struct mrail_addr *local)
{
	size_t rail, len;
	int ret;

	*local = ep->domain->local_addr;
	for (rail = 0; rail < ep->rail_count; rail++) {
		len = sizeof(local->rails[rail].bytes);
		ret = fi_getname(&ep->rail_eps[rail]->fid, local->rails[rail].bytes,
				 &len);
		if (ret)
			return ret;
		local->rails[rail].len = (uint16_t) len;
	}
	return 0;
}

static int ep_name(struct mrail_ep *ep, void *addr, size_t *addrlen, bool full)
{
	uint8_t encoded[MRAIL_ADDR_MAX_LEN];
	struct mrail_addr local;
	size_t needed;
	int ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	ret = ep_local_addr(ep, &local);
	if (ret)
		return ret;
	if (!full && ep->domain->addr_format != FI_ADDR_MRAIL) {
		/* A socket address format: the first rail's, which peers
		 * insert and complete with a HELLO. */
		needed = local.rails[0].len;
		memcpy(encoded, local.rails[0].bytes, needed);
	} else {
		if (mrail_addr_encode(&local, encoded, sizeof(encoded)) < 0)
			return -FI_EINVAL;
		needed = mrail_addr_encoded_len(&local);
	}
	/* As fi_cm(3) says: truncate, and report the size needed. */
	ret = *addrlen < needed ? -FI_ETOOSMALL : 0;
	if (addr)
		memcpy(addr, encoded, ret ? *addrlen : needed);
	*addrlen = needed;
	return ret;
}

int mrail_ep_full_name(struct mrail_ep *ep, void *addr, size_t *addrlen)
{
	return ep_name(ep, addr, addrlen, true);
}

static int mrail_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct mrail_ep *ep = container_of(fid, struct mrail_ep, ep_fid.fid);

	return ep_name(ep, addr, addrlen, false);
}

static void ep_free(struct mrail_ep *ep)
{
	size_t rail;

	for (rail = 0; rail < ep->rail_count; rail++)
		rail_disable(ep, rail);
	mrail_msg_flush(ep);
	mrail_engine_flush(ep);
	mrail_cq_bad_message_summary(ep);
	mrail_deferred_flush(ep);
	mrail_srx_detach_ep(ep);
	mrail_peers_free(ep);
	free(ep);
}

static struct fi_ops mrail_ep_fi_ops;

struct mrail_ep *mrail_ep_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EP || fid->ops != &mrail_ep_fi_ops)
		return NULL;
	return container_of(fid, struct mrail_ep, ep_fid.fid);
}

/*
 * Drives the endpoint while mrail's own answers still wait in its queues
 * for a transmit buffer (at most MRAIL_CLOSE_LINGER_MS): an ACK queued
 * there may be what a peer counts a read on or completes a send on.
 */
static void ep_linger(struct mrail_ep *ep)
{
	uint64_t deadline_ns = mrail_now_ns() + MRAIL_CLOSE_LINGER_MS * 1000000ULL;

	while (mrail_deferred_pending(ep)) {
		mrail_ep_progress(ep);
		if (mrail_now_ns() >= deadline_ns) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "closing with answers to peers "
				   "still queued after %d ms: those peers may "
				   "wait for them\n", MRAIL_CLOSE_LINGER_MS);
			break;
		}
	}
}

static int mrail_ep_close(struct fid *fid)
{
	struct mrail_ep *ep = container_of(fid, struct mrail_ep, ep_fid.fid);
	struct mrail_domain *domain = ep->domain;

	mrail_domain_lock(domain);
	if (ep->aliases) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_EP_CTRL, "this endpoint still has %zu alias(es) "
			   "open: close them first (fi_endpoint(3))\n", ep->aliases);
		return -FI_EBUSY;
	}
	if (ep->enabled)
		ep_linger(ep);
	/* Off the progress thread's list before its rails close. */
	if (ep->enabled)
		mrail_progress_remove_ep(domain, ep);
	mrail_trigger_ep_close(ep);
	mrail_coll_ep_close(ep);
	if (ep->eq)
		mrail_eq_detach(ep->eq);
	mrail_stx_detach_ep(ep);
	ep_detach_cntrs(ep);
	if (ep->tx_cq)
		mrail_cq_detach_ep(ep->tx_cq, ep);
	if (ep->rx_cq)
		mrail_cq_detach_ep(ep->rx_cq, ep);
	domain->refs--;
	mrail_policy_log_stats(ep);
	ep_free(ep);
	pthread_mutex_unlock(&domain->lock);
	return 0;
}

static ssize_t mrail_ep_cancel(fid_t fid, void *context)
{
	struct mrail_ep *ep = container_of(fid, struct mrail_ep, ep_fid.fid);
	ssize_t ret;

	mrail_domain_lock(ep->domain);
	ret = mrail_trigger_cancel(ep, context);
	if (ret == -FI_ENOENT)
		ret = mrail_msg_cancel(ep, context);
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

/* fi_endpoint(3) options: FI_OPT_MIN_MULTI_RECV, and FI_OPT_CM_DATA_SIZE
 * (0: an RDM endpoint has no connection messages to carry data). */
static int mrail_ep_getopt(fid_t fid, int level, int optname, void *optval,
			   size_t *optlen)
{
	struct mrail_ep *ep = container_of(fid, struct mrail_ep, ep_fid.fid);
	size_t value;

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		mrail_domain_lock(ep->domain);
		value = ep->min_multi_recv;
		pthread_mutex_unlock(&ep->domain->lock);
		break;
	case FI_OPT_CM_DATA_SIZE:
		value = 0;
		break;
	default:
		return -FI_ENOPROTOOPT;
	}
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen < sizeof(value)) {
		*optlen = sizeof(value);
		return -FI_ETOOSMALL;
	}
	memcpy(optval, &value, sizeof(value));
	*optlen = sizeof(value);
	return 0;
}

static int mrail_ep_setopt(fid_t fid, int level, int optname,
			   const void *optval, size_t optlen)
{
	struct mrail_ep *ep = container_of(fid, struct mrail_ep, ep_fid.fid);
	size_t value;

	/* FI_OPT_CM_DATA_SIZE is read-only, like every option not listed. */
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MIN_MULTI_RECV)
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(value))
		return -FI_EINVAL;
	memcpy(&value, optval, sizeof(value));
	/* Applies to buffers posted from now on (fi_endpoint(3)). */
	mrail_domain_lock(ep->domain);
	ep->min_multi_recv = value;
	pthread_mutex_unlock(&ep->domain->lock);
	return 0;
}

/* fi_scalable_ep(3): one transmit and one receive context (index 0). */
static int mrail_ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
			   struct fid_ep **tx_ep, void *context)
{
	struct mrail_ep *ep = container_of(sep, struct mrail_ep, ep_fid);

	if (!ep->scalable)
		return -FI_ENOSYS;
	if (index != 0 || !tx_ep) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_tx_context: index %d: an mrail "
			   "scalable endpoint has one transmit context, 0\n", index);
		return -FI_EINVAL;
	}
	return mrail_ep_context_open(ep, FI_TRANSMIT,
				     attr ? attr->op_flags : ep->tx_op_flags,
				     tx_ep, context);
}

static int mrail_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			   struct fid_ep **rx_ep, void *context)
{
	struct mrail_ep *ep = container_of(sep, struct mrail_ep, ep_fid);

	if (!ep->scalable)
		return -FI_ENOSYS;
	if (index != 0 || !rx_ep) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_rx_context: index %d: an mrail "
			   "scalable endpoint has one receive context, 0\n", index);
		return -FI_EINVAL;
	}
	return mrail_ep_context_open(ep, FI_RECV,
				     attr ? attr->op_flags : ep->rx_op_flags,
				     rx_ep, context);
}

static struct fi_ops mrail_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_ep_close,
	.bind = mrail_ep_bind,
	.control = mrail_ep_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static struct fi_ops_ep mrail_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = mrail_ep_cancel,
	.getopt = mrail_ep_getopt,
	.setopt = mrail_ep_setopt,
	.tx_ctx = mrail_ep_tx_ctx,
	.rx_ctx = mrail_ep_rx_ctx,
	.rx_size_left = mrail_no_size_left,
	.tx_size_left = mrail_no_size_left,
};

static struct fi_ops_cm mrail_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = mrail_no_setname,
	.getname = mrail_ep_getname,
	.getpeer = mrail_no_getpeer,
	.connect = mrail_no_connect,
	.listen = mrail_no_listen,
	.accept = mrail_no_accept,
	.reject = mrail_no_reject,
	.shutdown = mrail_no_shutdown,
	.join = mrail_coll_join,
};

int mrail_ep_open(struct fid_domain *domain_fid, struct fi_info *info,
		  struct fid_ep **ep_fid, void *context)
{
	struct mrail_domain *domain =
		container_of(domain_fid, struct mrail_domain, domain_fid);
	struct mrail_ep *ep;
	int ret;

	mrail_corelib_thread_enter();
	if (info->ep_attr && info->ep_attr->type != FI_EP_RDM)
		return -FI_EINVAL;
	/* One transmit context, or a shared one; one receive context. */
	if (info->ep_attr && ((info->ep_attr->tx_ctx_cnt > 1 &&
			       info->ep_attr->tx_ctx_cnt != FI_SHARED_CONTEXT) ||
			      (info->ep_attr->rx_ctx_cnt > 1 &&
			       info->ep_attr->rx_ctx_cnt != FI_SHARED_CONTEXT))) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_endpoint: tx_ctx_cnt %zu, "
			   "rx_ctx_cnt %zu: mrail endpoints have one transmit "
			   "context and one receive context, or shared ones\n",
			   info->ep_attr->tx_ctx_cnt, info->ep_attr->rx_ctx_cnt);
		return -FI_EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->domain = domain;
	ep->tx_shared = info->ep_attr &&
			info->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT;
	ep->rx_shared = info->ep_attr &&
			info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT;
	ep->caps = info->caps;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags & MRAIL_TX_OP_FLAGS : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags & MRAIL_RX_OP_FLAGS : 0;
	ep->rail_count = domain->fabric->rails.count;
	ep->limits.max_eager = MRAIL_EAGER_MAX;
	ep->limits.max_msg = MRAIL_MAX_MSG;
	ep->limits.rail_count = (uint8_t) ep->rail_count;
	ep->min_multi_recv = MRAIL_MIN_MULTI_RECV_DEFAULT;
	/* Without a usable src_addr the rails keep the fabric's addresses. */
	if (info->src_addr && info->addr_format == FI_ADDR_MRAIL &&
	    mrail_addr_decode(info->src_addr, info->src_addrlen, &ep->src, NULL, 0))
		ep->src.rail_count = 0;
	mrail_match_queue_init(&ep->msg_queue);
	mrail_match_queue_init(&ep->tag_queue);
	ep->msgq = &ep->msg_queue;
	ep->tagq = &ep->tag_queue;
	ret = mrail_liveness_env(&ep->live_timeout_ns);
	if (!ret)
		ret = mrail_health_env(&ep->health);
	if (!ret)
		ret = mrail_policy_init(ep);
	if (ret) {
		free(ep);
		return ret;
	}

	mrail_domain_lock(domain);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &mrail_ep_fi_ops;
	ep->ep_fid.ops = &mrail_ep_ops;
	ep->ep_fid.cm = &mrail_ep_cm_ops;
	ep->ep_fid.msg = &mrail_msg_ops;
	ep->ep_fid.tagged = &mrail_tagged_ops;
	ep->ep_fid.rma = &mrail_rma_ops;
	ep->ep_fid.atomic = &mrail_atomic_ops;
	ep->ep_fid.collective = &mrail_coll_ops;
	*ep_fid = &ep->ep_fid;
	return 0;
}

int mrail_sep_open(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **sep, void *context)
{
	struct mrail_ep *ep;
	struct fid_ep *fid;
	int ret;

	if (!info || (info->ep_attr && (info->ep_attr->tx_ctx_cnt > 1 ||
					info->ep_attr->rx_ctx_cnt > 1))) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_scalable_ep: tx_ctx_cnt %zu, "
			   "rx_ctx_cnt %zu: an mrail scalable endpoint has one "
			   "transmit and one receive context (domain_attr "
			   "max_ep_tx_ctx, max_ep_rx_ctx)\n",
			   info && info->ep_attr ? info->ep_attr->tx_ctx_cnt : 0,
			   info && info->ep_attr ? info->ep_attr->rx_ctx_cnt : 0);
		return -FI_EINVAL;
	}
	ret = mrail_ep_open(domain, info, &fid, context);
	if (ret)
		return ret;
	ep = container_of(fid, struct mrail_ep, ep_fid);
	ep->scalable = true;
	ep->ep_fid.fid.fclass = FI_CLASS_SEP;
	*sep = fid;
	return 0;
}
