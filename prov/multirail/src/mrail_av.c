/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Address vector: a peer's mrail address names one core address per rail;
 * inserting it inserts each into that rail's core AV. Each peer remembers
 * its fi_addr_t on every rail.
 *
 * Two index spaces. The application's fi_addr_t values count its own
 * inserts, 0, 1, 2, ... (fi_av(3) promises that order for FI_AV_TABLE, and
 * runtimes such as SOS use a peer's rank as its fi_addr_t); FI_AV_MAP gets
 * the same values. Inside, entries live in a table of their own whose
 * index ("slot") endpoints key their per-peer state on: the application's
 * entries, and peers mrail learns from their HELLO without the
 * application inserting them, which must not take one of its values.
 * mrail_av_canon turns an application's fi_addr_t into its peer's
 * canonical slot, mrail_av_shown a slot back into the application's
 * fi_addr_t (FI_ADDR_NOTAVAIL for a peer it never inserted).
 *
 * Peer addresses are untrusted bytes: they are decoded and checked against
 * this host's rails before any core AV sees them.
 */
#include "mrail.h"
#include "mrail_av.h"
#include "mrail_cq.h"
#include "mrail_coll.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "av_sym.h"

#define MRAIL_AV_INSERT_FLAGS (FI_MORE | FI_SYNC_ERR)

/* The address codec (core/, which does not include libfabric) writes
 * these formats compactly. */
_Static_assert(MRAIL_ADDR_FORMAT_SOCKADDR_IN == FI_SOCKADDR_IN,
	       "addr_codec.h's IPv4 format is libfabric's FI_SOCKADDR_IN");
_Static_assert(MRAIL_ADDR_FORMAT_SOCKADDR_IN6 == FI_SOCKADDR_IN6,
	       "addr_codec.h's IPv6 format is libfabric's FI_SOCKADDR_IN6");

static void av_pull_shared(struct mrail_av *av, fi_addr_t app);
static int av_check_reachable(struct mrail_av *av, const struct mrail_addr *addr,
			      size_t index);

/* The slot behind an fi_addr_t of the application's (a reader of a named
 * AV takes the writer's entry first), or FI_ADDR_NOTAVAIL. */
static fi_addr_t av_slot_of(struct mrail_av *av, fi_addr_t app)
{
	av_pull_shared(av, app);
	return app < av->app_count ? av->app_slots[app] : FI_ADDR_NOTAVAIL;
}

/* The entry an application names, or NULL (never inserted, removed). */
static struct mrail_av_peer *av_named(struct mrail_av *av, fi_addr_t app)
{
	fi_addr_t slot = av_slot_of(av, app);

	if (mrail_alias_resolve(av->alias, av->peer_count, slot) ==
	    MRAIL_ALIAS_NONE)
		return NULL;
	return &av->peers[slot];
}

struct mrail_av_peer *mrail_av_get_peer(struct mrail_av *av, fi_addr_t fi_addr)
{
	if (fi_addr >= av->peer_count || !av->alias[fi_addr].live)
		return NULL;
	return &av->peers[av->alias[fi_addr].canon];
}

fi_addr_t mrail_av_canon(struct mrail_av *av, fi_addr_t fi_addr)
{
	uint64_t canon;

	canon = mrail_alias_resolve(av->alias, av->peer_count,
				    av_slot_of(av, fi_addr));

	return canon == MRAIL_ALIAS_NONE ? FI_ADDR_NOTAVAIL : canon;
}

fi_addr_t mrail_av_shown(struct mrail_av *av, fi_addr_t canon)
{
	uint64_t shown;

	if (canon >= av->peer_count)
		return canon;	/* FI_ADDR_NOTAVAIL and friends */
	shown = mrail_alias_shown(av->alias, av->peer_count, canon);
	return shown == MRAIL_ALIAS_NONE ? FI_ADDR_NOTAVAIL : av->peers[shown].app;
}

fi_addr_t mrail_av_app_count(const struct mrail_av *av)
{
	return av->app_count;
}

/* Peers by the key every mrail header carries (mrail_addr_key): each
 * arriving message needs it, so it is a hash, not a scan of the peers.
 * Only canonical entries are in it. */
struct mrail_av_key {
	UT_hash_handle hh;
	uint64_t key;
	fi_addr_t peer;
};

fi_addr_t mrail_av_peer_of_key(struct mrail_av *av, uint64_t key)
{
	struct mrail_av_key *entry;

	HASH_FIND(hh, av->keys, &key, sizeof(key), entry);
	return entry ? entry->peer : FI_ADDR_NOTAVAIL;
}

static bool av_same_addr(const struct mrail_addr *a, const struct mrail_addr *b)
{
	unsigned rail;

	if (a->rail_count != b->rail_count)
		return false;
	for (rail = 0; rail < a->rail_count; rail++) {
		if (!mrail_addr_same_rail(a, b, rail))
			return false;
	}
	return true;
}

/* A canonical entry takes its peer's key. */
static int av_key_add(struct mrail_av *av, uint64_t key, fi_addr_t peer)
{
	struct mrail_av_key *entry = malloc(sizeof(*entry));

	if (!entry)
		return -FI_ENOMEM;
	entry->key = key;
	entry->peer = peer;
	HASH_ADD(hh, av->keys, key, sizeof(entry->key), entry);
	av->key_generation++;
	return 0;
}

/* A canonical entry is freed: no other entry of its peer is left. */
static void av_key_remove(struct mrail_av *av, uint64_t key, fi_addr_t peer)
{
	struct mrail_av_key *entry;

	HASH_FIND(hh, av->keys, &key, sizeof(key), entry);
	if (!entry || entry->peer != peer)
		return;
	HASH_DEL(av->keys, entry);
	free(entry);
}

static void av_keys_free(struct mrail_av *av)
{
	struct mrail_av_key *entry, *tmp;

	HASH_ITER(hh, av->keys, entry, tmp) {
		HASH_DEL(av->keys, entry);
		free(entry);
	}
}

static int av_reserve_peer(struct mrail_av *av)
{
	struct mrail_av_peer *grown;
	struct mrail_alias *alias;
	size_t cap;

	if (av->peer_count < av->peer_cap)
		return 0;
	cap = av->peer_cap ? av->peer_cap * 2 : 64;
	alias = realloc(av->alias, cap * sizeof(*alias));
	if (!alias)
		return -FI_ENOMEM;
	memset(alias + av->peer_cap, 0, (cap - av->peer_cap) * sizeof(*alias));
	av->alias = alias;
	grown = realloc(av->peers, cap * sizeof(*grown));
	if (!grown)
		return -FI_ENOMEM;
	memset(grown + av->peer_cap, 0, (cap - av->peer_cap) * sizeof(*grown));
	av->peers = grown;
	av->peer_cap = cap;
	return 0;
}

/* Room for one more of the application's fi_addr_t values. */
static int av_reserve_app(struct mrail_av *av)
{
	fi_addr_t *grown;
	size_t cap;

	if (av->app_count < av->app_cap)
		return 0;
	cap = av->app_cap ? av->app_cap * 2 : 64;
	grown = realloc(av->app_slots, cap * sizeof(*grown));
	if (!grown)
		return -FI_ENOMEM;
	av->app_slots = grown;
	av->app_cap = cap;
	return 0;
}

/* A named AV's reader: every value the writer can share, none taken until
 * it is pulled (av_pull_shared). */
static int av_reserve_shared(struct mrail_av *av)
{
	size_t i, cap = mrail_av_shared_capacity(av->shared);

	av->app_slots = malloc(cap * sizeof(*av->app_slots));
	if (!av->app_slots)
		return -FI_ENOMEM;
	for (i = 0; i < cap; i++)
		av->app_slots[i] = FI_ADDR_NOTAVAIL;
	av->app_cap = cap;
	av->app_count = cap;
	return 0;
}

static void av_remove_from_rails(struct mrail_av *av, struct mrail_av_peer *peer,
				 size_t first, size_t end)
{
	size_t i;
	int ret;

	for (i = first; i < end; i++) {
		ret = fi_av_remove(av->rail_avs[i], &peer->rail_fi_addr[i], 1, 0);
		if (ret)
			MRAIL_WARN(FI_LOG_AV, "rail %zu: cannot remove a peer from "
				   "its AV: %s\n", i + 1, fi_strerror(-ret));
	}
}

/* Puts rails [first, addr->rail_count) of addr into the rails' AVs. */
static int av_insert_rails(struct mrail_av *av, struct mrail_av_peer *peer,
			   const struct mrail_addr *addr, size_t first,
			   const char *what)
{
	size_t i;
	int ret;

	for (i = first; i < addr->rail_count; i++) {
		ret = fi_av_insert(av->rail_avs[i], addr->rails[i].bytes, 1,
				   &peer->rail_fi_addr[i], 0, NULL);
		if (ret != 1) {
			MRAIL_WARN(FI_LOG_AV, "rail %zu (%s): its AV refused %s: "
				   "%s\n", i + 1, addr->rails[i].stack, what,
				   ret < 0 ? fi_strerror(-ret) : "not inserted");
			av_remove_from_rails(av, peer, first, i);
			return ret < 0 ? ret : -FI_EINVAL;
		}
	}
	return 0;
}

/* The canonical entry still partial whose rail 0 is addr's, or
 * FI_ADDR_NOTAVAIL. A scan, but only while partial entries exist. */
static fi_addr_t av_find_partial(struct mrail_av *av, const struct mrail_addr *addr)
{
	size_t i;

	if (!av->partial_count)
		return FI_ADDR_NOTAVAIL;
	for (i = 0; i < av->peer_count; i++) {
		if (av->alias[i].live && av->alias[i].canon == i &&
		    (av->peers[i].addr.flags & MRAIL_ADDR_FLAG_PARTIAL) &&
		    mrail_addr_same_rail(&av->peers[i].addr, addr, 0))
			return i;
	}
	return FI_ADDR_NOTAVAIL;
}

/* The canonical entry whose rail 0 is addr's, partial or not, or
 * FI_ADDR_NOTAVAIL: a partial address names its peer by rail 0 alone. */
static fi_addr_t av_find_by_rail0(struct mrail_av *av, const struct mrail_addr *addr)
{
	size_t i;

	for (i = 0; i < av->peer_count; i++) {
		if (av->alias[i].live && av->alias[i].canon == i &&
		    mrail_addr_same_rail(&av->peers[i].addr, addr, 0))
			return i;
	}
	return FI_ADDR_NOTAVAIL;
}

/* A partial canonical entry gets the rest of its peer's rails. Rail 0
 * keeps the entry it has: the peer may already be talking to us over it. */
static int av_complete_peer(struct mrail_av *av, fi_addr_t fi_addr,
			    const struct mrail_addr *addr)
{
	struct mrail_av_peer *peer = &av->peers[fi_addr];
	uint64_t key = mrail_addr_key(addr);
	int ret;

	ret = av_insert_rails(av, peer, addr, 1, "the peer's full address");
	if (ret)
		return ret;
	ret = av_key_add(av, key, fi_addr);
	if (ret) {
		av_remove_from_rails(av, peer, 1, addr->rail_count);
		return ret;
	}
	peer->key = key;
	peer->addr = *addr;
	peer->rails_held = addr->rail_count;
	av->partial_count--;
	return 0;
}

/*
 * The canonical entry of the peer addr names, or FI_ADDR_NOTAVAIL for a
 * peer not in the AV. A full address finds it by key; a partial entry of
 * the same peer is completed with addr on the way (so that a peer never has
 * two canonical entries). A partial address finds it by rail 0.
 */
static int av_find_owner(struct mrail_av *av, const struct mrail_addr *addr,
			 fi_addr_t *owner)
{
	uint64_t key;
	int ret;

	if (addr->flags & MRAIL_ADDR_FLAG_PARTIAL) {
		*owner = av_find_by_rail0(av, addr);
		return 0;
	}
	key = mrail_addr_key(addr);
	*owner = mrail_av_peer_of_key(av, key);
	if (*owner != FI_ADDR_NOTAVAIL) {
		if (!av_same_addr(&av->peers[*owner].addr, addr))
			MRAIL_WARN(FI_LOG_AV, "peer %" PRIu64 " and a new address "
				   "have different rail addresses with the same "
				   "key 0x%016" PRIx64 ": both name peer %" PRIu64
				   "\n", (uint64_t) *owner, key, (uint64_t) *owner);
		return 0;
	}
	*owner = av_find_partial(av, addr);
	if (*owner == FI_ADDR_NOTAVAIL)
		return 0;
	ret = av_complete_peer(av, *owner, addr);
	if (ret)
		*owner = FI_ADDR_NOTAVAIL;
	return ret;
}

/*
 * Adds one decoded, compatible address as a new entry. The first entry of
 * a peer goes into every rail's AV (rail 0 only for a partial address) and
 * becomes its canonical entry; another entry of the same peer is an alias
 * of it, with no rail entries of its own.
 */
static int av_fill_entry(struct mrail_av *av, const struct mrail_addr *addr,
			 fi_addr_t idx, bool learned)
{
	bool partial = addr->flags & MRAIL_ADDR_FLAG_PARTIAL;
	struct mrail_av_peer *peer;
	fi_addr_t owner;
	int ret;

	ret = av_find_owner(av, addr, &owner);
	if (ret)
		return ret;
	peer = &av->peers[idx];
	memset(peer, 0, sizeof(*peer));
	peer->addr = *addr;
	if (owner == FI_ADDR_NOTAVAIL) {
		ret = av_insert_rails(av, peer, addr, 0, "the peer's address");
		if (ret)
			return ret;
		peer->rails_held = addr->rail_count;
		/* A partial address is not its peer's name: the key comes
		 * with the full address, in the peer's HELLO. */
		if (partial) {
			av->partial_count++;
		} else {
			peer->key = mrail_addr_key(addr);
			ret = av_key_add(av, peer->key, idx);
			if (ret) {
				av_remove_from_rails(av, peer, 0, addr->rail_count);
				memset(peer, 0, sizeof(*peer));
				return ret;
			}
		}
	} else {
		peer->key = av->peers[owner].key;
	}
	if (learned)
		mrail_alias_learn(av->alias, idx);
	else
		mrail_alias_add(av->alias, av->peer_cap, idx,
				owner == FI_ADDR_NOTAVAIL ? MRAIL_ALIAS_NONE : owner);
	peer->app = FI_ADDR_NOTAVAIL;
	peer->in_use = true;
	return 0;
}

/* A new slot at the end of the table. */
static int av_add_slot(struct mrail_av *av, const struct mrail_addr *addr,
		       bool learned, fi_addr_t *slot)
{
	int ret;

	ret = av_reserve_peer(av);
	if (ret)
		return ret;
	ret = av_fill_entry(av, addr, av->peer_count, learned);
	if (ret)
		return ret;
	*slot = av->peer_count++;
	return 0;
}

/* The application's insert: its next fi_addr_t, which a named AV's writer
 * shares. */
static int av_insert_peer(struct mrail_av *av, const struct mrail_addr *addr,
			  fi_addr_t *fi_addr)
{
	fi_addr_t slot, app;
	int ret;

	ret = av_reserve_app(av);
	if (ret)
		return ret;
	ret = av_add_slot(av, addr, false, &slot);
	if (ret)
		return ret;
	app = av->app_count++;
	av->app_slots[app] = slot;
	av->peers[slot].app = app;
	mrail_av_shared_publish(av->shared, app, addr);
	*fi_addr = app;
	return 0;
}

/*
 * A reader of a named AV meets one of the writer's fi_addr_t values for
 * the first time: the writer's address for it goes into this process's
 * rails' AVs, under the same value. A value not published yet stays
 * unknown: it may be published later, and the next use looks again.
 */
static void av_pull_shared(struct mrail_av *av, fi_addr_t app)
{
	struct mrail_addr addr;
	fi_addr_t slot;

	if (!mrail_av_shared_is_reader(av->shared) ||
	    app >= mrail_av_shared_capacity(av->shared) ||
	    av->app_slots[app] != FI_ADDR_NOTAVAIL)
		return;
	if (mrail_av_shared_read(av->shared, app, &addr) <= 0)
		return;
	if (av_check_reachable(av, &addr, app))
		return;
	if (av_add_slot(av, &addr, false, &slot)) {
		MRAIL_WARN(FI_LOG_AV, "named AV: cannot take entry %" PRIu64
			   " into this process's rails\n", (uint64_t) app);
		return;
	}
	av->app_slots[app] = slot;
	av->peers[slot].app = app;
}

int mrail_av_learn_peer(struct mrail_av *av, const struct mrail_addr *addr,
			fi_addr_t *fi_addr)
{
	fi_addr_t known;
	int ret;

	ret = av_find_owner(av, addr, &known);
	if (ret)
		return ret;
	if (known == FI_ADDR_NOTAVAIL)
		return av_add_slot(av, addr, true, fi_addr);
	*fi_addr = known;
	return 0;
}

/* An entry's peer record goes: from the rails' AVs if it held entries
 * there, and from the keys if it was a canonical entry. */
static void av_release_peer(struct mrail_av *av, fi_addr_t fi_addr)
{
	struct mrail_av_peer *peer = &av->peers[fi_addr];

	av_remove_from_rails(av, peer, 0, peer->rails_held);
	if (peer->rails_held && (peer->addr.flags & MRAIL_ADDR_FLAG_PARTIAL))
		av->partial_count--;
	if (peer->rails_held && peer->key)
		av_key_remove(av, peer->key, fi_addr);
	memset(peer, 0, sizeof(*peer));
}

/* Decodes the next packed address; *used says how far the next one starts. */
/* A decoded address must name this domain's rails, in their order. */
static int av_check_reachable(struct mrail_av *av, const struct mrail_addr *addr,
			      size_t index)
{
	char err[MRAIL_ERR_MAX];

	if (mrail_addr_check_compatible(&av->domain->local_addr, addr, err,
					sizeof(err))) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_insert: address %zu cannot reach "
			   "this endpoint's rails: %s\n", index, err);
		return -FI_EINVAL;
	}
	return 0;
}

static int av_decode_peer(struct mrail_av *av, const uint8_t *buf, size_t len,
			  size_t index, struct mrail_addr *addr, size_t *used)
{
	char err[MRAIL_ERR_MAX];

	if (mrail_addr_decode_prefix(buf, len, addr, used, err, sizeof(err))) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_insert: address %zu is not a valid "
			   "mrail address: %s\n", index, err);
		return -FI_EINVAL;
	}
	return av_check_reachable(av, addr, index);
}

/*
 * A socket address (the domain's format is its first rail's, FI_SOCKADDR_IN
 * or FI_SOCKADDR_IN6) names a peer by its first rail: a partial address,
 * which a HELLO completes on first contact, as fi_getinfo(node, service)
 * names one.
 */
static int av_parse_sockaddr(struct mrail_av *av, const uint8_t *buf, size_t index,
			     struct mrail_addr *addr, size_t *used)
{
	const struct mrail_rail *rail0 = &av->domain->fabric->rails.rails[0];
	uint32_t format = av->domain->addr_format;
	size_t len = format == FI_SOCKADDR_IN6 ? sizeof(struct sockaddr_in6) :
						 sizeof(struct sockaddr_in);
	sa_family_t family;

	memcpy(&family, buf + offsetof(struct sockaddr, sa_family), sizeof(family));
	if (family != (format == FI_SOCKADDR_IN6 ? AF_INET6 : AF_INET) ||
	    mrail_addr_make_partial(rail0->spec.stack, format, buf, len, addr)) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_insert: address %zu is not an %s "
			   "socket address (family %u)\n", index,
			   format == FI_SOCKADDR_IN6 ? "IPv6" : "IPv4", family);
		return -FI_EINVAL;
	}
	*used = len;
	return av_check_reachable(av, addr, index);
}

/* Inserts count addresses, mrail's own (mrail_format) or the domain's. */
static int av_insert_addrs(struct mrail_av *av, const void *addr, size_t count,
			   fi_addr_t *fi_addr, int *errors, bool mrail_format)
{
	const uint8_t *next = addr;
	struct mrail_addr peer;
	size_t i, used = 0;
	int inserted = 0, ret = 0;

	if (count && !addr)
		return -FI_EINVAL;

	mrail_domain_lock(av->domain);
	for (i = 0; i < count; i++) {
		fi_addr_t out = FI_ADDR_NOTAVAIL;

		/* fi_av_insert passes no buffer length: each address says
		 * its own, and decoding reads no further than that. After a
		 * malformed address nothing tells where the next one starts,
		 * so the rest fail with it. */
		if (!ret) {
			ret = mrail_format ?
			      av_decode_peer(av, next, MRAIL_ADDR_MAX_LEN, i, &peer,
					     &used) :
			      av_parse_sockaddr(av, next, i, &peer, &used);
			if (!ret)
				ret = av_insert_peer(av, &peer, &out);
			if (!ret) {
				next += used;
				inserted++;
			}
		}
		if (fi_addr)
			fi_addr[i] = out;
		if (errors)
			errors[i] = ret;
	}
	pthread_mutex_unlock(&av->domain->lock);
	return inserted;
}

/*
 * FI_EVENT: inserts are done at once, and reported on the bound EQ: an
 * error entry for each address that failed (data: its index), then
 * FI_AV_COMPLETE with the number inserted; the call returns 0. errors is
 * the per-address result (count entries).
 */
static int av_report(struct mrail_av *av, int inserted, const int *errors,
		     size_t count, void *context)
{
	struct fi_eq_entry done = {
		.fid = &av->av_fid.fid,
		.context = context,
		.data = inserted < 0 ? 0 : (uint64_t) inserted,
	};
	size_t i;
	int ret;

	for (i = 0; i < count; i++) {
		if (!errors[i])
			continue;
		ret = mrail_eq_write_error(av->eq, &av->av_fid.fid, context, i,
					   -errors[i], errors[i], NULL, 0);
		if (ret)
			return ret;
	}
	ret = mrail_eq_write_event(av->eq, FI_AV_COMPLETE, &done, sizeof(done), 0);
	return ret ? ret : (inserted < 0 ? inserted : 0);
}

/* The flags and context of an insert: FI_SYNC_ERR's array, or with
 * FI_EVENT one of ours for av_report (freed by the caller). */
static int av_insert_begin(struct mrail_av *av, uint64_t flags, void *context,
			   size_t count, int **errors)
{
	if (mrail_av_shared_is_reader(av->shared)) {
		MRAIL_WARN(FI_LOG_AV, "this AV was opened with FI_READ: only "
			   "the process that created the named AV inserts\n");
		return -FI_EPERM;
	}
	if (flags & ~MRAIL_AV_INSERT_FLAGS)
		return -FI_EBADFLAGS;
	*errors = (flags & FI_SYNC_ERR) ? context : NULL;
	if (!av->events)
		return 0;
	if (!av->eq) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_insert: this AV reports inserts "
			   "(FI_EVENT); bind an EQ to it first\n");
		return -FI_ENOEQ;
	}
	if (flags & FI_SYNC_ERR) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_insert: FI_SYNC_ERR is for AVs "
			   "without FI_EVENT\n");
		return -FI_EINVAL;
	}
	*errors = calloc(count ? count : 1, sizeof(**errors));
	return *errors ? 0 : -FI_ENOMEM;
}

static int av_insert_end(struct mrail_av *av, int inserted, int *errors,
			 size_t count, void *context)
{
	int ret;

	if (!av->events)
		return inserted;
	ret = av_report(av, inserted, errors, count, context);
	free(errors);
	return ret;
}

static int mrail_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			   fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct mrail_av *av = container_of(av_fid, struct mrail_av, av_fid);
	int *errors, ret;

	ret = av_insert_begin(av, flags, context, count, &errors);
	if (ret)
		return ret;
	ret = av_insert_addrs(av, addr, count, fi_addr, errors,
			      av->domain->addr_format == FI_ADDR_MRAIL);
	return av_insert_end(av, ret, errors, count, context);
}

static int mrail_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr, size_t count,
			   uint64_t flags)
{
	struct mrail_av *av = container_of(av_fid, struct mrail_av, av_fid);
	uint64_t freed[2];
	int ret = 0, n, j;
	size_t i;

	if (flags)
		return -FI_EBADFLAGS;
	if (mrail_av_shared_is_reader(av->shared)) {
		MRAIL_WARN(FI_LOG_AV, "this AV was opened with FI_READ: only "
			   "the process that created the named AV removes\n");
		return -FI_EPERM;
	}
	mrail_domain_lock(av->domain);
	for (i = 0; i < count; i++) {
		/* A canonical entry whose aliases remain stays, hidden: the
		 * peer's state lives on for them. */
		n = mrail_alias_remove(av->alias, av->peer_count,
				       av_slot_of(av, fi_addr[i]), freed);
		if (n < 0) {
			ret = -FI_EINVAL;
			continue;
		}
		for (j = 0; j < n; j++)
			av_release_peer(av, freed[j]);
		mrail_av_shared_withdraw(av->shared, fi_addr[i]);
	}
	pthread_mutex_unlock(&av->domain->lock);
	return ret;
}

/* A peer's address as fi_av_lookup gives it: the domain's format (the
 * peer's first rail) or mrail's own. */
static ssize_t av_encode_peer(const struct mrail_av *av,
			      const struct mrail_av_peer *peer, uint8_t *out,
			      size_t len)
{
	if (av->domain->addr_format != FI_ADDR_MRAIL) {
		if (peer->addr.rails[0].len > len)
			return -FI_EINVAL;
		memcpy(out, peer->addr.rails[0].bytes, peer->addr.rails[0].len);
		return peer->addr.rails[0].len;
	}
	return mrail_addr_encode(&peer->addr, out, len);
}

void *mrail_av_raw_addr(struct mrail_av *av, fi_addr_t slot, size_t *len)
{
	struct mrail_av_peer *peer = mrail_av_get_peer(av, slot);
	uint8_t encoded[MRAIL_ADDR_MAX_LEN];
	ssize_t n;
	void *copy;

	if (!peer)
		return NULL;
	n = av_encode_peer(av, peer, encoded, sizeof(encoded));
	if (n <= 0 || !(copy = malloc((size_t) n)))
		return NULL;
	memcpy(copy, encoded, (size_t) n);
	*len = (size_t) n;
	return copy;
}

static int mrail_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr,
			   size_t *addrlen)
{
	struct mrail_av *av = container_of(av_fid, struct mrail_av, av_fid);
	uint8_t encoded[MRAIL_ADDR_MAX_LEN];
	struct mrail_av_peer *peer;
	ssize_t len;
	int ret = 0;

	mrail_domain_lock(av->domain);
	peer = av_named(av, fi_addr);
	if (!peer) {
		ret = -FI_EINVAL;
		goto out;
	}
	len = av_encode_peer(av, peer, encoded, sizeof(encoded));
	if (len < 0) {
		ret = -FI_EINVAL;
		goto out;
	}
	/* As fi_av(3) says: truncate, and report the size needed. */
	memcpy(addr, encoded, *addrlen < (size_t) len ? *addrlen : (size_t) len);
	*addrlen = (size_t) len;
out:
	pthread_mutex_unlock(&av->domain->lock);
	return ret;
}

/* One rail's core address as text: "198.18.1.2:4711", "[fe80::1]:4711", or
 * hex bytes for formats mrail does not know. */
static int format_rail_addr(const struct mrail_rail_addr *rail, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	size_t used = 0;
	uint16_t i;

	if (rail->format == FI_SOCKADDR_IN && rail->len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in sin;

		memcpy(&sin, rail->bytes, sizeof(sin));
		inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip));
		return snprintf(buf, len, "%s:%u", ip, ntohs(sin.sin_port));
	}
	if (rail->format == FI_SOCKADDR_IN6 && rail->len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, rail->bytes, sizeof(sin6));
		inet_ntop(AF_INET6, &sin6.sin6_addr, ip, sizeof(ip));
		return snprintf(buf, len, "[%s]:%u", ip, ntohs(sin6.sin6_port));
	}
	for (i = 0; i < rail->len; i++)
		used += (size_t) snprintf(buf + used, used < len ? len - used : 0,
					  "%02x", rail->bytes[i]);
	return (int) used;
}

static const char *mrail_av_straddr(struct fid_av *av_fid, const void *addr,
				    char *buf, size_t *len)
{
	char text[MRAIL_MAX_RAILS * (MRAIL_STACK_NAME_MAX + 2 * MRAIL_RAIL_ADDR_MAX + 2) + 16];
	char rail_text[2 * MRAIL_RAIL_ADDR_MAX + 1];
	struct mrail_addr decoded;
	size_t used, i, addr_len;

	struct mrail_av *av = container_of(av_fid, struct mrail_av, av_fid);

	if (av->domain->addr_format != FI_ADDR_MRAIL) {
		struct mrail_rail_addr rail = { .format = av->domain->addr_format };

		rail.len = (uint16_t) (rail.format == FI_SOCKADDR_IN6 ?
				       sizeof(struct sockaddr_in6) :
				       sizeof(struct sockaddr_in));
		memcpy(rail.bytes, addr, rail.len);
		format_rail_addr(&rail, rail_text, sizeof(rail_text));
		used = (size_t) snprintf(text, sizeof(text), "%s://%s",
					 rail.format == FI_SOCKADDR_IN6 ?
					 "fi_sockaddr_in6" : "fi_sockaddr_in",
					 rail_text);
	/* No length here either: the address's own framing bounds the read. */
	} else if (mrail_addr_decode_prefix(addr, MRAIL_ADDR_MAX_LEN, &decoded,
					    &addr_len, NULL, 0)) {
		used = (size_t) snprintf(text, sizeof(text), "fi_addr_mrail://(invalid)");
	} else {
		used = (size_t) snprintf(text, sizeof(text), "fi_addr_mrail://");
		for (i = 0; i < decoded.rail_count; i++) {
			format_rail_addr(&decoded.rails[i], rail_text, sizeof(rail_text));
			used += (size_t) snprintf(text + used, sizeof(text) - used,
						  "%s%s/%s", i ? "+" : "",
						  decoded.rails[i].stack, rail_text);
		}
	}
	if (*len)
		snprintf(buf, *len, "%s", text);
	*len = used + 1;
	return buf;
}

/*
 * The peer named by node and service, as fi_getinfo(node, service) names
 * it: a partial address (the peer's first rail), which a HELLO completes
 * on first contact. A name that does not resolve is an entry that failed,
 * like a malformed address in fi_av_insert.
 */
static int av_insert_named(struct mrail_av *av, const char *node,
			   const char *service, fi_addr_t *fi_addr, uint64_t flags,
			   int *error)
{
	uint8_t blob[MRAIL_ADDR_MAX_LEN];
	struct mrail_addr peer;
	ssize_t len;
	int ret;

	ret = mrail_railset_peer_addr(&av->domain->fabric->rails, MRAIL_FI_VERSION,
				      node, service, &peer);
	if (!ret) {
		len = mrail_addr_encode(&peer, blob, sizeof(blob));
		ret = len < 0 ? -FI_EINVAL : 0;
	}
	if (ret) {
		if (fi_addr)
			*fi_addr = FI_ADDR_NOTAVAIL;
		if (error)
			*error = ret;
		return 0;
	}
	return av_insert_addrs(av, blob, 1, fi_addr, error, true);
}

static int mrail_av_insertsvc(struct fid_av *av_fid, const char *node,
			      const char *service, fi_addr_t *fi_addr,
			      uint64_t flags, void *context)
{
	struct mrail_av *av = container_of(av_fid, struct mrail_av, av_fid);
	int *errors, ret;

	if (!node || !service) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_insertsvc needs a node and a service "
			   "(FI_ADDR_STR nodes are not supported)\n");
		return -FI_EINVAL;
	}
	ret = av_insert_begin(av, flags, context, 1, &errors);
	if (ret)
		return ret;
	ret = av_insert_named(av, node, service, fi_addr, flags, errors);
	return av_insert_end(av, ret, errors, 1, context);
}

/* Node and service names longest: an IPv6 address or a host name. */
#define MRAIL_AV_SYM_NAME_MAX 256

/*
 * nodecnt nodes from node, svccnt services from service, every service of
 * a node before the next node (fi_av(3)). A range that cannot be spelled
 * (a name without a numeric suffix, a port past 65535) inserts nothing.
 */
static int mrail_av_insertsym(struct fid_av *av_fid, const char *node,
			      size_t nodecnt, const char *service, size_t svccnt,
			      fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct mrail_av *av = container_of(av_fid, struct mrail_av, av_fid);
	char node_k[MRAIL_AV_SYM_NAME_MAX], service_k[16];
	size_t n, s, k = 0;
	int *errors, ret, inserted = 0;

	if (!node || !service || !nodecnt || !svccnt || nodecnt > INT_MAX / svccnt)
		return -FI_EINVAL;
	/* The ends of the ranges spell, so everything between does. */
	ret = mrail_av_sym_node(node, nodecnt - 1, node_k, sizeof(node_k));
	if (!ret)
		ret = mrail_av_sym_service(service, svccnt - 1, service_k,
					   sizeof(service_k));
	if (ret) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_insertsym: no range of %zu node(s) "
			   "from \"%s\" and %zu service(s) from \"%s\": %s\n",
			   nodecnt, node, svccnt, service,
			   ret == -ERANGE ? "it runs past the last address or port" :
			   "a range of nodes needs an address or a numeric suffix, "
			   "a range of services a port number");
		return -FI_EINVAL;
	}
	ret = av_insert_begin(av, flags, context, nodecnt * svccnt, &errors);
	if (ret)
		return ret;
	for (n = 0; n < nodecnt && inserted >= 0; n++) {
		for (s = 0; s < svccnt; s++, k++) {
			if (mrail_av_sym_node(node, n, node_k, sizeof(node_k)) ||
			    mrail_av_sym_service(service, s, service_k,
						 sizeof(service_k))) {
				inserted = -FI_EINVAL;
				break;
			}
			inserted += av_insert_named(av, node_k, service_k,
						    fi_addr ? &fi_addr[k] : NULL,
						    flags, errors ? &errors[k] : NULL);
		}
	}
	return av_insert_end(av, inserted, errors, nodecnt * svccnt, context);
}


static void av_close_rails(struct mrail_av *av)
{
	size_t i;

	for (i = 0; i < av->domain->fabric->rails.count; i++) {
		if (av->rail_avs[i])
			fi_close(&av->rail_avs[i]->fid);
		av->rail_avs[i] = NULL;
	}
}

/* FI_EVENT AVs report inserts on one EQ, bound before the first. */
static int mrail_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mrail_av *av = container_of(fid, struct mrail_av, av_fid.fid);
	struct mrail_eq *eq = mrail_eq_from_fid(bfid);

	if (!eq || flags) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_bind: an AV binds one mrail EQ, "
			   "with flags 0\n");
		return -FI_EINVAL;
	}
	if (!av->events || av->eq) {
		MRAIL_WARN(FI_LOG_AV, "fi_av_bind: %s\n", av->eq ?
			   "this AV already has its EQ" :
			   "only an AV opened with FI_EVENT reports to an EQ");
		return -FI_EINVAL;
	}
	mrail_eq_attach(eq);
	av->eq = eq;
	return 0;
}

static int mrail_av_close(struct fid *fid)
{
	struct mrail_av *av = container_of(fid, struct mrail_av, av_fid.fid);

	if (av->eq)
		mrail_eq_detach(av->eq);
	av_close_rails(av);
	mrail_domain_lock(av->domain);
	av->domain->refs--;
	pthread_mutex_unlock(&av->domain->lock);
	av_keys_free(av);
	mrail_av_shared_close(av->shared);
	free(av->app_slots);
	free(av->peers);
	free(av->alias);
	free(av);
	return 0;
}

static struct fi_ops mrail_av_fi_ops;
static struct fi_ops_av mrail_av_ops;

int mrail_av_open(struct fid_domain *domain_fid, struct fi_av_attr *attr,
		  struct fid_av **av_fid, void *context)
{
	struct mrail_domain *domain =
		container_of(domain_fid, struct mrail_domain, domain_fid);
	struct fi_av_attr rail_attr = { .type = FI_AV_TABLE };
	const struct mrail_railset *rails = &domain->fabric->rails;
	void *app_map_addr = attr->map_addr;
	struct mrail_av *av;
	size_t i;
	int ret;

	mrail_corelib_thread_enter();
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE &&
	    attr->type != FI_AV_MAP)
		return -FI_EINVAL;
	/* A scalable endpoint has one receive context, index 0, which
	 * fi_rx_addr leaves out of the address: any width names it. An
	 * address naming another index is no entry of the AV (-FI_EINVAL). */
	if (attr->rx_ctx_bits < 0 || attr->rx_ctx_bits > 32) {
		MRAIL_WARN(FI_LOG_AV, "rx_ctx_bits %d: at most 32\n",
			   attr->rx_ctx_bits);
		return -FI_EINVAL;
	}
	if (attr->flags & ~(FI_EVENT | FI_READ))
		return -FI_EBADFLAGS;
	if ((attr->flags & FI_READ) && !attr->name) {
		MRAIL_WARN(FI_LOG_AV, "FI_READ opens a named AV: set "
			   "fi_av_attr.name\n");
		return -FI_EINVAL;
	}

	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->domain = domain;
	av->events = attr->flags & FI_EVENT;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	rail_attr.count = attr->count;
	if (attr->name) {
		ret = mrail_av_shared_open(attr, &av->shared);
		if (ret)
			goto err_free;
		/* A reader's own entries go after the writer's indices. */
		if (mrail_av_shared_is_reader(av->shared)) {
			ret = av_reserve_shared(av);
			if (ret)
				goto err_shared;
		}
	}
	for (i = 0; i < rails->count; i++) {
		ret = fi_av_open(domain->rail_domains[i], &rail_attr,
				 &av->rail_avs[i], NULL);
		if (ret) {
			MRAIL_WARN(FI_LOG_AV, "rail %zu (%s@%s): cannot open its AV: "
				   "%s; no AV was opened (the rails before it "
				   "closed theirs again), and fi_av_open may be "
				   "called again\n", i + 1, rails->rails[i].spec.stack,
				   rails->rails[i].port, fi_strerror(-ret));
			goto err_rails;
		}
	}

	mrail_domain_lock(domain);
	domain->refs++;
	pthread_mutex_unlock(&domain->lock);
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &mrail_av_fi_ops;
	av->av_fid.ops = &mrail_av_ops;
	*av_fid = &av->av_fid;
	return 0;

err_rails:
	av_close_rails(av);
err_shared:
	mrail_av_shared_close(av->shared);
	/* The region map_addr pointed into is unmapped: a retry with the
	 * same attributes must not take it for the application's. */
	attr->map_addr = app_map_addr;
err_free:
	free(av->app_slots);
	free(av->peers);
	free(av->alias);
	free(av);
	return ret;
}

static struct fi_ops mrail_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mrail_av_close,
	.bind = mrail_av_bind,
	.control = mrail_no_control,
	.ops_open = mrail_no_ops_open,
	.tostr = mrail_no_tostr,
	.ops_set = mrail_no_ops_set,
};

#if HAVE_STRUCT_FI_OPS_AV_INSERT_AUTH_KEY
/* Authorization keys (FI_AV_AUTH_KEY, API 1.20) and user ids
 * (FI_AV_USER_ID) are not offered: fi_getinfo never grants them. */
static int mrail_av_insert_auth_key(struct fid_av *av_fid, const void *auth_key,
				    size_t auth_key_size, fi_addr_t *fi_addr,
				    uint64_t flags)
{
	return -FI_ENOSYS;
}

static int mrail_av_lookup_auth_key(struct fid_av *av_fid, fi_addr_t fi_addr,
				    void *auth_key, size_t *auth_key_size)
{
	return -FI_ENOSYS;
}
#endif

#if HAVE_STRUCT_FI_OPS_AV_SET_USER_ID
static int mrail_av_set_user_id(struct fid_av *av_fid, fi_addr_t fi_addr,
				fi_addr_t user_id, uint64_t flags)
{
	return -FI_ENOSYS;
}
#endif

static struct fi_ops_av mrail_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = mrail_av_insert,
	.insertsvc = mrail_av_insertsvc,
	.insertsym = mrail_av_insertsym,
	.remove = mrail_av_remove,
	.lookup = mrail_av_lookup,
	.straddr = mrail_av_straddr,
	.av_set = mrail_av_set_open,
#if HAVE_STRUCT_FI_OPS_AV_INSERT_AUTH_KEY
	.insert_auth_key = mrail_av_insert_auth_key,
	.lookup_auth_key = mrail_av_lookup_auth_key,
#endif
#if HAVE_STRUCT_FI_OPS_AV_SET_USER_ID
	.set_user_id = mrail_av_set_user_id,
#endif
};
