// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ebtables and arptables extensions ebtables-nft and arptables-nft
 * send as match and target expressions (the bridge and arp families).
 * Each is checked at commit as its checkentry does (net/bridge/netfilter/
 * ebt_*.c, net/ipv4/netfilter/arpt_mangle.c), with the entry nft_compat.c
 * builds from NFTA_RULE_COMPAT (nft_match_set_mtchk_param: the ethernet
 * protocol and EBT_IPROTO, nothing else), and stored so that the tools'
 * listings match the kernel's. Bridge chains run in wire mode: the
 * matches ip, arp, vlan, pkttype, mark_m and 802_3 and the mark target
 * are evaluated as ebt_*.c do on the bridge's view (network header after
 * the outer tag, the tag in place), and so are ip6 and stp (their infos,
 * too big for an op, in a blob of the chain). The log and nflog watchers
 * are in expr_compat_ebtlog.c, the nat table's dnat, snat, redirect and
 * arpreply in expr_compat_ebtnat.c, arptables' mangle (arp chains, which
 * run with --host-ports) in expr_compat_arpmangle.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_arp/arpt_mangle.h>
#include <linux/netfilter_bridge.h>
#include <linux/netfilter_bridge/ebt_802_3.h>
#include <linux/netfilter_bridge/ebt_arp.h>
#include <linux/netfilter_bridge/ebt_arpreply.h>
#include <linux/netfilter_bridge/ebt_ip.h>
#include <linux/netfilter_bridge/ebt_ip6.h>
#include <linux/netfilter_bridge/ebt_log.h>
#include <linux/netfilter_bridge/ebt_mark_m.h>
#include <linux/netfilter_bridge/ebt_mark_t.h>
#include <linux/netfilter_bridge/ebt_nat.h>
#include <linux/netfilter_bridge/ebt_nflog.h>
#include <linux/netfilter_bridge/ebt_pkttype.h>
#include <linux/netfilter_bridge/ebt_redirect.h>
#include <linux/netfilter_bridge/ebt_stp.h>
#include <linux/netfilter_bridge/ebt_vlan.h>
#include <linux/netfilter_bridge/ebtables.h>
#include <netinet/in.h>
#include <string.h>

#include "compat.h"
#include "vm_priv.h"

#define BR NFPROTO_BRIDGE

/* the entry's ethernet protocol, not inverted (ebt_ip_mt_check & co.) */
static bool ethproto_is(const struct compat_par *par, uint16_t proto)
{
	return par->proto == htons(proto) && !par->inv_proto;
}

static bool is_port_proto(uint8_t p)
{
	return p == IPPROTO_TCP || p == IPPROTO_UDP || p == IPPROTO_UDPLITE || p == IPPROTO_SCTP ||
	       p == IPPROTO_DCCP;
}

static int bad(struct nftdp_vm_cctx *cc, const char *name)
{
	return nftdp_vm_errf(cc, -EINVAL, "ebtables %s: invalid options", name);
}

NFTDP_VM_PRIV_CHECK(struct ebt_ip_info);
NFTDP_VM_PRIV_CHECK(struct ebt_vlan_info);
NFTDP_VM_PRIV_CHECK(struct ebt_pkttype_info);
NFTDP_VM_PRIV_CHECK(struct ebt_mark_m_info);
NFTDP_VM_PRIV_CHECK(struct ebt_802_3_info);
NFTDP_VM_PRIV_CHECK(struct ebt_mark_t_info);

/* the info as the extension's match/target reads it, in the op */
static void keep(void *priv, const struct compat_par *par, size_t size)
{
	if (priv)
		memcpy(priv, par->info, size);
}

/* an info too big for the op: a copy in a blob of the chain, its
 * address in the op */
static int keep_blob(struct nftdp_vm_cctx *cc, void *priv, const struct compat_par *par,
		     size_t size)
{
	void *b;

	if (!priv)
		return 0;
	b = nftdp_vm_blob(cc, size);
	if (!b)
		return -ENOMEM;
	memcpy(b, par->info, size);
	*(void **)priv = b;
	return 0;
}

/* ebt_ip_mt_check */
static int ip_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_ip_info *i = par->info;

	keep(priv, par, sizeof(*i));
	if (!ethproto_is(par, ETH_P_IP))
		return nftdp_vm_errf(cc, -EINVAL, "ebtables ip: needs -p IPv4");
	if ((i->bitmask & ~EBT_IP_MASK) || (i->invflags & ~EBT_IP_MASK))
		return bad(cc, "ip");
	if (i->bitmask & (EBT_IP_DPORT | EBT_IP_SPORT)) {
		if ((i->invflags & EBT_IP_PROTO) || !is_port_proto(i->protocol))
			return bad(cc, "ip");
	}
	if ((i->bitmask & EBT_IP_DPORT) && i->dport[0] > i->dport[1])
		return bad(cc, "ip");
	if ((i->bitmask & EBT_IP_SPORT) && i->sport[0] > i->sport[1])
		return bad(cc, "ip");
	if (i->bitmask & EBT_IP_ICMP) {
		if ((i->invflags & EBT_IP_PROTO) || i->protocol != IPPROTO_ICMP)
			return bad(cc, "ip");
		if (i->icmp_type[0] > i->icmp_type[1] || i->icmp_code[0] > i->icmp_code[1])
			return bad(cc, "ip");
	}
	if (i->bitmask & EBT_IP_IGMP) {
		if ((i->invflags & EBT_IP_PROTO) || i->protocol != IPPROTO_IGMP)
			return bad(cc, "ip");
		if (i->igmp_type[0] > i->igmp_type[1])
			return bad(cc, "ip");
	}
	return 0;
}

/* ebt_ip6_mt_check */
static int ip6_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_ip6_info *i = par->info;
	int rc = keep_blob(cc, priv, par, sizeof(*i));

	if (rc < 0)
		return rc;
	if (!ethproto_is(par, ETH_P_IPV6))
		return nftdp_vm_errf(cc, -EINVAL, "ebtables ip6: needs -p IPv6");
	if ((i->bitmask & ~EBT_IP6_MASK) || (i->invflags & ~EBT_IP6_MASK))
		return bad(cc, "ip6");
	if (i->bitmask & (EBT_IP6_DPORT | EBT_IP6_SPORT)) {
		if ((i->invflags & EBT_IP6_PROTO) || !is_port_proto(i->protocol))
			return bad(cc, "ip6");
	}
	if ((i->bitmask & EBT_IP6_DPORT) && i->dport[0] > i->dport[1])
		return bad(cc, "ip6");
	if ((i->bitmask & EBT_IP6_SPORT) && i->sport[0] > i->sport[1])
		return bad(cc, "ip6");
	if (i->bitmask & EBT_IP6_ICMP6) {
		if ((i->invflags & EBT_IP6_PROTO) || i->protocol != IPPROTO_ICMPV6)
			return bad(cc, "ip6");
		if (i->icmpv6_type[0] > i->icmpv6_type[1] || i->icmpv6_code[0] > i->icmpv6_code[1])
			return bad(cc, "ip6");
	}
	return 0;
}

/* ebt_arp_mt_check */
static int arp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_arp_info *i = par->info;

	if (priv) { /* the info, too big for the op, in a blob of the chain */
		struct ebt_arp_info *b = nftdp_vm_blob(cc, sizeof(*i));

		if (!b)
			return -ENOMEM;
		*b = *i;
		*(struct ebt_arp_info **)priv = b;
	}
	if (!ethproto_is(par, ETH_P_ARP) && !ethproto_is(par, ETH_P_RARP))
		return nftdp_vm_errf(cc, -EINVAL, "ebtables arp: needs -p ARP or RARP");
	if ((i->bitmask & ~EBT_ARP_MASK) || (i->invflags & ~EBT_ARP_MASK))
		return bad(cc, "arp");
	return 0;
}

/* ebt_vlan_mt_check (the kernel then drops EBT_VLAN_PRIO when an id is
 * given: its listing shows no --vlan-prio there, ours does) */
static int vlan_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_vlan_info *i = par->info;

	if (priv) { /* the check's own change: an id makes the prio not count */
		struct ebt_vlan_info *k = priv;

		*k = *i;
		if ((k->bitmask & EBT_VLAN_ID) && k->id)
			k->bitmask &= (uint8_t)~EBT_VLAN_PRIO;
	}
	if (par->proto != htons(ETH_P_8021Q))
		return nftdp_vm_errf(cc, -EINVAL, "ebtables vlan: needs -p 802_1Q");
	if ((i->bitmask & ~EBT_VLAN_MASK) || (i->invflags & ~EBT_VLAN_MASK))
		return bad(cc, "vlan");
	if ((i->bitmask & EBT_VLAN_ID) && i->id > 4096) /* VLAN_GROUP_ARRAY_LEN */
		return bad(cc, "vlan");
	if ((i->bitmask & EBT_VLAN_PRIO) && !((i->bitmask & EBT_VLAN_ID) && i->id) && i->prio > 7)
		return bad(cc, "vlan");
	if ((i->bitmask & EBT_VLAN_ENCAP) && ntohs(i->encap) < ETH_ZLEN)
		return bad(cc, "vlan");
	return 0;
}

/* ebt_pkttype_mt_check: any type, a boolean invert */
static int pkttype_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_pkttype_info *i = par->info;

	keep(priv, par, sizeof(*i));
	return i->invert > 1 ? bad(cc, "pkttype") : 0;
}

/* ebt_mark_mt_check */
static int mark_m_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_mark_m_info *i = par->info;

	keep(priv, par, sizeof(*i));
	if ((i->bitmask & ~EBT_MARK_MASK) ||
	    ((i->bitmask & EBT_MARK_OR) && (i->bitmask & EBT_MARK_AND)) || !i->bitmask)
		return bad(cc, "mark_m");
	return 0;
}

/* ebt_802_3_mt_check */
static int e8023_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_802_3_info *i = par->info;

	keep(priv, par, sizeof(*i));
	if ((i->bitmask & ~EBT_802_3_MASK) || (i->invflags & ~EBT_802_3_MASK))
		return bad(cc, "802_3");
	return 0;
}

/* ebt_stp_mt_check; under nft_compat the destination check is skipped */
static int stp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_stp_info *i = par->info;
	int rc = keep_blob(cc, priv, par, sizeof(*i));

	if (rc < 0)
		return rc;
	if ((i->bitmask & ~EBT_STP_MASK) || (i->invflags & ~EBT_STP_MASK) ||
	    !(i->bitmask & EBT_STP_MASK))
		return bad(cc, "stp");
	return 0;
}

/* ebt_mark_tg_check: BASE_CHAIN is never set under nft_compat (hook_mask
 * is one hook bit), so only the verdict and the operation are checked */
static int mark_t_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_mark_t_info *i = par->info;
	int verdict = (int)(i->target | ~EBT_VERDICT_BITS);
	unsigned int op = i->target & ~EBT_VERDICT_BITS;

	keep(priv, par, sizeof(*i));
	if (verdict < -NUM_STANDARD_TARGETS || verdict >= 0) /* ebt_invalid_target */
		return bad(cc, "mark");
	if (op != MARK_SET_VALUE && op != MARK_OR_VALUE && op != MARK_AND_VALUE &&
	    op != MARK_XOR_VALUE)
		return bad(cc, "mark");
	return 0;
}

/* NF_INVF: cond, inverted when flag is in the info's invflags */
#define INVF(info, flag, cond) ((bool)(cond) ^ !!((info)->invflags & (flag)))

/* ebt_ip_mt: the IPv4 header at the network header, ports (or ICMP type
 * and code, IGMP type) after it unless a later fragment */
static void ip_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_ip_info *i = (const void *)op->priv;
	uint8_t ih[20], th[4];
	uint32_t saddr, daddr;

	(void)ctx;
	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, ih, sizeof(ih)))
		goto no;
	memcpy(&saddr, ih + 12, 4);
	memcpy(&daddr, ih + 16, 4);
	if ((i->bitmask & EBT_IP_TOS) && INVF(i, EBT_IP_TOS, i->tos != ih[1]))
		goto no;
	if ((i->bitmask & EBT_IP_SOURCE) && INVF(i, EBT_IP_SOURCE, (saddr & i->smsk) != i->saddr))
		goto no;
	if ((i->bitmask & EBT_IP_DEST) && INVF(i, EBT_IP_DEST, (daddr & i->dmsk) != i->daddr))
		goto no;
	if (i->bitmask & EBT_IP_PROTO) {
		if (INVF(i, EBT_IP_PROTO, i->protocol != ih[9]))
			goto no;
		if (!(i->bitmask & (EBT_IP_DPORT | EBT_IP_SPORT | EBT_IP_ICMP | EBT_IP_IGMP)))
			return;
		if (((uint32_t)ih[6] << 8 | ih[7]) & 0x1fff) /* IP_OFFSET */
			goto no;
		if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + (ih[0] & 0xfu) * 4u, th, sizeof(th)))
			goto no;
		if (i->bitmask & EBT_IP_DPORT) {
			uint32_t dst = (uint32_t)th[2] << 8 | th[3];

			if (INVF(i, EBT_IP_DPORT, dst < i->dport[0] || dst > i->dport[1]))
				goto no;
		}
		if (i->bitmask & EBT_IP_SPORT) {
			uint32_t src = (uint32_t)th[0] << 8 | th[1];

			if (INVF(i, EBT_IP_SPORT, src < i->sport[0] || src > i->sport[1]))
				goto no;
		}
		if ((i->bitmask & EBT_IP_ICMP) &&
		    INVF(i, EBT_IP_ICMP,
			 th[0] < i->icmp_type[0] || th[0] > i->icmp_type[1] ||
			     th[1] < i->icmp_code[0] || th[1] > i->icmp_code[1]))
			goto no;
		if ((i->bitmask & EBT_IP_IGMP) &&
		    INVF(i, EBT_IP_IGMP, th[0] < i->igmp_type[0] || th[0] > i->igmp_type[1]))
			goto no;
	}
	return;
no:
	compat_match_result(regs, false);
}

/* ebt_arp_mt on the ARP header at the network header; the info lives in
 * a blob (it does not fit an op) */
static void arp_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_arp_info *i = *(const struct ebt_arp_info *const *)(const void *)op->priv;
	uint8_t ah[8], mac[ETH_ALEN];
	uint16_t hrd, pro, opc;
	uint32_t nh = pkt->nh_off;

	(void)ctx;
	if (!nftdp_vm_copy_bits(pkt, nh, ah, sizeof(ah)))
		goto no;
	memcpy(&hrd, ah, 2);
	memcpy(&pro, ah + 2, 2);
	memcpy(&opc, ah + 6, 2);
	if ((i->bitmask & EBT_ARP_OPCODE) && INVF(i, EBT_ARP_OPCODE, i->opcode != opc))
		goto no;
	if ((i->bitmask & EBT_ARP_HTYPE) && INVF(i, EBT_ARP_HTYPE, i->htype != hrd))
		goto no;
	if ((i->bitmask & EBT_ARP_PTYPE) && INVF(i, EBT_ARP_PTYPE, i->ptype != pro))
		goto no;
	if (i->bitmask & (EBT_ARP_SRC_IP | EBT_ARP_DST_IP | EBT_ARP_GRAT)) {
		uint32_t sa, da;

		if (ah[5] != 4 || pro != htons(ETH_P_IP))
			goto no;
		if (!nftdp_vm_copy_bits(pkt, nh + 8u + ah[4], &sa, 4) ||
		    !nftdp_vm_copy_bits(pkt, nh + 8u + 2u * ah[4] + 4u, &da, 4))
			goto no;
		if ((i->bitmask & EBT_ARP_SRC_IP) &&
		    INVF(i, EBT_ARP_SRC_IP, i->saddr != (sa & i->smsk)))
			goto no;
		if ((i->bitmask & EBT_ARP_DST_IP) &&
		    INVF(i, EBT_ARP_DST_IP, i->daddr != (da & i->dmsk)))
			goto no;
		if ((i->bitmask & EBT_ARP_GRAT) && INVF(i, EBT_ARP_GRAT, da != sa))
			goto no;
	}
	if (i->bitmask & (EBT_ARP_SRC_MAC | EBT_ARP_DST_MAC)) {
		uint8_t v = 0;

		if (ah[4] != ETH_ALEN || hrd != htons(ARPHRD_ETHER))
			goto no;
		if (i->bitmask & EBT_ARP_SRC_MAC) {
			if (!nftdp_vm_copy_bits(pkt, nh + 8u, mac, ETH_ALEN))
				goto no;
			for (unsigned int k = 0; k < ETH_ALEN; k++)
				v |= (uint8_t)((mac[k] ^ i->smaddr[k]) & i->smmsk[k]);
			if (INVF(i, EBT_ARP_SRC_MAC, v != 0))
				goto no;
		}
		if (i->bitmask & EBT_ARP_DST_MAC) {
			v = 0;
			if (!nftdp_vm_copy_bits(pkt, nh + 8u + ah[4] + ah[5], mac, ETH_ALEN))
				goto no;
			for (unsigned int k = 0; k < ETH_ALEN; k++)
				v |= (uint8_t)((mac[k] ^ i->dmaddr[k]) & i->dmmsk[k]);
			if (INVF(i, EBT_ARP_DST_MAC, v != 0))
				goto no;
		}
	}
	return;
no:
	compat_match_result(regs, false);
}

/* ipv6_skip_exthdr from the network header: the offset of the header
 * after the extension headers (a later fragment stops at its fragment
 * header), its type in *nexthdr; -1 at no next header or the end */
int nftdp_vm_ebt_ipv6_skip(const struct nftdp_vm_pkt *pkt, uint8_t *nexthdr)
{
	uint32_t start = 40;
	uint8_t nh = *nexthdr, h[2];

	for (;;) {
		uint32_t hdrlen;

		switch (nh) {
		case 0:	 /* NEXTHDR_HOP */
		case 43: /* NEXTHDR_ROUTING */
		case 44: /* NEXTHDR_FRAGMENT */
		case 51: /* NEXTHDR_AUTH */
		case 60: /* NEXTHDR_DEST */
			break;
		case 59: /* NEXTHDR_NONE */
			return -1;
		default:
			*nexthdr = nh;
			return (int)start;
		}
		if (start > 0xffff || !nftdp_vm_copy_bits(pkt, (int64_t)pkt->nh_off + start, h, 2))
			return -1;
		if (nh == 44) {
			uint8_t fo[2];

			if (!nftdp_vm_copy_bits(pkt, (int64_t)pkt->nh_off + start + 2, fo, 2))
				return -1;
			if (((fo[0] << 8 | fo[1]) & ~0x7) != 0) {
				*nexthdr = nh;
				return (int)start;
			}
			hdrlen = 8;
		} else if (nh == 51) {
			hdrlen = ((uint32_t)h[1] + 2) << 2; /* ipv6_authlen */
		} else {
			hdrlen = ((uint32_t)h[1] + 1) << 3; /* ipv6_optlen */
		}
		nh = h[0];
		start += hdrlen;
	}
}

/* ebt_ip6_mt: the IPv6 header at the network header; the protocol after
 * the extension headers, then ports or ICMPv6 type and code */
static void ip6_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_ip6_info *i = *(const struct ebt_ip6_info *const *)(const void *)op->priv;
	uint8_t ih[40], th[4];

	(void)ctx;
	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, ih, sizeof(ih)))
		goto no;
	/* ipv6_get_dsfield: the traffic class */
	if ((i->bitmask & EBT_IP6_TCLASS) &&
	    INVF(i, EBT_IP6_TCLASS, i->tclass != (uint8_t)((ih[0] << 4) | (ih[1] >> 4))))
		goto no;
	if (i->bitmask & (EBT_IP6_SOURCE | EBT_IP6_DEST)) {
		uint8_t vs = 0, vd = 0;

		for (unsigned int k = 0; k < 16; k++) {
			vs |= (uint8_t)((ih[8 + k] & i->smsk.s6_addr[k]) ^ i->saddr.s6_addr[k]);
			vd |= (uint8_t)((ih[24 + k] & i->dmsk.s6_addr[k]) ^ i->daddr.s6_addr[k]);
		}
		if ((i->bitmask & EBT_IP6_SOURCE) && INVF(i, EBT_IP6_SOURCE, vs != 0))
			goto no;
		if ((i->bitmask & EBT_IP6_DEST) && INVF(i, EBT_IP6_DEST, vd != 0))
			goto no;
	}
	if (i->bitmask & EBT_IP6_PROTO) {
		uint8_t nexthdr = ih[6];
		int off = nftdp_vm_ebt_ipv6_skip(pkt, &nexthdr);

		if (off < 0)
			goto no;
		if (INVF(i, EBT_IP6_PROTO, i->protocol != nexthdr))
			goto no;
		if (!(i->bitmask & (EBT_IP6_DPORT | EBT_IP6_SPORT | EBT_IP6_ICMP6)))
			return;
		if (!nftdp_vm_copy_bits(pkt, (int64_t)pkt->nh_off + off, th, sizeof(th)))
			goto no;
		if (i->bitmask & EBT_IP6_DPORT) {
			uint32_t dst = (uint32_t)th[2] << 8 | th[3];

			if (INVF(i, EBT_IP6_DPORT, dst < i->dport[0] || dst > i->dport[1]))
				goto no;
		}
		if (i->bitmask & EBT_IP6_SPORT) {
			uint32_t src = (uint32_t)th[0] << 8 | th[1];

			if (INVF(i, EBT_IP6_SPORT, src < i->sport[0] || src > i->sport[1]))
				goto no;
		}
		if ((i->bitmask & EBT_IP6_ICMP6) &&
		    INVF(i, EBT_IP6_ICMP6,
			 th[0] < i->icmpv6_type[0] || th[0] > i->icmpv6_type[1] ||
			     th[1] < i->icmpv6_code[0] || th[1] > i->icmpv6_code[1]))
			goto no;
	}
	return;
no:
	compat_match_result(regs, false);
}

#define NR16(p) ((uint32_t)(p)[0] << 8 | (p)[1])
#define NR32(p) ((uint32_t)(p)[0] << 24 | (uint32_t)(p)[1] << 16 | (uint32_t)(p)[2] << 8 | (p)[3])

/* a masked 6-byte address of a BPDU differs */
static bool stp_addr_differs(const uint8_t *a, const char *want, const char *msk)
{
	uint8_t v = 0;

	for (unsigned int k = 0; k < 6; k++)
		v |= (uint8_t)((a[k] ^ (uint8_t)want[k]) & (uint8_t)msk[k]);
	return v != 0;
}

/* ebt_filter_config on the configuration BPDU's fields (c: flags, root
 * id, root cost, sender id, port, message age, max age, hello, delay) */
static bool stp_config_match(const struct ebt_stp_info *i, const uint8_t *c)
{
	const struct ebt_stp_config_info *k = &i->config;
	uint32_t v;

	if ((i->bitmask & EBT_STP_FLAGS) && INVF(i, EBT_STP_FLAGS, k->flags != c[0]))
		return false;
	v = NR16(c + 1);
	if ((i->bitmask & EBT_STP_ROOTPRIO) &&
	    INVF(i, EBT_STP_ROOTPRIO, v < k->root_priol || v > k->root_priou))
		return false;
	if ((i->bitmask & EBT_STP_ROOTADDR) &&
	    INVF(i, EBT_STP_ROOTADDR, stp_addr_differs(c + 3, k->root_addr, k->root_addrmsk)))
		return false;
	v = NR32(c + 9);
	if ((i->bitmask & EBT_STP_ROOTCOST) &&
	    INVF(i, EBT_STP_ROOTCOST, v < k->root_costl || v > k->root_costu))
		return false;
	v = NR16(c + 13);
	if ((i->bitmask & EBT_STP_SENDERPRIO) &&
	    INVF(i, EBT_STP_SENDERPRIO, v < k->sender_priol || v > k->sender_priou))
		return false;
	if ((i->bitmask & EBT_STP_SENDERADDR) &&
	    INVF(i, EBT_STP_SENDERADDR,
		 stp_addr_differs(c + 15, k->sender_addr, k->sender_addrmsk)))
		return false;
	v = NR16(c + 21);
	if ((i->bitmask & EBT_STP_PORT) && INVF(i, EBT_STP_PORT, v < k->portl || v > k->portu))
		return false;
	v = NR16(c + 23);
	if ((i->bitmask & EBT_STP_MSGAGE) &&
	    INVF(i, EBT_STP_MSGAGE, v < k->msg_agel || v > k->msg_ageu))
		return false;
	v = NR16(c + 25);
	if ((i->bitmask & EBT_STP_MAXAGE) &&
	    INVF(i, EBT_STP_MAXAGE, v < k->max_agel || v > k->max_ageu))
		return false;
	v = NR16(c + 27);
	if ((i->bitmask & EBT_STP_HELLOTIME) &&
	    INVF(i, EBT_STP_HELLOTIME, v < k->hello_timel || v > k->hello_timeu))
		return false;
	v = NR16(c + 29);
	if ((i->bitmask & EBT_STP_FWDD) &&
	    INVF(i, EBT_STP_FWDD, v < k->forward_delayl || v > k->forward_delayu))
		return false;
	return true;
}

/* ebt_stp_mt: the LLC and BPDU header at the network header (after the
 * length field), then a configuration BPDU's fields when asked about */
static void stp_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	static const uint8_t header[6] = {0x42, 0x42, 0x03, 0x00, 0x00, 0x00};
	const struct ebt_stp_info *i = *(const struct ebt_stp_info *const *)(const void *)op->priv;
	uint8_t sp[6], c[31];

	(void)ctx;
	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, sp, sizeof(sp)))
		goto no;
	if (memcmp(sp, header, sizeof(header)) != 0) /* the stp code only considers these */
		goto no;
	if ((i->bitmask & EBT_STP_TYPE) && INVF(i, EBT_STP_TYPE, i->type != sp[5]))
		goto no;
	if (sp[5] == 0 /* BPDU_TYPE_CONFIG */ && (i->bitmask & EBT_STP_CONFIG_MASK)) {
		if (!nftdp_vm_copy_bits(pkt, (int64_t)pkt->nh_off + sizeof(sp), c, sizeof(c)) ||
		    !stp_config_match(i, c))
			goto no;
	}
	return;
no:
	compat_match_result(regs, false);
}

/* ebt_vlan_mt: the outer tag (skb_vlan_tag_get, encap skb->protocol) when
 * the frame has one, else a vlan_hdr read at the network header */
static void vlan_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_vlan_info *i = (const void *)op->priv;
	uint8_t h[4], et[2] = {0, 0};
	uint16_t tci, encap;
	bool tagged;

	(void)ctx;
	tagged = pkt->mac_off >= 0 && pkt->nh_off >= (uint32_t)pkt->mac_off + 18 &&
		 nftdp_vm_copy_bits(pkt, pkt->mac_off + 12, et, 2) &&
		 ((et[0] == 0x81 && et[1] == 0x00) || (et[0] == 0x88 && et[1] == 0xa8));
	if (!nftdp_vm_copy_bits(pkt, tagged ? (int64_t)pkt->mac_off + 14 : (int64_t)pkt->nh_off, h,
				sizeof(h)))
		goto no;
	tci = (uint16_t)(h[0] << 8 | h[1]);
	memcpy(&encap, h + 2, 2);
	if ((i->bitmask & EBT_VLAN_ID) &&
	    !((i->id == (tci & 0xfff)) ^ !!(i->invflags & EBT_VLAN_ID)))
		goto no;
	if ((i->bitmask & EBT_VLAN_PRIO) &&
	    !((i->prio == ((tci >> 13) & 7)) ^ !!(i->invflags & EBT_VLAN_PRIO)))
		goto no;
	if ((i->bitmask & EBT_VLAN_ENCAP) &&
	    !((i->encap == encap) ^ !!(i->invflags & EBT_VLAN_ENCAP)))
		goto no;
	return;
no:
	compat_match_result(regs, false);
}

/* ebt_pkttype_mt */
static void pkttype_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_pkttype_info *i = (const void *)op->priv;

	(void)ctx;
	compat_match_result(regs, (pkt->pkttype == i->pkt_type) ^ i->invert);
}

/* ebt_mark_mt */
static void mark_m_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_mark_m_info *i = (const void *)op->priv;

	(void)ctx;
	if (i->bitmask & EBT_MARK_OR)
		compat_match_result(regs, !!(pkt->mark & i->mask) ^ i->invert);
	else
		compat_match_result(regs, ((pkt->mark & i->mask) == i->mark) ^ i->invert);
}

/* ebt_802_3_mt: the LLC header after the length field at the link header */
static void e8023_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_802_3_info *i = (const void *)op->priv;
	uint8_t llc[9]; /* dsap, ssap, ctrl, then the ui (or ni) type */
	uint16_t type;

	(void)ctx;
	if (pkt->mac_off < 0 || !nftdp_vm_copy_bits(pkt, pkt->mac_off + 14, llc, sizeof(llc)))
		goto no;
	/* IS_UI: ui.type at 6, else ni.type at 7 */
	memcpy(&type, (llc[2] & 0x03) ? llc + 6 : llc + 7, 2);
	if (i->bitmask & EBT_802_3_SAP) {
		if (INVF(i, EBT_802_3_SAP, i->sap != llc[1]))
			goto no;
		if (INVF(i, EBT_802_3_SAP, i->sap != llc[0]))
			goto no;
	}
	if (i->bitmask & EBT_802_3_TYPE) {
		if (!(llc[0] == 0xaa && llc[1] == 0xaa)) /* CHECK_TYPE */
			goto no;
		if (INVF(i, EBT_802_3_TYPE, i->type != type))
			goto no;
	}
	return;
no:
	compat_match_result(regs, false);
}

/* ebt_mark_tg, then nft_target_eval_bridge's mapping of its verdict */
static void mark_t_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_mark_t_info *i = (const void *)op->priv;
	unsigned int action = (unsigned int)(i->target & -16);
	uint32_t mark = (uint32_t)i->mark;

	(void)ctx;
	if (action == MARK_SET_VALUE)
		pkt->mark = mark;
	else if (action == MARK_OR_VALUE)
		pkt->mark |= mark;
	else if (action == MARK_AND_VALUE)
		pkt->mark &= mark;
	else
		pkt->mark ^= mark;
	switch (i->target | ~EBT_VERDICT_BITS) {
	case EBT_ACCEPT:
		regs->verdict.code = NF_ACCEPT;
		break;
	case EBT_DROP:
		regs->verdict.code = NF_DROP;
		break;
	case EBT_RETURN:
		regs->verdict.code = (uint32_t)NFT_RETURN;
		break;
	default: /* EBT_CONTINUE */
		break;
	}
}

#define EBT_MATCH_OPS(nm, info, fn)                                                                \
	static const struct nftdp_vm_expr_ops nm = {                                               \
	    .name = "match (ebtables) " #fn,                                                       \
	    .size = sizeof(info),                                                                  \
	    .init = nftdp_vm_compat_match_init,                                                    \
	    .eval = fn,                                                                            \
	}
EBT_MATCH_OPS(ip_ops, struct ebt_ip_info, ip_eval);
EBT_MATCH_OPS(vlan_ops, struct ebt_vlan_info, vlan_eval);
EBT_MATCH_OPS(pkttype_ops, struct ebt_pkttype_info, pkttype_eval);
EBT_MATCH_OPS(mark_m_ops, struct ebt_mark_m_info, mark_m_eval);
EBT_MATCH_OPS(e8023_ops, struct ebt_802_3_info, e8023_eval);
EBT_MATCH_OPS(arp_ops, struct ebt_arp_info *, arp_eval);
EBT_MATCH_OPS(ip6_ops, struct ebt_ip6_info *, ip6_eval);
EBT_MATCH_OPS(stp_ops, struct ebt_stp_info *, stp_eval);

static const struct nftdp_vm_expr_ops mark_t_ops = {
    .name = "target (ebtables) mark",
    .size = sizeof(struct ebt_mark_t_info),
    .init = nftdp_vm_compat_target_init,
    .eval = mark_t_eval,
};

/* a bridge hook's bit; BR_HOOKS adds NF_BR_NUMHOOKS (ebtables' BASE_CHAIN
 * bit, which nft_compat never sets) */
#define BR_HOOK(h) COMPAT_HOOK(h)
#define BR_HOOKS(h) (COMPAT_HOOK(NF_BR_NUMHOOKS) | COMPAT_HOOK(h))

/* clang-format off */
const struct compat_ext nftdp_vm_compat_br_matches[] = {
    {"ip", 0, BR, sizeof(struct ebt_ip_info), 0, NULL, 0, 0, ip_check, &ip_ops},
    {"ip6", 0, BR, sizeof(struct ebt_ip6_info), 0, NULL, 0, 0, ip6_check, &ip6_ops},
    {"arp", 0, BR, sizeof(struct ebt_arp_info), 0, NULL, 0, 0, arp_check, &arp_ops},
    {"vlan", 0, BR, sizeof(struct ebt_vlan_info), 0, NULL, 0, 0, vlan_check, &vlan_ops},
    {"pkttype", 0, BR, sizeof(struct ebt_pkttype_info), 0, NULL, 0, 0, pkttype_check,
     &pkttype_ops},
    {"mark_m", 0, BR, sizeof(struct ebt_mark_m_info), 0, NULL, 0, 0, mark_m_check,
     &mark_m_ops},
    {"802_3", 0, BR, sizeof(struct ebt_802_3_info), 0, NULL, 0, 0, e8023_check,
     &e8023_ops},
    {"stp", 0, BR, sizeof(struct ebt_stp_info), 0, NULL, 0, 0, stp_check, &stp_ops},
    {NULL, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL},
};

const struct compat_ext nftdp_vm_compat_br_targets[] = {
    {"log", 0, BR, sizeof(struct ebt_log_info), 0, NULL, 0, COMPAT_F_LOG,
     nftdp_vm_compat_ebt_log_check, &nftdp_vm_compat_ebt_log_ops},
    {"nflog", 0, BR, sizeof(struct ebt_nflog_info), 0, NULL, 0, COMPAT_F_LOG,
     nftdp_vm_compat_ebt_nflog_check, &nftdp_vm_compat_ebt_nflog_ops},
    {"mark", 0, BR, sizeof(struct ebt_mark_t_info), 0, NULL, 0, 0, mark_t_check,
     &mark_t_ops},
    /* the nat table's: .hooks and .table of each xt_target */
    {"dnat", 0, BR, sizeof(struct ebt_nat_info),
     BR_HOOKS(NF_BR_PRE_ROUTING) | BR_HOOK(NF_BR_LOCAL_OUT) | BR_HOOK(NF_BR_BROUTING), NULL, 0,
     0, nftdp_vm_compat_ebt_dnat_check, &nftdp_vm_compat_ebt_dnat_ops},
    {"snat", 0, BR, sizeof(struct ebt_nat_info), BR_HOOKS(NF_BR_POST_ROUTING), "nat", 0, 0,
     nftdp_vm_compat_ebt_snat_check, &nftdp_vm_compat_ebt_snat_ops},
    {"redirect", 0, BR, sizeof(struct ebt_redirect_info),
     BR_HOOKS(NF_BR_PRE_ROUTING) | BR_HOOK(NF_BR_BROUTING), NULL, 0, 0,
     nftdp_vm_compat_ebt_redirect_check, &nftdp_vm_compat_ebt_redirect_ops},
    {"arpreply", 0, BR, sizeof(struct ebt_arpreply_info), BR_HOOKS(NF_BR_PRE_ROUTING), "nat", 0,
     0, nftdp_vm_compat_ebt_arpreply_check, &nftdp_vm_compat_ebt_arpreply_ops},
    {"mangle", 0, NFPROTO_ARP, sizeof(struct arpt_mangle), 0, NULL, 0, 0,
     nftdp_vm_compat_arp_mangle_check, &nftdp_vm_compat_arp_mangle_ops},
    {NULL, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL},
};
/* clang-format on */
