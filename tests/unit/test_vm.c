// SPDX-License-Identifier: BSD-3-Clause
/*
 * VM unit tests built from libnftnl expressions: chain semantics (jump,
 * goto, return, policies, break, depth, loops), compile-time validation
 * errors as the kernel's, stateful expressions and objects (counter, quota,
 * limit, last, numgen, objref) and their survival across recompiles, sets
 * through a fake backend (lookup, maps, verdict maps, dynset), ct through
 * fake ct ops, log, reject, fwd, dup, and the burst variant.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>

#include "nft_build.h"
#include "nftdp_vm.h"

/* ---------- rules (the expression builders: tests/lib/nft_build.h) ---------- */

static struct nftnl_rule *rule_v(uint64_t handle, va_list ap)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, handle);
	while ((e = va_arg(ap, struct nftnl_expr *)))
		nftnl_rule_add_expr(r, e);
	return r;
}

/* ---------- a tiny ruleset: chains by name, sets, objects ---------- */

#define MAX_CHAINS 40

struct world {
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *chains[MAX_CHAINS];
	const char *names[MAX_CHAINS];
	int n_chains;
	struct nftdp_vm_set_info sets[4];
	const char *set_names[4];
	int n_sets;
	const struct nftdp_vm_obj *objs[4];
	const char *obj_names[4];
	int n_objs;
	struct nftdp_vm_resolver res;
	struct nftdp_vm_ctx ctx;
	struct nftdp_vm_error err;
	uint8_t family;
};

static struct nftdp_vm_chain *res_chain(void *o, const char *table, const char *name, uint32_t id)
{
	struct world *w = o;

	(void)table;
	(void)id;
	for (int i = 0; i < w->n_chains; i++)
		if (name && !strcmp(w->names[i], name))
			return w->chains[i];
	return NULL;
}

static int res_set(void *o, const char *table, const char *name, uint32_t id,
		   struct nftdp_vm_set_info *out)
{
	struct world *w = o;

	(void)table;
	(void)id;
	for (int i = 0; i < w->n_sets; i++) {
		if (name && !strcmp(w->set_names[i], name)) {
			*out = w->sets[i];
			return 0;
		}
	}
	return -ENOENT;
}

static const struct nftdp_vm_obj *res_obj(void *o, const char *table, const char *name,
					  uint32_t type)
{
	struct world *w = o;

	(void)table;
	(void)type;
	for (int i = 0; i < w->n_objs; i++)
		if (!strcmp(w->obj_names[i], name))
			return w->objs[i];
	return NULL;
}

static int world_setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct nftdp_vm_state_config cfg = {.n_workers = 4,
					    .max_counters = 256,
					    .max_cells = 256,
					    .log_ring_size = 8,
					    .hash_seed = 7};

	assert_int_equal(nftdp_vm_state_create(&cfg, &w->st), 0);
	nftdp_vm_state_gen_begin(w->st);
	w->res = (struct nftdp_vm_resolver){w, res_chain, res_set, res_obj};
	w->ctx.state = w->st;
	w->ctx.worker = 0;
	w->ctx.now_ns = 10ull * 1000000000ull;
	w->ctx.now_ms = 10000;
	w->ctx.prng = 12345;
	w->family = NFPROTO_IPV4;
	*state = w;
	return 0;
}

static int world_teardown(void **state)
{
	struct world *w = *state;

	for (int i = 0; i < w->n_chains; i++)
		nftdp_vm_chain_destroy(w->chains[i]);
	for (int i = 0; i < w->n_objs; i++)
		nftdp_vm_obj_destroy((struct nftdp_vm_obj *)(uintptr_t)w->objs[i]);
	nftdp_vm_state_destroy(w->st);
	free(w);
	return 0;
}

static struct nftdp_vm_chain *chain_hook(struct world *w, const char *name, bool base,
					 uint32_t policy, uint8_t hook)
{
	struct nftdp_vm_chain_desc d = {
	    .family = w->family,
	    .table = "t",
	    .name = name,
	    .base = base,
	    .hook = hook,
	    .policy = policy,
	    .chain_id = (uint32_t)w->n_chains,
	};
	struct nftdp_vm_chain *c;

	assert_true(w->n_chains < MAX_CHAINS);
	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c), 0);
	w->names[w->n_chains] = name;
	w->chains[w->n_chains++] = c;
	return c;
}

static struct nftdp_vm_chain *chain(struct world *w, const char *name, bool base, uint32_t policy)
{
	return chain_hook(w, name, base, policy, NF_INET_FORWARD);
}

/* add a rule; returns the compile result */
static int add(struct world *w, struct nftdp_vm_chain *c, uint64_t handle, ...)
{
	struct nftnl_rule *r;
	va_list ap;
	int rc;

	va_start(ap, handle);
	r = rule_v(handle, ap);
	va_end(ap);
	rc = nftdp_vm_chain_add_rule(c, r, &w->res, w->st, &w->err);
	nftnl_rule_free(r);
	return rc;
}

/* ---------- packets ---------- */

struct tpkt {
	uint8_t buf[128];
	struct nftdp_vm_pkt pkt;
};

/* IPv4 TCP 10.0.0.1:1234 -> 10.0.0.2:dport behind a 14 byte ethernet header */
static struct nftdp_vm_pkt *tcp4(struct tpkt *t, uint16_t dport)
{
	static const uint8_t hdr[] = {
	    0, 1, 2, 3, 4,  5, 6, 7, 8,	 9, 10,	  11,	0x08, 0x00, 0x45, 0, 0,	   40,
	    0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0,	  1,	10,   0,    0,	  2, 0x04, 0xd2,
	    0, 0, 0, 0, 0,  1, 0, 0, 0,	 0, 0x50, 0x02, 0xff, 0xff, 0,	  0, 0,	   0,
	};

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, hdr, sizeof(hdr));
	t->buf[36] = (uint8_t)(dport >> 8);
	t->buf[37] = (uint8_t)dport;
	nftdp_vm_pkt_init(&t->pkt, t->buf, sizeof(hdr), 0, 14);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	t->pkt.iif = 1;
	t->pkt.iifname = "dp0";
	return &t->pkt;
}

#define RUN(w, c, p) nftdp_vm_run_chain((c), (p), &(w)->ctx)
static const uint16_t be22 = 0x1600, be80 = 0x5000;

/* tcp dport == port (2 bytes, network order as the register holds it) */
#define DPORT(p)                                                                                   \
	payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1), cmp(NFT_CMP_EQ, NFT_REG_1, &(p), 2)

/* ---------- chain semantics ---------- */

static void test_policy(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *a = chain(w, "a", true, NF_ACCEPT);
	struct nftdp_vm_chain *d = chain(w, "d", true, NF_DROP);
	struct nftdp_vm_counter s;
	struct tpkt t;

	assert_int_equal(RUN(w, a, tcp4(&t, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, d, tcp4(&t, 22)), NF_DROP);
	assert_int_equal(nftdp_vm_chain_stats(d, w->st, &s), 0);
	assert_int_equal(s.packets, 1);
	assert_int_equal(s.bytes, 40);
	/* set by the control thread (a chain update with counters), the
	 * workers counting on top; by name as by chain */
	assert_int_equal(nftdp_vm_state_set_chain(w->st, w->family, "t", "d", 12, 3456), 0);
	assert_int_equal(nftdp_vm_chain_stats(d, w->st, &s), 0);
	assert_int_equal(s.packets, 12);
	assert_int_equal(s.bytes, 3456);
	assert_int_equal(RUN(w, d, tcp4(&t, 22)), NF_DROP);
	assert_int_equal(nftdp_vm_state_read_chain(w->st, w->family, "t", "d", &s), 0);
	assert_int_equal(s.packets, 13);
	assert_int_equal(s.bytes, 3496);
	assert_int_equal(nftdp_vm_state_set_chain(w->st, w->family, "t", "d", 0, 0), 0);
	assert_int_equal(nftdp_vm_state_read_chain(w->st, w->family, "t", "d", &s), 0);
	assert_int_equal(s.packets, 0);
	assert_int_equal(s.bytes, 0);
	assert_int_equal(nftdp_vm_state_set_chain(w->st, w->family, "t", "nope", 1, 1), -ENOENT);
	assert_int_equal(nftdp_vm_state_read_chain(w->st, w->family, "t", "nope", &s), -ENOENT);
	assert_int_equal(RUN(w, d, tcp4(&t, 22)), NF_DROP);
	assert_int_equal(nftdp_vm_chain_stats(d, w->st, &s), 0);
	assert_int_equal(s.packets, 1);
	assert_int_equal(s.bytes, 40);
	/* break: a mismatching rule falls through to the next one */
	assert_int_equal(add(w, d, 1, DPORT(be80), verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(add(w, d, 2, DPORT(be22), verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(RUN(w, d, tcp4(&t, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, d, tcp4(&t, 80)), NF_DROP);
	assert_int_equal(RUN(w, d, tcp4(&t, 99)), NF_DROP);
	assert_int_equal(nftdp_vm_chain_n_rules(d), 2);
	assert_int_equal(nftdp_vm_chain_n_ops(d), 4); /* payload+cmp fused */
	/* continue verdict goes on with the next rule */
	assert_int_equal(add(w, a, 1, verdict(NFT_CONTINUE, NULL), NULL), 0);
	assert_int_equal(add(w, a, 2, verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_DROP);
	/* policies other than accept/drop are refused */
	struct nftdp_vm_chain_desc bad = {
	    .table = "t", .name = "x", .base = true, .policy = NF_QUEUE};
	struct nftdp_vm_chain *x;
	assert_int_equal(nftdp_vm_chain_create(&bad, w->st, &x), -EINVAL);
}

/* Runs of rules with the same leading match go through the VM's prefilter:
 * the verdicts, marks, jumps and register reuse must be those of rule by
 * rule evaluation. */
static void test_prefilter_runs(void **state)
{
	static const uint16_t be443 = 0xbb01;
	struct world *w = *state;
	struct nftdp_vm_chain *base = chain(w, "pf", true, NF_DROP);
	struct nftdp_vm_chain *sub = chain(w, "pfsub", false, 0);
	struct tpkt t;

	assert_int_equal(
	    add(w, sub, 1, imm32(NFT_REG_1, 5), meta_set(NFT_META_MARK, NFT_REG_1), NULL), 0);
	/* the leading register is overwritten by the rule's own immediate */
	assert_int_equal(add(w, base, 1, DPORT(be22), imm32(NFT_REG_1, 1),
			     meta_set(NFT_META_MARK, NFT_REG_1), NULL),
			 0);
	assert_int_equal(add(w, base, 2, DPORT(be80), verdict(NFT_JUMP, "pfsub"), NULL), 0);
	assert_int_equal(add(w, base, 3, DPORT(be22), imm32(NFT_REG_1, 2),
			     meta_set(NFT_META_MARK, NFT_REG_1), NULL),
			 0);
	assert_int_equal(add(w, base, 4, DPORT(be443), verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(add(w, base, 5, DPORT(be22), verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(add(w, base, 6, DPORT(be80), imm32(NFT_REG_1, 6),
			     meta_set(NFT_META_MARK, NFT_REG_1), NULL),
			 0);
	assert_int_equal(add(w, base, 7, verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(nftdp_vm_validate(base, &w->err), 0);

	for (int rep = 0; rep < 3; rep++) {
		assert_int_equal(RUN(w, base, tcp4(&t, 22)), NF_ACCEPT);
		assert_int_equal(t.pkt.mark, 2);
		assert_int_equal(RUN(w, base, tcp4(&t, 80)), NF_ACCEPT);
		assert_int_equal(t.pkt.mark, 6); /* sub set 5, rule 6 then 6 */
		assert_int_equal(RUN(w, base, tcp4(&t, 443)), NF_DROP);
		assert_int_equal(t.pkt.mark, 0);
		assert_int_equal(RUN(w, base, tcp4(&t, 99)), NF_ACCEPT);
		assert_int_equal(t.pkt.mark, 0);
	}
}

static void test_jump_return_goto(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *base = chain(w, "base", true, NF_DROP);
	struct nftdp_vm_chain *sub = chain(w, "sub", false, 0);
	struct nftdp_vm_chain *sub2 = chain(w, "sub2", false, 0);
	struct nftdp_vm_chain *g = chain(w, "g", false, 0);
	struct tpkt t;

	/* sub: port 22 accept; port 80 return; else falls off the end */
	assert_int_equal(add(w, sub, 1, DPORT(be22), verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(add(w, sub, 2, DPORT(be80), verdict(NFT_RETURN, NULL), NULL), 0);
	assert_int_equal(
	    add(w, sub, 3, imm32(NFT_REG_1, 7), meta_set(NFT_META_MARK, NFT_REG_1), NULL), 0);
	/* g: sets mark 9 and ends; goto does not come back */
	assert_int_equal(
	    add(w, g, 1, imm32(NFT_REG_1, 9), meta_set(NFT_META_MARK, NFT_REG_1), NULL), 0);
	assert_int_equal(add(w, sub2, 1, verdict(NFT_GOTO, "g"), NULL), 0);
	assert_int_equal(add(w, sub2, 2, verdict(NF_ACCEPT, NULL), NULL), 0);

	assert_int_equal(add(w, base, 1, verdict(NFT_JUMP, "sub"), NULL), 0);
	assert_int_equal(add(w, base, 2, DPORT(be80), verdict(NFT_JUMP, "sub2"), NULL), 0);
	assert_int_equal(add(w, base, 3, verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(nftdp_vm_validate(base, &w->err), 0);

	assert_int_equal(RUN(w, base, tcp4(&t, 22)), NF_ACCEPT); /* accepted inside sub */
	/* 99: sub sets mark 7 and falls off its end: back in base, rule 3 accepts */
	assert_int_equal(RUN(w, base, tcp4(&t, 99)), NF_ACCEPT);
	assert_int_equal(t.pkt.mark, 7);
	/* 80: sub returns; base jumps to sub2 which goes to g; g ends: back in
	 * base after the jump in rule 2 (goto replaced sub2), rule 3 accepts */
	assert_int_equal(RUN(w, base, tcp4(&t, 80)), NF_ACCEPT);
	assert_int_equal(t.pkt.mark, 9);

	/* goto from the base chain: end of the target means the policy */
	struct nftdp_vm_chain *b2 = chain(w, "b2", true, NF_DROP);
	assert_int_equal(add(w, b2, 1, verdict(NFT_GOTO, "g"), NULL), 0);
	assert_int_equal(add(w, b2, 2, verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(RUN(w, b2, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(t.pkt.mark, 9);
	/* return in a base chain: policy */
	struct nftdp_vm_chain *b3 = chain(w, "b3", true, NF_ACCEPT);
	assert_int_equal(add(w, b3, 1, verdict(NFT_RETURN, NULL), NULL), 0);
	assert_int_equal(add(w, b3, 2, verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(RUN(w, b3, tcp4(&t, 1)), NF_ACCEPT);
}

static void test_jump_errors(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *base = chain(w, "base", true, NF_ACCEPT);
	struct nftdp_vm_chain *other = chain(w, "other", true, NF_ACCEPT);
	struct nftdp_vm_chain *a = chain(w, "a", false, 0);
	struct nftdp_vm_chain *b = chain(w, "b", false, 0);

	(void)other;
	assert_int_equal(add(w, base, 1, verdict(NFT_JUMP, "nosuch"), NULL), -ENOENT);
	assert_int_equal(add(w, base, 1, verdict(NFT_JUMP, "other"), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, base, 1, verdict(NFT_JUMP, NULL), NULL), -EINVAL);
	/* loop a -> b -> a */
	assert_int_equal(add(w, base, 1, verdict(NFT_JUMP, "a"), NULL), 0);
	assert_int_equal(add(w, a, 1, verdict(NFT_JUMP, "b"), NULL), 0);
	assert_int_equal(add(w, b, 1, verdict(NFT_GOTO, "a"), NULL), 0);
	assert_int_equal(nftdp_vm_validate(base, &w->err), -ELOOP);
	assert_int_equal(w->err.err, -ELOOP);
	/* self loop */
	struct nftdp_vm_chain *b2 = chain(w, "b2", true, NF_ACCEPT);
	struct nftdp_vm_chain *s = chain(w, "s", false, 0);
	assert_int_equal(add(w, b2, 1, verdict(NFT_JUMP, "s"), NULL), 0);
	assert_int_equal(add(w, s, 1, verdict(NFT_JUMP, "s"), NULL), 0);
	assert_int_equal(nftdp_vm_validate(b2, NULL), -ELOOP);
}

static void test_jump_depth(void **state)
{
	struct world *w = *state;
	static char names[20][8];
	struct nftdp_vm_chain *c[20];
	struct tpkt t;

	/* base(level 0) -> c1 .. c15: 15 levels of jumps are fine, c16 is not */
	c[0] = chain(w, "base", true, NF_DROP);
	for (int i = 1; i <= 16; i++) {
		snprintf(names[i], sizeof(names[i]), "c%d", i);
		c[i] = chain(w, names[i], false, 0);
	}
	for (int i = 0; i < 15; i++)
		assert_int_equal(add(w, c[i], 1, verdict(NFT_JUMP, names[i + 1]), NULL), 0);
	assert_int_equal(add(w, c[15], 1, verdict(NF_ACCEPT, NULL), NULL), 0);
	assert_int_equal(nftdp_vm_validate(c[0], &w->err), 0);
	assert_int_equal(RUN(w, c[0], tcp4(&t, 1)), NF_ACCEPT);
	/* one more level: c15 jumps to c16 */
	assert_int_equal(add(w, c[16], 1, verdict(NF_ACCEPT, NULL), NULL), 0);
	struct nftdp_vm_chain *c15b = chain(w, "c15b", false, 0);
	(void)c15b;
	assert_int_equal(add(w, c[14], 2, verdict(NFT_GOTO, "c16"), NULL), 0);
	/* c14 -> goto c16 is level 15: still fine */
	assert_int_equal(nftdp_vm_validate(c[0], &w->err), 0);
	assert_int_equal(add(w, c[15], 2, verdict(NFT_JUMP, "c16"), NULL), 0);
	assert_int_equal(nftdp_vm_validate(c[0], &w->err), -EMLINK);
	/* unvalidated, the runtime stack still holds: the 16th jump drops */
	assert_int_equal(add(w, c[15], 0, verdict(NF_ACCEPT, NULL), NULL), 0);
	uint64_t before = w->ctx.drops[NFTDP_VM_DROP_JUMPSTACK];
	/* c15's first rule accepts, so no overflow here */
	assert_int_equal(RUN(w, c[0], tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(w->ctx.drops[NFTDP_VM_DROP_JUMPSTACK], before);
}

static void test_jump_stack_overflow_drops(void **state)
{
	struct world *w = *state;
	static char names[20][8];
	struct nftdp_vm_chain *c[20];
	struct tpkt t;

	c[0] = chain(w, "base", true, NF_ACCEPT);
	for (int i = 1; i <= 17; i++) {
		snprintf(names[i], sizeof(names[i]), "j%d", i);
		c[i] = chain(w, names[i], false, 0);
	}
	for (int i = 0; i < 17; i++)
		assert_int_equal(add(w, c[i], 1, verdict(NFT_JUMP, names[i + 1]), NULL), 0);
	assert_int_equal(nftdp_vm_validate(c[0], NULL), -EMLINK);
	assert_int_equal(RUN(w, c[0], tcp4(&t, 1)), NF_DROP);
	assert_int_equal(w->ctx.drops[NFTDP_VM_DROP_JUMPSTACK], 1);
}

/* ---------- compile-time validation ---------- */

static void test_compile_errors(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftnl_expr *e;
	uint8_t big[32] = {0};
	uint32_t one = 1;

	assert_int_equal(add(w, c, 1, ex("queue"), NULL), -EOPNOTSUPP);
	assert_string_equal(w->err.msg, "queue: not supported by nftdp");
	assert_int_equal(w->err.expr_index, 0);
	assert_int_equal(add(w, c, 1, verdict(NF_ACCEPT, NULL), ex("tunnel"), NULL), -EOPNOTSUPP);
	assert_int_equal(w->err.expr_index, 1);
	assert_string_equal(w->err.msg, "tunnel: not supported by nftdp");
	assert_int_equal(nftdp_vm_chain_n_ops(c), 0); /* a failed rule leaves nothing */
	assert_int_equal(add(w, c, 1, verdict(NF_QUEUE, NULL), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, c, 1, verdict(NF_STOLEN, NULL), NULL), -EINVAL);
	assert_int_equal(add(w, c, 1, verdict(0x12345, NULL), NULL), -EINVAL);
	/* registers */
	assert_int_equal(add(w, c, 1, payload(1, 0, 4, 5), NULL), -ERANGE);
	assert_int_equal(add(w, c, 1, payload(1, 0, 4, NFT_REG32_15 + 1), NULL), -ERANGE);
	assert_int_equal(add(w, c, 1, payload(1, 0, 8, NFT_REG32_15), NULL), -ERANGE);
	assert_int_equal(add(w, c, 1, payload(1, 0, 4, NFT_REG32_15), NULL), 0);
	assert_int_equal(add(w, c, 1, payload(1, 0, 64, NFT_REG_1), NULL), 0);
	assert_int_equal(add(w, c, 1, payload(1, 0, 65, NFT_REG_1), NULL), -ERANGE);
	assert_int_equal(add(w, c, 1, payload(1, 0, 16, NFT_REG_4), NULL), 0);
	assert_int_equal(add(w, c, 1, payload(1, 0, 17, NFT_REG_4), NULL), -ERANGE);
	assert_int_equal(add(w, c, 1, payload(1, 0, 0, NFT_REG_1), NULL), -EINVAL);
	assert_int_equal(add(w, c, 1, payload(1, 0, 4, NFT_REG_VERDICT), NULL), -EINVAL);
	assert_int_equal(add(w, c, 1, payload(1, 256, 4, NFT_REG_1), NULL), -ERANGE);
	assert_int_equal(add(w, c, 1, payload(7, 0, 4, NFT_REG_1), NULL), -EOPNOTSUPP);
	e = payload(1, 0, 4, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_SREG, NFT_REG_1);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	assert_int_equal(add(w, c, 1, cmp32(NFT_CMP_EQ, NFT_REG_VERDICT, 1), NULL), -EINVAL);
	assert_int_equal(add(w, c, 1, cmp(NFT_CMP_EQ, NFT_REG_1, big, 17), NULL), -EOVERFLOW);
	assert_int_equal(add(w, c, 1, cmp32(9, NFT_REG_1, 1), NULL), -EINVAL);
	assert_int_equal(add(w, c, 1, imm32(NFT_REG_VERDICT, 1), NULL), -EINVAL);
	/* bitwise */
	e = ex("bitwise");
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 4);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, big, 2);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, big, 4);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	e = ex("bitwise");
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 4);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_OP, NFT_BITWISE_LSHIFT);
	one = 32;
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_DATA, &one, 4);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	/* byteorder */
	e = ex("byteorder");
	nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_OP, NFT_BYTEORDER_NTOH);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_LEN, 4);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_SIZE, 3);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	/* range with differing lengths */
	e = ex("range");
	nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_OP, NFT_RANGE_EQ);
	nftnl_expr_set(e, NFTNL_EXPR_RANGE_FROM_DATA, big, 2);
	nftnl_expr_set(e, NFTNL_EXPR_RANGE_TO_DATA, big, 4);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	/* meta */
	assert_int_equal(add(w, c, 1, meta(NFT_META_BRI_IIFNAME, NFT_REG_1), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, c, 1, meta(NFT_META_IIFNAME, NFT_REG32_14), NULL), -ERANGE);
	assert_int_equal(add(w, c, 1, meta_set(NFT_META_IIF, NFT_REG_1), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, c, 1, meta(NFT_META_SKUID, NFT_REG_1), NULL), 0);
	/* exthdr */
	e = ex("exthdr");
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, NFT_EXTHDR_OP_DCCP);
	nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, 1);
	assert_int_equal(add(w, c, 1, e, NULL), -EOPNOTSUPP);
	assert_string_equal(w->err.msg, "exthdr: dccp options not supported by nftdp");
	e = ex("exthdr");
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, NFT_EXTHDR_OP_TCPOPT);
	nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, 2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, 3);
	assert_int_equal(add(w, c, 1, e, NULL), -EOPNOTSUPP);
	e = ex("exthdr");
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, NFT_EXTHDR_OP_IPV4);
	nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, 68); /* timestamp */
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, 1);
	assert_int_equal(add(w, c, 1, e, NULL), -EOPNOTSUPP);
	/* log: level and group together */
	e = ex("log");
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_LEVEL, 4);
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, 1);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	e = ex("log");
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_LEVEL, 9);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	/* reject */
	e = ex("reject");
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, 9);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	e = ex("reject");
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMP_UNREACH);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	e = ex("reject");
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
	struct nftdp_vm_chain *post = chain_hook(w, "post", true, NF_ACCEPT, NF_INET_POST_ROUTING);
	assert_int_equal(add(w, post, 1, e, NULL), -EOPNOTSUPP);
	/* numgen, hash, limit */
	e = ex("numgen");
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_TYPE, NFT_NG_INCREMENTAL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_MODULUS, 0);
	assert_int_equal(add(w, c, 1, e, NULL), -ERANGE);
	e = ex("numgen");
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_TYPE, NFT_NG_RANDOM);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_MODULUS, 10);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_OFFSET, 0xfffffffa);
	assert_int_equal(add(w, c, 1, e, NULL), -EOVERFLOW);
	e = ex("hash");
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_LEN, 0);
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_MODULUS, 4);
	assert_int_equal(add(w, c, 1, e, NULL), -ERANGE);
	e = ex("limit");
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 0);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	e = ex("limit");
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 1);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, UINT64_MAX / 2);
	assert_int_equal(add(w, c, 1, e, NULL), -EOVERFLOW);
	/* fwd and dup need netdev */
	e = ex("fwd");
	nftnl_expr_set_u32(e, NFTNL_EXPR_FWD_SREG_DEV, NFT_REG_1);
	assert_int_equal(add(w, c, 1, e, NULL), -EOPNOTSUPP);
	/* ip's dup wants an address (nft_dup_ipv4_init) */
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_DEV, NFT_REG_1);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	/* ct */
	e = ex("ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_PROTO_SRC);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	e = ex("ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_MARK);
	nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, 0);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	assert_int_equal(add(w, c, 1, e, NULL), -EINVAL);
	/* lookup of a set that does not exist */
	e = ex("lookup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, "nope");
	assert_int_equal(add(w, c, 1, e, NULL), -ENOENT);
	/* objref of an unsupported object type */
	e = ex("objref");
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_TUNNEL);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, "e");
	assert_int_equal(add(w, c, 1, e, NULL), -EOPNOTSUPP);
	/* too many expressions */
	struct nftnl_rule *r = nftnl_rule_alloc();
	for (int i = 0; i < 129; i++)
		nftnl_rule_add_expr(r, ex("counter"));
	assert_int_equal(nftdp_vm_chain_add_rule(c, r, &w->res, w->st, &w->err), -EINVAL);
	nftnl_rule_free(r);
	assert_int_equal(nftdp_vm_chain_n_rules(c), 4);
}

/* ---------- expressions beyond the table ---------- */

static void test_jhash_known_answer(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_regs regs;
	struct nftnl_expr *e;
	const char *s = "Four score and seven years ago";
	struct tpkt t;

	/* lookup3's published vectors: hashlittle(s, 30, 0) and (s, 30, 1) */
	assert_int_equal(add(w, c, 1, imm(NFT_REG_1, s, 16), imm(NFT_REG_2, s + 16, 14), NULL), 0);
	for (uint32_t seed = 0; seed < 2; seed++) {
		e = ex("hash");
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_SREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_DREG, NFT_REG32_08 + seed);
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_LEN, 30);
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_SEED, seed);
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_MODULUS, 0xffffffff);
		assert_int_equal(add(w, c, 2 + seed, e, NULL), 0);
	}
	nftdp_vm_run_chain_regs(c, tcp4(&t, 1), &w->ctx, &regs);
	/* reciprocal_scale(h, 0xffffffff) = h - (h != 0 ? 1 : 0) for h < 2^32 */
	assert_int_equal(regs.data[8], ((uint64_t)0x17770551 * 0xffffffff) >> 32);
	assert_int_equal(regs.data[9], ((uint64_t)0xcd628161 * 0xffffffff) >> 32);
}

static void test_symhash_and_numgen(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_regs r1, r2;
	struct nftnl_expr *e;
	struct tpkt t, u;

	e = ex("hash");
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_TYPE, NFT_HASH_SYM);
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_MODULUS, 100);
	nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_OFFSET, 1000);
	assert_int_equal(add(w, c, 1, e, NULL), 0);
	e = ex("numgen");
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_DREG, NFT_REG_2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_TYPE, NFT_NG_INCREMENTAL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_MODULUS, 3);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_OFFSET, 10);
	assert_int_equal(add(w, c, 2, e, NULL), 0);
	e = ex("numgen");
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_DREG, NFT_REG_3);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_TYPE, NFT_NG_RANDOM);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_MODULUS, 5);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NG_OFFSET, 7);
	assert_int_equal(add(w, c, 3, e, NULL), 0);
	assert_int_equal(add(w, c, 4, meta(NFT_META_PRANDOM, NFT_REG_4), NULL), 0);

	tcp4(&t, 80);
	/* the reverse direction: swap addresses and ports */
	tcp4(&u, 80);
	memcpy(u.buf + 26, t.buf + 30, 4);
	memcpy(u.buf + 30, t.buf + 26, 4);
	memcpy(u.buf + 34, t.buf + 36, 2);
	memcpy(u.buf + 36, t.buf + 34, 2);
	uint32_t seq[6];
	for (int i = 0; i < 6; i++) {
		nftdp_vm_run_chain_regs(c, &t.pkt, &w->ctx, &r1);
		seq[i] = r1.data[4];
		assert_in_range(r1.data[8], 7, 11);
	}
	nftdp_vm_run_chain_regs(c, &u.pkt, &w->ctx, &r2);
	assert_int_equal(r1.data[0], r2.data[0]);
	assert_in_range(r1.data[0], 1000, 1099);
	assert_int_equal(seq[0], 10);
	assert_int_equal(seq[1], 11);
	assert_int_equal(seq[2], 12);
	assert_int_equal(seq[3], 10);
	assert_int_not_equal(r1.data[12], r2.data[12]);
}

static void test_meta_more(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_regs regs;
	struct tpkt t;
	uint8_t one = 1, two = 2;
	uint64_t ns;

	assert_int_equal(add(w, c, 1, meta(NFT_META_TIME_NS, NFT_REG32_12),
			     meta(NFT_META_OIF, NFT_REG32_04), meta(NFT_META_OIFNAME, NFT_REG_3),
			     meta(NFT_META_PROTOCOL, NFT_REG32_05),
			     meta(NFT_META_SECPATH, NFT_REG32_06), NULL),
			 0);
	assert_int_equal(add(w, c, 2, imm(NFT_REG32_15, &one, 1),
			     meta_set(NFT_META_NFTRACE, NFT_REG32_15), imm(NFT_REG32_15, &two, 1),
			     meta_set(NFT_META_PKTTYPE, NFT_REG32_15), imm32(NFT_REG32_15, 77),
			     meta_set(NFT_META_PRIORITY, NFT_REG32_15), NULL),
			 0);
	/* oiftype without an output device breaks */
	assert_int_equal(
	    add(w, c, 3, meta(NFT_META_OIFTYPE, NFT_REG_1), verdict(NF_DROP, NULL), NULL), 0);
	tcp4(&t, 1);
	t.pkt.tstamp_ns = 123456789;
	assert_int_equal(nftdp_vm_run_chain_regs(c, &t.pkt, &w->ctx, &regs), NF_ACCEPT);
	memcpy(&ns, &regs.data[12], 8);
	assert_int_equal(ns, 123456789);
	assert_int_equal(regs.data[4], 0);
	assert_int_equal(regs.bytes[32], 0);
	assert_int_equal(regs.data[5], 0x0008);
	assert_int_equal(regs.data[6], 0);
	assert_int_equal(t.pkt.nftrace, 1);
	assert_int_equal(t.pkt.pkttype, 2);
	assert_int_equal(t.pkt.priority, 77);
	/* with an output device, oiftype matches and the rule drops */
	t.pkt.oif = 2;
	t.pkt.oiftype = 1;
	t.pkt.oifname = "dp1";
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	/* pkttype 7 (loopback-ish) is never set, as skb_pkt_type_ok */
	t.pkt.pkttype = 7;
	RUN(w, c, &t.pkt);
	assert_int_equal(t.pkt.pkttype, 7);
	/* meta l4proto breaks without a transport protocol */
	struct nftdp_vm_chain *d = chain(w, "d", true, NF_ACCEPT);
	assert_int_equal(
	    add(w, d, 1, meta(NFT_META_L4PROTO, NFT_REG_1), verdict(NF_DROP, NULL), NULL), 0);
	t.pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_L4PROTO;
	assert_int_equal(RUN(w, d, &t.pkt), NF_ACCEPT);

	/* nfproto and l4proto (inlined by the eval loop): the byte, and zeros
	 * in the rest of the register (a 4-byte cmp sees them) */
	struct nftdp_vm_chain *e = chain(w, "e", true, NF_ACCEPT);
	uint8_t tcp = IPPROTO_TCP, udp = IPPROTO_UDP;

	assert_int_equal(
	    add(w, e, 1, meta(NFT_META_NFPROTO, NFT_REG32_00),
		cmp32(NFT_CMP_EQ, NFT_REG32_00, NFPROTO_IPV4), meta(NFT_META_L4PROTO, NFT_REG32_01),
		cmp32(NFT_CMP_EQ, NFT_REG32_01, IPPROTO_TCP), verdict(NF_DROP, NULL), NULL),
	    0);
	tcp4(&t, 80);
	t.pkt.nfproto = NFPROTO_IPV4;
	assert_int_equal(RUN(w, e, &t.pkt), NF_DROP);
	t.pkt.nfproto = NFPROTO_IPV6;
	assert_int_equal(RUN(w, e, &t.pkt), NF_ACCEPT);
	struct nftdp_vm_chain *g = chain(w, "g", true, NF_ACCEPT);

	assert_int_equal(add(w, g, 1, meta(NFT_META_L4PROTO, NFT_REG_1),
			     cmp(NFT_CMP_EQ, NFT_REG_1, &udp, 1), verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(add(w, g, 2, meta(NFT_META_L4PROTO, NFT_REG_1),
			     cmp(NFT_CMP_NEQ, NFT_REG_1, &tcp, 1), verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(RUN(w, g, &t.pkt), NF_ACCEPT);
	t.pkt.l4proto = IPPROTO_UDP;
	assert_int_equal(RUN(w, g, &t.pkt), NF_DROP);

	/* meta + cmp fuse into one op (little-endian); the register keeps the
	 * loaded byte for what follows, and a missing transport breaks */
	struct nftdp_vm_chain *h = chain(w, "h", true, NF_ACCEPT);

	assert_int_equal(add(w, h, 1, meta(NFT_META_L4PROTO, NFT_REG_1),
			     cmp(NFT_CMP_NEQ, NFT_REG_1, &tcp, 1),
			     cmp(NFT_CMP_EQ, NFT_REG_1, &udp, 1), verdict(NF_DROP, NULL), NULL),
			 0);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_int_equal(nftdp_vm_chain_n_ops(h), 3);
#endif
	assert_int_equal(RUN(w, h, &t.pkt), NF_DROP); /* udp */
	t.pkt.l4proto = IPPROTO_SCTP;
	assert_int_equal(RUN(w, h, &t.pkt), NF_ACCEPT);
	t.pkt.l4proto = IPPROTO_UDP;
	t.pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_L4PROTO;
	assert_int_equal(RUN(w, h, &t.pkt), NF_ACCEPT);
	t.pkt.flags |= NFTDP_VM_PKT_F_L4PROTO;
	assert_int_equal(RUN(w, h, &t.pkt), NF_DROP);
}

/* Network-header loads of 5..16 bytes (addresses, prefixes) and short
 * bitwise ops are inlined by the eval loop: same registers as the kernel's
 * nft_payload_eval and nft_bitwise_eval. */
static void test_payload_nh_and_short_bitwise(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	static const uint8_t sd[8] = {10, 0, 0, 1, 10, 0, 0, 2};
	static const uint8_t six[8] = {10, 0, 0, 1, 10, 0, 0, 0};
	static const uint8_t from4[16] = {0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
	static const uint8_t fragmask[2] = {0x1f, 0xff}, zero2[2] = {0, 0};
	struct nftdp_vm_regs regs;
	uint32_t mask;
	struct tpkt t;

	/* 6 bytes: the last word's rest zeroed, the next register untouched */
	assert_int_equal(add(w, c, 1, imm32(NFT_REG32_02, 0xdeadbeef),
			     imm32(NFT_REG32_01, 0xffffffff),
			     payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 6, NFT_REG32_00), NULL),
			 0);
	assert_int_equal(add(w, c, 2, payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 8, NFT_REG32_04),
			     cmp(NFT_CMP_EQ, NFT_REG32_04, sd, 8),
			     payload(NFT_PAYLOAD_NETWORK_HEADER, 4, 16, NFT_REG32_08), NULL),
			 0);
	/* past the end of the packet: the rule breaks */
	assert_int_equal(add(w, c, 3, payload(NFT_PAYLOAD_NETWORK_HEADER, 30, 16, NFT_REG32_12),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	/* ip frag-off & 0x1fff != 0: a 2-byte bitwise */
	memcpy(&mask, fragmask, 2);
	assert_int_equal(add(w, c, 4, payload(NFT_PAYLOAD_NETWORK_HEADER, 6, 2, NFT_REG32_14),
			     bitwise_and(NFT_REG32_14, 2, mask),
			     cmp(NFT_CMP_NEQ, NFT_REG32_14, zero2, 2), verdict(NF_DROP, NULL),
			     NULL),
			 0);
	assert_int_equal(nftdp_vm_run_chain_regs(c, tcp4(&t, 80), &w->ctx, &regs), NF_ACCEPT);
	assert_memory_equal(&regs.data[0], six, 8);
	assert_int_equal(regs.data[2], 0xdeadbeef);
	assert_memory_equal(&regs.data[4], sd, 8);
	assert_memory_equal(&regs.data[8], from4, 16);
	t.buf[14 + 6] = 0x20; /* MF: masked off */
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	t.buf[14 + 7] = 1; /* fragment offset 8 */
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
}

/* Network header loads of 3 bytes and unaligned 2 bytes (inlined like the
 * address loads), and eq/neq on 5 to 15 bytes (inlined as a 16-byte compare
 * with a mask): the bytes past len in the registers play no part, and a
 * register too near the end of the file for 16 bytes still compares len. */
static void test_payload_nh_odd_and_cmp_masked(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_chain *eq6 = chain(w, "eq6", true, NF_ACCEPT);
	struct nftdp_vm_chain *ne6 = chain(w, "ne6", true, NF_ACCEPT);
	struct nftdp_vm_chain *r13 = chain(w, "r13", true, NF_ACCEPT);
	static const uint8_t three[4] = {0, 0, 1, 0}, two[4] = {40, 0, 0, 0};
	static const uint8_t sd6[6] = {10, 0, 0, 1, 10, 0};
	static const uint8_t sd12[12] = {0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0};
	struct nftdp_vm_regs regs;
	struct tpkt t;

	/* ip saddr's last 3 bytes, the total length's low byte and the id's
	 * high byte: the rest of each word zeroed */
	assert_int_equal(add(w, c, 1, imm32(NFT_REG32_01, 0xffffffff),
			     imm32(NFT_REG32_02, 0xffffffff),
			     payload(NFT_PAYLOAD_NETWORK_HEADER, 13, 3, NFT_REG32_01),
			     payload(NFT_PAYLOAD_NETWORK_HEADER, 3, 2, NFT_REG32_02), NULL),
			 0);
	/* 3 bytes past the end: the rule breaks before its verdict */
	assert_int_equal(add(w, c, 2, payload(NFT_PAYLOAD_NETWORK_HEADER, 38, 3, NFT_REG32_03),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(nftdp_vm_run_chain_regs(c, tcp4(&t, 80), &w->ctx, &regs), NF_ACCEPT);
	assert_memory_equal(&regs.data[1], three, 4);
	assert_memory_equal(&regs.data[2], two, 4);
	assert_int_equal(regs.data[3], 0);

	/* 8 bytes loaded, 6 compared: saddr . daddr's first 2 bytes */
	assert_int_equal(add(w, eq6, 1, payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 8, NFT_REG32_04),
			     cmp(NFT_CMP_EQ, NFT_REG32_04, sd6, 6), verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(add(w, ne6, 1, payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 8, NFT_REG32_04),
			     cmp(NFT_CMP_NEQ, NFT_REG32_04, sd6, 6), verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(RUN(w, eq6, tcp4(&t, 80)), NF_DROP);
	assert_int_equal(RUN(w, ne6, &t.pkt), NF_ACCEPT);
	/* the 6th byte differs */
	t.buf[14 + 17] = 7;
	assert_int_equal(RUN(w, eq6, &t.pkt), NF_ACCEPT);
	assert_int_equal(RUN(w, ne6, &t.pkt), NF_DROP);
	/* the 7th and 8th bytes differ: still equal on 6 */
	tcp4(&t, 80);
	t.buf[14 + 18] = 9;
	t.buf[14 + 19] = 9;
	assert_int_equal(RUN(w, eq6, &t.pkt), NF_DROP);
	assert_int_equal(RUN(w, ne6, &t.pkt), NF_ACCEPT);

	/* at NFT_REG32_13 16 bytes would run past the registers: cmp proper
	 * on 12 bytes (ip header bytes 7 to 18) */
	assert_int_equal(add(w, r13, 1, payload(NFT_PAYLOAD_NETWORK_HEADER, 7, 12, NFT_REG32_13),
			     cmp(NFT_CMP_NEQ, NFT_REG32_13, sd12, 12), verdict(NF_DROP, NULL),
			     NULL),
			 0);
	assert_int_equal(RUN(w, r13, tcp4(&t, 80)), NF_ACCEPT);
	t.buf[14 + 18] = 9;
	assert_int_equal(RUN(w, r13, &t.pkt), NF_DROP);
	tcp4(&t, 80);
	t.buf[14 + 19] = 9;
	assert_int_equal(RUN(w, r13, &t.pkt), NF_ACCEPT);
	t.buf[14 + 7] = 1;
	assert_int_equal(RUN(w, r13, &t.pkt), NF_DROP);
}

static void test_payload_write_not_writable(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftnl_expr *e = ex("payload");
	struct tpkt t;

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, 8);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_SREG, NFT_REG_1);
	assert_int_equal(add(w, c, 1, imm32(NFT_REG_1, 1), e, verdict(NF_DROP, NULL), NULL), 0);
	tcp4(&t, 1);
	t.pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_WRITABLE;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT); /* write breaks the rule */
	assert_int_equal(t.buf[22], 64);
	t.pkt.flags |= NFTDP_VM_PKT_F_WRITABLE;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	assert_int_equal(t.buf[22], 1);
}

/* ---------- stateful ---------- */

static void test_counter_survives_recompile(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_stateful_val v;
	struct nftnl_expr *e;
	struct tpkt t;

	e = ex("counter");
	nftnl_expr_set_u64(e, NFTNL_EXPR_CTR_PACKETS, 100);
	nftnl_expr_set_u64(e, NFTNL_EXPR_CTR_BYTES, 1000);
	assert_int_equal(add(w, c, 42, DPORT(be22), e, NULL), 0);
	for (unsigned int wk = 0; wk < 3; wk++) {
		w->ctx.worker = wk;
		RUN(w, c, tcp4(&t, 22));
		RUN(w, c, tcp4(&t, 80));
	}
	w->ctx.worker = 0;
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 42, 2, false, &v), 0);
	assert_int_equal(v.packets, 103);
	assert_int_equal(v.bytes, 1120);
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 42, 0, false, &v),
			 -ENOENT);

	/* next generation: the same rule compiled again keeps its counter */
	uint64_t gen = nftdp_vm_state_gen_begin(w->st);
	struct nftdp_vm_chain *c2 = chain(w, "c2", true, NF_ACCEPT);
	e = ex("counter");
	nftnl_expr_set_u64(e, NFTNL_EXPR_CTR_PACKETS, 0); /* ignored: slot exists */
	assert_int_equal(add(w, c2, 42, DPORT(be22), e, NULL), 0);
	RUN(w, c2, tcp4(&t, 22));
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 42, 2, true, &v), 0);
	assert_int_equal(v.packets, 104);
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 42, 2, false, &v), 0);
	assert_int_equal(v.packets, 0); /* reset */
	RUN(w, c2, tcp4(&t, 22));
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 42, 2, false, &v), 0);
	assert_int_equal(v.packets, 1);
	assert_int_equal(v.bytes, 40);
	/* a later generation without the rule: the sweep frees the slot; the
	 * base chain counters of c (not recompiled) go too */
	nftdp_vm_state_gen_begin(w->st);
	assert_true(nftdp_vm_state_sweep(w->st, gen + 1) >= 2);
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 42, 2, false, &v),
			 -ENOENT);
}

static void test_quota(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_stateful_val v;
	struct nftnl_expr *e;
	struct tpkt t;

	/* quota until 100 bytes: 40-byte packets pass twice, the third goes over */
	e = ex("quota");
	nftnl_expr_set_u64(e, NFTNL_EXPR_QUOTA_BYTES, 100);
	assert_int_equal(add(w, c, 1, e, verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 1, 0, false, &v), 0);
	assert_int_equal(v.consumed, 120);
	assert_int_equal(v.bytes, 100);
	/* quota over 80 bytes, 40 consumed already: 80 is not over, 120 is */
	struct nftdp_vm_chain *d = chain(w, "d", true, NF_ACCEPT);
	e = ex("quota");
	nftnl_expr_set_u64(e, NFTNL_EXPR_QUOTA_BYTES, 80);
	nftnl_expr_set_u64(e, NFTNL_EXPR_QUOTA_CONSUMED, 40);
	nftnl_expr_set_u32(e, NFTNL_EXPR_QUOTA_FLAGS, NFT_QUOTA_F_INV);
	assert_int_equal(add(w, d, 2, e, verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(RUN(w, d, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(RUN(w, d, tcp4(&t, 1)), NF_DROP);
}

static void test_limit(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_DROP);
	struct nftnl_expr *e;
	struct tpkt t;
	int passed = 0;

	/* 1/second, burst 3: three pass at once, then one per second */
	e = ex("limit");
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 1);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, 3);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	assert_int_equal(add(w, c, 1, e, verdict(NF_ACCEPT, NULL), NULL), 0);
	for (int i = 0; i < 10; i++)
		passed += RUN(w, c, tcp4(&t, 1)) == NF_ACCEPT;
	assert_int_equal(passed, 3);
	w->ctx.now_ns += 1000000000ull;
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	w->ctx.now_ns += 500000000ull;
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	w->ctx.now_ns += 500000000ull;
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	/* a long pause refills only up to the burst */
	w->ctx.now_ns += 100ull * 1000000000ull;
	passed = 0;
	for (int i = 0; i < 10; i++)
		passed += RUN(w, c, tcp4(&t, 1)) == NF_ACCEPT;
	assert_int_equal(passed, 3);

	/* limit rate over 1/second (inverted), default burst 5 */
	struct nftdp_vm_chain *d = chain(w, "d", true, NF_ACCEPT);
	e = ex("limit");
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 1);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_FLAGS, NFT_LIMIT_F_INV);
	assert_int_equal(add(w, d, 2, e, verdict(NF_DROP, NULL), NULL), 0);
	passed = 0;
	for (int i = 0; i < 8; i++)
		passed += RUN(w, d, tcp4(&t, 1)) == NF_ACCEPT;
	assert_int_equal(passed, 5);

	/* bytes: 100 bytes/second, burst 20 bytes: bucket 120 bytes, 3 x 40 pass */
	struct nftdp_vm_chain *b = chain(w, "b", true, NF_DROP);
	e = ex("limit");
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 100);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, 20);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKT_BYTES);
	assert_int_equal(add(w, b, 3, e, verdict(NF_ACCEPT, NULL), NULL), 0);
	passed = 0;
	for (int i = 0; i < 6; i++)
		passed += RUN(w, b, tcp4(&t, 1)) == NF_ACCEPT;
	assert_int_equal(passed, 3);

	/* 1/hour, burst 4 (a 4 h bucket) one minute after boot: the clock is
	 * smaller than the bucket, and still four pass */
	struct nftdp_vm_chain *h = chain(w, "h", true, NF_DROP);
	e = ex("limit");
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 1);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 3600);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, 4);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	assert_int_equal(add(w, h, 4, e, verdict(NF_ACCEPT, NULL), NULL), 0);
	w->ctx.now_ns = 60ull * 1000000000ull;
	passed = 0;
	for (int i = 0; i < 6; i++)
		passed += RUN(w, h, tcp4(&t, 1)) == NF_ACCEPT;
	assert_int_equal(passed, 4);
	w->ctx.now_ns += 3600ull * 1000000000ull;
	assert_int_equal(RUN(w, h, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(RUN(w, h, tcp4(&t, 1)), NF_DROP);
}

struct thr {
	struct world *w;
	struct nftdp_vm_chain *c;
	unsigned int worker;
	int passed;
};

static void *limit_thread(void *arg)
{
	struct thr *th = arg;
	struct nftdp_vm_ctx ctx = th->w->ctx;
	struct tpkt t;

	ctx.worker = th->worker;
	for (int i = 0; i < 20000; i++)
		th->passed += nftdp_vm_run_chain(th->c, tcp4(&t, 1), &ctx) == NF_ACCEPT;
	return NULL;
}

static void test_stateful_workers(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_DROP);
	struct nftdp_vm_stateful_val v;
	struct nftnl_expr *e;
	struct thr th[4];
	pthread_t tid[4];
	int total = 0;

	/* limit 1000/second, burst 1000, time frozen: exactly 1000 pass over
	 * all workers together; the counter after it counts exactly those */
	e = ex("limit");
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 1000);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, 1000);
	assert_int_equal(add(w, c, 1, e, ex("counter"), verdict(NF_ACCEPT, NULL), NULL), 0);
	for (int i = 0; i < 4; i++) {
		th[i] = (struct thr){w, c, (unsigned int)i, 0};
		assert_int_equal(pthread_create(&tid[i], NULL, limit_thread, &th[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		total += th[i].passed;
	}
	assert_int_equal(total, 1000);
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 1, 1, false, &v), 0);
	assert_int_equal(v.packets, 1000);
}

static void log_cb(const struct nftdp_vm_log_event *ev, void *arg)
{
	int *n = arg;

	assert_string_equal(ev->prefix, "hello: ");
	assert_int_equal(ev->level, NFT_LOGLEVEL_INFO);
	assert_int_equal(ev->caplen, 40);
	assert_int_equal(ev->pkt[0], 0x45);
	(*n)++;
}

static void test_last_and_log(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_stateful_val v;
	struct nftnl_expr *e;
	struct tpkt t;
	uint64_t lost = 9;
	int seen = 0;

	e = ex("log");
	nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, "hello: ");
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_LEVEL, NFT_LOGLEVEL_INFO);
	assert_int_equal(add(w, c, 5, ex("last"), e, NULL), 0);
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 5, 0, false, &v), 0);
	assert_false(v.last_set);
	w->ctx.worker = 2;
	for (int i = 0; i < 10; i++)
		RUN(w, c, tcp4(&t, 22));
	w->ctx.worker = 0;
	assert_int_equal(nftdp_vm_state_read_rule(w->st, w->family, "t", 5, 0, false, &v), 0);
	assert_true(v.last_set);
	assert_int_equal(v.last_ms, w->ctx.now_ms);

	/* ring of 8: two events were lost */
	assert_int_equal(nftdp_vm_log_poll(w->st, 2, log_cb, &seen, &lost), 8);
	assert_int_equal(seen, 8);
	assert_int_equal(lost, 2);
	assert_int_equal(nftdp_vm_log_poll(w->st, 0, log_cb, &seen, NULL), 0);
}

static void test_objects(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_stateful_val v;
	struct nftdp_vm_obj *ctr, *quota, *helper;
	struct nftnl_obj *o;
	struct nftnl_expr *e;
	struct tpkt t;

	o = nftnl_obj_alloc();
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "cnt");
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, w->family);
	nftnl_obj_set_u64(o, NFTNL_OBJ_CTR_PKTS, 5);
	assert_int_equal(nftdp_vm_obj_create(o, w->st, &w->err, &ctr), 0);
	nftnl_obj_free(o);
	o = nftnl_obj_alloc();
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "q");
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_QUOTA);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, w->family);
	nftnl_obj_set_u64(o, NFTNL_OBJ_QUOTA_BYTES, 50);
	assert_int_equal(nftdp_vm_obj_create(o, w->st, &w->err, &quota), 0);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_TUNNEL);
	assert_int_equal(nftdp_vm_obj_create(o, w->st, &w->err, &helper), -EOPNOTSUPP);
	/* synproxy objects: flags outside NF_SYNPROXY_OPT_MASK are refused */
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_SYNPROXY);
	nftnl_obj_set_u32(o, NFTNL_OBJ_SYNPROXY_FLAGS, 0x10);
	assert_int_equal(nftdp_vm_obj_create(o, w->st, &w->err, &helper), -EOPNOTSUPP);
	nftnl_obj_free(o);
	w->objs[0] = ctr;
	w->obj_names[0] = "cnt";
	w->objs[1] = quota;
	w->obj_names[1] = "q";
	w->n_objs = 2;

	e = ex("objref");
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_COUNTER);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, "cnt");
	struct nftnl_expr *q = ex("objref");
	nftnl_expr_set_u32(q, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_QUOTA);
	nftnl_expr_set_str(q, NFTNL_EXPR_OBJREF_IMM_NAME, "q");
	assert_int_equal(add(w, c, 1, e, q, verdict(NF_DROP, NULL), NULL), 0);
	e = ex("objref");
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_COUNTER);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, "missing");
	assert_int_equal(add(w, c, 2, e, NULL), -ENOENT);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT); /* 80 > 50 */
	assert_int_equal(
	    nftdp_vm_state_read_obj(w->st, w->family, "t", "cnt", NFT_OBJECT_COUNTER, false, &v),
	    0);
	assert_int_equal(v.packets, 7);
	assert_int_equal(
	    nftdp_vm_state_read_obj(w->st, w->family, "t", "q", NFT_OBJECT_QUOTA, false, &v), 0);
	assert_int_equal(v.consumed, 80);
}

/* ---------- sets through a fake backend ---------- */

struct nftdp_set {
	uint32_t klen, dlen;
	int n;
	uint8_t keys[16][16];
	uint8_t data[16][16];
	uint64_t timeout[16];
	int updates, removes;
	bool full;
};

static bool fake_lookup(const struct nftdp_set *s, const void *key, const void **data,
			uint64_t now_ms)
{
	(void)now_ms;
	for (int i = 0; i < s->n; i++) {
		if (!memcmp(s->keys[i], key, s->klen)) {
			if (data)
				*data = s->data[i];
			return true;
		}
	}
	return false;
}

static bool fake_update(struct nftdp_set *s, const void *key, const void *data, uint64_t timeout_ms,
			bool refresh, uint64_t now_ms)
{
	(void)now_ms;
	s->updates++;
	for (int i = 0; i < s->n; i++) {
		if (!memcmp(s->keys[i], key, s->klen)) {
			if (refresh)
				s->timeout[i] = timeout_ms;
			return true;
		}
	}
	if (s->full || s->n == 16)
		return false;
	memcpy(s->keys[s->n], key, s->klen);
	if (data)
		memcpy(s->data[s->n], data, s->dlen);
	s->timeout[s->n++] = timeout_ms;
	return true;
}

static void fake_remove(struct nftdp_set *s, const void *key, uint64_t now_ms)
{
	(void)now_ms;
	s->removes++;
	for (int i = 0; i < s->n; i++) {
		if (!memcmp(s->keys[i], key, s->klen)) {
			memmove(s->keys[i], s->keys[i + 1], (size_t)(s->n - i - 1) * 16);
			memmove(s->data[i], s->data[i + 1], (size_t)(s->n - i - 1) * 16);
			s->n--;
			return;
		}
	}
}

static const struct nftdp_vm_set_ops fake_ops = {fake_lookup, fake_update, fake_remove};

static struct nftdp_set *add_set(struct world *w, const char *name, uint32_t flags, uint32_t klen,
				 uint32_t dlen, uint32_t dtype)
{
	struct nftdp_set *s = calloc(1, sizeof(*s));

	s->klen = klen;
	s->dlen = dlen;
	w->sets[w->n_sets] = (struct nftdp_vm_set_info){
	    .set = s,
	    .ops = &fake_ops,
	    .flags = flags,
	    .klen = klen,
	    .dlen = dlen,
	    .dtype = dtype,
	    .objtype = NFT_OBJECT_COUNTER,
	    .timeout_ms = 30000,
	};
	w->set_names[w->n_sets++] = name;
	return s;
}

static struct nftnl_expr *lookup(const char *set, uint32_t sreg, int dreg, uint32_t flags)
{
	struct nftnl_expr *e = ex("lookup");

	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
	if (dreg >= 0)
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, (uint32_t)dreg);
	if (flags)
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, flags);
	return e;
}

#define SADDR payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 4, NFT_REG_1)

static void test_lookup(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_set *s = add_set(w, "s", 0, 4, 0, NFT_DATA_VALUE);
	struct nftdp_set *m = add_set(w, "m", NFT_SET_MAP, 4, 4, NFT_DATA_VALUE);
	struct tpkt t;
	const uint8_t a1[4] = {10, 0, 0, 1};

	memcpy(s->keys[s->n++], a1, 4);
	memcpy(m->keys[m->n], a1, 4);
	m->data[m->n++][0] = 0x99;
	/* plain: drop 10.0.0.1; inverted: mark the others */
	assert_int_equal(add(w, c, 1, DPORT(be80), SADDR, lookup("s", NFT_REG_1, -1, 0),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(add(w, c, 2, SADDR, lookup("s", NFT_REG_1, -1, NFT_LOOKUP_F_INV),
			     imm32(NFT_REG_1, 5), meta_set(NFT_META_MARK, NFT_REG_1), NULL),
			 0);
	/* map: mark set ip saddr map @m */
	assert_int_equal(add(w, c, 3, SADDR, lookup("m", NFT_REG_1, NFT_REG_1, 0),
			     meta_set(NFT_META_MARK, NFT_REG_1), NULL),
			 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 22)), NF_ACCEPT);
	assert_int_equal(t.pkt.mark, 0x99);
	tcp4(&t, 22);
	t.buf[29] = 7; /* 10.0.0.7 */
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.mark, 5);
	/* validation as nft_lookup_init */
	assert_int_equal(add(w, c, 4, SADDR, lookup("m", NFT_REG_1, -1, NFT_LOOKUP_F_INV), NULL),
			 -EINVAL);
	assert_int_equal(add(w, c, 4, SADDR, lookup("s", NFT_REG_1, NFT_REG_2, 0), NULL), -EINVAL);
	assert_int_equal(add(w, c, 4, SADDR, lookup("s", NFT_REG32_15 + 1, -1, 0), NULL), -ERANGE);
	assert_int_equal(add(w, c, 4, SADDR, lookup("s", NFT_REG_1, -1, 2), NULL), -EINVAL);
	assert_int_equal(add(w, c, 4, SADDR, lookup("m", NFT_REG_1, NFT_REG_VERDICT, 0), NULL),
			 -EINVAL);
	free(s);
	free(m);
}

/* element counters: a hit counts in the slot the element's data names
 * (1 + slot after the map data; 0 there: the element has none) */
static void test_lookup_elem_counter(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_set *s = add_set(w, "s", 0, 4, 4, NFT_DATA_VALUE);
	struct nftdp_set *inv = add_set(w, "i", 0, 4, 4, NFT_DATA_VALUE);
	struct nftdp_vm_stateful_val v;
	const uint8_t a1[4] = {10, 0, 0, 1}, a7[4] = {10, 0, 0, 7};
	uint32_t slot, one;
	struct tpkt t;

	w->sets[w->n_sets - 2].elem_counter_at = 1; /* offset 0 */
	w->sets[w->n_sets - 1].elem_counter_at = 1;
	assert_int_equal(nftdp_vm_state_pin_counter(w->st, "elem-a1", 3, 300, &slot), 0);
	one = slot + 1;
	memcpy(s->keys[s->n], a1, 4);
	memcpy(s->data[s->n++], &one, 4);
	memcpy(s->keys[s->n++], a7, 4); /* data 0: no counter */
	memcpy(inv->keys[inv->n], a1, 4);
	memcpy(inv->data[inv->n++], &one, 4);
	assert_int_equal(add(w, c, 1, SADDR, lookup("s", NFT_REG_1, -1, 0), NULL), 0);
	/* an inverted lookup never counts: a hit there is a miss */
	assert_int_equal(add(w, c, 2, SADDR, lookup("i", NFT_REG_1, -1, NFT_LOOKUP_F_INV), NULL),
			 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_ACCEPT);
	tcp4(&t, 80);
	t.buf[29] = 7;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(nftdp_vm_state_read_key(w->st, "elem-a1", false, &v), 0);
	assert_int_equal(v.packets, 5);
	assert_int_equal(v.bytes, 300 + 2 * t.pkt.skb_len);
	/* pinned slots survive sweeps until unpinned */
	nftdp_vm_state_gen_begin(w->st);
	nftdp_vm_state_gen_begin(w->st);
	nftdp_vm_state_sweep(w->st, UINT64_MAX);
	assert_int_equal(nftdp_vm_state_read_key(w->st, "elem-a1", false, &v), 0);
	nftdp_vm_state_unpin(w->st, "elem-a1");
	nftdp_vm_state_gen_begin(w->st);
	nftdp_vm_state_sweep(w->st, UINT64_MAX);
	assert_int_equal(nftdp_vm_state_read_key(w->st, "elem-a1", false, &v), -ENOENT);
	free(s);
	free(inv);
}

static void test_vmap(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_chain *sub = chain(w, "sub", false, 0);
	struct nftdp_set *v = add_set(w, "v", NFT_SET_MAP, 4, 16, NFT_DATA_VERDICT);
	struct nftdp_vm_set_verdict vd;
	const struct nftdp_vm_chain *chains[8] = {0};
	const struct nftdp_vm_chain *vch[1] = {sub};
	struct tpkt t;

	w->sets[w->n_sets - 1].vchains = vch;
	w->sets[w->n_sets - 1].n_vchains = 1;
	chains[1] = sub; /* sub's chain_id */
	w->ctx.chains = chains;
	w->ctx.n_chains = 8;
	/* key 22 -> jump sub, 80 -> drop, 81 -> jump chain id 5 (gone) */
	uint8_t k[4] = {0, 22, 0, 0};
	vd = (struct nftdp_vm_set_verdict){(uint32_t)NFT_JUMP, 1};
	memcpy(v->keys[0], k, 4);
	memcpy(v->data[0], &vd, sizeof(vd));
	k[1] = 80;
	vd = (struct nftdp_vm_set_verdict){NF_DROP, 0};
	memcpy(v->keys[1], k, 4);
	memcpy(v->data[1], &vd, sizeof(vd));
	k[1] = 81;
	vd = (struct nftdp_vm_set_verdict){(uint32_t)NFT_GOTO, 5};
	memcpy(v->keys[2], k, 4);
	memcpy(v->data[2], &vd, sizeof(vd));
	v->n = 3;
	assert_int_equal(
	    add(w, sub, 1, imm32(NFT_REG_1, 3), meta_set(NFT_META_MARK, NFT_REG_1), NULL), 0);
	assert_int_equal(add(w, c, 1, payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1),
			     lookup("v", NFT_REG_1, NFT_REG_VERDICT, 0), NULL),
			 0);
	assert_int_equal(add(w, c, 2, verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(nftdp_vm_validate(c, &w->err), 0);
	/* jump into sub, come back, rule 2 drops */
	assert_int_equal(RUN(w, c, tcp4(&t, 22)), NF_DROP);
	assert_int_equal(t.pkt.mark, 3);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_DROP);
	assert_int_equal(t.pkt.mark, 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 81)), NF_DROP);
	assert_int_equal(w->ctx.drops[NFTDP_VM_DROP_VMAP_CHAIN], 1);
	/* a verdict map chain that jumps back to the user chain loops */
	assert_int_equal(add(w, sub, 2, payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1),
			     lookup("v", NFT_REG_1, NFT_REG_VERDICT, 0), NULL),
			 0);
	assert_int_equal(nftdp_vm_validate(c, &w->err), -ELOOP);
	w->ctx.chains = NULL;
	w->ctx.n_chains = 0;
	free(v);
}

/* A verdict map with more targets than validate looks at on its stack
 * (64): a loop through the last one is found; compile keeps its own copy of
 * the resolver's vchains; a target missing from the chain table is a jump
 * into another generation. */
static void test_vmap_many_targets(void **state)
{
	enum { N = 70, BASE_ID = 10 };
	struct world *w = *state;
	uint32_t c_id = (uint32_t)w->n_chains;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_set *v = add_set(w, "v", NFT_SET_MAP, 4, 16, NFT_DATA_VERDICT);
	struct nftdp_vm_chain *r[N], *tab[BASE_ID + N] = {0};
	const struct nftdp_vm_chain *vch[N];
	char names[N][8];

	for (int i = 0; i < N; i++) {
		struct nftdp_vm_chain_desc d = {.family = w->family,
						.table = "t",
						.name = names[i],
						.chain_id = BASE_ID + (uint32_t)i};

		snprintf(names[i], sizeof(names[i]), "r%d", i);
		assert_int_equal(nftdp_vm_chain_create(&d, w->st, &r[i]), 0);
		vch[i] = tab[BASE_ID + i] = r[i];
	}
	tab[c_id] = c;
	w->sets[w->n_sets - 1].vchains = vch;
	w->sets[w->n_sets - 1].n_vchains = N;
	assert_int_equal(add(w, c, 1, SADDR, lookup("v", NFT_REG_1, NFT_REG_VERDICT, 0), NULL), 0);
	assert_int_equal(nftdp_vm_validate(c, &w->err), 0);
	assert_int_equal(nftdp_vm_chain_check_targets(c, tab, BASE_ID + N, &w->err), 0);
	/* the last target looks the map up again: it reaches itself */
	assert_int_equal(
	    add(w, r[N - 1], 1, SADDR, lookup("v", NFT_REG_1, NFT_REG_VERDICT, 0), NULL), 0);
	vch[N - 1] = NULL; /* the resolver's array is not kept */
	assert_int_equal(nftdp_vm_validate(c, &w->err), -ELOOP);
	assert_non_null(strstr(w->err.msg, "loops"));
	/* r69 is not in a table of BASE_ID + N - 1 chains */
	assert_int_equal(nftdp_vm_chain_check_targets(c, tab, BASE_ID + N - 1, &w->err), -EINVAL);
	w->sets[w->n_sets - 1].vchains = NULL;
	w->sets[w->n_sets - 1].n_vchains = 0;
	for (int i = 0; i < N; i++)
		nftdp_vm_chain_destroy(r[i]);
	free(v);
}

static struct nftnl_expr *dynset(const char *set, uint32_t op, uint32_t kreg, int dreg,
				 uint64_t timeout, uint32_t flags)
{
	struct nftnl_expr *e = ex("dynset");

	nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, op);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, kreg);
	if (dreg >= 0)
		nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_DATA, (uint32_t)dreg);
	if (timeout)
		nftnl_expr_set_u64(e, NFTNL_EXPR_DYNSET_TIMEOUT, timeout);
	if (flags)
		nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_FLAGS, flags);
	return e;
}

static void test_dynset(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_set *s = add_set(w, "d", NFT_SET_TIMEOUT | NFT_SET_EVAL, 4, 0, NFT_DATA_VALUE);
	struct nftdp_set *n = add_set(w, "n", NFT_SET_EVAL, 4, 0, NFT_DATA_VALUE);
	struct nftdp_set *m = add_set(w, "dm", NFT_SET_MAP | NFT_SET_EVAL, 4, 4, NFT_DATA_VALUE);
	struct tpkt t;

	/* add @d { ip saddr timeout 5s }, then update @d refreshes */
	assert_int_equal(add(w, c, 1, DPORT(be22), SADDR,
			     dynset("d", NFT_DYNSET_OP_ADD, NFT_REG_1, -1, 5000, 0), NULL),
			 0);
	assert_int_equal(add(w, c, 2, DPORT(be80), SADDR,
			     dynset("d", NFT_DYNSET_OP_UPDATE, NFT_REG_1, -1, 7000, 0), NULL),
			 0);
	RUN(w, c, tcp4(&t, 22));
	assert_int_equal(s->n, 1);
	assert_int_equal(s->timeout[0], 5000);
	RUN(w, c, tcp4(&t, 22));
	assert_int_equal(s->timeout[0], 5000); /* add does not refresh */
	RUN(w, c, tcp4(&t, 80));
	assert_int_equal(s->timeout[0], 7000);
	/* no timeout given: the set's default */
	struct nftdp_vm_chain *c2 = chain(w, "c2", true, NF_ACCEPT);
	assert_int_equal(add(w, c2, 3, payload(NFT_PAYLOAD_NETWORK_HEADER, 16, 4, NFT_REG_1),
			     dynset("d", NFT_DYNSET_OP_ADD, NFT_REG_1, -1, 0, 0), NULL),
			 0);
	RUN(w, c2, tcp4(&t, 1));
	assert_int_equal(s->n, 2);
	assert_int_equal(s->timeout[1], 30000);
	/* delete @d { ip saddr } */
	assert_int_equal(
	    add(w, c2, 4, SADDR, dynset("d", NFT_DYNSET_OP_DELETE, NFT_REG_1, -1, 0, 0), NULL), 0);
	RUN(w, c2, tcp4(&t, 1));
	assert_int_equal(s->n, 1);
	/* full set: the rule breaks (and with F_INV it matches) */
	struct nftdp_vm_chain *c3 = chain(w, "c3", true, NF_ACCEPT);
	n->full = true;
	assert_int_equal(add(w, c3, 5, SADDR, dynset("n", NFT_DYNSET_OP_ADD, NFT_REG_1, -1, 0, 0),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(add(w, c3, 6, SADDR,
			     dynset("n", NFT_DYNSET_OP_ADD, NFT_REG_1, -1, 0, NFT_DYNSET_F_INV),
			     imm32(NFT_REG_1, 1), meta_set(NFT_META_MARK, NFT_REG_1), NULL),
			 0);
	assert_int_equal(RUN(w, c3, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(t.pkt.mark, 1);
	n->full = false;
	assert_int_equal(RUN(w, c3, tcp4(&t, 1)), NF_DROP);
	/* maps take data */
	assert_int_equal(add(w, c3, 7, SADDR, imm32(NFT_REG_2, 0xabcd),
			     dynset("dm", NFT_DYNSET_OP_ADD, NFT_REG_1, NFT_REG_2, 0, 0), NULL),
			 0);
	/* validation */
	assert_int_equal(
	    add(w, c3, 8, SADDR, dynset("n", NFT_DYNSET_OP_ADD, NFT_REG_1, -1, 1000, 0), NULL),
	    -EOPNOTSUPP);
	assert_int_equal(
	    add(w, c3, 8, SADDR, dynset("dm", NFT_DYNSET_OP_ADD, NFT_REG_1, -1, 0, 0), NULL),
	    -EINVAL);
	assert_int_equal(
	    add(w, c3, 8, SADDR, dynset("n", NFT_DYNSET_OP_ADD, NFT_REG_1, NFT_REG_2, 0, 0), NULL),
	    -EINVAL);
	assert_int_equal(add(w, c3, 8, SADDR, dynset("n", 7, NFT_REG_1, -1, 0, 0), NULL),
			 -EOPNOTSUPP);
	struct nftnl_expr *e = dynset("n", NFT_DYNSET_OP_ADD, NFT_REG_1, -1, 0, 0);
	nftnl_expr_add_expr(e, NFTNL_EXPR_DYNSET_EXPRESSIONS, ex("counter"));
	assert_int_equal(add(w, c3, 8, SADDR, e, NULL), -EOPNOTSUPP);
	free(s);
	free(n);
	free(m);
}

static void test_objref_map(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_set *om = add_set(w, "om", NFT_SET_MAP | NFT_SET_OBJECT, 4, 8, NFT_DATA_VALUE);
	struct nftdp_vm_stateful_val v;
	struct nftdp_vm_obj *ctr;
	struct nftnl_obj *o;
	struct nftnl_expr *e;
	struct tpkt t;
	const uint8_t a1[4] = {10, 0, 0, 1};

	o = nftnl_obj_alloc();
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "c1");
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, w->family);
	assert_int_equal(nftdp_vm_obj_create(o, w->st, &w->err, &ctr), 0);
	nftnl_obj_free(o);
	memcpy(om->keys[0], a1, 4);
	memcpy(om->data[0], &ctr, sizeof(ctr));
	om->n = 1;
	e = ex("objref");
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_SET_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_SET_NAME, "om");
	assert_int_equal(add(w, c, 1, SADDR, e, verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	t.buf[29] = 9;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT); /* no element: break */
	assert_int_equal(
	    nftdp_vm_state_read_obj(w->st, w->family, "t", "c1", NFT_OBJECT_COUNTER, false, &v), 0);
	assert_int_equal(v.packets, 1);
	nftdp_vm_obj_destroy(ctr);
	free(om);
}

/* ---------- ct through fake ops ---------- */

struct fake_ct {
	uint32_t mark, state;
};

static bool fct_get(const void *ct, uint32_t key, int dir, void *dest, uint32_t len)
{
	const struct fake_ct *f = ct;

	(void)dir;
	if (key == NFT_CT_MARK && len == 4) {
		memcpy(dest, &f->mark, 4);
		return true;
	}
	return false;
}

static void fct_set(void *ct, uint32_t key, int dir, const void *src, uint32_t len)
{
	struct fake_ct *f = ct;

	(void)dir;
	if (key == NFT_CT_MARK && len == 4)
		memcpy(&f->mark, src, 4);
}

static uint32_t fct_state(const void *ct)
{
	return ((const struct fake_ct *)ct)->state;
}

static const struct nftdp_vm_ct_ops fct_ops = {fct_get, fct_set, fct_state};

static void test_ct(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain_hook(w, "c", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	struct fake_ct f = {.mark = 0x42, .state = 1u << 2 /* established */};
	struct nftdp_vm_regs regs;
	struct nftnl_expr *e;
	struct tpkt t;

	assert_int_equal(add(w, c, 1, ct_get(NFT_CT_STATE, -1, NFT_REG_2),
			     ct_get(NFT_CT_MARK, -1, NFT_REG_1), cmp32(NFT_CMP_EQ, NFT_REG_1, 0x42),
			     imm32(NFT_REG_1, 0x43), NULL),
			 0);
	e = ex("ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_MARK);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, NFT_REG_1);
	assert_int_equal(add(w, c, 2, imm32(NFT_REG_1, 0x77), e, NULL), 0);
	/* ct expiration with an entry that cannot say: break */
	assert_int_equal(
	    add(w, c, 3, ct_get(NFT_CT_EXPIRATION, -1, NFT_REG_1), verdict(NF_DROP, NULL), NULL),
	    0);
	tcp4(&t, 1);
	t.pkt.ct = &f;
	t.pkt.ct_ops = &fct_ops;
	assert_int_equal(nftdp_vm_run_chain_regs(c, &t.pkt, &w->ctx, &regs), NF_ACCEPT);
	assert_int_equal(f.mark, 0x77);
	/* no ct: state is invalid, mark breaks the first rule, set does nothing */
	tcp4(&t, 1);
	struct nftdp_vm_chain *d = chain_hook(w, "d", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, d, 1, ct_get(NFT_CT_STATE, -1, NFT_REG_2),
			     ct_get(NFT_CT_MARK, -1, NFT_REG_1), verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(nftdp_vm_run_chain_regs(d, &t.pkt, &w->ctx, &regs), NF_ACCEPT);
	assert_int_equal(regs.data[4], 1);
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	/* notrack then ct state: untracked */
	struct nftdp_vm_chain *n = chain_hook(w, "n", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, n, 1, ex("notrack"), ct_get(NFT_CT_STATE, -1, NFT_REG_1), NULL), 0);
	assert_int_equal(nftdp_vm_run_chain_regs(n, &t.pkt, &w->ctx, &regs), NF_ACCEPT);
	assert_int_equal(regs.data[0], 1u << 6);
	assert_true(t.pkt.out.notrack);
	/* notrack on a packet that has an entry does nothing */
	tcp4(&t, 1);
	t.pkt.ct = &f;
	t.pkt.ct_ops = &fct_ops;
	RUN(w, n, &t.pkt);
	assert_false(t.pkt.out.notrack);
	/* notrack is refused in forward base chains */
	struct nftdp_vm_chain *fw = chain(w, "fw", true, NF_ACCEPT);
	assert_int_equal(add(w, fw, 1, ex("notrack"), NULL), -EOPNOTSUPP);
}

/* ---------- ct zone templates, ct timeout objects, connlimit ---------- */

struct fake_conn {
	uint64_t key;
	bool confirmed;
	const struct nftdp_vm_ct_timeout *pol;
};

static bool fake_dead[8]; /* by key */

static void fc_timeout(void *ct, const struct nftdp_vm_ct_timeout *pol)
{
	((struct fake_conn *)ct)->pol = pol;
}

static uint64_t fc_key(const void *ct, bool *confirmed)
{
	const struct fake_conn *f = ct;

	*confirmed = f->confirmed;
	return f->key;
}

static bool fc_live(const void *ct, uint64_t key)
{
	(void)ct;
	return key < 8 && !fake_dead[key];
}

static const struct nftdp_vm_ct_ops fc_ops = {
    .state = fct_state, .timeout = fc_timeout, .conn_key = fc_key, .conn_live = fc_live};

static unsigned int conn_run(struct world *w, struct nftdp_vm_chain *c, struct fake_conn *f)
{
	struct tpkt t;

	tcp4(&t, 80);
	if (f) {
		t.pkt.ct = f;
		t.pkt.ct_ops = &fc_ops;
	}
	return RUN(w, c, &t.pkt);
}

/* ---------- exthdr: SCTP chunks ---------- */

static struct nftnl_expr *sctp_chunk(uint8_t type, uint32_t off, uint32_t len, bool present,
				     uint32_t dreg)
{
	struct nftnl_expr *e = ex("exthdr");

	nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, type);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, NFT_EXTHDR_OP_SCTP);
	if (present)
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_FLAGS, NFT_EXTHDR_F_PRESENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_DREG, dreg);
	return e;
}

/* an IPv4 SCTP packet (from the hex of its IP datagram) behind an Ethernet
 * header, in a heap buffer of exactly len bytes (ASan sees any read past) */
static uint8_t *sctp4(struct nftdp_vm_pkt *pkt, const char *hex, uint32_t cut)
{
	uint32_t n = (uint32_t)strlen(hex) / 2, len = 14 + (cut && cut < n ? cut : n);
	uint8_t *b = calloc(1, len);

	assert_non_null(b);
	b[12] = 0x08;
	for (uint32_t i = 0; 14 + i < len; i++) {
		unsigned int v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		b[14 + i] = (uint8_t)v;
	}
	if (cut && len >= 14 + 4) { /* a datagram that ends there: chunks cut short */
		b[16] = (uint8_t)((len - 14) >> 8);
		b[17] = (uint8_t)(len - 14);
	}
	nftdp_vm_pkt_init(pkt, b, len, 0, 14);
	nftdp_vm_pkt_parse_ip(pkt);
	pkt->hook = NF_INET_FORWARD;
	return b;
}

static void test_exthdr_sctp(void **state)
{
	/* init (tag 0x1234, 10 outbound streams); abort then data (tsn 7) */
	static const char init[] = "45000034000100004084ae9b0a000001c0a8010113881389000000005"
				   "7cf4839010000140000123400000000000a000000000000";
	static const char abort_data[] = "45000038000100004084ae970a000001c0a8010113881389000000"
					 "01921693f10600000400000013000000070000000000000000616"
					 "26300";
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct nftdp_vm_regs regs;
	struct nftdp_vm_pkt pkt;
	uint8_t *b;

	/* r1: init present -> reg 1; r2: data tsn -> reg 2; r3: init's
	 * outbound streams == 10 drop */
	assert_int_equal(add(w, c, 1, sctp_chunk(1, 0, 1, true, NFT_REG32_00), NULL), 0);
	assert_int_equal(add(w, c, 2, imm32(NFT_REG32_01, 0xdead),
			     sctp_chunk(0, 4, 4, false, NFT_REG32_01), NULL),
			 0);
	assert_int_equal(add(w, c, 3, sctp_chunk(1, 12, 2, false, NFT_REG32_08),
			     cmp32(NFT_CMP_EQ, NFT_REG32_08, htons(10)), verdict(NF_DROP, NULL),
			     NULL),
			 0);
	b = sctp4(&pkt, init, 0);
	assert_int_equal(nftdp_vm_run_chain_regs(c, &pkt, &w->ctx, &regs), NF_DROP);
	assert_int_equal(regs.data[0], 1);
	assert_int_equal(regs.data[1], 0xdead); /* no data chunk: the rule broke */
	free(b);
	b = sctp4(&pkt, abort_data, 0);
	assert_int_equal(nftdp_vm_run_chain_regs(c, &pkt, &w->ctx, &regs), NF_ACCEPT);
	assert_int_equal(regs.data[0], 0);	  /* present is never a break */
	assert_int_equal(regs.data[1], htonl(7)); /* found behind the abort */
	free(b);
	/* every truncation: never a read past the end, and no data chunk
	 * that is cut is read */
	for (uint32_t cut = 1; cut < strlen(abort_data) / 2; cut++) {
		b = sctp4(&pkt, abort_data, cut);
		nftdp_vm_run_chain_regs(c, &pkt, &w->ctx, &regs);
		/* the data chunk (at 36, length 19) is read only whole */
		if (cut < 36 + 19)
			assert_int_equal(regs.data[1], 0xdead);
		else
			assert_int_equal(regs.data[1], htonl(7));
		free(b);
	}
	/* not SCTP: nothing is found */
	struct tpkt t;

	tcp4(&t, 80);
	assert_int_equal(nftdp_vm_run_chain_regs(c, &t.pkt, &w->ctx, &regs), NF_ACCEPT);
	assert_int_equal(regs.data[0], 0);
	/* dccp options are refused */
	struct nftnl_expr *e = sctp_chunk(1, 0, 1, true, NFT_REG_1);

	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, NFT_EXTHDR_OP_DCCP);
	assert_int_equal(add(w, c, 4, e, NULL), -EOPNOTSUPP);
}

/* ---------- rt, ipsec (xfrm), socket: a forwarded packet's answers ---------- */

static struct nftnl_expr *rt(uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = ex("rt");

	nftnl_expr_set_u32(e, NFTNL_EXPR_RT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_RT_DREG, dreg);
	return e;
}

static struct nftnl_expr *xfrm(uint32_t key, uint8_t dir, uint32_t dreg)
{
	struct nftnl_expr *e = ex("xfrm");

	nftnl_expr_set_u32(e, NFTNL_EXPR_XFRM_KEY, key);
	nftnl_expr_set_u8(e, NFTNL_EXPR_XFRM_DIR, dir);
	nftnl_expr_set_u32(e, NFTNL_EXPR_XFRM_DREG, dreg);
	return e;
}

static struct nftnl_expr *sock(uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = ex("socket");

	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, dreg);
	return e;
}

#define XFRM_IN 0  /* XFRM_POLICY_IN */
#define XFRM_OUT 1 /* XFRM_POLICY_OUT */

static void test_route_socket_xfrm(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *fw = chain_hook(w, "fw", true, NF_ACCEPT, NF_INET_FORWARD);
	struct nftdp_vm_chain *pre = chain_hook(w, "pre", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	struct nftdp_vm_regs regs;
	struct nftnl_expr *e;
	struct tpkt t;

	/* forward: routed, no realm, no xfrm bundle: classid 0, ipsec false */
	assert_int_equal(add(w, fw, 1, imm32(NFT_REG32_00, 0xffffffff),
			     rt(NFT_RT_CLASSID, NFT_REG32_00), imm32(NFT_REG32_01, 0xffffffff),
			     rt(NFT_RT_XFRM, NFT_REG32_01), NULL),
			 0);
	/* rt classid 0 drop: matches after routing */
	assert_int_equal(add(w, fw, 2, rt(NFT_RT_CLASSID, NFT_REG_1),
			     cmp32(NFT_CMP_EQ, NFT_REG_1, 0), verdict(NF_DROP, NULL), NULL),
			 0);
	tcp4(&t, 80);
	t.pkt.hook = NF_INET_FORWARD;
	assert_int_equal(nftdp_vm_run_chain_regs(fw, &t.pkt, &w->ctx, &regs), NF_DROP);
	assert_int_equal(regs.data[0], 0);
	assert_int_equal(regs.data[1], 0);
	/* prerouting: no route yet, the same rules break */
	assert_int_equal(add(w, pre, 1, rt(NFT_RT_CLASSID, NFT_REG_1),
			     cmp32(NFT_CMP_EQ, NFT_REG_1, 0), verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(add(w, pre, 2, rt(NFT_RT_XFRM, NFT_REG_1), verdict(NF_DROP, NULL), NULL),
			 0);
	tcp4(&t, 80);
	t.pkt.hook = NF_INET_PRE_ROUTING;
	assert_int_equal(RUN(w, pre, &t.pkt), NF_ACCEPT);
	/* ipsec in/out and socket: no secpath, no xfrm route, no socket: break */
	assert_int_equal(
	    add(w, pre, 3, sock(NFT_SOCKET_TRANSPARENT, NFT_REG_1), verdict(NF_DROP, NULL), NULL),
	    0);
	assert_int_equal(
	    add(w, pre, 4, sock(NFT_SOCKET_MARK, NFT_REG_1), verdict(NF_DROP, NULL), NULL), 0);
	assert_int_equal(add(w, pre, 5, xfrm(NFT_XFRM_KEY_REQID, XFRM_IN, NFT_REG_1),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(RUN(w, pre, &t.pkt), NF_ACCEPT);
	struct nftdp_vm_chain *f2 = chain_hook(w, "f2", true, NF_ACCEPT, NF_INET_FORWARD);
	assert_int_equal(add(w, f2, 1, xfrm(NFT_XFRM_KEY_SPI, XFRM_OUT, NFT_REG_1),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(add(w, f2, 2, xfrm(NFT_XFRM_KEY_DADDR_IP6, XFRM_IN, NFT_REG_1),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	t.pkt.hook = NF_INET_FORWARD;
	assert_int_equal(RUN(w, f2, &t.pkt), NF_ACCEPT);

	/* parameters as the kernel's init checks them */
	struct nftdp_vm_chain *x = chain_hook(w, "x", true, NF_ACCEPT, NF_INET_FORWARD);
	assert_int_equal(add(w, x, 1, rt(NFT_RT_NEXTHOP4, NFT_REG_1), NULL), 0);
	assert_int_equal(add(w, x, 2, rt(NFT_RT_TCPMSS, NFT_REG_1), NULL), 0);
	/* nft_rt_validate: rt mtu where the packet has its output route */
	struct nftdp_vm_chain *xp = chain_hook(w, "xp", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, xp, 1, rt(NFT_RT_TCPMSS, NFT_REG_1), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, xp, 2, rt(NFT_RT_NEXTHOP4, NFT_REG_1), NULL), 0);
	assert_int_equal(add(w, x, 3, rt(99, NFT_REG_1), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, x, 4, xfrm(99, XFRM_IN, NFT_REG_1), NULL), -EINVAL);
	assert_int_equal(add(w, x, 5, xfrm(NFT_XFRM_KEY_SPI, 7, NFT_REG_1), NULL), -EINVAL);
	e = xfrm(NFT_XFRM_KEY_SPI, XFRM_IN, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_XFRM_SPNUM, 6);
	assert_int_equal(add(w, x, 6, e, NULL), -ERANGE);
	assert_int_equal(add(w, x, 7, sock(99, NFT_REG_1), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, x, 8, sock(NFT_SOCKET_CGROUPV2, NFT_REG_1), NULL), -EINVAL);
	e = sock(NFT_SOCKET_CGROUPV2, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_LEVEL, 256);
	assert_int_equal(add(w, x, 9, e, NULL), -EOPNOTSUPP);
	/* a 16-byte key needs a register it fits in */
	assert_true(add(w, x, 10, xfrm(NFT_XFRM_KEY_SADDR_IP6, XFRM_IN, NFT_REG32_15), NULL) < 0);
	/* ip, ip6 and inet tables only */
	w->family = NFPROTO_BRIDGE;
	struct nftdp_vm_chain *b = chain_hook(w, "b", true, NF_ACCEPT, 2 /* NF_BR_FORWARD */);
	assert_int_equal(add(w, b, 1, rt(NFT_RT_CLASSID, NFT_REG_1), NULL), -EOPNOTSUPP);
	assert_int_equal(add(w, b, 2, xfrm(NFT_XFRM_KEY_SPI, XFRM_IN, NFT_REG_1), NULL),
			 -EOPNOTSUPP);
	assert_int_equal(add(w, b, 3, sock(NFT_SOCKET_MARK, NFT_REG_1), NULL), -EOPNOTSUPP);
	w->family = NFPROTO_IPV4;
}

static void test_ct_zone_timeout_connlimit(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *z = chain_hook(w, "z", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	struct nftdp_vm_chain *zr = chain_hook(w, "zr", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	struct nftdp_vm_chain *cl = chain(w, "cl", true, NF_ACCEPT);
	struct nftdp_vm_chain *to = chain_hook(w, "to", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	struct fake_conn f[4] = {{.key = 1}, {.key = 2}, {.key = 3}, {.key = 4}};
	struct nftdp_vm_regs regs;
	struct nftnl_expr *e;
	struct nftnl_obj *o;
	struct nftdp_vm_obj *vo;
	uint32_t arr[11] = {7, 8, 100, 11, 12, 13, 14, 4, 120, 300, 300};
	struct tpkt t;

	/* ct zone set 7; ct zone 7 (the template's); ct state (new); notrack
	 * (ignored: the template is the packet's ct) */
	assert_int_equal(add(w, z, 1, imm32(NFT_REG_1, 7), ct_set_dir(NFT_CT_ZONE, NFT_REG_1, -1),
			     ct_get(NFT_CT_ZONE, -1, NFT_REG32_08),
			     cmp32(NFT_CMP_EQ, NFT_REG32_08, 7),
			     ct_get(NFT_CT_STATE, -1, NFT_REG32_09), ex("notrack"), NULL),
			 0);
	tcp4(&t, 80);
	assert_int_equal(nftdp_vm_run_chain_regs(z, &t.pkt, &w->ctx, &regs), NF_ACCEPT);
	assert_int_equal(t.pkt.ct_zone, 7);
	assert_int_equal(t.pkt.ct_zone_dir, NFTDP_VM_CT_ZONE_DIR_BOTH);
	assert_int_equal(regs.data[9], 1u << 3);
	assert_false(t.pkt.ct_untracked);
	/* ct reply zone set 3 keys the reply direction only */
	assert_int_equal(add(w, zr, 1, imm32(NFT_REG_1, 3),
			     ct_set_dir(NFT_CT_ZONE, NFT_REG_1, 1 /* reply */), NULL),
			 0);
	tcp4(&t, 80);
	RUN(w, zr, &t.pkt);
	assert_int_equal(t.pkt.ct_zone_dir, NFTDP_VM_CT_ZONE_DIR_REPL);

	/* ct count over 1 drop */
	e = ex("connlimit");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_COUNT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS, NFT_CONNLIMIT_F_INV);
	assert_int_equal(add(w, cl, 1, e, verdict(NF_DROP, NULL), NULL), 0);
	memset(fake_dead, 0, sizeof(fake_dead));
	w->ctx.now_ms = 100;
	assert_int_equal(conn_run(w, cl, &f[0]), NF_ACCEPT); /* 1 */
	assert_int_equal(conn_run(w, cl, &f[1]), NF_DROP);   /* 2 */
	f[0].confirmed = true;
	assert_int_equal(conn_run(w, cl, &f[0]), NF_DROP); /* still 2 */
	fake_dead[2] = true;
	w->ctx.now_ms = 101;
	assert_int_equal(conn_run(w, cl, &f[0]), NF_ACCEPT); /* 2 is gone */
	/* a third connection is over; once it is gone the first passes again */
	fake_dead[2] = false;
	assert_int_equal(conn_run(w, cl, &f[2]), NF_DROP);
	fake_dead[3] = true;
	w->ctx.now_ms = 102;
	assert_int_equal(conn_run(w, cl, &f[0]), NF_ACCEPT);
	/* no entry: the packet counts itself; no L4 header: dropped */
	assert_int_equal(conn_run(w, cl, NULL), NF_DROP);
	f[0].confirmed = false;
	fake_dead[1] = true;
	tcp4(&t, 80);
	t.pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_L4PROTO;
	assert_int_equal(RUN(w, cl, &t.pkt), NF_DROP);
	/* per worker */
	w->ctx.worker = 1;
	assert_int_equal(conn_run(w, cl, &f[3]), NF_ACCEPT);
	w->ctx.worker = 0;

	/* a ct timeout object: libnftnl's TCP order to the kernel's indexes */
	o = nftnl_obj_alloc();
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "tshort");
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_TIMEOUT);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, w->family);
	nftnl_obj_set_u8(o, NFTNL_OBJ_CT_TIMEOUT_L4PROTO, IPPROTO_TCP);
	nftnl_obj_set_data(o, NFTNL_OBJ_CT_TIMEOUT_ARRAY, arr, sizeof(arr));
	assert_int_equal(nftdp_vm_obj_create(o, w->st, &w->err, &vo), 0);
	assert_int_equal(nftdp_vm_obj_keep(w->st, vo), 0);
	w->objs[w->n_objs] = vo;
	w->obj_names[w->n_objs++] = "tshort";
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "ushort");
	nftnl_obj_set_u8(o, NFTNL_OBJ_CT_TIMEOUT_L4PROTO, IPPROTO_UDP);
	assert_int_equal(nftdp_vm_obj_create(o, w->st, &w->err, &vo), 0);
	w->objs[w->n_objs] = vo;
	w->obj_names[w->n_objs++] = "ushort";
	nftnl_obj_free(o);
	e = ex("objref");
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_CT_TIMEOUT);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, "ushort");
	assert_int_equal(add(w, to, 1, e, NULL), 0);
	e = ex("objref");
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_CT_TIMEOUT);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, "tshort");
	assert_int_equal(add(w, to, 2, e, NULL), 0);
	f[0].pol = NULL;
	assert_int_equal(conn_run(w, to, &f[0]), NF_ACCEPT);
	assert_non_null(f[0].pol); /* the TCP one only: the UDP one left it alone */
	assert_int_equal(f[0].pol->l4proto, IPPROTO_TCP);
	assert_int_equal(f[0].pol->val[3], 100);  /* TCP_CONNTRACK_ESTABLISHED */
	assert_int_equal(f[0].pol->val[8], 4);	  /* CLOSE */
	assert_int_equal(f[0].pol->val[12], 300); /* RETRANS */
	assert_int_equal(f[0].pol->val[0], 7);	  /* values[0]: SYN_SENT */
	assert_int_equal(f[0].pol->given & 0x3ffe, 0x33fe);
	assert_true(f[0].pol->id != 0);
	/* without an entry nothing happens */
	assert_int_equal(conn_run(w, to, NULL), NF_ACCEPT);
}

/* ---------- netdev: fwd, dup, reject ---------- */

static void test_netdev(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c;
	struct nftnl_expr *e;
	struct tpkt t;
	uint8_t addr[4] = {192, 168, 0, 1};

	w->family = NFPROTO_NETDEV;
	c = chain_hook(w, "ingress", true, NF_ACCEPT, NF_NETDEV_INGRESS);
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_DEV, NFT_REG_1);
	assert_int_equal(add(w, c, 1, imm32(NFT_REG_1, 3), e, NULL), 0);
	e = ex("fwd");
	nftnl_expr_set_u32(e, NFTNL_EXPR_FWD_SREG_DEV, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FWD_SREG_ADDR, NFT_REG_2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FWD_NFPROTO, NFPROTO_IPV4);
	assert_int_equal(
	    add(w, c, 2, DPORT(be22), imm32(NFT_REG_1, 2), imm(NFT_REG_2, addr, 4), e, NULL), 0);
	e = ex("reject");
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
	assert_int_equal(add(w, c, 3, DPORT(be80), e, NULL), 0);
	/* fwd ip to ADDR: a frame of another protocol breaks the rule
	 * (nft_fwd_neigh_eval) */
	tcp4(&t, 22);
	t.pkt.nfproto = NFPROTO_IPV4;
	t.pkt.protocol = htons(0x86dd);
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.out.fwd_oif, 0);
	tcp4(&t, 22);
	t.pkt.nfproto = NFPROTO_IPV4;
	t.pkt.protocol = htons(0x0800);
	assert_int_equal(RUN(w, c, &t.pkt), NF_STOLEN);
	assert_int_equal(t.pkt.out.fwd_oif, 2);
	assert_int_equal(t.pkt.out.fwd_nfproto, NFPROTO_IPV4);
	assert_memory_equal(t.pkt.out.fwd_addr, addr, 4);
	assert_int_equal(t.pkt.out.n_dup, 1);
	assert_int_equal(t.pkt.out.dup_oif[0], 3);
	tcp4(&t, 80);
	t.pkt.nfproto = NFPROTO_IPV4;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	assert_true(t.pkt.out.reject);
	assert_int_equal(t.pkt.out.reject_type, NFT_REJECT_TCP_RST);
	w->family = NFPROTO_IPV4;
}

/* dup to an address (nft_dup_ipv4 / nft_dup_ipv6): the gateway and the
 * optional device go to the dataplane, which routes the copy */
static void test_dup_addr(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c;
	struct nftnl_expr *e;
	struct tpkt t;
	uint8_t gw[4] = {10, 2, 0, 1}, gw2[4] = {10, 9, 9, 9};
	uint8_t gw6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 1};

	c = chain_hook(w, "pre", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_ADDR, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_DEV, NFT_REG_2);
	assert_int_equal(add(w, c, 1, imm(NFT_REG_1, gw, 4), imm32(NFT_REG_2, 2), e, NULL), 0);
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_ADDR, NFT_REG_1);
	assert_int_equal(add(w, c, 2, imm(NFT_REG_1, gw2, 4), e, NULL), 0);
	tcp4(&t, 22);
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.out.n_dup, 2);
	assert_int_equal(t.pkt.out.dup_to_addr, 3);
	assert_int_equal(t.pkt.out.dup_oif[0], 2);
	assert_memory_equal(t.pkt.dup_addr[0], gw, 4);
	assert_int_equal(t.pkt.out.dup_oif[1], 0); /* no device: the kernel's oif -1 */
	assert_memory_equal(t.pkt.dup_addr[1], gw2, 4);
	/* at most NFTDP_VM_MAX_DUP a packet */
	for (int i = 0; i < 3; i++) {
		e = ex("dup");
		nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_ADDR, NFT_REG_1);
		assert_int_equal(add(w, c, 3 + i, imm(NFT_REG_1, gw2, 4), e, NULL), 0);
	}
	tcp4(&t, 22);
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.out.n_dup, NFTDP_VM_MAX_DUP);
	assert_int_equal(t.pkt.out.dup_to_addr, (1u << NFTDP_VM_MAX_DUP) - 1);
	/* an address register too short for IPv4 */
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_ADDR, NFT_REG32_15);
	assert_int_equal(add(w, c, 9, e, NULL), 0); /* 4 bytes fit the last register */

	w->family = NFPROTO_IPV6;
	c = chain_hook(w, "fw6", true, NF_ACCEPT, NF_INET_FORWARD);
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_ADDR, NFT_REG32_15);
	assert_int_equal(add(w, c, 1, e, NULL), -ERANGE); /* 16 bytes past the end */
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_ADDR, NFT_REG_1);
	assert_int_equal(add(w, c, 1, imm(NFT_REG_1, gw6, 16), e, NULL), 0);
	tcp4(&t, 22);
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.out.n_dup, 1);
	assert_int_equal(t.pkt.out.dup_to_addr, 1);
	assert_int_equal(t.pkt.out.dup_oif[0], 0);
	assert_memory_equal(t.pkt.dup_addr[0], gw6, 16);

	/* inet has no dup type in the kernel (nft_dup_ipv4/6 are per family) */
	w->family = NFPROTO_INET;
	c = chain_hook(w, "in", true, NF_ACCEPT, NF_INET_PRE_ROUTING);
	e = ex("dup");
	nftnl_expr_set_u32(e, NFTNL_EXPR_DUP_SREG_ADDR, NFT_REG_1);
	assert_int_equal(add(w, c, 1, imm(NFT_REG_1, gw, 4), e, NULL), -ENOENT);
	w->family = NFPROTO_IPV4;
}

/* IPv6 40-byte header (payload length plen, next header nh) at buf[0], then ext */
static struct nftdp_vm_pkt *ip6ext(struct tpkt *t, uint8_t nh, const uint8_t *ext, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->buf[0] = 0x60;
	t->buf[4] = (uint8_t)(n >> 8);
	t->buf[5] = (uint8_t)n;
	t->buf[6] = nh;
	t->buf[7] = 64;
	memcpy(t->buf + 40, ext, n);
	nftdp_vm_pkt_init(&t->pkt, t->buf, 40 + n, -1, 0);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	return &t->pkt;
}

/* the header walk of nft_set_pktinfo_ipv6_validate: ipv6_find_hdr with
 * IP6_FH_F_AUTH (tests/differential case 048 against the kernel) */
static void test_pkt_ipv6_walk(void **state)
{
	/* AH (udp next), 24 bytes, then 8 bytes of UDP */
	static const uint8_t ah[32] = {17, 4, 0, 0, 0, 0, 0, 1};
	/* destination options whose next header is NEXTHDR_NONE */
	static const uint8_t none[8] = {59, 0, 1, 4};
	/* hop-by-hop, then a routing header cut to 2 bytes */
	static const uint8_t rt_cut[10] = {43, 0, 1, 4, 0, 0, 0, 0, 17, 0};
	/* a non-first fragment header cut to 4 bytes, UDP next */
	static const uint8_t frag_cut[4] = {17, 0, 0x00, 0x21};
	/* hop-by-hop then UDP: the walk goes on through ordinary headers */
	static const uint8_t hbh_udp[16] = {17, 0, 1, 4};
	static const uint8_t past_end[8] = {6, 255, 1, 4};
	struct tpkt t;
	struct nftdp_vm_pkt *p;

	(void)state;
	p = ip6ext(&t, 51, ah, sizeof(ah));
	assert_true(p->flags & NFTDP_VM_PKT_F_L4PROTO);
	assert_int_equal(p->l4proto, 51);
	assert_int_equal(p->th_off, 40);

	p = ip6ext(&t, 60, none, sizeof(none));
	assert_true(p->flags & NFTDP_VM_PKT_F_L4PROTO);
	assert_int_equal(p->l4proto, 59);
	assert_int_equal(p->th_off, 48);

	p = ip6ext(&t, 59, none, 0);
	assert_true(p->flags & NFTDP_VM_PKT_F_L4PROTO);
	assert_int_equal(p->l4proto, 59);
	assert_int_equal(p->th_off, 40);

	p = ip6ext(&t, 0, rt_cut, sizeof(rt_cut));
	assert_false(p->flags & NFTDP_VM_PKT_F_L4PROTO);

	p = ip6ext(&t, 44, frag_cut, sizeof(frag_cut));
	assert_true(p->flags & NFTDP_VM_PKT_F_L4PROTO);
	assert_int_equal(p->l4proto, 17);
	assert_int_equal(p->fragoff, 0x20);

	p = ip6ext(&t, 0, hbh_udp, sizeof(hbh_udp));
	assert_true(p->flags & NFTDP_VM_PKT_F_L4PROTO);
	assert_int_equal(p->l4proto, 17);
	assert_int_equal(p->th_off, 48);

	/* destination options claiming 2048 bytes in an 8-byte payload
	 * (issue 11): TCP still, but th_off stops at the end of the packet
	 * (differential case 183) */
	p = ip6ext(&t, 60, past_end, sizeof(past_end));
	assert_true(p->flags & NFTDP_VM_PKT_F_L4PROTO);
	assert_int_equal(p->l4proto, 6);
	assert_int_equal(p->th_off, 48);
	assert_true(p->th_off <= p->len);
}

static void test_burst(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "c", true, NF_ACCEPT);
	struct tpkt t[NFTDP_VM_BURST_MAX];
	struct nftdp_vm_pkt *p[NFTDP_VM_BURST_MAX];
	unsigned int v[NFTDP_VM_BURST_MAX];

	assert_int_equal(add(w, c, 1, DPORT(be22), verdict(NF_DROP, NULL), NULL), 0);
	for (int i = 0; i < NFTDP_VM_BURST_MAX; i++)
		p[i] = tcp4(&t[i], (uint16_t)(i % 2 ? 22 : 80));
	nftdp_vm_run_burst(c, p, NFTDP_VM_BURST_MAX, v, &w->ctx);
	for (int i = 0; i < NFTDP_VM_BURST_MAX; i++)
		assert_int_equal(v[i], i % 2 ? NF_DROP : NF_ACCEPT);
}

/*
 * nftdp_vm_pkt_parse_ip_fast gives the view nftdp_vm_pkt_parse_ip gives,
 * and a header view where it says it applies has the same fields: over
 * IPv4 with options, fragments and bad lengths, IPv6 with extension
 * headers, and truncations of each.
 */
static void test_pkt_parse_fast(void **state)
{
	static const uint8_t v6_next[] = {6, 17, 58, 0, 43, 44, 59, 60, 51, 132};
	uint8_t buf[128];

	(void)state;
	for (unsigned int shape = 0; shape < 12 + sizeof(v6_next); shape++) {
		for (uint32_t cut = 0; cut <= 80; cut++) {
			struct nftdp_vm_pkt a, b, h, r;
			uint32_t len;
			bool ok;

			memset(buf, 0, sizeof(buf));
			if (shape < 12) { /* IPv4: ihl 5..7, total length, fragment */
				buf[14] = (uint8_t)(0x45 + shape % 3);
				buf[16] = 0, buf[17] = (uint8_t)(shape / 3 == 3 ? 10 : 60);
				buf[20] = (uint8_t)(shape / 3 == 1 ? 0x20 : 0);
				buf[21] = (uint8_t)(shape / 3 == 2 ? 5 : 0);
				buf[23] = 6;
			} else { /* IPv6 with a next header */
				buf[14] = 0x60;
				buf[19] = 40;
				buf[20] = v6_next[shape - 12];
				buf[54] = 6, buf[55] = 1; /* an extension header's next, length */
			}
			len = 14 + cut;
			nftdp_vm_pkt_init(&a, buf, len, 0, 14);
			a.mark = 7;
			b = a;
			nftdp_vm_pkt_parse_ip(&a);
			nftdp_vm_pkt_parse_ip_fast(&b);
			assert_memory_equal(&a, &b, sizeof(a));
			memset(&h, 0x5a, sizeof(h));
			ok = nftdp_vm_pkt_header_view(&h, buf, len, 14);
			if (!ok)
				continue;
			assert_true(a.flags & NFTDP_VM_PKT_F_L4PROTO);
			assert_ptr_equal(h.data, a.data);
			assert_int_equal(h.len, a.len);
			assert_int_equal(h.mac_off, a.mac_off);
			assert_int_equal(h.nh_off, a.nh_off);
			assert_int_equal(h.th_off, a.th_off);
			assert_int_equal(h.skb_len, a.skb_len);
			assert_int_equal(h.nfproto, a.nfproto);
			assert_int_equal(h.l4proto, a.l4proto);
			assert_int_equal(h.fragoff, a.fragoff);
			assert_int_equal(h.flags, a.flags);
			assert_int_equal(h.nftrace, 0);
			/* the view after ip_rcv's checks: the same fields */
			memset(&r, 0x5a, sizeof(r));
			assert_true(nftdp_vm_pkt_header_view_rcv(&r, buf, 14, h.skb_len,
								 h.nfproto == NFPROTO_IPV4));
			assert_memory_equal(&r, &h, sizeof(r));
		}
	}
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, world_setup, world_teardown)
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pkt_parse_fast),
	    T(test_policy),
	    T(test_prefilter_runs),
	    T(test_jump_return_goto),
	    T(test_jump_errors),
	    T(test_jump_depth),
	    T(test_jump_stack_overflow_drops),
	    T(test_compile_errors),
	    T(test_jhash_known_answer),
	    T(test_symhash_and_numgen),
	    T(test_meta_more),
	    T(test_payload_nh_and_short_bitwise),
	    T(test_payload_nh_odd_and_cmp_masked),
	    T(test_payload_write_not_writable),
	    T(test_counter_survives_recompile),
	    T(test_quota),
	    T(test_limit),
	    T(test_stateful_workers),
	    T(test_last_and_log),
	    T(test_objects),
	    T(test_lookup),
	    T(test_lookup_elem_counter),
	    T(test_vmap),
	    T(test_vmap_many_targets),
	    T(test_dynset),
	    T(test_objref_map),
	    T(test_ct),
	    T(test_route_socket_xfrm),
	    T(test_exthdr_sctp),
	    T(test_ct_zone_timeout_connlimit),
	    T(test_netdev),
	    T(test_dup_addr),
	    T(test_burst),
	    T(test_pkt_ipv6_walk),
	};

	return cmocka_run_group_tests_name("vm", tests, NULL, NULL);
}
