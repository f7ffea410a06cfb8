// SPDX-License-Identifier: BSD-3-Clause
/*
 * control/compat.c: NFNL_MSG_COMPAT_GET answers (the reply's bytes, the
 * errnos of nfnl_compat_get_rcu) and the info of a new match/target kept
 * as the kernel keeps it (size of the revision, zero padding). The
 * session is a stub that records what would be queued.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_compat.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_bridge/ebt_log.h>
#include <linux/netfilter_bridge/ebt_vlan.h>

#include "control_priv.h"

static char sent[4096];
static size_t sent_len;

int ctl_session_send(struct ctl_session *s, const void *buf, size_t len)
{
	(void)s;
	assert_true(len <= sizeof(sent));
	memcpy(sent, buf, len);
	sent_len = len;
	return 0;
}

uint32_t ctl_session_portid(const struct ctl_session *s)
{
	(void)s;
	return 4242;
}

static struct nlmsghdr *req(char *buf, uint8_t family, const char *name, uint32_t rev,
			    uint32_t target)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFT_COMPAT << 8) | NFNL_MSG_COMPAT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = 77;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	if (name)
		mnl_attr_put_strz(nlh, NFTA_COMPAT_NAME, name);
	mnl_attr_put_u32(nlh, NFTA_COMPAT_REV, htonl(rev));
	mnl_attr_put_u32(nlh, NFTA_COMPAT_TYPE, htonl(target));
	return nlh;
}

static int get(uint8_t family, const char *name, uint32_t rev, uint32_t target)
{
	char buf[512];
	const struct nlattr *bad = NULL;

	sent_len = 0;
	return ctl_compat_rcv(NULL, NULL, req(buf, family, name, rev, target), &bad);
}

static void test_get(void **state)
{
	const struct nlmsghdr *nlh = (const void *)sent;
	const struct nfgenmsg *nfg;
	const struct nlattr *a;
	int seen = 0;

	(void)state;
	assert_int_equal(get(NFPROTO_IPV4, "conntrack", 3, 0), 0);
	assert_int_equal(sent_len, nlh->nlmsg_len);
	assert_int_equal(nlh->nlmsg_type, (NFNL_SUBSYS_NFT_COMPAT << 8) | NFNL_MSG_COMPAT_GET);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_MULTI);
	assert_int_equal(nlh->nlmsg_seq, 77);
	assert_int_equal(nlh->nlmsg_pid, 4242);
	nfg = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(nfg->nfgen_family, NFPROTO_IPV4);
	assert_int_equal(nfg->res_id, 0);
	mnl_attr_for_each(a, nlh, sizeof(*nfg))
	{
		switch (mnl_attr_get_type(a)) {
		case NFTA_COMPAT_NAME:
			assert_string_equal(mnl_attr_get_str(a), "conntrack");
			assert_int_equal(mnl_attr_get_payload_len(a), 10);
			seen |= 1;
			break;
		case NFTA_COMPAT_REV:
			assert_int_equal(ntohl(mnl_attr_get_u32(a)), 3);
			seen |= 2;
			break;
		case NFTA_COMPAT_TYPE:
			assert_int_equal(ntohl(mnl_attr_get_u32(a)), 0);
			seen |= 4;
			break;
		}
	}
	assert_int_equal(seen, 7);
	/* the best revision whatever was asked */
	assert_int_equal(get(NFPROTO_IPV6, "CONNMARK", 1, 1), 0);
	mnl_attr_for_each(a, nlh, sizeof(*nfg)) if (mnl_attr_get_type(a) == NFTA_COMPAT_REV)
	    assert_int_equal(ntohl(mnl_attr_get_u32(a)), 2);
	/* ebtables and arptables extensions nftdp stores */
	assert_int_equal(get(NFPROTO_BRIDGE, "ip", 0, 0), 0);
	assert_int_equal(get(NFPROTO_ARP, "mangle", 0, 1), 0);
	/* the errnos */
	assert_int_equal(get(NFPROTO_IPV4, "conntrack", 9, 0), -EPROTONOSUPPORT);
	assert_int_equal(get(NFPROTO_IPV4, "nosuch", 0, 0), -ENOENT);
	assert_int_equal(get(NFPROTO_BRIDGE, "among", 0, 0), -ENOENT);
	assert_int_equal(get(NFPROTO_INET, "tcp", 0, 0), -EINVAL);
	assert_int_equal(get(NFPROTO_IPV4, NULL, 0, 0), -EINVAL);
	assert_int_equal(sent_len, 0);
}

static struct nftnl_expr *e;

static const uint8_t *stored(const char *name, const uint8_t *data, uint32_t len, uint32_t *out_len)
{
	uint8_t *info = malloc(len);

	if (e)
		nftnl_expr_free(e);
	memcpy(info, data, len);
	e = nftnl_expr_alloc("match");
	nftnl_expr_set_str(e, NFTNL_EXPR_MT_NAME, name);
	nftnl_expr_set_u32(e, NFTNL_EXPR_MT_REV, 0);
	nftnl_expr_set(e, NFTNL_EXPR_MT_INFO, info, len); /* libnftnl owns info */
	ctl_compat_store_info(e, NFPROTO_IPV4);
	return nftnl_expr_get(e, NFTNL_EXPR_MT_INFO, out_len);
}

static void test_store_info(void **state)
{
	/* struct xt_length_info: 6 bytes, XT_ALIGN 8 */
	static const uint8_t junk[8] = {0, 1, 0, 2, 1, 'x', 'y', 'z'};
	const uint8_t *got;
	uint32_t len = 0;

	(void)state;
	/* without the padding: kept as the kernel dumps it, 8 bytes */
	got = stored("length", junk, 6, &len);
	assert_int_equal(len, 8);
	assert_memory_equal(got, junk, 5);
	assert_int_equal(got[6] | got[7], 0);
	/* junk in the padding: zeroed (match_compat_from_user copies the size) */
	got = stored("length", junk, 8, &len);
	assert_int_equal(len, 8);
	assert_int_equal(got[5], 'x');
	assert_int_equal(got[6] | got[7], 0);
	/* an extension nftdp does not run is left alone (refused at commit) */
	got = stored("recent", junk, 8, &len);
	assert_int_equal(len, 8);
	assert_int_equal(got[7], 'z');
	nftnl_expr_free(e);
	e = NULL;
}

/* what ebtables' checkentry writes into the info is what the kernel dumps */
static void test_store_info_bridge(void **state)
{
	struct ebt_vlan_info v = {.id = 10, .prio = 3, .bitmask = EBT_VLAN_ID | EBT_VLAN_PRIO};
	struct ebt_log_info l = {.loglevel = 6};
	struct nftnl_expr *x;
	const struct ebt_vlan_info *gv;
	const struct ebt_log_info *gl;
	uint32_t len = 0;
	void *info;

	(void)state;
	/* ebt_vlan_mt_check: an id makes the priority moot */
	x = nftnl_expr_alloc("match");
	nftnl_expr_set_str(x, NFTNL_EXPR_MT_NAME, "vlan");
	nftnl_expr_set_u32(x, NFTNL_EXPR_MT_REV, 0);
	info = calloc(1, XT_ALIGN(sizeof(v)));
	memcpy(info, &v, sizeof(v));
	nftnl_expr_set(x, NFTNL_EXPR_MT_INFO, info, XT_ALIGN(sizeof(v)));
	ctl_compat_store_info(x, NFPROTO_BRIDGE);
	gv = nftnl_expr_get(x, NFTNL_EXPR_MT_INFO, &len);
	assert_int_equal(len, XT_ALIGN(sizeof(v)));
	assert_int_equal(gv->bitmask, EBT_VLAN_ID);
	assert_int_equal(gv->prio, 3);
	nftnl_expr_free(x);
	/* ebt_log_tg_check ends the prefix */
	memset(l.prefix, 'p', sizeof(l.prefix));
	x = nftnl_expr_alloc("target");
	nftnl_expr_set_str(x, NFTNL_EXPR_TG_NAME, "log");
	nftnl_expr_set_u32(x, NFTNL_EXPR_TG_REV, 0);
	info = calloc(1, XT_ALIGN(sizeof(l)));
	memcpy(info, &l, sizeof(l));
	nftnl_expr_set(x, NFTNL_EXPR_TG_INFO, info, XT_ALIGN(sizeof(l)));
	ctl_compat_store_info(x, NFPROTO_BRIDGE);
	gl = nftnl_expr_get(x, NFTNL_EXPR_TG_INFO, &len);
	assert_int_equal(gl->prefix[EBT_LOG_PREFIX_SIZE - 1], 0);
	assert_int_equal(gl->prefix[0], 'p');
	nftnl_expr_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_get),
	    cmocka_unit_test(test_store_info),
	    cmocka_unit_test(test_store_info_bridge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
