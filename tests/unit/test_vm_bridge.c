// SPDX-License-Identifier: BSD-3-Clause
/*
 * The bridge family (docs/dataplane.md "The bridge family"): bridge base
 * chains in a generation's hook lists, split at br_netfilter's priorities
 * as the dataplane walks them, and what bridge chains read and write of a
 * frame's view: ether and vlan payload at the link layer (vlan id set
 * rewrites the 802.1Q tag in place), meta protocol, pkttype and mark.
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

#include <linux/if_packet.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "gen_build.h"
#include "nft_build.h"
#include "nftdp_vm.h"

/* linux/netfilter_bridge.h's hooks */
#define BR_PRE_ROUTING 0
#define BR_FORWARD 2
#define BR_POST_ROUTING 4

#define MARK_SET(v) imm32(NFT_REG_1, (v)), meta_set(NFT_META_MARK, NFT_REG_1)
#define MARK_IS(v) meta(NFT_META_MARK, NFT_REG_1), cmp32(NFT_CMP_EQ, NFT_REG_1, (v))

static int fix_setup(void **state)
{
	*state = gen_fix_new(1);
	return 0;
}

static int fix_teardown(void **state)
{
	gen_fix_free(*state);
	return 0;
}

/* a bitwise (reg & mask) ^ xor of len bytes, as nft builds `vlan id set` */
static struct nftnl_expr *bitwise(uint32_t reg, uint32_t len, const void *mask, const void * xor)
{
	struct nftnl_expr *e = ex("bitwise");

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, reg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, reg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, xor, len);
	return e;
}

static struct nftnl_expr *payload_write(uint32_t base, uint32_t off, uint32_t len, uint32_t sreg)
{
	struct nftnl_expr *e = ex("payload");

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_SREG, sreg);
	return e;
}

struct frame {
	uint8_t buf[64];
	struct nftdp_vm_pkt pkt;
};

/* A 60-byte frame to another station, tagged (vid 6, pcp 3) or not, with
 * an IPv4 UDP datagram, viewed as dataplane/bridge.c views it at bridge
 * hooks: link header at 0, network header after the outer tag, skb->len
 * from there with the padding, skb->protocol the inner ethertype. */
static struct nftdp_vm_pkt *frame(struct frame *f, bool tagged, uint8_t hook)
{
	static const uint8_t macs[12] = {2, 0, 0, 0, 1, 0x11, 2, 0, 0, 0, 1, 0x10};
	static const uint8_t tag[4] = {0x81, 0x00, 0x60, 0x06};
	static const uint8_t ip[] = {0x45, 0,  0,   28, 0, 1, 0, 0, 64, 17, 0, 0, 10, 1,
				     0,	   10, 172, 16, 0, 5, 0, 1, 0,	2,  0, 8, 0,  0};
	uint32_t nh = tagged ? 18 : 14;

	memset(f, 0, sizeof(*f));
	memcpy(f->buf, macs, 12);
	if (tagged)
		memcpy(f->buf + 12, tag, 4);
	f->buf[nh - 2] = 0x08;
	memcpy(f->buf + nh, ip, sizeof(ip));
	nftdp_vm_pkt_init(&f->pkt, f->buf, 60, 0, nh);
	nftdp_vm_pkt_parse_ip(&f->pkt);
	f->pkt.nfproto = NFPROTO_BRIDGE;
	f->pkt.hook = hook;
	f->pkt.skb_len = 60 - nh;
	f->pkt.pkttype = PACKET_OTHERHOST;
	f->pkt.flags |= NFTDP_VM_PKT_F_WRITABLE;
	return &f->pkt;
}

/* Bridge base chains go into the bridge family's lists; the dataplane runs
 * prerouting and forward in two windows around br_netfilter's ip hooks
 * (priority <= 0, then > 0) and postrouting whole. */
static void test_bridge_hook_split(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *p1, *p2, *p3, *fw;
	struct nftdp_vm_pkt *v[1];
	unsigned int vd;
	struct frame fr;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	p3 = gen_chain(b, NFPROTO_BRIDGE, "p100", true, BR_PRE_ROUTING, 100, NF_ACCEPT, 0);
	p1 = gen_chain(b, NFPROTO_BRIDGE, "pm200", true, BR_PRE_ROUTING, -200, NF_ACCEPT, 1);
	p2 = gen_chain(b, NFPROTO_BRIDGE, "p0", true, BR_PRE_ROUTING, 0, NF_ACCEPT, 2);
	fw = gen_chain(b, NFPROTO_BRIDGE, "f1", true, BR_FORWARD, 1, NF_DROP, 3);
	assert_int_equal(gen_rule(b, p1, 1, MARK_SET(1), NULL), 0);
	assert_int_equal(gen_rule(b, p2, 2, MARK_IS(1), MARK_SET(2), NULL), 0);
	assert_int_equal(gen_rule(b, p3, 3, MARK_IS(5), MARK_SET(3), NULL), 0);
	assert_int_equal(gen_rule(b, fw, 4, MARK_IS(3), verdict(NF_ACCEPT, NULL), NULL), 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);

	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_BRIDGE, BR_PRE_ROUTING), 3);
	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_BRIDGE, BR_FORWARD), 1);
	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_BRIDGE, BR_POST_ROUTING), 0);
	/* nothing of the bridge's in the ip lists: a bridge chain never sees
	 * a packet at an ip hook */
	assert_int_equal(nftdp_vm_gen_hook_len(gen, NFPROTO_IPV4, NF_INET_PRE_ROUTING), 0);
	assert_true(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_BRIDGE, BR_PRE_ROUTING, INT32_MIN, 0));
	assert_true(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_BRIDGE, BR_PRE_ROUTING, 1, INT32_MAX));
	assert_false(nftdp_vm_gen_hook_has_prio(gen, NFPROTO_BRIDGE, BR_FORWARD, INT32_MIN, 0));

	v[0] = frame(&fr, false, BR_PRE_ROUTING);
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_BRIDGE, BR_PRE_ROUTING, INT32_MIN, 0, v, 1,
					 &vd, &f->ctx);
	assert_int_equal(vd, NF_ACCEPT);
	assert_int_equal(fr.pkt.mark, 2); /* -200 then 0, not 100 */
	fr.pkt.mark = 5;		  /* what an ip prerouting chain set in between */
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_BRIDGE, BR_PRE_ROUTING, 1, INT32_MAX, v, 1,
					 &vd, &f->ctx);
	assert_int_equal(fr.pkt.mark, 3);
	/* forward's window below 0 is empty: accept, nothing run */
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_BRIDGE, BR_FORWARD, INT32_MIN, 0, v, 1, &vd,
					 &f->ctx);
	assert_int_equal(vd, NF_ACCEPT);
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_BRIDGE, BR_FORWARD, 1, INT32_MAX, v, 1, &vd,
					 &f->ctx);
	assert_int_equal(vd, NF_ACCEPT);
	fr.pkt.mark = 0; /* the policy, drop */
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_BRIDGE, BR_FORWARD, 1, INT32_MAX, v, 1, &vd,
					 &f->ctx);
	assert_int_equal(vd, NF_DROP);
	nftdp_vm_gen_destroy(gen);
}

/* ether, vlan id / vlan id set, meta protocol and pkttype in a bridge
 * chain, as nft 1.0.6 compiles them */
static void test_bridge_ether_vlan(void **state)
{
	struct gen_fix *f = *state;
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_chain *c;
	static const uint8_t vid_mask[2] = {0x0f, 0xff}, vid6[2] = {0, 6};
	static const uint8_t keep_pcp[2] = {0xf0, 0x00}, vid7[2] = {0, 7};
	static const uint8_t t8100[2] = {0x81, 0x00}, t0800[2] = {0x08, 0x00};
	static const uint8_t zero2[2] = {0, 0};
	struct frame fr;

	assert_int_equal(nftdp_vm_gen_builder_create(f->st, NULL, &b), 0);
	c = gen_chain(b, NFPROTO_BRIDGE, "pre", true, BR_PRE_ROUTING, -200, NF_ACCEPT, 0);
	/* ether type 0x8100 (the tag where the VM reads it) and meta
	 * protocol ip (skb->protocol after skb_vlan_untag): mark 1 */
	assert_int_equal(gen_rule(b, c, 1, payload(NFT_PAYLOAD_LL_HEADER, 12, 2, NFT_REG_1),
				  cmp(NFT_CMP_EQ, NFT_REG_1, t8100, 2),
				  meta(NFT_META_PROTOCOL, NFT_REG_1),
				  cmp(NFT_CMP_EQ, NFT_REG_1, t0800, 2), MARK_SET(1), NULL),
			 0);
	/* vlan id 6 vlan id set 7 */
	assert_int_equal(gen_rule(b, c, 2, payload(NFT_PAYLOAD_LL_HEADER, 14, 2, NFT_REG_1),
				  bitwise(NFT_REG_1, 2, vid_mask, zero2),
				  cmp(NFT_CMP_EQ, NFT_REG_1, vid6, 2),
				  payload(NFT_PAYLOAD_LL_HEADER, 14, 2, NFT_REG_1),
				  bitwise(NFT_REG_1, 2, keep_pcp, vid7),
				  payload_write(NFT_PAYLOAD_LL_HEADER, 14, 2, NFT_REG_1), NULL),
			 0);
	/* meta pkttype other: drop */
	assert_int_equal(gen_rule(b, c, 3, meta(NFT_META_PKTTYPE, NFT_REG_1),
				  cmp32(NFT_CMP_EQ, NFT_REG_1, PACKET_OTHERHOST),
				  verdict(NF_DROP, NULL), NULL),
			 0);
	struct nftdp_vm_gen *gen = gen_build_ok(b);

	frame(&fr, true, BR_PRE_ROUTING);
	assert_int_equal(
	    nftdp_vm_gen_run_hook(gen, NFPROTO_BRIDGE, BR_PRE_ROUTING, &fr.pkt, &f->ctx), NF_DROP);
	assert_int_equal(fr.pkt.mark, 1);
	assert_int_equal(fr.buf[14], 0x60); /* pcp 3 kept */
	assert_int_equal(fr.buf[15], 0x07); /* vid 7 */
	assert_int_equal(fr.buf[16], 0x08); /* the rest of the frame as it was */
	assert_int_equal(fr.buf[18], 0x45);

	/* untagged: no tag to match or rewrite (the bytes at 14 are the IP
	 * header's); the bridge's own address is PACKET_HOST: no drop */
	frame(&fr, false, BR_PRE_ROUTING);
	fr.pkt.pkttype = PACKET_HOST;
	assert_int_equal(
	    nftdp_vm_gen_run_hook(gen, NFPROTO_BRIDGE, BR_PRE_ROUTING, &fr.pkt, &f->ctx),
	    NF_ACCEPT);
	assert_int_equal(fr.pkt.mark, 0);
	assert_int_equal(fr.buf[14], 0x45);
	assert_int_equal(fr.buf[15], 0);
	nftdp_vm_gen_destroy(gen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_bridge_hook_split, fix_setup, fix_teardown),
	    cmocka_unit_test_setup_teardown(test_bridge_ether_vlan, fix_setup, fix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
