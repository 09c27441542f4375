/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The matching engine (see match.h).
 *
 * Both queues are utlist doubly linked lists kept in arrival order, so the
 * head is always the oldest candidate and a first-fit walk gives the
 * ordering fi_msg(3) and fi_tagged(3) promise. An item leaves a queue with
 * its links cleared: prev == NULL then reads as "in no queue", which lets a
 * late cancel or a second removal of the same item do no harm.
 *
 * Claimed messages stay in the unexpected queue (and in its count) until
 * their paired FI_CLAIM receive takes them; every other walk steps over
 * them, as if they had already gone.
 */
#include <utlist.h>

#include "match.h"

void mrail_match_queue_init(struct mrail_match_queue *q)
{
	q->posted = NULL;
	q->unexpected = NULL;
	q->posted_count = 0;
	q->unexpected_count = 0;
}

static bool source_matches(const struct mrail_match_item *recv,
			   const struct mrail_match_item *msg)
{
	return recv->src == MRAIL_MATCH_ANY_SRC || recv->src == msg->src;
}

/* fi_tagged(3): send_tag & ~ignore == recv_tag & ~ignore. */
static bool tag_matches(const struct mrail_match_item *recv,
			const struct mrail_match_item *msg)
{
	return ((recv->tag ^ msg->tag) & ~recv->ignore) == 0;
}

bool mrail_match_accepts(const struct mrail_match_item *recv,
			 const struct mrail_match_item *msg)
{
	return source_matches(recv, msg) && tag_matches(recv, msg);
}

static void unlink_posted(struct mrail_match_queue *q,
			  struct mrail_match_item *recv)
{
	DL_DELETE(q->posted, recv);
	recv->prev = NULL;
	recv->next = NULL;
	q->posted_count--;
}

static void unlink_unexpected(struct mrail_match_queue *q,
			      struct mrail_match_item *msg)
{
	DL_DELETE(q->unexpected, msg);
	msg->prev = NULL;
	msg->next = NULL;
	q->unexpected_count--;
}

/* The oldest message a receive (or a probe) may see: claimed ones are not. */
static struct mrail_match_item *
oldest_unexpected_for(const struct mrail_match_queue *q,
		      const struct mrail_match_item *recv)
{
	struct mrail_match_item *msg;

	DL_FOREACH(q->unexpected, msg) {
		if (!msg->claimed && mrail_match_accepts(recv, msg))
			return msg;
	}
	return NULL;
}

static struct mrail_match_item *
oldest_posted_for(const struct mrail_match_queue *q,
		  const struct mrail_match_item *msg)
{
	struct mrail_match_item *recv;

	DL_FOREACH(q->posted, recv) {
		if (mrail_match_accepts(recv, msg))
			return recv;
	}
	return NULL;
}

struct mrail_match_item *mrail_match_post_recv(struct mrail_match_queue *q,
					       struct mrail_match_item *recv)
{
	struct mrail_match_item *msg = oldest_unexpected_for(q, recv);

	if (msg) {
		unlink_unexpected(q, msg);
		return msg;
	}
	DL_APPEND(q->posted, recv);
	q->posted_count++;
	return NULL;
}

struct mrail_match_item *mrail_match_arrive(struct mrail_match_queue *q,
					    struct mrail_match_item *msg)
{
	struct mrail_match_item *recv = oldest_posted_for(q, msg);

	if (recv) {
		unlink_posted(q, recv);
		return recv;
	}
	/* A fresh arrival belongs to nobody, whatever the caller's item held. */
	msg->claimed = false;
	msg->claim_context = NULL;
	DL_APPEND(q->unexpected, msg);
	q->unexpected_count++;
	return NULL;
}

void mrail_match_repost_front(struct mrail_match_queue *q,
			      struct mrail_match_item *recv)
{
	DL_PREPEND(q->posted, recv);
	q->posted_count++;
}

bool mrail_multi_space_claim(struct mrail_multi_space *space, uint64_t len,
			     size_t *offset, size_t *take)
{
	size_t left;

	/* A corrupted used must not let a message run past the buffer. */
	if (space->used > space->cap)
		space->used = space->cap;
	left = space->cap - space->used;
	*offset = space->used;
	*take = len < left ? (size_t) len : left;
	space->used += *take;
	left -= *take;
	return !left || left < space->min;
}

struct mrail_match_item *mrail_match_peek(struct mrail_match_queue *q,
					  const struct mrail_match_item *probe)
{
	return oldest_unexpected_for(q, probe);
}

void mrail_match_claim(struct mrail_match_item *msg, void *context)
{
	msg->claimed = true;
	msg->claim_context = context;
}

struct mrail_match_item *mrail_match_take_claimed(struct mrail_match_queue *q,
						  void *context)
{
	struct mrail_match_item *msg;

	DL_FOREACH(q->unexpected, msg) {
		if (msg->claimed && msg->claim_context == context) {
			unlink_unexpected(q, msg);
			return msg;
		}
	}
	return NULL;
}

/*
 * The caller names a message it got from peek (or knows is queued), so no
 * walk is needed to find it; one already removed is left alone.
 */
void mrail_match_remove_unexpected(struct mrail_match_queue *q,
				   struct mrail_match_item *msg)
{
	if (!msg->prev)
		return;
	unlink_unexpected(q, msg);
}

/*
 * fi_cancel names its receive by context, which may be long completed or
 * matched by the time the call comes; only a walk of the posted queue
 * proves the item is there, and cancel is rare enough to afford it.
 */
bool mrail_match_cancel_recv(struct mrail_match_queue *q,
			     struct mrail_match_item *recv)
{
	struct mrail_match_item *cur;

	DL_FOREACH(q->posted, cur) {
		if (cur == recv) {
			unlink_posted(q, recv);
			return true;
		}
	}
	return false;
}
