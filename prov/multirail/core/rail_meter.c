/* SPDX-License-Identifier: BSD-2-Clause */
#include "rail_meter.h"

#include <errno.h>
#include <string.h>

/* Busy time of r up to now: the ended periods plus the current one. */
static uint64_t busy_until(const struct mrail_meter_rail *r, uint64_t now_ns)
{
	if (!r->in_flight || now_ns <= r->busy_since_ns)
		return r->busy_ns;
	return r->busy_ns + (now_ns - r->busy_since_ns);
}

int mrail_meter_init(struct mrail_meter *m, size_t rail_count, uint64_t window_ns,
		     uint64_t min_bytes, uint64_t now_ns)
{
	if (!m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	if (rail_count < 1 || rail_count > MRAIL_MAX_RAILS)
		return -EINVAL;
	m->rail_count = (uint8_t) rail_count;
	m->window_ns = window_ns;
	m->min_bytes = min_bytes ? min_bytes : 1;
	m->window_start_ns = now_ns;
	return 0;
}

void mrail_meter_restart(struct mrail_meter *m, uint64_t now_ns)
{
	size_t i;

	/* The next report starts from each rail's last completion, as a
	 * report would have: a read in flight now brings its bytes with the
	 * busy time they took, so no rail is measured from half a read. */
	for (i = 0; i < m->rail_count; i++) {
		m->rail[i].told_busy_ns = m->rail[i].mark_busy_ns;
		m->rail[i].told_bytes = m->rail[i].mark_bytes;
	}
	m->window_start_ns = now_ns;
}

void mrail_meter_start(struct mrail_meter *m, size_t rail, uint64_t now_ns)
{
	struct mrail_meter_rail *r;

	if (rail >= m->rail_count)
		return;
	r = &m->rail[rail];
	if (!r->in_flight++)
		r->busy_since_ns = now_ns;
}

void mrail_meter_done(struct mrail_meter *m, size_t rail, uint64_t bytes,
		      uint64_t now_ns)
{
	struct mrail_meter_rail *r;
	uint64_t busy;

	if (rail >= m->rail_count)
		return;
	r = &m->rail[rail];
	if (!r->in_flight)
		return;
	busy = busy_until(r, now_ns);
	if (bytes) {
		r->mark_busy_ns = busy;
		r->mark_bytes += bytes;
	}
	if (!--r->in_flight)
		r->busy_ns = busy;
	/* Warm-up (see rail_meter.h): what completes up to one window after
	 * the first completion is left out of every report, bytes and time. */
	if (!r->warm) {
		r->warm = true;
		r->warm_until_ns = now_ns + m->window_ns;
	} else if (now_ns >= r->warm_until_ns) {
		return;
	}
	r->told_busy_ns = r->mark_busy_ns;
	r->told_bytes = r->mark_bytes;
}

int mrail_meter_take(struct mrail_meter *m, uint64_t now_ns,
		     struct mrail_rail_sample samples[MRAIL_MAX_RAILS])
{
	size_t i;
	int n = 0;

	if (now_ns < m->window_start_ns ||
	    now_ns - m->window_start_ns < m->window_ns)
		return 0;
	for (i = 0; i < m->rail_count; i++)
		n += m->rail[i].mark_bytes - m->rail[i].told_bytes >= m->min_bytes;
	if (n < 2)
		return 0;
	for (i = 0; i < m->rail_count; i++) {
		struct mrail_meter_rail *r = &m->rail[i];

		samples[i].bytes = 0;
		samples[i].seconds = 0.0;
		/* Too little yet: it reports with the next window. */
		if (r->mark_bytes - r->told_bytes < m->min_bytes)
			continue;
		samples[i].bytes = r->mark_bytes - r->told_bytes;
		samples[i].seconds = (double) (r->mark_busy_ns - r->told_busy_ns) / 1e9;
		r->told_bytes = r->mark_bytes;
		r->told_busy_ns = r->mark_busy_ns;
	}
	m->window_start_ns = now_ns;
	return n;
}
