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
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/netfilter/nf_tables.h>

#include "sets_priv.h"

#define SL_MAX 16 /* p = 1/4: enough for 4^16 elements */

struct ival_priv {
	struct set_elem *head[SL_MAX];
	uint64_t rnd;
	uint32_t level; /* highest level in use */
};

static inline struct set_elem **nx(const struct nftdp_set *s, const struct set_elem *e)
{
	return (struct set_elem **)set_elem_backend(s, e);
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
	s->priv = p;
	return 0;
}

static void ival_destroy(struct nftdp_set *s)
{
	free(s->priv);
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

static unsigned ival_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
				 const void *data[], uint64_t now, uint64_t *hit_mask)
{
	uint64_t gen = set_gen_cur(s), mask = 0;
	unsigned hits = 0;

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
	.walk = ival_walk,
	.lookup_bulk = ival_lookup_bulk,
};
