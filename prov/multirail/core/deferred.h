/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The order rule of the deferred-work queue (src/mrail_tx.c): messages that
 * found no transmit buffer when they were due wait in a list, oldest first,
 * and each drain tries them in that order. Order matters only between
 * messages to the same peer: a message bound to a rail waits for the
 * earlier messages to its peer on that rail, and one any rail may carry
 * for the earlier any-rail ones to its peer. So when one is refused
 * (-EAGAIN: no buffer, or its peer's rail connection is not up), the later
 * messages of its kind to its peer stay untried this drain, and the others
 * still go: a peer that cannot be reached holds up no other peer's
 * answers.
 */
#ifndef MRAIL_DEFERRED_H
#define MRAIL_DEFERRED_H

#include <stddef.h>
#include <stdint.h>

#include "mrail_limits.h"

/* "Whichever rail the multiplexing policy picks". */
#define MRAIL_DEFERRED_ANY_RAIL SIZE_MAX

/* A waiting message: the caller's struct embeds it (utlist singly linked). */
struct mrail_deferred_item {
	struct mrail_deferred_item *next;
	size_t rail;		/* < MRAIL_MAX_RAILS, or MRAIL_DEFERRED_ANY_RAIL */
	uint64_t peer;		/* whom it goes to (an fi_addr_t) */
};

/* Peers whose messages one drain tells apart; past this many refused
 * peers, a refusal holds up its kind for every peer, as if one. */
#define MRAIL_DEFERRED_BLOCKED_PEERS 32

/*
 * One drain of *list in order. try_send(item, arg) returns 0 (sent),
 * -EAGAIN (no buffer: it stays, and so do the later items of its kind,
 * untried: only those to the same peer) or another negative value (it can never go). A sent item or one
 * that can never go leaves the list and is handed to done(item, ret, arg),
 * which may free it. Returns how many items left the list.
 */
size_t mrail_deferred_drain(struct mrail_deferred_item **list,
			    int (*try_send)(struct mrail_deferred_item *item, void *arg),
			    void (*done)(struct mrail_deferred_item *item, int ret, void *arg),
			    void *arg);

#endif /* MRAIL_DEFERRED_H */
