/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg's FI_MULTI_RECV test: several messages landing in one
 * buffer, each completion checked against where its message must be.
 */
#include "fi_mrail_msg.h"

/* ------------------------------------------------ 9: FI_MULTI_RECV */

/* The minimum the receiver sets, and the room a buffer has after its last
 * message: below the minimum, so that message releases it. */
#define MULTI_MIN		256
#define MULTI_SLACK		100
/* The message after a buffer's last goes to an ordinary receive. */
#define MULTI_NEXT_LEN		77

/* Each list keeps MULTI_MIN bytes or more behind every message but the
 * last, so exactly these messages fill the buffer. */
static const struct multi_case {
	const char *name;
	size_t count;
	size_t sizes[MULTI_MAX_PARTS];
	/* Truncation cases: the buffer's size, which the last message
	 * overflows (FI_ETRUNC, and the buffer is full); 0: all fit. */
	size_t cap;
} multi_cases[] = {
	{ "eager", 6, { 1000, 7, 0, 4096, 16336, 300 }, 0 },
	{ "rendezvous", 3, { 65539, 16337, 100003 }, 0 },
	{ "eager and rendezvous", 5, { 64, 65539, 0, 16337, 1000 }, 0 },
	{ "eager, the last truncated", 2, { 1000, 5000 }, 1300 },
	{ "rendezvous, the last truncated", 2, { 20000, 100003 }, 60000 },
};

/* Where message i lands: messages are packed, each taking what fits. */
static size_t multi_offset(const struct multi_case *mc, size_t i)
{
	size_t off = 0, k;

	for (k = 0; k < i; k++)
		off += mc->sizes[k];
	return mc->cap && off > mc->cap ? mc->cap : off;
}

static size_t multi_cap(const struct multi_case *mc)
{
	return mc->cap ? mc->cap : multi_offset(mc, mc->count) + MULTI_SLACK;
}

/* The bytes of message i that fit in the buffer. */
static size_t multi_take(const struct multi_case *mc, size_t i)
{
	size_t room = multi_cap(mc) - multi_offset(mc, i);

	return mc->sizes[i] < room ? mc->sizes[i] : room;
}

static size_t multi_msg_len(const struct multi_case *mc, size_t i)
{
	return i < mc->count ? mc->sizes[i] : MULTI_NEXT_LEN;
}

static uint32_t multi_iter(size_t i, uint32_t iter)
{
	return (uint32_t) (iter * 64 + i);
}

static void multi_send(struct session *s, const struct multi_case *mc,
		       uint32_t iter, bool unexpected)
{
	struct op ops[MULTI_MAX_PARTS + 1];
	struct buf bufs[MULTI_MAX_PARTS + 1];
	size_t i, n = mc->count + 1, len;
	char where[64];

	for (i = 0; i < n; i++) {
		len = multi_msg_len(mc, i);
		buf_alloc(&bufs[i], len);
		fill_pattern(bufs[i].data, len, PAT_MULTI, len, multi_iter(i, iter));
		op_init(&ops[i], OP_SEND, bufs[i].data, len);
	}
	if (!unexpected)
		oob_wait_signal(s, SIG_POSTED, "post its multi-receive buffer");
	for (i = 0; i < n; i++)
		post_op(s, &ops[i]);
	if (unexpected)
		oob_signal(s, SIG_SENT);
	wait_ops(s, ops, n, "sends into a multi-receive buffer");
	for (i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "iteration %u, send %zu", iter, i);
		expect_completed(&ops[i], FI_SEND | FI_MSG, where);
	}
	bufs_free(bufs, n);
}

/* The message a completion reports: the first not yet seen that starts
 * where the completion points and has its length (0-byte messages share
 * an offset with the next one). */
static size_t multi_find(const struct multi_case *mc, const struct buf *b,
			 const struct fi_cq_tagged_entry *e, const bool *seen)
{
	size_t i;

	for (i = 0; i < mc->count; i++) {
		if (!seen[i] && e->len == multi_take(mc, i) &&
		    (uint8_t *) e->buf == b->data + multi_offset(mc, i))
			return i;
	}
	return SIZE_MAX;
}

static void multi_check_log(const struct multi_case *mc, const struct op *op,
			    const struct buf *b, uint32_t iter)
{
	const struct multi_log *log = op->multi;
	bool seen[MULTI_MAX_PARTS] = { false };
	const struct fi_cq_tagged_entry *e;
	size_t k, i, off, take;
	uint64_t want;
	char where[80];

	if (log->count != mc->count) {
		check_fail("iteration %u: %zu completions for %zu messages", iter,
			   log->count, mc->count);
		return;
	}
	for (k = 0; k < log->count; k++) {
		e = &log->entries[k];
		snprintf(where, sizeof(where), "iteration %u, completion %zu of %zu",
			 iter, k + 1, log->count);
		want = FI_RECV | FI_MSG | (k + 1 == log->count ? FI_MULTI_RECV : 0);
		if (e->flags != want) {
			char got[96], exp[96];

			flags_str(e->flags, got, sizeof(got));
			flags_str(want, exp, sizeof(exp));
			check_fail("%s: flags %s, expected %s (only the last one "
				   "releases the buffer)", where, got, exp);
		}
		if (e->op_context != &op->fi_ctx)
			check_fail("%s: context %p, posted with %p", where,
				   e->op_context, (const void *) &op->fi_ctx);
		i = multi_find(mc, b, e, seen);
		if (i == SIZE_MAX) {
			check_fail("%s: buf at offset %td, len %zu, error %s: no "
				   "message sent lands there", where,
				   (uint8_t *) e->buf - b->data, e->len,
				   log->errs[k] ? fi_strerror(log->errs[k]) : "none");
			continue;
		}
		seen[i] = true;
		off = multi_offset(mc, i);
		take = multi_take(mc, i);
		if (take < mc->sizes[i] && log->errs[k] != FI_ETRUNC)
			check_fail("%s: message %zu of %zu bytes, %zu of them fit: "
				   "error %s, expected FI_ETRUNC", where, i,
				   mc->sizes[i], take, log->errs[k] ?
				   fi_strerror(log->errs[k]) : "none");
		else if (take < mc->sizes[i] && log->olens[k] != mc->sizes[i] - take)
			check_fail("%s: truncated message %zu: olen %zu, expected "
				   "%zu", where, i, log->olens[k], mc->sizes[i] - take);
		else if (take == mc->sizes[i] && log->errs[k])
			check_fail("%s: error %s", where, fi_strerror(log->errs[k]));
		if (first_mismatch(b->data + off, 0, take, PAT_MULTI, mc->sizes[i],
				   multi_iter(i, iter)) < take)
			check_fail("%s: message %zu (%zu bytes at offset %zu) differs "
				   "from what was sent", where, i, take, off);
	}
}

static void multi_receive(struct session *s, const struct multi_case *mc,
			  struct buf *b, struct buf *next, uint32_t iter,
			  bool unexpected)
{
	struct multi_log log = { 0 };
	struct op ops[2];	/* [0] the multi-receive buffer, [1] the next */
	char where[64];

	memset(b->data, 0x5a, b->cap);
	poison_for(next->data, MULTI_NEXT_LEN, PAT_MULTI, MULTI_NEXT_LEN,
		   multi_iter(mc->count, iter));
	op_init(&ops[0], OP_MRECV, b->data, b->cap);
	ops[0].multi = &log;
	op_init(&ops[1], OP_RECV, next->data, MULTI_NEXT_LEN);
	if (unexpected) {
		oob_wait_signal(s, SIG_SENT, "send to the multi-receive buffer");
		drain(s, ORDER_SETTLE_MS);
	}
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	if (!unexpected)
		oob_signal(s, SIG_POSTED);
	wait_ops(s, ops, 2, "a multi-receive buffer and the receive after it");

	snprintf(where, sizeof(where), "iteration %u, the buffer", iter);
	expect_guards(b, where);
	multi_check_log(mc, &ops[0], b, iter);
	snprintf(where, sizeof(where), "iteration %u, the receive after it", iter);
	if (expect_received(&ops[1], FI_RECV | FI_MSG, MULTI_NEXT_LEN, where))
		expect_payload(next, MULTI_NEXT_LEN, PAT_MULTI, MULTI_NEXT_LEN,
			       multi_iter(mc->count, iter), where);
	else
		expect_guards(next, where);
}

static void test_multi_recv(struct session *s, const struct multi_case *mc,
			    enum direction dir, bool unexpected)
{
	struct buf b, next;
	uint32_t iter;

	buf_alloc(&b, multi_cap(mc));
	buf_alloc(&next, MULTI_NEXT_LEN);
	check_begin("%zu %s messages into one %zu-byte FI_MULTI_RECV buffer "
		    "(%s), one completion each, the last with FI_MULTI_RECV, then "
		    "an ordinary receive, %s", mc->count, mc->name, multi_cap(mc),
		    unexpected ? "posted after they arrived" : "posted first",
		    dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			multi_send(s, mc, iter, unexpected);
		else
			multi_receive(s, mc, &b, &next, iter, unexpected);
	}
	check_end();
	buf_free(&b);
	buf_free(&next);
}

static size_t multi_case_max(const struct multi_case *mc)
{
	size_t i, max = MULTI_NEXT_LEN;

	for (i = 0; i < mc->count; i++)
		max = mc->sizes[i] > max ? mc->sizes[i] : max;
	return max;
}

void run_multi_recv(struct session *s)
{
	size_t min = MULTI_MIN, i;
	int dir, unexpected, ret;

	if (!(s->info->caps & FI_MULTI_RECV) &&
	    !(s->info->rx_attr->caps & FI_MULTI_RECV)) {
		note_skip("FI_MULTI_RECV", "the provider does not offer it");
		return;
	}
	ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min,
			sizeof(min));
	check_opt_ret(ret, 0, "fi_setopt FI_OPT_MIN_MULTI_RECV 256 for the "
		      "multi-receive tests");
	for (i = 0; i < ARRAY_SIZE(multi_cases); i++) {
		if (multi_case_max(&multi_cases[i]) > s->opt.max_size)
			continue;
		for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++)
			for (unexpected = 0; unexpected <= 1; unexpected++)
				test_multi_recv(s, &multi_cases[i], dir, unexpected);
	}
	end_test(s, "multi-receive", SYNC_MULTI);
}
