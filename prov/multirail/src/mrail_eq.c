/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Event queue: events the application writes (fi_eq_write, with FI_WRITE)
 * and events the provider writes for asynchronous control operations
 * (mrail_eq_write_event, mrail_eq_write_error). Errors wait in a queue of
 * their own, as fi_eq(3) describes: while one is queued, reads return
 * -FI_EAVAIL until fi_eq_readerr takes it.
 *
 * An EQ belongs to the fabric, not to a domain, so it has its own lock;
 * the provider may write to it while holding a domain lock (never the
 * other way round). fi_eq_sread sleeps on a condition variable; with
 * FI_WAIT_FD an eventfd is readable while anything is queued.
 */
#include "mrail.h"
#include "mrail_cq.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

struct mrail_eq_event {
	struct mrail_eq_event *prev, *next;
	uint32_t event;
	struct fi_eq_err_entry err;	/* errors: all but err_data(_size) */
	size_t len;			/* bytes in data: the event, or err_data */
	uint8_t data[];
};

struct mrail_eq {
	struct fid_eq eq_fid;
	pthread_mutex_t lock;
	struct mrail_wait wait;		/* cond on lock */
	uint64_t flags;			/* fi_eq_attr's: FI_WRITE, FI_AFFINITY */
	uint32_t api_version;		/* the fabric's: err_data rules */
	size_t size;			/* events fi_eq_write may queue */
	size_t event_count;
	struct mrail_eq_event *events;	/* oldest first */
	struct mrail_eq_event *errors;	/* the error queue, oldest first */
	/* The error readerr handed out last: its err_data stays valid for
	 * the application until the next read. */
	struct mrail_eq_event *last_error;
	size_t binds;			/* objects bound to the EQ */
};

static struct fi_ops mrail_eq_fi_ops;
static struct fi_ops_eq mrail_eq_ops;

struct mrail_eq *mrail_eq_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EQ || fid->ops != &mrail_eq_fi_ops)
		return NULL;
	return container_of(fid, struct mrail_eq, eq_fid.fid);
}

void mrail_eq_attach(struct mrail_eq *eq)
{
	pthread_mutex_lock(&eq->lock);
	eq->binds++;
	pthread_mutex_unlock(&eq->lock);
}

void mrail_eq_detach(struct mrail_eq *eq)
{
	pthread_mutex_lock(&eq->lock);
	eq->binds--;
	pthread_mutex_unlock(&eq->lock);
}

static struct mrail_eq_event *eq_event_alloc(uint32_t event, const void *data,
					     size_t len)
{
	struct mrail_eq_event *entry;

	entry = calloc(1, sizeof(*entry) + len);
	if (!entry)
		return NULL;
	entry->event = event;
	entry->len = len;
	if (len)
		memcpy(entry->data, data, len);
	return entry;
}

/* Queues entry as an event or an error (lock held) and wakes waiters. */
static void eq_queue(struct mrail_eq *eq, struct mrail_eq_event *entry, bool error)
{
	if (error) {
		DL_APPEND(eq->errors, entry);
	} else {
		DL_APPEND(eq->events, entry);
		eq->event_count++;
	}
	mrail_wait_signal(&eq->wait);
}

static void eq_drain_if_empty(struct mrail_eq *eq)
{
	if (!eq->events && !eq->errors)
		mrail_wait_drain(&eq->wait);
}

/* A new read begins: the err_data readerr lent out before is gone. */
static void eq_forget_last_error(struct mrail_eq *eq)
{
	free(eq->last_error);
	eq->last_error = NULL;
}

static int eq_check_data(const void *buf, size_t len)
{
	if (len > MRAIL_EQ_DATA_MAX || (len && !buf))
		return -FI_EINVAL;
	return 0;
}

int mrail_eq_write_event(struct mrail_eq *eq, uint32_t event, const void *buf,
			 size_t len, uint64_t flags)
{
	struct mrail_eq_event *entry;

	if (flags || eq_check_data(buf, len))
		return -FI_EINVAL;
	entry = eq_event_alloc(event, buf, len);
	if (!entry)
		return -FI_ENOMEM;
	pthread_mutex_lock(&eq->lock);
	eq_queue(eq, entry, false);
	pthread_mutex_unlock(&eq->lock);
	return 0;
}

int mrail_eq_write_error(struct mrail_eq *eq, fid_t fid, void *context,
			 uint64_t data, int err, int prov_errno,
			 const void *err_data, size_t err_data_size)
{
	struct mrail_eq_event *entry;

	if (err <= 0 || eq_check_data(err_data, err_data_size))
		return -FI_EINVAL;
	entry = eq_event_alloc(0, err_data, err_data_size);
	if (!entry)
		return -FI_ENOMEM;
	entry->err.fid = fid;
	entry->err.context = context;
	entry->err.data = data;
	entry->err.err = err;
	entry->err.prov_errno = prov_errno;
	pthread_mutex_lock(&eq->lock);
	eq_queue(eq, entry, true);
	pthread_mutex_unlock(&eq->lock);
	return 0;
}

static ssize_t mrail_eq_write(struct fid_eq *eq_fid, uint32_t event, const void *buf,
			      size_t len, uint64_t flags)
{
	struct mrail_eq *eq = container_of(eq_fid, struct mrail_eq, eq_fid);
	struct mrail_eq_event *entry;
	ssize_t ret = (ssize_t) len;

	if (!(eq->flags & FI_WRITE)) {
		MRAIL_WARN(FI_LOG_EQ, "fi_eq_write: open the EQ with FI_WRITE in "
			   "fi_eq_attr.flags to write events to it\n");
		return -FI_EINVAL;
	}
	if (flags)
		return -FI_EBADFLAGS;
	if (eq_check_data(buf, len)) {
		MRAIL_WARN(FI_LOG_EQ, "fi_eq_write: an event carries 0 to %d bytes "
			   "(and needs a buffer), not %zu\n", MRAIL_EQ_DATA_MAX, len);
		return -FI_EINVAL;
	}
	entry = eq_event_alloc(event, buf, len);
	if (!entry)
		return -FI_ENOMEM;
	pthread_mutex_lock(&eq->lock);
	if (eq->event_count >= eq->size) {
		/* Full: the application reads before it writes more. */
		free(entry);
		ret = -FI_EAGAIN;
	} else {
		eq_queue(eq, entry, false);
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* fi_eq_read with the lock held. */
static ssize_t eq_read_locked(struct mrail_eq *eq, uint32_t *event, void *buf,
			      size_t len, uint64_t flags)
{
	struct mrail_eq_event *entry;
	ssize_t ret;

	eq_forget_last_error(eq);
	if (eq->errors)
		return -FI_EAVAIL;
	entry = eq->events;
	if (!entry)
		return -FI_EAGAIN;
	/* Too small a buffer leaves the event queued for a larger one. */
	if (len < entry->len)
		return -FI_ETOOSMALL;
	if (entry->len && !buf)
		return -FI_EINVAL;
	if (event)
		*event = entry->event;
	if (entry->len)
		memcpy(buf, entry->data, entry->len);
	ret = (ssize_t) entry->len;
	if (!(flags & FI_PEEK)) {
		DL_DELETE(eq->events, entry);
		eq->event_count--;
		free(entry);
		eq_drain_if_empty(eq);
	}
	return ret;
}

static ssize_t mrail_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			     size_t len, uint64_t flags)
{
	struct mrail_eq *eq = container_of(eq_fid, struct mrail_eq, eq_fid);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	ret = eq_read_locked(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* Waits up to timeout ms (negative: forever); -FI_EAGAIN on timeout. */
static ssize_t mrail_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			      size_t len, int timeout, uint64_t flags)
{
	struct mrail_eq *eq = container_of(eq_fid, struct mrail_eq, eq_fid);
	struct timespec deadline_buf;
	const struct timespec *deadline = mrail_deadline(&deadline_buf, timeout);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	for (;;) {
		ret = eq_read_locked(eq, event, buf, len, flags);
		if (ret != -FI_EAGAIN || mrail_deadline_passed(deadline))
			break;
		mrail_wait_sleep(&eq->wait, &eq->lock, deadline);
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/*
 * err_data follows fi_eq(3): with err_data_size 0 on input (or an
 * application of the 1.4 API or older) err_data points to mrail's copy,
 * valid until the next read of the EQ; otherwise up to err_data_size bytes
 * are copied into the application's buffer, err_data_size saying how many.
 */
static ssize_t mrail_eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
				uint64_t flags)
{
	struct mrail_eq *eq = container_of(eq_fid, struct mrail_eq, eq_fid);
	bool old_abi = eq->api_version < FI_VERSION(1, 5);
	struct mrail_eq_event *entry;
	struct fi_eq_err_entry out;
	bool lend;
	ssize_t ret = sizeof(*buf);

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	eq_forget_last_error(eq);
	entry = eq->errors;
	if (!entry) {
		ret = -FI_EAGAIN;
		goto out;
	}
	out = entry->err;
	lend = old_abi || !buf->err_data_size;
	if (lend) {
		out.err_data = entry->len ? entry->data : NULL;
		out.err_data_size = entry->len;
	} else {
		out.err_data = buf->err_data;
		out.err_data_size = entry->len < buf->err_data_size ?
				    entry->len : buf->err_data_size;
		if (out.err_data_size)
			memcpy(out.err_data, entry->data, out.err_data_size);
	}
	/* The 1.4 API's entry ends before err_data_size. */
	memcpy(buf, &out, old_abi ? offsetof(struct fi_eq_err_entry, err_data_size) :
				    sizeof(out));
	if (!(flags & FI_PEEK)) {
		DL_DELETE(eq->errors, entry);
		if (lend)
			eq->last_error = entry;
		else
			free(entry);
		eq_drain_if_empty(eq);
	}
out:
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static const char *mrail_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				     const void *err_data, char *buf, size_t len)
{
	return mrail_strerror(prov_errno, buf, len);
}

/* Safe to block on the fd when nothing is queued. */
int mrail_eq_trywait(struct fid *fid)
{
	struct mrail_eq *eq = mrail_eq_from_fid(fid);
	int ret = 0;

	if (!eq) {
		MRAIL_WARN(FI_LOG_EQ, "fi_trywait: an EQ that mrail did "
			   "not open\n");
		return -FI_EINVAL;
	}
	if (eq->wait.obj != FI_WAIT_FD) {
		MRAIL_WARN(FI_LOG_EQ, "fi_trywait: this EQ has no native wait "
			   "object; open it with FI_WAIT_FD\n");
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&eq->lock);
	if (eq->events || eq->errors)
		ret = -FI_EAGAIN;
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static int mrail_eq_control(struct fid *fid, int command, void *arg)
{
	struct mrail_eq *eq = container_of(fid, struct mrail_eq, eq_fid.fid);

	return mrail_wait_control(&eq->wait, command, arg);
}

static void eq_free_list(struct mrail_eq_event **list)
{
	struct mrail_eq_event *entry, *tmp;

	DL_FOREACH_SAFE(*list, entry, tmp) {
		DL_DELETE(*list, entry);
		free(entry);
	}
}

static int mrail_eq_close(struct fid *fid)
{
	struct mrail_eq *eq = container_of(fid, struct mrail_eq, eq_fid.fid);

	pthread_mutex_lock(&eq->lock);
	if (eq->binds) {
		pthread_mutex_unlock(&eq->lock);
		MRAIL_WARN(FI_LOG_EQ, "fi_close: objects bound to this EQ: %zu; "
			   "close them first\n", eq->binds);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&eq->lock);
	/* Events still queued are lost, as fi_eq(3) says. */
	eq_free_list(&eq->events);
	eq_free_list(&eq->errors);
	eq_forget_last_error(eq);
	mrail_wait_fini(&eq->wait);
	pthread_mutex_destroy(&eq->lock);
	free(eq);
	return 0;
}

static int eq_check_attr(const struct fi_eq_attr *attr)
{
	if (attr->flags & ~(FI_WRITE | FI_AFFINITY)) {
		MRAIL_WARN(FI_LOG_EQ, "EQ flags %#llx are not supported; use "
			   "FI_WRITE and FI_AFFINITY only\n", (unsigned long long)
			   (attr->flags & ~(FI_WRITE | FI_AFFINITY)));
		return -FI_EINVAL;
	}
	return mrail_wait_obj_check(FI_LOG_EQ, "EQ", attr->wait_obj);
}

int mrail_eq_open(struct fid_fabric *fabric_fid, struct fi_eq_attr *attr,
		  struct fid_eq **eq_fid, void *context)
{
	struct fi_eq_attr defaults = { .wait_obj = FI_WAIT_NONE };
	struct mrail_eq *eq;
	int ret;

	if (!attr)
		attr = &defaults;
	ret = eq_check_attr(attr);
	if (ret)
		return ret;
	if (attr->flags & FI_AFFINITY)
		MRAIL_INFO(FI_LOG_EQ, "EQ signaling_vector %d ignored: mrail has no "
			   "interrupts to steer\n", attr->signaling_vector);
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = mrail_wait_init(&eq->wait, attr->wait_obj);
	if (ret) {
		MRAIL_WARN(FI_LOG_EQ, "cannot create the EQ's wait object: %s; "
			   "raise the limit of open files (ulimit -n) or use "
			   "FI_WAIT_NONE\n", fi_strerror(-ret));
		free(eq);
		return ret;
	}
	pthread_mutex_init(&eq->lock, NULL);
	eq->flags = attr->flags;
	eq->size = attr->size ? attr->size : MRAIL_EQ_DEFAULT_SIZE;
	eq->api_version = fabric_fid->api_version;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &mrail_eq_fi_ops;
	eq->eq_fid.ops = &mrail_eq_ops;
	*eq_fid = &eq->eq_fid;
	return 0;
}

static struct fi_ops mrail_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_eq_close,
	.bind = mrail_no_bind,
	.control = mrail_eq_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static struct fi_ops_eq mrail_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = mrail_eq_read,
	.readerr = mrail_eq_readerr,
	.write = mrail_eq_write,
	.sread = mrail_eq_sread,
	.strerror = mrail_eq_strerror,
};
