/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg's tests of how peers get into the AV: the server inserting
 * the client late, a burst right after first contact (-N), and one peer
 * inserted twice.
 */
#include "fi_mrail_msg.h"

/*
 * libfabric lets a peer send as soon as it has inserted us, before we insert
 * it (Open MPI's add_procs can be that lazy). The client inserts the server
 * and sends a burst of eager and rendezvous messages; the server progresses
 * for a while without the client in its AV, where nothing may complete (no
 * error either), then inserts it and must receive every message, in send
 * order, byte for byte.
 */
void run_late_insert(struct session *s)
{
	size_t sizes[LATE_BURST];
	struct op ops[LATE_BURST];
	struct buf bufs[LATE_BURST];
	char detail[64];
	unsigned k;
	int ret;

	for (k = 0; k < LATE_BURST; k++)
		sizes[k] = (k % 2 && LATE_RDV_SIZE <= s->opt.max_size) ?
			   LATE_RDV_SIZE : LATE_EAGER_SIZE;
	bufs_alloc(bufs, LATE_BURST, LATE_RDV_SIZE);
	if (!s->is_server) {
		check_begin("%d sends (eager and rendezvous) to a peer that has "
			    "not inserted us yet", LATE_BURST);
		for (k = 0; k < LATE_BURST; k++) {
			order_fill(bufs[k].data, sizes[k], 0, k);
			op_init(&ops[k], OP_TSEND, bufs[k].data, sizes[k]);
			ops[k].tag = TAG_ORDER | k;
			post_op(s, &ops[k]);
		}
		oob_signal(s, SIG_SENT);
		wait_ops(s, ops, LATE_BURST, "sends to a peer that had not "
			 "inserted us yet");
		for (k = 0; k < LATE_BURST; k++)
			expect_completed(&ops[k], FI_SEND | FI_TAGGED, "late insert");
	} else {
		oob_wait_signal(s, SIG_SENT, "send its burst");
		/* Whatever arrives now comes from a sender not in the AV; a
		 * completion of any kind would be counted as stray. */
		drain(s, LATE_WAIT_MS);
		ret = fi_av_insert(s->av, s->late_name, 1, &s->peer, 0, NULL);
		snprintf(detail, sizeof(detail), "returned %d", ret);
		check_once(ret == 1, "fi_av_insert of the client after its first "
			   "messages arrived", detail);
		check_begin("%d messages (eager and rendezvous) sent before we "
			    "inserted their sender, received in send order",
			    LATE_BURST);
		for (k = 0; ret == 1 && k < LATE_BURST; k++) {
			order_poison(bufs[k].data, sizes[k], 0, k);
			op_init(&ops[k], OP_TRECV, bufs[k].data, sizes[k]);
			ops[k].tag = TAG_ORDER;
			ops[k].ignore = TAG_ORDER_IGNORE;
			post_op(s, &ops[k]);
		}
		if (ret == 1) {
			wait_ops(s, ops, LATE_BURST, "messages sent before we "
				 "inserted their sender");
			for (k = 0; k < LATE_BURST; k++)
				order_check_one(&ops[k], &bufs[k], sizes[k], 0, k,
						true);
		} else {
			check_fail("not inserted");
		}
	}
	check_end();
	bufs_free(bufs, LATE_BURST);
	end_test(s, "late insert", SYNC_LATE);
}

/*
 * -N: fi_rdm_tagged_peek's pattern. Right after the first contact (over the
 * provider's first rail only) the client posts a few sends back to back and
 * takes -FI_EAGAIN as a failure, as that fabtest does. mrail round-robins
 * them onto rails whose connection ofi_rxm has not set up yet, which push
 * back while it connects: a send must then go on a rail that takes it.
 * The server receives them in send order, byte for byte.
 */
void run_first_burst(struct session *s)
{
	struct op ops[FIRST_BURST];
	struct buf bufs[FIRST_BURST];
	char detail[96];
	unsigned k, refused = 0;
	ssize_t ret;

	bufs_alloc(bufs, FIRST_BURST, LATE_EAGER_SIZE);
	if (!s->is_server) {
		check_begin("%d sends right after the first contact, none refused "
			    "(a rail still connecting is no reason)", FIRST_BURST);
		for (k = 0; k < FIRST_BURST; k++) {
			order_fill(bufs[k].data, LATE_EAGER_SIZE, 0, k);
			op_init(&ops[k], OP_TSEND, bufs[k].data, LATE_EAGER_SIZE);
			ops[k].tag = TAG_ORDER | k;
			ret = post_once(s, &ops[k]);
			if (ret == -FI_EAGAIN) {
				refused++;
				post_op(s, &ops[k]);
				continue;
			}
			if (ret)
				fatal("fi_tsend right after the first contact: %s",
				      fi_strerror((int) -ret));
			pending_add(s, &ops[k]);
		}
		snprintf(detail, sizeof(detail), "%u of %d refused with -FI_EAGAIN",
			 refused, FIRST_BURST);
		if (refused && prov_is_mrail(s))
			check_fail("%s", detail);
		else if (refused)
			note_skip("sends without -FI_EAGAIN after the first contact",
				  detail);
		oob_signal(s, SIG_SENT);
		wait_ops(s, ops, FIRST_BURST, "sends right after the first contact");
		for (k = 0; k < FIRST_BURST; k++)
			expect_completed(&ops[k], FI_SEND | FI_TAGGED, "first burst");
	} else {
		check_begin("%d messages sent right after the first contact, in "
			    "send order", FIRST_BURST);
		oob_wait_signal(s, SIG_SENT, "send its first burst");
		for (k = 0; k < FIRST_BURST; k++) {
			order_poison(bufs[k].data, LATE_EAGER_SIZE, 0, k);
			op_init(&ops[k], OP_TRECV, bufs[k].data, LATE_EAGER_SIZE);
			ops[k].tag = TAG_ORDER;
			ops[k].ignore = TAG_ORDER_IGNORE;
			post_op(s, &ops[k]);
		}
		wait_ops(s, ops, FIRST_BURST, "the first burst");
		for (k = 0; k < FIRST_BURST; k++)
			order_check_one(&ops[k], &bufs[k], LATE_EAGER_SIZE, 0, k, true);
	}
	check_end();
	bufs_free(bufs, FIRST_BURST);
	end_test(s, "first burst", SYNC_FIRST_BURST);
}

/* The size of message k of the alias burst: eager, just past the eager
 * limit, and large (rendezvous in mrail), as far as -S allows. */
static size_t alias_size(const struct session *s, unsigned k)
{
	static const size_t sizes[] = { LATE_EAGER_SIZE, 16337, LATE_RDV_SIZE };
	size_t size = sizes[k % ARRAY_SIZE(sizes)];

	return size <= s->opt.max_size ? size : LATE_EAGER_SIZE;
}

/* One direction of the alias burst: the sender alternates between the
 * peer's two entries and between plain and FI_DELIVERY_COMPLETE sends. */
static void alias_burst(struct session *s, fi_addr_t alias, enum direction dir)
{
	struct op ops[ALIAS_BURST];
	struct buf bufs[ALIAS_BURST];
	char where[64];
	unsigned k;

	bufs_alloc(bufs, ALIAS_BURST, LATE_RDV_SIZE);
	check_begin("%d sends to a peer's two AV entries, in turn, plain and "
		    "FI_DELIVERY_COMPLETE, %s", ALIAS_BURST, dir_name(s, dir));
	if (is_sender(s, dir)) {
		oob_wait_signal(s, SIG_POSTED, "post its receives");
		for (k = 0; k < ALIAS_BURST; k++) {
			order_fill(bufs[k].data, alias_size(s, k), 0, k);
			op_init(&ops[k], OP_TSEND, bufs[k].data, alias_size(s, k));
			ops[k].tag = TAG_ORDER | k;
			ops[k].has_dest = true;
			ops[k].dest = k % 2 ? alias : s->peer;
			ops[k].delivery_complete = (k / 2) % 2;
			post_op(s, &ops[k]);
		}
		wait_ops(s, ops, ALIAS_BURST, "sends to a peer's two entries");
		for (k = 0; k < ALIAS_BURST; k++) {
			snprintf(where, sizeof(where), "send %u (to entry %s%s)", k,
				 k % 2 ? "2" : "1",
				 ops[k].delivery_complete ?
				 ", FI_DELIVERY_COMPLETE" : "");
			expect_completed(&ops[k], FI_SEND | FI_TAGGED, where);
		}
	} else {
		for (k = 0; k < ALIAS_BURST; k++) {
			order_poison(bufs[k].data, alias_size(s, k), 0, k);
			op_init(&ops[k], OP_TRECV, bufs[k].data, alias_size(s, k));
			ops[k].tag = TAG_ORDER;
			ops[k].ignore = TAG_ORDER_IGNORE;
			post_op(s, &ops[k]);
		}
		oob_signal(s, SIG_POSTED);
		wait_ops(s, ops, ALIAS_BURST, "messages sent to our two entries");
		for (k = 0; k < ALIAS_BURST; k++)
			order_check_one(&ops[k], &bufs[k], alias_size(s, k), 0, k,
					true);
	}
	check_end();
	bufs_free(bufs, ALIAS_BURST);
}

/*
 * The same peer inserted twice (fi_av(3) allows it; fabtests inserts the
 * address of a peer the provider already knows from its first message, and
 * with -N the first entry is mrail's partial one, or the one it learnt).
 * Both entries must reach the same peer as one: one send order, every send
 * completing once, FI_DELIVERY_COMPLETE and rendezvous included. Then the
 * first entry is removed and the second carries a ping-pong alone (mrail:
 * the removed one is refused).
 */
void run_alias(struct session *s)
{
	uint8_t ours[MAX_NAME_LEN], theirs[MAX_NAME_LEN], dummy = 0;
	size_t our_len = sizeof(ours), their_len;
	fi_addr_t alias = FI_ADDR_NOTAVAIL, first = s->peer;
	char detail[96];
	ssize_t ret;

	if (fi_getname(&s->ep->fid, ours, &our_len))
		fatal("fi_getname for the alias test");
	oob_exchange_names(s, ours, our_len, theirs, &their_len);
	ret = fi_av_insert(s->av, theirs, 1, &alias, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %zd, fi_addr %llu and %llu", ret,
		 (unsigned long long) first, (unsigned long long) alias);
	/* fi_av(3) leaves duplicates to the provider: ofi_rxm hands back the
	 * same entry (counting its uses), mrail a second one. */
	check_once(ret == 1 && (alias != first || !prov_is_mrail(s)),
		   "fi_av_insert of a peer already in the AV gives an entry "
		   "(mrail: a second one)", detail);
	if (ret != 1) {
		end_test(s, "alias", SYNC_ALIAS);
		end_test(s, "alias removed", SYNC_ALIAS_REMOVED);
		return;
	}
	alias_burst(s, alias, CLIENT_TO_SERVER);
	alias_burst(s, alias, SERVER_TO_CLIENT);
	end_test(s, "alias", SYNC_ALIAS);

	ret = fi_av_remove(s->av, &first, 1, 0);
	snprintf(detail, sizeof(detail), "returned %zd", ret);
	check_once(!ret, "fi_av_remove of the peer's first entry", detail);
	s->peer = alias;
	if (prov_is_mrail(s)) {
		ret = fi_tsend(s->ep, &dummy, 1, NULL, first, TAG_ORDER, NULL);
		snprintf(detail, sizeof(detail), "returned %zd", ret);
		check_once(ret == -FI_EINVAL, "a send to the removed entry is "
			   "refused", detail);
	}
	/* The peer's state (its sequence stream, its waits) lives on. */
	test_ping_pong(s, alias_size(s, 2));
	test_ping_pong(s, LATE_EAGER_SIZE);
	end_test(s, "alias removed", SYNC_ALIAS_REMOVED);
}
