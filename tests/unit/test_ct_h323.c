// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): the H.323 helpers. The PER decoder on a
 * Setup, a Connect and an H.245 OpenLogicalChannel (the bytes of
 * differential case 322's encoder), every prefix of each and corrupted
 * copies in exactly-sized buffers (ASan sees any read past the end); a
 * call through the Q.931 helper: the Setup's and Connect's h245Address
 * expected (the Connect's TPKT header in a segment of its own), the H.245
 * connection related with helper H.245, its OpenLogicalChannel expecting
 * RTP/RTCP, media related; an address other than the sender's expects
 * nothing. RAS: a RegistrationRequest expects the gatekeeper's calls
 * (permanent, helper Q.931), its Confirm's time to live becomes the RAS
 * connection's timeout, an AdmissionConfirm expects the call it names,
 * an UnregistrationRequest removes them all and leaves 30 s; a
 * timeToLive at the very end of a message is out of bound, as the
 * kernel's decoder (it steps over the value twice). Random buffers and
 * mutated messages through every decoder. RAS through source NAT: the
 * RRQ rewritten, the gatekeeper's call taken back to the endpoint.
 * Call forwarding: a Facility (callForwarded) expects the peer's call to
 * its alternativeAddress (helper Q.931) unless callforward_filter's
 * route lookup (the shard's same_route) puts both on one next hop, which
 * is asked about the forward-to address and the peer; through source
 * NAT the address becomes the NAT address and a free port from the
 * announced one, and the call there is taken to the forward-to party;
 * over IPv6 the filter is asked with IPv6 addresses, and an ip6Address
 * on an IPv4 connection expects nothing.
 */
#include "ct_fixture.h"
#include "helper_h323.h"

static const struct nftdp_vm_ct_helper q931_h = {NFTDP_VM_CT_HELPER_Q931, IPPROTO_TCP, true, true};
static const struct nftdp_vm_ct_helper ras_h = {NFTDP_VM_CT_HELPER_RAS, IPPROTO_UDP, true, true};

/* differential case 323's RAS messages: RRQ from 10.1.0.1
 * (callSignalAddress 10.1.0.1:1720, timeToLive 120, then an empty
 * tokens), RCF (timeToLive 120), ACF (destCallSignalAddress
 * 10.2.0.5:1720), and an URQ */
static const uint8_t rrq[] = {0x0e, 0x00, 0x00, 0x00, 0x06, 0x00, 0x08, 0x91, 0x4a, 0x00, 0x04,
			      0x80, 0x01, 0x00, 0x0a, 0x01, 0x00, 0x01, 0x06, 0xb8, 0x01, 0x00,
			      0x0a, 0x01, 0x00, 0x01, 0x9c, 0x40, 0x00, 0x00, 0xb5, 0x00, 0x00,
			      0x01, 0x04, 0xc0, 0x02, 0x00, 0x77, 0x01, 0x00};
static const uint8_t rcf[] = {0x12, 0x00, 0x00, 0x00, 0x06, 0x00, 0x08, 0x91, 0x4a, 0x00, 0x04,
			      0x01, 0x00, 0x0a, 0x02, 0x00, 0x01, 0x06, 0xb8, 0x02, 0x00, 0x65,
			      0x00, 0x31, 0x04, 0xc0, 0x02, 0x00, 0x77, 0x01, 0x00};
static const uint8_t acf[] = {0x28, 0x00, 0x00, 0x01, 0x40, 0x02, 0x80,
			      0x00, 0x0a, 0x02, 0x00, 0x05, 0x06, 0xb8};
static const uint8_t urq[] = {0x18, 0x00, 0x00, 0x02, 0x01, 0x00,
			      0x0a, 0x01, 0x00, 0x01, 0x06, 0xb8};

/* TPKT + Q.931 Setup: h245Address 10.1.0.1:1800 */
static const uint8_t setup_tpkt[] = {
    0x03, 0x00, 0x00, 0x35, 0x08, 0x02, 0x00, 0x01, 0x05, 0x04, 0x03, 0x88, 0x93, 0xa5,
    0x7e, 0x00, 0x24, 0x05, 0x00, 0x40, 0x06, 0x00, 0x08, 0x91, 0x4a, 0x00, 0x04, 0x00,
    0x0a, 0x01, 0x00, 0x01, 0x07, 0x08, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
    0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00};
/* TPKT + Q.931 Connect: h245Address 10.2.0.1:1801 */
static const uint8_t connect_tpkt[] = {
    0x03, 0x00, 0x00, 0x34, 0x08, 0x02, 0x00, 0x01, 0x07, 0x04, 0x03, 0x88, 0x93,
    0xa5, 0x7e, 0x00, 0x23, 0x05, 0x02, 0x40, 0x06, 0x00, 0x08, 0x91, 0x4a, 0x00,
    0x04, 0x00, 0x0a, 0x02, 0x00, 0x01, 0x07, 0x09, 0x00, 0x00, 0x00, 0x01, 0x02,
    0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
/* TPKT + H.245 OpenLogicalChannel: g711Ulaw64k, H.225.0 media channel
 * 10.1.0.1:5000, media control channel 10.1.0.1:5001 */
static const uint8_t olc_tpkt[] = {0x03, 0x00, 0x00, 0x1e, 0x03, 0x00, 0x00, 0x00, 0x0c, 0x60,
				   0x13, 0x80, 0x11, 0x14, 0x00, 0x01, 0x00, 0x0a, 0x01, 0x00,
				   0x01, 0x13, 0x88, 0x00, 0x0a, 0x01, 0x00, 0x01, 0x13, 0x89};

/* TPKT + Q.931 Facility, reason callForwarded, alternativeAddress
 * 10.3.0.9:1720 (its 4 bytes at offset 28) */
static const uint8_t fwd_tpkt[] = {0x03, 0x00, 0x00, 0x23, 0x08, 0x02, 0x00, 0x01, 0x62,
				   0x04, 0x03, 0x88, 0x93, 0xa5, 0x7e, 0x00, 0x12, 0x05,
				   0x06, 0x40, 0x06, 0x00, 0x08, 0x91, 0x4a, 0x00, 0x04,
				   0x00, 0x0a, 0x03, 0x00, 0x09, 0x06, 0xb8, 0x20};

/* the same over IPv6: alternativeAddress ip6Address [2001:db8:3::9]:1720
 * (h323_per.py's forwarded()) */
static const uint8_t fwd6_tpkt[] = {
    0x03, 0x00, 0x00, 0x2f, 0x08, 0x02, 0x00, 0x01, 0x62, 0x04, 0x03, 0x88, 0x93, 0xa5, 0x7e, 0x00,
    0x1e, 0x05, 0x06, 0x40, 0x06, 0x00, 0x08, 0x91, 0x4a, 0x00, 0x04, 0x30, 0x20, 0x01, 0x0d, 0xb8,
    0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x06, 0xb8, 0x20};

static int decode_exact(const uint8_t *p, uint32_t n, bool q931, struct h323_events *ev)
{
	uint8_t *buf = malloc(n ? n : 1);
	int rc;

	assert_non_null(buf);
	memcpy(buf, p, n);
	rc = q931 ? nftdp_h323_decode_q931(buf, n, ev) : nftdp_h323_decode_h245(buf, n, ev);
	free(buf);
	return rc;
}

static int decode_ras_exact(const uint8_t *p, uint32_t n, struct h323_events *ev)
{
	uint8_t *buf = malloc(n ? n : 1);
	int rc;

	assert_non_null(buf);
	memcpy(buf, p, n);
	rc = nftdp_h323_decode_ras(buf, n, ev);
	free(buf);
	return rc;
}

static uint32_t find(const struct h323_events *ev, uint8_t tag, uint32_t from)
{
	for (uint32_t i = from; i < ev->n; i++)
		if (ev->ev[i].tag == tag)
			return i;
	return UINT32_MAX;
}

static void test_decode(void **state)
{
	static struct h323_events ev;
	uint32_t i;

	(void)state;
	/* Setup: body 0, h245Address ipAddress, its 4 bytes and port */
	assert_true(decode_exact(setup_tpkt + 4, sizeof(setup_tpkt) - 4, true, &ev) >= 0);
	i = find(&ev, H323_EV_BODY, 0);
	assert_true(i != UINT32_MAX);
	assert_int_equal(ev.ev[i].val, 0);
	i = find(&ev, H323_EV_H245ADDR, 0);
	assert_true(i != UINT32_MAX);
	assert_int_equal(ev.ev[i].val, 0);
	assert_int_equal(ev.ev[i + 1].tag, H323_EV_IP4);
	assert_memory_equal(setup_tpkt + 4 + ev.ev[i + 1].val, "\x0a\x01\x00\x01\x07\x08", 6);
	/* Connect: body 2 */
	assert_true(decode_exact(connect_tpkt + 4, sizeof(connect_tpkt) - 4, true, &ev) >= 0);
	assert_int_equal(ev.ev[find(&ev, H323_EV_BODY, 0)].val, 2);
	i = find(&ev, H323_EV_IP4, 0);
	assert_memory_equal(connect_tpkt + 4 + ev.ev[i].val, "\x0a\x02\x00\x01\x07\x09", 6);
	/* OpenLogicalChannel: audio, media and media control channels */
	assert_true(decode_exact(olc_tpkt + 4, sizeof(olc_tpkt) - 4, false, &ev) >= 0);
	assert_true(find(&ev, H323_EV_OLC, 0) != UINT32_MAX);
	assert_int_equal(ev.ev[find(&ev, H323_EV_DATATYPE, 0)].val, 3);
	i = find(&ev, H323_EV_MEDIA, 0);
	assert_true(i != UINT32_MAX);
	assert_int_equal(ev.ev[i + 1].tag, H323_EV_UNICAST);
	assert_int_equal(ev.ev[i + 2].tag, H323_EV_IP4);
	assert_memory_equal(olc_tpkt + 4 + ev.ev[i + 2].val, "\x0a\x01\x00\x01\x13\x88", 6);
	i = find(&ev, H323_EV_MEDIACTL, i);
	assert_true(i != UINT32_MAX);
	assert_memory_equal(olc_tpkt + 4 + ev.ev[i + 2].val, "\x0a\x01\x00\x01\x13\x89", 6);
	/* a choice index beyond the root without the extension bit */
	{
		uint8_t bad[sizeof(olc_tpkt) - 4];

		memcpy(bad, olc_tpkt + 4, sizeof(bad));
		bad[0] = 0x0f; /* request, RequestMessage index 15 of 11 */
		assert_int_equal(decode_exact(bad, sizeof(bad), false, &ev), H323_RANGE);
	}
	/* not Q.931 */
	assert_int_equal(decode_exact((const uint8_t *)"\x09\x00\x05\x00", 4, true, &ev),
			 H323_RANGE);
}

/* every proper prefix is an error; corrupted copies decode or fail, never
 * reading past the end */
static void test_decode_truncated(void **state)
{
	static struct h323_events ev;
	static const struct {
		const uint8_t *p;
		uint32_t n;
		bool q931;
	} m[] = {{setup_tpkt + 4, sizeof(setup_tpkt) - 4, true},
		 {connect_tpkt + 4, sizeof(connect_tpkt) - 4, true},
		 {olc_tpkt + 4, sizeof(olc_tpkt) - 4, false}};
	uint8_t buf[128];

	(void)state;
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		for (uint32_t n = 0; n < m[k].n; n++)
			assert_true(decode_exact(m[k].p, n, m[k].q931, &ev) < 0);
		for (uint32_t at = 0; at < m[k].n; at++)
			for (unsigned int x = 1; x < 256; x += 17) {
				memcpy(buf, m[k].p, m[k].n);
				buf[at] ^= (uint8_t)x;
				decode_exact(buf, m[k].n, m[k].q931, &ev);
				/* and the corrupted copy cut short */
				decode_exact(buf, m[k].n - 1, m[k].q931, &ev);
			}
	}
}

/* random buffers and random mutations of the messages (a fixed seed):
 * every decoder returns, reading nothing past the end */
static void test_decode_random(void **state)
{
	static struct h323_events ev;
	static const uint8_t *const msgs[] = {
	    setup_tpkt + 4, connect_tpkt + 4, olc_tpkt + 4, rrq, rcf, acf, urq};
	static const uint32_t lens[] = {sizeof(setup_tpkt) - 4,
					sizeof(connect_tpkt) - 4,
					sizeof(olc_tpkt) - 4,
					sizeof(rrq),
					sizeof(rcf),
					sizeof(acf),
					sizeof(urq)};
	uint32_t x = 0x12345678;
	uint8_t buf[96];

	(void)state;
	for (unsigned int round = 0; round < 20000; round++) {
		unsigned int k = round % 7, n;

		x = x * 1103515245u + 12345u;
		if (round & 1) { /* a mutated message: 1 to 4 bytes changed */
			n = lens[k];
			memcpy(buf, msgs[k], n);
			for (unsigned int j = 0; j <= (x >> 28) % 4; j++) {
				x = x * 1103515245u + 12345u;
				buf[(x >> 8) % n] = (uint8_t)(x >> 20);
			}
		} else { /* random bytes */
			n = (x >> 24) % sizeof(buf);
			for (unsigned int j = 0; j < n; j++) {
				x = x * 1103515245u + 12345u;
				buf[j] = (uint8_t)(x >> 16);
			}
			if (n && k < 2)
				buf[0] = 0x08; /* past the protocol discriminator */
		}
		switch (k) {
		case 0:
		case 1:
			decode_exact(buf, n, true, &ev);
			break;
		case 2:
			decode_exact(buf, n, false, &ev);
			break;
		default:
			decode_ras_exact(buf, n, &ev);
			break;
		}
		assert_true(ev.n <= H323_MAX_EVENTS);
	}
}

/* a segment of f carrying n bytes from dir: confirm's verdict */
static unsigned int sayb(struct env *en, struct tflow *f, int dir, const uint8_t *p, uint32_t n)
{
	uint32_t *mine = dir ? &f->bseq : &f->aseq, *theirs = dir ? &f->aseq : &f->bseq;
	uint8_t h[1600];
	struct tpkt t;
	unsigned int v;

	tcp_hdr(h, dir ? f->bp : f->ap, dir ? f->ap : f->bp, *mine, *theirs, TA, 65535, 0);
	memcpy(h + 20, p, n);
	build(&t, f->v6, dir ? f->b : f->a, dir ? f->a : f->b, IPPROTO_TCP, h, 20 + n);
	assert_int_equal(hx(en, &t, NULL, NULL, &v), ST_ESTABLISHED);
	*mine += n;
	return v;
}

static void test_call(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow q = {false, "10.1.0.1", "10.2.0.1", 40000, 1720, 1000, 5000};
	struct tflow h245 = {false, "10.1.0.1", "10.2.0.1", 40001, 1801, 7000, 9000};
	struct tflow other = {false, "10.1.0.1", "10.2.0.1", 1800, 40002, 7000, 9000};
	struct nftdp_ct_entry *e;
	struct tpkt t;

	(void)state;
	e = open_ctl(en, &q, &q931_h);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_Q931);
	/* the Setup: C's h245Address (C:1800) */
	assert_int_equal(sayb(en, &q, 0, setup_tpkt, sizeof(setup_tpkt)), NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	/* the Connect from S, its TPKT header alone first */
	assert_int_equal(sayb(en, &q, 1, connect_tpkt, 4), NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	assert_int_equal(sayb(en, &q, 1, connect_tpkt + 4, sizeof(connect_tpkt) - 4), NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	/* the Setup again from S: not S's address, nothing expected */
	assert_int_equal(sayb(en, &q, 1, setup_tpkt, sizeof(setup_tpkt)), NF_ACCEPT);
	assert_int_equal(exp_live(en), 2);
	/* C opens the H.245 connection S announced: related, helper H.245 */
	seg(&t, &h245, 0, TS, h245.aseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, &e, NULL), ST_RELATED);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_H245);
	h245.aseq++;
	assert_int_equal(tx(en, &h245, 1, TS | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(tx(en, &h245, 0, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(exp_live(en), 1);
	/* its OpenLogicalChannel: RTP 5000 and RTCP 5001 at C */
	assert_int_equal(sayb(en, &h245, 0, olc_tpkt, sizeof(olc_tpkt)), NF_ACCEPT);
	assert_int_equal(exp_live(en), 3);
	udp(&t, false, "10.2.0.1", "10.1.0.1", 6000, 5000, 20);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_RELATED);
	udp(&t, false, "10.2.0.1", "10.1.0.1", 6001, 5001, 20);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_RELATED);
	udp(&t, false, "10.2.0.1", "10.1.0.1", 6002, 5002, 20);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_NEW);
	/* S connects to C's announced H.245 port: related too */
	seg(&t, &other, 1, TS, other.bseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_RELATED);
	assert_int_equal(exp_live(en), 0);
	/* a segment without data between a TPKT header and its data: the
	 * header is forgotten (get_tpkt_data's clear_out), the data not
	 * read; the Connect again, whole: its H.245 expected anew */
	assert_int_equal(sayb(en, &q, 1, connect_tpkt, 4), NF_ACCEPT);
	assert_int_equal(tx(en, &q, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(sayb(en, &q, 1, connect_tpkt + 4, sizeof(connect_tpkt) - 4), NF_ACCEPT);
	assert_int_equal(exp_live(en), 0);
	assert_int_equal(sayb(en, &q, 1, connect_tpkt, sizeof(connect_tpkt)), NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	env_free(en);
}

/* a RAS datagram from dir (0: C -> S) of n bytes: the ct state bits */
static uint32_t ras_say(struct env *en, int dir, const uint8_t *p, uint32_t n,
			const struct nftdp_vm_ct_helper *h, struct nftdp_ct_entry **e)
{
	uint8_t l4[256] = {0};
	uint16_t sp = dir ? 1719 : 40000, dp = dir ? 40000 : 1719;
	struct tpkt t;

	l4[0] = (uint8_t)(sp >> 8);
	l4[1] = (uint8_t)sp;
	l4[2] = (uint8_t)(dp >> 8);
	l4[3] = (uint8_t)dp;
	l4[4] = (uint8_t)((8 + n) >> 8);
	l4[5] = (uint8_t)(8 + n);
	memcpy(l4 + 8, p, n);
	build(&t, false, dir ? "10.2.0.1" : "10.1.0.1", dir ? "10.1.0.1" : "10.2.0.1", IPPROTO_UDP,
	      l4, 8 + n);
	return hx(en, &t, h, e, NULL);
}

static void test_ras(void **state)
{
	static struct h323_events ev;
	struct env *en = env_new(64, false);
	struct tflow gk = {false, "10.1.0.1", "10.2.0.1", 1720, 30000, 7000, 9000};
	struct tflow x = {false, "10.1.0.1", "10.2.0.9", 1720, 30002, 7000, 9000};
	struct tflow call = {false, "10.1.0.1", "10.2.0.5", 30003, 1720, 7000, 9000};
	struct nftdp_ct_entry *e, *c;
	struct tpkt t;
	uint32_t i;

	(void)state;
	/* the decoder: the RRQ's callSignalAddress and timeToLive */
	assert_true(decode_ras_exact(rrq, sizeof(rrq), &ev) >= 0);
	assert_int_equal(ev.ev[0].tag, H323_EV_RAS);
	assert_int_equal(ev.ev[0].val, 3);
	i = find(&ev, H323_EV_RASADDR, 0);
	assert_true(i != UINT32_MAX);
	assert_memory_equal(rrq + ev.ev[i + 1].val, "\x0a\x01\x00\x01\x06\xb8", 6);
	assert_int_equal(ev.ev[find(&ev, H323_EV_TTL, 0)].val, 120);
	/* without the bytes after timeToLive: out of bound */
	assert_int_equal(decode_ras_exact(rrq, sizeof(rrq) - 2, &ev), H323_BOUND);
	for (uint32_t n = 0; n < sizeof(rrq) - 2; n++)
		assert_true(decode_ras_exact(rrq, n, &ev) < 0);
	for (uint32_t n = 0; n < sizeof(acf); n++)
		assert_true(decode_ras_exact(acf, n, &ev) < 0);

	/* RRQ: the gatekeeper's calls to C:1720 */
	assert_int_equal(ras_say(en, 0, rrq, sizeof(rrq), &ras_h, &e), ST_NEW);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_RAS);
	assert_int_equal(exp_live(en), 1);
	/* RCF: the RAS connection lives its time to live */
	assert_int_equal(ras_say(en, 1, rcf, sizeof(rcf), NULL, NULL), ST_ESTABLISHED);
	assert_int_equal(left_s(en, e), 120);
	/* two calls from the gatekeeper: related, helper Q.931 */
	seg(&t, &gk, 1, TS, gk.bseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, &c, NULL), ST_RELATED);
	assert_int_equal(c->helper, NFTDP_VM_CT_HELPER_Q931);
	gk.bp = 30001;
	seg(&t, &gk, 1, TS, gk.bseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_RELATED);
	assert_int_equal(exp_live(en), 1);
	/* not from the gatekeeper */
	seg(&t, &x, 1, TS, x.bseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_NEW);
	/* ACF: C's call to 10.2.0.5:1720 */
	assert_int_equal(ras_say(en, 1, acf, sizeof(acf), NULL, NULL), ST_ESTABLISHED);
	assert_int_equal(exp_live(en), 2);
	seg(&t, &call, 0, TS, call.aseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, NULL, NULL), ST_RELATED);
	/* URQ: no expectation left, 30 s for the answer */
	assert_int_equal(ras_say(en, 0, urq, sizeof(urq), NULL, NULL), ST_ESTABLISHED);
	assert_int_equal(exp_live(en), 0);
	assert_int_equal(left_s(en, e), 30);
	env_free(en);
}

/* the expectation `conntrack -L expect` dumps: its NAT function
 * (CTA_EXPECT_FN "Q.931" or "callforwarding") and saved address */
static int exp_fn(const struct nftdp_ct_expect_info *x, void *arg)
{
	struct nftdp_ct_expect_info *out = arg;

	*out = *x;
	return 1;
}

/* RAS through source NAT (nf_nat_h323): the RRQ's callSignalAddress
 * and rasAddress become the NAT address, the calls are expected there
 * and taken back to the endpoint (nf_nat_follow_master) */
static void test_ras_snat(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	struct nftdp_ct_entry *m, *d;
	uint8_t l4[8 + sizeof(rrq)] = {0x9c, 0x40, 0x06, 0xb7, 0, 8 + sizeof(rrq)};
	struct tflow gk = {false, "198.51.100.1", "10.2.0.1", 1720, 30000, 7000, 9000};
	struct nftdp_ct_expect_info xi;
	struct tpkt t;

	(void)state;
	memcpy(l4 + 8, rrq, sizeof(rrq));
	build(&t, false, "10.1.0.1", "10.2.0.1", IPPROTO_UDP, l4, sizeof(l4));
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	nftdp_ct_vm_ops.helper(t.pkt.ct, &ras_h);
	m = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, &snat, NFTDP_CT_MANIP_SRC), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_true(m->status & IPS_SRC_NAT);
	/* callSignalAddress (payload byte 14) and rasAddress (22) */
	assert_ip4(t.buf + 28 + 14, "198.51.100.1");
	assert_int_equal(port_at(t.buf + 28 + 18), 1720);
	assert_ip4(t.buf + 28 + 22, "198.51.100.1");
	assert_int_equal(port_at(t.buf + 28 + 26), ntohs(m->tuple[1].dport));
	assert_csums(&t);
	assert_int_equal(exp_live(en), 1);
	/* ip_nat_q931_expect: CTA_EXPECT_FN "Q.931", no saved address */
	assert_int_equal(nftdp_ct_expect_walk(en->s, en->now, exp_fn, &xi), 1);
	assert_true(xi.nat && xi.nat_q931 && !xi.nat_callfwd);
	assert_int_equal(xi.nat_dir, IP_CT_DIR_REPLY);
	assert_int_equal(ntohs(xi.nat_port), 1720);
	/* the gatekeeper calls the NAT address: taken to the endpoint */
	seg(&t, &gk, 1, TS, gk.bseq, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_true(d->status & IPS_DST_NAT);
	assert_int_equal(d->helper, NFTDP_VM_CT_HELPER_Q931);
	assert_ip4(t.buf + 16, "10.1.0.1");
	assert_int_equal(port_at(t.buf + 22), 1720);
	assert_csums(&t);
	env_free(en);
}

/* callforward_do_filter's stand-in: the answer, and what it was asked */
static struct {
	bool same;
	unsigned int calls;
	uint8_t nfproto;
	uint8_t a[16], b[16];
} route;

static bool same_route(void *arg, uint8_t nfproto, const void *a16, const void *b16)
{
	(void)arg;
	route.calls++;
	route.nfproto = nfproto;
	memcpy(route.a, a16, 16);
	memcpy(route.b, b16, 16);
	return route.same;
}

static void test_callforwarding(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow q = {false, "10.1.0.1", "10.2.0.1", 40000, 1720, 1000, 5000};
	struct tflow fwd = {false, "10.1.0.1", "10.3.0.9", 40001, 1720, 7000, 9000};
	struct nftdp_ct_entry *e, *qe;
	uint8_t f2[sizeof(fwd_tpkt)];
	struct tpkt t;

	(void)state;
	memset(&route, 0, sizeof(route));
	qe = open_ctl(en, &q, &q931_h);
	/* no route lookup configured: tracked */
	assert_int_equal(sayb(en, &q, 1, fwd_tpkt, sizeof(fwd_tpkt)), NF_ACCEPT);
	assert_int_equal(exp_live(en), 1);
	/* C's call to the forward-to party: related, helper Q.931 */
	seg(&t, &fwd, 0, TS, fwd.aseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, &e, NULL), ST_RELATED);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_Q931);
	assert_int_equal(exp_live(en), 0);
	/* the filter asked: the forward-to address, then the peer (C) */
	en->s->cfg.same_route = same_route;
	assert_int_equal(sayb(en, &q, 1, fwd_tpkt, sizeof(fwd_tpkt)), NF_ACCEPT);
	assert_int_equal(route.calls, 1);
	assert_int_equal(route.nfproto, NFPROTO_IPV4);
	assert_memory_equal(route.a, "\x0a\x03\x00\x09", 4);
	assert_memory_equal(route.b, "\x0a\x01\x00\x01", 4);
	assert_int_equal(exp_live(en), 1);
	/* both on one next hop: not tracked */
	nftdp_ct_expect_remove_master(en->s, qe);
	route.same = true;
	memcpy(f2, fwd_tpkt, sizeof(f2));
	f2[31] = 10; /* 10.3.0.10 */
	assert_int_equal(sayb(en, &q, 1, f2, sizeof(f2)), NF_ACCEPT);
	assert_int_equal(route.calls, 2);
	assert_int_equal(exp_live(en), 0);
	/* port 0: nothing asked, nothing expected */
	route.same = false;
	f2[32] = f2[33] = 0;
	assert_int_equal(sayb(en, &q, 1, f2, sizeof(f2)), NF_ACCEPT);
	assert_int_equal(route.calls, 2);
	assert_int_equal(exp_live(en), 0);
	env_free(en);
}

/* call forwarding over IPv6: the filter asked with IPv6 addresses, the
 * call expected (no NAT on IPv6, as the kernel's nf_nat_h323); an IPv6
 * Facility on an IPv4 connection expects nothing (get_h225_addr) */
static void test_callforwarding6(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow q = {true, "2001:db8:1::1", "2001:db8:2::1", 40000, 1720, 1000, 5000};
	struct tflow fwd = {true, "2001:db8:1::1", "2001:db8:3::9", 40001, 1720, 7000, 9000};
	struct tflow q4 = {false, "10.1.0.1", "10.2.0.1", 40000, 1720, 1000, 5000};
	struct nftdp_ct_entry *e;
	struct tpkt t;

	(void)state;
	memset(&route, 0, sizeof(route));
	en->s->cfg.same_route = same_route;
	open_ctl(en, &q, &q931_h);
	assert_int_equal(sayb(en, &q, 1, fwd6_tpkt, sizeof(fwd6_tpkt)), NF_ACCEPT);
	assert_int_equal(route.calls, 1);
	assert_int_equal(route.nfproto, NFPROTO_IPV6);
	assert_memory_equal(route.a, fwd6_tpkt + 28, 16);
	assert_memory_equal(route.b, "\x20\x01\x0d\xb8\x00\x01\0\0\0\0\0\0\0\0\0\x01", 16);
	assert_int_equal(exp_live(en), 1);
	seg(&t, &fwd, 0, TS, fwd.aseq, 0, 0);
	assert_int_equal(hx(en, &t, NULL, &e, NULL), ST_RELATED);
	assert_int_equal(e->helper, NFTDP_VM_CT_HELPER_Q931);
	/* filtered */
	route.same = true;
	assert_int_equal(sayb(en, &q, 1, fwd6_tpkt, sizeof(fwd6_tpkt)), NF_ACCEPT);
	assert_int_equal(exp_live(en), 0);
	/* on IPv4: not an address of the connection's family */
	route.same = false;
	open_ctl(en, &q4, &q931_h);
	assert_int_equal(sayb(en, &q4, 1, fwd6_tpkt, sizeof(fwd6_tpkt)), NF_ACCEPT);
	assert_int_equal(route.calls, 2);
	assert_int_equal(exp_live(en), 0);
	env_free(en);
}

/* q's Q.931 connection through source NAT snat (its handshake, back:
 * the reply side's flow) */
static void nat_q931_open(struct env *en, const struct nftdp_ct_nat_range *snat, struct tflow *q,
			  struct tflow *back)
{
	struct nftdp_ct_entry *m;
	struct tpkt t;

	seg(&t, q, 0, TS, q->aseq, 0, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	nftdp_ct_vm_ops.helper(t.pkt.ct, &q931_h);
	m = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_setup(en->s, &t.pkt, snat, NFTDP_CT_MANIP_SRC), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	q->aseq++;
	back->ap = ntohs(m->tuple[1].dport);
	seg(&t, back, 1, TS | TA, back->bseq, q->aseq, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	back->bseq++;
	seg(&t, q, 0, TA, q->aseq, back->bseq, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
}

/* a Facility from C on q forwarding the call to 10.1.0.7:1720, through
 * the NAT: the packet as it leaves */
static void nat_forward(struct env *en, struct tflow *q, const struct tflow *back, struct tpkt *t)
{
	uint8_t h[20 + sizeof(fwd_tpkt)];

	tcp_hdr(h, q->ap, q->bp, q->aseq, back->bseq, TA, 65535, 0);
	memcpy(h + 20, fwd_tpkt, sizeof(fwd_tpkt));
	h[20 + 28] = 10;
	h[20 + 29] = 1;
	h[20 + 30] = 0;
	h[20 + 31] = 7;
	build(t, false, q->a, q->b, IPPROTO_TCP, h, sizeof(h));
	assert_int_equal(nat_path(en, t, NULL, NULL, NULL), ST_ESTABLISHED);
	q->aseq += sizeof(fwd_tpkt);
}

/* nat_callforwarding: C behind source NAT forwards the call to
 * 10.1.0.7:1720; the Facility says NAT:1720, S's call there is taken to
 * 10.1.0.7:1720 (ip_nat_callforwarding_expect: the source stays S's).
 * A second call of C's forwarded the same way finds NAT:1720 taken by
 * the first's expectation: nf_nat_exp_find_port gives a random port
 * above it (not the next one) */
static void test_callforwarding_snat(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to("198.51.100.1", 0);
	struct tflow q = {false, "10.1.0.1", "10.2.0.1", 40000, 1720, 1000, 5000};
	struct tflow back = {false, "198.51.100.1", "10.2.0.1", 0, 1720, 1000, 5000};
	struct tflow q2 = {false, "10.1.0.1", "10.2.0.1", 40001, 1720, 1000, 5000};
	struct tflow back2 = {false, "198.51.100.1", "10.2.0.1", 0, 1720, 1000, 5000};
	struct tflow call = {false, "198.51.100.1", "10.2.0.1", 1720, 30000, 0, 9000};
	struct nftdp_ct_expect_info xi;
	struct nftdp_ct_entry *d;
	struct tpkt t;
	uint16_t p2;

	(void)state;
	memset(&route, 0, sizeof(route));
	en->s->cfg.same_route = same_route;
	nat_q931_open(en, &snat, &q, &back);
	nat_forward(en, &q, &back, &t);
	/* asked about 10.1.0.7 and the peer S */
	assert_int_equal(route.calls, 1);
	assert_memory_equal(route.a, "\x0a\x01\x00\x07", 4);
	assert_memory_equal(route.b, "\x0a\x02\x00\x01", 4);
	/* the alternativeAddress is the NAT address, the port free */
	assert_ip4(t.buf + 40 + 28, "198.51.100.1");
	assert_int_equal(port_at(t.buf + 40 + 32), 1720);
	assert_csums(&t);
	assert_int_equal(exp_live(en), 1);
	/* CTA_EXPECT_FN "callforwarding", the saved forward-to address */
	assert_int_equal(nftdp_ct_expect_walk(en->s, en->now, exp_fn, &xi), 1);
	assert_true(xi.nat && xi.nat_callfwd && !xi.nat_q931);
	assert_ip4(xi.nat_saved.u8, "10.1.0.7");
	assert_int_equal(ntohs(xi.nat_port), 1720);
	assert_int_equal(xi.nat_dir, IP_CT_DIR_REPLY);
	/* the second call's Facility: NAT:1720 is the first's */
	nat_q931_open(en, &snat, &q2, &back2);
	nat_forward(en, &q2, &back2, &t);
	assert_ip4(t.buf + 40 + 28, "198.51.100.1");
	p2 = port_at(t.buf + 40 + 32);
	assert_true(p2 > 1721);
	assert_csums(&t);
	assert_int_equal(exp_live(en), 2);
	/* S calls NAT:1720: taken to 10.1.0.7:1720, its source kept */
	seg(&t, &call, 1, TS, call.bseq, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_true(d->status & IPS_DST_NAT);
	assert_int_equal(d->helper, NFTDP_VM_CT_HELPER_Q931);
	assert_ip4(t.buf + 12, "10.2.0.1");
	assert_ip4(t.buf + 16, "10.1.0.7");
	assert_int_equal(port_at(t.buf + 22), 1720);
	assert_csums(&t);
	/* and at the second port: to 10.1.0.7:1720 too */
	call.ap = p2;
	call.bp = 30001;
	seg(&t, &call, 1, TS, call.bseq, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &d), ST_RELATED);
	assert_ip4(t.buf + 16, "10.1.0.7");
	assert_int_equal(port_at(t.buf + 22), 1720);
	assert_int_equal(exp_live(en), 0);
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decode),
	    cmocka_unit_test(test_decode_truncated),
	    cmocka_unit_test(test_decode_random),
	    cmocka_unit_test(test_call),
	    cmocka_unit_test(test_ras),
	    cmocka_unit_test(test_ras_snat),
	    cmocka_unit_test(test_callforwarding),
	    cmocka_unit_test(test_callforwarding_snat),
	    cmocka_unit_test(test_callforwarding6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
