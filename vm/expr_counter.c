// SPDX-License-Identifier: BSD-3-Clause
/*
 * counter: packets and bytes. Mirrors nft_counter.c's per-cpu counters: each
 * worker adds to its own row of the arena (struct nftdp_vm_state), the
 * control thread sums the rows when nft lists the rule.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

NFTDP_VM_PRIV_CHECK(struct nftdp_vm_counter_op);

void nftdp_vm_counter_eval_slot(uint32_t slot, struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_counter *c = nftdp_vm_counter_slot(ctx->state, ctx->worker, slot);

	/* one writer per row: plain read, relaxed store so readers see whole words */
	__atomic_store_n(&c->packets, c->packets + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->bytes, c->bytes + pkt->skb_len, __ATOMIC_RELAXED);
	nftdp_vm_flow_note_counter(ctx, slot);
}

static void counter_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nftdp_vm_counter_op *p = (const void *)op->priv;

	(void)regs;
	nftdp_vm_counter_eval_slot(p->slot, pkt, ctx);
}

static int counter_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_counter_op *p = priv;
	bool created;
	int rc;

	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_COUNTER, &p->slot, &created);
	if (rc < 0)
		return rc;
	if (created) {
		/* restored rulesets carry their values (nft_counter_do_init);
		 * the slot is not published yet, so a plain store is fine */
		struct nftdp_vm_counter *c = nftdp_vm_counter_slot(cc->st, 0, p->slot);

		if (nftdp_vm_attr(e, NFTNL_EXPR_CTR_PACKETS))
			c->packets = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_PACKETS);
		if (nftdp_vm_attr(e, NFTNL_EXPR_CTR_BYTES))
			c->bytes = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_BYTES);
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_counter = {
    .name = "counter",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "counter",
	    .size = sizeof(struct nftdp_vm_counter_op),
	    .init = counter_init,
	    .eval = counter_eval,
	    .fast = NFTDP_VM_FAST_COUNTER, /* inlined by vm.c */
	    .flow = NFTDP_VM_FLOW_COUNTER,
	},
};
