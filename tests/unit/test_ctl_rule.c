// SPDX-License-Identifier: BSD-3-Clause
/*
 * Rules in the control plane, in-process (tests/lib/ctl_stub.c): what a
 * client can make the daemon keep. A rule with an anonymous set, added
 * and deleted again and again as `nft add rule ... ip saddr { ... }` and
 * `nft delete rule ... handle N` do, leaves the heap where it was: the
 * set's name "__set%d" is resolved before libnftnl parses the rule, so no
 * setter of libnftnl (whose 1.2.4 ones leak the string they replace)
 * runs over a name. A chain renamed back and forth, with a jump to it,
 * leaves it where it was too (the setters it uses free what they
 * replace).
 */
#include <errno.h>
#include <malloc.h>
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

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifdef HAVE_ASAN
/* the ASan runtime's (sanitizer/allocator_interface.h, which gcc does not
 * always install) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

static struct nftdp_ctl ctl;

/* bytes the heap holds for the program: ASan's count where ASan replaces
 * malloc, glibc's otherwise */
static size_t heap_in_use(void)
{
#ifdef HAVE_ASAN
	return __sanitizer_get_current_allocated_bytes();
#else
	return mallinfo2().uordblks;
#endif
}

static struct nlmsghdr *nft(uint8_t type, uint16_t flags)
{
	return ctl_batch_put(type, flags, NFPROTO_IPV4);
}

/* table t, chain c */
static void load(void)
{
	struct nlmsghdr *nlh;

	ctl_batch_begin();
	nlh = nft(NFT_MSG_NEWTABLE, NLM_F_CREATE);
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, "t");
	ctl_batch_done(nlh);
	nlh = nft(NFT_MSG_NEWCHAIN, NLM_F_CREATE);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, "c");
	ctl_batch_done(nlh);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
}

/* `add rule ip t c ip saddr { 10.0.0.1, 10.0.0.2 }` as nft 1.0.6 sends
 * it: the set "__set%d" by id, its elements, the rule's lookup by both */
static void add_anon_rule(uint32_t id)
{
	struct nlmsghdr *nlh;
	struct nlattr *l, *e, *k, *exprs, *elem, *data;

	nlh = nft(NFT_MSG_NEWSET, NLM_F_CREATE);
	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_SET_NAME, "__set%d");
	mnl_attr_put_u32(nlh, NFTA_SET_FLAGS, htonl(NFT_SET_ANONYMOUS | NFT_SET_CONSTANT));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_TYPE, htonl(7));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_LEN, htonl(4));
	mnl_attr_put_u32(nlh, NFTA_SET_ID, htonl(id));
	ctl_batch_done(nlh);

	nlh = nft(NFT_MSG_NEWSETELEM, NLM_F_CREATE);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "__set%d");
	mnl_attr_put_u32(nlh, NFTA_SET_ELEM_LIST_SET_ID, htonl(id));
	l = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	for (uint32_t a = 1; a <= 2; a++) {
		e = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
		k = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);
		mnl_attr_put_u32(nlh, NFTA_DATA_VALUE, htonl(0x0a000000 | a));
		mnl_attr_nest_end(nlh, k);
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, l);
	ctl_batch_done(nlh);

	nlh = nft(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "t");
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
	mnl_attr_put_strz(nlh, NFTA_LOOKUP_SET, "__set%d");
	mnl_attr_put_u32(nlh, NFTA_LOOKUP_SET_ID, htonl(id));
	mnl_attr_put_u32(nlh, NFTA_LOOKUP_SREG, htonl(NFT_REG_1));
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	mnl_attr_nest_end(nlh, exprs);
	ctl_batch_done(nlh);
}

static struct ctl_chain *chain_c(void)
{
	struct ctl_table *t;

	ctl_list_for_each_entry(t, &ctl.state->tables, list) {
		if (strcmp(t->name, "t") == 0)
			return ctl_chain_lookup(t, "c");
	}
	return NULL;
}

/* add the rule, check it, delete it */
static void round_trip(uint32_t id)
{
	struct ctl_chain *c = chain_c();
	struct nftnl_expr_iter *it;
	struct nftnl_expr *e;
	struct nlmsghdr *nlh;
	struct ctl_rule *r;
	const char *name;

	ctl_batch_begin();
	add_anon_rule(id);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_false(ctl_list_empty(&c->rules));
	r = ctl_list_entry(c->rules.next, struct ctl_rule, list);
	/* the lookup names the set as the kernel dumps it: __set0 */
	it = nftnl_expr_iter_create(r->nl);
	nftnl_expr_iter_next(it);
	e = nftnl_expr_iter_next(it);
	assert_non_null(e);
	name = nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET);
	assert_string_equal(name, "__set0");
	assert_non_null(ctl_set_lookup(c->table, name));
	nftnl_expr_iter_destroy(it);

	ctl_batch_begin();
	nlh = nft(NFT_MSG_DELRULE, 0);
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, "c");
	mnl_attr_put_u64(nlh, NFTA_RULE_HANDLE, htobe64(r->handle));
	ctl_batch_done(nlh);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
	assert_true(ctl_list_empty(&c->rules));
}

static void test_anon_set_rule_leaks_nothing(void **unused)
{
	size_t before, after;
	uint32_t id = 1;

	(void)unused;
	load();
	/* warm up: whatever grows once (handles' maps, free lists) grows here */
	for (; id <= 64; id++)
		round_trip(id);
	before = heap_in_use();
	for (; id <= 64 + 2000; id++)
		round_trip(id);
	after = heap_in_use();
	print_message("heap: %zu bytes before, %zu after 2000 rules\n", before, after);
	/* 8 bytes a rule would be 16 000 and more */
	assert_true(after < before + 2048);
}

/* chain c renamed to name (`nft rename chain`), by its handle */
static void rename_c(uint64_t handle, const char *name)
{
	struct nlmsghdr *nlh;

	ctl_batch_begin();
	nlh = nft(NFT_MSG_NEWCHAIN, 0);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_u64(nlh, NFTA_CHAIN_HANDLE, htobe64(handle));
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, name);
	ctl_batch_done(nlh);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);
}

/* a renamed chain's jumps follow it (the stored immediates' chain names
 * and the rule's chain are set anew), and the heap stays where it was */
static void test_chain_rename_leaks_nothing(void **unused)
{
	struct nlattr *exprs, *elem, *data, *imm, *v;
	struct nftnl_expr_iter *it;
	struct nlmsghdr *nlh;
	size_t before, after;
	struct ctl_chain *c;
	uint64_t handle;

	(void)unused;
	load();
	c = chain_c();
	handle = c->handle;
	/* chain d { jump c }, and a rule in c */
	ctl_batch_begin();
	nlh = nft(NFT_MSG_NEWCHAIN, NLM_F_CREATE);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, "d");
	ctl_batch_done(nlh);
	nlh = nft(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, "d");
	exprs = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "immediate");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u32(nlh, NFTA_IMMEDIATE_DREG, htonl(NFT_REG_VERDICT));
	imm = mnl_attr_nest_start(nlh, NFTA_IMMEDIATE_DATA);
	v = mnl_attr_nest_start(nlh, NFTA_DATA_VERDICT);
	mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, htonl((uint32_t)NFT_JUMP));
	mnl_attr_put_strz(nlh, NFTA_VERDICT_CHAIN, "c");
	mnl_attr_nest_end(nlh, v);
	mnl_attr_nest_end(nlh, imm);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	mnl_attr_nest_end(nlh, exprs);
	ctl_batch_done(nlh);
	add_anon_rule(1);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 0);

	for (unsigned int i = 0; i < 32; i++) {
		rename_c(handle, "c2");
		rename_c(handle, "c");
	}
	before = heap_in_use();
	for (unsigned int i = 0; i < 1000; i++) {
		rename_c(handle, "c2");
		rename_c(handle, "c");
	}
	rename_c(handle, "c2");
	after = heap_in_use();
	print_message("heap: %zu bytes before, %zu after 2001 renames\n", before, after);
	assert_true(after < before + 2048);
	c = ctl_chain_lookup(c->table, "d");
	assert_non_null(c);
	it = nftnl_expr_iter_create(ctl_list_entry(c->rules.next, struct ctl_rule, list)->nl);
	assert_string_equal(nftnl_expr_get_str(nftnl_expr_iter_next(it), NFTNL_EXPR_IMM_CHAIN),
			    "c2");
	nftnl_expr_iter_destroy(it);
}

/* The copy the request is parsed from NUL-terminates names: an objref
 * with 300 four-byte names without a NUL grows by 4 bytes each (the copy
 * must have room; build-asan catches an overflow) and is refused as the
 * kernel refuses a missing object, ENOENT, leaving no rule. */
static void test_objref_names_copied_in_bounds(void **unused)
{
	struct nlattr *exprs, *elem, *data;
	struct nlmsghdr *nlh;

	(void)unused;
	load();
	ctl_batch_begin();
	nlh = nft(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, "c");
	exprs = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "objref");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u32(nlh, NFTA_OBJREF_IMM_TYPE, htonl(NFT_OBJECT_COUNTER));
	for (unsigned int i = 0; i < 300; i++)
		mnl_attr_put(nlh, NFTA_OBJREF_IMM_NAME, 4, "abcd");
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	mnl_attr_nest_end(nlh, exprs);
	ctl_batch_done(nlh);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 1);
	assert_int_equal(ctl_stub_errs.err[0], ENOENT);
	assert_true(ctl_list_empty(&chain_c()->rules));
}

/* An expression named twice, "immediate" and then a padded "counter"
 * (what libnftnl and the kernel take, the last), holding 50 jumps by the
 * id of a chain with a long name, beside a lookup (so that the rule is
 * parsed from a copy): the names added to the copy were not counted for
 * it. The copy's puts are checked: the request is refused, EINVAL, before
 * libnftnl sees it, and nothing is written past the copy (build-asan). */
static void test_copy_never_outgrows(void **unused)
{
	struct nlattr *exprs, *elem, *data, *imm, *v;
	static const char padded[20] = "counter";
	char longname[201];
	struct nlmsghdr *nlh;

	(void)unused;
	load();
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ctl_batch_begin();
	add_anon_rule(1);
	nlh = nft(NFT_MSG_NEWCHAIN, NLM_F_CREATE);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, longname);
	mnl_attr_put_u32(nlh, NFTA_CHAIN_ID, htonl(9));
	ctl_batch_done(nlh);
	nlh = nft(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, "c");
	exprs = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "immediate");
	mnl_attr_put(nlh, NFTA_EXPR_NAME, sizeof(padded), padded);
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	imm = mnl_attr_nest_start(nlh, NFTA_IMMEDIATE_DATA);
	for (unsigned int i = 0; i < 50; i++) {
		v = mnl_attr_nest_start(nlh, NFTA_DATA_VERDICT);
		mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, htonl((uint32_t)NFT_JUMP));
		mnl_attr_put_u32(nlh, NFTA_VERDICT_CHAIN_ID, htonl(9));
		mnl_attr_nest_end(nlh, v);
	}
	mnl_attr_nest_end(nlh, imm);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "lookup");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_strz(nlh, NFTA_LOOKUP_SET, "__set%d");
	mnl_attr_put_u32(nlh, NFTA_LOOKUP_SET_ID, htonl(1));
	mnl_attr_put_u32(nlh, NFTA_LOOKUP_SREG, htonl(NFT_REG_1));
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	mnl_attr_nest_end(nlh, exprs);
	ctl_batch_done(nlh);
	ctl_batch_send(&ctl);
	assert_int_equal(ctl_stub_errs.n, 1);
	assert_int_equal(ctl_stub_errs.err[0], EINVAL);
	assert_null(ctl_chain_lookup(chain_c()->table, longname));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_anon_set_rule_leaks_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_chain_rename_leaks_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_objref_names_copied_in_bounds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_never_outgrows, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
