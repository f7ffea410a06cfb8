// SPDX-License-Identifier: BSD-3-Clause
/*
 * rt: what the packet's route says (nft_rt.c; ip, ip6 and inet tables
 * only, as nft_rt_validate says). A packet has a route once the kernel has
 * routed it: at forward, postrouting, input and output; before that
 * (prerouting, inet ingress) it has none and every key breaks the rule. The
 * routes nftdp forwards by carry no realm and no xfrm bundle, so `rt
 * classid` is 0 and `rt ipsec` false where there is a route. Next hop and
 * MSS need the route table itself (the appliance's routes): refused.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct rt_priv {
	uint8_t key;
	uint8_t dreg;
};

/* whether the kernel's skb has a dst at this hook */
static bool routed(const struct nftdp_vm_pkt *pkt)
{
	return pkt->hook == NF_INET_FORWARD || pkt->hook == NF_INET_POST_ROUTING ||
	       pkt->hook == NF_INET_LOCAL_IN || pkt->hook == NF_INET_LOCAL_OUT;
}

static void rt_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct rt_priv *p = (const void *)op->priv;

	(void)ctx;
	if (!routed(pkt)) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	/* classid: dst->tclassid, no realm; xfrm: !!dst->xfrm (nft_reg_store8) */
	regs->data[p->dreg] = 0;
}

static int rt_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct rt_priv *p = priv;
	int rc;
	uint32_t key, len;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_RT_KEY) || !nftdp_vm_attr(e, NFTNL_EXPR_RT_DREG))
		return nftdp_vm_errf(cc, -EINVAL, "rt: key or register missing");
	rc = nftdp_vm_ip_family_only(cc);
	if (rc < 0)
		return rc;
	key = nftdp_vm_u32(e, NFTNL_EXPR_RT_KEY);
	switch (key) {
	case NFT_RT_CLASSID:
		len = 4;
		break;
	case NFT_RT_XFRM:
		len = 1;
		break;
	case NFT_RT_NEXTHOP4:
	case NFT_RT_NEXTHOP6:
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "rt nexthop: not supported by nftdp (needs a route table)");
	case NFT_RT_TCPMSS:
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "rt mtu: not supported by nftdp (needs a route table)");
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "rt: key %u unknown", key);
	}
	p->key = (uint8_t)key;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_RT_DREG, &p->dreg, NFT_DATA_VALUE, len);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_rt = {
    .name = "rt",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "rt",
	    .flow = NFTDP_VM_FLOW_REGS, /* fixed by family and hook, both in the key */
	    .init = rt_init,
	    .eval = rt_eval,
	},
};
