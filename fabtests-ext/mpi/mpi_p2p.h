/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_p2p: shared declarations of the MPI point-to-point correctness suite.
 *
 * Every sub-test runs on all ranks with a private duplicate of
 * MPI_COMM_WORLD whose error handler is MPI_ERRORS_RETURN, so an MPI error
 * becomes a FAIL line instead of an abort, and messages a failed test leaves
 * behind cannot match in the next one.
 */
#ifndef MPI_P2P_H
#define MPI_P2P_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#define KiB ((size_t)1024)
#define MiB (1024 * KiB)

/* Receive buffers get this many spare bytes after the expected message,
 * preset to GUARD_FILL, so that a write past the message is seen. */
#define GUARD_BYTES 64
#define GUARD_FILL 0xa5

/* What one rank knows and records while it runs one sub-test. */
struct test_ctx {
	MPI_Comm comm;
	int rank, size;
	size_t max_size;       /* largest message any sub-test sends (-M) */
	int window;            /* requests in flight per peer (-w) */
	int storm_count;       /* small messages of an unexpected storm (-u) */
	int failures;          /* failed checks on this rank */
	char first_failure[512];
};

/* ---- payloads: every byte derived from sender rank, tag, index, offset ---- */

uint64_t payload_seed(int src_rank, int tag, uint64_t index);
void payload_fill(void *buf, size_t len, uint64_t seed);
/* Offset of the first byte that differs from the pattern, or len. */
size_t payload_mismatch(const void *buf, size_t len, uint64_t seed);
unsigned char payload_byte(uint64_t seed, size_t offset);

/* ---- recording failures ---- */

void test_fail(struct test_ctx *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True on MPI_SUCCESS; otherwise records the call and MPI's error text. */
int mpi_ok(struct test_ctx *t, int rc, const char *call);
#define MPI_OK(t, call) mpi_ok((t), (call), #call)

/* MPI_Waitall; on MPI_ERR_IN_STATUS the failure names the first request
 * whose status holds an error. */
int waitall_ok(struct test_ctx *t, int n, MPI_Request *reqs, MPI_Status *statuses);

/* ---- checks; each returns 1 when everything matched ---- */

int check_payload(struct test_ctx *t, const void *buf, size_t len,
		  int src_rank, int tag, uint64_t index);
/* MPI_SOURCE, MPI_TAG and MPI_Get_count (bytes) against what was sent. */
int check_status(struct test_ctx *t, const MPI_Status *status, int src_rank,
		 int tag, size_t count, const char *what);
/* Bytes [from, to) of buf all equal to fill: nothing wrote past a buffer. */
int check_untouched(struct test_ctx *t, const unsigned char *buf, size_t from,
		    size_t to, unsigned char fill, const char *what);

/* ---- helpers ---- */

void *xmalloc(size_t len);
/* The partner in pairs (0,1), (2,3) ...; -1 for the last rank of an odd size. */
int pair_peer(const struct test_ctx *t);
/* Sizes of the size sweep up to max_size (0, 1, 8, 4 KiB-1 ... 64 MiB). */
size_t sweep_sizes(const struct test_ctx *t, size_t *sizes, size_t capacity);
#define SWEEP_CAPACITY 16
/* Smallest of a and b. */
size_t min_size(size_t a, size_t b);

/* ---- option values (every MPI program) ---- */

/* A byte count: a number (decimal, 0x hex or 0 octal) with an optional
 * k/K, m/M or g/G suffix (KiB, MiB, GiB). 0 with *out set; -1 for a sign,
 * trailing characters or a value over max. */
int mpi_parse_size(const char *text, size_t max, size_t *out);
/* A comma-separated list of such sizes, each from min to max, into at most
 * capacity entries of sizes: how many, or -1 after a message naming prog. */
int mpi_parse_size_list(const char *prog, const char *list, size_t min, size_t max,
			size_t *sizes, int capacity);
/* An unsigned number from 0 to max (decimal, 0x hex or 0 octal); 0 or -1. */
int mpi_parse_uint(const char *text, unsigned long max, unsigned long *out);
/* A decimal int from min to max; 0 or -1. */
int mpi_parse_int(const char *text, int min, int max, int *out);

/* ---- the driver (mpi_p2p and mpi_osc) ---- */

/* MPI_Init, and the watchdog's handler; 0 (after a FAIL line and
 * MPI_Finalize) when there are fewer than 2 ranks. */
int suite_init(int *argc, char ***argv, int *rank, int *size);
/* Before a sub-test: t->comm, a duplicate of MPI_COMM_WORLD that returns
 * errors, and a watchdog that ends the rank after timeout seconds. */
void sub_test_begin(struct test_ctx *t, const char *name, unsigned timeout);
/* After it: the verdict of all ranks, printed by rank 0 with the first
 * failure of the lowest failing rank; frees t->comm. 1 when it passed. */
int sub_test_end(struct test_ctx *t, const char *name, double seconds);

/* ---- the sub-tests (mpi_p2p_basic.c, mpi_p2p_matching.c) ---- */

void test_blocking(struct test_ctx *t);
void test_sendrecv(struct test_ctx *t);
void test_waitall(struct test_ctx *t);
void test_testany(struct test_ctx *t);
void test_waitsome(struct test_ctx *t);
void test_any_source(struct test_ctx *t);
void test_any_tag(struct test_ctx *t);
void test_any_source_any_tag(struct test_ctx *t);
void test_ring(struct test_ctx *t);
void test_alltoall(struct test_ctx *t);

void test_probe(struct test_ctx *t);
void test_iprobe(struct test_ctx *t);
void test_mprobe(struct test_ctx *t);
void test_improbe(struct test_ctx *t);
void test_unexpected(struct test_ctx *t);
void test_unexpected_fan_in(struct test_ctx *t);
void test_ordering(struct test_ctx *t);
void test_truncate(struct test_ctx *t);
void test_cancel(struct test_ctx *t);

#endif
