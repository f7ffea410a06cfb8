// SPDX-License-Identifier: BSD-3-Clause
/*
 * Rule indexes: which rules of a chain a packet's family and transport
 * protocol can reach (docs/vm.md "Rule index").
 *
 * An inet chain's rules mostly start with `meta nfproto` / `meta l4proto`
 * tests (`ip saddr`, `tcp dport`, `udp dport` ...). For an IPv4 TCP packet
 * the IPv6, UDP and ICMP rules surely break at that first test, with no
 * effect: no register a later rule reads (the next rule starts afresh), no
 * counter, no trace event (the kernel traces a rule only once it ran to its
 * end). So the eval loop can go from one rule the packet can reach to the
 * next. A chain's rules are sorted into classes by the l4proto values its
 * tests name (each its own class, any other value, no transport header)
 * and the family (IPv4, IPv6); per class a table gives, for each rule, the
 * first rule at or after it the class reaches. Classes that reach every
 * rule share no table: the loop then steps one rule at a time.
 *
 * The flow cache (flowcache.c) uses the same pruning to leave rules a
 * class cannot reach out of its keys.
 */
#include <stdlib.h>
#include <string.h>

#include "rule_index.h"
#include "vm_priv.h"

static bool listed(const struct nftdp_vm_l4class *c, uint32_t v)
{
	for (unsigned int i = 0; i < c->n_listed; i++)
		if (c->listed[i] == v)
			return true;
	return false;
}

/*
 * Whether the rule surely breaks at one of the meta nfproto / l4proto
 * tests it starts with for a packet of nfproto and class c (vm.c: a failed
 * fused meta+cmp goes to the next rule, and l4proto without a transport
 * header breaks too).
 */
bool nftdp_vm_rule_pruned(const struct nftdp_vm_chain *ch, const struct nftdp_vm_rule *r,
			  uint8_t nfproto, const struct nftdp_vm_l4class *c)
{
	for (uint32_t i = 0; i < r->n_ops; i++) {
		const struct nftdp_vm_op *op = &ch->ops[r->first_op + i];
		const struct nftdp_vm_meta_cmp *f = (const void *)op->priv;
		bool eq;

		if (op->fast != NFTDP_VM_FAST_META_CMP || f->cmp.mask != 0xff)
			return false;
		if (f->meta.key == NFT_META_NFPROTO) {
			if ((f->cmp.data == nfproto) == f->cmp.inv)
				return true;
			continue;
		}
		/* l4proto */
		if (c->kind == NFTDP_VM_L4_NONE)
			return true;
		if (c->kind == NFTDP_VM_L4_VAL) {
			eq = f->cmp.data == c->val;
			if (eq == f->cmp.inv)
				return true;
			continue;
		}
		if (!f->cmp.inv && listed(c, f->cmp.data))
			return true;
	}
	return false;
}

void nftdp_vm_l4_vals(const struct nftdp_vm_chain *ch, uint8_t *vals, unsigned int *n,
		      unsigned int max)
{
	for (uint32_t i = 0; i < ch->n_ops; i++) {
		const struct nftdp_vm_op *op = &ch->ops[i];
		const struct nftdp_vm_meta_cmp *f = (const void *)op->priv;
		bool seen = false;

		if (op->fast != NFTDP_VM_FAST_META_CMP || f->meta.key != NFT_META_L4PROTO ||
		    f->cmp.mask != 0xff)
			continue;
		for (unsigned int j = 0; j < *n; j++)
			seen |= vals[j] == f->cmp.data;
		if (!seen && *n < max)
			vals[(*n)++] = (uint8_t)f->cmp.data;
	}
}

void nftdp_vm_l4class_of(struct nftdp_vm_l4class *c, unsigned int k, const uint8_t *vals,
			 unsigned int n_vals)
{
	*c = (struct nftdp_vm_l4class){.listed = vals, .n_listed = n_vals};
	if (k < n_vals) {
		c->kind = NFTDP_VM_L4_VAL;
		c->val = vals[k];
	} else {
		c->kind = k == n_vals ? NFTDP_VM_L4_OTHER : NFTDP_VM_L4_NONE;
	}
}

/*
 * How many leading ops of r a packet that reached r through the index
 * surely passes, so that eval may skip them: fused meta nfproto / l4proto
 * + cmp (mask 0xff) tests, l4proto ones only on a value with a class of
 * its own (nftdp_vm_rule_pruned is exact for those), and only when the
 * next op is a payload load into the same register, which overwrites what
 * the skipped ops wrote (if that load fails the rule breaks, and like a
 * pruned rule it leaves the register unwritten: no later rule reads it).
 */
static uint32_t rule_pre(const struct nftdp_vm_chain *ch, const struct nftdp_vm_rule *r,
			 const uint8_t *vals, unsigned int n_vals)
{
	const struct nftdp_vm_op *ops;
	struct nftdp_vm_l4class c = {.listed = vals, .n_listed = n_vals};
	uint32_t i;
	uint8_t reg = 0, dreg;

	/* a rule of no ops (a chain of them has no ops array at all) */
	if (!r->n_ops)
		return 0;
	ops = &ch->ops[r->first_op];
	for (i = 0; i < r->n_ops; i++) {
		const struct nftdp_vm_meta_cmp *f = (const void *)ops[i].priv;

		if (ops[i].fast != NFTDP_VM_FAST_META_CMP || f->cmp.mask != 0xff)
			break;
		if (f->meta.key == NFT_META_L4PROTO && !listed(&c, f->cmp.data))
			break;
		if (i && f->meta.reg != reg)
			break;
		reg = f->meta.reg;
	}
	if (i == 0 || i >= r->n_ops)
		return 0;
	switch (ops[i].fast) {
	case NFTDP_VM_FAST_PAYLOAD:
	case NFTDP_VM_FAST_PAYLOAD_NH:
	case NFTDP_VM_FAST_PAYLOAD_LOOKUP: /* heads: the load's struct first */
	case NFTDP_VM_FAST_PAYLOAD_NH_LOOKUP:
	case NFTDP_VM_FAST_PAYLOAD_BW_CMP:
		dreg = ((const struct nftdp_vm_payload *)(const void *)ops[i].priv)->dreg;
		break;
	case NFTDP_VM_FAST_PAYLOAD_CMP:
		dreg =
		    ((const struct nftdp_vm_payload_cmp *)(const void *)ops[i].priv)->payload.dreg;
		break;
	default:
		return 0;
	}
	return dreg == reg ? i : 0;
}

void nftdp_vm_chain_index(struct nftdp_vm_chain *ch)
{
	static const uint8_t fams[2] = {NFPROTO_IPV4, NFPROTO_IPV6};
	struct nftdp_vm_rule_index *ix;
	uint8_t vals[NFTDP_VM_IX_VALS];
	int which[2][NFTDP_VM_IX_VALS + 2];
	unsigned int n_vals = 0, n_cls, n_tab = 0;
	uint32_t n = ch->n_rules;
	uint16_t *tmp = NULL;
	bool *reach = NULL, any_skips = false, any_pre = false;

	if (ch->ix_done)
		return;
	ch->ix_done = true;
	if (n == 0 || n >= UINT16_MAX)
		return;
	nftdp_vm_l4_vals(ch, vals, &n_vals, NFTDP_VM_IX_VALS);
	n_cls = n_vals + 2;
	/* room for a table per class; only distinct ones that skip are kept */
	tmp = malloc(2 * n_cls * (n + 1) * sizeof(*tmp));
	reach = malloc(n * sizeof(*reach));
	if (!tmp || !reach)
		goto out;
	for (unsigned int f = 0; f < 2; f++) {
		for (unsigned int k = 0; k < n_cls; k++) {
			struct nftdp_vm_l4class c;
			uint16_t *t = tmp + (size_t)n_tab * (n + 1);
			bool skips = false;

			which[f][k] = -1;
			nftdp_vm_l4class_of(&c, k, vals, n_vals);
			for (uint32_t r = 0; r < n; r++) {
				reach[r] = !nftdp_vm_rule_pruned(ch, &ch->rules[r], fams[f], &c);
				skips |= !reach[r];
			}
			any_skips |= skips;
			/* a class that reaches every rule steps one by one */
			t[n] = (uint16_t)n;
			for (uint32_t r = n; r-- > 0;)
				t[r] = reach[r] ? (uint16_t)r : t[r + 1];
			/* a class alike to an earlier one shares its table */
			for (unsigned int j = 0; j < n_tab && which[f][k] < 0; j++)
				if (memcmp(tmp + (size_t)j * (n + 1), t, (n + 1) * sizeof(*t)) == 0)
					which[f][k] = (int)j;
			if (which[f][k] < 0)
				which[f][k] = (int)n_tab++;
		}
	}
	for (uint32_t r = 0; r < n; r++) {
		ch->rules[r].pre = rule_pre(ch, &ch->rules[r], vals, n_vals);
		any_pre |= ch->rules[r].pre != 0;
	}
	if (!any_skips && !any_pre)
		goto out;
	ix = calloc(1, sizeof(*ix) + (size_t)n_tab * (n + 1) * sizeof(uint16_t));
	if (!ix)
		goto out;
	memcpy(ix->tab, tmp, (size_t)n_tab * (n + 1) * sizeof(uint16_t));
	for (unsigned int f = 0; f < 2; f++)
		for (unsigned int k = 0; k < n_cls; k++)
			ix->next[f][k] = ix->tab + (size_t)which[f][k] * (n + 1);
	memset(ix->cls_of, (int)n_vals, sizeof(ix->cls_of));
	for (unsigned int k = 0; k < n_vals; k++)
		ix->cls_of[vals[k]] = (uint8_t)k;
	ix->cls_none = (uint8_t)(n_vals + 1);
	/* the eval loop's view of the rules an index reaches */
	if (nftdp_vm_chain_spans(ch)) {
		free(ix);
		goto out;
	}
	ch->ix = ix;
out:
	free(tmp);
	free(reach);
}
