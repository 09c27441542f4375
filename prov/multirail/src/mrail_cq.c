/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Completion queue: user completions, one per user operation, formatted on
 * read in whichever fi_cq_format the application chose.
 *
 * Blocking reads sleep, never spin: with endpoints to progress (and manual
 * progress) they nap between progress rounds, otherwise they sleep on the
 * CQ's condition variable until a completion or fi_cq_signal wakes them. With FI_WAIT_FD
 * an eventfd is readable whenever completions are queued (or a signal is
 * pending) and drained by the read that empties the CQ.
 */
#include "mrail.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"

#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* What a CQ keeps beyond struct mrail_cq (which the data path shares):
 * every mrail_cq is the first member of one. */
struct mrail_cq_obj {
	struct mrail_cq cq;
	struct mrail_wait wait;		/* cond on domain->lock */
	bool signaled;			/* fi_cq_signal not yet seen by sread */
};

static struct mrail_cq_obj *cq_obj(struct mrail_cq *cq)
{
	return container_of(cq, struct mrail_cq_obj, cq);
}

static struct fi_ops mrail_cq_fi_ops;
static struct fi_ops_cq mrail_cq_ops;

struct mrail_cq *mrail_cq_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_CQ || fid->ops != &mrail_cq_fi_ops)
		return NULL;
	return container_of(fid, struct mrail_cq, cq_fid.fid);
}

static size_t cq_entry_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return sizeof(struct fi_cq_entry);
	}
}

static void cq_format_entry(enum fi_cq_format format, const struct mrail_cq_entry *e,
			    void *out)
{
	struct fi_cq_tagged_entry full = {
		.op_context = e->op_context, .flags = e->flags, .len = e->len,
		.buf = e->buf, .data = e->data, .tag = e->tag,
	};

	/* Every format is a prefix of the tagged one. */
	memcpy(out, &full, cq_entry_size(format));
}

int mrail_cq_write(struct mrail_cq *cq, const struct mrail_cq_entry *entry)
{
	struct mrail_cq_entry *grown;
	size_t i, cap;

	mrail_assert_locked(cq->domain);

	if (cq->count == cq->cap) {
		/* Grow rather than drop: a lost completion is a lost operation. */
		cap = cq->cap * 2;
		grown = malloc(cap * sizeof(*grown));
		if (!grown)
			return -FI_ENOMEM;
		for (i = 0; i < cq->count; i++)
			grown[i] = cq->ring[(cq->head + i) % cq->cap];
		free(cq->ring);
		cq->ring = grown;
		cq->cap = cap;
		cq->head = 0;
	}
	cq->ring[(cq->head + cq->count) % cq->cap] = *entry;
	cq->count++;
	mrail_progress_wake(cq->domain, &cq_obj(cq)->wait);
	return 0;
}

/* ---- bad input from peers ---- */

/* Warnings about bad messages from peers: at most this many a second per
 * endpoint (the error completions are all written). */
#define MRAIL_BAD_MSG_WARN_BURST 10
#define MRAIL_BAD_MSG_WARN_INTERVAL_NS 1000000000ULL

static void bad_msg_warn_held_back(uint64_t count)
{
	if (count)
		MRAIL_WARN(FI_LOG_EP_DATA, "%" PRIu64 " more messages from peers "
			   "were dropped as bad since the last warning\n", count);
}

/* Malformed input is reported where the application looks: an error
 * completion with no operation attached for every message, and a warning
 * saying what, rate-limited since a peer decides how often it happens. */
void mrail_cq_report_bad_message(struct mrail_ep *ep, size_t rail, const char *why)
{
	struct mrail_cq_entry entry = {
		.flags = FI_RECV, .err = FI_EIO, .prov_errno = -FI_EIO,
		.src = FI_ADDR_NOTAVAIL,
	};
	uint64_t held_back;

	if (mrail_ratelimit_allow(&ep->bad_msg_warn, mrail_now_ns(),
				  MRAIL_BAD_MSG_WARN_INTERVAL_NS,
				  MRAIL_BAD_MSG_WARN_BURST, &held_back)) {
		bad_msg_warn_held_back(held_back);
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a message from a "
			   "peer: %s\n", rail + 1, why);
	}
	mrail_cq_write(ep->rx_cq, &entry);
}

void mrail_cq_bad_message_summary(struct mrail_ep *ep)
{
	/* Nothing a peer did goes unsaid: the count the rate limit held
	 * back since its last warning. */
	bad_msg_warn_held_back(ep->bad_msg_warn.suppressed);
	ep->bad_msg_warn.suppressed = 0;
}

/* Progresses the endpoints, then issues the triggered operations that
 * are ready (releasing the lock for a moment). */
static void cq_progress(struct mrail_cq *cq)
{
	size_t i;

	for (i = 0; i < cq->ep_count; i++)
		mrail_ep_progress(cq->eps[i]);
	mrail_trigger_fire(cq->domain);
}

bool mrail_cq_poll_ready(struct mrail_cq *cq)
{
	mrail_assert_locked(cq->domain);
	if (!cq->count)
		cq_progress(cq);
	return cq->count > 0;
}

static ssize_t cq_read_locked(struct mrail_cq *cq, void *buf, size_t count,
			      fi_addr_t *src_addr)
{
	size_t size = cq_entry_size(cq->format), n = 0;
	struct mrail_cq_entry *entry;

	if (!cq->count)
		cq_progress(cq);
	while (n < count && cq->count) {
		entry = &cq->ring[cq->head];
		/* An error must be taken with readerr before anything after it. */
		if (entry->err)
			break;
		cq_format_entry(cq->format, entry, (char *) buf + n * size);
		if (src_addr)
			src_addr[n] = entry->src;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
		n++;
	}
	if (!cq->count)
		mrail_wait_drain(&cq_obj(cq)->wait);
	if (n)
		return (ssize_t) n;
	return cq->count ? -FI_EAVAIL : -FI_EAGAIN;
}

int mrail_idle_env(uint64_t *spin_ns)
{
	char err[MRAIL_ERR_MAX];
	unsigned spin_us = MRAIL_IDLE_SPIN_US_DEFAULT;

	if (mrail_env.spin_us &&
	    mrail_idle_parse(mrail_env.spin_us, &spin_us, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_CORE, "FI_MRAIL_SPIN_US: %s\n", err);
		return -FI_ENODATA;
	}
	*spin_ns = (uint64_t) spin_us * 1000;
	return 0;
}

static ssize_t mrail_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				 fi_addr_t *src_addr)
{
	struct mrail_cq *cq = container_of(cq_fid, struct mrail_cq, cq_fid);
	ssize_t ret;
	bool yield;

	mrail_domain_lock(cq->domain);
	ret = cq_read_locked(cq, buf, count, src_addr);
	yield = cq->domain->spin_ns &&
		mrail_idle_note(&cq->idle, ret != -FI_EAGAIN, mrail_now_ns(),
				cq->domain->spin_ns);
	pthread_mutex_unlock(&cq->domain->lock);
	/* Outside the lock: the thread that runs next may want it. */
	if (yield)
		sched_yield();
	return ret;
}

static ssize_t mrail_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return mrail_cq_readfrom(cq_fid, buf, count, NULL);
}

static ssize_t mrail_cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
				uint64_t flags)
{
	struct mrail_cq *cq = container_of(cq_fid, struct mrail_cq, cq_fid);
	struct mrail_cq_entry *entry;
	ssize_t ret = -FI_EAGAIN;

	mrail_domain_lock(cq->domain);
	if (!cq->count || !cq->ring[cq->head].err)
		goto out;
	entry = &cq->ring[cq->head];
	cq->err_entry = *entry;
	buf->op_context = entry->op_context;
	buf->flags = entry->flags;
	buf->len = entry->len;
	buf->buf = entry->buf;
	buf->data = entry->data;
	buf->tag = entry->tag;
	buf->olen = entry->olen;
	buf->err = entry->err;
	buf->prov_errno = entry->prov_errno;
	/* The only error data mrail has is an unknown sender's address
	 * (FI_SOURCE_ERR). fi_cq(3), 1.5 API on: copied into the caller's
	 * buffer when it gives one, else lent until the next readerr; the
	 * 1.4 API's entry ends before err_data_size and gets none. */
	free(cq->err_data);
	cq->err_data = entry->src_addr;
	cq->err_entry.src_addr = NULL;
	if (cq->domain->fabric->fabric_fid.api_version < FI_VERSION(1, 5)) {
		buf->err_data = NULL;
	} else if (!entry->src_addr) {
		if (!buf->err_data_size)
			buf->err_data = NULL;
		buf->err_data_size = 0;
	} else if (buf->err_data_size && buf->err_data) {
		if (buf->err_data_size > entry->src_addrlen)
			buf->err_data_size = entry->src_addrlen;
		memcpy(buf->err_data, entry->src_addr, buf->err_data_size);
	} else {
		buf->err_data = cq->err_data;
		buf->err_data_size = entry->src_addrlen;
	}
#if HAVE_STRUCT_FI_CQ_ERR_ENTRY_SRC_ADDR
	/* From API 1.20 the entry ends with src_addr, an authorization key's
	 * handle (FI_AV_AUTH_KEY, which mrail does not offer): so none. An
	 * older caller's entry ends before it. */
	if (cq->domain->fabric->fabric_fid.api_version >= FI_VERSION(1, 20))
		buf->src_addr = FI_ADDR_NOTAVAIL;
#endif
	cq->head = (cq->head + 1) % cq->cap;
	cq->count--;
	if (!cq->count)
		mrail_wait_drain(&cq_obj(cq)->wait);
	ret = 1;
out:
	pthread_mutex_unlock(&cq->domain->lock);
	return ret;
}

/*
 * Reads like fi_cq_readfrom, waiting up to timeout ms (negative: forever)
 * for a completion. Returns -FI_EAGAIN on timeout, or at once after an
 * fi_cq_signal (one signal ends one wait, even one that began after it),
 * and -FI_EAVAIL when an error completion is next.
 * The cond argument (FI_CQ_COND_THRESHOLD) is a hint fi_cq(3) lets
 * providers ignore: any completion ends the wait.
 */
static ssize_t mrail_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				  fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct mrail_cq *cq = container_of(cq_fid, struct mrail_cq, cq_fid);
	struct mrail_cq_obj *obj = cq_obj(cq);
	struct timespec deadline_buf;
	const struct timespec *deadline = mrail_deadline(&deadline_buf, timeout);
	ssize_t ret;

	mrail_domain_lock(cq->domain);
	for (;;) {
		ret = cq_read_locked(cq, buf, count, src_addr);
		if (ret != -FI_EAGAIN)
			break;
		if (obj->signaled) {
			obj->signaled = false;
			break;
		}
		if (mrail_deadline_passed(deadline))
			break;
		if (cq->ep_count && !cq->domain->progress_auto) {
			/* Completions come only from progress: nap, then read
			 * (and so progress) again. With FI_PROGRESS_AUTO the
			 * progress thread's completions wake the sleep below. */
			pthread_mutex_unlock(&cq->domain->lock);
			mrail_wait_nap();
			mrail_domain_lock(cq->domain);
		} else {
			mrail_wait_sleep(&obj->wait, &cq->domain->lock, deadline);
		}
	}
	pthread_mutex_unlock(&cq->domain->lock);
	return ret;
}

static ssize_t mrail_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			      const void *cond, int timeout)
{
	return mrail_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int mrail_cq_signal(struct fid_cq *cq_fid)
{
	struct mrail_cq *cq = container_of(cq_fid, struct mrail_cq, cq_fid);
	struct mrail_cq_obj *obj = cq_obj(cq);

	mrail_domain_lock(cq->domain);
	obj->signaled = true;
	mrail_wait_signal(&obj->wait);
	pthread_mutex_unlock(&cq->domain->lock);
	return 0;
}

/*
 * Safe to block on the fd when no completion is queued and no endpoint
 * needs progress to produce one: with manual progress, while endpoints are
 * bound only the application's own calls can make the fd readable; with
 * FI_PROGRESS_AUTO the progress thread's completions make it readable.
 */
int mrail_cq_trywait(struct fid *fid)
{
	struct mrail_cq *cq = mrail_cq_from_fid(fid);
	int ret = 0;

	if (!cq) {
		MRAIL_WARN(FI_LOG_CQ, "fi_trywait: a CQ that mrail did "
			   "not open\n");
		return -FI_EINVAL;
	}
	if (cq_obj(cq)->wait.obj != FI_WAIT_FD) {
		MRAIL_WARN(FI_LOG_CQ, "fi_trywait: this CQ has no native wait "
			   "object; open it with FI_WAIT_FD\n");
		return -FI_EINVAL;
	}
	mrail_domain_lock(cq->domain);
	if ((cq->ep_count && !cq->domain->progress_auto) || cq->count)
		ret = -FI_EAGAIN;
	pthread_mutex_unlock(&cq->domain->lock);
	return ret;
}

static int mrail_cq_control(struct fid *fid, int command, void *arg)
{
	struct mrail_cq *cq = container_of(fid, struct mrail_cq, cq_fid.fid);

	return mrail_wait_control(&cq_obj(cq)->wait, command, arg);
}

static const char *mrail_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				     const void *err_data, char *buf, size_t len)
{
	return mrail_strerror(prov_errno, buf, len);
}

int mrail_cq_attach_ep(struct mrail_cq *cq, struct mrail_ep *ep)
{
	size_t i;

	for (i = 0; i < cq->ep_count; i++) {
		if (cq->eps[i] == ep)
			return 0;
	}
	if (cq->ep_count == sizeof(cq->eps) / sizeof(cq->eps[0]))
		return -FI_ENOSPC;
	cq->eps[cq->ep_count++] = ep;
	/* A reader asleep on the condition variable must start progressing. */
	pthread_cond_broadcast(&cq_obj(cq)->wait.cond);
	return 0;
}

void mrail_cq_detach_ep(struct mrail_cq *cq, struct mrail_ep *ep)
{
	size_t i;

	for (i = 0; i < cq->ep_count; i++) {
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->ep_count];
			return;
		}
	}
}

static int mrail_cq_close(struct fid *fid)
{
	struct mrail_cq *cq = container_of(fid, struct mrail_cq, cq_fid.fid);
	struct mrail_cq_obj *obj = cq_obj(cq);

	mrail_domain_lock(cq->domain);
	if (cq->ep_count || cq->poll_refs) {
		pthread_mutex_unlock(&cq->domain->lock);
		MRAIL_WARN(FI_LOG_CQ, "fi_close: %zu endpoints and %zu poll sets "
			   "still use this CQ; close or fi_poll_del them first\n",
			   cq->ep_count, cq->poll_refs);
		return -FI_EBUSY;
	}
	mrail_progress_forget(cq->domain, &obj->wait);
	cq->domain->refs--;
	pthread_mutex_unlock(&cq->domain->lock);
	mrail_wait_fini(&obj->wait);
	for (; cq->count; cq->count--, cq->head = (cq->head + 1) % cq->cap)
		free(cq->ring[cq->head].src_addr);
	free(cq->err_data);
	free(cq->ring);
	free(obj);
	return 0;
}

int mrail_wait_obj_check(enum fi_log_subsys subsys, const char *what,
			 enum fi_wait_obj wait_obj)
{
	switch (wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		return 0;
	default:
		MRAIL_WARN(subsys, "%s wait object %d is not supported; use "
			   "FI_WAIT_NONE, FI_WAIT_UNSPEC or FI_WAIT_FD\n",
			   what, wait_obj);
		return -FI_ENOSYS;
	}
}

static int cq_check_attr(const struct fi_cq_attr *attr)
{
	if (attr->format > FI_CQ_FORMAT_TAGGED)
		return -FI_ENOSYS;
	if (mrail_wait_obj_check(FI_LOG_CQ, "CQ", attr->wait_obj))
		return -FI_ENOSYS;
	if (attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD) {
		MRAIL_WARN(FI_LOG_CQ, "CQ wait condition %d is not one of "
			   "FI_CQ_COND_NONE, FI_CQ_COND_THRESHOLD\n", attr->wait_cond);
		return -FI_EINVAL;
	}
	return 0;
}

int mrail_cq_open(struct fid_domain *domain_fid, struct fi_cq_attr *attr,
		  struct fid_cq **cq_fid, void *context)
{
	struct mrail_domain *domain =
		container_of(domain_fid, struct mrail_domain, domain_fid);
	struct mrail_cq_obj *obj;
	struct mrail_cq *cq;
	int ret;

	mrail_corelib_thread_enter();
	ret = cq_check_attr(attr);
	if (ret)
		return ret;
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return -FI_ENOMEM;
	cq = &obj->cq;
	cq->domain = domain;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->cap = attr->size ? attr->size : 1024;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	if (!cq->ring) {
		ret = -FI_ENOMEM;
		goto err;
	}
	ret = mrail_wait_init(&obj->wait, attr->wait_obj);
	if (ret) {
		MRAIL_WARN(FI_LOG_CQ, "cannot create the CQ's wait object: %s; "
			   "raise the limit of open files (ulimit -n) or use "
			   "FI_WAIT_NONE\n", fi_strerror(-ret));
		goto err;
	}
	mrail_domain_lock(domain);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &mrail_cq_fi_ops;
	cq->cq_fid.ops = &mrail_cq_ops;
	*cq_fid = &cq->cq_fid;
	return 0;
err:
	free(cq->ring);
	free(obj);
	return ret;
}

static struct fi_ops mrail_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_cq_close,
	.bind = mrail_no_bind,
	.control = mrail_cq_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static struct fi_ops_cq mrail_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = mrail_cq_read,
	.readfrom = mrail_cq_readfrom,
	.readerr = mrail_cq_readerr,
	.sread = mrail_cq_sread,
	.sreadfrom = mrail_cq_sreadfrom,
	.signal = mrail_cq_signal,
	.strerror = mrail_cq_strerror,
};
