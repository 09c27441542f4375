/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/coll.c and the COLL codec of core/wire.c: AV set
 * lists, ranks and group ids, the broadcast tree, and whole collectives
 * simulated over N ranks in one process, with signals delivered in random
 * order, ranks starting at random times and one rank starting last: no
 * barrier may complete anywhere before the last rank started, broadcasts
 * and allreduces must end with the exact expected bytes at every rank.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "coll.h"
#include "wire.h"

/* ---- wire ---- */

static size_t coll_msg(uint8_t *buf, const struct mrail_wire_coll *c,
		       const void *data)
{
	int ret = mrail_wire_coll_encode(c, buf, MRAIL_WIRE_COLL_LEN);

	cr_assert_eq(ret, MRAIL_WIRE_COLL_LEN);
	if (c->data_len)
		memcpy(buf + MRAIL_WIRE_COLL_LEN, data, c->data_len);
	return MRAIL_WIRE_COLL_LEN + c->data_len;
}

Test(coll_wire, round_trip)
{
	struct mrail_wire_coll c = {
		.group = 0x1234, .seq = 7, .counter = 3,
		.kind = MRAIL_WIRE_COLL_ALLREDUCE, .datatype = FI_INT64,
		.op = FI_SUM, .data_len = 16,
	}, d;
	uint8_t buf[128], data[16];
	const uint8_t *out;
	char err[256];
	size_t len;

	memset(data, 0xab, sizeof(data));
	len = coll_msg(buf, &c, data);
	cr_assert_eq(mrail_wire_coll_decode(buf, len, &d, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(d.group, c.group);
	cr_assert_eq(d.seq, 7);
	cr_assert_eq(d.counter, 3);
	cr_assert_eq(d.kind, MRAIL_WIRE_COLL_ALLREDUCE);
	cr_assert_eq(d.datatype, FI_INT64);
	cr_assert_eq(d.op, FI_SUM);
	cr_assert_eq(d.data_len, 16);
	cr_assert_eq(out, buf + MRAIL_WIRE_COLL_LEN);
}

Test(coll_wire, refusals)
{
	struct mrail_wire_coll good = {
		.group = 1, .kind = MRAIL_WIRE_COLL_BARRIER,
	}, c, d;
	uint8_t buf[128];
	const uint8_t *out;
	char err[256];
	size_t len;

	c = good; c.group = 0;
	cr_assert_eq(mrail_wire_coll_encode(&c, buf, sizeof(buf)), -EINVAL);
	c = good; c.counter = MRAIL_WIRE_COLL_MAX_COUNTERS;
	cr_assert_eq(mrail_wire_coll_encode(&c, buf, sizeof(buf)), -EINVAL);
	c = good; c.kind = 4;
	cr_assert_eq(mrail_wire_coll_encode(&c, buf, sizeof(buf)), -EINVAL);
	c = good; c.data_len = 8;
	cr_assert_eq(mrail_wire_coll_encode(&c, buf, sizeof(buf)), -EINVAL);
	c = good; c.kind = MRAIL_WIRE_COLL_BCAST; c.op = FI_SUM;
	cr_assert_eq(mrail_wire_coll_encode(&c, buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(mrail_wire_coll_encode(&good, buf, 8), -ENOSPC);

	len = coll_msg(buf, &good, NULL);
	cr_assert_eq(mrail_wire_coll_decode(buf, len - 1, &d, &out, err, sizeof(err)), -EINVAL);
	/* Data the descriptor does not announce. */
	cr_assert_eq(mrail_wire_coll_decode(buf, len + 4, &d, &out, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "bytes of data"), "%s", err);
	buf[23] = 1;
	cr_assert_eq(mrail_wire_coll_decode(buf, len, &d, &out, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "reserved"), "%s", err);
	buf[23] = 0;
	buf[20] = 9;
	cr_assert_eq(mrail_wire_coll_decode(buf, len, &d, &out, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "kind 9"), "%s", err);
	cr_assert_eq(d.group, 0, "refused: zeroed");
}

Test(coll_wire, header_op_12)
{
	struct mrail_wire_hdr hdr = {
		.op = MRAIL_OP_COLL, .sender = 5, .payload_len = MRAIL_WIRE_COLL_LEN,
	}, out;
	struct mrail_wire_limits limits = {
		.max_eager = 16000, .max_msg = 1 << 20, .rail_count = 2,
	};
	uint8_t buf[MRAIL_WIRE_HDR_LEN + MRAIL_WIRE_COLL_LEN] = { 0 };
	char err[256];

	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), MRAIL_WIRE_HDR_LEN);
	cr_assert_eq(mrail_wire_hdr_decode(buf, sizeof(buf), &limits, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.op, MRAIL_OP_COLL);
	cr_assert_not(mrail_wire_needs_credit(buf, sizeof(buf)), "COLL spends no credit");
	/* Numbered with the sender's requests, so a copy runs once. */
	cr_assert(mrail_wire_number(buf, sizeof(buf), 3));
	cr_assert_eq(mrail_wire_hdr_decode(buf, sizeof(buf), &limits, &out, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(out.seq, 3);
	/* Too short a payload, or flags it does not have. */
	cr_assert_eq(mrail_wire_hdr_decode(buf, MRAIL_WIRE_HDR_LEN + 8, &limits, &out, err, sizeof(err)), -EINVAL);
	hdr.flags = MRAIL_WIRE_F_AGAIN;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), -EINVAL);
	hdr.flags = 0;
	hdr.payload_len = MRAIL_WIRE_COLL_LEN + MRAIL_WIRE_COLL_MAX_DATA + 1;
	cr_assert_eq(mrail_wire_hdr_encode(&hdr, buf, sizeof(buf)), -EINVAL);
}

/* ---- lists, ranks, ids ---- */

Test(coll_list, set_operations_keep_order)
{
	uint64_t a[8] = { 0 }, b[3] = { 9, 3, 7 };
	size_t n = 0, i;
	uint64_t want_union[] = { 5, 3, 1, 9, 7 };

	cr_assert_eq(mrail_addr_list_insert(a, &n, 8, 5), 0);
	cr_assert_eq(mrail_addr_list_insert(a, &n, 8, 3), 0);
	cr_assert_eq(mrail_addr_list_insert(a, &n, 8, 1), 0);
	cr_assert_eq(mrail_addr_list_insert(a, &n, 8, 3), -EALREADY);
	cr_assert_eq(mrail_addr_list_union(a, &n, 8, b, 3), 0);
	cr_assert_eq(n, 5);
	for (i = 0; i < n; i++)
		cr_assert_eq(a[i], want_union[i]);
	cr_assert_eq(mrail_addr_list_union(a, &n, 5, (uint64_t[]){ 11 }, 1), -ENOSPC);
	cr_assert_eq(n, 5);
	mrail_addr_list_intersect(a, &n, (uint64_t[]){ 7, 5, 1 }, 3);
	cr_assert_eq(n, 3);
	cr_assert(a[0] == 5 && a[1] == 1 && a[2] == 7);
	mrail_addr_list_diff(a, &n, (uint64_t[]){ 1 }, 1);
	cr_assert(n == 2 && a[0] == 5 && a[1] == 7);
	cr_assert_eq(mrail_addr_list_remove(a, &n, 5), 0);
	cr_assert_eq(mrail_addr_list_remove(a, &n, 5), -ENOENT);
	cr_assert(n == 1 && a[0] == 7);
}

Test(coll_list, range)
{
	char err[256];

	cr_assert_eq(mrail_addr_range_len(0, 9, 1, 0, err, sizeof(err)), 10);
	cr_assert_eq(mrail_addr_range_len(2, 9, 3, 3, err, sizeof(err)), 3);
	cr_assert_eq(mrail_addr_range_len(2, 9, 3, 2, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "more than count"), "%s", err);
	cr_assert_eq(mrail_addr_range_len(0, 9, 0, 0, err, sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_addr_range_len(5, 4, 1, 0, err, sizeof(err)), -EINVAL);
}

Test(coll_group, same_ranks_and_id_whatever_the_order)
{
	uint64_t k1[] = { 40, 10, 30, 20 }, k2[] = { 20, 30, 10, 40 };
	uint64_t s1[4], s2[4];
	uint32_t o1[4], o2[4];
	char err[256];
	int i;

	cr_assert_eq(mrail_coll_rank_members(k1, 4, o1, err, sizeof(err)), 0);
	cr_assert_eq(mrail_coll_rank_members(k2, 4, o2, err, sizeof(err)), 0);
	for (i = 0; i < 4; i++) {
		s1[i] = k1[o1[i]];
		s2[i] = k2[o2[i]];
		cr_assert_eq(s1[i], (uint64_t) (i + 1) * 10);
		cr_assert_eq(s1[i], s2[i]);
	}
	cr_assert_eq(mrail_coll_group_id(s1, 4, 0), mrail_coll_group_id(s2, 4, 0));
	cr_assert_neq(mrail_coll_group_id(s1, 4, 0), mrail_coll_group_id(s1, 4, 1),
		      "a second join of the same members is another group");
	cr_assert_neq(mrail_coll_group_id(s1, 3, 0), mrail_coll_group_id(s1, 4, 0));
	cr_assert_eq(mrail_coll_rank_members((uint64_t[]){ 1, 2, 1 }, 3, o1, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "same endpoint"), "%s", err);
	cr_assert_eq(mrail_coll_rank_members((uint64_t[]){ 1, 0 }, 2, o1, err, sizeof(err)), -EINVAL);
}

Test(coll_valid, ops_and_types)
{
	size_t size, max;

	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_BARRIER, FI_NOOP, FI_VOID, &size, &max), 0);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_BARRIER, FI_SUM, FI_INT32, &size, &max), -EOPNOTSUPP);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_ALLREDUCE, FI_SUM, FI_DOUBLE, &size, &max), 0);
	cr_assert_eq(size, 8);
	cr_assert_eq(max, MRAIL_WIRE_COLL_MAX_DATA / 8);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_ALLREDUCE, FI_BXOR, FI_UINT16, &size, &max), 0);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_ALLREDUCE, FI_BXOR, FI_FLOAT, &size, &max), -EOPNOTSUPP);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_ALLREDUCE, FI_CSWAP, FI_INT32, &size, &max), -EOPNOTSUPP);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_ALLREDUCE, FI_ATOMIC_WRITE, FI_INT32, &size, &max), -EOPNOTSUPP);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_BCAST, FI_NOOP, FI_UINT8, &size, &max), 0);
	cr_assert_eq(max, MRAIL_WIRE_COLL_MAX_DATA);
	cr_assert_eq(mrail_coll_valid(MRAIL_WIRE_COLL_BCAST, FI_NOOP, FI_VOID, &size, &max), -EOPNOTSUPP);
}

Test(coll_schedule, bcast_tree_reaches_everyone_once)
{
	struct mrail_barrier_schedule s;
	uint32_t n, root, r, i, got[16];
	char err[256];

	for (n = 1; n <= 16; n++) {
		for (root = 0; root < n; root++) {
			memset(got, 0, sizeof(got));
			for (r = 0; r < n; r++) {
				cr_assert_eq(mrail_coll_schedule(MRAIL_WIRE_COLL_BCAST, 0, 0, n, r, root, &s, err, sizeof(err)), 0, "%s", err);
				cr_assert_eq(s.n_steps, 1);
				cr_assert_eq(s.steps[0].wait_count, r == root ? 0u : 1u);
				for (i = 0; i < s.steps[0].n_sends; i++) {
					cr_assert_eq(s.steps[0].sends[i].counter, 0);
					got[s.steps[0].sends[i].peer]++;
				}
			}
			for (r = 0; r < n; r++)
				cr_assert_eq(got[r], r == root ? 0u : 1u, "n %u root %u rank %u", n, root, r);
		}
	}
	cr_assert_eq(mrail_coll_schedule(MRAIL_WIRE_COLL_BCAST, 0, 0, 4, 1, 4, &s, err, sizeof(err)), -EINVAL);
}

/* ---- simulated collectives ---- */

#define SIM_MAX_N 16
#define SIM_MAX_OPS 3
#define SIM_MAX_MSGS 4096

struct sim_msg {
	uint32_t to;
	struct mrail_wire_coll desc;
	uint8_t data[MRAIL_WIRE_COLL_MAX_DATA];
};

struct sim {
	uint32_t n;
	struct mrail_coll_inst inst[SIM_MAX_N][SIM_MAX_OPS];
	uint32_t cur[SIM_MAX_N];	/* operation each rank is in */
	struct sim_msg *msgs;
	size_t n_msgs;
	uint32_t from;			/* the rank running now */
};

static int sim_send(void *arg, uint32_t peer, const struct mrail_wire_coll *desc,
		    const void *data)
{
	struct sim *sim = arg;
	struct sim_msg *m;

	cr_assert_lt(sim->n_msgs, SIM_MAX_MSGS);
	cr_assert_lt(peer, sim->n);
	cr_assert_neq(peer, sim->from, "nobody signals itself");
	m = &sim->msgs[sim->n_msgs++];
	m->to = peer;
	m->desc = *desc;
	if (desc->data_len)
		memcpy(m->data, data, desc->data_len);
	return 0;
}

struct sim_op {
	enum mrail_wire_coll_kind kind;
	enum mrail_barrier_alg alg;
	uint32_t degree;
	uint32_t root;
	enum fi_datatype datatype;
	enum fi_op op;
	size_t count;
};

/* Rank r's input to operation o (broadcast: the root's buffer). */
static void sim_input(const struct sim_op *op, uint32_t r, uint32_t o, void *buf)
{
	size_t i;

	for (i = 0; i < op->count; i++) {
		switch (op->datatype) {
		case FI_INT64:
			((int64_t *) buf)[i] = (int64_t) (r + 1) * 1000 - (int64_t) i * 7 + o;
			break;
		case FI_DOUBLE:
			((double *) buf)[i] = (double) (r + 1) * 0.5 + (double) i + o;
			break;
		case FI_UINT32:
			((uint32_t *) buf)[i] = (1u << (r % 32)) ^ (uint32_t) (i * 0x9e37u) ^ o;
			break;
		default:
			cr_assert_fail("datatype %d not simulated", op->datatype);
		}
	}
}

/* What every rank must end with. */
static void sim_expect(const struct sim_op *op, uint32_t n, uint32_t o, void *want)
{
	uint8_t in[MRAIL_WIRE_COLL_MAX_DATA];
	size_t i;
	uint32_t r;

	if (op->kind == MRAIL_WIRE_COLL_BCAST) {
		sim_input(op, op->root, o, want);
		return;
	}
	sim_input(op, 0, o, want);
	for (r = 1; r < n; r++) {
		sim_input(op, r, o, in);
		for (i = 0; i < op->count; i++) {
			switch (op->datatype) {
			case FI_INT64: {
				int64_t *w = want, *v = (int64_t *) in;
				w[i] = op->op == FI_SUM ? w[i] + v[i] :
				       op->op == FI_MIN ? (v[i] < w[i] ? v[i] : w[i]) :
				       (v[i] > w[i] ? v[i] : w[i]);
				break;
			}
			case FI_DOUBLE:
				((double *) want)[i] += ((double *) in)[i];
				break;
			case FI_UINT32:
				((uint32_t *) want)[i] ^= ((uint32_t *) in)[i];
				break;
			default:
				break;
			}
		}
	}
}

static void sim_start(struct sim *sim, const struct sim_op *op, uint32_t r)
{
	struct mrail_barrier_schedule s;
	uint8_t in[MRAIL_WIRE_COLL_MAX_DATA];
	uint32_t o = sim->cur[r];
	char err[256];

	cr_assert_eq(mrail_coll_schedule(op->kind, op->alg, op->degree, sim->n, r,
					 op->root, &s, err, sizeof(err)), 0, "%s", err);
	if (op->count)
		sim_input(op, r, o, in);
	cr_assert_eq(mrail_coll_inst_start(&sim->inst[r][o], op->kind, &s,
					   (uint8_t) op->datatype, (uint8_t) op->op,
					   op->count, op->count ? in : NULL, err,
					   sizeof(err)), 0, "%s", err);
	sim->from = r;
	mrail_coll_inst_run(&sim->inst[r][o], sim_send, sim);
}

/*
 * Runs n_ops operations of op back to back over n ranks: delivers signals
 * in random order and starts ranks at random moments, except rank late,
 * which starts each operation only once nothing else can happen. Checks
 * that no rank completes a barrier or an allreduce before every rank
 * started it.
 */
static void simulate(uint32_t n, const struct sim_op *op, uint32_t n_ops,
		     uint32_t late, uint64_t seed)
{
	static struct sim sim;
	uint32_t started[SIM_MAX_OPS] = { 0 }, r, o, pick, ready[SIM_MAX_N];
	uint8_t want[MRAIL_WIRE_COLL_MAX_DATA];
	uint64_t rng = seed;
	struct sim_msg m;
	size_t n_ready;
	char err[256];

	memset(&sim, 0, offsetof(struct sim, inst));
	sim.n = n;
	sim.msgs = malloc(SIM_MAX_MSGS * sizeof(*sim.msgs));
	cr_assert(sim.msgs);
	sim.n_msgs = 0;
	for (r = 0; r < n; r++) {
		sim.cur[r] = 0;
		for (o = 0; o < n_ops; o++)
			mrail_coll_inst_init(&sim.inst[r][o], 42, o);
	}
	for (;;) {
		/* Ranks that may start their next operation. */
		n_ready = 0;
		for (r = 0; r < n; r++) {
			o = sim.cur[r];
			if (o < n_ops && !sim.inst[r][o].started &&
			    (r != late || (!sim.n_msgs && started[o] == n - 1)))
				ready[n_ready++] = r;
		}
		if (!n_ready && !sim.n_msgs)
			break;
		if (n_ready && (!sim.n_msgs || test_rng_below(&rng, 3) == 0)) {
			r = ready[test_rng_below(&rng, n_ready)];
			started[sim.cur[r]]++;
			sim_start(&sim, op, r);
		} else {
			pick = (uint32_t) test_rng_below(&rng, sim.n_msgs);
			m = sim.msgs[pick];
			sim.msgs[pick] = sim.msgs[--sim.n_msgs];
			r = m.to;
			cr_assert_eq(mrail_coll_inst_arrive(&sim.inst[r][m.desc.seq], &m.desc,
							    m.desc.data_len ? m.data : NULL,
							    err, sizeof(err)), 0, "%s", err);
			sim.from = r;
			mrail_coll_inst_run(&sim.inst[r][m.desc.seq], sim_send, &sim);
		}
		/* Completions: none before the last rank started. */
		for (r = 0; r < n; r++) {
			o = sim.cur[r];
			if (o < n_ops && sim.inst[r][o].done) {
				/* A broadcast's root may leave at once. */
				if (op->kind != MRAIL_WIRE_COLL_BCAST)
					cr_assert_eq(started[o], n, "n %u: rank %u left "
						     "operation %u while only %u ranks had "
						     "entered", n, r, o, started[o]);
				sim.cur[r]++;
			}
		}
	}
	for (r = 0; r < n; r++) {
		cr_assert_eq(sim.cur[r], n_ops, "n %u: rank %u finished %u of %u operations",
			     n, r, sim.cur[r], n_ops);
		for (o = 0; o < n_ops; o++) {
			cr_assert_eq(sim.inst[r][o].err, 0);
			if (op->count) {
				sim_expect(op, n, o, want);
				cr_assert_eq(memcmp(sim.inst[r][o].acc, want,
						    sim.inst[r][o].data_len), 0,
					     "n %u: rank %u has the wrong result of op %u", n, r, o);
			}
			mrail_coll_inst_fini(&sim.inst[r][o]);
		}
	}
	free(sim.msgs);
}

Test(coll_sim, barriers_every_algorithm_late_rank)
{
	struct sim_op ops[] = {
		{ .kind = MRAIL_WIRE_COLL_BARRIER, .alg = MRAIL_BARRIER_DISSEMINATION },
		{ .kind = MRAIL_WIRE_COLL_BARRIER, .alg = MRAIL_BARRIER_PAIRWISE },
		{ .kind = MRAIL_WIRE_COLL_BARRIER, .alg = MRAIL_BARRIER_GATHER, .degree = 2 },
		{ .kind = MRAIL_WIRE_COLL_BARRIER, .alg = MRAIL_BARRIER_GATHER, .degree = 3 },
	};
	uint32_t n, a, late;

	for (a = 0; a < 4; a++)
		for (n = 1; n <= 16; n++)
			for (late = 0; late < n; late += (n > 4 ? 3 : 1))
				simulate(n, &ops[a], 3, late, 0x9e3779b97f4a7c15ULL + n * 31 + late);
}

Test(coll_sim, broadcast_from_every_root)
{
	struct sim_op op = {
		.kind = MRAIL_WIRE_COLL_BCAST, .datatype = FI_INT64, .count = 5,
	};
	uint32_t n;

	for (n = 1; n <= 16; n++)
		for (op.root = 0; op.root < n; op.root++)
			simulate(n, &op, 2, (op.root + 1) % n, 77 + n + op.root);
}

Test(coll_sim, allreduce_sum_min_max_bxor)
{
	struct sim_op ops[] = {
		{ .kind = MRAIL_WIRE_COLL_ALLREDUCE, .datatype = FI_INT64, .op = FI_SUM, .count = 4 },
		{ .kind = MRAIL_WIRE_COLL_ALLREDUCE, .datatype = FI_INT64, .op = FI_MIN, .count = 3 },
		{ .kind = MRAIL_WIRE_COLL_ALLREDUCE, .datatype = FI_INT64, .op = FI_MAX, .count = 3 },
		{ .kind = MRAIL_WIRE_COLL_ALLREDUCE, .datatype = FI_DOUBLE, .op = FI_SUM, .count = 6 },
		{ .kind = MRAIL_WIRE_COLL_ALLREDUCE, .datatype = FI_UINT32, .op = FI_BXOR, .count = 9 },
	};
	uint32_t n, a;

	for (a = 0; a < 5; a++)
		for (n = 1; n <= 16; n++)
			simulate(n, &ops[a], 2, n - 1, 1000 + a * 17 + n);
}

Test(coll_inst, early_overflow_and_kind_mismatch_refused)
{
	static struct mrail_coll_inst inst;
	struct mrail_barrier_schedule s;
	struct mrail_wire_coll d = {
		.group = 1, .seq = 0, .counter = 1, .kind = MRAIL_WIRE_COLL_BARRIER,
	};
	char err[256];
	uint32_t i;

	mrail_coll_inst_init(&inst, 1, 0);
	for (i = 0; i < MRAIL_COLL_EARLY_MAX; i++)
		cr_assert_eq(mrail_coll_inst_arrive(&inst, &d, NULL, err, sizeof(err)), 0);
	cr_assert_eq(mrail_coll_inst_arrive(&inst, &d, NULL, err, sizeof(err)), -EINVAL);
	mrail_coll_inst_fini(&inst);

	/* Started as a dissemination barrier of 4: counter 1 takes one. */
	mrail_coll_inst_init(&inst, 1, 0);
	cr_assert_eq(mrail_coll_schedule(MRAIL_WIRE_COLL_BARRIER, MRAIL_BARRIER_DISSEMINATION,
					 0, 4, 0, 0, &s, err, sizeof(err)), 0);
	cr_assert_eq(mrail_coll_inst_start(&inst, MRAIL_WIRE_COLL_BARRIER, &s, 0, 0, 0,
					   NULL, err, sizeof(err)), 0);
	cr_assert_eq(mrail_coll_inst_arrive(&inst, &d, NULL, err, sizeof(err)), 0);
	cr_assert_eq(mrail_coll_inst_arrive(&inst, &d, NULL, err, sizeof(err)), -EINVAL,
		     "a duplicate signal is refused");
	d.counter = 2;
	d.kind = MRAIL_WIRE_COLL_BCAST;
	d.datatype = FI_INT32;
	d.data_len = 4;
	cr_assert_eq(mrail_coll_inst_arrive(&inst, &d, (uint8_t[4]){ 0 }, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "kind"), "%s", err);
	d.kind = MRAIL_WIRE_COLL_BARRIER;
	d.datatype = 0;
	d.data_len = 0;
	d.counter = 7;
	cr_assert_eq(mrail_coll_inst_arrive(&inst, &d, NULL, err, sizeof(err)), -EINVAL,
		     "a counter past the schedule");
	mrail_coll_inst_fini(&inst);
}
