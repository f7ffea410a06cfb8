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
 * Readers use a read index instead: a B+-tree over the ranges active in the
 * committed generation (start, end, element per leaf slot; keys of up to 16
 * bytes as 128-bit integers), built copy-on-write at commit: the nodes on
 * the path of each added or removed range are copied once per commit (nodes
 * created in the same commit are changed in place), the new root is
 * published with a release store before the set's generation, and the
 * replaced nodes are freed after the grace period (nftdp_set_defer_free).
 * Lookups walk all keys of a bulk one tree level at a time and prefetch the
 * next level. Keys longer than 16 bytes, or a failed allocation while
 * building the index, leave readers on the skip list.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include <linux/netfilter/nf_tables.h>

#include "sets_priv.h"

#define SL_MAX 16 /* p = 1/4: enough for 4^16 elements */

typedef unsigned __int128 u128;

#define BT_B 16 /* slots per node */

/* One node of the read index. level 0 is a leaf; all leaves are at the
 * same depth. key[i] is the start of slot i (inner: the smallest start
 * under child[i]); keys ascend. A search reads the first five lines only:
 * the header, k64 (the top 64 bits of each key, UINT64_MAX past n, exact
 * for keys of up to 8 bytes) and the pointers; key[] is read only when a
 * longer key ties on its top 64 bits, end[] once per leaf. */
struct bt_node {
	uint16_t n;
	uint16_t level;
	uint32_t pad;
	uint64_t bgen; /* build batch that made it: changed in place while current */
	uint64_t k64[BT_B];
	union {
		struct bt_node *child[BT_B];
		struct set_elem *elem[BT_B];
	};
	u128 key[BT_B] __attribute__((aligned(64)));
	u128 end[BT_B]; /* leaves */
} __attribute__((aligned(64)));

#define BT_SEARCH_BYTES offsetof(struct bt_node, key)

struct ival_priv {
	struct set_elem *head[SL_MAX];
	uint64_t rnd;
	uint32_t level; /* highest level in use */
	bool tree_ok;	/* readers use root (atomic) */
	bool tree_fail; /* an allocation failed in this batch */
	struct bt_node *root; /* published (release) */
	struct bt_node *wroot; /* writer's root, published at the end of a batch */
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

static inline void bt_prefetch(const struct bt_node *x)
{
	const char *c = (const char *)x;

	for (unsigned o = 0; o < BT_SEARCH_BYTES; o += 64)
		__builtin_prefetch(c + o);
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
			bt_slot_move(r, 0, x, BT_B / 2, BT_B / 2);
			r->n = BT_B / 2;
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

static void bt_add_elem(struct nftdp_set *s, struct ival_priv *p, struct set_elem *e)
{
	u128 k = bt_key(set_elem_key(e), s->key_size);
	u128 end = bt_key(set_elem_key_end(s, e), s->key_size);
	struct bt_node *r, *sp;

	if (!p->wroot) {
		p->wroot = bt_alloc(p, 0);
		if (!p->wroot)
			return;
	}
	r = bt_ins(s, p, p->wroot, k, end, e, &sp);
	if (!r)
		return;
	if (sp) {
		struct bt_node *nr = bt_alloc(p, r->level + 1u);

		if (!nr)
			return;
		nr->n = 2;
		bt_key_set(nr, 0, r->key[0]);
		nr->child[0] = r;
		bt_key_set(nr, 1, sp->key[0]);
		nr->child[1] = sp;
		r = nr;
	}
	p->wroot = r;
	e->flags |= SET_ELEM_F_INDEXED;
}

static void bt_del_elem(struct nftdp_set *s, struct ival_priv *p, struct set_elem *e)
{
	u128 k = bt_key(set_elem_key(e), s->key_size);
	bool found = false;
	struct bt_node *r;

	if (!p->wroot)
		return;
	r = bt_del(s, p, p->wroot, k, e, &found);
	if (p->tree_fail)
		return;
	e->flags &= ~SET_ELEM_F_INDEXED;
	while (r && r->level && r->n == 1) {
		struct bt_node *c = r->child[0];

		bt_drop(s, p, r);
		r = c;
	}
	p->wroot = r;
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

/* end of a batch: publish the writer's root, or fall back to the skip list */
static void bt_publish(struct ival_priv *p)
{
	if (p->tree_fail) {
		/* readers go back to the skip list; the half-built index is
		 * never published; what was not retired leaks, rather than
		 * risk freeing a node twice */
		st_rel(&p->tree_ok, false);
		p->wroot = NULL;
		return;
	}
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
	/* removals first: a range may be replaced by one with the same start */
	for (e = s->txn_head; e && !p->tree_fail; e = e->txn_next)
		if ((e->flags & SET_ELEM_F_INDEXED) && !set_elem_active(e, gen))
			bt_del_elem(s, p, e);
	for (e = s->txn_head; e && !p->tree_fail; e = e->txn_next)
		if (!(e->flags & SET_ELEM_F_INDEXED) && set_elem_active(e, gen))
			bt_add_elem(s, p, e);
	bt_publish(p);
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
		bt_free_all(p->wroot);
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
static struct set_elem *find_active_le(const struct nftdp_set *s, const uint8_t *key,
				       uint64_t gen)
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
	}	/* gc of an expired element still in the read index */
	if (p->tree_ok && (e->flags & SET_ELEM_F_INDEXED)) {
		bt_del_elem(s, p, e);
		bt_publish(p);
	}
}

static int ival_walk(const struct nftdp_set *s, int (*fn)(struct set_elem *e, void *arg),
		     void *arg)
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
 * The read index: all keys of the bulk one tree level at a time, each
 * prefetching its next node, so the cache misses of one key overlap with
 * the work on the others. Sets without timeouts never read the element: a
 * hit needs only the leaf (data is a pointer into the element).
 */
static unsigned bt_lookup_bulk(const struct nftdp_set *s, const struct bt_node *root,
			       const void *const keys[], unsigned n, const void *data[],
			       uint64_t now, uint64_t *hit_mask)
{
	const struct bt_node *cur[NFTDP_SET_BULK_MAX];
	struct set_elem *el[NFTDP_SET_BULK_MAX];
	u128 k[NFTDP_SET_BULK_MAX];
	unsigned hits = 0, slot[NFTDP_SET_BULK_MAX];
	uint32_t ks = s->key_size;
	bool wide = ks > 8, timeouts = s->desc.flags & NFT_SET_TIMEOUT;
	uint64_t mask = 0;

	if (!root) {
		*hit_mask = 0;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		k[i] = bt_key(keys[i], ks);
		cur[i] = root;
	}
	for (unsigned l = root->level; l > 0; l--) {
		for (unsigned i = 0; i < n; i++) {
			const struct bt_node *x = cur[i];
			unsigned r;

			if (!x)
				continue;
			r = bt_rank(x, k[i], wide);
			x = r ? x->child[r - 1] : NULL;
			cur[i] = x;
			if (x)
				bt_prefetch(x);
		}
	}
	/* leaves: the candidate slot, then its end (and the element's expiry) */
	for (unsigned i = 0; i < n; i++) {
		const struct bt_node *x = cur[i];
		unsigned r;

		if (!x)
			continue;
		r = bt_rank(x, k[i], wide);
		if (!r) {
			cur[i] = NULL;
			continue;
		}
		slot[i] = r - 1;
		__builtin_prefetch(&x->end[r - 1]);
	}
	for (unsigned i = 0; i < n; i++) {
		const struct bt_node *x = cur[i];

		el[i] = NULL;
		if (!x || k[i] > x->end[slot[i]])
			continue;
		el[i] = x->elem[slot[i]];
		if (timeouts)
			__builtin_prefetch(&el[i]->expires);
	}
	for (unsigned i = 0; i < n; i++) {
		struct set_elem *x = el[i];

		if (!x || (timeouts && set_elem_expired(x, now)))
			continue;
		mask |= 1ull << i;
		hits++;
		if (data)
			data[i] = s->data_size ? set_elem_data(s, x) : NULL;
	}
	*hit_mask = mask;
	return hits;
}

static unsigned ival_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
				 const void *data[], uint64_t now, uint64_t *hit_mask)
{
	const struct ival_priv *p = s->priv;
	uint64_t gen, mask = 0;
	unsigned hits = 0;

	if (ld_acq(&p->tree_ok))
		return bt_lookup_bulk(s, ld_acq(&p->root), keys, n, data, now, hit_mask);
	gen = set_gen_cur(s);
	for (unsigned i = 0; i < n; i++) {
		struct set_elem *x = find_active_le(s, keys[i], gen);

		if (x && memcmp(keys[i], set_elem_key_end(s, x), s->key_size) <= 0 &&
		    !set_elem_expired(x, now)) {
			mask |= 1ull << i;
			hits++;
			if (data)
				data[i] = s->data_size ? set_elem_data(s, x) : NULL;
		}
	}
	*hit_mask = mask;
	return hits;
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
	.lookup_bulk = ival_lookup_bulk,
};
