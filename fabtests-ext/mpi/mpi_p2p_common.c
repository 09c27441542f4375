/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_p2p: payload patterns, failure recording and the checks every
 * sub-test uses, the driver that runs sub-tests and prints their
 * verdicts (shared with mpi_osc, mpi_coll and mpi_stress), and the option
 * parsing of every MPI program.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_p2p.h"

/* Failures beyond this many per rank and sub-test only count. */
#define PRINTED_FAILURES 5

/* splitmix64's finaliser: neighbouring inputs give unrelated outputs, so a
 * byte shifted by one position, or taken from another message, differs
 * from the expected one with probability 255/256. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t payload_seed(int src_rank, int tag, uint64_t index)
{
	uint64_t x = mix64((uint64_t)(uint32_t)src_rank + 0x9e3779b97f4a7c15ULL);

	x = mix64(x ^ (uint64_t)(uint32_t)tag);
	return mix64(x ^ index);
}

unsigned char payload_byte(uint64_t seed, size_t offset)
{
	return (unsigned char)(mix64(seed + offset / 8) >> (8 * (offset % 8)));
}

void payload_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	size_t word, i;

	/* One mix per 8 bytes keeps filling 64 MiB well under a second. */
	for (word = 0; word * 8 < len; word++) {
		uint64_t bits = mix64(seed + word);

		for (i = 0; i < 8 && word * 8 + i < len; i++)
			p[word * 8 + i] = (unsigned char)(bits >> (8 * i));
	}
}

size_t payload_mismatch(const void *buf, size_t len, uint64_t seed)
{
	const unsigned char *p = buf;
	size_t word, i;

	for (word = 0; word * 8 < len; word++) {
		uint64_t bits = mix64(seed + word);

		for (i = 0; i < 8 && word * 8 + i < len; i++)
			if (p[word * 8 + i] != (unsigned char)(bits >> (8 * i)))
				return word * 8 + i;
	}
	return len;
}

void test_fail(struct test_ctx *t, const char *fmt, ...)
{
	char text[sizeof(t->first_failure)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (t->failures == 0)
		memcpy(t->first_failure, text, sizeof(text));
	if (t->failures < PRINTED_FAILURES)
		fprintf(stderr, "mpi_p2p: rank %d: %s\n", t->rank, text);
	t->failures++;
}

int mpi_ok(struct test_ctx *t, int rc, const char *call)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0, class = rc;
	size_t name_len = strcspn(call, "(");

	if (rc == MPI_SUCCESS)
		return 1;
	MPI_Error_class(rc, &class);
	if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "error code %d", rc);
	test_fail(t, "%.*s returned error class %d: %s", (int)name_len, call, class, text);
	return 0;
}

int waitall_ok(struct test_ctx *t, int n, MPI_Request *reqs, MPI_Status *statuses)
{
	int rc = MPI_Waitall(n, reqs, statuses), i;

	if (rc == MPI_SUCCESS)
		return 1;
	for (i = 0; statuses != MPI_STATUSES_IGNORE && i < n; i++) {
		int code = statuses[i].MPI_ERROR;

		if (code != MPI_SUCCESS && code != MPI_ERR_PENDING) {
			char what[48];

			snprintf(what, sizeof(what), "MPI_Waitall: request %d of %d", i, n);
			return mpi_ok(t, code, what);
		}
	}
	return mpi_ok(t, rc, "MPI_Waitall");
}

int check_payload(struct test_ctx *t, const void *buf, size_t len,
		  int src_rank, int tag, uint64_t index)
{
	uint64_t seed = payload_seed(src_rank, tag, index);
	size_t bad = payload_mismatch(buf, len, seed);

	if (bad == len)
		return 1;
	test_fail(t, "payload from rank %d tag %d #%llu (%zu bytes): byte %zu is 0x%02x, expected 0x%02x",
		  src_rank, tag, (unsigned long long)index, len, bad,
		  ((const unsigned char *)buf)[bad], payload_byte(seed, bad));
	return 0;
}

int check_status(struct test_ctx *t, const MPI_Status *status, int src_rank,
		 int tag, size_t count, const char *what)
{
	int got_count = -1, ok = 1;

	if (status->MPI_SOURCE != src_rank) {
		test_fail(t, "%s: MPI_SOURCE is %d, expected %d", what, status->MPI_SOURCE, src_rank);
		ok = 0;
	}
	if (status->MPI_TAG != tag) {
		test_fail(t, "%s: MPI_TAG is %d, expected %d", what, status->MPI_TAG, tag);
		ok = 0;
	}
	if (!MPI_OK(t, MPI_Get_count(status, MPI_BYTE, &got_count)))
		return 0;
	if (got_count < 0 || (size_t)got_count != count) {
		test_fail(t, "%s: MPI_Get_count is %d bytes, expected %zu", what, got_count, count);
		ok = 0;
	}
	return ok;
}

int check_untouched(struct test_ctx *t, const unsigned char *buf, size_t from,
		    size_t to, unsigned char fill, const char *what)
{
	size_t i;

	for (i = from; i < to; i++) {
		if (buf[i] != fill) {
			test_fail(t, "%s: byte %zu was overwritten (0x%02x, was 0x%02x)",
				  what, i, buf[i], fill);
			return 0;
		}
	}
	return 1;
}

int check_message(struct test_ctx *t, const MPI_Status *status, const unsigned char *buf,
		  size_t len, size_t to, int src, int tag, uint64_t index, const char *what)
{
	/* Not short-circuited: every check that fails is recorded. */
	int ok = check_status(t, status, src, tag, len, what);

	ok &= check_payload(t, buf, len, src, tag, index);
	ok &= check_untouched(t, buf, len, to, GUARD_FILL, "bytes after the message");
	return ok;
}

void *xmalloc(size_t len)
{
	/* malloc(0) may return NULL; MPI needs no storage for 0 bytes, but a
	 * valid pointer keeps every caller's NULL check simple. */
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "mpi_p2p: out of memory allocating %zu bytes\n", len);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

int pair_peer(const struct test_ctx *t)
{
	int peer = t->rank ^ 1;

	return peer < t->size ? peer : -1;
}

size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

void outgoing_init(struct outgoing *o, int capacity)
{
	int i;

	o->reqs = xmalloc(sizeof(*o->reqs) * (size_t)capacity);
	o->bufs = xmalloc(sizeof(*o->bufs) * (size_t)capacity);
	for (i = 0; i < capacity; i++) {
		o->reqs[i] = MPI_REQUEST_NULL;
		o->bufs[i] = NULL;
	}
	o->count = capacity;
	o->started = 0;
}

int outgoing_send(struct test_ctx *t, struct outgoing *o, int dest, int tag,
		  size_t len, uint64_t index)
{
	unsigned char *buf = xmalloc(len);

	o->bufs[o->started] = buf;
	payload_fill(buf, len, payload_seed(t->rank, tag, index));
	return MPI_OK(t, MPI_Isend(buf, (int)len, MPI_BYTE, dest, tag, t->comm,
				   &o->reqs[o->started++]));
}

void outgoing_finish(struct test_ctx *t, struct outgoing *o, int wait)
{
	int i;

	if (wait)
		MPI_OK(t, MPI_Waitall(o->started, o->reqs, MPI_STATUSES_IGNORE));
	for (i = 0; i < o->count; i++)
		free(o->bufs[i]);
	free(o->bufs);
	free(o->reqs);
}

/* ---- option values ---- */

/* text past leading white space, or NULL when a sign follows: strtoull
 * and strtoul would take "-1" as their largest value. */
static const char *unsigned_text(const char *text)
{
	while (isspace((unsigned char)*text))
		text++;
	return *text == '-' || *text == '+' ? NULL : text;
}

int mpi_parse_size(const char *text, size_t max, size_t *out)
{
	char *end;
	unsigned long long value;
	unsigned shift = 0;

	text = unsigned_text(text);
	if (!text)
		return -1;
	errno = 0;
	value = strtoull(text, &end, 0);
	if (errno || end == text)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	/* Compared before the shift, so that no value can wrap around. */
	if (*end || value > (unsigned long long)(max >> shift))
		return -1;
	*out = (size_t)value << shift;
	return 0;
}

/* One of a comma-separated list: 1 to go on, 0 (after a message) to stop. */
typedef int list_item(void *arg, const char *item);

/* Each item of list in turn: 0 when all went on, -1 when one stopped. */
static int each_item(const char *prog, const char *list, list_item *item, void *arg)
{
	char *copy = strdup(list), *one, *save = NULL;
	int ret = 0;

	if (!copy) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	for (one = strtok_r(copy, ",", &save); one; one = strtok_r(NULL, ",", &save)) {
		if (!item(arg, one)) {
			ret = -1;
			break;
		}
	}
	free(copy);
	return ret;
}

struct size_list {
	const char *prog;
	size_t min, max, *sizes;
	int n, capacity;
};

static int size_item(void *arg, const char *item)
{
	struct size_list *l = arg;

	if (l->n == l->capacity || mpi_parse_size(item, l->max, &l->sizes[l->n]) ||
	    l->sizes[l->n] < l->min) {
		fprintf(stderr, "%s: -s: '%s' is not a size from %zu to %zu "
			"(or more than %d sizes)\n", l->prog, item, l->min, l->max, l->capacity);
		return 0;
	}
	l->n++;
	return 1;
}

int mpi_parse_size_list(const char *prog, const char *list, size_t min, size_t max,
			size_t *sizes, int capacity)
{
	struct size_list l = { .prog = prog, .min = min, .max = max, .sizes = sizes,
			       .capacity = capacity };

	return each_item(prog, list, size_item, &l) ? -1 : l.n;
}

int mpi_parse_uint(const char *text, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long value;

	text = unsigned_text(text);
	if (!text)
		return -1;
	errno = 0;
	value = strtoul(text, &end, 0);
	if (errno || end == text || *end || value > max)
		return -1;
	*out = value;
	return 0;
}

int mpi_parse_int(const char *text, int min, int max, int *out)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < min || value > max)
		return -1;
	*out = (int)value;
	return 0;
}

int mpi_option_help(int opt, void (*usage)(FILE *out))
{
	usage(opt == 'h' ? stdout : stderr);
	return opt == 'h' ? 1 : 2;
}

int mpi_no_operands(const char *prog, int argc, char **argv)
{
	if (optind == argc)
		return 0;
	fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
	return 2;
}

int mpi_parse_seconds(const char *prog, int opt, const char *text, unsigned long min,
		      unsigned *out)
{
	unsigned long value;

	if (mpi_parse_uint(text, 86400, &value) || value < min) {
		fprintf(stderr, "%s: -%c '%s': not a number of seconds\n", prog, opt, text);
		return -1;
	}
	*out = (unsigned)value;
	return 0;
}

struct name_list {
	const char *prog;
	int (*select)(void *arg, const char *name);
	void *arg;
};

static int name_item(void *arg, const char *name)
{
	struct name_list *l = arg;

	if (l->select(l->arg, name))
		return 1;
	fprintf(stderr, "%s: unknown sub-test '%s' (-l lists them)\n", l->prog, name);
	return 0;
}

int mpi_select_names(const char *prog, const char *list,
		     int (*select)(void *arg, const char *name), void *arg)
{
	struct name_list l = { .prog = prog, .select = select, .arg = arg };

	return each_item(prog, list, name_item, &l);
}

size_t sweep_sizes(const struct test_ctx *t, size_t *sizes, size_t capacity)
{
	/* Around the eager limits of mrail (16 KiB, 48 bytes of it header)
	 * and of the usual core providers, then up to rendezvous sizes. */
	static const size_t sweep[] = {
		0, 1, 8, 4 * KiB - 1, 16 * KiB - 40, 16 * KiB, 16 * KiB + 1,
		64 * KiB, 1 * MiB, 8 * MiB, 64 * MiB,
	};
	size_t i, n = 0;

	for (i = 0; i < sizeof(sweep) / sizeof(sweep[0]) && n < capacity; i++)
		if (sweep[i] <= t->max_size)
			sizes[n++] = sweep[i];
	/* A -M between two sweep sizes is itself tested. */
	if (n < capacity && (n == 0 || sizes[n - 1] != t->max_size))
		sizes[n++] = t->max_size;
	return n;
}

/* ---- the driver ---- */

/* The watchdog's message, written by the SIGALRM handler with write(2):
 * formatted before each sub-test because a handler may not call printf. */
static char watchdog_line[256];

static void watchdog_fired(int sig)
{
	ssize_t ignored = write(STDOUT_FILENO, watchdog_line, strlen(watchdog_line));

	(void)ignored;
	(void)sig;
	/* Leaving without MPI_Finalize makes mpirun end the other ranks. */
	_exit(3);
}

int suite_init(int *argc, char ***argv, int *rank, int *size)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	if (*size < 2) {
		if (*rank == 0)
			printf("FAIL: setup: needs at least 2 ranks, got %d\n", *size);
		MPI_Finalize();
		return 0;
	}
	signal(SIGALRM, watchdog_fired);
	return 1;
}

void sub_test_begin(struct test_ctx *t, const char *name, unsigned timeout)
{
	MPI_Comm_dup(MPI_COMM_WORLD, &t->comm);
	MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
	snprintf(watchdog_line, sizeof(watchdog_line),
		 "FAIL: %s: rank %d: no end after %u s (hung?)\n", name, t->rank, timeout);
	alarm(timeout);
}

int sub_test_end(struct test_ctx *t, const char *name, double seconds)
{
	int failed_here, failed_ranks = 0, reporter, candidate;
	char reason[sizeof(t->first_failure)];

	alarm(0);
	/* Every rank learns the verdict; the lowest failing rank's first
	 * failure becomes the reason rank 0 prints. */
	failed_here = t->failures > 0;
	MPI_Allreduce(&failed_here, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	candidate = failed_here ? t->rank : t->size;
	MPI_Allreduce(&candidate, &reporter, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (failed_ranks && reporter != 0) {
		if (t->rank == reporter)
			MPI_Send(t->first_failure, sizeof(reason), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
		else if (t->rank == 0)
			MPI_Recv(reason, sizeof(reason), MPI_CHAR, reporter, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
	} else if (failed_ranks) {
		memcpy(reason, t->first_failure, sizeof(reason));
	}
	if (t->rank == 0) {
		if (failed_ranks)
			printf("FAIL: %s: rank %d: %s%s\n", name, reporter, reason,
			       failed_ranks > 1 ? " (and more ranks failed)" : "");
		else
			printf("PASS: %s\n", name);
		/* Rank 0's time, for choosing -T; indented, so that it is no
		 * verdict line. */
		printf("    %s took %.2f s\n", name, seconds);
		fflush(stdout);
	}
	MPI_Comm_free(&t->comm);
	return !failed_ranks;
}

int suite_main(const struct suite *s, int *argc, char ***argv)
{
	int rank, size, passed = 0, failed = 0;
	char buf[128];
	size_t i;

	if (!suite_init(argc, argv, &rank, &size))
		return 1;
	/* Errors become FAIL lines; split communicators inherit it. */
	if (s->world_returns_errors)
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (i = 0; i < s->count; i++) {
		struct test_ctx t = { .rank = rank, .size = size, .max_size = s->max_size };
		const char *name;
		double started;

		if (!s->selected[i])
			continue;
		name = s->name(s->arg, i, buf, sizeof(buf));
		sub_test_begin(&t, name, s->timeout);
		started = MPI_Wtime();
		s->run(s->arg, i, &t);
		if (sub_test_end(&t, name, MPI_Wtime() - started))
			passed++;
		else
			failed++;
	}
	if (rank == 0)
		printf("%s: %d passed, %d failed on %d ranks (%s %zu)\n",
		       s->prog, passed, failed, size, s->limit, s->max_size);
	MPI_Finalize();
	return failed ? 1 : 0;
}
