/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vm/ private: the op layout, the expression ops tables, the compile context,
 * the stateful arena's insides and helpers shared by the expr_*.c files.
 * Kernel counterparts: struct nft_expr_ops, struct nft_expr_type,
 * nft_parse_register_load/store (nf_tables_api.c).
 */
#ifndef NFTDP_VM_PRIV_H
#define NFTDP_VM_PRIV_H

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "nftdp_common.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

struct nftnl_expr;

#define NFTDP_VM_OP_PRIV_MAX 40
#define NFTDP_VM_REG_VERDICT 0xff /* dreg value meaning the verdict register */

/* Variants the eval loop in vm.c inlines (the kernel's fast ops). */
enum nftdp_vm_fast {
	NFTDP_VM_FAST_NONE = 0,
	NFTDP_VM_FAST_CMP,	   /* cmp eq/neq, len <= 4 */
	NFTDP_VM_FAST_CMP16,	   /* cmp eq/neq, len 16 */
	NFTDP_VM_FAST_PAYLOAD,	   /* payload load, network/transport, 1/2/4 aligned */
	NFTDP_VM_FAST_BITWISE,	   /* bitwise mask/xor, len 1..4 */
	NFTDP_VM_FAST_IMMEDIATE,   /* immediate verdict */
	NFTDP_VM_FAST_PAYLOAD_CMP, /* payload_fast then cmp_fast on its register (fused) */
	NFTDP_VM_FAST_META,	   /* meta nfproto / l4proto load (struct nftdp_vm_meta) */
	NFTDP_VM_FAST_META_CMP,	   /* FAST_META then cmp_fast on its register (fused) */
	NFTDP_VM_FAST_PAYLOAD_NH,  /* network header load of 1..16 bytes payload_fast leaves */
	NFTDP_VM_FAST_LOOKUP,	   /* lookup in a set: no data, element counter or expression */
	NFTDP_VM_FAST_COUNTER,	   /* a rule's counter (struct nftdp_vm_counter_op) */
	/* A load that runs the ops after it too (compile.c's heads): the
	 * followers stay in the rule, and run one by one when the head's
	 * load leaves it to payload's eval. */
	NFTDP_VM_FAST_PAYLOAD_LOOKUP,	 /* FAST_PAYLOAD, then a FAST_LOOKUP */
	NFTDP_VM_FAST_PAYLOAD_NH_LOOKUP, /* FAST_PAYLOAD_NH, then a FAST_LOOKUP */
	NFTDP_VM_FAST_PAYLOAD_BW_CMP,	 /* FAST_PAYLOAD, FAST_BITWISE, FAST_CMP */
	NFTDP_VM_FAST_META_LOOKUP,	 /* FAST_META, then a FAST_LOOKUP */
	NFTDP_VM_FAST_COUNT
};
/* vm.c switches on op->fast & NFTDP_VM_FAST_MASK: a jump table with no
 * range test */
#define NFTDP_VM_FAST_MASK 0xf
static_assert(NFTDP_VM_FAST_COUNT <= NFTDP_VM_FAST_MASK + 1, "op->fast fits the mask");

/* counter's private data (expr_counter.c); vm.c reads it for
 * NFTDP_VM_FAST_COUNTER */
struct nftdp_vm_counter_op {
	uint32_t slot;
};

/* meta's private data; vm.c reads it for NFTDP_VM_FAST_META */
struct nftdp_vm_meta {
	uint8_t key; /* NFT_META_* */
	uint8_t reg;
	uint8_t len;
};

struct nftdp_vm_op;
struct nftdp_vm_cctx;

typedef void (*nftdp_vm_eval_t)(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
				struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx);

/*
 * What an expression is to the per-flow cache (flowcache.c): whether its
 * result is fixed by the packet fields the cache keys on. The default (0)
 * is never: a run that executes it is not cached.
 */
enum nftdp_vm_flow_kind {
	NFTDP_VM_FLOW_NEVER = 0,
	NFTDP_VM_FLOW_REGS,    /* reads registers only (cmp, bitwise, immediate...) */
	NFTDP_VM_FLOW_COUNTER, /* charges counters, which a hit charges again */
	NFTDP_VM_FLOW_PAYLOAD, /* payload load: a key field (struct nftdp_vm_payload) */
	NFTDP_VM_FLOW_META,    /* meta get: a key field (struct nftdp_vm_meta) */
	NFTDP_VM_FLOW_CT,      /* ct get: a key field (priv starts key, reg, len, dir) */
	NFTDP_VM_FLOW_LOOKUP,  /* set lookup: fixed while the set is (flow_level) */
	NFTDP_VM_FLOW_OBJREF,  /* named object: fixed for counters (flow_level) */
	NFTDP_VM_FLOW_DYNSET, /* writes a set: never, and lookups of the generation stop being fixed
			       */
	NFTDP_VM_FLOW_PRED,   /* a pure test of the packet and its connection (an xtables
				 match): its outcome is a key field */
};

/* op->flow: a run executing an op whose level is below ctx->flow_need is
 * not cached. ctx->flow_need is 0 when nothing records (no miss running),
 * 1 for a generation without dynset, 2 with one. */
enum nftdp_vm_flow_level {
	NFTDP_VM_FLOW_LVL_NEVER = 0,
	NFTDP_VM_FLOW_LVL_NO_DYNSET = 1, /* fixed unless the packet path writes sets */
	NFTDP_VM_FLOW_LVL_ALWAYS = 2,
};

/* What a cached miss recorded (flowcache.c). */
#define NFTDP_VM_FLOW_CTRS 5
#define NFTDP_VM_FLOW_END_POLICY 0xffffu
struct nftdp_vm_flow_rec {
	uint32_t n;
	uint32_t slot[NFTDP_VM_FLOW_CTRS];
	/* where the run of the last base chain ended: the rule of its
	 * verdict, or ..._END_POLICY; meaningful only when nothing jumped */
	uint16_t end;
	bool jumped;
};

/* a counter slot the running miss charged (counter, element, policy) */
static inline void nftdp_vm_flow_note_counter(struct nftdp_vm_ctx *ctx, uint32_t slot)
{
	struct nftdp_vm_flow_rec *r = ctx->flow_rec;

	if (!r)
		return;
	if (r->n < NFTDP_VM_FLOW_CTRS)
		r->slot[r->n++] = slot;
	else
		ctx->flow_taint = 1;
}

/* a lookup in a verdict map: the flow cache's plan walks every regular
 * chain of the generation for it (a superset of what its elements name,
 * which stays right whatever the map holds) */
bool nftdp_vm_lookup_is_vmap(const struct nftdp_vm_op *op);

/* One variant of an expression (struct nft_expr_ops). */
struct nftdp_vm_expr_ops {
	const char *name;
	size_t size; /* bytes of priv used */
	uint8_t fast;
	uint8_t flow; /* enum nftdp_vm_flow_kind */
	/* NFTDP_VM_FLOW_LOOKUP / _OBJREF: the op's enum nftdp_vm_flow_level */
	uint8_t (*flow_level)(const void *priv);
	int (*init)(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv);
	nftdp_vm_eval_t eval;
	void (*destroy)(void *priv);
	/* jump targets for validation (immediate, lookup on a verdict map):
	 * how many there are, of which the first max (at most) go into out */
	int (*targets)(const void *priv, const struct nftdp_vm_chain **out, int max);
};

/* An expression kind (struct nft_expr_type): select_ops picks the variant. */
struct nftdp_vm_expr_type {
	const char *name;
	const struct nftdp_vm_expr_ops *ops; /* when there is one variant */
	const struct nftdp_vm_expr_ops *(*select_ops)(struct nftdp_vm_cctx *cc,
						      const struct nftnl_expr *e);
};

/* The program: fixed-size ops, one cache line each. */
struct nftdp_vm_op {
	nftdp_vm_eval_t eval;
	const struct nftdp_vm_expr_ops *ops;
	uint8_t fast;
	uint8_t flow; /* enum nftdp_vm_flow_level, set at compile */
	alignas(8) uint8_t priv[NFTDP_VM_OP_PRIV_MAX];
};
static_assert(sizeof(struct nftdp_vm_op) == 64, "one op per cache line");

#define NFTDP_VM_PRIV_CHECK(type)                                                                  \
	static_assert(sizeof(type) <= NFTDP_VM_OP_PRIV_MAX, #type " fits an op")

struct nftdp_vm_payload {
	uint8_t base;
	uint8_t offset;
	uint8_t len;
	uint8_t dreg;
};

struct nftdp_vm_rule {
	uint64_t handle;
	uint32_t first_op;
	uint32_t n_ops;
	uint32_t pf;	    /* prefilter run starting at this rule, index + 1; 0 none */
	uint32_t next_same; /* next rule of the run with the same guard value, or NFTDP_VM_PF_END */
	/* leading meta nfproto/l4proto tests a packet that reached the rule
	 * through the rule index surely passes, skipped then (rule_index.c) */
	uint32_t pre;
};

/*
 * Prefilter: a run of consecutive rules whose first op is the same fused
 * payload load + cmp eq (same base, offset, length, register and mask),
 * e.g. "ip saddr X ..." rule after rule. The eval loop loads the field once,
 * looks the value up here and runs only the rules of the run whose guard
 * equals it, in order; the others would break at their first op. Built by
 * compile.c as rules are appended (chains are immutable once published).
 */
#define NFTDP_VM_PF_END UINT32_MAX
#define NFTDP_VM_PF_MIN 4 /* shorter runs are evaluated rule by rule */

struct nftdp_vm_pf_slot {
	uint32_t val;
	uint32_t first; /* NFTDP_VM_PF_END: empty */
	uint32_t last;
};

struct nftdp_vm_pf {
	struct nftdp_vm_payload payload;
	uint32_t mask;
	uint32_t start, end; /* rules [start, end) */
	uint32_t slot_mask;  /* slots - 1, a power of two minus one */
	uint32_t n_vals;
	struct nftdp_vm_pf_slot *slots;
};

static inline uint32_t nftdp_vm_pf_hash(uint32_t v)
{
	return (v * 0x9E3779B1u) ^ (v >> 16);
}

/* the first rule of the run whose guard value is v, or NFTDP_VM_PF_END */
static inline uint32_t nftdp_vm_pf_find(const struct nftdp_vm_pf *pf, uint32_t v)
{
	for (uint32_t h = nftdp_vm_pf_hash(v);; h++) {
		const struct nftdp_vm_pf_slot *sl = &pf->slots[h & pf->slot_mask];

		if (sl->first == NFTDP_VM_PF_END || sl->val == v)
			return sl->first;
	}
}

/*
 * Rule index (rule_index.c): per family and transport class of a packet,
 * next[r] is the first rule at or after r the class can reach (n_rules:
 * none); NULL for a class that reaches every rule. Built once per chain
 * before its first generation is published; chains never change after.
 */
#define NFTDP_VM_IX_VALS 8 /* l4proto values with a class of their own */

/* Every class of IPv4 and IPv6 has a table (one that steps rule by rule
 * where the class reaches every rule), so a packet stepped by a table
 * reached each rule through it and its leading tests (rule->pre) hold. */
struct nftdp_vm_rule_index {
	uint8_t cls_of[256];			       /* l4proto -> class */
	uint8_t cls_none;			       /* no transport header */
	const uint16_t *next[2][NFTDP_VM_IX_VALS + 2]; /* [IPv4, IPv6][class] */
	uint16_t tab[];
};

/* a rule's ops from its first past its leading tests (rule->pre) to its
 * end: what the eval loop runs of a rule reached through the rule index,
 * without working it out from the rule */
struct nftdp_vm_span {
	const struct nftdp_vm_op *op, *end;
};

struct nftdp_vm_chain {
	struct nftdp_vm_rule *rules;
	struct nftdp_vm_op *ops;
	uint32_t n_rules, n_ops;
	uint32_t cap_rules, cap_ops;
	bool base;
	uint8_t family, hook;
	uint32_t policy;
	uint32_t chain_id;
	/* some rule needs connection tracking (nf_ct_netns_get at expression
	 * init): a fact of the chain, so a generation that reuses the chain
	 * derives it again (nftdp_vm_gen_build) */
	bool uses_ct;
	bool shares_state;   /* an expression whose state other rules see (compile.c) */
	bool uses_fib;	     /* a fib expression: the dataplane must have a route table */
	bool uses_synproxy;  /* synproxy runs in it: the dataplane's synproxy step acts */
	bool reads_ct_table; /* ct count (or a dynset that may hold one) reads conntrack's table */
	bool order_state;    /* an expression whose result depends on earlier packets */
	int32_t stats_slot;  /* base chain policy counter, -1 if none */
	char table[256];
	char name[256];
	struct nftdp_vm_pf *pf; /* prefilter runs */
	uint32_t n_pf, cap_pf;
	struct nftdp_vm_rule_index *ix; /* NULL: every packet steps through every rule */
	/* with ix: per rule, the ops a packet that reached it through the
	 * index runs (nftdp_vm_chain_spans) */
	struct nftdp_vm_span *span;
	bool ix_done; /* the index was built (or found useless) */
	/* generations sharing this chain (nftdp_vm_gen_chain_reuse) */
	uint32_t refs;
	/* the state slots its expressions use (map entries of the arena), so a
	 * generation that reuses the chain keeps them (nftdp_vm_chain_keep) */
	uint32_t *slot_ents;
	uint32_t n_slot_ents, cap_slot_ents;
	/* side allocations owned by the chain (log prefixes ...) */
	void **blobs;
	uint32_t n_blobs, cap_blobs;
};

/* a packet's transport class, as rule_index.c and flowcache.c sort rules:
 * an l4proto value rules test, any other value, no transport header */
enum nftdp_vm_l4class_kind { NFTDP_VM_L4_VAL, NFTDP_VM_L4_OTHER, NFTDP_VM_L4_NONE };
struct nftdp_vm_l4class {
	enum nftdp_vm_l4class_kind kind;
	uint8_t val;
	const uint8_t *listed; /* values with a class of their own */
	unsigned int n_listed;
};

/* whether rule r of ch surely breaks at its leading meta nfproto / l4proto
 * tests for a packet of nfproto and class c */
bool nftdp_vm_rule_pruned(const struct nftdp_vm_chain *ch, const struct nftdp_vm_rule *r,
			  uint8_t nfproto, const struct nftdp_vm_l4class *c);
/* the l4proto values ch's rules test (meta l4proto + cmp), added to
 * vals[0..*n) up to max */
void nftdp_vm_l4_vals(const struct nftdp_vm_chain *ch, uint8_t *vals, unsigned int *n,
		      unsigned int max);
/* class k of vals[0..n_vals): a value, then other, then none */
void nftdp_vm_l4class_of(struct nftdp_vm_l4class *c, unsigned int k, const uint8_t *vals,
			 unsigned int n_vals);
/* ch->span from its rules (ops and pre final): once the index is built,
 * before the chain is published; -ENOMEM */
int nftdp_vm_chain_spans(struct nftdp_vm_chain *ch);
/* the rule index table for pkt in ch, NULL: every rule */
static inline const uint16_t *nftdp_vm_rule_next(const struct nftdp_vm_chain *ch,
						 const struct nftdp_vm_pkt *pkt)
{
	const struct nftdp_vm_rule_index *ix = ch->ix;
	unsigned int f;

	if (!ix)
		return NULL;
	if (pkt->nfproto == NFPROTO_IPV4)
		f = 0;
	else if (pkt->nfproto == NFPROTO_IPV6)
		f = 1;
	else
		return NULL;
	return ix->next[f][(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) ? ix->cls_of[pkt->l4proto]
								 : ix->cls_none];
}

/* lookup's private data (expr_lookup.c); vm.c reads it for
 * NFTDP_VM_FAST_LOOKUP */
struct nftdp_vm_lookup {
	struct nftdp_set *set;
	const struct nftdp_vm_set_ops *ops; /* a test's stand-in; NULL: sets/ */
	const struct nftdp_vm_chain *const *vchains;
	uint32_t n_vchains;
	uint8_t sreg, dreg, dlen;
	bool invert, dreg_set, verdict;
	uint16_t counter_at; /* set_info.elem_counter_at */
	uint8_t flow_lvl;    /* enum nftdp_vm_flow_level */
	uint16_t expr_at;    /* set_info.elem_expr_at */
};
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_lookup);

/* whether compile.c may tag a lookup op NFTDP_VM_FAST_LOOKUP */
bool nftdp_vm_lookup_fast(const struct nftdp_vm_op *op);

/* A set lookup of the packet path in the run's set generation: straight
 * into sets/ for its sets (ops NULL), through ops for a stand-in. */
static inline bool vm_set_lookup(const struct nftdp_vm_set_ops *ops, const struct nftdp_set *s,
				 const void *key, const void **data, const struct nftdp_vm_ctx *ctx)
{
	if (!ops)
		return nftdp_set_lookup_gen(s, key, data, ctx->now_ms, ctx->set_gen);
	if (ops->lookup_gen)
		return ops->lookup_gen(s, key, data, ctx->now_ms, ctx->set_gen);
	return ops->lookup(s, key, data, ctx->now_ms);
}

/* dynset's add or update: true if the key is now in the set (false: full) */
static inline bool vm_set_update(const struct nftdp_vm_set_ops *ops, struct nftdp_set *s,
				 const void *key, const void *data, uint64_t timeout_ms,
				 bool refresh, uint64_t now_ms)
{
	int rc;

	if (ops)
		return ops->update(s, key, data, timeout_ms, refresh, now_ms);
	rc = nftdp_set_dp_update(s, key, data, timeout_ms, now_ms,
				 refresh ? NFTDP_SET_DP_UPDATE : NFTDP_SET_DP_ADD);
	/* lost a race with another worker adding the same key: it is there */
	return rc == 0 || rc == -EEXIST || rc == -EAGAIN;
}

static inline void vm_set_remove(const struct nftdp_vm_set_ops *ops, struct nftdp_set *s,
				 const void *key, uint64_t now_ms)
{
	if (ops)
		ops->remove(s, key, now_ms);
	else
		nftdp_set_dp_update(s, key, NULL, 0, now_ms, NFTDP_SET_DP_DELETE);
}

/* Compile context: one expression at a time. */
struct nftdp_vm_cctx {
	struct nftdp_vm_chain *chain;
	const struct nftdp_vm_resolver *res;
	struct nftdp_vm_state *st;
	struct nftdp_vm_error *err;
	uint64_t handle;
	uint32_t expr_index;
	const char *expr_name;
	const struct nftnl_rule *rule; /* NFTA_RULE_COMPAT for match/target */
	bool needs_routes;	       /* the expression reads the route table (init sets it) */
	bool needs_synproxy;	       /* a synproxy statement, object or target (init sets it) */
	bool needs_ct; /* conntrack for the family (init sets it: meters' ct count) */
};

/* ---- stateful arena ---- */

enum nftdp_vm_slot_kind {
	NFTDP_VM_SLOT_COUNTER = 1, /* per-worker struct nftdp_vm_counter */
	NFTDP_VM_SLOT_CELL,	   /* shared struct nftdp_vm_cell */
};

enum nftdp_vm_cell_type {
	NFTDP_VM_CELL_QUOTA = NFT_OBJECT_QUOTA,
	NFTDP_VM_CELL_LIMIT = NFT_OBJECT_LIMIT,
	NFTDP_VM_CELL_LAST = 0x100,
	NFTDP_VM_CELL_NUMGEN = 0x101,
	NFTDP_VM_CELL_XT = 0x102, /* an xtables match's word (expr_compat_rate.c) */
};

/* A shared cell: one cache line, written with atomics by every worker. */
struct nftdp_vm_cell {
	alignas(64) uint32_t type;
	union {
		struct {
			_Atomic uint64_t consumed;
			uint64_t bytes;
		} quota;
		struct {
			/* GCRA form of nft_limit's bucket: empty_at = last - tokens */
			_Atomic uint64_t empty_at;
			bool init;
		} limit;
		struct {
			_Atomic uint64_t ms;
			_Atomic uint32_t set;
		} last;
		struct {
			_Atomic uint32_t counter;
		} numgen;
		struct {
			_Atomic uint64_t word;
		} xt;
	};
};
static_assert(sizeof(struct nftdp_vm_cell) == 64, "cell is one cache line");

struct nftdp_vm_slot_ent {
	char *key;
	uint8_t kind;
	bool pinned; /* released by nftdp_vm_state_unpin(), never swept */
	uint32_t index;
	uint64_t gen;
};

struct nftdp_vm_log_ring {
	alignas(64) _Atomic uint32_t head; /* written by the worker */
	alignas(64) _Atomic uint32_t tail; /* written by the control thread */
	uint64_t lost;
	struct nftdp_vm_log_event *ev;
};

struct nftdp_vm_nflog_ring {
	alignas(64) _Atomic uint32_t head; /* byte position, written by the worker */
	_Atomic uint64_t lost;		   /* worker-owned, relaxed: read by stats */
	alignas(64) _Atomic uint32_t tail; /* byte position, written by the control thread */
	uint8_t *buf;
};

struct nftdp_vm_trace_ring {
	alignas(64) _Atomic uint32_t head; /* written by the worker */
	uint32_t seq;			   /* trace ids given out, worker-owned */
	_Atomic uint64_t lost;		   /* worker-owned, relaxed: read by stats */
	struct nftdp_vm_trace_event *ev;
	alignas(64) _Atomic uint32_t tail; /* written by the control thread */
};

/* state.c: the per-worker rings of log, trace and nflog events. n_workers
 * slots of slot_size bytes (64-aligned, zeroed), each given a zeroed,
 * 64-aligned buffer of buf_size bytes whose pointer is stored buf_off
 * bytes into its slot; NULL when out of memory, nothing left allocated.
 * Control path. */
void *nftdp_vm_worker_rings_alloc(unsigned int n_workers, size_t slot_size, size_t buf_off,
				  size_t buf_size);
/* the slots and their buffers; slots may be NULL */
void nftdp_vm_worker_rings_free(void *slots, unsigned int n_workers, size_t slot_size,
				size_t buf_off);

struct nftdp_vm_state {
	unsigned int n_workers, max_counters, max_cells, log_ring_size, trace_ring_size;
	/* someone listens to NFNLGRP_NFTRACE: traced packets record events */
	_Atomic bool trace_on;
	/* nflog (nflog.c): groups with an instance, per-worker byte rings */
	_Atomic uint64_t nflog_bound[65536 / 64];
	unsigned int nflog_ring_size;
	struct nftdp_vm_nflog_ring *nflog;
	bool local_stack; /* the exception path is on: redirect compiles */
	uint32_t hash_seed;
	uint64_t gen;
	/* counters[worker * counter_stride + slot]; rows are cache aligned.
	 * Every array below is reserved once for the ceiling (max_*) as
	 * address space only and never moves: pages appear as slots are
	 * first used, so workers read them without any publication step. */
	struct nftdp_vm_counter *counters;
	size_t counter_stride;		       /* slots per row (rounded) */
	struct nftdp_vm_counter *counter_base; /* control-only: values at last reset */
	struct nftdp_vm_cell *cells;
	uint8_t *counter_used, *cell_used;
	/* free slots (stacks) above which nothing was ever used (hwm) */
	uint32_t *counter_free, *cell_free;
	uint32_t n_counter_free, n_cell_free, counter_hwm, cell_hwm;
	/* slot entries; an entry never moves (chains keep its index) */
	struct nftdp_vm_slot_ent *map;
	size_t map_cap, map_len; /* map_cap: entries ever used */
	uint32_t *ent_free;
	size_t n_ent_free, max_ents;
	/* key -> entry + 1 (0 empty, UINT32_MAX deleted); grows by rehash */
	uint32_t *hidx;
	size_t hcap, hfill;
	/* entries created by the generation being built (gen_abort) */
	uint32_t *born;
	size_t n_born, cap_born;
	struct nftdp_vm_log_ring *logs;
	struct nftdp_vm_trace_ring *traces;
};

/* Stateful objects (counter / quota / limit) */
struct nftdp_vm_obj {
	uint32_t type;
	uint8_t slot_kind;
	uint32_t slot;
	/* limit parameters */
	uint64_t tokens_max, rate, nsecs, cost;
	bool invert, bytes_mode;
	uint64_t quota_bytes;
	struct nftdp_vm_ct_timeout ct_timeout;	/* NFT_OBJECT_CT_TIMEOUT: no state slot */
	struct nftdp_vm_ct_helper ct_helper;	/* NFT_OBJECT_CT_HELPER: no state slot */
	struct nftdp_vm_ct_expect ct_expect;	/* NFT_OBJECT_CT_EXPECT: no state slot */
	struct nftdp_vm_synproxy_info synproxy; /* NFT_OBJECT_SYNPROXY: no state slot */
	char *key;				/* its state slot's key, for nftdp_vm_obj_keep() */
};

static inline struct nftdp_vm_counter *nftdp_vm_counter_slot(struct nftdp_vm_state *st,
							     unsigned int worker, uint32_t slot)
{
	return &st->counters[(size_t)worker * st->counter_stride + slot];
}

/* state.c */
int nftdp_vm_state_get_slot(struct nftdp_vm_state *st, const char *key, uint8_t kind,
			    uint32_t *slot, bool *created);
int nftdp_vm_state_rule_slot(struct nftdp_vm_cctx *cc, uint8_t kind, uint32_t *slot, bool *created);
/* get_slot that also says which map entry holds it */
int nftdp_vm_state_get_slot_ent(struct nftdp_vm_state *st, const char *key, uint8_t kind,
				uint32_t *slot, bool *created, uint32_t *ent);
/* chain c uses map entry ent (compile.c) */
int nftdp_vm_chain_note_slot(struct nftdp_vm_chain *c, uint32_t ent);
void nftdp_vm_log_record(struct nftdp_vm_state *st, unsigned int worker,
			 const struct nftdp_vm_log_event *ev);

/* Tracing (trace.c): one chain run's struct nft_traceinfo. vm.c calls these
 * only in its traced variant of the eval loop (state->trace_on). */
struct nftdp_vm_traceinfo {
	const struct nftdp_vm_chain *basechain;
	bool nf_trace;	    /* pkt->nftrace after the last rule (NF_STOLEN reads this copy) */
	bool packet_dumped; /* devices and headers went with an event of this run */
};
int nftdp_vm_trace_rings_create(struct nftdp_vm_state *st, unsigned int ring_size);
/* nflog.c: the nflog rings (state create/destroy) and the packet-path
 * record of one `log group` (expr_log.c) */
int nftdp_vm_nflog_rings_create(struct nftdp_vm_state *st, unsigned int ring_size);
void nftdp_vm_nflog_rings_destroy(struct nftdp_vm_state *st);
struct nftdp_vm_nflog_params {
	const char *prefix;
	uint32_t copy_len; /* UINT32_MAX: no snaplen */
	uint16_t group, qthreshold;
};
void nftdp_vm_nflog_record(const struct nftdp_vm_nflog_params *p, const struct nftdp_vm_pkt *pkt,
			   const struct nftdp_vm_ctx *ctx);
void nftdp_vm_trace_rings_destroy(struct nftdp_vm_state *st);
/* a rule ended with NFT_CONTINUE (nft_trace_packet, NFT_TRACETYPE_RULE) */
void nftdp_vm_trace_rule(struct nftdp_vm_traceinfo *info, struct nftdp_vm_pkt *pkt,
			 const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_chain *chain,
			 const struct nftdp_vm_rule *rule);
/* a rule's verdict, or the end of chain when rule is NULL (nft_trace_verdict) */
void nftdp_vm_trace_verdict(struct nftdp_vm_traceinfo *info, struct nftdp_vm_pkt *pkt,
			    const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_chain *chain,
			    const struct nftdp_vm_rule *rule,
			    const struct nftdp_vm_verdict *verdict);
/* the base chain's policy (NFT_TRACETYPE_POLICY) */
void nftdp_vm_trace_policy(struct nftdp_vm_traceinfo *info, struct nftdp_vm_pkt *pkt,
			   const struct nftdp_vm_ctx *ctx);

/* synproxy (expr_synproxy.c): nft_synproxy_do_init's checks (-EOPNOTSUPP
 * for unknown flags) and nft_synproxy_do_eval, for the statement and the
 * object */
int nftdp_vm_synproxy_params(uint32_t mss, uint8_t wscale, uint32_t flags,
			     struct nftdp_vm_synproxy_info *info);
/* -EOPNOTSUPP for synproxy in an input base chain with --host-ports (a
 * server on the box), what naming the statement, object or target */
int nftdp_vm_synproxy_host_check(struct nftdp_vm_cctx *cc, const char *what);
void nftdp_vm_synproxy_eval(const struct nftdp_vm_synproxy_info *info, struct nftdp_vm_regs *regs,
			    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx);
/* xt_SYNPROXY's target function (expr_compat_target.c) */
void nftdp_vm_synproxy_eval_xt(const struct nftdp_vm_synproxy_info *info,
			       struct nftdp_vm_regs *regs, struct nftdp_vm_pkt *pkt,
			       struct nftdp_vm_ctx *ctx);

/* objects (expr_objref.c) */
void nftdp_vm_obj_eval(const struct nftdp_vm_obj *obj, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx);
void nftdp_vm_counter_eval_slot(uint32_t slot, struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx);
bool nftdp_vm_quota_over(struct nftdp_vm_cell *c, uint64_t len);
bool nftdp_vm_limit_eval(struct nftdp_vm_cell *c, uint64_t now, uint64_t tokens_max, uint64_t cost,
			 bool invert);
bool nftdp_vm_limit_eval_at(_Atomic uint64_t *empty_at, uint64_t now, uint64_t tokens_max,
			    uint64_t cost, bool invert);
/* per-element expressions (elem_expr.c): run those of an element's area
 * for pkt (nft_set_elem_update_expr); true when the rule must break */
bool nftdp_vm_elem_expr_eval(void *area, const struct nftdp_vm_pkt *pkt,
			     const struct nftdp_vm_ctx *ctx);
int nftdp_vm_limit_params(uint64_t rate, uint64_t unit, uint32_t burst, uint32_t type,
			  uint64_t *tokens_max, uint64_t *nsecs, uint64_t *cost);

/* ---- compile helpers (compile.c) ---- */

int nftdp_vm_errf(struct nftdp_vm_cctx *cc, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* nft_parse_register_load / _store on a libnftnl attribute */
int nftdp_vm_parse_reg_load(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t attr,
			    uint8_t *reg, uint32_t len);
int nftdp_vm_parse_reg_store(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t attr,
			     uint8_t *reg, uint32_t type, uint32_t len);
/* register number -> data index, validate load/store bounds */
int nftdp_vm_reg_load_check(struct nftdp_vm_cctx *cc, uint32_t nlreg, uint8_t *reg, uint32_t len);
int nftdp_vm_reg_store_check(struct nftdp_vm_cctx *cc, uint32_t nlreg, uint8_t *reg, uint32_t type,
			     uint32_t len);
/* nft_data_init for a value: copy attribute into buf (size max), set *len */
int nftdp_vm_parse_data(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t attr,
			void *buf, uint32_t size, uint32_t *len);
/* EOPNOTSUPP (with the expression's name) unless cc's chain is in an ip,
 * ip6 or inet table: rt, xfrm, socket */
int nftdp_vm_ip_family_only(struct nftdp_vm_cctx *cc);
bool nftdp_vm_attr(const struct nftnl_expr *e, uint16_t attr);
uint32_t nftdp_vm_u32(const struct nftnl_expr *e, uint16_t attr);
void *nftdp_vm_blob(struct nftdp_vm_cctx *cc, size_t size);
int nftdp_vm_resolve_set(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t name_attr,
			 uint16_t id_attr, struct nftdp_vm_set_info *out);

/* ---- packet helpers ---- */

/* ipv6_find_hdr(skb, &offset, target, NULL, NULL) from the network
 * header: the header's type with *offset (from pkt->data) where it is,
 * -ENOENT without it, -EBADMSG where the walk cannot read (expr_exthdr.c) */
int nftdp_vm_ipv6_find_hdr(const struct nftdp_vm_pkt *pkt, uint32_t *offset, int target);

/* ipv4_is_zeronet, ipv4_is_lbcast, ipv4_is_multicast (network order):
 * fib's and rpfilter's address classes */
static inline bool nftdp_vm_v4_zeronet(uint32_t a)
{
	return (a & htonl(0xff000000u)) == 0;
}

static inline bool nftdp_vm_v4_lbcast(uint32_t a)
{
	return a == htonl(0xffffffffu);
}

static inline bool nftdp_vm_v4_multicast(uint32_t a)
{
	return (a & htonl(0xf0000000u)) == htonl(0xe0000000u);
}

/* skb_copy_bits: false if [off, off+len) is outside the packet */
static inline bool nftdp_vm_copy_bits(const struct nftdp_vm_pkt *pkt, int64_t off, void *to,
				      uint32_t len)
{
	if (off < 0 || (uint64_t)off + len > pkt->len)
		return false;
	memcpy(to, pkt->data + off, len);
	return true;
}

static inline bool nftdp_vm_has_l4(const struct nftdp_vm_pkt *pkt)
{
	return (pkt->flags & NFTDP_VM_PKT_F_L4PROTO) && pkt->fragoff == 0;
}

/* the kernel's reciprocal_scale */
static inline uint32_t nftdp_vm_reciprocal_scale(uint32_t val, uint32_t ep_ro)
{
	return (uint32_t)(((uint64_t)val * ep_ro) >> 32);
}

static inline uint32_t nftdp_vm_prandom(struct nftdp_vm_ctx *ctx)
{
	/* xorshift64*: per worker, no locks */
	uint64_t x = ctx->prng ? ctx->prng : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ctx->prng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* nft_csum_replace (csum.c): nftdp_csum_replace with CSUM_MANGLED_0; the
 * checksum itself and CRC32c are common/'s (nftdp_common.h) */
void nftdp_vm_csum_replace(uint8_t *field, uint32_t fsum, uint32_t tsum);
uint32_t nftdp_vm_jhash(const void *key, uint32_t length, uint32_t initval);

/* registry (expr.c) */
const struct nftdp_vm_expr_type *nftdp_vm_expr_type_find(const char *name);

/* expr_compat.c: a match or target that needs conntrack, a LOG target */
bool nftdp_vm_compat_uses_ct(const struct nftnl_expr *e);
bool nftdp_vm_compat_logs(const struct nftnl_expr *e);
/* a match with state that earlier packets move (limit, hashlimit, recent):
 * seen by other rules when named, or in a regular chain (expr_shares_state) */
bool nftdp_vm_compat_shares_state(const struct nftnl_expr *e, bool base);

/* one expression type per line */
/* clang-format off */
#define NFTDP_VM_EXPR_TYPES(X) \
	X(immediate) \
	X(cmp) \
	X(range) \
	X(bitwise) \
	X(byteorder) \
	X(payload) \
	X(exthdr) \
	X(meta) \
	X(lookup) \
	X(dynset) \
	X(counter) \
	X(quota) \
	X(limit) \
	X(log) \
	X(reject) \
	X(numgen) \
	X(hash) \
	X(objref) \
	X(notrack) \
	X(last) \
	X(fwd) \
	X(dup) \
	X(ct) \
	X(nat) \
	X(masq) \
	X(redir) \
	X(tproxy) \
	X(osf) \
	X(connlimit) \
	X(rt) \
	X(xfrm) \
	X(socket) \
	X(fib) \
	X(synproxy) \
	X(match) \
	X(target)
/* clang-format on */

#define X(n) extern const struct nftdp_vm_expr_type nftdp_vm_expr_##n;
NFTDP_VM_EXPR_TYPES(X)
#undef X

/* priv structs of the inlined variants, shared with vm.c */
struct nftdp_vm_cmp_fast {
	uint32_t data;
	uint32_t mask;
	uint8_t sreg;
	bool inv;
};

/* the fused pair an inet rule starts with: meta nfproto/l4proto, cmp */
struct nftdp_vm_meta_cmp {
	struct nftdp_vm_cmp_fast cmp;
	struct nftdp_vm_meta meta;
};
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_meta_cmp);
struct nftdp_vm_cmp16_fast {
	uint32_t data[4];
	uint32_t mask[4];
	uint8_t sreg;
	bool inv;
};
struct nftdp_vm_bitwise_fast {
	uint32_t mask;
	uint32_t xor ;
	uint8_t sreg;
	uint8_t dreg;
};
/* a payload_fast load followed by a cmp_fast of the same register, fused
 * by compile.c into one op; eval stays payload's generic eval (fallback) */
struct nftdp_vm_payload_cmp {
	struct nftdp_vm_payload payload;
	struct nftdp_vm_cmp_fast cmp;
};

/*
 * Heads (compile.c): a payload (or meta) load whose op also runs the one
 * or two ops after it, whose parameters it carries. The load's struct
 * comes first, so the flow cache and the rule index read the head as the
 * load; they see the followers as ever.
 */
/* what a head carries of the plain-set lookup after it */
struct nftdp_vm_head_lookup {
	uint8_t sreg;
	bool invert;
	uint8_t flow; /* the lookup op's enum nftdp_vm_flow_level */
	struct nftdp_set *set;
	nftdp_set_contains_t contains; /* nftdp_set_contains_fn(set) */
};

/* NFTDP_VM_FAST_PAYLOAD_LOOKUP, _NH_LOOKUP: the next op a plain-set lookup */
struct nftdp_vm_payload_lookup {
	struct nftdp_vm_payload payload;
	struct nftdp_vm_head_lookup lk;
};
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_payload_lookup);

/* NFTDP_VM_FAST_META_LOOKUP: meta nfproto / l4proto, then a plain-set
 * lookup (`meta l4proto { 47, 50 }`) */
struct nftdp_vm_meta_lookup {
	struct nftdp_vm_meta meta;
	struct nftdp_vm_head_lookup lk;
};
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_meta_lookup);

/* NFTDP_VM_FAST_PAYLOAD_BW_CMP: payload_fast into r, then bitwise_fast r
 * into r2, then cmp_fast of r2 */
struct nftdp_vm_payload_bw_cmp {
	struct nftdp_vm_payload payload;
	struct nftdp_vm_bitwise_fast bw;
	struct nftdp_vm_cmp_fast cmp;
};
NFTDP_VM_PRIV_CHECK(struct nftdp_vm_payload_bw_cmp);

struct nftdp_vm_immediate {
	uint32_t data[4];
	uint8_t dreg;
	uint8_t dlen;
	struct nftdp_vm_verdict verdict;
};

/* expr_fib.c: the path of multipath route r that pkt takes, as the
 * kernel's fib6_select_path and forward route choose it (fib_ops'
 * mp_select; without it, or for a single path, the first: r->sel 0) */
void nftdp_vm_fib_select(const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_pkt *pkt, bool v4,
			 struct nftdp_vm_fib_route *r);

/* expr_rt.c: the dst_mtu of pkt's route (to daddr) into mtu and of the
 * route back to saddr into back (~0u: none), as get_tcpmss and
 * tcpmss_reverse_mtu look them up. false: no route to daddr (no dst). */
bool nftdp_vm_route_mtus(const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_pkt *pkt,
			 uint32_t *mtu, uint32_t *back);

/* expr_osf.c: nf_osf_find over an IPv4 packet of len bytes from its IP
 * header, with the database published now; NULL: not a SYN, or no match */
const struct nf_osf_user_finger *nftdp_vm_osf_find(const uint8_t *ip, uint32_t len, int ttl_check);

#endif /* NFTDP_VM_PRIV_H */
