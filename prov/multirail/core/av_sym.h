/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_av_insertsym names a range of peers by a first node and a first
 * service: "10.1.1.1" and "5000" with counts 2 and 2 mean 10.1.1.1:5000,
 * 10.1.1.1:5001, 10.1.1.2:5000, 10.1.1.2:5001 (fi_av(3)). These functions
 * spell the index-th node and service of such a range.
 */
#ifndef MRAIL_AV_SYM_H
#define MRAIL_AV_SYM_H

#include <stddef.h>

/*
 * The node index places after base: a numeric IPv4 or IPv6 address counts
 * as a number (198.18.1.255 + 1 is 198.18.2.0); a name counts by its
 * numeric suffix, keeping its width (host09 + 1 is host10, node001 + 2 is
 * node003). Index 0 is base itself, whatever it is. Returns 0; -EINVAL for
 * a name without a numeric suffix (index > 0); -ERANGE when the address or
 * suffix would overflow; -ENOSPC when out_len is too small.
 */
int mrail_av_sym_node(const char *base, size_t index, char *out, size_t out_len);

/*
 * The service index places after base, a decimal port: base + index must
 * stay within 0..65535 (-ERANGE). Index 0 is base itself (a named service
 * too); a named service with index > 0 is -EINVAL. -ENOSPC as above.
 */
int mrail_av_sym_service(const char *base, size_t index, char *out, size_t out_len);

#endif /* MRAIL_AV_SYM_H */
