/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Address vectors (mrail_av.c): the AV and its peer records, the canonical
 * and shown fi_addr_t of an entry, peers learned from HELLOs; named AVs in
 * shared memory (mrail_av_shared.c). AV sets are in mrail_coll.h.
 */
#ifndef MRAIL_AV_SRC_H
#define MRAIL_AV_SRC_H

#include "mrail.h"

#include "av_alias.h"
#include "av_shm.h"

/* One peer in an AV: its address and where each rail's AV put it. */
struct mrail_av_peer {
	bool in_use;
	struct mrail_addr addr;
	fi_addr_t rail_fi_addr[MRAIL_MAX_RAILS];
	/* The application's fi_addr_t for this slot, or FI_ADDR_NOTAVAIL
	 * for a peer mrail learned by itself (mrail_av.c). */
	fi_addr_t app;
	/* A partial address (addr.flags): our HELLO to it is queued or
	 * sent, its answer completes the entry. */
	bool hello_sent;
	uint64_t key;		/* mrail_addr_key(&addr); 0 while partial */
	/* Entries in the rails' AVs: every rail for a peer's canonical
	 * entry (rail 0 while partial), none for an alias (av_alias.h). */
	size_t rails_held;
};

struct mrail_av_key;

/* AV: one core AV per rail; mrail's fi_addr_t indexes peers. */
struct mrail_eq;

struct mrail_av {
	/* Peers by sender key (uthash), and a count of keys ever added:
	 * endpoints keep messages from unknown keys until it changes. */
	struct mrail_av_key *keys;
	uint64_t key_generation;
	struct fid_av av_fid;
	struct mrail_domain *domain;
	enum fi_av_type type;
	struct fid_av *rail_avs[MRAIL_MAX_RAILS];
	struct mrail_av_peer *peers;
	/* Per entry, which one speaks for its peer (core/av_alias.h). */
	struct mrail_alias *alias;
	size_t peer_count;	/* slots used, including removed ones */
	size_t peer_cap;
	/* The application's fi_addr_t values, in insert order: each one's
	 * slot (FI_ADDR_NOTAVAIL: a named AV's entry not pulled yet). */
	fi_addr_t *app_slots;
	size_t app_count;
	size_t app_cap;
	size_t partial_count;	/* canonical entries still partial */
	bool events;		/* FI_EVENT: inserts reported on eq */
	struct mrail_eq *eq;
	/* A named AV's shared table (mrail_av_shared.c), or NULL. A reader
	 * (FI_READ) keeps indices below the table's capacity for the
	 * writer's entries and adds what it learns itself after them. */
	struct mrail_av_shared *shared;
};

/* The mrail fi_addr of the peer whose messages carry this sender key
 * (wire.h), or FI_ADDR_NOTAVAIL. */
fi_addr_t mrail_av_peer_of_key(struct mrail_av *av, uint64_t key);
/*
 * An application may insert a peer more than once (fi_av(3)); each entry
 * then stands for the peer's canonical entry (core/av_alias.h), which owns
 * the peer's sequence stream, credits and waits. Every fi_addr_t an
 * application passes (a send's destination, a directed receive's source,
 * an RMA or atomic target, an AV set member) goes through mrail_av_canon
 * first: the canonical fi_addr_t, or FI_ADDR_NOTAVAIL when it names no
 * entry (never inserted, or removed). Caller holds the domain lock.
 */
fi_addr_t mrail_av_canon(struct mrail_av *av, fi_addr_t fi_addr);
/* The fi_addr_t to report as the source of what canonical entry canon's
 * peer sent: canon, or an alias when the application removed canon. */
fi_addr_t mrail_av_shown(struct mrail_av *av, fi_addr_t canon);
/* How many fi_addr_t values the application has had (removed ones too). */
fi_addr_t mrail_av_app_count(const struct mrail_av *av);
/* A copy (malloc'd) of a slot's address in the domain's address format,
 * for FI_SOURCE_ERR; NULL when there is none. */
void *mrail_av_raw_addr(struct mrail_av *av, fi_addr_t slot, size_t *len);
/* Named AVs (mrail_av_shared.c). */
struct mrail_av_shared;
int mrail_av_shared_open(struct fi_av_attr *attr, struct mrail_av_shared **out);
void mrail_av_shared_close(struct mrail_av_shared *shared);
bool mrail_av_shared_is_reader(const struct mrail_av_shared *shared);
uint64_t mrail_av_shared_capacity(const struct mrail_av_shared *shared);
void mrail_av_shared_publish(struct mrail_av_shared *shared, fi_addr_t fi_addr,
			     const struct mrail_addr *addr);
void mrail_av_shared_withdraw(struct mrail_av_shared *shared, fi_addr_t fi_addr);
/* 1 with *addr decoded, 0 when the writer has not published fi_addr (or
 * removed it), -FI_EINVAL for a corrupt entry. */
int mrail_av_shared_read(const struct mrail_av_shared *shared, fi_addr_t fi_addr,
			 struct mrail_addr *addr);

/* The peer record behind an entry (an alias's is its canonical entry's),
 * or NULL when the entry holds no peer. */
struct mrail_av_peer *mrail_av_get_peer(struct mrail_av *av, fi_addr_t fi_addr);
/*
 * A HELLO brought a peer's full address. Finds the entry that has its key,
 * completes a partial entry for its rail 0, or adds a slot the application
 * cannot see (its messages show FI_ADDR_NOTAVAIL as their source until the
 * application inserts the peer, whose entry then aliases that slot).
 * addr is decoded, full and compatible. Returns 0 with *fi_addr (the
 * peer's canonical entry), or an error after a warning.
 */
int mrail_av_learn_peer(struct mrail_av *av, const struct mrail_addr *addr,
			fi_addr_t *fi_addr);

int mrail_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		  struct fid_av **av, void *context);

#endif /* MRAIL_AV_SRC_H */
