/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrail_traffic: the arithmetic of fi_mrail_traffic, with no libfabric
 * call, so that the unit tests check exactly what the tool runs: where a
 * host sends under each pattern, the seeded random streams message sizes
 * and gaps are drawn from, what the payload bytes must be, and the latency
 * histogram the percentiles come from.
 *
 * Hosts are numbered 0..n-1, n a power of two (2..TRAFFIC_MAX_HOSTS); b is
 * log2(n).
 */
#ifndef MRAIL_TRAFFIC_H
#define MRAIL_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRAFFIC_MAX_HOSTS	64
/* The largest message, whatever the mean. */
#define TRAFFIC_MAX_MSG		(1024 * 1024)
/* The largest message is this many times the mean (or TRAFFIC_MAX_MSG). */
#define TRAFFIC_MAX_FACTOR	8

enum traffic_pattern {
	TRAFFIC_UNIFORM,	/* uniform over the other hosts */
	TRAFFIC_BITREV,		/* the b bits of i reversed */
	TRAFFIC_BUTTERFLY,	/* the most and least significant bits swapped */
	TRAFFIC_COMPLEMENT,	/* every bit of i inverted */
	TRAFFIC_TRANSPOSE,	/* i rotated left by ceil(b / 2) bits */
	TRAFFIC_SHUFFLE,	/* i rotated left by one bit */
	TRAFFIC_NEIGHBOUR,	/* (i + 1) mod n */
	TRAFFIC_HOTSPOT,	/* a fraction to host 0, the rest uniform */
	TRAFFIC_HOTSPOTS,	/* a fraction to hosts 0..k-1, the rest uniform */
	TRAFFIC_NPATTERNS
};

/* 0 and *p, or -EINVAL for a name that is no pattern. */
int traffic_pattern_parse(const char *name, enum traffic_pattern *p);
const char *traffic_pattern_name(enum traffic_pattern p);
/* Whether the pattern is a fixed permutation (one destination per host). */
bool traffic_pattern_is_perm(enum traffic_pattern p);

bool traffic_is_pow2(unsigned n);

/* The image of host i under permutation p over n hosts (n a power of two,
 * p a permutation). A host mapped to itself sends nothing. */
unsigned traffic_perm(enum traffic_pattern p, unsigned n, unsigned i);

/* splitmix64: a seeded stream, the same on every machine. */
struct traffic_rng {
	uint64_t state;
};

void traffic_rng_seed(struct traffic_rng *r, uint64_t seed);
uint64_t traffic_rng_next(struct traffic_rng *r);
/* Uniform in [0, 1), 53 bits. */
double traffic_rng_unit(struct traffic_rng *r);
/* Uniform in 0..bound-1 (bound > 0). */
unsigned traffic_rng_below(struct traffic_rng *r, unsigned bound);
/* Exponentially distributed with the given mean: -mean * ln(1 - u). */
double traffic_exp(struct traffic_rng *r, double mean);

/* Where one host's messages go. */
struct traffic_dest {
	enum traffic_pattern pattern;
	unsigned n;		/* hosts */
	unsigned self;		/* this host */
	double hot_fraction;	/* hotspot, hotspots: the share to hot hosts */
	unsigned hot_count;	/* hotspots: hosts 0..hot_count-1 are hot */
};

/*
 * Whether the host sends at all: false for a permutation that maps it to
 * itself.
 */
bool traffic_dest_sends(const struct traffic_dest *d);
/*
 * The destination of the next message (never self when traffic_dest_sends).
 * hotspot: host 0 with probability hot_fraction, else uniform over the other
 * hosts; host 0 itself sends uniformly. hotspots: with probability
 * hot_fraction uniform over the hot hosts other than self (uniform over all
 * others if there is none), else uniform over the other hosts.
 */
unsigned traffic_dest_next(const struct traffic_dest *d, struct traffic_rng *r);

/* The message size bounds for a mean: [min_size, min(8 * mean, 1 MiB)],
 * never below min_size. */
size_t traffic_size_max(size_t mean, size_t min_size);
/* One size: an exponential draw of the mean, rounded down, clamped to
 * [min_size, max_size]. */
size_t traffic_size_sample(struct traffic_rng *r, double mean, size_t min_size,
			   size_t max_size);
/*
 * The mean of that clamped distribution, E[min(max(X, a), b)] for X
 * exponential of mean m: a + m * (exp(-a / m) - exp(-b / m)) (ignoring the
 * rounding down, under one byte).
 */
double traffic_size_mean(double mean, size_t min_size, size_t max_size);
/* The mean gap in ns between messages of mean_bytes for load_gbps. */
double traffic_gap_ns(double mean_bytes, double load_gbps);
/* bytes over seconds, in Gbit/s (10^9 bits). */
double traffic_gbps(uint64_t bytes, double seconds);

/* Byte off of the message (src, seq), header included. */
uint8_t traffic_byte(uint32_t src, uint64_t seq, size_t off);
/* Fills buf[from, to) with traffic_byte. */
void traffic_fill(uint8_t *buf, uint32_t src, uint64_t seq, size_t from, size_t to);
/* The first offset in [from, to) whose byte is wrong, or to. */
size_t traffic_check(const uint8_t *buf, uint32_t src, uint64_t seq, size_t from,
		     size_t to);

/*
 * Latencies in ns: a log histogram, 32 buckets per power of two, so a
 * quantile is within 1/32 (3.1 %) of a sample's value; the mean is exact.
 */
#define TRAFFIC_HIST_SUB	32
#define TRAFFIC_HIST_BUCKETS	(64 * TRAFFIC_HIST_SUB)

struct traffic_hist {
	uint64_t count;
	double sum_ns;
	uint64_t bucket[TRAFFIC_HIST_BUCKETS];
};

void traffic_hist_add(struct traffic_hist *h, uint64_t ns);
double traffic_hist_mean(const struct traffic_hist *h);
/* The q-quantile (0 < q <= 1): the low end of the bucket holding the
 * ceil(q * count)-th smallest sample; 0 when empty. */
uint64_t traffic_hist_quantile(const struct traffic_hist *h, double q);

#endif /* MRAIL_TRAFFIC_H */
