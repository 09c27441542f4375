/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/reserve.c, the endpoint-reserving protocol of Coll et al.
 * 2001 (Algorithms 2-5): single transitions, stale and bogus messages, and a
 * small simulator of several nodes exchanging control messages over per-link
 * FIFO queues, delivered in an order drawn from a fixed-seed generator. It
 * replays Fig. 2's three-NIC cycle (exactly one winner, the counters moving
 * as the paper says, nothing left reserved), then random traffic checking
 * that a port never carries data in both directions and every transfer
 * completes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdma/fi_ext_mrail.h>

#include "test_rng.h"

#include "policy.h"
#include "reserve.h"

_Static_assert((int) FI_MRAIL_RAIL_FREE == (int) MRAIL_RSV_FREE &&
	       (int) FI_MRAIL_RAIL_RESERVED == (int) MRAIL_RSV_RESERVED &&
	       (int) FI_MRAIL_RAIL_SENDING == (int) MRAIL_RSV_SENDING &&
	       (int) FI_MRAIL_RAIL_RECEIVING == (int) MRAIL_RSV_RECEIVING,
	       "fi_mrail_rail_state and mrail_rsv_state differ");

/* ---- single transitions ---- */

static struct mrail_rsv_actions act;

static void step(struct mrail_rsv_rail *r, enum mrail_rsv_event_type type,
		 uint32_t peer, uint32_t seq, int32_t counter)
{
	struct mrail_rsv_event ev = { type, peer, seq, counter };

	cr_assert_eq(mrail_rsv_step(r, &ev, &act), 0, "event %d", type);
}

static void expect_msg(size_t i, enum mrail_rsv_msg_type type, uint32_t from,
		       uint32_t to, uint32_t seq)
{
	cr_assert_gt(act.count, i, "message %zu missing", i);
	cr_expect_eq(act.msg[i].type, type, "message %zu type %d, expected %d", i,
		     act.msg[i].type, type);
	cr_expect_eq(act.msg[i].from, from);
	cr_expect_eq(act.msg[i].to, to);
	cr_expect_eq(act.msg[i].seq, seq);
}

Test(rsv, request_granted_sent_and_acknowledged)
{
	struct mrail_rsv_rail a, b;
	struct mrail_rsv_event ev;

	mrail_rsv_init(&a, 1, 0);
	mrail_rsv_init(&b, 2, 0);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	cr_expect_eq(a.state, MRAIL_RSV_RESERVED);
	cr_assert_eq(act.count, 1);
	expect_msg(0, MRAIL_RSV_MSG_RTS, 1, 2, 0);

	cr_assert_eq(mrail_rsv_event_from_msg(&act.msg[0], 2, &ev), 0);
	cr_assert_eq(mrail_rsv_step(&b, &ev, &act), 0);
	cr_expect_eq(b.state, MRAIL_RSV_RECEIVING);
	expect_msg(0, MRAIL_RSV_MSG_CTS, 2, 1, 0);

	cr_assert_eq(mrail_rsv_event_from_msg(&act.msg[0], 1, &ev), 0);
	cr_assert_eq(mrail_rsv_step(&a, &ev, &act), 0);
	cr_expect_eq(a.state, MRAIL_RSV_SENDING);
	cr_expect_eq(act.notice, MRAIL_RSV_NOTICE_GRANTED);
	cr_expect_eq(act.count, 0);

	step(&b, MRAIL_RSV_LOCAL_ACK, 0, 0, 0);
	cr_expect_eq(b.state, MRAIL_RSV_FREE);
	expect_msg(0, MRAIL_RSV_MSG_ACK, 2, 1, 0);
	step(&a, MRAIL_RSV_REMOTE_ACK, 2, 0, 0);
	cr_expect_eq(a.state, MRAIL_RSV_FREE);
	cr_expect(!act.ignored);

	/* The next request has the next sequence number. */
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	expect_msg(0, MRAIL_RSV_MSG_RTS, 1, 2, 1);
}

Test(rsv, busy_ports_refuse)
{
	struct mrail_rsv_rail a;

	mrail_rsv_init(&a, 1, 0);
	step(&a, MRAIL_RSV_REMOTE_RTS, 3, 7, 0);
	cr_expect_eq(a.state, MRAIL_RSV_RECEIVING);
	/* Receiving: a second sender and our own sender are refused. */
	step(&a, MRAIL_RSV_REMOTE_RTS, 4, 9, 100);
	expect_msg(0, MRAIL_RSV_MSG_NACK, 1, 4, 9);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	cr_expect_eq(act.notice, MRAIL_RSV_NOTICE_REFUSED);
	cr_expect_eq(act.count, 0);
	cr_expect_eq(a.state, MRAIL_RSV_RECEIVING);
	/* The sender aborts: free again. */
	step(&a, MRAIL_RSV_REMOTE_ABORT, 3, 7, 0);
	cr_expect_eq(a.state, MRAIL_RSV_FREE);
}

Test(rsv, nack_frees_and_refuses)
{
	struct mrail_rsv_rail a;

	mrail_rsv_init(&a, 1, 0);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	step(&a, MRAIL_RSV_REMOTE_NACK, 2, 0, 0);
	cr_expect_eq(a.state, MRAIL_RSV_FREE);
	cr_expect_eq(act.notice, MRAIL_RSV_NOTICE_REFUSED);
}

Test(rsv, granted_path_not_used_is_aborted)
{
	struct mrail_rsv_rail a;

	mrail_rsv_init(&a, 1, 0);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	step(&a, MRAIL_RSV_REMOTE_CTS, 2, 0, 0);
	step(&a, MRAIL_RSV_LOCAL_ABORT, 0, 0, 0);
	cr_expect_eq(a.state, MRAIL_RSV_FREE);
	expect_msg(0, MRAIL_RSV_MSG_ABORT, 1, 2, 0);
}

Test(rsv, timeout_abandons_the_request_and_a_late_cts_is_released)
{
	struct mrail_rsv_rail a;

	mrail_rsv_init(&a, 1, 0);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	step(&a, MRAIL_RSV_LOCAL_TIMEOUT, 0, 0, 0);
	cr_expect_eq(a.state, MRAIL_RSV_FREE);
	cr_expect_eq(act.notice, MRAIL_RSV_NOTICE_REFUSED);
	expect_msg(0, MRAIL_RSV_MSG_ABORT, 1, 2, 0);
	step(&a, MRAIL_RSV_REMOTE_CTS, 2, 0, 0);
	cr_expect_eq(a.state, MRAIL_RSV_FREE);
	cr_expect(act.ignored);
	cr_expect_eq(act.notice, MRAIL_RSV_NOTICE_NONE);
	expect_msg(0, MRAIL_RSV_MSG_ABORT, 1, 2, 0);
}

Test(rsv, stale_and_bogus_messages_change_nothing)
{
	struct mrail_rsv_rail a, before;

	mrail_rsv_init(&a, 1, 0);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	before = a;
	/* A reply from the wrong node, or for an older request. */
	step(&a, MRAIL_RSV_REMOTE_CTS, 3, 0, 0);
	cr_expect(act.ignored);
	step(&a, MRAIL_RSV_REMOTE_NACK, 2, 5, 0);
	cr_expect(act.ignored);
	step(&a, MRAIL_RSV_REMOTE_ACK, 2, 0, 0);
	cr_expect(act.ignored);
	step(&a, MRAIL_RSV_REMOTE_ABORT, 2, 0, 0);
	cr_expect(act.ignored);
	/* An RTS claiming to come from ourselves. */
	step(&a, MRAIL_RSV_REMOTE_RTS, 1, 0, 0);
	cr_expect(act.ignored);
	cr_expect_eq(act.count, 0);
	cr_expect_eq(memcmp(&a, &before, sizeof(a)), 0);

	/* Receiving from 3: an ABORT naming another request is ignored. */
	mrail_rsv_init(&a, 1, 0);
	step(&a, MRAIL_RSV_REMOTE_RTS, 3, 4, 0);
	step(&a, MRAIL_RSV_REMOTE_ABORT, 3, 3, 0);
	cr_expect(act.ignored);
	cr_expect_eq(a.state, MRAIL_RSV_RECEIVING);
}

Test(rsv, local_events_the_state_does_not_allow_are_refused)
{
	struct mrail_rsv_rail a, before;
	struct mrail_rsv_event ev = { MRAIL_RSV_LOCAL_ABORT, 0, 0, 0 };

	mrail_rsv_init(&a, 1, 0);
	before = a;
	cr_expect_eq(mrail_rsv_step(&a, &ev, &act), -EINVAL);
	ev.type = MRAIL_RSV_LOCAL_ACK;
	cr_expect_eq(mrail_rsv_step(&a, &ev, &act), -EINVAL);
	ev.type = MRAIL_RSV_LOCAL_TIMEOUT;
	cr_expect_eq(mrail_rsv_step(&a, &ev, &act), -EINVAL);
	ev.type = MRAIL_RSV_LOCAL_RTS;
	ev.peer = 1;
	cr_expect_eq(mrail_rsv_step(&a, &ev, &act), -EINVAL);
	ev.type = (enum mrail_rsv_event_type) 99;
	cr_expect_eq(mrail_rsv_step(&a, &ev, &act), -EINVAL);
	cr_expect_eq(act.count, 0);
	cr_expect_eq(memcmp(&a, &before, sizeof(a)), 0);
	cr_expect_eq(mrail_rsv_step(NULL, &ev, &act), -EINVAL);
	cr_expect_eq(mrail_rsv_step(&a, NULL, &act), -EINVAL);
	cr_expect_eq(mrail_rsv_step(&a, &ev, NULL), -EINVAL);
}

Test(rsv, messages_for_another_node_or_of_unknown_type_are_refused)
{
	struct mrail_rsv_msg msg = { MRAIL_RSV_MSG_CTS, 2, 1, 0, 0 };
	struct mrail_rsv_event ev;

	cr_expect_eq(mrail_rsv_event_from_msg(&msg, 1, &ev), 0);
	cr_expect_eq(ev.type, MRAIL_RSV_REMOTE_CTS);
	cr_expect_eq(mrail_rsv_event_from_msg(&msg, 3, &ev), -EINVAL);
	msg.type = (enum mrail_rsv_msg_type) 5;
	cr_expect_eq(mrail_rsv_event_from_msg(&msg, 1, &ev), -EINVAL);
	cr_expect_eq(mrail_rsv_event_from_msg(NULL, 1, &ev), -EINVAL);
}

/* Algorithm 4, both sides of one conflict, decided on the carried counters. */
Test(rsv, two_requests_crossing_on_one_rail_let_the_higher_priority_through)
{
	struct mrail_rsv_rail a, b;
	struct mrail_rsv_msg rts_a, rts_b;
	struct mrail_rsv_event ev;

	mrail_rsv_init(&a, 1, 5);
	mrail_rsv_init(&b, 2, 3);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	rts_a = act.msg[0];
	step(&b, MRAIL_RSV_LOCAL_RTS, 1, 0, 0);
	rts_b = act.msg[0];
	cr_expect_eq(rts_a.counter, 5);

	mrail_rsv_event_from_msg(&rts_b, 1, &ev);
	mrail_rsv_step(&a, &ev, &act);
	expect_msg(0, MRAIL_RSV_MSG_NACK, 1, 2, 0);
	cr_expect_eq(a.counter, 4);
	cr_expect_eq(a.state, MRAIL_RSV_RESERVED);

	mrail_rsv_event_from_msg(&rts_a, 2, &ev);
	mrail_rsv_step(&b, &ev, &act);
	expect_msg(0, MRAIL_RSV_MSG_CTS, 2, 1, 0);
	cr_expect_eq(b.counter, 4);
	cr_expect_eq(b.state, MRAIL_RSV_RECEIVING);
	cr_expect(b.out_rts);

	/* Equal counters: the higher node id goes first, on both sides. */
	mrail_rsv_init(&a, 1, 0);
	mrail_rsv_init(&b, 2, 0);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	rts_a = act.msg[0];
	step(&b, MRAIL_RSV_LOCAL_RTS, 1, 0, 0);
	rts_b = act.msg[0];
	mrail_rsv_event_from_msg(&rts_b, 1, &ev);
	mrail_rsv_step(&a, &ev, &act);
	expect_msg(0, MRAIL_RSV_MSG_CTS, 1, 2, 0);
	mrail_rsv_event_from_msg(&rts_a, 2, &ev);
	mrail_rsv_step(&b, &ev, &act);
	expect_msg(0, MRAIL_RSV_MSG_NACK, 2, 1, 0);
}

/* A's counter moves (it wins against C) after its RTS to B left: the
 * conflict with B must still be decided on the 5 A's RTS carried, as B
 * decides it, or the two ends would disagree. */
Test(rsv, conflicts_use_the_counters_the_requests_carried)
{
	struct mrail_rsv_rail a, b;
	struct mrail_rsv_msg rts_a, rts_b;
	struct mrail_rsv_event ev;

	mrail_rsv_init(&a, 1, 5);
	mrail_rsv_init(&b, 2, 4);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	rts_a = act.msg[0];
	step(&b, MRAIL_RSV_LOCAL_RTS, 1, 0, 0);
	rts_b = act.msg[0];
	step(&a, MRAIL_RSV_REMOTE_RTS, 3, 0, 4);	/* C loses to A */
	expect_msg(0, MRAIL_RSV_MSG_NACK, 1, 3, 0);
	cr_expect_eq(a.counter, 4);

	mrail_rsv_event_from_msg(&rts_b, 1, &ev);
	mrail_rsv_step(&a, &ev, &act);
	expect_msg(0, MRAIL_RSV_MSG_NACK, 1, 2, 0);
	cr_expect_eq(a.state, MRAIL_RSV_RESERVED);
	mrail_rsv_event_from_msg(&rts_a, 2, &ev);
	mrail_rsv_step(&b, &ev, &act);
	expect_msg(0, MRAIL_RSV_MSG_CTS, 2, 1, 0);
}

Test(rsv, counters_saturate)
{
	struct mrail_rsv_rail a;

	mrail_rsv_init(&a, 1, INT32_MIN);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	/* Remote counter lower still impossible: local wins on node id. */
	step(&a, MRAIL_RSV_REMOTE_RTS, 0, 0, INT32_MIN);
	cr_expect_eq(a.counter, INT32_MIN);
	mrail_rsv_init(&a, 1, INT32_MAX);
	step(&a, MRAIL_RSV_LOCAL_RTS, 2, 0, 0);
	a.out_counter = INT32_MIN;
	step(&a, MRAIL_RSV_REMOTE_RTS, 3, 0, 0);
	cr_expect_eq(a.counter, INT32_MAX);
}

Test(rsv, hybrid_threshold)
{
	cr_expect(!mrail_hybrid_reserves(0, 16384));
	cr_expect(!mrail_hybrid_reserves(16384, 16384));
	cr_expect(mrail_hybrid_reserves(16385, 16384));
	cr_expect(mrail_hybrid_reserves(1, 0));
}

/* ---- the simulator ---- */

#define SIM_NODES 5
#define SIM_RAILS 3
#define SIM_QCAP 64

struct sim_item {
	bool data;			/* a stripe of a transfer, else control */
	struct mrail_rsv_msg msg;	/* control; for data: from, to */
};

struct sim_queue {
	struct sim_item item[SIM_QCAP];
	unsigned head, count;
};

struct sim_node {
	struct mrail_rsv_rail port[SIM_RAILS];
	int dest;			/* transfer to send, -1 when none */
	uint32_t asked, answered, granted;	/* rails of the current try */
	uint32_t sending;		/* rails carrying its data */
	int tries;
	int first_outcome;		/* -1 unknown, 0 refused, 1 granted */
	int sent, received;
	uint8_t cursor;
};

struct sim {
	size_t nodes, rails;
	double ratio;
	bool control_first;		/* deliver control before data */
	uint64_t rng;
	struct sim_node node[SIM_NODES];
	struct sim_queue q[SIM_NODES][SIM_NODES][SIM_RAILS];
	size_t in_flight;
	int data_sent;
};

static void sim_init(struct sim *s, size_t nodes, size_t rails, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->nodes = nodes;
	s->rails = rails;
	s->ratio = 1.0;
	s->rng = seed;
	for (size_t n = 0; n < nodes; n++) {
		s->node[n].dest = -1;
		s->node[n].first_outcome = -1;
		for (size_t r = 0; r < rails; r++)
			mrail_rsv_init(&s->node[n].port[r], (uint32_t) n, 0);
	}
}

static void sim_push(struct sim *s, size_t rail, const struct sim_item *it)
{
	struct sim_queue *q = &s->q[it->msg.from][it->msg.to][rail];

	cr_assert_lt(q->count, SIM_QCAP, "queue overflow");
	q->item[(q->head + q->count++) % SIM_QCAP] = *it;
	s->in_flight++;
}

static void sim_answer(struct sim *s, size_t n, size_t rail);

/* Runs one event on a port and carries out its actions. */
static void sim_step(struct sim *s, size_t n, size_t rail, const struct mrail_rsv_event *ev)
{
	struct mrail_rsv_actions a;

	cr_assert_eq(mrail_rsv_step(&s->node[n].port[rail], ev, &a), 0,
		     "node %zu rail %zu event %d", n, rail, ev->type);
	for (size_t i = 0; i < a.count; i++) {
		struct sim_item it = { .data = false, .msg = a.msg[i] };

		sim_push(s, rail, &it);
	}
	if (a.notice == MRAIL_RSV_NOTICE_GRANTED)
		s->node[n].granted |= 1u << rail;
	if (a.notice != MRAIL_RSV_NOTICE_NONE)
		sim_answer(s, n, rail);
}

/* Algorithm 2: ask for every free rail toward dest. */
static void sim_try(struct sim *s, size_t n)
{
	struct sim_node *node = &s->node[n];
	struct mrail_rsv_event ev = { MRAIL_RSV_LOCAL_RTS, (uint32_t) node->dest, 0, 0 };

	node->asked = node->answered = node->granted = 0;
	for (size_t r = 0; r < s->rails; r++)
		if (node->port[r].state == MRAIL_RSV_FREE)
			node->asked |= 1u << r;
	if (!node->asked)
		return;
	node->tries++;
	for (size_t r = 0; r < s->rails; r++)
		if (node->asked & (1u << r))
			sim_step(s, n, r, &ev);
}

/* Every rail asked has answered: keep Select_Tx_NICs' choice, abort the
 * rest, send the data; or try again later. */
static void sim_answer(struct sim *s, size_t n, size_t rail)
{
	struct sim_node *node = &s->node[n];
	uint32_t chosen = 0;

	cr_assert(node->asked & (1u << rail), "node %zu: notice on rail %zu not asked",
		  n, rail);
	node->answered |= 1u << rail;
	if (node->answered != node->asked)
		return;
	if (node->first_outcome < 0)
		node->first_outcome = node->granted != 0;
	node->asked = 0;
	if (!node->granted)
		return;
	cr_assert_gt(mrail_select_rails(node->granted, s->rails, s->ratio,
					&node->cursor, &chosen), 0);
	for (size_t r = 0; r < s->rails; r++) {
		struct mrail_rsv_event ev = { MRAIL_RSV_LOCAL_ABORT, 0, 0, 0 };
		struct sim_item it = { .data = true };

		if (!(node->granted & (1u << r)))
			continue;
		if (!(chosen & (1u << r))) {
			sim_step(s, n, r, &ev);
			continue;
		}
		/* Data goes only over a path reserved at both ends. */
		cr_assert_eq(node->port[r].state, MRAIL_RSV_SENDING);
		cr_assert_eq(node->port[r].out_peer, (uint32_t) node->dest);
		it.msg.from = (uint32_t) n;
		it.msg.to = (uint32_t) node->dest;
		sim_push(s, r, &it);
		s->data_sent++;
	}
	node->sending = chosen;
}

static void sim_deliver(struct sim *s, size_t from, size_t to, size_t rail)
{
	struct sim_queue *q = &s->q[from][to][rail];
	struct sim_item it = q->item[q->head];
	struct sim_node *node = &s->node[to];
	struct mrail_rsv_event ev;

	q->head = (q->head + 1) % SIM_QCAP;
	q->count--;
	s->in_flight--;
	if (it.data) {
		/* The receiving port was reserved for exactly this sender. */
		cr_assert_eq(node->port[rail].state, MRAIL_RSV_RECEIVING,
			     "data from %zu to %zu on rail %zu: port state %d", from,
			     to, rail, node->port[rail].state);
		cr_assert_eq(node->port[rail].in_peer, (uint32_t) from);
		node->received++;
		ev.type = MRAIL_RSV_LOCAL_ACK;
		sim_step(s, to, rail, &ev);
		return;
	}
	cr_assert_eq(mrail_rsv_event_from_msg(&it.msg, (uint32_t) to, &ev), 0);
	sim_step(s, to, rail, &ev);
	/* The last ACK of a transfer: it is complete. */
	if (ev.type == MRAIL_RSV_REMOTE_ACK && (node->sending & (1u << rail)) &&
	    node->port[rail].state == MRAIL_RSV_FREE) {
		node->sending &= ~(1u << rail);
		if (!node->sending) {
			node->dest = -1;
			node->sent++;
		}
	}
}

static bool sim_control_in_flight(const struct sim *s)
{
	for (size_t f = 0; f < s->nodes; f++)
		for (size_t t = 0; t < s->nodes; t++)
			for (size_t r = 0; r < s->rails; r++) {
				const struct sim_queue *q = &s->q[f][t][r];

				for (unsigned i = 0; i < q->count; i++)
					if (!q->item[(q->head + i) % SIM_QCAP].data)
						return true;
			}
	return false;
}

/* Delivers one message: the head of a non-empty queue picked at random
 * (control messages first when control_first). Returns false when none. */
static bool sim_deliver_one(struct sim *s)
{
	size_t pick, seen = 0, f, t, r;

	if (!s->in_flight)
		return false;
	for (int pass = 0; pass < 2; pass++) {
		size_t eligible = 0;

		for (f = 0; f < s->nodes; f++)
			for (t = 0; t < s->nodes; t++)
				for (r = 0; r < s->rails; r++) {
					struct sim_queue *q = &s->q[f][t][r];

					if (q->count && (pass || !s->control_first ||
							 !q->item[q->head].data))
						eligible++;
				}
		if (!eligible)
			continue;
		pick = (size_t) test_rng_below(&s->rng, eligible);
		for (f = 0; f < s->nodes; f++)
			for (t = 0; t < s->nodes; t++)
				for (r = 0; r < s->rails; r++) {
					struct sim_queue *q = &s->q[f][t][r];

					if (!q->count || !(pass || !s->control_first ||
							   !q->item[q->head].data))
						continue;
					if (seen++ == pick) {
						sim_deliver(s, f, t, r);
						return true;
					}
				}
	}
	return false;
}

/* Runs until nothing is in flight and every transfer is done; a node
 * whose try was refused tries again once its turn comes round. */
static void sim_run(struct sim *s, int max_steps)
{
	for (int i = 0; i < max_steps; i++) {
		bool pending = false;

		for (size_t n = 0; n < s->nodes; n++) {
			struct sim_node *node = &s->node[n];

			if (node->dest < 0)
				continue;
			pending = true;
			if (!node->asked && !node->sending &&
			    !test_rng_below(&s->rng, 4))
				sim_try(s, n);
		}
		if (!sim_deliver_one(s) && !pending)
			return;
	}
	cr_assert_fail("no quiescence after %d steps", max_steps);
}

static void expect_all_free(const struct sim *s)
{
	cr_expect_eq(s->in_flight, 0);
	for (size_t n = 0; n < s->nodes; n++)
		for (size_t r = 0; r < s->rails; r++) {
			cr_expect_eq(s->node[n].port[r].state, MRAIL_RSV_FREE,
				     "node %zu rail %zu left in state %d", n, r,
				     s->node[n].port[r].state);
			cr_expect(!s->node[n].port[r].out_rts);
		}
}

/* Fig. 2: i -> j -> k -> i on one rail, every request out before any
 * arrives. Priorities k > i > j as in Fig. 2(b). */
static void fig2_start(struct sim *s, uint64_t seed)
{
	static const int32_t counter[3] = { 1, 0, 2 };	/* i, j, k */

	sim_init(s, 3, 1, seed);
	for (size_t n = 0; n < 3; n++) {
		mrail_rsv_init(&s->node[n].port[0], (uint32_t) n, counter[n]);
		s->node[n].dest = (int) ((n + 1) % 3);
	}
	for (size_t n = 0; n < 3; n++)
		sim_try(s, n);
}

/* The paper's order: the three RTS arrive, then the replies. */
Test(fig2, three_nic_cycle_resolves_as_in_the_paper)
{
	struct sim s;
	int winners = 0;

	fig2_start(&s, 1);
	/* Deliver the three RTS (i->j, j->k, k->i) before anything else. */
	sim_deliver(&s, 0, 1, 0);
	sim_deliver(&s, 1, 2, 0);
	sim_deliver(&s, 2, 0, 0);
	/* NIC-i and NIC-j granted (CTS) the higher requester, NIC-k refused. */
	cr_expect_eq(s.node[0].port[0].state, MRAIL_RSV_RECEIVING);
	cr_expect_eq(s.node[1].port[0].state, MRAIL_RSV_RECEIVING);
	cr_expect_eq(s.node[2].port[0].state, MRAIL_RSV_RESERVED);
	cr_expect_eq(s.node[0].port[0].counter, 2);	/* i + 1 */
	cr_expect_eq(s.node[1].port[0].counter, 1);	/* j + 1 */
	cr_expect_eq(s.node[2].port[0].counter, 1);	/* k - 1 */

	/* The replies: i rejects j's CTS with ABORT, j's request is refused,
	 * k is granted; j's port is freed by i's ABORT. */
	s.control_first = true;
	while (sim_control_in_flight(&s))
		cr_assert(sim_deliver_one(&s));
	for (size_t n = 0; n < 3; n++)
		winners += s.node[n].first_outcome == 1;
	cr_expect_eq(winners, 1);
	cr_expect_eq(s.node[2].first_outcome, 1, "NIC-k should win");
	cr_expect_eq(s.node[2].port[0].state, MRAIL_RSV_SENDING);
	cr_expect_eq(s.node[0].port[0].state, MRAIL_RSV_RECEIVING);
	cr_expect_eq(s.node[1].port[0].state, MRAIL_RSV_FREE);

	/* Then everything completes, the losers retrying. */
	sim_run(&s, 100000);
	for (size_t n = 0; n < 3; n++) {
		cr_expect_eq(s.node[n].sent, 1, "node %zu sent %d", n, s.node[n].sent);
		cr_expect_eq(s.node[n].received, 1);
	}
	expect_all_free(&s);
}

/* Any delivery order: while control messages travel faster than data,
 * exactly one request of the cycle is granted, and all complete. */
Test(fig2, every_delivery_order_has_exactly_one_winner)
{
	for (uint64_t seed = 1; seed <= 2000; seed++) {
		struct sim s;
		int winners = 0;

		fig2_start(&s, seed * 0x9e3779b97f4a7c15ULL);
		s.control_first = true;
		/* Until all three first tries are answered. */
		while (s.node[0].first_outcome < 0 || s.node[1].first_outcome < 0 ||
		       s.node[2].first_outcome < 0)
			cr_assert(sim_deliver_one(&s), "seed %llu stalled",
				  (unsigned long long) seed);
		for (size_t n = 0; n < 3; n++)
			winners += s.node[n].first_outcome;
		cr_assert_eq(winners, 1, "seed %llu: %d winners",
			     (unsigned long long) seed, winners);
		s.control_first = false;
		sim_run(&s, 100000);
		for (size_t n = 0; n < 3; n++)
			cr_assert_eq(s.node[n].sent, 1, "seed %llu node %zu",
				     (unsigned long long) seed, n);
		expect_all_free(&s);
	}
}

/* Equal priorities everywhere: the node ids order the requests. */
Test(fig2, equal_counters_still_resolve)
{
	struct sim s;

	sim_init(&s, 3, 1, 42);
	for (size_t n = 0; n < 3; n++)
		s.node[n].dest = (int) ((n + 1) % 3);
	for (size_t n = 0; n < 3; n++)
		sim_try(&s, n);
	s.control_first = true;
	while (s.node[0].first_outcome < 0 || s.node[1].first_outcome < 0 ||
	       s.node[2].first_outcome < 0)
		cr_assert(sim_deliver_one(&s));
	cr_expect_eq(s.node[0].first_outcome + s.node[1].first_outcome +
			     s.node[2].first_outcome, 1);
	sim_run(&s, 100000);
	expect_all_free(&s);
}

/* Random transfers among 5 nodes over 3 rails, several rounds, with
 * striping ratios 0, 0.5 and 1: data only ever lands on a port reserved for
 * its sender (checked at each delivery), every transfer completes, and no
 * port is left reserved. */
Test(sim, random_traffic_completes_and_frees_every_port)
{
	static const double ratios[] = { 0.0, 0.5, 1.0 };
	uint64_t rng = 0xd15ea5e5ULL;

	for (int iter = 0; iter < 300; iter++) {
		struct sim s;
		int want = 0, sent = 0, received = 0;

		sim_init(&s, SIM_NODES, SIM_RAILS, test_rng_next(&rng));
		s.ratio = ratios[iter % 3];
		s.control_first = iter & 1;
		for (int round = 0; round < 4; round++) {
			for (size_t n = 0; n < SIM_NODES; n++) {
				size_t d = (size_t) test_rng_below(&rng, SIM_NODES);

				if (d == n || test_rng_below(&rng, 4) == 0)
					continue;
				s.node[n].dest = (int) d;
				want++;
				/* Some start at once, some later from sim_run. */
				if (test_rng_below(&rng, 2))
					sim_try(&s, n);
			}
			sim_run(&s, 200000);
		}
		for (size_t n = 0; n < SIM_NODES; n++) {
			sent += s.node[n].sent;
			received += s.node[n].received;
		}
		cr_assert_eq(sent, want, "iter %d", iter);
		cr_assert_eq(received, s.data_sent, "iter %d", iter);
		expect_all_free(&s);
	}
}
