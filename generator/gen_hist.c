/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency histogram of the sink: log-linear buckets (the HdrHistogram idea
 * at 5 bits of precision). Values below 64 ns get a bucket each; above, a
 * power of two [2^k, 2^(k+1)) is split into 32 buckets.
 */
#include <string.h>

#include "nftdp_gen.h"

static unsigned int bucket_of(uint64_t v)
{
	unsigned int shift;

	if (v < 64)
		return (unsigned int)v;
	shift = (unsigned int)(63 - __builtin_clzll(v)) - 5;
	/* v >> shift is in [32, 64): the buckets of one shift follow the last */
	return shift * 32 + (unsigned int)(v >> shift);
}

/* [lo, lo + width) of bucket b */
static void bucket_range(unsigned int b, uint64_t *lo, uint64_t *width)
{
	unsigned int shift;

	if (b < 64) {
		*lo = b;
		*width = 1;
		return;
	}
	shift = b / 32 - 1;
	*lo = (uint64_t)(b - shift * 32) << shift;
	*width = (uint64_t)1 << shift;
}

void nftdp_gen_hist_reset(struct nftdp_gen_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void nftdp_gen_hist_add(struct nftdp_gen_hist *h, uint64_t ns)
{
	unsigned int b = bucket_of(ns);

	if (b >= NFTDP_GEN_HIST_BUCKETS)
		b = NFTDP_GEN_HIST_BUCKETS - 1; /* ~2^38 ns and more: one bin */
	h->bucket[b]++;
	h->count++;
	h->sum += ns;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
}

void nftdp_gen_hist_merge(struct nftdp_gen_hist *into, const struct nftdp_gen_hist *from)
{
	for (unsigned int b = 0; b < NFTDP_GEN_HIST_BUCKETS; b++)
		into->bucket[b] += from->bucket[b];
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t nftdp_gen_hist_quantile(const struct nftdp_gen_hist *h, double q)
{
	uint64_t rank, seen = 0, lo, width, v;

	if (h->count == 0)
		return 0;
	/* the smallest value with at least q of the samples at or below it */
	rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank >= h->count)
		return h->max; /* the largest sample is known exactly */
	for (unsigned int b = 0; b < NFTDP_GEN_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen < rank)
			continue;
		bucket_range(b, &lo, &width);
		v = lo + width / 2;
		if (v < h->min)
			v = h->min;
		if (v > h->max)
			v = h->max;
		return v;
	}
	return h->max;
}
