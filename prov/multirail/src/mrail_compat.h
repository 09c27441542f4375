/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail provider: what it needs from libfabric's public headers that not
 * every supported release (1.17 to 2.x) offers in the same form.
 *
 * libfabric 2.0 took container_of out of rdma/fabric.h, and 2.0 made the
 * pre-1.5 memory registration names (FI_MR_BASIC, FI_MR_SCALABLE,
 * FI_MR_UNSPEC, FI_LOCAL_MR), FI_REG_MR, FI_ORDER_NONE and FI_ORDER_DATA
 * expand to a "GCC warning" pragma, which -Werror turns into an error. mrail
 * still has to understand those bits when a 1.x application passes them
 * (fi_version(3): a provider serves every API version up to its own), so it
 * names their values itself: they are part of libfabric's ABI and cannot
 * change.
 *
 * Header only, no libfabric internals; usable by core/ and the test
 * programs as well as by src/.
 */
#ifndef MRAIL_COMPAT_H
#define MRAIL_COMPAT_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

#ifndef container_of
#define container_of(ptr, type, field) \
	((type *) ((char *) (ptr) - offsetof(type, field)))
#endif

/* The first API version whose callers must not see the bits below. */
#define MRAIL_FI_VERSION_2 FI_VERSION(2, 0)

/* domain_attr->mr_mode values of API versions 1.4 and earlier
 * (fi_domain(3)): FI_MR_UNSPEC, FI_MR_BASIC, FI_MR_SCALABLE. */
#define MRAIL_MR_UNSPEC		0
#define MRAIL_MR_BASIC		(1 << 0)
#define MRAIL_MR_SCALABLE	(1 << 1)

/* FI_LOCAL_MR, an info->mode bit of API versions before 1.5. */
#define MRAIL_MODE_LOCAL_MR	(1ULL << 55)

/* FI_REG_MR: fi_domain_bind flag asking for asynchronous registration
 * events on the bound EQ (fi_domain(3), deprecated in 2.0). */
#define MRAIL_BIND_REG_MR	(1ULL << 59)

/* FI_ORDER_NONE: "no ordering", the value 0. */
#define MRAIL_ORDER_NONE	0ULL

/* FI_ORDER_DATA: a msg_order bit of 1.x (data order), deprecated in 2.0. */
#define MRAIL_ORDER_DATA	(1ULL << 16)

/* FI_ORDER_STRICT: every ordering bit of 1.x at once, deprecated in 2.0. */
#define MRAIL_ORDER_STRICT	0x1FFULL

/* The libfabric API version mrail registers with: the newest the headers
 * it is built against define, so that a library of that version offers it
 * to callers asking for any version up to its own. */
#define MRAIL_FI_API_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

#endif /* MRAIL_COMPAT_H */
