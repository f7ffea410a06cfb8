// SPDX-License-Identifier: BSD-3-Clause
/*
 * Generations (vm/generation.c): hook traversal by priority with the kernel's
 * base-chain semantics (accept moves on, drop ends, policies), build errors,
 * set handles and deferred frees, and the stress test of the issue: two
 * reader threads evaluate bursts while the control thread publishes 10 000
 * generations alternating between two rulesets, freed through rte_rcu_qsbr.
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
#include "nft_build.h"
#include "nftdp_common.h"
#include "nftdp_vm.h"

/* ---------- rules (builders: tests/lib/nft_build.h, gen_build.h) ---------- */

/* meta mark set v */
#define MARK_SET(v) imm32(NFT_REG_1, (v)), meta_set(NFT_META_MARK, NFT_REG_1)
/* meta mark == v */
#define MARK_IS(v) meta(NFT_META_MARK, NFT_REG_1), cmp32(NFT_CMP_EQ, NFT_REG_1, (v))

static int fix_setup(void **state)
{
	*state = gen_fix_new(4);
	return 0;
}

static int fix_teardown(void **state)
{
	gen_fix_free(*state);
	return 0;
}

/* ---------- hook semantics ---------- */

static void test_priority_order(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c10, *cm5, *c0a, *c0b, *ci;
	struct gen_tpkt t;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	/* created out of order: the hook list sorts them; of equal priorities
	 * the one registered last runs first (nf_hook_entries_grow) */
	c10 = gen_chain(b, NFPROTO_IPV4, "p10", true, NF_INET_FORWARD, 10, NF_ACCEPT, 0);
	c0a = gen_chain(b, NFPROTO_IPV4, "p0a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 1);
	cm5 = gen_chain(b, NFPROTO_IPV4, "pm5", true, NF_INET_FORWARD, -5, NF_ACCEPT, 2);
	c0b = gen_chain(b, NFPROTO_IPV4, "p0b", true, NF_INET_FORWARD, 0, NF_ACCEPT, 3);
	/* an inet chain at 5 runs in both the ip and ip6 lists */
	ci = gen_chain(b, NFPROTO_INET, "i5", true, NF_INET_FORWARD, 5, NF_ACCEPT, 4);
	assert_int_equal(gen_rule(b, cm5, 1, MARK_SET(1), NULL), 0);
	assert_int_equal(gen_rule(b, c0b, 3, MARK_IS(1), MARK_SET(2), NULL), 0);
	assert_int_equal(gen_rule(b, c0a, 2, MARK_IS(2), MARK_SET(4), NULL), 0);
	assert_int_equal(gen_rule(b, ci, 4, MARK_IS(4), MARK_SET(5), NULL), 0);
	assert_int_equal(gen_rule(b, c10, 5, MARK_IS(5), MARK_SET(3), NULL), 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);

	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_IPV4, NF_INET_FORWARD), 5);
	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_IPV6, NF_INET_FORWARD), 1);
	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_INET, NF_INET_FORWARD), 0);
	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_IPV4, NF_INET_PRE_ROUTING), 0);
	assert_int_equal(nftdp_vm_gen_hook_len(gen, 200, 0), 0);
	struct nftdp_vm_pkt *p = gen_tcp4(&t);

	assert_int_equal(nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_ACCEPT);
	assert_int_equal(p->mark, 3);
	/* a hook without base chains accepts and touches nothing */
	p = gen_tcp4(&t);
	assert_int_equal(nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_PRE_ROUTING, p, &f->ctx),
			 NF_ACCEPT);
	assert_int_equal(p->mark, 0);
	nftdp_vm_gen_destroy(gen);
}

static void test_accept_moves_on_drop_ends(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *a, *d, *z;
	struct gen_tpkt t;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	a = gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, -10, NF_DROP, 0);
	d = gen_chain(b, NFPROTO_IPV4, "d", true, NF_INET_FORWARD, 0, NF_ACCEPT, 1);
	z = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 10, NF_ACCEPT, 2);
	/* an explicit accept ends chain a (its drop policy is not reached)
	 * and moves on to d */
	assert_int_equal(gen_rule(b, a, 1, MARK_SET(7), verdict(NF_ACCEPT, NULL), NULL), 0);
	/* d drops mark 8; z would set 9 */
	assert_int_equal(gen_rule(b, d, 2, MARK_IS(8), verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(gen_rule(b, d, 3, MARK_SET(8), NULL), 0);
	assert_int_equal(gen_rule(b, z, 4, MARK_IS(8), MARK_SET(9), verdict(NF_ACCEPT, NULL), NULL),
			 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);
	struct nftdp_vm_pkt *p = gen_tcp4(&t);

	/* a: accept (mark 7) -> d: sets 8, policy accept -> z: sets 9 */
	assert_int_equal(nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_ACCEPT);
	assert_int_equal(p->mark, 9);
	nftdp_vm_gen_destroy(gen);

	/* drop in the first chain ends the hook: later chains never run */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	a = gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, -10, NF_ACCEPT, 0);
	z = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 10, NF_ACCEPT, 1);
	assert_int_equal(gen_rule(b, a, 1, verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(gen_rule(b, z, 2, MARK_SET(9), NULL), 0);
	gen = gen_build_ok(b);
	p = gen_tcp4(&t);
	assert_int_equal(nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_DROP);
	assert_int_equal(p->mark, 0);
	nftdp_vm_gen_destroy(gen);
}

/* One base chain on a hook: its verdicts are the hook's, over bursts longer
 * than NFTDP_VM_BURST_MAX too, and a window without it runs nothing. */
static void test_one_chain_burst(void **state)
{
	enum { N = NFTDP_VM_BURST_MAX * 2 + 3 };
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c;
	static struct gen_tpkt t[N];
	struct nftdp_vm_pkt *pk[N];
	unsigned int v[N];

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c = gen_chain(b, NFPROTO_IPV4, "only", true, NF_INET_FORWARD, 5, NF_ACCEPT, 0);
	assert_int_equal(gen_rule(b, c, 1, MARK_IS(7), verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(gen_rule(b, c, 2, MARK_SET(9), NULL), 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);

	for (int i = 0; i < N; i++) {
		pk[i] = gen_tcp4(&t[i]);
		pk[i]->mark = i % 3 == 0 ? 7 : 0;
	}
	nftdp_vm_gen_run_hook_burst(gen, NFPROTO_IPV4, NF_INET_FORWARD, pk, N, v, &f->ctx);
	for (int i = 0; i < N; i++) {
		assert_int_equal(v[i], i % 3 == 0 ? NF_DROP : NF_ACCEPT);
		assert_int_equal(pk[i]->mark, i % 3 == 0 ? 7 : 9);
	}
	/* a window that leaves the chain out: every packet accepted, untouched */
	for (int i = 0; i < N; i++) {
		pk[i] = gen_tcp4(&t[i]);
		pk[i]->mark = 7;
		v[i] = NF_DROP;
	}
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 6, INT32_MAX, pk, N, v,
					 &f->ctx);
	for (int i = 0; i < N; i++)
		assert_int_equal(v[i], NF_ACCEPT);
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 5, 5, pk, N, v,
					 &f->ctx);
	for (int i = 0; i < N; i++)
		assert_int_equal(v[i], NF_DROP);
	nftdp_vm_gen_destroy(gen);
}

/* netdev chains run only for their devices; the _prio variant runs a
 * priority window of a hook, so a built-in step can sit between chains */
static void test_devices_and_prio_window(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c;
	static const uint32_t dev2[] = {2}, dev13[] = {1, 3};
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_NETDEV,
					.table = "t",
					.base = true,
					.hook = NF_NETDEV_INGRESS,
					.policy = NF_ACCEPT};
	struct gen_tpkt t[4];
	struct nftdp_vm_pkt *pk[4];
	unsigned int v[4];

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	d.name = "on2", d.chain_id = 0, d.ifindex = dev2, d.n_ifindex = 1;
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 0, &c), 0);
	assert_int_equal(gen_rule(b, c, 1, verdict(NF_DROP, NULL), NULL), 0);
	d.name = "on13", d.chain_id = 1, d.ifindex = dev13, d.n_ifindex = 2;
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 10, &c), 0);
	assert_int_equal(gen_rule(b, c, 2, MARK_SET(13), NULL), 0);
	/* a chain on a device that does not exist never runs */
	d.name = "nodev", d.chain_id = 2, d.ifindex = NULL, d.n_ifindex = 0;
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 20, &c), 0);
	assert_int_equal(gen_rule(b, c, 3, verdict(NF_DROP, NULL), NULL), 0);
	/* ip forward chains at -10, 0, 10 */
	c = gen_chain(b, NFPROTO_IPV4, "m10", true, NF_INET_FORWARD, -10, NF_ACCEPT, 3);
	assert_int_equal(gen_rule(b, c, 4, MARK_SET(1), NULL), 0);
	c = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 0, NF_ACCEPT, 4);
	assert_int_equal(gen_rule(b, c, 5, MARK_IS(1), MARK_SET(2), NULL), 0);
	c = gen_chain(b, NFPROTO_IPV4, "p10", true, NF_INET_FORWARD, 10, NF_ACCEPT, 5);
	assert_int_equal(gen_rule(b, c, 6, MARK_IS(2), verdict(NF_DROP, NULL), NULL), 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);

	for (int i = 0; i < 4; i++) {
		pk[i] = gen_tcp4(&t[i]);
		pk[i]->nfproto = NFPROTO_NETDEV;
		pk[i]->hook = NF_NETDEV_INGRESS;
		pk[i]->iif = (uint32_t)i + 1;
	}
	nftdp_vm_gen_run_hook_burst(gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS, pk, 4, v, &f->ctx);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(pk[0]->mark, 13);
	assert_int_equal(v[1], NF_DROP); /* dev 2 */
	assert_int_equal(pk[1]->mark, 0);
	assert_int_equal(v[2], NF_ACCEPT);
	assert_int_equal(pk[2]->mark, 13);
	assert_int_equal(v[3], NF_ACCEPT); /* dev 4: no chain of its own */
	assert_int_equal(pk[3]->mark, 0);
	/* the single-packet path agrees */
	pk[1] = gen_tcp4(&t[1]);
	pk[1]->iif = 2;
	assert_int_equal(
	    nftdp_vm_gen_run_hook(gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS, pk[1], &f->ctx), NF_DROP);

	/* window [-10, -1], then [0, 10]: the same as the whole hook */
	pk[0] = gen_tcp4(&t[0]);
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, INT32_MIN, -1, pk, 1,
					 v, &f->ctx);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(pk[0]->mark, 1);
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 0, 0, pk, 1, v,
					 &f->ctx);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(pk[0]->mark, 2);
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 1, INT32_MAX, pk, 1, v,
					 &f->ctx);
	assert_int_equal(v[0], NF_DROP);
	/* which windows hold a chain (-10, 0, 10): the dataplane skips the rest */
	assert_true(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, INT32_MIN, -10));
	assert_false(
	    nftdp_vm_gen_hook_has_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, INT32_MIN, -11));
	assert_false(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, -9, -1));
	assert_true(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, -9, 0));
	assert_true(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 10, INT32_MAX));
	assert_false(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 11, INT32_MAX));
	assert_false(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_IPV4, NF_INET_PRE_ROUTING, INT32_MIN,
						INT32_MAX));
	assert_false(nftdp_vm_gen_hook_has_prio(gen, 200, NF_INET_FORWARD, INT32_MIN, INT32_MAX));
	nftdp_vm_gen_destroy(gen);
}

/* the hook walker's view of a list: each chain's priority by index, and a
 * range of indexes run as a part of the hook (a step between two ranges) */
static void test_hook_range(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c;
	static struct gen_tpkt t[3];
	struct nftdp_vm_pkt *pk[3];
	unsigned int v[3];

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	/* created out of order: the list holds them by priority */
	c = gen_chain(b, NFPROTO_IPV4, "p10", true, NF_INET_FORWARD, 10, NF_ACCEPT, 0);
	assert_int_equal(gen_rule(b, c, 1, MARK_IS(2), verdict(NF_DROP, NULL), NULL), 0);
	c = gen_chain(b, NFPROTO_IPV4, "m10", true, NF_INET_FORWARD, -10, NF_ACCEPT, 1);
	assert_int_equal(gen_rule(b, c, 2, MARK_SET(1), NULL), 0);
	c = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 0, NF_ACCEPT, 2);
	assert_int_equal(gen_rule(b, c, 3, MARK_IS(1), MARK_SET(2), NULL), 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);

	assert_int_equal(nftdp_vm_gen_hook_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 0), -10);
	assert_int_equal(nftdp_vm_gen_hook_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 1), 0);
	assert_int_equal(nftdp_vm_gen_hook_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 2), 10);
	assert_int_equal(nftdp_vm_gen_hook_prio(gen, NFPROTO_IPV4, NF_INET_FORWARD, 3), INT32_MAX);
	assert_int_equal(nftdp_vm_gen_hook_prio(gen, NFPROTO_IPV6, NF_INET_FORWARD, 0), INT32_MAX);
	assert_int_equal(nftdp_vm_gen_hook_prio(gen, 200, NF_INET_FORWARD, 0), INT32_MAX);

	/* [0, 1) then [1, 3): the whole hook in two parts */
	for (int i = 0; i < 3; i++)
		pk[i] = gen_tcp4(&t[i]);
	pk[2]->mark = 5; /* m10 marks it 1 too */
	nftdp_vm_gen_run_hook_range(gen, NFPROTO_IPV4, NF_INET_FORWARD, 0, 1, pk, 3, v, &f->ctx);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(v[i], NF_ACCEPT);
		assert_int_equal(pk[i]->mark, 1);
	}
	pk[1]->mark = 7; /* what a step between the two parts might do */
	nftdp_vm_gen_run_hook_range(gen, NFPROTO_IPV4, NF_INET_FORWARD, 1, 2, pk, 3, v, &f->ctx);
	assert_int_equal(v[0], NF_DROP);
	assert_int_equal(v[1], NF_ACCEPT);
	assert_int_equal(pk[1]->mark, 7);
	assert_int_equal(v[2], NF_DROP);
	/* one chain of the middle: z alone marks, p10 does not run */
	pk[0] = gen_tcp4(&t[0]);
	pk[0]->mark = 1;
	nftdp_vm_gen_run_hook_range(gen, NFPROTO_IPV4, NF_INET_FORWARD, 1, 1, pk, 1, v, &f->ctx);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(pk[0]->mark, 2);
	/* a range past the end is cut there; one that starts past it, or of
	 * no chain, or of a list that does not exist, accepts untouched */
	pk[0]->mark = 2;
	nftdp_vm_gen_run_hook_range(gen, NFPROTO_IPV4, NF_INET_FORWARD, 2, 100, pk, 1, v, &f->ctx);
	assert_int_equal(v[0], NF_DROP);
	v[0] = NF_DROP;
	nftdp_vm_gen_run_hook_range(gen, NFPROTO_IPV4, NF_INET_FORWARD, 3, 1, pk, 1, v, &f->ctx);
	assert_int_equal(v[0], NF_ACCEPT);
	v[0] = NF_DROP;
	nftdp_vm_gen_run_hook_range(gen, NFPROTO_IPV4, NF_INET_FORWARD, 0, 0, pk, 1, v, &f->ctx);
	assert_int_equal(v[0], NF_ACCEPT);
	v[0] = NF_DROP;
	nftdp_vm_gen_run_hook_range(gen, 200, NF_INET_FORWARD, 0, 3, pk, 1, v, &f->ctx);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(pk[0]->mark, 2);
	nftdp_vm_gen_destroy(gen);
}

static void test_policies(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *a, *z;
	struct gen_tpkt t;

	/* empty chain with policy drop: drop, the next chain never runs */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	z = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 1, NF_ACCEPT, 1);
	assert_int_equal(gen_rule(b, z, 1, MARK_SET(1), NULL), 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);
	struct nftdp_vm_pkt *p = gen_tcp4(&t);

	assert_int_equal(nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_DROP);
	assert_int_equal(p->mark, 0);
	nftdp_vm_gen_destroy(gen);

	/* policy accept moves on; the last chain's drop policy decides */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	a = gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	z = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 1, NF_DROP, 1);
	assert_int_equal(gen_rule(b, a, 1, MARK_SET(1), NULL), 0);
	assert_int_equal(gen_rule(b, z, 2, MARK_IS(2), verdict(NF_ACCEPT, NULL), NULL), 0);
	gen = gen_build_ok(b);
	p = gen_tcp4(&t);
	assert_int_equal(nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_DROP);
	assert_int_equal(p->mark, 1);

	/* the burst form agrees packet by packet */
	struct gen_tpkt tb[70];
	struct nftdp_vm_pkt *pk[70];
	unsigned int v[70];

	for (int i = 0; i < 70; i++) {
		pk[i] = gen_tcp4(&tb[i]);
		pk[i]->mark = (i % 3 == 0) ? 0 : 2; /* a sets 1 for all: all drop */
	}
	nftdp_vm_gen_run_hook_burst(gen, NFPROTO_IPV4, NF_INET_FORWARD, pk, 70, v, &f->ctx);
	for (int i = 0; i < 70; i++) {
		assert_int_equal(v[i], NF_DROP);
		assert_int_equal(pk[i]->mark, 1);
	}
	nftdp_vm_gen_destroy(gen);

	/* mixed burst: a drops mark 5 and turns 1 into 2, z accepts 2 only */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	a = gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	z = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 1, NF_DROP, 1);
	assert_int_equal(gen_rule(b, a, 1, MARK_IS(5), verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(gen_rule(b, a, 2, MARK_IS(1), MARK_SET(2), NULL), 0);
	assert_int_equal(gen_rule(b, z, 3, MARK_IS(2), MARK_SET(3), verdict(NF_ACCEPT, NULL), NULL),
			 0);
	gen = gen_build_ok(b);
	for (int i = 0; i < 70; i++) {
		pk[i] = gen_tcp4(&tb[i]);
		pk[i]->mark =
		    (uint32_t)(i % 3 == 0 ? 5
			       : i % 3 == 1
				   ? 1
				   : 4); /* 5: a drops, 1: z accepts, 4: z's policy drops */
	}
	nftdp_vm_gen_run_hook_burst(gen, NFPROTO_IPV4, NF_INET_FORWARD, pk, 70, v, &f->ctx);
	for (int i = 0; i < 70; i++) {
		struct gen_tpkt one;
		struct nftdp_vm_pkt *q = gen_tcp4(&one);

		q->mark = (uint32_t)(i % 3 == 0 ? 5 : i % 3 == 1 ? 1 : 4);
		assert_int_equal(
		    v[i], nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_FORWARD, q, &f->ctx));
		assert_int_equal(pk[i]->mark, q->mark);
		assert_int_equal(v[i], i % 3 == 1 ? NF_ACCEPT : NF_DROP);
	}
	nftdp_vm_gen_destroy(gen);
}

static void test_build_errors(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *base, *x, *y;
	struct nftdp_vm_error err;
	struct nftdp_vm_gen *gen = NULL;

	/* a jump loop is -ELOOP at build */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	base = gen_chain(b, NFPROTO_IPV4, "base", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	x = gen_chain(b, NFPROTO_IPV4, "x", false, 0, 0, 0, 1);
	y = gen_chain(b, NFPROTO_IPV4, "y", false, 0, 0, 0, 2);
	assert_int_equal(gen_rule(b, base, 1, verdict(NFT_JUMP, "x"), NULL), 0);
	assert_int_equal(gen_rule(b, x, 2, verdict(NFT_JUMP, "y"), NULL), 0);
	assert_int_equal(gen_rule(b, y, 3, verdict(NFT_JUMP, "x"), NULL), 0);
	assert_int_equal(nftdp_vm_gen_build(b, &gen, &err), -ELOOP);
	assert_null(gen);
	assert_int_equal(err.err, -ELOOP);

	/* a refused expression sticks: build returns it with the message */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	base = gen_chain(b, NFPROTO_IPV4, "base", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	assert_int_equal(gen_rule(b, base, 1, verdict(NF_QUEUE, NULL), NULL), -EOPNOTSUPP);
	assert_int_equal(gen_rule(b, base, 2, verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(nftdp_vm_gen_build(b, &gen, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "queue"));

	/* 17 levels of jumps: -EMLINK */
	char names[20][8];

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	struct nftdp_vm_chain *cs[20];

	cs[0] = gen_chain(b, NFPROTO_IPV4, "base", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	for (int i = 1; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "c%d", i);
		cs[i] = gen_chain(b, NFPROTO_IPV4, names[i], false, 0, 0, 0, (uint32_t)i);
	}
	for (int i = 0; i < 19; i++)
		assert_int_equal(
		    gen_rule(b, cs[i], (uint64_t)i + 1, verdict(NFT_JUMP, names[i + 1]), NULL), 0);
	assert_int_equal(nftdp_vm_gen_build(b, &gen, &err), -EMLINK);

	/* duplicate chain id / name, bad hook */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	struct nftdp_vm_chain_desc d = {
	    .family = NFPROTO_IPV4, .table = "t", .name = "b", .chain_id = 0};
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 0, &x), -EEXIST);
	d.name = "a";
	d.chain_id = 1;
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 0, &x), -EEXIST);
	d.name = "h";
	d.base = true;
	d.policy = NF_ACCEPT;
	d.hook = NFTDP_VM_GEN_HOOK_MAX;
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 0, &x), -EINVAL);
	nftdp_vm_gen_builder_destroy(b);
}

/* ---------- set handles, deferred frees ---------- */

struct fake_set {
	int reclaims;
};

static bool fake_lookup(const struct nftdp_set *s, const void *key, const void **data,
			uint64_t now_ms)
{
	(void)s;
	(void)data;
	(void)now_ms;
	return *(const uint32_t *)key == 42;
}

static const struct nftdp_vm_set_ops fake_ops = {.lookup = fake_lookup};

static int fake_res_set(void *opaque, const char *table, const char *name, uint32_t id,
			struct nftdp_vm_set_info *out)
{
	(void)table;
	(void)id;
	if (strcmp(name, "s"))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->set = opaque;
	out->ops = &fake_ops;
	out->klen = 4;
	return 0;
}

static void fake_reclaim(struct nftdp_set *s, void *arg)
{
	(void)arg;
	((struct fake_set *)(void *)s)->reclaims++;
}

/* set memory's grace hooks: begin closes a batch when something was
 * unlinked (unlinked > 0), end records the newest batch that ended */
struct fake_grace {
	unsigned int unlinked, begins, ends;
	uint64_t seq, ended;
};

static bool fake_grace_begin(void *arg, uint64_t set_gen, uint64_t cookie[2])
{
	struct fake_grace *fg = arg;

	(void)set_gen;
	if (!fg->unlinked)
		return false;
	fg->unlinked = 0;
	fg->begins++;
	cookie[0] = ++fg->seq;
	cookie[1] = 0;
	return true;
}

static void fake_grace_end(void *arg, const uint64_t cookie[2])
{
	struct fake_grace *fg = arg;

	fg->ends++;
	fg->ended = cookie[0];
}

static void count_free(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

static struct nftdp_vm_gen *set_gen(struct gen_fix *f, const struct nftdp_vm_resolver *res)
{
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c;
	struct nftnl_expr *l;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, res, &b), 0);
	c = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	l = ex("lookup");
	nftnl_expr_set_str(l, NFTNL_EXPR_LOOKUP_SET, "s");
	nftnl_expr_set_u32(l, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	assert_int_equal(
	    gen_rule(b, c, 1, meta(NFT_META_MARK, NFT_REG_1), l, verdict(NF_ACCEPT, NULL), NULL),
	    0);
	l = ex("lookup");
	nftnl_expr_set_str(l, NFTNL_EXPR_LOOKUP_SET, "s");
	nftnl_expr_set_u32(l, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	assert_int_equal(gen_rule(b, c, 2, meta(NFT_META_MARK, NFT_REG_1), l, NULL), 0);
	return gen_build_ok(b);
}

/* a chain compiled for one generation is shared by the next (reference
 * counted); its counter keeps counting and is not swept */
static void test_chain_reuse(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *base, *sub, *sub2;
	struct nftdp_vm_stateful_val v;
	struct nftdp_vm_gen *g1, *g2;
	struct nftdp_vm_chain_desc d = {
	    .family = NFPROTO_IPV4, .table = "t", .name = "sub", .chain_id = 1};
	struct gen_tpkt t;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	base = gen_chain(b, NFPROTO_IPV4, "base", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	sub = gen_chain(b, NFPROTO_IPV4, "sub", false, 0, 0, NF_ACCEPT, 1);
	assert_int_equal(gen_rule(b, sub, 7, ex("counter"), MARK_SET(5), NULL), 0);
	assert_int_equal(gen_rule(b, base, 8, ex("counter"), verdict(NFT_JUMP, "sub"), NULL), 0);
	g1 = gen_build_ok(b);
	assert_int_equal(
	    nftdp_vm_gen_run_hook(g1, NFPROTO_IPV4, NF_INET_FORWARD, gen_tcp4(&t), &f->ctx),
	    NF_ACCEPT);

	/* next generation: base compiled again, sub reused */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	assert_int_equal(nftdp_vm_gen_chain_reuse(b, &d, 0, sub), 0);
	assert_int_equal(nftdp_vm_gen_chain_reuse(b, &d, 0, sub), -EEXIST);
	base = gen_chain(b, NFPROTO_IPV4, "base", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	assert_int_equal(gen_rule(b, base, 9, verdict(NFT_JUMP, "sub"), NULL), 0);
	g2 = gen_build_ok(b);
	/* the old generation goes (rule 8 and its counter with it), the shared
	 * chain stays */
	nftdp_vm_gen_destroy(g1);
	assert_int_equal(nftdp_vm_state_sweep(f->st, nftdp_vm_gen_id(g2)) > 0, true);
	struct nftdp_vm_pkt *p = gen_tcp4(&t);

	assert_int_equal(nftdp_vm_gen_run_hook(g2, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_ACCEPT);
	assert_int_equal(p->mark, 5);
	assert_int_equal(nftdp_vm_state_read_rule(f->st, NFPROTO_IPV4, "t", 7, 0, false, &v), 0);
	assert_int_equal(v.packets, 2);
	/* a third generation reusing it through a new chain of its own name */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	sub2 = gen_chain(b, NFPROTO_IPV4, "sub", false, 0, 0, NF_ACCEPT, 1);
	assert_ptr_not_equal(sub2, sub);
	nftdp_vm_gen_builder_destroy(b);
	nftdp_vm_gen_destroy(g2);
}

/*
 * Generation-wide facts are derived from every chain linked into the
 * generation, reused ones included (issue 12: a batch that touched no
 * ct rule built a generation without conntrack), from nat-type base
 * chains and from what the caller notes for the whole ruleset (ct objects).
 */
/* a rate limit expression of 10/second */
static struct nftnl_expr *limit10(void)
{
	struct nftnl_expr *e = ex("limit");

	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 10);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	return e;
}

/*
 * Whether the order of two packets across chains can show
 * (nftdp_vm_gen_shares_state, what the pipeline's burst mode reads): a
 * log, or a rule's own limit in a regular chain several base chains may
 * jump to, yes; counters and a base chain's own limit, no. Derived from
 * every chain, reused ones too.
 */
static void test_shares_state_derived(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c1, *c2, *reg;
	struct nftdp_vm_gen *g1, *g2, *g3;
	struct nftnl_expr *cnt;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c1 = gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 1);
	cnt = ex("counter");
	assert_int_equal(gen_rule(b, c1, 1, cnt, limit10(), NULL), 0);
	g1 = gen_build_ok(b);
	assert_false(nftdp_vm_gen_shares_state(g1));

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c2 = gen_chain(b, NFPROTO_IPV4, "b", true, NF_INET_POST_ROUTING, 0, NF_ACCEPT, 2);
	assert_int_equal(gen_rule(b, c2, 2, ex("log"), NULL), 0);
	g2 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_shares_state(g2));

	/* the log chain reused untouched beside a new regular chain */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	{
		struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4,
						.table = "t",
						.name = "b",
						.base = true,
						.hook = NF_INET_POST_ROUTING,
						.policy = NF_ACCEPT,
						.chain_id = 2};

		assert_int_equal(nftdp_vm_gen_chain_reuse(b, &d, 0, c2), 0);
	}
	g3 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_shares_state(g3));
	nftdp_vm_gen_destroy(g3);

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	reg = gen_chain(b, NFPROTO_IPV4, "c", false, 0, 0, NF_ACCEPT, 3);
	assert_int_equal(gen_rule(b, reg, 3, limit10(), NULL), 0);
	g3 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_shares_state(g3));
	nftdp_vm_gen_destroy(g3);
	nftdp_vm_gen_destroy(g2);
	nftdp_vm_gen_destroy(g1);
}

/*
 * Whether packet order shows at all (nftdp_vm_gen_order_free, what lets the
 * pipeline run a burst's IPv4 and IPv6 packets as two bursts): counters
 * alone, yes; a base chain's own limit (not shared state) still counts, as
 * does a log; a reused chain keeps its fact.
 */
static void test_order_free_derived(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c1, *c2;
	struct nftdp_vm_gen *g1, *g2, *g3;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c1 = gen_chain(b, NFPROTO_INET, "a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 1);
	assert_int_equal(gen_rule(b, c1, 1, ex("counter"), NULL), 0);
	g1 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_order_free(g1));

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c2 = gen_chain(b, NFPROTO_INET, "b", true, NF_INET_FORWARD, 0, NF_ACCEPT, 2);
	assert_int_equal(gen_rule(b, c2, 2, ex("counter"), limit10(), NULL), 0);
	g2 = gen_build_ok(b);
	assert_false(nftdp_vm_gen_shares_state(g2)); /* a base chain's own limit */
	assert_false(nftdp_vm_gen_order_free(g2));

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	{
		struct nftdp_vm_chain_desc d = {.family = NFPROTO_INET,
						.table = "t",
						.name = "b",
						.base = true,
						.hook = NF_INET_FORWARD,
						.policy = NF_ACCEPT,
						.chain_id = 2};

		assert_int_equal(nftdp_vm_gen_chain_reuse(b, &d, 0, c2), 0);
	}
	g3 = gen_build_ok(b);
	assert_false(nftdp_vm_gen_order_free(g3));
	nftdp_vm_gen_destroy(g3);

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c2 = gen_chain(b, NFPROTO_INET, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 3);
	assert_int_equal(gen_rule(b, c2, 3, ex("log"), NULL), 0);
	g3 = gen_build_ok(b);
	assert_false(nftdp_vm_gen_order_free(g3));
	assert_false(nftdp_vm_gen_order_free(NULL));
	nftdp_vm_gen_destroy(g3);
	nftdp_vm_gen_destroy(g2);
	nftdp_vm_gen_destroy(g1);
}

/*
 * Whether synproxy runs (nftdp_vm_gen_uses_synproxy: the dataplane's step
 * before confirm acts only then, as the kernel's hooks exist only while a
 * synproxy does): not for conntrack alone, yes for the statement, and a
 * reused chain keeps its fact.
 */
static void test_synproxy_derived(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c1, *c2;
	struct nftdp_vm_gen *g1, *g2, *g3;
	struct nftnl_expr *ct;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c1 = gen_chain(b, NFPROTO_INET, "a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 1);
	ct = ex("ct");
	nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	assert_int_equal(gen_rule(b, c1, 1, ct, NULL), 0);
	g1 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_uses_ct(g1, NFPROTO_IPV4));
	assert_false(nftdp_vm_gen_uses_synproxy(g1));

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c2 = gen_chain(b, NFPROTO_INET, "b", true, NF_INET_FORWARD, 0, NF_ACCEPT, 2);
	assert_int_equal(gen_rule(b, c2, 2, ex("synproxy"), NULL), 0);
	g2 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_uses_synproxy(g2));

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	{
		struct nftdp_vm_chain_desc d = {.family = NFPROTO_INET,
						.table = "t",
						.name = "b",
						.base = true,
						.hook = NF_INET_FORWARD,
						.policy = NF_ACCEPT,
						.chain_id = 2};

		assert_int_equal(nftdp_vm_gen_chain_reuse(b, &d, 0, c2), 0);
	}
	g3 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_uses_synproxy(g3));
	assert_false(nftdp_vm_gen_uses_synproxy(NULL));
	nftdp_vm_gen_destroy(g3);
	nftdp_vm_gen_destroy(g2);
	nftdp_vm_gen_destroy(g1);
}

static void test_facts_derived(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *fw, *other;
	struct nftdp_vm_gen *g1, *g2, *g3, *g4;
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_INET,
					.table = "fw",
					.name = "fwd",
					.base = true,
					.hook = NF_INET_FORWARD,
					.policy = NF_DROP,
					.chain_id = 1};
	struct nftdp_vm_chain_desc dn = {.family = NFPROTO_IPV4,
					 .table = "n",
					 .name = "post",
					 .base = true,
					 .hook = NF_INET_POST_ROUTING,
					 .policy = NF_ACCEPT,
					 .nat = true,
					 .chain_id = 3};
	struct nftdp_vm_chain *nat = NULL;
	struct nftnl_expr *ct;

	/* g1: inet fw with ct state: both families */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 0, &fw), 0);
	ct = ex("ct");
	nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	assert_int_equal(gen_rule(b, fw, 1, ct, verdict(NF_ACCEPT, NULL), NULL), 0);
	g1 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_uses_ct(g1, NFPROTO_IPV4));
	assert_true(nftdp_vm_gen_uses_ct(g1, NFPROTO_IPV6));

	/* g2: fw reused untouched, a new chain elsewhere without ct: the facts
	 * of the reused chain stay */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	assert_int_equal(nftdp_vm_gen_chain_reuse(b, &d, 0, fw), 0);
	other = gen_chain(b, NFPROTO_IPV4, "x", true, NF_INET_FORWARD, 10, NF_ACCEPT, 2);
	assert_int_equal(gen_rule(b, other, 2, MARK_SET(1), NULL), 0);
	g2 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_uses_ct(g2, NFPROTO_IPV4));
	assert_true(nftdp_vm_gen_uses_ct(g2, NFPROTO_IPV6));
	nftdp_vm_gen_destroy(g1);

	/* g3: without fw; a nat-type base chain with no ct rule takes ct for
	 * its family only */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	assert_int_equal(nftdp_vm_gen_chain_create(b, &dn, 100, &nat), 0);
	g3 = gen_build_ok(b);
	assert_true(nftdp_vm_gen_uses_ct(g3, NFPROTO_IPV4));
	assert_false(nftdp_vm_gen_uses_ct(g3, NFPROTO_IPV6));

	/* g4: no chain at all; a ct object noted in an ip6 table */
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	nftdp_vm_gen_note_ct(b, NFPROTO_IPV6);
	g4 = gen_build_ok(b);
	assert_false(nftdp_vm_gen_uses_ct(g4, NFPROTO_IPV4));
	assert_true(nftdp_vm_gen_uses_ct(g4, NFPROTO_IPV6));

	/* and nothing noted, no chain: no conntrack */
	nftdp_vm_gen_destroy(g4);
	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	g4 = gen_build_ok(b);
	assert_false(nftdp_vm_gen_uses_ct(g4, NFPROTO_IPV4));
	assert_false(nftdp_vm_gen_uses_ct(g4, NFPROTO_IPV6));
	nftdp_vm_gen_destroy(g4);
	nftdp_vm_gen_destroy(g3);
	nftdp_vm_gen_destroy(g2);
}

static void test_sets_and_reclaim(void **state)
{
	struct gen_fix *f = *state;
	struct fake_set fs = {0};
	struct nftdp_vm_resolver res = {.opaque = &fs, .set = fake_res_set};
	struct nftdp_vm_gen_domain_config cfg = {
	    .max_readers = 2, .state = f->st, .set_reclaim = fake_reclaim};
	struct nftdp_vm_gen_domain *dom;
	struct fake_grace fg = {0};
	atomic_int freed = 0;
	struct gen_tpkt t;
	unsigned int n;

	assert_int_equal(nftdp_vm_gen_domain_create(&cfg, &dom), 0);
	nftdp_vm_gen_domain_grace(dom, fake_grace_begin, fake_grace_end, &fg);
	assert_null(nftdp_vm_gen_acquire(dom));
	struct nftdp_vm_gen *g1 = set_gen(f, &res);

	/* one handle, recorded once though two rules use the set */
	struct nftdp_set *const *sets = nftdp_vm_gen_sets(g1, &n);

	assert_int_equal(n, 1);
	assert_ptr_equal(sets[0], (void *)&fs);
	struct nftdp_vm_pkt *p = gen_tcp4(&t);

	p->mark = 42;
	assert_int_equal(nftdp_vm_gen_run_hook(g1, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_ACCEPT);
	p->mark = 41;
	assert_int_equal(nftdp_vm_gen_run_hook(g1, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_DROP);
	assert_int_equal(nftdp_vm_gen_on_free(g1, count_free, &freed), 0);
	nftdp_vm_gen_publish(dom, g1);
	assert_ptr_equal(nftdp_vm_gen_acquire(dom), g1);

	/* a registered online reader that does not quiesce holds g1 */
	assert_int_equal(nftdp_vm_gen_reader_register(dom, 1), 0);
	assert_int_equal(nftdp_vm_gen_reader_register(dom, 2), -EINVAL);
	const struct nftdp_vm_gen *held = nftdp_vm_gen_acquire(dom);
	struct nftdp_vm_gen *g2 = set_gen(f, &res);

	assert_true(nftdp_vm_gen_id(g2) > nftdp_vm_gen_id(g1));
	assert_int_equal(nftdp_vm_gen_on_free(g2, count_free, &freed), 0);
	fg.unlinked = 1; /* this commit unlinked set memory */
	nftdp_vm_gen_publish(dom, g2);
	assert_int_equal(nftdp_vm_gen_pending(dom), 1);
	assert_int_equal(nftdp_vm_gen_reclaim(dom), 0);
	assert_int_equal(atomic_load(&freed), 0);
	assert_int_equal(fg.begins, 1);
	assert_int_equal(fg.ends, 0); /* the reader may hold it */
	/* a gc without a commit: a batch of its own, a token taken after it */
	fg.unlinked = 1;
	assert_int_equal(nftdp_vm_gen_reclaim(dom), 0);
	assert_int_equal(fg.begins, 2);
	assert_int_equal(fg.ends, 0);
	/* still usable */
	p->mark = 42;
	assert_int_equal(nftdp_vm_gen_run_hook(held, NFPROTO_IPV4, NF_INET_FORWARD, p, &f->ctx),
			 NF_ACCEPT);
	nftdp_vm_gen_quiesce(dom, 1);
	assert_int_equal(nftdp_vm_gen_reclaim(dom), 1);
	assert_int_equal(nftdp_vm_gen_pending(dom), 0);
	assert_int_equal(atomic_load(&freed), 1);
	/* one end, for the newest batch: it covers the first */
	assert_int_equal(fg.ends, 1);
	assert_int_equal(fg.ended, 2);
	/* unlinked after the reader's last quiescent state: waits for it */
	fg.unlinked = 1;
	assert_int_equal(nftdp_vm_gen_reclaim(dom), 0);
	assert_int_equal(fg.begins, 3);
	assert_int_equal(fg.ends, 1);
	nftdp_vm_gen_quiesce(dom, 1);
	nftdp_vm_gen_reclaim(dom);
	assert_int_equal(fg.ends, 2);
	assert_int_equal(fg.ended, 3);
	assert_int_equal(fs.reclaims, 0); /* the old per-set hook: never */
	/* offline readers hold nothing: publish frees at once */
	nftdp_vm_gen_reader_offline(dom, 1);
	nftdp_vm_gen_publish(dom, set_gen(f, &res));
	assert_int_equal(nftdp_vm_gen_pending(dom), 0);
	assert_int_equal(atomic_load(&freed), 2);
	nftdp_vm_gen_reader_online(dom, 1);
	nftdp_vm_gen_publish(dom, set_gen(f, &res));
	assert_int_equal(nftdp_vm_gen_pending(dom), 1);
	nftdp_vm_gen_reader_unregister(dom, 1);
	fg.unlinked = 1;
	nftdp_vm_gen_synchronize(dom);
	assert_int_equal(nftdp_vm_gen_pending(dom), 0);
	assert_int_equal(fg.ends, 3);
	assert_int_equal(fg.ended, fg.seq);
	nftdp_vm_gen_domain_destroy(dom);
	assert_int_equal(fs.reclaims, 0);
}

/* ---------- stress: 2 readers, 10 000 generations ---------- */

#define STRESS_GENS 10000
#define STRESS_READERS 2
#define STRESS_BURST 32

/*
 * Ruleset m (1 or 2): ip forward, three chains and a jump.
 *   pre  (prio -10, accept): mark set m; counter; jump sub
 *   sub  (regular):          mark == m -> mark set m * 0x11
 *   post (prio 10, drop):    mark == m * 0x11 -> accept
 * A packet accepted with mark 0x11 or 0x22 saw one generation; a mix of
 * the two would end in post's drop policy.
 */
static struct nftdp_vm_gen *ruleset(struct nftdp_vm_state *st, uint32_t m, atomic_int *freed)
{
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *pre, *sub, *post;
	struct nftdp_vm_gen *gen = NULL;
	struct nftdp_vm_error err;

	assert_int_equal(nftdp_vm_gen_builder_create(st, NULL, &b), 0);
	pre = gen_chain(b, NFPROTO_IPV4, "pre", true, NF_INET_FORWARD, -10, NF_ACCEPT, 0);
	sub = gen_chain(b, NFPROTO_IPV4, "sub", false, 0, 0, 0, 1);
	post = gen_chain(b, NFPROTO_IPV4, "post", true, NF_INET_FORWARD, 10, NF_DROP, 2);
	assert_int_equal(
	    gen_rule(b, pre, 1, MARK_SET(m), ex("counter"), verdict(NFT_JUMP, "sub"), NULL), 0);
	assert_int_equal(gen_rule(b, sub, 2, MARK_IS(m), MARK_SET(m * 0x11), NULL), 0);
	assert_int_equal(gen_rule(b, post, 3, MARK_IS(m * 0x11), verdict(NF_ACCEPT, NULL), NULL),
			 0);
	assert_int_equal(nftdp_vm_gen_build(b, &gen, &err), 0);
	assert_int_equal(nftdp_vm_gen_on_free(gen, count_free, freed), 0);
	return gen;
}

struct reader {
	pthread_t tid;
	unsigned int id;
	struct nftdp_vm_gen_domain *dom;
	struct nftdp_vm_state *st;
	atomic_bool *stop;
	/* results, read after join */
	uint64_t bursts, mixed, bad, switches, null_gen;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct nftdp_vm_ctx ctx = {.worker = r->id, .state = r->st, .prng = 7};
	struct gen_tpkt tb[STRESS_BURST];
	struct nftdp_vm_pkt *pk[STRESS_BURST];
	unsigned int v[STRESS_BURST];
	uint32_t last = 0;

	if (nftdp_vm_gen_reader_register(r->dom, r->id) != 0) {
		r->bad++;
		return NULL;
	}
	while (!atomic_load_explicit(r->stop, memory_order_relaxed)) {
		/* once per burst */
		const struct nftdp_vm_gen *gen = nftdp_vm_gen_acquire(r->dom);

		if (!gen) {
			r->null_gen++;
			nftdp_vm_gen_quiesce(r->dom, r->id);
			continue;
		}
		uint64_t id = nftdp_vm_gen_id(gen);

		for (int i = 0; i < STRESS_BURST; i++)
			pk[i] = gen_tcp4(&tb[i]);
		nftdp_vm_gen_run_hook_burst(gen, NFPROTO_IPV4, NF_INET_FORWARD, pk, STRESS_BURST, v,
					    &ctx);
		/* also per packet, same pointer: a freed gen would trip ASan here */
		struct gen_tpkt one;
		struct nftdp_vm_pkt *q = gen_tcp4(&one);
		unsigned int vq =
		    nftdp_vm_gen_run_hook(gen, NFPROTO_IPV4, NF_INET_FORWARD, q, &ctx);

		if (nftdp_vm_gen_id(gen) != id || vq != NF_ACCEPT || q->mark != pk[0]->mark)
			r->mixed++;
		for (int i = 0; i < STRESS_BURST; i++) {
			if (v[i] != NF_ACCEPT || (pk[i]->mark != 0x11 && pk[i]->mark != 0x22))
				r->bad++;
			if (pk[i]->mark != pk[0]->mark)
				r->mixed++;
		}
		if (pk[0]->mark != last)
			r->switches++;
		last = pk[0]->mark;
		r->bursts++;
		nftdp_vm_gen_quiesce(r->dom, r->id);
	}
	nftdp_vm_gen_reader_unregister(r->dom, r->id);
	return NULL;
}

static void test_stress(void **state)
{
	struct nftdp_vm_state_config scfg = {
	    .n_workers = STRESS_READERS, .max_counters = 64, .max_cells = 16, .log_ring_size = 8};
	struct nftdp_vm_state *st;
	struct nftdp_vm_gen_domain *dom;
	struct reader rd[STRESS_READERS];
	atomic_bool stop = false;
	atomic_int freed = 0;
	unsigned int max_pending = 0, syncs = 0;
	uint64_t t0 = nftdp_now_ms();

	(void)state;
	assert_int_equal(nftdp_vm_state_create(&scfg, &st), 0);
	struct nftdp_vm_gen_domain_config cfg = {.max_readers = STRESS_READERS, .state = st};

	assert_int_equal(nftdp_vm_gen_domain_create(&cfg, &dom), 0);
	nftdp_vm_gen_publish(dom, ruleset(st, 1, &freed));
	for (unsigned int i = 0; i < STRESS_READERS; i++) {
		rd[i] = (struct reader){.id = i, .dom = dom, .st = st, .stop = &stop};
		assert_int_equal(pthread_create(&rd[i].tid, NULL, reader_main, &rd[i]), 0);
	}
	for (unsigned int g = 1; g < STRESS_GENS; g++) {
		nftdp_vm_gen_publish(dom, ruleset(st, 1 + (g & 1), &freed));
		if (nftdp_vm_gen_pending(dom) > max_pending)
			max_pending = nftdp_vm_gen_pending(dom);
		/* bound memory when readers lag (2 cores, 3 threads) */
		if (nftdp_vm_gen_pending(dom) >= 256) {
			nftdp_vm_gen_synchronize(dom);
			syncs++;
		}
	}
	atomic_store(&stop, true);
	for (unsigned int i = 0; i < STRESS_READERS; i++)
		pthread_join(rd[i].tid, NULL);
	nftdp_vm_gen_synchronize(dom);
	assert_int_equal(nftdp_vm_gen_pending(dom), 0);
	/* every generation but the current one went through QSBR */
	assert_int_equal(atomic_load(&freed), STRESS_GENS - 1);

	uint64_t bursts = 0, switches = 0;

	for (unsigned int i = 0; i < STRESS_READERS; i++) {
		assert_int_equal(rd[i].bad, 0);
		assert_int_equal(rd[i].mixed, 0);
		assert_int_equal(rd[i].null_gen, 0);
		bursts += rd[i].bursts;
		switches += rd[i].switches;
	}
	/* the counter survived every recompile: pre's rule counted all runs */
	struct nftdp_vm_stateful_val val;

	assert_int_equal(nftdp_vm_state_read_rule(st, NFPROTO_IPV4, "t", 1, 2, false, &val), 0);
	assert_int_equal(val.packets, bursts * (STRESS_BURST + 1));
	nftdp_vm_gen_domain_destroy(dom);
	assert_int_equal(atomic_load(&freed), STRESS_GENS);
	nftdp_vm_state_destroy(st);

	double dt = (double)(nftdp_now_ms() - t0) / 1000;

	printf("# stress: %d generations, %llu bursts, %llu ruleset switches seen, "
	       "max pending %u, %u synchronize, %.2f s\n",
	       STRESS_GENS, (unsigned long long)bursts, (unsigned long long)switches, max_pending,
	       syncs, dt);
	assert_true(bursts > 0);
	assert_true(dt < 60.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_priority_order, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_accept_moves_on_drop_ends, fix_setup,
					    fix_teardown),
	    cmocka_unit_test_setup_teardown(test_policies, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_devices_and_prio_window, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_hook_range, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_one_chain_burst, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_build_errors, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_sets_and_reclaim, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_chain_reuse, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_facts_derived, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_shares_state_derived, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_order_free_derived, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_synproxy_derived, fix_setup, fix_teardown),
	    cmocka_unit_test(test_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
