/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_ops_tagged: the message path with tags, plus the probe operations of
 * fi_tagged(3): FI_PEEK looks at the unexpected queue, FI_CLAIM reserves a
 * message for a later receive, FI_DISCARD drops one.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"
#include "mrail_msg.h"

#include <stdlib.h>

#define EP(fid) container_of(fid, struct mrail_ep, ep_fid)

/*
 * FI_PEEK (with FI_CLAIM or FI_DISCARD): reports the oldest matching
 * unexpected message without its data (buf NULL, as fi_tagged(3) allows: a
 * rendezvous message's data has not moved yet), or FI_ENOMSG.
 */
static void tagged_peek(struct mrail_ep *ep, const struct fi_msg_tagged *msg,
			uint64_t flags)
{
	struct mrail_match_item probe = {
		/* Messages carry their peer's canonical entry. */
		.src = (ep->caps & FI_DIRECTED_RECV) && msg->addr != FI_ADDR_UNSPEC ?
		       mrail_av_canon(ep->av, msg->addr) : MRAIL_MATCH_ANY_SRC,
		.tag = msg->tag,
		.ignore = msg->ignore,
	};
	struct mrail_match_item *found;
	struct mrail_rx_msg *rx;
	struct mrail_cq_entry entry = {
		.op_context = msg->context,
		.flags = FI_RECV | FI_TAGGED,
		.src = FI_ADDR_NOTAVAIL,
	};

	/* What has reached the rails by now is what a peek can find. */
	mrail_ep_progress(ep);
	found = mrail_match_peek(ep->tagq, &probe);
	if (!found) {
		entry.err = FI_ENOMSG;
		entry.prov_errno = -FI_ENOMSG;
		entry.tag = msg->tag;
		mrail_cq_write(ep->rx_cq, &entry);
		return;
	}
	rx = container_of(found, struct mrail_rx_msg, item);
	entry.len = rx->len;
	entry.tag = found->tag;
	entry.src = mrail_av_shown(ep->av, found->src);
	if (rx->has_data) {
		entry.flags |= FI_REMOTE_CQ_DATA;
		entry.data = rx->data;
	}
	if (flags & FI_DISCARD) {
		mrail_match_remove_unexpected(ep->tagq, found);
		mrail_rx_msg_discard(rx->ep, rx);
	} else if (flags & FI_CLAIM) {
		mrail_match_claim(found, msg->context);
	}
	mrail_cq_write(ep->rx_cq, &entry);
}

/* FI_CLAIM without FI_PEEK: receives (or with FI_DISCARD drops) the message
 * an earlier FI_PEEK|FI_CLAIM with the same context reserved. */
static ssize_t tagged_claim(struct mrail_ep *ep, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	struct mrail_recv *recv = NULL;
	struct mrail_match_item *found;
	struct mrail_rx_msg *rx;

	/* Allocated first: once taken, the message must not go back to a
	 * queue where a posted receive could match it. */
	if (!(flags & FI_DISCARD)) {
		recv = calloc(1, sizeof(*recv));
		if (!recv)
			return -FI_ENOMEM;
	}
	found = mrail_match_take_claimed(ep->tagq, msg->context);
	if (!found) {
		free(recv);
		return -FI_EINVAL;
	}
	rx = container_of(found, struct mrail_rx_msg, item);
	if (flags & FI_DISCARD) {
		/* The receive that claimed the message completes, empty. */
		mrail_user_complete(ep, &(struct mrail_cq_entry) {
			.op_context = msg->context,
			.flags = FI_RECV | FI_TAGGED,
			.tag = found->tag, .src = found->src,
		}, true);
		mrail_rx_msg_discard(rx->ep, rx);
		return 0;
	}
	for (recv->iov_count = 0; recv->iov_count < msg->iov_count; recv->iov_count++)
		recv->iov[recv->iov_count] = msg->msg_iov[recv->iov_count];
	recv->context = msg->context;
	recv->flags = flags;
	recv->tagged = true;
	mrail_recv_complete(rx->ep, recv, rx);
	return 0;
}

static ssize_t mrail_trecvmsg(struct fid_ep *ep_fid, const struct fi_msg_tagged *msg,
			      uint64_t flags)
{
	struct mrail_ep *ep = EP(ep_fid);
	ssize_t ret = 0;

	if (flags & FI_TRIGGER)
		return mrail_trigger_post(ep, FI_OP_TRECV, msg, NULL, NULL, flags);
	if (!(flags & (FI_PEEK | FI_CLAIM)))
		return mrail_post_recv(ep, msg->msg_iov, msg->iov_count, msg->addr,
				       msg->tag, msg->ignore, msg->context, flags,
				       true);
	if (msg->iov_count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	mrail_domain_lock(ep->domain);
	/* As a receive from an address the AV does not hold is refused. */
	if ((flags & FI_PEEK) && (ep->caps & FI_DIRECTED_RECV) &&
	    msg->addr != FI_ADDR_UNSPEC &&
	    mrail_av_canon(ep->av, msg->addr) == FI_ADDR_NOTAVAIL)
		ret = -FI_EINVAL;
	else if (flags & FI_PEEK)
		tagged_peek(ep, msg, flags);
	else
		ret = tagged_claim(ep, msg, flags);
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

static ssize_t mrail_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			   fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return mrail_post_recv(EP(ep), &iov, 1, src, tag, ignore, context,
			       EP(ep)->rx_op_flags, true);
}

static ssize_t mrail_trecvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			    size_t count, fi_addr_t src, uint64_t tag,
			    uint64_t ignore, void *context)
{
	return mrail_post_recv(EP(ep), iov, count, src, tag, ignore, context,
			       EP(ep)->rx_op_flags, true);
}

static ssize_t mrail_tsend(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			   fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, tag, 0, context,
				 EP(ep)->tx_op_flags, true, false);
}

static ssize_t mrail_tsendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			    size_t count, fi_addr_t dest, uint64_t tag, void *context)
{
	return mrail_send_common(EP(ep), iov, count, dest, tag, 0, context,
				 EP(ep)->tx_op_flags, true, false);
}

static ssize_t mrail_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			      uint64_t flags)
{
	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep), FI_OP_TSEND, msg, NULL, NULL, flags);
	return mrail_send_common(EP(ep), msg->msg_iov, msg->iov_count, msg->addr,
				 msg->tag, msg->data, msg->context, flags, true, false);
}

static ssize_t mrail_tinject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, tag, 0, NULL,
				 EP(ep)->tx_op_flags & FI_DELIVERY_COMPLETE, true, true);
}

static ssize_t mrail_tsenddata(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest,
			       uint64_t tag, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, tag, data, context,
				 EP(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, true, false);
}

static ssize_t mrail_tinjectdata(struct fid_ep *ep, const void *buf, size_t len,
				 uint64_t data, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, tag, data, NULL,
				 FI_REMOTE_CQ_DATA |
				 (EP(ep)->tx_op_flags & FI_DELIVERY_COMPLETE), true, true);
}

struct fi_ops_tagged mrail_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = mrail_trecv,
	.recvv = mrail_trecvv,
	.recvmsg = mrail_trecvmsg,
	.send = mrail_tsend,
	.sendv = mrail_tsendv,
	.sendmsg = mrail_tsendmsg,
	.inject = mrail_tinject,
	.senddata = mrail_tsenddata,
	.injectdata = mrail_tinjectdata,
};
