// SPDX-License-Identifier: BSD-3-Clause
/*
 * socket: the local socket a packet belongs to (nft_socket.c). The kernel
 * takes skb->sk or looks one up by the packet's tuple; nftdp has no local
 * sockets (the packets it sees are forwarded), so there is none and every
 * key breaks the rule, as nft_socket_eval does without a socket.
 * Parameters are checked as nft_socket_init checks them; the hooks
 * (nft_socket_validate) by control/.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

static void socket_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)op;
	(void)pkt;
	(void)ctx;
	regs->verdict.code = NFT_BREAK; /* no socket */
}

static int socket_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	uint8_t *dreg = priv;
	int rc;
	uint32_t key, len;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_SOCKET_DREG) || !nftdp_vm_attr(e, NFTNL_EXPR_SOCKET_KEY))
		return nftdp_vm_errf(cc, -EINVAL, "socket: key or register missing");
	rc = nftdp_vm_ip_family_only(cc);
	if (rc < 0)
		return rc;
	key = nftdp_vm_u32(e, NFTNL_EXPR_SOCKET_KEY);
	switch (key) {
	case NFT_SOCKET_TRANSPARENT:
	case NFT_SOCKET_WILDCARD:
		len = 1;
		break;
	case NFT_SOCKET_MARK:
		len = 4;
		break;
	case NFT_SOCKET_CGROUPV2:
		if (!nftdp_vm_attr(e, NFTNL_EXPR_SOCKET_LEVEL))
			return nftdp_vm_errf(cc, -EINVAL, "socket cgroupv2: level missing");
		if (nftdp_vm_u32(e, NFTNL_EXPR_SOCKET_LEVEL) > 255)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "socket cgroupv2: level above 255");
		len = 8;
		break;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "socket: key %u unknown", key);
	}
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_SOCKET_DREG, dreg, NFT_DATA_VALUE, len);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_socket = {
    .name = "socket",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "socket",
	    .flow = NFTDP_VM_FLOW_REGS, /* breaks for every packet */
	    .init = socket_init,
	    .eval = socket_eval,
	},
};
