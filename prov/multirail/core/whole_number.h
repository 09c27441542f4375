/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whole numbers from the environment (FI_MRAIL_SPIN_US,
 * FI_MRAIL_PEER_TIMEOUT, the policies' sizes and windows): decimal digits
 * and nothing else. strtoull alone would take leading blanks, a sign (and
 * wrap "-1" to the largest value) and an empty string; every parameter
 * read through here refuses them alike.
 */
#ifndef MRAIL_WHOLE_NUMBER_H
#define MRAIL_WHOLE_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* text: one or more decimal digits, nothing before or after, at most max.
 * Returns 0 with *out set, or -EINVAL (NULL, empty, anything but digits,
 * above max) with *out untouched. */
int mrail_parse_whole(const char *text, uint64_t max, uint64_t *out);

/* The same for the len characters at text (a part of a longer string). */
int mrail_parse_whole_len(const char *text, size_t len, uint64_t max,
			  uint64_t *out);

#endif
