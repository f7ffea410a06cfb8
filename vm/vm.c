// SPDX-License-Identifier: BSD-3-Clause
/*
 * The eval loop: mirrors nft_do_chain (nf_tables_core.c) — rules in order,
 * expressions in order, NFT_BREAK ends the rule, a verdict ends the chain,
 * jump/goto with a stack of NFT_JUMP_STACK_SIZE, return, policy. The fast
 * variants the kernel inlines (cmp_fast, cmp16_fast, payload_fast,
 * bitwise_fast, plus the immediate verdict and a fused payload_fast+cmp_fast)
 * are inlined here too, and so is a lookup in a plain set, and loads that
 * run the lookup or bitwise and cmp after them (heads); this is the one
 * table of them (enum nftdp_vm_fast in vm_priv.h).
 */
#include "vm_priv.h"

/* cmp_fast on a value: true when the rule goes on */
static inline bool cmp_fast_ok(const struct nftdp_vm_cmp_fast *p, uint32_t v)
{
	return ((v & p->mask) == p->data) ^ p->inv;
}

static inline bool cmp16_fast_ok(const struct nftdp_vm_op *op, const struct nftdp_vm_regs *regs)
{
	const struct nftdp_vm_cmp16_fast *p = (const void *)op->priv;
	const uint32_t *r = &regs->data[p->sreg];
	bool eq = ((r[0] & p->mask[0]) == p->data[0]) && ((r[1] & p->mask[1]) == p->data[1]) &&
		  ((r[2] & p->mask[2]) == p->data[2]) && ((r[3] & p->mask[3]) == p->data[3]);

	return eq ^ p->inv;
}

/* nft_payload_fast_eval: like the kernel, only the L4PROTO flag is checked
 * here (not fragoff); anything out of range falls back to the full eval,
 * which breaks the rule. */
static inline bool payload_fast_load(const struct nftdp_vm_payload *p,
				     const struct nftdp_vm_pkt *pkt, uint32_t *val)
{
	uint32_t off;

	if (p->base == NFT_PAYLOAD_NETWORK_HEADER) {
		off = pkt->nh_off;
	} else {
		if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
			return false;
		off = pkt->th_off;
	}
	off += p->offset;
	if ((uint64_t)off + p->len > pkt->len)
		return false;
	/* fixed-size copies: a variable-length memcpy would be a call */
	switch (p->len) {
	case 4:
		memcpy(val, pkt->data + off, 4);
		break;
	case 2: {
		uint16_t v;

		memcpy(&v, pkt->data + off, 2);
		*val = v;
		break;
	}
	default:
		*val = pkt->data[off];
		break;
	}
	return true;
}

/* len (1 to 16) bytes from s to d, none past them: fixed-size and
 * overlapping copies, no call (the network header loads of
 * NFTDP_VM_FAST_PAYLOAD_NH) */
static inline void copy_1_16(uint8_t *d, const uint8_t *s, uint32_t len)
{
	if (len >= 8) {
		uint64_t a, b;

		memcpy(&a, s, 8);
		memcpy(&b, s + len - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + len - 8, &b, 8);
	} else if (len >= 4) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + len - 4, &b, 4);
	} else {
		uint8_t a = s[0], m = s[len / 2], z = s[len - 1];

		d[0] = a;
		d[len / 2] = m;
		d[len - 1] = z;
	}
}

/* payload_eval's network-header case into regs (any length up to 16, the
 * last word's tail zeroed): false when it passes the packet's end, which
 * breaks the rule */
static inline bool payload_nh_load(const struct nftdp_vm_payload *p, const struct nftdp_vm_pkt *pkt,
				   struct nftdp_vm_regs *regs)
{
	uint32_t off = pkt->nh_off + p->offset;

	if ((uint64_t)off + p->len > pkt->len)
		return false;
	if (p->len % 4)
		regs->data[p->dreg + p->len / 4] = 0;
	copy_1_16(&regs->bytes[p->dreg * 4], pkt->data + off, p->len);
	return true;
}

/* a head's lookup in a plain set: nftdp_set_contains_gen, the set's own
 * function called straight once the generation is known (not 0) */
static inline bool head_contains(nftdp_set_contains_t fn, const struct nftdp_set *s,
				 const void *key, const struct nftdp_vm_ctx *ctx)
{
	if (ctx->set_gen)
		return fn(s, key, ctx->now_ms, ctx->set_gen);
	return nftdp_set_contains_gen(s, key, ctx->now_ms, 0);
}

/* meta nfproto / l4proto (nft_meta_get_eval's two keys the eval loop
 * inlines): false for l4proto without a transport header, which breaks
 * the rule */
static inline bool meta_load(const struct nftdp_vm_meta *m, const struct nftdp_vm_pkt *pkt,
			     uint32_t *v)
{
	if (m->key == NFT_META_NFPROTO) {
		*v = pkt->nfproto;
		return true;
	}
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
		return false;
	*v = pkt->l4proto;
	return true;
}

/* a head's lookup (lookup_eval for a plain set): true when the rule goes on */
static inline bool head_lookup_ok(const struct nftdp_vm_head_lookup *lk,
				  const struct nftdp_vm_regs *regs, struct nftdp_vm_ctx *ctx)
{
	if (lk->flow < ctx->flow_need)
		ctx->flow_taint = 1;
	return head_contains(lk->contains, lk->set, &regs->data[lk->sreg], ctx) != lk->invert;
}

struct jumpstack {
	const struct nftdp_vm_chain *chain;
	uint32_t rule;
};

/*
 * One chain's rules from *rulenump on (nft_do_chain's rule loop): returns
 * the rule that gave a verdict (regs->verdict, *rulenump its number) or
 * NULL at the chain's end. trace and with_pf are constants at each call:
 * the untraced variant has no trace code at all (the kernel's
 * nft_trace_enabled static key), and a chain without prefilter runs
 * (chain->n_pf == 0, most chains) gets a loop without their stepping.
 * ix, a constant too, says what the caller knows of next, pkt's rule index
 * table (rule_index.c): IX_ANY, or (chains without prefilter runs) IX_YES
 * a table, IX_NO none, so that the stepping has no test of it.
 * The chain's arrays are in locals: the register stores could alias them.
 */
enum { IX_ANY, IX_YES, IX_NO };

static inline __attribute__((always_inline)) const struct nftdp_vm_rule *
run_rules(const struct nftdp_vm_chain *chain, struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx,
	  struct nftdp_vm_regs *regs, uint32_t *rulenump, struct nftdp_vm_traceinfo *info,
	  const bool trace, const bool with_pf, const uint16_t *const next_in, const int ix)
{
	const struct nftdp_vm_rule *const rules = chain->rules;
	const struct nftdp_vm_op *const ops = chain->ops;
	const uint32_t n_rules = chain->n_rules;
	const uint16_t *const next = ix == IX_NO ? NULL : next_in;
	/* IX_YES: next is the index's, which comes with spans */
	const struct nftdp_vm_span *const span = ix == IX_YES ? chain->span : NULL;
	/* reached through the index: a rule's leading meta tests hold */
	const uint32_t pre_mask = next ? UINT32_MAX : 0;
	uint32_t rulenum = *rulenump, nxt, run_end = 0, run_v = 0;
	uint8_t run_dreg = 0;
	bool restore = false;

	if (ix == IX_YES && !next)
		__builtin_unreachable();
	/* from rulenum on, past what pkt cannot reach */
	if (next)
		rulenum = next[rulenum];
	regs->verdict.code = NFT_CONTINUE;
	/* run_end 0: also after a jump or return the rest runs rule by rule */
	/* without runs the next rule is found once the rule is done: nxt is
	 * not live across its ops (fewer spills around a lookup's call) */
	for (;; rulenum = with_pf ? nxt : next ? next[rulenum + 1] : rulenum + 1) {
		const struct nftdp_vm_rule *rule;
		const struct nftdp_vm_op *op, *last;

		if (with_pf && restore) {
			/* the skipped rest of a run would have left the guard field here */
			regs->data[run_dreg] = run_v;
			restore = false;
		}
		if (rulenum >= n_rules) {
			*rulenump = rulenum;
			return NULL;
		}
		rule = &rules[rulenum];
		if (with_pf && rulenum >= run_end && rule->pf) {
			const struct nftdp_vm_pf *pf = &chain->pf[rule->pf - 1];
			uint32_t v;

			if (pf->end - rulenum >= NFTDP_VM_PF_MIN &&
			    payload_fast_load(&pf->payload, pkt, &v)) {
				run_v = v;
				run_dreg = pf->payload.dreg;
				regs->data[run_dreg] = v;
				run_end = pf->end;
				rulenum = nftdp_vm_pf_find(pf, v & pf->mask);
				if (rulenum == NFTDP_VM_PF_END) {
					nxt = run_end;
					continue;
				}
				rule = &rules[rulenum];
			}
		}
		if (with_pf && rulenum < run_end) {
			nxt = rule->next_same == NFTDP_VM_PF_END ? run_end : rule->next_same;
			restore = nxt == run_end && rulenum + 1 != run_end;
		} else if (with_pf) {
			/* past the rules that would break at their meta nfproto /
			 * l4proto test for this packet (rule_index.c) */
			nxt = next ? next[rulenum + 1] : rulenum + 1;
		}
		if (ix == IX_YES) {
			/* the rule's ops past its leading tests, at hand */
			op = span[rulenum].op;
			last = span[rulenum].end;
		} else {
			op = &ops[rule->first_op + (rule->pre & pre_mask)];
			last = &ops[rule->first_op + rule->n_ops];
		}
		/*
		 * The inlined ops never store NFT_BREAK: a failed match goes to
		 * the next rule directly, and regs->verdict.code is only read
		 * after an op that may have written it.
		 */
		for (; op < last; op++) {
			uint32_t v;

			/* the mask: every value a case, no range test */
			switch (op->fast & NFTDP_VM_FAST_MASK) {
			case NFTDP_VM_FAST_PAYLOAD_CMP: {
				const struct nftdp_vm_payload_cmp *f = (const void *)op->priv;

				if (payload_fast_load(&f->payload, pkt, &v)) {
					regs->data[f->payload.dreg] = v;
					if (!cmp_fast_ok(&f->cmp, v))
						goto next;
					continue;
				}
				op->eval(op, regs, pkt, ctx);
				if (regs->verdict.code != (uint32_t)NFT_CONTINUE)
					goto verdict;
				if (!cmp_fast_ok(&f->cmp, regs->data[f->cmp.sreg]))
					goto next;
				continue;
			}
			case NFTDP_VM_FAST_CMP: {
				const struct nftdp_vm_cmp_fast *c = (const void *)op->priv;

				if (!cmp_fast_ok(c, regs->data[c->sreg]))
					goto next;
				continue;
			}
			case NFTDP_VM_FAST_CMP16:
				if (!cmp16_fast_ok(op, regs))
					goto next;
				continue;
			case NFTDP_VM_FAST_PAYLOAD: {
				const struct nftdp_vm_payload *p = (const void *)op->priv;

				if (payload_fast_load(p, pkt, &v)) {
					regs->data[p->dreg] = v;
					continue;
				}
				break;
			}
			case NFTDP_VM_FAST_PAYLOAD_NH: {
				/* payload_eval's network-header case, in line */
				if (!payload_nh_load((const void *)op->priv, pkt, regs))
					break; /* payload_eval breaks the rule */
				continue;
			}
			case NFTDP_VM_FAST_BITWISE: {
				const struct nftdp_vm_bitwise_fast *b = (const void *)op->priv;

				regs->data[b->dreg] = (regs->data[b->sreg] & b->mask) ^ b->xor ;
				continue;
			}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			case NFTDP_VM_FAST_META: {
				/* nft_reg_store8 of nft_pf / pkt->tprot (one 32-bit
				 * store on little-endian) */
				const struct nftdp_vm_meta *m = (const void *)op->priv;

				if (!meta_load(m, pkt, &v))
					goto next;
				regs->data[m->reg] = v;
				continue;
			}
			case NFTDP_VM_FAST_META_LOOKUP: {
				/* a head (compile.c): FAST_META, then the lookup */
				const struct nftdp_vm_meta_lookup *f = (const void *)op->priv;

				if (!meta_load(&f->meta, pkt, &v))
					goto next;
				regs->data[f->meta.reg] = v;
				op++; /* the lookup */
				if (!head_lookup_ok(&f->lk, regs, ctx))
					goto next;
				continue;
			}
			case NFTDP_VM_FAST_META_CMP: {
				const struct nftdp_vm_meta_cmp *f = (const void *)op->priv;

				if (!meta_load(&f->meta, pkt, &v))
					goto next;
				regs->data[f->meta.reg] = v;
				if (!cmp_fast_ok(&f->cmp, v))
					goto next;
				continue;
			}
#endif
			/* heads (compile.c): a load that runs its followers
			 * too; when the load is payload_eval's, the followers
			 * run one by one after it */
			case NFTDP_VM_FAST_PAYLOAD_LOOKUP: {
				const struct nftdp_vm_payload_lookup *f = (const void *)op->priv;

				if (!payload_fast_load(&f->payload, pkt, &v))
					break;
				regs->data[f->payload.dreg] = v;
				op++; /* the lookup */
				if (!head_lookup_ok(&f->lk, regs, ctx))
					goto next;
				continue;
			}
			case NFTDP_VM_FAST_PAYLOAD_NH_LOOKUP: {
				const struct nftdp_vm_payload_lookup *f = (const void *)op->priv;

				if (!payload_nh_load(&f->payload, pkt, regs))
					break;
				op++; /* the lookup */
				if (!head_lookup_ok(&f->lk, regs, ctx))
					goto next;
				continue;
			}
			case NFTDP_VM_FAST_PAYLOAD_BW_CMP: {
				const struct nftdp_vm_payload_bw_cmp *f = (const void *)op->priv;

				if (!payload_fast_load(&f->payload, pkt, &v))
					break;
				regs->data[f->payload.dreg] = v;
				v = (v & f->bw.mask) ^ f->bw.xor ;
				regs->data[f->bw.dreg] = v;
				op += 2; /* the bitwise and the cmp */
				if (!cmp_fast_ok(&f->cmp, v))
					goto next;
				continue;
			}
			case NFTDP_VM_FAST_LOOKUP: {
				/* lookup_eval for a plain set: found or not */
				const struct nftdp_vm_lookup *l = (const void *)op->priv;

				if (op->flow < ctx->flow_need)
					ctx->flow_taint = 1;
				if (nftdp_set_contains_gen(l->set, &regs->data[l->sreg],
							   ctx->now_ms, ctx->set_gen) == l->invert)
					goto next;
				continue;
			}
			case NFTDP_VM_FAST_COUNTER:
				/* counter_eval: the rule's slot, charged to the
				 * flow record as any counter */
				if (op->flow < ctx->flow_need)
					ctx->flow_taint = 1;
				nftdp_vm_counter_eval_slot(
				    ((const struct nftdp_vm_counter_op *)(const void *)op->priv)
					->slot,
				    pkt, ctx);
				continue;
			case NFTDP_VM_FAST_IMMEDIATE:
				regs->verdict =
				    ((const struct nftdp_vm_immediate *)(const void *)op->priv)
					->verdict;
				if (regs->verdict.code != (uint32_t)NFT_CONTINUE)
					goto verdict;
				continue;
			default:
				break;
			}
			/* the inlined ops above are all fixed per flow */
			if (op->flow < ctx->flow_need)
				ctx->flow_taint = 1;
			op->eval(op, regs, pkt, ctx);
			if (regs->verdict.code != (uint32_t)NFT_CONTINUE)
				goto verdict;
		}
		if (trace)
			nftdp_vm_trace_rule(info, pkt, ctx, chain, rule);
		continue;
	verdict:
		switch (regs->verdict.code) {
		case NFT_BREAK:
			regs->verdict.code = NFT_CONTINUE;
			/* fall through */
		case NFT_CONTINUE:
		next:
			if (trace)
				info->nf_trace = pkt->nftrace; /* nft_trace_copy_nftrace */
			continue;
		}
		*rulenump = rulenum;
		return rule;
	}
}

/*
 * nft_do_chain: the rule loop per chain (run_rules), then the verdict
 * switch with the jump stack and the policy.
 */
static inline __attribute__((always_inline)) unsigned int
do_chain_t(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx,
	   struct nftdp_vm_regs *regs, const bool trace)
{
	const struct nftdp_vm_chain *chain = base;
	const struct nftdp_vm_rule *vrule; /* the rule that gave the verdict */
	const uint16_t *next;
	struct jumpstack jumpstack[NFTDP_VM_JUMP_STACK_SIZE];
	struct nftdp_vm_traceinfo info;
	unsigned int stackptr = 0;
	uint32_t rulenum = 0;

	memset(regs->data, 0, sizeof(regs->data));
	if (trace) {
		/* nft_trace_init */
		info.basechain = base;
		info.nf_trace = pkt->nftrace;
		info.packet_dumped = false;
		/* a traced packet's events are per packet: not for the flow cache
		 * (`meta nftrace set` itself is a meta write, never cached) */
		if (pkt->nftrace)
			ctx->flow_taint = 1;
	}
do_chain:
	rulenum = 0;
resume:
	/* the chain's rule index for pkt (rule_index.c) */
	next = nftdp_vm_rule_next(chain, pkt);
	if (chain->n_pf)
		vrule =
		    run_rules(chain, pkt, ctx, regs, &rulenum, &info, trace, true, next, IX_ANY);
	else if (next)
		vrule =
		    run_rules(chain, pkt, ctx, regs, &rulenum, &info, trace, false, next, IX_YES);
	else
		vrule =
		    run_rules(chain, pkt, ctx, regs, &rulenum, &info, trace, false, NULL, IX_NO);

	if (trace)
		nftdp_vm_trace_verdict(&info, pkt, ctx, chain, vrule, &regs->verdict);

	switch (regs->verdict.code & NF_VERDICT_MASK) {
	case NF_ACCEPT:
	case NF_DROP:
	case NF_QUEUE:
	case NF_STOLEN:
		if (ctx->flow_rec)
			ctx->flow_rec->end = (uint16_t)rulenum;
		return regs->verdict.code;
	}

	switch (regs->verdict.code) {
	case NFT_JUMP:
		if (ctx->flow_rec)
			ctx->flow_rec->jumped = true;
		if (stackptr >= NFTDP_VM_JUMP_STACK_SIZE) {
			/* compile-time validation makes this impossible */
			ctx->drops[NFTDP_VM_DROP_JUMPSTACK]++;
			ctx->flow_taint = 1; /* counted per packet: never cached */
			return NF_DROP;
		}
		jumpstack[stackptr].chain = chain;
		jumpstack[stackptr].rule = rulenum + 1;
		stackptr++;
		/* fall through */
	case NFT_GOTO:
		if (ctx->flow_rec)
			ctx->flow_rec->jumped = true;
		chain = regs->verdict.chain;
		if (!chain) {
			ctx->drops[NFTDP_VM_DROP_BAD_VERDICT]++;
			ctx->flow_taint = 1; /* counted per packet: never cached */
			return NF_DROP;
		}
		goto do_chain;
	case NFT_CONTINUE:
	case NFT_RETURN:
		break;
	default:
		ctx->drops[NFTDP_VM_DROP_BAD_VERDICT]++;
		ctx->flow_taint = 1; /* counted per packet: never cached */
		return NF_DROP;
	}

	if (stackptr > 0) {
		stackptr--;
		chain = jumpstack[stackptr].chain;
		rulenum = jumpstack[stackptr].rule;
		goto resume;
	}

	if (trace)
		nftdp_vm_trace_policy(&info, pkt, ctx);

	if (base->stats_slot >= 0 && ctx->state) {
		struct nftdp_vm_counter *c =
		    nftdp_vm_counter_slot(ctx->state, ctx->worker, (uint32_t)base->stats_slot);

		c->packets++;
		c->bytes += pkt->skb_len;
		nftdp_vm_flow_note_counter(ctx, (uint32_t)base->stats_slot);
	}
	if (ctx->flow_rec)
		ctx->flow_rec->end = NFTDP_VM_FLOW_END_POLICY;
	return base->policy;
}

static inline bool trace_on(const struct nftdp_vm_ctx *ctx)
{
	return ctx->state && atomic_load_explicit(&ctx->state->trace_on, memory_order_relaxed);
}

/* the traced variant, out of the burst loop's way */
static __attribute__((noinline)) unsigned int do_chain_traced(const struct nftdp_vm_chain *base,
							      struct nftdp_vm_pkt *pkt,
							      struct nftdp_vm_ctx *ctx,
							      struct nftdp_vm_regs *regs)
{
	return do_chain_t(base, pkt, ctx, regs, true);
}

static inline unsigned int do_chain(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt *pkt,
				    struct nftdp_vm_ctx *ctx, struct nftdp_vm_regs *regs)
{
	if (trace_on(ctx))
		return do_chain_traced(base, pkt, ctx, regs);
	return do_chain_t(base, pkt, ctx, regs, false);
}

unsigned int nftdp_vm_run_chain(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt *pkt,
				struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_regs regs;

	return do_chain(base, pkt, ctx, &regs);
}

unsigned int nftdp_vm_run_chain_regs(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt *pkt,
				     struct nftdp_vm_ctx *ctx, struct nftdp_vm_regs *regs_out)
{
	return do_chain(base, pkt, ctx, regs_out);
}

void nftdp_vm_run_burst(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt **pkts,
			unsigned int n, unsigned int *verdicts, struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_regs regs;

	if (n > NFTDP_VM_BURST_MAX)
		n = NFTDP_VM_BURST_MAX;
	/* first pass: touch each packet's headers so the second finds them cached */
	for (unsigned int i = 0; i < n; i++)
		__builtin_prefetch(pkts[i]->data + pkts[i]->nh_off);
	/* the untraced run in line: the eval loop's registers are saved once
	 * a burst, not once a packet; trace_on is still read per packet */
	for (unsigned int i = 0; i < n; i++)
		verdicts[i] = trace_on(ctx) ? do_chain_traced(base, pkts[i], ctx, &regs)
					    : do_chain_t(base, pkts[i], ctx, &regs, false);
}
