// SPDX-License-Identifier: BSD-3-Clause
/*
 * reject: drop and ask the dataplane for a reply (TCP RST, ICMP/ICMPv6
 * unreachable, or icmpx translated for the packet's family). Mirrors
 * nft_reject.c (init, validate), nft_reject_inet.c and the icmpx code maps
 * (nft_reject_icmp_code, nft_reject_icmpv6_code).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct reject_priv {
	uint8_t type, code, family;
};
NFTDP_VM_PRIV_CHECK(struct reject_priv);

static const uint8_t icmpx_to_icmp[] = {
    [NFT_REJECT_ICMPX_NO_ROUTE] = 0,	      /* ICMP_NET_UNREACH */
    [NFT_REJECT_ICMPX_PORT_UNREACH] = 3,      /* ICMP_PORT_UNREACH */
    [NFT_REJECT_ICMPX_HOST_UNREACH] = 1,      /* ICMP_HOST_UNREACH */
    [NFT_REJECT_ICMPX_ADMIN_PROHIBITED] = 13, /* ICMP_PKT_FILTERED */
};
static const uint8_t icmpx_to_icmpv6[] = {
    [NFT_REJECT_ICMPX_NO_ROUTE] = 0,	     /* ICMPV6_NOROUTE */
    [NFT_REJECT_ICMPX_PORT_UNREACH] = 4,     /* ICMPV6_PORT_UNREACH */
    [NFT_REJECT_ICMPX_HOST_UNREACH] = 3,     /* ICMPV6_ADDR_UNREACH */
    [NFT_REJECT_ICMPX_ADMIN_PROHIBITED] = 1, /* ICMPV6_ADM_PROHIBITED */
};

static void reject_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct reject_priv *p = (const void *)op->priv;
	struct nftdp_vm_pkt_out *out = &pkt->out;
	bool v6 = pkt->nfproto == NFPROTO_IPV6;

	(void)ctx;
	regs->verdict.code = NF_DROP;
	if (pkt->nfproto != NFPROTO_IPV4 && !v6)
		return;
	switch (p->type) {
	case NFT_REJECT_TCP_RST:
		/* nf_send_reset: TCP, not a fragment */
		if (!nftdp_vm_has_l4(pkt) || pkt->l4proto != IPPROTO_TCP)
			return;
		out->reject_icmp_type = 0;
		out->reject_icmp_code = 0;
		break;
	case NFT_REJECT_ICMP_UNREACH:
		/* ip tables send ICMP, ip6 ICMPv6; inet uses the packet's family */
		if ((p->family == NFPROTO_IPV4 && v6) || (p->family == NFPROTO_IPV6 && !v6))
			return;
		out->reject_icmp_type = v6 ? 1 : 3;
		out->reject_icmp_code = p->code;
		break;
	case NFT_REJECT_ICMPX_UNREACH:
		if (p->family == NFPROTO_IPV4 || p->family == NFPROTO_IPV6)
			return; /* nft_reject_ipv4/6_eval ignore icmpx */
		out->reject_icmp_type = v6 ? 1 : 3;
		out->reject_icmp_code = v6 ? icmpx_to_icmpv6[p->code] : icmpx_to_icmp[p->code];
		break;
	default:
		return;
	}
	if (pkt->fragoff)
		return; /* never answer a non-first fragment */
	out->reject = true;
	out->reject_type = p->type;
	out->reject_code = p->code;
}

static int reject_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct reject_priv *p = priv;
	uint32_t type;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_REJECT_TYPE))
		return nftdp_vm_errf(cc, -EINVAL, "reject: type missing");
	type = nftdp_vm_u32(e, NFTNL_EXPR_REJECT_TYPE);
	switch (type) {
	case NFT_REJECT_ICMP_UNREACH:
	case NFT_REJECT_ICMPX_UNREACH:
		if (!nftdp_vm_attr(e, NFTNL_EXPR_REJECT_CODE))
			return nftdp_vm_errf(cc, -EINVAL, "reject: code missing");
		p->code = nftnl_expr_get_u8(e, NFTNL_EXPR_REJECT_CODE);
		if (type == NFT_REJECT_ICMPX_UNREACH && p->code > NFT_REJECT_ICMPX_MAX)
			return nftdp_vm_errf(cc, -EINVAL, "reject: icmpx code %u", p->code);
		break;
	case NFT_REJECT_TCP_RST:
		break;
	default:
		return nftdp_vm_errf(cc, -EINVAL, "reject: type %u", type);
	}
	p->type = (uint8_t)type;
	p->family = cc->chain->family;
	/* nft_reject_validate */
	if (cc->chain->base) {
		bool ok;

		if (cc->chain->family == NFPROTO_NETDEV)
			ok = cc->chain->hook == NF_NETDEV_INGRESS;
		else
			ok = cc->chain->hook == NF_INET_LOCAL_IN ||
			     cc->chain->hook == NF_INET_FORWARD ||
			     cc->chain->hook == NF_INET_LOCAL_OUT ||
			     cc->chain->hook == NF_INET_PRE_ROUTING;
		if (!ok)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "reject: not valid in this hook");
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_reject = {
    .name = "reject",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "reject",
	    .size = sizeof(struct reject_priv),
	    .init = reject_init,
	    .eval = reject_eval,
	},
};
