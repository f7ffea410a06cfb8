/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact-key hash backend (keys of any length, incl. concatenations); the
 * counterpart of nft_set_hash.c (rhash for dynamic sets, hash for fixed).
 *
 * Chained hash with RCU-style readers: buckets hold the newest element
 * first; an element is published by one compare-and-swap of the bucket
 * head (release), so readers either see it whole or not at all. Only the
 * control thread unlinks (after the grace period that set.c waits for).
 * Workers push new elements (dynset) with the same CAS; a worker that
 * finds, after its CAS failed, an equal key among the newer elements backs
 * off, so a key is never linked live twice. Sets without NFT_SET_EVAL grow
 * by doubling: each element has two chain links, the new table uses the
 * other one, so readers of the old table keep walking intact chains until
 * the old table is freed (one resize per grace period).
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/netfilter/nf_tables.h>

#include "sets_priv.h"

#define HASH_MIN_BUCKETS 64u
#define DP_CAS_TRIES 8

struct hash_table {
	uint32_t mask;
	uint32_t link;
	struct set_elem *b[];
};

struct hash_priv {
	struct hash_table *t;
	uint32_t seed;
	bool fixed;
	bool resize_busy;
	uint64_t resize_seq; /* retire batch of the old table */
};

static uint32_t pow2_ceil(uint64_t n)
{
	uint32_t p = HASH_MIN_BUCKETS;

	while (p < n && p < (1u << 30))
		p <<= 1;
	return p;
}

static struct hash_table *table_alloc(uint32_t nbuckets, uint32_t link)
{
	struct hash_table *t = nftdp_set_big_zalloc(sizeof(*t) + nbuckets * sizeof(t->b[0]));

	if (t) {
		t->mask = nbuckets - 1;
		t->link = link;
	}
	return t;
}

static bool hash_estimate(const struct nftdp_set_desc *d, struct set_estimate *est)
{
	if (d->flags & NFT_SET_INTERVAL)
		return false;
	est->lookup = 0;
	est->size = (uint64_t)(d->max_elems ? d->max_elems : 1024) * (sizeof(struct set_elem) + 16);
	return true;
}

static int hash_init(struct nftdp_set *s)
{
	struct hash_priv *hp = calloc(1, sizeof(*hp));
	uint64_t n = s->desc.max_elems ? s->desc.max_elems : s->desc.expected_elems;

	if (!hp)
		return -ENOMEM;
	hp->fixed = s->desc.flags & NFT_SET_EVAL;
	if (hp->fixed && !n)
		n = s->pool_len;
	hp->t = table_alloc(pow2_ceil(n), 0);
	if (!hp->t) {
		free(hp);
		return -ENOMEM;
	}
	hp->seed = 0x5bd1e995u ^ s->key_size;
	s->priv = hp;
	return 0;
}

static void hash_destroy(struct nftdp_set *s)
{
	struct hash_priv *hp = s->priv;

	free(hp->t);
	free(hp);
}

static inline struct set_elem **bucket(struct hash_table *t, uint32_t h)
{
	return &t->b[h & t->mask];
}

static inline __attribute__((always_inline)) struct set_elem *
chain_find(const struct nftdp_set *s, struct set_elem *x, uint32_t link, uint32_t h,
	   const void *key, uint64_t gen, uint64_t now, const struct set_elem *stop)
{
	for (; x && x != stop; x = ld_acq(&x->next[link]))
		if (x->hash == h && set_key_eq(set_elem_key(x), key, s->key_size) &&
		    set_elem_live(x, gen, now))
			return x;
	return NULL;
}

static void push(struct hash_table *t, struct set_elem *e)
{
	struct set_elem **b = bucket(t, e->hash);
	struct set_elem *old = ld_acq(b);

	do {
		e->next[t->link] = old;
	} while (
	    !__atomic_compare_exchange_n(b, &old, e, true, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
}

static void resize(struct nftdp_set *s, struct hash_priv *hp)
{
	struct hash_table *ot = hp->t, *nt;
	uint32_t n = (ot->mask + 1) * 2;

	nt = table_alloc(n, ot->link ^ 1);
	if (!nt)
		return; /* longer chains, still correct */
	if (nftdp_set_defer_free(s, ot)) {
		free(nt);
		return;
	}
	for (uint32_t i = 0; i <= ot->mask; i++)
		for (struct set_elem *x = ot->b[i]; x; x = x->next[ot->link]) {
			struct set_elem **b = bucket(nt, x->hash);

			x->next[nt->link] = *b;
			*b = x;
		}
	st_rel(&hp->t, nt);
	hp->resize_busy = true;
	hp->resize_seq = nftdp_set_retire_batch();
}

static int hash_insert(struct nftdp_set *s, struct set_elem *e, struct set_elem **dup)
{
	struct hash_priv *hp = s->priv;
	struct hash_table *t;
	struct set_elem *x;

	e->hash = nftdp_set_hash_key(set_elem_key(e), s->key_size, hp->seed);
	t = hp->t;
	x = chain_find(s, ld_acq(bucket(t, e->hash)), t->link, e->hash, set_elem_key(e),
		       set_gen_next(s), nftdp_set_now(), NULL);
	if (x) {
		*dup = x;
		return -EEXIST;
	}
	if (!hp->fixed && !hp->resize_busy && s->nelems + 1 > t->mask + 1) {
		resize(s, hp);
		t = hp->t;
	}
	push(t, e);
	return 0;
}

static struct set_elem *hash_get(const struct nftdp_set *s, const void *key, const void *key_end,
				 uint64_t gen)
{
	const struct hash_priv *hp = s->priv;
	uint32_t h = nftdp_set_hash_key(key, s->key_size, hp->seed);
	struct hash_table *t = hp->t;

	(void)key_end;
	return chain_find(s, ld_acq(bucket(t, h)), t->link, h, key, gen, nftdp_set_now(), NULL);
}

static void hash_unlink(struct nftdp_set *s, struct set_elem *e)
{
	struct hash_priv *hp = s->priv;
	struct hash_table *t = hp->t;
	struct set_elem **b = bucket(t, e->hash);
	struct set_elem *head = ld_acq(b), *p;
	uint32_t l = t->link;

	/* the head may move under us: workers push with CAS */
	if (head == e && __atomic_compare_exchange_n(b, &head, e->next[l], false, __ATOMIC_RELEASE,
						     __ATOMIC_ACQUIRE))
		return;
	for (p = head; p; p = p->next[l])
		if (p->next[l] == e) {
			st_rel(&p->next[l], e->next[l]);
			return;
		}
}

static void hash_reclaim(struct nftdp_set *s, uint64_t upto)
{
	struct hash_priv *hp = s->priv;

	/* set.c freed the old table: nobody walks its link any more */
	if (hp->resize_busy && hp->resize_seq <= upto)
		hp->resize_busy = false;
}

static int hash_walk(const struct nftdp_set *s, int (*fn)(struct set_elem *e, void *arg), void *arg)
{
	const struct hash_priv *hp = s->priv;
	struct hash_table *t = hp->t;

	for (uint32_t i = 0; i <= t->mask; i++) {
		struct set_elem *x, *n;

		for (x = ld_acq(&t->b[i]); x; x = n) {
			int ret;

			n = ld_acq(&x->next[t->link]);
			ret = fn(x, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The common key sizes' hash in line (the others through set_hash_key):
 * the single-key lookups' */
static inline __attribute__((always_inline)) uint32_t hash_key_one(const void *key, uint32_t size,
								   uint32_t seed)
{
	switch (size) {
	case 4:
		return set_hash_key_n(key, 4, seed);
	case 8:
		return set_hash_key_n(key, 8, seed);
	case 16:
		return set_hash_key_n(key, 16, seed);
	default:
		return set_hash_key(key, size, seed);
	}
}

/* one key: hash_lookup, and in line in hash_contains (the VM's plain-set
 * lookups), with no call for the hash either */
static inline __attribute__((always_inline)) const struct set_elem *
hash_find_one(const struct nftdp_set *s, const void *key, uint64_t now, uint64_t gen)
{
	const struct hash_priv *hp = s->priv;
	/* gen (read by the caller, acquire) before table, as in the bulk */
	struct hash_table *t = ld_acq(&hp->t);
	uint32_t h = hash_key_one(key, s->key_size, hp->seed);

	return chain_find(s, ld_acq(bucket(t, h)), t->link, h, key, gen, now, NULL);
}

static const struct set_elem *hash_lookup(const struct nftdp_set *s, const void *key, uint64_t now,
					  uint64_t gen)
{
	return hash_find_one(s, key, now, gen);
}

static unsigned hash_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
				 const void *data[], uint64_t now, uint64_t gen, uint64_t *hit_mask)
{
	const struct hash_priv *hp = s->priv;
	/* gen (read by the caller, acquire) before table: a reader that sees a
	 * commit sees every resize before it */
	struct hash_table *t = ld_acq(&hp->t);
	uint32_t h[NFTDP_SET_BULK_MAX];
	struct set_elem *e[NFTDP_SET_BULK_MAX];
	uint32_t ks = s->key_size, link = t->link;
	uint64_t mask = 0;
	unsigned hits = 0;

	for (unsigned i = 0; i < n; i++) {
		h[i] = set_hash_key(keys[i], ks, hp->seed);
		__builtin_prefetch(bucket(t, h[i]));
	}
	for (unsigned i = 0; i < n; i++) {
		e[i] = ld_acq(bucket(t, h[i]));
		if (e[i])
			__builtin_prefetch(e[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		struct set_elem *x = chain_find(s, e[i], link, h[i], keys[i], gen, now, NULL);

		set_bulk_hit(s, i, x, data, &mask, &hits);
	}
	*hit_mask = mask;
	return hits;
}

static bool count_add_dp(struct nftdp_set *s)
{
	uint32_t n = __atomic_load_n(&s->nelems, __ATOMIC_RELAXED);

	do {
		if (s->max != UINT32_MAX && n >= s->max)
			return false;
	} while (!__atomic_compare_exchange_n(&s->nelems, &n, n + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

static uint64_t expires_at(uint64_t now, uint64_t timeout)
{
	uint64_t x = timeout ? now + timeout : 0;

	return x == EXP_DEAD ? x + 1 : x;
}

/*
 * nft_dynset_eval / nft_rhash_update from a worker. Elements added here are
 * visible in every generation at once (gen_add 0), like the kernel's, and
 * come from the preallocated pool, so nothing allocates.
 */
static int hash_dp_update(struct nftdp_set *s, const void *key, const void *data, uint64_t timeout,
			  uint64_t now, int op, void **elem_data)
{
	struct hash_priv *hp = s->priv;
	struct hash_table *t = ld_acq(&hp->t);
	uint64_t gen = set_gen_cur(s);
	uint32_t h = nftdp_set_hash_key(key, s->key_size, hp->seed);
	struct set_elem **b = bucket(t, h);
	struct set_elem *head = ld_acq(b), *x, *e;

	x = chain_find(s, head, t->link, h, key, gen, now, NULL);
	if (op == NFTDP_SET_DP_DELETE) {
		if (!x)
			return -ENOENT;
		st_rel(&x->expires, (uint64_t)EXP_DEAD); /* gc unlinks it */
		return 0;
	}
	if (x) {
		if (op == NFTDP_SET_DP_UPDATE && timeout)
			st_rel(&x->expires, expires_at(now, timeout));
		if (elem_data)
			*elem_data = set_elem_data(s, x);
		return 0;
	}
	if (!count_add_dp(s))
		return -ENFILE;
	e = nftdp_set_pool_get(s);
	if (!e) {
		__atomic_fetch_sub(&s->nelems, 1, __ATOMIC_RELAXED);
		return -ENFILE;
	}
	memcpy(set_elem_key(e), key, s->key_size);
	if (s->data_size && data)
		memcpy(set_elem_data(s, e), data, s->data_size);
	else if (s->data_size)
		memset(set_elem_data(s, e), 0, s->data_size);
	e->flags = SET_ELEM_F_POOL;
	e->hash = h;
	e->timeout = timeout;
	e->gen_add = 0;
	e->gen_del = GEN_NEVER;
	e->op = TXN_NONE;
	e->seq = 0;
	st_rlx(&e->expires, expires_at(now, timeout));
	for (int i = 0; i < DP_CAS_TRIES; i++) {
		struct set_elem *old = head;

		e->next[t->link] = head;
		if (__atomic_compare_exchange_n(b, &head, e, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			if (elem_data)
				*elem_data = set_elem_data(s, e);
			return 0;
		}
		/* someone else linked first: only the elements in front of the
		 * old head are new (unlinks only happen on the control thread,
		 * and a removed old head makes us rescan everything) */
		x = chain_find(s, head, t->link, h, key, gen, now, old);
		if (!x && old) {
			/* old head still reachable from the new one? */
			struct set_elem *p;

			for (p = head; p && p != old; p = ld_acq(&p->next[t->link]))
				;
			if (!p)
				x = chain_find(s, head, t->link, h, key, gen, now, NULL);
		}
		if (x)
			break;
	}
	/* never published: straight back to the pool */
	nftdp_set_pool_put(s, e);
	__atomic_fetch_sub(&s->nelems, 1, __ATOMIC_RELAXED);
	if (x && elem_data)
		*elem_data = set_elem_data(s, x);
	return x ? 0 : -EAGAIN;
}

/* hash_contains' rest: the chain from x on, whose hash is h's (a key of
 * any size), and the catch-all; out of line so that the common miss (an
 * empty bucket, or no element of the same hash) needs no frame */
static __attribute__((noinline)) bool hash_contains_at(const struct nftdp_set *s,
						       const struct set_elem *x, uint32_t link,
						       uint32_t h, const void *key, uint64_t now,
						       uint64_t gen)
{
	return set_contains_or_catchall(
	    s, chain_find(s, (struct set_elem *)(uintptr_t)x, link, h, key, gen, now, NULL), gen,
	    now);
}

static __attribute__((noinline)) bool hash_contains_any(const struct nftdp_set *s, const void *key,
							uint64_t now, uint64_t gen)
{
	return set_contains_or_catchall(s, hash_find_one(s, key, now, gen), gen, now);
}

/*
 * The VM's plain-set lookup (hash_find_one's result, or the catch-all).
 * The common key sizes' hash in line and the bucket walked only as far as
 * the first element of the same hash, in a leaf function; the key
 * compares and the catch-all are hash_contains_at's.
 */
static bool hash_contains(const struct nftdp_set *s, const void *key, uint64_t now, uint64_t gen)
{
	const struct hash_priv *hp = s->priv;
	/* gen (read by the caller, acquire) before table, as in the bulk */
	struct hash_table *t = ld_acq(&hp->t);
	const struct set_elem *x;
	uint32_t h;

	switch (s->key_size) {
	case 4:
		h = set_hash_key_n(key, 4, hp->seed);
		break;
	case 8:
		h = set_hash_key_n(key, 8, hp->seed);
		break;
	case 16:
		h = set_hash_key_n(key, 16, hp->seed);
		break;
	default:
		return hash_contains_any(s, key, now, gen);
	}
	for (x = ld_acq(bucket(t, h)); x; x = ld_acq(&x->next[t->link]))
		if (x->hash == h)
			return hash_contains_at(s, x, t->link, h, key, now, gen);
	return ld_rlx(&s->catchall) && hash_contains_at(s, NULL, t->link, h, key, now, gen);
}

const struct nftdp_set_ops nftdp_set_hash_ops = {
    .name = "hash",
    .features = NFT_SET_MAP | NFT_SET_OBJECT | NFT_SET_TIMEOUT | NFT_SET_EVAL | NFT_SET_CONCAT,
    .estimate = hash_estimate,
    .init = hash_init,
    .destroy = hash_destroy,
    .insert = hash_insert,
    .get = hash_get,
    .unlink = hash_unlink,
    .reclaim = hash_reclaim,
    .walk = hash_walk,
    .lookup = hash_lookup,
    .contains = hash_contains,
    .lookup_bulk = hash_lookup_bulk,
    .dp_update = hash_dp_update,
};
