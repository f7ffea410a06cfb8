// SPDX-License-Identifier: BSD-3-Clause
/*
 * xfrm (`ipsec in|out ...`): the IPsec state a packet was decrypted with
 * (in: its secpath) or will be encrypted with (out: its route's xfrm
 * bundle). nftdp terminates no IPsec, so a packet has neither: every key
 * breaks the rule, as nft_xfrm_get_eval_in/_out do for a packet without
 * a secpath or an xfrm dst. Parameters are checked as nft_xfrm_get_init
 * checks them; the hooks (nft_xfrm_validate) by control/.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#include <linux/xfrm.h> /* after netinet/in.h (vm_priv.h) */

#ifndef XFRM_MAX_DEPTH
#define XFRM_MAX_DEPTH 6
#endif

static void xfrm_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)op;
	(void)pkt;
	(void)ctx;
	regs->verdict.code = NFT_BREAK; /* no secpath, no xfrm route */
}

static int xfrm_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	uint8_t *dreg = priv;
	int rc;
	uint32_t key, len, spnum = 0;
	uint8_t dir;

	rc = nftdp_vm_ip_family_only(cc);
	if (rc < 0)
		return rc;
	if (!nftdp_vm_attr(e, NFTNL_EXPR_XFRM_KEY) || !nftdp_vm_attr(e, NFTNL_EXPR_XFRM_DIR) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_XFRM_DREG))
		return nftdp_vm_errf(cc, -EINVAL, "xfrm: key, direction or register missing");
	key = nftdp_vm_u32(e, NFTNL_EXPR_XFRM_KEY);
	switch (key) {
	case NFT_XFRM_KEY_REQID:
	case NFT_XFRM_KEY_SPI:
	case NFT_XFRM_KEY_DADDR_IP4:
	case NFT_XFRM_KEY_SADDR_IP4:
		len = 4;
		break;
	case NFT_XFRM_KEY_DADDR_IP6:
	case NFT_XFRM_KEY_SADDR_IP6:
		len = 16;
		break;
	default:
		return nftdp_vm_errf(cc, -EINVAL, "xfrm: key %u unknown", key);
	}
	dir = nftnl_expr_get_u8(e, NFTNL_EXPR_XFRM_DIR);
	if (dir != XFRM_POLICY_IN && dir != XFRM_POLICY_OUT)
		return nftdp_vm_errf(cc, -EINVAL, "xfrm: direction %u unknown", dir);
	if (nftdp_vm_attr(e, NFTNL_EXPR_XFRM_SPNUM))
		spnum = nftdp_vm_u32(e, NFTNL_EXPR_XFRM_SPNUM);
	if (spnum >= XFRM_MAX_DEPTH)
		return nftdp_vm_errf(cc, -ERANGE, "xfrm: spnum %u past the secpath", spnum);
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_XFRM_DREG, dreg, NFT_DATA_VALUE, len);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_xfrm = {
    .name = "xfrm",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "xfrm",
	    .flow = NFTDP_VM_FLOW_REGS, /* breaks for every packet */
	    .init = xfrm_init,
	    .eval = xfrm_eval,
	},
};
