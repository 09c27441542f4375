/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Collectives (fi_collective(3)) as mrail runs them: the pure part.
 *
 * Membership: an AV set is an ordered list of fi_addr_t (the set
 * operations below). A group made from it ranks its members by their mrail
 * sender keys (core/addr_codec.h's mrail_addr_key), so that every member,
 * whatever order its AV or set holds them in, computes the same ranks and
 * the same group id.
 *
 * Execution: one operation of a group (an instance, numbered by its
 * sequence number within the group) follows a schedule of core/barrier.h:
 * step k fires when the instance's counter k reaches the step's count,
 * sends one COLL signal to each of its peers (incrementing the peer's
 * counter) and adds the chain token to counter k + 1; the instance is done
 * when counter n_steps holds its token. Counters and the firing order are
 * core/trigger.h's queues, one per counter. Signals that arrive before the
 * application starts the operation locally (a late process) are counted
 * and their data kept; starting arms the steps, and whatever is already
 * satisfied fires at once.
 *
 * Data: a broadcast runs a binomial tree from the root (each rank replaces
 * its value with its parent's); an allreduce runs the pairwise exchange
 * (recursive doubling, with the fold-in and release of the ranks beyond
 * the largest power of two): a step folds the data that arrived on its own
 * counter into the running value just before it sends, combining with the
 * op (mrail_atomic_apply), or replacing it on an extra rank's release.
 * Combining partners' values in either order gives the same result for
 * every op offered (all commutative), so all members end with the same
 * bytes.
 *
 * Pure: no libfabric calls, no locking, no I/O (allocation for early data).
 */
#ifndef MRAIL_COLL_H
#define MRAIL_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fi_atomic.h>

#include "barrier.h"
#include "trigger.h"
#include "wire.h"

/* Signals one counter of an instance may hold before the instance is
 * started (the gather tree's widest fan-in, with room). */
#define MRAIL_COLL_EARLY_MAX 64u

/* ---- AV set lists: an ordered list of distinct addresses ---- */

/* Appends addr: 0, -EALREADY when present, -ENOSPC when *n == cap. */
int mrail_addr_list_insert(uint64_t *list, size_t *n, size_t cap,
			   uint64_t addr);
/* Removes addr keeping the order: 0 or -ENOENT. */
int mrail_addr_list_remove(uint64_t *list, size_t *n, uint64_t addr);
/* Appends the members of src missing from dst, in src's order: 0 or
 * -ENOSPC (dst unchanged). */
int mrail_addr_list_union(uint64_t *dst, size_t *dst_n, size_t cap,
			  const uint64_t *src, size_t src_n);
/* Keeps the members of dst also in src (intersect) / not in src (diff). */
void mrail_addr_list_intersect(uint64_t *dst, size_t *dst_n,
			       const uint64_t *src, size_t src_n);
void mrail_addr_list_diff(uint64_t *dst, size_t *dst_n, const uint64_t *src,
			  size_t src_n);

/*
 * fi_av_set_attr's range: the addresses start, start + stride, ... <= end.
 * Returns their number, or -EINVAL with err (start > end, stride 0, or
 * more than count when count is not 0).
 */
long mrail_addr_range_len(uint64_t start, uint64_t end, uint64_t stride,
			  size_t count, char *err, size_t err_len);

/* ---- groups ---- */

/*
 * Ranks the n members by their keys: order[r] is the index (in keys) of
 * the member of rank r. Returns 0, or -EINVAL with err for n 0 or above
 * MRAIL_BARRIER_MAX_N, a key 0 or a key twice.
 */
int mrail_coll_rank_members(const uint64_t *keys, size_t n, uint32_t *order,
			    char *err, size_t err_len);

/*
 * The group id of the members whose keys, in rank order, are sorted_keys,
 * for the join_index-th join of this same membership (0 for the first):
 * a 64-bit FNV-1a hash, never 0.
 */
uint64_t mrail_coll_group_id(const uint64_t *sorted_keys, size_t n,
			     uint64_t join_index);

/* ---- operations offered ---- */

/*
 * Whether a collective of this kind takes op and datatype (fi_query_collective,
 * and the calls themselves): a barrier takes FI_NOOP and FI_VOID only (as
 * fi_collective(3) asks); a broadcast any datatype mrail_atomic_valid knows
 * (op ignored); an allreduce FI_MIN, FI_MAX, FI_SUM, FI_PROD, FI_LOR,
 * FI_LAND, FI_LXOR, FI_BOR, FI_BAND or FI_BXOR on the datatypes
 * mrail_atomic_valid accepts for it. 0 with *size (datatype's size, 0
 * for a barrier) and *max_count (elements one operation may carry:
 * MRAIL_WIRE_COLL_MAX_DATA / size, 0 for a barrier); -EOPNOTSUPP for a
 * combination not offered, -EINVAL for a kind outside its enum.
 */
int mrail_coll_valid(enum mrail_wire_coll_kind kind, enum fi_op op,
		     enum fi_datatype datatype, size_t *size,
		     size_t *max_count);

/*
 * The schedule of rank among n for an operation of kind: a barrier's is
 * alg's (degree for GATHER), an allreduce's always PAIRWISE's, a
 * broadcast's the binomial tree from root (alg and degree unused; the
 * schedule's alg reads GATHER, degree 0). 0, or -EINVAL with err.
 */
int mrail_coll_schedule(enum mrail_wire_coll_kind kind,
			enum mrail_barrier_alg alg, uint32_t degree,
			uint32_t n, uint32_t rank, uint32_t root,
			struct mrail_barrier_schedule *sched, char *err,
			size_t err_len);

/*
 * Whether data arriving on counter of an instance running sched replaces
 * the running value (a broadcast; an allreduce's release of an extra rank)
 * instead of combining with it.
 */
bool mrail_coll_fold_replaces(enum mrail_wire_coll_kind kind,
			      const struct mrail_barrier_schedule *sched,
			      uint32_t counter);

/* ---- instances ---- */

struct mrail_coll_early;	/* data that arrived, not folded yet */

struct mrail_coll_inst {
	uint64_t group;
	uint64_t seq;
	bool started;
	bool done;
	/* 0, or a positive errno: a peer's signal did not fit (EIO). */
	int err;
	enum mrail_wire_coll_kind kind;
	uint8_t datatype, op;
	size_t count;
	uint32_t data_len;		/* count * datatype size */
	struct mrail_barrier_schedule sched;
	uint64_t counters[MRAIL_BARRIER_MAX_COUNTERS];
	struct mrail_trig_queue queues[MRAIL_BARRIER_MAX_COUNTERS];
	struct mrail_trig_op trig[MRAIL_BARRIER_MAX_STEPS];
	struct mrail_coll_early *early[MRAIL_BARRIER_MAX_COUNTERS];
	uint8_t acc[MRAIL_WIRE_COLL_MAX_DATA];	/* the running value */
};

/* An instance nothing has touched yet. */
void mrail_coll_inst_init(struct mrail_coll_inst *inst, uint64_t group,
			  uint64_t seq);
/* Frees the data it kept. */
void mrail_coll_inst_fini(struct mrail_coll_inst *inst);

/*
 * The application starts the operation: sched (mrail_coll_schedule's),
 * and for a broadcast or allreduce count elements of datatype with op;
 * data is the local input (the root's buffer, every rank's allreduce
 * operand; NULL for others). Arms every step. Returns 0, -EALREADY when
 * started before, -EINVAL for a combination mrail_coll_valid refuses or
 * too many elements (with err).
 */
int mrail_coll_inst_start(struct mrail_coll_inst *inst,
			  enum mrail_wire_coll_kind kind,
			  const struct mrail_barrier_schedule *sched,
			  uint8_t datatype, uint8_t op, size_t count,
			  const void *data, char *err, size_t err_len);

/*
 * A signal arrived (desc decoded by mrail_wire_coll_decode, data its
 * bytes). Counts it on its counter and keeps its data for the step that
 * folds it. Returns 0, or -EINVAL with err when the instance cannot take
 * it: more signals on that counter than its schedule sends there (or than
 * MRAIL_COLL_EARLY_MAX before the start), a counter past the schedule, or
 * a kind other than the instance's; -ENOMEM. A refused signal changes
 * nothing.
 */
int mrail_coll_inst_arrive(struct mrail_coll_inst *inst,
			   const struct mrail_wire_coll *desc,
			   const uint8_t *data, char *err, size_t err_len);

/* How a fired step sends one signal: to rank peer, desc and its data.
 * Returns 0 or a negative error, which the instance records (EIO). */
typedef int (*mrail_coll_send_fn)(void *arg, uint32_t peer,
				  const struct mrail_wire_coll *desc,
				  const void *data);

/*
 * Fires every step whose count is reached, in order, calling send for
 * each signal. Returns true when the instance is done (the first time and
 * after). Data of a kind, datatype, op or length other than the
 * instance's sets err to EIO and is not used.
 */
bool mrail_coll_inst_run(struct mrail_coll_inst *inst, mrail_coll_send_fn send,
			 void *arg);

#endif /* MRAIL_COLL_H */
