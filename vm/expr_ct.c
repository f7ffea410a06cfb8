// SPDX-License-Identifier: BSD-3-Clause
/*
 * ct: conntrack keys get/set through struct nftdp_vm_ct_ops, which
 * conntrack/ fills in. Mirrors nft_ct.c: `ct state` works without an entry
 * (invalid, or untracked after notrack), every other key breaks the rule when
 * the packet has no entry; sets on a packet without one do nothing, except
 * `ct zone set`, which only acts before conntrack (the kernel's template:
 * pkt->ct_zone / ct_zone_dir, read by nftdp_ct_in).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>

#define CT_STATE_INVALID_BIT (1u << 0)
#define CT_STATE_NEW_BIT (1u << 3) /* NF_CT_STATE_BIT(IP_CT_NEW) */
#define CT_STATE_UNTRACKED_BIT (1u << 6)

/* key, reg, len first, as struct nftdp_vm_meta: the flow cache reads a
 * ct get as a key field (flowcache.c) */
struct ct_priv {
	uint8_t key, reg, len;
	int8_t dir;
};
NFTDP_VM_PRIV_CHECK(struct ct_priv);

/*
 * Before conntrack, a packet that `ct zone set` gave a zone carries the
 * kernel's template conntrack: nft_ct_get_eval reads the template's fields
 * (the zone, status IPS_TEMPLATE | IPS_CONFIRMED, mark 0). nftdp keeps no
 * template, so keys without a meaning before conntrack break the rule.
 */
static bool tmpl_get(const struct nftdp_vm_pkt *pkt, const struct ct_priv *p, uint32_t *dest)
{
	uint16_t z;

	switch (p->key) {
	case NFT_CT_ZONE:
		/* nf_ct_zone_id: the zone where its direction applies, else 0 */
		z = p->dir < 0 || (pkt->ct_zone_dir & (1u << p->dir)) ? pkt->ct_zone : 0;
		memcpy(dest, &z, 2);
		return true;
	case NFT_CT_DIRECTION:
		*(uint8_t *)dest = IP_CT_DIR_ORIGINAL;
		return true;
	case NFT_CT_STATUS:
		*dest = IPS_TEMPLATE | IPS_CONFIRMED;
		return true;
	case NFT_CT_MARK:
	case NFT_CT_SECMARK:
		*dest = 0;
		return true;
	default:
		return false;
	}
}

static void ct_get_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ct_priv *p = (const void *)op->priv;
	uint32_t *dest = &regs->data[p->reg];

	(void)ctx;
	if (p->key == NFT_CT_STATE) {
		if (pkt->ct && pkt->ct_ops && pkt->ct_ops->state)
			*dest = pkt->ct_ops->state(pkt->ct);
		else if (pkt->ct_zone_dir)
			*dest = CT_STATE_NEW_BIT; /* the template, attached as IP_CT_NEW */
		else if (pkt->ct_untracked)
			*dest = CT_STATE_UNTRACKED_BIT;
		else
			*dest = CT_STATE_INVALID_BIT;
		return;
	}
	if (!pkt->ct && pkt->ct_zone_dir) {
		if (!tmpl_get(pkt, p, dest))
			goto err;
		return;
	}
	if (!pkt->ct || !pkt->ct_ops || !pkt->ct_ops->get)
		goto err;
	memset(dest, 0, (p->len + 3u) & ~3u);
	if (!pkt->ct_ops->get(pkt->ct, p->key, p->dir, dest, p->len))
		goto err;
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

static void ct_set_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ct_priv *p = (const void *)op->priv;

	(void)ctx;
	if (!pkt->ct || !pkt->ct_ops || !pkt->ct_ops->set)
		return;
	pkt->ct_ops->set(pkt->ct, p->key, p->dir, &regs->data[p->reg], p->len);
}

/*
 * nft_ct_set_zone_eval: a packet not tracked yet gets the template of zone
 * N (the first `ct zone set` wins: the template is its ct from then on);
 * conntrack puts the zone into the tuples. An untracked packet (notrack
 * before) is tracked again in the zone, as the template replaces
 * IP_CT_UNTRACKED in the kernel.
 */
static void ct_set_zone_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ct_priv *p = (const void *)op->priv;
	uint16_t zone;

	(void)ctx;
	if (pkt->ct || pkt->ct_zone_dir)
		return;
	memcpy(&zone, &regs->data[p->reg], 2);
	pkt->ct_zone = zone;
	pkt->ct_zone_dir = p->dir < 0 ? NFTDP_VM_CT_ZONE_DIR_BOTH : (uint8_t)(1u << p->dir);
	pkt->ct_untracked = false;
	pkt->out.notrack = false;
}

static int ct_parse_dir(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, struct ct_priv *p)
{
	p->dir = -1;
	if (nftdp_vm_attr(e, NFTNL_EXPR_CT_DIR)) {
		uint8_t d = nftnl_expr_get_u8(e, NFTNL_EXPR_CT_DIR);

		if (d > 1)
			return nftdp_vm_errf(cc, -EINVAL, "ct: direction %u", d);
		p->dir = (int8_t)d;
	}
	return 0;
}

/* nft_ct_get_init: length per key, and which keys need/forbid a direction */
static int ct_get_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct ct_priv *p = priv;
	uint32_t key = nftdp_vm_u32(e, NFTNL_EXPR_CT_KEY), len;
	bool dir_ok = false, dir_needed = false;
	int rc = ct_parse_dir(cc, e, p);

	if (rc < 0)
		return rc;
	switch (key) {
	case NFT_CT_DIRECTION:
	case NFT_CT_L3PROTOCOL:
	case NFT_CT_PROTOCOL:
		/* nft_ct_get_init: a direction is accepted, for compatibility */
		len = 1;
		dir_ok = true;
		break;
	case NFT_CT_STATE:
	case NFT_CT_STATUS:
	case NFT_CT_MARK:
	case NFT_CT_SECMARK:
	case NFT_CT_EXPIRATION:
	case NFT_CT_ID:
		len = 4;
		break;
	case NFT_CT_HELPER:
	case NFT_CT_LABELS:
		len = 16;
		break;
	case NFT_CT_SRC:
	case NFT_CT_DST:
		dir_needed = true;
		if (cc->chain->family == NFPROTO_IPV4)
			len = 4;
		else if (cc->chain->family == NFPROTO_IPV6 || cc->chain->family == NFPROTO_INET)
			len = 16;
		else
			return nftdp_vm_errf(cc, -EAFNOSUPPORT, "ct: address in this family");
		break;
	case NFT_CT_SRC_IP:
	case NFT_CT_DST_IP:
		len = 4;
		dir_needed = true;
		break;
	case NFT_CT_SRC_IP6:
	case NFT_CT_DST_IP6:
		len = 16;
		dir_needed = true;
		break;
	case NFT_CT_PROTO_SRC:
	case NFT_CT_PROTO_DST:
		len = 2;
		dir_needed = true;
		break;
	case NFT_CT_BYTES:
	case NFT_CT_PKTS:
	case NFT_CT_AVGPKT:
		len = 8;
		dir_ok = true;
		break;
	case NFT_CT_ZONE:
		len = 2;
		dir_ok = true;
		break;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "ct: key %u not supported by nftdp", key);
	}
	if (dir_needed && p->dir < 0)
		return nftdp_vm_errf(cc, -EINVAL, "ct: key %u needs a direction", key);
	if (!dir_needed && !dir_ok && p->dir >= 0)
		return nftdp_vm_errf(cc, -EINVAL, "ct: key %u takes no direction", key);
	p->key = (uint8_t)key;
	p->len = (uint8_t)len;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_CT_DREG, &p->reg, NFT_DATA_VALUE, len);
}

/* nft_ct_set_init */
static int ct_set_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct ct_priv *p = priv;
	uint32_t key = nftdp_vm_u32(e, NFTNL_EXPR_CT_KEY), len;
	int rc = ct_parse_dir(cc, e, p);

	if (rc < 0)
		return rc;
	switch (key) {
	case NFT_CT_MARK:
	case NFT_CT_EVENTMASK:
	case NFT_CT_SECMARK:
		if (p->dir >= 0)
			return nftdp_vm_errf(cc, -EINVAL, "ct: key %u takes no direction", key);
		len = 4;
		break;
	case NFT_CT_LABELS:
		if (p->dir >= 0)
			return nftdp_vm_errf(cc, -EINVAL, "ct: labels take no direction");
		len = 16;
		break;
	case NFT_CT_ZONE:
		len = 2;
		break;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "ct: setting key %u not supported by nftdp",
				     key);
	}
	p->key = (uint8_t)key;
	p->len = (uint8_t)len;
	return nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_CT_SREG, &p->reg, len);
}

static const struct nftdp_vm_expr_ops ct_set_zone_ops = {
    .name = "ct",
    .size = sizeof(struct ct_priv),
    .init = ct_set_init,
    .eval = ct_set_zone_eval,
};

static const struct nftdp_vm_expr_ops ct_get_ops = {
    .name = "ct",
    .size = sizeof(struct ct_priv),
    .init = ct_get_init,
    .eval = ct_get_eval,
    .flow = NFTDP_VM_FLOW_CT,
};
static const struct nftdp_vm_expr_ops ct_set_ops = {
    .name = "ct",
    .size = sizeof(struct ct_priv),
    .init = ct_set_init,
    .eval = ct_set_eval,
};

static const struct nftdp_vm_expr_ops *ct_select_ops(struct nftdp_vm_cctx *cc,
						     const struct nftnl_expr *e)
{
	if (!nftdp_vm_attr(e, NFTNL_EXPR_CT_KEY)) {
		nftdp_vm_errf(cc, -EINVAL, "ct: key missing");
		return NULL;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_CT_DREG) && nftdp_vm_attr(e, NFTNL_EXPR_CT_SREG)) {
		nftdp_vm_errf(cc, -EINVAL, "ct: both source and destination");
		return NULL;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_CT_DREG))
		return &ct_get_ops;
	if (nftdp_vm_attr(e, NFTNL_EXPR_CT_SREG))
		return nftdp_vm_u32(e, NFTNL_EXPR_CT_KEY) == NFT_CT_ZONE ? &ct_set_zone_ops
									 : &ct_set_ops;
	nftdp_vm_errf(cc, -EINVAL, "ct: no register");
	return NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_ct = {
    .name = "ct",
    .select_ops = ct_select_ops,
};
