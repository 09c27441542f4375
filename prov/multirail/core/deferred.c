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

size_t mrail_deferred_drain(struct mrail_deferred_item **list,
			    int (*try_send)(struct mrail_deferred_item *item, void *arg),
			    void (*done)(struct mrail_deferred_item *item, int ret, void *arg),
			    void *arg)
{
	struct mrail_deferred_item *item, *tmp;
	uint32_t blocked = 0, bit;
	size_t left = 0;
	int ret;

	LL_FOREACH_SAFE(*list, item, tmp) {
		bit = order_bit(item);
		if (blocked & bit)
			continue;
		ret = try_send(item, arg);
		if (ret == -EAGAIN) {
			blocked |= bit;
			continue;
		}
		LL_DELETE(*list, item);
		left++;
		done(item, ret, arg);
	}
	return left;
}
