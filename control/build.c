// SPDX-License-Identifier: BSD-3-Clause
/*
 * The dataplane side of a commit: what workers run is compiled from the
 * object store into an immutable generation (vm/generation.c) at every commit.
 *
 * Theory of operation. Sets and named objects outlive generations: each
 * ctl_set has a sets/ handle holding its elements (a batch's element
 * changes are applied to it as pending changes, made visible by
 * nftdp_set_commit at the commit of the batch), each counter/quota/limit
 * object one compiled nftdp_vm_obj that every generation shares (an object
 * map's element data points at it). Chains and rules are compiled again at
 * every commit into the next generation: chain ids (the index verdict maps
 * name a chain by) are stable for a chain's lifetime. A batch the VM cannot
 * compile fails at the message that added the rule, with the compiler's
 * errno (EOPNOTSUPP for what nftdp does not run), and changes nothing.
 *
 * Deleted sets and replaced or deleted objects are freed with the last
 * generation that can still reach them (nftdp_vm_gen_on_free). Memory
 * inside live sets that a commit, abort or gc unlinks (elements, tables,
 * index nodes) is freed after a grace period that begins after the
 * unlink, on the domain's QSBR variable: ctl_build_create hands sets' grace
 * hooks to the domain, which batches them behind one token per commit or
 * tick and ends them in nftdp_vm_gen_reclaim (every tick).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/expr.h>

#include "ctl_state.h"
#include "nftdp_common.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

#include <linux/netfilter_bridge.h> /* after netinet/in.h */

struct ctl_build {
	struct nftdp_vm_state *vm;
	struct nftdp_vm_gen_domain *dom;
	struct nftdp_vm_gen *cur;  /* last published */
	struct nftdp_vm_gen *next; /* built by prepare, published by commit */
	/* the resolver's context: the table and rule being compiled */
	struct ctl_table *table;
	struct ctl_rule *rule;
	/* res_set's answer for a verdict map: the chains it jumps to */
	struct ctl_chain **vtargets;
	const struct nftdp_vm_chain **vchains;
	size_t cap_vchains;
	uint64_t last_gc_ms;
	int bad_expr; /* ctl_build_bad_expr() */
};

/* Dumps are built without the control plane at hand (ctl_rule_fill); there
 * is one control plane per process. */
static struct nftdp_vm_state *stats_vm;

/* ---------- sets ---------- */

static uint64_t nest_u64(const struct nlattr *data, uint16_t type)
{
	const struct nlattr *y;

	if (!data)
		return 0;
	mnl_attr_for_each_nested(y, data)
	{
		if (mnl_attr_get_type(y) == type && mnl_attr_get_payload_len(y) == 8)
			return be64toh(mnl_attr_get_u64(y));
	}
	return 0;
}

static uint32_t nest_u32(const struct nlattr *data, uint16_t type, uint32_t dflt)
{
	const struct nlattr *y;

	if (!data)
		return dflt;
	mnl_attr_for_each_nested(y, data)
	{
		if (mnl_attr_get_type(y) == type && mnl_attr_get_payload_len(y) == 4)
			return ntohl(mnl_attr_get_u32(y));
	}
	return dflt;
}

/*
 * Element expressions (payload of NFTA_SET_ELEM_EXPR or _EXPRESSIONS, as
 * type says) as the VM's per-element expressions (meters): counter, quota
 * limit and ct count. The number of them, or -EOPNOTSUPP (anything else),
 * -E2BIG (more than NFT_SET_EXPR_MAX).
 */
static int elem_exprs_parse(const void *expr, uint16_t len, uint16_t type,
			    struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX])
{
	const struct nlattr *a, *x;
	char buf[1024];
	unsigned int n = 0;

	if (!expr || len == 0)
		return 0;
	if ((size_t)len + NLA_HDRLEN > sizeof(buf))
		return -EOPNOTSUPP;
	a = (const struct nlattr *)buf;
	((struct nlattr *)buf)->nla_type = type;
	((struct nlattr *)buf)->nla_len = (uint16_t)(len + NLA_HDRLEN);
	memcpy(buf + NLA_HDRLEN, expr, len);
	mnl_attr_for_each_nested(x, a)
	{
		const struct nlattr *one = type == NFTA_SET_ELEM_EXPRESSIONS ? x : a;
		const struct nlattr *y, *name = NULL, *data = NULL;
		struct nftdp_vm_elem_expr *o;

		if (n == NFTDP_VM_ELEM_EXPR_MAX)
			return -E2BIG;
		mnl_attr_for_each_nested(y, one)
		{
			if (mnl_attr_get_type(y) == NFTA_EXPR_NAME)
				name = y;
			else if (mnl_attr_get_type(y) == NFTA_EXPR_DATA)
				data = y;
		}
		if (!name)
			return -EINVAL;
		o = &v[n];
		memset(o, 0, sizeof(*o));
		if (strcmp(mnl_attr_get_str(name), "counter") == 0) {
			o->type = NFTDP_VM_ELEM_EXPR_COUNTER;
			o->packets = nest_u64(data, NFTA_COUNTER_PACKETS);
			o->bytes = nest_u64(data, NFTA_COUNTER_BYTES);
		} else if (strcmp(mnl_attr_get_str(name), "quota") == 0) {
			o->type = NFTDP_VM_ELEM_EXPR_QUOTA;
			o->quota = nest_u64(data, NFTA_QUOTA_BYTES);
			o->consumed = nest_u64(data, NFTA_QUOTA_CONSUMED);
			o->flags = nest_u32(data, NFTA_QUOTA_FLAGS, 0);
		} else if (strcmp(mnl_attr_get_str(name), "limit") == 0) {
			o->type = NFTDP_VM_ELEM_EXPR_LIMIT;
			o->rate = nest_u64(data, NFTA_LIMIT_RATE);
			o->unit = nest_u64(data, NFTA_LIMIT_UNIT);
			o->burst = nest_u32(data, NFTA_LIMIT_BURST, 0);
			o->limit_type = nest_u32(data, NFTA_LIMIT_TYPE, NFT_LIMIT_PKTS);
			o->flags = nest_u32(data, NFTA_LIMIT_FLAGS, 0);
		} else if (strcmp(mnl_attr_get_str(name), "connlimit") == 0) {
			o->type = NFTDP_VM_ELEM_EXPR_CONNLIMIT;
			o->count = nest_u32(data, NFTA_CONNLIMIT_COUNT, 0);
			o->flags = nest_u32(data, NFTA_CONNLIMIT_FLAGS, 0);
		} else if (strcmp(mnl_attr_get_str(name), "last") == 0) {
			o->type = NFTDP_VM_ELEM_EXPR_LAST;
			o->last_set = nest_u32(data, NFTA_LAST_SET, 0);
			o->last_msecs = nest_u64(data, NFTA_LAST_MSECS);
		} else {
			return -EOPNOTSUPP; /* not NFT_EXPR_STATEFUL */
		}
		n++;
		if (type != NFTA_SET_ELEM_EXPRESSIONS)
			break;
	}
	return (int)n;
}

/*
 * Element expressions (the set's `counter` template, or an element's own)
 * that are just one counter: the VM counts a matching element in a pinned
 * slot whose number sits after the element's data. 1 (start values into
 * pk/by), none: 0, anything else -EOPNOTSUPP.
 */
static int expr_is_counter(const void *expr, uint16_t len, uint16_t type, uint64_t *pk,
			   uint64_t *by)
{
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	int n = elem_exprs_parse(expr, len, type, v);

	*pk = *by = 0;
	if (n == 0)
		return 0;
	if (n != 1 || v[0].type != NFTDP_VM_ELEM_EXPR_COUNTER)
		return -EOPNOTSUPP;
	*pk = v[0].packets;
	*by = v[0].bytes;
	return 1;
}

/* Whether one of the set's elements carries expressions that are more than
 * the one counter a VM slot serves (nft_add_set_elem takes any stateful
 * expressions per element, whatever the set declares). */
static bool elem_needs_expr_area(const struct ctl_elem *e, bool counter_slot)
{
	uint64_t pk, by;
	int rc;

	if (e->dead || !e->expr)
		return false;
	rc = expr_is_counter(e->expr, e->exprlen, e->expr_type, &pk, &by);
	/* a counter of its own where the set has no counter slot */
	return rc < 0 || (rc == 1 && !counter_slot);
}

static bool elems_need_expr_area(const struct ctl_set *s, int counter_rc)
{
	const struct ctl_elem *e;

	ctl_list_for_each_entry(e, &s->elems, list)
		if (elem_needs_expr_area(e, counter_rc == 1))
			return true;
	return false;
}

/* Element expressions in the element's data: dynamic sets (dynset may
 * give their elements some), sets whose expressions are more than the one
 * counter a VM slot serves, and sets created with elements that carry such
 * expressions of their own. */
static bool set_has_expr_area(const struct ctl_set *s, int counter_rc)
{
	return (s->flags & NFT_SET_EVAL) || counter_rc < 0 || elems_need_expr_area(s, counter_rc);
}

static void elem_slot_key(const struct ctl_set *s, const struct ctl_elem *e, char *key, size_t size)
{
	int n = snprintf(key, size, "e\n%u\n%s\n%llu\n", s->table->family, s->table->name,
			 (unsigned long long)s->handle);

	for (unsigned int i = 0; i < e->klen && n + 3 < (int)size; i++)
		n += snprintf(key + n, size - (size_t)n, "%02x", e->key[i]);
}

static void elem_unpin(struct ctl_build *bld, const struct ctl_set *s, struct ctl_elem *e)
{
	char key[600];

	if (!e->dp_counted)
		return;
	elem_slot_key(s, e, key, sizeof(key));
	nftdp_vm_state_unpin(bld->vm, key);
	e->dp_counted = false;
}

static uint32_t set_data_size(const struct ctl_set *s)
{
	if (!(s->flags & (NFT_SET_MAP | NFT_SET_OBJECT)))
		return 0;
	if (s->flags & NFT_SET_OBJECT)
		return sizeof(const struct nftdp_vm_obj *);
	if (s->dtype == NFT_DATA_VERDICT)
		return sizeof(struct nftdp_set_verdict);
	return s->dlen;
}

static int set_create(struct ctl_set *s, uint32_t batch_elems)
{
	struct nftdp_set_desc d = {0};
	uint32_t flen = 0;
	const uint8_t *fields = NULL;

	uint64_t pk, by;
	int rc = expr_is_counter(s->elem_expr, s->elem_exprlen, s->elem_expr_type, &pk, &by);

	d.flags = s->flags;
	d.key_size = s->klen;
	d.data_size = set_data_size(s);
	s->dp_counter_at = 0;
	s->dp_expr_at = 0;
	free(s->dp_expr_tmpl);
	s->dp_expr_tmpl = NULL;
	if (set_has_expr_area(s, rc)) {
		struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
		uint32_t off = (d.data_size + 7) & ~7u;
		int n = elem_exprs_parse(s->elem_expr, s->elem_exprlen, s->elem_expr_type, v);

		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			if (v[i].type == NFTDP_VM_ELEM_EXPR_CONNLIMIT &&
			    (s->flags & NFT_SET_TIMEOUT))
				return -EOPNOTSUPP; /* nft_set_elem_expr_alloc: NFT_EXPR_GC */
		if (off + NFTDP_VM_ELEM_EXPR_SIZE > NFTDP_SET_DATA_MAX)
			return -EOPNOTSUPP;
		if (n > 0) {
			s->dp_expr_tmpl = malloc(NFTDP_VM_ELEM_EXPR_SIZE);
			if (!s->dp_expr_tmpl)
				return -ENOMEM;
			rc = nftdp_vm_elem_expr_init(s->dp_expr_tmpl, v, (unsigned int)n);
			if (rc < 0)
				return rc;
		}
		s->dp_expr_at = off + 1;
		d.data_size = off + NFTDP_VM_ELEM_EXPR_SIZE;
	} else if (rc == 1) {
		uint32_t off = (d.data_size + 3) & ~3u;

		if (off + 4 > NFTDP_SET_DATA_MAX)
			return -EOPNOTSUPP;
		s->dp_counter_at = off + 1;
		d.data_size = off + 4;
	}
	d.max_elems = s->size;
	/* a hash set filled by its first batch is sized for it at once: its
	 * table can grow only once per grace period afterwards */
	d.expected_elems = s->size > batch_elems ? s->size : batch_elems;
	d.timeout_ms = s->timeout;
	if (nftnl_set_is_set(s->nl, NFTNL_SET_POLICY))
		d.policy = nftnl_set_get_u32(s->nl, NFTNL_SET_POLICY);
	if (nftnl_set_is_set(s->nl, NFTNL_SET_DESC_CONCAT))
		fields = nftnl_set_get_data(s->nl, NFTNL_SET_DESC_CONCAT, &flen);
	if (fields && flen > 1) {
		if (flen > NFTDP_SET_FIELDS_MAX)
			return -EINVAL;
		d.n_fields = (uint8_t)flen;
		memcpy(d.field_size, fields, flen);
	}
	return nftdp_set_create(&d, &s->dp);
}

/* An element's data as the dataplane set holds it. */
static int elem_data_value(const struct ctl_set *s, const struct ctl_elem *e, uint8_t *out);

/* The element's data as the dataplane set holds it: its map data, then,
 * with element counters, 1 + its counter slot. */
static int elem_data(struct ctl_build *bld, struct ctl_set *s, struct ctl_elem *e, uint8_t *out)
{
	uint64_t pk, by;
	int rc;

	memset(out, 0, NFTDP_SET_DATA_MAX);
	rc = elem_data_value(s, e, out);
	if (rc < 0)
		return rc;
	if (s->dp_expr_at) {
		struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];

		rc = elem_exprs_parse(e->expr, e->exprlen, e->expr_type, v);
		if (rc < 0)
			return rc;
		for (int i = 0; i < rc; i++) {
			if (v[i].type != NFTDP_VM_ELEM_EXPR_CONNLIMIT)
				continue;
			/* nft_set_elem_expr_alloc: NFT_EXPR_GC, no timeouts */
			if (s->flags & NFT_SET_TIMEOUT)
				return -EOPNOTSUPP;
			s->dp_connlimit = true;
		}
		rc = nftdp_vm_elem_expr_init(out + s->dp_expr_at - 1, v, (unsigned int)rc);
		if (rc < 0)
			return rc;
		/* a `ct count` list too long for the element: the set's blocks */
		return nftdp_vm_elem_expr_bind(out + s->dp_expr_at - 1, s->dp, s->dp_expr_at - 1);
	}
	rc = expr_is_counter(e->expr, e->exprlen, e->expr_type, &pk, &by);
	/* a set with one counter per element in a VM slot (the set's
	 * `counter`) takes no other expressions (nft_add_set_elem: not the
	 * set's); a one-field interval set made without an expression area
	 * is not made again (set_regrow) */
	if (rc < 0 || (rc == 1 && !s->dp_counter_at))
		return -EOPNOTSUPP;
	if (s->dp_counter_at) {
		char key[600];
		uint32_t slot;

		elem_slot_key(s, e, key, sizeof(key));
		rc = nftdp_vm_state_pin_counter(bld->vm, key, pk, by, &slot);
		if (rc < 0)
			return rc;
		e->dp_counted = true;
		slot++;
		memcpy(out + s->dp_counter_at - 1, &slot, sizeof(slot));
	}
	return 0;
}

static int elem_data_value(const struct ctl_set *s, const struct ctl_elem *e, uint8_t *out)
{
	const struct nlattr *a;

	if (s->flags & NFT_SET_OBJECT) {
		const struct ctl_obj *o = e->obj_ref;
		const struct nftdp_vm_obj *vo = o ? o->dp : NULL;

		if (!vo)
			return -EOPNOTSUPP; /* object type the VM does not run */
		memcpy(out, &vo, sizeof(vo));
		return 0;
	}
	if (!(s->flags & NFT_SET_MAP))
		return 0;
	if (!e->data)
		return -EINVAL;
	for (a = (const struct nlattr *)e->data;
	     mnl_attr_ok(a, (int)((const char *)e->data + e->datalen - (const char *)a));
	     a = mnl_attr_next(a)) {
		if (mnl_attr_get_type(a) == NFTA_DATA_VALUE) {
			uint16_t n = mnl_attr_get_payload_len(a);

			memcpy(out, mnl_attr_get_payload(a), n < s->dlen ? n : s->dlen);
			return 0;
		}
		if (mnl_attr_get_type(a) == NFTA_DATA_VERDICT) {
			struct nftdp_set_verdict v = {0};
			const struct nlattr *x;

			mnl_attr_for_each_nested(x, a)
			{
				if (mnl_attr_get_type(x) == NFTA_VERDICT_CODE)
					v.code = (int32_t)ntohl(mnl_attr_get_u32(x));
			}
			if ((v.code == NFT_JUMP || v.code == NFT_GOTO) && e->chain_ref)
				v.chain = e->chain_ref->dp_id;
			memcpy(out, &v, sizeof(v));
			return 0;
		}
	}
	return -EINVAL;
}

static uint64_t elem_timeout(const struct ctl_elem *e, uint64_t now_ms)
{
	if (e->expires_at)
		return e->expires_at > now_ms ? e->expires_at - now_ms : 1;
	return e->timeout;
}

static int elem_insert(struct ctl_build *bld, struct ctl_set *s, struct ctl_elem *e,
		       const uint8_t *end, uint64_t now_ms)
{
	uint8_t data[NFTDP_SET_DATA_MAX];
	int rc;

	rc = elem_data(bld, s, e, data);
	if (rc < 0)
		return rc;
	rc = nftdp_set_insert(s->dp, e->key, end,
			      set_data_size(s) || s->dp_counter_at || s->dp_expr_at ? data : NULL,
			      elem_timeout(e, now_ms), e->flags, false);
	/* an identical element (same key, same data) added twice: nft's job */
	return rc == -EEXIST ? 0 : rc;
}

/* The smallest key above key among the set's elements other than the batch's
 * new ones (dp_ranged_new marks those being placed): NULL if none. O(n), only
 * for the last new interval of a batch that nft sent without an end. */
static const uint8_t *next_existing(const uint8_t *key, void *arg)
{
	const struct ctl_set *s = arg;
	const struct ctl_elem *x, *best = NULL;

	ctl_list_for_each_entry(x, &s->elems, list) {
		if (x->dead || x->dp_ranged_new || memcmp(x->key, key, s->klen) <= 0)
			continue;
		if (!best || memcmp(x->key, best->key, s->klen) < 0)
			best = x;
	}
	return best ? best->key : NULL;
}

/*
 * The elements this batch added to a one-field interval set, points as nft
 * sends them, become ranges in sets/ (nftdp_set_interval_ranges): each
 * start's range, in key_end, ends one below the next element in key order.
 */
static int interval_inserts(struct ctl_build *bld, struct ctl_set *s, struct ctl_elem **v, size_t n,
			    uint64_t now_ms)
{
	struct nftdp_set_interval_elem *iv = malloc((n ? n : 1) * sizeof(*iv));
	int rc = 0;

	if (!iv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		iv[i] = (struct nftdp_set_interval_elem){
		    .key = v[i]->key,
		    .last = v[i]->key_end,
		    .end = v[i]->flags & NFT_SET_ELEM_INTERVAL_END,
		    .opaque = v[i],
		};
		v[i]->dp_ranged_new = true;
	}
	nftdp_set_interval_ranges(iv, n, s->klen, next_existing, s);
	for (size_t i = 0; i < n; i++)
		v[i] = iv[i].opaque; /* in key order: a failure blames the first */
	for (size_t i = 0; i < n; i++) {
		struct ctl_elem *e = v[i];

		if (e->flags & NFT_SET_ELEM_INTERVAL_END)
			continue;
		e->dp_ranged = true;
		rc = elem_insert(bld, s, e, e->key_end, now_ms);
		if (rc < 0)
			break;
	}
	for (size_t i = 0; i < n; i++)
		v[i]->dp_ranged_new = false;
	free(iv);
	return rc;
}

static bool one_field_interval(const struct ctl_set *s)
{
	return (s->flags & NFT_SET_INTERVAL) && !(s->flags & NFT_SET_CONCAT);
}

/*
 * A batch after the one that created a set that is neither dynamic nor has
 * expressions (its elements have none either: they would have given it an
 * expression area) brings it an element with expressions of its own
 * (nft_add_set_elem takes any stateful expression per element): the set's
 * dataplane copy is made again, with the area (set_create sees the new
 * element), every element copied into it, and the rules that use the set
 * are compiled again (vmap_dirty sees dp_prev). No element state to carry
 * over: the old copy's elements have none. The old copy goes with the
 * generation that still reaches it (ctl_build_commit), or comes back at
 * an abort. One-field interval sets stay refused (their ranges are made
 * from the batch's points).
 */
static int set_regrow(struct ctl_build *bld, struct ctl_state *st, struct ctl_set *s, uint64_t now)
{
	struct nftdp_set *old = s->dp;
	struct ctl_trans *tr;
	struct ctl_elem *e;
	int rc = 0;

	rc = set_create(s, s->nelems);
	if (rc < 0) {
		s->dp = old;
		s->dp_counter_at = s->dp_expr_at = 0;
		return rc;
	}
	s->dp_prev = old;
	s->dp_touched = true;
	/* this batch's own elements are placed by apply_sets, in order with
	 * its deletions (dp_ranged_new marks them here) */
	ctl_list_for_each_entry(tr, &st->trans, list)
		if (tr->op == CTL_TR_NEWSETELEM && tr->obj == s && tr->elem)
			tr->elem->dp_ranged_new = true;
	ctl_list_for_each_entry(e, &s->elems, list) {
		if (e->dead || e->dp_ranged_new || (e->flags & NFT_SET_ELEM_INTERVAL_END))
			continue;
		rc = elem_insert(bld, s, e, e->kelen ? e->key_end : NULL, now);
		if (rc < 0)
			break; /* ctl_build_abort puts the old copy back */
	}
	ctl_list_for_each_entry(tr, &st->trans, list)
		if (tr->op == CTL_TR_NEWSETELEM && tr->obj == s && tr->elem)
			tr->elem->dp_ranged_new = false;
	return rc;
}

/* The old copy back in place of the one set_regrow made (never published). */
static void set_regrow_undo(struct ctl_set *s)
{
	if (!s->dp_prev)
		return;
	nftdp_set_destroy(s->dp);
	s->dp = s->dp_prev;
	s->dp_prev = NULL;
	s->dp_counter_at = s->dp_expr_at = 0;
	free(s->dp_expr_tmpl);
	s->dp_expr_tmpl = NULL;
	s->dp_connlimit = false;
	s->dp_touched = false;
}

/* ---------- the resolver compile uses ---------- */

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;

	return x < y ? -1 : x > y;
}

/* The distinct chains the live elements of verdict map s jump or goto, as
 * chains of the generation being built (build() adds every chain before
 * the rules), into bld->vchains; how many, or -ENOMEM. */
static int vmap_chains(struct ctl_build *bld, const struct ctl_set *s)
{
	const struct ctl_elem *e;
	size_t n = 0, u = 0;

	ctl_list_for_each_entry(e, &s->elems, list) {
		if (e->dead || !e->chain_ref)
			continue;
		if (n == bld->cap_vchains) {
			size_t cap = n ? n * 2 : 64;
			struct ctl_chain **t = realloc(bld->vtargets, cap * sizeof(*t));
			const struct nftdp_vm_chain **v;

			if (!t)
				return -ENOMEM;
			bld->vtargets = t;
			v = realloc(bld->vchains, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			bld->vchains = v;
			bld->cap_vchains = cap;
		}
		bld->vtargets[n++] = e->chain_ref;
	}
	if (n > 1)
		qsort(bld->vtargets, n, sizeof(*bld->vtargets), cmp_ptr);
	for (size_t i = 0; i < n; i++) {
		if (i && bld->vtargets[i] == bld->vtargets[i - 1])
			continue;
		bld->vchains[u++] = bld->vtargets[i]->dp_build;
	}
	return u > INT32_MAX ? -ENOMEM : (int)u;
}

static int res_set(void *opaque, const char *table, const char *name, uint32_t set_id,
		   struct nftdp_vm_set_info *out)
{
	struct ctl_build *bld = opaque;
	struct ctl_set *s = NULL;

	(void)table; /* bld->table: names are per table and family */
	if (name) {
		s = ctl_set_lookup(bld->table, name);
	} else if (bld->rule) {
		for (unsigned int i = 0; i < bld->rule->nrefs; i++) {
			struct ctl_set *c = bld->rule->refs[i].obj;

			if (bld->rule->refs[i].kind == CTL_REF_SET && c->set_id == set_id) {
				s = c;
				break;
			}
		}
	}
	if (!s || !s->dp)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->set = s->dp;
	out->ops = NULL; /* the VM calls sets/ directly */
	out->flags = s->flags;
	out->klen = s->klen;
	out->dtype = s->dtype == NFT_DATA_VERDICT ? NFT_DATA_VERDICT : NFT_DATA_VALUE;
	out->dlen = s->dtype == NFT_DATA_VERDICT ? 16 : s->dlen;
	out->objtype = s->objtype;
	out->timeout_ms = s->timeout;
	out->elem_counter_at = s->dp_counter_at;
	out->elem_expr_at = s->dp_expr_at;
	out->elem_expr_tmpl = s->dp_expr_tmpl;
	out->elem_uses_ct = s->dp_connlimit;
	if (s->dtype == NFT_DATA_VERDICT) {
		int n = vmap_chains(bld, s);

		if (n < 0)
			return n;
		out->vchains = bld->vchains;
		out->n_vchains = (uint32_t)n;
	}
	return 0;
}

static const struct nftdp_vm_obj *res_obj(void *opaque, const char *table, const char *name,
					  uint32_t type)
{
	struct ctl_build *bld = opaque;
	struct ctl_obj *o;

	(void)table;
	o = ctl_obj_lookup(bld->table, name, type);
	return o ? o->dp : NULL;
}

/* ---------- building a generation ---------- */

static void trans_for(struct ctl_state *st, void *obj, enum ctl_trans_op op,
		      const struct nlmsghdr **req)
{
	struct ctl_trans *tr;

	ctl_list_for_each_entry(tr, &st->trans, list) {
		if (tr->obj == obj && tr->op == op) {
			*req = tr->req;
			return;
		}
	}
}

static void trans_for_elem(struct ctl_state *st, struct ctl_elem *e, const struct nlmsghdr **req)
{
	struct ctl_trans *tr;

	ctl_list_for_each_entry(tr, &st->trans, list) {
		if (tr->elem == e) {
			*req = tr->req;
			return;
		}
	}
}

/* The devices of a netdev base chain as ifindexes; unknown names are left
 * out (the chain does not run for them). */
static uint32_t chain_devices(struct nftdp_ctl *ctl, const struct ctl_chain *c, uint32_t *out,
			      uint32_t max)
{
	const char *one[2] = {NULL, NULL};
	const char *const *names = one;
	uint32_t n = 0;

	if (nftnl_chain_is_set(c->nl, NFTNL_CHAIN_DEVICES))
		names = nftnl_chain_get_array(c->nl, NFTNL_CHAIN_DEVICES);
	else if (nftnl_chain_is_set(c->nl, NFTNL_CHAIN_DEV))
		one[0] = nftnl_chain_get_str(c->nl, NFTNL_CHAIN_DEV);
	for (; names && *names && n < max; names++)
		for (unsigned int i = 0; i < ctl->cfg.n_ifaces; i++)
			if (strcmp(ctl->cfg.ifaces[i].name, *names) == 0)
				out[n++] = ctl->cfg.ifaces[i].ifindex;
	return n;
}

/* Whether a rule looking set s up must be compiled again: set_regrow gave
 * it a new dataplane copy, or, for a verdict map, its compiled lookup lists
 * the chains the map jumps to (vchains), so the batch changed that list,
 * or one of those chains is compiled again. */
static bool vmap_dirty(const struct ctl_set *s)
{
	const struct ctl_elem *e;

	if (s->dp_prev)
		return true; /* a new dataplane copy (set_regrow) */
	if (s->dtype != NFT_DATA_VERDICT)
		return false;
	if (s->dp_jumps_changed)
		return true;
	ctl_list_for_each_entry(e, &s->elems, list)
		if (!e->dead && e->chain_ref && e->chain_ref->dp_dirty)
			return true;
	return false;
}

/*
 * Which chains must be compiled again: those the batch changed (rules added
 * or deleted, the chain itself, its table's flags or objects), those never
 * compiled, and, because compiled jumps point at chains, every chain that
 * jumps or goes to one of those, directly or through a verdict map, and
 * every chain that looks up a verdict map whose jump elements the batch
 * added or deleted. The others are reused as they are.
 */
static void mark_dirty(struct ctl_state *st)
{
	struct ctl_trans *tr;
	struct ctl_table *t;
	struct ctl_chain *c;
	struct ctl_set *s;
	bool changed;

	ctl_list_for_each_entry(t, &st->tables, list) {
		ctl_list_for_each_entry(c, &t->chains, list)
			c->dp_dirty = c->dp_cur == NULL;
		ctl_list_for_each_entry(s, &t->sets, list)
			s->dp_jumps_changed = false;
	}
	ctl_list_for_each_entry(tr, &st->trans, list) {
		switch (tr->op) {
		case CTL_TR_NEWSETELEM:
		case CTL_TR_DELSETELEM:
			if (tr->elem && tr->elem->chain_ref)
				((struct ctl_set *)tr->obj)->dp_jumps_changed = true;
			break;
		case CTL_TR_NEWRULE:
		case CTL_TR_DELRULE:
			((struct ctl_rule *)tr->obj)->chain->dp_dirty = true;
			if (tr->replaced)
				tr->replaced->chain->dp_dirty = true;
			break;
		case CTL_TR_NEWCHAIN:
		case CTL_TR_UPDCHAIN:
			((struct ctl_chain *)tr->obj)->dp_dirty = true;
			break;
		case CTL_TR_UPDTABLE:
		case CTL_TR_NEWOBJ:
		case CTL_TR_UPDOBJ:
		case CTL_TR_DELOBJ:
			ctl_list_for_each_entry(c, &tr->table->chains, list)
				c->dp_dirty = true;
			break;
		default:
			break;
		}
	}
	do {
		changed = false;
		ctl_list_for_each_entry(t, &st->tables, list) {
			if (t->dead)
				continue;
			ctl_list_for_each_entry(c, &t->chains, list) {
				struct ctl_rule *r;

				if (c->dead || c->dp_dirty)
					continue;
				ctl_list_for_each_entry(r, &c->rules, list) {
					for (unsigned int i = 0; i < r->nrefs && !c->dp_dirty;
					     i++) {
						const struct ctl_chain *to = r->refs[i].obj;

						if ((r->refs[i].kind == CTL_REF_CHAIN &&
						     to->dp_dirty) ||
						    (r->refs[i].kind == CTL_REF_SET &&
						     vmap_dirty(r->refs[i].obj)))
							c->dp_dirty = changed = true;
					}
					if (c->dp_dirty)
						break;
				}
			}
		}
	} while (changed);
}

static int cmp_hook_seq(const void *a, const void *b)
{
	const struct ctl_chain *x = *(struct ctl_chain *const *)a,
			       *y = *(struct ctl_chain *const *)b;

	return x->hook_seq < y->hook_seq ? -1 : x->hook_seq > y->hook_seq;
}

/* Chain c of table t into the generation being built: compiled anew when
 * dirty (rules follow), else the published one shared. */
static int chain_add(struct nftdp_ctl *ctl, struct nftdp_vm_gen_builder *b, struct ctl_table *t,
		     struct ctl_chain *c, const struct nlmsghdr **req, char *msg, size_t msglen)
{
	uint32_t devs[NFTDP_CTL_MAX_IFACES];
	struct nftdp_vm_chain_desc d = {
	    .family = t->family,
	    .table = t->name,
	    .name = c->name,
	    .base = c->base && !(t->flags & NFT_TABLE_F_DORMANT),
	    .hook = (uint8_t)c->hooknum,
	    .policy = NF_ACCEPT,
	};
	int rc;

	if (c->dp_id == 0 && (c->dp_id = ctl_chain_id_get()) == 0)
		return -ENOMEM;
	d.chain_id = c->dp_id;
	if (c->base && nftnl_chain_is_set(c->nl, NFTNL_CHAIN_POLICY))
		d.policy = nftnl_chain_get_u32(c->nl, NFTNL_CHAIN_POLICY);
	if (d.base && nftnl_chain_is_set(c->nl, NFTNL_CHAIN_TYPE))
		d.nat = strcmp(nftnl_chain_get_str(c->nl, NFTNL_CHAIN_TYPE), "nat") == 0;
	if (d.base && (t->family == NFPROTO_NETDEV || c->hooknum == NF_INET_INGRESS)) {
		d.n_ifindex = chain_devices(ctl, c, devs, NFTDP_CTL_MAX_IFACES);
		d.ifindex = devs;
	}
	if (c->dp_dirty) {
		rc = nftdp_vm_gen_chain_create(b, &d, c->prio, &c->dp_build);
	} else {
		c->dp_build = c->dp_cur;
		rc = nftdp_vm_gen_chain_reuse(b, &d, c->prio, c->dp_cur);
	}
	if (rc < 0) {
		trans_for(ctl->state, c, CTL_TR_NEWCHAIN, req);
		snprintf(msg, msglen, "chain %s: cannot be run by nftdp", c->name);
	}
	return rc;
}

static int build(struct nftdp_ctl *ctl, const struct nlmsghdr **req, char *msg, size_t msglen)
{
	struct ctl_build *bld = ctl->bld;
	struct ctl_state *st = ctl->state;
	struct nftdp_vm_resolver res = {.opaque = bld, .set = res_set, .obj = res_obj};
	struct nftdp_vm_gen_builder *b;
	struct nftdp_vm_error err = {.expr_index = -1};
	struct ctl_chain **base = NULL, *c;
	size_t nbase, capbase = 0;
	struct ctl_table *t;
	struct ctl_obj *o;
	int rc;

	mark_dirty(st);
	rc = nftdp_vm_gen_builder_create(bld->vm, &res, &b);
	if (rc < 0)
		return rc;
	/* the set generation this commit stages into: the generation's
	 * lookups read it, so sets switch when the generation is published */
	nftdp_vm_gen_set_gencursor(b, nftdp_set_gen_next());
	/* objects the new generation shares keep their state slots; ct helper,
	 * timeout and expectation objects (and synproxy) take conntrack for
	 * their family as nf_ct_netns_get does at their init: every live one,
	 * not only the batch's */
	ctl_list_for_each_entry(t, &st->tables, list) {
		if (t->dead)
			continue;
		ctl_list_for_each_entry(o, &t->objs, list) {
			if (o->dead)
				continue;
			if (o->dp && o->dp != o->dp_old)
				nftdp_vm_obj_keep(bld->vm, o->dp);
			if (o->type == NFT_OBJECT_CT_HELPER || o->type == NFT_OBJECT_CT_TIMEOUT ||
			    o->type == NFT_OBJECT_CT_EXPECT || o->type == NFT_OBJECT_SYNPROXY)
				nftdp_vm_gen_note_ct(b, t->family);
		}
	}
	/* regular chains first, then base chains in the order their hooks were
	 * registered (hook_insert puts the latest first among equals) */
	nbase = 0;
	ctl_list_for_each_entry(t, &st->tables, list) {
		if (t->dead)
			continue;
		ctl_list_for_each_entry(c, &t->chains, list) {
			if (c->dead)
				continue;
			if (c->base) {
				if (nbase == capbase) {
					struct ctl_chain **n;

					capbase = capbase ? capbase * 2 : 16;
					n = realloc(base, capbase * sizeof(*n));
					if (!n) {
						rc = -ENOMEM;
						goto err;
					}
					base = n;
				}
				base[nbase++] = c;
				continue;
			}
			rc = chain_add(ctl, b, t, c, req, msg, msglen);
			if (rc < 0)
				goto err;
		}
	}
	if (nbase) /* base is NULL when there are none */
		qsort(base, nbase, sizeof(*base), cmp_hook_seq);
	for (size_t i = 0, warned = 0; i < nbase; i++) {
		uint8_t fam = base[i]->table->family;

		/* kept and listed, never run (docs/differences.md): said once
		 * by the commit that adds such a base chain. Bridge input and
		 * output see frames for and from the bridge itself: wire mode
		 * has none */
		bool idle = fam == NFPROTO_ARP ||
			    (fam == NFPROTO_BRIDGE && (base[i]->hooknum == NF_BR_LOCAL_IN ||
						       base[i]->hooknum == NF_BR_LOCAL_OUT));

		if (!warned && !base[i]->dp_cur && idle) {
			warned = 1;
			fprintf(stderr,
				"nftdp: warning: %s base chain %s %s is accepted but never run: "
				"%s\n",
				fam == NFPROTO_BRIDGE ? "bridge" : "arp", base[i]->table->name,
				base[i]->name,
				fam == NFPROTO_BRIDGE
				    ? "the bridge has no frames of its own (input, output)"
				    : "arp hooks run only with --host-ports");
		}
		rc = chain_add(ctl, b, base[i]->table, base[i], req, msg, msglen);
		if (rc < 0)
			goto err;
	}
	free(base);
	base = NULL;
	ctl_list_for_each_entry(t, &st->tables, list) {
		if (t->dead)
			continue;
		bld->table = t;
		ctl_list_for_each_entry(c, &t->chains, list) {
			struct ctl_rule *r;

			if (c->dead || !c->dp_dirty)
				continue;
			ctl_list_for_each_entry(r, &c->rules, list) {
				if (r->dead)
					continue;
				bld->rule = r;
				rc = nftdp_vm_gen_add_rule(b, c->dp_build, r->nl, &err);
				if (rc < 0) {
					trans_for(st, r, CTL_TR_NEWRULE, req);
					if (*req)
						bld->bad_expr = err.expr_index;
					snprintf(msg, msglen, "%s", err.msg);
					goto err;
				}
			}
		}
	}
	bld->table = NULL;
	bld->rule = NULL;
	rc = nftdp_vm_gen_build(b, &bld->next, &err);
	if (rc < 0)
		snprintf(msg, msglen, "%s", err.msg);
	return rc;

err:
	free(base);
	bld->table = NULL;
	bld->rule = NULL;
	nftdp_vm_gen_builder_destroy(b);
	return rc;
}

/* ---------- the batch ---------- */

static int apply_objects(struct nftdp_ctl *ctl, const struct nlmsghdr **req, char *msg,
			 size_t msglen)
{
	struct ctl_trans *tr;

	ctl_list_for_each_entry(tr, &ctl->state->trans, list) {
		struct ctl_obj *o = tr->obj;
		struct nftdp_vm_error err;
		struct nftdp_vm_obj *vo;
		int rc;

		if (tr->op != CTL_TR_NEWOBJ && tr->op != CTL_TR_UPDOBJ)
			continue;
		if (o->dead || (o->dp && o->dp_old != NULL))
			continue; /* deleted again, or compiled for this batch already */
		if (o->type != NFT_OBJECT_COUNTER && o->type != NFT_OBJECT_QUOTA &&
		    o->type != NFT_OBJECT_LIMIT && o->type != NFT_OBJECT_CT_TIMEOUT &&
		    o->type != NFT_OBJECT_CT_HELPER && o->type != NFT_OBJECT_CT_EXPECT &&
		    o->type != NFT_OBJECT_SYNPROXY)
			continue; /* rules that use it are refused at compile */
		rc = nftdp_vm_obj_create(o->nl, ctl->bld->vm, &err, &vo);
		if (rc < 0) {
			*req = tr->req;
			snprintf(msg, msglen, "%s", err.msg);
			return rc;
		}
		/* dp_old marks "replaced in this batch"; a new object's is itself */
		o->dp_old = o->dp ? o->dp : vo;
		o->dp = vo;
	}
	return 0;
}

static int apply_sets(struct nftdp_ctl *ctl, const struct nlmsghdr **req, char *msg, size_t msglen)
{
	struct ctl_state *st = ctl->state;
	uint64_t now = nftdp_now_ms();
	struct ctl_trans *tr;
	struct ctl_elem **iv = NULL;
	size_t niv = 0, cap = 0;
	struct ctl_set *ivset = NULL;
	int rc = 0;

	ctl_list_for_each_entry(tr, &st->trans, list)
		if (tr->op == CTL_TR_NEWSET || tr->op == CTL_TR_NEWSETELEM)
			((struct ctl_set *)tr->obj)->dp_batch_elems = 0;
	ctl_list_for_each_entry(tr, &st->trans, list)
		if (tr->op == CTL_TR_NEWSETELEM)
			((struct ctl_set *)tr->obj)->dp_batch_elems++;
	ctl_list_for_each_entry(tr, &st->trans, list) {
		struct ctl_set *s = tr->obj;

		if (tr->op == CTL_TR_NEWSET && !s->dead && !s->dp) {
			uint64_t t0 = nftdp_now_ms(), took;
			struct ctl_elem *e;

			rc = set_create(s, s->dp_batch_elems);
			if (rc < 0) {
				*req = tr->req;
				snprintf(msg, msglen, "set %s: not supported by nftdp", s->name);
				goto out;
			}
			s->dp_touched = true;
			/* nf_tables_newset allocates the set at its message, before
			 * the element messages that follow stamp their expiration:
			 * the time its dataplane copy took here (a dynamic set's
			 * prefaulted pool) is not counted against its elements, all
			 * of this batch */
			took = nftdp_now_ms() - t0;
			if (took)
				ctl_list_for_each_entry(e, &s->elems, list)
					if (e->expires_at)
						e->expires_at += took;
		}
	}
	now = nftdp_now_ms();
	ctl_list_for_each_entry(tr, &st->trans, list) {
		struct ctl_set *s = tr->obj;

		if (tr->op != CTL_TR_NEWSETELEM || s->dead || !s->dp || s->dp_prev ||
		    s->dp_expr_at || s->dp_counter_at || one_field_interval(s) || !tr->elem ||
		    !elem_needs_expr_area(tr->elem, false))
			continue;
		rc = set_regrow(ctl->bld, st, s, now);
		if (rc < 0) {
			*req = tr->req;
			snprintf(msg, msglen, "set %s: element refused by the dataplane", s->name);
			goto out;
		}
	}
	ctl_list_for_each_entry(tr, &st->trans, list) {
		struct ctl_set *s = tr->obj;
		struct ctl_elem *e = tr->elem;

		if ((tr->op != CTL_TR_NEWSETELEM && tr->op != CTL_TR_DELSETELEM) || s->dead ||
		    !s->dp)
			continue;
		s->dp_touched = true;
		if (tr->op == CTL_TR_DELSETELEM) {
			if (e->flags & NFT_SET_ELEM_INTERVAL_END)
				continue;
			if (e->flags & NFT_SET_ELEM_CATCHALL)
				rc = nftdp_set_remove_catchall(s->dp);
			else
				rc = nftdp_set_remove(s->dp, e->key,
						      e->dp_ranged ? e->key_end
						      : e->kelen   ? e->key_end
								   : NULL);
			if (rc == -ENOENT)
				rc = 0; /* added and removed in this batch, or never in */
		} else if (one_field_interval(s) && !(e->flags & NFT_SET_ELEM_CATCHALL)) {
			/* collected per set, paired below (one set per message) */
			if (ivset && ivset != s) {
				rc = interval_inserts(ctl->bld, ivset, iv, niv, now);
				niv = 0;
				if (rc < 0)
					break;
			}
			ivset = s;
			if (e->dead)
				continue; /* added and deleted in this batch */
			if (niv == cap) {
				struct ctl_elem **n =
				    realloc(iv, (cap = cap ? cap * 2 : 64) * sizeof(*n));

				if (!n) {
					rc = -ENOMEM;
					break;
				}
				iv = n;
			}
			iv[niv++] = e;
			continue;
		} else if (!e->dead) {
			rc = elem_insert(ctl->bld, s, e, e->kelen ? e->key_end : NULL, now);
		}
		if (rc == -ENOTEMPTY) {
			/* overlaps an element: nft_add_set_elem's -EEXIST */
			*req = tr->req;
			rc = -EEXIST;
			snprintf(msg, msglen, "set %s: element overlaps an existing one", s->name);
			goto out;
		}
		if (rc < 0) {
			*req = tr->req;
			snprintf(msg, msglen, "set %s: %s", s->name,
				 rc != -EOPNOTSUPP ? "element refused by the dataplane"
				 : (s->flags & NFT_SET_OBJECT)
				     ? "object map of an object type nftdp does not run"
				     : "element expressions nftdp does not run in this set");
			goto out;
		}
	}
	if (rc == 0 && ivset && niv)
		rc = interval_inserts(ctl->bld, ivset, iv, niv, now);
	if (rc < 0 && ivset) {
		if (niv)
			trans_for_elem(st, iv[0], req);
		snprintf(msg, msglen, "set %s: element refused by the dataplane", ivset->name);
	}
out:
	free(iv);
	return rc;
}

/* Every live chain's id, before verdict-map elements name new chains. */
static int assign_chain_ids(struct ctl_state *st)
{
	struct ctl_table *t;
	struct ctl_chain *c;

	ctl_list_for_each_entry(t, &st->tables, list)
		ctl_list_for_each_entry(c, &t->chains, list)
			if (!c->dead && c->dp_id == 0 && (c->dp_id = ctl_chain_id_get()) == 0)
				return -ENOMEM;
	return 0;
}

int ctl_build_bad_expr(const struct nftdp_ctl *ctl)
{
	return ctl->bld ? ctl->bld->bad_expr : -1;
}

void ctl_build_clear_bad(struct nftdp_ctl *ctl)
{
	if (ctl->bld)
		ctl->bld->bad_expr = -1;
}

int ctl_build_prepare(struct nftdp_ctl *ctl, const struct nlmsghdr **req, char *msg, size_t msglen)
{
	int rc;

	*req = NULL;
	if (msglen)
		msg[0] = '\0';
	if (!ctl->bld)
		return 0;
	ctl->bld->bad_expr = -1;
	rc = assign_chain_ids(ctl->state);
	if (rc == 0)
		rc = apply_objects(ctl, req, msg, msglen);
	if (rc == 0)
		rc = apply_sets(ctl, req, msg, msglen);
	if (rc == 0)
		rc = build(ctl, req, msg, msglen);
	/* a fib rule never runs without a route table: the embedder makes
	 * one before the generation that needs it is published */
	if (rc == 0 && ctl->bld->next && ctl->cfg.fib_prepare &&
	    nftdp_vm_gen_uses_fib(ctl->bld->next))
		rc = ctl->cfg.fib_prepare(ctl->cfg.fib_arg, !nftdp_vm_gen_uses_fib(ctl->bld->cur),
					  msg, msglen);
	if (rc < 0)
		ctl_build_abort(ctl);
	return rc;
}

static void destroy_set_cb(void *arg)
{
	nftdp_set_destroy(arg);
}

static void destroy_obj_cb(void *arg)
{
	nftdp_vm_obj_destroy(arg);
}

/* Free p with the current generation (it may still use it), or now. */
static void retire(struct ctl_build *bld, void (*fn)(void *), void *p)
{
	if (!bld->cur) {
		fn(p); /* never published: no reader can hold it */
		return;
	}
	if (nftdp_vm_gen_on_free(bld->cur, fn, p) < 0)
		/* no memory to defer: the current generation still reaches
		 * it and is not retired yet, so no wait would do; keep it */
		fprintf(stderr, "nftdp: out of memory retiring an object; it is leaked\n");
}

/* A deleted set: its element counters go, its handle with the generation. */
static void set_retire(struct ctl_build *bld, struct ctl_set *s)
{
	struct ctl_elem *e;

	ctl_list_for_each_entry(e, &s->elems, list)
		elem_unpin(bld, s, e);
	if (s->dp) {
		retire(bld, destroy_set_cb, s->dp);
		s->dp = NULL;
	}
}

static void obj_retire(struct ctl_build *bld, struct ctl_obj *o)
{
	if (o->dp) {
		retire(bld, destroy_obj_cb, o->dp);
		o->dp = o->dp_old = NULL;
	}
}

/* nft_chain_stats_replace: the chain's counter set to what the request
 * gave (kept in c->nl until then), once its slot exists */
static void chain_stats_commit(const struct ctl_table *t, struct ctl_chain *c)
{
	if (!c->stats_pending || c->dead || !stats_vm)
		return;
	nftdp_vm_state_set_chain(stats_vm, t->family, t->name, c->name,
				 nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_PACKETS),
				 nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_BYTES));
	c->stats_pending = false;
}

/* A new rule's counters are the values the request gave, as the kernel's.
 * Its slots (keyed by handle) may be an older rule's: one it replaced keeps
 * the handle (iptables -Z replaces each rule with zeroed counters), and a
 * table deleted and made again in one batch (iptables-restore) hands out
 * the same handles again. */
static void rule_stats_commit(const struct ctl_table *t, const struct ctl_rule *r)
{
	if (r->dead || !stats_vm)
		return;
	for (unsigned int i = 0; i < r->nstats; i++) {
		const struct ctl_rule_stat *rs = &r->stats[i];
		uint64_t pk, by;

		if (rs->kind != CTL_STAT_COUNTER)
			continue;
		memcpy(&pk, (const char *)r->blob + rs->off_a, sizeof(pk));
		memcpy(&by, (const char *)r->blob + rs->off_b, sizeof(by));
		nftdp_vm_state_set_rule(stats_vm, t->family, t->name, r->handle, rs->expr_index,
					be64toh(pk), be64toh(by));
	}
}

void ctl_build_commit(struct nftdp_ctl *ctl)
{
	struct ctl_build *bld = ctl->bld;
	struct ctl_trans *tr;

	if (!bld || !bld->next)
		return;
	ctl_list_for_each_entry(tr, &ctl->state->trans, list) {
		struct ctl_set *s = tr->obj;
		struct ctl_obj *o = tr->obj;

		switch (tr->op) {
		case CTL_TR_NEWSET:
		case CTL_TR_NEWSETELEM:
			/* a copy set_regrow replaced: gone with the last
			 * generation that reaches it */
			if (tr->op == CTL_TR_NEWSETELEM && s->dp_prev) {
				retire(bld, destroy_set_cb, s->dp_prev);
				s->dp_prev = NULL;
			}
			/* staged: visible with the generation below */
			if (s->dp && s->dp_touched && !s->dead) {
				nftdp_set_commit_stage(s->dp);
				s->dp_touched = false;
			}
			break;
		case CTL_TR_DELSETELEM:
			if (s->dp && s->dp_touched && !s->dead) {
				nftdp_set_commit_stage(s->dp);
				s->dp_touched = false;
			}
			elem_unpin(bld, s, tr->elem);
			break;
		case CTL_TR_DELSET:
			set_retire(bld, s);
			break;
		case CTL_TR_NEWOBJ:
		case CTL_TR_UPDOBJ:
			if (o->dp_old && o->dp_old != o->dp)
				retire(bld, destroy_obj_cb, o->dp_old);
			o->dp_old = NULL;
			break;
		case CTL_TR_DELOBJ:
			obj_retire(bld, o);
			break;
		case CTL_TR_NEWCHAIN:
		case CTL_TR_UPDCHAIN:
			chain_stats_commit(tr->table, tr->obj);
			break;
		case CTL_TR_NEWRULE:
			rule_stats_commit(tr->table, tr->obj);
			break;
		case CTL_TR_DELTABLE:
			ctl_list_for_each_entry(s, &tr->table->sets, list)
				set_retire(bld, s);
			ctl_list_for_each_entry(o, &tr->table->objs, list)
				obj_retire(bld, o);
			break;
		default:
			break;
		}
	}
	/* the one switch: the generation names the set generation just
	 * staged, so its rules, set contents and objects appear together to
	 * every worker (lookups without a generation see the sets now) */
	nftdp_set_gen_publish();
	nftdp_vm_gen_publish(bld->dom, bld->next);
	bld->cur = bld->next;
	{
		struct ctl_table *t;
		struct ctl_chain *c;

		ctl_list_for_each_entry(t, &ctl->state->tables, list)
			ctl_list_for_each_entry(c, &t->chains, list)
				if (!c->dead && !t->dead)
					c->dp_cur = c->dp_build;
	}
	bld->next = NULL;
}

void ctl_build_abort(struct nftdp_ctl *ctl)
{
	struct ctl_build *bld = ctl->bld;
	struct ctl_trans *tr;

	if (!bld)
		return;
	if (bld->next) {
		nftdp_vm_gen_destroy(bld->next);
		bld->next = NULL;
	}
	ctl_list_for_each_entry(tr, &ctl->state->trans, list) {
		struct ctl_set *s = tr->obj;
		struct ctl_obj *o = tr->obj;

		switch (tr->op) {
		case CTL_TR_NEWSET:
			/* never published: no reader has it */
			if (s->dp) {
				struct ctl_elem *e;

				ctl_list_for_each_entry(e, &s->elems, list)
					elem_unpin(bld, s, e);
				nftdp_set_destroy(s->dp);
				s->dp = NULL;
				s->dp_touched = false;
			}
			break;
		case CTL_TR_NEWSETELEM:
		case CTL_TR_DELSETELEM:
			set_regrow_undo(s);
			if (s->dp && s->dp_touched) {
				nftdp_set_abort(s->dp);
				s->dp_touched = false;
			}
			if (tr->elem && tr->op == CTL_TR_NEWSETELEM) {
				tr->elem->dp_ranged = false;
				elem_unpin(bld, s, tr->elem);
			}
			break;
		case CTL_TR_NEWOBJ:
		case CTL_TR_UPDOBJ:
			if (o->dp_old) {
				struct nftdp_vm_obj *prev = o->dp_old == o->dp ? NULL : o->dp_old;

				nftdp_vm_obj_destroy(o->dp);
				o->dp = prev;
				o->dp_old = NULL;
			}
			break;
		default:
			break;
		}
	}
}

/* ---------- lifetime ---------- */

int ctl_build_create(struct nftdp_ctl *ctl)
{
	struct ctl_build *bld;

	if (!ctl->cfg.vm_state || !ctl->cfg.gen_dom)
		return 0;
	bld = calloc(1, sizeof(*bld));
	if (!bld)
		return -ENOMEM;
	bld->vm = ctl->cfg.vm_state;
	bld->dom = ctl->cfg.gen_dom;
	/* set memory's grace periods run on the domain's QSBR variable */
	nftdp_vm_gen_domain_grace(bld->dom, nftdp_set_grace_hook_begin, nftdp_set_grace_hook_end,
				  NULL);
	ctl->bld = bld;
	stats_vm = bld->vm;
	return 0;
}

void ctl_build_destroy(struct nftdp_ctl *ctl)
{
	struct ctl_build *bld = ctl->bld;
	struct ctl_table *t;

	if (!bld)
		return;
	ctl_build_abort(ctl);
	free(bld->vtargets);
	free(bld->vchains);
	/* what the last generation uses is freed with it (domain destroy) */
	ctl_list_for_each_entry(t, &ctl->state->tables, list) {
		struct ctl_set *s;
		struct ctl_obj *o;

		ctl_list_for_each_entry(s, &t->sets, list)
			set_retire(bld, s);
		ctl_list_for_each_entry(o, &t->objs, list)
			obj_retire(bld, o);
	}
	free(bld);
	ctl->bld = NULL;
	stats_vm = NULL;
}

/* ---------- counters in dumps ---------- */

static void put_be64(struct nlmsghdr *nlh, size_t off, uint64_t v)
{
	uint64_t be = htobe64(v);

	memcpy((char *)nlh + off, &be, sizeof(be));
}

bool ctl_build_chain_stats(const struct ctl_chain *c, uint64_t *packets, uint64_t *bytes)
{
	struct nftdp_vm_counter v;

	if (!stats_vm ||
	    nftdp_vm_state_read_chain(stats_vm, c->table->family, c->table->name, c->name, &v) < 0)
		return false;
	*packets = v.packets;
	*bytes = v.bytes;
	return true;
}

void ctl_build_rule_stats(const struct ctl_rule *r, struct nlmsghdr *nlh, size_t blob_off,
			  bool reset)
{
	const struct ctl_table *t = r->chain->table;

	if (!stats_vm)
		return;
	for (unsigned int i = 0; i < r->nstats; i++) {
		const struct ctl_rule_stat *rs = &r->stats[i];
		struct nftdp_vm_stateful_val v;

		if (nftdp_vm_state_read_rule(stats_vm, t->family, t->name, r->handle,
					     rs->expr_index, reset, &v) < 0)
			continue;
		if (rs->kind == CTL_STAT_COUNTER) {
			put_be64(nlh, blob_off + rs->off_a, v.packets);
			put_be64(nlh, blob_off + rs->off_b, v.bytes);
		} else if (rs->kind == CTL_STAT_QUOTA) {
			/* nft_quota_do_dump: consumed is capped at the quota */
			put_be64(nlh, blob_off + rs->off_a,
				 v.consumed > v.bytes ? v.bytes : v.consumed);
		}
	}
}

/* One element expression as nft_expr_dump writes it under attribute type. */
static void put_elem_expr(struct nlmsghdr *nlh, uint16_t type, const struct nftdp_vm_elem_expr *v)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type), *d;
	uint64_t consumed = v->consumed;
	uint32_t flags = v->flags;

	switch (v->type) {
	case NFTDP_VM_ELEM_EXPR_COUNTER:
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "counter");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES, htobe64(v->bytes));
		mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, htobe64(v->packets));
		break;
	case NFTDP_VM_ELEM_EXPR_QUOTA:
		/* nft_quota_do_dump: consumed capped at the quota, which
		 * then reads depleted */
		if (consumed >= v->quota) {
			consumed = v->quota;
			flags |= NFT_QUOTA_F_DEPLETED;
		}
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "quota");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_QUOTA_BYTES, htobe64(v->quota));
		mnl_attr_put_u64(nlh, NFTA_QUOTA_CONSUMED, htobe64(consumed));
		mnl_attr_put_u32(nlh, NFTA_QUOTA_FLAGS, htonl(flags));
		break;
	case NFTDP_VM_ELEM_EXPR_LAST:
		/* nft_last_dump */
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "last");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u32(nlh, NFTA_LAST_SET, htonl(v->last_set));
		mnl_attr_put_u64(nlh, NFTA_LAST_MSECS, htobe64(v->last_msecs));
		break;
	case NFTDP_VM_ELEM_EXPR_CONNLIMIT:
		/* nft_connlimit_do_dump */
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "connlimit");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u32(nlh, NFTA_CONNLIMIT_COUNT, htonl(v->count));
		mnl_attr_put_u32(nlh, NFTA_CONNLIMIT_FLAGS, htonl(v->flags));
		break;
	default:
		/* nft_limit_dump */
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "limit");
		d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_LIMIT_RATE, htobe64(v->rate));
		mnl_attr_put_u64(nlh, NFTA_LIMIT_UNIT, htobe64(v->unit));
		mnl_attr_put_u32(nlh, NFTA_LIMIT_BURST, htonl(v->burst));
		mnl_attr_put_u32(nlh, NFTA_LIMIT_TYPE, htonl(v->limit_type));
		mnl_attr_put_u32(nlh, NFTA_LIMIT_FLAGS, htonl(v->flags));
		break;
	}
	mnl_attr_nest_end(nlh, d);
	mnl_attr_nest_end(nlh, n);
}

bool ctl_build_elem_exprs_put(const struct ctl_set *s, const void *data, struct nlmsghdr *nlh)
{
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	unsigned int n;
	struct nlattr *l;

	if (!s->dp_expr_at || !data)
		return false;
	n = nftdp_vm_elem_expr_read((const uint8_t *)data + s->dp_expr_at - 1, v);
	/* nft_set_elem_expr_dump: one under NFTA_SET_ELEM_EXPR, more in a list */
	if (n == 1) {
		put_elem_expr(nlh, NFTA_SET_ELEM_EXPR, &v[0]);
	} else if (n > 1) {
		l = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_EXPRESSIONS);
		for (unsigned int i = 0; i < n; i++)
			put_elem_expr(nlh, NFTA_LIST_ELEM, &v[i]);
		mnl_attr_nest_end(nlh, l);
	}
	return true;
}

bool ctl_build_elem_exprs_put_key(const struct ctl_set *s, const struct ctl_elem *e,
				  struct nlmsghdr *nlh)
{
	const void *data = NULL;

	if (!s->dp_expr_at || !s->dp || !nftdp_set_lookup(s->dp, e->key, &data, nftdp_now_ms()))
		return false;
	return ctl_build_elem_exprs_put(s, data, nlh);
}

void ctl_build_elem_stats(const struct ctl_set *s, const struct ctl_elem *e, struct nlmsghdr *nlh,
			  size_t at)
{
	const struct nlattr *a;
	struct nftdp_vm_stateful_val v;
	char key[600];

	if (!stats_vm)
		return;
	elem_slot_key(s, e, key, sizeof(key));
	if (nftdp_vm_state_read_key(stats_vm, key, false, &v) < 0)
		return;
	/* the expression list as stored: one expression, or a list of them */
	for (a = (const struct nlattr *)((char *)nlh + at);
	     mnl_attr_ok(a, (int)((char *)nlh + at + e->exprlen - (char *)a));
	     a = mnl_attr_next(a)) {
		const struct nlattr *one = a, *y, *z;

		if (e->expr_type == NFTA_SET_ELEM_EXPR && mnl_attr_get_type(a) != NFTA_EXPR_DATA)
			continue;
		if (e->expr_type == NFTA_SET_ELEM_EXPRESSIONS) {
			mnl_attr_for_each_nested(y, a) if (mnl_attr_get_type(y) == NFTA_EXPR_DATA)
			    one = y;
			if (one == a)
				continue;
		}
		mnl_attr_for_each_nested(z, one)
		{
			size_t off = (size_t)((const char *)mnl_attr_get_payload(z) - (char *)nlh);

			if (mnl_attr_get_payload_len(z) != 8)
				continue;
			if (mnl_attr_get_type(z) == NFTA_COUNTER_PACKETS)
				put_be64(nlh, off, v.packets);
			else if (mnl_attr_get_type(z) == NFTA_COUNTER_BYTES)
				put_be64(nlh, off, v.bytes);
		}
	}
}

void ctl_build_obj_stats(struct ctl_obj *o, bool reset)
{
	struct nftdp_vm_stateful_val v;

	if (!stats_vm || !o->dp)
		return;
	if (nftdp_vm_state_read_obj(stats_vm, o->table->family, o->table->name, o->name, o->type,
				    reset, &v) < 0)
		return;
	if (o->type == NFT_OBJECT_COUNTER) {
		nftnl_obj_set_u64(o->nl, NFTNL_OBJ_CTR_PKTS, v.packets);
		nftnl_obj_set_u64(o->nl, NFTNL_OBJ_CTR_BYTES, v.bytes);
	} else if (o->type == NFT_OBJECT_QUOTA) {
		nftnl_obj_set_u64(o->nl, NFTNL_OBJ_QUOTA_CONSUMED,
				  v.consumed > v.bytes ? v.bytes : v.consumed);
	}
}

struct connlimit_gc {
	const struct ctl_set *s;
	const struct nftdp_vm_ct_ops *ops;
};

static bool connlimit_gc_dead(void *data, void *arg)
{
	const struct connlimit_gc *g = arg;

	return nftdp_vm_elem_expr_gc((uint8_t *)data + g->s->dp_expr_at - 1, g->ops);
}

/*
 * The kernel's set gc for elements with `ct count` (NFT_EXPR_GC:
 * nft_rhash_gc asks nft_connlimit_gc): an element whose connections are
 * all gone leaves the set, whoever added it, without a new generation.
 */
static void connlimit_gc(struct ctl_build *bld, struct ctl_set *s,
			 const struct nftdp_vm_ct_ops *ops, uint64_t now)
{
	struct connlimit_gc g = {.s = s, .ops = ops};
	struct ctl_elem *e, *n;

	if (!nftdp_set_gc_data(s->dp, now, connlimit_gc_dead, &g))
		return;
	/* the control plane's own elements that went with them */
	ctl_list_for_each_entry_safe(e, n, &s->elems, list) {
		const void *data;
		uint64_t exp, tmo;

		if (e->dead || !e->expr || nftdp_set_get(s->dp, e->key, &data, &exp, &tmo))
			continue;
		elem_unpin(bld, s, e);
		ctl_elem_refs(e, -1);
		s->nelems--;
		ctl_set_elem_unlink(s, e);
		ctl_elem_free(e);
	}
}

void ctl_build_tick(struct nftdp_ctl *ctl)
{
	struct ctl_build *bld = ctl->bld;
	struct ctl_table *t;
	uint64_t now;

	if (!bld)
		return;
	now = nftdp_now_ms();
	if (now - bld->last_gc_ms >= 1000) {
		bld->last_gc_ms = now;
		/* expired and packet-path-deleted elements: unlinked now, freed
		 * after a grace period that the reclaim below begins */
		ctl_list_for_each_entry(t, &ctl->state->tables, list) {
			struct ctl_set *s;

			ctl_list_for_each_entry(s, &t->sets, list) {
				if (!s->dp || s->dp_touched)
					continue;
				/* elements with expressions: any may hold a ct count
				 * (a dynset's, the set's, its own) */
				if (s->dp_expr_at && ctl->cfg.ct && ctl->cfg.ct->vm_ops)
					connlimit_gc(bld, s, ctl->cfg.ct->vm_ops, now);
				else if (s->flags & (NFT_SET_TIMEOUT | NFT_SET_EVAL))
					nftdp_set_gc(s->dp, now);
			}
		}
	}
	/* every tick: end the grace periods that passed, begin one for what
	 * gc, an abort or those ends unlinked */
	nftdp_vm_gen_reclaim(bld->dom);
}
