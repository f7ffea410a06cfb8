// SPDX-License-Identifier: BSD-3-Clause
/*
 * The stateful arena: what survives generations. Counters are per-worker
 * rows of struct nftdp_vm_counter (one writer each, summed here); quota,
 * limit, last and numgen live in shared 64-byte cells updated with atomics.
 * A string key -> slot map (control thread only) lets a recompiled rule or
 * object find its old slot; docs/vm.md has the long form.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "vm_priv.h"

/* The slot map's keys are heap strings held in reserved (mmap'd) memory,
 * which LeakSanitizer does not scan unless told: without this every live
 * key reads as leaked in the sanitizer builds and the fuzzers. */
#if defined(__SANITIZE_ADDRESS__)
#define NFTDP_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define NFTDP_LSAN 1
#endif
#endif
#ifdef NFTDP_LSAN
#include <sanitizer/lsan_interface.h>
#define lsan_root(p, n)                                                                            \
	do {                                                                                       \
		if (p)                                                                             \
			__lsan_register_root_region((p), (n));                                     \
	} while (0)
#define lsan_unroot(p, n)                                                                          \
	do {                                                                                       \
		if (p)                                                                             \
			__lsan_unregister_root_region((p), (n));                                   \
	} while (0)
#else
#define lsan_root(p, n) ((void)(p), (void)(n))
#define lsan_unroot(p, n) ((void)(p), (void)(n))
#endif

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* Address space for n bytes, zero-filled, materialised page by page on first
 * touch (MAP_NORESERVE: the ceiling costs no memory until it is used). */
static void *reserve(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unreserve(void *p, size_t n)
{
	if (p)
		munmap(p, n ? n : 1);
}

void *nftdp_vm_worker_rings_alloc(unsigned int n_workers, size_t slot_size, size_t buf_off,
				  size_t buf_size)
{
	size_t size = (size_t)n_workers * slot_size;
	char *slots;

	/* aligned_alloc wants a multiple of the alignment */
	size = (size + 63) & ~(size_t)63;
	buf_size = (buf_size + 63) & ~(size_t)63;
	slots = aligned_alloc(64, size ? size : 64);
	if (!slots)
		return NULL;
	memset(slots, 0, size);
	for (unsigned int w = 0; w < n_workers; w++) {
		void *buf = aligned_alloc(64, buf_size);

		if (!buf) {
			nftdp_vm_worker_rings_free(slots, w, slot_size, buf_off);
			return NULL;
		}
		memset(buf, 0, buf_size);
		memcpy(slots + (size_t)w * slot_size + buf_off, &buf, sizeof(buf));
	}
	return slots;
}

void nftdp_vm_worker_rings_free(void *slots, unsigned int n_workers, size_t slot_size,
				size_t buf_off)
{
	if (!slots)
		return;
	for (unsigned int w = 0; w < n_workers; w++) {
		void *buf;

		memcpy(&buf, (char *)slots + (size_t)w * slot_size + buf_off, sizeof(buf));
		free(buf);
	}
	free(slots);
}

static size_t counters_size(const struct nftdp_vm_state *st)
{
	return st->counter_stride * st->n_workers * sizeof(struct nftdp_vm_counter);
}

#define HIDX_EMPTY 0u
#define HIDX_DEAD UINT32_MAX

int nftdp_vm_state_create(const struct nftdp_vm_state_config *cfg, struct nftdp_vm_state **out)
{
	struct nftdp_vm_state *st;

	if (!cfg || cfg->n_workers == 0 || cfg->max_counters == 0 || cfg->max_cells == 0)
		return -EINVAL;
	if (cfg->log_ring_size & (cfg->log_ring_size - 1))
		return -EINVAL;
	if (cfg->trace_ring_size & (cfg->trace_ring_size - 1))
		return -EINVAL;
	if (cfg->nflog_ring_size & (cfg->nflog_ring_size - 1))
		return -EINVAL;
	if (cfg->max_counters >= HIDX_DEAD / 2 || cfg->max_cells >= HIDX_DEAD / 2)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->n_workers = cfg->n_workers;
	st->local_stack = cfg->local_stack;
	st->max_counters = cfg->max_counters;
	st->max_cells = cfg->max_cells;
	st->log_ring_size = cfg->log_ring_size ? cfg->log_ring_size : 256;
	st->hash_seed = cfg->hash_seed;
	/* rows start on a cache line: 4 slots of 16 bytes per line */
	st->counter_stride = (cfg->max_counters + 3) & ~(size_t)3;
	st->max_ents = (size_t)cfg->max_counters + cfg->max_cells;
	/* the ceilings are address space only (reserve): memory follows use */
	st->counters = reserve(counters_size(st));
	st->cells = reserve((size_t)cfg->max_cells * sizeof(struct nftdp_vm_cell));
	st->counter_used = reserve(cfg->max_counters);
	st->counter_base = reserve((size_t)cfg->max_counters * sizeof(*st->counter_base));
	st->cell_used = reserve(cfg->max_cells);
	st->counter_free = reserve((size_t)cfg->max_counters * sizeof(uint32_t));
	st->cell_free = reserve((size_t)cfg->max_cells * sizeof(uint32_t));
	st->map = reserve(st->max_ents * sizeof(*st->map));
	lsan_root(st->map, st->max_ents * sizeof(*st->map));
	st->ent_free = reserve(st->max_ents * sizeof(uint32_t));
	st->hcap = 64;
	st->hidx = calloc(st->hcap, sizeof(*st->hidx));
	st->logs = nftdp_vm_worker_rings_alloc(
	    cfg->n_workers, sizeof(*st->logs), offsetof(struct nftdp_vm_log_ring, ev),
	    st->log_ring_size * sizeof(struct nftdp_vm_log_event));
	if (!st->counters || !st->cells || !st->counter_used || !st->counter_base ||
	    !st->cell_used || !st->counter_free || !st->cell_free || !st->map || !st->ent_free ||
	    !st->hidx || !st->logs)
		goto err_alloc;
	if (nftdp_vm_trace_rings_create(st, cfg->trace_ring_size))
		goto err_alloc;
	if (nftdp_vm_nflog_rings_create(st, cfg->nflog_ring_size))
		goto err_alloc;
	*out = st;
	return 0;

err_alloc:
	nftdp_vm_state_destroy(st);
	return -ENOMEM;
}

void nftdp_vm_state_destroy(struct nftdp_vm_state *st)
{
	if (!st)
		return;
	nftdp_vm_worker_rings_free(st->logs, st->n_workers, sizeof(*st->logs),
				   offsetof(struct nftdp_vm_log_ring, ev));
	nftdp_vm_trace_rings_destroy(st);
	nftdp_vm_nflog_rings_destroy(st);
	if (st->map)
		for (size_t i = 0; i < st->map_cap; i++)
			free(st->map[i].key);
	lsan_unroot(st->map, st->max_ents * sizeof(*st->map));
	unreserve(st->map, st->max_ents * sizeof(*st->map));
	unreserve(st->ent_free, st->max_ents * sizeof(uint32_t));
	free(st->hidx);
	free(st->born);
	unreserve(st->counter_used, st->max_counters);
	unreserve(st->counter_base, (size_t)st->max_counters * sizeof(*st->counter_base));
	unreserve(st->cell_used, st->max_cells);
	unreserve(st->counter_free, (size_t)st->max_counters * sizeof(uint32_t));
	unreserve(st->cell_free, (size_t)st->max_cells * sizeof(uint32_t));
	unreserve(st->cells, (size_t)st->max_cells * sizeof(struct nftdp_vm_cell));
	unreserve(st->counters, counters_size(st));
	free(st);
}

uint64_t nftdp_vm_state_gen_begin(struct nftdp_vm_state *st)
{
	st->n_born = 0;
	return ++st->gen;
}

/* The entry holding key, or NULL; *pos: its hash position, or where to add. */
static struct nftdp_vm_slot_ent *map_find(struct nftdp_vm_state *st, const char *key, size_t *pos)
{
	size_t mask = st->hcap - 1, i = fnv1a(key) & mask;
	size_t tomb = SIZE_MAX;

	for (size_t n = 0; n < st->hcap; n++, i = (i + 1) & mask) {
		uint32_t v = st->hidx[i];

		if (v == HIDX_EMPTY) {
			if (pos)
				*pos = tomb != SIZE_MAX ? tomb : i;
			return NULL;
		}
		if (v == HIDX_DEAD) {
			if (tomb == SIZE_MAX)
				tomb = i;
			continue;
		}
		if (strcmp(st->map[v - 1].key, key) == 0) {
			if (pos)
				*pos = i;
			return &st->map[v - 1];
		}
	}
	if (pos)
		*pos = tomb;
	return NULL;
}

/* Keep the index at most half full (live and deleted positions). */
static int hidx_grow(struct nftdp_vm_state *st)
{
	size_t cap = st->hcap, live = st->map_len;
	uint32_t *old = st->hidx;

	if ((st->hfill + 1) * 2 <= st->hcap)
		return 0;
	while ((live + 1) * 4 > cap)
		cap *= 2;
	st->hidx = calloc(cap, sizeof(*st->hidx));
	if (!st->hidx) {
		st->hidx = old;
		return -ENOMEM;
	}
	st->hcap = cap;
	st->hfill = 0;
	for (size_t e = 0; e < st->map_cap; e++) {
		size_t i;

		if (!st->map[e].key)
			continue;
		i = fnv1a(st->map[e].key) & (cap - 1);
		while (st->hidx[i] != HIDX_EMPTY)
			i = (i + 1) & (cap - 1);
		st->hidx[i] = (uint32_t)e + 1;
		st->hfill++;
	}
	free(old);
	return 0;
}

static void hidx_remove(struct nftdp_vm_state *st, const char *key)
{
	size_t pos;

	if (map_find(st, key, &pos))
		st->hidx[pos] = HIDX_DEAD; /* hfill unchanged: still occupied */
}

/* A free slot: the last one released, else the next never used. */
static int alloc_index(uint32_t *free_stack, uint32_t *n_free, uint32_t *hwm, unsigned int max,
		       uint8_t *used, uint32_t *idx)
{
	if (*n_free)
		*idx = free_stack[--*n_free];
	else if (*hwm < max)
		*idx = (*hwm)++;
	else
		return -ENOSPC; /* the configured ceiling */
	used[*idx] = 1;
	return 0;
}

static void release_slot(struct nftdp_vm_state *st, const struct nftdp_vm_slot_ent *ent)
{
	if (ent->kind == NFTDP_VM_SLOT_COUNTER) {
		st->counter_used[ent->index] = 0;
		st->counter_free[st->n_counter_free++] = ent->index;
	} else {
		st->cell_used[ent->index] = 0;
		st->cell_free[st->n_cell_free++] = ent->index;
	}
}

/* Drop entry e: its slot, its key, its place in the index. */
static void ent_release(struct nftdp_vm_state *st, struct nftdp_vm_slot_ent *ent)
{
	release_slot(st, ent);
	hidx_remove(st, ent->key);
	free(ent->key);
	ent->key = NULL;
	ent->pinned = false;
	st->ent_free[st->n_ent_free++] = (uint32_t)(ent - st->map);
	st->map_len--;
}

int nftdp_vm_state_get_slot(struct nftdp_vm_state *st, const char *key, uint8_t kind,
			    uint32_t *slot, bool *created)
{
	uint32_t ent;

	return nftdp_vm_state_get_slot_ent(st, key, kind, slot, created, &ent);
}

int nftdp_vm_state_get_slot_ent(struct nftdp_vm_state *st, const char *key, uint8_t kind,
				uint32_t *slot, bool *created, uint32_t *ent_idx)
{
	struct nftdp_vm_slot_ent *ent;
	size_t pos;
	uint32_t e;
	int rc;

	ent = map_find(st, key, NULL);
	if (ent && ent->kind == kind) {
		ent->gen = st->gen;
		*slot = ent->index;
		*ent_idx = (uint32_t)(ent - st->map);
		*created = false;
		return 0;
	}
	if (ent) /* same key, other kind (rule replaced): new slot */
		return -EEXIST;
	if (hidx_grow(st) < 0)
		return -ENOMEM;
	if (st->n_born == st->cap_born) {
		size_t cap = st->cap_born ? st->cap_born * 2 : 64;
		uint32_t *nb = realloc(st->born, cap * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		st->born = nb;
		st->cap_born = cap;
	}
	if (!st->n_ent_free && st->map_cap >= st->max_ents)
		return -ENOSPC;
	if (kind == NFTDP_VM_SLOT_COUNTER)
		rc = alloc_index(st->counter_free, &st->n_counter_free, &st->counter_hwm,
				 st->max_counters, st->counter_used, slot);
	else
		rc = alloc_index(st->cell_free, &st->n_cell_free, &st->cell_hwm, st->max_cells,
				 st->cell_used, slot);
	if (rc < 0)
		return rc;
	e = st->n_ent_free ? st->ent_free[--st->n_ent_free] : (uint32_t)st->map_cap++;
	ent = &st->map[e];
	ent->kind = kind;
	ent->index = *slot;
	ent->key = strdup(key);
	if (!ent->key) {
		release_slot(st, ent);
		st->ent_free[st->n_ent_free++] = e;
		return -ENOMEM;
	}
	ent->pinned = false;
	ent->gen = st->gen;
	map_find(st, key, &pos); /* not there: pos is where it goes */
	if (st->hidx[pos] == HIDX_EMPTY)
		st->hfill++;
	st->hidx[pos] = e + 1;
	st->map_len++;
	st->born[st->n_born++] = e;
	*ent_idx = e;
	/* a fresh slot starts from zero for every worker */
	if (kind == NFTDP_VM_SLOT_COUNTER) {
		for (unsigned int w = 0; w < st->n_workers; w++)
			*nftdp_vm_counter_slot(st, w, *slot) = (struct nftdp_vm_counter){0, 0};
		st->counter_base[*slot] = (struct nftdp_vm_counter){0, 0};
	} else {
		memset(&st->cells[*slot], 0, sizeof(st->cells[*slot]));
	}
	*created = true;
	return 0;
}

unsigned int nftdp_vm_state_gen_abort(struct nftdp_vm_state *st, uint64_t gen)
{
	unsigned int n = 0;

	if (!st || gen != st->gen)
		return 0;
	/* only the unpublished generation used them: no worker can */
	for (size_t i = st->n_born; i-- > 0;) {
		struct nftdp_vm_slot_ent *ent = &st->map[st->born[i]];

		if (!ent->key || ent->pinned || ent->gen != gen)
			continue;
		ent_release(st, ent);
		n++;
	}
	st->n_born = 0;
	return n;
}

int nftdp_vm_state_rule_slot(struct nftdp_vm_cctx *cc, uint8_t kind, uint32_t *slot, bool *created)
{
	uint32_t ent;
	char key[600];
	int rc;

	if (!cc->st)
		return nftdp_vm_errf(cc, -EINVAL, "%s: stateful expression needs a state arena",
				     cc->expr_name);
	snprintf(key, sizeof(key), "r\n%u\n%s\n%llu\n%u", cc->chain->family, cc->chain->table,
		 (unsigned long long)cc->handle, cc->expr_index);
	rc = nftdp_vm_state_get_slot_ent(cc->st, key, kind, slot, created, &ent);
	if (rc == -EEXIST) {
		/* handle reused for another expression kind: keep the key unique */
		snprintf(key, sizeof(key), "r\n%u\n%s\n%llu\n%u\n%u", cc->chain->family,
			 cc->chain->table, (unsigned long long)cc->handle, cc->expr_index, kind);
		rc = nftdp_vm_state_get_slot_ent(cc->st, key, kind, slot, created, &ent);
	}
	if (rc == 0 && nftdp_vm_chain_note_slot(cc->chain, ent) < 0)
		rc = -ENOMEM;
	if (rc < 0)
		return nftdp_vm_errf(cc, rc, "%s: no free state slot", cc->expr_name);
	return 0;
}

void nftdp_vm_chain_keep(struct nftdp_vm_state *st, const struct nftdp_vm_chain *c)
{
	for (uint32_t i = 0; i < c->n_slot_ents; i++) {
		struct nftdp_vm_slot_ent *ent = &st->map[c->slot_ents[i]];

		if (ent->key)
			ent->gen = st->gen;
	}
}

unsigned int nftdp_vm_state_sweep(struct nftdp_vm_state *st, uint64_t keep_gen)
{
	unsigned int n = 0;

	for (size_t i = 0; i < st->map_cap; i++) {
		struct nftdp_vm_slot_ent *ent = &st->map[i];

		if (!ent->key || ent->gen >= keep_gen || ent->pinned)
			continue;
		ent_release(st, ent);
		n++;
	}
	return n;
}

static int read_slot(struct nftdp_vm_state *st, const char *key, bool reset,
		     struct nftdp_vm_stateful_val *out)
{
	struct nftdp_vm_slot_ent *ent;

	memset(out, 0, sizeof(*out));
	ent = map_find(st, key, NULL);
	if (!ent)
		return -ENOENT;
	if (ent->kind == NFTDP_VM_SLOT_COUNTER) {
		out->type = NFT_OBJECT_COUNTER;
		for (unsigned int w = 0; w < st->n_workers; w++) {
			struct nftdp_vm_counter *c = nftdp_vm_counter_slot(st, w, ent->index);

			out->packets += __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
			out->bytes += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
		}
		/* workers never see a reset: the control thread keeps the value
		 * at the last reset and lists the difference */
		out->packets -= st->counter_base[ent->index].packets;
		out->bytes -= st->counter_base[ent->index].bytes;
		if (reset) {
			st->counter_base[ent->index].packets += out->packets;
			st->counter_base[ent->index].bytes += out->bytes;
		}
		return 0;
	}
	struct nftdp_vm_cell *c = &st->cells[ent->index];

	out->type = c->type;
	switch (c->type) {
	case NFTDP_VM_CELL_QUOTA:
		out->bytes = c->quota.bytes;
		out->consumed = reset ? atomic_exchange(&c->quota.consumed, 0)
				      : atomic_load(&c->quota.consumed);
		break;
	case NFTDP_VM_CELL_LAST:
		out->last_set = atomic_load(&c->last.set);
		out->last_ms = atomic_load(&c->last.ms);
		break;
	default:
		break;
	}
	return 0;
}

int nftdp_vm_state_pin_counter(struct nftdp_vm_state *st, const char *key, uint64_t packets,
			       uint64_t bytes, uint32_t *slot)
{
	uint32_t ent;
	bool created;
	int rc;

	rc = nftdp_vm_state_get_slot_ent(st, key, NFTDP_VM_SLOT_COUNTER, slot, &created, &ent);
	if (rc < 0)
		return rc;
	st->map[ent].pinned = true;
	if (created) {
		struct nftdp_vm_counter *c = nftdp_vm_counter_slot(st, 0, *slot);

		c->packets = packets;
		c->bytes = bytes;
	}
	return 0;
}

void nftdp_vm_state_unpin(struct nftdp_vm_state *st, const char *key)
{
	struct nftdp_vm_slot_ent *ent;

	ent = map_find(st, key, NULL);
	if (!ent)
		return;
	ent->pinned = false;
	ent->gen = 0; /* the next sweep releases it */
}

int nftdp_vm_state_read_key(struct nftdp_vm_state *st, const char *key, bool reset,
			    struct nftdp_vm_stateful_val *out)
{
	return read_slot(st, key, reset, out);
}

int nftdp_vm_state_read_rule(struct nftdp_vm_state *st, uint8_t family, const char *table,
			     uint64_t handle, uint32_t expr_index, bool reset,
			     struct nftdp_vm_stateful_val *out)
{
	char key[600];

	snprintf(key, sizeof(key), "r\n%u\n%s\n%llu\n%u", family, table, (unsigned long long)handle,
		 expr_index);
	return read_slot(st, key, reset, out);
}

int nftdp_vm_state_read_obj(struct nftdp_vm_state *st, uint8_t family, const char *table,
			    const char *name, uint32_t type, bool reset,
			    struct nftdp_vm_stateful_val *out)
{
	char key[600];

	snprintf(key, sizeof(key), "o\n%u\n%s\n%s\n%u", family, table, name, type);
	return read_slot(st, key, reset, out);
}

int nftdp_vm_chain_stats(const struct nftdp_vm_chain *chain, struct nftdp_vm_state *st,
			 struct nftdp_vm_counter *out)
{
	memset(out, 0, sizeof(*out));
	if (chain->stats_slot < 0)
		return -ENOENT;
	for (unsigned int w = 0; w < st->n_workers; w++) {
		struct nftdp_vm_counter *c =
		    nftdp_vm_counter_slot(st, w, (uint32_t)chain->stats_slot);

		out->packets += __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
		out->bytes += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	}
	/* what the control thread set the chain to (nftdp_vm_state_set_chain) */
	out->packets -= st->counter_base[chain->stats_slot].packets;
	out->bytes -= st->counter_base[chain->stats_slot].bytes;
	return 0;
}

static struct nftdp_vm_slot_ent *chain_ent(struct nftdp_vm_state *st, uint8_t family,
					   const char *table, const char *name)
{
	struct nftdp_vm_slot_ent *ent;
	char key[600];

	/* the key nftdp_vm_chain_create gives a base chain's slot */
	snprintf(key, sizeof(key), "c\n%u\n%s\n%s", family, table, name);
	ent = map_find(st, key, NULL);
	return ent && ent->kind == NFTDP_VM_SLOT_COUNTER ? ent : NULL;
}

int nftdp_vm_state_read_chain(struct nftdp_vm_state *st, uint8_t family, const char *table,
			      const char *name, struct nftdp_vm_counter *out)
{
	struct nftdp_vm_stateful_val v;
	struct nftdp_vm_slot_ent *ent = chain_ent(st, family, table, name);

	memset(out, 0, sizeof(*out));
	if (!ent)
		return -ENOENT;
	read_slot(st, ent->key, false, &v);
	out->packets = v.packets;
	out->bytes = v.bytes;
	return 0;
}

static int set_counter(struct nftdp_vm_state *st, struct nftdp_vm_slot_ent *ent, uint64_t packets,
		       uint64_t bytes)
{
	struct nftdp_vm_counter raw = {0, 0};

	if (!ent || ent->kind != NFTDP_VM_SLOT_COUNTER)
		return -ENOENT;
	/* workers never see the change: the base makes the sum read as the
	 * value given (unsigned arithmetic wraps both ways) */
	for (unsigned int w = 0; w < st->n_workers; w++) {
		struct nftdp_vm_counter *c = nftdp_vm_counter_slot(st, w, ent->index);

		raw.packets += __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
		raw.bytes += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	}
	st->counter_base[ent->index].packets = raw.packets - packets;
	st->counter_base[ent->index].bytes = raw.bytes - bytes;
	return 0;
}

int nftdp_vm_state_set_chain(struct nftdp_vm_state *st, uint8_t family, const char *table,
			     const char *name, uint64_t packets, uint64_t bytes)
{
	return set_counter(st, chain_ent(st, family, table, name), packets, bytes);
}

int nftdp_vm_state_set_rule(struct nftdp_vm_state *st, uint8_t family, const char *table,
			    uint64_t handle, uint32_t expr_index, uint64_t packets, uint64_t bytes)
{
	char key[600];

	snprintf(key, sizeof(key), "r\n%u\n%s\n%llu\n%u", family, table, (unsigned long long)handle,
		 expr_index);
	return set_counter(st, map_find(st, key, NULL), packets, bytes);
}

/* ---- log rings: single producer (worker), single consumer (control) ---- */

void nftdp_vm_log_record(struct nftdp_vm_state *st, unsigned int worker,
			 const struct nftdp_vm_log_event *ev)
{
	struct nftdp_vm_log_ring *r;
	uint32_t head, tail;

	if (worker >= st->n_workers)
		return;
	r = &st->logs[worker];
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - tail >= st->log_ring_size) {
		r->lost++; /* worker-owned; read racily by the control thread */
		return;
	}
	r->ev[head & (st->log_ring_size - 1)] = *ev;
	/* publish the event before the index that makes it visible */
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

unsigned int nftdp_vm_log_poll(struct nftdp_vm_state *st, unsigned int worker,
			       void (*cb)(const struct nftdp_vm_log_event *ev, void *arg),
			       void *arg, uint64_t *lost)
{
	struct nftdp_vm_log_ring *r;
	uint32_t head, tail;
	unsigned int n = 0;

	if (worker >= st->n_workers)
		return 0;
	r = &st->logs[worker];
	head = atomic_load_explicit(&r->head, memory_order_acquire);
	tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	for (; tail != head; tail++, n++)
		cb(&r->ev[tail & (st->log_ring_size - 1)], arg);
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	if (lost)
		*lost = r->lost;
	return n;
}
