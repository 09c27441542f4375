/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * First contact (core/first_contact.c): what a send does before its data,
 * and which HELLOs are answered.
 */
#include <criterion/criterion.h>

#include "first_contact.h"
#include "wire.h"

Test(first_contact, a_full_entry_not_introduced_yet_is_introduced_then_sent_to)
{
	/* The fan-in case: a root that only receives from us must learn
	 * our key from somewhere, so the first send introduces us... */
	cr_assert_eq(mrail_contact_step(false, false), MRAIL_CONTACT_INTRODUCE);
	/* ...once: the next sends go straight out. */
	cr_assert_eq(mrail_contact_step(false, true), MRAIL_CONTACT_SEND);
}

Test(first_contact, a_partial_entry_waits_for_the_reply_whether_greeted_or_not)
{
	cr_assert_eq(mrail_contact_step(true, false), MRAIL_CONTACT_AWAIT_REPLY);
	cr_assert_eq(mrail_contact_step(true, true), MRAIL_CONTACT_AWAIT_REPLY);
}

Test(first_contact, hello_flags_encode_reply_and_introduction_apart)
{
	cr_assert_eq(mrail_hello_flags(false, false), 0);
	cr_assert_eq(mrail_hello_flags(true, false), MRAIL_WIRE_F_REPLY);
	cr_assert_eq(mrail_hello_flags(false, true), MRAIL_WIRE_F_INTRO);
	cr_assert_eq(mrail_hello_flags(true, true), MRAIL_WIRE_F_REPLY,
		     "a reply is never flagged as an introduction too");
}

Test(first_contact, only_a_greeting_is_answered)
{
	cr_assert(mrail_hello_wants_reply(0));
	cr_assert_not(mrail_hello_wants_reply(MRAIL_WIRE_F_REPLY),
		      "a REPLY answered would ping-pong for ever");
	cr_assert_not(mrail_hello_wants_reply(MRAIL_WIRE_F_INTRO),
		      "an introduction comes from a peer that holds our address");
}

Test(first_contact, every_flag_combination_round_trips)
{
	int reply, intro;

	for (reply = 0; reply <= 1; reply++) {
		for (intro = 0; intro <= 1; intro++) {
			uint8_t f = mrail_hello_flags(reply, intro);

			cr_assert_eq(mrail_hello_wants_reply(f), !reply && !intro);
		}
	}
}
