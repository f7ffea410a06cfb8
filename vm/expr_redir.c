// SPDX-License-Identifier: BSD-3-Clause
/*
 * redir: destination NAT to the receiving host itself (nft_redir.c). Its
 * flags and optional port registers as nft_redir_init; eval asks
 * conntrack/ (nftdp_vm_ct_ops.nat, NFTDP_VM_NAT_REDIR) for the binding to
 * the incoming port's primary address. Only with a host stack beside the
 * dataplane (the exception path, --host-ports): without one a redirected
 * connection has nowhere to go, and compiling fails with EOPNOTSUPP.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#include <linux/netfilter/nf_nat.h> /* after netinet/in.h (vm_priv.h) */

struct redir_priv {
	uint8_t reg_proto_min, reg_proto_max, has_proto;
	uint32_t flags;
};
NFTDP_VM_PRIV_CHECK(struct redir_priv);

static void redir_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct redir_priv *p = (const void *)op->priv;
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
		r.flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
	}
	regs->verdict.code = pkt->ct_ops->nat(pkt->ct, pkt, NFTDP_VM_NAT_REDIR, &r);
}

static int redir_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct redir_priv *p = priv;
	int rc;

	if (!cc->st || !cc->st->local_stack)
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "redirect: no local stack (only with --host-ports)");
	/* the output path's redirect (to 127.0.0.1, rerouted to lo) has no
	 * loopback here */
	if (cc->chain->base && cc->chain->hook != NF_INET_PRE_ROUTING)
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "redirect: only at prerouting (no loopback for output)");
	if (nftdp_vm_attr(e, NFTNL_EXPR_REDIR_FLAGS)) {
		p->flags = nftdp_vm_u32(e, NFTNL_EXPR_REDIR_FLAGS);
		if (p->flags & ~NF_NAT_RANGE_MASK)
			return nftdp_vm_errf(cc, -EINVAL, "redirect: flags 0x%x", p->flags);
		if (p->flags & (NF_NAT_RANGE_NETMAP | NF_NAT_RANGE_PROTO_OFFSET))
			return nftdp_vm_errf(cc, -EOPNOTSUPP,
					     "redirect: prefix/offset maps not supported by nftdp");
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN)) {
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_REDIR_REG_PROTO_MIN,
					     &p->reg_proto_min, 2);
		if (rc < 0)
			return rc;
		p->reg_proto_max = p->reg_proto_min;
		if (nftdp_vm_attr(e, NFTNL_EXPR_REDIR_REG_PROTO_MAX)) {
			rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_REDIR_REG_PROTO_MAX,
						     &p->reg_proto_max, 2);
			if (rc < 0)
				return rc;
		}
		p->has_proto = 1;
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_redir = {
    .name = "redir",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "redir",
	    .size = sizeof(struct redir_priv),
	    .init = redir_init,
	    .eval = redir_eval,
	},
};
