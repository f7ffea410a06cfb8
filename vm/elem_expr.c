// SPDX-License-Identifier: BSD-3-Clause
/*
 * Per-element expressions (meters): the counter, quota, limit, `ct count`
 * and `last` a set element carries (nft_set_elem_expr, NFT_SET_EXT_EXPRESSIONS), kept in
 * NFTDP_VM_ELEM_EXPR_SIZE bytes at the end of the element's data in sets/,
 * so they live and die with the element and survive every commit that
 * leaves it alone. Workers update them with atomics: counters and quotas
 * add, limits move their bucket with a CAS (expr_limit.c's GCRA form), so
 * the values are exact with any number of workers. dynset (new elements,
 * from the dynset's or the set's expressions, as nft_dynset_new clones
 * them) and lookup (nft_set_elem_update_expr) evaluate them here.
 *
 * `ct count` (nft_connlimit with the element's own nf_conncount list)
 * keeps the keys (nftdp_vm_ct_ops.conn_key) of the connections it counted.
 * The list only has to decide "more than N", so N + 1 keys are enough (at
 * most NFTDP_VM_ELEM_CONNLIMIT_KEYS) and a longer list saturates. A short
 * list lives in the rest of the element's area (N <= 10 alone, <= 4 beside
 * another expression); a longer one in a block of the set's store (struct
 * elem_lists, one per power of two of keys, 16 to 65536, kept by sets/ as
 * the set's side object):
 * blocks allocated on the control thread when the expression is bound to
 * the set (nftdp_vm_elem_expr_bind), as many as the set holds elements (at
 * most NFTDP_VM_ELEM_LISTS_BYTES of them), zero pages until used. The
 * worker that first counts a connection in the element takes a block from
 * the store (a lock-free stack, then never-used ones) and CASes its index
 * into the element; the element's release (sets/' hook, after its grace
 * period, on the control thread) zeroes the keys it used and gives the
 * block back. So memory is bounded by the set's size and N, and no
 * allocation happens on the packet path.
 *
 * Workers share a list without locks: a new connection's key is stored
 * first (CAS into an empty slot, or one past the used ones) and counted
 * after, and dead keys leave by CAS, so evaluations that do not overlap
 * count exactly as the kernel's locked list; two new connections of one
 * element at the same instant on two workers may both see the other (never
 * neither).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include <stdlib.h>

#include "vm_priv.h"

#define NFT_LIMIT_PKT_BURST_DEFAULT 5

/* One expression in the element: a is the value workers change. */
struct elem_expr_slot {
	uint8_t type; /* enum nftdp_vm_elem_expr_type, NONE ends the list */
	uint8_t limit_type;
	uint16_t pad;
	uint32_t flags;
	_Atomic uint64_t a; /* counter packets, quota consumed, limit empty_at,
			       last: when used (ctx->now_ms's clock) */
	_Atomic uint64_t b; /* counter bytes; quota bytes; limit tokens_max;
			       last: set (used once) */
	uint64_t c;	    /* limit: cost of a packet (pkts) or nsecs (bytes) */
	uint64_t rate;	    /* limit */
	uint32_t unit;	    /* limit, seconds */
	uint32_t burst;	    /* limit */
};
static_assert(sizeof(struct elem_expr_slot) * NFTDP_VM_ELEM_EXPR_MAX <= NFTDP_VM_ELEM_EXPR_SIZE,
	      "element expressions fit their area");

/* `ct count`, in place of a slot: its keys run to the end of the area when
 * it is alone (wide), else to the end of its slot; cap 0: in a block of the
 * set's store (struct elem_connlimit_ext) */
struct elem_connlimit {
	uint8_t type;
	uint8_t invert; /* NFT_CONNLIMIT_F_INV: `over` */
	uint8_t cap;	/* keys; 0: external */
	uint8_t wide;	/* the keys take the second slot's room: the last */
	uint32_t limit;
	_Atomic uint64_t keys[]; /* 0: free */
};
#define CONNLIMIT_CAP_WIDE ((NFTDP_VM_ELEM_EXPR_SIZE - sizeof(struct elem_connlimit)) / 8)
#define CONNLIMIT_CAP ((sizeof(struct elem_expr_slot) - sizeof(struct elem_connlimit)) / 8)
static_assert(CONNLIMIT_CAP_WIDE == NFTDP_VM_ELEM_CONNLIMIT_MAX + 1, "ct count fits N + 1 keys");
static_assert(CONNLIMIT_CAP == NFTDP_VM_ELEM_CONNLIMIT_MAX2 + 1, "ct count fits N + 1 keys");
static_assert(sizeof(struct elem_connlimit) == 8, "keys 8-byte aligned");

/* The set's blocks of `keys` keys each (one store per key count). */
struct elem_lists {
	struct elem_lists *next; /* the set's store of another key count */
	uint32_t keys;		 /* per block: a power of two, 16 to 65536 */
	uint32_t n;		 /* blocks */
	_Atomic uint32_t fresh;	 /* blocks [fresh, n) never handed out */
	_Atomic uint64_t head;	 /* given back: tag << 32 | (index + 1) */
	_Atomic uint32_t *link;	 /* n: the next given-back block's index + 1 */
	_Atomic uint64_t *mem;	 /* n * keys, zero outside a block's use */
};

/* `ct count` with its list in a block */
struct elem_connlimit_ext {
	uint8_t type;
	uint8_t invert;
	uint8_t cap; /* 0 */
	uint8_t wide;
	uint32_t limit;
	struct elem_lists *lists; /* the set's store (bind), NULL: unbound */
	_Atomic uint64_t blk;	  /* 1 + the element's block, 0: none yet */
	_Atomic uint32_t used;	  /* keys [0, used) of the block may be set */
	uint32_t keys;		  /* min(N + 1, NFTDP_VM_ELEM_CONNLIMIT_KEYS) */
};
static_assert(sizeof(struct elem_connlimit_ext) <= sizeof(struct elem_expr_slot),
	      "ct count's header fits a slot");

static uint32_t lists_get(struct elem_lists *l)
{
	uint64_t head = atomic_load_explicit(&l->head, memory_order_acquire);
	uint32_t f;

	while ((uint32_t)head) {
		uint32_t idx = (uint32_t)head - 1;
		uint64_t nhead = ((head >> 32) + 1) << 32 |
				 atomic_load_explicit(&l->link[idx], memory_order_relaxed);

		if (atomic_compare_exchange_weak_explicit(
			&l->head, &head, nhead, memory_order_acq_rel, memory_order_acquire))
			return idx + 1;
	}
	f = atomic_load_explicit(&l->fresh, memory_order_relaxed);
	while (f < l->n)
		if (atomic_compare_exchange_weak_explicit(
			&l->fresh, &f, f + 1, memory_order_relaxed, memory_order_relaxed))
			return f + 1;
	return 0;
}

/* b: 1 + index of a block whose keys are all 0 */
static void lists_put(struct elem_lists *l, uint32_t b)
{
	uint64_t head = atomic_load_explicit(&l->head, memory_order_acquire);

	for (;;) {
		atomic_store_explicit(&l->link[b - 1], (uint32_t)head, memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(
			&l->head, &head, ((head >> 32) + 1) << 32 | b, memory_order_acq_rel,
			memory_order_acquire))
			return;
	}
}

static _Atomic uint64_t *lists_block(const struct elem_lists *l, uint64_t b)
{
	return l->mem + (size_t)(b - 1) * l->keys;
}

static void lists_free(void *side)
{
	struct elem_lists *l = side, *next;

	for (; l; l = next) {
		next = l->next;
		free(l->link);
		free(l->mem);
		free(l);
	}
}

/* the element's block, taken from the store the first time */
static _Atomic uint64_t *ext_block(struct elem_connlimit_ext *c)
{
	uint64_t b = atomic_load_explicit(&c->blk, memory_order_acquire), none = 0;
	uint32_t mine;

	if (b)
		return lists_block(c->lists, b);
	if (!c->lists || !(mine = lists_get(c->lists)))
		return NULL;
	if (atomic_compare_exchange_strong(&c->blk, &none, mine))
		return lists_block(c->lists, mine);
	lists_put(c->lists, mine); /* another worker's came first: untouched */
	return lists_block(c->lists, none);
}

/* __nf_conncount_add on a block: in unless there already; false when full */
static bool ext_add(struct elem_connlimit_ext *c, _Atomic uint64_t *keys, uint64_t key)
{
	uint32_t used = atomic_load_explicit(&c->used, memory_order_acquire);

	for (uint32_t i = 0; i < used; i++)
		if (atomic_load_explicit(&keys[i], memory_order_relaxed) == key)
			return true;
	for (;;) {
		uint64_t none = 0;

		for (uint32_t i = 0; i < used; i++) {
			if (atomic_load_explicit(&keys[i], memory_order_relaxed))
				continue;
			if (atomic_compare_exchange_strong(&keys[i], &none, key))
				return true;
			none = 0;
		}
		if (used >= c->keys)
			return false;
		/* one past the used ones: claim it, then fill it */
		if (atomic_compare_exchange_strong(&c->used, &used, used + 1) &&
		    atomic_compare_exchange_strong(&keys[used], &none, key))
			return true;
		used = atomic_load_explicit(&c->used, memory_order_acquire);
	}
}

/* find_or_evict over n keys: dead ones (but key, the packet's own) out */
static void keys_gc_live(_Atomic uint64_t *keys, uint32_t n, const struct nftdp_vm_ct_ops *ops,
			 const void *ct, uint64_t key)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = atomic_load_explicit(&keys[i], memory_order_acquire);

		if (k && k != key && !ops->conn_live(ct, k))
			atomic_compare_exchange_strong(&keys[i], &k, 0);
	}
}

/* nft_connlimit_do_eval on a block (connlimit_eval below) */
static bool connlimit_eval_ext(struct elem_connlimit_ext *c, const struct nftdp_vm_pkt *pkt)
{
	const struct nftdp_vm_ct_ops *ops = pkt->ct_ops;
	_Atomic uint64_t *keys = ext_block(c);
	uint32_t count = 0, used;
	bool confirmed;
	uint64_t key;

	if (!keys)
		return true; /* no list (the kernel's allocation failure): drop */
	used = atomic_load_explicit(&c->used, memory_order_acquire);
	if (!pkt->ct || !ops || !ops->conn_key || !ops->conn_live) {
		if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
			return true;
		for (uint32_t i = 0; i < used; i++)
			count += atomic_load_explicit(&keys[i], memory_order_relaxed) != 0;
		return ((count + 1 > c->limit) ^ c->invert);
	}
	key = ops->conn_key(pkt->ct, &confirmed);
	if (!confirmed) {
		/* full of keys that may be dead: the gc first, as the kernel's
		 * add walks the list before it adds */
		bool in = ext_add(c, keys, key);

		if (!in) {
			keys_gc_live(keys, used, ops, pkt->ct, key);
			in = ext_add(c, keys, key);
		}
		if (!in)
			count++; /* full: counted, not kept (count > N already) */
		used = atomic_load_explicit(&c->used, memory_order_acquire);
	}
	/* the gc (find_or_evict), then the count */
	for (uint32_t i = 0; i < used; i++) {
		uint64_t k = atomic_load_explicit(&keys[i], memory_order_acquire);

		if (!k)
			continue;
		if (k != key && !ops->conn_live(pkt->ct, k)) {
			atomic_compare_exchange_strong(&keys[i], &k, 0);
			continue;
		}
		count++;
	}
	return (count > c->limit) ^ c->invert;
}

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
		for (int pass = 0; pass < 2 && !found; pass++) {
			if (pass) /* full: the dead ones out first */
				keys_gc_live(c->keys, c->cap, ops, pkt->ct, key);
			for (unsigned int i = 0; !found && i < c->cap; i++) {
				uint64_t none = 0;

				if (atomic_compare_exchange_strong(&c->keys[i], &none, key))
					found = true;
			}
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
			c->limit = v[i].count;
			c->invert = v[i].flags & NFT_CONNLIMIT_F_INV;
			if (v[i].count < (n == 1 ? CONNLIMIT_CAP_WIDE : CONNLIMIT_CAP)) {
				c->wide = n == 1;
				c->cap = (uint8_t)(c->wide ? CONNLIMIT_CAP_WIDE : CONNLIMIT_CAP);
			} else {
				/* in a block of the set's store, once bound */
				((struct elem_connlimit_ext *)c)->keys =
				    v[i].count < NFTDP_VM_ELEM_CONNLIMIT_KEYS
					? v[i].count + 1
					: NFTDP_VM_ELEM_CONNLIMIT_KEYS;
			}
			break;
		case NFTDP_VM_ELEM_EXPR_LAST: {
			/* nft_last_init: used last_msecs ago, if ever */
			uint64_t now = nftdp_now_ms();

			if (v[i].last_set) {
				atomic_init(&x->a,
					    now > v[i].last_msecs ? now - v[i].last_msecs : 0);
				atomic_init(&x->b, 1);
			}
			break;
		}
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
		case NFTDP_VM_ELEM_EXPR_LAST: {
			/* nft_last_dump: a use stamped after now is none */
			uint64_t at = atomic_load_explicit(a, memory_order_relaxed);
			uint64_t now = nftdp_now_ms();

			o->last_set = atomic_load_explicit(b, memory_order_relaxed) && at <= now;
			o->last_msecs = o->last_set ? now - at : 0;
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
			if (!((struct elem_connlimit *)x)->cap) {
				if (connlimit_eval_ext((struct elem_connlimit_ext *)x, pkt))
					return true;
				break;
			}
			if (connlimit_eval((struct elem_connlimit *)x, pkt))
				return true;
			if (((struct elem_connlimit *)x)->wide)
				return false;
			break;
		case NFTDP_VM_ELEM_EXPR_LAST:
			/* nft_last_eval: stores only when the value changes */
			if (atomic_load_explicit(&x->a, memory_order_relaxed) != ctx->now_ms)
				atomic_store_explicit(&x->a, ctx->now_ms, memory_order_relaxed);
			if (!atomic_load_explicit(&x->b, memory_order_relaxed))
				atomic_store_explicit(&x->b, 1, memory_order_relaxed);
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

/* nft_connlimit_gc on n keys: drop the dead ones; true when none is left */
static bool keys_gc(_Atomic uint64_t *keys, uint32_t n, const struct nftdp_vm_ct_ops *ops)
{
	bool empty = true;

	for (uint32_t k = 0; k < n; k++) {
		uint64_t key = atomic_load_explicit(&keys[k], memory_order_acquire);

		if (!key)
			continue;
		if (ops->conn_live(NULL, key))
			empty = false;
		else
			atomic_compare_exchange_strong(&keys[k], &key, 0);
	}
	return empty;
}

bool nftdp_vm_elem_expr_gc(void *area, const struct nftdp_vm_ct_ops *ops)
{
	struct elem_expr_slot *x = area;

	for (unsigned int i = 0; i < NFTDP_VM_ELEM_EXPR_MAX && x->type; i++, x++) {
		struct elem_connlimit *c = (struct elem_connlimit *)x;

		if (x->type != NFTDP_VM_ELEM_EXPR_CONNLIMIT)
			continue;
		if (!ops || !ops->conn_live)
			return false;
		if (!c->cap) {
			struct elem_connlimit_ext *xc = (struct elem_connlimit_ext *)x;
			uint64_t b = atomic_load_explicit(&xc->blk, memory_order_acquire);
			uint32_t used = atomic_load_explicit(&xc->used, memory_order_acquire);

			if (!b)
				return true; /* nothing counted yet */
			return keys_gc(lists_block(xc->lists, b), used, ops);
		}
		return keys_gc(c->keys, c->cap, ops);
	}
	return false;
}

/* sets/' release hook: arg is the area's offset in the element's data */
static void elem_release(void *data, void *arg)
{
	nftdp_vm_elem_expr_release((uint8_t *)data + (uintptr_t)arg);
}

int nftdp_vm_elem_expr_bind(void *area, struct nftdp_set *set, uint32_t off)
{
	struct elem_expr_slot *x = area;

	for (unsigned int i = 0; i < NFTDP_VM_ELEM_EXPR_MAX && x->type; i++, x++) {
		struct elem_connlimit_ext *c = (struct elem_connlimit_ext *)x;
		struct elem_lists *l;
		uint32_t cap, bk;

		if (x->type != NFTDP_VM_ELEM_EXPR_CONNLIMIT || c->cap)
			continue;
		if (!set)
			return -EOPNOTSUPP;
		/* blocks of a power of two keys: at most 13 stores a set
		 * (16 to 65536 keys), whatever counts its elements use */
		for (bk = 16; bk < c->keys; bk *= 2)
			;
		for (l = nftdp_set_side(set); l && l->keys != bk; l = l->next)
			;
		if (!l) {
			/* one block for each element the set can hold, within
			 * the bytes a store may take (zero pages until used) */
			cap = nftdp_set_capacity(set);
			if (cap > NFTDP_VM_ELEM_LISTS_BYTES / 8 / bk)
				cap = (uint32_t)(NFTDP_VM_ELEM_LISTS_BYTES / 8 / bk);
			l = calloc(1, sizeof(*l));
			if (!l)
				return -ENOMEM;
			l->keys = bk;
			l->n = cap;
			l->link = calloc(cap, sizeof(*l->link));
			l->mem = calloc((size_t)cap * bk, sizeof(*l->mem));
			if (!l->link || !l->mem) {
				free(l->link);
				free(l->mem);
				free(l);
				return -ENOMEM;
			}
			l->next = nftdp_set_side(set);
			nftdp_set_side_set(set, l, lists_free);
			nftdp_set_elem_release_hook(set, elem_release, (void *)(uintptr_t)off);
		}
		c->lists = l;
	}
	return 0;
}

void nftdp_vm_elem_expr_release(void *area)
{
	struct elem_expr_slot *x = area;

	for (unsigned int i = 0; i < NFTDP_VM_ELEM_EXPR_MAX && x->type; i++, x++) {
		struct elem_connlimit_ext *c = (struct elem_connlimit_ext *)x;
		uint64_t b;

		if (x->type != NFTDP_VM_ELEM_EXPR_CONNLIMIT || c->cap)
			continue;
		b = atomic_exchange(&c->blk, 0);
		if (!b || !c->lists)
			continue;
		memset((void *)lists_block(c->lists, b), 0,
		       (size_t)atomic_load(&c->used) * sizeof(uint64_t));
		atomic_store(&c->used, 0);
		lists_put(c->lists, (uint32_t)b);
	}
}
