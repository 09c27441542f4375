/* SPDX-License-Identifier: BSD-2-Clause */
#include "mrail_traffic.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const pattern_names[TRAFFIC_NPATTERNS] = {
	[TRAFFIC_UNIFORM] = "uniform",
	[TRAFFIC_BITREV] = "bitrev",
	[TRAFFIC_BUTTERFLY] = "butterfly",
	[TRAFFIC_COMPLEMENT] = "complement",
	[TRAFFIC_TRANSPOSE] = "transpose",
	[TRAFFIC_SHUFFLE] = "shuffle",
	[TRAFFIC_NEIGHBOUR] = "neighbour",
	[TRAFFIC_HOTSPOT] = "hotspot",
	[TRAFFIC_HOTSPOTS] = "hotspots",
};

int traffic_pattern_parse(const char *name, enum traffic_pattern *p)
{
	int i;

	for (i = 0; i < TRAFFIC_NPATTERNS; i++) {
		if (!strcmp(name, pattern_names[i])) {
			*p = (enum traffic_pattern) i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *traffic_pattern_name(enum traffic_pattern p)
{
	return (unsigned) p < TRAFFIC_NPATTERNS ? pattern_names[p] : "?";
}

bool traffic_pattern_is_perm(enum traffic_pattern p)
{
	return p != TRAFFIC_UNIFORM && p != TRAFFIC_HOTSPOT && p != TRAFFIC_HOTSPOTS;
}

bool traffic_is_pow2(unsigned n)
{
	return n && !(n & (n - 1));
}

static unsigned log2_of(unsigned n)
{
	unsigned b = 0;

	while ((1u << b) < n)
		b++;
	return b;
}

static unsigned rotate_left(unsigned i, unsigned by, unsigned b)
{
	unsigned mask = (1u << b) - 1;

	if (!b)
		return i;
	by %= b;
	return ((i << by) | (i >> (b - by))) & mask;
}

unsigned traffic_perm(enum traffic_pattern p, unsigned n, unsigned i)
{
	unsigned b = log2_of(n), mask = n - 1, out = 0, k, lo, hi;

	switch (p) {
	case TRAFFIC_BITREV:
		for (k = 0; k < b; k++)
			if (i & (1u << k))
				out |= 1u << (b - 1 - k);
		return out;
	case TRAFFIC_BUTTERFLY:
		if (b < 2)
			return i;
		lo = i & 1;
		hi = (i >> (b - 1)) & 1;
		return (i & ~(1u | (1u << (b - 1)))) | (lo << (b - 1)) | hi;
	case TRAFFIC_COMPLEMENT:
		return ~i & mask;
	case TRAFFIC_TRANSPOSE:
		return rotate_left(i, (b + 1) / 2, b);
	case TRAFFIC_SHUFFLE:
		return rotate_left(i, 1, b);
	case TRAFFIC_NEIGHBOUR:
		return (i + 1) % n;
	default:
		return i;
	}
}

void traffic_rng_seed(struct traffic_rng *r, uint64_t seed)
{
	r->state = seed;
}

uint64_t traffic_rng_next(struct traffic_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double traffic_rng_unit(struct traffic_rng *r)
{
	return (double) (traffic_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

unsigned traffic_rng_below(struct traffic_rng *r, unsigned bound)
{
	return (unsigned) (traffic_rng_unit(r) * bound);
}

double traffic_exp(struct traffic_rng *r, double mean)
{
	/* 1 - u is in (0, 1]: the logarithm is finite. */
	return -mean * log(1.0 - traffic_rng_unit(r));
}

bool traffic_dest_sends(const struct traffic_dest *d)
{
	if (d->n < 2)
		return false;
	if (traffic_pattern_is_perm(d->pattern))
		return traffic_perm(d->pattern, d->n, d->self) != d->self;
	return true;
}

/* Uniform over the n - 1 hosts other than self. */
static unsigned uniform_other(const struct traffic_dest *d, struct traffic_rng *r)
{
	unsigned k = traffic_rng_below(r, d->n - 1);

	return k < d->self ? k : k + 1;
}

unsigned traffic_dest_next(const struct traffic_dest *d, struct traffic_rng *r)
{
	unsigned hot, k;

	switch (d->pattern) {
	case TRAFFIC_UNIFORM:
		return uniform_other(d, r);
	case TRAFFIC_HOTSPOT:
		if (d->self != 0 && traffic_rng_unit(r) < d->hot_fraction)
			return 0;
		return uniform_other(d, r);
	case TRAFFIC_HOTSPOTS:
		hot = d->hot_count < d->n ? d->hot_count : d->n;
		/* The hot hosts other than self: hot - 1 of them if self is one. */
		k = d->self < hot ? hot - 1 : hot;
		if (k && traffic_rng_unit(r) < d->hot_fraction) {
			k = traffic_rng_below(r, k);
			return d->self < hot && k >= d->self ? k + 1 : k;
		}
		return uniform_other(d, r);
	default:
		return traffic_perm(d->pattern, d->n, d->self);
	}
}

size_t traffic_size_max(size_t mean, size_t min_size)
{
	size_t max = mean > TRAFFIC_MAX_MSG / TRAFFIC_MAX_FACTOR ? TRAFFIC_MAX_MSG :
		     mean * TRAFFIC_MAX_FACTOR;

	return max < min_size ? min_size : max;
}

size_t traffic_size_sample(struct traffic_rng *r, double mean, size_t min_size,
			   size_t max_size)
{
	double x = traffic_exp(r, mean);

	if (x <= (double) min_size)
		return min_size;
	if (x >= (double) max_size)
		return max_size;
	return (size_t) x;
}

double traffic_size_mean(double mean, size_t min_size, size_t max_size)
{
	double a = (double) min_size, b = (double) max_size;

	return a + mean * (exp(-a / mean) - exp(-b / mean));
}

double traffic_gap_ns(double mean_bytes, double load_gbps)
{
	/* 1 Gbit/s is one bit per nanosecond. */
	return mean_bytes * 8.0 / load_gbps;
}

double traffic_gbps(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (double) bytes * 8.0 / seconds / 1e9 : 0.0;
}

/* The 8 bytes of word w of message (src, seq), a hash of all three, so a
 * byte from another message or another place of this one is caught. */
static uint64_t pattern_word(uint32_t src, uint64_t seq, uint64_t w)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ULL ^ ((uint64_t) src + 1) * 0xc2b2ae3d27d4eb4fULL;

	x += (w + 1) * 0x165667b19e3779f9ULL;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 32);
}

uint8_t traffic_byte(uint32_t src, uint64_t seq, size_t off)
{
	return (uint8_t) (pattern_word(src, seq, off / 8) >> ((off % 8) * 8));
}

void traffic_fill(uint8_t *buf, uint32_t src, uint64_t seq, size_t from, size_t to)
{
	uint64_t word = 0;
	size_t off;

	for (off = from; off < to; off++) {
		if (off == from || off % 8 == 0)
			word = pattern_word(src, seq, off / 8);
		buf[off] = (uint8_t) (word >> ((off % 8) * 8));
	}
}

size_t traffic_check(const uint8_t *buf, uint32_t src, uint64_t seq, size_t from,
		     size_t to)
{
	uint64_t word = 0;
	size_t off;

	for (off = from; off < to; off++) {
		if (off == from || off % 8 == 0)
			word = pattern_word(src, seq, off / 8);
		if (buf[off] != (uint8_t) (word >> ((off % 8) * 8)))
			return off;
	}
	return to;
}

static unsigned hist_index(uint64_t ns)
{
	unsigned e;

	if (ns < TRAFFIC_HIST_SUB)
		return (unsigned) ns;
	e = 63 - (unsigned) __builtin_clzll(ns);
	/* e >= 5: the 5 bits below the leading one pick the sub-bucket. */
	return (e - 4) * TRAFFIC_HIST_SUB + (unsigned) ((ns >> (e - 5)) & (TRAFFIC_HIST_SUB - 1));
}

static uint64_t hist_low(unsigned idx)
{
	unsigned e, sub;

	if (idx < TRAFFIC_HIST_SUB)
		return idx;
	e = idx / TRAFFIC_HIST_SUB + 4;
	sub = idx % TRAFFIC_HIST_SUB;
	return (uint64_t) (TRAFFIC_HIST_SUB + sub) << (e - 5);
}

void traffic_hist_add(struct traffic_hist *h, uint64_t ns)
{
	h->bucket[hist_index(ns)]++;
	h->count++;
	h->sum_ns += (double) ns;
}

double traffic_hist_mean(const struct traffic_hist *h)
{
	return h->count ? h->sum_ns / (double) h->count : 0.0;
}

uint64_t traffic_hist_quantile(const struct traffic_hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned i;

	if (!h->count)
		return 0;
	rank = (uint64_t) ceil(q * (double) h->count);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < TRAFFIC_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return hist_low(i);
	}
	return hist_low(TRAFFIC_HIST_BUCKETS - 1);
}
