// SPDX-License-Identifier: BSD-3-Clause
/*
 * Per-element expressions (meters): the counter, quota and limit a set
 * element carries (nft_set_elem_expr, NFT_SET_EXT_EXPRESSIONS), kept in
 * NFTDP_VM_ELEM_EXPR_SIZE bytes at the end of the element's data in sets/,
 * so they live and die with the element and survive every commit that
 * leaves it alone. Workers update them with atomics: counters and quotas
 * add, limits move their bucket with a CAS (expr_limit.c's GCRA form), so
 * the values are exact with any number of workers. dynset (new elements,
 * from the dynset's or the set's expressions, as nft_dynset_new clones
 * them) and lookup (nft_set_elem_update_expr) evaluate them here.
 *
 * `ct count` (nft_connlimit with the element's own nf_conncount list)
 * keeps its list in the element too: the keys (nftdp_vm_ct_ops.conn_key)
 * of the connections it counted, in the rest of the area. The list only
 * has to decide "more than N", so N + 1 keys are enough and a longer list
 * saturates. Workers share it without locks: a new connection's key is
 * stored first (CAS into an empty slot) and counted after, and dead keys
 * leave by CAS, so evaluations that do not overlap count exactly as the
 * kernel's locked list; two new connections of one element at the same
 * instant on two workers may both see the other (never neither).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

#define NFT_LIMIT_PKT_BURST_DEFAULT 5

/* One expression in the element: a is the value workers change. */
struct elem_expr_slot {
	uint8_t type; /* enum nftdp_vm_elem_expr_type, NONE ends the list */
	uint8_t limit_type;
	uint16_t pad;
	uint32_t flags;
	_Atomic uint64_t a; /* counter packets, quota consumed, limit empty_at */
	_Atomic uint64_t b; /* counter bytes; quota bytes; limit tokens_max */
	uint64_t c;	    /* limit: cost of a packet (pkts) or nsecs (bytes) */
	uint64_t rate;	    /* limit */
	uint32_t unit;	    /* limit, seconds */
	uint32_t burst;	    /* limit */
};
static_assert(sizeof(struct elem_expr_slot) * NFTDP_VM_ELEM_EXPR_MAX <= NFTDP_VM_ELEM_EXPR_SIZE,
	      "element expressions fit their area");

/* `ct count`, in place of a slot: its keys run to the end of the area when
 * it is alone (wide), else to the end of its slot */
struct elem_connlimit {
	uint8_t type;
	uint8_t invert; /* NFT_CONNLIMIT_F_INV: `over` */
	uint8_t cap;	/* keys */
	uint8_t wide;	/* the keys take the second slot's room: the last */
	uint32_t limit;
	_Atomic uint64_t keys[]; /* 0: free */
};
#define CONNLIMIT_CAP_WIDE ((NFTDP_VM_ELEM_EXPR_SIZE - sizeof(struct elem_connlimit)) / 8)
#define CONNLIMIT_CAP ((sizeof(struct elem_expr_slot) - sizeof(struct elem_connlimit)) / 8)
static_assert(CONNLIMIT_CAP_WIDE == NFTDP_VM_ELEM_CONNLIMIT_MAX + 1, "ct count fits N + 1 keys");
static_assert(CONNLIMIT_CAP == NFTDP_VM_ELEM_CONNLIMIT_MAX2 + 1, "ct count fits N + 1 keys");
static_assert(sizeof(struct elem_connlimit) == 8, "keys 8-byte aligned");

/*
 * nft_connlimit_do_eval on the element's list: true to break. Without a
 * connection the kernel counts the packet's own tuple (gone at the next
 * gc); without one at all it drops, here a break.
 */
static bool connlimit_eval(struct elem_connlimit *c, const struct nftdp_vm_pkt *pkt)
{
	const struct nftdp_vm_ct_ops *ops = pkt->ct_ops;
	uint32_t count = 0;
	bool confirmed, found = false;
	uint64_t key;

	if (!pkt->ct || !ops || !ops->conn_key || !ops->conn_live) {
		if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
			return true;
		for (unsigned int i = 0; i < c->cap; i++)
			count += atomic_load_explicit(&c->keys[i], memory_order_relaxed) != 0;
		return ((count + 1 > c->limit) ^ c->invert);
	}
	key = ops->conn_key(pkt->ct, &confirmed);
	if (!confirmed) {
		/* __nf_conncount_add: in unless there already */
		for (unsigned int i = 0; i < c->cap; i++)
			if (atomic_load_explicit(&c->keys[i], memory_order_relaxed) == key)
				found = true;
		for (unsigned int i = 0; !found && i < c->cap; i++) {
			uint64_t none = 0;

			if (atomic_compare_exchange_strong(&c->keys[i], &none, key))
				found = true;
		}
		if (!found)
			count++; /* full: counted, not kept (count > N already) */
	}
	/* the gc (find_or_evict), then the count */
	for (unsigned int i = 0; i < c->cap; i++) {
		uint64_t k = atomic_load_explicit(&c->keys[i], memory_order_acquire);

		if (!k)
			continue;
		if (k != key && !ops->conn_live(pkt->ct, k)) {
			atomic_compare_exchange_strong(&c->keys[i], &k, 0);
			continue;
		}
		count++;
	}
	return (count > c->limit) ^ c->invert;
}

int nftdp_vm_elem_expr_init(void *area, const struct nftdp_vm_elem_expr *v, unsigned int n)
{
	struct elem_expr_slot *x = area;
	uint64_t tokens_max, nsecs, cost;
	int rc;

	memset(area, 0, NFTDP_VM_ELEM_EXPR_SIZE);
	if (n > NFTDP_VM_ELEM_EXPR_MAX)
		return -E2BIG;
	for (unsigned int i = 0; i < n; i++, x++) {
		struct elem_connlimit *c = (struct elem_connlimit *)x;

		switch (v[i].type) {
		case NFTDP_VM_ELEM_EXPR_COUNTER:
			atomic_init(&x->a, v[i].packets);
			atomic_init(&x->b, v[i].bytes);
			break;
		case NFTDP_VM_ELEM_EXPR_QUOTA:
			/* nft_quota_do_init */
			if (v[i].quota > INT64_MAX)
				return -EOVERFLOW;
			if (v[i].flags & ~(uint32_t)(NFT_QUOTA_F_INV | NFT_QUOTA_F_DEPLETED))
				return -EINVAL;
			atomic_init(&x->a, v[i].consumed);
			atomic_init(&x->b, v[i].quota);
			x->flags = v[i].flags & NFT_QUOTA_F_INV;
			break;
		case NFTDP_VM_ELEM_EXPR_LIMIT:
			if (v[i].flags & ~(uint32_t)NFT_LIMIT_F_INV)
				return -EOPNOTSUPP;
			if (v[i].limit_type != NFT_LIMIT_PKTS &&
			    v[i].limit_type != NFT_LIMIT_PKT_BYTES)
				return -EOPNOTSUPP;
			if (v[i].unit > UINT32_MAX)
				return -EOVERFLOW;
			rc = nftdp_vm_limit_params(v[i].rate, v[i].unit, v[i].burst,
						   v[i].limit_type, &tokens_max, &nsecs, &cost);
			if (rc < 0)
				return rc;
			atomic_init(&x->a, 0); /* a full bucket */
			atomic_init(&x->b, tokens_max);
			x->limit_type = (uint8_t)v[i].limit_type;
			x->c = v[i].limit_type == NFT_LIMIT_PKTS ? cost : nsecs;
			x->rate = v[i].rate;
			x->unit = (uint32_t)v[i].unit;
			x->burst = v[i].burst;
			if (v[i].limit_type == NFT_LIMIT_PKTS && !x->burst)
				x->burst = NFT_LIMIT_PKT_BURST_DEFAULT;
			x->flags = v[i].flags;
			break;
		case NFTDP_VM_ELEM_EXPR_CONNLIMIT:
			/* nft_connlimit_do_init */
			if (v[i].flags & ~(uint32_t)NFT_CONNLIMIT_F_INV)
				return -EOPNOTSUPP;
			c->wide = n == 1;
			c->cap = (uint8_t)(c->wide ? CONNLIMIT_CAP_WIDE : CONNLIMIT_CAP);
			if (v[i].count >= c->cap)
				return -EOPNOTSUPP;
			c->limit = v[i].count;
			c->invert = v[i].flags & NFT_CONNLIMIT_F_INV;
			break;
		default:
			return -EOPNOTSUPP;
		}
		x->type = (uint8_t)v[i].type;
	}
	return 0;
}

unsigned int nftdp_vm_elem_expr_read(const void *area,
				     struct nftdp_vm_elem_expr out[NFTDP_VM_ELEM_EXPR_MAX])
{
	const struct elem_expr_slot *x = area;
	unsigned int n = 0;

	for (; n < NFTDP_VM_ELEM_EXPR_MAX && x->type != NFTDP_VM_ELEM_EXPR_NONE; n++, x++) {
		struct nftdp_vm_elem_expr *o = &out[n];
		/* relaxed loads of words workers change: the const is the
		 * caller's promise not to write */
		_Atomic uint64_t *a = (_Atomic uint64_t *)(uintptr_t)&x->a;
		_Atomic uint64_t *b = (_Atomic uint64_t *)(uintptr_t)&x->b;

		memset(o, 0, sizeof(*o));
		o->type = x->type;
		o->flags = x->flags;
		switch (x->type) {
		case NFTDP_VM_ELEM_EXPR_COUNTER:
			o->packets = atomic_load_explicit(a, memory_order_relaxed);
			o->bytes = atomic_load_explicit(b, memory_order_relaxed);
			break;
		case NFTDP_VM_ELEM_EXPR_QUOTA:
			o->consumed = atomic_load_explicit(a, memory_order_relaxed);
			o->quota = atomic_load_explicit(b, memory_order_relaxed);
			break;
		case NFTDP_VM_ELEM_EXPR_LIMIT:
			o->rate = x->rate;
			o->unit = x->unit;
			o->burst = x->burst;
			o->limit_type = x->limit_type;
			break;
		case NFTDP_VM_ELEM_EXPR_CONNLIMIT: {
			const struct elem_connlimit *c = (const void *)x;

			o->count = c->limit;
			o->flags = c->invert ? NFT_CONNLIMIT_F_INV : 0;
			if (c->wide)
				return n + 1;
			break;
		}
		}
	}
	return n;
}

bool nftdp_vm_elem_expr_eval(void *area, const struct nftdp_vm_pkt *pkt,
			     const struct nftdp_vm_ctx *ctx)
{
	struct elem_expr_slot *x = area;
	uint64_t len = pkt->skb_len, cost;

	for (unsigned int i = 0; i < NFTDP_VM_ELEM_EXPR_MAX; i++, x++) {
		switch (x->type) {
		case NFTDP_VM_ELEM_EXPR_NONE:
			return false;
		case NFTDP_VM_ELEM_EXPR_COUNTER:
			atomic_fetch_add_explicit(&x->a, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&x->b, len, memory_order_relaxed);
			break;
		case NFTDP_VM_ELEM_EXPR_QUOTA:
			/* nft_quota_eval: over once consumed passes the quota */
			if ((atomic_fetch_add_explicit(&x->a, len, memory_order_relaxed) + len >
			     atomic_load_explicit(&x->b, memory_order_relaxed)) ^
			    (bool)(x->flags & NFT_QUOTA_F_INV))
				return true;
			break;
		case NFTDP_VM_ELEM_EXPR_LIMIT:
			cost = x->limit_type == NFT_LIMIT_PKTS ? x->c : x->c * len / x->rate;
			if (nftdp_vm_limit_eval_at(
				&x->a, ctx->now_ns,
				atomic_load_explicit(&x->b, memory_order_relaxed), cost,
				x->flags & NFT_LIMIT_F_INV))
				return true;
			break;
		case NFTDP_VM_ELEM_EXPR_CONNLIMIT:
			if (connlimit_eval((struct elem_connlimit *)x, pkt))
				return true;
			if (((struct elem_connlimit *)x)->wide)
				return false;
			break;
		}
	}
	return false;
}

bool nftdp_vm_elem_expr_uses_ct(const void *area)
{
	const struct elem_expr_slot *x = area;

	for (unsigned int i = 0; i < NFTDP_VM_ELEM_EXPR_MAX && x->type; i++, x++)
		if (x->type == NFTDP_VM_ELEM_EXPR_CONNLIMIT)
			return true;
	return false;
}

bool nftdp_vm_elem_expr_gc(void *area, const struct nftdp_vm_ct_ops *ops)
{
	struct elem_expr_slot *x = area;

	for (unsigned int i = 0; i < NFTDP_VM_ELEM_EXPR_MAX && x->type; i++, x++) {
		struct elem_connlimit *c = (struct elem_connlimit *)x;
		bool empty = true;

		if (x->type != NFTDP_VM_ELEM_EXPR_CONNLIMIT)
			continue;
		if (!ops || !ops->conn_live)
			return false;
		for (unsigned int k = 0; k < c->cap; k++) {
			uint64_t key = atomic_load_explicit(&c->keys[k], memory_order_acquire);

			if (!key)
				continue;
			if (ops->conn_live(NULL, key))
				empty = false;
			else
				atomic_compare_exchange_strong(&c->keys[k], &key, 0);
		}
		return empty;
	}
	return false;
}
