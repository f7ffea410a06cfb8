// SPDX-License-Identifier: BSD-3-Clause
/*
 * Base chain stats (NFTA_CHAIN_COUNTERS) in the control plane, driven
 * in-process through ctl_nfnl_rcv (tests/lib/ctl_stub.c), without the
 * dataplane build: which chains have them (nf_tables_addchain), what a
 * chain update does with them (nf_tables_updchain, nft_chain_stats_replace),
 * the errors of nft_stats_alloc, and what ctl_chain_fill dumps
 * (nf_tables_fill_chain_info, nft_dump_stats).
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

#include <linux/netfilter.h>

static struct nftdp_ctl ctl;

enum { NO_STATS = -1, ONLY_PACKETS = -2, SHORT_BYTES = -3 };

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

/* chain name, a base chain at input when base; counters: packets, bytes
 * (bytes = packets * 10), or one of the cases above */
static void put_chain(const char *name, bool base, int64_t packets, uint16_t flags)
{
	struct nlmsghdr *nlh = nft(NFT_MSG_NEWCHAIN, flags);
	struct nlattr *n;

	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, "t");
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, name);
	if (base) {
		n = mnl_attr_nest_start(nlh, NFTA_CHAIN_HOOK);
		mnl_attr_put_u32(nlh, NFTA_HOOK_HOOKNUM, htonl(NF_INET_LOCAL_IN));
		mnl_attr_put_u32(nlh, NFTA_HOOK_PRIORITY, htonl(0));
		mnl_attr_nest_end(nlh, n);
		mnl_attr_put_strz(nlh, NFTA_CHAIN_TYPE, "filter");
		mnl_attr_put_u32(nlh, NFTA_CHAIN_POLICY, htonl(NF_ACCEPT));
	}
	if (packets != NO_STATS) {
		n = mnl_attr_nest_start(nlh, NFTA_CHAIN_COUNTERS);
		if (packets >= 0) {
			mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, htobe64((uint64_t)packets));
			mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES, htobe64((uint64_t)packets * 10));
		} else if (packets == ONLY_PACKETS) {
			mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, htobe64(1));
		} else {
			mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, htobe64(1));
			mnl_attr_put_u32(nlh, NFTA_COUNTER_BYTES, htonl(1));
		}
		mnl_attr_nest_end(nlh, n);
	}
	ctl_batch_done(nlh);
}

static int send_chain(const char *name, bool base, int64_t packets)
{
	ctl_batch_begin();
	put_chain(name, base, packets, NLM_F_CREATE);
	ctl_batch_send(&ctl);
	return ctl_stub_errs.n ? -ctl_stub_errs.err[0] : 0;
}

static struct ctl_chain *chain(const char *name)
{
	struct ctl_table *t;
	struct ctl_chain *c;

	ctl_list_for_each_entry(t, &ctl.state->tables, list) {
		if (strcmp(t->name, "t") != 0)
			continue;
		ctl_list_for_each_entry(c, &t->chains, list) {
			if (strcmp(c->name, name) == 0)
				return c;
		}
	}
	fail_msg("no chain %s", name);
	return NULL;
}

/* what the chain's dump carries: -1 without NFTA_CHAIN_COUNTERS, else
 * packets (and bytes in *bytes) */
static int64_t dumped(const char *name, uint64_t *bytes)
{
	char buf[4096];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	const struct nlattr *a, *x;
	int64_t packets = -1;

	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nfgenmsg));
	ctl_chain_fill(nlh, chain(name));
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(a) != NFTA_CHAIN_COUNTERS)
			continue;
		/* nft_dump_stats: packets, then bytes */
		x = mnl_attr_get_payload(a);
		assert_int_equal(mnl_attr_get_type(x), NFTA_COUNTER_PACKETS);
		packets = (int64_t)be64toh(mnl_attr_get_u64(x));
		x = mnl_attr_next(x);
		assert_int_equal(mnl_attr_get_type(x), NFTA_COUNTER_BYTES);
		*bytes = be64toh(mnl_attr_get_u64(x));
	}
	return packets;
}

static int setup(void **unused)
{
	(void)unused;
	memset(&ctl, 0, sizeof(ctl));
	if (ctl_state_create(&ctl) < 0)
		return -1;
	ctl_batch_begin();
	add_table();
	ctl_batch_send(&ctl);
	return ctl_stub_errs.n ? -1 : 0;
}

static int teardown(void **unused)
{
	(void)unused;
	ctl_state_destroy(&ctl);
	return 0;
}

/* which chains have stats, and what their dumps show */
static void test_add(void **unused)
{
	uint64_t bytes = 0;

	(void)unused;
	assert_int_equal(send_chain("with", true, 12), 0);
	assert_int_equal(dumped("with", &bytes), 12);
	assert_int_equal(bytes, 120);
	/* nft's base chains: none */
	assert_int_equal(send_chain("without", true, NO_STATS), 0);
	assert_int_equal(dumped("without", &bytes), -1);
	/* a regular chain takes the attribute and has none */
	assert_int_equal(send_chain("regular", false, 5), 0);
	assert_int_equal(dumped("regular", &bytes), -1);
	/* nft_stats_alloc: both values, each a u64 */
	assert_int_equal(send_chain("bad1", true, ONLY_PACKETS), -EINVAL);
	assert_int_equal(send_chain("bad2", true, SHORT_BYTES), -ERANGE);
}

/* nf_tables_updchain: set, zeroed, made where there were none */
static void test_update(void **unused)
{
	uint64_t bytes = 0;

	(void)unused;
	assert_int_equal(send_chain("b", true, 12), 0);
	assert_int_equal(send_chain("b", true, 0), 0); /* iptables -Z */
	assert_int_equal(dumped("b", &bytes), 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(send_chain("b", true, 7), 0);
	assert_int_equal(dumped("b", &bytes), 7);
	assert_int_equal(bytes, 70);
	/* an update without them leaves them */
	assert_int_equal(send_chain("b", true, NO_STATS), 0);
	assert_int_equal(dumped("b", &bytes), 7);
	/* a base chain that had none gets them */
	assert_int_equal(send_chain("n", true, NO_STATS), 0);
	assert_int_equal(send_chain("n", true, 3), 0);
	assert_int_equal(dumped("n", &bytes), 3);
	/* a regular chain: EOPNOTSUPP, whatever the values */
	assert_int_equal(send_chain("r", false, NO_STATS), 0);
	assert_int_equal(send_chain("r", false, 3), -EOPNOTSUPP);
	assert_int_equal(send_chain("r", false, ONLY_PACKETS), -EOPNOTSUPP);
	assert_int_equal(dumped("r", &bytes), -1);
	/* bad values on a base chain: the errors of the add */
	assert_int_equal(send_chain("b", true, ONLY_PACKETS), -EINVAL);
	assert_int_equal(send_chain("b", true, SHORT_BYTES), -ERANGE);
	assert_int_equal(dumped("b", &bytes), 7);
}

/* a batch that fails keeps the values the chain had */
static void test_abort(void **unused)
{
	uint64_t bytes = 0;

	(void)unused;
	assert_int_equal(send_chain("b", true, 12), 0);
	assert_int_equal(send_chain("n", true, NO_STATS), 0);
	ctl_batch_begin();
	put_chain("b", true, 40, NLM_F_CREATE);
	put_chain("n", true, 41, NLM_F_CREATE);
	put_chain("b", true, ONLY_PACKETS, NLM_F_CREATE);
	ctl_batch_send(&ctl);
	assert_true(ctl_stub_errs.n > 0);
	assert_int_equal(dumped("b", &bytes), 12);
	assert_int_equal(bytes, 120);
	assert_int_equal(dumped("n", &bytes), -1);
	assert_false(chain("b")->stats_pending);
	assert_false(chain("n")->stats_pending);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_add, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_update, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
