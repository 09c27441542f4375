/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The matching engine: pairs posted receives with arriving messages the way
 * fi_msg(3) and fi_tagged(3) define it. A receive takes the oldest matching
 * unexpected message; an arriving message takes the oldest matching posted
 * receive; whatever finds no partner waits in its queue in arrival order.
 *
 * Items are embedded in the caller's request structures (no allocation
 * here) and linked with uthash's utlist. One mrail_match_queue serves one
 * kind of receive (untagged or tagged): untagged items use tag 0, ignore 0.
 */
#ifndef MRAIL_MATCH_H
#define MRAIL_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A receive from any peer (the value of FI_ADDR_UNSPEC). */
#define MRAIL_MATCH_ANY_SRC UINT64_MAX

struct mrail_match_item {
	struct mrail_match_item *prev, *next;	/* utlist DL links */
	uint64_t src;		/* message: sender; receive: sender or ANY */
	uint64_t tag;
	uint64_t ignore;	/* receive only: tag bits that need not match */
	void *claim_context;	/* message claimed by FI_PEEK|FI_CLAIM */
	bool claimed;
};

struct mrail_match_queue {
	struct mrail_match_item *posted;	/* receives waiting for a message */
	struct mrail_match_item *unexpected;	/* messages waiting for a receive,
						 * claimed ones included */
	size_t posted_count;
	size_t unexpected_count;
};

void mrail_match_queue_init(struct mrail_match_queue *q);

/* Whether receive recv accepts message msg (source and tag rules). */
bool mrail_match_accepts(const struct mrail_match_item *recv,
			 const struct mrail_match_item *msg);

/*
 * A receive is posted: returns the oldest unclaimed unexpected message it
 * accepts, removed from the queue; or NULL, and recv is queued as posted.
 */
struct mrail_match_item *mrail_match_post_recv(struct mrail_match_queue *q,
					       struct mrail_match_item *recv);

/*
 * A message arrives (in sequence order): returns the oldest posted receive
 * that accepts it, removed from the queue; or NULL, and msg is queued as
 * unexpected.
 */
struct mrail_match_item *mrail_match_arrive(struct mrail_match_queue *q,
					    struct mrail_match_item *msg);

/*
 * A receive that must keep its place (FI_MULTI_RECV with room left) goes
 * back to the head of the posted queue, ahead of younger receives. recv must
 * not be in a queue already.
 */
void mrail_match_repost_front(struct mrail_match_queue *q,
			      struct mrail_match_item *recv);

/*
 * The space of an FI_MULTI_RECV buffer: messages are packed into it one
 * after the other, in matching order, until less than min bytes are left.
 */
struct mrail_multi_space {
	size_t cap;	/* the buffer's length */
	size_t used;	/* bytes claimed by messages so far */
	size_t min;	/* FI_OPT_MIN_MULTI_RECV when the buffer was posted */
};

/*
 * A message of len bytes takes the next part of the buffer: *offset is where
 * it starts, *take how many of its bytes fit (the rest is truncated).
 * Returns true when the buffer must be released after this message: less
 * than min bytes are left, or none at all (min 0 would otherwise keep a full
 * buffer posted forever).
 */
bool mrail_multi_space_claim(struct mrail_multi_space *space, uint64_t len,
			     size_t *offset, size_t *take);

/*
 * FI_PEEK: the oldest unclaimed unexpected message that probe (a receive
 * description) accepts, left in the queue; NULL if none.
 */
struct mrail_match_item *mrail_match_peek(struct mrail_match_queue *q,
					  const struct mrail_match_item *probe);

/* FI_PEEK|FI_CLAIM: marks msg (returned by peek) as reserved for context. */
void mrail_match_claim(struct mrail_match_item *msg, void *context);

/* FI_CLAIM on a receive: removes and returns the message claimed for
 * context; NULL if there is none. */
struct mrail_match_item *mrail_match_take_claimed(struct mrail_match_queue *q,
						  void *context);

/* Removes a message from the unexpected queue (FI_DISCARD, or delivery).
 * Items leave queues with NULL links, so removing a message this module has
 * already removed does nothing; any other item is undefined. */
void mrail_match_remove_unexpected(struct mrail_match_queue *q,
				   struct mrail_match_item *msg);

/* fi_cancel: removes recv if it is still posted. Returns true if it was. */
bool mrail_match_cancel_recv(struct mrail_match_queue *q,
			     struct mrail_match_item *recv);

#endif /* MRAIL_MATCH_H */
