/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail: libfabric multirail provider - public extension header.
 *
 * What an application may need beyond the standard libfabric API to work
 * with mrail endpoints: the provider's name, the format of its endpoint
 * addresses (see fi_mrail(7), "ADDRESSES"), and the fi_control commands that
 * set an endpoint's rail policies and read its per-rail statistics (see
 * fi_mrail(7), "POLICIES").
 */
#ifndef FI_EXT_MRAIL_H
#define FI_EXT_MRAIL_H

#include <stdint.h>

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_MRAIL_PROV_NAME "mrail"

/*
 * fi_info addr_format of mrail endpoint addresses: a self-describing blob
 * carrying every rail's core address ("mra" magic, version, rails). Treat it
 * as opaque bytes; its length comes from fi_getname or fi_info src_addrlen.
 */
#define FI_ADDR_MRAIL FI_MRAIL_ADDR_FORMAT

/*
 * The value: bit 31 marks a provider's own format (libfabric called that bit
 * FI_PROV_SPECIFIC until 1.21 removed the name), 0x6d72 is "mr". The
 * constant is mrail's own, so it means the same with every libfabric
 * release, and addresses stay exchangeable between builds against 1.x and
 * 2.x.
 */
#define FI_MRAIL_ADDR_FORMAT (UINT32_C(1) << 31 | 0x6d72)

/* Most rails one mrail endpoint uses. */
#define FI_MRAIL_MAX_RAILS 8

/*
 * Rail policies, per endpoint (fi_mrail(7), "POLICIES").
 *
 * An application reads and changes an endpoint's policies and reads its
 * per-rail statistics with fi_control(&ep->fid, command, arg), using the
 * commands below. They start from the FI_MRAIL_* environment variables.
 *
 * Why these numbers: libfabric's own fi_control commands (FI_GETFIDFLAG,
 * FI_ENABLE, ..., FI_EXPORT_FID) are a plain enum counting up from 0, and
 * grow by one with each libfabric release. fi_ext.h reserves for each
 * provider a 12-bit code shifted left by 16 bits for its own values
 * (FI_PROV_SPECIFIC_EFA is 0xefa << 16); mrail's code is 0x3a1, so its
 * commands are 0x03a10000 and up: far above any libfabric command, apart from
 * the other providers' ranges, and positive like libfabric's (negative values
 * are provider options of fi_setopt, per fi_ext.h).
 */
#define FI_PROV_SPECIFIC_MRAIL (0x3a1 << 16)

enum {
	/* arg: struct fi_mrail_policy_attr *, filled in. */
	FI_MRAIL_GET_POLICY = FI_PROV_SPECIFIC_MRAIL + 1,
	/* arg: const struct fi_mrail_policy_attr *. Applies to operations
	 * posted after the call; transfers already striped keep their split.
	 * -FI_EINVAL (and a warning naming the field) when a field is out of
	 * range; the endpoint's policy is then unchanged. */
	FI_MRAIL_SET_POLICY,
	/* arg: struct fi_mrail_stats *, filled in. */
	FI_MRAIL_GET_STATS,
	/* arg: NULL. Zeroes the counters of FI_MRAIL_GET_STATS (not the
	 * in-flight counts, nor the adaptive weights). */
	FI_MRAIL_RESET_STATS,
	/* arg: struct fi_mrail_peer_rails *, its size and peer set by the
	 * caller: the health of each rail towards that peer. -FI_EINVAL
	 * when the size is short or the peer is not in the AV. */
	FI_MRAIL_GET_PEER_RAILS,
};

/* Multiplexing: which rail a message sent whole takes (FI_MRAIL_POLICY). */
enum fi_mrail_mux_policy {
	FI_MRAIL_MUX_RR = 0,		/* "rr": rails in turn */
	FI_MRAIL_MUX_WEIGHTED = 1,	/* "weighted": in proportion to weights */
	FI_MRAIL_MUX_WINDOW = 2,	/* "window": window messages per rail */
	FI_MRAIL_MUX_LOCAL_DYNAMIC = 3,	/* "local_dynamic": idle rails only */
};

/* Striping: how a large transfer is split over rails (FI_MRAIL_STRIPE_POLICY). */
enum fi_mrail_stripe_policy {
	FI_MRAIL_STRIPE_EVEN = 0,	/* "even": equal shares */
	FI_MRAIL_STRIPE_WEIGHTED = 1,	/* "weighted": shares by weights */
	FI_MRAIL_STRIPE_ADAPTIVE = 2,	/* "adaptive": shares by measured rates */
	FI_MRAIL_STRIPE_LOCAL_DYNAMIC = 3,	/* "local_dynamic": idle rails only */
	FI_MRAIL_STRIPE_DYNAMIC = 4,	/* "dynamic": rails reserved at both ends */
	FI_MRAIL_STRIPE_HYBRID = 5,	/* "hybrid": whole when short, else dynamic */
};

/*
 * An endpoint's policies and their parameters. For FI_MRAIL_SET_POLICY,
 * fill in every field (start from FI_MRAIL_GET_POLICY's answer and change
 * what you need). size is sizeof(struct fi_mrail_policy_attr) as the
 * application was compiled: fields may be added at the end in later
 * versions, and mrail reads and writes only the first size bytes.
 */
struct fi_mrail_policy_attr {
	uint32_t size;
	uint32_t mux_policy;		/* enum fi_mrail_mux_policy */
	uint32_t stripe_policy;		/* enum fi_mrail_stripe_policy */
	uint32_t rail_count;		/* GET: rails of the endpoint; SET: ignored */
	/* weighted policies: one per rail, 0..2^20, not all 0; a rail of
	 * weight 0 carries no data. FI_MRAIL_WEIGHTS. */
	uint32_t weights[FI_MRAIL_MAX_RAILS];
	uint32_t window;		/* window: messages per rail, >= 1. FI_MRAIL_WINDOW */
	uint32_t reserved;		/* 0 */
	double adaptive_alpha;		/* adaptive: history kept, [0, 1). FI_MRAIL_ADAPTIVE_ALPHA */
	double stripe_ratio;		/* *dynamic: share of the free rails used, [0, 1]. FI_MRAIL_STRIPE_RATIO */
	uint64_t min_stripe;		/* bytes, >= 1: no smaller stripe. FI_MRAIL_MIN_STRIPE */
	uint64_t hybrid_threshold;	/* hybrid: longest transfer sent whole. FI_MRAIL_HYBRID_THRESHOLD */
};

/* What one rail of an endpoint did since it was opened (or since
 * FI_MRAIL_RESET_STATS). Counts are of rail operations (stripes, eager
 * messages, control messages), not of user operations. */
struct fi_mrail_rail_stats {
	uint64_t tx_bytes;		/* payload bytes sent or written/read by this side */
	uint64_t rx_bytes;		/* payload bytes received */
	uint64_t tx_ops;		/* operations posted on the rail */
	uint64_t rx_ops;		/* messages received on the rail */
	uint64_t in_flight;		/* posted and not yet completed, now */
	uint64_t errors;		/* error completions and failed posts */
	/* Share of a striped transfer this rail is given now, 0..1 (the
	 * weights normalised; adaptive: the current learned share). */
	double weight;
	uint32_t state;			/* dynamic/hybrid: enum fi_mrail_rail_state */
	uint32_t reserved;		/* 0 */
};

/* A rail's reservation state under the dynamic policies (Coll et al. 2001, Algorithm 3). */
enum fi_mrail_rail_state {
	FI_MRAIL_RAIL_FREE = 0,
	FI_MRAIL_RAIL_RESERVED = 1,	/* our request to send is outstanding */
	FI_MRAIL_RAIL_SENDING = 2,
	FI_MRAIL_RAIL_RECEIVING = 3,
};

/* A rail's health towards one peer (fi_mrail(7), "RAIL FAILURE"). */
enum fi_mrail_rail_health {
	FI_MRAIL_RAIL_UP = 0,
	FI_MRAIL_RAIL_FAILED = 1,	/* left out of every choice for the peer */
	FI_MRAIL_RAIL_PROBING = 2,	/* failed, a probe out on it */
};

/* Why a rail failed for a peer, last time it did. */
enum fi_mrail_rail_failure {
	FI_MRAIL_FAILURE_NONE = 0,
	FI_MRAIL_FAILURE_ERROR = 1,	/* the rail reported an error */
	FI_MRAIL_FAILURE_STALLED = 2,	/* nothing back while another rail worked */
};

struct fi_mrail_peer_rail {
	uint32_t health;		/* enum fi_mrail_rail_health */
	uint32_t failure;		/* enum fi_mrail_rail_failure */
	uint64_t failures;		/* times it failed for the peer */
	uint64_t recoveries;		/* times a probe brought it back */
	uint64_t in_flight;		/* operations to the peer not answered */
	uint64_t reissued_ops;		/* sent again on another rail when it failed */
	uint64_t reissued_bytes;	/* their bytes */
};

struct fi_mrail_peer_rails {
	uint32_t size;			/* sizeof(struct fi_mrail_peer_rails), set by the caller */
	uint32_t rail_count;		/* rails filled in below */
	uint64_t peer;			/* fi_addr_t of the peer, set by the caller */
	/* Second copies of the peer's messages dropped: it sent them again
	 * when a rail failed, and the first copy arrived after all. */
	uint64_t duplicates;
	struct fi_mrail_peer_rail rail[FI_MRAIL_MAX_RAILS];
};

struct fi_mrail_stats {
	uint32_t size;			/* sizeof(struct fi_mrail_stats), set by the caller */
	uint32_t rail_count;		/* rails filled in below */
	struct fi_mrail_rail_stats rail[FI_MRAIL_MAX_RAILS];
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_MRAIL_H */
