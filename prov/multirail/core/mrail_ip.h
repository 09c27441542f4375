/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IP addresses and subnets as plain values, so that rail selection can be
 * decided and unit-tested without sockets or interfaces.
 */
#ifndef MRAIL_IP_H
#define MRAIL_IP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mrail_ip {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t bytes[16];	/* network order; IPv4 uses the first 4 */
};

/* Parses a numeric IPv4 or IPv6 address. Returns 0, or -EINVAL. */
int mrail_ip_parse(const char *text, struct mrail_ip *ip);

/* Writes the numeric form of ip into buf (INET6_ADDRSTRLEN is enough). */
int mrail_ip_format(const struct mrail_ip *ip, char *buf, size_t len);

/* Bits in an address of this family: 32 or 128. */
unsigned mrail_ip_bits(int family);

/* Clears every bit of ip past the first prefix_len. */
void mrail_ip_mask(struct mrail_ip *ip, unsigned prefix_len);

bool mrail_ip_equal(const struct mrail_ip *a, const struct mrail_ip *b);

/* True when ip lies in network/prefix_len (families must match). */
bool mrail_ip_in_subnet(const struct mrail_ip *ip, const struct mrail_ip *network,
			unsigned prefix_len);

bool mrail_ip_is_loopback(const struct mrail_ip *ip);

#endif /* MRAIL_IP_H */
