/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_p2p: sends and receives with known partners and wildcards —
 * blocking, MPI_Sendrecv, windows of non-blocking requests completed three
 * ways, MPI_ANY_SOURCE/MPI_ANY_TAG, a ring and all-to-all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_p2p.h"

/* Messages each rank sends to each other rank in the wildcard tests. */
#define WILDCARD_MESSAGES 40

/* ---- blocking, sendrecv and ring: one message per size of the sweep ---- */

/* The sweep's sizes, a send buffer for the largest and a receive buffer
 * with GUARD_BYTES to spare. */
struct sweep_bufs {
	size_t sizes[SWEEP_CAPACITY], n, capacity;
	unsigned char *send_buf, *recv_buf;
};

/* Moves size k of the sweep with tag (k + 1) and checks what arrived;
 * 0 ends the sweep. */
typedef int sweep_step(struct test_ctx *t, struct sweep_bufs *b, size_t k, int tag);

static void sweep_run(struct test_ctx *t, sweep_step *step)
{
	struct sweep_bufs b;
	size_t k;

	b.n = sweep_sizes(t, b.sizes, SWEEP_CAPACITY);
	b.capacity = b.sizes[b.n - 1] + GUARD_BYTES;
	b.send_buf = xmalloc(b.sizes[b.n - 1]);
	b.recv_buf = xmalloc(b.capacity);
	for (k = 0; k < b.n; k++) {
		int tag = (int)k + 1;

		/* This rank's pattern to send, the guard fill to receive into. */
		payload_fill(b.send_buf, b.sizes[k], payload_seed(t->rank, tag, k));
		memset(b.recv_buf, GUARD_FILL, b.capacity);
		if (!step(t, &b, k, tag))
			break;
	}
	free(b.send_buf);
	free(b.recv_buf);
}

/* Size k arrived from src with tag, in the status st. */
static void sweep_check(struct test_ctx *t, struct sweep_bufs *b, size_t k,
			const MPI_Status *st, int src, int tag, const char *what)
{
	check_message(t, st, b->recv_buf, b->sizes[k], b->sizes[k] + GUARD_BYTES, src, tag, k,
		      what);
}

static int send_k(struct test_ctx *t, struct sweep_bufs *b, size_t k, int dest, int tag)
{
	return MPI_OK(t, MPI_Send(b->send_buf, (int)b->sizes[k], MPI_BYTE, dest, tag, t->comm));
}

static int recv_k(struct test_ctx *t, struct sweep_bufs *b, int source, int tag, MPI_Status *st)
{
	return MPI_OK(t, MPI_Recv(b->recv_buf, (int)b->capacity, MPI_BYTE, source, tag, t->comm,
				  st));
}

static int blocking_step(struct test_ctx *t, struct sweep_bufs *b, size_t k, int tag)
{
	int peer = pair_peer(t), sent, received;
	MPI_Status st;

	/* Ping-pong: the lower rank sends first, so both directions run
	 * with the peer blocked in MPI_Recv. */
	if (t->rank < peer) {
		sent = send_k(t, b, k, peer, tag);
		received = sent && recv_k(t, b, peer, tag, &st);
	} else {
		received = recv_k(t, b, peer, tag, &st);
		sent = received && send_k(t, b, k, peer, tag);
	}
	if (!sent || !received)
		return 0;
	sweep_check(t, b, k, &st, peer, tag, "MPI_Recv");
	return 1;
}

void test_blocking(struct test_ctx *t)
{
	if (pair_peer(t) >= 0)
		sweep_run(t, blocking_step);
}

static int sendrecv_step(struct test_ctx *t, struct sweep_bufs *b, size_t k, int tag)
{
	int right = (t->rank + 1) % t->size, left = (t->rank + t->size - 1) % t->size;
	MPI_Status st;

	if (!MPI_OK(t, MPI_Sendrecv(b->send_buf, (int)b->sizes[k], MPI_BYTE, right, tag,
				    b->recv_buf, (int)b->capacity, MPI_BYTE, left, tag,
				    t->comm, &st)))
		return 0;
	sweep_check(t, b, k, &st, left, tag, "MPI_Sendrecv");
	return 1;
}

void test_sendrecv(struct test_ctx *t)
{
	sweep_run(t, sendrecv_step);
}

/* ---- windows of non-blocking requests ---- */

/* Mostly eager sizes around the usual limits; every 64th message is large
 * enough for a rendezvous, so both protocols are in flight together. */
static size_t window_message_size(int i, size_t max)
{
	static const size_t mix[] = {
		0, 1, 8, 100, 1000, 4 * KiB - 1, 16 * KiB - 40, 16 * KiB, 16 * KiB + 1, 64 * KiB,
	};

	if (i % 64 == 63)
		return min_size(max, MiB + (size_t)i);
	return min_size(max, mix[i % (int)(sizeof(mix) / sizeof(mix[0]))]);
}

/* Completes all n requests the given way; counts how often each completed
 * and keeps each one's status. Returns 0 on an MPI error. */
static int complete_requests(struct test_ctx *t, enum completion_style style, int n,
			     MPI_Request *reqs, MPI_Status *statuses, int *times_completed)
{
	int *indices, done, index, flag, i;
	MPI_Status st, *some;

	switch (style) {
	case BY_WAITALL:
		if (!waitall_ok(t, n, reqs, statuses))
			return 0;
		for (i = 0; i < n; i++)
			times_completed[i]++;
		return 1;
	case BY_TESTANY:
		for (;;) {
			if (!MPI_OK(t, MPI_Testany(n, reqs, &index, &flag, &st)))
				return 0;
			/* flag with MPI_UNDEFINED: no active request is left. */
			if (flag && index == MPI_UNDEFINED)
				return 1;
			if (flag) {
				if (index < 0 || index >= n) {
					test_fail(t, "MPI_Testany returned index %d of %d", index, n);
					return 0;
				}
				statuses[index] = st;
				times_completed[index]++;
			}
		}
	case BY_WAITSOME:
		indices = xmalloc(sizeof(*indices) * (size_t)n);
		some = xmalloc(sizeof(*some) * (size_t)n);
		for (;;) {
			if (!MPI_OK(t, MPI_Waitsome(n, reqs, &done, indices, some))) {
				free(indices);
				free(some);
				return 0;
			}
			if (done == MPI_UNDEFINED)
				break;
			for (i = 0; i < done; i++) {
				if (indices[i] < 0 || indices[i] >= n) {
					test_fail(t, "MPI_Waitsome returned index %d of %d", indices[i], n);
					continue;
				}
				statuses[indices[i]] = some[i];
				times_completed[indices[i]]++;
			}
		}
		free(indices);
		free(some);
		return 1;
	}
	return 0;
}

/* Each rank keeps WINDOW receives and WINDOW sends in flight with every
 * other rank; receive i from a peer has tag i and a buffer of exactly the
 * message's size plus a guard. */
void test_window(struct test_ctx *t)
{
	enum completion_style style = (enum completion_style)t->variant;
	int peers = t->size - 1, w = t->window, n_recv = peers * w, n = 2 * n_recv;
	size_t *recv_off = xmalloc(sizeof(size_t) * (size_t)(n_recv + 1));
	size_t *send_off = xmalloc(sizeof(size_t) * (size_t)(n_recv + 1));
	MPI_Request *reqs = xmalloc(sizeof(*reqs) * (size_t)n);
	MPI_Status *statuses = xmalloc(sizeof(*statuses) * (size_t)n);
	int *times_completed = xmalloc(sizeof(int) * (size_t)n);
	unsigned char *recv_arena, *send_arena;
	int p, i, r, completions = 0;

	recv_off[0] = send_off[0] = 0;
	for (r = 0; r < n_recv; r++) {
		size_t len = window_message_size(r % w, t->max_size);

		recv_off[r + 1] = recv_off[r] + len + GUARD_BYTES;
		send_off[r + 1] = send_off[r] + len;
	}
	recv_arena = xmalloc(recv_off[n_recv]);
	send_arena = xmalloc(send_off[n_recv]);
	memset(recv_arena, GUARD_FILL, recv_off[n_recv]);
	memset(times_completed, 0, sizeof(int) * (size_t)n);

	for (p = 0; p < peers; p++) {
		int peer = (t->rank + 1 + p) % t->size;

		for (i = 0; i < w; i++) {
			r = p * w + i;
			if (!MPI_OK(t, MPI_Irecv(recv_arena + recv_off[r],
						 (int)(recv_off[r + 1] - recv_off[r]), MPI_BYTE,
						 peer, i, t->comm, &reqs[r])))
				goto out;
		}
	}
	for (p = 0; p < peers; p++) {
		int peer = (t->rank + 1 + p) % t->size;

		for (i = 0; i < w; i++) {
			r = p * w + i;
			payload_fill(send_arena + send_off[r], send_off[r + 1] - send_off[r],
				     payload_seed(t->rank, i, (uint64_t)i));
			if (!MPI_OK(t, MPI_Isend(send_arena + send_off[r],
						 (int)(send_off[r + 1] - send_off[r]), MPI_BYTE,
						 peer, i, t->comm, &reqs[n_recv + r])))
				goto out;
		}
	}
	if (!complete_requests(t, style, n, reqs, statuses, times_completed))
		goto out;

	for (r = 0; r < n; r++) {
		completions += times_completed[r];
		if (times_completed[r] != 1)
			test_fail(t, "%s request %d completed %d times",
				  r < n_recv ? "receive" : "send", r % n_recv, times_completed[r]);
	}
	if (completions != n)
		test_fail(t, "%d completions for %d requests", completions, n);
	for (r = 0; r < n_recv; r++) {
		int peer = (t->rank + 1 + r / w) % t->size, tag = r % w;
		size_t len = send_off[r + 1] - send_off[r];

		check_status(t, &statuses[r], peer, tag, len, "window receive");
		check_payload(t, recv_arena + recv_off[r], len, peer, tag, (uint64_t)tag);
		check_untouched(t, recv_arena, recv_off[r] + len, recv_off[r + 1], GUARD_FILL,
				"guard after a window receive");
	}
out:
	free(recv_off);
	free(send_off);
	free(reqs);
	free(statuses);
	free(times_completed);
	free(recv_arena);
	free(send_arena);
}

/* ---- wildcards ---- */

/* The size of message TAG from SRC in the wildcard tests: varies with both,
 * so a receive that matched the wrong message shows in MPI_Get_count. */
static size_t wildcard_size(int src, int tag, size_t max)
{
	static const size_t mix[] = {
		1, 8, 100, 4 * KiB - 1, 16 * KiB - 40, 16 * KiB + 1, 64 * KiB, 256 * KiB, 0,
	};

	return min_size(max, mix[(size_t)(src * 3 + tag) % (sizeof(mix) / sizeof(mix[0]))]);
}

/* Every rank starts WILDCARD_MESSAGES sends with tags 0.. to every other. */
static int fan_out_start(struct test_ctx *t, struct outgoing *f)
{
	int peers = t->size - 1, p, tag;

	outgoing_init(f, peers * WILDCARD_MESSAGES);
	for (p = 0; p < peers; p++) {
		int peer = (t->rank + 1 + p) % t->size;

		for (tag = 0; tag < WILDCARD_MESSAGES; tag++)
			if (!outgoing_send(t, f, peer, tag, wildcard_size(t->rank, tag, t->max_size),
					   (uint64_t)tag))
				return 0;
	}
	return 1;
}

/* Receives one wildcard message into a buffer big enough for any, and
 * checks it against what SRC (from the status) sent with the tag. Returns
 * the source, or -1 after recording why not. */
static int receive_wildcard(struct test_ctx *t, unsigned char *buf, size_t capacity,
			    int source, int tag, int expected_tag, const char *what)
{
	MPI_Status st;
	int src, want_tag;
	size_t len;

	memset(buf, GUARD_FILL, capacity);
	if (!MPI_OK(t, MPI_Recv(buf, (int)capacity, MPI_BYTE, source, tag, t->comm, &st)))
		return -1;
	src = st.MPI_SOURCE;
	if (src < 0 || src >= t->size || src == t->rank) {
		test_fail(t, "%s: MPI_SOURCE %d is not another rank of %d", what, src, t->size);
		return -1;
	}
	want_tag = expected_tag >= 0 ? expected_tag : st.MPI_TAG;
	if (want_tag < 0 || want_tag >= WILDCARD_MESSAGES) {
		test_fail(t, "%s: MPI_TAG %d was never sent", what, want_tag);
		return -1;
	}
	check_status(t, &st, source == MPI_ANY_SOURCE ? src : source, want_tag,
		     wildcard_size(src, want_tag, t->max_size), what);
	len = wildcard_size(src, want_tag, t->max_size);
	check_payload(t, buf, len, src, want_tag, (uint64_t)want_tag);
	check_untouched(t, buf, len, len + GUARD_BYTES, GUARD_FILL, "bytes after the message");
	return src;
}

void test_any_source(struct test_ctx *t)
{
	size_t capacity = 256 * KiB + GUARD_BYTES;
	unsigned char *buf = xmalloc(capacity);
	char *seen = xmalloc((size_t)t->size);
	struct outgoing f;
	int started = fan_out_start(t, &f), tag, j, src;

	/* Tags in reverse order: each tag's messages from all peers must be
	 * found among the others, whichever rank they came from. */
	for (tag = WILDCARD_MESSAGES - 1; started && tag >= 0; tag--) {
		memset(seen, 0, (size_t)t->size);
		for (j = 0; j < t->size - 1; j++) {
			src = receive_wildcard(t, buf, capacity, MPI_ANY_SOURCE, tag, tag,
					       "MPI_ANY_SOURCE receive");
			if (src < 0)
				break;
			if (seen[src]++)
				test_fail(t, "tag %d from rank %d received twice", tag, src);
		}
	}
	outgoing_finish(t, &f, started);
	free(buf);
	free(seen);
}

void test_any_tag(struct test_ctx *t)
{
	size_t capacity = 256 * KiB + GUARD_BYTES;
	unsigned char *buf = xmalloc(capacity);
	struct outgoing f;
	int started = fan_out_start(t, &f), p, k;

	/* From one source, MPI_ANY_TAG matches the earliest message sent
	 * (non-overtaking), so the tags come in send order: 0, 1, ... */
	for (p = 0; started && p < t->size - 1; p++) {
		int peer = (t->rank + 1 + p) % t->size;

		for (k = 0; k < WILDCARD_MESSAGES; k++)
			if (receive_wildcard(t, buf, capacity, peer, MPI_ANY_TAG, k,
					     "MPI_ANY_TAG receive") < 0)
				break;
	}
	outgoing_finish(t, &f, started);
	free(buf);
}

void test_any_source_any_tag(struct test_ctx *t)
{
	size_t capacity = 256 * KiB + GUARD_BYTES;
	unsigned char *buf = xmalloc(capacity);
	int *next_tag = xmalloc(sizeof(int) * (size_t)t->size);
	struct outgoing f;
	int started = fan_out_start(t, &f), j, src, total = (t->size - 1) * WILDCARD_MESSAGES;
	MPI_Status st;

	memset(next_tag, 0, sizeof(int) * (size_t)t->size);
	for (j = 0; started && j < total; j++) {
		memset(buf, GUARD_FILL, capacity);
		if (!MPI_OK(t, MPI_Recv(buf, (int)capacity, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
					t->comm, &st)))
			break;
		src = st.MPI_SOURCE;
		if (src < 0 || src >= t->size || src == t->rank) {
			test_fail(t, "MPI_SOURCE %d is not another rank of %d", src, t->size);
			break;
		}
		/* Per source, still the send order. */
		if (next_tag[src] >= WILDCARD_MESSAGES) {
			test_fail(t, "more than %d messages from rank %d", WILDCARD_MESSAGES, src);
			break;
		}
		check_status(t, &st, src, next_tag[src],
			     wildcard_size(src, next_tag[src], t->max_size), "wildcard receive");
		check_payload(t, buf, wildcard_size(src, next_tag[src], t->max_size), src,
			      next_tag[src], (uint64_t)next_tag[src]);
		next_tag[src]++;
	}
	for (src = 0; started && src < t->size; src++)
		if (src != t->rank && next_tag[src] != WILDCARD_MESSAGES)
			test_fail(t, "%d messages from rank %d, expected %d", next_tag[src], src,
				  WILDCARD_MESSAGES);
	outgoing_finish(t, &f, started);
	free(buf);
	free(next_tag);
}

/* ---- ring and all-to-all ---- */

/* One lap per size: rank 0 starts, every other rank forwards its own
 * pattern once it has checked its left neighbour's. */
static int ring_step(struct test_ctx *t, struct sweep_bufs *b, size_t k, int tag)
{
	int right = (t->rank + 1) % t->size, left = (t->rank + t->size - 1) % t->size;
	MPI_Status st;

	if ((t->rank == 0 && !send_k(t, b, k, right, tag)) || !recv_k(t, b, left, tag, &st))
		return 0;
	sweep_check(t, b, k, &st, left, tag, "ring receive");
	return t->rank == 0 || send_k(t, b, k, right, tag);
}

void test_ring(struct test_ctx *t)
{
	sweep_run(t, ring_step);
}

void test_alltoall(struct test_ctx *t)
{
	size_t sizes[SWEEP_CAPACITY], n = sweep_sizes(t, sizes, SWEEP_CAPACITY), k;
	/* 8 MiB keeps (ranks - 1) send and receive buffers per rank modest on
	 * an emulated cluster whose hosts share one machine's memory. */
	size_t largest = min_size(sizes[n - 1], 8 * MiB), slot = largest + GUARD_BYTES;
	int peers = t->size - 1, p;
	unsigned char *send_buf = xmalloc(largest * (size_t)peers);
	unsigned char *recv_buf = xmalloc(slot * (size_t)peers);
	MPI_Request *reqs = xmalloc(sizeof(*reqs) * 2 * (size_t)peers);
	MPI_Status *statuses = xmalloc(sizeof(*statuses) * 2 * (size_t)peers);

	for (k = 0; k < n && sizes[k] <= largest; k++) {
		int tag = (int)k + 1;

		memset(recv_buf, GUARD_FILL, slot * (size_t)peers);
		for (p = 0; p < peers; p++) {
			int peer = (t->rank + 1 + p) % t->size;

			if (!MPI_OK(t, MPI_Irecv(recv_buf + slot * (size_t)p, (int)slot, MPI_BYTE,
						 peer, tag, t->comm, &reqs[p])))
				goto out;
		}
		for (p = 0; p < peers; p++) {
			int peer = (t->rank + 1 + p) % t->size;
			unsigned char *buf = send_buf + largest * (size_t)p;

			/* The index is the destination: each peer gets its own
			 * bytes, so a message sent to the wrong rank shows. */
			payload_fill(buf, sizes[k], payload_seed(t->rank, tag, (uint64_t)peer));
			if (!MPI_OK(t, MPI_Isend(buf, (int)sizes[k], MPI_BYTE, peer, tag, t->comm,
						 &reqs[peers + p])))
				goto out;
		}
		if (!waitall_ok(t, 2 * peers, reqs, statuses))
			goto out;
		for (p = 0; p < peers; p++) {
			int peer = (t->rank + 1 + p) % t->size;
			unsigned char *buf = recv_buf + slot * (size_t)p;

			check_message(t, &statuses[p], buf, sizes[k], slot, peer, tag,
				      (uint64_t)t->rank, "all-to-all receive");
		}
	}
out:
	free(send_buf);
	free(recv_buf);
	free(reqs);
	free(statuses);
}
