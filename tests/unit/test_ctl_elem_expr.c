// SPDX-License-Identifier: BSD-3-Clause
/*
 * Element expressions on a set that declares none and is not dynamic
 * (nft_add_set_elem allocates any stateful expressions an element brings,
 * whatever its set declares): the set's first batch gives it an
 * expression area when one of its elements needs more than the counter a
 * VM slot serves, and each element's state starts from its message's
 * values. A later batch that brings such an element to a set made
 * without the area makes the set's dataplane copy again, with it.
 * `last` (nft_last) is one of them, restored as used some time ago.
 * Driven in-process through ctl_nfnl_rcv with the dataplane build on.
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
#include "nftdp_common.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

#include <linux/netfilter.h>

static struct nftdp_ctl ctl;
static struct nftdp_vm_state *vst;
static struct nftdp_vm_gen_domain *dom;

static struct nlmsghdr *nft(uint8_t type, uint16_t flags)
{
	return ctl_batch_put(type, flags, NFPROTO_IPV4);
}

/* set NAME { type ipv4_addr; flags FLAGS; } in table x */
static void add_set(const char *name, uint32_t flags, uint32_t id)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWSET, NLM_F_CREATE);

	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, "x");
	mnl_attr_put_strz(nlh, NFTA_SET_NAME, name);
	mnl_attr_put_u32(nlh, NFTA_SET_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_TYPE, htonl(7));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_LEN, htonl(4));
	mnl_attr_put_u32(nlh, NFTA_SET_ID, htonl(id));
	ctl_batch_done(nlh);
}

/* table x, set y { type ipv4_addr; } */
static void add_table_set(void)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWTABLE, NLM_F_CREATE);

	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, "x");
	ctl_batch_done(nlh);
	add_set("y", 0, 1);
}

enum { NONE, COUNTER, QUOTA, COUNTER_LIMIT, LIMIT, LAST, COUNTER_LAST };

static void put_expr(struct nlmsghdr *nlh, uint16_t type, int what)
{
	struct nlattr *x = mnl_attr_nest_start(nlh, type), *d;

	if (what == QUOTA) {
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "quota");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_QUOTA_BYTES, htobe64(1000));
		mnl_attr_put_u64(nlh, NFTA_QUOTA_CONSUMED, htobe64(10));
		mnl_attr_put_u32(nlh, NFTA_QUOTA_FLAGS, htonl(NFT_QUOTA_F_INV));
	} else if (what == COUNTER) {
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "counter");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, htobe64(3));
		mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES, htobe64(30));
	} else if (what == LAST) {
		/* used 3 s ago */
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "last");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u32(nlh, NFTA_LAST_SET, htonl(1));
		mnl_attr_put_u64(nlh, NFTA_LAST_MSECS, htobe64(3000));
	} else {
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "limit");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_LIMIT_RATE, htobe64(2));
		mnl_attr_put_u64(nlh, NFTA_LIMIT_UNIT, htobe64(60));
		mnl_attr_put_u32(nlh, NFTA_LIMIT_BURST, htonl(3));
		mnl_attr_put_u32(nlh, NFTA_LIMIT_TYPE, htonl(NFT_LIMIT_PKTS));
		mnl_attr_put_u32(nlh, NFTA_LIMIT_FLAGS, htonl(NFT_LIMIT_F_INV));
	}
	mnl_attr_nest_end(nlh, d);
	mnl_attr_nest_end(nlh, x);
}

/* 1.1.1.<last> with what: one expression under NFTA_SET_ELEM_EXPR, a
 * counter and a limit in NFTA_SET_ELEM_EXPRESSIONS (as nft sends them) */
static void add_elem_to(const char *set, uint8_t last, int what)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWSETELEM, NLM_F_CREATE);
	struct nlattr *l, *e, *k, *x;

	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "x");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
	l = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	e = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	k = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);
	mnl_attr_put_u32(nlh, NFTA_DATA_VALUE, htonl(0x01010100u | last));
	mnl_attr_nest_end(nlh, k);
	if (what == COUNTER_LIMIT || what == COUNTER_LAST) {
		x = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_EXPRESSIONS);
		put_expr(nlh, NFTA_LIST_ELEM, COUNTER);
		put_expr(nlh, NFTA_LIST_ELEM, what == COUNTER_LIMIT ? LIMIT : LAST);
		mnl_attr_nest_end(nlh, x);
	} else if (what != NONE) {
		put_expr(nlh, NFTA_SET_ELEM_EXPR, what);
	}
	mnl_attr_nest_end(nlh, e);
	mnl_attr_nest_end(nlh, l);
	ctl_batch_done(nlh);
}

static void add_elem(uint8_t last, int what)
{
	add_elem_to("y", last, what);
}

/* chain c, and rule `ip saddr @y` in it */
static void add_chain_rule(void)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWCHAIN, NLM_F_CREATE);
	struct nlattr *exprs, *elem, *data;

	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "x");
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, "c");
	ctl_batch_done(nlh);
	nlh = nft(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "x");
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, "c");
	exprs = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "payload");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u32(nlh, NFTA_PAYLOAD_DREG, htonl(NFT_REG_1));
	mnl_attr_put_u32(nlh, NFTA_PAYLOAD_BASE, htonl(NFT_PAYLOAD_NETWORK_HEADER));
	mnl_attr_put_u32(nlh, NFTA_PAYLOAD_OFFSET, htonl(12));
	mnl_attr_put_u32(nlh, NFTA_PAYLOAD_LEN, htonl(4));
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "lookup");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_strz(nlh, NFTA_LOOKUP_SET, "y");
	mnl_attr_put_u32(nlh, NFTA_LOOKUP_SREG, htonl(NFT_REG_1));
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	mnl_attr_nest_end(nlh, exprs);
	ctl_batch_done(nlh);
}

static struct ctl_chain *chain_c(void)
{
	struct ctl_table *t = ctl_list_entry(ctl.state->tables.next, struct ctl_table, list);

	return ctl_list_entry(t->chains.next, struct ctl_chain, list);
}

/* set y */
static struct ctl_set *the_set(void)
{
	struct ctl_table *t;
	struct ctl_set *s;

	ctl_list_for_each_entry(t, &ctl.state->tables, list)
		ctl_list_for_each_entry(s, &t->sets, list)
			if (strcmp(s->name, "y") == 0)
				return s;
	return NULL;
}

/* Whether element 1.1.1.<last> is in set y's dataplane copy. */
static bool elem_in(uint8_t last, const void **data)
{
	uint32_t key = htonl(0x01010100u | last);

	return nftdp_set_lookup(the_set()->dp, &key, data, nftdp_now_ms());
}

/* The live expressions of element 1.1.1.<last>: how many, into v. */
static unsigned int elem_exprs(uint8_t last, struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX])
{
	struct ctl_set *s = the_set();
	uint32_t key = htonl(0x01010100u | last);
	const void *data = NULL;

	assert_non_null(s);
	assert_non_null(s->dp);
	assert_true(s->dp_expr_at != 0);
	assert_true(nftdp_set_lookup(s->dp, &key, &data, nftdp_now_ms()));
	assert_non_null(data);
	return nftdp_vm_elem_expr_read((const uint8_t *)data + s->dp_expr_at - 1, v);
}

static int setup(void **unused)
{
	struct nftdp_vm_state_config scfg = {
	    .n_workers = 1, .max_counters = 64, .max_cells = 64, .log_ring_size = 8};
	struct nftdp_vm_gen_domain_config dcfg = {.max_readers = 1};

	(void)unused;
	memset(&ctl, 0, sizeof(ctl));
	if (nftdp_vm_state_create(&scfg, &vst) < 0)
		return -1;
	dcfg.state = vst;
	if (nftdp_vm_gen_domain_create(&dcfg, &dom) < 0)
		return -1;
	ctl.cfg.vm_state = vst;
	ctl.cfg.gen_dom = dom;
	if (ctl_state_create(&ctl) < 0 || ctl_build_create(&ctl) < 0)
		return -1;
	return ctl.bld ? 0 : -1;
}

static int teardown(void **unused)
{
	(void)unused;
	ctl_build_destroy(&ctl);
	ctl_state_destroy(&ctl);
	nftdp_vm_gen_domain_destroy(dom);
	nftdp_vm_state_destroy(vst);
	return 0;
}

/* A quota, a counter with a limit, a lone counter (the set has no counter
 * slot) and none: all run, each element with its own state. */
static void test_first_batch_gets_area(void **unused)
{
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];

	(void)unused;
	ctl_batch_begin();
	add_table_set();
	add_elem(1, QUOTA);
	add_elem(2, COUNTER_LIMIT);
	add_elem(3, COUNTER);
	add_elem(4, NONE);
	add_elem(5, COUNTER_LAST);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);

	assert_int_equal(elem_exprs(1, v), 1);
	assert_int_equal(v[0].type, NFTDP_VM_ELEM_EXPR_QUOTA);
	assert_int_equal(v[0].quota, 1000);
	assert_int_equal(v[0].consumed, 10);
	assert_int_equal(v[0].flags, NFT_QUOTA_F_INV);

	assert_int_equal(elem_exprs(2, v), 2);
	assert_int_equal(v[0].type, NFTDP_VM_ELEM_EXPR_COUNTER);
	assert_int_equal(v[0].packets, 3);
	assert_int_equal(v[0].bytes, 30);
	assert_int_equal(v[1].type, NFTDP_VM_ELEM_EXPR_LIMIT);
	assert_int_equal(v[1].rate, 2);
	assert_int_equal(v[1].unit, 60);
	assert_int_equal(v[1].burst, 3);
	assert_int_equal(v[1].flags, NFT_LIMIT_F_INV);

	assert_int_equal(elem_exprs(3, v), 1);
	assert_int_equal(v[0].type, NFTDP_VM_ELEM_EXPR_COUNTER);
	assert_int_equal(v[0].packets, 3);

	assert_int_equal(elem_exprs(4, v), 0);

	assert_int_equal(elem_exprs(5, v), 2);
	assert_int_equal(v[0].type, NFTDP_VM_ELEM_EXPR_COUNTER);
	assert_int_equal(v[1].type, NFTDP_VM_ELEM_EXPR_LAST);
	assert_int_equal(v[1].last_set, 1);
	assert_true(v[1].last_msecs >= 3000 && v[1].last_msecs < 3500);
}

/* A set made without the area, given an element with a quota by a later
 * batch, is made again with it (set_regrow): its elements copied, the new
 * one with its quota. A batch that fails after that (a one-field interval
 * set is not made again) leaves the old copy in place. */
static void test_later_batch_regrows(void **unused)
{
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	const struct nftdp_vm_chain *compiled;
	const void *data;
	struct nftdp_set *old;

	(void)unused;
	ctl_batch_begin();
	add_table_set();
	add_set("z", NFT_SET_INTERVAL, 2);
	add_elem(1, NONE);
	add_chain_rule();
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_int_equal(the_set()->dp_expr_at, 0);
	old = the_set()->dp;
	compiled = chain_c()->dp_cur;
	assert_non_null(compiled);

	ctl_batch_begin();
	add_elem(2, QUOTA);
	add_elem_to("z", 9, QUOTA);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 1);
	assert_int_equal(ctl_stub_errs.err[0], EOPNOTSUPP);
	assert_ptr_equal(the_set()->dp, old);
	assert_null(the_set()->dp_prev);
	assert_int_equal(the_set()->dp_expr_at, 0);
	assert_true(elem_in(1, &data));
	assert_false(elem_in(2, &data));
	assert_ptr_equal(chain_c()->dp_cur, compiled);

	ctl_batch_begin();
	add_elem(2, QUOTA);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_ptr_not_equal(the_set()->dp, old);
	assert_null(the_set()->dp_prev);
	/* the rule that looks y up now looks the new copy up */
	assert_ptr_not_equal(chain_c()->dp_cur, compiled);
	assert_int_equal(elem_exprs(1, v), 0);
	assert_int_equal(elem_exprs(2, v), 1);
	assert_int_equal(v[0].type, NFTDP_VM_ELEM_EXPR_QUOTA);
	assert_int_equal(v[0].consumed, 10);

	ctl_batch_begin();
	add_elem(3, COUNTER_LIMIT);
	add_elem(4, NONE);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_int_equal(elem_exprs(3, v), 2);
	assert_int_equal(elem_exprs(4, v), 0);
	assert_int_equal(elem_exprs(2, v), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_first_batch_gets_area, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_later_batch_regrows, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
