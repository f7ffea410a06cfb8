// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): conntrack helpers and expectations. The
 * ftp command parser (PORT, EPRT |1| and |2|, 227 with and without
 * parentheses, 229; partial, malformed and truncated lines in exactly-sized
 * buffers), `ct helper set` on new connections only, FTP sessions (passive
 * and active, IPv4 and IPv6) whose data connection is related, the line
 * tracking, max_expected, expiry, the master's death, tftp, and an
 * expectation made on one shard claimed on another.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

static const struct nftdp_vm_ct_helper ftp_h = {NFTDP_VM_CT_HELPER_FTP, IPPROTO_TCP, true, true};
static const struct nftdp_vm_ct_helper tftp_h = {NFTDP_VM_CT_HELPER_TFTP, IPPROTO_UDP, true, true};
static const struct nftdp_vm_ct_helper irc_h = {NFTDP_VM_CT_HELPER_IRC, IPPROTO_TCP, true, false};
static const struct nftdp_vm_ct_helper amanda_h = {NFTDP_VM_CT_HELPER_AMANDA, IPPROTO_UDP, true,
						   true};
static const struct nftdp_vm_ct_helper nbns_h = {NFTDP_VM_CT_HELPER_NETBIOS_NS, IPPROTO_UDP, true,
						 false};
static const struct nftdp_vm_ct_helper sane_h = {NFTDP_VM_CT_HELPER_SANE, IPPROTO_TCP, true, true};

/* parse text in a buffer of exactly its length (ASan sees any over-read) */
static int parse(const char *text, int dir, uint8_t l3, struct ct_ftp_cmd *cmd)
{
	uint32_t n;
	char *buf = exact(text, &n);
	int rc;

	memset(cmd, 0, sizeof(*cmd));
	cmd->l3proto = l3;
	rc = nftdp_ct_ftp_parse(buf, n, dir, cmd);
	free(buf);
	return rc;
}

static void test_ftp_parse(void **state)
{
	struct ct_ftp_cmd c;
	uint8_t a6[16];

	(void)state;
	assert_int_equal(parse("PORT 10,0,0,1,4,1\r\n", 0, NFPROTO_IPV4, &c), 1);
	assert_int_equal(c.type, CT_FTP_PORT);
	assert_int_equal(c.u3.ip, htonl(0x0a000001));
	assert_int_equal(ntohs(c.port), 1025);
	assert_int_equal(c.matchoff, 5);
	assert_int_equal(c.matchlen, 12);
	/* case-insensitive command */
	assert_int_equal(parse("port 10,0,0,1,0,21\r\n", 0, NFPROTO_IPV4, &c), 1);
	assert_int_equal(ntohs(c.port), 21);
	/* 227: numbers from the first digit, parentheses or not */
	assert_int_equal(
	    parse("227 Entering Passive Mode (192,168,1,2,195,80).\r\n", 1, NFPROTO_IPV4, &c), 1);
	assert_int_equal(c.type, CT_FTP_PASV);
	assert_int_equal(c.u3.ip, htonl(0xc0a80102));
	assert_int_equal(ntohs(c.port), 195 * 256 + 80);
	assert_int_equal(c.matchoff, 27);
	assert_int_equal(parse("227 =10,1,1,1,0,20\r\n", 1, NFPROTO_IPV4, &c), 1);
	assert_int_equal(ntohs(c.port), 20);
	/* 229 */
	assert_int_equal(
	    parse("229 Entering Extended Passive Mode (|||6446|)\r\n", 1, NFPROTO_IPV6, &c), 1);
	assert_int_equal(c.type, CT_FTP_EPSV);
	assert_int_equal(ntohs(c.port), 6446);
	/* EPRT |1| and |2| */
	assert_int_equal(parse("EPRT |1|132.235.1.2|6275|\r\n", 0, NFPROTO_IPV4, &c), 1);
	assert_int_equal(c.type, CT_FTP_EPRT);
	assert_int_equal(c.u3.ip, htonl(0x84eb0102));
	assert_int_equal(ntohs(c.port), 6275);
	assert_int_equal(parse("EPRT |2|2001:db8::1|5282|\r\n", 0, NFPROTO_IPV6, &c), 1);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", a6), 1);
	assert_memory_equal(c.u3.u8, a6, 16);
	assert_int_equal(ntohs(c.port), 5282);
	/* the family must be the connection's: no match, but the command
	 * was seen, so it is a partial (dropped) one */
	assert_int_equal(parse("EPRT |2|2001:db8::1|5282|\r\n", 0, NFPROTO_IPV4, &c), -1);
	/* commands of the other direction are not looked for */
	assert_int_equal(parse("227 (10,0,0,1,4,1)\r\n", 0, NFPROTO_IPV4, &c), 0);
	assert_int_equal(parse("PORT 10,0,0,1,4,1\r\n", 1, NFPROTO_IPV4, &c), 0);
	/* other lines */
	assert_int_equal(parse("USER anonymous\r\n", 0, NFPROTO_IPV4, &c), 0);
	assert_int_equal(parse("", 0, NFPROTO_IPV4, &c), 0);
	/* partial: the start of a command, a command without its numbers */
	assert_int_equal(parse("PO", 0, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("PORT", 0, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("PORT 10,0,0,1,4", 0, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("PORT 10,0,0,1,4,1", 0, NFPROTO_IPV4, &c), -1); /* no \r */
	assert_int_equal(parse("PORTX", 0, NFPROTO_IPV4, &c), -1);	       /* no space */
	assert_int_equal(parse("PORT 10,0,0,1,4,1,7\r\n", 0, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("PORT 10.0.0.1\r\n", 0, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("229 (|||0|)\r\n", 1, NFPROTO_IPV4, &c), -1); /* port 0 */
	assert_int_equal(parse("229 (1||6446|)\r\n", 1, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("229 (|||6446", 1, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("227 no numbers\r\n", 1, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("EPRT |1|1.2.3|4|\r\n", 0, NFPROTO_IPV4, &c), -1);
	assert_int_equal(parse("EPRT |2|2001:db8:::1|5282|\r\n", 0, NFPROTO_IPV6, &c), -1);
	assert_int_equal(parse("EPRT |2|2001:db8::1", 0, NFPROTO_IPV6, &c), -1);
	assert_int_equal(parse("EPRT 1|1|", 0, NFPROTO_IPV4, &c), -1);
	/* every prefix of every command, in exactly-sized buffers */
	{
		static const char *const lines[][2] = {
		    {"PORT 10,0,0,1,4,1\r\n", "0"},
		    {"EPRT |1|132.235.1.2|6275|\r\n", "0"},
		    {"EPRT |2|2001:db8::1|5282|\r\n", "0"},
		    {"227 Entering Passive Mode (192,168,1,2,195,80).\r\n", "1"},
		    {"229 Entering Extended Passive Mode (|||6446|)\r\n", "1"},
		};
		char buf[128];

		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
			size_t n = strlen(lines[i][0]);

			for (size_t k = 0; k <= n; k++) {
				memcpy(buf, lines[i][0], k);
				buf[k] = 0;
				parse(buf, lines[i][1][0] - '0',
				      strchr(lines[i][0], ':') ? NFPROTO_IPV6 : NFPROTO_IPV4, &c);
			}
		}
	}
}

static uint32_t syn(struct env *en, bool v6, const char *s, const char *d, uint16_t sp, uint16_t dp,
		    struct nftdp_ct_entry **e)
{
	struct tflow f = {v6, s, d, sp, dp, 7000, 0};
	struct tpkt t;

	seg(&t, &f, 0, TS, 7000, 0, 0);
	return hx(en, &t, NULL, e, NULL);
}

static void test_ftp_passive(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40000, 21, 1000, 5000};
	struct nftdp_ct_entry *ctl, *d;
	char name[16];
	unsigned int ctinfo;

	(void)state;
	ctl = open_ctl(en, &f, &ftp_h);
	assert_int_equal(ctl->helper, NFTDP_VM_CT_HELPER_FTP);
	assert_true(ctl->status & IPS_HELPER);
	/* `ct helper` reads the master's helper: the control connection has none */
	assert_false(nftdp_ct_vm_ops.get((void *)((uintptr_t)ctl | IP_CT_ESTABLISHED),
					 NFT_CT_HELPER, 0, name, sizeof(name)));
	/* the first line each way only sets the line tracking */
	assert_int_equal(say(en, &f, 1, "220 227 (192,0,2,10,4,1)\r\n"), NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 0);
	assert_int_equal(say(en, &f, 0, "USER ftp\r\n"), NF_ACCEPT);
	assert_int_equal(say(en, &f, 1, "331 ok\r\n"), NF_ACCEPT);
	assert_int_equal(say(en, &f, 0, "PASV\r\n"), NF_ACCEPT);
	assert_int_equal(say(en, &f, 1, "227 Entering Passive Mode (192,0,2,10,195,80).\r\n"),
			 NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 1);
	/* the data connection, from any client port: related, once */
	assert_int_equal(syn(en, false, "10.0.0.2", "192.0.2.10", 40001, 50000, &d), ST_RELATED);
	assert_true(d->status & IPS_EXPECTED);
	assert_int_equal(en->s->help[d - en->s->entries].master_id, ctl->id);
	assert_true(nftdp_ct_vm_ops.get((void *)((uintptr_t)d | IP_CT_RELATED), NFT_CT_HELPER, 0,
					name, sizeof(name)));
	assert_string_equal(name, "ftp");
	/* its reply, then it is established */
	{
		struct tflow g = {false, "10.0.0.2", "192.0.2.10", 40001, 50000, 7001, 9000};
		struct nftdp_ct_entry *d2;

		assert_int_equal(tx(en, &g, 1, TS | TA, 0, &d2), ST_ESTABLISHED);
		assert_ptr_equal(d, d2);
		assert_int_equal(tx(en, &g, 0, TA, 0, NULL), ST_ESTABLISHED);
	}
	/* a second one is not expected */
	assert_int_equal(syn(en, false, "10.0.0.2", "192.0.2.10", 40002, 50000, NULL), ST_NEW);
	/* another source is not expected (loose = 0 keeps the client's address) */
	assert_int_equal(say(en, &f, 0, "PASV\r\n"), NF_ACCEPT);
	assert_int_equal(say(en, &f, 1, "227 Entering Passive Mode (192,0,2,10,195,81).\r\n"),
			 NF_ACCEPT);
	assert_int_equal(syn(en, false, "10.0.0.3", "192.0.2.10", 40003, 50001, NULL), ST_NEW);
	assert_int_equal(syn(en, false, "10.0.0.2", "192.0.2.10", 40003, 50001, &d), ST_RELATED);
	(void)ctinfo;
	env_free(en);
}

static void test_ftp_active_and_lines(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40000, 21, 1000, 5000};
	struct nftdp_ct_entry *d;

	(void)state;
	open_ctl(en, &f, &ftp_h);
	say(en, &f, 1, "220 hi\r\n");
	say(en, &f, 0, "USER ftp\r\n");
	/* a command split over two segments is not read: the second does not
	 * start after a line end */
	say(en, &f, 0, "NOOP ");
	say(en, &f, 0, "PORT 10,0,0,2,156,65\r\n");
	assert_int_equal(en->s->st.expect_create, 0);
	/* a command whose address is not the client's: no expectation */
	say(en, &f, 0, "PORT 10,0,0,9,156,65\r\n");
	assert_int_equal(en->s->st.expect_create, 0);
	/* a partial command is dropped (and the line tracking kept) */
	assert_int_equal(say(en, &f, 0, "PORT 10,0,0,2"), NF_DROP);
	assert_int_equal(en->s->st.helper_drop, 1);
	f.aseq -= 13; /* as if it was never sent */
	assert_int_equal(say(en, &f, 0, "PORT 10,0,0,2,156,65\r\n"), NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 1);
	/* the server connects back from any port to the client's */
	assert_int_equal(syn(en, false, "192.0.2.10", "10.0.0.2", 20, 156 * 256 + 65, &d),
			 ST_RELATED);
	/* max_expected 1: a second PORT replaces the first */
	say(en, &f, 0, "PORT 10,0,0,2,156,66\r\n");
	say(en, &f, 0, "PORT 10,0,0,2,156,67\r\n");
	assert_int_equal(en->s->st.expect_delete, 1);
	assert_int_equal(syn(en, false, "192.0.2.10", "10.0.0.2", 20, 156 * 256 + 66, NULL),
			 ST_NEW);
	assert_int_equal(syn(en, false, "192.0.2.10", "10.0.0.2", 20, 156 * 256 + 67, NULL),
			 ST_RELATED);
	/* expiry: 5 minutes */
	say(en, &f, 0, "PORT 10,0,0,2,156,68\r\n");
	en->now += 300 * 1000;
	nftdp_ct_gc(en->s, en->now, 64);
	assert_int_equal(syn(en, false, "192.0.2.10", "10.0.0.2", 20, 156 * 256 + 68, NULL),
			 ST_NEW);
	env_free(en);
}

static void test_ftp_ipv6_and_master_gone(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {true, "2001:db8::2", "2001:db8:1::10", 40000, 21, 1000, 5000};
	struct nftdp_ct_entry *ctl, *d;

	(void)state;
	ctl = open_ctl(en, &f, &ftp_h);
	say(en, &f, 1, "220 hi\r\n");
	say(en, &f, 0, "USER ftp\r\n");
	say(en, &f, 1, "331 ok\r\n");
	say(en, &f, 0, "EPSV\r\n");
	say(en, &f, 1, "229 Entering Extended Passive Mode (|||6446|)\r\n");
	assert_int_equal(syn(en, true, "2001:db8::2", "2001:db8:1::10", 40001, 6446, &d),
			 ST_RELATED);
	say(en, &f, 0, "EPRT |2|2001:db8::2|5282|\r\n");
	assert_int_equal(syn(en, true, "2001:db8:1::10", "2001:db8::2", 20, 5282, NULL),
			 ST_RELATED);
	/* the master goes: its expectations with it */
	say(en, &f, 0, "EPRT |2|2001:db8::2|5283|\r\n");
	assert_int_equal(nftdp_ct_delete(en->s, &ctl->tuple[0], 0), 0);
	assert_int_equal(syn(en, true, "2001:db8:1::10", "2001:db8::2", 20, 5283, NULL), ST_NEW);
	env_free(en);
}

static void test_no_helper_and_assign_rules(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40000, 21, 1000, 5000};
	struct nftdp_ct_entry *ctl;
	struct tpkt t;
	char name[16];
	const struct nftdp_vm_ct_helper v6only = {NFTDP_VM_CT_HELPER_FTP, IPPROTO_TCP, false, true};

	(void)state;
	/* a helper for IPv6 only, or for UDP, is not given to an IPv4 TCP one */
	ctl = open_ctl(en, &f, &v6only);
	assert_int_equal(ctl->helper, 0);
	assert_false(nftdp_ct_vm_ops.get((void *)((uintptr_t)ctl | IP_CT_ESTABLISHED),
					 NFT_CT_HELPER, 0, name, sizeof(name)));
	/* a confirmed connection keeps what it has */
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 0);
	hx(en, &t, &ftp_h, NULL, NULL);
	assert_int_equal(ctl->helper, 0);
	say(en, &f, 1, "220 hi\r\n");
	say(en, &f, 0, "USER ftp\r\n");
	say(en, &f, 1, "331 ok\r\n");
	say(en, &f, 0, "PASV\r\n");
	say(en, &f, 1, "227 Entering Passive Mode (192,0,2,10,195,80).\r\n");
	assert_int_equal(syn(en, false, "10.0.0.2", "192.0.2.10", 40001, 50000, NULL), ST_NEW);
	/* udp helper on tcp */
	f.ap = 40010;
	ctl = open_ctl(en, &f, &tftp_h);
	assert_int_equal(ctl->helper, 0);
	env_free(en);
}

/* an xtables CT template on the first packet (pkt->ct_tmpl_*): the new
 * connection takes its helper and event mask, its zone from the mark
 * where asked; an established packet's template changes nothing */
static void test_ct_template(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40100, 21, 1000, 5000};
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;

	(void)state;
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	t.pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
	t.pkt.ct_tmpl_helper = NFTDP_VM_CT_HELPER_FTP;
	t.pkt.ct_tmpl_flags = NFTDP_VM_CT_TMPL_EVENTS;
	t.pkt.ct_tmpl_events = 1u << IPCT_DESTROY;
	assert_int_equal(hx(en, &t, NULL, &e, NULL), ST_NEW);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_FTP);
	assert_true(e->status & IPS_HELPER);
	assert_int_equal(e->eventmask, 1u << IPCT_DESTROY);
	assert_int_equal(e->tuple[0].zone, 0);
	/* --zone-orig mark: the mark (16 bits of it) when conntrack runs */
	f.ap = 40101;
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	t.pkt.mark = 0x10007;
	t.pkt.ct_zone = 3;
	t.pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_ORIG;
	t.pkt.ct_tmpl_flags = NFTDP_VM_CT_TMPL_ZONE_MARK;
	assert_int_equal(hx(en, &t, NULL, &e2, NULL), ST_NEW);
	assert_int_equal(e2->tuple[0].zone, 7);
	assert_int_equal(e2->tuple[1].zone, 0);
	assert_int_equal(e2->helper, 0);
	assert_int_equal(e2->eventmask, ~0u);
	/* a template on a packet of a known connection: nothing changes */
	f.ap = 40100;
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	t.pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
	t.pkt.ct_tmpl_helper = NFTDP_VM_CT_HELPER_TFTP;
	t.pkt.ct_tmpl_flags = NFTDP_VM_CT_TMPL_EVENTS;
	t.pkt.ct_tmpl_events = 0;
	assert_int_equal(hx(en, &t, NULL, &e2, NULL), ST_NEW);
	assert_ptr_equal(e2, e);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_FTP);
	assert_int_equal(e->eventmask, 1u << IPCT_DESTROY);
	env_free(en);
}

static void tftp(struct tpkt *t, const char *s, const char *d, uint16_t sp, uint16_t dp, uint8_t op)
{
	uint8_t h[20] = {(uint8_t)(sp >> 8), (uint8_t)sp, (uint8_t)(dp >> 8), (uint8_t)dp, 0, 20};

	h[9] = op;
	memcpy(h + 10, "f\0octet\0", 9);
	build(t, false, s, d, IPPROTO_UDP, h, 20);
}

static void test_tftp(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *m, *d;
	struct tpkt t;

	(void)state;
	tftp(&t, "10.0.0.2", "192.0.2.10", 1069, 69, 1); /* RRQ */
	assert_int_equal(hx(en, &t, &tftp_h, &m, NULL), ST_NEW);
	assert_int_equal(en->s->st.expect_create, 1);
	/* the server answers from another port: related */
	udp(&t, false, "192.0.2.10", "10.0.0.2", 3000, 1069, 12);
	assert_int_equal(hx(en, &t, NULL, &d, NULL), ST_RELATED);
	assert_ptr_not_equal(m, d);
	/* a data packet (opcode 3) expects nothing */
	tftp(&t, "10.0.0.2", "192.0.2.10", 1070, 69, 3);
	hx(en, &t, &tftp_h, NULL, NULL);
	assert_int_equal(en->s->st.expect_create, 1);
	env_free(en);
}

/* `ct expectation set`: a new connection's first packet opens one for its
 * peer (nft_ct_expect_obj_eval); a confirmed connection breaks the rule;
 * size caps what a connection holds; the media connection is related */
static void test_expect_obj(void **state)
{
	struct env *en = env_new(64, false);
	const struct nftdp_vm_ct_expect media = {NFPROTO_IPV4, IPPROTO_UDP, 1, htons(5004), 60};
	struct nftdp_ct_entry *d;
	struct tpkt t;

	(void)state;
	udp(&t, false, "10.0.0.2", "192.0.2.10", 5060, 5060, 8);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_int_equal(nftdp_ct_vm_ops.expect(t.pkt.ct, &media), NFT_CONTINUE);
	assert_int_equal(en->s->st.expect_create, 1);
	/* size 1: a second one on the same connection breaks the rule */
	assert_int_equal(nftdp_ct_vm_ops.expect(t.pkt.ct, &media), NFT_BREAK);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	/* confirmed: breaks */
	udp(&t, false, "10.0.0.2", "192.0.2.10", 5060, 5060, 8);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_int_equal(nftdp_ct_vm_ops.expect(t.pkt.ct, &media), NFT_BREAK);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	/* the peer's media to port 5004, from any port: related, once */
	udp(&t, false, "192.0.2.10", "10.0.0.2", 7000, 5004, 12);
	assert_int_equal(hx(en, &t, NULL, &d, NULL), ST_RELATED);
	udp(&t, false, "192.0.2.10", "10.0.0.2", 7001, 5004, 12);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_NEW);
	/* another source: not expected */
	udp(&t, false, "10.0.0.2", "192.0.2.11", 5061, 5060, 8);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_int_equal(nftdp_ct_vm_ops.expect(t.pkt.ct, &media), NFT_CONTINUE);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	udp(&t, false, "192.0.2.99", "10.0.0.2", 7000, 5004, 12);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_NEW);
	env_free(en);
}

/* tftp through source NAT: the reply to the NAT address is related and
 * taken back to the client by the expectation (nf_nat_follow_master),
 * with no nat rule of its own */
static void test_tftp_snat(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	struct nftdp_ct_entry *m, *d;
	struct tpkt t;

	(void)state;
	tftp(&t, "10.0.0.2", "192.0.2.10", 1069, 69, 1);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	nftdp_ct_vm_ops.helper(t.pkt.ct, &tftp_h);
	m = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, &snat, NFTDP_CT_MANIP_SRC), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_ip4(t.buf + 12, "198.51.100.1");
	assert_true(m->status & IPS_SRC_NAT);
	assert_int_equal(en->s->st.expect_create, 1);
	/* the reply from another port to the NAT address */
	udp(&t, false, "192.0.2.10", "198.51.100.1", 3000, ntohs(m->tuple[1].dport), 12);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_true(d->status & IPS_DST_NAT);
	assert_ip4(t.buf + 16, "10.0.0.2");
	assert_int_equal(port_at(t.buf + 22), 1069);
	assert_csums(&t);
	env_free(en);
}

/* irc parser on text in a buffer of exactly its length */
static int irc_parse(const char *text, uint32_t ip1, struct ct_irc_dcc *dcc)
{
	uint32_t n;
	char *buf = exact(text, &n);
	int rc;

	memset(dcc, 0, sizeof(*dcc));
	rc = nftdp_ct_irc_parse(buf, n, htonl(ip1), htonl(ip1), dcc);
	free(buf);
	return rc;
}

static void test_irc_parse(void **state)
{
	static const char send[] = "PRIVMSG bob :\1DCC SEND file.txt 167772162 5000 1234\1\r\n";
	struct ct_irc_dcc d;
	char buf[128];

	(void)state;
	assert_int_equal(irc_parse(send, 0x0a000002, &d), 1);
	assert_int_equal(d.ip, htonl(0x0a000002));
	assert_int_equal(d.port, 5000);
	assert_int_equal(d.end - d.beg, strlen("167772162 5000"));
	/* case-insensitive PRIVMSG after blanks; CHAT, TSEND */
	assert_int_equal(
	    irc_parse("\r\n  privmsg bob :\1DCC CHAT chat 167772162 6000\1\n", 0x0a000002, &d), 1);
	assert_int_equal(d.port, 6000);
	assert_int_equal(
	    irc_parse("PRIVMSG bob :\1DCC TSEND f 167772162   7000 1\1\n", 0x0a000002, &d), 1);
	assert_int_equal(d.port, 7000);
	/* not a PRIVMSG, no " :", the message not starting with the DCC */
	assert_int_equal(irc_parse("NOTICE bob :\1DCC SEND f 167772162 5000 1\1\n", 0x0a000002, &d),
			 0);
	assert_int_equal(
	    irc_parse("PRIVMSG bob :hi \1DCC SEND f 167772162 5000 1\1\n", 0x0a000002, &d), 0);
	/* another address (forged), port 0, no line end, an unknown type */
	assert_int_equal(irc_parse(send, 0x0a000003, &d), 0);
	assert_int_equal(irc_parse("PRIVMSG bob :\1DCC SEND f 167772162 0 1\1\n", 0x0a000002, &d),
			 0);
	assert_int_equal(irc_parse("PRIVMSG bob :\1DCC SEND f 167772162 5000 1\1", 0x0a000002, &d),
			 0);
	assert_int_equal(
	    irc_parse("PRIVMSG bob :\1DCC XMIT f 167772162 5000 1\1\n", 0x0a000002, &d), 0);
	/* every prefix, in exactly-sized buffers (ASan sees any over-read) */
	for (size_t k = 0; k <= strlen(send); k++) {
		memcpy(buf, send, k);
		buf[k] = 0;
		assert_int_equal(irc_parse(buf, 0x0a000002, &d), k == strlen(send));
	}
}

static void test_irc(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40000, 6667, 1000, 5000};
	struct nftdp_ct_entry *ctl, *d;
	char name[16];

	(void)state;
	ctl = open_ctl(en, &f, &irc_h);
	assert_int_equal(ctl->helper, NFTDP_VM_CT_HELPER_IRC);
	/* the server's lines are not read */
	assert_int_equal(say(en, &f, 1, "PRIVMSG x :\1DCC SEND f 3221225994 5000 1\1\r\n"),
			 NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 0);
	assert_int_equal(say(en, &f, 0, "PRIVMSG bob :\1DCC SEND f.txt 167772162 5000 99\1\r\n"),
			 NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 1);
	/* from anywhere, any port, to the client at the offered port */
	assert_int_equal(syn(en, false, "198.51.100.7", "10.0.0.2", 33000, 5001, NULL), ST_NEW);
	assert_int_equal(syn(en, false, "198.51.100.7", "10.0.0.2", 33000, 5000, &d), ST_RELATED);
	assert_true(nftdp_ct_vm_ops.get((void *)((uintptr_t)d | IP_CT_RELATED), NFT_CT_HELPER, 0,
					name, sizeof(name)));
	assert_string_equal(name, "irc");
	/* max 8 offers at a time: the ninth replaces the oldest */
	for (unsigned int i = 0; i < 9; i++) {
		char line[80];

		snprintf(line, sizeof(line), "PRIVMSG bob :\1DCC CHAT chat 167772162 %u\1\r\n",
			 6000 + i);
		assert_int_equal(say(en, &f, 0, line), NF_ACCEPT);
	}
	assert_int_equal(syn(en, false, "198.51.100.7", "10.0.0.2", 33001, 6000, NULL), ST_NEW);
	assert_int_equal(syn(en, false, "198.51.100.7", "10.0.0.2", 33001, 6001, NULL), ST_RELATED);
	assert_int_equal(syn(en, false, "198.51.100.7", "10.0.0.2", 33002, 6008, NULL), ST_RELATED);
	env_free(en);
}

/* the dataplane's resize for helpers that grow a packet: the fixture's
 * buffer is the mbuf; no room when room_left is false */
static bool room_left = true;
static bool resize(void *arg, struct nftdp_vm_pkt *pkt, uint32_t len)
{
	(void)arg;
	if ((!room_left && len > pkt->len) || len > sizeof(((struct tpkt *)0)->buf))
		return false;
	pkt->skb_len += len - pkt->len;
	pkt->len = len;
	return true;
}

/* a segment with text through the NAT path (the bindings already made);
 * the packet as it leaves in *t, the confirm verdict in *v */
static uint32_t say_nat(struct env *en, const struct tflow *f, int dir, uint32_t seq, uint32_t ack,
			const char *text, struct tpkt *t, unsigned int *v)
{
	uint32_t n = (uint32_t)strlen(text), st;
	uint8_t h[1600];

	tcp_hdr(h, dir ? f->bp : f->ap, dir ? f->ap : f->bp, seq, ack, TA, 65535, 0);
	memcpy(h + 20, text, n);
	build(t, f->v6, dir ? f->b : f->a, dir ? f->a : f->b, IPPROTO_TCP, h, 20 + n);
	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	st = nftdp_ct_vm_ops.state(t->pkt.ct);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	*v = nftdp_ct_confirm(en->s, &t->pkt, NF_ACCEPT);
	return st;
}

/* irc through source NAT (nf_nat_irc): an offer of the private address
 * is rewritten to the public one ("%u %u", one digit longer: the client's
 * later sequence numbers move by one) and its connection follows the
 * master to the client; an offer of the public address is written again
 * as it was; a rewrite without room drops the segment and expects nothing */
static void test_irc_snat(void **state)
{
	static const char pub[] = "PRIVMSG bob :\1DCC SEND f 3325256705 5000 1\1\r\n";
	static const char priv[] = "PRIVMSG bob :\1DCC SEND f 167772162 5001 1\1\r\n";
	static const char priv_out[] = "PRIVMSG bob :\1DCC SEND f 3325256705 5001 1\1\r\n";
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	struct tflow fc = {false, "10.0.0.2", "192.0.2.10", 40000, 6667, 1000, 5000}, fs;
	struct tflow peer = {false, "203.0.113.9", "198.51.100.1", 33000, 5000, 7000, 0};
	struct nftdp_ct_entry *m, *d;
	uint32_t seq = 1001;
	unsigned int v;
	struct tpkt t;

	(void)state;
	en->s->cfg.pkt_resize = resize;
	room_left = true;
	seg(&t, &fc, 0, TS, 1000, 0, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	nftdp_ct_vm_ops.helper(t.pkt.ct, &irc_h);
	m = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, &snat, NFTDP_CT_MANIP_SRC), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	fs = fc;
	fs.a = "198.51.100.1";
	fs.ap = ntohs(m->tuple[1].dport);
	seg(&t, &fs, 1, TS | TA, 5000, 1001, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	seg(&t, &fc, 0, TA, 1001, 5001, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	/* no room for the longer text: dropped, the expectation taken back */
	room_left = false;
	assert_int_equal(say_nat(en, &fc, 0, seq, 5001, priv, &t, &v), ST_ESTABLISHED);
	assert_int_equal(v, NF_DROP);
	assert_int_equal(atomic_load(&en->s->exp->n_live), 0);
	assert_false(m->status & IPS_SEQ_ADJUST);
	room_left = true;
	assert_int_equal(say_nat(en, &fc, 0, seq, 5001, priv, &t, &v), ST_ESTABLISHED);
	assert_int_equal(v, NF_ACCEPT);
	assert_int_equal(t.pkt.len, 40 + strlen(priv_out));
	t.len = t.pkt.len;
	assert_memory_equal(t.buf + 40, priv_out, strlen(priv_out));
	assert_ip4(t.buf + 12, "198.51.100.1");
	assert_csums(&t);
	assert_true(m->status & IPS_SEQ_ADJUST);
	assert_int_equal(atomic_load(&en->s->exp->n_live), 1);
	seq += (uint32_t)strlen(priv);
	/* the next segment leaves one later in the server's view */
	assert_int_equal(say_nat(en, &fc, 0, seq, 5001, pub, &t, &v), ST_ESTABLISHED);
	assert_int_equal(v, NF_ACCEPT);
	assert_int_equal((uint32_t)port_at(t.buf + 24) << 16 | port_at(t.buf + 26), seq + 1);
	assert_memory_equal(t.buf + 40, pub, strlen(pub));
	assert_int_equal(atomic_load(&en->s->exp->n_live), 2);
	/* the peer reaches the public address: related, taken to the client */
	seg(&t, &peer, 0, TS, 7000, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_true(d->status & IPS_DST_NAT);
	assert_ip4(t.buf + 16, "10.0.0.2");
	assert_int_equal(port_at(t.buf + 22), 5000);
	peer.ap = 33001;
	peer.bp = 5001;
	seg(&t, &peer, 0, TS, 7000, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_int_equal(port_at(t.buf + 22), 5001);
	env_free(en);
}

static void test_amanda(void **state)
{
	static const char reply[] = "Amanda 2.4 REP HANDLE 000-65637373 SEQ 954568800\n"
				    "CONNECT DATA 4670 MESG 4671 INDEX 4672\n";
	struct ct_amanda_port p[3];
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *m, *m2;
	struct tpkt t;
	char buf[160];

	(void)state;
	memcpy(buf, reply, strlen(reply));
	assert_int_equal(nftdp_ct_amanda_parse(buf, (uint32_t)strlen(reply), p), 3);
	assert_int_equal(p[0].port, 4670);
	assert_int_equal(p[2].port, 4672);
	assert_int_equal(p[1].len, 4);
	/* a bad port ends the list; no line end: nothing */
	assert_int_equal(nftdp_ct_amanda_parse("CONNECT DATA 4670 MESG x INDEX 3\n", 33, p), 1);
	assert_int_equal(nftdp_ct_amanda_parse("CONNECT DATA 4670", 17, p), 0);
	assert_int_equal(nftdp_ct_amanda_parse("CONNECT DATA 123456\n", 20, p), 1);
	assert_int_equal(p[0].port, 12345);
	for (size_t k = 0; k <= strlen(reply); k++) {
		char *b = malloc(k ? k : 1);

		memcpy(b, reply, k);
		nftdp_ct_amanda_parse(b, (uint32_t)k, p);
		free(b);
	}
	/* the server's request, then the client's reply: three expectations */
	udp_text(&t, false, "192.0.2.10", "10.0.0.2", 850, 10080, "Amanda 2.4 REQ HANDLE x\n");
	assert_int_equal(hx(en, &t, &amanda_h, &m, NULL), ST_NEW);
	assert_int_equal(en->s->st.expect_create, 0);
	udp_text(&t, false, "10.0.0.2", "192.0.2.10", 10080, 850, reply);
	assert_int_equal(hx(en, &t, NULL, &m2, NULL), ST_ESTABLISHED);
	assert_ptr_equal(m, m2);
	assert_int_equal(en->s->st.expect_create, 3);
	/* the master is kept 300 s */
	assert_true(m->expires_ms >= en->now + 299000);
	/* TCP from the server to the client's ports: related */
	assert_int_equal(syn(en, false, "192.0.2.10", "10.0.0.2", 900, 4671, NULL), ST_RELATED);
	assert_int_equal(syn(en, false, "192.0.2.11", "10.0.0.2", 900, 4670, NULL), ST_NEW);
	assert_int_equal(syn(en, false, "192.0.2.10", "10.0.0.2", 901, 4670, NULL), ST_RELATED);
	env_free(en);
}

/* amanda through destination NAT (nf_nat_amanda): the client behind
 * dnat announces its ports; a port another master's expectation holds
 * moves (nf_nat_exp_find_port: a random one above 9999, so the datagram
 * grows by one byte) and the server's connection to it reaches the port the
 * client announced (nf_nat_follow_master, exp->dir original); without
 * room for the longer text the datagram is dropped */
static void test_amanda_dnat(void **state)
{
	static const char rep[] = "Amanda 2.4 REP\nCONNECT DATA 9999\n";
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range dnat = nat_to("10.0.0.2", 0);
	struct nftdp_ct_entry *m, *d;
	unsigned int moved = 0;
	struct tpkt t;

	(void)state;
	en->s->cfg.pkt_resize = resize;
	room_left = true;
	for (uint16_t sp = 850; sp <= 852; sp++) {
		udp_text(&t, false, "192.0.2.10", "198.51.100.1", sp, 10080, "Amanda 2.4 REQ\n");
		assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
		nftdp_ct_vm_ops.helper(t.pkt.ct, &amanda_h);
		m = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
		assert_int_equal(m->helper, NFTDP_VM_CT_HELPER_AMANDA);
		assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, &dnat, NFTDP_CT_MANIP_DST),
				 NF_ACCEPT);
		assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING),
				 NF_ACCEPT);
		assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
		assert_ip4(t.buf + 16, "10.0.0.2");
		if (sp == 852)
			room_left = false;
		udp_text(&t, false, "10.0.0.2", "192.0.2.10", 10080, sp, rep);
		assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
		assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING),
				 NF_ACCEPT);
		if (sp == 850) {
			/* the first: the ports as they are, text the same */
			assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
			assert_int_equal(t.pkt.len, 28 + strlen(rep));
			assert_memory_equal(t.buf + 28, rep, strlen(rep));
			assert_int_equal(atomic_load(&en->s->exp->n_live), 1);
		} else if (sp == 851) {
			/* the second: 9999 taken by the first master */
			assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
			assert_int_equal(t.pkt.len, 28 + strlen(rep) + 1);
			assert_memory_equal(t.buf + 28, rep, strlen(rep) - 5);
			assert_int_equal(
			    sscanf((const char *)t.buf + 28 + strlen(rep) - 5, "%5u\n", &moved), 1);
			assert_true(moved > 9999 && moved <= 65535);
			assert_int_equal(t.buf[28 + strlen(rep)], '\n');
			assert_int_equal(port_at(t.buf + 24), 8 + strlen(rep) + 1);
			assert_ip4(t.buf + 12, "198.51.100.1");
			t.len = t.pkt.len;
			assert_csums(&t);
			assert_int_equal(atomic_load(&en->s->exp->n_live), 2);
		} else {
			/* 9999 and 10000 taken: 10001, one byte longer, no room */
			assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_DROP);
			assert_int_equal(t.pkt.len, 28 + strlen(rep));
			assert_int_equal(atomic_load(&en->s->exp->n_live), 2);
		}
	}
	room_left = true;
	/* the server's connection to the moved port: related, taken to 9999 */
	{
		struct tflow f = {false, "192.0.2.10", "198.51.100.1", 900, (uint16_t)moved, 7000,
				  0};

		seg(&t, &f, 0, TS, 7000, 0, 0);
	}
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_true(d->status & IPS_DST_NAT);
	assert_ip4(t.buf + 16, "10.0.0.2");
	assert_int_equal(port_at(t.buf + 22), 9999);
	env_free(en);
}

/* nf_conntrack_amanda searches each keyword up to the line end it found
 * before a rewrite moved it: after DATA grew by a byte, "INDEX 4672" is
 * read as far as the old line end, port 467 (the kernel, seen: "CONNECT
 * DATA 23500 MESG 10716 INDEX 4672" for a reply that had DATA 9999 and
 * MESG 4671 moved); 467 is expected and written as it was */
static void test_amanda_dnat_stale_stop(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range dnat = nat_to("10.0.0.2", 0);
	struct nftdp_ct_entry *d;
	struct tpkt t;

	(void)state;
	en->s->cfg.pkt_resize = resize;
	room_left = true;
	for (uint16_t sp = 850; sp <= 851; sp++) {
		udp_text(&t, false, "192.0.2.10", "198.51.100.1", sp, 10080, "Amanda 2.4 REQ\n");
		assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
		nftdp_ct_vm_ops.helper(t.pkt.ct, &amanda_h);
		assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, &dnat, NFTDP_CT_MANIP_DST),
				 NF_ACCEPT);
		assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING),
				 NF_ACCEPT);
		assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
		udp_text(&t, false, "10.0.0.2", "192.0.2.10", 10080, sp,
			 sp == 850 ? "CONNECT DATA 9999\n" : "CONNECT DATA 9999 INDEX 4672\n");
		assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
		assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING),
				 NF_ACCEPT);
		assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	}
	assert_int_equal(t.pkt.len, 28 + strlen("CONNECT DATA 99999 INDEX 4672\n"));
	assert_memory_equal(t.buf + 28 + 18, " INDEX 4672\n", 12);
	assert_int_equal(atomic_load(&en->s->exp->n_live), 3);
	{
		struct tflow f = {false, "192.0.2.10", "198.51.100.1", 900, 467, 7000, 0};

		seg(&t, &f, 0, TS, 7000, 0, 0);
	}
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_ip4(t.buf + 16, "10.0.0.2");
	assert_int_equal(port_at(t.buf + 22), 467);
	env_free(en);
}

/* netbios-ns: the broadcast helper serves local sockets only: a forwarded
 * request expects nothing */
static void test_netbios_ns(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *m;
	struct tpkt t;

	(void)state;
	udp(&t, false, "10.0.0.2", "10.0.0.255", 137, 137, 50);
	assert_int_equal(hx(en, &t, &nbns_h, &m, NULL), ST_NEW);
	assert_int_equal(m->helper, NFTDP_VM_CT_HELPER_NETBIOS_NS);
	assert_int_equal(en->s->st.expect_create, 0);
	udp(&t, false, "10.0.0.7", "10.0.0.2", 137, 137, 50);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_NEW);
	env_free(en);
}

/* the data connection hashes to another worker than its master */
static void test_expect_across_shards(void **state)
{
	struct nftdp_ct_expect_table *tab;
	struct env a = {0}, b = {0};
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40000, 21, 1000, 5000};
	struct nftdp_ct_entry *ctl, *d;

	(void)state;
	tab = two_shards(&a, &b);
	ctl = open_ctl(&a, &f, &ftp_h);
	say(&a, &f, 1, "220 hi\r\n");
	say(&a, &f, 0, "USER ftp\r\n");
	say(&a, &f, 1, "331 ok\r\n");
	say(&a, &f, 0, "PASV\r\n");
	say(&a, &f, 1, "227 Entering Passive Mode (192,0,2,10,195,80).\r\n");
	assert_int_equal(atomic_load(&tab->n_live), 1);
	assert_int_equal(syn(&b, false, "10.0.0.2", "192.0.2.10", 40001, 50000, &d), ST_RELATED);
	assert_int_equal(b.s->help[d - b.s->entries].master_shard, 0);
	assert_int_equal(b.s->help[d - b.s->entries].master_id, ctl->id);
	assert_int_equal(atomic_load(&tab->n_live), 0);
	/* the part (4 slots) fills: -EMFILE drops the packet; the same tuple
	 * announced by another master clashes: -EBUSY */
	for (uint16_t i = 0; i < 6; i++) {
		struct tflow g = {false, "10.0.0.2", "192.0.2.10", (uint16_t)(41000 + i),
				  21,	 1000,	     5000};
		char line[64];

		snprintf(line, sizeof(line), "227 Entering Passive Mode (192,0,2,10,%u,80).\r\n",
			 i < 5 ? 196u + i : 196u);
		open_ctl(&a, &g, &ftp_h);
		say(&a, &g, 1, "220 hi\r\n");
		say(&a, &g, 0, "USER ftp\r\n");
		say(&a, &g, 1, "331 ok\r\n");
		say(&a, &g, 0, "PASV\r\n");
		assert_int_equal(say(&a, &g, 1, line), i < 4 ? NF_ACCEPT : NF_DROP);
	}
	assert_int_equal(a.s->st.expect_create, 5);
	assert_int_equal(a.s->st.helper_drop, 2);
	two_shards_free(&a, &b, tab);
}

/* the first packet of a udp connection s:sp -> 192.0.2.10:5060 on en asks
 * for media to s:5004 (a `ct expectation` object); confirmed unless not */
static struct nftdp_ct_entry *media_master(struct env *en, uint16_t sp, uint32_t mark, bool confirm,
					   int want, struct tpkt *t)
{
	const struct nftdp_vm_ct_expect media = {NFPROTO_IPV4, IPPROTO_UDP, 2, htons(5004), 60};
	struct nftdp_ct_entry *m;

	udp(t, false, "10.0.0.2", "192.0.2.10", sp, 5060, 8);
	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	m = (struct nftdp_ct_entry *)((uintptr_t)t->pkt.ct & ~(uintptr_t)7);
	m->mark = mark;
	assert_int_equal(nftdp_ct_vm_ops.expect(t->pkt.ct, &media), want);
	if (confirm)
		nftdp_ct_confirm(en->s, &t->pkt, want == NF_DROP ? NF_DROP : NF_ACCEPT);
	return m;
}

static uint32_t media_in(struct env *en, uint16_t sp, struct nftdp_ct_entry **d)
{
	struct tpkt t;

	udp(&t, false, "192.0.2.10", "10.0.0.2", sp, 5004, 12);
	return hx(en, &t, NULL, d, NULL);
}

/* the live slot of a part, NULL: none */
static struct ct_expect *live_slot(struct nftdp_ct_expect_table *tab, uint16_t part)
{
	for (uint32_t j = 0; j < tab->per_part; j++)
		if ((atomic_load(&tab->part[part].slot[j].state) & 3) == CT_EXP_LIVE)
			return &tab->part[part].slot[j];
	return NULL;
}

/*
 * nf_ct_find_expectation's choice: the kernel lets one expectation at most
 * match a tuple (another master's clash is -EBUSY: the object drops the
 * packet); when two workers make clashing ones at one moment (shown here
 * by hiding the first while the second is checked) the newest is taken,
 * as the kernel's bucket (newest at its head) would give it. The master's
 * mark and secmark are read when the expectation is taken, and a master
 * not confirmed yet lends none (the kernel returns NULL, looking no
 * further).
 */
static void test_expect_newest_and_master(void **state)
{
	struct nftdp_ct_expect_table *tab;
	struct env a = {0}, b = {0};
	struct nftdp_ct_entry *ma, *mb, *d;
	struct ct_expect *xa;
	struct tpkt t, tc;
	uint32_t w;

	(void)state;
	tab = two_shards(&a, &b);
	ma = media_master(&a, 5060, 1, true, NFT_CONTINUE, &t);
	/* another master's clash: -EBUSY, the packet dropped */
	media_master(&b, 5061, 2, true, NF_DROP, &t);
	assert_int_equal(atomic_load(&tab->n_live), 1);
	/* both at one moment: b's check does not see a's */
	xa = live_slot(tab, 0);
	assert_non_null(xa);
	w = atomic_load(&xa->state);
	atomic_store(&xa->state, (w & ~3u) | CT_EXP_CLAIMED);
	mb = media_master(&b, 5062, 2, true, NFT_CONTINUE, &t);
	atomic_store(&xa->state, w);
	assert_int_equal(atomic_load(&tab->n_live), 2);
	assert_true((int32_t)(live_slot(tab, 1)->seq - xa->seq) > 0);
	/* the newest (b's) first, on either worker; then a's, with the mark
	 * a has now */
	ma->mark = 5;
	assert_int_equal(media_in(&a, 7000, &d), ST_RELATED);
	assert_int_equal(d->mark, 2);
	assert_int_equal(a.s->help[d - a.s->entries].master_shard, 1);
	assert_int_equal(a.s->help[d - a.s->entries].master_id, mb->id);
	assert_int_equal(media_in(&b, 7001, &d), ST_RELATED);
	assert_int_equal(d->mark, 5);
	assert_int_equal(b.s->help[d - b.s->entries].master_id, ma->id);
	assert_int_equal(media_in(&a, 7002, NULL), ST_NEW);
	assert_int_equal(atomic_load(&tab->n_live), 0);
	/* a master not confirmed yet: its expectation is not taken */
	media_master(&a, 5063, 3, false, NFT_CONTINUE, &tc);
	assert_int_equal(media_in(&b, 7003, NULL), ST_NEW);
	assert_int_equal(atomic_load(&tab->n_live), 1);
	nftdp_ct_confirm(a.s, &tc.pkt, NF_ACCEPT);
	assert_int_equal(media_in(&b, 7004, &d), ST_RELATED);
	assert_int_equal(d->mark, 3);
	two_shards_free(&a, &b, tab);
}

/* nf_ct_find_expectation's nf_ct_zone_equal_any: the master's zone id and
 * the new connection's template zone id, whatever directions either has */
static void test_expect_zone_dir(void **state)
{
	const struct nftdp_vm_ct_expect media = {NFPROTO_IPV4, IPPROTO_UDP, 3, htons(5004), 60};
	static const uint8_t dirs[] = {NFTDP_VM_CT_ZONE_DIR_REPL, NFTDP_VM_CT_ZONE_DIR_ORIG,
				       NFTDP_VM_CT_ZONE_DIR_BOTH, 0};
	struct env *en = env_new(64, false);
	struct tpkt t;

	(void)state;
	for (unsigned int i = 0; i < 4; i++) {
		udp(&t, false, "10.0.0.2", "192.0.2.10", (uint16_t)(5060 + i), 5060, 8);
		t.pkt.ct_zone = 5;
		t.pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
		assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
		assert_int_equal(nftdp_ct_vm_ops.expect(t.pkt.ct, &media), NFT_CONTINUE);
		nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
		udp(&t, false, "192.0.2.10", "10.0.0.2", (uint16_t)(7000 + i), 5004, 12);
		t.pkt.ct_zone = dirs[i] ? 5 : 0;
		t.pkt.ct_zone_dir = dirs[i];
		assert_int_equal(hx(en, &t, NULL, NULL, NULL), dirs[i] ? ST_RELATED : ST_NEW);
		if (!dirs[i])
			assert_int_equal(en->s->st.expect_new, 3);
	}
	env_free(en);
}

/* nf_conntrack_sane: SANE_NET_START's successful reply expects the
 * client's data connection to the server at the port it names */
static void test_sane(void **state)
{
	static const uint8_t start[8] = {0, 0, 0, 7, 0, 0, 0, 1}; /* SANE_NET_START, handle 1 */
	static const uint8_t other[8] = {0, 0, 0, 4, 0, 0, 0, 1}; /* another command */
	static const uint8_t ok[12] = {0, 0, 0, 0, 0, 0, 0x9c, 0x41, 0, 0, 0, 0}; /* port 40001 */
	static const uint8_t refused[8] = {0, 0, 0, 1, 0, 0, 0x9c, 0x42};
	static const uint8_t nonzero[8] = {0, 0, 0, 0, 0, 1, 0x9c, 0x43};
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40000, 6566, 1000, 5000};
	struct nftdp_ct_entry *d;
	char name[16];

	(void)state;
	assert_int_equal(open_ctl(en, &f, &sane_h)->helper, NFTDP_VM_CT_HELPER_SANE);
	/* a reply with no request before it; a request of another length */
	assert_int_equal(say_n(en, &f, 1, ok, sizeof(ok)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 0, start, 7), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 1, ok, sizeof(ok)), NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 0);
	/* another command after the request: its reply is not read */
	assert_int_equal(say_n(en, &f, 0, start, sizeof(start)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 0, other, sizeof(other)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 1, ok, sizeof(ok)), NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 0);
	/* refused, a non-zero word, too short: nothing, and the request is spent */
	assert_int_equal(say_n(en, &f, 0, start, sizeof(start)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 1, refused, sizeof(refused)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 0, start, sizeof(start)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 1, nonzero, sizeof(nonzero)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 0, start, sizeof(start)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 1, ok, 7), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 1, ok, sizeof(ok)), NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 0);
	/* the start and its reply (longer than 8 bytes: the rest not read) */
	assert_int_equal(say_n(en, &f, 0, start, sizeof(start)), NF_ACCEPT);
	assert_int_equal(say_n(en, &f, 1, ok, sizeof(ok)), NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 1);
	/* the client, from any port, to the server at 40001; nobody else */
	assert_int_equal(syn(en, false, "10.0.0.3", "192.0.2.10", 33000, 40001, NULL), ST_NEW);
	assert_int_equal(syn(en, false, "10.0.0.2", "192.0.2.10", 33000, 40002, NULL), ST_NEW);
	assert_int_equal(syn(en, false, "10.0.0.2", "192.0.2.10", 33001, 40001, &d), ST_RELATED);
	assert_true(nftdp_ct_vm_ops.get((void *)((uintptr_t)d | IP_CT_RELATED), NFT_CT_HELPER, 0,
					name, sizeof(name)));
	assert_string_equal(name, "sane");
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ftp_parse),
	    cmocka_unit_test(test_ct_template),
	    cmocka_unit_test(test_ftp_passive),
	    cmocka_unit_test(test_ftp_active_and_lines),
	    cmocka_unit_test(test_ftp_ipv6_and_master_gone),
	    cmocka_unit_test(test_no_helper_and_assign_rules),
	    cmocka_unit_test(test_tftp),
	    cmocka_unit_test(test_irc_parse),
	    cmocka_unit_test(test_irc),
	    cmocka_unit_test(test_irc_snat),
	    cmocka_unit_test(test_amanda_dnat),
	    cmocka_unit_test(test_amanda_dnat_stale_stop),
	    cmocka_unit_test(test_amanda),
	    cmocka_unit_test(test_netbios_ns),
	    cmocka_unit_test(test_sane),
	    cmocka_unit_test(test_tftp_snat),
	    cmocka_unit_test(test_expect_across_shards),
	    cmocka_unit_test(test_expect_obj),
	    cmocka_unit_test(test_expect_newest_and_master),
	    cmocka_unit_test(test_expect_zone_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
