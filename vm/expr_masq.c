// SPDX-License-Identifier: BSD-3-Clause
/*
 * masq: source NAT to the address of the output port. Mirrors nft_masq.c:
 * flags and optional port registers (nft_masq_init); eval asks conntrack/
 * (nftdp_vm_ct_ops.nat, NFTDP_VM_NAT_MASQ) for the binding, whose result is
 * the verdict. The port's address comes from the dataplane (--ifaddr).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#include <linux/netfilter/nf_nat.h> /* after netinet/in.h (vm_priv.h) */

struct masq_priv {
	uint8_t reg_proto_min, reg_proto_max, has_proto;
	uint32_t flags;
};
NFTDP_VM_PRIV_CHECK(struct masq_priv);

static void masq_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct masq_priv *p = (const void *)op->priv;
	struct nftdp_vm_nat_range r;

	(void)ctx;
	if (pkt->nfproto != NFPROTO_IPV4 && pkt->nfproto != NFPROTO_IPV6)
		return;
	if (!pkt->ct || !pkt->ct_ops || !pkt->ct_ops->nat) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	memset(&r, 0, sizeof(r));
	r.flags = p->flags;
	if (p->has_proto) {
		memcpy(&r.min_proto, &regs->data[p->reg_proto_min], 2);
		memcpy(&r.max_proto, &regs->data[p->reg_proto_max], 2);
	}
	regs->verdict.code = pkt->ct_ops->nat(pkt->ct, pkt, NFTDP_VM_NAT_MASQ, &r);
}

static int masq_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct masq_priv *p = priv;
	int rc;

	/* nft_masq_validate: postrouting only */
	if (cc->chain->base && cc->chain->hook != NF_INET_POST_ROUTING)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "masquerade: only at postrouting");
	if (nftdp_vm_attr(e, NFTNL_EXPR_MASQ_FLAGS)) {
		p->flags = nftdp_vm_u32(e, NFTNL_EXPR_MASQ_FLAGS);
		if (p->flags & ~NF_NAT_RANGE_MASK)
			return nftdp_vm_errf(cc, -EINVAL, "masquerade: flags 0x%x", p->flags);
		if (p->flags & (NF_NAT_RANGE_NETMAP | NF_NAT_RANGE_PROTO_OFFSET))
			return nftdp_vm_errf(
			    cc, -EOPNOTSUPP,
			    "masquerade: prefix/offset maps not supported by nftdp");
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_MASQ_REG_PROTO_MIN)) {
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_MASQ_REG_PROTO_MIN,
					     &p->reg_proto_min, 2);
		if (rc < 0)
			return rc;
		p->reg_proto_max = p->reg_proto_min;
		if (nftdp_vm_attr(e, NFTNL_EXPR_MASQ_REG_PROTO_MAX)) {
			rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_MASQ_REG_PROTO_MAX,
						     &p->reg_proto_max, 2);
			if (rc < 0)
				return rc;
		}
		p->has_proto = 1;
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_masq = {
    .name = "masq",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "masq",
	    .size = sizeof(struct masq_priv),
	    .init = masq_init,
	    .eval = masq_eval,
	},
};
