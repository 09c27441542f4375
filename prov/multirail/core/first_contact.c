/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * First contact decisions (first_contact.h).
 */
#include "first_contact.h"
#include "wire.h"

enum mrail_contact_step mrail_contact_step(bool partial, bool introduced)
{
	/* Without the peer's other rails nothing can be striped or moved
	 * off rail 0: wait for its REPLY, whether the greeting is new. */
	if (partial)
		return MRAIL_CONTACT_AWAIT_REPLY;
	return introduced ? MRAIL_CONTACT_SEND : MRAIL_CONTACT_INTRODUCE;
}

uint8_t mrail_hello_flags(bool reply, bool intro)
{
	/* An answer is never an introduction: a peer that greeted us has
	 * told us its address and learns ours from the REPLY. */
	if (reply)
		return MRAIL_WIRE_F_REPLY;
	return intro ? MRAIL_WIRE_F_INTRO : 0;
}

bool mrail_hello_wants_reply(uint8_t flags)
{
	return !(flags & (MRAIL_WIRE_F_REPLY | MRAIL_WIRE_F_INTRO));
}
