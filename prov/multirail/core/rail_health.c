/* SPDX-License-Identifier: BSD-2-Clause */
#include "rail_health.h"

#include <errno.h>
#include <stdio.h>

#include "whole_number.h"

static void set_state(struct mrail_rail_health *h, enum mrail_health_state state,
		      uint64_t now_ns)
{
	h->state = (uint8_t) state;
	h->changed_ns = now_ns;
}

static void fail(struct mrail_rail_health *h, enum mrail_health_reason reason,
		 uint64_t now_ns)
{
	set_state(h, MRAIL_HEALTH_FAILED, now_ns);
	h->reason = (uint8_t) reason;
	h->in_flight = 0;
	h->refused_ns = 0;
	h->echo_wait_ns = 0;
	h->alive_ns = 0;
	/* The first probe goes one interval after the failure. */
	h->probed_ns = now_ns;
	h->failures++;
}

void mrail_health_posted(struct mrail_rail_health *h, uint64_t now_ns)
{
	if (!h->in_flight)
		h->progress_ns = now_ns;
	h->in_flight++;
	h->refused_ns = 0;
}

void mrail_health_refused(struct mrail_rail_health *h, uint64_t now_ns)
{
	if (!h->refused_ns)
		h->refused_ns = now_ns;
}

void mrail_health_completed(struct mrail_rail_health *h, uint64_t now_ns,
			    const struct mrail_health_config *cfg)
{
	if (h->in_flight)
		h->in_flight--;
	/* A send completes once the rail has taken it, path or no path
	 * (ofi_rxm over tcp: once the socket has): progress only while the
	 * peer is being heard on the rail. */
	if (now_ns - h->heard_ns < cfg->timeout_ns)
		h->progress_ns = now_ns;
	h->sent_ns = now_ns;
	h->refused_ns = 0;
}

void mrail_health_probe_completed(struct mrail_rail_health *h)
{
	if (h->in_flight)
		h->in_flight--;
}

bool mrail_health_heard(struct mrail_rail_health *h,
			enum mrail_health_heard_kind kind, uint64_t now_ns)
{
	if (kind == MRAIL_HEARD_SERVED && h->in_flight)
		h->in_flight--;
	h->progress_ns = now_ns;
	h->heard_ns = now_ns;
	if (h->state != MRAIL_HEALTH_UP && kind == MRAIL_HEARD_ARRIVAL)
		return false;
	h->echo_wait_ns = 0;
	h->alive_ns = 0;
	h->refused_ns = 0;
	if (h->state == MRAIL_HEALTH_UP)
		return false;
	/* What went out on it while it was failed (probes) is answered;
	 * what was in flight when it failed was forgotten then. */
	h->in_flight = 0;
	set_state(h, MRAIL_HEALTH_UP, now_ns);
	h->reason = MRAIL_HEALTH_NO_REASON;
	h->recoveries++;
	return true;
}

bool mrail_health_error(struct mrail_rail_health *h, uint64_t now_ns)
{
	if (h->state != MRAIL_HEALTH_UP)
		return false;
	fail(h, MRAIL_HEALTH_ERROR, now_ns);
	return true;
}

/* Was the peer heard on another working rail after since_ns? */
static bool sibling_heard_since(const struct mrail_rail_health *rails,
				size_t count, size_t rail, uint64_t since_ns)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (i != rail && mrail_health_usable(&rails[i]) &&
		    rails[i].heard_ns > since_ns)
			return true;
	}
	return false;
}

/* Every operation refused for the timeout, while the peer was heard on a
 * sibling since. */
static bool refusing(const struct mrail_rail_health *rails, size_t count,
		     size_t rail, uint64_t now_ns, uint64_t timeout_ns)
{
	const struct mrail_rail_health *h = &rails[rail];

	return h->refused_ns && now_ns - h->refused_ns >= timeout_ns &&
	       sibling_heard_since(rails, count, rail, h->refused_ns);
}

/*
 * Half a timeout with operations stuck on the rail, or with sends gone out
 * on it since the peer was last heard on it: probe it (the caller probes
 * the siblings too, so that their answers tell a silent rail from a silent
 * peer). The probe unanswered for the timeout, while the peer has been
 * heard on a sibling for half a timeout: the rail stalled. That half
 * timeout of the peer alive is the rail's to catch up in: a peer that did
 * not progress for a while (an application computing) is heard first on
 * whichever rail it reads first.
 */
static enum mrail_health_action quiet(struct mrail_rail_health *rails,
				      size_t count, size_t rail, uint64_t now_ns,
				      uint64_t timeout_ns)
{
	struct mrail_rail_health *h = &rails[rail];

	if (h->echo_wait_ns) {
		if (!sibling_heard_since(rails, count, rail, h->echo_wait_ns))
			return MRAIL_HEALTH_NOTHING;
		if (!h->alive_ns)
			h->alive_ns = now_ns;
		return now_ns - h->echo_wait_ns >= timeout_ns &&
		       now_ns - h->alive_ns >= timeout_ns / 2 ?
		       MRAIL_HEALTH_FAIL : MRAIL_HEALTH_NOTHING;
	}
	if (h->in_flight && now_ns - h->progress_ns >= timeout_ns / 2)
		return MRAIL_HEALTH_PROBE;
	if (h->heard_ns && h->sent_ns > h->heard_ns &&
	    now_ns - h->heard_ns >= timeout_ns / 2)
		return MRAIL_HEALTH_PROBE;
	return MRAIL_HEALTH_NOTHING;
}

/* Was the peer ever heard on another working rail? */
static bool sibling_heard_ever(const struct mrail_rail_health *rails,
			       size_t count, size_t rail)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (i != rail && mrail_health_usable(&rails[i]) && rails[i].heard_ns)
			return true;
	}
	return false;
}

enum mrail_health_action mrail_health_judge(struct mrail_rail_health *rails,
					    size_t count, size_t rail,
					    uint64_t now_ns,
					    const struct mrail_health_config *cfg)
{
	struct mrail_rail_health *h = &rails[rail];

	switch (h->state) {
	case MRAIL_HEALTH_UP:
		switch (refusing(rails, count, rail, now_ns, cfg->timeout_ns) ?
			MRAIL_HEALTH_FAIL :
			quiet(rails, count, rail, now_ns, cfg->timeout_ns)) {
		case MRAIL_HEALTH_FAIL:
			fail(h, MRAIL_HEALTH_STALLED, now_ns);
			return MRAIL_HEALTH_FAIL;
		case MRAIL_HEALTH_PROBE:
			h->echo_wait_ns = now_ns;
			h->alive_ns = 0;
			return MRAIL_HEALTH_PROBE;
		case MRAIL_HEALTH_NOTHING:
			break;
		}
		/* Never heard on, while a sibling was: one probe proves it
		 * (or, unanswered, stalls it). */
		if (!h->heard_ns && !h->probed_ns &&
		    sibling_heard_ever(rails, count, rail)) {
			h->probed_ns = now_ns;
			return MRAIL_HEALTH_PROBE;
		}
		return MRAIL_HEALTH_NOTHING;
	case MRAIL_HEALTH_FAILED:
		if (now_ns - h->probed_ns < cfg->probe_interval_ns)
			return MRAIL_HEALTH_NOTHING;
		set_state(h, MRAIL_HEALTH_PROBING, now_ns);
		h->probed_ns = now_ns;
		return MRAIL_HEALTH_PROBE;
	case MRAIL_HEALTH_PROBING:
		/* Unanswered: failed again; the next probe is an interval
		 * after this one went. */
		if (now_ns - h->probed_ns >= cfg->timeout_ns)
			set_state(h, MRAIL_HEALTH_FAILED, now_ns);
		return MRAIL_HEALTH_NOTHING;
	}
	return MRAIL_HEALTH_NOTHING;
}

void mrail_health_start_failed(struct mrail_rail_health *h)
{
	h->state = MRAIL_HEALTH_FAILED;
	h->reason = MRAIL_HEALTH_ERROR;
	h->in_flight = 0;
	h->probed_ns = 0;
	h->changed_ns = 0;
}

size_t mrail_health_usable_count(const struct mrail_rail_health *rails,
				 size_t count)
{
	size_t i, usable = 0;

	for (i = 0; i < count; i++)
		usable += mrail_health_usable(&rails[i]);
	return usable;
}

const char *mrail_health_state_name(enum mrail_health_state state)
{
	switch (state) {
	case MRAIL_HEALTH_UP:
		return "up";
	case MRAIL_HEALTH_FAILED:
		return "failed";
	case MRAIL_HEALTH_PROBING:
		return "probing";
	}
	return "unknown";
}

const char *mrail_health_reason_text(enum mrail_health_reason reason)
{
	switch (reason) {
	case MRAIL_HEALTH_ERROR:
		return "it reported an error";
	case MRAIL_HEALTH_STALLED:
		return "nothing came back on it while the peer answered on "
		       "another rail";
	case MRAIL_HEALTH_NO_REASON:
		break;
	}
	return "no reason";
}

int mrail_health_parse_timeout(const char *text, uint64_t *timeout_ns,
			       char *err, size_t err_len)
{
	uint64_t ms;

	if (mrail_parse_whole(text, MRAIL_HEALTH_TIMEOUT_MAX_MS, &ms) ||
	    ms < MRAIL_HEALTH_TIMEOUT_MIN_MS) {
		snprintf(err, err_len, "'%s' is not a whole number of "
			 "milliseconds from %d to %d", text ? text : "",
			 MRAIL_HEALTH_TIMEOUT_MIN_MS, MRAIL_HEALTH_TIMEOUT_MAX_MS);
		return -EINVAL;
	}
	*timeout_ns = ms * 1000000ULL;
	return 0;
}
