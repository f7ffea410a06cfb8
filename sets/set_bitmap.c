/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bitmap backend for keys of 1 or 2 bytes; the counterpart of
 * nft_set_bitmap.c. The kernel keeps two genmask bits per key; here each
 * of the 256 or 65536 keys owns one slot that points at its element (a
 * short chain only while a delete and a re-add of the same key wait for a
 * grace period), so maps work too. Lookups are one load and one check.
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/netfilter/nf_tables.h>

#include "sets_priv.h"

struct bitmap_priv {
	uint32_t nslots;
	struct set_elem *slot[];
};

static bool bitmap_estimate(const struct nftdp_set_desc *d, struct set_estimate *est)
{
	if (d->key_size > 2 || (d->flags & NFT_SET_INTERVAL))
		return false;
	est->lookup = 0;
	/* the kernel's bitmap is only picked over hash for tiny keys */
	est->size = (d->key_size == 1 ? 256 : 65536) * sizeof(void *) / 16;
	return true;
}

static int bitmap_init(struct nftdp_set *s)
{
	uint32_t n = s->key_size == 1 ? 256 : 65536;
	struct bitmap_priv *bp = calloc(1, sizeof(*bp) + n * sizeof(bp->slot[0]));

	if (!bp)
		return -ENOMEM;
	bp->nslots = n;
	s->priv = bp;
	return 0;
}

static void bitmap_destroy(struct nftdp_set *s)
{
	free(s->priv);
}

static inline uint32_t key_index(const struct nftdp_set *s, const void *key)
{
	const uint8_t *k = key;

	return s->key_size == 1 ? k[0] : (uint32_t)k[0] << 8 | k[1];
}

/* in line everywhere: an empty slot (a miss) costs a test, not a call */
static inline __attribute__((always_inline)) struct set_elem *slot_find(struct set_elem *x,
									uint64_t gen, uint64_t now)
{
	for (; x; x = ld_acq(&x->next[0]))
		if (set_elem_live(x, gen, now))
			return x;
	return NULL;
}

static int bitmap_insert(struct nftdp_set *s, struct set_elem *e, struct set_elem **dup)
{
	struct bitmap_priv *bp = s->priv;
	struct set_elem **slot = &bp->slot[key_index(s, set_elem_key(e))];
	struct set_elem *x = slot_find(*slot, set_gen_next(s), 0);

	if (x) {
		*dup = x;
		return -EEXIST;
	}
	e->next[0] = *slot;
	st_rel(slot, e);
	return 0;
}

static struct set_elem *bitmap_get(const struct nftdp_set *s, const void *key, const void *key_end,
				   uint64_t gen)
{
	const struct bitmap_priv *bp = s->priv;

	(void)key_end;
	return slot_find(bp->slot[key_index(s, key)], gen, 0);
}

static void bitmap_unlink(struct nftdp_set *s, struct set_elem *e)
{
	struct bitmap_priv *bp = s->priv;
	struct set_elem **p = &bp->slot[key_index(s, set_elem_key(e))];

	for (; *p; p = &(*p)->next[0])
		if (*p == e) {
			st_rel(p, e->next[0]);
			return;
		}
}

static int bitmap_walk(const struct nftdp_set *s, int (*fn)(struct set_elem *e, void *arg),
		       void *arg)
{
	const struct bitmap_priv *bp = s->priv;

	for (uint32_t i = 0; i < bp->nslots; i++) {
		struct set_elem *x, *n;

		for (x = bp->slot[i]; x; x = n) {
			int ret;

			n = x->next[0];
			ret = fn(x, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static const struct set_elem *bitmap_lookup(const struct nftdp_set *s, const void *key,
					    uint64_t now, uint64_t gen)
{
	const struct bitmap_priv *bp = s->priv;

	return slot_find(ld_acq(&bp->slot[key_index(s, key)]), gen, now);
}

static unsigned bitmap_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
				   const void *data[], uint64_t now, uint64_t gen,
				   uint64_t *hit_mask)
{
	const struct bitmap_priv *bp = s->priv;
	uint64_t mask = 0;
	unsigned hits = 0;

	for (unsigned i = 0; i < n; i++) {
		struct set_elem *x = slot_find(ld_acq(&bp->slot[key_index(s, keys[i])]), gen, now);

		set_bulk_hit(s, i, x, data, &mask, &hits);
	}
	*hit_mask = mask;
	return hits;
}

/* the VM's plain-set lookup: the slot's load in line, a miss with no
 * catch-all a leaf (no call) */
static bool bitmap_contains(const struct nftdp_set *s, const void *key, uint64_t now, uint64_t gen)
{
	const struct bitmap_priv *bp = s->priv;

	return set_contains_or_catchall(
	    s, slot_find(ld_acq(&bp->slot[key_index(s, key)]), gen, now), gen, now);
}

const struct nftdp_set_ops nftdp_set_bitmap_ops = {
    .name = "bitmap",
    .features = NFT_SET_MAP | NFT_SET_OBJECT,
    .estimate = bitmap_estimate,
    .init = bitmap_init,
    .destroy = bitmap_destroy,
    .insert = bitmap_insert,
    .get = bitmap_get,
    .unlink = bitmap_unlink,
    .walk = bitmap_walk,
    .lookup = bitmap_lookup,
    .contains = bitmap_contains,
    .lookup_bulk = bitmap_lookup_bulk,
};
