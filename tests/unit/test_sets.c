/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for sets/: every backend's insert/lookup/remove, commit and
 * abort visibility, the kernel's errno for clashes, overlaps and full sets,
 * timeouts, concatenations, maps, and bulk lookups against a brute-force
 * model. No EAL needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "nftdp_sets.h"

static uint64_t fake_now = 1000;
static uint64_t fake_clock(void)
{
	return fake_now;
}

static void ip4(uint8_t *k, unsigned a, unsigned b, unsigned c, unsigned d)
{
	k[0] = (uint8_t)a;
	k[1] = (uint8_t)b;
	k[2] = (uint8_t)c;
	k[3] = (uint8_t)d;
}

static void be16(uint8_t *k, unsigned v)
{
	k[0] = (uint8_t)(v >> 8);
	k[1] = (uint8_t)v;
	k[2] = k[3] = 0; /* register padding */
}

static void be32(uint8_t *k, uint32_t v)
{
	k[0] = (uint8_t)(v >> 24);
	k[1] = (uint8_t)(v >> 16);
	k[2] = (uint8_t)(v >> 8);
	k[3] = (uint8_t)v;
}

static struct nftdp_set *mk(uint32_t flags, uint32_t key_size, uint32_t data_size, uint32_t max)
{
	struct nftdp_set_desc d = {
	    .flags = flags, .key_size = key_size, .data_size = data_size, .max_elems = max};
	struct nftdp_set *s = NULL;

	assert_int_equal(nftdp_set_create(&d, &s), 0);
	return s;
}

static struct nftdp_set *mk_concat(uint32_t flags, const uint8_t *fields, unsigned n,
				   uint32_t data_size)
{
	struct nftdp_set_desc d = {
	    .flags = flags | NFT_SET_CONCAT, .data_size = data_size, .n_fields = (uint8_t)n};
	struct nftdp_set *s = NULL;

	for (unsigned i = 0; i < n; i++) {
		d.field_size[i] = fields[i];
		d.key_size += (fields[i] + 3u) & ~3u;
	}
	assert_int_equal(nftdp_set_create(&d, &s), 0);
	return s;
}

static bool has(const struct nftdp_set *s, const void *key)
{
	bool in = nftdp_set_lookup(s, key, NULL, fake_now);

	/* the VM's plain-set lookup agrees */
	assert_int_equal(nftdp_set_contains_gen(s, key, fake_now, 0), in);
	return in;
}

static void commit(struct nftdp_set *s)
{
	nftdp_set_commit(s);
	nftdp_set_reclaim(s); /* no readers: the grace period is over */
}

/* ---- hash ---- */

static void test_hash_basic(void **state)
{
	struct nftdp_set *s = mk(0, 4, 0, 0);
	uint8_t a[4], b[4];

	(void)state;
	assert_string_equal(nftdp_set_backend_name(s), "hash");
	ip4(a, 10, 0, 0, 1);
	ip4(b, 10, 0, 0, 2);
	assert_int_equal(nftdp_set_insert(s, a, NULL, NULL, 0, 0, false), 0);
	assert_false(has(s, a)); /* invisible until commit */
	commit(s);
	assert_true(has(s, a));
	assert_false(has(s, b));
	assert_int_equal(nftdp_set_remove(s, b, NULL), -ENOENT);
	assert_int_equal(nftdp_set_remove(s, a, NULL), 0);
	assert_true(has(s, a)); /* visible until commit */
	assert_int_equal(nftdp_set_remove(s, a, NULL), -ENOENT);
	commit(s);
	assert_false(has(s, a));
	assert_int_equal(nftdp_set_count(s), 0);

	/* abort drops adds and undoes removes */
	assert_int_equal(nftdp_set_insert(s, a, NULL, NULL, 0, 0, false), 0);
	commit(s);
	assert_int_equal(nftdp_set_insert(s, b, NULL, NULL, 0, 0, false), 0);
	assert_int_equal(nftdp_set_remove(s, a, NULL), 0);
	nftdp_set_abort(s);
	nftdp_set_reclaim(s);
	assert_true(has(s, a));
	assert_false(has(s, b));
	commit(s);
	assert_true(has(s, a));
	assert_false(has(s, b));
	assert_int_equal(nftdp_set_count(s), 1);

	/* delete and re-add in one transaction */
	assert_int_equal(nftdp_set_remove(s, a, NULL), 0);
	assert_int_equal(nftdp_set_insert(s, a, NULL, NULL, 0, 0, true), 0);
	assert_true(has(s, a));
	commit(s);
	assert_true(has(s, a));
	/* add and delete in one transaction */
	assert_int_equal(nftdp_set_insert(s, b, NULL, NULL, 0, 0, true), 0);
	assert_int_equal(nftdp_set_remove(s, b, NULL), 0);
	commit(s);
	assert_false(has(s, b));
	assert_int_equal(nftdp_set_count(s), 1);
	nftdp_set_destroy(s);
}

static void test_hash_exists(void **state)
{
	struct nftdp_set *s = mk(NFT_SET_MAP, 4, 4, 0);
	uint8_t a[4], d1[4] = {1}, d2[4] = {2};
	const void *data;

	(void)state;
	ip4(a, 192, 168, 0, 1);
	assert_int_equal(nftdp_set_insert(s, a, NULL, d1, 0, 0, true), 0);
	/* pending counts for the clash checks, as in the kernel */
	assert_int_equal(nftdp_set_insert(s, a, NULL, d1, 0, 0, true), -EEXIST);
	commit(s);
	assert_int_equal(nftdp_set_insert(s, a, NULL, d1, 0, 0, false), 0);
	assert_int_equal(nftdp_set_insert(s, a, NULL, d1, 0, 0, true), -EEXIST);
	assert_int_equal(nftdp_set_insert(s, a, NULL, d2, 0, 0, false), -EBUSY);
	assert_int_equal(nftdp_set_insert(s, a, NULL, d2, 0, 0, true), -EBUSY);
	commit(s);
	assert_true(nftdp_set_lookup(s, a, &data, fake_now));
	assert_memory_equal(data, d1, 4);
	assert_int_equal(nftdp_set_count(s), 1);
	nftdp_set_destroy(s);
}

static void test_full(void **state)
{
	static const uint32_t flags[] = {0, NFT_SET_INTERVAL};

	(void)state;
	for (unsigned f = 0; f < 2; f++) {
		struct nftdp_set *s = mk(flags[f], 4, 0, 2);
		uint8_t k[3][4];

		for (unsigned i = 0; i < 3; i++)
			ip4(k[i], 1, 1, 1, i * 10);
		assert_int_equal(nftdp_set_insert(s, k[0], NULL, NULL, 0, 0, false), 0);
		assert_int_equal(nftdp_set_insert(s, k[1], NULL, NULL, 0, 0, false), 0);
		assert_int_equal(nftdp_set_insert(s, k[2], NULL, NULL, 0, 0, false), -ENFILE);
		/* identical re-add of a present element is not a new one */
		assert_int_equal(nftdp_set_insert(s, k[1], NULL, NULL, 0, 0, false), 0);
		commit(s);
		assert_false(has(s, k[2]));
		/* a pending delete makes room (nft_set_maxsize: size + ndeact) */
		assert_int_equal(nftdp_set_remove(s, k[0], NULL), 0);
		assert_int_equal(nftdp_set_insert(s, k[2], NULL, NULL, 0, 0, false), 0);
		commit(s);
		assert_true(has(s, k[2]));
		assert_false(has(s, k[0]));
		assert_int_equal(nftdp_set_count(s), 2);
		nftdp_set_destroy(s);
	}
}

static void test_timeouts(void **state)
{
	struct nftdp_set_desc d = {.flags = NFT_SET_TIMEOUT, .key_size = 4, .timeout_ms = 5000};
	struct nftdp_set *s;
	uint8_t a[4], b[4];

	(void)state;
	nftdp_set_clock_override(fake_clock);
	fake_now = 1000;
	assert_int_equal(nftdp_set_create(&d, &s), 0);
	ip4(a, 1, 2, 3, 4);
	ip4(b, 1, 2, 3, 5);
	assert_int_equal(nftdp_set_insert(s, a, NULL, NULL, 100, 0, false), 0);
	assert_int_equal(nftdp_set_insert(s, b, NULL, NULL, 0, 0, false), 0); /* default */
	commit(s);
	assert_true(nftdp_set_lookup(s, a, NULL, 1099));
	assert_false(nftdp_set_lookup(s, a, NULL, 1100));
	assert_true(nftdp_set_lookup(s, b, NULL, 5999));
	assert_false(nftdp_set_lookup(s, b, NULL, 6000));
	/* an expired element no longer clashes */
	fake_now = 2000;
	assert_int_equal(nftdp_set_insert(s, a, NULL, NULL, 100, 0, true), 0);
	commit(s);
	assert_true(nftdp_set_lookup(s, a, NULL, 2050));
	assert_int_equal(nftdp_set_gc(s, 2050), 1); /* the first a */
	nftdp_set_reclaim(s);
	nftdp_set_reclaim(s);
	assert_true(nftdp_set_lookup(s, a, NULL, 2050));
	assert_int_equal(nftdp_set_count(s), 2);
	nftdp_set_destroy(s);

	/* timeout on a set without NFT_SET_TIMEOUT */
	s = mk(0, 4, 0, 0);
	assert_int_equal(nftdp_set_insert(s, a, NULL, NULL, 100, 0, false), -EINVAL);
	nftdp_set_destroy(s);

	/* interval and concat backends expire too */
	s = mk(NFT_SET_INTERVAL | NFT_SET_TIMEOUT, 4, 0, 0);
	ip4(b, 1, 2, 3, 200);
	assert_int_equal(nftdp_set_insert(s, a, b, NULL, 100, 0, false), 0);
	commit(s);
	assert_true(nftdp_set_lookup(s, b, NULL, 2099));
	assert_false(nftdp_set_lookup(s, b, NULL, 2100));
	fake_now = 3000; /* expired range in the way is collected */
	assert_int_equal(nftdp_set_insert(s, a, b, NULL, 0, 0, true), 0);
	commit(s);
	assert_true(nftdp_set_lookup(s, b, NULL, 999999));
	nftdp_set_destroy(s);
	nftdp_set_clock_override(NULL);
}

static void test_concat_exact(void **state)
{
	static const uint8_t f2[] = {4, 2}, f3[] = {16, 2, 4};
	struct nftdp_set *s = mk_concat(0, f2, 2, 0);
	uint8_t k[8], k6[24];

	(void)state;
	assert_string_equal(nftdp_set_backend_name(s), "hash");
	ip4(k, 10, 1, 2, 3);
	be16(k + 4, 22);
	assert_int_equal(nftdp_set_insert(s, k, NULL, NULL, 0, 0, false), 0);
	commit(s);
	assert_true(has(s, k));
	be16(k + 4, 23);
	assert_false(has(s, k));
	nftdp_set_destroy(s);

	s = mk_concat(0, f3, 3, 0);
	memset(k6, 0, sizeof(k6));
	k6[0] = 0x20;
	k6[1] = 0x01;
	k6[15] = 1;
	be16(k6 + 16, 443);
	be32(k6 + 20, 0x42);
	assert_int_equal(nftdp_set_insert(s, k6, NULL, NULL, 0, 0, false), 0);
	commit(s);
	assert_true(has(s, k6));
	k6[23] = 0x43;
	assert_false(has(s, k6));
	nftdp_set_destroy(s);
}

static void test_verdict_map(void **state)
{
	struct nftdp_set *s = mk(NFT_SET_MAP, 4, sizeof(struct nftdp_set_verdict), 0);
	struct nftdp_set_verdict v[3] = {{NF_ACCEPT, 0}, {NF_DROP, 0}, {NFT_JUMP, 7}};
	uint8_t k[4];
	const void *data = NULL;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		ip4(k, 10, 0, 0, i);
		assert_int_equal(nftdp_set_insert(s, k, NULL, &v[i], 0, 0, false), 0);
	}
	commit(s);
	for (unsigned i = 0; i < 3; i++) {
		ip4(k, 10, 0, 0, i);
		assert_true(nftdp_set_lookup(s, k, &data, fake_now));
		assert_memory_equal(data, &v[i], sizeof(v[i]));
	}
	/* map without data */
	assert_int_equal(nftdp_set_insert(s, k, NULL, NULL, 0, 0, false), -EINVAL);
	nftdp_set_destroy(s);
}

/* ---- the catch-all element (nft's `*`) ---- */

/* Every backend: a key no element holds finds the catch-all (its data for
 * a map), visible from the commit that adds it until the one that removes
 * it; it does not count towards the size; one per generation. */
static void test_catchall(void **state)
{
	static const uint32_t flags[] = {NFT_SET_MAP, NFT_SET_MAP | NFT_SET_INTERVAL};
	struct nftdp_set_verdict acc = {NF_ACCEPT, 0}, drop = {NF_DROP, 0};
	uint8_t z[4] = {0}, k[4], o[4], bk[2][4];
	const void *keys[2] = {bk[0], bk[1]}, *data = NULL, *bd[2];
	uint64_t mask = 0;

	(void)state;
	ip4(k, 1, 1, 1, 1);
	ip4(o, 2, 2, 2, 2);
	for (unsigned f = 0; f < 2; f++) {
		struct nftdp_set *s = mk(flags[f], 4, sizeof(acc), 1);

		assert_int_equal(nftdp_set_insert(s, k, NULL, &drop, 0, 0, false), 0);
		assert_int_equal(
		    nftdp_set_insert(s, z, NULL, &acc, 0, NFT_SET_ELEM_CATCHALL, false), 0);
		assert_false(has(s, o)); /* invisible until commit */
		/* the size (1) is not reached by it; a second one clashes */
		assert_int_equal(
		    nftdp_set_insert(s, z, NULL, &drop, 0, NFT_SET_ELEM_CATCHALL, false), -EBUSY);
		assert_int_equal(nftdp_set_insert(s, z, NULL, &acc, 0, NFT_SET_ELEM_CATCHALL, true),
				 -EEXIST);
		commit(s);
		assert_int_equal(nftdp_set_count(s), 1);
		assert_true(nftdp_set_lookup(s, o, &data, fake_now));
		assert_memory_equal(data, &acc, sizeof(acc));
		assert_true(nftdp_set_lookup(s, k, &data, fake_now));
		assert_memory_equal(data, &drop, sizeof(drop));
		memcpy(bk[0], k, 4);
		memcpy(bk[1], o, 4);
		assert_int_equal(nftdp_set_lookup_bulk(s, keys, 2, bd, fake_now, &mask), 2);
		assert_int_equal(mask, 3);
		assert_memory_equal(bd[0], &drop, sizeof(drop));
		assert_memory_equal(bd[1], &acc, sizeof(acc));
		/* the catch-all's (zero) key is no element's: key 0 is a miss */
		assert_true(nftdp_set_lookup(s, z, &data, fake_now));
		assert_memory_equal(data, &acc, sizeof(acc));
		/* removed: seen until the commit, gone after; abort keeps it */
		assert_int_equal(nftdp_set_remove_catchall(s), 0);
		assert_int_equal(nftdp_set_remove_catchall(s), -ENOENT);
		nftdp_set_abort(s);
		assert_true(has(s, o));
		assert_int_equal(nftdp_set_remove_catchall(s), 0);
		assert_true(has(s, o));
		commit(s);
		assert_false(has(s, o));
		assert_true(has(s, k));
		/* added and removed in one batch; then an abort of a new one */
		assert_int_equal(
		    nftdp_set_insert(s, z, NULL, &acc, 0, NFT_SET_ELEM_CATCHALL, false), 0);
		assert_int_equal(nftdp_set_remove_catchall(s), 0);
		commit(s);
		assert_false(has(s, o));
		assert_int_equal(
		    nftdp_set_insert(s, z, NULL, &acc, 0, NFT_SET_ELEM_CATCHALL, false), 0);
		nftdp_set_abort(s);
		nftdp_set_reclaim(s);
		assert_false(has(s, o));
		/* an element at key 0 beside the catch-all keeps its own data */
		assert_int_equal(nftdp_set_remove(s, k, NULL), 0);
		assert_int_equal(nftdp_set_insert(s, z, NULL, &drop, 0, 0, false), 0);
		assert_int_equal(
		    nftdp_set_insert(s, z, NULL, &acc, 0, NFT_SET_ELEM_CATCHALL, false), 0);
		commit(s);
		assert_true(nftdp_set_lookup(s, z, &data, fake_now));
		assert_memory_equal(data, &drop, sizeof(drop));
		assert_true(nftdp_set_lookup(s, o, &data, fake_now));
		assert_memory_equal(data, &acc, sizeof(acc));
		assert_int_equal(nftdp_set_remove(s, z, NULL), 0);
		commit(s);
		assert_true(nftdp_set_lookup(s, z, &data, fake_now));
		assert_memory_equal(data, &acc, sizeof(acc));
		assert_int_equal(nftdp_set_remove_catchall(s), 0);
		commit(s);
		assert_false(has(s, z));
		assert_false(has(s, o));
		/* left in place for destroy to free */
		assert_int_equal(
		    nftdp_set_insert(s, z, NULL, &drop, 0, NFT_SET_ELEM_CATCHALL, false), 0);
		commit(s);
		assert_true(nftdp_set_lookup(s, o, &data, fake_now));
		assert_memory_equal(data, &drop, sizeof(drop));
		nftdp_set_destroy(s);
	}
}

/* The interval backend's read index never holds the catch-all: its
 * (zero) key must not shadow a range that starts at 0. */
static void test_catchall_interval_index(void **state)
{
	struct nftdp_set_verdict acc = {NF_ACCEPT, 0}, drop = {NF_DROP, 0};
	struct nftdp_set *s = mk(NFT_SET_MAP | NFT_SET_INTERVAL, 4, sizeof(acc), 0);
	uint8_t z[4] = {0}, lo[4], hi[4], k[4];
	const void *data = NULL;

	(void)state;
	ip4(lo, 0, 0, 0, 0);
	ip4(hi, 0, 0, 0, 10);
	assert_int_equal(nftdp_set_insert(s, z, NULL, &acc, 0, NFT_SET_ELEM_CATCHALL, false), 0);
	commit(s);
	assert_int_equal(nftdp_set_insert(s, lo, hi, &drop, 0, 0, false), 0);
	commit(s);
	for (unsigned i = 0; i <= 10; i++) {
		ip4(k, 0, 0, 0, i);
		assert_true(nftdp_set_lookup(s, k, &data, fake_now));
		assert_memory_equal(data, &drop, sizeof(drop));
	}
	ip4(k, 0, 0, 0, 11);
	assert_true(nftdp_set_lookup(s, k, &data, fake_now));
	assert_memory_equal(data, &acc, sizeof(acc));
	nftdp_set_destroy(s);
}

/* ---- bitmap ---- */

static void test_bitmap(void **state)
{
	struct nftdp_set *s = mk(0, 2, 0, 0);
	struct nftdp_set *m = mk(NFT_SET_MAP, 1, 4, 0);
	uint8_t p[2], d[4] = {9, 9, 9, 9};
	const void *data;

	(void)state;
	assert_string_equal(nftdp_set_backend_name(s), "bitmap");
	assert_string_equal(nftdp_set_backend_name(m), "bitmap");
	for (unsigned v = 0; v < 65536; v += 1000) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
		assert_int_equal(nftdp_set_insert(s, p, NULL, NULL, 0, 0, true), 0);
	}
	p[0] = 0xff;
	p[1] = 0xff;
	assert_int_equal(nftdp_set_insert(s, p, NULL, NULL, 0, 0, true), 0);
	assert_int_equal(nftdp_set_insert(s, p, NULL, NULL, 0, 0, true), -EEXIST);
	assert_false(has(s, p));
	commit(s);
	assert_true(has(s, p));
	p[1] = 0xfe;
	assert_false(has(s, p));
	p[0] = 0;
	p[1] = 0;
	assert_true(has(s, p));
	assert_int_equal(nftdp_set_remove(s, p, NULL), 0);
	assert_true(has(s, p));
	assert_int_equal(nftdp_set_insert(s, p, NULL, NULL, 0, 0, true), 0); /* re-add */
	nftdp_set_abort(s);
	nftdp_set_reclaim(s);
	assert_true(has(s, p));
	assert_int_equal(nftdp_set_remove(s, p, NULL), 0);
	commit(s);
	assert_false(has(s, p));
	assert_int_equal(nftdp_set_count(s), 66);

	p[0] = 80;
	assert_int_equal(nftdp_set_insert(m, p, NULL, d, 0, 0, false), 0);
	commit(m);
	assert_true(nftdp_set_lookup(m, p, &data, 0));
	assert_memory_equal(data, d, 4);
	nftdp_set_destroy(s);
	nftdp_set_destroy(m);
}

/* ---- interval ---- */

static void prefix4(uint8_t *lo, uint8_t *hi, uint32_t addr, unsigned len)
{
	uint32_t mask = len ? ~0u << (32 - len) : 0;

	be32(lo, addr & mask);
	be32(hi, (addr & mask) | ~mask);
}

static void test_interval_basic(void **state)
{
	struct nftdp_set *s = mk(NFT_SET_INTERVAL, 4, 0, 0);
	uint8_t lo[4], hi[4], k[4];

	(void)state;
	assert_string_equal(nftdp_set_backend_name(s), "interval");
	prefix4(lo, hi, 0x0a000000, 8); /* 10.0.0.0/8 */
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	prefix4(lo, hi, 0xc0a80101, 32); /* 192.168.1.1/32 */
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	ip4(k, 10, 1, 1, 1);
	assert_false(has(s, k));
	commit(s);
	/* boundaries */
	ip4(k, 10, 0, 0, 0);
	assert_true(has(s, k));
	ip4(k, 10, 255, 255, 255);
	assert_true(has(s, k));
	ip4(k, 9, 255, 255, 255);
	assert_false(has(s, k));
	ip4(k, 11, 0, 0, 0);
	assert_false(has(s, k));
	ip4(k, 192, 168, 1, 1);
	assert_true(has(s, k));
	ip4(k, 192, 168, 1, 0);
	assert_false(has(s, k));
	ip4(k, 192, 168, 1, 2);
	assert_false(has(s, k));

	/* overlaps as nft_rbtree: identical is EEXIST (0 without excl) */
	prefix4(lo, hi, 0x0a000000, 8);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), -EEXIST);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), 0);
	prefix4(lo, hi, 0x0a010000, 16); /* inside */
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), -ENOTEMPTY);
	prefix4(lo, hi, 0, 4); /* 0.0.0.0/4 contains 10/8 */
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), -ENOTEMPTY);
	ip4(lo, 9, 0, 0, 0); /* 9.0.0.0-10.0.0.0 partial */
	ip4(hi, 10, 0, 0, 0);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), -ENOTEMPTY);
	ip4(lo, 10, 255, 255, 255);
	ip4(hi, 11, 0, 0, 5);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), -ENOTEMPTY);
	ip4(lo, 11, 0, 0, 0); /* adjacent is fine */
	ip4(hi, 11, 0, 0, 5);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), 0);
	ip4(lo, 12, 0, 0, 0);
	ip4(hi, 11, 0, 0, 0);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), -EINVAL);
	commit(s);
	ip4(k, 11, 0, 0, 5);
	assert_true(has(s, k));

	/* replace 10/8 by 10.0.0.0/7 (10-11.255) in one transaction: delete
	 * 11.0.0.0-11.0.0.5 and 10/8, add the bigger one */
	prefix4(lo, hi, 0x0a000000, 8);
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	ip4(lo, 11, 0, 0, 0);
	ip4(hi, 11, 0, 0, 5);
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	assert_int_equal(nftdp_set_remove(s, lo, hi), -ENOENT);
	prefix4(lo, hi, 0x0a000000, 7);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	ip4(k, 11, 7, 7, 7);
	assert_false(has(s, k)); /* old state still */
	ip4(k, 10, 7, 7, 7);
	assert_true(has(s, k));
	commit(s);
	ip4(k, 11, 7, 7, 7);
	assert_true(has(s, k));
	ip4(k, 11, 255, 255, 255);
	assert_true(has(s, k));
	ip4(k, 12, 0, 0, 0);
	assert_false(has(s, k));
	nftdp_set_destroy(s);
}

static void test_interval_prefixes(void **state)
{
	struct nftdp_set *s = mk(NFT_SET_INTERVAL, 4, 0, 0);
	struct nftdp_set *s6 = mk(NFT_SET_INTERVAL | NFT_SET_MAP, 16, 4, 0);
	uint8_t lo[16], hi[16], k[16], d[4] = {1, 2, 3, 4};
	const void *data;

	(void)state;
	prefix4(lo, hi, 0, 0); /* /0 */
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	commit(s);
	ip4(k, 0, 0, 0, 0);
	assert_true(has(s, k));
	ip4(k, 255, 255, 255, 255);
	assert_true(has(s, k));
	prefix4(lo, hi, 0x01020304, 32);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), -ENOTEMPTY);
	prefix4(lo, hi, 0, 0);
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	commit(s);
	assert_false(has(s, k));
	prefix4(lo, hi, 0xffffffff, 32);
	assert_int_equal(nftdp_set_insert(s, lo, NULL, NULL, 0, 0, true), 0); /* single key */
	commit(s);
	assert_true(has(s, k));
	ip4(k, 255, 255, 255, 254);
	assert_false(has(s, k));

	/* IPv6 /128 and /0, map */
	memset(lo, 0, 16);
	memset(hi, 0xff, 16);
	assert_int_equal(nftdp_set_insert(s6, lo, hi, d, 0, 0, true), 0);
	commit(s6);
	memset(k, 0xab, 16);
	assert_true(nftdp_set_lookup(s6, k, &data, 0));
	assert_memory_equal(data, d, 4);
	assert_int_equal(nftdp_set_remove(s6, lo, hi), 0);
	commit(s6);
	assert_false(has(s6, k));
	memset(lo, 0, 16);
	lo[0] = 0x20;
	lo[15] = 0x01;
	assert_int_equal(nftdp_set_insert(s6, lo, lo, d, 0, 0, true), 0);
	commit(s6);
	assert_true(has(s6, lo));
	lo[15] = 0x02;
	assert_false(has(s6, lo));
	lo[15] = 0x00;
	assert_false(has(s6, lo));
	nftdp_set_destroy(s);
	nftdp_set_destroy(s6);
}

/* key i of the index test: ks bytes, big-endian, with the top bytes shared
 * by every key for 16-byte keys (ties on the index's top 64 bits) */
static void idx_key(uint8_t *k, unsigned ks, uint64_t v)
{
	memset(k, ks == 16 ? 0x20 : 0, ks);
	for (unsigned b = 0; b < 8 && b < ks; b++)
		k[ks - 1 - b] = (uint8_t)(v >> (8 * b));
}

/* The B+-tree read index over thousands of ranges: ascending and
 * descending inserts (node splits at both ends), boundaries of every range,
 * the all-ones key, deletes that empty nodes, commit/abort visibility. */
static void interval_index_run(unsigned ks, bool descending)
{
	enum { N = 3000 };
	struct nftdp_set *s = mk(NFT_SET_INTERVAL, ks, 0, 0);
	uint8_t lo[16], hi[16], k[16];

	for (unsigned j = 0; j < N; j++) {
		unsigned i = descending ? N - 1 - j : j;

		idx_key(lo, ks, 10 * (uint64_t)i + 1); /* [10i+1, 10i+5] */
		idx_key(hi, ks, 10 * (uint64_t)i + 5);
		assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
		if (j % 700 == 699)
			commit(s);
	}
	memset(lo, 0xff, ks); /* the last key of the space */
	memcpy(hi, lo, ks);
	lo[ks - 1] = 0xfe;
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	commit(s);
	assert_true(has(s, hi));
	assert_true(has(s, lo));
	lo[ks - 1] = 0xfd;
	assert_false(has(s, lo));
	for (unsigned i = 0; i < N; i++) {
		static const unsigned off[] = {0, 1, 3, 5, 6};
		static const bool in[] = {false, true, true, true, false};

		for (unsigned o = 0; o < 5; o++) {
			idx_key(k, ks, 10 * (uint64_t)i + off[o]);
			assert_int_equal(has(s, k), in[o]);
		}
	}
	/* remove every range but one in 16: pending, then committed */
	for (unsigned i = 0; i < N; i++) {
		if (i % 16 == 5)
			continue;
		idx_key(lo, ks, 10 * (uint64_t)i + 1);
		idx_key(hi, ks, 10 * (uint64_t)i + 5);
		assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	}
	idx_key(k, ks, 10 * 7 + 3);
	assert_true(has(s, k)); /* not committed yet */
	commit(s);
	for (unsigned i = 0; i < N; i++) {
		idx_key(k, ks, 10 * (uint64_t)i + 3);
		assert_int_equal(has(s, k), i % 16 == 5);
	}
	/* abort leaves the committed state alone */
	idx_key(lo, ks, 10 * 7 + 1);
	idx_key(hi, ks, 10 * 7 + 5);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	idx_key(k, ks, 10 * 5 + 3);
	idx_key(lo, ks, 10 * 5 + 1);
	idx_key(hi, ks, 10 * 5 + 5);
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	nftdp_set_abort(s);
	nftdp_set_reclaim(s);
	assert_true(has(s, k));
	idx_key(k, ks, 10 * 7 + 3);
	assert_false(has(s, k));
	nftdp_set_destroy(s);
}

/* Ranges that cover whole radix slots next to ones that split a slot's tree
 * into a deeper node (more than 64 ranges under one key byte). */
static void test_interval_radix(void **state)
{
	struct nftdp_set *s = mk(NFT_SET_INTERVAL, 4, 0, 0);
	uint8_t lo[4], hi[4], k[4];

	(void)state;
	/* 10.1.0.0-10.3.255.255 and 11.0.0.5-12.3.4.5 first, then 300 small
	 * ranges in 10.0.0.0/16: 10 and 10.0 become deeper nodes */
	ip4(lo, 10, 1, 0, 0);
	ip4(hi, 10, 3, 255, 255);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	ip4(lo, 11, 0, 0, 5);
	ip4(hi, 12, 3, 4, 5);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	commit(s);
	for (unsigned i = 0; i < 300; i++) {
		be32(lo, 0x0a000000u + i * 200);
		be32(hi, 0x0a000000u + i * 200 + 99);
		assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	}
	commit(s);
	for (unsigned i = 0; i < 300; i++) {
		be32(k, 0x0a000000u + i * 200);
		assert_true(has(s, k));
		be32(k, 0x0a000000u + i * 200 + 99);
		assert_true(has(s, k));
		be32(k, 0x0a000000u + i * 200 + 100);
		assert_false(has(s, k));
	}
	ip4(k, 10, 0, 255, 255);
	assert_false(has(s, k));
	ip4(k, 10, 1, 0, 0);
	assert_true(has(s, k));
	ip4(k, 10, 3, 255, 255);
	assert_true(has(s, k));
	ip4(k, 10, 4, 0, 0);
	assert_false(has(s, k));
	ip4(k, 11, 0, 0, 4);
	assert_false(has(s, k));
	ip4(k, 11, 0, 0, 5);
	assert_true(has(s, k));
	ip4(k, 11, 200, 1, 1);
	assert_true(has(s, k));
	ip4(k, 12, 3, 4, 5);
	assert_true(has(s, k));
	ip4(k, 12, 3, 4, 6);
	assert_false(has(s, k));
	/* a range across the deeper nodes' edge: the first /16 above them */
	ip4(lo, 10, 0, 250, 0);
	ip4(hi, 10, 0, 255, 255);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	commit(s);
	ip4(k, 10, 0, 255, 255);
	assert_true(has(s, k));
	/* empty it all again, then /0 */
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	ip4(lo, 10, 1, 0, 0);
	ip4(hi, 10, 3, 255, 255);
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	ip4(lo, 11, 0, 0, 5);
	ip4(hi, 12, 3, 4, 5);
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	for (unsigned i = 0; i < 300; i++) {
		be32(lo, 0x0a000000u + i * 200);
		be32(hi, 0x0a000000u + i * 200 + 99);
		assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	}
	commit(s);
	for (unsigned i = 0; i < 300; i++) {
		be32(k, 0x0a000000u + i * 200 + 50);
		assert_false(has(s, k));
	}
	ip4(k, 11, 200, 1, 1);
	assert_false(has(s, k));
	assert_int_equal(nftdp_set_count(s), 0);
	memset(lo, 0, 4);
	memset(hi, 0xff, 4);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	commit(s);
	ip4(k, 10, 0, 0, 50);
	assert_true(has(s, k));
	memset(k, 0xff, 4);
	assert_true(has(s, k));
	nftdp_set_destroy(s);
}

static void test_interval_index(void **state)
{
	(void)state;
	interval_index_run(2, false);
	interval_index_run(4, false);
	interval_index_run(4, true);
	interval_index_run(8, false);
	interval_index_run(16, false);
	interval_index_run(16, true);
}

/* ---- concatenated ranges ---- */

static void test_concat_range(void **state)
{
	static const uint8_t f2[] = {4, 2}, f3[] = {16, 2, 4};
	struct nftdp_set *s = mk_concat(NFT_SET_INTERVAL, f2, 2, 0);
	uint8_t lo[24], hi[24], k[24];

	(void)state;
	assert_string_equal(nftdp_set_backend_name(s), "concat_range");
	/* 10.0.0.0/8 . 1-1024 */
	ip4(lo, 10, 0, 0, 0);
	ip4(hi, 10, 255, 255, 255);
	be16(lo + 4, 1);
	be16(hi + 4, 1024);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	ip4(k, 10, 9, 9, 9);
	be16(k + 4, 80);
	assert_false(has(s, k));
	commit(s);
	assert_true(has(s, k));
	be16(k + 4, 1);
	assert_true(has(s, k));
	be16(k + 4, 1024);
	assert_true(has(s, k));
	be16(k + 4, 0);
	assert_false(has(s, k));
	be16(k + 4, 1025);
	assert_false(has(s, k));
	ip4(k, 11, 0, 0, 0);
	be16(k + 4, 80);
	assert_false(has(s, k));
	ip4(k, 9, 255, 255, 255);
	assert_false(has(s, k));

	/* pipapo overlaps: identical EEXIST, start inside ENOTEMPTY, end inside
	 * ENOTEMPTY, disjoint in one field fine */
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), -EEXIST);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), 0);
	be16(hi + 4, 80);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), -ENOTEMPTY);
	ip4(lo, 9, 0, 0, 0);
	be16(lo + 4, 0);
	ip4(hi, 10, 0, 0, 0);
	be16(hi + 4, 1);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, false), -ENOTEMPTY);
	ip4(lo, 10, 0, 0, 0);
	ip4(hi, 10, 255, 255, 255);
	be16(lo + 4, 1025);
	be16(hi + 4, 2048);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	be16(lo + 4, 3000);
	be16(hi + 4, 2000);
	assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), -EINVAL);
	commit(s);
	ip4(k, 10, 0, 0, 1);
	be16(k + 4, 2048);
	assert_true(has(s, k));
	/* remove needs the exact element */
	ip4(lo, 10, 0, 0, 0);
	be16(lo + 4, 1025);
	be16(hi + 4, 2047);
	assert_int_equal(nftdp_set_remove(s, lo, hi), -ENOENT);
	be16(hi + 4, 2048);
	assert_int_equal(nftdp_set_remove(s, lo, hi), 0);
	assert_true(has(s, k));
	commit(s);
	assert_false(has(s, k));
	assert_int_equal(nftdp_set_count(s), 1);
	nftdp_set_destroy(s);

	/* ip6 . port . mark with a single point and a range */
	s = mk_concat(NFT_SET_INTERVAL | NFT_SET_MAP, f3, 3, 4);
	memset(lo, 0, 24);
	memset(hi, 0, 24);
	lo[0] = hi[0] = 0x20;
	lo[1] = hi[1] = 0x01;
	memset(hi + 2, 0xff, 14); /* 2001::/16 */
	be16(lo + 16, 443);
	be16(hi + 16, 443);
	be32(lo + 20, 1);
	be32(hi + 20, 10);
	{
		uint8_t d[4] = {7, 7, 7, 7};
		const void *data;

		assert_int_equal(nftdp_set_insert(s, lo, hi, d, 0, 0, true), 0);
		commit(s);
		memcpy(k, lo, 24);
		k[9] = 0x55;
		be32(k + 20, 10);
		assert_true(nftdp_set_lookup(s, k, &data, 0));
		assert_memory_equal(data, d, 4);
		be32(k + 20, 11);
		assert_false(has(s, k));
		be32(k + 20, 5);
		be16(k + 16, 444);
		assert_false(has(s, k));
	}
	nftdp_set_destroy(s);
}

/* ---- walk ---- */

static int count_cb(const void *key, const void *key_end, const void *data, uint64_t expires,
		    uint64_t timeout, uint32_t flags, void *arg)
{
	(void)key, (void)key_end, (void)data, (void)expires, (void)timeout, (void)flags;
	(*(unsigned *)arg)++;
	return 0;
}

static void test_walk(void **state)
{
	struct nftdp_set *s = mk(NFT_SET_INTERVAL, 4, 0, 0);
	uint8_t lo[4], hi[4];
	unsigned n = 0;

	(void)state;
	for (unsigned i = 0; i < 100; i++) {
		ip4(lo, 10, i, 0, 0);
		ip4(hi, 10, i, 0, 255);
		assert_int_equal(nftdp_set_insert(s, lo, hi, NULL, 0, 0, true), 0);
	}
	nftdp_set_walk(s, count_cb, &n);
	assert_int_equal(n, 0); /* dumps show the committed state */
	commit(s);
	nftdp_set_walk(s, count_cb, &n);
	assert_int_equal(n, 100);
	nftdp_set_destroy(s);
}

/* ---- random model check: bulk == single == brute force ---- */

struct model_elem {
	uint8_t lo[24], hi[24];
	uint32_t data;
	bool live;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static bool model_contains(const struct model_elem *m, const uint8_t *k, const uint8_t *fs,
			   const uint8_t *fo, unsigned nf)
{
	for (unsigned f = 0; f < nf; f++)
		if (memcmp(m->lo + fo[f], k + fo[f], fs[f]) > 0 ||
		    memcmp(k + fo[f], m->hi + fo[f], fs[f]) > 0)
			return false;
	return true;
}

/* fill a random key with small value spaces so that hits are common */
static void rand_key(uint8_t *k, unsigned ks, const uint8_t *fs, const uint8_t *fo, unsigned nf)
{
	memset(k, 0, ks);
	for (unsigned f = 0; f < nf; f++)
		for (unsigned b = 0; b < fs[f]; b++)
			k[fo[f] + b] = b + 1 == fs[f] ? (uint8_t)(rnd() % 64)
						      : (b == 0 ? (uint8_t)(rnd() % 4) : 0);
}

/* model_run on sets without data (no NFT_SET_MAP): the interval
 * backend then answers from its index alone, without the element */
static bool model_no_data;

static struct model_elem *rebuild_m;
static unsigned rebuild_n, rebuild_ks;

/* rebuild the model from the set's committed content after an abort */
static int rebuild_cb(const void *key, const void *key_end, const void *data, uint64_t exp,
		      uint64_t timeout, uint32_t fl, void *arg)
{
	(void)timeout;
	struct model_elem *e = &rebuild_m[rebuild_n++];

	(void)exp, (void)fl, (void)arg;
	memcpy(e->lo, key, rebuild_ks);
	memcpy(e->hi, key_end ? key_end : key, rebuild_ks);
	if (data)
		memcpy(&e->data, data, 4);
	e->live = true;
	return 0;
}

static void model_run(uint32_t flags, const uint8_t *fs, unsigned nf, bool ranges)
{
	enum { N = 300 };
	struct model_elem *m = calloc(N, sizeof(*m));
	uint8_t fo[8], ks = 0;
	struct nftdp_set *s;

	for (unsigned f = 0; f < nf; f++) {
		fo[f] = ks;
		ks += (fs[f] + 3) & ~3;
	}
	if (nf > 1)
		s = mk_concat(flags | NFT_SET_MAP, fs, nf, 4);
	else if (model_no_data)
		s = mk(flags, fs[0], 0, 0);
	else
		s = mk(flags | NFT_SET_MAP, fs[0], 4, 0);

	for (unsigned round = 0; round < 20; round++) {
		for (unsigned i = 0; i < N; i++) {
			struct model_elem *e = &m[i];

			if (rnd() % 4)
				continue;
			if (e->live) {
				assert_int_equal(nftdp_set_remove(s, e->lo, ranges ? e->hi : NULL),
						 0);
				e->live = false;
				continue;
			}
			rand_key(e->lo, ks, fs, fo, nf);
			memcpy(e->hi, e->lo, ks);
			if (ranges)
				for (unsigned f = 0; f < nf; f++)
					e->hi[fo[f] + fs[f] - 1] =
					    (uint8_t)(e->lo[fo[f] + fs[f] - 1] + rnd() % 8);
			e->data = (uint32_t)rnd();
			/* the model decides whether it may go in */
			bool clash = false;

			for (unsigned j = 0; j < N && !clash; j++) {
				if (!m[j].live)
					continue;
				if (!ranges)
					clash = !memcmp(m[j].lo, e->lo, ks);
				else if (nf == 1)
					clash = memcmp(e->lo, m[j].hi, ks) <= 0 &&
						memcmp(m[j].lo, e->hi, ks) <= 0;
				else
					clash = model_contains(&m[j], e->lo, fs, fo, nf) ||
						model_contains(&m[j], e->hi, fs, fo, nf);
			}
			int err = nftdp_set_insert(s, e->lo, ranges ? e->hi : NULL,
						   model_no_data ? NULL : &e->data, 0, 0, true);
			if (clash) {
				assert_true(err == -EEXIST || err == -ENOTEMPTY || err == -EBUSY);
			} else {
				assert_int_equal(err, 0);
				e->live = true;
			}
		}
		if (round % 5 == 4) {
			/* abort: roll the model back by replaying set contents */
			nftdp_set_abort(s);
			nftdp_set_reclaim(s);
			for (unsigned i = 0; i < N; i++)
				m[i].live = false;
			rebuild_m = m;
			rebuild_ks = ks;
			rebuild_n = 0;
			nftdp_set_walk(s, rebuild_cb, NULL);
		} else {
			commit(s);
		}

		/* lookups: bulk vs single vs model */
		for (unsigned it = 0; it < 20; it++) {
			uint8_t keys[64][24];
			const void *kp[64], *data[64];
			uint64_t mask = 0;
			unsigned hits;

			for (unsigned i = 0; i < 64; i++) {
				rand_key(keys[i], ks, fs, fo, nf);
				if (ranges)
					for (unsigned f = 0; f < nf; f++)
						keys[i][fo[f] + fs[f] - 1] += (uint8_t)(rnd() % 4);
				kp[i] = keys[i];
			}
			hits = nftdp_set_lookup_bulk(s, kp, 64, data, 0, &mask);
			assert_int_equal(hits, __builtin_popcountll(mask));
			for (unsigned i = 0; i < 64; i++) {
				const struct model_elem *want = NULL;
				const void *d1 = NULL;
				bool one = nftdp_set_lookup(s, kp[i], &d1, 0);

				assert_int_equal(nftdp_set_contains_gen(s, kp[i], 0, 0), one);

				for (unsigned j = 0; j < N && !want; j++)
					if (m[j].live && model_contains(&m[j], keys[i], fs, fo, nf))
						want = &m[j];
				assert_int_equal(one, !!(mask >> i & 1));
				assert_int_equal(one, want != NULL);
				if (want && model_no_data) {
					assert_null(d1);
					assert_null(data[i]);
				} else if (want) {
					bool same = false;

					assert_ptr_equal(d1, data[i]);
					/* pipapo lets a range contain another: any
					 * containing element's data is a right answer */
					for (unsigned j = 0; j < N && !same; j++)
						same = m[j].live &&
						       model_contains(&m[j], keys[i], fs, fo, nf) &&
						       !memcmp(d1, &m[j].data, 4);
					assert_true(same);
				}
			}
		}
	}
	nftdp_set_destroy(s);
	free(m);
}

static void test_model_hash(void **state)
{
	static const uint8_t f1[] = {4}, f2[] = {4, 2};

	(void)state;
	model_run(0, f1, 1, false);
	model_run(0, f2, 2, false);
}

static void test_model_bitmap(void **state)
{
	static const uint8_t f1[] = {2};

	(void)state;
	model_run(0, f1, 1, false);
}

static void test_model_interval(void **state)
{
	static const uint8_t f1[] = {4}, f6[] = {16}, f8[] = {8}, f2[] = {2};

	(void)state;
	model_run(NFT_SET_INTERVAL, f1, 1, true);
	model_run(NFT_SET_INTERVAL, f6, 1, true);
	model_run(NFT_SET_INTERVAL, f8, 1, true);
	model_run(NFT_SET_INTERVAL, f2, 1, true); /* tcp dport { 1-1024 } */
	model_no_data = true;			  /* ip saddr @badnet4 */
	model_run(NFT_SET_INTERVAL, f1, 1, true);
	model_run(NFT_SET_INTERVAL, f6, 1, true);
	model_no_data = false;
}

static void test_model_concat(void **state)
{
	static const uint8_t f2[] = {4, 2}, f3[] = {16, 2, 4};

	(void)state;
	model_run(NFT_SET_INTERVAL, f2, 2, true);
	model_run(NFT_SET_INTERVAL, f3, 3, true);
}

/* ---- packet-path updates (single thread; threads in test_sets_stress.c) ---- */

static int timeout_cb(const void *key, const void *key_end, const void *data, uint64_t expires,
		      uint64_t timeout, uint32_t flags, void *arg)
{
	uint64_t *t = arg;

	(void)key_end, (void)data, (void)expires, (void)flags;
	t[((const uint8_t *)key)[3]] = timeout;
	return 0;
}

static uint64_t clock_100(void)
{
	return 100;
}

/* the release hook runs once for each element freed for good (after
 * its grace period, or with the set), with its data; never for one that
 * was not published; the side object goes with the set, after them */
static unsigned int released, side_freed;
static uint32_t released_sum;

static void count_release(void *data, void *arg)
{
	uint32_t v;

	assert_ptr_equal(arg, &released);
	memcpy(&v, data, sizeof(v));
	released++;
	released_sum += v;
}

static void count_side_free(void *side)
{
	assert_ptr_equal(side, &side_freed);
	assert_int_equal(released, 5); /* every element first */
	side_freed++;
}

static void test_elem_release_hook(void **state)
{
	struct nftdp_set_desc d = {
	    .flags = NFT_SET_EVAL, .key_size = 4, .data_size = 4, .max_elems = 8};
	struct nftdp_set *s;
	uint8_t k[4];
	uint32_t v;

	(void)state;
	released = side_freed = 0;
	released_sum = 0;
	assert_int_equal(nftdp_set_create(&d, &s), 0);
	assert_int_equal(nftdp_set_capacity(s), 8);
	assert_null(nftdp_set_side(s));
	nftdp_set_elem_release_hook(s, count_release, &released);
	nftdp_set_side_set(s, &side_freed, count_side_free);
	assert_ptr_equal(nftdp_set_side(s), &side_freed);
	/* control plane: 1 and 2; a duplicate never published */
	for (v = 1; v <= 2; v++) {
		ip4(k, 10, 0, 0, (uint8_t)v);
		assert_int_equal(nftdp_set_insert(s, k, NULL, &v, 0, 0, false), 0);
	}
	v = 9;
	assert_int_equal(nftdp_set_insert(s, k, NULL, &v, 0, 0, false), -EBUSY);
	commit(s);
	assert_int_equal(released, 0);
	/* packet path: 3, 4 and 5 */
	for (v = 3; v <= 5; v++) {
		ip4(k, 10, 0, 0, (uint8_t)v);
		assert_int_equal(nftdp_set_dp_update(s, k, &v, 0, 100, NFTDP_SET_DP_ADD), 0);
	}
	/* 1 goes: after the grace period, once */
	ip4(k, 10, 0, 0, 1);
	assert_int_equal(nftdp_set_remove(s, k, NULL), 0);
	commit(s);
	nftdp_set_reclaim(s);
	nftdp_set_reclaim(s);
	assert_int_equal(released, 1);
	assert_int_equal(released_sum, 1);
	assert_int_equal(side_freed, 0);
	nftdp_set_destroy(s);
	assert_int_equal(released, 5);
	assert_int_equal(released_sum, 1 + 2 + 3 + 4 + 5);
	assert_int_equal(side_freed, 1);
}

/* dp_update_elem hands out the element's data; a walk gives each
 * element's timeout (the given one, else the set's) for listings */
static void test_dp_update_elem(void **state)
{
	struct nftdp_set_desc d = {.flags = NFT_SET_EVAL | NFT_SET_TIMEOUT,
				   .key_size = 4,
				   .data_size = 8,
				   .max_elems = 4,
				   .timeout_ms = 1000};
	const uint64_t v = 42;
	uint64_t t[4] = {0};
	struct nftdp_set *s;
	void *a = NULL, *b = NULL;
	uint8_t k[4];

	(void)state;
	nftdp_set_clock_override(clock_100);
	assert_int_equal(nftdp_set_create(&d, &s), 0);
	ip4(k, 1, 1, 1, 1);
	assert_int_equal(nftdp_set_dp_update_elem(s, k, &v, 0, 100, NFTDP_SET_DP_ADD, &a), 0);
	assert_non_null(a);
	assert_memory_equal(a, &v, 8);
	assert_int_equal(nftdp_set_dp_update_elem(s, k, NULL, 0, 100, NFTDP_SET_DP_UPDATE, &b), 0);
	assert_ptr_equal(a, b);
	ip4(k, 1, 1, 1, 2);
	assert_int_equal(nftdp_set_dp_update_elem(s, k, NULL, 5000, 100, NFTDP_SET_DP_ADD, &b), 0);
	assert_ptr_not_equal(a, b);
	assert_int_equal(nftdp_set_walk(s, timeout_cb, t), 0);
	assert_int_equal(t[1], 1000);
	assert_int_equal(t[2], 5000);
	/* get: one element by key, as a walk shows it */
	{
		uint64_t exp = 0, to = 0;
		const void *data = NULL;

		assert_true(nftdp_set_get(s, k, &data, &exp, &to));
		assert_ptr_equal(data, b);
		assert_int_equal(exp, 5100);
		assert_int_equal(to, 5000);
		ip4(k, 1, 1, 1, 3);
		assert_false(nftdp_set_get(s, k, &data, &exp, &to));
	}
	nftdp_set_destroy(s);
	nftdp_set_clock_override(NULL);
}

static void test_dp_update(void **state)
{
	struct nftdp_set_desc d = {.flags = NFT_SET_EVAL | NFT_SET_TIMEOUT,
				   .key_size = 4,
				   .max_elems = 4,
				   .timeout_ms = 1000};
	struct nftdp_set *s, *t;
	uint8_t k[4];

	(void)state;
	assert_int_equal(nftdp_set_create(&d, &s), 0);
	for (unsigned i = 0; i < 4; i++) {
		ip4(k, 1, 1, 1, i);
		assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 100, NFTDP_SET_DP_ADD), 0);
		assert_true(nftdp_set_lookup(s, k, NULL, 100)); /* at once */
	}
	ip4(k, 1, 1, 1, 9);
	assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 100, NFTDP_SET_DP_ADD), -ENFILE);
	ip4(k, 1, 1, 1, 0);
	assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 100, NFTDP_SET_DP_ADD), 0);
	assert_int_equal(nftdp_set_count(s), 4);
	/* update refreshes the timeout, add does not */
	assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 900, NFTDP_SET_DP_ADD), 0);
	assert_false(nftdp_set_lookup(s, k, NULL, 1100));
	ip4(k, 1, 1, 1, 1);
	assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 900, NFTDP_SET_DP_UPDATE), 0);
	assert_true(nftdp_set_lookup(s, k, NULL, 1100));
	assert_false(nftdp_set_lookup(s, k, NULL, 1900));
	ip4(k, 1, 1, 1, 2);
	assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 100, NFTDP_SET_DP_DELETE), 0);
	assert_false(nftdp_set_lookup(s, k, NULL, 100));
	assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 100, NFTDP_SET_DP_DELETE), -ENOENT);
	/* gc frees the deleted and expired ones; the pool refills */
	assert_int_equal(nftdp_set_gc(s, 1200), 3);
	nftdp_set_reclaim(s);
	nftdp_set_reclaim(s);
	assert_int_equal(nftdp_set_count(s), 1);
	for (unsigned i = 10; i < 13; i++) {
		ip4(k, 1, 1, 1, i);
		assert_int_equal(nftdp_set_dp_update(s, k, NULL, 0, 1200, NFTDP_SET_DP_ADD), 0);
	}
	nftdp_set_destroy(s);

	t = mk(NFT_SET_INTERVAL, 4, 0, 0);
	assert_int_equal(nftdp_set_dp_update(t, k, NULL, 0, 0, NFTDP_SET_DP_ADD), -EOPNOTSUPP);
	nftdp_set_destroy(t);
}

static void test_create_errors(void **state)
{
	struct nftdp_set_desc d = {.key_size = 0};
	struct nftdp_set *s;

	(void)state;
	assert_int_equal(nftdp_set_create(&d, &s), -EINVAL);
	d.key_size = 65;
	assert_int_equal(nftdp_set_create(&d, &s), -EINVAL);
	d.key_size = 4;
	d.flags = NFT_SET_MAP;
	assert_int_equal(nftdp_set_create(&d, &s), -EINVAL);
	d.flags = NFT_SET_INTERVAL;
	d.n_fields = 2;
	d.field_size[0] = 4;
	d.field_size[1] = 2;
	d.key_size = 6; /* must be 8: padded */
	assert_int_equal(nftdp_set_create(&d, &s), -EINVAL);
	d.key_size = 8;
	assert_int_equal(nftdp_set_create(&d, &s), 0);
	nftdp_set_destroy(s);
}

/* ---- interval elements into ranges (nftdp_set_interval_ranges) ---- */

struct above_arg {
	const uint8_t *key; /* what the set has above the batch, or NULL */
	unsigned calls;
};

static const uint8_t *above_cb(const uint8_t *key, void *arg)
{
	struct above_arg *a = arg;

	(void)key;
	a->calls++;
	return a->key;
}

/* Element i of the batch: a start (end false) or an end at key v. */
static void ival(struct nftdp_set_interval_elem *e, uint8_t (*keys)[4], uint8_t (*last)[4],
		 unsigned i, uint32_t v, bool end)
{
	be32(keys[i], v);
	memset(last[i], 0xaa, 4);
	*e = (struct nftdp_set_interval_elem){
	    .key = keys[i], .last = last[i], .end = end, .opaque = (void *)(uintptr_t)i};
}

/* The range element e got, as two numbers. */
static void range_of(const struct nftdp_set_interval_elem *e, uint32_t *lo, uint32_t *hi)
{
	const uint8_t *k = e->key, *l = e->last;

	assert_false(e->end);
	*lo = (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];
	*hi = (uint32_t)l[0] << 24 | (uint32_t)l[1] << 16 | (uint32_t)l[2] << 8 | l[3];
}

static void test_interval_ranges(void **state)
{
	struct nftdp_set_interval_elem v[8];
	uint8_t keys[8][4], last[8][4];
	struct above_arg ab = {0};
	uint8_t top[4];
	uint32_t lo, hi;

	(void)state;
	/* closed ranges 10-20 and 0x100-0x1ff, sent out of order: sorted by
	 * key, and each start ends one below its end element */
	ival(&v[0], keys, last, 0, 0x200, true);
	ival(&v[1], keys, last, 1, 10, false);
	ival(&v[2], keys, last, 2, 0x100, false);
	ival(&v[3], keys, last, 3, 21, true);
	nftdp_set_interval_ranges(v, 4, 4, above_cb, &ab);
	assert_int_equal(ab.calls, 0); /* the last element is an end */
	assert_ptr_equal(v[0].opaque, (void *)1);
	assert_ptr_equal(v[1].opaque, (void *)3);
	assert_ptr_equal(v[2].opaque, (void *)2);
	assert_ptr_equal(v[3].opaque, (void *)0);
	range_of(&v[0], &lo, &hi);
	assert_int_equal(lo, 10);
	assert_int_equal(hi, 20);
	range_of(&v[2], &lo, &hi);
	assert_int_equal(lo, 0x100);
	assert_int_equal(hi, 0x1ff);	    /* the borrow crosses a byte */
	assert_int_equal(last[3][0], 0xaa); /* ends get no range */

	/* adjacent ranges: nft sends no end where one stops just below the
	 * next start, and at one key an end sorts before a start */
	ival(&v[0], keys, last, 0, 40, false);
	ival(&v[1], keys, last, 1, 30, false);
	ival(&v[2], keys, last, 2, 51, true);
	ival(&v[3], keys, last, 3, 51, false);
	ival(&v[4], keys, last, 4, 60, true);
	nftdp_set_interval_ranges(v, 5, 4, above_cb, &ab);
	assert_int_equal(ab.calls, 0);
	range_of(&v[0], &lo, &hi);
	assert_true(lo == 30 && hi == 39);
	range_of(&v[1], &lo, &hi);
	assert_true(lo == 40 && hi == 50);
	assert_true(v[2].end && v[2].opaque == (void *)2);
	range_of(&v[3], &lo, &hi);
	assert_true(lo == 51 && hi == 59);
	assert_true(v[4].end);

	/* open range: the last start runs up to the maximum key, with no
	 * callback or when the set has nothing above */
	ival(&v[0], keys, last, 0, 0xffffff00u, false);
	nftdp_set_interval_ranges(v, 1, 4, NULL, NULL);
	range_of(&v[0], &lo, &hi);
	assert_true(lo == 0xffffff00u && hi == 0xffffffffu);
	ival(&v[0], keys, last, 0, 7, false);
	nftdp_set_interval_ranges(v, 1, 4, above_cb, &ab);
	assert_int_equal(ab.calls, 1);
	range_of(&v[0], &lo, &hi);
	assert_true(lo == 7 && hi == 0xffffffffu);
	/* ... or up to one below the set's next element */
	be32(top, 0x10000);
	ab.key = top;
	ival(&v[0], keys, last, 0, 7, false);
	nftdp_set_interval_ranges(v, 1, 4, above_cb, &ab);
	assert_int_equal(ab.calls, 2);
	range_of(&v[0], &lo, &hi);
	assert_true(lo == 7 && hi == 0xffff);

	/* a lone end element makes no range and asks nothing */
	ival(&v[0], keys, last, 0, 100, true);
	nftdp_set_interval_ranges(v, 1, 4, above_cb, &ab);
	assert_int_equal(ab.calls, 2);
	assert_int_equal(last[0][0], 0xaa);
	nftdp_set_interval_ranges(v, 0, 4, above_cb, &ab);
	assert_int_equal(ab.calls, 2);
}

/* The ranges go into an interval set as they are: 10-20 and 30-ff..ff. */
static void test_interval_ranges_insert(void **state)
{
	struct nftdp_set *s = mk(NFT_SET_INTERVAL, 4, 0, 0);
	struct nftdp_set_interval_elem v[3];
	uint8_t keys[3][4], last[3][4], k[4];

	(void)state;
	ival(&v[0], keys, last, 0, 30, false);
	ival(&v[1], keys, last, 1, 21, true);
	ival(&v[2], keys, last, 2, 10, false);
	nftdp_set_interval_ranges(v, 3, 4, NULL, NULL);
	for (unsigned i = 0; i < 3; i++)
		if (!v[i].end)
			assert_int_equal(nftdp_set_insert(s, v[i].key, v[i].last, NULL, 0, 0, true),
					 0);
	commit(s);
	be32(k, 9);
	assert_false(has(s, k));
	be32(k, 10);
	assert_true(has(s, k));
	be32(k, 20);
	assert_true(has(s, k));
	be32(k, 21);
	assert_false(has(s, k));
	be32(k, 29);
	assert_false(has(s, k));
	be32(k, 30);
	assert_true(has(s, k));
	be32(k, 0xffffffffu);
	assert_true(has(s, k));
	nftdp_set_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_errors),
	    cmocka_unit_test(test_hash_basic),
	    cmocka_unit_test(test_hash_exists),
	    cmocka_unit_test(test_full),
	    cmocka_unit_test(test_timeouts),
	    cmocka_unit_test(test_concat_exact),
	    cmocka_unit_test(test_verdict_map),
	    cmocka_unit_test(test_bitmap),
	    cmocka_unit_test(test_interval_basic),
	    cmocka_unit_test(test_interval_prefixes),
	    cmocka_unit_test(test_interval_index),
	    cmocka_unit_test(test_interval_radix),
	    cmocka_unit_test(test_interval_ranges),
	    cmocka_unit_test(test_interval_ranges_insert),
	    cmocka_unit_test(test_concat_range),
	    cmocka_unit_test(test_walk),
	    cmocka_unit_test(test_model_hash),
	    cmocka_unit_test(test_model_bitmap),
	    cmocka_unit_test(test_model_interval),
	    cmocka_unit_test(test_model_concat),
	    cmocka_unit_test(test_dp_update),
	    cmocka_unit_test(test_dp_update_elem),
	    cmocka_unit_test(test_elem_release_hook),
	    cmocka_unit_test(test_catchall),
	    cmocka_unit_test(test_catchall_interval_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
