// SPDX-License-Identifier: BSD-3-Clause
/*
 * numgen: incremental (shared atomic counter, as nft_ng_inc_gen) or random
 * (per-worker PRNG, reciprocal_scale) numbers modulo modulus, plus offset.
 * Mirrors nft_numgen.c.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct numgen_priv {
	uint32_t modulus;
	uint32_t offset;
	uint32_t slot;
	uint8_t dreg;
};
NFTDP_VM_PRIV_CHECK(struct numgen_priv);

static void ng_inc_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct numgen_priv *p = (const void *)op->priv;
	_Atomic uint32_t *counter = &ctx->state->cells[p->slot].numgen.counter;
	uint32_t oval = atomic_load_explicit(counter, memory_order_relaxed), nval;

	(void)pkt;
	do {
		nval = (oval + 1 < p->modulus) ? oval + 1 : 0;
	} while (!atomic_compare_exchange_weak_explicit(counter, &oval, nval, memory_order_relaxed,
							memory_order_relaxed));
	regs->data[p->dreg] = nval + p->offset;
}

static void ng_random_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct numgen_priv *p = (const void *)op->priv;

	(void)pkt;
	regs->data[p->dreg] =
	    nftdp_vm_reciprocal_scale(nftdp_vm_prandom(ctx), p->modulus) + p->offset;
}

static int ng_common(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, struct numgen_priv *p)
{
	if (!nftdp_vm_attr(e, NFTNL_EXPR_NG_MODULUS) || !nftdp_vm_attr(e, NFTNL_EXPR_NG_DREG))
		return nftdp_vm_errf(cc, -EINVAL, "numgen: modulus or register missing");
	p->modulus = nftdp_vm_u32(e, NFTNL_EXPR_NG_MODULUS);
	if (p->modulus == 0)
		return nftdp_vm_errf(cc, -ERANGE, "numgen: modulus 0");
	if (nftdp_vm_attr(e, NFTNL_EXPR_NG_OFFSET))
		p->offset = nftdp_vm_u32(e, NFTNL_EXPR_NG_OFFSET);
	if (p->offset + p->modulus - 1 < p->offset)
		return nftdp_vm_errf(cc, -EOVERFLOW, "numgen: offset + modulus overflow");
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_NG_DREG, &p->dreg, NFT_DATA_VALUE, 4);
}

static int ng_inc_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct numgen_priv *p = priv;
	struct nftdp_vm_cell *c;
	bool created;
	int rc = ng_common(cc, e, p);

	if (rc < 0)
		return rc;
	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_CELL, &p->slot, &created);
	if (rc < 0)
		return rc;
	c = &cc->st->cells[p->slot];
	c->type = NFTDP_VM_CELL_NUMGEN;
	if (created)
		atomic_store(&c->numgen.counter, p->modulus - 1); /* first value is 0 */
	return 0;
}

static int ng_random_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	return ng_common(cc, e, priv);
}

static const struct nftdp_vm_expr_ops ng_inc_ops = {
    .name = "numgen",
    .size = sizeof(struct numgen_priv),
    .init = ng_inc_init,
    .eval = ng_inc_eval,
};
static const struct nftdp_vm_expr_ops ng_random_ops = {
    .name = "numgen",
    .size = sizeof(struct numgen_priv),
    .init = ng_random_init,
    .eval = ng_random_eval,
};

static const struct nftdp_vm_expr_ops *ng_select_ops(struct nftdp_vm_cctx *cc,
						     const struct nftnl_expr *e)
{
	uint32_t type;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_NG_TYPE)) {
		nftdp_vm_errf(cc, -EINVAL, "numgen: type missing");
		return NULL;
	}
	type = nftdp_vm_u32(e, NFTNL_EXPR_NG_TYPE);
	switch (type) {
	case NFT_NG_INCREMENTAL:
		return &ng_inc_ops;
	case NFT_NG_RANDOM:
		return &ng_random_ops;
	}
	nftdp_vm_errf(cc, -EOPNOTSUPP, "numgen: type %u", type);
	return NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_numgen = {
    .name = "numgen",
    .select_ops = ng_select_ops,
};
