/* SPDX-License-Identifier: BSD-2-Clause */
#include "deferred.h"

#include <errno.h>

#include <utlist.h>

/* The kinds an item orders with: its rail's, or the any-rail kind. */
static uint32_t order_bit(const struct mrail_deferred_item *item)
{
	return item->rail == MRAIL_DEFERRED_ANY_RAIL ? 1u << MRAIL_MAX_RAILS
						     : 1u << item->rail;
}

/* The kinds refused so far in one drain, by peer. */
struct blocked_set {
	struct {
		uint64_t peer;
		uint32_t bits;
	} peers[MRAIL_DEFERRED_BLOCKED_PEERS];
	size_t count;
	uint32_t everyone;	/* kinds refused once the table was full */
};

static uint32_t blocked_bits(const struct blocked_set *set, uint64_t peer)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		if (set->peers[i].peer == peer)
			return set->peers[i].bits | set->everyone;
	}
	return set->everyone;
}

static void blocked_add(struct blocked_set *set, uint64_t peer, uint32_t bit)
{
	size_t i;

	for (i = 0; i < set->count; i++) {
		if (set->peers[i].peer == peer) {
			set->peers[i].bits |= bit;
			return;
		}
	}
	if (set->count == MRAIL_DEFERRED_BLOCKED_PEERS) {
		/* Conservative: later messages of this kind wait, whoever
		 * they go to, so no peer's order is ever broken. */
		set->everyone |= bit;
		return;
	}
	set->peers[set->count].peer = peer;
	set->peers[set->count].bits = bit;
	set->count++;
}

size_t mrail_deferred_drain(struct mrail_deferred_item **list,
			    int (*try_send)(struct mrail_deferred_item *item, void *arg),
			    void (*done)(struct mrail_deferred_item *item, int ret, void *arg),
			    void *arg)
{
	struct mrail_deferred_item *item, *tmp;
	struct blocked_set blocked = { .count = 0 };
	size_t left = 0;
	uint32_t bit;
	int ret;

	LL_FOREACH_SAFE(*list, item, tmp) {
		bit = order_bit(item);
		if (blocked_bits(&blocked, item->peer) & bit)
			continue;
		ret = try_send(item, arg);
		if (ret == -EAGAIN) {
			blocked_add(&blocked, item->peer, bit);
			continue;
		}
		LL_DELETE(*list, item);
		left++;
		done(item, ret, arg);
	}
	return left;
}
