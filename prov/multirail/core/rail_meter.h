/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rail meter: each rail's service rate, for adaptive striping
 * (stripe_policy.h), measured from the bytes its reads completed and the
 * time it was busy, that is had at least one read in flight.
 *
 * Why not the time of each stripe: in a stream, a receiver splits many
 * matched messages at once and their reads queue behind one another on
 * each rail, so a stripe's time from posting to completion includes its
 * wait behind earlier stripes: a rail with a deeper queue looks slower than
 * it is. Busy time counts every instant once, however many reads overlap
 * it, so the queue's depth does not enter the rate.
 *
 * Windows: mrail_meter_take reports, once window_ns has passed since the
 * last report, every rail's bytes completed since then and its busy time up
 * to its last completion. The busy time after a rail's last completion (a
 * read half done) belongs to the bytes that read will bring and is carried
 * to the next window, so a rail serving at a steady rate measures that rate
 * exactly whatever the window's edges. A rail with no completion in a
 * window is not reported (its busy time keeps growing until one comes: a
 * stalled rail then measures as slow as it was), and a window closes only
 * when at least two rails have something to report: one rail alone says
 * nothing about relative speeds.
 *
 * Nor does a rail report a few reads: it waits until it has completed
 * min_bytes since its last report (adaptive striping asks for
 * MRAIL_METER_MIN_BYTES). A single small read's time is mostly the round
 * trip, not the rail's rate, and one read that waited (for a connection,
 * for a busy CPU) would otherwise swing the shares for a whole window.
 *
 * Warm-up: a rail's first completion, and those in the window after it,
 * are not measured, neither their bytes nor the time up to them. The first
 * read over a rail waits for the rail's connection to the peer (ofi_rxm
 * sets it up on first use): counted, it made a 1 Gbit/s rail measure
 * 3.6 MB/s, and adaptive striping gave that rail a quarter of the data for
 * the next 100 ms. The reads queued behind it then end in a burst, and
 * the first window after it measured rails of 125 MB/s at 200-500 MB/s.
 *
 * Pure: times are nanoseconds of a monotonic clock the caller reads.
 */
#ifndef MRAIL_RAIL_METER_H
#define MRAIL_RAIL_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrail_limits.h"
#include "stripe_policy.h"

/* FI_MRAIL_ADAPTIVE_WINDOW when unset, in milliseconds: a 512 KiB stripe
 * takes 4 ms at 1 Gbit/s, so a window holds several completions per rail
 * on such links, and the shares move 50 times a second. */
#define MRAIL_METER_WINDOW_MS_DEFAULT 20
/* The largest FI_MRAIL_ADAPTIVE_WINDOW: 10 s. */
#define MRAIL_METER_WINDOW_MS_MAX 10000
/* The least a rail reports for adaptive striping: 256 KiB, 2 ms at
 * 1 Gbit/s and 20 ms (one window) at 100 Mbit/s. */
#define MRAIL_METER_MIN_BYTES (256 * 1024)

struct mrail_meter_rail {
	uint32_t in_flight;
	bool warm;			/* its first completion came */
	uint64_t warm_until_ns;		/* measured from then on */
	uint64_t busy_since_ns;		/* start of the busy period, if in flight */
	uint64_t busy_ns;		/* busy time of the periods ended */
	/* Busy time at the last completion that moved bytes, and all bytes
	 * completed; and what the last report covered. */
	uint64_t mark_busy_ns, mark_bytes;
	uint64_t told_busy_ns, told_bytes;
};

struct mrail_meter {
	uint8_t rail_count;
	uint64_t window_ns;
	uint64_t min_bytes;
	uint64_t window_start_ns;
	struct mrail_meter_rail rail[MRAIL_MAX_RAILS];
};

/*
 * Starts metering rail_count rails (1..MRAIL_MAX_RAILS) at now_ns, nothing
 * in flight; window_ns 0 reports at every chance (every completion that
 * leaves two rails with something to report). A rail has something to
 * report once it completed at least min_bytes (at least 1) since its last
 * report. Returns 0 or -EINVAL.
 */
int mrail_meter_init(struct mrail_meter *m, size_t rail_count, uint64_t window_ns,
		     uint64_t min_bytes, uint64_t now_ns);

/*
 * Forgets what was measured so far, for a restart of adaptive striping:
 * the next window starts at now_ns and each rail's next report at its last
 * completion. Reads in flight are kept; they still end with
 * mrail_meter_done.
 */
void mrail_meter_restart(struct mrail_meter *m, uint64_t now_ns);

/* A read was posted on rail / ended, having moved bytes (0 if it failed).
 * A rail out of range, or an end with nothing in flight, is ignored. */
void mrail_meter_start(struct mrail_meter *m, size_t rail, uint64_t now_ns);
void mrail_meter_done(struct mrail_meter *m, size_t rail, uint64_t bytes,
		      uint64_t now_ns);

/*
 * When the window is over and at least two rails completed reads in it:
 * fills samples[0..rail_count) (bytes completed and busy seconds up to the
 * last completion, both 0 for a rail with nothing to report), starts the
 * next window and returns the number of rails reported. Else returns 0 and
 * changes nothing. Times before the window's start (a clock that stepped
 * back) count as no time.
 */
int mrail_meter_take(struct mrail_meter *m, uint64_t now_ns,
		     struct mrail_rail_sample samples[MRAIL_MAX_RAILS]);

#endif /* MRAIL_RAIL_METER_H */
