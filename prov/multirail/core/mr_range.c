/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory region bounds and permissions (see mr_range.h). Every comparison
 * is between differences that cannot wrap: addr + len is never computed.
 */
#include "mr_range.h"

#include <errno.h>
#include <stddef.h>

bool mrail_mr_region_valid(uint64_t start, uint64_t region_len)
{
	/* The last byte is start + region_len - 1 <= UINT64_MAX. */
	return region_len && region_len - 1 <= UINT64_MAX - start;
}

bool mrail_mr_range_within(uint64_t start, uint64_t region_len, uint64_t addr,
			   uint64_t len, uint64_t *offset)
{
	uint64_t off;

	if (!mrail_mr_region_valid(start, region_len) || addr < start)
		return false;
	off = addr - start;
	/* off <= region_len, then the room left is region_len - off. */
	if (off > region_len || len > region_len - off)
		return false;
	if (offset)
		*offset = off;
	return true;
}

bool mrail_mr_access_allows(uint64_t granted, uint64_t requested)
{
	return requested && !(requested & ~granted);
}

int mrail_rma_check(bool found, uint64_t region_len, uint64_t granted,
		    uint64_t addr, uint64_t len, uint64_t access)
{
	if (!found || !mrail_mr_access_allows(granted, access))
		return -EACCES;
	if (!mrail_mr_range_within(0, region_len, addr, len, NULL))
		return -EINVAL;
	return 0;
}
