// SPDX-License-Identifier: BSD-3-Clause
/*
 * redir: destination NAT to the receiving host itself (nft_redir.c). In
 * wire mode nftdp has no local stack for a redirected connection to reach,
 * so compiling one fails with EOPNOTSUPP and says why.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

static int redir_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	(void)e;
	(void)priv;
	return nftdp_vm_errf(cc, -EOPNOTSUPP, "redirect: no local stack in wire mode");
}

const struct nftdp_vm_expr_type nftdp_vm_expr_redir = {
    .name = "redir",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "redir",
	    .init = redir_init,
	},
};
