/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * When a rail fails for a peer and when it comes back (core/rail_health.c),
 * on simulated rails and a simulated clock.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "rail_health.h"

#define MS 1000000ULL
#define SEC (1000 * MS)

static const struct mrail_health_config cfg = {
	.timeout_ns = 500 * MS,
	.probe_interval_ns = 250 * MS,
};

/* Two rails to one peer, both heard on at t = 0.5 s and with sends in
 * flight since t = 1 s, and the peer heard on rail 0 at t = 1.2 s; rail 1
 * has heard nothing since. */
static void two_rails_rail1_silent(struct mrail_rail_health rails[2])
{
	memset(rails, 0, 2 * sizeof(rails[0]));
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 500 * MS);
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, 500 * MS);
	mrail_health_posted(&rails[0], 1 * SEC);
	mrail_health_posted(&rails[1], 1 * SEC);
	mrail_health_posted(&rails[1], 1 * SEC + 10 * MS);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 1 * SEC + 200 * MS);
}

/*
 * The progress engine's look every 10 ms from `from` to `to`, the peer
 * heard on rail 0 at each (it goes on talking there). Returns when rail 1
 * failed, or 0; *probed: when it got its first probe, or 0.
 */
static uint64_t ticks_until_rail1_fails(struct mrail_rail_health rails[2],
					uint64_t from, uint64_t to,
					uint64_t *probed)
{
	enum mrail_health_action act;
	uint64_t t;

	*probed = 0;
	for (t = from; t <= to; t += 10 * MS) {
		mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, t);
		act = mrail_health_judge(rails, 2, 1, t, &cfg);
		if (act == MRAIL_HEALTH_PROBE && !*probed)
			*probed = t;
		if (act == MRAIL_HEALTH_FAIL)
			return t;
	}
	return 0;
}

/* Rail 1 of two_rails_rail1_silent failed, the peer talking on rail 0:
 * when (its probe at 1.25 s, unanswered for the 500 ms timeout). */
static uint64_t rail1_failed(struct mrail_rail_health rails[2])
{
	uint64_t probed, failed;

	two_rails_rail1_silent(rails);
	failed = ticks_until_rail1_fails(rails, 1 * SEC + 200 * MS, 3 * SEC,
					 &probed);
	cr_assert_eq(probed, 1 * SEC + 250 * MS);
	cr_assert_eq(failed, 1 * SEC + 750 * MS);
	return failed;
}

Test(rail_health, a_fresh_rail_is_up)
{
	struct mrail_rail_health rails[3] = { 0 };

	cr_assert(mrail_health_usable(&rails[0]));
	cr_assert_eq(mrail_health_usable_count(rails, 3), 3);
	cr_assert_eq(mrail_health_judge(rails, 3, 1, 100 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
}

Test(rail_health, an_error_fails_a_working_rail_once)
{
	struct mrail_rail_health h = { 0 };

	mrail_health_posted(&h, SEC);
	cr_assert(mrail_health_error(&h, 2 * SEC));
	cr_assert_eq(h.state, MRAIL_HEALTH_FAILED);
	cr_assert_eq(h.reason, MRAIL_HEALTH_ERROR);
	cr_assert_eq(h.in_flight, 0, "what was in flight is the caller's now");
	cr_assert_not(mrail_health_error(&h, 2 * SEC + 1));
	cr_assert_eq(h.failures, 1);
	cr_assert_not(mrail_health_usable(&h));
}

Test(rail_health, a_silent_rail_fails_at_the_timeout_while_a_sibling_hears_the_peer)
{
	struct mrail_rail_health rails[2];

	two_rails_rail1_silent(rails);
	/* The stall clock runs from the post that started the busy spell:
	 * half a timeout on, a probe; the probe unanswered for the timeout,
	 * the rail fails. */
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 1 * SEC + 250 * MS - 1, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 1 * SEC + 250 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 1 * SEC + 300 * MS);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 1 * SEC + 300 * MS, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 1 * SEC + 750 * MS - 1, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 1 * SEC + 750 * MS, &cfg),
		     MRAIL_HEALTH_FAIL);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_FAILED);
	cr_assert_eq(rails[1].reason, MRAIL_HEALTH_STALLED);
	cr_assert_eq(rails[1].in_flight, 0);
	cr_assert_eq(rails[1].failures, 1);
	/* Rail 0 itself is fine, and stays the one usable rail. */
	cr_assert_neq(mrail_health_judge(rails, 2, 0, 1 * SEC + 750 * MS, &cfg),
		      MRAIL_HEALTH_FAIL);
	cr_assert_eq(mrail_health_usable_count(rails, 2), 1);
}

Test(rail_health, a_peer_that_did_not_progress_for_a_while_fails_no_rail)
{
	struct mrail_rail_health rails[2];
	uint64_t probed;

	/* Rail 1's operations wait from 1 s while the peer computes until
	 * 5 s; it then reads rail 0 first, and rail 1 answers 40 ms later. */
	two_rails_rail1_silent(rails);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 1 * SEC + 250 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 4 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING, "nobody heard: the peer's business");
	cr_assert_eq(ticks_until_rail1_fails(rails, 5 * SEC, 5 * SEC + 40 * MS,
					     &probed), 0);
	cr_assert_not(mrail_health_heard(&rails[1], MRAIL_HEARD_SERVED,
					 5 * SEC + 40 * MS));
	cr_assert_not(mrail_health_heard(&rails[1], MRAIL_HEARD_SERVED,
					 5 * SEC + 41 * MS));
	cr_assert_eq(rails[1].in_flight, 0);
	cr_assert_eq(ticks_until_rail1_fails(rails, 5 * SEC + 50 * MS, 7 * SEC,
					     &probed), 0);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP);
	cr_assert_eq(rails[1].failures, 0);
}

Test(rail_health, when_every_rail_is_silent_no_rail_is_blamed)
{
	struct mrail_rail_health rails[2] = { 0 };
	size_t r;

	/* A slow or dead peer: both rails busy, nothing heard on either. */
	for (r = 0; r < 2; r++)
		mrail_health_posted(&rails[r], SEC);
	for (r = 0; r < 2; r++)
		cr_assert_eq(mrail_health_judge(rails, 2, r, 60 * SEC, &cfg),
			     MRAIL_HEALTH_PROBE, "both probed");
	/* Neither probe answered: neither rail is blamed. */
	for (r = 0; r < 2; r++)
		cr_assert_eq(mrail_health_judge(rails, 2, r, 120 * SEC, &cfg),
			     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(mrail_health_usable_count(rails, 2), 2);
}

Test(rail_health, local_send_completions_on_a_sibling_are_no_evidence)
{
	struct mrail_rail_health rails[2] = { 0 };

	/* Sends complete locally even when the peer is gone. */
	mrail_health_posted(&rails[0], SEC);
	mrail_health_completed(&rails[0], SEC + 100 * MS, &cfg);
	mrail_health_posted(&rails[1], SEC);
	cr_assert_neq(mrail_health_judge(rails, 2, 1, 10 * SEC, &cfg),
		      MRAIL_HEALTH_FAIL);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 20 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert(mrail_health_usable(&rails[1]));
}

Test(rail_health, a_sibling_heard_only_before_the_stall_began_is_no_evidence)
{
	struct mrail_rail_health rails[2] = { 0 };

	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, SEC);
	mrail_health_posted(&rails[1], 2 * SEC);
	cr_assert_neq(mrail_health_judge(rails, 2, 1, 10 * SEC, &cfg),
		      MRAIL_HEALTH_FAIL);
	cr_assert(mrail_health_usable(&rails[1]));
}

Test(rail_health, a_failed_sibling_is_no_evidence)
{
	struct mrail_rail_health rails[3] = { 0 };

	mrail_health_posted(&rails[2], SEC);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 2 * SEC);
	cr_assert(mrail_health_error(&rails[0], 3 * SEC));
	cr_assert_neq(mrail_health_judge(rails, 3, 2, 10 * SEC, &cfg),
		      MRAIL_HEALTH_FAIL);
	cr_assert_eq(mrail_health_judge(rails, 3, 2, 20 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert(mrail_health_usable(&rails[2]));
}

Test(rail_health, progress_on_the_rail_restarts_its_stall_clock)
{
	struct mrail_rail_health rails[2];
	uint64_t probed;

	two_rails_rail1_silent(rails);
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, 1 * SEC + 300 * MS);
	mrail_health_completed(&rails[1], 1 * SEC + 400 * MS, &cfg);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 1 * SEC + 800 * MS);
	/* One send still in flight on rail 1, its clock from 1.4 s: past
	 * half a timeout at the first look (1.8 s), a probe; unanswered, a
	 * failure a timeout later. */
	cr_assert_eq(rails[1].in_flight, 1);
	cr_assert_eq(ticks_until_rail1_fails(rails, 1 * SEC + 800 * MS, 3 * SEC,
					     &probed), 2 * SEC + 300 * MS);
	cr_assert_eq(probed, 1 * SEC + 800 * MS, "probed at the first look");
}

Test(rail_health, sends_completing_on_a_rail_the_peer_went_quiet_on_hold_nothing_off)
{
	struct mrail_rail_health rails[2];
	uint64_t t;

	/* Rail 1 carried the peer's traffic until 1.1 s, then its link
	 * died: a read stays in flight, and sends go on completing into the
	 * socket every 100 ms while the peer answers on rail 0. */
	two_rails_rail1_silent(rails);
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, 1 * SEC + 100 * MS);
	for (t = 1 * SEC + 200 * MS; t < 3 * SEC; t += 100 * MS) {
		mrail_health_posted(&rails[1], t);
		mrail_health_completed(&rails[1], t + 1, &cfg);
		mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, t + 2);
		if (mrail_health_judge(rails, 2, 1, t + 3, &cfg) ==
		    MRAIL_HEALTH_FAIL)
			break;
	}
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_FAILED);
	cr_assert_leq(t, 1 * SEC + 100 * MS + 2 * 500 * MS,
		      "failed within two timeouts of the last word on it "
		      "(at %llu ms)", (unsigned long long) (t / MS));
}

Test(rail_health, an_idle_rail_never_fails)
{
	struct mrail_rail_health rails[2] = { 0 };

	/* A send, then the peer's answer on the rail, then nothing for 99 s
	 * while the peer talks on rail 0: no probe, no failure. */
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, SEC);
	mrail_health_posted(&rails[1], SEC);
	mrail_health_completed(&rails[1], SEC + 1, &cfg);
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, SEC + 2);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 5 * SEC);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 100 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
}

/* Rail 1 heard at 1 s, then a stream of sends completing on it (into a
 * socket whose link died) while the peer answers on rail 0 only. */
static void sends_into_silence(struct mrail_rail_health rails[2], uint64_t until)
{
	uint64_t t;

	memset(rails, 0, 2 * sizeof(rails[0]));
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, SEC);
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, SEC);
	for (t = SEC + 10 * MS; t <= until; t += 10 * MS) {
		mrail_health_posted(&rails[1], t);
		mrail_health_completed(&rails[1], t + 1, &cfg);
		mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, t + 2);
	}
}

Test(rail_health, sends_unanswered_for_half_the_timeout_get_a_probe)
{
	struct mrail_rail_health rails[2];

	sends_into_silence(rails, SEC + 240 * MS);
	cr_assert_eq(rails[1].in_flight, 0, "every send completed");
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 249 * MS, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 250 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP, "probed, not failed");
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 260 * MS, &cfg),
		     MRAIL_HEALTH_NOTHING, "one probe at a time");
}

Test(rail_health, a_quiet_rail_whose_probe_goes_unanswered_fails)
{
	struct mrail_rail_health rails[2];

	sends_into_silence(rails, SEC + 250 * MS);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 250 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	/* The probe's own send completes; nothing comes back. */
	mrail_health_posted(&rails[1], SEC + 250 * MS);
	mrail_health_completed(&rails[1], SEC + 251 * MS, &cfg);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, SEC + 450 * MS);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 500 * MS, &cfg),
		     MRAIL_HEALTH_NOTHING, "the peer alive since 500 ms");
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 749 * MS, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 750 * MS, &cfg),
		     MRAIL_HEALTH_FAIL);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_FAILED);
	cr_assert_eq(rails[1].reason, MRAIL_HEALTH_STALLED);
	cr_assert_eq(rails[1].echo_wait_ns, 0);
	cr_assert_eq(rails[1].failures, 1);
}

Test(rail_health, a_quiet_rail_that_echoes_stays_up)
{
	struct mrail_rail_health rails[2];

	sends_into_silence(rails, SEC + 250 * MS);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 250 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	cr_assert_not(mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL,
					 SEC + 251 * MS),
		      "it was up all along: no change to report");
	cr_assert_eq(rails[1].echo_wait_ns, 0);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 5 * SEC);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 5 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING, "no sends since the echo");
}

Test(rail_health, a_quiet_probe_blames_no_rail_while_the_peer_is_silent_everywhere)
{
	struct mrail_rail_health rails[2];

	sends_into_silence(rails, SEC + 240 * MS);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 250 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	/* Rail 0 last heard the peer before the probe went. */
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 10 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP);
}

Test(rail_health, sends_on_a_rail_never_heard_on_wait_for_the_first_probe_rule)
{
	struct mrail_rail_health rails[2] = { 0 };

	/* No word on rail 1 ever: the quiet rule has no "since" to count
	 * from; the never-heard rule probes it once instead. */
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, SEC);
	mrail_health_posted(&rails[1], SEC);
	mrail_health_completed(&rails[1], SEC + 1, &cfg);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 2, &cfg),
		     MRAIL_HEALTH_PROBE);
	cr_assert_eq(rails[1].echo_wait_ns, 0, "the never-heard probe");
}

Test(rail_health, a_failed_rail_is_probed_every_interval_until_it_answers)
{
	struct mrail_rail_health rails[2];
	uint64_t t = rail1_failed(rails);	/* when it failed */

	cr_assert_eq(mrail_health_judge(rails, 2, 1, t + 250 * MS - 1, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, t + 250 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_PROBING);
	cr_assert_not(mrail_health_usable(&rails[1]));
	/* Unanswered within the timeout: failed again, and probed again
	 * an interval after the last probe went. */
	cr_assert_eq(mrail_health_judge(rails, 2, 1, t + 750 * MS - 1, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_PROBING);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, t + 750 * MS, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_FAILED);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, t + 750 * MS, &cfg),
		     MRAIL_HEALTH_PROBE);
	/* A message from the peer proves only its way to us. */
	cr_assert_not(mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL,
					 t + 790 * MS));
	cr_assert_not(mrail_health_usable(&rails[1]));
	cr_assert_eq(rails[1].recoveries, 0);
	/* The echo of the probe brings it back. */
	cr_assert(mrail_health_heard(&rails[1], MRAIL_HEARD_ECHO,
				     t + 800 * MS));
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP);
	cr_assert_eq(rails[1].reason, MRAIL_HEALTH_NO_REASON);
	cr_assert_eq(rails[1].recoveries, 1);
	cr_assert_eq(rails[1].failures, 1);
	cr_assert_eq(mrail_health_usable_count(rails, 2), 2);
	cr_assert_not(mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL,
					 t + 900 * MS),
		      "only a change is reported");
}

Test(rail_health, a_rail_that_comes_back_starts_with_nothing_in_flight)
{
	struct mrail_rail_health rails[2];
	uint64_t t = rail1_failed(rails);	/* when it failed */

	/* Two probes go out on it, and the peer answers the second. */
	mrail_health_posted(&rails[1], t + 250 * MS);
	mrail_health_posted(&rails[1], t + 750 * MS);
	cr_assert_eq(rails[1].in_flight, 2);
	cr_assert(mrail_health_heard(&rails[1], MRAIL_HEARD_ECHO,
				     t + 800 * MS));
	cr_assert_eq(rails[1].in_flight, 0,
		     "probes left unanswered must not read as a stall later");
	/* Long after, with the peer heard on rail 0 and nothing posted on
	 * rail 1, rail 1 stays up. */
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, t + 5 * SEC);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, t + 5 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert(mrail_health_usable(&rails[1]));
}

Test(rail_health, a_rail_never_heard_on_gets_one_probe_while_a_sibling_was)
{
	struct mrail_rail_health rails[2] = { 0 };
	uint64_t probed;

	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC, &cfg),
		     MRAIL_HEALTH_NOTHING, "no sibling heard yet: nothing to go on");
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 2 * SEC);
	cr_assert(mrail_health_usable(&rails[1]));
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 2 * SEC, &cfg),
		     MRAIL_HEALTH_PROBE);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP, "probed, not failed");
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 2 * SEC + 1, &cfg),
		     MRAIL_HEALTH_NOTHING, "one probe only");
	/* Unanswered, the probe stalls like any operation: probed again
	 * half a timeout on, failed a timeout after that. */
	mrail_health_posted(&rails[1], 2 * SEC);
	cr_assert_eq(ticks_until_rail1_fails(rails, 2 * SEC + 10 * MS, 4 * SEC,
					     &probed), 2 * SEC + 750 * MS);
	cr_assert_eq(probed, 2 * SEC + 250 * MS);
	cr_assert_eq(rails[1].reason, MRAIL_HEALTH_STALLED);
}

Test(rail_health, an_answered_probe_is_the_last_one)
{
	struct mrail_rail_health rails[2] = { 0 };

	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 2 * SEC);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 2 * SEC, &cfg),
		     MRAIL_HEALTH_PROBE);
	mrail_health_posted(&rails[1], 2 * SEC);
	cr_assert_not(mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL,
					 2 * SEC + MS),
		      "it was up all along: no change to report");
	cr_assert_eq(rails[1].in_flight, 1, "an echo is no served operation");
	mrail_health_probe_completed(&rails[1]);
	cr_assert_eq(rails[1].in_flight, 0);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 10 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
}

Test(rail_health, a_rail_down_from_the_start_is_probed_at_once_and_comes_back)
{
	struct mrail_rail_health rails[2] = { 0 };

	mrail_health_start_failed(&rails[1]);
	cr_assert_not(mrail_health_usable(&rails[1]));
	cr_assert_eq(mrail_health_usable_count(rails, 2), 1);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC, &cfg),
		     MRAIL_HEALTH_PROBE);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, SEC + 500 * MS, &cfg),
		     MRAIL_HEALTH_NOTHING);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_FAILED, "unanswered");
	cr_assert(mrail_health_heard(&rails[1], MRAIL_HEARD_ECHO, 3 * SEC));
	cr_assert(mrail_health_usable(&rails[1]));
	cr_assert_eq(rails[1].recoveries, 1);
}

Test(rail_health, a_rail_that_refuses_everything_fails_like_a_stalled_one)
{
	struct mrail_rail_health rails[2];

	/* Rail 1 connects to a peer whose link is down: every send to it is
	 * refused from 1 s on, while the peer answers on rail 0. */
	memset(rails, 0, sizeof(rails));
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 500 * MS);
	mrail_health_refused(&rails[1], 1 * SEC);
	mrail_health_refused(&rails[1], 1 * SEC + 200 * MS);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 1 * SEC + 300 * MS);
	cr_assert_neq(mrail_health_judge(rails, 2, 1, 1 * SEC + 499 * MS, &cfg),
		      MRAIL_HEALTH_FAIL, "the clock runs from the first refusal");
	cr_assert(mrail_health_usable(&rails[1]));
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 1 * SEC + 500 * MS, &cfg),
		     MRAIL_HEALTH_FAIL);
	cr_assert_eq(rails[1].reason, MRAIL_HEALTH_STALLED);
}

Test(rail_health, a_refusal_then_a_post_that_goes_is_a_connection_made)
{
	struct mrail_rail_health rails[2];

	memset(rails, 0, sizeof(rails));
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, 500 * MS);
	mrail_health_refused(&rails[1], 1 * SEC);
	mrail_health_posted(&rails[1], 1 * SEC + 1 * MS);
	mrail_health_completed(&rails[1], 1 * SEC + 2 * MS, &cfg);
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 3 * SEC);
	/* Not failed for the refusal (the unanswered send gets a probe). */
	cr_assert_neq(mrail_health_judge(rails, 2, 1, 5 * SEC, &cfg),
		      MRAIL_HEALTH_FAIL);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP);
	cr_assert_eq(rails[1].refused_ns, 0);
	/* Refused alone, with the peer heard nowhere else: no verdict. */
	memset(rails, 0, sizeof(rails));
	mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, 500 * MS);
	mrail_health_heard(&rails[1], MRAIL_HEARD_ARRIVAL, 500 * MS);
	mrail_health_refused(&rails[1], 1 * SEC);
	cr_assert_eq(mrail_health_judge(rails, 2, 1, 5 * SEC, &cfg),
		     MRAIL_HEALTH_NOTHING);
}

Test(rail_health, a_served_operation_leaves_the_count_a_message_does_not)
{
	struct mrail_rail_health h = { 0 };

	mrail_health_posted(&h, SEC);
	mrail_health_posted(&h, SEC);
	mrail_health_heard(&h, MRAIL_HEARD_ARRIVAL, 2 * SEC);
	cr_assert_eq(h.in_flight, 2);
	mrail_health_heard(&h, MRAIL_HEARD_SERVED, 3 * SEC);
	cr_assert_eq(h.in_flight, 1);
	mrail_health_completed(&h, 4 * SEC, &cfg);
	mrail_health_completed(&h, 4 * SEC, &cfg);
	cr_assert_eq(h.in_flight, 0, "never below zero");
}

Test(rail_health, flapping_counts_every_failure_and_every_return)
{
	struct mrail_rail_health rails[2] = { 0 };
	uint64_t t = SEC;
	int round;

	for (round = 0; round < 10; round++, t += SEC) {
		mrail_health_heard(&rails[0], MRAIL_HEARD_ARRIVAL, t);
		cr_assert(mrail_health_error(&rails[1], t + 1));
		cr_assert_eq(mrail_health_judge(rails, 2, 1, t + 300 * MS, &cfg),
			     MRAIL_HEALTH_PROBE);
		cr_assert(mrail_health_heard(&rails[1], MRAIL_HEARD_ECHO,
					     t + 400 * MS));
	}
	cr_assert_eq(rails[1].failures, 10);
	cr_assert_eq(rails[1].recoveries, 10);
	cr_assert_eq(rails[1].state, MRAIL_HEALTH_UP);
}

Test(rail_health, names_and_reasons_read_as_words)
{
	cr_assert_str_eq(mrail_health_state_name(MRAIL_HEALTH_UP), "up");
	cr_assert_str_eq(mrail_health_state_name(MRAIL_HEALTH_FAILED), "failed");
	cr_assert_str_eq(mrail_health_state_name(MRAIL_HEALTH_PROBING), "probing");
	cr_assert_str_eq(mrail_health_reason_text(MRAIL_HEALTH_ERROR),
			 "it reported an error");
	cr_assert(strstr(mrail_health_reason_text(MRAIL_HEALTH_STALLED),
			 "another rail"));
}

Test(rail_health, the_timeout_parses_whole_milliseconds_in_range)
{
	uint64_t ns = 7;
	char err[160] = "";

	cr_assert_eq(mrail_health_parse_timeout("750", &ns, err, sizeof(err)), 0);
	cr_assert_eq(ns, 750 * MS);
	cr_assert_eq(mrail_health_parse_timeout("10", &ns, err, sizeof(err)), 0);
	cr_assert_eq(ns, 10 * MS);
	cr_assert_eq(mrail_health_parse_timeout("60000", &ns, err, sizeof(err)), 0);
	cr_assert_eq(ns, 60 * SEC);
}

Test(rail_health, a_bad_timeout_is_refused_with_a_sentence)
{
	const char *bad[] = { "9", "0", "60001", "1s", "-5", "", "0x20", " 50" };
	uint64_t ns = 7;
	char err[160];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(mrail_health_parse_timeout(bad[i], &ns, err, sizeof(err)),
			     -EINVAL, "'%s' accepted", bad[i]);
		cr_assert(strstr(err, "milliseconds from 10 to 60000"), "%s", err);
		cr_assert_eq(ns, 7, "'%s' changed the value", bad[i]);
	}
	cr_assert_eq(mrail_health_parse_timeout(NULL, &ns, err, sizeof(err)), -EINVAL);
}
