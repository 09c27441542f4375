/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fi_mrail_av: functional test of mrail's fabric, domain and address vector
 * against a real peer address.
 *
 *   fi_mrail_av -a PEER_HEX [-s SERVICE] [-t table|map] [-v]
 *
 * PEER_HEX is another host's mrail address (fi_mrail_info -s SERVICE -x
 * there); -s binds this host's rails to SERVICE likewise. The
 * test opens fabric, domain and AV over every rail, inserts the peer and
 * checks lookup (byte for byte), straddr, batched inserts, removal, and that
 * malformed or incompatible addresses are refused without being inserted.
 * An endpoint's fi_getname is checked too: its length is fi_getinfo's
 * src_addrlen, it fits FI_NAME_MAX, and a short buffer gets -FI_ETOOSMALL,
 * the truncated address and the size needed.
 * Prints one line per check and exits 0 only if every check passed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_mrail.h>

#include "addr_codec.h"

static int failures, checks, verbose;

static void check(int ok, const char *what, const char *detail)
{
	checks++;
	if (!ok)
		failures++;
	if (!ok || verbose)
		printf("%s: %s%s%s\n", ok ? "ok" : "FAILED", what,
		       detail ? ": " : "", detail ? detail : "");
}

static size_t parse_hex(const char *hex, uint8_t *out, size_t cap)
{
	size_t len = strlen(hex) / 2, i;
	unsigned byte;

	if (strlen(hex) % 2 || len > cap)
		return 0;
	for (i = 0; i < len; i++) {
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return 0;
		out[i] = (uint8_t) byte;
	}
	return len;
}

/* An address of the right shape whose rails do not match ours: one rail
 * more (or fewer, at the limit) than this host has. */
static size_t make_mismatched_addr(const uint8_t *ours, size_t len, uint8_t *out)
{
	struct mrail_addr addr;
	ssize_t written;

	if (mrail_addr_decode(ours, len, &addr, NULL, 0))
		return 0;
	if (addr.rail_count < MRAIL_MAX_RAILS) {
		addr.rails[addr.rail_count] = addr.rails[0];
		addr.rail_count++;
	} else {
		addr.rail_count--;
	}
	written = mrail_addr_encode(&addr, out, MRAIL_ADDR_MAX_LEN);
	return written < 0 ? 0 : (size_t) written;
}

static void test_insert_lookup(struct fid_av *av, const uint8_t *peer, size_t peer_len,
			       const uint8_t *self, size_t self_len)
{
	uint8_t packed[2 * MRAIL_ADDR_MAX_LEN], back[MRAIL_ADDR_MAX_LEN];
	fi_addr_t fi_addr = FI_ADDR_NOTAVAIL, pair[2];
	char text[1024], detail[1200];
	size_t len = sizeof(back), text_len = sizeof(text);
	int ret;

	ret = fi_av_insert(av, peer, 1, &fi_addr, 0, NULL);
	snprintf(detail, sizeof(detail), "returned %d, fi_addr %lu", ret,
		 (unsigned long) fi_addr);
	check(ret == 1 && fi_addr != FI_ADDR_NOTAVAIL, "insert the peer", detail);

	ret = fi_av_lookup(av, fi_addr, back, &len);
	check(ret == 0 && len == peer_len && !memcmp(back, peer, peer_len),
	      "lookup returns the peer's address byte for byte", NULL);

	len = 4;
	ret = fi_av_lookup(av, fi_addr, back, &len);
	check(ret == 0 && len == peer_len, "lookup with a short buffer reports the size", NULL);

	fi_av_straddr(av, peer, text, &text_len);
	snprintf(detail, sizeof(detail), "%s", text);
	check(!strncmp(text, "fi_addr_mrail://", 16) && text_len == strlen(text) + 1,
	      "straddr", detail);

	memcpy(packed, self, self_len);
	memcpy(packed + self_len, peer, peer_len);
	pair[0] = pair[1] = FI_ADDR_NOTAVAIL;
	ret = fi_av_insert(av, packed, 2, pair, 0, NULL);
	check(ret == 2 && pair[0] != FI_ADDR_NOTAVAIL && pair[1] != FI_ADDR_NOTAVAIL &&
	      pair[0] != pair[1] && pair[0] != fi_addr,
	      "two packed addresses in one insert", NULL);
	len = sizeof(back);
	ret = fi_av_lookup(av, pair[0], back, &len);
	check(ret == 0 && len == self_len && !memcmp(back, self, self_len),
	      "the first of a batch looks up to itself", NULL);

	ret = fi_av_remove(av, &fi_addr, 1, 0);
	check(ret == 0, "remove the peer", NULL);
	len = sizeof(back);
	check(fi_av_lookup(av, fi_addr, back, &len) == -FI_EINVAL,
	      "a removed peer no longer looks up", NULL);
	check(fi_av_remove(av, &fi_addr, 1, 0) == -FI_EINVAL,
	      "removing it twice is an error", NULL);
	ret = fi_av_insert(av, peer, 1, &fi_addr, 0, NULL);
	check(ret == 1, "re-insert after remove", NULL);
}

static void test_refusals(struct fid_av *av, const uint8_t *peer, size_t peer_len)
{
	uint8_t bad[MRAIL_ADDR_MAX_LEN * 2];
	fi_addr_t addrs[2];
	int errors[2], ret;
	size_t len;

	memcpy(bad, peer, peer_len);
	bad[0] = 'x';
	addrs[0] = 0;
	ret = fi_av_insert(av, bad, 1, addrs, FI_SYNC_ERR, errors);
	check(ret == 0 && addrs[0] == FI_ADDR_NOTAVAIL && errors[0] == -FI_EINVAL,
	      "refuses bytes that are not an mrail address", NULL);

	len = make_mismatched_addr(peer, peer_len, bad);
	check(len > 0, "build an address with another rail count", NULL);
	ret = fi_av_insert(av, bad, 1, addrs, FI_SYNC_ERR, errors);
	check(ret == 0 && addrs[0] == FI_ADDR_NOTAVAIL && errors[0] == -FI_EINVAL,
	      "refuses a peer whose rails do not match", NULL);

	/* A bad first address poisons the batch: its length is unknown. */
	memcpy(bad, peer, peer_len);
	bad[3] = 99;	/* version */
	memcpy(bad + peer_len, peer, peer_len);
	ret = fi_av_insert(av, bad, 2, addrs, FI_SYNC_ERR, errors);
	check(ret == 0 && errors[0] == -FI_EINVAL && errors[1] == -FI_EINVAL &&
	      addrs[1] == FI_ADDR_NOTAVAIL,
	      "a malformed address fails the rest of its batch", NULL);

	check(fi_av_insert(av, peer, 1, addrs, 1ULL << 40, NULL) == -FI_EBADFLAGS,
	      "refuses unknown insert flags", NULL);
}

/* fi_getname as fi_cm(3) has it, and as MPI libraries use it: into a
 * FI_NAME_MAX buffer, with the length fi_getinfo promised. */
static void test_getname(struct fid_domain *domain, struct fid_av *av,
			 struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	uint8_t name[MRAIL_ADDR_MAX_LEN + 1], again[MRAIL_ADDR_MAX_LEN + 1];
	struct mrail_addr decoded, offered;
	struct fid_cq *cq = NULL;
	struct fid_ep *ep = NULL;
	char detail[MRAIL_ERR_MAX + 64];
	size_t len, full, i;
	int ret;

	if ((ret = fi_cq_open(domain, &cq_attr, &cq, NULL)) ||
	    (ret = fi_endpoint(domain, info, &ep, NULL)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(ep))) {
		check(0, "open an endpoint for fi_getname", fi_strerror(-ret));
		goto out;
	}

	len = sizeof(name);
	ret = fi_getname(&ep->fid, name, &len);
	snprintf(detail, sizeof(detail), "returned %d, %zu bytes, src_addrlen %zu",
		 ret, len, info->src_addrlen);
	check(ret == 0 && len == info->src_addrlen,
	      "fi_getname's length is fi_getinfo's src_addrlen", detail);
	if (ret)
		goto out;
	full = len;
	check(full <= FI_NAME_MAX, "the endpoint name fits FI_NAME_MAX", detail);
	ret = mrail_addr_decode(name, full, &decoded, detail, sizeof(detail));
	check(ret == 0, "the endpoint name decodes", ret ? detail : NULL);
	ret = mrail_addr_decode(info->src_addr, info->src_addrlen, &offered, NULL, 0);
	check(ret == 0 && decoded.rail_count == offered.rail_count,
	      "it has the offer's rails", NULL);
	for (i = 0; !ret && i < decoded.rail_count; i++)
		check(!strcmp(decoded.rails[i].stack, offered.rails[i].stack) &&
		      decoded.rails[i].format == offered.rails[i].format &&
		      decoded.rails[i].len == offered.rails[i].len,
		      "each rail has the offer's stack and address format", NULL);
	memset(again, 0xee, sizeof(again));
	len = full - 1;
	ret = fi_getname(&ep->fid, again, &len);
	snprintf(detail, sizeof(detail), "returned %d, addrlen %zu", ret, len);
	check(ret == -FI_ETOOSMALL && len == full,
	      "a buffer 1 byte short: -FI_ETOOSMALL and the size needed", detail);
	check(!memcmp(again, name, full - 1) && again[full - 1] == 0xee,
	      "... and the address truncated to the buffer", NULL);
	len = 0;
	ret = fi_getname(&ep->fid, NULL, &len);
	check(ret == -FI_ETOOSMALL && len == full,
	      "no buffer: -FI_ETOOSMALL and the size needed", NULL);
out:
	if (ep)
		check(fi_close(&ep->fid) == 0, "close the endpoint", NULL);
	if (cq)
		fi_close(&cq->fid);
}

int main(int argc, char **argv)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint8_t peer[MRAIL_ADDR_MAX_LEN];
	struct fid_fabric *fabric = NULL;
	struct fid_domain *domain = NULL;
	struct fi_info *hints, *info = NULL;
	struct fid_av *av = NULL;
	const char *service = NULL;
	size_t peer_len = 0;
	int opt, ret;

	while ((opt = getopt(argc, argv, "a:s:t:vh")) != -1) {
		switch (opt) {
		case 's':
			service = optarg;
			break;
		case 'a':
			peer_len = parse_hex(optarg, peer, sizeof(peer));
			break;
		case 't':
			av_attr.type = strcmp(optarg, "map") ? FI_AV_TABLE : FI_AV_MAP;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s -a PEER_HEX [-s SERVICE] "
				"[-t table|map] [-v]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!peer_len) {
		fprintf(stderr, "fi_mrail_av: -a needs a peer address in hex "
			"(fi_mrail_info -x on the peer)\n");
		return 2;
	}

	hints = fi_allocinfo();
	hints->fabric_attr->prov_name = strdup(FI_MRAIL_PROV_NAME);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, service, service ? FI_SOURCE : 0,
			 hints, &info);
	fi_freeinfo(hints);
	check(ret == 0, "fi_getinfo(mrail)", ret ? fi_strerror(-ret) : NULL);
	if (ret)
		goto out;
	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	check(ret == 0, "fi_fabric over every rail", ret ? fi_strerror(-ret) : NULL);
	if (ret)
		goto out;
	ret = fi_domain(fabric, info, &domain, NULL);
	check(ret == 0, "fi_domain over every rail", ret ? fi_strerror(-ret) : NULL);
	if (ret)
		goto out;
	ret = fi_av_open(domain, &av_attr, &av, NULL);
	check(ret == 0, "fi_av_open over every rail", ret ? fi_strerror(-ret) : NULL);
	if (ret)
		goto out;

	test_insert_lookup(av, peer, peer_len, info->src_addr, info->src_addrlen);
	test_refusals(av, peer, peer_len);
	test_getname(domain, av, info);

	check(fi_close(&domain->fid) == -FI_EBUSY,
	      "the domain refuses to close while its AV is open", NULL);
	check(fi_close(&av->fid) == 0, "close the AV", NULL);
	av = NULL;
out:
	if (av)
		fi_close(&av->fid);
	if (domain)
		check(fi_close(&domain->fid) == 0, "close the domain", NULL);
	if (fabric)
		check(fi_close(&fabric->fid) == 0, "close the fabric", NULL);
	fi_freeinfo(info);
	printf("fi_mrail_av: %d of %d checks passed\n", checks - failures, checks);
	return failures ? 1 : 0;
}
