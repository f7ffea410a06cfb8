/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Set registry, backend choice and transactions. Mirrors the element
 * handling of nf_tables_api.c (nft_add_set_elem, nft_del_setelem, the
 * NEWSETELEM/DELSETELEM commit and abort steps) and nft_select_set_ops.
 * Backends (set_hash.c, set_bitmap.c, set_interval.c, set_concat.c) only
 * link, unlink and look up elements; set.c owns generations and frees.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include <linux/netfilter/nf_tables.h>

#include "sets_priv.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
/* under ASan a released slab element stays poisoned and is never reused,
 * so a use after free is still reported */
#define SLAB_ASAN 1
#endif

#define ROUND8(x) (((x) + 7u) & ~7u)
#define DP_POOL_DEFAULT 65536
#define HUGE_SIZE (2u << 20)
#define SLAB_FIRST 32u /* elements in a set's first slab chunk */

static uint64_t clock_default(void)
{
	return nftdp_now_ms();
}

static uint64_t (*set_clock)(void) = clock_default;

void nftdp_set_clock_override(uint64_t (*now_ms)(void))
{
	set_clock = now_ms ? now_ms : clock_default;
}

uint64_t nftdp_set_now(void)
{
	return set_clock();
}

uint32_t nftdp_set_hash_key(const void *key, uint32_t size, uint32_t seed)
{
	return set_hash_key(key, size, seed);
}

/* Backends in the order nft_select_set_ops would prefer them on a tie. */
static const struct nftdp_set_ops *const set_backends[] = {
    &nftdp_set_bitmap_ops,
    &nftdp_set_hash_ops,
    &nftdp_set_interval_ops,
    &nftdp_set_concat_ops,
};

#define SET_FEATURE_FLAGS                                                                          \
	(NFT_SET_INTERVAL | NFT_SET_MAP | NFT_SET_TIMEOUT | NFT_SET_EVAL | NFT_SET_OBJECT |        \
	 NFT_SET_CONCAT)

/* Mirrors nft_select_set_ops: lookup class first (size first for POL_MEMORY). */
static const struct nftdp_set_ops *select_ops(const struct nftdp_set_desc *d)
{
	const struct nftdp_set_ops *best = NULL;
	struct set_estimate best_est = {0};
	uint32_t need = d->flags & SET_FEATURE_FLAGS;

	for (size_t i = 0; i < sizeof(set_backends) / sizeof(set_backends[0]); i++) {
		const struct nftdp_set_ops *ops = set_backends[i];
		struct set_estimate est;

		if ((ops->features & need) != need)
			continue;
		if (!ops->estimate(d, &est))
			continue;
		if (best) {
			bool better;

			if (d->policy == NFT_SET_POL_MEMORY)
				better = est.size < best_est.size || (est.size == best_est.size &&
								      est.lookup < best_est.lookup);
			else
				better =
				    est.lookup < best_est.lookup ||
				    (est.lookup == best_est.lookup && est.size < best_est.size);
			if (!better)
				continue;
		}
		best = ops;
		best_est = est;
	}
	return best;
}

int nftdp_set_create(const struct nftdp_set_desc *desc, struct nftdp_set **out)
{
	struct nftdp_set *s;
	unsigned total = 0;
	int err;

	if (!desc || !out || desc->key_size == 0 || desc->key_size > NFTDP_SET_KEY_MAX ||
	    desc->data_size > NFTDP_SET_DATA_MAX || desc->n_fields > NFTDP_SET_FIELDS_MAX)
		return -EINVAL;
	if ((desc->flags & (NFT_SET_MAP | NFT_SET_OBJECT)) && desc->data_size == 0)
		return -EINVAL;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->desc = *desc;
	s->key_size = desc->key_size;
	s->key_stride = ROUND8(desc->key_size);
	s->data_size = desc->data_size;
	if (desc->n_fields > 1) {
		s->n_fields = desc->n_fields;
		for (unsigned i = 0; i < desc->n_fields; i++) {
			if (desc->field_size[i] == 0 || desc->field_size[i] > 16)
				goto err_desc;
			s->field_size[i] = desc->field_size[i];
			s->field_off[i] = (uint8_t)total;
			total += (desc->field_size[i] + 3u) & ~3u;
		}
		if (total != desc->key_size)
			goto err_desc;
	} else {
		s->n_fields = 1;
		s->field_size[0] = (uint8_t)desc->key_size;
		s->field_off[0] = 0;
	}
	s->ranges = desc->flags & NFT_SET_INTERVAL;
	s->data_off = s->key_stride * (s->ranges ? 2 : 1);
	s->backend_off = s->data_off + ROUND8(desc->data_size);
	s->max = desc->max_elems ? desc->max_elems : UINT32_MAX;

	s->ops = select_ops(desc);
	if (!s->ops) {
		err = -EOPNOTSUPP;
		goto err_ops;
	}

	if (s->ops->dp_update && (desc->flags & NFT_SET_EVAL)) {
		uint32_t slot = 0;

		s->pool_len = desc->max_elems ? desc->max_elems : DP_POOL_DEFAULT;
		s->pool_stride =
		    ROUND8(sizeof(struct set_elem) + s->backend_off +
			   (s->ops->elem_backend_size ? s->ops->elem_backend_size(s, &slot) : 0));
		s->pool = nftdp_set_big_zalloc((size_t)s->pool_len * s->pool_stride);
		if (!s->pool) {
			err = -ENOMEM;
			goto err_ops;
		}
		for (uint32_t i = s->pool_len; i-- > 0;) {
			struct set_elem *e =
			    (struct set_elem *)(s->pool + (size_t)i * s->pool_stride);

			e->flags = SET_ELEM_F_POOL;
			nftdp_set_pool_put(s, e);
		}
	}

	/* fixed-size elements (every backend but interval's skip list) */
	if (!s->ops->elem_backend_size) {
		s->slab_stride = ROUND8(sizeof(struct set_elem) + s->backend_off);
		s->slab_grow = SLAB_FIRST;
	}
	err = s->ops->init(s);
	if (err)
		goto err_init;
	*out = s;
	return 0;

err_init:
	free(s->pool);
err_ops:
	free(s);
	return err;
err_desc:
	free(s);
	return -EINVAL;
}

/* ---- dp element pool: a lock-free stack with an ABA tag ---- */

struct set_elem *nftdp_set_pool_get(struct nftdp_set *s)
{
	uint64_t head = __atomic_load_n(&s->pool_head, __ATOMIC_ACQUIRE);

	for (;;) {
		uint32_t idx = (uint32_t)head;
		struct set_elem *e;
		uint64_t nhead;

		if (idx == 0)
			return NULL;
		e = (struct set_elem *)(s->pool + (size_t)(idx - 1) * s->pool_stride);
		nhead = ((head >> 32) + 1) << 32 | ld_rlx(&e->slot);
		if (__atomic_compare_exchange_n(&s->pool_head, &head, nhead, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return e;
	}
}

void nftdp_set_pool_put(struct nftdp_set *s, struct set_elem *e)
{
	uint32_t idx = (uint32_t)(((uint8_t *)e - s->pool) / s->pool_stride) + 1;
	uint64_t head = __atomic_load_n(&s->pool_head, __ATOMIC_ACQUIRE);

	for (;;) {
		st_rlx(&e->slot, (uint32_t)head);
		if (__atomic_compare_exchange_n(&s->pool_head, &head,
						((head >> 32) + 1) << 32 | idx, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
	}
}

static void elem_release(struct nftdp_set *s, struct set_elem *e);

void nftdp_set_elem_release_hook(struct nftdp_set *s, void (*release)(void *data, void *arg),
				 void *arg)
{
	s->elem_release = release;
	s->elem_release_arg = arg;
}

void *nftdp_set_side(const struct nftdp_set *s)
{
	return s->side;
}

void nftdp_set_side_set(struct nftdp_set *s, void *side, void (*free_fn)(void *side))
{
	s->side = side;
	s->side_free = free_fn;
}

uint32_t nftdp_set_capacity(const struct nftdp_set *s)
{
	return s->pool ? s->pool_len : s->max;
}

void nftdp_set_elem_free(struct nftdp_set *s, struct set_elem *e)
{
	if (s->elem_release && s->data_size)
		s->elem_release(set_elem_data(s, e), s->elem_release_arg);
	if (e->flags & SET_ELEM_F_POOL)
		nftdp_set_pool_put(s, e);
	else
		elem_release(s, e);
}

void *nftdp_set_big_zalloc(size_t size)
{
	void *p;

	if (size <= HUGE_SIZE / 2)
		return calloc(1, size);
	size = (size + HUGE_SIZE - 1) & ~(size_t)(HUGE_SIZE - 1);
	p = aligned_alloc(HUGE_SIZE, size);
	if (!p)
		return NULL;
	/* a hint: without THP the memory is still correct, on small pages */
	(void)madvise(p, size, MADV_HUGEPAGE);
	memset(p, 0, size);
	return p;
}

/* a new chunk for the slab; false without memory */
static bool slab_grow(struct nftdp_set *s)
{
	size_t bytes = (size_t)s->slab_grow * s->slab_stride + 64;
	uint8_t *c = nftdp_set_big_zalloc(bytes);

	if (!c)
		return false;
	*(void **)c = s->slab_chunks;
	s->slab_chunks = c;
	s->slab_cur = c + 64; /* elements start on a cache line */
	s->slab_left = s->slab_grow;
	if ((size_t)s->slab_grow * 2 * s->slab_stride + 64 <= HUGE_SIZE)
		s->slab_grow *= 2;
	else
		s->slab_grow = (HUGE_SIZE - 64) / s->slab_stride;
	return true;
}

static struct set_elem *elem_alloc(struct nftdp_set *s)
{
	uint32_t slot = 0;
	size_t extra = s->ops->elem_backend_size ? s->ops->elem_backend_size(s, &slot) : 0;
	struct set_elem *e;

	if (!s->slab_stride) {
		e = calloc(1, sizeof(*e) + s->backend_off + extra);
	} else if (s->slab_free) {
		e = s->slab_free;
		s->slab_free = e->next[0];
		memset(e, 0, s->slab_stride);
	} else if (s->slab_left || slab_grow(s)) {
		e = (struct set_elem *)s->slab_cur; /* zeroed by big_zalloc */
		s->slab_cur += s->slab_stride;
		s->slab_left--;
	} else {
		e = NULL;
	}
	if (e)
		e->slot = slot;
	return e;
}

/* an element that was never published, or is past its grace period */
static void elem_release(struct nftdp_set *s, struct set_elem *e)
{
	if (!s->slab_stride) {
		free(e);
		return;
	}
#ifdef SLAB_ASAN
	ASAN_POISON_MEMORY_REGION(e, s->slab_stride);
	return;
#endif
	e->next[0] = s->slab_free;
	s->slab_free = e;
}

/* ---- retirement: batches and grace periods ----
 *
 * Whatever the control thread unlinks while readers may still hold it
 * (elements that gc, abort or a full set drop, committed deletions once
 * unlinked, replaced hash tables, block directories and interval index
 * nodes) goes into the open retire batch, shared by every set. A grace
 * period begins by closing the batch (nftdp_set_grace_begin, then the
 * caller's rte_rcu_qsbr_start); when it ends (rte_rcu_qsbr_check passed,
 * nftdp_set_grace_end) the batches it closed are freed. Committed
 * deletions stay linked until no reader reads a set generation before
 * their gen_del: the end of a grace period that began after the publish.
 * The sets with something waiting are on one list, so an end touches only
 * those. One control thread calls all of this.
 */
static uint64_t retire_seq = 1; /* the open batch */
static bool retire_open;	/* a grace period is needed for what waits */
static uint64_t retired_wait;	/* committed deletions still linked, all sets */
static struct nftdp_set *dirty_sets;

uint64_t nftdp_set_retire_batch(void)
{
	return retire_seq;
}

static void dirty_add(struct nftdp_set *s)
{
	if (s->dirty)
		return;
	s->dirty = true;
	s->dirty_prev = NULL;
	s->dirty_next = dirty_sets;
	if (dirty_sets)
		dirty_sets->dirty_prev = s;
	dirty_sets = s;
}

static void dirty_del(struct nftdp_set *s)
{
	if (!s->dirty)
		return;
	if (s->dirty_prev)
		s->dirty_prev->dirty_next = s->dirty_next;
	else
		dirty_sets = s->dirty_next;
	if (s->dirty_next)
		s->dirty_next->dirty_prev = s->dirty_prev;
	s->dirty = false;
	s->dirty_next = s->dirty_prev = NULL;
}

void nftdp_set_elem_retire(struct nftdp_set *s, struct set_elem *e)
{
	e->gc_seq = retire_seq;
	e->gc_next = s->dead;
	s->dead = e;
	s->n_dead++;
	retire_open = true;
	dirty_add(s);
}

int nftdp_set_defer_free(struct nftdp_set *s, void *ptr)
{
	struct set_garbage *g = malloc(sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->ptr = ptr;
	g->seq = retire_seq;
	g->next = s->garbage;
	s->garbage = g;
	retire_open = true;
	dirty_add(s);
	return 0;
}

/*
 * The catch-all element (nft's `*`, NFT_SET_ELEM_CATCHALL) lives beside the
 * backend on a list of its own: the kernel's set->catchall_list, asked when
 * the backend finds no key (nft_set_do_lookup falls back to
 * nft_set_catchall_lookup; on 6.18 that counts as found, so `!= @s` never
 * matches a set with one). It does not count towards the set's size.
 */
static bool is_catchall(const struct set_elem *e)
{
	return (e->flags & NFT_SET_ELEM_CATCHALL) != 0;
}

static struct set_elem *catchall_get(const struct nftdp_set *s, uint64_t gen)
{
	for (struct set_elem *e = s->catchall; e; e = e->next[0])
		if (set_elem_active(e, gen))
			return e;
	return NULL;
}

/* packet path: the live catch-all of generation gen, or NULL */
static const struct set_elem *catchall_lookup(const struct nftdp_set *s, uint64_t gen, uint64_t now)
{
	for (const struct set_elem *e = ld_acq(&s->catchall); e; e = ld_acq(&e->next[0]))
		if (set_elem_live(e, gen, now))
			return e;
	return NULL;
}

static int catchall_insert(struct nftdp_set *s, struct set_elem *e, struct set_elem **dup)
{
	*dup = catchall_get(s, set_gen_next(s));
	if (*dup)
		return -EEXIST;
	e->next[0] = s->catchall;
	st_rel(&s->catchall, e);
	return 0;
}

/* physically remove (readers still walking over e keep their way on) */
static void elem_unlink(struct nftdp_set *s, struct set_elem *e)
{
	struct set_elem **pe;

	if (!is_catchall(e)) {
		s->ops->unlink(s, e);
		return;
	}
	for (pe = &s->catchall; *pe && *pe != e; pe = &(*pe)->next[0])
		;
	if (*pe)
		st_rel(pe, e->next[0]);
}

static void txn_push(struct nftdp_set *s, struct set_elem *e, uint32_t op)
{
	e->op = op;
	e->txn_next = s->txn_head;
	s->txn_head = e;
}

void nftdp_set_elem_gc_conflict(struct nftdp_set *s, struct set_elem *e)
{
	/* An expired element in the way of a new one is deleted in the same
	 * transaction, as the kernel's rbtree/pipapo insert gc does. */
	if (e->op == TXN_ADD) {
		e->op = TXN_ADD_DEL;
		st_rlx(&e->gen_del, set_gen_next(s));
		s->ndeact++;
		return;
	}
	st_rlx(&e->gen_del, set_gen_next(s));
	s->ndeact++;
	txn_push(s, e, TXN_DEL);
}

static bool count_add(struct nftdp_set *s)
{
	uint64_t max = (uint64_t)s->max + s->ndeact;
	uint32_t n = __atomic_load_n(&s->nelems, __ATOMIC_RELAXED);

	do {
		if (s->max != UINT32_MAX && n >= max)
			return false;
	} while (!__atomic_compare_exchange_n(&s->nelems, &n, n + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

static int field_cmp_ranges(const struct nftdp_set *s, const uint8_t *lo, const uint8_t *hi)
{
	for (unsigned f = 0; f < s->n_fields; f++)
		if (memcmp(lo + s->field_off[f], hi + s->field_off[f], s->field_size[f]) > 0)
			return -EINVAL;
	return 0;
}

int nftdp_set_insert(struct nftdp_set *s, const void *key, const void *key_end, const void *data,
		     uint64_t timeout_ms, uint32_t elem_flags, bool excl)
{
	struct set_elem *e, *dup = NULL;
	int err;

	if (!key)
		return -EINVAL;
	if (key_end && !s->ranges && memcmp(key, key_end, s->key_size) != 0)
		return -EINVAL;
	if (s->ranges && key_end && field_cmp_ranges(s, key, key_end))
		return -EINVAL;
	if (s->data_size && !data)
		return -EINVAL;
	if (timeout_ms && !(s->desc.flags & NFT_SET_TIMEOUT))
		return -EINVAL;

	e = elem_alloc(s);
	if (!e)
		return -ENOMEM;
	memcpy(set_elem_key(e), key, s->key_size);
	if (s->ranges) {
		memcpy(set_elem_key_end(s, e), key_end ? key_end : key, s->key_size);
		e->flags |= SET_ELEM_F_RANGE;
	}
	if (s->data_size)
		memcpy(set_elem_data(s, e), data, s->data_size);
	e->flags |= elem_flags & ~SET_ELEM_F_INTERNAL;
	if (!timeout_ms && (s->desc.flags & NFT_SET_TIMEOUT))
		timeout_ms = s->desc.timeout_ms;
	e->timeout = timeout_ms;
	e->expires = timeout_ms ? nftdp_set_now() + timeout_ms : 0;
	if (e->expires == EXP_DEAD)
		e->expires++;
	e->gen_add = set_gen_next(s);
	e->gen_del = GEN_NEVER;
	e->seq = ++s->seq;

	err = is_catchall(e) ? catchall_insert(s, e, &dup) : s->ops->insert(s, e, &dup);
	if (err == -EEXIST && dup) {
		/* nft_add_set_elem: same key, other data is a clash */
		if (s->data_size &&
		    memcmp(set_elem_data(s, dup), set_elem_data(s, e), s->data_size) != 0)
			err = -EBUSY;
		else if (!excl)
			err = 0;
		elem_release(s, e);
		return err;
	}
	if (err) {
		elem_release(s, e);
		return err;
	}
	/* after the insert, as nft_add_set_elem checks nft_set_maxsize */
	if (!is_catchall(e) && !count_add(s)) {
		/* linked a moment: a reader may be walking over it */
		s->ops->unlink(s, e);
		st_rlx(&e->gen_add, GEN_NEVER);
		nftdp_set_elem_retire(s, e);
		return -ENFILE;
	}
	txn_push(s, e, TXN_ADD);
	return 0;
}

int nftdp_set_remove(struct nftdp_set *s, const void *key, const void *key_end)
{
	struct set_elem *e;

	if (!key)
		return -EINVAL;
	if (!s->ranges && key_end && memcmp(key, key_end, s->key_size) != 0)
		return -EINVAL;
	e = s->ops->get(s, key, s->ranges ? (key_end ? key_end : key) : NULL, set_gen_next(s));
	if (!e)
		return -ENOENT;
	st_rlx(&e->gen_del, set_gen_next(s));
	s->ndeact++;
	if (e->op == TXN_ADD)
		e->op = TXN_ADD_DEL;
	else
		txn_push(s, e, TXN_DEL);
	return 0;
}

int nftdp_set_remove_catchall(struct nftdp_set *s)
{
	struct set_elem *e = catchall_get(s, set_gen_next(s));

	if (!e)
		return -ENOENT;
	st_rlx(&e->gen_del, set_gen_next(s));
	if (e->op == TXN_ADD)
		e->op = TXN_ADD_DEL;
	else
		txn_push(s, e, TXN_DEL);
	return 0;
}

uint64_t nftdp_set_gencursor = 1;

uint64_t nftdp_set_gen_next(void)
{
	return ld_rlx(&nftdp_set_gencursor) + 1;
}

void nftdp_set_gen_publish(void)
{
	/* lookups that pass no generation see every staged set from here on */
	st_rel(&nftdp_set_gencursor, nftdp_set_gencursor + 1);
	/* committed deletions may be unlinked after the next grace period */
	if (retired_wait)
		retire_open = true;
}

void nftdp_set_commit(struct nftdp_set *s)
{
	nftdp_set_commit_stage(s);
	nftdp_set_gen_publish();
}

void nftdp_set_commit_stage(struct nftdp_set *s)
{
	struct set_elem *e, *n;

	/* before the ops are cleared: a backend may read the pending list */
	if (s->ops->commit)
		s->ops->commit(s);
	for (e = s->txn_head; e; e = n) {
		n = e->txn_next;
		e->txn_next = NULL;
		if (e->op == TXN_DEL || e->op == TXN_ADD_DEL) {
			if (!is_catchall(e)) {
				__atomic_fetch_sub(&s->nelems, 1, __ATOMIC_RELAXED);
				s->ndeact--;
			}
			e->gc_next = s->retired;
			s->retired = e;
			s->n_retired++;
			retired_wait++;
			dirty_add(s);
		}
		e->op = TXN_NONE;
	}
	s->txn_head = NULL;
	/* nothing is visible yet: the pending elements carry gen_add/gen_del =
	 * nftdp_set_gen_next(), which readers get with the next publish */
}

void nftdp_set_abort(struct nftdp_set *s)
{
	struct set_elem *e, *n;

	/* newest first: undo in reverse order, as nf_tables_abort */
	for (e = s->txn_head; e; e = n) {
		n = e->txn_next;
		e->txn_next = NULL;
		bool counted = !is_catchall(e);

		switch (e->op) {
		case TXN_ADD_DEL:
			s->ndeact -= counted;
			/* fallthrough */
		case TXN_ADD:
			st_rlx(&e->gen_add, GEN_NEVER);
			elem_unlink(s, e);
			if (counted)
				__atomic_fetch_sub(&s->nelems, 1, __ATOMIC_RELAXED);
			/* readers may be walking over it: a grace period first */
			nftdp_set_elem_retire(s, e);
			break;
		case TXN_DEL:
			st_rlx(&e->gen_del, GEN_NEVER);
			s->ndeact -= counted;
			break;
		}
		e->op = TXN_NONE;
	}
	s->txn_head = NULL;
}

/*
 * The grace period of every batch up to upto has ended, and no reader
 * reads a set generation before gen: free those batches' memory, then
 * unlink the committed deletions no reader can see any more (they go
 * into the open batch, freed after a later grace period).
 */
static void reclaim_upto(struct nftdp_set *s, uint64_t upto, uint64_t gen)
{
	struct set_elem **pe, *e;
	struct set_garbage **pg, *g;

	for (pe = &s->dead; (e = *pe);) {
		if (e->gc_seq <= upto) {
			*pe = e->gc_next;
			s->n_dead--;
			nftdp_set_elem_free(s, e);
		} else {
			pe = &e->gc_next;
		}
	}
	for (pg = &s->garbage; (g = *pg);) {
		if (g->seq <= upto) {
			*pg = g->next;
			free(g->ptr);
			free(g);
		} else {
			pg = &g->next;
		}
	}
	if (s->ops->reclaim)
		s->ops->reclaim(s, upto);
	for (pe = &s->retired; (e = *pe);) {
		if (ld_rlx(&e->gen_del) <= gen) {
			*pe = e->gc_next;
			s->n_retired--;
			retired_wait--;
			elem_unlink(s, e);
			nftdp_set_elem_retire(s, e);
		} else {
			pe = &e->gc_next;
		}
	}
	if (!s->dead && !s->garbage && !s->retired)
		dirty_del(s);
}

void nftdp_set_reclaim(struct nftdp_set *s)
{
	/* the caller's grace period began after everything s retired */
	reclaim_upto(s, UINT64_MAX, ld_rlx(&nftdp_set_gencursor));
}

bool nftdp_set_grace_begin(struct nftdp_set_grace *g, uint64_t gen)
{
	uint64_t cur = ld_rlx(&nftdp_set_gencursor);

	if (!retire_open)
		return false;
	g->seq = retire_seq++;
	g->gen = gen && gen < cur ? gen : cur;
	retire_open = false;
	return true;
}

void nftdp_set_grace_end(const struct nftdp_set_grace *g)
{
	struct nftdp_set *s, *n;

	for (s = dirty_sets; s; s = n) {
		n = s->dirty_next;
		reclaim_upto(s, g->seq, g->gen);
	}
}

bool nftdp_set_grace_hook_begin(void *arg, uint64_t set_gen, uint64_t cookie[2])
{
	struct nftdp_set_grace g;

	(void)arg;
	if (!nftdp_set_grace_begin(&g, set_gen))
		return false;
	cookie[0] = g.seq;
	cookie[1] = g.gen;
	return true;
}

void nftdp_set_grace_hook_end(void *arg, const uint64_t cookie[2])
{
	struct nftdp_set_grace g = {.seq = cookie[0], .gen = cookie[1]};

	(void)arg;
	nftdp_set_grace_end(&g);
}

uint32_t nftdp_set_retired_len(const struct nftdp_set *s)
{
	return s->n_retired + s->n_dead;
}

struct gc_ctx {
	const struct nftdp_set *s;
	bool (*dead)(void *data, void *arg);
	void *arg;
	uint64_t now;
	uint64_t gen;
	struct set_elem **v;
	size_t n, cap;
};

static int gc_collect(struct set_elem *e, void *arg)
{
	struct gc_ctx *c = arg;

	if (e->op != TXN_NONE || ld_rlx(&e->gen_del) != GEN_NEVER)
		return 0;
	if (!set_elem_expired(e, c->now) &&
	    !(c->dead && c->s->data_size && c->dead(set_elem_data(c->s, e), c->arg)))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct set_elem **v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return 1;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = e;
	return 0;
}

unsigned nftdp_set_gc(struct nftdp_set *s, uint64_t now_ms)
{
	return nftdp_set_gc_data(s, now_ms, NULL, NULL);
}

unsigned nftdp_set_gc_data(struct nftdp_set *s, uint64_t now_ms,
			   bool (*dead)(void *data, void *arg), void *arg)
{
	struct gc_ctx c = {.s = s, .dead = dead, .arg = arg, .now = now_ms, .gen = set_gen_cur(s)};

	s->ops->walk(s, gc_collect, &c);
	for (size_t i = 0; i < c.n; i++) {
		struct set_elem *e = c.v[i];

		/* expired: a reader may still hold it (its clock, or a lookup
		 * begun before), so it is freed after a grace period */
		st_rlx(&e->gen_del, c.gen);
		s->ops->unlink(s, e);
		__atomic_fetch_sub(&s->nelems, 1, __ATOMIC_RELAXED);
		nftdp_set_elem_retire(s, e);
	}
	free(c.v);
	return (unsigned)c.n;
}

struct walk_ctx {
	const struct nftdp_set *s;
	nftdp_set_walk_cb cb;
	void *arg;
	uint64_t gen, now;
};

static int walk_one(struct set_elem *e, void *arg)
{
	struct walk_ctx *w = arg;
	const struct nftdp_set *s = w->s;

	if (!set_elem_live(e, w->gen, w->now))
		return 0;
	return w->cb(set_elem_key(e), s->ranges ? set_elem_key_end(s, e) : NULL,
		     s->data_size ? set_elem_data(s, e) : NULL, ld_rlx(&e->expires), e->timeout,
		     e->flags & ~SET_ELEM_F_INTERNAL, w->arg);
}

int nftdp_set_walk(const struct nftdp_set *s, nftdp_set_walk_cb cb, void *arg)
{
	struct walk_ctx w = {
	    .s = s, .cb = cb, .arg = arg, .gen = set_gen_cur(s), .now = nftdp_set_now()};

	return s->ops->walk(s, walk_one, &w);
}

uint32_t nftdp_set_count(const struct nftdp_set *s)
{
	return __atomic_load_n(&s->nelems, __ATOMIC_RELAXED);
}

const char *nftdp_set_backend_name(const struct nftdp_set *s)
{
	return s->ops->name;
}

/* one key: the backend's own single lookup, else its bulk with n = 1 */
/* a backend without a single-key lookup: its bulk code for one key */
static __attribute__((noinline)) bool lookup_one_bulk(const struct nftdp_set *s, const void *key,
						      const void **data, uint64_t now_ms,
						      uint64_t gen)
{
	const void *keys[1] = {key};
	const void *d[1] = {NULL};
	const struct set_elem *x;
	uint64_t mask = 0;
	bool hit;

	hit = s->ops->lookup_bulk(s, keys, 1, d, now_ms, gen, &mask) != 0;
	if (!hit && ld_rlx(&s->catchall) && (x = catchall_lookup(s, gen, now_ms))) {
		hit = true;
		d[0] = s->data_size ? set_elem_data(s, x) : NULL;
	}
	if (hit && data)
		*data = d[0];
	return hit;
}

static inline bool lookup_one(const struct nftdp_set *s, const void *key, const void **data,
			      uint64_t now_ms, uint64_t gen)
{
	const struct set_elem *x;

	if (!s->ops->lookup)
		return lookup_one_bulk(s, key, data, now_ms, gen);
	x = s->ops->lookup(s, key, now_ms, gen);
	if (!x && ld_rlx(&s->catchall))
		x = catchall_lookup(s, gen, now_ms);
	if (x && data)
		*data = s->data_size ? set_elem_data(s, x) : NULL;
	return x != NULL;
}

bool nftdp_set_catchall_live(const struct nftdp_set *s, uint64_t gen, uint64_t now)
{
	return catchall_lookup(s, gen, now) != NULL;
}

static __attribute__((noinline)) bool contains_by_lookup(const struct nftdp_set *s, const void *key,
							 uint64_t now_ms, uint64_t gen)
{
	return lookup_one(s, key, NULL, now_ms, gen);
}

bool nftdp_set_contains_gen(const struct nftdp_set *s, const void *key, uint64_t now_ms,
			    uint64_t gen)
{
	/* tail calls either way: no frame here */
	gen = set_gen_read(gen);
	if (s->ops->contains)
		return s->ops->contains(s, key, now_ms, gen);
	return contains_by_lookup(s, key, now_ms, gen);
}

nftdp_set_contains_t nftdp_set_contains_fn(const struct nftdp_set *s)
{
	return s->ops->contains ? s->ops->contains : contains_by_lookup;
}

bool nftdp_set_lookup(const struct nftdp_set *s, const void *key, const void **data,
		      uint64_t now_ms)
{
	return lookup_one(s, key, data, now_ms, set_gen_read(0));
}

bool nftdp_set_get(const struct nftdp_set *s, const void *key, const void **data,
		   uint64_t *expires_ms, uint64_t *timeout_ms)
{
	const struct set_elem *e;

	if (s->ranges)
		return false;
	e = s->ops->get(s, key, NULL, set_gen_cur(s));
	if (!e || !set_elem_live(e, set_gen_cur(s), nftdp_set_now()))
		return false;
	*data = s->data_size ? set_elem_data(s, e) : NULL;
	*expires_ms = ld_rlx(&e->expires);
	*timeout_ms = e->timeout;
	return true;
}

bool nftdp_set_lookup_gen(const struct nftdp_set *s, const void *key, const void **data,
			  uint64_t now_ms, uint64_t gen)
{
	return lookup_one(s, key, data, now_ms, set_gen_read(gen));
}

unsigned nftdp_set_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
			       const void *data[], uint64_t now_ms, uint64_t *hit_mask)
{
	uint64_t mask = 0, gen;
	unsigned hits;

	if (n > NFTDP_SET_BULK_MAX)
		n = NFTDP_SET_BULK_MAX;
	gen = set_gen_read(0);
	hits = s->ops->lookup_bulk(s, keys, n, data, now_ms, gen, &mask);
	if (hits < n && ld_rlx(&s->catchall)) {
		const struct set_elem *x = catchall_lookup(s, gen, now_ms);

		for (unsigned i = 0; x && i < n; i++)
			if (!(mask >> i & 1))
				set_bulk_hit(s, i, x, data, &mask, &hits);
	}
	if (hit_mask)
		*hit_mask = mask;
	return hits;
}

int nftdp_set_dp_update(struct nftdp_set *s, const void *key, const void *data, uint64_t timeout_ms,
			uint64_t now_ms, int op)
{
	return nftdp_set_dp_update_elem(s, key, data, timeout_ms, now_ms, op, NULL);
}

int nftdp_set_dp_update_elem(struct nftdp_set *s, const void *key, const void *data,
			     uint64_t timeout_ms, uint64_t now_ms, int op, void **elem_data)
{
	if (!s->ops->dp_update || !s->pool)
		return -EOPNOTSUPP;
	if (!timeout_ms)
		timeout_ms = s->desc.timeout_ms;
	return s->ops->dp_update(s, key, data, timeout_ms, now_ms, op, elem_data);
}

static int destroy_collect(struct set_elem *e, void *arg)
{
	struct gc_ctx *c = arg;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct set_elem **v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return 1;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = e;
	return 0;
}

void nftdp_set_destroy(struct nftdp_set *s)
{
	struct gc_ctx c = {0};
	struct set_elem *e;
	struct set_garbage *g;

	if (!s)
		return;
	dirty_del(s);
	retired_wait -= s->n_retired; /* still linked: freed by the walk */
	s->ops->walk(s, destroy_collect, &c);
	s->ops->destroy(s);
	while ((e = s->catchall)) {
		s->catchall = e->next[0];
		nftdp_set_elem_free(s, e);
	}
	for (size_t i = 0; i < c.n; i++)
		nftdp_set_elem_free(s, c.v[i]);
	free(c.v);
	while ((e = s->dead)) {
		s->dead = e->gc_next;
		nftdp_set_elem_free(s, e);
	}
	while ((g = s->garbage)) {
		s->garbage = g->next;
		free(g->ptr);
		free(g);
	}
	if (s->side_free)
		s->side_free(s->side); /* after every element's release */
	while (s->slab_chunks) {
		void *c = s->slab_chunks;

		s->slab_chunks = *(void **)c;
		free(c);
	}
	free(s->pool);
	free(s);
}
