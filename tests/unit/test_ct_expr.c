// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL):
 * ct expressions compiled with libnftnl and run by the VM
 * through nftdp_ct_vm_ops: ct state/ct set rules, nat expressions, zones,
 * ct timeout policies and connlimit.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"
#include "nftdp_sets.h"

/* compile one rule of the NULL-terminated expressions ap into c */
static void add_rule_v(struct nftdp_vm_chain *c, struct nftdp_vm_state *st,
		       const struct nftdp_vm_resolver *res, uint64_t handle, va_list ap)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftdp_vm_error err;
	struct nftnl_expr *e;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, handle);
	while ((e = va_arg(ap, struct nftnl_expr *)))
		nftnl_rule_add_expr(r, e);
	if (nftdp_vm_chain_add_rule(c, r, res, st, &err))
		fail_msg("compile: %s", err.msg);
	nftnl_rule_free(r);
}

static void add_rule(struct nftdp_vm_chain *c, struct nftdp_vm_state *st, uint64_t handle, ...)
{
	va_list ap;

	va_start(ap, handle);
	add_rule_v(c, st, NULL, handle, ap);
	va_end(ap);
}

static void test_vm_ct_rules(void **state)
{
	struct nftdp_vm_state_config vcfg = {.n_workers = 1,
					     .max_counters = 16,
					     .max_cells = 16,
					     .log_ring_size = 8,
					     .hash_seed = 1};
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4,
					.table = "t",
					.name = "fwd",
					.base = true,
					.hook = NF_INET_FORWARD,
					.policy = NF_DROP};
	struct env *en = env_new(16, false);
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *c;
	struct nftdp_vm_ctx ctx = {0};
	struct nftdp_ct_entry *e;
	struct tpkt t;
	uint32_t mark = 0x2a, saddr, zero = 0;
	uint8_t reply_dir = IP_CT_DIR_REPLY;

	(void)state;
	assert_int_equal(nftdp_vm_state_create(&vcfg, &st), 0);
	nftdp_vm_state_gen_begin(st);
	assert_int_equal(nftdp_vm_chain_create(&d, st, &c), 0);
	/* ct direction reply ct mark set 0x2a */
	add_rule(c, st, 1, ct_get(NFT_CT_DIRECTION, -1, NFT_REG32_00),
		 cmp(NFT_CMP_EQ, NFT_REG32_00, &reply_dir, 1), imm32(NFT_REG32_01, mark),
		 ct_set(NFT_CT_MARK, NFT_REG32_01), NULL);
	/* ct state established,related accept */
	add_rule(c, st, 2, ct_get(NFT_CT_STATE, -1, NFT_REG_1), bitwise_and(NFT_REG_1, 4, 0x6),
		 cmp(NFT_CMP_NEQ, NFT_REG_1, &zero, 4), verdict(NF_ACCEPT, NULL), NULL);
	/* ct original saddr 10.10.0.1 ct state new accept */
	assert_int_equal(inet_pton(AF_INET, "10.10.0.1", &saddr), 1);
	add_rule(c, st, 3, ct_get(NFT_CT_SRC_IP, IP_CT_DIR_ORIGINAL, NFT_REG32_00),
		 cmp(NFT_CMP_EQ, NFT_REG32_00, &saddr, 4), ct_get(NFT_CT_STATE, -1, NFT_REG32_01),
		 cmp(NFT_CMP_EQ, NFT_REG32_01, &(uint32_t){ST_NEW}, 4), verdict(NF_ACCEPT, NULL),
		 NULL);
	ctx.state = st;
	ctx.now_ms = en->now;

	/* new from an allowed source: accepted by rule 3 */
	udp(&t, false, "10.10.0.1", "10.10.0.2", 1, 2, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	e = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	assert_int_equal(nftdp_vm_run_chain(c, &t.pkt, &ctx), NF_ACCEPT);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	assert_int_equal(e->mark, 0);
	/* new from elsewhere: policy drop, and no entry remains */
	udp(&t, false, "10.10.0.9", "10.10.0.2", 1, 2, 0);
	nftdp_ct_in(en->s, &t.pkt, en->now);
	assert_int_equal(nftdp_vm_run_chain(c, &t.pkt, &ctx), NF_DROP);
	nftdp_ct_confirm(en->s, &t.pkt, NF_DROP);
	assert_int_equal(en->s->st.count, 1);
	/* the reply: established, accepted, marked */
	udp(&t, false, "10.10.0.2", "10.10.0.1", 2, 1, 0);
	nftdp_ct_in(en->s, &t.pkt, en->now);
	assert_int_equal(nftdp_vm_run_chain(c, &t.pkt, &ctx), NF_ACCEPT);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	assert_int_equal(e->mark, 0x2a);
	/* invalid (bad checksum): neither rule matches */
	udp(&t, false, "10.10.0.2", "10.10.0.1", 2, 1, 4);
	t.buf[27] ^= 0xff;
	nftdp_ct_in(en->s, &t.pkt, en->now);
	assert_null(t.pkt.ct);
	assert_int_equal(nftdp_vm_run_chain(c, &t.pkt, &ctx), NF_DROP);

	/* keys read straight through the ops */
	{
		uint8_t buf[16];
		uint64_t v64;
		uint32_t v32;
		void *ct;

		udp(&t, false, "10.10.0.1", "10.10.0.2", 1, 2, 0);
		nftdp_ct_in(en->s, &t.pkt, en->now);
		ct = t.pkt.ct;
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_L3PROTOCOL, -1, buf, 1));
		assert_int_equal(buf[0], NFPROTO_IPV4);
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_PROTOCOL, 0, buf, 1));
		assert_int_equal(buf[0], IPPROTO_UDP);
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_PROTO_DST, 1, buf, 2));
		assert_int_equal(buf[0] << 8 | buf[1], 1);
		assert_false(nftdp_ct_vm_ops.get(ct, NFT_CT_SRC_IP6, 0, buf, 16));
		assert_false(nftdp_ct_vm_ops.get(ct, NFT_CT_HELPER, -1, buf, 16));
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_PKTS, -1, &v64, 8));
		assert_int_equal(v64, 3);
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_PKTS, 1, &v64, 8));
		assert_int_equal(v64, 1);
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_AVGPKT, -1, &v64, 8));
		assert_int_equal(v64, 28);
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_EXPIRATION, -1, &v32, 4));
		assert_int_equal(v32, 30000);
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_STATUS, -1, &v32, 4));
		assert_int_equal(v32, IPS_CONFIRMED | IPS_SEEN_REPLY);
		assert_true(nftdp_ct_vm_ops.get(ct, NFT_CT_MARK, -1, &v32, 4));
		assert_int_equal(v32, 0x2a);
		nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	}
	nftdp_vm_chain_destroy(c);
	nftdp_vm_state_destroy(st);
	env_free(en);
}

static struct nftnl_expr *nat_expr(uint32_t type, uint32_t family, uint32_t areg, uint32_t preg,
				   uint32_t flags)
{
	struct nftnl_expr *e = ex("nat");

	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_TYPE, type);
	nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FAMILY, family);
	if (areg)
		nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_ADDR_MIN, areg);
	if (preg)
		nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_REG_PROTO_MIN, preg);
	if (flags)
		nftnl_expr_set_u32(e, NFTNL_EXPR_NAT_FLAGS, flags);
	return e;
}

static int try_rule(struct nftdp_vm_chain *c, struct nftdp_vm_state *st, struct nftnl_expr *a,
		    struct nftnl_expr *b)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftdp_vm_error err;
	int rc;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 99);
	nftnl_rule_add_expr(r, a);
	if (b)
		nftnl_rule_add_expr(r, b);
	rc = nftdp_vm_chain_add_rule(c, r, NULL, st, &err);
	nftnl_rule_free(r);
	return rc;
}

/* snat/dnat/masquerade compiled by the VM and bound through nftdp_ct_vm_ops */
static void test_vm_nat_rules(void **state)
{
	struct nftdp_vm_state_config vcfg = {.n_workers = 1,
					     .max_counters = 16,
					     .max_cells = 16,
					     .log_ring_size = 8,
					     .hash_seed = 1};
	struct nftdp_vm_chain_desc post = {.family = NFPROTO_IPV4,
					   .table = "nat",
					   .name = "post",
					   .base = true,
					   .hook = NF_INET_POST_ROUTING,
					   .policy = NF_ACCEPT};
	struct nftdp_vm_chain_desc pre = post;
	struct nftdp_ct_config cfg = {.max_entries = 16, .ifaddr = test_ifaddr};
	struct env en = {.now = 1000};
	struct nftdp_vm_chain *cpost, *cpre;
	struct nftdp_vm_ctx ctx = {0};
	struct nftdp_vm_state *st;
	struct nftdp_ct_entry *e;
	struct tpkt t;
	uint32_t addr;
	uint16_t port = htons(8443);

	(void)state;
	pre.name = "pre";
	pre.hook = NF_INET_PRE_ROUTING;
	pre.chain_id = 1;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	assert_int_equal(nftdp_vm_state_create(&vcfg, &st), 0);
	nftdp_vm_state_gen_begin(st);
	assert_int_equal(nftdp_vm_chain_create(&post, st, &cpost), 0);
	assert_int_equal(nftdp_vm_chain_create(&pre, st, &cpre), 0);
	ctx.state = st;
	{
		/* a NAT statement in a nat postrouting chain compiles: a refusal
		 * is a failure, never a skip */
		struct nftdp_vm_chain_desc pd = post;
		struct nftnl_rule *r = nftnl_rule_alloc();
		struct nftdp_vm_chain *probe;
		struct nftdp_vm_error err;
		int rc;

		pd.name = "probe";
		pd.chain_id = 2;
		assert_int_equal(nftdp_vm_chain_create(&pd, st, &probe), 0);
		nftnl_rule_add_expr(r, nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, NFT_REG32_00, 0, 0));
		rc = nftdp_vm_chain_add_rule(probe, r, NULL, st, &err);
		nftdp_vm_chain_destroy(probe);
		nftnl_rule_free(r);
		if (rc != 0)
			fail_msg("NAT compile refused (%d): %s", rc, err.msg);
	}
	/* init checks as nft_nat_init / _validate */
	assert_int_equal(
	    try_rule(cpre, st, nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, NFT_REG32_00, 0, 0), NULL),
	    -EOPNOTSUPP);
	assert_int_equal(
	    try_rule(cpost, st, nat_expr(NFT_NAT_DNAT, NFPROTO_IPV4, NFT_REG32_00, 0, 0), NULL),
	    -EOPNOTSUPP);
	assert_int_equal(
	    try_rule(cpost, st, nat_expr(NFT_NAT_SNAT, NFPROTO_IPV6, NFT_REG32_00, 0, 0), NULL),
	    -EOPNOTSUPP);
	assert_int_equal(try_rule(cpost, st, nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, 0, 0, 0), NULL),
			 -EINVAL);
	assert_int_equal(try_rule(cpost, st,
				  nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, NFT_REG32_00, 0, 0x1000),
				  NULL),
			 -EOPNOTSUPP);
	assert_int_equal(try_rule(cpost, st, ex("redir"), NULL), -EOPNOTSUPP);
	assert_int_equal(try_rule(cpre, st, ex("masq"), NULL), -EOPNOTSUPP);
	/* ip daddr 203.0.113.5 dnat to 10.0.0.80:8443 (prerouting) */
	assert_int_equal(inet_pton(AF_INET, "10.0.0.80", &addr), 1);
	add_rule(cpre, st, 1, imm32(NFT_REG32_00, addr), imm32(NFT_REG32_01, port),
		 nat_expr(NFT_NAT_DNAT, NFPROTO_IPV4, NFT_REG32_00, NFT_REG32_01, 0), NULL);
	/* masquerade (postrouting) */
	add_rule(cpost, st, 1, ex("masq"), NULL);

	udp(&t, false, "192.0.2.9", "203.0.113.5", 5555, 443, 8);
	t.pkt.oif = 2;
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	e = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	assert_true(nftdp_ct_nat_need_chains(&t.pkt, NF_INET_PRE_ROUTING));
	assert_int_equal(nftdp_vm_run_chain(cpre, &t.pkt, &ctx), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en.s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_ip4(t.buf + 16, "10.0.0.80");
	assert_int_equal(port_at(t.buf + 22), 8443);
	assert_true(nftdp_ct_nat_need_chains(&t.pkt, NF_INET_POST_ROUTING));
	assert_int_equal(nftdp_vm_run_chain(cpost, &t.pkt, &ctx), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en.s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_ip4(t.buf + 12, "192.0.2.254");
	assert_csums(&t);
	assert_int_equal(e->status & (IPS_SRC_NAT | IPS_DST_NAT), IPS_SRC_NAT | IPS_DST_NAT);
	nftdp_ct_confirm(en.s, &t.pkt, NF_ACCEPT);
	/* the reply: 10.0.0.80:8443 -> 192.0.2.254:5555 becomes 203.0.113.5:443 -> 192.0.2.9 */
	udp(&t, false, "10.0.0.80", "192.0.2.254", 8443, 5555, 8);
	assert_int_equal(nat_path(&en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_ip4(t.buf + 16, "192.0.2.9");
	assert_int_equal(port_at(t.buf + 20), 443);
	assert_csums(&t);
	nftdp_vm_chain_destroy(cpre);
	nftdp_vm_chain_destroy(cpost);
	nftdp_vm_state_destroy(st);
	nftdp_ct_shard_destroy(en.s);
}

/* `snat ip prefix to 192.168.2.0/24` and `dnat ip prefix to 10.0.0.0/24`
 * (NF_NAT_RANGE_NETMAP, nft_nat_setup_netmap): the packet keeps its host
 * bits, the network bits come from the range; port offset maps stay
 * refused */
static void test_vm_nat_netmap(void **state)
{
	struct nftdp_vm_state_config vcfg = {.n_workers = 1,
					     .max_counters = 16,
					     .max_cells = 16,
					     .log_ring_size = 8,
					     .hash_seed = 1};
	struct nftdp_vm_chain_desc post = {.family = NFPROTO_IPV4,
					   .table = "nat",
					   .name = "post",
					   .base = true,
					   .hook = NF_INET_POST_ROUTING,
					   .policy = NF_ACCEPT};
	struct nftdp_vm_chain_desc pre = post;
	struct nftdp_ct_config cfg = {.max_entries = 16, .ifaddr = test_ifaddr};
	struct env en = {.now = 1000};
	struct nftdp_vm_chain *cpost, *cpre;
	struct nftdp_vm_ctx ctx = {0};
	struct nftdp_vm_state *st;
	struct nftnl_expr *n;
	struct tpkt t;
	uint32_t lo, hi;

	(void)state;
	pre.name = "pre";
	pre.hook = NF_INET_PRE_ROUTING;
	pre.chain_id = 1;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	assert_int_equal(nftdp_vm_state_create(&vcfg, &st), 0);
	nftdp_vm_state_gen_begin(st);
	assert_int_equal(nftdp_vm_chain_create(&post, st, &cpost), 0);
	assert_int_equal(nftdp_vm_chain_create(&pre, st, &cpre), 0);
	ctx.state = st;
	assert_int_equal(try_rule(cpost, st,
				  nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, NFT_REG32_00, 0,
					   NF_NAT_RANGE_PROTO_OFFSET),
				  NULL),
			 -EOPNOTSUPP);
	assert_int_equal(inet_pton(AF_INET, "192.168.2.0", &lo), 1);
	assert_int_equal(inet_pton(AF_INET, "192.168.2.255", &hi), 1);
	n = nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, NFT_REG32_00, 0, NF_NAT_RANGE_NETMAP);
	nftnl_expr_set_u32(n, NFTNL_EXPR_NAT_REG_ADDR_MAX, NFT_REG32_01);
	add_rule(cpost, st, 1, imm32(NFT_REG32_00, lo), imm32(NFT_REG32_01, hi), n, NULL);
	assert_int_equal(inet_pton(AF_INET, "10.0.0.0", &lo), 1);
	assert_int_equal(inet_pton(AF_INET, "10.0.0.255", &hi), 1);
	n = nat_expr(NFT_NAT_DNAT, NFPROTO_IPV4, NFT_REG32_00, 0, NF_NAT_RANGE_NETMAP);
	nftnl_expr_set_u32(n, NFTNL_EXPR_NAT_REG_ADDR_MAX, NFT_REG32_01);
	add_rule(cpre, st, 1, imm32(NFT_REG32_00, lo), imm32(NFT_REG32_01, hi), n, NULL);

	udp(&t, false, "10.141.11.4", "203.0.113.77", 5555, 53, 8);
	t.pkt.oif = 2;
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	assert_int_equal(nftdp_vm_run_chain(cpre, &t.pkt, &ctx), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en.s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_ip4(t.buf + 16, "10.0.0.77");
	assert_int_equal(nftdp_vm_run_chain(cpost, &t.pkt, &ctx), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en.s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_ip4(t.buf + 12, "192.168.2.4");
	assert_int_equal(port_at(t.buf + 20), 5555);
	assert_csums(&t);
	nftdp_ct_confirm(en.s, &t.pkt, NF_ACCEPT);
	/* the reply is translated back */
	udp(&t, false, "10.0.0.77", "192.168.2.4", 53, 5555, 8);
	assert_int_equal(nat_path(&en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	assert_ip4(t.buf + 12, "203.0.113.77");
	assert_ip4(t.buf + 16, "10.141.11.4");
	assert_csums(&t);
	nftdp_vm_chain_destroy(cpre);
	nftdp_vm_chain_destroy(cpost);
	nftdp_vm_state_destroy(st);
	nftdp_ct_shard_destroy(en.s);
}

/* redirect: refused without a local stack and outside prerouting; with
 * one, DNAT to the incoming port's address with the given port, dropped
 * on a port without an address (nf_nat_redirect_ipv4) */
static void test_vm_redirect(void **state)
{
	struct nftdp_vm_state_config vcfg = {.n_workers = 1,
					     .max_counters = 16,
					     .max_cells = 16,
					     .log_ring_size = 8,
					     .hash_seed = 1};
	struct nftdp_vm_chain_desc pre = {.family = NFPROTO_IPV4,
					  .table = "nat",
					  .name = "pre",
					  .base = true,
					  .hook = NF_INET_PRE_ROUTING,
					  .policy = NF_ACCEPT};
	struct nftdp_vm_chain_desc post = pre;
	struct nftdp_ct_config cfg = {.max_entries = 16, .ifaddr = test_ifaddr};
	struct env en = {.now = 1000};
	struct nftdp_vm_chain *cpre, *cpost;
	struct nftdp_vm_ctx ctx = {0};
	struct nftdp_vm_state *st;
	struct nftnl_expr *rd;
	struct tpkt t;
	uint16_t port = htons(8080);

	(void)state;
	post.name = "post";
	post.hook = NF_INET_POST_ROUTING;
	post.chain_id = 1;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	/* no local stack: refused */
	assert_int_equal(nftdp_vm_state_create(&vcfg, &st), 0);
	nftdp_vm_state_gen_begin(st);
	assert_int_equal(nftdp_vm_chain_create(&pre, st, &cpre), 0);
	assert_int_equal(try_rule(cpre, st, ex("redir"), NULL), -EOPNOTSUPP);
	nftdp_vm_chain_destroy(cpre);
	nftdp_vm_state_destroy(st);

	vcfg.local_stack = true;
	assert_int_equal(nftdp_vm_state_create(&vcfg, &st), 0);
	nftdp_vm_state_gen_begin(st);
	assert_int_equal(nftdp_vm_chain_create(&pre, st, &cpre), 0);
	assert_int_equal(nftdp_vm_chain_create(&post, st, &cpost), 0);
	assert_int_equal(try_rule(cpost, st, ex("redir"), NULL), -EOPNOTSUPP);
	/* tproxy needs the host's sockets: refused even so */
	assert_int_equal(try_rule(cpre, st, ex("tproxy"), NULL), -EOPNOTSUPP);
	ctx.state = st;
	/* redirect to :8080 */
	rd = ex("redir");
	nftnl_expr_set_u32(rd, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG32_01);
	add_rule(cpre, st, 1, imm32(NFT_REG32_01, port), rd, NULL);

	udp(&t, false, "198.51.100.7", "10.9.0.7", 5555, 80, 8);
	t.pkt.iif = 2;
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	assert_int_equal(nftdp_vm_run_chain(cpre, &t.pkt, &ctx), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en.s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_ip4(t.buf + 16, "192.0.2.254");
	assert_int_equal(port_at(t.buf + 22), 8080);
	assert_csums(&t);
	nftdp_ct_confirm(en.s, &t.pkt, NF_ACCEPT);

	/* a port with no address: the kernel drops */
	udp(&t, false, "198.51.100.8", "10.9.0.7", 5556, 80, 8);
	t.pkt.iif = 3;
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	assert_int_equal(nftdp_vm_run_chain(cpre, &t.pkt, &ctx), NF_DROP);
	nftdp_ct_confirm(en.s, &t.pkt, NF_DROP);

	nftdp_vm_chain_destroy(cpre);
	nftdp_vm_chain_destroy(cpost);
	nftdp_vm_state_destroy(st);
	nftdp_ct_shard_destroy(en.s);
}

struct vm_env {
	struct nftdp_vm_state *st;
	struct nftdp_vm_ctx ctx;
};

static void vm_env_init(struct vm_env *v, uint64_t now)
{
	struct nftdp_vm_state_config vcfg = {.n_workers = 2,
					     .max_counters = 16,
					     .max_cells = 16,
					     .log_ring_size = 8,
					     .hash_seed = 1};

	memset(v, 0, sizeof(*v));
	assert_int_equal(nftdp_vm_state_create(&vcfg, &v->st), 0);
	nftdp_vm_state_gen_begin(v->st);
	v->ctx.state = v->st;
	v->ctx.now_ms = now;
}

static struct nftdp_vm_chain *vm_chain(struct vm_env *v, const char *name, uint8_t hook,
				       uint32_t policy)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4,
					.table = "t",
					.name = name,
					.base = true,
					.hook = hook,
					.policy = policy};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_chain_create(&d, v->st, &c), 0);
	return c;
}

static struct nftdp_ct_entry *pkt_entry(const struct tpkt *t)
{
	return (struct nftdp_ct_entry *)((uintptr_t)t->pkt.ct & ~(uintptr_t)7);
}

/* raw chain (if any), conntrack, then the filter chain (if any), confirm */
static uint32_t zxmit(struct env *en, struct vm_env *v, struct tpkt *t,
		      const struct nftdp_vm_chain *raw, const struct nftdp_vm_chain *filter,
		      struct nftdp_ct_entry **ent)
{
	unsigned int verdict = NF_ACCEPT;
	uint32_t st;

	t->pkt.hook = NF_INET_PRE_ROUTING;
	if (raw)
		assert_int_equal(nftdp_vm_run_chain(raw, &t->pkt, &v->ctx), NF_ACCEPT);
	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	st = t->pkt.ct		   ? nftdp_ct_vm_ops.state(t->pkt.ct)
	     : t->pkt.ct_untracked ? ST_UNTRACKED
				   : ST_INVALID;
	if (ent)
		*ent = t->pkt.ct ? pkt_entry(t) : NULL;
	if (filter) {
		v->ctx.now_ms = en->now;
		verdict = nftdp_vm_run_chain(filter, &t->pkt, &v->ctx);
	}
	verdict = nftdp_ct_confirm(en->s, &t->pkt, verdict);
	return verdict == NF_ACCEPT ? st : 0;
}

static void test_zones(void **state)
{
	struct env *en = env_new(64, false);
	struct vm_env v;
	struct nftdp_vm_chain *z1, *zorig, *zread, *ztwice;
	struct nftdp_ct_entry *e0, *e1, *e, *eo;
	struct tpkt t, q;
	uint16_t one = 1;
	uint8_t icmp_h[8 + 28] = {3, 3};
	unsigned int n;

	(void)state;
	vm_env_init(&v, en->now);
	/* ct zone set 1 */
	z1 = vm_chain(&v, "z1", NF_INET_PRE_ROUTING, NF_ACCEPT);
	add_rule(z1, v.st, 1, imm32(NFT_REG32_00, 1), ct_set_dir(NFT_CT_ZONE, NFT_REG32_00, -1),
		 NULL);
	/* ct original zone set 5 */
	zorig = vm_chain(&v, "zo", NF_INET_PRE_ROUTING, NF_ACCEPT);
	add_rule(zorig, v.st, 1, imm32(NFT_REG32_00, 5),
		 ct_set_dir(NFT_CT_ZONE, NFT_REG32_00, IP_CT_DIR_ORIGINAL), NULL);
	/* the template before conntrack: ct zone set 1; ct zone 1 ct state new
	 * notrack (ignored: the template is there) */
	zread = vm_chain(&v, "zr", NF_INET_PRE_ROUTING, NF_ACCEPT);
	add_rule(zread, v.st, 1, imm32(NFT_REG32_00, 1), ct_set_dir(NFT_CT_ZONE, NFT_REG32_00, -1),
		 ct_get(NFT_CT_ZONE, -1, NFT_REG32_01), cmp(NFT_CMP_EQ, NFT_REG32_01, &one, 2),
		 ct_get(NFT_CT_STATE, -1, NFT_REG32_02),
		 cmp(NFT_CMP_EQ, NFT_REG32_02, &(uint32_t){ST_NEW}, 4), ex("notrack"), NULL);
	/* ct zone set 1; ct zone set 2: the first one wins */
	ztwice = vm_chain(&v, "z2", NF_INET_PRE_ROUTING, NF_ACCEPT);
	add_rule(ztwice, v.st, 1, imm32(NFT_REG32_00, 1), ct_set_dir(NFT_CT_ZONE, NFT_REG32_00, -1),
		 imm32(NFT_REG32_01, 2), ct_set_dir(NFT_CT_ZONE, NFT_REG32_01, -1), NULL);

	/* the same tuple in zone 0 and zone 1: two entries */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, NULL, &e0), ST_NEW);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, z1, NULL, &e1), ST_NEW);
	assert_ptr_not_equal(e0, e1);
	assert_int_equal(en->s->st.count, 2);
	assert_int_equal(e1->tuple[0].zone, 1);
	assert_int_equal(e1->tuple[1].zone, 1);
	assert_int_equal(e0->tuple[0].zone, 0);
	/* the reply in zone 1 finds zone 1's entry, the one without a zone zone 0's */
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 1000, 0);
	assert_int_equal(zxmit(en, &v, &t, z1, NULL, &e), ST_ESTABLISHED);
	assert_ptr_equal(e, e1);
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 1000, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, NULL, &e), ST_ESTABLISHED);
	assert_ptr_equal(e, e0);
	{
		uint16_t z;
		struct nftdp_ct_info info;
		struct nftdp_ct_tuple k = e1->tuple[0];

		udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
		zxmit(en, &v, &t, z1, NULL, NULL);
		assert_int_equal(nftdp_ct_get(en->s, &k, en->now, &info), 0);
		assert_int_equal(info.zone, 1);
		udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
		nftdp_vm_run_chain(z1, &t.pkt, &v.ctx);
		nftdp_ct_in(en->s, &t.pkt, en->now);
		assert_true(nftdp_ct_vm_ops.get(t.pkt.ct, NFT_CT_ZONE, -1, &z, 2));
		assert_int_equal(z, 1);
		assert_true(nftdp_ct_vm_ops.get(t.pkt.ct, NFT_CT_ZONE, IP_CT_DIR_REPLY, &z, 2));
		assert_int_equal(z, 1);
		nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	}
	/* an ICMP error in zone 1 about zone 1's flow is related; without the
	 * zone it is related to zone 0's */
	udp(&q, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	memcpy(icmp_h + 8, q.buf, 28);
	build(&t, false, "10.0.0.2", "10.0.0.1", IPPROTO_ICMP, icmp_h, sizeof(icmp_h));
	assert_int_equal(zxmit(en, &v, &t, z1, NULL, &e), ST_RELATED);
	assert_ptr_equal(e, e1);
	build(&t, false, "10.0.0.2", "10.0.0.1", IPPROTO_ICMP, icmp_h, sizeof(icmp_h));
	assert_int_equal(zxmit(en, &v, &t, NULL, NULL, &e), ST_RELATED);
	assert_ptr_equal(e, e0);

	/* directional: ct original zone set 5 keys the original tuple only;
	 * the reply (no zone) finds it in zone 0 */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 2000, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, zorig, NULL, &eo), ST_NEW);
	assert_int_equal(eo->tuple[0].zone, 5);
	assert_int_equal(eo->tuple[1].zone, 0);
	assert_int_equal(eo->zone_dir, NFTDP_VM_CT_ZONE_DIR_ORIG);
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 2000, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, NULL, &e), ST_ESTABLISHED);
	assert_ptr_equal(e, eo);
	{
		uint16_t z;

		udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 2000, 0);
		nftdp_ct_in(en->s, &t.pkt, en->now);
		assert_true(nftdp_ct_vm_ops.get(t.pkt.ct, NFT_CT_ZONE, -1, &z, 2));
		assert_int_equal(z, 5);
		assert_true(nftdp_ct_vm_ops.get(t.pkt.ct, NFT_CT_ZONE, IP_CT_DIR_REPLY, &z, 2));
		assert_int_equal(z, 0);
		assert_true(nftdp_ct_vm_ops.get(t.pkt.ct, NFT_CT_ZONE, IP_CT_DIR_ORIGINAL, &z, 2));
		assert_int_equal(z, 5);
		nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	}
	/* a reply that also carries zone 5 in both directions does not match
	 * (its reply zone is 5, the entry's 0): a new connection, whose reply
	 * tuple is the first one's original: dropped at confirm, no entry */
	{
		struct nftdp_vm_chain *z5 = vm_chain(&v, "z5", NF_INET_PRE_ROUTING, NF_ACCEPT);

		add_rule(z5, v.st, 1, imm32(NFT_REG32_00, 5),
			 ct_set_dir(NFT_CT_ZONE, NFT_REG32_00, -1), NULL);
		n = en->s->st.count;
		udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 2000, 0);
		assert_int_equal(zxmit(en, &v, &t, z5, NULL, &e), 0);
		assert_ptr_not_equal(e, eo);
		assert_int_equal(en->s->st.count, n);
		assert_int_equal(en->s->st.insert_failed, 1);
		/* in zone 0 both ways the same packet is the entry's reply */
		udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 2000, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, NULL, &e), ST_ESTABLISHED);
		assert_ptr_equal(e, eo);
		/* and with an original-only zone 5 too: the second lookup, by the
		 * packet's reply zone (0), finds the entry's reply tuple */
		udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 2000, 0);
		assert_int_equal(zxmit(en, &v, &t, zorig, NULL, &e), ST_ESTABLISHED);
		assert_ptr_equal(e, eo);
		nftdp_vm_chain_destroy(z5);
	}

	/* the template: ct zone and ct state new read before conntrack,
	 * notrack after it does nothing */
	udp(&t, false, "10.0.0.7", "10.0.0.2", 3000, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, zread, NULL, &e), ST_NEW);
	assert_non_null(e);
	assert_int_equal(e->tuple[0].zone, 1);
	/* notrack first, then ct zone set: tracked in the zone */
	{
		struct nftdp_vm_chain *nz = vm_chain(&v, "nz", NF_INET_PRE_ROUTING, NF_ACCEPT);

		add_rule(nz, v.st, 1, ex("notrack"), imm32(NFT_REG32_00, 3),
			 ct_set_dir(NFT_CT_ZONE, NFT_REG32_00, -1), NULL);
		udp(&t, false, "10.0.0.8", "10.0.0.2", 3000, 53, 0);
		assert_int_equal(zxmit(en, &v, &t, nz, NULL, &e), ST_NEW);
		assert_int_equal(e->tuple[0].zone, 3);
		nftdp_vm_chain_destroy(nz);
	}
	udp(&t, false, "10.0.0.9", "10.0.0.2", 3000, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, ztwice, NULL, &e), ST_NEW);
	assert_int_equal(e->tuple[0].zone, 1);
	/* ct zone set after conntrack does nothing */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_ptr_equal(pkt_entry(&t), e0);
	assert_int_equal(nftdp_vm_run_chain(z1, &t.pkt, &v.ctx), NF_ACCEPT);
	assert_int_equal(t.pkt.ct_zone_dir, 0);
	assert_int_equal(e0->tuple[0].zone, 0);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);

	nftdp_vm_chain_destroy(z1);
	nftdp_vm_chain_destroy(zorig);
	nftdp_vm_chain_destroy(zread);
	nftdp_vm_chain_destroy(ztwice);
	nftdp_vm_state_destroy(v.st);
	env_free(en);
}

struct obj_res {
	const struct nftdp_vm_obj *obj[4];
	const char *name[4];
};

static const struct nftdp_vm_obj *res_obj(void *opaque, const char *table, const char *name,
					  uint32_t type)
{
	struct obj_res *r = opaque;

	(void)table;
	(void)type;
	for (int i = 0; i < 4; i++)
		if (r->name[i] && !strcmp(r->name[i], name))
			return r->obj[i];
	return NULL;
}

/* a ct timeout object as nft sends it: every value of the protocol */
static struct nftdp_vm_obj *timeout_obj(struct vm_env *v, const char *name, uint8_t l4,
					const uint32_t *vals, unsigned int n)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nftdp_vm_error err;
	struct nftdp_vm_obj *vo;
	uint32_t arr[NFTNL_CTTIMEOUT_ARRAY_MAX] = {0};

	memcpy(arr, vals, n * sizeof(uint32_t));
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_TIMEOUT);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_IPV4);
	nftnl_obj_set_u16(o, NFTNL_OBJ_CT_TIMEOUT_L3PROTO, NFPROTO_IPV4);
	nftnl_obj_set_u8(o, NFTNL_OBJ_CT_TIMEOUT_L4PROTO, l4);
	nftnl_obj_set_data(o, NFTNL_OBJ_CT_TIMEOUT_ARRAY, arr, sizeof(arr));
	if (nftdp_vm_obj_create(o, v->st, &err, &vo))
		fail_msg("obj: %s", err.msg);
	nftnl_obj_free(o);
	return vo;
}

static struct nftnl_expr *objref(uint32_t type, const char *name)
{
	struct nftnl_expr *e = ex("objref");

	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, type);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, name);
	return e;
}

static void add_rule_res(struct nftdp_vm_chain *c, struct nftdp_vm_state *st,
			 const struct nftdp_vm_resolver *res, uint64_t handle, ...)
{
	va_list ap;

	va_start(ap, handle);
	add_rule_v(c, st, res, handle, ap);
	va_end(ap);
}

/* ct helper set "ftp-std" (nft_ct_helper_obj_eval): new connections of
 * the helper's protocol and family only */
static void test_helper_objref(void **state)
{
	struct env *en = env_new(64, false);
	struct vm_env v;
	struct obj_res r = {.name = {"ftp-std"}};
	struct nftdp_vm_resolver res = {.opaque = &r, .obj = res_obj};
	struct nftdp_vm_chain *f;
	struct nftdp_ct_entry *e;
	struct tflow fl = {false, "10.0.0.1", "10.0.0.2", 1234, 21, 1000, 5000};
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nftdp_vm_error err;
	struct nftdp_vm_obj *vo;
	struct tpkt t;

	(void)state;
	vm_env_init(&v, en->now);
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "ftp-std");
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_HELPER);
	nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "ftp");
	nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_TCP);
	nftnl_obj_set_u16(o, NFTNL_OBJ_CT_HELPER_L3PROTO, NFPROTO_IPV4);
	assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
	nftnl_obj_free(o);
	r.obj[0] = vo;
	f = vm_chain(&v, "f", NF_INET_PRE_ROUTING, NF_ACCEPT);
	add_rule_res(f, v.st, &res, 1, objref(NFT_OBJECT_CT_HELPER, "ftp-std"), NULL);
	seg(&t, &fl, 0, TS, fl.aseq, 0, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &e), ST_NEW);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_FTP);
	assert_true(e->status & IPS_HELPER);
	/* UDP and IPv6 connections do not take it */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 7, 21, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &e), ST_NEW);
	assert_int_equal(e->helper, 0);
	fl.v6 = true;
	fl.a = "2001:db8::1";
	fl.b = "2001:db8::2";
	seg(&t, &fl, 0, TS, fl.aseq, 0, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &e), ST_NEW);
	assert_int_equal(e->helper, 0);
	nftdp_vm_chain_destroy(f);
	nftdp_vm_obj_destroy(vo);
	nftdp_vm_state_destroy(v.st);
	env_free(en);
}

static void test_timeout_policy(void **state)
{
	/* libnftnl order: syn_sent syn_recv established fin_wait close_wait
	 * last_ack time_wait close syn_sent2 retrans unack */
	static const uint32_t tcp_vals[] = {7, 8, 100, 11, 12, 13, 14, 4, 15, 16, 17};
	static const uint32_t udp_vals[] = {5, 50};
	struct env *en = env_new(64, false);
	struct vm_env v;
	struct obj_res r = {.name = {"tcp-short", "udp-short"}};
	struct nftdp_vm_resolver res = {.opaque = &r, .obj = res_obj};
	struct nftdp_vm_chain *f;
	struct nftdp_ct_entry *e, *eu;
	struct tflow fl = {false, "10.0.0.1", "10.0.0.2", 1234, 80, 1000, 5000};
	struct tpkt t;

	(void)state;
	vm_env_init(&v, en->now);
	r.obj[0] = timeout_obj(&v, "tcp-short", IPPROTO_TCP, tcp_vals, 11);
	r.obj[1] = timeout_obj(&v, "udp-short", IPPROTO_UDP, udp_vals, 2);
	f = vm_chain(&v, "f", NF_INET_PRE_ROUTING, NF_ACCEPT);
	/* ct timeout set "tcp-short"; ct timeout set "udp-short" (each only
	 * acts on its own protocol) */
	add_rule_res(f, v.st, &res, 1, objref(NFT_OBJECT_CT_TIMEOUT, "tcp-short"), NULL);
	add_rule_res(f, v.st, &res, 2, objref(NFT_OBJECT_CT_TIMEOUT, "udp-short"), NULL);

	/* SYN: values[0] (syn_sent) from now */
	seg(&t, &fl, 0, TS, fl.aseq, 0, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &e), ST_NEW);
	fl.aseq++;
	assert_int_equal(left_s(en, e), 7);
	assert_int_equal(e->tmo_slot, 1);
	/* the packet path finds the policy from the slot */
	assert_ptr_equal(nftdp_ct_policy(en->s, e), e->tmo);
	assert_int_equal(en->s->pol[0].refs, 1);
	/* the state machine then uses the policy */
	seg(&t, &fl, 1, TS | TA, fl.bseq, fl.aseq, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_ESTABLISHED);
	fl.bseq++;
	assert_int_equal(left_s(en, e), 8);
	seg(&t, &fl, 0, TA, fl.aseq, fl.bseq, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	assert_int_equal(left_s(en, e), 100);
	/* the object goes; the entry keeps the shard's copy */
	nftdp_vm_chain_destroy(f);
	nftdp_vm_obj_destroy((struct nftdp_vm_obj *)r.obj[0]);
	r.obj[0] = NULL;
	seg(&t, &fl, 0, TR | TA, fl.aseq, fl.bseq, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_CLOSE);
	assert_int_equal(left_s(en, e), 4);

	/* UDP: unreplied 5, replied 50 (after the 2 s stream check) */
	f = vm_chain(&v, "f2", NF_INET_PRE_ROUTING, NF_ACCEPT);
	add_rule_res(f, v.st, &res, 2, objref(NFT_OBJECT_CT_TIMEOUT, "udp-short"), NULL);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 7, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &eu), ST_NEW);
	assert_int_equal(left_s(en, eu), 5);
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 7, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_ESTABLISHED);
	en->now += 2100;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 7, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_ESTABLISHED);
	assert_int_equal(left_s(en, eu), 50);
	assert_true(eu->status & IPS_ASSURED);
	/* a TCP entry is left alone by the UDP policy: defaults */
	fl.ap = 4321;
	seg(&t, &fl, 0, TS, fl.aseq, 0, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &e), ST_NEW);
	assert_int_equal(e->tmo_slot, 0);
	/* the packet path finds the policy from the slot */
	assert_ptr_equal(nftdp_ct_policy(en->s, e), e->tmo);
	assert_int_equal(left_s(en, e), 120);
	/* the TCP entry's slot is released when its entry goes */
	assert_int_equal(nftdp_ct_flush(en->s), 3);
	for (int i = 0; i < CT_POLICIES; i++)
		assert_int_equal(en->s->pol[i].refs, 0);
	/* more distinct policies than slots: the rest keep the defaults */
	{
		struct nftdp_vm_ct_timeout pols[CT_POLICIES + 1];
		struct nftdp_ct_entry *last = NULL;

		for (int i = 0; i <= CT_POLICIES; i++) {
			memset(&pols[i], 0, sizeof(pols[i]));
			pols[i].id = 1000000 + (uint64_t)i;
			pols[i].l4proto = IPPROTO_UDP;
			pols[i].given = 3;
			pols[i].val[0] = 5;
			pols[i].val[1] = 50;
			udp(&t, false, "10.0.0.1", "10.0.0.3", (uint16_t)(100 + i), 53, 0);
			nftdp_ct_in(en->s, &t.pkt, en->now);
			nftdp_ct_vm_ops.timeout(t.pkt.ct, &pols[i]);
			last = pkt_entry(&t);
			nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
		}
		assert_int_equal(en->s->policy_full, 1);
		assert_int_equal(last->tmo_slot, 0);
		assert_int_equal(left_s(en, last), 30);
		/* a confirmed entry keeps its policy */
		udp(&t, false, "10.0.0.1", "10.0.0.3", 100, 53, 0);
		nftdp_ct_in(en->s, &t.pkt, en->now);
		e = pkt_entry(&t);
		nftdp_ct_vm_ops.timeout(t.pkt.ct, &pols[5]);
		assert_int_equal(e->tmo_slot, 1);
		/* the packet path finds the policy from the slot */
		assert_ptr_equal(nftdp_ct_policy(en->s, e), e->tmo);
		nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	}
	nftdp_vm_chain_destroy(f);
	nftdp_vm_obj_destroy((struct nftdp_vm_obj *)r.obj[1]);
	nftdp_vm_state_destroy(v.st);
	env_free(en);
}

static struct nftnl_expr *connlimit(uint32_t count, bool over)
{
	struct nftnl_expr *e = ex("connlimit");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_COUNT, count);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS, over ? NFT_CONNLIMIT_F_INV : 0);
	return e;
}

static void test_connlimit(void **state)
{
	struct env *en = env_new(64, false);
	struct vm_env v;
	struct nftdp_vm_chain *f, *g;
	struct nftdp_ct_entry *e1, *e;
	struct tpkt t;
	unsigned int n;

	(void)state;
	vm_env_init(&v, en->now);
	/* ct count over 2 drop */
	f = vm_chain(&v, "f", NF_INET_FORWARD, NF_ACCEPT);
	add_rule(f, v.st, 1, connlimit(2, true), verdict(NF_DROP, NULL), NULL);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &e1), ST_NEW);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 2, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_NEW);
	/* the third is over: dropped, and leaves no entry */
	n = en->s->st.count;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 3, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), 0);
	assert_int_equal(en->s->st.count, n);
	/* so is its retransmission, and a fourth (the dead third is gc'd) */
	en->now += 1;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 3, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), 0);
	en->now += 1;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 4, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), 0);
	/* packets of counted connections pass: count 2 is not over 2 (once
	 * the dead fourth is gc'd: at most once per clock tick) */
	en->now += 1;
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 1, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_ESTABLISHED);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 2, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_NEW);
	/* one goes: a new one fits again */
	assert_int_equal(nftdp_ct_delete(en->s, &e1->tuple[0], 0), 0);
	en->now += 1;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 5, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_NEW);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 6, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), 0);
	/* TCP in TIME_WAIT / CLOSE no longer counts (already_closed) */
	{
		struct tflow fl = {false, "10.0.0.1", "10.0.0.2", 999, 80, 1, 100};

		assert_int_equal(nftdp_ct_flush(en->s), 2);
		en->now += 1;
		seg(&t, &fl, 0, TS, fl.aseq, 0, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, f, &e), ST_NEW);
		fl.aseq++;
		seg(&t, &fl, 1, TS | TA, fl.bseq, fl.aseq, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, NULL, NULL), ST_ESTABLISHED);
		fl.bseq++;
		seg(&t, &fl, 0, TA, fl.aseq, fl.bseq, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, NULL, NULL), ST_ESTABLISHED);
		udp(&t, false, "10.0.0.1", "10.0.0.2", 7, 53, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_NEW);
		udp(&t, false, "10.0.0.1", "10.0.0.2", 8, 53, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), 0);
		/* RST: CLOSE; the entry stays 10 s but no longer counts */
		seg(&t, &fl, 0, TR | TA, fl.aseq, fl.bseq, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, NULL, NULL), ST_ESTABLISHED);
		assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_CLOSE);
		assert_true(e->in_use);
		en->now += 1;
		udp(&t, false, "10.0.0.1", "10.0.0.2", 8, 53, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_NEW);
	}
	/* ct count 1 accept (policy drop): only one connection at a time;
	 * untracked packets count themselves */
	g = vm_chain(&v, "g", NF_INET_FORWARD, NF_DROP);
	add_rule(g, v.st, 1, connlimit(1, false), verdict(NF_ACCEPT, NULL), NULL);
	nftdp_ct_flush(en->s);
	udp(&t, false, "10.0.1.1", "10.0.1.2", 1, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, g, NULL), ST_NEW);
	udp(&t, false, "10.0.1.1", "10.0.1.2", 2, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, g, NULL), 0);
	en->now += 1;
	udp(&t, false, "10.0.1.1", "10.0.1.2", 1, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, g, NULL), ST_NEW);
	udp(&t, false, "10.0.1.1", "10.0.1.2", 3, 53, 0);
	t.pkt.ct_untracked = true;
	assert_int_equal(zxmit(en, &v, &t, NULL, g, NULL), 0);
	/* per worker: worker 1 has its own list */
	v.ctx.worker = 1;
	udp(&t, false, "10.0.1.1", "10.0.1.2", 4, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, g, NULL), ST_NEW);
	v.ctx.worker = 0;
	nftdp_vm_chain_destroy(f);
	nftdp_vm_chain_destroy(g);
	nftdp_vm_state_destroy(v.st);
	env_free(en);
}

/* A one-element stand-in set whose element carries `ct count`: the area
 * the element's data holds (nftdp_vm_elem_expr_init's layout). */
static alignas(8) uint8_t meter_area[NFTDP_VM_ELEM_EXPR_SIZE];

static bool meter_lookup(const struct nftdp_set *s, const void *key, const void **data,
			 uint64_t now_ms)
{
	(void)s;
	(void)key;
	(void)now_ms;
	*data = meter_area;
	return true;
}

static const struct nftdp_vm_set_ops meter_ops = {.lookup = meter_lookup};

static int meter_res_set(void *opaque, const char *table, const char *name, uint32_t set_id,
			 struct nftdp_vm_set_info *out)
{
	(void)opaque;
	(void)table;
	(void)name;
	(void)set_id;
	memset(out, 0, sizeof(*out));
	out->set = (struct nftdp_set *)(uintptr_t)meter_area; /* any non-NULL handle */
	out->ops = &meter_ops;
	out->klen = 4;
	out->elem_expr_at = 1;
	out->elem_uses_ct = true;
	return 0;
}

/* `ip saddr @m drop`, m's element `ct count over 2` (nft_connlimit as a
 * set element expression): one list for every worker, each shard's
 * connections judged by the worker that meets the element next */
static void test_connlimit_elem(void **state)
{
	struct env *en = env_new(64, false), *en2 = env_new(64, false);
	struct nftdp_vm_resolver res = {.set = meter_res_set};
	struct nftdp_vm_elem_expr ce = {
	    .type = NFTDP_VM_ELEM_EXPR_CONNLIMIT, .count = 2, .flags = NFT_CONNLIMIT_F_INV};
	struct nftdp_vm_elem_expr out[NFTDP_VM_ELEM_EXPR_MAX];
	struct nftdp_vm_chain *f;
	struct nftnl_expr *lk;
	struct nftdp_ct_entry *e1;
	struct vm_env v;
	struct tpkt t;

	(void)state;
	assert_int_equal(nftdp_vm_elem_expr_init(meter_area, &ce, 1), 0);
	assert_true(nftdp_vm_elem_expr_uses_ct(meter_area));
	assert_int_equal(nftdp_vm_elem_expr_read(meter_area, out), 1);
	assert_int_equal(out[0].type, NFTDP_VM_ELEM_EXPR_CONNLIMIT);
	assert_int_equal(out[0].count, 2);
	assert_int_equal(out[0].flags, NFT_CONNLIMIT_F_INV);
	vm_env_init(&v, en->now);
	en2->now = en->now;
	f = vm_chain(&v, "f", NF_INET_FORWARD, NF_ACCEPT);
	lk = ex("lookup");
	nftnl_expr_set_u32(lk, NFTNL_EXPR_LOOKUP_SREG, NFT_REG32_00);
	nftnl_expr_set_str(lk, NFTNL_EXPR_LOOKUP_SET, "m");
	add_rule_res(f, v.st, &res, 1, imm32(NFT_REG32_00, 1), lk, verdict(NF_DROP, NULL), NULL);
	assert_true(nftdp_vm_chain_uses_ct(f));
	/* two connections on worker 0's shard, the third on worker 1's:
	 * over 2, dropped */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, &e1), ST_NEW);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 2, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_NEW);
	v.ctx.worker = 1;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 3, 53, 0);
	assert_int_equal(zxmit(en2, &v, &t, NULL, f, NULL), 0);
	/* counted ones pass, from either worker */
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 1, 0);
	v.ctx.worker = 0;
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_ESTABLISHED);
	/* the first goes (worker 0's shard): worker 1 sees it gone, and
	 * its own new connection fits */
	assert_int_equal(nftdp_ct_delete(en->s, &e1->tuple[0], 0), 0);
	en2->now += 1;
	v.ctx.worker = 1;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 4, 53, 0);
	assert_int_equal(zxmit(en2, &v, &t, NULL, f, NULL), ST_NEW);
	/* then the list is full again: a fifth on worker 0 is over */
	v.ctx.worker = 0;
	en->now += 1;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 5, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), 0);
	/* N + 1 keys in the element up to NFTDP_VM_ELEM_CONNLIMIT_MAX (with a
	 * counter beside it, _MAX2); above, a list of the set's, which an
	 * unbound element lacks: it breaks (the kernel's failed allocation) */
	ce.count = NFTDP_VM_ELEM_CONNLIMIT_MAX + 1;
	assert_int_equal(nftdp_vm_elem_expr_init(meter_area, &ce, 1), 0);
	assert_int_equal(nftdp_vm_elem_expr_read(meter_area, out), 1);
	assert_int_equal(out[0].count, NFTDP_VM_ELEM_CONNLIMIT_MAX + 1);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 6, 53, 0);
	assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_NEW);
	{
		struct nftdp_vm_elem_expr two[2] = {{.type = NFTDP_VM_ELEM_EXPR_COUNTER}, ce};

		two[1].count = NFTDP_VM_ELEM_CONNLIMIT_MAX2;
		assert_int_equal(nftdp_vm_elem_expr_init(meter_area, two, 2), 0);
		assert_int_equal(nftdp_vm_elem_expr_read(meter_area, out), 2);
		assert_int_equal(out[1].count, NFTDP_VM_ELEM_CONNLIMIT_MAX2);
		two[1].count++;
		assert_int_equal(nftdp_vm_elem_expr_init(meter_area, two, 2), 0);
		assert_int_equal(nftdp_vm_elem_expr_read(meter_area, out), 2);
		assert_int_equal(out[1].count, NFTDP_VM_ELEM_CONNLIMIT_MAX2 + 1);
		assert_int_equal(nftdp_vm_elem_expr_bind(meter_area, NULL, 0), -EOPNOTSUPP);
		two[1].flags = 2;
		two[1].count = 1;
		assert_int_equal(nftdp_vm_elem_expr_init(meter_area, two, 2), -EOPNOTSUPP);
	}
	nftdp_vm_chain_destroy(f);
	nftdp_vm_state_destroy(v.st);
	env_free(en2);
	env_free(en);
}

/* `ct count over 20` per element, its list in a block of the set's store:
 * two workers (two shards) fill it, the 21st connection is over, a gone
 * one makes room; then a count above the most keys a list keeps */
static void test_connlimit_elem_block(void **state)
{
	struct env *en = env_new(256, false), *en2 = env_new(256, false);
	struct nftdp_vm_resolver res = {.set = meter_res_set};
	struct nftdp_vm_elem_expr ce = {
	    .type = NFTDP_VM_ELEM_EXPR_CONNLIMIT, .count = 20, .flags = NFT_CONNLIMIT_F_INV};
	struct nftdp_vm_elem_expr two[2] = {{.type = NFTDP_VM_ELEM_EXPR_COUNTER}, ce};
	struct nftdp_vm_elem_expr out[NFTDP_VM_ELEM_EXPR_MAX];
	struct nftdp_set_desc d = {
	    .key_size = 4, .data_size = NFTDP_VM_ELEM_EXPR_SIZE, .max_elems = 4};
	struct nftdp_ct_entry *first = NULL, *e;
	struct nftdp_vm_chain *f;
	struct nftdp_set *set;
	struct nftnl_expr *lk;
	struct vm_env v;
	struct tpkt t;

	(void)state;
	assert_int_equal(nftdp_set_create(&d, &set), 0);
	vm_env_init(&v, en->now);
	en2->now = en->now;
	f = vm_chain(&v, "f", NF_INET_FORWARD, NF_ACCEPT);
	lk = ex("lookup");
	nftnl_expr_set_u32(lk, NFTNL_EXPR_LOOKUP_SREG, NFT_REG32_00);
	nftnl_expr_set_str(lk, NFTNL_EXPR_LOOKUP_SET, "m");
	add_rule_res(f, v.st, &res, 1, imm32(NFT_REG32_00, 1), lk, verdict(NF_DROP, NULL), NULL);
	for (int round = 0; round < 2; round++) {
		/* alone, then beside a counter */
		if (round == 0)
			assert_int_equal(nftdp_vm_elem_expr_init(meter_area, &ce, 1), 0);
		else
			assert_int_equal(nftdp_vm_elem_expr_init(meter_area, two, 2), 0);
		assert_int_equal(nftdp_vm_elem_expr_bind(meter_area, set, 0), 0);
		assert_int_equal(nftdp_vm_elem_expr_read(meter_area, out), 1u + (unsigned)round);
		assert_int_equal(out[round].count, 20);
		assert_int_equal(out[round].flags, NFT_CONNLIMIT_F_INV);
		/* 20 connections, every other one on worker 1's shard */
		for (uint16_t i = 0; i < 20; i++) {
			struct env *x = i % 2 ? en2 : en;

			v.ctx.worker = i % 2;
			udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(100 * round + i + 1), 53,
			    0);
			assert_int_equal(zxmit(x, &v, &t, NULL, f, &e), ST_NEW);
			if (i == 0)
				first = e;
		}
		/* the 21st, on either worker: over 20 */
		udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(100 * round + 50), 53, 0);
		assert_int_equal(zxmit(en2, &v, &t, NULL, f, NULL), 0);
		v.ctx.worker = 0;
		udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(100 * round + 51), 53, 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), 0);
		/* the counted ones pass */
		udp(&t, false, "10.0.0.2", "10.0.0.1", 53, (uint16_t)(100 * round + 3), 0);
		assert_int_equal(zxmit(en, &v, &t, NULL, f, NULL), ST_ESTABLISHED);
		/* one goes: room for exactly one more, seen from worker 1 */
		assert_int_equal(nftdp_ct_delete(en->s, &first->tuple[0], 0), 0);
		en->now += 1;
		en2->now = en->now;
		v.ctx.worker = 1;
		udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(100 * round + 52), 53, 0);
		assert_int_equal(zxmit(en2, &v, &t, NULL, f, NULL), ST_NEW);
		udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(100 * round + 53), 53, 0);
		assert_int_equal(zxmit(en2, &v, &t, NULL, f, NULL), 0);
		/* the element goes: its block back to the store, zeroed */
		nftdp_vm_elem_expr_release(meter_area);
		nftdp_vm_elem_expr_release(meter_area); /* once only */
		en->now += 1;
		en2->now = en->now;
	}
	/* a count above the most keys a list keeps: the list saturates at
	 * NFTDP_VM_ELEM_CONNLIMIT_KEYS, so nothing here is over */
	ce.count = 100000;
	ce.flags = NFT_CONNLIMIT_F_INV;
	assert_int_equal(nftdp_vm_elem_expr_init(meter_area, &ce, 1), 0);
	assert_int_equal(nftdp_vm_elem_expr_bind(meter_area, set, 0), 0);
	assert_int_equal(nftdp_vm_elem_expr_read(meter_area, out), 1);
	assert_int_equal(out[0].count, 100000);
	for (uint16_t i = 0; i < 40; i++) {
		udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(1000 + i), 53, 0);
		v.ctx.worker = i % 2;
		assert_int_equal(zxmit(i % 2 ? en2 : en, &v, &t, NULL, f, NULL), ST_NEW);
	}
	nftdp_vm_elem_expr_release(meter_area);
	nftdp_set_destroy(set); /* frees the store */
	nftdp_vm_chain_destroy(f);
	nftdp_vm_state_destroy(v.st);
	env_free(en2);
	env_free(en);
}

static void test_connlimit_compile(void **state)
{
	struct vm_env v;
	struct nftdp_vm_chain *c;
	struct nftnl_rule *r;
	struct nftnl_expr *e;
	struct nftdp_vm_error err;

	(void)state;
	vm_env_init(&v, 1000);
	c = vm_chain(&v, "c", NF_INET_FORWARD, NF_ACCEPT);
	r = nftnl_rule_alloc();
	nftnl_rule_add_expr(r, ex("connlimit")); /* no count: EINVAL */
	assert_int_equal(nftdp_vm_chain_add_rule(c, r, NULL, v.st, &err), -EINVAL);
	nftnl_rule_free(r);
	r = nftnl_rule_alloc();
	e = connlimit(3, false);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS, 2);
	nftnl_rule_add_expr(r, e);
	assert_int_equal(nftdp_vm_chain_add_rule(c, r, NULL, v.st, &err), -EOPNOTSUPP);
	nftnl_rule_free(r);
	/* ct helper objects: every helper of the kernel's compiles for the
	 * protocols it has, unknown ones are -ENOENT; ct expectation objects compile, tunnel ones
	 * are refused */
	{
		struct nftnl_obj *o = nftnl_obj_alloc();
		struct nftdp_vm_obj *vo;

		nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
		nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "h");
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_HELPER);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -EINVAL); /* no name */
		/* sane (TCP) compiles, as the kernel's every helper; sane/udp
		 * the kernel lacks */
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "sane");
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_TCP);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_UDP);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT);
		/* RAS (UDP), H.245 (UDP, as the kernel registers it) and Q.931
		 * (TCP) compile; names are case-sensitive */
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_UDP);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "H.245");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "RAS");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "ras");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "Q.931");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT); /* Q.931/udp */
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_TCP);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_UDP);
		/* snmp_trap (nf_nat_snmp_basic) compiles */
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "snmp_trap");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		/* sip compiles, for UDP and TCP */
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "sip");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "ftp");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT); /* ftp/udp */
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "nope");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "tftp");
		nftnl_obj_set_u16(o, NFTNL_OBJ_CT_HELPER_L3PROTO, NFPROTO_IPV6);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		/* amanda serves both families; netbios-ns, snmp and irc only
		 * IPv4 (ENOENT for ip6, as the kernel's lookup); pptp only
		 * over TCP */
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "amanda");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "netbios-ns");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT);
		nftnl_obj_set_u16(o, NFTNL_OBJ_CT_HELPER_L3PROTO, NFPROTO_INET);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "snmp");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "pptp");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT);
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_TCP);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "irc");
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_set_u16(o, NFTNL_OBJ_CT_HELPER_L3PROTO, NFPROTO_IPV6);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -ENOENT);
		assert_int_equal(nftdp_vm_ct_helper_families("irc", IPPROTO_TCP), 1);
		assert_int_equal(nftdp_vm_ct_helper_families("amanda", IPPROTO_UDP), 3);
		assert_int_equal(nftdp_vm_ct_helper_families("sip", IPPROTO_TCP), 3);
		assert_int_equal(nftdp_vm_ct_helper_families("irc", IPPROTO_UDP), 0);
		nftnl_obj_set_str(o, NFTNL_OBJ_CT_HELPER_NAME, "ftp");
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO, IPPROTO_TCP);
		nftnl_obj_set_u16(o, NFTNL_OBJ_CT_HELPER_L3PROTO, NFPROTO_INET);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_free(o); /* a fresh one: the types' attributes overlap */
		o = nftnl_obj_alloc();
		nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
		nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "h");
		/* ct expectation: protocol, port, timeout and size needed */
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_EXPECT);
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_EXPECT_L4PROTO, IPPROTO_UDP);
		nftnl_obj_set_u16(o, NFTNL_OBJ_CT_EXPECT_DPORT, 5004);
		nftnl_obj_set_u32(o, NFTNL_OBJ_CT_EXPECT_TIMEOUT, 60);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -EINVAL); /* no size */
		nftnl_obj_set_u8(o, NFTNL_OBJ_CT_EXPECT_SIZE, 3);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), 0);
		nftdp_vm_obj_destroy(vo);
		nftnl_obj_free(o);
		o = nftnl_obj_alloc();
		nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
		nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "h");
		/* a tunnel object is refused by name */
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_TUNNEL);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -EOPNOTSUPP);
		assert_non_null(strstr(err.msg, "tunnel"));
		/* a ct timeout object without a protocol is invalid */
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_TIMEOUT);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -EINVAL);
		nftnl_obj_free(o);
		r = nftnl_rule_alloc();
		nftnl_rule_add_expr(r, objref(NFT_OBJECT_TUNNEL, "h"));
		assert_int_equal(nftdp_vm_chain_add_rule(c, r, NULL, v.st, &err), -EOPNOTSUPP);
		assert_non_null(strstr(err.msg, "tunnel"));
		nftnl_rule_free(r);
	}
	nftdp_vm_chain_destroy(c);
	nftdp_vm_state_destroy(v.st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vm_ct_rules),	   cmocka_unit_test(test_vm_nat_rules),
	    cmocka_unit_test(test_zones),	   cmocka_unit_test(test_timeout_policy),
	    cmocka_unit_test(test_connlimit),	   cmocka_unit_test(test_connlimit_compile),
	    cmocka_unit_test(test_connlimit_elem), cmocka_unit_test(test_connlimit_elem_block),
	    cmocka_unit_test(test_helper_objref),  cmocka_unit_test(test_vm_redirect),
	    cmocka_unit_test(test_vm_nat_netmap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
