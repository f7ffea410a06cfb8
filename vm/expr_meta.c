// SPDX-License-Identifier: BSD-3-Clause
/*
 * meta: packet metadata get/set. Mirrors nft_meta.c (nft_meta_get_eval,
 * nft_meta_set_eval and their inits). Keys that need a socket, a route or a
 * device kind break the rule, as the kernel does when they are absent; bridge
 * keys are refused.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#define meta_priv nftdp_vm_meta /* vm.c inlines the nfproto and l4proto loads */
NFTDP_VM_PRIV_CHECK(struct meta_priv);

#define SECS_PER_DAY 86400

/*
 * nft_reg_store8/16: the value in the register's first bytes, the rest 0.
 * On a little-endian CPU that is one 32-bit store; a 32-bit store and a
 * narrower one would make the next cmp's 32-bit load wait for both (no
 * store-to-load forwarding from two stores).
 */
static inline void store8(uint32_t *d, uint8_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	*d = v;
#else
	*d = 0;
	*(uint8_t *)d = v;
#endif
}

static inline void store16(uint32_t *d, uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	*d = v;
#else
	*d = 0;
	memcpy(d, &v, 2);
#endif
}

static void store_ifname(uint32_t *d, const char *name)
{
	char buf[NFTDP_VM_IFNAMSIZ] = {0};

	if (name)
		strncpy(buf, name, NFTDP_VM_IFNAMSIZ - 1);
	memcpy(d, buf, NFTDP_VM_IFNAMSIZ);
}

static void meta_get_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct meta_priv *p = (const void *)op->priv;
	uint32_t *dest = &regs->data[p->reg];
	uint64_t ns, secs;

	switch (p->key) {
	case NFT_META_LEN:
		*dest = pkt->skb_len;
		break;
	case NFT_META_PROTOCOL:
		store16(dest, pkt->protocol);
		break;
	case NFT_META_NFPROTO:
		store8(dest, pkt->nfproto);
		break;
	case NFT_META_L4PROTO:
		if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
			goto err;
		store8(dest, pkt->l4proto);
		break;
	case NFT_META_PRIORITY:
		*dest = pkt->priority;
		break;
	case NFT_META_MARK:
		*dest = pkt->mark;
		break;
	case NFT_META_IIF:
		*dest = pkt->iif;
		break;
	case NFT_META_OIF:
		*dest = pkt->oif;
		break;
	case NFT_META_IIFNAME:
		store_ifname(dest, pkt->iif ? pkt->iifname : NULL);
		break;
	case NFT_META_OIFNAME:
		store_ifname(dest, pkt->oif ? pkt->oifname : NULL);
		break;
	case NFT_META_IIFTYPE:
		if (!pkt->iif)
			goto err;
		store16(dest, pkt->iiftype);
		break;
	case NFT_META_OIFTYPE:
		if (!pkt->oif)
			goto err;
		store16(dest, pkt->oiftype);
		break;
	case NFT_META_IIFGROUP:
		if (!pkt->iif)
			goto err;
		*dest = pkt->iifgroup;
		break;
	case NFT_META_OIFGROUP:
		if (!pkt->oif)
			goto err;
		*dest = pkt->oifgroup;
		break;
	case NFT_META_PKTTYPE:
		store8(dest, pkt->pkttype);
		break;
	case NFT_META_CPU:
		*dest = pkt->cpu;
		break;
	case NFT_META_NFTRACE:
		store8(dest, pkt->nftrace);
		break;
	case NFT_META_PRANDOM:
		*dest = nftdp_vm_prandom(ctx);
		break;
	case NFT_META_SECMARK:
	case NFT_META_SDIF:
		*dest = 0;
		break;
	case NFT_META_SECPATH:
		store8(dest, 0);
		break;
	case NFT_META_SDIFNAME:
		store_ifname(dest, NULL);
		break;
	case NFT_META_TIME_NS:
		ns = pkt->tstamp_ns ? pkt->tstamp_ns : ctx->now_real_ns;
		memcpy(dest, &ns, 8); /* nft_reg_store64: host order */
		break;
	case NFT_META_TIME_DAY:
		ns = pkt->tstamp_ns ? pkt->tstamp_ns : ctx->now_real_ns;
		secs = ns / 1000000000ull - (int64_t)ctx->tz_minuteswest * 60;
		store8(dest, (uint8_t)((4 + secs / SECS_PER_DAY) % 7)); /* 1970-01-01: Thursday */
		break;
	case NFT_META_TIME_HOUR:
		ns = pkt->tstamp_ns ? pkt->tstamp_ns : ctx->now_real_ns;
		secs = ns / 1000000000ull - (int64_t)ctx->tz_minuteswest * 60;
		*dest = (uint32_t)(secs % SECS_PER_DAY); /* seconds since midnight */
		break;
	default: /* no socket, route, cgroup or device kind here */
		goto err;
	}
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

static int meta_get_len(uint32_t key, uint32_t *len)
{
	switch (key) {
	case NFT_META_PROTOCOL:
	case NFT_META_IIFTYPE:
	case NFT_META_OIFTYPE:
		*len = 2;
		return 0;
	case NFT_META_NFPROTO:
	case NFT_META_L4PROTO:
	case NFT_META_NFTRACE:
	case NFT_META_SECPATH:
	case NFT_META_PKTTYPE:
	case NFT_META_TIME_DAY:
		*len = 1;
		return 0;
	case NFT_META_LEN:
	case NFT_META_PRIORITY:
	case NFT_META_MARK:
	case NFT_META_IIF:
	case NFT_META_OIF:
	case NFT_META_SDIF:
	case NFT_META_SKUID:
	case NFT_META_SKGID:
	case NFT_META_RTCLASSID:
	case NFT_META_SECMARK:
	case NFT_META_CPU:
	case NFT_META_IIFGROUP:
	case NFT_META_OIFGROUP:
	case NFT_META_CGROUP:
	case NFT_META_PRANDOM:
	case NFT_META_TIME_HOUR:
		*len = 4;
		return 0;
	case NFT_META_TIME_NS:
		*len = 8;
		return 0;
	case NFT_META_IIFNAME:
	case NFT_META_OIFNAME:
	case NFT_META_IIFKIND:
	case NFT_META_OIFKIND:
	case NFT_META_SDIFNAME:
		*len = NFTDP_VM_IFNAMSIZ;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int meta_get_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct meta_priv *p = priv;
	uint32_t key = nftdp_vm_u32(e, NFTNL_EXPR_META_KEY), len;

	if (meta_get_len(key, &len) < 0)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "meta: key %u not supported by nftdp", key);
	p->key = (uint8_t)key;
	p->len = (uint8_t)len;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_META_DREG, &p->reg, NFT_DATA_VALUE, len);
}

static void meta_set_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct meta_priv *p = (const void *)op->priv;
	const uint32_t *sreg = &regs->data[p->reg];
	uint8_t value8 = *(const uint8_t *)sreg;

	(void)ctx;
	switch (p->key) {
	case NFT_META_MARK:
		pkt->mark = *sreg;
		break;
	case NFT_META_PRIORITY:
		pkt->priority = *sreg;
		break;
	case NFT_META_PKTTYPE:
		if (pkt->pkttype != value8 && value8 <= 3 && pkt->pkttype <= 3)
			pkt->pkttype = value8;
		break;
	case NFT_META_NFTRACE:
		pkt->nftrace = !!value8;
		break;
	}
}

static int meta_set_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct meta_priv *p = priv;
	uint32_t key = nftdp_vm_u32(e, NFTNL_EXPR_META_KEY), len;

	switch (key) {
	case NFT_META_MARK:
	case NFT_META_PRIORITY:
		len = 4;
		break;
	case NFT_META_NFTRACE:
	case NFT_META_PKTTYPE:
		len = 1;
		break;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "meta: setting key %u not supported by nftdp",
				     key);
	}
	p->key = (uint8_t)key;
	p->len = (uint8_t)len;
	return nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_META_SREG, &p->reg, len);
}

static const struct nftdp_vm_expr_ops meta_get_ops = {
    .name = "meta",
    .size = sizeof(struct meta_priv),
    .init = meta_get_init,
    .eval = meta_get_eval,
    .flow = NFTDP_VM_FLOW_META,
};
/* meta nfproto and l4proto, which inet rules start with: inlined by vm.c */
static const struct nftdp_vm_expr_ops meta_get_fast_ops = {
    .name = "meta",
    .size = sizeof(struct meta_priv),
    .fast = NFTDP_VM_FAST_META,
    .init = meta_get_init,
    .eval = meta_get_eval,
    .flow = NFTDP_VM_FLOW_META,
};
static const struct nftdp_vm_expr_ops meta_set_ops = {
    .name = "meta",
    .size = sizeof(struct meta_priv),
    .init = meta_set_init,
    .eval = meta_set_eval,
};

/* nft_meta_select_ops */
static const struct nftdp_vm_expr_ops *meta_select_ops(struct nftdp_vm_cctx *cc,
						       const struct nftnl_expr *e)
{
	if (!nftdp_vm_attr(e, NFTNL_EXPR_META_KEY)) {
		nftdp_vm_errf(cc, -EINVAL, "meta: key missing");
		return NULL;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_META_DREG) && nftdp_vm_attr(e, NFTNL_EXPR_META_SREG)) {
		nftdp_vm_errf(cc, -EINVAL, "meta: both source and destination");
		return NULL;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_META_DREG)) {
		uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);

		return key == NFT_META_NFPROTO || key == NFT_META_L4PROTO ? &meta_get_fast_ops
									  : &meta_get_ops;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_META_SREG))
		return &meta_set_ops;
	nftdp_vm_errf(cc, -EINVAL, "meta: no register");
	return NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_meta = {
    .name = "meta",
    .select_ops = meta_select_ops,
};
