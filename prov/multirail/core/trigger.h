/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pending-operation queue of FI_TRIGGER with FI_TRIGGER_THRESHOLD
 * (fi_trigger(3)): operations armed on one counter fire exactly once, when
 * the counter's value reaches their threshold, in threshold order even when
 * the counter jumps by more than one, and in posting order for equal
 * thresholds. An operation whose threshold is already reached when it is
 * armed is ready at once (fi_trigger(3): "the data transfer may be initiated
 * immediately"). Pending operations can be cancelled.
 *
 * One queue per counter. The caller embeds a struct mrail_trig_op in its
 * operation (no allocation here) and tells the queue each value the counter
 * takes; the queue hands back the operations to issue, in order. If the
 * counter is set below its previous value (fi_cntr_set), nothing fires and
 * pending operations wait for the new value to climb to them again.
 *
 * Pure: no locking (the caller's counter lock covers the queue), no I/O.
 */
#ifndef MRAIL_TRIGGER_H
#define MRAIL_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

enum mrail_trig_state {
	MRAIL_TRIG_IDLE = 0,	/* never armed (zeroed) */
	MRAIL_TRIG_PENDING,	/* armed, waiting in a queue */
	MRAIL_TRIG_FIRED,	/* handed back to be issued; never again */
	MRAIL_TRIG_CANCELLED,
};

struct mrail_trig_op {
	uint64_t threshold;
	uint64_t seq;		/* posting order in its queue */
	enum mrail_trig_state state;
	struct mrail_trig_op *prev, *next;	/* utlist DL links */
};

struct mrail_trig_queue {
	struct mrail_trig_op *head;	/* sorted by (threshold, seq) */
	uint64_t value;			/* the counter's last known value */
	uint64_t next_seq;
	size_t pending;
};

/* An empty queue on a counter whose value is value. */
void mrail_trig_queue_init(struct mrail_trig_queue *q, uint64_t value);

/*
 * Arms op on q. Returns 1 when the threshold is already reached (the op is
 * the next mrail_trig_pop_ready returns, since nothing pending is ready), 0
 * when it waits, -EBUSY when op is already pending somewhere. A fired or
 * cancelled op may be armed again (a new operation in the same memory).
 */
int mrail_trig_arm(struct mrail_trig_queue *q, struct mrail_trig_op *op,
		   uint64_t threshold);

/* The counter moved to value (up by any amount, or down). */
void mrail_trig_set_value(struct mrail_trig_queue *q, uint64_t value);

/* The next op that must fire now, removed and marked FIRED; NULL when none.
 * Call until NULL after mrail_trig_set_value or a ready arm. */
struct mrail_trig_op *mrail_trig_pop_ready(struct mrail_trig_queue *q);

/*
 * Counter moved to value: moves every op that must fire now, in firing
 * order, to the utlist DL list *ready (appended), marks them FIRED and
 * returns how many. For callers that issue them after dropping a lock.
 */
size_t mrail_trig_take_ready(struct mrail_trig_queue *q, uint64_t value,
			     struct mrail_trig_op **ready);

/* Removes a pending op (state CANCELLED). Returns 0, or -ENOENT when op is
 * not pending in q (it fired, was cancelled, or was never armed). */
int mrail_trig_cancel(struct mrail_trig_queue *q, struct mrail_trig_op *op);

/* The lowest pending threshold in *threshold; -ENOENT when none is pending.
 * A progress loop need not look at the counter before it gets there. */
int mrail_trig_next_threshold(const struct mrail_trig_queue *q,
			      uint64_t *threshold);

#endif /* MRAIL_TRIGGER_H */
