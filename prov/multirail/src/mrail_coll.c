/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Collectives (fi_collective(3)): fi_join_collective, fi_barrier,
 * fi_broadcast, fi_allreduce and fi_query_collective.
 *
 * A group is the members of an AV set ranked by their sender keys, so
 * every member computes the same ranks and the same group id (core/coll.c).
 * Each operation on a group has the next sequence number (the join is 0):
 * members call a group's collectives in the same order, as fi_collective(3)
 * requires, so the numbers agree. An operation is a core/coll.c instance:
 * the application starts it once; COLL signals from peers bump its step
 * counters and the steps they satisfy fire from whatever receives them,
 * the progress thread under FI_PROGRESS_AUTO (no application call needed)
 * or any progress call in manual mode. Signals for an operation not
 * started here yet (a late process) are counted and kept in its instance;
 * signals for a group not joined here yet wait, bounded, until it is.
 *
 * Barrier traffic does not queue behind bulk data: a COLL signal spends no
 * flow-control credit, takes any free transmit buffer of the rail the
 * multiplexing policy picks (large messages move by rendezvous reads and
 * hold no transmit buffers), and one that finds none waits in the
 * endpoint's own signal queue, which progress empties before the
 * rendezvous and control queues.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_ep.h"
#include "mrail_coll.h"
#include "mrail_msg.h"
#include "coll.h"

#include <endian.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

/* Groups one endpoint may have joined at a time. */
#define MRAIL_COLL_MAX_GROUPS 256
/* Signals for groups not joined here yet that an endpoint keeps. */
#define MRAIL_COLL_ORPHAN_MAX 4096
/* How far ahead of this member a peer's operation may be (a broadcast
 * root does not wait): a signal further ahead is refused. */
#define MRAIL_COLL_AHEAD_MAX 1024

struct mrail_coll_op {
	struct mrail_coll_op *next;
	void *context;
	void *result;		/* where the value goes: NULL for a barrier */
	bool is_join;
	bool report;
	struct mrail_coll_inst inst;
};

struct mrail_coll_group {
	struct fid_mc mc_fid;
	struct mrail_domain *domain;
	struct mrail_ep *ep;	/* NULL once the endpoint closed */
	size_t slot;		/* in coll->groups */
	uint64_t id;
	uint64_t base_id;	/* of the membership alone (join counting) */
	uint32_t n, rank;
	fi_addr_t *members;	/* by rank */
	enum mrail_barrier_alg alg;
	uint32_t degree;
	bool joined;
	uint64_t next_seq;	/* the next operation the application starts */
	struct mrail_coll_op *ops;	/* started or signalled, not done */
};

/* A signal for a group not joined here yet, or one waiting for a buffer. */
struct mrail_coll_msg {
	struct mrail_coll_msg *next;
	fi_addr_t peer;
	size_t len;
	uint8_t data[];		/* orphan: the COLL payload; pending: the
				 * whole encoded message */
};

/* How many times this endpoint joined one membership. */
struct mrail_coll_joins {
	struct mrail_coll_joins *next;
	uint64_t base_id;
	uint64_t count;
};

struct mrail_coll_ep {
	struct mrail_coll_group *groups[MRAIL_COLL_MAX_GROUPS];
	struct mrail_coll_msg *orphans;
	size_t orphan_count;
	struct mrail_coll_joins *joins;
};

static struct mrail_coll_ep *coll_ep(struct mrail_ep *ep)
{
	if (!ep->coll)
		ep->coll = calloc(1, sizeof(*ep->coll));
	return ep->coll;
}

/* ---- sending signals ---- */

/* core/coll.c's send: one signal to rank peer of the group. */
static int signal_send(void *arg, uint32_t peer,
		       const struct mrail_wire_coll *desc, const void *data)
{
	struct mrail_coll_group *group = arg;
	struct mrail_ep *ep = group->ep;
	uint8_t msg[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_COLL_LEN +
		    MRAIL_WIRE_COLL_MAX_DATA];
	struct mrail_wire_hdr hdr = {
		.sender = ep->self_key,
		.op = MRAIL_OP_COLL,
		.payload_len = MRAIL_WIRE_COLL_LEN + desc->data_len,
	};
	size_t len = MRAIL_WIRE_HDR_LEN + hdr.payload_len;
	int ret;

	if (mrail_wire_hdr_encode(&hdr, msg, MRAIL_WIRE_HDR_LEN) < 0 ||
	    mrail_wire_coll_encode(desc, msg + MRAIL_WIRE_HDR_LEN,
				   MRAIL_WIRE_COLL_LEN) < 0)
		return -FI_EINVAL;
	if (desc->data_len)
		memcpy(msg + MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_COLL_LEN, data,
		       desc->data_len);
	/* Numbered in the stream of the peer's canonical entry, which is
	 * the one the receiver numbers it in. */
	ret = mrail_ctrl_post(ep, MRAIL_LANE_URGENT,
			      mrail_av_canon(ep->av, group->members[peer]),
			      MRAIL_ANY_RAIL, msg, len);
	if (ret)
		MRAIL_WARN(FI_LOG_EP_DATA, "collective group %#" PRIx64 ": cannot "
			   "signal rank %u: %s\n", group->id, peer,
			   fi_strerror(-ret));
	return ret;
}

/* ---- operations ---- */

static struct mrail_coll_op *op_find(struct mrail_coll_group *group,
				     uint64_t seq)
{
	struct mrail_coll_op *op;

	LL_FOREACH(group->ops, op) {
		if (op->inst.seq == seq)
			return op;
	}
	return NULL;
}

static struct mrail_coll_op *op_get(struct mrail_coll_group *group,
				    uint64_t seq)
{
	struct mrail_coll_op *op = op_find(group, seq);

	if (op)
		return op;
	op = calloc(1, sizeof(*op));
	if (!op)
		return NULL;
	mrail_coll_inst_init(&op->inst, group->id, seq);
	LL_APPEND(group->ops, op);
	return op;
}

static void op_free(struct mrail_coll_group *group, struct mrail_coll_op *op)
{
	LL_DELETE(group->ops, op);
	mrail_coll_inst_fini(&op->inst);
	free(op);
}

/* The operation is done here: its value, then its completion (an EQ
 * event for the join, else a CQ entry with FI_COLLECTIVE and the
 * endpoint's FI_WRITE counter, as for an atomic). */
static void op_complete(struct mrail_coll_group *group, struct mrail_coll_op *op)
{
	struct mrail_ep *ep = group->ep;
	struct mrail_cq_entry entry = {
		.op_context = op->context,
		.flags = FI_COLLECTIVE,
		.src = FI_ADDR_NOTAVAIL,
	};
	struct fi_eq_entry event = {
		.fid = &group->mc_fid.fid,
		.context = op->context,
	};
	int err = op->inst.err;

	if (err)
		MRAIL_WARN(FI_LOG_EP_DATA, "collective group %#" PRIx64
			   " operation %" PRIu64 ": a peer's signal did not fit "
			   "it (do all members call the same collectives in the "
			   "same order?)\n", group->id, op->inst.seq);
	if (op->is_join) {
		group->joined = !err;
		if (!ep->eq)
			;
		else if (err)
			mrail_eq_write_error(ep->eq, &group->mc_fid.fid, op->context,
					     0, err, -err, NULL, 0);
		else
			mrail_eq_write_event(ep->eq, FI_JOIN_COMPLETE, &event,
					     sizeof(event), 0);
		op_free(group, op);
		return;
	}
	if (op->result && !err && op->inst.data_len)
		memcpy(op->result, op->inst.acc, op->inst.data_len);
	entry.err = err;
	entry.prov_errno = -err;
	entry.len = op->inst.data_len;
	if (ep->write_cntr) {
		if (err)
			mrail_cntr_inc_err(ep->write_cntr);
		else
			mrail_cntr_inc(ep->write_cntr);
	}
	if (ep->tx_cq && (op->report || err))
		mrail_cq_write(ep->tx_cq, &entry);
	op_free(group, op);
}

static void op_run(struct mrail_coll_group *group, struct mrail_coll_op *op)
{
	if (mrail_coll_inst_run(&op->inst, signal_send, group))
		op_complete(group, op);
}

/* A signal (payload already framed by the header decoder) for group. */
static void group_rx(struct mrail_coll_group *group, size_t rail,
		     const uint8_t *payload, size_t len)
{
	struct mrail_wire_coll desc;
	struct mrail_coll_op *op;
	char err[MRAIL_ERR_MAX];
	const uint8_t *data;

	if (mrail_wire_coll_decode(payload, len, &desc, &data, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a collective "
			   "signal: %s\n", rail + 1, err);
		return;
	}
	op = op_find(group, desc.seq);
	if (!op && (desc.seq < group->next_seq ||
		    desc.seq - group->next_seq >= MRAIL_COLL_AHEAD_MAX)) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a signal for "
			   "operation %" PRIu64 " of collective group %#" PRIx64
			   ", which is %s\n", rail + 1, desc.seq, group->id,
			   desc.seq < group->next_seq ? "over here already" :
			   "impossibly far ahead");
		return;
	}
	op = op ? op : op_get(group, desc.seq);
	if (!op) {
		MRAIL_WARN(FI_LOG_EP_DATA, "out of memory: dropped a collective "
			   "signal\n");
		return;
	}
	if (mrail_coll_inst_arrive(&op->inst, &desc, data, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a signal of "
			   "collective group %#" PRIx64 ": %s\n", rail + 1,
			   group->id, err);
		return;
	}
	op_run(group, op);
}

static struct mrail_coll_group *group_of_id(struct mrail_coll_ep *coll,
					    uint64_t id)
{
	size_t i;

	for (i = 0; i < MRAIL_COLL_MAX_GROUPS; i++) {
		if (coll->groups[i] && coll->groups[i]->id == id)
			return coll->groups[i];
	}
	return NULL;
}

void mrail_coll_handle_rx(struct mrail_ep *ep, size_t rail, fi_addr_t peer,
			  const struct mrail_wire_hdr *hdr, const uint8_t *payload)
{
	struct mrail_coll_ep *coll = coll_ep(ep);
	struct mrail_coll_group *group;
	struct mrail_coll_msg *m;
	uint64_t id;

	if (!coll || hdr->payload_len < MRAIL_WIRE_COLL_LEN) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a collective "
			   "signal from peer %" PRIu64 "\n", rail + 1,
			   (uint64_t) peer);
		return;
	}
	id = 0;
	memcpy(&id, payload, sizeof(id));
	id = le64toh(id);
	group = group_of_id(coll, id);
	if (group) {
		group_rx(group, rail, payload, hdr->payload_len);
		return;
	}
	/* A peer joined a group we have not joined yet: it waits. */
	if (coll->orphan_count >= MRAIL_COLL_ORPHAN_MAX) {
		MRAIL_WARN(FI_LOG_EP_DATA, "rail %zu: dropped a signal of "
			   "collective group %#" PRIx64 ", which this endpoint "
			   "has not joined: %d such signals wait already\n",
			   rail + 1, id, MRAIL_COLL_ORPHAN_MAX);
		return;
	}
	m = malloc(sizeof(*m) + hdr->payload_len);
	if (!m)
		return;
	m->peer = peer;
	m->len = hdr->payload_len;
	memcpy(m->data, payload, m->len);
	LL_APPEND(coll->orphans, m);
	coll->orphan_count++;
	MRAIL_DBG(FI_LOG_EP_DATA, "a signal of collective group %#" PRIx64
		  " waits for this endpoint to join it\n", id);
}

/* The group is joined here: the signals that came first are its. */
static void group_adopt_orphans(struct mrail_coll_ep *coll,
				struct mrail_coll_group *group)
{
	struct mrail_coll_msg *m, *tmp;
	uint64_t id;

	LL_FOREACH_SAFE(coll->orphans, m, tmp) {
		memcpy(&id, m->data, sizeof(id));
		if (le64toh(id) != group->id)
			continue;
		LL_DELETE(coll->orphans, m);
		coll->orphan_count--;
		if (group->ep)
			group_rx(group, 0, m->data, m->len);
		free(m);
	}
}

/* ---- the application's calls ---- */

static struct mrail_coll_group *group_of_addr(struct mrail_ep *ep,
					      fi_addr_t coll_addr)
{
	uint64_t slot = coll_addr & ~MRAIL_COLL_GROUP_ADDR_BIT;

	if (!ep->coll || !(coll_addr & MRAIL_COLL_GROUP_ADDR_BIT) ||
	    slot >= MRAIL_COLL_MAX_GROUPS)
		return NULL;
	return ep->coll->groups[slot];
}

/*
 * Starts the group's next operation. root is a rank (broadcast only);
 * data the local input; result where the value goes.
 */
static ssize_t coll_start(struct fid_ep *ep_fid, fi_addr_t coll_addr,
			  enum mrail_wire_coll_kind kind, fi_addr_t root_addr,
			  enum fi_datatype datatype, enum fi_op op_code,
			  size_t count, const void *data, void *result,
			  uint64_t flags, void *context, const char *call)
{
	struct mrail_ep *ep = container_of(ep_fid, struct mrail_ep, ep_fid);
	struct mrail_barrier_schedule sched;
	struct mrail_coll_group *group;
	struct mrail_coll_op *op;
	char err[MRAIL_ERR_MAX];
	uint32_t root = 0, r;
	ssize_t ret;

	mrail_domain_lock(ep->domain);
	group = group_of_addr(ep, coll_addr);
	if (!group) {
		MRAIL_WARN(FI_LOG_EP_DATA, "%s: coll_addr %#" PRIx64 " is no "
			   "collective group of this endpoint (use fi_mc_addr of "
			   "the joined group)\n", call, (uint64_t) coll_addr);
		ret = -FI_EINVAL;
		goto out;
	}
	if (!group->joined) {
		MRAIL_WARN(FI_LOG_EP_DATA, "%s: the join of group %#" PRIx64
			   " has not completed (wait for FI_JOIN_COMPLETE)\n",
			   call, group->id);
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	if (kind == MRAIL_WIRE_COLL_BCAST) {
		root_addr = mrail_av_canon(ep->av, root_addr);
		for (r = 0; r < group->n && group->members[r] != root_addr; r++)
			;
		if (r == group->n) {
			MRAIL_WARN(FI_LOG_EP_DATA, "%s: root_addr %" PRIu64
				   " is not a member of the group\n", call,
				   (uint64_t) root_addr);
			ret = -FI_EINVAL;
			goto out;
		}
		root = r;
	}
	ret = mrail_coll_schedule(kind, group->alg, group->degree, group->n,
				  group->rank, root, &sched, err, sizeof(err));
	if (ret) {
		MRAIL_WARN(FI_LOG_EP_DATA, "%s: %s\n", call, err);
		ret = -FI_EINVAL;
		goto out;
	}
	op = op_get(group, group->next_seq);
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	ret = mrail_coll_inst_start(&op->inst, kind, &sched, (uint8_t) datatype,
				    (uint8_t) op_code, count,
				    kind == MRAIL_WIRE_COLL_BCAST &&
				    group->rank != root ? NULL : data,
				    err, sizeof(err));
	if (ret) {
		MRAIL_WARN(FI_LOG_EP_DATA, "%s: %s\n", call, err);
		ret = ret == -EINVAL ? -FI_EOPNOTSUPP : -FI_EINVAL;
		goto out;
	}
	group->next_seq++;
	op->context = context;
	op->result = result;
	op->report = !ep->tx_selective || (flags & FI_COMPLETION);
	op_run(group, op);
	mrail_progress_kick(ep->domain);
	ret = 0;
out:
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

static ssize_t mrail_coll_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
				  void *context)
{
	return coll_start(ep, coll_addr, MRAIL_WIRE_COLL_BARRIER, 0, FI_VOID,
			  FI_NOOP, 0, NULL, NULL, 0, context, "fi_barrier");
}

static ssize_t mrail_coll_barrier2(struct fid_ep *ep, fi_addr_t coll_addr,
				   uint64_t flags, void *context)
{
	return coll_start(ep, coll_addr, MRAIL_WIRE_COLL_BARRIER, 0, FI_VOID,
			  FI_NOOP, 0, NULL, NULL, flags, context, "fi_barrier2");
}

static ssize_t mrail_coll_broadcast(struct fid_ep *ep, void *buf, size_t count,
				    void *desc, fi_addr_t coll_addr,
				    fi_addr_t root_addr, enum fi_datatype datatype,
				    uint64_t flags, void *context)
{
	if (!buf)
		return -FI_EINVAL;
	return coll_start(ep, coll_addr, MRAIL_WIRE_COLL_BCAST, root_addr,
			  datatype, FI_ATOMIC_WRITE, count, buf, buf, flags,
			  context, "fi_broadcast");
}

static ssize_t mrail_coll_allreduce(struct fid_ep *ep, const void *buf,
				    size_t count, void *desc, void *result,
				    void *result_desc, fi_addr_t coll_addr,
				    enum fi_datatype datatype, enum fi_op op,
				    uint64_t flags, void *context)
{
	if (!buf || !result)
		return -FI_EINVAL;
	return coll_start(ep, coll_addr, MRAIL_WIRE_COLL_ALLREDUCE, 0, datatype,
			  op, count, buf, result, flags, context, "fi_allreduce");
}

/* ---- join ---- */

static int mrail_coll_mc_close(struct fid *fid)
{
	struct mrail_coll_group *group =
		container_of(fid, struct mrail_coll_group, mc_fid.fid);
	struct mrail_domain *domain = group->domain;

	mrail_domain_lock(domain);
	while (group->ops)
		op_free(group, group->ops);
	if (group->ep && group->ep->coll)
		group->ep->coll->groups[group->slot] = NULL;
	pthread_mutex_unlock(&domain->lock);
	free(group->members);
	free(group);
	return 0;
}

static struct fi_ops mrail_coll_mc_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_coll_mc_close,
	.bind = mrail_no_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

static void group_destroy(struct mrail_ep *ep, struct mrail_coll_group *group);

/* This membership's join index at this endpoint (0 for the first). */
static int join_index(struct mrail_coll_ep *coll, uint64_t base_id,
		      uint64_t *index)
{
	struct mrail_coll_joins *j;

	LL_FOREACH(coll->joins, j) {
		if (j->base_id == base_id) {
			*index = j->count++;
			return 0;
		}
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return -FI_ENOMEM;
	j->base_id = base_id;
	j->count = 1;
	LL_PREPEND(coll->joins, j);
	*index = 0;
	return 0;
}

/* Ranks the members and finds this endpoint among them. */
static int group_members(struct mrail_ep *ep, struct mrail_coll_group *group,
			 const uint64_t *addrs, size_t n, uint64_t *sorted_keys)
{
	uint64_t *keys = calloc(n, sizeof(*keys));
	uint32_t *order = calloc(n, sizeof(*order));
	struct mrail_av_peer *peer;
	char err[MRAIL_ERR_MAX];
	int ret = -FI_ENOMEM;
	size_t i;

	group->members = calloc(n, sizeof(*group->members));
	if (!keys || !order || !group->members)
		goto out;
	for (i = 0; i < n; i++) {
		peer = mrail_av_get_peer(ep->av, mrail_av_canon(ep->av, addrs[i]));
		keys[i] = peer && peer->in_use ? peer->key : 0;
	}
	ret = mrail_coll_rank_members(keys, n, order, err, sizeof(err));
	if (ret) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: %s (insert "
			   "every member with its full address, fi_getname's)\n",
			   err);
		ret = -FI_EINVAL;
		goto out;
	}
	group->n = (uint32_t) n;
	group->rank = UINT32_MAX;
	for (i = 0; i < n; i++) {
		/* Signals go to, and come from, each peer's canonical
		 * entry (mrail_av_canon). */
		group->members[i] = mrail_av_canon(ep->av, addrs[order[i]]);
		sorted_keys[i] = keys[order[i]];
		if (sorted_keys[i] == ep->self_key)
			group->rank = (uint32_t) i;
	}
	if (group->rank == UINT32_MAX) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: this endpoint's "
			   "own address is not in the AV set\n");
		ret = -FI_EINVAL;
	}
out:
	free(keys);
	free(order);
	return ret;
}

static int group_algorithm(struct mrail_coll_group *group)
{
	char err[MRAIL_ERR_MAX];

	if (!mrail_env.barrier) {
		group->alg = MRAIL_BARRIER_DISSEMINATION;
		group->degree = 0;
		return 0;
	}
	if (mrail_barrier_parse(mrail_env.barrier, &group->alg, &group->degree,
				err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: %s\n", err);
		return -FI_EINVAL;
	}
	return 0;
}

static int group_create(struct mrail_ep *ep, const uint64_t *addrs, size_t n,
			struct mrail_coll_group **out)
{
	struct mrail_coll_ep *coll = coll_ep(ep);
	struct mrail_coll_group *group;
	uint64_t *sorted = calloc(n ? n : 1, sizeof(*sorted)), index;
	size_t slot;
	int ret = -FI_ENOMEM;

	group = calloc(1, sizeof(*group));
	if (!coll || !sorted || !group)
		goto fail;
	for (slot = 0; slot < MRAIL_COLL_MAX_GROUPS && coll->groups[slot]; slot++)
		;
	if (slot == MRAIL_COLL_MAX_GROUPS) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: this endpoint is "
			   "in %d groups already; close one\n",
			   MRAIL_COLL_MAX_GROUPS);
		ret = -FI_ENOSPC;
		goto fail;
	}
	ret = group_algorithm(group);
	if (!ret)
		ret = group_members(ep, group, addrs, n, sorted);
	if (!ret) {
		group->base_id = mrail_coll_group_id(sorted, n, UINT64_MAX);
		ret = join_index(coll, group->base_id, &index);
	}
	if (ret)
		goto fail;
	group->id = mrail_coll_group_id(sorted, n, index);
	group->domain = ep->domain;
	group->ep = ep;
	group->slot = slot;
	group->mc_fid.fid.fclass = FI_CLASS_MC;
	group->mc_fid.fid.ops = &mrail_coll_mc_ops;
	group->mc_fid.fi_addr = MRAIL_COLL_GROUP_ADDR_BIT | slot;
	coll->groups[slot] = group;
	free(sorted);
	*out = group;
	return 0;
fail:
	if (group)
		free(group->members);
	free(group);
	free(sorted);
	return ret;
}

int mrail_coll_join(struct fid_ep *ep_fid, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context)
{
	struct mrail_ep *ep = container_of(ep_fid, struct mrail_ep, ep_fid);
	const struct fi_collective_addr *caddr = addr;
	struct mrail_barrier_schedule sched;
	struct mrail_coll_group *group;
	const uint64_t *addrs;
	struct mrail_coll_op *op;
	struct mrail_av *av;
	fi_addr_t set_addr;
	size_t n;
	int ret;

	if (!(flags & FI_COLLECTIVE)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join: mrail joins collective "
			   "groups only (fi_join_collective), no multicast\n");
		return -FI_ENOSYS;
	}
	if (!(ep->caps & FI_COLLECTIVE)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: the endpoint "
			   "was opened without FI_COLLECTIVE: ask for it in "
			   "hints->caps\n");
		return -FI_ENOSYS;
	}
	if (!caddr || !mc ||
	    mrail_av_set_members(caddr->set, &av, &addrs, &n, &set_addr)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: no AV set of "
			   "mrail's given\n");
		return -FI_EINVAL;
	}
	mrail_domain_lock(ep->domain);
	if (!ep->enabled || av != ep->av) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: %s\n",
			   !ep->enabled ? "the endpoint is not enabled" :
			   "the AV set is not from the endpoint's AV");
		ret = !ep->enabled ? -FI_EOPBADSTATE : -FI_EINVAL;
		goto out;
	}
	if (!ep->eq) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: bind an EQ to "
			   "the endpoint first: FI_JOIN_COMPLETE goes there\n");
		ret = -FI_ENOEQ;
		goto out;
	}
	if (caddr->coll_addr != FI_ADDR_NOTAVAIL && caddr->coll_addr != set_addr &&
	    !group_of_addr(ep, caddr->coll_addr)) {
		MRAIL_WARN(FI_LOG_EP_CTRL, "fi_join_collective: coll_addr %#"
			   PRIx64 " is neither the set's fi_av_set_addr, a group "
			   "of this endpoint nor FI_ADDR_NOTAVAIL\n",
			   (uint64_t) caddr->coll_addr);
		ret = -FI_EINVAL;
		goto out;
	}
	ret = group_create(ep, addrs, n, &group);
	if (ret)
		goto out;
	group->mc_fid.fid.context = context;
	group->next_seq = 1;
	/* The join is a barrier over the new group (operation 0), so no
	 * member reports it before every member called it. */
	op = op_get(group, 0);
	if (!op || mrail_coll_schedule(MRAIL_WIRE_COLL_BARRIER, group->alg,
				       group->degree, group->n, group->rank, 0,
				       &sched, NULL, 0) ||
	    mrail_coll_inst_start(&op->inst, MRAIL_WIRE_COLL_BARRIER, &sched,
				  0, 0, 0, NULL, NULL, 0)) {
		ret = -FI_ENOMEM;
		group_destroy(ep, group);
		goto out;
	}
	op->is_join = true;
	op->context = context;
	*mc = &group->mc_fid;
	MRAIL_INFO(FI_LOG_EP_CTRL, "joined collective group %#" PRIx64 ": rank "
		   "%u of %u, barrier %s\n", group->id, group->rank, group->n,
		   mrail_barrier_alg_name(group->alg));
	group_adopt_orphans(ep->coll, group);
	op = op_find(group, 0);
	if (op)
		op_run(group, op);
	mrail_progress_kick(ep->domain);
out:
	pthread_mutex_unlock(&ep->domain->lock);
	return ret;
}

/* ---- queries, teardown ---- */

int mrail_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			   struct fi_collective_attr *attr, uint64_t flags)
{
	enum mrail_wire_coll_kind kind;
	size_t size, max_count;

	switch (coll) {
	case FI_BARRIER:
		kind = MRAIL_WIRE_COLL_BARRIER;
		break;
	case FI_BROADCAST:
		kind = MRAIL_WIRE_COLL_BCAST;
		break;
	case FI_ALLREDUCE:
		kind = MRAIL_WIRE_COLL_ALLREDUCE;
		break;
	default:
		return -FI_ENOSYS;
	}
	if (flags)
		return -FI_ENOSYS;
	if (!attr)
		return -FI_EINVAL;
	if (mrail_coll_valid(kind, kind == MRAIL_WIRE_COLL_BCAST ?
			     FI_ATOMIC_WRITE : attr->op, attr->datatype, &size,
			     &max_count))
		return -FI_EOPNOTSUPP;
	attr->datatype_attr.count = max_count;
	attr->datatype_attr.size = size;
	attr->max_members = MRAIL_BARRIER_MAX_N;
	attr->mode = 0;
	return 0;
}

static void group_destroy(struct mrail_ep *ep, struct mrail_coll_group *group)
{
	while (group->ops)
		op_free(group, group->ops);
	ep->coll->groups[group->slot] = NULL;
	free(group->members);
	free(group);
}

void mrail_coll_ep_close(struct mrail_ep *ep)
{
	struct mrail_coll_ep *coll = ep->coll;
	struct mrail_coll_joins *j;
	struct mrail_coll_msg *m;
	size_t i;

	if (!coll)
		return;
	/* Groups the application did not close stay allocated for its
	 * fi_close(mc), but lose their operations and endpoint. */
	for (i = 0; i < MRAIL_COLL_MAX_GROUPS; i++) {
		if (!coll->groups[i])
			continue;
		while (coll->groups[i]->ops)
			op_free(coll->groups[i], coll->groups[i]->ops);
		coll->groups[i]->ep = NULL;
		MRAIL_WARN(FI_LOG_EP_CTRL, "collective group %#" PRIx64 " was "
			   "not closed before its endpoint\n", coll->groups[i]->id);
	}
	while ((m = coll->orphans)) {
		LL_DELETE(coll->orphans, m);
		free(m);
	}
	while ((j = coll->joins)) {
		LL_DELETE(coll->joins, j);
		free(j);
	}
	free(coll);
	ep->coll = NULL;
}

static ssize_t coll_no_alltoall(struct fid_ep *ep, const void *buf, size_t count,
				void *desc, void *result, void *result_desc,
				fi_addr_t coll_addr, enum fi_datatype datatype,
				uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t coll_no_reduce_scatter(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t coll_addr,
				      enum fi_datatype datatype, enum fi_op op,
				      uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t coll_no_reduce(struct fid_ep *ep, const void *buf, size_t count,
			      void *desc, void *result, void *result_desc,
			      fi_addr_t coll_addr, fi_addr_t root_addr,
			      enum fi_datatype datatype, enum fi_op op,
			      uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t coll_no_scatter(struct fid_ep *ep, const void *buf, size_t count,
			       void *desc, void *result, void *result_desc,
			       fi_addr_t coll_addr, fi_addr_t root_addr,
			       enum fi_datatype datatype, uint64_t flags,
			       void *context)
{
	return -FI_ENOSYS;
}

static ssize_t coll_no_msg(struct fid_ep *ep, const struct fi_msg_collective *msg,
			   struct fi_ioc *resultv, void **result_desc,
			   size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

struct fi_ops_collective mrail_coll_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = mrail_coll_barrier,
	.broadcast = mrail_coll_broadcast,
	.alltoall = coll_no_alltoall,
	.allreduce = mrail_coll_allreduce,
	.allgather = coll_no_alltoall,
	.reduce_scatter = coll_no_reduce_scatter,
	.reduce = coll_no_reduce,
	.scatter = coll_no_scatter,
	.gather = coll_no_scatter,
	.msg = coll_no_msg,
	.barrier2 = mrail_coll_barrier2,
};
