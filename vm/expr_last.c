// SPDX-License-Identifier: BSD-3-Clause
/*
 * last: when the rule last matched. Mirrors nft_last.c (jiffies become
 * ctx->now_ms, CLOCK_MONOTONIC milliseconds). The value lives in a shared
 * cell so it survives recompiles.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */
#include <time.h>

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct last_priv {
	uint32_t slot;
};
NFTDP_VM_PRIV_CHECK(struct last_priv);

static void last_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct last_priv *p = (const void *)op->priv;
	struct nftdp_vm_cell *c = &ctx->state->cells[p->slot];

	(void)regs;
	(void)pkt;
	if (atomic_load_explicit(&c->last.ms, memory_order_relaxed) != ctx->now_ms)
		atomic_store_explicit(&c->last.ms, ctx->now_ms, memory_order_relaxed);
	if (!atomic_load_explicit(&c->last.set, memory_order_relaxed))
		atomic_store_explicit(&c->last.set, 1, memory_order_relaxed);
}

static int last_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct last_priv *p = priv;
	struct nftdp_vm_cell *c;
	bool created;
	int rc;

	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_CELL, &p->slot, &created);
	if (rc < 0)
		return rc;
	c = &cc->st->cells[p->slot];
	c->type = NFTDP_VM_CELL_LAST;
	if (created && nftdp_vm_attr(e, NFTNL_EXPR_LAST_SET) &&
	    nftdp_vm_u32(e, NFTNL_EXPR_LAST_SET)) {
		uint64_t now_ms = nftdp_now_ms(), ago = 0;

		if (nftdp_vm_attr(e, NFTNL_EXPR_LAST_MSECS))
			ago = nftnl_expr_get_u64(e, NFTNL_EXPR_LAST_MSECS);
		atomic_store(&c->last.ms, now_ms > ago ? now_ms - ago : 0);
		atomic_store(&c->last.set, 1);
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_last = {
    .name = "last",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "last",
	    .size = sizeof(struct last_priv),
	    .init = last_init,
	    .eval = last_eval,
	},
};
