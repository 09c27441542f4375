/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names of fi_av_insertsym ranges (see av_sym.h).
 */
#include "av_sym.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mrail_ip.h"

static int copy_out(const char *text, char *out, size_t out_len)
{
	size_t len = strlen(text);

	if (len >= out_len)
		return -ENOSPC;
	memcpy(out, text, len + 1);
	return 0;
}

/* Adds index to an address read as one big-endian number. */
static int ip_add(struct mrail_ip *ip, size_t index)
{
	size_t i = mrail_ip_bits(ip->family) / 8;
	uint64_t carry = index;

	/* Room for a byte's worth of carry; no range is that long anyway. */
	if (carry > UINT64_MAX >> 8)
		return -ERANGE;

	while (i-- > 0 && carry) {
		carry += ip->bytes[i];
		ip->bytes[i] = (uint8_t) carry;
		carry >>= 8;
	}
	return carry ? -ERANGE : 0;
}

int mrail_av_sym_node(const char *base, size_t index, char *out, size_t out_len)
{
	size_t i, len, digits = 0;
	struct mrail_ip ip;
	uint64_t suffix = 0;
	char number[24];
	int ret, n;

	if (!base || !out)
		return -EINVAL;
	if (!index)
		return copy_out(base, out, out_len);
	if (!mrail_ip_parse(base, &ip)) {
		ret = ip_add(&ip, index);
		if (ret)
			return ret;
		if (out_len < 46)	/* INET6_ADDRSTRLEN */
			return -ENOSPC;
		return mrail_ip_format(&ip, out, out_len) ? -EINVAL : 0;
	}
	len = strlen(base);
	while (digits < len && base[len - 1 - digits] >= '0' &&
	       base[len - 1 - digits] <= '9')
		digits++;
	if (!digits || digits > 19)
		return digits ? -ERANGE : -EINVAL;
	for (i = len - digits; i < len; i++)
		suffix = suffix * 10 + (uint64_t) (base[i] - '0');
	if (suffix > UINT64_MAX - index)
		return -ERANGE;
	n = snprintf(number, sizeof(number), "%0*" PRIu64, (int) digits,
		     suffix + index);
	if (n < 0 || (size_t) n >= sizeof(number))
		return -ERANGE;
	if (len - digits + (size_t) n >= out_len)
		return -ENOSPC;
	memcpy(out, base, len - digits);
	memcpy(out + len - digits, number, (size_t) n + 1);
	return 0;
}

int mrail_av_sym_service(const char *base, size_t index, char *out, size_t out_len)
{
	unsigned long port = 0;
	size_t i, len;
	int n;

	if (!base || !out)
		return -EINVAL;
	if (!index)
		return copy_out(base, out, out_len);
	len = strlen(base);
	if (!len || len > 5)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (base[i] < '0' || base[i] > '9')
			return -EINVAL;
		port = port * 10 + (unsigned long) (base[i] - '0');
	}
	if (port > 65535 || index > 65535 - port)
		return -ERANGE;
	n = snprintf(out, out_len, "%lu", port + index);
	return n < 0 || (size_t) n >= out_len ? -ENOSPC : 0;
}
