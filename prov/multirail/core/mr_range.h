/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bounds and permission checks of a registered memory region, as the
 * target of an RMA operation decides them (mrail_rma.c): does an access [addr, addr + len) stay inside a region of
 * region_len bytes starting at start, and do its access bits stay inside
 * the ones granted at registration?
 *
 * Addresses are 64-bit integers from peers, hence untrusted: every check
 * is done without any sum that could wrap. With mrail's mr_mode 0 a region
 * starts at 0 (peers address it by offset); with FI_MR_VIRT_ADDR it would
 * start at the buffer's virtual address.
 */
#ifndef MRAIL_MR_RANGE_H
#define MRAIL_MR_RANGE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Whether [start, start + region_len) is a region at all: region_len > 0
 * and its last byte, start + region_len - 1, fits in 64 bits (a region may
 * end at the very top of the address space).
 */
bool mrail_mr_region_valid(uint64_t start, uint64_t region_len);

/*
 * Whether [addr, addr + len) lies inside the region [start, start +
 * region_len), which must be valid (false otherwise). A zero-length access
 * is inside when addr is within the region or just past its last byte.
 * On success, *offset (if not NULL) is addr - start.
 */
bool mrail_mr_range_within(uint64_t start, uint64_t region_len, uint64_t addr,
			   uint64_t len, uint64_t *offset);

/*
 * Whether an access asking for the bits in requested is allowed by a region
 * that granted the bits in granted: requested is not empty and holds no bit
 * outside granted.
 */
bool mrail_mr_access_allows(uint64_t granted, uint64_t requested);

/*
 * The target's answer to an RMA request from a peer, in the order a peer
 * learns the least: no region under the key (found false) or an access the
 * region did not grant is -EACCES, a range outside the region (offsets
 * from 0, mr_mode 0) is -EINVAL, else 0.
 */
int mrail_rma_check(bool found, uint64_t region_len, uint64_t granted,
		    uint64_t addr, uint64_t len, uint64_t access);

#endif /* MRAIL_MR_RANGE_H */
