/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IP addresses and subnets as plain values (see mrail_ip.h).
 *
 * Only numeric forms are understood: a rail configuration must mean the same
 * thing on every host, so nothing here consults a resolver.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "mrail_ip.h"

unsigned mrail_ip_bits(int family)
{
	switch (family) {
	case AF_INET:
		return 32;
	case AF_INET6:
		return 128;
	default:
		return 0;
	}
}

static bool ip_family_is_known(int family)
{
	return mrail_ip_bits(family) != 0;
}

/* Bytes of mrail_ip.bytes that carry the address; the rest are ignored. */
static size_t ip_significant_bytes(const struct mrail_ip *ip)
{
	return ip_family_is_known(ip->family) ?
	       mrail_ip_bits(ip->family) / 8 : sizeof(ip->bytes);
}

/*
 * inet_pton() is strict on both families: no blanks, no zone index, no
 * leading zeros in IPv4 octets, so the text is taken exactly as written.
 * The in_addr/in6_addr locals keep inet_pton's stores correctly aligned.
 */
int mrail_ip_parse(const char *text, struct mrail_ip *ip)
{
	struct in6_addr v6;
	struct in_addr v4;

	if (!text || !ip)
		return -EINVAL;

	if (inet_pton(AF_INET, text, &v4) == 1) {
		memset(ip, 0, sizeof(*ip));
		ip->family = AF_INET;
		memcpy(ip->bytes, &v4, sizeof(v4));
		return 0;
	}
	if (inet_pton(AF_INET6, text, &v6) == 1) {
		memset(ip, 0, sizeof(*ip));
		ip->family = AF_INET6;
		memcpy(ip->bytes, &v6, sizeof(v6));
		return 0;
	}
	return -EINVAL;
}

/* Returns 0, -EINVAL for an unknown family, or -ENOSPC (nothing written). */
int mrail_ip_format(const struct mrail_ip *ip, char *buf, size_t len)
{
	char text[INET6_ADDRSTRLEN];
	struct in6_addr raw;
	size_t text_len;

	if (!ip || !buf || !ip_family_is_known(ip->family))
		return -EINVAL;

	memcpy(&raw, ip->bytes, ip_significant_bytes(ip));
	if (!inet_ntop(ip->family, &raw, text, sizeof(text)))
		return -EINVAL;

	text_len = strlen(text);
	if (text_len >= len)
		return -ENOSPC;
	memcpy(buf, text, text_len + 1);
	return 0;
}

/* A prefix at least as long as the address leaves it untouched. */
void mrail_ip_mask(struct mrail_ip *ip, unsigned prefix_len)
{
	unsigned bits, kept_bits;
	size_t byte, end;

	if (!ip)
		return;
	bits = mrail_ip_bits(ip->family);
	if (prefix_len >= bits)
		return;

	end = bits / 8;
	byte = prefix_len / 8;
	kept_bits = prefix_len % 8;
	if (kept_bits) {
		ip->bytes[byte] &= (uint8_t) (0xff << (8 - kept_bits));
		byte++;
	}
	memset(&ip->bytes[byte], 0, end - byte);
}

bool mrail_ip_equal(const struct mrail_ip *a, const struct mrail_ip *b)
{
	if (!a || !b || a->family != b->family)
		return false;
	return !memcmp(a->bytes, b->bytes, ip_significant_bytes(a));
}

/*
 * The network is masked as well as the address, so a subnet written with
 * host bits set still means the subnet, as it does to ip(8).
 */
bool mrail_ip_in_subnet(const struct mrail_ip *ip,
			const struct mrail_ip *network, unsigned prefix_len)
{
	struct mrail_ip masked_ip, masked_net;

	if (!ip || !network || ip->family != network->family ||
	    !ip_family_is_known(ip->family) ||
	    prefix_len > mrail_ip_bits(ip->family))
		return false;

	masked_ip = *ip;
	masked_net = *network;
	mrail_ip_mask(&masked_ip, prefix_len);
	mrail_ip_mask(&masked_net, prefix_len);
	return mrail_ip_equal(&masked_ip, &masked_net);
}

bool mrail_ip_is_loopback(const struct mrail_ip *ip)
{
	static const uint8_t v6_loopback[16] = { [15] = 1 };

	if (!ip)
		return false;
	switch (ip->family) {
	case AF_INET:
		return ip->bytes[0] == 127;
	case AF_INET6:
		return !memcmp(ip->bytes, v6_loopback, sizeof(v6_loopback));
	default:
		return false;
	}
}
