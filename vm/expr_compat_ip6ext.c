// SPDX-License-Identifier: BSD-3-Clause
/*
 * ip6tables' extension header matches: rt (ip6t_rt.c), frag (ip6t_frag.c),
 * hbh and dst (ip6t_hbh.c), ipv6header (ip6t_ipv6header.c), rev 0, IPv6
 * only. rt, frag, hbh and dst find their header with ipv6_find_hdr (the
 * walk exthdr takes); a walk that cannot read the packet drops it
 * (hotdrop), a header that is not there is no match. Offsets are from
 * pkt->data; the kernel's skb->len is pkt->nh_off + pkt->skb_len there.
 */
#include <arpa/inet.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/netfilter_ipv6/ip6t_frag.h>
#include <linux/netfilter_ipv6/ip6t_ipv6header.h>
#include <linux/netfilter_ipv6/ip6t_opts.h>
#include <linux/netfilter_ipv6/ip6t_rt.h>

#include "compat.h"

#define NH_HOP 0
#define NH_ROUTING 43
#define NH_FRAGMENT 44
#define NH_ESP 50
#define NH_AUTH 51
#define NH_NONE 59
#define NH_DEST 60

/* the info is kept whole in the op's blob (rt's addresses) */
struct ip6ext_priv {
	const void *info;
	uint8_t target; /* hbh: NEXTHDR_HOP, dst: NEXTHDR_DEST */
};
NFTDP_VM_PRIV_CHECK(struct ip6ext_priv);

static int keep_info(struct nftdp_vm_cctx *cc, const struct compat_par *par, size_t size,
		     struct ip6ext_priv *p)
{
	void *b = nftdp_vm_blob(cc, size);

	if (!b)
		return nftdp_vm_errf(cc, -ENOMEM, "match: no memory");
	memcpy(b, par->info, size);
	p->info = b;
	return 0;
}

/* the packet's end as skb->len sees it */
static uint32_t skb_end(const struct nftdp_vm_pkt *pkt)
{
	uint32_t end = pkt->nh_off + pkt->skb_len;

	return end < pkt->len ? end : pkt->len;
}

/* ---- rt ---- */

int nftdp_vm_compat_rt_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ip6t_rt *i = par->info;

	/* rt_mt6_check */
	if (i->invflags & ~IP6T_RT_INV_MASK)
		return nftdp_vm_errf(cc, -EINVAL, "match rt: unknown flags 0x%x", i->invflags);
	if ((i->flags & (IP6T_RT_RES | IP6T_RT_FST_MASK)) &&
	    (!(i->flags & IP6T_RT_TYP) || i->rt_type != 0 || (i->invflags & IP6T_RT_INV_TYP)))
		return nftdp_vm_errf(cc, -EINVAL,
				     "match rt: `--rt-type 0' required before "
				     "`--rt-0-*'");
	return keep_info(cc, par, sizeof(*i), priv);
}

static bool range_match(uint32_t min, uint32_t max, uint32_t v, bool invert)
{
	return (v >= min && v <= max) ^ invert;
}

/* rt_mt6; -1: hotdrop */
static int rt_match(const struct ip6t_rt *i, const struct nftdp_vm_pkt *pkt)
{
	uint32_t ptr = 0, hdrlen, naddr, end = skb_end(pkt), temp;
	uint8_t rh[8], addr[16];
	bool ret;
	int err;

	err = nftdp_vm_ipv6_find_hdr(pkt, &ptr, NH_ROUTING);
	if (err < 0)
		return err == -ENOENT ? 0 : -1;
	if (!nftdp_vm_copy_bits(pkt, ptr, rh, 4))
		return -1;
	hdrlen = ((uint32_t)rh[1] + 1) << 3;
	if (ptr > end || end - ptr < hdrlen)
		return 0; /* smaller than its length field */
	ret = range_match(i->segsleft[0], i->segsleft[1], rh[3], i->invflags & IP6T_RT_INV_SGS) &&
	      (!(i->flags & IP6T_RT_LEN) ||
	       ((i->hdrlen == hdrlen) ^ !!(i->invflags & IP6T_RT_INV_LEN))) &&
	      (!(i->flags & IP6T_RT_TYP) ||
	       ((i->rt_type == rh[2]) ^ !!(i->invflags & IP6T_RT_INV_TYP)));
	if (ret && (i->flags & IP6T_RT_RES)) {
		if (!nftdp_vm_copy_bits(pkt, ptr + 4, rh + 4, 4))
			return -1;
		ret = rh[4] == 0 && rh[5] == 0 && rh[6] == 0 && rh[7] == 0;
	}
	if (!(i->flags & IP6T_RT_FST))
		return ret;
	naddr = (hdrlen - 8) / 16;
	if (i->addrnr > naddr)
		return 0;
	if (i->flags & IP6T_RT_FST_NSTRICT) {
		unsigned int k = 0;

		/* the listed addresses in order, others between them */
		for (temp = 0; temp < naddr; temp++) {
			if (!nftdp_vm_copy_bits(pkt, ptr + 8 + temp * 16, addr, 16))
				return -1;
			if (k < IP6T_RT_HOPS && memcmp(addr, &i->addrs[k], 16) == 0)
				k++;
			if (k == i->addrnr)
				break;
		}
		return k == i->addrnr ? ret : 0;
	}
	for (temp = 0; temp < i->addrnr && temp < IP6T_RT_HOPS; temp++) {
		if (!nftdp_vm_copy_bits(pkt, ptr + 8 + temp * 16, addr, 16))
			return -1;
		if (memcmp(addr, &i->addrs[temp], 16) != 0)
			break;
	}
	return temp == i->addrnr && temp == naddr ? ret : 0;
}

/* ---- frag ---- */

int nftdp_vm_compat_frag_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ip6t_frag *i = par->info;

	if (i->invflags & ~IP6T_FRAG_INV_MASK) /* frag_mt6_check */
		return nftdp_vm_errf(cc, -EINVAL, "match frag: unknown flags 0x%x", i->invflags);
	return keep_info(cc, par, sizeof(*i), priv);
}

/* frag_mt6 (--fraglen's hdrlen is not compared: the kernel does not) */
static int frag_match(const struct ip6t_frag *i, const struct nftdp_vm_pkt *pkt)
{
	uint32_t ptr = 0, id;
	uint16_t off;
	uint8_t fh[8];
	int err;

	err = nftdp_vm_ipv6_find_hdr(pkt, &ptr, NH_FRAGMENT);
	if (err < 0)
		return err == -ENOENT ? 0 : -1;
	if (!nftdp_vm_copy_bits(pkt, ptr, fh, sizeof(fh)))
		return -1;
	off = (uint16_t)(fh[2] << 8 | fh[3]);
	id = (uint32_t)fh[4] << 24 | (uint32_t)fh[5] << 16 | (uint32_t)fh[6] << 8 | fh[7];
	return range_match(i->ids[0], i->ids[1], id, i->invflags & IP6T_FRAG_INV_IDS) &&
	       !((i->flags & IP6T_FRAG_RES) && (fh[1] || (off & 0x6))) &&
	       !((i->flags & IP6T_FRAG_FST) && (off & ~0x7)) &&
	       !((i->flags & IP6T_FRAG_MF) && !(off & 1)) &&
	       !((i->flags & IP6T_FRAG_NMF) && (off & 1));
}

/* ---- hbh and dst ---- */

static int opts_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
		      const char *name)
{
	const struct ip6t_opts *i = par->info;

	/* hbh_mt6_check */
	if (i->invflags & ~IP6T_OPTS_INV_MASK)
		return nftdp_vm_errf(cc, -EINVAL, "match %s: unknown flags 0x%x", name,
				     i->invflags);
	if (i->flags & IP6T_OPTS_NSTRICT)
		return nftdp_vm_errf(cc, -EINVAL, "match %s: not strict - not implemented", name);
	return keep_info(cc, par, sizeof(*i), priv);
}

int nftdp_vm_compat_hbh_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	((struct ip6ext_priv *)priv)->target = NH_HOP;
	return opts_check(cc, par, priv, "hbh");
}

int nftdp_vm_compat_dst_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	((struct ip6ext_priv *)priv)->target = NH_DEST;
	return opts_check(cc, par, priv, "dst");
}

/* hbh_mt6: the header's length, then the options in order (strict) */
static int opts_match(const struct ip6t_opts *i, uint8_t target, const struct nftdp_vm_pkt *pkt)
{
	uint32_t ptr = 0, hdrlen, end = skb_end(pkt), temp, optlen;
	uint8_t oh[2], tp, lp;
	bool ret;
	int err;

	err = nftdp_vm_ipv6_find_hdr(pkt, &ptr, target);
	if (err < 0)
		return err == -ENOENT ? 0 : -1;
	if (!nftdp_vm_copy_bits(pkt, ptr, oh, sizeof(oh)))
		return -1;
	hdrlen = ((uint32_t)oh[1] + 1) << 3;
	if (ptr > end || end - ptr < hdrlen)
		return 0;
	ret = !(i->flags & IP6T_OPTS_LEN) ||
	      ((i->hdrlen == hdrlen) ^ !!(i->invflags & IP6T_OPTS_INV_LEN));
	ptr += 2;
	hdrlen -= 2;
	if (!(i->flags & IP6T_OPTS_OPTS))
		return ret;
	for (temp = 0; temp < i->optsnr && temp < IP6T_OPTS_OPTSNR; temp++) {
		if (hdrlen < 1 || !nftdp_vm_copy_bits(pkt, ptr, &tp, 1))
			break;
		if (tp != (i->opts[temp] & 0xFF00) >> 8)
			return 0;
		if (tp) {
			uint16_t spec_len;

			if (hdrlen < 2 || !nftdp_vm_copy_bits(pkt, ptr + 1, &lp, 1))
				break;
			spec_len = i->opts[temp] & 0x00FF;
			if (spec_len != 0x00FF && spec_len != lp)
				return 0;
			optlen = (uint32_t)lp + 2;
		} else {
			optlen = 1; /* Pad1 */
		}
		/* ptr > skb->len - optlen, unsigned as the kernel's */
		if ((ptr > end - optlen || hdrlen < optlen) && temp < (uint32_t)i->optsnr - 1)
			break;
		ptr += optlen;
		hdrlen -= optlen;
	}
	return temp == i->optsnr ? ret : 0;
}

/* ---- ipv6header ---- */

int nftdp_vm_compat_ipv6header_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv)
{
	const struct ip6t_ipv6header_info *i = par->info;

	/* ipv6header_mt6_check: invflags is 0 or 0xff in hard mode */
	if (!i->modeflag && i->invflags != 0x00 && i->invflags != 0xFF)
		return nftdp_vm_errf(cc, -EINVAL, "match ipv6header: invflags 0x%x", i->invflags);
	return keep_info(cc, par, sizeof(*i), priv);
}

static bool ip6t_ext_hdr(uint8_t nh)
{
	return nh == NH_HOP || nh == NH_ROUTING || nh == NH_FRAGMENT || nh == NH_ESP ||
	       nh == NH_AUTH || nh == NH_NONE || nh == NH_DEST;
}

/* ipv6header_mt6; -1: hotdrop */
static int ipv6header_match(const struct ip6t_ipv6header_info *i, const struct nftdp_vm_pkt *pkt)
{
	uint32_t end = skb_end(pkt), ptr = pkt->nh_off + 40;
	int64_t len = (int64_t)end - ptr;
	unsigned int temp = 0;
	uint8_t nexthdr, hp[2];

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + 6, &nexthdr, 1))
		return -1;
	while (ip6t_ext_hdr(nexthdr)) {
		uint32_t hdrlen;

		if (nexthdr == NH_NONE) {
			temp |= MASK_NONE;
			break;
		}
		if (len < 2)
			return 0;
		if (nexthdr == NH_ESP) {
			temp |= MASK_ESP;
			break;
		}
		if (!nftdp_vm_copy_bits(pkt, ptr, hp, sizeof(hp)))
			return -1;
		if (nexthdr == NH_FRAGMENT)
			hdrlen = 8;
		else if (nexthdr == NH_AUTH)
			hdrlen = ((uint32_t)hp[1] + 2) << 2;
		else
			hdrlen = ((uint32_t)hp[1] + 1) << 3;
		switch (nexthdr) {
		case NH_HOP:
			temp |= MASK_HOPOPTS;
			break;
		case NH_ROUTING:
			temp |= MASK_ROUTING;
			break;
		case NH_FRAGMENT:
			temp |= MASK_FRAGMENT;
			break;
		case NH_AUTH:
			temp |= MASK_AH;
			break;
		default: /* NH_DEST */
			temp |= MASK_DSTOPTS;
			break;
		}
		nexthdr = hp[0];
		len -= hdrlen;
		ptr += hdrlen;
		if (ptr > end)
			break;
	}
	if (nexthdr != NH_NONE && nexthdr != NH_ESP)
		temp |= MASK_PROTO;
	if (i->modeflag)
		return !((temp ^ i->matchflags ^ i->invflags) & i->matchflags);
	if (i->invflags)
		return temp != i->matchflags;
	return temp == i->matchflags;
}

/* ---- the ops ---- */

static void ip6ext_result(struct nftdp_vm_regs *regs, int r)
{
	if (r < 0)
		regs->verdict.code = NF_DROP;
	else
		compat_match_result(regs, r != 0);
}

static void rt_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ip6ext_priv *p = (const void *)op->priv;

	(void)ctx;
	ip6ext_result(regs, rt_match(p->info, pkt));
}

static void frag_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ip6ext_priv *p = (const void *)op->priv;

	(void)ctx;
	ip6ext_result(regs, frag_match(p->info, pkt));
}

static void opts_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ip6ext_priv *p = (const void *)op->priv;

	(void)ctx;
	ip6ext_result(regs, opts_match(p->info, p->target, pkt));
}

static void ipv6header_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ip6ext_priv *p = (const void *)op->priv;

	(void)ctx;
	ip6ext_result(regs, ipv6header_match(p->info, pkt));
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_rt_ops = {
    .name = "match rt",
    .size = sizeof(struct ip6ext_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = rt_eval,
};

const struct nftdp_vm_expr_ops nftdp_vm_compat_frag_ops = {
    .name = "match frag",
    .size = sizeof(struct ip6ext_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = frag_eval,
};

const struct nftdp_vm_expr_ops nftdp_vm_compat_opts_ops = {
    .name = "match hbh",
    .size = sizeof(struct ip6ext_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = opts_eval,
};

const struct nftdp_vm_expr_ops nftdp_vm_compat_ipv6header_ops = {
    .name = "match ipv6header",
    .size = sizeof(struct ip6ext_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = ipv6header_eval,
};
