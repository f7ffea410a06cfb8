// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests on plain buffers (no EAL): the TCP transition table
 * (an independent transcription of the kernel's tcp_conntracks, checked
 * entry by entry through the packet path), handshakes, window checks,
 * RST, reopen, UDP and ICMP/ICMPv6, related ICMP errors in both directions
 * for IPv4 and IPv6, invalid packets, timeouts and gc, table full with
 * early drop, confirm/drop, control-plane walk/get/delete/flush, the
 * symmetric RSS hash, and ct expressions compiled with libnftnl and run
 * by the VM through nftdp_ct_vm_ops.
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
#include <libnftnl/object.h>
#include <linux/netfilter/nf_conntrack_sctp.h>
#include <libnftnl/rule.h>
#include <linux/netfilter/nf_nat.h>

#include "ct_priv.h"
#include "nft_build.h"

#define ST_INVALID (1u << 0)
#define ST_ESTABLISHED (1u << 1)
#define ST_RELATED (1u << 2)
#define ST_NEW (1u << 3)
#define ST_UNTRACKED (1u << 6)

#define TF 0x01 /* FIN */
#define TS 0x02 /* SYN */
#define TR 0x04 /* RST */
#define TA 0x10 /* ACK */

/* ---------- packet building ---------- */

struct tpkt {
	uint8_t buf[2048];
	uint32_t len;
	struct nftdp_vm_pkt pkt;
};

static uint32_t sum16(const uint8_t *p, uint32_t len, uint32_t s)
{
	for (; len > 1; p += 2, len -= 2)
		s += (uint32_t)p[0] << 8 | p[1];
	if (len)
		s += (uint32_t)p[0] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* an IP packet around l4 (l4len bytes) with correct checksums */
static void build(struct tpkt *t, bool v6, const char *src, const char *dst, uint8_t proto,
		  const uint8_t *l4, uint32_t l4len)
{
	uint8_t *ip = t->buf, *th;
	uint32_t hl = v6 ? 40 : 20, s = 0;
	uint16_t c;
	int csum_off = proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6 : 2;

	memset(t, 0, sizeof(*t));
	th = ip + hl;
	memcpy(th, l4, l4len);
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (uint8_t)(l4len >> 8);
		ip[5] = (uint8_t)l4len;
		ip[6] = proto;
		ip[7] = 64;
		assert_int_equal(inet_pton(AF_INET6, src, ip + 8), 1);
		assert_int_equal(inet_pton(AF_INET6, dst, ip + 24), 1);
	} else {
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + l4len) >> 8);
		ip[3] = (uint8_t)(20 + l4len);
		ip[8] = 64;
		ip[9] = proto;
		assert_int_equal(inet_pton(AF_INET, src, ip + 12), 1);
		assert_int_equal(inet_pton(AF_INET, dst, ip + 16), 1);
		c = fold(sum16(ip, 20, 0));
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	if (proto != IPPROTO_SCTP && l4len >= (uint32_t)csum_off + 2) {
		th[csum_off] = th[csum_off + 1] = 0;
		if (proto != IPPROTO_ICMP) {
			s = v6 ? sum16(ip + 8, 32, 0) : sum16(ip + 12, 8, 0);
			s += l4len + proto;
		}
		c = fold(sum16(th, l4len, s));
		if (proto == IPPROTO_UDP && !c)
			c = 0xffff;
		th[csum_off] = (uint8_t)(c >> 8);
		th[csum_off + 1] = (uint8_t)c;
	}
	t->len = hl + l4len;
	nftdp_vm_pkt_init(&t->pkt, t->buf, t->len, -1, 0);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	t->pkt.hook = NF_INET_PRE_ROUTING;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t tcp_hdr(uint8_t *h, uint16_t sp, uint16_t dp, uint32_t seq, uint32_t ack,
			uint8_t flags, uint16_t win, uint32_t payload)
{
	memset(h, 0, 20 + payload);
	h[0] = (uint8_t)(sp >> 8);
	h[1] = (uint8_t)sp;
	h[2] = (uint8_t)(dp >> 8);
	h[3] = (uint8_t)dp;
	put32(h + 4, seq);
	put32(h + 8, ack);
	h[12] = 5 << 4;
	h[13] = flags;
	h[14] = (uint8_t)(win >> 8);
	h[15] = (uint8_t)win;
	return 20 + payload;
}

/* ---------- a shard and a flow ---------- */

struct env {
	struct nftdp_ct_shard *s;
	uint64_t now;
};

static struct env *env_new(uint32_t max, bool liberal)
{
	struct env *e = calloc(1, sizeof(*e));
	struct nftdp_ct_config cfg = {.max_entries = max, .hash_seed = 0x1234,
				      .tcp_be_liberal = liberal};

	assert_non_null(e);
	assert_int_equal(nftdp_ct_shard_create(&cfg, &e->s), 0);
	e->now = 1000000;
	return e;
}

static void env_free(struct env *e)
{
	nftdp_ct_shard_destroy(e->s);
	free(e);
}

/* run the packet through in + confirm(verdict); return its ct state bits,
 * the entry and the ctinfo it had */
static uint32_t xmit_v(struct env *en, struct tpkt *t, unsigned int verdict,
		       struct nftdp_ct_entry **ent, unsigned int *ctinfo)
{
	uint32_t st;
	unsigned int v = nftdp_ct_in(en->s, &t->pkt, en->now);

	assert_int_equal(v, NF_ACCEPT);
	if (t->pkt.ct) {
		assert_ptr_equal(t->pkt.ct_ops, &nftdp_ct_vm_ops);
		st = nftdp_ct_vm_ops.state(t->pkt.ct);
		if (ent)
			*ent = (struct nftdp_ct_entry *)((uintptr_t)t->pkt.ct & ~(uintptr_t)7);
		if (ctinfo)
			*ctinfo = (unsigned int)((uintptr_t)t->pkt.ct & 7);
	} else {
		st = t->pkt.ct_untracked ? ST_UNTRACKED : ST_INVALID;
		if (ent)
			*ent = NULL;
	}
	nftdp_ct_confirm(en->s, &t->pkt, verdict);
	assert_null(t->pkt.ct);
	return st;
}

static uint32_t xmit(struct env *en, struct tpkt *t, struct nftdp_ct_entry **ent)
{
	return xmit_v(en, t, NF_ACCEPT, ent, NULL);
}

struct tflow {
	bool v6;
	const char *a, *b; /* client, server */
	uint16_t ap, bp;
	uint32_t aseq, bseq; /* next sequence numbers */
};

/* one segment: dir 0 client->server, 1 server->client */
static void seg(struct tpkt *t, const struct tflow *f, int dir, uint8_t flags, uint32_t seq,
		uint32_t ack, uint32_t payload)
{
	uint8_t h[1600];
	uint32_t n;

	assert_true(payload <= sizeof(h) - 20);
	if (dir == 0)
		n = tcp_hdr(h, f->ap, f->bp, seq, ack, flags, 65535, payload);
	else
		n = tcp_hdr(h, f->bp, f->ap, seq, ack, flags, 65535, payload);
	if (dir == 0)
		build(t, f->v6, f->a, f->b, IPPROTO_TCP, h, n);
	else
		build(t, f->v6, f->b, f->a, IPPROTO_TCP, h, n);
}

/* send and advance the flow's sequence numbers as a real peer would */
static uint32_t tx(struct env *en, struct tflow *f, int dir, uint8_t flags, uint32_t payload,
		   struct nftdp_ct_entry **ent)
{
	struct tpkt t;
	uint32_t *mine = dir ? &f->bseq : &f->aseq, *theirs = dir ? &f->aseq : &f->bseq;
	uint32_t st;

	seg(&t, f, dir, flags, *mine, (flags & TA) ? *theirs : 0, payload);
	st = xmit(en, &t, ent);
	*mine += payload + ((flags & TS) ? 1 : 0) + ((flags & TF) ? 1 : 0);
	return st;
}

static struct nftdp_ct_entry *handshake(struct env *en, struct tflow *f)
{
	struct nftdp_ct_entry *e1, *e2, *e3;

	assert_int_equal(tx(en, f, 0, TS, 0, &e1), ST_NEW);
	assert_int_equal(e1->proto.tcp.state, TCP_CONNTRACK_SYN_SENT);
	assert_int_equal(tx(en, f, 1, TS | TA, 0, &e2), ST_ESTABLISHED);
	assert_ptr_equal(e1, e2);
	assert_int_equal(e1->proto.tcp.state, TCP_CONNTRACK_SYN_RECV);
	assert_int_equal(tx(en, f, 0, TA, 0, &e3), ST_ESTABLISHED);
	assert_ptr_equal(e1, e3);
	assert_int_equal(e1->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	return e1;
}

static uint64_t left_s(const struct env *en, const struct nftdp_ct_entry *e)
{
	return (e->expires_ms - en->now) / 1000;
}

/* ---------- the TCP table ---------- */

/*
 * The kernel's tcp_conntracks, transcribed here independently from
 * nf_conntrack_proto_tcp.c as strings: rows syn, synack, fin, ack, rst,
 * none; columns sNO sSS sSR sES sFW sCW sLA sTW sCL sS2.
 */
static const char *const kernel_table[2][6] = {
	{
		"SS SS IG IG IG IG IG SS SS S2",
		"IV IV SR IV IV IV IV IV IV SR",
		"IV IV FW FW LA LA LA TW CL IV",
		"ES IV ES ES CW CW TW TW CL IV",
		"IV CL CL CL CL CL CL CL CL CL",
		"IV IV IV IV IV IV IV IV IV IV",
	},
	{
		"IV S2 IV IV IV IV IV SS IV S2",
		"IV SR IG IG IG IG IG IG IG SR",
		"IV IV FW FW LA LA LA TW CL IV",
		"IV IG SR ES CW CW TW TW CL IG",
		"IV CL CL CL CL CL CL CL CL CL",
		"IV IV IV IV IV IV IV IV IV IV",
	},
};

static int state_code(const char *s)
{
	static const char *const names[] = {"NO", "SS", "SR", "ES", "FW", "CW",
					    "LA", "TW", "CL", "S2", "IV", "IG"};

	for (int i = 0; i < 12; i++)
		if (!strncmp(s, names[i], 2))
			return i;
	fail();
	return -1;
}

static int kernel_next(int dir, int index, int old)
{
	return state_code(kernel_table[dir][index] + 3 * old);
}

static void test_tcp_table_transcription(void **state)
{
	(void)state;
	for (int d = 0; d < 2; d++)
		for (int i = 0; i < 6; i++)
			for (int o = 0; o < TCP_CONNTRACK_MAX; o++)
				assert_int_equal(nftdp_ct_tcp_table(d, i, o), kernel_next(d, i, o));
}

/*
 * Every cell of the table through the packet path: an established flow is
 * put into the old state, a segment of the flag class is sent in the
 * direction, and the state afterwards must be the table's (liberal window
 * tracking, so only the state machine decides). sIV: invalid, state kept;
 * sIG: passes, state kept; SYN on TIME_WAIT/CLOSE after a close: a new
 * connection replaces the entry.
 */
static void test_tcp_every_transition(void **state)
{
	static const uint8_t flags[6] = {TS, TS | TA, TF | TA, TA, TR, 0};
	int cells = 0;

	(void)state;
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < 6; i++) {
			for (int o = 0; o < TCP_CONNTRACK_MAX; o++) {
				struct env *en = env_new(64, true);
				struct tflow f = {false, "10.0.0.1", "10.0.0.2", 40000, 80, 1000, 5000};
				struct nftdp_ct_entry *e = handshake(en, &f), *e2;
				int want = kernel_next(d, i, o);
				uint32_t seq = d ? f.bseq : f.aseq, ack = d ? f.aseq : f.bseq, st;
				struct tpkt t;

				e->proto.tcp.state = (uint8_t)o;
				e->proto.tcp.last_index = 5; /* TCP_NONE_SET */
				if (o >= TCP_CONNTRACK_TIME_WAIT && o != TCP_CONNTRACK_SYN_SENT2)
					e->proto.tcp.seen[0].flags |= IP_CT_TCP_FLAG_CLOSE_INIT;
				if (i == 4 && (e->proto.tcp.seen[!d].flags & IP_CT_TCP_FLAG_MAXACK_SET))
					seq = e->proto.tcp.seen[!d].td_maxack;
				seg(&t, &f, d, flags[i], seq, (flags[i] & TA) ? ack : 0, 0);
				st = xmit(en, &t, &e2);
				if (want == TCP_CONNTRACK_MAX) {
					assert_int_equal(st, ST_INVALID);
					assert_int_equal(e->proto.tcp.state, o);
				} else if (want == TCP_CONNTRACK_IGNORE) {
					assert_ptr_equal(e2, e);
					assert_int_equal(e->proto.tcp.state, o);
				} else if (want == TCP_CONNTRACK_SYN_SENT &&
					   o >= TCP_CONNTRACK_TIME_WAIT) {
					/* reopened: the old entry is gone */
					assert_int_equal(st, ST_NEW);
					assert_int_equal(e2->proto.tcp.state, TCP_CONNTRACK_SYN_SENT);
					assert_int_equal(en->s->st.count, 1);
					assert_int_equal(en->s->st.deleted, 1);
				} else {
					assert_ptr_equal(e2, e);
					assert_int_equal(e->proto.tcp.state, want);
				}
				cells++;
				env_free(en);
			}
		}
	}
	assert_int_equal(cells, 2 * 6 * TCP_CONNTRACK_MAX);
}

static void test_tcp_lifecycle(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "192.0.2.1", "198.51.100.7", 33000, 443, 0xfffffff0u, 77};
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;
	unsigned int ctinfo;

	(void)state;
	assert_int_equal(tx(en, &f, 0, TS, 0, &e), ST_NEW);
	assert_int_equal(left_s(en, e), 120);
	assert_true(e->status & IPS_CONFIRMED);
	assert_false(e->status & IPS_SEEN_REPLY);
	/* SYN retransmit: still new, timeout not renewed */
	en->now += 5000;
	seg(&t, &f, 0, TS, f.aseq - 1, 0, 0);
	assert_int_equal(xmit(en, &t, &e2), ST_NEW);
	assert_int_equal(left_s(en, e), 115);
	assert_int_equal(tx(en, &f, 1, TS | TA, 0, NULL), ST_ESTABLISHED);
	assert_true(e->status & IPS_SEEN_REPLY);
	assert_false(e->status & IPS_ASSURED);
	assert_int_equal(left_s(en, e), 60);
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 0);
	assert_int_equal(xmit_v(en, &t, NF_ACCEPT, NULL, &ctinfo), ST_ESTABLISHED);
	assert_int_equal(ctinfo, IP_CT_ESTABLISHED);
	assert_true(e->status & IPS_ASSURED);
	assert_int_equal(left_s(en, e), 5 * 24 * 3600);
	/* data both ways (the sequence numbers wrap) */
	assert_int_equal(tx(en, &f, 0, TA, 100, NULL), ST_ESTABLISHED);
	assert_int_equal(left_s(en, e), 300); /* unacknowledged data */
	seg(&t, &f, 1, TA, f.bseq, f.aseq, 50);
	assert_int_equal(xmit_v(en, &t, NF_ACCEPT, NULL, &ctinfo), ST_ESTABLISHED);
	assert_int_equal(ctinfo, IP_CT_ESTABLISHED_REPLY);
	f.bseq += 50;
	assert_int_equal(tx(en, &f, 0, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(left_s(en, e), 5 * 24 * 3600);
	/* counters (the SYN retransmit returned before nf_ct_refresh_acct) */
	assert_int_equal(e->packets[0], 4);
	assert_int_equal(e->packets[1], 2);
	assert_int_equal(e->bytes[0], 40 * 3 + 140);
	/* close: FIN, ACK, FIN, ACK */
	assert_int_equal(tx(en, &f, 0, TF | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_FIN_WAIT);
	assert_true(e->proto.tcp.seen[0].flags & IP_CT_TCP_FLAG_CLOSE_INIT);
	assert_int_equal(tx(en, &f, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_CLOSE_WAIT);
	assert_int_equal(left_s(en, e), 60);
	assert_int_equal(tx(en, &f, 1, TF | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_LAST_ACK);
	assert_int_equal(left_s(en, e), 30);
	assert_int_equal(tx(en, &f, 0, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_TIME_WAIT);
	assert_int_equal(left_s(en, e), 120);
	/* reopen from TIME_WAIT with a new SYN: a new connection */
	f.aseq += 100000;
	assert_int_equal(tx(en, &f, 0, TS, 0, &e2), ST_NEW);
	assert_int_equal(e2->proto.tcp.state, TCP_CONNTRACK_SYN_SENT);
	assert_int_equal(en->s->st.count, 1);
	env_free(en);
}

static void test_tcp_window(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.1.0.1", "10.1.0.2", 1234, 80, 1000, 90000};
	struct nftdp_ct_entry *e = handshake(en, &f);
	struct tpkt t;
	uint32_t end0;

	(void)state;
	/* I: data far beyond what the receiver allowed */
	seg(&t, &f, 0, TA, f.aseq + 10000000, f.bseq, 10);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* III: acknowledging data the server never sent */
	seg(&t, &f, 0, TA, f.aseq, f.bseq + 500000, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	/* II: an old retransmission far below the window: passes, ignored */
	end0 = e->proto.tcp.seen[0].td_end;
	seg(&t, &f, 0, TA, f.aseq - 3000000, f.bseq, 10);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.seen[0].td_end, end0);
	/* in window: fine */
	assert_int_equal(tx(en, &f, 0, TA, 1000, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.seen[0].td_end, end0 + 1000);
	env_free(en);

	/* liberal: window checks pass everything */
	en = env_new(64, true);
	f = (struct tflow){false, "10.1.0.1", "10.1.0.2", 1234, 80, 1000, 90000};
	handshake(en, &f);
	seg(&t, &f, 0, TA, f.aseq + 10000000, f.bseq, 10);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	env_free(en);
}

static void test_tcp_rst(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {true, "2001:db8::1", "2001:db8::2", 5555, 22, 10, 20};
	struct nftdp_ct_entry *e = handshake(en, &f), *e2;
	struct tpkt t;

	(void)state;
	/* RST with a sequence number below what the peer acknowledged */
	seg(&t, &f, 1, TR, f.bseq - 100, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	/* in-window RST */
	seg(&t, &f, 1, TR, f.bseq, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_CLOSE);
	assert_int_equal(left_s(en, e), 10);
	env_free(en);

	/* RST answering a SYN (no reply seen): the entry goes at once */
	en = env_new(64, false);
	f = (struct tflow){false, "10.2.0.1", "10.2.0.2", 999, 25, 100, 0};
	assert_int_equal(tx(en, &f, 0, TS, 0, &e), ST_NEW);
	seg(&t, &f, 1, TR | TA, 0, f.aseq, 0);
	assert_int_equal(xmit(en, &t, &e2), ST_ESTABLISHED);
	assert_ptr_equal(e, e2);
	assert_int_equal(en->s->st.count, 0);
	env_free(en);
}

static void test_tcp_invalid(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.3.0.1", "10.3.0.2", 2000, 80, 1, 1};
	struct tpkt t;
	uint8_t h[64];

	(void)state;
	/* unsolicited SYN/ACK, FIN, RST: invalid, no entry */
	seg(&t, &f, 0, TS | TA, 1, 1, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	seg(&t, &f, 0, TF | TA, 1, 1, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	seg(&t, &f, 0, TR, 1, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* impossible flags */
	seg(&t, &f, 0, TS | TF, 1, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	seg(&t, &f, 0, 0, 1, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(en->s->st.count, 0);
	/* truncated header: ports there, the rest not */
	tcp_hdr(h, 1, 2, 3, 4, TS, 100, 0);
	build(&t, false, "10.3.0.1", "10.3.0.2", IPPROTO_TCP, h, 12);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* data offset beyond the segment */
	tcp_hdr(h, 1, 2, 3, 4, TS, 100, 0);
	h[12] = 15 << 4;
	build(&t, false, "10.3.0.1", "10.3.0.2", IPPROTO_TCP, h, 20);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* bad checksum */
	seg(&t, &f, 0, TS, 1, 0, 0);
	t.buf[20 + 16] ^= 0xff;
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(en->s->st.count, 0);
	/* every length and both families: the 8-byte-step sum agrees with the
	 * byte-pair reference of build(), and one changed byte is caught */
	for (uint32_t n = 8; n < 80; n++) {
		uint8_t u[80];

		for (uint32_t k = 0; k < n; k++)
			u[k] = (uint8_t)(k * 37 + n);
		u[6] = u[7] = 0;
		build(&t, n & 1, (n & 1) ? "fd00::1" : "10.9.0.1", (n & 1) ? "fd00::2" : "10.9.0.2",
		      IPPROTO_UDP, u, n);
		assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
		t.buf[(n & 1 ? 40 : 20) + n - 1] ^= 0x10;
		assert_false(nftdp_ct_l4_checksum_ok(&t.pkt));
	}
	seg(&t, &f, 0, TS, 1, 0, 0);
	t.buf[20 + 16] ^= 0xff;
	/* the same bytes, but the NIC verified the checksum (CHECKSUM_UNNECESSARY):
	 * nf_checksum trusts it */
	t.pkt.flags |= NFTDP_VM_PKT_F_CSUM_OK;
	assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
	t.pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_CSUM_OK;
	assert_false(nftdp_ct_l4_checksum_ok(&t.pkt));
	/* a bare ACK with no entry is picked up (loose) as new */
	seg(&t, &f, 0, TA, 500, 700, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	assert_int_equal(en->s->st.count, 1);
	/* a non-first fragment cannot be tracked */
	seg(&t, &f, 0, TS, 1, 0, 0);
	t.pkt.fragoff = 8;
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	env_free(en);

	/* no loose pickup; no checksum verification */
	{
		struct nftdp_ct_config cfg = {.max_entries = 8, .tcp_no_loose = true,
					      .no_checksum = true};
		struct env e2 = {.now = 5000};

		assert_int_equal(nftdp_ct_shard_create(&cfg, &e2.s), 0);
		seg(&t, &f, 0, TA, 500, 700, 0);
		assert_int_equal(xmit(&e2, &t, NULL), ST_INVALID);
		seg(&t, &f, 0, TS, 1, 0, 0);
		t.buf[20 + 16] ^= 0xff;
		assert_int_equal(xmit(&e2, &t, NULL), ST_NEW);
		nftdp_ct_shard_destroy(e2.s);
	}
}

static void test_tcp_simultaneous_open(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.4.0.1", "10.4.0.2", 7000, 7001, 100, 900};
	struct nftdp_ct_entry *e;

	(void)state;
	assert_int_equal(tx(en, &f, 0, TS, 0, &e), ST_NEW);
	assert_int_equal(tx(en, &f, 1, TS, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_SENT2);
	assert_true(e->proto.tcp.last_flags & IP_CT_TCP_SIMULTANEOUS_OPEN);
	/* the client's SYN/ACK repeats its SYN's sequence number */
	f.aseq--;
	assert_int_equal(tx(en, &f, 0, TS | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_RECV);
	/* the reply ACK completes the simultaneous open */
	assert_int_equal(tx(en, &f, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	env_free(en);
}

/* ---------- UDP, ICMP ---------- */

static void udp(struct tpkt *t, bool v6, const char *s, const char *d, uint16_t sp, uint16_t dp,
		uint32_t payload)
{
	uint8_t h[128] = {0};

	h[0] = (uint8_t)(sp >> 8);
	h[1] = (uint8_t)sp;
	h[2] = (uint8_t)(dp >> 8);
	h[3] = (uint8_t)dp;
	h[4] = (uint8_t)((8 + payload) >> 8);
	h[5] = (uint8_t)(8 + payload);
	build(t, v6, s, d, IPPROTO_UDP, h, 8 + payload);
}

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
	assert_int_equal(e->bytes[0], 3 * 48);
	assert_int_equal(e->bytes[1], 68 + 48);
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
	assert_int_equal(e->bytes[0], 29);
	env_free(en);
}

static void icmp(struct tpkt *t, bool v6, const char *s, const char *d, uint8_t type,
		 uint8_t code, uint16_t id, const uint8_t *quote, uint32_t qlen)
{
	uint8_t h[300] = {0};

	h[0] = type;
	h[1] = code;
	h[4] = (uint8_t)(id >> 8);
	h[5] = (uint8_t)id;
	if (quote)
		memcpy(h + 8, quote, qlen);
	build(t, v6, s, d, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, h, 8 + (quote ? qlen : 16));
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
	assert_int_equal(e->packets[0] + e->packets[1], 1);
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

/* ---------- timeouts, gc, table full, confirm ---------- */

/* a burst keeps packet order: an error about a flow its first packet opened */
static void test_burst_order(void **state)
{
	struct env *en = env_new(8, false);
	struct tpkt a, b, q;
	struct nftdp_vm_pkt *pk[2] = {&a.pkt, &b.pkt};
	unsigned int v[2];

	(void)state;
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	udp(&q, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	icmp(&b, false, "10.0.0.254", "10.0.0.1", 3, 3, 0, q.buf, q.len);
	nftdp_ct_in_burst(en->s, pk, 2, v, en->now);
	assert_int_equal(nftdp_ct_vm_ops.state(a.pkt.ct), ST_NEW);
	assert_non_null(b.pkt.ct);
	assert_int_equal(nftdp_ct_vm_ops.state(b.pkt.ct), ST_RELATED);
	v[0] = v[1] = NF_ACCEPT;
	nftdp_ct_confirm_burst(en->s, pk, 2, v);
	assert_int_equal(en->s->st.count, 1);
	env_free(en);
}

static void test_timeout_gc(void **state)
{
	struct env *en = env_new(16, false);
	struct nftdp_ct_stats st;
	struct tpkt t;
	unsigned int freed = 0;

	(void)state;
	for (int i = 0; i < 5; i++) {
		udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(1000 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	icmp(&t, false, "10.0.0.1", "10.0.0.2", 8, 0, 1, NULL, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 6);
	en->now += 29999;
	for (int i = 0; i < 16; i++)
		freed += nftdp_ct_gc(en->s, en->now, 4);
	assert_int_equal(freed, 0);
	en->now += 1;
	/* bounded: 4 slots a call */
	freed = nftdp_ct_gc(en->s, en->now, 4);
	assert_true(freed <= 4);
	for (int i = 0; i < 4; i++)
		freed += nftdp_ct_gc(en->s, en->now, 4);
	assert_int_equal(freed, 6);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.expired, 6);
	/* lookups reap expired entries too: a new packet starts afresh */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	en->now += 31000;
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 1000, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW); /* the old entry expired */
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	env_free(en);
}

static void test_configured_timeouts(void **state)
{
	struct nftdp_ct_timeouts tmo;
	struct nftdp_ct_config cfg = {.max_entries = 8, .timeouts = &tmo};
	struct env en = {.now = 100000};
	struct nftdp_ct_entry *e;
	struct tpkt t;

	(void)state;
	nftdp_ct_timeouts_default(&tmo);
	assert_int_equal(tmo.tcp[TCP_CONNTRACK_ESTABLISHED], 432000);
	assert_int_equal(tmo.generic, 600);
	tmo.udp_unreplied = 7;
	tmo.generic = 9;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	assert_int_equal(xmit(&en, &t, &e), ST_NEW);
	assert_int_equal(left_s(&en, e), 7);
	{
		uint8_t gre[8] = {0};

		build(&t, false, "10.0.0.1", "10.0.0.2", IPPROTO_ESP, gre, 8);
		assert_int_equal(xmit(&en, &t, &e), ST_NEW);
		assert_int_equal(left_s(&en, e), 9);
		assert_int_equal(e->tuple[0].l4proto, IPPROTO_ESP);
		/* GRE: the kernel's GRE timeouts, assured once replied */
		build(&t, false, "10.0.0.1", "10.0.0.2", IPPROTO_GRE, gre, 8);
		assert_int_equal(xmit(&en, &t, &e), ST_NEW);
		assert_int_equal(left_s(&en, e), 30);
		build(&t, false, "10.0.0.2", "10.0.0.1", IPPROTO_GRE, gre, 8);
		assert_int_equal(xmit(&en, &t, NULL), ST_ESTABLISHED);
		build(&t, false, "10.0.0.1", "10.0.0.2", IPPROTO_GRE, gre, 8);
		assert_int_equal(xmit(&en, &t, NULL), ST_ESTABLISHED);
		assert_int_equal(left_s(&en, e), 180);
		assert_true(e->status & IPS_ASSURED);
	}
	nftdp_ct_shard_destroy(en.s);
}

static void test_table_full(void **state)
{
	struct env *en = env_new(4, false);
	struct tflow f[4];
	struct nftdp_ct_stats st;
	struct tpkt t;

	(void)state;
	/* four assured connections fill the table */
	for (int i = 0; i < 4; i++) {
		f[i] = (struct tflow){false, "10.6.0.1", "10.6.0.2", (uint16_t)(2000 + i), 80, 10, 20};
		handshake(en, &f[i]);
		assert_int_equal(tx(en, &f[i], 0, TA, 0, NULL), ST_ESTABLISHED);
	}
	/* a new connection: nothing to evict, dropped */
	seg(&t, &(struct tflow){false, "10.6.0.1", "10.6.0.2", 3000, 80, 1, 1}, 0, TS, 1, 0, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_DROP);
	assert_null(t.pkt.ct);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.drop, 1);
	assert_int_equal(st.table_full_events, 1);
	/* established ones keep flowing */
	for (int i = 0; i < 4; i++)
		assert_int_equal(tx(en, &f[i], 1, TA, 10, NULL), ST_ESTABLISHED);
	env_free(en);

	/* unassured entries are evicted for new ones */
	en = env_new(8, false);
	for (int i = 0; i < 8; i++) {
		udp(&t, false, "10.7.0.1", "10.7.0.2", (uint16_t)(100 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	{
		int ok = 0;

		for (int i = 0; i < 8; i++) {
			udp(&t, false, "10.7.0.3", "10.7.0.4", (uint16_t)(500 + i), 53, 0);
			if (nftdp_ct_in(en->s, &t.pkt, en->now) == NF_ACCEPT && t.pkt.ct)
				ok++;
			nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
		}
		nftdp_ct_stats(en->s, &st);
		assert_true(ok >= 1);
		assert_true(st.early_drop >= (uint64_t)ok);
		/* a bucket's unassured entries all go at once */
		assert_int_equal(st.count, 8 + ok - (int)st.early_drop);
		assert_int_equal((int)st.drop + ok, 8);
	}
	env_free(en);
}

static void test_gc_pressure(void **state)
{
	struct env *en = env_new(4, false);
	struct tflow f[4];

	(void)state;
	/* full of assured connections in FIN_WAIT: the gc may evict them */
	for (int i = 0; i < 4; i++) {
		f[i] = (struct tflow){false, "10.8.0.1", "10.8.0.2", (uint16_t)(2000 + i), 80, 10, 20};
		handshake(en, &f[i]);
		assert_int_equal(tx(en, &f[i], 0, TA, 0, NULL), ST_ESTABLISHED);
	}
	assert_int_equal(nftdp_ct_gc(en->s, en->now, 4), 0);
	assert_int_equal(tx(en, &f[0], 0, TF | TA, 0, NULL), ST_ESTABLISHED);
	/* full, but no new connection was refused yet: nothing goes */
	assert_int_equal(nftdp_ct_gc(en->s, en->now, 4), 0);
	{
		struct tpkt t;

		seg(&t, &(struct tflow){false, "10.8.0.1", "10.8.0.2", 3000, 80, 1, 1}, 0, TS, 1, 0,
		    0);
		assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_DROP);
	}
	assert_int_equal(nftdp_ct_gc(en->s, en->now, 4), 1);
	assert_int_equal(en->s->st.count, 3);
	env_free(en);
}

static void test_confirm_drop(void **state)
{
	struct env *en = env_new(8, false);
	struct nftdp_ct_stats st;
	struct tpkt a, b, *burst[2] = {&a, &b};
	struct nftdp_vm_pkt *pk[2] = {&a.pkt, &b.pkt};
	unsigned int v[2];

	(void)state;
	/* a dropped first packet leaves no entry */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	assert_int_equal(xmit_v(en, &a, NF_DROP, NULL, NULL), ST_NEW);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.unconfirmed_freed, 1);
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	assert_int_equal(xmit(en, &a, NULL), ST_NEW);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	/* two first packets of one flow in a burst share the entry; the
	 * first dropped, the second accepted: the entry stays */
	udp(&a, false, "10.0.0.5", "10.0.0.6", 1, 2, 0);
	udp(&b, false, "10.0.0.5", "10.0.0.6", 1, 2, 0);
	nftdp_ct_in_burst(en->s, pk, 2, v, en->now);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_ptr_equal((void *)((uintptr_t)a.pkt.ct & ~(uintptr_t)7),
			 (void *)((uintptr_t)b.pkt.ct & ~(uintptr_t)7));
	v[0] = NF_DROP;
	v[1] = NF_ACCEPT;
	nftdp_ct_confirm_burst(en->s, pk, 2, v);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 2);
	/* both dropped: gone */
	udp(&a, false, "10.0.0.7", "10.0.0.8", 1, 2, 0);
	udp(&b, false, "10.0.0.7", "10.0.0.8", 1, 2, 0);
	nftdp_ct_in_burst(en->s, pk, 2, v, en->now);
	v[0] = v[1] = NF_DROP;
	nftdp_ct_confirm_burst(en->s, pk, 2, v);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 2);
	(void)burst;
	/* notrack before conntrack: untracked, no entry */
	udp(&a, false, "10.0.0.9", "10.0.0.8", 1, 2, 0);
	a.pkt.out.notrack = true;
	assert_int_equal(xmit(en, &a, NULL), ST_UNTRACKED);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 2);
	env_free(en);
}

/* nf_ct_attach: a reply nftdp makes joins the connection, related, the
 * other way; it never confirms a new connection, and holds it until given back */
static void test_attach(void **state)
{
	struct env *en = env_new(8, false);
	struct nftdp_ct_stats st;
	struct tpkt a, r;
	unsigned int ctinfo;

	(void)state;
	/* a new connection whose first packet is rejected: the RST or ICMP
	 * error is related-reply, and the entry goes when both are done */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	nftdp_ct_in(en->s, &a.pkt, en->now);
	assert_non_null(a.pkt.ct);
	udp(&r, false, "10.0.0.2", "10.0.0.1", 2, 1, 0);
	nftdp_ct_attach(&r.pkt, &a.pkt);
	ctinfo = (unsigned int)((uintptr_t)r.pkt.ct & 7);
	assert_int_equal(ctinfo, IP_CT_RELATED_REPLY);
	assert_ptr_equal((void *)((uintptr_t)a.pkt.ct & ~(uintptr_t)7),
			 (void *)((uintptr_t)r.pkt.ct & ~(uintptr_t)7));
	assert_ptr_equal(r.pkt.ct_ops, &nftdp_ct_vm_ops);
	assert_int_equal(nftdp_ct_vm_ops.state(r.pkt.ct), NF_CT_STATE_BIT(IP_CT_RELATED));
	assert_int_equal(nftdp_ct_confirm(en->s, &a.pkt, NF_DROP), NF_DROP);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.unconfirmed_freed, 0); /* the reply still holds it */
	assert_int_equal(nftdp_ct_confirm(en->s, &r.pkt, NF_ACCEPT), NF_ACCEPT);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.insert, 0);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.unconfirmed_freed, 1);
	/* an answer to a reply-direction packet is related, original way */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 3, 4, 0);
	assert_int_equal(xmit(en, &a, NULL), ST_NEW);
	udp(&a, false, "10.0.0.2", "10.0.0.1", 4, 3, 0);
	nftdp_ct_in(en->s, &a.pkt, en->now);
	nftdp_ct_attach(&r.pkt, &a.pkt);
	assert_int_equal((unsigned int)((uintptr_t)r.pkt.ct & 7), IP_CT_RELATED);
	nftdp_ct_confirm(en->s, &a.pkt, NF_ACCEPT);
	nftdp_ct_confirm(en->s, &r.pkt, NF_DROP);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	/* nothing to attach to */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 5, 6, 0);
	a.pkt.ct = NULL;
	r.pkt.ct = NULL;
	nftdp_ct_attach(&r.pkt, &a.pkt);
	assert_null(r.pkt.ct);
	env_free(en);
}

/* ---------- control plane ---------- */

static int count_cb(const struct nftdp_ct_info *info, void *arg)
{
	(*(int *)arg)++;
	assert_true(info->status & IPS_CONFIRMED);
	assert_int_equal(info->use, 1);
	return 0;
}

static void test_walk_get_delete_flush(void **state)
{
	struct env *en = env_new(32, false);
	struct tflow f = {false, "10.9.0.1", "10.9.0.2", 4444, 80, 1, 1};
	struct nftdp_ct_entry *e = handshake(en, &f);
	struct nftdp_ct_info info;
	struct nftdp_ct_tuple rt;
	struct tpkt t;
	int n = 0;

	(void)state;
	for (int i = 0; i < 3; i++) {
		udp(&t, false, "10.9.0.1", "10.9.0.3", (uint16_t)(10 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	assert_int_equal(nftdp_ct_walk(en->s, en->now, count_cb, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(nftdp_ct_get(en->s, &e->tuple[1], en->now, &info), 0);
	assert_int_equal(info.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	assert_int_equal(info.timeout_s, 5 * 24 * 3600);
	assert_int_equal(info.packets[0], 2);
	assert_int_equal(info.packets[1], 1);
	assert_true(info.status & IPS_ASSURED);
	assert_int_equal(info.id, e->id);
	rt = e->tuple[1];
	assert_int_equal(nftdp_ct_delete(en->s, &rt, info.id + 1), -ENOENT);
	assert_int_equal(nftdp_ct_delete(en->s, &rt, info.id), 0);
	assert_int_equal(nftdp_ct_get(en->s, &rt, en->now, &info), -ENOENT);
	assert_int_equal(nftdp_ct_delete(en->s, &rt, 0), -ENOENT);
	assert_int_equal(nftdp_ct_flush(en->s), 3);
	n = 0;
	assert_int_equal(nftdp_ct_walk(en->s, en->now, count_cb, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(en->s->st.count, 0);
	/* the freed slots are reused */
	for (int i = 0; i < 32; i++) {
		udp(&t, false, "10.9.1.1", "10.9.0.3", (uint16_t)(10 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	assert_int_equal(en->s->st.count, 32);
	env_free(en);
}

struct ev_log {
	uint32_t ev[16];
	uint8_t tcp_state[16];
	int n;
};

static void ev_cb(const struct nftdp_ct_event *ev, void *arg)
{
	struct ev_log *l = arg;

	assert_true(l->n < 16);
	l->tcp_state[l->n] = ev->info.tcp.state;
	l->ev[l->n++] = ev->events;
}

static void test_events(void **state)
{
	struct nftdp_ct_config cfg = {.max_entries = 16, .event_ring_size = 4};
	struct tflow f = {false, "10.0.0.1", "10.0.0.2", 1000, 80, 1, 1};
	struct env en = {.now = 1000};
	struct nftdp_ct_entry *e;
	struct ev_log l = {0};
	uint64_t lost;
	struct tpkt t;

	(void)state;
	cfg.event_ring_size = 3;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), -EINVAL);
	cfg.event_ring_size = 4;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	/* a dropped first packet: no event */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 7, 7, 0);
	assert_int_equal(xmit_v(&en, &t, NF_DROP, NULL, NULL), ST_NEW);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	e = handshake(&en, &f);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 3);
	assert_int_equal(l.ev[0], 1u << IPCT_NEW | 1u << IPCT_PROTOINFO);
	assert_int_equal(l.tcp_state[0], TCP_CONNTRACK_SYN_SENT);
	assert_int_equal(l.ev[1], 1u << IPCT_REPLY | 1u << IPCT_PROTOINFO);
	assert_int_equal(l.ev[2], 1u << IPCT_ASSURED | 1u << IPCT_PROTOINFO);
	assert_int_equal(l.tcp_state[2], TCP_CONNTRACK_ESTABLISHED);
	/* nothing changes: no event */
	assert_int_equal(tx(&en, &f, 0, TA, 10, NULL), ST_ESTABLISHED);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	/* nobody listening: no events are built, none lost */
	{
		struct tflow g = {false, "10.0.0.3", "10.0.0.2", 1001, 80, 1, 1};

		struct nftdp_ct_entry *ge;

		nftdp_ct_events_enable(en.s, false);
		ge = handshake(&en, &g);
		assert_int_equal(nftdp_ct_delete(en.s, &ge->tuple[0], 0), 0);
		assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
		assert_int_equal(lost, 0);
		nftdp_ct_events_enable(en.s, true);
	}
	/* ct mark set: an update, delivered with the packet that passes */
	seg(&t, &f, 1, TA, f.bseq, f.aseq, 0);
	nftdp_ct_in(en.s, &t.pkt, en.now);
	nftdp_ct_vm_ops.set(t.pkt.ct, NFT_CT_MARK, -1, &(uint32_t){5}, 4);
	nftdp_ct_confirm(en.s, &t.pkt, NF_DROP);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	assert_int_equal(tx(&en, &f, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 1);
	assert_int_equal(l.ev[3], 1u << IPCT_MARK);
	/* delete: destroy */
	assert_int_equal(nftdp_ct_delete(en.s, &e->tuple[0], 0), 0);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 1);
	assert_int_equal(l.ev[4], 1u << IPCT_DESTROY);
	/* a full ring loses events and says so */
	for (uint16_t p = 1; p <= 6; p++) {
		udp(&t, false, "10.0.0.1", "10.0.0.2", p, 9, 0);
		assert_int_equal(xmit(&en, &t, NULL), ST_NEW);
	}
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 4);
	assert_int_equal(lost, 2);
	/* ct event set: only what the mask allows */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 99, 9, 0);
	nftdp_ct_in(en.s, &t.pkt, en.now);
	nftdp_ct_vm_ops.set(t.pkt.ct, NFT_CT_EVENTMASK, -1, &(uint32_t){1u << IPCT_DESTROY}, 4);
	nftdp_ct_confirm(en.s, &t.pkt, NF_ACCEPT);
	l.n = 0;
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	assert_int_equal(nftdp_ct_flush(en.s), 7);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 4);
	nftdp_ct_shard_destroy(en.s);
}

static void test_rss_symmetric(void **state)
{
	struct nftdp_ct_tuple a, b;
	struct tpkt t;
	uint32_t h[4];

	(void)state;
	udp(&t, false, "10.0.0.1", "192.168.7.9", 1234, 80, 0);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &a));
	assert_true(nftdp_ct_tuple_invert(&a, &b));
	h[0] = nftdp_ct_tuple_rss(&a);
	assert_int_equal(h[0], nftdp_ct_tuple_rss(&b));
	udp(&t, true, "2001:db8::1", "2001:db8:ffff::77", 1234, 80, 0);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &a));
	assert_true(nftdp_ct_tuple_invert(&a, &b));
	h[1] = nftdp_ct_tuple_rss(&a);
	assert_int_equal(h[1], nftdp_ct_tuple_rss(&b));
	udp(&t, false, "10.0.0.1", "192.168.7.9", 1235, 80, 0);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &a));
	h[2] = nftdp_ct_tuple_rss(&a);
	assert_int_not_equal(h[0], h[2]);
	assert_int_not_equal(h[0], h[1]);
	assert_int_equal(nftdp_ct_tuple_owner(&a, 4), h[2] % 4);
	/* an ICMP error steers like the flow it quotes */
	{
		struct tpkt q, e;
		uint32_t r1, r2;

		udp(&q, false, "10.0.0.1", "192.168.7.9", 1234, 80, 0);
		assert_true(nftdp_ct_pkt_rss(&q.pkt, &r1));
		assert_int_equal(r1, h[0]);
		icmp(&e, false, "172.16.0.1", "10.0.0.1", 3, 3, 0, q.buf, q.len);
		assert_true(nftdp_ct_pkt_rss(&e.pkt, &r2));
		assert_int_equal(r2, h[0]);
		udp(&q, true, "2001:db8:ffff::77", "2001:db8::1", 80, 1234, 0);
		icmp(&e, true, "2001:db8:9::1", "2001:db8::1", 1, 4, 0, q.buf, q.len);
		assert_true(nftdp_ct_pkt_rss(&e.pkt, &r2));
		assert_int_equal(r2, h[1]);
		q.pkt.fragoff = 8;
		assert_false(nftdp_ct_pkt_rss(&q.pkt, &r2));
	}
	/* hand-computed Toeplitz of one set bit: the input's top bit
	 * selects the key's first 32 bits (0x6d5a6d5a) */
	memset(&a, 0, sizeof(a));
	a.l3proto = NFPROTO_IPV4;
	a.l4proto = IPPROTO_ICMP;
	a.src.ip = htonl(0x80000000u);
	assert_int_equal(nftdp_ct_tuple_rss(&a), 0x6d5a6d5au);
}


/* ---------- NAT ---------- */

/* every checksum of the packet (and of a quoted one) is right */
static void assert_csums(struct tpkt *t)
{
	struct nftdp_vm_pkt v;

	nftdp_vm_pkt_init(&v, t->buf, t->len, -1, 0);
	nftdp_vm_pkt_parse_ip(&v);
	if (v.nfproto == NFPROTO_IPV4)
		assert_int_equal(fold(sum16(t->buf, 20, 0)), 0);
	if (v.l4proto == IPPROTO_UDP && !t->buf[v.th_off + 6] && !t->buf[v.th_off + 7])
		return;
	assert_true(nftdp_ct_l4_checksum_ok(&v));
}

static struct nftdp_ct_nat_range nat_to(const char *addr, uint16_t port)
{
	struct nftdp_ct_nat_range r = {.flags = NF_NAT_RANGE_MAP_IPS};
	int af = strchr(addr, ':') ? AF_INET6 : AF_INET;

	assert_int_equal(inet_pton(af, addr, r.min_addr.u8), 1);
	r.max_addr = r.min_addr;
	if (port) {
		r.flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
		r.min_proto = r.max_proto = htons(port);
	}
	return r;
}

/* the dataplane's path: conntrack, dnat at prerouting, snat at postrouting */
static uint32_t nat_path(struct env *en, struct tpkt *t, const struct nftdp_ct_nat_range *dnat,
			 const struct nftdp_ct_nat_range *snat, struct nftdp_ct_entry **ent)
{
	unsigned int v;
	uint32_t st;

	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	st = t->pkt.ct ? nftdp_ct_vm_ops.state(t->pkt.ct) : ST_INVALID;
	if (ent)
		*ent = t->pkt.ct ? (struct nftdp_ct_entry *)((uintptr_t)t->pkt.ct & ~(uintptr_t)7)
				 : NULL;
	if (nftdp_ct_nat_need_chains(&t->pkt, NF_INET_PRE_ROUTING) && dnat)
		assert_int_equal(nftdp_ct_nat_setup(en->s, &t->pkt, dnat, NFTDP_CT_MANIP_DST),
				 NF_ACCEPT);
	v = nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_PRE_ROUTING);
	if (v == NF_ACCEPT) {
		if (nftdp_ct_nat_need_chains(&t->pkt, NF_INET_POST_ROUTING) && snat)
			assert_int_equal(nftdp_ct_nat_setup(en->s, &t->pkt, snat,
							    NFTDP_CT_MANIP_SRC),
					 NF_ACCEPT);
		v = nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_POST_ROUTING);
	}
	assert_int_equal(v, NF_ACCEPT);
	nftdp_ct_confirm(en->s, &t->pkt, v);
	return st;
}

static void assert_ip4(const uint8_t *p, const char *want)
{
	char buf[INET_ADDRSTRLEN];

	assert_non_null(inet_ntop(AF_INET, p, buf, sizeof(buf)));
	assert_string_equal(buf, want);
}

static uint16_t port_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void test_nat_snat_tcp(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 0);
	struct tflow f = {false, "10.0.0.1", "198.51.100.7", 40000, 80, 100, 7000};
	struct tflow g = {false, "10.0.0.2", "198.51.100.7", 40000, 80, 100, 7000};
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;

	(void)state;
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, &sn, &e), ST_NEW);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_equal(port_at(t.buf + 20), 40000); /* the port is free: kept */
	assert_csums(&t);
	assert_true(e->status & IPS_SRC_NAT);
	assert_true(e->status & IPS_SRC_NAT_DONE);
	assert_true(e->status & IPS_DST_NAT_DONE); /* null binding at prerouting */
	assert_false(e->status & IPS_DST_NAT);
	f.aseq++;
	/* the reply is addressed to the NAT address and goes back to the client */
	{
		struct tflow r = {false, "203.0.113.5", "198.51.100.7", 40000, 80, f.aseq, f.bseq};

		seg(&t, &r, 1, TS | TA, r.bseq, r.aseq, 0);
		assert_int_equal(nat_path(en, &t, NULL, &sn, &e2), ST_ESTABLISHED);
		assert_ptr_equal(e, e2);
		assert_ip4(t.buf + 16, "10.0.0.1");
		assert_int_equal(port_at(t.buf + 22), 40000);
		assert_csums(&t);
		f.bseq++;
	}
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_RECV);
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 10);
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_ESTABLISHED);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_csums(&t);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	/* a second client with the same port: the source port must move */
	seg(&t, &g, 0, TS, g.aseq, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, &sn, &e2), ST_NEW);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_not_equal(port_at(t.buf + 20), 40000);
	assert_true(port_at(t.buf + 20) >= 1024);
	assert_int_equal(ntohs(e2->tuple[1].dport), port_at(t.buf + 20));
	assert_csums(&t);
	env_free(en);
}

static void test_nat_dnat_port(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range dn = nat_to("10.0.0.80", 8080);
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;

	(void)state;
	udp(&t, false, "192.0.2.9", "203.0.113.5", 5555, 80, 30);
	assert_int_equal(nat_path(en, &t, &dn, NULL, &e), ST_NEW);
	assert_ip4(t.buf + 16, "10.0.0.80");
	assert_int_equal(port_at(t.buf + 22), 8080);
	assert_csums(&t);
	assert_true(e->status & IPS_DST_NAT);
	/* the server's reply leaves as if from the public address */
	udp(&t, false, "10.0.0.80", "192.0.2.9", 8080, 5555, 30);
	assert_int_equal(nat_path(en, &t, &dn, NULL, &e2), ST_ESTABLISHED);
	assert_ptr_equal(e, e2);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_equal(port_at(t.buf + 20), 80);
	assert_csums(&t);
	/* IPv4 UDP without a checksum keeps none */
	udp(&t, false, "192.0.2.10", "203.0.113.5", 5555, 80, 30);
	t.buf[26] = t.buf[27] = 0;
	assert_int_equal(nat_path(en, &t, &dn, NULL, NULL), ST_NEW);
	assert_int_equal(t.buf[26] | t.buf[27], 0);
	assert_ip4(t.buf + 16, "10.0.0.80");
	env_free(en);
}

static bool test_ifaddr(void *arg, uint32_t ifindex, uint8_t nfproto, void *addr16)
{
	(void)arg;
	if (ifindex != 2 || nfproto != NFPROTO_IPV4)
		return false;
	assert_int_equal(inet_pton(AF_INET, "192.0.2.254", addr16), 1);
	return true;
}

static void test_nat_masquerade_icmp(void **state)
{
	struct nftdp_ct_config cfg = {.max_entries = 16, .ifaddr = test_ifaddr};
	struct nftdp_ct_nat_range none = {0};
	struct env en = {.now = 5000};
	struct tpkt t;

	(void)state;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	icmp(&t, false, "10.0.0.1", "198.51.100.1", 8, 0, 0x99, NULL, 0);
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	t.pkt.oif = 2;
	assert_true(nftdp_ct_nat_need_chains(&t.pkt, NF_INET_POST_ROUTING));
	assert_int_equal(nftdp_ct_nat_masquerade(en.s, &t.pkt, &none), NF_ACCEPT);
	assert_false(nftdp_ct_nat_need_chains(&t.pkt, NF_INET_POST_ROUTING));
	assert_int_equal(nftdp_ct_nat_packet(en.s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	nftdp_ct_confirm(en.s, &t.pkt, NF_ACCEPT);
	assert_ip4(t.buf + 12, "192.0.2.254");
	assert_csums(&t);
	/* the echo reply comes back to the client */
	icmp(&t, false, "198.51.100.1", "192.0.2.254", 0, 0, 0x99, NULL, 0);
	assert_int_equal(nat_path(&en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	assert_ip4(t.buf + 16, "10.0.0.1");
	assert_int_equal(port_at(t.buf + 24), 0x99);
	assert_csums(&t);
	/* a port without an address: the new connection is dropped */
	icmp(&t, false, "10.0.0.1", "198.51.100.1", 8, 0, 0x9a, NULL, 0);
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	t.pkt.oif = 3;
	assert_int_equal(nftdp_ct_nat_masquerade(en.s, &t.pkt, &none), NF_DROP);
	nftdp_ct_confirm(en.s, &t.pkt, NF_DROP);
	nftdp_ct_shard_destroy(en.s);
}

/* an ICMP error about a source-NATed flow: the quoted packet is translated */
static void nat_icmp_error_case(bool v6)
{
	const char *cli = v6 ? "fd00::1" : "10.0.0.1", *srv = v6 ? "2001:db8::53" : "198.51.100.53";
	const char *pub = v6 ? "2001:db8:ff::5" : "203.0.113.5", *rtr = v6 ? "2001:db8::fe" : "198.51.100.254";
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range sn = nat_to(pub, 6000);
	uint32_t hl = v6 ? 40 : 20;
	struct nftdp_vm_pkt inner;
	struct tpkt t, q;
	uint8_t want[16];

	udp(&t, v6, cli, srv, 5000, 53, 10);
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_NEW);
	assert_int_equal(port_at(t.buf + hl), 6000);
	/* what the server side sees, quoted back to the public address */
	udp(&q, v6, pub, srv, 6000, 53, 10);
	icmp(&t, v6, rtr, pub, v6 ? 1 : 3, v6 ? 4 : 3, 0, q.buf, q.len);
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_RELATED);
	assert_csums(&t);
	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, cli, want), 1);
	/* outer destination and quoted source are the client now */
	assert_memory_equal(t.buf + (v6 ? 24 : 16), want, v6 ? 16 : 4);
	assert_memory_equal(t.buf + hl + 8 + (v6 ? 8 : 12), want, v6 ? 16 : 4);
	if (!v6)
		assert_int_equal(fold(sum16(t.buf + hl + 8, 20, 0)), 0);
	assert_int_equal(port_at(t.buf + 2 * hl + 8), 5000);
	/* the quoted UDP checksum follows its new source */
	nftdp_vm_pkt_init(&inner, t.buf + hl + 8, q.len, -1, 0);
	nftdp_vm_pkt_parse_ip(&inner);
	assert_true(nftdp_ct_l4_checksum_ok(&inner));
	env_free(en);
}

static void test_nat_icmp_error_ipv4(void **state)
{
	(void)state;
	nat_icmp_error_case(false);
}

static void test_nat_icmp_error_ipv6(void **state)
{
	(void)state;
	nat_icmp_error_case(true);
}

static void test_nat_shard_owner(void **state)
{
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 0);
	struct nftdp_ct_tuple tu;
	struct tpkt t;

	(void)state;
	for (uint16_t sp = 2000; sp < 2016; sp++) {
		struct nftdp_ct_config cfg = {.max_entries = 16, .n_shards = 4};
		struct env en = {.now = 1000};
		struct nftdp_ct_entry *e;

		udp(&t, false, "10.0.0.1", "198.51.100.7", sp, 53, 0);
		assert_true(nftdp_ct_pkt_tuple(&t.pkt, &tu));
		cfg.shard_id = (uint16_t)nftdp_ct_tuple_owner(&tu, 4);
		assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
		assert_int_equal(nat_path(&en, &t, NULL, &sn, &e), ST_NEW);
		/* the reply to the translated tuple hashes to this shard */
		assert_int_equal(nftdp_ct_tuple_owner(&e->tuple[1], 4), cfg.shard_id);
		assert_csums(&t);
		nftdp_ct_shard_destroy(en.s);
	}
}

/* ---------- the VM through nftdp_ct_vm_ops ---------- */

static void add_rule(struct nftdp_vm_chain *c, struct nftdp_vm_state *st, uint64_t handle, ...)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftdp_vm_error err;
	struct nftnl_expr *e;
	va_list ap;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, handle);
	va_start(ap, handle);
	while ((e = va_arg(ap, struct nftnl_expr *)))
		nftnl_rule_add_expr(r, e);
	va_end(ap);
	if (nftdp_vm_chain_add_rule(c, r, NULL, st, &err))
		fail_msg("compile: %s", err.msg);
	nftnl_rule_free(r);
}

static void test_vm_ct_rules(void **state)
{
	struct nftdp_vm_state_config vcfg = {.n_workers = 1, .max_counters = 16, .max_cells = 16,
					     .log_ring_size = 8, .hash_seed = 1};
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4, .table = "t", .name = "fwd",
					.base = true, .hook = NF_INET_FORWARD,
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
		 cmp(NFT_CMP_EQ, NFT_REG32_01, &(uint32_t){ST_NEW}, 4), verdict(NF_ACCEPT, NULL), NULL);
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
	struct nftdp_vm_state_config vcfg = {.n_workers = 1, .max_counters = 16, .max_cells = 16,
					     .log_ring_size = 8, .hash_seed = 1};
	struct nftdp_vm_chain_desc post = {.family = NFPROTO_IPV4, .table = "nat", .name = "post",
					   .base = true, .hook = NF_INET_POST_ROUTING,
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
	assert_int_equal(try_rule(cpre, st, nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, NFT_REG32_00, 0, 0),
				  NULL),
			 -EOPNOTSUPP);
	assert_int_equal(try_rule(cpost, st, nat_expr(NFT_NAT_DNAT, NFPROTO_IPV4, NFT_REG32_00, 0, 0),
				  NULL),
			 -EOPNOTSUPP);
	assert_int_equal(try_rule(cpost, st, nat_expr(NFT_NAT_SNAT, NFPROTO_IPV6, NFT_REG32_00, 0, 0),
				  NULL),
			 -EOPNOTSUPP);
	assert_int_equal(try_rule(cpost, st, nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, 0, 0, 0), NULL),
			 -EINVAL);
	assert_int_equal(try_rule(cpost, st,
				  nat_expr(NFT_NAT_SNAT, NFPROTO_IPV4, NFT_REG32_00, 0, 0x1000), NULL),
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

/*
 * Malformed packets: valid seeds (TCP with options, UDP, ICMP echo, ICMP
 * errors with quotes, IPv4 and IPv6) truncated and with random bytes
 * flipped, each in a heap buffer of exactly its length (so ASan sees any
 * read or write past the end), through conntrack and both NAT steps.
 */
/* ---------- SCTP ---------- */

static uint32_t test_crc32c(const uint8_t *p, uint32_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
	}
	return ~c;
}

/* the CRC32c of an SCTP packet with its checksum field read as zero */
static uint32_t test_crc32c_zeroed(const uint8_t *l4, uint32_t n)
{
	uint8_t tmp[512];

	assert_true(n <= sizeof(tmp));
	memcpy(tmp, l4, n);
	memset(tmp + 8, 0, 4);
	return test_crc32c(tmp, n);
}

/* an SCTP packet: common header (ports, tag) + chunks, CRC32c stored
 * little-endian as the kernel's sctp_compute_cksum */
static void sctp_pkt(struct tpkt *t, bool v6, int dir, uint16_t cport, uint32_t tag,
		     const uint8_t *chunks, uint32_t clen)
{
	uint8_t h[256] = {0};
	uint16_t sp = dir ? 36412 : cport, dp = dir ? cport : 36412;
	uint32_t hl = v6 ? 40 : 20, crc;

	assert_true(clen <= sizeof(h) - 12);
	h[0] = (uint8_t)(sp >> 8);
	h[1] = (uint8_t)sp;
	h[2] = (uint8_t)(dp >> 8);
	h[3] = (uint8_t)dp;
	put32(h + 4, tag);
	memcpy(h + 12, chunks, clen);
	if (dir)
		build(t, v6, v6 ? "2001:db8::2" : "10.0.0.2", v6 ? "2001:db8::1" : "10.0.0.1",
		      IPPROTO_SCTP, h, 12 + clen);
	else
		build(t, v6, v6 ? "2001:db8::1" : "10.0.0.1", v6 ? "2001:db8::2" : "10.0.0.2",
		      IPPROTO_SCTP, h, 12 + clen);
	crc = test_crc32c(t->buf + hl, 12 + clen);
	t->buf[hl + 8] = (uint8_t)crc;
	t->buf[hl + 9] = (uint8_t)(crc >> 8);
	t->buf[hl + 10] = (uint8_t)(crc >> 16);
	t->buf[hl + 11] = (uint8_t)(crc >> 24);
}

/* one chunk: type, flags, value bytes (4 + n, padded) */
static uint32_t chunk(uint8_t *out, uint8_t type, uint8_t flags, const uint8_t *v, uint32_t n)
{
	out[0] = type;
	out[1] = flags;
	out[2] = (uint8_t)((4 + n) >> 8);
	out[3] = (uint8_t)(4 + n);
	if (n)
		memcpy(out + 4, v, n);
	while (n % 4)
		out[4 + n++] = 0;
	return 4 + n;
}

/* INIT / INIT_ACK: init tag, a_rwnd, streams, TSN */
static uint32_t init_chunk(uint8_t *out, uint8_t type, uint32_t itag)
{
	uint8_t v[16] = {0};

	put32(v, itag);
	v[4] = 0xff;
	v[9] = 1;
	v[11] = 1;
	return chunk(out, type, 0, v, 16);
}

static uint32_t sx(struct env *en, bool v6, int dir, uint16_t port, uint32_t tag,
		   const uint8_t *c, uint32_t n, struct nftdp_ct_entry **e)
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
				assert_int_equal(nftdp_ct_sctp_table(d, r, col),
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
		assert_int_equal(sx(en, v6, 0, port, ct, c, n, NULL), ST_INVALID); /* peer's tag, no T */
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

/* SCTP through source NAT to a fixed port: the port changes and the CRC32c
 * is computed again, over the datagram and not the link padding after it */
static void test_nat_sctp_crc(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 7777);
	struct tpkt t;
	uint8_t c[32], *th;
	uint32_t n, crc, want;

	(void)state;
	n = init_chunk(c, 1, 0x01020304);
	sctp_pkt(&t, false, 0, 5000, 0, c, n);
	th = t.buf + 20;
	memset(t.buf + t.len, 0xee, 6); /* link padding, not part of the datagram */
	t.pkt.len = t.len + 6;
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_NEW);
	assert_int_equal(port_at(th), 7777);
	assert_ip4(t.buf + 12, "203.0.113.5");
	crc = test_crc32c_zeroed(th, 12 + n);
	want = (uint32_t)th[8] | (uint32_t)th[9] << 8 | (uint32_t)th[10] << 16 |
	       (uint32_t)th[11] << 24;
	assert_int_equal(crc, want);
	env_free(en);
}

/* With zones in use confirm looks for clashes; a NATed connection's reply
 * tuple that a direct connection would take is resolved by the null
 * binding before confirm, so nothing is dropped. */
static void test_zone_clash_after_nat(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range dn = nat_to("10.0.0.80", 8080);
	struct nftdp_ct_entry *e1, *e2;
	struct tpkt t;

	(void)state;
	udp(&t, false, "192.0.2.9", "203.0.113.5", 5555, 80, 0);
	t.pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH; /* zone 0, but a zone was set */
	assert_int_equal(nat_path(en, &t, &dn, NULL, &e1), ST_NEW);
	assert_true(en->s->zones_seen);
	/* the client straight to the server: its reply tuple is e1's */
	udp(&t, false, "192.0.2.9", "10.0.0.80", 5555, 8080, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &e2), ST_NEW);
	assert_ptr_not_equal(e1, e2);
	assert_int_equal(en->s->st.insert_failed, 0);
	assert_int_equal(en->s->st.count, 2);
	assert_true(e2->status & IPS_CONFIRMED);
	assert_int_not_equal(e2->tuple[1].dport, htons(5555)); /* the null binding moved it */
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
	uint8_t opts[40] = {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
			    5, 10, 0, 0, 0, 1, 0, 0, 0, 2};

	(void)state;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	for (int v6 = 0; v6 < 2; v6++) {
		const char *a = v6 ? "2001:db8::1" : "10.0.0.1", *b = v6 ? "2001:db8::2" : "10.0.0.2";
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

static void test_create_errors(void **state)
{
	struct nftdp_ct_config cfg = {0};
	struct nftdp_ct_shard *s;

	(void)state;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &s), -EINVAL);
	assert_int_equal(nftdp_ct_shard_create(NULL, &s), -EINVAL);
	cfg.max_entries = 1u << 29;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &s), -EINVAL);
	assert_true(nftdp_ct_entry_size() % 64 == 0);
}

/* ---------- zones, ct timeout policies, connlimit ---------- */

struct vm_env {
	struct nftdp_vm_state *st;
	struct nftdp_vm_ctx ctx;
};

static void vm_env_init(struct vm_env *v, uint64_t now)
{
	struct nftdp_vm_state_config vcfg = {.n_workers = 2, .max_counters = 16, .max_cells = 16,
					     .log_ring_size = 8, .hash_seed = 1};

	memset(v, 0, sizeof(*v));
	assert_int_equal(nftdp_vm_state_create(&vcfg, &v->st), 0);
	nftdp_vm_state_gen_begin(v->st);
	v->ctx.state = v->st;
	v->ctx.now_ms = now;
}

static struct nftdp_vm_chain *vm_chain(struct vm_env *v, const char *name, uint8_t hook,
				       uint32_t policy)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4, .table = "t", .name = name,
					.base = true, .hook = hook, .policy = policy};
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
	st = t->pkt.ct ? nftdp_ct_vm_ops.state(t->pkt.ct)
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
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftdp_vm_error err;
	struct nftnl_expr *e;
	va_list ap;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, handle);
	va_start(ap, handle);
	while ((e = va_arg(ap, struct nftnl_expr *)))
		nftnl_rule_add_expr(r, e);
	va_end(ap);
	if (nftdp_vm_chain_add_rule(c, r, res, st, &err))
		fail_msg("compile: %s", err.msg);
	nftnl_rule_free(r);
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
	/* ct helper and ct expectation objects stay refused, by name */
	{
		struct nftnl_obj *o = nftnl_obj_alloc();
		struct nftdp_vm_obj *vo;

		nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "t");
		nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "h");
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_HELPER);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -EOPNOTSUPP);
		assert_non_null(strstr(err.msg, "ct helper"));
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_EXPECT);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -EOPNOTSUPP);
		assert_non_null(strstr(err.msg, "ct expectation"));
		/* a ct timeout object without a protocol is invalid */
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_TIMEOUT);
		assert_int_equal(nftdp_vm_obj_create(o, v.st, &err, &vo), -EINVAL);
		nftnl_obj_free(o);
		r = nftnl_rule_alloc();
		nftnl_rule_add_expr(r, objref(NFT_OBJECT_CT_HELPER, "h"));
		assert_int_equal(nftdp_vm_chain_add_rule(c, r, NULL, v.st, &err), -EOPNOTSUPP);
		assert_non_null(strstr(err.msg, "ct helper"));
		nftnl_rule_free(r);
	}
	nftdp_vm_chain_destroy(c);
	nftdp_vm_state_destroy(v.st);
}

/*
 * The table hash (NH with a key from the seed): tuples that differ in one
 * field only (the usual flood: one source, counting ports or addresses)
 * spread over the buckets like random ones, and the key is the seed's:
 * another seed puts the same tuples elsewhere.
 */
static void test_table_hash(void **state)
{
	struct env *a = env_new(1 << 16, false), *b;
	struct nftdp_ct_config cfg = {.max_entries = 1 << 16, .hash_seed = 0x4321};
	static uint16_t load[1 << 17];
	unsigned int worst = 0, same = 0;
	const uint32_t n = 1 << 16;

	(void)state;
	b = calloc(1, sizeof(*b));
	assert_non_null(b);
	assert_int_equal(nftdp_ct_shard_create(&cfg, &b->s), 0);
	for (int field = 0; field < 3; field++) {
		memset(load, 0, sizeof(load));
		worst = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct nftdp_ct_tuple t = {.l3proto = NFPROTO_IPV4, .l4proto = IPPROTO_TCP};
			uint32_t h;

			t.src.ip = htonl(0x0a000001);
			t.dst.ip = htonl(0xc0000201);
			t.sport = htons(40000);
			t.dport = htons(80);
			if (field == 0)
				t.src.ip = htonl(0x0a000000 + i);
			else if (field == 1)
				t.sport = htons((uint16_t)i);
			else
				t.dst.ip = htonl(0xc0000000 + i * 256);
			h = nftdp_ct_tuple_hash(a->s, &t) & a->s->bucket_mask;
			if (++load[h] > worst)
				worst = load[h];
			same += h == (nftdp_ct_tuple_hash(b->s, &t) & b->s->bucket_mask);
		}
		/* 64k keys in 128k buckets: a random hash's fullest bucket
		 * holds about 7-8; a weak one gives dozens or hundreds */
		assert_true(worst <= 12);
	}
	/* another key: about one tuple in 128k buckets lands alike */
	assert_true(same < 3 * n / 1000);
	nftdp_ct_shard_destroy(b->s);
	free(b);
	env_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_tcp_table_transcription),
		cmocka_unit_test(test_tcp_every_transition),
		cmocka_unit_test(test_tcp_lifecycle),
		cmocka_unit_test(test_tcp_window),
		cmocka_unit_test(test_tcp_rst),
		cmocka_unit_test(test_tcp_invalid),
		cmocka_unit_test(test_tcp_simultaneous_open),
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_icmp),
		cmocka_unit_test(test_related_ipv4),
		cmocka_unit_test(test_related_ipv6),
		cmocka_unit_test(test_related_tcp_and_echo),
		cmocka_unit_test(test_burst_order),
		cmocka_unit_test(test_timeout_gc),
		cmocka_unit_test(test_configured_timeouts),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_gc_pressure),
		cmocka_unit_test(test_confirm_drop),
		cmocka_unit_test(test_walk_get_delete_flush),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_rss_symmetric),
		cmocka_unit_test(test_vm_ct_rules),
		cmocka_unit_test(test_nat_snat_tcp),
		cmocka_unit_test(test_nat_dnat_port),
		cmocka_unit_test(test_nat_masquerade_icmp),
		cmocka_unit_test(test_nat_icmp_error_ipv4),
		cmocka_unit_test(test_nat_icmp_error_ipv6),
		cmocka_unit_test(test_nat_shard_owner),
		cmocka_unit_test(test_vm_nat_rules),
		cmocka_unit_test(test_malformed_packets),
		cmocka_unit_test(test_zones),
		cmocka_unit_test(test_timeout_policy),
		cmocka_unit_test(test_connlimit),
		cmocka_unit_test(test_connlimit_compile),
		cmocka_unit_test(test_sctp),
		cmocka_unit_test(test_zone_clash_after_nat),
		cmocka_unit_test(test_nat_sctp_crc),
		cmocka_unit_test(test_table_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
