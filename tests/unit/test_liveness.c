/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * When mrail gives up on a peer (core/liveness.c), on a simulated clock.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "liveness.h"

#define S 1000000000ULL
#define TIMEOUT (3 * S)

Test(liveness, a_refusal_run_longer_than_the_timeout_makes_a_peer_unreachable)
{
	struct mrail_live_peer p = { 0 };

	mrail_live_sent(&p, true, 10 * S);
	cr_assert_eq(mrail_live_judge(&p, 12 * S, TIMEOUT, false), MRAIL_LIVE_NOTHING);
	/* Refusals inside the run do not restart it. */
	mrail_live_sent(&p, true, 12 * S);
	cr_assert_eq(mrail_live_judge(&p, 13 * S - 1, TIMEOUT, false), MRAIL_LIVE_NOTHING);
	cr_assert_eq(mrail_live_judge(&p, 13 * S, TIMEOUT, false), MRAIL_LIVE_UNREACHABLE);
	p.unreachable = true;
	cr_assert_eq(mrail_live_judge(&p, 20 * S, TIMEOUT, true), MRAIL_LIVE_NOTHING,
		     "an unreachable peer is judged once");
}

Test(liveness, an_accepted_send_or_a_message_ends_the_run)
{
	struct mrail_live_peer p = { 0 };

	mrail_live_sent(&p, true, 10 * S);
	mrail_live_sent(&p, false, 12 * S);
	cr_assert_eq(mrail_live_judge(&p, 14 * S, TIMEOUT, false), MRAIL_LIVE_NOTHING);
	mrail_live_sent(&p, true, 14 * S);
	mrail_live_heard(&p, 16 * S);
	cr_assert_eq(mrail_live_judge(&p, 18 * S, TIMEOUT, false), MRAIL_LIVE_NOTHING);
	/* A new run starts from its own first refusal. */
	mrail_live_sent(&p, true, 18 * S);
	cr_assert_eq(mrail_live_judge(&p, 20 * S, TIMEOUT, false), MRAIL_LIVE_NOTHING);
	cr_assert_eq(mrail_live_judge(&p, 21 * S, TIMEOUT, false), MRAIL_LIVE_UNREACHABLE);
}

Test(liveness, a_run_starting_at_time_zero_counts)
{
	struct mrail_live_peer p = { 0 };

	mrail_live_sent(&p, true, 0);
	cr_assert_eq(mrail_live_judge(&p, TIMEOUT + 1, TIMEOUT, false),
		     MRAIL_LIVE_UNREACHABLE);
}

Test(liveness, a_silent_peer_is_probed_only_while_waited_on_and_once_a_second)
{
	struct mrail_live_peer p = { 0 };

	mrail_live_heard(&p, 10 * S);
	cr_assert_eq(mrail_live_judge(&p, 10 * S + S / 2, TIMEOUT, true), MRAIL_LIVE_NOTHING);
	cr_assert_eq(mrail_live_judge(&p, 11 * S, TIMEOUT, false), MRAIL_LIVE_NOTHING);
	cr_assert_eq(mrail_live_judge(&p, 11 * S, TIMEOUT, true), MRAIL_LIVE_PROBE);
	p.probed_ns = 11 * S;
	cr_assert_eq(mrail_live_judge(&p, 11 * S + S / 2, TIMEOUT, true), MRAIL_LIVE_NOTHING);
	cr_assert_eq(mrail_live_judge(&p, 12 * S, TIMEOUT, true), MRAIL_LIVE_PROBE);
	/* The probe was accepted: the peer is heard from, no probe for a while. */
	mrail_live_sent(&p, false, 12 * S);
	p.probed_ns = 12 * S;
	cr_assert_eq(mrail_live_judge(&p, 12 * S + S / 2, TIMEOUT, true), MRAIL_LIVE_NOTHING);
}

Test(liveness, a_live_peer_that_never_answers_is_never_unreachable)
{
	struct mrail_live_peer p = { 0 };
	uint64_t t;

	/* Waited on for a minute, probed every second, every probe accepted. */
	mrail_live_heard(&p, 0);
	for (t = S; t < 60 * S; t += S / 4) {
		enum mrail_live_action a = mrail_live_judge(&p, t, TIMEOUT, true);

		cr_assert_neq(a, MRAIL_LIVE_UNREACHABLE, "at %llu ns", (unsigned long long) t);
		if (a == MRAIL_LIVE_PROBE) {
			p.probed_ns = t;
			mrail_live_sent(&p, false, t);
		}
	}
}

Test(liveness, timeout_zero_never_gives_up)
{
	struct mrail_live_peer p = { 0 };

	mrail_live_sent(&p, true, S);
	cr_assert_eq(mrail_live_judge(&p, 1000 * S, 0, true), MRAIL_LIVE_NOTHING);
}

Test(liveness, every_link_down_for_the_timeout_cuts_the_endpoint_off)
{
	struct mrail_live_links l = { 0 };

	cr_assert_not(mrail_live_links_judge(&l, true, 1 * S, TIMEOUT));
	cr_assert_not(mrail_live_links_judge(&l, false, 2 * S, TIMEOUT));
	cr_assert_not(mrail_live_links_judge(&l, false, 5 * S - 1, TIMEOUT));
	cr_assert_not(l.cut_off);
	cr_assert(mrail_live_links_judge(&l, false, 5 * S, TIMEOUT));
	cr_assert(l.cut_off);
	cr_assert_not(mrail_live_links_judge(&l, false, 9 * S, TIMEOUT),
		      "the cut is reported once");
	cr_assert(l.cut_off);
	/* A link back ends it; the clock starts again from the next down. */
	cr_assert_not(mrail_live_links_judge(&l, true, 10 * S, TIMEOUT));
	cr_assert_not(l.cut_off);
	cr_assert_not(mrail_live_links_judge(&l, false, 11 * S, TIMEOUT));
	cr_assert_not(mrail_live_links_judge(&l, true, 12 * S, TIMEOUT));
	cr_assert_not(mrail_live_links_judge(&l, false, 13 * S, TIMEOUT));
	cr_assert_not(mrail_live_links_judge(&l, false, 15 * S, TIMEOUT),
		      "a link up in between restarts the clock");
	cr_assert(mrail_live_links_judge(&l, false, 16 * S, TIMEOUT));
}

Test(liveness, links_down_from_time_zero_count_and_timeout_zero_never_cuts)
{
	struct mrail_live_links l = { 0 };

	cr_assert_not(mrail_live_links_judge(&l, false, 0, TIMEOUT));
	cr_assert(mrail_live_links_judge(&l, false, TIMEOUT + 1, TIMEOUT));
	l = (struct mrail_live_links) { 0 };
	cr_assert_not(mrail_live_links_judge(&l, false, 1 * S, 0));
	cr_assert_not(mrail_live_links_judge(&l, false, 1000 * S, 0));
	cr_assert_not(l.cut_off);
}

Test(liveness, parse_timeout)
{
	uint64_t ns = 7;
	char err[160];

	cr_assert_eq(mrail_live_parse_timeout("0", &ns, err, sizeof(err)), 0);
	cr_assert_eq(ns, 0);
	cr_assert_eq(mrail_live_parse_timeout("30", &ns, err, sizeof(err)), 0);
	cr_assert_eq(ns, 30 * S);
	cr_assert_eq(mrail_live_parse_timeout("86400", &ns, err, sizeof(err)), 0);
	ns = 7;
	cr_assert_eq(mrail_live_parse_timeout("86401", &ns, err, sizeof(err)), -EINVAL);
	cr_assert_eq(ns, 7);
	cr_assert_not_null(strstr(err, "'86401' is not a whole number of seconds"), "%s", err);
	cr_assert_eq(mrail_live_parse_timeout("-1", &ns, err, sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_live_parse_timeout("1.5", &ns, err, sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_live_parse_timeout("", &ns, err, sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_live_parse_timeout("3s", &ns, err, sizeof(err)), -EINVAL);
	cr_assert_eq(mrail_live_parse_timeout(NULL, &ns, err, sizeof(err)), -EINVAL);
}
