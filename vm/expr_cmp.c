// SPDX-License-Identifier: BSD-3-Clause
/*
 * cmp: compare a register with constant data. Mirrors nft_cmp.c, including
 * nft_cmp_select_ops: eq/neq on <= 4 bytes is cmp_fast, on 16 bytes
 * cmp16_fast; both are inlined by vm.c. Unlike the kernel, eq/neq on 5 to
 * 15 bytes is cmp16_fast too, with a mask of the first len bytes (IPv6
 * prefixes, MAC addresses), where the register file holds 16 bytes from
 * sreg on: the same result as cmp's memcmp of len bytes.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct cmp_priv {
	uint8_t data[16];
	uint8_t sreg;
	uint8_t len;
	uint8_t op;
};
NFTDP_VM_PRIV_CHECK(struct cmp_priv);
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_cmp_fast);
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_cmp16_fast);

static void cmp_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct cmp_priv *p = (const void *)op->priv;
	int d = memcmp(&regs->data[p->sreg], p->data, p->len);

	(void)pkt;
	(void)ctx;
	switch (p->op) {
	case NFT_CMP_EQ:
		if (d != 0)
			goto mismatch;
		break;
	case NFT_CMP_NEQ:
		if (d == 0)
			goto mismatch;
		break;
	case NFT_CMP_LT:
		if (d == 0)
			goto mismatch;
		/* fall through */
	case NFT_CMP_LTE:
		if (d > 0)
			goto mismatch;
		break;
	case NFT_CMP_GT:
		if (d == 0)
			goto mismatch;
		/* fall through */
	case NFT_CMP_GTE:
		if (d < 0)
			goto mismatch;
		break;
	}
	return;
mismatch:
	regs->verdict.code = NFT_BREAK;
}

/* the inlined variants have the same semantics; these are for completeness
 * (an op called through ->eval must still be right) */
static void cmp_fast_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nftdp_vm_cmp_fast *p = (const void *)op->priv;

	(void)pkt;
	(void)ctx;
	if (((regs->data[p->sreg] & p->mask) == p->data) ^ p->inv)
		return;
	regs->verdict.code = NFT_BREAK;
}

static void cmp16_fast_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nftdp_vm_cmp16_fast *p = (const void *)op->priv;
	const uint32_t *r = &regs->data[p->sreg];
	bool eq = true;

	(void)pkt;
	(void)ctx;
	for (int i = 0; i < 4; i++)
		eq &= (r[i] & p->mask[i]) == p->data[i];
	if (eq ^ p->inv)
		return;
	regs->verdict.code = NFT_BREAK;
}

static int cmp_parse(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint8_t *data,
		     uint32_t *len, uint8_t *sreg, uint32_t *op)
{
	int rc;

	rc = nftdp_vm_parse_data(cc, e, NFTNL_EXPR_CMP_DATA, data, 16, len);
	if (rc < 0)
		return rc;
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_CMP_SREG, sreg, *len);
	if (rc < 0)
		return rc;
	if (!nftdp_vm_attr(e, NFTNL_EXPR_CMP_OP))
		return nftdp_vm_errf(cc, -EINVAL, "cmp: operation missing");
	*op = nftdp_vm_u32(e, NFTNL_EXPR_CMP_OP);
	if (*op > NFT_CMP_GTE)
		return nftdp_vm_errf(cc, -EINVAL, "cmp: unknown operation %u", *op);
	return 0;
}

static int cmp_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct cmp_priv *p = priv;
	uint32_t len = 0, op = 0;
	int rc = cmp_parse(cc, e, p->data, &len, &p->sreg, &op);

	p->len = (uint8_t)len;
	p->op = (uint8_t)op;
	return rc;
}

static int cmp_fast_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_cmp_fast *p = priv;
	uint8_t data[16], mask[4] = {0};
	uint32_t len = 0, op = 0;
	int rc = cmp_parse(cc, e, data, &len, &p->sreg, &op);

	if (rc < 0)
		return rc;
	memset(mask, 0xff, len); /* nft_cmp_fast_mask: the first len bytes */
	memcpy(&p->mask, mask, 4);
	memcpy(&p->data, data, 4);
	p->data &= p->mask;
	p->inv = op != NFT_CMP_EQ;
	return 0;
}

static int cmp16_fast_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_cmp16_fast *p = priv;
	uint8_t data[16];
	uint32_t len = 0, op = 0;
	int rc = cmp_parse(cc, e, data, &len, &p->sreg, &op);

	if (rc < 0)
		return rc;
	/* the first len bytes (all 16 for cmp16_fast proper) */
	memset(p->mask, 0, sizeof(p->mask));
	memset(p->mask, 0xff, len);
	memcpy(p->data, data, 16);
	for (int i = 0; i < 4; i++)
		p->data[i] &= p->mask[i];
	p->inv = op != NFT_CMP_EQ;
	return 0;
}

static const struct nftdp_vm_expr_ops cmp_ops = {
    .name = "cmp",
    .size = sizeof(struct cmp_priv),
    .init = cmp_init,
    .eval = cmp_eval,
    .flow = NFTDP_VM_FLOW_REGS,
};
static const struct nftdp_vm_expr_ops cmp_fast_ops = {
    .name = "cmp",
    .size = sizeof(struct nftdp_vm_cmp_fast),
    .fast = NFTDP_VM_FAST_CMP,
    .init = cmp_fast_init,
    .eval = cmp_fast_eval,
    .flow = NFTDP_VM_FLOW_REGS,
};
static const struct nftdp_vm_expr_ops cmp16_fast_ops = {
    .name = "cmp",
    .size = sizeof(struct nftdp_vm_cmp16_fast),
    .fast = NFTDP_VM_FAST_CMP16,
    .init = cmp16_fast_init,
    .eval = cmp16_fast_eval,
    .flow = NFTDP_VM_FLOW_REGS,
};

/* nft_cmp_select_ops */
static const struct nftdp_vm_expr_ops *cmp_select_ops(struct nftdp_vm_cctx *cc,
						      const struct nftnl_expr *e)
{
	uint32_t len = 0, op;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_CMP_SREG) || !nftdp_vm_attr(e, NFTNL_EXPR_CMP_OP) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_CMP_DATA)) {
		nftdp_vm_errf(cc, -EINVAL, "cmp: attribute missing");
		return NULL;
	}
	op = nftdp_vm_u32(e, NFTNL_EXPR_CMP_OP);
	nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &len);
	if (op == NFT_CMP_EQ || op == NFT_CMP_NEQ) {
		int reg = nftdp_vm_reg_index(nftdp_vm_u32(e, NFTNL_EXPR_CMP_SREG));

		if (len >= 1 && len <= 4)
			return &cmp_fast_ops;
		/* cmp16_fast reads 16 bytes of registers from sreg on; a bad
		 * register is cmp_init's to reject */
		if (len > 4 && len <= 16 && reg >= 0 && reg * 4 + 16 <= NFTDP_VM_REG_SIZE)
			return &cmp16_fast_ops;
	}
	return &cmp_ops;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_cmp = {
    .name = "cmp",
    .select_ops = cmp_select_ops,
};
