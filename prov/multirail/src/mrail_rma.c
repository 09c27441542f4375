/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FI_RMA over the rails.
 *
 * mrail's regions carry the application's key on every rail except rails
 * that choose their own keys, and only the target knows those and its
 * regions' bounds. So the target decides every access itself, and only
 * the target's rails ever touch its memory on a peer's say-so after that
 * decision:
 *
 * - write: small data goes inline in a WRITE request; larger data is
 *   registered at the initiator like a rendezvous send, and the target,
 *   having checked key, bounds and FI_REMOTE_WRITE, pulls it into the
 *   region with reads striped over every rail (mrail_rdv.c). When every
 *   stripe has landed the target counts the write (FI_REMOTE_WRITE
 *   counter), reports remote CQ data once, and ACKs.
 * - read: a READ_REQ asks the target, which checks key, bounds and
 *   FI_REMOTE_READ and answers with a READ_RESP carrying the region's
 *   per-rail keys; the initiator pulls the data with striped reads and
 *   ACKs the target's grant, which counts one remote read.
 *
 * Both sides see one completion per user operation, whatever the number
 * of stripes; a refused access is an ACK with -FI_EACCES or -FI_EINVAL:
 * an error completion at the initiator, a warning at the target. Every
 * operation completes at the initiator only from the target's answer,
 * which is delivery complete; FI_FENCE waits (-FI_EAGAIN) until the
 * endpoint's earlier operations have been answered.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_mr.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"
#include "mrail_msg.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mr_range.h"

/* The largest write that travels inside its request. */
#define MRAIL_RMA_INLINE_MAX (MRAIL_EAGER_MAX - MRAIL_WIRE_RMA_LEN)

#define EP(fid) container_of(fid, struct mrail_ep, ep_fid)

/* ---- target ---- */

void mrail_rma_target_complete(struct mrail_ep *ep,
			       const struct mrail_cq_entry *entry, int32_t status)
{
	mrail_rma_target_count(ep, entry, status,
			       entry->flags & (FI_REMOTE_WRITE | FI_REMOTE_READ));
}

void mrail_rma_target_count(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			    int32_t status, uint64_t region_access)
{
	bool write = entry->flags & FI_REMOTE_WRITE;
	struct mrail_cntr *cntr = write ? ep->rwrite_cntr : ep->rread_cntr;
	/* The region's own counter (fi_mr_bind), if it is still open: once
	 * for an access of any kind it was bound for. */
	struct mrail_mr *mr = mrail_mr_lookup(ep->domain, entry->key);
	struct mrail_cntr *mr_cntr = mr && (mr->cntr_flags & region_access) ?
		mr->cntr : NULL;

	/* One access counts once on a counter bound both ways. */
	if (mr_cntr == cntr)
		mr_cntr = NULL;

	if (status) {
		MRAIL_WARN(FI_LOG_EP_DATA, "a remote %s of %zu bytes by peer %"
			   PRIu64 " failed: %s\n", write ? "write" : "read",
			   entry->len, (uint64_t) entry->src,
			   fi_strerror(-status));
		if (cntr)
			mrail_cntr_inc_err(cntr);
		if (mr_cntr)
			mrail_cntr_inc_err(mr_cntr);
		return;
	}
	if (cntr)
		mrail_cntr_inc(cntr);
	if (mr_cntr)
		mrail_cntr_inc(mr_cntr);
	if (write && (entry->flags & FI_REMOTE_CQ_DATA)) {
		struct mrail_cq_entry shown = *entry;

		/* The application's fi_addr_t for the peer, not mrail's
		 * slot (FI_ADDR_NOTAVAIL for a peer it never inserted). */
		shown.src = mrail_av_shown(ep->av, shown.src);
		if (ep->rx_cq)
			mrail_cq_write(ep->rx_cq, &shown);
		else
			MRAIL_WARN(FI_LOG_EP_DATA, "remote CQ data from peer %"
				   PRIu64 " dropped: bind a receive CQ\n",
				   (uint64_t) entry->src);
	}
}

const char *mrail_rma_refusal(bool have_mr, int ret, uint64_t access)
{
	if (!have_mr)
		return "no region has this key";
	if (ret != -EACCES)
		return "the range is outside the region (addresses are "
		       "offsets into it)";
	switch (access) {
	case FI_REMOTE_WRITE:
		return "the region was not registered with FI_REMOTE_WRITE";
	case FI_REMOTE_READ:
		return "the region was not registered with FI_REMOTE_READ";
	default:
		return "the region was not registered with both "
		       "FI_REMOTE_READ and FI_REMOTE_WRITE";
	}
}

/* The region a peer's request names, if it may have the access asked. */
static int rma_validate(struct mrail_ep *ep, fi_addr_t peer,
			const struct mrail_wire_rma *rma, uint64_t access,
			struct mrail_mr **mr_out)
{
	struct mrail_mr *mr = mrail_mr_lookup(ep->domain, rma->key);
	int ret;

	ret = mrail_rma_check(mr != NULL, mr ? mr->len : 0, mr ? mr->access : 0,
			      rma->addr, rma->len, access);
	if (ret) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 ": remote %s of %"
			   PRIu64 " bytes at offset %#" PRIx64 " of key %#" PRIx64
			   " refused: %s\n", (uint64_t) peer,
			   access == FI_REMOTE_WRITE ? "write" : "read",
			   rma->len, rma->addr, rma->key,
			   mrail_rma_refusal(mr != NULL, ret, access));
		return ret;
	}
	*mr_out = mr;
	return 0;
}

static void rma_handle_write(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			     const struct mrail_wire_hdr *hdr,
			     const uint8_t *payload)
{
	bool inline_data = hdr->flags & MRAIL_WIRE_F_INLINE;
	struct mrail_cq_entry entry = {
		.flags = FI_RMA | FI_REMOTE_WRITE |
			 (hdr->flags & MRAIL_WIRE_F_CQ_DATA ? FI_REMOTE_CQ_DATA : 0),
		.data = hdr->cq_data,
		.src = peer,
	};
	struct mrail_wire_rma rma;
	struct mrail_wire_rts rts;
	char err[MRAIL_ERR_MAX];
	struct mrail_mr *mr;
	struct iovec iov;
	int ret;

	if (mrail_wire_rma_decode(payload, hdr->payload_len, inline_data,
				  &ep->limits, &rma, err, sizeof(err)))
		goto bad;
	if (!inline_data &&
	    mrail_wire_rts_decode(payload + MRAIL_WIRE_RMA_LEN,
				  hdr->payload_len - MRAIL_WIRE_RMA_LEN,
				  &ep->limits, &rts, err, sizeof(err)))
		goto bad;
	if (!inline_data && rts.total_len != rma.len) {
		snprintf(err, sizeof(err), "WRITE of %" PRIu64 " bytes offers %"
			 PRIu64 " bytes to read", rma.len, rts.total_len);
		goto bad;
	}
	ret = rma_validate(ep, peer, &rma, FI_REMOTE_WRITE, &mr);
	if (ret) {
		mrail_rdv_ack_sender(ep, peer, hdr->req_id, ret);
		return;
	}
	entry.len = rma.len;
	entry.key = rma.key;
	iov.iov_base = (uint8_t *) mr->base + rma.addr;
	iov.iov_len = rma.len;
	if (inline_data) {
		memcpy(iov.iov_base, payload + MRAIL_WIRE_RMA_LEN, rma.len);
		mrail_rma_target_complete(ep, &entry, 0);
		mrail_rdv_ack_sender(ep, peer, hdr->req_id, 0);
		return;
	}
	mrail_rdv_pull_start(ep, MRAIL_PULL_RMA_WRITE, peer, hdr->req_id, &rts,
			     0, &iov, 1, &entry, false);
	return;
bad:
	mrail_cq_report_bad_message(ep, rail, err);
	mrail_rdv_ack_sender(ep, peer, hdr->req_id, -FI_EINVAL);
}

static void rma_handle_read_req(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
				const struct mrail_wire_hdr *hdr,
				const uint8_t *payload)
{
	struct mrail_wire_hdr resp = {
		.sender = ep->self_key,
		.op = MRAIL_OP_READ_RESP,
		.req_id = hdr->req_id,
	};
	struct mrail_cq_entry entry = {
		.flags = FI_RMA | FI_REMOTE_READ,
		.src = peer,
	};
	uint8_t msg[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_GRANT_LEN +
		    MRAIL_WIRE_RTS_FIXED_LEN + 8 * MRAIL_MAX_RAILS];
	struct mrail_wire_rts rts = { 0 };
	struct mrail_wire_rma rma;
	char err[MRAIL_ERR_MAX];
	struct mrail_mr *mr;
	uint64_t grant;
	size_t rail_i;
	int ret, n;

	if (mrail_wire_rma_decode(payload, hdr->payload_len, false, &ep->limits,
				  &rma, err, sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		mrail_rdv_ack_sender(ep, peer, hdr->req_id, -FI_EINVAL);
		return;
	}
	ret = rma_validate(ep, peer, &rma, FI_REMOTE_READ, &mr);
	if (ret) {
		mrail_rdv_ack_sender(ep, peer, hdr->req_id, ret);
		return;
	}
	entry.key = rma.key;
	if (!rma.len) {
		/* Nothing to read: the answer is the whole operation. */
		mrail_rma_target_complete(ep, &entry, 0);
		mrail_rdv_ack_sender(ep, peer, hdr->req_id, 0);
		return;
	}
	grant = mrail_rdv_grant_add(ep, peer, rma.len, rma.key);
	if (!grant) {
		mrail_rdv_ack_sender(ep, peer, hdr->req_id, -FI_ENOMEM);
		return;
	}
	rts.total_len = rma.len;
	rts.base = (uint64_t) (uintptr_t) mr->base;
	rts.rail_count = (uint8_t) ep->rail_count;
	for (rail_i = 0; rail_i < ep->rail_count; rail_i++)
		rts.keys[rail_i] = mr->rail_keys[rail_i];
	resp.payload_len = (uint32_t) (MRAIL_WIRE_GRANT_LEN +
				       mrail_wire_rts_len(rts.rail_count));
	mrail_wire_hdr_encode(&resp, msg, MRAIL_WIRE_HDR_LEN);
	mrail_wire_grant_encode(grant, rma.addr, msg + MRAIL_WIRE_HDR_LEN,
				MRAIL_WIRE_GRANT_LEN);
	n = mrail_wire_rts_encode(&rts, msg + MRAIL_WIRE_HDR_LEN +
				  MRAIL_WIRE_GRANT_LEN,
				  sizeof(msg) - MRAIL_WIRE_HDR_LEN -
				  MRAIL_WIRE_GRANT_LEN);
	if (n < 0) {
		mrail_ack_wait_cancel(ep, grant);
		mrail_rdv_ack_sender(ep, peer, hdr->req_id, -FI_EINVAL);
		return;
	}
	mrail_ctrl_send(ep, peer, msg, MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_GRANT_LEN +
			(size_t) n);
}

static void rma_handle_read_resp(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
				 const struct mrail_wire_hdr *hdr,
				 const uint8_t *payload)
{
	uint64_t grant, offset;
	struct mrail_wire_rts rts;
	char err[MRAIL_ERR_MAX];

	if (mrail_wire_grant_decode(payload, hdr->payload_len, &grant, &offset,
				    err, sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		mrail_rdv_read_refused(ep, peer, hdr->req_id, FI_EIO);
		return;
	}
	if (mrail_wire_rts_decode(payload + MRAIL_WIRE_GRANT_LEN,
				  hdr->payload_len - MRAIL_WIRE_GRANT_LEN,
				  &ep->limits, &rts, err, sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		mrail_rdv_read_refused(ep, peer, hdr->req_id, FI_EIO);
		mrail_rdv_ack_sender(ep, peer, grant, -FI_EINVAL);
		return;
	}
	mrail_rdv_read_granted(ep, rail, peer, hdr->req_id, grant, offset, &rts);
}

void mrail_rma_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			 const struct mrail_wire_hdr *hdr, const uint8_t *payload)
{
	switch (hdr->op) {
	case MRAIL_OP_WRITE:
		rma_handle_write(ep, rail, peer, hdr, payload);
		break;
	case MRAIL_OP_READ_REQ:
		rma_handle_read_req(ep, rail, peer, hdr, payload);
		break;
	case MRAIL_OP_READ_RESP:
		rma_handle_read_resp(ep, rail, peer, hdr, payload);
		break;
	default:
		mrail_cq_report_bad_message(ep, rail, "not an RMA operation");
		break;
	}
}

/* ---- initiator ---- */

/* What every operation checks before it takes the lock. */
static ssize_t rma_check_args(struct mrail_ep *ep, const struct iovec *iov,
			      size_t count, size_t *len)
{
	if (count > MRAIL_IOV_LIMIT || (count && !iov))
		return -FI_EINVAL;
	*len = mrail_iov_total(iov, count);
	if (*len > MRAIL_MAX_MSG)
		return -FI_EMSGSIZE;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	return 0;
}

/*
 * Under the lock: a known peer, and FI_FENCE's earlier operations done.
 * *dest becomes the peer's canonical entry (mrail_av_canon): the target's
 * answers (ACK, READ_RESP) come from that entry whichever of the peer's
 * entries the application named, and the wait is found by it.
 */
static ssize_t rma_check_post(struct mrail_ep *ep, fi_addr_t *dest, uint64_t flags)
{
	fi_addr_t canon = mrail_av_canon(ep->av, *dest);

	if (canon == FI_ADDR_NOTAVAIL || !mrail_av_get_peer(ep->av, canon)) {
		MRAIL_WARN(FI_LOG_EP_DATA, "RMA to fi_addr %" PRIu64 ", which is "
			   "not in the AV\n", (uint64_t) *dest);
		return -FI_EINVAL;
	}
	*dest = canon;
	if ((flags & FI_FENCE) && mrail_rdv_own_ops_pending(ep)) {
		mrail_ep_progress(ep);
		return -FI_EAGAIN;
	}
	/* A target that never inserted us learns us before our request. */
	return mrail_contact_prepare(ep, canon);
}

static ssize_t rma_write_inline(struct mrail_ep *ep, const struct iovec *iov,
				size_t count, fi_addr_t dest,
				struct mrail_wire_hdr *hdr,
				const struct mrail_wire_rma *rma,
				const struct mrail_cq_entry *user, bool complete_user)
{
	size_t off = MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN, i;
	struct mrail_rail_buf *buf;
	uint64_t req_id;

	buf = mrail_request_buf(ep);
	if (!buf)
		return -FI_EAGAIN;
	req_id = mrail_ack_wait_add(ep, dest, user, complete_user);
	if (!req_id) {
		mrail_tx_buf_put(ep, buf);
		return -FI_ENOMEM;
	}
	hdr->flags |= MRAIL_WIRE_F_INLINE;
	hdr->req_id = req_id;
	hdr->payload_len = (uint32_t) (MRAIL_WIRE_RMA_LEN + rma->len);
	if (mrail_wire_hdr_encode(hdr, buf->data, MRAIL_WIRE_HDR_LEN) < 0 ||
	    mrail_wire_rma_encode(rma, buf->data + MRAIL_WIRE_HDR_LEN,
				  MRAIL_WIRE_RMA_LEN) < 0) {
		mrail_ack_wait_cancel(ep, req_id);
		mrail_tx_buf_put(ep, buf);
		return -FI_EINVAL;
	}
	for (i = 0; i < count; i++) {
		memcpy(buf->data + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	/* Completes from the target's ACK, or from a failed send. */
	return mrail_request_send(ep, buf, off, dest, req_id, user, false);
}

/* inject: no completion, the buffer is the caller's again at return. */
static ssize_t rma_write(struct mrail_ep *ep, const struct iovec *iov,
			 size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			 uint64_t data, void *context, uint64_t flags, bool inject)
{
	bool cq_data = flags & FI_REMOTE_CQ_DATA;
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_WRITE,
		.flags = cq_data ? MRAIL_WIRE_F_CQ_DATA : 0,
		.cq_data = cq_data ? data : 0,
	};
	struct mrail_cq_entry user = {
		.op_context = context,
		.flags = FI_RMA | FI_WRITE,
		.src = FI_ADDR_NOTAVAIL,
	};
	bool complete_user = !inject && (!ep->tx_selective || (flags & FI_COMPLETION));
	bool copy = inject || (flags & FI_INJECT);
	struct mrail_wire_rma rma = { .key = key, .addr = addr };
	size_t len;
	ssize_t ret;

	ret = rma_check_args(ep, iov, count, &len);
	if (ret)
		return ret;
	if (copy && len > MRAIL_EAGER_MAX)
		return -FI_EMSGSIZE;
	if (addr > UINT64_MAX - len)
		return -FI_EINVAL;
	rma.len = len;
	user.len = len;

	mrail_domain_lock(ep->domain);
	ret = rma_check_post(ep, &dest, flags);
	if (ret)
		goto out;
	if (len <= MRAIL_RMA_INLINE_MAX)
		ret = rma_write_inline(ep, iov, count, dest, &hdr, &rma, &user,
				       complete_user);
	else
		ret = mrail_rdv_send_rma(ep, iov, count, dest, &hdr, &rma, copy,
					 &user, complete_user);
	if (!ret)
		mrail_progress_kick(ep->domain);
out:
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

static ssize_t rma_read(struct mrail_ep *ep, const struct iovec *iov,
			size_t count, fi_addr_t src, uint64_t addr, uint64_t key,
			void *context, uint64_t flags)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_READ_REQ,
		.payload_len = MRAIL_WIRE_RMA_LEN,
	};
	struct mrail_cq_entry user = {
		.op_context = context,
		.flags = FI_RMA | FI_READ,
		.src = FI_ADDR_NOTAVAIL,
	};
	bool complete_user = !ep->tx_selective || (flags & FI_COMPLETION);
	struct mrail_wire_rma rma = { .key = key, .addr = addr };
	struct mrail_rail_buf *buf;
	uint64_t req_id;
	size_t len;
	ssize_t ret;

	ret = rma_check_args(ep, iov, count, &len);
	if (ret)
		return ret;
	if (addr > UINT64_MAX - len)
		return -FI_EINVAL;
	rma.len = len;

	mrail_domain_lock(ep->domain);
	ret = rma_check_post(ep, &src, flags);
	if (ret)
		goto out;
	buf = mrail_request_buf(ep);
	if (!buf) {
		ret = -FI_EAGAIN;
		goto out;
	}
	req_id = mrail_rdv_read_wait_add(ep, src, iov, count, &user, complete_user);
	if (!req_id) {
		mrail_tx_buf_put(ep, buf);
		ret = -FI_ENOMEM;
		goto out;
	}
	hdr.req_id = req_id;
	mrail_wire_hdr_encode(&hdr, buf->data, MRAIL_WIRE_HDR_LEN);
	mrail_wire_rma_encode(&rma, buf->data + MRAIL_WIRE_HDR_LEN,
			      MRAIL_WIRE_RMA_LEN);
	/* Completes from the data read after the READ_RESP, or from a
	 * failed send. */
	ret = mrail_request_send(ep, buf, MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_RMA_LEN,
				 src, req_id, &user, false);
	if (ret)
		goto out;
	mrail_progress_kick(ep->domain);
out:
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

/* fi_readmsg and fi_writemsg: one remote range covering the local data. */
static ssize_t rma_msg_target(const struct fi_msg_rma *msg, uint64_t *addr,
			      uint64_t *key)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov ||
	    msg->iov_count > MRAIL_IOV_LIMIT || (msg->iov_count && !msg->msg_iov) ||
	    msg->rma_iov[0].len != mrail_iov_total(msg->msg_iov, msg->iov_count))
		return -FI_EINVAL;
	*addr = msg->rma_iov[0].addr;
	*key = msg->rma_iov[0].key;
	return 0;
}

/* ---- fi_ops_rma ---- */

static ssize_t mrail_read(struct fid_ep *ep_fid, void *buf, size_t len, void *desc,
			  fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return rma_read(EP(ep_fid), &iov, 1, src, addr, key, context,
			EP(ep_fid)->tx_op_flags);
}

static ssize_t mrail_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t src, uint64_t addr,
			   uint64_t key, void *context)
{
	return rma_read(EP(ep_fid), iov, count, src, addr, key, context,
			EP(ep_fid)->tx_op_flags);
}

static ssize_t mrail_readmsg(struct fid_ep *ep_fid, const struct fi_msg_rma *msg,
			     uint64_t flags)
{
	uint64_t addr, key;
	ssize_t ret;

	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep_fid), FI_OP_READ, msg, NULL, NULL, flags);
	ret = rma_msg_target(msg, &addr, &key);
	if (ret)
		return ret;
	return rma_read(EP(ep_fid), msg->msg_iov, msg->iov_count, msg->addr, addr,
			key, msg->context, flags);
}

static ssize_t mrail_write(struct fid_ep *ep_fid, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			   void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rma_write(EP(ep_fid), &iov, 1, dest, addr, key, 0, context,
			 EP(ep_fid)->tx_op_flags, false);
}

static ssize_t mrail_writev(struct fid_ep *ep_fid, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t addr, uint64_t key, void *context)
{
	return rma_write(EP(ep_fid), iov, count, dest, addr, key, 0, context,
			 EP(ep_fid)->tx_op_flags, false);
}

static ssize_t mrail_writemsg(struct fid_ep *ep_fid, const struct fi_msg_rma *msg,
			      uint64_t flags)
{
	uint64_t addr, key;
	ssize_t ret;

	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep_fid), FI_OP_WRITE, msg, NULL, NULL, flags);
	ret = rma_msg_target(msg, &addr, &key);
	if (ret)
		return ret;
	return rma_write(EP(ep_fid), msg->msg_iov, msg->iov_count, msg->addr, addr,
			 key, msg->data, msg->context, flags, false);
}

static ssize_t mrail_inject_write(struct fid_ep *ep_fid, const void *buf,
				  size_t len, fi_addr_t dest, uint64_t addr,
				  uint64_t key)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rma_write(EP(ep_fid), &iov, 1, dest, addr, key, 0, NULL,
			 EP(ep_fid)->tx_op_flags, true);
}

static ssize_t mrail_writedata(struct fid_ep *ep_fid, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest,
			       uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rma_write(EP(ep_fid), &iov, 1, dest, addr, key, data, context,
			 EP(ep_fid)->tx_op_flags | FI_REMOTE_CQ_DATA, false);
}

static ssize_t mrail_inject_writedata(struct fid_ep *ep_fid, const void *buf,
				      size_t len, uint64_t data, fi_addr_t dest,
				      uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rma_write(EP(ep_fid), &iov, 1, dest, addr, key, data, NULL,
			 EP(ep_fid)->tx_op_flags | FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_rma mrail_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = mrail_read,
	.readv = mrail_readv,
	.readmsg = mrail_readmsg,
	.write = mrail_write,
	.writev = mrail_writev,
	.writemsg = mrail_writemsg,
	.inject = mrail_inject_write,
	.writedata = mrail_writedata,
	.injectdata = mrail_inject_writedata,
};
