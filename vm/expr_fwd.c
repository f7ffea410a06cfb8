// SPDX-License-Identifier: BSD-3-Clause
/*
 * fwd (netdev): send the packet out of the port whose ifindex is in a
 * register, optionally to a neighbour address (the dataplane decrements
 * the TTL / hop limit and writes the neighbour's MAC); the verdict is
 * NF_STOLEN and pkt->out says where. Mirrors nft_fwd_netdev.c.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct fwd_priv {
	uint8_t sreg_dev, sreg_addr, nfproto;
	bool neigh;
};
NFTDP_VM_PRIV_CHECK(struct fwd_priv);

static void fwd_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct fwd_priv *p = (const void *)op->priv;

	(void)ctx;
	/* nft_fwd_neigh_eval: a packet of the other family breaks the rule */
	if (p->neigh && pkt->protocol != htons(p->nfproto == NFPROTO_IPV4 ? 0x0800 : 0x86dd)) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	pkt->out.fwd_oif = regs->data[p->sreg_dev];
	if (p->neigh) {
		pkt->out.fwd_nfproto = p->nfproto;
		memcpy(pkt->out.fwd_addr, &regs->data[p->sreg_addr],
		       p->nfproto == NFPROTO_IPV4 ? 4 : 16);
	}
	regs->verdict.code = NF_STOLEN;
}

static int fwd_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct fwd_priv *p = priv;
	int rc;

	/* nft_fwd_validate */
	if (cc->chain->family != NFPROTO_NETDEV ||
	    (cc->chain->base && cc->chain->hook != NF_NETDEV_INGRESS &&
	     cc->chain->hook != NF_NETDEV_EGRESS))
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "fwd: only in netdev ingress and egress");
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_FWD_SREG_DEV, &p->sreg_dev, 4);
	if (rc < 0)
		return rc;
	if (nftdp_vm_attr(e, NFTNL_EXPR_FWD_SREG_ADDR)) {
		uint32_t alen;

		if (!nftdp_vm_attr(e, NFTNL_EXPR_FWD_NFPROTO))
			return nftdp_vm_errf(cc, -EINVAL, "fwd: address without family");
		p->nfproto = (uint8_t)nftdp_vm_u32(e, NFTNL_EXPR_FWD_NFPROTO);
		if (p->nfproto == NFPROTO_IPV4)
			alen = 4;
		else if (p->nfproto == NFPROTO_IPV6)
			alen = 16;
		else
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "fwd: family %u", p->nfproto);
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_FWD_SREG_ADDR, &p->sreg_addr, alen);
		if (rc < 0)
			return rc;
		p->neigh = true;
		/* the dataplane resolves the address by the neighbour mirror,
		 * which comes with the route mirror */
		cc->needs_routes = true;
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_fwd = {
    .name = "fwd",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "fwd",
	    .size = sizeof(struct fwd_priv),
	    .init = fwd_init,
	    .eval = fwd_eval,
	},
};
