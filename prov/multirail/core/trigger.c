/* SPDX-License-Identifier: BSD-2-Clause */
#include "trigger.h"

#include <errno.h>
#include <stdbool.h>

#include <utlist.h>

void mrail_trig_queue_init(struct mrail_trig_queue *q, uint64_t value)
{
	q->head = NULL;
	q->value = value;
	q->next_seq = 0;
	q->pending = 0;
}

static bool in_queue(const struct mrail_trig_queue *q,
		     const struct mrail_trig_op *op)
{
	const struct mrail_trig_op *it;

	DL_FOREACH(q->head, it)
		if (it == op)
			return true;
	return false;
}

int mrail_trig_arm(struct mrail_trig_queue *q, struct mrail_trig_op *op,
		   uint64_t threshold)
{
	struct mrail_trig_op *after;

	if (op->state == MRAIL_TRIG_PENDING)
		return -EBUSY;
	op->threshold = threshold;
	op->seq = q->next_seq++;
	op->state = MRAIL_TRIG_PENDING;
	op->prev = op->next = NULL;
	/*
	 * Insert after the last op with a threshold <= this one, so equal
	 * thresholds keep posting order. Searched from the tail: chains are
	 * mostly armed in increasing threshold order, which makes this O(1).
	 */
	after = q->head ? q->head->prev : NULL;
	while (after && after->threshold > threshold)
		after = after == q->head ? NULL : after->prev;
	if (after)
		DL_APPEND_ELEM(q->head, after, op);
	else
		DL_PREPEND(q->head, op);
	q->pending++;
	return threshold <= q->value;
}

void mrail_trig_set_value(struct mrail_trig_queue *q, uint64_t value)
{
	q->value = value;
}

struct mrail_trig_op *mrail_trig_pop_ready(struct mrail_trig_queue *q)
{
	struct mrail_trig_op *op = q->head;

	if (!op || op->threshold > q->value)
		return NULL;
	DL_DELETE(q->head, op);
	op->prev = op->next = NULL;
	op->state = MRAIL_TRIG_FIRED;
	q->pending--;
	return op;
}

size_t mrail_trig_take_ready(struct mrail_trig_queue *q, uint64_t value,
			     struct mrail_trig_op **ready)
{
	struct mrail_trig_op *op;
	size_t n = 0;

	mrail_trig_set_value(q, value);
	while ((op = mrail_trig_pop_ready(q))) {
		DL_APPEND(*ready, op);
		n++;
	}
	return n;
}

int mrail_trig_cancel(struct mrail_trig_queue *q, struct mrail_trig_op *op)
{
	/* The state alone cannot tell which queue holds op. */
	if (op->state != MRAIL_TRIG_PENDING || !in_queue(q, op))
		return -ENOENT;
	DL_DELETE(q->head, op);
	op->prev = op->next = NULL;
	op->state = MRAIL_TRIG_CANCELLED;
	q->pending--;
	return 0;
}

int mrail_trig_next_threshold(const struct mrail_trig_queue *q,
			      uint64_t *threshold)
{
	if (!q->head)
		return -ENOENT;
	*threshold = q->head->threshold;
	return 0;
}
