// SPDX-License-Identifier: BSD-3-Clause
/*
 * fib: ask the route table about the packet's source or destination
 * (nft_fib.c, nft_fib_ipv4.c, nft_fib_ipv6.c, nft_fib_inet.c,
 * nft_fib_netdev.c). The table is the dataplane's mirror of the kernel's
 * (route/), reached through ctx->fib_ops so vm/ does not depend on it.
 * Results: the output device (oif, oifname, or with NFTA_FIB_F_PRESENT
 * whether there is one) or the address type (RTN_*). nftdp's ports are
 * never loopback devices, so nft_fib_is_loopback is always false here.
 * Hooks are checked by control/ (nft_fib_validate). The result depends on
 * the route table, not on the flow: fib keeps a run out of the flow cache.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <linux/rtnetlink.h>

#include "vm_priv.h"

#define NFTA_FIB_F_ALL                                                                             \
	(NFTA_FIB_F_SADDR | NFTA_FIB_F_DADDR | NFTA_FIB_F_MARK | NFTA_FIB_F_IIF | NFTA_FIB_F_OIF | \
	 NFTA_FIB_F_PRESENT)

struct fib_priv {
	uint32_t flags;
	uint8_t result;
	uint8_t dreg;
	uint8_t family; /* the table's NFPROTO_*: which family's fib type runs */
};
NFTDP_VM_PRIV_CHECK(struct fib_priv);

/* nft_reg_store8 */
static inline void store8(uint32_t *d, uint8_t v)
{
	*d = 0;
	*(uint8_t *)d = v;
}

/* nft_fib_store_result: dev is an ifindex, 0 for none */
static void store_result(uint32_t *dest, const struct fib_priv *p, uint32_t dev,
			 const struct nftdp_vm_pkt *pkt, const struct nftdp_vm_ctx *ctx)
{
	const char *name = NULL;

	if (p->result == NFT_FIB_RESULT_OIF) {
		if (p->flags & NFTA_FIB_F_PRESENT)
			store8(dest, dev != 0);
		else
			*dest = dev;
		return;
	}
	/* NFT_FIB_RESULT_OIFNAME */
	if (p->flags & NFTA_FIB_F_PRESENT) {
		store8(dest, dev != 0);
		return;
	}
	if (dev && dev == pkt->iif && pkt->iifname)
		name = pkt->iifname;
	else if (dev && dev == pkt->oif && pkt->oifname)
		name = pkt->oifname;
	else if (dev && ctx->fib_ops)
		name = ctx->fib_ops->ifname(ctx->fib, dev);
	memset(dest, 0, NFTDP_VM_IFNAMSIZ);
	if (name)
		strncpy((char *)dest, name, NFTDP_VM_IFNAMSIZ - 1);
}

static bool route4(const struct nftdp_vm_ctx *ctx, uint32_t daddr, struct nftdp_vm_fib_route *r)
{
	return ctx->fib_ops && ctx->fib_ops->route4(ctx->fib, daddr, r);
}

static bool route4_flow(const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_fib_flow *fl,
			struct nftdp_vm_fib_route *r)
{
	uint32_t daddr;

	if (!ctx->fib_ops)
		return false;
	if (ctx->fib_ops->route4_flow)
		return ctx->fib_ops->route4_flow(ctx->fib, fl, r);
	memcpy(&daddr, fl->daddr, 4);
	return ctx->fib_ops->route4(ctx->fib, daddr, r);
}

static bool route6_flow(const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_fib_flow *fl,
			struct nftdp_vm_fib_route *r)
{
	if (!ctx->fib_ops)
		return false;
	if (ctx->fib_ops->route6_flow)
		return ctx->fib_ops->route6_flow(ctx->fib, fl, r);
	return ctx->fib_ops->route6(ctx->fib, fl->daddr, fl->oif, r);
}

void nftdp_vm_fib_select(const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_pkt *pkt, bool v4,
			 struct nftdp_vm_fib_route *r)
{
	r->sel = 0;
	if (r->n_oif > 1 && ctx->fib_ops && ctx->fib_ops->mp_select)
		ctx->fib_ops->mp_select(ctx->fib, pkt, v4, r);
}

/* route types whose lookup fails (fib_props[type].error, RTF_REJECT) */
static bool reject_type(uint8_t type)
{
	switch (type) {
	case RTN_BLACKHOLE:
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
	case RTN_THROW:
	case RTN_NAT:
	case RTN_XRESOLVE:
		return true;
	default:
		return false;
	}
}

/* the device the flags name: nft_in or nft_out, 0 for none */
static uint32_t flag_dev(const struct fib_priv *p, const struct nftdp_vm_pkt *pkt)
{
	if (p->flags & NFTA_FIB_F_IIF)
		return pkt->iif;
	if (p->flags & NFTA_FIB_F_OIF)
		return pkt->oif;
	return 0;
}

/* nft_fib4_eval_type: inet_dev_addr_type over the merged local table */
static void fib4_eval_type(const struct fib_priv *p, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	uint32_t *dest = &regs->data[p->dreg];
	uint32_t dev = flag_dev(p, pkt), addr;
	struct nftdp_vm_fib_route r;
	uint8_t iph[20];

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, iph, sizeof(iph))) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	memcpy(&addr, iph + ((p->flags & NFTA_FIB_F_DADDR) ? 16 : 12), 4);
	if (nftdp_vm_v4_zeronet(addr) || nftdp_vm_v4_lbcast(addr)) {
		*dest = RTN_BROADCAST;
		return;
	}
	if (nftdp_vm_v4_multicast(addr)) {
		*dest = RTN_MULTICAST;
		return;
	}
	*dest = RTN_UNICAST;
	if (route4(ctx, addr, &r) && !reject_type(r.type) && (!dev || (r.n_oif && r.oif[0] == dev)))
		*dest = r.type;
}

/* fib_info_nh_uses_dev */
static bool uses_dev(const struct nftdp_vm_fib_route *r, uint32_t dev)
{
	for (unsigned int i = 0; i < r->n_oif; i++)
		if (r->oif[i] == dev)
			return true;
	return false;
}

/* nft_fib4_eval */
static void fib4_eval(const struct fib_priv *p, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	uint32_t *dest = &regs->data[p->dreg];
	uint32_t oif = flag_dev(p, pkt), saddr, daddr, found, other;
	struct nftdp_vm_fib_flow fl;
	struct nftdp_vm_fib_route r;
	uint8_t iph[20];

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, iph, sizeof(iph))) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	memcpy(&saddr, iph + 12, 4);
	memcpy(&daddr, iph + 16, 4);
	/* DHCP and the like: the receiving device (skb->dev) */
	if (nftdp_vm_v4_zeronet(saddr) &&
	    (nftdp_vm_v4_lbcast(daddr) || (daddr & htonl(0xffffff00u)) == htonl(0xe0000000u))) {
		store_result(dest, p, pkt->iif, pkt, ctx);
		return;
	}
	/* nft_fib4_eval's flowi4: lo as the input device (the output
	 * device for a saddr check at forward), the mark only when asked,
	 * the DSCP, and the other address unless it cannot be a source
	 * (get_saddr); no protocol, no ports. The `ip rule`s see these. */
	fl = (struct nftdp_vm_fib_flow){.iif = NFTDP_VM_FIB_IIF_LOOPBACK, .dscp = iph[1] & 0xfc};
	if (p->flags & NFTA_FIB_F_MARK)
		fl.mark = pkt->mark;
	if (p->flags & NFTA_FIB_F_DADDR) {
		memcpy(fl.daddr, &daddr, 4);
		other = saddr;
	} else {
		if (pkt->hook == NF_INET_FORWARD && (p->flags & NFTA_FIB_F_IIF))
			fl.iif = pkt->oif;
		memcpy(fl.daddr, &saddr, 4);
		other = daddr;
	}
	if (!nftdp_vm_v4_multicast(other) && !nftdp_vm_v4_lbcast(other) &&
	    !nftdp_vm_v4_zeronet(other))
		memcpy(fl.saddr, &other, 4);
	*dest = 0;
	if (!route4_flow(ctx, &fl, &r) || reject_type(r.type))
		return;
	if (r.type == RTN_LOCAL)
		return;
	if (!oif) {
		found = r.n_oif ? r.oif[0] : 0;
	} else {
		if (!uses_dev(&r, oif))
			return;
		found = oif;
	}
	store_result(dest, p, found, pkt, ctx);
}

/* __ipv6_addr_type, the bits fib uses */
enum { A6_ANY = 1, A6_UNICAST = 2, A6_MULTICAST = 4, A6_LINKLOCAL = 8 };

static unsigned int addr6_type(const uint8_t *a)
{
	static const uint8_t zero[12];

	if (a[0] == 0xff) {
		unsigned int t = A6_MULTICAST;

		if ((a[1] & 0x0f) == 2) /* IPV6_ADDR_SCOPE_LINKLOCAL */
			t |= A6_LINKLOCAL;
		return t;
	}
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return A6_UNICAST | A6_LINKLOCAL;
	if (memcmp(a, zero, 8) == 0) {
		if (memcmp(a + 8, zero, 4) == 0) {
			static const uint8_t any[4];

			return memcmp(a + 12, any, 4) == 0 ? A6_ANY : A6_UNICAST;
		}
		if (a[8] == 0 && a[9] == 0 && a[10] == 0xff && a[11] == 0xff)
			return 0; /* IPV6_ADDR_MAPPED */
	}
	return A6_UNICAST;
}

/* nft_fib6_flowi_init: the lookup's address, and the device a link-local
 * one is looked up on (0: none) */
static uint32_t fib6_flowi(const struct fib_priv *p, const struct nftdp_vm_pkt *pkt, uint32_t dev,
			   const uint8_t *iph, const uint8_t **daddr)
{
	*daddr = iph + ((p->flags & NFTA_FIB_F_DADDR) ? 24 : 8);
	if (addr6_type(*daddr) & A6_LINKLOCAL)
		return dev ? dev : pkt->iif;
	return 0;
}

/* the rest of nft_fib6_flowi_init's flowi6: lo as the input device, the
 * other address (RT6_LOOKUP_F_HAS_SADDR when unicast), the mark when
 * asked, the traffic class, pkt->tprot */
static void fib6_flow(const struct fib_priv *p, const struct nftdp_vm_pkt *pkt, const uint8_t *iph,
		      const uint8_t *daddr, uint32_t ll_oif, struct nftdp_vm_fib_flow *fl)
{
	const uint8_t *saddr = daddr == iph + 24 ? iph + 8 : iph + 24;

	*fl = (struct nftdp_vm_fib_flow){.iif = NFTDP_VM_FIB_IIF_LOOPBACK, .oif = ll_oif};
	/* a saddr check at forward with iif: the output device as flowi6_iif,
	 * for `ip rule iif` (as nft_fib4_eval) */
	if (!(p->flags & NFTA_FIB_F_DADDR) && pkt->hook == NF_INET_FORWARD &&
	    (p->flags & NFTA_FIB_F_IIF))
		fl->iif = pkt->oif;
	memcpy(fl->daddr, daddr, 16);
	memcpy(fl->saddr, saddr, 16);
	fl->has_saddr = (addr6_type(saddr) & A6_UNICAST) != 0;
	fl->dscp = (uint8_t)(((iph[0] << 4) | (iph[1] >> 4)) & 0xfc);
	fl->proto = (pkt->flags & NFTDP_VM_PKT_F_L4PROTO) ? pkt->l4proto : 0;
	if (p->flags & NFTA_FIB_F_MARK)
		fl->mark = pkt->mark;
}

/* __nft_fib6_eval_type */
static uint32_t fib6_type(const struct fib_priv *p, const struct nftdp_vm_pkt *pkt,
			  const struct nftdp_vm_ctx *ctx, const uint8_t *iph)
{
	uint32_t dev = flag_dev(p, pkt), ret = 0, oif;
	struct nftdp_vm_fib_flow fl;
	struct nftdp_vm_fib_route r;
	const uint8_t *daddr;
	unsigned int t;

	oif = fib6_flowi(p, pkt, dev, iph, &daddr);
	fib6_flow(p, pkt, iph, daddr, oif, &fl);
	if (dev && ctx->fib_ops && ctx->fib_ops->addr6_on(ctx->fib, daddr, dev))
		ret = RTN_LOCAL;
	if (!route6_flow(ctx, &fl, &r))
		return RTN_UNREACHABLE; /* ip6_null_entry: -ENETUNREACH */
	switch (r.type) {
	case RTN_BLACKHOLE:
		return RTN_BLACKHOLE; /* -EINVAL */
	case RTN_PROHIBIT:
		return RTN_PROHIBIT; /* -EACCES */
	case RTN_THROW:
		return RTN_THROW; /* -EAGAIN */
	case RTN_UNREACHABLE:
		return RTN_UNREACHABLE;
	default:
		break;
	}
	/* ipv6_anycast_destination: an anycast route, or the subnet-router
	 * anycast address of an on-link prefix */
	if (r.type == RTN_ANYCAST || (r.plen < 127 && !r.gateway && memcmp(r.dst, daddr, 16) == 0))
		ret = RTN_ANYCAST;
	else if (!dev && r.type == RTN_LOCAL)
		ret = RTN_LOCAL;
	if (ret)
		return ret;
	t = addr6_type(daddr);
	if (t & A6_MULTICAST)
		return RTN_MULTICAST;
	if (t & A6_UNICAST)
		return RTN_UNICAST;
	return RTN_UNSPEC;
}

static void fib6_eval_type(const struct fib_priv *p, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	uint8_t iph[40];

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, iph, sizeof(iph))) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	regs->data[p->dreg] = fib6_type(p, pkt, ctx, iph);
}

/* nft_fib6_eval */
static void fib6_eval(const struct fib_priv *p, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	uint32_t *dest = &regs->data[p->dreg];
	uint32_t oif = flag_dev(p, pkt), ll_oif, tprot;
	struct nftdp_vm_fib_flow fl;
	struct nftdp_vm_fib_route r;
	const uint8_t *daddr;
	uint8_t iph[40];

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, iph, sizeof(iph))) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	ll_oif = fib6_flowi(p, pkt, oif, iph, &daddr);
	tprot = (pkt->flags & NFTDP_VM_PKT_F_L4PROTO) ? pkt->l4proto : 0;
	/* nft_fib_v6_skip_icmpv6: DAD and router solicitations from :: */
	if ((pkt->hook == NF_INET_PRE_ROUTING || pkt->hook == NF_INET_INGRESS) &&
	    tprot == IPPROTO_ICMPV6 && addr6_type(iph + 8) == A6_ANY &&
	    (addr6_type(iph + 24) & A6_LINKLOCAL)) {
		store_result(dest, p, pkt->iif, pkt, ctx);
		return;
	}
	*dest = 0;
	fib6_flow(p, pkt, iph, daddr, ll_oif, &fl);
	if (!route6_flow(ctx, &fl, &r) || reject_type(r.type))
		return;
	if (r.type == RTN_ANYCAST || r.type == RTN_LOCAL)
		return;
	if (!r.n_oif)
		return;
	/* ip6_pol_route_lookup's fib6_select_path: a multipath route's path
	 * by rt6_multipath_hash of the packet itself (the skb is passed), the
	 * hash its forwarding takes; the flowi's oif (a link-local address)
	 * keeps the matched route's path (have_oif_match) */
	if (!ll_oif)
		nftdp_vm_fib_select(ctx, pkt, false, &r);
	else
		r.sel = 0;
	if (oif && oif != r.oif[r.sel])
		return;
	store_result(dest, p, r.oif[r.sel], pkt, ctx);
}

static void fib_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct fib_priv *p = (const void *)op->priv;
	uint8_t nfproto;

	switch (p->family) {
	case NFPROTO_NETDEV: /* nft_fib_netdev_eval: by skb->protocol */
		if (pkt->protocol == htons(0x0800))
			nfproto = NFPROTO_IPV4;
		else if (pkt->protocol == htons(0x86dd))
			nfproto = NFPROTO_IPV6;
		else {
			regs->verdict.code = NFT_BREAK;
			return;
		}
		break;
	case NFPROTO_INET: /* nft_fib_inet_eval: other families drop */
		nfproto = pkt->nfproto;
		if (nfproto != NFPROTO_IPV4 && nfproto != NFPROTO_IPV6) {
			regs->verdict.code = NF_DROP;
			return;
		}
		break;
	default:
		nfproto = p->family;
		break;
	}
	if (nfproto == NFPROTO_IPV4) {
		if (p->result == NFT_FIB_RESULT_ADDRTYPE)
			fib4_eval_type(p, regs, pkt, ctx);
		else
			fib4_eval(p, regs, pkt, ctx);
	} else {
		if (p->result == NFT_FIB_RESULT_ADDRTYPE)
			fib6_eval_type(p, regs, pkt, ctx);
		else
			fib6_eval(p, regs, pkt, ctx);
	}
}

/* nft_fib_init, after the policy (NLA_POLICY_MASK) and select_ops */
static int fib_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct fib_priv *p = priv;
	uint32_t flags, result, len;

	cc->needs_routes = true;
	switch (cc->chain->family) {
	case NFPROTO_IPV4:
	case NFPROTO_IPV6:
	case NFPROTO_INET:
	case NFPROTO_NETDEV:
		break;
	default: /* no fib type registered for the family */
		return nftdp_vm_errf(cc, -ENOENT, "fib: no such expression in this family");
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_FIB_FLAGS) &&
	    (nftdp_vm_u32(e, NFTNL_EXPR_FIB_FLAGS) & ~(uint32_t)NFTA_FIB_F_ALL))
		return nftdp_vm_errf(cc, -EINVAL, "fib: unknown flags");
	result = nftdp_vm_u32(e, NFTNL_EXPR_FIB_RESULT);
	/* ip and ip6 pick their ops by result first (nft_fib4/6_select_ops);
	 * inet and netdev have one ops and leave it to nft_fib_init */
	if (cc->chain->family == NFPROTO_IPV4 || cc->chain->family == NFPROTO_IPV6) {
		if (!nftdp_vm_attr(e, NFTNL_EXPR_FIB_RESULT))
			return nftdp_vm_errf(cc, -EINVAL, "fib: result missing");
		if (result != NFT_FIB_RESULT_OIF && result != NFT_FIB_RESULT_OIFNAME &&
		    result != NFT_FIB_RESULT_ADDRTYPE)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "fib: result %u unknown", result);
	}
	if (!nftdp_vm_attr(e, NFTNL_EXPR_FIB_DREG) || !nftdp_vm_attr(e, NFTNL_EXPR_FIB_FLAGS) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_FIB_RESULT))
		return nftdp_vm_errf(cc, -EINVAL, "fib: register, result or flags missing");
	flags = nftdp_vm_u32(e, NFTNL_EXPR_FIB_FLAGS);
	if (flags == 0)
		return nftdp_vm_errf(cc, -EINVAL, "fib: no flags");
	if ((flags & (NFTA_FIB_F_SADDR | NFTA_FIB_F_DADDR)) ==
	    (NFTA_FIB_F_SADDR | NFTA_FIB_F_DADDR))
		return nftdp_vm_errf(cc, -EINVAL, "fib: saddr and daddr");
	if ((flags & (NFTA_FIB_F_IIF | NFTA_FIB_F_OIF)) == (NFTA_FIB_F_IIF | NFTA_FIB_F_OIF))
		return nftdp_vm_errf(cc, -EINVAL, "fib: iif and oif");
	if (!(flags & (NFTA_FIB_F_SADDR | NFTA_FIB_F_DADDR)))
		return nftdp_vm_errf(cc, -EINVAL, "fib: neither saddr nor daddr");
	switch (result) {
	case NFT_FIB_RESULT_OIF:
		len = 4;
		break;
	case NFT_FIB_RESULT_OIFNAME:
		len = NFTDP_VM_IFNAMSIZ;
		break;
	case NFT_FIB_RESULT_ADDRTYPE:
		len = 4;
		break;
	default:
		return nftdp_vm_errf(cc, -EINVAL, "fib: result %u unknown", result);
	}
	if (result != NFT_FIB_RESULT_ADDRTYPE && (flags & NFTA_FIB_F_OIF))
		return nftdp_vm_errf(cc, -EINVAL, "fib: oif result with oif flag");
	p->flags = flags;
	p->result = (uint8_t)result;
	p->family = cc->chain->family;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_FIB_DREG, &p->dreg, NFT_DATA_VALUE, len);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_fib = {
    .name = "fib",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "fib",
	    .size = sizeof(struct fib_priv),
	    /* NFTDP_VM_FLOW_NEVER: the result is the route table's, which
	     * no flow cache tag covers */
	    .init = fib_init,
	    .eval = fib_eval,
	},
};
