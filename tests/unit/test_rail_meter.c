/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/rail_meter.c: service rates from bytes over busy time,
 * on a simulated clock. First the meter alone (exact rates whatever the
 * window's edges, queue depth and idle gaps not counted, a stalled rail
 * carried over), then the meter feeding adaptive striping in a simulated
 * stream: rails serving their reads one after another (as a TCP connection
 * does), a fixed number of transfers split ahead, the shares moved once per
 * window as the provider does.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "rail_meter.h"
#include "stripe_policy.h"
#include "test_stripe_check.h"

#define MS 1000000ULL		/* nanoseconds */

static struct mrail_rail_sample samples[MRAIL_MAX_RAILS];

static double sample_rate(int rail)
{
	return (double) samples[rail].bytes / samples[rail].seconds;
}

/* ---- the meter alone ---- */

/* Skips every rail's warm-up (tested on its own below), so that a test
 * measures from its first read. */
static void warm_up(struct mrail_meter *m, size_t rails)
{
	for (size_t r = 0; r < rails; r++) {
		m->rail[r].warm = true;
		m->rail[r].warm_until_ns = 0;
	}
}

/*
 * Two rails, always busy, each with depth reads queued, served one after
 * another at rate (bytes per second) in reads of len: every window reports
 * exactly the rates, although the windows end in the middle of reads.
 */
Test(meter, steady_rates_are_exact_whatever_the_window_edges)
{
	const double rate[2] = { 1e8, 2.5e7 };
	const uint64_t len = 512 * KIB;
	uint64_t next_done[2], now, end = 2000 * MS;
	struct mrail_meter m;
	int reports = 0;

	cr_assert_eq(mrail_meter_init(&m, 2, 20 * MS, 1, 0), 0);
	for (int r = 0; r < 2; r++) {
		for (int k = 0; k < 4; k++)
			mrail_meter_start(&m, (size_t) r, 0);
		next_done[r] = (uint64_t) llround(len / rate[r] * 1e9);
	}
	/* The next event is the next completion on either rail. */
	while ((now = next_done[0] < next_done[1] ? next_done[0] : next_done[1]) < end) {
		for (int r = 0; r < 2; r++) {
			if (next_done[r] != now)
				continue;
			mrail_meter_done(&m, (size_t) r, len, now);
			mrail_meter_start(&m, (size_t) r, now);
			next_done[r] = now + (uint64_t) llround(len / rate[r] * 1e9);
		}
		if (mrail_meter_take(&m, now, samples) == 2) {
			reports++;
			for (int r = 0; r < 2; r++)
				cr_assert_float_eq(sample_rate(r), rate[r], 1e-6 * rate[r],
						   "report %d rail %d: %g", reports, r,
						   sample_rate(r));
		}
	}
	/* The slow rail completes every 21 ms: a report about every 21 ms. */
	cr_expect_geq(reports, 80, "%d reports", reports);
}

/*
 * Two rails of the same rate; rail 0 always has 8 reads queued, rail 1 one
 * at a time. Each read's time from posting to completion is 8 times longer
 * on rail 0 (what a per-stripe measure sees); the meter sees equal rates.
 */
Test(meter, a_deeper_queue_does_not_bias_the_rate)
{
	const double rate = 1e8;
	const uint64_t len = 256 * KIB;
	const uint64_t each = (uint64_t) llround(len / rate * 1e9);
	uint64_t posted[8], now = 0;
	struct mrail_meter m;
	double waited[2] = { 0, 0 };
	int head = 0, reports = 0;

	cr_assert_eq(mrail_meter_init(&m, 2, 20 * MS, 1, 0), 0);
	for (int k = 0; k < 8; k++) {
		mrail_meter_start(&m, 0, 0);
		posted[k] = 0;
	}
	mrail_meter_start(&m, 1, 0);
	/* Both rails finish a read every `each`: rail 0 its oldest, which
	 * waited behind 7 others, and rail 1 its only one. */
	for (int i = 0; i < 400; i++) {
		now += each;
		mrail_meter_done(&m, 0, len, now);
		waited[0] = (double) (now - posted[head]) / 1e9;
		posted[head] = now;
		head = (head + 1) % 8;
		mrail_meter_start(&m, 0, now);
		mrail_meter_done(&m, 1, len, now);
		waited[1] = (double) each / 1e9;
		mrail_meter_start(&m, 1, now);
		if (mrail_meter_take(&m, now, samples) == 2) {
			reports++;
			cr_assert_float_eq(sample_rate(0), rate, 1e-6 * rate);
			cr_assert_float_eq(sample_rate(1), rate, 1e-6 * rate);
		}
	}
	cr_expect_gt(reports, 10);
	cr_expect_float_eq(waited[0], 8 * waited[1], 1e-9,
			   "per-read times %g and %g", waited[0], waited[1]);
}

/* Rail 1 is idle half the time (one read, then a gap as long): idle time
 * is not service time, so it still measures its rate. */
Test(meter, idle_time_is_not_counted)
{
	const double rate = 5e7;
	const uint64_t len = 64 * KIB;
	const uint64_t each = (uint64_t) llround(len / rate * 1e9);
	uint64_t now = 0;
	struct mrail_meter m;
	int reports = 0;

	cr_assert_eq(mrail_meter_init(&m, 2, 10 * MS, 1, 0), 0);
	for (int i = 0; i < 200; i++) {
		mrail_meter_start(&m, 0, now);
		mrail_meter_start(&m, 1, now);
		now += each;
		mrail_meter_done(&m, 0, len, now);
		mrail_meter_done(&m, 1, len, now);
		now += each;	/* both idle */
		if (mrail_meter_take(&m, now, samples) == 2) {
			reports++;
			cr_assert_float_eq(sample_rate(1), rate, 1e-6 * rate);
		}
	}
	cr_expect_gt(reports, 10);
}

/* A rail with a read that takes long completes nothing for many windows:
 * no report until it does (one rail alone says nothing), and then its rate
 * counts all the busy time the read took. */
Test(meter, a_stalled_rail_reports_once_its_read_ends_with_all_its_time)
{
	struct mrail_meter m;
	uint64_t now = 0;

	cr_assert_eq(mrail_meter_init(&m, 2, 20 * MS, 1, 0), 0);
	warm_up(&m, 2);
	mrail_meter_start(&m, 1, 0);	/* 1 MiB at 1 MB/s */
	for (int i = 0; i < 100; i++) {	/* rail 0: 100 KiB per 10 ms */
		mrail_meter_start(&m, 0, now);
		now += 10 * MS;
		mrail_meter_done(&m, 0, 100 * KIB, now);
		cr_assert_eq(mrail_meter_take(&m, now, samples), 0, "at %llu ms",
			     (unsigned long long) (now / MS));
	}
	now += 48576 * (MS / 1000);	/* 1 MiB at 1e6 B/s: 1.048576 s */
	mrail_meter_done(&m, 1, MIB, now);
	cr_assert_eq(mrail_meter_take(&m, now, samples), 2);
	cr_expect_float_eq(sample_rate(1), 1e6, 1e-3);
	cr_expect_eq(samples[0].bytes, 100 * 100 * KIB);
	cr_expect_float_eq(samples[0].seconds, 1.0, 1e-9);
}

Test(meter, windows_and_restart)
{
	struct mrail_meter m;

	/* No report before the window is over, nor with one rail. */
	cr_assert_eq(mrail_meter_init(&m, 3, 20 * MS, 1, 1000 * MS), 0);
	warm_up(&m, 3);
	mrail_meter_start(&m, 0, 1000 * MS);
	mrail_meter_start(&m, 2, 1000 * MS);
	mrail_meter_done(&m, 0, 4096, 1010 * MS);
	mrail_meter_done(&m, 2, 8192, 1010 * MS);
	cr_expect_eq(mrail_meter_take(&m, 1010 * MS, samples), 0);
	cr_assert_eq(mrail_meter_take(&m, 1020 * MS, samples), 2);
	cr_expect_eq(samples[0].bytes, 4096);
	cr_expect_float_eq(samples[0].seconds, 0.01, 1e-12);
	cr_expect_eq(samples[1].bytes, 0);	/* never used: not reported */
	cr_expect_eq(samples[1].seconds, 0.0);
	cr_expect_eq(samples[2].bytes, 8192);
	/* A clock that steps back reports nothing. */
	cr_expect_eq(mrail_meter_take(&m, 900 * MS, samples), 0);

	/* Restart forgets what was measured; a read in flight across it is
	 * still ended, and counts with the busy time since the last
	 * completion before the restart. */
	mrail_meter_start(&m, 0, 1030 * MS);
	mrail_meter_start(&m, 2, 1030 * MS);
	mrail_meter_done(&m, 2, 4096, 1040 * MS);
	mrail_meter_restart(&m, 1050 * MS);
	mrail_meter_start(&m, 2, 1050 * MS);
	mrail_meter_done(&m, 0, 4096, 1060 * MS);
	mrail_meter_done(&m, 2, 4096, 1060 * MS);
	cr_expect_eq(mrail_meter_take(&m, 1065 * MS, samples), 0, "window not over");
	cr_assert_eq(mrail_meter_take(&m, 1070 * MS, samples), 2);
	cr_expect_eq(samples[0].bytes, 4096);
	cr_expect_float_eq(samples[0].seconds, 0.03, 1e-12);
	cr_expect_eq(samples[2].bytes, 4096);
	cr_expect_float_eq(samples[2].seconds, 0.01, 1e-12);

	/* Window 0: a report at every completion that leaves two rails
	 * with something new. */
	cr_assert_eq(mrail_meter_init(&m, 2, 0, 1, 0), 0);
	warm_up(&m, 2);
	mrail_meter_start(&m, 0, 0);
	mrail_meter_start(&m, 1, 0);
	mrail_meter_done(&m, 0, 100, 1 * MS);
	cr_expect_eq(mrail_meter_take(&m, 1 * MS, samples), 0);
	mrail_meter_done(&m, 1, 100, 2 * MS);
	cr_expect_eq(mrail_meter_take(&m, 2 * MS, samples), 2);
}

/*
 * Warm-up: the first read waits 50 ms for the rail's connection and the
 * three queued behind it end in a burst 1 ms later. None of it is
 * measured, nor what ends within a window of the first completion; from
 * then on the rate is exact.
 */
Test(meter, the_first_read_and_the_window_after_it_are_not_measured)
{
	const uint64_t len = 512 * KIB, each = 4 * MS;	/* 131 MB/s */
	struct mrail_meter m;
	uint64_t now;
	int k;

	cr_assert_eq(mrail_meter_init(&m, 2, 20 * MS, 1, 0), 0);
	for (k = 0; k < 4; k++) {
		mrail_meter_start(&m, 0, 0);
		mrail_meter_start(&m, 1, 0);
	}
	mrail_meter_done(&m, 0, len, 50 * MS);
	mrail_meter_done(&m, 1, len, 50 * MS);
	for (k = 0; k < 3; k++) {
		mrail_meter_done(&m, 0, len, 51 * MS);
		mrail_meter_done(&m, 1, len, 51 * MS);
	}
	cr_expect_eq(mrail_meter_take(&m, 51 * MS, samples), 0, "burst measured");
	/* Steady from here: one read at a time, each taking 4 ms. */
	for (now = 51 * MS; now < 200 * MS;) {
		mrail_meter_start(&m, 0, now);
		mrail_meter_start(&m, 1, now);
		now += each;
		mrail_meter_done(&m, 0, len, now);
		mrail_meter_done(&m, 1, len, now);
		if (mrail_meter_take(&m, now, samples) == 2) {
			cr_expect_gt(now, 70 * MS, "reported at %llu ms",
				      (unsigned long long) (now / MS));
			cr_expect_float_eq(sample_rate(0), len / (each / 1e9), 1e-6 * len);
			cr_expect_float_eq(sample_rate(1), len / (each / 1e9), 1e-6 * len);
		}
	}
}

/* A rail reports once it has min_bytes since its last report; until then
 * its bytes and time carry over, and without two such rails nothing is
 * reported. */
Test(meter, a_rail_reports_min_bytes_at_least)
{
	struct mrail_meter m;

	cr_assert_eq(mrail_meter_init(&m, 2, 0, 256 * KIB, 0), 0);
	warm_up(&m, 2);
	mrail_meter_start(&m, 0, 0);
	mrail_meter_start(&m, 1, 0);
	mrail_meter_done(&m, 0, 256 * KIB, 2 * MS);
	mrail_meter_done(&m, 1, 64 * KIB, 2 * MS);
	cr_expect_eq(mrail_meter_take(&m, 2 * MS, samples), 0, "rail 1 too little");
	mrail_meter_start(&m, 1, 2 * MS);
	mrail_meter_done(&m, 1, 192 * KIB, 6 * MS);
	cr_assert_eq(mrail_meter_take(&m, 6 * MS, samples), 2);
	cr_expect_eq(samples[0].bytes, 256 * KIB);
	cr_expect_float_eq(samples[0].seconds, 0.002, 1e-12);
	cr_expect_eq(samples[1].bytes, 256 * KIB);
	cr_expect_float_eq(samples[1].seconds, 0.006, 1e-12);
	/* min_bytes 0 means 1: any completion counts. */
	cr_assert_eq(mrail_meter_init(&m, 2, 0, 0, 0), 0);
	cr_expect_eq(m.min_bytes, 1);
}

Test(meter, bad_calls_are_refused_or_ignored)
{
	struct mrail_meter m;

	cr_expect_eq(mrail_meter_init(NULL, 2, 0, 1, 0), -EINVAL);
	cr_expect_eq(mrail_meter_init(&m, 0, 0, 1, 0), -EINVAL);
	cr_expect_eq(mrail_meter_init(&m, MRAIL_MAX_RAILS + 1, 0, 1, 0), -EINVAL);
	cr_assert_eq(mrail_meter_init(&m, 2, 0, 1, 0), 0);
	/* Out of range, or an end with nothing in flight: ignored. */
	mrail_meter_start(&m, 2, 0);
	mrail_meter_done(&m, 2, 100, 1);
	mrail_meter_done(&m, 0, 100, 1);
	cr_expect_eq(m.rail[0].mark_bytes, 0);
	/* A failed read (0 bytes) ends the busy period, reports nothing. */
	mrail_meter_start(&m, 0, 0);
	mrail_meter_start(&m, 1, 0);
	mrail_meter_done(&m, 0, 0, 5);
	mrail_meter_done(&m, 1, 100, 5);
	cr_expect_eq(mrail_meter_take(&m, 5, samples), 0);
	cr_expect_eq(m.rail[0].in_flight, 0);
}

/* ---- the meter and adaptive striping, in a stream ---- */

#define SIM_QUEUE 64

struct sim_read {
	int xfer;
	uint64_t len;
	double left;
};

/* A rail serving its reads in order, at rate bytes per second. */
struct sim_rail {
	double rate;
	struct sim_read q[SIM_QUEUE];
	int head, n;
};

struct sim_stream {
	struct mrail_meter meter;
	struct mrail_adaptive ad;
	size_t rails;
	struct sim_rail rail[MRAIL_MAX_RAILS];
	double now;			/* seconds */
	uint64_t len;			/* of each transfer */
	int reads_left[SIM_QUEUE];	/* per transfer in flight (by slot) */
	int next_slot;
	uint64_t transfers_done, bytes_done;
};

static uint64_t sim_ns(const struct sim_stream *s)
{
	return (uint64_t) llround(s->now * 1e9);
}

/* Splits the next transfer by the current shares and the rails' queues,
 * as the provider does, and queues its reads (one per stripe, as the
 * provider reads up to 1 MiB at once). */
static void sim_plan(struct sim_stream *s)
{
	int slot = s->next_slot++ % SIM_QUEUE;
	uint64_t queued[MRAIL_MAX_RAILS] = { 0 };
	int n;

	for (size_t i = 0; i < s->rails; i++)
		for (int k = 0; k < s->rail[i].n; k++)
			queued[i] += (uint64_t) s->rail[i].q[(s->rail[i].head + k) %
							   SIM_QUEUE].left;
	n = mrail_adaptive_plan_queued(&s->ad, s->len, queued, 16 * KIB, 4096, out);

	cr_assert_gt(n, 0);
	cr_assert_eq(s->reads_left[slot], 0, "more transfers than slots");
	s->reads_left[slot] = n;
	for (int i = 0; i < n; i++) {
		struct sim_rail *r = &s->rail[out[i].rail];

		cr_assert_lt(r->n, SIM_QUEUE);
		r->q[(r->head + r->n++) % SIM_QUEUE] =
			(struct sim_read) { slot, out[i].len, (double) out[i].len };
		mrail_meter_start(&s->meter, out[i].rail, sim_ns(s));
	}
}

static void sim_init(struct sim_stream *s, size_t rails, const double *rate,
		     uint64_t window_ns, int ahead)
{
	memset(s, 0, sizeof(*s));
	s->rails = rails;
	s->len = MIB;
	for (size_t i = 0; i < rails; i++)
		s->rail[i].rate = rate[i];
	cr_assert_eq(mrail_meter_init(&s->meter, rails, window_ns,
				     MRAIL_METER_MIN_BYTES, 0), 0);
	cr_assert_eq(mrail_adaptive_init(&s->ad, rails, MRAIL_ADAPTIVE_ALPHA_DEFAULT), 0);
	for (int i = 0; i < ahead; i++)
		sim_plan(s);
}

/* Runs the stream to time until: each completed transfer is replaced by a
 * new one, split then; the shares learn after every read, as in
 * mrail_policy_read_done. */
static void sim_run(struct sim_stream *s, double until)
{
	for (;;) {
		double dt = until - s->now;
		size_t first = s->rails;

		for (size_t i = 0; i < s->rails; i++) {
			struct sim_rail *r = &s->rail[i];
			double t;

			if (!r->n)
				continue;
			t = r->q[r->head].left / r->rate;
			if (t <= dt) {
				dt = t;
				first = i;
			}
		}
		for (size_t i = 0; i < s->rails; i++)
			if (s->rail[i].n)
				s->rail[i].q[s->rail[i].head].left -= dt * s->rail[i].rate;
		s->now += dt;
		if (first == s->rails)
			return;

		struct sim_rail *r = &s->rail[first];
		struct sim_read done = r->q[r->head];

		r->head = (r->head + 1) % SIM_QUEUE;
		r->n--;
		mrail_meter_done(&s->meter, first, done.len, sim_ns(s));
		if (mrail_meter_take(&s->meter, sim_ns(s), samples) >= 2)
			cr_assert_eq(mrail_adaptive_update(&s->ad, samples, s->rails), 0);
		if (!--s->reads_left[done.xfer]) {
			s->transfers_done++;
			s->bytes_done += s->len;
			sim_plan(s);
		}
	}
}

/* Each share within 5% (relative) of the rate-proportional split. */
static bool sim_near_optimal(const struct sim_stream *s)
{
	double shares[MRAIL_MAX_RAILS], total = 0.0;

	cr_assert_eq(mrail_adaptive_shares(&s->ad, shares), (int) s->rails);
	for (size_t i = 0; i < s->rails; i++)
		total += s->rail[i].rate;
	for (size_t i = 0; i < s->rails; i++)
		if (fabs(shares[i] - s->rail[i].rate / total) > 0.05 * s->rail[i].rate / total)
			return false;
	return true;
}

/* Runs in steps of 1 ms until near optimal; returns the transfers that
 * took (limit + 1 if more), then checks it stays there for 500 ms. */
static uint64_t sim_transfers_to_converge(struct sim_stream *s, uint64_t limit)
{
	uint64_t start = s->transfers_done, taken = limit + 1;
	double t;

	while (s->transfers_done - start <= limit) {
		sim_run(s, s->now + 1e-3);
		if (sim_near_optimal(s)) {
			taken = s->transfers_done - start;
			break;
		}
	}
	for (t = s->now + 0.5; taken <= limit && s->now < t;) {
		sim_run(s, s->now + 1e-3);
		cr_assert(sim_near_optimal(s), "left the optimum at %.3f s", s->now);
	}
	return taken;
}

/*
 * The rails (1 Gbit/s and 250 Mbit/s: 4:1), 1 MiB transfers, 8 split
 * ahead (MRAIL_ADAPTIVE_AHEAD), the default window: within 5% of the best
 * split within 20 transfers, and again within 20 after the fast rail's
 * rate halves.
 */
Test(stream, four_to_one_within_20_transfers_and_again_after_a_rate_halves)
{
	const double rate[2] = { 1.25e8, 3.125e7 };
	struct sim_stream s;
	uint64_t n;

	sim_init(&s, 2, rate, MRAIL_METER_WINDOW_MS_DEFAULT * MS, 8);
	n = sim_transfers_to_converge(&s, 20);
	cr_log_info("4:1: %llu transfers", (unsigned long long) n);
	cr_expect_leq(n, 20, "4:1 took %llu transfers", (unsigned long long) n);
	s.rail[0].rate /= 2;
	n = sim_transfers_to_converge(&s, 20);
	cr_log_info("2:1 after the change: %llu transfers", (unsigned long long) n);
	cr_expect_leq(n, 20, "2:1 after the change took %llu transfers",
		      (unsigned long long) n);
}

/* The bandwidth of the stream over [from, to). */
static double sim_rate_over(struct sim_stream *s, double from, double to)
{
	uint64_t before;

	sim_run(s, from);
	before = s->bytes_done;
	sim_run(s, to);
	return (double) (s->bytes_done - before) / (to - from);
}

/*
 * Two equal rails; 1 s in, a competitor takes half of rail 1. Within a
 * bounded number of windows (10) the shares are within 5% of 2:1, and
 * every 100 ms from then on moves at least 90% of what the rails then
 * offer: the acceptance, simulated. Then the competitor leaves and
 * the shares go back to even as fast.
 */
Test(stream, a_competitor_is_followed_within_ten_windows)
{
	const double rate[2] = { 1.25e8, 1.25e8 };
	const double window = MRAIL_METER_WINDOW_MS_DEFAULT * 1e-3;
	struct sim_stream s;
	double t;

	sim_init(&s, 2, rate, MRAIL_METER_WINDOW_MS_DEFAULT * MS, 8);
	sim_run(&s, 1.0);
	cr_assert(sim_near_optimal(&s), "not even before the competitor");
	s.rail[1].rate /= 2;
	while (!sim_near_optimal(&s) && s.now < 1.0 + 10 * window)
		sim_run(&s, s.now + 1e-3);
	cr_log_info("2:1 %.0f ms after the competitor came", (s.now - 1.0) * 1e3);
	cr_expect(sim_near_optimal(&s), "not 2:1 after 10 windows");
	for (t = 1.0 + 10 * window; t < 2.0; t += 0.1) {
		double got = sim_rate_over(&s, t, t + 0.1);

		cr_expect_geq(got, 0.9 * 1.875e8, "%.2f s: %g B/s", t, got);
	}
	s.rail[1].rate *= 2;
	t = s.now;
	while (!sim_near_optimal(&s) && s.now < t + 10 * window)
		sim_run(&s, s.now + 1e-3);
	cr_log_info("even %.0f ms after it left", (s.now - t) * 1e3);
	cr_expect(sim_near_optimal(&s), "not even 10 windows after it left");
}
