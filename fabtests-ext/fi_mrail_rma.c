/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_rma: functional test of FI_RMA between two processes.
 *
 *   server:  fi_mrail_rma [-a] [-u] [-p PROV] [-E PORT] [-s SIZES]
 *   client:  fi_mrail_rma [-a] [-p PROV] [-E PORT] [-s SIZES] SERVER
 *
 * With -u the target never inserts the initiator into its AV (SHMEM
 * runtimes' targets do not): every operation must be served all the same.
 * The server is the target: it registers a window region (key 1, remote
 * read and write, guard bytes around the window), a read-only region
 * (key 2) and a write-only region (key 3), binds FI_REMOTE_WRITE and
 * FI_REMOTE_READ counters and a receive CQ for remote CQ data. The client
 * is the initiator: for every size it runs fi_write, fi_writev,
 * fi_writemsg (FI_DELIVERY_COMPLETE | FI_FENCE), fi_inject_write,
 * fi_writedata, fi_inject_writedata, fi_read, fi_readv and fi_readmsg
 * (FI_FENCE), a write followed by a fenced read of the same bytes, and
 * accesses that must be refused (past the end, unknown key, a region
 * without the access), then writes and reads through a second AV entry
 * for the target, and last a read after which the initiator closes its
 * endpoint and ends at once (the target must count that read all the
 * same). A TCP control connection orders the steps.
 *
 * Checked byte for byte at both ends (guards included), exactly: one
 * completion per operation with its context and flags, the initiator's
 * FI_WRITE/FI_READ counters and their error counts, the target's remote
 * counters, and exactly one remote CQ data entry per writedata. Prints
 * "N of N checks passed" or the failed checks; exits 0 only if all passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/mrail_check.h"
#include "common/mrail_ctl.h"
#include "common/mrail_setup.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define PROG "fi_mrail_rma"
#define GUARD 4096
#define GUARD_BYTE 0xee
#define LOCAL_GUARD_BYTE 0xdd
#define KEY_RW 1
#define KEY_RO 2
#define KEY_WO 3
#define KEY_NONE 0x999
#define SMALL_REGION 65536
#define MAX_SIZES 16
#define WAIT_S 120



/* ---- control connection ---- */

/* CMD_DONE: the initiator's last read has completed and it is closing;
 * the target checks like CMD_CHECK and answers nothing. */
enum cmd_type { CMD_PREP = 1, CMD_CHECK, CMD_DONE };

struct cmd {
	uint32_t type;
	uint32_t pattern;	/* PREP: fill the window with the pattern */
	uint64_t size;
	uint64_t seed;
	/* CHECK: what the window must hold and the target must have seen. */
	uint64_t expect_pattern;
	uint64_t expect_rwrite, expect_rread;
	uint64_t expect_cq_data;	/* entries since the last CHECK: 0 or 1 */
	uint64_t data;
};

static int sock = -1;	/* the control connection (common/mrail_ctl) */

/* ---- libfabric objects ---- */

/* A CQ each way: cq for transmit, rx_cq for receive. */
static struct mrail_setup fab;
static struct fid_cntr *write_cntr, *read_cntr, *rwrite_cntr, *rread_cntr;
static fi_addr_t peer;
static bool is_initiator;

static void open_objects(const char *prov, bool auto_progress)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA, .size = 256 };

	setup_open(&fab, ctl_getinfo(prov, FI_MSG | FI_RMA | FI_READ | FI_WRITE |
				     FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT,
				     0, auto_progress),
		   &cq_attr, SETUP_SPLIT_CQ);
	write_cntr = setup_cntr(&fab, FI_WRITE, FI_WAIT_NONE);
	read_cntr = setup_cntr(&fab, FI_READ, FI_WAIT_NONE);
	rwrite_cntr = setup_cntr(&fab, FI_REMOTE_WRITE, FI_WAIT_NONE);
	rread_cntr = setup_cntr(&fab, FI_REMOTE_READ, FI_WAIT_NONE);
	setup_enable(&fab);
}

/*
 * -u: the target hands out its name but never inserts the initiator's, as
 * SHMEM runtimes' targets do: every RMA must be served all the same.
 */
static void swap_addresses(bool target_inserts)
{
	if (target_inserts || is_initiator) {
		peer = ctl_swap_names(sock, fab.ep, fab.av);
	} else {
		ctl_give_name(sock, fab.ep);
		peer = FI_ADDR_NOTAVAIL;
	}
}

/* Progress without taking completions off any CQ. */
static void progress(void)
{
	(void) fi_cntr_read(write_cntr);
}

/* ---- data ---- */

static void fill_pattern(uint8_t *p, size_t len, uint64_t seed)
{
	check_pattern_fill(p, len, seed);
}

/* The first index where p differs from the pattern (or from byte when
 * seed is UINT64_MAX), or len. */
static size_t first_mismatch(const uint8_t *p, size_t len, uint64_t seed,
			     uint8_t byte)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != (seed == UINT64_MAX ? byte : check_pattern_byte(seed, i)))
			return i;
	}
	return len;
}

/* ---- server (target) ---- */

static uint8_t *region;
static size_t region_len, max_size;
static uint64_t cq_data_seen, cq_data_last, cq_data_bad;

static void server_drain_cq(void)
{
	struct fi_cq_data_entry entry;
	struct fi_cq_err_entry err;
	ssize_t n;

	while ((n = fi_cq_read(fab.rx_cq, &entry, 1)) == 1) {
		cq_data_seen++;
		cq_data_last = entry.data;
		if (entry.flags != (FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA))
			cq_data_bad++;
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(fab.rx_cq, &err, 0);
		check(false, "target: error completion on the receive CQ: %s",
		      fi_strerror(err.err));
	}
}

static void server_check(const struct cmd *c)
{
	uint8_t *window = region + GUARD;
	struct timespec start, now;
	uint64_t rw, rr;
	size_t at;

	/* The last ACK of a read may still be on its way: wait for the
	 * counters to get there, then they must be exactly right. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		server_drain_cq();
		rw = fi_cntr_read(rwrite_cntr);
		rr = fi_cntr_read(rread_cntr);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((rw < c->expect_rwrite || rr < c->expect_rread) &&
		 now.tv_sec - start.tv_sec < WAIT_S);
	server_drain_cq();
	check(fi_cntr_read(rwrite_cntr) == c->expect_rwrite,
	      "target: FI_REMOTE_WRITE counter %" PRIu64 ", expected %" PRIu64,
	      fi_cntr_read(rwrite_cntr), c->expect_rwrite);
	check(fi_cntr_read(rread_cntr) == c->expect_rread,
	      "target: FI_REMOTE_READ counter %" PRIu64 ", expected %" PRIu64,
	      fi_cntr_read(rread_cntr), c->expect_rread);
	check(!fi_cntr_readerr(rwrite_cntr) && !fi_cntr_readerr(rread_cntr),
	      "target: remote counters have errors (%" PRIu64 ", %" PRIu64 ")",
	      fi_cntr_readerr(rwrite_cntr), fi_cntr_readerr(rread_cntr));
	check(cq_data_seen == c->expect_cq_data && !cq_data_bad,
	      "target: %" PRIu64 " remote CQ data entries (%" PRIu64 " with wrong "
	      "flags), expected %" PRIu64, cq_data_seen, cq_data_bad,
	      c->expect_cq_data);
	if (c->expect_cq_data && cq_data_seen == c->expect_cq_data)
		check(cq_data_last == c->data, "target: remote CQ data %#" PRIx64
		      ", expected %#" PRIx64, cq_data_last, c->data);
	cq_data_seen = cq_data_bad = 0;

	at = first_mismatch(region, GUARD, UINT64_MAX, GUARD_BYTE);
	check(at == GUARD, "target: guard before the window changed at byte %zu", at);
	at = first_mismatch(window + c->size, region_len - GUARD - c->size,
			    UINT64_MAX, GUARD_BYTE);
	check(at == region_len - GUARD - c->size,
	      "target: guard after the %" PRIu64 "-byte window changed at byte %zu",
	      c->size, at);
	at = first_mismatch(window, c->size, c->expect_pattern ? c->seed : UINT64_MAX, 0);
	check(at == c->size, "target: window of %" PRIu64 " bytes differs at byte "
	      "%zu", c->size, at);
}

static void run_server(void)
{
	static uint8_t ro[SMALL_REGION], wo[SMALL_REGION];
	struct fid_mr *mr_rw, *mr_ro, *mr_wo;
	struct cmd c;
	int32_t status;
	int ret;

	region_len = max_size + 2 * GUARD;
	region = malloc(region_len);
	if (!region)
		ctl_die("malloc", FI_ENOMEM);
	memset(region, GUARD_BYTE, region_len);
	fill_pattern(ro, sizeof(ro), 77);
	fill_pattern(wo, sizeof(wo), 78);
	if ((ret = fi_mr_reg(fab.domain, region, region_len,
			     FI_REMOTE_READ | FI_REMOTE_WRITE, 0, KEY_RW, 0,
			     &mr_rw, NULL)) ||
	    (ret = fi_mr_reg(fab.domain, ro, sizeof(ro), FI_REMOTE_READ, 0, KEY_RO, 0,
			     &mr_ro, NULL)) ||
	    (ret = fi_mr_reg(fab.domain, wo, sizeof(wo), FI_REMOTE_WRITE, 0, KEY_WO, 0,
			     &mr_wo, NULL)))
		ctl_die("fi_mr_reg", ret);
	/* Registered: the client may start. */
	status = 0;
	ctl_write(sock, &status, sizeof(status));

	for (;;) {
		ctl_read(sock, &c, sizeof(c), server_drain_cq);
		if (c.type == CMD_DONE) {
			server_check(&c);
			break;
		}
		if (c.type == CMD_PREP) {
			memset(region, GUARD_BYTE, region_len);
			if (c.pattern)
				fill_pattern(region + GUARD, c.size, c.seed);
			else
				memset(region + GUARD, 0, c.size);
		} else {
			server_check(&c);
		}
		status = check_failures;
		ctl_write(sock, &status, sizeof(status));
	}
	check(first_mismatch(ro, sizeof(ro), 77, 0) == sizeof(ro),
	      "target: the read-only region changed");
	check(first_mismatch(wo, sizeof(wo), 78, 0) == sizeof(wo),
	      "target: the write-only region changed");
	fi_close(&mr_rw->fid);
	fi_close(&mr_ro->fid);
	fi_close(&mr_wo->fid);
	free(region);
}

/* ---- client (initiator) ---- */

enum op {
	OP_WRITE, OP_WRITEV, OP_WRITEMSG, OP_INJECT_WRITE, OP_WRITEDATA,
	OP_INJECT_WRITEDATA, OP_READ, OP_READV, OP_READMSG, OP_COUNT
};

static const char *op_names[] = {
	"fi_write", "fi_writev", "fi_writemsg", "fi_inject_write", "fi_writedata",
	"fi_inject_writedata", "fi_read", "fi_readv", "fi_readmsg",
};

static uint8_t *local;		/* GUARD + max_size + GUARD */
static uint64_t writes_done, reads_done, write_errs, read_errs;
static uint64_t remote_writes, remote_reads;
static uint64_t data_bytes;	/* moved by successful operations */
static struct fi_context ctx[2];

static bool op_is_read(enum op op)
{
	return op >= OP_READ;
}

static bool op_is_inject(enum op op)
{
	return op == OP_INJECT_WRITE || op == OP_INJECT_WRITEDATA;
}

static void send_cmd(const struct cmd *c)
{
	int32_t status;

	ctl_write(sock, c, sizeof(*c));
	ctl_read(sock, &status, sizeof(status), progress);
	check(status == 0, "target reports %d failed checks", status);
}

/* Three pieces of len bytes at buf: a multi-iov operation. */
static size_t split3(uint8_t *buf, size_t len, struct iovec iov[3])
{
	iov[0] = (struct iovec) { buf, len / 3 };
	iov[1] = (struct iovec) { buf + len / 3, len / 3 };
	iov[2] = (struct iovec) { buf + 2 * (len / 3), len - 2 * (len / 3) };
	return 3;
}

static ssize_t post(enum op op, uint8_t *buf, size_t len, uint64_t addr,
		    uint64_t key, uint64_t data, struct fi_context *context,
		    uint64_t extra_flags)
{
	struct fi_rma_iov rma = { .addr = addr, .len = len, .key = key };
	struct fi_msg_rma msg = {
		.desc = NULL, .addr = peer, .rma_iov = &rma,
		.rma_iov_count = 1, .context = context, .data = data,
	};
	struct iovec iov[3];
	size_t n;

	switch (op) {
	case OP_WRITE:
		return fi_write(fab.ep, buf, len, NULL, peer, addr, key, context);
	case OP_WRITEV:
		n = split3(buf, len, iov);
		return fi_writev(fab.ep, iov, NULL, n, peer, addr, key, context);
	case OP_WRITEMSG:
		msg.iov_count = split3(buf, len, iov);
		msg.msg_iov = iov;
		return fi_writemsg(fab.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE |
				   FI_FENCE | extra_flags);
	case OP_INJECT_WRITE:
		return fi_inject_write(fab.ep, buf, len, peer, addr, key);
	case OP_WRITEDATA:
		return fi_writedata(fab.ep, buf, len, NULL, data, peer, addr, key, context);
	case OP_INJECT_WRITEDATA:
		return fi_inject_writedata(fab.ep, buf, len, data, peer, addr, key);
	case OP_READ:
		return fi_read(fab.ep, buf, len, NULL, peer, addr, key, context);
	case OP_READV:
		n = split3(buf, len, iov);
		return fi_readv(fab.ep, iov, NULL, n, peer, addr, key, context);
	case OP_READMSG:
		msg.iov_count = split3(buf, len, iov);
		msg.msg_iov = iov;
		return fi_readmsg(fab.ep, &msg, FI_COMPLETION | FI_FENCE | extra_flags);
	default:
		return -FI_EINVAL;
	}
}

static ssize_t post_retry(enum op op, uint8_t *buf, size_t len, uint64_t addr,
			  uint64_t key, uint64_t data, struct fi_context *context,
			  uint64_t extra_flags)
{
	ssize_t ret;

	while ((ret = post(op, buf, len, addr, key, data, context, extra_flags)) ==
	       -FI_EAGAIN)
		progress();
	return ret;
}

/*
 * Waits for one completion on the transmit CQ: returns 0 and checks its
 * context and flags, or returns the error of an error completion.
 */
static int wait_completion(const char *what, struct fi_context *context,
			   uint64_t flags)
{
	struct fi_cq_data_entry entry;
	struct fi_cq_err_entry err;
	struct timespec start, now;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		n = fi_cq_read(fab.cq, &entry, 1);
		if (n == 1) {
			check(entry.op_context == context && entry.flags == flags,
			      "%s: completion context %p flags %#" PRIx64 ", expected "
			      "%p %#" PRIx64, what, entry.op_context,
			      (uint64_t) entry.flags, (void *) context, flags);
			return 0;
		}
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(fab.cq, &err, 0);
			check(err.op_context == context, "%s: error completion for "
			      "context %p, expected %p", what, err.op_context,
			      (void *) context);
			return err.err;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > WAIT_S) {
			check(false, "%s: no completion after %d s", what, WAIT_S);
			return FI_ETIMEDOUT;
		}
	}
}

static void wait_cntr(struct fid_cntr *cntr, uint64_t value)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (fi_cntr_read(cntr) + fi_cntr_readerr(cntr) < value) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > WAIT_S)
			break;
	}
}

static void check_counters(const char *what)
{
	check_counter(what, "FI_WRITE", write_cntr, writes_done, write_errs);
	check_counter(what, "FI_READ", read_cntr, reads_done, read_errs);
	check_no_completion(what, fab.cq);
}

static void check_local(const char *what, size_t len, uint64_t seed)
{
	size_t at;

	at = first_mismatch(local, GUARD, UINT64_MAX, LOCAL_GUARD_BYTE);
	check(at == GUARD, "%s: local guard before the buffer changed at %zu",
	      what, at);
	at = first_mismatch(local + GUARD + len, GUARD, UINT64_MAX,
			    LOCAL_GUARD_BYTE);
	check(at == GUARD, "%s: local guard after the buffer changed at %zu",
	      what, at);
	at = first_mismatch(local + GUARD, len, seed, 0);
	check(at == len, "%s: %zu bytes differ from byte %zu", what, len, at);
}

static void prep(size_t size, uint64_t seed, bool pattern)
{
	struct cmd c = { .type = CMD_PREP, .size = size, .seed = seed,
			 .pattern = pattern };

	send_cmd(&c);
}

static void target_check(size_t size, uint64_t seed, bool pattern,
			 bool cq_data, uint64_t data)
{
	struct cmd c = {
		.type = CMD_CHECK, .size = size, .seed = seed,
		.expect_pattern = pattern, .expect_rwrite = remote_writes,
		.expect_rread = remote_reads, .expect_cq_data = cq_data,
		.data = data,
	};

	send_cmd(&c);
}

static void run_op(enum op op, size_t size, uint64_t seed)
{
	bool read = op_is_read(op), inject = op_is_inject(op);
	bool cq_data = op == OP_WRITEDATA || op == OP_INJECT_WRITEDATA;
	uint64_t data = 0xd00d0000ull + seed;
	char what[96];
	ssize_t ret;
	int err;

	snprintf(what, sizeof(what), "%s of %zu bytes", op_names[op], size);
	prep(size, seed, read);
	memset(local, LOCAL_GUARD_BYTE, max_size + 2 * GUARD);
	if (read)
		memset(local + GUARD, 0, size);
	else
		fill_pattern(local + GUARD, size, seed);

	ret = post_retry(op, local + GUARD, size, GUARD, KEY_RW, data, &ctx[0], 0);
	check(!ret, "%s: post returned %s", what, fi_strerror((int) -ret));
	if (ret)
		return;
	if (inject) {
		/* The buffer is ours again: scribbling on it changes nothing. */
		memset(local + GUARD, 0x5a, size);
		wait_cntr(write_cntr, writes_done + write_errs + 1);
		writes_done++;
	} else {
		err = wait_completion(what, &ctx[0], FI_RMA |
				      (read ? FI_READ : FI_WRITE));
		check(!err, "%s: error completion %s", what, fi_strerror(err));
		if (read)
			reads_done++;
		else
			writes_done++;
	}
	if (read)
		remote_reads++;
	else
		remote_writes++;
	data_bytes += size;
	check_counters(what);
	if (read)
		check_local(what, size, seed);
	target_check(size, seed, true, cq_data, data);
}

/* A write, then a fenced read of the same bytes: the read sees the write. */
static void run_fence(size_t size, uint64_t seed)
{
	uint8_t *back = malloc(size + 1);
	char what[96];
	ssize_t ret;
	size_t at;
	int err;

	snprintf(what, sizeof(what), "fi_write + fenced fi_readmsg of %zu bytes",
		 size);
	prep(size, seed, false);
	memset(local, LOCAL_GUARD_BYTE, max_size + 2 * GUARD);
	fill_pattern(local + GUARD, size, seed);
	memset(back, 0, size + 1);
	ret = post_retry(OP_WRITE, local + GUARD, size, GUARD, KEY_RW, 0, &ctx[0], 0);
	if (!ret)
		ret = post_retry(OP_READMSG, back, size, GUARD, KEY_RW, 0, &ctx[1], 0);
	check(!ret, "%s: post returned %s", what, fi_strerror((int) -ret));
	if (ret) {
		free(back);
		return;
	}
	err = wait_completion(what, &ctx[0], FI_RMA | FI_WRITE);
	check(!err, "%s: write error %s", what, fi_strerror(err));
	err = wait_completion(what, &ctx[1], FI_RMA | FI_READ);
	check(!err, "%s: read error %s", what, fi_strerror(err));
	writes_done++;
	reads_done++;
	remote_writes++;
	remote_reads++;
	data_bytes += 2 * (uint64_t) size;
	at = first_mismatch(back, size, seed, 0);
	check(at == size, "%s: read back differs at byte %zu", what, at);
	check(back[size] == 0, "%s: read past its buffer", what);
	check_counters(what);
	target_check(size, seed, true, false, 0);
	free(back);
}

/*
 * count operations of chunk bytes each posted back to back before any
 * completes (writes, then reads of the same window): rails run out of
 * buffers, answers queue, completions come in any order, and each must
 * still come exactly once.
 */
static void run_burst(bool read, size_t count, size_t chunk, uint64_t seed)
{
	struct fi_context *ctxs = calloc(count, sizeof(*ctxs));
	bool *seen = calloc(count, sizeof(*seen));
	size_t total = count * chunk, i, done = 0, idx;
	struct fi_cq_data_entry entry;
	struct timespec start, now;
	uint64_t want = FI_RMA | (read ? FI_READ : FI_WRITE);
	char what[96];
	ssize_t ret, n;

	snprintf(what, sizeof(what), "burst of %zu %s of %zu bytes", count,
		 read ? "reads" : "writes", chunk);
	if (!ctxs || !seen)
		ctl_die("calloc", FI_ENOMEM);
	prep(total, seed, read);
	memset(local, LOCAL_GUARD_BYTE, max_size + 2 * GUARD);
	if (read)
		memset(local + GUARD, 0, total);
	else
		fill_pattern(local + GUARD, total, seed);
	for (i = 0; i < count; i++) {
		ret = post_retry(read ? OP_READ : OP_WRITE, local + GUARD + i * chunk,
				 chunk, GUARD + i * chunk, KEY_RW, 0, &ctxs[i], 0);
		check(!ret, "%s: post %zu returned %s", what, i,
		      fi_strerror((int) -ret));
		if (ret)
			break;
	}
	count = i;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (done < count) {
		n = fi_cq_read(fab.cq, &entry, 1);
		if (n == 1) {
			idx = (size_t) ((struct fi_context *) entry.op_context - ctxs);
			check(idx < count && !seen[idx] && entry.flags == want,
			      "%s: completion for context %p (index %zu) flags %#"
			      PRIx64 " unexpected", what, entry.op_context, idx,
			      (uint64_t) entry.flags);
			if (idx < count)
				seen[idx] = true;
			done++;
			continue;
		}
		if (n != -FI_EAGAIN)
			check(false, "%s: fi_cq_read returned %s", what,
			      fi_strerror((int) -n));
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (n != -FI_EAGAIN || now.tv_sec - start.tv_sec > WAIT_S) {
			check(false, "%s: %zu of %zu completions", what, done, count);
			break;
		}
	}
	if (read) {
		reads_done += count;
		remote_reads += count;
	} else {
		writes_done += count;
		remote_writes += count;
	}
	data_bytes += count * chunk;
	check_counters(what);
	if (read)
		check_local(what, total, seed);
	target_check(total, seed, true, false, 0);
	free(ctxs);
	free(seen);
}

/* An access the target must refuse with want at the initiator. */
static void run_refused(const char *what, enum op op, size_t size,
			uint64_t addr, uint64_t key, int want)
{
	bool read = op_is_read(op);
	ssize_t ret;
	int err;

	prep(max_size < 64 ? max_size : 64, 5, false);
	memset(local, LOCAL_GUARD_BYTE, max_size + 2 * GUARD);
	fill_pattern(local + GUARD, size, 9);
	ret = post_retry(op, local + GUARD, size, addr, key, 0, &ctx[0], 0);
	check(!ret, "%s: post returned %s", what, fi_strerror((int) -ret));
	if (ret)
		return;
	err = wait_completion(what, &ctx[0], 0);
	check(err == want, "%s: completed with %s, expected %s", what,
	      err ? fi_strerror(err) : "success", fi_strerror(want));
	if (read)
		read_errs++;
	else
		write_errs++;
	check_counters(what);
	target_check(max_size < 64 ? max_size : 64, 5, false, false, 0);
}

/*
 * The target inserted a second time (fi_av(3) allows it; fabtests' server
 * inserts a client whose first contact already made an entry): RMA through
 * the second fi_addr must complete like through the first, its answers
 * coming from the peer whichever entry was named.
 */
static void run_alias(const size_t *sizes, size_t nsizes, uint64_t *seed)
{
	static const enum op ops[] = { OP_WRITE, OP_WRITEDATA, OP_READ, OP_READMSG };
	fi_addr_t first = peer, alias = check_alias(fab.av, peer);
	size_t s, i;
	int ret;

	if (alias == FI_ADDR_NOTAVAIL)
		return;
	peer = alias;
	for (s = 0; s < nsizes; s++)
		for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			run_op(ops[i], sizes[s], (*seed)++);
	peer = first;
	ret = fi_av_remove(fab.av, &alias, 1, 0);
	check(!ret, "removing the second entry: %s", fi_strerror(-ret));
	/* The first entry still reaches the target. */
	run_op(OP_WRITE, sizes[0], (*seed)++);
	run_op(OP_READ, sizes[0], (*seed)++);
}

/*
 * The last operation: a read, after which the initiator closes its
 * endpoint and exits at once, as fabtests' fi_rdm_deferred_wq -T rma does.
 * The target counts a read on the initiator's ACK, which must leave before
 * the endpoint goes.
 */
static void run_last_read(size_t size, uint64_t seed)
{
	struct cmd done = {
		.type = CMD_DONE, .size = size, .seed = seed,
		.expect_pattern = true, .expect_rwrite = remote_writes,
		.expect_rread = remote_reads + 1,
	};
	ssize_t ret;
	int err;

	prep(size, seed, true);
	memset(local + GUARD, 0, size);
	ret = post_retry(OP_READ, local + GUARD, size, GUARD, KEY_RW, 0, &ctx[0], 0);
	check(!ret, "last read of %zu bytes: post returned %s", size,
	      fi_strerror((int) -ret));
	if (!ret) {
		err = wait_completion("last read", &ctx[0], FI_RMA | FI_READ);
		check(!err, "last read of %zu bytes: error completion %s", size,
		      fi_strerror(err));
		reads_done++;
		remote_reads++;
		data_bytes += size;
		check_local("last read", size, seed);
	}
	ctl_write(sock, &done, sizeof(done));
}

static void run_client(const size_t *sizes, size_t nsizes)
{
	uint64_t seed = 1;
	int32_t status;
	size_t s, big;
	enum op op;

	local = malloc(max_size + 2 * GUARD);
	if (!local)
		ctl_die("malloc", FI_ENOMEM);
	ctl_read(sock, &status, sizeof(status), progress);

	for (s = 0; s < nsizes; s++) {
		for (op = 0; op < OP_COUNT; op++) {
			if (op_is_inject(op) && sizes[s] > fab.info->tx_attr->inject_size)
				continue;
			run_op(op, sizes[s], seed++);
		}
	}
	big = sizes[nsizes - 1];
	run_fence(big, seed++);
	/* Bursts, inline and striped, where the window is large enough. */
	if (max_size >= 128 * 1000)
		run_burst(false, 128, 1000, seed++), run_burst(true, 128, 1000, seed++);
	if (max_size >= 64 * 40000)
		run_burst(false, 64, 40000, seed++), run_burst(true, 64, 40000, seed++);

	run_refused("write past the end", OP_WRITE, 20,
		    max_size + 2 * GUARD - 10, KEY_RW, FI_EINVAL);
	run_refused("write starting past the end", OP_WRITE, 1,
		    max_size + 2 * GUARD + 1, KEY_RW, FI_EINVAL);
	if (big > 2 * GUARD)
		run_refused("large write past the end", OP_WRITE, big,
			    2 * GUARD + 1, KEY_RW, FI_EINVAL);
	run_refused("write with an unknown key", OP_WRITE, 16, 0, KEY_NONE,
		    FI_EACCES);
	run_refused("write to a region without FI_REMOTE_WRITE", OP_WRITE, 16, 0,
		    KEY_RO, FI_EACCES);
	run_refused("inline writedata to a region without FI_REMOTE_WRITE",
		    OP_WRITEDATA, 8, 0, KEY_RO, FI_EACCES);
	run_refused("read past the end", OP_READ, 4096, SMALL_REGION - 100, KEY_RO,
		    FI_EINVAL);
	run_refused("read with an unknown key", OP_READ, 16, 0, KEY_NONE, FI_EACCES);
	run_refused("read of a region without FI_REMOTE_READ", OP_READ, 16, 0,
		    KEY_WO, FI_EACCES);
	/* After all that, the endpoint still works. */
	run_op(OP_WRITE, sizes[nsizes - 1], seed++);
	run_op(OP_READ, sizes[nsizes - 1], seed++);
	run_alias(sizes, nsizes, &seed);
	run_last_read(big, seed++);

	printf(PROG ": %" PRIu64 " bytes of RMA data moved\n", data_bytes);
	free(local);
}

static int parse_sizes(const char *spec, size_t *sizes, size_t *n)
{
	char *copy = strdup(spec), *tok, *save = NULL, *end;
	unsigned long long v;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		v = strtoull(tok, &end, 0);
		if (*end == 'k')
			v <<= 10, end++;
		else if (*end == 'm')
			v <<= 20, end++;
		if (*end == '+')
			v += strtoull(end + 1, &end, 0);
		if (*end || *n == MAX_SIZES) {
			free(copy);
			return -1;
		}
		sizes[(*n)++] = (size_t) v;
	}
	free(copy);
	return *n ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " [-a] [-u] [-p PROV] [-E PORT] [-s SIZES] [SERVER]\n"
		"  -a        ask for FI_PROGRESS_AUTO\n"
		"  -u        target: never insert the initiator into the AV\n"
		"  -p PROV   provider (default mrail)\n"
		"  -E PORT   control connection port (default 47610)\n"
		"  -s SIZES  comma-separated sizes, k/m suffixes and +N "
		"(default 0,1,4k,16330,16k+1,1m+7,8m)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ctl_opts o = { .prov = "mrail", .port = 47610, .target_inserts = true };
	const char *spec = "0,1,4k,16330,16k+1,1m+7,8m";
	size_t sizes[MAX_SIZES], nsizes, i;
	int opt;

	ctl_prog = PROG;
	while ((opt = getopt(argc, argv, "ap:E:s:uh")) != -1) {
		if (ctl_opt(&o, opt, optarg))
			continue;
		switch (opt) {
		case 's':
			spec = optarg;
			break;
		default:
			usage();
		}
	}
	if (parse_sizes(spec, sizes, &nsizes))
		usage();
	for (i = 0; i < nsizes; i++)
		max_size = sizes[i] > max_size ? sizes[i] : max_size;
	if (max_size < SMALL_REGION)
		max_size = SMALL_REGION;

	is_initiator = optind < argc;
	ctl_connect(optind < argc ? argv[optind] : NULL, o.port, &sock, 1);
	open_objects(o.prov, o.auto_progress);
	swap_addresses(o.target_inserts);
	if (optind < argc)
		run_client(sizes, nsizes);
	else
		run_server();
	setup_close(&fab, NULL, 0);
	close(sock);
	return check_summary(PROG);
}
