/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Set lookup benchmark: ns per key for 1k, 100k and 1M elements, per
 * backend and key shape, half the keys hitting. Three ways to look up:
 *   bulk hot:    nftdp_set_lookup_bulk of 64 keys, 4096 distinct keys cycled
 *                (what the structure's cached upper parts cost);
 *   bulk cold:   the same over 2^20 distinct random keys, each used once per
 *                round (every key a new one, as a trace of many flows);
 *   single hot:  nftdp_set_lookup, one key per call, over the hot keys (what
 *                vm/expr_lookup.c does per packet today);
 *   single cold: the same over the cold keys.
 * Not a test; prints one table per mode.
 * Usage: bench_sets [max_elems [kind]]   (default 1000000, all kinds)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/netfilter/nf_tables.h>

#include "nftdp_sets.h"

#define NQ_HOT 4096u
#define NQ_COLD (1u << 20)

enum mode { BULK_HOT, BULK_COLD, SINGLE_HOT, SINGLE_COLD, NMODE };
static const char *mode_name[NMODE] = {
    "bulk of 64, 4096 distinct keys (hot)", "bulk of 64, 2^20 distinct keys (cold)",
    "single lookups, 4096 distinct keys (hot)", "single lookups, 2^20 distinct keys (cold)"};

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static double now_ns(void)
{
	struct timespec ts;

	/* the thread's CPU time: the 2-core dev VM is shared, and time spent
	 * descheduled is not the lookup's (cache pollution by others still is) */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum kind { EXACT4, PREFIX4, PREFIX6, EXACT4P, RANGE4P, NKIND };
static const char *kind_name[NKIND] = {"exact ipv4", "ipv4 prefixes", "ipv6 prefixes",
				       "ipv4 . port", "ipv4 . port ranges"};

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* element i: disjoint by construction (i-th slot of the key space) */
static void elem(enum kind k, uint32_t i, uint32_t n, uint8_t *lo, uint8_t *hi)
{
	uint32_t span = (uint32_t)(0xffffffffull / n);
	uint32_t base = i * span;

	memset(lo, 0, 24);
	memset(hi, 0, 24);
	switch (k) {
	case EXACT4:
		put32(lo, (uint32_t)(i * 2654435761u));
		break;
	case PREFIX4: { /* a /24-ish block inside the slot */
		uint32_t len = span >= 256 ? 256 : span;

		put32(lo, base);
		put32(hi, base + len - 1);
		break;
	}
	case PREFIX6:
		lo[0] = hi[0] = 0x20;
		lo[1] = hi[1] = 0x01;
		put32(lo + 2, base);
		put32(hi + 2, base);
		memset(hi + 6, 0xff, 10); /* a /48 */
		break;
	case EXACT4P:
		put32(lo, (uint32_t)(i * 2654435761u));
		lo[4] = (uint8_t)(i >> 8);
		lo[5] = (uint8_t)i;
		break;
	case RANGE4P: { /* /24 . 1-1024 */
		uint32_t len = span >= 256 ? 256 : span;

		put32(lo, base);
		put32(hi, base + len - 1);
		lo[4] = 0;
		lo[5] = 1;
		hi[4] = 0x04;
		hi[5] = 0;
		break;
	}
	default:
		break;
	}
}

static struct nftdp_set *build(enum kind k, uint32_t n)
{
	struct nftdp_set_desc d = {.key_size = 4, .max_elems = 0, .expected_elems = n};
	struct nftdp_set *s;
	uint8_t lo[24], hi[24];

	switch (k) {
	case EXACT4:
		break;
	case PREFIX4:
		d.flags = NFT_SET_INTERVAL;
		break;
	case PREFIX6:
		d.flags = NFT_SET_INTERVAL;
		d.key_size = 16;
		break;
	case EXACT4P:
		d.flags = NFT_SET_CONCAT;
		d.key_size = 8;
		d.n_fields = 2;
		d.field_size[0] = 4;
		d.field_size[1] = 2;
		break;
	case RANGE4P:
		d.flags = NFT_SET_CONCAT | NFT_SET_INTERVAL;
		d.key_size = 8;
		d.n_fields = 2;
		d.field_size[0] = 4;
		d.field_size[1] = 2;
		break;
	default:
		break;
	}
	if (nftdp_set_create(&d, &s))
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		elem(k, i, n, lo, hi);
		if (nftdp_set_insert(s, lo, (d.flags & NFT_SET_INTERVAL) ? hi : NULL, NULL, 0, 0,
				     true)) {
			fprintf(stderr, "insert %u failed\n", i);
			nftdp_set_destroy(s);
			return NULL;
		}
		if (i % 4096 == 4095) {
			nftdp_set_commit(s);
			nftdp_set_reclaim(s);
		}
	}
	nftdp_set_commit(s);
	nftdp_set_reclaim(s);
	return s;
}

/* an element that fits beside the bench's elements (in slot i's free part) */
static void elem_extra(enum kind k, uint32_t i, uint32_t n, uint8_t *lo, uint8_t *hi)
{
	uint32_t span = (uint32_t)(0xffffffffull / n);

	switch (k) {
	case EXACT4:
	case EXACT4P:
		elem(k, n + i, n, lo, hi); /* i * 2654435761 is distinct for every i */
		break;
	case PREFIX4:
		elem(k, i, n, lo, hi);
		put32(lo, i * span + 300);
		memcpy(hi, lo, 4);
		break;
	case PREFIX6:
		elem(k, i, n, lo, hi);
		put32(lo + 2, i * span + 1);
		memcpy(hi, lo, 16);
		break;
	case RANGE4P:
		elem(k, i, n, lo, hi);
		put32(lo, i * span + 300);
		memcpy(hi, lo, 4);
		break;
	default:
		break;
	}
}

/* us per commit that adds or removes one element (with its reclaim) */
static double bench_commit(struct nftdp_set *s, enum kind k, uint32_t n)
{
	bool ranges = k == PREFIX4 || k == PREFIX6 || k == RANGE4P;
	uint8_t lo[24], hi[24];
	unsigned ops = 0;
	double t0 = now_ns();

	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t j = (uint32_t)(rnd() % n);

		elem_extra(k, j, n, lo, hi);
		if (nftdp_set_insert(s, lo, ranges ? hi : NULL, NULL, 0, 0, true))
			continue;
		nftdp_set_commit(s);
		nftdp_set_reclaim(s);
		if (nftdp_set_remove(s, lo, ranges ? hi : NULL))
			return -1;
		nftdp_set_commit(s);
		nftdp_set_reclaim(s);
		ops += 2;
	}
	return ops ? (now_ns() - t0) / ops / 1e3 : -1;
}

static uint8_t (*queries)[24];

/* half the queries hit: keys of random elements, or random keys */
static void make_queries(enum kind k, uint32_t n)
{
	for (unsigned i = 0; i < NQ_COLD; i++) {
		uint8_t hi[24];

		elem(k, (uint32_t)(rnd() % n), n, queries[i], hi);
		if (rnd() & 1) {
			for (unsigned b = 0; b < 24; b++)
				queries[i][b] ^= (uint8_t)rnd();
		} else if (k == RANGE4P) {
			queries[i][5] = 80;
		}
	}
}

static double bench(const struct nftdp_set *s, enum mode m, double *hit_ratio)
{
	unsigned nq = m == BULK_HOT || m == SINGLE_HOT ? NQ_HOT : NQ_COLD;
	const void *kp[64], *data[64];
	uint64_t hits = 0, mask, total = 0;
	double acc = 0;

	for (unsigned rep = 0;; rep++) {
		uint64_t h = 0;
		double t0 = now_ns(), t1;

		if (m == SINGLE_HOT || m == SINGLE_COLD) {
			for (unsigned i = 0; i < nq; i++)
				h += nftdp_set_lookup(s, queries[i], &data[0], 0);
		} else {
			for (unsigned i = 0; i < nq; i += 64) {
				for (unsigned j = 0; j < 64; j++)
					kp[j] = queries[i + j];
				h += nftdp_set_lookup_bulk(s, kp, 64, data, 0, &mask);
			}
		}
		t1 = now_ns();
		if (rep == 0)
			continue; /* warm */
		hits += h;
		total += nq;
		acc += t1 - t0;
		if ((acc > 2e8 && rep >= 2) || rep > 2000) {
			*hit_ratio = (double)hits / total;
			return acc / total;
		}
	}
}

int main(int argc, char **argv)
{
	uint32_t sizes[] = {1000, 100000, 1000000};
	uint32_t maxn = argc > 1 ? (uint32_t)atoi(argv[1]) : 1000000;
	int only = argc > 2 ? atoi(argv[2]) : -1;
	double r[NKIND][NMODE][3], cm[NKIND][3];
	const char *backend[NKIND];

	queries = calloc(NQ_COLD, sizeof(*queries));
	if (!queries)
		return 1;
	for (int k = 0; k < NKIND; k++) {
		backend[k] = "?";
		for (int i = 0; i < 3; i++) {
			cm[k][i] = -1;
			for (int m = 0; m < NMODE; m++)
				r[k][m][i] = -1;
		}
		if (only >= 0 && k != only)
			continue;
		for (int i = 0; i < 3; i++) {
			uint32_t n = sizes[i];
			struct nftdp_set *s;
			double hr;

			if (n > maxn || (k == RANGE4P && n > 100000))
				continue; /* concat_range inserts are O(n): 1M takes too long */
			s = build((enum kind)k, n);
			if (!s)
				continue;
			backend[k] = nftdp_set_backend_name(s);
			make_queries((enum kind)k, n);
			for (int m = 0; m < NMODE; m++) {
				r[k][m][i] = bench(s, (enum mode)m, &hr);
				fprintf(stderr, "%s n=%u %s: hit ratio %.2f\n", kind_name[k], n,
					mode_name[m], hr);
			}
			cm[k][i] = bench_commit(s, (enum kind)k, n);
			nftdp_set_destroy(s);
		}
	}
	for (int m = 0; m < NMODE; m++) {
		printf("# %s\n", mode_name[m]);
		printf("%-20s %-13s %12s %12s %12s\n", "keys", "backend", "1k ns/key",
		       "100k ns/key", "1M ns/key");
		for (int k = 0; k < NKIND; k++) {
			if (only >= 0 && k != only)
				continue;
			printf("%-20s %-13s", kind_name[k], backend[k]);
			for (int i = 0; i < 3; i++)
				if (r[k][m][i] < 0)
					printf(" %12s", "n/a");
				else
					printf(" %12.1f", r[k][m][i]);
			printf("\n");
		}
	}
	printf("# commit of one added or removed element, us (CPU time, with reclaim)\n");
	printf("%-20s %-13s %12s %12s %12s\n", "keys", "backend", "1k us", "100k us", "1M us");
	for (int k = 0; k < NKIND; k++) {
		if (only >= 0 && k != only)
			continue;
		printf("%-20s %-13s", kind_name[k], backend[k]);
		for (int i = 0; i < 3; i++)
			if (cm[k][i] < 0)
				printf(" %12s", "n/a");
			else
				printf(" %12.2f", cm[k][i]);
		printf("\n");
	}
	free(queries);
	return 0;
}
