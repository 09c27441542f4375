/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The order rule of the deferred-work queue (src/mrail_tx.c): messages that
 * found no transmit buffer when they were due wait in a list, oldest first,
 * and each drain tries them in that order. A message bound to a rail waits
 * only for the earlier messages of that rail; a message any rail may carry
 * waits for every earlier one of its kind. So when one is refused for want
 * of a buffer (-EAGAIN), the later messages of its kind stay untried this
 * drain, and the others still go.
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
};

/*
 * One drain of *list in order. try_send(item, arg) returns 0 (sent),
 * -EAGAIN (no buffer: it stays, and so do the later items of its kind,
 * untried) or another negative value (it can never go). A sent item or one
 * that can never go leaves the list and is handed to done(item, ret, arg),
 * which may free it. Returns how many items left the list.
 */
size_t mrail_deferred_drain(struct mrail_deferred_item **list,
			    int (*try_send)(struct mrail_deferred_item *item, void *arg),
			    void (*done)(struct mrail_deferred_item *item, int ret, void *arg),
			    void *arg);

#endif /* MRAIL_DEFERRED_H */
