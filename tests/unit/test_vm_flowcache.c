// SPDX-License-Identifier: BSD-3-Clause
/*
 * The per-flow verdict cache (vm/flowcache.c) through its only user,
 * nftdp_vm_gen_run_hook_burst: every test builds the same ruleset in two
 * arenas and runs the same packets through both, one ctx without a cache
 * and one with, and requires equal verdicts, marks and counters; the
 * cache's statistics show that it was used (or kept out) where it must be.
 * Rule and packet helpers follow tests/unit/test_vm_gen.c; sets are real
 * sets/ sets, conntrack a fake nftdp_vm_ct_ops.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
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
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_mark.h>

#include "gen_build.h"
#include "nft_build.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"
#include "vm_priv.h" /* the rule index of a chain (test_rule_index) */

/* ---------- rules (the expression builders: tests/lib/nft_build.h) ---------- */

static struct nftnl_expr *cmp8(uint32_t op, uint32_t sreg, uint8_t v)
{
	return cmp(op, sreg, &v, 1);
}

/* @v in host order, compared in network order */
static struct nftnl_expr *cmp16be(uint32_t op, uint32_t sreg, uint16_t v)
{
	uint16_t be = htons(v);

	return cmp(op, sreg, &be, 2);
}

/* 10.0.0.@last */
static struct nftnl_expr *cmp_ip4(uint32_t op, uint32_t sreg, uint8_t last)
{
	const uint8_t a[4] = {10, 0, 0, last};

	return cmp(op, sreg, a, 4);
}

static struct nftnl_expr *quota(uint64_t bytes)
{
	struct nftnl_expr *e = ex("quota");

	nftnl_expr_set_u64(e, NFTNL_EXPR_QUOTA_BYTES, bytes);
	nftnl_expr_set_u32(e, NFTNL_EXPR_QUOTA_FLAGS, 0);
	return e;
}

/* a rate limit expression of 10/second (test_vm_gen.c's limit10) */
static struct nftnl_expr *limit10(void)
{
	struct nftnl_expr *e = ex("limit");

	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, 10);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	return e;
}

#define TH NFT_PAYLOAD_TRANSPORT_HEADER
#define NH NFT_PAYLOAD_NETWORK_HEADER
/* meta l4proto p */
#define L4_IS(p) meta(NFT_META_L4PROTO, NFT_REG_1), cmp8(NFT_CMP_EQ, NFT_REG_1, (p))
/* meta nfproto p */
#define NFPROTO_IS(p) meta(NFT_META_NFPROTO, NFT_REG_1), cmp8(NFT_CMP_EQ, NFT_REG_1, (p))
/* th dport (tcp/udp) == p */
#define DPORT_IS(p) payload(TH, 2, 2, NFT_REG_1), cmp16be(NFT_CMP_EQ, NFT_REG_1, (p))
/* icmp type == t */
#define ICMP_TYPE_IS(t) payload(TH, 0, 1, NFT_REG_1), cmp8(NFT_CMP_EQ, NFT_REG_1, (t))
/* tcp flags & syn != 0 */
#define TCP_SYN                                                                                    \
	payload(TH, 13, 1, NFT_REG_1), bitwise_and(NFT_REG_1, 1, 0x02),                            \
	    cmp8(NFT_CMP_NEQ, NFT_REG_1, 0)
/* ip saddr / daddr == 10.0.0.a */
#define SADDR_IS(a) payload(NH, 12, 4, NFT_REG_1), cmp_ip4(NFT_CMP_EQ, NFT_REG_1, (a))
#define DADDR_IS(a) payload(NH, 16, 4, NFT_REG_1), cmp_ip4(NFT_CMP_EQ, NFT_REG_1, (a))
/* meta mark / iif == v */
#define MARK_IS(v) meta(NFT_META_MARK, NFT_REG_1), cmp32(NFT_CMP_EQ, NFT_REG_1, (v))
#define IIF_IS(v) meta(NFT_META_IIF, NFT_REG_1), cmp32(NFT_CMP_EQ, NFT_REG_1, (v))
#define CNT ex("counter")
#define DROP verdict(NF_DROP, NULL)
#define ACCEPT verdict(NF_ACCEPT, NULL)

/* compile a rule of NULL-terminated expressions into chain; asserts success */
static void add(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain *c, uint64_t handle, ...)
{
	va_list ap;
	int rc;

	va_start(ap, handle);
	rc = gen_rule_v(b, c, handle, ap);
	va_end(ap);
	assert_int_equal(rc, 0);
}

/* ---------- packets ---------- */

/* A connection as the VM sees it through nftdp_vm_ct_ops. */
struct fake_ct {
	uint32_t state; /* NF_CT_STATE_*_BIT of the packet */
	uint32_t mark;
	uint64_t packets;
};

static bool fake_ct_get(const void *ct, uint32_t key, int dir, void *dest, uint32_t len)
{
	const struct fake_ct *c = ct;

	(void)dir;
	switch (key) {
	case NFT_CT_MARK:
		memcpy(dest, &c->mark, len < 4 ? len : 4);
		return true;
	case NFT_CT_PKTS:
		memcpy(dest, &c->packets, len < 8 ? len : 8);
		return true;
	}
	return false;
}

static uint32_t fake_ct_state(const void *ct)
{
	return ((const struct fake_ct *)ct)->state;
}

static const struct nftdp_vm_ct_ops fake_ct_ops = {.get = fake_ct_get, .state = fake_ct_state};

#define CT_EST (1u << 1) /* NF_CT_STATE_BIT(IP_CT_ESTABLISHED) */
#define CT_REL (1u << 2)
#define CT_NEW (1u << 3)

/* What a test packet is; fields left 0 take the defaults of build(). */
struct flow {
	bool v6;
	uint8_t proto;	  /* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6 */
	uint8_t src, dst; /* last address byte: 10.0.0.x / fd00::x (0: 1 and 2) */
	uint16_t sport;	  /* tcp/udp (0: 1000); icmp: echo id */
	uint16_t dport;	  /* tcp/udp; icmp: echo sequence */
	uint8_t type;	  /* icmp/icmpv6 type */
	uint8_t tflags;	  /* tcp flags */
	uint8_t plen;	  /* payload bytes after the transport header */
	uint8_t cut;	  /* non-zero: the datagram ends this many bytes into L4 */
	uint16_t frag;	  /* IPv4 fragment offset, 8-byte units */
	uint8_t eth;	  /* non-zero: an Ethernet header, source 02:00:00:00:00:eth */
	uint8_t ttl;	  /* IPv4 ttl (0: 64) */
	uint8_t opt;	  /* IPv4 option words (NOPs) before the transport header */
	uint32_t mark, iif;
	struct fake_ct *ct; /* what conntrack decided (fake_ct_ops) */
};

struct tpkt {
	uint8_t buf[192];
	struct nftdp_vm_pkt pkt;
};

/* fix_setup_eth: every packet behind an Ethernet header (source byte
 * eth_default) unless the flow says otherwise, so the network header is far
 * enough into the frame for the cache's packed keys */
static uint8_t eth_default;

static struct nftdp_vm_pkt *build(struct tpkt *t, const struct flow *fl)
{
	uint32_t nhl = fl->v6 ? 40 : 20 + 4u * fl->opt;
	uint32_t hl = fl->proto == IPPROTO_TCP ? 20 : 8;
	uint32_t l4 = fl->cut ? fl->cut : hl + fl->plen;
	uint8_t eth = fl->eth ? fl->eth : eth_default;
	uint32_t l2 = eth ? 14 : 0;
	uint8_t *p = t->buf + l2, *th = p + nhl;

	memset(t, 0, sizeof(*t));
	if (eth) {
		t->buf[0] = 2, t->buf[5] = 2;
		t->buf[6] = 2, t->buf[11] = eth;
		t->buf[12] = fl->v6 ? 0x86 : 0x08, t->buf[13] = fl->v6 ? 0xdd : 0x00;
	}
	if (!fl->v6) {
		p[0] = (uint8_t)(0x45 + fl->opt);
		memset(p + 20, 1, 4u * fl->opt);
		p[2] = (uint8_t)((nhl + l4) >> 8);
		p[3] = (uint8_t)(nhl + l4);
		p[5] = 1;
		p[6] = (uint8_t)(fl->frag >> 8);
		p[7] = (uint8_t)fl->frag;
		p[8] = fl->ttl ? fl->ttl : 64;
		p[9] = fl->proto;
		p[12] = 10, p[15] = fl->src ? fl->src : 1;
		p[16] = 10, p[19] = fl->dst ? fl->dst : 2;
	} else {
		p[0] = 0x60;
		p[4] = (uint8_t)(l4 >> 8);
		p[5] = (uint8_t)l4;
		p[6] = fl->proto;
		p[7] = 64;
		p[8] = 0xfd, p[23] = fl->src ? fl->src : 1;
		p[24] = 0xfd, p[39] = fl->dst ? fl->dst : 2;
	}
	if (fl->proto == IPPROTO_ICMP || fl->proto == IPPROTO_ICMPV6) {
		th[0] = fl->type;
		th[4] = (uint8_t)(fl->sport >> 8), th[5] = (uint8_t)fl->sport;
		th[6] = (uint8_t)(fl->dport >> 8), th[7] = (uint8_t)fl->dport;
	} else {
		uint16_t sport = fl->sport ? fl->sport : 1000;

		th[0] = (uint8_t)(sport >> 8), th[1] = (uint8_t)sport;
		th[2] = (uint8_t)(fl->dport >> 8), th[3] = (uint8_t)fl->dport;
		if (fl->proto == IPPROTO_TCP) {
			th[7] = 1;
			th[12] = 0x50;
			th[13] = fl->tflags;
			th[14] = th[15] = 0xff;
		} else {
			th[4] = (uint8_t)((hl + fl->plen) >> 8);
			th[5] = (uint8_t)(hl + fl->plen);
		}
	}
	/* the same bytes at the same offsets whatever the length */
	for (uint32_t i = 0; i < fl->plen; i++)
		th[hl + i] = (uint8_t)(0x30 + i * 7);
	nftdp_vm_pkt_init(&t->pkt, t->buf, l2 + nhl + l4, eth ? 0 : -1, l2);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	t->pkt.hook = NF_INET_FORWARD;
	t->pkt.mark = fl->mark;
	t->pkt.iif = fl->iif;
	if (fl->ct) {
		t->pkt.ct = fl->ct;
		t->pkt.ct_ops = &fake_ct_ops;
	}
	return &t->pkt;
}

/* ---------- two arenas: [0] runs without a cache, [1] with one ---------- */

struct side {
	struct nftdp_vm_state *st;
	struct nftdp_vm_ctx ctx;
	struct nftdp_vm_gen *gen;
	struct nftdp_vm_chain *base[4]; /* base chains, for their policy counters */
	/* what the next build_side uses: resolver (sets), set gencursor (0: none) */
	const struct nftdp_vm_resolver *res;
	uint64_t cursor;
};

/* entries of the caches the cases use: the few flows of a case never
 * evict each other (2-way buckets), so hit counts are exact */
#define FC_ENTRIES (1u << 16)

struct fix {
	struct side s[2];
	struct nftdp_vm_flowcache *fc;
};

typedef void (*ruleset_fn)(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base);

static int fix_setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 1, .max_counters = 64, .max_cells = 16, .log_ring_size = 8};

	assert_non_null(f);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(nftdp_vm_state_create(&cfg, &f->s[i].st), 0);
		f->s[i].ctx.state = f->s[i].st;
		f->s[i].ctx.prng = 1;
		f->s[i].ctx.now_ns = 1000000000ull;
		f->s[i].ctx.now_ms = 1000;
	}
	assert_int_equal(nftdp_vm_flowcache_create(FC_ENTRIES, &f->fc), 0);
	assert_non_null(f->fc);
	f->s[1].ctx.flow = f->fc;
	*state = f;
	return 0;
}

static int fix_setup_eth(void **state)
{
	eth_default = 9;
	return fix_setup(state);
}

static int fix_teardown(void **state)
{
	struct fix *f = *state;

	eth_default = 0;

	for (int i = 0; i < 2; i++) {
		if (f->s[i].gen)
			nftdp_vm_gen_destroy(f->s[i].gen);
		nftdp_vm_state_destroy(f->s[i].st);
	}
	nftdp_vm_flowcache_destroy(f->fc);
	free(f);
	return 0;
}

/* build fn's ruleset into side s; its generation (the caller owns the old one) */
static struct nftdp_vm_gen *build_side(struct side *s, ruleset_fn fn)
{
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_error err;
	struct nftdp_vm_gen *gen = NULL;

	memset(s->base, 0, sizeof(s->base));
	assert_int_equal(nftdp_vm_gen_builder_create(s->st, s->res, &b), 0);
	if (s->cursor)
		nftdp_vm_gen_set_gencursor(b, s->cursor);
	fn(b, s->base);
	assert_int_equal(nftdp_vm_gen_build(b, &gen, &err), 0);
	assert_non_null(gen);
	return gen;
}

/* the same ruleset on both sides, replacing (freeing) what they ran */
static void build_both(struct fix *f, ruleset_fn fn)
{
	for (int i = 0; i < 2; i++) {
		if (f->s[i].gen)
			nftdp_vm_gen_destroy(f->s[i].gen);
		f->s[i].gen = build_side(&f->s[i], fn);
	}
}

/* longest burst run_both takes: run_hook_burst splits what is above
 * NFTDP_VM_BURST_MAX */
#define RUN_MAX (NFTDP_VM_BURST_MAX * 2 + 3)

/*
 * Run n flows (all of nfproto) as one burst through both sides' current
 * generations; both must give the same verdicts and marks. v (optional)
 * gets the verdicts.
 */
static void run_both_hook(struct fix *f, uint8_t nfproto, uint8_t hook, const struct flow *fl,
			  unsigned int n, unsigned int *v)
{
	static struct tpkt t[2][RUN_MAX];
	struct nftdp_vm_pkt *pk[2][RUN_MAX];
	unsigned int vv[2][RUN_MAX];

	assert_true(n <= RUN_MAX);
	for (int s = 0; s < 2; s++) {
		for (unsigned int i = 0; i < n; i++) {
			pk[s][i] = build(&t[s][i], &fl[i]);
			pk[s][i]->hook = hook;
			vv[s][i] = 0xdead;
		}
		nftdp_vm_gen_run_hook_burst(f->s[s].gen, nfproto, hook, pk[s], n, vv[s],
					    &f->s[s].ctx);
	}
	for (unsigned int i = 0; i < n; i++) {
		if (vv[0][i] != vv[1][i])
			fprintf(stderr, "packet %u: verdict %u without cache, %u with\n", i,
				vv[0][i], vv[1][i]);
		assert_int_equal(vv[1][i], vv[0][i]);
		assert_int_equal(pk[1][i]->mark, pk[0][i]->mark);
		if (v)
			v[i] = vv[1][i];
	}
}

static void run_both(struct fix *f, uint8_t nfproto, const struct flow *fl, unsigned int n,
		     unsigned int *v)
{
	run_both_hook(f, nfproto, NF_INET_FORWARD, fl, n, v);
}

/* one flow, one packet: its verdict */
static unsigned int run1(struct fix *f, uint8_t nfproto, const struct flow *fl)
{
	unsigned int v;

	run_both(f, nfproto, fl, 1, &v);
	return v;
}

static struct nftdp_vm_flow_stats stats(const struct fix *f)
{
	struct nftdp_vm_flow_stats st;

	memset(&st, 0xa5, sizeof(st));
	nftdp_vm_flowcache_stats(f->fc, &st);
	return st;
}

#define HITS_SINCE(f, a) (stats(f).hits - (a).hits)

/*
 * Every stateful value of rules 1..max_handle of table t (family) and
 * every base chain's policy counter: equal on both sides. Returns the sum
 * of the rule counters' packets, so a caller can tell something counted.
 */
static uint64_t same_counters(struct fix *f, uint8_t family, uint64_t max_handle)
{
	uint64_t sum = 0;

	for (uint64_t h = 1; h <= max_handle; h++) {
		for (uint32_t i = 0; i < 12; i++) {
			struct nftdp_vm_stateful_val a, b;
			int ra = nftdp_vm_state_read_rule(f->s[0].st, family, "t", h, i, false, &a);
			int rb = nftdp_vm_state_read_rule(f->s[1].st, family, "t", h, i, false, &b);

			if (ra != rb)
				fprintf(stderr,
					"rule %llu expr %u: read %d without cache, %d with\n",
					(unsigned long long)h, i, ra, rb);
			assert_int_equal(rb, ra);
			if (ra)
				continue;
			if (a.packets != b.packets || a.bytes != b.bytes ||
			    a.consumed != b.consumed)
				fprintf(stderr,
					"rule %llu expr %u: %llu/%llu without cache, %llu/%llu "
					"with\n",
					(unsigned long long)h, i, (unsigned long long)a.packets,
					(unsigned long long)a.bytes, (unsigned long long)b.packets,
					(unsigned long long)b.bytes);
			assert_int_equal(b.packets, a.packets);
			assert_int_equal(b.bytes, a.bytes);
			assert_int_equal(b.consumed, a.consumed);
			sum += a.packets;
		}
	}
	for (int c = 0; c < 4; c++) {
		struct nftdp_vm_counter a, b;

		if (!f->s[0].base[c])
			continue;
		assert_non_null(f->s[1].base[c]);
		int ra = nftdp_vm_chain_stats(f->s[0].base[c], f->s[0].st, &a);
		int rb = nftdp_vm_chain_stats(f->s[1].base[c], f->s[1].st, &b);

		assert_int_equal(rb, ra);
		if (ra)
			continue;
		if (a.packets != b.packets || a.bytes != b.bytes)
			fprintf(stderr, "base chain %d policy: %llu/%llu without, %llu/%llu with\n",
				c, (unsigned long long)a.packets, (unsigned long long)a.bytes,
				(unsigned long long)b.packets, (unsigned long long)b.bytes);
		assert_int_equal(b.packets, a.packets);
		assert_int_equal(b.bytes, a.bytes);
	}
	return sum;
}

static uint64_t rule_packets(struct fix *f, uint8_t family, uint64_t handle, uint32_t idx)
{
	struct nftdp_vm_stateful_val v;

	assert_int_equal(nftdp_vm_state_read_rule(f->s[1].st, family, "t", handle, idx, false, &v),
			 0);
	return v.packets;
}

/* ---------- 1: verdicts and counters over a mixed burst ---------- */

/*
 * inet forward:
 *   fwd  (prio 0, accept):  1 counter
 *                           2 tcp dport 22 counter drop
 *                           3 icmp type echo-request counter drop
 *                           4 udp dport 53 counter accept
 *   post (prio 10, drop):   5 meta l4proto udp counter accept
 *                           6 meta nfproto ipv6 counter accept
 */
static void rs_mixed(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *fwd, *post;

	fwd = base[0] = gen_chain(b, NFPROTO_INET, "fwd", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	post = base[1] = gen_chain(b, NFPROTO_INET, "post", true, NF_INET_FORWARD, 10, NF_DROP, 1);
	add(b, fwd, 1, CNT, NULL);
	add(b, fwd, 2, L4_IS(IPPROTO_TCP), DPORT_IS(22), CNT, DROP, NULL);
	add(b, fwd, 3, L4_IS(IPPROTO_ICMP), ICMP_TYPE_IS(8), CNT, DROP, NULL);
	add(b, fwd, 4, L4_IS(IPPROTO_UDP), DPORT_IS(53), CNT, ACCEPT, NULL);
	add(b, post, 5, L4_IS(IPPROTO_UDP), CNT, ACCEPT, NULL);
	add(b, post, 6, NFPROTO_IS(NFPROTO_IPV6), CNT, ACCEPT, NULL);
}

#define T4(dp, ...)                                                                                \
	{                                                                                          \
		.proto = IPPROTO_TCP, .dport = (dp), __VA_ARGS__                                   \
	}
#define U4(dp, ...)                                                                                \
	{                                                                                          \
		.proto = IPPROTO_UDP, .dport = (dp), __VA_ARGS__                                   \
	}
#define I4(ty, ...)                                                                                \
	{                                                                                          \
		.proto = IPPROTO_ICMP, .type = (ty), .sport = 7, .dport = 1, __VA_ARGS__           \
	}
#define T6(dp, ...)                                                                                \
	{                                                                                          \
		.v6 = true, .proto = IPPROTO_TCP, .dport = (dp), __VA_ARGS__                       \
	}
#define U6(dp, ...)                                                                                \
	{                                                                                          \
		.v6 = true, .proto = IPPROTO_UDP, .dport = (dp), __VA_ARGS__                       \
	}
#define I6(ty, ...)                                                                                \
	{                                                                                          \
		.v6 = true, .proto = IPPROTO_ICMPV6, .type = (ty), .sport = 7, .dport = 1,         \
		__VA_ARGS__                                                                        \
	}

static void test_mixed_same_as_uncached(void **state)
{
	struct fix *f = *state;
	/* each flow twice, interleaved */
	struct flow v4[] = {T4(22), U4(53), I4(8), T4(80), U4(5000), I4(0),
			    T4(22), U4(53), I4(8), T4(80), U4(5000), I4(0)};
	const unsigned int e4[] = {NF_DROP, NF_ACCEPT, NF_DROP, NF_DROP, NF_ACCEPT, NF_DROP};
	struct flow v6[] = {T6(22), U6(53), I6(128), T6(80), T6(22), U6(53), I6(128), T6(80)};
	const unsigned int e6[] = {NF_DROP, NF_ACCEPT, NF_ACCEPT, NF_ACCEPT};
	const unsigned int n4 = sizeof(v4) / sizeof(v4[0]), n6 = sizeof(v6) / sizeof(v6[0]);
	unsigned int v[NFTDP_VM_BURST_MAX];
	struct nftdp_vm_flow_stats s0, s1;

	build_both(f, rs_mixed);
	/* round 1: misses (duplicates in the burst may or may not hit) */
	s0 = stats(f);
	run_both(f, NFPROTO_IPV4, v4, n4, v);
	for (unsigned int i = 0; i < n4; i++)
		assert_int_equal(v[i], e4[i % 6]);
	run_both(f, NFPROTO_IPV6, v6, n6, v);
	for (unsigned int i = 0; i < n6; i++)
		assert_int_equal(v[i], e6[i % 4]);
	s1 = stats(f);
	assert_true(s1.misses - s0.misses >= 10); /* ten flows */
	assert_true(s1.inserts - s0.inserts >= 10);
	assert_int_equal(s1.uncacheable, s0.uncacheable);
	assert_int_equal(s1.hits + s1.misses - s0.hits - s0.misses, n4 + n6);
	same_counters(f, NFPROTO_INET, 6);

	/* round 2: the same packets, every one a hit */
	s0 = stats(f);
	run_both(f, NFPROTO_IPV4, v4, n4, v);
	for (unsigned int i = 0; i < n4; i++)
		assert_int_equal(v[i], e4[i % 6]);
	run_both(f, NFPROTO_IPV6, v6, n6, v);
	for (unsigned int i = 0; i < n6; i++)
		assert_int_equal(v[i], e6[i % 4]);
	s1 = stats(f);
	assert_int_equal(s1.hits - s0.hits, n4 + n6);
	assert_int_equal(s1.misses, s0.misses);
	same_counters(f, NFPROTO_INET, 6);

	/*
	 * round 3: the same flows with other lengths (no rule reads a length):
	 * still hits, and a hit charges this packet's bytes
	 */
	for (unsigned int i = 0; i < n4; i++)
		v4[i].plen = (uint8_t)(3 + 5 * i);
	for (unsigned int i = 0; i < n6; i++)
		v6[i].plen = (uint8_t)(11 + 3 * i);
	s0 = stats(f);
	run_both(f, NFPROTO_IPV4, v4, n4, v);
	for (unsigned int i = 0; i < n4; i++)
		assert_int_equal(v[i], e4[i % 6]);
	run_both(f, NFPROTO_IPV6, v6, n6, v);
	for (unsigned int i = 0; i < n6; i++)
		assert_int_equal(v[i], e6[i % 4]);
	s1 = stats(f);
	assert_int_equal(s1.hits - s0.hits, n4 + n6);
	same_counters(f, NFPROTO_INET, 6);

	/* and the counters are what the ruleset says, not merely equal */
	assert_int_equal(rule_packets(f, NFPROTO_INET, 1, 0), 3 * (n4 + n6));
	assert_int_equal(rule_packets(f, NFPROTO_INET, 2, 4), 3 * 4); /* tcp 22, v4 and v6 */
	assert_int_equal(rule_packets(f, NFPROTO_INET, 3, 4), 3 * 2); /* icmp echo */
	assert_int_equal(rule_packets(f, NFPROTO_INET, 4, 4), 3 * 4); /* udp 53 */
	assert_int_equal(rule_packets(f, NFPROTO_INET, 5, 2), 3 * 6); /* udp */
	assert_int_equal(rule_packets(f, NFPROTO_INET, 6, 2), 3 * 4); /* v6 tcp 80, icmpv6 */
	struct nftdp_vm_counter pol;

	/* post's policy: v4 tcp 80 and icmp echo-reply */
	assert_int_equal(nftdp_vm_chain_stats(f->s[1].base[1], f->s[1].st, &pol), 0);
	assert_int_equal(pol.packets, 3 * 4);
}

/* ---------- 2: the key holds what the packet's path can read ---------- */

/*
 * ip forward, accept:
 *   1 meta l4proto tcp tcp flags & syn != 0 counter drop
 *   2 meta l4proto udp udp dport 53 counter drop
 */
static void rs_flags(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 1, L4_IS(IPPROTO_TCP), TCP_SYN, CNT, DROP, NULL);
	add(b, c, 2, L4_IS(IPPROTO_UDP), DPORT_IS(53), CNT, DROP, NULL);
}

/* run one udp packet to 5000 whose byte th+13 is b; its verdict */
static unsigned int udp_th13(struct fix *f, uint8_t b)
{
	static struct tpkt t[2];
	struct flow fl = U4(5000, .plen = 8);
	struct nftdp_vm_pkt *pk[2];
	unsigned int v[2];

	for (int s = 0; s < 2; s++) {
		pk[s] = build(&t[s], &fl);
		assert_true(pk[s]->len > pk[s]->th_off + 13);
		pk[s]->data[pk[s]->th_off + 13] = b;
		nftdp_vm_gen_run_hook_burst(f->s[s].gen, NFPROTO_IPV4, NF_INET_FORWARD, &pk[s], 1,
					    &v[s], &f->s[s].ctx);
	}
	assert_int_equal(v[1], v[0]);
	return v[1];
}

static void test_key_precision(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_flow_stats s0;

	build_both(f, rs_flags);
	/* udp: th+13 is read only by a tcp rule, so it is not in the key */
	s0 = stats(f);
	assert_int_equal(udp_th13(f, 0x00), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	assert_int_equal(udp_th13(f, 0x02), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 1);
	assert_int_equal(udp_th13(f, 0xff), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 2);
	assert_int_equal(stats(f).inserts - s0.inserts, 1);

	/* tcp: th+13 is, so ack and syn get entries of their own */
	const struct flow ack = T4(80, .tflags = 0x10), syn = T4(80, .tflags = 0x02);
	const struct flow both[] = {ack, syn, syn, ack};

	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &ack), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &syn), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	unsigned int v[4];

	run_both(f, NFPROTO_IPV4, both, 4, v);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(v[1], NF_DROP);
	assert_int_equal(v[2], NF_DROP);
	assert_int_equal(v[3], NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 4);

	/* the other order, on a fresh cache: syn cached first */
	nftdp_vm_flowcache_destroy(f->fc);
	assert_int_equal(nftdp_vm_flowcache_create(FC_ENTRIES, &f->fc), 0);
	f->s[1].ctx.flow = f->fc;
	s0 = stats(f);
	assert_int_equal(s0.hits, 0);
	assert_int_equal(run1(f, NFPROTO_IPV4, &syn), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &ack), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	/* and tcp with other sports shares (no rule reads th+0) */
	const struct flow ack2 = T4(80, .tflags = 0x10, .sport = 4242);

	assert_int_equal(run1(f, NFPROTO_IPV4, &ack2), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 1);
	same_counters(f, NFPROTO_IPV4, 2);
}

/*
 * With the transport header right after the fixed IPv4 header, a key reads
 * whole words of the headers under a mask: bytes no rule reads (the ttl)
 * do not split a flow. IPv4 options move the transport header, and the
 * packets key field by field: the same verdicts and counters as uncached.
 */
static void test_key_window(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_flow_stats s0;
	const struct flow ack = T4(80, .tflags = 0x10), ack_ttl = T4(80, .tflags = 0x10, .ttl = 9);
	const struct flow syn = T4(80, .tflags = 0x02);
	const struct flow ack_opt = T4(80, .tflags = 0x10, .opt = 1);
	const struct flow syn_opt = T4(80, .tflags = 0x02, .opt = 2, .ttl = 3);
	const struct flow udp53_opt = U4(53, .opt = 1), udp54_opt = U4(54, .opt = 1);

	build_both(f, rs_flags);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &ack), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &ack_ttl), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 1);
	assert_int_equal(run1(f, NFPROTO_IPV4, &syn), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 1);
	/* options: keyed field by field (behind a link header, with keys of
	 * their own), still precise; each packet's second run hits */
	for (unsigned int r = 0; r < 2; r++) {
		const struct flow *opt[] = {&ack_opt, &syn_opt, &udp53_opt, &udp54_opt};
		const unsigned int want[] = {NF_ACCEPT, NF_DROP, NF_DROP, NF_ACCEPT};

		for (unsigned int i = 0; i < 4; i++) {
			assert_int_equal(run1(f, NFPROTO_IPV4, opt[i]), want[i]);
			s0 = stats(f);
			assert_int_equal(run1(f, NFPROTO_IPV4, opt[i]), want[i]);
			assert_int_equal(HITS_SINCE(f, s0), 1);
		}
	}
	assert_true(same_counters(f, NFPROTO_IPV4, 2) > 0);
}

/*
 * ip forward, accept:
 *   61 meta l4proto tcp tcp flags & syn != 0 counter
 *   62 meta l4proto tcp tcp flags == syn|ack counter drop
 */
static void rs_masked(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 61, L4_IS(IPPROTO_TCP), TCP_SYN, CNT, NULL);
	add(b, c, 62, L4_IS(IPPROTO_TCP), payload(TH, 13, 1, NFT_REG_1),
	    cmp8(NFT_CMP_EQ, NFT_REG_1, 0x12), CNT, DROP, NULL);
}

/*
 * ip forward, accept:
 *   63 meta l4proto tcp tcp flags & syn != 0 counter drop
 *   65 meta l4proto tcp tcp flags & rst != 0 counter drop
 */
static void rs_masked_only(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 63, L4_IS(IPPROTO_TCP), TCP_SYN, CNT, DROP, NULL);
	add(b, c, 65, L4_IS(IPPROTO_TCP), payload(TH, 13, 1, NFT_REG_1),
	    bitwise_and(NFT_REG_1, 1, 0x04), cmp8(NFT_CMP_NEQ, NFT_REG_1, 0), CNT, DROP, NULL);
}

/*
 * A load that the next op masks in place keys on the mask's bits only
 * (flags other rules do not test share an entry), unless another rule
 * reads the same bytes whole.
 */
static void test_masked_loads(void **state)
{
	struct fix *f = *state;
	const struct flow syn = T4(80, .tflags = 0x02), synack = T4(80, .tflags = 0x12);
	const struct flow ack = T4(80, .tflags = 0x10), ackpsh = T4(80, .tflags = 0x18);
	const struct flow rst = T4(80, .tflags = 0x04), rstack = T4(80, .tflags = 0x14);
	struct nftdp_vm_flow_stats s0;

	/* syn cached first: syn|ack has the same syn bit, but rule 62 reads
	 * the whole byte */
	build_both(f, rs_masked);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &syn), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &synack), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &syn), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &synack), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 2);
	same_counters(f, NFPROTO_IPV4, 62);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 61, 5), 4);

	/* only the syn and rst bits are read: ack and ack|psh share, syn and
	 * syn|ack too, rst and rst|ack too */
	build_both(f, rs_masked_only);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &ack), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &ackpsh), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 1);
	assert_int_equal(run1(f, NFPROTO_IPV4, &syn), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &synack), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 2);
	assert_int_equal(run1(f, NFPROTO_IPV4, &rst), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &rstack), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 3);
	same_counters(f, NFPROTO_IPV4, 65);
}

/* ip forward, accept: 64 @th,104,8 & 0 == 0 counter drop: true whenever
 * the load is in the packet */
static void rs_mask0(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 64, payload(TH, 13, 1, NFT_REG_1), bitwise_and(NFT_REG_1, 1, 0),
	    cmp8(NFT_CMP_EQ, NFT_REG_1, 0), CNT, DROP, NULL);
}

/* a mask that leaves no bit of a load still leaves whether it was in the
 * packet: a datagram cut before th+13 does not share the full one's entry */
static void test_mask_zero_bounds(void **state)
{
	struct fix *f = *state;
	const struct flow full = T4(80), cut = T4(80, .cut = 10);

	struct tpkt t;
	unsigned int v[2];

	build_both(f, rs_mask0);
	assert_int_equal(run1(f, NFPROTO_IPV4, &full), NF_DROP);
	for (int s = 0; s < 2; s++) {
		struct nftdp_vm_pkt *p = build(&t, &cut);

		nftdp_vm_gen_run_hook_burst(f->s[s].gen, NFPROTO_IPV4, NF_INET_FORWARD, &p, 1,
					    &v[s], &f->s[s].ctx);
	}
	assert_int_equal(v[0], NF_ACCEPT); /* the load breaks */
	assert_int_equal(v[1], v[0]);
	assert_int_equal(run1(f, NFPROTO_IPV4, &full), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &cut), NF_ACCEPT);
	same_counters(f, NFPROTO_IPV4, 64);
}

/* ---------- 3: a load out of bounds is not a load of zeros ---------- */

/*
 * ip forward, accept: 1 @th,48,16 == 0 (udp checksum) counter drop
 * (a load the kernel and vm.c do inline: nft_payload_fast_eval)
 */
static void rs_csum(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 1, payload(TH, 6, 2, NFT_REG_1), cmp16be(NFT_CMP_EQ, NFT_REG_1, 0), CNT, DROP,
	    NULL);
}

/*
 * ip forward, accept: 11 @th,40,24 == 0x080000 (udp length 8, checksum 0)
 * counter drop: three bytes, nft_payload_eval, which also breaks on a
 * fragment (the fast load above does not look at fragoff, as the kernel's)
 */
static void rs_slow(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	static const uint8_t want[3] = {8, 0, 0};
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 11, payload(TH, 5, 3, NFT_REG_1), cmp(NFT_CMP_EQ, NFT_REG_1, want, 3), CNT, DROP,
	    NULL);
}

static void test_out_of_bounds(void **state)
{
	struct fix *f = *state;
	/* checksum 0 (drop); the datagram cut before the checksum (the load
	 * breaks: accept); a later fragment (transport loads break: accept) */
	const struct flow full = U4(5000), cut = U4(5000, .cut = 6), frag = U4(5000, .frag = 1);
	const struct flow all[] = {full, cut, frag, cut, full, frag};
	const unsigned int e[] = {NF_DROP, NF_ACCEPT, NF_ACCEPT, NF_ACCEPT, NF_DROP, NF_ACCEPT};
	struct nftdp_vm_flow_stats s0;
	struct tpkt t;
	unsigned int v[6];

	/* the views are what the test means */
	assert_true(build(&t, &cut)->flags & NFTDP_VM_PKT_F_L4PROTO);
	assert_int_equal(build(&t, &cut)->len - build(&t, &cut)->nh_off, 26);
	assert_true(build(&t, &frag)->fragoff != 0);
	assert_true(build(&t, &frag)->flags & NFTDP_VM_PKT_F_L4PROTO);

	/* the inlined load: full cached first, then the cut one */
	build_both(f, rs_csum);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &full), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &cut), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	/* both have entries of their own */
	run_both(f, NFPROTO_IPV4, all, 2, v);
	assert_int_equal(v[0], NF_DROP);
	assert_int_equal(v[1], NF_ACCEPT);
	run_both(f, NFPROTO_IPV4, &all[3], 2, v);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(v[1], NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 4);
	same_counters(f, NFPROTO_IPV4, 1);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 1, 2), 3);

	/* the full eval, on a fresh cache: the cut one and the fragment first */
	nftdp_vm_flowcache_destroy(f->fc);
	assert_int_equal(nftdp_vm_flowcache_create(FC_ENTRIES, &f->fc), 0);
	f->s[1].ctx.flow = f->fc;
	build_both(f, rs_slow);
	s0 = stats(f);
	assert_int_equal(s0.hits, 0);
	assert_int_equal(run1(f, NFPROTO_IPV4, &cut), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &frag), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &full), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	run_both(f, NFPROTO_IPV4, all, 6, v);
	for (int i = 0; i < 6; i++)
		assert_int_equal(v[i], e[i]);
	assert_int_equal(HITS_SINCE(f, s0), 6);
	same_counters(f, NFPROTO_IPV4, 11);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 11, 2), 3);
}

/* ---------- 4: limit and quota keep a path out of the cache ---------- */

/* ip forward, drop: 1 limit rate 10/second counter accept */
static void rs_limit(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	add(b, c, 1, limit10(), CNT, ACCEPT, NULL);
}

/* ip forward, drop: 11 quota 200 bytes counter accept */
static void rs_quota(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	add(b, c, 11, quota(200), CNT, ACCEPT, NULL);
}

/*
 * ip forward, accept:
 *   21 ip saddr 10.0.0.9 limit rate 10/second counter drop
 *   22 meta l4proto udp limit rate 10/second drop
 *   23 counter
 */
static void rs_limit_guarded(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 21, SADDR_IS(9), limit10(), CNT, DROP, NULL);
	add(b, c, 22, L4_IS(IPPROTO_UDP), limit10(), DROP, NULL);
	add(b, c, 23, CNT, NULL);
}

/* rounds of n packets of one tcp flow, 100 ms apart: accepted ones */
static unsigned int rounds(struct fix *f, unsigned int r, unsigned int n)
{
	struct flow fl[NFTDP_VM_BURST_MAX];
	unsigned int v[NFTDP_VM_BURST_MAX], acc = 0;

	for (unsigned int i = 0; i < n; i++)
		fl[i] = (struct flow)T4(80);
	for (unsigned int k = 0; k < r; k++) {
		run_both(f, NFPROTO_IPV4, fl, n, v);
		for (unsigned int i = 0; i < n; i++)
			acc += v[i] == NF_ACCEPT;
		for (int s = 0; s < 2; s++) {
			f->s[s].ctx.now_ns += 100000000ull;
			f->s[s].ctx.now_ms += 100;
		}
	}
	return acc;
}

static void test_uncacheable(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_flow_stats s0, s1;
	unsigned int acc;

	/* limit on every packet's path: never cached, limits as without */
	build_both(f, rs_limit);
	s0 = stats(f);
	acc = rounds(f, 6, 16);
	s1 = stats(f);
	assert_true(acc > 0 && acc < 6 * 16); /* it did limit */
	assert_int_equal(s1.hits, s0.hits);
	assert_int_equal(s1.inserts, s0.inserts);
	assert_int_equal(s1.uncacheable - s0.uncacheable, 6 * 16);
	assert_int_equal(s1.misses - s0.misses, 6 * 16);
	same_counters(f, NFPROTO_IPV4, 1);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 1, 1), acc);

	/* quota: 40-byte packets, 200 bytes */
	build_both(f, rs_quota);
	s0 = stats(f);
	acc = rounds(f, 4, 4);
	s1 = stats(f);
	assert_true(acc > 0 && acc < 4 * 4);
	assert_int_equal(s1.hits, s0.hits);
	assert_int_equal(s1.inserts, s0.inserts);
	assert_int_equal(s1.uncacheable - s0.uncacheable, 4 * 4);
	same_counters(f, NFPROTO_IPV4, 11);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 11, 1), acc);

	/* a limit the path never reaches does not keep it out: 10.0.0.1 is
	 * cached, 10.0.0.9 (through rule 21's limit) never is */
	build_both(f, rs_limit_guarded);
	struct flow fl[16];
	unsigned int v[16], acc9 = 0;

	for (int i = 0; i < 16; i++)
		fl[i] = (struct flow)T4(80, .src = i % 2 ? 9 : 1);
	s0 = stats(f);
	run_both(f, NFPROTO_IPV4, &fl[0], 1, v); /* 10.0.0.1 alone: miss, insert */
	assert_int_equal(v[0], NF_ACCEPT);
	s1 = stats(f);
	assert_int_equal(s1.inserts - s0.inserts, 1);
	assert_int_equal(s1.uncacheable, s0.uncacheable);
	for (int k = 0; k < 3; k++) {
		run_both(f, NFPROTO_IPV4, fl, 16, v);
		for (int i = 0; i < 16; i++) {
			if (i % 2 == 0)
				assert_int_equal(v[i], NF_ACCEPT);
			else
				acc9 += v[i] == NF_ACCEPT;
		}
	}
	s1 = stats(f);
	assert_true(acc9 < 3 * 8); /* rule 21 dropped some: its limit ran */
	assert_int_equal(s1.hits - s0.hits, 3 * 8);
	assert_int_equal(s1.uncacheable - s0.uncacheable, 3 * 8);
	same_counters(f, NFPROTO_IPV4, 23);
}

/* ---------- 5: a new generation never sees the old one's entries ---------- */

/* ip forward, accept: 1 ip saddr 10.0.0.1 counter accept / drop */
static void rs_accept1(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 1, SADDR_IS(1), CNT, ACCEPT, NULL);
}

static void rs_drop1(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 1, SADDR_IS(1), CNT, DROP, NULL);
}

static void expect_all(struct fix *f, const struct flow *fl, unsigned int n, unsigned int verdict)
{
	unsigned int v[NFTDP_VM_BURST_MAX];

	run_both(f, NFPROTO_IPV4, fl, n, v);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(v[i], verdict);
}

static void test_invalidation(void **state)
{
	struct fix *f = *state;
	/* one flow per l4proto: the rules read nothing else that differs */
	const struct flow fl[] = {T4(80), U4(53), I4(8)};
	struct nftdp_vm_gen *a[2], *bg[2];
	struct nftdp_vm_flow_stats s0;

	build_both(f, rs_accept1);
	expect_all(f, fl, 3, NF_ACCEPT);
	s0 = stats(f);
	expect_all(f, fl, 3, NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 3);

	/* gen B, same key fields, the flows dropped; A still alive */
	for (int s = 0; s < 2; s++) {
		a[s] = f->s[s].gen;
		bg[s] = f->s[s].gen = build_side(&f->s[s], rs_drop1);
	}
	s0 = stats(f);
	expect_all(f, fl, 3, NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	s0 = stats(f);
	expect_all(f, fl, 3, NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 3);
	/* a reader still on A (a burst that loaded it before the publish) */
	for (int s = 0; s < 2; s++)
		f->s[s].gen = a[s];
	expect_all(f, fl, 3, NF_ACCEPT);

	/* A freed; C (A's rules again) may take its memory */
	for (int s = 0; s < 2; s++) {
		nftdp_vm_gen_destroy(a[s]);
		f->s[s].gen = bg[s];
	}
	build_both(f, rs_accept1); /* frees B */
	s0 = stats(f);
	expect_all(f, fl, 3, NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	assert_true(same_counters(f, NFPROTO_IPV4, 1) >= 3);
}

/* ---------- 6: fields read in a chain jumped to are keyed ---------- */

/*
 * ip forward:
 *   c   (accept): 1 meta l4proto tcp jump sub; 3 counter
 *   sub:          2 tcp dport 22 counter drop
 */
static void rs_jump(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c, *sub;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	sub = gen_chain(b, NFPROTO_IPV4, "sub", false, 0, 0, 0, 1);
	add(b, sub, 2, DPORT_IS(22), CNT, DROP, NULL);
	add(b, c, 1, L4_IS(IPPROTO_TCP), verdict(NFT_JUMP, "sub"), NULL);
	add(b, c, 3, CNT, NULL);
}

/*
 * ip forward:
 *   c   (drop): 11 goto sub; 12 accept (never reached)
 *   sub:        13 ip daddr 10.0.0.2 counter accept
 */
static void rs_goto(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c, *sub;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	sub = gen_chain(b, NFPROTO_IPV4, "sub", false, 0, 0, 0, 1);
	add(b, sub, 13, DADDR_IS(2), CNT, ACCEPT, NULL);
	add(b, c, 11, verdict(NFT_GOTO, "sub"), NULL);
	add(b, c, 12, ACCEPT, NULL);
}

static void test_jump_goto(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_flow_stats s0;
	unsigned int v[2];

	build_both(f, rs_jump);
	const struct flow j[] = {T4(80), T4(22)};

	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &j[0]), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &j[1]), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	run_both(f, NFPROTO_IPV4, j, 2, v);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(v[1], NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 2);
	same_counters(f, NFPROTO_IPV4, 3);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 2, 2), 2);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 3, 0), 2);

	build_both(f, rs_goto);
	const struct flow g[] = {T4(80, .dst = 3), T4(80, .dst = 2)};

	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &g[0]), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &g[1]), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	run_both(f, NFPROTO_IPV4, g, 2, v);
	assert_int_equal(v[0], NF_DROP);
	assert_int_equal(v[1], NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 2);
	same_counters(f, NFPROTO_IPV4, 13);
}

/* ---------- the rule index (vm/rule_index.c) ---------- */

/*
 * inet forward, accept; every rule counts, so a rule the index skips that
 * the linear walk would have run to its end shows in the counters:
 *   21 meta nfproto ipv4 meta l4proto tcp th dport 22 counter drop
 *   22 meta nfproto ipv6 meta l4proto udp counter
 *   23 meta l4proto udp th dport 53 counter accept
 *   24 meta nfproto ipv6 counter
 *   25 meta l4proto != tcp counter
 *   26 meta l4proto 47 counter drop
 *   27 meta l4proto icmp jump sub
 *   28 meta nfproto ipv4 meta l4proto icmp counter
 *   29 counter
 *   sub: 31 meta l4proto tcp counter; 32 meta l4proto icmp icmp type 8
 *        counter drop; 33 meta nfproto ipv6 counter
 */
static struct nftdp_vm_chain *ix_sub[2];
static int ix_side;

static void rs_index(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c, *sub;

	c = base[0] = gen_chain(b, NFPROTO_INET, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	sub = ix_sub[ix_side] = gen_chain(b, NFPROTO_INET, "sub", false, 0, 0, 0, 1);
	add(b, sub, 31, L4_IS(IPPROTO_TCP), CNT, NULL);
	add(b, sub, 32, L4_IS(IPPROTO_ICMP), ICMP_TYPE_IS(8), CNT, DROP, NULL);
	add(b, sub, 33, NFPROTO_IS(NFPROTO_IPV6), CNT, NULL);
	/* ip ttl 1, loaded into another register than the test's */
	add(b, sub, 34, NFPROTO_IS(NFPROTO_IPV4), payload(NH, 8, 1, NFT_REG_2),
	    cmp8(NFT_CMP_EQ, NFT_REG_2, 1), CNT, DROP, NULL);
	add(b, c, 21, NFPROTO_IS(NFPROTO_IPV4), L4_IS(IPPROTO_TCP), DPORT_IS(22), CNT, DROP, NULL);
	add(b, c, 22, NFPROTO_IS(NFPROTO_IPV6), L4_IS(IPPROTO_UDP), CNT, NULL);
	add(b, c, 23, L4_IS(IPPROTO_UDP), DPORT_IS(53), CNT, ACCEPT, NULL);
	add(b, c, 24, NFPROTO_IS(NFPROTO_IPV6), CNT, NULL);
	add(b, c, 25, meta(NFT_META_L4PROTO, NFT_REG_1), cmp8(NFT_CMP_NEQ, NFT_REG_1, IPPROTO_TCP),
	    CNT, NULL);
	add(b, c, 26, L4_IS(47), CNT, DROP, NULL);
	add(b, c, 27, L4_IS(IPPROTO_ICMP), verdict(NFT_JUMP, "sub"), NULL);
	add(b, c, 28, NFPROTO_IS(NFPROTO_IPV4), L4_IS(IPPROTO_ICMP), CNT, NULL);
	add(b, c, 29, CNT, NULL);
}

static void test_rule_index(void **state)
{
	struct fix *f = *state;
	const struct flow v4[] = {T4(22),
				  T4(80),
				  U4(53),
				  U4(54),
				  I4(8),
				  I4(0),
				  {.proto = 47},
				  {.proto = 50},
				  {.proto = 132},
				  T4(80, .frag = 4),
				  U4(53, .cut = 2),
				  I4(8, .cut = 1)};
	const struct flow v6[] = {T6(22),
				  T6(80),
				  U6(53),
				  U6(54),
				  I6(128),
				  {.v6 = true, .proto = 47},
				  {.v6 = true, .proto = 132},
				  U6(53, .cut = 2)};
	const unsigned int n4 = sizeof(v4) / sizeof(v4[0]), n6 = sizeof(v6) / sizeof(v6[0]);
	const struct nftdp_vm_rule_index *ix;
	unsigned int tcp, v[RUN_MAX];

	for (ix_side = 0; ix_side < 2; ix_side++) {
		if (f->s[ix_side].gen)
			nftdp_vm_gen_destroy(f->s[ix_side].gen);
		f->s[ix_side].gen = build_side(&f->s[ix_side], rs_index);
	}
	/* side 1 has the index; side 0 walks every rule, and no cache */
	ix = f->s[1].base[0]->ix;
	assert_non_null(ix);
	assert_non_null(ix_sub[1]->ix);
	free(f->s[0].base[0]->ix);
	f->s[0].base[0]->ix = NULL;
	free(ix_sub[0]->ix);
	ix_sub[0]->ix = NULL;
	f->s[1].ctx.flow = NULL;
	/* IPv4 TCP: 21, then straight to 29 (25 is l4proto != tcp) */
	tcp = ix->cls_of[IPPROTO_TCP];
	assert_non_null(ix->next[0][tcp]);
	assert_int_equal(ix->next[0][tcp][0], 0);
	assert_int_equal(ix->next[0][tcp][1], 8);
	assert_int_equal(ix->next[0][tcp][9], 9);
	/* IPv4 UDP: 21 and 22 skipped, 23 and 25 run */
	assert_int_equal(ix->next[0][ix->cls_of[IPPROTO_UDP]][0], 2);
	assert_int_equal(ix->next[0][ix->cls_of[IPPROTO_UDP]][3], 4);
	/* IPv6 TCP: from the first rule straight to the fourth */
	assert_int_equal(ix->next[1][tcp][0], 3);
	/* the leading tests a rule reached through the index skips: both of
	 * 21's (th dport goes to the same register), 23's l4proto; none where
	 * nothing loads after them, or the load goes to another register */
	assert_int_equal(f->s[1].base[0]->rules[0].pre, 2);
	assert_int_equal(f->s[1].base[0]->rules[1].pre, 0);
	assert_int_equal(f->s[1].base[0]->rules[2].pre, 1);
	assert_int_equal(f->s[1].base[0]->rules[4].pre, 0);
	assert_int_equal(ix_sub[1]->rules[1].pre, 1);
	assert_int_equal(ix_sub[1]->rules[3].pre, 0);

	for (int round = 0; round < 3; round++) {
		run_both(f, NFPROTO_IPV4, v4, n4, v);
		assert_int_equal(v[0], NF_DROP);
		assert_int_equal(v[2], NF_ACCEPT);
		assert_int_equal(v[4], NF_DROP);
		assert_int_equal(v[6], NF_DROP);
		run_both(f, NFPROTO_IPV6, v6, n6, v);
		assert_int_equal(v[2], NF_ACCEPT);
		assert_int_equal(v[5], NF_DROP);
	}
	assert_true(same_counters(f, NFPROTO_INET, 33) > 0);
	f->s[1].ctx.flow = f->fc;
}

/* ---------- meta keys; where the cache is not used ---------- */

/* ip forward, accept: 1 meta mark 7 counter drop; 2 meta iif 3 counter drop */
static void rs_meta(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 1, MARK_IS(7), CNT, DROP, NULL);
	add(b, c, 2, IIF_IS(3), CNT, DROP, NULL);
}

static void test_meta_keys(void **state)
{
	struct fix *f = *state;
	const struct flow fl[] = {T4(80, .iif = 1), T4(80, .iif = 1, .mark = 7), T4(80, .iif = 3)};
	struct nftdp_vm_flow_stats s0;
	unsigned int v[3];

	build_both(f, rs_meta);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[0]), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[1]), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[2]), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	run_both(f, NFPROTO_IPV4, fl, 3, v);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(v[1], NF_DROP);
	assert_int_equal(v[2], NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 3);
	same_counters(f, NFPROTO_IPV4, 2);
}

/* an xtables mark match (iptables -m mark --mark 7/0xff) */
static struct nftnl_expr *mt_mark(uint32_t mark)
{
	struct xt_mark_mtinfo1 i = {.mark = mark, .mask = 0xff};
	struct nftnl_expr *e = ex("match");
	void *info = calloc(1, XT_ALIGN(sizeof(i)));

	assert_non_null(info);
	memcpy(info, &i, sizeof(i));
	nftnl_expr_set_str(e, NFTNL_EXPR_MT_NAME, "mark");
	nftnl_expr_set_u32(e, NFTNL_EXPR_MT_REV, 1);
	/* libnftnl keeps (and frees) the info it is given */
	nftnl_expr_set(e, NFTNL_EXPR_MT_INFO, info, XT_ALIGN(sizeof(i)));
	return e;
}

/* ip forward: 1 match mark 7 counter drop; 2 meta iif 3 counter drop */
static void rs_match(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 1, mt_mark(7), CNT, DROP, NULL);
	add(b, c, 2, IIF_IS(3), CNT, DROP, NULL);
}

/* an xtables match is a key field by its outcome: the flows it tells
 * apart get entries of their own, and they hit */
static void test_match_outcome(void **state)
{
	struct fix *f = *state;
	const struct flow fl[] = {T4(80, .iif = 1), T4(80, .iif = 1, .mark = 7),
				  T4(80, .iif = 1, .mark = 0x107), T4(80, .iif = 3)};
	struct nftdp_vm_flow_stats s0;
	unsigned int v[4];

	build_both(f, rs_match);
	s0 = stats(f);
	for (unsigned int i = 0; i < 4; i++)
		run1(f, NFPROTO_IPV4, &fl[i]);
	/* mark 0x107 & 0xff is 7: the same outcome as mark 7, one entry */
	assert_int_equal(HITS_SINCE(f, s0), 1);
	run_both(f, NFPROTO_IPV4, fl, 4, v);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(v[1], NF_DROP);
	assert_int_equal(v[2], NF_DROP);
	assert_int_equal(v[3], NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 5);
	same_counters(f, NFPROTO_IPV4, 2);
}

/*
 * ip forward:
 *   a (prio 0, accept): 1 meta mark 7 counter drop
 *   z (prio 10, drop)
 */
static void rs_two(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *a;

	a = base[0] = gen_chain(b, NFPROTO_IPV4, "a", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	base[1] = gen_chain(b, NFPROTO_IPV4, "z", true, NF_INET_FORWARD, 10, NF_DROP, 1);
	add(b, a, 1, MARK_IS(7), CNT, DROP, NULL);
}

/* a device-bound hook: netdev ingress, a chain on device 2 */
static void rs_netdev(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	static const uint32_t dev2[] = {2};
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_NETDEV,
					.table = "t",
					.name = "in",
					.base = true,
					.hook = NF_NETDEV_INGRESS,
					.policy = NF_ACCEPT,
					.chain_id = 0,
					.ifindex = dev2,
					.n_ifindex = 1};
	struct nftdp_vm_chain *c = NULL;

	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, 0, &c), 0);
	base[0] = c;
	add(b, c, 1, CNT, DROP, NULL);
}

/* window [lo, hi] of the hook over one packet of fl on the cached side */
static unsigned int run_window(struct fix *f, const struct flow *fl, int32_t lo, int32_t hi)
{
	struct tpkt t;
	struct nftdp_vm_pkt *p = build(&t, fl);
	unsigned int v = 0xdead;

	nftdp_vm_gen_run_hook_burst_prio(f->s[1].gen, NFPROTO_IPV4, NF_INET_FORWARD, lo, hi, &p, 1,
					 &v, &f->s[1].ctx);
	return v;
}

/*
 * A priority window that holds every chain of the hook (prerouting's
 * after conntrack's step) runs the whole hook: the cache serves it, and
 * what it filled serves the whole hook; a window one chain short does not
 * touch the cache.
 */
static void test_window_whole(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_flow_stats s0, s1;
	const struct flow m0 = T4(80), m7 = T4(80, .mark = 7);

	build_both(f, rs_two); /* chains at 0 and 10 */
	s0 = stats(f);
	assert_int_equal(run_window(f, &m0, -200, INT32_MAX), NF_DROP);
	assert_int_equal(run_window(f, &m7, -200, INT32_MAX), NF_DROP);
	s1 = stats(f);
	assert_int_equal(s1.misses - s0.misses, 2);
	assert_int_equal(s1.inserts - s0.inserts, 2);
	/* the bounds are the chains' priorities */
	assert_int_equal(run_window(f, &m0, 0, 10), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &m7), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 2);
	/* a window without the chain at 10, or without the one at 0 */
	s0 = stats(f);
	assert_int_equal(run_window(f, &m0, INT32_MIN, 9), NF_ACCEPT);
	assert_int_equal(run_window(f, &m0, 1, INT32_MAX), NF_DROP);
	s1 = stats(f);
	assert_int_equal(s1.hits, s0.hits);
	assert_int_equal(s1.misses, s0.misses);
	assert_int_equal(s1.inserts, s0.inserts);
}

/*
 * One packet at a time, a priority window, a device-bound hook: the
 * chains run and the cache is neither asked nor filled, so a window never
 * gets the whole hook's verdict or the reverse.
 */
static void test_not_used(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_flow_stats s0, s1;
	struct tpkt t;
	const struct flow m0 = T4(80), m7 = T4(80, .mark = 7);

	build_both(f, rs_two);
	s0 = stats(f);
	/* window first: a would accept, the whole hook drops in z */
	assert_int_equal(run_window(f, &m0, INT32_MIN, 5), NF_ACCEPT);
	assert_int_equal(run_window(f, &m0, 5, INT32_MAX), NF_DROP);
	assert_int_equal(run_window(f, &m7, INT32_MIN, 5), NF_DROP);
	assert_int_equal(nftdp_vm_gen_run_hook(f->s[1].gen, NFPROTO_IPV4, NF_INET_FORWARD,
					       build(&t, &m0), &f->s[1].ctx),
			 NF_DROP);
	s1 = stats(f);
	assert_int_equal(s1.hits, s0.hits);
	assert_int_equal(s1.misses, s0.misses);
	assert_int_equal(s1.inserts, s0.inserts);
	/* the whole hook, twice: cached */
	assert_int_equal(run1(f, NFPROTO_IPV4, &m0), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &m0), NF_DROP);
	assert_int_equal(HITS_SINCE(f, s0), 1);
	/* then the window again: not the hook's drop */
	s0 = stats(f);
	assert_int_equal(run_window(f, &m0, INT32_MIN, 5), NF_ACCEPT);
	assert_int_equal(nftdp_vm_gen_run_hook(f->s[1].gen, NFPROTO_IPV4, NF_INET_FORWARD,
					       build(&t, &m0), &f->s[1].ctx),
			 NF_DROP);
	s1 = stats(f);
	assert_int_equal(s1.hits, s0.hits);
	assert_int_equal(s1.misses, s0.misses);

	/* netdev ingress, a chain bound to device 2 */
	build_both(f, rs_netdev);
	s0 = stats(f);
	for (int k = 0; k < 3; k++) {
		static struct tpkt tt[2][4];
		struct nftdp_vm_pkt *pk[2][4];
		unsigned int vv[2][4];

		for (int s = 0; s < 2; s++) {
			for (int i = 0; i < 4; i++) {
				const struct flow fl = T4(80, .iif = (uint32_t)(i % 2 + 1));

				pk[s][i] = build(&tt[s][i], &fl);
				pk[s][i]->nfproto = NFPROTO_NETDEV;
				pk[s][i]->hook = NF_NETDEV_INGRESS;
			}
			nftdp_vm_gen_run_hook_burst(f->s[s].gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS,
						    pk[s], 4, vv[s], &f->s[s].ctx);
		}
		for (int i = 0; i < 4; i++) {
			assert_int_equal(vv[1][i], vv[0][i]);
			assert_int_equal(vv[1][i], i % 2 ? NF_DROP : NF_ACCEPT);
		}
	}
	assert_int_equal(HITS_SINCE(f, s0), 0);
	same_counters(f, NFPROTO_NETDEV, 1);
	assert_int_equal(rule_packets(f, NFPROTO_NETDEV, 1, 0), 6);
}

/* more counters on a path than an entry holds: counts stay exact */
static void rs_many_counters(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	for (uint64_t h = 1; h <= 6; h++)
		add(b, c, h, CNT, NULL);
	add(b, c, 7, DPORT_IS(22), CNT, DROP, NULL);
}

static void test_many_counters(void **state)
{
	struct fix *f = *state;
	struct flow fl[] = {T4(80), T4(22), T4(80), T4(22)};
	unsigned int v[4];

	build_both(f, rs_many_counters);
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 4; i++)
			fl[i].plen = (uint8_t)(k * 4 + i);
		run_both(f, NFPROTO_IPV4, fl, 4, v);
		assert_int_equal(v[0], NF_ACCEPT);
		assert_int_equal(v[1], NF_DROP);
	}
	same_counters(f, NFPROTO_IPV4, 7);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 6, 0), 12);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 7, 2), 6);
}

/* a burst longer than NFTDP_VM_BURST_MAX goes through the cache in pieces */
static void test_long_burst(void **state)
{
	struct fix *f = *state;
	static struct flow fl[RUN_MAX];
	unsigned int v[RUN_MAX];
	struct nftdp_vm_flow_stats s0;

	build_both(f, rs_mixed);
	for (int i = 0; i < RUN_MAX; i++)
		fl[i] = i % 3 ? (struct flow)U4((uint16_t)(5000 + i % 5)) : (struct flow)T4(22);
	for (int k = 0; k < 2; k++) {
		s0 = stats(f);
		run_both(f, NFPROTO_IPV4, fl, RUN_MAX, v);
		for (int i = 0; i < RUN_MAX; i++)
			assert_int_equal(v[i], i % 3 ? NF_ACCEPT : NF_DROP);
		assert_int_equal(stats(f).hits + stats(f).misses - s0.hits - s0.misses, RUN_MAX);
		if (k)
			assert_int_equal(HITS_SINCE(f, s0), RUN_MAX);
	}
	same_counters(f, NFPROTO_INET, 6);
	assert_int_equal(rule_packets(f, NFPROTO_INET, 1, 0), 2 * RUN_MAX);
}

/*
 * The flood guard (flowcache.c): windows of probes that almost never hit
 * (every packet a new flow) leave most packets unkeyed, judged as without
 * a cache; flows that repeat bring every packet's key back.
 */
static void test_flood_guard(void **state)
{
	struct fix *f = *state;
	static struct flow fl[NFTDP_VM_BURST_MAX];
	struct nftdp_vm_flow_stats s0;
	unsigned int sent = 0;

	build_both(f, rs_mixed);
	/* 10240 keys of one packet each: 4096 probes fill the first window */
	for (unsigned int b = 0; b < 160; b++) {
		for (unsigned int i = 0; i < NFTDP_VM_BURST_MAX; i++, sent++)
			fl[i] = (struct flow)U4((uint16_t)(1000 + sent)); /* keyed: dport */
		run_both(f, NFPROTO_IPV4, fl, NFTDP_VM_BURST_MAX, NULL);
	}
	assert_true(nftdp_vm_flowcache_sparse(f->fc));
	/* 4096 probes to enter, then 1 packet in 8 keyed */
	assert_true(stats(f).unkeyed >= 5000);
	assert_int_equal(stats(f).hits, 0);
	/* 8 flows again and again: the sample hits, keying comes back */
	for (unsigned int b = 0; b < 200; b++) {
		for (unsigned int i = 0; i < NFTDP_VM_BURST_MAX; i++)
			fl[i] = (struct flow)U4(53, .sport = (uint16_t)(7 + i % 8));
		run_both(f, NFPROTO_IPV4, fl, NFTDP_VM_BURST_MAX, NULL);
	}
	assert_false(nftdp_vm_flowcache_sparse(f->fc));
	s0 = stats(f);
	run_both(f, NFPROTO_IPV4, fl, NFTDP_VM_BURST_MAX, NULL);
	assert_int_equal(HITS_SINCE(f, s0), NFTDP_VM_BURST_MAX);
	assert_int_equal(stats(f).unkeyed, s0.unkeyed);
	same_counters(f, NFPROTO_INET, 6);
}

/*
 * ip prerouting (accept): 71 tcp dport 80 counter
 * ip forward    (accept): 72 tcp dport 80 counter drop
 * ip postrouting (drop):  73 counter
 */
static void rs_hooks(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *pre, *fwd, *post;

	pre = base[0] =
	    gen_chain(b, NFPROTO_IPV4, "pre", true, NF_INET_PRE_ROUTING, 0, NF_ACCEPT, 0);
	fwd = base[1] = gen_chain(b, NFPROTO_IPV4, "fwd", true, NF_INET_FORWARD, 0, NF_ACCEPT, 1);
	post = base[2] =
	    gen_chain(b, NFPROTO_IPV4, "post", true, NF_INET_POST_ROUTING, 0, NF_DROP, 2);
	add(b, pre, 71, L4_IS(IPPROTO_TCP), DPORT_IS(80), CNT, NULL);
	add(b, fwd, 72, L4_IS(IPPROTO_TCP), DPORT_IS(80), CNT, DROP, NULL);
	add(b, post, 73, CNT, NULL);
}

/* one worker's cache serves every hook: the same packet, three hooks,
 * three entries, three verdicts */
static void test_hooks_apart(void **state)
{
	struct fix *f = *state;
	static const uint8_t hooks[] = {NF_INET_PRE_ROUTING, NF_INET_FORWARD, NF_INET_POST_ROUTING};
	static const unsigned int want[] = {NF_ACCEPT, NF_DROP, NF_DROP};
	const struct flow fl[] = {T4(80), T4(443)};
	struct nftdp_vm_flow_stats s0;
	unsigned int v[2];

	build_both(f, rs_hooks);
	for (int k = 0; k < 2; k++) {
		s0 = stats(f);
		for (int h = 0; h < 3; h++) {
			run_both_hook(f, NFPROTO_IPV4, hooks[h], fl, 2, v);
			assert_int_equal(v[0], want[h]);
			assert_int_equal(v[1], h == 2 ? NF_DROP : NF_ACCEPT);
		}
		/* postrouting reads nothing: the two flows share its entry */
		assert_int_equal(HITS_SINCE(f, s0), k ? 6 : 1);
	}
	same_counters(f, NFPROTO_IPV4, 73);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 73, 0), 4);
}

/*
 * Each hook has its own flood guard: prerouting, keyed on tcp dport, sees
 * a new port every packet and goes sparse; postrouting, which reads
 * nothing, keeps keying every packet and hitting (one guard for both saw
 * half its probes hit and never went sparse).
 */
static void test_flood_guard_per_hook(void **state)
{
	struct fix *f = *state;
	static struct flow fl[NFTDP_VM_BURST_MAX];
	struct nftdp_vm_flow_stats s0, s1;
	unsigned int sent = 0;

	build_both(f, rs_hooks);
	for (unsigned int b = 0; b < 200; b++) {
		for (unsigned int i = 0; i < NFTDP_VM_BURST_MAX; i++, sent++)
			fl[i] = (struct flow)T4((uint16_t)(1000 + sent));
		run_both_hook(f, NFPROTO_IPV4, NF_INET_PRE_ROUTING, fl, NFTDP_VM_BURST_MAX, NULL);
		run_both_hook(f, NFPROTO_IPV4, NF_INET_POST_ROUTING, fl, NFTDP_VM_BURST_MAX, NULL);
	}
	assert_true(nftdp_vm_flowcache_sparse(f->fc));
	/* prerouting keys 1 packet in 8 now */
	s0 = stats(f);
	run_both_hook(f, NFPROTO_IPV4, NF_INET_PRE_ROUTING, fl, NFTDP_VM_BURST_MAX, NULL);
	s1 = stats(f);
	assert_true(s1.unkeyed - s0.unkeyed >= NFTDP_VM_BURST_MAX / 2);
	/* postrouting: every packet keyed, every one a hit */
	run_both_hook(f, NFPROTO_IPV4, NF_INET_POST_ROUTING, fl, NFTDP_VM_BURST_MAX, NULL);
	assert_int_equal(stats(f).unkeyed, s1.unkeyed);
	assert_int_equal(HITS_SINCE(f, s1), NFTDP_VM_BURST_MAX);
	same_counters(f, NFPROTO_IPV4, 73);
}

/* ip forward, accept: 101 ether saddr 02:00:00:00:00:07 counter drop */
static void rs_ether(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 7};
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 101, payload(NFT_PAYLOAD_LL_HEADER, 6, 6, NFT_REG_1),
	    cmp(NFT_CMP_EQ, NFT_REG_1, mac, 6), CNT, DROP, NULL);
}

/* link-layer loads are key fields too, and a packet without a link
 * header (the load breaks) has an entry of its own */
static void test_link_header(void **state)
{
	struct fix *f = *state;
	const struct flow fl[] = {T4(80, .eth = 7), T4(80, .eth = 8), T4(80)};
	struct nftdp_vm_flow_stats s0;
	unsigned int v[3];

	build_both(f, rs_ether);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[0]), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[1]), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[2]), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	run_both(f, NFPROTO_IPV4, fl, 3, v);
	assert_int_equal(v[0], NF_DROP);
	assert_int_equal(v[1], NF_ACCEPT);
	assert_int_equal(v[2], NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 3);
	same_counters(f, NFPROTO_IPV4, 101);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 101, 2), 2);
}

/* ---------- named objects ---------- */

/* side s's named counter "c1" and quota "q1" (100 bytes) */
static const struct nftdp_vm_obj *res_obj(void *opaque, const char *table, const char *name,
					  uint32_t type)
{
	struct nftdp_vm_obj *const *objs = opaque;

	(void)table;
	if (!strcmp(name, "c1") && type == NFT_OBJECT_COUNTER)
		return objs[0];
	if (!strcmp(name, "q1") && type == NFT_OBJECT_QUOTA)
		return objs[1];
	return NULL;
}

static struct nftdp_vm_obj *mkobj(struct nftdp_vm_state *st, const char *name, uint32_t type)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nftdp_vm_error err;
	struct nftdp_vm_obj *obj = NULL;

	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, type);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_IPV4);
	if (type == NFT_OBJECT_QUOTA)
		nftnl_obj_set_u64(o, NFTNL_OBJ_QUOTA_BYTES, 100);
	assert_int_equal(nftdp_vm_obj_create(o, st, &err, &obj), 0);
	nftnl_obj_free(o);
	return obj;
}

static struct nftnl_expr *objref(uint32_t type, const char *name)
{
	struct nftnl_expr *e = ex("objref");

	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, type);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, name);
	return e;
}

/*
 * ip forward, drop:
 *   91 counter name "c1"
 *   92 meta l4proto udp quota name "q1" counter accept
 *   93 tcp dport 80 counter accept
 */
static void rs_objs(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	add(b, c, 91, objref(NFT_OBJECT_COUNTER, "c1"), NULL);
	add(b, c, 92, L4_IS(IPPROTO_UDP), objref(NFT_OBJECT_QUOTA, "q1"), CNT, ACCEPT, NULL);
	add(b, c, 93, L4_IS(IPPROTO_TCP), DPORT_IS(80), CNT, ACCEPT, NULL);
}

/* a named counter is charged on a hit as a rule's is; a named quota keeps
 * its path out of the cache */
static void test_named_objects(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_obj *objs[2][2];
	struct nftdp_vm_resolver res[2];
	struct flow fl[8];
	struct nftdp_vm_flow_stats s0;
	unsigned int v[8], udp_acc = 0;

	for (int i = 0; i < 2; i++) {
		objs[i][0] = mkobj(f->s[i].st, "c1", NFT_OBJECT_COUNTER);
		objs[i][1] = mkobj(f->s[i].st, "q1", NFT_OBJECT_QUOTA);
		res[i] = (struct nftdp_vm_resolver){.opaque = objs[i], .obj = res_obj};
		f->s[i].res = &res[i];
	}
	build_both(f, rs_objs);
	for (int i = 0; i < 8; i++)
		fl[i] = i % 2 ? (struct flow)U4(53, .plen = (uint8_t)i) : (struct flow)T4(80);
	for (int k = 0; k < 3; k++) {
		s0 = stats(f);
		run_both(f, NFPROTO_IPV4, fl, 8, v);
		for (int i = 0; i < 8; i++) {
			if (i % 2 == 0)
				assert_int_equal(v[i], NF_ACCEPT);
			else
				udp_acc += v[i] == NF_ACCEPT;
		}
		assert_int_equal(stats(f).uncacheable - s0.uncacheable, 4);
	}
	assert_int_equal(HITS_SINCE(f, s0), 4); /* the tcp ones */
	assert_true(udp_acc > 0 && udp_acc < 12);
	same_counters(f, NFPROTO_IPV4, 93);
	for (uint32_t type = NFT_OBJECT_COUNTER; type <= NFT_OBJECT_QUOTA; type++) {
		struct nftdp_vm_stateful_val a, b;
		const char *name = type == NFT_OBJECT_COUNTER ? "c1" : "q1";

		assert_int_equal(
		    nftdp_vm_state_read_obj(f->s[0].st, NFPROTO_IPV4, "t", name, type, false, &a),
		    0);
		assert_int_equal(
		    nftdp_vm_state_read_obj(f->s[1].st, NFPROTO_IPV4, "t", name, type, false, &b),
		    0);
		assert_int_equal(b.packets, a.packets);
		assert_int_equal(b.bytes, a.bytes);
		assert_int_equal(b.consumed, a.consumed);
		if (type == NFT_OBJECT_COUNTER)
			assert_int_equal(b.packets, 24);
	}
	for (int i = 0; i < 2; i++) {
		nftdp_vm_gen_destroy(f->s[i].gen);
		f->s[i].gen = NULL;
		nftdp_vm_obj_destroy(objs[i][0]);
		nftdp_vm_obj_destroy(objs[i][1]);
		f->s[i].res = NULL;
	}
}

/* ---------- ct keys ---------- */

/*
 * ip forward, drop:
 *   51 ct state established,related counter accept
 *   52 ct mark 5 counter accept
 */
static void rs_ct(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	add(b, c, 51, ct_get(NFT_CT_STATE, -1, NFT_REG_1),
	    bitwise_and(NFT_REG_1, 4, CT_EST | CT_REL), cmp32(NFT_CMP_NEQ, NFT_REG_1, 0), CNT,
	    ACCEPT, NULL);
	add(b, c, 52, ct_get(NFT_CT_MARK, -1, NFT_REG_1), cmp32(NFT_CMP_EQ, NFT_REG_1, 5), CNT,
	    ACCEPT, NULL);
}

/* ip forward, drop: 53 ct packets != 0 counter accept (moves with every packet) */
static void rs_ct_packets(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	static const uint64_t zero;
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	add(b, c, 53, ct_get(NFT_CT_PKTS, -1, NFT_REG_1), cmp(NFT_CMP_NEQ, NFT_REG_1, &zero, 8),
	    CNT, ACCEPT, NULL);
}

/* what conntrack decided is part of the key: the same bytes, other
 * connections' state or mark, other verdicts */
static void test_ct_keys(void **state)
{
	struct fix *f = *state;
	struct fake_ct cn = {.state = CT_NEW}, ce = {.state = CT_EST},
		       cm = {.state = CT_NEW, .mark = 5};
	struct flow fl[] = {T4(80, .ct = &cn), T4(80, .ct = &ce), T4(80, .ct = &cm)};
	struct nftdp_vm_flow_stats s0;
	unsigned int v[3];

	build_both(f, rs_ct);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[1]), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[0]), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[2]), NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	run_both(f, NFPROTO_IPV4, fl, 3, v);
	assert_int_equal(v[0], NF_DROP);
	assert_int_equal(v[1], NF_ACCEPT);
	assert_int_equal(v[2], NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 3);
	/* the connection's state is read per packet, not remembered */
	ce.state = CT_NEW;
	cm.mark = 6;
	run_both(f, NFPROTO_IPV4, fl, 3, v);
	assert_int_equal(v[1], NF_DROP);
	assert_int_equal(v[2], NF_DROP);
	same_counters(f, NFPROTO_IPV4, 52);

	/* ct packets: never cached */
	build_both(f, rs_ct_packets);
	ce.packets = 1;
	s0 = stats(f);
	for (int k = 0; k < 3; k++) {
		run_both(f, NFPROTO_IPV4, &fl[1], 1, v);
		assert_int_equal(v[0], NF_ACCEPT);
	}
	assert_int_equal(HITS_SINCE(f, s0), 0);
	assert_int_equal(stats(f).uncacheable - s0.uncacheable, 3);
	same_counters(f, NFPROTO_IPV4, 53);
}

/* ---------- sets: what a lookup may assume ---------- */

static struct nftdp_set *set_s, *set_k, *set_t, *set_d, *set_v, *set_e;

/* s: a named set; k: constant; t: with timeouts; d: filled by dynset;
 * e: its elements carry expressions (a counter, a quota) */
static int res_set(void *opaque, const char *table, const char *name, uint32_t id,
		   struct nftdp_vm_set_info *out)
{
	const struct {
		const char *name;
		struct nftdp_set *set;
		uint32_t flags;
	} sets[] = {{"e", set_e, 0},
		    {"s", set_s, 0},
		    {"k", set_k, NFT_SET_CONSTANT},
		    {"t", set_t, NFT_SET_TIMEOUT},
		    {"d", set_d, NFT_SET_EVAL},
		    {"v", set_v, NFT_SET_MAP | NFT_SET_CONSTANT}};

	(void)opaque;
	(void)table;
	(void)id;
	for (unsigned int i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (strcmp(name, sets[i].name))
			continue;
		memset(out, 0, sizeof(*out));
		out->set = sets[i].set;
		out->ops = NULL; /* sets/, called directly as in the daemon */
		out->flags = sets[i].flags;
		out->klen = 4;
		if (sets[i].set == set_e)
			out->elem_expr_at = 1;
		if (sets[i].flags & NFT_SET_MAP) {
			/* a verdict map; its chains unnamed, as control/ resolves it */
			out->dtype = NFT_DATA_VERDICT;
			out->dlen = 16;
		}
		return 0;
	}
	return -ENOENT;
}

static const struct nftdp_vm_resolver resolver = {.set = res_set};

static struct nftnl_expr *lookup(const char *set)
{
	struct nftnl_expr *e = ex("lookup");

	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	return e;
}

static struct nftnl_expr *lookup_inv(const char *set)
{
	struct nftnl_expr *e = lookup(set);

	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
	return e;
}

static struct nftnl_expr *dynset_add(const char *set)
{
	struct nftnl_expr *e = ex("dynset");

	nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
	return e;
}

#define SADDR_LOAD payload(NH, 12, 4, NFT_REG_1)

/* ip forward, accept: meta l4proto tcp ip saddr @X counter drop */
static void rs_set_s(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 41, L4_IS(IPPROTO_TCP), SADDR_LOAD, lookup("s"), CNT, DROP, NULL);
}

/* meta l4proto tcp ip saddr != @s counter drop */
static void rs_set_s_inv(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 46, L4_IS(IPPROTO_TCP), SADDR_LOAD, lookup_inv("s"), CNT, DROP, NULL);
}

static void rs_set_k(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 42, L4_IS(IPPROTO_TCP), SADDR_LOAD, lookup("k"), CNT, DROP, NULL);
}

static void rs_set_t(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 43, L4_IS(IPPROTO_TCP), SADDR_LOAD, lookup("t"), CNT, DROP, NULL);
}

static void rs_set_e(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	add(b, c, 45, L4_IS(IPPROTO_TCP), SADDR_LOAD, lookup("e"), CNT, DROP, NULL);
}

/* rs_set_s and, anywhere in the generation, 44 meta mark 99 add @d { ip saddr } */
static void rs_set_s_dynset(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	rs_set_s(b, base);
	c = gen_chain(b, NFPROTO_IPV4, "other", true, NF_INET_PRE_ROUTING, 0, NF_ACCEPT, 1);
	add(b, c, 44, MARK_IS(99), SADDR_LOAD, dynset_add("d"), NULL);
}

static void set_elem(struct nftdp_set *set, uint8_t last, bool insert)
{
	const uint8_t key[4] = {10, 0, 0, last};

	if (insert)
		assert_int_equal(nftdp_set_insert(set, key, NULL, NULL, 0, 0, true), 0);
	else
		assert_int_equal(nftdp_set_remove(set, key, NULL), 0);
}

/* make the pending changes of every set visible; the set generation
 * they are seen from */
static uint64_t sets_commit(void)
{
	uint64_t gen = nftdp_set_gen_next();

	nftdp_set_commit_stage(set_s);
	nftdp_set_commit_stage(set_k);
	nftdp_set_commit_stage(set_t);
	nftdp_set_commit_stage(set_d);
	if (set_e)
		nftdp_set_commit_stage(set_e);
	nftdp_set_gen_publish();
	return gen;
}

/* flows 10.0.0.1 and .2 over tcp, and a udp one (never reaches a lookup),
 * in @rounds bursts; returns the cache hits of the last burst */
static uint64_t set_rounds(struct fix *f, int rounds, unsigned int v1, unsigned int v2)
{
	const struct flow fl[] = {T4(80, .src = 1), T4(80, .src = 2), U4(53, .src = 1)};
	struct nftdp_vm_flow_stats s0 = stats(f);
	unsigned int v[3];

	for (int k = 0; k < rounds; k++) {
		s0 = stats(f);
		run_both(f, NFPROTO_IPV4, fl, 3, v);
		assert_int_equal(v[0], v1);
		assert_int_equal(v[1], v2);
		assert_int_equal(v[2], NF_ACCEPT);
	}
	return HITS_SINCE(f, s0);
}

static void for_both(struct fix *f, const struct nftdp_vm_resolver *res, uint64_t cursor)
{
	for (int i = 0; i < 2; i++) {
		f->s[i].res = res;
		f->s[i].cursor = cursor;
	}
}

/*
 * A lookup is fixed by its key within a set generation, so with the
 * generation's set cursor (as control/build.c always sets it) the path is
 * cached and a commit's new elements are seen; without a cursor (the sets'
 * current state at lookup time), or in a set with timeouts, or in a
 * generation where the packet path fills sets, it is not. A constant set
 * never changes.
 */
static void test_set_lookups(void **state)
{
	struct fix *f = *state;
	struct nftdp_set_desc hd = {.key_size = 4}, td = {.flags = NFT_SET_TIMEOUT, .key_size = 4};
	struct nftdp_set_desc kd = {.flags = NFT_SET_CONSTANT, .key_size = 4};
	struct nftdp_set_desc dd = {.flags = NFT_SET_EVAL, .key_size = 4};
	struct nftdp_vm_flow_stats s0;

	assert_int_equal(nftdp_set_create(&hd, &set_s), 0);
	assert_int_equal(nftdp_set_create(&kd, &set_k), 0);
	assert_int_equal(nftdp_set_create(&td, &set_t), 0);
	assert_int_equal(nftdp_set_create(&dd, &set_d), 0);
	set_elem(set_s, 1, true);
	set_elem(set_k, 1, true);
	set_elem(set_t, 1, true);

	/* s, with a cursor: cached; a commit that swaps .1 for .2 is seen */
	for_both(f, &resolver, sets_commit());
	build_both(f, rs_set_s);
	assert_int_equal(set_rounds(f, 2, NF_DROP, NF_ACCEPT), 3);
	/* a plain set's lookup is inlined by vm.c, inverted too */
	assert_int_equal(f->s[1].base[0]->ops[2].fast, NFTDP_VM_FAST_LOOKUP);
	build_both(f, rs_set_s_inv);
	assert_int_equal(set_rounds(f, 2, NF_ACCEPT, NF_DROP), 3);
	assert_int_equal(f->s[1].base[0]->ops[2].fast, NFTDP_VM_FAST_LOOKUP);
	set_elem(set_s, 1, false);
	set_elem(set_s, 2, true);
	for_both(f, &resolver, sets_commit());
	build_both(f, rs_set_s);
	assert_int_equal(set_rounds(f, 1, NF_ACCEPT, NF_DROP), 0);
	assert_int_equal(set_rounds(f, 1, NF_ACCEPT, NF_DROP), 3);

	/* s without a cursor: its current state, never cached; a commit
	 * without a new generation is seen at once */
	for_both(f, &resolver, 0);
	build_both(f, rs_set_s);
	set_rounds(f, 1, NF_ACCEPT, NF_DROP);
	s0 = stats(f);
	assert_int_equal(set_rounds(f, 2, NF_ACCEPT, NF_DROP), 1); /* udp only */
	set_elem(set_s, 1, true);
	sets_commit();
	assert_int_equal(set_rounds(f, 1, NF_DROP, NF_DROP), 1);
	assert_int_equal(stats(f).uncacheable - s0.uncacheable, 3 * 2);

	/* k, constant, without a cursor: cached */
	build_both(f, rs_set_k);
	assert_int_equal(set_rounds(f, 2, NF_DROP, NF_ACCEPT), 3);

	/* t, with timeouts, with a cursor: never cached */
	for_both(f, &resolver, sets_commit());
	build_both(f, rs_set_t);
	set_rounds(f, 1, NF_DROP, NF_ACCEPT);
	s0 = stats(f);
	assert_int_equal(set_rounds(f, 2, NF_DROP, NF_ACCEPT), 1);
	assert_int_equal(stats(f).uncacheable - s0.uncacheable, 2 * 2);

	/* s, with a cursor, in a generation with a dynset: never cached */
	for_both(f, &resolver, sets_commit());
	build_both(f, rs_set_s_dynset);
	set_rounds(f, 1, NF_DROP, NF_DROP);
	s0 = stats(f);
	assert_int_equal(set_rounds(f, 2, NF_DROP, NF_DROP), 1);
	assert_int_equal(stats(f).uncacheable - s0.uncacheable, 2 * 2);
	same_counters(f, NFPROTO_IPV4, 44);

	/* e, with a cursor, elements with expressions: never cached, and the
	 * element's counter counts every packet of both runs */
	{
		struct nftdp_set_desc ed = {.key_size = 4, .data_size = NFTDP_VM_ELEM_EXPR_SIZE};
		struct nftdp_vm_elem_expr x[2] = {
		    {.type = NFTDP_VM_ELEM_EXPR_COUNTER},
		    {.type = NFTDP_VM_ELEM_EXPR_QUOTA, .quota = 1ull << 40}};
		_Alignas(8) uint8_t area[NFTDP_VM_ELEM_EXPR_SIZE];
		const uint8_t key[4] = {10, 0, 0, 1};
		const void *data = NULL;

		assert_int_equal(nftdp_set_create(&ed, &set_e), 0);
		assert_int_equal(nftdp_vm_elem_expr_init(area, x, 2), 0);
		assert_int_equal(nftdp_set_insert(set_e, key, NULL, area, 0, 0, true), 0);
		for_both(f, &resolver, sets_commit());
		build_both(f, rs_set_e);
		/* element expressions: lookup_eval runs them */
		assert_int_equal(f->s[1].base[0]->ops[2].fast, NFTDP_VM_FAST_NONE);
		set_rounds(f, 1, NF_DROP, NF_ACCEPT);
		s0 = stats(f);
		assert_int_equal(set_rounds(f, 2, NF_DROP, NF_ACCEPT), 1);
		assert_int_equal(stats(f).uncacheable - s0.uncacheable, 2 * 2);
		assert_true(nftdp_set_lookup(set_e, key, &data, 0));
		assert_int_equal(nftdp_vm_elem_expr_read(data, x), 2);
		assert_int_equal(x[0].packets, 3 * 2); /* 3 rounds, cached and uncached runs */
	}

	for (int i = 0; i < 2; i++) {
		nftdp_vm_gen_destroy(f->s[i].gen);
		f->s[i].gen = NULL;
	}
	nftdp_set_destroy(set_s);
	nftdp_set_destroy(set_k);
	nftdp_set_destroy(set_t);
	nftdp_set_destroy(set_d);
	nftdp_set_destroy(set_e);
	set_e = NULL;
}

/*
 * ip forward, accept:
 *   81 ip daddr vmap { 10.0.0.2 : jump sub }
 *   sub: 82 tcp dport 22 counter drop
 */
static void rs_vmap(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c, *sub;
	struct nftnl_expr *l = lookup("v");

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_ACCEPT, 0);
	sub = gen_chain(b, NFPROTO_IPV4, "sub", false, 0, 0, 0, 1);
	add(b, sub, 82, DPORT_IS(22), CNT, DROP, NULL);
	nftnl_expr_set_u32(l, NFTNL_EXPR_LOOKUP_DREG, NFT_REG_VERDICT);
	add(b, c, 81, payload(NH, 16, 4, NFT_REG_1), l, NULL);
}

/* a chain a verdict map jumps to is read like one a rule jumps to: two
 * flows that differ only in what it reads get entries of their own */
static void test_vmap_jump(void **state)
{
	struct fix *f = *state;
	struct nftdp_set_desc vd = {
	    .flags = NFT_SET_MAP, .key_size = 4, .data_size = sizeof(struct nftdp_set_verdict)};
	const struct nftdp_set_verdict jump = {.code = NFT_JUMP, .chain = 1};
	const uint8_t key[4] = {10, 0, 0, 2};
	const struct flow fl[] = {T4(80), T4(22), T4(22, .dst = 3)};
	struct nftdp_vm_flow_stats s0;
	unsigned int v[3];

	assert_int_equal(nftdp_set_create(&vd, &set_v), 0);
	assert_int_equal(nftdp_set_insert(set_v, key, NULL, &jump, 0, 0, true), 0);
	nftdp_set_commit(set_v);
	for_both(f, &resolver, nftdp_set_gen_next() - 1);
	build_both(f, rs_vmap);
	s0 = stats(f);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[0]), NF_ACCEPT);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[1]), NF_DROP);
	assert_int_equal(run1(f, NFPROTO_IPV4, &fl[2]), NF_ACCEPT); /* no jump */
	assert_int_equal(HITS_SINCE(f, s0), 0);
	run_both(f, NFPROTO_IPV4, fl, 3, v);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_int_equal(v[1], NF_DROP);
	assert_int_equal(v[2], NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 3);
	same_counters(f, NFPROTO_IPV4, 82);
	assert_int_equal(rule_packets(f, NFPROTO_IPV4, 82, 2), 2);
	for (int i = 0; i < 2; i++) {
		nftdp_vm_gen_destroy(f->s[i].gen);
		f->s[i].gen = NULL;
	}
	nftdp_set_destroy(set_v);
}

/*
 * After a switch to a generation with another set cursor (every commit of
 * the daemon), the second burst of a flow hits: the first one's entry is
 * tagged with the new generation's cursor, not the one the worker's ctx
 * held from the previous generation.
 */
static void test_cursor_switch(void **state)
{
	struct fix *f = *state;
	const struct flow fl[] = {T4(80), U4(53)};
	struct nftdp_vm_flow_stats s0;

	for_both(f, NULL, 7);
	build_both(f, rs_accept1);
	expect_all(f, fl, 2, NF_ACCEPT);
	expect_all(f, fl, 2, NF_ACCEPT);
	for_both(f, NULL, 8);
	build_both(f, rs_accept1);
	s0 = stats(f);
	expect_all(f, fl, 2, NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 0);
	s0 = stats(f);
	expect_all(f, fl, 2, NF_ACCEPT);
	assert_int_equal(HITS_SINCE(f, s0), 2);
}

/* ---------- 7: sizes ---------- */

static void test_create_sizes(void **state)
{
	struct fix *f = *state;
	struct nftdp_vm_flowcache *fc = NULL;

	assert_int_equal(nftdp_vm_flowcache_create(0, &fc), -EINVAL);
	assert_int_equal(nftdp_vm_flowcache_create((1u << 24) + 1, &fc), -EINVAL);
	assert_int_equal(nftdp_vm_flowcache_create(UINT_MAX, &fc), -EINVAL);
	assert_int_equal(nftdp_vm_flowcache_create(1, &fc), 0);
	assert_non_null(fc);
	nftdp_vm_flowcache_destroy(fc);

	/* 3 (rounded up) and 1 (at least 2) in use: 24 flows with alternating
	 * verdicts evict each other, verdicts and counters stay right */
	static const unsigned int sizes[] = {3, 1};

	for (unsigned int z = 0; z < 2; z++) {
		struct flow fl[24];

		nftdp_vm_flowcache_destroy(f->fc);
		assert_int_equal(nftdp_vm_flowcache_create(sizes[z], &f->fc), 0);
		f->s[1].ctx.flow = f->fc;
		build_both(f, rs_mixed);
		for (int i = 0; i < 24; i++)
			fl[i] = i % 2 ? (struct flow)U4((uint16_t)(5000 + i), .src = (uint8_t)i)
				      : (struct flow)T4((uint16_t)(80 + i), .src = (uint8_t)i);
		for (int k = 0; k < 4; k++) {
			unsigned int v[24];

			run_both(f, NFPROTO_IPV4, fl, 24, v);
			/* udp: post's rule 5 accepts; tcp: post's policy drops */
			for (int i = 0; i < 24; i++)
				assert_int_equal(v[i], i % 2 ? NF_ACCEPT : NF_DROP);
			/* a flow alone twice: the second is a hit */
			struct nftdp_vm_flow_stats s0 = stats(f);

			run1(f, NFPROTO_IPV4, &fl[k]);
			run1(f, NFPROTO_IPV4, &fl[k]);
			assert_int_equal(HITS_SINCE(f, s0), 1);
		}
		same_counters(f, NFPROTO_INET, 6);
	}
}

/* ---------- probing a hook without running it ---------- */

/* nftdp_vm_gen_flow_probe answers from the cache alone, both families in
 * one call; nftdp_vm_flow_charge charges what a hit recorded */
static void test_probe_charge(void **state)
{
	struct fix *f = *state;
	const struct flow fl[] = {T4(22), U4(53), T6(80), U6(53), I6(128)};
	const unsigned int want[] = {NF_DROP, NF_ACCEPT, NF_ACCEPT, NF_ACCEPT, NF_ACCEPT};
	const unsigned int n = sizeof(fl) / sizeof(fl[0]);
	static struct tpkt t[2][8];
	struct nftdp_vm_pkt *pk[2][8];
	const struct nftdp_vm_flow_hit *hit[8];
	struct nftdp_vm_flow_stats s0;
	unsigned int v[8];

	build_both(f, rs_mixed);
	for (unsigned int i = 0; i < n; i++)
		for (int s = 0; s < 2; s++)
			pk[s][i] = build(&t[s][i], &fl[i]);
	/* nothing cached yet: every packet would have to run the chains */
	s0 = stats(f);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, pk[1], n, hit, &f->s[1].ctx);
	for (unsigned int i = 0; i < n; i++)
		assert_null(hit[i]);
	/* a hook with no chain accepts everything and charges nothing */
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_PRE_ROUTING, pk[1], n, hit, &f->s[1].ctx);
	for (unsigned int i = 0; i < n; i++) {
		assert_non_null(hit[i]);
		assert_int_equal(nftdp_vm_flow_hit_verdict(hit[i]), NF_ACCEPT);
		nftdp_vm_flow_charge(hit[i], pk[1][i], &f->s[1].ctx);
	}
	assert_int_equal(stats(f).hits, s0.hits);
	assert_int_equal(stats(f).misses, s0.misses);

	/* cache them (each family its own run), then probe both families at once */
	run_both(f, NFPROTO_IPV4, fl, 2, v);
	run_both(f, NFPROTO_IPV6, fl + 2, n - 2, v);
	s0 = stats(f);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, pk[1], n, hit, &f->s[1].ctx);
	for (unsigned int i = 0; i < n; i++) {
		assert_non_null(hit[i]);
		assert_int_equal(nftdp_vm_flow_hit_verdict(hit[i]), want[i]);
	}
	assert_int_equal(stats(f).hits, s0.hits); /* a probe charges nothing */
	same_counters(f, NFPROTO_INET, 6);
	/* charging a hit is running the chains, as far as anything shows */
	for (unsigned int i = 0; i < n; i++) {
		nftdp_vm_flow_charge(hit[i], pk[1][i], &f->s[1].ctx);
		pk[0][i]->hook = NF_INET_FORWARD;
		nftdp_vm_gen_run_hook_burst(f->s[0].gen, pk[0][i]->nfproto, NF_INET_FORWARD,
					    &pk[0][i], 1, &v[i], &f->s[0].ctx);
		assert_int_equal(v[i], want[i]);
	}
	assert_int_equal(stats(f).hits - s0.hits, n);
	assert_int_equal(stats(f).misses, s0.misses);
	assert_true(same_counters(f, NFPROTO_INET, 6) > 0);

	/* another flow: not cached */
	const struct flow other = T4(23);

	pk[1][0] = build(&t[1][0], &other);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, pk[1], 1, hit, &f->s[1].ctx);
	assert_null(hit[0]);
	/* verify mode: nothing is answered from the cache */
	pk[1][0] = build(&t[1][0], &fl[0]);
	nftdp_vm_flowcache_verify(f->fc, true);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, pk[1], 1, hit, &f->s[1].ctx);
	assert_null(hit[0]);
	nftdp_vm_flowcache_verify(f->fc, false);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, pk[1], 1, hit, &f->s[1].ctx);
	assert_non_null(hit[0]);
	/* without a cache neither */
	f->s[1].ctx.flow = NULL;
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, pk[1], 1, hit, &f->s[1].ctx);
	assert_null(hit[0]);
	f->s[1].ctx.flow = f->fc;
}

/* nftdp_vm_flow_charge_row into the row read once, the hits counted once:
 * the same counters as the chains, the same hit count as
 * nftdp_vm_flow_charge; a hook without chains charges and counts nothing */
static void test_probe_charge_row(void **state)
{
	struct fix *f = *state;
	const struct flow fl[] = {T4(22), U4(53), T6(80), U6(53), I6(128)};
	const unsigned int n = sizeof(fl) / sizeof(fl[0]);
	static struct tpkt t[2][8];
	struct nftdp_vm_pkt *pk[2][8];
	const struct nftdp_vm_flow_hit *hit[8];
	struct nftdp_vm_counter *row;
	struct nftdp_vm_flow_stats s0;
	unsigned int v[8], counted = 0;

	build_both(f, rs_mixed);
	for (unsigned int i = 0; i < n; i++)
		for (int s = 0; s < 2; s++)
			pk[s][i] = build(&t[s][i], &fl[i]);
	row = nftdp_vm_flow_row(&f->s[1].ctx);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_PRE_ROUTING, pk[1], n, hit, &f->s[1].ctx);
	for (unsigned int i = 0; i < n; i++)
		counted += nftdp_vm_flow_charge_row(hit[i], pk[1][i]->skb_len, row);
	assert_int_equal(counted, 0);
	run_both(f, NFPROTO_IPV4, fl, 2, v);
	run_both(f, NFPROTO_IPV6, fl + 2, n - 2, v);
	s0 = stats(f);
	for (unsigned int r = 0; r < 3; r++) {
		nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, pk[1], n, hit, &f->s[1].ctx);
		counted = 0;
		for (unsigned int i = 0; i < n; i++) {
			assert_non_null(hit[i]);
			counted += nftdp_vm_flow_charge_row(hit[i], pk[1][i]->skb_len, row);
			pk[0][i]->hook = NF_INET_FORWARD;
			nftdp_vm_gen_run_hook_burst(f->s[0].gen, pk[0][i]->nfproto, NF_INET_FORWARD,
						    &pk[0][i], 1, &v[i], &f->s[0].ctx);
		}
		assert_int_equal(counted, n);
		nftdp_vm_flow_count_hits(&f->s[1].ctx, counted);
	}
	assert_int_equal(stats(f).hits - s0.hits, 3 * n);
	assert_int_equal(stats(f).misses, s0.misses);
	assert_true(same_counters(f, NFPROTO_INET, 6) > 0);
}

/* an ip (IPv4) chain: an IPv6 packet meets no chain at the hook */
static void test_probe_family_without_chain(void **state)
{
	struct fix *f = *state;
	const struct flow six = T6(80);
	static struct tpkt t;
	struct nftdp_vm_pkt *pk;
	const struct nftdp_vm_flow_hit *hit;

	build_both(f, rs_accept1);
	pk = build(&t, &six);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, &pk, 1, &hit, &f->s[1].ctx);
	assert_non_null(hit);
	assert_int_equal(nftdp_vm_flow_hit_verdict(hit), NF_ACCEPT);
}

/* ---------- carried results ---------- */

/* ip forward, drop, as stateful rulesets: 61 ct state established accept,
 * 62 ip ttl 1 drop, 63 ip frag-off & 0x1fff != 0 drop, 64 meta l4proto tcp
 * tcp flags & (syn | fin) == (syn | fin) drop, 65 ct state new counter
 * accept */
static void rs_carry(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain **base)
{
	struct nftdp_vm_chain *c;

	c = base[0] = gen_chain(b, NFPROTO_IPV4, "c", true, NF_INET_FORWARD, 0, NF_DROP, 0);
	add(b, c, 61, ct_get(NFT_CT_STATE, -1, NFT_REG_1), bitwise_and(NFT_REG_1, 4, CT_EST),
	    cmp32(NFT_CMP_NEQ, NFT_REG_1, 0), ACCEPT, NULL);
	add(b, c, 62, payload(NH, 8, 1, NFT_REG_1), cmp8(NFT_CMP_EQ, NFT_REG_1, 1), DROP, NULL);
	add(b, c, 63, payload(NH, 6, 2, NFT_REG_1), bitwise_and(NFT_REG_1, 2, htons(0x1fff)),
	    cmp16be(NFT_CMP_NEQ, NFT_REG_1, 0), DROP, NULL);
	add(b, c, 64, L4_IS(IPPROTO_TCP), payload(TH, 13, 1, NFT_REG_1),
	    bitwise_and(NFT_REG_1, 1, 0x03), cmp8(NFT_CMP_EQ, NFT_REG_1, 0x03), DROP, NULL);
	add(b, c, 65, ct_get(NFT_CT_STATE, -1, NFT_REG_1), bitwise_and(NFT_REG_1, 4, CT_NEW),
	    cmp32(NFT_CMP_NEQ, NFT_REG_1, 0), CNT, ACCEPT, NULL);
}

/* fl's carried result after its hit at forward (cached first); false when
 * none is made */
static bool carry_of(struct fix *f, const struct flow *fl, struct nftdp_vm_flow_carry *c)
{
	static struct tpkt t;
	struct nftdp_vm_pkt *pk;
	const struct nftdp_vm_flow_hit *hit;
	uint64_t owner;

	run1(f, NFPROTO_IPV4, fl);
	pk = build(&t, fl);
	nftdp_vm_gen_flow_probe(f->s[1].gen, NF_INET_FORWARD, &pk, 1, &hit, &f->s[1].ctx);
	assert_non_null(hit);
	owner = c->owner; /* what the record's owner kept there */
	memset(c, 0, sizeof(*c));
	c->owner = owner;
	return nftdp_vm_flow_carry_make(c, fl->ct, fl->iif, &hit, 1, 1, pk);
}

/* whether c judges fl; then charged on side 1 while side 0 runs it */
static bool carried(struct fix *f, const struct nftdp_vm_flow_carry *c, const struct flow *fl)
{
	static struct tpkt t[2];
	struct nftdp_vm_pkt *pk[2] = {build(&t[0], fl), build(&t[1], fl)};
	unsigned int last = 9, v;

	if (!nftdp_vm_gen_flow_carried(f->s[1].gen, c, pk[1], &f->s[1].ctx, &last))
		return false;
	assert_int_equal(last, 1); /* every hook accepted */
	nftdp_vm_flow_carry_charge(c, pk[1], &f->s[1].ctx);
	nftdp_vm_gen_run_hook_burst(f->s[0].gen, NFPROTO_IPV4, NF_INET_FORWARD, &pk[0], 1, &v,
				    &f->s[0].ctx);
	assert_int_equal(v, NF_ACCEPT);
	return true;
}

/* A connection that stays NEW (UDP without replies) passes rules that read
 * header bytes it does not fix (ip ttl, ip frag-off): its result is carried
 * with those bytes as its guard, so a packet with other bytes there (ttl
 * 1) runs the chains; a later fragment never takes it. Bytes of two
 * headers (a TCP packet's flags too) make none. */
static void test_carry_guard(void **state)
{
	struct fix *f = *state;
	struct fake_ct cu = {.state = CT_NEW}, ct = {.state = CT_NEW}, ce = {.state = CT_EST};
	const struct flow u = U4(53, .ct = &cu, .iif = 3),
			  u_ttl1 = U4(53, .ct = &cu, .iif = 3, .ttl = 1),
			  u_ttl9 = U4(53, .ct = &cu, .iif = 3, .ttl = 9),
			  u_frag = U4(53, .ct = &cu, .iif = 3, .frag = 2),
			  u_iif = U4(53, .ct = &cu, .iif = 4),
			  t_syn = T4(80, .ct = &ct, .tflags = 0x02),
			  t_est = T4(80, .ct = &ce, .tflags = 0x10),
			  t_est_ttl9 = T4(80, .ct = &ce, .tflags = 0x02, .ttl = 9);
	struct nftdp_vm_flow_carry c = {0}, e = {0};
	struct nftdp_vm_flow_stats s0;

	build_both(f, rs_carry);
	/* the owner's word (conntrack's byte counter) is left as it was */
	c.owner = 0x1234567890ull;
	assert_true(carry_of(f, &u, &c));
	assert_int_equal(c.owner, 0x1234567890ull);
	assert_int_not_equal(c.g_bytes, 0);
	assert_int_equal(c.n_ctr, 1); /* rule 65's counter */
	assert_int_equal(c.ctinfo, 0);
	s0 = stats(f);
	assert_true(carried(f, &c, &u));
	assert_true(carried(f, &c, &u));
	assert_int_equal(stats(f).carried - s0.carried, 2);
	assert_true(same_counters(f, NFPROTO_IPV4, 65) > 0);
	/* the record is the entry's: another ctinfo of it is not judged */
	e = c;
	e.ctinfo = 3; /* IP_CT_ESTABLISHED_REPLY */
	assert_false(carried(f, &e, &u));
	/* other bytes under the guard: the chains decide (ttl 1: drop) */
	assert_false(carried(f, &c, &u_ttl1));
	assert_false(carried(f, &c, &u_ttl9));
	assert_int_equal(run1(f, NFPROTO_IPV4, &u_ttl1), NF_DROP);
	assert_false(carried(f, &c, &u_frag));
	assert_false(carried(f, &c, &u_iif));
	/* a TCP packet of a NEW connection also read its flags: two headers */
	assert_false(carry_of(f, &t_syn, &e));
	/* an established one read only its state: no guard, any ttl or flags */
	assert_true(carry_of(f, &t_est, &e));
	assert_int_equal(e.g_bytes, 0);
	assert_true(carried(f, &e, &t_est_ttl9));
	same_counters(f, NFPROTO_IPV4, 65);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_mixed_same_as_uncached, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_key_precision, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_masked_loads, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_mask_zero_bounds, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_out_of_bounds, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_uncacheable, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_invalidation, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_jump_goto, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_meta_keys, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_match_outcome, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_not_used, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_window_whole, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_many_counters, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_long_burst, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_flood_guard, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_flood_guard_per_hook, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_hooks_apart, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_link_header, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_named_objects, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_ct_keys, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_set_lookups, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_cursor_switch, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_vmap_jump, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_create_sizes, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_probe_charge, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_probe_charge_row, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_probe_family_without_chain, fix_setup,
					    fix_teardown),
	    cmocka_unit_test_setup_teardown(test_carry_guard, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_carry_guard, fix_setup_eth, fix_teardown),
	    /* the same behind Ethernet headers: the packed key layout */
	    cmocka_unit_test_setup_teardown(test_mixed_same_as_uncached, fix_setup_eth,
					    fix_teardown),
	    cmocka_unit_test_setup_teardown(test_key_precision, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_masked_loads, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_key_window, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_key_window, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_mask_zero_bounds, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_out_of_bounds, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_meta_keys, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_long_burst, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_ct_keys, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_set_lookups, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_probe_charge, fix_setup_eth, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_rule_index, fix_setup_eth, fix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
