// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ebtables and arptables extensions ebtables-nft and arptables-nft
 * send as match and target expressions (the bridge and arp families).
 * Each is checked at commit as its checkentry does (net/bridge/netfilter/
 * ebt_*.c, net/ipv4/netfilter/arpt_mangle.c), with the entry nft_compat.c
 * builds from NFTA_RULE_COMPAT (nft_match_set_mtchk_param: the ethernet
 * protocol and EBT_IPROTO, nothing else), and stored so that the tools'
 * listings match the kernel's. The dataplane has no bridge or arp hooks,
 * so none of them is ever evaluated (docs/differences.md).
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_arp/arpt_mangle.h>
#include <linux/netfilter_bridge/ebt_802_3.h>
#include <linux/netfilter_bridge/ebt_arp.h>
#include <linux/netfilter_bridge/ebt_ip.h>
#include <linux/netfilter_bridge/ebt_ip6.h>
#include <linux/netfilter_bridge/ebt_log.h>
#include <linux/netfilter_bridge/ebt_mark_m.h>
#include <linux/netfilter_bridge/ebt_mark_t.h>
#include <linux/netfilter_bridge/ebt_nflog.h>
#include <linux/netfilter_bridge/ebt_pkttype.h>
#include <linux/netfilter_bridge/ebt_stp.h>
#include <linux/netfilter_bridge/ebt_vlan.h>
#include <linux/netfilter_bridge/ebtables.h>
#include <netinet/in.h>

#include "compat.h"

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

/* ebt_ip_mt_check */
static int ip_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_ip_info *i = par->info;

	(void)priv;
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

	(void)priv;
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

	(void)priv;
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

	(void)priv;
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

	(void)priv;
	return i->invert > 1 ? bad(cc, "pkttype") : 0;
}

/* ebt_mark_mt_check */
static int mark_m_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_mark_m_info *i = par->info;

	(void)priv;
	if ((i->bitmask & ~EBT_MARK_MASK) ||
	    ((i->bitmask & EBT_MARK_OR) && (i->bitmask & EBT_MARK_AND)) || !i->bitmask)
		return bad(cc, "mark_m");
	return 0;
}

/* ebt_802_3_mt_check */
static int e8023_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_802_3_info *i = par->info;

	(void)priv;
	if ((i->bitmask & ~EBT_802_3_MASK) || (i->invflags & ~EBT_802_3_MASK))
		return bad(cc, "802_3");
	return 0;
}

/* ebt_stp_mt_check; under nft_compat the destination check is skipped */
static int stp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_stp_info *i = par->info;

	(void)priv;
	if ((i->bitmask & ~EBT_STP_MASK) || (i->invflags & ~EBT_STP_MASK) ||
	    !(i->bitmask & EBT_STP_MASK))
		return bad(cc, "stp");
	return 0;
}

/* ebt_log_tg_check (it also NUL-terminates the prefix, as the tool sends it) */
static int log_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_log_info *i = par->info;

	(void)priv;
	if ((i->bitmask & ~EBT_LOG_MASK) || i->loglevel >= 8)
		return bad(cc, "log");
	return 0;
}

/* ebt_nflog_tg_check */
static int nflog_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_nflog_info *i = par->info;

	(void)priv;
	return (i->flags & ~EBT_NFLOG_MASK) ? bad(cc, "nflog") : 0;
}

/* ebt_mark_tg_check: BASE_CHAIN is never set under nft_compat (hook_mask
 * is one hook bit), so only the verdict and the operation are checked */
static int mark_t_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ebt_mark_t_info *i = par->info;
	int verdict = (int)(i->target | ~EBT_VERDICT_BITS);
	unsigned int op = i->target & ~EBT_VERDICT_BITS;

	(void)priv;
	if (verdict < -NUM_STANDARD_TARGETS || verdict >= 0) /* ebt_invalid_target */
		return bad(cc, "mark");
	if (op != MARK_SET_VALUE && op != MARK_OR_VALUE && op != MARK_AND_VALUE &&
	    op != MARK_XOR_VALUE)
		return bad(cc, "mark");
	return 0;
}

/* checkentry of arpt_mangle.c */
static int mangle_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct arpt_mangle *m = par->info;

	(void)priv;
	if ((m->flags & ~ARPT_MANGLE_MASK) || !(m->flags & ARPT_MANGLE_MASK))
		return nftdp_vm_errf(cc, -EINVAL, "arptables mangle: invalid options");
	if (m->target != NF_DROP && m->target != NF_ACCEPT &&
	    (unsigned int)m->target != XT_CONTINUE)
		return nftdp_vm_errf(cc, -EINVAL, "arptables mangle: invalid verdict");
	return 0;
}

/* never reached: no bridge or arp chain is run; were one run, the rule
 * would not match rather than act unchecked */
static void stored_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)op;
	(void)pkt;
	(void)ctx;
	regs->verdict.code = NFT_BREAK;
}

static const struct nftdp_vm_expr_ops stored_match_ops = {
    .name = "match (bridge/arp, stored)",
    .init = nftdp_vm_compat_match_init,
    .eval = stored_eval,
};

static const struct nftdp_vm_expr_ops stored_target_ops = {
    .name = "target (bridge/arp, stored)",
    .init = nftdp_vm_compat_target_init,
    .eval = stored_eval,
};

/* clang-format off */
const struct compat_ext nftdp_vm_compat_br_matches[] = {
    {"ip", 0, BR, sizeof(struct ebt_ip_info), 0, NULL, 0, 0, ip_check, &stored_match_ops},
    {"ip6", 0, BR, sizeof(struct ebt_ip6_info), 0, NULL, 0, 0, ip6_check, &stored_match_ops},
    {"arp", 0, BR, sizeof(struct ebt_arp_info), 0, NULL, 0, 0, arp_check, &stored_match_ops},
    {"vlan", 0, BR, sizeof(struct ebt_vlan_info), 0, NULL, 0, 0, vlan_check, &stored_match_ops},
    {"pkttype", 0, BR, sizeof(struct ebt_pkttype_info), 0, NULL, 0, 0, pkttype_check,
     &stored_match_ops},
    {"mark_m", 0, BR, sizeof(struct ebt_mark_m_info), 0, NULL, 0, 0, mark_m_check,
     &stored_match_ops},
    {"802_3", 0, BR, sizeof(struct ebt_802_3_info), 0, NULL, 0, 0, e8023_check,
     &stored_match_ops},
    {"stp", 0, BR, sizeof(struct ebt_stp_info), 0, NULL, 0, 0, stp_check, &stored_match_ops},
    {NULL, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL},
};

const struct compat_ext nftdp_vm_compat_br_targets[] = {
    {"log", 0, BR, sizeof(struct ebt_log_info), 0, NULL, 0, 0, log_check, &stored_target_ops},
    {"nflog", 0, BR, sizeof(struct ebt_nflog_info), 0, NULL, 0, 0, nflog_check,
     &stored_target_ops},
    {"mark", 0, BR, sizeof(struct ebt_mark_t_info), 0, NULL, 0, 0, mark_t_check,
     &stored_target_ops},
    {"mangle", 0, NFPROTO_ARP, sizeof(struct arpt_mangle), 0, NULL, 0, 0, mangle_check,
     &stored_target_ops},
    {NULL, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL},
};
/* clang-format on */
