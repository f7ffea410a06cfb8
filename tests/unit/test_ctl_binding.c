// SPDX-License-Identifier: BSD-3-Clause
/*
 * Binding chains (NFT_CHAIN_BINDING, nft's `jump { ... }`) in the control
 * plane, driven in-process through ctl_nfnl_rcv as nft 1.0.6 sends them: a
 * chain add without name, flags BINDING and a chain id, a rule in it by
 * chain id, and a rule whose immediate jumps by NFTA_VERDICT_CHAIN_ID.
 * The control plane runs without the dataplane build (as --control-only);
 * the stand-in session (tests/lib/ctl_stub.c) records the errors it is
 * answered (ctl_stub_errs).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include "ctl_state.h"
#include "ctl_stub.h"

#include <libnftnl/expr.h>

#include <linux/netfilter.h>

static struct nftdp_ctl ctl;

/* ---- batches ---- */

static struct nlmsghdr *nft(uint8_t type, uint16_t flags)
{
	return ctl_batch_put(type, flags, NFPROTO_IPV4);
}

static void add_table(void)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWTABLE, NLM_F_CREATE);

	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, "t");
	ctl_batch_done(nlh);
}

static void add_chain(const char *name)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWCHAIN, NLM_F_CREATE);

	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, name);
	ctl_batch_done(nlh);
}

static void add_binding(uint32_t id)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWCHAIN, NLM_F_CREATE);

	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_u32(nlh, NFTA_CHAIN_FLAGS, htonl(NFT_CHAIN_BINDING));
	mnl_attr_put_u32(nlh, NFTA_CHAIN_ID, htonl(id));
	ctl_batch_done(nlh);
}

/* a rule of one immediate: accept (chain NULL, id 0), or jump to chain
 * by name or, with id, by chain id; the rule's chain by name or by id */
static void add_rule(const char *chain, uint32_t chain_id, const char *to, uint32_t to_id)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	struct nlattr *exprs, *elem, *data, *imm, *v;

	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "t");
	if (chain)
		mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, chain);
	else
		mnl_attr_put_u32(nlh, NFTA_RULE_CHAIN_ID, htonl(chain_id));
	exprs = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "immediate");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u32(nlh, NFTA_IMMEDIATE_DREG, htonl(NFT_REG_VERDICT));
	imm = mnl_attr_nest_start(nlh, NFTA_IMMEDIATE_DATA);
	v = mnl_attr_nest_start(nlh, NFTA_DATA_VERDICT);
	if (to || to_id) {
		mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, htonl((uint32_t)NFT_JUMP));
		if (to)
			mnl_attr_put_strz(nlh, NFTA_VERDICT_CHAIN, to);
		else
			mnl_attr_put_u32(nlh, NFTA_VERDICT_CHAIN_ID, htonl(to_id));
	} else {
		mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, htonl(NF_ACCEPT));
	}
	mnl_attr_nest_end(nlh, v);
	mnl_attr_nest_end(nlh, imm);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	mnl_attr_nest_end(nlh, exprs);
	ctl_batch_done(nlh);
}

static void del_rule(const char *chain, uint64_t handle)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_DELRULE, 0);

	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, chain);
	mnl_attr_put_u64(nlh, NFTA_RULE_HANDLE, htobe64(handle));
	ctl_batch_done(nlh);
}

static void del_chain_handle(uint64_t handle)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_DELCHAIN, 0);

	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_u64(nlh, NFTA_CHAIN_HANDLE, htobe64(handle));
	ctl_batch_done(nlh);
}

/* map m: ipv4 addresses to verdicts */
static void add_vmap(void)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWSET, NLM_F_CREATE);

	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_SET_NAME, "m");
	mnl_attr_put_u32(nlh, NFTA_SET_FLAGS, htonl(NFT_SET_MAP));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_TYPE, htonl(7));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_LEN, htonl(4));
	mnl_attr_put_u32(nlh, NFTA_SET_DATA_TYPE, htonl(NFT_DATA_VERDICT));
	mnl_attr_put_u32(nlh, NFTA_SET_DATA_LEN, htonl(16));
	mnl_attr_put_u32(nlh, NFTA_SET_ID, htonl(1));
	ctl_batch_done(nlh);
}

static void add_elem_jump(const char *to)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWSETELEM, NLM_F_CREATE);
	struct nlattr *l, *e, *k, *d, *v;

	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "m");
	l = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	e = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	k = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);
	mnl_attr_put_u32(nlh, NFTA_DATA_VALUE, htonl(0x0a000001));
	mnl_attr_nest_end(nlh, k);
	d = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_DATA);
	v = mnl_attr_nest_start(nlh, NFTA_DATA_VERDICT);
	mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, htonl((uint32_t)NFT_JUMP));
	mnl_attr_put_strz(nlh, NFTA_VERDICT_CHAIN, to);
	mnl_attr_nest_end(nlh, v);
	mnl_attr_nest_end(nlh, d);
	mnl_attr_nest_end(nlh, e);
	mnl_attr_nest_end(nlh, l);
	ctl_batch_done(nlh);
}

/* ---- the state ---- */

static struct ctl_table *table_t(void)
{
	struct ctl_table *t;

	ctl_list_for_each_entry(t, &ctl.state->tables, list) {
		if (strcmp(t->name, "t") == 0)
			return t;
	}
	return NULL;
}

static unsigned int nchains(void)
{
	struct ctl_table *t = table_t();
	struct ctl_chain *c;
	unsigned int n = 0;

	if (t == NULL)
		return 0;
	ctl_list_for_each_entry(c, &t->chains, list)
		n++;
	return n;
}

static struct ctl_rule *first_rule(struct ctl_chain *c)
{
	assert_false(ctl_list_empty(&c->rules));
	return ctl_list_entry(c->rules.next, struct ctl_rule, list);
}

static int setup(void **unused)
{
	(void)unused;
	memset(&ctl, 0, sizeof(ctl));
	return ctl_state_create(&ctl);
}

static int teardown(void **unused)
{
	(void)unused;
	ctl_state_destroy(&ctl);
	return 0;
}

/* table t, chain c, a binding chain holding one accept, c jumping to it */
static void load(uint32_t id)
{
	ctl_batch_begin();
	add_table();
	add_chain("c");
	add_binding(id);
	add_rule(NULL, id, NULL, 0);
	add_rule("c", 0, NULL, id);
	ctl_batch_send(&ctl);
}

static void test_bind(void **unused)
{
	struct ctl_table *t;
	struct ctl_chain *b;
	struct ctl_rule *r;
	struct nftnl_expr_iter *it;
	struct nftnl_expr *e;

	(void)unused;
	load(7);
	assert_int_equal(ctl_stub_errs.n, 0);
	t = table_t();
	assert_non_null(t);
	b = ctl_chain_lookup(t, "__chain1");
	assert_non_null(b);
	assert_true(b->binding && b->bound);
	assert_int_equal(b->use, 2); /* its rule and the jump */
	assert_int_equal(b->handle, 2);
	/* the rule stores the jump by name, as the kernel dumps it */
	r = first_rule(ctl_chain_lookup(t, "c"));
	it = nftnl_expr_iter_create(r->nl);
	e = nftnl_expr_iter_next(it);
	assert_string_equal(nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN), "__chain1");
	nftnl_expr_iter_destroy(it);

	/* a second one is numbered on: one counter for all tables */
	ctl_batch_begin();
	add_binding(8);
	add_rule(NULL, 8, NULL, 0);
	add_rule("c", 0, NULL, 8);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_non_null(ctl_chain_lookup(t, "__chain2"));
	assert_int_equal(nchains(), 3);

	/* neither chain nor its rules go alone */
	ctl_batch_begin();
	del_chain_handle(2);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 1);
	assert_int_equal(ctl_stub_errs.err[0], EOPNOTSUPP);
	ctl_batch_begin();
	del_rule("__chain1", first_rule(b)->handle);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.err[0], EOPNOTSUPP);
	ctl_batch_begin();
	add_rule("__chain1", 0, NULL, 0);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.err[0], EOPNOTSUPP);
	/* nor updated (renamed) */
	ctl_batch_begin();
	{
		struct nlmsghdr *nlh = nft(NFT_MSG_NEWCHAIN, 0);

		mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
		mnl_attr_put_u64(nlh, NFTA_CHAIN_HANDLE, htobe64(2));
		mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, "x");
		ctl_batch_done(nlh);
	}
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 1);
	assert_int_equal(ctl_stub_errs.err[0], EINVAL);
	/* nor jumped to from a verdict map (NFT_DATA_DESC_SETELEM) */
	ctl_batch_begin();
	add_vmap();
	add_elem_jump("c");
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	ctl_batch_begin();
	add_elem_jump("__chain1");
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 1);
	assert_int_equal(ctl_stub_errs.err[0], EINVAL);
	/* nor is it jumped to twice */
	ctl_batch_begin();
	add_rule("c", 0, "__chain1", 0);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.err[0], EINVAL);
	assert_int_equal(nchains(), 3);

	/* the rule's deletion takes the chain, which an abort gives back */
	r = first_rule(ctl_chain_lookup(t, "c"));
	ctl_batch_begin();
	del_rule("c", r->handle);
	add_chain("c"); /* fine: an update */
	del_rule("c", 999);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.err[0], ENOENT);
	assert_int_equal(nchains(), 3);
	assert_true(b->bound && !b->dead);
	ctl_batch_begin();
	del_rule("c", r->handle);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_int_equal(nchains(), 2);
	assert_null(ctl_chain_lookup(t, "__chain1"));
	assert_non_null(ctl_chain_lookup(t, "__chain2"));
}

static void test_unbound(void **unused)
{
	(void)unused;
	/* a binding chain no rule binds fails the batch at its first message */
	ctl_batch_begin();
	add_table();
	add_chain("c");
	add_binding(3);
	add_rule(NULL, 3, NULL, 0);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 1);
	assert_int_equal(ctl_stub_errs.err[0], EINVAL);
	assert_int_equal(ctl_stub_errs.seq[0], 1);
	assert_null(table_t());

	/* a jump by an id no chain of the batch has */
	ctl_batch_begin();
	add_table();
	add_chain("c");
	add_rule("c", 0, NULL, 99);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.err[0], ENOENT);
	assert_null(table_t());

	/* a failing batch unbinds: the next one binds afresh */
	ctl_batch_begin();
	add_table();
	add_chain("c");
	add_binding(4);
	add_rule("c", 0, NULL, 4);
	add_rule("nosuch", 0, NULL, 0);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.err[0], ENOENT);
	assert_null(table_t());
	load(5);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_int_equal(nchains(), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_bind, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unbound, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
