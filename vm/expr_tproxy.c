// SPDX-License-Identifier: BSD-3-Clause
/*
 * tproxy (nft_tproxy.c): refused, saying why. The kernel's tproxy assigns
 * the packet to a listening (or established) socket of the host
 * (nf_tproxy_get_sock_v4/v6) without rewriting it; the dataplane cannot
 * look up the host's sockets, so no result would be exact. redirect, with
 * the exception path (--host-ports), is the DNAT way to the same listener.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

static int tproxy_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	(void)e;
	(void)priv;
	return nftdp_vm_errf(cc, -EOPNOTSUPP,
			     "tproxy: not supported by nftdp (it needs the host's socket table; "
			     "redirect with --host-ports reaches the same listener)");
}

const struct nftdp_vm_expr_type nftdp_vm_expr_tproxy = {
    .name = "tproxy",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "tproxy",
	    .init = tproxy_init,
	},
};
