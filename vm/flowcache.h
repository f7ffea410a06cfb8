/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vm/ private: what generation.c needs of the per-flow cache (flowcache.c):
 * a hook's plan, built with the generation, and the cached hook run.
 */
#ifndef NFTDP_VM_FLOWCACHE_H
#define NFTDP_VM_FLOWCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "nftdp_vm.h"

struct nftdp_vm_flow_plan;

/* whether chain has an op that writes a set from the packet path (dynset) */
bool nftdp_vm_flow_writes_sets(const struct nftdp_vm_chain *chain);

/* The key templates of a hook whose base chains are base[0..n_base), for
 * packets of nfproto at hook; NULL when there are none or no memory (the hook then
 * runs uncached). writes_sets: some chain of the generation writes sets.
 * all[0..n_all): the generation's chain table (NULL holes), what a verdict
 * map may jump to. */
struct nftdp_vm_flow_plan *nftdp_vm_flow_plan_build(const struct nftdp_vm_chain *const *base,
						    unsigned int n_base, uint8_t nfproto,
						    uint8_t hook, bool writes_sets,
						    const struct nftdp_vm_chain *const *all,
						    unsigned int n_all);
void nftdp_vm_flow_plan_free(struct nftdp_vm_flow_plan *fp);
/* some key under fp holds a meta or ct field or a test's outcome, which
 * read more of a packet's view than its headers */
bool nftdp_vm_flow_plan_reads_meta(const struct nftdp_vm_flow_plan *fp);
/* some class of packets can be cached under fp */
bool nftdp_vm_flow_plan_usable(const struct nftdp_vm_flow_plan *fp);

/* The hook's verdicts for pkts[0..n) through ctx->flow: hits from the
 * cache, misses through nftdp_vm_gen_run_hook (recorded, stored when fixed
 * per flow). gen's hook_of() has set ctx's chains and set generation. */
void nftdp_vm_flow_run(const struct nftdp_vm_flow_plan *fp, const struct nftdp_vm_gen *gen,
		       uint8_t nfproto, uint8_t hook, struct nftdp_vm_pkt **pkts, unsigned int n,
		       unsigned int *verdicts, struct nftdp_vm_ctx *ctx);

/* nftdp_vm_gen_flow_probe at hook: plan[nfproto] the hook's plan (NULL:
 * not cached), empty[nfproto] whether the hook has no chain there (ctx as
 * for nftdp_vm_flow_run) */
void nftdp_vm_flow_probe(struct nftdp_vm_flow_plan *const *plan, const bool *empty,
			 const struct nftdp_vm_gen *gen, struct nftdp_vm_pkt **pkts, unsigned int n,
			 const struct nftdp_vm_flow_hit **hits, struct nftdp_vm_ctx *ctx);
/* nftdp_vm_gen_flow_carried with gen's tag (id + 1) and set generation */
bool nftdp_vm_flow_carried(const struct nftdp_vm_flow_carry *c, uint64_t tag, uint64_t set_gen,
			   const struct nftdp_vm_pkt *p, const struct nftdp_vm_ctx *ctx,
			   unsigned int *last);
/* verify mode is on: hits are judged by the chains */
bool nftdp_vm_flowcache_verifying(const struct nftdp_vm_flowcache *fc);

#endif /* NFTDP_VM_FLOWCACHE_H */
