/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * First contact between two endpoints: what a send must do before its data
 * goes out, and what a received HELLO asks for in return.
 *
 * A receiver finds a message's sender by the key in its header, and keeps
 * messages whose key its AV does not hold until it learns the key. An
 * application that only ever receives from a peer (Open MPI's mtl ofi posts
 * such receives with FI_ADDR_UNSPEC and never inserts their senders; a
 * barrier or gather root waits for every rank before it sends to any)
 * would never learn it. So the first send to every peer is preceded by a
 * HELLO carrying our full address: to a peer named only partially, a
 * greeting whose REPLY must come back before any data (the peer's full
 * address is needed to use every rail); to a peer whose full address we
 * hold, an introduction that needs no answer, after which data follows at
 * once (a message that overtakes it on another rail waits at the receiver
 * until it arrives).
 */
#ifndef MRAIL_FIRST_CONTACT_H
#define MRAIL_FIRST_CONTACT_H

#include <stdbool.h>
#include <stdint.h>

enum mrail_contact_step {
	MRAIL_CONTACT_SEND,		/* the peer knows us: send */
	MRAIL_CONTACT_INTRODUCE,	/* queue an introduction, then send */
	MRAIL_CONTACT_AWAIT_REPLY,	/* greet (once) and wait for the REPLY */
};

/* partial: our entry of the peer holds its first rail only; introduced:
 * a HELLO of ours went (or is queued) to it, or it told us its full
 * address itself, so it holds ours. */
enum mrail_contact_step mrail_contact_step(bool partial, bool introduced);

/* The HELLO flags of a message of ours: a REPLY answers a greeting; an
 * introduction (INTRO) announces us to a peer we hold in full. */
uint8_t mrail_hello_flags(bool reply, bool intro);

/* Whether a received HELLO with these flags is a greeting that must be
 * answered with a REPLY. */
bool mrail_hello_wants_reply(uint8_t flags);

#endif
