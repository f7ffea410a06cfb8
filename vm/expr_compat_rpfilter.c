// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rpfilter match (ipt_rpfilter.c and ip6t_rpfilter.c, rev 0): is the
 * packet's source reachable back through the device it came in on? A
 * lookup of the source in the route table fib reads (the dataplane's
 * mirror of the kernel's routes, route/, through ctx->fib_ops; a commit
 * that brings rpfilter starts the mirror as fib's does). nftdp's ports
 * are never loopback devices and a packet never PACKET_LOOPBACK, so
 * rpfilter_is_loopback is always false here. The result is the route
 * table's: the op is never flow-cached.
 */
#include <arpa/inet.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_rpfilter.h>
#include <linux/rtnetlink.h>

#include "compat.h"

/* the kernel's XT_RPFILTER_OPTION_MASK (not in the uapi header) */
#define RPFILTER_OPTION_MASK                                                                       \
	(XT_RPFILTER_LOOSE | XT_RPFILTER_VALID_MARK | XT_RPFILTER_ACCEPT_LOCAL | XT_RPFILTER_INVERT)

struct rpfilter_priv {
	uint8_t flags;
};
NFTDP_VM_PRIV_CHECK(struct rpfilter_priv);

/* rpfilter_check: known flags, raw or mangle (hooks: PRE_ROUTING only,
 * the table entry's) */
int nftdp_vm_compat_rpfilter_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv)
{
	const struct xt_rpfilter_info *i = par->info;
	struct rpfilter_priv *p = priv;

	if (i->flags & ~RPFILTER_OPTION_MASK)
		return nftdp_vm_errf(cc, -EINVAL, "match rpfilter: unknown options 0x%x", i->flags);
	if (strcmp(cc->chain->table, "mangle") != 0 && strcmp(cc->chain->table, "raw") != 0)
		return nftdp_vm_errf(cc, -EINVAL,
				     "match rpfilter: only valid in 'raw' or 'mangle' table, not "
				     "'%s'",
				     cc->chain->table);
	p->flags = i->flags;
	cc->needs_routes = true;
	return 0;
}

static bool uses_dev(const struct nftdp_vm_fib_route *r, uint32_t dev)
{
	for (unsigned int i = 0; i < r->n_oif && i < NFTDP_VM_FIB_MAX_PATHS; i++)
		if (r->oif[i] == dev)
			return true;
	return false;
}

/* rpfilter_mt (ipv4) with rpfilter_lookup_reverse */
static bool rpfilter4(uint8_t flags, const struct nftdp_vm_pkt *pkt, const struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_fib_flow fl;
	struct nftdp_vm_fib_route r;
	uint32_t saddr, daddr;
	uint8_t iph[20];

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, iph, sizeof(iph)))
		return false;
	memcpy(&saddr, iph + 12, 4);
	memcpy(&daddr, iph + 16, 4);
	/* DHCP and the like: zeronet to broadcast or 224.0.0.0/24 */
	if (nftdp_vm_v4_zeronet(saddr) &&
	    (nftdp_vm_v4_lbcast(daddr) || (daddr & htonl(0xffffff00u)) == htonl(0xe0000000u)))
		return true;
	/* the flowi4: lo as the input device, the source looked up, the
	 * destination as its source unless it cannot be one
	 * (rpfilter_get_saddr), the mark with --validmark, the DSCP */
	fl = (struct nftdp_vm_fib_flow){.iif = NFTDP_VM_FIB_IIF_LOOPBACK, .dscp = iph[1] & 0xfc};
	memcpy(fl.daddr, &saddr, 4);
	if (!nftdp_vm_v4_multicast(daddr) && !nftdp_vm_v4_lbcast(daddr) &&
	    !nftdp_vm_v4_zeronet(daddr))
		memcpy(fl.saddr, &daddr, 4);
	if (flags & XT_RPFILTER_VALID_MARK)
		fl.mark = pkt->mark;
	if (!ctx->fib_ops)
		return false;
	if (ctx->fib_ops->route4_flow) {
		if (!ctx->fib_ops->route4_flow(ctx->fib, &fl, &r))
			return false;
	} else if (!ctx->fib_ops->route4(ctx->fib, saddr, &r)) {
		return false;
	}
	/* fib_lookup fails for the reject types; then only unicast, or local
	 * with --accept-local */
	if (r.type != RTN_UNICAST && (r.type != RTN_LOCAL || !(flags & XT_RPFILTER_ACCEPT_LOCAL)))
		return false;
	/* fib_info_nh_uses_dev: any path of the route */
	return uses_dev(&r, pkt->iif) || (flags & XT_RPFILTER_LOOSE);
}

/* __ipv6_addr_type, the bits rpfilter asks */
static bool a6_any(const uint8_t *a)
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

static bool a6_linklocal(const uint8_t *a)
{
	return (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || (a[0] == 0xff && (a[1] & 0x0f) == 2);
}

static bool a6_unicast(const uint8_t *a)
{
	static const uint8_t zero[12];

	if (a[0] == 0xff)
		return false;
	if (memcmp(a, zero, 12) == 0)
		return !a6_any(a); /* loopback and v4-compatible: unicast */
	if (memcmp(a, zero, 8) == 0 && a[8] == 0 && a[9] == 0 && a[10] == 0xff && a[11] == 0xff)
		return false; /* v4-mapped */
	return true;
}

/* rpfilter_mt (ipv6) with rpfilter_lookup_reverse6 */
static bool rpfilter6(uint8_t flags, const struct nftdp_vm_pkt *pkt, const struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_fib_flow fl;
	struct nftdp_vm_fib_route r;
	uint8_t iph[40];

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, iph, sizeof(iph)))
		return false;
	if (a6_any(iph + 8)) /* not routable: forwarding drops it */
		return true;
	fl = (struct nftdp_vm_fib_flow){
	    .iif = NFTDP_VM_FIB_IIF_LOOPBACK,
	    .dscp = (uint8_t)(((iph[0] << 4) | (iph[1] >> 4)) & 0xfc),
	    .proto = iph[6], /* iph->nexthdr */
	};
	memcpy(fl.daddr, iph + 8, 16);
	if (a6_unicast(iph + 24)) {
		memcpy(fl.saddr, iph + 24, 16);
		fl.has_saddr = true;
	}
	if (flags & XT_RPFILTER_VALID_MARK)
		fl.mark = pkt->mark;
	/* a link-local source: routes of the input device only
	 * (RT6_LOOKUP_F_IFACE) */
	if (a6_linklocal(iph + 8))
		fl.oif = pkt->iif;
	if (!ctx->fib_ops)
		return false;
	if (ctx->fib_ops->route6_flow) {
		if (!ctx->fib_ops->route6_flow(ctx->fib, &fl, &r))
			return false;
	} else if (!ctx->fib_ops->route6(ctx->fib, fl.daddr, fl.oif, &r)) {
		return false; /* ip6_null_entry: dst.error */
	}
	switch (r.type) {
	case RTN_BLACKHOLE: /* RTF_REJECT */
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
	case RTN_THROW:
	case RTN_ANYCAST:
		return false;
	case RTN_LOCAL:
		return flags & XT_RPFILTER_ACCEPT_LOCAL;
	default:
		break;
	}
	/* rt6_device_match prefers the route of the input device (strict:
	 * flowi6_oif), and rt6i_idev->dev is compared with it */
	return uses_dev(&r, pkt->iif) || (flags & XT_RPFILTER_LOOSE);
}

static void rpfilter_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct rpfilter_priv *p = (const void *)op->priv;
	bool invert = p->flags & XT_RPFILTER_INVERT, ret;

	if (pkt->nfproto == NFPROTO_IPV4)
		ret = rpfilter4(p->flags, pkt, ctx);
	else
		ret = rpfilter6(p->flags, pkt, ctx);
	compat_match_result(regs, ret ^ invert);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_rpfilter_ops = {
    .name = "match rpfilter",
    .size = sizeof(struct rpfilter_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = rpfilter_eval,
};
