/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared transmit contexts (fi_stx_context, fi_endpoint(3) SHARED
 * CONTEXTS), as SHMEM runtimes open them.
 *
 * fi_endpoint(3) makes a shared transmit context mostly opaque: operations
 * are posted to the endpoints, complete on the endpoints' CQs and counters,
 * and the context has neither. What mrail cannot share is the transmit
 * queue itself: each rail endpoint of an mrail endpoint is also that
 * endpoint's address on the rail, and a peer names the sender by it, so
 * one rail queue for several endpoints would send every message as the
 * same one. An endpoint bound to a shared context therefore keeps its own
 * rail queues; the context is the binding point the API requires (an
 * endpoint opened with tx_ctx_cnt FI_SHARED_CONTEXT is enabled only once
 * bound to one), bounds the capabilities of the endpoints bound to it, and
 * counts them: at most MRAIL_STX_MAX_EPS, and it refuses to close while
 * any is bound.
 */
#include "mrail.h"
#include "mrail_ep.h"

#include <stdlib.h>

struct mrail_stx {
	struct fid_stx stx_fid;
	struct mrail_domain *domain;
	uint64_t caps;		/* 0: the domain's */
	size_t eps;		/* endpoints bound */
};

static struct fi_ops mrail_stx_fi_ops;

static int stx_close(struct fid *fid)
{
	struct mrail_stx *stx = container_of(fid, struct mrail_stx, stx_fid.fid);
	struct mrail_domain *domain = stx->domain;

	mrail_domain_lock(domain);
	if (stx->eps) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_EP_CTRL, "a shared transmit context with %zu "
			   "endpoint(s) bound cannot close: close them first\n",
			   stx->eps);
		return -FI_EBUSY;
	}
	domain->refs--;
	pthread_mutex_unlock(&domain->lock);
	free(stx);
	return 0;
}

static int stx_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	MRAIL_WARN(FI_LOG_EP_CTRL, "a shared transmit context takes no bindings: "
		   "bind it to endpoints, and CQs and counters to them\n");
	return -FI_EINVAL;
}

static struct fi_ops mrail_stx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = stx_close,
	.bind = stx_no_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

/* Operations are posted to the endpoints, never to the context. */
static ssize_t stx_no_cancel(fid_t fid, void *context)
{
	return -FI_ENOENT;
}

static int stx_no_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	return -FI_ENOPROTOOPT;
}

static int stx_no_setopt(fid_t fid, int level, int optname, const void *optval,
			 size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

static struct fi_ops_ep mrail_stx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = stx_no_cancel,
	.getopt = stx_no_getopt,
	.setopt = stx_no_setopt,
	.tx_ctx = mrail_no_tx_ctx,
	.rx_ctx = mrail_no_rx_ctx,
	.rx_size_left = mrail_no_size_left,
	.tx_size_left = mrail_no_size_left,
};

int mrail_stx_open(struct fid_domain *domain_fid, struct fi_tx_attr *attr,
		   struct fid_stx **stx_fid, void *context)
{
	struct mrail_domain *domain =
		container_of(domain_fid, struct mrail_domain, domain_fid);
	struct mrail_stx *stx;

	mrail_corelib_thread_enter();
	if (!stx_fid)
		return -FI_EINVAL;
	stx = calloc(1, sizeof(*stx));
	if (!stx)
		return -FI_ENOMEM;
	stx->domain = domain;
	stx->caps = attr ? attr->caps : 0;
	stx->stx_fid.fid.fclass = FI_CLASS_STX_CTX;
	stx->stx_fid.fid.context = context;
	stx->stx_fid.fid.ops = &mrail_stx_fi_ops;
	stx->stx_fid.ops = &mrail_stx_ep_ops;
	mrail_domain_lock(domain);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	*stx_fid = &stx->stx_fid;
	return 0;
}

int mrail_stx_attach_ep(struct mrail_ep *ep, struct fid *fid)
{
	struct mrail_stx *stx;
	/* The capabilities a transmit attribute speaks of; the others
	 * (receive side, FI_LOCAL_COMM, ...) are not the context's. */
	uint64_t tx_caps = ep->caps & (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |
				       FI_COLLECTIVE | FI_SEND | FI_READ |
				       FI_WRITE | FI_TRIGGER | FI_FENCE);

	if (fid->ops != &mrail_stx_fi_ops) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: a shared transmit context "
			   "mrail did not open\n");
		return -FI_EINVAL;
	}
	stx = container_of(fid, struct mrail_stx, stx_fid.fid);
	if (stx->domain != ep->domain) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: the shared transmit "
			   "context belongs to another domain\n");
		return -FI_EINVAL;
	}
	if (ep->stx) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: the endpoint is already "
			   "bound to a shared transmit context (fi_endpoint(3): "
			   "one only)\n");
		return ep->stx == stx ? 0 : -FI_EINVAL;
	}
	/* fi_endpoint(3): an endpoint uses a subset of the context's. */
	if (stx->caps && (tx_caps & ~stx->caps)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: the endpoint's transmit "
			   "capabilities %#llx are not all the shared transmit "
			   "context's\n", (unsigned long long) tx_caps);
		return -FI_EINVAL;
	}
	if (stx->eps >= MRAIL_STX_MAX_EPS) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_ep_bind: a shared transmit context "
			   "takes at most %d endpoints\n", MRAIL_STX_MAX_EPS);
		return -FI_ENOSPC;
	}
	stx->eps++;
	ep->stx = stx;
	return 0;
}

void mrail_stx_detach_ep(struct mrail_ep *ep)
{
	if (ep->stx)
		ep->stx->eps--;
	ep->stx = NULL;
}
