// SPDX-License-Identifier: BSD-3-Clause
/*
 * connlimit: `ct count [over] N` in a rule (nft_connlimit.c with its own
 * nf_conncount list, no set). The rule keeps the connections that passed
 * the expression; a new (unconfirmed) connection is added unless it is
 * there already, dead ones are dropped from the list as nf_conncount's
 * find_or_evict / already_closed do (gone from the table, or TCP in
 * TIME_WAIT / CLOSE), and the rule breaks when (count > N) ^ over.
 *
 * State: one list per worker, allocated when the rule is compiled and owned
 * by the op (freed with the chain, after its grace period). Each worker
 * counts the connections of its own conntrack shard, so with several
 * workers the count is per worker: no locks and no shared writes on the
 * packet path. A list holds up to min(N + 257, 65536) connections; past
 * that, new ones are not remembered (the count stays above N, which is all
 * `over N` needs while the list is full). Recompiling the rule (a commit
 * that changes its chain) starts with empty lists.
 */
#include <stdlib.h>

#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#define CONNLIMIT_MAX_CAP 65536u
#define CONNLIMIT_SLACK 257u

/* one worker's list, on its own cache lines */
struct connlimit_list {
	uint32_t count;
	uint32_t cap;
	uint64_t last_gc_ms;
	uint64_t keys[]; /* nftdp_vm_ct_ops.conn_key of each connection */
};

struct connlimit_state {
	unsigned int n_workers;
	size_t stride; /* bytes per list, a multiple of 64 */
	alignas(64) uint8_t mem[];
};

struct connlimit_priv {
	struct connlimit_state *st;
	uint32_t limit;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct connlimit_priv);

static inline struct connlimit_list *list_of(struct connlimit_state *st, unsigned int worker)
{
	return (struct connlimit_list *)(st->mem + (size_t)(worker % st->n_workers) * st->stride);
}

/*
 * Drop dead connections (swap with the last); true when key is among the
 * live ones. ct is the packet's connection: it names the shard.
 */
static bool list_gc(struct connlimit_list *l, const struct nftdp_vm_ct_ops *ops, const void *ct,
		    uint64_t key)
{
	bool found = false;
	uint32_t i = 0;

	while (i < l->count) {
		if (l->keys[i] == key) {
			found = true; /* the packet's own connection is live */
			i++;
		} else if (!ops->conn_live(ct, l->keys[i])) {
			l->keys[i] = l->keys[--l->count];
		} else {
			i++;
		}
	}
	return found;
}

static void connlimit_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct connlimit_priv *p = (const void *)op->priv;
	struct connlimit_list *l = list_of(p->st, ctx->worker);
	const struct nftdp_vm_ct_ops *ops = pkt->ct_ops;
	uint32_t count;

	if (!pkt->ct || !ops || !ops->conn_key || !ops->conn_live) {
		/* no entry: the kernel counts the packet's own tuple (gone again
		 * at the next gc); without one (nf_ct_get_tuplepr fails) it drops */
		if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO)) {
			regs->verdict.code = NF_DROP;
			return;
		}
		count = l->count + 1;
	} else {
		bool confirmed;
		uint64_t key = ops->conn_key(pkt->ct, &confirmed);

		if (!confirmed) {
			/* __nf_conncount_add: gc, then add unless already there */
			if (!list_gc(l, ops, pkt->ct, key) && l->count < l->cap)
				l->keys[l->count++] = key;
			l->last_gc_ms = ctx->now_ms;
		} else if (l->last_gc_ms != ctx->now_ms) {
			/* counted already (-EEXIST): nf_conncount_gc_list, at most
			 * once per clock tick as the kernel's once per jiffy */
			list_gc(l, ops, pkt->ct, key);
			l->last_gc_ms = ctx->now_ms;
		}
		count = l->count;
	}
	if ((count > p->limit) ^ p->invert)
		regs->verdict.code = NFT_BREAK;
}

/* nft_connlimit_do_init */
static int connlimit_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct connlimit_priv *p = priv;
	unsigned int n = cc->st && cc->st->n_workers ? cc->st->n_workers : 1;
	uint32_t flags = 0, cap;
	size_t stride;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_CONNLIMIT_COUNT))
		return nftdp_vm_errf(cc, -EINVAL, "connlimit: count missing");
	p->limit = nftnl_expr_get_u32(e, NFTNL_EXPR_CONNLIMIT_COUNT);
	if (nftdp_vm_attr(e, NFTNL_EXPR_CONNLIMIT_FLAGS))
		flags = nftnl_expr_get_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS);
	if (flags & ~(uint32_t)NFT_CONNLIMIT_F_INV)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "connlimit: flags 0x%x", flags);
	p->invert = flags & NFT_CONNLIMIT_F_INV;
	cap = p->limit < CONNLIMIT_MAX_CAP - CONNLIMIT_SLACK ? p->limit + CONNLIMIT_SLACK
							     : CONNLIMIT_MAX_CAP;
	stride =
	    (sizeof(struct connlimit_list) + (size_t)cap * sizeof(uint64_t) + 63) & ~(size_t)63;
	p->st = aligned_alloc(64, sizeof(struct connlimit_state) + stride * n);
	if (!p->st)
		return nftdp_vm_errf(cc, -ENOMEM, "connlimit: no memory");
	p->st->n_workers = n;
	p->st->stride = stride;
	for (unsigned int w = 0; w < n; w++) {
		struct connlimit_list *l = list_of(p->st, w);

		l->count = 0;
		l->cap = cap;
		l->last_gc_ms = UINT64_MAX;
	}
	return 0;
}

static void connlimit_destroy(void *priv)
{
	struct connlimit_priv *p = priv;

	free(p->st);
	p->st = NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_connlimit = {
    .name = "connlimit",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "connlimit",
	    .size = sizeof(struct connlimit_priv),
	    .init = connlimit_init,
	    .eval = connlimit_eval,
	    .destroy = connlimit_destroy,
	},
};
