// SPDX-License-Identifier: BSD-3-Clause
/*
 * dup: send a copy of the packet and go on. netdev: out of the port in a
 * register (nft_dup_netdev.c). ip / ip6: to the gateway address in a
 * register, optionally through a device (nft_dup_ipv4.c, nft_dup_ipv6.c):
 * the dataplane routes the copy over the mirrored routes (nf_dup_ipv4/6).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct dup_priv {
	uint8_t sreg_dev;  /* 0: no device (the kernel's oif -1) */
	uint8_t sreg_addr; /* 0: netdev's dup to a device */
	uint8_t alen;
};
NFTDP_VM_PRIV_CHECK(struct dup_priv);

static void dup_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct dup_priv *p = (const void *)op->priv;

	(void)ctx;
	if (pkt->out.n_dup < NFTDP_VM_MAX_DUP)
		pkt->out.dup_oif[pkt->out.n_dup++] = regs->data[p->sreg_dev];
}

/* nft_dup_ipv4_eval / nft_dup_ipv6_eval: the copy is made and routed by
 * the dataplane when the hook's verdicts are settled */
static void dup_addr_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct dup_priv *p = (const void *)op->priv;
	unsigned int i = pkt->out.n_dup;

	(void)ctx;
	if (i >= NFTDP_VM_MAX_DUP)
		return;
	memset(pkt->dup_addr[i], 0, sizeof(pkt->dup_addr[i]));
	memcpy(pkt->dup_addr[i], &regs->data[p->sreg_addr], p->alen);
	pkt->out.dup_oif[i] = p->sreg_dev ? regs->data[p->sreg_dev] : 0;
	pkt->out.dup_to_addr |= (uint8_t)(1u << i);
	pkt->out.n_dup++;
}

static int dup_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct dup_priv *p = priv;
	int rc;

	if (cc->chain->family == NFPROTO_IPV4 || cc->chain->family == NFPROTO_IPV6) {
		/* nft_dup_ipv4_init / nft_dup_ipv6_init: any hook */
		if (!nftdp_vm_attr(e, NFTNL_EXPR_DUP_SREG_ADDR))
			return nftdp_vm_errf(cc, -EINVAL, "dup: no address");
		p->alen = cc->chain->family == NFPROTO_IPV4 ? 4 : 16;
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DUP_SREG_ADDR, &p->sreg_addr,
					     p->alen);
		if (rc == 0 && nftdp_vm_attr(e, NFTNL_EXPR_DUP_SREG_DEV))
			rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DUP_SREG_DEV, &p->sreg_dev,
						     4);
		cc->needs_routes = true; /* the copy is routed: the route mirror */
		return rc;
	}
	/* the kernel has the type for ip, ip6 and netdev only */
	if (cc->chain->family != NFPROTO_NETDEV)
		return nftdp_vm_errf(cc, -ENOENT, "dup: no such expression in this family");
	if (!nftdp_vm_attr(e, NFTNL_EXPR_DUP_SREG_DEV))
		return nftdp_vm_errf(cc, -EINVAL, "dup: no device");
	if (cc->chain->base && cc->chain->hook != NF_NETDEV_INGRESS &&
	    cc->chain->hook != NF_NETDEV_EGRESS)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dup: only in netdev ingress and egress");
	return nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DUP_SREG_DEV, &p->sreg_dev, 4);
}

static const struct nftdp_vm_expr_ops dup_addr_ops = {
    .name = "dup",
    .size = sizeof(struct dup_priv),
    .init = dup_init,
    .eval = dup_addr_eval,
};

static const struct nftdp_vm_expr_ops dup_ops = {
    .name = "dup",
    .size = sizeof(struct dup_priv),
    .init = dup_init,
    .eval = dup_eval,
};

static const struct nftdp_vm_expr_ops *dup_select(struct nftdp_vm_cctx *cc,
						  const struct nftnl_expr *e)
{
	(void)e;
	return cc->chain->family == NFPROTO_IPV4 || cc->chain->family == NFPROTO_IPV6
		   ? &dup_addr_ops
		   : &dup_ops;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_dup = {
    .name = "dup",
    .select_ops = dup_select,
};
