// SPDX-License-Identifier: BSD-3-Clause
/*
 * limit: token bucket on packets or bytes, with burst and "over"
 * (NFT_LIMIT_F_INV). Mirrors nft_limit.c: tokens are nanoseconds, a packet
 * costs nsecs/rate (bytes: nsecs*len/rate), the bucket holds tokens_max.
 * The kernel keeps {tokens, last} under a spinlock; here the same bucket is
 * one atomic word, empty_at = last - tokens (the GCRA form): tokens(now) =
 * min(tokens_max, now - empty_at), so workers update it with a CAS.
 * ctx->now_ns must be CLOCK_MONOTONIC nanoseconds.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#define NFT_LIMIT_PKT_BURST_DEFAULT 5
#define NSEC_PER_SEC 1000000000ull
#define LIMIT_EPOCH (1ull << 63)

struct limit_priv {
	uint64_t tokens_max;
	uint64_t rate;
	uint64_t nsecs;
	uint64_t cost; /* packets */
	uint32_t slot;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct limit_priv);

/* returns true when the rule must break (nft_limit_eval's result) */
bool nftdp_vm_limit_eval(struct nftdp_vm_cell *c, uint64_t now, uint64_t tokens_max, uint64_t cost,
			 bool invert)
{
	return nftdp_vm_limit_eval_at(&c->limit.empty_at, now, tokens_max, cost, invert);
}

/* the bucket of a cell or of a set element (elem_expr.c) */
bool nftdp_vm_limit_eval_at(_Atomic uint64_t *empty_at, uint64_t now, uint64_t tokens_max,
			    uint64_t cost, bool invert)
{
	uint64_t e = atomic_load_explicit(empty_at, memory_order_relaxed), ne, tokens;
	bool ok;

	/* empty_at = now - tokens would wrap below zero while the clock (time
	 * since boot) is smaller than a full bucket (an hour's rate with a
	 * burst of 4 is 4 h): count from 2^63 ns instead, and let no bucket
	 * hold more than 2^63 ns of tokens (292 years) */
	now += LIMIT_EPOCH;
	if (tokens_max > LIMIT_EPOCH)
		tokens_max = LIMIT_EPOCH;
	if (cost > tokens_max)
		cost = tokens_max + 1; /* never enough: as the kernel's delta < 0 */
	do {
		if (e == 0)
			tokens = tokens_max; /* full since creation */
		else
			tokens = now > e ? now - e : 0;
		if (tokens > tokens_max)
			tokens = tokens_max;
		ok = tokens >= cost;
		ne = now - (ok ? tokens - cost : tokens);
		if (ne == 0)
			ne = 1;
	} while (!atomic_compare_exchange_weak_explicit(empty_at, &e, ne, memory_order_relaxed,
							memory_order_relaxed));
	return ok ? invert : !invert;
}

/* nft_limit_init's arithmetic; type NFT_LIMIT_PKTS or NFT_LIMIT_PKT_BYTES */
int nftdp_vm_limit_params(uint64_t rate, uint64_t unit, uint32_t burst, uint32_t type,
			  uint64_t *tokens_max, uint64_t *nsecs, uint64_t *cost)
{
	uint64_t rate_with_burst, tmp;
	bool pkts = type == NFT_LIMIT_PKTS;

	if (rate == 0)
		return -EINVAL;
	if (__builtin_mul_overflow(unit, NSEC_PER_SEC, nsecs))
		return -EOVERFLOW;
	if (pkts && burst == 0)
		burst = NFT_LIMIT_PKT_BURST_DEFAULT;
	if (__builtin_add_overflow(rate, (uint64_t)burst, &rate_with_burst))
		return -EOVERFLOW;
	if (pkts) {
		tmp = *nsecs / rate;
		if (__builtin_mul_overflow(tmp, (uint64_t)burst, tokens_max))
			return -EOVERFLOW;
		*cost = tmp;
	} else {
		if (__builtin_mul_overflow(*nsecs, rate_with_burst, &tmp))
			return -EOVERFLOW;
		*tokens_max = tmp / rate;
		*cost = 0;
	}
	return 0;
}

static void limit_pkts_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct limit_priv *p = (const void *)op->priv;

	(void)pkt;
	if (nftdp_vm_limit_eval(&ctx->state->cells[p->slot], ctx->now_ns, p->tokens_max, p->cost,
				p->invert))
		regs->verdict.code = NFT_BREAK;
}

static void limit_bytes_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct limit_priv *p = (const void *)op->priv;
	uint64_t cost = p->nsecs * pkt->skb_len / p->rate;

	if (nftdp_vm_limit_eval(&ctx->state->cells[p->slot], ctx->now_ns, p->tokens_max, cost,
				p->invert))
		regs->verdict.code = NFT_BREAK;
}

static int limit_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct limit_priv *p = priv;
	uint32_t burst = 0, type = NFT_LIMIT_PKTS, flags = 0;
	struct nftdp_vm_cell *c;
	bool created;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_LIMIT_RATE) || !nftdp_vm_attr(e, NFTNL_EXPR_LIMIT_UNIT))
		return nftdp_vm_errf(cc, -EINVAL, "limit: rate or unit missing");
	if (nftdp_vm_attr(e, NFTNL_EXPR_LIMIT_BURST))
		burst = nftdp_vm_u32(e, NFTNL_EXPR_LIMIT_BURST);
	if (nftdp_vm_attr(e, NFTNL_EXPR_LIMIT_TYPE))
		type = nftdp_vm_u32(e, NFTNL_EXPR_LIMIT_TYPE);
	if (nftdp_vm_attr(e, NFTNL_EXPR_LIMIT_FLAGS))
		flags = nftdp_vm_u32(e, NFTNL_EXPR_LIMIT_FLAGS);
	if (flags & ~(uint32_t)NFT_LIMIT_F_INV)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "limit: flags 0x%x", flags);
	p->invert = flags & NFT_LIMIT_F_INV;
	p->rate = nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_RATE);
	rc = nftdp_vm_limit_params(p->rate, nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_UNIT), burst,
				   type, &p->tokens_max, &p->nsecs, &p->cost);
	if (rc < 0)
		return nftdp_vm_errf(cc, rc, "limit: invalid rate, unit or burst");
	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_CELL, &p->slot, &created);
	if (rc < 0)
		return rc;
	c = &cc->st->cells[p->slot];
	c->type = NFTDP_VM_CELL_LIMIT;
	return 0;
}

static const struct nftdp_vm_expr_ops limit_pkts_ops = {
    .name = "limit",
    .size = sizeof(struct limit_priv),
    .init = limit_init,
    .eval = limit_pkts_eval,
};
static const struct nftdp_vm_expr_ops limit_bytes_ops = {
    .name = "limit",
    .size = sizeof(struct limit_priv),
    .init = limit_init,
    .eval = limit_bytes_eval,
};

/* nft_limit_select_ops */
static const struct nftdp_vm_expr_ops *limit_select_ops(struct nftdp_vm_cctx *cc,
							const struct nftnl_expr *e)
{
	uint32_t type = NFT_LIMIT_PKTS;

	if (nftdp_vm_attr(e, NFTNL_EXPR_LIMIT_TYPE))
		type = nftdp_vm_u32(e, NFTNL_EXPR_LIMIT_TYPE);
	switch (type) {
	case NFT_LIMIT_PKTS:
		return &limit_pkts_ops;
	case NFT_LIMIT_PKT_BYTES:
		return &limit_bytes_ops;
	}
	nftdp_vm_errf(cc, -EOPNOTSUPP, "limit: type %u", type);
	return NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_limit = {
    .name = "limit",
    .select_ops = limit_select_ops,
};
