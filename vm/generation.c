// SPDX-License-Identifier: BSD-3-Clause
/*
 * Generations: build, publish and free the immutable whole of what workers
 * read (hook lists of base chains by priority, the chain table, set handles).
 * Publication is one release store of a pointer; retirement is DPDK's
 * rte_rcu_qsbr (the only DPDK use in vm/, kept out of nftdp_vm.h). Hook
 * traversal mirrors nf_hook_slow(), insertion by priority nf_hook_entries_grow().
 * docs/vm.md "Generations" has the long form.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <rte_rcu_qsbr.h>

#include "flowcache.h"
#include "nftdp_vm.h"
#include "rule_index.h"

#define GEN_MAX_CHAIN_ID (1u << 20) /* chain table entries; ids are dense in practice */

struct hook_entry {
	int32_t priority;
	bool dev_bound; /* netdev / inet ingress: only for devs[] */
	uint32_t n_devs;
	const uint32_t *devs; /* owned by the generation (owned_chain) */
	const struct nftdp_vm_chain *chain;
};

struct hook_list {
	uint32_t n, cap;
	struct hook_entry *e;
};

/* control-only bookkeeping of each chain the generation owns */
struct owned_chain {
	struct nftdp_vm_chain *chain;
	uint8_t family;
	bool base, nat;
	char *table, *name;
	uint32_t *devs;
	uint32_t n_devs;
};

struct on_free {
	void (*fn)(void *arg);
	void *arg;
};

struct nftdp_vm_gen {
	/* read by workers; immutable once built */
	uint64_t id;
	uint64_t set_gen;     /* set generation its lookups read (0: current) */
	uint32_t ct_families; /* 1 << NFPROTO_IPV4 / _IPV6: derived in build */
	bool shares_state;    /* some chain's state is seen by other rules: derived */
	bool order_free;      /* no chain's state shows packet order: derived */
	bool uses_fib;	      /* some chain has a fib expression: derived */
	bool uses_synproxy;   /* some chain runs synproxy: derived */
	bool reads_ct_table;  /* some chain reads conntrack's table: derived */
	struct hook_list hooks[NFTDP_VM_GEN_NFPROTO_MAX][NFTDP_VM_GEN_HOOK_MAX];
	struct hook_list nat[NFTDP_VM_GEN_NFPROTO_MAX][NFTDP_VM_GEN_HOOK_MAX];
	/* per-flow cache key templates of hooks that can use it (flowcache.c) */
	struct nftdp_vm_flow_plan *flow[NFTDP_VM_GEN_HOOK_MAX][NFTDP_VM_GEN_NFPROTO_MAX];
	struct nftdp_vm_chain **chains; /* by chain_id, NULL holes */
	uint32_t n_chains;
	struct nftdp_set **sets;
	uint32_t n_sets;
	/* control thread only */
	uint32_t cap_chains, cap_sets;
	struct owned_chain *owned;
	uint32_t n_owned, cap_owned;
	struct on_free *frees;
	uint32_t n_frees, cap_frees;
	struct nftdp_vm_gen *next_retired; /* deferred-free list */
	uint64_t token;			   /* QSBR token taken when retired */
};

struct nftdp_vm_gen_builder {
	struct nftdp_vm_state *st;
	const struct nftdp_vm_resolver *user;
	struct nftdp_vm_resolver res;
	struct nftdp_vm_gen *gen;
	uint8_t cur_family; /* of the rule being compiled: jumps stay in its table */
	uint32_t ct_noted;  /* ct_fams() of nftdp_vm_gen_note_ct families */
	int err;
	struct nftdp_vm_error first_err;
};

/* a grace period of set memory (sets' retire batch) behind a QSBR token */
struct set_grace {
	uint64_t token;
	uint64_t cookie[2];
};

struct nftdp_vm_gen_domain {
	/* The one word workers load: a line of its own, written only by publish. */
	alignas(64) _Atomic(struct nftdp_vm_gen *) current;
	alignas(64) struct nftdp_vm_state *st;
	unsigned int max_readers;
	struct nftdp_vm_gen *retired_head, *retired_tail;
	unsigned int n_retired;
	/* set memory's grace periods, oldest first: a ring of sg_cap (a power
	 * of two) from sg_head; the hooks that close and free its batches */
	bool (*grace_begin)(void *arg, uint64_t set_gen, uint64_t cookie[2]);
	void (*grace_end)(void *arg, const uint64_t cookie[2]);
	void *grace_arg;
	struct set_grace *sg;
	uint32_t sg_head, sg_n, sg_cap;
	struct rte_rcu_qsbr *v;
};

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 4;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, (size_t)ncap * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---------- building ---------- */

static void gen_free(struct nftdp_vm_gen *gen)
{
	for (uint32_t i = 0; i < gen->n_owned; i++) {
		nftdp_vm_chain_destroy(gen->owned[i].chain);
		free(gen->owned[i].table);
		free(gen->owned[i].name);
		free(gen->owned[i].devs);
	}
	for (uint32_t i = 0; i < gen->n_frees; i++)
		gen->frees[i].fn(gen->frees[i].arg);
	for (int f = 0; f < NFTDP_VM_GEN_NFPROTO_MAX; f++) {
		for (int h = 0; h < NFTDP_VM_GEN_HOOK_MAX; h++) {
			free(gen->hooks[f][h].e);
			free(gen->nat[f][h].e);
			nftdp_vm_flow_plan_free(gen->flow[h][f]);
		}
	}
	free(gen->owned);
	free(gen->chains);
	free(gen->sets);
	free(gen->frees);
	free(gen);
}

static struct owned_chain *find_owned(struct nftdp_vm_gen *gen, uint8_t family, const char *table,
				      const char *name)
{
	for (uint32_t i = 0; i < gen->n_owned; i++) {
		struct owned_chain *o = &gen->owned[i];

		if (o->family == family && !strcmp(o->name, name) && !strcmp(o->table, table))
			return o;
	}
	return NULL;
}

/*
 * The resolver compile sees: chains among the builder's own (the rule's
 * chain gives the family), sets and objects from the caller's resolver, and
 * every set handle it returns recorded in the generation.
 */
static struct nftdp_vm_chain *res_chain(void *opaque, const char *table, const char *name,
					uint32_t chain_id)
{
	struct nftdp_vm_gen_builder *b = opaque;
	struct nftdp_vm_gen *gen = b->gen;

	if (name && table) {
		/* jumps stay within the table, hence within its family */
		for (uint32_t i = 0; i < gen->n_owned; i++) {
			struct owned_chain *o = &gen->owned[i];

			if (o->family == b->cur_family && !strcmp(o->name, name) &&
			    !strcmp(o->table, table))
				return o->chain;
		}
	}
	if (b->user && b->user->chain)
		return b->user->chain(b->user->opaque, table, name, chain_id);
	return NULL;
}

static int res_set(void *opaque, const char *table, const char *name, uint32_t set_id,
		   struct nftdp_vm_set_info *out)
{
	struct nftdp_vm_gen_builder *b = opaque;
	struct nftdp_vm_gen *gen = b->gen;
	int rc;

	if (!b->user || !b->user->set)
		return -ENOENT;
	rc = b->user->set(b->user->opaque, table, name, set_id, out);
	if (rc < 0 || !out->set)
		return rc;
	for (uint32_t i = 0; i < gen->n_sets; i++)
		if (gen->sets[i] == out->set)
			return 0;
	if (grow((void **)&gen->sets, &gen->cap_sets, gen->n_sets + 1, sizeof(*gen->sets)) < 0)
		return -ENOMEM;
	gen->sets[gen->n_sets++] = out->set;
	return 0;
}

static const struct nftdp_vm_obj *res_obj(void *opaque, const char *table, const char *name,
					  uint32_t type)
{
	struct nftdp_vm_gen_builder *b = opaque;

	if (!b->user || !b->user->obj)
		return NULL;
	return b->user->obj(b->user->opaque, table, name, type);
}

int nftdp_vm_gen_builder_create(struct nftdp_vm_state *st, const struct nftdp_vm_resolver *res,
				struct nftdp_vm_gen_builder **out)
{
	struct nftdp_vm_gen_builder *b;

	if (!st || !out)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->gen = calloc(1, sizeof(*b->gen));
	if (!b->gen) {
		free(b);
		return -ENOMEM;
	}
	b->st = st;
	b->user = res;
	b->res = (struct nftdp_vm_resolver){b, res_chain, res_set, res_obj};
	b->gen->id = nftdp_vm_state_gen_begin(st);
	*out = b;
	return 0;
}

void nftdp_vm_gen_builder_destroy(struct nftdp_vm_gen_builder *b)
{
	if (!b)
		return;
	if (b->gen) {
		/* never built: its new state slots go back (a failed batch) */
		nftdp_vm_state_gen_abort(b->st, b->gen->id);
		gen_free(b->gen);
	}
	free(b);
}

/* insert before the first entry of equal or higher priority, as
 * nf_hook_entries_grow: of equal priorities the latest registered runs first */
static int hook_insert(struct hook_list *hl, int32_t priority, const struct nftdp_vm_chain *c,
		       const struct owned_chain *o, bool dev_bound)
{
	uint32_t i;

	if (grow((void **)&hl->e, &hl->cap, hl->n + 1, sizeof(*hl->e)) < 0)
		return -ENOMEM;
	for (i = hl->n; i > 0 && hl->e[i - 1].priority >= priority; i--)
		hl->e[i] = hl->e[i - 1];
	hl->e[i] = (struct hook_entry){priority, dev_bound, dev_bound ? o->n_devs : 0, o->devs, c};
	hl->n++;
	return 0;
}

static void hook_remove(struct hook_list *hl, const struct nftdp_vm_chain *c)
{
	for (uint32_t i = 0; i < hl->n; i++) {
		if (hl->e[i].chain == c) {
			memmove(&hl->e[i], &hl->e[i + 1], (hl->n - i - 1) * sizeof(*hl->e));
			hl->n--;
			return;
		}
	}
}

static int gen_chain_add(struct nftdp_vm_gen_builder *b, const struct nftdp_vm_chain_desc *desc,
			 int32_t priority, struct nftdp_vm_chain *reuse,
			 struct nftdp_vm_chain **out);

int nftdp_vm_gen_chain_create(struct nftdp_vm_gen_builder *b,
			      const struct nftdp_vm_chain_desc *desc, int32_t priority,
			      struct nftdp_vm_chain **out)
{
	return gen_chain_add(b, desc, priority, NULL, out);
}

int nftdp_vm_gen_chain_reuse(struct nftdp_vm_gen_builder *b, const struct nftdp_vm_chain_desc *desc,
			     int32_t priority, struct nftdp_vm_chain *chain)
{
	struct nftdp_vm_chain *out;

	if (!chain)
		return -EINVAL;
	return gen_chain_add(b, desc, priority, chain, &out);
}

static int gen_chain_add(struct nftdp_vm_gen_builder *b, const struct nftdp_vm_chain_desc *desc,
			 int32_t priority, struct nftdp_vm_chain *reuse,
			 struct nftdp_vm_chain **out)
{
	struct nftdp_vm_gen *gen;
	struct nftdp_vm_chain *c;
	struct owned_chain *o;
	uint8_t fams[2];
	int n_fams = 0, rc;

	if (!b || !desc || !desc->table || !desc->name || !out)
		return -EINVAL;
	gen = b->gen;
	if (desc->chain_id >= GEN_MAX_CHAIN_ID)
		return -EINVAL;
	if (desc->base) {
		if (desc->family >= NFTDP_VM_GEN_NFPROTO_MAX || desc->hook >= NFTDP_VM_GEN_HOOK_MAX)
			return -EINVAL;
		if (desc->family == NFPROTO_INET) {
			fams[n_fams++] = NFPROTO_IPV4;
			fams[n_fams++] = NFPROTO_IPV6;
		} else {
			fams[n_fams++] = desc->family;
		}
	}
	if (desc->chain_id < gen->n_chains && gen->chains[desc->chain_id])
		return -EEXIST;
	if (find_owned(gen, desc->family, desc->table, desc->name))
		return -EEXIST;
	if (grow((void **)&gen->owned, &gen->cap_owned, gen->n_owned + 1, sizeof(*gen->owned)) <
		0 ||
	    grow((void **)&gen->chains, &gen->cap_chains, desc->chain_id + 1,
		 sizeof(*gen->chains)) < 0)
		return -ENOMEM;
	if (reuse) {
		c = reuse;
		nftdp_vm_chain_ref(c);
		nftdp_vm_chain_keep(b->st, c);
	} else {
		rc = nftdp_vm_chain_create(desc, b->st, &c);
		if (rc < 0)
			return rc;
	}
	o = &gen->owned[gen->n_owned];
	*o = (struct owned_chain){c,
				  desc->family,
				  desc->base,
				  desc->base && desc->nat,
				  strdup(desc->table),
				  strdup(desc->name),
				  NULL,
				  0};
	if (!o->table || !o->name)
		goto err_hook;
	if (desc->n_ifindex) {
		o->devs = malloc(desc->n_ifindex * sizeof(*o->devs));
		if (!o->devs)
			goto err_hook;
		memcpy(o->devs, desc->ifindex, desc->n_ifindex * sizeof(*o->devs));
		o->n_devs = desc->n_ifindex;
	}
	for (int i = 0; i < n_fams; i++) {
		bool dev_bound = desc->family == NFPROTO_NETDEV || desc->hook == NF_INET_INGRESS;

		struct hook_list(*lists)[NFTDP_VM_GEN_HOOK_MAX] = desc->nat ? gen->nat : gen->hooks;

		if (hook_insert(&lists[fams[i]][desc->hook], priority, c, o, dev_bound) < 0) {
			for (int j = 0; j < i; j++)
				hook_remove(&lists[fams[j]][desc->hook], c);
			goto err_hook;
		}
	}
	gen->n_owned++;
	gen->chains[desc->chain_id] = c;
	if (desc->chain_id >= gen->n_chains)
		gen->n_chains = desc->chain_id + 1;
	*out = c;
	return 0;

err_hook:
	free(o->table);
	free(o->name);
	free(o->devs);
	nftdp_vm_chain_destroy(c);
	return -ENOMEM;
}

/* nf_ct_netns_get(family): ip and ip6 turn on their own family, inet and
 * the others both */
static uint32_t ct_fams(uint8_t family)
{
	if (family == NFPROTO_IPV4 || family == NFPROTO_IPV6)
		return 1u << family;
	return 1u << NFPROTO_IPV4 | 1u << NFPROTO_IPV6;
}

void nftdp_vm_gen_set_gencursor(struct nftdp_vm_gen_builder *b, uint64_t set_gen)
{
	if (b)
		b->gen->set_gen = set_gen;
}

uint64_t nftdp_vm_gen_gencursor(const struct nftdp_vm_gen *gen)
{
	return gen ? gen->set_gen : 0;
}

void nftdp_vm_gen_note_ct(struct nftdp_vm_gen_builder *b, uint8_t family)
{
	if (b)
		b->ct_noted |= ct_fams(family);
}

/*
 * Generation-wide facts come from the whole generation, never from what a
 * batch recompiled: every chain linked into it (compiled now or reused)
 * and what the caller noted for the whole ruleset. A chain needing ct, or
 * a nat-type base chain (nf_nat_register_fn takes conntrack), turns
 * conntrack on for its table's family.
 */
static void derive_facts(struct nftdp_vm_gen_builder *b)
{
	struct nftdp_vm_gen *gen = b->gen;
	uint32_t ct = b->ct_noted;
	bool shares = false, order = false, fib = false, synproxy = false, ct_table = false;

	for (uint32_t i = 0; i < gen->n_owned; i++) {
		const struct owned_chain *o = &gen->owned[i];

		fib |= nftdp_vm_chain_uses_fib(o->chain);
		synproxy |= nftdp_vm_chain_uses_synproxy(o->chain);
		ct_table |= nftdp_vm_chain_reads_ct_table(o->chain);

		if (o->nat || nftdp_vm_chain_uses_ct(o->chain))
			ct |= ct_fams(o->family);
		shares |= nftdp_vm_chain_shares_state(o->chain);
		order |= nftdp_vm_chain_order_state(o->chain);
	}
	gen->ct_families = ct;
	gen->shares_state = shares;
	gen->order_free = !order;
	gen->uses_fib = fib;
	gen->uses_synproxy = synproxy;
	gen->reads_ct_table = ct_table;
}

/*
 * The flow cache's plan of every hook whose chains all see every packet
 * (no device-bound chain). Without memory for one a hook runs uncached.
 */
static void build_flow_plans(struct nftdp_vm_gen *gen)
{
	bool writes_sets = false;

	for (uint32_t i = 0; i < gen->n_owned; i++)
		writes_sets |= nftdp_vm_flow_writes_sets(gen->owned[i].chain);
	for (int f = 0; f < NFTDP_VM_GEN_NFPROTO_MAX; f++) {
		for (int h = 0; h < NFTDP_VM_GEN_HOOK_MAX; h++) {
			const struct hook_list *hl = &gen->hooks[f][h];
			const struct nftdp_vm_chain *base[64];
			bool bound = false;

			/* bridge views: not keyed (correctness first, docs/vm.md) */
			if (hl->n == 0 || hl->n > 64 || f == NFPROTO_BRIDGE)
				continue;
			for (uint32_t c = 0; c < hl->n; c++) {
				bound |= hl->e[c].dev_bound;
				base[c] = hl->e[c].chain;
			}
			if (bound)
				continue;
			gen->flow[h][f] = nftdp_vm_flow_plan_build(
			    base, hl->n, (uint8_t)f, (uint8_t)h, writes_sets,
			    (const struct nftdp_vm_chain *const *)gen->chains, gen->n_chains);
			if (gen->flow[h][f] && !nftdp_vm_flow_plan_usable(gen->flow[h][f])) {
				nftdp_vm_flow_plan_free(gen->flow[h][f]);
				gen->flow[h][f] = NULL;
			}
		}
	}
}

bool nftdp_vm_gen_uses_ct(const struct nftdp_vm_gen *gen, uint8_t nfproto)
{
	return gen && nfproto < 32 && (gen->ct_families & (1u << nfproto));
}

bool nftdp_vm_gen_order_free(const struct nftdp_vm_gen *gen)
{
	return gen && gen->order_free;
}

bool nftdp_vm_gen_shares_state(const struct nftdp_vm_gen *gen)
{
	return gen && gen->shares_state;
}

bool nftdp_vm_gen_uses_fib(const struct nftdp_vm_gen *gen)
{
	return gen && gen->uses_fib;
}

bool nftdp_vm_gen_uses_synproxy(const struct nftdp_vm_gen *gen)
{
	return gen && gen->uses_synproxy;
}

bool nftdp_vm_gen_reads_ct_table(const struct nftdp_vm_gen *gen)
{
	return gen && gen->reads_ct_table;
}

int nftdp_vm_gen_add_rule(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain *chain,
			  const struct nftnl_rule *rule, struct nftdp_vm_error *err)
{
	struct nftdp_vm_error e = {.expr_index = -1};
	int rc;

	if (!b || !chain || !rule)
		return -EINVAL;
	b->cur_family = nftdp_vm_chain_family(chain);
	rc = nftdp_vm_chain_add_rule(chain, rule, &b->res, b->st, &e);
	if (rc < 0 && !b->err) {
		b->err = rc;
		b->first_err = e;
		b->first_err.err = rc;
	}
	if (err)
		*err = e;
	return rc;
}

int nftdp_vm_gen_build(struct nftdp_vm_gen_builder *b, struct nftdp_vm_gen **out,
		       struct nftdp_vm_error *err)
{
	struct nftdp_vm_error e = {.expr_index = -1};
	struct nftdp_vm_gen *gen;
	int rc = 0;

	if (!b || !out)
		return -EINVAL;
	gen = b->gen;
	if (b->err) {
		e = b->first_err;
		rc = b->err;
		goto err_build;
	}
	for (uint32_t i = 0; i < gen->n_owned; i++) {
		/* a reused chain the caller should have compiled again */
		rc = nftdp_vm_chain_check_targets(gen->owned[i].chain, gen->chains, gen->n_chains,
						  &e);
		if (rc < 0)
			goto err_build;
	}
	for (uint32_t i = 0; i < gen->n_owned; i++) {
		if (!gen->owned[i].base)
			continue;
		rc = nftdp_vm_validate(gen->owned[i].chain, &e);
		if (rc < 0)
			goto err_build;
	}
	/* chains are complete now and immutable once published: a new one
	 * gets its rule index (a reused one has it) */
	for (uint32_t i = 0; i < gen->n_owned; i++)
		nftdp_vm_chain_index(gen->owned[i].chain);
	derive_facts(b);
	build_flow_plans(gen);
	b->gen = NULL;
	nftdp_vm_gen_builder_destroy(b);
	*out = gen;
	return 0;

err_build:
	if (err) {
		*err = e;
		err->err = rc;
	}
	nftdp_vm_gen_builder_destroy(b);
	return rc;
}

void nftdp_vm_gen_destroy(struct nftdp_vm_gen *gen)
{
	if (gen)
		gen_free(gen);
}

int nftdp_vm_gen_on_free(struct nftdp_vm_gen *gen, void (*fn)(void *arg), void *arg)
{
	if (!gen || !fn)
		return -EINVAL;
	if (grow((void **)&gen->frees, &gen->cap_frees, gen->n_frees + 1, sizeof(*gen->frees)) < 0)
		return -ENOMEM;
	gen->frees[gen->n_frees++] = (struct on_free){fn, arg};
	return 0;
}

uint64_t nftdp_vm_gen_id(const struct nftdp_vm_gen *gen)
{
	return gen->id;
}

unsigned int nftdp_vm_gen_hook_len(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook)
{
	if (nfproto >= NFTDP_VM_GEN_NFPROTO_MAX || hook >= NFTDP_VM_GEN_HOOK_MAX)
		return 0;
	return gen->hooks[nfproto][hook].n;
}

bool nftdp_vm_gen_hook_has_prio(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				int32_t prio_min, int32_t prio_max)
{
	const struct hook_list *hl;

	if (nfproto >= NFTDP_VM_GEN_NFPROTO_MAX || hook >= NFTDP_VM_GEN_HOOK_MAX)
		return false;
	hl = &gen->hooks[nfproto][hook];
	/* in priority order: the first chain at or above prio_min decides */
	for (uint32_t c = 0; c < hl->n; c++)
		if (hl->e[c].priority >= prio_min)
			return hl->e[c].priority <= prio_max;
	return false;
}

struct nftdp_set *const *nftdp_vm_gen_sets(const struct nftdp_vm_gen *gen, unsigned int *n)
{
	*n = gen->n_sets;
	return gen->sets;
}

/* ---------- packet path: hooks ---------- */

static const struct hook_list *hook_of(const struct nftdp_vm_gen *gen, uint8_t nfproto,
				       uint8_t hook, struct nftdp_vm_ctx *ctx)
{
	if (nfproto >= NFTDP_VM_GEN_NFPROTO_MAX || hook >= NFTDP_VM_GEN_HOOK_MAX)
		return NULL;
	/* verdict maps name chains by id in this generation's table */
	ctx->chains = (const struct nftdp_vm_chain *const *)gen->chains;
	ctx->n_chains = gen->n_chains;
	ctx->set_gen = gen->set_gen; /* set contents of this generation */
	return &gen->hooks[nfproto][hook];
}

/* A device-bound chain sees the packets of its devices: the rx device at
 * ingress, the tx device at egress (nft_netdev_register_hooks binds a hook
 * per device). */
static inline bool dev_match(const struct hook_entry *e, uint8_t hook,
			     const struct nftdp_vm_pkt *pkt)
{
	/* dev_bound entries live at netdev ingress/egress and inet ingress */
	uint32_t dev = hook == NF_NETDEV_EGRESS ? pkt->oif : pkt->iif;

	for (uint32_t i = 0; i < e->n_devs; i++)
		if (e->devs[i] == dev)
			return true;
	return false;
}

unsigned int nftdp_vm_gen_run_hook(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct hook_list *hl = hook_of(gen, nfproto, hook, ctx);

	if (!hl)
		return NF_ACCEPT;
	/* nf_hook_slow: accept moves on, anything else ends the hook */
	for (uint32_t i = 0; i < hl->n; i++) {
		unsigned int v;

		if (hl->e[i].dev_bound && !dev_match(&hl->e[i], hook, pkt))
			continue;
		v = nftdp_vm_run_chain(hl->e[i].chain, pkt, ctx);

		if (v != NF_ACCEPT)
			return v;
	}
	return NF_ACCEPT;
}

int32_t nftdp_vm_gen_hook_prio(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
			       unsigned int i)
{
	if (nfproto >= NFTDP_VM_GEN_NFPROTO_MAX || hook >= NFTDP_VM_GEN_HOOK_MAX ||
	    i >= gen->hooks[nfproto][hook].n)
		return INT32_MAX;
	return gen->hooks[nfproto][hook].e[i].priority;
}

void nftdp_vm_gen_run_hook_range(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				 unsigned int first, unsigned int count, struct nftdp_vm_pkt **pkts,
				 unsigned int n, unsigned int *verdicts, struct nftdp_vm_ctx *ctx)
{
	const struct hook_list *hl = hook_of(gen, nfproto, hook, ctx);
	struct nftdp_vm_pkt *act[NFTDP_VM_BURST_MAX], *sub[NFTDP_VM_BURST_MAX];
	unsigned int idx[NFTDP_VM_BURST_MAX], v[NFTDP_VM_BURST_MAX];
	unsigned int subpos[NFTDP_VM_BURST_MAX];
	uint32_t end;

	/* chains [first, end) of the list, none outside it */
	if (!hl || first >= hl->n)
		count = 0;
	else if (count > hl->n - first)
		count = hl->n - first;
	end = first + count;

	/* the whole hook through this worker's flow cache: also a range
	 * that holds every chain of the hook (prerouting's after conntrack),
	 * where running the range is running the hook */
	if (ctx->flow && count && gen->flow[hook][nfproto] && first == 0 && end == hl->n) {
		while (n > 0) {
			unsigned int chunk = n < NFTDP_VM_BURST_MAX ? n : NFTDP_VM_BURST_MAX;

			nftdp_vm_flow_run(gen->flow[hook][nfproto], gen, nfproto, hook, pkts, chunk,
					  verdicts, ctx);
			pkts += chunk;
			verdicts += chunk;
			n -= chunk;
		}
		return;
	}

	if (count == 1 && !hl->e[first].dev_bound) {
		/* one base chain for every packet (the common case): its
		 * verdicts are the hook's, no bookkeeping of who goes on */
		while (n > 0) {
			unsigned int chunk = n < NFTDP_VM_BURST_MAX ? n : NFTDP_VM_BURST_MAX;

			nftdp_vm_run_burst(hl->e[first].chain, pkts, chunk, verdicts, ctx);
			pkts += chunk;
			verdicts += chunk;
			n -= chunk;
		}
		return;
	}
	while (n > 0) {
		unsigned int chunk = n < NFTDP_VM_BURST_MAX ? n : NFTDP_VM_BURST_MAX, m = chunk;

		for (unsigned int i = 0; i < chunk; i++) {
			verdicts[i] = NF_ACCEPT;
			act[i] = pkts[i];
			idx[i] = i;
		}
		for (uint32_t c = first; c < end && m > 0; c++) {
			const struct hook_entry *e = &hl->e[c];
			struct nftdp_vm_pkt **run = act;
			unsigned int k = 0, nrun = m;

			if (e->dev_bound) {
				/* only the packets of the chain's devices */
				nrun = 0;
				for (unsigned int j = 0; j < m; j++) {
					if (dev_match(e, hook, act[j])) {
						subpos[nrun] = j;
						sub[nrun++] = act[j];
					}
				}
				if (nrun == 0)
					continue;
				run = sub;
			}
			nftdp_vm_run_burst(e->chain, run, nrun, v, ctx);
			if (run == sub) {
				/* scatter back: packets not run stay accepted */
				unsigned int w[NFTDP_VM_BURST_MAX];

				for (unsigned int j = 0; j < m; j++)
					w[j] = NF_ACCEPT;
				for (unsigned int j = 0; j < nrun; j++)
					w[subpos[j]] = v[j];
				memcpy(v, w, m * sizeof(*v));
			}
			/* keep the accepted ones for the next base chain */
			for (unsigned int j = 0; j < m; j++) {
				if (v[j] == NF_ACCEPT) {
					act[k] = act[j];
					idx[k++] = idx[j];
				} else {
					verdicts[idx[j]] = v[j];
				}
			}
			m = k;
		}
		pkts += chunk;
		verdicts += chunk;
		n -= chunk;
	}
}

void nftdp_vm_gen_run_hook_burst_prio(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				      int32_t prio_min, int32_t prio_max,
				      struct nftdp_vm_pkt **pkts, unsigned int n,
				      unsigned int *verdicts, struct nftdp_vm_ctx *ctx)
{
	unsigned int first = 0, end = 0;

	/* the list is in priority order: the chains in the window are one
	 * range of it */
	if (nfproto < NFTDP_VM_GEN_NFPROTO_MAX && hook < NFTDP_VM_GEN_HOOK_MAX) {
		const struct hook_list *hl = &gen->hooks[nfproto][hook];

		while (first < hl->n && hl->e[first].priority < prio_min)
			first++;
		end = first;
		while (end < hl->n && hl->e[end].priority <= prio_max)
			end++;
	}
	nftdp_vm_gen_run_hook_range(gen, nfproto, hook, first, end - first, pkts, n, verdicts, ctx);
}

void nftdp_vm_gen_flow_probe(const struct nftdp_vm_gen *gen, uint8_t hook,
			     struct nftdp_vm_pkt **pkts, unsigned int n,
			     const struct nftdp_vm_flow_hit **hits, struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_flow_plan *none[NFTDP_VM_GEN_NFPROTO_MAX] = {0};
	bool empty[NFTDP_VM_GEN_NFPROTO_MAX];

	if (n > NFTDP_VM_BURST_MAX)
		n = NFTDP_VM_BURST_MAX;
	if (hook >= NFTDP_VM_GEN_HOOK_MAX) {
		for (unsigned int i = 0; i < n; i++)
			hits[i] = NULL;
		return;
	}
	(void)hook_of(gen, NFPROTO_IPV4, hook, ctx); /* ctx's chains and set generation */
	for (unsigned int f = 0; f < NFTDP_VM_GEN_NFPROTO_MAX; f++)
		empty[f] = gen->hooks[f][hook].n == 0;
	/* verify mode: every packet runs the chains, which check the entry */
	if (!ctx->flow || nftdp_vm_flowcache_verifying(ctx->flow)) {
		nftdp_vm_flow_probe(none, empty, gen, pkts, n, hits, ctx);
		return;
	}
	nftdp_vm_flow_probe(gen->flow[hook], empty, gen, pkts, n, hits, ctx);
}

bool nftdp_vm_gen_flow_headers_only(const struct nftdp_vm_gen *gen, uint8_t hook)
{
	if (hook >= NFTDP_VM_GEN_HOOK_MAX)
		return false;
	for (unsigned int f = 0; f < NFTDP_VM_GEN_NFPROTO_MAX; f++)
		if (nftdp_vm_flow_plan_reads_meta(gen->flow[hook][f]))
			return false;
	return true;
}

bool nftdp_vm_gen_flow_carried(const struct nftdp_vm_gen *gen, const struct nftdp_vm_flow_carry *c,
			       const struct nftdp_vm_pkt *p, const struct nftdp_vm_ctx *ctx,
			       unsigned int *last)
{
	/* what a probe compares: the hits' generation and set generation */
	return nftdp_vm_flow_carried(c, nftdp_vm_gen_id(gen) + 1, gen->set_gen, p, ctx, last);
}

bool nftdp_vm_gen_flow_serves(const struct nftdp_vm_gen *gen, uint8_t hook)
{
	static const uint8_t fams[] = {NFPROTO_IPV4, NFPROTO_IPV6};

	if (!gen || hook >= NFTDP_VM_GEN_HOOK_MAX)
		return false;
	for (unsigned int f = 0; f < sizeof(fams); f++)
		if (gen->hooks[fams[f]][hook].n && !gen->flow[hook][fams[f]])
			return false;
	return true;
}

void nftdp_vm_gen_run_hook_burst(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				 struct nftdp_vm_pkt **pkts, unsigned int n, unsigned int *verdicts,
				 struct nftdp_vm_ctx *ctx)
{
	nftdp_vm_gen_run_hook_range(gen, nfproto, hook, 0, UINT_MAX, pkts, n, verdicts, ctx);
}

unsigned int nftdp_vm_gen_nat_len(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook)
{
	if (!gen || nfproto >= NFTDP_VM_GEN_NFPROTO_MAX || hook >= NFTDP_VM_GEN_HOOK_MAX)
		return 0;
	return gen->nat[nfproto][hook].n;
}

unsigned int nftdp_vm_gen_run_nat(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx,
				  bool (*bound)(const struct nftdp_vm_pkt *pkt, uint8_t hook))
{
	const struct hook_list *hl;

	if (nftdp_vm_gen_nat_len(gen, nfproto, hook) == 0)
		return NF_ACCEPT;
	hl = &gen->nat[nfproto][hook];
	ctx->chains = (const struct nftdp_vm_chain *const *)gen->chains;
	ctx->n_chains = gen->n_chains;
	ctx->set_gen = gen->set_gen;
	for (uint32_t i = 0; i < hl->n; i++) {
		unsigned int v = nftdp_vm_run_chain(hl->e[i].chain, pkt, ctx);

		if (v != NF_ACCEPT)
			return v;
		if (bound && bound(pkt, hook))
			break;
	}
	return NF_ACCEPT;
}

/* ---------- publication and retirement ---------- */

int nftdp_vm_gen_domain_create(const struct nftdp_vm_gen_domain_config *cfg,
			       struct nftdp_vm_gen_domain **out)
{
	struct nftdp_vm_gen_domain *dom;
	size_t size;

	if (!cfg || !out || cfg->max_readers == 0)
		return -EINVAL;
	dom = aligned_alloc(64, (sizeof(*dom) + 63) & ~(size_t)63);
	if (!dom)
		return -ENOMEM;
	memset(dom, 0, sizeof(*dom));
	atomic_init(&dom->current, NULL);
	dom->st = cfg->state;
	/* cfg->set_reclaim is not called: set memory has grace periods of
	 * its own on this domain's QSBR variable (nftdp_vm_gen_domain_grace) */
	dom->max_readers = cfg->max_readers;
	/* rte_rcu_qsbr needs no EAL: plain memory, cache aligned */
	size = rte_rcu_qsbr_get_memsize(cfg->max_readers);
	dom->v = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(size, RTE_CACHE_LINE_SIZE));
	if (!dom->v)
		goto err_qsbr;
	if (rte_rcu_qsbr_init(dom->v, cfg->max_readers) != 0)
		goto err_qsbr;
	*out = dom;
	return 0;

err_qsbr:
	free(dom->v);
	free(dom);
	return -ENOMEM;
}

static void free_retired_upto(struct nftdp_vm_gen_domain *dom, struct nftdp_vm_gen *last)
{
	struct nftdp_vm_gen *g;

	do {
		g = dom->retired_head;
		dom->retired_head = g->next_retired;
		if (!dom->retired_head)
			dom->retired_tail = NULL;
		dom->n_retired--;
		gen_free(g);
	} while (g != last);
}

/*
 * Set memory (sets/: elements that gc, aborts and commits unlink, replaced
 * tables and interval index nodes) gets grace periods on the same QSBR
 * variable as the generations: what sets unlinked since the last call is
 * closed into one batch behind one token taken now, after the unlinks, and
 * freed when that token has passed (set_grace_poll). Never "when the
 * newest generation goes": a commit that does not pause delays nothing.
 * token: one the caller just took (publish shares its own), or NULL.
 */
static void set_grace_queue(struct nftdp_vm_gen_domain *dom, const uint64_t *token)
{
	const struct nftdp_vm_gen *cur = atomic_load_explicit(&dom->current, memory_order_relaxed);
	struct set_grace *e;

	if (!dom->grace_begin)
		return;
	if (dom->sg_n == dom->sg_cap) {
		uint32_t cap = dom->sg_cap ? dom->sg_cap * 2 : 16;
		struct set_grace *n = malloc(cap * sizeof(*n));

		if (!n)
			return; /* the batch stays open: a later call closes it */
		for (uint32_t i = 0; i < dom->sg_n; i++)
			n[i] = dom->sg[(dom->sg_head + i) & (dom->sg_cap - 1)];
		free(dom->sg);
		dom->sg = n;
		dom->sg_head = 0;
		dom->sg_cap = cap;
	}
	e = &dom->sg[(dom->sg_head + dom->sg_n) & (dom->sg_cap - 1)];
	/* readers that begin from now on read cur's set generation or newer */
	if (!dom->grace_begin(dom->grace_arg, cur ? cur->set_gen : 0, e->cookie))
		return;
	/* release: the unlinks above are ordered before the token */
	e->token = token ? *token : rte_rcu_qsbr_start(dom->v);
	dom->sg_n++;
}

/* End the newest set grace period that has passed (it covers the older
 * ones), then start one for what that end and any gc or abort since
 * unlinked. Never waits. */
static void set_grace_poll(struct nftdp_vm_gen_domain *dom)
{
	uint32_t mask = dom->sg_cap - 1, done = 0;

	if (dom->sg_n) {
		/* tokens ascend: the newest passing means all did */
		if (rte_rcu_qsbr_check(dom->v, dom->sg[(dom->sg_head + dom->sg_n - 1) & mask].token,
				       false) == 1)
			done = dom->sg_n;
		else
			while (done < dom->sg_n &&
			       rte_rcu_qsbr_check(
				   dom->v, dom->sg[(dom->sg_head + done) & mask].token, false) == 1)
				done++;
	}
	if (done) {
		struct set_grace e = dom->sg[(dom->sg_head + done - 1) & mask];

		dom->sg_head = (dom->sg_head + done) & mask;
		dom->sg_n -= done;
		dom->grace_end(dom->grace_arg, e.cookie);
	}
	set_grace_queue(dom, NULL);
}

static void sweep(struct nftdp_vm_gen_domain *dom)
{
	struct nftdp_vm_gen *cur;
	uint64_t keep;

	if (!dom->st)
		return;
	/* slots used by the oldest generation still alive, or later, stay */
	if (dom->retired_head) {
		keep = dom->retired_head->id;
	} else {
		cur = atomic_load_explicit(&dom->current, memory_order_relaxed);
		if (!cur)
			return;
		keep = cur->id;
	}
	nftdp_vm_state_sweep(dom->st, keep);
}

unsigned int nftdp_vm_gen_reclaim(struct nftdp_vm_gen_domain *dom)
{
	struct nftdp_vm_gen *last = NULL, *g;
	unsigned int before = dom->n_retired;

	set_grace_poll(dom);
	if (!dom->retired_head)
		return 0;
	/*
	 * Tokens grow with the list, so one check of the newest token frees
	 * the whole batch; otherwise find the newest that passed, oldest first
	 * (rte_rcu_qsbr_check caches the acked token, later checks are cheap).
	 */
	if (rte_rcu_qsbr_check(dom->v, dom->retired_tail->token, false) == 1) {
		last = dom->retired_tail;
	} else {
		for (g = dom->retired_head; g; g = g->next_retired) {
			if (rte_rcu_qsbr_check(dom->v, g->token, false) != 1)
				break;
			last = g;
		}
	}
	if (!last)
		return 0;
	free_retired_upto(dom, last);
	sweep(dom);
	return before - dom->n_retired;
}

void nftdp_vm_gen_domain_grace(struct nftdp_vm_gen_domain *dom,
			       bool (*begin)(void *arg, uint64_t set_gen, uint64_t cookie[2]),
			       void (*end)(void *arg, const uint64_t cookie[2]), void *arg)
{
	/* what is queued was begun with the old hooks: end it with them */
	if (dom->sg_n && dom->grace_end) {
		nftdp_vm_gen_synchronize(dom);
		while (dom->sg_n)
			nftdp_vm_gen_synchronize(dom);
	}
	dom->grace_begin = begin && end ? begin : NULL;
	dom->grace_end = begin && end ? end : NULL;
	dom->grace_arg = arg;
}

void nftdp_vm_gen_publish(struct nftdp_vm_gen_domain *dom, struct nftdp_vm_gen *gen)
{
	/* only the publisher writes current: a relaxed load sees its own store */
	struct nftdp_vm_gen *old = atomic_load_explicit(&dom->current, memory_order_relaxed);
	uint64_t token;

	/*
	 * Release: everything the builder wrote (chains, ops, hook lists) is
	 * visible to a reader whose acquire load returns gen.
	 */
	atomic_store_explicit(&dom->current, gen, memory_order_release);
	/*
	 * rte_rcu_qsbr_start increments the token with release semantics,
	 * ordered after the store above. A reader that reports this token
	 * (rte_rcu_qsbr_quiescent: acquire load of the token, release store
	 * of its counter) has finished every load of the old pointer, and its
	 * next acquire load of current returns gen (or newer). So once check()
	 * says all online readers reported it, nobody can hold old.
	 */
	token = rte_rcu_qsbr_start(dom->v);
	/* set memory this commit (or a gc or abort since) unlinked, and the
	 * committed deletions it published, wait behind the same token */
	set_grace_queue(dom, &token);
	if (old) {
		old->token = token;
		old->next_retired = NULL;
		if (dom->retired_tail)
			dom->retired_tail->next_retired = old;
		else
			dom->retired_head = old;
		dom->retired_tail = old;
		dom->n_retired++;
	}
	nftdp_vm_gen_reclaim(dom);
}

void nftdp_vm_gen_synchronize(struct nftdp_vm_gen_domain *dom)
{
	uint64_t token;

	set_grace_queue(dom, NULL);
	if (!dom->retired_tail && !dom->sg_n)
		return;
	/* the newest token of both lists */
	token = dom->sg_n ? dom->sg[(dom->sg_head + dom->sg_n - 1) & (dom->sg_cap - 1)].token : 0;
	if (dom->retired_tail && dom->retired_tail->token > token)
		token = dom->retired_tail->token;
	/* a waiting control thread must not starve readers sharing its core */
	while (rte_rcu_qsbr_check(dom->v, token, false) != 1)
		sched_yield();
	nftdp_vm_gen_reclaim(dom);
}

uint64_t nftdp_vm_gen_grace_start(struct nftdp_vm_gen_domain *dom)
{
	return rte_rcu_qsbr_start(dom->v);
}

bool nftdp_vm_gen_grace_passed(struct nftdp_vm_gen_domain *dom, uint64_t token)
{
	return rte_rcu_qsbr_check(dom->v, token, false) == 1;
}

unsigned int nftdp_vm_gen_pending(const struct nftdp_vm_gen_domain *dom)
{
	return dom->n_retired;
}

void nftdp_vm_gen_domain_destroy(struct nftdp_vm_gen_domain *dom)
{
	struct nftdp_vm_gen *cur;

	if (!dom)
		return;
	/* no reader is left: every set grace period has ended */
	if (dom->sg_n)
		dom->grace_end(dom->grace_arg,
			       dom->sg[(dom->sg_head + dom->sg_n - 1) & (dom->sg_cap - 1)].cookie);
	if (dom->retired_tail)
		free_retired_upto(dom, dom->retired_tail);
	cur = atomic_load_explicit(&dom->current, memory_order_relaxed);
	if (cur)
		gen_free(cur);
	free(dom->sg);
	free(dom->v);
	free(dom);
}

/* ---------- reader side ---------- */

int nftdp_vm_gen_reader_register(struct nftdp_vm_gen_domain *dom, unsigned int thread_id)
{
	if (thread_id >= dom->max_readers)
		return -EINVAL;
	if (rte_rcu_qsbr_thread_register(dom->v, thread_id) != 0)
		return -EINVAL;
	rte_rcu_qsbr_thread_online(dom->v, thread_id);
	return 0;
}

void nftdp_vm_gen_reader_unregister(struct nftdp_vm_gen_domain *dom, unsigned int thread_id)
{
	rte_rcu_qsbr_thread_offline(dom->v, thread_id);
	rte_rcu_qsbr_thread_unregister(dom->v, thread_id);
}

void nftdp_vm_gen_reader_online(struct nftdp_vm_gen_domain *dom, unsigned int thread_id)
{
	rte_rcu_qsbr_thread_online(dom->v, thread_id);
}

void nftdp_vm_gen_reader_offline(struct nftdp_vm_gen_domain *dom, unsigned int thread_id)
{
	rte_rcu_qsbr_thread_offline(dom->v, thread_id);
}

const struct nftdp_vm_gen *nftdp_vm_gen_acquire(struct nftdp_vm_gen_domain *dom)
{
	/* pairs with the release store in nftdp_vm_gen_publish */
	return atomic_load_explicit(&dom->current, memory_order_acquire);
}

void nftdp_vm_gen_quiesce(struct nftdp_vm_gen_domain *dom, unsigned int thread_id)
{
	rte_rcu_qsbr_quiescent(dom->v, thread_id);
}
