/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rendezvous: messages larger than MRAIL_EAGER_MAX.
 *
 * The sender registers its buffer on every rail for remote reads and sends an
 * RTS (in sequence, like an eager message) carrying the length, the address
 * and each rail's key. When the RTS matches a receive, the receiver splits
 * what fits in the receive buffer into stripes (core/stripe.c), one per rail,
 * and reads them in chunks straight into the receive buffer, all rails at
 * once. When every read is done it completes the receive and answers with an
 * ACK; the ACK completes the send. One completion per user operation on each
 * side, whatever number of rail operations it took.
 *
 * RMA (mrail_rma.c) runs on the same machinery: a large write is an RTS
 * whose "receive buffer" is the target's region, pulled by the target; a
 * read is answered with a READ_RESP (the region's per-rail keys) that the
 * initiator pulls like a matched RTS, then ACKs to the target's grant.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_msg.h"
#include "mrail_reserve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>
#include <utlist.h>

#include "stripe.h"

/* What an entry of ep->rdv_sends waits for its ACK (or READ_RESP) as. */
enum mrail_wait_kind {
	MRAIL_WAIT_SEND,	/* a send or RMA write: the ACK completes it */
	MRAIL_WAIT_READ,	/* an RMA read: READ_RESP, or an error ACK */
	MRAIL_WAIT_GRANT,	/* a read of our region: the reader's ACK */
	MRAIL_WAIT_ATOMIC,	/* an atomic: its ATOMIC_RESP (mrail_atomic.c) */
};

/* A send waiting for the receiver's ACK. */
struct mrail_rdv_send {
	UT_hash_handle hh;
	uint64_t req_id;
	enum mrail_wait_kind kind;
	fi_addr_t peer;
	uint64_t since_ns;	/* when it began to wait (mrail_now_ns) */
	/* MRAIL_WAIT_READ, MRAIL_WAIT_ATOMIC: where the data (the fetched
	 * values) goes, and how many bytes are expected. */
	struct iovec iov[MRAIL_IOV_LIMIT];
	size_t iov_count;
	uint64_t len;
	struct fid_mr *mrs[MRAIL_MAX_RAILS];
	void *bounce;		/* a multi-iov source, made contiguous */
	struct mrail_cq_entry user;
	bool complete_user;
};

/* One read in flight on a rail. */
struct mrail_rdv_read {
	struct mrail_rail_ctx rc;
	struct mrail_rdv_recv *rdv;
	int stripe;
	uint64_t off;		/* in the transfer */
	uint64_t len;
	uint8_t *dst;		/* in the receive buffer */
	/* A staged read lands here and is copied to dst when it completes
	 * (rdv_staged_rail says which rails stage). */
	uint8_t *stage;
	/* Given up on when its rail failed for the peer: its bytes were
	 * read again elsewhere, and it may still complete, into stage only. */
	bool orphan;
	bool in_use;
};

/* Bytes of the transfer to read again, those of a read its rail lost. */
struct mrail_rdv_redo {
	uint64_t off;
	uint64_t len;
	int stripe;
	size_t from;		/* the rail that lost them */
};

/* Read slots per transfer: orphans keep theirs until their rail gives
 * them back, and the reads that replace them need room beside them. */
#define MRAIL_RDV_READ_SLOTS (2 * MRAIL_MAX_RAILS * MRAIL_RDV_READS_PER_RAIL)

/* A matched receive whose data is being read. */
struct mrail_rdv_recv {
	struct mrail_rdv_recv *prev, *next;
	enum mrail_pull_kind kind;
	bool report;		/* RMA read: the initiator's completion */
	fi_addr_t peer;
	uint64_t req_id;
	struct mrail_wire_rts rts;
	uint64_t remote_off;	/* where in the remote region the data starts */
	struct mrail_cq_entry user;
	uint64_t recv_flags;
	struct mrail_recv *multi;	/* FI_MULTI_RECV: the buffer, or NULL */
	uint64_t to_read;	/* what fits in the receive buffer */
	struct iovec iov[MRAIL_IOV_LIMIT];
	size_t iov_count;
	/* Rails with FI_MR_LOCAL need the receive buffer registered. */
	struct fid_mr *local_mrs[MRAIL_MAX_RAILS][MRAIL_IOV_LIMIT];
	/* Not split yet: waits for mrail_policy_plan_now. */
	bool unplanned;
	uint64_t ahead;		/* mrail_policy_stripe's count of it */
	struct mrail_stripe stripes[MRAIL_MAX_RAILS];
	uint64_t issued[MRAIL_MAX_RAILS];
	size_t stripe_inflight[MRAIL_MAX_RAILS];
	int stripe_count;
	size_t inflight;	/* reads in flight, orphans not counted */
	size_t orphans;
	bool finished;		/* completed; on ep->rdv_orphaned */
	int err;		/* first failure, a positive FI_E* value */
	struct mrail_rdv_read reads[MRAIL_RDV_READ_SLOTS];
	struct mrail_rdv_redo redo[MRAIL_RDV_READ_SLOTS];
	size_t redo_count;
	struct mrail_rsv_req rsv;	/* dynamic striping: rails reserved */
};

/* ---- sender ---- */

static void rdv_send_release(struct mrail_ep *ep, struct mrail_rdv_send *rdv)
{
	size_t rail;

	for (rail = 0; rail < ep->rail_count; rail++) {
		if (rdv->mrs[rail])
			fi_close(&rdv->mrs[rail]->fid);
	}
	free(rdv->bounce);
	free(rdv);
}

/* Registers [base, base + len) for remote reads on every rail, with keys
 * mrail picks unless a rail picks its own. */
static int rdv_register(struct mrail_ep *ep, struct mrail_rdv_send *rdv,
			void *base, size_t len, struct mrail_wire_rts *rts)
{
	struct mrail_domain *domain = ep->domain;
	uint64_t key;
	size_t rail;
	int ret;

	for (rail = 0; rail < ep->rail_count; rail++) {
		key = ep->rail_mr_mode[rail] & FI_MR_PROV_KEY ? 0 :
		      MRAIL_INTERNAL_KEY_BIT | domain->next_internal_key++;
		ret = fi_mr_reg(domain->rail_domains[rail], base, len, FI_REMOTE_READ,
				0, key, 0, &rdv->mrs[rail], NULL);
		if (ret)
			goto err;
		if (ep->rail_mr_mode[rail] & FI_MR_ENDPOINT) {
			ret = fi_mr_bind(rdv->mrs[rail], &ep->rail_eps[rail]->fid, 0);
			if (!ret)
				ret = fi_mr_enable(rdv->mrs[rail]);
			if (ret)
				goto err;
		}
		rts->keys[rail] = fi_mr_key(rdv->mrs[rail]);
	}
	return 0;
err:
	MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: cannot register %zu bytes for a "
		   "rendezvous send: %s\n", rail + 1, len, fi_strerror(-ret));
	return ret;
}

/* Starts a wait for a peer's answer under a fresh request id: kind, whom,
 * since when, and the user's completion. The caller adds it to
 * ep->rdv_sends once the request is ready to go. */
static void wait_start(struct mrail_ep *ep, struct mrail_rdv_send *wait,
		       fi_addr_t dest, enum mrail_wait_kind kind,
		       const struct mrail_cq_entry *user, bool complete_user)
{
	wait->req_id = ++ep->next_req_id;
	wait->kind = kind;
	wait->peer = dest;
	wait->since_ns = mrail_now_ns();
	wait->user = *user;
	wait->complete_user = complete_user;
}

/*
 * Registers the source and sends its RTS; with rma, as a WRITE to the
 * target's region (the RMA descriptor goes before the RTS descriptor).
 * bounce copies even a single piece: an inject's buffer is the caller's
 * again as soon as the call returns.
 */
static ssize_t rdv_send_common(struct mrail_ep *ep, const struct iovec *iov,
			       size_t count, fi_addr_t dest,
			       const struct mrail_wire_hdr *hdr_in,
			       const struct mrail_wire_rma *rma, bool bounce,
			       const struct mrail_cq_entry *user, bool complete_user)
{
	size_t len = mrail_iov_total(iov, count), i, off = 0, pre = 0;
	struct mrail_wire_hdr hdr = *hdr_in;
	struct mrail_wire_rts rts = { .total_len = len };
	struct mrail_rdv_send *rdv;
	struct mrail_rail_buf *buf;
	uint8_t *payload;
	void *base;
	ssize_t ret;
	int n;

	buf = mrail_request_buf(ep);
	if (!buf)
		return -FI_EAGAIN;
	rdv = calloc(1, sizeof(*rdv));
	if (!rdv) {
		ret = -FI_ENOMEM;
		goto err_buf;
	}
	if (count == 1 && !bounce) {
		base = iov[0].iov_base;
	} else {
		/* One contiguous region per RTS: gather the pieces once. */
		rdv->bounce = malloc(len);
		if (!rdv->bounce) {
			ret = -FI_ENOMEM;
			goto err_rdv;
		}
		for (i = 0; i < count; i++) {
			if (!iov[i].iov_len)
				continue;
			memcpy((uint8_t *) rdv->bounce + off, iov[i].iov_base,
			       iov[i].iov_len);
			off += iov[i].iov_len;
		}
		base = rdv->bounce;
	}
	ret = rdv_register(ep, rdv, base, len, &rts);
	if (ret)
		goto err_rdv;

	rts.base = (uint64_t) (uintptr_t) base;
	rts.rail_count = (uint8_t) ep->rail_count;
	wait_start(ep, rdv, dest, MRAIL_WAIT_SEND, user, complete_user);
	hdr.req_id = rdv->req_id;
	payload = buf->data + MRAIL_WIRE_HDR_LEN;
	if (rma) {
		pre = MRAIL_WIRE_RMA_LEN;
		if (mrail_wire_rma_encode(rma, payload, pre) < 0) {
			ret = -FI_EINVAL;
			goto err_rdv;
		}
	}
	hdr.payload_len = (uint32_t) (pre + mrail_wire_rts_len(rts.rail_count));
	if (mrail_wire_hdr_encode(&hdr, buf->data, MRAIL_WIRE_HDR_LEN) < 0 ||
	    (n = mrail_wire_rts_encode(&rts, payload + pre,
				       MRAIL_RAIL_BUF_LEN - MRAIL_WIRE_HDR_LEN -
				       pre)) < 0) {
		ret = -FI_EINVAL;
		goto err_rdv;
	}
	/* Completes from the receiver's ACK, or from a failed send. */
	HASH_ADD(hh, ep->rdv_sends, req_id, sizeof(rdv->req_id), rdv);
	return mrail_request_send(ep, buf, MRAIL_WIRE_HDR_LEN + pre + (size_t) n,
				  dest, rdv->req_id, user, false);

err_rdv:
	rdv_send_release(ep, rdv);
err_buf:
	mrail_tx_buf_put(ep, buf);
	return ret;
}

ssize_t mrail_rdv_send(struct mrail_ep *ep, const struct iovec *iov, size_t count,
		       fi_addr_t dest, const struct mrail_wire_hdr *hdr,
		       const struct mrail_cq_entry *user, bool complete_user)
{
	return rdv_send_common(ep, iov, count, dest, hdr, NULL, false, user,
			       complete_user);
}

ssize_t mrail_rdv_send_rma(struct mrail_ep *ep, const struct iovec *iov,
			   size_t count, fi_addr_t dest,
			   const struct mrail_wire_hdr *hdr,
			   const struct mrail_wire_rma *rma, bool bounce,
			   const struct mrail_cq_entry *user, bool complete_user)
{
	return rdv_send_common(ep, iov, count, dest, hdr, rma, bounce, user,
			       complete_user);
}

/* A new entry of the table of operations waiting for a peer's answer,
 * under a fresh request id; NULL when out of memory. */
static struct mrail_rdv_send *wait_add(struct mrail_ep *ep, fi_addr_t dest,
				       enum mrail_wait_kind kind,
				       const struct mrail_cq_entry *user,
				       bool complete_user)
{
	struct mrail_rdv_send *wait = calloc(1, sizeof(*wait));

	if (!wait)
		return NULL;
	wait_start(ep, wait, dest, kind, user, complete_user);
	HASH_ADD(hh, ep->rdv_sends, req_id, sizeof(wait->req_id), wait);
	return wait;
}

/*
 * FI_DELIVERY_COMPLETE on an eager send: its completion waits for the
 * receiver's ACK like a rendezvous send's does, in the same table, with no
 * memory registered.
 */
uint64_t mrail_ack_wait_add(struct mrail_ep *ep, fi_addr_t dest,
			    const struct mrail_cq_entry *user, bool complete_user)
{
	struct mrail_rdv_send *wait = wait_add(ep, dest, MRAIL_WAIT_SEND, user,
					       complete_user);

	return wait ? wait->req_id : 0;
}

uint64_t mrail_rdv_read_wait_add(struct mrail_ep *ep, fi_addr_t dest,
				 const struct iovec *iov, size_t count,
				 const struct mrail_cq_entry *user,
				 bool complete_user)
{
	struct mrail_rdv_send *wait = wait_add(ep, dest, MRAIL_WAIT_READ, user,
					       complete_user);

	if (!wait)
		return 0;
	memcpy(wait->iov, iov, count * sizeof(iov[0]));
	wait->iov_count = count;
	wait->len = mrail_iov_total(iov, count);
	return wait->req_id;
}

uint64_t mrail_rdv_grant_add(struct mrail_ep *ep, fi_addr_t reader, uint64_t len,
			     uint64_t key)
{
	struct mrail_cq_entry entry = {
		.flags = FI_RMA | FI_REMOTE_READ,
		.len = len,
		.src = reader,
		.key = key,
	};
	struct mrail_rdv_send *wait = wait_add(ep, reader, MRAIL_WAIT_GRANT,
					       &entry, false);

	return wait ? wait->req_id : 0;
}

uint64_t mrail_atomic_wait_add(struct mrail_ep *ep, fi_addr_t dest,
			       const struct iovec *result, size_t count,
			       const struct mrail_cq_entry *user,
			       bool complete_user)
{
	struct mrail_rdv_send *wait = wait_add(ep, dest, MRAIL_WAIT_ATOMIC, user,
					       complete_user);

	if (!wait)
		return 0;
	if (count)
		memcpy(wait->iov, result, count * sizeof(result[0]));
	wait->iov_count = count;
	wait->len = mrail_iov_total(result, count);
	return wait->req_id;
}

/*
 * Whether an answer (name) to request req_id that finds nothing waiting is
 * the second copy of one: the request is ours and was answered already
 * (the answer went again when a rail failed, or the first came late on a
 * rail that came back). Such a copy is dropped quietly.
 */
static bool rdv_answered_already(struct mrail_ep *ep, fi_addr_t peer,
				 const char *name, uint64_t req_id)
{
	if (!req_id || req_id > ep->next_req_id)
		return false;
	MRAIL_DBG(FI_LOG_EP_DATA, "second copy of the %s of request %" PRIu64
		  " from peer %" PRIu64 "\n", name, req_id, (uint64_t) peer);
	return true;
}

void mrail_atomic_wait_done(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    uint64_t req_id, int32_t status,
			    const uint8_t *result, size_t result_len)
{
	struct mrail_rdv_send *wait;
	char err[MRAIL_ERR_MAX];
	size_t i, off = 0;

	HASH_FIND(hh, ep->rdv_sends, &req_id, sizeof(req_id), wait);
	if (!wait && rdv_answered_already(ep, peer, "ATOMIC_RESP", req_id))
		return;
	if (!wait || wait->peer != peer || wait->kind != MRAIL_WAIT_ATOMIC) {
		snprintf(err, sizeof(err), "ATOMIC_RESP from peer %" PRIu64
			 " for request %" PRIu64 ", which is no atomic of it "
			 "waiting for one", (uint64_t) peer, req_id);
		mrail_cq_report_bad_message(ep, rail, err);
		return;
	}
	HASH_DEL(ep->rdv_sends, wait);
	if (!status && result_len != wait->len) {
		snprintf(err, sizeof(err), "ATOMIC_RESP from peer %" PRIu64
			 " carries %zu bytes of result, the atomic expects %"
			 PRIu64, (uint64_t) peer, result_len, wait->len);
		mrail_cq_report_bad_message(ep, rail, err);
		status = -FI_EIO;
	}
	if (status) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 " refused or failed "
			   "an atomic operation: %s\n", (uint64_t) peer,
			   fi_strerror(-status));
		wait->user.err = -status;
		wait->user.prov_errno = status;
	} else {
		/* The results are the application's before its completion. */
		for (i = 0; i < wait->iov_count; i++) {
			memcpy(wait->iov[i].iov_base, result + off,
			       wait->iov[i].iov_len);
			off += wait->iov[i].iov_len;
		}
	}
	mrail_user_complete(ep, &wait->user, wait->complete_user);
	rdv_send_release(ep, wait);
}

void mrail_rdv_each_wait_since(struct mrail_ep *ep, uint64_t since_ns,
			       void (*fn)(struct mrail_ep *ep, fi_addr_t peer,
					  uint64_t req_id, void *arg),
			       void *arg)
{
	struct mrail_rdv_send *wait, *tmp;

	HASH_ITER(hh, ep->rdv_sends, wait, tmp) {
		if (wait->since_ns <= since_ns)
			fn(ep, wait->peer, wait->req_id, arg);
	}
}

bool mrail_rdv_own_ops_pending(struct mrail_ep *ep)
{
	struct mrail_rdv_send *wait, *tmp;

	HASH_ITER(hh, ep->rdv_sends, wait, tmp) {
		if (wait->kind != MRAIL_WAIT_GRANT)
			return true;
	}
	return false;
}

void mrail_ack_wait_cancel(struct mrail_ep *ep, uint64_t req_id)
{
	struct mrail_rdv_send *wait;

	HASH_FIND(hh, ep->rdv_sends, &req_id, sizeof(req_id), wait);
	if (!wait)
		return;
	HASH_DEL(ep->rdv_sends, wait);
	rdv_send_release(ep, wait);
}

struct mrail_rail_buf *mrail_request_buf(struct mrail_ep *ep)
{
	struct mrail_rail_buf *buf = mrail_tx_buf_get(ep);

	/* None free: a progress round may free one for the caller's retry. */
	if (!buf)
		mrail_ep_progress(ep);
	return buf;
}

ssize_t mrail_request_send(struct mrail_ep *ep, struct mrail_rail_buf *buf,
			   size_t len, fi_addr_t dest, uint64_t req_id,
			   const struct mrail_cq_entry *user, bool complete_user)
{
	ssize_t ret;

	buf->complete_user = complete_user;
	buf->rdv_req_id = req_id;
	buf->user = *user;
	ret = mrail_tx_buf_send(ep, buf, len, mrail_av_get_peer(ep->av, dest));
	if (!ret)
		return 0;
	/* The buffer is back on its free list: nothing will answer. */
	if (req_id)
		mrail_ack_wait_cancel(ep, req_id);
	if (ret == -FI_EAGAIN)
		mrail_ep_progress(ep);
	return ret;
}

void mrail_rdv_send_failed(struct mrail_ep *ep, uint64_t req_id, int err)
{
	struct mrail_rdv_send *rdv;

	/* Already gone if the ACK beat the RTS's own send completion. */
	HASH_FIND(hh, ep->rdv_sends, &req_id, sizeof(req_id), rdv);
	if (!rdv)
		return;
	HASH_DEL(ep->rdv_sends, rdv);
	rdv->user.err = err;
	rdv->user.prov_errno = -err;
	mrail_user_complete(ep, &rdv->user, true);
	rdv_send_release(ep, rdv);
}

void mrail_rdv_handle_ack(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			  const struct mrail_wire_hdr *hdr, const uint8_t *payload)
{
	struct mrail_rdv_send *rdv;
	char err[MRAIL_ERR_MAX];
	int32_t status;

	if (mrail_wire_ack_decode(payload, hdr->payload_len, &status, err,
				  sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		return;
	}
	HASH_FIND(hh, ep->rdv_sends, &hdr->req_id, sizeof(hdr->req_id), rdv);
	if (rdv && rdv->kind == MRAIL_WAIT_ATOMIC)
		rdv = NULL;	/* answered by its ATOMIC_RESP, never by an ACK */
	if (!rdv && rdv_answered_already(ep, peer, "ACK", hdr->req_id))
		return;
	if (!rdv || rdv->peer != peer) {
		snprintf(err, sizeof(err), "ACK from peer %" PRIu64 " for request %"
			 PRIu64 ", which is no send to it waiting for one",
			 (uint64_t) peer, hdr->req_id);
		mrail_cq_report_bad_message(ep, rail, err);
		return;
	}
	HASH_DEL(ep->rdv_sends, rdv);
	MRAIL_DBG(FI_LOG_EP_DATA, "ACK from peer %" PRIu64 " for request %"
		  PRIu64 " (status %" PRId32 ")\n", (uint64_t) peer,
		  hdr->req_id, status);
	if (rdv->kind == MRAIL_WAIT_GRANT) {
		/* The reader is done with our region: one remote read. */
		mrail_rma_target_complete(ep, &rdv->user, status);
		rdv_send_release(ep, rdv);
		return;
	}
	if (status) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 " refused or failed "
			   "%s: %s\n", (uint64_t) peer,
			   rdv->user.flags & FI_RMA ? "an RMA operation" :
			   "to take a message", fi_strerror(-status));
		rdv->user.err = -status;
		rdv->user.prov_errno = status;
	}
	mrail_user_complete(ep, &rdv->user, rdv->complete_user);
	rdv_send_release(ep, rdv);
}

/* ---- ACKs ---- */

void mrail_rdv_ack_sender(struct mrail_ep *ep, fi_addr_t peer, uint64_t req_id,
			  int32_t status)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_ACK,
		.payload_len = MRAIL_WIRE_ACK_LEN,
		.req_id = req_id,
	};
	uint8_t msg[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ACK_LEN];

	mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN);
	mrail_wire_ack_encode(status, msg + MRAIL_WIRE_HDR_LEN, MRAIL_WIRE_ACK_LEN);
	mrail_ctrl_send(ep, peer, msg, sizeof(msg));
}

/* ---- receiver ---- */

static void rdv_recv_free(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	size_t rail, i;

	/* Only a closing endpoint (its rails closed) frees reads in use. */
	for (i = 0; i < MRAIL_RDV_READ_SLOTS; i++)
		free(rdv->reads[i].stage);
	for (rail = 0; rail < ep->rail_count; rail++) {
		for (i = 0; i < rdv->iov_count; i++) {
			if (rdv->local_mrs[rail][i])
				fi_close(&rdv->local_mrs[rail][i]->fid);
		}
	}
	free(rdv);
}

/* Gives the policy back what it counted of rdv: the plan ahead, and the
 * bytes of its stripes never read (a failure ended it early). */
static void rdv_policy_release(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	uint64_t unread[MRAIL_MAX_RAILS];
	int s;

	if (!rdv->ahead)
		return;
	for (s = 0; s < rdv->stripe_count; s++)
		unread[s] = rdv->stripes[s].len - rdv->issued[s];
	mrail_policy_xfer_done(ep, rdv->ahead, rdv->stripes, unread,
			       rdv->stripe_count);
}

/* Every read is back: complete the receive and release the sender. */
static void rdv_recv_finish(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	struct mrail_cq_entry *entry = &rdv->user;

	MRAIL_DBG(FI_LOG_EP_DATA, "pull from peer %" PRIu64 " done%s%s\n",
		  (uint64_t) rdv->peer, rdv->err ? ": " : "",
		  rdv->err ? fi_strerror(rdv->err) : "");
	if (rdv->unplanned)
		ep->rdv_unplanned--;
	rdv_policy_release(ep, rdv);
	mrail_rsv_end(ep, &rdv->rsv);
	if (rdv->err) {
		entry->err = rdv->err;
		entry->prov_errno = -rdv->err;
		entry->len = 0;
	} else {
		entry->len = rdv->to_read;
		if (rdv->rts.total_len > rdv->to_read) {
			entry->err = FI_ETRUNC;
			entry->prov_errno = -FI_ETRUNC;
			entry->olen = rdv->rts.total_len - rdv->to_read;
		}
	}
	/* The ACK goes before the completion: an application that ends as
	 * soon as its read completes (fabtests' fi_rdm_deferred_wq -T rma
	 * does) must not take the ACK the target counts the read on with it. */
	mrail_rdv_ack_sender(ep, rdv->peer, rdv->req_id,
			     rdv->err ? -(int32_t) rdv->err : 0);
	switch (rdv->kind) {
	case MRAIL_PULL_RECV:
		mrail_recv_write_completion(ep, rdv->multi, rdv->recv_flags, entry);
		break;
	case MRAIL_PULL_RMA_WRITE:
		/* Every stripe has landed: now the target may see it. */
		mrail_rma_target_complete(ep, entry, -(int32_t) rdv->err);
		break;
	case MRAIL_PULL_RMA_READ:
		mrail_user_complete(ep, entry, rdv->report);
		break;
	}
	DL_DELETE(ep->rdv_recvs, rdv);
	/* Orphans may still land, in their stage buffers: those stay. */
	rdv->finished = true;
	if (rdv->orphans)
		DL_APPEND(ep->rdv_orphaned, rdv);
	else
		rdv_recv_free(ep, rdv);
}

/* Where byte off of the receive buffer lives: an iov and room left in it. */
static size_t rdv_locate(const struct mrail_rdv_recv *rdv, uint64_t off,
			 size_t *index)
{
	size_t i;

	for (i = 0; i < rdv->iov_count; i++) {
		if (off < rdv->iov[i].iov_len) {
			*index = i;
			return rdv->iov[i].iov_len - (size_t) off;
		}
		off -= rdv->iov[i].iov_len;
	}
	return 0;
}

static struct mrail_rdv_read *rdv_free_read(struct mrail_rdv_recv *rdv)
{
	size_t i;

	for (i = 0; i < MRAIL_RDV_READ_SLOTS; i++) {
		if (!rdv->reads[i].in_use)
			return &rdv->reads[i];
	}
	return NULL;
}

/*
 * Whether reads on the rail land in a buffer of mrail's first. A rail over
 * a socket keeps a read whose link went down and may serve it long after the
 * bytes were read again elsewhere and the receive completed: into the
 * application's buffer, that late reply would overwrite what it holds by
 * then. Staged, it lands in memory mrail owns. Such rails copy every byte
 * from the socket anyway; rails that need FI_MR_LOCAL (RDMA) flush a read
 * whose link is lost with an error instead, and read in place. One rail has
 * nothing to fail over to.
 */
static bool rdv_staged_rail(const struct mrail_ep *ep, size_t rail)
{
	return ep->rail_count > 1 && !(ep->rail_mr_mode[rail] & FI_MR_LOCAL);
}

/*
 * Posts one read of len bytes at off in the transfer (of stripe s) on rail,
 * into at most one iov entry; *len is cut to what fits. Returns 0,
 * -FI_EAGAIN or the rail's error.
 */
static int rdv_post_read(struct mrail_ep *ep, struct mrail_rdv_recv *rdv, int s,
			 uint64_t off, uint64_t *len, size_t rail,
			 const struct mrail_av_peer *peer)
{
	struct mrail_rdv_read *read = rdv_free_read(rdv);
	size_t index = 0, room;
	void *desc = NULL;
	uint64_t raddr;
	uint8_t *dst;
	ssize_t ret;

	room = rdv_locate(rdv, off, &index);
	if (!read || !room)
		return -FI_EAGAIN;
	*len = *len < room ? *len : room;
	dst = (uint8_t *) rdv->iov[index].iov_base +
	      (rdv->iov[index].iov_len - room);
	if (rdv->local_mrs[rail][index])
		desc = fi_mr_desc(rdv->local_mrs[rail][index]);
	/* Rails without FI_MR_VIRT_ADDR address a region by offset. */
	raddr = (ep->rail_mr_mode[rail] & FI_MR_VIRT_ADDR ? rdv->rts.base : 0) +
		rdv->remote_off + off;

	read->stage = NULL;
	if (rdv_staged_rail(ep, rail) && *len) {
		read->stage = malloc(*len);
		if (!read->stage)
			return -FI_EAGAIN;
	}
	read->rc.kind = MRAIL_CTX_READ;
	read->rc.rail = rail;
	read->rdv = rdv;
	read->stripe = s;
	ret = fi_read(ep->rail_eps[rail], read->stage ? read->stage : dst, *len,
		      desc, peer->rail_fi_addr[rail], raddr, rdv->rts.keys[rail],
		      &read->rc.ctx);
	mrail_policy_read_posted(ep, rail, ret);
	if (ret) {
		free(read->stage);
		read->stage = NULL;
		return (int) ret;
	}
	mrail_rail_posted(ep, rdv->peer, rail);
	read->in_use = true;
	read->orphan = false;
	read->dst = dst;
	read->off = off;
	read->len = *len;
	rdv->stripe_inflight[s]++;
	rdv->inflight++;
	return 0;
}

/* Issues the next read of stripe s; returns 0, -FI_EAGAIN or an error. */
static int rdv_issue_one(struct mrail_ep *ep, struct mrail_rdv_recv *rdv, int s,
			 struct mrail_av_peer *peer)
{
	const struct mrail_stripe *stripe = &rdv->stripes[s];
	uint64_t len = stripe->len - rdv->issued[s];
	int ret;

	len = len < MRAIL_RDV_CHUNK ? len : MRAIL_RDV_CHUNK;
	ret = rdv_post_read(ep, rdv, s, stripe->offset + rdv->issued[s], &len,
			    stripe->rail, peer);
	if (!ret)
		rdv->issued[s] += len;
	return ret;
}

/* The bytes of a read its rail lost go on the list to read again. */
static void rdv_redo_add(struct mrail_rdv_recv *rdv,
			 const struct mrail_rdv_read *lost)
{
	struct mrail_rdv_redo *redo;

	/* Each entry stands for a read that held a slot: cannot overflow. */
	if (rdv->redo_count == MRAIL_RDV_READ_SLOTS) {
		rdv->err = FI_EIO;
		return;
	}
	redo = &rdv->redo[rdv->redo_count++];
	redo->off = lost->off;
	redo->len = lost->len;
	redo->stripe = lost->stripe;
	redo->from = lost->rc.rail;
}

/*
 * Reads again what rails lost, on the next rail usable for the peer after
 * the one that lost it (itself again if it is back). What cannot go now
 * stays listed for the next rdv_issue.
 */
static void rdv_redo_issue(struct mrail_ep *ep, struct mrail_rdv_recv *rdv,
			   const struct mrail_av_peer *peer)
{
	struct mrail_rdv_redo *redo;
	uint64_t len;
	int to, ret;

	while (rdv->redo_count && !rdv->err) {
		redo = &rdv->redo[rdv->redo_count - 1];
		to = mrail_rail_usable_after(ep, rdv->peer, redo->from);
		if (to < 0)
			return;
		len = redo->len;
		ret = rdv_post_read(ep, rdv, redo->stripe, redo->off, &len,
				    (size_t) to, peer);
		if (ret == -FI_EAGAIN)
			return;
		if (ret) {
			/* Another rail may take it; with none left, it ends. */
			mrail_rail_error(ep, rdv->peer, (size_t) to);
			if (mrail_rail_usable(ep, rdv->peer, (size_t) to))
				rdv->err = -ret;
			return;
		}
		mrail_rail_reissued(ep, rdv->peer, redo->from, len);
		redo->off += len;
		redo->len -= len;
		if (!redo->len)
			rdv->redo_count--;
	}
}

/*
 * What is left to read of a stripe on a rail that has failed for the peer
 * goes on the next rail that has not (two stripes may then share a rail).
 * Its reads in flight stay where they are. A reserved transfer moves too:
 * its reservation of the failed rail is gone (mrail_rsv_rail_failed), and
 * sharing a rail with another transfer for a while beats waiting for the
 * link.
 */
static void rdv_steer(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	size_t from;
	int s, to;

	for (s = 0; s < rdv->stripe_count; s++) {
		from = rdv->stripes[s].rail;
		if (rdv->issued[s] == rdv->stripes[s].len ||
		    mrail_rail_usable(ep, rdv->peer, from))
			continue;
		to = mrail_rail_usable_after(ep, rdv->peer, from);
		if (to < 0 || (size_t) to == from)
			continue;
		mrail_policy_stripe_moved(ep, from, (size_t) to,
					  rdv->stripes[s].len - rdv->issued[s],
					  rdv->ahead);
		rdv->stripes[s].rail = (uint8_t) to;
	}
}

/* The rail of stripe s refused to start a read: it fails for the peer, and
 * the stripe moves to another rail. Returns whether it moved. */
static bool rdv_read_refused(struct mrail_ep *ep, struct mrail_rdv_recv *rdv,
			     int s)
{
	size_t rail = rdv->stripes[s].rail;

	mrail_rail_error(ep, rdv->peer, rail);
	if (mrail_rail_usable(ep, rdv->peer, rail))
		return false;
	rdv_steer(ep, rdv);
	return rdv->stripes[s].rail != rail;
}

/* Issues what the rails will take now; finishes when nothing is left. */
static void rdv_issue(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(ep->av, rdv->peer);
	bool pending = false;
	int s, ret;

	if (rdv->rsv.waiting) {
		ret = mrail_rsv_poll(ep, &rdv->rsv, rdv->to_read, rdv->stripes);
		if (ret == -FI_EAGAIN)
			return;
		if (ret < 0)
			rdv->err = FI_EINVAL;
		else
			rdv->stripe_count = ret;
	}
	/* Split in list order (rdv_plan_waiting); a failed one ends. */
	if (rdv->unplanned && !rdv->err)
		return;
	if (!peer && !rdv->err) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 " left the AV during a "
			   "rendezvous receive\n", (uint64_t) rdv->peer);
		rdv->err = FI_EIO;
	}
	if (!rdv->err) {
		rdv_steer(ep, rdv);
		rdv_redo_issue(ep, rdv, peer);
	}
	for (s = 0; s < rdv->stripe_count && !rdv->err; s++) {
		while (rdv->issued[s] < rdv->stripes[s].len &&
		       rdv->stripe_inflight[s] < MRAIL_RDV_READS_PER_RAIL) {
			ret = rdv_issue_one(ep, rdv, s, peer);
			if (ret == -FI_EAGAIN)
				break;
			if (ret && rdv_read_refused(ep, rdv, s))
				continue;
			if (ret) {
				MRAIL_WARN(FI_LOG_EP_DATA, "rail %d: a rendezvous "
					   "read failed to start: %s\n",
					   rdv->stripes[s].rail + 1,
					   fi_strerror(-ret));
				rdv->err = -ret;
				break;
			}
		}
		if (rdv->issued[s] < rdv->stripes[s].len)
			pending = true;
	}
	/* A read refused above may have failed its rail, and that gave up
	 * the rail's other reads: their bytes wait on the redo list. */
	if (rdv->redo_count)
		pending = true;
	if (!rdv->inflight && (rdv->err || !pending))
		rdv_recv_finish(ep, rdv);
}

/* Registers the receive buffer on rails that need local descriptors. */
static int rdv_register_local(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	size_t rail, i;
	int ret;

	for (rail = 0; rail < ep->rail_count; rail++) {
		if (!(ep->rail_mr_mode[rail] & FI_MR_LOCAL))
			continue;
		for (i = 0; i < rdv->iov_count; i++) {
			if (!rdv->iov[i].iov_len)
				continue;
			ret = fi_mr_reg(ep->domain->rail_domains[rail],
					rdv->iov[i].iov_base, rdv->iov[i].iov_len,
					FI_READ, 0, 0, 0, &rdv->local_mrs[rail][i],
					NULL);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static void rdv_plan(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	int ret;

	ret = mrail_policy_stripe(ep, rdv->to_read, rdv->stripes, &rdv->ahead);
	if (ret < 0)
		rdv->err = FI_EINVAL;
	else
		rdv->stripe_count = ret;
}

/* Splits the transfers that waited for the policy, oldest first, as long
 * as it lets them; their reads start in rdv_issue. */
static void rdv_plan_waiting(struct mrail_ep *ep)
{
	struct mrail_rdv_recv *rdv;

	DL_FOREACH(ep->rdv_recvs, rdv) {
		if (!ep->rdv_unplanned || !mrail_policy_plan_now(ep))
			return;
		if (!rdv->unplanned)
			continue;
		rdv->unplanned = false;
		ep->rdv_unplanned--;
		rdv_plan(ep, rdv);
	}
}

/* Splits the transfer over the rails and starts reading (rdv is listed),
 * or leaves it to wait behind older ones the policy holds back. */
static void rdv_pull_begin(struct mrail_ep *ep, struct mrail_rdv_recv *rdv)
{
	int ret;

	MRAIL_DBG(FI_LOG_EP_DATA, "pull of %" PRIu64 " bytes from peer %" PRIu64
		  " begins\n", rdv->to_read, (uint64_t) rdv->peer);
	DL_APPEND(ep->rdv_recvs, rdv);
	ret = rdv_register_local(ep, rdv);
	if (ret) {
		MRAIL_WARN(FI_LOG_EP_DATA, "cannot register a local buffer for "
			   "a striped read: %s\n", fi_strerror(-ret));
		rdv->err = -ret;
	} else if (rdv->to_read && mrail_rsv_wanted(ep, rdv->to_read)) {
		mrail_rsv_begin(ep, &rdv->rsv, rdv->peer);
	} else if (rdv->to_read && !ep->rdv_unplanned &&
		   mrail_policy_plan_now(ep)) {
		rdv_plan(ep, rdv);
	} else if (rdv->to_read) {
		rdv->unplanned = true;
		ep->rdv_unplanned++;
	}
	rdv_issue(ep, rdv);
}

void mrail_rdv_recv_start(struct mrail_ep *ep, struct mrail_recv *recv,
			  struct mrail_rx_msg *msg)
{
	uint64_t cap = mrail_iov_total(recv->iov, recv->iov_count);
	struct mrail_rdv_recv *rdv;

	rdv = calloc(1, sizeof(*rdv));
	if (!rdv) {
		struct mrail_cq_entry entry = mrail_recv_entry(recv, msg);

		entry.err = FI_ENOMEM;
		entry.prov_errno = -FI_ENOMEM;
		mrail_recv_write_completion(ep, recv->multi, recv->flags, &entry);
		mrail_rdv_ack_sender(ep, msg->item.src, msg->req_id, -FI_ENOMEM);
		goto out;
	}
	rdv->kind = MRAIL_PULL_RECV;
	rdv->peer = msg->item.src;
	rdv->req_id = msg->req_id;
	rdv->rts = msg->rts;
	rdv->user = mrail_recv_entry(recv, msg);
	rdv->recv_flags = recv->flags;
	rdv->multi = recv->multi;
	rdv->to_read = msg->len < cap ? msg->len : cap;
	memcpy(rdv->iov, recv->iov, recv->iov_count * sizeof(recv->iov[0]));
	rdv->iov_count = recv->iov_count;
	rdv_pull_begin(ep, rdv);
out:
	free(recv);
	free(msg);
}

void mrail_rdv_pull_start(struct mrail_ep *ep, enum mrail_pull_kind kind,
			  fi_addr_t peer, uint64_t ack_id,
			  const struct mrail_wire_rts *rts, uint64_t remote_off,
			  const struct iovec *iov, size_t count,
			  const struct mrail_cq_entry *user, bool report)
{
	struct mrail_rdv_recv *rdv = calloc(1, sizeof(*rdv));
	struct mrail_cq_entry entry = *user;

	if (!rdv) {
		MRAIL_WARN(FI_LOG_EP_DATA, "out of memory for an RMA transfer "
			   "with peer %" PRIu64 "\n", (uint64_t) peer);
		entry.err = FI_ENOMEM;
		entry.prov_errno = -FI_ENOMEM;
		if (kind == MRAIL_PULL_RMA_WRITE)
			mrail_rma_target_complete(ep, &entry, -FI_ENOMEM);
		else
			mrail_user_complete(ep, &entry, true);
		mrail_rdv_ack_sender(ep, peer, ack_id, -FI_ENOMEM);
		return;
	}
	rdv->kind = kind;
	rdv->report = report;
	rdv->peer = peer;
	rdv->req_id = ack_id;
	rdv->rts = *rts;
	rdv->remote_off = remote_off;
	rdv->user = entry;
	rdv->to_read = rts->total_len;
	memcpy(rdv->iov, iov, count * sizeof(iov[0]));
	rdv->iov_count = count;
	rdv_pull_begin(ep, rdv);
}

void mrail_rdv_read_refused(struct mrail_ep *ep, fi_addr_t peer, uint64_t req_id,
			    int err)
{
	struct mrail_rdv_send *wait;

	HASH_FIND(hh, ep->rdv_sends, &req_id, sizeof(req_id), wait);
	if (!wait || wait->peer != peer || wait->kind != MRAIL_WAIT_READ)
		return;
	HASH_DEL(ep->rdv_sends, wait);
	wait->user.err = err;
	wait->user.prov_errno = -err;
	mrail_user_complete(ep, &wait->user, true);
	rdv_send_release(ep, wait);
}

void mrail_rdv_read_granted(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    uint64_t req_id, uint64_t grant_id,
			    uint64_t offset, const struct mrail_wire_rts *rts)
{
	struct mrail_rdv_send *wait;
	char err[MRAIL_ERR_MAX];

	HASH_FIND(hh, ep->rdv_sends, &req_id, sizeof(req_id), wait);
	if (!wait && rdv_answered_already(ep, peer, "READ_RESP", req_id))
		return;
	if (!wait || wait->peer != peer || wait->kind != MRAIL_WAIT_READ) {
		snprintf(err, sizeof(err), "READ_RESP from peer %" PRIu64 " for "
			 "request %" PRIu64 ", which is no read of it waiting for "
			 "one", (uint64_t) peer, req_id);
		mrail_cq_report_bad_message(ep, rail, err);
		mrail_rdv_ack_sender(ep, peer, grant_id, -FI_EINVAL);
		return;
	}
	HASH_DEL(ep->rdv_sends, wait);
	if (rts->total_len != wait->len) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 " granted %" PRIu64
			   " bytes for a read of %" PRIu64 "\n", (uint64_t) peer,
			   rts->total_len, wait->len);
		wait->user.err = FI_EIO;
		wait->user.prov_errno = -FI_EIO;
		mrail_user_complete(ep, &wait->user, true);
		mrail_rdv_ack_sender(ep, peer, grant_id, -FI_EINVAL);
	} else {
		mrail_rdv_pull_start(ep, MRAIL_PULL_RMA_READ, peer, grant_id, rts,
				     offset, wait->iov, wait->iov_count,
				     &wait->user, wait->complete_user);
	}
	rdv_send_release(ep, wait);
}

/* An orphan came back: what it read was read elsewhere, and its rail's
 * health forgot it when the rail failed. Its transfer may be done. */
static void rdv_orphan_returned(struct mrail_ep *ep, struct mrail_rdv_read *read)
{
	struct mrail_rdv_recv *rdv = read->rdv;

	mrail_policy_read_returned(ep, read->rc.rail);
	free(read->stage);
	read->stage = NULL;
	read->orphan = false;
	read->in_use = false;
	rdv->orphans--;
	if (rdv->finished && !rdv->orphans) {
		DL_DELETE(ep->rdv_orphaned, rdv);
		rdv_recv_free(ep, rdv);
	}
}

/* Gives up the staged reads of rdv in flight on rail (every rail: rail
 * MRAIL_ANY_RAIL); their bytes go on the redo list unless the transfer
 * has failed anyway. The progress round's rdv_issue goes on with it. */
static void rdv_orphan_reads(struct mrail_ep *ep, struct mrail_rdv_recv *rdv,
			     size_t rail)
{
	struct mrail_rdv_read *read;
	size_t i;

	for (i = 0; i < MRAIL_RDV_READ_SLOTS; i++) {
		read = &rdv->reads[i];
		if (!read->in_use || read->orphan || !read->stage ||
		    (rail != MRAIL_ANY_RAIL && read->rc.rail != rail))
			continue;
		read->orphan = true;
		rdv->orphans++;
		rdv->stripe_inflight[read->stripe]--;
		rdv->inflight--;
		mrail_policy_read_given_up(ep, read->rc.rail, read->len,
					   rdv->ahead);
		if (!rdv->err)
			rdv_redo_add(rdv, read);
	}
}

/* The rail has failed for the peer: the staged reads of the peer's
 * transfers it holds are read again on other rails (rdv_redo_issue). */
void mrail_rdv_rail_failed(struct mrail_ep *ep, fi_addr_t peer, size_t rail)
{
	struct mrail_rdv_recv *rdv;

	DL_FOREACH(ep->rdv_recvs, rdv) {
		if (rdv->peer == peer)
			rdv_orphan_reads(ep, rdv, rail);
	}
}

void mrail_rdv_handle_read(struct mrail_ep *ep, struct mrail_rail_ctx *rc, int err)
{
	struct mrail_rdv_read *read = container_of(rc, struct mrail_rdv_read, rc);
	struct mrail_rdv_recv *rdv = read->rdv;

	if (read->orphan) {
		rdv_orphan_returned(ep, read);
		return;
	}
	read->in_use = false;
	if (read->stage) {
		if (!err)
			memcpy(read->dst, read->stage, read->len);
		free(read->stage);
		read->stage = NULL;
	}
	/* A read served is the peer heard on the rail. */
	if (err)
		mrail_rail_error(ep, rdv->peer, rc->rail);
	else
		mrail_rail_heard(ep, rdv->peer, rc->rail, MRAIL_HEARD_SERVED);
	mrail_policy_read_done(ep, rc->rail, read->len, err, rdv->ahead);
	rdv->stripe_inflight[read->stripe]--;
	rdv->inflight--;
	/* A rail that failed for the peer: its bytes go over another. The
	 * first failure left is the transfer's (rail_handle_error logged it).
	 * Nothing can still land from a read that failed. */
	if (err && !rdv->err) {
		if (mrail_rail_usable(ep, rdv->peer, rc->rail))
			rdv->err = err;
		else
			rdv_redo_add(rdv, read);
	}
	rdv_issue(ep, rdv);
}

void mrail_rdv_progress(struct mrail_ep *ep)
{
	struct mrail_rdv_recv *rdv, *tmp;

	mrail_assert_locked(ep->domain);

	if (ep->rdv_unplanned)
		rdv_plan_waiting(ep);
	DL_FOREACH_SAFE(ep->rdv_recvs, rdv, tmp)
		rdv_issue(ep, rdv);
}

void mrail_rdv_mark_waited(struct mrail_ep *ep, bool *waited)
{
	struct mrail_rdv_send *rdv, *tmp;

	HASH_ITER(hh, ep->rdv_sends, rdv, tmp) {
		if (rdv->peer < ep->peer_cap)
			waited[rdv->peer] = true;
	}
}

void mrail_rdv_fail_peer(struct mrail_ep *ep, fi_addr_t peer, int err)
{
	struct mrail_rdv_send *rdv, *tmp;
	struct mrail_rdv_recv *recv;

	HASH_ITER(hh, ep->rdv_sends, rdv, tmp) {
		if (rdv->peer == peer)
			mrail_rdv_send_failed(ep, rdv->req_id, err);
	}
	/* Its data will not come: what we read of it ends with err once
	 * the reads in place (unstaged) are back; staged ones are given up. */
	DL_FOREACH(ep->rdv_recvs, recv) {
		if (recv->peer != peer)
			continue;
		if (!recv->err)
			recv->err = err;
		recv->redo_count = 0;
		rdv_orphan_reads(ep, recv, MRAIL_ANY_RAIL);
	}
	/* Queued control messages to it would hold up everyone else's. */
	mrail_deferred_drop_peer(ep, peer);
}

/* The endpoint is closing (its rails are already closed). */
void mrail_rdv_flush(struct mrail_ep *ep)
{
	struct mrail_rdv_send *send, *stmp;
	struct mrail_rdv_recv *recv, *rtmp;

	HASH_ITER(hh, ep->rdv_sends, send, stmp) {
		HASH_DEL(ep->rdv_sends, send);
		rdv_send_release(ep, send);
	}
	DL_FOREACH_SAFE(ep->rdv_recvs, recv, rtmp) {
		DL_DELETE(ep->rdv_recvs, recv);
		if (recv->multi)
			mrail_multi_recv_drop_part(recv->multi);
		rdv_recv_free(ep, recv);
	}
	DL_FOREACH_SAFE(ep->rdv_orphaned, recv, rtmp) {
		DL_DELETE(ep->rdv_orphaned, recv);
		rdv_recv_free(ep, recv);
	}
	mrail_rsv_flush(ep);
}
