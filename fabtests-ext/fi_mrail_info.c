/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_info: shows the rails mrail found on this host and the address of
 * each, decoded from the endpoint address mrail advertises.
 *
 *   fi_mrail_info [-s SERVICE] [-x] [-h]
 *
 *   -s  bind every rail to SERVICE (fi_getinfo with FI_SOURCE), as an
 *       endpoint listening there would be
 *   -x  print only the endpoint address, as hex (what fi_mrail_av takes)
 *
 * Exits 0 when mrail offers an endpoint, 1 (with libfabric's reason) if not.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_mrail.h>

#include "addr_codec.h"

static void print_rail_address(const struct mrail_rail_addr *rail)
{
	char text[INET6_ADDRSTRLEN];
	uint16_t i;

	if (rail->format == FI_SOCKADDR_IN && rail->len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in sin;

		memcpy(&sin, rail->bytes, sizeof(sin));
		inet_ntop(AF_INET, &sin.sin_addr, text, sizeof(text));
		printf("%s port %u", text, ntohs(sin.sin_port));
		return;
	}
	if (rail->format == FI_SOCKADDR_IN6 && rail->len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, rail->bytes, sizeof(sin6));
		inet_ntop(AF_INET6, &sin6.sin6_addr, text, sizeof(text));
		printf("%s port %u", text, ntohs(sin6.sin6_port));
		return;
	}
	printf("format %#x, %u bytes:", rail->format, rail->len);
	for (i = 0; i < rail->len; i++)
		printf(" %02x", rail->bytes[i]);
}

/* How the rail travels in the address: by stack index or name, in which
 * form, in how many bytes (layout in addr_codec.h). */
static void print_rail_encoding(const struct mrail_rail_addr *rail)
{
	static const char *const forms[] = {
		[MRAIL_ADDR_FORM_IPV4] = "IPv4",
		[MRAIL_ADDR_FORM_IPV6] = "IPv6",
		[MRAIL_ADDR_FORM_RAW] = "raw",
	};
	unsigned index = mrail_addr_stack_index(rail->stack);

	if (index)
		printf("[stack %u, ", index);
	else
		printf("[stack inline, ");
	printf("%s form, %zu bytes]", forms[mrail_addr_rail_form(rail)],
	       mrail_addr_rail_encoded_len(rail));
}

/* The n-th '+'-separated port name of mrail's domain name. */
static void print_port(const char *domain, size_t n)
{
	const char *start = domain, *end;

	while (n-- && (start = strchr(start, '+')))
		start++;
	if (!start) {
		printf("?");
		return;
	}
	end = strchr(start, '+');
	printf("%.*s", (int) (end ? end - start : (ptrdiff_t) strlen(start)), start);
}

int main(int argc, char **argv)
{
	struct fi_info *hints, *info = NULL;
	struct mrail_addr addr;
	char err[MRAIL_ERR_MAX];
	const char *service = NULL, *node = NULL;
	int ret, opt, hex_only = 0;
	size_t i;

	while ((opt = getopt(argc, argv, "n:s:xh")) != -1) {
		if (opt == 'x') {
			hex_only = 1;
			continue;
		}
		if (opt == 's') {
			service = optarg;
			continue;
		}
		if (opt == 'n') {
			node = optarg;
			continue;
		}
		fprintf(stderr, "usage: %s [-n NODE] [-s SERVICE] [-x]\n  shows "
			"mrail's rails on this host; -n and -s bind them to the "
			"local NODE (a rail's address or interface) and SERVICE "
			"(fi_getinfo with FI_SOURCE), -x prints only the address "
			"in hex\n", argv[0]);
		return opt == 'h' ? 0 : 2;
	}

	hints = fi_allocinfo();
	if (!hints)
		return 1;
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), node, service,
			 node || service ? FI_SOURCE : 0, hints, &info);
	fi_freeinfo(hints);
	if (ret) {
		fprintf(stderr, "fi_mrail_info: mrail offers no endpoint: %s (%d); "
			"FI_LOG_LEVEL=warn shows why\n", fi_strerror(-ret), ret);
		return 1;
	}

	if (hex_only) {
		for (i = 0; i < info->src_addrlen; i++)
			printf("%02x", ((const uint8_t *) info->src_addr)[i]);
		printf("\n");
		fi_freeinfo(info);
		return 0;
	}

	ret = mrail_addr_decode(info->src_addr, info->src_addrlen, &addr, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "fi_mrail_info: mrail's address does not decode: %s\n", err);
		fi_freeinfo(info);
		return 1;
	}
	printf("mrail: %u rails, domain %s, fabric %s, address %zu bytes "
	       "(version %d)\n", addr.rail_count, info->domain_attr->name,
	       info->fabric_attr->name, info->src_addrlen, MRAIL_ADDR_VERSION);
	for (i = 0; i < addr.rail_count; i++) {
		printf("  rail %zu: %-12s ", i, addr.rails[i].stack);
		print_port(info->domain_attr->name, i);
		printf("  ");
		print_rail_address(&addr.rails[i]);
		printf("  ");
		print_rail_encoding(&addr.rails[i]);
		printf("\n");
	}
	fi_freeinfo(info);
	return 0;
}
