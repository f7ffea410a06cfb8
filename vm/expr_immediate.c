// SPDX-License-Identifier: BSD-3-Clause
/*
 * immediate: load a constant into a data register or set the verdict.
 * Mirrors nft_immediate.c and nft_verdict_init (nf_tables_api.c). The verdict
 * variant is inlined by vm.c (NFTDP_VM_FAST_IMMEDIATE).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

NFTDP_VM_PRIV_CHECK(struct nftdp_vm_immediate);

static void immediate_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nftdp_vm_immediate *p = (const void *)op->priv;

	(void)pkt;
	(void)ctx;
	memcpy(&regs->data[p->dreg], p->data, p->dlen); /* nft_data_copy */
	if (p->dlen % 4)
		memset((uint8_t *)&regs->data[p->dreg] + p->dlen, 0, 4 - p->dlen % 4);
}

static void immediate_verdict_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
				   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)pkt;
	(void)ctx;
	regs->verdict = ((const struct nftdp_vm_immediate *)(const void *)op->priv)->verdict;
}

static int immediate_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_immediate *p = priv;
	uint32_t len;
	int rc;

	rc = nftdp_vm_parse_data(cc, e, NFTNL_EXPR_IMM_DATA, p->data, sizeof(p->data), &len);
	if (rc < 0)
		return rc;
	p->dlen = (uint8_t)len;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_IMM_DREG, &p->dreg, NFT_DATA_VALUE, len);
}

/* nft_verdict_init */
static int immediate_verdict_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_immediate *p = priv;
	uint32_t code;

	p->dreg = NFTDP_VM_REG_VERDICT;
	if (!nftdp_vm_attr(e, NFTNL_EXPR_IMM_VERDICT))
		return nftdp_vm_errf(cc, -EINVAL, "immediate: verdict missing");
	code = nftdp_vm_u32(e, NFTNL_EXPR_IMM_VERDICT);
	p->verdict.code = code;
	switch ((int32_t)code) {
	case NFT_CONTINUE:
	case NFT_BREAK:
	case NFT_RETURN:
		return 0;
	case NFT_JUMP:
	case NFT_GOTO: {
		const char *name = nftdp_vm_attr(e, NFTNL_EXPR_IMM_CHAIN)
				       ? nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN)
				       : NULL;
		uint32_t id = nftdp_vm_attr(e, NFTNL_EXPR_IMM_CHAIN_ID)
				  ? nftdp_vm_u32(e, NFTNL_EXPR_IMM_CHAIN_ID)
				  : 0;
		struct nftdp_vm_chain *c = NULL;

		if (!name && !id)
			return nftdp_vm_errf(cc, -EINVAL, "immediate: jump without a chain");
		if (cc->res && cc->res->chain)
			c = cc->res->chain(cc->res->opaque, cc->chain->table, name, id);
		if (!c)
			return nftdp_vm_errf(cc, -ENOENT, "immediate: chain %s not found",
					     name ? name : "(by id)");
		if (c->base)
			return nftdp_vm_errf(cc, -EOPNOTSUPP,
					     "immediate: cannot jump to base chain %s", c->name);
		p->verdict.chain = c;
		return 0;
	}
	default:
		break;
	}
	switch (code & NF_VERDICT_MASK) {
	case NF_ACCEPT:
	case NF_DROP:
		if (code & ~NF_VERDICT_MASK)
			return nftdp_vm_errf(cc, -EINVAL, "immediate: verdict 0x%x", code);
		return 0;
	case NF_QUEUE:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "queue: not supported by nftdp");
	default:
		return nftdp_vm_errf(cc, -EINVAL, "immediate: invalid verdict 0x%x", code);
	}
}

static int immediate_targets(const void *priv, const struct nftdp_vm_chain **out, int max)
{
	const struct nftdp_vm_immediate *p = priv;

	if ((p->verdict.code == (uint32_t)NFT_JUMP || p->verdict.code == (uint32_t)NFT_GOTO) &&
	    p->verdict.chain) {
		if (max >= 1)
			out[0] = p->verdict.chain;
		return 1;
	}
	return 0;
}

static const struct nftdp_vm_expr_ops immediate_ops = {
    .name = "immediate",
    .size = sizeof(struct nftdp_vm_immediate),
    .init = immediate_init,
    .eval = immediate_eval,
    .flow = NFTDP_VM_FLOW_REGS,
};

static const struct nftdp_vm_expr_ops immediate_verdict_ops = {
    .name = "immediate",
    .size = sizeof(struct nftdp_vm_immediate),
    .fast = NFTDP_VM_FAST_IMMEDIATE,
    .init = immediate_verdict_init,
    .eval = immediate_verdict_eval,
    .flow = NFTDP_VM_FLOW_REGS,
    .targets = immediate_targets,
};

static const struct nftdp_vm_expr_ops *immediate_select_ops(struct nftdp_vm_cctx *cc,
							    const struct nftnl_expr *e)
{
	if (!nftdp_vm_attr(e, NFTNL_EXPR_IMM_DREG)) {
		nftdp_vm_errf(cc, -EINVAL, "immediate: destination register missing");
		return NULL;
	}
	if (nftdp_vm_u32(e, NFTNL_EXPR_IMM_DREG) == NFT_REG_VERDICT)
		return &immediate_verdict_ops;
	if (!nftdp_vm_attr(e, NFTNL_EXPR_IMM_DATA)) {
		nftdp_vm_errf(cc, -EINVAL, "immediate: verdict into a data register");
		return NULL;
	}
	return &immediate_ops;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_immediate = {
    .name = "immediate",
    .select_ops = immediate_select_ops,
};
