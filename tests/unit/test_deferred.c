/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The deferred-work queue's order rule (core/deferred.c), with simulated
 * rails whose free transmit buffers the test sets.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "deferred.h"

#define ANY MRAIL_DEFERRED_ANY_RAIL

struct msg {
	struct mrail_deferred_item item;	/* first: the list links */
	int id;
};

/* Simulated rails: free buffers per rail (index MRAIL_MAX_RAILS: the
 * policy's pick, for ANY), ids that can never go, the peers whose rail
 * connections never come up (from unreachable_from on; 0: none), and what
 * happened. */
struct sim {
	int free[MRAIL_MAX_RAILS + 1];
	int broken_id;
	uint64_t unreachable_from;
	int tried[64], ntried;
	int sent[64], nsent;
	int failed[64], nfailed;
};

static int sim_try(struct mrail_deferred_item *item, void *arg)
{
	struct sim *s = arg;
	struct msg *m = (struct msg *) item;
	size_t slot = item->rail == ANY ? MRAIL_MAX_RAILS : item->rail;

	s->tried[s->ntried++] = m->id;
	if (m->id == s->broken_id)
		return -EINVAL;
	if (s->unreachable_from && item->peer >= s->unreachable_from)
		return -EAGAIN;
	if (!s->free[slot])
		return -EAGAIN;
	s->free[slot]--;
	return 0;
}

static void sim_done(struct mrail_deferred_item *item, int ret, void *arg)
{
	struct sim *s = arg;
	struct msg *m = (struct msg *) item;

	if (ret)
		s->failed[s->nfailed++] = m->id;
	else
		s->sent[s->nsent++] = m->id;
}

static struct mrail_deferred_item *queue(struct msg *msgs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		msgs[i].item.next = i + 1 < n ? &msgs[i + 1].item : NULL;
	return n ? &msgs[0].item : NULL;
}

static void assert_ids(const int *got, int n, const int *want, int nwant)
{
	int i;

	cr_assert_eq(n, nwant, "%d ids, want %d", n, nwant);
	for (i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "id %d is %d, want %d", i, got[i], want[i]);
}

Test(deferred, all_go_in_order_when_buffers_are_free)
{
	struct msg m[] = { { { NULL, 0, 0 }, 1 }, { { NULL, ANY, 0 }, 2 }, { { NULL, 1, 0 }, 3 } };
	struct sim s = { .free = { 5, 5, [MRAIL_MAX_RAILS] = 5 }, .broken_id = -1 };
	struct mrail_deferred_item *list = queue(m, 3);

	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 3);
	cr_assert_null(list);
	assert_ids(s.sent, s.nsent, (int[]) { 1, 2, 3 }, 3);
}

Test(deferred, a_full_rail_holds_back_only_its_own_later_messages)
{
	/* Rail 0 has no buffer: 1 and 4 stay (4 untried), 2, 3 and 5 go. */
	struct msg m[] = { { { NULL, 0, 0 }, 1 }, { { NULL, 1, 0 }, 2 }, { { NULL, ANY, 0 }, 3 },
			   { { NULL, 0, 0 }, 4 }, { { NULL, 1, 0 }, 5 } };
	struct sim s = { .free = { 0, 5, [MRAIL_MAX_RAILS] = 5 }, .broken_id = -1 };
	struct mrail_deferred_item *list = queue(m, 5);

	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 3);
	assert_ids(s.tried, s.ntried, (int[]) { 1, 2, 3, 5 }, 4);
	assert_ids(s.sent, s.nsent, (int[]) { 2, 3, 5 }, 3);
	cr_assert_eq(list, &m[0].item);
	cr_assert_eq(list->next, &m[3].item);
	cr_assert_null(list->next->next);
}

Test(deferred, an_any_rail_message_refused_holds_back_the_later_any_rail_ones)
{
	/* One ANY buffer: 1 goes, 2 is refused, 4 stays untried; the rail-1
	 * message between them still goes. */
	struct msg m[] = { { { NULL, ANY, 0 }, 1 }, { { NULL, ANY, 0 }, 2 }, { { NULL, 1, 0 }, 3 },
			   { { NULL, ANY, 0 }, 4 } };
	struct sim s = { .free = { 0, 1, [MRAIL_MAX_RAILS] = 1 }, .broken_id = -1 };
	struct mrail_deferred_item *list = queue(m, 4);

	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 2);
	assert_ids(s.tried, s.ntried, (int[]) { 1, 2, 3 }, 3);
	assert_ids(s.sent, s.nsent, (int[]) { 1, 3 }, 2);
	cr_assert_eq(list, &m[1].item);
	cr_assert_eq(list->next, &m[3].item);

	/* Buffers came back: the next drain sends the rest in order. */
	s.free[MRAIL_MAX_RAILS] = 2;
	s.ntried = s.nsent = 0;
	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 2);
	assert_ids(s.sent, s.nsent, (int[]) { 2, 4 }, 2);
	cr_assert_null(list);
}

Test(deferred, a_peer_that_cannot_be_reached_holds_back_only_its_own_messages)
{
	/* Peer 7's connection never comes up: its any-rail 1 and 4 and its
	 * rail-0 message 5 stay (4 untried: it follows 1), while peer 2's
	 * answers behind them go, in order. */
	struct msg m[] = { { { NULL, ANY, 7 }, 1 }, { { NULL, ANY, 2 }, 2 },
			   { { NULL, ANY, 2 }, 3 }, { { NULL, ANY, 7 }, 4 },
			   { { NULL, 0, 7 }, 5 }, { { NULL, 0, 2 }, 6 } };
	struct sim s = { .free = { 5, 5, [MRAIL_MAX_RAILS] = 5 }, .broken_id = -1,
			 .unreachable_from = 7 };
	struct mrail_deferred_item *list = queue(m, 6);

	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 3);
	assert_ids(s.tried, s.ntried, (int[]) { 1, 2, 3, 5, 6 }, 5);
	assert_ids(s.sent, s.nsent, (int[]) { 2, 3, 6 }, 3);
	cr_assert_eq(list, &m[0].item);
	cr_assert_eq(list->next, &m[3].item);
	cr_assert_eq(list->next->next, &m[4].item);
	cr_assert_null(list->next->next->next);
}

Test(deferred, past_the_peers_it_tells_apart_a_refusal_holds_back_its_kind_for_all)
{
	/* One more unreachable peer than the drain tells apart: after the
	 * last refusal, a later any-rail message to a reachable peer waits
	 * too (no peer's order can break), while a rail-0 one still goes. */
	enum { N = MRAIL_DEFERRED_BLOCKED_PEERS + 1 };
	struct msg m[N + 2];
	struct sim s = { .free = { 5, 5, [MRAIL_MAX_RAILS] = 5 }, .broken_id = -1,
			 .unreachable_from = 100 };
	struct mrail_deferred_item *list;
	int i;

	for (i = 0; i < N; i++)
		m[i] = (struct msg) { { NULL, ANY, 100 + (uint64_t) i }, i + 1 };
	m[N] = (struct msg) { { NULL, ANY, 1 }, N + 1 };
	m[N + 1] = (struct msg) { { NULL, 0, 1 }, N + 2 };
	list = queue(m, N + 2);

	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 1);
	cr_assert_eq(s.ntried, N + 1, "tried %d", s.ntried);
	assert_ids(s.sent, s.nsent, (int[]) { N + 2 }, 1);
	cr_assert_eq(s.tried[N], N + 2);
}

Test(deferred, a_message_that_can_never_go_leaves_and_blocks_nothing)
{
	struct msg m[] = { { { NULL, 0, 0 }, 1 }, { { NULL, 0, 0 }, 2 } };
	struct sim s = { .free = { 1 }, .broken_id = 1 };
	struct mrail_deferred_item *list = queue(m, 2);

	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 2);
	assert_ids(s.failed, s.nfailed, (int[]) { 1 }, 1);
	assert_ids(s.sent, s.nsent, (int[]) { 2 }, 1);
	cr_assert_null(list);
}

Test(deferred, an_empty_list_tries_nothing)
{
	struct sim s = { .broken_id = -1 };
	struct mrail_deferred_item *list = NULL;

	cr_assert_eq(mrail_deferred_drain(&list, sim_try, sim_done, &s), 0);
	cr_assert_eq(s.ntried, 0);
}
