/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Limits shared by the pure logic in core/ and the libfabric glue in src/.
 * They are part of the documented behaviour (man/fi_mrail.7, "LIMITS").
 */
#ifndef MRAIL_LIMITS_H
#define MRAIL_LIMITS_H

/* Rails one endpoint may stripe over; also the most a peer address may carry. */
#define MRAIL_MAX_RAILS 8

/* A core provider stack name such as "verbs;ofi_rxm", including the NUL. */
#define MRAIL_STACK_NAME_MAX 64

/* Where a rail attaches (interface, domain, address or subnet text), with NUL. */
#define MRAIL_ATTACH_MAX 64

/* The whole FI_MRAIL_RAILS string. */
#define MRAIL_RAILS_STR_MAX 1024

/* One rail's core address inside an mrail address (sockaddr_storage fits). */
#define MRAIL_RAIL_ADDR_MAX 128

/* Interface names as the kernel bounds them (IFNAMSIZ), with NUL. */
#define MRAIL_IFNAME_MAX 16

/* Room for any message core/ writes into a caller's error buffer. */
#define MRAIL_ERR_MAX 256

#endif /* MRAIL_LIMITS_H */
