/* SPDX-License-Identifier: BSD-2-Clause */
#include "liveness.h"

#include <errno.h>
#include <stdio.h>

#include "whole_number.h"

void mrail_live_sent(struct mrail_live_peer *p, bool refused, uint64_t now_ns)
{
	if (!refused) {
		p->refused_since_ns = 0;
		p->heard_ns = now_ns;
	} else if (!p->refused_since_ns) {
		/* 0 means "no run": a run that starts at 0 starts at 1. */
		p->refused_since_ns = now_ns ? now_ns : 1;
	}
}

void mrail_live_heard(struct mrail_live_peer *p, uint64_t now_ns)
{
	p->refused_since_ns = 0;
	p->heard_ns = now_ns;
}

enum mrail_live_action mrail_live_judge(const struct mrail_live_peer *p,
					uint64_t now_ns, uint64_t timeout_ns,
					bool waited_on)
{
	if (p->unreachable || !timeout_ns)
		return MRAIL_LIVE_NOTHING;
	if (p->refused_since_ns && now_ns - p->refused_since_ns >= timeout_ns)
		return MRAIL_LIVE_UNREACHABLE;
	/* A probe is only needed while waiting: a refused application send
	 * already runs the clock, and an idle peer is nobody's concern. */
	if (waited_on && now_ns - p->heard_ns >= MRAIL_LIVE_PROBE_INTERVAL_NS &&
	    (!p->probed_ns || now_ns - p->probed_ns >= MRAIL_LIVE_PROBE_INTERVAL_NS))
		return MRAIL_LIVE_PROBE;
	return MRAIL_LIVE_NOTHING;
}

bool mrail_live_links_judge(struct mrail_live_links *l, bool any_up,
			    uint64_t now_ns, uint64_t timeout_ns)
{
	if (any_up || !timeout_ns) {
		l->all_down_since_ns = 0;
		l->cut_off = false;
		return false;
	}
	if (!l->all_down_since_ns) {
		/* 0 means "some link up": a run from 0 starts at 1. */
		l->all_down_since_ns = now_ns ? now_ns : 1;
		return false;
	}
	if (l->cut_off || now_ns - l->all_down_since_ns < timeout_ns)
		return false;
	l->cut_off = true;
	return true;
}

int mrail_live_parse_timeout(const char *text, uint64_t *timeout_ns, char *err,
			     size_t err_len)
{
	uint64_t s;

	if (mrail_parse_whole(text, MRAIL_LIVE_TIMEOUT_MAX_S, &s))
		goto bad;
	*timeout_ns = s * 1000000000ULL;
	return 0;
bad:
	snprintf(err, err_len, "'%s' is not a whole number of seconds from 0 (never "
		 "give up on a peer) to %d", text ? text : "", MRAIL_LIVE_TIMEOUT_MAX_S);
	return -EINVAL;
}
