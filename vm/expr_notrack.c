// SPDX-License-Identifier: BSD-3-Clause
/* notrack: mark the packet untracked unless it already has an entry.
 * Mirrors nft_notrack_eval (nft_ct.c). */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

static void notrack_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)op;
	(void)regs;
	(void)ctx;
	/* previously seen, untracked, or a zone template attached: ignore */
	if (pkt->ct || pkt->ct_untracked || pkt->ct_zone_dir)
		return;
	pkt->ct_untracked = true;
	pkt->out.notrack = true;
}

static int notrack_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	(void)e;
	(void)priv;
	/* nft_notrack_validate: prerouting and output only */
	if (cc->chain->base && cc->chain->family != NFPROTO_NETDEV &&
	    cc->chain->hook != NF_INET_PRE_ROUTING && cc->chain->hook != NF_INET_LOCAL_OUT)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "notrack: only in prerouting and output");
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_notrack = {
    .name = "notrack",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "notrack",
	    .init = notrack_init,
	    .eval = notrack_eval,
	},
};
