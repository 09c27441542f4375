/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-peer delivery order. A sender numbers its EAGER and RTS messages to one
 * peer 0, 1, 2, ...; they may arrive out of order because they travel over
 * different rails. Matching must see them in send order (MPI's
 * non-overtaking rule), so early arrivals wait here for their turn.
 *
 * The window bounds how far ahead of the next expected message an arrival
 * may be; a peer beyond it is misbehaving (or its window is larger than
 * ours) and is refused rather than buffered without limit.
 */
#ifndef MRAIL_REORDER_H
#define MRAIL_REORDER_H

#include <stddef.h>
#include <stdint.h>

struct mrail_reorder {
	uint64_t next;		/* sequence number matching sees next */
	size_t window;		/* power of two */
	size_t held;		/* items pushed and not yet popped or drained */
	void **slots;		/* slots[seq & (window - 1)] */
	uint64_t *slot_seq;	/* which seq a slot holds (valid when slot set) */
};

/* The largest window mrail_reorder_init accepts. */
#define MRAIL_REORDER_WINDOW_MAX ((size_t) 1 << 20)

/* window: a power of two, 1..MRAIL_REORDER_WINDOW_MAX. Returns 0, -EINVAL
 * or -ENOMEM. After a failed init, fini is still safe. */
int mrail_reorder_init(struct mrail_reorder *r, size_t window);

/* Frees the slots; items still held are the caller's to release first
 * (mrail_reorder_drain). */
void mrail_reorder_fini(struct mrail_reorder *r);

/*
 * Records the arrival of seq carrying item. Distances are serial (seq - next
 * modulo 2^64), so the numbers may wrap. Returns 0; -EINVAL for a NULL item;
 * -EALREADY for a duplicate: one behind next (by less than 2^63) or already
 * held; -ERANGE for one at least window ahead of next.
 */
int mrail_reorder_push(struct mrail_reorder *r, uint64_t seq, void *item);

/* The item with sequence number next, advancing next; NULL if it has not
 * arrived yet. Call until NULL after every push. */
void *mrail_reorder_pop(struct mrail_reorder *r);

/* Removes and returns the held items in sequence order, advancing next past
 * each (and past the gaps before it), NULL when empty: for releasing
 * everything when a peer or endpoint goes away. A late copy of a drained
 * item is then refused as a duplicate. */
void *mrail_reorder_drain(struct mrail_reorder *r);

#endif /* MRAIL_REORDER_H */
