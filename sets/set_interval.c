/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interval backend for single-field ranges and prefixes of any key length;
 * the counterpart of nft_set_rbtree.c (same overlap rules: an identical
 * range is -EEXIST, any other overlap -ENOTEMPTY, expired elements in the
 * way are collected).
 *
 * A skip list ordered by (start, insertion number), one writer (the control
 * thread), lock-free readers: a node is linked bottom-up with release
 * stores and unlinked top-down only after a grace period, so a reader
 * always walks valid nodes. Within one generation the active ranges are
 * disjoint, so the answer for a key is the last node with start <= key
 * that is active in the reader's generation; nodes of other generations
 * (pending adds, committed deletes not yet reclaimed) are skipped by
 * searching again strictly before them.
 *
 * The skip list is the writer's structure (overlap checks, get, walk).
 * Readers use a read index instead, over the ranges active in the committed
 * generation (keys of up to 16 bytes as 128-bit integers): a 256-ary radix
 * directory over the key's bytes whose slots hold an element covering the
 * whole slot, a small B+-tree of the ranges inside the slot (start, end,
 * element per leaf slot), or a node one byte deeper once that tree passes
 * RX_BURST ranges; so a lookup is a few indexed loads and one small tree
 * whatever the set's size. It is built copy-on-write at commit: the nodes
 * on the path of each added or removed range are copied once per commit
 * (nodes created in the same commit are changed in place), the new root is
 * published with a release store before the set's generation, and the
 * replaced nodes are freed after the grace period (nftdp_set_defer_free).
 * Lookups move all keys of a bulk one step (radix slot or tree level) per
 * pass and prefetch each key's next step. Keys longer than 16 bytes, or a
 * failed allocation while building the index, leave readers on the skip
 * list.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include <linux/netfilter/nf_tables.h>

#include "sets_priv.h"

#define SL_MAX 16 /* p = 1/4: enough for 4^16 elements */

typedef unsigned __int128 u128;

#define BT_B 15 /* slots per node: header and keys in two cache lines */

/* One node of the read index. level 0 is a leaf; all leaves are at the
 * same depth. key[i] is the start of slot i (inner: the smallest start
 * under child[i]); keys ascend. A search reads two lines (the header and
 * k64: the top 64 bits of each key, UINT64_MAX past n, exact for keys of
 * up to 8 bytes), then one pointer line (inner) or the slot's end line
 * (leaf); key[] only when a longer key ties on its top 64 bits. */
struct bt_node {
	uint16_t n;
	uint16_t level;
	uint32_t pad;
	uint64_t k64[BT_B];
	union {
		struct bt_node *child[BT_B];
		struct set_elem *elem[BT_B];
	};
	uint64_t bgen; /* build batch that made it: changed in place while current */
	u128 key[BT_B] __attribute__((aligned(64)));
	u128 end[BT_B]; /* leaves */
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct bt_node, child) == 128, "header and k64 fill two lines");

/*
 * The read index's directory: a radix node over byte `depth` of the key.
 * A slot is empty (0), a range's element covering the slot's whole key
 * range (RX_FULL), the one range that covers part of it (RX_ONE: the
 * element's own start and end decide), a B+-tree of the ranges inside the
 * slot (RX_TREE), or a
 * node one byte deeper once the tree holds more than RX_BURST ranges; so a
 * lookup costs a few indexed loads plus one small tree whatever the size of
 * the set. A range that spans several slots is clipped into each.
 */
#define RX_FAN 256
#define RX_FULL 1u
#define RX_TREE 2u
#define RX_LEAF 3u /* lookups only: resolved to a leaf slot */
#define RX_ONE 4u
#define RX_TAG 7u /* elements are 16-byte aligned (malloc), nodes 64 */
#define RX_BURST 64

struct rx_node {
	uintptr_t slot[RX_FAN];
	uint64_t bgen;
	uint32_t depth;
	uint32_t used;	      /* non-empty slots */
	uint16_t cnt[RX_FAN]; /* ranges in each RX_ONE or RX_TREE slot */
} __attribute__((aligned(64)));

struct ival_priv {
	struct set_elem *head[SL_MAX];
	uint64_t rnd;
	uint32_t level;	       /* highest level in use */
	bool tree_ok;	       /* readers use root (atomic) */
	bool tree_fail;	       /* an allocation failed in this batch */
	struct rx_node *root;  /* published (release) */
	uint64_t root_gen;     /* set generation root shows (stored before root) */
	struct rx_node *wroot; /* writer's root, published at the end of a batch */
	uint64_t bgen;
};

static inline struct set_elem **nx(const struct nftdp_set *s, const struct set_elem *e)
{
	return (struct set_elem **)set_elem_backend(s, e);
}

/* ---- read index ---- */

/* A key of up to 16 bytes as a left-aligned big-endian 128-bit integer, so
 * that integer order is memcmp order. */
static inline u128 bt_key(const uint8_t *k, uint32_t ks)
{
	uint64_t hi = 0, lo = 0;

	if (ks == 4) {
		uint32_t v;

		memcpy(&v, k, 4);
		hi = (uint64_t)__builtin_bswap32(v) << 32;
	} else if (ks == 16) {
		memcpy(&hi, k, 8);
		memcpy(&lo, k + 8, 8);
		hi = __builtin_bswap64(hi);
		lo = __builtin_bswap64(lo);
	} else {
		for (uint32_t i = 0; i < ks; i++) {
			if (i < 8)
				hi |= (uint64_t)k[i] << (56 - 8 * i);
			else
				lo |= (uint64_t)k[i] << (56 - 8 * (i - 8));
		}
	}
	return (u128)hi << 64 | lo;
}

static inline uint64_t bt_hi(u128 k)
{
	return (uint64_t)(k >> 64);
}

/* number of slots with key <= k; wide: keys longer than 8 bytes */
static inline unsigned bt_rank(const struct bt_node *x, u128 k, bool wide)
{
	uint64_t q = bt_hi(k);
	unsigned c = 0;

	/* k64 past n is UINT64_MAX, so the count only overshoots n for q == MAX */
	for (unsigned i = 0; i < BT_B; i++)
		c += (unsigned)(x->k64[i] <= q);
	if (c > x->n)
		c = x->n;
	/* equal top halves: the full keys decide (sorted, so from the right) */
	if (wide)
		while (c && x->k64[c - 1] == q && x->key[c - 1] > k)
			c--;
	return c;
}

/* what a search of x reads first: header, k64 and (inner) the pointers */
static inline void bt_prefetch(const struct bt_node *x, bool leaf)
{
	const char *c = (const char *)x;

	__builtin_prefetch(c);
	__builtin_prefetch(c + 64);
	if (!leaf) {
		__builtin_prefetch(c + 128);
		__builtin_prefetch(c + 192);
	}
}

/* keep k64 past n at UINT64_MAX after slots moved or n shrank */
static void bt_pad(struct bt_node *x)
{
	for (unsigned i = x->n; i < BT_B; i++)
		x->k64[i] = UINT64_MAX;
}

static struct bt_node *bt_alloc(struct ival_priv *p, unsigned level)
{
	struct bt_node *x = aligned_alloc(64, sizeof(*x));

	if (!x) {
		p->tree_fail = true;
		return NULL;
	}
	memset(x, 0, sizeof(*x));
	bt_pad(x);
	x->level = (uint16_t)level;
	x->bgen = p->bgen;
	return x;
}

/* retire a node the index no longer points to */
static void bt_drop(struct nftdp_set *s, struct ival_priv *p, struct bt_node *x)
{
	if (x->bgen == p->bgen || nftdp_set_defer_free(s, x))
		free(x); /* never published, or (no memory) leak-free best effort */
}

/* a node this batch may change: itself if made in this batch, else a copy */
static struct bt_node *bt_mut(struct nftdp_set *s, struct ival_priv *p, struct bt_node *x)
{
	struct bt_node *y;

	if (x->bgen == p->bgen)
		return x;
	y = aligned_alloc(64, sizeof(*y));
	if (!y) {
		p->tree_fail = true;
		return NULL;
	}
	memcpy(y, x, sizeof(*y));
	y->bgen = p->bgen;
	if (nftdp_set_defer_free(s, x)) {
		/* cannot retire it safely: keep it (a leak), stop using the index */
		p->tree_fail = true;
	}
	return y;
}

static void bt_key_set(struct bt_node *x, unsigned i, u128 k)
{
	x->key[i] = k;
	x->k64[i] = bt_hi(k);
}

static void bt_slot_set(struct bt_node *x, unsigned i, u128 k, u128 end, void *ptr)
{
	bt_key_set(x, i, k);
	if (x->level) {
		x->child[i] = ptr;
	} else {
		x->end[i] = end;
		x->elem[i] = ptr;
	}
}

static void bt_slot_move(struct bt_node *d, unsigned di, const struct bt_node *x, unsigned si,
			 unsigned cnt)
{
	memmove(&d->key[di], &x->key[si], cnt * sizeof(u128));
	memmove(&d->k64[di], &x->k64[si], cnt * sizeof(uint64_t));
	memmove(&d->child[di], &x->child[si], cnt * sizeof(void *));
	if (!x->level)
		memmove(&d->end[di], &x->end[si], cnt * sizeof(u128));
}

/* put a slot at pos of mutable x, splitting a full x; *split gets the new
 * right half. false on allocation failure. */
static bool bt_put(struct ival_priv *p, struct bt_node *x, unsigned pos, u128 k, u128 end,
		   void *ptr, struct bt_node **split)
{
	struct bt_node *t = x;

	*split = NULL;
	if (x->n == BT_B) {
		struct bt_node *r = bt_alloc(p, x->level);

		if (!r)
			return false;
		*split = r;
		if (pos == BT_B) {
			/* appending (ascending inserts): keep x full */
			t = r;
			pos = 0;
		} else {
			bt_slot_move(r, 0, x, BT_B / 2, BT_B - BT_B / 2);
			r->n = BT_B - BT_B / 2;
			x->n = BT_B / 2;
			bt_pad(x);
			if (pos > BT_B / 2) {
				t = r;
				pos -= BT_B / 2;
			}
		}
	}
	bt_slot_move(t, pos + 1, t, pos, t->n - pos);
	bt_slot_set(t, pos, k, end, ptr);
	t->n++;
	return true;
}

static struct bt_node *bt_ins(struct nftdp_set *s, struct ival_priv *p, struct bt_node *x, u128 k,
			      u128 end, struct set_elem *e, struct bt_node **split)
{
	unsigned i;

	*split = NULL;
	x = bt_mut(s, p, x);
	if (!x)
		return NULL;
	i = bt_rank(x, k, s->key_size > 8);
	if (x->level == 0) {
		if (!bt_put(p, x, i, k, end, e, split))
			return NULL;
		return x;
	}
	{
		unsigned ci = i ? i - 1 : 0;
		struct bt_node *cs, *c = bt_ins(s, p, x->child[ci], k, end, e, &cs);

		if (!c)
			return NULL;
		x->child[ci] = c;
		bt_key_set(x, ci, c->key[0]);
		if (cs && !bt_put(p, x, ci + 1, cs->key[0], 0, cs, split))
			return NULL;
	}
	return x;
}

/* remove (k, e); returns the node (NULL once empty); *found if it was there */
static struct bt_node *bt_del(struct nftdp_set *s, struct ival_priv *p, struct bt_node *x, u128 k,
			      const struct set_elem *e, bool *found)
{
	unsigned i = bt_rank(x, k, s->key_size > 8), ci;

	if (!i)
		return x;
	ci = i - 1;
	if (x->level == 0) {
		if (x->key[ci] != k || x->elem[ci] != e)
			return x;
		*found = true;
	} else {
		struct bt_node *c = bt_del(s, p, x->child[ci], k, e, found);

		if (!*found || p->tree_fail)
			return x;
		if (c) {
			x = bt_mut(s, p, x);
			if (!x)
				return NULL;
			x->child[ci] = c;
			bt_key_set(x, ci, c->key[0]);
			return x;
		}
	}
	if (x->n == 1) {
		bt_drop(s, p, x);
		return NULL;
	}
	x = bt_mut(s, p, x);
	if (!x)
		return NULL;
	bt_slot_move(x, ci, x, ci + 1, x->n - ci - 1);
	x->n--;
	bt_pad(x);
	return x;
}

/* insert (k, end, e) under root (NULL: empty); the new root, NULL on failure */
static struct bt_node *bt_root_ins(struct nftdp_set *s, struct ival_priv *p, struct bt_node *root,
				   u128 k, u128 end, struct set_elem *e)
{
	struct bt_node *r, *sp, *nr;

	if (!root) {
		root = bt_alloc(p, 0);
		if (!root)
			return NULL;
	}
	r = bt_ins(s, p, root, k, end, e, &sp);
	if (!r || !sp)
		return r;
	nr = bt_alloc(p, r->level + 1u);
	if (!nr)
		return NULL;
	nr->n = 2;
	bt_key_set(nr, 0, r->key[0]);
	nr->child[0] = r;
	bt_key_set(nr, 1, sp->key[0]);
	nr->child[1] = sp;
	bt_pad(nr);
	return nr;
}

/* remove (k, e) under root; the new root (NULL once empty) */
static struct bt_node *bt_root_del(struct nftdp_set *s, struct ival_priv *p, struct bt_node *root,
				   u128 k, const struct set_elem *e, bool *found)
{
	struct bt_node *r = bt_del(s, p, root, k, e, found);

	while (!p->tree_fail && r && r->level && r->n == 1) {
		struct bt_node *c = r->child[0];

		bt_drop(s, p, r);
		r = c;
	}
	return r;
}

static void bt_free_all(struct bt_node *x)
{
	if (!x)
		return;
	if (x->level)
		for (unsigned i = 0; i < x->n; i++)
			bt_free_all(x->child[i]);
	free(x);
}

static void bt_drop_all(struct nftdp_set *s, struct ival_priv *p, struct bt_node *x)
{
	if (x->level)
		for (unsigned i = 0; i < x->n; i++)
			bt_drop_all(s, p, x->child[i]);
	bt_drop(s, p, x);
}

/* ---- radix directory in front of the B+-trees ---- */

static inline unsigned rx_byte(u128 k, unsigned d)
{
	return (unsigned)(k >> (120 - 8 * d)) & 0xff;
}

static struct rx_node *rx_alloc(struct ival_priv *p, unsigned depth)
{
	struct rx_node *x = aligned_alloc(64, sizeof(*x));

	if (!x) {
		p->tree_fail = true;
		return NULL;
	}
	memset(x, 0, sizeof(*x));
	x->depth = depth;
	x->bgen = p->bgen;
	return x;
}

static void rx_drop(struct nftdp_set *s, struct ival_priv *p, struct rx_node *x)
{
	if (x->bgen == p->bgen || nftdp_set_defer_free(s, x))
		free(x);
}

static struct rx_node *rx_mut(struct nftdp_set *s, struct ival_priv *p, struct rx_node *x)
{
	struct rx_node *y;

	if (x->bgen == p->bgen)
		return x;
	y = aligned_alloc(64, sizeof(*y));
	if (!y) {
		p->tree_fail = true;
		return NULL;
	}
	memcpy(y, x, sizeof(*y));
	y->bgen = p->bgen;
	if (nftdp_set_defer_free(s, x))
		p->tree_fail = true;
	return y;
}

static void rx_free_all(struct rx_node *x)
{
	if (!x)
		return;
	for (unsigned c = 0; c < RX_FAN; c++) {
		uintptr_t v = x->slot[c];

		if ((v & RX_TAG) == RX_TREE)
			bt_free_all((struct bt_node *)(v & ~(uintptr_t)RX_TAG));
		else if (v && !(v & RX_TAG))
			rx_free_all((struct rx_node *)v);
	}
	free(x);
}

/* The key bits a node of depth d leaves to its slots (below byte d), within
 * the key's length; keys are left-aligned so the bits past it are 0. */
static u128 rx_low(const struct nftdp_set *s, unsigned d)
{
	unsigned shift = 120 - 8 * d, pad = 128 - 8 * s->key_size;
	u128 low = ((u128)1 << shift) - 1;

	return pad ? low & ~(((u128)1 << pad) - 1) : low;
}

static bool rx_add(struct nftdp_set *s, struct ival_priv *p, struct rx_node *x, u128 lo, u128 hi,
		   struct set_elem *e);

/* a slot's tree grew past RX_BURST: spread its ranges over a node one byte deeper */
static bool rx_add_tree(struct nftdp_set *s, struct ival_priv *p, struct rx_node *y,
			const struct bt_node *t)
{
	if (t->level) {
		for (unsigned i = 0; i < t->n; i++)
			if (!rx_add_tree(s, p, y, t->child[i]))
				return false;
		return true;
	}
	for (unsigned i = 0; i < t->n; i++)
		if (!rx_add(s, p, y, t->key[i], t->end[i], t->elem[i]))
			return false;
	return true;
}

/*
 * Add [lo, hi] (inside x's region) to mutable x: slots it covers whole
 * point at the element, the (at most two) slots it covers in part get the
 * clipped range in their tree or deeper node.
 */
static bool rx_add(struct nftdp_set *s, struct ival_priv *p, struct rx_node *x, u128 lo, u128 hi,
		   struct set_elem *e)
{
	unsigned d = x->depth, shift = 120 - 8 * d;
	u128 low = rx_low(s, d);
	u128 base = lo & ~(low | ((u128)0xff << shift));

	for (unsigned c = rx_byte(lo, d); c <= rx_byte(hi, d); c++) {
		u128 slo = base | (u128)c << shift, shi = slo | low;
		u128 a = lo > slo ? lo : slo, b = hi < shi ? hi : shi;
		uintptr_t v = x->slot[c];

		if (a == slo && b == shi) {
			if (v)
				return false; /* active ranges are disjoint */
			x->slot[c] = (uintptr_t)e | RX_FULL;
			x->used++;
		} else if (!v) {
			x->slot[c] = (uintptr_t)e | RX_ONE;
			x->cnt[c] = 1;
			x->used++;
		} else if ((v & RX_TAG) == RX_ONE || (v & RX_TAG) == RX_TREE) {
			struct bt_node *t = NULL;

			if ((v & RX_TAG) == RX_ONE) {
				/* a second range: both go into a tree, clipped to the slot */
				struct set_elem *o = (struct set_elem *)(v & ~(uintptr_t)RX_TAG);
				u128 ok = bt_key(set_elem_key(o), s->key_size);
				u128 oe = bt_key(set_elem_key_end(s, o), s->key_size);

				t = bt_root_ins(s, p, NULL, ok > slo ? ok : slo,
						oe < shi ? oe : shi, o);
				if (!t)
					return false;
			} else {
				t = (struct bt_node *)(v & ~(uintptr_t)RX_TAG);
			}
			t = bt_root_ins(s, p, t, a, b, e);
			if (!t)
				return false;
			x->slot[c] = (uintptr_t)t | RX_TREE;
			if (++x->cnt[c] > RX_BURST && d + 1 < s->key_size) {
				struct rx_node *y = rx_alloc(p, d + 1);

				if (!y || !rx_add_tree(s, p, y, t))
					return false;
				bt_drop_all(s, p, t);
				x->slot[c] = (uintptr_t)y;
				x->cnt[c] = 0;
			}
		} else if (!(v & RX_TAG)) {
			struct rx_node *y = rx_mut(s, p, (struct rx_node *)v);

			if (!y || !rx_add(s, p, y, a, b, e))
				return false;
			x->slot[c] = (uintptr_t)y;
		} else {
			return false;
		}
	}
	return true;
}

/* remove what rx_add(lo, hi, e) put under mutable x */
static bool rx_del(struct nftdp_set *s, struct ival_priv *p, struct rx_node *x, u128 lo, u128 hi,
		   const struct set_elem *e)
{
	unsigned d = x->depth, shift = 120 - 8 * d;
	u128 low = rx_low(s, d);
	u128 base = lo & ~(low | ((u128)0xff << shift));

	for (unsigned c = rx_byte(lo, d); c <= rx_byte(hi, d); c++) {
		u128 slo = base | (u128)c << shift, shi = slo | low;
		u128 a = lo > slo ? lo : slo, b = hi < shi ? hi : shi;
		uintptr_t v = x->slot[c];

		if (v == ((uintptr_t)e | RX_FULL) || v == ((uintptr_t)e | RX_ONE)) {
			x->slot[c] = 0;
			x->cnt[c] = 0;
			x->used--;
		} else if ((v & RX_TAG) == RX_TREE) {
			bool found = false;
			struct bt_node *t = bt_root_del(
			    s, p, (struct bt_node *)(v & ~(uintptr_t)RX_TAG), a, e, &found);

			if (p->tree_fail)
				return false;
			if (!found)
				continue;
			x->cnt[c]--;
			x->slot[c] = t ? (uintptr_t)t | RX_TREE : 0;
			x->used -= !t;
		} else if (v && !(v & RX_TAG)) {
			struct rx_node *y = rx_mut(s, p, (struct rx_node *)v);

			if (!y || !rx_del(s, p, y, a, b, e))
				return false;
			if (y->used) {
				x->slot[c] = (uintptr_t)y;
			} else {
				rx_drop(s, p, y);
				x->slot[c] = 0;
				x->used--;
			}
		}
	}
	return true;
}

static void rx_add_elem(struct nftdp_set *s, struct ival_priv *p, struct set_elem *e)
{
	u128 k = bt_key(set_elem_key(e), s->key_size);
	u128 end = bt_key(set_elem_key_end(s, e), s->key_size);
	struct rx_node *r = p->wroot ? rx_mut(s, p, p->wroot) : rx_alloc(p, 0);

	if (!r)
		return;
	p->wroot = r;
	if (((uintptr_t)e & RX_TAG) || !rx_add(s, p, r, k, end, e)) {
		p->tree_fail = true;
		return;
	}
	e->flags |= SET_ELEM_F_INDEXED;
}

static void rx_del_elem(struct nftdp_set *s, struct ival_priv *p, struct set_elem *e)
{
	u128 k = bt_key(set_elem_key(e), s->key_size);
	u128 end = bt_key(set_elem_key_end(s, e), s->key_size);
	struct rx_node *r;

	if (!p->wroot)
		return;
	r = rx_mut(s, p, p->wroot);
	if (!r)
		return;
	p->wroot = r;
	if (!rx_del(s, p, r, k, end, e)) {
		p->tree_fail = true;
		return;
	}
	e->flags &= ~SET_ELEM_F_INDEXED;
}

/* end of a batch: publish the writer's root, or fall back to the skip list.
 * root shows the set in generation gen and later: a reader of an older
 * generation (its VM generation not yet replaced) searches the skip list. */
static void bt_publish(struct ival_priv *p, uint64_t gen)
{
	if (p->tree_fail) {
		/* readers go back to the skip list; the half-built index is
		 * never published; what was not retired leaks, rather than
		 * risk freeing a node twice */
		st_rel(&p->tree_ok, false);
		p->wroot = NULL;
		return;
	}
	st_rel(&p->root_gen, gen);
	st_rel(&p->root, p->wroot);
	p->bgen++;
}

static void ival_commit(struct nftdp_set *s)
{
	struct ival_priv *p = s->priv;
	uint64_t gen = set_gen_next(s);
	struct set_elem *e;

	if (!p->tree_ok)
		return;
	/* removals first: a range may be replaced by one with the same start;
	 * a catch-all on the pending list is set.c's, never indexed */
	for (e = s->txn_head; e && !p->tree_fail; e = e->txn_next)
		if ((e->flags & SET_ELEM_F_INDEXED) && !set_elem_active(e, gen))
			rx_del_elem(s, p, e);
	for (e = s->txn_head; e && !p->tree_fail; e = e->txn_next)
		if (!(e->flags & (SET_ELEM_F_INDEXED | NFT_SET_ELEM_CATCHALL)) &&
		    set_elem_active(e, gen))
			rx_add_elem(s, p, e);
	bt_publish(p, gen);
}

static bool ival_estimate(const struct nftdp_set_desc *d, struct set_estimate *est)
{
	if (!(d->flags & NFT_SET_INTERVAL) || d->n_fields > 1)
		return false;
	est->lookup = 1;
	est->size = (uint64_t)(d->max_elems ? d->max_elems : 1024) * (sizeof(struct set_elem) + 48);
	return true;
}

static size_t ival_elem_size(const struct nftdp_set *s, uint32_t *slot)
{
	struct ival_priv *p = s->priv;
	uint32_t h = 1;
	uint64_t r;

	/* xorshift64; height with p = 1/4 */
	r = p->rnd;
	r ^= r << 13;
	r ^= r >> 7;
	r ^= r << 17;
	p->rnd = r;
	while (h < SL_MAX && (r & 3) == 0) {
		h++;
		r >>= 2;
	}
	*slot = h;
	return h * sizeof(struct set_elem *);
}

static int ival_init(struct nftdp_set *s)
{
	struct ival_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->rnd = 0x9E3779B97F4A7C15ull;
	p->level = 1;
	p->tree_ok = s->key_size <= 16;
	s->priv = p;
	return 0;
}

static void ival_destroy(struct nftdp_set *s)
{
	struct ival_priv *p = s->priv;

	if (p->tree_ok)
		rx_free_all(p->wroot);
	free(p);
}

static inline struct set_elem *next_at(const struct nftdp_set *s, const struct ival_priv *p,
				       const struct set_elem *x, unsigned l)
{
	return ld_acq(x ? &nx(s, x)[l] : (struct set_elem **)&p->head[l]);
}

/* Last node ordered before (key, bseq); preds[] gets the last one per level. */
static struct set_elem *find_lt(const struct nftdp_set *s, const uint8_t *key, uint64_t bseq,
				struct set_elem **preds)
{
	const struct ival_priv *p = s->priv;
	struct set_elem *x = NULL;
	uint32_t ks = s->key_size;

	for (int l = SL_MAX - 1; l >= 0; l--) {
		struct set_elem *n;

		while ((n = next_at(s, p, x, (unsigned)l))) {
			int c = memcmp(set_elem_key(n), key, ks);

			if (c < 0 || (c == 0 && n->seq < bseq))
				x = n;
			else
				break;
		}
		if (preds)
			preds[l] = x;
	}
	return x;
}

/* The last node with start <= key active in gen (the only candidate). */
static struct set_elem *find_active_le(const struct nftdp_set *s, const uint8_t *key, uint64_t gen)
{
	struct set_elem *x = find_lt(s, key, UINT64_MAX, NULL);

	while (x && !set_elem_active(x, gen))
		x = find_lt(s, set_elem_key(x), x->seq, NULL);
	return x;
}

static int ival_insert(struct nftdp_set *s, struct set_elem *e, struct set_elem **dup)
{
	struct ival_priv *p = s->priv;
	const uint8_t *lo = set_elem_key(e), *hi = set_elem_key_end(s, e);
	uint64_t gen = set_gen_next(s), now = nftdp_set_now();
	struct set_elem *preds[SL_MAX], *x, *n;
	uint32_t ks = s->key_size, h = e->slot;

	for (;;) {
		x = find_active_le(s, lo, gen);
		if (!x || memcmp(lo, set_elem_key_end(s, x), ks) > 0)
			break;
		if (set_elem_expired(x, now)) {
			nftdp_set_elem_gc_conflict(s, x);
			continue;
		}
		if (!memcmp(lo, set_elem_key(x), ks) && !memcmp(hi, set_elem_key_end(s, x), ks)) {
			*dup = x;
			return -EEXIST;
		}
		return -ENOTEMPTY;
	}
	/* a later range that starts inside the new one */
	for (n = next_at(s, p, x, 0); n && memcmp(set_elem_key(n), hi, ks) <= 0;
	     n = next_at(s, p, n, 0)) {
		if (!set_elem_active(n, gen))
			continue;
		if (set_elem_expired(n, now)) {
			nftdp_set_elem_gc_conflict(s, n);
			continue;
		}
		return -ENOTEMPTY;
	}

	find_lt(s, lo, e->seq, preds);
	for (uint32_t l = 0; l < h; l++)
		nx(s, e)[l] = next_at(s, p, preds[l], l);
	/* bottom-up: once level 0 is linked, readers can find it */
	for (uint32_t l = 0; l < h; l++)
		st_rel(preds[l] ? &nx(s, preds[l])[l] : &p->head[l], e);
	if (h > p->level)
		p->level = h;
	return 0;
}

static struct set_elem *ival_get(const struct nftdp_set *s, const void *key, const void *key_end,
				 uint64_t gen)
{
	struct set_elem *x = find_active_le(s, key, gen);
	uint32_t ks = s->key_size;

	if (!x || memcmp(set_elem_key(x), key, ks) ||
	    memcmp(set_elem_key_end(s, x), key_end ? key_end : key, ks) ||
	    set_elem_expired(x, nftdp_set_now()))
		return NULL;
	return x;
}

static void ival_unlink(struct nftdp_set *s, struct set_elem *e)
{
	struct ival_priv *p = s->priv;
	struct set_elem *preds[SL_MAX];

	find_lt(s, set_elem_key(e), e->seq, preds);
	for (int l = (int)e->slot - 1; l >= 0; l--) {
		struct set_elem **link = preds[l] ? &nx(s, preds[l])[l] : &p->head[l];

		if (*link == e)
			st_rel(link, nx(s, e)[l]);
	} /* gc of an expired element still in the read index */
	if (p->tree_ok && (e->flags & SET_ELEM_F_INDEXED)) {
		rx_del_elem(s, p, e);
		/* gc: only expired elements leave, no reader's view changes */
		bt_publish(p, p->root_gen);
	}
}

static int ival_walk(const struct nftdp_set *s, int (*fn)(struct set_elem *e, void *arg), void *arg)
{
	const struct ival_priv *p = s->priv;
	struct set_elem *x, *n;

	for (x = next_at(s, p, NULL, 0); x; x = n) {
		int ret;

		n = next_at(s, p, x, 0);
		ret = fn(x, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The read index: every key of the bulk takes one step per pass (a radix
 * slot, or one tree level) and prefetches what its next step reads, so the
 * cache misses of one key overlap with the work on the others. Sets
 * without timeouts never read the element: a hit needs only the index
 * (data is a pointer into the element).
 */
static unsigned rx_lookup_bulk(const struct nftdp_set *s, const struct rx_node *root,
			       const void *const keys[], unsigned n, const void *data[],
			       uint64_t now, uint64_t *hit_mask)
{
	uintptr_t cur[NFTDP_SET_BULK_MAX];
	struct set_elem *el[NFTDP_SET_BULK_MAX];
	u128 k[NFTDP_SET_BULK_MAX];
	uint8_t dep[NFTDP_SET_BULK_MAX], slot[NFTDP_SET_BULK_MAX];
	uint32_t ks = s->key_size;
	bool wide = ks > 8, timeouts = s->desc.flags & NFT_SET_TIMEOUT, more;
	/* a set (no data) without timeouts needs no element: any non-NULL marks a hit */
	bool need_elem = timeouts || s->data_size;
	unsigned hits = 0;
	uint64_t mask = 0;

	if (!root) {
		*hit_mask = 0;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		k[i] = bt_key(keys[i], ks);
		cur[i] = (uintptr_t)root;
		dep[i] = 0;
	}
	do {
		more = false;
		for (unsigned i = 0; i < n; i++) {
			uintptr_t v = cur[i];
			const struct bt_node *t;
			unsigned r;

			if (!v)
				continue;
			switch (v & RX_TAG) {
			case 0: /* radix node: its slot for our byte */
				v = ((const struct rx_node *)v)->slot[rx_byte(k[i], dep[i])];
				dep[i]++;
				if (!(v & RX_TAG) && v)
					__builtin_prefetch(&((const struct rx_node *)v)
								->slot[rx_byte(k[i], dep[i])]);
				else if ((v & RX_TAG) == RX_TREE)
					bt_prefetch(
					    (const struct bt_node *)(v & ~(uintptr_t)RX_TAG),
					    false);
				else if ((v & RX_TAG) == RX_ONE)
					__builtin_prefetch(set_elem_key(
					    (const struct set_elem *)(v & ~(uintptr_t)RX_TAG)));
				cur[i] = v;
				more = true;
				break;
			case RX_TREE:
				t = (const struct bt_node *)(v & ~(uintptr_t)RX_TAG);
				r = bt_rank(t, k[i], wide);
				if (!r) {
					cur[i] = 0;
				} else if (t->level) {
					bool leaf = t->level == 1;

					t = t->child[r - 1];
					bt_prefetch(t, leaf);
					cur[i] = (uintptr_t)t | RX_TREE;
					more = true;
				} else {
					slot[i] = (uint8_t)(r - 1);
					__builtin_prefetch(&t->end[r - 1]);
					if (need_elem)
						__builtin_prefetch(&t->elem[r - 1]);
					cur[i] = (uintptr_t)t | RX_LEAF;
				}
				break;
			default: /* RX_FULL, RX_ONE, RX_LEAF: resolved */
				break;
			}
		}
	} while (more);
	for (unsigned i = 0; i < n; i++) {
		uintptr_t v = cur[i];
		const struct bt_node *t = (const struct bt_node *)(v & ~(uintptr_t)RX_TAG);

		el[i] = NULL;
		if ((v & RX_TAG) == RX_FULL) {
			el[i] = (struct set_elem *)t;
		} else if ((v & RX_TAG) == RX_ONE) {
			struct set_elem *o = (struct set_elem *)t;

			if (k[i] >= bt_key(set_elem_key(o), ks) &&
			    k[i] <= bt_key(set_elem_key_end(s, o), ks))
				el[i] = o;
		} else if ((v & RX_TAG) == RX_LEAF && k[i] <= t->end[slot[i]])
			el[i] = need_elem ? t->elem[slot[i]] : (struct set_elem *)t;
		if (el[i] && timeouts)
			__builtin_prefetch(&el[i]->expires);
	}
	for (unsigned i = 0; i < n; i++) {
		struct set_elem *x = el[i];

		if (x && timeouts && set_elem_expired(x, now))
			x = NULL;
		set_bulk_hit(s, i, x, data, &mask, &hits);
	}
	*hit_mask = mask;
	return hits;
}

/*
 * One key of the packet path (the VM's lookup expression): the walk of
 * rx_lookup_bulk for a single key, without its arrays and prefetches.
 * A set (no data) without timeouts answers with the leaf itself: any
 * non-NULL is a hit and set.c reads no data from it.
 */
static const struct set_elem *rx_lookup_one(const struct nftdp_set *s, const struct rx_node *root,
					    const void *key, uint64_t now)
{
	uint32_t ks = s->key_size;
	bool wide = ks > 8, timeouts = s->desc.flags & NFT_SET_TIMEOUT;
	bool need_elem = timeouts || s->data_size;
	u128 k = bt_key(key, ks);
	uintptr_t v = (uintptr_t)root;
	const struct bt_node *t;
	struct set_elem *x = NULL;
	unsigned dep = 0, r;

	while (v && !(v & RX_TAG)) /* radix nodes: the slot for our byte */
		v = ((const struct rx_node *)v)->slot[rx_byte(k, dep++)];
	if (!v)
		return NULL;
	t = (const struct bt_node *)(v & ~(uintptr_t)RX_TAG);
	switch (v & RX_TAG) {
	case RX_FULL:
		x = (struct set_elem *)t;
		break;
	case RX_ONE:
		if (k >= bt_key(set_elem_key((const struct set_elem *)t), ks) &&
		    k <= bt_key(set_elem_key_end(s, (const struct set_elem *)t), ks))
			x = (struct set_elem *)t;
		break;
	case RX_TREE:
		for (;;) {
			r = bt_rank(t, k, wide);
			if (!r)
				return NULL;
			if (!t->level)
				break;
			t = t->child[r - 1];
		}
		if (k <= t->end[r - 1])
			x = need_elem ? t->elem[r - 1] : (struct set_elem *)t;
		break;
	default:
		break;
	}
	if (x && timeouts && set_elem_expired(x, now))
		x = NULL;
	return x;
}

static const struct set_elem *ival_lookup(const struct nftdp_set *s, const void *key, uint64_t now,
					  uint64_t gen)
{
	const struct ival_priv *p = s->priv;
	struct set_elem *x;

	if (ld_acq(&p->tree_ok)) {
		/* root before root_gen, as in the bulk */
		const struct rx_node *root = ld_acq(&p->root);

		if (ld_acq(&p->root_gen) <= gen)
			return root ? rx_lookup_one(s, root, key, now) : NULL;
	}
	x = find_active_le(s, key, gen);
	if (x && (memcmp(key, set_elem_key_end(s, x), s->key_size) > 0 || set_elem_expired(x, now)))
		x = NULL;
	return x;
}

static unsigned ival_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
				 const void *data[], uint64_t now, uint64_t gen, uint64_t *hit_mask)
{
	const struct ival_priv *p = s->priv;
	uint64_t mask = 0;
	unsigned hits = 0;

	if (ld_acq(&p->tree_ok)) {
		/* root before root_gen: a root newer than gen is never used */
		const struct rx_node *root = ld_acq(&p->root);

		if (ld_acq(&p->root_gen) <= gen)
			return rx_lookup_bulk(s, root, keys, n, data, now, hit_mask);
	}
	for (unsigned i = 0; i < n; i++) {
		struct set_elem *x = find_active_le(s, keys[i], gen);

		if (x && (memcmp(keys[i], set_elem_key_end(s, x), s->key_size) > 0 ||
			  set_elem_expired(x, now)))
			x = NULL;
		set_bulk_hit(s, i, x, data, &mask, &hits);
	}
	*hit_mask = mask;
	return hits;
}

static bool ival_contains(const struct nftdp_set *s, const void *key, uint64_t now, uint64_t gen)
{
	return set_contains_or_catchall(s, ival_lookup(s, key, now, gen), gen, now);
}

const struct nftdp_set_ops nftdp_set_interval_ops = {
    .name = "interval",
    .features = NFT_SET_INTERVAL | NFT_SET_MAP | NFT_SET_OBJECT | NFT_SET_TIMEOUT,
    .estimate = ival_estimate,
    .elem_backend_size = ival_elem_size,
    .init = ival_init,
    .destroy = ival_destroy,
    .insert = ival_insert,
    .get = ival_get,
    .unlink = ival_unlink,
    .commit = ival_commit,
    .walk = ival_walk,
    .lookup = ival_lookup,
    .contains = ival_contains,
    .lookup_bulk = ival_lookup_bulk,
};
