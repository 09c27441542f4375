/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fixed-seed xorshift64 generator for randomized unit tests: the same
 * "random" stream on every run, so a failure always reproduces.
 */
#ifndef MRAIL_TEST_RNG_H
#define MRAIL_TEST_RNG_H

#include <stdint.h>

static inline uint64_t test_rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* 0..bound-1, or 0 for a bound of 0. */
static inline uint64_t test_rng_below(uint64_t *state, uint64_t bound)
{
	return bound ? test_rng_next(state) % bound : 0;
}

#endif /* MRAIL_TEST_RNG_H */
