/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/parse.c and reject.c on crafted and truncated frames, without
 * EAL: link-layer parsing with VLAN tags, the kernel's ip_rcv / ipv6_rcv
 * checks, the forwarding step of --router, and reject replies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NFTDP_DP_BYTES_ONLY
#include "dataplane_priv.h"

/* Ethernet + IPv4 + l4 (len bytes of it) at f; returns the frame length. */
static uint32_t mk_ip4(uint8_t *f, uint8_t proto, const uint8_t *l4, uint32_t l4len, uint8_t ttl)
{
	uint8_t *ip = f + 14;
	uint32_t s;

	memset(f, 0, 14 + 20);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	nftdp_wr16(f + 12, 0x0800);
	ip[0] = 0x45;
	nftdp_wr16(ip + 2, (uint16_t)(20 + l4len));
	ip[8] = ttl;
	ip[9] = proto;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x08\x08\x08\x08", 8);
	nftdp_st16(ip + 10, nftdp_csum_fold(nftdp_csum_partial(ip, 20, 0)));
	memcpy(ip + 20, l4, l4len);
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		uint8_t ph[4] = {0, proto, (uint8_t)(l4len >> 8), (uint8_t)l4len};
		uint32_t off = proto == IPPROTO_TCP ? 16 : 6;

		nftdp_wr16(ip + 20 + off, 0);
		s = nftdp_csum_partial(ip + 12, 8, 0);
		s = nftdp_csum_partial(ph, 4, s);
		s = nftdp_csum_partial(ip + 20, l4len, s);
		nftdp_st16(ip + 20 + off, nftdp_csum_fold(s));
	} else if (proto == IPPROTO_ICMP) {
		nftdp_wr16(ip + 22, 0);
		nftdp_st16(ip + 22, nftdp_csum_fold(nftdp_csum_partial(ip + 20, l4len, 0)));
	}
	return 34 + l4len;
}

static uint32_t mk_ip6_udp(uint8_t *f, uint32_t payload)
{
	uint8_t *ip = f + 14, *u = ip + 40;
	uint8_t ph[8] = {0};
	uint32_t l4len = 8 + payload, s;

	memset(f, 0, 14 + 40 + l4len);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	nftdp_wr16(f + 12, 0x86dd);
	ip[0] = 0x60;
	nftdp_wr16(ip + 4, (uint16_t)l4len);
	ip[6] = IPPROTO_UDP;
	ip[7] = 64;
	ip[8] = 0x20;
	ip[9] = 0x01;
	ip[23] = 1;
	ip[24] = 0x20;
	ip[25] = 0x01;
	ip[39] = 2;
	nftdp_wr16(u, 5000);
	nftdp_wr16(u + 2, 7);
	nftdp_wr16(u + 4, (uint16_t)l4len);
	ph[2] = (uint8_t)(l4len >> 8);
	ph[3] = (uint8_t)l4len;
	ph[7] = IPPROTO_UDP;
	s = nftdp_csum_partial(ip + 8, 32, 0);
	s = nftdp_csum_partial(ph, 8, s);
	s = nftdp_csum_partial(u, l4len, s);
	nftdp_st16(u + 6, nftdp_csum_fold(s));
	return 14 + 40 + l4len;
}

static void test_l2(void **state)
{
	uint8_t f[64] = {0};
	struct nftdp_dp_l2 l2;

	(void)state;
	assert_false(nftdp_dp_parse_l2(f, 13, &l2));
	nftdp_wr16(f + 12, 0x0800);
	assert_true(nftdp_dp_parse_l2(f, 14, &l2));
	assert_int_equal(l2.nh_off, 14);
	assert_int_equal(l2.proto, 0x0800);
	assert_int_equal(l2.n_vlan, 0);
	/* one 802.1Q tag: untagged view at 18, the ethertype inside */
	nftdp_wr16(f + 12, 0x8100);
	nftdp_wr16(f + 14, 0x2064); /* pcp 1, vid 100 */
	nftdp_wr16(f + 16, 0x86dd);
	assert_true(nftdp_dp_parse_l2(f, 60, &l2));
	assert_int_equal(l2.nh_off, 18);
	assert_int_equal(l2.proto, 0x86dd);
	assert_int_equal(l2.vid, 100);
	assert_int_equal(l2.ip_off, 18);
	/* truncated inside the tag */
	assert_false(nftdp_dp_parse_l2(f, 17, &l2));
	/* 802.1ad + 802.1Q: netdev sees the inner tag as its network header */
	nftdp_wr16(f + 12, 0x88a8);
	nftdp_wr16(f + 14, 7);
	nftdp_wr16(f + 16, 0x8100);
	nftdp_wr16(f + 18, 200);
	nftdp_wr16(f + 20, 0x0800);
	assert_true(nftdp_dp_parse_l2(f, 60, &l2));
	assert_int_equal(l2.nh_off, 18);
	assert_int_equal(l2.proto, 0x8100);
	assert_int_equal(l2.vid, 7);
	assert_int_equal(l2.n_vlan, 2);
	assert_int_equal(l2.ip_off, 22);
	assert_int_equal(l2.ip_proto, 0x0800);
	assert_false(nftdp_dp_parse_l2(f, 21, &l2));
}

static void test_ip_rcv(void **state)
{
	uint8_t f[128], udp[8] = {0x13, 0x88, 0, 7, 0, 8, 0, 0};
	uint32_t len = mk_ip4(f, IPPROTO_UDP, udp, 8, 64), ip_len = 0;

	(void)state;
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, len - 14, &ip_len), NFTDP_DP_DROP_MAX);
	assert_int_equal(ip_len, 28);
	/* Ethernet padding: trimmed to the total length */
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 46, &ip_len), NFTDP_DP_DROP_MAX);
	assert_int_equal(ip_len, 28);
	/* truncated: total length past the frame; header cut short */
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 27, &ip_len), NFTDP_DP_DROP_IP_LEN);
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 19, &ip_len), NFTDP_DP_DROP_IP_HDR);
	/* bad checksum */
	f[14 + 10] ^= 0xff;
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 28, &ip_len), NFTDP_DP_DROP_IP_CSUM);
	f[14 + 10] ^= 0xff;
	/* ihl 4, version 5 */
	f[14] = 0x44;
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 28, &ip_len), NFTDP_DP_DROP_IP_HDR);
	f[14] = 0x55;
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 28, &ip_len), NFTDP_DP_DROP_IP_HDR);
	/* ihl 15 with a 28-byte packet: header past the end */
	f[14] = 0x4f;
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 28, &ip_len), NFTDP_DP_DROP_IP_HDR);
}

/* ip_rcv_core's checks as the kernel orders them, for the common-case-first
 * nftdp_dp_ip_rcv_hw to agree with */
static enum nftdp_dp_drop ip_rcv_ref(const uint8_t *d, uint32_t avail, uint32_t *ip_len,
				     bool csum_good)
{
	uint32_t ihl, tot;

	if (avail < 20 || (d[0] >> 4) != 4 || (d[0] & 0xf) < 5)
		return NFTDP_DP_DROP_IP_HDR;
	ihl = (d[0] & 0xfu) * 4;
	if (avail < ihl)
		return NFTDP_DP_DROP_IP_HDR;
	if (!csum_good && nftdp_ip_fast_csum(d, ihl) != 0)
		return NFTDP_DP_DROP_IP_CSUM;
	tot = (uint32_t)d[2] << 8 | d[3];
	if (avail < tot || tot < ihl)
		return NFTDP_DP_DROP_IP_LEN;
	*ip_len = tot;
	return NFTDP_DP_DROP_MAX;
}

/* every first byte, total lengths around the header's and the frame's,
 * frames cut at each length, a right and a wrong checksum: the same
 * verdict and length as the reference */
static void test_ip_rcv_ref(void **state)
{
	static const uint16_t tots[] = {0, 19, 20, 21, 24, 28, 40, 59, 60, 61, 0xffff};
	uint8_t h[64];

	(void)state;
	for (unsigned int b = 0; b < 256; b++)
		for (unsigned int t = 0; t < sizeof(tots) / sizeof(tots[0]); t++)
			for (unsigned int bad = 0; bad < 2; bad++) {
				uint16_t c;

				memset(h, 0, sizeof(h));
				h[0] = (uint8_t)b;
				h[2] = (uint8_t)(tots[t] >> 8);
				h[3] = (uint8_t)tots[t];
				h[8] = 64;
				h[9] = IPPROTO_UDP;
				if ((b & 0xf) >= 5) {
					c = nftdp_ip_fast_csum(h, (b & 0xfu) * 4);
					memcpy(h + 10, &c, 2);
				}
				h[10] ^= (uint8_t)bad;
				for (uint32_t avail = 0; avail <= sizeof(h); avail++)
					for (unsigned int hw = 0; hw < 2; hw++) {
						uint32_t l1 = 7, l2 = 7;
						enum nftdp_dp_drop w1 =
						    nftdp_dp_ip_rcv_hw(h, avail, &l1, hw);
						enum nftdp_dp_drop w2 =
						    ip_rcv_ref(h, avail, &l2, hw);

						assert_int_equal(w1, w2);
						assert_int_equal(l1, l2);
					}
			}
}

/* the 20-byte sum agrees with ip_fast_csum on every header: random ones,
 * half of them given a right checksum, and the carry-heavy corners */
static void test_ip_csum20(void **state)
{
	static const uint8_t fills[] = {0x00, 0xff, 0x80, 0x7f, 0xfe, 0x01};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t h[20];
	unsigned int good = 0;

	(void)state;
	for (unsigned int f = 0; f < sizeof(fills); f++) {
		memset(h, fills[f], sizeof(h));
		assert_int_equal(nftdp_dp_ip_csum20_ok(h), nftdp_ip_fast_csum(h, 20) == 0);
		for (unsigned int k = 0; k < 20; k++) {
			h[k] ^= 0x01;
			assert_int_equal(nftdp_dp_ip_csum20_ok(h), nftdp_ip_fast_csum(h, 20) == 0);
			h[k] ^= 0x01;
		}
	}
	for (unsigned int r = 0; r < 200000; r++) {
		uint16_t c;

		for (unsigned int k = 0; k < 20; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* runs of 0xff and 0x00: the folds' carries */
			h[k] = (x & 0x300) == 0 ? 0xff : (x & 0x300) == 0x100 ? 0 : (uint8_t)x;
		}
		if (r & 1) {
			memset(h + 10, 0, 2);
			c = nftdp_ip_fast_csum(h, 20);
			memcpy(h + 10, &c, 2);
		}
		good += nftdp_dp_ip_csum20_ok(h);
		assert_int_equal(nftdp_dp_ip_csum20_ok(h), nftdp_ip_fast_csum(h, 20) == 0);
	}
	assert_true(good >= 100000);
}

/* a port's RTE_MBUF_F_RX_IP_CKSUM_GOOD spares the sum, nothing else */
static void test_ip_rcv_hw(void **state)
{
	uint8_t f[128], udp[8] = {0x13, 0x88, 0, 7, 0, 8, 0, 0};
	uint32_t len = mk_ip4(f, IPPROTO_UDP, udp, 8, 64), ip_len = 0;

	(void)state;
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, len - 14, &ip_len, true), NFTDP_DP_DROP_MAX);
	assert_int_equal(ip_len, 28);
	f[14 + 10] ^= 0xff;
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 28, &ip_len, false), NFTDP_DP_DROP_IP_CSUM);
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 28, &ip_len, true), NFTDP_DP_DROP_MAX);
	/* the header and length checks stay */
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 27, &ip_len, true), NFTDP_DP_DROP_IP_LEN);
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 19, &ip_len, true), NFTDP_DP_DROP_IP_HDR);
	f[14] = 0x44;
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 28, &ip_len, true), NFTDP_DP_DROP_IP_HDR);
	f[14] = 0x4f;
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 28, &ip_len, true), NFTDP_DP_DROP_IP_HDR);
	/* ihl 6, the sum over 24 bytes: options the 20-byte sum does not take */
	f[14] = 0x46;
	memset(f + 14 + 10, 0, 2);
	{
		uint16_t c = nftdp_ip_fast_csum(f + 14, 24);

		memcpy(f + 14 + 10, &c, 2);
	}
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 28, &ip_len, false), NFTDP_DP_DROP_MAX);
	f[14 + 21] ^= 0x10;
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 28, &ip_len, false), NFTDP_DP_DROP_IP_CSUM);
	assert_int_equal(nftdp_dp_ip_rcv_hw(f + 14, 23, &ip_len, false), NFTDP_DP_DROP_IP_HDR);
}

static void test_ip6_rcv(void **state)
{
	uint8_t f[256];
	uint32_t len = mk_ip6_udp(f, 4), ip_len = 0;

	(void)state;
	assert_int_equal(nftdp_dp_ip6_rcv(f + 14, len - 14 + 6, &ip_len), NFTDP_DP_DROP_MAX);
	assert_int_equal(ip_len, 52);
	assert_int_equal(nftdp_dp_ip6_rcv(f + 14, 39, &ip_len), NFTDP_DP_DROP_IP6_HDR);
	assert_int_equal(nftdp_dp_ip6_rcv(f + 14, 51, &ip_len), NFTDP_DP_DROP_IP6_LEN);
	f[14 + 8] = 0xff; /* multicast source */
	assert_int_equal(nftdp_dp_ip6_rcv(f + 14, 52, &ip_len), NFTDP_DP_DROP_IP6_ADDR);
	f[14 + 8] = 0x20;
	memset(f + 14 + 24, 0, 16);
	f[14 + 39] = 1; /* ::1 destination */
	assert_int_equal(nftdp_dp_ip6_rcv(f + 14, 52, &ip_len), NFTDP_DP_DROP_IP6_ADDR);
}

/* ip6_rcv_core's address checks as the kernel writes them, byte by byte:
 * the reference for nftdp_dp_ip6_rcv_core's word tests */
static bool ip6_addr_bad_ref(const uint8_t *d)
{
	static const uint8_t lo[16] = {[15] = 1};

	return d[8] == 0xff || memcmp(d + 8, lo, 16) == 0 || memcmp(d + 24, lo, 16) == 0 ||
	       (d[24] == 0xff && ((d[25] & 0xf) == 0 || (d[25] & 0xf) == 1));
}

static void test_ip6_rcv_addrs(void **state)
{
	/* the edges: each byte of ::1 off by one bit, multicast scopes 0-15,
	 * the first byte 0xfe/0xff either side */
	uint64_t x = 0x2545f4914f6cdd1dull;
	uint8_t f[128];
	uint32_t len = mk_ip6_udp(f, 4), ip_len;
	unsigned int bad = 0;

	(void)state;
	for (unsigned int it = 0; it < 20000; it++) {
		uint8_t *a = f + 14 + (it & 1 ? 24 : 8), *o = f + 14 + (it & 1 ? 8 : 24);
		enum nftdp_dp_drop why;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		memset(o, 0, 16);
		o[0] = 0x20;
		o[15] = 2;
		switch (it % 6) {
		case 0: /* ::1 with one bit flipped, or not */
		case 1:
			memset(a, 0, 16);
			a[15] = 1;
			if (x >> 63)
				a[(x >> 8) % 16] ^= (uint8_t)(1u << ((x >> 16) % 8));
			break;
		case 2: /* multicast, every scope */
		case 3:
			memset(a, 0, 16);
			a[0] = (x >> 63) ? 0xff : 0xfe;
			a[1] = (uint8_t)(x >> 24);
			a[15] = (uint8_t)x;
			break;
		default: /* random */
			for (unsigned int i = 0; i < 16; i++)
				a[i] = (uint8_t)(x >> (8 * (i % 8)));
			break;
		}
		why = nftdp_dp_ip6_rcv_core(f + 14, len - 14, &ip_len);
		assert_int_equal(why == NFTDP_DP_DROP_IP6_ADDR, ip6_addr_bad_ref(f + 14));
		assert_int_equal(nftdp_dp_ip6_rcv(f + 14, len - 14, &ip_len), why);
		bad += why == NFTDP_DP_DROP_IP6_ADDR;
	}
	/* both outcomes were seen, many times */
	assert_true(bad > 2000 && bad < 18000);
}

static void test_forward(void **state)
{
	uint8_t f[128], udp[8] = {0x13, 0x88, 0, 7, 0, 8, 0, 0};
	uint32_t ip_len;

	(void)state;
	mk_ip4(f, IPPROTO_UDP, udp, 8, 64);
	assert_int_equal(nftdp_dp_ip_forward(f + 14, 28), NFTDP_DP_DROP_MAX);
	assert_int_equal(f[14 + 8], 63);
	/* the incremental update leaves a header that still checks */
	assert_int_equal(nftdp_dp_ip_rcv(f + 14, 28, &ip_len), NFTDP_DP_DROP_MAX);
	mk_ip4(f, IPPROTO_UDP, udp, 8, 1);
	assert_int_equal(nftdp_dp_ip_forward(f + 14, 28), NFTDP_DP_DROP_TTL);
	assert_int_equal(f[14 + 8], 1);
	mk_ip4(f, IPPROTO_UDP, udp, 8, 64);
	f[14 + 12] = 127; /* loopback source */
	assert_int_equal(nftdp_dp_ip_forward(f + 14, 28), NFTDP_DP_DROP_MARTIAN);
	f[14 + 12] = 10;
	f[14 + 16] = 224; /* multicast destination */
	assert_int_equal(nftdp_dp_ip_forward(f + 14, 28), NFTDP_DP_DROP_NOT_FORWARDED);
	mk_ip6_udp(f, 0);
	assert_int_equal(nftdp_dp_ip6_forward(f + 14, 48), NFTDP_DP_DROP_MAX);
	assert_int_equal(f[14 + 7], 63);
	f[14 + 7] = 1;
	assert_int_equal(nftdp_dp_ip6_forward(f + 14, 48), NFTDP_DP_DROP_TTL);
}

/* IPv6 + a hop-by-hop header holding opts (opts_len + 2 a multiple of 8)
 * + UDP with 4 bytes of payload and a valid checksum */
static uint32_t mk_ip6_hbh(uint8_t *f, const uint8_t *opts, uint32_t opts_len)
{
	uint8_t t[128];
	uint32_t len = mk_ip6_udp(t, 4), hl = opts_len + 2;

	memcpy(f, t, 14 + 40);
	f[14 + 40] = IPPROTO_UDP;
	f[14 + 41] = (uint8_t)(hl / 8 - 1);
	memcpy(f + 14 + 42, opts, opts_len);
	memcpy(f + 14 + 40 + hl, t + 14 + 40, len - 14 - 40);
	f[14 + 6] = 0;
	nftdp_wr16(f + 14 + 4, (uint16_t)(nftdp_rd16(f + 14 + 4) + hl));
	return len + hl;
}

struct hbh_row {
	uint8_t opts[22];
	uint8_t len;
	enum nftdp_dp_drop why;
	uint8_t icmp_type, icmp_code;
	uint32_t info;
};

/* ipv6_parse_hopopts as the kernel runs it (differential 160, 161) */
static void test_ip6_hbh(void **state)
{
	static const struct hbh_row rows[] = {
	    {{1, 4, 0, 0, 0, 0}, 6, NFTDP_DP_DROP_MAX, 0, 0, 0},
	    {{5, 2, 0, 0, 1, 0}, 6, NFTDP_DP_DROP_MAX, 0, 0, 0},
	    {{0x1e, 0, 1, 2, 0, 0}, 6, NFTDP_DP_DROP_MAX, 0, 0, 0},
	    {{1, 4, 0, 1, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH, 0, 0, 0},
	    {{0, 0, 0, 0, 0, 0, 1, 0, 1, 4, 0, 0, 0, 0}, 14, NFTDP_DP_DROP_IP6_HBH, 0, 0, 0},
	    {{0x1e, 0,	  0x1e, 0,    0x1e, 0,	  0x1e, 0, 0x1e, 0, 0x1e,
	      0,    0x1e, 0,	0x1e, 0,    0x1e, 0,	1, 2,	 0, 0},
	     22,
	     NFTDP_DP_DROP_IP6_HBH,
	     0,
	     0,
	     0},
	    {{0x1e, 0,	  0x1e, 0,    0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e,
	      0,    0x1e, 0,	0x1e, 0,    1, 4,    0, 0,    0, 0},
	     22,
	     NFTDP_DP_DROP_MAX,
	     0,
	     0,
	     0},
	    {{5, 4, 0, 0, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 0, 0, 0},
	    {{0x1e, 5, 0, 0, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH, 0, 0, 0},
	    {{0x5e, 4, 0, 0, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 0, 0, 0},
	    {{0x9e, 4, 0, 0, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 4, 2, 42},
	    {{0xde, 4, 0, 0, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 4, 2, 42},
	    {{1, 0, 0x9e, 2, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 4, 2, 44},
	    {{0xc2, 4, 0, 1, 0x11, 0x70}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 4, 0, 42},
	    {{0xc2, 4, 0, 0, 0x11, 0x70}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 4, 0, 44},
	    {{0, 0xc2, 4, 0, 1, 0x11, 0x70, 0, 0, 0, 0, 0, 0, 0},
	     14,
	     NFTDP_DP_DROP_IP6_HBH_OPT,
	     0,
	     0,
	     0},
	    {{0x31, 2, 0, 0, 0, 0}, 6, NFTDP_DP_DROP_IP6_HBH_OPT, 0, 0, 0}, /* IOAM at 42 */
	    {{1, 0, 0x31, 2, 0, 0}, 6, NFTDP_DP_DROP_MAX, 0, 0, 0},	    /* at 44: ignored */
	};
	uint8_t f[256];

	(void)state;
	for (unsigned int i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct hbh_row *r = &rows[i];
		struct nftdp_dp_icmp icmp = {.type = 99};
		uint32_t len = mk_ip6_hbh(f, r->opts, r->len), ip_len = 0;

		assert_int_equal(nftdp_dp_ip6_rcv_icmp(f + 14, len - 14, &ip_len, &icmp), r->why);
		assert_int_equal(icmp.type, r->icmp_type);
		if (r->icmp_type) {
			assert_int_equal(icmp.code, r->icmp_code);
			assert_int_equal(icmp.info, r->info);
			assert_int_equal(ip_len, len - 14);
		}
	}
	/* class 11 towards a multicast destination: dropped, no reply */
	{
		static const uint8_t o[6] = {0xde, 4, 0, 0, 0, 0};
		struct nftdp_dp_icmp icmp;
		uint32_t len = mk_ip6_hbh(f, o, 6), ip_len;

		f[14 + 24] = 0xff;
		f[14 + 25] = 0x0e;
		assert_int_equal(nftdp_dp_ip6_rcv_icmp(f + 14, len - 14, &ip_len, &icmp),
				 NFTDP_DP_DROP_IP6_HBH_OPT);
		assert_int_equal(icmp.type, 0);
		/* class 10: answered even so (icmp6_send's opt_unrec) */
		f[14 + 42] = 0x9e;
		assert_int_equal(nftdp_dp_ip6_rcv_icmp(f + 14, len - 14, &ip_len, &icmp),
				 NFTDP_DP_DROP_IP6_HBH_OPT);
		assert_int_equal(icmp.type, 4);
		{
			uint8_t out[NFTDP_DP_REPLY_MAX];

			assert_int_equal(
			    nftdp_dp_icmp_build(f, 14, ip_len, &icmp, 0, NULL, out, sizeof(out)),
			    14 + 48 + ip_len);
		}
	}
	/* the header past the end of the packet (8-byte payload, 48 claimed),
	 * and past the payload length with bytes behind it in the frame */
	{
		static const uint8_t o[6] = {1, 4, 0, 0, 0, 0};
		uint32_t len = mk_ip6_hbh(f, o, 6), ip_len;

		f[14 + 41] = 5;
		nftdp_wr16(f + 14 + 4, 8);
		assert_int_equal(nftdp_dp_ip6_rcv(f + 14, 48, &ip_len), NFTDP_DP_DROP_IP6_HBH);
		nftdp_wr16(f + 14 + 4, 6);
		f[14 + 41] = 0;
		assert_int_equal(nftdp_dp_ip6_rcv(f + 14, len - 14, &ip_len),
				 NFTDP_DP_DROP_IP6_HBH);
		/* and the header bytes alone: under pskb_may_pull(48) */
		assert_int_equal(nftdp_dp_ip6_rcv(f + 14, 46, &ip_len), NFTDP_DP_DROP_IP6_HBH);
	}
	/* payload length 0 with a hop-by-hop header and no jumbo option: the
	 * kernel neither checks nor trims the length */
	{
		static const uint8_t o[6] = {1, 4, 0, 0, 0, 0};
		uint32_t len = mk_ip6_hbh(f, o, 6), ip_len;

		nftdp_wr16(f + 14 + 4, 0);
		assert_int_equal(nftdp_dp_ip6_rcv(f + 14, len - 14 + 4, &ip_len),
				 NFTDP_DP_DROP_MAX);
		assert_int_equal(ip_len, len - 14 + 4);
	}
}

/* the parameter problem: pointer after the checksum, checksum still valid */
static void test_icmp_build(void **state)
{
	static const uint8_t o[6] = {0x9e, 4, 0, 0, 0, 0};
	struct nftdp_dp_icmp icmp;
	uint8_t f[256], out[NFTDP_DP_REPLY_MAX], ph[8] = {0};
	uint32_t len = mk_ip6_hbh(f, o, 6), ip_len, n, s, plen;
	uint8_t udp[8] = {0x13, 0x88, 0, 7, 0, 8, 0, 0};

	(void)state;
	assert_int_equal(nftdp_dp_ip6_rcv_icmp(f + 14, len - 14, &ip_len, &icmp),
			 NFTDP_DP_DROP_IP6_HBH_OPT);
	n = nftdp_dp_icmp_build(f, 14, ip_len, &icmp, 0, NULL, out, sizeof(out));
	assert_int_equal(n, 14 + 48 + ip_len);
	assert_int_equal(out[14 + 40], 4);
	assert_int_equal(out[14 + 41], 2);
	assert_int_equal(nftdp_rd32(out + 14 + 44), 42);
	plen = nftdp_rd16(out + 14 + 4);
	ph[2] = (uint8_t)(plen >> 8);
	ph[3] = (uint8_t)plen;
	ph[7] = IPPROTO_ICMPV6;
	s = nftdp_csum_partial(out + 14 + 8, 32, 0);
	s = nftdp_csum_partial(ph, 8, s);
	s = nftdp_csum_partial(out + 14 + 40, plen, s);
	assert_int_equal(nftdp_csum_fold(s), 0);
	/* IPv4: the pointer in the first byte */
	icmp = (struct nftdp_dp_icmp){.type = 12, .code = 0, .info = 21u << 24};
	len = mk_ip4(f, IPPROTO_UDP, udp, 8, 64);
	n = nftdp_dp_icmp_build(f, 14, len - 14, &icmp, 0, NULL, out, sizeof(out));
	assert_int_equal(n, 14 + 28 + len - 14);
	assert_int_equal(out[14 + 20], 12);
	assert_int_equal(out[14 + 24], 21);
	assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(out + 14 + 20, n - 34, 0)), 0);
	/* icmp_send checks no transport checksum: a bad one still gets it */
	f[14 + 20 + 6] ^= 0x55;
	assert_int_equal(nftdp_dp_icmp_build(f, 14, len - 14, &icmp, 0, NULL, out, sizeof(out)), n);
	icmp.type = 0;
	assert_int_equal(nftdp_dp_icmp_build(f, 14, len - 14, &icmp, 0, NULL, out, sizeof(out)), 0);
}

/* IPv4 with the option bytes o (a multiple of 4) */
static uint32_t mk_ip4_opts(uint8_t *f, const uint8_t *o, uint32_t olen)
{
	uint8_t udp[8] = {0x13, 0x88, 0, 7, 0, 8, 0, 0}, t[128];
	uint32_t len = mk_ip4(t, IPPROTO_UDP, udp, 8, 64);
	uint8_t *ip = f + 14;

	memcpy(f, t, 14 + 20);
	memcpy(ip + 20, o, olen);
	memcpy(ip + 20 + olen, t + 14 + 20, len - 14 - 20);
	ip[0] = (uint8_t)(0x40 | (20 + olen) / 4);
	nftdp_wr16(ip + 2, (uint16_t)(len - 14 + olen));
	nftdp_wr16(ip + 10, 0);
	nftdp_st16(ip + 10, nftdp_csum_fold(nftdp_csum_partial(ip, 20 + olen, 0)));
	return len + olen;
}

/* --router before ip_forward (differential 163, 164, 165) */
static void test_route_input(void **state)
{
	static const struct {
		uint8_t o[16], len;
		enum nftdp_dp_drop why;
		uint8_t ptr;
	} rows[] = {
	    {{1, 1, 1, 0}, 4, NFTDP_DP_DROP_MAX, 0},
	    {{131, 7, 4, 10, 2, 0, 9, 0}, 8, NFTDP_DP_DROP_IP_SRR, 0},
	    {{137, 7, 4, 10, 2, 0, 9, 0}, 8, NFTDP_DP_DROP_IP_SRR, 0},
	    {{131, 7, 8, 10, 2, 0, 9, 0}, 8, NFTDP_DP_DROP_IP_SRR, 0},
	    {{1, 0x88, 1, 0}, 4, NFTDP_DP_DROP_IP_OPTIONS, 21},
	    {{7, 0xff, 4, 0}, 4, NFTDP_DP_DROP_IP_OPTIONS, 20},
	    {{7, 7, 1, 0, 0, 0, 0, 0}, 8, NFTDP_DP_DROP_IP_OPTIONS, 22},
	    {{131, 2, 4, 0}, 4, NFTDP_DP_DROP_IP_OPTIONS, 21},
	    {{131, 7, 4, 10, 2, 0, 9, 131, 7, 4, 10, 2, 0, 9, 0, 0},
	     16,
	     NFTDP_DP_DROP_IP_OPTIONS,
	     27},
	    {{68, 4, 5, 0}, 4, NFTDP_DP_DROP_MAX, 0},
	    {{68, 4, 9, 0xf0}, 4, NFTDP_DP_DROP_IP_OPTIONS, 23},
	    {{148, 2, 0, 0}, 4, NFTDP_DP_DROP_IP_OPTIONS, 21},
	    {{7, 3, 4, 0}, 4, NFTDP_DP_DROP_MAX, 0},
	    {{7, 7, 4, 0, 0, 0, 0, 7, 3, 4, 0, 0}, 12, NFTDP_DP_DROP_IP_OPTIONS, 27}, /* two RR */
	    {{0, 7, 0xff, 0}, 4, NFTDP_DP_DROP_MAX, 0}, /* after END nothing counts */
	};
	struct nftdp_dp_own own = {0};
	struct nftdp_dp_icmp icmp;
	uint8_t f[256];

	(void)state;
	for (unsigned int i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t len = mk_ip4_opts(f, rows[i].o, rows[i].len);

		assert_int_equal(nftdp_dp_ip_route_input(f + 14, len - 14, true, true, &own, &icmp),
				 rows[i].why);
		assert_int_equal(icmp.type, rows[i].ptr ? 12 : 0);
		if (rows[i].ptr)
			assert_int_equal(icmp.info, (uint32_t)rows[i].ptr << 24);
	}
	/* own source: IPv4 only (the kernel forwards IPv6 from its own address) */
	{
		uint8_t udp[8] = {0x13, 0x88, 0, 7, 0, 8, 0, 0};
		uint32_t len = mk_ip4(f, IPPROTO_UDP, udp, 8, 64);

		assert_true(nftdp_dp_own_add(&own, true, f + 14 + 12));
		assert_int_equal(nftdp_dp_ip_route_input(f + 14, len - 14, true, true, &own, &icmp),
				 NFTDP_DP_DROP_OWN_SRC);
		assert_int_equal(nftdp_dp_ip_route_input(f + 14, len - 14, true, true, NULL, &icmp),
				 NFTDP_DP_DROP_MAX);
		/* an L2 broadcast or multicast frame */
		assert_int_equal(
		    nftdp_dp_ip_route_input(f + 14, len - 14, true, false, NULL, &icmp),
		    NFTDP_DP_DROP_L2_NOT_HOST);
		f[14 + 12] = 127;
		assert_int_equal(
		    nftdp_dp_ip_route_input(f + 14, len - 14, true, false, &own, &icmp),
		    NFTDP_DP_DROP_MARTIAN);
		len = mk_ip6_udp(f, 0);
		assert_true(nftdp_dp_own_add(&own, false, f + 14 + 8));
		assert_int_equal(
		    nftdp_dp_ip_route_input(f + 14, len - 14, false, true, &own, &icmp),
		    NFTDP_DP_DROP_MAX);
		assert_int_equal(
		    nftdp_dp_ip_route_input(f + 14, len - 14, false, false, &own, &icmp),
		    NFTDP_DP_DROP_L2_NOT_HOST);
		/* ip6_forward: the unspecified source, whatever the hop limit */
		memset(f + 14 + 8, 0, 16);
		assert_int_equal(nftdp_dp_ip6_forward(f + 14, 48), NFTDP_DP_DROP_IP6_SRC_ANY);
		f[14 + 7] = 1;
		assert_int_equal(nftdp_dp_ip6_forward(f + 14, 48), NFTDP_DP_DROP_IP6_SRC_ANY);
		/* a link-local source gets no time exceeded either */
		f[14 + 8] = 0xfe;
		f[14 + 9] = 0x80;
		f[14 + 23] = 1;
		assert_int_equal(nftdp_dp_ip6_forward(f + 14, 48), NFTDP_DP_DROP_MARTIAN);
	}
	/* ip_forward_options: record route filled, overflow counted, the
	 * header checksum still valid */
	{
		static const uint8_t rr[12] = {7, 11, 8, 10, 9, 9, 9, 0, 0, 0, 0, 0};
		static const uint8_t ts[4] = {68, 4, 9, 0x10};
		static const uint8_t full[8] = {7, 7, 8, 10, 9, 9, 9, 0};
		const uint8_t a[4] = {10, 2, 255, 254};
		uint32_t len = mk_ip4_opts(f, rr, 12);

		nftdp_dp_ip_forward_options(f + 14, a);
		assert_int_equal(f[14 + 22], 12);
		assert_memory_equal(f + 14 + 27, a, 4);
		assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(f + 14, 32, 0)), 0);
		assert_int_equal(nftdp_dp_ip_rcv(f + 14, len - 14, &len), NFTDP_DP_DROP_MAX);
		mk_ip4_opts(f, ts, 4);
		nftdp_dp_ip_forward_options(f + 14, a);
		assert_int_equal(f[14 + 23], 0x20);
		assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(f + 14, 24, 0)), 0);
		mk_ip4_opts(f, full, 8);
		nftdp_dp_ip_forward_options(f + 14, a);
		assert_int_equal(f[14 + 22], 8);
		assert_memory_equal(f + 14 + 20, full, 8);
	}
	for (unsigned int i = 0; i < NFTDP_DP_OWN_MAX; i++)
		nftdp_dp_own_add(&own, true, f);
	assert_false(nftdp_dp_own_add(&own, true, f));
}

/* random headers of every length, each in a buffer of exactly its size
 * (ASan catches a read past it): the receive checks, the options walk and
 * the parameter problem builder stay inside the packet */
static void test_rcv_random(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct nftdp_dp_own own = {.n4 = 1, .n6 = 1};
	uint8_t out[NFTDP_DP_REPLY_MAX];

	(void)state;
	for (unsigned int it = 0; it < 20000; it++) {
		uint32_t len = 15 + (uint32_t)((x >> 40) % 120), ip_len = 0;
		uint8_t *f = malloc(len);
		struct nftdp_dp_icmp icmp;
		bool v4 = it & 1;

		assert_non_null(f);
		for (uint32_t i = 0; i < len; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			f[i] = (uint8_t)(x >> 56);
		}
		f[14] = (uint8_t)((v4 ? 0x40 : 0x60) | (f[14] & 0xf));
		if (!v4 && (it & 2) && len >= 14 + 40) { /* hop-by-hop, length near the end */
			f[14 + 6] = 0;
			nftdp_wr16(f + 14 + 4, (uint16_t)(len - 14 - 40 + (it & 4 ? 8 : 0)));
		}
		if (v4) {
			if (nftdp_dp_ip_rcv(f + 14, len - 14, &ip_len) == NFTDP_DP_DROP_MAX ||
			    (len >= 34 && (f[14] & 0xf) >= 5 && (f[14] & 0xf) * 4u <= len - 14)) {
				if (ip_len == 0)
					ip_len = len - 14;
				if (nftdp_dp_ip_route_input(f + 14, ip_len, true, true, &own,
							    &icmp) == NFTDP_DP_DROP_MAX)
					nftdp_dp_ip_forward_options(f + 14, own.addr4[0]);
				nftdp_dp_icmp_build(f, 14, ip_len, &icmp, 0, NULL, out,
						    sizeof(out));
			}
		} else if (nftdp_dp_ip6_rcv_icmp(f + 14, len - 14, &ip_len, &icmp) !=
			   NFTDP_DP_DROP_MAX) {
			if (icmp.type)
				nftdp_dp_icmp_build(f, 14, ip_len, &icmp, 0, NULL, out,
						    sizeof(out));
		}
		free(f);
	}
}

/* the one's-complement sum over a valid header or segment is 0 */
static void assert_ip4_ok(const uint8_t *ip)
{
	assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(ip, 20, 0)), 0);
}

static void test_reject_tcp(void **state)
{
	uint8_t f[128], out[NFTDP_DP_REPLY_MAX], tcp[20] = {0};
	uint32_t len, n, s;
	uint8_t ph[4] = {0, IPPROTO_TCP, 0, 20};

	(void)state;
	nftdp_wr16(tcp, 40000);
	nftdp_wr16(tcp + 2, 23);
	tcp[4] = 0;
	tcp[7] = 100; /* seq 100 */
	tcp[12] = 5 << 4;
	tcp[13] = 0x02; /* SYN */
	len = mk_ip4(f, IPPROTO_TCP, tcp, 20, 64);
	n = nftdp_dp_reject_build(f, 14, len - 14, true, 0, 0, 1, NULL, out, sizeof(out));
	assert_int_equal(n, 54);
	assert_memory_equal(out, f + 6, 6); /* MACs swapped */
	assert_memory_equal(out + 6, f, 6);
	assert_ip4_ok(out + 14);
	assert_int_equal(out[14 + 8], 64);
	assert_int_equal(nftdp_rd16(out + 14 + 6), 0x4000); /* DF */
	assert_memory_equal(out + 14 + 12, f + 14 + 16, 4);
	assert_int_equal(nftdp_rd16(out + 34), 23);
	assert_int_equal(nftdp_rd16(out + 36), 40000);
	assert_int_equal(nftdp_rd32(out + 34 + 8), 101); /* ack = seq + SYN */
	assert_int_equal(out[34 + 13], 0x14);		 /* RST|ACK */
	s = nftdp_csum_partial(out + 14 + 12, 8, 0);
	s = nftdp_csum_partial(ph, 4, s);
	assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(out + 34, 20, s)), 0);
	/* answering an ACK: a bare RST with their ack as seq */
	tcp[13] = 0x10;
	tcp[11] = 77;
	len = mk_ip4(f, IPPROTO_TCP, tcp, 20, 64);
	n = nftdp_dp_reject_build(f, 14, len - 14, true, 0, 0, 1, NULL, out, sizeof(out));
	assert_int_equal(n, 54);
	assert_int_equal(nftdp_rd32(out + 34 + 4), 77);
	assert_int_equal(out[34 + 13], 0x04);
	/* never an RST for an RST, nor for a bad checksum, nor a short header */
	tcp[13] = 0x04;
	len = mk_ip4(f, IPPROTO_TCP, tcp, 20, 64);
	assert_int_equal(
	    nftdp_dp_reject_build(f, 14, len - 14, true, 0, 0, 1, NULL, out, sizeof(out)), 0);
	tcp[13] = 0x02;
	len = mk_ip4(f, IPPROTO_TCP, tcp, 20, 64);
	f[34 + 16] ^= 1;
	assert_int_equal(
	    nftdp_dp_reject_build(f, 14, len - 14, true, 0, 0, 1, NULL, out, sizeof(out)), 0);
	len = mk_ip4(f, IPPROTO_TCP, tcp, 12, 64);
	assert_int_equal(
	    nftdp_dp_reject_build(f, 14, len - 14, true, 0, 0, 1, NULL, out, sizeof(out)), 0);
}

/* synproxy's SYN-ACK frame: Ethernet swapped around the VM's IP and TCP
 * headers; nothing for a non-TCP packet, a fragment or a short header */
static void test_synproxy_frame(void **state)
{
	uint8_t f[128], out[NFTDP_DP_REPLY_MAX], tcp[20] = {0};
	/* MSS 1460 announced, but the SYN carries no MSS option: none back */
	struct nftdp_vm_synproxy_info o = {.mss = 1460, .options = 0x01};
	uint8_t key[32] = {7};
	uint32_t len, n;

	(void)state;
	nftdp_vm_synproxy_set_secret(key);
	nftdp_wr16(tcp, 40000);
	nftdp_wr16(tcp + 2, 80);
	nftdp_wr32(tcp + 4, 500);
	tcp[12] = 5 << 4;
	tcp[13] = 0x02;
	len = mk_ip4(f, IPPROTO_TCP, tcp, 20, 64);
	n = nftdp_dp_synproxy_build(f, 14, len - 14, &o, 9 * 60000, out, sizeof(out));
	assert_int_equal(n, 14 + 20 + 20);
	assert_memory_equal(out, f + 6, 6);
	assert_memory_equal(out + 6, f, 6);
	assert_int_equal(nftdp_rd16(out + 12), 0x0800);
	assert_ip4_ok(out + 14);
	assert_memory_equal(out + 14 + 12, f + 14 + 16, 4);
	assert_memory_equal(out + 14 + 16, f + 14 + 12, 4);
	assert_int_equal(nftdp_rd32(out + 34 + 8), 501);
	assert_int_equal(out[34 + 13], 0x12);
	/* too small a buffer, UDP, a fragment, a TCP header cut short */
	assert_int_equal(nftdp_dp_synproxy_build(f, 14, len - 14, &o, 9 * 60000, out, 100), 0);
	len = mk_ip4(f, IPPROTO_UDP, tcp, 20, 64);
	assert_int_equal(nftdp_dp_synproxy_build(f, 14, len - 14, &o, 9 * 60000, out, sizeof(out)),
			 0);
	len = mk_ip4(f, IPPROTO_TCP, tcp, 20, 64);
	nftdp_wr16(f + 14 + 6, 0x0001);
	assert_int_equal(nftdp_dp_synproxy_build(f, 14, len - 14, &o, 9 * 60000, out, sizeof(out)),
			 0);
	len = mk_ip4(f, IPPROTO_TCP, tcp, 12, 64);
	assert_int_equal(nftdp_dp_synproxy_build(f, 14, len - 14, &o, 9 * 60000, out, sizeof(out)),
			 0);
}

static void test_reject_icmp(void **state)
{
	uint8_t f[1600], out[NFTDP_DP_REPLY_MAX], udp[1400] = {0};
	uint32_t len, n;

	(void)state;
	nftdp_wr16(udp, 5000);
	nftdp_wr16(udp + 2, 7);
	nftdp_wr16(udp + 4, 8 + 4);
	len = mk_ip4(f, IPPROTO_UDP, udp, 12, 64);
	n = nftdp_dp_reject_build(f, 14, len - 14, false, 3, 3, 9, NULL, out, sizeof(out));
	assert_int_equal(n, 14 + 28 + 32); /* the whole 32-byte datagram quoted */
	assert_ip4_ok(out + 14);
	assert_int_equal(out[14 + 1], 0xc0); /* DSCP 48 */
	assert_int_equal(out[14 + 9], IPPROTO_ICMP);
	assert_int_equal(out[34], 3);
	assert_int_equal(out[35], 3);
	assert_memory_equal(out + 42, f + 14, 32);
	assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(out + 34, 8 + 32, 0)), 0);
	/* from the address of the port it leaves by, when it has one */
	{
		static const uint8_t src[4] = {10, 1, 255, 254};

		n = nftdp_dp_reject_build(f, 14, len - 14, false, 3, 3, 9, src, out, sizeof(out));
		assert_int_equal(n, 14 + 28 + 32);
		assert_memory_equal(out + 14 + 12, src, 4);
		assert_memory_equal(out + 14 + 16, f + 14 + 12, 4);
		assert_ip4_ok(out + 14);
	}
	/* a long datagram: as much as fits in 576 bytes */
	nftdp_wr16(udp + 4, 1400);
	len = mk_ip4(f, IPPROTO_UDP, udp, 1400, 64);
	n = nftdp_dp_reject_build(f, 14, len - 14, false, 3, 3, 9, NULL, out, sizeof(out));
	assert_int_equal(n, 14 + 576);
	/* non-first fragment: nothing */
	len = mk_ip4(f, IPPROTO_UDP, udp, 12, 64);
	nftdp_wr16(f + 14 + 6, 0x0010);
	nftdp_wr16(f + 14 + 10, 0);
	nftdp_st16(f + 14 + 10, nftdp_csum_fold(nftdp_csum_partial(f + 14, 20, 0)));
	assert_int_equal(
	    nftdp_dp_reject_build(f, 14, len - 14, false, 3, 3, 9, NULL, out, sizeof(out)), 0);
	/* an ICMP error is never answered with one; an echo request is */
	{
		uint8_t icmp[8] = {3, 1};

		len = mk_ip4(f, IPPROTO_ICMP, icmp, 8, 64);
		assert_int_equal(
		    nftdp_dp_reject_build(f, 14, len - 14, false, 3, 3, 9, NULL, out, sizeof(out)),
		    0);
		icmp[0] = 8;
		icmp[1] = 0;
		len = mk_ip4(f, IPPROTO_ICMP, icmp, 8, 64);
		assert_int_equal(
		    nftdp_dp_reject_build(f, 14, len - 14, false, 3, 3, 9, NULL, out, sizeof(out)),
		    14 + 28 + 28);
	}
	/* IPv6: ICMPv6, as much as fits in 1280 bytes */
	len = mk_ip6_udp(f, 4);
	n = nftdp_dp_reject_build(f, 14, len - 14, false, 1, 4, 0, NULL, out, sizeof(out));
	assert_int_equal(n, 14 + 48 + 52);
	assert_int_equal(out[14 + 6], IPPROTO_ICMPV6);
	assert_int_equal(out[14 + 7], 64);
	assert_int_equal(out[54], 1);
	assert_int_equal(out[55], 4);
	len = mk_ip6_udp(f, 1400);
	n = nftdp_dp_reject_build(f, 14, len - 14, false, 1, 4, 0, NULL, out, sizeof(out));
	assert_int_equal(n, 14 + 1280);
	/* bad UDP checksum: nothing */
	len = mk_ip6_udp(f, 4);
	f[14 + 40 + 6] ^= 1;
	assert_int_equal(
	    nftdp_dp_reject_build(f, 14, len - 14, false, 1, 4, 0, NULL, out, sizeof(out)), 0);
}

/* IPv6, destination options that claim 2048 bytes in an 8-byte payload
 * (issue 11): no reset, no unreachable (reject6_csum_ok: thoff past the
 * end), but ip6_forward's time exceeded quotes it (differential case 183) */
static void test_reply_exthdr_past_end(void **state)
{
	uint8_t f[128], out[NFTDP_DP_REPLY_MAX];
	uint32_t len;

	(void)state;
	for (unsigned int i = 0; i < 2; i++) {
		uint8_t nh = i ? IPPROTO_UDP : IPPROTO_TCP;

		len = mk_ip6_udp(f, 0); /* 8-byte payload */
		f[14 + 6] = 60;
		memcpy(f + 14 + 40, (const uint8_t[8]){nh, 255, 1, 4, 0, 0, 0, 0}, 8);
		assert_int_equal(len, 14 + 48);
		assert_int_equal(
		    nftdp_dp_reject_build(f, 14, len - 14, true, 0, 0, 1, NULL, out, sizeof(out)),
		    0);
		assert_int_equal(
		    nftdp_dp_reject_build(f, 14, len - 14, false, 1, 4, 1, NULL, out, sizeof(out)),
		    0);
		assert_int_equal(
		    nftdp_dp_reject_build(f, 14, len - 14, false, 3, 0, 1, NULL, out, sizeof(out)),
		    14 + 48 + 48);
		assert_memory_equal(out + 14 + 48, f + 14, 48);
	}
	/* a datagram shorter than its IP header (ip_len from a caller) */
	assert_int_equal(nftdp_dp_reject_build(f, 14, 20, false, 3, 0, 1, NULL, out, sizeof(out)),
			 0);
}

/* time exceeded checks no transport checksum (icmp_send); reject does */
static void test_reply_ttl_bad_csum(void **state)
{
	uint8_t f[128], out[NFTDP_DP_REPLY_MAX];
	uint32_t len;

	(void)state;
	len = mk_ip6_udp(f, 4);
	f[14 + 40 + 6] ^= 1;
	assert_int_equal(
	    nftdp_dp_reject_build(f, 14, len - 14, false, 1, 4, 0, NULL, out, sizeof(out)), 0);
	assert_int_equal(
	    nftdp_dp_reject_build(f, 14, len - 14, false, 3, 0, 0, NULL, out, sizeof(out)),
	    14 + 48 + len - 14);
}

/*
 * nftdp_dp_ip_len_clip, as pipeline.c (before ip_rcv) and steer.c use it: the
 * declared length, clipped to the frame; a header too short for the length
 * field gives what there is; nothing else is checked.
 */
static void test_ip_len_clip(void **state)
{
	uint8_t ip[128] = {0};

	(void)state;
	/* IPv4: total length at 2 */
	ip[0] = 0x45;
	nftdp_wr16(ip + 2, 60);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, true), 60); /* padding goes */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 60, true), 60);  /* exact */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 59, true), 59);  /* longer: clipped */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 4, true), 4);	   /* length field, no more */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 3, true), 3);	   /* short of the field */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 0, true), 0);
	nftdp_wr16(ip + 2, 8); /* below the header's 20: kept, ip_rcv drops it */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, true), 8);
	nftdp_wr16(ip + 2, 0);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, true), 0);
	nftdp_wr16(ip + 2, 0xffff);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, true), 100);

	/* IPv6: 40 + payload length at 4 */
	memset(ip, 0, sizeof(ip));
	ip[0] = 0x60;
	nftdp_wr16(ip + 4, 20);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, false), 60);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 60, false), 60);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 59, false), 59);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 6, false), 6);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 5, false), 5); /* short of the field */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 0, false), 0);
	nftdp_wr16(ip + 4, 0); /* a jumbogram's 0: the fixed header only */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, false), 40);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 30, false), 30);
	nftdp_wr16(ip + 4, 0xffff);
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, false), 100);

	/* the bytes decide nothing but the length field: a v4 view of v6 bytes */
	assert_int_equal(nftdp_dp_ip_len_clip(ip, 100, true), 0);
}

/* host.c's token bucket: a burst at once, then the rate, never more */
static void test_host_tb(void **state)
{
	struct nftdp_dp_tb tb;
	unsigned int n = 0;

	(void)state;

	/* 1000 packets/s, bursts of 100, a 1 MHz clock: 1000 cycles a packet */
	nftdp_dp_tb_init(&tb, 1000, 100, 1000000, 5000);
	while (nftdp_dp_tb_take(&tb, 5000))
		n++;
	assert_int_equal(n, 100); /* the burst, then nothing at the same time */
	assert_false(nftdp_dp_tb_take(&tb, 5999));
	assert_true(nftdp_dp_tb_take(&tb, 6000)); /* one packet's worth later */
	assert_false(nftdp_dp_tb_take(&tb, 6000));
	/* a second later: 1000 packets' worth, capped at the burst */
	n = 0;
	while (nftdp_dp_tb_take(&tb, 1006000))
		n++;
	assert_int_equal(n, 100);
	/* over one simulated second at 10 packets offered per ms: the rate */
	n = 0;
	for (uint64_t t = 2006000; t < 3006000; t += 100)
		n += nftdp_dp_tb_take(&tb, t);
	assert_true(n >= 1000 && n <= 1000 + 100);
	/* a clock that goes back gives no credit */
	assert_false(nftdp_dp_tb_take(&tb, 1000));
	/* rate 0: no limit */
	nftdp_dp_tb_init(&tb, 0, 0, 1000000, 0);
	for (unsigned int i = 0; i < 100000; i++)
		assert_true(nftdp_dp_tb_take(&tb, 0));
	/* a rate above the clock: one cycle a packet, not zero (no limit) */
	nftdp_dp_tb_init(&tb, 10000000, 1, 1000000, 0);
	assert_true(nftdp_dp_tb_take(&tb, 0));
	assert_false(nftdp_dp_tb_take(&tb, 0));
}

/* ebtables' arpreply: arp_send's reply frame from the fields the VM left */
static void test_arpreply_build(void **state)
{
	static const uint8_t want[42] = {2,  0, 0, 0, 1, 0x10, 2, 0, 0, 0,    7,  7, 8, 6,
					 0,  1, 8, 0, 6, 4,    0, 2, 2, 0,    0,  0, 7, 7,
					 10, 0, 0, 9, 2, 0,    0, 0, 1, 0x10, 10, 0, 0, 1};
	struct nftdp_vm_pkt_out o;
	uint8_t f[64];

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(nftdp_dp_arpreply_build(&o, f, sizeof(f)), 0);
	o.arpreply = true;
	memcpy(o.arpreply_sha, "\x02\x00\x00\x00\x07\x07", 6);
	memcpy(o.arpreply_tha, "\x02\x00\x00\x00\x01\x10", 6);
	memcpy(o.arpreply_sip, "\x0a\x00\x00\x09", 4);
	memcpy(o.arpreply_tip, "\x0a\x00\x00\x01", 4);
	assert_int_equal(nftdp_dp_arpreply_build(&o, f, 41), 0);
	assert_int_equal(nftdp_dp_arpreply_build(&o, f, sizeof(f)), 42);
	assert_memory_equal(f, want, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reply_exthdr_past_end),
	    cmocka_unit_test(test_reply_ttl_bad_csum),
	    cmocka_unit_test(test_l2),
	    cmocka_unit_test(test_ip_rcv),
	    cmocka_unit_test(test_ip_rcv_ref),
	    cmocka_unit_test(test_ip_csum20),
	    cmocka_unit_test(test_ip_rcv_hw),
	    cmocka_unit_test(test_ip6_rcv),
	    cmocka_unit_test(test_ip6_rcv_addrs),
	    cmocka_unit_test(test_forward),
	    cmocka_unit_test(test_reject_tcp),
	    cmocka_unit_test(test_reject_icmp),
	    cmocka_unit_test(test_synproxy_frame),
	    cmocka_unit_test(test_ip6_hbh),
	    cmocka_unit_test(test_icmp_build),
	    cmocka_unit_test(test_route_input),
	    cmocka_unit_test(test_rcv_random),
	    cmocka_unit_test(test_ip_len_clip),
	    cmocka_unit_test(test_host_tb),
	    cmocka_unit_test(test_arpreply_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
