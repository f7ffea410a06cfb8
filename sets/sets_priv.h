/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sets/ private: the element layout, generation helpers and the backend ops
 * table. set.c owns transactions, counts, timeouts and deferred frees; each
 * set_<backend>.c fills one struct nftdp_set_ops.
 */
#ifndef NFTDP_SETS_PRIV_H
#define NFTDP_SETS_PRIV_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nftdp_common.h"
#include "nftdp_sets.h"

#define GEN_NEVER UINT64_MAX
#define EXP_DEAD 1u /* expires value of an element deleted from the packet path */

#define ld_acq(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ld_rlx(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define st_rel(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define st_rlx(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/*
 * One element. The generation window [gen_add, gen_del) says in which set
 * generations a reader sees it (the kernel's genmask, widened to 64-bit
 * counters so that a reader that is a whole commit late still sees one
 * consistent state). blob holds key | key_end (range sets) | data, each
 * rounded up to 8 bytes, then backend_size bytes for the backend.
 */
struct set_elem {
	struct set_elem *next[2]; /* hash/bitmap chains (two for resize) */
	uint64_t gen_add;
	uint64_t gen_del;
	uint64_t expires; /* absolute ms; 0 never; EXP_DEAD */
	uint64_t timeout; /* ms, for dumps */
	uint64_t seq;	  /* unique insertion number (interval order) */
	uint64_t gc_seq;  /* retire batch it was unlinked in (set.c) */
	struct set_elem *txn_next;
	struct set_elem *gc_next;
	uint32_t hash;
	uint32_t flags; /* NFT_SET_ELEM_* | SET_ELEM_F_* */
	uint32_t slot;	/* backend use (concat slot, skip list height, pool next) */
	uint32_t op;	/* pending op: TXN_ADD / TXN_DEL */
	uint8_t blob[] __attribute__((aligned(8)));
};

#define SET_ELEM_F_RANGE (1u << 30)   /* has key_end */
#define SET_ELEM_F_POOL (1u << 31)    /* belongs to the dp element pool */
#define SET_ELEM_F_INDEXED (1u << 29) /* in the interval backend's read index */
#define SET_ELEM_F_INTERNAL (SET_ELEM_F_RANGE | SET_ELEM_F_POOL | SET_ELEM_F_INDEXED)

enum { TXN_NONE, TXN_ADD, TXN_DEL, TXN_ADD_DEL };

struct set_estimate {
	uint64_t size;	 /* bytes */
	unsigned lookup; /* 0 = O(1), 1 = O(log n), 2 = O(n) */
};

struct nftdp_set_ops {
	const char *name;
	uint32_t features; /* NFT_SET_* flags supported */
	/* control path */
	bool (*estimate)(const struct nftdp_set_desc *d, struct set_estimate *est);
	size_t (*elem_backend_size)(const struct nftdp_set *s, uint32_t *slot);
	int (*init)(struct nftdp_set *s);
	void (*destroy)(struct nftdp_set *s); /* backend memory only */
	/* link a pending element; *dup gets the conflicting element (active
	 * in the next generation) for -EEXIST/-ENOTEMPTY */
	int (*insert)(struct nftdp_set *s, struct set_elem *e, struct set_elem **dup);
	/* the element active in generation gen with exactly this key (and end) */
	struct set_elem *(*get)(const struct nftdp_set *s, const void *key, const void *key_end,
				uint64_t gen);
	void (*unlink)(struct nftdp_set *s, struct set_elem *e); /* physically remove */
	void (*commit)(struct nftdp_set *s); /* optional; before the pending ops are cleared */
	/* optional: the grace periods of retire batches <= upto have ended */
	void (*reclaim)(struct nftdp_set *s, uint64_t upto);
	/* every linked element; stops when fn returns non-zero */
	int (*walk)(const struct nftdp_set *s, int (*fn)(struct set_elem *e, void *arg), void *arg);
	/* packet path: one key (the VM's lookup expression), the live
	 * element or NULL; optional, lookup_bulk with n = 1 stands in */
	const struct set_elem *(*lookup)(const struct nftdp_set *s, const void *key, uint64_t now,
					 uint64_t gen);
	/* packet path: lookup's answer as a bool, the catch-all included
	 * (set_catchall_hit); optional, lookup stands in */
	bool (*contains)(const struct nftdp_set *s, const void *key, uint64_t now, uint64_t gen);
	unsigned (*lookup_bulk)(const struct nftdp_set *s, const void *const keys[], unsigned n,
				const void *data[], uint64_t now, uint64_t gen, uint64_t *hit_mask);
	/* *elem_data (when not NULL) gets the data of the element added or
	 * found (add, update) */
	int (*dp_update)(struct nftdp_set *s, const void *key, const void *data, uint64_t timeout,
			 uint64_t now, int op, void **elem_data);
};

struct set_garbage {
	struct set_garbage *next;
	uint64_t seq;
	void *ptr;
};

struct nftdp_set {
	struct nftdp_set_desc desc;
	const struct nftdp_set_ops *ops;
	uint32_t nelems; /* atomic: elements in the pending state */
	uint32_t ndeact; /* pending deletions */
	uint32_t max;	 /* max_elems or UINT32_MAX */
	uint32_t key_size;
	uint32_t key_stride; /* key_size rounded to 8 */
	uint32_t data_size;
	uint32_t data_off;
	uint32_t backend_off;
	uint8_t n_fields;
	uint8_t field_size[NFTDP_SET_FIELDS_MAX];
	uint8_t field_off[NFTDP_SET_FIELDS_MAX];
	bool ranges;		   /* elements carry key_end */
	uint64_t seq;		   /* element insertion counter */
	struct set_elem *txn_head; /* pending ops, newest first */
	/* committed deletions still linked: unlinked once no reader reads a
	 * set generation before their gen_del (a grace period that began
	 * after the publish has ended) */
	struct set_elem *retired;
	/* unlinked elements and memory (gc_seq, seq: the retire batch they
	 * went into), freed once a grace period that began after that batch
	 * closed has ended (nftdp_set_grace_end) */
	struct set_elem *dead;
	struct set_garbage *garbage;
	uint32_t n_retired, n_dead; /* lengths of retired and dead */
	/* on set.c's list of sets with something on those lists */
	struct nftdp_set *dirty_next, *dirty_prev;
	bool dirty;
	/* dp element pool (hash sets with NFT_SET_EVAL) */
	uint8_t *pool;
	uint32_t pool_len;
	uint32_t pool_stride;
	uint64_t pool_head; /* atomic: tag << 32 | (index + 1) */
	void *priv;	    /* backend */
	/* catch-all elements (NFT_SET_ELEM_CATCHALL), newest first through
	 * next[0]: at most one active per generation, older ones linked until
	 * no reader can see them (set.c, not the backend's) */
	struct set_elem *catchall;
	/* element slab for fixed-size elements (control path only): chunks
	 * that double up to 2 MiB, those on transparent huge pages, so that
	 * lookups in large sets do not miss the TLB on every element */
	void *slab_chunks;	    /* list through each chunk's first word */
	struct set_elem *slab_free; /* freed elements, through next[0] */
	uint8_t *slab_cur;
	uint32_t slab_left;   /* elements left at slab_cur */
	uint32_t slab_stride; /* 0: elements come from calloc */
	uint32_t slab_grow;   /* elements in the next chunk */
	/* nftdp_set_elem_release_hook, nftdp_set_side_set */
	void (*elem_release)(void *data, void *arg);
	void *elem_release_arg;
	void *side;
	void (*side_free)(void *side);
};

extern const struct nftdp_set_ops nftdp_set_hash_ops;
extern const struct nftdp_set_ops nftdp_set_bitmap_ops;
extern const struct nftdp_set_ops nftdp_set_interval_ops;
extern const struct nftdp_set_ops nftdp_set_concat_ops;

static inline uint8_t *set_elem_key(const struct set_elem *e)
{
	return (uint8_t *)e->blob;
}

static inline uint8_t *set_elem_key_end(const struct nftdp_set *s, const struct set_elem *e)
{
	return (uint8_t *)e->blob + (s->ranges ? s->key_stride : 0);
}

static inline uint8_t *set_elem_data(const struct nftdp_set *s, const struct set_elem *e)
{
	return (uint8_t *)e->blob + s->data_off;
}

static inline void *set_elem_backend(const struct nftdp_set *s, const struct set_elem *e)
{
	return (uint8_t *)e->blob + s->backend_off;
}

/* Visible in generation gen (the kernel's nft_set_elem_active). */
static inline bool set_elem_active(const struct set_elem *e, uint64_t gen)
{
	return ld_rlx(&e->gen_add) <= gen && gen < ld_rlx(&e->gen_del);
}

/* The kernel's nft_set_elem_expired. */
static inline bool set_elem_expired(const struct set_elem *e, uint64_t now)
{
	uint64_t x = ld_acq(&e->expires);

	return x != 0 && (x == EXP_DEAD || now >= x);
}

static inline bool set_elem_live(const struct set_elem *e, uint64_t gen, uint64_t now)
{
	return set_elem_active(e, gen) && !set_elem_expired(e, now);
}

/*
 * The tail every backend's lookup_bulk shares: key i found x (NULL: a
 * miss). A hit sets bit i of *mask, counts in *hits and, when the caller
 * wants data, hands out the element's (nft_set_ext_data; NULL for a set
 * without data), as nft_lookup_eval does for one key.
 */
static inline void set_bulk_hit(const struct nftdp_set *s, unsigned i, const struct set_elem *x,
				const void *data[], uint64_t *mask, unsigned *hits)
{
	if (!x)
		return;
	*mask |= 1ull << i;
	(*hits)++;
	if (data)
		data[i] = s->data_size ? set_elem_data(s, x) : NULL;
}

/* The set generation cursor, one for every set (the kernel's gencursor):
 * readers pass the generation their VM generation carries, or 0 for this
 * one; only the control thread moves it (nftdp_set_gen_publish). */
extern uint64_t nftdp_set_gencursor;

static inline uint64_t set_gen_cur(const struct nftdp_set *s)
{
	(void)s;
	return ld_acq(&nftdp_set_gencursor);
}

static inline uint64_t set_gen_next(const struct nftdp_set *s)
{
	(void)s;
	return ld_rlx(&nftdp_set_gencursor) + 1;
}

/* the generation a lookup reads: the caller's, or the current one */
static inline uint64_t set_gen_read(uint64_t gen)
{
	return gen ? gen : ld_acq(&nftdp_set_gencursor);
}

/* Key comparison for sizes the VM uses; n is a multiple of 1..64. */
static inline bool set_key_eq(const void *a, const void *b, uint32_t n)
{
	uint32_t x4, y4;
	uint64_t x8, y8;

	/* keys need not be aligned (ipv4_addr keys of 4 bytes sit at any
	 * multiple of 4 in an element): memcpy loads, one mov each */
	switch (n) {
	case 4:
		memcpy(&x4, a, 4);
		memcpy(&y4, b, 4);
		return x4 == y4;
	case 8:
		memcpy(&x8, a, 8);
		memcpy(&y8, b, 8);
		return x8 == y8;
	default:
		return memcmp(a, b, n) == 0;
	}
}

/* The hash of a key (the hash backend's buckets), inline for the packet
 * path's lookups; nftdp_set_hash_key is the same for other callers. */
static inline __attribute__((always_inline)) uint32_t set_hash_key_n(const void *key, uint32_t size,
								     uint32_t seed)
{
	const uint8_t *p = key;
	uint64_t h = seed ^ (size * 0x9E3779B97F4A7C15ull);

	while (size >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		p += 8;
		size -= 8;
	}
	if (size >= 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
		p += 4;
		size -= 4;
	}
	while (size--)
		h = (h ^ *p++) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* the same, with the loops unrolled for the VM's common key sizes (an
 * address, an address and a port, an IPv6 address) */
static inline uint32_t set_hash_key(const void *key, uint32_t size, uint32_t seed)
{
	switch (size) {
	case 4:
		return set_hash_key_n(key, 4, seed);
	case 8:
		return set_hash_key_n(key, 8, seed);
	case 16:
		return set_hash_key_n(key, 16, seed);
	default:
		return set_hash_key_n(key, size, seed);
	}
}

uint32_t nftdp_set_hash_key(const void *key, uint32_t size, uint32_t seed);

/* whether s has a catch-all element live in gen (set.c) */
bool nftdp_set_catchall_live(const struct nftdp_set *s, uint64_t gen, uint64_t now);

/* a backend's contains: x, its lookup's answer, or else the catch-all */
static inline bool set_contains_or_catchall(const struct nftdp_set *s, const struct set_elem *x,
					    uint64_t gen, uint64_t now)
{
	return x || (ld_rlx(&s->catchall) && nftdp_set_catchall_live(s, gen, now));
}
/* control path: zeroed memory, 2 MiB aligned and on transparent huge pages
 * when size is over 1 MiB (bucket tables, pools, slab chunks); free()
 * releases it */
void *nftdp_set_big_zalloc(size_t size);
uint64_t nftdp_set_now(void);
/* control path: free(ptr) once a grace period that begins after now ends */
int nftdp_set_defer_free(struct nftdp_set *s, void *ptr);
/* control path: pending-delete an expired element found in the way */
void nftdp_set_elem_gc_conflict(struct nftdp_set *s, struct set_elem *e);
/* pool: take/return a dp element (lock-free) */
struct set_elem *nftdp_set_pool_get(struct nftdp_set *s);
void nftdp_set_pool_put(struct nftdp_set *s, struct set_elem *e);
void nftdp_set_elem_free(struct nftdp_set *s, struct set_elem *e);
/* control path: e, unlinked now, is freed after a grace period that
 * begins after now (goes on s->dead in the open retire batch) */
void nftdp_set_elem_retire(struct nftdp_set *s, struct set_elem *e);
/* the open retire batch: what is retired now is tagged with it */
uint64_t nftdp_set_retire_batch(void);

#endif /* NFTDP_SETS_PRIV_H */
