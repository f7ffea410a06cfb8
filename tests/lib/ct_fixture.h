// SPDX-License-Identifier: BSD-3-Clause
/*
 * Shared fixtures of the conntrack unit tests (tests/unit/test_ct_*.c), on
 * plain buffers without EAL: IPv4/IPv6 packets with correct checksums
 * around a TCP, UDP, ICMP or SCTP header, a shard with its clock (struct
 * env), a TCP flow that keeps both peers' sequence numbers, the packet
 * path (nftdp_ct_in + confirm) returning the ct state bits, the helpers'
 * (hx, say, open_ctl, exp_live, exact; two shards sharing an expectation
 * table), tuples, and the NAT path. Each test file includes this once;
 * everything is static inline so a file pays only for what it uses.
 */
#ifndef NFTDP_TESTS_CT_FIXTURE_H
#define NFTDP_TESTS_CT_FIXTURE_H

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
#include <libnftnl/rule.h>
#include <linux/netfilter/nf_conntrack_sctp.h>
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

struct tpkt {
	uint8_t buf[2048];
	uint32_t len;
	struct nftdp_vm_pkt pkt;
};

static inline uint32_t sum16(const uint8_t *p, uint32_t len, uint32_t s)
{
	for (; len > 1; p += 2, len -= 2)
		s += (uint32_t)p[0] << 8 | p[1];
	if (len)
		s += (uint32_t)p[0] << 8;
	return s;
}

static inline uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* an IP packet around l4 (l4len bytes) with correct checksums */
static inline void build(struct tpkt *t, bool v6, const char *src, const char *dst, uint8_t proto,
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

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t tcp_hdr(uint8_t *h, uint16_t sp, uint16_t dp, uint32_t seq, uint32_t ack,
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

struct env {
	struct nftdp_ct_shard *s;
	uint64_t now;
};

static inline struct env *env_new(uint32_t max, bool liberal)
{
	struct env *e = calloc(1, sizeof(*e));
	struct nftdp_ct_config cfg = {
	    .max_entries = max, .hash_seed = 0x1234, .tcp_be_liberal = liberal};

	assert_non_null(e);
	assert_int_equal(nftdp_ct_shard_create(&cfg, &e->s), 0);
	e->now = 1000000;
	return e;
}

static inline void env_free(struct env *e)
{
	nftdp_ct_shard_destroy(e->s);
	free(e);
}

/* run the packet through in + confirm(verdict); return its ct state bits,
 * the entry and the ctinfo it had */
static inline uint32_t xmit_v(struct env *en, struct tpkt *t, unsigned int verdict,
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

static inline uint32_t xmit(struct env *en, struct tpkt *t, struct nftdp_ct_entry **ent)
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
static inline void seg(struct tpkt *t, const struct tflow *f, int dir, uint8_t flags, uint32_t seq,
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
static inline uint32_t tx(struct env *en, struct tflow *f, int dir, uint8_t flags, uint32_t payload,
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

static inline struct nftdp_ct_entry *handshake(struct env *en, struct tflow *f)
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

/* in + (helper h, may be NULL) + confirm: the ct state bits; *ent the
 * entry, *verdict confirm's verdict (either may be NULL) */
static inline uint32_t hx(struct env *en, struct tpkt *t, const struct nftdp_vm_ct_helper *h,
			  struct nftdp_ct_entry **ent, unsigned int *verdict)
{
	uint32_t st = ST_INVALID;
	unsigned int v;

	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	if (t->pkt.ct) {
		st = nftdp_ct_vm_ops.state(t->pkt.ct);
		if (ent)
			*ent = (struct nftdp_ct_entry *)((uintptr_t)t->pkt.ct & ~(uintptr_t)7);
		if (h)
			nftdp_ct_vm_ops.helper(t->pkt.ct, h);
	} else if (ent) {
		*ent = NULL;
	}
	v = nftdp_ct_confirm(en->s, &t->pkt, NF_ACCEPT);
	if (verdict)
		*verdict = v;
	return st;
}

/* a segment of f with text from dir, sequence numbers advanced; confirm's
 * verdict (a helper may drop it) */
static inline unsigned int say_n(struct env *en, struct tflow *f, int dir, const void *text,
				 uint32_t n)
{
	uint32_t *mine = dir ? &f->bseq : &f->aseq, *theirs = dir ? &f->aseq : &f->bseq;
	uint8_t h[1600];
	struct tpkt t;
	unsigned int v;

	assert_true(n <= sizeof(h) - 20);
	tcp_hdr(h, dir ? f->bp : f->ap, dir ? f->ap : f->bp, *mine, *theirs, TA, 65535, 0);
	memcpy(h + 20, text, n);
	build(&t, f->v6, dir ? f->b : f->a, dir ? f->a : f->b, IPPROTO_TCP, h, 20 + n);
	assert_int_equal(hx(en, &t, NULL, NULL, &v), ST_ESTABLISHED);
	*mine += n;
	return v;
}

static inline unsigned int say(struct env *en, struct tflow *f, int dir, const char *text)
{
	return say_n(en, f, dir, text, (uint32_t)strlen(text));
}

/* f's handshake with helper h given to its first packet: the entry */
static inline struct nftdp_ct_entry *open_ctl(struct env *en, struct tflow *f,
					      const struct nftdp_vm_ct_helper *h)
{
	struct nftdp_ct_entry *e;
	struct tpkt t;

	seg(&t, f, 0, TS, f->aseq, 0, 0);
	assert_int_equal(hx(en, &t, h, &e, NULL), ST_NEW);
	f->aseq++;
	assert_int_equal(tx(en, f, 1, TS | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(tx(en, f, 0, TA, 0, NULL), ST_ESTABLISHED);
	return e;
}

/* the shard's live expectations */
static inline uint32_t exp_live(const struct env *en)
{
	return atomic_load(&en->s->exp->n_live);
}

/* an IPv4 tuple s:sp -> d:dp of l4 */
static inline void tuple4(struct nftdp_ct_tuple *t, uint8_t l4, const char *s, uint16_t sp,
			  const char *d, uint16_t dp)
{
	memset(t, 0, sizeof(*t));
	t->l3proto = NFPROTO_IPV4;
	t->l4proto = l4;
	assert_int_equal(inet_pton(AF_INET, s, &t->src.ip), 1);
	assert_int_equal(inet_pton(AF_INET, d, &t->dst.ip), 1);
	t->sport = htons(sp);
	t->dport = htons(dp);
}

/* two shards, a and b (ids 0 and 1, 64 entries), sharing an expectation
 * table made here, their clocks at 1000 s: a master on one, its expected
 * connection on the other */
static inline struct nftdp_ct_expect_table *two_shards(struct env *a, struct env *b)
{
	struct nftdp_ct_config cfg = {.max_entries = 64, .hash_seed = 1, .n_shards = 2};
	struct nftdp_ct_expect_table *tab;

	assert_int_equal(nftdp_ct_expect_table_create(2, 4, &tab), 0);
	cfg.expect = tab;
	cfg.shard_id = 0;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &a->s), 0);
	cfg.shard_id = 1;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &b->s), 0);
	a->now = b->now = 1000000;
	return tab;
}

static inline void two_shards_free(struct env *a, struct env *b, struct nftdp_ct_expect_table *tab)
{
	nftdp_ct_shard_destroy(a->s);
	nftdp_ct_shard_destroy(b->s);
	nftdp_ct_expect_table_destroy(tab);
}

/* a copy of text in a buffer of exactly its length (ASan sees any
 * over-read), *n its length; the caller frees it */
static inline char *exact(const char *text, uint32_t *n)
{
	char *b;

	*n = (uint32_t)strlen(text);
	b = malloc(*n ? *n : 1);
	assert_non_null(b);
	memcpy(b, text, *n);
	return b;
}

static inline uint64_t left_s(const struct env *en, const struct nftdp_ct_entry *e)
{
	return (e->expires_ms - en->now) / 1000;
}

static inline void udp(struct tpkt *t, bool v6, const char *s, const char *d, uint16_t sp,
		       uint16_t dp, uint32_t payload)
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

/* a UDP datagram sp -> dp carrying text (a helper's message) */
static inline void udp_text(struct tpkt *t, bool v6, const char *s, const char *d, uint16_t sp,
			    uint16_t dp, const char *text)
{
	uint8_t h[1800] = {(uint8_t)(sp >> 8), (uint8_t)sp, (uint8_t)(dp >> 8), (uint8_t)dp};
	size_t n = strlen(text);

	assert_true(n + 8 <= sizeof(h));
	h[4] = (uint8_t)((n + 8) >> 8);
	h[5] = (uint8_t)(n + 8);
	memcpy(h + 8, text, n);
	build(t, v6, s, d, IPPROTO_UDP, h, (uint32_t)(n + 8));
}

static inline void icmp(struct tpkt *t, bool v6, const char *s, const char *d, uint8_t type,
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

/* every checksum of the packet (and of a quoted one) is right */
static inline void assert_csums(struct tpkt *t)
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

static inline struct nftdp_ct_nat_range nat_to(const char *addr, uint16_t port)
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
static inline uint32_t nat_path(struct env *en, struct tpkt *t,
				const struct nftdp_ct_nat_range *dnat,
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
			assert_int_equal(
			    nftdp_ct_nat_setup(en->s, &t->pkt, snat, NFTDP_CT_MANIP_SRC),
			    NF_ACCEPT);
		v = nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_POST_ROUTING);
	}
	assert_int_equal(v, NF_ACCEPT);
	nftdp_ct_confirm(en->s, &t->pkt, v);
	return st;
}

static inline void assert_ip4(const uint8_t *p, const char *want)
{
	char buf[INET_ADDRSTRLEN];

	assert_non_null(inet_ntop(AF_INET, p, buf, sizeof(buf)));
	assert_string_equal(buf, want);
}

static inline uint16_t port_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline bool test_ifaddr(void *arg, uint32_t ifindex, uint8_t nfproto, void *addr16)
{
	(void)arg;
	if (ifindex != 2 || nfproto != NFPROTO_IPV4)
		return false;
	assert_int_equal(inet_pton(AF_INET, "192.0.2.254", addr16), 1);
	return true;
}

/*
 * Malformed packets: valid seeds (TCP with options, UDP, ICMP echo, ICMP
 * errors with quotes, IPv4 and IPv6) truncated and with random bytes
 * flipped, each in a heap buffer of exactly its length (so ASan sees any
 * read or write past the end), through conntrack and both NAT steps.
 */
static inline uint32_t test_crc32c(const uint8_t *p, uint32_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
	}
	return ~c;
}

/* an SCTP packet: common header (ports, tag) + chunks, CRC32c stored
 * little-endian as the kernel's sctp_compute_cksum */
static inline void sctp_pkt(struct tpkt *t, bool v6, int dir, uint16_t cport, uint32_t tag,
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
static inline uint32_t chunk(uint8_t *out, uint8_t type, uint8_t flags, const uint8_t *v,
			     uint32_t n)
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
static inline uint32_t init_chunk(uint8_t *out, uint8_t type, uint32_t itag)
{
	uint8_t v[16] = {0};

	put32(v, itag);
	v[4] = 0xff;
	v[9] = 1;
	v[11] = 1;
	return chunk(out, type, 0, v, 16);
}

#endif /* NFTDP_TESTS_CT_FIXTURE_H */
