// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): GRE version 1 keys and the pptp helper
 * (issue 14). The GRE tuple (version 0 without keys, version 1's call id
 * as the destination key, non-PPP version 1 untrackable, short headers),
 * PPTP control message parsing (truncated, bad magic or type, bodies
 * shorter than their type's, in exactly-sized buffers), an outgoing and an
 * incoming call whose GRE packets are related and then established with
 * the negotiated keys while other call ids are new connections of their
 * own, an ICMP error quoting the call's GRE, the keymaps, the
 * expectations made and removed (the sibling one
 * when the GRE connection starts, Call-Disconnect-Notify, the control
 * connection's death), a call whose GRE goes to another shard, and
 * ctnetlink naming the helper (a master, its expectations), and a call
 * through source NAT (nf_nat_pptp: the call ids rewritten in the control
 * messages, the GRE keys translated, a short GRE header dropped).
 * Shared fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

static const struct nftdp_vm_ct_helper pptp_h = {NFTDP_VM_CT_HELPER_PPTP, IPPROTO_TCP, true, false};

#define PNS "10.0.0.2"
#define PAC "192.0.2.10"

/* a GRE packet: version 1 (PPP, call id) or version 0 (flags 0) */
static void gre(struct tpkt *t, const char *s, const char *d, int version, uint16_t proto,
		uint16_t call_id, uint32_t len)
{
	uint8_t h[16] = {0};

	h[0] = version == 1 ? 0x20 : 0; /* key present (RFC 2637) */
	h[1] = (uint8_t)version;
	h[2] = (uint8_t)(proto >> 8);
	h[3] = (uint8_t)proto;
	h[4] = 0;
	h[5] = 4; /* payload length */
	h[6] = (uint8_t)(call_id >> 8);
	h[7] = (uint8_t)call_id;
	assert_true(len <= sizeof(h));
	build(t, false, s, d, IPPROTO_GRE, h, len);
	/* build() put a checksum at bytes 2-3; GRE has none there */
	memcpy(t->buf + 20, h, len);
}

static uint32_t gre_x(struct env *en, const char *s, const char *d, uint16_t call_id,
		      struct nftdp_ct_entry **e)
{
	struct tpkt t;

	gre(&t, s, d, 1, 0x880b, call_id, 16);
	return xmit(en, &t, e);
}

/* a PPTP control message: 12-byte header and body of size n */
static uint32_t ctl_msg(uint8_t *out, uint16_t type, const uint8_t *body, uint32_t n)
{
	memset(out, 0, 12);
	out[0] = (uint8_t)((12 + n) >> 8);
	out[1] = (uint8_t)(12 + n);
	out[3] = 1; /* control */
	put32(out + 4, 0x1a2b3c4d);
	out[8] = (uint8_t)(type >> 8);
	out[9] = (uint8_t)type;
	if (n)
		memcpy(out + 12, body, n);
	return 12 + n;
}

/* parse a copy in a buffer of exactly its size (ASan sees an over-read) */
static int parse(const uint8_t *d, uint32_t n, uint16_t *msg, uint32_t *reqlen)
{
	uint8_t *buf = malloc(n ? n : 1);
	const uint8_t *req;
	int rc;

	assert_non_null(buf);
	memcpy(buf, d, n);
	rc = nftdp_ct_pptp_parse(buf, n, msg, &req, reqlen);
	if (rc)
		assert_ptr_equal(req, buf + 12);
	free(buf);
	return rc;
}

static void test_parse(void **state)
{
	static const uint32_t sizes[16] = {0,  144, 144, 4,  4, 0,   0,	 156,
					   20, 208, 12,	 16, 4, 136, 28, 12};
	uint8_t m[300], body[256] = {0};
	uint16_t msg;
	uint32_t n, reqlen;

	(void)state;
	/* every type at its size: parsed; one byte less: not (wrong length) */
	for (uint16_t ty = 1; ty <= 15; ty++) {
		n = ctl_msg(m, ty, body, sizes[ty]);
		assert_int_equal(parse(m, n, &msg, &reqlen), 1);
		assert_int_equal(msg, ty);
		assert_int_equal(reqlen, sizes[ty]);
		if (sizes[ty])
			assert_int_equal(parse(m, n - 1, &msg, &reqlen), 0);
	}
	/* the length field is not checked; a longer body is cut to 208 */
	n = ctl_msg(m, 7, body, 256);
	m[0] = m[1] = 0;
	assert_int_equal(parse(m, n, &msg, &reqlen), 1);
	assert_int_equal(reqlen, 208);
	/* unknown types have no minimum */
	n = ctl_msg(m, 99, body, 0);
	assert_int_equal(parse(m, n, &msg, &reqlen), 1);
	assert_int_equal(msg, 99);
	assert_int_equal(reqlen, 0);
	/* bad magic, a management message, truncated headers */
	n = ctl_msg(m, 1, body, 144);
	m[7] ^= 1;
	assert_int_equal(parse(m, n, &msg, &reqlen), 0);
	m[7] ^= 1;
	m[3] = 2;
	assert_int_equal(parse(m, n, &msg, &reqlen), 0);
	m[3] = 1;
	for (uint32_t k = 0; k < 12; k++)
		assert_int_equal(parse(m, k, &msg, &reqlen), 0);
}

static void test_gre_tuple(void **state)
{
	struct nftdp_ct_tuple tu;
	struct tpkt t;

	(void)state;
	/* version 0: no keys */
	gre(&t, PNS, PAC, 0, 0x0800, 0x1234, 16);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &tu));
	assert_int_equal(tu.l4proto, IPPROTO_GRE);
	assert_int_equal(tu.sport, 0);
	assert_int_equal(tu.dport, 0);
	/* version 1: the call id is the destination key */
	gre(&t, PNS, PAC, 1, 0x880b, 0x1234, 16);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &tu));
	assert_int_equal(tu.sport, 0);
	assert_int_equal(ntohs(tu.dport), 0x1234);
	/* version 1 carrying something else than PPP: not trackable */
	gre(&t, PNS, PAC, 1, 0x0800, 0x1234, 16);
	assert_false(nftdp_ct_pkt_tuple(&t.pkt, &tu));
	/* shorter than a version 1 header (8 bytes): no keys, trackable */
	gre(&t, PNS, PAC, 1, 0x0800, 0x1234, 7);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &tu));
	assert_int_equal(tu.dport, 0);
	gre(&t, PNS, PAC, 1, 0x880b, 0x1234, 8);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &tu));
	assert_int_equal(ntohs(tu.dport), 0x1234);
	/* the inverse swaps the keys */
	tu.sport = htons(7);
	{
		struct nftdp_ct_tuple r;

		assert_true(nftdp_ct_tuple_invert(&tu, &r));
		assert_int_equal(ntohs(r.sport), 0x1234);
		assert_int_equal(ntohs(r.dport), 7);
	}
}

/* a control message on the flow, sequence numbers advanced */
static void send_msg(struct env *en, struct tflow *f, int dir, uint16_t type, const uint8_t *body,
		     uint32_t n)
{
	uint32_t *mine = dir ? &f->bseq : &f->aseq, *theirs = dir ? &f->aseq : &f->bseq;
	uint8_t h[20 + 300];
	uint32_t len;
	struct tpkt t;

	len = ctl_msg(h + 20, type, body, n);
	tcp_hdr(h, dir ? f->bp : f->ap, dir ? f->ap : f->bp, *mine, *theirs, TA, 65535, 0);
	build(&t, false, dir ? f->b : f->a, dir ? f->a : f->b, IPPROTO_TCP, h, 20 + len);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	*mine += len;
}

static struct nftdp_ct_entry *open_pptp(struct env *en, struct tflow *f)
{
	struct nftdp_ct_entry *e = open_ctl(en, f, &pptp_h);

	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_PPTP);
	return e;
}

static void session(struct env *en, struct tflow *f)
{
	uint8_t b[208] = {0};

	send_msg(en, f, 0, 1, b, 144); /* Start-Control-Connection-Request */
	b[2] = 1;		       /* result: OK */
	send_msg(en, f, 1, 2, b, 144);
}

static void out_call(struct env *en, struct tflow *f, uint16_t pns, uint16_t pac, uint8_t result)
{
	uint8_t b[208] = {0};

	b[0] = (uint8_t)(pns >> 8);
	b[1] = (uint8_t)pns;
	send_msg(en, f, 0, 7, b, 156); /* Outgoing-Call-Request */
	memset(b, 0, sizeof(b));
	b[0] = (uint8_t)(pac >> 8);
	b[1] = (uint8_t)pac;
	b[2] = (uint8_t)(pns >> 8);
	b[3] = (uint8_t)pns;
	b[4] = result;
	send_msg(en, f, 1, 8, b, 20); /* Outgoing-Call-Reply */
}

static uint32_t km_live(const struct env *en)
{
	return atomic_load(&en->s->exp->km_live);
}

static void test_outgoing_call(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, PNS, PAC, 40000, 1723, 1000, 5000};
	struct nftdp_ct_entry *ctl, *g, *g2, *o;
	uint8_t b[208] = {0};

	(void)state;
	ctl = open_pptp(en, &f);
	/* a call before the session is confirmed: ignored */
	out_call(en, &f, 0x0100, 0x0200, 1);
	assert_int_equal(exp_live(en), 0);
	session(en, &f);
	/* the server refuses: no expectation */
	out_call(en, &f, 0x0100, 0x0200, 3);
	assert_int_equal(exp_live(en), 0);
	/* a reply naming another PNS call id: invalid, ignored */
	b[0] = 0x7;
	send_msg(en, &f, 0, 7, b, 156);
	memset(b, 0, sizeof(b));
	b[0] = 0x02;
	b[3] = 0x99;
	b[4] = 1;
	send_msg(en, &f, 1, 8, b, 20);
	assert_int_equal(exp_live(en), 0);
	/* a reply one byte short of its size: not read */
	memset(b, 0, sizeof(b));
	b[1] = 0x01;
	send_msg(en, &f, 0, 7, b, 156);
	b[0] = 0x02;
	b[1] = 0;
	b[3] = 0x01;
	b[4] = 1;
	send_msg(en, &f, 1, 8, b, 19);
	assert_int_equal(exp_live(en), 0);
	out_call(en, &f, 0x0100, 0x0200, 1);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(km_live(en), 2);
	assert_int_equal(en->s->help[ctl - en->s->entries].pptp.cstate, 3); /* OUT_CONF */
	/* the same reply again: the same expectations and keymaps */
	memset(b, 0, sizeof(b));
	b[0] = 0x02;
	b[3] = 0x01;
	b[4] = 1;
	send_msg(en, &f, 1, 8, b, 20);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(km_live(en), 2);
	/* GRE to the PAC carries the PAC's call id: related, keys both ways */
	assert_int_equal(gre_x(en, PNS, PAC, 0x0200, &g), ST_RELATED);
	assert_int_equal(ntohs(g->tuple[0].sport), 0x0100);
	assert_int_equal(ntohs(g->tuple[0].dport), 0x0200);
	assert_int_equal(ntohs(g->tuple[1].sport), 0x0200);
	assert_int_equal(ntohs(g->tuple[1].dport), 0x0100);
	assert_true(g->status & IPS_EXPECTED);
	/* the other direction's expectation went with it (pptp_expectfn) */
	assert_int_equal(exp_live(en), 0);
	/* the PAC's GRE with the PNS's call id is the reply */
	assert_int_equal(gre_x(en, PAC, PNS, 0x0100, &g2), ST_ESTABLISHED);
	assert_ptr_equal(g, g2);
	assert_true(g->status & IPS_SEEN_REPLY);
	assert_int_equal(gre_x(en, PNS, PAC, 0x0200, &g2), ST_ESTABLISHED);
	assert_ptr_equal(g, g2);
	assert_true(g->status & IPS_ASSURED);
	assert_int_equal(left_s(en, g), 180); /* the kernel's GRE_CT_REPLIED */
	/* an ICMP error quoting the PNS's GRE (its 8-byte header): the
	 * quoted tuple takes the keymap's source key too, so it is related */
	{
		struct tpkt q, e;
		unsigned int ctinfo;

		gre(&q, PNS, PAC, 1, 0x880b, 0x0200, 16);
		icmp(&e, false, PAC, PNS, 3, 1, 0, q.buf, 28);
		assert_int_equal(xmit_v(en, &e, NF_ACCEPT, &g2, &ctinfo), ST_RELATED);
		assert_ptr_equal(g, g2);
		assert_int_equal(ctinfo, IP_CT_RELATED_REPLY);
	}
	/* other call ids: connections of their own, not related */
	assert_int_equal(gre_x(en, PNS, PAC, 0x0201, &o), ST_NEW);
	assert_ptr_not_equal(o, g);
	assert_int_equal(o->tuple[0].sport, 0);
	assert_int_equal(gre_x(en, PAC, PNS, 0x0101, &o), ST_NEW);
	/* Call-Clear-Request, then Call-Disconnect-Notify: the GRE
	 * connection and the keymaps go */
	b[0] = 0x01;
	send_msg(en, &f, 0, 12, b, 4);
	assert_true(g->in_use && !(g->status & IPS_DYING));
	memset(b, 0, sizeof(b));
	b[0] = 0x02;
	send_msg(en, &f, 1, 13, b, 136);
	assert_int_equal(km_live(en), 0);
	assert_true(!g->in_use || (g->status & IPS_DYING));
	/* now the call's GRE is a new connection without a source key */
	assert_int_equal(gre_x(en, PNS, PAC, 0x0200, &o), ST_NEW);
	assert_int_equal(o->tuple[0].sport, 0);
	env_free(en);
}

static void test_incoming_call_and_master_gone(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, PNS, PAC, 40001, 1723, 1000, 5000};
	struct nftdp_ct_entry *ctl, *g;
	uint8_t b[208] = {0};

	(void)state;
	ctl = open_pptp(en, &f);
	session(en, &f);
	/* Incoming-Call-Request (PAC's id), -Reply (PNS's id, accept),
	 * -Connected (names the PNS's id) */
	b[0] = 0x03;
	send_msg(en, &f, 1, 9, b, 208);
	memset(b, 0, sizeof(b));
	b[0] = 0x04;
	b[2] = 0x03;
	b[4] = 1;
	send_msg(en, &f, 0, 10, b, 12);
	assert_int_equal(exp_live(en), 0);
	/* Set-Link-Info and WAN-Error-Notify change nothing */
	memset(b, 0, sizeof(b));
	send_msg(en, &f, 0, 15, b, 12);
	send_msg(en, &f, 1, 14, b, 28);
	b[0] = 0x04;
	send_msg(en, &f, 1, 11, b, 16);
	assert_int_equal(exp_live(en), 2);
	/* the PAC sends first this time */
	assert_int_equal(gre_x(en, PAC, PNS, 0x0400, &g), ST_RELATED);
	assert_int_equal(ntohs(g->tuple[0].sport), 0x0300);
	assert_int_equal(exp_live(en), 0);
	assert_int_equal(km_live(en), 2);
	/* the GRE connection's end frees the keymaps */
	nftdp_ct_kill(en->s, g);
	assert_int_equal(km_live(en), 0);
	/* a second call: expectations; the control connection's end
	 * removes them (pptp_destroy_siblings, then its own) */
	b[0] = 0x05;
	send_msg(en, &f, 1, 9, b, 208);
	memset(b, 0, sizeof(b));
	b[0] = 0x06;
	b[2] = 0x05;
	b[4] = 1;
	send_msg(en, &f, 0, 10, b, 12);
	memset(b, 0, sizeof(b));
	b[0] = 0x06;
	send_msg(en, &f, 1, 11, b, 16);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(km_live(en), 2);
	nftdp_ct_kill(en->s, ctl);
	assert_int_equal(exp_live(en), 0);
	assert_int_equal(km_live(en), 0);
	env_free(en);
}

/* the control connection on shard a, its GRE on shard b */
static void test_keymap_across_shards(void **state)
{
	struct nftdp_ct_expect_table *tab;
	struct env a = {0}, b = {0};
	struct tflow f = {false, PNS, PAC, 40002, 1723, 1000, 5000};
	struct nftdp_ct_entry *g, *g2;

	(void)state;
	tab = two_shards(&a, &b);
	open_pptp(&a, &f);
	session(&a, &f);
	out_call(&a, &f, 0x0a00, 0x0b00, 1);
	assert_int_equal(atomic_load(&tab->n_live), 2);
	assert_int_equal(gre_x(&b, PNS, PAC, 0x0b00, &g), ST_RELATED);
	assert_int_equal(ntohs(g->tuple[0].sport), 0x0a00);
	assert_int_equal(atomic_load(&tab->n_live), 0);
	assert_int_equal(gre_x(&b, PAC, PNS, 0x0a00, &g2), ST_ESTABLISHED);
	assert_ptr_equal(g, g2);
	/* the GRE connection dies on b: a's keymaps go */
	assert_int_equal(atomic_load(&tab->km_live), 2);
	nftdp_ct_kill(b.s, g);
	assert_int_equal(atomic_load(&tab->km_live), 0);
	two_shards_free(&a, &b, tab);
}

/* ctnetlink (conntrackd): a master created with helper "pptp" (IPv4 TCP
 * only, as __nf_conntrack_helper_find), and its GRE expectations
 * created by name under pptp's policy (max_expected 2) */
static void test_ctnetlink_by_name(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_change c;
	struct nftdp_ct_expect_new n;
	struct nftdp_ct_info ci;

	(void)state;
	memset(&c, 0, sizeof(c));
	tuple4(&c.tuple[0], IPPROTO_TCP, PNS, 40003, PAC, 1723);
	tuple4(&c.tuple[1], IPPROTO_TCP, PAC, 1723, PNS, 40003);
	c.has = NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_CREATE |
		NFTDP_CT_CHG_TIMEOUT | NFTDP_CT_CHG_STATUS | NFTDP_CT_CHG_HELPER;
	c.timeout_s = 100;
	c.status = IPS_CONFIRMED;
	c.zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
	strcpy(c.helper, "pptp");
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, &ci), 0);
	assert_string_equal(ci.helper, "pptp");
	/* pptp has no UDP helper, and no IPv6 one */
	{
		struct nftdp_ct_change u = c;

		tuple4(&u.tuple[0], IPPROTO_UDP, PNS, 40004, PAC, 1723);
		tuple4(&u.tuple[1], IPPROTO_UDP, PAC, 1723, PNS, 40004);
		assert_int_equal(nftdp_ct_create(en->s, &u, en->now, NULL), -EOPNOTSUPP);
		u = c;
		u.tuple[0].l3proto = u.tuple[1].l3proto = NFPROTO_IPV6;
		assert_int_equal(nftdp_ct_create(en->s, &u, en->now, NULL), -EOPNOTSUPP);
	}
	memset(&n, 0, sizeof(n));
	n.master = c.tuple[0];
	strcpy(n.helper, "pptp");
	for (uint16_t i = 0; i < 3; i++) {
		tuple4(&n.tuple, IPPROTO_GRE, PNS, 0x0100, PAC, (uint16_t)(0x0200 + i));
		n.mask = n.tuple;
		memset(&n.mask.src, 0xff, 4);
		memset(&n.mask.dst, 0xff, 4);
		n.mask.sport = n.mask.dport = 0xffff;
		assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	}
	assert_int_equal(exp_live(en), 2); /* the third evicted the oldest */
	/* a name the master's protocol has no helper for */
	strcpy(n.helper, "tftp");
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -EOPNOTSUPP);
	env_free(en);
}

/* nf_nat_pptp: a control message through the NAT path (the PAC's sent to
 * the NAT address and port); the packet as it leaves in *t */
#define NATIP "198.51.100.1"
static void nat_msg(struct env *en, struct tflow *f, int dir, uint16_t type, const uint8_t *body,
		    uint32_t n, struct tpkt *t)
{
	struct nftdp_ct_nat_range snat = nat_to(NATIP, 0);
	uint32_t *mine = dir ? &f->bseq : &f->aseq, *theirs = dir ? &f->aseq : &f->bseq;
	uint8_t h[20 + 300];
	uint32_t len;

	len = ctl_msg(h + 20, type, body, n);
	tcp_hdr(h, dir ? f->bp : f->ap, dir ? f->ap : f->bp, *mine, *theirs, TA, 65535, 0);
	build(t, false, dir ? f->b : f->a, dir ? NATIP : f->b, IPPROTO_TCP, h, 20 + len);
	assert_int_equal(nat_path(en, t, NULL, &snat, NULL), ST_ESTABLISHED);
	assert_csums(t);
	*mine += len;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t nat_gre(struct env *en, const char *s, const char *d, uint16_t call_id,
			struct tpkt *t, struct nftdp_ct_entry **e)
{
	struct nftdp_ct_nat_range snat = nat_to(NATIP, 0);

	gre(t, s, d, 1, 0x880b, call_id, 16);
	return nat_path(en, t, NULL, &snat, e);
}

static void test_nat_outgoing_call(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to(NATIP, 0);
	struct tflow f = {false, PNS, PAC, 40000, 1723, 1000, 5000};
	struct nftdp_ct_entry *ctl, *g, *g2;
	const uint16_t nat_id = 40000; /* the control connection's source port */
	uint8_t b[208] = {0};
	struct tpkt t;

	(void)state;
	/* the handshake, the PNS masqueraded to NATIP (its port kept) */
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	nftdp_ct_vm_ops.helper(t.pkt.ct, &pptp_h);
	ctl = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, &snat, NFTDP_CT_MANIP_SRC), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_true(ctl->status & IPS_SRC_NAT);
	f.aseq++;
	{
		uint8_t h[20];

		tcp_hdr(h, f.bp, f.ap, f.bseq, f.aseq, TS | TA, 65535, 0);
		build(&t, false, PAC, NATIP, IPPROTO_TCP, h, 20);
		assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
		f.bseq++;
	}
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	nat_msg(en, &f, 0, 1, b, 144, &t);
	b[2] = 1;
	nat_msg(en, &f, 1, 2, b, 144, &t);
	/* Outgoing-Call-Request: the call id becomes the NAT port */
	memset(b, 0, sizeof(b));
	b[0] = 0x01;
	nat_msg(en, &f, 0, 7, b, 156, &t);
	assert_ip4(t.buf + 12, NATIP);
	assert_int_equal(be16(t.buf + 40 + 12), nat_id);
	assert_int_equal(ntohs(en->s->help[ctl - en->s->entries].pptp.pns_call_id), nat_id);
	/* a reply one byte short of its size: not read, not rewritten */
	memset(b, 0, sizeof(b));
	b[0] = 0x02;
	b[2] = (uint8_t)(nat_id >> 8);
	b[3] = (uint8_t)nat_id;
	b[4] = 1;
	nat_msg(en, &f, 1, 8, b, 19, &t);
	assert_int_equal(be16(t.buf + 40 + 14), nat_id);
	assert_int_equal(exp_live(en), 0);
	/* Outgoing-Call-Reply to the NAT id: the PNS gets its own id back */
	nat_msg(en, &f, 1, 8, b, 20, &t);
	assert_ip4(t.buf + 16, PNS);
	assert_int_equal(be16(t.buf + 40 + 12), 0x0200);
	assert_int_equal(be16(t.buf + 40 + 14), 0x0100);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(km_live(en), 2);
	/* the PNS's GRE: related, masqueraded, its key kept in the packet */
	assert_int_equal(nat_gre(en, PNS, PAC, 0x0200, &t, &g), ST_RELATED);
	assert_true(g->status & IPS_EXPECTED);
	assert_true(g->status & IPS_SRC_NAT);
	assert_ip4(t.buf + 12, NATIP);
	assert_int_equal(be16(t.buf + 20 + 6), 0x0200);
	assert_int_equal(ntohs(g->tuple[0].sport), 0x0100);
	assert_int_equal(ntohs(g->tuple[0].dport), 0x0200);
	assert_int_equal(ntohs(g->tuple[1].sport), 0x0200);
	assert_int_equal(ntohs(g->tuple[1].dport), nat_id);
	assert_int_equal(exp_live(en), 0);		/* the other one went (pptp_nat_expected) */
	assert_int_equal(fold(sum16(t.buf, 20, 0)), 0); /* GRE: no checksum of its own */
	/* the PAC's GRE to the NAT id: back to the PNS with its own id */
	assert_int_equal(nat_gre(en, PAC, NATIP, nat_id, &t, &g2), ST_ESTABLISHED);
	assert_ptr_equal(g, g2);
	assert_ip4(t.buf + 16, PNS);
	assert_int_equal(be16(t.buf + 20 + 6), 0x0100);
	assert_int_equal(fold(sum16(t.buf, 20, 0)), 0);
	/* the inside id from outside: another connection, not rewritten */
	assert_int_equal(nat_gre(en, PAC, NATIP, 0x0100, &t, &g2), ST_NEW);
	assert_ptr_not_equal(g, g2);
	assert_int_equal(be16(t.buf + 20 + 6), 0x0100);
	/* WAN-Error-Notify and the PAC's Set-Link-Info name the NAT id */
	memset(b, 0, sizeof(b));
	b[0] = (uint8_t)(nat_id >> 8);
	b[1] = (uint8_t)nat_id;
	nat_msg(en, &f, 1, 14, b, 28, &t);
	assert_int_equal(be16(t.buf + 40 + 12), 0x0100);
	nat_msg(en, &f, 1, 15, b, 12, &t);
	assert_int_equal(be16(t.buf + 40 + 12), 0x0100);
	/* echo and the PNS's Set-Link-Info are left alone */
	memset(b, 0, sizeof(b));
	b[0] = 0x02;
	nat_msg(en, &f, 0, 15, b, 12, &t);
	assert_int_equal(be16(t.buf + 40 + 12), 0x0200);
	nat_msg(en, &f, 0, 5, b, 4, &t);
	assert_int_equal(be16(t.buf + 40 + 12), 0x0200);
	/* Call-Clear-Request goes out with the NAT id */
	memset(b, 0, sizeof(b));
	b[0] = 0x01;
	nat_msg(en, &f, 0, 12, b, 4, &t);
	assert_int_equal(be16(t.buf + 40 + 12), nat_id);
	/* Call-Disconnect-Notify: its call id (the PAC's) becomes the PNS's
	 * as the kernel writes it; the call's GRE connection goes */
	memset(b, 0, sizeof(b));
	b[0] = 0x02;
	nat_msg(en, &f, 1, 13, b, 136, &t);
	assert_int_equal(be16(t.buf + 40 + 12), 0x0100);
	assert_int_equal(km_live(en), 0);
	assert_true(!g->in_use || (g->status & IPS_DYING));
	/* a GRE header too short for the call id cannot be translated: the
	 * kernel's gre_manip_pkt fails, the packet is dropped */
	gre(&t, PNS, PAC, 1, 0x880b, 0x0200, 7);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, &snat, NFTDP_CT_MANIP_SRC), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_DROP);
	nftdp_ct_confirm(en->s, &t.pkt, NF_DROP);
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_gre_tuple),
	    cmocka_unit_test(test_outgoing_call),
	    cmocka_unit_test(test_incoming_call_and_master_gone),
	    cmocka_unit_test(test_keymap_across_shards),
	    cmocka_unit_test(test_ctnetlink_by_name),
	    cmocka_unit_test(test_nat_outgoing_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
