// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): TCP sequence adjustment (seqadj.c, the
 * kernel's nf_conntrack_seqadj.c) and nf_nat_ftp's rewrite of the command
 * text (helper_ftp.c): the correction's arithmetic before and after its
 * position and across 2^32, seq/ack/SACK rewriting with the checksum kept
 * right, partial options, the text nf_nat_ftp_fmt_cmd writes, FTP sessions
 * through source and destination NAT (PORT, EPRT |1| and |2|, 227, 229)
 * whose later segments are adjusted and whose peer's acks stay in window,
 * a packet with no room to grow, and the ctnetlink side (create with an
 * adjustment, update without the extension).
 */
#include "ct_fixture.h"

static const struct nftdp_vm_ct_helper ftp_h = {NFTDP_VM_CT_HELPER_FTP, IPPROTO_TCP, true, true};

static void test_arith(void **state)
{
	struct nftdp_ct_seqadj w = {0, 0, 0};

	(void)state;
	/* nothing recorded: 0 everywhere */
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 12345), 0);
	nftdp_ct_seqadj_record(&w, 1000, 4);
	assert_int_equal(w.correction_pos, 1000);
	assert_int_equal(w.offset_before, 0);
	assert_int_equal(w.offset_after, 4);
	/* the segment that changed keeps the old offset, later ones the new */
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 999), 0);
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 1000), 0);
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 1001), 4);
	/* a retransmission of that segment is not counted again */
	nftdp_ct_seqadj_record(&w, 1000, 4);
	assert_int_equal(w.offset_after, 4);
	/* nor an earlier one */
	nftdp_ct_seqadj_record(&w, 900, 7);
	assert_int_equal(w.offset_after, 4);
	/* a later change adds up; shrinking is negative */
	nftdp_ct_seqadj_record(&w, 2000, -6);
	assert_int_equal(w.correction_pos, 2000);
	assert_int_equal(w.offset_before, 4);
	assert_int_equal(w.offset_after, -2);
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 1500), 4);
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 2001), -2);
	/* across 2^32: after() is serial arithmetic */
	memset(&w, 0, sizeof(w));
	nftdp_ct_seqadj_record(&w, 0xfffffff0u, 3);
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 0xffffffe0u), 0);
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 0xfffffffeu), 3);
	assert_int_equal(nftdp_ct_seqadj_offset(&w, 0x10), 3);
	nftdp_ct_seqadj_record(&w, 0x20, 2);
	assert_int_equal(w.offset_before, 3);
	assert_int_equal(w.offset_after, 5);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* an IPv4 TCP packet with options opt (padded by the caller to 4) */
static void tcp_opts(struct tpkt *t, uint32_t seq, uint32_t ack, uint8_t flags, const uint8_t *opt,
		     uint32_t optlen)
{
	uint8_t h[80];

	tcp_hdr(h, 21, 40000, seq, ack, flags, 8192, optlen);
	memcpy(h + 20, opt, optlen);
	h[12] = (uint8_t)((20 + optlen) / 4) << 4;
	build(t, false, "10.2.0.1", "10.1.0.1", IPPROTO_TCP, h, 20 + optlen);
}

static void test_tcp_rewrite(void **state)
{
	/* NOP NOP SACK with two blocks, then EOL padding */
	uint8_t opt[24] = {1, 1, 5, 18};
	struct nftdp_ct_seqadj here = {5000, 0, 2}, peer = {0xfffffff0u, 0, 4};
	struct tpkt t;
	uint8_t *th;

	(void)state;
	put32(opt + 4, 0xffffffe0u); /* before the peer's correction: - 0 */
	put32(opt + 8, 0xfffffff4u); /* its end, after it once taken back: - 4 */
	put32(opt + 12, 0x10);	     /* after it across 2^32: - 4 */
	put32(opt + 16, 0x20);
	tcp_opts(&t, 5010, 0x14, TA, opt, 20);
	th = t.buf + 20;
	assert_true(nftdp_ct_seqadj_tcp(th, &here, &peer));
	assert_int_equal(rd32(th + 4), 5012);
	assert_int_equal(rd32(th + 8), 0x10);
	assert_int_equal(rd32(th + 24), 0xffffffe0u);
	assert_int_equal(rd32(th + 28), 0xfffffff0u);
	assert_int_equal(rd32(th + 32), 0x0c);
	assert_int_equal(rd32(th + 36), 0x1c);
	assert_csums(&t); /* updated incrementally, still right */
	/* at or before the correction: the offset before */
	tcp_opts(&t, 5000, 0xfffffff4u, TA, opt, 0);
	assert_true(nftdp_ct_seqadj_tcp(t.buf + 20, &here, &peer));
	assert_int_equal(rd32(t.buf + 24), 5000);
	assert_int_equal(rd32(t.buf + 28), 0xfffffff0u);
	/* no ACK: the ack field and the options are left alone */
	tcp_opts(&t, 5010, 0x14, TS, opt, 20);
	assert_true(nftdp_ct_seqadj_tcp(t.buf + 20, &here, &peer));
	assert_int_equal(rd32(t.buf + 28), 0x14);
	assert_int_equal(rd32(t.buf + 20 + 32), 0x10);
	assert_csums(&t);
	/* a partial option fails (the kernel drops the packet) */
	{
		uint8_t bad[4] = {1, 1, 8, 10}; /* timestamps of 10 bytes in 2 */

		tcp_opts(&t, 5010, 0x14, TA, bad, 4);
		assert_false(nftdp_ct_seqadj_tcp(t.buf + 20, &here, &peer));
	}
	/* a SACK of a length that is no whole number of blocks is skipped */
	{
		uint8_t odd[12] = {5, 12, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0};

		tcp_opts(&t, 5010, 0x14, TA, odd, 12);
		assert_true(nftdp_ct_seqadj_tcp(t.buf + 20, &here, &peer));
		assert_int_equal(rd32(t.buf + 20 + 22), 1);
		assert_csums(&t);
	}
}

static void test_fmt_cmd(void **state)
{
	union nftdp_ct_addr a = {0};
	char buf[96];

	(void)state;
	assert_int_equal(inet_pton(AF_INET, "10.2.255.254", &a.ip), 1);
	assert_int_equal(
	    nftdp_ct_ftp_fmt_cmd(NFPROTO_IPV4, CT_FTP_PORT, buf, sizeof(buf), &a, 40000), 19);
	assert_string_equal(buf, "10,2,255,254,156,64");
	assert_true(nftdp_ct_ftp_fmt_cmd(NFPROTO_IPV4, CT_FTP_PASV, buf, sizeof(buf), &a, 21) > 0);
	assert_string_equal(buf, "10,2,255,254,0,21");
	assert_true(nftdp_ct_ftp_fmt_cmd(NFPROTO_IPV4, CT_FTP_EPRT, buf, sizeof(buf), &a, 5) > 0);
	assert_string_equal(buf, "|1|10.2.255.254|5|");
	assert_true(nftdp_ct_ftp_fmt_cmd(NFPROTO_IPV6, CT_FTP_EPSV, buf, sizeof(buf), &a, 6446) >
		    0);
	assert_string_equal(buf, "|||6446|");
	/* %pI6: not compressed, four lower-case digits a group */
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:2::ffff", a.u8), 1);
	assert_int_equal(
	    nftdp_ct_ftp_fmt_cmd(NFPROTO_IPV6, CT_FTP_EPRT, buf, sizeof(buf), &a, 65535),
	    3 + 39 + 7);
	assert_string_equal(buf, "|2|2001:0db8:0002:0000:0000:0000:0000:ffff|65535|");
	/* too small a buffer: nothing */
	assert_int_equal(nftdp_ct_ftp_fmt_cmd(NFPROTO_IPV6, CT_FTP_EPRT, buf, 20, &a, 1), 0);
}

/* the dataplane's resize: the fixture's buffer is the mbuf */
static bool room = true;
static bool resize(void *arg, struct nftdp_vm_pkt *pkt, uint32_t len)
{
	(void)arg;
	if (!room && len > pkt->len)
		return false;
	if (len > sizeof(((struct tpkt *)0)->buf))
		return false;
	pkt->skb_len += len - pkt->len;
	pkt->len = len;
	return true;
}

static struct env *env_nat(void)
{
	struct env *e = calloc(1, sizeof(*e));
	struct nftdp_ct_config cfg = {.max_entries = 64, .hash_seed = 0x1234};

	assert_non_null(e);
	cfg.pkt_resize = resize;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &e->s), 0);
	e->now = 1000000;
	room = true;
	return e;
}

/*
 * One segment of a flow through conntrack, dnat at prerouting, the helper
 * on the first packet, snat at postrouting, confirm. a is the client as it
 * sends; the server sees it as the NAT gives. Returns the confirm verdict,
 * the packet as it leaves in t, and the state bits in *st.
 */
static struct nftdp_ct_entry *last_e; /* of the latest packet through() */

static unsigned int through(struct env *en, struct tpkt *t, const struct nftdp_ct_nat_range *dnat,
			    const struct nftdp_ct_nat_range *snat, uint32_t *st)
{
	unsigned int v;

	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	assert_non_null(t->pkt.ct);
	*st = nftdp_ct_vm_ops.state(t->pkt.ct);
	last_e = (struct nftdp_ct_entry *)((uintptr_t)t->pkt.ct & ~(uintptr_t)7);
	if (*st & ST_NEW)
		nftdp_ct_vm_ops.helper(t->pkt.ct, &ftp_h);
	if (nftdp_ct_nat_need_chains(&t->pkt, NF_INET_PRE_ROUTING) && dnat)
		assert_int_equal(nftdp_ct_nat_setup(en->s, &t->pkt, dnat, NFTDP_CT_MANIP_DST),
				 NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	if (nftdp_ct_nat_need_chains(&t->pkt, NF_INET_POST_ROUTING) && snat)
		assert_int_equal(nftdp_ct_nat_setup(en->s, &t->pkt, snat, NFTDP_CT_MANIP_SRC),
				 NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	v = nftdp_ct_confirm(en->s, &t->pkt, NF_ACCEPT);
	t->len = t->pkt.len;
	return v;
}

/* a TCP connection as each end sees it: seq in the sender's space, acks of
 * what reached the sender (off: what the helper added to the other's
 * stream) */
struct nflow {
	bool v6;
	const char *c, *s_seen, *s, *c_seen; /* client and the server it sees; and back */
	uint16_t cp, sp;
	uint32_t seq[2];
	int32_t off[2];
};

static unsigned int nsend(struct env *en, struct nflow *f, int dir, uint8_t flags, const char *text,
			  struct tpkt *t, const struct nftdp_ct_nat_range *dnat,
			  const struct nftdp_ct_nat_range *snat, uint32_t *st)
{
	uint32_t n = text ? (uint32_t)strlen(text) : 0;
	uint8_t h[400];

	tcp_hdr(h, dir ? f->sp : f->cp, dir ? f->cp : f->sp, f->seq[dir],
		(flags & TA) ? f->seq[!dir] + (uint32_t)f->off[!dir] : 0, flags, 65535, 0);
	if (n)
		memcpy(h + 20, text, n);
	build(t, f->v6, dir ? f->s : f->c, dir ? f->c_seen : f->s_seen, IPPROTO_TCP, h, 20 + n);
	f->seq[dir] += n + ((flags & TS) ? 1 : 0);
	return through(en, t, dnat, snat, st);
}

static const char *text_of(const struct tpkt *t, uint32_t hl)
{
	static char s[400];
	uint32_t off = hl + (uint32_t)(t->buf[hl + 12] >> 4) * 4;

	memcpy(s, t->buf + off, t->len - off);
	s[t->len - off] = 0;
	return s;
}

static void login(struct env *en, struct nflow *f, const struct nftdp_ct_nat_range *dnat,
		  const struct nftdp_ct_nat_range *snat)
{
	struct tpkt t;
	uint32_t st;

	assert_int_equal(nsend(en, f, 0, TS, NULL, &t, dnat, snat, &st), NF_ACCEPT);
	assert_true(st & ST_NEW);
	assert_int_equal(nsend(en, f, 1, TS | TA, NULL, &t, dnat, snat, &st), NF_ACCEPT);
	assert_int_equal(nsend(en, f, 0, TA, NULL, &t, dnat, snat, &st), NF_ACCEPT);
	assert_int_equal(nsend(en, f, 1, TA, "220 hi\r\n", &t, dnat, snat, &st), NF_ACCEPT);
	assert_int_equal(nsend(en, f, 0, TA, "USER ftp\r\n", &t, dnat, snat, &st), NF_ACCEPT);
	assert_int_equal(nsend(en, f, 1, TA, "331 ok\r\n", &t, dnat, snat, &st), NF_ACCEPT);
}

/* active mode from a masqueraded client: PORT grows by 4, later segments
 * and the server's acks are adjusted, the window check agrees, the data
 * connection to the NAT address is related and reaches the client */
static void test_port_snat(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range snat = nat_to("10.2.255.254", 0);
	struct nflow f = {false, "10.1.0.1", "10.2.0.1",	  "10.2.0.1", "10.2.255.254",
			  40100, 21,	     {0xffffffe0u, 5000}, {0, 0}};
	struct nftdp_ct_entry *ctl;
	struct ct_help *h;
	struct tpkt t;
	uint32_t st, before;

	(void)state;
	login(en, &f, NULL, &snat);
	/* a command split over two segments is not read, so not rewritten */
	assert_int_equal(nsend(en, &f, 0, TA, "NOOP ", &t, NULL, &snat, &st), NF_ACCEPT);
	assert_int_equal(nsend(en, &f, 0, TA, "PORT 10,1,0,1,156,64\r\n", &t, NULL, &snat, &st),
			 NF_ACCEPT);
	assert_string_equal(text_of(&t, 20), "PORT 10,1,0,1,156,64\r\n");
	assert_int_equal(nsend(en, &f, 1, TA, "500 ?\r\n", &t, NULL, &snat, &st), NF_ACCEPT);
	before = f.seq[0];
	assert_int_equal(nsend(en, &f, 0, TA, "PORT 10,1,0,1,156,64\r\n", &t, NULL, &snat, &st),
			 NF_ACCEPT);
	ctl = last_e;
	h = &en->s->help[ctl - en->s->entries];
	assert_string_equal(text_of(&t, 20), "PORT 10,2,255,254,156,64\r\n");
	assert_int_equal(t.len, 20 + 20 + 26);
	assert_int_equal((t.buf[2] << 8 | t.buf[3]), t.len);
	assert_int_equal(rd32(t.buf + 24), before); /* its own seq is not moved */
	assert_csums(&t);
	assert_true(ctl->status & IPS_SEQ_ADJUST);
	assert_int_equal(h->seq[0].correction_pos, before);
	assert_int_equal(h->seq[0].offset_after, 4);
	f.off[0] = 4;
	/* the server acks in its view: in window, and taken back by 4 */
	assert_int_equal(nsend(en, &f, 1, TA, "200 ok\r\n", &t, NULL, &snat, &st), NF_ACCEPT);
	assert_true(st & ST_ESTABLISHED);
	assert_int_equal(rd32(t.buf + 28), f.seq[0]);
	assert_csums(&t);
	/* a retransmitted PORT is rewritten again and counted once */
	f.seq[0] = before;
	assert_int_equal(nsend(en, &f, 0, TA, "PORT 10,1,0,1,156,64\r\n", &t, NULL, &snat, &st),
			 NF_ACCEPT);
	assert_string_equal(text_of(&t, 20), "PORT 10,2,255,254,156,64\r\n");
	assert_int_equal(rd32(t.buf + 24), before);
	assert_int_equal(h->seq[0].offset_after, 4);
	/* the client's next segment moves by 4, across 2^32 */
	assert_int_equal(nsend(en, &f, 0, TA, "LIST\r\n", &t, NULL, &snat, &st), NF_ACCEPT);
	assert_int_equal(rd32(t.buf + 24), f.seq[0] - 6 + 4);
	assert_csums(&t);
	/* the data connection: related, DNATed to the client */
	{
		struct nflow g = {false, "10.2.0.1", "10.2.255.254", "10.1.0.1", "10.2.0.1",
				  20,	 40000,	     {11000, 13000}, {0, 0}};

		assert_int_equal(nsend(en, &g, 0, TS, NULL, &t, NULL, NULL, &st), NF_ACCEPT);
		assert_true(st & ST_RELATED);
		assert_ip4(t.buf + 16, "10.1.0.1");
		assert_true(last_e->status & IPS_DST_NAT);
	}
	env_free(en);
}

/* passive mode from a server behind dnat: 227 grows by 2; no room to grow
 * drops the packet and takes the expectation back */
static void test_pasv_dnat(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range dnat = nat_to("10.2.0.1", 0);
	struct nflow f = {false, "10.1.0.2", "10.2.0.100", "10.2.0.1", "10.1.0.2",
			  40200, 21,	     {2000, 6000}, {0, 0}};
	struct tpkt t;
	uint32_t st;

	(void)state;
	login(en, &f, &dnat, NULL);
	assert_int_equal(nsend(en, &f, 0, TA, "PASV\r\n", &t, &dnat, NULL, &st), NF_ACCEPT);
	room = false;
	assert_int_equal(nsend(en, &f, 1, TA, "227 Entering Passive Mode (10,2,0,1,195,80).\r\n",
			       &t, &dnat, NULL, &st),
			 NF_DROP);
	assert_string_equal(text_of(&t, 20), "227 Entering Passive Mode (10,2,0,1,195,80).\r\n");
	assert_false(last_e->status & IPS_SEQ_ADJUST);
	{
		struct nflow g = {false, "10.1.0.2", "10.2.0.100", "10.2.0.1", "10.1.0.2",
				  40001, 50000,	     {7000, 9000}, {0, 0}};

		assert_int_equal(nsend(en, &g, 0, TS, NULL, &t, NULL, NULL, &st), NF_ACCEPT);
		assert_false(st & ST_RELATED);
	}
	room = true;
	f.seq[1] -= (uint32_t)strlen("227 Entering Passive Mode (10,2,0,1,195,80).\r\n");
	assert_int_equal(nsend(en, &f, 1, TA, "227 Entering Passive Mode (10,2,0,1,195,80).\r\n",
			       &t, &dnat, NULL, &st),
			 NF_ACCEPT);
	assert_string_equal(text_of(&t, 20), "227 Entering Passive Mode (10,2,0,100,195,80).\r\n");
	assert_csums(&t);
	f.off[1] = 2;
	assert_int_equal(nsend(en, &f, 0, TA, "RETR f\r\n", &t, &dnat, NULL, &st), NF_ACCEPT);
	assert_true(st & ST_ESTABLISHED);
	assert_int_equal(rd32(t.buf + 28), f.seq[1]);
	{
		struct nflow g = {false, "10.1.0.2", "10.2.0.100", "10.2.0.1", "10.1.0.2",
				  40002, 50000,	     {7000, 9000}, {0, 0}};

		assert_int_equal(nsend(en, &g, 0, TS, NULL, &t, NULL, NULL, &st), NF_ACCEPT);
		assert_true(st & ST_RELATED);
		assert_ip4(t.buf + 16, "10.2.0.1");
	}
	env_free(en);
}

/* IPv6: EPRT |2| from a source-NATed client takes the long form; 229 from
 * a destination-NATed server keeps its length; a malformed EPRT is partial */
static void test_eprt_epsv6(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range snat = nat_to("2001:db8:2::ffff", 0);
	struct nftdp_ct_nat_range dnat = nat_to("2001:db8:2::1", 0);
	struct nflow f = {
	    true, "2001:db8:1::1", "2001:db8:2::1", "2001:db8:2::1", "2001:db8:2::ffff", 40100,
	    21,	  {1000, 5000},	   {0, 0}};
	struct nflow p = {true,
			  "2001:db8:1::2",
			  "2001:db8:2::100",
			  "2001:db8:2::1",
			  "2001:db8:1::2",
			  40200,
			  21,
			  {3000, 8000},
			  {0, 0}};
	struct tpkt t;
	uint32_t st;

	(void)state;
	login(en, &f, NULL, &snat);
	assert_int_equal(nsend(en, &f, 0, TA, "EPRT |2|2001:db8:1::1|", &t, NULL, &snat, &st),
			 NF_DROP);
	f.seq[0] -= 22;
	assert_int_equal(
	    nsend(en, &f, 0, TA, "EPRT |2|2001:db8:1::1|40000|\r\n", &t, NULL, &snat, &st),
	    NF_ACCEPT);
	assert_string_equal(text_of(&t, 40),
			    "EPRT |2|2001:0db8:0002:0000:0000:0000:0000:ffff|40000|\r\n");
	assert_int_equal((t.buf[4] << 8 | t.buf[5]), t.len - 40);
	assert_csums(&t);
	f.off[0] = 39 - 13;
	assert_int_equal(nsend(en, &f, 1, TA, "200 ok\r\n", &t, NULL, &snat, &st), NF_ACCEPT);
	assert_true(st & ST_ESTABLISHED);
	assert_int_equal(rd32(t.buf + 48), f.seq[0]);

	login(en, &p, &dnat, NULL);
	assert_int_equal(nsend(en, &p, 0, TA, "EPSV\r\n", &t, &dnat, NULL, &st), NF_ACCEPT);
	assert_int_equal(nsend(en, &p, 1, TA, "229 Entering Extended Passive Mode (|||6446|)\r\n",
			       &t, &dnat, NULL, &st),
			 NF_ACCEPT);
	assert_string_equal(text_of(&t, 40), "229 Entering Extended Passive Mode (|||6446|)\r\n");
	{
		struct nflow g = {true,
				  "2001:db8:1::2",
				  "2001:db8:2::100",
				  "2001:db8:2::1",
				  "2001:db8:1::2",
				  40001,
				  6446,
				  {7000, 9000},
				  {0, 0}};

		assert_int_equal(nsend(en, &g, 0, TS, NULL, &t, NULL, NULL, &st), NF_ACCEPT);
		assert_true(st & ST_RELATED);
	}
	env_free(en);
}

/* ctnetlink: an entry made with an adjustment has it and lists it; an
 * update of a traffic entry without the extension leaves nothing */
static void test_inject(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_change c;
	struct nftdp_ct_info ci;
	struct tflow f = {false, "10.0.0.2", "192.0.2.10", 40000, 80, 1000, 5000};

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tuple[0].l3proto = c.tuple[1].l3proto = NFPROTO_IPV4;
	c.tuple[0].l4proto = c.tuple[1].l4proto = IPPROTO_TCP;
	inet_pton(AF_INET, "10.9.0.1", &c.tuple[0].src.ip);
	inet_pton(AF_INET, "10.9.0.2", &c.tuple[0].dst.ip);
	c.tuple[1].src = c.tuple[0].dst;
	c.tuple[1].dst = c.tuple[0].src;
	c.tuple[0].sport = c.tuple[1].dport = htons(1234);
	c.tuple[0].dport = c.tuple[1].sport = htons(21);
	c.has = NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_CREATE |
		NFTDP_CT_CHG_TIMEOUT | NFTDP_CT_CHG_SEQADJ;
	c.timeout_s = 100;
	c.zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
	c.seqadj_dirs = 2;
	c.seqadj_parts[1] = 7;
	c.seqadj[1] = (struct nftdp_ct_seqadj){77, 0, 5};
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, &ci), 0);
	assert_true(ci.status & IPS_SEQ_ADJUST);
	assert_true(ci.seqadj);
	assert_int_equal(ci.seq[0].offset_after, 0);
	assert_int_equal(ci.seq[1].correction_pos, 77);
	assert_int_equal(ci.seq[1].offset_after, 5);
	/* an update missing OFFSET_AFTER: -EINVAL, the parts before it written */
	c.has = NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_SEQADJ;
	c.seqadj_parts[1] = 3;
	c.seqadj[1] = (struct nftdp_ct_seqadj){7, 3, 99};
	assert_int_equal(nftdp_ct_update(en->s, &c, en->now, &ci), -EINVAL);
	c.has = NFTDP_CT_CHG_ORIG;
	assert_int_equal(nftdp_ct_update(en->s, &c, en->now, &ci), 0);
	assert_int_equal(ci.seq[1].correction_pos, 7);
	assert_int_equal(ci.seq[1].offset_before, 3);
	assert_int_equal(ci.seq[1].offset_after, 5);
	/* a connection from traffic, no helper: the adjustment is ignored */
	handshake(en, &f);
	memset(&c, 0, sizeof(c));
	c.tuple[0].l3proto = NFPROTO_IPV4;
	c.tuple[0].l4proto = IPPROTO_TCP;
	inet_pton(AF_INET, "10.0.0.2", &c.tuple[0].src.ip);
	inet_pton(AF_INET, "192.0.2.10", &c.tuple[0].dst.ip);
	c.tuple[0].sport = htons(40000);
	c.tuple[0].dport = htons(80);
	c.has = NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_SEQADJ;
	c.seqadj_dirs = 1;
	c.seqadj_parts[0] = 7;
	c.seqadj[0] = (struct nftdp_ct_seqadj){1, 2, 3};
	assert_int_equal(nftdp_ct_update(en->s, &c, en->now, &ci), 0);
	assert_false(ci.status & IPS_SEQ_ADJUST);
	assert_false(ci.seqadj);
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arith),     cmocka_unit_test(test_tcp_rewrite),
	    cmocka_unit_test(test_fmt_cmd),   cmocka_unit_test(test_port_snat),
	    cmocka_unit_test(test_pasv_dnat), cmocka_unit_test(test_eprt_epsv6),
	    cmocka_unit_test(test_inject),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
