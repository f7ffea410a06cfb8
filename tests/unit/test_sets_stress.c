/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Concurrency tests for sets/: reader threads look up while the control
 * thread commits thousands of times (each commit flips the set between two
 * states, so a reader that saw half a commit would see a mix), with a small
 * QSBR of our own standing in for rte_rcu_qsbr; and several workers doing
 * dynset adds of the same keys at once.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/netfilter/nf_tables.h>

#include "nftdp_sets.h"

#define READERS 2
#define COMMITS 2000
#define NKEYS 64

/* ---- a minimal QSBR: readers bump a counter between lookups ---- */
static uint64_t qs_cnt[READERS];
static int stop;
static int failures;

static void qs_wait(void)
{
	uint64_t seen[READERS];

	for (int r = 0; r < READERS; r++)
		seen[r] = __atomic_load_n(&qs_cnt[r], __ATOMIC_ACQUIRE);
	for (int r = 0; r < READERS; r++)
		while (__atomic_load_n(&qs_cnt[r], __ATOMIC_ACQUIRE) == seen[r] &&
		       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			sched_yield();
}

struct stress {
	struct nftdp_set *s;
	uint8_t keys[NKEYS][24];
	unsigned key_size;
	bool ranges;
};

/* state A: even keys present; state B: odd keys present */
static bool state_ok(uint64_t mask)
{
	const uint64_t even = 0x5555555555555555ull;

	return mask == even || mask == ~even;
}

static void *reader(void *arg)
{
	struct stress *st = arg;
	int id = __atomic_fetch_add(&failures, 0, __ATOMIC_RELAXED); /* silence */
	static int next_id;
	const void *kp[NKEYS], *data[NKEYS];

	(void)id;
	id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < NKEYS; i++)
		kp[i] = st->keys[i];
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		uint64_t mask = 0;

		nftdp_set_lookup_bulk(st->s, kp, NKEYS, data, 0, &mask);
		if (!state_ok(mask))
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < NKEYS; i++)
			if ((mask >> i & 1) && st->s && data[i] &&
			    *(const uint32_t *)data[i] != (uint32_t)i)
				__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&qs_cnt[id % READERS], 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void stress_run(struct stress *st)
{
	pthread_t th[READERS];
	uint32_t d;

	failures = 0;
	stop = 0;
	for (int i = 0; i < NKEYS; i += 2) {
		d = (uint32_t)i;
		assert_int_equal(nftdp_set_insert(st->s, st->keys[i],
						  st->ranges ? st->keys[i] : NULL, &d, 0, 0, true),
				 0);
	}
	nftdp_set_commit(st->s);
	for (int r = 0; r < READERS; r++)
		assert_int_equal(pthread_create(&th[r], NULL, reader, st), 0);
	int aborted = -1;

	for (int c = 0; c < COMMITS; c++) {
		int add = (c & 1) ? 0 : 1; /* flip which parity is present */

		for (int i = 0; i < NKEYS; i++) {
			d = (uint32_t)i;
			if ((i & 1) == add)
				assert_int_equal(nftdp_set_insert(st->s, st->keys[i],
								  st->ranges ? st->keys[i] : NULL,
								  &d, 0, 0, true),
						 0);
			else
				assert_int_equal(nftdp_set_remove(st->s, st->keys[i],
								  st->ranges ? st->keys[i] : NULL),
						 0);
		}
		if (c % 97 == 5 && aborted != c) {
			aborted = c;
			/* an aborted transaction in between changes nothing */
			nftdp_set_abort(st->s);
			qs_wait();
			nftdp_set_reclaim(st->s);
			c--;
			continue;
		}
		nftdp_set_commit(st->s);
		qs_wait();
		nftdp_set_reclaim(st->s);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int r = 0; r < READERS; r++)
		pthread_join(th[r], NULL);
	assert_int_equal(failures, 0);
	nftdp_set_destroy(st->s);
}

static void mk(struct stress *st, uint32_t flags, const uint8_t *fs, unsigned nf)
{
	struct nftdp_set_desc d = {
	    .flags = flags | NFT_SET_MAP, .data_size = 4, .n_fields = (uint8_t)nf};

	for (unsigned i = 0; i < nf; i++) {
		d.field_size[i] = fs[i];
		d.key_size += (fs[i] + 3u) & ~3u;
	}
	if (nf > 1)
		d.flags |= NFT_SET_CONCAT;
	st->key_size = d.key_size;
	st->ranges = flags & NFT_SET_INTERVAL;
	assert_int_equal(nftdp_set_create(&d, &st->s), 0);
	memset(st->keys, 0, sizeof(st->keys));
	for (int i = 0; i < NKEYS; i++) {
		st->keys[i][0] = 10;
		st->keys[i][fs[0] - 1] = (uint8_t)(i * 3);
		if (nf > 1)
			st->keys[i][((fs[0] + 3) & ~3) + 1] = (uint8_t)i;
	}
}

static void test_stress_hash(void **state)
{
	static const uint8_t f[] = {4};
	struct stress st;

	(void)state;
	mk(&st, 0, f, 1);
	stress_run(&st);
}

static void test_stress_bitmap(void **state)
{
	static const uint8_t f[] = {2};
	struct stress st;

	(void)state;
	mk(&st, 0, f, 1);
	stress_run(&st);
}

static void test_stress_interval(void **state)
{
	static const uint8_t f[] = {16};
	struct stress st;

	(void)state;
	mk(&st, NFT_SET_INTERVAL, f, 1);
	stress_run(&st);
}

static void test_stress_concat(void **state)
{
	static const uint8_t f[] = {4, 2};
	struct stress st;

	(void)state;
	mk(&st, NFT_SET_INTERVAL, f, 2);
	stress_run(&st);
}

/* ---- several workers adding the same keys through dynset ---- */

#define DP_WORKERS 4
#define DP_KEYS 2000
static struct nftdp_set *dp_set;

static void *dp_worker(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < DP_KEYS; i++) {
		uint8_t k[4] = {(uint8_t)(i >> 8), (uint8_t)i, 1, 2};
		int err;

		do
			err = nftdp_set_dp_update(dp_set, k, NULL, 0, 10, NFTDP_SET_DP_ADD);
		while (err == -EAGAIN);
		if (err || !nftdp_set_lookup(dp_set, k, NULL, 10))
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static uint64_t clock10(void)
{
	return 10;
}

static int walk_cnt(const void *key, const void *key_end, const void *data, uint64_t expires,
		    uint64_t timeout, uint32_t flags, void *arg)
{
	(void)timeout;
	(void)key, (void)key_end, (void)data, (void)expires, (void)flags;
	(*(unsigned *)arg)++;
	return 0;
}

static void test_dp_concurrent(void **state)
{
	struct nftdp_set_desc d = {.flags = NFT_SET_EVAL | NFT_SET_TIMEOUT,
				   .key_size = 4,
				   .max_elems = DP_KEYS + 100,
				   .timeout_ms = 60000};
	pthread_t th[DP_WORKERS];
	unsigned n = 0;

	(void)state;
	failures = 0;
	assert_int_equal(nftdp_set_create(&d, &dp_set), 0);
	for (int i = 0; i < DP_WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, dp_worker, NULL), 0);
	for (int i = 0; i < DP_WORKERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(failures, 0);
	/* every key exactly once */
	assert_int_equal(nftdp_set_count(dp_set), DP_KEYS);
	nftdp_set_clock_override(clock10);
	nftdp_set_walk(dp_set, walk_cnt, &n);
	nftdp_set_clock_override(NULL);
	assert_int_equal(n, DP_KEYS);
	nftdp_set_destroy(dp_set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stress_hash),	    cmocka_unit_test(test_stress_bitmap),
	    cmocka_unit_test(test_stress_interval), cmocka_unit_test(test_stress_concat),
	    cmocka_unit_test(test_dp_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
