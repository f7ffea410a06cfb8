// SPDX-License-Identifier: BSD-3-Clause
/* byteorder: ntoh/hton on 2, 4 or 8 byte elements. Mirrors nft_byteorder.c. */
#include <endian.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct byteorder_priv {
	uint8_t sreg, dreg, op, len, size;
};
NFTDP_VM_PRIV_CHECK(struct byteorder_priv);

static void byteorder_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct byteorder_priv *p = (const void *)op->priv;
	uint8_t src[NFTDP_VM_REG_SIZE];
	uint8_t *dst = (uint8_t *)&regs->data[p->dreg];
	unsigned int i;

	(void)pkt;
	(void)ctx;
	memcpy(src, &regs->data[p->sreg], p->len);
	switch (p->size) {
	case 8:
		for (i = 0; i < p->len / 8u; i++) {
			uint64_t v;

			memcpy(&v, src + i * 8, 8);
			v = p->op == NFT_BYTEORDER_NTOH ? be64toh(v) : htobe64(v);
			memcpy(dst + i * 8, &v, 8);
		}
		break;
	case 4:
		for (i = 0; i < p->len / 4u; i++) {
			uint32_t v;

			memcpy(&v, src + i * 4, 4);
			v = p->op == NFT_BYTEORDER_NTOH ? be32toh(v) : htobe32(v);
			memcpy(dst + i * 4, &v, 4);
		}
		break;
	case 2:
		for (i = 0; i < p->len / 2u; i++) {
			uint16_t v;

			memcpy(&v, src + i * 2, 2);
			v = p->op == NFT_BYTEORDER_NTOH ? be16toh(v) : htobe16(v);
			memcpy(dst + i * 2, &v, 2);
		}
		break;
	}
}

static int byteorder_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct byteorder_priv *p = priv;
	uint32_t op, size, len;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_BYTEORDER_SREG) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_BYTEORDER_DREG) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_BYTEORDER_LEN) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_BYTEORDER_SIZE) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_BYTEORDER_OP))
		return nftdp_vm_errf(cc, -EINVAL, "byteorder: attribute missing");
	op = nftdp_vm_u32(e, NFTNL_EXPR_BYTEORDER_OP);
	if (op != NFT_BYTEORDER_NTOH && op != NFT_BYTEORDER_HTON)
		return nftdp_vm_errf(cc, -EINVAL, "byteorder: operation %u", op);
	size = nftdp_vm_u32(e, NFTNL_EXPR_BYTEORDER_SIZE);
	if (size != 2 && size != 4 && size != 8)
		return nftdp_vm_errf(cc, -EINVAL, "byteorder: size %u", size);
	len = nftdp_vm_u32(e, NFTNL_EXPR_BYTEORDER_LEN);
	if (len > 255)
		return nftdp_vm_errf(cc, -ERANGE, "byteorder: length %u", len);
	p->op = (uint8_t)op;
	p->size = (uint8_t)size;
	p->len = (uint8_t)len;
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_BYTEORDER_SREG, &p->sreg, len);
	if (rc < 0)
		return rc;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_BYTEORDER_DREG, &p->dreg, NFT_DATA_VALUE,
					len);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_byteorder = {
    .name = "byteorder",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "byteorder",
	    .size = sizeof(struct byteorder_priv),
	    .init = byteorder_init,
	    .eval = byteorder_eval,
	    .flow = NFTDP_VM_FLOW_REGS,
	},
};
