/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Triggered operations (FI_TRIGGER with FI_TRIGGER_THRESHOLD) and deferred
 * work (fi_control FI_QUEUE_WORK, FI_CANCEL_WORK, FI_FLUSH_WORK), both from
 * fi_trigger(3).
 *
 * A triggered or deferred operation is copied into a struct mrail_trig_work
 * and armed on its mrail counter's queue (core/trigger.c, one queue for
 * FI_TRIGGER that watches the count, one for deferred work that watches
 * count + errors). When the counter reaches the threshold the counter moves
 * the work to the domain's ready list; mrail_trigger_fire then issues it,
 * through the endpoint's own fi_ops like an application call, and so with
 * the domain lock released: the entry points take it themselves.
 *
 * Where firing happens: after every round of the progress thread
 * (FI_PROGRESS_AUTO: no application call needed), in every CQ read and
 * counter read or wait, after fi_cntr_add/set and when the work is posted
 * with its threshold already reached. One thread fires at a time, so work
 * is issued in the order it became ready: threshold order on one counter.
 * A rail that pushes back (-FI_EAGAIN) leaves the work at the head of the
 * list for the next firing.
 *
 * The issued operation carries the work as its context. Its completion
 * (mrail_user_complete) is handed back here to become the application's:
 * an FI_TRIGGER operation completes like the same operation posted
 * directly, with the application's fi_triggered_context; deferred work
 * counts on its completion counter instead and writes a CQ entry (with the
 * struct fi_deferred_work as context) only when its flags ask for
 * FI_COMPLETION.
 */
#include "mrail.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"
#include "mrail_msg.h"

#include <stdlib.h>
#include <string.h>

#include <rdma/fi_trigger.h>
#include <uthash.h>
#include <utlist.h>

#include "trigger.h"

enum trig_state {
	TRIG_PENDING,	/* armed on its counter */
	TRIG_READY,	/* on the domain's ready list */
	TRIG_ISSUED,	/* handed to the endpoint: waits for its completion */
};

struct mrail_trig_work {
	struct mrail_trig_op op;	/* counter queue, then domain ready list */
	/* Every live work is in domain->trig_live by its own address (the
	 * context of the operation it issues). FI_TRIGGER work is also in
	 * domain->trig_by_context by the application's context (cancel, a
	 * context used twice). Deferred work is not: its request structure
	 * is only a description, copied when queued, so the application may
	 * queue the same struct fi_deferred_work again, changed or not,
	 * while earlier requests made with it are still queued. */
	struct mrail_trig_work *self;
	UT_hash_handle hh, hh_ctx;
	enum trig_state state;
	enum fi_op_type type;
	struct mrail_domain *domain;
	struct mrail_ep *ep;		/* NULL for counter operations */
	struct mrail_cntr *trigger_cntr;
	bool deferred;			/* FI_QUEUE_WORK, else FI_TRIGGER */
	/* What the application's completion carries: the
	 * fi_triggered_context, or the fi_deferred_work. */
	void *user_context;
	struct fi_deferred_work *work;
	struct mrail_cntr *completion_cntr;	/* deferred work */
	bool report;			/* deferred: FI_COMPLETION asked */
	bool completes;			/* the issued operation will complete */
	uint64_t flags;			/* issue flags, FI_TRIGGER removed */
	union {
		struct fi_msg msg;
		struct fi_msg_tagged tagged;
		struct fi_msg_rma rma;
		struct fi_msg_atomic atomic;
	} m;
	struct iovec iov[MRAIL_IOV_LIMIT];
	struct fi_ioc ioc[MRAIL_IOV_LIMIT];
	void *desc[MRAIL_IOV_LIMIT];
	struct fi_rma_iov rma_iov[MRAIL_IOV_LIMIT];
	struct fi_rma_ioc rma_ioc[MRAIL_IOV_LIMIT];
	struct fi_ioc result[MRAIL_IOV_LIMIT], compare[MRAIL_IOV_LIMIT];
	void *result_desc[MRAIL_IOV_LIMIT], *compare_desc[MRAIL_IOV_LIMIT];
	size_t result_count, compare_count;
	struct fid_cntr *target_cntr;	/* FI_OP_CNTR_SET/ADD */
	uint64_t cntr_value;
	bool inject;			/* posted with FI_INJECT */
	void *inject_copy;		/* FI_INJECT data, copied at post */
};

static const char *op_type_name(enum fi_op_type type)
{
	switch (type) {
	case FI_OP_RECV: return "receive";
	case FI_OP_SEND: return "send";
	case FI_OP_TRECV: return "tagged receive";
	case FI_OP_TSEND: return "tagged send";
	case FI_OP_READ: return "RMA read";
	case FI_OP_WRITE: return "RMA write";
	case FI_OP_ATOMIC: return "atomic";
	case FI_OP_FETCH_ATOMIC: return "fetch atomic";
	case FI_OP_COMPARE_ATOMIC: return "compare atomic";
	case FI_OP_CNTR_SET: return "counter set";
	case FI_OP_CNTR_ADD: return "counter add";
	default: return "unknown operation";
	}
}

static void work_free(struct mrail_trig_work *work)
{
	free(work->inject_copy);
	free(work);
}

/* ---- copying an operation ---- */

static int copy_iov(struct mrail_trig_work *work, const struct iovec *iov,
		    void **desc, size_t count)
{
	if (count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	if (count)
		memcpy(work->iov, iov, count * sizeof(*iov));
	if (desc && count)
		memcpy(work->desc, desc, count * sizeof(*desc));
	return 0;
}

/* FI_INJECT: the buffer may be reused once the call returns, but the
 * operation is issued later: its bytes are kept until then. */
static int copy_inject(struct mrail_trig_work *work, size_t count)
{
	size_t i, len = mrail_iov_total(work->iov, count), off = 0;
	uint8_t *copy;

	if (len > MRAIL_EAGER_MAX)
		return -FI_EMSGSIZE;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -FI_ENOMEM;
	for (i = 0; i < count; i++) {
		if (work->iov[i].iov_len)
			memcpy(copy + off, work->iov[i].iov_base, work->iov[i].iov_len);
		off += work->iov[i].iov_len;
	}
	work->inject_copy = copy;
	work->iov[0] = (struct iovec) { .iov_base = copy, .iov_len = len };
	return 1;	/* the new iov count */
}

static int copy_ioc(struct fi_ioc *dst, void **dst_desc, const struct fi_ioc *src,
		    void **src_desc, size_t count)
{
	if (count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	if (count)
		memcpy(dst, src, count * sizeof(*src));
	if (src_desc && count)
		memcpy(dst_desc, src_desc, count * sizeof(*src_desc));
	return 0;
}

static int work_copy_msg(struct mrail_trig_work *work, const struct fi_msg *msg)
{
	int ret = copy_iov(work, msg->msg_iov, msg->desc, msg->iov_count);

	if (ret)
		return ret;
	work->m.msg = *msg;
	work->m.msg.msg_iov = work->iov;
	work->m.msg.desc = work->desc;
	if (work->type == FI_OP_SEND && work->inject) {
		ret = copy_inject(work, msg->iov_count);
		if (ret < 0)
			return ret;
		work->m.msg.iov_count = (size_t) ret;
	}
	return 0;
}

static int work_copy_tagged(struct mrail_trig_work *work,
			    const struct fi_msg_tagged *msg)
{
	int ret = copy_iov(work, msg->msg_iov, msg->desc, msg->iov_count);

	if (ret)
		return ret;
	work->m.tagged = *msg;
	work->m.tagged.msg_iov = work->iov;
	work->m.tagged.desc = work->desc;
	if (work->type == FI_OP_TSEND && work->inject) {
		ret = copy_inject(work, msg->iov_count);
		if (ret < 0)
			return ret;
		work->m.tagged.iov_count = (size_t) ret;
	}
	return 0;
}

static int work_copy_rma(struct mrail_trig_work *work, const struct fi_msg_rma *msg)
{
	int ret = copy_iov(work, msg->msg_iov, msg->desc, msg->iov_count);

	if (ret)
		return ret;
	if (msg->rma_iov_count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	if (msg->rma_iov_count)
		memcpy(work->rma_iov, msg->rma_iov,
		       msg->rma_iov_count * sizeof(*msg->rma_iov));
	work->m.rma = *msg;
	work->m.rma.msg_iov = work->iov;
	work->m.rma.desc = work->desc;
	work->m.rma.rma_iov = work->rma_iov;
	if (work->type == FI_OP_WRITE && work->inject) {
		ret = copy_inject(work, msg->iov_count);
		if (ret < 0)
			return ret;
		work->m.rma.iov_count = (size_t) ret;
	}
	return 0;
}

static int work_copy_atomic(struct mrail_trig_work *work,
			    const struct fi_msg_atomic *msg)
{
	int ret = copy_ioc(work->ioc, work->desc, msg->msg_iov, msg->desc,
			   msg->iov_count);

	if (ret)
		return ret;
	if (msg->rma_iov_count > MRAIL_IOV_LIMIT)
		return -FI_EINVAL;
	if (msg->rma_iov_count)
		memcpy(work->rma_ioc, msg->rma_iov,
		       msg->rma_iov_count * sizeof(*msg->rma_iov));
	/* Its operands are read when it fires, so FI_INJECT's promise (the
	 * buffer is free once the call returns) could not be kept. */
	if (work->inject) {
		MRAIL_WARN(FI_LOG_EP_DATA, "a triggered atomic cannot be FI_INJECT "
			   "(its operands are read when it fires); post it "
			   "without FI_INJECT\n");
		return -FI_EINVAL;
	}
	work->m.atomic = *msg;
	work->m.atomic.msg_iov = work->ioc;
	work->m.atomic.desc = work->desc;
	work->m.atomic.rma_iov = work->rma_ioc;
	return 0;
}

/* ---- arming ---- */

/* The live work posted with the application's context, or NULL (lock held). */
static struct mrail_trig_work *work_find(struct mrail_domain *domain, const void *context)
{
	struct mrail_trig_work *work;

	HASH_FIND(hh_ctx, domain->trig_by_context, &context, sizeof(context), work);
	return work;
}

static void work_track(struct mrail_trig_work *work)
{
	struct mrail_domain *domain = work->domain;

	work->self = work;
	HASH_ADD_PTR(domain->trig_live, self, work);
	if (!work->deferred)
		HASH_ADD(hh_ctx, domain->trig_by_context, user_context,
			 sizeof(work->user_context), work);
}

/* Forgets work and frees it (lock held). */
static void work_drop(struct mrail_trig_work *work)
{
	struct mrail_domain *domain = work->domain;

	HASH_DEL(domain->trig_live, work);
	if (!work->deferred)
		HASH_DELETE(hh_ctx, domain->trig_by_context, work);
	work_free(work);
}

/*
 * Arms a filled-in work (lock held): live, and pending on its counter or
 * ready at once. Then fires what is ready, which may release the lock.
 */
static int work_arm(struct mrail_trig_work *work, uint64_t threshold)
{
	struct mrail_domain *domain = work->domain;
	int ret;

	ret = mrail_cntr_arm(work->trigger_cntr, &work->op, threshold, work->deferred);
	if (ret < 0) {
		MRAIL_WARN(FI_LOG_EP_DATA, "cannot arm a triggered %s: %s\n",
			   op_type_name(work->type), fi_strerror(-ret));
		return ret;
	}
	work->state = ret ? TRIG_READY : TRIG_PENDING;
	work_track(work);
	mrail_trigger_fire(domain);
	return 0;
}

static struct mrail_trig_work *work_new(struct mrail_domain *domain,
					struct mrail_ep *ep, enum fi_op_type type,
					uint64_t flags)
{
	struct mrail_trig_work *work = calloc(1, sizeof(*work));

	if (!work)
		return NULL;
	work->domain = domain;
	work->ep = ep;
	work->type = type;
	/* FI_INJECT's bytes are copied at post (copy_inject) and kept until
	 * the work completes, so the issued operation needs no FI_INJECT; it
	 * completes as the *msg call with FI_INJECT does (fi_msg(3): the
	 * flag only frees the buffer early). Counter operations complete
	 * nothing. */
	work->inject = flags & FI_INJECT;
	work->flags = flags & ~(FI_TRIGGER | FI_INJECT);
	work->completes = type != FI_OP_CNTR_SET && type != FI_OP_CNTR_ADD;
	return work;
}

/*
 * FI_TRIGGER on an endpoint's operation: context must be a struct
 * fi_triggered_context (or ...2, the same fields) with FI_TRIGGER_THRESHOLD
 * on an mrail counter of the endpoint's domain.
 */
static int trig_context(struct mrail_ep *ep, void *context, struct mrail_cntr **cntr,
			uint64_t *threshold)
{
	struct fi_triggered_context *tctx = context;

	if (!(ep->caps & FI_TRIGGER)) {
		MRAIL_WARN(FI_LOG_EP_DATA, "FI_TRIGGER on an endpoint opened "
			   "without the FI_TRIGGER capability; ask for it in "
			   "fi_getinfo's hints\n");
		return -FI_EINVAL;
	}
	if (!tctx) {
		MRAIL_WARN(FI_LOG_EP_DATA, "FI_TRIGGER needs a struct "
			   "fi_triggered_context as the operation's context\n");
		return -FI_EINVAL;
	}
	if (tctx->event_type != FI_TRIGGER_THRESHOLD) {
		MRAIL_WARN(FI_LOG_EP_DATA, "trigger event %d is not supported; "
			   "mrail triggers on FI_TRIGGER_THRESHOLD\n",
			   (int) tctx->event_type);
		return -FI_ENOSYS;
	}
	*cntr = tctx->trigger.threshold.cntr ?
		mrail_cntr_from_fid(&tctx->trigger.threshold.cntr->fid) : NULL;
	if (!*cntr || mrail_cntr_domain(*cntr) != ep->domain) {
		MRAIL_WARN(FI_LOG_EP_DATA, "the trigger counter is not an mrail "
			   "counter of the endpoint's domain\n");
		return -FI_EINVAL;
	}
	*threshold = tctx->trigger.threshold.threshold;
	return 0;
}

static int trig_flags_check(enum fi_op_type type, uint64_t flags)
{
	if (flags & (FI_MULTI_RECV | FI_PEEK | FI_CLAIM)) {
		MRAIL_WARN(FI_LOG_EP_DATA, "a triggered %s cannot use FI_MULTI_RECV, "
			   "FI_PEEK or FI_CLAIM\n", op_type_name(type));
		return -FI_EINVAL;
	}
	return 0;
}

static int trigger_copy_op(struct mrail_trig_work *work, const void *msg,
			   const struct fi_msg_fetch *fetch,
			   const struct fi_msg_compare *compare);

ssize_t mrail_trigger_post(struct mrail_ep *ep, enum fi_op_type type,
			   const void *msg, const struct fi_msg_fetch *fetch,
			   const struct fi_msg_compare *compare, uint64_t flags)
{
	struct mrail_domain *domain = ep->domain;
	struct mrail_trig_work *work;
	struct mrail_cntr *cntr;
	uint64_t threshold;
	void *context;
	int ret;

	switch (type) {
	case FI_OP_SEND:
	case FI_OP_RECV:
		context = ((const struct fi_msg *) msg)->context;
		break;
	case FI_OP_TSEND:
	case FI_OP_TRECV:
		context = ((const struct fi_msg_tagged *) msg)->context;
		break;
	case FI_OP_READ:
	case FI_OP_WRITE:
		context = ((const struct fi_msg_rma *) msg)->context;
		break;
	default:
		context = ((const struct fi_msg_atomic *) msg)->context;
		break;
	}
	ret = trig_context(ep, context, &cntr, &threshold);
	if (!ret)
		ret = trig_flags_check(type, flags);
	if (ret)
		return ret;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	work = work_new(domain, ep, type, flags);
	if (!work)
		return -FI_ENOMEM;
	work->trigger_cntr = cntr;
	work->user_context = context;
	ret = trigger_copy_op(work, msg, fetch, compare);
	if (ret)
		goto err;
	mrail_domain_lock(domain);
	if (work_find(domain, context)) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_EP_DATA, "this fi_triggered_context is already "
			   "in use by an operation that has not completed\n");
		ret = -FI_EBUSY;
		goto err;
	}
	ret = work_arm(work, threshold);
	pthread_mutex_unlock(&domain->lock);
	if (ret)
		goto err;
	return 0;
err:
	work_free(work);
	return ret;
}

static int trigger_copy_op(struct mrail_trig_work *work, const void *msg,
			   const struct fi_msg_fetch *fetch,
			   const struct fi_msg_compare *compare)
{
	int ret;

	switch (work->type) {
	case FI_OP_SEND:
	case FI_OP_RECV:
		return work_copy_msg(work, msg);
	case FI_OP_TSEND:
	case FI_OP_TRECV:
		return work_copy_tagged(work, msg);
	case FI_OP_READ:
	case FI_OP_WRITE:
		return work_copy_rma(work, msg);
	case FI_OP_ATOMIC:
		return work_copy_atomic(work, msg);
	case FI_OP_FETCH_ATOMIC:
	case FI_OP_COMPARE_ATOMIC:
		ret = work_copy_atomic(work, msg);
		if (ret)
			return ret;
		ret = copy_ioc(work->result, work->result_desc, fetch->msg_iov,
			       fetch->desc, fetch->iov_count);
		if (ret)
			return ret;
		work->result_count = fetch->iov_count;
		if (work->type == FI_OP_FETCH_ATOMIC)
			return 0;
		ret = copy_ioc(work->compare, work->compare_desc, compare->msg_iov,
			       compare->desc, compare->iov_count);
		work->compare_count = compare->iov_count;
		return ret;
	default:
		return -FI_ENOSYS;
	}
}

/* ---- issuing ---- */

/* Issues work through its endpoint's operations; the lock is not held. */
static ssize_t work_issue(struct mrail_trig_work *work)
{
	struct fid_ep *ep = work->ep ? &work->ep->ep_fid : NULL;
	void *context = work->completes ? work : NULL;

	switch (work->type) {
	case FI_OP_SEND:
		work->m.msg.context = context;
		return fi_sendmsg(ep, &work->m.msg, work->flags);
	case FI_OP_RECV:
		work->m.msg.context = context;
		return fi_recvmsg(ep, &work->m.msg, work->flags);
	case FI_OP_TSEND:
		work->m.tagged.context = context;
		return fi_tsendmsg(ep, &work->m.tagged, work->flags);
	case FI_OP_TRECV:
		work->m.tagged.context = context;
		return fi_trecvmsg(ep, &work->m.tagged, work->flags);
	case FI_OP_WRITE:
		work->m.rma.context = context;
		return fi_writemsg(ep, &work->m.rma, work->flags);
	case FI_OP_READ:
		work->m.rma.context = context;
		return fi_readmsg(ep, &work->m.rma, work->flags);
	case FI_OP_ATOMIC:
		work->m.atomic.context = context;
		return fi_atomicmsg(ep, &work->m.atomic, work->flags);
	case FI_OP_FETCH_ATOMIC:
		work->m.atomic.context = context;
		return fi_fetch_atomicmsg(ep, &work->m.atomic, work->result,
					  work->result_desc, work->result_count,
					  work->flags);
	case FI_OP_COMPARE_ATOMIC:
		work->m.atomic.context = context;
		return fi_compare_atomicmsg(ep, &work->m.atomic, work->compare,
					    work->compare_desc, work->compare_count,
					    work->result, work->result_desc,
					    work->result_count, work->flags);
	case FI_OP_CNTR_SET:
		return fi_cntr_set(work->target_cntr, work->cntr_value);
	case FI_OP_CNTR_ADD:
		return fi_cntr_add(work->target_cntr, work->cntr_value);
	default:
		return -FI_ENOSYS;
	}
}

static uint64_t op_type_cq_flags(enum fi_op_type type)
{
	switch (type) {
	case FI_OP_SEND: return FI_SEND | FI_MSG;
	case FI_OP_RECV: return FI_RECV | FI_MSG;
	case FI_OP_TSEND: return FI_SEND | FI_TAGGED;
	case FI_OP_TRECV: return FI_RECV | FI_TAGGED;
	case FI_OP_WRITE: return FI_RMA | FI_WRITE;
	case FI_OP_READ: return FI_RMA | FI_READ;
	case FI_OP_ATOMIC: return FI_ATOMIC | FI_WRITE;
	default: return FI_ATOMIC | FI_READ;
	}
}

/* The application's side of a completion of work (lock held); frees it. */
static void work_complete(struct mrail_trig_work *work, struct mrail_cq_entry entry,
			  bool report)
{
	struct mrail_ep *ep = work->ep;
	bool deferred = work->deferred, report_deferred = work->report;
	struct mrail_cntr *done = work->completion_cntr;

	entry.op_context = work->user_context;
	work_drop(work);
	if (!deferred) {
		mrail_user_complete(ep, &entry, report);
		return;
	}
	if (done) {
		if (entry.err)
			mrail_cntr_inc_err(done);
		else
			mrail_cntr_inc(done);
	}
	if (report_deferred && ep) {
		struct mrail_cq *cq = entry.flags & FI_RECV ? ep->rx_cq : ep->tx_cq;

		if (cq)
			mrail_cq_write(cq, &entry);
	}
}

/* An operation that could not be issued, or was cancelled, completes in
 * error (lock held). Counter operations have no one to tell but the log. */
static void work_fail(struct mrail_trig_work *work, int err)
{
	if (!work->ep) {
		MRAIL_WARN(FI_LOG_DOMAIN, "deferred %s failed: %s\n",
			   op_type_name(work->type), fi_strerror(err));
		work_drop(work);
		return;
	}
	if (err != FI_ECANCELED)
		MRAIL_WARN(FI_LOG_EP_DATA, "triggered %s failed when issued: %s\n",
			   op_type_name(work->type), fi_strerror(err));
	work_complete(work, (struct mrail_cq_entry) {
		.flags = op_type_cq_flags(work->type), .err = err,
		.prov_errno = -err, .src = FI_ADDR_NOTAVAIL }, true);
}

bool mrail_trigger_complete(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			    bool report)
{
	struct mrail_trig_work *work;
	const void *context = entry->op_context;

	mrail_assert_locked(ep->domain);

	if (!context)
		return false;
	HASH_FIND_PTR(ep->domain->trig_live, &context, work);
	if (!work || work->state != TRIG_ISSUED || work->ep != ep)
		return false;
	/* An FI_MULTI_RECV buffer's last entry would come twice; triggered
	 * receives cannot be multi-receive (trig_flags_check). */
	work_complete(work, *entry, report);
	return true;
}

void mrail_trigger_fire(struct mrail_domain *domain)
{
	struct mrail_trig_work *work;
	struct mrail_trig_op *op;
	bool completes;
	ssize_t ret;

	mrail_assert_locked(domain);

	if (domain->trig_firing)
		return;
	domain->trig_firing = true;
	while ((op = domain->trig_ready)) {
		work = container_of(op, struct mrail_trig_work, op);
		DL_DELETE(domain->trig_ready, op);
		op->prev = op->next = NULL;
		/* Once issued, its completion may come (from the progress
		 * thread) before the lock is back: it must find it ISSUED,
		 * and nothing here touches work after a success. */
		work->state = TRIG_ISSUED;
		completes = work->completes;
		pthread_mutex_unlock(&domain->lock);
		ret = work_issue(work);
		mrail_domain_lock(domain);
		if (ret == -FI_EAGAIN) {
			work->state = TRIG_READY;
			DL_PREPEND(domain->trig_ready, op);
			break;
		}
		if (ret)
			work_fail(work, (int) -ret);
		else if (!completes)
			work_drop(work);	/* nothing else refers to it */
	}
	domain->trig_firing = false;
}

/* ---- cancelling ---- */

/* Takes a work that was not issued yet off its counter or the ready list
 * (lock held). Returns false when it is already issued. */
static bool work_unqueue(struct mrail_trig_work *work)
{
	switch (work->state) {
	case TRIG_PENDING:
		return !mrail_cntr_disarm(work->trigger_cntr, &work->op,
					  work->deferred);
	case TRIG_READY:
		DL_DELETE(work->domain->trig_ready, &work->op);
		work->op.prev = work->op.next = NULL;
		return true;
	default:
		return false;
	}
}

ssize_t mrail_trigger_cancel(struct mrail_ep *ep, void *context)
{
	struct mrail_trig_work *work = context ? work_find(ep->domain, context) : NULL;

	mrail_assert_locked(ep->domain);

	if (!work || work->ep != ep || work->deferred)
		return -FI_ENOENT;
	if (work_unqueue(work)) {
		work_fail(work, FI_ECANCELED);
		return 0;
	}
	/* Issued: a receive can still be cancelled where it is posted. */
	if (work->type == FI_OP_RECV || work->type == FI_OP_TRECV)
		return mrail_msg_cancel(ep, work);
	return -FI_ENOENT;
}

void mrail_trigger_ep_close(struct mrail_ep *ep)
{
	struct mrail_trig_work *work, *tmp;

	mrail_assert_locked(ep->domain);

	HASH_ITER(hh, ep->domain->trig_live, work, tmp) {
		if (work->ep != ep)
			continue;
		(void) work_unqueue(work);
		work_drop(work);
	}
}

size_t mrail_trigger_cntr_users(struct mrail_domain *domain,
				struct mrail_cntr *cntr)
{
	struct mrail_trig_work *work, *tmp;
	size_t users = 0;

	HASH_ITER(hh, domain->trig_live, work, tmp) {
		if (work->trigger_cntr == cntr || work->completion_cntr == cntr ||
		    (work->target_cntr &&
		     mrail_cntr_from_fid(&work->target_cntr->fid) == cntr))
			users++;
	}
	return users;
}

/* ---- deferred work ---- */

static struct mrail_ep *deferred_ep(struct mrail_domain *domain, struct fid_ep *ep_fid)
{
	/* An alias stands for its endpoint: the request carries its flags. */
	struct mrail_ep *ep = ep_fid ? mrail_ep_or_alias(&ep_fid->fid) : NULL;

	if (!ep || ep->domain != domain) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: the operation's endpoint "
			   "is not an mrail endpoint (or alias of one) of this "
			   "domain\n");
		return NULL;
	}
	if (!ep->enabled) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: the operation's endpoint "
			   "is not enabled\n");
		return NULL;
	}
	return ep;
}

/* Fills work from a deferred request: its endpoint, flags and operation. */
/* What fi_trigger(3) keeps per type of a deferred data operation. */
struct deferred_op {
	struct fid_ep *ep_fid;
	const void *msg;
	const struct fi_msg_fetch *fetch;
	const struct fi_msg_compare *compare;
	uint64_t flags;
};

/* The operation of a data transfer request: 0, or -FI_EINVAL after a
 * warning when its structure is missing. */
static int deferred_op_of(const struct fi_deferred_work *dw, struct deferred_op *op)
{
#define DW_OP(field)							\
	do {								\
		if (!dw->op.field)					\
			goto missing;					\
		op->ep_fid = dw->op.field->ep;				\
		op->msg = &dw->op.field->msg;				\
		op->flags = dw->op.field->flags;			\
	} while (0)

	switch (dw->op_type) {
	case FI_OP_SEND:
	case FI_OP_RECV:
		DW_OP(msg);
		break;
	case FI_OP_TSEND:
	case FI_OP_TRECV:
		DW_OP(tagged);
		break;
	case FI_OP_READ:
	case FI_OP_WRITE:
		DW_OP(rma);
		break;
	case FI_OP_ATOMIC:
		DW_OP(atomic);
		break;
	case FI_OP_FETCH_ATOMIC:
		DW_OP(fetch_atomic);
		op->fetch = &dw->op.fetch_atomic->fetch;
		break;
	case FI_OP_COMPARE_ATOMIC:
		DW_OP(compare_atomic);
		op->fetch = &dw->op.compare_atomic->fetch;
		op->compare = &dw->op.compare_atomic->compare;
		break;
	default:
		break;
	}
#undef DW_OP
	return 0;
missing:
	MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: the %s request has no operation "
		   "structure\n", op_type_name(dw->op_type));
	return -FI_EINVAL;
}

/* A counter set or add: its counter must be one of this domain's, and it
 * has no completion counter of its own (fi_trigger(3)). */
static int deferred_cntr_check(struct mrail_domain *domain,
			       const struct fi_deferred_work *dw)
{
	struct mrail_cntr *target;

	if (!dw->op.cntr) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: the %s request has no "
			   "operation structure\n", op_type_name(dw->op_type));
		return -FI_EINVAL;
	}
	target = dw->op.cntr->cntr ?
		 mrail_cntr_from_fid(&dw->op.cntr->cntr->fid) : NULL;
	if (!target || mrail_cntr_domain(target) != domain) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: the counter to set or "
			   "add to is not an mrail counter of this domain\n");
		return -FI_EINVAL;
	}
	if (dw->completion_cntr) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: a counter operation "
			   "must have no completion_cntr (fi_trigger(3))\n");
		return -FI_EINVAL;
	}
	return 0;
}

static int deferred_fill(struct mrail_domain *domain, const struct fi_deferred_work *dw,
			 struct mrail_trig_work **out)
{
	struct deferred_op op = { 0 };
	struct mrail_trig_work *work;
	struct mrail_ep *ep = NULL;
	int ret;

	switch (dw->op_type) {
	case FI_OP_SEND: case FI_OP_RECV: case FI_OP_TSEND: case FI_OP_TRECV:
	case FI_OP_READ: case FI_OP_WRITE: case FI_OP_ATOMIC:
	case FI_OP_FETCH_ATOMIC: case FI_OP_COMPARE_ATOMIC:
		ret = deferred_op_of(dw, &op);
		break;
	case FI_OP_CNTR_SET:
	case FI_OP_CNTR_ADD:
		ret = deferred_cntr_check(domain, dw);
		break;
	default:
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: operation type %d is "
			   "not one of fi_trigger(3)'s\n", (int) dw->op_type);
		return -FI_ENOSYS;
	}
	if (ret)
		return ret;
	if (op.ep_fid) {
		ep = deferred_ep(domain, op.ep_fid);
		if (!ep)
			return -FI_EINVAL;
		ret = trig_flags_check(dw->op_type, op.flags);
		if (ret)
			return ret;
	}
	/* The buffers stay valid until the work completes (fi_trigger(3)),
	 * so FI_INJECT's copy is not needed; FI_COMPLETION is ours to judge. */
	work = work_new(domain, ep, dw->op_type, op.flags & ~(FI_INJECT | FI_TRIGGER));
	if (!work)
		return -FI_ENOMEM;
	work->deferred = true;
	work->work = (struct fi_deferred_work *) dw;
	work->user_context = (void *) dw;
	work->report = !!(op.flags & FI_COMPLETION);
	/* The endpoint's completion path must see the operation either way;
	 * work_complete decides what the application gets. */
	work->flags |= ep ? FI_COMPLETION : 0;
	if (ep) {
		ret = trigger_copy_op(work, op.msg, op.fetch, op.compare);
		if (ret) {
			work_free(work);
			return ret;
		}
	} else {
		work->target_cntr = dw->op.cntr->cntr;
		work->cntr_value = dw->op.cntr->value;
	}
	*out = work;
	return 0;
}

static int queue_work(struct mrail_domain *domain, struct fi_deferred_work *dw)
{
	struct mrail_trig_work *work;
	struct mrail_cntr *cntr, *done;
	int ret;

	if (!dw) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK needs a struct "
			   "fi_deferred_work\n");
		return -FI_EINVAL;
	}
	cntr = dw->triggering_cntr ? mrail_cntr_from_fid(&dw->triggering_cntr->fid) : NULL;
	done = dw->completion_cntr ? mrail_cntr_from_fid(&dw->completion_cntr->fid) : NULL;
	if (!cntr || mrail_cntr_domain(cntr) != domain ||
	    (dw->completion_cntr && (!done || mrail_cntr_domain(done) != domain))) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_QUEUE_WORK: the triggering and "
			   "completion counters must be mrail counters of this "
			   "domain (the triggering one is required)\n");
		return -FI_EINVAL;
	}
	ret = deferred_fill(domain, dw, &work);
	if (ret)
		return ret;
	work->trigger_cntr = cntr;
	work->completion_cntr = done;
	mrail_domain_lock(domain);
	ret = work_arm(work, dw->threshold);
	pthread_mutex_unlock(&domain->lock);
	if (ret)
		work_free(work);
	return ret;
}

/* FI_CANCEL_WORK: the requests queued with dw that have not been issued
 * (one struct may have been queued several times: they are not told
 * apart). FI_FLUSH_WORK: every request not issued, or (dw given) those on
 * dw's triggering counter. Cancelled deferred work completes nothing. */
static int cancel_work(struct mrail_domain *domain, struct fi_deferred_work *dw,
		       bool flush)
{
	struct mrail_trig_work *work, *tmp;
	struct mrail_cntr *only = NULL;
	size_t cancelled = 0;

	if (!flush && !dw) {
		MRAIL_WARN(FI_LOG_DOMAIN, "FI_CANCEL_WORK needs the struct "
			   "fi_deferred_work to cancel\n");
		return -FI_EINVAL;
	}
	if (flush && dw && dw->triggering_cntr)
		only = mrail_cntr_from_fid(&dw->triggering_cntr->fid);
	mrail_domain_lock(domain);
	HASH_ITER(hh, domain->trig_live, work, tmp) {
		if (!work->deferred || (!flush && work->work != dw) ||
		    (only && work->trigger_cntr != only))
			continue;
		if (work_unqueue(work)) {
			work_drop(work);
			cancelled++;
		}
	}
	pthread_mutex_unlock(&domain->lock);
	return flush || cancelled ? 0 : -FI_ENOENT;
}

int mrail_trigger_domain_control(struct mrail_domain *domain, int command, void *arg)
{
	switch (command) {
	case FI_QUEUE_WORK:
		return queue_work(domain, arg);
	case FI_CANCEL_WORK:
		return cancel_work(domain, arg, false);
	case FI_FLUSH_WORK:
		return cancel_work(domain, arg, true);
	default:
		return -FI_ENOSYS;
	}
}
