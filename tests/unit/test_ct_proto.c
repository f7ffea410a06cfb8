// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL):
 * UDP, ICMP/ICMPv6 and SCTP tracking, related ICMP errors in
 * both directions for IPv4 and IPv6, and malformed packets of every
 * protocol.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

static void test_udp(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;
	unsigned int ctinfo;

	(void)state;
	udp(&t, false, "10.0.0.1", "10.0.0.53", 4000, 53, 20);
	assert_int_equal(xmit(en, &t, &e), ST_NEW);
	assert_int_equal(left_s(en, e), 30);
	en->now += 100;
	udp(&t, false, "10.0.0.1", "10.0.0.53", 4000, 53, 20);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW); /* new until a reply */
	udp(&t, false, "10.0.0.53", "10.0.0.1", 53, 4000, 40);
	assert_int_equal(xmit_v(en, &t, NF_ACCEPT, &e2, &ctinfo), ST_ESTABLISHED);
	assert_ptr_equal(e, e2);
	assert_int_equal(ctinfo, IP_CT_ESTABLISHED_REPLY);
	assert_true(e->status & IPS_SEEN_REPLY);
	assert_false(e->status & IPS_ASSURED);
	assert_int_equal(left_s(en, e), 30);
	/* within 2 s: replied but not yet a stream */
	udp(&t, false, "10.0.0.1", "10.0.0.53", 4000, 53, 20);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_false(e->status & IPS_ASSURED);
	assert_int_equal(left_s(en, e), 30);
	/* still active after 2 s: a stream, assured, 120 s */
	en->now += 3000;
	udp(&t, false, "10.0.0.53", "10.0.0.1", 53, 4000, 20);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_true(e->status & IPS_ASSURED);
	assert_int_equal(left_s(en, e), 120);
	assert_int_equal(nftdp_ct_acct_get(e->shard, e, 0).bytes, 3 * 48);
	assert_int_equal(nftdp_ct_acct_get(e->shard, e, 1).bytes, 68 + 48);
	/* malformed length, bad checksum: invalid; checksum 0: fine */
	udp(&t, false, "10.9.0.1", "10.9.0.2", 1, 2, 10);
	t.buf[25] = 200;
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	udp(&t, false, "10.9.0.1", "10.9.0.2", 1, 2, 10);
	t.buf[26] ^= 0x55;
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	udp(&t, true, "2001:db8::1", "2001:db8::2", 1, 2, 10);
	t.buf[46] = t.buf[47] = 0;
	assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	/* Ethernet padding after the datagram is not part of it */
	udp(&t, false, "10.9.0.5", "10.9.0.6", 1, 2, 1);
	memset(t.buf + t.len, 0xa5, 17);
	t.pkt.len += 17;
	assert_int_equal(xmit(en, &t, &e), ST_NEW);
	assert_int_equal(nftdp_ct_acct_get(e->shard, e, 0).bytes, 29);
	env_free(en);
}

static void test_icmp(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;
	uint8_t tc[2];

	(void)state;
	icmp(&t, false, "10.0.0.1", "10.0.0.2", 8, 0, 0x77, NULL, 0);
	assert_int_equal(xmit(en, &t, &e), ST_NEW);
	memcpy(tc, &e->tuple[1].dport, 2);
	assert_int_equal(tc[0], 0); /* the reply tuple is the echo reply */
	assert_int_equal(ntohs(e->tuple[1].sport), 0x77);
	assert_int_equal(left_s(en, e), 30);
	icmp(&t, false, "10.0.0.2", "10.0.0.1", 0, 0, 0x77, NULL, 0);
	assert_int_equal(xmit(en, &t, &e2), ST_ESTABLISHED);
	assert_ptr_equal(e, e2);
	/* an echo reply with no request; other id */
	icmp(&t, false, "10.0.0.2", "10.0.0.1", 0, 0, 0x78, NULL, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* a type with no inverse (router advertisement) */
	icmp(&t, false, "10.0.0.2", "10.0.0.1", 9, 0, 0, NULL, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* bad checksum */
	icmp(&t, false, "10.0.0.1", "10.0.0.2", 8, 0, 0x79, NULL, 0);
	t.buf[22] ^= 1;
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* ICMPv6 echo */
	icmp(&t, true, "2001:db8::1", "2001:db8::2", 128, 0, 5, NULL, 0);
	assert_int_equal(xmit(en, &t, &e), ST_NEW);
	icmp(&t, true, "2001:db8::2", "2001:db8::1", 129, 0, 5, NULL, 0);
	assert_int_equal(xmit(en, &t, &e2), ST_ESTABLISHED);
	assert_ptr_equal(e, e2);
	/* neighbour solicitation: untracked */
	icmp(&t, true, "fe80::1", "ff02::1:ff00:2", 135, 0, 0, NULL, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_UNTRACKED);
	env_free(en);
}

/* ICMP errors quoting a tracked flow: related, in both directions */
static void related_case(bool v6)
{
	const char *cli = v6 ? "2001:db8:1::10" : "10.0.1.10";
	const char *srv = v6 ? "2001:db8:2::20" : "10.0.2.20";
	const char *rtr = v6 ? "2001:db8:3::1" : "10.0.3.1";
	uint8_t err_type = v6 ? 1 : 3;
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *e, *e2;
	struct tpkt q, t;
	unsigned int ctinfo;

	udp(&q, v6, cli, srv, 5000, 7000, 12);
	assert_int_equal(xmit(en, &q, &e), ST_NEW);
	/* an error to the client quoting its packet: related, reply dir */
	udp(&q, v6, cli, srv, 5000, 7000, 12);
	icmp(&t, v6, rtr, cli, err_type, 3, 0, q.buf, q.len);
	assert_int_equal(xmit_v(en, &t, NF_ACCEPT, &e2, &ctinfo), ST_RELATED);
	assert_ptr_equal(e, e2);
	assert_int_equal(ctinfo, IP_CT_RELATED_REPLY);
	/* an error to the server quoting its reply: related, original dir */
	udp(&q, v6, srv, cli, 7000, 5000, 12);
	icmp(&t, v6, rtr, srv, err_type, 1, 0, q.buf, q.len);
	assert_int_equal(xmit_v(en, &t, NF_ACCEPT, &e2, &ctinfo), ST_RELATED);
	assert_int_equal(ctinfo, IP_CT_RELATED);
	/* the quote may be truncated to its first 8 L4 bytes */
	udp(&q, v6, cli, srv, 5000, 7000, 12);
	icmp(&t, v6, rtr, cli, err_type, 0, 0, q.buf, (v6 ? 40 : 20) + 8);
	assert_int_equal(xmit(en, &t, NULL), ST_RELATED);
	/* outer destination is not the flow's end: invalid */
	udp(&q, v6, cli, srv, 5000, 7000, 12);
	icmp(&t, v6, rtr, rtr, err_type, 3, 0, q.buf, q.len);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* quoting an unknown flow: invalid */
	udp(&q, v6, cli, srv, 5001, 7000, 12);
	icmp(&t, v6, rtr, cli, err_type, 3, 0, q.buf, q.len);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* a quote too short for the ports: invalid */
	udp(&q, v6, cli, srv, 5000, 7000, 12);
	icmp(&t, v6, rtr, cli, err_type, 3, 0, q.buf, (v6 ? 40 : 20) + 2);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* related packets do not count on the entry */
	assert_int_equal(nftdp_ct_acct_get(e->shard, e, 0).packets +
			     nftdp_ct_acct_get(e->shard, e, 1).packets,
			 1);
	assert_int_equal(en->s->st.related, 3);
	env_free(en);
}

static void test_related_ipv4(void **state)
{
	(void)state;
	related_case(false);
}

static void test_related_ipv6(void **state)
{
	(void)state;
	related_case(true);
}

/* a TCP flow and an ICMP error quoting an ICMP echo */
static void test_related_tcp_and_echo(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.5.0.1", "10.5.0.2", 1111, 80, 1, 1};
	struct nftdp_ct_entry *e = handshake(en, &f), *e2;
	struct tpkt q, t;

	(void)state;
	seg(&q, &f, 0, TA, f.aseq, f.bseq, 0);
	icmp(&t, false, "10.5.0.254", "10.5.0.1", 11, 0, 0, q.buf, 28);
	assert_int_equal(xmit(en, &t, &e2), ST_RELATED);
	assert_ptr_equal(e, e2);
	icmp(&q, false, "10.5.0.1", "10.5.0.9", 8, 0, 42, NULL, 0);
	assert_int_equal(xmit(en, &q, &e), ST_NEW);
	icmp(&q, false, "10.5.0.1", "10.5.0.9", 8, 0, 42, NULL, 0);
	icmp(&t, false, "10.5.0.254", "10.5.0.1", 3, 1, 0, q.buf, 28);
	assert_int_equal(xmit(en, &t, &e2), ST_RELATED);
	assert_ptr_equal(e, e2);
	env_free(en);
}

static uint32_t sx(struct env *en, bool v6, int dir, uint16_t port, uint32_t tag, const uint8_t *c,
		   uint32_t n, struct nftdp_ct_entry **e)
{
	struct tpkt t;

	sctp_pkt(&t, v6, dir, port, tag, c, n);
	return xmit(en, &t, e);
}

/*
 * The kernel's sctp_conntracks, transcribed again as strings (rows init,
 * init_ack, abort, shutdown, shutdown_ack, error, cookie_echo, cookie_ack,
 * shutdown_comp, heartbeat, heartbeat_ack; columns sNO sCL sCW sCE sES sSS
 * sSR sSA sHS), compared cell by cell with ct_sctp.c's table.
 */
static const char *const sctp_orig[11] = {
    "CL CL CW CE ES CL CL SA CW", "CL CL CW CE ES SS SR SA CL", "CL CL CL CL CL CL CL CL CL",
    "CL CL CW CE SS SS SR SA CL", "SA CL CW CE ES SA SA SA SA", "CL CL CW CE ES SS SR SA CL",
    "CL CL CE CE ES SS SR SA CL", "CL CL CW ES ES SS SR SA CL", "CL CL CW CE ES SS SR CL CL",
    "HS CL CW CE ES SS SR SA HS", "CL CL CW CE ES SS SR SA HS"};
static const char *const sctp_reply[11] = {
    "IV CL CW CE ES SS SR SA IV", "IV CW CW CE ES SS SR SA IV", "IV CL CL CL CL CL CL CL IV",
    "IV CL CW CE SR SS SR SA IV", "IV CL CW CE ES SA SA SA IV", "IV CL CW CL ES SS SR SA IV",
    "IV CL CE CE ES SS SR SA IV", "IV CL CW ES ES SS SR SA IV", "IV CL CW CE ES SS SR CL IV",
    "IV CL CW CE ES SS SR SA HS", "IV CL CW CE ES SS SR SA ES"};

static int sctp_code(const char *c)
{
	static const char *const names[] = {"NO", "CL", "CW", "CE", "ES", "SS", "SR", "SA", "HS"};

	for (int i = 0; i < 9; i++)
		if (!strncmp(c, names[i], 2))
			return i;
	return SCTP_CONNTRACK_MAX; /* IV */
}

static void test_sctp(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *e, *e2;
	uint8_t c[64], v[8] = {0};
	const uint32_t ct = 0x1111aaaa, st = 0x2222bbbb; /* tags as written, big-endian */
	uint32_t n;

	(void)state;
	for (int d = 0; d < 2; d++)
		for (int r = 0; r < 11; r++)
			for (int col = 0; col < 9; col++)
				assert_int_equal(
				    nftdp_ct_sctp_table(d, r, col),
				    sctp_code((d ? sctp_reply : sctp_orig)[r] + 3 * col));
	for (int v6 = 0; v6 < 2; v6++) {
		uint16_t port = (uint16_t)(5000 + v6 * 10);

		/* the handshake: INIT (CLOSED, 10 s), INIT_ACK (COOKIE_WAIT, 3 s),
		 * COOKIE_ECHO (COOKIE_ECHOED), COOKIE_ACK (ESTABLISHED, 210 s, ASSURED) */
		n = init_chunk(c, 1, ct);
		assert_int_equal(sx(en, v6, 0, port, 0, c, n, &e), ST_NEW);
		assert_int_equal(e->proto.sctp.state, SCTP_CONNTRACK_CLOSED);
		assert_int_equal(left_s(en, e), 10);
		assert_int_equal(e->proto.sctp.vtag[IP_CT_DIR_REPLY], htonl(ct));
		n = init_chunk(c, 2, st);
		assert_int_equal(sx(en, v6, 1, port, ct, c, n, &e2), ST_ESTABLISHED);
		assert_ptr_equal(e, e2);
		assert_int_equal(e->proto.sctp.state, SCTP_CONNTRACK_COOKIE_WAIT);
		assert_int_equal(left_s(en, e), 3);
		assert_int_equal(e->proto.sctp.vtag[IP_CT_DIR_ORIGINAL], htonl(st));
		/* a COOKIE_ECHO with the wrong tag is invalid (8.5.1 D) */
		n = chunk(c, 10, 0, v, 8);
		assert_int_equal(sx(en, v6, 0, port, ct, c, n, NULL), ST_INVALID);
		assert_int_equal(sx(en, v6, 0, port, st, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(e->proto.sctp.state, SCTP_CONNTRACK_COOKIE_ECHOED);
		n = chunk(c, 11, 0, NULL, 0);
		assert_int_equal(sx(en, v6, 1, port, ct, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(e->proto.sctp.state, SCTP_CONNTRACK_ESTABLISHED);
		assert_int_equal(left_s(en, e), 210);
		assert_true(e->status & IPS_ASSURED);
		/* DATA + SACK in one packet, right and wrong tag */
		n = chunk(c, 0, 3, v, 8);
		n += chunk(c + n, 3, 0, v, 8);
		assert_int_equal(sx(en, v6, 0, port, st, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(sx(en, v6, 0, port, st ^ 1, c, n, NULL), ST_INVALID);
		/* a COOKIE_ACK that is not the first chunk, an empty chunk: invalid */
		n = chunk(c, 0, 3, v, 8);
		n += chunk(c + n, 11, 0, NULL, 0);
		assert_int_equal(sx(en, v6, 1, port, ct, c, n, NULL), ST_INVALID);
		n = chunk(c, 0, 3, v, 8);
		c[n] = 3;
		c[n + 1] = c[n + 2] = c[n + 3] = 0;
		assert_int_equal(sx(en, v6, 0, port, st, c, n + 4, NULL), ST_INVALID);
		/* no chunk at all, a bad CRC */
		assert_int_equal(sx(en, v6, 0, port, st, c, 0, NULL), ST_INVALID);
		{
			struct tpkt t;

			n = chunk(c, 0, 3, v, 8);
			sctp_pkt(&t, v6, 0, port, st, c, n);
			t.buf[(v6 ? 40 : 20) + 9] ^= 1;
			assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
		}
		/* SHUTDOWN (SHUTDOWN_SENT, may be evicted), SHUTDOWN_ACK,
		 * SHUTDOWN_COMPLETE (CLOSED) */
		n = chunk(c, 7, 0, v, 4);
		assert_int_equal(sx(en, v6, 0, port, st, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(e->proto.sctp.state, SCTP_CONNTRACK_SHUTDOWN_SENT);
		assert_true(nftdp_ct_sctp_can_early_drop(e));
		n = chunk(c, 8, 0, NULL, 0);
		assert_int_equal(sx(en, v6, 1, port, ct, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(e->proto.sctp.state, SCTP_CONNTRACK_SHUTDOWN_ACK_SENT);
		n = chunk(c, 14, 0, NULL, 0);
		assert_int_equal(sx(en, v6, 0, port, ct, c, n, NULL),
				 ST_INVALID); /* peer's tag, no T */
		assert_int_equal(sx(en, v6, 0, port, st, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(e->proto.sctp.state, SCTP_CONNTRACK_CLOSED);
		assert_int_equal(left_s(en, e), 10);
		assert_false(nftdp_ct_sctp_can_early_drop(e));
		/* an INIT retransmit on the closed entry: allowed, not renewed */
		en->now += 4000;
		n = init_chunk(c, 1, ct);
		assert_int_equal(sx(en, v6, 0, port, 0, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(left_s(en, e), 6);

		/* out of the blue: ABORT, SHUTDOWN_COMPLETE, COOKIE_ACK, an INIT
		 * with a tag, an INIT too short for its header: invalid, no entry */
		n = chunk(c, 6, 0, NULL, 0);
		assert_int_equal(sx(en, v6, 0, port + 1, 7, c, n, &e2), ST_INVALID);
		n = chunk(c, 14, 0, NULL, 0);
		assert_int_equal(sx(en, v6, 0, port + 1, 7, c, n, NULL), ST_INVALID);
		n = chunk(c, 11, 0, NULL, 0);
		assert_int_equal(sx(en, v6, 0, port + 1, 7, c, n, NULL), ST_INVALID);
		n = init_chunk(c, 1, ct);
		assert_int_equal(sx(en, v6, 0, port + 1, 7, c, n, NULL), ST_INVALID);
		n = chunk(c, 1, 0, v, 8);
		assert_int_equal(sx(en, v6, 0, port + 1, 0, c, n, NULL), ST_INVALID);
		/* an ABORT from the server with the T flag carries the client's
		 * own tag: CLOSED */
		n = init_chunk(c, 1, ct);
		assert_int_equal(sx(en, v6, 0, port + 2, 0, c, n, &e2), ST_NEW);
		n = init_chunk(c, 2, st);
		assert_int_equal(sx(en, v6, 1, port + 2, ct, c, n, NULL), ST_ESTABLISHED);
		n = chunk(c, 6, 1, NULL, 0);
		assert_int_equal(sx(en, v6, 1, port + 2, ct, c, n, NULL), ST_INVALID);
		assert_int_equal(sx(en, v6, 1, port + 2, st, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(e2->proto.sctp.state, SCTP_CONNTRACK_CLOSED);
		/* a HEARTBEAT on a new path: HEARTBEAT_SENT (30 s); its ACK
		 * learns the other tag: ESTABLISHED */
		n = chunk(c, 4, 0, v, 8);
		assert_int_equal(sx(en, v6, 0, port + 3, 0x77, c, n, &e2), ST_NEW);
		assert_int_equal(e2->proto.sctp.state, SCTP_CONNTRACK_HEARTBEAT_SENT);
		assert_int_equal(left_s(en, e2), 30);
		n = chunk(c, 5, 0, v, 8);
		assert_int_equal(sx(en, v6, 1, port + 3, 0x88, c, n, NULL), ST_ESTABLISHED);
		assert_int_equal(e2->proto.sctp.state, SCTP_CONNTRACK_ESTABLISHED);
		assert_int_equal(e2->proto.sctp.vtag[IP_CT_DIR_REPLY], htonl(0x88));
		{
			struct nftdp_ct_info info;

			assert_int_equal(nftdp_ct_get(en->s, &e2->tuple[0], en->now, &info), 0);
			assert_int_equal(info.sctp.state, SCTP_CONNTRACK_ESTABLISHED);
			assert_int_equal(info.sctp.vtag[1], htonl(0x88));
		}
	}
	/* garbage chunks (checksum off): never read past the end */
	{
		struct nftdp_ct_config cfg = {.max_entries = 64, .no_checksum = true};
		struct env g = {.now = 1000};
		uint64_t x = 0x243f6a8885a308d3ull;

		assert_int_equal(nftdp_ct_shard_create(&cfg, &g.s), 0);
		for (int i = 0; i < 20000; i++) {
			struct tpkt t;
			struct nftdp_vm_pkt pkt;
			uint32_t len, k;
			uint8_t *buf;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			n = init_chunk(c, (uint8_t)(1 + (x & 1)), ct);
			n += chunk(c + n, 0, 3, v, 8);
			for (k = 0; k < 4; k++)
				c[(x >> (8 * k)) % n] = (uint8_t)(x >> (40 + k));
			sctp_pkt(&t, (x >> 60) & 1, (int)((x >> 61) & 1), (uint16_t)(x >> 48), 0, c,
				 n);
			len = (x >> 20) % 3 ? t.len : (uint32_t)((x >> 30) % (t.len + 1));
			buf = malloc(len ? len : 1);
			assert_non_null(buf);
			memcpy(buf, t.buf, len);
			nftdp_vm_pkt_init(&pkt, buf, len, -1, 0);
			nftdp_vm_pkt_parse_ip(&pkt);
			nftdp_ct_in(g.s, &pkt, g.now);
			nftdp_ct_confirm(g.s, &pkt, NF_ACCEPT);
			free(buf);
			g.now += 13;
			if (!(i % 64))
				nftdp_ct_gc(g.s, g.now, 16);
		}
		assert_true(g.s->st.invalid > 0);
		nftdp_ct_shard_destroy(g.s);
	}
	env_free(en);
}

static void test_malformed_packets(void **state)
{
	struct nftdp_ct_config cfg = {.max_entries = 256, .ifaddr = test_ifaddr};
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 0), sn6 = nat_to("2001:db8::5", 0);
	struct env en = {.now = 1000};
	struct tpkt seeds[8], q;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned int n_seeds = 0, i;
	uint8_t opts[40] = {2, 4, 5, 0xb4, 4, 2, 8,  10, 0, 0, 0, 1, 0, 0, 0,
			    0, 1, 3, 3,	   7, 5, 10, 0,	 0, 0, 1, 0, 0, 0, 2};

	(void)state;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	for (int v6 = 0; v6 < 2; v6++) {
		const char *a = v6 ? "2001:db8::1" : "10.0.0.1",
			   *b = v6 ? "2001:db8::2" : "10.0.0.2";
		uint8_t h[80];

		tcp_hdr(h, 1000, 80, 5, 9, TS | TA, 100, 0);
		memcpy(h + 20, opts, sizeof(opts));
		h[12] = 15 << 4;
		build(&seeds[n_seeds++], v6, a, b, IPPROTO_TCP, h, 60);
		udp(&seeds[n_seeds++], v6, a, b, 5, 53, 12);
		icmp(&seeds[n_seeds++], v6, a, b, v6 ? 128 : 8, 0, 3, NULL, 0);
		udp(&q, v6, b, a, 53, 5, 12);
		icmp(&seeds[n_seeds++], v6, b, a, v6 ? 1 : 3, 3, 0, q.buf, q.len);
	}
	for (i = 0; i < 40000; i++) {
		const struct tpkt *sd = &seeds[i % n_seeds];
		struct nftdp_vm_pkt pkt;
		uint32_t len;
		uint8_t *buf;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		len = (x >> 8) % 3 ? sd->len : (uint32_t)((x >> 16) % (sd->len + 1));
		buf = malloc(len ? len : 1);
		assert_non_null(buf);
		memcpy(buf, sd->buf, len);
		for (int k = 0; k < (int)((x >> 24) % 4) && len; k++)
			buf[(x >> (32 + 8 * k)) % len] ^= (uint8_t)(x >> (20 + k));
		nftdp_vm_pkt_init(&pkt, buf, len, -1, 0);
		nftdp_vm_pkt_parse_ip(&pkt);
		pkt.oif = 2;
		if (nftdp_ct_in(en.s, &pkt, en.now) == NF_ACCEPT && pkt.ct) {
			unsigned int v = nftdp_ct_nat_packet(en.s, &pkt, NF_INET_PRE_ROUTING);

			if (v == NF_ACCEPT && nftdp_ct_nat_need_chains(&pkt, NF_INET_POST_ROUTING))
				v = nftdp_ct_nat_setup(en.s, &pkt,
						       pkt.nfproto == NFPROTO_IPV6 ? &sn6 : &sn,
						       NFTDP_CT_MANIP_SRC);
			if (v == NF_ACCEPT)
				v = nftdp_ct_nat_packet(en.s, &pkt, NF_INET_POST_ROUTING);
			nftdp_ct_confirm(en.s, &pkt, v);
		}
		free(buf);
		en.now += 7;
		if (!(i % 64))
			nftdp_ct_gc(en.s, en.now, 32);
	}
	/* the table still holds together */
	assert_true(en.s->st.count <= 256);
	assert_true(en.s->st.invalid > 0 && en.s->st.new_ > 0);
	nftdp_ct_shard_destroy(en.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_udp),
	    cmocka_unit_test(test_icmp),
	    cmocka_unit_test(test_related_ipv4),
	    cmocka_unit_test(test_related_ipv6),
	    cmocka_unit_test(test_related_tcp_and_echo),
	    cmocka_unit_test(test_malformed_packets),
	    cmocka_unit_test(test_sctp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
