// SPDX-License-Identifier: BSD-3-Clause
/*
 * payload: load packet bytes into registers, or store registers into the
 * packet with checksum fixups (inet checksum at csum_offset, the L4
 * pseudo-header checksum when csum_flags says so, SCTP CRC32c). Mirrors
 * nft_payload.c; nft_payload_select_ops picks payload_fast (1/2/4 aligned
 * bytes at the network or transport header), inlined by vm.c. Every read and
 * write is bounds-checked against pkt->len; out of range means NFT_BREAK.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct payload_set_priv {
	uint8_t base, offset, len, sreg;
	uint8_t csum_type, csum_offset, csum_flags;
};
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_payload);
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_payload_cmp);
NFTDP_VM_PRIV_CHECK(struct payload_set_priv);

/* __nft_payload_inner_offset: the header after TCP or UDP */
static int64_t payload_inner_offset(struct nftdp_vm_pkt *pkt)
{
	uint8_t th[20];

	if (pkt->flags & NFTDP_VM_PKT_F_INNER)
		return pkt->inner_off;
	if (!nftdp_vm_has_l4(pkt))
		return -1;
	switch (pkt->l4proto) {
	case IPPROTO_UDP:
		pkt->inner_off = (int32_t)(pkt->th_off + 8);
		break;
	case IPPROTO_TCP:
		if (!nftdp_vm_copy_bits(pkt, pkt->th_off, th, sizeof(th)))
			return -1;
		pkt->inner_off = (int32_t)(pkt->th_off + (th[12] >> 4) * 4u);
		break;
	default:
		return -1;
	}
	pkt->flags |= NFTDP_VM_PKT_F_INNER;
	return pkt->inner_off;
}

static int64_t payload_base(struct nftdp_vm_pkt *pkt, uint8_t base, bool load)
{
	switch (base) {
	case NFT_PAYLOAD_LL_HEADER:
		if (pkt->mac_off < 0)
			return -1;
		/* skb_mac_header_len(skb) == 0: loads only, as the kernel */
		if (load && (uint32_t)pkt->mac_off == pkt->nh_off)
			return -1;
		return pkt->mac_off;
	case NFT_PAYLOAD_NETWORK_HEADER:
		return pkt->nh_off;
	case NFT_PAYLOAD_TRANSPORT_HEADER:
		if (!nftdp_vm_has_l4(pkt))
			return -1;
		return pkt->th_off;
	case NFT_PAYLOAD_INNER_HEADER:
		return payload_inner_offset(pkt);
	default:
		return -1;
	}
}

static void payload_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nftdp_vm_payload *p = (const void *)op->priv;
	uint32_t *dest = &regs->data[p->dreg];
	int64_t off;

	(void)ctx;
	if (p->len % 4)
		dest[p->len / 4] = 0;
	off = payload_base(pkt, p->base, true);
	if (off < 0)
		goto err;
	if (!nftdp_vm_copy_bits(pkt, off + p->offset, dest, p->len))
		goto err;
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

/* nft_payload_l4csum_offset */
static bool l4csum_offset(const struct nftdp_vm_pkt *pkt, uint32_t *off)
{
	uint8_t uh[8];

	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->fragoff)
		return false;
	switch (pkt->l4proto) {
	case IPPROTO_TCP:
		*off = 16;
		break;
	case IPPROTO_UDP:
		if (!nftdp_vm_copy_bits(pkt, pkt->th_off, uh, sizeof(uh)) || (!uh[6] && !uh[7]))
			return false;
		/* fall through */
	case IPPROTO_UDPLITE:
		*off = 6;
		break;
	case IPPROTO_ICMPV6:
		*off = 2;
		break;
	default:
		return false;
	}
	*off += pkt->th_off;
	return true;
}

static void payload_set_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct payload_set_priv *p = (const void *)op->priv;
	const uint8_t *src = (const uint8_t *)&regs->data[p->sreg];
	int64_t base, offset, csum_off;
	uint32_t fsum, tsum, l4off;

	(void)ctx;
	if (!(pkt->flags & NFTDP_VM_PKT_F_WRITABLE))
		goto err;
	base = payload_base(pkt, p->base, false);
	if (base < 0)
		goto err;
	csum_off = base + p->csum_offset;
	offset = base + p->offset;
	if ((uint64_t)offset + p->len > pkt->len)
		goto err;

	if (p->csum_type == NFT_PAYLOAD_CSUM_INET || p->csum_flags) {
		fsum = nftdp_csum_partial(pkt->data + offset, p->len, 0);
		tsum = nftdp_csum_partial(src, p->len, 0);
		if (p->csum_type == NFT_PAYLOAD_CSUM_INET) {
			if ((uint64_t)csum_off + 2 > pkt->len)
				goto err;
			nftdp_vm_csum_replace(pkt->data + csum_off, fsum, tsum);
		}
		if (p->csum_flags && l4csum_offset(pkt, &l4off)) {
			if ((uint64_t)l4off + 2 > pkt->len)
				goto err;
			nftdp_vm_csum_replace(pkt->data + l4off, fsum, tsum);
		}
	}
	memcpy(pkt->data + offset, src, p->len);

	if (p->csum_type == NFT_PAYLOAD_CSUM_SCTP && pkt->l4proto == IPPROTO_SCTP &&
	    pkt->fragoff == 0) {
		uint32_t th = pkt->th_off, crc;
		uint8_t zero[4] = {0};

		if ((uint64_t)th + 12 > pkt->len)
			goto err;
		crc = nftdp_crc32c(~0u, pkt->data + th, 8);
		crc = nftdp_crc32c(crc, zero, 4);
		crc = ~nftdp_crc32c(crc, pkt->data + th + 12, pkt->len - th - 12);
		/* cpu_to_le32 */
		pkt->data[th + 8] = (uint8_t)crc;
		pkt->data[th + 9] = (uint8_t)(crc >> 8);
		pkt->data[th + 10] = (uint8_t)(crc >> 16);
		pkt->data[th + 11] = (uint8_t)(crc >> 24);
	}
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

static int payload_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nftdp_vm_payload *p = priv;

	p->base = (uint8_t)nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_BASE);
	p->offset = (uint8_t)nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);
	p->len = (uint8_t)nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_LEN);
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_PAYLOAD_DREG, &p->dreg, NFT_DATA_VALUE,
					p->len);
}

static int payload_set_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct payload_set_priv *p = priv;
	uint32_t csum_type = NFT_PAYLOAD_CSUM_NONE;

	p->base = (uint8_t)nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_BASE);
	p->offset = (uint8_t)nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);
	p->len = (uint8_t)nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_LEN);
	if (nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_CSUM_TYPE))
		csum_type = nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_CSUM_TYPE);
	if (nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_CSUM_OFFSET)) {
		uint32_t o = nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_CSUM_OFFSET);

		if (o > 255)
			return nftdp_vm_errf(cc, -ERANGE, "payload: checksum offset %u", o);
		p->csum_offset = (uint8_t)o;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_FLAGS)) {
		uint32_t f = nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_FLAGS);

		if (f & ~(uint32_t)NFT_PAYLOAD_L4CSUM_PSEUDOHDR)
			return nftdp_vm_errf(cc, -EINVAL, "payload: checksum flags 0x%x", f);
		p->csum_flags = (uint8_t)f;
	}
	switch (csum_type) {
	case NFT_PAYLOAD_CSUM_NONE:
	case NFT_PAYLOAD_CSUM_INET:
		break;
	case NFT_PAYLOAD_CSUM_SCTP:
		if (p->base != NFT_PAYLOAD_TRANSPORT_HEADER || p->csum_offset != 8)
			return nftdp_vm_errf(cc, -EINVAL, "payload: sctp checksum placement");
		break;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "payload: checksum type %u", csum_type);
	}
	p->csum_type = (uint8_t)csum_type;
	return nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_PAYLOAD_SREG, &p->sreg, p->len);
}

static const struct nftdp_vm_expr_ops payload_ops = {
    .name = "payload",
    .size = sizeof(struct nftdp_vm_payload),
    .init = payload_init,
    .eval = payload_eval,
    .flow = NFTDP_VM_FLOW_PAYLOAD,
};
static const struct nftdp_vm_expr_ops payload_fast_ops = {
    .name = "payload",
    .size = sizeof(struct nftdp_vm_payload),
    .fast = NFTDP_VM_FAST_PAYLOAD,
    .init = payload_init,
    .eval = payload_eval,
    .flow = NFTDP_VM_FLOW_PAYLOAD,
};
/* IPv6 addresses, prefixes of addresses and the other network header
 * loads payload_fast does not take (3 bytes, unaligned): inlined by vm.c,
 * not a kernel fast op (the kernel's are 1/2/4 aligned bytes), same
 * result as payload_eval */
static const struct nftdp_vm_expr_ops payload_nh_ops = {
    .name = "payload",
    .size = sizeof(struct nftdp_vm_payload),
    .fast = NFTDP_VM_FAST_PAYLOAD_NH,
    .init = payload_init,
    .eval = payload_eval,
    .flow = NFTDP_VM_FLOW_PAYLOAD,
};
static const struct nftdp_vm_expr_ops payload_set_ops = {
    .name = "payload",
    .size = sizeof(struct payload_set_priv),
    .init = payload_set_init,
    .eval = payload_set_eval,
};

/* nft_payload_select_ops */
static const struct nftdp_vm_expr_ops *payload_select_ops(struct nftdp_vm_cctx *cc,
							  const struct nftnl_expr *e)
{
	uint32_t base, offset, len;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_BASE) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_OFFSET) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_LEN)) {
		nftdp_vm_errf(cc, -EINVAL, "payload: base, offset or length missing");
		return NULL;
	}
	base = nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_BASE);
	if (base > NFT_PAYLOAD_INNER_HEADER) {
		nftdp_vm_errf(cc, -EOPNOTSUPP, "payload: base %u not supported", base);
		return NULL;
	}
	offset = nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);
	len = nftdp_vm_u32(e, NFTNL_EXPR_PAYLOAD_LEN);
	if (offset > 255 || len > 255) {
		nftdp_vm_errf(cc, -ERANGE, "payload: offset %u / length %u above 255", offset, len);
		return NULL;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_SREG)) {
		if (nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_DREG)) {
			nftdp_vm_errf(cc, -EINVAL, "payload: both source and destination");
			return NULL;
		}
		return &payload_set_ops;
	}
	if (!nftdp_vm_attr(e, NFTNL_EXPR_PAYLOAD_DREG)) {
		nftdp_vm_errf(cc, -EINVAL, "payload: destination register missing");
		return NULL;
	}
	if (len <= 4 && (len & (len - 1)) == 0 && len && offset % len == 0 &&
	    base != NFT_PAYLOAD_LL_HEADER && base != NFT_PAYLOAD_INNER_HEADER)
		return &payload_fast_ops;
	if (base == NFT_PAYLOAD_NETWORK_HEADER && len >= 1 && len <= 16)
		return &payload_nh_ops;
	return &payload_ops;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_payload = {
    .name = "payload",
    .select_ops = payload_select_ops,
};
