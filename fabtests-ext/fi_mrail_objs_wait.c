/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs -t eq, -t trywait and -t poll: event queues, fi_trywait
 * over several objects, and poll sets.
 */
#include "fi_mrail_objs.h"

/* ---- event queues ---- */

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t) (seed + i * 7);
}

static void test_eq_events(struct fid_eq *eq)
{
	struct fi_eq_entry in = {
		.fid = &eq->fid,
		.context = (void *) 0x1234,
		.data = 42,
	};
	struct fi_eq_entry out;
	uint8_t sent[3][100], got[128];
	static const size_t lens[3] = { 8, 24, 100 };
	uint32_t event = 0;
	ssize_t ret;
	size_t i;

	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_what(ret == sizeof(in), "write an event", "returned %zd", ret);
	memset(&out, 0, sizeof(out));
	ret = fi_eq_read(eq, &event, &out, sizeof(out), FI_PEEK);
	check_what(ret == sizeof(in) && event == FI_NOTIFY && !memcmp(&out, &in, sizeof(in)),
	      "FI_PEEK reads it, byte for byte", "returned %zd, event %u", ret, event);
	memset(&out, 0, sizeof(out));
	event = 0;
	ret = fi_eq_read(eq, &event, &out, sizeof(out), 0);
	check_what(ret == sizeof(in) && event == FI_NOTIFY && !memcmp(&out, &in, sizeof(in)),
	      "... and leaves it for the next read", "returned %zd", ret);
	check_what(fi_eq_read(eq, &event, &out, sizeof(out), 0) == -FI_EAGAIN,
	      "a read consumes it", NULL);

	for (i = 0; i < 3; i++) {
		fill(sent[i], lens[i], (uint8_t) (i * 31 + 1));
		ret = fi_eq_write(eq, (uint32_t) (11 + i), sent[i], lens[i], 0);
		check_what(ret == (ssize_t) lens[i], "write events of 8, 24 and 100 bytes",
		      "event %zu returned %zd", i, ret);
	}
	for (i = 0; i < 3; i++) {
		if (i == 2) {
			ret = fi_eq_read(eq, &event, got, 99, 0);
			check_what(ret == -FI_ETOOSMALL,
			      "a buffer 1 byte short: -FI_ETOOSMALL", "returned %zd",
			      ret);
		}
		memset(got, 0, sizeof(got));
		event = 0;
		ret = fi_eq_read(eq, &event, got, sizeof(got), 0);
		check_what(ret == (ssize_t) lens[i] && event == 11 + i &&
		      !memcmp(got, sent[i], lens[i]) && got[lens[i]] == 0,
		      "events come back in order, exact length and bytes",
		      "event %zu: returned %zd, event %u", i, ret, event);
	}
	check_what(fi_eq_read(eq, &event, got, sizeof(got), 0) == -FI_EAGAIN,
	      "then it is empty", NULL);
}

static void test_eq_limits(struct fid_eq *eq, size_t size)
{
	struct fi_eq_entry in = { .fid = &eq->fid };
	uint8_t big[4097] = { 0 };
	uint32_t event;
	ssize_t ret;
	size_t i;

	for (i = 0; i < size; i++) {
		in.data = i;
		ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
		if (ret != sizeof(in))
			break;
	}
	check_what(i == size, "fill the EQ to its size", "%zu of %zu written", i, size);
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_what(ret == -FI_EAGAIN, "one more: -FI_EAGAIN", "returned %zd", ret);
	ret = fi_eq_read(eq, &event, &in, sizeof(in), 0);
	check_what(ret == sizeof(in) && in.data == 0, "read the oldest", "returned %zd", ret);
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_what(ret == sizeof(in), "then there is room for one", "returned %zd", ret);
	for (i = 1; i <= size; i++) {
		ret = fi_eq_read(eq, &event, &in, sizeof(in), 0);
		if (ret != sizeof(in) || in.data != (i < size ? i : 0))
			break;
	}
	check_what(i == size + 1, "read back in order", "stopped at %zu", i);

	check_what(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 1) == -FI_EBADFLAGS,
	      "write refuses flags", NULL);
	check_what(fi_eq_read(eq, &event, &in, sizeof(in), FI_PEEK << 1) == -FI_EBADFLAGS,
	      "read refuses flags other than FI_PEEK", NULL);
	check_what(fi_eq_write(eq, FI_NOTIFY, big, sizeof(big), 0) == -FI_EINVAL,
	      "an event over 4096 bytes is refused", NULL);
	check_what(fi_eq_write(eq, FI_NOTIFY, big, 4096, 0) == 4096 &&
	      fi_eq_read(eq, &event, big, 4096, 0) == 4096, "a 4096-byte event", NULL);
}

static void test_eq_sread(struct fid_eq *eq)
{
	struct fi_eq_entry out = { 0 };
	struct later later = { .entry = { .context = (void *) 0x77, .data = 7 } };
	uint32_t event = 0;
	int64_t start, took;
	ssize_t ret;

	ret = fi_eq_sread(eq, &event, &out, sizeof(out), 0, 0);
	check_what(ret == -FI_EAGAIN, "sread with timeout 0 on an empty EQ", "returned %zd",
	      ret);
	start = now_ns();
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), 150, 0);
	took = now_ns() - start;
	check_what(ret == -FI_EAGAIN && took >= 150 * 1000000LL,
	      "sread times out with -FI_EAGAIN, not before 150 ms",
	      "returned %zd after %lld us", ret, (long long) took / 1000);

	step = "fi_eq_sread(infinite) woken by fi_eq_write from another thread";
	later.entry.fid = &eq->fid;
	later_start(&later, LATER_EQ_WRITE, eq, 0);
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), -1, FI_PEEK);
	check_what(ret == sizeof(out) && later_join(&later) == sizeof(out) &&
	      event == FI_NOTIFY && !memcmp(&out, &later.entry, sizeof(out)),
	      "sread(infinite, FI_PEEK) returns an event written by another thread",
	      "returned %zd", ret);
	memset(&out, 0, sizeof(out));
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), -1, 0);
	check_what(ret == sizeof(out) && out.data == 7 &&
	      fi_eq_read(eq, &event, &out, sizeof(out), 0) == -FI_EAGAIN,
	      "the peeked event is read once more, then gone", "returned %zd", ret);
	step = "eq";
}

static void test_eq_fd(struct fid_fabric *fabric)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD, .flags = FI_WRITE };
	struct fi_eq_entry entry = { .data = 3 };
	struct pollfd pfd = { .events = POLLIN };
	struct later later;
	struct fid_eq *eq = NULL;
	struct fid *fids[1];
	uint32_t event;
	int fd = -1, ret;

	ret = fi_eq_open(fabric, &attr, &eq, NULL);
	check_what(ret == 0, "open an EQ with FI_WAIT_FD", "%s", fi_strerror(-ret));
	if (ret)
		return;
	fids[0] = &eq->fid;
	ret = fi_control(&eq->fid, FI_GETWAIT, &fd);
	check_what(ret == 0 && fd >= 0, "FI_GETWAIT gives an fd", "returned %d", ret);
	if (fd < 0)
		goto out;
	check_what(!readable(fd) && fi_trywait(fabric, fids, 1) == 0,
	      "an empty EQ: fd not readable, fi_trywait 0", NULL);
	fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0);
	check_what(readable(fd) && fi_trywait(fabric, fids, 1) == -FI_EAGAIN,
	      "an event: fd readable, fi_trywait -FI_EAGAIN", NULL);
	check_what(fi_eq_read(eq, &event, &entry, sizeof(entry), FI_PEEK) == sizeof(entry) &&
	      readable(fd), "a peek leaves it readable", NULL);
	check_what(fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == sizeof(entry) &&
	      !readable(fd) && fi_trywait(fabric, fids, 1) == 0,
	      "reading the last event drains the fd", NULL);

	step = "poll on an EQ's fd until another thread writes";
	later.entry = entry;
	later_start(&later, LATER_EQ_WRITE, eq, 0);
	pfd.fd = fd;
	ret = poll(&pfd, 1, -1);
	check_what(ret == 1 && (pfd.revents & POLLIN) && later_join(&later) == sizeof(entry) &&
	      fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == sizeof(entry) &&
	      entry.data == 3, "poll(fd) wakes on a write from another thread", NULL);
	step = "eq";
out:
	check_what(fi_close(&eq->fid) == 0, "close the FD EQ", NULL);
}

void test_eq(struct fid_fabric *fabric)
{
	struct fi_eq_attr attr = {
		.size = 4,
		.wait_obj = FI_WAIT_UNSPEC,
		.flags = FI_WRITE,
	};
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_entry entry = { 0 };
	enum fi_wait_obj obj = FI_WAIT_NONE;
	struct fid_eq *eq = NULL, *ro = NULL;
	char text[64];
	uint32_t event;
	int fd = -1, ret;

	ret = fi_eq_open(fabric, &attr, &eq, NULL);
	check_what(ret == 0, "open an EQ (FI_WRITE, size 4, FI_WAIT_UNSPEC)", "%s",
	      fi_strerror(-ret));
	if (ret)
		return;
	check_what(fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == -FI_EAGAIN &&
	      fi_eq_readerr(eq, &err, 0) == -FI_EAGAIN,
	      "an empty EQ: read and readerr -FI_EAGAIN", NULL);
	test_eq_events(eq);
	test_eq_limits(eq, 4);
	test_eq_sread(eq);
	check_what(!strcmp(fi_eq_strerror(eq, FI_ETRUNC, NULL, text, sizeof(text)),
	      fi_strerror(FI_ETRUNC)) && !strcmp(text, fi_strerror(FI_ETRUNC)),
	      "fi_eq_strerror", "%s", text);
	check_what(fi_control(&eq->fid, FI_GETWAIT, &fd) == -FI_ENODATA,
	      "FI_GETWAIT on FI_WAIT_UNSPEC: -FI_ENODATA", NULL);
	check_what(fi_control(&eq->fid, FI_GETWAITOBJ, &obj) == 0 && obj == FI_WAIT_UNSPEC,
	      "FI_GETWAITOBJ says FI_WAIT_UNSPEC", NULL);
	check_what(fi_close(&eq->fid) == 0, "close the EQ", NULL);

	attr.flags = 0;
	ret = fi_eq_open(fabric, &attr, &ro, NULL);
	check_what(ret == 0 &&
	      fi_eq_write(ro, FI_NOTIFY, &entry, sizeof(entry), 0) == -FI_EINVAL,
	      "without FI_WRITE, fi_eq_write is refused", NULL);
	if (!ret)
		fi_close(&ro->fid);
	attr.wait_obj = FI_WAIT_SET;
	check_what(fi_eq_open(fabric, &attr, &ro, NULL) == -FI_ENOSYS,
	      "FI_WAIT_SET EQs are refused", NULL);
	attr.wait_obj = FI_WAIT_NONE;
	attr.flags = FI_SEND;
	check_what(fi_eq_open(fabric, &attr, &ro, NULL) == -FI_EINVAL,
	      "EQ flags other than FI_WRITE, FI_AFFINITY are refused", NULL);

	test_eq_fd(fabric);
}

/* ---- fi_trywait over several objects ---- */

void test_trywait(struct fid_fabric *fabric, struct fid_domain *domain)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_CONTEXT,
		.wait_obj = FI_WAIT_FD,
	};
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD, .flags = FI_WRITE };
	struct fi_eq_entry entry = { 0 };
	struct fi_cq_entry comp;
	struct fid_cntr *cntr = NULL;
	struct fid_cq *cq = NULL;
	struct fid_eq *eq = NULL;
	struct fid *fids[3];
	uint32_t event;
	int ret;

	if ((ret = open_cntr(domain, FI_WAIT_FD, &cntr)) ||
	    (ret = fi_cq_open(domain, &cq_attr, &cq, NULL)) ||
	    (ret = fi_eq_open(fabric, &eq_attr, &eq, NULL))) {
		check_what(false, "open an FD counter, CQ and EQ", "%s", fi_strerror(-ret));
		goto out;
	}
	fids[0] = &cntr->fid;
	fids[1] = &cq->fid;
	fids[2] = &eq->fid;
	check_what(fi_trywait(fabric, fids, 3) == 0, "three quiet objects: 0", NULL);
	check_what(fi_trywait(fabric, fids, 0) == 0, "no objects: 0", NULL);
	fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0);
	check_what(fi_trywait(fabric, fids, 3) == -FI_EAGAIN,
	      "an event on the last: -FI_EAGAIN", NULL);
	fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	fi_cntr_add(cntr, 1);
	check_what(fi_trywait(fabric, fids, 3) == -FI_EAGAIN, "a counter change: -FI_EAGAIN",
	      NULL);
	fi_cntr_read(cntr);
	check_what(fi_trywait(fabric, fids, 3) == 0, "all seen: 0 again", NULL);
	fi_cq_signal(cq);
	fi_cq_read(cq, &comp, 1);
	check_what(fi_trywait(fabric, fids, 3) == 0, "a signal does not queue anything", NULL);
	fids[1] = &domain->fid;
	check_what(fi_trywait(fabric, fids, 3) == -FI_EINVAL, "a domain is no wait object",
	      NULL);
out:
	if (cntr)
		fi_close(&cntr->fid);
	if (cq)
		fi_close(&cq->fid);
	if (eq)
		fi_close(&eq->fid);
}

/* ---- poll sets ---- */

/* Polls until the set reports something or about 10 s pass; returns how
 * many contexts fi_poll gave and keeps them in ctx. */
static int poll_until_any(struct fid_poll *set, void **ctx, int count)
{
	int i, n = 0;

	for (i = 0; i < 10000 && !n; i++) {
		n = fi_poll(set, ctx, count);
		if (!n)
			usleep(1000);
	}
	return n;
}

static bool poll_has(void **ctx, int n, const void *want)
{
	int i;

	for (i = 0; i < n; i++) {
		if (ctx[i] == want)
			return true;
	}
	return false;
}

void test_poll(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	static const char payload[] = "mrail objs: seen through a poll set";
	int cq_tx_tag, cq_rx_tag, cntr_tag, ctx_tx, ctx_rx;
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct fi_cq_msg_entry rx = { 0 }, tx = { 0 };
	struct fid_cntr *cntr = NULL;
	struct fid_poll *set = NULL;
	struct self_ep s = { 0 };
	char rbuf[64] = "";
	void *ctx[8];
	bool got_rx = false;
	int n, ret;

	if (fi_cq_open(domain, &cq_attr, &cq_tx, &cq_tx_tag) ||
	    fi_cq_open(domain, &cq_attr, &cq_rx, &cq_rx_tag) ||
	    fi_cntr_open(domain, &cntr_attr, &cntr, &cntr_tag)) {
		check_what(false, "open two CQs and a counter for the poll set", NULL);
		goto out;
	}
	ret = fi_poll_open(domain, &(struct fi_poll_attr) { .flags = 1 }, &set);
	check_what(ret == -FI_EINVAL, "fi_poll_open refuses reserved flags", "%s",
		   fi_strerror(-ret));
	ret = fi_poll_open(domain, &(struct fi_poll_attr) { 0 }, &set);
	check_what(ret == 0, "fi_poll_open", "%s", fi_strerror(-ret));
	if (ret)
		goto out;
	check_what(fi_poll_add(set, &cq_tx->fid, 0) == 0 &&
		   fi_poll_add(set, &cq_rx->fid, 0) == 0 &&
		   fi_poll_add(set, &cntr->fid, 0) == 0,
		   "fi_poll_add two CQs and a counter", NULL);
	ret = fi_poll_add(set, &cq_rx->fid, 0);
	check_what(ret == -FI_EALREADY, "a CQ added twice is refused", "%s",
		   fi_strerror(-ret));
	ret = fi_poll_add(set, &domain->fid, 0);
	check_what(ret == -FI_EINVAL, "a domain is no poll set member", "%s",
		   fi_strerror(-ret));
	n = fi_poll(set, ctx, 8);
	check_what(n == 0, "an idle poll set reports nothing", "fi_poll gave %d", n);

	ret = fi_cntr_add(cntr, 3);
	n = poll_until_any(set, ctx, 8);
	check_what(ret == 0 && n == 1 && ctx[0] == &cntr_tag,
		   "a counter that moved is reported, alone", "fi_poll gave %d", n);
	n = fi_poll(set, ctx, 8);
	check_what(n == 0, "the same count is not reported twice", "fi_poll gave %d", n);

	ret = self_ep_open(domain, info, cq_tx, cq_rx, &s);
	check_what(ret == 0, "an endpoint that can send to itself", "%s",
		   fi_strerror(-ret));
	if (ret)
		goto close_set;
	if (fi_recv(s.ep, rbuf, sizeof(rbuf), NULL, s.self, &ctx_rx) ||
	    self_send(&s, cq_rx, payload, sizeof(payload), &ctx_tx, &rx, &got_rx)) {
		check_what(false, "post a receive and a send to ourselves", NULL);
		goto close_set;
	}
	/* The receive may already have been read while the send waited for
	 * the rails; otherwise the poll set must show both CQs. */
	n = poll_until_any(set, ctx, 8);
	if (!got_rx && n < 2 && !poll_has(ctx, n, &cq_rx_tag))
		n += poll_until_any(set, ctx + n, 8 - n);
	check_what(poll_has(ctx, n, &cq_tx_tag), "the send's CQ is reported", NULL);
	check_what(got_rx || poll_has(ctx, n, &cq_rx_tag), "the receive's CQ is reported",
		   NULL);
	check_what(fi_cq_read(cq_tx, &tx, 1) == 1 && tx.op_context == &ctx_tx,
		   "the reported send completion is there", NULL);
	if (!got_rx)
		got_rx = fi_cq_read(cq_rx, &rx, 1) == 1;
	check_what(got_rx && rx.op_context == &ctx_rx && rx.len == sizeof(payload) &&
		   !memcmp(rbuf, payload, sizeof(payload)),
		   "the reported receive holds the message", NULL);
	n = fi_poll(set, ctx, 8);
	check_what(n == 0, "drained CQs are not reported", "fi_poll gave %d", n);

	ret = fi_poll(set, ctx, 1);
	check_what(ret == 0, "fi_poll with room for one context", "%d", ret);
	ret = fi_close(&cq_rx->fid);
	check_what(ret == -FI_EBUSY, "a CQ in a poll set refuses to close", "%s",
		   fi_strerror(-ret));
close_set:
	if (s.ep)
		fi_close(&s.ep->fid);
	if (s.av)
		fi_close(&s.av->fid);
	ret = fi_close(&set->fid);
	check_what(ret == -FI_EBUSY, "a poll set with members refuses to close", "%s",
		   fi_strerror(-ret));
	check_what(fi_poll_del(set, &cq_tx->fid, 0) == 0 &&
		   fi_poll_del(set, &cq_rx->fid, 0) == 0 &&
		   fi_poll_del(set, &cntr->fid, 0) == 0, "fi_poll_del every member", NULL);
	ret = fi_poll_del(set, &cntr->fid, 0);
	check_what(ret == -FI_ENOENT, "a member removed twice is not found", "%s",
		   fi_strerror(-ret));
	check_what(fi_close(&set->fid) == 0, "close the empty poll set", NULL);
out:
	if (cntr)
		fi_close(&cntr->fid);
	if (cq_rx)
		fi_close(&cq_rx->fid);
	if (cq_tx)
		fi_close(&cq_tx->fid);
}
