/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_p2p: matching beyond a posted receive — probes and matched probes,
 * unexpected-message storms, non-overtaking order, truncation and
 * cancellation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_p2p.h"

/* A tag the probe tests send two messages with, after the size sweep. */
#define TWIN_TAG 4000
/* Messages of each phase of the ordering test. */
#define ORDER_MESSAGES 120
#define ORDER_TAG 7
/* Large messages of the unexpected storm, and same-tag ones after them. */
#define STORM_LARGE 8
#define STORM_SAME_TAG 64
/* Receives the cancel test posts and cancels, the last one MPI_ANY_SOURCE. */
#define CANCELLED_RECEIVES 9
#define CANCEL_FIRST_TAG 1000

/* ---- probes ---- */

static const char *const probe_call[] = { "MPI_Probe", "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe" };

/* Finds a message the given way; the matched styles also claim it. */
static int probe_one(struct test_ctx *t, enum probe_style style, int source, int tag,
		     MPI_Status *st, MPI_Message *msg)
{
	int found = 0;

	switch (style) {
	case BY_PROBE:
		return MPI_OK(t, MPI_Probe(source, tag, t->comm, st));
	case BY_MPROBE:
		return MPI_OK(t, MPI_Mprobe(source, tag, t->comm, msg, st));
	case BY_IPROBE:
		while (!found)
			if (!MPI_OK(t, MPI_Iprobe(source, tag, t->comm, &found, st)))
				return 0;
		return 1;
	case BY_IMPROBE:
		while (!found)
			if (!MPI_OK(t, MPI_Improbe(source, tag, t->comm, &found, msg, st)))
				return 0;
		if (*msg == MPI_MESSAGE_NULL) {
			test_fail(t, "MPI_Improbe found a message but returned MPI_MESSAGE_NULL");
			return 0;
		}
		return 1;
	}
	return 0;
}

/* Receives what probe_one found, into exactly the probed size. The
 * improbe style alternates MPI_Mrecv and MPI_Imrecv. */
static int receive_probed(struct test_ctx *t, enum probe_style style, void *buf, int count,
			  const MPI_Status *probed, MPI_Message *msg, int k, MPI_Status *st)
{
	MPI_Request req;

	switch (style) {
	case BY_PROBE:
	case BY_IPROBE:
		return MPI_OK(t, MPI_Recv(buf, count, MPI_BYTE, probed->MPI_SOURCE, probed->MPI_TAG,
					  t->comm, st));
	case BY_MPROBE:
		return MPI_OK(t, MPI_Mrecv(buf, count, MPI_BYTE, msg, st));
	case BY_IMPROBE:
		if (k % 2 == 0)
			return MPI_OK(t, MPI_Mrecv(buf, count, MPI_BYTE, msg, st));
		return MPI_OK(t, MPI_Imrecv(buf, count, MPI_BYTE, msg, &req)) &&
		       MPI_OK(t, MPI_Wait(&req, st));
	}
	return 0;
}

/* Probes for the message with source/tag (wildcards or not), checks what
 * the probe says, receives it into a buffer of the probed size and checks
 * the bytes. */
static int probe_and_receive(struct test_ctx *t, enum probe_style style, int source, int tag,
			     int sender, int sent_tag, size_t len, uint64_t index, int k)
{
	MPI_Status probed, st;
	MPI_Message msg = MPI_MESSAGE_NULL;
	unsigned char *buf;
	int count = -1, ok;
	char what[64];

	snprintf(what, sizeof(what), "%s status", probe_call[style]);
	if (!probe_one(t, style, source, tag, &probed, &msg))
		return 0;
	/* A wrong status is recorded, and the message still received, so
	 * that its sender is not left blocked. */
	check_status(t, &probed, sender, sent_tag, len, what);
	if (!MPI_OK(t, MPI_Get_count(&probed, MPI_BYTE, &count)) || count < 0)
		return 0;
	buf = xmalloc((size_t)count + GUARD_BYTES);
	memset(buf, GUARD_FILL, (size_t)count + GUARD_BYTES);
	ok = receive_probed(t, style, buf, count, &probed, &msg, k, &st);
	if (ok && check_status(t, &st, sender, sent_tag, len, "receive after the probe")) {
		check_payload(t, buf, len, sender, sent_tag, index);
		check_untouched(t, buf, len, len + GUARD_BYTES, GUARD_FILL,
				"bytes after the message");
	}
	free(buf);
	return ok;
}

/* Two messages with one tag, the first small and the second large: a plain
 * probe sees the first until it is received; a matched probe claims the
 * first, so the next probe sees the second, and the two handles receive
 * their own messages in either order. */
static void probe_twins(struct test_ctx *t, enum probe_style style, int sender)
{
	size_t len[2] = { min_size(t->max_size, 100), min_size(t->max_size, MiB) };
	MPI_Message msg[2] = { MPI_MESSAGE_NULL, MPI_MESSAGE_NULL };
	MPI_Status probed[2], st;
	unsigned char *buf[2];
	int i, matched = style == BY_MPROBE || style == BY_IMPROBE;

	for (i = 0; i < 2; i++) {
		if (!probe_one(t, style, sender, TWIN_TAG, &probed[i], &msg[i]))
			return;
		/* Unmatched probes do not remove: the second one sees the
		 * first message again. */
		check_status(t, &probed[i], sender, TWIN_TAG, len[matched ? i : 0],
			     matched ? "matched probe of twin messages" : "repeated probe");
	}
	for (i = 0; i < 2; i++) {
		buf[i] = xmalloc(len[1] + GUARD_BYTES);
		memset(buf[i], GUARD_FILL, len[1] + GUARD_BYTES);
	}
	for (i = 1; i >= 0; i--) {
		int which = matched ? i : 1 - i;
		int ok = matched ? MPI_OK(t, MPI_Mrecv(buf[which], (int)len[1], MPI_BYTE, &msg[which], &st))
				 : MPI_OK(t, MPI_Recv(buf[which], (int)len[1], MPI_BYTE, sender, TWIN_TAG,
						      t->comm, &st));
		if (!ok)
			break;
		check_status(t, &st, sender, TWIN_TAG, len[which], "receive of a twin message");
		check_payload(t, buf[which], len[which], sender, TWIN_TAG, (uint64_t)which);
	}
	free(buf[0]);
	free(buf[1]);
}

void test_probes(struct test_ctx *t)
{
	enum probe_style style = (enum probe_style)t->variant;
	size_t sizes[SWEEP_CAPACITY], n = sweep_sizes(t, sizes, SWEEP_CAPACITY), k;
	size_t twin_len[2] = { min_size(t->max_size, 100), min_size(t->max_size, MiB) };
	int peer = pair_peer(t), round, i;
	unsigned char *send_buf, *twin_buf[2];
	MPI_Request twin_req[2];

	if (peer < 0)
		return;
	send_buf = xmalloc(sizes[n - 1]);
	for (i = 0; i < 2; i++)
		twin_buf[i] = xmalloc(twin_len[i]);
	/* Round 0: the lower rank of the pair sends; round 1: the higher. */
	for (round = 0; round < 2; round++) {
		int sending = (t->rank < peer) == (round == 0);

		for (k = 0; k < n; k++) {
			int tag = (int)k + 1;

			if (sending) {
				payload_fill(send_buf, sizes[k], payload_seed(t->rank, tag, k));
				if (!MPI_OK(t, MPI_Send(send_buf, (int)sizes[k], MPI_BYTE, peer, tag,
							t->comm)))
					goto out;
			} else if (k % 2 == 0) {
				if (!probe_and_receive(t, style, peer, tag, peer, tag, sizes[k], k, (int)k))
					goto out;
			} else {
				/* Only the peer sends to this rank, and from one
				 * source the earliest message matches first. */
				if (!probe_and_receive(t, style, MPI_ANY_SOURCE, MPI_ANY_TAG, peer, tag,
						       sizes[k], k, (int)k))
					goto out;
			}
		}
		if (sending) {
			for (i = 0; i < 2; i++) {
				payload_fill(twin_buf[i], twin_len[i],
					     payload_seed(t->rank, TWIN_TAG, (uint64_t)i));
				if (!MPI_OK(t, MPI_Isend(twin_buf[i], (int)twin_len[i], MPI_BYTE, peer,
							 TWIN_TAG, t->comm, &twin_req[i])))
					goto out;
			}
			if (!MPI_OK(t, MPI_Waitall(2, twin_req, MPI_STATUSES_IGNORE)))
				goto out;
		} else {
			probe_twins(t, style, peer);
		}
	}
out:
	free(send_buf);
	free(twin_buf[0]);
	free(twin_buf[1]);
}

/* ---- unexpected messages ---- */

/* Sizes that every provider sends eagerly. */
static size_t storm_small_size(int i, size_t max)
{
	static const size_t mix[] = { 0, 1, 8, 64, 1000, 4 * KiB - 1, 16 * KiB - 40, 16 * KiB };

	return min_size(max, mix[(size_t)i % (sizeof(mix) / sizeof(mix[0]))]);
}

static size_t storm_large_size(int j, size_t max)
{
	return min_size(max, MiB * (size_t)(1 + j % 4) + (size_t)j);
}

/* In the same-tag group small and large alternate, so eager messages and
 * rendezvous ones wait in the unexpected queue together. */
static size_t storm_same_tag_size(int j, size_t max)
{
	static const size_t mix[] = { 100, 64 * KiB + 1, 16 * KiB, MiB, 8, 16 * KiB + 1 };

	return min_size(max, mix[(size_t)j % (sizeof(mix) / sizeof(mix[0]))]);
}

/* Receives one message and checks it. Returns 0 only when MPI failed: a
 * wrong message is recorded and the caller goes on, so that the senders of
 * the remaining messages are not left blocked. */
static int receive_expected(struct test_ctx *t, unsigned char *buf, size_t capacity,
			    int source, int tag, size_t len, uint64_t index, const char *what)
{
	MPI_Status st;

	memset(buf, GUARD_FILL, min_size(capacity, len + GUARD_BYTES));
	if (!MPI_OK(t, MPI_Recv(buf, (int)capacity, MPI_BYTE, source, tag, t->comm, &st)))
		return 0;
	if (check_status(t, &st, source, tag, len, what) &&
	    check_payload(t, buf, len, source, tag, index))
		check_untouched(t, buf, len, min_size(capacity, len + GUARD_BYTES), GUARD_FILL,
				"bytes after the message");
	return 1;
}

static int gcd(int a, int b)
{
	while (b) {
		int r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/* The receiver of a pair takes the storm in another order than it was
 * sent: large ones first (last tag first), then the same-tag group (which
 * must stay in send order), then half the small tags by blocking receives
 * in a strided permutation and the other half by receives posted at once
 * in reverse order. */
static void receive_storm(struct test_ctx *t, int sender)
{
	int n = t->storm_count, large_tag = n, same_tag = n + STORM_LARGE, stride, i, j, half;
	size_t capacity = min_size(t->max_size, 4 * MiB + STORM_LARGE) + GUARD_BYTES;
	size_t small_capacity = 16 * KiB + GUARD_BYTES;
	unsigned char *buf = xmalloc(capacity), *arena;
	MPI_Request *reqs;
	MPI_Status *statuses;

	for (j = STORM_LARGE - 1; j >= 0; j--)
		if (!receive_expected(t, buf, capacity, sender, large_tag + j,
				      storm_large_size(j, t->max_size), (uint64_t)j, "large unexpected"))
			goto out;
	for (j = 0; j < STORM_SAME_TAG; j++)
		if (!receive_expected(t, buf, capacity, sender, same_tag,
				      storm_same_tag_size(j, t->max_size), (uint64_t)j,
				      "same-tag unexpected (send order)"))
			goto out;

	/* A stride coprime with n visits every tag once. */
	for (stride = n / 3 + 1; gcd(stride, n) != 1; stride++)
		;
	half = n / 2;
	for (i = 0; i < half; i++) {
		int tag = (int)(((long)i * stride) % n);

		if (!receive_expected(t, buf, small_capacity, sender, tag,
				      storm_small_size(tag, t->max_size), (uint64_t)tag,
				      "small unexpected"))
			goto out;
	}
	reqs = xmalloc(sizeof(*reqs) * (size_t)(n - half));
	statuses = xmalloc(sizeof(*statuses) * (size_t)(n - half));
	arena = xmalloc(small_capacity * (size_t)(n - half));
	memset(arena, GUARD_FILL, small_capacity * (size_t)(n - half));
	for (i = n - 1; i >= half; i--) {
		int tag = (int)(((long)i * stride) % n);

		if (!MPI_OK(t, MPI_Irecv(arena + small_capacity * (size_t)(i - half),
					 (int)small_capacity, MPI_BYTE, sender, tag, t->comm,
					 &reqs[i - half])))
			goto out_posted;
	}
	if (!waitall_ok(t, n - half, reqs, statuses))
		goto out_posted;
	for (i = half; i < n; i++) {
		int tag = (int)(((long)i * stride) % n);
		size_t len = storm_small_size(tag, t->max_size);
		unsigned char *slot = arena + small_capacity * (size_t)(i - half);

		check_message(t, &statuses[i - half], slot, len, small_capacity, sender, tag,
			      (uint64_t)tag, "small unexpected (posted at once)");
	}
out_posted:
	free(reqs);
	free(statuses);
	free(arena);
out:
	free(buf);
}

void test_unexpected(struct test_ctx *t)
{
	int peer = pair_peer(t), n = t->storm_count, sending = peer >= 0 && t->rank < peer, i, ok = 1;
	struct outgoing o;

	outgoing_init(&o, sending ? n + STORM_LARGE + STORM_SAME_TAG : 0);
	if (sending) {
		for (i = 0; ok && i < n; i++)
			ok = outgoing_send(t, &o, peer, i, storm_small_size(i, t->max_size), (uint64_t)i);
		for (i = 0; ok && i < STORM_LARGE; i++)
			ok = outgoing_send(t, &o, peer, n + i, storm_large_size(i, t->max_size),
					   (uint64_t)i);
		for (i = 0; ok && i < STORM_SAME_TAG; i++)
			ok = outgoing_send(t, &o, peer, n + STORM_LARGE,
					   storm_same_tag_size(i, t->max_size), (uint64_t)i);
	}
	/* The receiver posts nothing before every send has started. */
	MPI_OK(t, MPI_Barrier(t->comm));
	if (peer >= 0 && !sending)
		receive_storm(t, peer);
	outgoing_finish(t, &o, ok);
}

void test_unexpected_fan_in(struct test_ctx *t)
{
	int per_sender = t->storm_count / (t->size - 1), i, src, ok = 1;
	size_t large = min_size(t->max_size, 2 * MiB), capacity = large + GUARD_BYTES;
	struct outgoing o;
	unsigned char *buf;

	if (per_sender < 1)
		per_sender = 1;
	outgoing_init(&o, t->rank == 0 ? 0 : per_sender + 2);
	if (t->rank != 0) {
		for (i = 0; ok && i < per_sender; i++)
			ok = outgoing_send(t, &o, 0, i, storm_small_size(i + t->rank, t->max_size),
					   (uint64_t)i);
		for (i = 0; ok && i < 2; i++)
			ok = outgoing_send(t, &o, 0, per_sender + i, large, (uint64_t)i);
	}
	MPI_OK(t, MPI_Barrier(t->comm));
	if (t->rank == 0) {
		/* Last rank first; per rank the large ones, then the small
		 * ones last tag first. */
		buf = xmalloc(capacity);
		for (src = t->size - 1; src >= 1; src--) {
			for (i = 0; i < 2; i++)
				if (!receive_expected(t, buf, capacity, src, per_sender + i, large,
						      (uint64_t)i, "large fan-in"))
					goto out;
			for (i = per_sender - 1; i >= 0; i--)
				if (!receive_expected(t, buf, capacity, src, i,
						      storm_small_size(i + src, t->max_size),
						      (uint64_t)i, "small fan-in"))
					goto out;
		}
out:
		free(buf);
	}
	outgoing_finish(t, &o, ok);
}

/* ---- non-overtaking ---- */

/* At least 8 bytes, for the sequence number in front. */
static size_t order_size(int seq, size_t max)
{
	static const size_t mix[] = {
		8, 16 * KiB + 1, 64, MiB, 16 * KiB, 100, 64 * KiB + 8, 16 * KiB - 40, 4 * MiB,
	};
	size_t len = min_size(max, mix[(size_t)seq % (sizeof(mix) / sizeof(mix[0]))]);

	return len < 8 ? 8 : len;
}

static void order_fill(struct test_ctx *t, unsigned char *buf, int seq)
{
	uint64_t header = (uint64_t)seq;

	memcpy(buf, &header, sizeof(header));
	payload_fill(buf + 8, order_size(seq, t->max_size) - 8,
		     payload_seed(t->rank, ORDER_TAG, (uint64_t)seq));
}

/* The receive number k must hold message k: its sequence number, size
 * and bytes. */
static void order_check(struct test_ctx *t, const unsigned char *buf, const MPI_Status *st,
			int sender, int k, const char *phase)
{
	uint64_t header;
	char what[96];

	snprintf(what, sizeof(what), "%s receive #%d", phase, k);
	memcpy(&header, buf, sizeof(header));
	if (header != (uint64_t)k) {
		test_fail(t, "%s: holds message #%llu: overtaken", what, (unsigned long long)header);
		return;
	}
	check_status(t, st, sender, ORDER_TAG, order_size(k, t->max_size), what);
	check_payload(t, buf + 8, order_size(k, t->max_size) - 8, sender, ORDER_TAG, (uint64_t)k);
}

enum order_phase { RECEIVES_FIRST, SENDS_FIRST, BOTH_BLOCKING };

static void order_phase(struct test_ctx *t, int peer, int sending, enum order_phase phase)
{
	static const char *const name[] = { "pre-posted", "unexpected", "blocking" };
	size_t largest = 0, *offset = xmalloc(sizeof(size_t) * (ORDER_MESSAGES + 1));
	MPI_Request *reqs = xmalloc(sizeof(*reqs) * ORDER_MESSAGES);
	MPI_Status *statuses = xmalloc(sizeof(*statuses) * ORDER_MESSAGES);
	unsigned char *arena;
	int k, posted = 0;

	/* One slot per message, of its own size: a message in the wrong slot
	 * is truncated or has the wrong count or sequence number. */
	offset[0] = 0;
	for (k = 0; k < ORDER_MESSAGES; k++) {
		offset[k + 1] = offset[k] + order_size(k, t->max_size);
		if (order_size(k, t->max_size) > largest)
			largest = order_size(k, t->max_size);
	}
	arena = xmalloc(offset[ORDER_MESSAGES]);
	for (k = 0; k < ORDER_MESSAGES; k++)
		reqs[k] = MPI_REQUEST_NULL;

	if (sending) {
		for (k = 0; k < ORDER_MESSAGES; k++)
			order_fill(t, arena + offset[k], k);
		if (phase == RECEIVES_FIRST)
			MPI_OK(t, MPI_Barrier(t->comm));
		for (k = 0; k < ORDER_MESSAGES; k++, posted++) {
			int len = (int)(offset[k + 1] - offset[k]);

			if (phase == BOTH_BLOCKING
			    ? !MPI_OK(t, MPI_Send(arena + offset[k], len, MPI_BYTE, peer, ORDER_TAG, t->comm))
			    : !MPI_OK(t, MPI_Isend(arena + offset[k], len, MPI_BYTE, peer, ORDER_TAG,
						   t->comm, &reqs[k])))
				break;
		}
		if (phase == SENDS_FIRST)
			MPI_OK(t, MPI_Barrier(t->comm));
		if (phase != BOTH_BLOCKING)
			MPI_OK(t, MPI_Waitall(posted, reqs, MPI_STATUSES_IGNORE));
	} else if (phase == RECEIVES_FIRST) {
		for (k = 0; k < ORDER_MESSAGES; k++, posted++)
			if (!MPI_OK(t, MPI_Irecv(arena + offset[k], (int)(offset[k + 1] - offset[k]),
						 MPI_BYTE, peer, ORDER_TAG, t->comm, &reqs[k])))
				break;
		MPI_OK(t, MPI_Barrier(t->comm));
		if (posted == ORDER_MESSAGES && waitall_ok(t, posted, reqs, statuses))
			for (k = 0; k < ORDER_MESSAGES; k++)
				order_check(t, arena + offset[k], &statuses[k], peer, k, name[phase]);
	} else {
		/* One buffer that fits any message: an overtaking message
		 * shows as a wrong sequence number. */
		unsigned char *buf = xmalloc(largest);

		if (phase == SENDS_FIRST)
			MPI_OK(t, MPI_Barrier(t->comm));
		for (k = 0; k < ORDER_MESSAGES; k++) {
			if (!MPI_OK(t, MPI_Recv(buf, (int)largest, MPI_BYTE, peer, ORDER_TAG, t->comm,
						&statuses[k])))
				break;
			order_check(t, buf, &statuses[k], peer, k, name[phase]);
		}
		free(buf);
	}
	free(offset);
	free(reqs);
	free(statuses);
	free(arena);
}

void test_ordering(struct test_ctx *t)
{
	int peer = pair_peer(t), sending = peer >= 0 && t->rank < peer;

	/* Ranks without a peer join the barriers of the first two phases. */
	if (peer < 0) {
		MPI_OK(t, MPI_Barrier(t->comm));
		MPI_OK(t, MPI_Barrier(t->comm));
		return;
	}
	order_phase(t, peer, sending, RECEIVES_FIRST);
	order_phase(t, peer, sending, SENDS_FIRST);
	order_phase(t, peer, sending, BOTH_BLOCKING);
}

/* ---- truncation ---- */

struct truncation_case {
	size_t sent, room;
};

void test_truncate(struct test_ctx *t)
{
	const struct truncation_case cases[] = {
		{ 1, 0 }, { 100, 64 }, { 16 * KiB + 1, 16 * KiB }, { 64 * KiB, 1000 },
		{ MiB, 64 * KiB }, { t->max_size, t->max_size / 2 },
	};
	int peer = pair_peer(t), sending = peer >= 0 && t->rank < peer, c, rc, class, n_cases;
	unsigned char *buf = NULL, ack = 0;
	MPI_Request req;
	MPI_Status st;

	if (peer < 0)
		return;
	n_cases = (int)(sizeof(cases) / sizeof(cases[0]));
	buf = xmalloc(t->max_size + GUARD_BYTES);
	for (c = 0; c < n_cases; c++) {
		size_t sent = cases[c].sent, room = cases[c].room;
		int tag = 2 * c + 1;

		if (sent > t->max_size || room >= sent)
			continue;
		if (sending) {
			/* A message of the same size twice: once truncated,
			 * once whole. */
			payload_fill(buf, sent, payload_seed(t->rank, tag, 0));
			if (!MPI_OK(t, MPI_Send(buf, (int)sent, MPI_BYTE, peer, tag, t->comm)))
				break;
			payload_fill(buf, sent, payload_seed(t->rank, tag + 1, 0));
			if (!MPI_OK(t, MPI_Send(buf, (int)sent, MPI_BYTE, peer, tag + 1, t->comm)) ||
			    !MPI_OK(t, MPI_Recv(&ack, 1, MPI_BYTE, peer, tag, t->comm, &st)))
				break;
			check_status(t, &st, peer, tag, 1, "reply after a truncation");
			continue;
		}
		memset(buf, GUARD_FILL, room + GUARD_BYTES);
		/* Blocking and non-blocking receives take turns. */
		if (c % 2 == 0) {
			rc = MPI_Recv(buf, (int)room, MPI_BYTE, peer, tag, t->comm, &st);
		} else {
			rc = MPI_Irecv(buf, (int)room, MPI_BYTE, peer, tag, t->comm, &req);
			if (!mpi_ok(t, rc, "MPI_Irecv"))
				break;
			rc = MPI_Wait(&req, &st);
		}
		class = MPI_SUCCESS;
		MPI_Error_class(rc, &class);
		/* Recorded, and the exchange goes on: the sender waits. */
		if (class != MPI_ERR_TRUNCATE)
			test_fail(t, "%zu bytes into %zu: %s returned error class %d, expected MPI_ERR_TRUNCATE (%d)",
				  sent, room, c % 2 ? "MPI_Wait" : "MPI_Recv", class, MPI_ERR_TRUNCATE);
		check_untouched(t, buf, room, room + GUARD_BYTES, GUARD_FILL,
				"bytes after a truncated receive");
		/* The communicator still works, in both directions. */
		if (!receive_expected(t, buf, t->max_size + GUARD_BYTES, peer, tag + 1, sent, 0,
				      "whole message after a truncation"))
			break;
		if (!MPI_OK(t, MPI_Send(&ack, 1, MPI_BYTE, peer, tag, t->comm)))
			break;
	}
	free(buf);
}

/* ---- cancellation ---- */

void test_cancel(struct test_ctx *t)
{
	int peer = pair_peer(t), ok = peer >= 0, posted = 0, i, cancelled;
	size_t room = 4 * KiB, len = min_size(t->max_size, 1000);
	unsigned char *arena = xmalloc(room * CANCELLED_RECEIVES);
	MPI_Request reqs[CANCELLED_RECEIVES];
	MPI_Status statuses[CANCELLED_RECEIVES];
	struct outgoing o;

	outgoing_init(&o, ok ? CANCELLED_RECEIVES : 0);
	memset(arena, GUARD_FILL, room * CANCELLED_RECEIVES);
	/* Nobody has sent on these tags yet, so every cancel must succeed. */
	for (; ok && posted < CANCELLED_RECEIVES; posted++) {
		int source = posted == CANCELLED_RECEIVES - 1 ? MPI_ANY_SOURCE : peer;

		ok = MPI_OK(t, MPI_Irecv(arena + room * (size_t)posted, (int)room, MPI_BYTE, source,
					 CANCEL_FIRST_TAG + posted, t->comm, &reqs[posted]));
	}
	for (i = 0; ok && i < posted; i++)
		ok = MPI_OK(t, MPI_Cancel(&reqs[i]));
	if (ok)
		ok = waitall_ok(t, posted, reqs, statuses);
	for (i = 0; ok && i < posted; i++) {
		cancelled = 0;
		MPI_Test_cancelled(&statuses[i], &cancelled);
		if (!cancelled)
			test_fail(t, "receive on tag %d: MPI_Test_cancelled is false",
				  CANCEL_FIRST_TAG + i);
	}
	check_untouched(t, arena, 0, room * CANCELLED_RECEIVES, GUARD_FILL,
			"buffers of cancelled receives");

	/* Only now the peer sends on those tags: new receives must get the
	 * messages, which a cancelled receive that still matched would take. */
	MPI_OK(t, MPI_Barrier(t->comm));
	for (i = 0; ok && i < CANCELLED_RECEIVES; i++)
		ok = outgoing_send(t, &o, peer, CANCEL_FIRST_TAG + i, len, (uint64_t)i);
	for (i = 0; ok && i < CANCELLED_RECEIVES; i++)
		ok = receive_expected(t, arena, room, peer, CANCEL_FIRST_TAG + i, len, (uint64_t)i,
				      "message after a cancelled receive");
	check_untouched(t, arena, room, room * CANCELLED_RECEIVES, GUARD_FILL,
			"buffers of cancelled receives, after the new messages");
	outgoing_finish(t, &o, 1);
	free(arena);
}
