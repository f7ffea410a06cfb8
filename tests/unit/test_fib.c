// SPDX-License-Identifier: BSD-3-Clause
/*
 * fib: the route table (route/: longest prefix over rte_fib/rte_fib6,
 * local before main, link-local by device, addresses, names) and the fib
 * expression (vm/expr_fib.c) over a stub table: each flag and result, the
 * PRESENT bool, the kernel's special cases, and the errnos of nft_fib_init.
 * The route table needs DPDK memory: EAL runs with --no-huge.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <rte_eal.h>
#include <rte_jhash.h>

#include "nft_build.h"
#include "nftdp_route.h"
#include "nftdp_vm.h"

/* ---------- the route table ---------- */

static uint32_t a4(const char *s)
{
	uint32_t a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

static const uint8_t *a6(const char *s)
{
	static uint8_t buf[8][16];
	static unsigned int i;
	uint8_t *b = buf[i++ % 8];

	assert_int_equal(inet_pton(AF_INET6, s, b), 1);
	return b;
}

static struct nftdp_route_nh nh1(uint8_t type, uint32_t oif)
{
	struct nftdp_route_nh nh = {.type = type};

	if (oif)
		nh.oif[nh.n_oif++] = oif;
	return nh;
}

static void add4(struct nftdp_route_table *t, enum nftdp_route_tbl tbl, const char *a, uint8_t plen,
		 uint8_t type, uint32_t oif)
{
	struct nftdp_route_nh nh = nh1(type, oif);
	uint32_t v = a4(a);

	assert_int_equal(nftdp_route_add(t, AF_INET, tbl, &v, plen, &nh), 0);
}

static void add6(struct nftdp_route_table *t, enum nftdp_route_tbl tbl, const char *a, uint8_t plen,
		 uint8_t type, uint32_t oif)
{
	struct nftdp_route_nh nh = nh1(type, oif);

	assert_int_equal(nftdp_route_add(t, AF_INET6, tbl, a6(a), plen, &nh), 0);
}

/* an IPv4 address as the register holds it, read big-endian */
static uint32_t a4h(const char *s)
{
	return ntohl(a4(s));
}

static uint32_t rd_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---------- policy routing: the rule matcher (fib_rules_lookup) ---------- */

#define SUPPRESS_0 INT32_MIN /* suppress_prefixlength 0 (0 in a literal: none) */

static void rule4(struct nftdp_route_table *t, struct nftdp_route_rule r)
{
	r.family = AF_INET;
	if (!r.action)
		r.action = FR_ACT_TO_TBL;
	if (!r.uid_end)
		r.uid_end = UINT32_MAX;
	if (!r.suppress_prefixlen)
		r.suppress_prefixlen = -1;
	else if (r.suppress_prefixlen == SUPPRESS_0)
		r.suppress_prefixlen = 0;
	if (!r.suppress_ifgroup)
		r.suppress_ifgroup = -1;
	assert_int_equal(nftdp_route_rule_add(t, &r), 0);
}

static void tadd4(struct nftdp_route_table *t, uint32_t table, const char *a, uint8_t plen,
		  uint8_t type, uint32_t oif)
{
	struct nftdp_route_nh nh = nh1(type, oif);
	uint32_t v = a4(a);

	assert_int_equal(nftdp_route_table_add(t, AF_INET, table, &v, plen, &nh), 0);
}

static struct nftdp_route_flow flow4(const char *d, const char *sa)
{
	struct nftdp_route_flow fl = {.iif = 1};
	uint32_t v = a4(d);

	memcpy(fl.daddr, &v, 4);
	if (sa) {
		v = a4(sa);
		memcpy(fl.saddr, &v, 4);
	}
	return fl;
}

static uint32_t oif_of(const struct nftdp_route_table *t, struct nftdp_route_flow fl)
{
	const struct nftdp_route_nh *nh = nftdp_route_lookup4_flow(t, &fl);

	if (!nh)
		return 0;
	if (nh->type != RTN_UNICAST)
		return 1000 + nh->type;
	return nh->oif[0];
}

/* Rules in order with their selectors and actions, over tables local,
 * main (unmerged copies), 100 and 200. */
static void test_route_rules4(void **state)
{
	struct nftdp_route_table *t;
	struct nftdp_route_flow fl;

	(void)state;
	assert_int_equal(nftdp_route_table_create(&t), 0);
	/* the default list: one branch from the merged lookup */
	rule4(t, (struct nftdp_route_rule){.pref = 0, .table = RT_TABLE_LOCAL});
	rule4(t, (struct nftdp_route_rule){.pref = 32766, .table = RT_TABLE_MAIN});
	rule4(t, (struct nftdp_route_rule){.pref = 32767, .table = RT_TABLE_DEFAULT});
	add4(t, NFTDP_ROUTE_TBL_MAIN, "0.0.0.0", 0, RTN_UNICAST, 1);
	assert_int_equal(nftdp_route_policy_build(t), 0);
	assert_false(nftdp_route_policy_active(t, AF_INET));
	assert_int_equal(oif_of(t, flow4("10.9.9.9", NULL)), 1);
	nftdp_route_table_destroy(t);

	assert_int_equal(nftdp_route_table_create(&t), 0);
	rule4(t, (struct nftdp_route_rule){.pref = 0, .table = RT_TABLE_LOCAL});
	/* 100: marked packets, fwmark 0x10/0xf0 */
	rule4(t, (struct nftdp_route_rule){
		     .pref = 100, .table = 100, .mark = 0x10, .mark_mask = 0xf0});
	/* 110: from 192.168.5.0/24 to table 200 */
	rule4(t, (struct nftdp_route_rule){
		     .pref = 110, .table = 200, .src_len = 24, .src = {192, 168, 5, 0}});
	/* 120: to 198.51.100.0/24 blackhole; 121 prohibit; 122 unreachable */
	rule4(t, (struct nftdp_route_rule){.pref = 120,
					   .action = FR_ACT_BLACKHOLE,
					   .dst_len = 24,
					   .dst = {198, 51, 100, 0}});
	rule4(t,
	      (struct nftdp_route_rule){
		  .pref = 121, .action = FR_ACT_PROHIBIT, .dst_len = 24, .dst = {198, 51, 101, 0}});
	rule4(t, (struct nftdp_route_rule){.pref = 122,
					   .action = FR_ACT_UNREACHABLE,
					   .dst_len = 24,
					   .dst = {198, 51, 102, 0}});
	/* 130: not iif 3 -> nop; 131: iif 3 goto 150 (over 140) */
	rule4(t, (struct nftdp_route_rule){
		     .pref = 130, .action = FR_ACT_NOP, .iif = 3, .invert = true});
	rule4(t, (struct nftdp_route_rule){
		     .pref = 131, .action = FR_ACT_GOTO, .target = 150, .iif = 3});
	rule4(t, (struct nftdp_route_rule){.pref = 140, .action = FR_ACT_BLACKHOLE, .iif = 3});
	/* 150: tcp dport 443-444 to 200; 151: tos 0x10 to 200 */
	rule4(t, (struct nftdp_route_rule){
		     .pref = 150, .table = 200, .ip_proto = IPPROTO_TCP, .dport = {443, 444}});
	rule4(t, (struct nftdp_route_rule){.pref = 151, .table = 200, .tos = 0x10});
	/* 152: sport 0x1000/0xf000 (FRA_SPORT_MASK); 153: dscp 46 (FRA_DSCP) */
	rule4(t, (struct nftdp_route_rule){
		     .pref = 152, .table = 200, .sport = {0x1000, 0x1000}, .sport_mask = 0xf000});
	rule4(
	    t,
	    (struct nftdp_route_rule){
		.pref = 153, .table = 200, .dscp_full = true, .dscp = 46 << 2, .dscp_mask = 0xfc});
	/* 160: main without its default route (suppress_prefixlength 0) */
	rule4(t, (struct nftdp_route_rule){
		     .pref = 160, .table = RT_TABLE_MAIN, .suppress_prefixlen = SUPPRESS_0});
	/* 170: oif 7 to 100; 180: uid 1000-2000 prohibit (flows are root) */
	rule4(t, (struct nftdp_route_rule){.pref = 170, .table = 100, .oif = 7});
	rule4(t, (struct nftdp_route_rule){
		     .pref = 180, .action = FR_ACT_PROHIBIT, .uid_start = 1000, .uid_end = 2000});
	rule4(t, (struct nftdp_route_rule){.pref = 32766, .table = RT_TABLE_MAIN});
	rule4(t, (struct nftdp_route_rule){.pref = 32767, .table = RT_TABLE_DEFAULT});
	/* main (and its unmerged copy), local, 100, 200 */
	add4(t, NFTDP_ROUTE_TBL_MAIN, "0.0.0.0", 0, RTN_UNICAST, 1);
	tadd4(t, RT_TABLE_MAIN, "0.0.0.0", 0, RTN_UNICAST, 1);
	add4(t, NFTDP_ROUTE_TBL_MAIN, "10.1.0.0", 16, RTN_UNICAST, 2);
	tadd4(t, RT_TABLE_MAIN, "10.1.0.0", 16, RTN_UNICAST, 2);
	add4(t, NFTDP_ROUTE_TBL_LOCAL, "10.1.0.1", 32, RTN_LOCAL, 2);
	tadd4(t, RT_TABLE_LOCAL, "10.1.0.1", 32, RTN_LOCAL, 2);
	tadd4(t, 100, "0.0.0.0", 0, RTN_UNICAST, 5);
	tadd4(t, 100, "10.1.2.0", 24, RTN_THROW, 0);
	tadd4(t, 200, "10.0.0.0", 8, RTN_UNICAST, 6);
	assert_int_equal(nftdp_route_policy_build(t), 0);
	assert_true(nftdp_route_policy_active(t, AF_INET));
	assert_false(nftdp_route_policy_active(t, AF_INET6));

	/* local first */
	assert_int_equal(oif_of(t, flow4("10.1.0.1", NULL)), 1000 + RTN_LOCAL);
	/* no rule but main's */
	assert_int_equal(oif_of(t, flow4("10.1.3.3", "10.1.0.9")), 2);
	/* fwmark under its mask; a throw route in 100 falls through to main */
	fl = flow4("10.1.3.3", NULL);
	fl.mark = 0x1f;
	assert_int_equal(oif_of(t, fl), 5);
	fl.mark = 0x20;
	assert_int_equal(oif_of(t, fl), 2);
	fl = flow4("10.1.2.3", NULL);
	fl.mark = 0x10;
	assert_int_equal(oif_of(t, fl), 2);
	/* source prefix: 200 has 10/8 only; elsewhere table 200 misses and
	 * the walk goes on */
	assert_int_equal(oif_of(t, flow4("10.1.3.3", "192.168.5.77")), 6);
	assert_int_equal(oif_of(t, flow4("8.8.8.8", "192.168.5.77")), 1);
	/* blackhole, prohibit, unreachable (no route) by destination */
	assert_int_equal(oif_of(t, flow4("198.51.100.1", NULL)), 1000 + RTN_BLACKHOLE);
	assert_int_equal(oif_of(t, flow4("198.51.101.1", NULL)), 1000 + RTN_PROHIBIT);
	assert_null(nftdp_route_lookup4_flow(
	    t, &(struct nftdp_route_flow){.daddr = {198, 51, 102, 1}, .iif = 1}));
	/* iif 3: 130 is skipped (not iif 3 fails), 131 jumps over 140's
	 * blackhole to 150 */
	fl = flow4("10.1.3.3", NULL);
	fl.iif = 3;
	assert_int_equal(oif_of(t, fl), 2);
	/* tcp dport 443 and tos 0x10 (the TOS bits of the DSCP) to 200 */
	fl = flow4("10.1.3.3", NULL);
	fl.proto = IPPROTO_TCP;
	fl.dport = 443;
	assert_int_equal(oif_of(t, fl), 6);
	fl.dport = 445;
	assert_int_equal(oif_of(t, fl), 2);
	fl.proto = IPPROTO_UDP;
	fl.dport = 443;
	assert_int_equal(oif_of(t, fl), 2);
	fl = flow4("10.1.3.3", NULL);
	fl.dscp = 0x10 | 0x80; /* precedence bits are not compared */
	assert_int_equal(oif_of(t, fl), 6);
	fl.dscp = 0x20; /* 0x20 & 0x1c: not 0x10 */
	assert_int_equal(oif_of(t, fl), 2);
	fl.dscp = 46 << 2; /* EF: FRA_DSCP compares all six bits */
	assert_int_equal(oif_of(t, fl), 6);
	fl.dscp = 47 << 2;
	assert_int_equal(oif_of(t, fl), 2);
	fl = flow4("10.1.3.3", NULL);
	fl.proto = IPPROTO_UDP;
	fl.sport = 0x1abc;
	assert_int_equal(oif_of(t, fl), 6);
	fl.sport = 0x2abc;
	assert_int_equal(oif_of(t, fl), 2);
	/* suppress_prefixlength 0: main's default route is not taken at
	 * 160, oif 7 then picks 100 at 170 */
	fl = flow4("8.8.8.8", NULL);
	fl.oif = 7;
	assert_int_equal(oif_of(t, fl), 5);
	fl.oif = 0;
	assert_int_equal(oif_of(t, fl), 1); /* main again at 32766 */
	nftdp_route_table_destroy(t);
}

/* IPv6: the source selector needs RT6_LOOKUP_F_HAS_SADDR, local and main
 * are route.c's own tables, a prohibit rule, the whole DSCP for tos. */
static void test_route_rules6(void **state)
{
	struct nftdp_route_table *t;
	struct nftdp_route_rule r = {.family = AF_INET6,
				     .action = FR_ACT_TO_TBL,
				     .uid_end = UINT32_MAX,
				     .suppress_prefixlen = -1,
				     .suppress_ifgroup = -1};
	struct nftdp_route_nh nh = nh1(RTN_UNICAST, 5);
	struct nftdp_route_flow fl = {.iif = 1, .has_saddr = true};
	const struct nftdp_route_nh *res;

	(void)state;
	assert_int_equal(nftdp_route_table_create(&t), 0);
	r.pref = 0;
	r.table = RT_TABLE_LOCAL;
	assert_int_equal(nftdp_route_rule_add(t, &r), 0);
	r.pref = 100;
	r.table = 100;
	r.src_len = 48;
	memcpy(r.src, a6("2001:db8:5::"), 16);
	assert_int_equal(nftdp_route_rule_add(t, &r), 0);
	r.src_len = 0;
	r.pref = 110;
	r.tos = 0xb8; /* the whole DSCP (EF) */
	assert_int_equal(nftdp_route_rule_add(t, &r), 0);
	r.tos = 0;
	r.pref = 120;
	r.action = FR_ACT_PROHIBIT;
	r.dst_len = 48;
	memcpy(r.dst, a6("2001:db8:9::"), 16);
	assert_int_equal(nftdp_route_rule_add(t, &r), 0);
	r.action = FR_ACT_TO_TBL;
	r.dst_len = 0;
	r.pref = 32766;
	r.table = RT_TABLE_MAIN;
	assert_int_equal(nftdp_route_rule_add(t, &r), 0);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8:7::", 48, RTN_UNICAST, 2);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8:9::", 48, RTN_UNICAST, 2);
	add6(t, NFTDP_ROUTE_TBL_LOCAL, "2001:db8:7::1", 128, RTN_LOCAL, 2);
	assert_int_equal(nftdp_route_table_add(t, AF_INET6, 100, a6("2001:db8:7::"), 64, &nh), 0);
	assert_int_equal(nftdp_route_policy_build(t), 0);
	assert_true(nftdp_route_policy_active(t, AF_INET6));
	assert_false(nftdp_route_policy_active(t, AF_INET));

	memcpy(fl.daddr, a6("2001:db8:7::5"), 16);
	memcpy(fl.saddr, a6("2001:db8:5::1"), 16);
	res = nftdp_route_lookup6_flow(t, &fl);
	assert_non_null(res);
	assert_int_equal(res->oif[0], 5);
	fl.has_saddr = false; /* no source: the from rule cannot match */
	assert_int_equal(nftdp_route_lookup6_flow(t, &fl)->oif[0], 2);
	fl.has_saddr = true;
	memcpy(fl.saddr, a6("2001:db8:6::1"), 16);
	assert_int_equal(nftdp_route_lookup6_flow(t, &fl)->oif[0], 2);
	fl.dscp = 0xb8;
	assert_int_equal(nftdp_route_lookup6_flow(t, &fl)->oif[0], 5);
	fl.dscp = 0x98; /* the same TOS bits (0x18), another DSCP: IPv6 compares all */
	assert_int_equal(nftdp_route_lookup6_flow(t, &fl)->oif[0], 2);
	fl.dscp = 0;
	memcpy(fl.daddr, a6("2001:db8:7::1"), 16); /* local first */
	assert_int_equal(nftdp_route_lookup6_flow(t, &fl)->type, RTN_LOCAL);
	memcpy(fl.daddr, a6("2001:db8:9::1"), 16);
	assert_int_equal(nftdp_route_lookup6_flow(t, &fl)->type, RTN_PROHIBIT);
	memcpy(fl.daddr, a6("3000::1"), 16);
	assert_null(nftdp_route_lookup6_flow(t, &fl));
	nftdp_route_table_destroy(t);
}

static void test_route_lpm4(void **state)
{
	struct nftdp_route_table *t;
	const struct nftdp_route_nh *nh;
	struct nftdp_route_nh dup = nh1(RTN_UNICAST, 9);
	uint32_t v = a4("10.0.0.0");

	(void)state;
	assert_int_equal(nftdp_route_table_create(&t), 0);
	assert_null(nftdp_route_lookup4(t, a4("10.0.0.1")));
	add4(t, NFTDP_ROUTE_TBL_MAIN, "10.0.0.0", 8, RTN_UNICAST, 1);
	add4(t, NFTDP_ROUTE_TBL_MAIN, "10.1.0.0", 16, RTN_UNICAST, 2);
	add4(t, NFTDP_ROUTE_TBL_MAIN, "10.1.2.0", 24, RTN_BLACKHOLE, 0);
	add4(t, NFTDP_ROUTE_TBL_LOCAL, "10.1.0.1", 32, RTN_LOCAL, 2);
	add4(t, NFTDP_ROUTE_TBL_LOCAL, "10.1.255.255", 32, RTN_BROADCAST, 2);
	/* a prefix keeps its first route (the lowest metric), also under a
	 * longer prefix that covers its first address */
	add4(t, NFTDP_ROUTE_TBL_LOCAL, "10.0.0.0", 32, RTN_BROADCAST, 1);
	assert_int_equal(nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_MAIN, &v, 8, &dup), -EEXIST);
	assert_int_equal(nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_MAIN, &v, 8, &dup), -EEXIST);
	nh = nftdp_route_lookup4(t, a4("10.200.0.1"));
	assert_non_null(nh);
	assert_int_equal(nh->type, RTN_UNICAST);
	assert_int_equal(nh->oif[0], 1);
	assert_int_equal(nh->plen, 8);
	nh = nftdp_route_lookup4(t, a4("10.1.7.7"));
	assert_int_equal(nh->oif[0], 2);
	assert_int_equal(nftdp_route_lookup4(t, a4("10.1.2.3"))->type, RTN_BLACKHOLE);
	assert_int_equal(nftdp_route_lookup4(t, a4("10.1.0.1"))->type, RTN_LOCAL);
	assert_int_equal(nftdp_route_lookup4(t, a4("10.1.0.2"))->type, RTN_UNICAST);
	assert_int_equal(nftdp_route_lookup4(t, a4("10.1.255.255"))->type, RTN_BROADCAST);
	assert_null(nftdp_route_lookup4(t, a4("11.0.0.1")));
	add4(t, NFTDP_ROUTE_TBL_MAIN, "0.0.0.0", 0, RTN_UNICAST, 3); /* default */
	assert_int_equal(nftdp_route_lookup4(t, a4("11.0.0.1"))->oif[0], 3);
	assert_int_equal(nftdp_route_lookup4(t, a4("10.1.7.7"))->oif[0], 2);
	/* local's entry of a prefix wins over main's (the merged trie) */
	add4(t, NFTDP_ROUTE_TBL_MAIN, "10.5.0.1", 32, RTN_UNICAST, 1);
	add4(t, NFTDP_ROUTE_TBL_LOCAL, "10.5.0.1", 32, RTN_LOCAL, 1);
	assert_int_equal(nftdp_route_lookup4(t, a4("10.5.0.1"))->type, RTN_LOCAL);
	v = a4("10.5.0.1");
	dup = nh1(RTN_UNICAST, 1);
	assert_int_equal(nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_MAIN, &v, 40, &dup), -EINVAL);
	nftdp_route_table_destroy(t);
}

static void test_route_lpm6(void **state)
{
	struct nftdp_route_table *t;
	const struct nftdp_route_nh *nh;
	unsigned int n4, n6;

	(void)state;
	assert_int_equal(nftdp_route_table_create(&t), 0);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8::", 32, RTN_UNICAST, 1);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8:1::", 64, RTN_UNICAST, 2);
	{
		struct nftdp_route_nh nh = nh1(RTN_UNICAST, 5);

		add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8::", 128, RTN_UNICAST, 1);
		assert_int_equal(
		    nftdp_route_add(t, AF_INET6, NFTDP_ROUTE_TBL_MAIN, a6("2001:db8::"), 32, &nh),
		    -EEXIST);
	}
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8:9::", 48, RTN_UNREACHABLE, 0);
	add6(t, NFTDP_ROUTE_TBL_LOCAL, "2001:db8:1::1", 128, RTN_LOCAL, 2);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "fe80::", 64, RTN_UNICAST, 1);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "fe80::", 64, RTN_UNICAST, 2);
	add6(t, NFTDP_ROUTE_TBL_LOCAL, "fe80::2", 128, RTN_LOCAL, 2);
	add6(t, NFTDP_ROUTE_TBL_LOCAL, "ff00::", 8, RTN_MULTICAST, 1);
	nh = nftdp_route_lookup6(t, a6("2001:db8:1::5"), 0);
	assert_int_equal(nh->oif[0], 2);
	assert_int_equal(nh->plen, 64);
	assert_memory_equal(nh->dst, a6("2001:db8:1::"), 16);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:2::5"), 0)->oif[0], 1);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:9::5"), 0)->type, RTN_UNREACHABLE);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:1::1"), 0)->type, RTN_LOCAL);
	assert_null(nftdp_route_lookup6(t, a6("3000::1"), 0));
	add6(t, NFTDP_ROUTE_TBL_MAIN, "::", 0, RTN_UNICAST, 3); /* default */
	assert_int_equal(nftdp_route_lookup6(t, a6("3000::1"), 0)->oif[0], 3);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:1::5"), 0)->oif[0], 2);
	/* link-local: the routes of the device asked for */
	assert_int_equal(nftdp_route_lookup6(t, a6("fe80::9"), 1)->oif[0], 1);
	assert_int_equal(nftdp_route_lookup6(t, a6("fe80::9"), 2)->oif[0], 2);
	assert_null(nftdp_route_lookup6(t, a6("fe80::9"), 3));
	assert_int_equal(nftdp_route_lookup6(t, a6("fe80::2"), 2)->type, RTN_LOCAL);
	assert_int_equal(nftdp_route_lookup6(t, a6("fe80::2"), 1)->type, RTN_UNICAST);
	assert_int_equal(nftdp_route_lookup6(t, a6("ff02::1"), 1)->type, RTN_MULTICAST);
	assert_null(nftdp_route_lookup6(t, a6("ff02::1"), 2));
	assert_int_equal(nftdp_route_addr6_add(t, 2, a6("2001:db8:1::1")), 0);
	assert_true(nftdp_route_addr6_on(t, a6("2001:db8:1::1"), 2));
	assert_false(nftdp_route_addr6_on(t, a6("2001:db8:1::1"), 1));
	assert_int_equal(nftdp_route_dev_add(t, 2, "dp1", 1500), 0);
	assert_string_equal(nftdp_route_dev_name(t, 2), "dp1");
	assert_null(nftdp_route_dev_name(t, 7));
	nftdp_route_count(t, &n4, &n6);
	assert_int_equal(n4, 0);
	assert_int_equal(n6, 10);
	nftdp_route_table_destroy(t);
}

/* the destination-only lookups of a new netns' rules (the forwarding
 * path's, dataplane/nexthop.c) give what the flow lookups give: IPv4
 * through local and main then table default (a throw there: no route),
 * IPv6 from an address anywhere in memory (read in place, not copied) */
static void test_route_lookup_dst(void **state)
{
	static const char *const d4[] = {"10.1.0.1",  "10.1.3.3",     "10.2.0.1",
					 "192.0.2.9", "198.51.100.7", "203.0.113.1"};
	static const char *const d6[] = {"2001:db8:1::5", "2001:db8:1::1", "2001:db8:2::5",
					 "2001:db8:9::5", "3000::1",	   "fe80::9"};
	struct nftdp_route_table *t;
	uint8_t buf[1 + 16];

	(void)state;
	assert_int_equal(nftdp_route_table_create(&t), 0);
	rule4(t, (struct nftdp_route_rule){.pref = 0, .table = RT_TABLE_LOCAL});
	rule4(t, (struct nftdp_route_rule){.pref = 32766, .table = RT_TABLE_MAIN});
	rule4(t, (struct nftdp_route_rule){.pref = 32767, .table = RT_TABLE_DEFAULT});
	add4(t, NFTDP_ROUTE_TBL_MAIN, "10.1.0.0", 16, RTN_UNICAST, 2);
	add4(t, NFTDP_ROUTE_TBL_MAIN, "198.51.100.0", 24, RTN_THROW, 0);
	add4(t, NFTDP_ROUTE_TBL_LOCAL, "10.1.0.1", 32, RTN_LOCAL, 2);
	tadd4(t, RT_TABLE_DEFAULT, "192.0.2.0", 24, RTN_UNICAST, 4);
	tadd4(t, RT_TABLE_DEFAULT, "203.0.113.0", 24, RTN_THROW, 0);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8::", 32, RTN_UNICAST, 1);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8:1::", 64, RTN_UNICAST, 2);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "2001:db8:9::", 48, RTN_UNREACHABLE, 0);
	add6(t, NFTDP_ROUTE_TBL_LOCAL, "2001:db8:1::1", 128, RTN_LOCAL, 2);
	add6(t, NFTDP_ROUTE_TBL_MAIN, "fe80::", 64, RTN_UNICAST, 1);
	assert_int_equal(nftdp_route_policy_build(t), 0);
	assert_false(nftdp_route_policy_active(t, AF_INET));
	for (unsigned int i = 0; i < sizeof(d4) / sizeof(d4[0]); i++) {
		struct nftdp_route_flow fl = flow4(d4[i], NULL);
		uint32_t v = a4(d4[i]);

		memcpy(buf + 1, &v, 4);
		assert_ptr_equal(nftdp_route_lookup4_dst(t, buf + 1),
				 nftdp_route_lookup4_flow(t, &fl));
	}
	/* table default behind main, its throw route none */
	assert_int_equal(nftdp_route_lookup4_dst(t, (const uint8_t *)"\xc0\x00\x02\x09")->oif[0],
			 4);
	assert_null(nftdp_route_lookup4_dst(t, (const uint8_t *)"\xcb\x00\x71\x01"));
	assert_null(nftdp_route_lookup4_dst(t, (const uint8_t *)"\xc6\x33\x64\x07"));
	for (unsigned int i = 0; i < sizeof(d6) / sizeof(d6[0]); i++) {
		struct nftdp_route_flow fl = {.iif = 1, .ll_oif = 1, .has_saddr = true};

		memcpy(fl.daddr, a6(d6[i]), 16);
		memcpy(buf + 1, a6(d6[i]), 16); /* unaligned */
		assert_ptr_equal(nftdp_route_lookup6(t, buf + 1, 1),
				 nftdp_route_lookup6_flow(t, &fl));
	}
	memcpy(buf + 1, a6("2001:db8:1::5"), 16);
	assert_int_equal(nftdp_route_lookup6(t, buf + 1, 0)->oif[0], 2);
	memcpy(buf + 1, a6("2001:db8:1::1"), 16);
	assert_int_equal(nftdp_route_lookup6(t, buf + 1, 0)->type, RTN_LOCAL);
	nftdp_route_table_destroy(t);
}

/* the mirror, in a network namespace of the test's own (root: tests run
 * as root; skipped where unshare is refused) */
static void test_route_mirror(void **state)
{
	static const struct nftdp_route_port ports[] = {{"dp0", 1}, {"dp1", 2}};
	struct nftdp_route_table *t;
	const struct nftdp_route_nh *nh;

	(void)state;
	if (unshare(CLONE_NEWNET) != 0) {
		skip();
		return;
	}
	assert_int_equal(
	    system(
		"set -e; exec >/dev/null 2>&1\n"
		"ip link set lo up\n"
		"ip link add dp0 type veth peer name p0; ip link set p0 up; ip link set dp0 up\n"
		"ip link set dp0 mtu 1400\n"
		"ip link add eth9 type veth peer name p9; ip link set p9 up; ip link set eth9 up\n"
		"ip addr add 10.1.0.1/16 dev dp0\n"
		"ip addr add 2001:db8:1::1/64 dev dp0 nodad\n"
		"ip addr add 192.0.2.1/24 dev eth9\n"
		"ip route add 198.51.100.0/24 via 10.1.0.2 dev dp0 mtu 1300\n"
		"ip route add 203.0.114.0/24 nexthop via 10.1.0.7 dev dp0 nexthop via 192.0.2.7 "
		"dev "
		"eth9\n"
		"ip route add blackhole 10.9.0.0/16\n"
		"ip route add default via 192.0.2.254 dev eth9\n"
		"ip route add 10.2.0.0/16 tos 0x10 dev dp0\n"
		"ip -6 route add unreachable 2001:db8:9::/48\n"),
	    0);
	assert_int_equal(nftdp_route_table_create(&t), 0);
	assert_int_equal(nftdp_route_mirror(t, ports, 2), 0);
	nh = nftdp_route_lookup4(t, a4("10.1.5.5"));
	assert_non_null(nh);
	assert_int_equal(nh->type, RTN_UNICAST);
	assert_int_equal(nh->oif[0], 1);
	assert_int_equal(nh->plen, 16);
	assert_false(nh->gateway);
	nh = nftdp_route_lookup4(t, a4("10.1.0.1"));
	assert_int_equal(nh->type, RTN_LOCAL);
	assert_int_equal(nh->oif[0], 1);
	nh = nftdp_route_lookup4(t, a4("127.0.0.1")); /* lo: no port, kept */
	assert_int_equal(nh->type, RTN_LOCAL);
	assert_true(nh->oif[0] > NFTDP_ROUTE_IFINDEX_FOREIGN);
	assert_string_equal(nftdp_route_dev_name(t, nh->oif[0]), "lo");
	nh = nftdp_route_lookup4(t, a4("198.51.100.3"));
	assert_true(nh->gateway);
	assert_int_equal(nh->oif[0], 1);
	/* rt nexthop and rt mtu: the gateway, the mtu metric, the device's mtu */
	assert_int_equal(rd_be32(nh->gw), rd_be32((const uint8_t *)&(uint32_t){a4("10.1.0.2")}));
	assert_int_equal(nh->mtu, 1300);
	assert_int_equal(nftdp_route_lookup4(t, a4("10.1.5.5"))->mtu, 0);
	assert_int_equal(nftdp_route_dev_mtu(t, 1), 1400);
	nh = nftdp_route_lookup4(t, a4("203.0.114.9")); /* multipath: the first path's */
	assert_true(nh->gateway);
	assert_int_equal(rd_be32(nh->gw), rd_be32((const uint8_t *)&(uint32_t){a4("10.1.0.7")}));
	nh = nftdp_route_lookup4(t, a4("8.8.8.8"));
	assert_int_equal(nh->plen, 0);
	assert_string_equal(nftdp_route_dev_name(t, nh->oif[0]), "eth9");
	assert_int_equal(nftdp_route_lookup4(t, a4("10.9.1.1"))->type, RTN_BLACKHOLE);
	/* the TOS route is not mirrored: the default answers */
	assert_int_equal(nftdp_route_lookup4(t, a4("10.2.0.1"))->plen, 0);
	nh = nftdp_route_lookup6(t, a6("2001:db8:1::5"), 0);
	assert_non_null(nh);
	assert_int_equal(nh->oif[0], 1);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:1::1"), 0)->type, RTN_LOCAL);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:9::1"), 0)->type, RTN_UNREACHABLE);
	assert_true(nftdp_route_addr6_on(t, a6("2001:db8:1::1"), 1));
	assert_string_equal(nftdp_route_dev_name(t, 1), "dp0");
	assert_null(nftdp_route_dev_name(t, 2)); /* no device dp1 here */
	nftdp_route_table_destroy(t);
}

/* reset: the same table, emptied, takes the same prefixes again */
static void test_route_reset(void **state)
{
	struct nftdp_route_table *t;
	struct nftdp_route_nh nh = nh1(RTN_UNICAST, 1);
	unsigned int n4, n6;

	(void)state;
	assert_int_equal(nftdp_route_table_create(&t), 0);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_MAIN,
						 &(uint32_t){a4("10.0.0.0")}, 8, &nh),
				 0);
		/* a local route over main's at the same prefix: one rte_fib entry */
		assert_int_equal(nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_LOCAL,
						 &(uint32_t){a4("10.0.0.0")}, 8, &nh),
				 0);
		assert_int_equal(nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_MAIN,
						 &(uint32_t){a4("10.1.2.0")}, 24, &nh),
				 0);
		assert_int_equal(
		    nftdp_route_add(t, AF_INET6, NFTDP_ROUTE_TBL_MAIN, a6("2001:db8::"), 32, &nh),
		    0);
		assert_int_equal(
		    nftdp_route_add(t, AF_INET6, NFTDP_ROUTE_TBL_LOCAL, a6("fe80::"), 64, &nh), 0);
		assert_int_equal(nftdp_route_addr6_add(t, 1, a6("2001:db8::1")), 0);
		assert_int_equal(nftdp_route_dev_add(t, 1, "dp0", 1500), 0);
		assert_non_null(nftdp_route_lookup4(t, a4("10.1.2.3")));
		assert_int_equal(nftdp_route_lookup4(t, a4("10.1.2.3"))->plen, 24);
		assert_non_null(nftdp_route_lookup6(t, a6("2001:db8::5"), 0));
		assert_int_equal(nftdp_route_table_reset(t), 0);
		assert_null(nftdp_route_lookup4(t, a4("10.1.2.3")));
		assert_null(nftdp_route_lookup4(t, a4("10.200.0.1")));
		assert_null(nftdp_route_lookup6(t, a6("2001:db8::5"), 0));
		assert_null(nftdp_route_lookup6(t, a6("fe80::1"), 0));
		assert_false(nftdp_route_addr6_on(t, a6("2001:db8::1"), 1));
		assert_null(nftdp_route_dev_name(t, 1));
		nftdp_route_count(t, &n4, &n6);
		assert_int_equal(n4 + n6, 0);
		assert_false(nftdp_route_policy_custom(t, NULL));
	}
	nftdp_route_table_destroy(t);
}

/* a table made bigger takes more routes than 2-byte next hops can name */
static void test_route_big(void **state)
{
	struct nftdp_route_table *t;
	struct nftdp_route_nh nh = nh1(RTN_UNICAST, 1);
	unsigned int n4, n6;
	int rc = 0;

	(void)state;
	assert_int_equal(nftdp_route_table_create(&t), 0);
	assert_int_equal(nftdp_route_capacity(t), 65536);
	for (uint32_t i = 0; i < 70000 && rc == 0; i++) {
		uint32_t a = htonl(0x0b000000u + (i << 8));

		rc = nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_MAIN, &a, 24, &nh);
	}
	assert_true(rc == -ENOSPC || rc == -EINVAL); /* full: fib.c grows it */
	nftdp_route_table_destroy(t);
	assert_int_equal(nftdp_route_table_create_sized(&t, 262144), 0);
	assert_int_equal(nftdp_route_capacity(t), 262144);
	for (uint32_t i = 0; i < 70000; i++) {
		uint32_t a = htonl(0x0b000000u + (i << 8));

		assert_int_equal(nftdp_route_add(t, AF_INET, NFTDP_ROUTE_TBL_MAIN, &a, 24, &nh), 0);
	}
	nftdp_route_count(t, &n4, &n6);
	assert_int_equal(n4, 70000);
	assert_int_equal(nftdp_route_lookup4(t, htonl(0x0b000000u + (69999u << 8) + 7))->plen, 24);
	assert_int_equal(nftdp_route_table_reset(t), 0);
	assert_null(nftdp_route_lookup4(t, htonl(0x0b000000u + (69999u << 8) + 7)));
	nftdp_route_table_destroy(t);
}

/* whether the watch reports a change within a second */
static int watch_wait(struct nftdp_route_watch *w)
{
	for (int i = 0; i < 100; i++) {
		int rc = nftdp_route_watch_read(w);

		if (rc != 0)
			return rc;
		usleep(10000);
	}
	return 0;
}

static struct nftdp_route_table *remirror(const struct nftdp_route_port *ports, unsigned int n)
{
	struct nftdp_route_table *t;

	assert_int_equal(nftdp_route_table_create(&t), 0);
	assert_int_equal(nftdp_route_mirror(t, ports, n), 0);
	return t;
}

/* In test_route_mirror's netns: the watch sees route, address and rule
 * changes; a dead multipath path is not FIB_RES_DEV; an ip rule beyond
 * the defaults is noted. */
static void test_route_live(void **state)
{
	static const struct nftdp_route_port ports[] = {{"dp0", 1}, {"dp1", 2}};
	struct nftdp_route_watch *w;
	struct nftdp_route_table *t;
	const struct nftdp_route_nh *nh;
	const char *why;

	(void)state;
	if (system("ip link show dp0 >/dev/null 2>&1") != 0) {
		skip(); /* test_route_mirror was skipped: no netns of our own */
		return;
	}
	assert_int_equal(nftdp_route_watch_open(&w), 0);
	assert_true(nftdp_route_watch_fd(w) >= 0);
	assert_int_equal(nftdp_route_watch_read(w), 0);
	assert_int_equal(system("ip route add 203.0.113.0/24 dev dp0"), 0);
	assert_int_equal(watch_wait(w), 1);
	assert_int_equal(nftdp_route_watch_read(w), 0); /* drained */
	assert_int_equal(system("ip addr add 2001:db8:7::1/64 dev dp0 nodad"), 0);
	assert_int_equal(watch_wait(w), 1);

	/* multipath: the first path's device until it is dead */
	assert_int_equal(system("ip route add 198.18.0.0/16 nexthop dev eth9 nexthop dev dp0"), 0);
	t = remirror(ports, 2);
	nh = nftdp_route_lookup4(t, a4("198.18.1.1"));
	assert_non_null(nh);
	assert_int_equal(nh->n_oif, 2);
	assert_string_equal(nftdp_route_dev_name(t, nh->oif[0]), "eth9");
	assert_int_equal(nh->oif[1], 1);
	assert_false(nftdp_route_policy_custom(t, &why));
	assert_null(why);
	nftdp_route_table_destroy(t);
	assert_int_equal(system("ip link set eth9 down"), 0);
	assert_int_equal(watch_wait(w), 1);
	t = remirror(ports, 2);
	nh = nftdp_route_lookup4(t, a4("198.18.1.1"));
	assert_non_null(nh);
	assert_int_equal(nh->n_oif, 2);
	assert_int_equal(nh->oif[0], 1); /* res.nh_sel: the first path not dead */
	assert_string_equal(nftdp_route_dev_name(t, nh->oif[1]), "eth9");
	nftdp_route_table_destroy(t);

	/* ip rule: a fwmark rule steers marked lookups to table 100, which
	 * is mirrored with the rule; main's answer for the others */
	assert_int_equal(system("ip route add 10.77.0.0/16 dev lo table 100"), 0);
	assert_int_equal(system("ip rule add fwmark 1 table 100"), 0);
	assert_int_equal(watch_wait(w), 1);
	t = remirror(ports, 2);
	assert_false(nftdp_route_policy_custom(t, &why));
	assert_true(nftdp_route_policy_active(t, AF_INET));
	assert_false(nftdp_route_policy_active(t, AF_INET6));
	{
		struct nftdp_route_flow fl = {.iif = 1};
		uint32_t d = a4("10.77.1.1");

		memcpy(fl.daddr, &d, 4);
		fl.mark = 1;
		nh = nftdp_route_lookup4_flow(t, &fl);
		assert_non_null(nh);
		assert_int_equal(nh->oif[0], NFTDP_ROUTE_IFINDEX_FOREIGN + 1); /* lo */
		fl.mark = 2;
		assert_ptr_equal(nftdp_route_lookup4_flow(t, &fl), nftdp_route_lookup4(t, d));
		d = a4("203.0.113.9"); /* main's, through the unmerged copy */
		memcpy(fl.daddr, &d, 4);
		nh = nftdp_route_lookup4_flow(t, &fl);
		assert_non_null(nh);
		assert_int_equal(nh->oif[0], 1);
	}
	nftdp_route_table_destroy(t);
	assert_int_equal(system("ip rule del fwmark 1 table 100"), 0);
	assert_int_equal(watch_wait(w), 1);
	t = remirror(ports, 2);
	assert_false(nftdp_route_policy_custom(t, NULL));
	assert_false(nftdp_route_policy_active(t, AF_INET));
	nftdp_route_table_destroy(t);
	assert_int_equal(system("ip route del 10.77.0.0/16 dev lo table 100"), 0);
	/* a route in table default is behind the default rule 32767: after
	 * local and main */
	assert_int_equal(system("ip route add 192.0.2.0/24 dev dp0 table default"), 0);
	t = remirror(ports, 2);
	assert_false(nftdp_route_policy_custom(t, NULL));
	assert_false(nftdp_route_policy_active(t, AF_INET));
	{
		struct nftdp_route_flow fl = {0};
		uint32_t d = a4("192.0.2.7");

		memcpy(fl.daddr, &d, 4);
		if (!nftdp_route_lookup4(t, d)) { /* no default route in main */
			nh = nftdp_route_lookup4_flow(t, &fl);
			assert_non_null(nh);
			assert_int_equal(nh->oif[0], 1);
		}
	}
	nftdp_route_table_destroy(t);
	assert_int_equal(system("ip route del 192.0.2.0/24 dev dp0 table default"), 0);
	/* notifications lost (ENOBUFS): "dump again", not an error */
	{
		int fd = nftdp_route_watch_fd(w), small = 1;
		FILE *b = fopen("/tmp/nftdp-test-fib-batch", "w");

		assert_int_equal(nftdp_route_watch_read(w), 1); /* the del above */
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
		assert_non_null(b);
		for (int i = 0; i < 500; i++)
			fprintf(b, "route add 172.16.%d.%d/32 dev dp0\n", i / 250, i % 250);
		fclose(b);
		assert_int_equal(system("ip -batch /tmp/nftdp-test-fib-batch"), 0);
		remove("/tmp/nftdp-test-fib-batch");
		assert_int_equal(nftdp_route_watch_read(w), 1);
		assert_int_equal(nftdp_route_watch_read(w), 0);
	}
	nftdp_route_watch_close(w);
}

/* the notifications of one change: the first within a second, then
 * every one until 50 ms pass without another */
static void collect(struct nftdp_route_watch *w)
{
	assert_true(watch_wait(w) > 0);
	for (int quiet = 0; quiet < 5;) {
		if (nftdp_route_watch_read(w) != 0) {
			quiet = 0;
		} else {
			quiet++;
			usleep(10000);
		}
	}
}

/* read the watch until nothing came for 500 ms; whether anything came */
static bool settle(struct nftdp_route_watch *w)
{
	bool any = false;

	for (int quiet = 0; quiet < 50;) {
		if (nftdp_route_watch_read(w) != 0) {
			any = true;
			quiet = 0;
		} else {
			quiet++;
			usleep(10000);
		}
	}
	return any;
}

/* t and a new dump of the netns answer alike */
static void assert_same_as_refill(const struct nftdp_route_table *t,
				  const struct nftdp_route_port *ports, unsigned int n,
				  unsigned int size)
{
	struct nftdp_route_table *fresh;
	char why[160];
	bool same;

	assert_int_equal(nftdp_route_table_create_sized(&fresh, size), 0);
	assert_int_equal(nftdp_route_mirror(fresh, ports, n), 0);
	same = nftdp_route_table_same(t, fresh, why, sizeof(why));
	if (!same)
		fprintf(stderr, "delta against refill: %s\n", why);
	assert_true(same);
	nftdp_route_table_destroy(fresh);
}

/* one change to the netns applied as a delta (0) to t and to a later
 * dump, each then as a new dump answers (or, later_may_refill, the later
 * dump asks for a refill) */
static void delta_step(struct nftdp_route_watch *w, struct nftdp_route_batch *b,
		       struct nftdp_route_table *t, const struct nftdp_route_port *ports,
		       const char *cmd, bool later_may_refill)
{
	struct nftdp_route_table *t2;
	int rc;

	nftdp_route_batch_clear(b);
	if (system(cmd) != 0)
		fprintf(stderr, "failed: %s\n", cmd);
	collect(w);
	assert_false(nftdp_route_batch_full(b));
	rc = nftdp_route_apply(t, b);
	if (rc != 0)
		fprintf(stderr, "delta of \"%s\": %d\n", cmd, rc);
	assert_int_equal(rc, 0);
	assert_same_as_refill(t, ports, 2, 0);
	t2 = remirror(ports, 2);
	rc = nftdp_route_apply(t2, b);
	if (rc != 0 && !(rc == -EAGAIN && later_may_refill))
		fprintf(stderr, "delta of \"%s\" to a later dump: %d\n", cmd, rc);
	if (rc == -EAGAIN && later_may_refill)
		rc = 0; /* an append the later dump is past: neither reading fits */
	else
		assert_same_as_refill(t2, ports, 2, 0);
	assert_int_equal(rc, 0);
	nftdp_route_table_destroy(t2);
}

static const uint8_t *mp6_gw(const struct nftdp_route_table *t, unsigned int i)
{
	const struct nftdp_route_nh *nh = nftdp_route_lookup6(t, a6("2001:db8:60::1"), 0);

	assert_non_null(nh);
	assert_true(i < nh->n_oif);
	return nh->path_gw[i];
}

/* IPv6 multipath as deltas: the kernel's sibling routes added, appended
 * one (new sibling first in the message) or several at a time,
 * prepended, replaced and deleted one path or whole, each applied to
 * the table and to a later dump and compared path by path with a new
 * dump; a path deleted from a route of as many paths as kept is a
 * refill */
static void delta_mp6(struct nftdp_route_watch *w, struct nftdp_route_batch *b,
		      struct nftdp_route_table **tp, const struct nftdp_route_port *ports)
{
	const struct nftdp_route_nh *nh;
	struct nftdp_route_table *t = *tp;

	delta_step(w, b, t, ports,
		   "ip -6 route add 2001:db8:60::/48 nexthop via 2001:db8:1::11 dev dp0 "
		   "nexthop via 2001:db8:1::12 dev dp0 weight 2",
		   false);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:60::1"), 0)->n_oif, 2);
	delta_step(w, b, t, ports, "ip -6 route append 2001:db8:60::/48 via fe80::9 dev eth9",
		   false);
	nh = nftdp_route_lookup6(t, a6("2001:db8:60::1"), 0);
	assert_int_equal(nh->n_oif, 3);
	assert_memory_equal(mp6_gw(t, 0), a6("2001:db8:1::11"), 16);
	assert_int_equal(nh->path_weight[1], 2);
	assert_memory_equal(mp6_gw(t, 2), a6("fe80::9"), 16);
	delta_step(w, b, t, ports, "ip -6 route del 2001:db8:60::/48 via 2001:db8:1::11 dev dp0",
		   false);
	assert_memory_equal(mp6_gw(t, 0), a6("2001:db8:1::12"), 16);
	delta_step(w, b, t, ports,
		   "ip -6 route append 2001:db8:60::/48 nexthop via 2001:db8:1::13 dev dp0 "
		   "nexthop via 2001:db8:1::14 dev dp0",
		   false);
	assert_memory_equal(mp6_gw(t, 3), a6("2001:db8:1::14"), 16);
	/* as many paths as kept: a fifth may exist, a delete is a refill */
	nftdp_route_batch_clear(b);
	assert_int_equal(system("ip -6 route del 2001:db8:60::/48 via 2001:db8:1::13 dev dp0"), 0);
	collect(w);
	assert_int_equal(nftdp_route_apply(t, b), -EAGAIN);
	nftdp_route_table_destroy(t);
	*tp = t = remirror(ports, 2);
	delta_step(w, b, t, ports,
		   "ip -6 route replace 2001:db8:60::/48 nexthop via 2001:db8:1::15 dev dp0 "
		   "weight 3 nexthop via 2001:db8:1::11 dev dp0",
		   false);
	/* an add without NLM_F_EXCL appends too */
	delta_step(w, b, t, ports,
		   "ip -6 route prepend 2001:db8:60::/48 via 2001:db8:1::16 dev dp0", false);
	assert_memory_equal(mp6_gw(t, 2), a6("2001:db8:1::16"), 16);
	delta_step(w, b, t, ports, "ip -6 route del 2001:db8:60::/48 via 2001:db8:1::11 dev dp0",
		   false);
	delta_step(w, b, t, ports, "ip -6 route del 2001:db8:60::/48 via 2001:db8:1::15 dev dp0",
		   false);
	nh = nftdp_route_lookup6(t, a6("2001:db8:60::1"), 0);
	assert_int_equal(nh->n_oif, 1);
	assert_int_equal(nh->path_weight[0], 1);
	/* several in one batch */
	delta_step(w, b, t, ports,
		   "set -e\n"
		   "ip -6 route append 2001:db8:60::/48 via 2001:db8:1::17 dev dp0\n"
		   "ip -6 route append 2001:db8:60::/48 via 2001:db8:1::18 dev dp0\n"
		   "ip -6 route del 2001:db8:60::/48 via 2001:db8:1::16 dev dp0\n"
		   "ip -6 route append 2001:db8:60::/48 via 2001:db8:1::16 dev dp0\n"
		   "ip -6 route add 2001:db8:61::/48 nexthop via 2001:db8:1::11 dev dp0 "
		   "nexthop via 2001:db8:1::12 dev dp0\n"
		   "ip -6 route del 2001:db8:61::/48\n"
		   "ip -6 route add 2001:db8:61::/48 via 2001:db8:1::13 dev dp0\n"
		   "ip -6 route append 2001:db8:61::/48 via 2001:db8:1::12 dev dp0\n",
		   true);
	assert_memory_equal(mp6_gw(t, 0), a6("2001:db8:1::17"), 16);
	assert_memory_equal(mp6_gw(t, 2), a6("2001:db8:1::16"), 16);
	delta_step(w, b, t, ports,
		   "set -e\n"
		   "ip -6 route del 2001:db8:60::/48\n"
		   "ip -6 route del 2001:db8:61::/48\n",
		   false);
	assert_null(nftdp_route_lookup6(t, a6("2001:db8:60::1"), 0));
}

static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* IPv6 multipath at scale, timed: 500 two-path routes (or
 * NFTDP_TEST_MP6_ROUTES), then a path appended to each and another
 * deleted (1,000 updates in one batch), applied as deltas against a
 * refill of the same table (what each batch cost before) */
static void delta_mp6_bench(struct nftdp_route_watch *w, struct nftdp_route_batch *b,
			    struct nftdp_route_table *t, const struct nftdp_route_port *ports)
{
	const char *env = getenv("NFTDP_TEST_MP6_ROUTES");
	int N = env && atoi(env) > 0 && atoi(env) <= 60000 ? atoi(env) : 500;
	struct nftdp_route_table *t2;
	struct timespec a, z;
	double delta, refill, kernel = 0;
	char load[64] = "?";
	FILE *f;

	for (int step = 0; step < 3; step++) {
		f = fopen("/tmp/nftdp-test-fib-mp6", "w");
		assert_non_null(f);
		for (int i = 0; i < N; i++)
			if (step == 0)
				fprintf(
				    f,
				    "route add 2001:db8:70:%x::/64 nexthop via 2001:db8:1::11 dev "
				    "dp0 nexthop via 2001:db8:1::12 dev dp0\n",
				    i);
			else if (step == 1)
				fprintf(
				    f,
				    "route append 2001:db8:70:%x::/64 via 2001:db8:1::13 dev dp0\n"
				    "route del 2001:db8:70:%x::/64 via 2001:db8:1::11 dev dp0\n",
				    i, i);
			else
				fprintf(f, "route del 2001:db8:70:%x::/64\n", i);
		fclose(f);
		nftdp_route_batch_clear(b);
		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(system("ip -6 -batch /tmp/nftdp-test-fib-mp6"), 0);
		clock_gettime(CLOCK_MONOTONIC, &z);
		kernel = ms_between(&a, &z);
		collect(w);
		assert_false(nftdp_route_batch_full(b));
		assert_int_equal(nftdp_route_batch_count(b), step == 1 ? 2 * N : N);
		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(nftdp_route_apply(t, b), 0);
		clock_gettime(CLOCK_MONOTONIC, &z);
		delta = ms_between(&a, &z);
		assert_same_as_refill(t, ports, 2, 0);
		if (step != 1)
			continue;
		/* a dump into a new table (a reset one may lack tbl8 groups:
		 * rte_fib6's TRIE does not give each back) */
		assert_int_equal(nftdp_route_table_create(&t2), 0);
		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(nftdp_route_mirror(t2, ports, 2), 0);
		clock_gettime(CLOCK_MONOTONIC, &z);
		refill = ms_between(&a, &z);
		nftdp_route_table_destroy(t2);
		f = fopen("/proc/loadavg", "r");
		if (f) {
			if (!fgets(load, sizeof(load), f))
				strcpy(load, "?");
			load[strcspn(load, "\n")] = '\0';
			fclose(f);
		}
		printf("IPv6 multipath: %d updates (ip -batch: %.1f ms) as deltas in %.2f ms "
		       "(%.0f/s); a dump into a new table %.2f ms (load average %s)\n",
		       2 * N, kernel, delta, 2 * N / (delta / 1e3), refill, load);
	}
	remove("/tmp/nftdp-test-fib-mp6");
}

/* Route updates as deltas (route/delta.c), in test_route_mirror's netns:
 * adds, replaces and deletes of both families applied to a mirrored
 * table answer as a new dump does; applied again to that dump they
 * change nothing, nor does a promiscuity change; IPv4 routes of one
 * prefix by metric and IPv6 multipath routes are deltas too; two routes
 * of one metric, an mtu, an address and a table out of tbl8 groups ask
 * for a refill. */
static void test_route_delta(void **state)
{
	static const struct nftdp_route_port ports[] = {{"dp0", 1}, {"dp1", 2}};
	struct nftdp_route_watch *w;
	struct nftdp_route_batch *b;
	struct nftdp_route_table *t, *t2;
	const struct nftdp_route_nh *nh;
	FILE *f;

	(void)state;
	if (system("ip link show dp0 >/dev/null 2>&1") != 0) {
		skip(); /* test_route_mirror was skipped: no netns of our own */
		return;
	}
	/* eth9 up (test_route_live took it down), its IPv6 link-local
	 * address past DAD, before the first dump */
	assert_int_equal(system("ip link set eth9 up; for i in $(seq 50); do "
				"ip -6 addr show dev eth9 scope link | grep -q . && "
				"! ip -6 addr show dev eth9 tentative | grep -q . && break; "
				"sleep 0.1; done; sleep 0.2"),
			 0);
	assert_int_equal(nftdp_route_watch_open(&w), 0);
	assert_int_equal(nftdp_route_batch_create(&b), 0);
	nftdp_route_watch_collect(w, b);
	/* the kernel's own changes after eth9 came up (routes of addresses
	 * past DAD) settle first; one that came during the dump takes
	 * another dump, so the batches below hold only the test's changes */
	settle(w);
	t = remirror(ports, 2);
	for (int i = 0; i < 5 && settle(w); i++) {
		nftdp_route_table_destroy(t);
		t = remirror(ports, 2);
	}
	nftdp_route_batch_clear(b);

	/* adds: gateway, mtu, multipath, blackhole, a host route, IPv6 */
	assert_int_equal(system("set -e\n"
				"ip route add 100.64.1.0/24 via 10.1.0.2 dev dp0\n"
				"ip route add 100.64.2.0/24 dev eth9 mtu 1200\n"
				"ip route add 100.64.0.0/16 nexthop via 10.1.0.3 dev dp0 weight 2 "
				"nexthop via 192.0.2.9 dev eth9\n"
				"ip route add blackhole 100.65.0.0/16\n"
				"ip route add 100.66.0.1/32 dev dp0\n"
				"ip -6 route add 2001:db8:50::/48 via 2001:db8:1::2 dev dp0\n"
				"ip -6 route add unreachable 2001:db8:51::/48\n"),
			 0);
	collect(w);
	assert_true(nftdp_route_batch_count(b) >= 7);
	assert_false(nftdp_route_batch_full(b));
	assert_int_equal(nftdp_route_apply(t, b), 0);
	assert_same_as_refill(t, ports, 2, 0);
	nh = nftdp_route_lookup4(t, a4("100.64.9.9"));
	assert_non_null(nh);
	assert_int_equal(nh->n_oif, 2);
	assert_int_equal(nh->path_weight[0], 2);
	assert_int_equal(nftdp_route_lookup4(t, a4("100.64.2.1"))->mtu, 1200);
	assert_int_equal(nftdp_route_lookup6(t, a6("2001:db8:51::1"), 0)->type, RTN_UNREACHABLE);
	assert_int_equal(nftdp_route_apply(t, b), 0); /* again: nothing changes */
	assert_same_as_refill(t, ports, 2, 0);
	t2 = remirror(ports, 2); /* a later dump: the batch changes nothing */
	assert_int_equal(nftdp_route_apply(t2, b), 0);
	assert_same_as_refill(t2, ports, 2, 0);
	nftdp_route_table_destroy(t2);
	nftdp_route_batch_clear(b);

	/* replace (ip route replace: NLM_F_REPLACE), then delete */
	assert_int_equal(system("set -e\n"
				"ip route replace 100.64.1.0/24 via 10.1.0.9 dev dp0\n"
				"ip route replace 100.64.0.0/16 via 192.0.2.8 dev eth9\n"
				"ip -6 route replace 2001:db8:50::/48 via 2001:db8:1::3 dev dp0\n"
				"ip route replace 100.67.0.0/16 dev dp0\n"),
			 0);
	collect(w);
	assert_int_equal(nftdp_route_apply(t, b), 0);
	assert_same_as_refill(t, ports, 2, 0);
	nh = nftdp_route_lookup4(t, a4("100.64.1.1"));
	assert_int_equal(rd_be32(nh->gw), rd_be32((const uint8_t *)&(uint32_t){a4("10.1.0.9")}));
	assert_int_equal(nftdp_route_lookup4(t, a4("100.64.9.9"))->n_oif, 1);
	nftdp_route_batch_clear(b);
	assert_int_equal(system("set -e\n"
				"ip route del 100.64.2.0/24\n"
				"ip route del 100.64.0.0/16\n"
				"ip route del blackhole 100.65.0.0/16\n"
				"ip -6 route del 2001:db8:51::/48\n"
				"ip route add 100.64.2.0/24 dev dp0\n"),
			 0);
	collect(w);
	assert_int_equal(nftdp_route_apply(t, b), 0);
	assert_same_as_refill(t, ports, 2, 0);
	assert_int_equal(nftdp_route_lookup4(t, a4("100.64.2.1"))->oif[0], 1);
	assert_null(nftdp_route_lookup4(t, a4("100.65.0.1"))); /* eth9 down took the default */
	nftdp_route_batch_clear(b);

	delta_mp6(w, b, &t, ports);
	delta_mp6_bench(w, b, t, ports);
	nftdp_route_batch_clear(b);

	/* IPv4 routes of a prefix by metric (the shadow set lists them):
	 * another metric added behind and in front, replaced, deleted, the
	 * one left answers; each as a later dump has it */
	delta_step(w, b, t, ports, "ip route add 100.64.1.0/24 via 10.1.0.5 dev dp0 metric 500",
		   false);
	assert_int_equal(nftdp_route_lookup4(t, a4("100.64.1.1"))->metric, 0);
	delta_step(w, b, t, ports, "ip route add 100.64.1.0/24 via 10.1.0.6 dev dp0 metric 50",
		   false);
	assert_int_equal(nftdp_route_lookup4(t, a4("100.64.1.1"))->metric, 0);
	delta_step(w, b, t, ports,
		   "set -e\n"
		   "ip route del 100.64.1.0/24 via 10.1.0.9 dev dp0 metric 0\n"
		   "ip route replace 100.64.1.0/24 via 10.1.0.7 dev dp0 metric 50\n",
		   false);
	nh = nftdp_route_lookup4(t, a4("100.64.1.1"));
	assert_int_equal(nh->metric, 50);
	assert_int_equal(rd_be32(nh->gw), rd_be32((const uint8_t *)&(uint32_t){a4("10.1.0.7")}));
	delta_step(w, b, t, ports, "ip route del 100.64.1.0/24 via 10.1.0.7 dev dp0 metric 50",
		   false);
	assert_int_equal(nftdp_route_lookup4(t, a4("100.64.1.1"))->metric, 500);
	/* two routes of one metric (an append): a refill; after it a delete
	 * there is a refill too (the refill cannot list them) */
	nftdp_route_batch_clear(b);
	assert_int_equal(system("ip route append 100.64.1.0/24 via 10.1.0.8 dev dp0 metric 500"),
			 0);
	collect(w);
	assert_int_equal(nftdp_route_apply(t, b), -EAGAIN);
	nftdp_route_table_destroy(t);
	t = remirror(ports, 2);
	nftdp_route_batch_clear(b);
	assert_int_equal(system("ip route del 100.64.1.0/24 via 10.1.0.8 dev dp0 metric 500"), 0);
	collect(w);
	assert_int_equal(nftdp_route_apply(t, b), -EAGAIN);
	nftdp_route_table_destroy(t);
	t = remirror(ports, 2);
	assert_int_equal(nftdp_route_lookup4(t, a4("100.64.1.1"))->metric, 500);
	nftdp_route_batch_clear(b);

	/* promiscuity (tcpdump) changes nothing mirrored; an mtu does */
	assert_int_equal(system("ip link set dp0 promisc on"), 0);
	collect(w);
	assert_false(nftdp_route_batch_full(b));
	assert_int_equal(nftdp_route_apply(t, b), 0);
	nftdp_route_batch_clear(b);
	assert_int_equal(system("ip link set dp0 promisc off; ip link set dp0 mtu 1450"), 0);
	collect(w);
	assert_int_equal(nftdp_route_apply(t, b), -EAGAIN);
	nftdp_route_table_destroy(t);
	t = remirror(ports, 2);
	assert_int_equal(nftdp_route_dev_mtu(t, 1), 1450);
	nftdp_route_batch_clear(b);
	assert_int_equal(system("ip link set dp0 mtu 1400"), 0);
	collect(w);
	nftdp_route_table_destroy(t);
	t = remirror(ports, 2);
	nftdp_route_batch_clear(b);

	/* an address: addresses and rules are refills */
	assert_int_equal(system("ip addr add 10.3.0.1/24 dev dp0"), 0);
	collect(w);
	assert_true(nftdp_route_batch_full(b));
	assert_int_equal(nftdp_route_apply(t, b), -EAGAIN);
	nftdp_route_table_destroy(t);
	t = remirror(ports, 2);
	nftdp_route_batch_clear(b);

	/* out of tbl8 groups (4096 in the default size): -ENOSPC; a grown
	 * table, refilled, holds them, and the batch changes it no more */
	f = fopen("/tmp/nftdp-test-fib-delta", "w");
	assert_non_null(f);
	for (int i = 0; i < 5000; i++)
		fprintf(f, "route add 100.%d.%d.1/32 dev dp0\n", 80 + i / 256, i % 256);
	fclose(f);
	assert_int_equal(system("ip -batch /tmp/nftdp-test-fib-delta"), 0);
	collect(w);
	assert_false(nftdp_route_batch_full(b));
	assert_int_equal(nftdp_route_batch_count(b), 5000);
	assert_int_equal(nftdp_route_apply(t, b), -ENOSPC);
	nftdp_route_table_destroy(t);
	assert_int_equal(nftdp_route_table_create_sized(&t, 262144), 0);
	assert_int_equal(nftdp_route_mirror(t, ports, 2), 0);
	assert_int_equal(nftdp_route_apply(t, b), 0);
	assert_same_as_refill(t, ports, 2, 262144);
	nftdp_route_batch_clear(b);
	/* and deleted as deltas: the next hops are reused, not grown */
	f = fopen("/tmp/nftdp-test-fib-delta", "w");
	assert_non_null(f);
	for (int i = 0; i < 5000; i++)
		fprintf(f, "route del 100.%d.%d.1/32 dev dp0\n", 80 + i / 256, i % 256);
	fclose(f);
	assert_int_equal(system("ip -batch /tmp/nftdp-test-fib-delta"), 0);
	remove("/tmp/nftdp-test-fib-delta");
	collect(w);
	assert_int_equal(nftdp_route_apply(t, b), 0);
	assert_same_as_refill(t, ports, 2, 262144);
	nftdp_route_table_destroy(t);

	assert_int_equal(system("set -e\n"
				"ip addr del 10.3.0.1/24 dev dp0\n"
				"ip route del 100.64.1.0/24\n"
				"ip route del 100.64.2.0/24\n"
				"ip route del 100.66.0.1/32\n"
				"ip route del 100.67.0.0/16\n"
				"ip -6 route del 2001:db8:50::/48\n"),
			 0);
	nftdp_route_watch_close(w);
	nftdp_route_batch_destroy(b);
}

/* Resolution on request (unres.c's): the kernel makes the entry and
 * starts resolving it (nobody answers on p0: it stays incomplete, then
 * fails; the integration test dataplane-route-host sees the answer) */
static void test_route_neigh_resolve(void **state)
{
	uint32_t a = a4("10.1.0.50");

	(void)state;
	if (system("ip link show dp0 >/dev/null 2>&1") != 0) {
		skip();
		return;
	}
	assert_int_equal(nftdp_route_neigh_resolve("nosuchdev0", AF_INET, &a), -ENODEV);
	assert_int_equal(nftdp_route_neigh_resolve("dp0", AF_UNSPEC, &a), -EINVAL);
	assert_int_not_equal(system("ip neigh show 10.1.0.50 dev dp0 | grep -q ."), 0);
	assert_int_equal(nftdp_route_neigh_resolve("dp0", AF_INET, &a), 0);
	assert_int_equal(system("ip neigh show 10.1.0.50 dev dp0 | grep -Eq 'INCOMPLETE|FAILED'"),
			 0);
	assert_int_equal(nftdp_route_neigh_resolve("dp0", AF_INET6, a6("2001:db8:1::50")), 0);
	assert_int_equal(system("ip -6 neigh show 2001:db8:1::50 dev dp0 | grep -Eq "
				"'INCOMPLETE|FAILED'"),
			 0);
	assert_int_equal(
	    system("ip neigh del 10.1.0.50 dev dp0; ip -6 neigh del 2001:db8:1::50 dev "
		   "dp0; true"),
	    0);
}

/* The neighbour table: add, replace, miss, growth past its first size. */
static void test_neigh_table(void **state)
{
	static const uint8_t mac1[6] = {2, 0, 0, 0, 0, 1}, mac2[6] = {2, 0, 0, 0, 0, 2};
	struct nftdp_route_neigh *t;
	uint32_t a = a4("10.0.0.1");
	const uint8_t *ll;

	(void)state;
	assert_null(nftdp_route_neigh_lookup(NULL, AF_INET, 1, &a));
	assert_int_equal(nftdp_route_neigh_create(&t), 0);
	assert_null(nftdp_route_neigh_lookup(t, AF_INET, 1, &a));
	assert_int_equal(nftdp_route_neigh_add(t, AF_INET, 1, &a, mac1), 0);
	assert_int_equal(nftdp_route_neigh_add(t, AF_INET, 0, &a, mac1), -EINVAL);
	assert_int_equal(nftdp_route_neigh_add(t, AF_UNSPEC, 1, &a, mac1), -EINVAL);
	ll = nftdp_route_neigh_lookup(t, AF_INET, 1, &a);
	assert_non_null(ll);
	assert_memory_equal(ll, mac1, 6);
	assert_null(nftdp_route_neigh_lookup(t, AF_INET, 2, &a));	     /* another port */
	assert_int_equal(nftdp_route_neigh_add(t, AF_INET, 1, &a, mac2), 0); /* replaced */
	assert_memory_equal(nftdp_route_neigh_lookup(t, AF_INET, 1, &a), mac2, 6);
	assert_int_equal(nftdp_route_neigh_count(t), 1);
	assert_int_equal(nftdp_route_neigh_add(t, AF_INET6, 1, a6("2001:db8::1"), mac1), 0);
	assert_memory_equal(nftdp_route_neigh_lookup(t, AF_INET6, 1, a6("2001:db8::1")), mac1, 6);
	assert_null(nftdp_route_neigh_lookup(t, AF_INET6, 1, a6("2001:db8::2")));
	for (uint32_t i = 0; i < 5000; i++) {
		uint32_t b = htonl(0x0a010000u + i);
		uint8_t mac[6] = {2, 0, 0, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};

		assert_int_equal(nftdp_route_neigh_add(t, AF_INET, 1 + i % 3, &b, mac), 0);
	}
	assert_int_equal(nftdp_route_neigh_count(t), 5002);
	for (uint32_t i = 0; i < 5000; i++) {
		uint32_t b = htonl(0x0a010000u + i);

		ll = nftdp_route_neigh_lookup(t, AF_INET, 1 + i % 3, &b);
		assert_non_null(ll);
		assert_int_equal(ll[5], (uint8_t)i);
		assert_null(nftdp_route_neigh_lookup(t, AF_INET, 1 + (i + 1) % 3, &b));
	}
	assert_memory_equal(nftdp_route_neigh_lookup(t, AF_INET, 1, &a), mac2, 6);
	nftdp_route_neigh_destroy(t);
	nftdp_route_neigh_destroy(NULL);
	/* NUD_VALID only: incomplete and failed entries are not sent to */
	assert_true(nftdp_route_neigh_state_usable(0x02));  /* NUD_REACHABLE */
	assert_true(nftdp_route_neigh_state_usable(0x04));  /* NUD_STALE */
	assert_true(nftdp_route_neigh_state_usable(0x80));  /* NUD_PERMANENT */
	assert_true(nftdp_route_neigh_state_usable(0x40));  /* NUD_NOARP */
	assert_false(nftdp_route_neigh_state_usable(0x01)); /* NUD_INCOMPLETE */
	assert_false(nftdp_route_neigh_state_usable(0x20)); /* NUD_FAILED */
	assert_false(nftdp_route_neigh_state_usable(0));
}

/* ECMP: hash-threshold by weight over the live paths, stable per hash. */
static void test_path_select(void **state)
{
	struct nftdp_route_nh nh = {.type = RTN_UNICAST, .n_oif = 2};
	unsigned int hits[3] = {0};

	(void)state;
	nh.path_weight[0] = nh.path_weight[1] = 1;
	for (uint32_t i = 0; i < 10000; i++) {
		uint32_t h = i * 2654435761u;
		int p = nftdp_route_path_select(&nh, h);

		assert_true(p == 0 || p == 1);
		assert_int_equal(nftdp_route_path_select(&nh, h), p);
		hits[p]++;
	}
	assert_true(hits[0] > 4000 && hits[1] > 4000);
	/* weight 3:1 */
	nh.path_weight[0] = 3;
	hits[0] = hits[1] = 0;
	for (uint32_t i = 0; i < 10000; i++)
		hits[nftdp_route_path_select(&nh, i * 2654435761u)]++;
	assert_true(hits[0] > 7000 && hits[0] < 8000);
	/* a dead path takes nothing */
	nh.path_dead = 1;
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(nftdp_route_path_select(&nh, i * 2654435761u), 1);
	nh.path_dead = 3; /* all dead: the first */
	assert_int_equal(nftdp_route_path_select(&nh, 12345), 0);
	nh.n_oif = 0;
	assert_int_equal(nftdp_route_path_select(&nh, 12345), -1);
	nh.n_oif = 1;
	nh.path_dead = 0;
	assert_int_equal(nftdp_route_path_select(&nh, 0xffffffffu), 0);
}

/* In test_route_mirror's netns: each multipath path's gateway and weight;
 * the neighbour mirror keeps usable entries of port devices only; the
 * watch tells neighbour changes apart once subscribed. */
static void test_route_neigh_live(void **state)
{
	static const struct nftdp_route_port ports[] = {{"dp0", 1}, {"dp1", 2}};
	static const uint8_t mac9[6] = {2, 0, 0, 0, 0, 9}, macb[6] = {2, 0, 0, 0, 0, 0xb};
	struct nftdp_route_watch *w;
	struct nftdp_route_table *t;
	struct nftdp_route_neigh *n;
	const struct nftdp_route_nh *nh;
	unsigned int count;
	uint32_t a;

	(void)state;
	if (system("ip link show dp0 >/dev/null 2>&1") != 0) {
		skip();
		return;
	}
	assert_int_equal(system("ip link set eth9 up"), 0); /* test_route_live set it down */
	assert_int_equal(system("ip route add 198.20.0.0/16 nexthop via 10.1.0.7 dev dp0 weight 2 "
				"nexthop via 192.0.2.7 dev eth9"),
			 0);
	t = remirror(ports, 2);
	nh = nftdp_route_lookup4(t, a4("198.20.1.1"));
	assert_non_null(nh);
	assert_int_equal(nh->n_oif, 2);
	assert_true(nh->gateway);
	assert_int_equal(nh->oif[0], 1);
	a = a4("10.1.0.7");
	assert_memory_equal(nh->path_gw[0], &a, 4);
	a = a4("192.0.2.7");
	assert_memory_equal(nh->path_gw[1], &a, 4);
	assert_int_equal(nh->path_weight[0], 2);
	assert_int_equal(nh->path_weight[1], 1);
	assert_int_equal(nh->path_dead, 0);
	nh = nftdp_route_lookup4(t, a4("198.51.100.1")); /* single path via 10.1.0.2 */
	a = a4("10.1.0.2");
	assert_memory_equal(nh->path_gw[0], &a, 4);
	assert_int_equal(nh->path_weight[0], 1);
	nftdp_route_table_destroy(t);

	assert_int_equal(nftdp_route_watch_open(&w), 0);
	assert_int_equal(nftdp_route_watch_neigh(w), 0);
	assert_int_equal(system("ip neigh replace 10.1.0.9 lladdr 02:00:00:00:00:09 dev dp0 nud "
				"permanent && ip -6 neigh replace 2001:db8:1::b lladdr "
				"02:00:00:00:00:0b dev dp0 nud reachable && ip neigh replace "
				"192.0.2.9 lladdr 02:00:00:00:00:09 dev eth9 nud permanent"),
			 0);
	assert_true(watch_wait(w) & NFTDP_ROUTE_WATCH_NEIGH);
	assert_int_equal(nftdp_route_neigh_create(&n), 0);
	assert_int_equal(nftdp_route_neigh_mirror(n, ports, 2), 0);
	a = a4("10.1.0.9");
	assert_non_null(nftdp_route_neigh_lookup(n, AF_INET, 1, &a));
	assert_memory_equal(nftdp_route_neigh_lookup(n, AF_INET, 1, &a), mac9, 6);
	assert_memory_equal(nftdp_route_neigh_lookup(n, AF_INET6, 1, a6("2001:db8:1::b")), macb, 6);
	a = a4("192.0.2.9"); /* eth9 is no port */
	assert_null(nftdp_route_neigh_lookup(n, AF_INET, 1, &a));
	/* and the kernel's own NOARP entries (IPv6 multicast) of dp0 */
	count = nftdp_route_neigh_count(n);
	assert_true(count >= 2);
	nftdp_route_neigh_destroy(n);
	/* deleted: gone from the next dump; the watch says so */
	while (nftdp_route_watch_read(w) != 0)
		;
	assert_int_equal(system("ip neigh del 10.1.0.9 dev dp0"), 0);
	/* the neighbour bit; an address or route notification of the young
	 * links (IPv6 DAD finishing) may come in the same read */
	assert_true(watch_wait(w) & NFTDP_ROUTE_WATCH_NEIGH);
	assert_int_equal(nftdp_route_neigh_create(&n), 0);
	assert_int_equal(nftdp_route_neigh_mirror(n, ports, 2), 0);
	a = a4("10.1.0.9");
	assert_null(nftdp_route_neigh_lookup(n, AF_INET, 1, &a));
	assert_int_equal(nftdp_route_neigh_count(n), count - 1);
	nftdp_route_neigh_destroy(n);
	nftdp_route_watch_close(w);
}

/* SipHash-2-4's reference vectors (key 00..0f; messages 00.., lengths 0,
 * 7, 8 and 15), then the kernel's multipath choice: in test_route_mirror's
 * netns with net.ipv4.fib_multipath_hash_seed set, `ip route get` of 64
 * destinations over a two-path route (weights 1 and 2), IPv4 with and
 * without a source and IPv6, must name the gateway nftdp's hash picks. */
uint64_t nftdp_route_siphash(const void *data, size_t len, uint64_t k0, uint64_t k1);

static bool kernel_gw(const char *cmd, char *gw, size_t size)
{
	char line[512], *v;
	FILE *f = popen(cmd, "r");
	bool ok = false;

	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && (v = strstr(line, " via ")) != NULL) {
		ok = sscanf(v + 5, "%63s", gw) == 1;
		(void)size;
	}
	pclose(f);
	return ok;
}

static void test_mp_hash_kernel(void **state)
{
	static const struct nftdp_route_port ports[] = {{"dp0", 1}, {"dp1", 2}};
	const uint64_t k0 = 0x0706050403020100ull, k1 = 0x0f0e0d0c0b0a0908ull;
	struct nftdp_route_table *t;
	uint8_t msg[15];
	unsigned int used[2][3] = {{0}};

	(void)state;
	for (unsigned int i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	assert_true(nftdp_route_siphash(msg, 0, k0, k1) == 0x726fdb47dd0e0e31ull);
	assert_true(nftdp_route_siphash(msg, 7, k0, k1) == 0xab0200f58b01d137ull);
	assert_true(nftdp_route_siphash(msg, 8, k0, k1) == 0x93f5f5799a932462ull);
	assert_true(nftdp_route_siphash(msg, 15, k0, k1) == 0xa129ca6149be45e5ull);
	if (system("ip link show dp0 >/dev/null 2>&1") != 0 ||
	    system("sysctl -qw net.ipv4.fib_multipath_hash_seed=12345 >/dev/null 2>&1") != 0) {
		skip();
		return;
	}
	assert_int_equal(
	    system("sysctl -qw net.ipv4.fib_multipath_hash_policy=0 "
		   "net.ipv6.fib_multipath_hash_policy=0 && "
		   "ip route add 198.18.77.0/24 nexthop via 10.1.0.7 dev dp0 "
		   "nexthop via 10.1.0.8 dev dp0 weight 2 && "
		   "ip -6 route add 2001:db8:77::/64 nexthop via 2001:db8:1::7 dev dp0 "
		   "nexthop via 2001:db8:1::8 dev dp0 weight 2"),
	    0);
	t = remirror(ports, 2);
	for (unsigned int v = 0; v < 3; v++) {
		for (unsigned int i = 1; i <= 64; i++) {
			struct nftdp_route_mp_keys k = {.v6 = v == 2};
			const struct nftdp_route_nh *nh;
			char cmd[160], gw[64], mine[64];
			int path;

			if (v < 2) {
				snprintf(cmd, sizeof(cmd),
					 "ip route get 198.18.77.%u%s 2>/dev/null", i,
					 v ? " from 10.1.0.1" : "");
				uint32_t s0 = v ? a4("10.1.0.1") : 0;

				k.daddr[0] = 198;
				k.daddr[1] = 18;
				k.daddr[2] = 77;
				k.daddr[3] = (uint8_t)i;
				memcpy(k.saddr, &s0, 4);
				nh = nftdp_route_lookup4(t, a4("198.18.77.1"));
			} else {
				snprintf(cmd, sizeof(cmd),
					 "ip -6 route get 2001:db8:77::%x 2>/dev/null", i);
				memcpy(k.daddr, a6("2001:db8:77::"), 16);
				k.daddr[15] = (uint8_t)i;
				nh = nftdp_route_lookup6(t, k.daddr, 0);
			}
			assert_non_null(nh);
			assert_int_equal(nh->n_oif, 2);
			assert_true(kernel_gw(cmd, gw, sizeof(gw)));
			path = nftdp_route_path_select_kernel(nh, nftdp_route_mp_hash(12345, &k));
			assert_true(path == 0 || path == 1);
			inet_ntop(v < 2 ? AF_INET : AF_INET6, nh->path_gw[path], mine,
				  sizeof(mine));
			if (strcmp(gw, mine) != 0)
				fail_msg("%s: kernel via %s, nftdp via %s", cmd, gw, mine);
			used[path][v]++;
		}
		/* both paths taken, the weight-2 one more often */
		assert_true(used[0][v] > 5 && used[1][v] > used[0][v]);
	}
	nftdp_route_table_destroy(t);
	assert_int_equal(system("ip route del 198.18.77.0/24; ip -6 route del 2001:db8:77::/64; "
				"sysctl -qw net.ipv4.fib_multipath_hash_seed=0"),
			 0);
}

/* ---------- multipath hash policies (route/mphash.c) ---------- */

uint32_t nftdp_route_jhash_2words(uint32_t a, uint32_t b, uint32_t initval);

/* an IPv4 header of proto with total length tot at b */
static size_t put_ip4(uint8_t *b, const char *src, const char *dst, uint8_t proto, size_t tot)
{
	uint32_t s = a4(src), d = a4(dst);

	memset(b, 0, 20);
	b[0] = 0x45;
	b[2] = (uint8_t)(tot >> 8);
	b[3] = (uint8_t)tot;
	b[8] = 64;
	b[9] = proto;
	memcpy(b + 12, &s, 4);
	memcpy(b + 16, &d, 4);
	return 20;
}

static size_t put_ip6(uint8_t *b, const char *src, const char *dst, uint8_t nh, uint32_t label,
		      size_t plen)
{
	memset(b, 0, 40);
	b[0] = 0x60;
	b[1] = (uint8_t)(label >> 16 & 0x0f);
	b[2] = (uint8_t)(label >> 8);
	b[3] = (uint8_t)label;
	b[4] = (uint8_t)(plen >> 8);
	b[5] = (uint8_t)plen;
	b[6] = nh;
	b[7] = 64;
	memcpy(b + 8, a6(src), 16);
	memcpy(b + 24, a6(dst), 16);
	return 40;
}

static size_t put_ports(uint8_t *b, uint16_t sport, uint16_t dport)
{
	memset(b, 0, 8);
	b[0] = (uint8_t)(sport >> 8);
	b[1] = (uint8_t)sport;
	b[2] = (uint8_t)(dport >> 8);
	b[3] = (uint8_t)dport;
	return 8;
}

static uint16_t nbo16(uint16_t v)
{
	return (uint16_t)((v >> 8) | (v << 8)); /* little-endian hosts, as the test runs */
}

/* the keys as the kernel fills struct flow_keys, hashed by the existing
 * function: what each policy must come to */
static uint32_t keys4(uint32_t seed, const char *s, const char *d, uint8_t proto, uint16_t sp,
		      uint16_t dp)
{
	struct nftdp_route_mp_keys k = {.v6 = false, .ip_proto = proto};
	uint32_t sa = s ? a4(s) : 0, da = d ? a4(d) : 0;

	memcpy(k.saddr, &sa, 4);
	memcpy(k.daddr, &da, 4);
	k.sport = sp ? nbo16(sp) : 0;
	k.dport = dp ? nbo16(dp) : 0;
	return nftdp_route_mp_hash32(seed, &k);
}

static uint32_t keys6(uint32_t seed, const char *s, const char *d, uint32_t label, uint8_t proto,
		      uint16_t sp, uint16_t dp)
{
	struct nftdp_route_mp_keys k = {.v6 = true, .ip_proto = proto, .flow_label = label};

	if (s)
		memcpy(k.saddr, a6(s), 16);
	if (d)
		memcpy(k.daddr, a6(d), 16);
	k.sport = sp ? nbo16(sp) : 0;
	k.dport = dp ? nbo16(dp) : 0;
	return nftdp_route_mp_hash32(seed, &k);
}

static void test_mp_hash_policies(void **state)
{
	const uint32_t seed = 777;
	struct nftdp_route_mp_conf c = {.seed = seed};
	uint8_t pk[256];
	size_t n, o;
	uint32_t h;

	(void)state;
	/* jhash_2words is DPDK's rte_jhash_2words (the same lookup3 final) */
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t a = i * 0x9e3779b9u, b = ~i * 0x85ebca6bu;

		assert_int_equal(nftdp_route_jhash_2words(a, b, 0), rte_jhash_2words(a, b, 0));
		assert_int_equal(nftdp_route_jhash_2words(a, b, i), rte_jhash_2words(a, b, i));
	}

	/* a UDP datagram: 0 the addresses, 1 with protocol and ports, 2 the
	 * addresses, 3 the fields named */
	n = put_ip4(pk, "10.1.0.2", "10.50.0.9", IPPROTO_UDP, 28);
	n += put_ports(pk + n, 4000, 53);
	c.policy = 0;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.1.0.2", "10.50.0.9", 0, 0, 0) >> 1);
	c.policy = 1;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.1.0.2", "10.50.0.9", IPPROTO_UDP, 4000, 53) >> 1);
	c.policy = 2;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.1.0.2", "10.50.0.9", 0, 0, 0) >> 1);
	c.policy = 3;
	c.fields = NFTDP_ROUTE_MP_F_DST_IP | NFTDP_ROUTE_MP_F_DST_PORT;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 nftdp_route_jhash_2words(keys4(seed, NULL, "10.50.0.9", 0, 0, 53), 0, 0) >>
			     1);
	/* inner fields only, no encapsulation: jhash_2words(0, 0) */
	c.fields = NFTDP_ROUTE_MP_F_INNER_MASK;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 nftdp_route_jhash_2words(0, 0, 0) >> 1);
	/* padding past the total length is not the datagram's: a port
	 * field cut off by it is 0 */
	pk[3] = 22;
	c.policy = 1;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.1.0.2", "10.50.0.9", IPPROTO_UDP, 0, 0) >> 1);

	/* IPIP: policy 2 the inner addresses, 1 the outer with protocol 4 */
	o = put_ip4(pk, "10.1.0.2", "10.50.0.9", IPPROTO_IPIP, 48);
	n = o + put_ip4(pk + o, "172.16.0.1", "172.16.9.9", IPPROTO_TCP, 28);
	n += put_ports(pk + n, 1234, 80);
	c.policy = 2;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "172.16.0.1", "172.16.9.9", 0, 0, 0) >> 1);
	c.policy = 1;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.1.0.2", "10.50.0.9", IPPROTO_IPIP, 0, 0) >> 1);
	c.policy = 3;
	c.fields = NFTDP_ROUTE_MP_F_SRC_IP | NFTDP_ROUTE_MP_F_INNER_IP_PROTO |
		   NFTDP_ROUTE_MP_F_INNER_DST_PORT | NFTDP_ROUTE_MP_F_INNER_SRC_IP;
	assert_int_equal(
	    nftdp_route_mp_hash_skb(&c, false, pk, n),
	    nftdp_route_jhash_2words(keys4(seed, "10.1.0.2", NULL, 0, 0, 0),
				     keys4(seed, "172.16.0.1", NULL, IPPROTO_TCP, 0, 80), 0) >>
		1);
	/* the inner header cut short: no inner addresses, the outer ones */
	c.policy = 2;
	pk[3] = 30;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, 30),
			 keys4(seed, "10.1.0.2", "10.50.0.9", 0, 0, 0) >> 1);
	pk[3] = 48;

	/* GRE with checksum, key and sequence, carrying IPv6 (ETH_P_IPV6):
	 * policy 2 on an IPv4 route hashes IPv6 keys, label and protocol */
	o = put_ip4(pk, "10.1.0.2", "10.50.0.9", IPPROTO_GRE, 20 + 16 + 48);
	memset(pk + o, 0, 16);
	pk[o] = 0xb0; /* C, K, S */
	pk[o + 2] = 0x86;
	pk[o + 3] = 0xdd;
	pk[o + 8] = 0x12; /* the key: not hashed */
	o += 16;
	n = o + put_ip6(pk + o, "2001:db8:a::1", "2001:db8:b::2", IPPROTO_UDP, 0x12345, 8);
	n += put_ports(pk + n, 5000, 6000);
	c.policy = 2;
	assert_int_equal(
	    nftdp_route_mp_hash_skb(&c, false, pk, n),
	    keys6(seed, "2001:db8:a::1", "2001:db8:b::2", 0x12345, IPPROTO_UDP, 0, 0) >> 1);
	c.policy = 3;
	c.fields = NFTDP_ROUTE_MP_F_INNER_FLOWLABEL | NFTDP_ROUTE_MP_F_INNER_SRC_PORT;
	assert_int_equal(
	    nftdp_route_mp_hash_skb(&c, false, pk, n),
	    nftdp_route_jhash_2words(0, keys6(seed, NULL, NULL, 0x12345, 0, 5000, 0), 0) >> 1);
	/* GRE routing (R): not looked into */
	pk[20] = 0x40;
	c.policy = 2;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.1.0.2", "10.50.0.9", 0, 0, 0) >> 1);

	/* GRE TEB: an Ethernet header, then IPv4 */
	o = put_ip4(pk, "10.1.0.2", "10.50.0.9", IPPROTO_GRE, 20 + 4 + 14 + 28);
	memset(pk + o, 0, 18);
	pk[o + 2] = 0x65;
	pk[o + 3] = 0x58;
	pk[o + 4 + 12] = 0x08;
	o += 18;
	n = o + put_ip4(pk + o, "192.168.7.1", "192.168.8.1", IPPROTO_UDP, 28);
	n += put_ports(pk + n, 1, 2);
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "192.168.7.1", "192.168.8.1", 0, 0, 0) >> 1);

	/* IPv6 over a hop-by-hop header and IPv4-in-IPv6 */
	o = put_ip6(pk, "2001:db8:1::2", "2001:db8:50::9", IPPROTO_HOPOPTS, 0x00abc, 8 + 28);
	memset(pk + o, 0, 8);
	pk[o] = IPPROTO_IPIP;
	o += 8;
	n = o + put_ip4(pk + o, "10.7.0.1", "10.8.0.1", IPPROTO_UDP, 28);
	n += put_ports(pk + n, 7, 8);
	c.policy = 2;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, true, pk, n),
			 keys4(seed, "10.7.0.1", "10.8.0.1", 0, 0, 0) >> 1);
	c.policy = 1; /* stops at the encapsulation: protocol 4, no ports */
	assert_int_equal(nftdp_route_mp_hash_skb(&c, true, pk, n),
			 keys6(seed, "2001:db8:1::2", "2001:db8:50::9", 0, IPPROTO_IPIP, 0, 0) >>
			     1);
	c.policy = 3; /* the outer flow label as the dissector has it */
	c.fields = NFTDP_ROUTE_MP_F_FLOWLABEL | NFTDP_ROUTE_MP_F_INNER_DST_IP;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, true, pk, n),
			 nftdp_route_jhash_2words(keys6(seed, NULL, NULL, 0x00abc, 0, 0, 0),
						  keys4(seed, NULL, "10.8.0.1", 0, 0, 0), 0) >>
			     1);
	/* policy 0: ip6_multipath_l3_keys, the label as the header has it */
	c.policy = 0;
	{
		uint32_t lbl = 0;

		memcpy(&lbl, pk, 4);
		lbl &= htonl(0x000fffff);
		h = keys6(seed, "2001:db8:1::2", "2001:db8:50::9", lbl, IPPROTO_HOPOPTS, 0, 0);
	}
	assert_int_equal(nftdp_route_mp_hash_skb(&c, true, pk, n), h >> 1);

	/* an ICMPv4 source quench quoting a header: policy 0 the quoted
	 * addresses, 2 the outer (the dissector does not look into it) */
	o = put_ip4(pk, "10.1.0.2", "10.50.0.9", IPPROTO_ICMP, 20 + 8 + 28);
	memset(pk + o, 0, 8);
	pk[o] = 4;
	o += 8;
	n = o + put_ip4(pk + o, "10.50.0.9", "10.1.0.77", IPPROTO_UDP, 28);
	n += put_ports(pk + n, 1, 2);
	c.policy = 0;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.50.0.9", "10.1.0.77", 0, 0, 0) >> 1);
	c.policy = 2;
	assert_int_equal(nftdp_route_mp_hash_skb(&c, false, pk, n),
			 keys4(seed, "10.1.0.2", "10.50.0.9", 0, 0, 0) >> 1);

	/* a flow without a packet (an output route to 10.50.0.9) */
	{
		struct nftdp_route_mp_keys f = {.v6 = false, .ip_proto = IPPROTO_UDP};
		uint32_t da = a4("10.50.0.9");

		memcpy(f.daddr, &da, 4);
		f.dport = nbo16(53);
		c.policy = 0;
		assert_int_equal(nftdp_route_mp_hash_flow(&c, &f),
				 keys4(seed, NULL, "10.50.0.9", 0, 0, 0) >> 1);
		c.policy = 1;
		assert_int_equal(nftdp_route_mp_hash_flow(&c, &f),
				 keys4(seed, NULL, "10.50.0.9", IPPROTO_UDP, 0, 53) >> 1);
		c.policy = 3;
		c.fields = NFTDP_ROUTE_MP_F_INNER_MASK; /* no outer field: 0 */
		assert_int_equal(nftdp_route_mp_hash_flow(&c, &f), 0);
		c.fields = NFTDP_ROUTE_MP_F_SRC_IP;
		assert_int_equal(nftdp_route_mp_hash_flow(&c, &f), keys4(seed, 0, 0, 0, 0, 0) >> 1);
	}
}

/* In test_route_mirror's netns: `ip route get` against nftdp's hash under
 * policies 1-3 (custom field sets): IPv4 input and output routes (both
 * hash the skb inet_rtm_getroute builds, as a forwarded packet's), IPv6
 * output and input routes (flows without a packet, as nf_route's), 24
 * flows each */
static void test_mp_hash_policy_kernel(void **state)
{
	static const struct nftdp_route_port ports[] = {{"dp0", 1}, {"dp1", 2}};
	static const struct {
		uint8_t policy;
		uint32_t fields;
	} conf[] = {{1, 0}, {2, 0}, {3, 0x037}, {3, 0x020}, {3, 0x0c0}, {3, 0xfff}, {3, 0x02d}};
	struct nftdp_route_table *t;
	const struct nftdp_route_nh *nh4, *nh6;
	unsigned int differ = 0, used[2] = {0};

	(void)state;
	if (system("ip link show eth9 >/dev/null 2>&1") != 0 ||
	    system("sysctl -qw net.ipv4.fib_multipath_hash_seed=4321 >/dev/null 2>&1") != 0) {
		skip();
		return;
	}
	assert_int_equal(
	    system("sysctl -qw net.ipv4.conf.all.forwarding=1 net.ipv4.conf.all.rp_filter=0 "
		   "net.ipv4.conf.eth9.rp_filter=0 && "
		   "ip route add 198.18.78.0/24 nexthop via 10.1.0.7 dev dp0 "
		   "nexthop via 10.1.0.8 dev dp0 && "
		   "ip -6 route add 2001:db8:78::/64 nexthop via 2001:db8:1::7 dev dp0 "
		   "nexthop via 2001:db8:1::8 dev dp0"),
	    0);
	t = remirror(ports, 2);
	nh4 = nftdp_route_lookup4(t, a4("198.18.78.1"));
	nh6 = nftdp_route_lookup6(t, a6("2001:db8:78::1"), 0);
	assert_true(nh4 && nh4->n_oif == 2 && nh6 && nh6->n_oif == 2);
	for (unsigned int ci = 0; ci < sizeof(conf) / sizeof(conf[0]); ci++) {
		struct nftdp_route_mp_conf c = {
		    .seed = 4321, .policy = conf[ci].policy, .fields = conf[ci].fields};
		char cmd[256];

		snprintf(cmd, sizeof(cmd),
			 "sysctl -qw net.ipv4.fib_multipath_hash_policy=%u "
			 "net.ipv6.fib_multipath_hash_policy=%u "
			 "net.ipv4.fib_multipath_hash_fields=%u "
			 "net.ipv6.fib_multipath_hash_fields=%u",
			 c.policy, c.policy, c.fields ? c.fields : 7, c.fields ? c.fields : 7);
		assert_int_equal(system(cmd), 0);
		for (unsigned int i = 1; i <= 24; i++) {
			static const uint8_t protos[3] = {IPPROTO_UDP, IPPROTO_TCP, IPPROTO_ICMP};
			unsigned int pi = i % 3;
			uint16_t sp = (uint16_t)(1000 + i * 37), dp = (uint16_t)(80 + i * 11);
			char dst[64], src[64], gw[64], mine[64], pp[64];
			uint8_t pk[64];
			size_t n;

			if (protos[pi] == IPPROTO_ICMP)
				pp[0] = '\0';
			else
				snprintf(pp, sizeof(pp), " sport %u dport %u", sp, dp);
			for (unsigned int kind = 0; kind < 4; kind++) {
				struct nftdp_route_mp_keys f = {.v6 = kind >= 2};
				const struct nftdp_route_nh *nh = kind < 2 ? nh4 : nh6;
				uint32_t h;
				int path;

				if (kind < 2) {
					snprintf(dst, sizeof(dst), "198.18.78.%u", i * 7 % 250 + 1);
					snprintf(src, sizeof(src), kind ? "10.1.0.1" : "192.0.2.%u",
						 i + 10);
				} else {
					snprintf(dst, sizeof(dst), "2001:db8:78::%x", i * 977);
					snprintf(src, sizeof(src), "2001:db8:1::%x", i + 16);
				}
				/* rtm_getroute_parse_ip_proto: ICMP of the family */
				uint8_t proto = protos[pi] == IPPROTO_ICMP && kind >= 2
						    ? IPPROTO_ICMPV6
						    : protos[pi];

				snprintf(cmd, sizeof(cmd),
					 "ip %s route get %s from %s%s ipproto %u%s 2>/dev/null",
					 kind < 2 ? "-4" : "-6", dst, src,
					 kind == 0 || kind == 3 ? " iif eth9" : "", proto, pp);
				if (kind < 2) {
					/* inet_rtm_getroute_build_skb: a header and a
					 * zeroed transport header with the ports, which
					 * the output route is given too */
					n = put_ip4(pk, src, dst, protos[pi], 20);
					memset(pk + n, 0, 20);
					if (protos[pi] == IPPROTO_ICMP) {
						pk[n] = 8;
						n += 8;
					} else {
						put_ports(pk + n, sp, dp);
						n += protos[pi] == IPPROTO_TCP ? 20 : 8;
					}
					pk[3] = (uint8_t)n;
					h = nftdp_route_mp_hash_skb(&c, false, pk, n);
				} else {
					memcpy(f.saddr, a6(src), 16);
					memcpy(f.daddr, a6(dst), 16);
					f.ip_proto = proto;
					if (protos[pi] != IPPROTO_ICMP) {
						f.sport = nbo16(sp);
						f.dport = nbo16(dp);
					}
					h = nftdp_route_mp_hash_flow(&c, &f);
				}
				if (!kernel_gw(cmd, gw, sizeof(gw)))
					fail_msg("%s: no answer", cmd);
				path = nftdp_route_path_select_kernel(nh, h);
				assert_true(path == 0 || path == 1);
				used[path]++;
				inet_ntop(kind < 2 ? AF_INET : AF_INET6, nh->path_gw[path], mine,
					  sizeof(mine));
				if (strcmp(gw, mine) != 0) {
					print_message("policy %u fields %#x: %s: kernel via %s, "
						      "nftdp via %s\n",
						      c.policy, c.fields, cmd, gw, mine);
					differ++;
				}
			}
		}
	}
	nftdp_route_table_destroy(t);
	assert_int_equal(system("ip route del 198.18.78.0/24; ip -6 route del 2001:db8:78::/64; "
				"sysctl -qw net.ipv4.fib_multipath_hash_seed=0 "
				"net.ipv4.fib_multipath_hash_policy=0 "
				"net.ipv6.fib_multipath_hash_policy=0 "
				"net.ipv4.fib_multipath_hash_fields=7 "
				"net.ipv6.fib_multipath_hash_fields=7 "
				"net.ipv4.conf.all.forwarding=0"),
			 0);
	assert_int_equal(differ, 0);
	assert_true(used[0] > 50 && used[1] > 50);
}

/* ---------- the expression over a stub table ---------- */

struct stub_route {
	int family;
	uint8_t addr[16];
	uint8_t plen;
	uint8_t type;
	uint32_t oif;
	bool gateway;
	uint8_t gw[16];
	uint32_t mtu;
};

static const struct stub_route *stub;
static unsigned int n_stub;

static bool match(const uint8_t *a, const uint8_t *p, unsigned int plen)
{
	for (unsigned int i = 0; i < plen; i++)
		if (((a[i / 8] ^ p[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

static bool stub_lookup(int family, const uint8_t *a, uint32_t oif, struct nftdp_vm_fib_route *out)
{
	const struct stub_route *best = NULL;

	for (unsigned int i = 0; i < n_stub; i++) {
		const struct stub_route *s = &stub[i];

		if (s->family != family || !match(a, s->addr, s->plen))
			continue;
		if (oif && s->oif != oif)
			continue;
		if (!best || s->plen > best->plen)
			best = s;
	}
	if (!best)
		return false;
	memset(out, 0, sizeof(*out));
	out->type = best->type;
	out->plen = best->plen;
	out->gateway = best->gateway;
	memcpy(out->dst, best->addr, 16);
	memcpy(out->gw, best->gw, 16);
	out->mtu = best->mtu;
	if (best->oif)
		out->oif[out->n_oif++] = best->oif;
	return true;
}

static bool stub_route4(const void *fib, uint32_t daddr, struct nftdp_vm_fib_route *out)
{
	(void)fib;
	return stub_lookup(AF_INET, (const uint8_t *)&daddr, 0, out);
}

static bool stub_route6(const void *fib, const uint8_t daddr[16], uint32_t oif,
			struct nftdp_vm_fib_route *out)
{
	(void)fib;
	return stub_lookup(AF_INET6, daddr, oif, out);
}

static bool stub_addr6_on(const void *fib, const uint8_t addr[16], uint32_t ifindex)
{
	(void)fib;
	return ifindex == 1 && memcmp(addr, a6("2001:db8::1"), 16) == 0;
}

static const char *stub_ifname(const void *fib, uint32_t ifindex)
{
	(void)fib;
	return ifindex == 1 ? "dp0" : ifindex == 2 ? "dp1" : NULL;
}

static const struct nftdp_vm_fib_ops stub_ops = {stub_route4, stub_route6, stub_addr6_on,
						 stub_ifname};

#define R4(a, b, c, d, plen, type, oif)                                                            \
	{                                                                                          \
		AF_INET, {a, b, c, d}, plen, type, oif, false                                      \
	}
static struct stub_route routes[] = {
    R4(10, 0, 0, 0, 24, RTN_UNICAST, 1),
    R4(10, 0, 1, 0, 24, RTN_UNICAST, 2),
    R4(10, 0, 0, 1, 32, RTN_LOCAL, 1),
    R4(10, 0, 0, 255, 32, RTN_BROADCAST, 1),
    R4(10, 9, 0, 0, 16, RTN_BLACKHOLE, 0),
    R4(0, 0, 0, 0, 0, RTN_UNICAST, 2),
    {AF_INET6, {0x20, 0x01, 0x0d, 0xb8}, 64, RTN_UNICAST, 1, false},
    {AF_INET6, {0x20, 0x01, 0x0d, 0xb8, 0, 1}, 64, RTN_UNICAST, 2, false},
    {AF_INET6, {0x20, 0x01, 0x0d, 0xb8, [15] = 1}, 128, RTN_LOCAL, 1, false},
    {AF_INET6, {0x20, 0x01, 0x0d, 0xb8, 0, 9}, 48, RTN_UNREACHABLE, 0, false},
    {AF_INET6, {0xfe, 0x80}, 64, RTN_UNICAST, 1, false},
};

struct world {
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *c;
	struct nftdp_vm_ctx ctx;
	struct nftdp_vm_error err;
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 1, .max_counters = 64, .max_cells = 64, .log_ring_size = 8};

	assert_int_equal(nftdp_vm_state_create(&cfg, &w->st), 0);
	nftdp_vm_state_gen_begin(w->st);
	w->ctx.state = w->st;
	w->ctx.fib_ops = &stub_ops;
	stub = routes;
	n_stub = sizeof(routes) / sizeof(routes[0]);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	if (w->c)
		nftdp_vm_chain_destroy(w->c);
	nftdp_vm_state_destroy(w->st);
	free(w);
	return 0;
}

static struct nftnl_expr *fib(uint32_t flags, uint32_t result, uint32_t dreg)
{
	struct nftnl_expr *e = ex("fib");

	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, flags);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, result);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, dreg);
	return e;
}

/* compile one rule (a fib expression alone) in a fresh base chain */
static int compile(struct world *w, uint8_t family, uint8_t hook, struct nftnl_expr *e)
{
	struct nftdp_vm_chain_desc d = {.family = family,
					.table = "t",
					.name = "c",
					.base = true,
					.hook = hook,
					.policy = NF_ACCEPT};
	struct nftnl_rule *r = nftnl_rule_alloc();
	int rc;

	if (w->c)
		nftdp_vm_chain_destroy(w->c);
	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &w->c), 0);
	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 1);
	nftnl_rule_add_expr(r, e);
	rc = nftdp_vm_chain_add_rule(w->c, r, NULL, w->st, &w->err);
	nftnl_rule_free(r);
	return rc;
}

struct tpkt {
	uint8_t buf[80];
	struct nftdp_vm_pkt pkt;
};

static struct nftdp_vm_pkt *ip4(struct tpkt *t, const char *src, const char *dst, uint32_t iif)
{
	uint8_t h[20] = {0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17};
	uint32_t s = a4(src), d = a4(dst);

	memset(t, 0, sizeof(*t));
	memcpy(h + 12, &s, 4);
	memcpy(h + 16, &d, 4);
	memcpy(t->buf, h, sizeof(h));
	nftdp_vm_pkt_init(&t->pkt, t->buf, sizeof(h), -1, 0);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	t->pkt.hook = NF_INET_PRE_ROUTING;
	t->pkt.iif = iif;
	t->pkt.iifname = iif == 1 ? "dp0" : "dp1";
	return &t->pkt;
}

static struct nftdp_vm_pkt *ip6(struct tpkt *t, const char *src, const char *dst, uint8_t nexthdr,
				uint32_t iif)
{
	memset(t, 0, sizeof(*t));
	t->buf[0] = 0x60;
	t->buf[6] = nexthdr;
	t->buf[7] = 64;
	memcpy(t->buf + 8, a6(src), 16);
	memcpy(t->buf + 24, a6(dst), 16);
	nftdp_vm_pkt_init(&t->pkt, t->buf, 40 + 8, -1, 0);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	t->pkt.hook = NF_INET_PRE_ROUTING;
	t->pkt.iif = iif;
	t->pkt.iifname = iif == 1 ? "dp0" : "dp1";
	return &t->pkt;
}

/* run the chain; the verdict, and register 1 in *reg (poisoned first) */
static unsigned int run(struct world *w, struct nftdp_vm_pkt *pkt, struct nftdp_vm_regs *regs)
{
	return nftdp_vm_run_chain_regs(w->c, pkt, &w->ctx, regs);
}

static uint32_t reg4(struct world *w, uint8_t family, uint32_t flags, uint32_t result,
		     struct nftdp_vm_pkt *pkt)
{
	struct nftdp_vm_regs regs;

	assert_int_equal(compile(w, family, NF_INET_PRE_ROUTING, fib(flags, result, NFT_REG_1)), 0);
	assert_int_equal(run(w, pkt, &regs), NF_ACCEPT);
	return regs.data[0];
}

#define F_SADDR NFTA_FIB_F_SADDR
#define F_DADDR NFTA_FIB_F_DADDR
#define F_IIF NFTA_FIB_F_IIF
#define F_PRESENT NFTA_FIB_F_PRESENT

static void test_fib4_oif(void **state)
{
	struct world *w = *state;
	struct tpkt t;

	/* the chain says it needs a route table (nftdp_vm_gen_uses_fib) */
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_SADDR | F_IIF, NFT_FIB_RESULT_OIF, NFT_REG_1)),
			 0);
	assert_true(nftdp_vm_chain_uses_fib(w->c));
	/* rpfilter: fib saddr . iif oif: the route back goes out of iif */
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip4(&t, "10.0.0.5", "10.0.1.9", 1)),
			 1);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip4(&t, "10.0.1.5", "10.0.0.9", 1)),
			 0);
	/* exists / missing */
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR | F_IIF | F_PRESENT, NFT_FIB_RESULT_OIF,
			      ip4(&t, "10.0.1.5", "10.0.0.9", 2)),
			 1);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR | F_IIF | F_PRESENT | NFTA_FIB_F_MARK,
			      NFT_FIB_RESULT_OIF, ip4(&t, "10.0.1.5", "10.0.0.9", 1)),
			 0);
	/* a blackhole route fails the lookup */
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR | F_PRESENT, NFT_FIB_RESULT_OIF,
			      ip4(&t, "10.9.0.5", "10.0.0.9", 1)),
			 0);
	/* no device: the route's; a local destination has none */
	assert_int_equal(
	    reg4(w, NFPROTO_IPV4, F_DADDR, NFT_FIB_RESULT_OIF, ip4(&t, "10.0.0.5", "8.8.8.8", 1)),
	    2);
	assert_int_equal(
	    reg4(w, NFPROTO_IPV4, F_DADDR, NFT_FIB_RESULT_OIF, ip4(&t, "10.0.0.5", "10.0.0.1", 1)),
	    0);
	/* the broadcast route has a device */
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_DADDR, NFT_FIB_RESULT_OIF,
			      ip4(&t, "10.0.0.5", "10.0.0.255", 2)),
			 1);
	/* from 0.0.0.0 to broadcast or 224.0.0.x: the receiving device */
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip4(&t, "0.0.0.0", "255.255.255.255", 2)),
			 2);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip4(&t, "0.0.0.0", "224.0.0.22", 1)),
			 1);
	/* inet runs the packet's family */
	assert_int_equal(
	    reg4(w, NFPROTO_INET, F_DADDR, NFT_FIB_RESULT_OIF, ip4(&t, "10.0.0.5", "10.0.1.7", 1)),
	    2);
	/* no table: no route */
	w->ctx.fib_ops = NULL;
	assert_int_equal(
	    reg4(w, NFPROTO_IPV4, F_DADDR, NFT_FIB_RESULT_OIF, ip4(&t, "10.0.0.5", "10.0.1.7", 1)),
	    0);
	w->ctx.fib_ops = &stub_ops;
}

static void test_fib4_oifname(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_regs regs;
	struct tpkt t;

	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_DADDR, NFT_FIB_RESULT_OIFNAME, NFT_REG_1)),
			 0);
	assert_int_equal(run(w, ip4(&t, "10.0.0.5", "10.0.1.7", 1), &regs), NF_ACCEPT);
	assert_memory_equal(regs.bytes, "dp1\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	/* no route: only the first word is zeroed, as the kernel's *dest = 0 */
	memset(&regs, 0, sizeof(regs));
	assert_int_equal(run(w, ip4(&t, "10.0.0.5", "10.0.0.1", 1), &regs), NF_ACCEPT);
	assert_int_equal(regs.data[0], 0);
	/* registers: 16 bytes for a name, 4 for a bool or an ifindex */
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_DADDR, NFT_FIB_RESULT_OIFNAME, NFT_REG32_15)),
			 -ERANGE);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_DADDR | F_PRESENT, NFT_FIB_RESULT_OIF, NFT_REG32_15)),
			 0);
}

static void test_fib4_type(void **state)
{
	struct world *w = *state;
	struct tpkt t;
	const uint32_t f = NFT_FIB_RESULT_ADDRTYPE;

	assert_int_equal(reg4(w, NFPROTO_IPV4, F_DADDR, f, ip4(&t, "10.0.0.5", "10.0.0.1", 1)),
			 RTN_LOCAL);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_DADDR, f, ip4(&t, "10.0.0.5", "10.0.1.1", 1)),
			 RTN_UNICAST);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_DADDR, f, ip4(&t, "10.0.0.5", "10.0.0.255", 1)),
			 RTN_BROADCAST);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_DADDR, f, ip4(&t, "10.0.0.5", "224.0.0.1", 1)),
			 RTN_MULTICAST);
	assert_int_equal(
	    reg4(w, NFPROTO_IPV4, F_DADDR, f, ip4(&t, "10.0.0.5", "255.255.255.255", 1)),
	    RTN_BROADCAST);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR, f, ip4(&t, "0.1.2.3", "10.0.0.1", 1)),
			 RTN_BROADCAST);
	/* a blackhole lookup fails: unicast */
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_DADDR, f, ip4(&t, "10.0.0.5", "10.9.9.9", 1)),
			 RTN_UNICAST);
	/* with iif: the address must be the receiving device's */
	assert_int_equal(
	    reg4(w, NFPROTO_IPV4, F_DADDR | F_IIF, f, ip4(&t, "10.0.0.5", "10.0.0.1", 1)),
	    RTN_LOCAL);
	assert_int_equal(
	    reg4(w, NFPROTO_IPV4, F_DADDR | F_IIF, f, ip4(&t, "10.0.0.5", "10.0.0.1", 2)),
	    RTN_UNICAST);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_SADDR, f, ip4(&t, "10.0.0.1", "10.0.0.5", 2)),
			 RTN_LOCAL);
}

static void test_fib6(void **state)
{
	struct world *w = *state;
	struct tpkt t;
	const uint32_t f = NFT_FIB_RESULT_ADDRTYPE;

	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, f,
			      ip6(&t, "2001:db8::5", "2001:db8::1", IPPROTO_UDP, 1)),
			 RTN_LOCAL);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR | F_IIF, f,
			      ip6(&t, "2001:db8::5", "2001:db8::1", IPPROTO_UDP, 1)),
			 RTN_LOCAL);
	/* with a device the local route does not count, its address does */
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR | F_IIF, f,
			      ip6(&t, "2001:db8::5", "2001:db8::1", IPPROTO_UDP, 2)),
			 RTN_UNICAST);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, f,
			      ip6(&t, "2001:db8::5", "2001:db8:1::7", IPPROTO_UDP, 1)),
			 RTN_UNICAST);
	/* the subnet-router anycast address of an on-link prefix */
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, f,
			      ip6(&t, "2001:db8::5", "2001:db8:1::", IPPROTO_UDP, 1)),
			 RTN_ANYCAST);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, f,
			      ip6(&t, "2001:db8::5", "2001:db8:9::1", IPPROTO_UDP, 1)),
			 RTN_UNREACHABLE);
	assert_int_equal(
	    reg4(w, NFPROTO_IPV6, F_DADDR, f, ip6(&t, "2001:db8::5", "3000::1", IPPROTO_UDP, 1)),
	    RTN_UNREACHABLE);
	/* rpfilter */
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8::9", IPPROTO_UDP, 2)),
			 2);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR | F_IIF | F_PRESENT, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8::9", IPPROTO_UDP, 1)),
			 0);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8::1", IPPROTO_UDP, 1)),
			 0);
	/* link-local: looked up on the receiving device */
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip6(&t, "fe80::5", "fe80::1", IPPROTO_UDP, 1)),
			 1);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR, NFT_FIB_RESULT_OIF,
			      ip6(&t, "fe80::5", "fe80::1", IPPROTO_UDP, 2)),
			 0);
	/* DAD from :: to a solicited-node group: the receiving device */
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip6(&t, "::", "ff02::1:ff00:1", IPPROTO_ICMPV6, 2)),
			 2);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip6(&t, "::", "ff02::1:ff00:1", IPPROTO_UDP, 2)),
			 0);
}

static void test_fib_break(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_regs regs;
	struct tpkt t;
	struct nftdp_vm_pkt *p;
	struct nftnl_rule *r = nftnl_rule_alloc();

	/* fib then drop: a short header breaks the rule */
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_DADDR, NFT_FIB_RESULT_OIF, NFT_REG_1)),
			 0);
	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 2);
	nftnl_rule_add_expr(r, fib(F_DADDR, NFT_FIB_RESULT_ADDRTYPE, NFT_REG_1));
	nftnl_rule_add_expr(r, verdict(NF_DROP, NULL));
	assert_int_equal(nftdp_vm_chain_add_rule(w->c, r, NULL, w->st, &w->err), 0);
	nftnl_rule_free(r);
	p = ip4(&t, "10.0.0.5", "10.0.0.1", 1);
	assert_int_equal(run(w, p, &regs), NF_DROP);
	p->len = 19;
	assert_int_equal(run(w, p, &regs), NF_ACCEPT);
}

/* rt nexthop and rt mtu over the stub table (nft_rt_get_eval) */
static const struct stub_route rt_routes[] = {
    {AF_INET, {10, 0, 0, 0}, 24, RTN_UNICAST, 1, false, {0}, 1500},
    {AF_INET, {192, 168, 0, 0}, 16, RTN_UNICAST, 1, false, {0}, 9000},
    {AF_INET, {172, 16, 0, 0}, 16, RTN_UNICAST, 2, false, {0}, 40},
    {AF_INET, {0}, 0, RTN_UNICAST, 2, true, {10, 0, 1, 254}, 1400},
    {AF_INET6, {0x20, 0x01, 0x0d, 0xb8}, 64, RTN_UNICAST, 1, false, {0}, 1500},
    {AF_INET6, {0}, 0, RTN_UNICAST, 2, true, {0xfe, 0x80, [15] = 1}, 0},
};

static struct nftnl_expr *rt(uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = ex("rt");

	nftnl_expr_set_u32(e, NFTNL_EXPR_RT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_RT_DREG, dreg);
	return e;
}

/* rt KEY, then drop, in a forward chain: whether the rule got to the drop
 * (rt did not break), and the register in out */
static bool rt_run(struct world *w, uint8_t family, uint32_t key, struct nftdp_vm_pkt *pkt,
		   uint8_t out[16])
{
	struct nftdp_vm_regs regs;
	struct nftnl_rule *r = nftnl_rule_alloc();
	unsigned int v;

	assert_int_equal(compile(w, family, NF_INET_FORWARD, rt(key, NFT_REG32_00)), 0);
	assert_true(nftdp_vm_chain_uses_fib(w->c)); /* the generation builds routes */
	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 2);
	nftnl_rule_add_expr(r, rt(key, NFT_REG32_00));
	nftnl_rule_add_expr(r, verdict(NF_DROP, NULL));
	assert_int_equal(nftdp_vm_chain_add_rule(w->c, r, NULL, w->st, &w->err), 0);
	nftnl_rule_free(r);
	v = run(w, pkt, &regs);
	memcpy(out, regs.data, 16);
	return v == NF_DROP;
}

static uint16_t mss_of(const uint8_t *reg)
{
	uint16_t m;

	memcpy(&m, reg, 2);
	return m;
}

static void test_rt_route(void **state)
{
	struct world *w = *state;
	struct tpkt t;
	uint8_t reg[16];
	struct nftdp_vm_pkt *p;

	stub = rt_routes;
	n_stub = sizeof(rt_routes) / sizeof(rt_routes[0]);
	/* rt_nexthop: the gateway of the route to daddr, else daddr */
	p = ip4(&t, "10.0.0.5", "8.8.8.8", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_NEXTHOP4, p, reg));
	assert_int_equal(rd_be32(reg), a4h("10.0.1.254"));
	p = ip4(&t, "8.8.8.8", "10.0.0.9", 2);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_NEXTHOP4, p, reg));
	assert_int_equal(rd_be32(reg), a4h("10.0.0.9"));
	/* get_tcpmss: the lower mtu of the routes to daddr and back to saddr */
	p = ip4(&t, "10.0.0.5", "8.8.8.8", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 1400 - 40);
	p = ip4(&t, "192.168.1.1", "10.0.0.9", 2);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 1500 - 40);
	/* an mtu no larger than the headers: TCP_MSS_DEFAULT */
	p = ip4(&t, "10.0.0.5", "172.16.0.1", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 536);
	/* IPv6: the gateway; no mtu metric and no device mtu: IPV6_MIN_MTU */
	p = ip6(&t, "2001:db8::5", "2001:db9::1", IPPROTO_TCP, 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV6, NFT_RT_NEXTHOP6, p, reg));
	assert_memory_equal(reg, a6("fe80::1"), 16);
	assert_true(rt_run(w, NFPROTO_IPV6, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 1280 - 60);
	p = ip6(&t, "2001:db9::1", "2001:db8::9", IPPROTO_TCP, 2);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV6, NFT_RT_NEXTHOP6, p, reg));
	assert_memory_equal(reg, a6("2001:db8::9"), 16);
	/* the other family's next hop, no route yet (prerouting), no table,
	 * no route to daddr: no dst, the rule breaks */
	assert_false(rt_run(w, NFPROTO_INET, NFT_RT_NEXTHOP4, p, reg));
	p->hook = NF_INET_PRE_ROUTING;
	assert_false(rt_run(w, NFPROTO_IPV6, NFT_RT_NEXTHOP6, p, reg));
	p->hook = NF_INET_FORWARD;
	w->ctx.fib_ops = NULL;
	assert_false(rt_run(w, NFPROTO_IPV6, NFT_RT_NEXTHOP6, p, reg));
	w->ctx.fib_ops = &stub_ops;
	n_stub = 3; /* IPv4 without a default route */
	p = ip4(&t, "10.0.0.5", "8.8.8.8", 1);
	p->hook = NF_INET_FORWARD;
	assert_false(rt_run(w, NFPROTO_IPV4, NFT_RT_TCPMSS, p, reg));
}

/* multipath over a stub: every route has two paths, dp0 (gateway .1) and
 * dp1 (gateway .2); mp_select picks the path by the low bit of the
 * packet's last destination byte, and counts its calls */
static unsigned int n_mp_select, n_mp_select_out;

static bool mp_lookup(bool v4, struct nftdp_vm_fib_route *out)
{
	memset(out, 0, sizeof(*out));
	out->type = RTN_UNICAST;
	out->mtu = 1500; /* the first path's device */
	out->gateway = true;
	out->n_oif = 2;
	out->oif[0] = 1;
	out->oif[1] = 2;
	memcpy(out->gw, v4 ? (const uint8_t *)"\x0a\x00\x00\x01" : a6("2001:db8::1"), v4 ? 4 : 16);
	out->rt = out; /* anything not NULL */
	return true;
}

static bool mp_route4(const void *fib, uint32_t daddr, struct nftdp_vm_fib_route *out)
{
	(void)fib;
	(void)daddr;
	return mp_lookup(true, out);
}

static bool mp_route6(const void *fib, const uint8_t daddr[16], uint32_t oif,
		      struct nftdp_vm_fib_route *out)
{
	(void)fib;
	(void)daddr;
	(void)oif;
	return mp_lookup(false, out);
}

static void mp_select(const void *fib, const struct nftdp_vm_pkt *pkt, bool v4,
		      struct nftdp_vm_fib_route *r)
{
	const uint8_t *ip = pkt->data + pkt->nh_off;

	(void)fib;
	n_mp_select++;
	assert_int_equal(v4, pkt->nfproto == NFPROTO_IPV4);
	assert_non_null(r->rt);
	r->sel = (v4 ? ip[19] : ip[39]) & 1;
	if (r->sel) {
		memcpy(r->gw, v4 ? (const uint8_t *)"\x0a\x00\x00\x02" : a6("2001:db8::2"),
		       v4 ? 4 : 16);
		r->mtu = 1400; /* the second path's device */
	}
}

/* an output route to daddr: the second path (device mtu 1300) for an odd
 * last byte */
static void mp_select_out(const void *fib, const uint8_t *daddr, bool v4,
			  struct nftdp_vm_fib_route *r)
{
	(void)fib;
	n_mp_select_out++;
	assert_non_null(r->rt);
	r->sel = daddr[v4 ? 3 : 15] & 1;
	if (r->sel)
		r->mtu = 1300;
}

static const struct nftdp_vm_fib_ops mp_ops = {
    .route4 = mp_route4,
    .route6 = mp_route6,
    .addr6_on = stub_addr6_on,
    .ifname = stub_ifname,
    .mp_select = mp_select,
    .mp_select_out = mp_select_out,
};

static void test_fib_multipath(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_pkt *p;
	uint8_t reg[16];
	struct tpkt t;

	w->ctx.fib_ops = &mp_ops;
	n_mp_select = 0;
	/* IPv6 (fib6_select_path): the path the packet's hash picks, for
	 * the device and for `. iif` / `. oif` */
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8:2::1", IPPROTO_UDP, 1)),
			 2);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8:2::2", IPPROTO_UDP, 1)),
			 1);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8:2::1", IPPROTO_UDP, 2)),
			 2);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8:2::1", IPPROTO_UDP, 1)),
			 0);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8:2::2", IPPROTO_UDP, 1)),
			 1);
	assert_int_equal(n_mp_select, 5);
	/* a link-local address looked up on a device: the matched route's */
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_SADDR, NFT_FIB_RESULT_OIF,
			      ip6(&t, "fe80::5", "2001:db8:2::1", IPPROTO_UDP, 1)),
			 1);
	assert_int_equal(n_mp_select, 5);
	/* IPv4 (fib_lookup, FIB_RES_DEV): the first live path, no hash; any
	 * path for `. iif` (fib_info_nh_uses_dev) */
	assert_int_equal(
	    reg4(w, NFPROTO_IPV4, F_DADDR, NFT_FIB_RESULT_OIF, ip4(&t, "10.0.0.5", "10.0.1.7", 1)),
	    1);
	assert_int_equal(reg4(w, NFPROTO_IPV4, F_DADDR | F_IIF, NFT_FIB_RESULT_OIF,
			      ip4(&t, "10.0.0.5", "10.0.1.8", 2)),
			 2);
	assert_int_equal(n_mp_select, 5);
	/* rt nexthop: the gateway of the path the forwarding hash picks */
	p = ip4(&t, "10.0.0.5", "8.8.8.9", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_NEXTHOP4, p, reg));
	assert_int_equal(rd_be32(reg), a4h("10.0.0.2"));
	p = ip4(&t, "10.0.0.5", "8.8.8.8", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_NEXTHOP4, p, reg));
	assert_int_equal(rd_be32(reg), a4h("10.0.0.1"));
	p = ip6(&t, "2001:db8:1::5", "2001:db8:2::3", IPPROTO_UDP, 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV6, NFT_RT_NEXTHOP6, p, reg));
	assert_memory_equal(reg, a6("2001:db8::2"), 16);
	/* rt mtu (get_tcpmss): the hashed path's device mtu for the packet's
	 * dst, the output route's path for the route back to saddr */
	n_mp_select = n_mp_select_out = 0;
	p = ip4(&t, "10.0.0.4", "8.8.8.9", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 1400 - 40);
	p = ip4(&t, "10.0.0.5", "8.8.8.8", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 1300 - 40);
	p = ip4(&t, "10.0.0.4", "8.8.8.8", 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV4, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 1500 - 40);
	p = ip6(&t, "2001:db8:1::4", "2001:db8:2::3", IPPROTO_TCP, 1);
	p->hook = NF_INET_FORWARD;
	assert_true(rt_run(w, NFPROTO_IPV6, NFT_RT_TCPMSS, p, reg));
	assert_int_equal(mss_of(reg), 1400 - 60);
	/* each run selected both paths (rt_run may run a rule more than once) */
	assert_true(n_mp_select >= 4 && n_mp_select_out == n_mp_select);
	/* without mp_select: the first path */
	n_mp_select = 0;
	w->ctx.fib_ops = &(const struct nftdp_vm_fib_ops){.route4 = mp_route4,
							  .route6 = mp_route6,
							  .addr6_on = stub_addr6_on,
							  .ifname = stub_ifname};
	assert_true(rt_run(w, NFPROTO_IPV6, NFT_RT_NEXTHOP6, p, reg));
	assert_memory_equal(reg, a6("2001:db8::1"), 16);
	assert_int_equal(reg4(w, NFPROTO_IPV6, F_DADDR, NFT_FIB_RESULT_OIF,
			      ip6(&t, "2001:db8:1::5", "2001:db8:2::1", IPPROTO_UDP, 1)),
			 1);
	assert_int_equal(n_mp_select, 0);
	w->ctx.fib_ops = &stub_ops;
}

static void test_fib_errors(void **state)
{
	struct world *w = *state;
	struct nftnl_expr *e;

	assert_int_equal(
	    compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING, fib(0, NFT_FIB_RESULT_OIF, NFT_REG_1)),
	    -EINVAL);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_SADDR | F_DADDR, NFT_FIB_RESULT_OIF, NFT_REG_1)),
			 -EINVAL);
	assert_int_equal(
	    compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
		    fib(F_SADDR | F_IIF | NFTA_FIB_F_OIF, NFT_FIB_RESULT_ADDRTYPE, NFT_REG_1)),
	    -EINVAL);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_IIF, NFT_FIB_RESULT_ADDRTYPE, NFT_REG_1)),
			 -EINVAL);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_DADDR | NFTA_FIB_F_OIF, NFT_FIB_RESULT_OIFNAME, NFT_REG_1)),
			 -EINVAL);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_DADDR | NFTA_FIB_F_OIF, NFT_FIB_RESULT_ADDRTYPE, NFT_REG_1)),
			 0);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING,
				 fib(F_DADDR | 0x40, NFT_FIB_RESULT_OIF, NFT_REG_1)),
			 -EINVAL);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING, fib(F_DADDR, 4, NFT_REG_1)),
			 -EOPNOTSUPP);
	/* inet and netdev have no select_ops: nft_fib_init says EINVAL */
	assert_int_equal(compile(w, NFPROTO_INET, NF_INET_PRE_ROUTING, fib(F_DADDR, 4, NFT_REG_1)),
			 -EINVAL);
	assert_int_equal(compile(w, NFPROTO_NETDEV, NF_NETDEV_INGRESS, fib(F_DADDR, 4, NFT_REG_1)),
			 -EINVAL);
	assert_int_equal(compile(w, NFPROTO_BRIDGE, NF_INET_PRE_ROUTING,
				 fib(F_DADDR, NFT_FIB_RESULT_OIF, NFT_REG_1)),
			 -ENOENT);
	e = ex("fib");
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, F_DADDR);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_OIF);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING, e), -EINVAL);
	e = ex("fib");
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, F_DADDR);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	assert_int_equal(compile(w, NFPROTO_IPV4, NF_INET_PRE_ROUTING, e), -EINVAL);
}

/* the EAL's runtime folder and what it left there (its files) */
static void rm_runtime_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < (int)sizeof(path))
			unlink(path);
	closedir(d);
	if (rmdir(dir) < 0)
		fprintf(stderr, "rmdir %s: %s\n", dir, strerror(errno));
}

int main(int argc, char **argv)
{
	char prefix[64];
	char *eal[] = {argv[0],		"--no-huge",	 "-m",	 "1024", "--no-pci", "--no-shconf",
		       "--log-level=3", "--file-prefix", prefix, NULL};
	const struct CMUnitTest route_tests[] = {
	    cmocka_unit_test(test_route_rules4),
	    cmocka_unit_test(test_route_rules6),
	    cmocka_unit_test(test_route_lpm4),
	    cmocka_unit_test(test_route_lpm6),
	    cmocka_unit_test(test_route_lookup_dst),
	    cmocka_unit_test(test_route_reset),
	    cmocka_unit_test(test_route_big),
	    cmocka_unit_test(test_route_mirror), /* leaves the netns */
	    cmocka_unit_test(test_route_live),	 /* in test_route_mirror's netns */
	    cmocka_unit_test(test_route_delta),
	    cmocka_unit_test(test_route_neigh_live),
	    cmocka_unit_test(test_route_neigh_resolve),
	    cmocka_unit_test(test_neigh_table),
	    cmocka_unit_test(test_path_select),
	    cmocka_unit_test(test_mp_hash_kernel),
	    cmocka_unit_test(test_mp_hash_policies),
	    cmocka_unit_test(test_mp_hash_policy_kernel),
	};
	const struct CMUnitTest expr_tests[] = {
	    cmocka_unit_test_setup_teardown(test_fib4_oif, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fib4_oifname, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fib4_type, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fib6, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fib_break, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rt_route, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fib_multipath, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fib_errors, setup, teardown),
	};
	int rc;

	(void)argc;
	rc = cmocka_run_group_tests_name("fib-expr", expr_tests, NULL, NULL);
	/* a runtime folder of its own, removed after: EAL makes one even with
	 * --no-shconf (left empty), and rte_eal_cleanup leaves it */
	snprintf(prefix, sizeof(prefix), "nftdp-test-fib-%d", (int)getpid());
	if (rte_eal_init(9, eal) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	rc |= cmocka_run_group_tests_name("route", route_tests, NULL, NULL);
	rte_eal_cleanup();
	rm_runtime_dir(rte_eal_get_runtime_dir());
	return rc;
}
