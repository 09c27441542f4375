/*
 * Completion queue: user completions, one per user operation, formatted on
 * read in whichever fi_cq_format the application chose.
 */
#include "mrail.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	return 0;
}

static void cq_progress(struct mrail_cq *cq)
{
	size_t i;

	for (i = 0; i < cq->ep_count; i++)
		mrail_ep_progress(cq->eps[i]);
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
	if (n)
		return (ssize_t) n;
	return cq->count ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t mrail_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				 fi_addr_t *src_addr)
{
	struct mrail_cq *cq = container_of(cq_fid, struct mrail_cq, cq_fid);
	ssize_t ret;

	pthread_mutex_lock(&cq->domain->lock);
	ret = cq_read_locked(cq, buf, count, src_addr);
	pthread_mutex_unlock(&cq->domain->lock);
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

	pthread_mutex_lock(&cq->domain->lock);
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
	/* mrail has no provider-specific error data; err_data_size 0 says so
	 * to applications using the 1.5+ ABI. */
	buf->err_data_size = 0;
	cq->head = (cq->head + 1) % cq->cap;
	cq->count--;
	ret = 1;
out:
	pthread_mutex_unlock(&cq->domain->lock);
	return ret;
}

/* Waits by polling with short sleeps: mrail has no wait object of its own
 * yet, and sleeping keeps processes that outnumber the cores from starving
 * the one they wait for. */
static ssize_t mrail_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				  fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct timespec start, now, nap = { .tv_nsec = 50 * 1000 };
	ssize_t ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ret = mrail_cq_readfrom(cq_fid, buf, count, src_addr);
		if (ret != -FI_EAGAIN)
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timeout >= 0 && (now.tv_sec - start.tv_sec) * 1000 +
				    (now.tv_nsec - start.tv_nsec) / 1000000 >= timeout)
			return -FI_EAGAIN;
		nanosleep(&nap, NULL);
	}
}

static ssize_t mrail_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			      const void *cond, int timeout)
{
	return mrail_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int mrail_cq_no_signal(struct fid_cq *cq_fid)
{
	return -FI_ENOSYS;
}

static const char *mrail_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				     const void *err_data, char *buf, size_t len)
{
	const char *text = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	if (buf && len) {
		strncpy(buf, text, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return text;
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

	if (cq->ep_count)
		return -FI_EBUSY;
	pthread_mutex_lock(&cq->domain->lock);
	cq->domain->refs--;
	pthread_mutex_unlock(&cq->domain->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

static struct fi_ops mrail_cq_fi_ops;
static struct fi_ops_cq mrail_cq_ops;

int mrail_cq_open(struct fid_domain *domain_fid, struct fi_cq_attr *attr,
		  struct fid_cq **cq_fid, void *context)
{
	struct mrail_domain *domain =
		container_of(domain_fid, struct mrail_domain, domain_fid);
	struct mrail_cq *cq;

	if (attr->format > FI_CQ_FORMAT_TAGGED)
		return -FI_ENOSYS;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) {
		MRAIL_WARN(FI_LOG_CQ, "CQ wait object %d is not supported; use "
			   "FI_WAIT_NONE or FI_WAIT_UNSPEC\n", attr->wait_obj);
		return -FI_ENOSYS;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->domain = domain;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->cap = attr->size ? attr->size : 1024;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return -FI_ENOMEM;
	}
	pthread_mutex_lock(&domain->lock);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &mrail_cq_fi_ops;
	cq->cq_fid.ops = &mrail_cq_ops;
	*cq_fid = &cq->cq_fid;
	return 0;
}

static struct fi_ops mrail_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_cq_close,
	.bind = mrail_no_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
};

static struct fi_ops_cq mrail_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = mrail_cq_read,
	.readfrom = mrail_cq_readfrom,
	.readerr = mrail_cq_readerr,
	.sread = mrail_cq_sread,
	.sreadfrom = mrail_cq_sreadfrom,
	.signal = mrail_cq_no_signal,
	.strerror = mrail_cq_strerror,
};
