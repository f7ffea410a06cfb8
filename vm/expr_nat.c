// SPDX-License-Identifier: BSD-3-Clause
/*
 * nat: snat/dnat. Mirrors nft_nat.c: init parses the type, the family, the
 * address and port registers and the flags as nft_nat_init does; eval fills
 * a range from the registers and asks conntrack/ (nftdp_vm_ct_ops.nat) for
 * the binding, whose result is the verdict (nat is terminal). The chain
 * type and hook checks of nft_nat_validate are done by control/ (and here
 * for the hooks of base chains).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#include <linux/netfilter/nf_nat.h> /* after netinet/in.h (vm_priv.h) */

struct nat_priv {
	uint8_t reg_addr_min, reg_addr_max, reg_proto_min, reg_proto_max;
	uint8_t has_addr, has_proto, kind, family;
	uint8_t alen;
	uint32_t flags;
};
NFTDP_VM_PRIV_CHECK(struct nat_priv);

/*
 * nft_nat_setup_netmap: `snat|dnat prefix to A/N` (NF_NAT_RANGE_NETMAP)
 * keeps the packet's own address outside the bits where the range's ends
 * agree and takes those from the range: one address, 1:1 as iptables'
 * NETMAP. The address is the packet's at this hook (saddr for snat, daddr
 * for dnat), of the hook's family.
 */
static bool nat_netmap(const struct nat_priv *p, const struct nftdp_vm_pkt *pkt,
		       struct nftdp_vm_nat_range *r)
{
	uint8_t addr[16];
	unsigned off, len;

	if (pkt->nfproto == NFPROTO_IPV4) {
		off = p->kind == NFTDP_VM_NAT_SNAT ? 12 : 16;
		len = 4;
	} else {
		off = p->kind == NFTDP_VM_NAT_SNAT ? 8 : 24;
		len = 16;
	}
	if (len != p->alen || (uint64_t)pkt->nh_off + off + len > pkt->len)
		return false;
	memcpy(addr, pkt->data + pkt->nh_off + off, len);
	for (unsigned i = 0; i < len; i++) {
		uint8_t keep = (uint8_t)(r->min_addr[i] ^ r->max_addr[i]);

		addr[i] = (uint8_t)((addr[i] & keep) | (r->min_addr[i] & (uint8_t)~keep));
	}
	memcpy(r->min_addr, addr, len);
	memcpy(r->max_addr, addr, len);
	return true;
}

static void nat_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nat_priv *p = (const void *)op->priv;
	struct nftdp_vm_nat_range r;

	(void)ctx;
	/* nft_nat_inet_eval: an inet rule for the other family does nothing */
	if (p->family != NFPROTO_INET && p->family != pkt->nfproto)
		return;
	if (!pkt->ct || !pkt->ct_ops || !pkt->ct_ops->nat) {
		regs->verdict.code = NFT_BREAK; /* nat chains never see untracked packets */
		return;
	}
	memset(&r, 0, sizeof(r));
	if (p->has_addr) {
		memcpy(r.min_addr, &regs->data[p->reg_addr_min], p->alen);
		memcpy(r.max_addr, &regs->data[p->reg_addr_max], p->alen);
		if ((p->flags & NF_NAT_RANGE_NETMAP) && !nat_netmap(p, pkt, &r)) {
			regs->verdict.code = NFT_BREAK; /* no address to map (never for IP) */
			return;
		}
	}
	if (p->has_proto) {
		memcpy(&r.min_proto, &regs->data[p->reg_proto_min], 2);
		memcpy(&r.max_proto, &regs->data[p->reg_proto_max], 2);
	}
	r.flags = p->flags;
	regs->verdict.code = pkt->ct_ops->nat(pkt->ct, pkt, (enum nftdp_vm_nat_kind)p->kind, &r);
}

/* flags nftdp implements; PROTO_OFFSET (shifted port maps) is not yet */
#define NAT_FLAGS_SUPPORTED                                                                        \
	(NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED | NF_NAT_RANGE_PROTO_RANDOM |         \
	 NF_NAT_RANGE_PERSISTENT | NF_NAT_RANGE_PROTO_RANDOM_FULLY | NF_NAT_RANGE_NETMAP)

static int nat_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct nat_priv *p = priv;
	uint32_t type, family;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_NAT_TYPE) ||
	    (!nftdp_vm_attr(e, NFTNL_EXPR_NAT_REG_ADDR_MIN) &&
	     !nftdp_vm_attr(e, NFTNL_EXPR_NAT_REG_PROTO_MIN)))
		return nftdp_vm_errf(cc, -EINVAL, "nat: type or registers missing");
	type = nftdp_vm_u32(e, NFTNL_EXPR_NAT_TYPE);
	if (type == NFT_NAT_SNAT)
		p->kind = NFTDP_VM_NAT_SNAT;
	else if (type == NFT_NAT_DNAT)
		p->kind = NFTDP_VM_NAT_DNAT;
	else
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "nat: type %u", type);
	/* nft_nat_validate's hooks, for base chains */
	if (cc->chain->base && cc->chain->family != NFPROTO_NETDEV) {
		uint8_t h = cc->chain->hook;
		bool ok = type == NFT_NAT_SNAT ? h == NF_INET_POST_ROUTING || h == NF_INET_LOCAL_IN
					       : h == NF_INET_PRE_ROUTING || h == NF_INET_LOCAL_OUT;

		if (!ok)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "nat: not at this hook");
	}
	if (!nftdp_vm_attr(e, NFTNL_EXPR_NAT_FAMILY))
		return nftdp_vm_errf(cc, -EINVAL, "nat: family missing");
	family = nftdp_vm_u32(e, NFTNL_EXPR_NAT_FAMILY);
	if (cc->chain->family != NFPROTO_INET && cc->chain->family != family)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "nat: family %u in this table", family);
	if (family == NFPROTO_IPV4)
		p->alen = 4;
	else if (family == NFPROTO_IPV6)
		p->alen = 16;
	else if (nftdp_vm_attr(e, NFTNL_EXPR_NAT_REG_ADDR_MIN))
		return nftdp_vm_errf(cc, -EAFNOSUPPORT, "nat: addresses of family %u", family);
	p->family = (uint8_t)family;
	if (nftdp_vm_attr(e, NFTNL_EXPR_NAT_REG_ADDR_MIN)) {
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_NAT_REG_ADDR_MIN, &p->reg_addr_min,
					     p->alen);
		if (rc < 0)
			return rc;
		p->reg_addr_max = p->reg_addr_min;
		if (nftdp_vm_attr(e, NFTNL_EXPR_NAT_REG_ADDR_MAX)) {
			rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_NAT_REG_ADDR_MAX,
						     &p->reg_addr_max, p->alen);
			if (rc < 0)
				return rc;
		}
		p->has_addr = 1;
		p->flags |= NF_NAT_RANGE_MAP_IPS;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_NAT_REG_PROTO_MIN)) {
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_NAT_REG_PROTO_MIN, &p->reg_proto_min,
					     2);
		if (rc < 0)
			return rc;
		p->reg_proto_max = p->reg_proto_min;
		if (nftdp_vm_attr(e, NFTNL_EXPR_NAT_REG_PROTO_MAX)) {
			rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_NAT_REG_PROTO_MAX,
						     &p->reg_proto_max, 2);
			if (rc < 0)
				return rc;
		}
		p->has_proto = 1;
		p->flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_NAT_FLAGS)) {
		p->flags |= nftdp_vm_u32(e, NFTNL_EXPR_NAT_FLAGS);
		if (p->flags & ~NF_NAT_RANGE_MASK)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "nat: flags 0x%x", p->flags);
		if (p->flags & ~NAT_FLAGS_SUPPORTED)
			return nftdp_vm_errf(cc, -EOPNOTSUPP,
					     "nat: port offset maps not supported by nftdp");
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_nat = {
    .name = "nat",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "nat",
	    .size = sizeof(struct nat_priv),
	    .init = nat_init,
	    .eval = nat_eval,
	},
};
