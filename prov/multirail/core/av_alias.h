/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One peer, several AV entries: which entry speaks for the peer?
 *
 * fi_av(3) lets an application insert the same address twice and get two
 * fi_addr_t values, and mrail itself adds entries (a partial address from
 * fi_getinfo(node, service), a peer learnt from its HELLO). Messages from a
 * peer carry one sender key, and an endpoint keeps one sequence stream, one
 * reorder window, one set of credits and one table of waits per peer: all
 * of it must hang off one entry. So every entry names a canonical entry,
 * the first one inserted for its peer, and an endpoint turns every fi_addr_t
 * it is given into the canonical one before using it.
 *
 * The canonical entry of a peer never changes while any entry of the peer
 * is in the AV: removing the canonical entry while an alias remains hides it
 * from the application (its fi_addr_t is invalid from then on) but keeps it,
 * and the peer's state, for the aliases; the last alias to go frees it.
 * These are plain functions over a table indexed like the AV's entries.
 */
#ifndef MRAIL_AV_ALIAS_H
#define MRAIL_AV_ALIAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MRAIL_ALIAS_NONE UINT64_MAX

struct mrail_alias {
	uint64_t canon;		/* the entry that speaks for the peer */
	bool named;		/* the application may use this entry */
	bool live;		/* named, learned, or the canonical of aliases */
	bool learned;		/* mrail added it (a peer's HELLO): never
				 * named, kept while the AV lives */
	size_t aliases;		/* canonical: named entries besides itself */
};

/*
 * Entry idx (unused so far) is added for a peer. owner is an entry of the
 * same peer already live (any of them; found by its key or its rail 0), or
 * MRAIL_ALIAS_NONE for a new peer. Returns idx's canonical entry.
 */
uint64_t mrail_alias_add(struct mrail_alias *tab, size_t count, uint64_t idx,
			 uint64_t owner);

/*
 * Entry idx (unused so far) is a peer mrail learned by itself (from its
 * HELLO) and the application never named: a canonical entry the
 * application cannot see, which its own later inserts of the peer alias.
 * Removing those aliases leaves it: the peer keeps talking to us.
 */
void mrail_alias_learn(struct mrail_alias *tab, uint64_t idx);

/* The canonical entry behind an fi_addr_t the application gave, or
 * MRAIL_ALIAS_NONE when it names no entry (never inserted, or removed). */
uint64_t mrail_alias_resolve(const struct mrail_alias *tab, size_t count,
			     uint64_t idx);

/*
 * The application removes named entry idx. Writes the entries whose peer
 * record must be released now into freed (at most 2: idx itself unless it
 * stays as a hidden canonical, and a hidden canonical whose last alias idx
 * was) and returns how many; -1 when idx is not named.
 */
int mrail_alias_remove(struct mrail_alias *tab, size_t count, uint64_t idx,
		       uint64_t freed[2]);

/* The entry to show the application for canonical entry canon (a message's
 * source): canon while named, else its lowest named alias; NONE if none. */
uint64_t mrail_alias_shown(const struct mrail_alias *tab, size_t count,
			   uint64_t canon);

#endif /* MRAIL_AV_ALIAS_H */
