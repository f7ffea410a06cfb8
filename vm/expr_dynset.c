// SPDX-License-Identifier: BSD-3-Clause
/*
 * dynset: add, update or delete a set element from the packet path
 * (`add @s { ip saddr timeout 10s }`). Mirrors nft_dynset.c; the element
 * store is sets/' nftdp_set_dp_update (or a test stand-in's callbacks). Per-element expressions
 * (NFTA_DYNSET_EXPR) are refused for now.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct dynset_priv {
	struct nftdp_set *set;
	const struct nftdp_vm_set_ops *ops;
	uint64_t timeout_ms;
	uint8_t sreg_key, sreg_data, op;
	bool invert, has_data;
};
NFTDP_VM_PRIV_CHECK(struct dynset_priv);

static void dynset_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct dynset_priv *p = (const void *)op->priv;
	const void *key = &regs->data[p->sreg_key];

	(void)pkt;
	if (p->op == NFT_DYNSET_OP_DELETE) {
		vm_set_remove(p->ops, p->set, key, ctx->now_ms);
		return;
	}
	if (vm_set_update(p->ops, p->set, key, p->has_data ? &regs->data[p->sreg_data] : NULL,
			  p->timeout_ms, p->op == NFT_DYNSET_OP_UPDATE, ctx->now_ms)) {
		if (p->invert)
			regs->verdict.code = NFT_BREAK;
		return;
	}
	if (!p->invert)
		regs->verdict.code = NFT_BREAK;
}

static int count_expr(struct nftnl_expr *e, void *arg)
{
	(void)e;
	(*(int *)arg)++;
	return 0;
}

static int dynset_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct dynset_priv *p = priv;
	struct nftdp_vm_set_info si;
	uint32_t flags = 0, op;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_SREG_KEY) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_OP))
		return nftdp_vm_errf(cc, -EINVAL, "dynset: key register or operation missing");
	int n_exprs = 0;

	/* nftnl_expr_add_expr() lists them without setting an attribute bit */
	nftnl_expr_expr_foreach(e, count_expr, &n_exprs);
	if (n_exprs || nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_EXPR) ||
	    nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_EXPRESSIONS))
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "dynset: per-element expressions not supported by nftdp");
	if (nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_FLAGS))
		flags = nftdp_vm_u32(e, NFTNL_EXPR_DYNSET_FLAGS);
	if (flags & ~(uint32_t)(NFT_DYNSET_F_INV | NFT_DYNSET_F_EXPR))
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: flags 0x%x", flags);
	p->invert = flags & NFT_DYNSET_F_INV;
	rc = nftdp_vm_resolve_set(cc, e, NFTNL_EXPR_DYNSET_SET_NAME, NFTNL_EXPR_DYNSET_SET_ID, &si);
	if (rc < 0)
		return rc;
	if (si.flags & NFT_SET_OBJECT)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: object maps");
	if (si.ops && (!si.ops->update || !si.ops->remove))
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: set cannot be updated");
	if (si.flags & NFT_SET_CONSTANT)
		return nftdp_vm_errf(cc, -EBUSY, "dynset: constant set");
	p->set = si.set;
	p->ops = si.ops;
	op = nftdp_vm_u32(e, NFTNL_EXPR_DYNSET_OP);
	if (op > NFT_DYNSET_OP_DELETE)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: operation %u", op);
	p->op = (uint8_t)op;
	if (nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_TIMEOUT)) {
		if (!(si.flags & NFT_SET_TIMEOUT))
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: timeout on a set without");
		p->timeout_ms = nftnl_expr_get_u64(e, NFTNL_EXPR_DYNSET_TIMEOUT);
	}
	if (!p->timeout_ms)
		p->timeout_ms = si.timeout_ms;
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DYNSET_SREG_KEY, &p->sreg_key, si.klen);
	if (rc < 0)
		return rc;
	if (nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_SREG_DATA)) {
		if (!(si.flags & NFT_SET_MAP))
			return nftdp_vm_errf(cc, -EINVAL, "dynset: data for a set that is no map");
		if (si.dtype == NFT_DATA_VERDICT)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: verdict data");
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DYNSET_SREG_DATA, &p->sreg_data,
					     si.dlen);
		if (rc < 0)
			return rc;
		p->has_data = true;
	} else if (si.flags & NFT_SET_MAP) {
		return nftdp_vm_errf(cc, -EINVAL, "dynset: map without data");
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_dynset = {
    .name = "dynset",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "dynset",
	    .size = sizeof(struct dynset_priv),
	    .init = dynset_init,
	    .eval = dynset_eval,
	    .flow = NFTDP_VM_FLOW_DYNSET,
	},
};
