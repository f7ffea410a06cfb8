// SPDX-License-Identifier: BSD-3-Clause
/*
 * bitwise: mask-and-xor, left and right shifts on host-order words.
 * Mirrors nft_bitwise.c; nft_bitwise_select_ops picks bitwise_fast (mask/xor
 * on one register), inlined by vm.c.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct bitwise_priv {
	uint32_t mask[4];
	uint32_t xor [4];
	uint8_t sreg, dreg, len, op;
	uint32_t shift;
};
NFTDP_VM_PRIV_CHECK(struct bitwise_priv);
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_bitwise_fast);

static void bitwise_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct bitwise_priv *p = (const void *)op->priv;
	uint32_t src[16], *dst = &regs->data[p->dreg];
	unsigned int n = (p->len + 3u) / 4u, i;
	uint32_t carry = 0;

	(void)pkt;
	(void)ctx;
	memcpy(src, &regs->data[p->sreg], n * 4); /* sreg and dreg may overlap */
	switch (p->op) {
	case NFT_BITWISE_BOOL:
		for (i = 0; i < n; i++)
			dst[i] = (src[i] & p->mask[i]) ^ p->xor [i];
		break;
	case NFT_BITWISE_LSHIFT:
		for (i = n; i > 0; i--) {
			dst[i - 1] = (src[i - 1] << p->shift) | carry;
			carry = p->shift ? src[i - 1] >> (32 - p->shift) : 0;
		}
		break;
	case NFT_BITWISE_RSHIFT:
		for (i = 0; i < n; i++) {
			dst[i] = carry | (src[i] >> p->shift);
			carry = p->shift ? src[i] << (32 - p->shift) : 0;
		}
		break;
	}
}

static void bitwise_fast_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nftdp_vm_bitwise_fast *p = (const void *)op->priv;

	(void)pkt;
	(void)ctx;
	regs->data[p->dreg] = (regs->data[p->sreg] & p->mask) ^ p->xor ;
}

static int bitwise_parse(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e,
			 struct bitwise_priv *p)
{
	uint32_t len, op, dlen;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_SREG) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_DREG) || !nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_LEN))
		return nftdp_vm_errf(cc, -EINVAL, "bitwise: attribute missing");
	len = nftdp_vm_u32(e, NFTNL_EXPR_BITWISE_LEN);
	if (len > 255)
		return nftdp_vm_errf(cc, -ERANGE, "bitwise: length %u", len);
	p->len = (uint8_t)len;
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_BITWISE_SREG, &p->sreg, len);
	if (rc < 0)
		return rc;
	rc =
	    nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_BITWISE_DREG, &p->dreg, NFT_DATA_VALUE, len);
	if (rc < 0)
		return rc;
	op = nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_OP) ? nftdp_vm_u32(e, NFTNL_EXPR_BITWISE_OP)
						     : NFT_BITWISE_BOOL;
	p->op = (uint8_t)op;
	switch (op) {
	case NFT_BITWISE_BOOL:
		if (nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_DATA))
			return nftdp_vm_errf(cc, -EINVAL, "bitwise: data with mask/xor");
		if (!nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_MASK) ||
		    !nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_XOR))
			return nftdp_vm_errf(cc, -EINVAL, "bitwise: mask or xor missing");
		rc = nftdp_vm_parse_data(cc, e, NFTNL_EXPR_BITWISE_MASK, p->mask, 16, &dlen);
		if (rc < 0)
			return rc;
		if (dlen != len)
			return nftdp_vm_errf(cc, -EINVAL, "bitwise: mask length %u != %u", dlen,
					     len);
		rc = nftdp_vm_parse_data(cc, e, NFTNL_EXPR_BITWISE_XOR, p->xor, 16, &dlen);
		if (rc < 0)
			return rc;
		if (dlen != len)
			return nftdp_vm_errf(cc, -EINVAL, "bitwise: xor length %u != %u", dlen,
					     len);
		return 0;
	case NFT_BITWISE_LSHIFT:
	case NFT_BITWISE_RSHIFT: {
		uint32_t d[4];

		if (nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_MASK) ||
		    nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_XOR))
			return nftdp_vm_errf(cc, -EINVAL, "bitwise: mask/xor with a shift");
		rc = nftdp_vm_parse_data(cc, e, NFTNL_EXPR_BITWISE_DATA, d, 16, &dlen);
		if (rc < 0)
			return rc;
		if (dlen != 4)
			return nftdp_vm_errf(cc, -EINVAL, "bitwise: shift is %u bytes", dlen);
		if (d[0] >= 32)
			return nftdp_vm_errf(cc, -EINVAL, "bitwise: shift %u", d[0]);
		p->shift = d[0];
		return 0;
	}
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "bitwise: operation %u not supported", op);
	}
}

static int bitwise_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	return bitwise_parse(cc, e, priv);
}

static int bitwise_fast_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_bitwise_fast *f = priv;
	struct bitwise_priv p = {0};
	int rc = bitwise_parse(cc, e, &p);

	if (rc < 0)
		return rc;
	f->mask = p.mask[0];
	f->xor = p.xor [0];
	f->sreg = p.sreg;
	f->dreg = p.dreg;
	return 0;
}

static const struct nftdp_vm_expr_ops bitwise_ops = {
    .name = "bitwise",
    .size = sizeof(struct bitwise_priv),
    .init = bitwise_init,
    .eval = bitwise_eval,
    .flow = NFTDP_VM_FLOW_REGS,
};
static const struct nftdp_vm_expr_ops bitwise_fast_ops = {
    .name = "bitwise",
    .size = sizeof(struct nftdp_vm_bitwise_fast),
    .fast = NFTDP_VM_FAST_BITWISE,
    .init = bitwise_fast_init,
    .eval = bitwise_fast_eval,
    .flow = NFTDP_VM_FLOW_REGS,
};

/* nft_bitwise_select_ops */
static const struct nftdp_vm_expr_ops *bitwise_select_ops(struct nftdp_vm_cctx *cc,
							  const struct nftnl_expr *e)
{
	(void)cc;
	if (nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_OP) &&
	    nftdp_vm_u32(e, NFTNL_EXPR_BITWISE_OP) != NFT_BITWISE_BOOL)
		return &bitwise_ops;
	/* the kernel's fast op is len 4 only; a shorter boolean one is the
	 * same one-word operation (mask and xor are zero past len) */
	if (nftdp_vm_attr(e, NFTNL_EXPR_BITWISE_LEN) &&
	    nftdp_vm_u32(e, NFTNL_EXPR_BITWISE_LEN) >= 1 &&
	    nftdp_vm_u32(e, NFTNL_EXPR_BITWISE_LEN) <= 4)
		return &bitwise_fast_ops;
	return &bitwise_ops;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_bitwise = {
    .name = "bitwise",
    .select_ops = bitwise_select_ops,
};
