// SPDX-License-Identifier: BSD-3-Clause
/*
 * Set memory is freed only after a grace period that began after it was
 * unlinked (issue 12). Readers register with a generation domain (its
 * rte_rcu_qsbr variable, no EAL) and, per cycle, acquire the generation,
 * look keys up in the set generation it carries, keep the data pointers
 * (valid until their next quiescent state), read them after a while, and
 * quiesce. The control thread runs what control/build.c runs: commits
 * (stage, set publish, generation publish), gc of timed-out elements
 * (ctl_build_tick), aborted batches, and nftdp_vm_gen_reclaim() as the main
 * loop does, never waiting for readers. Each round it lets the readers pass
 * the last publish's token before the gc or abort, so memory freed on that
 * token (rather than on one taken after the unlink) is still in a reader's
 * hands: an ASan build reports the use after free, any build a wrong
 * datum. Each scenario is bounded in time.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter/nf_tables.h>

#include "nftdp_common.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

#define READERS 2
#define NKEYS 64
#define ROUNDS 3000
#define SCENARIO_MS 3000u /* per scenario */

static uint64_t ctl_now = 1000;

static uint64_t ctl_clock(void)
{
	return ctl_now;
}

struct fix {
	struct nftdp_vm_state *st;
	struct nftdp_vm_gen_domain *dom;
	struct nftdp_set *s;
	bool ranges;
	uint32_t key[NKEYS], end[NKEYS], probe[NKEYS]; /* big endian for ranges */
	atomic_bool stop;
	_Atomic uint64_t cycles[READERS];
	_Atomic uint64_t bad;
	pthread_t tid[READERS];
};

static struct fix *fx;

/* the old hook: the domain reclaimed sets with its newest retired
 * generation, on epochs (set to show that it is no longer called) */
static void reclaim_set(struct nftdp_set *s, void *arg)
{
	(void)arg;
	nftdp_set_reclaim(s);
}

static void *reader_main(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	struct fix *f = fx;

	if (nftdp_vm_gen_reader_register(f->dom, id) != 0)
		return NULL;
	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		const struct nftdp_vm_gen *g = nftdp_vm_gen_acquire(f->dom);
		uint64_t sg = nftdp_vm_gen_gencursor(g);
		const void *d[NKEYS];
		volatile uint32_t sink = 0;

		for (int k = 0; k < NKEYS; k++) {
			d[k] = NULL;
			/* now 0: timed elements never look expired to us, only
			 * gc removes them */
			nftdp_set_lookup_gen(f->s, &f->probe[k], &d[k], 0, sg);
		}
		/* the data stays ours until we quiesce: use it late */
		for (int pass = 0; pass < 8; pass++) {
			for (int k = 0; k < NKEYS; k++) {
				uint32_t v;

				if (!d[k])
					continue;
				memcpy(&v, d[k], 4);
				if ((v & 0xff) != (uint32_t)k)
					atomic_fetch_add(&f->bad, 1);
				sink += v;
			}
			sched_yield();
		}
		(void)sink;
		nftdp_vm_gen_quiesce(f->dom, id);
		atomic_fetch_add_explicit(&f->cycles[id], 1, memory_order_release);
	}
	nftdp_vm_gen_reader_unregister(f->dom, id);
	return NULL;
}

static int res_set(void *opaque, const char *table, const char *name, uint32_t id,
		   struct nftdp_vm_set_info *out)
{
	struct fix *f = opaque;

	(void)table;
	(void)id;
	if (strcmp(name, "S"))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->set = f->s;
	out->ops = NULL; /* sets/, called directly as in the daemon */
	out->flags = NFT_SET_MAP | (f->ranges ? NFT_SET_INTERVAL : 0);
	out->klen = 4;
	out->dlen = 4;
	return 0;
}

static struct nftnl_expr *ex(const char *name)
{
	struct nftnl_expr *e = nftnl_expr_alloc(name);

	assert_non_null(e);
	return e;
}

/*
 * The generation of a commit: it carries the set generation the commit
 * stages, and one rule that looks the mark up in the set (so the
 * generation holds the set handle, as control/build.c's generations do):
 *   forward: meta mark @S; accept
 */
static struct nftdp_vm_gen *ruleset(struct fix *f)
{
	struct nftdp_vm_chain_desc cd = {.family = NFPROTO_IPV4,
					 .table = "t",
					 .name = "fwd",
					 .base = true,
					 .hook = NF_INET_FORWARD,
					 .policy = NF_ACCEPT,
					 .chain_id = 1};
	struct nftdp_vm_resolver res = {.opaque = f, .set = res_set};
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c;
	struct nftdp_vm_gen *g = NULL;
	struct nftdp_vm_error err;
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, &res, &b), 0);
	nftdp_vm_gen_set_gencursor(b, nftdp_set_gen_next());
	assert_int_equal(nftdp_vm_gen_chain_create(b, &cd, 0, &c), 0);
	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 1);
	e = ex("meta");
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_MARK);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	e = ex("lookup");
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, "S");
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	e = ex("immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, NF_ACCEPT);
	nftnl_rule_add_expr(r, e);
	assert_int_equal(nftdp_vm_gen_add_rule(b, c, r, &err), 0);
	nftnl_rule_free(r);
	assert_int_equal(nftdp_vm_gen_build(b, &g, &err), 0);
	return g;
}

static void commit(struct fix *f)
{
	struct nftdp_vm_gen *g = ruleset(f);

	nftdp_set_commit_stage(f->s);
	nftdp_set_gen_publish();
	nftdp_vm_gen_publish(f->dom, g);
}

/* let every reader finish a cycle that began after now: the last token
 * has passed (reclaim is not called meanwhile) */
static void readers_pass(struct fix *f)
{
	uint64_t seen[READERS], t0 = nftdp_now_ms();

	for (int r = 0; r < READERS; r++)
		seen[r] = atomic_load_explicit(&f->cycles[r], memory_order_acquire);
	for (int r = 0; r < READERS; r++)
		while (atomic_load_explicit(&f->cycles[r], memory_order_acquire) < seen[r] + 2 &&
		       nftdp_now_ms() - t0 < 100)
			sched_yield();
}

static void insert_all(struct fix *f, uint32_t round, uint64_t timeout, bool excl)
{
	for (int k = 0; k < NKEYS; k++) {
		uint32_t data = round << 8 | (uint32_t)k;

		assert_int_equal(nftdp_set_insert(f->s, &f->key[k], f->ranges ? &f->end[k] : NULL,
						  &data, timeout, 0, excl),
				 0);
	}
}

static void setup_fix(struct fix *f, uint32_t flags)
{
	struct nftdp_vm_state_config scfg = {
	    .n_workers = READERS, .max_counters = 64, .max_cells = 64, .log_ring_size = 8};
	struct nftdp_vm_gen_domain_config dcfg = {.max_readers = READERS,
						  .set_reclaim = reclaim_set};
	struct nftdp_set_desc d = {
	    .flags = flags | NFT_SET_MAP | NFT_SET_TIMEOUT, .key_size = 4, .data_size = 4};

	memset(f, 0, sizeof(*f));
	f->ranges = flags & NFT_SET_INTERVAL;
	for (uint32_t k = 0; k < NKEYS; k++) {
		uint32_t lo = 0x0a000000u + k * 16;

		f->key[k] = f->ranges ? __builtin_bswap32(lo) : lo;
		f->end[k] = __builtin_bswap32(lo + 7);
		f->probe[k] = f->ranges ? __builtin_bswap32(lo + 3) : lo;
	}
	nftdp_set_clock_override(ctl_clock);
	assert_int_equal(nftdp_vm_state_create(&scfg, &f->st), 0);
	dcfg.state = f->st;
	assert_int_equal(nftdp_vm_gen_domain_create(&dcfg, &f->dom), 0);
	/* what control/build.c registers */
	nftdp_vm_gen_domain_grace(f->dom, nftdp_set_grace_hook_begin, nftdp_set_grace_hook_end,
				  NULL);
	assert_int_equal(nftdp_set_create(&d, &f->s), 0);
	commit(f);
	fx = f;
	for (unsigned int r = 0; r < READERS; r++)
		assert_int_equal(
		    pthread_create(&f->tid[r], NULL, reader_main, (void *)(uintptr_t)r), 0);
}

static void teardown_fix(struct fix *f, unsigned rounds)
{
	atomic_store(&f->stop, true);
	for (unsigned int r = 0; r < READERS; r++)
		pthread_join(f->tid[r], NULL);
	print_message("%u rounds, reader cycles %llu/%llu, bad data %llu\n", rounds,
		      (unsigned long long)f->cycles[0], (unsigned long long)f->cycles[1],
		      (unsigned long long)f->bad);
	assert_int_equal(atomic_load(&f->bad), 0);
	assert_true(f->cycles[0] > 0 && f->cycles[1] > 0);
	nftdp_vm_gen_synchronize(f->dom);
	nftdp_vm_gen_domain_destroy(f->dom);
	nftdp_set_destroy(f->s);
	nftdp_vm_state_destroy(f->st);
	nftdp_set_clock_override(NULL);
}

/*
 * gc: every round adds the keys with a timeout, commits, lets the readers
 * pick the new elements up, then gc expires all of them and the main loop
 * reclaims.
 */
static void run_gc(uint32_t flags)
{
	struct fix *f = calloc(1, sizeof(*f));
	uint64_t t0;
	unsigned round;

	assert_non_null(f);
	setup_fix(f, flags);
	t0 = nftdp_now_ms();
	for (round = 1; round <= ROUNDS && nftdp_now_ms() - t0 < SCENARIO_MS; round++) {
		insert_all(f, round, 1000, true);
		commit(f);
		readers_pass(f);
		ctl_now += 2000;
		assert_int_equal(nftdp_set_gc(f->s, ctl_now), NKEYS);
		nftdp_vm_gen_reclaim(f->dom);
	}
	teardown_fix(f, round - 1);
	free(f);
}

static void test_gc_hash(void **state)
{
	(void)state;
	run_gc(0);
}

static void test_gc_interval(void **state)
{
	(void)state;
	run_gc(NFT_SET_INTERVAL);
}

/*
 * abort: every round commits the keys, lets the readers pick them up, then
 * a batch deletes them and adds them again with other data, and is
 * aborted (its new elements are linked next to the live ones); then the
 * committed elements are deleted for real and the main loop reclaims.
 */
static void run_abort(uint32_t flags)
{
	struct fix *f = calloc(1, sizeof(*f));
	uint64_t t0;
	unsigned round;

	assert_non_null(f);
	setup_fix(f, flags);
	t0 = nftdp_now_ms();
	for (round = 1; round <= ROUNDS && nftdp_now_ms() - t0 < SCENARIO_MS; round++) {
		insert_all(f, round, 0, true);
		commit(f);
		readers_pass(f);
		for (int k = 0; k < NKEYS; k++)
			assert_int_equal(
			    nftdp_set_remove(f->s, &f->key[k], f->ranges ? &f->end[k] : NULL), 0);
		insert_all(f, round + 1000000, 0, true);
		nftdp_set_abort(f->s);
		nftdp_vm_gen_reclaim(f->dom);
		for (int k = 0; k < NKEYS; k++)
			assert_int_equal(
			    nftdp_set_remove(f->s, &f->key[k], f->ranges ? &f->end[k] : NULL), 0);
		commit(f);
		nftdp_vm_gen_reclaim(f->dom);
	}
	teardown_fix(f, round - 1);
	free(f);
}

static void test_abort_hash(void **state)
{
	(void)state;
	run_abort(0);
}

static void test_abort_interval(void **state)
{
	(void)state;
	run_abort(NFT_SET_INTERVAL);
}

/*
 * Commits alone: every round deletes the keys, adds them back, commits and
 * reclaims, while commits never pause; the memory of deleted elements must
 * come back within a few grace periods all the same (not only when
 * commits stop).
 */
static void test_reclaim_under_commits(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	unsigned round, max_dead = 0;

	(void)state;
	assert_non_null(f);
	setup_fix(f, 0);
	insert_all(f, 0, 0, true);
	commit(f);
	for (round = 1; round <= 2000; round++) {
		for (int k = 0; k < NKEYS; k++)
			assert_int_equal(nftdp_set_remove(f->s, &f->key[k], NULL), 0);
		insert_all(f, round, 0, true);
		commit(f);
		nftdp_vm_gen_reclaim(f->dom);
		if (nftdp_set_retired_len(f->s) > max_dead)
			max_dead = nftdp_set_retired_len(f->s);
	}
	print_message("most elements waiting for a grace period: %u (%u per commit)\n", max_dead,
		      NKEYS);
	/* what a few grace periods hold, not what every commit deleted */
	assert_true(max_dead < round * NKEYS / 4);
	teardown_fix(f, round - 1);
	free(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gc_hash),
	    cmocka_unit_test(test_gc_interval),
	    cmocka_unit_test(test_abort_hash),
	    cmocka_unit_test(test_abort_interval),
	    cmocka_unit_test(test_reclaim_under_commits),
	};

	if (argc > 1) /* one scenario: test_sets_grace test_gc_interval */
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
