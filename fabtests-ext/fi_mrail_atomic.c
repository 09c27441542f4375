/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_atomic: functional test of FI_ATOMIC between processes.
 *
 *   server:  fi_mrail_atomic [-a] [-u] [-p PROV] [-E PORT] [-C N -k K]
 *   client:  fi_mrail_atomic [-a] [-p PROV] [-E PORT] [-C N] SERVER
 *
 * -u: the target never inserts its initiators into its AV.
 *
 * The server is the target: a window region (key 1, remote read and
 * write), a read-only (key 2) and a write-only (key 3) region, and
 * FI_REMOTE_WRITE and FI_REMOTE_READ counters. Over a TCP control
 * connection the client sets the window's bytes and reads them back with
 * the target's counters.
 *
 * The client runs every op on every datatype that fi_atomicvalid,
 * fi_fetch_atomicvalid and fi_compare_atomicvalid accept, with 1 and 5
 * elements, through each call of its family in turn (fi_atomic,
 * fi_atomicv, fi_atomicmsg, fi_inject_atomic; the fetch and compare
 * ones), and checks byte for byte the target's window and the fetched
 * values against a local computation with mrail's own mrail_atomic_apply;
 * a table of hand-computed cases checks that reference too. Then a
 * count at the documented limit, one over it (-FI_EMSGSIZE), refused
 * atomics (past the end, unknown key, region without the access: an error
 * completion, nothing changed at the target), the valid calls and
 * fi_query_atomic against the documented tables, and atomics through a
 * second AV entry for the target. Completions and counters
 * (FI_WRITE, FI_READ at the initiator, FI_REMOTE_WRITE, FI_REMOTE_READ at
 * the target) are checked exactly.
 *
 * With -C N the run is the contention test instead: the server (-k K
 * clients) holds one 64-bit word; each client does N fetch-and-add(1)
 * (FI_SUM, FI_UINT64) one after the other and checks that its fetched
 * values strictly increase; the server checks the word ends at K * N and
 * its FI_REMOTE_READ counter too.
 *
 * Prints "N of N checks passed" or the failed checks; exits 0 only if all
 * passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/mrail_check.h"
#include "common/mrail_ctl.h"
#include "common/mrail_setup.h"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "atomic.h"

#define PROG "fi_mrail_atomic"
#define KEY_RW 1
#define KEY_RO 2
#define KEY_WO 3
#define KEY_NONE 0x999
#define REGION 65536
#define WAIT_S 120
#define MAX_CLIENTS 4
/* fi_mrail(7): an atomic's request and response each fit one rail
 * message of 16336 bytes of payload behind a 32-byte descriptor. */
#define EAGER_PAYLOAD 16336
#define ATOMIC_DESC 32


/* ---- control connections ---- */

enum cmd_type { CMD_SET = 1, CMD_GET, CMD_DONE };

struct cmd {
	uint32_t type;
	uint32_t len;		/* SET: bytes that follow; GET: bytes wanted */
	uint64_t expect_rwrite, expect_rread;	/* GET: wait for these */
};

struct reply {
	int32_t failures;
	uint32_t pad;
	uint64_t rwrite, rread, rwrite_err, rread_err;
};

static int socks[MAX_CLIENTS];
static int nsocks;

/* ---- libfabric objects ---- */

/* One CQ takes both directions. */
static struct mrail_setup fab;
static struct fid_cntr *write_cntr, *read_cntr, *rwrite_cntr, *rread_cntr;
static fi_addr_t peers[MAX_CLIENTS];

static void open_objects(const char *prov, bool auto_progress)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA, .size = 256,
				      .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *info;

	info = ctl_getinfo(prov, FI_MSG | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
			   FI_REMOTE_WRITE | FI_RMA_EVENT, 0, auto_progress);
	check(info->caps & FI_ATOMIC, "the offer lacks FI_ATOMIC");
	setup_open(&fab, info, &cq_attr, 0);
	write_cntr = setup_cntr(&fab, FI_WRITE, FI_WAIT_UNSPEC);
	read_cntr = setup_cntr(&fab, FI_READ, FI_WAIT_UNSPEC);
	rwrite_cntr = setup_cntr(&fab, FI_REMOTE_WRITE, FI_WAIT_UNSPEC);
	rread_cntr = setup_cntr(&fab, FI_REMOTE_READ, FI_WAIT_UNSPEC);
	setup_enable(&fab);
}

/* Every control connection's peer into the AV, in order; with -u the
 * target inserts none of its initiators (SHMEM runtimes' targets do not),
 * and every atomic must be served all the same. */
static void swap_addresses(bool insert)
{
	int i;

	for (i = 0; i < nsocks; i++) {
		if (insert) {
			peers[i] = ctl_swap_names(socks[i], fab.ep, fab.av);
		} else {
			ctl_give_name(socks[i], fab.ep);
			peers[i] = FI_ADDR_NOTAVAIL;
		}
	}
}

static void progress(void)
{
	(void) fi_cntr_read(write_cntr);
}

static double elapsed_s(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double) (now.tv_sec - start->tv_sec) +
	       (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

/* ---- server (target) ---- */

static uint8_t *region, ro[REGION], wo[REGION];

static void server_get(int sock, const struct cmd *c)
{
	struct reply r = { 0 };
	struct timespec start;

	/* The target counts before it answers; the client has its answer. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((fi_cntr_read(rwrite_cntr) < c->expect_rwrite ||
		fi_cntr_read(rread_cntr) < c->expect_rread) &&
	       elapsed_s(&start) < WAIT_S)
		progress();
	r.failures = check_failures;
	r.rwrite = fi_cntr_read(rwrite_cntr);
	r.rread = fi_cntr_read(rread_cntr);
	r.rwrite_err = fi_cntr_readerr(rwrite_cntr);
	r.rread_err = fi_cntr_readerr(rread_cntr);
	ctl_write(sock, &r, sizeof(r));
	ctl_write(sock, region, c->len);
}

static void server_contention(uint64_t n)
{
	uint64_t word, want = n * (uint64_t) nsocks;
	struct timespec start;
	int32_t go = 0;
	int i;

	for (i = 0; i < nsocks; i++)
		ctl_write(socks[i], &go, sizeof(go));
	for (i = 0; i < nsocks; i++)
		ctl_read(socks[i], &go, sizeof(go), progress);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (fi_cntr_read(rread_cntr) < want && elapsed_s(&start) < WAIT_S)
		progress();
	memcpy(&word, region, sizeof(word));
	check(word == want, "target: the word is %" PRIu64 " after %d clients "
	      "added 1 %" PRIu64 " times each, expected %" PRIu64, word,
	      nsocks, n, want);
	check(fi_cntr_read(rread_cntr) == want && !fi_cntr_readerr(rread_cntr),
	      "target: FI_REMOTE_READ counter %" PRIu64 " (errors %" PRIu64
	      "), expected %" PRIu64, fi_cntr_read(rread_cntr),
	      fi_cntr_readerr(rread_cntr), want);
	check(fi_cntr_read(rwrite_cntr) == 0, "target: FI_REMOTE_WRITE counter "
	      "%" PRIu64 ", expected 0 (fetch atomics count as remote reads)",
	      fi_cntr_read(rwrite_cntr));
	printf(PROG ": %d clients, %" PRIu64 " fetch-and-adds, final value %"
	       PRIu64 "\n", nsocks, want, word);
}

static void run_server(uint64_t contention)
{
	struct fid_mr *mr_rw, *mr_ro, *mr_wo;
	struct cmd c;
	int32_t status = 0;
	size_t i;
	int ret;

	region = calloc(1, REGION);
	if (!region)
		ctl_die("calloc", FI_ENOMEM);
	for (i = 0; i < REGION; i++) {
		ro[i] = (uint8_t) (i * 3 + 1);
		wo[i] = (uint8_t) (i * 5 + 2);
	}
	if ((ret = fi_mr_reg(fab.domain, region, REGION,
			     FI_REMOTE_READ | FI_REMOTE_WRITE, 0, KEY_RW, 0,
			     &mr_rw, NULL)) ||
	    (ret = fi_mr_reg(fab.domain, ro, REGION, FI_REMOTE_READ, 0, KEY_RO, 0,
			     &mr_ro, NULL)) ||
	    (ret = fi_mr_reg(fab.domain, wo, REGION, FI_REMOTE_WRITE, 0, KEY_WO, 0,
			     &mr_wo, NULL)))
		ctl_die("fi_mr_reg", ret);

	if (contention) {
		server_contention(contention);
	} else {
		ctl_write(socks[0], &status, sizeof(status));
		for (;;) {
			ctl_read(socks[0], &c, sizeof(c), progress);
			if (c.type == CMD_DONE)
				break;
			if (c.len > REGION)
				ctl_die("control command too long", EINVAL);
			if (c.type == CMD_SET) {
				ctl_read(socks[0], region, c.len, progress);
				ctl_write(socks[0], &status, sizeof(status));
			} else {
				server_get(socks[0], &c);
			}
		}
	}
	for (i = 0; i < REGION; i++) {
		if (ro[i] != (uint8_t) (i * 3 + 1) || wo[i] != (uint8_t) (i * 5 + 2))
			break;
	}
	check(i == REGION, "target: the read-only or write-only region changed "
	      "at byte %zu", i);
	fi_close(&mr_rw->fid);
	fi_close(&mr_ro->fid);
	fi_close(&mr_wo->fid);
	free(region);
}

/* ---- client (initiator): element values ---- */

/* A value of the datatype at p: ints from v, floats v, complex v + v/2 i.
 * Long doubles are stored whole, padding zeroed, as compare_elems skips it. */
static void put_value(enum fi_datatype dt, void *p, long long v)
{
	switch (dt) {
#define PUT(T) do { T x = (T) v; memcpy(p, &x, sizeof(x)); } while (0)
	case FI_INT8: PUT(int8_t); break;
	case FI_UINT8: PUT(uint8_t); break;
	case FI_INT16: PUT(int16_t); break;
	case FI_UINT16: PUT(uint16_t); break;
	case FI_INT32: PUT(int32_t); break;
	case FI_UINT32: PUT(uint32_t); break;
	case FI_INT64: PUT(int64_t); break;
	case FI_UINT64: PUT(uint64_t); break;
	case FI_FLOAT: PUT(float); break;
	case FI_DOUBLE: PUT(double); break;
	case FI_FLOAT_COMPLEX: { float _Complex x = (float) v + (float) v / 2 * 1.0fi;
		memcpy(p, &x, sizeof(x)); break; }
	case FI_DOUBLE_COMPLEX: { double _Complex x = (double) v + (double) v / 2 * 1.0i;
		memcpy(p, &x, sizeof(x)); break; }
	case FI_LONG_DOUBLE: { long double x = (long double) v;
		memset(p, 0, sizeof(x)); memcpy(p, &x, 10); break; }
	case FI_LONG_DOUBLE_COMPLEX: { long double x[2] = { (long double) v,
		(long double) v / 2 };
		memset(p, 0, sizeof(x)); memcpy(p, &x[0], 10);
		memcpy((uint8_t *) p + sizeof(long double), &x[1], 10); break; }
#ifdef __SIZEOF_INT128__
	case FI_INT128: PUT(__int128); break;
	case FI_UINT128: PUT(unsigned __int128); break;
#endif
	default: break;
#undef PUT
	}
}

/* Whether byte i of an element of dt is part of its value: x86's long
 * double is 10 bytes in 16, the rest is padding nobody defines. */
static bool value_byte(enum fi_datatype dt, size_t size, size_t i)
{
	if ((dt == FI_LONG_DOUBLE || dt == FI_LONG_DOUBLE_COMPLEX) &&
	    sizeof(long double) == 16)
		return i % 16 < 10;
	(void) size;
	return true;
}

/* The first byte where a and b differ in value, or len. */
static size_t compare_elems(enum fi_datatype dt, size_t size, const uint8_t *a,
			    const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (value_byte(dt, size, i % size) && a[i] != b[i])
			return i;
	}
	return len;
}

/* ---- client: posting ---- */

static uint64_t writes_done, reads_done, write_errs, read_errs;
static uint64_t remote_writes, remote_reads, atomics_run;
static struct fi_context ctx;

static const char *kind_names[] = { "atomic", "fetch atomic", "compare atomic" };

/* The call variant used for atomic number seq of a kind. */
enum variant { V_PLAIN, V_VEC, V_MSG, V_INJECT };

static const char *variant_name(enum mrail_atomic_kind kind, enum variant v)
{
	static const char *names[3][4] = {
		{ "fi_atomic", "fi_atomicv", "fi_atomicmsg", "fi_inject_atomic" },
		{ "fi_fetch_atomic", "fi_fetch_atomicv", "fi_fetch_atomicmsg", "" },
		{ "fi_compare_atomic", "fi_compare_atomicv", "fi_compare_atomicmsg", "" },
	};
	return names[kind][v];
}

/* Two pieces of count elements at buf (one when count is 1). */
static size_t split2(void *buf, size_t count, size_t size, struct fi_ioc ioc[2])
{
	ioc[0] = (struct fi_ioc) { buf, count / 2 ? count / 2 : count };
	if (count < 2)
		return 1;
	ioc[1] = (struct fi_ioc) { (uint8_t *) buf + (count / 2) * size,
				   count - count / 2 };
	return 2;
}

static ssize_t post(enum mrail_atomic_kind kind, enum variant v,
		    enum fi_op op, enum fi_datatype dt, void *operand,
		    void *compare, void *result, size_t count, size_t size,
		    uint64_t addr, uint64_t key)
{
	struct fi_ioc oio[2], cio[2], rio[2];
	struct fi_rma_ioc rma = { .addr = addr, .count = count, .key = key };
	struct fi_msg_atomic msg = {
		.addr = peers[0], .rma_iov = &rma, .rma_iov_count = 1,
		.datatype = dt, .op = op, .context = &ctx,
	};
	size_t no = split2(operand, count, size, oio);
	size_t nc = split2(compare, count, size, cio);
	size_t nr = split2(result, count, size, rio);

	msg.msg_iov = oio;
	msg.iov_count = no;
	switch (kind * 4 + v) {
	case MRAIL_ATOMIC_PLAIN * 4 + V_PLAIN:
		return fi_atomic(fab.ep, operand, count, NULL, peers[0], addr, key,
				 dt, op, &ctx);
	case MRAIL_ATOMIC_PLAIN * 4 + V_VEC:
		return fi_atomicv(fab.ep, oio, NULL, no, peers[0], addr, key, dt,
				  op, &ctx);
	case MRAIL_ATOMIC_PLAIN * 4 + V_MSG:
		return fi_atomicmsg(fab.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
	case MRAIL_ATOMIC_PLAIN * 4 + V_INJECT:
		return fi_inject_atomic(fab.ep, operand, count, peers[0], addr, key,
					dt, op);
	case MRAIL_ATOMIC_FETCH * 4 + V_PLAIN:
		return fi_fetch_atomic(fab.ep, operand, count, NULL, result, NULL,
				       peers[0], addr, key, dt, op, &ctx);
	case MRAIL_ATOMIC_FETCH * 4 + V_VEC:
		return fi_fetch_atomicv(fab.ep, oio, NULL, no, rio, NULL, nr,
					peers[0], addr, key, dt, op, &ctx);
	case MRAIL_ATOMIC_FETCH * 4 + V_MSG:
		return fi_fetch_atomicmsg(fab.ep, &msg, rio, NULL, nr,
					  FI_COMPLETION | FI_INJECT);
	case MRAIL_ATOMIC_COMPARE * 4 + V_PLAIN:
		return fi_compare_atomic(fab.ep, operand, count, NULL, compare, NULL,
					 result, NULL, peers[0], addr, key, dt,
					 op, &ctx);
	case MRAIL_ATOMIC_COMPARE * 4 + V_VEC:
		return fi_compare_atomicv(fab.ep, oio, NULL, no, cio, NULL, nc, rio,
					  NULL, nr, peers[0], addr, key, dt, op,
					  &ctx);
	case MRAIL_ATOMIC_COMPARE * 4 + V_MSG:
		return fi_compare_atomicmsg(fab.ep, &msg, cio, NULL, nc, rio, NULL,
					    nr, FI_COMPLETION);
	default:
		return -FI_EINVAL;
	}
}

/* One completion on the transmit CQ: 0 (context and flags checked) or the
 * error of an error completion. */
static int wait_completion(const char *what, uint64_t flags)
{
	struct fi_cq_data_entry entry;
	struct fi_cq_err_entry err;
	struct timespec start;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		n = fi_cq_sread(fab.cq, &entry, 1, NULL, 100);
		if (n == 1) {
			check(entry.op_context == &ctx && entry.flags == flags,
			      "%s: completion context %p flags %#" PRIx64
			      ", expected %p %#" PRIx64, what, entry.op_context,
			      (uint64_t) entry.flags, (void *) &ctx, flags);
			return 0;
		}
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(fab.cq, &err, 0);
			check(err.op_context == &ctx, "%s: error completion for "
			      "context %p, expected %p", what, err.op_context,
			      (void *) &ctx);
			return err.err;
		}
		if (elapsed_s(&start) > WAIT_S) {
			check(false, "%s: no completion after %d s", what, WAIT_S);
			return FI_ETIMEDOUT;
		}
	}
}

/* The counter's success count reaching value (errors are counted apart,
 * fi_cntr(3)); a failed check if it does not within WAIT_S. */
static void wait_cntr(const char *what, struct fid_cntr *cntr, uint64_t value)
{
	int ret = fi_cntr_wait(cntr, value, WAIT_S * 1000);

	check(!ret, "%s: fi_cntr_wait for %" PRIu64 ": %s (count %" PRIu64
	      ", errors %" PRIu64 ")", what, value, fi_strerror(-ret),
	      fi_cntr_read(cntr), fi_cntr_readerr(cntr));
}

static void set_window(const uint8_t *bytes, size_t len)
{
	struct cmd c = { .type = CMD_SET, .len = (uint32_t) len };
	int32_t status;

	ctl_write(socks[0], &c, sizeof(c));
	ctl_write(socks[0], bytes, len);
	ctl_read(socks[0], &status, sizeof(status), progress);
}

/* The target's window and counters; checks the counters. */
static void get_window(const char *what, uint8_t *bytes, size_t len)
{
	struct cmd c = { .type = CMD_GET, .len = (uint32_t) len,
			 .expect_rwrite = remote_writes,
			 .expect_rread = remote_reads };
	struct reply r;

	ctl_write(socks[0], &c, sizeof(c));
	ctl_read(socks[0], &r, sizeof(r), progress);
	ctl_read(socks[0], bytes, len, progress);
	check(r.failures == 0, "%s: the target reports %d failed checks", what,
	      r.failures);
	check(r.rwrite == remote_writes && r.rread == remote_reads &&
	      !r.rwrite_err && !r.rread_err,
	      "%s: target counters FI_REMOTE_WRITE %" PRIu64 " FI_REMOTE_READ %"
	      PRIu64 " (errors %" PRIu64 ", %" PRIu64 "), expected %" PRIu64
	      " and %" PRIu64, what, r.rwrite, r.rread, r.rwrite_err,
	      r.rread_err, remote_writes, remote_reads);
}

static void check_counters(const char *what)
{
	check_counter(what, "FI_WRITE", write_cntr, writes_done, write_errs);
	check_counter(what, "FI_READ", read_cntr, reads_done, read_errs);
	check_no_completion(what, fab.cq);
}

/*
 * One atomic on the window at offset addr: window holds the target's
 * elements before, expect_target and expect_result what they and the
 * fetched values must be after (result NULL for a plain atomic). Returns
 * whether it completed and matched.
 */
static void run_one(const char *what, enum mrail_atomic_kind kind,
		    enum variant v, enum fi_op op, enum fi_datatype dt,
		    size_t size, size_t count, const uint8_t *window,
		    size_t win_len, uint64_t addr, void *operand, void *compare,
		    const uint8_t *expect_window, const uint8_t *expect_result)
{
	uint8_t *result = calloc(count + 1, size);
	uint8_t *after = malloc(win_len);
	uint64_t flags = FI_ATOMIC | (kind == MRAIL_ATOMIC_PLAIN ? FI_WRITE : FI_READ);
	ssize_t ret;
	size_t at;
	int err;

	if (!result || !after)
		ctl_die("malloc", FI_ENOMEM);
	memset(result, 0xa5, (count + 1) * size);
	set_window(window, win_len);
	while ((ret = post(kind, v, op, dt, operand, compare, result, count,
			   size, addr, KEY_RW)) == -FI_EAGAIN)
		progress();
	check(!ret, "%s: post returned %s", what, fi_strerror((int) -ret));
	if (ret)
		goto out;
	atomics_run++;
	if (v == V_INJECT) {
		/* Scribbling on the operand changes nothing now. */
		memset(operand, 0x5a, count * size);
		wait_cntr(what, write_cntr, writes_done + 1);
		writes_done++;
	} else {
		err = wait_completion(what, flags);
		check(!err, "%s: error completion %s", what, fi_strerror(err));
		if (kind == MRAIL_ATOMIC_PLAIN)
			writes_done++;
		else
			reads_done++;
	}
	if (kind == MRAIL_ATOMIC_PLAIN)
		remote_writes++;
	else
		remote_reads++;
	check_counters(what);
	get_window(what, after, win_len);
	at = compare_elems(dt, size, after, expect_window, win_len);
	check(at == win_len, "%s: target byte %zu is %#x, expected %#x", what,
	      at, at < win_len ? after[at] : 0,
	      at < win_len ? expect_window[at] : 0);
	if (kind != MRAIL_ATOMIC_PLAIN) {
		at = compare_elems(dt, size, result, expect_result, count * size);
		check(at == count * size, "%s: fetched byte %zu is %#x, expected "
		      "%#x", what, at, at < count * size ? result[at] : 0,
		      at < count * size ? expect_result[at] : 0);
		for (at = 0; at < size; at++) {
			if (result[count * size + at] != 0xa5)
				break;
		}
		check(at == size, "%s: wrote past the result buffer", what);
	}
out:
	free(result);
	free(after);
}

/* ---- client: every op on every datatype, against mrail_atomic_apply ---- */

#define WIN_ELEMS 8	/* elements in the window: the atomic hits 1..count */

static void run_combination(enum mrail_atomic_kind kind, enum fi_op op,
			    enum fi_datatype dt, size_t size, size_t count,
			    enum variant v)
{
	size_t win_len = WIN_ELEMS * size, i;
	uint8_t window[WIN_ELEMS * 32], expect[WIN_ELEMS * 32];
	uint8_t operand[WIN_ELEMS * 32], compare[WIN_ELEMS * 32];
	uint8_t fetched[WIN_ELEMS * 32];
	bool is_signed = dt == FI_INT8 || dt == FI_INT16 || dt == FI_INT32 ||
			 dt == FI_INT64 || dt == FI_FLOAT || dt == FI_DOUBLE ||
			 dt == FI_LONG_DOUBLE || dt == FI_INT128;
	char what[128];
	long long t;
	int ret;

	memset(window, 0, sizeof(window));
	for (i = 0; i < WIN_ELEMS; i++) {
		t = (long long) (i % 5) + 2;
		if (is_signed && i % 2)
			t = -t;
		if (op == FI_LAND || op == FI_LOR || op == FI_LXOR)
			t = i % 3 == 0 ? 0 : t;
		put_value(dt, window + i * size, t);
	}
	for (i = 0; i < count; i++) {
		put_value(dt, operand + i * size,
			  op == FI_LAND || op == FI_LOR || op == FI_LXOR ?
			  (long long) (i % 2) : (long long) (i % 3) + 1);
		/* Half the compares equal the target, half do not. */
		if (i % 2)
			put_value(dt, compare + i * size, 3);
		else
			memcpy(compare + i * size, window + (i + 1) * size, size);
	}
	memcpy(expect, window, win_len);
	ret = mrail_atomic_apply(op, dt, expect + size, operand,
				 kind == MRAIL_ATOMIC_COMPARE ? compare : NULL,
				 kind == MRAIL_ATOMIC_PLAIN ? NULL : fetched, count);
	if (ret) {
		check(false, "reference: mrail_atomic_apply op %d datatype %d: %d",
		      op, dt, ret);
		return;
	}
	snprintf(what, sizeof(what), "%s (%s) op %s datatype %s x%zu",
		 kind_names[kind], variant_name(kind, v),
		 fi_tostr(&op, FI_TYPE_ATOMIC_OP),
		 fi_tostr(&dt, FI_TYPE_ATOMIC_TYPE), count);
	run_one(what, kind, v, op, dt, size, count, window, win_len, size,
		op == FI_ATOMIC_READ && v == V_PLAIN ? NULL : operand,
		compare, expect, fetched);
}

static void run_all_combinations(void)
{
	static const size_t counts[] = { 1, 5 };
	enum mrail_atomic_kind kind;
	unsigned op, dt, c, seq = 0;
	size_t size, max;
	int ret, valid;
	enum variant v;

	for (kind = 0; kind < MRAIL_ATOMIC_KIND_COUNT; kind++)
	for (op = 0; op < FI_ATOMIC_OP_LAST; op++)
	for (dt = 0; dt <= FI_UINT128; dt++) {
		if (kind == MRAIL_ATOMIC_PLAIN)
			ret = fi_atomicvalid(fab.ep, dt, op, &max);
		else if (kind == MRAIL_ATOMIC_FETCH)
			ret = fi_fetch_atomicvalid(fab.ep, dt, op, &max);
		else
			ret = fi_compare_atomicvalid(fab.ep, dt, op, &max);
		valid = mrail_atomic_valid(kind, op, dt, &size);
		check((ret == 0) == (valid == 0) &&
		      (ret == 0 || ret == -FI_EOPNOTSUPP),
		      "%s valid op %u datatype %u: %d, the table says %d",
		      kind_names[kind], op, dt, ret, valid);
		if (ret || valid)
			continue;
		check(max == (EAGER_PAYLOAD - ATOMIC_DESC) /
			     (size * (kind == MRAIL_ATOMIC_COMPARE ? 2 : 1)),
		      "%s valid op %u datatype %u: count %zu, fi_mrail(7) says "
		      "%zu", kind_names[kind], op, dt, max,
		      (EAGER_PAYLOAD - ATOMIC_DESC) /
		      (size * (kind == MRAIL_ATOMIC_COMPARE ? 2 : 1)));
		for (c = 0; c < 2; c++) {
			v = (enum variant) (seq++ % (kind == MRAIL_ATOMIC_PLAIN ? 4 : 3));
			run_combination(kind, op, dt, size, counts[c], v);
		}
	}
}

/* ---- client: hand-computed cases (the reference's own check) ---- */

struct hand_case {
	const char *what;
	enum mrail_atomic_kind kind;
	enum fi_op op;
	enum fi_datatype dt;
	uint64_t target, operand, compare;	/* low bytes, little-endian */
	uint64_t want_target, want_result;
};

static const struct hand_case hand_cases[] = {
	{ "40 + 2 = 42", MRAIL_ATOMIC_FETCH, FI_SUM, FI_UINT64, 40, 2, 0, 42, 40 },
	{ "2^64-1 + 2 wraps to 1", MRAIL_ATOMIC_PLAIN, FI_SUM, FI_UINT64,
	  UINT64_MAX, 2, 0, 1, 0 },
	{ "cswap 42 == 42: 7", MRAIL_ATOMIC_COMPARE, FI_CSWAP, FI_UINT64,
	  42, 7, 42, 7, 42 },
	{ "cswap 41 != 42: kept", MRAIL_ATOMIC_COMPARE, FI_CSWAP, FI_UINT64,
	  42, 7, 41, 42, 42 },
	{ "min(-5, 3) = -5 (signed)", MRAIL_ATOMIC_FETCH, FI_MIN, FI_INT32,
	  0xfffffffb, 3, 0, 0xfffffffb, 0xfffffffb },
	{ "max(-5, 3) = 3 (signed)", MRAIL_ATOMIC_PLAIN, FI_MAX, FI_INT32,
	  0xfffffffb, 3, 0, 3, 0 },
	{ "0xf0 ^ 0x3c = 0xcc", MRAIL_ATOMIC_PLAIN, FI_BXOR, FI_UINT8,
	  0xf0, 0x3c, 0, 0xcc, 0 },
	{ "mswap 0xabcd mask 0x00ff into 0x1234 = 0x12cd", MRAIL_ATOMIC_COMPARE,
	  FI_MSWAP, FI_UINT16, 0x1234, 0xabcd, 0x00ff, 0x12cd, 0x1234 },
	{ "3 && 0 = 0", MRAIL_ATOMIC_FETCH, FI_LAND, FI_INT8, 3, 0, 0, 0, 3 },
	{ "6 * 7 = 42", MRAIL_ATOMIC_PLAIN, FI_PROD, FI_UINT32, 6, 7, 0, 42, 0 },
	/* 1.5 * 4.0 = 6.0 as IEEE 754 doubles. */
	{ "1.5 * 4.0 = 6.0", MRAIL_ATOMIC_FETCH, FI_PROD, FI_DOUBLE,
	  0x3ff8000000000000ull, 0x4010000000000000ull, 0,
	  0x4018000000000000ull, 0x3ff8000000000000ull },
	{ "read 0x1122334455667788", MRAIL_ATOMIC_FETCH, FI_ATOMIC_READ,
	  FI_UINT64, 0x1122334455667788ull, 0, 0, 0x1122334455667788ull,
	  0x1122334455667788ull },
	{ "cswap_lt: 5 < 9 so 1", MRAIL_ATOMIC_COMPARE, FI_CSWAP_LT, FI_INT64,
	  9, 1, 5, 1, 9 },
};

static void le_bytes(uint8_t *p, uint64_t v, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++)
		p[i] = i < 8 ? (uint8_t) (v >> (8 * i)) : 0;
}

static void run_hand_cases(void)
{
	uint8_t window[24], expect[24], operand[8], compare[8], result[8];
	const struct hand_case *h;
	size_t i, size;
	char what[128];

	for (i = 0; i < sizeof(hand_cases) / sizeof(hand_cases[0]); i++) {
		h = &hand_cases[i];
		if (mrail_atomic_valid(h->kind, h->op, h->dt, &size)) {
			check(false, "hand case %s: not valid", h->what);
			continue;
		}
		memset(window, 0x77, sizeof(window));
		le_bytes(window + size, h->target, size);
		memcpy(expect, window, sizeof(window));
		le_bytes(expect + size, h->want_target, size);
		le_bytes(operand, h->operand, size);
		le_bytes(compare, h->compare, size);
		le_bytes(result, h->want_result, size);
		snprintf(what, sizeof(what), "hand case %s", h->what);
		run_one(what, h->kind, V_PLAIN, h->op, h->dt, size, 1, window,
			3 * size, size, operand, compare, expect, result);
	}
}

/* ---- client: limits, refusals, valid calls ---- */

static void run_max_count(void)
{
	size_t max = 0, i, win;
	uint8_t *window, *expect, *operand, *result;
	char what[96];
	ssize_t ret;

	ret = fi_fetch_atomicvalid(fab.ep, FI_UINT64, FI_SUM, &max);
	check(!ret && max == 2038, "fi_fetch_atomicvalid(FI_UINT64, FI_SUM): "
	      "%zd, count %zu, expected 0, 2038", ret, max);
	if (ret || max != 2038)
		return;
	win = (max + 2) * 8;
	window = calloc(1, win);
	expect = calloc(1, win);
	operand = calloc(max + 1, 8);
	result = calloc(max + 1, 8);
	if (!window || !expect || !operand || !result)
		ctl_die("calloc", FI_ENOMEM);
	for (i = 0; i < max; i++) {
		le_bytes(window + 8 + 8 * i, 1000 + i, 8);
		le_bytes(expect + 8 + 8 * i, 1000 + i + i * 3, 8);
		le_bytes(operand + 8 * i, i * 3, 8);
		le_bytes(result + 8 * i, 1000 + i, 8);
	}
	snprintf(what, sizeof(what), "fi_fetch_atomic FI_SUM of %zu uint64 (the "
		 "limit)", max);
	run_one(what, MRAIL_ATOMIC_FETCH, V_PLAIN, FI_SUM, FI_UINT64, 8, max,
		window, win, 8, operand, NULL, expect, result);
	ret = fi_fetch_atomic(fab.ep, operand, max + 1, NULL, result, NULL, peers[0],
			      8, KEY_RW, FI_UINT64, FI_SUM, &ctx);
	check(ret == -FI_EMSGSIZE, "fi_fetch_atomic of %zu elements: %s, "
	      "expected -FI_EMSGSIZE", max + 1, fi_strerror((int) -ret));
	ret = fi_atomic(fab.ep, operand, 0, NULL, peers[0], 8, KEY_RW, FI_UINT64,
			FI_SUM, &ctx);
	check(ret == -FI_EINVAL, "fi_atomic of 0 elements: %s, expected "
	      "-FI_EINVAL", fi_strerror((int) -ret));
	ret = fi_atomic(fab.ep, operand, 1, NULL, peers[0], 8, KEY_RW, FI_FLOAT,
			FI_BOR, &ctx);
	check(ret == -FI_EOPNOTSUPP, "fi_atomic FI_BOR on FI_FLOAT: %s, "
	      "expected -FI_EOPNOTSUPP", fi_strerror((int) -ret));
	free(window);
	free(expect);
	free(operand);
	free(result);
}

static void run_refused(const char *what, enum mrail_atomic_kind kind,
			enum fi_op op, uint64_t addr, uint64_t key, int want)
{
	uint8_t window[64], after[64], operand[8] = { 1 }, compare[8] = { 0 };
	uint8_t result[8];
	ssize_t ret;
	size_t i;
	int err;

	for (i = 0; i < sizeof(window); i++)
		window[i] = (uint8_t) (i + 9);
	set_window(window, sizeof(window));
	switch (kind) {
	case MRAIL_ATOMIC_PLAIN:
		ret = fi_atomic(fab.ep, operand, 1, NULL, peers[0], addr, key,
				FI_UINT64, op, &ctx);
		break;
	case MRAIL_ATOMIC_FETCH:
		ret = fi_fetch_atomic(fab.ep, operand, 1, NULL, result, NULL,
				      peers[0], addr, key, FI_UINT64, op, &ctx);
		break;
	default:
		ret = fi_compare_atomic(fab.ep, operand, 1, NULL, compare, NULL,
					result, NULL, peers[0], addr, key,
					FI_UINT64, op, &ctx);
		break;
	}
	check(!ret, "%s: post returned %s", what, fi_strerror((int) -ret));
	if (ret)
		return;
	err = wait_completion(what, 0);
	check(err == want, "%s: completed with %s, expected %s", what,
	      err ? fi_strerror(err) : "success", fi_strerror(want));
	if (kind == MRAIL_ATOMIC_PLAIN)
		write_errs++;
	else
		read_errs++;
	check_counters(what);
	get_window(what, after, sizeof(after));
	check(!memcmp(after, window, sizeof(window)), "%s: the target changed",
	      what);
}

static void run_query(void)
{
	struct fi_atomic_attr attr;
	int ret;

	ret = fi_query_atomic(fab.domain, FI_UINT64, FI_CSWAP, &attr,
			      FI_COMPARE_ATOMIC);
	check(!ret && attr.size == 8 && attr.count == 1019,
	      "fi_query_atomic(FI_UINT64, FI_CSWAP, compare): %d size %zu "
	      "count %zu, expected 0, 8, 1019", ret, attr.size, attr.count);
	ret = fi_query_atomic(fab.domain, FI_LONG_DOUBLE, FI_SUM, &attr, 0);
	check(!ret && attr.size == sizeof(long double) &&
	      attr.count == (EAGER_PAYLOAD - ATOMIC_DESC) / sizeof(long double),
	      "fi_query_atomic(FI_LONG_DOUBLE, FI_SUM): %d size %zu count %zu",
	      ret, attr.size, attr.count);
	ret = fi_query_atomic(fab.domain, FI_UINT8, FI_ATOMIC_READ, &attr,
			      FI_FETCH_ATOMIC);
	check(!ret && attr.size == 1 && attr.count == 16304,
	      "fi_query_atomic(FI_UINT8, FI_ATOMIC_READ, fetch): %d size %zu "
	      "count %zu, expected 0, 1, 16304", ret, attr.size, attr.count);
	check(fi_query_atomic(fab.domain, FI_UINT8, FI_ATOMIC_READ, &attr, 0) ==
	      -FI_EOPNOTSUPP, "fi_query_atomic: FI_ATOMIC_READ is no plain atomic");
	check(fi_query_atomic(fab.domain, FI_UINT64, FI_CSWAP, &attr, 0) ==
	      -FI_EOPNOTSUPP, "fi_query_atomic: FI_CSWAP is no plain atomic");
	check(fi_query_atomic(fab.domain, FI_DOUBLE_COMPLEX, FI_MIN, &attr, 0) ==
	      -FI_EOPNOTSUPP, "fi_query_atomic: complex numbers have no FI_MIN");
	check(fi_query_atomic(fab.domain, FI_UINT64, FI_SUM, &attr,
			      FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC) == -FI_EINVAL,
	      "fi_query_atomic: fetch and compare at once is -FI_EINVAL");
	check(fi_query_atomic(fab.domain, FI_UINT64, FI_SUM, &attr, FI_TAGGED) ==
	      -FI_EOPNOTSUPP, "fi_query_atomic: FI_TAGGED is not supported");
	check(fi_compare_atomicvalid(fab.ep, FI_FLOAT, FI_MSWAP, &attr.count) ==
	      -FI_EOPNOTSUPP, "fi_compare_atomicvalid: FI_MSWAP on FI_FLOAT");
}

/*
 * The target inserted a second time (fi_av(3) allows it; fabtests' server
 * inserts a client whose first contact already made an entry): atomics
 * through the second fi_addr, every kind and call, must complete like
 * through the first, their answers coming from the peer whichever entry
 * was named.
 */
static void run_alias(void)
{
	fi_addr_t first = peers[0], alias = check_alias(fab.av, first);
	enum variant v;
	int ret;

	if (alias == FI_ADDR_NOTAVAIL)
		return;
	peers[0] = alias;
	run_hand_cases();
	for (v = V_PLAIN; v <= V_MSG; v++) {
		run_combination(MRAIL_ATOMIC_PLAIN, FI_SUM, FI_UINT64, 8, 5, v);
		run_combination(MRAIL_ATOMIC_FETCH, FI_SUM, FI_INT32, 4, 5, v);
		run_combination(MRAIL_ATOMIC_COMPARE, FI_CSWAP, FI_UINT64, 8, 5, v);
	}
	run_combination(MRAIL_ATOMIC_PLAIN, FI_BOR, FI_UINT32, 4, 1, V_INJECT);
	peers[0] = first;
	ret = fi_av_remove(fab.av, &alias, 1, 0);
	check(!ret, "removing the second entry: %s", fi_strerror(-ret));
	/* The first entry still reaches the target. */
	run_hand_cases();
}

static void run_client(void)
{
	struct cmd done = { .type = CMD_DONE };
	int32_t status;

	ctl_read(socks[0], &status, sizeof(status), progress);
	run_query();
	run_hand_cases();
	run_all_combinations();
	run_max_count();
	run_refused("fetch-add past the end", MRAIL_ATOMIC_FETCH, FI_SUM,
		    REGION - 4, KEY_RW, FI_EINVAL);
	run_refused("atomic starting past the end", MRAIL_ATOMIC_PLAIN, FI_SUM,
		    REGION, KEY_RW, FI_EINVAL);
	run_refused("atomic with an unknown key", MRAIL_ATOMIC_PLAIN, FI_SUM, 0,
		    KEY_NONE, FI_EACCES);
	run_refused("atomic on a region without FI_REMOTE_WRITE",
		    MRAIL_ATOMIC_PLAIN, FI_ATOMIC_WRITE, 0, KEY_RO, FI_EACCES);
	run_refused("fetch atomic on a region without FI_REMOTE_WRITE",
		    MRAIL_ATOMIC_FETCH, FI_SUM, 0, KEY_RO, FI_EACCES);
	run_refused("fetch atomic on a region without FI_REMOTE_READ",
		    MRAIL_ATOMIC_FETCH, FI_SUM, 0, KEY_WO, FI_EACCES);
	run_refused("FI_ATOMIC_READ of a region without FI_REMOTE_READ",
		    MRAIL_ATOMIC_FETCH, FI_ATOMIC_READ, 0, KEY_WO, FI_EACCES);
	run_refused("compare atomic on a region without FI_REMOTE_READ",
		    MRAIL_ATOMIC_COMPARE, FI_CSWAP, 0, KEY_WO, FI_EACCES);
	/* After all that, the endpoint still works. */
	run_hand_cases();
	run_alias();
	ctl_write(socks[0], &done, sizeof(done));
	printf(PROG ": %" PRIu64 " atomics run\n", atomics_run);
}

/* N fetch-and-adds of 1 on the server's word, one after the other. */
static void run_contention_client(uint64_t n)
{
	uint64_t one = 1, result, last = 0, i, bad = 0;
	int32_t go;
	ssize_t ret;
	int err;

	ctl_read(socks[0], &go, sizeof(go), NULL);
	for (i = 0; i < n; i++) {
		while ((ret = fi_fetch_atomic(fab.ep, &one, 1, NULL, &result, NULL,
					      peers[0], 0, KEY_RW, FI_UINT64,
					      FI_SUM, &ctx)) == -FI_EAGAIN)
			progress();
		if (ret) {
			check(false, "fetch-add %" PRIu64 ": %s", i,
			      fi_strerror((int) -ret));
			break;
		}
		err = wait_completion("fetch-add", FI_ATOMIC | FI_READ);
		if (err) {
			check(false, "fetch-add %" PRIu64 ": %s", i,
			      fi_strerror(err));
			break;
		}
		if (i && result <= last)
			bad++;
		last = result;
	}
	check(i == n, "%" PRIu64 " of %" PRIu64 " fetch-and-adds done", i, n);
	check(!bad, "%" PRIu64 " fetched values not above the one before", bad);
	check(fi_cntr_read(read_cntr) == n, "FI_READ counter %" PRIu64
	      ", expected %" PRIu64, fi_cntr_read(read_cntr), n);
	ctl_write(socks[0], &go, sizeof(go));
	printf(PROG ": %" PRIu64 " fetch-and-adds, last fetched %" PRIu64 "\n",
	       n, last);
}

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " [-a] [-u] [-p PROV] [-E PORT] [-C N [-k K]] "
		"[SERVER]\n"
		"  -a        ask for FI_PROGRESS_AUTO\n"
		"  -u        target: never insert the initiators into the AV\n"
		"  -p PROV   provider (default mrail)\n"
		"  -E PORT   control connection port (default 47620)\n"
		"  -C N      contention test: N fetch-and-adds per client\n"
		"  -k K      contention server: K clients (default 2)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ctl_opts o = { .prov = "mrail", .port = 47620, .target_inserts = true };
	uint64_t contention = 0;
	int opt, clients = 2, i;

	ctl_prog = PROG;
	while ((opt = getopt(argc, argv, "ap:E:C:k:uvh")) != -1) {
		if (ctl_opt(&o, opt, optarg))
			continue;
		switch (opt) {
		case 'C':
			contention = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			clients = atoi(optarg);
			break;
		case 'v':
			check_verbose = true;
			break;
		default:
			usage();
		}
	}
	if (clients < 1 || clients > MAX_CLIENTS)
		usage();
	nsocks = ctl_connect(optind < argc ? argv[optind] : NULL, o.port, socks,
			     contention ? clients : 1);
	open_objects(o.prov, o.auto_progress);
	swap_addresses(o.target_inserts || optind < argc);
	if (optind < argc) {
		if (contention)
			run_contention_client(contention);
		else
			run_client();
	} else {
		run_server(contention);
	}
	setup_close(&fab, NULL, 0);
	for (i = 0; i < nsocks; i++)
		close(socks[i]);
	return check_summary(PROG);
}
