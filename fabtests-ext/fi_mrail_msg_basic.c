/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg's message tests, one group each: ping-pong, tags and ignore
 * masks, remote CQ data, inject, ordering of unexpected messages,
 * truncation and endpoint options, with the drivers that run them over the
 * sizes and directions.
 */
#include "fi_mrail_msg.h"

/* Truncation cases: a small (eager) message and a large one, which a
 * multirail provider may move differently (mrail: by rendezvous). */
static const struct trunc_case trunc_cases[] = { { 4, 8 }, { 40000, 100003 } };

/* ---------------------------------------------------------------- 1: ping-pong */

static void ping_pong_once(struct session *s, struct buf *tx, struct buf *rx,
			   size_t size, uint32_t iter)
{
	enum pattern out = s->is_server ? PAT_PONG : PAT_PING;
	enum pattern in = s->is_server ? PAT_PING : PAT_PONG;
	struct op ops[2];	/* [0] send, [1] receive */
	char where[48];

	snprintf(where, sizeof(where), "iteration %u", iter);
	poison_for(rx->data, size, in, size, iter);
	op_init(&ops[1], OP_RECV, rx->data, size);
	post_op(s, &ops[1]);
	if (s->is_server)
		wait_ops(s, &ops[1], 1, "the ping");

	fill_pattern(tx->data, size, out, size, iter);
	op_init(&ops[0], OP_SEND, tx->data, size);
	post_op(s, &ops[0]);
	wait_ops(s, ops, 2, s->is_server ? "the pong's send" : "the ping and pong");

	expect_completed(&ops[0], FI_SEND | FI_MSG, where);
	if (expect_received(&ops[1], FI_RECV | FI_MSG, size, where))
		expect_payload(rx, size, in, size, iter, where);
	else
		expect_guards(rx, where);
}

void test_ping_pong(struct session *s, size_t size)
{
	struct buf tx, rx;
	uint32_t iter;

	buf_alloc(&tx, size);
	buf_alloc(&rx, size);
	check_begin("fi_send/fi_recv ping-pong, %zu bytes", size);
	for (iter = 0; iter < s->opt.iters; iter++)
		ping_pong_once(s, &tx, &rx, size, iter);
	check_end();
	buf_free(&tx);
	buf_free(&rx);
}

/* ----------------------------------------------------------- 2: tags and masks */

static uint64_t tag_a_sent(uint32_t iter)
{
	return TAG_A | ((0x0101u * iter + 0x11u) & TAG_A_IGNORE);
}

static uint64_t tag_b_sent(uint32_t iter)
{
	return TAG_B | ((uint64_t) ((iter + 1) & 0xff) << 24);
}

/* Receive A is posted first and B is sent first: a provider that matched
 * without the tag, or with the wrong mask, would put B into A's buffer. */
static void tagged_receive(struct session *s, struct buf *bufs, size_t size,
			   uint32_t iter)
{
	struct op ops[2];	/* [0] tag A, [1] tag B */
	char where[48];

	poison_for(bufs[0].data, size, PAT_TAG_A, size, iter);
	poison_for(bufs[1].data, size, PAT_TAG_B, size, iter);
	op_init(&ops[0], OP_TRECV, bufs[0].data, size);
	ops[0].tag = TAG_A;
	ops[0].ignore = TAG_A_IGNORE;
	op_init(&ops[1], OP_TRECV, bufs[1].data, size);
	ops[1].tag = TAG_B;
	ops[1].ignore = TAG_B_IGNORE;
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, ops, 2, "tagged receives A and B");

	snprintf(where, sizeof(where), "iteration %u, receive A", iter);
	if (expect_received(&ops[0], FI_RECV | FI_TAGGED, size, where) &&
	    expect_tag(&ops[0], tag_a_sent(iter), where))
		expect_payload(&bufs[0], size, PAT_TAG_A, size, iter, where);
	expect_guards(&bufs[0], where);
	snprintf(where, sizeof(where), "iteration %u, receive B", iter);
	if (expect_received(&ops[1], FI_RECV | FI_TAGGED, size, where) &&
	    expect_tag(&ops[1], tag_b_sent(iter), where))
		expect_payload(&bufs[1], size, PAT_TAG_B, size, iter, where);
	expect_guards(&bufs[1], where);
}

static void tagged_send(struct session *s, struct buf *bufs, size_t size,
			uint32_t iter)
{
	struct op ops[2];	/* [0] tag B, [1] tag A: B goes first */
	char where[48];

	fill_pattern(bufs[0].data, size, PAT_TAG_B, size, iter);
	fill_pattern(bufs[1].data, size, PAT_TAG_A, size, iter);
	op_init(&ops[0], OP_TSEND, bufs[0].data, size);
	ops[0].tag = tag_b_sent(iter);
	op_init(&ops[1], OP_TSEND, bufs[1].data, size);
	ops[1].tag = tag_a_sent(iter);
	oob_wait_signal(s, SIG_POSTED, "post tagged receives A and B");
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	wait_ops(s, ops, 2, "tagged sends B and A");

	snprintf(where, sizeof(where), "iteration %u, send B", iter);
	expect_completed(&ops[0], FI_SEND | FI_TAGGED, where);
	snprintf(where, sizeof(where), "iteration %u, send A", iter);
	expect_completed(&ops[1], FI_SEND | FI_TAGGED, where);
}

static void test_tagged(struct session *s, size_t size, enum direction dir)
{
	struct buf bufs[2];
	uint32_t iter;

	bufs_alloc(bufs, 2, size);
	check_begin("fi_tsend B then A into fi_trecv A and B with ignore masks, "
		    "%zu bytes, %s", size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			tagged_send(s, bufs, size, iter);
		else
			tagged_receive(s, bufs, size, iter);
	}
	check_end();
	bufs_free(bufs, 2);
}

/* -------------------------------------------------------------- 3: CQ data */

static uint64_t cq_data_value(const struct session *s, enum pattern pat,
			      size_t size, uint32_t iter)
{
	size_t bytes = s->info->domain_attr->cq_data_size;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | pattern_byte(pat, size, iter, 1000 + i);
	return bytes >= 8 ? v : v & ((1ULL << (8 * bytes)) - 1);
}

static bool expect_cq_data(const struct op *op, uint64_t data, const char *where)
{
	if (op->entry.data == data)
		return true;
	check_fail("%s: completion data %#llx, expected %#llx", where,
		   (unsigned long long) op->entry.data, (unsigned long long) data);
	return false;
}

static void cq_data_receive(struct session *s, struct buf *bufs, size_t size,
			    uint32_t iter)
{
	struct op ops[2];	/* [0] fi_recv, [1] fi_trecv */
	char where[64];

	poison_for(bufs[0].data, size, PAT_DATA_MSG, size, iter);
	poison_for(bufs[1].data, size, PAT_DATA_TAGGED, size, iter);
	op_init(&ops[0], OP_RECV, bufs[0].data, size);
	op_init(&ops[1], OP_TRECV, bufs[1].data, size);
	ops[1].tag = TAG_DATA;
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, ops, 2, "receives of fi_senddata and fi_tsenddata");

	snprintf(where, sizeof(where), "iteration %u, fi_senddata", iter);
	if (expect_received(&ops[0], FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA, size, where) &&
	    expect_cq_data(&ops[0], cq_data_value(s, PAT_DATA_MSG, size, iter), where))
		expect_payload(&bufs[0], size, PAT_DATA_MSG, size, iter, where);
	expect_guards(&bufs[0], where);
	snprintf(where, sizeof(where), "iteration %u, fi_tsenddata", iter);
	if (expect_received(&ops[1], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, size,
			    where) &&
	    expect_tag(&ops[1], TAG_DATA, where) &&
	    expect_cq_data(&ops[1], cq_data_value(s, PAT_DATA_TAGGED, size, iter), where))
		expect_payload(&bufs[1], size, PAT_DATA_TAGGED, size, iter, where);
	expect_guards(&bufs[1], where);
}

static void cq_data_send(struct session *s, struct buf *bufs, size_t size,
			 uint32_t iter)
{
	struct op ops[2];	/* [0] fi_senddata, [1] fi_tsenddata */
	char where[64];

	fill_pattern(bufs[0].data, size, PAT_DATA_MSG, size, iter);
	fill_pattern(bufs[1].data, size, PAT_DATA_TAGGED, size, iter);
	op_init(&ops[0], OP_SENDDATA, bufs[0].data, size);
	ops[0].data = cq_data_value(s, PAT_DATA_MSG, size, iter);
	op_init(&ops[1], OP_TSENDDATA, bufs[1].data, size);
	ops[1].data = cq_data_value(s, PAT_DATA_TAGGED, size, iter);
	ops[1].tag = TAG_DATA;
	oob_wait_signal(s, SIG_POSTED, "post receives for CQ data");
	post_op(s, &ops[0]);
	post_op(s, &ops[1]);
	wait_ops(s, ops, 2, "fi_senddata and fi_tsenddata");

	snprintf(where, sizeof(where), "iteration %u, fi_senddata", iter);
	expect_completed(&ops[0], FI_SEND | FI_MSG, where);
	snprintf(where, sizeof(where), "iteration %u, fi_tsenddata", iter);
	expect_completed(&ops[1], FI_SEND | FI_TAGGED, where);
}

static void test_cq_data(struct session *s, size_t size, enum direction dir)
{
	struct buf bufs[2];
	uint32_t iter;

	bufs_alloc(bufs, 2, size);
	check_begin("fi_senddata/fi_tsenddata with remote CQ data, %zu bytes, %s",
		    size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			cq_data_send(s, bufs, size, iter);
		else
			cq_data_receive(s, bufs, size, iter);
	}
	check_end();
	bufs_free(bufs, 2);
}

/* ---------------------------------------------------------------- 4: inject */

static void inject_receive(struct session *s, struct buf *b, size_t size, uint32_t iter)
{
	struct op op;
	char where[48];

	snprintf(where, sizeof(where), "iteration %u", iter);
	poison_for(b->data, size, PAT_INJECT, size, iter);
	op_init(&op, OP_RECV, b->data, size);
	post_op(s, &op);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, &op, 1, "the receive of an injected message");
	if (expect_received(&op, FI_RECV | FI_MSG, size, where))
		expect_payload(b, size, PAT_INJECT, size, iter, where);
	else
		expect_guards(b, where);
}

/* fi_inject hands the buffer back on return: scribbling over it at once
 * shows whether the provider really took a copy. Every other iteration
 * sends with fi_sendmsg(FI_INJECT) instead, which hands it back as early but
 * still completes, once (fi_msg(3): only fi_inject has no completion). */
static void inject_send(struct session *s, struct buf *b, size_t size, uint32_t iter)
{
	char where[48];
	struct op op;

	fill_pattern(b->data, size, PAT_INJECT, size, iter);
	oob_wait_signal(s, SIG_POSTED, "post a receive for fi_inject");
	if (!(iter % 2)) {
		post_inject(s, b->data, size);
		poison_for(b->data, size, PAT_INJECT, size, iter);
		return;
	}
	op_init(&op, OP_SENDMSG_INJECT, b->data, size);
	post_op(s, &op);
	poison_for(b->data, size, PAT_INJECT, size, iter);
	wait_ops(s, &op, 1, "fi_sendmsg(FI_INJECT)");
	snprintf(where, sizeof(where), "iteration %u, fi_sendmsg(FI_INJECT)", iter);
	expect_completed(&op, FI_SEND | FI_MSG, where);
}

static void test_inject(struct session *s, size_t size, enum direction dir)
{
	struct buf b;
	uint32_t iter;

	buf_alloc(&b, size);
	check_begin("fi_inject (no transmit completion) and fi_sendmsg(FI_INJECT) "
		    "(one), %zu bytes, %s", size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			inject_send(s, &b, size, iter);
		else
			inject_receive(s, &b, size, iter);
	}
	check_end();
	buf_free(&b);
}

/* ------------------------------------------------- 5: ordering, unexpected */

/* Message k of a burst: byte 0 is k, the rest a pattern of (size, iter, k). */
static uint32_t order_iter(uint32_t iter, unsigned k)
{
	return iter * ORDER_BURST + k;
}

void order_fill(uint8_t *p, size_t size, uint32_t iter, unsigned k)
{
	fill_pattern(p, size, PAT_ORDER, size, order_iter(iter, k));
	if (size)
		p[0] = (uint8_t) k;
}

void order_poison(uint8_t *p, size_t size, uint32_t iter, unsigned k)
{
	poison_for(p, size, PAT_ORDER, size, order_iter(iter, k));
	if (size)
		p[0] = (uint8_t) ~k;
}

void order_check_one(const struct op *op, const struct buf *b, size_t size,
			    uint32_t iter, unsigned k, bool tagged)
{
	uint64_t flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	char where[64];
	size_t bad;

	snprintf(where, sizeof(where), "iteration %u, receive %u", iter, k);
	expect_guards(b, where);
	if (!expect_received(op, flags, size, where))
		return;
	if (tagged && !expect_tag(op, TAG_ORDER | k, where))
		return;
	if (size && b->data[0] != (uint8_t) k) {
		check_fail("%s: got message %u, out of send order", where,
			   b->data[0]);
		return;
	}
	bad = first_mismatch(b->data, 1, size, PAT_ORDER, size, order_iter(iter, k));
	if (bad < size)
		check_fail("%s: byte %zu of %zu is %#04x, expected %#04x", where,
			   bad, size, b->data[bad],
			   pattern_byte(PAT_ORDER, size, order_iter(iter, k), bad));
}

/* Sends the whole burst before the receiver posts anything, then tells it
 * so; the transmits may only complete once it posts (rendezvous). */
static void order_send(struct session *s, struct op *ops, struct buf *bufs,
		       size_t size, uint32_t iter, bool tagged)
{
	uint64_t flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	char where[64];
	unsigned k;

	for (k = 0; k < ORDER_BURST; k++) {
		order_fill(bufs[k].data, size, iter, k);
		op_init(&ops[k], tagged ? OP_TSEND : OP_SEND, bufs[k].data, size);
		ops[k].tag = TAG_ORDER | k;
		post_op(s, &ops[k]);
	}
	oob_signal(s, SIG_SENT);
	wait_ops(s, ops, ORDER_BURST, "a burst of sends");
	for (k = 0; k < ORDER_BURST; k++) {
		snprintf(where, sizeof(where), "iteration %u, send %u", iter, k);
		expect_completed(&ops[k], flags, where);
	}
}

static void order_receive(struct session *s, struct op *ops, struct buf *bufs,
			  size_t size, uint32_t iter, bool tagged)
{
	unsigned k;

	oob_wait_signal(s, SIG_SENT, "send its burst");
	drain(s, ORDER_SETTLE_MS);
	for (k = 0; k < ORDER_BURST; k++) {
		order_poison(bufs[k].data, size, iter, k);
		op_init(&ops[k], tagged ? OP_TRECV : OP_RECV, bufs[k].data, size);
		ops[k].tag = TAG_ORDER;
		ops[k].ignore = TAG_ORDER_IGNORE;
		post_op(s, &ops[k]);
	}
	wait_ops(s, ops, ORDER_BURST, "receives of an unexpected burst");
	for (k = 0; k < ORDER_BURST; k++)
		order_check_one(&ops[k], &bufs[k], size, iter, k, tagged);
}

static void test_ordering(struct session *s, size_t size, enum direction dir,
			  bool tagged)
{
	struct op ops[ORDER_BURST];
	struct buf bufs[ORDER_BURST];
	uint32_t iter;

	bufs_alloc(bufs, ORDER_BURST, size);
	check_begin("%d %s sent before any receive, matched in send order, "
		    "%zu bytes, %s", ORDER_BURST,
		    tagged ? "fi_tsend" : "fi_send", size, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir))
			order_send(s, ops, bufs, size, iter, tagged);
		else
			order_receive(s, ops, bufs, size, iter, tagged);
	}
	check_end();
	bufs_free(bufs, ORDER_BURST);
}

/* ------------------------------------------------------------ 7: truncation */

/* The message that follows each truncated one has a pattern of its own. */
static uint32_t trunc_next_iter(uint32_t iter)
{
	return iter | 0x80000000u;
}

static void trunc_receive_short(struct session *s, struct buf *b, uint32_t iter,
				bool tagged)
{
	struct op op;
	char where[48];

	snprintf(where, sizeof(where), "iteration %u", iter);
	memset(b->data, 0, s->trunc.posted);
	op_init(&op, tagged ? OP_TRECV : OP_RECV, b->data, s->trunc.posted);
	op.tag = TAG_TRUNC;
	post_op(s, &op);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, &op, 1, "a receive too short for its message");
	expect_guards(b, where);
	if (op.completions != 1)
		check_fail("%s: %d completions", where, op.completions);
	else if (!op.err)
		check_fail("%s: a successful completion (len %zu), expected error "
			   "FI_ETRUNC", where, op.entry.len);
	else if (op.err != FI_ETRUNC)
		check_fail("%s: completion error %s, expected FI_ETRUNC", where,
			   op.err_text);
	else if (op.olen != s->trunc.sent - s->trunc.posted)
		check_fail("%s: olen %zu, expected %zu", where, op.olen,
			   s->trunc.sent - s->trunc.posted);
}

/* A truncation is the receiver's error alone: the endpoint must go on
 * delivering what follows. */
static void trunc_receive_next(struct session *s, struct buf *b, uint32_t iter,
			       bool tagged)
{
	uint32_t next = trunc_next_iter(iter);
	struct op op;
	char where[48];

	snprintf(where, sizeof(where), "iteration %u, the next message", iter);
	poison_for(b->data, s->trunc.sent, PAT_TRUNC, s->trunc.sent, next);
	op_init(&op, tagged ? OP_TRECV : OP_RECV, b->data, s->trunc.sent);
	op.tag = TAG_TRUNC;
	post_op(s, &op);
	oob_signal(s, SIG_POSTED);
	wait_ops(s, &op, 1, "the message after a truncated one");
	if (expect_received(&op, FI_RECV | (tagged ? FI_TAGGED : FI_MSG), s->trunc.sent,
			    where))
		expect_payload(b, s->trunc.sent, PAT_TRUNC, s->trunc.sent, next, where);
	else
		expect_guards(b, where);
}

static void trunc_send_one(struct session *s, struct buf *b, uint32_t pattern_iter,
			   bool tagged, const char *where)
{
	struct op op;

	fill_pattern(b->data, s->trunc.sent, PAT_TRUNC, s->trunc.sent, pattern_iter);
	op_init(&op, tagged ? OP_TSEND : OP_SEND, b->data, s->trunc.sent);
	op.tag = TAG_TRUNC;
	oob_wait_signal(s, SIG_POSTED, "post a receive");
	post_op(s, &op);
	wait_ops(s, &op, 1, "a send to the truncation test's receiver");
	expect_completed(&op, FI_SEND | (tagged ? FI_TAGGED : FI_MSG), where);
}

static void trunc_send(struct session *s, struct buf *b, uint32_t iter, bool tagged)
{
	char where[64];

	snprintf(where, sizeof(where), "iteration %u, sending into a short buffer",
		 iter);
	trunc_send_one(s, b, iter, tagged, where);
	snprintf(where, sizeof(where), "iteration %u, sending the next message", iter);
	trunc_send_one(s, b, trunc_next_iter(iter), tagged, where);
}

static void test_truncation(struct session *s, enum direction dir, bool tagged)
{
	struct buf bufs[2];	/* the short receive, the next one */
	uint32_t iter;

	buf_alloc(&bufs[0], s->trunc.posted);
	buf_alloc(&bufs[1], s->trunc.sent);
	check_begin("%zu-byte %s into a %zu-byte receive: FI_ETRUNC, olen %zu, then "
		    "the next message intact, %s", s->trunc.sent,
		    tagged ? "fi_tsend" : "fi_send", s->trunc.posted,
		    s->trunc.sent - s->trunc.posted, dir_name(s, dir));
	for (iter = 0; iter < s->opt.iters; iter++) {
		if (is_sender(s, dir)) {
			trunc_send(s, &bufs[1], iter, tagged);
			continue;
		}
		trunc_receive_short(s, &bufs[0], iter, tagged);
		trunc_receive_next(s, &bufs[1], iter, tagged);
	}
	check_end();
	bufs_free(bufs, 2);
}

/* ------------------------------------------------- 8: endpoint options */

bool prov_is_mrail(const struct session *s)
{
	return !strcmp(s->info->fabric_attr->prov_name, "mrail");
}

static int get_size_opt(struct session *s, int level, int name, size_t *value,
			size_t *len)
{
	*len = sizeof(*value);
	return fi_getopt(&s->ep->fid, level, name, value, len);
}

void check_opt_ret(int ret, int want, const char *name)
{
	char detail[120];

	snprintf(detail, sizeof(detail), "returned %d (%s), expected %d (%s)", ret,
		 fi_strerror(-ret), want, fi_strerror(-want));
	check_once(ret == want, name, detail);
}

/* fi_getopt/fi_setopt as fi_endpoint(3) has them; the values mrail
 * documents (fi_mrail(7)) are checked on mrail only. */
void run_options(struct session *s)
{
	size_t value = 0, len, set = 12345;
	uint8_t tiny = 0;
	char detail[120];
	int ret;

	ret = get_size_opt(s, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &value, &len);
	snprintf(detail, sizeof(detail), "returned %d, optlen %zu, value %zu", ret,
		 len, value);
	check_once(!ret && len == sizeof(size_t), "fi_getopt FI_OPT_MIN_MULTI_RECV",
		   detail);
	if (prov_is_mrail(s))
		check_once(value == 16336, "mrail's default FI_OPT_MIN_MULTI_RECV is "
			   "16336 (its eager limit)", detail);
	ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &set,
			sizeof(set));
	check_opt_ret(ret, 0, "fi_setopt FI_OPT_MIN_MULTI_RECV 12345");
	ret = get_size_opt(s, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &value, &len);
	snprintf(detail, sizeof(detail), "returned %d, value %zu", ret, value);
	check_once(!ret && value == set, "fi_getopt FI_OPT_MIN_MULTI_RECV reads "
		   "back 12345", detail);

	ret = get_size_opt(s, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &value, &len);
	snprintf(detail, sizeof(detail), "returned %d, value %zu", ret, value);
	check_once(!ret && (!prov_is_mrail(s) || value == 0),
		   "fi_getopt FI_OPT_CM_DATA_SIZE (mrail: 0)", detail);

	ret = get_size_opt(s, FI_OPT_ENDPOINT, 0x7fff, &value, &len);
	check_opt_ret(ret, -FI_ENOPROTOOPT, "fi_getopt of an unknown option");
	ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, 0x7fff, &set, sizeof(set));
	check_opt_ret(ret, -FI_ENOPROTOOPT, "fi_setopt of an unknown option");
	ret = get_size_opt(s, FI_OPT_ENDPOINT + 77, FI_OPT_MIN_MULTI_RECV, &value,
			   &len);
	check_opt_ret(ret, -FI_ENOPROTOOPT, "fi_getopt at an unknown level");
	if (prov_is_mrail(s)) {
		ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
				&set, sizeof(set));
		check_opt_ret(ret, -FI_ENOPROTOOPT, "mrail: fi_setopt "
			      "FI_OPT_CM_DATA_SIZE (read-only)");
		ret = fi_setopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				&tiny, sizeof(tiny));
		check_opt_ret(ret, -FI_EINVAL, "mrail: fi_setopt "
			      "FI_OPT_MIN_MULTI_RECV with a 1-byte value");
		len = 1;
		ret = fi_getopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				&tiny, &len);
		snprintf(detail, sizeof(detail), "returned %d, optlen %zu", ret, len);
		check_once(ret == -FI_ETOOSMALL && len == sizeof(size_t),
			   "mrail: fi_getopt into 1 byte: -FI_ETOOSMALL, optlen 8",
			   detail);
	}
	end_test(s, "endpoint options", SYNC_OPTS);
}


/* ------------------------------------------------------------------- driver */

static size_t size_count(const struct session *s)
{
	size_t n = 0;

	while (n < test_sizes_count && test_sizes[n] <= s->opt.max_size)
		n++;
	return n;
}

void run_ping_pong(struct session *s)
{
	size_t i;

	for (i = 0; i < size_count(s); i++)
		test_ping_pong(s, test_sizes[i]);
	end_test(s, "ping-pong", SYNC_PING_PONG);
}

void run_tagged(struct session *s)
{
	size_t i;
	int dir;

	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++)
		for (i = 0; i < size_count(s); i++)
			test_tagged(s, test_sizes[i], dir);
	end_test(s, "tagged", SYNC_TAGGED);
}

void run_cq_data(struct session *s)
{
	char why[96];
	size_t i;
	int dir;

	if (s->info->domain_attr->cq_data_size < 4) {
		snprintf(why, sizeof(why), "the provider carries %zu bytes of CQ "
			 "data, the test needs 4", s->info->domain_attr->cq_data_size);
		note_skip("fi_senddata/fi_tsenddata with remote CQ data", why);
		return;
	}
	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++)
		for (i = 0; i < size_count(s); i++)
			test_cq_data(s, test_sizes[i], dir);
	end_test(s, "remote CQ data", SYNC_CQ_DATA);
}

void run_inject(struct session *s)
{
	size_t limit = s->info->tx_attr->inject_size, i, skipped = 0;
	char why[96];
	int dir;

	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++) {
		for (i = 0; i < size_count(s); i++) {
			if (test_sizes[i] <= limit)
				test_inject(s, test_sizes[i], dir);
			else if (dir == CLIENT_TO_SERVER)
				skipped++;
		}
	}
	if (skipped) {
		snprintf(why, sizeof(why), "%zu sizes above inject_size %zu", skipped,
			 limit);
		note_skip("fi_inject of larger messages", why);
	}
	end_test(s, "inject", SYNC_INJECT);
}

void run_ordering(struct session *s)
{
	size_t i;
	int dir;

	check_once((s->info->tx_attr->msg_order & FI_ORDER_SAS) &&
		   (s->info->rx_attr->msg_order & FI_ORDER_SAS),
		   "the provider promises FI_ORDER_SAS (send after send)",
		   "msg_order lacks it; the ordering test runs anyway");
	if (size_count(s) && !test_sizes[0])
		note_skip("payload order of 0-byte fi_send bursts",
			  "no payload to number; the fi_tsend burst checks their "
			  "order by tag");
	for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++) {
		for (i = 0; i < size_count(s); i++) {
			test_ordering(s, test_sizes[i], dir, false);
			test_ordering(s, test_sizes[i], dir, true);
		}
	}
	end_test(s, "ordering", SYNC_ORDER);
}

void run_truncation(struct session *s)
{
	size_t i;
	int dir;

	for (i = 0; i < ARRAY_SIZE(trunc_cases); i++) {
		if (trunc_cases[i].sent > s->opt.max_size)
			continue;
		s->trunc = trunc_cases[i];
		for (dir = CLIENT_TO_SERVER; dir <= SERVER_TO_CLIENT; dir++) {
			test_truncation(s, dir, false);
			test_truncation(s, dir, true);
		}
	}
	end_test(s, "truncation", SYNC_TRUNC);
}
