/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages: posted receives and their matching, delivery and completions,
 * the eager protocol's sender, and fi_ops_msg. A message up to
 * MRAIL_EAGER_MAX bytes travels whole on one rail; a larger one by
 * rendezvous (mrail_rdv.c). Either way it carries the sender's per-peer
 * sequence number, and the engine (mrail_engine.c) puts arrivals back in
 * send order (core/reorder.c) before mrail_msg_deliver matches them
 * (core/match.c), so matching order holds whatever rail each took.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"
#include "mrail_msg.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t mrail_iov_total(const struct iovec *iov, size_t count)
{
	size_t i, total = 0;

	for (i = 0; i < count; i++)
		total += iov[i].iov_len;
	return total;
}

static size_t copy_to_iov(const struct iovec *iov, size_t count, const uint8_t *src,
			  size_t len)
{
	size_t i, done = 0, n;

	for (i = 0; i < count && done < len; i++) {
		n = iov[i].iov_len < len - done ? iov[i].iov_len : len - done;
		if (n)
			memcpy(iov[i].iov_base, src + done, n);
		done += n;
	}
	return done;
}

/* ---- completions ---- */

void mrail_user_complete(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			 bool report)
{
	struct mrail_cq_entry shown;
	struct mrail_cntr *cntr = NULL;
	struct mrail_cq *cq = ep->tx_cq;

	mrail_assert_locked(ep->domain);

	/* Sources are canonical entries inside mrail: the application sees
	 * one it has not removed, or FI_ADDR_NOTAVAIL for a sender it never
	 * inserted; with FI_SOURCE_ERR that is an FI_EADDRNOTAVAIL error
	 * carrying the sender's address (fi_cq(3)), the message received. */
	fi_addr_t slot = entry->src;
	bool unknown_src = false;

	if (entry->src != FI_ADDR_NOTAVAIL && ep->av) {
		shown = *entry;
		shown.src = mrail_av_shown(ep->av, entry->src);
		unknown_src = shown.src == FI_ADDR_NOTAVAIL;
		entry = &shown;
	}
	/* An operation a trigger issued completes as the application's. */
	if (ep->domain->trig_live && mrail_trigger_complete(ep, entry, report))
		return;
	if (unknown_src && !entry->err && (entry->flags & FI_RECV) &&
	    (ep->caps & FI_SOURCE_ERR) && ep->rx_cq &&
	    (shown.src_addr = mrail_av_raw_addr(ep->av, slot,
						&shown.src_addrlen))) {
		shown.err = FI_EADDRNOTAVAIL;
		shown.prov_errno = -FI_EADDRNOTAVAIL;
	}
	if (entry->flags & FI_SEND) {
		cntr = ep->send_cntr;
	} else if (entry->flags & FI_RECV) {
		cntr = ep->recv_cntr;
		cq = ep->rx_cq;
	} else if (entry->flags & FI_READ) {
		cntr = ep->read_cntr;
	} else if (entry->flags & FI_WRITE) {
		cntr = ep->write_cntr;
	}
	if (cntr) {
		/* An unknown source is no failure: the message arrived. */
		if (entry->err && entry->err != FI_EADDRNOTAVAIL)
			mrail_cntr_inc_err(cntr);
		else
			mrail_cntr_inc(cntr);
	}
	if (!(report || entry->err) || !cq || mrail_cq_write(cq, entry))
		free(entry->src_addr);
}

/* ---- receive side ---- */

struct mrail_cq_entry mrail_recv_entry(const struct mrail_recv *recv,
				       const struct mrail_rx_msg *msg)
{
	return (struct mrail_cq_entry) {
		.op_context = recv->context,
		.flags = FI_RECV | (recv->tagged ? FI_TAGGED : FI_MSG) |
			 (msg->has_data ? FI_REMOTE_CQ_DATA : 0),
		.buf = recv->iov_count ? recv->iov[0].iov_base : NULL,
		.data = msg->data,
		.tag = msg->item.tag,
		.src = msg->item.src,
	};
}

/* Whether a receive's completion goes to the CQ (errors always do). */
static bool recv_wants_completion(const struct mrail_ep *ep, uint64_t flags, int err)
{
	return err || !ep->rx_selective || (flags & FI_COMPLETION);
}

void mrail_recv_write_completion(struct mrail_ep *ep, struct mrail_recv *multi,
				 uint64_t flags, struct mrail_cq_entry *entry)
{
	bool last = false;

	if (multi) {
		multi->multi_inflight--;
		last = multi->multi_released && !multi->multi_inflight;
	}
	/* The application learns the buffer is its own again only from this
	 * flag, so that completion is written whatever FI_COMPLETION says. */
	if (last)
		entry->flags |= FI_MULTI_RECV;
	/* Counted once per message, a multi-receive's included. */
	mrail_user_complete(ep, entry,
			    last || recv_wants_completion(ep, flags, entry->err));
	if (last)
		free(multi);
}

void mrail_multi_recv_drop_part(struct mrail_recv *multi)
{
	multi->multi_inflight--;
	if (multi->multi_released && !multi->multi_inflight)
		free(multi);
}

void mrail_recv_complete(struct mrail_ep *ep, struct mrail_recv *recv,
			 struct mrail_rx_msg *msg)
{
	size_t cap = mrail_iov_total(recv->iov, recv->iov_count);
	struct mrail_cq_entry entry;

	mrail_assert_locked(ep->domain);

	if (msg->rdv) {
		mrail_rdv_recv_start(ep, recv, msg);
		return;
	}
	entry = mrail_recv_entry(recv, msg);
	entry.len = copy_to_iov(recv->iov, recv->iov_count, msg->payload, msg->len);
	if (msg->len > cap) {
		entry.err = FI_ETRUNC;
		entry.prov_errno = -FI_ETRUNC;
		entry.olen = msg->len - cap;
	}
	mrail_recv_write_completion(ep, recv->multi, recv->flags, &entry);
	free(recv);
	free(msg);
}

/*
 * A message matched a multi-receive buffer: it gets a receive of its own
 * over the next bytes of the buffer, so eager copies, rendezvous reads and
 * truncation work as for any receive. Returns whether the buffer takes
 * more messages; if not it may be gone already (its last part completed).
 */
static bool multi_recv_deliver(struct mrail_ep *ep, struct mrail_recv *buf,
			       struct mrail_rx_msg *msg)
{
	struct mrail_recv *part = calloc(1, sizeof(*part));
	struct mrail_cq_entry entry;
	size_t off, take;
	bool release;

	if (!part) {
		MRAIL_WARN(FI_LOG_EP_DATA, "out of memory: a message for a "
			   "multi-receive buffer is dropped\n");
		entry = mrail_recv_entry(buf, msg);
		entry.src = mrail_av_shown(ep->av, entry.src);
		entry.flags &= ~(uint64_t) FI_MULTI_RECV;
		entry.err = FI_ENOMEM;
		entry.prov_errno = -FI_ENOMEM;
		mrail_cq_write(ep->rx_cq, &entry);
		mrail_rx_msg_discard(ep, msg);
		return true;
	}
	release = mrail_multi_space_claim(&buf->space, msg->len, &off, &take);
	part->iov[0].iov_base = (uint8_t *) buf->iov[0].iov_base + off;
	part->iov[0].iov_len = take;
	part->iov_count = 1;
	part->context = buf->context;
	part->flags = buf->flags & ~(uint64_t) FI_MULTI_RECV;
	part->multi = buf;
	buf->multi_inflight++;
	buf->multi_released = release;
	mrail_recv_complete(ep, part, msg);
	return !release;
}

/* A new multi-receive buffer first takes the messages already waiting. */
static void multi_recv_post(struct mrail_ep *ep, struct mrail_match_queue *queue,
			    struct mrail_recv *buf)
{
	struct mrail_match_item *msg;

	while ((msg = mrail_match_post_recv(queue, &buf->item))) {
		if (!multi_recv_deliver(ep, buf,
					container_of(msg, struct mrail_rx_msg, item)))
			return;
	}
}

void mrail_rx_msg_discard(struct mrail_ep *ep, struct mrail_rx_msg *msg)
{
	if (msg->rdv)
		mrail_rdv_ack_sender(ep, msg->item.src, msg->req_id, 0);
	free(msg);
}

/* An in-order message meets the receives waiting for it. */
void mrail_msg_deliver(struct mrail_ep *ep, struct mrail_rx_msg *msg)
{
	struct mrail_match_queue *queue = msg->tagged ? ep->tagq : ep->msgq;
	struct mrail_match_item *recv;
	struct mrail_recv *posted;

	/* Taken in order, matched or buffered: that is delivery complete
	 * for a sender that asked for it (fi_cq(3)). */
	if (msg->ack_req)
		mrail_rdv_ack_sender(ep, msg->item.src, msg->req_id, 0);
	msg->ep = ep;
	recv = mrail_match_arrive(queue, &msg->item);
	if (!recv)
		return;
	posted = container_of(recv, struct mrail_recv, item);
	if (!(posted->flags & FI_MULTI_RECV)) {
		mrail_recv_complete(ep, posted, msg);
		return;
	}
	/* Room left: it keeps its place ahead of younger receives. */
	if (multi_recv_deliver(ep, posted, msg))
		mrail_match_repost_front(queue, recv);
}

/* A decoded EAGER or RTS as a message for the matching engine. */
struct mrail_rx_msg *mrail_msg_from_wire(struct mrail_ep *ep,
					 const struct mrail_wire_hdr *hdr,
					 const uint8_t *payload, fi_addr_t peer,
					 char *err, size_t err_len)
{
	struct mrail_rx_msg *msg;
	struct mrail_wire_rts rts;
	bool rdv = hdr->op == MRAIL_OP_RTS;

	if (rdv && mrail_wire_rts_decode(payload, hdr->payload_len, &ep->limits,
					 &rts, err, err_len))
		return NULL;
	msg = malloc(sizeof(*msg) + (rdv ? 0 : hdr->payload_len));
	if (!msg) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	memset(msg, 0, sizeof(*msg));
	msg->item.src = peer;
	msg->item.tag = hdr->tag;
	msg->tagged = hdr->flags & MRAIL_WIRE_F_TAGGED;
	msg->has_data = hdr->flags & MRAIL_WIRE_F_CQ_DATA;
	msg->data = hdr->cq_data;
	msg->rdv = rdv;
	msg->ack_req = hdr->flags & MRAIL_WIRE_F_ACK_REQ;
	if (msg->ack_req)
		msg->req_id = hdr->req_id;
	if (rdv) {
		msg->rts = rts;
		msg->req_id = hdr->req_id;
		msg->len = rts.total_len;
	} else {
		msg->len = hdr->payload_len;
		memcpy(msg->payload, payload, hdr->payload_len);
	}
	return msg;
}

ssize_t mrail_post_recv(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
			uint64_t flags, bool tagged)
{
	struct mrail_match_queue *queue = tagged ? ep->tagq : ep->msgq;
	struct mrail_match_item *msg;
	struct mrail_recv *recv;

	if (count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	/* Each message's completion points at its data: one contiguous
	 * buffer. Tagged multi-receive is not in fi_tagged(3) of 1.17. */
	if ((flags & FI_MULTI_RECV) && (tagged || count != 1))
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	recv = calloc(1, sizeof(*recv));
	if (!recv)
		return -FI_ENOMEM;
	if (count)
		memcpy(recv->iov, iov, count * sizeof(*iov));
	recv->iov_count = count;
	recv->context = context;
	recv->flags = flags;
	recv->tagged = tagged;
	recv->item.tag = tagged ? tag : 0;
	recv->item.ignore = tagged ? ignore : 0;

	mrail_domain_lock(ep->domain);
	/* Messages carry their peer's canonical entry (mrail_av_canon). */
	recv->item.src = MRAIL_MATCH_ANY_SRC;
	if ((ep->caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC) {
		recv->item.src = mrail_av_canon(ep->av, src);
		if (recv->item.src == FI_ADDR_NOTAVAIL) {
			pthread_mutex_unlock(&ep->domain->lock);
			MRAIL_WARN(FI_LOG_EP_DATA, "a receive from fi_addr %" PRIu64
				   ", which is not in the AV\n", (uint64_t) src);
			free(recv);
			return -FI_EINVAL;
		}
	}
	if (flags & FI_MULTI_RECV) {
		recv->space.cap = iov[0].iov_len;
		/* fi_endpoint(3): the minimum in force when it was posted. */
		recv->space.min = ep->min_multi_recv;
		multi_recv_post(ep, queue, recv);
	} else {
		msg = mrail_match_post_recv(queue, &recv->item);
		/* Delivered by the endpoint it arrived on (a shared
		 * receive context's message may be another's). */
		if (msg)
			mrail_recv_complete(container_of(msg, struct mrail_rx_msg,
							 item)->ep, recv,
					    container_of(msg, struct mrail_rx_msg, item));
	}
	/* A rendezvous may have started reading. */
	mrail_progress_kick(ep->domain);
	pthread_mutex_unlock(&ep->domain->lock);
	return 0;
}

/*
 * A cancelled multi-receive buffer is released; while rendezvous reads into
 * it are still running, their last completion carries FI_MULTI_RECV and
 * frees it instead.
 */
static void cancel_complete(struct mrail_ep *ep, struct mrail_recv *recv)
{
	bool multi = recv->flags & FI_MULTI_RECV;
	bool last = multi && !recv->multi_inflight;

	/* A cancelled receive counts as a failed one. */
	mrail_user_complete(ep, &(struct mrail_cq_entry) {
		.op_context = recv->context,
		.flags = FI_RECV | (recv->tagged ? FI_TAGGED : FI_MSG) |
			 (last ? FI_MULTI_RECV : 0),
		.buf = recv->iov_count ? recv->iov[0].iov_base : NULL,
		.tag = recv->item.tag,
		.src = FI_ADDR_NOTAVAIL,
		.err = FI_ECANCELED, .prov_errno = -FI_ECANCELED,
	}, true);
	recv->multi_released = true;
	if (!multi || last)
		free(recv);
}

/* fi_cancel names its receive by context; only posted receives can go. */
ssize_t mrail_msg_cancel(struct mrail_ep *ep, void *context)
{
	struct mrail_match_queue *queues[] = { ep->tagq, ep->msgq };
	struct mrail_match_item *item;
	struct mrail_recv *recv;
	size_t q;

	for (q = 0; q < 2; q++) {
		for (item = queues[q]->posted; item; item = item->next) {
			recv = container_of(item, struct mrail_recv, item);
			if (recv->context != context)
				continue;
			mrail_match_cancel_recv(queues[q], item);
			cancel_complete(ep, recv);
			return 0;
		}
	}
	return -FI_ENOENT;
}

/* ---- send side ---- */

void mrail_msg_handle_tx(struct mrail_ep *ep, struct mrail_rail_buf *buf, int err)
{
	buf->posted = false;
	if (buf->superseded) {
		/* Sent again on another rail, whose copy completes it. */
		mrail_tx_buf_put(ep, buf);
		return;
	}
	if (!err) {
		mrail_rail_completed(ep, buf->dest, buf->rc.rail,
				     buf->data[1] == MRAIL_OP_PROBE);
		mrail_replay_keep(ep, buf);
	} else {
		mrail_rail_error(ep, buf->dest, buf->rc.rail);
		/* The rail failed for the peer: a message that may go again
		 * goes on another of its rails, which completes it. */
		if (!mrail_rail_usable(ep, buf->dest, buf->rc.rail) &&
		    !mrail_tx_resend(ep, buf)) {
			mrail_tx_buf_put(ep, buf);
			return;
		}
	}
	if (err) {
		/* rail_handle_error logged the rail's own error. */
		buf->user.err = err;
		buf->user.prov_errno = -err;
		/* The peer never got it, so it returns no credit for it. */
		if (buf->credit_peer != FI_ADDR_NOTAVAIL)
			ep->peers[buf->credit_peer].tx_credits++;
	}
	if (buf->rdv_req_id) {
		/* An RTS, or an eager FI_DELIVERY_COMPLETE send: it
		 * completes on the ACK, or fails here. */
		if (err)
			mrail_rdv_send_failed(ep, buf->rdv_req_id, err);
	} else if (buf->user.flags & FI_SEND) {
		/* An eager send (inject too: counted, never reported). */
		mrail_user_complete(ep, &buf->user, buf->complete_user);
	}
	/* mrail's own messages (ACK, CREDIT, HELLO, a response) belong to no
	 * operation of this endpoint: the warning above is all there is to
	 * say. An error entry without an operation context would only crash
	 * applications that read the context of every error (Open MPI 4.1's
	 * mtl ofi does). */
	mrail_tx_buf_put(ep, buf);
}

/* acked: FI_DELIVERY_COMPLETE, the user completion waits for an ACK. */
static ssize_t send_eager(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			  fi_addr_t dest, struct mrail_wire_hdr *hdr,
			  const struct mrail_cq_entry *user, bool complete_user,
			  bool acked)
{
	size_t i, off = MRAIL_WIRE_HDR_LEN;
	struct mrail_rail_buf *buf;
	uint64_t req_id = 0;

	buf = mrail_request_buf(ep);
	if (!buf)
		return -FI_EAGAIN;
	if (acked) {
		req_id = mrail_ack_wait_add(ep, dest, user, complete_user);
		if (!req_id) {
			mrail_tx_buf_put(ep, buf);
			return -FI_ENOMEM;
		}
		hdr->flags |= MRAIL_WIRE_F_ACK_REQ;
		hdr->req_id = req_id;
	}
	mrail_wire_hdr_encode(hdr, buf->data, MRAIL_WIRE_HDR_LEN);
	/* MPI sends 0 bytes from NULL (barriers): memcpy may not see it. */
	for (i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		memcpy(buf->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	/* An acked send completes from the ACK, or from a failed send. */
	return mrail_request_send(ep, buf, off, dest, req_id, user,
				  complete_user && !acked);
}

ssize_t mrail_send_common(struct mrail_ep *ep, const struct iovec *iov, size_t count,
			  fi_addr_t dest, uint64_t tag, uint64_t data, void *context,
			  uint64_t flags, bool tagged, bool inject)
{
	size_t len = mrail_iov_total(iov, count);
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = len > MRAIL_EAGER_MAX ? MRAIL_OP_RTS : MRAIL_OP_EAGER,
		.flags = (tagged ? MRAIL_WIRE_F_TAGGED : 0) |
			 ((flags & FI_REMOTE_CQ_DATA) ? MRAIL_WIRE_F_CQ_DATA : 0),
		.tag = tagged ? tag : 0,
		.cq_data = (flags & FI_REMOTE_CQ_DATA) ? data : 0,
	};
	struct mrail_cq_entry user = {
		.op_context = context,
		.flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG),
		.src = FI_ADDR_NOTAVAIL,
	};
	/* fi_inject calls never complete; FI_INJECT on fi_sendmsg only says
	 * the buffer is free at return, the send completes as usual
	 * (fi_msg(3)). */
	bool complete_user = !inject && (!ep->tx_selective || (flags & FI_COMPLETION));
	bool copy_now = inject || (flags & FI_INJECT);
	struct mrail_av_peer *peer;
	ssize_t ret;

	if (count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	if ((copy_now && len > MRAIL_EAGER_MAX) || len > MRAIL_MAX_MSG)
		return -FI_EMSGSIZE;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;

	mrail_domain_lock(ep->domain);
	/* Every entry of the peer sends in its one sequence stream. */
	dest = mrail_av_canon(ep->av, dest);
	peer = mrail_av_get_peer(ep->av, dest);
	if (!peer || mrail_peer_reserve(ep, dest)) {
		ret = -FI_EINVAL;
		goto out;
	}
	ret = mrail_contact_prepare(ep, dest);
	if (ret)
		goto out;
	if (hdr.op == MRAIL_OP_EAGER) {
		hdr.payload_len = (uint32_t) len;
		ret = send_eager(ep, iov, count, dest, &hdr, &user, complete_user,
				 flags & FI_DELIVERY_COMPLETE);
	} else {
		ret = mrail_rdv_send(ep, iov, count, dest, &hdr, &user, complete_user);
	}
	if (!ret)
		mrail_progress_kick(ep->domain);
out:
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

/* Frees messages and receives still queued when the endpoint closes. */
void mrail_msg_flush(struct mrail_ep *ep)
{
	struct mrail_match_queue *queues[] = { ep->msgq, ep->tagq };
	struct mrail_match_item *item, *next;
	size_t q;

	for (q = 0; q < 2; q++) {
		/* A shared receive context's queues hold other endpoints'
		 * messages and the context's receives: only ours go. */
		for (item = queues[q]->unexpected; item; item = next) {
			next = item->next;
			if (container_of(item, struct mrail_rx_msg, item)->ep != ep)
				continue;
			mrail_match_remove_unexpected(queues[q], item);
			free(container_of(item, struct mrail_rx_msg, item));
		}
		while (!ep->srx && (item = queues[q]->posted)) {
			struct mrail_recv *recv =
				container_of(item, struct mrail_recv, item);

			mrail_match_cancel_recv(queues[q], item);
			/* Parts still reading free it (mrail_rdv_flush). */
			recv->multi_released = true;
			if (!recv->multi_inflight)
				free(recv);
		}
	}
	mrail_rdv_flush(ep);
}

/* ---- fi_ops_msg ---- */

#define EP(fid) container_of(fid, struct mrail_ep, ep_fid)

static ssize_t mrail_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			  fi_addr_t src, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return mrail_post_recv(EP(ep), &iov, 1, src, 0, 0, context,
			       EP(ep)->rx_op_flags, false);
}

static ssize_t mrail_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			   size_t count, fi_addr_t src, void *context)
{
	return mrail_post_recv(EP(ep), iov, count, src, 0, 0, context, EP(ep)->rx_op_flags,
			       false);
}

static ssize_t mrail_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			     uint64_t flags)
{
	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep), FI_OP_RECV, msg, NULL, NULL, flags);
	return mrail_post_recv(EP(ep), msg->msg_iov, msg->iov_count, msg->addr, 0, 0,
			       msg->context, flags, false);
}

static ssize_t mrail_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, 0, 0, context,
				 EP(ep)->tx_op_flags, false, false);
}

static ssize_t mrail_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			   size_t count, fi_addr_t dest, void *context)
{
	return mrail_send_common(EP(ep), iov, count, dest, 0, 0, context,
				 EP(ep)->tx_op_flags, false, false);
}

static ssize_t mrail_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			     uint64_t flags)
{
	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep), FI_OP_SEND, msg, NULL, NULL, flags);
	return mrail_send_common(EP(ep), msg->msg_iov, msg->iov_count, msg->addr, 0,
				 msg->data, msg->context, flags, false, false);
}

static ssize_t mrail_inject(struct fid_ep *ep, const void *buf, size_t len,
			    fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	/* No completion, but a bound counter counts it: on delivery when
	 * the endpoint's default is FI_DELIVERY_COMPLETE. */
	return mrail_send_common(EP(ep), &iov, 1, dest, 0, 0, NULL,
				 EP(ep)->tx_op_flags & FI_DELIVERY_COMPLETE, false, true);
}

static ssize_t mrail_senddata(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, uint64_t data, fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, 0, data, context,
				 EP(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, false, false);
}

static ssize_t mrail_injectdata(struct fid_ep *ep, const void *buf, size_t len,
				uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return mrail_send_common(EP(ep), &iov, 1, dest, 0, data, NULL,
				 FI_REMOTE_CQ_DATA |
				 (EP(ep)->tx_op_flags & FI_DELIVERY_COMPLETE), false, true);
}

struct fi_ops_msg mrail_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = mrail_recv,
	.recvv = mrail_recvv,
	.recvmsg = mrail_recvmsg,
	.send = mrail_send,
	.sendv = mrail_sendv,
	.sendmsg = mrail_sendmsg,
	.inject = mrail_inject,
	.senddata = mrail_senddata,
	.injectdata = mrail_injectdata,
};
