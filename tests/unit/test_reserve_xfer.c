/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/reserve_xfer.c, a transfer's account of its rail
 * reservations, with a simulated clock: it asks, waits, goes on what it was
 * granted, retries, times out and falls back, and never waits for ever
 * unless another transfer of its own holds the rails. Then a small
 * simulation of two endpoints with reserve.c's ports on every rail and one
 * transfer each way at the same time (crossing transfers): both complete,
 * on reserved rails, no port is ever held by both, and every port ends
 * FREE.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "policy.h"
#include "reserve.h"
#include "reserve_xfer.h"

#define MS 1000000ull
#define TIMEOUT (1000 * MS)
#define RETRY MS
#define MAX_WAIT (20 * TIMEOUT)

Test(xfer, asks_waits_for_every_answer_then_goes_on_the_grants)
{
	struct mrail_rsv_xfer x;

	mrail_rsv_xfer_start(&x, 0, TIMEOUT, MAX_WAIT);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0xf, false, 0, TIMEOUT),
		     MRAIL_RSV_NEXT_ASK);
	mrail_rsv_xfer_asked(&x, 0x7, 0, RETRY);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0x8, false, 1, TIMEOUT),
		     MRAIL_RSV_NEXT_WAIT);
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 0, true), 0);
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 1, false), 0);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0x8, false, 2, TIMEOUT),
		     MRAIL_RSV_NEXT_WAIT, "rail 2 has not answered");
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 2, true), 0);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0x8, false, 3, TIMEOUT),
		     MRAIL_RSV_NEXT_GO);
	cr_assert_eq(x.granted, 0x5);
	cr_assert_eq(x.asked, 0);
}

Test(xfer, answers_for_rails_not_asked_are_refused)
{
	struct mrail_rsv_xfer x;

	mrail_rsv_xfer_start(&x, 0, TIMEOUT, MAX_WAIT);
	mrail_rsv_xfer_asked(&x, 0x2, 0, RETRY);
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 0, true), -1);
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 32, true), -1);
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 1000, true), -1);
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 1, true), 0);
	cr_assert_eq(mrail_rsv_xfer_answer(&x, 1, true), -1, "answered twice");
	cr_assert_eq(x.granted, 0x2);
}

Test(xfer, refused_everywhere_retries_after_the_pause)
{
	struct mrail_rsv_xfer x;

	mrail_rsv_xfer_start(&x, 0, TIMEOUT, MAX_WAIT);
	mrail_rsv_xfer_asked(&x, 0x3, 0, RETRY);
	mrail_rsv_xfer_answer(&x, 0, false);
	mrail_rsv_xfer_answer(&x, 1, false);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0x3, false, RETRY - 1, TIMEOUT),
		     MRAIL_RSV_NEXT_WAIT);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0x3, false, RETRY, TIMEOUT),
		     MRAIL_RSV_NEXT_ASK);
	/* No free rail: nothing to ask for. */
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, RETRY, TIMEOUT),
		     MRAIL_RSV_NEXT_WAIT);
}

Test(xfer, a_peer_that_never_answers_costs_one_timeout)
{
	struct mrail_rsv_xfer x;

	mrail_rsv_xfer_start(&x, 5, TIMEOUT, MAX_WAIT);
	mrail_rsv_xfer_asked(&x, 0x3, 5, RETRY);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, 5 + TIMEOUT - 1, TIMEOUT),
		     MRAIL_RSV_NEXT_WAIT);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, 5 + TIMEOUT, TIMEOUT),
		     MRAIL_RSV_NEXT_TIMEOUT);
	/* The caller abandons both requests: nothing granted, unreserved. */
	mrail_rsv_xfer_answer(&x, 0, false);
	mrail_rsv_xfer_answer(&x, 1, false);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0x3, false, 5 + TIMEOUT, TIMEOUT),
		     MRAIL_RSV_NEXT_FALLBACK);
}

Test(xfer, a_timeout_keeps_the_rails_already_granted)
{
	struct mrail_rsv_xfer x;

	mrail_rsv_xfer_start(&x, 0, TIMEOUT, MAX_WAIT);
	mrail_rsv_xfer_asked(&x, 0x3, 0, RETRY);
	mrail_rsv_xfer_answer(&x, 1, true);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, TIMEOUT, TIMEOUT),
		     MRAIL_RSV_NEXT_TIMEOUT);
	mrail_rsv_xfer_answer(&x, 0, false);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, TIMEOUT, TIMEOUT),
		     MRAIL_RSV_NEXT_GO);
	cr_assert_eq(x.granted, 0x2);
}

Test(xfer, rails_a_peer_holds_for_ever_cost_one_timeout)
{
	struct mrail_rsv_xfer x;

	mrail_rsv_xfer_start(&x, 0, TIMEOUT, MAX_WAIT);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, TIMEOUT - 1, TIMEOUT),
		     MRAIL_RSV_NEXT_WAIT);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, TIMEOUT, TIMEOUT),
		     MRAIL_RSV_NEXT_FALLBACK);
}

Test(xfer, our_own_transfers_holding_the_rails_move_the_deadline)
{
	struct mrail_rsv_xfer x;
	uint64_t t;

	mrail_rsv_xfer_start(&x, 0, TIMEOUT, MAX_WAIT);
	for (t = 0; t <= 10 * TIMEOUT; t += TIMEOUT / 4)
		cr_assert_eq(mrail_rsv_xfer_next(&x, 0, true, t, TIMEOUT),
			     MRAIL_RSV_NEXT_WAIT, "at %llu ns",
			     (unsigned long long) t);
	/* They end: the rails are free, ask at once. */
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0x1, false, t, TIMEOUT),
		     MRAIL_RSV_NEXT_ASK);
	/* A rail still not free after a whole timeout: give up. */
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, false, t + TIMEOUT, TIMEOUT),
		     MRAIL_RSV_NEXT_FALLBACK);
}

/* ---- two endpoints, crossing transfers ---- */

#define RAILS 2
#define NODES 2
#define QCAP 256

struct sim_msg {
	unsigned rail;
	struct mrail_rsv_msg msg;
};

struct sim_node {
	uint32_t id;
	struct mrail_rsv_rail port[RAILS];
	struct mrail_rsv_xfer xfer;
	uint8_t cursor;
	bool waiting, holding, done, fell_back;
	uint32_t holds;
	uint64_t finish_at;
};

struct sim {
	struct sim_node node[NODES];
	struct sim_msg q[QCAP];
	size_t head, tail;
	uint64_t rng;
};

static void sim_push(struct sim *s, unsigned rail, const struct mrail_rsv_actions *a)
{
	size_t i;

	for (i = 0; i < a->count; i++) {
		cr_assert_lt(s->tail - s->head, QCAP);
		s->q[s->tail % QCAP] = (struct sim_msg) { rail, a->msg[i] };
		s->tail++;
	}
}

static struct sim_node *sim_by_id(struct sim *s, uint32_t id)
{
	return s->node[0].id == id ? &s->node[0] : &s->node[1];
}

static void sim_notice(struct sim_node *n, unsigned rail,
		       const struct mrail_rsv_actions *a)
{
	if (a->notice == MRAIL_RSV_NOTICE_NONE)
		return;
	cr_assert_eq(mrail_rsv_xfer_answer(&n->xfer, rail,
					   a->notice == MRAIL_RSV_NOTICE_GRANTED), 0,
		     "a notice for a rail the transfer did not ask for");
}

/* Delivers the queued messages, in FIFO order, the ports answering. */
static void sim_deliver(struct sim *s)
{
	struct mrail_rsv_actions a;
	struct mrail_rsv_event ev;
	struct sim_node *to;
	struct sim_msg m;

	while (s->head != s->tail) {
		m = s->q[s->head % QCAP];
		s->head++;
		to = sim_by_id(s, m.msg.to);
		cr_assert_eq(mrail_rsv_event_from_msg(&m.msg, to->id, &ev), 0);
		cr_assert_eq(mrail_rsv_step(&to->port[m.rail], &ev, &a), 0);
		sim_push(s, m.rail, &a);
		sim_notice(to, m.rail, &a);
	}
}

/* One round of node n's transfer at time now. */
static void sim_node_step(struct sim *s, struct sim_node *n, struct sim_node *peer,
			  uint64_t now)
{
	struct mrail_rsv_event ev = { .peer = peer->id };
	struct mrail_rsv_actions a;
	uint32_t free_rails = 0, chosen = 0;
	unsigned r;

	if (n->holding && now >= n->finish_at) {
		for (r = 0; r < RAILS; r++) {
			if (!(n->holds & (1u << r)))
				continue;
			ev.type = MRAIL_RSV_LOCAL_ABORT;
			cr_assert_eq(mrail_rsv_step(&n->port[r], &ev, &a), 0);
			sim_push(s, r, &a);
		}
		n->holding = false;
		n->done = true;
	}
	if (!n->waiting)
		return;
	for (r = 0; r < RAILS; r++)
		free_rails |= n->port[r].state == MRAIL_RSV_FREE ? 1u << r : 0;
	switch (mrail_rsv_xfer_next(&n->xfer, free_rails, false, now, TIMEOUT)) {
	case MRAIL_RSV_NEXT_WAIT:
		break;
	case MRAIL_RSV_NEXT_ASK:
		cr_assert_gt(mrail_select_rails(free_rails, RAILS, 1.0, &n->cursor,
						&chosen), 0);
		ev.type = MRAIL_RSV_LOCAL_RTS;
		for (r = 0; r < RAILS; r++) {
			if (!(chosen & (1u << r)))
				continue;
			cr_assert_eq(mrail_rsv_step(&n->port[r], &ev, &a), 0);
			sim_push(s, r, &a);
		}
		mrail_rsv_xfer_asked(&n->xfer, chosen, now, RETRY);
		break;
	case MRAIL_RSV_NEXT_TIMEOUT:
		cr_assert_fail("a peer that answers at once timed out");
		break;
	case MRAIL_RSV_NEXT_GO:
		n->waiting = false;
		n->holding = true;
		n->holds = n->xfer.granted;
		n->finish_at = now + 5 * MS;
		break;
	case MRAIL_RSV_NEXT_FALLBACK:
		n->waiting = false;
		n->fell_back = true;
		n->done = true;
		break;
	}
}

/* No rail ever carries both transfers: the one holding it has the other
 * end's port granted to it. */
static void sim_check_exclusive(const struct sim *s)
{
	unsigned r, i;

	for (r = 0; r < RAILS; r++) {
		for (i = 0; i < NODES; i++) {
			const struct sim_node *n = &s->node[i], *o = &s->node[1 - i];

			if (!n->holding || !(n->holds & (1u << r)))
				continue;
			cr_assert_eq(n->port[r].state, MRAIL_RSV_SENDING);
			cr_assert_not(o->holding && (o->holds & (1u << r)),
				      "rail %u held by both transfers", r);
		}
	}
}

static void sim_run(uint32_t id_a, uint32_t id_b, int32_t ca, int32_t cb)
{
	struct sim s;
	uint64_t now;
	unsigned i, r, first;

	memset(&s, 0, sizeof(s));
	s.node[0].id = id_a;
	s.node[1].id = id_b;
	for (i = 0; i < NODES; i++) {
		for (r = 0; r < RAILS; r++)
			mrail_rsv_init(&s.node[i].port[r], s.node[i].id,
				       i ? cb : ca);
		mrail_rsv_xfer_start(&s.node[i].xfer, 0, TIMEOUT, MAX_WAIT);
		s.node[i].waiting = true;
	}
	for (now = 0; now < 100 * MS; now += MS) {
		/* Both ask in the same round: their requests cross. */
		for (i = 0; i < NODES; i++)
			sim_node_step(&s, &s.node[i], &s.node[1 - i], now);
		sim_deliver(&s);
		sim_check_exclusive(&s);
		if (s.node[0].done && s.node[1].done)
			break;
	}
	first = 0;
	for (i = 0; i < NODES; i++) {
		cr_assert(s.node[i].done, "node %u's transfer never ended", i);
		cr_assert_not(s.node[i].fell_back, "node %u went unreserved", i);
		cr_assert_eq(s.node[i].holds, (1u << RAILS) - 1,
			     "node %u striped over rails 0x%x, not all", i,
			     s.node[i].holds);
		for (r = 0; r < RAILS; r++)
			cr_assert_eq(s.node[i].port[r].state, MRAIL_RSV_FREE,
				     "node %u rail %u left in state %d", i, r,
				     s.node[i].port[r].state);
		first += s.node[i].finish_at < s.node[1 - i].finish_at;
	}
	cr_assert_eq(first, 1, "one transfer went first, the other after it");
}

Test(xfer_sim, crossing_transfers_both_complete_one_after_the_other)
{
	sim_run(1, 2, 0, 0);
	sim_run(2, 1, 0, 0);
	sim_run(1, 2, 3, -3);
	sim_run(0xfffffff0u, 7, 0, 0);
}

Test(xfer, our_own_transfers_delay_it_at_most_max_wait)
{
	struct mrail_rsv_xfer x;
	uint64_t t;

	/* One of them may be stuck on a peer that went away. */
	mrail_rsv_xfer_start(&x, 7, TIMEOUT, MAX_WAIT);
	for (t = 7; t < 7 + MAX_WAIT; t += TIMEOUT / 4)
		cr_assert_eq(mrail_rsv_xfer_next(&x, 0, true, t, TIMEOUT),
			     MRAIL_RSV_NEXT_WAIT, "at %llu ns",
			     (unsigned long long) t);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, true, 7 + MAX_WAIT, TIMEOUT),
		     MRAIL_RSV_NEXT_FALLBACK);
	/* A max_wait below the timeout is the timeout. */
	mrail_rsv_xfer_start(&x, 0, TIMEOUT, 1);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, true, TIMEOUT - 1, TIMEOUT),
		     MRAIL_RSV_NEXT_WAIT);
	cr_assert_eq(mrail_rsv_xfer_next(&x, 0, true, TIMEOUT, TIMEOUT),
		     MRAIL_RSV_NEXT_FALLBACK);
}
