/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FI_ATOMIC, executed by mrail itself at the target.
 *
 * The rails (libfabric 1.17's tcp;ofi_rxm, udp;ofi_rxd) have no atomics,
 * and an atomic must stay atomic between initiators whatever rail each of
 * them used, so no rail operation ever touches the target's elements: the
 * initiator sends one ATOMIC request (descriptor, operand, compare data)
 * on one rail, the target checks it against its region (key, bounds, the
 * access mrail_atomic_access asks for), applies it with mrail_atomic_apply
 * and answers with one ATOMIC_RESP carrying the status and, for fetch and
 * compare atomics, the previous values. A request and a response each fit
 * in one rail message, which bounds the count of one atomic
 * (mrail_wire_atomic_max_count, reported by the valid calls).
 *
 * Atomicity: every message an endpoint receives is handled with its
 * domain's lock held (progress, whether manual or the domain's thread,
 * runs under it), and a region belongs to one domain. So the read, the
 * computation and the write of an atomic happen under the one lock every
 * other atomic, RMA and message on any endpoint and rail of that domain
 * also holds: no two atomics on a region interleave. That is fi_atomic(3)'s
 * "single actor", the domain.
 *
 * The initiator completes from the response (delivery complete; the
 * results are in the result buffers before the completion is written):
 * one completion per user atomic, FI_ATOMIC | FI_WRITE for a plain one,
 * FI_ATOMIC | FI_READ for fetch and compare ones, which fi_endpoint(3)'s
 * FI_WRITE and FI_READ counters count likewise. The target counts each
 * applied atomic once: a plain one on its FI_REMOTE_WRITE counter, a fetch
 * or compare one (FI_ATOMIC_READ and the fetch ops that also write
 * included) on its FI_REMOTE_READ counter, as fi_endpoint(3) defines them.
 * A counter bound to the region (fi_mr_bind) counts by what the atomic
 * does to the region, as fi_mr(3) defines it: every atomic that modifies
 * it (fetching and compare ones included) on FI_REMOTE_WRITE, every one
 * that reads it on FI_REMOTE_READ, once on a counter bound for both.
 * A refused atomic (no such key, out of the region, access not granted, a
 * malformed request) changes nothing at the target, counts nothing there,
 * is a warning there, and an error completion at the initiator with the
 * target's status (-FI_EACCES, -FI_EINVAL...).
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
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "atomic.h"
#include "mr_range.h"

#define EP(fid) container_of(fid, struct mrail_ep, ep_fid)

/* ---- target ---- */

/* Answers req_id with status and len bytes of result. */
static void atomic_reply(struct mrail_ep *ep, fi_addr_t peer, uint64_t req_id,
			 int32_t status, uint8_t *msg, size_t result_len)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_ATOMIC_RESP,
		.req_id = req_id,
		.payload_len = (uint32_t) (MRAIL_WIRE_ATOMIC_RESP_LEN + result_len),
	};

	mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN);
	mrail_wire_atomic_resp_encode(status, msg + MRAIL_WIRE_HDR_LEN,
				      MRAIL_WIRE_ATOMIC_RESP_LEN);
	mrail_ctrl_send(ep, peer, msg, MRAIL_WIRE_HDR_LEN +
			MRAIL_WIRE_ATOMIC_RESP_LEN + result_len);
}

static void atomic_refuse(struct mrail_ep *ep, fi_addr_t peer, uint64_t req_id,
			  int32_t status)
{
	uint8_t msg[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_RESP_LEN];

	atomic_reply(ep, peer, req_id, status, msg, 0);
}

static const char *kind_name(uint8_t kind)
{
	return kind == MRAIL_ATOMIC_PLAIN ? "atomic" :
	       kind == MRAIL_ATOMIC_FETCH ? "fetch atomic" : "compare atomic";
}

/* The region a request names, if the peer may have the access it needs. */
static int atomic_validate(struct mrail_ep *ep, fi_addr_t peer,
			   const struct mrail_wire_atomic_req *req,
			   struct mrail_mr **mr_out)
{
	const struct mrail_wire_atomic *d = &req->desc;
	uint64_t access = mrail_atomic_access((enum mrail_atomic_kind) d->kind,
					      (enum fi_op) d->op);
	uint64_t len = d->count * req->size;
	struct mrail_mr *mr = mrail_mr_lookup(ep->domain, d->key);
	int ret;

	ret = mrail_rma_check(mr != NULL, mr ? mr->len : 0, mr ? mr->access : 0,
			      d->addr, len, access);
	if (ret) {
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 ": %s (op %u, "
			   "datatype %u) of %" PRIu64 " bytes at offset %#" PRIx64
			   " of key %#" PRIx64 " refused: %s\n", (uint64_t) peer,
			   kind_name(d->kind), d->op, d->datatype, len, d->addr,
			   d->key, mrail_rma_refusal(mr != NULL, ret, access));
		return ret;
	}
	*mr_out = mr;
	return 0;
}

static void atomic_handle_req(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			      const struct mrail_wire_hdr *hdr,
			      const uint8_t *payload)
{
	struct mrail_wire_atomic_req req;
	struct mrail_cq_entry entry = { .src = peer };
	char err[MRAIL_ERR_MAX];
	struct mrail_mr *mr;
	uint8_t *msg, *result;
	int ret;

	if (mrail_wire_atomic_decode(payload, hdr->payload_len, &ep->limits,
				     &req, err, sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		atomic_refuse(ep, peer, hdr->req_id, -FI_EINVAL);
		return;
	}
	ret = atomic_validate(ep, peer, &req, &mr);
	if (ret) {
		atomic_refuse(ep, peer, hdr->req_id, ret);
		return;
	}
	msg = malloc(MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_RESP_LEN +
		     req.len.result);
	if (!msg) {
		atomic_refuse(ep, peer, hdr->req_id, -FI_ENOMEM);
		return;
	}
	result = msg + MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_RESP_LEN;
	/* Atomic: the caller holds the domain lock (see the top). */
	ret = mrail_atomic_apply((enum fi_op) req.desc.op,
				 (enum fi_datatype) req.desc.datatype,
				 (uint8_t *) mr->base + req.desc.addr,
				 req.operand, req.compare,
				 req.len.result ? result : NULL,
				 (size_t) req.desc.count);
	if (ret) {
		/* The decoder checked the combination: a bug, said as one. */
		MRAIL_WARN(FI_LOG_EP_DATA, "peer %" PRIu64 ": %s op %u on "
			   "datatype %u could not be applied: %s\n",
			   (uint64_t) peer, kind_name(req.desc.kind), req.desc.op,
			   req.desc.datatype, fi_strerror(-ret));
		free(msg);
		atomic_refuse(ep, peer, hdr->req_id, -FI_EINVAL);
		return;
	}
	entry.flags = FI_ATOMIC | (req.desc.kind == MRAIL_ATOMIC_PLAIN ?
				   FI_REMOTE_WRITE : FI_REMOTE_READ);
	entry.len = (size_t) req.desc.count * req.size;
	entry.key = req.desc.key;
	/* The region's counter by what it does to the region (fi_mr(3)). */
	mrail_rma_target_count(ep, &entry, 0,
			       mrail_atomic_access((enum mrail_atomic_kind) req.desc.kind,
						   (enum fi_op) req.desc.op));
	atomic_reply(ep, peer, hdr->req_id, 0, msg, req.len.result);
	free(msg);
}

static void atomic_handle_resp(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			       const struct mrail_wire_hdr *hdr,
			       const uint8_t *payload)
{
	const uint8_t *result;
	char err[MRAIL_ERR_MAX];
	size_t result_len;
	int32_t status;

	if (mrail_wire_atomic_resp_decode(payload, hdr->payload_len, &status,
					  &result, &result_len, err,
					  sizeof(err))) {
		mrail_cq_report_bad_message(ep, rail, err);
		/* The atomic it answers fails rather than wait forever. */
		status = -FI_EIO;
		result = NULL;
		result_len = 0;
	}
	mrail_atomic_wait_done(ep, rail, peer, hdr->req_id, status, result,
			       result_len);
}

void mrail_atomic_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			    const struct mrail_wire_hdr *hdr,
			    const uint8_t *payload)
{
	if (hdr->op == MRAIL_OP_ATOMIC)
		atomic_handle_req(ep, rail, peer, hdr, payload);
	else if (hdr->op == MRAIL_OP_ATOMIC_RESP)
		atomic_handle_resp(ep, rail, peer, hdr, payload);
	else
		mrail_cq_report_bad_message(ep, rail, "not an atomic operation");
}

/* ---- initiator ---- */

/* One user atomic, from whichever of the calls. */
struct atomic_args {
	enum mrail_atomic_kind kind;
	enum fi_op op;
	enum fi_datatype datatype;
	const struct fi_ioc *operand;
	size_t operand_count;
	const struct fi_ioc *compare;
	size_t compare_count;
	const struct fi_ioc *result;
	size_t result_count;
	fi_addr_t dest;
	uint64_t addr;
	uint64_t key;
	size_t rma_count;	/* *msg calls: the target's count, else 0 */
	void *context;
	uint64_t flags;
	bool inject;
};

/* Elements in an fi_ioc list, as bytes in an iovec list; -FI_EINVAL for
 * a list too long or without buffers, -FI_EMSGSIZE past max elements. */
static ssize_t ioc_to_iov(const struct fi_ioc *ioc, size_t count, size_t size,
			  size_t max, struct iovec *iov, size_t *elements)
{
	size_t i, total = 0;

	if (!count || count > MRAIL_IOV_LIMIT || !ioc)
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		if (ioc[i].count && !ioc[i].addr)
			return -FI_EINVAL;
		if (ioc[i].count > max - total)
			return -FI_EMSGSIZE;
		total += ioc[i].count;
		iov[i].iov_base = ioc[i].addr;
		iov[i].iov_len = ioc[i].count * size;
	}
	*elements = total;
	return 0;
}

/* The user buffers of an atomic, checked and counted in elements. */
struct atomic_bufs {
	size_t size, count;
	struct iovec operand[MRAIL_IOV_LIMIT], compare[MRAIL_IOV_LIMIT];
	struct iovec result[MRAIL_IOV_LIMIT];
	size_t operand_count, compare_count, result_count;
	struct mrail_atomic_len len;
};

static ssize_t atomic_check_args(const struct atomic_args *a,
				 struct atomic_bufs *b)
{
	size_t max, n;
	ssize_t ret;
	int valid;

	valid = mrail_atomic_valid(a->kind, a->op, a->datatype, &b->size);
	if (valid)
		return valid == -EOPNOTSUPP ? -FI_EOPNOTSUPP : -FI_EINVAL;
	max = mrail_wire_atomic_max_count(a->kind, b->size, MRAIL_EAGER_MAX);
	b->count = 0;
	if (a->op != FI_ATOMIC_READ) {
		ret = ioc_to_iov(a->operand, a->operand_count, b->size, max,
				 b->operand, &b->count);
		if (ret)
			return ret;
		b->operand_count = a->operand_count;
	}
	if (a->kind == MRAIL_ATOMIC_COMPARE) {
		ret = ioc_to_iov(a->compare, a->compare_count, b->size, max,
				 b->compare, &n);
		if (ret)
			return ret;
		if (n != b->count)
			return -FI_EINVAL;
		b->compare_count = a->compare_count;
	}
	if (a->kind != MRAIL_ATOMIC_PLAIN) {
		ret = ioc_to_iov(a->result, a->result_count, b->size, max,
				 b->result, &n);
		if (ret)
			return ret;
		/* FI_ATOMIC_READ has no operand: the result says how many. */
		if (a->op == FI_ATOMIC_READ)
			b->count = n;
		else if (n != b->count)
			return -FI_EINVAL;
		b->result_count = a->result_count;
	}
	if (!b->count || (a->rma_count && a->rma_count != b->count))
		return -FI_EINVAL;
	if (a->addr > UINT64_MAX - b->count * b->size)
		return -FI_EINVAL;
	if (mrail_atomic_len(a->kind, a->op, a->datatype, b->count, &b->len))
		return -FI_EINVAL;
	return 0;
}

/* Copies an iovec list's bytes to dst; returns the bytes copied. */
static size_t gather(uint8_t *dst, const struct iovec *iov, size_t count)
{
	size_t i, off = 0;

	for (i = 0; i < count; i++) {
		if (iov[i].iov_len)
			memcpy(dst + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	return off;
}

/* Under the lock: builds and sends the request in one transmit buffer. */
static ssize_t atomic_send(struct mrail_ep *ep, const struct atomic_args *a,
			   const struct atomic_bufs *b,
			   const struct mrail_cq_entry *user, bool complete_user)
{
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_ATOMIC,
		.payload_len = (uint32_t) (MRAIL_WIRE_ATOMIC_LEN + b->len.operand +
					   b->len.compare),
	};
	struct mrail_wire_atomic desc = {
		.key = a->key, .addr = a->addr, .count = b->count,
		.op = (uint8_t) a->op, .datatype = (uint8_t) a->datatype,
		.kind = (uint8_t) a->kind,
	};
	size_t off = MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_ATOMIC_LEN;
	struct mrail_rail_buf *buf;
	uint64_t req_id;

	buf = mrail_request_buf(ep);
	if (!buf)
		return -FI_EAGAIN;
	req_id = mrail_atomic_wait_add(ep, a->dest, b->result, b->result_count,
				       user, complete_user);
	if (!req_id) {
		mrail_tx_buf_put(ep, buf);
		return -FI_ENOMEM;
	}
	hdr.req_id = req_id;
	if (mrail_wire_hdr_encode(&hdr, buf->data, MRAIL_WIRE_HDR_LEN) < 0 ||
	    mrail_wire_atomic_encode(&desc, buf->data + MRAIL_WIRE_HDR_LEN,
				     MRAIL_WIRE_ATOMIC_LEN) < 0) {
		mrail_ack_wait_cancel(ep, req_id);
		mrail_tx_buf_put(ep, buf);
		return -FI_EINVAL;
	}
	/* Copied now: every atomic is an inject as far as its operand and
	 * compare buffers go. */
	off += gather(buf->data + off, b->operand, b->operand_count);
	off += gather(buf->data + off, b->compare, b->compare_count);
	/* Completes from the target's response, or from a failed send. */
	return mrail_request_send(ep, buf, off, a->dest, req_id, user, false);
}

static ssize_t atomic_post(struct mrail_ep *ep, struct atomic_args *a)
{
	struct mrail_cq_entry user = {
		.op_context = a->context,
		.flags = FI_ATOMIC | (a->kind == MRAIL_ATOMIC_PLAIN ?
				      FI_WRITE : FI_READ),
		.src = FI_ADDR_NOTAVAIL,
	};
	bool complete_user = !a->inject &&
			     (!ep->tx_selective || (a->flags & FI_COMPLETION));
	struct atomic_bufs b = { 0 };
	ssize_t ret;

	ret = atomic_check_args(a, &b);
	if (ret)
		return ret;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	user.len = b.count * b.size;

	mrail_domain_lock(ep->domain);
	/* The ATOMIC_RESP comes from the peer's canonical entry, whichever
	 * of its entries the application named: the wait is keyed by it. */
	a->dest = mrail_av_canon(ep->av, a->dest);
	if (a->dest == FI_ADDR_NOTAVAIL || !mrail_av_get_peer(ep->av, a->dest)) {
		MRAIL_WARN(FI_LOG_EP_DATA, "an atomic to an fi_addr that is not "
			   "in the AV\n");
		ret = -FI_EINVAL;
		goto out;
	}
	if ((a->flags & FI_FENCE) && mrail_rdv_own_ops_pending(ep)) {
		mrail_ep_progress(ep);
		ret = -FI_EAGAIN;
		goto out;
	}
	/* A target that never inserted us learns us before our request. */
	ret = mrail_contact_prepare(ep, a->dest);
	if (ret)
		goto out;
	ret = atomic_send(ep, a, &b, &user, complete_user);
	if (!ret)
		mrail_progress_kick(ep->domain);
out:
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

/* The *msg calls: one remote range, no remote CQ data. */
static ssize_t atomic_from_msg(struct atomic_args *a,
			       const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov ||
	    (flags & (FI_REMOTE_CQ_DATA | FI_TAGGED)))
		return -FI_EINVAL;
	a->op = msg->op;
	a->datatype = msg->datatype;
	a->operand = msg->msg_iov;
	a->operand_count = msg->iov_count;
	a->dest = msg->addr;
	a->addr = msg->rma_iov[0].addr;
	a->key = msg->rma_iov[0].key;
	a->rma_count = msg->rma_iov[0].count;
	a->context = msg->context;
	a->flags = flags;
	return 0;
}

static int atomic_valid(enum mrail_atomic_kind kind, enum fi_datatype datatype,
			enum fi_op op, size_t *count)
{
	size_t size;
	int ret;

	ret = mrail_atomic_valid(kind, op, datatype, &size);
	if (ret)
		return ret == -EOPNOTSUPP ? -FI_EOPNOTSUPP : -FI_EINVAL;
	if (count)
		*count = mrail_wire_atomic_max_count(kind, size, MRAIL_EAGER_MAX);
	return 0;
}

int mrail_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		       enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	enum mrail_atomic_kind kind;
	size_t size;
	int ret;

	ret = mrail_atomic_kind_from_flags(flags, &kind);
	if (ret)
		return ret == -EOPNOTSUPP ? -FI_EOPNOTSUPP : -FI_EINVAL;
	if (!attr)
		return -FI_EINVAL;
	ret = mrail_atomic_valid(kind, op, datatype, &size);
	if (ret)
		return ret == -EOPNOTSUPP ? -FI_EOPNOTSUPP : -FI_EINVAL;
	attr->size = size;
	attr->count = mrail_wire_atomic_max_count(kind, size, MRAIL_EAGER_MAX);
	return 0;
}

/* ---- fi_ops_atomic ---- */

static ssize_t mrail_atomic_write(struct fid_ep *ep_fid, const void *buf,
				  size_t count, void *desc, fi_addr_t dest,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	struct fi_ioc ioc = { .addr = (void *) buf, .count = count };
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_PLAIN, .op = op, .datatype = datatype,
		.operand = &ioc, .operand_count = 1, .dest = dest, .addr = addr,
		.key = key, .context = context, .flags = EP(ep_fid)->tx_op_flags,
	};

	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_writev(struct fid_ep *ep_fid,
				   const struct fi_ioc *iov, void **desc,
				   size_t count, fi_addr_t dest, uint64_t addr,
				   uint64_t key, enum fi_datatype datatype,
				   enum fi_op op, void *context)
{
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_PLAIN, .op = op, .datatype = datatype,
		.operand = iov, .operand_count = count, .dest = dest,
		.addr = addr, .key = key, .context = context,
		.flags = EP(ep_fid)->tx_op_flags,
	};

	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_writemsg(struct fid_ep *ep_fid,
				     const struct fi_msg_atomic *msg,
				     uint64_t flags)
{
	struct atomic_args a = { .kind = MRAIL_ATOMIC_PLAIN };
	ssize_t ret;

	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep_fid), FI_OP_ATOMIC, msg, NULL, NULL,
					  flags);
	ret = atomic_from_msg(&a, msg, flags);
	if (ret)
		return ret;
	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_inject(struct fid_ep *ep_fid, const void *buf,
				   size_t count, fi_addr_t dest, uint64_t addr,
				   uint64_t key, enum fi_datatype datatype,
				   enum fi_op op)
{
	struct fi_ioc ioc = { .addr = (void *) buf, .count = count };
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_PLAIN, .op = op, .datatype = datatype,
		.operand = &ioc, .operand_count = 1, .dest = dest, .addr = addr,
		.key = key, .flags = EP(ep_fid)->tx_op_flags, .inject = true,
	};

	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_readwrite(struct fid_ep *ep_fid, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t dest,
				      uint64_t addr, uint64_t key,
				      enum fi_datatype datatype, enum fi_op op,
				      void *context)
{
	struct fi_ioc ioc = { .addr = (void *) buf, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_FETCH, .op = op, .datatype = datatype,
		.operand = &ioc, .operand_count = 1, .result = &res,
		.result_count = 1, .dest = dest, .addr = addr, .key = key,
		.context = context, .flags = EP(ep_fid)->tx_op_flags,
	};

	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_readwritev(struct fid_ep *ep_fid,
				       const struct fi_ioc *iov, void **desc,
				       size_t count, struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       fi_addr_t dest, uint64_t addr,
				       uint64_t key, enum fi_datatype datatype,
				       enum fi_op op, void *context)
{
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_FETCH, .op = op, .datatype = datatype,
		.operand = iov, .operand_count = count, .result = resultv,
		.result_count = result_count, .dest = dest, .addr = addr,
		.key = key, .context = context,
		.flags = EP(ep_fid)->tx_op_flags,
	};

	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_readwritemsg(struct fid_ep *ep_fid,
					 const struct fi_msg_atomic *msg,
					 struct fi_ioc *resultv,
					 void **result_desc, size_t result_count,
					 uint64_t flags)
{
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_FETCH, .result = resultv,
		.result_count = result_count,
	};
	ssize_t ret;

	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep_fid), FI_OP_FETCH_ATOMIC, msg,
					  &(struct fi_msg_fetch) {
						.msg_iov = resultv, .desc = result_desc,
						.iov_count = result_count }, NULL, flags);
	ret = atomic_from_msg(&a, msg, flags);
	if (ret)
		return ret;
	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_compwrite(struct fid_ep *ep_fid, const void *buf,
				      size_t count, void *desc,
				      const void *compare, void *compare_desc,
				      void *result, void *result_desc,
				      fi_addr_t dest, uint64_t addr,
				      uint64_t key, enum fi_datatype datatype,
				      enum fi_op op, void *context)
{
	struct fi_ioc ioc = { .addr = (void *) buf, .count = count };
	struct fi_ioc cmp = { .addr = (void *) compare, .count = count };
	struct fi_ioc res = { .addr = result, .count = count };
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_COMPARE, .op = op, .datatype = datatype,
		.operand = &ioc, .operand_count = 1, .compare = &cmp,
		.compare_count = 1, .result = &res, .result_count = 1,
		.dest = dest, .addr = addr, .key = key, .context = context,
		.flags = EP(ep_fid)->tx_op_flags,
	};

	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_compwritev(struct fid_ep *ep_fid,
				       const struct fi_ioc *iov, void **desc,
				       size_t count,
				       const struct fi_ioc *comparev,
				       void **compare_desc, size_t compare_count,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       fi_addr_t dest, uint64_t addr,
				       uint64_t key, enum fi_datatype datatype,
				       enum fi_op op, void *context)
{
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_COMPARE, .op = op, .datatype = datatype,
		.operand = iov, .operand_count = count, .compare = comparev,
		.compare_count = compare_count, .result = resultv,
		.result_count = result_count, .dest = dest, .addr = addr,
		.key = key, .context = context,
		.flags = EP(ep_fid)->tx_op_flags,
	};

	return atomic_post(EP(ep_fid), &a);
}

static ssize_t mrail_atomic_compwritemsg(struct fid_ep *ep_fid,
					 const struct fi_msg_atomic *msg,
					 const struct fi_ioc *comparev,
					 void **compare_desc,
					 size_t compare_count,
					 struct fi_ioc *resultv,
					 void **result_desc, size_t result_count,
					 uint64_t flags)
{
	struct atomic_args a = {
		.kind = MRAIL_ATOMIC_COMPARE, .compare = comparev,
		.compare_count = compare_count, .result = resultv,
		.result_count = result_count,
	};
	ssize_t ret;

	if (flags & FI_TRIGGER)
		return mrail_trigger_post(EP(ep_fid), FI_OP_COMPARE_ATOMIC, msg,
					  &(struct fi_msg_fetch) {
						.msg_iov = resultv, .desc = result_desc,
						.iov_count = result_count },
					  &(struct fi_msg_compare) {
						.msg_iov = comparev, .desc = compare_desc,
						.iov_count = compare_count }, flags);
	ret = atomic_from_msg(&a, msg, flags);
	if (ret)
		return ret;
	return atomic_post(EP(ep_fid), &a);
}

static int mrail_atomic_writevalid(struct fid_ep *ep_fid,
				   enum fi_datatype datatype, enum fi_op op,
				   size_t *count)
{
	return atomic_valid(MRAIL_ATOMIC_PLAIN, datatype, op, count);
}

static int mrail_atomic_readwritevalid(struct fid_ep *ep_fid,
				       enum fi_datatype datatype, enum fi_op op,
				       size_t *count)
{
	return atomic_valid(MRAIL_ATOMIC_FETCH, datatype, op, count);
}

static int mrail_atomic_compwritevalid(struct fid_ep *ep_fid,
				       enum fi_datatype datatype, enum fi_op op,
				       size_t *count)
{
	return atomic_valid(MRAIL_ATOMIC_COMPARE, datatype, op, count);
}

struct fi_ops_atomic mrail_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = mrail_atomic_write,
	.writev = mrail_atomic_writev,
	.writemsg = mrail_atomic_writemsg,
	.inject = mrail_atomic_inject,
	.readwrite = mrail_atomic_readwrite,
	.readwritev = mrail_atomic_readwritev,
	.readwritemsg = mrail_atomic_readwritemsg,
	.compwrite = mrail_atomic_compwrite,
	.compwritev = mrail_atomic_compwritev,
	.compwritemsg = mrail_atomic_compwritemsg,
	.writevalid = mrail_atomic_writevalid,
	.readwritevalid = mrail_atomic_readwritevalid,
	.compwritevalid = mrail_atomic_compwritevalid,
};
