// SPDX-License-Identifier: BSD-3-Clause
/*
 * The stateful arena: what survives generations. Counters are per-worker
 * rows of struct nftdp_vm_counter (one writer each, summed here); quota,
 * limit, last and numgen live in shared 64-byte cells updated with atomics.
 * A string key -> slot map (control thread only) lets a recompiled rule or
 * object find its old slot; docs/vm.md has the long form.
 */
#include <stdlib.h>

#include "vm_priv.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

int nftdp_vm_state_create(const struct nftdp_vm_state_config *cfg, struct nftdp_vm_state **out)
{
	struct nftdp_vm_state *st;
	size_t csize;

	if (!cfg || cfg->n_workers == 0 || cfg->max_counters == 0 || cfg->max_cells == 0)
		return -EINVAL;
	if (cfg->log_ring_size & (cfg->log_ring_size - 1))
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->n_workers = cfg->n_workers;
	st->max_counters = cfg->max_counters;
	st->max_cells = cfg->max_cells;
	st->log_ring_size = cfg->log_ring_size ? cfg->log_ring_size : 256;
	st->hash_seed = cfg->hash_seed;
	/* rows start on a cache line: 4 slots of 16 bytes per line */
	st->counter_stride = (cfg->max_counters + 3) & ~(size_t)3;
	csize = st->counter_stride * cfg->n_workers * sizeof(struct nftdp_vm_counter);
	st->counters = aligned_alloc(64, csize);
	st->cells = aligned_alloc(64, (size_t)cfg->max_cells * sizeof(struct nftdp_vm_cell));
	st->counter_used = calloc(cfg->max_counters, 1);
	st->counter_base = calloc(cfg->max_counters, sizeof(*st->counter_base));
	st->cell_used = calloc(cfg->max_cells, 1);
	st->map_cap = 64;
	while (st->map_cap < 2 * ((size_t)cfg->max_counters + cfg->max_cells))
		st->map_cap *= 2;
	st->map = calloc(st->map_cap, sizeof(*st->map));
	st->logs = aligned_alloc(64, cfg->n_workers * sizeof(*st->logs));
	if (!st->counters || !st->cells || !st->counter_used || !st->counter_base ||
	    !st->cell_used || !st->map || !st->logs)
		goto err_alloc;
	memset(st->counters, 0, csize);
	memset(st->cells, 0, (size_t)cfg->max_cells * sizeof(struct nftdp_vm_cell));
	memset(st->logs, 0, cfg->n_workers * sizeof(*st->logs));
	for (unsigned int w = 0; w < cfg->n_workers; w++) {
		st->logs[w].ev = calloc(st->log_ring_size, sizeof(struct nftdp_vm_log_event));
		if (!st->logs[w].ev)
			goto err_alloc;
	}
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
	if (st->logs)
		for (unsigned int w = 0; w < st->n_workers; w++)
			free(st->logs[w].ev);
	free(st->logs);
	if (st->map)
		for (size_t i = 0; i < st->map_cap; i++)
			free(st->map[i].key);
	free(st->map);
	free(st->counter_used);
	free(st->counter_base);
	free(st->cell_used);
	free(st->cells);
	free(st->counters);
	free(st);
}

uint64_t nftdp_vm_state_gen_begin(struct nftdp_vm_state *st)
{
	return ++st->gen;
}

static struct nftdp_vm_slot_ent *map_find(struct nftdp_vm_state *st, const char *key, bool *found)
{
	size_t mask = st->map_cap - 1, i = fnv1a(key) & mask;
	struct nftdp_vm_slot_ent *tomb = NULL;

	for (size_t n = 0; n < st->map_cap; n++, i = (i + 1) & mask) {
		struct nftdp_vm_slot_ent *ent = &st->map[i];

		if (!ent->key) {
			if (ent->kind == 0) { /* never used: end of probe */
				*found = false;
				return tomb ? tomb : ent;
			}
			if (!tomb)
				tomb = ent;
			continue;
		}
		if (strcmp(ent->key, key) == 0) {
			*found = true;
			return ent;
		}
	}
	*found = false;
	return tomb;
}

static int alloc_index(uint8_t *used, unsigned int max, uint32_t *idx)
{
	for (unsigned int i = 0; i < max; i++) {
		if (!used[i]) {
			used[i] = 1;
			*idx = i;
			return 0;
		}
	}
	return -ENOSPC;
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
	bool found;
	int rc;

	ent = map_find(st, key, &found);
	if (ent)
		*ent_idx = (uint32_t)(ent - st->map); /* the map never moves entries */
	if (found && ent->kind == kind) {
		ent->gen = st->gen;
		*slot = ent->index;
		*created = false;
		return 0;
	}
	if (found) /* same key, other kind (rule replaced): new slot */
		return -EEXIST;
	if (!ent)
		return -ENOSPC;
	if (kind == NFTDP_VM_SLOT_COUNTER)
		rc = alloc_index(st->counter_used, st->max_counters, slot);
	else
		rc = alloc_index(st->cell_used, st->max_cells, slot);
	if (rc < 0)
		return rc;
	ent->key = strdup(key);
	if (!ent->key) {
		(kind == NFTDP_VM_SLOT_COUNTER ? st->counter_used : st->cell_used)[*slot] = 0;
		return -ENOMEM;
	}
	ent->kind = kind;
	ent->index = *slot;
	ent->gen = st->gen;
	st->map_len++;
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
		if (ent->kind == NFTDP_VM_SLOT_COUNTER)
			st->counter_used[ent->index] = 0;
		else
			st->cell_used[ent->index] = 0;
		free(ent->key);
		ent->key = NULL; /* kind stays non-zero: tombstone */
		st->map_len--;
		n++;
	}
	return n;
}

static int read_slot(struct nftdp_vm_state *st, const char *key, bool reset,
		     struct nftdp_vm_stateful_val *out)
{
	struct nftdp_vm_slot_ent *ent;
	bool found;

	memset(out, 0, sizeof(*out));
	ent = map_find(st, key, &found);
	if (!found)
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
	bool found;

	ent = map_find(st, key, &found);
	if (!found)
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
	return 0;
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
