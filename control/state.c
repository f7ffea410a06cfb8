/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The object store's shared helpers: what every obj_*.c file, the commit
 * (trans.c) and the generation build (build.c) use, so that no object file
 * calls another. Creating and destroying the store, recording a step in the
 * transaction log (nft_trans_alloc), lookups by name, handle and batch id
 * (nft_table_lookup, nft_chain_lookup, nft_set_lookup_global, ...), chain
 * ids, use counts of references, freeing objects, deleting rules with
 * their bound anonymous sets (nft_delrule), and the few expression checks
 * rules and objects share. See ctl_state.h for the theory of operation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"
#include "nftdp_common.h"

/* ---- the store ---- */

int ctl_state_create(struct nftdp_ctl *ctl)
{
	struct ctl_state *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return -ENOMEM;
	ctl_list_init(&st->tables);
	ctl_list_init(&st->trans);
	st->genid = 1; /* a new netns starts at 1 */
	st->epoch_ms = nftdp_now_ms();
	ctl->state = st;
	return 0;
}

void ctl_state_destroy(struct nftdp_ctl *ctl)
{
	struct ctl_state *st = ctl->state;
	struct ctl_table *t, *tn;

	if (st == NULL)
		return;
	ctl_list_for_each_entry_safe(t, tn, &st->tables, list) {
		ctl_list_del(&t->list);
		ctl_table_free(t);
	}
	free(st);
	ctl->state = NULL;
}

/* ---- the transaction log of the open batch (its commit: trans.c) ---- */

struct ctl_trans *ctl_trans_add(struct ctl_msg *m, enum ctl_trans_op op, struct ctl_table *t,
				void *obj)
{
	struct ctl_trans *tr = calloc(1, sizeof(*tr));

	if (tr == NULL)
		return NULL;
	tr->op = op;
	tr->family = t->family;
	tr->table = t;
	tr->obj = obj;
	tr->session = m->s;
	tr->portid = ctl_session_portid(m->s);
	tr->seq = m->nlh->nlmsg_seq;
	tr->nlflags = m->nlh->nlmsg_flags;
	tr->req = m->nlh;
	ctl_list_add_tail(&tr->list, &m->st->trans);
	return tr;
}

/* ---- lookups ---- */

static bool attr_streq(const struct nlattr *a, const char *s)
{
	const char *p = mnl_attr_get_payload(a);
	size_t len = mnl_attr_get_payload_len(a);

	if (len && p[len - 1] == '\0')
		len--;
	return strlen(s) == len && memcmp(p, s, len) == 0;
}

/* nft_table_lookup(): active tables only; an owned table is reserved to its
 * owner. On failure the name is the message's offending attribute. */
struct ctl_table *ctl_table_lookup(struct ctl_msg *m, const struct nlattr *name, uint8_t family,
				   int *err)
{
	struct ctl_table *t;

	m->bad_attr = name;
	if (name == NULL) {
		*err = -EINVAL;
		return NULL;
	}
	ctl_list_for_each_entry(t, &m->st->tables, list) {
		if (t->dead || t->family != family || !attr_streq(name, t->name))
			continue;
		if ((t->flags & NFT_TABLE_F_OWNER) && t->nlpid != ctl_session_portid(m->s)) {
			*err = -EPERM;
			return NULL;
		}
		m->bad_attr = NULL;
		return t;
	}
	*err = -ENOENT;
	return NULL;
}

uint64_t ctl_table_alloc_handle(struct ctl_table *t)
{
	return ++t->hgenerator;
}

struct ctl_chain *ctl_chain_lookup(struct ctl_table *t, const char *name)
{
	struct ctl_chain *c;

	ctl_list_for_each_entry(c, &t->chains, list)
		if (!c->dead && strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

struct ctl_chain *ctl_chain_lookup_handle(struct ctl_table *t, uint64_t handle)
{
	struct ctl_chain *c;

	ctl_list_for_each_entry(c, &t->chains, list)
		if (!c->dead && c->handle == handle)
			return c;
	return NULL;
}

struct ctl_chain *ctl_chain_lookup_id(struct ctl_state *st, struct ctl_table *t, uint32_t id)
{
	struct ctl_trans *tr;

	/* newest first: the object is usually created just before its use */
	ctl_list_for_each_entry_reverse(tr, &st->trans, list) {
		struct ctl_chain *c = tr->obj;

		if (tr->op == CTL_TR_NEWCHAIN && tr->table == t && !c->dead && c->chain_id == id)
			return c;
	}
	return NULL;
}

static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	while (*name) {
		h ^= (uint8_t)*name++;
		h *= 16777619u;
	}
	return h;
}

int ctl_set_link(struct ctl_table *t, struct ctl_set *s)
{
	if (t->set_hcount + 1 > t->set_hsize) {
		uint32_t nsize = t->set_hsize ? t->set_hsize * 2 : 16;
		struct ctl_set **nt = calloc(nsize, sizeof(*nt));
		struct ctl_set *o;

		if (nt == NULL)
			return -ENOMEM;
		ctl_list_for_each_entry(o, &t->sets, list) {
			o->hnext = nt[o->hash & (nsize - 1)];
			nt[o->hash & (nsize - 1)] = o;
		}
		free(t->set_htab);
		t->set_htab = nt;
		t->set_hsize = nsize;
	}
	s->hash = name_hash(s->name);
	s->hnext = t->set_htab[s->hash & (t->set_hsize - 1)];
	t->set_htab[s->hash & (t->set_hsize - 1)] = s;
	t->set_hcount++;
	ctl_list_add_tail(&s->list, &t->sets);
	return 0;
}

void ctl_set_unlink(struct ctl_set *s)
{
	struct ctl_table *t = s->table;
	struct ctl_set **pp = &t->set_htab[s->hash & (t->set_hsize - 1)];

	while (*pp && *pp != s)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = s->hnext;
	t->set_hcount--;
	ctl_list_del(&s->list);
}

struct ctl_set *ctl_set_lookup(struct ctl_table *t, const char *name)
{
	uint32_t h = name_hash(name);
	struct ctl_set *s;

	if (t->set_hsize == 0)
		return NULL;
	for (s = t->set_htab[h & (t->set_hsize - 1)]; s; s = s->hnext)
		if (s->hash == h && !s->dead && strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct ctl_set *ctl_set_lookup_id(struct ctl_state *st, struct ctl_table *t, uint32_t id)
{
	struct ctl_trans *tr;

	/* newest first: the object is usually created just before its use */
	ctl_list_for_each_entry_reverse(tr, &st->trans, list) {
		struct ctl_set *s = tr->obj;

		if (tr->op == CTL_TR_NEWSET && tr->table == t && !s->dead && s->set_id == id)
			return s;
	}
	return NULL;
}

struct ctl_obj *ctl_obj_lookup(struct ctl_table *t, const char *name, uint32_t type)
{
	struct ctl_obj *o;

	ctl_list_for_each_entry(o, &t->objs, list)
		if (!o->dead && o->type == type && strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

struct ctl_flowtable *ctl_flowtable_lookup(struct ctl_table *t, const char *name)
{
	struct ctl_flowtable *f;

	ctl_list_for_each_entry(f, &t->flowtables, list)
		if (!f->dead && strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

bool ctl_iface_exists(const struct nftdp_ctl *ctl, const char *name)
{
	for (unsigned int i = 0; i < ctl->cfg.n_ifaces; i++)
		if (strcmp(ctl->cfg.ifaces[i].name, name) == 0)
			return true;
	return false;
}

/* ---- chain ids: a chain's index in every generation's chain table ---- */

static uint64_t *chain_ids;
static uint32_t chain_id_words;

uint32_t ctl_chain_id_get(void)
{
	for (uint32_t w = 0; w < chain_id_words; w++) {
		if (chain_ids[w] != ~0ull) {
			int b = __builtin_ctzll(~chain_ids[w]);

			chain_ids[w] |= 1ull << b;
			return w * 64 + (uint32_t)b;
		}
	}
	uint32_t n = chain_id_words ? chain_id_words * 2 : 4;
	uint64_t *m = realloc(chain_ids, n * sizeof(*m));

	if (!m)
		return 0;
	memset(m + chain_id_words, 0, (n - chain_id_words) * sizeof(*m));
	if (chain_id_words == 0)
		m[0] = 1; /* id 0 means "none" */
	chain_ids = m;
	chain_id_words = n;
	return ctl_chain_id_get();
}

void ctl_chain_id_put(uint32_t id)
{
	if (id && id / 64 < chain_id_words)
		chain_ids[id / 64] &= ~(1ull << (id % 64));
}

/* ---- references and use counts ---- */

void ctl_refs_get(struct ctl_ref *refs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		switch (refs[i].kind) {
		case CTL_REF_CHAIN:
			((struct ctl_chain *)refs[i].obj)->use++;
			break;
		case CTL_REF_SET:
			((struct ctl_set *)refs[i].obj)->use++;
			break;
		case CTL_REF_OBJ:
			((struct ctl_obj *)refs[i].obj)->use++;
			break;
		case CTL_REF_FLOWTABLE:
			((struct ctl_flowtable *)refs[i].obj)->use++;
			break;
		}
	}
}

void ctl_refs_put(struct ctl_ref *refs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		switch (refs[i].kind) {
		case CTL_REF_CHAIN:
			((struct ctl_chain *)refs[i].obj)->use--;
			break;
		case CTL_REF_SET:
			((struct ctl_set *)refs[i].obj)->use--;
			break;
		case CTL_REF_OBJ:
			((struct ctl_obj *)refs[i].obj)->use--;
			break;
		case CTL_REF_FLOWTABLE:
			((struct ctl_flowtable *)refs[i].obj)->use--;
			break;
		}
	}
}

void ctl_elem_refs(struct ctl_elem *e, int delta)
{
	if (e->chain_ref)
		e->chain_ref->use += delta;
	if (e->obj_ref)
		((struct ctl_obj *)e->obj_ref)->use += delta;
}

/* ---- object lifetimes ---- */

void ctl_table_free(struct ctl_table *t)
{
	struct ctl_chain *c, *cn;
	struct ctl_set *s, *sn;
	struct ctl_obj *o, *on;
	struct ctl_flowtable *f, *fn;

	ctl_list_for_each_entry_safe(c, cn, &t->chains, list) {
		struct ctl_rule *r, *rn;

		ctl_list_for_each_entry_safe(r, rn, &c->rules, list) {
			ctl_list_del(&r->list);
			ctl_rule_free(r);
		}
		ctl_list_del(&c->list);
		ctl_chain_free(c);
	}
	ctl_list_for_each_entry_safe(s, sn, &t->sets, list) {
		ctl_set_unlink(s);
		ctl_set_free(s);
	}
	ctl_list_for_each_entry_safe(o, on, &t->objs, list) {
		ctl_list_del(&o->list);
		ctl_obj_free(o);
	}
	ctl_list_for_each_entry_safe(f, fn, &t->flowtables, list) {
		ctl_list_del(&f->list);
		ctl_flowtable_free(f);
	}
	free(t->name);
	free(t->udata);
	free(t->anon_used);
	free(t->set_htab);
	free(t);
}

void ctl_chain_free(struct ctl_chain *c)
{
	ctl_chain_id_put(c->dp_id);
	nftnl_chain_free(c->nl);
	free(c);
}

void ctl_rule_free(struct ctl_rule *r)
{
	free(r->stats);
	free(r->blob);
	nftnl_rule_free(r->nl);
	free(r->refs);
	free(r);
}

static void anon_release(struct ctl_set *s)
{
	struct ctl_table *t = s->table;

	if (s->anon_num < 0 || t == NULL || (uint32_t)s->anon_num / 64 >= t->anon_words)
		return;
	t->anon_used[s->anon_num / 64] &= ~(1ull << (s->anon_num % 64));
}

void ctl_set_free(struct ctl_set *s)
{
	struct ctl_elem *e, *en;

	anon_release(s);
	ctl_list_for_each_entry_safe(e, en, &s->elems, list)
		ctl_elem_free(e);
	free(s->htab);
	free(s->elem_expr);
	free(s->dp_expr_tmpl);
	nftnl_set_free(s->nl);
	free(s);
}

void ctl_set_elem_unlink(struct ctl_set *s, struct ctl_elem *e)
{
	struct ctl_elem **pp = &s->htab[e->hash & (s->hsize - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	ctl_list_del(&e->list);
	s->nhashed--;
}

void ctl_elem_free(struct ctl_elem *e)
{
	free(e->data);
	free(e->udata);
	free(e->expr);
	free(e->objref);
	free(e);
}

void ctl_obj_free(struct ctl_obj *o)
{
	nftnl_obj_free(o->nl);
	free(o);
}

void ctl_flowtable_free(struct ctl_flowtable *f)
{
	nftnl_flowtable_free(f->nl);
	free(f);
}

/* ---- deleting rules (nft_delrule, nft_delrule_by_chain) ---- */

/* A binding chain goes with the rule that holds it (nft_immediate_deactivate):
 * its rules and the chain, without events of their own. It stays bound, so
 * that an abort gives it back to the rule. */
static int rule_delete(struct ctl_msg *m, struct ctl_rule *r, bool quiet);

static int binding_chain_delete(struct ctl_msg *m, struct ctl_chain *c)
{
	struct ctl_trans *tr;
	struct ctl_rule *r;
	int err;

	ctl_list_for_each_entry(r, &c->rules, list) {
		if (r->dead)
			continue;
		err = rule_delete(m, r, true);
		if (err < 0)
			return err;
	}
	tr = ctl_trans_add(m, CTL_TR_DELCHAIN, c->table, c);
	if (tr == NULL)
		return -ENOMEM;
	tr->quiet = true;
	c->dead = true;
	c->table->use--;
	return 0;
}

static int rule_delete(struct ctl_msg *m, struct ctl_rule *r, bool quiet)
{
	struct ctl_trans *tr = ctl_trans_add(m, CTL_TR_DELRULE, r->chain->table, r);

	if (tr == NULL)
		return -ENOMEM;
	tr->quiet = quiet;
	r->dead = true;
	r->chain->use--;
	r->chain->nrules--;
	ctl_refs_put(r->refs, r->nrefs);
	for (unsigned int i = 0; i < r->nrefs; i++) {
		struct ctl_chain *c = r->refs[i].obj;
		int err;

		if (r->refs[i].kind != CTL_REF_CHAIN || !c->binding || c->dead)
			continue;
		err = binding_chain_delete(m, c);
		if (err < 0)
			return err;
	}
	/* an anonymous set goes with the rule that bound it
	 * (nf_tables_deactivate_set), with its own DELSET step */
	for (unsigned int i = 0; i < r->nrefs; i++) {
		struct ctl_set *s = r->refs[i].obj;

		if (r->refs[i].kind != CTL_REF_SET || !s->anonymous || s->use > 0 || s->dead)
			continue;
		tr = ctl_trans_add(m, CTL_TR_DELSET, s->table, s);
		if (tr == NULL)
			return -ENOMEM;
		tr->quiet = quiet;
		s->dead = true;
		s->table->use--;
	}
	return 0;
}

int ctl_rule_delete(struct ctl_msg *m, struct ctl_rule *r)
{
	return rule_delete(m, r, false);
}

/* Delete every live rule of c (nft_delrule_by_chain). */
int ctl_chain_flush_rules(struct ctl_msg *m, struct ctl_chain *c)
{
	struct ctl_rule *r;
	int err;

	ctl_list_for_each_entry(r, &c->rules, list) {
		if (r->dead)
			continue;
		err = ctl_rule_delete(m, r);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Delete every live rule of every live chain of t. */
int ctl_table_flush_rules(struct ctl_msg *m, struct ctl_table *t)
{
	struct ctl_chain *c;
	int err;

	ctl_list_for_each_entry(c, &t->chains, list) {
		/* a binding chain's rules go with the rule holding it */
		if (c->dead || c->binding)
			continue;
		err = ctl_chain_flush_rules(m, c);
		if (err < 0)
			return err;
	}
	return 0;
}

/* ---- edits at commit ---- */

/* Rebuild the verdict data of e with a new chain name (chain rename). */
void ctl_elem_set_verdict_chain(struct ctl_elem *e, const char *name)
{
	char buf[512];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	const struct nlattr *v, *code = NULL, *a, *attr;
	struct nlattr *nv, *nd;
	void *nb;

	mnl_attr_for_each_payload(e->data, e->datalen)
	{
		if (mnl_attr_get_type(attr) != NFTA_DATA_VERDICT)
			continue;
		v = attr;
		mnl_attr_for_each_nested(a, v) if (mnl_attr_get_type(a) == NFTA_VERDICT_CODE) code =
		    a;
	}
	if (code == NULL)
		return;
	nd = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_DATA);
	nv = mnl_attr_nest_start(nlh, NFTA_DATA_VERDICT);
	mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, mnl_attr_get_u32(code));
	mnl_attr_put_strz(nlh, NFTA_VERDICT_CHAIN, name);
	mnl_attr_nest_end(nlh, nv);
	mnl_attr_nest_end(nlh, nd);
	nb = malloc(mnl_attr_get_payload_len(nd));
	if (nb == NULL)
		return;
	memcpy(nb, mnl_attr_get_payload(nd), mnl_attr_get_payload_len(nd));
	free(e->data);
	e->data = nb;
	e->datalen = mnl_attr_get_payload_len(nd);
}

/* ---- expression checks shared by rules and objects ---- */

int ctl_limit_check(uint64_t rate, uint64_t unit, uint32_t burst, bool bytes)
{
	uint64_t nsecs, tokens_max;

	if (__builtin_mul_overflow(unit, 1000000000ull, &nsecs) || rate == 0 || nsecs < unit)
		return -EOVERFLOW;
	if (rate + burst < rate)
		return -EOVERFLOW;
	if (bytes && __builtin_mul_overflow(nsecs, rate + burst, &tokens_max))
		return -EOVERFLOW;
	return 0;
}
