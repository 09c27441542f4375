/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/match.c: the matching rules of fi_msg(3) and
 * fi_tagged(3) one by one, with both queues and their counts checked after
 * every step, then a long random run checked against a plain array model
 * that must pair every receive with the very same message.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"
#include <utlist.h>

#include "match.h"

#define ANY MRAIL_MATCH_ANY_SRC

static struct mrail_match_item make_msg(uint64_t src, uint64_t tag)
{
	struct mrail_match_item item;

	memset(&item, 0, sizeof(item));
	item.src = src;
	item.tag = tag;
	return item;
}

static struct mrail_match_item make_recv(uint64_t src, uint64_t tag,
					 uint64_t ignore)
{
	struct mrail_match_item item = make_msg(src, tag);

	item.ignore = ignore;
	return item;
}

/* Both counts, and that each list really holds as many items as it says. */
static void check_counts(const struct mrail_match_queue *q, size_t posted,
			 size_t unexpected)
{
	struct mrail_match_item *item;
	size_t n;

	cr_assert_eq(q->posted_count, posted, "posted_count %zu, want %zu",
		     q->posted_count, posted);
	cr_assert_eq(q->unexpected_count, unexpected,
		     "unexpected_count %zu, want %zu", q->unexpected_count,
		     unexpected);
	DL_COUNT(q->posted, item, n);
	cr_assert_eq(n, posted, "posted list holds %zu", n);
	DL_COUNT(q->unexpected, item, n);
	cr_assert_eq(n, unexpected, "unexpected list holds %zu", n);
}

/* The list is exactly want[0..count), head first. */
static void check_list(struct mrail_match_item *head,
		       struct mrail_match_item **want, size_t count)
{
	struct mrail_match_item *item;
	size_t i = 0;

	DL_FOREACH(head, item) {
		cr_assert_lt(i, count, "list longer than %zu", count);
		cr_assert_eq(item, want[i], "item %zu differs", i);
		i++;
	}
	cr_assert_eq(i, count, "list holds %zu, want %zu", i, count);
}

static struct mrail_match_queue new_queue(void)
{
	struct mrail_match_queue q;

	memset(&q, 0xa5, sizeof(q));
	mrail_match_queue_init(&q);
	check_counts(&q, 0, 0);
	cr_assert_null(q.posted);
	cr_assert_null(q.unexpected);
	return q;
}

/* ---- the rules ---- */

Test(match_accepts, tag_without_ignore_bits_is_exact)
{
	struct mrail_match_item recv = make_recv(ANY, 0x1234, 0);
	struct mrail_match_item msg = make_msg(7, 0x1234);

	cr_assert(mrail_match_accepts(&recv, &msg));
	msg.tag = 0x1235;
	cr_assert_not(mrail_match_accepts(&recv, &msg));
	msg.tag = 0x1234 | (1ull << 63);
	cr_assert_not(mrail_match_accepts(&recv, &msg));
	msg.tag = 0;
	cr_assert_not(mrail_match_accepts(&recv, &msg));
}

Test(match_accepts, ignore_all_bits_takes_any_tag)
{
	struct mrail_match_item recv = make_recv(ANY, 0x1234, UINT64_MAX);
	struct mrail_match_item msg = make_msg(7, 0);
	static const uint64_t tags[] = { 0, 1, 0x1234, UINT64_MAX,
					 1ull << 63, 0xdeadbeefcafef00dull };
	size_t i;

	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		msg.tag = tags[i];
		cr_assert(mrail_match_accepts(&recv, &msg), "tag %#llx",
			  (unsigned long long) tags[i]);
	}
}

Test(match_accepts, ignore_some_bits)
{
	/* The low byte is free, the rest must equal 0xab00. */
	struct mrail_match_item recv = make_recv(ANY, 0xab42, 0xff);
	struct mrail_match_item msg = make_msg(7, 0);
	uint64_t low;

	for (low = 0; low < 0x100; low++) {
		msg.tag = 0xab00 | low;
		cr_assert(mrail_match_accepts(&recv, &msg));
	}
	msg.tag = 0xac42;
	cr_assert_not(mrail_match_accepts(&recv, &msg));
	msg.tag = 0x1ab42;
	cr_assert_not(mrail_match_accepts(&recv, &msg));

	/* Ignore bits of the message play no part: only the receive's do. */
	recv = make_recv(ANY, 0xab42, 0);
	msg = make_recv(7, 0xab43, 0xff);
	cr_assert_not(mrail_match_accepts(&recv, &msg));
}

Test(match_accepts, source)
{
	struct mrail_match_item any = make_recv(ANY, 5, 0);
	struct mrail_match_item from_2 = make_recv(2, 5, 0);
	struct mrail_match_item msg = make_msg(2, 5);

	cr_assert(mrail_match_accepts(&any, &msg));
	cr_assert(mrail_match_accepts(&from_2, &msg));
	msg.src = 3;
	cr_assert(mrail_match_accepts(&any, &msg));
	cr_assert_not(mrail_match_accepts(&from_2, &msg));
	msg.src = 0;
	cr_assert_not(mrail_match_accepts(&from_2, &msg));

	/* Source and tag must both hold. */
	msg = make_msg(2, 6);
	cr_assert_not(mrail_match_accepts(&from_2, &msg));
	cr_assert_not(mrail_match_accepts(&any, &msg));
}

/* ---- queues ---- */

Test(match, untagged_fifo_messages_first)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item msg[3], recv[3];
	int i;

	for (i = 0; i < 3; i++) {
		msg[i] = make_msg(1, 0);
		cr_assert_null(mrail_match_arrive(&q, &msg[i]));
		check_counts(&q, 0, (size_t) i + 1);
	}
	for (i = 0; i < 3; i++) {
		recv[i] = make_recv(ANY, 0, 0);
		cr_assert_eq(mrail_match_post_recv(&q, &recv[i]), &msg[i]);
		check_counts(&q, 0, 2 - (size_t) i);
	}
	cr_assert_null(q.unexpected);
}

Test(match, untagged_fifo_receives_first)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item msg[3], recv[3];
	int i;

	for (i = 0; i < 3; i++) {
		recv[i] = make_recv(ANY, 0, 0);
		cr_assert_null(mrail_match_post_recv(&q, &recv[i]));
		check_counts(&q, (size_t) i + 1, 0);
	}
	for (i = 0; i < 3; i++) {
		msg[i] = make_msg((uint64_t) i, 0);
		cr_assert_eq(mrail_match_arrive(&q, &msg[i]), &recv[i]);
		check_counts(&q, 2 - (size_t) i, 0);
	}
	cr_assert_null(q.posted);
}

Test(match, tags_with_ignore_bits_in_the_queue)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item exact = make_recv(ANY, 0x10, 0);
	struct mrail_match_item low_nibble = make_recv(ANY, 0x20, 0xf);
	struct mrail_match_item anything = make_recv(ANY, 0, UINT64_MAX);
	struct mrail_match_item m1 = make_msg(1, 0x2a);
	struct mrail_match_item m2 = make_msg(1, 0x10);
	struct mrail_match_item m3 = make_msg(1, 0x10);
	struct mrail_match_item m4 = make_msg(1, 0x2f);
	struct mrail_match_item *want[2];

	cr_assert_null(mrail_match_post_recv(&q, &exact));
	cr_assert_null(mrail_match_post_recv(&q, &low_nibble));
	cr_assert_null(mrail_match_post_recv(&q, &anything));
	check_counts(&q, 3, 0);

	/* 0x2a passes over the exact 0x10 to the 0x2? receive. */
	cr_assert_eq(mrail_match_arrive(&q, &m1), &low_nibble);
	check_counts(&q, 2, 0);
	want[0] = &exact;
	want[1] = &anything;
	check_list(q.posted, want, 2);

	cr_assert_eq(mrail_match_arrive(&q, &m2), &exact);
	check_counts(&q, 1, 0);
	/* Only the match-all receive is left; it takes the second 0x10. */
	cr_assert_eq(mrail_match_arrive(&q, &m3), &anything);
	check_counts(&q, 0, 0);
	cr_assert_null(mrail_match_arrive(&q, &m4));
	check_counts(&q, 0, 1);

	/* A receive whose fixed bits differ does not take 0x2f. */
	exact = make_recv(ANY, 0x1e, 0xf0);
	cr_assert_null(mrail_match_post_recv(&q, &exact));
	check_counts(&q, 1, 1);
	low_nibble = make_recv(ANY, 0x20, 0xf);
	cr_assert_eq(mrail_match_post_recv(&q, &low_nibble), &m4);
	check_counts(&q, 1, 0);
}

Test(match, directed_source_and_any)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item from_2 = make_recv(2, 9, 0);
	struct mrail_match_item from_any = make_recv(ANY, 9, 0);
	struct mrail_match_item from_2b = make_recv(2, 9, 0);
	struct mrail_match_item m1 = make_msg(1, 9);
	struct mrail_match_item m2 = make_msg(2, 9);
	struct mrail_match_item m3 = make_msg(2, 9);
	struct mrail_match_item m4 = make_msg(3, 9);
	struct mrail_match_item *want[2];

	cr_assert_null(mrail_match_post_recv(&q, &from_2));
	cr_assert_null(mrail_match_post_recv(&q, &from_any));
	cr_assert_null(mrail_match_post_recv(&q, &from_2b));
	check_counts(&q, 3, 0);

	/* From 1: the receive for 2 is older but refuses it. */
	cr_assert_eq(mrail_match_arrive(&q, &m1), &from_any);
	check_counts(&q, 2, 0);
	cr_assert_eq(mrail_match_arrive(&q, &m2), &from_2);
	check_counts(&q, 1, 0);
	cr_assert_eq(mrail_match_arrive(&q, &m3), &from_2b);
	check_counts(&q, 0, 0);

	/* Messages first: a receive for 2 skips the message from 3. */
	m2 = make_msg(2, 9);
	cr_assert_null(mrail_match_arrive(&q, &m4));
	cr_assert_null(mrail_match_arrive(&q, &m2));
	check_counts(&q, 0, 2);
	from_2 = make_recv(2, 9, 0);
	cr_assert_eq(mrail_match_post_recv(&q, &from_2), &m2);
	check_counts(&q, 0, 1);
	want[0] = &m4;
	check_list(q.unexpected, want, 1);
	from_2 = make_recv(2, 9, 0);
	cr_assert_null(mrail_match_post_recv(&q, &from_2));
	check_counts(&q, 1, 1);
	from_any = make_recv(ANY, 9, 0);
	cr_assert_eq(mrail_match_post_recv(&q, &from_any), &m4);
	check_counts(&q, 1, 0);
}

Test(match, oldest_candidate_wins_on_both_sides)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item msg[5], recv[5];
	struct mrail_match_item *want[4];
	int i;

	/* Unexpected: tags 1, 2, 1, 2, 1; a receive for 1 takes the first. */
	msg[0] = make_msg(1, 1);
	msg[1] = make_msg(1, 2);
	msg[2] = make_msg(1, 1);
	msg[3] = make_msg(1, 2);
	msg[4] = make_msg(1, 1);
	for (i = 0; i < 5; i++)
		cr_assert_null(mrail_match_arrive(&q, &msg[i]));
	check_counts(&q, 0, 5);

	recv[0] = make_recv(ANY, 2, 0);
	cr_assert_eq(mrail_match_post_recv(&q, &recv[0]), &msg[1]);
	check_counts(&q, 0, 4);
	recv[1] = make_recv(ANY, 1, 0);
	cr_assert_eq(mrail_match_post_recv(&q, &recv[1]), &msg[0]);
	check_counts(&q, 0, 3);
	recv[2] = make_recv(ANY, 0, UINT64_MAX);
	cr_assert_eq(mrail_match_post_recv(&q, &recv[2]), &msg[2]);
	check_counts(&q, 0, 2);
	want[0] = &msg[3];
	want[1] = &msg[4];
	check_list(q.unexpected, want, 2);
	recv[3] = make_recv(ANY, 1, 0);
	cr_assert_eq(mrail_match_post_recv(&q, &recv[3]), &msg[4]);
	recv[4] = make_recv(ANY, 2, 0);
	cr_assert_eq(mrail_match_post_recv(&q, &recv[4]), &msg[3]);
	check_counts(&q, 0, 0);

	/* Posted: several receives accept one message; the oldest wins. */
	recv[0] = make_recv(ANY, 7, 0);
	recv[1] = make_recv(1, 7, 0);
	recv[2] = make_recv(ANY, 0, UINT64_MAX);
	recv[3] = make_recv(ANY, 7, 0);
	for (i = 0; i < 4; i++)
		cr_assert_null(mrail_match_post_recv(&q, &recv[i]));
	check_counts(&q, 4, 0);
	msg[0] = make_msg(1, 7);
	cr_assert_eq(mrail_match_arrive(&q, &msg[0]), &recv[0]);
	msg[1] = make_msg(1, 7);
	cr_assert_eq(mrail_match_arrive(&q, &msg[1]), &recv[1]);
	msg[2] = make_msg(1, 7);
	cr_assert_eq(mrail_match_arrive(&q, &msg[2]), &recv[2]);
	check_counts(&q, 1, 0);
	want[0] = &recv[3];
	check_list(q.posted, want, 1);
}

Test(match, receive_waits_for_a_later_message)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item other = make_msg(1, 3);
	struct mrail_match_item recv = make_recv(1, 4, 0);
	struct mrail_match_item msg = make_msg(1, 4);

	cr_assert_null(mrail_match_arrive(&q, &other));
	check_counts(&q, 0, 1);
	cr_assert_null(mrail_match_post_recv(&q, &recv));
	check_counts(&q, 1, 1);
	cr_assert_eq(mrail_match_arrive(&q, &msg), &recv);
	check_counts(&q, 0, 1);
	cr_assert_eq(q.unexpected, &other);
}

Test(match, peek_leaves_the_message)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item m1 = make_msg(1, 5);
	struct mrail_match_item m2 = make_msg(2, 6);
	struct mrail_match_item m3 = make_msg(2, 6);
	struct mrail_match_item probe = make_recv(2, 6, 0);
	struct mrail_match_item recv = make_recv(ANY, 6, 0);
	struct mrail_match_item *want[3] = { &m1, &m2, &m3 };

	cr_assert_null(mrail_match_peek(&q, &probe), "empty queue");
	cr_assert_null(mrail_match_arrive(&q, &m1));
	cr_assert_null(mrail_match_peek(&q, &probe), "no match");
	cr_assert_null(mrail_match_arrive(&q, &m2));
	cr_assert_null(mrail_match_arrive(&q, &m3));
	check_counts(&q, 0, 3);

	cr_assert_eq(mrail_match_peek(&q, &probe), &m2);
	cr_assert_eq(mrail_match_peek(&q, &probe), &m2, "peek again");
	check_counts(&q, 0, 3);
	check_list(q.unexpected, want, 3);

	/* The probe was never queued as a receive. */
	cr_assert_null(q.posted);
	cr_assert_eq(mrail_match_post_recv(&q, &recv), &m2);
	check_counts(&q, 0, 2);
	cr_assert_eq(mrail_match_peek(&q, &probe), &m3);
}

Test(match, claim_hides_the_message)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item m1 = make_msg(1, 5);
	struct mrail_match_item m2 = make_msg(1, 5);
	struct mrail_match_item probe = make_recv(ANY, 5, 0);
	struct mrail_match_item recv = make_recv(ANY, 5, 0);
	struct mrail_match_item recv2 = make_recv(ANY, 0, UINT64_MAX);
	struct mrail_match_item *want[2];
	int context_a, context_b;

	cr_assert_null(mrail_match_arrive(&q, &m1));
	cr_assert_eq(mrail_match_peek(&q, &probe), &m1);
	mrail_match_claim(&m1, &context_a);
	check_counts(&q, 0, 1);
	cr_assert(m1.claimed);
	cr_assert_eq(m1.claim_context, &context_a);

	/* Peek and receives look straight through it. */
	cr_assert_null(mrail_match_peek(&q, &probe));
	cr_assert_null(mrail_match_post_recv(&q, &recv));
	check_counts(&q, 1, 1);

	/* A new message goes to the receive, not behind the claimed one. */
	cr_assert_eq(mrail_match_arrive(&q, &m2), &recv);
	check_counts(&q, 0, 1);
	m2 = make_msg(1, 5);
	cr_assert_null(mrail_match_arrive(&q, &m2));
	check_counts(&q, 0, 2);
	cr_assert_eq(mrail_match_peek(&q, &probe), &m2);
	want[0] = &m1;
	want[1] = &m2;
	check_list(q.unexpected, want, 2);

	/* Only its own context takes it, and only once. */
	cr_assert_null(mrail_match_take_claimed(&q, &context_b));
	cr_assert_null(mrail_match_take_claimed(&q, NULL));
	check_counts(&q, 0, 2);
	cr_assert_eq(mrail_match_take_claimed(&q, &context_a), &m1);
	check_counts(&q, 0, 1);
	cr_assert_null(mrail_match_take_claimed(&q, &context_a));
	check_counts(&q, 0, 1);

	cr_assert_eq(mrail_match_post_recv(&q, &recv2), &m2);
	check_counts(&q, 0, 0);
}

Test(match, claims_for_two_contexts)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item m[4];
	struct mrail_match_item probe = make_recv(ANY, 0, UINT64_MAX);
	struct mrail_match_item *want[2];
	int context_a, context_b;
	int i;

	for (i = 0; i < 4; i++) {
		m[i] = make_msg(1, (uint64_t) i);
		cr_assert_null(mrail_match_arrive(&q, &m[i]));
	}
	for (i = 0; i < 3; i++) {
		cr_assert_eq(mrail_match_peek(&q, &probe), &m[i]);
		mrail_match_claim(&m[i], i == 1 ? &context_b : &context_a);
	}
	check_counts(&q, 0, 4);
	cr_assert_eq(mrail_match_peek(&q, &probe), &m[3]);

	cr_assert_eq(mrail_match_take_claimed(&q, &context_b), &m[1]);
	cr_assert_null(mrail_match_take_claimed(&q, &context_b));
	check_counts(&q, 0, 3);
	want[0] = &m[0];
	want[1] = &m[2];
	cr_assert_eq(mrail_match_take_claimed(&q, &context_a), want[0],
		     "the older claim first");
	cr_assert_eq(mrail_match_take_claimed(&q, &context_a), want[1]);
	cr_assert_null(mrail_match_take_claimed(&q, &context_a));
	check_counts(&q, 0, 1);
	cr_assert_eq(q.unexpected, &m[3]);
}

/* An item that arrives carrying stale claim state from earlier use. */
Test(match, arrival_is_never_claimed)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item msg = make_msg(1, 5);
	struct mrail_match_item probe = make_recv(ANY, 5, 0);
	int context;

	msg.claimed = true;
	msg.claim_context = &context;
	cr_assert_null(mrail_match_arrive(&q, &msg));
	cr_assert_not(msg.claimed);
	cr_assert_null(msg.claim_context);
	cr_assert_eq(mrail_match_peek(&q, &probe), &msg);
	cr_assert_null(mrail_match_take_claimed(&q, &context));
	check_counts(&q, 0, 1);
}

Test(match, discard_by_remove_unexpected)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item m[3];
	struct mrail_match_item probe = make_recv(ANY, 1, 0);
	struct mrail_match_item recv = make_recv(ANY, 0, UINT64_MAX);
	struct mrail_match_item *want[2];
	int i;

	for (i = 0; i < 3; i++) {
		m[i] = make_msg(1, (uint64_t) i);
		cr_assert_null(mrail_match_arrive(&q, &m[i]));
	}
	check_counts(&q, 0, 3);

	/* FI_PEEK | FI_DISCARD: the middle one goes, the order stays. */
	cr_assert_eq(mrail_match_peek(&q, &probe), &m[1]);
	mrail_match_remove_unexpected(&q, &m[1]);
	check_counts(&q, 0, 2);
	want[0] = &m[0];
	want[1] = &m[2];
	check_list(q.unexpected, want, 2);
	cr_assert_null(mrail_match_peek(&q, &probe));

	/* A second removal of the same message changes nothing. */
	mrail_match_remove_unexpected(&q, &m[1]);
	check_counts(&q, 0, 2);
	check_list(q.unexpected, want, 2);

	/* Head, then tail, then the queue is empty. */
	mrail_match_remove_unexpected(&q, &m[0]);
	check_counts(&q, 0, 1);
	cr_assert_eq(q.unexpected, &m[2]);
	mrail_match_remove_unexpected(&q, &m[2]);
	check_counts(&q, 0, 0);
	cr_assert_null(q.unexpected);
	cr_assert_null(mrail_match_post_recv(&q, &recv));
	check_counts(&q, 1, 0);
}

Test(match, discard_a_claimed_message)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item msg = make_msg(1, 1);
	struct mrail_match_item probe = make_recv(ANY, 1, 0);
	int context;

	cr_assert_null(mrail_match_arrive(&q, &msg));
	cr_assert_eq(mrail_match_peek(&q, &probe), &msg);
	mrail_match_claim(&msg, &context);
	/* FI_CLAIM | FI_DISCARD: taken by its context, then dropped. */
	cr_assert_eq(mrail_match_take_claimed(&q, &context), &msg);
	check_counts(&q, 0, 0);
	mrail_match_remove_unexpected(&q, &msg);
	check_counts(&q, 0, 0);
}

Test(match, cancel_posted_and_matched)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item r[3];
	struct mrail_match_item msg = make_msg(1, 0);
	struct mrail_match_item stray = make_msg(1, 9);
	struct mrail_match_item never = make_recv(ANY, 0, 0);
	struct mrail_match_item *want[2];
	int i;

	for (i = 0; i < 3; i++) {
		r[i] = make_recv(ANY, 0, 0);
		cr_assert_null(mrail_match_post_recv(&q, &r[i]));
	}
	check_counts(&q, 3, 0);

	cr_assert_eq(mrail_match_arrive(&q, &msg), &r[0]);
	check_counts(&q, 2, 0);
	cr_assert_not(mrail_match_cancel_recv(&q, &r[0]), "already matched");
	check_counts(&q, 2, 0);

	cr_assert(mrail_match_cancel_recv(&q, &r[2]));
	check_counts(&q, 1, 0);
	cr_assert_not(mrail_match_cancel_recv(&q, &r[2]), "cancelled twice");
	check_counts(&q, 1, 0);
	cr_assert_not(mrail_match_cancel_recv(&q, &never), "never posted");

	/* A message in the unexpected queue is no posted receive either. */
	cr_assert_null(mrail_match_arrive(&q, &stray));
	check_counts(&q, 1, 1);
	cr_assert_not(mrail_match_cancel_recv(&q, &stray));
	check_counts(&q, 1, 1);
	cr_assert_eq(q.unexpected, &stray);

	want[0] = &r[1];
	check_list(q.posted, want, 1);
	cr_assert(mrail_match_cancel_recv(&q, &r[1]));
	check_counts(&q, 0, 1);
	cr_assert_null(q.posted);
	cr_assert_not(mrail_match_cancel_recv(&q, &r[1]));

	/* The queue still works after all of that. */
	msg = make_msg(1, 0);
	r[0] = make_recv(ANY, 0, 0);
	cr_assert_null(mrail_match_post_recv(&q, &r[0]));
	cr_assert_eq(mrail_match_arrive(&q, &msg), &r[0]);
	check_counts(&q, 0, 1);
}

Test(match, repost_front_keeps_its_place)
{
	struct mrail_match_queue q = new_queue();
	struct mrail_match_item multi = make_recv(ANY, 0, 0);
	struct mrail_match_item younger = make_recv(ANY, 0, 0);
	struct mrail_match_item m[3];
	struct mrail_match_item *want[2] = { &multi, &younger };
	int i;

	for (i = 0; i < 3; i++)
		m[i] = make_msg(1, 0);

	cr_assert_null(mrail_match_post_recv(&q, &multi));
	cr_assert_null(mrail_match_post_recv(&q, &younger));
	check_counts(&q, 2, 0);

	/* A multi-receive buffer with room left goes back ahead. */
	cr_assert_eq(mrail_match_arrive(&q, &m[0]), &multi);
	check_counts(&q, 1, 0);
	mrail_match_repost_front(&q, &multi);
	check_counts(&q, 2, 0);
	check_list(q.posted, want, 2);
	cr_assert_eq(mrail_match_arrive(&q, &m[1]), &multi);
	check_counts(&q, 1, 0);

	/* Reposted onto an empty queue, too. */
	cr_assert_eq(mrail_match_arrive(&q, &m[2]), &younger);
	check_counts(&q, 0, 0);
	mrail_match_repost_front(&q, &multi);
	check_counts(&q, 1, 0);
	cr_assert_eq(q.posted, &multi);
	cr_assert(mrail_match_cancel_recv(&q, &multi));
	check_counts(&q, 0, 0);
}

/* ---- FI_MULTI_RECV buffer space ---- */

Test(match, multi_space_packs_messages_in_order)
{
	struct mrail_multi_space space = { .cap = 100, .min = 10 };
	size_t off, take;

	cr_assert_not(mrail_multi_space_claim(&space, 30, &off, &take));
	cr_assert_eq(off, 0);
	cr_assert_eq(take, 30);
	/* A 0-byte message takes no room and keeps its place. */
	cr_assert_not(mrail_multi_space_claim(&space, 0, &off, &take));
	cr_assert_eq(off, 30);
	cr_assert_eq(take, 0);
	cr_assert_not(mrail_multi_space_claim(&space, 60, &off, &take));
	cr_assert_eq(off, 30);
	cr_assert_eq(take, 60);
	cr_assert_eq(space.used, 90);
	/* 10 bytes left is not below min: one more fits, then it is full. */
	cr_assert(mrail_multi_space_claim(&space, 10, &off, &take));
	cr_assert_eq(off, 90);
	cr_assert_eq(take, 10);
	cr_assert_eq(space.used, 100);
}

Test(match, multi_space_releases_below_min)
{
	struct mrail_multi_space space = { .cap = 100, .min = 10 };
	size_t off, take;

	cr_assert_not(mrail_multi_space_claim(&space, 90, &off, &take));
	cr_assert(mrail_multi_space_claim(&space, 1, &off, &take),
		  "9 bytes left, below min 10");
	cr_assert_eq(off, 90);
	cr_assert_eq(take, 1);
}

Test(match, multi_space_truncates_what_does_not_fit)
{
	struct mrail_multi_space space = { .cap = 100, .min = 10 };
	size_t off, take;

	cr_assert_not(mrail_multi_space_claim(&space, 50, &off, &take));
	cr_assert(mrail_multi_space_claim(&space, (uint64_t) 1 << 40, &off, &take));
	cr_assert_eq(off, 50);
	cr_assert_eq(take, 50, "only the 50 bytes left are written");
	cr_assert_eq(space.used, 100);
}

Test(match, multi_space_min_zero_releases_when_full)
{
	struct mrail_multi_space space = { .cap = 8, .min = 0 };
	size_t off, take;

	cr_assert_not(mrail_multi_space_claim(&space, 7, &off, &take));
	cr_assert_not(mrail_multi_space_claim(&space, 0, &off, &take));
	cr_assert(mrail_multi_space_claim(&space, 1, &off, &take));
	cr_assert_eq(off, 7);
}

Test(match, multi_space_min_above_cap_releases_after_one)
{
	struct mrail_multi_space space = { .cap = 8, .min = 64 };
	size_t off, take;

	cr_assert(mrail_multi_space_claim(&space, 2, &off, &take));
	cr_assert_eq(off, 0);
	cr_assert_eq(take, 2);
}

Test(match, multi_space_survives_corrupt_used)
{
	struct mrail_multi_space space = { .cap = 8, .used = 50, .min = 1 };
	size_t off, take;

	cr_assert(mrail_multi_space_claim(&space, 4, &off, &take));
	cr_assert_eq(off, 8);
	cr_assert_eq(take, 0);
}

/* ---- against a reference model ---- */

/* Fixed-seed xorshift64: the same run every time. */
static uint64_t rng_state;

static size_t rng_below(size_t bound)
{
	return (size_t) test_rng_below(&rng_state, bound);
}

#define MODEL_OPS	30000
#define MODEL_CONTEXTS	4
#define MODEL_SWING	200

struct model_msg {
	struct mrail_match_item *item;
	bool claimed;
	int context;
};

/* The arrays a matching engine could be, were speed no concern. */
struct model {
	struct mrail_match_item *posted[MODEL_OPS];
	size_t posted_count;
	struct model_msg unexpected[MODEL_OPS];
	size_t unexpected_count;
};

static struct model model;
static struct mrail_match_item recv_pool[MODEL_OPS], msg_pool[MODEL_OPS];
static int contexts[MODEL_CONTEXTS];

/* fi_tagged(3)'s own wording of the rule, not match.c's. */
static bool model_accepts(const struct mrail_match_item *recv,
			  const struct mrail_match_item *msg)
{
	if (recv->src != MRAIL_MATCH_ANY_SRC && recv->src != msg->src)
		return false;
	return (msg->tag & ~recv->ignore) == (recv->tag & ~recv->ignore);
}

static long model_find_msg(const struct mrail_match_item *recv)
{
	size_t i;

	for (i = 0; i < model.unexpected_count; i++) {
		if (!model.unexpected[i].claimed &&
		    model_accepts(recv, model.unexpected[i].item))
			return (long) i;
	}
	return -1;
}

static long model_find_claimed(int context)
{
	size_t i;

	for (i = 0; i < model.unexpected_count; i++) {
		if (model.unexpected[i].claimed &&
		    model.unexpected[i].context == context)
			return (long) i;
	}
	return -1;
}

static struct mrail_match_item *model_take_msg(size_t at)
{
	struct mrail_match_item *item = model.unexpected[at].item;

	memmove(&model.unexpected[at], &model.unexpected[at + 1],
		(model.unexpected_count - at - 1) * sizeof(model.unexpected[0]));
	model.unexpected_count--;
	return item;
}

static struct mrail_match_item *model_take_recv(size_t at)
{
	struct mrail_match_item *item = model.posted[at];

	memmove(&model.posted[at], &model.posted[at + 1],
		(model.posted_count - at - 1) * sizeof(model.posted[0]));
	model.posted_count--;
	return item;
}

static void model_check(const struct mrail_match_queue *q, size_t op)
{
	struct mrail_match_item *item;
	size_t i = 0;

	cr_assert_eq(q->posted_count, model.posted_count, "op %zu", op);
	cr_assert_eq(q->unexpected_count, model.unexpected_count, "op %zu",
		     op);
	DL_FOREACH(q->posted, item) {
		cr_assert_lt(i, model.posted_count, "op %zu", op);
		cr_assert_eq(item, model.posted[i], "op %zu posted %zu", op, i);
		i++;
	}
	cr_assert_eq(i, model.posted_count, "op %zu", op);
	i = 0;
	DL_FOREACH(q->unexpected, item) {
		cr_assert_lt(i, model.unexpected_count, "op %zu", op);
		cr_assert_eq(item, model.unexpected[i].item,
			     "op %zu unexpected %zu", op, i);
		cr_assert_eq(item->claimed, model.unexpected[i].claimed,
			     "op %zu", op);
		i++;
	}
	cr_assert_eq(i, model.unexpected_count, "op %zu", op);
}

/* Few sources and tags and some wide ignore masks, so that most match. */
static void random_recv(struct mrail_match_item *item)
{
	static const uint64_t srcs[] = { 0, 1, 2, ANY, ANY };
	static const uint64_t ignores[] = { 0, 0, 0, 1, 2, 3, UINT64_MAX };

	*item = make_recv(srcs[rng_below(5)], rng_below(4),
			  ignores[rng_below(7)]);
}

static void random_msg(struct mrail_match_item *item)
{
	*item = make_msg(rng_below(3), rng_below(4));
}

/* What the random run did, so a test can tell every path was taken. */
struct model_tally {
	size_t recv_matched, recv_queued, msg_matched, msg_queued;
	size_t peek_hits, claims, takes, discards, cancels, stale_cancels;
	size_t reposts;
};

/* Receives matched and out of the queues, for repost and stale cancel. */
static struct mrail_match_item *spent[MODEL_OPS];
static size_t spent_count;

static void op_post_recv(struct mrail_match_queue *q,
			 struct mrail_match_item *recv,
			 struct model_tally *tally, size_t op)
{
	long at = model_find_msg(recv);
	struct mrail_match_item *got = mrail_match_post_recv(q, recv);

	if (at < 0) {
		cr_assert_null(got, "op %zu", op);
		model.posted[model.posted_count++] = recv;
		tally->recv_queued++;
		return;
	}
	cr_assert_eq(got, model_take_msg((size_t) at), "op %zu", op);
	spent[spent_count++] = recv;
	tally->recv_matched++;
}

static void op_arrive(struct mrail_match_queue *q,
		      struct mrail_match_item *msg,
		      struct model_tally *tally, size_t op)
{
	struct mrail_match_item *got = mrail_match_arrive(q, msg);
	struct model_msg *entry;
	size_t i;

	for (i = 0; i < model.posted_count; i++) {
		if (model_accepts(model.posted[i], msg))
			break;
	}
	if (i == model.posted_count) {
		cr_assert_null(got, "op %zu", op);
		entry = &model.unexpected[model.unexpected_count++];
		entry->item = msg;
		entry->claimed = false;
		entry->context = -1;
		tally->msg_queued++;
		return;
	}
	cr_assert_eq(got, model_take_recv(i), "op %zu", op);
	spent[spent_count++] = got;
	tally->msg_matched++;
}

/* FI_PEEK, then now and then FI_CLAIM or FI_DISCARD on what it found. */
static void op_peek(struct mrail_match_queue *q, struct model_tally *tally,
		    size_t op)
{
	struct mrail_match_item probe, *got;
	long at;
	int context;

	random_recv(&probe);
	at = model_find_msg(&probe);
	got = mrail_match_peek(q, &probe);
	if (at < 0) {
		cr_assert_null(got, "op %zu", op);
		return;
	}
	cr_assert_eq(got, model.unexpected[at].item, "op %zu", op);
	tally->peek_hits++;

	switch (rng_below(3)) {
	case 0:
		context = (int) rng_below(MODEL_CONTEXTS);
		mrail_match_claim(got, &contexts[context]);
		model.unexpected[at].claimed = true;
		model.unexpected[at].context = context;
		tally->claims++;
		break;
	case 1:
		mrail_match_remove_unexpected(q, got);
		model_take_msg((size_t) at);
		tally->discards++;
		break;
	default:
		break;
	}
}

static void op_take_claimed(struct mrail_match_queue *q,
			    struct model_tally *tally, size_t op)
{
	int context = (int) rng_below(MODEL_CONTEXTS);
	long at = model_find_claimed(context);
	struct mrail_match_item *got;

	got = mrail_match_take_claimed(q, &contexts[context]);
	if (at < 0) {
		cr_assert_null(got, "op %zu", op);
		return;
	}
	cr_assert_eq(got, model_take_msg((size_t) at), "op %zu", op);
	tally->takes++;
}

/* Cancel a posted receive, or one matched long ago (which must fail). */
static void op_cancel(struct mrail_match_queue *q, struct model_tally *tally,
		      size_t op)
{
	struct mrail_match_item *recv;
	size_t at;

	if (model.posted_count && rng_below(2)) {
		at = rng_below(model.posted_count);
		recv = model.posted[at];
		cr_assert(mrail_match_cancel_recv(q, recv), "op %zu", op);
		model_take_recv(at);
		spent[spent_count++] = recv;
		tally->cancels++;
		return;
	}
	if (!spent_count)
		return;
	recv = spent[rng_below(spent_count)];
	cr_assert_not(mrail_match_cancel_recv(q, recv), "op %zu", op);
	tally->stale_cancels++;
}

/* The most recently spent receive goes back to the head. */
static void op_repost_front(struct mrail_match_queue *q,
			    struct model_tally *tally)
{
	struct mrail_match_item *recv;

	if (!spent_count)
		return;
	recv = spent[--spent_count];
	mrail_match_repost_front(q, recv);
	memmove(&model.posted[1], &model.posted[0],
		model.posted_count * sizeof(model.posted[0]));
	model.posted[0] = recv;
	model.posted_count++;
	tally->reposts++;
}

Test(match_model, random_operations_pair_like_the_model)
{
	struct mrail_match_queue q = new_queue();
	struct model_tally tally;
	size_t recvs = 0, msgs = 0, op;
	unsigned dice, post_share;
	bool favour_recv = true;

	memset(&model, 0, sizeof(model));
	memset(&tally, 0, sizeof(tally));
	spent_count = 0;
	rng_state = 0x2545f4914f6cdd1dull;

	for (op = 0; op < MODEL_OPS; op++) {
		/*
		 * Favour receives until many wait, then messages until many
		 * wait, so that each queue in turn grows long and drains.
		 */
		if (favour_recv && q.posted_count >= MODEL_SWING)
			favour_recv = false;
		else if (!favour_recv && q.unexpected_count >= MODEL_SWING)
			favour_recv = true;
		post_share = favour_recv ? 50 : 20;
		dice = (unsigned) rng_below(100);
		if (dice < post_share) {
			random_recv(&recv_pool[recvs]);
			op_post_recv(&q, &recv_pool[recvs++], &tally, op);
		} else if (dice < 70) {
			random_msg(&msg_pool[msgs]);
			op_arrive(&q, &msg_pool[msgs++], &tally, op);
		} else if (dice < 82) {
			op_peek(&q, &tally, op);
		} else if (dice < 88) {
			op_take_claimed(&q, &tally, op);
		} else if (dice < 95) {
			op_cancel(&q, &tally, op);
		} else {
			op_repost_front(&q, &tally);
		}
		model_check(&q, op);
	}

	/* Every path ran, many times. */
	cr_assert_gt(tally.recv_matched, 1000);
	cr_assert_gt(tally.recv_queued, 1000);
	cr_assert_gt(tally.msg_matched, 1000);
	cr_assert_gt(tally.msg_queued, 1000);
	cr_assert_gt(tally.peek_hits, 500);
	cr_assert_gt(tally.claims, 100);
	cr_assert_gt(tally.takes, 100);
	cr_assert_gt(tally.discards, 100);
	cr_assert_gt(tally.cancels, 100);
	cr_assert_gt(tally.stale_cancels, 100);
	cr_assert_gt(tally.reposts, 100);
	cr_assert_eq(tally.recv_matched + tally.msg_matched + tally.takes +
		     tally.discards + q.unexpected_count, msgs,
		     "every message accounted for");
}
