// SPDX-License-Identifier: BSD-3-Clause
/*
 * rt: what the packet's route says (nft_rt.c; ip, ip6 and inet tables
 * only, as nft_rt_validate says). A packet has a route once the kernel has
 * routed it: at forward, postrouting, input and output; before that
 * (prerouting, inet ingress) it has none and every key breaks the rule. The
 * routes nftdp forwards by carry no realm and no xfrm bundle, so `rt
 * classid` is 0 and `rt ipsec` false where there is a route. `rt nexthop`
 * and `rt mtu` (NFT_RT_TCPMSS) read the packet's route from the route
 * table fib uses (the kernel's routes, mirrored): the route to daddr is
 * the dst a forwarded packet has; of a multipath route the path the
 * packet's multipath hash picks, as ip_mkroute_input / ip6_route_input's
 * fib6_select_path pick it (fib_ops' mp_select), and `rt mtu` that path's
 * mtu; get_tcpmss's route back to saddr is an output route, whose path
 * the flow {daddr saddr} picks (mp_select_out). No route there: no dst,
 * the rule breaks. Such a run is never cached: routes change under it.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct rt_priv {
	uint8_t key;
	uint8_t dreg;
};

/* whether the kernel's skb has a dst at this hook */
static bool routed(const struct nftdp_vm_pkt *pkt)
{
	return pkt->hook == NF_INET_FORWARD || pkt->hook == NF_INET_POST_ROUTING ||
	       pkt->hook == NF_INET_LOCAL_IN || pkt->hook == NF_INET_LOCAL_OUT;
}

static void rt_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct rt_priv *p = (const void *)op->priv;

	(void)ctx;
	if (!routed(pkt)) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	/* classid: dst->tclassid, no realm; xfrm: !!dst->xfrm (nft_reg_store8) */
	regs->data[p->dreg] = 0;
}

/* get_tcpmss's limits: TCP_MSS_DEFAULT where the mtu is out of range */
static uint16_t tcpmss_of(uint32_t mtu, uint32_t minlen)
{
	return mtu <= minlen || mtu > 0xffff ? 536 : (uint16_t)(mtu - minlen);
}

/* dst_mtu of a route: ipv4_mtu (the metric, else the device's) or ip6_mtu
 * (the same, IPV6_MIN_MTU without a device) */
static uint32_t route_mtu(const struct nftdp_vm_fib_route *r, bool v6)
{
	return r->mtu ? r->mtu : v6 ? 1280 : 0;
}

/* the packet's dst: its route to daddr (false: no route table, no IP
 * header, no route) */
static bool dst_route(const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_pkt *pkt,
		      struct nftdp_vm_fib_route *r)
{
	const struct nftdp_vm_fib_ops *fo = ctx->fib_ops;
	const uint8_t *ip = pkt->data + pkt->nh_off;

	if (!fo || (pkt->nfproto != NFPROTO_IPV4 && pkt->nfproto != NFPROTO_IPV6) ||
	    (uint64_t)pkt->nh_off + (pkt->nfproto == NFPROTO_IPV6 ? 40 : 20) > pkt->len)
		return false;
	return pkt->nfproto == NFPROTO_IPV6 ? fo->route6(ctx->fib, ip + 24, 0, r)
					    : fo->route4(ctx->fib, nftdp_ld32(ip + 16), r);
}

bool nftdp_vm_route_mtus(const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_pkt *pkt,
			 uint32_t *mtu, uint32_t *back)
{
	const struct nftdp_vm_fib_ops *fo = ctx->fib_ops;
	bool v6 = pkt->nfproto == NFPROTO_IPV6;
	const uint8_t *ip = pkt->data + pkt->nh_off;
	struct nftdp_vm_fib_route r;

	if (!dst_route(ctx, pkt, &r))
		return false;
	/* the forwarded packet's dst: the path its hash picks */
	nftdp_vm_fib_select(ctx, pkt, !v6, &r);
	*mtu = route_mtu(&r, v6);
	*back = ~0u;
	if (v6 ? fo->route6(ctx->fib, ip + 8, 0, &r)
	       : fo->route4(ctx->fib, nftdp_ld32(ip + 12), &r)) {
		/* nf_route's output route to saddr: the path of the flow
		 * {daddr saddr} (ip_route_output_key / ip6_route_output) */
		r.sel = 0;
		if (r.n_oif > 1 && fo->mp_select_out)
			fo->mp_select_out(ctx->fib, ip + (v6 ? 8 : 12), !v6, &r);
		*back = route_mtu(&r, v6);
	}
	return true;
}

/* nft_rt_get_eval's route keys */
static void rt_route_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct rt_priv *p = (const void *)op->priv;
	bool v6 = pkt->nfproto == NFPROTO_IPV6;
	const uint8_t *ip = pkt->data + pkt->nh_off;
	struct nftdp_vm_fib_route r;
	uint32_t mtu, back;

	if (!routed(pkt))
		goto brk;
	switch (p->key) {
	case NFT_RT_NEXTHOP4: /* rt_nexthop: the gateway, else daddr */
		if (pkt->nfproto != NFPROTO_IPV4 || !dst_route(ctx, pkt, &r))
			goto brk;
		nftdp_vm_fib_select(ctx, pkt, true, &r);
		memcpy(&regs->data[p->dreg], r.gateway ? r.gw : ip + 16, 4);
		return;
	case NFT_RT_NEXTHOP6: /* rt6_nexthop */
		if (!v6 || !dst_route(ctx, pkt, &r))
			goto brk;
		nftdp_vm_fib_select(ctx, pkt, false, &r);
		memcpy(&regs->data[p->dreg], r.gateway ? r.gw : ip + 24, 16);
		return;
	default: /* NFT_RT_TCPMSS: get_tcpmss, the lower of the mtus to both ends */
		if (!nftdp_vm_route_mtus(ctx, pkt, &mtu, &back))
			goto brk;
		mtu = back < mtu ? back : mtu;
		regs->data[p->dreg] = 0;
		nftdp_st16(&regs->data[p->dreg], tcpmss_of(mtu, v6 ? 60 : 40));
		return;
	}
brk:
	regs->verdict.code = NFT_BREAK;
}

static int rt_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct rt_priv *p = priv;
	int rc;
	uint32_t key, len;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_RT_KEY) || !nftdp_vm_attr(e, NFTNL_EXPR_RT_DREG))
		return nftdp_vm_errf(cc, -EINVAL, "rt: key or register missing");
	rc = nftdp_vm_ip_family_only(cc);
	if (rc < 0)
		return rc;
	key = nftdp_vm_u32(e, NFTNL_EXPR_RT_KEY);
	switch (key) {
	case NFT_RT_CLASSID:
		len = 4;
		break;
	case NFT_RT_XFRM:
		len = 1;
		break;
	case NFT_RT_NEXTHOP4:
		len = 4;
		cc->needs_routes = true;
		break;
	case NFT_RT_NEXTHOP6:
		len = 16;
		cc->needs_routes = true;
		break;
	case NFT_RT_TCPMSS:
		len = 2;
		cc->needs_routes = true;
		/* nft_rt_validate: where a packet has its output route */
		if (cc->chain->base && cc->chain->hook != NF_INET_FORWARD &&
		    cc->chain->hook != NF_INET_LOCAL_OUT && cc->chain->hook != NF_INET_POST_ROUTING)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "rt mtu: not valid in this hook");
		break;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "rt: key %u unknown", key);
	}
	p->key = (uint8_t)key;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_RT_DREG, &p->dreg, NFT_DATA_VALUE, len);
}

static const struct nftdp_vm_expr_ops rt_ops = {
    .name = "rt",
    .flow = NFTDP_VM_FLOW_REGS, /* fixed by family and hook, both in the key */
    .init = rt_init,
    .eval = rt_eval,
};

/* NFTDP_VM_FLOW_NEVER: the route table's answer, which no cache tag covers */
static const struct nftdp_vm_expr_ops rt_route_ops = {
    .name = "rt",
    .init = rt_init,
    .eval = rt_route_eval,
};

static const struct nftdp_vm_expr_ops *rt_select_ops(struct nftdp_vm_cctx *cc,
						     const struct nftnl_expr *e)
{
	(void)cc;
	if (nftdp_vm_attr(e, NFTNL_EXPR_RT_KEY)) {
		uint32_t key = nftdp_vm_u32(e, NFTNL_EXPR_RT_KEY);

		if (key == NFT_RT_NEXTHOP4 || key == NFT_RT_NEXTHOP6 || key == NFT_RT_TCPMSS)
			return &rt_route_ops;
	}
	return &rt_ops;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_rt = {
    .name = "rt",
    .ops = &rt_ops,
    .select_ops = rt_select_ops,
};
