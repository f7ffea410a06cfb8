/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Concatenated ranges (e.g. ip saddr . tcp dport { 10.0.0.0/8 . 1-1024 });
 * the counterpart of nft_set_pipapo.c, with its insert semantics: a new
 * element whose start point lies in an existing one is -EEXIST if both are
 * identical, else -ENOTEMPTY; one whose end point lies in an existing one
 * is -ENOTEMPTY.
 *
 * Theory of operation. As in pipapo, every field is cut into 4-bit groups
 * and each (group, nibble value) owns a bitmap over element slots: bit i
 * is set when element i may hold that nibble at that group. A lookup ANDs
 * one bitmap per group and verifies the surviving candidates exactly
 * against their ranges. Unlike pipapo we do not expand ranges into
 * netmask rules: a group's nibble set is the exact nibble range while the
 * field's start and end agree on all earlier groups and "any" after, an
 * over-approximation that the verification step corrects. Slots come in
 * blocks of 256 (4 words per bitmap row), so a block whose AND becomes
 * empty is skipped after a group or two, adding elements never copies the
 * bitmaps (only the small block directory is replaced when a block is
 * added), and an element is inserted or removed by setting or clearing its
 * bits in place. Readers tolerate bits of pending elements (the generation
 * check rejects them); an element's bits are cleared only after it is
 * invisible to every reader.
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/netfilter/nf_tables.h>

#include "sets_priv.h"

#define CB_SLOTS 256
#define CB_WORDS (CB_SLOTS / 64)
#define CG_MAX (NFTDP_SET_KEY_MAX * 2)

struct cblock {
	struct set_elem *elem[CB_SLOTS];
	uint64_t lt[]; /* [ngroups][16][CB_WORDS] */
};

struct cdir {
	uint32_t nblocks;
	struct cblock *b[];
};

struct concat_priv {
	struct cdir *dir;
	uint32_t ngroups;
	uint8_t gbyte[CG_MAX];	/* key byte of group g */
	uint8_t gshift[CG_MAX]; /* 4 for the high nibble, 0 for the low one */
	uint8_t gfield[CG_MAX];
	uint8_t gfirst[CG_MAX]; /* first group of g's field */
	uint32_t *free_slots;
	uint32_t nfree, free_cap;
	uint32_t next_slot;
};

static bool concat_estimate(const struct nftdp_set_desc *d, struct set_estimate *est)
{
	if (!(d->flags & NFT_SET_INTERVAL) || d->n_fields < 2)
		return false;
	est->lookup = 2;
	est->size = (uint64_t)(d->max_elems ? d->max_elems : 1024) * (d->key_size * 32 + 64);
	return true;
}

static int concat_init(struct nftdp_set *s)
{
	struct concat_priv *p = calloc(1, sizeof(*p));
	uint32_t g = 0;

	if (!p)
		return -ENOMEM;
	for (unsigned f = 0; f < s->n_fields; f++) {
		uint32_t first = g;

		for (unsigned j = 0; j < s->field_size[f] * 2u; j++, g++) {
			p->gbyte[g] = (uint8_t)(s->field_off[f] + j / 2);
			p->gshift[g] = (j & 1) ? 0 : 4;
			p->gfield[g] = (uint8_t)f;
			p->gfirst[g] = (uint8_t)first;
		}
	}
	p->ngroups = g;
	p->dir = calloc(1, sizeof(*p->dir));
	if (!p->dir) {
		free(p);
		return -ENOMEM;
	}
	s->priv = p;
	return 0;
}

static void concat_destroy(struct nftdp_set *s)
{
	struct concat_priv *p = s->priv;

	for (uint32_t i = 0; i < p->dir->nblocks; i++)
		free(p->dir->b[i]);
	free(p->dir);
	free(p->free_slots);
	free(p);
}

static inline uint64_t *row(const struct concat_priv *p, struct cblock *b, uint32_t g, uint32_t nib)
{
	(void)p;
	return &b->lt[(g * 16 + nib) * CB_WORDS];
}

static inline uint32_t nibble(const struct concat_priv *p, const uint8_t *key, uint32_t g)
{
	return (key[p->gbyte[g]] >> p->gshift[g]) & 0xf;
}

static bool contains(const struct nftdp_set *s, const struct set_elem *e, const uint8_t *key)
{
	const uint8_t *lo = set_elem_key(e), *hi = set_elem_key_end(s, e);

	for (unsigned f = 0; f < s->n_fields; f++) {
		unsigned o = s->field_off[f], n = s->field_size[f];

		if (memcmp(lo + o, key + o, n) > 0 || memcmp(key + o, hi + o, n) > 0)
			return false;
	}
	return true;
}

/*
 * Visit elements active in gen that contain key, lowest slot first, until
 * fn returns true; returns that element. check_exp: skip expired ones.
 */
static struct set_elem *scan(const struct nftdp_set *s, const uint8_t *key, uint64_t gen,
			     uint64_t now, bool check_exp,
			     bool (*fn)(const struct nftdp_set *, struct set_elem *, const void *),
			     const void *arg)
{
	const struct concat_priv *p = s->priv;
	const struct cdir *d = ld_acq(&p->dir);
	uint32_t nib[CG_MAX], ng = p->ngroups;

	for (uint32_t g = 0; g < ng; g++)
		nib[g] = nibble(p, key, g);
	for (uint32_t bi = 0; bi < d->nblocks; bi++) {
		struct cblock *b = d->b[bi];
		uint64_t acc[CB_WORDS];
		uint64_t any = 0;

		for (unsigned w = 0; w < CB_WORDS; w++)
			acc[w] = ~0ull;
		for (uint32_t g = 0; g < ng; g++) {
			const uint64_t *r = row(p, b, g, nib[g]);

			any = 0;
			for (unsigned w = 0; w < CB_WORDS; w++) {
				acc[w] &= ld_rlx(&r[w]);
				any |= acc[w];
			}
			if (!any)
				break;
		}
		if (!any)
			continue;
		for (unsigned w = 0; w < CB_WORDS; w++)
			while (acc[w]) {
				unsigned bit = (unsigned)__builtin_ctzll(acc[w]);
				struct set_elem *e = ld_acq(&b->elem[w * 64 + bit]);

				acc[w] &= acc[w] - 1;
				if (!e || !set_elem_active(e, gen) || !contains(s, e, key))
					continue;
				if (check_exp && set_elem_expired(e, now))
					continue;
				if (!fn || fn(s, e, arg))
					return e;
			}
	}
	return NULL;
}

static void set_bits(struct nftdp_set *s, struct set_elem *e, bool on)
{
	struct concat_priv *p = s->priv;
	struct cblock *b = p->dir->b[e->slot / CB_SLOTS];
	uint32_t bit = e->slot % CB_SLOTS;
	uint64_t m = 1ull << (bit % 64);
	const uint8_t *lo = set_elem_key(e), *hi = set_elem_key_end(s, e);
	bool same = true; /* start and end agree on the field's earlier groups */

	for (uint32_t g = 0; g < p->ngroups; g++) {
		uint32_t a = nibble(p, lo, g), z = nibble(p, hi, g);

		if (p->gfirst[g] == g)
			same = true;
		if (!same) {
			a = 0;
			z = 15;
		}
		for (uint32_t v = on ? a : 0; v <= (on ? z : 15); v++) {
			uint64_t *w = &row(p, b, g, v)[bit / 64];

			st_rlx(w, on ? (*w | m) : (*w & ~m));
		}
		if (nibble(p, lo, g) != nibble(p, hi, g))
			same = false;
	}
}

static int slot_alloc(struct nftdp_set *s, uint32_t *slot)
{
	struct concat_priv *p = s->priv;
	struct cdir *od = p->dir, *nd;
	struct cblock *b;

	if (p->nfree) {
		*slot = p->free_slots[--p->nfree];
		return 0;
	}
	if (p->next_slot < od->nblocks * CB_SLOTS) {
		*slot = p->next_slot++;
		return 0;
	}
	b = calloc(1, sizeof(*b) + (size_t)p->ngroups * 16 * CB_WORDS * sizeof(uint64_t));
	nd = malloc(sizeof(*nd) + (od->nblocks + 1) * sizeof(nd->b[0]));
	if (!b || !nd || nftdp_set_defer_free(s, od)) {
		free(b);
		free(nd);
		return -ENOMEM;
	}
	memcpy(nd->b, od->b, od->nblocks * sizeof(nd->b[0]));
	nd->b[od->nblocks] = b;
	nd->nblocks = od->nblocks + 1;
	st_rel(&p->dir, nd);
	*slot = p->next_slot++;
	return 0;
}

static void slot_free(struct nftdp_set *s, uint32_t slot)
{
	struct concat_priv *p = s->priv;

	if (p->nfree == p->free_cap) {
		uint32_t cap = p->free_cap ? p->free_cap * 2 : 64;
		uint32_t *v = realloc(p->free_slots, cap * sizeof(*v));

		if (!v)
			return; /* slot leaks, harmless */
		p->free_slots = v;
		p->free_cap = cap;
	}
	p->free_slots[p->nfree++] = slot;
}

static int concat_insert(struct nftdp_set *s, struct set_elem *e, struct set_elem **dup)
{
	struct concat_priv *p = s->priv;
	const uint8_t *lo = set_elem_key(e), *hi = set_elem_key_end(s, e);
	uint64_t gen = set_gen_next(s), now = nftdp_set_now();
	struct set_elem *x;
	int err;

	/* pipapo_get(start), then pipapo_get(end); expired ones are gc'ed */
	while ((x = scan(s, lo, gen, now, false, NULL, NULL))) {
		if (set_elem_expired(x, now)) {
			nftdp_set_elem_gc_conflict(s, x);
			continue;
		}
		if (!memcmp(lo, set_elem_key(x), s->key_size) &&
		    !memcmp(hi, set_elem_key_end(s, x), s->key_size)) {
			*dup = x;
			return -EEXIST;
		}
		return -ENOTEMPTY;
	}
	while ((x = scan(s, hi, gen, now, false, NULL, NULL))) {
		if (set_elem_expired(x, now)) {
			nftdp_set_elem_gc_conflict(s, x);
			continue;
		}
		return -ENOTEMPTY;
	}
	err = slot_alloc(s, &e->slot);
	if (err)
		return err;
	st_rel(&p->dir->b[e->slot / CB_SLOTS]->elem[e->slot % CB_SLOTS], e);
	set_bits(s, e, true);
	return 0;
}

static bool same_end(const struct nftdp_set *s, struct set_elem *e, const void *arg)
{
	const uint8_t *key = arg;

	return !memcmp(set_elem_key(e), key, s->key_size) &&
	       !memcmp(set_elem_key_end(s, e), key + NFTDP_SET_KEY_MAX, s->key_size);
}

static struct set_elem *concat_get(const struct nftdp_set *s, const void *key, const void *key_end,
				   uint64_t gen)
{
	uint8_t both[2 * NFTDP_SET_KEY_MAX];

	memcpy(both, key, s->key_size);
	memcpy(both + NFTDP_SET_KEY_MAX, key_end ? key_end : key, s->key_size);
	return scan(s, key, gen, nftdp_set_now(), true, same_end, both);
}

static void concat_unlink(struct nftdp_set *s, struct set_elem *e)
{
	struct concat_priv *p = s->priv;

	/* clear every bit of the slot, then the pointer: e is invisible to all
	 * readers, and a reader that still finds the slot reloads the pointer */
	set_bits(s, e, false);
	st_rel(&p->dir->b[e->slot / CB_SLOTS]->elem[e->slot % CB_SLOTS], NULL);
	slot_free(s, e->slot);
}

static int concat_walk(const struct nftdp_set *s, int (*fn)(struct set_elem *e, void *arg),
		       void *arg)
{
	const struct concat_priv *p = s->priv;

	for (uint32_t bi = 0; bi < p->dir->nblocks; bi++)
		for (uint32_t i = 0; i < CB_SLOTS; i++) {
			struct set_elem *e = p->dir->b[bi]->elem[i];
			int ret;

			if (e && (ret = fn(e, arg)))
				return ret;
		}
	return 0;
}

static const struct set_elem *concat_lookup(const struct nftdp_set *s, const void *key,
					    uint64_t now, uint64_t gen)
{
	return scan(s, key, gen, now, true, NULL, NULL);
}

static unsigned concat_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
				   const void *data[], uint64_t now, uint64_t gen,
				   uint64_t *hit_mask)
{
	uint64_t mask = 0;
	unsigned hits = 0;

	for (unsigned i = 0; i < n; i++) {
		struct set_elem *x = scan(s, keys[i], gen, now, true, NULL, NULL);

		set_bulk_hit(s, i, x, data, &mask, &hits);
	}
	*hit_mask = mask;
	return hits;
}

const struct nftdp_set_ops nftdp_set_concat_ops = {
    .name = "concat_range",
    .features = NFT_SET_INTERVAL | NFT_SET_MAP | NFT_SET_OBJECT | NFT_SET_TIMEOUT | NFT_SET_CONCAT,
    .estimate = concat_estimate,
    .init = concat_init,
    .destroy = concat_destroy,
    .insert = concat_insert,
    .get = concat_get,
    .unlink = concat_unlink,
    .walk = concat_walk,
    .lookup = concat_lookup,
    .lookup_bulk = concat_lookup_bulk,
};
