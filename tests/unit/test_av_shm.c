/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared table of a named AV (core/av_shm.c), on plain memory: what a
 * writer publishes a reader reads byte for byte, and a region or slot that
 * is not what a writer of this mrail made is refused, never read past.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "av_shm.h"

#define CAP 4

static void *new_region(uint32_t capacity)
{
	void *region = malloc(mrail_av_shm_size(capacity));

	cr_assert_not_null(region);
	mrail_av_shm_init(region, capacity, 1234);
	return region;
}

Test(av_shm, capacity_follows_the_count_within_limits)
{
	cr_assert_eq(mrail_av_shm_capacity(0), MRAIL_AV_SHM_DEFAULT_CAPACITY);
	cr_assert_eq(mrail_av_shm_capacity(5000), 5000);
	cr_assert_eq(mrail_av_shm_capacity((size_t) 1 << 40),
		     MRAIL_AV_SHM_MAX_CAPACITY);
}

Test(av_shm, a_new_region_publishes_nothing)
{
	void *region = new_region(CAP);
	uint8_t buf[MRAIL_ADDR_MAX_LEN];
	char err[128];
	size_t len = 0;
	uint64_t i;

	cr_assert_eq(mrail_av_shm_check(region, mrail_av_shm_size(CAP), err,
					sizeof(err)), 0, "%s", err);
	cr_assert_eq(mrail_av_shm_capacity_of(region), CAP);
	for (i = 0; i < CAP; i++) {
		cr_assert_eq(mrail_av_shm_map(region)[i], MRAIL_AV_SHM_NONE);
		cr_assert_eq(mrail_av_shm_read(region, i, buf, &len),
			     MRAIL_AV_SHM_EMPTY);
	}
	cr_assert_eq(len, 0, "nothing read, no length");
	free(region);
}

Test(av_shm, a_published_entry_reads_back_byte_for_byte)
{
	void *region = new_region(CAP);
	uint8_t addr[40], buf[MRAIL_ADDR_MAX_LEN];
	size_t len = 0, i;

	for (i = 0; i < sizeof(addr); i++)
		addr[i] = (uint8_t) (i * 7 + 3);
	cr_assert_eq(mrail_av_shm_publish(region, 2, addr, sizeof(addr)), 0);
	cr_assert_eq(mrail_av_shm_map(region)[2], 2);
	cr_assert_eq(mrail_av_shm_map(region)[1], MRAIL_AV_SHM_NONE);
	cr_assert_eq(mrail_av_shm_read(region, 2, buf, &len), MRAIL_AV_SHM_READY);
	cr_assert_eq(len, sizeof(addr));
	cr_assert_arr_eq(buf, addr, sizeof(addr));
	free(region);
}

Test(av_shm, a_withdrawn_entry_is_gone_from_the_map)
{
	void *region = new_region(CAP);
	uint8_t addr[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, buf[MRAIL_ADDR_MAX_LEN];
	size_t len = 0;

	mrail_av_shm_publish(region, 0, addr, sizeof(addr));
	mrail_av_shm_withdraw(region, 0);
	cr_assert_eq(mrail_av_shm_map(region)[0], MRAIL_AV_SHM_NONE);
	cr_assert_eq(mrail_av_shm_read(region, 0, buf, &len),
		     MRAIL_AV_SHM_REMOVED);
	mrail_av_shm_withdraw(region, CAP + 9);	/* past the end: nothing */
	free(region);
}

Test(av_shm, publishing_past_the_capacity_or_a_slot_fails)
{
	void *region = new_region(CAP);
	uint8_t big[MRAIL_ADDR_MAX_LEN + 1] = { 0 };

	cr_assert_eq(mrail_av_shm_publish(region, CAP, big, 8), -1);
	cr_assert_eq(mrail_av_shm_publish(region, 0, big, sizeof(big)), -1);
	cr_assert_eq(mrail_av_shm_publish(region, 0, big, 0), -1);
	cr_assert_eq(mrail_av_shm_map(region)[0], MRAIL_AV_SHM_NONE);
	free(region);
}

Test(av_shm, reading_past_the_capacity_fails)
{
	void *region = new_region(CAP);
	uint8_t buf[MRAIL_ADDR_MAX_LEN];
	size_t len;

	cr_assert_eq(mrail_av_shm_read(region, CAP, buf, &len), -1);
	cr_assert_eq(mrail_av_shm_read(region, UINT64_MAX, buf, &len), -1);
	free(region);
}

/* Another process wrote the slot: a length past the slot or a state no
 * writer sets is corruption, refused before any byte is copied. */
Test(av_shm, a_corrupt_slot_is_refused)
{
	void *region = new_region(CAP);
	uint8_t addr[8] = { 9 }, buf[MRAIL_ADDR_MAX_LEN];
	struct mrail_av_shm_slot *slot;
	size_t len;

	mrail_av_shm_publish(region, 1, addr, sizeof(addr));
	slot = (struct mrail_av_shm_slot *)
	       ((uint8_t *) mrail_av_shm_map(region) + CAP * sizeof(uint64_t)) + 1;
	cr_assert_eq(slot->len, sizeof(addr), "the layout the test assumes");
	slot->len = MRAIL_ADDR_MAX_LEN + 100;
	cr_assert_eq(mrail_av_shm_read(region, 1, buf, &len), -1);
	slot->len = 0;
	cr_assert_eq(mrail_av_shm_read(region, 1, buf, &len), -1);
	slot->len = sizeof(addr);
	slot->state = 77;
	cr_assert_eq(mrail_av_shm_read(region, 1, buf, &len), -1);
	free(region);
}

Test(av_shm, a_region_that_is_not_ours_is_refused)
{
	size_t size = mrail_av_shm_size(CAP);
	void *region = new_region(CAP);
	struct mrail_av_shm_hdr *hdr = region;
	char err[128] = "";

	cr_assert_eq(mrail_av_shm_check(region, 8, err, sizeof(err)), -1);
	cr_assert(strstr(err, "header"), "%s", err);
	cr_assert_eq(mrail_av_shm_check(region, size - 1, err, sizeof(err)), -1,
		     "a short mapping");

	hdr->version = 99;
	cr_assert_eq(mrail_av_shm_check(region, size, err, sizeof(err)), -1);
	cr_assert(strstr(err, "version"), "%s", err);
	hdr->version = MRAIL_AV_SHM_VERSION;

	hdr->capacity = MRAIL_AV_SHM_MAX_CAPACITY + 1;
	cr_assert_eq(mrail_av_shm_check(region, size, err, sizeof(err)), -1);
	hdr->capacity = CAP + 1;	/* sizes no longer agree */
	cr_assert_eq(mrail_av_shm_check(region, size, err, sizeof(err)), -1);
	hdr->capacity = CAP;

	hdr->slot_size = 12;
	cr_assert_eq(mrail_av_shm_check(region, size, err, sizeof(err)), -1);
	hdr->slot_size = sizeof(struct mrail_av_shm_slot);

	hdr->magic = 0;
	cr_assert_eq(mrail_av_shm_check(region, size, err, sizeof(err)), -1);
	cr_assert(strstr(err, "not an mrail AV"), "%s", err);
	free(region);
}

Test(av_shm, names_are_one_plain_path_component)
{
	char err[128];
	char longname[MRAIL_AV_SHM_NAME_MAX + 2];

	cr_assert_eq(mrail_av_shm_check_name("client_av", err, sizeof(err)), 0);
	cr_assert_eq(mrail_av_shm_check_name("job-7.pe.3", err, sizeof(err)), 0);
	cr_assert_eq(mrail_av_shm_check_name("", err, sizeof(err)), -1);
	cr_assert_eq(mrail_av_shm_check_name("a/b", err, sizeof(err)), -1);
	cr_assert(strstr(err, "character 1"), "%s", err);
	cr_assert_eq(mrail_av_shm_check_name("..", err, sizeof(err)), -1);
	cr_assert_eq(mrail_av_shm_check_name(".hidden", err, sizeof(err)), -1);
	cr_assert_eq(mrail_av_shm_check_name("sp ace", err, sizeof(err)), -1);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	cr_assert_eq(mrail_av_shm_check_name(longname, err, sizeof(err)), -1);
}
