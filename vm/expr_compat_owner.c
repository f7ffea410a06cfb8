// SPDX-License-Identifier: BSD-3-Clause
/*
 * owner (xt_owner.c, revision 1) and physdev (xt_physdev.c, revision 0)
 * for the packets nftdp sees. nftdp has no local stack: no packet it
 * handles has a socket, so owner_mt takes its first branch for every
 * one (a match only when every option it uses is inverted). physdev
 * reads the bridge ports br_netfilter records: in wire mode the two
 * ports of a --wire pair are a bridge and nftdp runs the ip hooks for
 * bridged IP as br_netfilter does (docs/dataplane.md), so the port a
 * packet came in on is its physindev and, from forward on, the port it
 * leaves by is its physoutdev; a routed packet (--router) crossed no
 * bridge and has no bridge info.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_owner.h>
#include <linux/netfilter/xt_physdev.h>

#include "compat.h"

/* ---- owner ---- */

struct owner_priv {
	bool match; /* (info->match ^ info->invert) == 0 */
};
NFTDP_VM_PRIV_CHECK(struct owner_priv);

/* owner_check: known options; uids and gids valid and in order (the
 * writer's user namespace is the network namespace's here) */
int nftdp_vm_compat_owner_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_owner_match_info *i = par->info;
	struct owner_priv *p = priv;

	if (i->match & ~XT_OWNER_MASK)
		return nftdp_vm_errf(cc, -EINVAL, "match owner: unknown options 0x%x", i->match);
	if ((i->match & XT_OWNER_UID) &&
	    (i->uid_min == UINT32_MAX || i->uid_max == UINT32_MAX || i->uid_max < i->uid_min))
		return nftdp_vm_errf(cc, -EINVAL, "match owner: bad uid range");
	if ((i->match & XT_OWNER_GID) &&
	    (i->gid_min == UINT32_MAX || i->gid_max == UINT32_MAX || i->gid_max < i->gid_min))
		return nftdp_vm_errf(cc, -EINVAL, "match owner: bad gid range");
	p->match = (i->match ^ i->invert) == 0;
	return 0;
}

/* owner_mt without a socket (skb_to_full_sk is NULL) */
static void owner_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)pkt;
	(void)ctx;
	compat_match_result(regs, ((const struct owner_priv *)(const void *)op->priv)->match);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_owner_ops = {
    .name = "match owner",
    .size = sizeof(struct owner_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = owner_eval,
};

/* ---- physdev ---- */

static _Atomic bool physdev_bridged; /* wire mode: ip hooks see bridged IP */

void nftdp_vm_physdev_bridged(bool on)
{
	atomic_store_explicit(&physdev_bridged, on, memory_order_relaxed);
}

/* the names and masks (64 bytes) do not fit an op: kept beside it */
struct physdev_names {
	uint8_t in[IFNAMSIZ], in_mask[IFNAMSIZ]; /* the name masked, the mask */
	uint8_t out[IFNAMSIZ], out_mask[IFNAMSIZ];
};

struct physdev_priv {
	struct physdev_names *n;
	uint8_t invert, bitmask;
};
NFTDP_VM_PRIV_CHECK(struct physdev_priv);

/* physdev_mt_check */
int nftdp_vm_compat_physdev_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	const struct xt_physdev_info *i = par->info;
	struct physdev_priv *p = priv;

	if (!(i->bitmask & XT_PHYSDEV_OP_MASK) || (i->bitmask & ~XT_PHYSDEV_OP_MASK))
		return nftdp_vm_errf(cc, -EINVAL, "match physdev: bad options 0x%x", i->bitmask);
	if ((i->bitmask & (XT_PHYSDEV_OP_OUT | XT_PHYSDEV_OP_ISOUT)) &&
	    (!(i->bitmask & XT_PHYSDEV_OP_BRIDGED) || (i->invert & XT_PHYSDEV_OP_BRIDGED)) &&
	    (par->hook_mask & COMPAT_HOOK(NF_INET_LOCAL_OUT)))
		return nftdp_vm_errf(cc, -EINVAL,
				     "match physdev: --physdev-out and --physdev-is-out only "
				     "supported in the FORWARD and POSTROUTING chains with bridged "
				     "traffic");
	p->n = malloc(sizeof(*p->n));
	if (p->n == NULL)
		return nftdp_vm_errf(cc, -ENOMEM, "match physdev: out of memory");
	p->invert = i->invert;
	p->bitmask = i->bitmask;
	for (int k = 0; k < IFNAMSIZ; k++) {
		p->n->in[k] = (uint8_t)(i->physindev[k] & i->in_mask[k]);
		p->n->in_mask[k] = (uint8_t)i->in_mask[k];
		p->n->out[k] = (uint8_t)(i->physoutdev[k] & i->out_mask[k]);
		p->n->out_mask[k] = (uint8_t)i->out_mask[k];
	}
	return 0;
}

static void physdev_destroy(void *priv)
{
	free(((struct physdev_priv *)priv)->n);
}

/* ifname_compare_aligned: whether name differs from want under mask */
static bool name_differs(const char *name, const uint8_t *want, const uint8_t *mask)
{
	/* the device's name, zero-padded as dev->name is */
	size_t len = strnlen(name, IFNAMSIZ);

	for (size_t k = 0; k < IFNAMSIZ; k++) {
		uint8_t c = k < len ? (uint8_t)name[k] : 0;

		if ((c & mask[k]) != want[k])
			return true;
	}
	return false;
}

/* physdev_mt */
static bool physdev_test(const struct physdev_priv *p, const struct nftdp_vm_pkt *pkt)
{
	uint8_t b = p->bitmask, inv = p->invert;
	const char *indev, *outdev;

	if (!atomic_load_explicit(&physdev_bridged, memory_order_relaxed)) {
		/* not a bridged packet: a match only where the used options
		 * are inverted */
		return !(b & ~inv & XT_PHYSDEV_OP_MASK);
	}
	indev = pkt->iifname;
	/* br_nf_forward_ip records the out port: forward and postrouting */
	outdev =
	    pkt->hook == NF_INET_FORWARD || pkt->hook == NF_INET_POST_ROUTING ? pkt->oifname : NULL;
	if ((b & XT_PHYSDEV_OP_BRIDGED) && (!!outdev ^ !(inv & XT_PHYSDEV_OP_BRIDGED)))
		return false;
	if (((b & XT_PHYSDEV_OP_ISIN) && (!indev ^ !!(inv & XT_PHYSDEV_OP_ISIN))) ||
	    ((b & XT_PHYSDEV_OP_ISOUT) && (!outdev ^ !!(inv & XT_PHYSDEV_OP_ISOUT))))
		return false;
	if ((b & XT_PHYSDEV_OP_IN) && indev &&
	    (!name_differs(indev, p->n->in, p->n->in_mask) ^ !(inv & XT_PHYSDEV_OP_IN)))
		return false;
	if (!(b & XT_PHYSDEV_OP_OUT))
		return true;
	if (!outdev)
		return false;
	return name_differs(outdev, p->n->out, p->n->out_mask) ^ !(inv & XT_PHYSDEV_OP_OUT);
}

static void physdev_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)ctx;
	compat_match_result(regs, physdev_test((const void *)op->priv, pkt));
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_physdev_ops = {
    .name = "match physdev",
    .size = sizeof(struct physdev_priv),
    .init = nftdp_vm_compat_match_init,
    .destroy = physdev_destroy,
    .eval = physdev_eval,
};
