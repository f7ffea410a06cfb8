// SPDX-License-Identifier: BSD-3-Clause
/*
 * An element's expiration counts from its message, which in the kernel
 * comes after its set was allocated (nf_tables_newset at the set's
 * message): the time the control plane takes to build a set's dataplane
 * copy at commit (a dynamic set's pool, prefaulted) must not be taken from
 * the elements added with it (nftables' tests/shell
 * sets/0036add_set_element_expiration_0: `nft -e` echoes `expires 15s`).
 * Driven in-process through ctl_nfnl_rcv with the dataplane build on
 * (vm state and a generation domain, no EAL, no workers).
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
#include "nftdp_vm.h"

#include <linux/netfilter.h>

/* a pool this large takes tens of milliseconds to fill */
#define POOL_ELEMS 262144u
#define EXPIRES_MS 15000u

static struct nftdp_ctl ctl;
static struct nftdp_vm_state *vst;
static struct nftdp_vm_gen_domain *dom;

static struct nlmsghdr *nft(uint8_t type, uint16_t flags)
{
	return ctl_batch_put(type, flags, NFPROTO_IPV4);
}

static void add_table(void)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWTABLE, NLM_F_CREATE);

	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, "x");
	ctl_batch_done(nlh);
}

/* set y { type ipv4_addr; flags dynamic,timeout; size POOL_ELEMS; } */
static void add_set(void)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWSET, NLM_F_CREATE);
	struct nlattr *d;

	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, "x");
	mnl_attr_put_strz(nlh, NFTA_SET_NAME, "y");
	mnl_attr_put_u32(nlh, NFTA_SET_FLAGS, htonl(NFT_SET_EVAL | NFT_SET_TIMEOUT));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_TYPE, htonl(7));
	mnl_attr_put_u32(nlh, NFTA_SET_KEY_LEN, htonl(4));
	mnl_attr_put_u32(nlh, NFTA_SET_ID, htonl(1));
	d = mnl_attr_nest_start(nlh, NFTA_SET_DESC);
	mnl_attr_put_u32(nlh, NFTA_SET_DESC_SIZE, htonl(POOL_ELEMS));
	mnl_attr_nest_end(nlh, d);
	ctl_batch_done(nlh);
}

/* { 1.1.1.1 timeout 30s expires 15s } */
static void add_elem(void)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWSETELEM, NLM_F_CREATE);
	struct nlattr *l, *e, *k;

	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "x");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "y");
	mnl_attr_put_u32(nlh, NFTA_SET_ELEM_LIST_SET_ID, htonl(1));
	l = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	e = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	k = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);
	mnl_attr_put_u32(nlh, NFTA_DATA_VALUE, htonl(0x01010101));
	mnl_attr_nest_end(nlh, k);
	mnl_attr_put_u64(nlh, NFTA_SET_ELEM_TIMEOUT, htobe64(30000));
	mnl_attr_put_u64(nlh, NFTA_SET_ELEM_EXPIRATION, htobe64(EXPIRES_MS));
	mnl_attr_nest_end(nlh, e);
	mnl_attr_nest_end(nlh, l);
	ctl_batch_done(nlh);
}

static struct ctl_elem *the_elem(void)
{
	struct ctl_table *t;
	struct ctl_set *s;

	ctl_list_for_each_entry(t, &ctl.state->tables, list)
		ctl_list_for_each_entry(s, &t->sets, list)
			if (!ctl_list_empty(&s->elems))
				return ctl_list_entry(s->elems.next, struct ctl_elem, list);
	return NULL;
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

/* The element added in the set's own batch expires EXPIRES_MS after its
 * message was read, not EXPIRES_MS less the set's build: what is left when
 * the commit is over is EXPIRES_MS less what the commit did after the set
 * was built (a few milliseconds at most). */
static void test_set_build_not_counted(void **unused)
{
	struct ctl_elem *e;
	uint64_t t0, t1, left;

	(void)unused;
	ctl_batch_begin();
	add_table();
	add_set();
	add_elem();
	t0 = nftdp_now_ms();
	ctl_batch_send(&ctl);
	t1 = nftdp_now_ms();
	assert_int_equal(ctl_stub_errs.n, 0);
	e = the_elem();
	assert_non_null(e);
	assert_true(e->expires_at > t1);
	left = e->expires_at - t1;
	print_message("commit %llu ms, %llu ms left of %u\n", (unsigned long long)(t1 - t0),
		      (unsigned long long)left, EXPIRES_MS);
	assert_true(left <= EXPIRES_MS);
	assert_true(left + 50 >= EXPIRES_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_set_build_not_counted, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
