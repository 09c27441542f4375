/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Poll sets (fi_poll(3)): one call progresses several CQs and counters of a
 * domain and says which of them have something new.
 *
 * A CQ is reported while it holds an entry; a counter when its count or
 * error count differs from what this poll set last saw (fi_poll may report
 * a change the application made itself: fi_poll(3) allows false positives,
 * never a missed event).
 */
#include "mrail.h"
#include "mrail_cq.h"

#include <stdlib.h>

#include <utlist.h>

struct mrail_poll_member {
	struct mrail_poll_member *prev, *next;
	struct fid *fid;
	struct mrail_cq *cq;		/* one of cq and cntr is set */
	struct mrail_cntr *cntr;
	uint64_t seen_value, seen_err;
};

struct mrail_poll {
	struct fid_poll poll_fid;
	struct mrail_domain *domain;
	struct mrail_poll_member *members;
};

static struct fi_ops mrail_poll_fi_ops;
static struct fi_ops_poll mrail_poll_ops;

static struct mrail_poll_member *poll_find(struct mrail_poll *set, const struct fid *fid)
{
	struct mrail_poll_member *member;

	DL_FOREACH(set->members, member) {
		if (member->fid == fid)
			return member;
	}
	return NULL;
}

static int mrail_poll_add(struct fid_poll *poll_fid, struct fid *event_fid,
			  uint64_t flags)
{
	struct mrail_poll *set = container_of(poll_fid, struct mrail_poll, poll_fid);
	struct mrail_poll_member *member;
	struct mrail_cq *cq = mrail_cq_from_fid(event_fid);
	struct mrail_cntr *cntr = mrail_cntr_from_fid(event_fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if ((!cq && !cntr) ||
	    (cq ? cq->domain : mrail_cntr_domain(cntr)) != set->domain) {
		MRAIL_WARN(FI_LOG_DOMAIN, "fi_poll_add: only mrail CQs and counters "
			   "of the poll set's own domain can join it\n");
		return -FI_EINVAL;
	}
	member = calloc(1, sizeof(*member));
	if (!member)
		return -FI_ENOMEM;
	member->fid = event_fid;
	member->cq = cq;
	member->cntr = cntr;

	mrail_domain_lock(set->domain);
	if (poll_find(set, event_fid)) {
		ret = -FI_EALREADY;
		free(member);
		goto out;
	}
	if (cq) {
		cq->poll_refs++;
	} else {
		mrail_cntr_poll_ref(cntr, 1);
		mrail_cntr_poll_values(cntr, &member->seen_value, &member->seen_err);
	}
	DL_APPEND(set->members, member);
out:
	pthread_mutex_unlock(&set->domain->lock);
	return ret;
}

static int mrail_poll_del(struct fid_poll *poll_fid, struct fid *event_fid,
			  uint64_t flags)
{
	struct mrail_poll *set = container_of(poll_fid, struct mrail_poll, poll_fid);
	struct mrail_poll_member *member;

	if (flags)
		return -FI_EBADFLAGS;
	mrail_domain_lock(set->domain);
	member = poll_find(set, event_fid);
	if (member) {
		DL_DELETE(set->members, member);
		if (member->cq)
			member->cq->poll_refs--;
		else
			mrail_cntr_poll_ref(member->cntr, -1);
	}
	pthread_mutex_unlock(&set->domain->lock);
	if (!member)
		return -FI_ENOENT;
	free(member);
	return 0;
}

/* True when the member has something the application has not seen. */
static bool poll_member_ready(struct mrail_poll_member *member)
{
	uint64_t value, err;

	if (member->cq)
		return mrail_cq_poll_ready(member->cq);
	mrail_cntr_poll_values(member->cntr, &value, &err);
	if (value == member->seen_value && err == member->seen_err)
		return false;
	member->seen_value = value;
	member->seen_err = err;
	return true;
}

static int mrail_poll_poll(struct fid_poll *poll_fid, void **context, int count)
{
	struct mrail_poll *set = container_of(poll_fid, struct mrail_poll, poll_fid);
	struct mrail_poll_member *member;
	int found = 0;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	mrail_domain_lock(set->domain);
	DL_FOREACH(set->members, member) {
		if (found == count)
			break;
		if (poll_member_ready(member))
			context[found++] = member->fid->context;
	}
	pthread_mutex_unlock(&set->domain->lock);
	return found;
}

static int mrail_poll_close(struct fid *fid)
{
	struct mrail_poll *set = container_of(fid, struct mrail_poll, poll_fid.fid);

	mrail_domain_lock(set->domain);
	if (set->members) {
		pthread_mutex_unlock(&set->domain->lock);
		MRAIL_WARN(FI_LOG_DOMAIN, "fi_close: the poll set still holds CQs "
			   "or counters; fi_poll_del them first\n");
		return -FI_EBUSY;
	}
	set->domain->refs--;
	pthread_mutex_unlock(&set->domain->lock);
	free(set);
	return 0;
}

int mrail_poll_open(struct fid_domain *domain_fid, struct fi_poll_attr *attr,
		    struct fid_poll **pollset)
{
	struct mrail_domain *domain = container_of(domain_fid, struct mrail_domain,
						   domain_fid);
	struct mrail_poll *set;

	/* fi_poll(3): the flags are reserved and must be 0. */
	if (attr && attr->flags)
		return -FI_EINVAL;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -FI_ENOMEM;
	set->domain = domain;
	set->poll_fid.fid.fclass = FI_CLASS_POLL;
	set->poll_fid.fid.ops = &mrail_poll_fi_ops;
	set->poll_fid.ops = &mrail_poll_ops;

	mrail_domain_lock(domain);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	*pollset = &set->poll_fid;
	return 0;
}

static struct fi_ops mrail_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_poll_close,
	.bind = mrail_no_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
};

static struct fi_ops_poll mrail_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = mrail_poll_poll,
	.poll_add = mrail_poll_add,
	.poll_del = mrail_poll_del,
};
