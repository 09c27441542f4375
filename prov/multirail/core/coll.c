/* SPDX-License-Identifier: BSD-2-Clause */
#include "coll.h"
#include "atomic.h"
#include "mrail_err.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(MRAIL_WIRE_COLL_MAX_COUNTERS == MRAIL_BARRIER_MAX_COUNTERS,
	       "a COLL counter index must name any counter of a schedule");

/* ---- AV set lists ---- */

static long list_find(const uint64_t *list, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (list[i] == addr)
			return (long) i;
	}
	return -1;
}

int mrail_addr_list_insert(uint64_t *list, size_t *n, size_t cap,
			   uint64_t addr)
{
	if (list_find(list, *n, addr) >= 0)
		return -EALREADY;
	if (*n >= cap)
		return -ENOSPC;
	list[(*n)++] = addr;
	return 0;
}

int mrail_addr_list_remove(uint64_t *list, size_t *n, uint64_t addr)
{
	long at = list_find(list, *n, addr);

	if (at < 0)
		return -ENOENT;
	memmove(&list[at], &list[at + 1], (*n - (size_t) at - 1) * sizeof(*list));
	(*n)--;
	return 0;
}

int mrail_addr_list_union(uint64_t *dst, size_t *dst_n, size_t cap,
			  const uint64_t *src, size_t src_n)
{
	size_t i, missing = 0;

	for (i = 0; i < src_n; i++) {
		if (list_find(dst, *dst_n, src[i]) < 0)
			missing++;
	}
	if (missing > cap - *dst_n)
		return -ENOSPC;
	for (i = 0; i < src_n; i++) {
		if (list_find(dst, *dst_n, src[i]) < 0)
			dst[(*dst_n)++] = src[i];
	}
	return 0;
}

static void list_keep(uint64_t *dst, size_t *dst_n, const uint64_t *src,
		      size_t src_n, bool in_src)
{
	size_t i, kept = 0;

	for (i = 0; i < *dst_n; i++) {
		if ((list_find(src, src_n, dst[i]) >= 0) == in_src)
			dst[kept++] = dst[i];
	}
	*dst_n = kept;
}

void mrail_addr_list_intersect(uint64_t *dst, size_t *dst_n,
			       const uint64_t *src, size_t src_n)
{
	list_keep(dst, dst_n, src, src_n, true);
}

void mrail_addr_list_diff(uint64_t *dst, size_t *dst_n, const uint64_t *src,
			  size_t src_n)
{
	list_keep(dst, dst_n, src, src_n, false);
}

long mrail_addr_range_len(uint64_t start, uint64_t end, uint64_t stride,
			  size_t count, char *err, size_t err_len)
{
	uint64_t len;

	if (start > end) {
		mrail_write_err(err, err_len,
				"start_addr %" PRIu64 " is past end_addr %" PRIu64,
				start, end);
		return -EINVAL;
	}
	if (!stride) {
		mrail_write_err(err, err_len,
				"stride is 0 with a start_addr and end_addr: use 1 for every address in between");
		return -EINVAL;
	}
	len = (end - start) / stride + 1;
	if (count && len > count) {
		mrail_write_err(err, err_len,
				"the range names %" PRIu64 " addresses, more than count %zu",
				len, count);
		return -EINVAL;
	}
	if (len > MRAIL_BARRIER_MAX_N) {
		mrail_write_err(err, err_len,
				"the range names %" PRIu64 " addresses, a set holds at most %u",
				len, MRAIL_BARRIER_MAX_N);
		return -EINVAL;
	}
	return (long) len;
}

/* ---- groups ---- */

int mrail_coll_rank_members(const uint64_t *keys, size_t n, uint32_t *order,
			    char *err, size_t err_len)
{
	size_t i, j;
	uint32_t tmp;

	if (!n || n > MRAIL_BARRIER_MAX_N) {
		mrail_write_err(err, err_len,
				"a collective group has 1 to %u members, not %zu",
				MRAIL_BARRIER_MAX_N, n);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!keys[i]) {
			mrail_write_err(err, err_len,
					"member %zu has no full address yet (key 0)", i);
			return -EINVAL;
		}
		order[i] = (uint32_t) i;
	}
	/* Insertion sort: groups are small, and this runs once per join. */
	for (i = 1; i < n; i++) {
		tmp = order[i];
		for (j = i; j > 0 && keys[order[j - 1]] > keys[tmp]; j--)
			order[j] = order[j - 1];
		order[j] = tmp;
	}
	for (i = 1; i < n; i++) {
		if (keys[order[i]] == keys[order[i - 1]]) {
			mrail_write_err(err, err_len,
					"members %u and %u are the same endpoint (one address inserted twice)",
					order[i - 1], order[i]);
			return -EINVAL;
		}
	}
	return 0;
}

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv_u64(uint64_t hash, uint64_t value)
{
	int i;

	for (i = 0; i < 8; i++) {
		hash ^= (uint8_t) (value >> (8 * i));
		hash *= FNV_PRIME;
	}
	return hash;
}

uint64_t mrail_coll_group_id(const uint64_t *sorted_keys, size_t n,
			     uint64_t join_index)
{
	uint64_t hash = fnv_u64(FNV_OFFSET, n);
	size_t i;

	for (i = 0; i < n; i++)
		hash = fnv_u64(hash, sorted_keys[i]);
	hash = fnv_u64(hash, join_index);
	return hash ? hash : 1;
}

/* ---- operations offered ---- */

static bool allreduce_op(enum fi_op op)
{
	switch (op) {
	case FI_MIN: case FI_MAX: case FI_SUM: case FI_PROD:
	case FI_LOR: case FI_LAND: case FI_LXOR:
	case FI_BOR: case FI_BAND: case FI_BXOR:
		return true;
	default:
		return false;
	}
}

int mrail_coll_valid(enum mrail_wire_coll_kind kind, enum fi_op op,
		     enum fi_datatype datatype, size_t *size,
		     size_t *max_count)
{
	size_t sz = 0;
	int ret;

	switch (kind) {
	case MRAIL_WIRE_COLL_BARRIER:
		if (op != FI_NOOP || datatype != FI_VOID)
			return -EOPNOTSUPP;
		*size = 0;
		*max_count = 0;
		return 0;
	case MRAIL_WIRE_COLL_BCAST:
		ret = mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, FI_ATOMIC_WRITE,
					 datatype, &sz);
		break;
	case MRAIL_WIRE_COLL_ALLREDUCE:
		if (!allreduce_op(op))
			return -EOPNOTSUPP;
		ret = mrail_atomic_valid(MRAIL_ATOMIC_PLAIN, op, datatype, &sz);
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return -EOPNOTSUPP;
	*size = sz;
	*max_count = MRAIL_WIRE_COLL_MAX_DATA / sz;
	return 0;
}

/* ---- schedules ---- */

static uint32_t floor_pow2(uint32_t n)
{
	uint32_t m = 1;

	while ((uint64_t) m * 2 <= n)
		m *= 2;
	return m;
}

/*
 * Binomial tree over virtual ranks v = rank - root (mod n): v's parent is
 * v minus its highest bit; its children are v + 2^j for every 2^j above
 * v's highest bit, while below n. Step 0 waits for the parent's value on
 * counter 0 (the root waits for nothing) and passes it to the children's
 * counter 0; counter 1 is the done counter.
 */
static void bcast_tree(struct mrail_barrier_schedule *s, uint32_t root)
{
	uint32_t v = (s->rank + s->n - root) % s->n;
	struct mrail_barrier_step *step = &s->steps[0];
	uint64_t bit = 1;

	while (bit <= v)
		bit <<= 1;
	s->n_steps = 1;
	step->wait_count = v ? 1 : 0;
	for (; v + bit < s->n; bit <<= 1) {
		step->sends[step->n_sends].peer =
			(uint32_t) ((v + bit + root) % s->n);
		step->sends[step->n_sends].counter = 0;
		step->n_sends++;
	}
}

int mrail_coll_schedule(enum mrail_wire_coll_kind kind,
			enum mrail_barrier_alg alg, uint32_t degree,
			uint32_t n, uint32_t rank, uint32_t root,
			struct mrail_barrier_schedule *sched, char *err,
			size_t err_len)
{
	switch (kind) {
	case MRAIL_WIRE_COLL_BARRIER:
		return mrail_barrier_schedule(alg, degree, n, rank, sched, err,
					      err_len);
	case MRAIL_WIRE_COLL_ALLREDUCE:
		return mrail_barrier_schedule(MRAIL_BARRIER_PAIRWISE, 0, n,
					      rank, sched, err, err_len);
	case MRAIL_WIRE_COLL_BCAST:
		/* The dissemination schedule checks n and rank. */
		if (mrail_barrier_schedule(MRAIL_BARRIER_DISSEMINATION, 0, n,
					   rank, sched, err, err_len))
			return -EINVAL;
		if (root >= n) {
			mrail_write_err(err, err_len,
					"the broadcast root is rank %u of a group of %u",
					root, n);
			return -EINVAL;
		}
		memset(sched, 0, sizeof(*sched));
		sched->alg = MRAIL_BARRIER_GATHER;
		sched->n = n;
		sched->rank = rank;
		bcast_tree(sched, root);
		return 0;
	}
	mrail_write_err(err, err_len, "unknown collective kind %d", (int) kind);
	return -EINVAL;
}

bool mrail_coll_fold_replaces(enum mrail_wire_coll_kind kind,
			      const struct mrail_barrier_schedule *sched,
			      uint32_t counter)
{
	if (kind == MRAIL_WIRE_COLL_BCAST)
		return true;
	/* Pairwise: an extra rank's counter 1 is its core partner's release,
	 * carrying the whole result. */
	return kind == MRAIL_WIRE_COLL_ALLREDUCE &&
	       sched->rank >= floor_pow2(sched->n) && counter == 1;
}

/* ---- instances ---- */

struct mrail_coll_early {
	struct mrail_coll_early *next;
	struct mrail_wire_coll desc;
	uint8_t data[];
};

void mrail_coll_inst_init(struct mrail_coll_inst *inst, uint64_t group,
			  uint64_t seq)
{
	uint32_t c;

	memset(inst, 0, offsetof(struct mrail_coll_inst, acc));
	inst->group = group;
	inst->seq = seq;
	for (c = 0; c < MRAIL_BARRIER_MAX_COUNTERS; c++)
		mrail_trig_queue_init(&inst->queues[c], 0);
}

void mrail_coll_inst_fini(struct mrail_coll_inst *inst)
{
	struct mrail_coll_early *e;
	uint32_t c;

	for (c = 0; c < MRAIL_BARRIER_MAX_COUNTERS; c++) {
		while ((e = inst->early[c])) {
			inst->early[c] = e->next;
			free(e);
		}
	}
}

/* Signals a schedule's peers send to counter c: its count, less the chain
 * token every step after the first gets from the one before. */
static uint64_t signals_expected(const struct mrail_barrier_schedule *s,
				 uint32_t c)
{
	if (c >= s->n_steps)
		return 0;
	return s->steps[c].wait_count - (c ? 1 : 0);
}

/* Signals counted on c so far, the chain token excluded. */
static uint64_t signals_counted(const struct mrail_coll_inst *inst, uint32_t c)
{
	uint64_t token = inst->started && c && inst->counters[c] &&
			 inst->trig[c - 1].state == MRAIL_TRIG_FIRED ? 1 : 0;

	return inst->counters[c] - token;
}

int mrail_coll_inst_start(struct mrail_coll_inst *inst,
			  enum mrail_wire_coll_kind kind,
			  const struct mrail_barrier_schedule *sched,
			  uint8_t datatype, uint8_t op, size_t count,
			  const void *data, char *err, size_t err_len)
{
	size_t size = 0, max_count = 0;
	uint32_t k;

	if (inst->started) {
		mrail_write_err(err, err_len, "operation %" PRIu64
				" of this group was started already", inst->seq);
		return -EALREADY;
	}
	if (mrail_coll_valid(kind, kind == MRAIL_WIRE_COLL_BARRIER ? FI_NOOP : op,
			     kind == MRAIL_WIRE_COLL_BARRIER ? FI_VOID : datatype,
			     &size, &max_count)) {
		mrail_write_err(err, err_len,
				"op %u on datatype %u (enum fi_op, fi_datatype) is not offered: fi_query_collective tells what is",
				op, datatype);
		return -EINVAL;
	}
	if (kind != MRAIL_WIRE_COLL_BARRIER && (!count || count > max_count)) {
		mrail_write_err(err, err_len,
				"%zu elements of %zu bytes: one operation carries 1 to %zu (%u bytes)",
				count, size, max_count, MRAIL_WIRE_COLL_MAX_DATA);
		return -EINVAL;
	}
	for (k = 0; k < MRAIL_BARRIER_MAX_COUNTERS; k++) {
		if (inst->counters[k] > signals_expected(sched, k)) {
			/* More early signals than the schedule sends there:
			 * a peer runs another operation under this number. */
			inst->err = EIO;
			break;
		}
	}
	inst->kind = kind;
	inst->sched = *sched;
	inst->datatype = kind == MRAIL_WIRE_COLL_BARRIER ? 0 : datatype;
	inst->op = kind == MRAIL_WIRE_COLL_ALLREDUCE ? op : 0;
	inst->count = kind == MRAIL_WIRE_COLL_BARRIER ? 0 : count;
	inst->data_len = (uint32_t) (inst->count * size);
	if (inst->data_len && data)
		memcpy(inst->acc, data, inst->data_len);
	else if (inst->data_len)
		memset(inst->acc, 0, inst->data_len);
	inst->started = true;
	for (k = 0; k < sched->n_steps; k++) {
		mrail_trig_queue_init(&inst->queues[k], inst->counters[k]);
		(void) mrail_trig_arm(&inst->queues[k], &inst->trig[k],
				      sched->steps[k].wait_count);
	}
	return 0;
}

int mrail_coll_inst_arrive(struct mrail_coll_inst *inst,
			   const struct mrail_wire_coll *desc,
			   const uint8_t *data, char *err, size_t err_len)
{
	uint32_t c = desc->counter;
	uint64_t limit = inst->started ?
			 signals_expected(&inst->sched, c) : MRAIL_COLL_EARLY_MAX;
	struct mrail_coll_early *e;

	if (c >= MRAIL_BARRIER_MAX_COUNTERS || signals_counted(inst, c) >= limit) {
		mrail_write_err(err, err_len,
				"operation %" PRIu64 " got more signals on counter %u than %" PRIu64,
				inst->seq, c, limit);
		return -EINVAL;
	}
	if (inst->started && desc->kind != inst->kind) {
		mrail_write_err(err, err_len,
				"operation %" PRIu64 " is a collective of kind %u here, the peer runs kind %u",
				inst->seq, inst->kind, desc->kind);
		return -EINVAL;
	}
	if (desc->kind != MRAIL_WIRE_COLL_BARRIER) {
		e = malloc(sizeof(*e) + desc->data_len);
		if (!e) {
			mrail_write_err(err, err_len, "out of memory");
			return -ENOMEM;
		}
		e->desc = *desc;
		if (desc->data_len)
			memcpy(e->data, data, desc->data_len);
		e->next = inst->early[c];
		inst->early[c] = e;
	}
	inst->counters[c]++;
	if (inst->started)
		mrail_trig_set_value(&inst->queues[c], inst->counters[c]);
	return 0;
}

/* Folds the data kept for counter c into the running value. */
static void fold(struct mrail_coll_inst *inst, uint32_t c)
{
	bool replace = mrail_coll_fold_replaces(inst->kind, &inst->sched, c);
	struct mrail_coll_early *e;

	while ((e = inst->early[c])) {
		inst->early[c] = e->next;
		if (e->desc.kind != inst->kind ||
		    e->desc.datatype != inst->datatype ||
		    e->desc.op != inst->op || e->desc.data_len != inst->data_len)
			inst->err = EIO;
		else if (replace)
			memcpy(inst->acc, e->data, inst->data_len);
		else if (mrail_atomic_apply(inst->op, inst->datatype, inst->acc,
					    e->data, NULL, NULL, inst->count))
			inst->err = EIO;
		free(e);
	}
}

static void fire(struct mrail_coll_inst *inst, uint32_t k,
		 mrail_coll_send_fn send, void *arg)
{
	const struct mrail_barrier_step *step = &inst->sched.steps[k];
	struct mrail_wire_coll desc = {
		.group = inst->group,
		.seq = inst->seq,
		.kind = (uint8_t) inst->kind,
		.datatype = inst->datatype,
		.op = inst->op,
		.data_len = inst->data_len,
	};
	uint32_t i;

	fold(inst, k);
	for (i = 0; i < step->n_sends; i++) {
		desc.counter = step->sends[i].counter;
		if (send(arg, step->sends[i].peer, &desc,
			 inst->data_len ? inst->acc : NULL))
			inst->err = EIO;
	}
	inst->counters[k + 1]++;
	if (k + 1 < inst->sched.n_steps)
		mrail_trig_set_value(&inst->queues[k + 1], inst->counters[k + 1]);
}

bool mrail_coll_inst_run(struct mrail_coll_inst *inst, mrail_coll_send_fn send,
			 void *arg)
{
	struct mrail_trig_op *op;
	bool progressed = true;
	uint32_t k;

	if (!inst->started)
		return false;
	while (progressed && !inst->done) {
		progressed = false;
		for (k = 0; k < inst->sched.n_steps; k++) {
			while ((op = mrail_trig_pop_ready(&inst->queues[k]))) {
				fire(inst, (uint32_t) (op - inst->trig), send, arg);
				progressed = true;
			}
		}
		if (inst->counters[inst->sched.n_steps] >=
		    mrail_barrier_threshold(&inst->sched, inst->sched.n_steps, 0))
			inst->done = true;
	}
	return inst->done;
}
