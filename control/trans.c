/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commit and abort of one batch's transaction log (its steps are
 * recorded by ctl_trans_add, state.c), mirroring nf_tables_commit and
 * __nf_tables_abort. See ctl_state.h for the theory of operation. The
 * commit is one function, ctl_commit(), in the kernel's numbered phases:
 *   1. validate: jump depth, loops and expression hooks of every table
 *      (nf_tables_validate); -EAGAIN makes the caller replay the batch
 *      checking after every message, as nfnetlink does
 *   2. prepare: build the next generation and stage the batch's set and
 *      object changes (build.c); may fail, then everything is undone
 *      (a check-only batch, nft -c, stops here and undoes everything)
 *   3. publish: one pointer store makes rules, set contents and objects
 *      visible together; cannot fail after this point
 *   4. genid++ (never 0, as nft_base_seq) and the notifications of each
 *      step in message order, then NEWGEN
 *   5. release what the batch deleted; the old generation is retired by
 *      the domain and freed after the grace period (nftdp_vm_gen_reclaim)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"

/* ---- validation: nft_table_validate / nft_chain_validate ----
 * A path of NFT_JUMP_STACK_SIZE jumps from a base chain is -EMLINK; a loop
 * reachable from a base chain is an endless path. */

struct vstate {
	struct ctl_chain *c;
	int height; /* -1: being visited */
};

static int chain_height(struct ctl_chain *c, struct vstate *vs, unsigned int n, int depth);
int ctl_table_validate_depth(struct ctl_table *t);

static struct vstate *vs_find(struct vstate *vs, unsigned int n, struct ctl_chain *c)
{
	for (unsigned int i = 0; i < n; i++)
		if (vs[i].c == c)
			return &vs[i];
	return NULL;
}

static int visit(struct ctl_chain *target, struct vstate *vs, unsigned int n, int depth, int *h)
{
	int th = chain_height(target, vs, n, depth + 1);

	if (th < 0)
		return th;
	if (th + 1 > *h)
		*h = th + 1;
	return 0;
}

static int chain_height(struct ctl_chain *c, struct vstate *vs, unsigned int n, int depth)
{
	struct vstate *v = vs_find(vs, n, c);
	struct ctl_rule *r;
	int h = 0, err;

	if (v == NULL)
		return 0;
	if (v->height == -1 || depth >= CTL_JUMP_STACK_SIZE)
		return -EMLINK;
	if (v->height >= 0)
		return v->height;
	v->height = -1;
	ctl_list_for_each_entry(r, &c->rules, list) {
		if (r->dead)
			continue;
		for (unsigned int i = 0; i < r->nrefs; i++) {
			if (r->refs[i].kind == CTL_REF_CHAIN) {
				err = visit(r->refs[i].obj, vs, n, depth, &h);
				if (err < 0)
					return err;
			} else if (r->refs[i].kind == CTL_REF_SET) {
				struct ctl_set *s = r->refs[i].obj;
				struct ctl_elem *e;

				if (!(s->flags & NFT_SET_MAP) || s->dtype != NFT_DATA_VERDICT)
					continue;
				ctl_list_for_each_entry(e, &s->elems, list) {
					if (e->dead || e->chain_ref == NULL)
						continue;
					err = visit(e->chain_ref, vs, n, depth, &h);
					if (err < 0)
						return err;
				}
			}
		}
	}
	if (depth + h >= CTL_JUMP_STACK_SIZE)
		return -EMLINK;
	v->height = h;
	return h;
}

/* Every rule reachable from a base chain may run at its hook (and chain
 * type, for nat expressions). */
static int hooks_walk(struct ctl_chain *c, uint32_t hook, bool nat, unsigned int depth)
{
	struct ctl_rule *r;
	int err;

	if (depth > CTL_JUMP_STACK_SIZE)
		return 0; /* the depth check reports this */
	ctl_list_for_each_entry(r, &c->rules, list) {
		if (r->dead)
			continue;
		if (!(r->hook_mask & (1u << hook)) || (r->need_nat && !nat))
			return -EOPNOTSUPP;
		for (unsigned int i = 0; i < r->nrefs; i++) {
			if (r->refs[i].kind == CTL_REF_CHAIN) {
				err = hooks_walk(r->refs[i].obj, hook, nat, depth + 1);
				if (err < 0)
					return err;
			} else if (r->refs[i].kind == CTL_REF_SET) {
				struct ctl_set *s = r->refs[i].obj;
				struct ctl_elem *e;

				if (s->dtype != NFT_DATA_VERDICT)
					continue;
				ctl_list_for_each_entry(e, &s->elems, list) {
					if (e->dead || e->chain_ref == NULL)
						continue;
					err = hooks_walk(e->chain_ref, hook, nat, depth + 1);
					if (err < 0)
						return err;
				}
			}
		}
	}
	return 0;
}

static bool table_constrained(struct ctl_table *t)
{
	struct ctl_chain *c;
	struct ctl_rule *r;

	ctl_list_for_each_entry(c, &t->chains, list)
		ctl_list_for_each_entry(r, &c->rules, list)
			if (!r->dead && (r->hook_mask != ~0u || r->need_nat))
				return true;
	return false;
}

int ctl_table_validate(struct ctl_table *t)
{
	int err = ctl_table_validate_depth(t);
	struct ctl_chain *c;

	if (err < 0 || !table_constrained(t))
		return err;
	ctl_list_for_each_entry(c, &t->chains, list) {
		if (c->dead || !c->base)
			continue;
		err =
		    hooks_walk(c, c->hooknum,
			       strcmp(nftnl_chain_get_str(c->nl, NFTNL_CHAIN_TYPE), "nat") == 0, 0);
		if (err < 0)
			return err;
	}
	return 0;
}

int ctl_table_validate_depth(struct ctl_table *t)
{
	struct ctl_chain *c;
	struct vstate *vs;
	unsigned int n = 0, i = 0;
	int err = 0;

	ctl_list_for_each_entry(c, &t->chains, list)
		n++;
	if (n == 0)
		return 0;
	vs = calloc(n, sizeof(*vs));
	if (vs == NULL)
		return -ENOMEM;
	ctl_list_for_each_entry(c, &t->chains, list) {
		vs[i].c = c;
		vs[i].height = -2;
		i++;
	}
	ctl_list_for_each_entry(c, &t->chains, list) {
		if (c->dead || !c->base)
			continue;
		err = chain_height(c, vs, n, 0);
		if (err < 0)
			break;
		err = 0;
	}
	free(vs);
	return err;
}

/* ---- notifications ---- */

static uint16_t event_of(enum ctl_trans_op op)
{
	switch (op) {
	case CTL_TR_NEWTABLE:
	case CTL_TR_UPDTABLE:
		return NFT_MSG_NEWTABLE;
	case CTL_TR_DELTABLE:
		return NFT_MSG_DELTABLE;
	case CTL_TR_NEWCHAIN:
	case CTL_TR_UPDCHAIN:
		return NFT_MSG_NEWCHAIN;
	case CTL_TR_DELCHAIN:
		return NFT_MSG_DELCHAIN;
	case CTL_TR_NEWRULE:
		return NFT_MSG_NEWRULE;
	case CTL_TR_DELRULE:
		return NFT_MSG_DELRULE;
	case CTL_TR_NEWSET:
		return NFT_MSG_NEWSET;
	case CTL_TR_DELSET:
		return NFT_MSG_DELSET;
	case CTL_TR_NEWSETELEM:
		return NFT_MSG_NEWSETELEM;
	case CTL_TR_DELSETELEM:
		return NFT_MSG_DELSETELEM;
	case CTL_TR_NEWOBJ:
	case CTL_TR_UPDOBJ:
		return NFT_MSG_NEWOBJ;
	case CTL_TR_DELOBJ:
		return NFT_MSG_DELOBJ;
	case CTL_TR_NEWFLOWTABLE:
	case CTL_TR_UPDFLOWTABLE:
		return NFT_MSG_NEWFLOWTABLE;
	case CTL_TR_DELFLOWTABLE:
		return NFT_MSG_DELFLOWTABLE;
	}
	return 0;
}

static struct ctl_rule *rule_prev(const struct ctl_rule *r)
{
	const struct ctl_list *p = r->list.prev;

	if (p == &r->chain->rules)
		return NULL;
	return ctl_list_entry(p, struct ctl_rule, list);
}

static void fill_event(struct nlmsghdr *nlh, const struct ctl_trans *tr)
{
	switch (tr->op) {
	case CTL_TR_DELTABLE:
		/* nf_tables_fill_table_info: a delete event names the table */
		mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, tr->table->name);
		mnl_attr_put_u64(nlh, NFTA_TABLE_HANDLE, htobe64(tr->table->handle));
		break;
	case CTL_TR_NEWTABLE:
	case CTL_TR_UPDTABLE:
		ctl_table_fill(nlh, tr->table);
		break;
	case CTL_TR_NEWCHAIN:
	case CTL_TR_UPDCHAIN:
		ctl_chain_fill(nlh, tr->obj);
		break;
	case CTL_TR_DELCHAIN: {
		/* nf_tables_fill_chain_info: a delete event names the chain */
		const struct ctl_chain *c = tr->obj;

		mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, c->table->name);
		mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, c->name);
		mnl_attr_put_u64(nlh, NFTA_CHAIN_HANDLE, htobe64(c->handle));
		break;
	}
	case CTL_TR_NEWRULE: {
		/* nf_tables_rule_notify: the position only for a rule that is
		 * neither first nor last */
		struct ctl_rule *r = tr->obj, *prev = rule_prev(r);

		ctl_rule_fill(nlh, r);
		if (prev && r->list.next != &r->chain->rules)
			mnl_attr_put_u64(nlh, NFTA_RULE_POSITION, htobe64(prev->handle));
		break;
	}
	case CTL_TR_DELRULE:
		ctl_rule_fill(nlh, tr->obj);
		break;
	case CTL_TR_NEWSET:
		ctl_set_fill(nlh, tr->obj);
		break;
	case CTL_TR_DELSET: {
		/* nf_tables_fill_set: a delete event names the set only */
		const struct ctl_set *set = tr->obj;

		mnl_attr_put_strz(nlh, NFTA_SET_TABLE, set->table->name);
		mnl_attr_put_strz(nlh, NFTA_SET_NAME, set->name);
		mnl_attr_put_u64(nlh, NFTA_SET_HANDLE, htobe64(set->handle));
		break;
	}
	case CTL_TR_NEWSETELEM:
	case CTL_TR_DELSETELEM:
		ctl_elem_fill_one(nlh, tr->obj, tr->elem);
		break;
	case CTL_TR_NEWOBJ:
	case CTL_TR_UPDOBJ:
	case CTL_TR_DELOBJ:
		ctl_obj_fill(nlh, tr->obj);
		break;
	case CTL_TR_NEWFLOWTABLE:
	case CTL_TR_UPDFLOWTABLE:
	case CTL_TR_DELFLOWTABLE:
		ctl_flowtable_fill(nlh, tr->obj);
		break;
	}
}

static uint16_t event_flags(const struct ctl_trans *tr)
{
	uint16_t flags = tr->nlflags & (NLM_F_CREATE | NLM_F_EXCL);

	if (tr->op == CTL_TR_NEWRULE && (tr->nlflags & (NLM_F_APPEND | NLM_F_REPLACE)))
		flags |= NLM_F_APPEND;
	return flags;
}

static void notify(struct ctl_out *mc, const struct ctl_trans *tr, uint32_t genid, bool echo,
		   struct ctl_out *uc)
{
	struct ctl_out *outs[2] = {mc, echo ? uc : NULL};

	for (unsigned int i = 0; i < 2; i++) {
		struct nlmsghdr *nlh;

		if (outs[i] == NULL)
			continue;
		nlh = ctl_out_msg(outs[i], (NFNL_SUBSYS_NFTABLES << 8) | event_of(tr->op),
				  tr->family, event_flags(tr), tr->seq, tr->portid, genid & 0xffff);
		if (nlh == NULL)
			continue;
		fill_event(nlh, tr);
		ctl_out_end(outs[i], nlh);
	}
}

static void gen_notify(struct ctl_out *o, struct ctl_session *s, uint32_t genid, uint32_t seq)
{
	struct nlmsghdr *nlh;

	nlh = ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN, AF_UNSPEC, 0, seq,
			  ctl_session_portid(s), genid & 0xffff);
	if (nlh == NULL)
		return;
	mnl_attr_put_u32(nlh, NFTA_GEN_ID, htonl(genid));
	mnl_attr_put_u32(nlh, NFTA_GEN_PROC_PID, htonl((uint32_t)ctl_session_pid(s)));
	mnl_attr_put_strz(nlh, NFTA_GEN_PROC_NAME, ctl_session_comm(s));
	ctl_out_end(o, nlh);
}

/* Free what the committed batch deleted; forward order, so children go
 * before their table. */
static void release(struct ctl_trans *tr)
{
	switch (tr->op) {
	case CTL_TR_DELTABLE:
		ctl_list_del(&tr->table->list);
		ctl_table_free(tr->table);
		break;
	case CTL_TR_NEWCHAIN:
		/* no dataplane to set the stats: the values given stand */
		((struct ctl_chain *)tr->obj)->stats_pending = false;
		break;
	case CTL_TR_UPDCHAIN:
		if (tr->old_name)
			ctl_chain_renamed(tr->obj, tr->old_name);
		nftnl_chain_free(tr->old_chain);
		((struct ctl_chain *)tr->obj)->stats_pending = false;
		break;
	case CTL_TR_DELCHAIN: {
		struct ctl_chain *c = tr->obj;

		ctl_list_del(&c->list);
		ctl_chain_free(c);
		break;
	}
	case CTL_TR_DELRULE: {
		struct ctl_rule *r = tr->obj;

		ctl_list_del(&r->list);
		ctl_rule_free(r);
		break;
	}
	case CTL_TR_DELSET: {
		struct ctl_set *s = tr->obj;

		ctl_set_unlink(s);
		ctl_set_free(s);
		break;
	}
	case CTL_TR_DELSETELEM:
		ctl_set_elem_unlink(tr->obj, tr->elem);
		ctl_elem_free(tr->elem);
		break;
	case CTL_TR_UPDOBJ:
		nftnl_obj_free(tr->old_obj);
		break;
	case CTL_TR_DELOBJ: {
		struct ctl_obj *o = tr->obj;

		ctl_list_del(&o->list);
		ctl_obj_free(o);
		break;
	}
	case CTL_TR_UPDFLOWTABLE:
		nftnl_flowtable_free(tr->old_flowtable);
		break;
	case CTL_TR_DELFLOWTABLE: {
		struct ctl_flowtable *f = tr->obj;

		ctl_list_del(&f->list);
		ctl_flowtable_free(f);
		break;
	}
	default:
		break;
	}
}

int ctl_validate(struct ctl_state *st)
{
	struct ctl_table *t;
	int err;

	ctl_list_for_each_entry(t, &st->tables, list) {
		if (t->dead)
			continue;
		err = ctl_table_validate(t);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Phase 4: the new generation id and every notification, in message order. */
static void commit_notify(struct nftdp_ctl *ctl, struct ctl_session *s, bool echo_gen,
			  const struct nlmsghdr *first)
{
	struct ctl_state *st = ctl->state;
	struct ctl_trans *tr;
	struct ctl_out mc, uc;

	do {
		st->genid++;
	} while (st->genid == 0);

	ctl_out_init(&mc, ctl, NULL);
	mc.mcast_group = NFNLGRP_NFTABLES;
	ctl_out_init(&uc, ctl, s);
	ctl_list_for_each_entry(tr, &st->trans, list) {
		bool echo = (tr->nlflags & NLM_F_ECHO) != 0;

		if (tr->quiet)
			continue;

		/* events go out together, as nft_commit_notify coalesces
		 * them, in datagrams of one skip each */
		if (mc.skip != (echo ? tr->session : NULL))
			ctl_out_flush(&mc);
		mc.skip = echo ? tr->session : NULL;
		notify(&mc, tr, st->genid, echo, &uc);
	}
	ctl_out_flush(&mc);
	mc.skip = NULL;
	/* nf_tables_gen_notify: the seq of the batch's first message after
	 * BATCH_BEGIN (nlmsg_hdr of the skb nfnetlink pulled the begin from);
	 * nft monitor's read-back of a binding chain depends on it */
	gen_notify(&mc, s, st->genid, first->nlmsg_seq);
	ctl_out_flush(&mc);
	/* the echoes, then NEWGEN in a datagram of its own, as
	 * nf_tables_gen_notify sends it apart from the coalesced events: nft
	 * reads a binding chain back in the middle of the echoes (nft -e) */
	ctl_out_flush(&uc);
	if (echo_gen)
		gen_notify(&uc, s, st->genid, first->nlmsg_seq);
	ctl_out_flush(&uc);
	ctl_out_free(&mc);
	ctl_out_free(&uc);
}

int ctl_commit(struct nftdp_ctl *ctl, struct ctl_session *s, const struct ctl_commit_req *req,
	       const struct nlmsghdr **bad, char *why, size_t whylen)
{
	struct ctl_state *st = ctl->state;
	struct ctl_trans *tr, *tn;
	int err;

	*bad = NULL;
	if (whylen)
		why[0] = '\0';

	/* 0. a binding chain no rule holds (nf_tables_commit's binding
	 * list): the batch fails, answered at its first message after
	 * BATCH_BEGIN (nfnetlink acks the skb it pulled the begin from). A
	 * check batch (nft -c) never gets here in the kernel. */
	if (!req->check) {
		ctl_list_for_each_entry(tr, &st->trans, list) {
			const struct ctl_chain *c = tr->obj;

			if (tr->op == CTL_TR_NEWCHAIN && c->binding && !c->bound) {
				ctl_trans_abort(ctl);
				ctl_build_clear_bad(ctl);
				*bad = req->first;
				return -EINVAL;
			}
		}
	}

	/* 1. validate (nf_tables_validate): the caller replays on -EAGAIN */
	if (st->validate && ctl_validate(st) < 0) {
		ctl_trans_abort(ctl);
		return -EAGAIN;
	}

	/* 2. prepare: the next generation and the staged set and object
	 * changes; nothing is visible to workers yet */
	err = ctl_build_prepare(ctl, bad, why, whylen);
	if (err < 0 || req->check) {
		/* ctl_build_prepare undid its own part on failure */
		if (err == 0)
			ctl_build_abort(ctl);
		ctl_trans_abort(ctl);
		return err;
	}
	if (ctl_list_empty(&st->trans)) {
		/* a batch that changes nothing: no new generation id */
		ctl_build_commit(ctl);
		st->validate = false;
		return 0;
	}

	/* 3. publish: rules, set contents and objects switch together.
	 * Cannot fail after this point. */
	ctl_build_commit(ctl);

	/* 4. genid++ and notifications */
	commit_notify(ctl, s, req->echo_gen, req->first);

	/* 5. release what the batch deleted; the old generation goes after
	 * the grace period (published above, freed by nftdp_vm_gen_reclaim) */
	ctl_list_for_each_entry_safe(tr, tn, &st->trans, list) {
		release(tr);
		ctl_list_del(&tr->list);
		free(tr);
	}
	st->validate = false;
	return 0;
}

static void undo(struct ctl_trans *tr)
{
	struct ctl_table *t = tr->table;

	switch (tr->op) {
	case CTL_TR_NEWTABLE:
		ctl_list_del(&t->list);
		ctl_table_free(t);
		break;
	case CTL_TR_UPDTABLE:
		t->flags = tr->old_flags;
		break;
	case CTL_TR_DELTABLE:
		t->dead = false;
		break;
	case CTL_TR_NEWCHAIN: {
		struct ctl_chain *c = tr->obj;

		ctl_list_del(&c->list);
		ctl_chain_free(c);
		t->use--;
		break;
	}
	case CTL_TR_UPDCHAIN: {
		struct ctl_chain *c = tr->obj;

		nftnl_chain_free(c->nl);
		c->nl = tr->old_chain;
		c->name = nftnl_chain_get_str(c->nl, NFTNL_CHAIN_NAME);
		c->stats_pending = false;
		break;
	}
	case CTL_TR_DELCHAIN:
		((struct ctl_chain *)tr->obj)->dead = false;
		t->use++;
		break;
	case CTL_TR_NEWRULE: {
		struct ctl_rule *r = tr->obj;

		ctl_list_del(&r->list);
		if (!r->dead) {
			ctl_refs_put(r->refs, r->nrefs);
			r->chain->use--;
			r->chain->nrules--;
		}
		/* the binding chains it bound are free again */
		for (unsigned int i = 0; i < r->nrefs; i++) {
			struct ctl_chain *c = r->refs[i].obj;

			if (r->refs[i].kind == CTL_REF_CHAIN && c->binding)
				c->bound = false;
		}
		ctl_rule_free(r);
		break;
	}
	case CTL_TR_DELRULE: {
		struct ctl_rule *r = tr->obj;

		r->dead = false;
		ctl_refs_get(r->refs, r->nrefs);
		r->chain->use++;
		r->chain->nrules++;
		break;
	}
	case CTL_TR_NEWSET: {
		struct ctl_set *s = tr->obj;

		ctl_set_unlink(s);
		ctl_set_free(s);
		t->use--;
		break;
	}
	case CTL_TR_DELSET:
		((struct ctl_set *)tr->obj)->dead = false;
		t->use++;
		break;
	case CTL_TR_NEWSETELEM: {
		struct ctl_set *s = tr->obj;

		if (!tr->elem->dead) {
			ctl_elem_refs(tr->elem, -1);
			s->nelems--;
		}
		ctl_set_elem_unlink(s, tr->elem);
		ctl_elem_free(tr->elem);
		break;
	}
	case CTL_TR_DELSETELEM:
		tr->elem->dead = false;
		ctl_elem_refs(tr->elem, +1);
		((struct ctl_set *)tr->obj)->nelems++;
		break;
	case CTL_TR_NEWOBJ: {
		struct ctl_obj *o = tr->obj;

		ctl_list_del(&o->list);
		ctl_obj_free(o);
		t->use--;
		break;
	}
	case CTL_TR_UPDOBJ: {
		struct ctl_obj *o = tr->obj;

		nftnl_obj_free(o->nl);
		o->nl = tr->old_obj;
		o->name = nftnl_obj_get_str(o->nl, NFTNL_OBJ_NAME);
		break;
	}
	case CTL_TR_DELOBJ:
		((struct ctl_obj *)tr->obj)->dead = false;
		t->use++;
		break;
	case CTL_TR_NEWFLOWTABLE: {
		struct ctl_flowtable *f = tr->obj;

		ctl_list_del(&f->list);
		ctl_flowtable_free(f);
		t->use--;
		break;
	}
	case CTL_TR_UPDFLOWTABLE: {
		struct ctl_flowtable *f = tr->obj;

		nftnl_flowtable_free(f->nl);
		f->nl = tr->old_flowtable;
		f->name = nftnl_flowtable_get_str(f->nl, NFTNL_FLOWTABLE_NAME);
		break;
	}
	case CTL_TR_DELFLOWTABLE:
		((struct ctl_flowtable *)tr->obj)->dead = false;
		t->use++;
		break;
	}
}

void ctl_trans_abort(struct nftdp_ctl *ctl)
{
	struct ctl_state *st = ctl->state;
	struct ctl_trans *tr;

	while (!ctl_list_empty(&st->trans)) {
		tr = ctl_list_entry(st->trans.prev, struct ctl_trans, list);
		ctl_list_del(&tr->list);
		undo(tr);
		free(tr);
	}
	st->validate = false;
}

/* The session that owned tables is gone: they go too (nft_rcv_nl_event). */
void ctl_nfnl_session_closed(struct nftdp_ctl *ctl, struct ctl_session *s)
{
	struct ctl_state *st = ctl->state;
	struct ctl_table *t, *tn;
	uint32_t portid = ctl_session_portid(s);

	ctl_nflog_session_closed(ctl, s); /* nfulnl_rcv_nl_event */
	if (st == NULL)
		return;
	ctl_list_for_each_entry_safe(t, tn, &st->tables, list) {
		if ((t->flags & NFT_TABLE_F_OWNER) && t->nlpid == portid) {
			ctl_list_del(&t->list);
			ctl_table_free(t);
		}
	}
}
