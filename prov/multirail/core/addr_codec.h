/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The mrail endpoint address: a self-describing blob of every rail's core
 * address, returned by fi_getname and inserted into peers' AVs. Everything
 * decoded here may come from another host: it is validated completely.
 *
 * It is compact because MPI libraries keep endpoint names in FI_NAME_MAX
 * (64-byte) buffers: Open MPI's mtl ofi cannot start over a provider whose
 * name is longer. Eight IPv4 rails take 6 + 8 * 7 = 62 bytes.
 *
 * Layout, version 2 (multi-byte integers little-endian unless noted):
 *   0  'm' 'r' 'a'  magic
 *   3  u8   version (MRAIL_ADDR_VERSION)
 *   4  u8   rail count, 1..MRAIL_MAX_RAILS
 *   5  u8   flags (MRAIL_ADDR_FLAG_*)
 *   6  per rail:
 *        u8   descriptor: form << 5 | stack
 *               stack 1..31: index into the table of known stacks
 *                 (mrail_addr_stack_name); 0: the name follows inline
 *               form: how the core address is written (MRAIL_ADDR_FORM_*)
 *        [stack 0 only]
 *        u8   stack name length n, 1..MRAIL_STACK_NAME_MAX-1
 *        n    stack name, [a-z0-9_;], not one in the table
 *        [form IPV4]  4 bytes IPv4 address, u16 port (network order):
 *               a struct sockaddr_in of format FI_SOCKADDR_IN, all else 0
 *        [form IPV6]  16 bytes IPv6 address, u16 port (network order):
 *               a struct sockaddr_in6 of format FI_SOCKADDR_IN6 with no
 *               flow label and no scope
 *        [form RAW]   u32 core address format (fi_info addr_format),
 *               u8 length m, 1..MRAIL_RAIL_ADDR_MAX, m core address bytes;
 *               never an address the IPV4 or IPV6 form can carry
 * Nothing may follow the last rail. Every address has exactly one encoding,
 * so decoding and re-encoding gives back the same bytes.
 */
#ifndef MRAIL_ADDR_CODEC_H
#define MRAIL_ADDR_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mrail_limits.h"

#define MRAIL_ADDR_VERSION 2
#define MRAIL_ADDR_HEADER_LEN 6

/* fi_info addr_format values (enum in rdma/fabric.h; core/ does not include
 * libfabric, src/mrail_av.c checks that they agree). */
#define MRAIL_ADDR_FORMAT_SOCKADDR_IN	2
#define MRAIL_ADDR_FORMAT_SOCKADDR_IN6	3

/* The forms of a rail's core address (the descriptor's top 3 bits). */
enum mrail_addr_form {
	MRAIL_ADDR_FORM_IPV4 = 1,	/* 4-byte address + 2-byte port */
	MRAIL_ADDR_FORM_IPV6 = 2,	/* 16-byte address + 2-byte port */
	MRAIL_ADDR_FORM_RAW = 3,	/* format, length, bytes */
};

#define MRAIL_ADDR_FORM_SHIFT 5
#define MRAIL_ADDR_STACK_MASK 0x1f
#define MRAIL_ADDR_STACK_INLINE 0

/* Only rail 0 is known (learned from fi_getinfo node/service); the rest
 * comes from the peer on first contact. A partial address has one rail. */
#define MRAIL_ADDR_FLAG_PARTIAL 0x01
#define MRAIL_ADDR_KNOWN_FLAGS MRAIL_ADDR_FLAG_PARTIAL

/* One rail at its largest: descriptor, inline name, raw address. */
#define MRAIL_ADDR_RAIL_MAX_LEN (1 + 1 + MRAIL_STACK_NAME_MAX - 1 + 4 + 1 + \
				 MRAIL_RAIL_ADDR_MAX)
#define MRAIL_ADDR_MAX_LEN (MRAIL_ADDR_HEADER_LEN + \
			    MRAIL_MAX_RAILS * MRAIL_ADDR_RAIL_MAX_LEN)

struct mrail_rail_addr {
	char stack[MRAIL_STACK_NAME_MAX];	/* NUL-terminated */
	uint32_t format;
	uint16_t len;
	uint8_t bytes[MRAIL_RAIL_ADDR_MAX];
};

struct mrail_addr {
	uint8_t rail_count;
	uint8_t flags;
	struct mrail_rail_addr rails[MRAIL_MAX_RAILS];
};

/* Bytes mrail_addr_encode needs for addr; 0 when addr cannot be encoded. */
size_t mrail_addr_encoded_len(const struct mrail_addr *addr);

/*
 * Encodes addr into buf. Returns the length written, -ENOSPC
 * when len is too small (nothing written), or -EINVAL when addr itself breaks
 * the rules the decoder enforces.
 */
ssize_t mrail_addr_encode(const struct mrail_addr *addr, void *buf, size_t len);

/*
 * The key a peer is known by in every mrail header it sends: a 64-bit
 * FNV-1a hash of addr's encoding. The sender hashes its own name, the
 * receiver the address it inserted or learnt from a HELLO; the encoding is
 * canonical (decoding then encoding gives the same bytes), so both agree.
 * This, not the rail's source address, is how a receiver tells who sent a
 * message: a rail cannot name a sender that is not in its AV yet. Returns 0
 * (never a key) when addr cannot be encoded.
 */
uint64_t mrail_addr_key(const struct mrail_addr *addr);

/*
 * Decodes and validates len bytes from an untrusted source. Returns 0, or
 * -EINVAL with err saying which field is wrong and why.
 */
int mrail_addr_decode(const void *buf, size_t len, struct mrail_addr *addr,
		      char *err, size_t err_len);

/*
 * Decodes the first of several addresses packed back to back (fi_av_insert
 * takes count of them in one buffer): as mrail_addr_decode, except that bytes
 * may follow the address. *consumed is its length (0 on failure).
 */
int mrail_addr_decode_prefix(const void *buf, size_t len, struct mrail_addr *addr,
			     size_t *consumed, char *err, size_t err_len);

/*
 * Whether a peer can talk to us: the same number of rails over the same
 * stacks, in order. A partial peer address is checked on its rail 0 only.
 * Returns 0, or -EINVAL with err naming the first mismatch.
 */
int mrail_addr_check_compatible(const struct mrail_addr *local,
				const struct mrail_addr *peer,
				char *err, size_t err_len);

/* For tools that show an encoding: the table index of a stack name (0 when
 * it is not in the table and goes inline), the name at a table index (NULL
 * outside 1..count), and the form and encoded size of one valid rail. */
unsigned mrail_addr_stack_index(const char *stack);
const char *mrail_addr_stack_name(unsigned index);
unsigned mrail_addr_stack_count(void);
enum mrail_addr_form mrail_addr_rail_form(const struct mrail_rail_addr *rail);
size_t mrail_addr_rail_encoded_len(const struct mrail_rail_addr *rail);

/*
 * Whether a and b name the same core address on rail (stack, format and
 * bytes); false if either has no such rail. A partial address learned from
 * fi_getinfo and the full address its peer later sends agree on rail 0.
 */
bool mrail_addr_same_rail(const struct mrail_addr *a, const struct mrail_addr *b,
			  unsigned rail);

/*
 * A partial address (MRAIL_ADDR_FLAG_PARTIAL, one rail) for a peer's rail 0
 * core address. Returns 0, or -EINVAL when the stack name or address does
 * not fit the limits the decoder enforces.
 */
int mrail_addr_make_partial(const char *stack, uint32_t format, const void *bytes,
			    size_t len, struct mrail_addr *addr);

#endif /* MRAIL_ADDR_CODEC_H */
