/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp sets: the backends behind nf_tables sets and maps.
 *
 * A set holds keys of key_size bytes laid out as the VM's registers hold
 * them: a concatenation is its fields in order, each padded to a multiple of
 * 4 bytes (NFT_REG32_SIZE). Maps also hold data_size bytes of data per key
 * (a verdict for verdict maps: struct nftdp_set_verdict).
 *
 * Usage: nftdp_set_create() picks a backend from the description (hash for
 * exact keys, bitmap for small keys, interval structures for NFT_SET_INTERVAL,
 * concatenated ranges for interval sets with several fields), then the control
 * thread inserts and removes elements inside a transaction and calls
 * nftdp_set_commit() or nftdp_set_abort(). Workers call nftdp_set_lookup()
 * or nftdp_set_lookup_bulk(), and nftdp_set_dp_update() for dynset.
 *
 * Threading: one control thread writes (create, insert, remove, commit,
 * abort, gc, reclaim, walk, destroy). Any number of workers read (lookup*)
 * and update (dp_update) concurrently: an element inserted since the last
 * commit is invisible to them until nftdp_set_commit(); one removed stays
 * visible until then. Each element carries the generation it appears in and
 * the one it disappears in; a lookup reads the set's generation once, so one
 * lookup_bulk call sees exactly one committed state. Memory that a commit,
 * abort or gc unlinks is freed only after an RCU grace period (rte_rcu_qsbr
 * in the caller) that began after the unlink: nftdp_set_grace_begin()
 * closes the batch of everything unlinked so far, in every set, before the
 * caller takes its token, and nftdp_set_grace_end() frees it once the
 * token has passed (vm/generation.c does both with the generation domain's QSBR
 * variable). One grace period serves the whole batch.
 *
 * Packet-path calls: nftdp_set_lookup(), nftdp_set_lookup_bulk(),
 * nftdp_set_dp_update(). They never allocate, lock or make syscalls.
 */
#ifndef NFTDP_SETS_H
#define NFTDP_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NFTDP_SET_KEY_MAX 64   /* bytes, as NFT_DATA_VALUE_MAXLEN */
#define NFTDP_SET_DATA_MAX 160 /* map data (64) and per-element expressions (96) */
#define NFTDP_SET_FIELDS_MAX 16
#define NFTDP_SET_BULK_MAX 64 /* as NFTDP_BURST_MAX */

struct nftdp_set;

/** Data of a verdict map element (data_size = sizeof(struct nftdp_set_verdict)). */
struct nftdp_set_verdict {
	int32_t code;	/**< NF_ACCEPT, NF_DROP, NFT_JUMP, NFT_GOTO, NFT_RETURN, ... */
	uint32_t chain; /**< chain id for NFT_JUMP / NFT_GOTO, resolved by vm/ */
};

/** What the control plane knows about a set (NFTA_SET_*). */
struct nftdp_set_desc {
	uint32_t flags;	    /**< NFT_SET_INTERVAL, MAP, TIMEOUT, EVAL, OBJECT, CONCAT, CONSTANT */
	uint32_t key_size;  /**< bytes (NFTA_SET_KEY_LEN), 1..NFTDP_SET_KEY_MAX */
	uint32_t data_size; /**< bytes of data per element, 0 for sets */
	uint8_t n_fields;   /**< concat fields; 0 or 1 = one field of key_size */
	uint8_t field_size[NFTDP_SET_FIELDS_MAX]; /**< unpadded byte length of each field */
	uint32_t max_elems;			  /**< 0 = unlimited (NFTA_SET_DESC_SIZE) */
	uint64_t timeout_ms;			  /**< default element timeout, 0 = none */
	uint32_t policy;	 /**< NFT_SET_POL_PERFORMANCE / NFT_SET_POL_MEMORY */
	uint32_t expected_elems; /**< sizing hint */
};

/** nftdp_set_dp_update() operations, as NFT_DYNSET_OP_*. */
enum {
	NFTDP_SET_DP_ADD = 0,
	NFTDP_SET_DP_UPDATE = 1,
	NFTDP_SET_DP_DELETE = 2,
};

/**
 * Create a set. Control path.
 * @param desc  description; copied.
 * @param out   the new set.
 * @return 0, -EINVAL (bad key/data size, fields that do not add up to
 *   key_size), -EOPNOTSUPP (no backend supports the flags), -ENOMEM.
 */
int nftdp_set_create(const struct nftdp_set_desc *desc, struct nftdp_set **out);

/** Free a set and all its elements. Control path; no reader may use it any more. */
void nftdp_set_destroy(struct nftdp_set *s);

/** Name of the chosen backend: "hash", "bitmap", "interval", "concat_range". */
const char *nftdp_set_backend_name(const struct nftdp_set *s);

/**
 * Add an element in the pending transaction. Control path.
 * @param key      key_size bytes.
 * @param key_end  inclusive end of a range (INTERVAL sets; per field for
 *   concatenations); NULL for a single key.
 * @param data     data_size bytes for maps, else NULL.
 * @param timeout_ms  0 = the set's default timeout (or none).
 * @param elem_flags  NFT_SET_ELEM_* flags, kept for dumps.
 * @param excl     NLM_F_EXCL.
 * @return 0; -EEXIST (identical element exists and excl); -EBUSY (same key,
 *   different data); -ENOTEMPTY (overlapping interval); -ENFILE (max_elems
 *   reached); -EINVAL (end < start, range on a non-interval set);
 *   -EOPNOTSUPP (timeout on a set without NFT_SET_TIMEOUT); -ENOMEM.
 */
int nftdp_set_insert(struct nftdp_set *s, const void *key, const void *key_end, const void *data,
		     uint64_t timeout_ms, uint32_t elem_flags, bool excl);

/**
 * Remove an element in the pending transaction. Control path.
 * @return 0, -ENOENT if no such element is in the pending state.
 */
int nftdp_set_remove(struct nftdp_set *s, const void *key, const void *key_end);

/**
 * Remove the catch-all element (nft's `*`; inserted with elem_flags
 * NFT_SET_ELEM_CATCHALL, key ignored) in the pending transaction. A lookup
 * that finds no key returns the catch-all, as found. Control path.
 * @return 0, -ENOENT if there is none in the pending state.
 */
int nftdp_set_remove_catchall(struct nftdp_set *s);

/**
 * The set's part of a commit: its pending changes are final, but visible
 * only to readers of the generation nftdp_set_gen_next() names, which
 * nftdp_set_gen_publish() makes current. Several sets committed this way
 * switch together (the kernel's one gencursor for every set). Control
 * path; cannot fail.
 */
void nftdp_set_commit_stage(struct nftdp_set *s);

/**
 * The set generation the next nftdp_set_gen_publish() makes current: what
 * a VM generation built for this commit carries and its lookups pass.
 * Control path.
 */
uint64_t nftdp_set_gen_next(void);

/**
 * Make the staged changes of every set the current state for lookups that
 * pass no generation (0); those that pass one see them from that
 * generation on. One cursor for all sets, one control thread writes it.
 * Control path; cannot fail.
 */
void nftdp_set_gen_publish(void);

/** nftdp_set_commit_stage(s) then nftdp_set_gen_publish(): one set's
 * changes visible to readers at once. Control path; cannot fail. */
void nftdp_set_commit(struct nftdp_set *s);

/** Drop every pending change. Control path. */
void nftdp_set_abort(struct nftdp_set *s);

/**
 * Free everything s unlinked so far, and unlink its committed deletions
 * that no reader can see (freed by a later call). Control path. Call it
 * only after a grace period that began after the last commit, abort or gc
 * of s; with a generation domain, use nftdp_set_grace_* instead.
 */
void nftdp_set_reclaim(struct nftdp_set *s);

/** A grace period for set memory, between nftdp_set_grace_begin() and _end(). */
struct nftdp_set_grace {
	uint64_t seq; /**< the retire batch it closed */
	uint64_t gen; /**< no reader that begins later reads an older set generation */
};

/**
 * Close the batch of what every set unlinked since the last call (gc,
 * abort, committed deletions unlinked by an end, replaced tables and index
 * nodes), and note that committed deletions up to set generation gen may
 * be unlinked once the grace period ends. Call it, then take the token
 * (rte_rcu_qsbr_start); nothing may be unlinked in between. Control path.
 * @param gen  the set generation the current VM generation carries (0:
 *   the cursor); readers that begin from now on read no older one.
 * @return false when nothing waits (no grace period needed).
 */
bool nftdp_set_grace_begin(struct nftdp_set_grace *g, uint64_t gen);

/**
 * The grace period of g has ended (rte_rcu_qsbr_check passed): free every
 * batch up to g's, and unlink the committed deletions no reader sees any
 * more (they wait for the next grace period). Ending a later g covers the
 * earlier ones. Control path.
 */
void nftdp_set_grace_end(const struct nftdp_set_grace *g);

/**
 * The two above in the shape of the VM generation domain's grace hooks
 * (nftdp_vm_gen_domain_grace): the grace period travels as cookie[0] (seq)
 * and cookie[1] (gen). arg is unused. Control path.
 */
bool nftdp_set_grace_hook_begin(void *arg, uint64_t set_gen, uint64_t cookie[2]);
void nftdp_set_grace_hook_end(void *arg, const uint64_t cookie[2]);

/** Elements of s deleted, expired or aborted whose memory is not free yet. Control path. */
uint32_t nftdp_set_retired_len(const struct nftdp_set *s);

/**
 * Retire expired and packet-path-deleted elements (the kernel's set gc):
 * unlinked now, freed after a grace period that begins after this call.
 * Control path.
 * @return number of elements retired.
 */
unsigned nftdp_set_gc(struct nftdp_set *s, uint64_t now_ms);

/**
 * nftdp_set_gc() that also retires the committed elements whose data
 * dead() calls dead (the kernel's set gc asking the element's expressions,
 * nft_rhash_expr_needs_gc_run: a `ct count` with no connection left).
 * Control path.
 * @return number of elements retired.
 */
unsigned nftdp_set_gc_data(struct nftdp_set *s, uint64_t now_ms,
			   bool (*dead)(void *data, void *arg), void *arg);

/**
 * What an element's data owns outside the set (a per-element expression's
 * connection list, vm/elem_expr.c): release(data, arg) runs once for each
 * element that held data when it is freed for good (after its grace
 * period, or with the set), never for one that was never published.
 * Control path.
 */
void nftdp_set_elem_release_hook(struct nftdp_set *s, void (*release)(void *data, void *arg),
				 void *arg);

/**
 * One object the set keeps for its users (the per-element lists' blocks),
 * freed by free_fn when the set is destroyed, after every element.
 * nftdp_set_side() is NULL until nftdp_set_side_set(). Control path.
 */
void *nftdp_set_side(const struct nftdp_set *s);
void nftdp_set_side_set(struct nftdp_set *s, void *side, void (*free_fn)(void *side));

/**
 * How many elements the set can hold at once: its dp pool (elements the
 * packet path adds) where it has one, else max_elems, UINT32_MAX unlimited.
 */
uint32_t nftdp_set_capacity(const struct nftdp_set *s);

/**
 * Look up one key. Packet path; safe from any number of threads.
 * @param data  if not NULL and the set is a map, set to the element's data
 *   (valid until the caller's next quiescent state).
 * @param now_ms  CLOCK_MONOTONIC milliseconds; expired elements miss.
 */
bool nftdp_set_lookup(const struct nftdp_set *s, const void *key, const void **data,
		      uint64_t now_ms);

/**
 * nftdp_set_lookup() in set generation gen (the one the caller's VM
 * generation carries; 0: the current one), so that every set a burst looks
 * into shows the same commit. Packet path.
 */
bool nftdp_set_lookup_gen(const struct nftdp_set *s, const void *key, const void **data,
			  uint64_t now_ms, uint64_t gen);

/**
 * nftdp_set_lookup_gen() without the data: whether key is in s (an element
 * or the catch-all). The VM's lookup in a plain set; packet path.
 */
bool nftdp_set_contains_gen(const struct nftdp_set *s, const void *key, uint64_t now_ms,
			    uint64_t gen);

/** A function answering nftdp_set_contains_gen() for one set. */
typedef bool (*nftdp_set_contains_t)(const struct nftdp_set *s, const void *key, uint64_t now_ms,
				     uint64_t gen);

/**
 * What nftdp_set_contains_gen() calls for s once gen is read: for a gen
 * other than 0, fn(s, key, now_ms, gen) is nftdp_set_contains_gen(s, key,
 * now_ms, gen) without the step between (gen 0 must go through
 * nftdp_set_contains_gen). Fixed for the set's life (its backend is chosen
 * at create), so the VM keeps it with its lookups. Control path.
 */
nftdp_set_contains_t nftdp_set_contains_fn(const struct nftdp_set *s);

/**
 * Look up n <= NFTDP_SET_BULK_MAX keys. Packet path; safe from any number of
 * threads. data[i] is set for hits when data is not NULL; bit i of *hit_mask
 * is set for a hit. @return the number of hits.
 */
unsigned nftdp_set_lookup_bulk(const struct nftdp_set *s, const void *const keys[], unsigned n,
			       const void *data[], uint64_t now_ms, uint64_t *hit_mask);

/**
 * Add, update or delete an element from the packet path (nft_dynset),
 * effective at once, outside transactions. Safe from several workers at a
 * time; lock-free, never blocks. Only the hash backend supports it.
 * @param data  data_size bytes for maps (used when the element is new).
 * @param timeout_ms  0 = the set's default.
 * @return 0; -ENFILE (set full, or the element pool is empty); -ENOENT
 *   (DELETE of an absent key); -EOPNOTSUPP (backend without updates);
 *   -EAGAIN (lost a race with another worker adding the same key).
 */
int nftdp_set_dp_update(struct nftdp_set *s, const void *key, const void *data, uint64_t timeout_ms,
			uint64_t now_ms, int op);

/**
 * nftdp_set_dp_update() that also hands out the data of the element added
 * or found by an add or update, for the element's own state (per-element
 * expressions: the caller updates it with atomics). Packet path.
 * @param elem_data  set on success of an add or update when not NULL;
 *   valid until the caller's next quiescent state.
 */
int nftdp_set_dp_update_elem(struct nftdp_set *s, const void *key, const void *data,
			     uint64_t timeout_ms, uint64_t now_ms, int op, void **elem_data);

/**
 * One element of the committed state by its exact key, as nftdp_set_walk()
 * would show it (get element of an element the packet path added).
 * Control path; sets without ranges only.
 * @return false when there is none (or it has expired).
 */
bool nftdp_set_get(const struct nftdp_set *s, const void *key, const void **data,
		   uint64_t *expires_ms, uint64_t *timeout_ms);

/** Callback of nftdp_set_walk(); a non-zero return stops the walk. */
typedef int (*nftdp_set_walk_cb)(const void *key, const void *key_end, const void *data,
				 uint64_t expires_ms, uint64_t timeout_ms, uint32_t flags,
				 void *arg);

/**
 * Visit every element of the committed state that has not expired, for
 * dumps. Control path. key_end is NULL for elements without a range;
 * expires_ms is 0 for elements without a timeout, timeout_ms the timeout
 * the element was given (or the set's default).
 * @return the callback's non-zero value, or 0.
 */
int nftdp_set_walk(const struct nftdp_set *s, nftdp_set_walk_cb cb, void *arg);

/**
 * One nf_tables interval element as nft sends it for a one-field interval
 * set: a start, or an end (NFT_SET_ELEM_INTERVAL_END) one past the last key
 * of the range below it. See nftdp_set_interval_ranges().
 */
struct nftdp_set_interval_elem {
	const uint8_t *key; /**< key_size bytes, network byte order */
	uint8_t *last;	    /**< a start's range end (inclusive), filled in; unused for ends */
	bool end;	    /**< NFT_SET_ELEM_INTERVAL_END */
	void *opaque;	    /**< the caller's element */
};

/**
 * Where the caller's set has a key above key among the elements not in the
 * batch: the smallest such key, or NULL.
 */
typedef const uint8_t *(*nftdp_set_interval_above_cb)(const uint8_t *key, void *arg);

/**
 * Turn the interval elements a batch adds (starts and ends, as the kernel's
 * rbtree keeps them) into ranges for nftdp_set_insert(). Sorts v by key, an
 * end before a start at the same key, then gives every start the last key
 * of its range: one below the next element in that order, start or end
 * (nft sends no end where a range stops just below the next one), or, for
 * the last element, one below what above() returns, or the maximum key
 * when above() returns NULL or is NULL (a range open to the top of the key
 * space). Ends make no range. Control path.
 * @param v         n elements, sorted in place.
 * @param key_size  bytes of each key, 1..NFTDP_SET_KEY_MAX.
 * @param above     the set's next key beyond the batch, or NULL; called at
 *   most once, for a last element that is a start.
 */
void nftdp_set_interval_ranges(struct nftdp_set_interval_elem *v, size_t n, uint32_t key_size,
			       nftdp_set_interval_above_cb above, void *arg);

/** Number of elements in the pending state (the kernel's nelems). Control path. */
uint32_t nftdp_set_count(const struct nftdp_set *s);

/**
 * Replace the control-path clock (default CLOCK_MONOTONIC in ms) used to
 * stamp timeouts of nftdp_set_insert() and for gc of conflicting elements.
 * For tests.
 */
void nftdp_set_clock_override(uint64_t (*now_ms)(void));

#endif /* NFTDP_SETS_H */
