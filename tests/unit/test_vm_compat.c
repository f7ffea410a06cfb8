// SPDX-License-Identifier: BSD-3-Clause
/*
 * The match and target expressions (vm/expr_compat*.c): the generic
 * xt_check_match/target checks (info size, table, hooks, protocol) and the
 * extensions' own checks with the kernel's errnos, what each extension
 * does to a packet, refusals that name the extension, and the revision
 * answers of nftdp_vm_compat_revision.
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

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/if_packet.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_CHECKSUM.h>
#include <linux/netfilter/xt_CLASSIFY.h>
#include <linux/netfilter/xt_CT.h>
#include <linux/netfilter/xt_DSCP.h>
#include <linux/netfilter/xt_LOG.h>
#include <linux/netfilter/xt_MARK.h>
#include <linux/netfilter/xt_NFLOG.h>
#include <linux/netfilter/xt_TCPMSS.h>
#include <linux/netfilter/xt_comment.h>
#include <linux/netfilter/xt_connlimit.h>
#include <linux/netfilter/xt_connmark.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_dscp.h>
#include <linux/netfilter/xt_ecn.h>
#include <linux/netfilter/xt_hashlimit.h>
#include <linux/netfilter/xt_helper.h>
#include <linux/netfilter/xt_iprange.h>
#include <linux/netfilter/xt_length.h>
#include <linux/netfilter/xt_limit.h>
#include <linux/netfilter/xt_mark.h>
#include <linux/netfilter/xt_multiport.h>
#include <linux/netfilter/xt_owner.h>
#include <linux/netfilter/xt_physdev.h>
#include <linux/netfilter/xt_policy.h>
#include <linux/netfilter/xt_quota.h>
#include <linux/netfilter/xt_recent.h>
#include <linux/netfilter/xt_rpfilter.h>
#include <linux/netfilter/xt_set.h>
#include <linux/netfilter/xt_socket.h>
#include <linux/netfilter/xt_state.h>
#include <linux/netfilter/xt_statistic.h>
#include <linux/netfilter/xt_string.h>
#include <linux/netfilter/xt_tcpudp.h>
#include <linux/netfilter/xt_time.h>
#include <linux/netfilter/xt_u32.h>
#include <linux/netfilter_arp.h>
#include <linux/netfilter_arp/arpt_mangle.h>
#include <linux/netfilter_bridge.h>
#include <linux/netfilter_bridge/ebt_arp.h>
#include <linux/netfilter_bridge/ebt_arpreply.h>
#include <linux/netfilter_bridge/ebt_ip.h>
#include <linux/netfilter_bridge/ebt_ip6.h>
#include <linux/netfilter_bridge/ebt_log.h>
#include <linux/netfilter_bridge/ebt_mark_m.h>
#include <linux/netfilter_bridge/ebt_mark_t.h>
#include <linux/netfilter_bridge/ebt_nat.h>
#include <linux/netfilter_bridge/ebt_nflog.h>
#include <linux/netfilter_bridge/ebt_pkttype.h>
#include <linux/netfilter_bridge/ebt_redirect.h>
#include <linux/netfilter_bridge/ebt_stp.h>
#include <linux/netfilter_bridge/ebt_vlan.h>
#include <linux/netfilter_bridge/ebtables.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv4/ipt_REJECT.h>
#include <linux/netfilter_ipv4/ipt_TTL.h> /* ipt_ttl.h has the same guard */
#include <linux/netfilter_ipv6/ip6t_frag.h>
#include <linux/netfilter_ipv6/ip6t_ipv6header.h>
#include <linux/netfilter_ipv6/ip6t_opts.h>
#include <linux/netfilter_ipv6/ip6t_rt.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <linux/netfilter/nf_nat.h> /* after netinet/in.h */

#include "nft_build.h"
#include "nftdp_common.h"
#include "nftdp_vm.h"

struct world {
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *chains[16];
	int n;
	struct nftdp_vm_resolver res;
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
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	for (int i = 0; i < w->n; i++)
		nftdp_vm_chain_destroy(w->chains[i]);
	nftdp_vm_state_destroy(w->st);
	free(w);
	return 0;
}

static struct nftdp_vm_chain *chain_fam(struct world *w, uint8_t family, const char *table,
					uint8_t hook)
{
	struct nftdp_vm_chain_desc d = {
	    .family = family,
	    .table = table,
	    .name = "c",
	    .base = true,
	    .hook = hook,
	    .policy = NF_ACCEPT,
	    .chain_id = (uint32_t)w->n,
	};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c), 0);
	w->chains[w->n++] = c;
	return c;
}

static struct nftdp_vm_chain *chain(struct world *w, const char *table, uint8_t hook)
{
	return chain_fam(w, NFPROTO_IPV4, table, hook);
}

static struct nftnl_expr *xt(const char *kind, const char *name, uint32_t rev, const void *info,
			     uint32_t len)
{
	bool tg = strcmp(kind, "target") == 0;
	struct nftnl_expr *e = ex(kind);

	nftnl_expr_set_str(e, tg ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME, name);
	nftnl_expr_set_u32(e, tg ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV, rev);
	void *copy = malloc(len);

	/* libnftnl keeps (and frees) the info buffer it is given */
	memcpy(copy, info, len);
	nftnl_expr_set(e, tg ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO, copy, len);
	return e;
}

/* info of size bytes, padded with zeroes to XT_ALIGN as iptables sends it */
static struct nftnl_expr *xt_pad(const char *kind, const char *name, uint32_t rev, const void *info,
				 uint32_t size)
{
	uint8_t buf[2048] = {0};

	assert_true(XT_ALIGN(size) <= sizeof(buf));
	memcpy(buf, info, size);
	return xt(kind, name, rev, buf, XT_ALIGN(size));
}

#define MT(name, rev, info) xt_pad("match", name, rev, &(info), sizeof(info))
#define TG(name, rev, info) xt_pad("target", name, rev, &(info), sizeof(info))

/* a rule of e (and verdict v when v >= 0) with -p proto (0: none) */
static int add(struct world *w, struct nftdp_vm_chain *c, int proto, bool inv, struct nftnl_expr *e,
	       int v)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	int rc;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 1);
	if (proto >= 0) {
		nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_PROTO, (uint32_t)proto);
		nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_FLAGS, inv ? NFT_RULE_COMPAT_F_INV : 0);
	}
	nftnl_rule_add_expr(r, e);
	if (v >= 0)
		nftnl_rule_add_expr(r, verdict(v, NULL));
	memset(&w->err, 0, sizeof(w->err));
	rc = nftdp_vm_chain_add_rule(c, r, &w->res, w->st, &w->err);
	nftnl_rule_free(r);
	return rc;
}

struct tpkt {
	uint8_t buf[128];
	struct nftdp_vm_pkt pkt;
};

/* IPv4 TCP 10.0.0.1:1234 -> 10.0.0.2:dport, 40 bytes, behind ethernet */
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
	return &t->pkt;
}

#define RUN(w, c, p) nftdp_vm_run_chain((c), (p), &(w)->ctx)

static void test_revisions(void **state)
{
	(void)state;
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "conntrack", 3, false), 3);
	/* the kernel has conntrack 1..3: rev 1 is known, the best is 3 */
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "conntrack", 1, false), 3);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "conntrack", 7, false),
			 -EPROTONOSUPPORT);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "nosuch", 0, false), -ENOENT);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "tcp", 0, false), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "REJECT", 0, true), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV6, "icmp", 0, false), -ENOENT);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV6, "icmp6", 0, false), 0);
	/* a match name is not a target */
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "comment", 0, true), -ENOENT);
}

static void test_generic_checks(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);
	struct xt_comment_info ci = {"hello"};
	struct xt_multiport_v1 mp = {.flags = XT_MULTIPORT_DESTINATION, .count = 1, .ports = {80}};
	struct ipt_icmp ic = {.type = 8, .code = {0, 0xff}};
	struct ipt_reject_info rj = {.with = IPT_TCP_RESET};
	uint8_t big[300] = {0};

	assert_int_equal(add(w, c, -1, false, MT("comment", 0, ci), NF_ACCEPT), 0);
	/* info of the wrong size: EINVAL (too short fails at select) */
	assert_int_equal(add(w, c, -1, false, xt("match", "comment", 0, big, 300), -1), -EINVAL);
	assert_int_equal(add(w, c, -1, false, xt("match", "comment", 0, big, 8), -1), -EINVAL);
	/* multiport needs -p tcp/udp..., not inverted */
	assert_int_equal(add(w, c, -1, false, MT("multiport", 1, mp), -1), -EINVAL);
	assert_int_equal(add(w, c, IPPROTO_TCP, true, MT("multiport", 1, mp), -1), -EINVAL);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("multiport", 1, mp), NF_DROP), 0);
	/* icmp: protocol icmp only */
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("icmp", 0, ic), -1), -EINVAL);
	ic.invflags = 0x80;
	assert_int_equal(add(w, c, IPPROTO_ICMP, false, MT("icmp", 0, ic), -1), -EINVAL);
	/* REJECT tcp-reset needs -p tcp; filter table only; its hooks only */
	assert_int_equal(add(w, c, -1, false, TG("REJECT", 0, rj), -1), -EINVAL);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, TG("REJECT", 0, rj), -1), 0);
	assert_int_equal(add(w, chain(w, "mangle", NF_INET_LOCAL_IN), IPPROTO_TCP, false,
			     TG("REJECT", 0, rj), -1),
			 -EINVAL);
	assert_int_equal(add(w, chain(w, "filter", NF_INET_PRE_ROUTING), IPPROTO_TCP, false,
			     TG("REJECT", 0, rj), -1),
			 -EINVAL);
	/* rule compat flags other than INV */
	{
		struct nftnl_rule *r = nftnl_rule_alloc();

		nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_PROTO, IPPROTO_TCP);
		nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_FLAGS, 4);
		nftnl_rule_add_expr(r, MT("comment", 0, ci));
		assert_int_equal(nftdp_vm_chain_add_rule(c, r, &w->res, w->st, &w->err), -EINVAL);
		nftnl_rule_free(r);
	}
}

static void test_refused_names_extension(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);
	uint8_t info[64] = {0};

	assert_int_equal(add(w, c, -1, false, xt("match", "ipvs", 1, info, 64), -1), -EOPNOTSUPP);
	assert_non_null(strstr(w->err.msg, "ipvs"));
	assert_int_equal(add(w, c, -1, false, xt("target", "NFQUEUE", 1, info, 64), -1),
			 -EOPNOTSUPP);
	assert_non_null(strstr(w->err.msg, "NFQUEUE"));
	/* SET and owner run (test_set_target, test_owner_physdev): an info
	 * of the wrong size is EINVAL */
	assert_int_equal(add(w, c, -1, false, xt("target", "SET", 3, info, 64), -1), -EINVAL);
	assert_int_equal(add(w, c, -1, false, xt("match", "owner", 1, info, 64), -1), -EINVAL);
	/* the standard target is no target */
	assert_int_equal(add(w, c, -1, false, xt("target", "", 0, info, 8), -1), -EINVAL);
}

static void test_matches(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);
	struct xt_multiport_v1 mp = {.flags = XT_MULTIPORT_DESTINATION,
				     .count = 3,
				     .ports = {22, 100, 200},
				     .pflags = {0, 1}};
	struct xt_length_info len = {.min = 40, .max = 40};
	struct xt_iprange_mtinfo ipr = {.flags = IPRANGE_SRC};
	struct tpkt t;

	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("multiport", 1, mp), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 22)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 150)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 201)), NF_ACCEPT);

	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, d, -1, false, MT("length", 0, len), NF_DROP), 0);
	assert_int_equal(RUN(w, d, tcp4(&t, 1)), NF_DROP);
	len.invert = 1;
	struct nftdp_vm_chain *e = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, e, -1, false, MT("length", 0, len), NF_DROP), 0);
	assert_int_equal(RUN(w, e, tcp4(&t, 1)), NF_ACCEPT);

	/* 10.0.0.1 in 10.0.0.0-10.0.0.9 */
	inet_pton(AF_INET, "10.0.0.0", &ipr.src_min.in);
	inet_pton(AF_INET, "10.0.0.9", &ipr.src_max.in);
	struct nftdp_vm_chain *f = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, f, -1, false, MT("iprange", 1, ipr), NF_DROP), 0);
	assert_int_equal(RUN(w, f, tcp4(&t, 1)), NF_DROP);
	inet_pton(AF_INET, "10.0.0.2", &ipr.src_min.in);
	struct nftdp_vm_chain *g = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, g, -1, false, MT("iprange", 1, ipr), NF_DROP), 0);
	assert_int_equal(RUN(w, g, tcp4(&t, 1)), NF_ACCEPT);
}

static struct nftdp_vm_pkt *tcp4_from(struct tpkt *t, uint8_t src_last, uint16_t dport);

/* xt_set's match over a published ipset set (expr_compat_set.c) */
static struct nftdp_vm_ipset *ipset_of(uint8_t kind, const struct nftdp_vm_ipset_key *keys,
				       const bool *nomatch, uint32_t n)
{
	struct nftdp_vm_ipset *s = nftdp_vm_ipset_alloc(n, 16);

	assert_non_null(s);
	s->kind = kind;
	s->family = NFPROTO_IPV4;
	s->netmask = 32;
	s->dim = kind == NFTDP_VM_IPSET_HASH_IPPORT	 ? 2
		 : kind == NFTDP_VM_IPSET_HASH_NETIFACE	 ? 2
		 : kind == NFTDP_VM_IPSET_HASH_IPPORTNET ? 3
							 : 1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = nftdp_vm_ipset_hash(&keys[i]) & 15;

		s->e[i].k = keys[i];
		s->e[i].nomatch = nomatch && nomatch[i];
		s->e[i].next = s->head[b];
		s->head[b] = (int32_t)i;
		if (kind == NFTDP_VM_IPSET_HASH_NET || kind == NFTDP_VM_IPSET_HASH_IPPORTNET ||
		    kind == NFTDP_VM_IPSET_HASH_NETIFACE)
			s->cidrs[keys[i].cidr] = true;
	}
	return s;
}

static void test_set_match(void **state)
{
	struct world *w = *state;
	struct xt_set_info_match_v4 m = {
	    .match_set = {.index = 7, .dim = 1, .flags = IPSET_DIM_ONE_SRC}};
	struct nftdp_vm_ipset_key k[2];
	bool nm[2] = {false, true};
	struct tpkt t;

	memset(k, 0, sizeof(k));
	/* no set at index 7: ENOENT, as set_match_v4_checkentry */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_LOCAL_IN), -1, false, MT("set", 4, m), NF_DROP),
	    -ENOENT);
	/* hash:ip {10.0.0.1}: src matches, dst does not */
	k[0].ip[0] = 10;
	k[0].ip[3] = 1;
	assert_null(nftdp_vm_ipset_publish(7, ipset_of(NFTDP_VM_IPSET_HASH_IP, k, NULL, 1)));
	struct nftdp_vm_chain *a = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, a, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_DROP);
	m.match_set.flags = 0; /* dst */
	struct nftdp_vm_chain *b = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, b, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, b, tcp4(&t, 1)), NF_ACCEPT);
	m.match_set.flags = IPSET_INV_MATCH; /* ! dst */
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, c, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	/* a timed-out element is not in the set */
	nftdp_vm_ipset_free(
	    nftdp_vm_ipset_publish(7, ipset_of(NFTDP_VM_IPSET_HASH_IP, k, NULL, 1)));
	w->ctx.now_ms = 5000;
	{
		struct nftdp_vm_ipset *s = ipset_of(NFTDP_VM_IPSET_HASH_IP, k, NULL, 1);

		s->e[0].expire_ms = 5000;
		nftdp_vm_ipset_free(nftdp_vm_ipset_publish(7, s));
	}
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_ACCEPT);
	/* hash:net {10.0.0.0/8, 10.0.0.0/30 nomatch}: 10.0.0.1 is in the hole;
	 * --return-nomatch turns it into a match and a plain member into none */
	k[0].ip[3] = 0;
	k[0].cidr = 8;
	k[1] = k[0];
	k[1].cidr = 30;
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(7, ipset_of(NFTDP_VM_IPSET_HASH_NET, k, nm, 2)));
	m.match_set.flags = IPSET_DIM_ONE_SRC;
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, d, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, d, tcp4(&t, 1)), NF_ACCEPT);
	m.flags = IPSET_FLAG_RETURN_NOMATCH;
	struct nftdp_vm_chain *e = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, e, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, e, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, e, tcp4_from(&t, 9, 1)), NF_ACCEPT); /* 10.0.0.9: in /8 */
	assert_int_equal(RUN(w, d, tcp4_from(&t, 9, 1)), NF_DROP);
	/* hash:ip,port needs two dimensions: dim 1 never matches */
	memset(k, 0, sizeof(k));
	k[0].ip[0] = 10;
	k[0].ip[3] = 2;
	k[0].port = 22;
	k[0].proto = IPPROTO_TCP;
	nftdp_vm_ipset_free(
	    nftdp_vm_ipset_publish(7, ipset_of(NFTDP_VM_IPSET_HASH_IPPORT, k, NULL, 1)));
	m.flags = 0;
	m.match_set.flags = 0;
	m.match_set.dim = 2; /* dst,dst */
	struct nftdp_vm_chain *f = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, f, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, f, tcp4(&t, 22)), NF_DROP);
	assert_int_equal(RUN(w, f, tcp4(&t, 23)), NF_ACCEPT);
	m.match_set.dim = 1;
	struct nftdp_vm_chain *g = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, g, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, g, tcp4(&t, 22)), NF_ACCEPT);
	/* hash:ip,port,net {10.0.0.2,tcp:22,10.0.0.0/30; the same with
	 * 10.0.0.0/31 nomatch} as dst,dst,src: the most specific net of the
	 * source decides; two dimensions never match */
	k[0].ip2[0] = 10;
	k[0].cidr = 30;
	k[1] = k[0];
	k[1].cidr = 31;
	nftdp_vm_ipset_free(
	    nftdp_vm_ipset_publish(7, ipset_of(NFTDP_VM_IPSET_HASH_IPPORTNET, k, nm, 2)));
	m.match_set.dim = 3;
	m.match_set.flags = IPSET_DIM_THREE_SRC;
	struct nftdp_vm_chain *h = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, h, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, h, tcp4_from(&t, 3, 22)), NF_DROP);
	assert_int_equal(RUN(w, h, tcp4_from(&t, 1, 22)), NF_ACCEPT); /* nomatch /31 */
	assert_int_equal(RUN(w, h, tcp4_from(&t, 3, 23)), NF_ACCEPT);
	assert_int_equal(RUN(w, h, tcp4_from(&t, 9, 22)), NF_ACCEPT); /* outside the /30 */
	m.match_set.dim = 2;
	struct nftdp_vm_chain *i = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, i, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, i, tcp4_from(&t, 3, 22)), NF_ACCEPT);
	/* hash:net,iface {10.0.0.0/24,eth1; 0.0.0.0/0,wan0; 10.0.0.0/30,eth1
	 * nomatch} as src,dst: the source's net with the out device's name,
	 * /0 for any; src,src: the in device's; no device: no match */
	memset(k, 0, sizeof(k));
	k[0].ip[0] = 10;
	k[0].cidr = 24;
	memcpy(k[0].ip2, "eth1", 4);
	k[1] = k[0];
	k[1].cidr = 30;
	struct nftdp_vm_ipset_key kw[3] = {k[0], k[1], {.cidr = 0}};
	bool nmw[3] = {false, true, false};
	memcpy(kw[2].ip2, "wan0", 4);
	nftdp_vm_ipset_free(
	    nftdp_vm_ipset_publish(7, ipset_of(NFTDP_VM_IPSET_HASH_NETIFACE, kw, nmw, 3)));
	m.match_set.dim = 2;
	m.match_set.flags = IPSET_DIM_ONE_SRC;
	struct nftdp_vm_chain *j = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, j, -1, false, MT("set", 4, m), NF_DROP), 0);
	struct nftdp_vm_pkt *p = tcp4_from(&t, 9, 22);
	assert_int_equal(RUN(w, j, p), NF_ACCEPT); /* no device */
	p->iif = 2;
	p->iifname = "wan0";
	p->oif = 3;
	p->oifname = "eth1";
	assert_int_equal(RUN(w, j, p), NF_DROP);
	p = tcp4_from(&t, 1, 22); /* 10.0.0.1: the nomatch /30 */
	p->oif = 3;
	p->oifname = "eth1";
	assert_int_equal(RUN(w, j, p), NF_ACCEPT);
	p->oifname = "eth10";
	assert_int_equal(RUN(w, j, p), NF_ACCEPT);
	p->oifname = "wan0"; /* /0 */
	assert_int_equal(RUN(w, j, p), NF_DROP);
	m.match_set.flags = IPSET_DIM_ONE_SRC | IPSET_DIM_TWO_SRC;
	struct nftdp_vm_chain *l = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, l, -1, false, MT("set", 4, m), NF_DROP), 0);
	p = tcp4_from(&t, 9, 22);
	p->oif = 3;
	p->oifname = "eth1";
	assert_int_equal(RUN(w, l, p), NF_ACCEPT); /* no in device */
	p->iif = 2;
	p->iifname = "eth1";
	assert_int_equal(RUN(w, l, p), NF_DROP);
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(7, NULL));
}

/* bitmap:port answers for TCP and UDP only (ip_set_get_ip_port; the
 * kernel here does not match SCTP or UDP-Lite to port 80 in it) */
static void test_set_bitmap_port_proto(void **state)
{
	struct world *w = *state;
	struct xt_set_info_match_v4 m = {.match_set = {.index = 7, .dim = 1, .flags = 0}};
	struct nftdp_vm_ipset_key k;
	struct nftdp_vm_ipset *s;
	struct nftdp_vm_pkt *p;
	struct tpkt t;

	memset(&k, 0, sizeof(k));
	k.port = 80;
	s = ipset_of(NFTDP_VM_IPSET_BITMAP_PORT, &k, NULL, 1);
	s->family = NFPROTO_UNSPEC;
	s->first = 0;
	s->last = 1000;
	assert_null(nftdp_vm_ipset_publish(7, s));
	struct nftdp_vm_chain *a = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, a, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, a, tcp4(&t, 80)), NF_DROP);
	p = tcp4(&t, 80);
	p->l4proto = IPPROTO_SCTP;
	assert_int_equal(RUN(w, a, p), NF_ACCEPT);
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(7, NULL));
}

/* counters (ip_set_match_extensions): a matching packet counts into the
 * element first, then --packets-* and --bytes-* compare; ! --update-counters
 * compares without counting; list:set counts into its member's element
 * and its own, ! --update-subcounters leaves the member's alone */
static void test_set_counters(void **state)
{
	struct world *w = *state;
	struct xt_set_info_match_v4 m = {
	    .match_set = {.index = 7, .dim = 1, .flags = IPSET_DIM_ONE_SRC},
	    .packets = {.value = 1, .op = IPSET_COUNTER_GT}};
	struct nftdp_vm_ipset_key k, lk;
	struct nftdp_vm_ipset *s, *ls;
	struct tpkt t;

	memset(&k, 0, sizeof(k));
	k.ip[0] = 10;
	k.ip[3] = 1;
	s = ipset_of(NFTDP_VM_IPSET_HASH_IP, &k, NULL, 1);
	s->counters = true;
	assert_null(nftdp_vm_ipset_publish(7, s));
	struct nftdp_vm_chain *a = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, a, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_ACCEPT); /* 1 > 1: no */
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_DROP);   /* 2 > 1 */
	assert_int_equal(s->e[0].packets, 2);
	assert_int_equal(s->e[0].bytes, 80);
	assert_int_equal(RUN(w, a, tcp4_from(&t, 9, 1)), NF_ACCEPT); /* not in it */
	/* ! --update-counters: compared, not counted */
	m.flags = IPSET_FLAG_SKIP_COUNTER_UPDATE;
	m.packets.op = IPSET_COUNTER_EQ;
	m.packets.value = 2;
	struct nftdp_vm_chain *b = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, b, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, b, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, b, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(s->e[0].packets, 2);
	/* --bytes-lt */
	m.flags = 0;
	m.packets.op = IPSET_COUNTER_NONE;
	m.bytes.op = IPSET_COUNTER_LT;
	m.bytes.value = 160;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, c, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);   /* 120 < 160 */
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT); /* 160 */
	/* a set without counters: the comparison has nothing to say */
	s->counters = false;
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	s->counters = true;
	/* list:set 8 = {7} with counters */
	memset(&lk, 0, sizeof(lk));
	lk.id = 7;
	ls = ipset_of(NFTDP_VM_IPSET_LIST_SET, &lk, NULL, 1);
	ls->family = NFPROTO_UNSPEC;
	ls->counters = true;
	assert_null(nftdp_vm_ipset_publish(8, ls));
	m.match_set.index = 8;
	m.bytes.op = IPSET_COUNTER_NONE;
	m.packets.op = IPSET_COUNTER_EQ;
	m.packets.value = 1; /* the list's own element, not the member's (4, then 5) */
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, d, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, d, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(s->e[0].packets, 5);
	assert_int_equal(ls->e[0].packets, 1);
	m.flags = IPSET_FLAG_SKIP_SUBCOUNTER_UPDATE;
	m.packets.op = IPSET_COUNTER_NONE;
	struct nftdp_vm_chain *e = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, e, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, e, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(s->e[0].packets, 5);
	assert_int_equal(ls->e[0].packets, 2);
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(8, NULL));
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(7, NULL));
}

/* the events a SET target queued, as the control thread reads them */
static struct nftdp_vm_ipset_event got[64];
static unsigned int ngot;
static int got_ret; /* what the "set" answers: 0 took it */

static int got_ev(const struct nftdp_vm_ipset_event *ev, void *arg)
{
	(void)arg;
	if (ngot < 64)
		got[ngot++] = *ev;
	return got_ret;
}

/* bitmap:ip,mac (bitmap_ipmac_kadt): the address by the first
 * dimension's flag, the MAC by the second's (source with src, else the
 * destination); a two-dimension type never matches a one-dimension
 * rule; an element without a MAC matches the first packet and asks the
 * control thread to fill in the packet's MAC; no link-layer header or a
 * zero MAC: no match */
static void test_set_bitmap_ipmac(void **state)
{
	struct world *w = *state;
	static const uint8_t smac[6] = {6, 7, 8, 9, 10, 11};
	struct xt_set_info_match_v4 m = {
	    .match_set = {.index = 7, .dim = 2, .flags = IPSET_DIM_ONE_SRC | IPSET_DIM_TWO_SRC}};
	struct nftdp_vm_ipset_key k;
	struct nftdp_vm_ipset *s;
	struct nftdp_vm_pkt *p;
	struct tpkt t;

	memset(&k, 0, sizeof(k));
	k.ip[0] = 10;
	k.ip[3] = 1;
	s = ipset_of(NFTDP_VM_IPSET_BITMAP_IPMAC, &k, NULL, 1);
	s->dim = 2;
	s->first = 0x0a000000;
	s->last = 0x0a0000ff;
	s->e[0].mac_set = true;
	memcpy(s->e[0].mac, smac, 6);
	assert_null(nftdp_vm_ipset_publish(7, s));
	struct nftdp_vm_chain *a = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, a, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_DROP);
	p = tcp4(&t, 1);
	p->mac_off = -1;
	assert_int_equal(RUN(w, a, p), NF_ACCEPT);
	/* src,dst: the destination MAC 00:01:02:03:04:05 */
	m.match_set.flags = IPSET_DIM_ONE_SRC;
	struct nftdp_vm_chain *b = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, b, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, b, tcp4(&t, 1)), NF_ACCEPT);
	/* src only: below the type's dimension */
	m.match_set.dim = 1;
	m.match_set.flags = IPSET_DIM_ONE_SRC;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("set", 4, m), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	/* another MAC: no match; no MAC yet: a match and the fill event */
	s = ipset_of(NFTDP_VM_IPSET_BITMAP_IPMAC, &k, NULL, 1);
	s->dim = 2;
	s->first = 0x0a000000;
	s->last = 0x0a0000ff;
	s->e[0].mac_set = true;
	s->e[0].mac[5] = 1;
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(7, s));
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_ACCEPT);
	s->e[0].mac_set = false;
	nftdp_vm_ipset_poll(NULL, NULL);
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_DROP);
	ngot = 0;
	got_ret = 0;
	assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 1);
	assert_int_equal(got[0].id, 7);
	assert_int_equal(got[0].del, 0);
	assert_int_equal(got[0].flags, NFTDP_VM_IPSET_EV_MAC);
	assert_int_equal(got[0].timeout, UINT32_MAX);
	assert_int_equal(got[0].k.ip[3], 1);
	assert_memory_equal(got[0].mac, smac, 6);
	/* a zero source MAC is -EINVAL */
	p = tcp4(&t, 1);
	memset(t.buf + 6, 0, 6);
	assert_int_equal(RUN(w, a, p), NF_ACCEPT);
	assert_int_equal(nftdp_vm_ipset_poll(NULL, NULL), 0);
	/* -j SET --add-set: the event carries the source MAC (src,src) or
	 * the destination MAC (src,dst); none for a zero source MAC */
	{
		static const uint8_t dmac[6] = {0, 1, 2, 3, 4, 5};
		struct xt_set_info_target_v3 t3;

		memset(&t3, 0, sizeof(t3));
		t3.add_set.index = 7;
		t3.add_set.dim = 2;
		t3.add_set.flags = IPSET_DIM_ONE_SRC | IPSET_DIM_TWO_SRC;
		t3.del_set.index = 7;
		t3.del_set.dim = 2;
		t3.del_set.flags = IPSET_DIM_ONE_SRC;
		t3.map_set.index = 65535;
		t3.timeout = UINT32_MAX;
		struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);
		assert_int_equal(add(w, d, -1, false, TG("SET", 3, t3), -1), 0);
		RUN(w, d, tcp4(&t, 1));
		ngot = 0;
		assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 2);
		assert_int_equal(got[0].del, 0);
		assert_int_equal(got[0].flags, NFTDP_VM_IPSET_EV_MAC);
		assert_memory_equal(got[0].mac, smac, 6);
		assert_int_equal(got[1].del, 1);
		assert_int_equal(got[1].flags, NFTDP_VM_IPSET_EV_MAC);
		assert_memory_equal(got[1].mac, dmac, 6);
		p = tcp4(&t, 1);
		memset(t.buf + 6, 0, 6);
		RUN(w, d, p);
		ngot = 0;
		assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 1); /* the del only */
		assert_int_equal(got[0].del, 1);
	}
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(7, NULL));
}

/* xt_SET (set_target_v0..v3): adds and deletes queued for the control
 * thread, --exist and --timeout carried, list:set members tried in order,
 * --map-set's skbinfo applied, the checkentry errnos */
static void test_set_target(void **state)
{
	struct world *w = *state;
	struct xt_set_info_target_v3 t3;
	struct xt_set_info_target_v1 t1;
	struct nftdp_vm_ipset_key k;
	struct nftdp_vm_pkt *p;
	struct tpkt t;
	uint64_t lost;

	memset(&k, 0, sizeof(k));
	memset(&t3, 0, sizeof(t3));
	t3.add_set.index = 8;
	t3.add_set.dim = 1;
	t3.add_set.flags = IPSET_DIM_ONE_SRC;
	t3.del_set.index = 65535;
	t3.map_set.index = 65535;
	t3.flags = IPSET_FLAG_EXIST;
	t3.timeout = 30;
	/* no set at index 8: ENOENT */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, TG("SET", 3, t3), -1), -ENOENT);
	/* an empty hash:ip at 8: the packet's source goes to the control thread */
	nftdp_vm_ipset_poll(NULL, NULL);
	assert_null(nftdp_vm_ipset_publish(8, ipset_of(NFTDP_VM_IPSET_HASH_IP, &k, NULL, 0)));
	struct nftdp_vm_chain *a = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, a, -1, false, TG("SET", 3, t3), -1), 0);
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_ACCEPT); /* XT_CONTINUE */
	ngot = 0;
	got_ret = 0;
	assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 1);
	assert_int_equal(ngot, 1);
	assert_int_equal(got[0].id, 8);
	assert_int_equal(got[0].del, 0);
	assert_int_equal(got[0].flags, NFTDP_VM_IPSET_EV_EXIST);
	assert_int_equal(got[0].timeout, 30);
	assert_int_equal(got[0].k.ip[0], 10);
	assert_int_equal(got[0].k.ip[3], 1);
	/* rev 1: no --exist, the set's timeout; --del-set by dst */
	memset(&t1, 0, sizeof(t1));
	t1.add_set.index = 8;
	t1.add_set.dim = 1;
	t1.add_set.flags = IPSET_DIM_ONE_SRC;
	t1.del_set.index = 8;
	t1.del_set.dim = 1;
	struct nftdp_vm_chain *b = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, b, -1, false, TG("SET", 1, t1), -1), 0);
	RUN(w, b, tcp4(&t, 1));
	ngot = 0;
	assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 2);
	assert_int_equal(got[0].flags, 0);
	assert_int_equal(got[0].timeout, UINT32_MAX);
	assert_int_equal(got[1].del, 1);
	assert_int_equal(got[1].k.ip[3], 2);
	/* a full ring loses the packet's events, counted */
	lost = nftdp_vm_ipset_lost();
	for (int i = 0; i < 1025; i++)
		RUN(w, a, tcp4(&t, 1));
	assert_int_equal(nftdp_vm_ipset_lost(), lost + 1);
	assert_int_equal(nftdp_vm_ipset_poll(NULL, NULL), 1024);
	/* list:set 9 = {bitmap:port 10 (0-2000), hash:ip 8}: one try each, the
	 * second only when the first did not take it */
	{
		struct nftdp_vm_ipset_key m[2];
		struct nftdp_vm_ipset *bp;

		memset(m, 0, sizeof(m));
		bp = ipset_of(NFTDP_VM_IPSET_BITMAP_PORT, m, NULL, 0);
		bp->family = NFPROTO_UNSPEC;
		bp->first = 0;
		bp->last = 2000;
		assert_null(nftdp_vm_ipset_publish(10, bp));
		m[0].id = 10;
		m[1].id = 8;
		struct nftdp_vm_ipset *ls = ipset_of(NFTDP_VM_IPSET_LIST_SET, m, NULL, 2);
		ls->family = NFPROTO_UNSPEC;
		assert_null(nftdp_vm_ipset_publish(9, ls));
	}
	t3.add_set.index = 9;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, TG("SET", 3, t3), -1), 0);
	RUN(w, c, tcp4(&t, 1)); /* sport 1234 */
	ngot = 0;
	got_ret = 0;
	assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 2);
	assert_int_equal(ngot, 1); /* the bitmap took it */
	assert_int_equal(got[0].id, 10);
	assert_int_equal(got[0].k.port, 1234);
	RUN(w, c, tcp4(&t, 1));
	ngot = 0;
	got_ret = -1;
	assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 2);
	assert_int_equal(ngot, 2);
	assert_int_equal(got[1].id, 8);
	assert_int_equal(got[1].flags, NFTDP_VM_IPSET_EV_EXIST | NFTDP_VM_IPSET_EV_ALT);
	/* --map-set: mangle only; prio and queue from FORWARD/OUTPUT/POSTROUTING */
	memset(&k, 0, sizeof(k));
	k.ip[0] = 10;
	k.ip[3] = 1;
	{
		struct nftdp_vm_ipset *s = ipset_of(NFTDP_VM_IPSET_HASH_IP, &k, NULL, 1);

		s->skbinfo = true;
		s->e[0].skbmark = 0x10;
		s->e[0].skbmarkmask = 0xff;
		s->e[0].skbprio = 0x10002;
		nftdp_vm_ipset_free(nftdp_vm_ipset_publish(8, s));
	}
	t3.add_set.index = 65535;
	t3.map_set.index = 8;
	t3.map_set.dim = 1;
	t3.map_set.flags = IPSET_DIM_ONE_SRC;
	t3.flags = IPSET_FLAG_MAP_SKBMARK | IPSET_FLAG_MAP_SKBPRIO;
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, TG("SET", 3, t3), -1), -EINVAL);
	assert_int_equal(
	    add(w, chain(w, "mangle", NF_INET_PRE_ROUTING), -1, false, TG("SET", 3, t3), -1),
	    -EINVAL);
	struct nftdp_vm_chain *d = chain(w, "mangle", NF_INET_FORWARD);
	assert_int_equal(add(w, d, -1, false, TG("SET", 3, t3), -1), 0);
	p = tcp4(&t, 1);
	p->mark = 0x1234;
	RUN(w, d, p);
	assert_int_equal(p->mark, 0x1210);
	assert_int_equal(p->priority, 0x10002);
	/* not in the set: nothing changes */
	p = tcp4_from(&t, 9, 1);
	p->mark = 0x1234;
	p->priority = 7;
	RUN(w, d, p);
	assert_int_equal(p->mark, 0x1234);
	assert_int_equal(p->priority, 7);
	/* dimension over the limit: ERANGE */
	t3.map_set.dim = IPSET_DIM_MAX + 1;
	assert_int_equal(
	    add(w, chain(w, "mangle", NF_INET_FORWARD), -1, false, TG("SET", 3, t3), -1), -ERANGE);
	assert_int_equal(nftdp_vm_ipset_poll(NULL, NULL), 0);
	/* hash:net,iface at 8 {10.0.0.0/24,eth1}: src,dst adds the source's
	 * /24 with the out device's name; with only a /0 in the set the kadt
	 * refuses (e.cidr 0: -EINVAL) */
	{
		struct nftdp_vm_ipset_key ki;

		memset(&ki, 0, sizeof(ki));
		ki.ip[0] = 10;
		ki.cidr = 24;
		memcpy(ki.ip2, "eth1", 4);
		nftdp_vm_ipset_free(nftdp_vm_ipset_publish(
		    8, ipset_of(NFTDP_VM_IPSET_HASH_NETIFACE, &ki, NULL, 1)));
		memset(&t3, 0, sizeof(t3));
		t3.add_set.index = 8;
		t3.add_set.dim = 2;
		t3.add_set.flags = IPSET_DIM_ONE_SRC;
		t3.del_set.index = 65535;
		t3.map_set.index = 65535;
		struct nftdp_vm_chain *e = chain(w, "filter", NF_INET_FORWARD);
		assert_int_equal(add(w, e, -1, false, TG("SET", 3, t3), -1), 0);
		p = tcp4_from(&t, 77, 1);
		p->oif = 3;
		p->oifname = "eth5";
		RUN(w, e, p);
		ngot = 0;
		got_ret = 0;
		assert_int_equal(nftdp_vm_ipset_poll(got_ev, NULL), 1);
		assert_int_equal(got[0].k.cidr, 24);
		assert_int_equal(got[0].k.ip[3], 0);
		assert_memory_equal(got[0].k.ip2, "eth5", 5);
		ki.cidr = 0;
		ki.ip[0] = 0;
		nftdp_vm_ipset_free(nftdp_vm_ipset_publish(
		    8, ipset_of(NFTDP_VM_IPSET_HASH_NETIFACE, &ki, NULL, 1)));
		RUN(w, e, p);
		assert_int_equal(nftdp_vm_ipset_poll(NULL, NULL), 0);
	}
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(8, NULL));
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(9, NULL));
	nftdp_vm_ipset_free(nftdp_vm_ipset_publish(10, NULL));
}

/* owner (no packet nftdp sees has a socket) and physdev (bridged IP
 * only in wire mode): owner_mt's and physdev_mt's socketless and
 * bridgeless answers, the bridged one, the checkentry errnos */
static void test_owner_physdev(void **state)
{
	struct world *w = *state;
	struct xt_owner_match_info o = {.uid_min = 0, .uid_max = 0, .match = XT_OWNER_UID};
	struct xt_physdev_info pd;
	struct tpkt t;
	struct nftdp_vm_pkt *p;

	/* owner: LOCAL_OUT and POSTROUTING only; uid ranges checked */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, MT("owner", 1, o), NF_DROP),
	    -EINVAL);
	o.uid_max = UINT32_MAX;
	assert_int_equal(
	    add(w, chain(w, "mangle", NF_INET_POST_ROUTING), -1, false, MT("owner", 1, o), NF_DROP),
	    -EINVAL);
	o.uid_max = 0;
	o.match = 0x10;
	assert_int_equal(
	    add(w, chain(w, "mangle", NF_INET_POST_ROUTING), -1, false, MT("owner", 1, o), NF_DROP),
	    -EINVAL);
	/* --uid-owner 0: no socket, no match; ! --uid-owner 0 and
	 * ! --socket-exists: a match */
	o.match = XT_OWNER_UID;
	struct nftdp_vm_chain *a = chain(w, "mangle", NF_INET_POST_ROUTING);
	assert_int_equal(add(w, a, -1, false, MT("owner", 1, o), NF_DROP), 0);
	assert_int_equal(RUN(w, a, tcp4(&t, 1)), NF_ACCEPT);
	o.invert = XT_OWNER_UID;
	struct nftdp_vm_chain *b = chain(w, "mangle", NF_INET_POST_ROUTING);
	assert_int_equal(add(w, b, -1, false, MT("owner", 1, o), NF_DROP), 0);
	assert_int_equal(RUN(w, b, tcp4(&t, 1)), NF_DROP);
	o.match = XT_OWNER_UID | XT_OWNER_SOCKET;
	o.invert = XT_OWNER_UID;
	struct nftdp_vm_chain *c = chain(w, "mangle", NF_INET_POST_ROUTING);
	assert_int_equal(add(w, c, -1, false, MT("owner", 1, o), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);

	/* physdev: options checked; --physdev-out without --physdev-is-bridged
	 * not at OUTPUT */
	memset(&pd, 0, sizeof(pd));
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, MT("physdev", 0, pd), NF_DROP),
	    -EINVAL);
	pd.bitmask = XT_PHYSDEV_OP_OUT;
	strcpy(pd.physoutdev, "dp1");
	memset(pd.out_mask, 0xff, 4);
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_LOCAL_OUT), -1, false, MT("physdev", 0, pd), NF_DROP),
	    -EINVAL);
	/* routed (not bridged): only inverted options match */
	nftdp_vm_physdev_bridged(false);
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, d, -1, false, MT("physdev", 0, pd), NF_DROP), 0);
	p = tcp4(&t, 1);
	p->hook = NF_INET_FORWARD;
	p->iifname = "dp0";
	p->oifname = "dp1";
	assert_int_equal(RUN(w, d, p), NF_ACCEPT);
	pd.invert = XT_PHYSDEV_OP_OUT;
	struct nftdp_vm_chain *e = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, e, -1, false, MT("physdev", 0, pd), NF_DROP), 0);
	assert_int_equal(RUN(w, e, p), NF_DROP);
	/* bridged: the ports; --physdev-out dp1 at forward */
	nftdp_vm_physdev_bridged(true);
	assert_int_equal(RUN(w, d, p), NF_DROP);
	assert_int_equal(RUN(w, e, p), NF_ACCEPT);
	p->oifname = "dp2";
	assert_int_equal(RUN(w, d, p), NF_ACCEPT);
	/* --physdev-in dp with a 2-byte mask (iptables' dp+), is-bridged */
	memset(&pd, 0, sizeof(pd));
	pd.bitmask = XT_PHYSDEV_OP_IN | XT_PHYSDEV_OP_BRIDGED;
	strcpy(pd.physindev, "dp");
	memset(pd.in_mask, 0xff, 2);
	struct nftdp_vm_chain *f = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, f, -1, false, MT("physdev", 0, pd), NF_DROP), 0);
	assert_int_equal(RUN(w, f, p), NF_DROP);
	p->iifname = "eth0";
	assert_int_equal(RUN(w, f, p), NF_ACCEPT);
	nftdp_vm_physdev_bridged(false);
}

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
	if (key == NFT_CT_STATUS && len == 4) {
		memset(dest, 0, 4);
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

/* a connection whose master has helper "ftp" (NFT_CT_HELPER), or none */
static bool hct_get(const void *ct, uint32_t key, int dir, void *dest, uint32_t len)
{
	(void)dir;
	if (key != NFT_CT_HELPER || !*(const bool *)ct)
		return false;
	memset(dest, 0, len);
	memcpy(dest, "ftp", 3);
	return true;
}

/* ipt_ttl.h's match info: its header and ipt_TTL.h share an include guard */
struct ttl_mt_info {
	uint8_t mode, ttl;
};
enum { TTL_MT_EQ, TTL_MT_NE, TTL_MT_LT, TTL_MT_GT };

/* helper, statistic, ttl, dscp, tos, ecn (expr_compat_ct.c, expr_compat_more.c) */
static void test_more_matches(void **state)
{
	struct world *w = *state;
	static const struct nftdp_vm_ct_ops hops = {hct_get, NULL, NULL};
	struct xt_helper_info hi = {.name = "ftp"};
	struct xt_statistic_info nth = {.mode = XT_STATISTIC_MODE_NTH};
	struct xt_statistic_info rnd = {.mode = XT_STATISTIC_MODE_RANDOM};
	struct ttl_mt_info ttl = {.mode = TTL_MT_LT, .ttl = 65};
	struct xt_dscp_info dscp = {.dscp = 0x2e};
	struct xt_tos_match_info tos = {.tos_mask = 0xff, .tos_value = 0xb8};
	struct xt_ecn_info ecn = {.operation = XT_ECN_OP_MATCH_IP, .ip_ect = 2};
	bool has = true, none = false;
	struct nftdp_vm_chain *c;
	struct nftdp_vm_pkt *p;
	struct tpkt t;
	unsigned int n;

	/* helper: the master's helper; "ftpx" compares strlen("ftp") bytes;
	 * an empty name is any helper; no connection is no match */
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("helper", 0, hi), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	p = tcp4(&t, 1);
	p->ct = &has;
	p->ct_ops = &hops;
	assert_int_equal(RUN(w, c, p), NF_DROP);
	p = tcp4(&t, 1);
	p->ct = &none;
	p->ct_ops = &hops;
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	strcpy(hi.name, "ftpx");
	hi.invert = 1;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("helper", 0, hi), NF_DROP), 0);
	p = tcp4(&t, 1);
	p->ct = &has;
	p->ct_ops = &hops;
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	strcpy(hi.name, "tftp");
	hi.invert = 0;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("helper", 0, hi), NF_DROP), 0);
	p = tcp4(&t, 1);
	p->ct = &has;
	p->ct_ops = &hops;
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);

	/* statistic nth: every 3rd from count 1 (packet 2, 5, 8, ...) */
	nth.u.nth.every = 2;
	nth.u.nth.count = 1;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("statistic", 0, nth), NF_DROP), 0);
	for (unsigned int i = 0; i < 9; i++)
		assert_int_equal(RUN(w, c, tcp4(&t, 1)), i % 3 == 1 ? NF_DROP : NF_ACCEPT);
	nth.mode = 2;
	assert_int_equal(add(w, c, -1, false, MT("statistic", 0, nth), NF_DROP), -EINVAL);
	nth.mode = XT_STATISTIC_MODE_NTH;
	nth.flags = 2;
	assert_int_equal(add(w, c, -1, false, MT("statistic", 0, nth), NF_DROP), -EINVAL);
	/* random 0.25 (iptables: 0x80000000 * p): within 5 sigma of 2500 */
	rnd.u.random.probability = 0x20000000;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("statistic", 0, rnd), NF_DROP), 0);
	n = 0;
	for (unsigned int i = 0; i < 10000; i++)
		n += RUN(w, c, tcp4(&t, 1)) == NF_DROP;
	assert_in_range(n, 2500 - 217, 2500 + 217);
	rnd.flags = XT_STATISTIC_INVERT;
	rnd.u.random.probability = 0x80000000u; /* 1.0: all, inverted none */
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("statistic", 0, rnd), NF_DROP), 0);
	for (unsigned int i = 0; i < 100; i++)
		assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);

	/* ttl 64 < 65; not > 65; ttl is IPv4's */
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("ttl", 0, ttl), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	ttl.mode = TTL_MT_GT;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("ttl", 0, ttl), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	ttl.mode = TTL_MT_EQ;
	ttl.ttl = 64;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("ttl", 0, ttl), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(add(w, c, -1, false, MT("hl", 0, ttl), NF_DROP), -EOPNOTSUPP);

	/* dscp EF (46: TOS 0xb8), tos 0xb8/0xff, ecn ECT(0) */
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("dscp", 0, dscp), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	p = tcp4(&t, 1);
	t.buf[15] = 0xb8 | 2;
	assert_int_equal(RUN(w, c, p), NF_DROP);
	dscp.dscp = 0x40;
	assert_int_equal(add(w, c, -1, false, MT("dscp", 0, dscp), NF_DROP), -EDOM);
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("tos", 1, tos), NF_DROP), 0);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT); /* 0xba & 0xff != 0xb8 */
	t.buf[15] = 0xb8;
	assert_int_equal(RUN(w, c, p), NF_DROP);
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("ecn", 0, ecn), NF_DROP), 0);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	t.buf[15] = 0xb8 | 2;
	assert_int_equal(RUN(w, c, p), NF_DROP);
	/* TCP bits need -p tcp; unknown bits EINVAL; ECE set, CWR not */
	ecn.operation = XT_ECN_OP_MATCH_ECE;
	assert_int_equal(add(w, c, -1, false, MT("ecn", 0, ecn), NF_DROP), -EINVAL);
	assert_int_equal(add(w, c, IPPROTO_TCP, true, MT("ecn", 0, ecn), NF_DROP), -EINVAL);
	ecn.operation = 0x02;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("ecn", 0, ecn), NF_DROP), -EINVAL);
	ecn.operation = XT_ECN_OP_MATCH_ECE | XT_ECN_OP_MATCH_CWR;
	ecn.invert = XT_ECN_OP_MATCH_CWR;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("ecn", 0, ecn), NF_DROP), 0);
	p = tcp4(&t, 1);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT); /* SYN: no ECE */
	t.buf[14 + 20 + 13] |= 0x40;
	assert_int_equal(RUN(w, c, p), NF_DROP);
	t.buf[14 + 20 + 13] |= 0x80;
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);

	/* tcp (xt_tcpudp): ports, flags, an option; the rule's -p; udp */
	struct xt_tcp tm = {
	    .spts = {0, 0xffff}, .dpts = {20, 30}, .flg_mask = 0x17, .flg_cmp = 0x02};
	struct xt_udp um = {.spts = {0, 0xffff}, .dpts = {0, 0xffff}};
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("tcp", 0, tm), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 22)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 31)), NF_ACCEPT);
	p = tcp4(&t, 22);
	t.buf[14 + 20 + 13] = 0x12; /* SYN-ACK */
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	assert_int_equal(add(w, c, -1, false, MT("tcp", 0, tm), NF_DROP), -EINVAL);
	assert_int_equal(add(w, c, IPPROTO_UDP, false, MT("tcp", 0, tm), NF_DROP), -EINVAL);
	tm.invflags = 0x20;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("tcp", 0, tm), NF_DROP), -EINVAL);
	tm.invflags = XT_TCP_INV_OPTION;
	tm.option = 2; /* no MSS option: a match when inverted */
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("tcp", 0, tm), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 22)), NF_DROP);
	p = tcp4(&t, 22);
	t.buf[14 + 20 + 12] = 0x40; /* data offset 4: hotdrop with an option asked */
	assert_int_equal(RUN(w, c, p), NF_DROP);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("udp", 0, um), NF_DROP), -EINVAL);
	um.invflags = 4;
	assert_int_equal(add(w, c, IPPROTO_UDP, false, MT("udp", 0, um), NF_DROP), -EINVAL);
	/* a later fragment never matches */
	tm = (struct xt_tcp){.spts = {0, 0xffff}, .dpts = {0, 0xffff}};
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("tcp", 0, tm), NF_DROP), 0);
	p = tcp4(&t, 22);
	assert_int_equal(RUN(w, c, p), NF_DROP);
	p->fragoff = 16;
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
}

/* CLASSIFY, TTL, DSCP, TOS (expr_compat_mangle.c): the header checksum
 * stays right */
static void test_mangle_targets(void **state)
{
	struct world *w = *state;
	struct xt_classify_target_info cl = {.priority = 0x10002};
	struct ipt_TTL_info ttl = {.mode = IPT_TTL_DEC, .ttl = 70};
	struct xt_DSCP_info dscp = {.dscp = 0x2e};
	struct xt_tos_target_info tos = {.tos_value = 0x10, .tos_mask = 0x3f};
	struct nftdp_vm_chain *c;
	struct nftdp_vm_pkt *p;
	struct tpkt t;

	/* CLASSIFY: LOCAL_OUT, FORWARD, POST_ROUTING, any table */
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, TG("CLASSIFY", 0, cl), -1), 0);
	p = tcp4(&t, 1);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	assert_int_equal(p->priority, 0x10002);
	assert_int_equal(
	    add(w, chain(w, "mangle", NF_INET_PRE_ROUTING), -1, false, TG("CLASSIFY", 0, cl), -1),
	    -EINVAL);

	/* TTL: mangle only; 64 - 70 stops at 0; --ttl-inc 0 is EINVAL */
	assert_int_equal(add(w, c, -1, false, TG("TTL", 0, ttl), -1), -EINVAL);
	c = chain(w, "mangle", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, TG("TTL", 0, ttl), -1), 0);
	p = tcp4(&t, 1);
	t.buf[14 + 10] = t.buf[14 + 11] = 0;
	memcpy(t.buf + 14 + 10, (uint16_t[]){nftdp_ip_fast_csum(t.buf + 14, 20)}, 2);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	assert_int_equal(t.buf[14 + 8], 0);
	assert_int_equal(nftdp_ip_fast_csum(t.buf + 14, 20), 0);
	ttl.mode = IPT_TTL_INC;
	ttl.ttl = 0;
	assert_int_equal(add(w, c, -1, false, TG("TTL", 0, ttl), -1), -EINVAL);
	ttl.mode = 3;
	ttl.ttl = 1;
	assert_int_equal(add(w, c, -1, false, TG("TTL", 0, ttl), -1), -EINVAL);

	/* DSCP EF keeps the ECN bits; TOS --set-tos 0x10/0x3f; the checksum */
	c = chain(w, "mangle", NF_INET_POST_ROUTING);
	assert_int_equal(add(w, c, -1, false, TG("DSCP", 0, dscp), -1), 0);
	p = tcp4(&t, 1);
	t.buf[15] = 0x03;
	t.buf[14 + 10] = t.buf[14 + 11] = 0;
	memcpy(t.buf + 14 + 10, (uint16_t[]){nftdp_ip_fast_csum(t.buf + 14, 20)}, 2);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	assert_int_equal(t.buf[15], 0xbb);
	assert_int_equal(nftdp_ip_fast_csum(t.buf + 14, 20), 0);
	dscp.dscp = 64;
	assert_int_equal(add(w, c, -1, false, TG("DSCP", 0, dscp), -1), -EDOM);
	c = chain(w, "mangle", NF_INET_POST_ROUTING);
	assert_int_equal(add(w, c, -1, false, TG("TOS", 1, tos), -1), 0);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	assert_int_equal(t.buf[15], (0xbb & ~0x3f) ^ 0x10);
	assert_int_equal(nftdp_ip_fast_csum(t.buf + 14, 20), 0);
}

/* quota (xt_quota.c): bytes of skb->len while they fit, then none;
 * CHECKSUM (xt_CHECKSUM.c): mangle, --checksum-fill only, a no-op */
static void test_quota_checksum(void **state)
{
	struct world *w = *state;
	struct xt_quota_info q = {.quota = 100};
	struct xt_CHECKSUM_info ck = {.operation = XT_CHECKSUM_OP_FILL};
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	struct nftdp_vm_pkt *p;
	struct tpkt t;

	/* 40-byte packets: two fit (80), the third empties it, then none */
	assert_int_equal(add(w, c, -1, false, MT("quota", 0, q), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	p = tcp4(&t, 1);
	p->skb_len = 1; /* the quota was emptied: not even a small one */
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	q.flags = XT_QUOTA_INVERT;
	c = chain(w, "mangle", NF_INET_FORWARD); /* another rule: handle 1 of another table */
	assert_int_equal(add(w, c, -1, false, MT("quota", 0, q), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	q.flags = 2;
	assert_int_equal(add(w, c, -1, false, MT("quota", 0, q), NF_DROP), -EINVAL);

	c = chain(w, "mangle", NF_INET_POST_ROUTING);
	assert_int_equal(add(w, c, IPPROTO_UDP, false, TG("CHECKSUM", 0, ck), -1), 0);
	assert_int_equal(add(w, c, -1, false, TG("CHECKSUM", 0, ck), -1), 0);
	p = tcp4(&t, 1);
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	ck.operation = 0;
	assert_int_equal(add(w, c, -1, false, TG("CHECKSUM", 0, ck), -1), -EINVAL);
	ck.operation = 3;
	assert_int_equal(add(w, c, -1, false, TG("CHECKSUM", 0, ck), -1), -EINVAL);
	ck.operation = XT_CHECKSUM_OP_FILL;
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, TG("CHECKSUM", 0, ck), -1),
	    -EINVAL);
}

/* socket: never a socket here; policy: no secpath, so --pol none only */
static void test_socket_policy(void **state)
{
	struct world *w = *state;
	struct xt_socket_mtinfo3 so = {.flags = XT_SOCKET_TRANSPARENT | XT_SOCKET_RESTORESKMARK};
	struct xt_policy_info pol = {.flags = XT_POLICY_MATCH_IN | XT_POLICY_MATCH_NONE};
	struct nftdp_vm_chain *c = chain(w, "mangle", NF_INET_PRE_ROUTING);
	struct tpkt t;

	assert_int_equal(add(w, c, -1, false, MT("socket", 3, so), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	/* rev 2 has no RESTORESKMARK, rev 1 only TRANSPARENT */
	assert_int_equal(add(w, c, -1, false, MT("socket", 2, so), NF_DROP), -EINVAL);
	so.flags = XT_SOCKET_NOWILDCARD;
	assert_int_equal(add(w, c, -1, false, MT("socket", 1, so), NF_DROP), -EINVAL);
	assert_int_equal(add(w, c, -1, false, MT("socket", 2, so), NF_DROP), 0);
	/* PREROUTING and INPUT only */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, MT("socket", 2, so), NF_DROP),
	    -EINVAL);

	c = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, c, -1, false, MT("policy", 0, pol), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	pol.flags = XT_POLICY_MATCH_IN; /* --pol ipsec */
	c = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, c, -1, false, MT("policy", 0, pol), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	/* a direction; out not in INPUT, in not in POSTROUTING; 4 elements */
	pol.flags = 0;
	assert_int_equal(add(w, c, -1, false, MT("policy", 0, pol), NF_DROP), -EINVAL);
	pol.flags = XT_POLICY_MATCH_OUT;
	assert_int_equal(add(w, c, -1, false, MT("policy", 0, pol), NF_DROP), -EINVAL);
	pol.flags = XT_POLICY_MATCH_IN;
	assert_int_equal(add(w, chain(w, "filter", NF_INET_POST_ROUTING), -1, false,
			     MT("policy", 0, pol), NF_DROP),
			 -EINVAL);
	pol.len = 5;
	assert_int_equal(add(w, c, -1, false, MT("policy", 0, pol), NF_DROP), -EINVAL);
}

static void test_conntrack_and_marks(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	struct xt_conntrack_mtinfo3 ctm = {.match_flags =
					       XT_CONNTRACK_STATE | XT_CONNTRACK_STATE_ALIAS,
					   .state_mask = XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED) |
							 XT_CONNTRACK_STATE_BIT(IP_CT_RELATED)};
	struct xt_conntrack_mtinfo3 inv = {.match_flags = XT_CONNTRACK_STATE,
					   .state_mask = XT_CONNTRACK_STATE_INVALID};
	struct xt_conntrack_mtinfo3 other = {.match_flags = XT_CONNTRACK_ORIGSRC};
	struct xt_mark_tginfo2 mk = {.mark = 0x5, .mask = 0xff};
	struct xt_connmark_tginfo2 save = {
	    .ctmask = 0xffffffff, .nfmask = 0xffffffff, .mode = XT_CONNMARK_SAVE};
	struct xt_connmark_mtinfo1 cm = {.mark = 0x1205, .mask = 0xffffffff};
	struct fake_ct f = {.mark = 0, .state = XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED)};
	struct tpkt t;
	struct nftdp_vm_pkt *p;

	assert_int_equal(add(w, c, -1, false, MT("conntrack", 3, ctm), NF_DROP), 0);
	/* no connection: invalid, not established */
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	p = tcp4(&t, 1);
	p->ct = &f;
	p->ct_ops = &fct_ops;
	assert_int_equal(RUN(w, c, p), NF_DROP);

	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, d, -1, false, MT("conntrack", 3, inv), NF_DROP), 0);
	assert_int_equal(RUN(w, d, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(add(w, d, -1, false, MT("conntrack", 3, other), -1), -EOPNOTSUPP);

	/* untracked: bit 8 for conntrack, bit 6 for state (where conntrack
	 * has SNAT) */
	struct xt_conntrack_mtinfo3 unt = {.match_flags = XT_CONNTRACK_STATE,
					   .state_mask = XT_CONNTRACK_STATE_UNTRACKED};
	struct xt_state_info sunt = {.statemask = XT_STATE_UNTRACKED};
	struct nftdp_vm_chain *u = chain(w, "filter", NF_INET_FORWARD);
	struct nftdp_vm_chain *v = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, u, -1, false, MT("conntrack", 3, unt), NF_DROP), 0);
	assert_int_equal(add(w, v, -1, false, MT("state", 0, sunt), NF_DROP), 0);
	p = tcp4(&t, 1);
	p->ct_untracked = true;
	assert_int_equal(RUN(w, u, p), NF_DROP);
	assert_int_equal(RUN(w, v, p), NF_DROP);
	assert_int_equal(RUN(w, u, tcp4(&t, 1)), NF_ACCEPT);

	/* MARK --set-xmark 0x5/0xff, CONNMARK --save-mark, then -m connmark */
	struct nftdp_vm_chain *e = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, e, -1, false, TG("MARK", 2, mk), -1), 0);
	assert_int_equal(add(w, e, -1, false, TG("CONNMARK", 2, save), -1), 0);
	assert_int_equal(add(w, e, -1, false, MT("connmark", 1, cm), NF_DROP), 0);
	p = tcp4(&t, 1);
	p->mark = 0x1234;
	p->ct = &f;
	p->ct_ops = &fct_ops;
	assert_int_equal(RUN(w, e, p), NF_DROP);
	assert_int_equal(p->mark, 0x1205);
	assert_int_equal(f.mark, 0x1205);
	(void)cm;
}

static void test_targets_become_native(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);
	struct ipt_reject_info rj = {.with = IPT_ICMP_HOST_PROHIBITED};
	struct xt_log_info lg = {.level = 4, .prefix = "drop: "};
	struct xt_ct_target_info_v1 nt = {.flags = XT_CT_NOTRACK | XT_CT_NOTRACK_ALIAS};
	struct xt_ct_target_info_v1 zone = {.zone = 1};
	struct tpkt t;
	struct nftdp_vm_pkt *p;

	assert_int_equal(add(w, c, -1, false, TG("LOG", 0, lg), -1), 0);
	assert_int_equal(add(w, c, -1, false, TG("REJECT", 0, rj), -1), 0);
	p = tcp4(&t, 1);
	assert_int_equal(RUN(w, c, p), NF_DROP);
	assert_true(p->out.reject);
	assert_int_equal(p->out.reject_icmp_type, 3);
	assert_int_equal(p->out.reject_code, 10);
	lg.prefix[29] = 'x';
	assert_int_equal(add(w, c, -1, false, TG("LOG", 0, lg), -1), -EINVAL);
	lg.prefix[29] = 0;
	lg.level = 8;
	assert_int_equal(add(w, c, -1, false, TG("LOG", 0, lg), -1), -EINVAL);

	struct nftdp_vm_chain *r = chain(w, "raw", NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, nt), -1), 0);
	p = tcp4(&t, 1);
	assert_int_equal(RUN(w, r, p), NF_ACCEPT);
	assert_true(p->ct_untracked);
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, zone), -1), 0);
	nt.flags = 0x100;
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, nt), -1), -EINVAL);
	/* CT belongs to the raw table */
	nt.flags = XT_CT_NOTRACK;
	assert_int_equal(add(w, c, -1, false, TG("CT", 2, nt), -1), -EINVAL);
}

/* xt_CT: each revision's checks with xt_ct_tg_check's errnos, and the
 * template a packet not yet tracked takes (the first CT wins) */
static void test_ct_target(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *r = chain(w, "raw", NF_INET_PRE_ROUTING);
	struct nftdp_vm_chain *r2 = chain(w, "raw", NF_INET_PRE_ROUTING);
	struct nftdp_vm_chain *r3 = chain(w, "raw", NF_INET_LOCAL_OUT);
	struct xt_ct_target_info_v1 i = {.zone = 5, .flags = XT_CT_ZONE_DIR_ORIG};
	struct xt_ct_target_info i0 = {.zone = 9};
	struct xt_ct_target_info_v1 nt = {.flags = XT_CT_NOTRACK};
	struct tpkt t;
	struct nftdp_vm_pkt *p;

	/* rev 2: zone 5 in the original direction, events, ftp */
	i.ct_events = 1u << IPCT_NEW | 1u << IPCT_DESTROY;
	strcpy(i.helper, "ftp");
	assert_int_equal(add(w, r, IPPROTO_TCP, false, TG("CT", 2, i), -1), 0);
	p = tcp4(&t, 21);
	assert_int_equal(RUN(w, r, p), NF_ACCEPT);
	assert_int_equal(p->ct_zone, 5);
	assert_int_equal(p->ct_zone_dir, NFTDP_VM_CT_ZONE_DIR_ORIG);
	assert_int_equal(p->ct_tmpl_helper, NFTDP_VM_CT_HELPER_FTP);
	assert_int_equal(p->ct_tmpl_flags, NFTDP_VM_CT_TMPL_EVENTS);
	assert_int_equal(p->ct_tmpl_events, 1u << IPCT_NEW | 1u << IPCT_DESTROY);
	assert_false(p->ct_untracked);
	/* a later CT, or notrack, leaves the template alone (skb->_nfct set) */
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, nt), -1), 0);
	p = tcp4(&t, 21);
	assert_int_equal(RUN(w, r, p), NF_ACCEPT);
	assert_false(p->ct_untracked);
	assert_false(p->out.notrack);
	assert_int_equal(p->ct_zone, 5);
	/* and notrack first wins over a CT template */
	assert_int_equal(add(w, r2, -1, false, TG("CT", 2, nt), -1), 0);
	assert_int_equal(add(w, r2, IPPROTO_TCP, false, TG("CT", 2, i), -1), 0);
	p = tcp4(&t, 21);
	assert_int_equal(RUN(w, r2, p), NF_ACCEPT);
	assert_true(p->ct_untracked);
	assert_int_equal(p->ct_zone_dir, 0);
	assert_int_equal(p->ct_tmpl_helper, 0);
	/* --zone-reply mark; events given only for expectations: an empty
	 * ct mask */
	memset(&i, 0, sizeof(i));
	i.flags = XT_CT_ZONE_DIR_REPL | XT_CT_ZONE_MARK;
	i.exp_events = 1;
	assert_int_equal(add(w, r3, -1, false, TG("CT", 2, i), -1), 0);
	p = tcp4(&t, 80);
	assert_int_equal(RUN(w, r3, p), NF_ACCEPT);
	assert_int_equal(p->ct_zone_dir, NFTDP_VM_CT_ZONE_DIR_REPL);
	assert_int_equal(p->ct_tmpl_flags, NFTDP_VM_CT_TMPL_ZONE_MARK | NFTDP_VM_CT_TMPL_EVENTS);
	assert_int_equal(p->ct_tmpl_events, 0);
	assert_int_equal(p->ct_tmpl_helper, 0);

	/* the helper: -p not inverted (ENOENT), known for that protocol and
	 * family (ENOENT), a terminated name */
	memset(&i, 0, sizeof(i));
	strcpy(i.helper, "ftp");
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, i), -1), -ENOENT);
	assert_int_equal(add(w, r, IPPROTO_TCP, true, TG("CT", 2, i), -1), -ENOENT);
	assert_int_equal(add(w, r, IPPROTO_UDP, false, TG("CT", 2, i), -1), -ENOENT);
	strcpy(i.helper, "nosuch");
	assert_int_equal(add(w, r, IPPROTO_TCP, false, TG("CT", 2, i), -1), -ENOENT);
	strcpy(i.helper, "sane");
	assert_int_equal(add(w, r, IPPROTO_TCP, false, TG("CT", 2, i), -1), 0);
	strcpy(i.helper, "tftp");
	assert_int_equal(add(w, r, IPPROTO_UDP, false, TG("CT", 1, i), -1), 0);
	memset(i.helper, 'a', sizeof(i.helper));
	assert_int_equal(add(w, r, IPPROTO_TCP, false, TG("CT", 2, i), -1), -ENAMETOOLONG);
	/* --timeout: -p first (EINVAL), then no nfct policy by that name */
	memset(&i, 0, sizeof(i));
	strcpy(i.timeout, "slow");
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, i), -1), -EINVAL);
	assert_int_equal(add(w, r, IPPROTO_UDP, false, TG("CT", 2, i), -1), -ENOENT);
	memset(i.timeout, 'a', sizeof(i.timeout));
	assert_int_equal(add(w, r, IPPROTO_UDP, false, TG("CT", 1, i), -1), -ENAMETOOLONG);
	/* each revision's flags */
	memset(&i, 0, sizeof(i));
	i.flags = XT_CT_ZONE_DIR_ORIG;
	assert_int_equal(add(w, r, -1, false, TG("CT", 1, i), -1), -EINVAL);
	i.flags = XT_CT_NOTRACK_ALIAS;
	assert_int_equal(add(w, r, -1, false, TG("CT", 1, i), -1), -EINVAL);
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, i), -1), 0);
	i.flags = 1u << 6;
	assert_int_equal(add(w, r, -1, false, TG("CT", 2, i), -1), -EINVAL);
	i0.flags = XT_CT_NOTRACK_ALIAS;
	assert_int_equal(add(w, r, -1, false, TG("CT", 0, i0), -1), -EINVAL);
	/* rev 0: zone 9 in both directions */
	i0.flags = 0;
	assert_int_equal(add(w, r3, -1, false, TG("CT", 0, i0), -1), 0);
	/* the raw table only, any of its hooks (CT names no hooks) */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, TG("CT", 0, i0), -1), -EINVAL);
	assert_int_equal(add(w, chain(w, "raw", NF_INET_FORWARD), -1, false, TG("CT", 0, i0), -1),
			 0);
	/* NOTRACK (rev 0, no info) */
	{
		struct nftdp_vm_chain *r4 = chain(w, "raw", NF_INET_PRE_ROUTING);
		struct nftnl_expr *e = xt("target", "NOTRACK", 0, "", 0);

		assert_int_equal(add(w, r4, -1, false, e, -1), 0);
		p = tcp4(&t, 80);
		assert_int_equal(RUN(w, r4, p), NF_ACCEPT);
		assert_true(p->ct_untracked);
		assert_true(p->out.notrack);
	}
}

struct nflog_seen {
	unsigned int n;
	struct nftdp_vm_nflog_event ev;
	char prefix[64];
};

static void nflog_cb(const struct nftdp_vm_nflog_event *ev, void *arg)
{
	struct nflog_seen *s = arg;

	s->n++;
	s->ev = *ev;
	memcpy(s->prefix, ev->data, ev->prefix_len < 64 ? ev->prefix_len : 64);
}

/* NFLOG (xt_NFLOG.c) as log group: group, threshold, the length only with
 * XT_NFLOG_F_COPY_LEN; nothing recorded for an unbound group */
static void test_nflog_target(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);
	struct xt_nflog_info nl = {
	    .len = 20, .group = 5, .threshold = 3, .flags = XT_NFLOG_F_COPY_LEN, .prefix = "nfl "};
	struct nflog_seen seen = {0};
	struct tpkt t;

	assert_int_equal(add(w, c, -1, false, TG("NFLOG", 0, nl), -1), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(nftdp_vm_nflog_poll(w->st, nflog_cb, &seen), 0);
	nftdp_vm_nflog_bind(w->st, 5, true);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	assert_int_equal(nftdp_vm_nflog_poll(w->st, nflog_cb, &seen), 1);
	assert_int_equal(seen.ev.group, 5);
	assert_int_equal(seen.ev.qthreshold, 3);
	assert_int_equal(seen.ev.copy_len, 20);
	assert_int_equal(seen.ev.data_len, 20);
	assert_int_equal(seen.ev.skb_len, 40);
	assert_int_equal(seen.ev.mac_len, 14);
	assert_string_equal(seen.prefix, "nfl ");
	nftdp_vm_nflog_bind(w->st, 5, false);

	nl.flags = XT_NFLOG_F_COPY_LEN << 1;
	assert_int_equal(add(w, c, -1, false, TG("NFLOG", 0, nl), -1), -EINVAL);
	nl.flags = 0;
	memset(nl.prefix, 'x', sizeof(nl.prefix));
	assert_int_equal(add(w, c, -1, false, TG("NFLOG", 0, nl), -1), -EINVAL);
}

#define NS_PER_JIFFY 4000000ull /* HZ 250 */

static void test_limit(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	/* -m limit --limit 1/second --limit-burst 3 -j ACCEPT, policy drop */
	struct xt_rateinfo r = {.avg = XT_LIMIT_SCALE, .burst = 3};
	struct tpkt t;

	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("limit", 0, r), NF_DROP), 0);
	/* limit_mt_check: burst 0, or a rate whose credit overflows: ERANGE */
	r.burst = 0;
	assert_int_equal(add(w, c, -1, false, MT("limit", 0, r), -1), -ERANGE);
	r.burst = 2;
	r.avg = 0x90000000u; /* avg * burst wraps to less credit than avg */
	assert_int_equal(add(w, c, -1, false, MT("limit", 0, r), -1), -ERANGE);
	/* limit is the rule's own state: shared across chains only in a
	 * regular chain, but the order of packets shows */
	assert_false(nftdp_vm_chain_shares_state(c));
	assert_true(nftdp_vm_chain_order_state(c));
	w->ctx.now_ns = 1000 * NS_PER_JIFFY;
	for (int i = 0; i < 3; i++)
		assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	/* a credit of 1/s comes back after 250 jiffies, not 249 */
	w->ctx.now_ns += 249 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	w->ctx.now_ns += NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
	/* an hour later the bucket holds burst again, no more */
	w->ctx.now_ns += 3600ull * 250 * NS_PER_JIFFY;
	for (int i = 0; i < 3; i++)
		assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 1)), NF_ACCEPT);
}

static struct xt_hashlimit_mtinfo3 hl_info(const char *name, uint32_t mode, uint64_t per_s,
					   uint64_t burst)
{
	struct xt_hashlimit_mtinfo3 i = {.cfg = {.mode = mode,
						 .avg = XT_HASHLIMIT_SCALE_v2 / per_s,
						 .burst = burst,
						 .gc_interval = 1000,
						 .expire = 10000,
						 .srcmask = 32, /* iptables' default */
						 .dstmask = 32}};

	snprintf(i.name, sizeof(i.name), "%s", name);
	return i;
}

static struct nftdp_vm_pkt *tcp4_from(struct tpkt *t, uint8_t src_last, uint16_t dport)
{
	struct nftdp_vm_pkt *p = tcp4(t, dport);

	t->buf[29] = src_last;
	return p;
}

static void test_hashlimit(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);
	/* an SSH guard: --hashlimit-above 1/s --hashlimit-burst 2
	 * --hashlimit-mode srcip -j DROP */
	struct xt_hashlimit_mtinfo3 hl =
	    hl_info("ssh", XT_HASHLIMIT_HASH_SIP | XT_HASHLIMIT_INVERT, 1, 2);
	struct xt_hashlimit_mtinfo3 bad;
	struct xt_hashlimit_mtinfo1 hl1 = {.name = "v1",
					   .cfg = {.mode = XT_HASHLIMIT_HASH_SIP,
						   .avg = XT_HASHLIMIT_SCALE,
						   .burst = 1,
						   .gc_interval = 1000,
						   .expire = 1000,
						   .srcmask = 32,
						   .dstmask = 32}};
	struct tpkt t;

	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, hl), NF_DROP), 0);
	/* the same name in another chain: the same buckets (htable_find_get) */
	assert_int_equal(add(w, d, IPPROTO_TCP, false, MT("hashlimit", 3, hl), NF_DROP), 0);
	/* a table named by rules of several chains: state they share */
	assert_true(nftdp_vm_chain_shares_state(c));
	w->ctx.now_ns = 5000 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, d, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_DROP);
	/* another source has its own bucket */
	assert_int_equal(RUN(w, d, tcp4_from(&t, 2, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, d, tcp4_from(&t, 1, 22)), NF_DROP);
	w->ctx.now_ns += 250 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_DROP);

	/* checkentry's errnos */
	bad = hl;
	bad.cfg.gc_interval = 0;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EINVAL);
	bad = hl;
	bad.name[0] = 0;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EINVAL);
	bad = hl;
	bad.name[1] = '/';
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EINVAL);
	bad = hl;
	bad.cfg.srcmask = 33;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EINVAL);
	bad = hl;
	bad.cfg.mode |= 0x100;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EINVAL);
	bad = hl;
	bad.cfg.burst = 0;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -ERANGE);
	/* a rule counting bytes on a table that counts packets */
	bad = hl;
	bad.cfg.mode |= XT_HASHLIMIT_BYTES;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EOPNOTSUPP);
	assert_non_null(strstr(w->err.msg, "another mode"));
	/* rate-match: rev 3 only, a rate and an interval */
	bad = hl;
	snprintf(bad.name, sizeof(bad.name), "rm");
	bad.cfg.mode |= XT_HASHLIMIT_RATE_MATCH;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EINVAL);
	bad.cfg.interval = 1;
	bad.cfg.avg = 0;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -ERANGE);
	/* bytes: a rate so high that a chunk costs no credit */
	bad = hl;
	snprintf(bad.name, sizeof(bad.name), "by");
	bad.cfg.mode |= XT_HASHLIMIT_BYTES;
	bad.cfg.avg = 1;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, bad), -1), -EINVAL);

	/* revision 1 (1/s, burst 1) */
	struct nftdp_vm_chain *e = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, e, -1, false, MT("hashlimit", 1, hl1), NF_DROP), 0);
	assert_int_equal(RUN(w, e, tcp4_from(&t, 1, 22)), NF_DROP);
	assert_int_equal(RUN(w, e, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	w->ctx.now_ns += 250 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, e, tcp4_from(&t, 1, 22)), NF_DROP);
}

/* n packets of 40 bytes from one source through c: how many matched
 * (the rule drops what is under the limit) */
static int hl_run(struct world *w, struct nftdp_vm_chain *c, int n)
{
	struct tpkt t;
	int under = 0;

	for (int i = 0; i < n; i++)
		under += RUN(w, c, tcp4_from(&t, 9, 22)) == NF_DROP;
	return under;
}

static void test_hashlimit_bytes(void **state)
{
	struct world *w = *state;
	/* --hashlimit-upto 1kb/s --hashlimit-mode srcip: iptables sends
	 * UINT32_MAX / (1024 / 16 + 1), a chunk then costs 64527752 of the
	 * second's 4194304000 credits; a 40-byte packet is 3 chunks */
	struct xt_hashlimit_mtinfo3 hl =
	    hl_info("b", XT_HASHLIMIT_HASH_SIP | XT_HASHLIMIT_BYTES, 1, 0);
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);

	hl.cfg.avg = UINT32_MAX / 65;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, hl), NF_DROP), 0);
	/* a second's worth: 21 packets, 129055624 credits left */
	assert_int_equal(hl_run(w, c, 30), 21);
	/* 16777216 a jiffy: the next packet after 4 jiffies */
	w->ctx.now_ns += 3 * NS_PER_JIFFY;
	assert_int_equal(hl_run(w, c, 1), 0);
	w->ctx.now_ns += NS_PER_JIFFY;
	assert_int_equal(hl_run(w, c, 2), 1);
	/* --hashlimit-burst: refills of a second's worth when credit runs out */
	snprintf(hl.name, sizeof(hl.name), "b1");
	hl.cfg.burst = 1;
	assert_int_equal(add(w, d, IPPROTO_TCP, false, MT("hashlimit", 3, hl), NF_DROP), 0);
	assert_int_equal(hl_run(w, d, 60), 42);
}

static void test_hashlimit_rate_match(void **state)
{
	struct world *w = *state;
	/* --hashlimit-upto 10/s --hashlimit-burst 5 --hashlimit-rate-match
	 * --hashlimit-rate-interval 1: rate 10, burst 5 + 10 a second */
	struct xt_hashlimit_mtinfo3 hl =
	    hl_info("r", XT_HASHLIMIT_HASH_SIP | XT_HASHLIMIT_RATE_MATCH, 10, 5);
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);

	hl.cfg.interval = 1;
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("hashlimit", 3, hl), NF_DROP), 0);
	{
		/* rev 2 has no rate-match fields: the kernel would read the
		 * packet mode's as rate-match's; nftdp refuses it */
		struct xt_hashlimit_mtinfo2 h2 = {.name = "r2",
						  .cfg = {.mode = hl.cfg.mode,
							  .avg = hl.cfg.avg,
							  .burst = 5,
							  .gc_interval = 1000,
							  .expire = 10000}};

		assert_int_equal(add(w, d, IPPROTO_TCP, false, MT("hashlimit", 2, h2), NF_DROP),
				 -EOPNOTSUPP);
	}
	assert_int_equal(hl_run(w, c, 20), 15);
	/* within the interval: still over */
	w->ctx.now_ns += 249 * NS_PER_JIFFY;
	assert_int_equal(hl_run(w, c, 1), 0);
	/* the interval was over its rate (21 x 250 > 249 x 10... at 250
	 * jiffies: 21 x 250 > 250 x 10): the whole next one is */
	w->ctx.now_ns += NS_PER_JIFFY;
	assert_int_equal(hl_run(w, c, 1), 0);
	/* one packet in that interval: under, the next one is free again */
	w->ctx.now_ns += 250 * NS_PER_JIFFY;
	assert_int_equal(hl_run(w, c, 20), 15);

	/* bytes: 1kb/s (user2rate_bytes: 1024 bytes), no burst: 25 packets */
	snprintf(hl.name, sizeof(hl.name), "rb");
	hl.cfg.mode |= XT_HASHLIMIT_BYTES;
	hl.cfg.avg = UINT32_MAX / 65;
	hl.cfg.burst = 0;
	assert_int_equal(add(w, d, IPPROTO_TCP, false, MT("hashlimit", 3, hl), NF_DROP), 0);
	assert_int_equal(hl_run(w, d, 40), 25);
}

static void test_hashlimit_max(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	/* --hashlimit-htable-size 1 --hashlimit-htable-max 2: a third source
	 * finds no room and is dropped (hotdrop) until a bucket expires */
	struct xt_hashlimit_mtinfo3 hl = hl_info("small", XT_HASHLIMIT_HASH_SIP, 1, 5);
	struct tpkt t;

	hl.cfg.size = 1;
	hl.cfg.max = 2;
	hl.cfg.expire = 1000;
	assert_int_equal(add(w, c, -1, false, MT("hashlimit", 3, hl), NF_ACCEPT), 0);
	w->ctx.now_ns = 100 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4_from(&t, 2, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4_from(&t, 3, 22)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	/* 1000 ms = 250 jiffies later both have expired */
	w->ctx.now_ns += 250 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4_from(&t, 3, 22)), NF_ACCEPT);
}

/* the TCP checksum of t's IPv4 packet from scratch (0 when right) */
static uint16_t tcp4_csum_check(const uint8_t *ip, uint32_t tcplen)
{
	uint32_t sum = 0;

	for (int i = 12; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	sum += IPPROTO_TCP + tcplen;
	for (uint32_t i = 0; i < tcplen; i += 2)
		sum += (uint32_t)(ip[20 + i] << 8 | (i + 1 < tcplen ? ip[21 + i] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* a SYN 10.0.0.1 -> 10.0.0.2:22 with options NOP, NOP, MSS mss */
static struct nftdp_vm_pkt *syn_mss(struct tpkt *t, uint16_t mss)
{
	static const uint8_t opt[] = {1, 1, 2, 4};
	uint8_t *ip = t->buf + 14;
	uint16_t c;

	tcp4(t, 22);
	ip[3] = 48;    /* 20 + 28 */
	ip[32] = 0x70; /* doff 7 */
	memcpy(ip + 40, opt, 4);
	ip[44] = (uint8_t)(mss >> 8);
	ip[45] = (uint8_t)mss;
	ip[46] = ip[47] = 0; /* EOL, EOL */
	ip[36] = ip[37] = 0;
	c = tcp4_csum_check(ip, 28);
	ip[36] = (uint8_t)(c >> 8);
	ip[37] = (uint8_t)c;
	nftdp_vm_pkt_init(&t->pkt, t->buf, 14 + 48, 0, 14);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	return &t->pkt;
}

/* a route table where daddr's route has mtu stub_mtu[0] and saddr's
 * stub_mtu[1] (the syn_mss packet goes 10.0.0.1 -> 10.0.0.2) */
static uint32_t stub_mtu[2];

static bool stub_route4(const void *fib, uint32_t daddr, struct nftdp_vm_fib_route *out)
{
	(void)fib;
	memset(out, 0, sizeof(*out));
	out->type = 1; /* RTN_UNICAST */
	out->n_oif = 1;
	out->oif[0] = 2;
	out->mtu = stub_mtu[((const uint8_t *)&daddr)[3] == 1];
	return true;
}

static const struct nftdp_vm_fib_ops mtu_ops = {.route4 = stub_route4};

static void test_tcpmss(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "mangle", NF_INET_FORWARD);
	struct xt_tcpmss_info set = {.mss = 1400};
	struct xt_tcpmss_info pmtu = {.mss = XT_TCPMSS_CLAMP_PMTU};
	struct tpkt t;
	uint8_t *ip = t.buf + 14;

	/* TCPMSS needs -p tcp */
	assert_int_equal(add(w, c, -1, false, TG("TCPMSS", 0, set), -1), -EINVAL);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, TG("TCPMSS", 0, set), -1), 0);
	/* 1460 -> 1400, the checksum follows */
	assert_int_equal(RUN(w, c, syn_mss(&t, 1460)), NF_ACCEPT);
	assert_int_equal(ip[44] << 8 | ip[45], 1400);
	assert_int_equal(tcp4_csum_check(ip, 28), 0);
	/* never raised */
	assert_int_equal(RUN(w, c, syn_mss(&t, 1200)), NF_ACCEPT);
	assert_int_equal(ip[44] << 8 | ip[45], 1200);
	assert_int_equal(tcp4_csum_check(ip, 28), 0);
	/* a header longer than the packet: dropped */
	syn_mss(&t, 1460);
	ip[32] = 0xf0;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);

	/* --clamp-mss-to-pmtu: EINVAL in prerouting */
	assert_int_equal(add(w, chain(w, "mangle", NF_INET_PRE_ROUTING), IPPROTO_TCP, false,
			     TG("TCPMSS", 0, pmtu), -1),
			 -EINVAL);
	/* elsewhere the lower mtu of the routes there and back, less 40 */
	c = chain(w, "mangle", NF_INET_FORWARD);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, TG("TCPMSS", 0, pmtu), -1), 0);
	assert_true(nftdp_vm_chain_uses_fib(c)); /* the generation builds routes */
	syn_mss(&t, 1460)->hook = NF_INET_FORWARD;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT); /* no route table: unchanged */
	assert_int_equal(ip[44] << 8 | ip[45], 1460);
	w->ctx.fib_ops = &mtu_ops;
	stub_mtu[0] = 1400; /* there */
	stub_mtu[1] = 1500; /* back */
	syn_mss(&t, 1460)->hook = NF_INET_FORWARD;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(ip[44] << 8 | ip[45], 1360);
	assert_int_equal(tcp4_csum_check(ip, 28), 0);
	stub_mtu[1] = 1300;
	syn_mss(&t, 1460)->hook = NF_INET_FORWARD;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(ip[44] << 8 | ip[45], 1260);
	/* an mtu no larger than the headers: "unknown or invalid path-MTU" */
	stub_mtu[0] = 40;
	syn_mss(&t, 1460)->hook = NF_INET_FORWARD;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	w->ctx.fib_ops = NULL;
}

/* ---- rpfilter (expr_compat_rpfilter.c) ---- */

/* IPv6 from src to dst, the extension headers ext (extlen bytes, the
 * first of type nh; none: nh is UDP) and then 8 bytes of UDP */
static struct nftdp_vm_pkt *pkt6(struct tpkt *t, const char *src, const char *dst, uint8_t nh,
				 const uint8_t *ext, uint32_t extlen)
{
	uint8_t *p = t->buf + 14;

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, (const uint8_t[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x86, 0xdd}, 14);
	assert_true(14 + 40 + extlen + 8 <= sizeof(t->buf));
	p[0] = 0x60;
	p[4] = (uint8_t)((extlen + 8) >> 8);
	p[5] = (uint8_t)(extlen + 8);
	p[6] = extlen ? nh : IPPROTO_UDP;
	p[7] = 64;
	inet_pton(AF_INET6, src, p + 8);
	inet_pton(AF_INET6, dst, p + 24);
	memcpy(p + 40, ext, extlen);
	p[40 + extlen + 1] = 9;
	p[40 + extlen + 3] = 9;
	p[40 + extlen + 5] = 8;
	nftdp_vm_pkt_init(&t->pkt, t->buf, 14 + 40 + extlen + 8, 0, 14);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	return &t->pkt;
}

/* the route back to every source: type stub_rt_type over device 2 (and
 * 4 where stub_rt_paths is 2); none where stub_rt_type is 0 */
static uint8_t stub_rt_type, stub_rt_paths;
static uint32_t stub_rt_oif;

static bool stub_rt(struct nftdp_vm_fib_route *out)
{
	memset(out, 0, sizeof(*out));
	if (!stub_rt_type)
		return false;
	out->type = stub_rt_type;
	out->n_oif = stub_rt_paths;
	out->oif[0] = 2;
	out->oif[1] = 4;
	return true;
}

static bool stub_rt4(const void *fib, uint32_t daddr, struct nftdp_vm_fib_route *out)
{
	(void)fib;
	(void)daddr;
	return stub_rt(out);
}

static bool stub_rt6(const void *fib, const uint8_t daddr[16], uint32_t oif,
		     struct nftdp_vm_fib_route *out)
{
	(void)fib;
	(void)daddr;
	stub_rt_oif = oif;
	return stub_rt(out);
}

static const struct nftdp_vm_fib_ops rp_ops = {.route4 = stub_rt4, .route6 = stub_rt6};

static void test_rpfilter(void **state)
{
	struct world *w = *state;
	struct xt_rpfilter_info rp = {0};
	struct nftdp_vm_chain *c;
	struct tpkt t;

	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "rpfilter", 0, false), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV6, "rpfilter", 0, false), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "rpfilter", 1, false),
			 -EPROTONOSUPPORT);
	/* raw or mangle, PREROUTING only, known flags: EINVAL */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_PRE_ROUTING), -1, false, MT("rpfilter", 0, rp), -1),
	    -EINVAL);
	assert_int_equal(
	    add(w, chain(w, "mangle", NF_INET_FORWARD), -1, false, MT("rpfilter", 0, rp), -1),
	    -EINVAL);
	rp.flags = 0x10;
	assert_int_equal(
	    add(w, chain(w, "raw", NF_INET_PRE_ROUTING), -1, false, MT("rpfilter", 0, rp), -1),
	    -EINVAL);

	/* strict: the route back leaves through the input device */
	rp.flags = 0;
	c = chain(w, "raw", NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, c, -1, false, MT("rpfilter", 0, rp), NF_DROP), 0);
	assert_true(nftdp_vm_chain_uses_fib(c)); /* the generation builds routes */
	w->ctx.fib_ops = &rp_ops;
	stub_rt_type = RTN_UNICAST;
	stub_rt_paths = 1;
	tcp4(&t, 80)->iif = 2;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	tcp4(&t, 80)->iif = 3;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	stub_rt_paths = 2; /* any path of a multipath route */
	tcp4(&t, 80)->iif = 4;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	stub_rt_paths = 1;
	/* local: only with --accept-local; reject routes and none: no */
	stub_rt_type = RTN_LOCAL;
	tcp4(&t, 80)->iif = 2;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	stub_rt_type = RTN_BLACKHOLE;
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_ACCEPT);
	stub_rt_type = 0;
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_ACCEPT);
	/* a DHCP discover from 0.0.0.0 to the broadcast always passes */
	tcp4(&t, 80);
	memset(t.buf + 14 + 12, 0, 4);
	memset(t.buf + 14 + 16, 0xff, 4);
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);

	/* --loose --accept-local --invert (firewalld's -m rpfilter --invert) */
	rp.flags = XT_RPFILTER_LOOSE | XT_RPFILTER_ACCEPT_LOCAL | XT_RPFILTER_INVERT;
	c = chain(w, "mangle", NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, c, -1, false, MT("rpfilter", 0, rp), NF_DROP), 0);
	stub_rt_type = RTN_UNICAST;
	tcp4(&t, 80)->iif = 3;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	stub_rt_type = RTN_LOCAL;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	stub_rt_type = RTN_UNREACHABLE;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);

	/* IPv6, strict: a link-local source is looked up on its device */
	rp.flags = XT_RPFILTER_INVERT;
	c = chain_fam(w, NFPROTO_IPV6, "raw", NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, c, -1, false, MT("rpfilter", 0, rp), NF_DROP), 0);
	stub_rt_type = RTN_UNICAST;
	pkt6(&t, "2001:db8::1", "2001:db8::2", 0, NULL, 0)->iif = 2;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(stub_rt_oif, 0);
	pkt6(&t, "2001:db8::1", "2001:db8::2", 0, NULL, 0)->iif = 3;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	pkt6(&t, "fe80::1", "2001:db8::2", 0, NULL, 0)->iif = 2;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(stub_rt_oif, 2);
	/* the unspecified source passes; anycast and local do not */
	pkt6(&t, "::", "ff02::1", 0, NULL, 0)->iif = 3;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	stub_rt_type = RTN_ANYCAST;
	pkt6(&t, "2001:db8::1", "2001:db8::2", 0, NULL, 0)->iif = 2;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	stub_rt_type = RTN_LOCAL;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	w->ctx.fib_ops = NULL;
}

/* ---- connlimit (expr_compat_connlimit.c) ---- */

/* a connection: key, confirmed, live */
struct cl_conn {
	uint64_t key;
	bool confirmed, live;
	uint16_t zone;
};

static struct cl_conn cl_conns[8];

static uint64_t cl_key(const void *ct, bool *confirmed)
{
	const struct cl_conn *c = ct;

	*confirmed = c->confirmed;
	return c->key;
}

static bool cl_live(const void *ct, uint64_t key)
{
	(void)ct;
	return key >= 1 && key <= 8 && cl_conns[key - 1].live;
}

static uint32_t cl_state(const void *ct)
{
	(void)ct;
	return 1u << 3; /* NEW */
}

static bool cl_get(const void *ct, uint32_t key, int dir, void *dest, uint32_t len)
{
	const struct cl_conn *c = ct;

	(void)dir;
	if (key != NFT_CT_ZONE || len != 2)
		return false;
	memcpy(dest, &c->zone, 2);
	return true;
}

static const struct nftdp_vm_ct_ops cl_ops = {
    .get = cl_get, .state = cl_state, .conn_key = cl_key, .conn_live = cl_live};

/* connection n (1-8) from 10.0.0.src_last */
static unsigned int cl_run(struct world *w, struct nftdp_vm_chain *c, uint8_t src_last, int n)
{
	struct tpkt t;

	tcp4_from(&t, src_last, 22);
	if (n) {
		t.pkt.ct = &cl_conns[n - 1];
		t.pkt.ct_ops = &cl_ops;
	}
	w->ctx.now_ms++;
	return RUN(w, c, &t.pkt);
}

static void test_connlimit(void **state)
{
	struct world *w = *state;
	struct xt_connlimit_info ci = {.limit = 2};
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_LOCAL_IN);

	for (int i = 0; i < 8; i++)
		cl_conns[i] = (struct cl_conn){.key = (uint64_t)i + 1, .live = true};
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "connlimit", 1, false), 1);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "connlimit", 0, false),
			 -EPROTONOSUPPORT);
	/* --connlimit-above 2 --connlimit-mask 24 -j DROP */
	inet_pton(AF_INET, "255.255.255.0", &ci.v4_mask);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("connlimit", 1, ci), NF_DROP), 0);
	assert_int_equal(cl_run(w, c, 1, 1), NF_ACCEPT); /* 1 */
	assert_int_equal(cl_run(w, c, 2, 2), NF_ACCEPT); /* 2: same /24 */
	assert_int_equal(cl_run(w, c, 1, 3), NF_DROP);	 /* 3 > 2 */
	/* the same (unconfirmed) connection again is not counted twice */
	assert_int_equal(cl_run(w, c, 1, 3), NF_DROP);
	/* a confirmed connection's packet only counts */
	cl_conns[0].confirmed = true;
	assert_int_equal(cl_run(w, c, 1, 1), NF_DROP);
	/* one closes: its count goes down */
	cl_conns[2].live = false;
	cl_conns[1].live = false;
	assert_int_equal(cl_run(w, c, 1, 1), NF_ACCEPT); /* 1 left */
	assert_int_equal(cl_run(w, c, 1, 4), NF_ACCEPT); /* 2 */
	/* no conntrack entry: its own tuple counts once, not kept */
	assert_int_equal(cl_run(w, c, 1, 0), NF_DROP); /* 3 */

	/* --connlimit-upto 1 --connlimit-daddr (invert): per destination */
	for (int i = 0; i < 8; i++)
		cl_conns[i] = (struct cl_conn){.key = (uint64_t)i + 1, .live = true};
	ci.limit = 1;
	ci.flags = XT_CONNLIMIT_INVERT | XT_CONNLIMIT_DADDR;
	memset(&ci.v4_mask, 0xff, 4);
	c = chain(w, "filter", NF_INET_LOCAL_IN);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("connlimit", 1, ci), NF_DROP), 0);
	assert_int_equal(cl_run(w, c, 1, 5), NF_DROP);	 /* 1 <= 1 */
	assert_int_equal(cl_run(w, c, 2, 6), NF_ACCEPT); /* 2: same destination */
	/* another zone is another count (the kernel's key has zone->id) */
	cl_conns[6].zone = 3;
	assert_int_equal(cl_run(w, c, 3, 7), NF_DROP); /* 1 in zone 3 */
}

/* ---- ip6tables' rt, frag, hbh, dst, ipv6header (expr_compat_ip6ext.c) ---- */

#define P6(t, nh, ext) pkt6((t), "2001:db8::1", "2001:db8::2", (nh), (ext), sizeof(ext))

static void test_ip6ext(void **state)
{
	struct world *w = *state;
	struct ip6t_rt rt = {.rt_type = 0, .segsleft = {0, 0xffffffff}, .flags = IP6T_RT_TYP};
	struct ip6t_frag fr = {.ids = {0, 0xffffffff}, .flags = IP6T_FRAG_FST};
	struct ip6t_opts op = {.hdrlen = 8, .flags = IP6T_OPTS_LEN};
	struct ip6t_ipv6header_info ih = {.matchflags = MASK_HOPOPTS, .modeflag = 1};
	/* routing header type 0, segments left 1, one address */
	uint8_t rh0[24] = {IPPROTO_UDP, 2, 0, 1, 0, 0, 0, 0, 0x20, 0x01, 0x0d, 0xb8};
	uint8_t rh2[24] = {IPPROTO_UDP, 2, 2, 1};
	/* a first fragment (offset 0, MF), a later one (offset 8, last) */
	uint8_t fh0[8] = {IPPROTO_UDP, 0, 0, 1, 0, 0, 0, 7};
	uint8_t fh1[8] = {IPPROTO_UDP, 0, 0, 8, 0, 0, 0, 7};
	/* hop-by-hop: PadN of 4 bytes; then a destination options header */
	uint8_t hbh[16] = {60, 0, 1, 4, 0, 0, 0, 0, IPPROTO_UDP, 0, 1, 4};
	/* a routing header longer than the packet */
	uint8_t rlong[8] = {IPPROTO_UDP, 8, 0, 1};
	struct nftdp_vm_chain *c;
	struct tpkt t;

	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV6, "rt", 0, false), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "rt", 0, false), -ENOENT);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV6, "ipv6header", 0, false), 0);
	/* only in ip6 tables */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, MT("rt", 0, rt), -1),
	    -EOPNOTSUPP);

	/* rt: -m rt --rt-type 0 -j DROP (RH0) */
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("rt", 0, rt), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 43, rh0)), NF_DROP);
	assert_int_equal(RUN(w, c, P6(&t, 43, rh2)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, pkt6(&t, "2001:db8::1", "2001:db8::2", 0, NULL, 0)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, P6(&t, 43, rlong)), NF_ACCEPT); /* shorter than its length */
	/* a walk that cannot read the header: hotdrop */
	P6(&t, 43, rh0);
	t.pkt.len = 14 + 40 + 1;
	t.pkt.skb_len = 41;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	/* --rt-0-addrs strict: exactly the header's addresses */
	rt.flags = IP6T_RT_TYP | IP6T_RT_FST;
	rt.addrnr = 1;
	inet_pton(AF_INET6, "2001:db8::", &rt.addrs[0]);
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("rt", 0, rt), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 43, rh0)), NF_DROP);
	rh0[8] = 0x30;
	assert_int_equal(RUN(w, c, P6(&t, 43, rh0)), NF_ACCEPT);
	rh0[8] = 0x20;
	/* --rt-segssleft 2:5 */
	rt = (struct ip6t_rt){.segsleft = {2, 5}};
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("rt", 0, rt), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 43, rh0)), NF_ACCEPT);
	/* rt_mt6_check: --rt-0-* without --rt-type 0, unknown invflags */
	rt.flags = IP6T_RT_RES;
	assert_int_equal(add(w, c, -1, false, MT("rt", 0, rt), -1), -EINVAL);
	rt.flags = 0;
	rt.invflags = 0x08;
	assert_int_equal(add(w, c, -1, false, MT("rt", 0, rt), -1), -EINVAL);

	/* frag: --fragfirst, --fraglast, ids */
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("frag", 0, fr), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 44, fh0)), NF_DROP);
	assert_int_equal(RUN(w, c, P6(&t, 44, fh1)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, P6(&t, 43, rh0)), NF_ACCEPT);
	fr.flags = IP6T_FRAG_NMF | IP6T_FRAG_IDS;
	fr.ids[0] = fr.ids[1] = 7;
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("frag", 0, fr), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 44, fh0)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, P6(&t, 44, fh1)), NF_DROP);
	fr.invflags = IP6T_FRAG_INV_IDS;
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("frag", 0, fr), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 44, fh1)), NF_ACCEPT);
	fr.invflags = 0x04;
	assert_int_equal(add(w, c, -1, false, MT("frag", 0, fr), -1), -EINVAL);

	/* hbh --hbh-len 8, dst --dst-opts 1:4 (strict), hbh --hbh-opts 1:2 */
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("hbh", 0, op), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 0, hbh)), NF_DROP);
	assert_int_equal(RUN(w, c, P6(&t, 43, rh0)), NF_ACCEPT);
	op = (struct ip6t_opts){.flags = IP6T_OPTS_OPTS, .opts = {1 << 8 | 4}, .optsnr = 1};
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("dst", 0, op), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 0, hbh)), NF_DROP);
	op.opts[0] = 1 << 8 | 2;
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("hbh", 0, op), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 0, hbh)), NF_ACCEPT);
	op.flags |= IP6T_OPTS_NSTRICT; /* not implemented: EINVAL */
	assert_int_equal(add(w, c, -1, false, MT("hbh", 0, op), -1), -EINVAL);

	/* ipv6header --soft --header hop-by-hop; hard: exactly hop,dst,proto */
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("ipv6header", 0, ih), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 0, hbh)), NF_DROP);
	assert_int_equal(RUN(w, c, P6(&t, 43, rh0)), NF_ACCEPT);
	ih = (struct ip6t_ipv6header_info){.matchflags = MASK_HOPOPTS | MASK_DSTOPTS | MASK_PROTO};
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("ipv6header", 0, ih), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 0, hbh)), NF_DROP);
	ih.matchflags = MASK_HOPOPTS | MASK_PROTO;
	c = chain_fam(w, NFPROTO_IPV6, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("ipv6header", 0, ih), NF_DROP), 0);
	assert_int_equal(RUN(w, c, P6(&t, 0, hbh)), NF_ACCEPT);
	ih.invflags = 0x12; /* hard mode: 0 or 0xff */
	assert_int_equal(add(w, c, -1, false, MT("ipv6header", 0, ih), -1), -EINVAL);
}

/* ---- time and string (expr_compat_text.c) ---- */

static unsigned int time_at(struct world *w, struct nftdp_vm_chain *c, uint64_t secs)
{
	struct tpkt t;

	w->ctx.now_real_ns = secs * 1000000000ull;
	return RUN(w, c, tcp4(&t, 80));
}

static void test_time(void **state)
{
	struct world *w = *state;
	/* 2026-12-07 (a Monday) 13:30:00 UTC */
	const uint64_t mon = 1796650200;
	struct xt_time_info ti = {.date_start = 0,
				  .date_stop = 0x7fffffff,
				  .daytime_start = 0,
				  .daytime_stop = XT_TIME_MAX_DAYTIME,
				  .monthdays_match = XT_TIME_ALL_MONTHDAYS,
				  .weekdays_match = XT_TIME_ALL_WEEKDAYS};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "time", 0, false), 0);
	/* --weekdays Mon */
	ti.weekdays_match = 1 << 1;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), NF_DROP), 0);
	assert_int_equal(time_at(w, c, mon), NF_DROP);
	assert_int_equal(time_at(w, c, mon + 86400), NF_ACCEPT);
	assert_int_equal(time_at(w, c, mon + 6 * 86400), NF_ACCEPT); /* Sunday */
	assert_int_equal(time_at(w, c, mon + 7 * 86400), NF_DROP);
	/* --kerneltz: 14 hours east of Greenwich it is Tuesday 03:30 */
	ti.flags = XT_TIME_LOCAL_TZ;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), NF_DROP), 0);
	w->ctx.tz_minuteswest = -14 * 60;
	assert_int_equal(time_at(w, c, mon), NF_ACCEPT);
	w->ctx.tz_minuteswest = 0;
	assert_int_equal(time_at(w, c, mon), NF_DROP);
	/* --timestart 22:00 --timestop 02:00 (past midnight) --weekdays Mon */
	ti.flags = 0;
	ti.daytime_start = 22 * 3600;
	ti.daytime_stop = 2 * 3600;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), NF_DROP), 0);
	assert_int_equal(time_at(w, c, mon), NF_ACCEPT);	     /* 13:30 */
	assert_int_equal(time_at(w, c, mon + 9 * 3600), NF_DROP);    /* Mon 22:30 */
	assert_int_equal(time_at(w, c, mon + 12 * 3600), NF_ACCEPT); /* Tue 01:30 */
	assert_int_equal(time_at(w, c, mon - 12 * 3600), NF_DROP);   /* Mon 01:30 */
	/* --contiguous: Tuesday 01:30 still belongs to Monday */
	ti.flags = XT_TIME_CONTIGUOUS;
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), NF_DROP), 0);
	assert_int_equal(time_at(w, c, mon + 12 * 3600), NF_DROP);
	assert_int_equal(time_at(w, c, mon - 12 * 3600), NF_ACCEPT);
	/* --monthdays 7 --datestop 2026-12-31 */
	ti = (struct xt_time_info){.date_stop = 1798761599,
				   .daytime_stop = XT_TIME_MAX_DAYTIME,
				   .monthdays_match = 1 << 7,
				   .weekdays_match = XT_TIME_ALL_WEEKDAYS};
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), NF_DROP), 0);
	assert_int_equal(time_at(w, c, mon), NF_DROP);
	assert_int_equal(time_at(w, c, mon + 86400), NF_ACCEPT);
	assert_int_equal(time_at(w, c, mon + 31 * 86400), NF_ACCEPT); /* 2027-01-07 */
	/* time_mt_check: EDOM, EINVAL */
	ti.daytime_stop = 86400;
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), -1), -EDOM);
	ti.daytime_stop = 3600;
	ti.flags = XT_TIME_CONTIGUOUS;
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), -1), -EINVAL);
	ti.flags = 4;
	assert_int_equal(add(w, c, -1, false, MT("time", 0, ti), -1), -EINVAL);
	w->ctx.now_real_ns = 0;
}

static struct xt_string_info str_info(const char *algo, const char *pat, uint16_t from, uint16_t to,
				      uint8_t flags)
{
	struct xt_string_info i = {.from_offset = from, .to_offset = to};

	snprintf(i.algo, sizeof(i.algo), "%s", algo);
	memcpy(i.pattern, pat, strlen(pat));
	i.patlen = (uint8_t)strlen(pat);
	i.u.v1.flags = flags;
	return i;
}

/* UDP 10.0.0.1 -> 10.0.0.2 carrying payload */
static struct nftdp_vm_pkt *udp_with(struct tpkt *t, const char *payload)
{
	uint32_t n = (uint32_t)strlen(payload);

	tcp4(t, 53);
	assert_true(14 + 28 + n <= sizeof(t->buf));
	t->buf[14 + 9] = IPPROTO_UDP;
	t->buf[14 + 2] = 0;
	t->buf[14 + 3] = (uint8_t)(28 + n);
	t->buf[14 + 24] = 0;
	t->buf[14 + 25] = (uint8_t)(8 + n);
	memcpy(t->buf + 14 + 28, payload, n);
	nftdp_vm_pkt_init(&t->pkt, t->buf, 14 + 28 + n, 0, 14);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	return &t->pkt;
}

static void test_string(void **state)
{
	struct world *w = *state;
	struct xt_string_info si = str_info("bm", "cmd.exe", 0, 65535, 0);
	struct nftdp_vm_chain *c;
	struct tpkt t;

	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "string", 1, false), 1);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "string", 0, false),
			 -EPROTONOSUPPORT);
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), NF_DROP), 0);
	assert_int_equal(RUN(w, c, udp_with(&t, "GET /cmd.exe")), NF_DROP);
	assert_int_equal(RUN(w, c, udp_with(&t, "GET /CMD.exe")), NF_ACCEPT);
	assert_int_equal(RUN(w, c, udp_with(&t, "cmd.ex")), NF_ACCEPT);
	/* the IP packet's end, not the frame's: padding is not searched */
	udp_with(&t, "xxcmd.exe");
	t.pkt.skb_len -= 1;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	/* --icase --algo kmp, --from 28 --to 36: wholly within [from, to) */
	si = str_info("kmp", "cmd.exe", 28, 36, XT_STRING_FLAG_IGNORECASE);
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), NF_DROP), 0);
	assert_int_equal(RUN(w, c, udp_with(&t, "xCmD.ExE")), NF_DROP);
	assert_int_equal(RUN(w, c, udp_with(&t, "xxCmD.ExE")), NF_ACCEPT);
	assert_int_equal(RUN(w, c, udp_with(&t, "cmd.exe")), NF_DROP);
	/* ! --string */
	si = str_info("bm", "abc", 0, 65535, XT_STRING_FLAG_INVERT);
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), NF_DROP), 0);
	assert_int_equal(RUN(w, c, udp_with(&t, "xabc")), NF_ACCEPT);
	assert_int_equal(RUN(w, c, udp_with(&t, "xab")), NF_DROP);
	/* string_mt_check and textsearch_prepare */
	si = str_info("bm", "abc", 40, 20, 0);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), -1), -EINVAL);
	si = str_info("bm", "", 0, 20, 0);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), -1), -EINVAL);
	si = str_info("bm", "abc", 0, 20, 4);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), -1), -EINVAL);
	si = str_info("nosuch", "abc", 0, 20, 0);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), -1), -ENOENT);
	si = str_info("fsm", "abcd", 0, 20, 0);
	assert_int_equal(add(w, c, -1, false, MT("string", 1, si), -1), -EOPNOTSUPP);
}

static struct xt_recent_mtinfo_v1 recent_info(const char *name, uint8_t check_set, uint32_t seconds,
					      uint32_t hits)
{
	struct xt_recent_mtinfo_v1 i = {.seconds = seconds,
					.hit_count = hits,
					.check_set = check_set,
					.side = XT_RECENT_SOURCE};

	snprintf(i.name, sizeof(i.name), "%s", name);
	memset(&i.mask, 0xff, sizeof(i.mask));
	return i;
}

static void test_recent(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	/* an SSH brute-force guard: a 4th new connection within 60 s drops
	 * -m recent --name ssh --update --seconds 60 --hitcount 3 -j DROP
	 * -m recent --name ssh --set -j ACCEPT (policy: accept anyway) */
	struct xt_recent_mtinfo_v1 upd =
	    recent_info("ssh", XT_RECENT_UPDATE | XT_RECENT_TTL, 60, 3);
	struct xt_recent_mtinfo_v1 set = recent_info("ssh", XT_RECENT_SET, 0, 0);
	struct xt_recent_mtinfo_v1 rm = recent_info("ssh", XT_RECENT_REMOVE, 0, 0);
	struct xt_recent_mtinfo_v1 bad;
	struct tpkt t;

	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("recent", 1, upd), NF_DROP), 0);
	assert_int_equal(add(w, c, IPPROTO_TCP, false, MT("recent", 1, set), NF_ACCEPT), 0);
	assert_true(nftdp_vm_chain_shares_state(c));
	w->ctx.now_ns = 7000 * NS_PER_JIFFY;
	for (int i = 0; i < 3; i++)
		assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4_from(&t, 2, 22)), NF_ACCEPT);
	/* --update refreshed the stamps: still dropped 59 s on */
	w->ctx.now_ns += 59 * 250 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_DROP);
	w->ctx.now_ns += 61 * 250 * NS_PER_JIFFY;
	assert_int_equal(RUN(w, c, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	/* --remove in another chain forgets the address: the same list */
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, d, -1, false, MT("recent", 1, rm), NF_DROP), 0);
	assert_int_equal(RUN(w, d, tcp4_from(&t, 1, 22)), NF_DROP);
	assert_int_equal(RUN(w, d, tcp4_from(&t, 1, 22)), NF_ACCEPT);

	/* recent_mt_check's errnos */
	bad = set;
	bad.seconds = 5;
	assert_int_equal(add(w, c, -1, false, MT("recent", 1, bad), -1), -EINVAL);
	bad = set;
	bad.check_set |= XT_RECENT_CHECK;
	assert_int_equal(add(w, c, -1, false, MT("recent", 1, bad), -1), -EINVAL);
	bad = upd;
	bad.hit_count = 256;
	assert_int_equal(add(w, c, -1, false, MT("recent", 1, bad), -1), -EINVAL);
	bad = upd;
	bad.check_set |= XT_RECENT_REAP;
	bad.seconds = 0;
	assert_int_equal(add(w, c, -1, false, MT("recent", 1, bad), -1), -EINVAL);
	bad = upd;
	bad.name[0] = 0;
	assert_int_equal(add(w, c, -1, false, MT("recent", 1, bad), -1), -EINVAL);
	bad = upd;
	memset(bad.name, 'a', sizeof(bad.name));
	assert_int_equal(add(w, c, -1, false, MT("recent", 1, bad), -1), -ENAMETOOLONG);
}

static void test_recent_list_tot(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w, "filter", NF_INET_FORWARD);
	struct xt_recent_mtinfo_v1 set = recent_info("big", XT_RECENT_SET, 0, 0);
	struct xt_recent_mtinfo_v1 chk = recent_info("big", XT_RECENT_CHECK, 0, 0);
	struct nftdp_vm_chain *d = chain(w, "filter", NF_INET_FORWARD);
	struct tpkt t;

	assert_int_equal(add(w, c, -1, false, MT("recent", 1, set), -1), 0);
	assert_int_equal(add(w, d, -1, false, MT("recent", 1, chk), NF_DROP), 0);
	/* 101 addresses: the list keeps the last 100 (ip_list_tot) */
	for (int i = 0; i <= 100; i++)
		assert_int_equal(RUN(w, c, tcp4_from(&t, (uint8_t)(i + 1), 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, d, tcp4_from(&t, 1, 22)), NF_ACCEPT);
	assert_int_equal(RUN(w, d, tcp4_from(&t, 2, 22)), NF_DROP);
	assert_int_equal(RUN(w, d, tcp4_from(&t, 101, 22)), NF_DROP);
}

/* ebtables and arptables extensions: the kernel's checks, stored, not run */
/* what the REDIRECT target asked conntrack for */
static enum nftdp_vm_nat_kind redir_kind;
static struct nftdp_vm_nat_range redir_range;

static unsigned int fct_nat(void *ct, struct nftdp_vm_pkt *pkt, enum nftdp_vm_nat_kind kind,
			    const struct nftdp_vm_nat_range *range)
{
	(void)ct, (void)pkt;
	redir_kind = kind;
	redir_range = *range;
	return NF_ACCEPT;
}

static void test_redirect(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 1, .max_counters = 64, .max_cells = 64, .log_ring_size = 8};
	struct nf_nat_ipv4_multi_range_compat mr = {
	    .rangesize = 1,
	    .range = {{.flags = NF_NAT_RANGE_PROTO_SPECIFIED,
		       .min = {.tcp = {htons(8080)}},
		       .max = {.tcp = {htons(8080)}}}}};
	static const struct nftdp_vm_ct_ops ops = {fct_get, fct_set, fct_state, .nat = fct_nat};
	struct fake_ct f = {0};
	struct nftdp_vm_chain *pre;
	struct tpkt t;

	/* without --host-ports: refused, saying why, as nft redirect is */
	pre = chain(w, "nat", NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, pre, IPPROTO_TCP, false, TG("REDIRECT", 0, mr), -1), -EOPNOTSUPP);
	assert_non_null(strstr(w->err.msg, "local stack"));
	/* the kernel's own checks come first: EINVAL */
	mr.rangesize = 2;
	assert_int_equal(add(w, pre, IPPROTO_TCP, false, TG("REDIRECT", 0, mr), -1), -EINVAL);
	mr.rangesize = 1;

	/* with a local stack */
	for (int i = 0; i < w->n; i++)
		nftdp_vm_chain_destroy(w->chains[i]);
	w->n = 0;
	nftdp_vm_state_destroy(w->st);
	cfg.local_stack = true;
	assert_int_equal(nftdp_vm_state_create(&cfg, &w->st), 0);
	nftdp_vm_state_gen_begin(w->st);
	w->ctx.state = w->st;
	pre = chain(w, "nat", NF_INET_PRE_ROUTING);
	/* nat table only, prerouting (output: no loopback here) */
	assert_int_equal(add(w, chain(w, "filter", NF_INET_PRE_ROUTING), IPPROTO_TCP, false,
			     TG("REDIRECT", 0, mr), -1),
			 -EINVAL);
	assert_int_equal(add(w, chain(w, "nat", NF_INET_LOCAL_OUT), IPPROTO_TCP, false,
			     TG("REDIRECT", 0, mr), -1),
			 -EOPNOTSUPP);
	mr.range[0].flags |= NF_NAT_RANGE_MAP_IPS;
	assert_int_equal(add(w, pre, IPPROTO_TCP, false, TG("REDIRECT", 0, mr), -1), -EINVAL);
	mr.range[0].flags &= ~NF_NAT_RANGE_MAP_IPS;
	assert_int_equal(add(w, pre, IPPROTO_TCP, false, TG("REDIRECT", 0, mr), -1), 0);
	tcp4(&t, 80);
	t.pkt.ct = &f;
	t.pkt.ct_ops = &ops;
	redir_kind = NFTDP_VM_NAT_SNAT;
	assert_int_equal(RUN(w, pre, &t.pkt), NF_ACCEPT);
	assert_int_equal(redir_kind, NFTDP_VM_NAT_REDIR);
	assert_int_equal(redir_range.flags, NF_NAT_RANGE_PROTO_SPECIFIED);
	assert_int_equal(redir_range.min_proto, htons(8080));
	assert_int_equal(redir_range.max_proto, htons(8080));

	/* ip6tables' REDIRECT: struct nf_nat_range, the same checks */
	{
		struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV6,
						.table = "nat",
						.name = "c6",
						.base = true,
						.hook = NF_INET_PRE_ROUTING,
						.policy = NF_ACCEPT,
						.chain_id = 99};
		struct nf_nat_range nr = {.flags = NF_NAT_RANGE_PROTO_SPECIFIED,
					  .min_proto = {.tcp = {htons(8443)}},
					  .max_proto = {.tcp = {htons(8443)}}};
		struct nftdp_vm_chain *c6;

		assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c6), 0);
		w->chains[w->n++] = c6;
		nr.flags |= NF_NAT_RANGE_MAP_IPS;
		assert_int_equal(add(w, c6, IPPROTO_TCP, false, TG("REDIRECT", 0, nr), -1),
				 -EINVAL);
		nr.flags &= ~NF_NAT_RANGE_MAP_IPS;
		assert_int_equal(add(w, c6, IPPROTO_TCP, false, TG("REDIRECT", 0, nr), -1), 0);
	}
	/* revision queries: rev 0 for both families */
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "REDIRECT", 0, true), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV6, "REDIRECT", 0, true), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "REDIRECT", 1, true),
			 -EPROTONOSUPPORT);
}

/* NETMAP: the destination at prerouting, the source at postrouting, 1:1 */
static void test_netmap(void **state)
{
	struct world *w = *state;
	struct nf_nat_ipv4_multi_range_compat mr = {.rangesize = 1,
						    .range = {{.flags = NF_NAT_RANGE_MAP_IPS}}};
	struct nf_nat_range nr = {.flags = NF_NAT_RANGE_MAP_IPS};
	static const struct nftdp_vm_ct_ops ops = {fct_get, fct_set, fct_state, .nat = fct_nat};
	struct fake_ct f = {0};
	struct nftdp_vm_chain *pre, *post;
	struct tpkt t;

	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "NETMAP", 0, true), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV6, "NETMAP", 0, true), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "NETMAP", 1, true),
			 -EPROTONOSUPPORT);
	/* --to 192.168.0.0/16 */
	inet_pton(AF_INET, "192.168.0.0", &mr.range[0].min_ip);
	inet_pton(AF_INET, "192.168.255.255", &mr.range[0].max_ip);
	pre = chain(w, "nat", NF_INET_PRE_ROUTING);
	post = chain(w, "nat", NF_INET_POST_ROUTING);
	/* nat only; MAP_IPS and one range: EINVAL */
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_FORWARD), -1, false, TG("NETMAP", 0, mr), -1),
	    -EINVAL);
	mr.rangesize = 2;
	assert_int_equal(add(w, pre, -1, false, TG("NETMAP", 0, mr), -1), -EINVAL);
	mr.rangesize = 1;
	mr.range[0].flags = 0;
	assert_int_equal(add(w, pre, -1, false, TG("NETMAP", 0, mr), -1), -EINVAL);
	mr.range[0].flags = NF_NAT_RANGE_MAP_IPS;
	assert_int_equal(add(w, pre, -1, false, TG("NETMAP", 0, mr), -1), 0);
	assert_int_equal(add(w, post, -1, false, TG("NETMAP", 0, mr), -1), 0);
	/* 10.0.0.2 -> 192.168.0.2 as destination; 10.0.0.1 -> 192.168.0.1 as source */
	tcp4(&t, 80);
	t.pkt.ct = &f;
	t.pkt.ct_ops = &ops;
	t.pkt.hook = NF_INET_PRE_ROUTING;
	assert_int_equal(RUN(w, pre, &t.pkt), NF_ACCEPT);
	assert_int_equal(redir_kind, NFTDP_VM_NAT_DNAT);
	assert_int_equal(redir_range.flags, NF_NAT_RANGE_MAP_IPS);
	assert_memory_equal(redir_range.min_addr, ((const uint8_t[]){192, 168, 0, 2}), 4);
	assert_memory_equal(redir_range.max_addr, ((const uint8_t[]){192, 168, 0, 2}), 4);
	t.pkt.hook = NF_INET_POST_ROUTING;
	assert_int_equal(RUN(w, post, &t.pkt), NF_ACCEPT);
	assert_int_equal(redir_kind, NFTDP_VM_NAT_SNAT);
	assert_memory_equal(redir_range.min_addr, ((const uint8_t[]){192, 168, 0, 1}), 4);

	/* ip6tables: struct nf_nat_range, --to fd00:1::/64 */
	inet_pton(AF_INET6, "fd00:1::", &nr.min_addr.in6);
	inet_pton(AF_INET6, "fd00:1::ffff:ffff:ffff:ffff", &nr.max_addr.in6);
	pre = chain_fam(w, NFPROTO_IPV6, "nat", NF_INET_PRE_ROUTING);
	assert_int_equal(add(w, pre, -1, false, TG("NETMAP", 0, nr), -1), 0);
	pkt6(&t, "2001:db8::1", "2001:db8::abcd", 0, NULL, 0);
	t.pkt.ct = &f;
	t.pkt.ct_ops = &ops;
	t.pkt.hook = NF_INET_PRE_ROUTING;
	assert_int_equal(RUN(w, pre, &t.pkt), NF_ACCEPT);
	assert_int_equal(redir_kind, NFTDP_VM_NAT_DNAT);
	{
		uint8_t want[16];

		inet_pton(AF_INET6, "fd00:1::abcd", want);
		assert_memory_equal(redir_range.min_addr, want, 16);
	}
	nr.flags = 0;
	assert_int_equal(add(w, pre, -1, false, TG("NETMAP", 0, nr), -1), -EINVAL);
}

/* u32: the test programs of iptables' u32 man page */
static void test_u32(void **state)
{
	struct world *w = *state;
	struct xt_u32 u = {0};
	struct nftdp_vm_chain *c;
	struct tpkt t;

	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "u32", 0, false), 0);
	/* "0>>22&0x3C@0>>16=80": TCP's source port... here the destination
	 * port word: "0>>22&0x3C@0&0xFFFF=80" */
	u.ntests = 1;
	u.tests[0] = (struct xt_u32_test){.location = {{0, 0},
						       {22, XT_U32_RIGHTSH},
						       {0x3C, XT_U32_AND},
						       {0, XT_U32_AT},
						       {0xFFFF, XT_U32_AND}},
					  .nnums = 5,
					  .value = {{80, 80}},
					  .nvalues = 1};
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("u32", 0, u), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_DROP);
	assert_int_equal(RUN(w, c, tcp4(&t, 81)), NF_ACCEPT);
	/* "6&0xFF=6 && 0>>22&0x3C@12>>26&0x3C@0=0x47455420": past the end */
	u.ntests = 2;
	u.tests[1] = (struct xt_u32_test){.location = {{0, 0},
						       {22, XT_U32_RIGHTSH},
						       {0x3C, XT_U32_AND},
						       {12, XT_U32_AT},
						       {26, XT_U32_RIGHTSH},
						       {0x3C, XT_U32_AND},
						       {0, XT_U32_AT}},
					  .nnums = 7,
					  .value = {{0x47455420, 0x47455420}},
					  .nvalues = 1};
	u.tests[0] = (struct xt_u32_test){
	    .location = {{6, 0}, {0xFF, XT_U32_AND}}, .nnums = 2, .value = {{6, 6}}, .nvalues = 1};
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("u32", 0, u), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_ACCEPT); /* no payload: no read */
	/* ! --u32 "0>>28=4" (not IPv4) */
	u = (struct xt_u32){.ntests = 1, .invert = 1};
	u.tests[0] = (struct xt_u32_test){.location = {{0, 0}, {28, XT_U32_RIGHTSH}},
					  .nnums = 2,
					  .value = {{4, 4}},
					  .nvalues = 1};
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("u32", 0, u), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_ACCEPT);
	/* an offset past the IP packet (its length, not the frame's) */
	u = (struct xt_u32){.ntests = 1};
	u.tests[0] = (struct xt_u32_test){
	    .location = {{36, 0}}, .nnums = 1, .value = {{0, 0xffffffff}}, .nvalues = 1};
	c = chain(w, "filter", NF_INET_FORWARD);
	assert_int_equal(add(w, c, -1, false, MT("u32", 0, u), NF_DROP), 0);
	assert_int_equal(RUN(w, c, tcp4(&t, 80)), NF_DROP); /* bytes 36-39 of 40 */
	tcp4(&t, 80)->skb_len = 39;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	/* u32_mt_checkentry: EINVAL */
	u.ntests = 12;
	assert_int_equal(add(w, c, -1, false, MT("u32", 0, u), -1), -EINVAL);
	u.ntests = 1;
	u.tests[0].nvalues = 12;
	assert_int_equal(add(w, c, -1, false, MT("u32", 0, u), -1), -EINVAL);
}

static void test_bridge_arp(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_BRIDGE,
					.table = "filter",
					.name = "FORWARD",
					.base = true,
					.hook = 2, /* NF_BR_FORWARD */
					.policy = NF_ACCEPT};
	struct nftdp_vm_chain *br, *arp;
	struct ebt_ip_info ip = {
	    .protocol = IPPROTO_TCP, .bitmask = EBT_IP_PROTO | EBT_IP_DPORT, .dport = {22, 22}};
	struct ebt_vlan_info vl = {.prio = 9, .bitmask = EBT_VLAN_PRIO};
	struct ebt_mark_t_info mk = {.mark = 7, .target = MARK_SET_VALUE | (EBT_CONTINUE & 0xf)};
	struct arpt_mangle mg = {.flags = ARPT_MANGLE_SIP, .target = NF_ACCEPT};
	const int ipv4 = htons(ETH_P_IP);
	uint8_t info[64] = {0};

	d.chain_id = (uint32_t)w->n;
	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &br), 0);
	w->chains[w->n++] = br;
	d.family = NFPROTO_ARP;
	d.hook = NF_ARP_OUT;
	d.chain_id = (uint32_t)w->n;
	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &arp), 0);
	w->chains[w->n++] = arp;

	/* ebt_ip: -p IPv4, not inverted; ports only for a port protocol */
	assert_int_equal(add(w, br, ipv4, false, MT("ip", 0, ip), NF_DROP), 0);
	assert_int_equal(add(w, br, -1, false, MT("ip", 0, ip), -1), -EINVAL);
	assert_int_equal(add(w, br, ipv4, true, MT("ip", 0, ip), -1), -EINVAL);
	ip.protocol = IPPROTO_ICMP;
	assert_int_equal(add(w, br, ipv4, false, MT("ip", 0, ip), -1), -EINVAL);
	ip.protocol = IPPROTO_TCP;
	ip.dport[0] = 23;
	assert_int_equal(add(w, br, ipv4, false, MT("ip", 0, ip), -1), -EINVAL);
	/* the size of the bridge family's ip, not iptables' */
	assert_int_equal(add(w, br, ipv4, false, xt("match", "ip", 0, info, 64), -1), -EINVAL);
	/* ebt_vlan: -p 802_1Q; a priority above 7 only when an id makes it moot */
	assert_int_equal(add(w, br, htons(ETH_P_8021Q), false, MT("vlan", 0, vl), -1), -EINVAL);
	vl.id = 10;
	vl.bitmask |= EBT_VLAN_ID;
	assert_int_equal(add(w, br, htons(ETH_P_8021Q), false, MT("vlan", 0, vl), -1), 0);
	assert_int_equal(add(w, br, ipv4, false, MT("vlan", 0, vl), -1), -EINVAL);
	/* ebt_mark: a standard verdict and a known operation */
	assert_int_equal(add(w, br, -1, false, TG("mark", 0, mk), -1), 0);
	mk.target = EBT_CONTINUE & 0xf;
	assert_int_equal(add(w, br, -1, false, TG("mark", 0, mk), -1), -EINVAL);
	mk.target = MARK_OR_VALUE | 0x5; /* verdict -11 */
	assert_int_equal(add(w, br, -1, false, TG("mark", 0, mk), -1), -EINVAL);
	/* arpt_mangle: something to mangle, a verdict of drop, accept, continue */
	assert_int_equal(add(w, arp, -1, false, TG("mangle", 0, mg), -1), 0);
	mg.flags = 0;
	assert_int_equal(add(w, arp, -1, false, TG("mangle", 0, mg), -1), -EINVAL);
	mg.flags = ARPT_MANGLE_SIP;
	mg.target = 7;
	assert_int_equal(add(w, arp, -1, false, TG("mangle", 0, mg), -1), -EINVAL);
	/* one family's extensions are not another's */
	assert_int_equal(add(w, br, -1, false, TG("mangle", 0, mg), -1), -EOPNOTSUPP);
	assert_int_equal(
	    add(w, chain(w, "filter", NF_INET_LOCAL_IN), ipv4, false, MT("ip", 0, ip), -1),
	    -EOPNOTSUPP);
	/* others are refused, named */
	assert_int_equal(add(w, br, -1, false, xt("match", "among", 0, info, 16), -1), -EOPNOTSUPP);
	assert_non_null(strstr(w->err.msg, "among"));
	/* revision queries */
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "ip", 0, false), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "ip", 1, false),
			 -EPROTONOSUPPORT);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_ARP, "mangle", 0, true), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "tcp", 0, false), -ENOENT);
}

/* an arp chain of its own at hook (chain id = index) */
static struct nftdp_vm_chain *arp_chain(struct world *w, uint8_t hook)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_ARP,
					.table = "filter",
					.name = hook == NF_ARP_IN ? "INPUT" : "OUTPUT",
					.base = true,
					.hook = hook,
					.policy = NF_ACCEPT,
					.chain_id = (uint32_t)w->n};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c), 0);
	w->chains[w->n++] = c;
	return c;
}

/* an ARP frame of len bytes as the arp hooks see it: ethernet, then an
 * ARP header with hardware type hrd and address lengths hln, pln, the
 * address bytes after it numbered 0x80, 0x81, ... */
static struct nftdp_vm_pkt *arp_frame(struct tpkt *t, uint16_t hrd, uint8_t hln, uint8_t pln,
				      uint32_t len)
{
	static const uint8_t hdr[22] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 1,
					0x10, 0x08, 0x06, 0,	1,    8,    0, 6, 4, 0, 2};

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, hdr, sizeof(hdr));
	t->buf[14] = (uint8_t)(hrd >> 8);
	t->buf[15] = (uint8_t)hrd;
	t->buf[18] = hln;
	t->buf[19] = pln;
	for (unsigned int i = 22; i < sizeof(t->buf); i++)
		t->buf[i] = (uint8_t)(0x80 + i - 22);
	nftdp_vm_pkt_init(&t->pkt, t->buf, len, 0, 14);
	t->pkt.protocol = htons(ETH_P_ARP);
	t->pkt.nfproto = NFPROTO_ARP;
	t->pkt.hook = NF_ARP_OUT;
	t->pkt.skb_len = len - 14;
	return &t->pkt;
}

/* buf[off..off+n) still holds arp_frame's numbering */
static bool untouched(const struct tpkt *t, unsigned int off, unsigned int n)
{
	for (unsigned int i = off; i < off + n; i++)
		if (t->buf[i] != (uint8_t)(0x80 + i - 22))
			return false;
	return true;
}

/* arpt_mangle's target: each field at the offset the frame's own lengths
 * give, hln bytes of the device address (at most 16), pln of the IPv4
 * address (at most 4); past the frame's end or longer: drop; the verdict
 * --mangle-target's */
static void test_arp_mangle_eval(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *sc = arp_chain(w, NF_ARP_OUT), *tc = arp_chain(w, NF_ARP_OUT);
	struct nftdp_vm_chain *dc = arp_chain(w, NF_ARP_IN), *ic = arp_chain(w, NF_ARP_OUT);
	struct arpt_mangle s = {.src_devaddr = {2, 0, 0, 0, 9, 1, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
				.u_s.src_ip.s_addr = htonl(0x0a000063),
				.flags = ARPT_MANGLE_SDEV | ARPT_MANGLE_SIP,
				.target = NF_ACCEPT};
	struct arpt_mangle tg = {.tgt_devaddr = {2, 0, 0, 0, 9, 4},
				 .u_t.tgt_ip.s_addr = htonl(0x0a00002c),
				 .flags = ARPT_MANGLE_TDEV | ARPT_MANGLE_TIP,
				 .target = (int)XT_CONTINUE};
	struct arpt_mangle dr = {
	    .u_s.src_ip.s_addr = htonl(0x0a000005), .flags = ARPT_MANGLE_SIP, .target = NF_DROP};
	struct arpt_mangle ip = {
	    .u_t.tgt_ip.s_addr = htonl(0x0a000007), .flags = ARPT_MANGLE_TIP, .target = NF_ACCEPT};
	struct tpkt t;

	assert_int_equal(add(w, sc, -1, false, TG("mangle", 0, s), -1), 0);
	assert_int_equal(add(w, tc, -1, false, TG("mangle", 0, tg), -1), 0);
	assert_int_equal(add(w, tc, -1, false, ex("counter"), NF_DROP), 0);
	assert_int_equal(add(w, dc, -1, false, TG("mangle", 0, dr), -1), 0);
	assert_int_equal(add(w, ic, -1, false, TG("mangle", 0, ip), -1), 0);

	/* ethernet/IPv4: sha and spa, ACCEPT; the rest as it was */
	arp_frame(&t, 1, 6, 4, 42);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 22, s.src_devaddr, 6);
	assert_memory_equal(t.buf + 28, &s.u_s.src_ip, 4);
	assert_true(untouched(&t, 32, 10));
	assert_int_equal(t.buf[6], 2); /* the ethernet header is not the payload */
	/* tha and tpa, CONTINUE: the next rule runs (drop) */
	arp_frame(&t, 1, 6, 4, 42);
	assert_int_equal(RUN(w, tc, &t.pkt), NF_DROP);
	assert_true(untouched(&t, 22, 10));
	assert_memory_equal(t.buf + 32, tg.tgt_devaddr, 6);
	assert_memory_equal(t.buf + 38, &tg.u_t.tgt_ip, 4);
	/* DROP, after writing (input chains too) */
	arp_frame(&t, 1, 6, 4, 42);
	t.pkt.hook = NF_ARP_IN;
	assert_int_equal(RUN(w, dc, &t.pkt), NF_DROP);
	assert_memory_equal(t.buf + 28, &dr.u_s.src_ip, 4);
	/* ar_hrd is not looked at: another hardware type, 6 bytes, written */
	arp_frame(&t, 6, 6, 4, 42);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 22, s.src_devaddr, 6);
	/* 8-byte hardware addresses: 8 bytes of --mangle-mac-s, the IP after */
	arp_frame(&t, 0x20, 8, 4, 22 + 24);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 22, s.src_devaddr, 8);
	assert_memory_equal(t.buf + 30, &s.u_s.src_ip, 4);
	assert_true(untouched(&t, 34, 12));
	/* 20-byte hardware addresses (InfiniBand): over 16, sha drops */
	arp_frame(&t, 0x20, 20, 4, 22 + 48);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_DROP);
	assert_true(untouched(&t, 22, 48));
	/* ... but tpa alone is written after them */
	arp_frame(&t, 0x20, 20, 4, 22 + 48);
	assert_int_equal(RUN(w, ic, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 22 + 44, &ip.u_t.tgt_ip, 4);
	assert_true(untouched(&t, 22, 44));
	/* 16-byte protocol addresses: over 4, spa drops (sha written first) */
	arp_frame(&t, 1, 6, 16, 22 + 44);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_DROP);
	assert_memory_equal(t.buf + 22, s.src_devaddr, 6);
	assert_true(untouched(&t, 28, 38));
	/* 2-byte protocol addresses: the IPv4 address's first 2 bytes */
	arp_frame(&t, 1, 6, 2, 22 + 16);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 28, &s.u_s.src_ip, 2);
	assert_true(untouched(&t, 30, 8));
	/* short: tpa runs 2 bytes past the end; tha written, then drop */
	arp_frame(&t, 1, 6, 4, 40);
	assert_int_equal(RUN(w, tc, &t.pkt), NF_DROP);
	assert_memory_equal(t.buf + 32, tg.tgt_devaddr, 6);
	assert_true(untouched(&t, 38, 4));
	/* ... while a mangle of the fields that are there goes on */
	arp_frame(&t, 1, 6, 4, 40);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 28, &s.u_s.src_ip, 4);
	/* shorter than the ARP header, or not writable: drop, nothing read */
	arp_frame(&t, 1, 6, 4, 21);
	assert_int_equal(RUN(w, sc, &t.pkt), NF_DROP);
	assert_true(untouched(&t, 22, 20));
	arp_frame(&t, 1, 6, 4, 42);
	t.pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_WRITABLE;
	assert_int_equal(RUN(w, sc, &t.pkt), NF_DROP);
	assert_true(untouched(&t, 22, 20));
}

/* a bridge chain of its own (chain id = index) */
static struct nftdp_vm_chain *br_chain(struct world *w)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_BRIDGE,
					.table = "filter",
					.name = "FORWARD",
					.base = true,
					.hook = 2, /* NF_BR_FORWARD */
					.policy = NF_ACCEPT,
					.chain_id = (uint32_t)w->n};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c), 0);
	w->chains[w->n++] = c;
	return c;
}

/* tcp4's frame as a bridge chain sees it, with an 802.1Q tag (tci) in
 * front of the IP header when tagged (dataplane/bridge.c's view) */
static struct nftdp_vm_pkt *br_frame(struct tpkt *t, uint16_t dport, bool tagged, uint16_t tci)
{
	tcp4(t, dport);
	if (tagged) {
		memmove(t->buf + 16, t->buf + 12, 42);
		t->buf[12] = 0x81;
		t->buf[13] = 0x00;
		t->buf[14] = (uint8_t)(tci >> 8);
		t->buf[15] = (uint8_t)tci;
		nftdp_vm_pkt_init(&t->pkt, t->buf, 58, 0, 18);
		nftdp_vm_pkt_parse_ip(&t->pkt);
	}
	t->pkt.nfproto = NFPROTO_BRIDGE;
	t->pkt.pkttype = PACKET_OTHERHOST;
	t->pkt.flags |= NFTDP_VM_PKT_F_WRITABLE;
	return &t->pkt;
}

/* The ebtables extensions evaluated in bridge chains, as ebt_*.c */
static void test_bridge_eval(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *ipc = br_chain(w), *vc = br_chain(w), *mc = br_chain(w);
	struct ebt_ip_info ip = {.protocol = IPPROTO_TCP,
				 .bitmask = EBT_IP_PROTO | EBT_IP_DPORT | EBT_IP_SOURCE,
				 .dport = {20, 22},
				 .saddr = htonl(0x0a000000),
				 .smsk = htonl(0xff000000)};
	struct ebt_vlan_info vl = {.id = 10, .prio = 3, .bitmask = EBT_VLAN_ID | EBT_VLAN_PRIO};
	struct ebt_mark_t_info mk = {.mark = 7, .target = MARK_SET_VALUE | (EBT_CONTINUE & 0xf)};
	struct ebt_mark_t_info mka = {.mark = 0x10, .target = MARK_OR_VALUE | (EBT_ACCEPT & 0xf)};
	struct ebt_mark_m_info mm = {.mark = 7, .mask = 0xff, .bitmask = EBT_MARK_AND};
	struct ebt_pkttype_info pt = {.pkt_type = PACKET_BROADCAST, .invert = 1};
	struct tpkt t;

	/* ip: 10.0.0.0/8, tcp dport 20-22: drop */
	assert_int_equal(add(w, ipc, htons(ETH_P_IP), false, MT("ip", 0, ip), NF_DROP), 0);
	assert_int_equal(RUN(w, ipc, br_frame(&t, 22, false, 0)), NF_DROP);
	assert_int_equal(RUN(w, ipc, br_frame(&t, 23, false, 0)), NF_ACCEPT);
	ip.invflags = EBT_IP_DPORT; /* ! --ip-dport 20:22 */
	assert_int_equal(add(w, ipc, htons(ETH_P_IP), false, MT("ip", 0, ip), NF_DROP), 0);
	assert_int_equal(RUN(w, ipc, br_frame(&t, 80, false, 0)), NF_DROP);
	/* a later fragment has no ports: no match */
	br_frame(&t, 80, false, 0);
	t.buf[14 + 7] = 1;
	assert_int_equal(RUN(w, ipc, &t.pkt), NF_ACCEPT);

	/* vlan id 10 (the check drops --vlan-prio when an id is given): drop */
	assert_int_equal(add(w, vc, htons(ETH_P_8021Q), false, MT("vlan", 0, vl), NF_DROP), 0);
	assert_int_equal(RUN(w, vc, br_frame(&t, 80, true, 0xa00a)), NF_DROP); /* pcp 5 */
	assert_int_equal(RUN(w, vc, br_frame(&t, 80, true, 0x600b)), NF_ACCEPT);
	/* untagged: the "tag" read at the network header (0x4500 0x0028) */
	assert_int_equal(RUN(w, vc, br_frame(&t, 80, false, 0)), NF_ACCEPT);

	/* mark target (continue), mark match, pkttype, mark target (accept) */
	assert_int_equal(add(w, mc, -1, false, TG("mark", 0, mk), -1), 0);
	assert_int_equal(add(w, mc, -1, false, MT("pkttype", 0, pt), -1), 0);
	assert_int_equal(add(w, mc, -1, false, MT("mark_m", 0, mm), -1), 0);
	assert_int_equal(add(w, mc, -1, false, TG("mark", 0, mka), -1), 0);
	assert_int_equal(add(w, mc, -1, false, ex("counter"), NF_DROP), 0);
	br_frame(&t, 80, false, 0);
	assert_int_equal(RUN(w, mc, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.mark, 0x17);
	br_frame(&t, 80, false, 0);
	t.pkt.pkttype = PACKET_BROADCAST; /* the pkttype rule breaks, the rest runs */
	assert_int_equal(RUN(w, mc, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.mark, 0x17);
}

/* ebt_arp: addresses, gratuitous, sender MAC, on an ARP request */
static void test_bridge_eval_arp(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = br_chain(w);
	struct ebt_arp_info src = {
	    .saddr = htonl(0x0a000042), .smsk = 0xffffffff, .bitmask = EBT_ARP_SRC_IP};
	struct ebt_arp_info grat = {.bitmask = EBT_ARP_GRAT};
	struct ebt_arp_info mac = {.smaddr = {2, 0, 0, 0, 1, 0x10},
				   .smmsk = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
				   .opcode = htons(1),
				   .bitmask = EBT_ARP_SRC_MAC | EBT_ARP_OPCODE,
				   .invflags = EBT_ARP_SRC_MAC};
	static const uint8_t req[42] = {
	    /* broadcast from 02:00:00:00:01:10, ARP */
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    2,
	    0,
	    0,
	    0,
	    1,
	    0x10,
	    0x08,
	    0x06,
	    /* ethernet/ip, request */
	    0,
	    1,
	    8,
	    0,
	    6,
	    4,
	    0,
	    1,
	    /* sha, spa 10.0.0.1, tha, tpa 10.0.0.9 */
	    2,
	    0,
	    0,
	    0,
	    1,
	    0x10,
	    10,
	    0,
	    0,
	    1,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    10,
	    0,
	    0,
	    9,
	};
	struct tpkt t;

	assert_int_equal(add(w, c, htons(ETH_P_ARP), false, MT("arp", 0, src), NF_DROP), 0);
	assert_int_equal(add(w, c, htons(ETH_P_ARP), false, MT("arp", 0, grat), NF_DROP), 0);
	assert_int_equal(add(w, c, htons(ETH_P_ARP), false, MT("arp", 0, mac), NF_DROP), 0);
	memset(&t, 0, sizeof(t));
	memcpy(t.buf, req, sizeof(req));
	nftdp_vm_pkt_init(&t.pkt, t.buf, 60, 0, 14);
	t.pkt.nfproto = NFPROTO_BRIDGE;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT); /* 10.0.0.1 asks for 10.0.0.9 */
	t.buf[31] = 0x42;				/* from 10.0.0.66 */
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	t.buf[31] = 9; /* gratuitous: 10.0.0.9 for itself */
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	t.buf[31] = 1;
	t.buf[27] = 0x11; /* ! --arp-mac-src 02:00:00:00:01:10 */
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
}

/* a bridge chain of table in hook (base) or a user chain */
static struct nftdp_vm_chain *br_nat_chain(struct world *w, const char *table, int hook)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_BRIDGE,
					.table = table,
					.name = hook < 0 ? "user" : "base",
					.base = hook >= 0,
					.hook = (uint8_t)(hook < 0 ? 0 : hook),
					.policy = NF_ACCEPT,
					.chain_id = (uint32_t)w->n};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c), 0);
	w->chains[w->n++] = c;
	return c;
}

/* ebtables' nat targets: xt_check_target's and each checkentry's errnos
 * (table, hook, verdict, -p ARP for arpreply), revisions */
static void test_bridge_nat_check(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *pre = br_nat_chain(w, "nat", NF_BR_PRE_ROUTING);
	struct nftdp_vm_chain *out = br_nat_chain(w, "nat", NF_BR_LOCAL_OUT);
	struct nftdp_vm_chain *post = br_nat_chain(w, "nat", NF_BR_POST_ROUTING);
	struct nftdp_vm_chain *fpost = br_nat_chain(w, "filter", NF_BR_POST_ROUTING);
	struct nftdp_vm_chain *fwd = br_nat_chain(w, "filter", NF_BR_FORWARD);
	struct nftdp_vm_chain *user = br_nat_chain(w, "nat", -1);
	struct nftdp_vm_chain *fuser = br_nat_chain(w, "filter", -1);
	struct ebt_nat_info dn = {.mac = {2, 0, 0, 0, 9, 9}, .target = EBT_ACCEPT};
	struct ebt_nat_info sn = {.mac = {2, 0, 0, 0, 8, 8}, .target = EBT_ACCEPT};
	struct ebt_redirect_info rd = {.target = EBT_ACCEPT};
	struct ebt_arpreply_info ar = {.mac = {2, 0, 0, 0, 7, 7}, .target = EBT_DROP};
	const int arp = htons(ETH_P_ARP);
	uint8_t info[16] = {0};

	/* dnat: nat PREROUTING and OUTPUT, a nat user chain */
	assert_int_equal(add(w, pre, -1, false, TG("dnat", 0, dn), -1), 0);
	assert_int_equal(add(w, out, -1, false, TG("dnat", 0, dn), -1), 0);
	assert_int_equal(add(w, user, -1, false, TG("dnat", 0, dn), -1), 0);
	assert_int_equal(add(w, post, -1, false, TG("dnat", 0, dn), -1), -EINVAL);
	assert_int_equal(add(w, fwd, -1, false, TG("dnat", 0, dn), -1), -EINVAL);
	assert_int_equal(add(w, fuser, -1, false, TG("dnat", 0, dn), -1), -EINVAL);
	dn.target = 0; /* a jump, not a standard verdict */
	assert_int_equal(add(w, pre, -1, false, TG("dnat", 0, dn), -1), -EINVAL);
	dn.target = EBT_RETURN; /* no BASE_CHAIN bit under nft_compat */
	assert_int_equal(add(w, pre, -1, false, TG("dnat", 0, dn), -1), 0);
	assert_int_equal(add(w, pre, -1, false, xt("target", "dnat", 0, info, 16), -1), -EINVAL);

	/* snat: table nat, POSTROUTING; NAT_ARP_BIT the only other bit */
	assert_int_equal(add(w, post, -1, false, TG("snat", 0, sn), -1), 0);
	assert_int_equal(add(w, user, -1, false, TG("snat", 0, sn), -1), 0);
	assert_int_equal(add(w, pre, -1, false, TG("snat", 0, sn), -1), -EINVAL);
	assert_int_equal(add(w, fpost, -1, false, TG("snat", 0, sn), -1), -EINVAL);
	assert_int_equal(add(w, fuser, -1, false, TG("snat", 0, sn), -1), -EINVAL);
	sn.target = EBT_CONTINUE & ~NAT_ARP_BIT; /* --snat-arp */
	assert_int_equal(add(w, post, -1, false, TG("snat", 0, sn), -1), 0);
	sn.target = EBT_CONTINUE & ~0x20;
	assert_int_equal(add(w, post, -1, false, TG("snat", 0, sn), -1), -EINVAL);
	sn.target = -5;
	assert_int_equal(add(w, post, -1, false, TG("snat", 0, sn), -1), -EINVAL);

	/* redirect: nat PREROUTING only */
	assert_int_equal(add(w, pre, -1, false, TG("redirect", 0, rd), -1), 0);
	assert_int_equal(add(w, out, -1, false, TG("redirect", 0, rd), -1), -EINVAL);
	assert_int_equal(add(w, fuser, -1, false, TG("redirect", 0, rd), -1), -EINVAL);
	rd.target = 3;
	assert_int_equal(add(w, pre, -1, false, TG("redirect", 0, rd), -1), -EINVAL);

	/* arpreply: -p ARP, not inverted, nat PREROUTING */
	assert_int_equal(add(w, pre, arp, false, TG("arpreply", 0, ar), -1), 0);
	assert_int_equal(add(w, pre, -1, false, TG("arpreply", 0, ar), -1), -EINVAL);
	assert_int_equal(add(w, pre, arp, true, TG("arpreply", 0, ar), -1), -EINVAL);
	assert_int_equal(add(w, pre, htons(ETH_P_IP), false, TG("arpreply", 0, ar), -1), -EINVAL);
	assert_int_equal(add(w, post, arp, false, TG("arpreply", 0, ar), -1), -EINVAL);
	assert_int_equal(add(w, fuser, arp, false, TG("arpreply", 0, ar), -1), -EINVAL);
	ar.target = 1;
	assert_int_equal(add(w, pre, arp, false, TG("arpreply", 0, ar), -1), -EINVAL);

	/* revision queries: 0 only; the family's own */
	for (const char *const *n =
		 (const char *const[]){"dnat", "snat", "redirect", "arpreply", NULL};
	     *n; n++) {
		assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, *n, 0, true), 0);
		assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, *n, 1, true),
				 -EPROTONOSUPPORT);
		assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, *n, 0, false), -ENOENT);
	}
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_IPV4, "dnat", 0, true), -ENOENT);
}

/* an ARP request from 02:00:00:00:01:10 (10.0.0.1) for 10.0.0.9, padded
 * to 60 bytes, behind an 802.1Q tag when tagged */
static struct nftdp_vm_pkt *br_arp(struct tpkt *t, bool tagged)
{
	static const uint8_t req[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2,	0, 0, 0, 1,
					0x10, 0x08, 0x06, 0,	1,    8,    0,	6, 4, 0, 1,
					2,    0,    0,	  0,	1,    0x10, 10, 0, 0, 1, 0,
					0,    0,    0,	  0,	0,    10,   0,	0, 9};
	uint32_t o = tagged ? 4 : 0;

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, req, 12);
	if (tagged) {
		t->buf[12] = 0x81;
		t->buf[15] = 10;
	}
	memcpy(t->buf + 12 + o, req + 12, sizeof(req) - 12);
	nftdp_vm_pkt_init(&t->pkt, t->buf, 60 + o, 0, 14 + o);
	t->pkt.nfproto = NFPROTO_BRIDGE;
	t->pkt.pkttype = PACKET_BROADCAST;
	t->pkt.flags |= NFTDP_VM_PKT_F_WRITABLE;
	return &t->pkt;
}

/* ebtables' nat targets on a frame: the MACs written, --snat-arp, the
 * packet type, the verdicts, arpreply's answer */
static void test_bridge_nat_eval(void **state)
{
	static const uint8_t br[6] = {2, 0, 0, 0, 0, 0x10}, asker[6] = {2, 0, 0, 0, 1, 0x10};
	static const uint8_t ip1[4] = {10, 0, 0, 1}, ip9[4] = {10, 0, 0, 9};
	struct world *w = *state;
	struct nftdp_vm_chain *pre = br_nat_chain(w, "nat", NF_BR_PRE_ROUTING);
	struct nftdp_vm_chain *pre2 = br_nat_chain(w, "nat", NF_BR_PRE_ROUTING);
	struct nftdp_vm_chain *pre3 = br_nat_chain(w, "nat", NF_BR_PRE_ROUTING);
	struct nftdp_vm_chain *post = br_nat_chain(w, "nat", NF_BR_POST_ROUTING);
	struct nftdp_vm_chain *post2 = br_nat_chain(w, "nat", NF_BR_POST_ROUTING);
	struct ebt_nat_info dn = {.mac = {2, 0, 0, 0, 9, 9}, .target = EBT_CONTINUE};
	struct ebt_nat_info sn = {.mac = {2, 0, 0, 0, 8, 8}, .target = EBT_ACCEPT};
	struct ebt_nat_info sna = {.mac = {2, 0, 0, 0, 8, 9}, .target = EBT_ACCEPT & ~NAT_ARP_BIT};
	struct ebt_redirect_info rd = {.target = EBT_ACCEPT};
	struct ebt_arpreply_info ar = {.mac = {2, 0, 0, 0, 7, 7}, .target = EBT_DROP};
	const int arp = htons(ETH_P_ARP);
	struct tpkt t;

	/* dnat, continue: the next rule sees the new MAC (counter, drop) */
	assert_int_equal(add(w, pre, -1, false, TG("dnat", 0, dn), -1), 0);
	assert_int_equal(add(w, pre, -1, false, ex("counter"), NF_DROP), 0);
	br_frame(&t, 80, false, 0);
	t.pkt.hook = NF_BR_PRE_ROUTING;
	t.pkt.br_addr = br;
	assert_int_equal(RUN(w, pre, &t.pkt), NF_DROP);
	assert_memory_equal(t.buf, dn.mac, 6);
	assert_int_equal(t.pkt.pkttype, PACKET_OTHERHOST);
	/* to the bridge's own address: host; broadcast */
	memcpy(dn.mac, br, 6);
	dn.target = EBT_ACCEPT;
	assert_int_equal(add(w, pre2, -1, false, TG("dnat", 0, dn), -1), 0);
	br_frame(&t, 80, false, 0);
	t.pkt.hook = NF_BR_PRE_ROUTING;
	t.pkt.br_addr = br;
	assert_int_equal(RUN(w, pre2, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.pkttype, PACKET_HOST);
	memset(dn.mac, 0xff, 6);
	assert_int_equal(add(w, pre3, -1, false, TG("dnat", 0, dn), -1), 0);
	br_frame(&t, 80, false, 0);
	t.pkt.hook = NF_BR_PRE_ROUTING;
	assert_int_equal(RUN(w, pre3, &t.pkt), NF_ACCEPT);
	assert_int_equal(t.pkt.pkttype, PACKET_BROADCAST);
	assert_memory_equal(t.buf, dn.mac, 6);

	/* snat without --snat-arp: the source MAC only */
	assert_int_equal(add(w, post, -1, false, TG("snat", 0, sn), -1), 0);
	br_arp(&t, false);
	assert_int_equal(RUN(w, post, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 6, sn.mac, 6);
	assert_memory_equal(t.buf + 22, asker, 6);
	/* --snat-arp: the ARP sender's hardware address too, after a tag */
	assert_int_equal(add(w, post2, -1, false, TG("snat", 0, sna), -1), 0);
	br_arp(&t, true);
	assert_int_equal(RUN(w, post2, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 6, sna.mac, 6);
	assert_memory_equal(t.buf + 26, sna.mac, 6);
	assert_memory_equal(t.buf + 32, ip1, 4);
	/* not for IP, nor for an ARP with other hardware address lengths */
	br_frame(&t, 80, false, 0);
	assert_int_equal(RUN(w, post2, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 6, sna.mac, 6);
	assert_int_equal(t.buf[14], 0x45);
	br_arp(&t, false);
	t.buf[18] = 8;
	assert_int_equal(RUN(w, post2, &t.pkt), NF_ACCEPT);
	assert_memory_equal(t.buf + 22, asker, 6);
	/* too short for the ARP header: drop */
	br_arp(&t, false);
	t.pkt.len = 20;
	assert_int_equal(RUN(w, post2, &t.pkt), NF_DROP);

	/* redirect: to the bridge's address, host; no bridge: drop */
	{
		struct nftdp_vm_chain *c = br_nat_chain(w, "nat", NF_BR_PRE_ROUTING);

		assert_int_equal(add(w, c, -1, false, TG("redirect", 0, rd), -1), 0);
		br_frame(&t, 80, false, 0);
		t.pkt.br_addr = br;
		assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
		assert_memory_equal(t.buf, br, 6);
		assert_int_equal(t.pkt.pkttype, PACKET_HOST);
		br_frame(&t, 80, false, 0);
		assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	}

	/* arpreply: a request is answered (the fields for arp_send), then
	 * the verdict; a reply or another protocol goes on */
	{
		struct nftdp_vm_chain *c = br_nat_chain(w, "nat", NF_BR_PRE_ROUTING);

		assert_int_equal(add(w, c, arp, false, TG("arpreply", 0, ar), -1), 0);
		br_arp(&t, true);
		assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
		assert_true(t.pkt.out.arpreply);
		assert_memory_equal(t.pkt.out.arpreply_sha, ar.mac, 6);
		assert_memory_equal(t.pkt.out.arpreply_tha, asker, 6);
		assert_memory_equal(t.pkt.out.arpreply_sip, ip9, 4);
		assert_memory_equal(t.pkt.out.arpreply_tip, ip1, 4);
		br_arp(&t, false);
		t.buf[21] = 2; /* a reply */
		assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
		assert_false(t.pkt.out.arpreply);
		br_arp(&t, false);
		t.buf[17] = 0xdd; /* ar_pro not IPv4 */
		assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
		assert_false(t.pkt.out.arpreply);
		br_arp(&t, false);
		t.pkt.len = 30; /* the addresses cut off: drop, no answer */
		assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
		assert_false(t.pkt.out.arpreply);
	}
}

/* an IPv6 frame of n bytes in t: UDP 1000 -> dport from fd00::1 to
 * fd00::2 (traffic class tc) behind a hop-by-hop header when hbh */
static struct nftdp_vm_pkt *br_udp6(struct tpkt *t, uint16_t dport, uint8_t tc, bool hbh)
{
	uint8_t *p = t->buf + 14;
	uint32_t l4 = hbh ? 48 : 40;

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, (const uint8_t[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x86, 0xdd}, 14);
	p[0] = (uint8_t)(0x60 | tc >> 4);
	p[1] = (uint8_t)(tc << 4);
	p[5] = (uint8_t)(l4 - 40 + 8);
	p[6] = hbh ? 0 : IPPROTO_UDP;
	p[7] = 64;
	p[8] = 0xfd, p[23] = 1;
	p[24] = 0xfd, p[39] = 2;
	if (hbh) {
		p[40] = IPPROTO_UDP; /* next header; length 0: 8 bytes of PadN */
		p[42] = 1;
		p[43] = 4;
	}
	p[l4] = 1000 >> 8;
	p[l4 + 1] = 1000 & 0xff;
	p[l4 + 2] = (uint8_t)(dport >> 8);
	p[l4 + 3] = (uint8_t)dport;
	p[l4 + 5] = 8;
	nftdp_vm_pkt_init(&t->pkt, t->buf, 14 + l4 + 8, 0, 14);
	t->pkt.nfproto = NFPROTO_BRIDGE;
	t->pkt.pkttype = PACKET_OTHERHOST;
	return &t->pkt;
}

/* ebt_ip6: addresses with masks, traffic class, the protocol after the
 * extension headers, ports, ICMPv6 type and code ranges */
static void test_bridge_eval_ip6(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = br_chain(w), *tc = br_chain(w), *ic = br_chain(w);
	const int ipv6 = htons(ETH_P_IPV6);
	struct ebt_ip6_info ip = {.protocol = IPPROTO_UDP,
				  .bitmask = EBT_IP6_SOURCE | EBT_IP6_PROTO | EBT_IP6_DPORT,
				  .dport = {53, 53}};
	struct ebt_ip6_info cls = {.tclass = 0x28, .bitmask = EBT_IP6_TCLASS};
	struct ebt_ip6_info icmp = {.protocol = IPPROTO_ICMPV6,
				    .bitmask = EBT_IP6_PROTO | EBT_IP6_ICMP6 | EBT_IP6_DEST,
				    .icmpv6_type = {135, 136},
				    .icmpv6_code = {0, 0},
				    .invflags = EBT_IP6_DEST};
	struct tpkt t;

	ip.saddr.s6_addr[0] = 0xfd;
	ip.smsk.s6_addr[0] = 0xff;
	ip.smsk.s6_addr[1] = 0xff;
	/* the kernel's checks: -p IPv6 not inverted, ports of a port protocol */
	assert_int_equal(add(w, c, -1, false, MT("ip6", 0, ip), -1), -EINVAL);
	assert_int_equal(add(w, c, ipv6, true, MT("ip6", 0, ip), -1), -EINVAL);
	ip.protocol = IPPROTO_ICMPV6;
	assert_int_equal(add(w, c, ipv6, false, MT("ip6", 0, ip), -1), -EINVAL);
	ip.protocol = IPPROTO_UDP;
	ip.bitmask |= 0x80;
	assert_int_equal(add(w, c, ipv6, false, MT("ip6", 0, ip), -1), -EINVAL);
	ip.bitmask &= (uint8_t)~0x80;
	assert_int_equal(add(w, c, ipv6, false, xt("match", "ip6", 0, &ip, 8), -1), -EINVAL);

	/* --ip6-src fd00::/16 --ip6-proto udp --ip6-dport 53 -j DROP */
	assert_int_equal(add(w, c, ipv6, false, MT("ip6", 0, ip), NF_DROP), 0);
	assert_int_equal(RUN(w, c, br_udp6(&t, 53, 0, false)), NF_DROP);
	assert_int_equal(RUN(w, c, br_udp6(&t, 54, 0, false)), NF_ACCEPT);
	/* behind a hop-by-hop header: the same */
	assert_int_equal(RUN(w, c, br_udp6(&t, 53, 0, true)), NF_DROP);
	/* another source */
	br_udp6(&t, 53, 0, true);
	t.buf[14 + 9] = 0x01;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	/* a truncated transport header: no match */
	br_udp6(&t, 53, 0, false);
	t.pkt.len = 14 + 40 + 3;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	/* a later fragment stops at its fragment header: protocol 44 */
	br_udp6(&t, 53, 0, true);
	t.buf[14 + 6] = 44;
	t.buf[14 + 40 + 3] = 8; /* offset 1 */
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	t.buf[14 + 40 + 2] = 0; /* a first fragment: on to UDP */
	t.buf[14 + 40 + 3] = 0;
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);
	/* no next header: no match */
	br_udp6(&t, 53, 0, true);
	t.buf[14 + 40] = 59;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);

	/* --ip6-tclass 0x28, and inverted */
	assert_int_equal(add(w, tc, ipv6, false, MT("ip6", 0, cls), NF_DROP), 0);
	assert_int_equal(RUN(w, tc, br_udp6(&t, 1, 0x28, false)), NF_DROP);
	assert_int_equal(RUN(w, tc, br_udp6(&t, 1, 0x29, false)), NF_ACCEPT);

	/* ! --ip6-dst fd00::2 (so no match on fd00::2) --ip6-icmp-type 135:136/0 */
	icmp.daddr.s6_addr[0] = 0xfd;
	icmp.daddr.s6_addr[15] = 3;
	memset(&icmp.dmsk, 0xff, sizeof(icmp.dmsk));
	assert_int_equal(add(w, ic, ipv6, false, MT("ip6", 0, icmp), NF_DROP), 0);
	br_udp6(&t, 0, 0, false);
	t.buf[14 + 6] = IPPROTO_ICMPV6;
	t.buf[14 + 40] = 135;
	t.buf[14 + 41] = 0;
	assert_int_equal(RUN(w, ic, &t.pkt), NF_DROP);
	t.buf[14 + 41] = 1; /* code 1 */
	assert_int_equal(RUN(w, ic, &t.pkt), NF_ACCEPT);
	t.buf[14 + 41] = 0;
	t.buf[14 + 40] = 128;
	assert_int_equal(RUN(w, ic, &t.pkt), NF_ACCEPT);
	t.buf[14 + 40] = 136;
	t.buf[14 + 39] = 3; /* to fd00::3: the inverted address fails */
	assert_int_equal(RUN(w, ic, &t.pkt), NF_ACCEPT);
	/* an IPv4 frame's bytes read as IPv6: too short, no match */
	assert_int_equal(RUN(w, c, br_frame(&t, 53, false, 0)), NF_ACCEPT);
}

/* a frame to the STP address laid out as ebt_stp.c reads it: struct
 * stp_header (LLC 42 42 03, pid, vers, type) at the network header, then
 * struct stp_config_pdu: flags, root 8000.02:00:00:00:01:10, cost 4,
 * sender prio.02:00:00:00:01:20, port 0x8001, ages 1 and 20, hello 2,
 * delay 15 */
static struct nftdp_vm_pkt *br_bpdu(struct tpkt *t, uint8_t type, uint8_t flags, uint16_t prio)
{
	static const uint8_t hdr[] = {
	    0x01, 0x80, 0xc2, 0, 0, 0, 2, 0, 0, 0, 1, 0x10, 0, 38, 0x42, 0x42, 3, 0, 0,
	};
	static const uint8_t cfg[] = {
	    0x80, 0, 2, 0, 0,	 0,    1, 0x10, 0, 0, 0,  4, 0, 0, 2,
	    0,	  0, 0, 1, 0x20, 0x80, 1, 0,	1, 0, 20, 0, 2, 0, 15,
	};
	uint8_t *p = t->buf + 20;

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, hdr, sizeof(hdr));
	t->buf[19] = type;
	p[0] = flags;
	memcpy(p + 1, cfg, sizeof(cfg));
	p[13] = (uint8_t)(prio >> 8);
	p[14] = (uint8_t)prio;
	nftdp_vm_pkt_init(&t->pkt, t->buf, 60, 0, 14);
	t->pkt.nfproto = NFPROTO_BRIDGE;
	t->pkt.pkttype = PACKET_MULTICAST;
	return &t->pkt;
}

/* ebt_stp: the LLC/BPDU header, the type, a configuration BPDU's fields
 * (only for one: a TCN matches whatever they say) */
static void test_bridge_eval_stp(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = br_chain(w), *a = br_chain(w);
	struct ebt_stp_info st = {.type = 0,
				  .config = {.flags = 1,
					     .root_priol = 0x8000,
					     .root_priou = 0x8000,
					     .sender_priol = 0x1000,
					     .sender_priou = 0x7fff,
					     .root_costl = 1,
					     .root_costu = 10,
					     .portl = 0x8001,
					     .portu = 0x8001,
					     .msg_agel = 1,
					     .msg_ageu = 1,
					     .max_agel = 20,
					     .max_ageu = 20,
					     .hello_timel = 2,
					     .hello_timeu = 2,
					     .forward_delayl = 15,
					     .forward_delayu = 15},
				  .bitmask = EBT_STP_TYPE | EBT_STP_FLAGS | EBT_STP_ROOTPRIO |
					     EBT_STP_SENDERPRIO | EBT_STP_ROOTCOST | EBT_STP_PORT |
					     EBT_STP_MSGAGE | EBT_STP_MAXAGE | EBT_STP_HELLOTIME |
					     EBT_STP_FWDD};
	struct ebt_stp_info ad = {.bitmask = EBT_STP_ROOTADDR | EBT_STP_SENDERADDR,
				  .invflags = EBT_STP_SENDERADDR};
	struct tpkt t;

	/* ebt_stp_mt_check: something to match, known flags */
	st.bitmask = 0;
	assert_int_equal(add(w, c, -1, false, MT("stp", 0, st), -1), -EINVAL);
	st.bitmask = EBT_STP_TYPE | 0x1000;
	assert_int_equal(add(w, c, -1, false, MT("stp", 0, st), -1), -EINVAL);
	st.bitmask = EBT_STP_TYPE; /* an info of another size */
	assert_int_equal(add(w, c, -1, false, xt("match", "stp", 0, &st, 16), -1), -EINVAL);
	/* another revision: xt_find_match's EPROTOTYPE */
	assert_int_equal(add(w, c, -1, false, xt("match", "stp", 1, &st, sizeof(st)), -1),
			 -EPROTOTYPE);
	st.bitmask = EBT_STP_TYPE | EBT_STP_FLAGS | EBT_STP_ROOTPRIO | EBT_STP_SENDERPRIO |
		     EBT_STP_ROOTCOST | EBT_STP_PORT | EBT_STP_MSGAGE | EBT_STP_MAXAGE |
		     EBT_STP_HELLOTIME | EBT_STP_FWDD;
	assert_int_equal(add(w, c, -1, false, MT("stp", 0, st), NF_DROP), 0);
	assert_int_equal(RUN(w, c, br_bpdu(&t, 0, 1, 0x2000)), NF_DROP);
	assert_int_equal(RUN(w, c, br_bpdu(&t, 0, 0, 0x2000)), NF_ACCEPT);    /* flags */
	assert_int_equal(RUN(w, c, br_bpdu(&t, 0, 1, 0x8000)), NF_ACCEPT);    /* sender prio */
	assert_int_equal(RUN(w, c, br_bpdu(&t, 0x80, 1, 0x2000)), NF_ACCEPT); /* type */
	br_bpdu(&t, 0, 1, 0x2000);
	t.buf[20 + 30] = 16; /* forward delay */
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	br_bpdu(&t, 0, 1, 0x2000);
	t.buf[16] = 4; /* not LLC 42 42 03 */
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	br_bpdu(&t, 0, 1, 0x2000);
	t.pkt.len = 14 + 6 + 30; /* the configuration cut short */
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	/* the header compared is six bytes, type included: --stp-type tcn
	 * never matches, --stp-type config matches what passes the header */
	st.bitmask = EBT_STP_TYPE;
	st.type = 0x80;
	assert_int_equal(add(w, c, -1, false, MT("stp", 0, st), NF_DROP), 0);
	assert_int_equal(RUN(w, c, br_bpdu(&t, 0x80, 0, 0x2000)), NF_ACCEPT);
	st.type = 0;
	assert_int_equal(add(w, c, -1, false, MT("stp", 0, st), NF_DROP), 0);
	br_bpdu(&t, 0, 0, 0x2000);
	t.pkt.len = 14 + 6; /* nothing after the header: no fields asked about */
	assert_int_equal(RUN(w, c, &t.pkt), NF_DROP);

	/* --stp-root-addr 02:00:00:00:01:10 ! --stp-sender-addr 02:00:00:00:01:00/ff:..:00 */
	memcpy(ad.config.root_addr, (const char[]){2, 0, 0, 0, 1, 0x10}, 6);
	memset(ad.config.root_addrmsk, 0xff, 6);
	memcpy(ad.config.sender_addr, (const char[]){2, 0, 0, 0, 1, 0}, 6);
	memset(ad.config.sender_addrmsk, 0xff, 5);
	assert_int_equal(add(w, a, -1, false, MT("stp", 0, ad), NF_DROP), 0);
	br_bpdu(&t, 0, 0, 0x2000);
	assert_int_equal(RUN(w, a, &t.pkt), NF_ACCEPT); /* sender 02:..:01:20 is in /40 */
	t.buf[20 + 18] = 1;				/* sender 02:00:00:01:01:20 */
	assert_int_equal(RUN(w, a, &t.pkt), NF_DROP);
	t.buf[20 + 8] = 0x11; /* another root */
	assert_int_equal(RUN(w, a, &t.pkt), NF_ACCEPT);
}

struct log_seen {
	unsigned int n;
	struct nftdp_vm_log_event ev;
};

static void log_cb(const struct nftdp_vm_log_event *ev, void *arg)
{
	struct log_seen *s = arg;

	s->n++;
	s->ev = *ev;
}

/* the ebt_log line of the one event c logs for p */
static const char *ebt_line(struct world *w, struct nftdp_vm_chain *c, struct nftdp_vm_pkt *p,
			    char *buf, size_t size)
{
	struct log_seen seen = {0};

	p->iif = 1;
	p->oif = 2;
	assert_int_equal(RUN(w, c, p), NF_ACCEPT);
	assert_int_equal(nftdp_vm_log_poll(w->st, 0, log_cb, &seen, NULL), 1);
	assert_true(seen.ev.flags & NFTDP_VM_LOG_F_EBT);
	nftdp_vm_ebt_log_line(&seen.ev, "dp0", "dp1", buf, size);
	return buf;
}

/* ebt_log: the kernel's checks, then ebt_log_packet's line for IPv4, IPv6
 * and ARP frames (as --log-ip/--log-ip6/--log-arp ask), and without */
static void test_bridge_log(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = br_chain(w), *n = br_chain(w), *s = br_chain(w);
	struct ebt_log_info lg = {
	    .loglevel = 6, .prefix = "ebt ", .bitmask = EBT_LOG_IP | EBT_LOG_IP6 | EBT_LOG_ARP};
	struct ebt_log_info plain = {.loglevel = 4, .prefix = "p"};
	static const uint8_t arp[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2,	0, 0, 0, 1,
					0x10, 0x08, 0x06, 0,	1,    8,    0,	6, 4, 0, 1,
					2,    0,    0,	  0,	1,    0x10, 10, 0, 0, 1, 0,
					0,    0,    0,	  0,	0,    10,   0,	0, 9};
	char line[512];
	struct tpkt t;

	lg.bitmask |= EBT_LOG_NFLOG; /* not in EBT_LOG_MASK */
	assert_int_equal(add(w, c, -1, false, TG("log", 0, lg), -1), -EINVAL);
	lg.bitmask &= ~(uint32_t)EBT_LOG_NFLOG;
	assert_int_equal(add(w, c, -1, false, xt("target", "log", 0, &lg, 32), -1), -EINVAL);
	lg.loglevel = 8;
	assert_int_equal(add(w, c, -1, false, TG("log", 0, lg), -1), -EINVAL);
	lg.loglevel = 6;
	memset(lg.prefix + 4, 'x', sizeof(lg.prefix) - 4); /* not ended: the check ends it */
	assert_int_equal(add(w, c, -1, false, TG("log", 0, lg), -1), 0);
	assert_int_equal(add(w, s, -1, false, TG("log", 0, plain), -1), 0);
	/* it logs: the chain shares state, as a log statement's does */
	assert_true(nftdp_vm_chain_order_state(c));

	assert_string_equal(ebt_line(w, c, br_frame(&t, 80, false, 0), line, sizeof(line)),
			    "ebt xxxxxxxxxxxxxxxxxxxxxxxxx IN=dp0 OUT=dp1 "
			    "MAC source = 06:07:08:09:0a:0b MAC dest = 00:01:02:03:04:05 "
			    "proto = 0x0800 IP SRC=10.0.0.1 IP DST=10.0.0.2, IP tos=0x00, "
			    "IP proto=6 SPT=1234 DPT=80");
	/* tagged: the ethertype after the tag */
	assert_string_equal(ebt_line(w, s, br_frame(&t, 80, true, 5), line, sizeof(line)),
			    "p IN=dp0 OUT=dp1 MAC source = 06:07:08:09:0a:0b "
			    "MAC dest = 00:01:02:03:04:05 proto = 0x0800");
	memset(lg.prefix, 0, sizeof(lg.prefix));
	assert_int_equal(add(w, n, -1, false, TG("log", 0, lg), -1), 0);
	br_udp6(&t, 53, 0xb8, true);
	assert_string_equal(ebt_line(w, n, &t.pkt, line, sizeof(line)),
			    " IN=dp0 OUT=dp1 MAC source = 06:07:08:09:0a:0b "
			    "MAC dest = 00:01:02:03:04:05 proto = 0x86dd "
			    "IPv6 SRC=fd00:0000:0000:0000:0000:0000:0000:0001 "
			    "IPv6 DST=fd00:0000:0000:0000:0000:0000:0000:0002, "
			    "IPv6 priority=0xB, Next Header=0 SPT=1000 DPT=53");
	/* the IP header cut short */
	br_frame(&t, 80, false, 0);
	t.pkt.len = 14 + 19;
	assert_string_equal(ebt_line(w, n, &t.pkt, line, sizeof(line)),
			    " IN=dp0 OUT=dp1 MAC source = 06:07:08:09:0a:0b "
			    "MAC dest = 00:01:02:03:04:05 proto = 0x0800 INCOMPLETE IP header");
	/* ARP: header, then the Ethernet/IPv4 payload */
	memset(&t, 0, sizeof(t));
	memcpy(t.buf, arp, sizeof(arp));
	nftdp_vm_pkt_init(&t.pkt, t.buf, 60, 0, 14);
	t.pkt.nfproto = NFPROTO_BRIDGE;
	assert_string_equal(
	    ebt_line(w, n, &t.pkt, line, sizeof(line)),
	    " IN=dp0 OUT=dp1 MAC source = 02:00:00:00:01:10 "
	    "MAC dest = ff:ff:ff:ff:ff:ff proto = 0x0806 "
	    "ARP HTYPE=1, PTYPE=0x0800, OPCODE=1 ARP MAC SRC=02:00:00:00:01:10 "
	    "ARP IP SRC=10.0.0.1 ARP MAC DST=00:00:00:00:00:00 ARP IP DST=10.0.0.9");
}

/* ebt_nflog as log group: group, threshold, prefix, no copy length */
static void test_bridge_nflog(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = br_chain(w);
	struct ebt_nflog_info nl = {.len = 20, .group = 3, .threshold = 2, .prefix = "bridged "};
	uint8_t big[sizeof(nl) + 8] = {0};
	struct nflog_seen seen = {0};
	struct tpkt t;

	nl.flags = 1;
	assert_int_equal(add(w, c, -1, false, TG("nflog", 0, nl), -1), -EINVAL);
	nl.flags = 0;
	assert_int_equal(add(w, c, -1, false, xt("target", "nflog", 0, &nl, 16), -1), -EINVAL);
	memcpy(big, &nl, sizeof(nl)); /* 8 bytes more than XT_ALIGN(sizeof(nl)) */
	assert_int_equal(add(w, c, -1, false, xt("target", "nflog", 0, big, sizeof(nl) + 8), -1),
			 -EINVAL);
	assert_int_equal(add(w, c, -1, false, TG("nflog", 0, nl), -1), 0);
	assert_true(nftdp_vm_chain_order_state(c));
	assert_int_equal(RUN(w, c, br_frame(&t, 80, false, 0)), NF_ACCEPT);
	assert_int_equal(nftdp_vm_nflog_poll(w->st, nflog_cb, &seen), 0); /* nobody bound */
	nftdp_vm_nflog_bind(w->st, 3, true);
	br_frame(&t, 80, false, 0);
	t.pkt.hook = 2;
	assert_int_equal(RUN(w, c, &t.pkt), NF_ACCEPT);
	assert_int_equal(nftdp_vm_nflog_poll(w->st, nflog_cb, &seen), 1);
	assert_int_equal(seen.ev.group, 3);
	assert_int_equal(seen.ev.qthreshold, 2);
	assert_int_equal(seen.ev.copy_len, UINT32_MAX); /* ebt_nflog_tg: flags 0 */
	assert_int_equal(seen.ev.family, NFPROTO_BRIDGE);
	assert_string_equal(seen.prefix, "bridged ");
	nftdp_vm_nflog_bind(w->st, 3, false);
	/* revision queries as the kernel answers them */
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "nflog", 0, true), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "log", 1, true),
			 -EPROTONOSUPPORT);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "stp", 0, false), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "ip6", 0, false), 0);
	assert_int_equal(nftdp_vm_compat_revision(NFPROTO_BRIDGE, "among", 0, false), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_revisions),
	    cmocka_unit_test_setup_teardown(test_generic_checks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refused_names_extension, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nflog_target, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ct_target, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_more_matches, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mangle_targets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_quota_checksum, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_policy, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_matches, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_match, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_conntrack_and_marks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_targets_become_native, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hashlimit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hashlimit_max, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hashlimit_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hashlimit_rate_match, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tcpmss, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rpfilter, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_connlimit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ip6ext, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_time, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_string, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_netmap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_u32, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_recent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_recent_list_tot, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_redirect, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_arp, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_eval, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_arp_mangle_eval, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_eval_arp, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_eval_ip6, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_eval_stp, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_log, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_nat_check, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_nat_eval, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_nflog, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_target, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_bitmap_port_proto, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_bitmap_ipmac, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_counters, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owner_physdev, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
