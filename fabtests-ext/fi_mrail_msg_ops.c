/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_msg's operations: posting sends and receives, reading the CQ
 * into the operation each completion belongs to, waiting for a set of them,
 * and the checks every test makes of a completion.
 */
#include "fi_mrail_msg.h"

/* -------------------------------------------------------------- completions */

static bool op_is_tx(const struct op *op)
{
	return op->kind != OP_RECV && op->kind != OP_TRECV && op->kind != OP_MRECV;
}

static const char *op_name(enum op_kind kind)
{
	switch (kind) {
	case OP_SEND:
		return "fi_send";
	case OP_SENDDATA:
		return "fi_senddata";
	case OP_TSEND:
		return "fi_tsend";
	case OP_TSENDDATA:
		return "fi_tsenddata";
	case OP_RECV:
		return "fi_recv";
	case OP_TRECV:
		return "fi_trecv";
	case OP_MRECV:
		return "fi_recvmsg(FI_MULTI_RECV)";
	case OP_SENDMSG_INJECT:
		return "fi_sendmsg(FI_INJECT)";
	}
	return "?";
}

void flags_str(uint64_t flags, char *out, size_t len)
{
	static const struct {
		uint64_t flag;
		const char *name;
	} names[] = {
		{ FI_SEND, "FI_SEND" }, { FI_RECV, "FI_RECV" },
		{ FI_MSG, "FI_MSG" }, { FI_TAGGED, "FI_TAGGED" },
		{ FI_REMOTE_CQ_DATA, "FI_REMOTE_CQ_DATA" },
		{ FI_MULTI_RECV, "FI_MULTI_RECV" },
	};
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(names) && used < len; i++) {
		if (!(flags & names[i].flag))
			continue;
		used += (size_t) snprintf(out + used, len - used, "%s%s",
					  used ? "|" : "", names[i].name);
		flags &= ~names[i].flag;
	}
	if (used < len && (flags || !used))
		snprintf(out + used, len - used, "%s%#llx", used ? "|" : "",
			 (unsigned long long) flags);
}

void op_init(struct op *op, enum op_kind kind, void *buf, size_t len)
{
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->buf = buf;
	op->len = len;
}

void pending_add(struct session *s, struct op *op)
{
	if (s->pending_count == MAX_PENDING)
		fatal("more than %d operations outstanding (a bug in this test)",
		      MAX_PENDING);
	s->pending[s->pending_count++] = op;
	if (op_is_tx(op))
		s->tx_posted++;
	else
		s->rx_posted++;
}

/*
 * The op a completion names, or NULL if the context is not one we have
 * outstanding (a duplicate, or garbage). It leaves the outstanding set,
 * except a multi-receive buffer, which stays until the completion that
 * releases it (FI_MULTI_RECV): every message into it names its context.
 */
static struct op *pending_take(struct session *s, void *context, uint64_t flags)
{
	struct op *op;
	size_t i;

	for (i = 0; i < s->pending_count; i++) {
		op = s->pending[i];
		if (&op->fi_ctx != context)
			continue;
		if (!op->multi || (flags & FI_MULTI_RECV))
			s->pending[i] = s->pending[--s->pending_count];
		return op;
	}
	return NULL;
}

/* Logs one completion of a multi-receive buffer; true if it released it
 * (only then does the operation count as completed). */
static bool multi_log_add(struct op *op, const struct fi_cq_tagged_entry *comp,
			  int err, size_t olen)
{
	struct multi_log *log = op->multi;

	if (log->count < ARRAY_SIZE(log->entries)) {
		log->entries[log->count] = *comp;
		log->errs[log->count] = err;
		log->olens[log->count] = olen;
	}
	log->count++;
	return comp->flags & FI_MULTI_RECV;
}

static void note_stray(struct session *s, const char *kind, void *context,
		       uint64_t flags, size_t len)
{
	char fl[96];

	if (!s->stray++) {
		flags_str(flags, fl, sizeof(fl));
		snprintf(s->stray_note, sizeof(s->stray_note),
			 "first: %s for context %p, flags %s, len %zu", kind,
			 context, fl, len);
	}
}

static void count_completion(struct session *s, const struct op *op)
{
	if (op_is_tx(op))
		s->tx_done++;
	else
		s->rx_done++;
}

static void record_completion(struct session *s, const struct fi_cq_tagged_entry *comp)
{
	struct op *op = pending_take(s, comp->op_context, comp->flags);

	if (!op) {
		note_stray(s, "a completion", comp->op_context, comp->flags, comp->len);
		return;
	}
	if (op->multi && !multi_log_add(op, comp, 0, 0))
		return;
	op->completions++;
	op->entry = *comp;
	count_completion(s, op);
}

static void record_error(struct session *s)
{
	struct fi_cq_err_entry err = { 0 };
	char prov_text[96];
	struct op *op;
	ssize_t ret;

	ret = fi_cq_readerr(s->cq, &err, 0);
	if (ret == -FI_EAGAIN)
		return;
	if (ret < 0)
		fatal("fi_cq_readerr: %s", fi_strerror((int) -ret));

	op = pending_take(s, err.op_context, err.flags);
	if (!op) {
		note_stray(s, fi_strerror(err.err), err.op_context, err.flags, err.len);
		return;
	}
	if (op->multi) {
		struct fi_cq_tagged_entry comp = {
			.op_context = err.op_context, .flags = err.flags,
			.len = err.len, .buf = err.buf, .data = err.data,
			.tag = err.tag,
		};

		if (!multi_log_add(op, &comp, err.err ? err.err : FI_EOTHER, err.olen))
			return;
	}
	op->completions++;
	op->err = err.err ? err.err : FI_EOTHER;
	op->olen = err.olen;
	op->entry.op_context = err.op_context;
	op->entry.flags = err.flags;
	op->entry.len = err.len;
	op->entry.tag = err.tag;
	op->entry.data = err.data;
	snprintf(op->err_text, sizeof(op->err_text), "%s (%s)",
		 fi_strerror(err.err),
		 fi_cq_strerror(s->cq, err.prov_errno, err.err_data, prov_text,
				sizeof(prov_text)));
	count_completion(s, op);
}

void progress(struct session *s)
{
	struct fi_cq_tagged_entry comp[CQ_BATCH];
	ssize_t n, i;

	stop_if_stuck(s);
	n = fi_cq_read(s->cq, comp, CQ_BATCH);
	if (n == -FI_EAGAIN)
		return;
	if (n == -FI_EAVAIL) {
		record_error(s);
		return;
	}
	if (n < 0)
		fatal("fi_cq_read: %s", fi_strerror((int) -n));
	for (i = 0; i < n; i++)
		record_completion(s, &comp[i]);
}

static size_t ops_done(const struct op *ops, size_t n)
{
	size_t i, done = 0;

	for (i = 0; i < n; i++)
		if (ops[i].completions)
			done++;
	return done;
}

void wait_ops(struct session *s, const struct op *ops, size_t n, const char *what)
{
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;

	while (ops_done(ops, n) < n) {
		progress(s);
		if (now_ms() > deadline) {
			snprintf(s->stuck, sizeof(s->stuck), "timed out after %d s "
				 "waiting for the completion of %s (%zu of %zu "
				 "completed)", WAIT_LIMIT_MS / 1000, what,
				 ops_done(ops, n), n);
			return;
		}
	}
}

/* Reads the CQ for a while when nothing should arrive: whatever does is
 * counted as stray. */
void drain(struct session *s, unsigned ms)
{
	uint64_t end = now_ms() + ms;

	while (now_ms() < end)
		progress(s);
}

/* ------------------------------------------------------------------- posting */

ssize_t post_once(struct session *s, struct op *op)
{
	void *ctx = &op->fi_ctx;

	switch (op->kind) {
	case OP_SEND:
		return fi_send(s->ep, op->buf, op->len, NULL, s->peer, ctx);
	case OP_SENDDATA:
		return fi_senddata(s->ep, op->buf, op->len, NULL, op->data, s->peer, ctx);
	case OP_TSEND: {
		fi_addr_t dest = op->has_dest ? op->dest : s->peer;
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct fi_msg_tagged msg = {
			.msg_iov = &iov, .iov_count = 1, .addr = dest,
			.tag = op->tag, .context = ctx,
		};

		if (op->delivery_complete)
			return fi_tsendmsg(s->ep, &msg,
					   FI_DELIVERY_COMPLETE | FI_COMPLETION);
		return fi_tsend(s->ep, op->buf, op->len, NULL, dest, op->tag, ctx);
	}
	case OP_TSENDDATA:
		return fi_tsenddata(s->ep, op->buf, op->len, NULL, op->data, s->peer,
				    op->tag, ctx);
	case OP_RECV:
		return fi_recv(s->ep, op->buf, op->len, NULL, FI_ADDR_UNSPEC, ctx);
	case OP_TRECV:
		return fi_trecv(s->ep, op->buf, op->len, NULL, FI_ADDR_UNSPEC, op->tag,
				op->ignore, ctx);
	case OP_MRECV: {
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct fi_msg msg = {
			.msg_iov = &iov, .iov_count = 1,
			.addr = FI_ADDR_UNSPEC, .context = ctx,
		};

		return fi_recvmsg(s->ep, &msg, FI_MULTI_RECV | FI_COMPLETION);
	}
	case OP_SENDMSG_INJECT: {
		struct iovec iov = { .iov_base = op->buf, .iov_len = op->len };
		struct fi_msg msg = {
			.msg_iov = &iov, .iov_count = 1,
			.addr = s->peer, .context = ctx,
		};

		return fi_sendmsg(s->ep, &msg, FI_INJECT | FI_COMPLETION);
	}
	}
	return -FI_EINVAL;
}

/* -FI_EAGAIN means "progress and retry", as long as the wait stays bounded. */
void post_op(struct session *s, struct op *op)
{
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	ssize_t ret;

	stop_if_stuck(s);
	while ((ret = post_once(s, op)) == -FI_EAGAIN) {
		progress(s);
		if (now_ms() > deadline)
			fatal("%s of %zu bytes still refused with -FI_EAGAIN after %d s",
			      op_name(op->kind), op->len, WAIT_LIMIT_MS / 1000);
	}
	if (ret)
		fatal("%s of %zu bytes: %s", op_name(op->kind), op->len,
		      fi_strerror((int) -ret));
	pending_add(s, op);
}

void post_inject(struct session *s, const void *buf, size_t len)
{
	uint64_t deadline = now_ms() + WAIT_LIMIT_MS;
	ssize_t ret;

	stop_if_stuck(s);
	while ((ret = fi_inject(s->ep, buf, len, s->peer)) == -FI_EAGAIN) {
		progress(s);
		if (now_ms() > deadline)
			fatal("fi_inject of %zu bytes still refused with -FI_EAGAIN "
			      "after %d s", len, WAIT_LIMIT_MS / 1000);
	}
	if (ret)
		fatal("fi_inject of %zu bytes: %s", len, fi_strerror((int) -ret));
}

/* --------------------------------------------------------------- expectations */

bool expect_completed(const struct op *op, uint64_t flags, const char *where)
{
	char got[96], want[96];

	if (op->completions != 1) {
		check_fail("%s: %s completed %d times", where, op_name(op->kind),
			   op->completions);
		return false;
	}
	if (op->err) {
		check_fail("%s: %s completed with an error: %s", where,
			   op_name(op->kind), op->err_text);
		return false;
	}
	if (op->entry.op_context != &op->fi_ctx) {
		check_fail("%s: %s completion carries context %p, posted with %p",
			   where, op_name(op->kind), op->entry.op_context,
			   (const void *) &op->fi_ctx);
		return false;
	}
	if (op->entry.flags != flags) {
		flags_str(op->entry.flags, got, sizeof(got));
		flags_str(flags, want, sizeof(want));
		check_fail("%s: %s completion flags %s, expected %s", where,
			   op_name(op->kind), got, want);
		return false;
	}
	return true;
}

bool expect_received(const struct op *op, uint64_t flags, size_t len,
			    const char *where)
{
	if (!expect_completed(op, flags, where))
		return false;
	if (op->entry.len != len) {
		check_fail("%s: %s completion len %zu, expected %zu", where,
			   op_name(op->kind), op->entry.len, len);
		return false;
	}
	return true;
}

bool expect_tag(const struct op *op, uint64_t tag, const char *where)
{
	if (op->entry.tag == tag)
		return true;
	check_fail("%s: completion tag %#llx, expected %#llx", where,
		   (unsigned long long) op->entry.tag, (unsigned long long) tag);
	return false;
}

/* After each test: nothing more may arrive, and every operation posted
 * completed exactly once. The sync keeps the next test's traffic out of
 * this drain. */
void end_test(struct session *s, const char *test, enum sync_code code)
{
	drain(s, DRAIN_MS);
	check_begin("%s: exact completion counts", test);
	if (s->stray)
		check_fail("%u completions for no outstanding operation (%s)",
			   s->stray, s->stray_note);
	if (s->tx_done != s->tx_posted)
		check_fail("%u transmit completions for %u transmits posted",
			   s->tx_done, s->tx_posted);
	if (s->rx_done != s->rx_posted)
		check_fail("%u receive completions for %u receives posted",
			   s->rx_done, s->rx_posted);
	check_end();
	s->pending_count = 0;
	s->tx_posted = s->rx_posted = s->tx_done = s->rx_done = s->stray = 0;
	oob_sync(s, code, test);
}
