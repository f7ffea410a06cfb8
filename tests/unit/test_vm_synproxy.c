// SPDX-License-Identifier: BSD-3-Clause
/*
 * synproxy (vm/synproxy.c, vm/expr_synproxy.c): TCP option parsing
 * (synproxy_parse_options, truncated headers), the syncookie's MSS table
 * and age (__cookie_v4/v6_init_sequence, __cookie_v4/v6_check), the
 * timestamp cookie carrying window scale, SACK-permitted and ECN, the
 * SYN-ACK's options and checksum, and nft_synproxy_do_eval's verdicts and
 * counters.
 */
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
#include <linux/netfilter/nf_synproxy.h>
#include <linux/netfilter/xt_SYNPROXY.h>

#include "vm_priv.h"

static const uint8_t key[32] = {1,  2,	3,  4,	5,  6,	7,  8,	9,  10, 11, 12, 13, 14, 15, 16,
				17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

/* MSS 1460, SACK-permitted, timestamps, NOP, window scale 7 (Linux's SYN) */
static const uint8_t linux_opts[20] = {2,    4,	   0x05, 0xb4, 4, 2, 8, 10, 0, 0,
				       0x30, 0x39, 0,	 0,    0, 0, 1, 3,  3, 7};

static uint16_t csum_tcp(const uint8_t *ip, bool v6, const uint8_t *th, uint32_t len)
{
	return nftdp_csum_fold(
	    nftdp_csum_partial(th, len, nftdp_csum_pseudo(ip, v6, IPPROTO_TCP, (uint16_t)len)));
}

/* an IPv4 TCP segment 10.0.0.1:40000 -> 10.0.1.2:80 with flags, seq, ack and
 * the options opt[0..olen); returns its length */
static uint32_t seg4(uint8_t *p, uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *opt,
		     uint32_t olen)
{
	uint32_t len = 20 + 20 + olen;

	memset(p, 0, len);
	p[0] = 0x45;
	nftdp_wr16(p + 2, (uint16_t)len);
	p[8] = 64;
	p[9] = IPPROTO_TCP;
	memcpy(p + 12, (uint8_t[]){10, 0, 0, 1, 10, 0, 1, 2}, 8);
	nftdp_st16(p + 10, nftdp_ip_fast_csum(p, 20));
	nftdp_wr16(p + 20, 40000);
	nftdp_wr16(p + 22, 80);
	nftdp_wr32(p + 24, seq);
	nftdp_wr32(p + 28, ack);
	p[32] = (uint8_t)(((20 + olen) / 4) << 4);
	p[33] = flags;
	nftdp_wr16(p + 34, 64240);
	if (olen)
		memcpy(p + 40, opt, olen);
	nftdp_st16(p + 36, csum_tcp(p, false, p + 20, len - 20));
	return len;
}

static void view(struct nftdp_vm_pkt *pkt, uint8_t *p, uint32_t len)
{
	nftdp_vm_pkt_init(pkt, p, len, -1, 0);
	nftdp_vm_pkt_parse_ip(pkt);
	pkt->hook = NF_INET_FORWARD;
}

static void test_parse_options(void **state)
{
	struct nftdp_vm_synproxy_opts o;
	uint8_t th[60] = {0};

	(void)state;
	th[12] = 10 << 4;
	memcpy(th + 20, linux_opts, 20);
	memset(&o, 0, sizeof(o));
	assert_true(nftdp_vm_synproxy_parse_options(th, 40, &o));
	assert_int_equal(o.options, NF_SYNPROXY_OPT_MSS | NF_SYNPROXY_OPT_SACK_PERM |
					NF_SYNPROXY_OPT_TIMESTAMP | NF_SYNPROXY_OPT_WSCALE);
	assert_int_equal(o.mss_option, 1460);
	assert_int_equal(o.wscale, 7);
	assert_int_equal(o.tsval, 0x3039);
	assert_int_equal(o.tsecr, 0);
	/* a header shorter than 20 bytes, or options cut by the packet's end */
	assert_false(nftdp_vm_synproxy_parse_options(th, 19, &o));
	assert_false(nftdp_vm_synproxy_parse_options(th, 39, &o));
	/* doff below 5 */
	th[12] = 4 << 4;
	assert_false(nftdp_vm_synproxy_parse_options(th, 40, &o));
	/* window scale above 14 is clipped; a bad length ends the walk */
	th[12] = 8 << 4;
	memcpy(th + 20, (uint8_t[]){1, 3, 3, 20, 2, 4, 1, 0, 8, 1, 0, 0}, 12);
	assert_true(nftdp_vm_synproxy_parse_options(th, 40, &o));
	assert_int_equal(o.options, NF_SYNPROXY_OPT_WSCALE | NF_SYNPROXY_OPT_MSS);
	assert_int_equal(o.wscale, 14);
	assert_int_equal(o.mss_option, 256);
	/* a length above what is left stops it; EOL stops it */
	memcpy(th + 20, (uint8_t[]){0, 2, 4, 5, 0xb4, 0, 0, 0, 0, 0, 0, 0}, 12);
	assert_true(nftdp_vm_synproxy_parse_options(th, 40, &o));
	assert_int_equal(o.options, 0);
	memcpy(th + 20, (uint8_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4}, 12);
	assert_true(nftdp_vm_synproxy_parse_options(th, 40, &o));
	assert_int_equal(o.options, 0);
}

static void test_cookie_mss_table(void **state)
{
	static const struct {
		uint16_t mss, got;
	} v4[] = {{0, 536},	{535, 536},   {1299, 536},  {1300, 1300}, {1439, 1300},
		  {1440, 1440}, {1459, 1440}, {1460, 1460}, {9000, 1460}},
	  v6[] = {{0, 1220}, {1420, 1420}, {1500, 1440}, {8940, 8940}, {65535, 8940}};
	uint8_t p[80], ip6[60] = {0};

	(void)state;
	nftdp_vm_synproxy_set_secret(key);
	seg4(p, 0x02, 1000, 0, NULL, 0);
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		uint16_t mss = v4[i].mss;
		uint32_t c = nftdp_vm_synproxy_cookie_init(p, false, p + 20, &mss, 777);

		assert_int_equal(mss, v4[i].got);
		/* the client's ACK: seq isn + 1, ack cookie + 1 */
		nftdp_wr32(p + 24, 1001);
		nftdp_wr32(p + 28, c + 1);
		assert_int_equal(nftdp_vm_synproxy_cookie_check(p, false, p + 20, 777), v4[i].got);
		/* a minute later still, two minutes later no longer */
		assert_int_equal(nftdp_vm_synproxy_cookie_check(p, false, p + 20, 778), v4[i].got);
		assert_int_equal(nftdp_vm_synproxy_cookie_check(p, false, p + 20, 779), 0);
		/* another sequence number shifts the MSS index (the kernel's
		 * layout adds it); another port or address: invalid */
		nftdp_wr32(p + 24, 1002);
		assert_int_not_equal(nftdp_vm_synproxy_cookie_check(p, false, p + 20, 777),
				     v4[i].got);
		nftdp_wr32(p + 24, 1001);
		p[23] ^= 1;
		assert_int_equal(nftdp_vm_synproxy_cookie_check(p, false, p + 20, 777), 0);
		p[23] ^= 1;
		p[15] ^= 1;
		assert_int_equal(nftdp_vm_synproxy_cookie_check(p, false, p + 20, 777), 0);
		p[15] ^= 1;
		nftdp_wr32(p + 24, 1000);
		nftdp_wr32(p + 28, 0);
	}
	/* IPv6: its own table */
	ip6[0] = 0x60;
	ip6[6] = IPPROTO_TCP;
	ip6[23] = 1;
	ip6[39] = 2;
	nftdp_wr32(ip6 + 44, 5000);
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		uint16_t mss = v6[i].mss;
		uint32_t c = nftdp_vm_synproxy_cookie_init(ip6, true, ip6 + 40, &mss, 5);

		assert_int_equal(mss, v6[i].got);
		nftdp_wr32(ip6 + 44, 5001);
		nftdp_wr32(ip6 + 48, c + 1);
		assert_int_equal(nftdp_vm_synproxy_cookie_check(ip6, true, ip6 + 40, 6), v6[i].got);
		assert_int_equal(nftdp_vm_synproxy_cookie_check(ip6, true, ip6 + 40, 7), 0);
		ip6[39] = 3;
		assert_int_equal(nftdp_vm_synproxy_cookie_check(ip6, true, ip6 + 40, 5), 0);
		ip6[39] = 2;
		nftdp_wr32(ip6 + 44, 5000);
	}
}

static void test_timestamp_cookie(void **state)
{
	const struct nftdp_vm_synproxy_info info = {
	    .mss = 1460,
	    .wscale = 9,
	    .options = NF_SYNPROXY_OPT_MSS | NF_SYNPROXY_OPT_WSCALE | NF_SYNPROXY_OPT_TIMESTAMP |
		       NF_SYNPROXY_OPT_SACK_PERM};
	struct nftdp_vm_synproxy_opts o = {0}, back = {0};
	uint8_t th[20] = {0};

	(void)state;
	/* client: MSS 1400, wscale 7, SACK, timestamps, ECN (ECE|CWR) */
	o.options = NF_SYNPROXY_OPT_MSS | NF_SYNPROXY_OPT_WSCALE | NF_SYNPROXY_OPT_SACK_PERM |
		    NF_SYNPROXY_OPT_TIMESTAMP;
	o.mss_option = 1400;
	o.wscale = 7;
	o.tsval = 4242;
	th[13] = 0x02 | 0x40 | 0x80;
	nftdp_vm_synproxy_tcp_options(&info, th, &o, 0x12345);
	/* ECN is not in info->options: dropped */
	assert_int_equal(o.options, info.options);
	assert_int_equal(o.mss_encode, 1400);
	assert_int_equal(o.mss_option, 1460);
	assert_int_equal(o.wscale, 9);
	assert_int_equal(o.tsecr, 4242);
	assert_int_equal(o.tsval, (0x12345 & ~0x3fu) | 7 | 1 << 4);
	/* the ACK echoes tsval: the options come back */
	back.tsecr = o.tsval;
	back.options = NF_SYNPROXY_OPT_TIMESTAMP;
	nftdp_vm_synproxy_check_timestamp_cookie(&back);
	assert_int_equal(back.options, NF_SYNPROXY_OPT_TIMESTAMP | NF_SYNPROXY_OPT_WSCALE |
					   NF_SYNPROXY_OPT_SACK_PERM);
	assert_int_equal(back.wscale, 7);
	/* no window scale from the client: 0xf, not carried back */
	memset(&back, 0, sizeof(back));
	back.tsecr = 0x40 | 0xf | 1 << 5;
	nftdp_vm_synproxy_check_timestamp_cookie(&back);
	assert_int_equal(back.options, NF_SYNPROXY_OPT_ECN);
	/* without timestamps, no window scale, SACK or ECN in the SYN-ACK */
	memset(&o, 0, sizeof(o));
	o.options = NF_SYNPROXY_OPT_MSS | NF_SYNPROXY_OPT_WSCALE | NF_SYNPROXY_OPT_SACK_PERM;
	o.wscale = 7;
	th[13] = 0x02;
	nftdp_vm_synproxy_tcp_options(&info, th, &o, 1);
	assert_int_equal(o.options, NF_SYNPROXY_OPT_MSS);
	assert_int_equal(nftdp_vm_synproxy_options_size(&o), 4);
}

/* the statement over a SYN, its SYN-ACK, the cookie ACK and a forged one */
static void test_eval(void **state)
{
	const struct nftdp_vm_synproxy_info info = {
	    .mss = 1460,
	    .wscale = 7,
	    .options = NF_SYNPROXY_OPT_MSS | NF_SYNPROXY_OPT_WSCALE | NF_SYNPROXY_OPT_TIMESTAMP |
		       NF_SYNPROXY_OPT_SACK_PERM};
	struct nftdp_vm_ctx ctx = {0};
	struct nftdp_vm_regs regs;
	struct nftdp_vm_pkt pkt;
	uint8_t p[80], sa[80], ack_opts[12] = {1, 1, 8, 10};
	uint32_t len, n, cookie;

	(void)state;
	nftdp_vm_synproxy_set_secret(key);
	ctx.now_ms = 3600000 + 0x1234;
	len = seg4(p, 0x02, 7000, 0, linux_opts, 20);
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_STOLEN);
	assert_ptr_equal(pkt.out.synproxy, &info);
	assert_int_equal(ctx.synproxy.syn_received, 1);

	n = nftdp_vm_synproxy_answer(p, false, p + 20, len - 20, pkt.out.synproxy, ctx.now_ms, sa,
				     sizeof(sa));
	/* IP 20, TCP 20 + MSS 4 + SACK/TS 12 + WS 4 */
	assert_int_equal(n, 60);
	assert_memory_equal(sa + 12, ((uint8_t[]){10, 0, 1, 2, 10, 0, 0, 1}), 8);
	assert_int_equal(sa[8], 64);
	assert_int_equal(nftdp_rd16(sa + 6), 0x4000);
	assert_int_equal(nftdp_ip_fast_csum(sa, 20), 0);
	assert_int_equal(nftdp_rd16(sa + 20), 80);
	assert_int_equal(nftdp_rd16(sa + 22), 40000);
	assert_int_equal(nftdp_rd32(sa + 28), 7001);
	assert_int_equal(sa[32] >> 4, 10);
	assert_int_equal(sa[33], 0x12);
	assert_int_equal(nftdp_rd16(sa + 34), 0); /* window 0 */
	assert_memory_equal(sa + 40, ((uint8_t[]){2, 4, 0x05, 0xb4, 4, 2, 8, 10}), 8);
	assert_int_equal(nftdp_rd32(sa + 48), ((3600000 + 0x1234) & ~0x3fu) | 7 | 1 << 4);
	assert_int_equal(nftdp_rd32(sa + 52), 0x3039);
	assert_memory_equal(sa + 56, ((uint8_t[]){1, 3, 3, 7}), 4);
	assert_int_equal(csum_tcp(sa, false, sa + 20, 40), 0);
	cookie = nftdp_rd32(sa + 24);
	assert_int_equal(nftdp_vm_synproxy_answer(p, false, p + 20, len - 20, &info, 1, sa, 59), 0);
	/* options cut short: no answer */
	assert_int_equal(nftdp_vm_synproxy_answer(p, false, p + 20, 30, &info, 1, sa, sizeof(sa)),
			 0);

	/* the client's ACK with the cookie: valid */
	nftdp_wr32(ack_opts + 4, 99);
	nftdp_wr32(ack_opts + 8, nftdp_rd32(sa + 48));
	len = seg4(p, 0x10, 7001, cookie + 1, ack_opts, 12);
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(ctx.synproxy.cookie_valid, 1);
	assert_int_equal(ctx.synproxy.cookie_invalid, 0);
	/* stolen: the dataplane sends the SYN to the server */
	assert_int_equal(regs.verdict.code, NF_STOLEN);
	assert_ptr_equal(pkt.out.synproxy, &info);
	n = nftdp_vm_synproxy_server_syn(p, false, p + 20, len - 20, 0, ctx.now_ms, sa, sizeof(sa));
	/* IP 20, TCP 20 + MSS 4 + SACK/TS 12 + WS 4: the client's options
	 * back from the cookies */
	assert_int_equal(n, 60);
	assert_memory_equal(sa + 12, p + 12, 8);
	assert_memory_equal(sa + 20, p + 20, 4);
	assert_int_equal(nftdp_rd32(sa + 24), 7000);   /* the client's ISN */
	assert_int_equal(nftdp_rd32(sa + 28), cookie); /* the proxy's */
	assert_int_equal(sa[33], 0x02);		       /* SYN */
	assert_memory_equal(sa + 40, ((uint8_t[]){2, 4, 0x05, 0xb4, 4, 2, 8, 10}), 8);
	assert_int_equal(nftdp_rd32(sa + 48), 99); /* TSval: the client's */
	assert_int_equal(nftdp_rd32(sa + 52), nftdp_rd32(ack_opts + 8));
	assert_memory_equal(sa + 56, ((uint8_t[]){1, 3, 3, 7}), 4); /* its wscale */
	assert_int_equal(csum_tcp(sa, false, sa + 20, 40), 0);
	/* an ACK seen again: its seq + 1 - 1 */
	n = nftdp_vm_synproxy_server_syn(p, false, p + 20, len - 20, 1, ctx.now_ms, sa, sizeof(sa));
	assert_int_equal(nftdp_rd32(sa + 24), 7001);
	/* too late (two minutes on), or no room: nothing */
	assert_int_equal(nftdp_vm_synproxy_server_syn(p, false, p + 20, len - 20, 0,
						      ctx.now_ms + 120000, sa, sizeof(sa)),
			 0);
	assert_int_equal(
	    nftdp_vm_synproxy_server_syn(p, false, p + 20, len - 20, 0, ctx.now_ms, sa, 59), 0);
	/* a forged one: dropped, counted */
	len = seg4(p, 0x10, 7001, cookie + 2, ack_opts, 12);
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_DROP);
	assert_int_equal(ctx.synproxy.cookie_invalid, 1);
	assert_int_equal(
	    nftdp_vm_synproxy_server_syn(p, false, p + 20, len - 20, 0, ctx.now_ms, sa, sizeof(sa)),
	    0);
	/* neither SYN nor ACK (a bare RST): the rule goes on */
	len = seg4(p, 0x04, 7001, 0, NULL, 0);
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, (uint32_t)NFT_CONTINUE);
	/* a bad checksum or a cut option list: dropped, nothing counted */
	len = seg4(p, 0x02, 7000, 0, linux_opts, 20);
	p[37] ^= 1;
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_DROP);
	len = seg4(p, 0x02, 7000, 0, linux_opts, 20);
	p[32] = 0xf0; /* doff 15: 60 bytes claimed, 40 there */
	nftdp_wr16(p + 36, 0);
	nftdp_st16(p + 36, csum_tcp(p, false, p + 20, len - 20));
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_DROP);
	assert_int_equal(ctx.synproxy.syn_received, 1);
	/* a truncated TCP header: dropped */
	len = seg4(p, 0x02, 7000, 0, NULL, 0);
	nftdp_wr16(p + 2, 30);
	nftdp_st16(p + 10, 0);
	nftdp_st16(p + 10, nftdp_ip_fast_csum(p, 20));
	view(&pkt, p, 30);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_DROP);
	/* not TCP: break */
	len = seg4(p, 0x02, 7000, 0, NULL, 0);
	p[9] = IPPROTO_UDP;
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, (uint32_t)NFT_BREAK);
}

/* an IPv6 SYN's SYN-ACK: addresses swapped, hop limit 64, its own MSS table
 * in the cookie, the checksum over the pseudo header */
static void test_synack_v6(void **state)
{
	struct nftdp_vm_synproxy_opts o = {
	    .options = NF_SYNPROXY_OPT_MSS, .mss_option = 1440, .mss_encode = 1500};
	uint8_t p[60] = {0}, sa[80];
	uint16_t mss = 1500;
	uint32_t n;

	(void)state;
	nftdp_vm_synproxy_set_secret(key);
	p[0] = 0x60;
	nftdp_wr16(p + 4, 20);
	p[6] = IPPROTO_TCP;
	p[7] = 64;
	p[8] = 0xfd;
	p[23] = 1;
	p[24] = 0xfd;
	p[39] = 2;
	nftdp_wr16(p + 40, 40000);
	nftdp_wr16(p + 42, 443);
	nftdp_wr32(p + 44, 9);
	p[52] = 5 << 4;
	p[53] = 0x02;
	n = nftdp_vm_synproxy_synack_build(p, true, p + 40, &o, 3, sa, sizeof(sa));
	assert_int_equal(n, 40 + 24);
	assert_int_equal(sa[0], 0x60);
	assert_int_equal(nftdp_rd16(sa + 4), 24);
	assert_int_equal(sa[6], IPPROTO_TCP);
	assert_int_equal(sa[7], 64);
	assert_memory_equal(sa + 8, p + 24, 16);
	assert_memory_equal(sa + 24, p + 8, 16);
	assert_int_equal(nftdp_rd16(sa + 40), 443);
	assert_int_equal(nftdp_rd32(sa + 48), 10);
	assert_int_equal(sa[53], 0x12);
	assert_memory_equal(sa + 60, ((uint8_t[]){2, 4, 0x05, 0xa0}), 4);
	assert_int_equal(csum_tcp(sa, true, sa + 40, 24), 0);
	/* the cookie is the one __cookie_v6_init_sequence gives (1440) */
	assert_int_equal(nftdp_rd32(sa + 44),
			 nftdp_vm_synproxy_cookie_init(p, true, p + 40, &mss, 3));
	assert_int_equal(mss, 1440);
}

/* nft_synproxy_do_eval checks an IPv6 segment's checksum with
 * nf_ip_checksum (IPv4's pseudo header over the IPv6 header's bytes 12-19):
 * dropped unless the NIC verified it; xt_SYNPROXY's target checks it as
 * IPv6 */
static void test_eval_v6_csum(void **state)
{
	const struct nftdp_vm_synproxy_info info = {.mss = 1460, .options = NF_SYNPROXY_OPT_MSS};
	struct nftdp_vm_ctx ctx = {0};
	struct nftdp_vm_regs regs;
	struct nftdp_vm_pkt pkt;
	uint8_t p[60] = {0};

	(void)state;
	nftdp_vm_synproxy_set_secret(key);
	p[0] = 0x60;
	nftdp_wr16(p + 4, 20);
	p[6] = IPPROTO_TCP;
	p[7] = 64;
	p[8] = 0xfd;
	p[23] = 1;
	p[24] = 0xfd;
	p[39] = 2;
	nftdp_wr16(p + 40, 40000);
	nftdp_wr16(p + 42, 80);
	nftdp_wr32(p + 44, 9);
	p[52] = 5 << 4;
	p[53] = 0x02;
	nftdp_st16(p + 56, csum_tcp(p, true, p + 40, 20));
	view(&pkt, p, 60);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_DROP);
	assert_int_equal(ctx.synproxy.syn_received, 0);
	view(&pkt, p, 60);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval_xt(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_STOLEN);
	assert_int_equal(ctx.synproxy.syn_received, 1);
	view(&pkt, p, 60);
	pkt.flags |= NFTDP_VM_PKT_F_CSUM_OK;
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_STOLEN);
	assert_int_equal(ctx.synproxy.syn_received, 2);
}

/* xt_SYNPROXY's target: a SYN with ACK, FIN or RST, and an ACK with FIN,
 * RST or SYN go on (XT_CONTINUE); nft's statement takes any SYN */
static void test_eval_xt(void **state)
{
	const struct nftdp_vm_synproxy_info info = {.mss = 1460, .options = NF_SYNPROXY_OPT_MSS};
	struct nftdp_vm_ctx ctx = {0};
	struct nftdp_vm_regs regs;
	struct nftdp_vm_pkt pkt;
	uint8_t p[80];
	uint32_t len;

	(void)state;
	nftdp_vm_synproxy_set_secret(key);
	len = seg4(p, 0x12, 7000, 1, NULL, 0); /* SYN|ACK */
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval_xt(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, (uint32_t)NFT_CONTINUE);
	assert_int_equal(ctx.synproxy.syn_received, 0);
	view(&pkt, p, len);
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_STOLEN);
	assert_int_equal(ctx.synproxy.syn_received, 1);
	len = seg4(p, 0x11, 7000, 1, NULL, 0); /* FIN|ACK */
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval_xt(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, (uint32_t)NFT_CONTINUE);
	assert_int_equal(ctx.synproxy.cookie_invalid, 0);
	nftdp_vm_synproxy_eval(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_DROP);
	assert_int_equal(ctx.synproxy.cookie_invalid, 1);
	len = seg4(p, 0x02, 7000, 0, NULL, 0); /* a plain SYN: answered */
	view(&pkt, p, len);
	regs.verdict.code = NFT_CONTINUE;
	nftdp_vm_synproxy_eval_xt(&info, &regs, &pkt, &ctx);
	assert_int_equal(regs.verdict.code, NF_STOLEN);
	assert_non_null(pkt.out.synproxy);
}

/* the statement's attributes compiled (nft_synproxy_do_init,
 * nft_synproxy_validate): flags outside the mask and base chains other than
 * input and forward refused, the rule otherwise compiled */
static int compile(uint8_t hook, bool base, uint32_t flags)
{
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 1, .max_counters = 16, .max_cells = 16, .log_ring_size = 16};
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_INET,
					.table = "x",
					.name = "c",
					.base = base,
					.hook = hook,
					.policy = NF_ACCEPT};
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *c;
	struct nftdp_vm_error err;
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e = nftnl_expr_alloc("synproxy");
	int rc;

	assert_int_equal(nftdp_vm_state_create(&cfg, &st), 0);
	assert_int_equal(nftdp_vm_chain_create(&d, st, &c), 0);
	nftnl_expr_set_u16(e, NFTNL_EXPR_SYNPROXY_MSS, 1460);
	nftnl_expr_set_u8(e, NFTNL_EXPR_SYNPROXY_WSCALE, 7);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SYNPROXY_FLAGS, flags);
	nftnl_rule_add_expr(r, e);
	rc = nftdp_vm_chain_add_rule(c, r, NULL, st, &err);
	if (rc < 0)
		assert_non_null(strstr(err.msg, "synproxy"));
	nftnl_rule_free(r);
	nftdp_vm_chain_destroy(c);
	nftdp_vm_state_destroy(st);
	return rc;
}

static void test_compile(void **state)
{
	(void)state;
	assert_int_equal(compile(NF_INET_FORWARD, true, NF_SYNPROXY_OPT_MASK), 0);
	assert_int_equal(compile(NF_INET_LOCAL_IN, true, 0), 0);
	assert_int_equal(compile(NF_INET_PRE_ROUTING, false, 0), 0); /* a regular chain */
	assert_int_equal(compile(NF_INET_FORWARD, true, NF_SYNPROXY_OPT_ECN), -EOPNOTSUPP);
	assert_int_equal(compile(NF_INET_LOCAL_OUT, true, 0), -EOPNOTSUPP);
	assert_int_equal(compile(NF_INET_PRE_ROUTING, true, 0), -EOPNOTSUPP);
}

static const struct nftdp_vm_obj *the_obj(void *o, const char *table, const char *name,
					  uint32_t type)
{
	(void)table;
	(void)name;
	(void)type;
	return o;
}

/* The statement (kind 0), -j SYNPROXY (1), the object (2) and a reference
 * to it (3) in a base chain at hook, with the exception path on or off
 * (local) */
static int compile_at(int kind, uint8_t hook, bool local, char *why, size_t whylen)
{
	struct nftdp_vm_state_config cfg = {.n_workers = 1,
					    .max_counters = 16,
					    .max_cells = 16,
					    .log_ring_size = 16,
					    .local_stack = local};
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4,
					.table = "x",
					.name = "c",
					.base = true,
					.hook = hook,
					.policy = NF_ACCEPT};
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *c;
	struct nftdp_vm_error err = {0};
	struct nftdp_vm_obj *vo = NULL;
	int rc;

	assert_int_equal(nftdp_vm_state_create(&cfg, &st), 0);
	if (kind >= 2) { /* a named object */
		struct nftnl_obj *o = nftnl_obj_alloc();

		nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, "x");
		nftnl_obj_set_str(o, NFTNL_OBJ_NAME, "sp");
		nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_SYNPROXY);
		nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_IPV4);
		nftnl_obj_set_u16(o, NFTNL_OBJ_SYNPROXY_MSS, 1460);
		rc = nftdp_vm_obj_create(o, st, &err, &vo);
		nftnl_obj_free(o);
	}
	if (kind == 2) {
		if (rc == 0)
			nftdp_vm_obj_destroy(vo);
	} else {
		struct nftdp_vm_resolver res = {vo, NULL, NULL, the_obj};
		struct nftnl_rule *r = nftnl_rule_alloc();
		struct nftnl_expr *e;

		if (kind == 3) {
			assert_int_equal(rc, 0);
			e = nftnl_expr_alloc("objref");
			nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_SYNPROXY);
			nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, "sp");
		} else if (kind == 0) {
			e = nftnl_expr_alloc("synproxy");
			nftnl_expr_set_u16(e, NFTNL_EXPR_SYNPROXY_MSS, 1460);
		} else { /* iptables-nft's -p tcp -j SYNPROXY --mss 1460 */
			struct xt_synproxy_info *i = calloc(1, sizeof(*i));

			i->mss = 1460;
			i->options = XT_SYNPROXY_OPT_MSS;
			e = nftnl_expr_alloc("target");
			nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME, "SYNPROXY");
			nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 0);
			nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, i, sizeof(*i));
			nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_PROTO, IPPROTO_TCP);
			nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_FLAGS, 0);
		}
		nftnl_rule_add_expr(r, e);
		assert_int_equal(nftdp_vm_chain_create(&d, st, &c), 0);
		rc = nftdp_vm_chain_add_rule(c, r, kind == 3 ? &res : NULL, st, &err);
		nftdp_vm_chain_destroy(c);
		nftnl_rule_free(r);
		if (vo)
			nftdp_vm_obj_destroy(vo);
	}
	snprintf(why, whylen, "%s", rc < 0 ? err.msg : "");
	nftdp_vm_state_destroy(st);
	return rc;
}

/* The statement, -j SYNPROXY, the object and a reference to it compile
 * at forward, and at input without the exception path (the server side is
 * built: no refusal) */
static void test_not_refused(void **state)
{
	char why[NFTDP_VM_ERRLEN];

	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		int rc = compile_at(kind, NF_INET_FORWARD, true, why, sizeof(why));

		if (rc)
			print_error("kind %d: %s\n", kind, why);
		assert_int_equal(rc, 0);
		assert_int_equal(compile_at(kind, NF_INET_LOCAL_IN, false, why, sizeof(why)), 0);
	}
}

/* in front of a server on the box (input with --host-ports): refused,
 * saying why; the object itself still loads */
static void test_refused_for_host(void **state)
{
	char why[NFTDP_VM_ERRLEN];

	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		int rc = compile_at(kind, NF_INET_LOCAL_IN, true, why, sizeof(why));

		if (kind == 2) {
			assert_int_equal(rc, 0);
			continue;
		}
		assert_int_equal(rc, -EOPNOTSUPP);
		assert_non_null(strstr(why, "server on the box"));
	}
}

/* the server side's segments (synproxy_send_server_syn, _server_ack,
 * _client_ack) and synproxy_tstamp_adjust, field by field */
static void test_server_segments(void **state)
{
	/* the client's cookie ACK: seq 1001, ack = cookie 0x11223345 + 0,
	 * window 502; NOP NOP timestamp 0x01020305 / 0x0a0b0c0d */
	static const uint8_t ts[12] = {1, 1, 8, 10, 1, 2, 3, 5, 0x0a, 0x0b, 0x0c, 0x0d};
	struct nftdp_vm_synproxy_opts o = {.options = NF_SYNPROXY_OPT_MSS | NF_SYNPROXY_OPT_WSCALE |
						      NF_SYNPROXY_OPT_SACK_PERM |
						      NF_SYNPROXY_OPT_TIMESTAMP,
					   .wscale = 6,
					   .mss_option = 1400,
					   .tsval = 0x01020305,
					   .tsecr = 0x0a0b0c0d};
	uint8_t p[80], out[128], *th = out + 20;
	uint32_t len, n;

	(void)state;
	len = seg4(p, 0x10, 1001, 0x11223345, ts, sizeof(ts));
	nftdp_wr16(p + 34, 502);
	nftdp_st16(p + 36, 0);
	nftdp_st16(p + 36, csum_tcp(p, false, p + 20, len - 20));
	/* too small: nothing */
	assert_int_equal(nftdp_vm_synproxy_server_syn_build(p, false, p + 20, &o, 1001, out, 59),
			 0);
	n = nftdp_vm_synproxy_server_syn_build(p, false, p + 20, &o, 1001, out, sizeof(out));
	assert_int_equal(n, 20 + 20 + 20);	  /* MSS, SACK+TS, NOP+WS */
	assert_memory_equal(out + 12, p + 12, 8); /* client -> server */
	assert_int_equal(out[8], 64);
	assert_int_equal(nftdp_rd16(out + 6), 0x4000);
	assert_int_equal(nftdp_ip_fast_csum(out, 20), 0);
	assert_memory_equal(th, p + 20, 4);		  /* same ports */
	assert_int_equal(nftdp_rd32(th + 4), 1000);	  /* recv_seq - 1: the client's ISN */
	assert_int_equal(nftdp_rd32(th + 8), 0x11223344); /* the cookie */
	assert_int_equal(th[13], 0x02);			  /* SYN */
	assert_int_equal(nftdp_rd16(th + 14), 502);	  /* the ACK's window */
	assert_int_equal(th[12] >> 4, 10);
	assert_memory_equal(th + 20, ((const uint8_t[]){2, 4, 0x05, 0x78, 4,	2,    8, 10, 1, 2,
							3, 5, 0x0a, 0x0b, 0x0c, 0x0d, 1, 3,  3, 6}),
			    20);
	assert_int_equal(csum_tcp(out, false, th, 40), 0);
	/* with ECN: ECE and CWR */
	o.options |= NF_SYNPROXY_OPT_ECN;
	nftdp_vm_synproxy_server_syn_build(p, false, p + 20, &o, 1001, out, sizeof(out));
	assert_int_equal(th[13], 0xc2);
	o.options &= (uint8_t)~NF_SYNPROXY_OPT_ECN;

	/* the server's SYN-ACK (10.0.1.2:80 -> 10.0.0.1:40000 once swapped):
	 * seq 5000, ack 1001, window 65160; the hook keeps only timestamps,
	 * TSval/TSecr swapped */
	len = seg4(p, 0x12, 5000, 1001, ts, sizeof(ts));
	memcpy(p + 12, (uint8_t[]){10, 0, 1, 2, 10, 0, 0, 1}, 8);
	nftdp_wr16(p + 20, 80);
	nftdp_wr16(p + 22, 40000);
	nftdp_wr16(p + 34, 65160);
	o.options = NF_SYNPROXY_OPT_TIMESTAMP;
	n = nftdp_vm_synproxy_server_ack_build(p, false, p + 20, &o, 29200, out, sizeof(out));
	assert_int_equal(n, 20 + 20 + 12);
	assert_memory_equal(out + 12, p + 16, 4); /* from the client */
	assert_memory_equal(out + 16, p + 12, 4); /* to the server */
	assert_int_equal(nftdp_rd16(th), 40000);
	assert_int_equal(nftdp_rd16(th + 2), 80);
	assert_int_equal(nftdp_rd32(th + 4), 1001); /* its ack */
	assert_int_equal(nftdp_rd32(th + 8), 5001); /* its seq + 1 */
	assert_int_equal(th[13], 0x10);
	assert_int_equal(nftdp_rd16(th + 14), 29200); /* td_maxwin */
	assert_int_equal(csum_tcp(out, false, th, 32), 0);
	/* the window update to the client: from the server, seq + 1, its
	 * ack, window >> wscale */
	o.wscale = 7;
	n = nftdp_vm_synproxy_client_ack_build(p, false, p + 20, &o, out, sizeof(out));
	assert_int_equal(n, 20 + 20 + 12);
	assert_memory_equal(out + 12, p + 12, 8);
	assert_memory_equal(th, p + 20, 4);
	assert_int_equal(nftdp_rd32(th + 4), 5001);
	assert_int_equal(nftdp_rd32(th + 8), 1001);
	assert_int_equal(th[13], 0x10);
	assert_int_equal(nftdp_rd16(th + 14), 65160 >> 7);
	assert_int_equal(csum_tcp(out, false, th, 32), 0);
}

static void test_tstamp_adjust(void **state)
{
	static const uint8_t ts[12] = {1, 1, 8, 10, 0, 0, 0x10, 0, 0, 0, 0x20, 0};
	uint8_t p[80];
	uint32_t len = seg4(p, 0x10, 1, 2, ts, sizeof(ts));

	(void)state;
	/* no offset: untouched */
	assert_true(nftdp_vm_synproxy_tstamp_adjust(p + 20, len - 20, false, 0));
	assert_int_equal(nftdp_rd32(p + 48), 0x2000);
	/* original direction: TSecr += tsoff */
	assert_true(nftdp_vm_synproxy_tstamp_adjust(p + 20, len - 20, false, 0x300));
	assert_int_equal(nftdp_rd32(p + 44), 0x1000);
	assert_int_equal(nftdp_rd32(p + 48), 0x2300);
	assert_int_equal(csum_tcp(p, false, p + 20, len - 20), 0);
	/* reply direction: TSval -= tsoff (wrapping) */
	assert_true(nftdp_vm_synproxy_tstamp_adjust(p + 20, len - 20, true, 0x1001));
	assert_int_equal(nftdp_rd32(p + 44), 0xffffffffu);
	assert_int_equal(csum_tcp(p, false, p + 20, len - 20), 0);
	/* an option running past the header: false, nothing changed */
	p[42] = 5;
	p[43] = 40;
	assert_false(nftdp_vm_synproxy_tstamp_adjust(p + 20, len - 20, true, 1));
	assert_int_equal(nftdp_rd32(p + 44), 0xffffffffu);
	/* a header longer than the bytes given */
	assert_false(nftdp_vm_synproxy_tstamp_adjust(p + 20, 19, true, 1));
	assert_false(nftdp_vm_synproxy_tstamp_adjust(p + 20, 24, true, 1));
}

static void test_params(void **state)
{
	struct nftdp_vm_synproxy_info info;

	(void)state;
	/* nft_synproxy_do_init: flags outside NF_SYNPROXY_OPT_MASK (ECN too) */
	assert_int_equal(nftdp_vm_synproxy_params(1460, 7, NF_SYNPROXY_OPT_ECN, &info),
			 -EOPNOTSUPP);
	assert_int_equal(nftdp_vm_synproxy_params(1460, 7, 0x100, &info), -EOPNOTSUPP);
	assert_int_equal(nftdp_vm_synproxy_params(1460, 7, NF_SYNPROXY_OPT_MASK, &info), 0);
	assert_int_equal(info.mss, 1460);
	assert_int_equal(info.wscale, 7);
	assert_int_equal(info.options, NF_SYNPROXY_OPT_MASK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_options),    cmocka_unit_test(test_cookie_mss_table),
	    cmocka_unit_test(test_timestamp_cookie), cmocka_unit_test(test_eval),
	    cmocka_unit_test(test_eval_xt),	     cmocka_unit_test(test_synack_v6),
	    cmocka_unit_test(test_eval_v6_csum),     cmocka_unit_test(test_compile),
	    cmocka_unit_test(test_params),	     cmocka_unit_test(test_not_refused),
	    cmocka_unit_test(test_refused_for_host), cmocka_unit_test(test_server_segments),
	    cmocka_unit_test(test_tstamp_adjust),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
