/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-peer delivery order (see reorder.h).
 *
 * Sequence numbers are compared as serial numbers (RFC 1982): only the
 * distance seq - next, taken modulo 2^64, is ever looked at, so nothing
 * overflows and a stream that runs past UINT64_MAX keeps its order. A
 * distance below the window is a slot we can fill; a distance in the upper
 * half of the number space means seq lies behind next, i.e. was delivered
 * already; anything in between is too far ahead.
 *
 * Every held item has a sequence number in [next, next + window): a push
 * outside that range is refused and pop only ever advances next past the
 * slot it empties. So a slot index names at most one live sequence number,
 * and an occupied slot on push can only be the same seq arriving again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "reorder.h"


/* Distances at or beyond this are sequence numbers behind next. */
#define SEQ_BEHIND ((uint64_t) 1 << 63)

static bool window_is_valid(size_t window)
{
	return window >= 1 && window <= MRAIL_REORDER_WINDOW_MAX &&
	       (window & (window - 1)) == 0;
}

static size_t slot_of(const struct mrail_reorder *r, uint64_t seq)
{
	return (size_t) (seq & (r->window - 1));
}

int mrail_reorder_init(struct mrail_reorder *r, size_t window)
{
	if (!r)
		return -EINVAL;

	/* Leave a state fini accepts, whatever happens below. */
	r->next = 0;
	r->window = 0;
	r->held = 0;
	r->slots = NULL;
	r->slot_seq = NULL;

	if (!window_is_valid(window))
		return -EINVAL;

	r->slots = calloc(window, sizeof(*r->slots));
	r->slot_seq = calloc(window, sizeof(*r->slot_seq));
	if (!r->slots || !r->slot_seq) {
		mrail_reorder_fini(r);
		return -ENOMEM;
	}
	r->window = window;
	return 0;
}

void mrail_reorder_fini(struct mrail_reorder *r)
{
	free(r->slots);
	free(r->slot_seq);
	r->slots = NULL;
	r->slot_seq = NULL;
	r->window = 0;
	r->held = 0;
}

int mrail_reorder_push(struct mrail_reorder *r, uint64_t seq, void *item)
{
	uint64_t distance = seq - r->next;
	size_t slot;

	/* NULL is what pop and drain return for "nothing": not storable. */
	if (!item)
		return -EINVAL;

	if (distance >= r->window)
		return distance >= SEQ_BEHIND ? -EALREADY : -ERANGE;

	slot = slot_of(r, seq);
	if (r->slots[slot])
		return -EALREADY;

	r->slots[slot] = item;
	r->slot_seq[slot] = seq;
	r->held++;
	return 0;
}

void *mrail_reorder_pop(struct mrail_reorder *r)
{
	size_t slot;
	void *item;

	if (!r->held)
		return NULL;

	/* The invariant above makes the seq check redundant; it is there so
	 * that a slot corrupted anyhow is never delivered out of order. */
	slot = slot_of(r, r->next);
	item = r->slots[slot];
	if (!item || r->slot_seq[slot] != r->next)
		return NULL;

	r->slots[slot] = NULL;
	r->held--;
	r->next++;
	return item;
}

/*
 * Walks forward from next and gives the held items up in sequence order,
 * advancing next past each one (and past the gaps before it): the whole
 * drain then costs one pass over the window however many items are held,
 * and a late copy of a released item counts as a duplicate rather than
 * being accepted a second time.
 */
void *mrail_reorder_drain(struct mrail_reorder *r)
{
	size_t slot;
	void *item;

	while (r->held) {
		slot = slot_of(r, r->next);
		item = r->slots[slot];
		r->next++;
		if (!item)
			continue;

		r->slots[slot] = NULL;
		r->held--;
		return item;
	}
	return NULL;
}
