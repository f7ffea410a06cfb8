// SPDX-License-Identifier: BSD-3-Clause
/*
 * hash: jhash of len register bytes with seed (bit-exact with the kernel's
 * jhash), or a symmetric flow hash; reciprocal_scale to modulus, plus offset.
 * Mirrors nft_hash.c. The kernel's symhash is __skb_get_hash_symmetric
 * (siphash with a boot-time key, so no value is reproducible); ours is
 * jhash over the ordered address and port pairs.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct hash_priv {
	uint32_t modulus, seed, offset;
	uint8_t sreg, dreg, len;
};
NFTDP_VM_PRIV_CHECK(struct hash_priv);

static void jhash_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct hash_priv *p = (const void *)op->priv;
	uint32_t h;

	(void)pkt;
	(void)ctx;
	h = nftdp_vm_reciprocal_scale(nftdp_vm_jhash(&regs->data[p->sreg], p->len, p->seed),
				      p->modulus);
	regs->data[p->dreg] = h + p->offset;
}

static uint32_t sym_hash(const struct nftdp_vm_pkt *pkt, uint32_t seed)
{
	uint8_t key[40] = {0}, a[16] = {0}, b[16] = {0}, pa[2] = {0}, pb[2] = {0};
	uint32_t alen;

	if (pkt->nfproto == NFPROTO_IPV4 || pkt->protocol == 0x0008) {
		alen = 4;
		if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + 12, a, 4) ||
		    !nftdp_vm_copy_bits(pkt, pkt->nh_off + 16, b, 4))
			return 0;
	} else {
		alen = 16;
		if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + 8, a, 16) ||
		    !nftdp_vm_copy_bits(pkt, pkt->nh_off + 24, b, 16))
			return 0;
	}
	if (nftdp_vm_has_l4(pkt) &&
	    (pkt->l4proto == IPPROTO_TCP || pkt->l4proto == IPPROTO_UDP ||
	     pkt->l4proto == IPPROTO_SCTP || pkt->l4proto == IPPROTO_UDPLITE)) {
		if (!nftdp_vm_copy_bits(pkt, pkt->th_off, pa, 2) ||
		    !nftdp_vm_copy_bits(pkt, pkt->th_off + 2, pb, 2))
			memset(pa, 0, 2), memset(pb, 0, 2);
	}
	if (memcmp(a, b, alen) > 0 || (memcmp(a, b, alen) == 0 && memcmp(pa, pb, 2) > 0)) {
		memcpy(key, b, alen);
		memcpy(key + alen, a, alen);
		memcpy(key + 2 * alen, pb, 2);
		memcpy(key + 2 * alen + 2, pa, 2);
	} else {
		memcpy(key, a, alen);
		memcpy(key + alen, b, alen);
		memcpy(key + 2 * alen, pa, 2);
		memcpy(key + 2 * alen + 2, pb, 2);
	}
	key[2 * alen + 4] = pkt->l4proto;
	return nftdp_vm_jhash(key, 2 * alen + 5, seed);
}

static void symhash_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct hash_priv *p = (const void *)op->priv;

	(void)ctx;
	regs->data[p->dreg] =
	    nftdp_vm_reciprocal_scale(sym_hash(pkt, p->seed), p->modulus) + p->offset;
}

static int hash_common(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, struct hash_priv *p)
{
	if (!nftdp_vm_attr(e, NFTNL_EXPR_HASH_DREG) || !nftdp_vm_attr(e, NFTNL_EXPR_HASH_MODULUS))
		return nftdp_vm_errf(cc, -EINVAL, "hash: register or modulus missing");
	p->modulus = nftdp_vm_u32(e, NFTNL_EXPR_HASH_MODULUS);
	if (p->modulus < 1)
		return nftdp_vm_errf(cc, -ERANGE, "hash: modulus 0");
	if (nftdp_vm_attr(e, NFTNL_EXPR_HASH_OFFSET))
		p->offset = nftdp_vm_u32(e, NFTNL_EXPR_HASH_OFFSET);
	if (p->offset + p->modulus - 1 < p->offset)
		return nftdp_vm_errf(cc, -EOVERFLOW, "hash: offset + modulus overflow");
	p->seed = cc->st ? cc->st->hash_seed : 0; /* the kernel: get_random_bytes */
	if (nftdp_vm_attr(e, NFTNL_EXPR_HASH_SEED))
		p->seed = nftdp_vm_u32(e, NFTNL_EXPR_HASH_SEED);
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_HASH_DREG, &p->dreg, NFT_DATA_VALUE, 4);
}

static int jhash_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct hash_priv *p = priv;
	uint32_t len;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_HASH_SREG) || !nftdp_vm_attr(e, NFTNL_EXPR_HASH_LEN))
		return nftdp_vm_errf(cc, -EINVAL, "hash: source or length missing");
	len = nftdp_vm_u32(e, NFTNL_EXPR_HASH_LEN);
	if (len > 255)
		return nftdp_vm_errf(cc, -ERANGE, "hash: length %u", len);
	if (len == 0)
		return nftdp_vm_errf(cc, -ERANGE, "hash: length 0");
	p->len = (uint8_t)len;
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_HASH_SREG, &p->sreg, len);
	if (rc < 0)
		return rc;
	return hash_common(cc, e, p);
}

static int symhash_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	return hash_common(cc, e, priv);
}

static const struct nftdp_vm_expr_ops jhash_ops = {
    .name = "hash",
    .size = sizeof(struct hash_priv),
    .init = jhash_init,
    .eval = jhash_eval,
    .flow = NFTDP_VM_FLOW_REGS,
};
static const struct nftdp_vm_expr_ops symhash_ops = {
    .name = "hash",
    .size = sizeof(struct hash_priv),
    .init = symhash_init,
    .eval = symhash_eval,
};

static const struct nftdp_vm_expr_ops *hash_select_ops(struct nftdp_vm_cctx *cc,
						       const struct nftnl_expr *e)
{
	uint32_t type = NFT_HASH_JENKINS;

	if (nftdp_vm_attr(e, NFTNL_EXPR_HASH_TYPE))
		type = nftdp_vm_u32(e, NFTNL_EXPR_HASH_TYPE);
	switch (type) {
	case NFT_HASH_JENKINS:
		return &jhash_ops;
	case NFT_HASH_SYM:
		return &symhash_ops;
	}
	nftdp_vm_errf(cc, -EOPNOTSUPP, "hash: type %u", type);
	return NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_hash = {
    .name = "hash",
    .select_ops = hash_select_ops,
};
