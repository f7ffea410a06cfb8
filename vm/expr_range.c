// SPDX-License-Identifier: BSD-3-Clause
/* range: from <= reg <= to (or not), memcmp order. Mirrors nft_range.c. */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct range_priv {
	uint8_t from[16];
	uint8_t to[16];
	uint8_t sreg;
	uint8_t len;
	uint8_t op;
};
NFTDP_VM_PRIV_CHECK(struct range_priv);

static void range_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct range_priv *p = (const void *)op->priv;
	int d1 = memcmp(&regs->data[p->sreg], p->from, p->len);
	int d2 = memcmp(&regs->data[p->sreg], p->to, p->len);
	bool mismatch;

	(void)pkt;
	(void)ctx;
	if (p->op == NFT_RANGE_EQ)
		mismatch = d1 < 0 || d2 > 0;
	else
		mismatch = d1 >= 0 && d2 <= 0;
	if (mismatch)
		regs->verdict.code = NFT_BREAK;
}

static int range_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct range_priv *p = priv;
	uint32_t l1, l2, op;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_RANGE_SREG) || !nftdp_vm_attr(e, NFTNL_EXPR_RANGE_OP) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_RANGE_FROM_DATA) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_RANGE_TO_DATA))
		return nftdp_vm_errf(cc, -EINVAL, "range: attribute missing");
	rc = nftdp_vm_parse_data(cc, e, NFTNL_EXPR_RANGE_FROM_DATA, p->from, 16, &l1);
	if (rc < 0)
		return rc;
	rc = nftdp_vm_parse_data(cc, e, NFTNL_EXPR_RANGE_TO_DATA, p->to, 16, &l2);
	if (rc < 0)
		return rc;
	if (l1 != l2)
		return nftdp_vm_errf(cc, -EINVAL, "range: from and to differ in length");
	p->len = (uint8_t)l1;
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_RANGE_SREG, &p->sreg, l1);
	if (rc < 0)
		return rc;
	op = nftdp_vm_u32(e, NFTNL_EXPR_RANGE_OP);
	if (op != NFT_RANGE_EQ && op != NFT_RANGE_NEQ)
		return nftdp_vm_errf(cc, -EINVAL, "range: unknown operation %u", op);
	p->op = (uint8_t)op;
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_range = {
    .name = "range",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "range",
	    .size = sizeof(struct range_priv),
	    .init = range_init,
	    .eval = range_eval,
	    .flow = NFTDP_VM_FLOW_REGS,
	},
};
