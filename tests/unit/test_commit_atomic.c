// SPDX-License-Identifier: BSD-3-Clause
/*
 * One batch becomes visible to every worker at one instant (issue 12, part
 * 2): two real sets (a hash set and an interval set, whose read index has
 * its own root) and the rule that uses them change in every commit, in the
 * order control/build.c commits: build the generation (it names the set
 * generation the commit stages into), stage both sets, then publish the set
 * cursor and the generation. Version v of the ruleset is
 *
 *     forward, policy drop:  mark set v; meta mark @A; meta mark @B; accept
 *
 * with A = { v } and B = { v-v } (a range of one key). A reader that saw set
 * A, set B or the rule of different versions would hit the drop policy.
 * Readers also check that a burst's verdicts never change within it, and
 * that versions never go back. Old elements are removed after the grace
 * period (sets' reclaim, called with the newest retired generation).
 * No EAL: rte_rcu_qsbr works on plain memory.
 */
#include <errno.h>
#include <pthread.h>
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

#include "gen_build.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

#define COMMITS 3000
#define READERS 2
#define BURST 16

static struct nftdp_set *set_a, *set_b;

static int res_set(void *opaque, const char *table, const char *name, uint32_t id,
		   struct nftdp_vm_set_info *out)
{
	(void)opaque;
	(void)table;
	(void)id;
	memset(out, 0, sizeof(*out));
	out->set = strcmp(name, "A") == 0 ? set_a : strcmp(name, "B") == 0 ? set_b : NULL;
	if (!out->set)
		return -ENOENT;
	out->ops = NULL; /* sets/, called directly as in the daemon */
	out->flags = out->set == set_b ? NFT_SET_INTERVAL : 0;
	out->klen = 4;
	return 0;
}

static const struct nftdp_vm_resolver resolver = {.set = res_set};

static struct nftnl_expr *ex(const char *name)
{
	struct nftnl_expr *e = nftnl_expr_alloc(name);

	assert_non_null(e);
	return e;
}

static struct nftdp_vm_gen *ruleset(struct nftdp_vm_state *st, uint32_t v)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4,
					.table = "t",
					.name = "fwd",
					.base = true,
					.hook = NF_INET_FORWARD,
					.policy = NF_DROP,
					.chain_id = 1};
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c;
	struct nftdp_vm_gen *gen = NULL;
	struct nftdp_vm_error err;
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e;

	assert_int_equal(nftdp_vm_gen_builder_create(st, &resolver, &b), 0);
	/* what ctl_build_prepare does: the generation reads the staged sets */
	nftdp_vm_gen_set_gencursor(b, nftdp_set_gen_next());
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 0, &c), 0);
	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 1);
	e = ex("immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &v, 4);
	nftnl_rule_add_expr(r, e);
	e = ex("meta");
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_MARK);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	for (int i = 0; i < 2; i++) {
		e = ex("lookup");
		nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, i ? "B" : "A");
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
		nftnl_rule_add_expr(r, e);
	}
	e = ex("immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, NF_ACCEPT);
	nftnl_rule_add_expr(r, e);
	assert_int_equal(nftdp_vm_gen_add_rule(b, c, r, &err), 0);
	nftnl_rule_free(r);
	assert_int_equal(nftdp_vm_gen_build(b, &gen, &err), 0);
	return gen;
}

struct reader {
	pthread_t tid;
	unsigned int id;
	struct nftdp_vm_gen_domain *dom;
	struct nftdp_vm_state *st;
	atomic_bool *stop;
	uint64_t bursts, dropped, back, switches;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct nftdp_vm_ctx ctx = {.worker = r->id, .state = r->st, .prng = 3};
	struct gen_tpkt tb[BURST];
	struct nftdp_vm_pkt *pk[BURST];
	unsigned int v[BURST];
	uint32_t last = 0;

	if (nftdp_vm_gen_reader_register(r->dom, r->id) != 0)
		return NULL;
	while (!atomic_load_explicit(r->stop, memory_order_relaxed)) {
		const struct nftdp_vm_gen *gen = nftdp_vm_gen_acquire(r->dom);

		if (gen) {
			for (int i = 0; i < BURST; i++)
				pk[i] = gen_tcp4(&tb[i]);
			nftdp_vm_gen_run_hook_burst(gen, NFPROTO_IPV4, NF_INET_FORWARD, pk, BURST,
						    v, &ctx);
			for (int i = 0; i < BURST; i++)
				if (v[i] != NF_ACCEPT)
					r->dropped++;
			if (pk[0]->mark < last)
				r->back++;
			if (pk[0]->mark != last)
				r->switches++;
			last = pk[0]->mark;
			r->bursts++;
		}
		nftdp_vm_gen_quiesce(r->dom, r->id);
	}
	nftdp_vm_gen_reader_unregister(r->dom, r->id);
	return NULL;
}

static void reclaim_set(struct nftdp_set *s, void *arg)
{
	(void)arg;
	nftdp_set_reclaim(s);
}

static void test_two_sets_one_switch(void **state)
{
	struct nftdp_vm_state_config scfg = {
	    .n_workers = READERS, .max_counters = 64, .max_cells = 64, .log_ring_size = 8};
	struct nftdp_set_desc ha = {.key_size = 4};
	struct nftdp_set_desc iv = {.flags = NFT_SET_INTERVAL, .key_size = 4};
	struct nftdp_vm_gen_domain_config dcfg = {.max_readers = READERS,
						  .set_reclaim = reclaim_set};
	struct nftdp_vm_gen_domain *dom;
	struct nftdp_vm_state *st;
	struct reader rd[READERS];
	atomic_bool stop = false;
	uint64_t bursts = 0;

	(void)state;
	assert_int_equal(nftdp_vm_state_create(&scfg, &st), 0);
	dcfg.state = st;
	assert_int_equal(nftdp_vm_gen_domain_create(&dcfg, &dom), 0);
	assert_int_equal(nftdp_set_create(&ha, &set_a), 0);
	assert_int_equal(nftdp_set_create(&iv, &set_b), 0);

	/* version 1 */
	uint32_t v = 1;
	struct nftdp_vm_gen *g = ruleset(st, v);

	assert_int_equal(nftdp_set_insert(set_a, &v, NULL, NULL, 0, 0, true), 0);
	assert_int_equal(nftdp_set_insert(set_b, &v, &v, NULL, 0, 0, true), 0);
	nftdp_set_commit_stage(set_a);
	nftdp_set_commit_stage(set_b);
	nftdp_set_gen_publish();
	nftdp_vm_gen_publish(dom, g);

	for (unsigned int i = 0; i < READERS; i++) {
		rd[i] = (struct reader){.id = i, .dom = dom, .st = st, .stop = &stop};
		assert_int_equal(pthread_create(&rd[i].tid, NULL, reader_main, &rd[i]), 0);
	}
	for (v = 2; v <= COMMITS; v++) {
		uint32_t old = v - 1;

		/* 2. prepare: the generation, then the staged set changes */
		g = ruleset(st, v);
		assert_int_equal(nftdp_set_remove(set_a, &old, NULL), 0);
		assert_int_equal(nftdp_set_remove(set_b, &old, &old), 0);
		assert_int_equal(nftdp_set_insert(set_a, &v, NULL, NULL, 0, 0, true), 0);
		assert_int_equal(nftdp_set_insert(set_b, &v, &v, NULL, 0, 0, true), 0);
		nftdp_set_commit_stage(set_a);
		nftdp_set_commit_stage(set_b);
		/* 3. publish: the one switch */
		nftdp_set_gen_publish();
		nftdp_vm_gen_publish(dom, g);
		/* let the readers run now and then, and sometimes catch up */
		if (v % 64 == 0)
			nftdp_vm_gen_synchronize(dom);
		else
			sched_yield();
	}
	atomic_store(&stop, true);
	for (unsigned int i = 0; i < READERS; i++) {
		pthread_join(rd[i].tid, NULL);
		bursts += rd[i].bursts;
		assert_int_equal(rd[i].dropped, 0);
		assert_int_equal(rd[i].back, 0);
	}
	print_message("%u commits, %llu bursts, reader switches %llu/%llu\n", COMMITS,
		      (unsigned long long)bursts, (unsigned long long)rd[0].switches,
		      (unsigned long long)rd[1].switches);
	assert_true(bursts > 0);
	nftdp_vm_gen_synchronize(dom);
	/* only the last version's elements are left */
	v = COMMITS;
	assert_true(nftdp_set_lookup(set_a, &v, NULL, 0));
	v = COMMITS - 1;
	assert_false(nftdp_set_lookup(set_b, &v, NULL, 0));
	assert_int_equal(nftdp_set_count(set_a), 1);
	nftdp_vm_gen_domain_destroy(dom);
	nftdp_set_destroy(set_a);
	nftdp_set_destroy(set_b);
	nftdp_vm_state_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_sets_one_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
