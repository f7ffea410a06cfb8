// SPDX-License-Identifier: BSD-3-Clause
/*
 * lookup: key in a set (optionally inverted), or a map's data into a
 * register or the verdict register. Mirrors nft_lookup.c; the set itself is
 * sets/' business, called directly (a test's stand-in: struct
 * nftdp_vm_set_ops).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

static void lookup_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nftdp_vm_lookup *p = (const void *)op->priv;
	const void *data = NULL;
	bool found;

	found = vm_set_lookup(p->ops, p->set, &regs->data[p->sreg], &data, ctx) ^ p->invert;
	if (!found) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	if (p->counter_at && data) {
		/* nft_set_elem_update_expr: the element's own counter */
		uint32_t slot;

		memcpy(&slot, (const uint8_t *)data + p->counter_at - 1, sizeof(slot));
		if (slot)
			nftdp_vm_counter_eval_slot(slot - 1, pkt, ctx);
	}
	if (p->expr_at && data &&
	    nftdp_vm_elem_expr_eval((uint8_t *)(uintptr_t)data + p->expr_at - 1, pkt, ctx)) {
		/* nft_set_elem_update_expr: an element's quota or limit */
		regs->verdict.code = NFT_BREAK;
		return;
	}
	if (!p->dreg_set)
		return;
	if (!data) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	if (p->verdict) {
		const struct nftdp_vm_set_verdict *v = data;

		regs->verdict.code = v->code;
		if (v->code == (uint32_t)NFT_JUMP || v->code == (uint32_t)NFT_GOTO) {
			if (v->chain_id >= ctx->n_chains || !ctx->chains[v->chain_id]) {
				ctx->drops[NFTDP_VM_DROP_VMAP_CHAIN]++;
				ctx->flow_taint = 1; /* counted per packet: never cached */
				regs->verdict.code = NF_DROP;
				return;
			}
			regs->verdict.chain = ctx->chains[v->chain_id];
		}
		return;
	}
	memcpy(&regs->data[p->dreg], data, p->dlen); /* nft_data_copy */
	if (p->dlen % 4)
		memset((uint8_t *)&regs->data[p->dreg] + p->dlen, 0, 4 - p->dlen % 4);
}

static int lookup_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_lookup *p = priv;
	struct nftdp_vm_set_info si;
	uint32_t flags = 0;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_LOOKUP_SREG))
		return nftdp_vm_errf(cc, -EINVAL, "lookup: source register missing");
	rc = nftdp_vm_resolve_set(cc, e, NFTNL_EXPR_LOOKUP_SET, NFTNL_EXPR_LOOKUP_SET_ID, &si);
	if (rc < 0)
		return rc;
	p->set = si.set;
	p->ops = si.ops;
	/* what the flow cache may assume: elements that time out, a set the
	 * packet path fills, or a test's stand-in change without a commit;
	 * an anonymous set never changes; element expressions (quota, limit)
	 * run for every packet */
	if (si.ops || (si.flags & (NFT_SET_TIMEOUT | NFT_SET_EVAL)) || si.elem_expr_at)
		p->flow_lvl = NFTDP_VM_FLOW_LVL_NEVER;
	else if (si.flags & NFT_SET_CONSTANT)
		p->flow_lvl = NFTDP_VM_FLOW_LVL_ALWAYS;
	else
		p->flow_lvl = NFTDP_VM_FLOW_LVL_NO_DYNSET;
	if (si.elem_counter_at > UINT16_MAX)
		return nftdp_vm_errf(cc, -EINVAL, "lookup: element counter offset");
	p->counter_at = (uint16_t)si.elem_counter_at;
	if (si.elem_expr_at > NFTDP_SET_DATA_MAX - NFTDP_VM_ELEM_EXPR_SIZE + 1)
		return nftdp_vm_errf(cc, -EINVAL, "lookup: element expression offset");
	p->expr_at = (uint16_t)si.elem_expr_at;
	cc->needs_ct |=
	    si.elem_uses_ct || (si.elem_expr_tmpl && nftdp_vm_elem_expr_uses_ct(si.elem_expr_tmpl));
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_LOOKUP_SREG, &p->sreg, si.klen);
	if (rc < 0)
		return rc;
	if (nftdp_vm_attr(e, NFTNL_EXPR_LOOKUP_FLAGS))
		flags = nftdp_vm_u32(e, NFTNL_EXPR_LOOKUP_FLAGS);
	if (flags & ~(uint32_t)NFT_LOOKUP_F_INV)
		return nftdp_vm_errf(cc, -EINVAL, "lookup: flags 0x%x", flags);
	if (flags & NFT_LOOKUP_F_INV) {
		if (si.flags & NFT_SET_MAP)
			return nftdp_vm_errf(cc, -EINVAL, "lookup: inverted lookup in a map");
		p->invert = true;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_LOOKUP_DREG)) {
		if (p->invert)
			return nftdp_vm_errf(cc, -EINVAL, "lookup: inverted lookup with data");
		if (!(si.flags & NFT_SET_MAP))
			return nftdp_vm_errf(cc, -EINVAL, "lookup: data from a set that is no map");
		rc = nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_LOOKUP_DREG, &p->dreg, si.dtype,
					      si.dlen);
		if (rc < 0)
			return rc;
		p->dreg_set = true;
		p->verdict = si.dtype == NFT_DATA_VERDICT;
		p->dlen = (uint8_t)si.dlen;
		if (p->verdict && si.n_vchains) {
			/* the resolver's array lives only for its call: the
			 * chain keeps its own copy for nftdp_vm_validate */
			const struct nftdp_vm_chain **v;

			if (!si.vchains)
				return nftdp_vm_errf(cc, -EINVAL, "lookup: verdict map targets");
			v = nftdp_vm_blob(cc, si.n_vchains * sizeof(*v));
			if (!v)
				return -ENOMEM;
			memcpy(v, si.vchains, si.n_vchains * sizeof(*v));
			p->vchains = v;
			p->n_vchains = si.n_vchains;
		}
	}
	return 0;
}

/* a plain set: vm.c's inlined lookup (found or not, nothing else) */
bool nftdp_vm_lookup_fast(const struct nftdp_vm_op *op)
{
	const struct nftdp_vm_lookup *p = (const void *)op->priv;

	return op->ops->flow == NFTDP_VM_FLOW_LOOKUP && !p->ops && !p->dreg_set && !p->counter_at &&
	       !p->expr_at;
}

static uint8_t lookup_flow_level(const void *priv)
{
	return ((const struct nftdp_vm_lookup *)priv)->flow_lvl;
}

bool nftdp_vm_lookup_is_vmap(const struct nftdp_vm_op *op)
{
	return op->ops->flow == NFTDP_VM_FLOW_LOOKUP &&
	       ((const struct nftdp_vm_lookup *)(const void *)op->priv)->verdict;
}

static int lookup_targets(const void *priv, const struct nftdp_vm_chain **out, int max)
{
	const struct nftdp_vm_lookup *p = priv;
	int n = 0;

	if (!p->verdict)
		return 0;
	for (uint32_t i = 0; i < p->n_vchains && n < max; i++)
		out[n++] = p->vchains[i];
	return p->n_vchains > INT32_MAX ? INT32_MAX : (int)p->n_vchains;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_lookup = {
    .name = "lookup",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "lookup",
	    .size = sizeof(struct nftdp_vm_lookup),
	    .init = lookup_init,
	    .eval = lookup_eval,
	    .flow = NFTDP_VM_FLOW_LOOKUP,
	    .flow_level = lookup_flow_level,
	    .targets = lookup_targets,
	},
};
