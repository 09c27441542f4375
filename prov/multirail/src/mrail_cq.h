/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Completion queues (mrail_cq.c) and how a user operation completes,
 * counters (mrail_cntr.c), poll sets (mrail_poll.c), event queues
 * (mrail_eq.c), and the wait objects and deadlines they block with.
 */
#ifndef MRAIL_CQ_SRC_H
#define MRAIL_CQ_SRC_H

#include "mrail.h"

#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "idle.h"

struct mrail_cntr;

/* One user-level completion, successful or not, before it is formatted. */
struct mrail_cq_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
	size_t olen;
	int err;		/* 0, or a positive FI_E* value */
	int prov_errno;
	uint64_t key;		/* remote accesses: the region's key */
	/* FI_SOURCE_ERR: the raw address of a sender the AV does not hold
	 * (malloc'd, owned by the entry; err is FI_EADDRNOTAVAIL). */
	void *src_addr;
	size_t src_addrlen;
};

struct mrail_ep;

/*
 * CQ: mrail's own queue of user completions (rail completions never reach
 * the application). Reading it drives progress of the endpoints bound to it.
 */
struct mrail_cq {
	struct fid_cq cq_fid;
	struct mrail_domain *domain;
	enum fi_cq_format format;
	struct mrail_cq_entry *ring;
	size_t cap, head, count;
	struct mrail_ep *eps[16];	/* endpoints to progress on read */
	size_t ep_count;
	struct mrail_cq_entry err_entry;	/* last error handed to readerr */
	/* The source address the last FI_EADDRNOTAVAIL error lent the
	 * application (fi_cq(3): valid until the next fi_cq_readerr). */
	void *err_data;
	size_t poll_refs;		/* poll sets it is in (mrail_poll.c) */
	struct mrail_idle idle;		/* since when reads found nothing */
};

/* FI_MRAIL_SPIN_US (core/idle.h) in ns, or its default; -FI_ENODATA with a
 * warning naming the variable when it is malformed. */
int mrail_idle_env(uint64_t *spin_ns);
/* The wait objects CQs, counters and EQs support (none, unspec, an fd):
 * 0, or -FI_ENOSYS with a warning in subsys naming what ("CQ", "EQ",
 * "counter"), so all three refuse the others alike. */
int mrail_wait_obj_check(enum fi_log_subsys subsys, const char *what,
			 enum fi_wait_obj wait_obj);
int mrail_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		  struct fid_cq **cq, void *context);
/* Malformed or unexpected input from a peer (mrail_cq.c): an error entry
 * on the receive CQ, and a rate-limited warning; the summary at close
 * counts the warnings held back. */
void mrail_cq_report_bad_message(struct mrail_ep *ep, size_t rail, const char *why);
void mrail_cq_bad_message_summary(struct mrail_ep *ep);
/* Queues a completion (caller holds the domain lock). */
int mrail_cq_write(struct mrail_cq *cq, const struct mrail_cq_entry *entry);
int mrail_cq_attach_ep(struct mrail_cq *cq, struct mrail_ep *ep);
/* fi_poll: progresses cq's endpoints when it is empty; true when it holds
 * an entry (caller holds the domain lock). */
bool mrail_cq_poll_ready(struct mrail_cq *cq);
void mrail_cq_detach_ep(struct mrail_cq *cq, struct mrail_ep *ep);

/*
 * The one way a user operation completes: the counter bound for its kind
 * (entry->flags: FI_SEND, FI_RECV, FI_READ, FI_WRITE) counts it, success
 * or error, whatever FI_SELECTIVE_COMPLETION says; the CQ gets the entry
 * when report is true or the operation failed. Caller holds the lock.
 */
void mrail_user_complete(struct mrail_ep *ep, const struct mrail_cq_entry *entry,
			 bool report);

/* Counters a domain offers (domain_attr->cntr_cnt): mrail's own objects,
 * limited by memory only. */
#define MRAIL_CNTR_CNT 1024
/* Endpoints one counter progresses in fi_cntr_read and fi_cntr_wait. */
#define MRAIL_CNTR_MAX_EPS 16
/* Bytes one EQ event (or an EQ error's err_data) may carry. */
#define MRAIL_EQ_DATA_MAX 4096
/* Events an EQ holds for fi_eq_write when fi_eq_open's size is 0. */
#define MRAIL_EQ_DEFAULT_SIZE 256
/* What a blocking call sleeps between two rounds of endpoint progress. */
#define MRAIL_WAIT_POLL_NS (50 * 1000)

struct mrail_cntr;
struct mrail_eq;

/*
 * How a CQ, counter or EQ blocks: a condition variable on its owner's lock
 * for mrail's own blocking calls, and for FI_WAIT_FD an eventfd that is
 * readable from a signal until the object drains it (the object decides
 * when: once the application has seen what woke it).
 */
struct mrail_wait {
	enum fi_wait_obj obj;		/* as the application asked */
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	int fd;				/* FI_WAIT_FD: the eventfd, else -1 */
	bool fd_signaled;
	/* Held back by the progress thread (mrail_progress_wake). */
	bool wake_pending;
	struct mrail_wait *wake_prev, *wake_next;
};

static inline int mrail_wait_init(struct mrail_wait *wait, enum fi_wait_obj obj)
{
	pthread_condattr_t attr;
	int ret;

	wait->obj = obj;
	wait->fd_signaled = false;
	wait->fd = -1;
	wait->wake_pending = false;
	wait->wake_prev = wait->wake_next = NULL;
	if (obj == FI_WAIT_FD) {
		wait->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (wait->fd < 0)
			return -errno;
	}
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	ret = pthread_cond_init(&wait->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret) {
		if (wait->fd >= 0)
			close(wait->fd);
		return -ret;
	}
	return 0;
}

static inline void mrail_wait_fini(struct mrail_wait *wait)
{
	pthread_cond_destroy(&wait->cond);
	if (wait->fd >= 0)
		close(wait->fd);
	wait->fd = -1;
}

/* Makes the fd readable (owner's lock held). */
static inline void mrail_wait_signal_fd(struct mrail_wait *wait)
{
	if (wait->fd >= 0 && !wait->fd_signaled)
		wait->fd_signaled = !eventfd_write(wait->fd, 1);
}

/* Wakes mrail's waiters and makes the fd readable (owner's lock held). */
static inline void mrail_wait_signal(struct mrail_wait *wait)
{
	pthread_cond_broadcast(&wait->cond);
	mrail_wait_signal_fd(wait);
}

/* The fd is no longer readable (owner's lock held). */
static inline void mrail_wait_drain(struct mrail_wait *wait)
{
	eventfd_t value;

	if (wait->fd >= 0 && wait->fd_signaled) {
		(void) eventfd_read(wait->fd, &value);
		wait->fd_signaled = false;
	}
}

/* Sleeps on lock until signaled or deadline (NULL: none); may wake early. */
static inline void mrail_wait_sleep(struct mrail_wait *wait, pthread_mutex_t *lock,
				    const struct timespec *deadline)
{
	if (deadline)
		pthread_cond_timedwait(&wait->cond, lock, deadline);
	else
		pthread_cond_wait(&wait->cond, lock);
}

/* fi_control FI_GETWAIT and FI_GETWAITOBJ; -FI_ENOSYS for other commands. */
static inline int mrail_wait_control(const struct mrail_wait *wait, int command,
				     void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		if (wait->fd < 0)
			return -FI_ENODATA;
		*(int *) arg = wait->fd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *) arg = wait->obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* The strerror of CQs and EQs: prov_errno is a FI_E* code (mrail reports
 * rails' errors as such); copied into buf when the caller gives one. */
static inline const char *mrail_strerror(int prov_errno, char *buf, size_t len)
{
	const char *text = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	if (buf && len) {
		strncpy(buf, text, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return text;
}

/* The CLOCK_MONOTONIC time timeout ms from now; NULL for a negative
 * timeout (no deadline), else deadline. */
static inline const struct timespec *mrail_deadline(struct timespec *deadline,
						    int timeout)
{
	if (timeout < 0)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += timeout / 1000;
	deadline->tv_nsec += (long) (timeout % 1000) * 1000000;
	if (deadline->tv_nsec >= 1000000000) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000;
	}
	return deadline;
}

static inline bool mrail_deadline_passed(const struct timespec *deadline)
{
	struct timespec now;

	if (!deadline)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* The pause between two progress rounds of a blocking call: short, but a
 * sleep, so waiting never spins a core. */
static inline void mrail_wait_nap(void)
{
	struct timespec nap = { .tv_nsec = MRAIL_WAIT_POLL_NS };

	nanosleep(&nap, NULL);
}

/* Counters. Caller holds the domain lock for inc, inc_err, attach, detach. */
int mrail_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		    struct fid_cntr **cntr, void *context);
/* The mrail counter behind fid, or NULL (not a counter, or not mrail's). */
struct mrail_cntr *mrail_cntr_from_fid(struct fid *fid);
/* fi_poll: progresses what moves the counter, then its count and error
 * count (caller holds the domain lock). */
void mrail_cntr_poll_values(struct mrail_cntr *cntr, uint64_t *value, uint64_t *err);
/* A poll set takes (+1) or lets go of (-1) the counter, which refuses to
 * close while any holds it. */
void mrail_cntr_poll_ref(struct mrail_cntr *cntr, int delta);
int mrail_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		    struct fid_poll **pollset);
/* One operation completed successfully / in error: wakes waiters. */
void mrail_cntr_inc(struct mrail_cntr *cntr);
void mrail_cntr_inc_err(struct mrail_cntr *cntr);
/* A memory region counts its remote accesses on the counter
 * (fi_mr_bind): a counter held by regions refuses to close (-FI_EBUSY). */
void mrail_cntr_hold(struct mrail_cntr *cntr);
void mrail_cntr_release(struct mrail_cntr *cntr);
/* fi_cntr_read and fi_cntr_wait progress the endpoints attached; a counter
 * with endpoints attached refuses to close (-FI_EBUSY). -FI_ENOSPC beyond
 * MRAIL_CNTR_MAX_EPS. Attaching twice is attaching once. */
int mrail_cntr_attach_ep(struct mrail_cntr *cntr, struct mrail_ep *ep);
void mrail_cntr_detach_ep(struct mrail_cntr *cntr, struct mrail_ep *ep);
/* fi_trywait on one counter: 0 or -FI_EAGAIN (or -FI_EINVAL). */
int mrail_cntr_trywait(struct fid *fid);
struct mrail_domain *mrail_cntr_domain(const struct mrail_cntr *cntr);
/*
 * Triggers (lock held). Arms op on the counter's FI_TRIGGER queue (the
 * count) or, with_errors, its deferred-work queue (count + error count).
 * Returns 0 when it waits, 1 when the threshold is already reached (op is
 * then on domain->trig_ready), or a negative error. Whenever the counter
 * moves, ops that reach their threshold move to domain->trig_ready.
 * disarm takes a waiting op off again: 0, or -FI_ENOENT.
 */
int mrail_cntr_arm(struct mrail_cntr *cntr, struct mrail_trig_op *op,
		   uint64_t threshold, bool with_errors);
int mrail_cntr_disarm(struct mrail_cntr *cntr, struct mrail_trig_op *op,
		      bool with_errors);

/* CQ wait objects (the rest of the CQ is declared above). */
struct mrail_cq *mrail_cq_from_fid(struct fid *fid);
int mrail_cq_trywait(struct fid *fid);

/*
 * Event queues belong to the fabric and have a lock of their own, which
 * nests inside a domain lock: the write functions may be called with a
 * domain lock held. They never fail for lack of room (provider events are
 * not dropped); they return 0, -FI_EINVAL (more than MRAIL_EQ_DATA_MAX
 * bytes, flags other than 0) or -FI_ENOMEM.
 */
int mrail_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		  struct fid_eq **eq, void *context);
struct mrail_eq *mrail_eq_from_fid(struct fid *fid);
/* An object binds the EQ: fi_close(eq) returns -FI_EBUSY until detached. */
void mrail_eq_attach(struct mrail_eq *eq);
void mrail_eq_detach(struct mrail_eq *eq);
/* A successful asynchronous event (FI_AV_COMPLETE, FI_MR_COMPLETE,
 * FI_JOIN_COMPLETE...); buf starts with a struct fi_eq_entry. */
int mrail_eq_write_event(struct mrail_eq *eq, uint32_t event, const void *buf,
			 size_t len, uint64_t flags);
/* A failed one, for fi_eq_readerr: err is a positive FI_E* value;
 * err_data (may be NULL) is copied. */
int mrail_eq_write_error(struct mrail_eq *eq, fid_t fid, void *context,
			 uint64_t data, int err, int prov_errno,
			 const void *err_data, size_t err_data_size);
int mrail_eq_trywait(struct fid *fid);

#endif /* MRAIL_CQ_SRC_H */
