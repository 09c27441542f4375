/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared table of a named AV (see av_shm.h).
 */
#include "av_shm.h"

#include <stdio.h>
#include <string.h>

static size_t shm_map_offset(void)
{
	return sizeof(struct mrail_av_shm_hdr);
}

static size_t shm_slots_offset(uint32_t capacity)
{
	return shm_map_offset() + (size_t) capacity * sizeof(uint64_t);
}

static struct mrail_av_shm_slot *shm_slot(void *region, uint64_t idx)
{
	const struct mrail_av_shm_hdr *hdr = region;

	return (struct mrail_av_shm_slot *)
	       ((uint8_t *) region + shm_slots_offset(hdr->capacity)) + idx;
}

uint32_t mrail_av_shm_capacity(size_t count)
{
	if (count <= MRAIL_AV_SHM_DEFAULT_CAPACITY)
		return MRAIL_AV_SHM_DEFAULT_CAPACITY;
	if (count >= MRAIL_AV_SHM_MAX_CAPACITY)
		return MRAIL_AV_SHM_MAX_CAPACITY;
	return (uint32_t) count;
}

size_t mrail_av_shm_size(uint32_t capacity)
{
	return shm_slots_offset(capacity) +
	       (size_t) capacity * sizeof(struct mrail_av_shm_slot);
}

void mrail_av_shm_init(void *region, uint32_t capacity, int32_t writer_pid)
{
	struct mrail_av_shm_hdr *hdr = region;
	uint64_t *map;
	uint32_t i;

	memset(region, 0, mrail_av_shm_size(capacity));
	hdr->version = MRAIL_AV_SHM_VERSION;
	hdr->capacity = capacity;
	hdr->slot_size = sizeof(struct mrail_av_shm_slot);
	hdr->writer_pid = writer_pid;
	hdr->total_size = mrail_av_shm_size(capacity);
	map = mrail_av_shm_map(region);
	for (i = 0; i < capacity; i++)
		map[i] = MRAIL_AV_SHM_NONE;
	/* The magic last: a reader that sees it sees a formatted region. */
	__atomic_store_n(&hdr->magic, MRAIL_AV_SHM_MAGIC, __ATOMIC_RELEASE);
}

int mrail_av_shm_check(const void *region, size_t len, char *err, size_t errlen)
{
	const struct mrail_av_shm_hdr *hdr = region;

	if (len < sizeof(*hdr)) {
		snprintf(err, errlen, "%zu bytes, shorter than the header", len);
		return -1;
	}
	if (__atomic_load_n(&hdr->magic, __ATOMIC_ACQUIRE) != MRAIL_AV_SHM_MAGIC) {
		snprintf(err, errlen, "not an mrail AV (or not formatted yet)");
		return -1;
	}
	if (hdr->version != MRAIL_AV_SHM_VERSION) {
		snprintf(err, errlen, "version %u, this mrail reads version %u",
			 hdr->version, MRAIL_AV_SHM_VERSION);
		return -1;
	}
	if (hdr->slot_size != sizeof(struct mrail_av_shm_slot)) {
		snprintf(err, errlen, "slots of %u bytes, this mrail's are %zu "
			 "(built with other limits)", hdr->slot_size,
			 sizeof(struct mrail_av_shm_slot));
		return -1;
	}
	if (!hdr->capacity || hdr->capacity > MRAIL_AV_SHM_MAX_CAPACITY) {
		snprintf(err, errlen, "capacity %u, not 1..%u", hdr->capacity,
			 MRAIL_AV_SHM_MAX_CAPACITY);
		return -1;
	}
	if (hdr->total_size != mrail_av_shm_size(hdr->capacity) ||
	    hdr->total_size > len) {
		snprintf(err, errlen, "%zu bytes, %u entries need %zu", len,
			 hdr->capacity, mrail_av_shm_size(hdr->capacity));
		return -1;
	}
	return 0;
}

int mrail_av_shm_check_name(const char *name, char *err, size_t errlen)
{
	size_t i, len = strlen(name);

	if (!len || len > MRAIL_AV_SHM_NAME_MAX) {
		snprintf(err, errlen, "a name has 1 to %d characters, not %zu",
			 MRAIL_AV_SHM_NAME_MAX, len);
		return -1;
	}
	for (i = 0; i < len; i++) {
		char c = name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		    (c == '.' && i > 0))
			continue;
		snprintf(err, errlen, "character %zu (0x%02x) is not a letter, "
			 "digit, '_', '-' or a '.' after the first", i,
			 (unsigned char) c);
		return -1;
	}
	return 0;
}

uint64_t *mrail_av_shm_map(void *region)
{
	return (uint64_t *) ((uint8_t *) region + shm_map_offset());
}

uint32_t mrail_av_shm_capacity_of(const void *region)
{
	return ((const struct mrail_av_shm_hdr *) region)->capacity;
}

int mrail_av_shm_publish(void *region, uint64_t idx, const void *bytes,
			 size_t len)
{
	struct mrail_av_shm_slot *slot;

	if (idx >= mrail_av_shm_capacity_of(region) || !len ||
	    len > sizeof(slot->bytes))
		return -1;
	slot = shm_slot(region, idx);
	/* A reader that loads the old state may still copy the bytes: it
	 * checks the state again after copying (mrail_av_shm_read). */
	__atomic_store_n(&slot->state, MRAIL_AV_SHM_EMPTY, __ATOMIC_RELEASE);
	memcpy(slot->bytes, bytes, len);
	slot->len = (uint32_t) len;
	__atomic_store_n(&slot->state, MRAIL_AV_SHM_READY, __ATOMIC_RELEASE);
	__atomic_store_n(&mrail_av_shm_map(region)[idx], idx, __ATOMIC_RELEASE);
	return 0;
}

void mrail_av_shm_withdraw(void *region, uint64_t idx)
{
	if (idx >= mrail_av_shm_capacity_of(region))
		return;
	__atomic_store_n(&mrail_av_shm_map(region)[idx], MRAIL_AV_SHM_NONE,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&shm_slot(region, idx)->state, MRAIL_AV_SHM_REMOVED,
			 __ATOMIC_RELEASE);
}

int mrail_av_shm_read(const void *region, uint64_t idx, void *buf, size_t *len)
{
	struct mrail_av_shm_slot *slot;
	uint32_t state, slot_len;

	if (idx >= mrail_av_shm_capacity_of(region))
		return -1;
	slot = shm_slot((void *) region, idx);
	state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
	if (state == MRAIL_AV_SHM_EMPTY || state == MRAIL_AV_SHM_REMOVED)
		return (int) state;
	if (state != MRAIL_AV_SHM_READY)
		return -1;
	slot_len = __atomic_load_n(&slot->len, __ATOMIC_RELAXED);
	if (!slot_len || slot_len > sizeof(slot->bytes))
		return -1;
	memcpy(buf, slot->bytes, slot_len);
	/* Rewritten while we copied: not ready yet, as far as we know. */
	if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) != MRAIL_AV_SHM_READY)
		return MRAIL_AV_SHM_EMPTY;
	*len = slot_len;
	return MRAIL_AV_SHM_READY;
}
