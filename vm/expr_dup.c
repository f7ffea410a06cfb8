// SPDX-License-Identifier: BSD-3-Clause
/*
 * dup (netdev): send a copy of the packet out of the port in a register and
 * go on. Mirrors nft_dup_netdev.c; dup to an address (nft_dup_ipv4/6) needs
 * a routing table and is refused.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct dup_priv {
	uint8_t sreg_dev;
};
NFTDP_VM_PRIV_CHECK(struct dup_priv);

static void dup_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct dup_priv *p = (const void *)op->priv;

	(void)ctx;
	if (pkt->out.n_dup < NFTDP_VM_MAX_DUP)
		pkt->out.dup_oif[pkt->out.n_dup++] = regs->data[p->sreg_dev];
}

static int dup_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct dup_priv *p = priv;

	if (nftdp_vm_attr(e, NFTNL_EXPR_DUP_SREG_ADDR) || cc->chain->family != NFPROTO_NETDEV)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dup: to an address not supported by nftdp");
	if (cc->chain->base && cc->chain->hook != NF_NETDEV_INGRESS &&
	    cc->chain->hook != NF_NETDEV_EGRESS)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dup: only in netdev ingress and egress");
	return nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DUP_SREG_DEV, &p->sreg_dev, 4);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_dup = {
    .name = "dup",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "dup",
	    .size = sizeof(struct dup_priv),
	    .init = dup_init,
	    .eval = dup_eval,
	},
};
