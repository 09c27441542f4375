/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counter: a success count and an error count, guarded by the domain lock.
 * The data path bumps them (mrail_cntr_inc, mrail_cntr_inc_err) as
 * operations on the endpoints bound to the counter complete, once per user
 * operation (mrail_user_complete); with manual progress, reading or
 * waiting on the counter drives those endpoints (a counter bound to none
 * drives every endpoint of the domain: deferred work of any of them may
 * count on it). Every move of a counter may make operations armed on it
 * (FI_TRIGGER, deferred work: mrail_trigger.c) ready; reads, waits and
 * fi_cntr_add/set issue them.
 *
 * fi_cntr_wait sleeps, never spins: with endpoints to progress (and manual
 * progress) it naps between progress rounds, otherwise it sleeps on the
 * counter's condition variable until a change (an increment of the progress
 * thread, fi_cntr_add from another thread) wakes it. With FI_WAIT_FD, every
 * change makes an eventfd readable until the application reads the counter.
 */
#include "mrail.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_trigger.h"

#include <stdlib.h>

#include <utlist.h>

#include "trigger.h"

struct mrail_cntr {
	struct fid_cntr cntr_fid;
	struct mrail_domain *domain;
	uint64_t value;
	uint64_t err;
	struct mrail_wait wait;		/* cond on domain->lock */
	struct mrail_ep *eps[MRAIL_CNTR_MAX_EPS];
	size_t ep_count;
	size_t mr_count;		/* regions bound (fi_mr_bind) */
	/* Operations armed on this counter (mrail_trigger.c): FI_TRIGGER
	 * ones wait for the count, deferred work for count + errors. */
	struct mrail_trig_queue trig_ops, deferred;
	size_t poll_refs;		/* poll sets it is in (mrail_poll.c) */
};

static struct fi_ops mrail_cntr_fi_ops;
static struct fi_ops_cntr mrail_cntr_ops;

struct mrail_cntr *mrail_cntr_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_CNTR || fid->ops != &mrail_cntr_fi_ops)
		return NULL;
	return container_of(fid, struct mrail_cntr, cntr_fid.fid);
}

struct mrail_domain *mrail_cntr_domain(const struct mrail_cntr *cntr)
{
	return cntr->domain;
}

/*
 * Whether this counter moves only when someone progresses: with manual
 * progress, the endpoints bound to it; a counter bound to none (one that
 * triggered operations, deferred work or the application move) may still
 * be counted by deferred work of any endpoint of the domain.
 */
static bool cntr_needs_progress(const struct mrail_cntr *cntr)
{
	return !cntr->domain->progress_auto && (cntr->ep_count || cntr->domain->eps);
}

/*
 * With FI_PROGRESS_AUTO the progress thread alone drives the endpoints:
 * a read shows what it has counted, a wait sleeps until it counts more.
 * Either way triggered operations that are ready are issued here (which
 * releases the lock for a moment).
 */
static void cntr_progress(struct mrail_cntr *cntr)
{
	struct mrail_ep *ep;
	size_t i;

	if (!cntr->domain->progress_auto) {
		for (i = 0; i < cntr->ep_count; i++)
			mrail_ep_progress(cntr->eps[i]);
		if (!cntr->ep_count) {
			DL_FOREACH2(cntr->domain->eps, ep, dom_next)
				mrail_ep_progress(ep);
		}
	}
	mrail_trigger_fire(cntr->domain);
}

/* The counter moved: what it triggers becomes ready, waiters wake. */
static void cntr_moved(struct mrail_cntr *cntr)
{
	struct mrail_domain *domain = cntr->domain;

	if (cntr->trig_ops.pending)
		mrail_trig_take_ready(&cntr->trig_ops, cntr->value, &domain->trig_ready);
	else
		mrail_trig_set_value(&cntr->trig_ops, cntr->value);
	if (cntr->deferred.pending)
		mrail_trig_take_ready(&cntr->deferred, cntr->value + cntr->err,
				      &domain->trig_ready);
	else
		mrail_trig_set_value(&cntr->deferred, cntr->value + cntr->err);
	mrail_progress_wake(domain, &cntr->wait);
}

void mrail_cntr_inc(struct mrail_cntr *cntr)
{
	mrail_assert_locked(cntr->domain);
	cntr->value++;
	cntr_moved(cntr);
}

void mrail_cntr_inc_err(struct mrail_cntr *cntr)
{
	mrail_assert_locked(cntr->domain);
	cntr->err++;
	cntr_moved(cntr);
}

void mrail_cntr_hold(struct mrail_cntr *cntr)
{
	cntr->mr_count++;
}

void mrail_cntr_release(struct mrail_cntr *cntr)
{
	cntr->mr_count--;
}

int mrail_cntr_arm(struct mrail_cntr *cntr, struct mrail_trig_op *op,
		   uint64_t threshold, bool with_errors)
{
	struct mrail_trig_queue *q = with_errors ? &cntr->deferred : &cntr->trig_ops;
	int ret = mrail_trig_arm(q, op, threshold);

	mrail_assert_locked(cntr->domain);

	if (ret < 0)
		return -FI_EBUSY;
	if (ret)
		mrail_trig_take_ready(q, q->value, &cntr->domain->trig_ready);
	return ret;
}

int mrail_cntr_disarm(struct mrail_cntr *cntr, struct mrail_trig_op *op,
		      bool with_errors)
{
	struct mrail_trig_queue *q = with_errors ? &cntr->deferred : &cntr->trig_ops;

	mrail_assert_locked(cntr->domain);

	return mrail_trig_cancel(q, op) ? -FI_ENOENT : 0;
}

int mrail_cntr_attach_ep(struct mrail_cntr *cntr, struct mrail_ep *ep)
{
	size_t i;

	for (i = 0; i < cntr->ep_count; i++) {
		if (cntr->eps[i] == ep)
			return 0;
	}
	if (cntr->ep_count == MRAIL_CNTR_MAX_EPS) {
		MRAIL_WARN(FI_LOG_CNTR, "a counter can be bound to at most %d "
			   "endpoints; open another counter\n", MRAIL_CNTR_MAX_EPS);
		return -FI_ENOSPC;
	}
	cntr->eps[cntr->ep_count++] = ep;
	/* A waiter asleep on the condition variable must start progressing. */
	pthread_cond_broadcast(&cntr->wait.cond);
	return 0;
}

void mrail_cntr_detach_ep(struct mrail_cntr *cntr, struct mrail_ep *ep)
{
	size_t i;

	for (i = 0; i < cntr->ep_count; i++) {
		if (cntr->eps[i] == ep) {
			cntr->eps[i] = cntr->eps[--cntr->ep_count];
			return;
		}
	}
}

/* Reading (the count or the errors) shows the application every change
 * so far: the fd drains. field points into cntr, read under the lock. */
static uint64_t cntr_progress_and_read(struct mrail_cntr *cntr,
				       const uint64_t *field)
{
	uint64_t v;

	mrail_domain_lock(cntr->domain);
	cntr_progress(cntr);
	v = *field;
	mrail_wait_drain(&cntr->wait);
	pthread_mutex_unlock(&cntr->domain->lock);
	return v;
}

static uint64_t mrail_cntr_read(struct fid_cntr *cntr_fid)
{
	struct mrail_cntr *cntr = container_of(cntr_fid, struct mrail_cntr, cntr_fid);

	return cntr_progress_and_read(cntr, &cntr->value);
}

static uint64_t mrail_cntr_readerr(struct fid_cntr *cntr_fid)
{
	struct mrail_cntr *cntr = container_of(cntr_fid, struct mrail_cntr, cntr_fid);

	return cntr_progress_and_read(cntr, &cntr->err);
}

void mrail_cntr_poll_values(struct mrail_cntr *cntr, uint64_t *value, uint64_t *err)
{
	cntr_progress(cntr);
	*value = cntr->value;
	*err = cntr->err;
}

void mrail_cntr_poll_ref(struct mrail_cntr *cntr, int delta)
{
	cntr->poll_refs += (size_t) delta;
}

/* Adds value to, or sets to value, the count or the error count; wakes
 * waiters either way. */
static int cntr_update(struct fid_cntr *cntr_fid, bool error_count, bool add,
		       uint64_t value)
{
	struct mrail_cntr *cntr = container_of(cntr_fid, struct mrail_cntr, cntr_fid);
	uint64_t *target = error_count ? &cntr->err : &cntr->value;

	mrail_domain_lock(cntr->domain);
	*target = add ? *target + value : value;
	cntr_moved(cntr);
	mrail_trigger_fire(cntr->domain);
	pthread_mutex_unlock(&cntr->domain->lock);
	return 0;
}

static int mrail_cntr_add(struct fid_cntr *cntr_fid, uint64_t value)
{
	return cntr_update(cntr_fid, false, true, value);
}

static int mrail_cntr_set(struct fid_cntr *cntr_fid, uint64_t value)
{
	return cntr_update(cntr_fid, false, false, value);
}

static int mrail_cntr_adderr(struct fid_cntr *cntr_fid, uint64_t value)
{
	return cntr_update(cntr_fid, true, true, value);
}

static int mrail_cntr_seterr(struct fid_cntr *cntr_fid, uint64_t value)
{
	return cntr_update(cntr_fid, true, false, value);
}

/*
 * Returns 0 once the count reaches threshold, -FI_EAVAIL as soon as the
 * error count differs from what it was on entry, -FI_ETIMEDOUT after
 * timeout ms (negative: never). The count is checked first, so a wait
 * whose threshold is met succeeds even if errors also happened.
 */
static int mrail_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold, int timeout)
{
	struct mrail_cntr *cntr = container_of(cntr_fid, struct mrail_cntr, cntr_fid);
	struct timespec deadline_buf;
	const struct timespec *deadline = mrail_deadline(&deadline_buf, timeout);
	uint64_t err_on_entry;
	int ret;

	mrail_domain_lock(cntr->domain);
	err_on_entry = cntr->err;
	for (;;) {
		cntr_progress(cntr);
		if (cntr->value >= threshold) {
			ret = 0;
			break;
		}
		if (cntr->err != err_on_entry) {
			ret = -FI_EAVAIL;
			break;
		}
		if (mrail_deadline_passed(deadline)) {
			ret = -FI_ETIMEDOUT;
			break;
		}
		if (cntr_needs_progress(cntr)) {
			/* Completions come only from progress: nap, then drive
			 * the endpoints again. With FI_PROGRESS_AUTO the
			 * progress thread's increments wake the sleep below. */
			pthread_mutex_unlock(&cntr->domain->lock);
			mrail_wait_nap();
			mrail_domain_lock(cntr->domain);
		} else {
			mrail_wait_sleep(&cntr->wait, &cntr->domain->lock, deadline);
		}
	}
	pthread_mutex_unlock(&cntr->domain->lock);
	return ret;
}

/*
 * Safe to block on the fd when nothing changed since the application last
 * read the counter, and no endpoint needs progress to move the counter:
 * with manual progress, while endpoints are bound only the application's
 * own calls can make the fd readable; with FI_PROGRESS_AUTO the progress
 * thread's increments make it readable.
 */
int mrail_cntr_trywait(struct fid *fid)
{
	struct mrail_cntr *cntr = mrail_cntr_from_fid(fid);
	int ret = 0;

	if (!cntr) {
		MRAIL_WARN(FI_LOG_CNTR, "fi_trywait: a counter that mrail did "
			   "not open\n");
		return -FI_EINVAL;
	}
	if (cntr->wait.obj != FI_WAIT_FD) {
		MRAIL_WARN(FI_LOG_CNTR, "fi_trywait: this counter has no native "
			   "wait object; open it with FI_WAIT_FD\n");
		return -FI_EINVAL;
	}
	mrail_domain_lock(cntr->domain);
	if (cntr_needs_progress(cntr) || cntr->wait.fd_signaled)
		ret = -FI_EAGAIN;
	pthread_mutex_unlock(&cntr->domain->lock);
	return ret;
}

static int mrail_cntr_control(struct fid *fid, int command, void *arg)
{
	struct mrail_cntr *cntr = container_of(fid, struct mrail_cntr, cntr_fid.fid);

	return mrail_wait_control(&cntr->wait, command, arg);
}

static int mrail_cntr_close(struct fid *fid)
{
	struct mrail_cntr *cntr = container_of(fid, struct mrail_cntr, cntr_fid.fid);
	struct mrail_domain *domain = cntr->domain;
	size_t users;

	mrail_domain_lock(domain);
	if (cntr->ep_count) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_CNTR, "fi_close: %zu endpoints still use this "
			   "counter; close them first\n", cntr->ep_count);
		return -FI_EBUSY;
	}
	if (cntr->poll_refs) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_CNTR, "fi_close: %zu poll sets still hold this "
			   "counter; fi_poll_del it first\n", cntr->poll_refs);
		return -FI_EBUSY;
	}
	if (cntr->mr_count) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_CNTR, "fi_close: %zu memory regions count their "
			   "remote accesses on this counter; close them first\n",
			   cntr->mr_count);
		return -FI_EBUSY;
	}
	users = mrail_trigger_cntr_users(domain, cntr);
	if (users) {
		pthread_mutex_unlock(&domain->lock);
		MRAIL_WARN(FI_LOG_CNTR, "fi_close: %zu triggered operations or "
			   "deferred work requests not completed yet arm on, count "
			   "on or set this counter; cancel them (fi_cancel, "
			   "FI_FLUSH_WORK), let them complete or close their "
			   "endpoints first\n", users);
		return -FI_EBUSY;
	}
	mrail_progress_forget(domain, &cntr->wait);
	domain->refs--;
	pthread_mutex_unlock(&domain->lock);
	mrail_wait_fini(&cntr->wait);
	free(cntr);
	return 0;
}

static int cntr_check_attr(const struct fi_cntr_attr *attr)
{
	if (attr->events != FI_CNTR_EVENTS_COMP) {
		MRAIL_WARN(FI_LOG_CNTR, "counter events %d are not supported; use "
			   "FI_CNTR_EVENTS_COMP\n", attr->events);
		return -FI_ENOSYS;
	}
	if (attr->flags) {
		MRAIL_WARN(FI_LOG_CNTR, "counter flags must be 0 (they are reserved), "
			   "not %#llx\n", (unsigned long long) attr->flags);
		return -FI_EINVAL;
	}
	return mrail_wait_obj_check(FI_LOG_CNTR, "counter", attr->wait_obj);
}

int mrail_cntr_open(struct fid_domain *domain_fid, struct fi_cntr_attr *attr,
		    struct fid_cntr **cntr_fid, void *context)
{
	struct mrail_domain *domain =
		container_of(domain_fid, struct mrail_domain, domain_fid);
	struct fi_cntr_attr defaults = { .events = FI_CNTR_EVENTS_COMP,
					 .wait_obj = FI_WAIT_NONE };
	struct mrail_cntr *cntr;
	int ret;

	mrail_corelib_thread_enter();
	if (!attr)
		attr = &defaults;
	ret = cntr_check_attr(attr);
	if (ret)
		return ret;
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr)
		return -FI_ENOMEM;
	ret = mrail_wait_init(&cntr->wait, attr->wait_obj);
	if (ret) {
		MRAIL_WARN(FI_LOG_CNTR, "cannot create the counter's wait object: "
			   "%s; raise the limit of open files (ulimit -n) or use "
			   "FI_WAIT_NONE\n", fi_strerror(-ret));
		goto err;
	}
	cntr->domain = domain;
	mrail_trig_queue_init(&cntr->trig_ops, 0);
	mrail_trig_queue_init(&cntr->deferred, 0);
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &mrail_cntr_fi_ops;
	cntr->cntr_fid.ops = &mrail_cntr_ops;

	mrail_domain_lock(domain);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	*cntr_fid = &cntr->cntr_fid;
	return 0;
err:
	free(cntr);
	return ret;
}

static struct fi_ops mrail_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_cntr_close,
	.bind = mrail_no_bind,
	.control = mrail_cntr_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static struct fi_ops_cntr mrail_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = mrail_cntr_read,
	.readerr = mrail_cntr_readerr,
	.add = mrail_cntr_add,
	.set = mrail_cntr_set,
	.wait = mrail_cntr_wait,
	.adderr = mrail_cntr_adderr,
	.seterr = mrail_cntr_seterr,
};
