// SPDX-License-Identifier: BSD-3-Clause
/*
 * Rule -> program. Walks the expressions of a libnftnl rule, picks each
 * expression's variant (select_ops, as nf_tables_newrule/nf_tables_expr_parse)
 * and lets its init validate the attributes as the kernel's init would. Also
 * the jump graph validation (nft_chain_validate: ELOOP, EMLINK).
 */
#include <stdarg.h>
#include <stdlib.h>

#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "vm_priv.h"

#define NFT_RULE_MAXEXPRS 128

int nftdp_vm_errf(struct nftdp_vm_cctx *cc, int err, const char *fmt, ...)
{
	va_list ap;

	if (cc->err && cc->err->err == 0) {
		cc->err->err = err;
		cc->err->expr_index = (int)cc->expr_index;
		va_start(ap, fmt);
		vsnprintf(cc->err->msg, sizeof(cc->err->msg), fmt, ap);
		va_end(ap);
	}
	return err;
}

int nftdp_vm_ip_family_only(struct nftdp_vm_cctx *cc)
{
	switch (cc->chain->family) {
	case NFPROTO_IPV4:
	case NFPROTO_IPV6:
	case NFPROTO_INET:
		return 0;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "%s: only in ip, ip6 and inet tables",
				     cc->expr_name);
	}
}

bool nftdp_vm_attr(const struct nftnl_expr *e, uint16_t attr)
{
	return nftnl_expr_is_set(e, attr);
}

uint32_t nftdp_vm_u32(const struct nftnl_expr *e, uint16_t attr)
{
	return nftnl_expr_get_u32(e, attr);
}

/* nft_parse_register + nft_validate_register_load */
int nftdp_vm_reg_load_check(struct nftdp_vm_cctx *cc, uint32_t nlreg, uint8_t *reg, uint32_t len)
{
	int idx;

	if (nlreg == NFT_REG_VERDICT)
		return nftdp_vm_errf(cc, -EINVAL, "%s: cannot load from the verdict register",
				     cc->expr_name);
	idx = nftdp_vm_reg_index(nlreg);
	if (idx < 0)
		return nftdp_vm_errf(cc, -ERANGE, "%s: register %u out of range", cc->expr_name,
				     nlreg);
	if (len == 0)
		return nftdp_vm_errf(cc, -EINVAL, "%s: zero-length register load", cc->expr_name);
	if ((uint32_t)idx * 4 + len > NFTDP_VM_REG_SIZE)
		return nftdp_vm_errf(cc, -ERANGE, "%s: %u bytes from register %u overflow",
				     cc->expr_name, len, nlreg);
	*reg = (uint8_t)idx;
	return 0;
}

/* nft_parse_register + nft_validate_register_store */
int nftdp_vm_reg_store_check(struct nftdp_vm_cctx *cc, uint32_t nlreg, uint8_t *reg, uint32_t type,
			     uint32_t len)
{
	int idx;

	if (nlreg == NFT_REG_VERDICT) {
		if (type != NFT_DATA_VERDICT)
			return nftdp_vm_errf(cc, -EINVAL, "%s: data into the verdict register",
					     cc->expr_name);
		*reg = NFTDP_VM_REG_VERDICT;
		return 0;
	}
	idx = nftdp_vm_reg_index(nlreg);
	if (idx < 0)
		return nftdp_vm_errf(cc, -ERANGE, "%s: register %u out of range", cc->expr_name,
				     nlreg);
	if (type != NFT_DATA_VALUE)
		return nftdp_vm_errf(cc, -EINVAL, "%s: verdict into a data register",
				     cc->expr_name);
	if (len == 0)
		return nftdp_vm_errf(cc, -EINVAL, "%s: zero-length register store", cc->expr_name);
	if ((uint32_t)idx * 4 + len > NFTDP_VM_REG_SIZE)
		return nftdp_vm_errf(cc, -ERANGE, "%s: %u bytes into register %u overflow",
				     cc->expr_name, len, nlreg);
	*reg = (uint8_t)idx;
	return 0;
}

int nftdp_vm_parse_reg_load(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t attr,
			    uint8_t *reg, uint32_t len)
{
	if (!nftnl_expr_is_set(e, attr))
		return nftdp_vm_errf(cc, -EINVAL, "%s: source register missing", cc->expr_name);
	return nftdp_vm_reg_load_check(cc, nftnl_expr_get_u32(e, attr), reg, len);
}

int nftdp_vm_parse_reg_store(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t attr,
			     uint8_t *reg, uint32_t type, uint32_t len)
{
	if (!nftnl_expr_is_set(e, attr))
		return nftdp_vm_errf(cc, -EINVAL, "%s: destination register missing",
				     cc->expr_name);
	return nftdp_vm_reg_store_check(cc, nftnl_expr_get_u32(e, attr), reg, type, len);
}

/* nft_value_init */
int nftdp_vm_parse_data(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t attr,
			void *buf, uint32_t size, uint32_t *len)
{
	const void *data;
	uint32_t dlen = 0;

	if (!nftnl_expr_is_set(e, attr))
		return nftdp_vm_errf(cc, -EINVAL, "%s: data missing", cc->expr_name);
	data = nftnl_expr_get(e, attr, &dlen);
	if (!data || dlen == 0)
		return nftdp_vm_errf(cc, -EINVAL, "%s: empty data", cc->expr_name);
	if (dlen > size)
		return nftdp_vm_errf(cc, -EOVERFLOW, "%s: %u bytes of data, at most %u",
				     cc->expr_name, dlen, size);
	memset(buf, 0, size);
	memcpy(buf, data, dlen);
	*len = dlen;
	return 0;
}

void *nftdp_vm_blob(struct nftdp_vm_cctx *cc, size_t size)
{
	struct nftdp_vm_chain *c = cc->chain;
	void *p;

	if (c->n_blobs == c->cap_blobs) {
		uint32_t cap = c->cap_blobs ? c->cap_blobs * 2 : 8;
		void **nb = realloc(c->blobs, cap * sizeof(*nb));

		if (!nb)
			return NULL;
		c->blobs = nb;
		c->cap_blobs = cap;
	}
	p = calloc(1, size);
	if (p)
		c->blobs[c->n_blobs++] = p;
	return p;
}

int nftdp_vm_resolve_set(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, uint16_t name_attr,
			 uint16_t id_attr, struct nftdp_vm_set_info *out)
{
	const char *name = NULL;
	uint32_t id = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (nftnl_expr_is_set(e, name_attr))
		name = nftnl_expr_get_str(e, name_attr);
	if (nftnl_expr_is_set(e, id_attr))
		id = nftnl_expr_get_u32(e, id_attr);
	if (!name && !nftnl_expr_is_set(e, id_attr))
		return nftdp_vm_errf(cc, -EINVAL, "%s: no set given", cc->expr_name);
	if (!cc->res || !cc->res->set)
		return nftdp_vm_errf(cc, -ENOENT, "%s: set %s not found", cc->expr_name,
				     name ? name : "(by id)");
	rc = cc->res->set(cc->res->opaque, cc->chain->table, name, id, out);
	if (rc < 0 || !out->set || (out->ops && !out->ops->lookup))
		return nftdp_vm_errf(cc, rc < 0 ? rc : -ENOENT, "%s: set %s not found",
				     cc->expr_name, name ? name : "(by id)");
	return 0;
}

const struct nftdp_vm_expr_type *nftdp_vm_expr_type_find(const char *name)
{
	static const struct nftdp_vm_expr_type *const types[] = {
#define X(n) &nftdp_vm_expr_##n,
	    NFTDP_VM_EXPR_TYPES(X)
#undef X
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i]->name, name) == 0)
			return types[i];
	return NULL;
}

/* ---- chains ---- */

int nftdp_vm_chain_create(const struct nftdp_vm_chain_desc *desc, struct nftdp_vm_state *st,
			  struct nftdp_vm_chain **out)
{
	struct nftdp_vm_chain *c;
	char key[600];
	bool created;
	uint32_t slot;

	if (!desc || !desc->table || !desc->name)
		return -EINVAL;
	if (desc->base && desc->policy != NF_ACCEPT && desc->policy != NF_DROP)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->base = desc->base;
	c->family = desc->family;
	c->hook = desc->hook;
	c->policy = desc->policy;
	c->chain_id = desc->chain_id;
	c->stats_slot = -1;
	c->refs = 1;
	snprintf(c->table, sizeof(c->table), "%s", desc->table);
	snprintf(c->name, sizeof(c->name), "%s", desc->name);
	if (c->base && st) {
		uint32_t ent;

		snprintf(key, sizeof(key), "c\n%u\n%s\n%s", desc->family, desc->table, desc->name);
		if (nftdp_vm_state_get_slot_ent(st, key, NFTDP_VM_SLOT_COUNTER, &slot, &created,
						&ent) == 0 &&
		    nftdp_vm_chain_note_slot(c, ent) == 0)
			c->stats_slot = (int32_t)slot;
	}
	*out = c;
	return 0;
}

static void destroy_ops(struct nftdp_vm_op *ops, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (ops[i].ops && ops[i].ops->destroy)
			ops[i].ops->destroy(ops[i].priv);
}

int nftdp_vm_chain_note_slot(struct nftdp_vm_chain *c, uint32_t ent)
{
	if (c->n_slot_ents == c->cap_slot_ents) {
		uint32_t cap = c->cap_slot_ents ? c->cap_slot_ents * 2 : 8;
		uint32_t *n = realloc(c->slot_ents, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->slot_ents = n;
		c->cap_slot_ents = cap;
	}
	c->slot_ents[c->n_slot_ents++] = ent;
	return 0;
}

void nftdp_vm_chain_ref(struct nftdp_vm_chain *c)
{
	c->refs++;
}

void nftdp_vm_chain_destroy(struct nftdp_vm_chain *c)
{
	if (!c || --c->refs > 0)
		return;
	free(c->slot_ents);
	destroy_ops(c->ops, c->n_ops);
	for (uint32_t i = 0; i < c->n_blobs; i++)
		free(c->blobs[i]);
	free(c->blobs);
	free(c->ops);
	free(c->rules);
	for (uint32_t i = 0; i < c->n_pf; i++)
		free(c->pf[i].slots);
	free(c->pf);
	free(c->ix);
	free(c->span);
	free(c);
}

int nftdp_vm_chain_spans(struct nftdp_vm_chain *ch)
{
	struct nftdp_vm_span *sp = calloc(ch->n_rules ? ch->n_rules : 1, sizeof(*sp));

	if (!sp)
		return -ENOMEM;
	for (uint32_t r = 0; r < ch->n_rules; r++) {
		const struct nftdp_vm_rule *rule = &ch->rules[r];

		/* a chain of rules without ops has no ops array */
		if (!rule->n_ops)
			continue;
		sp[r].op = &ch->ops[rule->first_op + rule->pre];
		sp[r].end = &ch->ops[rule->first_op + rule->n_ops];
	}
	free(ch->span);
	ch->span = sp;
	return 0;
}

uint8_t nftdp_vm_chain_family(const struct nftdp_vm_chain *chain)
{
	return chain->family;
}

uint32_t nftdp_vm_chain_n_rules(const struct nftdp_vm_chain *c)
{
	return c->n_rules;
}

uint32_t nftdp_vm_chain_n_ops(const struct nftdp_vm_chain *c)
{
	return c->n_ops;
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	p = aligned_alloc(64, ((ncap * elem + 63) / 64) * 64);
	if (!p)
		return -ENOMEM;
	if (*arr) {
		memcpy(p, *arr, *cap * elem);
		free(*arr);
	}
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Whether an op's result is fixed by the fields the flow cache keys on
 * (enum nftdp_vm_flow_level): meta's clock and random keys are not, nor
 * are a connection's counters and timeout, nor the inner header (its
 * offset comes from bytes no key field covers). */
static uint8_t op_flow_level(const struct nftdp_vm_op *op)
{
	const struct nftdp_vm_meta *m = (const void *)op->priv;
	const struct nftdp_vm_payload *p = (const void *)op->priv;

	switch (op->ops->flow) {
	case NFTDP_VM_FLOW_REGS:
	case NFTDP_VM_FLOW_COUNTER:
	case NFTDP_VM_FLOW_PRED:
		return NFTDP_VM_FLOW_LVL_ALWAYS;
	case NFTDP_VM_FLOW_PAYLOAD:
		return p->base == NFT_PAYLOAD_INNER_HEADER ? NFTDP_VM_FLOW_LVL_NEVER
							   : NFTDP_VM_FLOW_LVL_ALWAYS;
	case NFTDP_VM_FLOW_META:
		switch (m->key) {
		case NFT_META_PRANDOM:
		case NFT_META_TIME_NS:
		case NFT_META_TIME_DAY:
		case NFT_META_TIME_HOUR:
			return NFTDP_VM_FLOW_LVL_NEVER;
		}
		return NFTDP_VM_FLOW_LVL_ALWAYS;
	case NFTDP_VM_FLOW_CT:
		/* what the connection's own traffic moves */
		switch (m->key) {
		case NFT_CT_EXPIRATION:
		case NFT_CT_PKTS:
		case NFT_CT_BYTES:
		case NFT_CT_AVGPKT:
			return NFTDP_VM_FLOW_LVL_NEVER;
		}
		return NFTDP_VM_FLOW_LVL_ALWAYS;
	case NFTDP_VM_FLOW_LOOKUP:
	case NFTDP_VM_FLOW_OBJREF:
		return op->ops->flow_level ? op->ops->flow_level(op->priv)
					   : NFTDP_VM_FLOW_LVL_NEVER;
	default:
		return NFTDP_VM_FLOW_LVL_NEVER;
	}
}

/*
 * Peephole pass over one rule: a payload_fast load directly followed by a
 * cmp_fast of the register it loaded becomes one op (the pair that most
 * rules start with), and so does a meta nfproto/l4proto load followed by
 * its cmp (what inet rules start with). The load still writes the
 * register, so later expressions see the same state; stateful slots were
 * assigned by expression index during init, so fusing does not move them.
 */
/* a followed by b (a cmp_fast) as one fused op into *out, when b compares
 * the register a loaded; false when the pair does not fuse */
static bool fuse_pair(const struct nftdp_vm_op *a, const struct nftdp_vm_op *b,
		      struct nftdp_vm_op *out)
{
	struct nftdp_vm_cmp_fast c;

	if (b->fast != NFTDP_VM_FAST_CMP)
		return false;
	memcpy(&c, b->priv, sizeof(c));
	switch (a->fast) {
	case NFTDP_VM_FAST_PAYLOAD: {
		struct nftdp_vm_payload_cmp f = {.cmp = c};

		memcpy(&f.payload, a->priv, sizeof(f.payload));
		if (c.sreg != f.payload.dreg)
			return false;
		*out = *a;
		memcpy(out->priv, &f, sizeof(f));
		out->fast = NFTDP_VM_FAST_PAYLOAD_CMP;
		return true;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ /* vm.c inlines FAST_META only there */
	case NFTDP_VM_FAST_META: {
		struct nftdp_vm_meta_cmp f = {.cmp = c};

		memcpy(&f.meta, a->priv, sizeof(f.meta));
		if (c.sreg != f.meta.reg)
			return false;
		*out = *a;
		memcpy(out->priv, &f, sizeof(f));
		out->fast = NFTDP_VM_FAST_META_CMP;
		return true;
	}
#endif
	default:
		return false;
	}
}

static void fuse(struct nftdp_vm_chain *chain, uint32_t first)
{
	uint32_t r = first, w = first;

	while (r < chain->n_ops) {
		if (r + 1 < chain->n_ops &&
		    fuse_pair(&chain->ops[r], &chain->ops[r + 1], &chain->ops[w])) {
			w++;
			r += 2;
			continue;
		}
		if (w != r)
			chain->ops[w] = chain->ops[r];
		w++;
		r++;
	}
	chain->n_ops = w;
}

/*
 * Heads over one rule's ops (after fuse): a payload load followed by a
 * plain-set lookup, or by a bitwise mask of its register and a cmp_fast of
 * the result, and a meta nfproto / l4proto load followed by a plain-set
 * lookup, become a load that runs its followers too (enum
 * nftdp_vm_fast). Unlike fuse, the followers stay: the flow cache's
 * walk, the rule index and a load that falls back to payload's eval see
 * the rule's ops as they were.
 */
/* what a head carries of b, a FAST_LOOKUP op */
static struct nftdp_vm_head_lookup head_lookup(const struct nftdp_vm_op *b)
{
	const struct nftdp_vm_lookup *l = (const void *)b->priv;

	return (struct nftdp_vm_head_lookup){
	    .sreg = l->sreg,
	    .invert = l->invert,
	    .flow = b->flow,
	    .set = l->set,
	    .contains = nftdp_set_contains_fn(l->set),
	};
}

static void heads(struct nftdp_vm_chain *chain, uint32_t first)
{
	for (uint32_t i = first; i + 1 < chain->n_ops; i++) {
		struct nftdp_vm_op *a = &chain->ops[i];
		const struct nftdp_vm_op *b = a + 1;
		struct nftdp_vm_payload p;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ /* vm.c inlines FAST_META only there */
		if (a->fast == NFTDP_VM_FAST_META && b->fast == NFTDP_VM_FAST_LOOKUP) {
			struct nftdp_vm_meta_lookup f = {.lk = head_lookup(b)};

			memcpy(&f.meta, a->priv, sizeof(f.meta));
			memcpy(a->priv, &f, sizeof(f));
			a->fast = NFTDP_VM_FAST_META_LOOKUP;
			i++;
			continue;
		}
#endif
		if (a->fast != NFTDP_VM_FAST_PAYLOAD && a->fast != NFTDP_VM_FAST_PAYLOAD_NH)
			continue;
		memcpy(&p, a->priv, sizeof(p));
		if (b->fast == NFTDP_VM_FAST_LOOKUP) {
			struct nftdp_vm_payload_lookup f = {.payload = p, .lk = head_lookup(b)};

			memcpy(a->priv, &f, sizeof(f));
			a->fast = a->fast == NFTDP_VM_FAST_PAYLOAD
				      ? NFTDP_VM_FAST_PAYLOAD_LOOKUP
				      : NFTDP_VM_FAST_PAYLOAD_NH_LOOKUP;
			i++;
			continue;
		}
		if (a->fast == NFTDP_VM_FAST_PAYLOAD && i + 2 < chain->n_ops &&
		    b->fast == NFTDP_VM_FAST_BITWISE && b[1].fast == NFTDP_VM_FAST_CMP) {
			struct nftdp_vm_payload_bw_cmp f = {.payload = p};

			memcpy(&f.bw, b->priv, sizeof(f.bw));
			memcpy(&f.cmp, b[1].priv, sizeof(f.cmp));
			if (f.bw.sreg != p.dreg || f.cmp.sreg != f.bw.dreg)
				continue;
			memcpy(a->priv, &f, sizeof(f));
			a->fast = NFTDP_VM_FAST_PAYLOAD_BW_CMP;
			i += 2;
		}
	}
}

static int pf_insert(struct nftdp_vm_pf *pf, uint32_t v, uint32_t first, uint32_t last)
{
	if ((pf->n_vals + 1) * 2 > pf->slot_mask + 1) {
		uint32_t n = (pf->slot_mask + 1) * 2;
		struct nftdp_vm_pf_slot *o = pf->slots, *sl = malloc(n * sizeof(*sl));
		uint32_t om = pf->slot_mask;

		if (!sl)
			return -ENOMEM;
		for (uint32_t i = 0; i < n; i++)
			sl[i].first = NFTDP_VM_PF_END;
		pf->slots = sl;
		pf->slot_mask = n - 1;
		pf->n_vals = 0;
		for (uint32_t i = 0; o && i <= om; i++)
			if (o[i].first != NFTDP_VM_PF_END)
				pf_insert(pf, o[i].val, o[i].first, o[i].last);
		free(o);
	}
	for (uint32_t h = nftdp_vm_pf_hash(v);; h++) {
		struct nftdp_vm_pf_slot *sl = &pf->slots[h & pf->slot_mask];

		if (sl->first == NFTDP_VM_PF_END) {
			*sl = (struct nftdp_vm_pf_slot){.val = v, .first = first, .last = last};
			pf->n_vals++;
			return 0;
		}
	}
}

/* Append rule ri to the prefilter: extend the last run or start one. */
static int pf_add_rule(struct nftdp_vm_chain *c, uint32_t ri)
{
	struct nftdp_vm_rule *r = &c->rules[ri];
	const struct nftdp_vm_payload_cmp *f;
	struct nftdp_vm_pf *pf;

	r->pf = 0;
	r->next_same = NFTDP_VM_PF_END;
	if (!r->n_ops || c->ops[r->first_op].fast != NFTDP_VM_FAST_PAYLOAD_CMP)
		return 0;
	f = (const void *)c->ops[r->first_op].priv;
	if (f->cmp.inv)
		return 0;
	pf = c->n_pf ? &c->pf[c->n_pf - 1] : NULL;
	if (!pf || pf->end != ri || memcmp(&pf->payload, &f->payload, sizeof(pf->payload)) ||
	    pf->mask != f->cmp.mask) {
		if (grow((void **)&c->pf, &c->cap_pf, c->n_pf + 1, sizeof(*c->pf)))
			return -ENOMEM;
		pf = &c->pf[c->n_pf++];
		*pf = (struct nftdp_vm_pf){
		    .payload = f->payload, .mask = f->cmp.mask, .start = ri, .end = ri};
		r->pf = c->n_pf;
	}
	for (uint32_t h = nftdp_vm_pf_hash(f->cmp.data); pf->slots; h++) {
		struct nftdp_vm_pf_slot *sl = &pf->slots[h & pf->slot_mask];

		if (sl->first == NFTDP_VM_PF_END)
			break;
		if (sl->val == f->cmp.data) {
			c->rules[sl->last].next_same = ri;
			sl->last = ri;
			pf->end = ri + 1;
			return 0;
		}
	}
	if (pf_insert(pf, f->cmp.data, ri, ri))
		return -ENOMEM;
	pf->end = ri + 1;
	return 0;
}

/* The expressions whose init calls nf_ct_netns_get(): connection tracking
 * on for the table's family while the rule exists (nft_ct, nft_nat,
 * nft_masq, nft_redir, nft_connlimit, nft_synproxy; notrack needs the ct
 * hooks too). */
static bool expr_uses_ct(const char *name)
{
	static const char *const ct_exprs[] = {"ct",	"notrack",   "nat",	"masq",
					       "redir", "connlimit", "synproxy"};

	for (size_t i = 0; i < sizeof(ct_exprs) / sizeof(ct_exprs[0]); i++)
		if (strcmp(name, ct_exprs[i]) == 0)
			return true;
	return false;
}

/* Whether an expression keeps state that more than its own rule sees, so
 * that the order of two packets across chains shows: a dynset changes a
 * set other rules look up, an objref (but a counter's: sums commute)
 * shares a named quota, limit or connlimit, log lines come out in order.
 * In a regular chain, which several base chains may jump to, a rule's own
 * limit, quota, connlimit, numgen or last is shared too. */
static bool expr_shares_state(const char *name, const struct nftnl_expr *e, bool base)
{
	static const char *const own_state[] = {"limit", "quota", "connlimit", "numgen", "last"};

	if (strcmp(name, "dynset") == 0 || strcmp(name, "log") == 0)
		return true;
	for (size_t i = 0; !base && i < sizeof(own_state) / sizeof(own_state[0]); i++)
		if (strcmp(name, own_state[i]) == 0)
			return true;
	if (strcmp(name, "objref") == 0)
		return !nftnl_expr_is_set(e, NFTNL_EXPR_OBJREF_IMM_TYPE) ||
		       nftnl_expr_get_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE) != NFT_OBJECT_COUNTER;
	return false;
}

int nftdp_vm_chain_add_rule(struct nftdp_vm_chain *chain, const struct nftnl_rule *rule,
			    const struct nftdp_vm_resolver *res, struct nftdp_vm_state *st,
			    struct nftdp_vm_error *err)
{
	struct nftdp_vm_cctx cc = {
	    .chain = chain,
	    .res = res,
	    .st = st,
	    .err = err,
	    .expr_name = "rule",
	    .rule = rule,
	};
	struct nftnl_expr_iter *it;
	struct nftnl_expr *e;
	uint32_t first = chain->n_ops, n = 0;
	bool uses_ct = false, shares_state = false, order_state = false, uses_fib = false;
	bool uses_synproxy = false, reads_ct_table = false;
	int rc = 0;

	if (err) {
		memset(err, 0, sizeof(*err));
		err->expr_index = -1;
	}
	if (!rule)
		return -EINVAL;
	if (nftnl_rule_is_set(rule, NFTNL_RULE_HANDLE))
		cc.handle = nftnl_rule_get_u64(rule, NFTNL_RULE_HANDLE);
	if (grow((void **)&chain->rules, &chain->cap_rules, chain->n_rules + 1,
		 sizeof(*chain->rules)))
		return -ENOMEM;

	it = nftnl_expr_iter_create(rule);
	if (!it)
		return -ENOMEM;
	for (e = nftnl_expr_iter_next(it); e; e = nftnl_expr_iter_next(it), n++) {
		const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
		const struct nftdp_vm_expr_type *type;
		const struct nftdp_vm_expr_ops *ops;
		struct nftdp_vm_op *op;

		cc.expr_index = n;
		cc.expr_name = name ? name : "?";
		if (n == NFT_RULE_MAXEXPRS) {
			rc = nftdp_vm_errf(&cc, -EINVAL, "rule: more than %d expressions",
					   NFT_RULE_MAXEXPRS);
			break;
		}
		type = name ? nftdp_vm_expr_type_find(name) : NULL;
		if (!type) {
			rc = nftdp_vm_errf(&cc, -EOPNOTSUPP, "%s: not supported by nftdp",
					   cc.expr_name);
			break;
		}
		ops = type->select_ops ? type->select_ops(&cc, e) : type->ops;
		if (!ops) {
			rc = (err && err->err) ? err->err : -EINVAL;
			break;
		}
		if (grow((void **)&chain->ops, &chain->cap_ops, chain->n_ops + 1,
			 sizeof(*chain->ops))) {
			rc = -ENOMEM;
			break;
		}
		op = &chain->ops[chain->n_ops];
		memset(op, 0, sizeof(*op));
		op->ops = ops;
		op->eval = ops->eval;
		op->fast = ops->fast;
		rc = ops->init ? ops->init(&cc, e, op->priv) : 0;
		if (rc < 0) {
			if (err && !err->err)
				nftdp_vm_errf(&cc, rc, "%s: invalid attributes", cc.expr_name);
			op->ops = NULL;
			break;
		}
		op->flow = op_flow_level(op);
		if (nftdp_vm_lookup_fast(op))
			op->fast = NFTDP_VM_FAST_LOOKUP;
		chain->n_ops++;
		uses_ct |= expr_uses_ct(cc.expr_name) || nftdp_vm_compat_uses_ct(e) || cc.needs_ct;
		cc.needs_ct = false;
		uses_fib |= cc.needs_routes;
		cc.needs_routes = false;
		uses_synproxy |= cc.needs_synproxy;
		cc.needs_synproxy = false;
		/* ct count looks connections up in the table; a dynset's
		 * element expressions may hold one */
		reads_ct_table |=
		    strcmp(cc.expr_name, "connlimit") == 0 || strcmp(cc.expr_name, "dynset") == 0;
		shares_state |= expr_shares_state(cc.expr_name, e, chain->base);
		/* the same test as for a regular chain: state any packet moves */
		order_state |= expr_shares_state(cc.expr_name, e, false);
		shares_state |= nftdp_vm_compat_logs(e);
		order_state |= nftdp_vm_compat_logs(e);
		shares_state |= nftdp_vm_compat_shares_state(e, chain->base);
		order_state |= nftdp_vm_compat_shares_state(e, false);
	}
	nftnl_expr_iter_destroy(it);
	if (rc < 0) {
		if (chain->n_ops > first) /* no ops array before the first op */
			destroy_ops(&chain->ops[first], chain->n_ops - first);
		chain->n_ops = first;
		return rc;
	}
	fuse(chain, first);
	heads(chain, first);
	chain->rules[chain->n_rules++] = (struct nftdp_vm_rule){
	    .handle = cc.handle,
	    .first_op = first,
	    .n_ops = chain->n_ops - first,
	};
	if (pf_add_rule(chain, chain->n_rules - 1)) {
		chain->n_rules--;
		destroy_ops(&chain->ops[first], chain->n_ops - first);
		chain->n_ops = first;
		return -ENOMEM;
	}
	chain->uses_ct |= uses_ct;
	chain->uses_fib |= uses_fib;
	chain->uses_synproxy |= uses_synproxy;
	chain->reads_ct_table |= reads_ct_table;
	chain->shares_state |= shares_state;
	chain->order_state |= order_state;
	return 0;
}

bool nftdp_vm_chain_order_state(const struct nftdp_vm_chain *chain)
{
	return chain && chain->order_state;
}

bool nftdp_vm_chain_shares_state(const struct nftdp_vm_chain *chain)
{
	return chain && chain->shares_state;
}

bool nftdp_vm_chain_uses_ct(const struct nftdp_vm_chain *chain)
{
	return chain && chain->uses_ct;
}

bool nftdp_vm_chain_uses_synproxy(const struct nftdp_vm_chain *chain)
{
	return chain && chain->uses_synproxy;
}

bool nftdp_vm_chain_reads_ct_table(const struct nftdp_vm_chain *chain)
{
	return chain && chain->reads_ct_table;
}

bool nftdp_vm_chain_uses_fib(const struct nftdp_vm_chain *chain)
{
	return chain && chain->uses_fib;
}

/* ---- nft_chain_validate ---- */

static int validate(const struct nftdp_vm_chain *c, unsigned int level,
		    const struct nftdp_vm_chain **path, struct nftdp_vm_error *err);

/* The targets of one op, through validate; a verdict map may have more
 * than fit on the stack. */
static int validate_op(const struct nftdp_vm_chain *c, const struct nftdp_vm_op *op,
		       unsigned int level, const struct nftdp_vm_chain **path,
		       struct nftdp_vm_error *err)
{
	const struct nftdp_vm_chain *buf[64], **t = buf;
	int n, rc = 0;

	n = op->ops->targets(op->priv, t, 64);
	if (n > 64) {
		t = malloc((size_t)n * sizeof(*t));
		if (!t)
			return -ENOMEM;
		n = op->ops->targets(op->priv, t, n);
	}
	for (int j = 0; j < n && rc == 0; j++) {
		if (!t[j])
			continue;
		if (t[j]->base) {
			if (err) {
				err->err = -EOPNOTSUPP;
				snprintf(err->msg, sizeof(err->msg),
					 "chain %.50s: jump to base chain %.50s", c->name,
					 t[j]->name);
			}
			rc = -EOPNOTSUPP;
			break;
		}
		for (unsigned int k = 0; k <= level; k++) {
			if (path[k] == t[j]) {
				if (err) {
					err->err = -ELOOP;
					snprintf(err->msg, sizeof(err->msg),
						 "chain %.50s: jump to %.50s loops", c->name,
						 t[j]->name);
				}
				rc = -ELOOP;
				break;
			}
		}
		if (rc == 0)
			rc = validate(t[j], level + 1, path, err);
	}
	if (t != buf)
		free(t);
	return rc;
}

static int validate(const struct nftdp_vm_chain *c, unsigned int level,
		    const struct nftdp_vm_chain **path, struct nftdp_vm_error *err)
{
	int rc;

	if (level == NFTDP_VM_JUMP_STACK_SIZE) {
		if (err) {
			err->err = -EMLINK;
			snprintf(err->msg, sizeof(err->msg), "chain %.60s: jump depth exceeds %d",
				 c->name, NFTDP_VM_JUMP_STACK_SIZE);
		}
		return -EMLINK;
	}
	path[level] = c;
	for (uint32_t i = 0; i < c->n_ops; i++) {
		const struct nftdp_vm_op *op = &c->ops[i];

		if (!op->ops->targets)
			continue;
		rc = validate_op(c, op, level, path, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int nftdp_vm_chain_check_targets(const struct nftdp_vm_chain *c,
				 struct nftdp_vm_chain *const *chains, uint32_t n_chains,
				 struct nftdp_vm_error *err)
{
	const struct nftdp_vm_chain *buf[64], **t;
	int n, rc = 0;

	for (uint32_t i = 0; i < c->n_ops && rc == 0; i++) {
		const struct nftdp_vm_op *op = &c->ops[i];

		if (!op->ops->targets)
			continue;
		t = buf;
		n = op->ops->targets(op->priv, t, 64);
		if (n > 64) {
			t = malloc((size_t)n * sizeof(*t));
			if (!t)
				return -ENOMEM;
			n = op->ops->targets(op->priv, t, n);
		}
		for (int j = 0; j < n; j++) {
			if (t[j] &&
			    (t[j]->chain_id >= n_chains || chains[t[j]->chain_id] != t[j])) {
				if (err) {
					err->err = -EINVAL;
					snprintf(err->msg, sizeof(err->msg),
						 "chain %.40s: jump to %.40s of another generation",
						 c->name, t[j]->name);
				}
				rc = -EINVAL;
				break;
			}
		}
		if (t != buf)
			free(t);
	}
	return rc;
}

int nftdp_vm_validate(const struct nftdp_vm_chain *base, struct nftdp_vm_error *err)
{
	const struct nftdp_vm_chain *path[NFTDP_VM_JUMP_STACK_SIZE + 1];

	if (err) {
		memset(err, 0, sizeof(*err));
		err->expr_index = -1;
	}
	return validate(base, 0, path, err);
}
