// SPDX-License-Identifier: BSD-3-Clause
/*
 * The connlimit match (xt_connlimit.c, rev 1): the connections whose
 * source (or --connlimit-daddr destination) address under --connlimit-mask
 * equals the packet's, counted as nf_conncount counts them, and
 * (count > --connlimit-above) ^ invert (--connlimit-upto is the inverted
 * form). The lists work as `ct count`'s (expr_connlimit.c): a new
 * (unconfirmed) connection is added unless it is there already, dead ones
 * (gone from the table, TCP in TIME_WAIT or CLOSE) are dropped as
 * find_or_evict / already_closed do, a confirmed connection's packet only
 * collects (at most once per clock tick). A packet without a conntrack
 * entry counts its own tuple once; one with no tuple to make is dropped
 * (hotdrop).
 *
 * State: one table per worker (each counts the connections of its own
 * conntrack shard, as `ct count` does), entries of (masked address and
 * the connection's zone, the kernel's key; connection), at most XTCL_CAP per worker; past that new
 * connections are not remembered. Recompiling the rule starts with empty tables.
 */
#include <arpa/inet.h>
#include <stdlib.h>

#include <stdio.h> /* before libnftnl: it uses FILE */

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_connlimit.h>

#include "compat.h"

#define XTCL_CAP 8192u

struct xtcl_entry {
	uint32_t addr[5]; /* masked address (IPv4: addr[0]), then the zone id */
	uint64_t key;	  /* nftdp_vm_ct_ops.conn_key of the connection */
};

/* one worker's entries, on its own cache lines */
struct xtcl_list {
	uint32_t count;
	uint64_t last_gc_ms;
	struct xtcl_entry e[XTCL_CAP];
};

struct xtcl_state {
	unsigned int n_workers;
	size_t stride; /* bytes per list, a multiple of 64 */
	alignas(64) uint8_t mem[];
};

struct xtcl_priv {
	struct xtcl_state *st;
	uint32_t mask[4];
	uint32_t limit;
	bool daddr, invert;
};
NFTDP_VM_PRIV_CHECK(struct xtcl_priv);

static inline struct xtcl_list *list_of(struct xtcl_state *st, unsigned int worker)
{
	return (struct xtcl_list *)(st->mem + (size_t)(worker % st->n_workers) * st->stride);
}

/* connlimit_mt_check: conntrack (nf_ct_netns_get), the count's data */
int nftdp_vm_compat_connlimit_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				    void *priv)
{
	const struct xt_connlimit_info *i = par->info;
	struct xtcl_priv *p = priv;
	unsigned int n = cc->st && cc->st->n_workers ? cc->st->n_workers : 1;
	size_t stride = (sizeof(struct xtcl_list) + 63) & ~(size_t)63;

	memcpy(p->mask, i->v6_mask, sizeof(p->mask));
	if (par->family == NFPROTO_IPV4)
		p->mask[1] = p->mask[2] = p->mask[3] = 0;
	p->limit = i->limit;
	p->daddr = i->flags & XT_CONNLIMIT_DADDR;
	p->invert = i->flags & XT_CONNLIMIT_INVERT;
	p->st = aligned_alloc(64, sizeof(struct xtcl_state) + stride * n);
	if (!p->st)
		return nftdp_vm_errf(cc, -ENOMEM, "match connlimit: no memory");
	p->st->n_workers = n;
	p->st->stride = stride;
	for (unsigned int w = 0; w < n; w++) {
		list_of(p->st, w)->count = 0;
		list_of(p->st, w)->last_gc_ms = UINT64_MAX;
	}
	return 0;
}

/* addr[4] is the zone: the kernel's key[] (the masked address, zone->id) */
static bool addr_eq(const uint32_t *a, const uint32_t *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4];
}

/*
 * The address's connections: the dead ones dropped (swap with the last)
 * when gc, the others counted; *found when key is among them.
 */
static uint32_t count_addr(struct xtcl_list *l, const uint32_t *addr, const void *ct,
			   const struct nftdp_vm_ct_ops *ops, uint64_t key, bool gc, bool *found)
{
	uint32_t n = 0, i = 0;

	*found = false;
	while (i < l->count) {
		struct xtcl_entry *e = &l->e[i];

		if (!addr_eq(e->addr, addr)) {
			i++;
			continue;
		}
		if (e->key == key) {
			*found = true;
		} else if (gc && !ops->conn_live(ct, e->key)) {
			*e = l->e[--l->count];
			continue;
		}
		n++;
		i++;
	}
	return n;
}

static void connlimit_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct xtcl_priv *p = (const void *)op->priv;
	struct xtcl_list *l = list_of(p->st, ctx->worker);
	const struct nftdp_vm_ct_ops *ops = pkt->ct_ops;
	uint32_t addr[5] = {0}, n;
	bool found;

	if (pkt->nfproto == NFPROTO_IPV4) {
		if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + (p->daddr ? 16 : 12), addr, 4))
			goto hotdrop;
	} else if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + (p->daddr ? 24 : 8), addr, 16)) {
		goto hotdrop;
	}
	for (int k = 0; k < 4; k++)
		addr[k] &= p->mask[k];
	/* nf_ct_zone(ct)->id; the default zone without an entry */
	if (pkt->ct && ops && ops->get) {
		uint16_t z = 0;

		if (ops->get(pkt->ct, NFT_CT_ZONE, -1, &z, sizeof(z)))
			addr[4] = z;
	}
	if (!pkt->ct || !ops || !ops->conn_key || !ops->conn_live) {
		/* no entry: the packet's own tuple counts (gone again at the
		 * next gc); without one (nf_ct_get_tuplepr fails) hotdrop */
		if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
			goto hotdrop;
		n = 0;
		for (uint32_t i = 0; i < l->count; i++)
			n += addr_eq(l->e[i].addr, addr);
		n++;
	} else {
		bool confirmed;
		uint64_t key = ops->conn_key(pkt->ct, &confirmed);

		if (!confirmed) {
			/* gc, then add unless already there */
			n = count_addr(l, addr, pkt->ct, ops, key, true, &found);
			if (!found) {
				if (l->count < XTCL_CAP) {
					memcpy(l->e[l->count].addr, addr, sizeof(addr));
					l->e[l->count++].key = key;
				}
				n++;
			}
			l->last_gc_ms = ctx->now_ms;
		} else {
			n = count_addr(l, addr, pkt->ct, ops, key, l->last_gc_ms != ctx->now_ms,
				       &found);
			l->last_gc_ms = ctx->now_ms;
			if (n == 0)
				n = 1; /* count_tree: a new list holds the tuple */
		}
	}
	compat_match_result(regs, (n > p->limit) ^ p->invert);
	return;
hotdrop:
	regs->verdict.code = NF_DROP;
}

static void connlimit_destroy(void *priv)
{
	struct xtcl_priv *p = priv;

	free(p->st);
	p->st = NULL;
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_connlimit_ops = {
    .name = "match connlimit",
    .size = sizeof(struct xtcl_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = connlimit_eval,
    .destroy = connlimit_destroy,
};
