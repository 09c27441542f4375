/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which AV entry speaks for a peer inserted more than once (core/av_alias.c).
 */
#include <criterion/criterion.h>

#include "av_alias.h"

#define N 8
#define NONE MRAIL_ALIAS_NONE

Test(av_alias, a_new_peer_is_its_own_canonical_entry)
{
	struct mrail_alias tab[N] = { 0 };

	cr_assert_eq(mrail_alias_add(tab, N, 0, NONE), 0);
	cr_assert_eq(mrail_alias_add(tab, N, 1, NONE), 1);
	cr_assert_eq(mrail_alias_resolve(tab, N, 0), 0);
	cr_assert_eq(mrail_alias_resolve(tab, N, 1), 1);
	cr_assert_eq(mrail_alias_resolve(tab, N, 2), NONE, "never inserted");
	cr_assert_eq(mrail_alias_resolve(tab, N, N + 3), NONE, "past the table");
}

/* The fabtests case: the peer learnt from its HELLO is entry 0, the
 * application inserts the same address again and gets entry 1; both must
 * send through entry 0, or the peer sees two sequence streams. */
Test(av_alias, a_second_insert_of_a_peer_resolves_to_the_first)
{
	struct mrail_alias tab[N] = { 0 };

	mrail_alias_add(tab, N, 0, NONE);
	cr_assert_eq(mrail_alias_add(tab, N, 1, 0), 0);
	/* Found through an alias, the owner is still the canonical one. */
	cr_assert_eq(mrail_alias_add(tab, N, 2, 1), 0);
	cr_assert_eq(mrail_alias_resolve(tab, N, 1), 0);
	cr_assert_eq(mrail_alias_resolve(tab, N, 2), 0);
	cr_assert_eq(tab[0].aliases, 2);
	cr_assert_eq(mrail_alias_shown(tab, N, 0), 0);
}

Test(av_alias, an_owner_that_is_not_live_is_no_owner)
{
	struct mrail_alias tab[N] = { 0 };
	uint64_t freed[2];

	mrail_alias_add(tab, N, 0, NONE);
	cr_assert_eq(mrail_alias_remove(tab, N, 0, freed), 1);
	cr_assert_eq(mrail_alias_add(tab, N, 1, 0), 1);
	cr_assert_eq(mrail_alias_add(tab, N, 2, N + 5), 2);
}

Test(av_alias, removing_an_alias_frees_only_it)
{
	struct mrail_alias tab[N] = { 0 };
	uint64_t freed[2];

	mrail_alias_add(tab, N, 0, NONE);
	mrail_alias_add(tab, N, 1, 0);
	cr_assert_eq(mrail_alias_remove(tab, N, 1, freed), 1);
	cr_assert_eq(freed[0], 1);
	cr_assert_eq(mrail_alias_resolve(tab, N, 1), NONE);
	cr_assert_eq(mrail_alias_resolve(tab, N, 0), 0);
	cr_assert_eq(tab[0].aliases, 0);
	cr_assert_eq(mrail_alias_remove(tab, N, 1, freed), -1, "removed twice");
}

Test(av_alias, removing_the_canonical_entry_keeps_it_hidden_for_its_aliases)
{
	struct mrail_alias tab[N] = { 0 };
	uint64_t freed[2];

	mrail_alias_add(tab, N, 0, NONE);
	mrail_alias_add(tab, N, 1, 0);
	mrail_alias_add(tab, N, 2, 0);
	cr_assert_eq(mrail_alias_remove(tab, N, 0, freed), 0, "nothing freed");
	cr_assert_eq(mrail_alias_resolve(tab, N, 0), NONE,
		     "the application's entry 0 is gone");
	cr_assert_eq(mrail_alias_resolve(tab, N, 1), 0, "the peer's state stays");
	cr_assert(tab[0].live);
	cr_assert_eq(mrail_alias_shown(tab, N, 0), 1, "messages show a live name");
	/* A new insert of the peer joins the hidden canonical entry. */
	cr_assert_eq(mrail_alias_add(tab, N, 3, 0), 0);
	cr_assert_eq(mrail_alias_remove(tab, N, 1, freed), 1);
	cr_assert_eq(freed[0], 1);
	cr_assert_eq(mrail_alias_shown(tab, N, 0), 2);
	cr_assert_eq(mrail_alias_remove(tab, N, 3, freed), 1);
	cr_assert_eq(mrail_alias_remove(tab, N, 2, freed), 2,
		     "the last alias frees the hidden entry with it");
	cr_assert_eq(freed[0], 2);
	cr_assert_eq(freed[1], 0);
	cr_assert_not(tab[0].live);
	cr_assert_eq(mrail_alias_shown(tab, N, 0), NONE);
}

Test(av_alias, peers_do_not_share_canonical_entries)
{
	struct mrail_alias tab[N] = { 0 };
	uint64_t freed[2];

	mrail_alias_add(tab, N, 0, NONE);
	mrail_alias_add(tab, N, 1, NONE);
	mrail_alias_add(tab, N, 2, 1);
	mrail_alias_add(tab, N, 3, 0);
	cr_assert_eq(mrail_alias_resolve(tab, N, 2), 1);
	cr_assert_eq(mrail_alias_resolve(tab, N, 3), 0);
	cr_assert_eq(mrail_alias_remove(tab, N, 1, freed), 0);
	cr_assert_eq(mrail_alias_remove(tab, N, 3, freed), 1);
	cr_assert_eq(mrail_alias_resolve(tab, N, 2), 1);
	cr_assert_eq(mrail_alias_resolve(tab, N, 0), 0);
}

/* A peer mrail learned from its HELLO: no application entry resolves to
 * it and no source shows it, until the application inserts the peer. */
Test(av_alias, a_learned_peer_is_hidden_until_the_application_inserts_it)
{
	struct mrail_alias tab[N] = { 0 };
	uint64_t freed[2];

	mrail_alias_learn(tab, 0);
	cr_assert_eq(mrail_alias_resolve(tab, N, 0), NONE, "not the application's");
	cr_assert_eq(mrail_alias_shown(tab, N, 0), NONE, "its messages show no source");
	cr_assert(tab[0].live, "its state lives: the peer talks to us");
	cr_assert_eq(mrail_alias_add(tab, N, 1, 0), 0, "the insert aliases it");
	cr_assert_eq(mrail_alias_resolve(tab, N, 1), 0);
	cr_assert_eq(mrail_alias_shown(tab, N, 0), 1, "now shown as the insert");
	cr_assert_eq(mrail_alias_remove(tab, N, 0, freed), -1,
		     "the application cannot remove what it never had");
}

Test(av_alias, removing_the_inserts_of_a_learned_peer_keeps_it)
{
	struct mrail_alias tab[N] = { 0 };
	uint64_t freed[2];

	mrail_alias_learn(tab, 0);
	mrail_alias_add(tab, N, 1, 0);
	cr_assert_eq(mrail_alias_remove(tab, N, 1, freed), 1);
	cr_assert_eq(freed[0], 1, "only the insert's own entry goes");
	cr_assert(tab[0].live, "the learned peer stays");
	cr_assert_eq(mrail_alias_shown(tab, N, 0), NONE);
	cr_assert_eq(mrail_alias_add(tab, N, 2, 0), 0, "a new insert finds it");
}
