/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The table behind a named (shared) AV: one region of shared memory that
 * the process creating the AV writes and other processes on the node read.
 *
 * fi_av(3): an fi_addr_t returned by fi_av_insert in one process must be
 * usable in another process that opens the AV of the same name. mrail's
 * fi_addr_t indexes the AV's entries, so the region holds, per index, the
 * mrail address inserted there (readers insert it into their own rails'
 * AVs when they first meet that index) and an array of fi_addr_t values
 * that the provider hands out as the AV's map_addr: entry i holds i once
 * index i is published, MRAIL_AV_SHM_NONE before that or after removal.
 *
 * Layout: header | map[capacity] (uint64_t) | slots[capacity].
 * A reader maps memory another process writes: everything it reads here is
 * checked (header at attach, each slot's length when read), so a corrupt
 * or foreign region gives an error, never an out-of-bounds read.
 *
 * Publication order: the writer fills a slot, then stores its state READY
 * with release ordering, then sets map[i]; a reader loads the state with
 * acquire ordering before it reads the bytes.
 */
#ifndef MRAIL_AV_SHM_H
#define MRAIL_AV_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addr_codec.h"

#define MRAIL_AV_SHM_MAGIC 0x3156414c4941524dULL	/* "MRAILAV1" */
#define MRAIL_AV_SHM_VERSION 1
#define MRAIL_AV_SHM_NONE UINT64_MAX

/* Entries a named AV can share: attr->count, at least the default, at most
 * the maximum (the region is sized once, when it is created). */
#define MRAIL_AV_SHM_DEFAULT_CAPACITY 1024u
#define MRAIL_AV_SHM_MAX_CAPACITY (1u << 20)

/* Characters of a name (fi_av_attr.name) mrail accepts: a named AV is a
 * file in /dev/shm, so a name is one path component of plain characters. */
#define MRAIL_AV_SHM_NAME_MAX 200

enum mrail_av_shm_state {
	MRAIL_AV_SHM_EMPTY = 0,
	MRAIL_AV_SHM_READY = 1,
	MRAIL_AV_SHM_REMOVED = 2,
};

struct mrail_av_shm_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t capacity;
	uint32_t slot_size;	/* sizeof(struct mrail_av_shm_slot) */
	int32_t writer_pid;	/* the process that writes the table */
	uint64_t total_size;	/* bytes of the whole region */
};

struct mrail_av_shm_slot {
	uint32_t state;		/* enum mrail_av_shm_state, atomic */
	uint32_t len;		/* bytes of the encoded mrail address */
	uint8_t bytes[MRAIL_ADDR_MAX_LEN];
};

/* The capacity a named AV gets for attr->count. */
uint32_t mrail_av_shm_capacity(size_t count);

/* Bytes of a region of capacity entries. */
size_t mrail_av_shm_size(uint32_t capacity);

/* Formats region (mrail_av_shm_size(capacity) bytes, zeroed or not): no
 * entry published, every map entry MRAIL_AV_SHM_NONE. */
void mrail_av_shm_init(void *region, uint32_t capacity, int32_t writer_pid);

/* Checks a region of len bytes another process made; 0 or -1 with why. */
int mrail_av_shm_check(const void *region, size_t len, char *err, size_t errlen);

/* A name mrail can use for a region; 0 or -1 with why. */
int mrail_av_shm_check_name(const char *name, char *err, size_t errlen);

/* The fi_addr_t array handed out as map_addr. */
uint64_t *mrail_av_shm_map(void *region);

uint32_t mrail_av_shm_capacity_of(const void *region);

/* Publishes index idx with an encoded address of len bytes; -1 when idx is
 * past the capacity or len does not fit a slot. */
int mrail_av_shm_publish(void *region, uint64_t idx, const void *bytes,
			 size_t len);

/* Withdraws index idx (fi_av_remove in the writer). */
void mrail_av_shm_withdraw(void *region, uint64_t idx);

/*
 * Reads index idx: MRAIL_AV_SHM_READY with the address copied to buf (of
 * MRAIL_ADDR_MAX_LEN bytes) and its length in *len, MRAIL_AV_SHM_EMPTY or
 * MRAIL_AV_SHM_REMOVED with nothing copied, or -1 when idx is past the
 * capacity or the slot is corrupt.
 */
int mrail_av_shm_read(const void *region, uint64_t idx, void *buf, size_t *len);

#endif /* MRAIL_AV_SHM_H */
