// SPDX-License-Identifier: BSD-3-Clause
/*
 * quota: byte quota, "until" (break once over) or "over" (NFT_QUOTA_F_INV:
 * break until over). Mirrors nft_quota.c: consumed is one shared atomic,
 * over means consumed > quota.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct quota_priv {
	uint32_t slot;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct quota_priv);

bool nftdp_vm_quota_over(struct nftdp_vm_cell *c, uint64_t len)
{
	uint64_t consumed =
	    atomic_fetch_add_explicit(&c->quota.consumed, len, memory_order_relaxed) + len;

	return consumed > c->quota.bytes;
}

static void quota_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct quota_priv *p = (const void *)op->priv;

	if (nftdp_vm_quota_over(&ctx->state->cells[p->slot], pkt->skb_len) ^ p->invert)
		regs->verdict.code = NFT_BREAK;
}

static int quota_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct quota_priv *p = priv;
	struct nftdp_vm_cell *c;
	uint64_t bytes;
	uint32_t flags = 0;
	bool created;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_QUOTA_BYTES))
		return nftdp_vm_errf(cc, -EINVAL, "quota: bytes missing");
	bytes = nftnl_expr_get_u64(e, NFTNL_EXPR_QUOTA_BYTES);
	if (bytes > INT64_MAX)
		return nftdp_vm_errf(cc, -EOVERFLOW, "quota: %llu bytes",
				     (unsigned long long)bytes);
	if (nftdp_vm_attr(e, NFTNL_EXPR_QUOTA_FLAGS))
		flags = nftdp_vm_u32(e, NFTNL_EXPR_QUOTA_FLAGS);
	if (flags & ~(uint32_t)(NFT_QUOTA_F_INV | NFT_QUOTA_F_DEPLETED))
		return nftdp_vm_errf(cc, -EINVAL, "quota: flags 0x%x", flags);
	p->invert = flags & NFT_QUOTA_F_INV;
	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_CELL, &p->slot, &created);
	if (rc < 0)
		return rc;
	c = &cc->st->cells[p->slot];
	c->type = NFTDP_VM_CELL_QUOTA;
	c->quota.bytes = bytes;
	if (created && nftdp_vm_attr(e, NFTNL_EXPR_QUOTA_CONSUMED))
		atomic_store(&c->quota.consumed, nftnl_expr_get_u64(e, NFTNL_EXPR_QUOTA_CONSUMED));
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_quota = {
    .name = "quota",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "quota",
	    .size = sizeof(struct quota_priv),
	    .init = quota_init,
	    .eval = quota_eval,
	},
};
