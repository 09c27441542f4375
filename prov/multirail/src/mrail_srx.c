/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared receive contexts (fi_srx_context, fi_endpoint(3) SHARED
 * CONTEXTS): receives posted to the context are usable by every endpoint
 * bound to it.
 *
 * The context owns one pair of matching queues (untagged, tagged: posted
 * receives and unexpected messages), and every endpoint bound to it
 * matches there instead of in its own (ep->msgq, ep->tagq): a message that
 * arrives on any of them takes the oldest posted receive that accepts it,
 * a receive takes the oldest unexpected message of any of them, in
 * arrival order. A message remembers the endpoint it arrived on, which
 * delivers it (its rails read a rendezvous, its CQ and counters get the
 * completion, as fi_endpoint(3) says: "posted to the CQs bound to the
 * endpoint"). Senders are named by fi_addr, so the endpoints must share
 * one AV (fi_endpoint(3) requires it of connectionless endpoints).
 *
 * A receive posted to the context goes through one of its enabled
 * endpoints' receive path (any one: they share the queues and the AV).
 * FI_MULTI_RECV, FI_PEEK and FI_CLAIM are not offered on the context.
 */
#include "mrail.h"
#include "mrail_ep.h"
#include "mrail_msg.h"

#include <stdlib.h>

#include <rdma/fi_tagged.h>

struct mrail_srx {
	struct fid_ep ep_fid;
	struct mrail_domain *domain;
	struct mrail_match_queue msg_queue, tag_queue;
	struct mrail_ep *eps;		/* bound, linked by srx_next */
	size_t ep_count;
	struct mrail_av *av;		/* the first enabled endpoint's */
	uint64_t rx_op_flags;		/* fi_recv's flags: the attr's */
};

#define SRX(fid_ep) container_of(fid_ep, struct mrail_srx, ep_fid)

static struct fi_ops mrail_srx_fi_ops;

/* An enabled endpoint to post through, or NULL. */
static struct mrail_ep *srx_poster(struct mrail_srx *srx)
{
	struct mrail_ep *ep;

	mrail_domain_lock(srx->domain);
	for (ep = srx->eps; ep && !ep->enabled; ep = ep->srx_next)
		;
	pthread_mutex_unlock(&srx->domain->lock);
	if (!ep)
		MRAIL_WARN(FI_LOG_EP_DATA, "a receive on a shared receive context "
			   "with no enabled endpoint: bind one and enable it "
			   "first\n");
	return ep;
}

static ssize_t srx_post(struct fid_ep *fid, const struct iovec *iov, size_t count,
			fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
			uint64_t flags, bool tagged)
{
	struct mrail_ep *ep;

	if (flags & (FI_MULTI_RECV | FI_PEEK | FI_CLAIM | FI_TRIGGER)) {
		MRAIL_WARN(FI_LOG_EP_DATA, "a shared receive context takes no "
			   "FI_MULTI_RECV, FI_PEEK, FI_CLAIM or FI_TRIGGER "
			   "receives; post them to an endpoint with its own "
			   "receive context\n");
		return -FI_EINVAL;
	}
	ep = srx_poster(SRX(fid));
	if (!ep)
		return -FI_EOPBADSTATE;
	return mrail_post_recv(ep, iov, count, src, tag, ignore, context, flags,
			       tagged);
}

static ssize_t srx_recvv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src, void *context)
{
	return srx_post(fid, iov, count, src, 0, 0, context, SRX(fid)->rx_op_flags,
			false);
}

static ssize_t srx_recv(struct fid_ep *fid, void *buf, size_t len, void *desc,
			fi_addr_t src, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return srx_recvv(fid, &iov, NULL, 1, src, context);
}

static ssize_t srx_recvmsg(struct fid_ep *fid, const struct fi_msg *msg,
			   uint64_t flags)
{
	return srx_post(fid, msg->msg_iov, msg->iov_count, msg->addr, 0, 0,
			msg->context, flags, false);
}

static ssize_t srx_trecvv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			  size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
			  void *context)
{
	return srx_post(fid, iov, count, src, tag, ignore, context,
			SRX(fid)->rx_op_flags, true);
}

static ssize_t srx_trecv(struct fid_ep *fid, void *buf, size_t len, void *desc,
			 fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return srx_trecvv(fid, &iov, NULL, 1, src, tag, ignore, context);
}

static ssize_t srx_trecvmsg(struct fid_ep *fid, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	return srx_post(fid, msg->msg_iov, msg->iov_count, msg->addr, msg->tag,
			msg->ignore, msg->context, flags, true);
}

/* Transmit calls: a receive context sends nothing. */
static ssize_t srx_no_send(struct fid_ep *fid, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_sendv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			    size_t count, fi_addr_t dest, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_sendmsg(struct fid_ep *fid, const struct fi_msg *msg,
			      uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_inject(struct fid_ep *fid, const void *buf, size_t len,
			     fi_addr_t dest)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_senddata(struct fid_ep *fid, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_injectdata(struct fid_ep *fid, const void *buf, size_t len,
				 uint64_t data, fi_addr_t dest)
{
	return -FI_ENOSYS;
}

static struct fi_ops_msg srx_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = srx_recv,
	.recvv = srx_recvv,
	.recvmsg = srx_recvmsg,
	.send = srx_no_send,
	.sendv = srx_no_sendv,
	.sendmsg = srx_no_sendmsg,
	.inject = srx_no_inject,
	.senddata = srx_no_senddata,
	.injectdata = srx_no_injectdata,
};

static ssize_t srx_no_tsend(struct fid_ep *fid, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_tsendv(struct fid_ep *fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest, uint64_t tag,
			     void *context)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_tsendmsg(struct fid_ep *fid, const struct fi_msg_tagged *msg,
			       uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_tinject(struct fid_ep *fid, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t tag)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_tsenddata(struct fid_ep *fid, const void *buf, size_t len,
				void *desc, uint64_t data, fi_addr_t dest, uint64_t tag,
				void *context)
{
	return -FI_ENOSYS;
}

static ssize_t srx_no_tinjectdata(struct fid_ep *fid, const void *buf, size_t len,
				  uint64_t data, fi_addr_t dest, uint64_t tag)
{
	return -FI_ENOSYS;
}

static struct fi_ops_tagged srx_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = srx_trecv,
	.recvv = srx_trecvv,
	.recvmsg = srx_trecvmsg,
	.send = srx_no_tsend,
	.sendv = srx_no_tsendv,
	.sendmsg = srx_no_tsendmsg,
	.inject = srx_no_tinject,
	.senddata = srx_no_tsenddata,
	.injectdata = srx_no_tinjectdata,
};

/* fi_cancel of a receive posted to the context (through an endpoint, whose
 * CQ reports the cancellation). */
static ssize_t srx_cancel(fid_t fid, void *context)
{
	struct mrail_srx *srx = container_of(fid, struct mrail_srx, ep_fid.fid);
	struct mrail_ep *ep = srx_poster(srx);
	ssize_t ret;

	if (!ep)
		return -FI_ENOENT;
	mrail_domain_lock(srx->domain);
	ret = mrail_msg_cancel(ep, context);
	pthread_mutex_unlock(&srx->domain->lock);
	return ret;
}

static int srx_no_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	return -FI_ENOPROTOOPT;
}

static int srx_no_setopt(fid_t fid, int level, int optname, const void *optval,
			 size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

static struct fi_ops_ep srx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = srx_cancel,
	.getopt = srx_no_getopt,
	.setopt = srx_no_setopt,
	.tx_ctx = mrail_no_tx_ctx,
	.rx_ctx = mrail_no_rx_ctx,
	.rx_size_left = mrail_no_size_left,
	.tx_size_left = mrail_no_size_left,
};

static void srx_free_queue(struct mrail_match_queue *q)
{
	struct mrail_match_item *item;

	/* No endpoint is bound: no message is left, and the receives
	 * complete nothing (the context has no CQ). */
	while ((item = q->posted)) {
		mrail_match_cancel_recv(q, item);
		free(container_of(item, struct mrail_recv, item));
	}
}

static int srx_close(struct fid *fid)
{
	struct mrail_srx *srx = container_of(fid, struct mrail_srx, ep_fid.fid);
	struct mrail_domain *domain = srx->domain;

	mrail_domain_lock(domain);
	if (srx->ep_count) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_EP_CTRL, "a shared receive context with %zu "
			   "endpoint(s) bound cannot close: close them first\n",
			   srx->ep_count);
		return -FI_EBUSY;
	}
	srx_free_queue(&srx->msg_queue);
	srx_free_queue(&srx->tag_queue);
	domain->refs--;
	pthread_mutex_unlock(&domain->lock);
	free(srx);
	return 0;
}

static int srx_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	MRAIL_WARN(FI_LOG_EP_CTRL, "a shared receive context takes no bindings: "
		   "bind it to endpoints, and CQs, counters and the AV to "
		   "them\n");
	return -FI_EINVAL;
}

static int srx_control(struct fid *fid, int command, void *arg)
{
	/* Nothing to enable: it works once an endpoint bound to it is. */
	return command == FI_ENABLE ? 0 : -FI_ENOSYS;
}

static struct fi_ops mrail_srx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = srx_close,
	.bind = srx_no_bind,
	.control = srx_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

int mrail_srx_open(struct fid_domain *domain_fid, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context)
{
	struct mrail_domain *domain =
		container_of(domain_fid, struct mrail_domain, domain_fid);
	struct mrail_srx *srx;

	mrail_corelib_thread_enter();
	if (!rx_ep)
		return -FI_EINVAL;
	if (attr && (attr->op_flags & FI_MULTI_RECV)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_srx_context: FI_MULTI_RECV is not "
			   "offered on a shared receive context\n");
		return -FI_EINVAL;
	}
	srx = calloc(1, sizeof(*srx));
	if (!srx)
		return -FI_ENOMEM;
	srx->domain = domain;
	srx->rx_op_flags = attr ? attr->op_flags & MRAIL_RX_OP_FLAGS : 0;
	mrail_match_queue_init(&srx->msg_queue);
	mrail_match_queue_init(&srx->tag_queue);
	srx->ep_fid.fid.fclass = FI_CLASS_SRX_CTX;
	srx->ep_fid.fid.context = context;
	srx->ep_fid.fid.ops = &mrail_srx_fi_ops;
	srx->ep_fid.ops = &srx_ep_ops;
	srx->ep_fid.msg = &srx_msg_ops;
	srx->ep_fid.tagged = &srx_tagged_ops;
	mrail_domain_lock(domain);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	*rx_ep = &srx->ep_fid;
	return 0;
}

int mrail_srx_attach_ep(struct mrail_ep *ep, struct fid *fid)
{
	struct mrail_srx *srx;

	if (fid->ops != &mrail_srx_fi_ops) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: a shared receive context "
			   "mrail did not open\n");
		return -FI_EINVAL;
	}
	srx = container_of(fid, struct mrail_srx, ep_fid.fid);
	if (srx->domain != ep->domain) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: the shared receive "
			   "context belongs to another domain\n");
		return -FI_EINVAL;
	}
	if (ep->srx) {
		if (ep->srx == srx)
			return 0;
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: the endpoint is already "
			   "bound to a shared receive context (fi_endpoint(3): "
			   "one only)\n");
		return -FI_EINVAL;
	}
	if (srx->ep_count >= MRAIL_SRX_MAX_EPS) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: a shared receive context "
			   "takes at most %d endpoints\n", MRAIL_SRX_MAX_EPS);
		return -FI_ENOSPC;
	}
	ep->srx = srx;
	ep->msgq = &srx->msg_queue;
	ep->tagq = &srx->tag_queue;
	ep->srx_next = srx->eps;
	srx->eps = ep;
	srx->ep_count++;
	return 0;
}

int mrail_srx_check_enable(struct mrail_ep *ep)
{
	struct mrail_srx *srx = ep->srx;
	struct mrail_ep *other;

	for (other = srx->eps; other; other = other->srx_next) {
		if (other != ep && other->enabled && other->av != ep->av) {
			MRAIL_WARN(FI_LOG_EP_CTRL, "the endpoints of a shared "
				   "receive context must share one AV "
				   "(fi_endpoint(3)): bind the same AV\n");
			return -FI_EINVAL;
		}
	}
	return 0;
}

void mrail_srx_detach_ep(struct mrail_ep *ep)
{
	struct mrail_srx *srx = ep->srx;
	struct mrail_ep **link;

	if (!srx)
		return;
	for (link = &srx->eps; *link; link = &(*link)->srx_next) {
		if (*link == ep) {
			*link = ep->srx_next;
			break;
		}
	}
	srx->ep_count--;
	ep->srx = NULL;
	ep->msgq = &ep->msg_queue;
	ep->tagq = &ep->tag_queue;
}
