/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_objs -t mr: memory registration, keys, counters bound to MRs,
 * and FI_MR_ASYNC registration events.
 */
#include "fi_mrail_objs.h"

/* ---- memory registration ---- */

#define MR_MANY 64
uint8_t region[4][8192];

static void test_mr_reg(struct fid_domain *domain)
{
	struct fid_mr *mr0 = NULL, *mr1 = NULL, *mr2 = NULL, *dup = (void *) 0x1;
	struct iovec iov = { .iov_base = region[1], .iov_len = 4096 };
	struct fi_mr_attr attr = {
		.mr_iov = &iov, .iov_count = 1, .access = FI_SEND | FI_RECV,
		.requested_key = 0x1003, .context = (void *) 0x3003,
		.iface = FI_HMEM_SYSTEM,
	};
	int ret;

	ret = fi_mr_reg(domain, region[0], sizeof(region[0]),
			FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0x1001, 0, &mr0,
			(void *) 0x3001);
	check_what(ret == 0, "fi_mr_reg with key 0x1001", "%s", fi_strerror(-ret));
	if (ret)
		return;
	check_what(fi_mr_key(mr0) == 0x1001 && fi_mr_desc(mr0) != NULL &&
	      mr0->fid.fclass == FI_CLASS_MR && mr0->fid.context == (void *) 0x3001,
	      "its key, descriptor, class and context", "key %#llx",
	      (unsigned long long) fi_mr_key(mr0));

	ret = fi_mr_reg(domain, region[1], 64, FI_REMOTE_READ, 0, 0x1001, 0, &dup, NULL);
	check_what(ret == -FI_ENOKEY && dup == (void *) 0x1,
	      "the same key again: -FI_ENOKEY, nothing returned", "returned %d", ret);

	ret = fi_mr_regv(domain, &iov, 1, FI_READ | FI_WRITE, 0, 0x1002, 0, &mr1, NULL);
	check_what(ret == 0 && fi_mr_key(mr1) == 0x1002 && fi_mr_desc(mr1) != fi_mr_desc(mr0),
	      "fi_mr_regv with one IO vector", "returned %d", ret);
	ret = fi_mr_regv(domain, &iov, 2, FI_READ, 0, 0x2002, 0, &dup, NULL);
	check_what(ret == -FI_EINVAL, "fi_mr_regv with two IO vectors is refused", "%d", ret);
	ret = fi_mr_regv(domain, &iov, 0, FI_READ, 0, 0x2002, 0, &dup, NULL);
	check_what(ret == -FI_EINVAL, "fi_mr_regv with none is refused", "%d", ret);

	iov.iov_base = region[2];
	ret = fi_mr_regattr(domain, &attr, 0, &mr2);
	check_what(ret == 0 && fi_mr_key(mr2) == 0x1003 && mr2->fid.context == (void *) 0x3003,
	      "fi_mr_regattr: key and context from the attributes", "returned %d", ret);
	attr.requested_key = 0x2003;
	attr.iface = FI_HMEM_CUDA;
	ret = fi_mr_regattr(domain, &attr, 0, &dup);
	check_what(ret == -FI_ENOSYS, "device memory is refused", "returned %d", ret);
	attr.iface = FI_HMEM_SYSTEM;
	attr.auth_key_size = 4;
	ret = fi_mr_regattr(domain, &attr, 0, &dup);
	check_what(ret == -FI_EINVAL, "an authorization key is refused", "returned %d", ret);

	check_what(fi_mr_reg(domain, region[3], 0, FI_READ, 0, 0x2004, 0, &dup, NULL) ==
	      -FI_EINVAL,
	      "length 0 is refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ, 1, 0x2004, 0, &dup, NULL) ==
	      -FI_EINVAL,
	      "a nonzero offset is refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ | FI_COLLECTIVE, 0, 0x2004, 0,
			&dup, NULL) == -FI_EINVAL,
	      "access bits beyond the six are refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ, 0, 0x2004, FI_RMA_PMEM, &dup,
			NULL) == -FI_EBADFLAGS, "unknown flags are refused", NULL);
	check_what(fi_mr_reg(domain, region[3], 64, FI_READ, 0, FI_KEY_NOTAVAIL, 0, &dup,
			NULL) == -FI_EKEYREJECTED,
	      "key FI_KEY_NOTAVAIL is refused", NULL);
	check_what(dup == (void *) 0x1, "no refused registration returned an MR", NULL);

	check_what(fi_mr_enable(mr0) == 0, "fi_mr_enable: nothing to do, 0", NULL);
	iov.iov_base = region[0] + 100;
	iov.iov_len = 200;
	check_what(fi_mr_refresh(mr0, &iov, 1, 0) == 0, "fi_mr_refresh inside the region",
	      NULL);
	iov.iov_len = sizeof(region[0]);
	check_what(fi_mr_refresh(mr0, &iov, 1, 0) == -FI_EINVAL,
	      "fi_mr_refresh past its end is refused", NULL);
	check_what(fi_mr_bind(mr0, &domain->fid, 0) == -FI_EINVAL,
	      "fi_mr_bind: regions bind to nothing with mr_mode 0", NULL);

	check_what(fi_close(&domain->fid) == -FI_EBUSY,
	      "the domain refuses to close while MRs are open", NULL);
	check_what(fi_close(&mr0->fid) == 0, "close the first MR", NULL);
	mr0 = NULL;
	ret = fi_mr_reg(domain, region[3], 64, FI_REMOTE_WRITE, 0, 0x1001, 0, &mr0, NULL);
	check_what(ret == 0 && fi_mr_key(mr0) == 0x1001, "its key is free again", "%d", ret);
	if (mr0)
		fi_close(&mr0->fid);
	check_what(fi_close(&mr1->fid) == 0 && fi_close(&mr2->fid) == 0, "close the others",
	      NULL);
}

static void test_mr_many(struct fid_domain *domain)
{
	static const uint64_t extremes[] = { 0, 1, UINT64_MAX - 1, (uint64_t) 1 << 63 };
	struct fid_mr *mrs[MR_MANY] = { 0 };
	struct fid_cntr *cntr = NULL;
	size_t i, ok = 0, keys_ok = 0;
	uint64_t key;
	int ret;

	for (i = 0; i < MR_MANY; i++) {
		key = i < 4 ? extremes[i] : 0x5000 + i * 0x10001;
		ret = fi_mr_reg(domain, region[i % 4] + i, 128, FI_REMOTE_READ, 0, key, 0,
				&mrs[i], NULL);
		ok += ret == 0;
		keys_ok += ret == 0 && fi_mr_key(mrs[i]) == key;
	}
	check_what(ok == MR_MANY && keys_ok == MR_MANY,
	      "64 regions, overlapping, keys 0, 1, 2^63, UINT64_MAX - 1 and 60 more",
	      "%zu registered, %zu with their key", ok, keys_ok);
	if (!open_cntr(domain, FI_WAIT_NONE, &cntr)) {
		check_what(mrs[4] && fi_mr_bind(mrs[4], &cntr->fid, FI_REMOTE_WRITE) == 0,
		      "fi_mr_bind to a counter", NULL);
		check_what(fi_close(&cntr->fid) == -FI_EBUSY,
		      "a counter a region counts on refuses to close", NULL);
	}
	for (i = 0, ok = 0; i < MR_MANY; i++)
		ok += mrs[i] && fi_close(&mrs[i]->fid) == 0;
	check_what(ok == MR_MANY, "close them all", "%zu closed", ok);
	if (cntr)
		check_what(fi_close(&cntr->fid) == 0, "then the counter closes", NULL);
}

/* RMA to ourselves and its completion (len bytes; 0 on success). */
/* The completion of the one operation in flight, ctx's: 0, or why not. */
static int self_wait(struct fid_cq *cq_tx, void *ctx)
{
	struct fi_cq_msg_entry tx;
	ssize_t ret = fi_cq_sread(cq_tx, &tx, 1, NULL, 30000);

	return ret == 1 && tx.op_context == ctx ? 0 : (ret < 0 ? (int) ret : -FI_EIO);
}

static int self_rma(struct self_ep *s, struct fid_cq *cq_tx, bool write, void *buf,
		    size_t len, uint64_t key, void *ctx)
{
	struct fi_cq_msg_entry tx;
	ssize_t ret;

	do {
		ret = write ? fi_write(s->ep, buf, len, NULL, s->self, 0, key, ctx) :
			      fi_read(s->ep, buf, len, NULL, s->self, 0, key, ctx);
		if (ret == -FI_EAGAIN)
			fi_cq_read(cq_tx, &tx, 0);
	} while (ret == -FI_EAGAIN);
	return ret ? (int) ret : self_wait(cq_tx, ctx);
}

#define MR_CNTR_BIG (256 * 1024)
static uint8_t mr_cntr_win[2][MR_CNTR_BIG], mr_cntr_local[MR_CNTR_BIG];

/* One atomic on the first 8 bytes of key's region, FI_UINT64: a fetching
 * one (op), or with compare != NULL a compare one (FI_CSWAP); the old value
 * into *old. Waits for its completion. */
static int self_fetch_atomic(struct self_ep *s, struct fid_cq *cq_tx, enum fi_op op,
			     uint64_t operand, const uint64_t *compare, uint64_t key,
			     uint64_t *old, void *ctx)
{
	struct fi_cq_msg_entry tx;
	ssize_t ret;

	do {
		ret = compare ?
			fi_compare_atomic(s->ep, &operand, 1, NULL, compare, NULL,
					  old, NULL, s->self, 0, key, FI_UINT64,
					  FI_CSWAP, ctx) :
			fi_fetch_atomic(s->ep, &operand, 1, NULL, old, NULL, s->self,
					0, key, FI_UINT64, op, ctx);
		if (ret == -FI_EAGAIN)
			fi_cq_read(cq_tx, &tx, 0);
	} while (ret == -FI_EAGAIN);
	return ret ? (int) ret : self_wait(cq_tx, ctx);
}

/*
 * Atomics on regions with counters (fi_mr(3): FI_REMOTE_WRITE counts every
 * atomic that modifies the region, fetching and compare ones included, as
 * SOS's counter of what it received needs): a fetch-add and a
 * compare-swap count on the write counter, an FI_ATOMIC_READ does not; on
 * the region counted both ways a fetch-add (a read and a write) counts
 * once. Completions are delivery complete, so the target has counted
 * before the initiator's completion. cw and crw hold 2 and 4 on entry.
 */
static void test_mr_cntr_atomics(struct self_ep *s, struct fid_cq *cq_tx,
				 struct fid_cntr *cw, struct fid_cntr *crw)
{
	uint64_t before, old = 0, seen, compare;
	int ctx, ret;

	memcpy(&before, mr_cntr_win[0], sizeof(before));
	ret = self_fetch_atomic(s, cq_tx, FI_SUM, 5, NULL, 0x7001, &old, &ctx);
	memcpy(&seen, mr_cntr_win[0], sizeof(seen));
	check(ret == 0 && old == before && seen == before + 5,
	      "fetch-add 5 on the write-counted region: %d, old %#" PRIx64
	      " (want %#" PRIx64 "), now %#" PRIx64, ret, old, before, seen);
	check(fi_cntr_read(cw) == 3 && fi_cntr_readerr(cw) == 0,
	      "a fetch-add modifies the region: its write counter 3 (read %"
	      PRIu64 ")", fi_cntr_read(cw));
	ret = self_fetch_atomic(s, cq_tx, FI_ATOMIC_READ, 0, NULL, 0x7001, &old, &ctx);
	check(ret == 0 && old == before + 5, "FI_ATOMIC_READ: %d, %#" PRIx64, ret, old);
	check(fi_cntr_read(cw) == 3, "FI_ATOMIC_READ does not count on the write "
	      "counter (read %" PRIu64 ")", fi_cntr_read(cw));
	compare = before + 5;
	ret = self_fetch_atomic(s, cq_tx, FI_CSWAP, 0x5a5a, &compare, 0x7001, &old, &ctx);
	memcpy(&seen, mr_cntr_win[0], sizeof(seen));
	check(ret == 0 && old == before + 5 && seen == 0x5a5a,
	      "compare-swap on the write-counted region: %d, now %#" PRIx64, ret, seen);
	check(fi_cntr_read(cw) == 4, "a compare-swap counts on the write counter: 4 "
	      "(read %" PRIu64 ")", fi_cntr_read(cw));
	ret = self_fetch_atomic(s, cq_tx, FI_SUM, 1, NULL, 0x7002, &old, &ctx);
	check(ret == 0, "fetch-add on the region counted both ways: %d", ret);
	check(fi_cntr_read(crw) == 5, "it counts once there: 5 (read %" PRIu64 ")",
	      fi_cntr_read(crw));
}

/*
 * fi_mr_bind to counters (FI_RMA_EVENT): a region counts the remote
 * accesses of the kinds it was bound for, each once, whatever the path
 * (inline or striped rendezvous), on an endpoint writing to and reading
 * from its own regions. Counts are exact; data is checked byte for byte.
 */

static void test_mr_cntr(struct fid_domain *domain, struct fi_info *info)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_MSG };
	struct fid_cntr *cw = NULL, *crw = NULL, *other = NULL;
	struct fid_mr *mw = NULL, *mrw = NULL;
	struct fid_cq *cq_tx = NULL, *cq_rx = NULL;
	struct self_ep s = { 0 };
	size_t sizes[2] = { 100, MR_CNTR_BIG }, i;
	int ctx, ret;

	if ((ret = open_cntr(domain, FI_WAIT_UNSPEC, &cw)) ||
	    (ret = open_cntr(domain, FI_WAIT_UNSPEC, &crw)) ||
	    (ret = open_cntr(domain, FI_WAIT_UNSPEC, &other)) ||
	    (ret = fi_mr_reg(domain, mr_cntr_win[0], MR_CNTR_BIG,
			     FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0x7001, 0, &mw, NULL)) ||
	    (ret = fi_mr_reg(domain, mr_cntr_win[1], MR_CNTR_BIG,
			     FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0x7002, 0, &mrw, NULL)) ||
	    (ret = fi_cq_open(domain, &attr, &cq_tx, NULL)) ||
	    (ret = fi_cq_open(domain, &attr, &cq_rx, NULL))) {
		check_what(false, "counters, regions and CQs for RMA events", "%s",
			   fi_strerror(-ret));
		goto out;
	}
	check_what(fi_mr_bind(mw, &cw->fid, FI_REMOTE_WRITE | FI_SEND) == -FI_EBADFLAGS,
		   "fi_mr_bind with FI_SEND: -FI_EBADFLAGS", NULL);
	check_what(fi_mr_bind(mw, &cw->fid, 0) == -FI_EINVAL,
		   "fi_mr_bind without a kind of access: -FI_EINVAL", NULL);
	check_what(fi_mr_bind(mw, &cq_tx->fid, FI_REMOTE_WRITE) == -FI_EINVAL,
		   "fi_mr_bind to a CQ: -FI_EINVAL", NULL);
	check_what(fi_mr_bind(mw, &cw->fid, FI_REMOTE_WRITE) == 0,
		   "bind a write counter", NULL);
	check_what(fi_mr_bind(mw, &other->fid, FI_REMOTE_READ) == -FI_EBUSY,
		   "a second counter on one region: -FI_EBUSY", NULL);
	check_what(fi_mr_bind(mrw, &crw->fid, FI_REMOTE_WRITE) == 0 &&
		   fi_mr_bind(mrw, &crw->fid, FI_REMOTE_READ) == 0,
		   "bind a counter for writes, then for reads too", NULL);

	ret = self_ep_open(domain, info, cq_tx, cq_rx, &s);
	check_what(ret == 0, "an endpoint that reaches its own regions", "%s",
		   fi_strerror(-ret));
	if (ret)
		goto out;
	for (i = 0; i < 2; i++) {
		size_t len = sizes[i];
		uint64_t seed = 0x70 + i;

		check_pattern_fill(mr_cntr_local, len, seed);
		ret = self_rma(&s, cq_tx, true, mr_cntr_local, len, 0x7001, &ctx);
		check(ret == 0 && check_pattern_mismatch(mr_cntr_win[0], len, seed) == len,
		      "write %zu bytes to the write-counted region: %d, byte for byte",
		      len, ret);
		ret = fi_cntr_wait(cw, i + 1, 10000);
		check(ret == 0 && fi_cntr_read(cw) == i + 1 && fi_cntr_readerr(cw) == 0,
		      "its counter: %zu (wait %d, read %" PRIu64 ")", i + 1, ret,
		      fi_cntr_read(cw));
		memset(mr_cntr_local, 0, len);
		ret = self_rma(&s, cq_tx, false, mr_cntr_local, len, 0x7001, &ctx);
		check(ret == 0 && check_pattern_mismatch(mr_cntr_local, len, seed) == len,
		      "read %zu bytes back: %d, byte for byte", len, ret);
		check(fi_cntr_read(cw) == i + 1,
		      "a read does not count on a write counter (%" PRIu64 ")",
		      fi_cntr_read(cw));

		check_pattern_fill(mr_cntr_local, len, seed + 8);
		ret = self_rma(&s, cq_tx, true, mr_cntr_local, len, 0x7002, &ctx);
		check(ret == 0, "write %zu bytes to the region counted both ways: %d",
		      len, ret);
		ret = self_rma(&s, cq_tx, false, mr_cntr_local, len, 0x7002, &ctx);
		check(ret == 0 && check_pattern_mismatch(mr_cntr_local, len, seed + 8) == len,
		      "read them back: %d, byte for byte", ret);
		ret = fi_cntr_wait(crw, 2 * (i + 1), 10000);
		check(ret == 0 && fi_cntr_read(crw) == 2 * (i + 1),
		      "its counter counts the write and the read: %zu (read %" PRIu64 ")",
		      2 * (i + 1), fi_cntr_read(crw));
	}
	test_mr_cntr_atomics(&s, cq_tx, cw, crw);
	check(fi_cntr_read(other) == 0, "the refused counter counted nothing");
	check_what(fi_close(&cw->fid) == -FI_EBUSY,
		   "a counter a region counts on refuses to close", NULL);
out:
	if (s.ep)
		check_what(fi_close(&s.ep->fid) == 0, "close the endpoint", NULL);
	if (s.av)
		fi_close(&s.av->fid);
	if (mw)
		check_what(fi_close(&mw->fid) == 0, "close the regions", NULL);
	if (mrw)
		fi_close(&mrw->fid);
	if (cw)
		check_what(fi_close(&cw->fid) == 0, "then their counters close", NULL);
	if (crw)
		fi_close(&crw->fid);
	if (other)
		fi_close(&other->fid);
	if (cq_tx)
		fi_close(&cq_tx->fid);
	if (cq_rx)
		fi_close(&cq_rx->fid);
}

/* A second domain whose registrations complete on an EQ (FI_REG_MR). */
static void test_mr_async(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_domain *domain)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD };
	struct fid_domain *domain2 = NULL;
	struct fid_eq *eq = NULL, *eq2 = NULL;
	struct fid_mr *mr = NULL, *mr_d1 = NULL, *dup = NULL;
	struct fi_eq_entry entry = { 0 };
	uint32_t event = 0;
	int fd = -1, ret;
	ssize_t n;

	if ((ret = fi_domain(fabric, info, &domain2, NULL)) ||
	    (ret = fi_eq_open(fabric, &attr, &eq, NULL)) ||
	    (ret = fi_eq_open(fabric, &attr, &eq2, NULL)) ||
	    (ret = fi_control(&eq->fid, FI_GETWAIT, &fd))) {
		check_what(false, "a second domain and two EQs", "%s", fi_strerror(-ret));
		goto out;
	}
	ret = fi_domain_bind(domain2, &eq->fid, MRAIL_BIND_REG_MR);
	check_what(ret == 0, "bind an EQ to the domain with FI_REG_MR", "%d", ret);
	check_what(fi_domain_bind(domain2, &eq2->fid, 0) == -FI_EINVAL,
	      "a second EQ is refused", NULL);
	check_what(fi_close(&eq->fid) == -FI_EBUSY, "the bound EQ refuses to close", NULL);

	ret = fi_mr_reg(domain2, region[0], 256, FI_REMOTE_READ, 0, 0x1001, 0, &mr,
			(void *) 0x4001);
	check_what(ret == 0 && readable(fd), "register: 0, and the EQ's fd turns readable",
	      "returned %d", ret);
	n = fi_eq_read(eq, &event, &entry, sizeof(entry), 0);
	check_what(n == sizeof(entry) && event == FI_MR_COMPLETE && mr &&
	      entry.fid == &mr->fid && entry.context == (void *) 0x4001,
	      "FI_MR_COMPLETE names the MR and its context", "returned %zd, event %u", n,
	      event);
	ret = fi_mr_reg(domain, region[1], 256, FI_REMOTE_READ, 0, 0x1001, 0, &mr_d1,
			NULL);
	check_what(ret == 0, "keys are per domain: 0x1001 in the first domain too", "%d", ret);
	ret = fi_mr_reg(domain2, region[1], 256, FI_REMOTE_READ, 0, 0x1001, 0, &dup,
			NULL);
	check_what(ret == -FI_ENOKEY &&
	      fi_eq_read(eq, &event, &entry, sizeof(entry), 0) == -FI_EAGAIN,
	      "a refused registration reports no event", "returned %d", ret);
	if (mr_d1)
		fi_close(&mr_d1->fid);
	if (mr)
		check_what(fi_close(&mr->fid) == 0, "close the MR", NULL);
	check_what(fi_close(&domain2->fid) == 0, "close the second domain", NULL);
	domain2 = NULL;
	check_what(fi_close(&eq->fid) == 0, "then its EQ closes", NULL);
	eq = NULL;
out:
	if (domain2)
		fi_close(&domain2->fid);
	if (eq)
		fi_close(&eq->fid);
	if (eq2)
		fi_close(&eq2->fid);
}

void test_mr(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain *domain)
{
	test_mr_reg(domain);
	test_mr_many(domain);
	test_mr_async(fabric, info, domain);
	test_mr_cntr(domain, info);
}
