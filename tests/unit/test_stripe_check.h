/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by the striping tests: the stripes a call wrote to out, checked
 * one by one against what the test computed by hand.
 */
#ifndef MRAIL_TEST_STRIPE_CHECK_H
#define MRAIL_TEST_STRIPE_CHECK_H

#include <stdint.h>

#include <criterion/criterion.h>

#include "stripe.h"

#define KIB 1024ULL
#define MIB (1024ULL * 1024ULL)

static struct mrail_stripe out[MRAIL_MAX_RAILS];

static inline void expect_stripe(int i, unsigned rail, uint64_t offset,
				 uint64_t len)
{
	cr_expect_eq(out[i].rail, rail, "stripe %d rail %u, expected %u", i,
		     out[i].rail, rail);
	cr_expect_eq(out[i].offset, offset, "stripe %d offset %llu, expected %llu",
		     i, (unsigned long long) out[i].offset,
		     (unsigned long long) offset);
	cr_expect_eq(out[i].len, len, "stripe %d len %llu, expected %llu", i,
		     (unsigned long long) out[i].len, (unsigned long long) len);
}

#endif /* MRAIL_TEST_STRIPE_CHECK_H */
