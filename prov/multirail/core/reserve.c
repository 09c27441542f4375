/* SPDX-License-Identifier: BSD-2-Clause */
#include "reserve.h"

#include <errno.h>
#include <string.h>

void mrail_rsv_init(struct mrail_rsv_rail *rail, uint32_t node, int32_t counter)
{
	memset(rail, 0, sizeof(*rail));
	rail->state = MRAIL_RSV_FREE;
	rail->node = node;
	rail->counter = counter;
}

static void emit(const struct mrail_rsv_rail *rail, struct mrail_rsv_actions *act,
		 enum mrail_rsv_msg_type type, uint32_t to, uint32_t seq)
{
	struct mrail_rsv_msg *msg = &act->msg[act->count++];

	msg->type = type;
	msg->from = rail->node;
	msg->to = to;
	msg->seq = seq;
	msg->counter = type == MRAIL_RSV_MSG_RTS ? rail->out_counter : 0;
}

/* The counter only orders requests; saturating keeps it defined however
 * many conflicts a long run sees. */
static void counter_add(struct mrail_rsv_rail *rail, int delta)
{
	if (delta > 0 && rail->counter < INT32_MAX)
		rail->counter++;
	else if (delta < 0 && rail->counter > INT32_MIN)
		rail->counter--;
}

static int local_rts(struct mrail_rsv_rail *rail, uint32_t peer,
		     struct mrail_rsv_actions *act)
{
	if (peer == rail->node)
		return -EINVAL;
	if (rail->state != MRAIL_RSV_FREE) {
		act->notice = MRAIL_RSV_NOTICE_REFUSED;
		return 0;
	}
	rail->state = MRAIL_RSV_RESERVED;
	rail->out_rts = true;
	rail->out_peer = peer;
	rail->out_seq = rail->next_seq++;
	rail->out_counter = rail->counter;
	emit(rail, act, MRAIL_RSV_MSG_RTS, peer, rail->out_seq);
	return 0;
}

/* Our request is answered or abandoned while the port stays as it is
 * (RECEIVING) or becomes FREE (RESERVED). */
static void drop_request(struct mrail_rsv_rail *rail)
{
	rail->out_rts = false;
	if (rail->state == MRAIL_RSV_RESERVED)
		rail->state = MRAIL_RSV_FREE;
}

/* The grant we gave ends: back to waiting for our own reply, or free. */
static void end_receiving(struct mrail_rsv_rail *rail)
{
	rail->state = rail->out_rts ? MRAIL_RSV_RESERVED : MRAIL_RSV_FREE;
}

static void grant(struct mrail_rsv_rail *rail, const struct mrail_rsv_event *ev,
		  struct mrail_rsv_actions *act)
{
	rail->state = MRAIL_RSV_RECEIVING;
	rail->in_peer = ev->peer;
	rail->in_seq = ev->seq;
	emit(rail, act, MRAIL_RSV_MSG_CTS, ev->peer, ev->seq);
}

/*
 * Algorithm 4: a request arrives while ours is pending, a possible cycle.
 * The higher (counter, node) pair goes first; the winner's counter drops and
 * the loser's rises, so that the loser wins the next conflict between them.
 */
static void deadlock_avoidance(struct mrail_rsv_rail *rail,
			       const struct mrail_rsv_event *ev,
			       struct mrail_rsv_actions *act)
{
	bool local_wins = rail->out_counter > ev->counter ||
			  (rail->out_counter == ev->counter && rail->node > ev->peer);

	if (local_wins) {
		counter_add(rail, -1);
		emit(rail, act, MRAIL_RSV_MSG_NACK, ev->peer, ev->seq);
	} else {
		counter_add(rail, +1);
		grant(rail, ev, act);
	}
}

static void remote_rts(struct mrail_rsv_rail *rail, const struct mrail_rsv_event *ev,
		       struct mrail_rsv_actions *act)
{
	if (ev->peer == rail->node) {
		act->ignored = true;
		return;
	}
	switch (rail->state) {
	case MRAIL_RSV_FREE:
		grant(rail, ev, act);
		break;
	case MRAIL_RSV_RESERVED:
		deadlock_avoidance(rail, ev, act);
		break;
	default:
		emit(rail, act, MRAIL_RSV_MSG_NACK, ev->peer, ev->seq);
		break;
	}
}

static bool answers_our_request(const struct mrail_rsv_rail *rail,
				const struct mrail_rsv_event *ev)
{
	return rail->out_rts && ev->peer == rail->out_peer && ev->seq == rail->out_seq;
}

static bool names_our_grant(const struct mrail_rsv_rail *rail,
			    const struct mrail_rsv_event *ev)
{
	return rail->state == MRAIL_RSV_RECEIVING && ev->peer == rail->in_peer &&
	       ev->seq == rail->in_seq;
}

static void remote_cts(struct mrail_rsv_rail *rail, const struct mrail_rsv_event *ev,
		       struct mrail_rsv_actions *act)
{
	if (!answers_our_request(rail, ev)) {
		/* Nobody here waits for it: release the port that granted it. */
		act->ignored = true;
		emit(rail, act, MRAIL_RSV_MSG_ABORT, ev->peer, ev->seq);
		return;
	}
	rail->out_rts = false;
	if (rail->state == MRAIL_RSV_RESERVED) {
		rail->state = MRAIL_RSV_SENDING;
		act->notice = MRAIL_RSV_NOTICE_GRANTED;
		return;
	}
	/* RECEIVING: we granted a higher-priority request meanwhile, so this
	 * path would make our port bidirectional. */
	emit(rail, act, MRAIL_RSV_MSG_ABORT, ev->peer, ev->seq);
	act->notice = MRAIL_RSV_NOTICE_REFUSED;
}

static void remote_nack(struct mrail_rsv_rail *rail, const struct mrail_rsv_event *ev,
			struct mrail_rsv_actions *act)
{
	if (!answers_our_request(rail, ev)) {
		act->ignored = true;
		return;
	}
	drop_request(rail);
	act->notice = MRAIL_RSV_NOTICE_REFUSED;
}

int mrail_rsv_step(struct mrail_rsv_rail *rail, const struct mrail_rsv_event *ev,
		   struct mrail_rsv_actions *act)
{
	if (!act)
		return -EINVAL;
	memset(act, 0, sizeof(*act));
	if (!rail || !ev)
		return -EINVAL;

	switch (ev->type) {
	case MRAIL_RSV_LOCAL_RTS:
		return local_rts(rail, ev->peer, act);
	case MRAIL_RSV_LOCAL_ABORT:
		if (rail->state != MRAIL_RSV_SENDING)
			return -EINVAL;
		emit(rail, act, MRAIL_RSV_MSG_ABORT, rail->out_peer, rail->out_seq);
		rail->state = MRAIL_RSV_FREE;
		return 0;
	case MRAIL_RSV_LOCAL_ACK:
		if (rail->state != MRAIL_RSV_RECEIVING)
			return -EINVAL;
		emit(rail, act, MRAIL_RSV_MSG_ACK, rail->in_peer, rail->in_seq);
		end_receiving(rail);
		return 0;
	case MRAIL_RSV_LOCAL_TIMEOUT:
		if (!rail->out_rts)
			return -EINVAL;
		/* The CTS may be on its way: make sure the peer lets go. */
		emit(rail, act, MRAIL_RSV_MSG_ABORT, rail->out_peer, rail->out_seq);
		drop_request(rail);
		act->notice = MRAIL_RSV_NOTICE_REFUSED;
		return 0;
	case MRAIL_RSV_REMOTE_RTS:
		remote_rts(rail, ev, act);
		return 0;
	case MRAIL_RSV_REMOTE_CTS:
		remote_cts(rail, ev, act);
		return 0;
	case MRAIL_RSV_REMOTE_NACK:
		remote_nack(rail, ev, act);
		return 0;
	case MRAIL_RSV_REMOTE_ABORT:
		if (names_our_grant(rail, ev))
			end_receiving(rail);
		else
			act->ignored = true;
		return 0;
	case MRAIL_RSV_REMOTE_ACK:
		if (rail->state == MRAIL_RSV_SENDING && ev->peer == rail->out_peer &&
		    ev->seq == rail->out_seq)
			rail->state = MRAIL_RSV_FREE;
		else
			act->ignored = true;
		return 0;
	default:
		return -EINVAL;
	}
}

int mrail_rsv_event_from_msg(const struct mrail_rsv_msg *msg, uint32_t node,
			     struct mrail_rsv_event *ev)
{
	static const enum mrail_rsv_event_type remote[] = {
		[MRAIL_RSV_MSG_RTS] = MRAIL_RSV_REMOTE_RTS,
		[MRAIL_RSV_MSG_CTS] = MRAIL_RSV_REMOTE_CTS,
		[MRAIL_RSV_MSG_NACK] = MRAIL_RSV_REMOTE_NACK,
		[MRAIL_RSV_MSG_ABORT] = MRAIL_RSV_REMOTE_ABORT,
		[MRAIL_RSV_MSG_ACK] = MRAIL_RSV_REMOTE_ACK,
	};

	if (!msg || !ev || msg->to != node ||
	    (unsigned) msg->type >= sizeof(remote) / sizeof(remote[0]))
		return -EINVAL;
	ev->type = remote[msg->type];
	ev->peer = msg->from;
	ev->seq = msg->seq;
	ev->counter = msg->counter;
	return 0;
}
