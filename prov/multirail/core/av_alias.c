/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Canonical AV entries (see av_alias.h).
 */
#include "av_alias.h"

uint64_t mrail_alias_add(struct mrail_alias *tab, size_t count, uint64_t idx,
			 uint64_t owner)
{
	struct mrail_alias *entry = &tab[idx];
	uint64_t canon = idx;

	if (owner != MRAIL_ALIAS_NONE && owner < count && tab[owner].live) {
		/* Whatever entry of the peer was found, its canonical one
		 * speaks for it. */
		canon = tab[owner].canon;
		tab[canon].aliases++;
	}
	entry->canon = canon;
	entry->named = true;
	entry->live = true;
	entry->learned = false;
	entry->aliases = 0;
	return canon;
}

void mrail_alias_learn(struct mrail_alias *tab, uint64_t idx)
{
	struct mrail_alias *entry = &tab[idx];

	entry->canon = idx;
	entry->named = false;
	entry->live = true;
	entry->learned = true;
	entry->aliases = 0;
}

uint64_t mrail_alias_resolve(const struct mrail_alias *tab, size_t count,
			     uint64_t idx)
{
	if (idx >= count || !tab[idx].named)
		return MRAIL_ALIAS_NONE;
	return tab[idx].canon;
}

int mrail_alias_remove(struct mrail_alias *tab, size_t count, uint64_t idx,
		       uint64_t freed[2])
{
	struct mrail_alias *entry, *canon;
	int n = 0;

	if (idx >= count || !tab[idx].named)
		return -1;
	entry = &tab[idx];
	entry->named = false;
	if (entry->canon == idx) {
		/* Aliases still send and receive through it: it stays,
		 * hidden, until the last of them goes. */
		if (entry->aliases)
			return 0;
		entry->live = false;
		freed[n++] = idx;
		return n;
	}
	entry->live = false;
	freed[n++] = idx;
	canon = &tab[entry->canon];
	canon->aliases--;
	if (!canon->aliases && !canon->named && !canon->learned) {
		canon->live = false;
		freed[n++] = entry->canon;
	}
	return n;
}

uint64_t mrail_alias_shown(const struct mrail_alias *tab, size_t count,
			   uint64_t canon)
{
	size_t i;

	if (canon >= count || !tab[canon].live)
		return MRAIL_ALIAS_NONE;
	if (tab[canon].named)
		return canon;
	for (i = 0; i < count; i++) {
		if (i != canon && tab[i].named && tab[i].canon == canon)
			return i;
	}
	return MRAIL_ALIAS_NONE;
}
