// SPDX-License-Identifier: BSD-3-Clause
/*
 * Targets that rewrite a header field or the packet's priority:
 * CLASSIFY (xt_CLASSIFY.c), TTL and HL (xt_HL.c), DSCP and TOS
 * (xt_DSCP.c), and CHECKSUM (xt_CHECKSUM.c). Each mirrors its checkentry (with the errno) and
 * target function; the IPv4 header checksum is updated as the kernel updates it (csum_replace2 for
 * TTL, ipv4_change_dsfield for the DS field).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_CHECKSUM.h>
#include <linux/netfilter/xt_CLASSIFY.h>
#include <linux/netfilter/xt_DSCP.h>
#include <linux/netfilter_ipv4/ipt_TTL.h>
#include <linux/netfilter_ipv6/ip6t_HL.h>

#include "compat.h"

/* ---- CLASSIFY (rev 0): skb->priority ---- */

struct classify_priv {
	uint32_t priority;
};
NFTDP_VM_PRIV_CHECK(struct classify_priv);

int nftdp_vm_compat_classify_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv)
{
	const struct xt_classify_target_info *i = par->info;

	(void)cc; /* no checkentry */
	((struct classify_priv *)priv)->priority = i->priority;
	return 0;
}

static void classify_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)regs, (void)ctx;
	pkt->priority = ((const struct classify_priv *)op->priv)->priority;
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_classify_ops = {
    .name = "target CLASSIFY",
    .size = sizeof(struct classify_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = classify_eval,
};

/* ---- TTL (ipv4) and HL (ipv6), rev 0 ---- */

struct hltg_priv {
	uint8_t mode, value;
};
NFTDP_VM_PRIV_CHECK(struct hltg_priv);

/* ttl_tg_check / hl_tg6_check (IPT_TTL_* and IP6T_HL_* are the same) */
int nftdp_vm_compat_hltg_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const uint8_t *i = par->info; /* ipt_TTL_info / ip6t_HL_info: mode, value */
	struct hltg_priv *p = priv;

	if (i[0] > IPT_TTL_MAXMODE)
		return nftdp_vm_errf(cc, -EINVAL, "target TTL: mode %u", i[0]);
	if (i[0] != IPT_TTL_SET && i[1] == 0)
		return nftdp_vm_errf(cc, -EINVAL, "target TTL: increment or decrement of 0");
	p->mode = i[0];
	p->value = i[1];
	return 0;
}

/* ttl_tg / hl_tg6: set, or add/subtract clamped to 0..255; the IPv4
 * header checksum follows (csum_replace2 of the TTL's 16-bit word) */
static void hltg_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct hltg_priv *p = (const void *)op->priv;
	bool v4 = pkt->nfproto == NFPROTO_IPV4;
	uint32_t at = pkt->nh_off + (v4 ? 8 : 7);
	uint8_t *h = pkt->data + pkt->nh_off;
	int nv;

	(void)ctx;
	if (at >= pkt->len || (v4 && pkt->nh_off + 20 > pkt->len) ||
	    !(pkt->flags & NFTDP_VM_PKT_F_WRITABLE)) {
		regs->verdict.code = NF_DROP; /* skb_ensure_writable failed */
		return;
	}
	switch (p->mode) {
	case IPT_TTL_SET:
		nv = p->value;
		break;
	case IPT_TTL_INC:
		nv = pkt->data[at] + p->value;
		if (nv > 255)
			nv = 255;
		break;
	case IPT_TTL_DEC:
		nv = pkt->data[at] - p->value;
		if (nv < 0)
			nv = 0;
		break;
	default:
		nv = pkt->data[at];
	}
	if (nv == pkt->data[at])
		return;
	if (v4)
		nftdp_csum_replace(h + 10, htons((uint16_t)(pkt->data[at] << 8)),
				   htons((uint16_t)(nv << 8)));
	pkt->data[at] = (uint8_t)nv;
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_hltg_ops = {
    .name = "target TTL",
    .size = sizeof(struct hltg_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = hltg_eval,
};

/* ---- DSCP (rev 0) and TOS (rev 1) ---- */

struct dstg_priv {
	uint8_t keep;  /* the bits of the DS field kept (mask) */
	uint8_t value; /* DSCP: or-ed in; TOS: xor-ed */
	bool dscp;
};
NFTDP_VM_PRIV_CHECK(struct dstg_priv);

int nftdp_vm_compat_dscptg_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_DSCP_info *i = par->info;
	struct dstg_priv *p = priv;

	if (i->dscp > XT_DSCP_MAX) /* dscp_tg_check */
		return nftdp_vm_errf(cc, -EDOM, "target DSCP: %u out of range", i->dscp);
	p->keep = (uint8_t)~XT_DSCP_MASK; /* the kernel's XT_DSCP_ECN_MASK */
	p->value = (uint8_t)(i->dscp << XT_DSCP_SHIFT);
	p->dscp = true;
	return 0;
}

int nftdp_vm_compat_tostg_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_tos_target_info *i = par->info;
	struct dstg_priv *p = priv;

	(void)cc; /* no checkentry */
	p->keep = (uint8_t)~i->tos_mask;
	p->value = i->tos_value;
	p->dscp = false;
	return 0;
}

/* ipv4_change_dsfield's checksum arithmetic, as include/net/dsfield.h has
 * it (the new TOS byte from the old, the check adjusted by their
 * difference) */
static void ipv4_dsfield(uint8_t *iph, uint8_t ds)
{
	uint32_t check = (uint32_t)iph[10] << 8 | iph[11];

	check += iph[1];
	if ((check + 1) >> 16)
		check = (check + 1) & 0xffff;
	check -= ds;
	check += check >> 16;
	iph[10] = (uint8_t)(check >> 8);
	iph[11] = (uint8_t)check;
	iph[1] = ds;
}

/* dscp_tg(6): the DSCP bits set where they differ, the ECN bits kept;
 * tos_tg(6): (old & ~mask) ^ value where that differs */
static void dstg_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct dstg_priv *p = (const void *)op->priv;
	bool v4 = pkt->nfproto == NFPROTO_IPV4;
	uint8_t *h = pkt->data + pkt->nh_off;
	uint8_t old, nv;

	(void)ctx;
	if (pkt->nh_off + (v4 ? 20u : 40u) > pkt->len) {
		regs->verdict.code = NF_DROP;
		return;
	}
	old = v4 ? h[1] : (uint8_t)((h[0] & 0x0f) << 4 | h[1] >> 4);
	if (p->dscp) {
		if ((old >> XT_DSCP_SHIFT) == (p->value >> XT_DSCP_SHIFT))
			return;
		nv = (old & p->keep) | p->value;
	} else {
		nv = (old & p->keep) ^ p->value;
		if (nv == old)
			return;
	}
	if (!(pkt->flags & NFTDP_VM_PKT_F_WRITABLE)) {
		regs->verdict.code = NF_DROP;
		return;
	}
	if (v4) {
		ipv4_dsfield(h, nv);
	} else { /* ipv6_change_dsfield: the traffic class across two bytes */
		h[0] = (uint8_t)((h[0] & 0xf0) | nv >> 4);
		h[1] = (uint8_t)((h[1] & 0x0f) | (uint8_t)(nv << 4));
	}
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_dstg_ops = {
    .name = "target DSCP",
    .size = sizeof(struct dstg_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = dstg_eval,
};

/* ---- CHECKSUM (rev 0) ---- */

/*
 * checksum_tg fills in the checksum of a CHECKSUM_PARTIAL skb, one whose
 * transport checksum a NIC was to compute on transmit: only packets the
 * host itself sends (and only with offloads) are such. Every packet nftdp
 * sees arrived from a port with its checksum in place, so the target does
 * nothing; what remains is checksum_tg_check's EINVAL for an operation
 * other than --checksum-fill.
 */
int nftdp_vm_compat_checksum_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv)
{
	const struct xt_CHECKSUM_info *i = par->info;

	(void)priv;
	if (!i->operation || (i->operation & ~XT_CHECKSUM_OP_FILL))
		return nftdp_vm_errf(cc, -EINVAL, "target CHECKSUM: operation 0x%x", i->operation);
	return 0;
}

static void checksum_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)op, (void)regs, (void)pkt, (void)ctx; /* XT_CONTINUE */
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_checksum_ops = {
    .name = "target CHECKSUM",
    .init = nftdp_vm_compat_target_init,
    .eval = checksum_eval,
};
