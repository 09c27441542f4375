/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of core/mr_range.c: named cases at the edges of a region and
 * of the address space, then every combination of small values and of
 * values around 2^63 and 2^64, then a long fixed-seed random run, each
 * checked against a reference computed in 128-bit arithmetic, where no sum
 * can wrap.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "test_rng.h"

#include "mr_range.h"

typedef unsigned __int128 u128;

static bool ref_region_valid(uint64_t start, uint64_t region_len)
{
	return region_len && (u128) start + region_len <= (u128) UINT64_MAX + 1;
}

static bool ref_within(uint64_t start, uint64_t region_len, uint64_t addr, uint64_t len)
{
	return ref_region_valid(start, region_len) && addr >= start &&
	       (u128) addr + len <= (u128) start + region_len;
}

/* Checks one case against the reference, offset included. */
static void check_case(uint64_t start, uint64_t region_len, uint64_t addr, uint64_t len)
{
	bool want = ref_within(start, region_len, addr, len);
	uint64_t offset = 0xdeadbeef;
	bool got = mrail_mr_range_within(start, region_len, addr, len, &offset);

	cr_assert_eq(mrail_mr_region_valid(start, region_len),
		     ref_region_valid(start, region_len),
		     "region_valid(%#lx, %#lx)", (unsigned long) start,
		     (unsigned long) region_len);
	cr_assert_eq(got, want,
		     "within(start %#lx, region_len %#lx, addr %#lx, len %#lx) "
		     "is %d, must be %d",
		     (unsigned long) start, (unsigned long) region_len,
		     (unsigned long) addr, (unsigned long) len, got, want);
	if (got)
		cr_assert_eq(offset, addr - start);
	else
		cr_assert_eq(offset, 0xdeadbeef, "offset written on refusal");
}

Test(mr_region, valid_and_invalid)
{
	cr_assert(mrail_mr_region_valid(0, 1));
	cr_assert(mrail_mr_region_valid(0, UINT64_MAX));
	cr_assert(mrail_mr_region_valid(1, UINT64_MAX), "ends exactly at the top");
	cr_assert(mrail_mr_region_valid(UINT64_MAX, 1), "the last byte alone");
	cr_assert_not(mrail_mr_region_valid(0, 0), "empty region");
	cr_assert_not(mrail_mr_region_valid(UINT64_MAX, 0), "empty region at the top");
	cr_assert_not(mrail_mr_region_valid(2, UINT64_MAX), "one byte past the top");
	cr_assert_not(mrail_mr_region_valid(UINT64_MAX, 2), "wraps to 0");
	cr_assert_not(mrail_mr_region_valid(UINT64_MAX - 9, 11));
	cr_assert(mrail_mr_region_valid(UINT64_MAX - 9, 10));
}

Test(mr_range, offsets_into_a_zero_based_region)
{
	uint64_t off = 0;

	/* mr_mode 0: a 4096-byte region addressed 0..4095. */
	cr_assert(mrail_mr_range_within(0, 4096, 0, 4096, &off));
	cr_assert_eq(off, 0);
	cr_assert(mrail_mr_range_within(0, 4096, 4095, 1, &off));
	cr_assert_eq(off, 4095);
	cr_assert(mrail_mr_range_within(0, 4096, 100, 3996, NULL));
	cr_assert_not(mrail_mr_range_within(0, 4096, 100, 3997, NULL), "one byte over");
	cr_assert_not(mrail_mr_range_within(0, 4096, 4096, 1, NULL),
		      "starts past the end");
	cr_assert_not(mrail_mr_range_within(0, 4096, 0, 4097, NULL));
	cr_assert(mrail_mr_range_within(0, 4096, 4096, 0, &off),
		  "empty access at the end");
	cr_assert_eq(off, 4096);
	cr_assert_not(mrail_mr_range_within(0, 4096, 4097, 0, NULL),
		      "empty access beyond");
}

Test(mr_range, virtual_addresses)
{
	uint64_t base = 0x7f0000001000ULL, off = 0;

	cr_assert(mrail_mr_range_within(base, 64, base + 8, 56, &off));
	cr_assert_eq(off, 8);
	cr_assert_not(mrail_mr_range_within(base, 64, base - 1, 2, NULL),
		      "starts before");
	cr_assert_not(mrail_mr_range_within(base, 64, base + 8, 57, NULL));
}

Test(mr_range, lengths_that_would_wrap_are_refused)
{
	/* addr + len wraps to a small number that a naive check would accept. */
	cr_assert_not(mrail_mr_range_within(0, 4096, 16, UINT64_MAX, NULL));
	cr_assert_not(mrail_mr_range_within(0, 4096, 16, UINT64_MAX - 15, NULL));
	cr_assert_not(mrail_mr_range_within(0, 4096, UINT64_MAX, 2, NULL));
	cr_assert_not(mrail_mr_range_within(4096, 4096, 4097, UINT64_MAX - 4000, NULL));
	/* A region reaching the top: its last byte is reachable, nothing after. */
	cr_assert(mrail_mr_range_within(UINT64_MAX - 9, 10, UINT64_MAX, 1, NULL));
	cr_assert(mrail_mr_range_within(UINT64_MAX - 9, 10, UINT64_MAX - 9, 10, NULL));
	cr_assert_not(mrail_mr_range_within(UINT64_MAX - 9, 10, UINT64_MAX, 2, NULL));
	cr_assert(mrail_mr_range_within(0, UINT64_MAX, 0, UINT64_MAX, NULL));
	cr_assert_not(mrail_mr_range_within(0, UINT64_MAX, 1, UINT64_MAX, NULL));
}

Test(mr_range, invalid_regions_contain_nothing)
{
	cr_assert_not(mrail_mr_range_within(0, 0, 0, 0, NULL));
	cr_assert_not(mrail_mr_range_within(UINT64_MAX, 2, UINT64_MAX, 1, NULL));
}

Test(mr_range, every_small_case)
{
	uint64_t start, rlen, addr, len;

	for (start = 0; start < 6; start++)
		for (rlen = 0; rlen < 8; rlen++)
			for (addr = 0; addr < 16; addr++)
				for (len = 0; len < 16; len++)
					check_case(start, rlen, addr, len);
}

static const uint64_t edges[] = {
	0, 1, 2, 3, 4095, 4096, 4097,
	(uint64_t) INT64_MAX - 1, (uint64_t) INT64_MAX, (uint64_t) INT64_MAX + 1,
	(uint64_t) INT64_MAX + 2, UINT64_MAX - 4096, UINT64_MAX - 2, UINT64_MAX - 1,
	UINT64_MAX,
};
#define EDGE_COUNT (sizeof(edges) / sizeof(edges[0]))

Test(mr_range, every_combination_of_edge_values)
{
	size_t a, b, c, d;

	for (a = 0; a < EDGE_COUNT; a++)
		for (b = 0; b < EDGE_COUNT; b++)
			for (c = 0; c < EDGE_COUNT; c++)
				for (d = 0; d < EDGE_COUNT; d++)
					check_case(edges[a], edges[b], edges[c],
						   edges[d]);
}

/* A value either near an edge (edge +- a little) or uniformly random. */
static uint64_t pick(uint64_t *rng)
{
	uint64_t edge = edges[test_rng_below(rng, EDGE_COUNT)];

	switch (test_rng_below(rng, 3)) {
	case 0:
		return edge + test_rng_below(rng, 64);
	case 1:
		return edge - test_rng_below(rng, 64);
	default:
		return test_rng_next(rng);
	}
}

Test(mr_range, random_cases_match_the_reference)
{
	uint64_t rng = 0x6d725f72616e6765ULL, start, rlen;
	size_t i, inside = 0;

	for (i = 0; i < 400000; i++) {
		start = pick(&rng);
		rlen = pick(&rng);
		/* Half the accesses aimed inside the region, to reach both answers. */
		if (i % 2 && ref_region_valid(start, rlen)) {
			uint64_t off = test_rng_below(&rng, rlen) + (i % 4 == 1);
			uint64_t len = test_rng_below(
				&rng, rlen - (off < rlen ? off : rlen) + 2);

			inside += ref_within(start, rlen, start + off, len);
			check_case(start, rlen, start + off, len);
		} else {
			check_case(start, rlen, pick(&rng), pick(&rng));
		}
	}
	/* The run must have exercised acceptance, not only refusals. */
	cr_assert_gt(inside, 50000, "only %zu accepted cases", inside);
}

Test(mr_access, granted_bits)
{
	const uint64_t send = 1 << 0, recv = 1 << 1, rread = 1 << 2, rwrite = 1 << 3;

	cr_assert(mrail_mr_access_allows(rread | rwrite, rread));
	cr_assert(mrail_mr_access_allows(rread | rwrite, rread | rwrite));
	cr_assert_not(mrail_mr_access_allows(rread, rwrite));
	cr_assert_not(mrail_mr_access_allows(rread, rread | rwrite), "one bit too many");
	cr_assert_not(mrail_mr_access_allows(send | recv, 0), "an empty request");
	cr_assert_not(mrail_mr_access_allows(0, send));
	cr_assert(mrail_mr_access_allows(UINT64_MAX, 1ULL << 63));
}

/* The target's decision on a peer's RMA request (mrail_rma_check). */
Test(rma_check, key_access_then_bounds)
{
	const uint64_t rread = 1 << 2, rwrite = 1 << 3;

	/* Inside, with the access granted: the only yes. */
	cr_assert_eq(mrail_rma_check(true, 4096, rread | rwrite, 0, 4096, rwrite), 0);
	cr_assert_eq(mrail_rma_check(true, 4096, rwrite, 4095, 1, rwrite), 0);
	cr_assert_eq(mrail_rma_check(true, 4096, rread, 4096, 0, rread), 0,
		     "an empty access just past the end");
	/* No region under the key: access denied, whatever the range. */
	cr_assert_eq(mrail_rma_check(false, 4096, rwrite, 0, 1, rwrite), -EACCES);
	cr_assert_eq(mrail_rma_check(false, 0, 0, 0, 0, rread), -EACCES);
	/* A region without the access asked for. */
	cr_assert_eq(mrail_rma_check(true, 4096, rread, 0, 16, rwrite), -EACCES);
	cr_assert_eq(mrail_rma_check(true, 4096, rwrite, 0, 16, rread), -EACCES);
	/* Past the end, by one byte or by wrapping sums. */
	cr_assert_eq(mrail_rma_check(true, 4096, rwrite, 4095, 2, rwrite), -EINVAL);
	cr_assert_eq(mrail_rma_check(true, 4096, rwrite, 4097, 0, rwrite), -EINVAL);
	cr_assert_eq(mrail_rma_check(true, 4096, rwrite, 1, UINT64_MAX, rwrite), -EINVAL);
	cr_assert_eq(mrail_rma_check(true, 4096, rwrite, UINT64_MAX, 2, rwrite), -EINVAL);
	/* Access is checked first: a peer without rights learns no bounds. */
	cr_assert_eq(mrail_rma_check(true, 4096, rread, 8192, 1, rwrite), -EACCES);
}
