// SPDX-License-Identifier: BSD-3-Clause
/*
 * The eval loop's heads (vm/compile.c heads(), enum nftdp_vm_fast): a
 * payload load that runs the lookup, or the bitwise and cmp, after it.
 * Each head against the same ops unfused (an immediate into an unused
 * register between the load and its followers keeps them apart) on the
 * same packets, every truncation of them included: the same verdict, the
 * same registers, the same flow cache taint. Real sets (sets/), as the
 * daemon looks them up. And the spans the eval loop runs a rule reached
 * through the rule index by, against the same chain unindexed.
 */
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

#include "nft_build.h"
#include "nftdp_sets.h"
#include "rule_index.h" /* nftdp_vm_chain_index */
#include "vm_priv.h"	/* the ops' fast tags */

/* sets: ports (2 bytes), addrs (4), addrs6 (16), pairs (addr . port, 8),
 * three (3 bytes: the hash's any-size path), addrs_t (4, timeouts),
 * protos (1: l4proto values) */
enum { S_PORTS, S_ADDRS, S_ADDRS6, S_PAIRS, S_THREE, S_ADDRS_T, S_PROTOS, N_SETS };
static const struct {
	const char *name;
	uint32_t klen, flags;
} set_defs[N_SETS] = {
    {"ports", 2, 0},  {"addrs", 4, 0}, {"addrs6", 16, 0},
    {"pairs", 8, 0},  {"three", 3, 0}, {"addrs_t", 4, NFT_SET_TIMEOUT},
    {"protos", 1, 0},
};
static struct nftdp_set *sets[N_SETS];

static int res_set(void *opaque, const char *table, const char *name, uint32_t id,
		   struct nftdp_vm_set_info *out)
{
	(void)opaque;
	(void)table;
	(void)id;
	for (int i = 0; i < N_SETS; i++) {
		if (!name || strcmp(name, set_defs[i].name))
			continue;
		memset(out, 0, sizeof(*out));
		out->set = sets[i];
		out->flags = set_defs[i].flags;
		out->klen = set_defs[i].klen;
		return 0;
	}
	return -ENOENT;
}

static const struct nftdp_vm_resolver resolver = {.set = res_set};

static void elem(int s, const void *key)
{
	assert_int_equal(nftdp_set_insert(sets[s], key, NULL, NULL,
					  set_defs[s].flags & NFT_SET_TIMEOUT ? 60000 : 0, 0, true),
			 0);
}

static int setup(void **state)
{
	static const uint8_t p80[2] = {0, 80}, a1[4] = {10, 0, 0, 1}, a2[4] = {10, 0, 0, 2};
	static const uint8_t pair[8] = {10, 0, 0, 1, 0, 80, 0, 0}, three[3] = {10, 0, 0};
	uint8_t a6[16] = {0x20, 0x01, 0x0d, 0xb8};

	(void)state;
	for (int i = 0; i < N_SETS; i++) {
		struct nftdp_set_desc d = {.flags = set_defs[i].flags,
					   .key_size = set_defs[i].klen};

		if (i == S_PAIRS)
			d.flags |= NFT_SET_CONCAT;
		assert_int_equal(nftdp_set_create(&d, &sets[i]), 0);
	}
	elem(S_PORTS, p80);
	elem(S_ADDRS, a2);
	a6[15] = 1;
	elem(S_ADDRS6, a6);
	elem(S_PAIRS, pair);
	elem(S_THREE, three);
	elem(S_ADDRS_T, a1);
	elem(S_PROTOS, &(const uint8_t){IPPROTO_UDP});
	for (int i = 0; i < N_SETS; i++)
		nftdp_set_commit_stage(sets[i]);
	nftdp_set_gen_publish();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < N_SETS; i++)
		nftdp_set_destroy(sets[i]);
	return 0;
}

static struct nftnl_expr *lookup(const char *set, uint32_t sreg, bool inv)
{
	struct nftnl_expr *e = ex("lookup");

	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
	if (inv)
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
	return e;
}

static struct nftnl_expr *bitwise(uint32_t sreg, uint32_t dreg, uint32_t len, uint32_t mask,
				  uint32_t xor)
{
	struct nftnl_expr *e = ex("bitwise");

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, sreg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, dreg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &xor, len);
	return e;
}

/* the register the unfused variant's spacer writes: no case reads it */
#define SPACER_REG NFT_REG32_15
#define SPACER_IX 15

/* A case: a load, its followers, the fast tag the load gets fused. */
struct hcase {
	const char *what;
	uint8_t family;
	uint8_t head; /* enum nftdp_vm_fast */
	uint8_t load; /* build[load] is the load; the spacer goes after it */
	/* the rule's exprs up to the followers (a drop verdict follows) */
	struct nftnl_expr *(*build[6])(void);
};

static struct nftdp_vm_chain *compile(const struct hcase *hc, bool spaced,
				      struct nftdp_vm_state *st)
{
	struct nftdp_vm_chain_desc d = {.family = hc->family,
					.table = "t",
					.name = spaced ? "unfused" : "fused",
					.base = true,
					.hook = NF_INET_FORWARD,
					.policy = NF_ACCEPT};
	struct nftdp_vm_chain *c;
	struct nftdp_vm_error err;
	struct nftnl_rule *r = nftnl_rule_alloc();
	int n = 0;

	bool headed = false;

	while (n < 6 && hc->build[n])
		n++;
	for (int i = 0; i < n; i++) {
		nftnl_rule_add_expr(r, hc->build[i]());
		if (spaced && i == hc->load)
			nftnl_rule_add_expr(r, imm32(SPACER_REG, 0x5a5a5a5a));
	}
	nftnl_rule_add_expr(r, verdict(NF_DROP, NULL));
	assert_int_equal(nftdp_vm_chain_create(&d, st, &c), 0);
	assert_int_equal(nftdp_vm_chain_add_rule(c, r, &resolver, st, &err), 0);
	nftnl_rule_free(r);
	nftdp_vm_chain_index(c);
	/* the fused chain has the head, the spaced one none */
	for (uint32_t i = 0; i < c->n_ops; i++)
		headed |= c->ops[i].fast == hc->head;
	assert_int_equal(headed, !spaced);
	return c;
}

/* ---- the loads and followers ---- */
static struct nftnl_expr *ld_dport(void)
{
	return payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
}
static struct nftnl_expr *lk_ports(void)
{
	return lookup("ports", NFT_REG_1, false);
}
static struct nftnl_expr *lk_ports_inv(void)
{
	return lookup("ports", NFT_REG_1, true);
}
static struct nftnl_expr *ld_saddr(void)
{
	return payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 4, NFT_REG_1);
}
static struct nftnl_expr *ld_daddr(void)
{
	return payload(NFT_PAYLOAD_NETWORK_HEADER, 16, 4, NFT_REG_1);
}
static struct nftnl_expr *lk_addrs(void)
{
	return lookup("addrs", NFT_REG_1, false);
}
static struct nftnl_expr *lk_addrs_t(void)
{
	return lookup("addrs_t", NFT_REG_1, false);
}
static struct nftnl_expr *ld_saddr6(void)
{
	return payload(NFT_PAYLOAD_NETWORK_HEADER, 8, 16, NFT_REG_1);
}
static struct nftnl_expr *lk_addrs6(void)
{
	return lookup("addrs6", NFT_REG_1, false);
}
static struct nftnl_expr *ld_saddr3(void)
{
	return payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 3, NFT_REG_1);
}
static struct nftnl_expr *lk_three(void)
{
	return lookup("three", NFT_REG_1, false);
}
/* ip saddr . tcp dport: the head is the second load, the lookup reads both */
static struct nftnl_expr *ld_saddr_r8(void)
{
	return payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 4, NFT_REG32_00);
}
static struct nftnl_expr *ld_dport_r9(void)
{
	return payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG32_01);
}
static struct nftnl_expr *lk_pairs(void)
{
	return lookup("pairs", NFT_REG32_00, false);
}
/* tcp flags & (syn | rst) == syn */
static struct nftnl_expr *ld_flags(void)
{
	return payload(NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1, NFT_REG_1);
}
static struct nftnl_expr *bw_synrst(void)
{
	return bitwise(NFT_REG_1, NFT_REG_1, 1, 0x06, 0);
}
static struct nftnl_expr *eq_syn(void)
{
	return cmp32(NFT_CMP_EQ, NFT_REG_1, 0x02);
}
/* ip frag-off & 0x1fff != 0, bitwise into another register, and xor */
static struct nftnl_expr *ld_frag(void)
{
	return payload(NFT_PAYLOAD_NETWORK_HEADER, 6, 2, NFT_REG_1);
}
static struct nftnl_expr *bw_frag(void)
{
	return bitwise(NFT_REG_1, NFT_REG_2, 2, 0xff1f, 0x0100);
}
static struct nftnl_expr *ne_frag(void)
{
	uint8_t v[2] = {0x01, 0x00};

	return cmp(NFT_CMP_NEQ, NFT_REG_2, v, 2);
}
/* ip daddr 10.0.0.0/24 */
static struct nftnl_expr *bw_24(void)
{
	return bitwise(NFT_REG_1, NFT_REG_1, 4, 0x00ffffff, 0);
}
static struct nftnl_expr *eq_net(void)
{
	const uint8_t v[4] = {10, 0, 0, 0};

	return cmp(NFT_CMP_EQ, NFT_REG_1, v, 4);
}
static struct nftnl_expr *l4_tcp(void)
{
	return meta(NFT_META_L4PROTO, NFT_REG_1);
}
static struct nftnl_expr *lk_protos(void)
{
	return lookup("protos", NFT_REG_1, false);
}
static struct nftnl_expr *is_tcp(void)
{
	uint8_t v = IPPROTO_TCP;

	return cmp(NFT_CMP_EQ, NFT_REG_1, &v, 1);
}

/* ---- packets ---- */

/* IPv4 TCP 10.0.0.1:1234 -> 10.0.0.2:dport, flags, frag-off word */
static uint32_t v4(uint8_t *b, uint8_t proto, uint16_t dport, uint8_t flags, uint16_t frag)
{
	static const uint8_t hdr[] = {
	    0, 1, 2, 3, 4,  5, 6, 7, 8,	 9, 10,	  11,	0x08, 0x00, 0x45, 0, 0,	   40,
	    0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0,	  1,	10,   0,    0,	  2, 0x04, 0xd2,
	    0, 0, 0, 0, 0,  1, 0, 0, 0,	 0, 0x50, 0x02, 0xff, 0xff, 0,	  0, 0,	   0,
	};

	memcpy(b, hdr, sizeof(hdr));
	b[23] = proto;
	b[20] = (uint8_t)(frag >> 8);
	b[21] = (uint8_t)frag;
	b[36] = (uint8_t)(dport >> 8);
	b[37] = (uint8_t)dport;
	b[47] = flags;
	return sizeof(hdr);
}

/* IPv6 TCP 2001:db8::<last> -> 2001:db8::2 port dport */
static uint32_t v6(uint8_t *b, uint8_t last, uint16_t dport)
{
	memset(b, 0, 74);
	b[12] = 0x86;
	b[13] = 0xdd;
	b[14] = 0x60;
	b[19] = 20; /* payload length */
	b[20] = IPPROTO_TCP;
	b[21] = 64;
	b[22] = 0x20;
	b[23] = 0x01;
	b[24] = 0x0d;
	b[25] = 0xb8;
	b[37] = last;
	memcpy(b + 38, b + 22, 16);
	b[53] = 2;
	b[56] = (uint8_t)(dport >> 8);
	b[57] = (uint8_t)dport;
	b[66] = 0x50;
	b[67] = 0x02;
	return 74;
}

struct run {
	unsigned int verdict;
	uint8_t taint;
	uint32_t regs[NFTDP_VM_REG_SIZE / 4];
};

static void run(struct nftdp_vm_chain *c, struct nftdp_vm_state *st, const uint8_t *frame,
		uint32_t len, uint8_t flow_need, struct run *out)
{
	/* a copy of exactly len bytes on the heap: a read past it is ASan's */
	uint8_t *b = malloc(len ? len : 1);
	struct nftdp_vm_ctx ctx = {.state = st, .now_ms = 10000, .flow_need = flow_need};
	struct nftdp_vm_regs regs;
	struct nftdp_vm_pkt pkt;

	memcpy(b, frame, len);
	nftdp_vm_pkt_init(&pkt, b, len, 0, 14);
	nftdp_vm_pkt_parse_ip(&pkt);
	memset(&regs, 0, sizeof(regs));
	out->verdict = nftdp_vm_run_chain_regs(c, &pkt, &ctx, &regs);
	out->taint = ctx.flow_taint;
	memcpy(out->regs, regs.data, sizeof(out->regs));
	out->regs[SPACER_IX] = 0;
	free(b);
}

static void check_case(const struct hcase *hc, const uint8_t (*frames)[128], const uint32_t *lens,
		       int n_frames, int *drops)
{
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 1, .max_counters = 16, .max_cells = 16, .log_ring_size = 8};
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *f, *u;

	assert_int_equal(nftdp_vm_state_create(&cfg, &st), 0);
	nftdp_vm_state_gen_begin(st);
	f = compile(hc, false, st);
	u = compile(hc, true, st);
	for (int i = 0; i < n_frames; i++) {
		/* every truncation, and the whole frame */
		for (uint32_t len = 0; len <= lens[i]; len++) {
			for (uint8_t need = 0; need <= 2; need++) {
				struct run a, b;

				run(f, st, frames[i], len, need, &a);
				run(u, st, frames[i], len, need, &b);
				if (a.verdict != b.verdict || a.taint != b.taint ||
				    memcmp(a.regs, b.regs, sizeof(a.regs)))
					fail_msg("%s: frame %d, %u bytes, flow_need %u: "
						 "verdict %u/%u taint %u/%u",
						 hc->what, i, len, need, a.verdict, b.verdict,
						 a.taint, b.taint);
				*drops += len == lens[i] && need == 0 && a.verdict == NF_DROP;
			}
		}
	}
	nftdp_vm_chain_destroy(f);
	nftdp_vm_chain_destroy(u);
	nftdp_vm_state_destroy(st);
}

static void test_heads_v4(void **state)
{
	static const struct hcase cases[] = {
	    {"tcp dport @ports",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_LOOKUP,
	     0,
	     {ld_dport, lk_ports}},
	    {"tcp dport != @ports",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_LOOKUP,
	     0,
	     {ld_dport, lk_ports_inv}},
	    {"ip daddr @addrs",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_LOOKUP,
	     0,
	     {ld_daddr, lk_addrs}},
	    {"ip saddr @addrs_t",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_LOOKUP,
	     0,
	     {ld_saddr, lk_addrs_t}},
	    {"3 bytes @three",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_NH_LOOKUP,
	     0,
	     {ld_saddr3, lk_three}},
	    {"tcp flags & (syn | rst) == syn",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_BW_CMP,
	     0,
	     {ld_flags, bw_synrst, eq_syn}},
	    {"ip frag-off & 0x1fff ^ 1 != 1",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_BW_CMP,
	     0,
	     {ld_frag, bw_frag, ne_frag}},
	    {"meta l4proto @protos",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_META_LOOKUP,
	     0,
	     {l4_tcp, lk_protos}},
	    {"ip daddr 10.0.0.0/24",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_BW_CMP,
	     0,
	     {ld_daddr, bw_24, eq_net}},
	};
	uint8_t frames[6][128] = {{0}};
	uint32_t lens[6];
	int drops = 0;

	(void)state;
	lens[0] = v4(frames[0], IPPROTO_TCP, 80, 0x02, 0);	/* SYN to 80 */
	lens[1] = v4(frames[1], IPPROTO_TCP, 22, 0x06, 0);	/* SYN RST to 22 */
	lens[2] = v4(frames[2], IPPROTO_UDP, 80, 0x10, 0);	/* udp */
	lens[3] = v4(frames[3], IPPROTO_TCP, 80, 0x02, 5);	/* a later fragment */
	lens[4] = v4(frames[4], IPPROTO_TCP, 80, 0x12, 0x2000); /* more fragments */
	lens[5] = v4(frames[5], IPPROTO_ICMP, 0, 0, 0);
	frames[1][29] = 9; /* from 10.0.0.9 to 10.1.0.2 */
	frames[1][31] = 1;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i], frames, lens, 6, &drops);
	/* the cases do match something: not all accept */
	assert_true(drops > 8);
}

static void test_heads_concat_and_v6(void **state)
{
	static const struct hcase c4[] = {
	    /* meta l4proto tcp ip saddr . tcp dport @pairs: the rule index
	     * skips the l4proto test for tcp; the second load is the head */
	    {"ip saddr . tcp dport @pairs",
	     NFPROTO_IPV4,
	     NFTDP_VM_FAST_PAYLOAD_LOOKUP,
	     3,
	     {l4_tcp, is_tcp, ld_saddr_r8, ld_dport_r9, lk_pairs}},
	};
	static const struct hcase c6[] = {
	    {"ip6 saddr @addrs6",
	     NFPROTO_IPV6,
	     NFTDP_VM_FAST_PAYLOAD_NH_LOOKUP,
	     0,
	     {ld_saddr6, lk_addrs6}},
	};
	uint8_t frames[3][128] = {{0}};
	uint32_t lens[3];
	int drops = 0;

	(void)state;
	lens[0] = v4(frames[0], IPPROTO_TCP, 80, 0x02, 0);
	lens[1] = v4(frames[1], IPPROTO_TCP, 22, 0x02, 0);
	lens[2] = v4(frames[2], IPPROTO_UDP, 80, 0, 0);
	check_case(&c4[0], frames, lens, 3, &drops);
	assert_int_equal(drops, 1);
	drops = 0;
	lens[0] = v6(frames[0], 1, 80);
	lens[1] = v6(frames[1], 3, 80);
	check_case(&c6[0], frames, lens, 2, &drops);
	assert_int_equal(drops, 1);
}

/* ---- spans (struct nftdp_vm_span): the ops of a rule reached through
 * the rule index ---- */

/* an inet chain: an IPv6 rule, a rule of no expressions, an IPv4 TCP rule
 * whose leading meta tests the index skips (rule->pre) and which ends in
 * a register write, an IPv4 accept; policy drop. Indexed or not. */
static struct nftdp_vm_chain *span_chain(struct nftdp_vm_state *st, bool indexed)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_INET,
					.table = "t",
					.name = indexed ? "indexed" : "plain",
					.base = true,
					.hook = NF_INET_FORWARD,
					.policy = NF_DROP};
	const uint8_t ip6 = NFPROTO_IPV6, ip4 = NFPROTO_IPV4, tcp = IPPROTO_TCP;
	const uint8_t p80[2] = {0, 80};
	struct nftnl_rule *r[4];
	struct nftdp_vm_chain *c;
	struct nftdp_vm_error err;

	for (int i = 0; i < 4; i++)
		r[i] = nftnl_rule_alloc();
	nftnl_rule_add_expr(r[0], meta(NFT_META_NFPROTO, NFT_REG_1));
	nftnl_rule_add_expr(r[0], cmp(NFT_CMP_EQ, NFT_REG_1, &ip6, 1));
	nftnl_rule_add_expr(r[0], verdict(NF_DROP, NULL));
	nftnl_rule_add_expr(r[2], meta(NFT_META_NFPROTO, NFT_REG_1));
	nftnl_rule_add_expr(r[2], cmp(NFT_CMP_EQ, NFT_REG_1, &ip4, 1));
	nftnl_rule_add_expr(r[2], meta(NFT_META_L4PROTO, NFT_REG_1));
	nftnl_rule_add_expr(r[2], cmp(NFT_CMP_EQ, NFT_REG_1, &tcp, 1));
	nftnl_rule_add_expr(r[2], payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1));
	nftnl_rule_add_expr(r[2], cmp(NFT_CMP_EQ, NFT_REG_1, p80, 2));
	nftnl_rule_add_expr(r[2], imm32(NFT_REG32_02, 0x1234));
	nftnl_rule_add_expr(r[3], meta(NFT_META_NFPROTO, NFT_REG_1));
	nftnl_rule_add_expr(r[3], cmp(NFT_CMP_EQ, NFT_REG_1, &ip4, 1));
	nftnl_rule_add_expr(r[3], verdict(NF_ACCEPT, NULL));
	assert_int_equal(nftdp_vm_chain_create(&d, st, &c), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(nftdp_vm_chain_add_rule(c, r[i], &resolver, st, &err), 0);
		nftnl_rule_free(r[i]);
	}
	if (indexed) {
		nftdp_vm_chain_index(c);
		assert_non_null(c->ix);
		assert_non_null(c->span);
		/* the empty rule's span is empty; the TCP rule's starts past
		 * its two fused meta tests and ends with the rule */
		assert_true(c->span[1].op == c->span[1].end);
		assert_int_equal(c->rules[2].pre, 2);
		assert_ptr_equal(c->span[2].op, &c->ops[c->rules[2].first_op + 2]);
		assert_ptr_equal(c->span[2].end, &c->ops[c->rules[2].first_op + c->rules[2].n_ops]);
	} else {
		assert_null(c->span);
	}
	return c;
}

static void test_spans(void **state)
{
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 1, .max_counters = 16, .max_cells = 16, .log_ring_size = 8};
	uint8_t f[4][128];
	uint32_t len[4];
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *ix, *plain;
	int wrote = 0;

	(void)state;
	len[0] = v4(f[0], IPPROTO_TCP, 80, 0x02, 0);
	len[1] = v4(f[1], IPPROTO_TCP, 81, 0x02, 0);
	len[2] = v4(f[2], IPPROTO_UDP, 80, 0, 0);
	len[3] = v6(f[3], 1, 80);
	assert_int_equal(nftdp_vm_state_create(&cfg, &st), 0);
	nftdp_vm_state_gen_begin(st);
	ix = span_chain(st, true);
	plain = span_chain(st, false);
	for (int i = 0; i < 4; i++) {
		for (uint32_t n = 0; n <= len[i]; n++) {
			struct run a, b;

			run(ix, st, f[i], n, 0, &a);
			run(plain, st, f[i], n, 0, &b);
			if (a.verdict != b.verdict || memcmp(a.regs, b.regs, sizeof(a.regs)))
				fail_msg("frame %d, %u bytes: verdict %u/%u, reg 2 %#x/%#x", i, n,
					 a.verdict, b.verdict, a.regs[2], b.regs[2]);
			if (n == len[i])
				assert_int_equal(a.verdict, i == 3 ? NF_DROP : NF_ACCEPT);
			wrote += n == len[i] && a.regs[2] == 0x1234;
		}
	}
	/* only the TCP packet to port 80 ran the TCP rule to its end */
	assert_int_equal(wrote, 1);
	nftdp_vm_chain_destroy(ix);
	nftdp_vm_chain_destroy(plain);
	nftdp_vm_state_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_heads_v4),
	    cmocka_unit_test(test_heads_concat_and_v6),
	    cmocka_unit_test(test_spans),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
