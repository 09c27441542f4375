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
#include <stdio.h>

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
	int variant;           /* which form a sub-test of several forms runs */
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
/* A received message, all three checks: its status (what), len bytes of
 * payload from src with tag and index, and bytes [len, to) still GUARD_FILL. */
int check_message(struct test_ctx *t, const MPI_Status *status, const unsigned char *buf,
		  size_t len, size_t to, int src, int tag, uint64_t index, const char *what);

/* ---- helpers ---- */

void *xmalloc(size_t len);
/* The partner in pairs (0,1), (2,3) ...; -1 for the last rank of an odd size. */
int pair_peer(const struct test_ctx *t);
/* Sizes of the size sweep up to max_size (0, 1, 8, 4 KiB-1 ... 64 MiB). */
size_t sweep_sizes(const struct test_ctx *t, size_t *sizes, size_t capacity);
#define SWEEP_CAPACITY 16
/* Smallest of a and b. */
size_t min_size(size_t a, size_t b);

/* Sends in flight, each from a buffer of its own that lives until they
 * complete. */
struct outgoing {
	MPI_Request *reqs;
	unsigned char **bufs;
	int count, started;
};

/* Room for capacity sends. */
void outgoing_init(struct outgoing *o, int capacity);
/* Starts the next: len bytes of this rank's pattern for tag and index. */
int outgoing_send(struct test_ctx *t, struct outgoing *o, int dest, int tag,
		  size_t len, uint64_t index);
/* Waits for the started sends when wait is set (not after a failed
 * start), then frees them. */
void outgoing_finish(struct test_ctx *t, struct outgoing *o, int wait);

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

/* ---- option parsing (every MPI program) ---- */

/* getopt's -h and unknown options: usage on stdout and 1 (exit 0), or on
 * stderr and 2 (usage error). */
int mpi_option_help(int opt, void (*usage)(FILE *out));
/* No program takes operands: 0, or 2 after naming the first. */
int mpi_no_operands(const char *prog, int argc, char **argv);
/* -OPT's number of seconds, from min to a day: 0, or -1 after a message. */
int mpi_parse_seconds(const char *prog, int opt, const char *text, unsigned long min,
		      unsigned *out);
/* -t's comma-separated names: select(arg, NAME) marks the sub-tests NAME
 * names and returns how many. 0, or -1 after naming one that names none. */
int mpi_select_names(const char *prog, const char *list,
		     int (*select)(void *arg, const char *name), void *arg);

/* ---- the driver (mpi_p2p, mpi_osc, mpi_coll) ---- */

/* What tells the suites apart; suite_main runs the rest. */
struct suite {
	const char *prog;	/* names the summary line */
	size_t count;		/* sub-tests */
	const int *selected;	/* count flags: which of them run */
	/* Sub-test i's name: buf (len bytes) filled, or a name of its own. */
	const char *(*name)(const void *arg, size_t i, char *buf, size_t len);
	/* Runs sub-test i; t has its comm, rank, size and max_size. */
	void (*run)(const void *arg, size_t i, struct test_ctx *t);
	const void *arg;	/* the program's options */
	unsigned timeout;	/* the watchdog, per sub-test */
	const char *limit;	/* what max_size is, in the summary line */
	size_t max_size;
	int world_returns_errors; /* MPI_COMM_WORLD (and its splits) too */
};

/* After option parsing, the whole run: MPI_Init, each selected sub-test
 * and its verdict line, the summary line, MPI_Finalize; the exit status. */
int suite_main(const struct suite *s, int *argc, char ***argv);

/* ---- the driver of one sub-test (also mpi_stress) ---- */

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

/* The variants of test_window and test_probes: how requests complete,
 * how messages are probed. */
enum completion_style { BY_WAITALL, BY_TESTANY, BY_WAITSOME };
enum probe_style { BY_PROBE, BY_IPROBE, BY_MPROBE, BY_IMPROBE };

void test_blocking(struct test_ctx *t);
void test_sendrecv(struct test_ctx *t);
void test_window(struct test_ctx *t);
void test_any_source(struct test_ctx *t);
void test_any_tag(struct test_ctx *t);
void test_any_source_any_tag(struct test_ctx *t);
void test_ring(struct test_ctx *t);
void test_alltoall(struct test_ctx *t);

void test_probes(struct test_ctx *t);
void test_unexpected(struct test_ctx *t);
void test_unexpected_fan_in(struct test_ctx *t);
void test_ordering(struct test_ctx *t);
void test_truncate(struct test_ctx *t);
void test_cancel(struct test_ctx *t);

#endif
