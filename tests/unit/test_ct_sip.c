// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): the sip helper (helper_sip.c). Its header
 * parsers on folded, compact, truncated and exactly-sized messages; an
 * INVITE/200/ACK call over UDP whose RTP and RTCP are related and whose
 * BYE removes what is left; failure responses; max_expected per class;
 * REGISTER's inactive permanent expectation, activated by the 2xx with the
 * Contact's expiry; TCP with several messages in one segment and a
 * message cut by its Content-Length; IPv6; messages the kernel drops;
 * nf_nat_sip's header rewrite under snat and dnat, over UDP and TCP.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

static const struct nftdp_vm_ct_helper sip_udp = {NFTDP_VM_CT_HELPER_SIP, IPPROTO_UDP, true, true};
static const struct nftdp_vm_ct_helper sip_tcp = {NFTDP_VM_CT_HELPER_SIP, IPPROTO_TCP, true, true};

static int hdr(const char *text, enum ct_sip_hdr type, uint32_t *mo, uint32_t *ml)
{
	uint32_t n;
	char *b = exact(text, &n);
	int rc = nftdp_ct_sip_get_header(NFPROTO_IPV4, b, 0, n, type, mo, ml);

	free(b);
	return rc;
}

static void test_sip_parse(void **state)
{
	union nftdp_ct_addr a;
	uint32_t mo, ml, off;
	const char *end;
	uint16_t port;
	int in = 0;

	(void)state;
	/* full and compact names, case, whitespace and folding before and
	 * after the colon */
	assert_int_equal(hdr("X\r\nContent-Length: 12\r\n", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml),
			 1);
	assert_int_equal(mo, 19);
	assert_int_equal(ml, 2);
	assert_int_equal(hdr("X\r\nl:7\r\n", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), 1);
	assert_int_equal(mo, 5);
	assert_int_equal(
	    hdr("X\ncontent-length \t:\r\n  42\n", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), 1);
	assert_int_equal(mo, 23);
	assert_int_equal(ml, 2);
	/* a compact name followed by a letter is another header */
	assert_int_equal(hdr("X\r\nlx: 7\r\n", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), 0);
	/* a folded line is no header start; a header on the first line neither */
	assert_int_equal(hdr("X\r\n l: 7\r\n", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), 0);
	assert_int_equal(hdr("l: 7\r\n", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), 0);
	/* no digits: found but not parsable */
	assert_int_equal(hdr("X\r\nl: x\r\n", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), -1);
	/* truncated: no colon, nothing after it */
	assert_int_equal(hdr("X\r\nContent-Length", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), 0);
	assert_int_equal(hdr("X\r\nContent-Length:", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), 0);
	assert_int_equal(hdr("X\r\nContent-Length: ", CT_SIP_HDR_CONTENT_LENGTH, &mo, &ml), -1);
	/* the Contact's address after user@, and its port */
	assert_int_equal(
	    hdr("X\r\nm: <sip:alice@10.0.1.2:5070>;expires=60\r\n", CT_SIP_HDR_CONTACT, &mo, &ml),
	    1);
	assert_int_equal(mo, 17);
	assert_int_equal(ml, 13);
	/* a port out of range, or cut by the end: not parsable */
	assert_int_equal(hdr("X\r\nm: <sip:a@10.0.1.2:80>\r\n", CT_SIP_HDR_CONTACT, &mo, &ml), -1);
	assert_int_equal(hdr("X\r\nm: <sip:a@10.0.1.2:5070", CT_SIP_HDR_CONTACT, &mo, &ml), -1);
	/* the URI of a list's second value */
	{
		static const char t[] = "X\r\nContact: <sip:a@10.0.0.9>, <sip:b@10.0.1.2:5062>\r\n";
		uint32_t n;
		char *b = exact(t, &n);

		off = 0;
		assert_int_equal(nftdp_ct_sip_parse_header_uri(NFPROTO_IPV4, b, &off, n,
							       CT_SIP_HDR_CONTACT, &in, &mo, &ml,
							       &a, &port),
				 1);
		assert_int_equal(a.ip, htonl(0x0a000009));
		assert_int_equal(ntohs(port), 5060);
		assert_int_equal(nftdp_ct_sip_parse_header_uri(NFPROTO_IPV4, b, &off, n,
							       CT_SIP_HDR_CONTACT, &in, &mo, &ml,
							       &a, &port),
				 1);
		assert_int_equal(a.ip, htonl(0x0a000102));
		assert_int_equal(ntohs(port), 5062);
		assert_int_equal(nftdp_ct_sip_parse_header_uri(NFPROTO_IPV4, b, &off, n,
							       CT_SIP_HDR_CONTACT, &in, &mo, &ml,
							       &a, &port),
				 0);
		free(b);
	}
	/* IPv6 in a SIP header needs its brackets */
	{
		static const char t[] = "X\r\nm: <sip:a@[2001:db8::2]:5062>\r\n";
		uint8_t want[16];
		uint32_t n;
		char *b = exact(t, &n);

		assert_int_equal(nftdp_ct_sip_parse_header_uri(NFPROTO_IPV6, b, NULL, n,
							       CT_SIP_HDR_CONTACT, NULL, &mo, &ml,
							       &a, &port),
				 1);
		assert_int_equal(inet_pton(AF_INET6, "2001:db8::2", want), 1);
		assert_memory_equal(a.u8, want, 16);
		assert_int_equal(ntohs(port), 5062);
		free(b);
		b = exact("X\r\nm: <sip:a@2001:db8::2>\r\n", &n);
		assert_int_equal(nftdp_ct_sip_parse_header_uri(NFPROTO_IPV6, b, NULL, n,
							       CT_SIP_HDR_CONTACT, NULL, &mo, &ml,
							       &a, &port),
				 0);
		free(b);
	}
	/* SDP: c= up to the first m=, IN IP4 within the line */
	{
		static const char t[] = "INVITE x\r\n\r\nv=0\r\nc=IN IP4 10.0.1.2\r\nm=audio 49170 "
					"RTP/AVP 0\r\nc=IN IP4 10.0.1.3\r\n";
		uint32_t n;
		char *b = exact(t, &n);

		assert_int_equal(nftdp_ct_sip_get_sdp_header(NFPROTO_IPV4, b, 0, n,
							     CT_SDP_HDR_VERSION, CT_SDP_HDR_UNSPEC,
							     &mo, &ml),
				 1);
		off = mo;
		assert_int_equal(nftdp_ct_sip_get_sdp_header(NFPROTO_IPV4, b, off, n,
							     CT_SDP_HDR_CONNECTION,
							     CT_SDP_HDR_MEDIA, &mo, &ml),
				 1);
		assert_int_equal(ml, 8);
		assert_int_equal(nftdp_ct_sip_get_sdp_header(NFPROTO_IPV4, b, off, n,
							     CT_SDP_HDR_MEDIA, CT_SDP_HDR_UNSPEC,
							     &mo, &ml),
				 1);
		assert_int_equal(ml, 11); /* "audio 49170" */
		/* the family's keyword only */
		assert_int_equal(nftdp_ct_sip_get_sdp_header(NFPROTO_IPV6, b, off, n,
							     CT_SDP_HDR_CONNECTION,
							     CT_SDP_HDR_MEDIA, &mo, &ml),
				 -1);
		free(b);
	}
	/* sip_strtouint: within the length, 0 past UINT_MAX */
	assert_int_equal(nftdp_ct_sip_strtouint("123", 2, &end), 12);
	assert_int_equal(nftdp_ct_sip_strtouint("4294967295x", 11, &end), 4294967295u);
	{
		const char *s = "4294967296";

		assert_int_equal(nftdp_ct_sip_strtouint(s, 10, &end), 0);
		assert_ptr_equal(end, s);
	}
}

/* a UDP SIP message: its verdict */
static unsigned int msg(struct env *en, bool v6, const char *s, const char *d, uint16_t sp,
			uint16_t dp, const char *text, const struct nftdp_vm_ct_helper *h,
			struct nftdp_ct_entry **e)
{
	struct tpkt t;
	unsigned int v;

	udp_text(&t, v6, s, d, sp, dp, text);
	hx(en, &t, h, e, &v);
	return v;
}

static uint32_t rtp(struct env *en, bool v6, const char *s, const char *d, uint16_t sp, uint16_t dp,
		    struct nftdp_ct_entry **e)
{
	struct tpkt t;

	udp(&t, v6, s, d, sp, dp, 20);
	return hx(en, &t, NULL, e, NULL);
}

static const char invite[] = "INVITE sip:bob@10.0.2.2 SIP/2.0\r\n"
			     "Via: SIP/2.0/UDP 10.0.1.2:5060\r\n"
			     "From: <sip:alice@10.0.1.2>\r\n"
			     "To: <sip:bob@10.0.2.2>\r\n"
			     "CSeq: 1 INVITE\r\n"
			     "Content-Type: application/sdp\r\n"
			     "Content-Length: 74\r\n"
			     "\r\n"
			     "v=0\r\n"
			     "o=a 1 1 IN IP4 10.0.1.2\r\n"
			     "c=IN IP4 10.0.1.2\r\n"
			     "m=audio 49170 RTP/AVP 0\r\n";
static const char ok[] = "SIP/2.0 200 OK\r\n"
			 "CSeq: 1 INVITE\r\n"
			 "Content-Length: 73\r\n"
			 "\r\n"
			 "v=0\r\n"
			 "o=b 2 2 IN IP4 10.0.2.2\r\n"
			 "m=audio 3456 RTP/AVP 0\r\n"
			 "c=IN IP4 10.0.2.2\r\n";

static void test_sip_call(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *m, *m2, *r;
	struct nftdp_ct_expect_info xi;
	struct nftdp_ct_tuple t;

	(void)state;
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060, invite, &sip_udp, &m),
			 NF_ACCEPT);
	assert_int_equal(m->helper, NFTDP_VM_CT_HELPER_SIP);
	/* sip_timeout: the master lives 3600 s */
	assert_int_equal(left_s(en, m), 3600);
	/* RTP and RTCP from the callee to the caller's port pair */
	assert_int_equal(exp_live(en), 2);
	memset(&t, 0, sizeof(t));
	t.l3proto = NFPROTO_IPV4;
	t.l4proto = IPPROTO_UDP;
	inet_pton(AF_INET, "10.0.2.2", &t.src);
	inet_pton(AF_INET, "10.0.1.2", &t.dst);
	t.sport = htons(7777);
	t.dport = htons(49171);
	assert_int_equal(nftdp_ct_expect_get(en->s, &t, 0, en->now, &xi), 0);
	assert_int_equal(xi.class, CT_SIP_EXPECT_AUDIO);
	assert_int_equal(xi.timeout_s, 180);
	assert_int_equal(xi.flags, 0);
	assert_string_equal(xi.helper, "sip");
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060, ok, NULL, &m2),
			 NF_ACCEPT);
	assert_ptr_equal(m, m2);
	assert_int_equal(exp_live(en), 4);
	/* the media: related from the expected peer, new otherwise */
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 3456, 49170, &r), ST_RELATED);
	assert_true(r->status & IPS_EXPECTED);
	assert_int_equal(r->helper, 0);
	/* (the caller's RTP answers that connection; its RTCP is new) */
	assert_int_equal(rtp(en, false, "10.0.1.2", "10.0.2.2", 49170, 3456, NULL), ST_ESTABLISHED);
	assert_int_equal(rtp(en, false, "10.0.1.2", "10.0.2.2", 49171, 3457, NULL), ST_RELATED);
	assert_int_equal(rtp(en, false, "10.0.2.3", "10.0.1.2", 3456, 49171, NULL), ST_NEW);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 3456, 49172, NULL), ST_NEW);
	assert_int_equal(exp_live(en), 2);
	/* the ACK without a body changes nothing; the BYE removes the rest */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "ACK sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 1 ACK\r\n\r\n", NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060,
			     "BYE sip:alice@10.0.1.2 SIP/2.0\r\nCSeq: 1 BYE\r\n\r\n", NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 0);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 3460, 49171, NULL), ST_NEW);
	env_free(en);
}

/* a failure response to the INVITE removes the media expectations; a
 * CANCEL does not (the kernel has no CANCEL handler), its 487 does;
 * another CSeq's failure leaves them */
static void test_sip_failure(void **state)
{
	struct env *en = env_new(64, false);

	(void)state;
	msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060, invite, &sip_udp, NULL);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "CANCEL sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 1 CANCEL\r\n\r\n", NULL,
			     NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060,
			     "SIP/2.0 486 Busy Here\r\nCSeq: 2 INVITE\r\n\r\n", NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060,
			     "SIP/2.0 487 Request Terminated\r\nCSeq: 1 INVITE\r\n\r\n", NULL,
			     NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 0);
	/* responses the kernel drops: no code, no CSeq; a request without
	 * CSeq; media on a port below 1024; media without any c= */
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060,
			     "SIP/2.0 abc\r\nCSeq: 1 INVITE\r\n\r\n", NULL, NULL),
			 NF_DROP);
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060,
			     "SIP/2.0 200 OK\r\nTo: x\r\n\r\n", NULL, NULL),
			 NF_DROP);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "INVITE sip:b@10.0.2.2 SIP/2.0\r\nTo: x\r\n\r\n", NULL, NULL),
			 NF_DROP);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "INVITE sip:b@10.0.2.2 SIP/2.0\r\nCSeq: 3 INVITE\r\n\r\nv=0\r\n"
			     "c=IN IP4 10.0.1.2\r\nm=audio 80 RTP/AVP 0\r\n",
			     NULL, NULL),
			 NF_DROP);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "INVITE sip:b@10.0.2.2 SIP/2.0\r\nCSeq: 3 INVITE\r\n\r\nv=0\r\n"
			     "m=audio 4000 RTP/AVP 0\r\n",
			     NULL, NULL),
			 NF_DROP);
	/* not a handled method, or too short: accepted untouched */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "OPTIONS sip:b@10.0.2.2 SIP/2.0\r\n\r\n", NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060, "INVITE", NULL, NULL),
			 NF_ACCEPT);
	/* media of another address than the sender's: no expectation
	 * (sip_direct_media); port 0 and other media types: none either */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "INVITE sip:b@10.0.2.2 SIP/2.0\r\nCSeq: 4 INVITE\r\n\r\nv=0\r\n"
			     "c=IN IP4 10.0.1.9\r\nm=audio 4000 RTP/AVP 0\r\n"
			     "m=video 0 RTP/AVP 31\r\nm=application 5000 x\r\n",
			     NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 0);
	env_free(en);
}

/* the same media announced on a second connection (a forked call): the
 * first master's expectations stand for it (-EALREADY), the INVITE
 * passes and makes nothing; its BYE leaves the first's alone */
static void test_sip_two_masters(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_entry *a, *b;

	(void)state;
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060, invite, &sip_udp, &a),
			 NF_ACCEPT);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5062, 5060, invite, &sip_udp, &b),
			 NF_ACCEPT);
	assert_ptr_not_equal(a, b);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(en->s->st.expect_create, 2);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5062, 5060,
			     "BYE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 2 BYE\r\n\r\n", NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 3456, 49170, NULL), ST_RELATED);
	env_free(en);
}

/* ---- nf_nat_sip ---- */

/* the dataplane's resize: the fixture's buffer is the mbuf; room false:
 * no tailroom to grow */
static bool room = true;
static bool resize(void *arg, struct nftdp_vm_pkt *pkt, uint32_t len)
{
	(void)arg;
	if ((!room && len > pkt->len) || len > sizeof(((struct tpkt *)0)->buf))
		return false;
	pkt->skb_len += len - pkt->len;
	pkt->len = len;
	return true;
}

static struct env *env_nat(void)
{
	struct env *e = calloc(1, sizeof(*e));
	struct nftdp_ct_config cfg = {.max_entries = 256, .hash_seed = 0x1234};

	assert_non_null(e);
	cfg.pkt_resize = resize;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &e->s), 0);
	e->now = 1000000;
	room = true;
	return e;
}

/* conntrack, the helper h on a new connection, dnat at prerouting, snat
 * at postrouting, confirm: its verdict; the packet as it leaves in t */
static unsigned int nat_through(struct env *en, struct tpkt *t, const struct nftdp_vm_ct_helper *h,
				const struct nftdp_ct_nat_range *dnat,
				const struct nftdp_ct_nat_range *snat, struct nftdp_ct_entry **ent)
{
	unsigned int v;

	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	assert_non_null(t->pkt.ct);
	if (ent)
		*ent = (struct nftdp_ct_entry *)((uintptr_t)t->pkt.ct & ~(uintptr_t)7);
	if (nftdp_ct_vm_ops.state(t->pkt.ct) & ST_NEW)
		nftdp_ct_vm_ops.helper(t->pkt.ct, h);
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

static uint32_t rd32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* the UDP payload of t is want, lengths and checksums agree */
static void assert_udp_text(struct tpkt *t, const char *want)
{
	uint32_t n = (uint32_t)strlen(want);

	assert_int_equal(t->len, 20 + 8 + n);
	assert_int_equal(port_at(t->buf + 2), 20 + 8 + n);
	assert_int_equal(port_at(t->buf + 24), 8 + n);
	assert_memory_equal(t->buf + 28, want, n);
	assert_csums(t);
}

/* %pI6c */
static void test_sip_fmt_ip6(void **state)
{
	static const char *const cases[][2] = {
	    {"2001:db8::1", "2001:db8::1"},
	    {"::", "::"},
	    {"::1", "::1"},
	    {"1::", "1::"},
	    {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},
	    {"1:0:0:2:0:0:0:3", "1:0:0:2::3"},
	    {"1:0:0:2:0:0:3:4", "1::2:0:0:3:4"},
	    {"::ffff:10.0.1.2", "::ffff:10.0.1.2"},
	    {"fe80::5efe:10.0.1.2", "fe80::5efe:10.0.1.2"},
	    {"2001:DB8:AB:C0D:F00:0:0:1", "2001:db8:ab:c0d:f00::1"},
	    {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
	};
	char buf[INET6_ADDRSTRLEN];
	uint8_t a[16];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(inet_pton(AF_INET6, cases[i][0], a), 1);
		assert_int_equal(nftdp_ct_sip_fmt_ip6(buf, a), (int)strlen(cases[i][1]));
		assert_string_equal(buf, cases[i][1]);
	}
}

/* the Request-URI's address: after user@, with or without a port */
static void test_sip_parse_request(void **state)
{
	union nftdp_ct_addr a;
	uint32_t mo, ml, n;
	uint16_t port;
	char *b;

	(void)state;
	b = exact("INVITE sip:bob@10.0.2.2:5070;transport=udp SIP/2.0\r\n", &n);
	assert_int_equal(nftdp_ct_sip_parse_request(NFPROTO_IPV4, b, n, &mo, &ml, &a, &port), 1);
	assert_int_equal(mo, 15);
	assert_int_equal(ml, 13);
	assert_int_equal(ntohs(port), 5070);
	free(b);
	b = exact("BYE sip:10.0.2.2 SIP/2.0\r\n", &n);
	assert_int_equal(nftdp_ct_sip_parse_request(NFPROTO_IPV4, b, n, &mo, &ml, &a, &port), 1);
	assert_int_equal(mo, 8);
	assert_int_equal(ml, 8);
	assert_int_equal(ntohs(port), 5060);
	free(b);
	b = exact("INVITE sip:b@[2001:db8::2]:5062 SIP/2.0\r\n", &n);
	assert_int_equal(nftdp_ct_sip_parse_request(NFPROTO_IPV6, b, n, &mo, &ml, &a, &port), 1);
	assert_int_equal(mo, 13);
	assert_int_equal(ml, 18);
	free(b);
	/* a line without sip: and a port out of range */
	b = exact("INVITE tel:123\r\nVia: x\r\n", &n);
	assert_int_equal(nftdp_ct_sip_parse_request(NFPROTO_IPV4, b, n, &mo, &ml, &a, &port), -1);
	free(b);
	/* a port below 1024 fails skp_epaddr_len's sip_parse_port first: 0 */
	b = exact("INVITE sip:10.0.2.2:80 SIP/2.0\r\n", &n);
	assert_int_equal(nftdp_ct_sip_parse_request(NFPROTO_IPV4, b, n, &mo, &ml, &a, &port), 0);
	free(b);
	b = exact("INVITE", &n);
	assert_int_equal(nftdp_ct_sip_parse_request(NFPROTO_IPV4, b, n, &mo, &ml, &a, &port), 0);
	free(b);
}

/* a caller behind snat (to 198.51.100.1:6000): its Via, From and Contact
 * name the address beyond the NAT, the callee's To and Request-URI stay;
 * the answer's Via with received= and rport= goes back to the inside
 * address and port. The datagram grows, its lengths and checksum follow. */
static void test_sip_nat_snat(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 6000);
	struct nftdp_ct_entry *m;
	struct tpkt t;

	(void)state;
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
		 "OPTIONS sip:bob@10.0.2.2 SIP/2.0\r\n"
		 "Via: SIP/2.0/UDP 10.0.1.2:5060;branch=z9hG4bK1\r\n"
		 "From: <sip:alice@10.0.1.2>;tag=1\r\n"
		 "To: <sip:bob@10.0.2.2>\r\n"
		 "Contact: <sip:alice@10.0.1.2:5060>, <sip:alice@10.0.1.3:5060>\r\n"
		 "CSeq: 1 OPTIONS\r\n"
		 "Content-Length: 0\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, &m), NF_ACCEPT);
	assert_true(m->status & IPS_SRC_NAT);
	assert_ip4(t.buf + 12, "198.51.100.1");
	assert_int_equal(port_at(t.buf + 20), 6000);
	assert_udp_text(&t, "OPTIONS sip:bob@10.0.2.2 SIP/2.0\r\n"
			    "Via: SIP/2.0/UDP 198.51.100.1:6000;branch=z9hG4bK1\r\n"
			    "From: <sip:alice@198.51.100.1:6000>;tag=1\r\n"
			    "To: <sip:bob@10.0.2.2>\r\n"
			    "Contact: <sip:alice@198.51.100.1:6000>, <sip:alice@10.0.1.3:5060>\r\n"
			    "CSeq: 1 OPTIONS\r\n"
			    "Content-Length: 0\r\n\r\n");
	/* the answer, to the NAT address: back to the inside one */
	udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5060, 6000,
		 "SIP/2.0 200 OK\r\n"
		 "Via: SIP/2.0/UDP 198.51.100.1:6000;received=198.51.100.1;rport=6000\r\n"
		 "From: <sip:alice@198.51.100.1:6000>;tag=1\r\n"
		 "To: <sip:bob@10.0.2.2>\r\n"
		 "CSeq: 1 OPTIONS\r\n"
		 "Content-Length: 0\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	assert_ip4(t.buf + 16, "10.0.1.2");
	assert_int_equal(port_at(t.buf + 22), 5060);
	assert_udp_text(&t, "SIP/2.0 200 OK\r\n"
			    "Via: SIP/2.0/UDP 10.0.1.2:5060;received=10.0.1.2;rport=5060\r\n"
			    "From: <sip:alice@10.0.1.2:5060>;tag=1\r\n"
			    "To: <sip:bob@10.0.2.2>\r\n"
			    "CSeq: 1 OPTIONS\r\n"
			    "Content-Length: 0\r\n\r\n");
	/* a request from the callee: its Request-URI names the caller's
	 * public address */
	udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5060, 6000,
		 "BYE sip:alice@198.51.100.1:6000 SIP/2.0\r\n"
		 "Via: SIP/2.0/UDP 10.0.2.2:5060\r\n"
		 "CSeq: 2 BYE\r\n"
		 "Content-Length: 0\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	assert_udp_text(&t, "BYE sip:alice@10.0.1.2:5060 SIP/2.0\r\n"
			    "Via: SIP/2.0/UDP 10.0.2.2:5060\r\n"
			    "CSeq: 2 BYE\r\n"
			    "Content-Length: 0\r\n\r\n");
	/* no tailroom to grow: the kernel's "cannot mangle": NF_DROP */
	room = false;
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
		 "OPTIONS sip:bob@10.0.2.2 SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.1.2:5060\r\n"
		 "CSeq: 3 OPTIONS\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_DROP);
	/* a rewrite that shrinks needs none */
	udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5060, 6000,
		 "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 198.51.100.1:6000\r\nCSeq: 3 OPTIONS\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	assert_udp_text(
	    &t, "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.0.1.2:5060\r\nCSeq: 3 OPTIONS\r\n\r\n");
	env_free(en);
}

/* a server behind dnat (198.51.100.1 to 10.0.2.2:5070): the Request-URI
 * and To name the server's inside address and port; its answer's Contact
 * the public ones; a Via with maddr= of the client's stays (no NAT of the
 * client); a Cisco phone's request from 5062 with Via port 5060 gets the
 * answers at 5060 */
static void test_sip_nat_dnat(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range dnat = nat_to("10.0.2.2", 5070);
	struct tpkt t;

	(void)state;
	udp_text(&t, false, "10.0.1.2", "198.51.100.1", 5062, 5060,
		 "REGISTER sip:198.51.100.1 SIP/2.0\r\n"
		 "Via: SIP/2.0/UDP 10.0.1.2:5060;maddr=10.0.1.2\r\n"
		 "To: <sip:alice@198.51.100.1>\r\n"
		 "CSeq: 1 REGISTER\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, &dnat, NULL, NULL), NF_ACCEPT);
	assert_ip4(t.buf + 16, "10.0.2.2");
	assert_int_equal(port_at(t.buf + 22), 5070);
	/* map_addr gives the server's port as forced_dport, set by this
	 * very request (the Cisco phone's Via port), as the kernel does */
	assert_udp_text(&t, "REGISTER sip:10.0.2.2:5060 SIP/2.0\r\n"
			    "Via: SIP/2.0/UDP 10.0.1.2:5060;maddr=10.0.1.2\r\n"
			    "To: <sip:alice@10.0.2.2:5060>\r\n"
			    "CSeq: 1 REGISTER\r\n\r\n");
	udp_text(&t, false, "10.0.2.2", "10.0.1.2", 5070, 5062,
		 "SIP/2.0 200 OK\r\n"
		 "Via: SIP/2.0/UDP 10.0.1.2:5060\r\n"
		 "Contact: <sip:reg@10.0.2.2:5070>\r\n"
		 "CSeq: 1 REGISTER\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, &dnat, NULL, NULL), NF_ACCEPT);
	assert_ip4(t.buf + 12, "198.51.100.1");
	assert_int_equal(port_at(t.buf + 20), 5060);
	/* forced_dport */
	assert_int_equal(port_at(t.buf + 22), 5060);
	assert_udp_text(&t, "SIP/2.0 200 OK\r\n"
			    "Via: SIP/2.0/UDP 10.0.1.2:5060\r\n"
			    "Contact: <sip:reg@198.51.100.1:5060>\r\n"
			    "CSeq: 1 REGISTER\r\n\r\n");
	env_free(en);
}

/* TCP behind snat: two messages in one segment, each rewritten; the
 * sequence adjustment is the segment's whole growth, recorded once, and
 * the server's ack of it goes back by as much */
static void test_sip_nat_tcp(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	struct nftdp_ct_entry *m;
	const struct ct_help *h;
	static const char two[] = "OPTIONS sip:b@10.0.2.2 SIP/2.0\r\n"
				  "Via: SIP/2.0/TCP 10.0.1.2:40000\r\n"
				  "CSeq: 1 OPTIONS\r\nl: 0\r\n\r\n"
				  "OPTIONS sip:b@10.0.2.2 SIP/2.0\r\n"
				  "Via: SIP/2.0/TCP 10.0.1.2:40000\r\n"
				  "m: <sip:a@10.0.1.2:40000>\r\n"
				  "CSeq: 2 OPTIONS\r\nl: 0\r\n\r\n";
	static const char two_nat[] = "OPTIONS sip:b@10.0.2.2 SIP/2.0\r\n"
				      "Via: SIP/2.0/TCP 198.51.100.1:40000\r\n"
				      "CSeq: 1 OPTIONS\r\nl: 0\r\n\r\n"
				      "OPTIONS sip:b@10.0.2.2 SIP/2.0\r\n"
				      "Via: SIP/2.0/TCP 198.51.100.1:40000\r\n"
				      "m: <sip:a@198.51.100.1:40000>\r\n"
				      "CSeq: 2 OPTIONS\r\nl: 0\r\n\r\n";
	uint32_t n = (uint32_t)strlen(two), first;
	uint8_t hd[600];
	struct tpkt t;

	(void)state;
	/* the handshake, each end as it sees the other */
	tcp_hdr(hd, 40000, 5060, 1000, 0, TS, 65535, 0);
	build(&t, false, "10.0.1.2", "10.0.2.2", IPPROTO_TCP, hd, 20);
	assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, &snat, &m), NF_ACCEPT);
	tcp_hdr(hd, 5060, 40000, 5000, 1001, TS | TA, 65535, 0);
	build(&t, false, "10.0.2.2", "198.51.100.1", IPPROTO_TCP, hd, 20);
	assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, &snat, NULL), NF_ACCEPT);
	tcp_hdr(hd, 40000, 5060, 1001, 5001, TA, 65535, 0);
	build(&t, false, "10.0.1.2", "10.0.2.2", IPPROTO_TCP, hd, 20);
	assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, &snat, NULL), NF_ACCEPT);
	tcp_hdr(hd, 40000, 5060, 1001, 5001, TA, 65535, 0);
	memcpy(hd + 20, two, n);
	build(&t, false, "10.0.1.2", "10.0.2.2", IPPROTO_TCP, hd, 20 + n);
	assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, &snat, NULL), NF_ACCEPT);
	assert_int_equal(t.len, 40 + strlen(two_nat));
	assert_memory_equal(t.buf + 40, two_nat, strlen(two_nat));
	assert_csums(&t);
	h = &en->s->help[m - en->s->entries];
	assert_true(m->status & IPS_SEQ_ADJUST);
	assert_int_equal(h->seq[0].correction_pos, 1001);
	assert_int_equal(h->seq[0].offset_before, 0);
	assert_int_equal(h->seq[0].offset_after, 12);
	/* the server acks what reached it: 12 more than the client sent */
	tcp_hdr(hd, 5060, 40000, 5001, 1001 + n + 12, TA, 65535, 0);
	build(&t, false, "10.0.2.2", "198.51.100.1", IPPROTO_TCP, hd, 20);
	assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, &snat, NULL), NF_ACCEPT);
	assert_int_equal(rd32be(t.buf + 28), 1001 + n);
	/* a message cut by the segment's end after a rewritten one: the
	 * kernel returns before its seq adjust, so nothing more is recorded */
	first = (uint32_t)(strstr(two, "\r\n\r\n") + 4 - two);
	tcp_hdr(hd, 40000, 5060, 1001 + n, 5001, TA, 65535, 0);
	memcpy(hd + 20, two, first);
	memcpy(hd + 20 + first, "OPTIONS sip:b SIP/2.0\r\nl: 99\r\n\r\n", 33);
	build(&t, false, "10.0.1.2", "10.0.2.2", IPPROTO_TCP, hd, 20 + first + 33);
	assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, &snat, NULL), NF_ACCEPT);
	assert_int_equal(t.len, 40 + first + 4 + 33);
	assert_int_equal(h->seq[0].correction_pos, 1001);
	assert_int_equal(h->seq[0].offset_after, 12);
	env_free(en);
}

/* an expectation's dump fields: how many are nf_nat_sip's with the
 * saved address *arg */
static int count_nat_sip(const struct nftdp_ct_expect_info *x, void *arg)
{
	union nftdp_ct_addr *want = arg;

	if (x->nat && x->nat_sip && !memcmp(&x->nat_saved, want, 4))
		want->ip6[3]++;
	return 0;
}

/* the SDP of a caller behind snat: o=, c= and the media's c= name the NAT
 * address, Content-Length follows; the media is expected from the callee
 * to the NAT address and goes to the inside one; the callee's answer
 * keeps its addresses and its media expectation is SNATed as the master.
 * A port pair taken by a clashing expectation moves the media to the
 * next even port, written into m=. */
static void test_sip_nat_sdp(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	struct nftdp_ct_entry *m, *r;
	struct ct_expect x;
	union nftdp_ct_addr any, to;
	struct tpkt t;
	char want[800];
	static const char sdp_c[] = "v=0\r\n"
				    "o=a 1 1 IN IP4 10.0.1.2\r\n"
				    "s=-\r\n"
				    "c=IN IP4 10.0.1.2\r\n"
				    "t=0 0\r\n"
				    "m=audio 49170 RTP/AVP 0\r\n"
				    "m=video 51372 RTP/AVP 31\r\n"
				    "c=IN IP4 10.0.1.2\r\n";
	static const char sdp_s[] = "v=0\r\n"
				    "o=b 2 2 IN IP4 10.0.2.2\r\n"
				    "m=audio 3456 RTP/AVP 0\r\n"
				    "c=IN IP4 10.0.2.2\r\n";
	char text[800];

	(void)state;
	snprintf(text, sizeof(text),
		 "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.1.2:5060\r\n"
		 "CSeq: 1 INVITE\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(sdp_c), sdp_c);
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060, text);
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, &m), NF_ACCEPT);
	snprintf(want, sizeof(want),
		 "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nVia: SIP/2.0/UDP 198.51.100.1:5060\r\n"
		 "CSeq: 1 INVITE\r\nContent-Length: %zu\r\n\r\n"
		 "v=0\r\n"
		 "o=a 1 1 IN IP4 198.51.100.1\r\n"
		 "s=-\r\n"
		 "c=IN IP4 198.51.100.1\r\n"
		 "t=0 0\r\n"
		 "m=audio 49170 RTP/AVP 0\r\n"
		 "m=video 51372 RTP/AVP 31\r\n"
		 "c=IN IP4 198.51.100.1\r\n",
		 strlen(sdp_c) + 12);
	assert_udp_text(&t, want);
	assert_int_equal(exp_live(en), 4);
	/* `conntrack -L expect`: CTA_EXPECT_NAT with the saved (inside)
	 * address, CTA_EXPECT_FN "sip" */
	memset(&any, 0, sizeof(any));
	assert_int_equal(inet_pton(AF_INET, "10.0.1.2", any.u8), 1);
	assert_int_equal(nftdp_ct_expect_walk(en->s, en->now, count_nat_sip, &any), 0);
	assert_int_equal(any.ip6[3], 4);
	/* the callee's media to the NAT address: related, to the caller */
	udp(&t, false, "10.0.2.2", "198.51.100.1", 3456, 49170, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &r), ST_RELATED);
	assert_ip4(t.buf + 16, "10.0.1.2");
	assert_int_equal(port_at(t.buf + 22), 49170);
	udp(&t, false, "10.0.2.2", "198.51.100.1", 3457, 51373, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_RELATED);
	/* to the inside address it is nothing the call announced */
	udp(&t, false, "10.0.2.2", "10.0.1.2", 3456, 49171, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_NEW);
	/* the answer: nothing of it is NATed; the caller's media to it is
	 * expected and leaves from the NAT address */
	snprintf(text, sizeof(text),
		 "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 198.51.100.1:5060\r\n"
		 "CSeq: 1 INVITE\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(sdp_s), sdp_s);
	udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5060, 5060, text);
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	snprintf(want, sizeof(want),
		 "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.0.1.2:5060\r\n"
		 "CSeq: 1 INVITE\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(sdp_s), sdp_s);
	assert_udp_text(&t, want);
	udp(&t, false, "10.0.1.2", "10.0.2.2", 49173, 3457, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_RELATED);
	assert_ip4(t.buf + 12, "198.51.100.1");
	/* a clashing expectation of another master (any source) on 40000
	 * and 40001: the re-INVITE's media moves to 40002, m= says so */
	udp_text(&t, false, "10.0.1.2", "10.0.2.9", 5060, 5060, "OPTIONS sip:x SIP/2.0\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, &r), NF_ACCEPT);
	assert_int_equal(inet_pton(AF_INET, "198.51.100.1", to.u8), 1);
	memset(&any, 0, sizeof(any));
	nftdp_ct_expect_init(&x, NFPROTO_IPV4, NULL, &to, IPPROTO_UDP, 0, htons(40000));
	x.mask.src.ip = 0;
	assert_int_equal(nftdp_ct_expect_related(en->s, r, &x, 4, 180), 0);
	snprintf(text, sizeof(text),
		 "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 2 INVITE\r\nContent-Length: 66\r\n\r\n"
		 "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\nc=IN IP4 10.0.1.2\r\nm=audio 40000 x\r\n");
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060, text);
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	assert_udp_text(&t, "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 2 INVITE\r\n"
			    "Content-Length: 74\r\n\r\n"
			    "v=0\r\no=a 1 1 IN IP4 198.51.100.1\r\nc=IN IP4 198.51.100.1\r\n"
			    "m=audio 40002 x\r\n");
	udp(&t, false, "10.0.2.2", "198.51.100.1", 3456, 40002, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_RELATED);
	assert_int_equal(port_at(t.buf + 22), 40000);
	/* an SDP without o=, or without Content-Length: the kernel's
	 * nf_nat_sdp_session and mangle_content_len fail, NF_DROP */
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
		 "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 3 INVITE\r\nContent-Length: 38\r\n\r\n"
		 "v=0\r\nc=IN IP4 10.0.1.2\r\nm=audio 0 x\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_DROP);
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
		 "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 4 INVITE\r\n\r\n"
		 "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\nc=IN IP4 10.0.1.2\r\nm=audio 0 x\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_DROP);
	/* no media expected: the session's o= and c= become its c= address
	 * (the kernel's have_rtp_addr), not the NAT's; without any c= the
	 * SDP is left alone */
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
		 "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 5 INVITE\r\nl: 62\r\n\r\n"
		 "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\nc=IN IP4 10.0.1.7\r\nm=audio 0 x\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	assert_udp_text(&t,
			"INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 5 INVITE\r\nl: 62\r\n\r\n"
			"v=0\r\no=a 1 1 IN IP4 10.0.1.7\r\nc=IN IP4 10.0.1.7\r\nm=audio 0 x\r\n");
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
		 "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 6 INVITE\r\nl: 45\r\n\r\n"
		 "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\nm=text 4000 x\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	assert_udp_text(&t, "INVITE sip:bob@10.0.2.2 SIP/2.0\r\nCSeq: 6 INVITE\r\nl: 45\r\n\r\n"
			    "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\nm=text 4000 x\r\n");
	env_free(en);
}

/* the same over IPv6: the second dnat'd call of the same media skips; a
 * dnat'd call of media first announced without NAT goes directly to the
 * saved address ::, port 0 (%pI6c) */
static void test_sip_nat6_same_media(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range dnat = nat_to("2001:db8:2::2", 5060);
	static const char body[] = "v=0\r\no=a 1 1 IN IP6 2001:db8:1::2\r\n"
				   "c=IN IP6 2001:db8:1::2\r\nm=audio 4000 RTP/AVP 0\r\n";
	static const struct {
		uint16_t sp;
		bool nat;
		uint32_t live;
		const char *want;
	} calls[] = {
	    {5060, true, 2, body},
	    {5062, true, 2, body},
	};
	static const struct {
		uint16_t sp;
		bool nat;
		uint32_t live;
		const char *want;
	} calls2[] = {
	    {5064, false, 4, NULL},
	    {5066, true, 6, "v=0\r\no=a 1 1 IN IP6 ::\r\nc=IN IP6 ::\r\nm=audio 0 RTP/AVP 0\r\n"},
	};
	char text[400];
	struct tpkt t;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		snprintf(text, sizeof(text),
			 "INVITE sip:bob SIP/2.0\r\nCSeq: 1 INVITE\r\nl: %zu\r\n\r\n%s",
			 strlen(body), body);
		udp_text(&t, true, "2001:db8:1::2", "2001:db8:2::100", calls[i].sp, 5060, text);
		assert_int_equal(nat_through(en, &t, &sip_udp, &dnat, NULL, NULL), NF_ACCEPT);
		assert_int_equal(exp_live(en), calls[i].live);
		assert_memory_equal(t.buf + t.len - strlen(calls[i].want), calls[i].want,
				    strlen(calls[i].want));
	}
	for (size_t i = 0; i < 2; i++) {
		const char *b = "v=0\r\no=a 1 1 IN IP6 2001:db8:1::2\r\n"
				"c=IN IP6 2001:db8:1::2\r\nm=audio 4010 RTP/AVP 0\r\n";

		snprintf(text, sizeof(text),
			 "INVITE sip:bob SIP/2.0\r\nCSeq: 1 INVITE\r\nl: %zu\r\n\r\n%s", strlen(b),
			 b);
		udp_text(&t, true, "2001:db8:1::2",
			 calls2[i].nat ? "2001:db8:2::100" : "2001:db8:2::2", calls2[i].sp, 5060,
			 text);
		assert_int_equal(
		    nat_through(en, &t, &sip_udp, calls2[i].nat ? &dnat : NULL, NULL, NULL),
		    NF_ACCEPT);
		assert_int_equal(exp_live(en), calls2[i].live);
		if (calls2[i].want)
			assert_memory_equal(t.buf + t.len - strlen(calls2[i].want), calls2[i].want,
					    strlen(calls2[i].want));
	}
	env_free(en);
}

/* a request over TCP whose Via names UDP and another port of the sender
 * sets forced_dport (process_sip_request looks for a UDP Via whatever the
 * protocol); under NAT the server's replies on that connection are then
 * dropped (nf_nat_sip: "forced_dport only expected with UDP"), its
 * requests still pass; without NAT the replies pass untouched */
static void test_sip_nat_tcp_forced_dport(void **state)
{
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	static const char req[] = "OPTIONS sip:b@example.com SIP/2.0\r\n"
				  "Via: SIP/2.0/UDP 10.0.1.2:5062\r\n"
				  "CSeq: 1 OPTIONS\r\nl: 0\r\n\r\n";
	static const char ok[] = "SIP/2.0 200 OK\r\nCSeq: 1 OPTIONS\r\nl: 0\r\n\r\n";
	uint32_t n = (uint32_t)strlen(req), k = (uint32_t)strlen(ok);
	uint8_t hd[600];
	struct tpkt t;

	(void)state;
	for (int nat = 1; nat >= 0; nat--) {
		struct env *en = env_nat();
		const struct nftdp_ct_nat_range *sn = nat ? &snat : NULL;
		const char *peer = nat ? "198.51.100.1" : "10.0.1.2";
		struct nftdp_ct_entry *m;

		tcp_hdr(hd, 40000, 5060, 1000, 0, TS, 65535, 0);
		build(&t, false, "10.0.1.2", "10.0.2.2", IPPROTO_TCP, hd, 20);
		assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, sn, &m), NF_ACCEPT);
		tcp_hdr(hd, 5060, 40000, 5000, 1001, TS | TA, 65535, 0);
		build(&t, false, "10.0.2.2", peer, IPPROTO_TCP, hd, 20);
		assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, sn, NULL), NF_ACCEPT);
		tcp_hdr(hd, 40000, 5060, 1001, 5001, TA, 65535, 0);
		memcpy(hd + 20, req, n);
		build(&t, false, "10.0.1.2", "10.0.2.2", IPPROTO_TCP, hd, 20 + n);
		assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, sn, NULL), NF_ACCEPT);
		assert_int_equal(en->s->help[m - en->s->entries].sip_forced_dport, htons(5062));
		tcp_hdr(hd, 5060, 40000, 5001, 1001 + n, TA, 65535, 0);
		memcpy(hd + 20, ok, k);
		build(&t, false, "10.0.2.2", peer, IPPROTO_TCP, hd, 20 + k);
		assert_int_equal(nat_through(en, &t, &sip_tcp, NULL, sn, NULL),
				 nat ? NF_DROP : NF_ACCEPT);
		if (!nat) {
			assert_int_equal(port_at(t.buf + 22), 40000);
			assert_int_equal(rd32be(t.buf + 24), 5001);
			assert_csums(&t);
		}
		env_free(en);
	}
}

/* the SDP body of UDP SIP message t (after the blank line) is want */
static void assert_udp_body(struct tpkt *t, const char *want)
{
	const char *d = (const char *)t->buf + 28, *b;
	uint32_t n = t->len - 28;

	assert_csums(t);
	b = memmem(d, n, "\r\n\r\n", 4);
	assert_non_null(b);
	b += 4;
	assert_int_equal(n - (uint32_t)(b - d), strlen(want));
	assert_memory_equal(b, want, strlen(want));
}

/* an INVITE from 10.0.1.2 (source port sp) to the server's public
 * 198.51.100.1:5060, dnat'd to 10.0.2.2:5060 when nat; its SDP announces
 * 10.0.1.2:mport */
static unsigned int same_media_call(struct env *en, uint16_t sp, uint16_t mport, bool nat,
				    struct tpkt *t)
{
	struct nftdp_ct_nat_range dnat = nat_to("10.0.2.2", 5060);
	char text[400], body[200];

	snprintf(body, sizeof(body),
		 "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\ns=-\r\nc=IN IP4 10.0.1.2\r\nt=0 0\r\n"
		 "m=audio %u RTP/AVP 0\r\n",
		 mport);
	snprintf(text, sizeof(text), "INVITE sip:bob SIP/2.0\r\nCSeq: 1 INVITE\r\nl: %zu\r\n\r\n%s",
		 strlen(body), body);
	udp_text(t, false, "10.0.1.2", nat ? "198.51.100.1" : "10.0.2.2", sp, 5060, text);
	return nat_through(en, t, &sip_udp, nat ? &dnat : NULL, NULL, NULL);
}

/* set_expected_rtp_rtcp's __nf_ct_expect_find: calls from one phone to a
 * server behind dnat (the phone's address not NATed) announcing the same
 * media. The second NATed call finds the first's expectation (its saved
 * address and port its tuple's): skipped, accepted as it came. A call
 * without NAT makes an expectation whose saved address and port are 0:
 * a NATed call of the same media then takes the direct RTP path to
 * 0.0.0.0 port 0 (m=, c= and o= written so, its own pair made there, as
 * the kernel does), and the next such call finds that pair and skips.
 * An expectation whose port moved past a clash: the next call of the
 * moved media goes directly to the announced port. */
static void test_sip_nat_same_media(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_entry *r;
	struct ct_expect x;
	union nftdp_ct_addr ph;
	struct tpkt t;

	(void)state;
	assert_int_equal(same_media_call(en, 5060, 49170, true, &t), NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(same_media_call(en, 5062, 49170, true, &t), NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_udp_body(&t, "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\ns=-\r\nc=IN IP4 10.0.1.2\r\n"
			    "t=0 0\r\nm=audio 49170 RTP/AVP 0\r\n");
	/* without NAT: its own pair, saved 0 */
	assert_int_equal(same_media_call(en, 5064, 49172, false, &t), NF_ACCEPT);
	assert_int_equal(exp_live(en), 4);
	assert_udp_body(&t, "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\ns=-\r\nc=IN IP4 10.0.1.2\r\n"
			    "t=0 0\r\nm=audio 49172 RTP/AVP 0\r\n");
	assert_int_equal(same_media_call(en, 5066, 49172, true, &t), NF_ACCEPT);
	assert_int_equal(exp_live(en), 6);
	assert_udp_body(&t, "v=0\r\no=a 1 1 IN IP4 0.0.0.0\r\ns=-\r\nc=IN IP4 0.0.0.0\r\n"
			    "t=0 0\r\nm=audio 0 RTP/AVP 0\r\n");
	assert_int_equal(same_media_call(en, 5068, 49172, true, &t), NF_ACCEPT);
	assert_int_equal(exp_live(en), 6);
	assert_udp_body(&t, "v=0\r\no=a 1 1 IN IP4 0.0.0.0\r\ns=-\r\nc=IN IP4 0.0.0.0\r\n"
			    "t=0 0\r\nm=audio 0 RTP/AVP 0\r\n");
	/* the non-NATed call itself again (its own master): replaced */
	assert_int_equal(same_media_call(en, 5064, 49172, false, &t), NF_ACCEPT);
	assert_int_equal(exp_live(en), 6);
	/* the first call's media reaches the phone */
	udp(&t, false, "10.0.2.2", "10.0.1.2", 3456, 49170, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_RELATED);
	assert_int_equal(exp_live(en), 5);

	/* a clash (any source) on the phone's 40000: the NATed call's pair
	 * moves to 40002 */
	udp_text(&t, false, "10.0.1.2", "10.0.2.9", 5060, 5060, "OPTIONS sip:x SIP/2.0\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, NULL, &r), NF_ACCEPT);
	assert_int_equal(inet_pton(AF_INET, "10.0.1.2", ph.u8), 1);
	nftdp_ct_expect_init(&x, NFPROTO_IPV4, NULL, &ph, IPPROTO_UDP, 0, htons(40000));
	x.mask.src.ip = 0;
	assert_int_equal(nftdp_ct_expect_related(en->s, r, &x, 4, 180), 0);
	assert_int_equal(same_media_call(en, 5070, 40000, true, &t), NF_ACCEPT);
	assert_udp_body(&t, "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\ns=-\r\nc=IN IP4 10.0.1.2\r\n"
			    "t=0 0\r\nm=audio 40002 RTP/AVP 0\r\n");
	assert_int_equal(exp_live(en), 8);
	/* another NATed call of 40002 finds it, saved port 40000: direct
	 * RTP to 40000, which the clash still holds (-EBUSY: dropped) */
	assert_int_equal(same_media_call(en, 5072, 40002, true, &t), NF_DROP);
	nftdp_ct_expect_unexpect(en->s, r, &x);
	assert_int_equal(exp_live(en), 7);
	assert_int_equal(same_media_call(en, 5072, 40002, true, &t), NF_ACCEPT);
	assert_udp_body(&t, "v=0\r\no=a 1 1 IN IP4 10.0.1.2\r\ns=-\r\nc=IN IP4 10.0.1.2\r\n"
			    "t=0 0\r\nm=audio 40000 RTP/AVP 0\r\n");
	assert_int_equal(exp_live(en), 9);
	env_free(en);
}

/* REGISTER behind snat with a port (198.51.100.1:6000): the registrar's
 * calls are expected at the NAT address and port, the Contact says so;
 * the 2xx activates that expectation and goes back naming the inside
 * Contact; the registrar's call from another port is related and reaches
 * the phone's inside address and port */
static void test_sip_nat_register(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 6000);
	struct nftdp_ct_entry *m, *r;
	struct tpkt t;

	(void)state;
	udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
		 "REGISTER sip:10.0.2.2 SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.1.2:5060\r\n"
		 "Contact: <sip:alice@10.0.1.2:5060>\r\nCSeq: 7 REGISTER\r\nExpires: 3600\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, &m), NF_ACCEPT);
	assert_udp_text(&t,
			"REGISTER sip:10.0.2.2 SIP/2.0\r\nVia: SIP/2.0/UDP 198.51.100.1:6000\r\n"
			"Contact: <sip:alice@198.51.100.1:6000>\r\nCSeq: 7 REGISTER\r\n"
			"Expires: 3600\r\n\r\n");
	assert_int_equal(exp_live(en), 1);
	/* inactive until the 2xx */
	udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5070, 6000, "INVITE sip:a SIP/2.0\r\n\r\n");
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_NEW);
	udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5060, 6000,
		 "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 198.51.100.1:6000\r\n"
		 "Contact: <sip:alice@198.51.100.1:6000>;expires=600\r\nCSeq: 7 REGISTER\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	assert_udp_text(&t, "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.0.1.2:5060\r\n"
			    "Contact: <sip:alice@10.0.1.2:5060>;expires=600\r\nCSeq: 7 REGISTER\r\n"
			    "\r\n");
	udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5071, 6000, "INVITE sip:a SIP/2.0\r\n\r\n");
	assert_int_equal(nat_path(en, &t, NULL, NULL, &r), ST_RELATED);
	assert_ip4(t.buf + 16, "10.0.1.2");
	assert_int_equal(port_at(t.buf + 22), 5060);
	assert_int_equal(r->helper, NFTDP_VM_CT_HELPER_SIP);
	/* permanent: still there */
	assert_int_equal(exp_live(en), 1);
	/* no tailroom for the Contact the NAT needs: the expectation goes
	 * with the dropped request */
	room = false;
	udp_text(&t, false, "10.0.1.2", "10.0.2.9", 5062, 5060,
		 "REGISTER sip:10.0.2.9 SIP/2.0\r\n"
		 "Contact: <sip:alice@10.0.1.2:5062>\r\nCSeq: 1 REGISTER\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_DROP);
	assert_int_equal(exp_live(en), 1);
	env_free(en);
}

/* IPv6 behind snat: URIs in brackets, received= and the SDP without
 * (%pI6c), maddr= with; the media expected at the NAT address */
static void test_sip_nat6(void **state)
{
	struct env *en = env_nat();
	struct nftdp_ct_nat_range snat = nat_to("2001:db8:ff::1", 0);
	static const char sdp[] = "v=0\r\no=a 1 1 IN IP6 2001:db8:1::2\r\n"
				  "c=IN IP6 2001:db8:1::2\r\nm=audio 4000 RTP/AVP 0\r\n";
	static const char sdp_nat[] = "v=0\r\no=a 1 1 IN IP6 2001:db8:ff::1\r\n"
				      "c=IN IP6 2001:db8:ff::1\r\nm=audio 4000 RTP/AVP 0\r\n";
	char text[600], want[600];
	struct tpkt t;
	uint32_t n;

	(void)state;
	snprintf(text, sizeof(text),
		 "INVITE sip:bob@[2001:db8:2::2] SIP/2.0\r\n"
		 "Via: SIP/2.0/UDP [2001:db8:1::2]:5060;maddr=[2001:db8:1::2]\r\n"
		 "Contact: <sip:alice@[2001:db8:1::2]:5060>\r\n"
		 "CSeq: 1 INVITE\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(sdp), sdp);
	udp_text(&t, true, "2001:db8:1::2", "2001:db8:2::2", 5060, 5060, text);
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	snprintf(want, sizeof(want),
		 "INVITE sip:bob@[2001:db8:2::2] SIP/2.0\r\n"
		 "Via: SIP/2.0/UDP [2001:db8:ff::1]:5060;maddr=[2001:db8:ff::1]\r\n"
		 "Contact: <sip:alice@[2001:db8:ff::1]:5060>\r\n"
		 "CSeq: 1 INVITE\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(sdp_nat), sdp_nat);
	n = (uint32_t)strlen(want);
	assert_int_equal(t.len, 40 + 8 + n);
	assert_int_equal(port_at(t.buf + 4), 8 + n);
	assert_int_equal(port_at(t.buf + 44), 8 + n);
	assert_memory_equal(t.buf + 48, want, n);
	assert_csums(&t);
	assert_int_equal(exp_live(en), 2);
	/* the answer's Via and received= go back inside */
	udp_text(&t, true, "2001:db8:2::2", "2001:db8:ff::1", 5060, 5060,
		 "SIP/2.0 100 Trying\r\n"
		 "Via: SIP/2.0/UDP [2001:db8:ff::1]:5060;received=2001:db8:ff::1\r\n"
		 "CSeq: 1 INVITE\r\n\r\n");
	assert_int_equal(nat_through(en, &t, &sip_udp, NULL, &snat, NULL), NF_ACCEPT);
	strcpy(want, "SIP/2.0 100 Trying\r\n"
		     "Via: SIP/2.0/UDP [2001:db8:1::2]:5060;received=2001:db8:1::2\r\n"
		     "CSeq: 1 INVITE\r\n\r\n");
	n = (uint32_t)strlen(want);
	assert_int_equal(t.len, 40 + 8 + n);
	assert_memory_equal(t.buf + 48, want, n);
	assert_csums(&t);
	udp(&t, true, "2001:db8:2::2", "2001:db8:ff::1", 9000, 4001, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_RELATED);
	assert_int_equal(inet_ntop(AF_INET6, t.buf + 24, text, sizeof(text)) != NULL, 1);
	assert_string_equal(text, "2001:db8:1::2");
	env_free(en);
}

/* every prefix and mutation of NAT'd messages, SDP included: no read
 * past the end (ASan), whatever the verdict */
static void test_sip_nat_prefixes(void **state)
{
	static const char *const texts[] = {
	    "INVITE sip:bob@10.0.2.2 SIP/2.0\r\n"
	    "Via: SIP/2.0/UDP 10.0.1.2:5060;maddr=10.0.1.2;received=10.0.2.2;rport=5060\r\n"
	    "From: <sip:a@10.0.1.2>\r\nTo: <sip:b@10.0.2.2>\r\n"
	    "m: <sip:a@10.0.1.2>, <sip:a@10.0.1.2:5062>\r\nCSeq: 1 INVITE\r\n\r\n",
	    "SIP/2.0 200 OK\r\n"
	    "Via: SIP/2.0/UDP 198.51.100.1:5060;received=198.51.100.1;rport=5060\r\n"
	    "Contact: <sip:b@10.0.2.2>\r\nCSeq: 1 INVITE\r\n\r\n",
	    invite};
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	struct env *en = env_nat();
	uint32_t seed = 7;
	char buf[600];
	struct tpkt t;

	(void)state;
	for (int r = 0; r < 4500; r++) {
		const char *txt = texts[r % 3];
		size_t n = strlen(txt), cut;

		memcpy(buf, txt, n + 1);
		if (r >= 1500)
			for (int k = 0; k < 4; k++) {
				seed = seed * 1103515245u + 12345u;
				buf[(seed >> 8) % n] =
				    "\r\n :;,@<>[].0123456789=sipUDP"[(seed >> 20) % 29];
			}
		seed = seed * 1103515245u + 12345u;
		cut = r < 1500 ? (size_t)(r / 3) % (n + 1) : (seed >> 8) % (n + 1);
		buf[cut] = 0;
		if (r % 3 == 1)
			udp_text(&t, false, "10.0.2.2", "198.51.100.1", 5060, 5060, buf);
		else
			udp_text(&t, false, "10.0.1.2", "10.0.2.2", 5060, 5060, buf);
		nat_through(en, &t, &sip_udp, NULL, &snat, NULL);
		assert_true(t.len <= sizeof(t.buf));
	}
	env_free(en);
}

/* max_expected: audio holds 4; video's own class beside it; the media
 * c= overrides the session's */
static void test_sip_classes(void **state)
{
	struct env *en = env_new(64, false);

	(void)state;
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "INVITE sip:b@10.0.2.2 SIP/2.0\r\nCSeq: 1 INVITE\r\n\r\nv=0\r\n"
			     "c=IN IP4 10.0.1.2\r\nm=audio 4000 RTP/AVP 0\r\n"
			     "m=audio 4002 RTP/AVP 0\r\nm=audio 4004 RTP/AVP 0\r\n"
			     "m=video 4006 RTP/AVP 0\r\n",
			     &sip_udp, NULL),
			 NF_ACCEPT);
	/* three media lines at most are used: the third audio pair evicts
	 * the first */
	assert_int_equal(exp_live(en), 4);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 1, 4000, NULL), ST_NEW);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 1, 4005, NULL), ST_RELATED);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 1, 4006, NULL), ST_NEW);
	/* a re-INVITE flushes, then video gets its class */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "INVITE sip:b@10.0.2.2 SIP/2.0\r\nCSeq: 2 INVITE\r\n\r\nv=0\r\n"
			     "c=IN IP4 10.0.1.9\r\nm=video 5001 RTP/AVP 0\r\n"
			     "c=IN IP4 10.0.1.2\r\n",
			     NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 1, 5000, NULL), ST_RELATED);
	/* the same media again (an UPDATE) replaces its own RTCP and expects
	 * the RTP that was taken anew */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "UPDATE sip:b@10.0.2.2 SIP/2.0\r\nCSeq: 3 UPDATE\r\n\r\nv=0\r\n"
			     "c=IN IP4 10.0.1.2\r\nm=video 5001 RTP/AVP 0\r\n",
			     NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(en->s->st.expect_delete, 6); /* 2 evicted, 3 flushed, 1 replaced */
	env_free(en);
}

static void test_sip_register(void **state)
{
	static const char reg[] = "REGISTER sip:10.0.2.2 SIP/2.0\r\n"
				  "CSeq: 7 REGISTER\r\n"
				  "Contact: <sip:alice@10.0.1.2:5070>\r\n"
				  "Expires: 3600\r\n"
				  "Content-Length: 0\r\n\r\n";
	static const char ok_reg[] = "SIP/2.0 200 OK\r\n"
				     "CSeq: 7 REGISTER\r\n"
				     "Contact: <sip:alice@10.0.1.2:5070>;expires=600\r\n"
				     "Content-Length: 0\r\n\r\n";
	struct env *en = env_new(64, false);
	struct nftdp_ct_expect_info xi;
	struct nftdp_ct_entry *m, *c;
	struct nftdp_ct_tuple t;

	(void)state;
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060, reg, &sip_udp, &m),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	memset(&t, 0, sizeof(t));
	t.l3proto = NFPROTO_IPV4;
	t.l4proto = IPPROTO_UDP;
	inet_pton(AF_INET, "10.0.2.2", &t.src);
	inet_pton(AF_INET, "10.0.1.2", &t.dst);
	t.sport = htons(5060);
	t.dport = htons(5070);
	assert_int_equal(nftdp_ct_expect_get(en->s, &t, 0, en->now, &xi), 0);
	assert_int_equal(xi.class, CT_SIP_EXPECT_SIGNALLING);
	assert_int_equal(xi.flags, NF_CT_EXPECT_PERMANENT | NF_CT_EXPECT_INACTIVE);
	assert_int_equal(xi.timeout_s, 180);
	/* inactive: a call from the registrar is not yet related */
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 5060, 5070, NULL), ST_NEW);
	/* a response to another CSeq is ignored; the 200 activates it */
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060,
			     "SIP/2.0 401 No\r\nCSeq: 6 REGISTER\r\n\r\n", NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060, ok_reg, NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(nftdp_ct_expect_get(en->s, &t, 0, en->now, &xi), 0);
	assert_int_equal(xi.flags, NF_CT_EXPECT_PERMANENT);
	assert_int_equal(xi.timeout_s, 600);
	/* calls from the registrar are related and get the sip helper; the
	 * expectation stays (permanent); another source is not expected */
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 5061, 5070, &c), ST_RELATED);
	assert_int_equal(c->helper, NFTDP_VM_CT_HELPER_SIP);
	assert_false(c->status & IPS_HELPER);
	assert_int_equal(rtp(en, false, "10.0.2.2", "10.0.1.2", 5062, 5070, NULL), ST_RELATED);
	assert_int_equal(rtp(en, false, "10.0.2.3", "10.0.1.2", 5062, 5070, NULL), ST_NEW);
	assert_int_equal(exp_live(en), 1);
	/* an expected connection does not register */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5070, 5061, reg, NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	/* it expires with the Contact's time */
	en->now += 601 * 1000;
	nftdp_ct_expect_gc(en->s, en->now);
	assert_int_equal(exp_live(en), 0);
	/* REGISTER again; a failure response removes it */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "REGISTER sip:10.0.2.2 SIP/2.0\r\nCSeq: 8 REGISTER\r\n"
			     "m: <sip:alice@10.0.1.2:5070;transport=udp>;expires=30\r\n\r\n",
			     NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	assert_int_equal(msg(en, false, "10.0.2.2", "10.0.1.2", 5060, 5060,
			     "SIP/2.0 403 No\r\nCSeq: 8 REGISTER\r\n\r\n", NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 0);
	/* third-party registrations, other transports, expires 0: nothing;
	 * an expires= without digits is dropped */
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "REGISTER sip:x SIP/2.0\r\nCSeq: 9 REGISTER\r\n"
			     "m: <sip:bob@10.0.1.3:5070>\r\n\r\n",
			     NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "REGISTER sip:x SIP/2.0\r\nCSeq: 9 REGISTER\r\n"
			     "m: <sip:a@10.0.1.2:5070;transport=tcp>\r\n\r\n",
			     NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "REGISTER sip:x SIP/2.0\r\nCSeq: 9 REGISTER\r\nExpires: 0\r\n"
			     "m: <sip:a@10.0.1.2:5070>\r\n\r\n",
			     NULL, NULL),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 0);
	assert_int_equal(msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060,
			     "REGISTER sip:x SIP/2.0\r\nCSeq: 9 REGISTER\r\n"
			     "m: <sip:a@10.0.1.2:5070>;expires=x\r\n\r\n",
			     NULL, NULL),
			 NF_DROP);
	env_free(en);
}

/* TCP over IPv6: two messages in one segment, each by its Content-Length;
 * a message longer than the segment is left alone */
static void test_sip_tcp6(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {true, "2001:db8:1::2", "2001:db8:2::2", 40000, 5060, 1000, 5000};
	struct nftdp_ct_entry *m;
	static const char sdp_a[] = "v=0\r\nc=IN IP6 2001:db8:1::2\r\nm=audio 4000 RTP/AVP 0\r\n";
	static const char sdp_b[] = "v=0\r\nc=IN IP6 2001:db8:2::2\r\nm=audio 6000 RTP/AVP 0\r\n";
	struct tpkt t;
	char buf[1200];

	(void)state;
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	assert_int_equal(hx(en, &t, &sip_tcp, &m, NULL), ST_NEW);
	f.aseq++;
	assert_int_equal(tx(en, &f, 1, TS | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(tx(en, &f, 0, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(m->helper, NFTDP_VM_CT_HELPER_SIP);
	snprintf(buf, sizeof(buf),
		 "OPTIONS sip:b SIP/2.0\r\nCSeq: 1 OPTIONS\r\nl: 0\r\n\r\n"
		 "INVITE sip:b SIP/2.0\r\nCSeq: 2 INVITE\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(sdp_a), sdp_a);
	assert_int_equal(say(en, &f, 0, buf), NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	assert_int_equal(left_s(en, m), 3600);
	assert_int_equal(rtp(en, true, "2001:db8:2::2", "2001:db8:1::2", 9, 4001, NULL),
			 ST_RELATED);
	/* the body runs past the segment: the kernel stops there */
	assert_int_equal(say(en, &f, 1,
			     "SIP/2.0 200 OK\r\nCSeq: 2 INVITE\r\nl: 400\r\n\r\nv=0\r\n"
			     "c=IN IP6 2001:db8:2::2\r\nm=audio 6000 RTP/AVP 0\r\n"),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	/* no blank line after the headers: nothing */
	assert_int_equal(say(en, &f, 1,
			     "SIP/2.0 200 OK\r\nCSeq: 2 INVITE\r\nl: 0\r\nv=0\r\n"
			     "c=IN IP6 2001:db8:2::2\r\nm=audio 6000 RTP/AVP 0\r\n"),
			 NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	/* the answer with its body, then a BYE in the same segment: the
	 * answer's expectations are made, then flushed with the rest */
	snprintf(buf, sizeof(buf),
		 "SIP/2.0 200 OK\r\nCSeq: 2 INVITE\r\nl: %zu\r\n\r\n%s"
		 "BYE sip:a SIP/2.0\r\nCSeq: 3 BYE\r\nl: 0\r\n\r\n",
		 strlen(sdp_b), sdp_b);
	assert_int_equal(say(en, &f, 1, buf), NF_ACCEPT);
	assert_int_equal(en->s->st.expect_create, 4);
	assert_int_equal(exp_live(en), 0);
	env_free(en);
}

/* every parser over text in a buffer of exactly its length */
static void parse_all(const char *text)
{
	uint32_t n, mo, ml, off = 0;
	char *b = exact(text, &n);
	union nftdp_ct_addr a;
	uint16_t port;
	int in = 0;

	for (int l3 = 0; l3 < 2; l3++) {
		uint8_t f = l3 ? NFPROTO_IPV6 : NFPROTO_IPV4;

		for (int type = 0; type <= CT_SIP_HDR_CONTENT_LENGTH; type++)
			nftdp_ct_sip_get_header(f, b, 0, n, (enum ct_sip_hdr)type, &mo, &ml);
		for (int type = CT_SDP_HDR_VERSION; type <= CT_SDP_HDR_MEDIA; type++)
			nftdp_ct_sip_get_sdp_header(f, b, 0, n, (enum ct_sdp_hdr)type,
						    CT_SDP_HDR_MEDIA, &mo, &ml);
		off = 0;
		in = 0;
		for (int k = 0; k < 8; k++)
			if (nftdp_ct_sip_parse_header_uri(f, b, &off, n, CT_SIP_HDR_CONTACT, &in,
							  &mo, &ml, &a, &port) <= 0)
				break;
	}
	free(b);
}

/* every prefix of every message, in exactly-sized datagrams, and mutated
 * copies: no read past the end (ASan), whatever the verdict */
static void test_sip_prefixes(void **state)
{
	static const char *const texts[] = {invite, ok,
					    "REGISTER sip:10.0.2.2 SIP/2.0\r\nCSeq: 7 REGISTER\r\n"
					    "Contact: <sip:alice@10.0.1.2:5070>;expires=60\r\n"
					    "Expires: 3600\r\n\r\n",
					    "SIP/2.0 200 OK\r\nCSeq: 7 REGISTER\r\n"
					    "m: <sip:alice@10.0.1.2:5070>;expires=600, "
					    "<sip:alice@10.0.1.2:5071;transport=udp>\r\n\r\n"};
	struct env *en = env_new(256, false);
	char buf[600];

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t n = strlen(texts[i]);

		for (size_t k = 0; k <= n; k++) {
			memcpy(buf, texts[i], k);
			buf[k] = 0;
			parse_all(buf);
			msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060, buf, &sip_udp, NULL);
		}
	}
	/* mutated copies (bytes from the parsers' alphabet), cut anywhere */
	{
		static const char alpha[] = "\r\n \t:;,@<>[].0123456789abcdefsipSIPvcmlIN=/";
		uint32_t seed = 1;

		for (int r = 0; r < 4000; r++) {
			const char *t = texts[r % (sizeof(texts) / sizeof(texts[0]))];
			size_t n = strlen(t);

			memcpy(buf, t, n + 1);
			for (int k = 0; k < 6; k++) {
				seed = seed * 1103515245u + 12345u;
				buf[(seed >> 8) % n] = alpha[(seed >> 20) % (sizeof(alpha) - 1)];
			}
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % (n + 1)] = 0;
			parse_all(buf);
			msg(en, false, "10.0.1.2", "10.0.2.2", 5060, 5060, buf, &sip_udp, NULL);
		}
	}
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sip_parse),
	    cmocka_unit_test(test_sip_call),
	    cmocka_unit_test(test_sip_failure),
	    cmocka_unit_test(test_sip_classes),
	    cmocka_unit_test(test_sip_register),
	    cmocka_unit_test(test_sip_tcp6),
	    cmocka_unit_test(test_sip_prefixes),
	    cmocka_unit_test(test_sip_two_masters),
	    cmocka_unit_test(test_sip_fmt_ip6),
	    cmocka_unit_test(test_sip_parse_request),
	    cmocka_unit_test(test_sip_nat_snat),
	    cmocka_unit_test(test_sip_nat_dnat),
	    cmocka_unit_test(test_sip_nat_tcp),
	    cmocka_unit_test(test_sip_nat_prefixes),
	    cmocka_unit_test(test_sip_nat_sdp),
	    cmocka_unit_test(test_sip_nat_register),
	    cmocka_unit_test(test_sip_nat6),
	    cmocka_unit_test(test_sip_nat_same_media),
	    cmocka_unit_test(test_sip_nat_tcp_forced_dport),
	    cmocka_unit_test(test_sip_nat6_same_media),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
