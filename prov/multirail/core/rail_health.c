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
	/* The first probe goes one interval after the failure. */
	h->probed_ns = now_ns;
	h->failures++;
}

void mrail_health_posted(struct mrail_rail_health *h, uint64_t now_ns)
{
	if (!h->in_flight)
		h->progress_ns = now_ns;
	h->in_flight++;
}

void mrail_health_completed(struct mrail_rail_health *h, uint64_t now_ns)
{
	if (h->in_flight)
		h->in_flight--;
	h->progress_ns = now_ns;
}

bool mrail_health_heard(struct mrail_rail_health *h, bool served_op,
			uint64_t now_ns)
{
	if (served_op && h->in_flight)
		h->in_flight--;
	h->progress_ns = now_ns;
	h->heard_ns = now_ns;
	if (h->state == MRAIL_HEALTH_UP)
		return false;
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

/* Was the peer heard on another working rail after h last made progress? */
static bool sibling_heard_since(const struct mrail_rail_health *rails,
				size_t count, size_t rail)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (i != rail && mrail_health_usable(&rails[i]) &&
		    rails[i].heard_ns > rails[rail].progress_ns)
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
		if (h->in_flight && now_ns - h->progress_ns >= cfg->timeout_ns &&
		    sibling_heard_since(rails, count, rail)) {
			fail(h, MRAIL_HEALTH_STALLED, now_ns);
			return MRAIL_HEALTH_FAIL;
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
