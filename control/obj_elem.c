/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Set elements: mirrors nf_tables_newsetelem (nft_add_set_elem),
 * nf_tables_delsetelem (nft_del_setelem, nft_set_flush) and
 * nf_tables_getsetelem / nf_tables_dump_set.
 *
 * The control plane keeps each element's attributes for dumps, indexed by a
 * hash of (key, interval-end flag) so that one element is added, found or
 * removed in constant time whatever the size of the set. The dataplane's
 * lookup structures (sets/) are built from these at commit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"
#include "nftdp_common.h"
#include "nftdp_sets.h"

#include <linux/netfilter.h>

#define ELEM_ID_FLAGS (NFT_SET_ELEM_INTERVAL_END | NFT_SET_ELEM_CATCHALL)

static uint32_t elem_hash(const uint8_t *key, unsigned int len, uint32_t flags)
{
	uint32_t h = 2166136261u ^ (flags & ELEM_ID_FLAGS);

	for (unsigned int i = 0; i < len; i++) {
		h ^= key[i];
		h *= 16777619u;
	}
	return h ^ (h >> 15);
}

static int htab_grow(struct ctl_set *s)
{
	uint32_t nsize = s->hsize ? s->hsize * 2 : 64;
	struct ctl_elem **nt = calloc(nsize, sizeof(*nt));
	struct ctl_elem *e;

	if (nt == NULL)
		return -ENOMEM;
	ctl_list_for_each_entry(e, &s->elems, list) {
		uint32_t b = e->hash & (nsize - 1);

		e->hnext = nt[b];
		nt[b] = e;
	}
	free(s->htab);
	s->htab = nt;
	s->hsize = nsize;
	return 0;
}

static struct ctl_elem *elem_find(const struct ctl_set *s, const uint8_t *key, unsigned int klen,
				  uint32_t flags, bool with_dead)
{
	uint32_t h = elem_hash(key, klen, flags);
	struct ctl_elem *e;

	if (s->hsize == 0)
		return NULL;
	for (e = s->htab[h & (s->hsize - 1)]; e; e = e->hnext) {
		if (e->hash != h || e->klen != klen ||
		    (e->flags & ELEM_ID_FLAGS) != (flags & ELEM_ID_FLAGS))
			continue;
		if (memcmp(e->key, key, klen) != 0)
			continue;
		if (e->dead && !with_dead)
			continue;
		return e;
	}
	return NULL;
}

static int elem_link(struct ctl_set *s, struct ctl_elem *e)
{
	uint32_t b;

	if (s->nhashed + 1 > s->hsize && htab_grow(s) < 0)
		return -ENOMEM;
	b = e->hash & (s->hsize - 1);
	e->hnext = s->htab[b];
	s->htab[b] = e;
	ctl_list_add_tail(&e->list, &s->elems);
	s->nhashed++;
	return 0;
}

static void *dup_payload(const struct nlattr *a, uint16_t *len)
{
	void *p;

	*len = mnl_attr_get_payload_len(a);
	p = malloc(*len ? *len : 1);
	if (p)
		memcpy(p, mnl_attr_get_payload(a), *len);
	return p;
}

/* nft_data_init() for a value: NFTA_DATA_VALUE of exactly len bytes. */
static int parse_value(const struct nlattr *nest, uint8_t *out, unsigned int len)
{
	const struct nlattr *a, *val = NULL;

	if (mnl_attr_validate(nest, MNL_TYPE_NESTED) < 0)
		return -EINVAL;
	mnl_attr_for_each_nested(a, nest)
	{
		if (mnl_attr_get_type(a) == NFTA_DATA_VALUE)
			val = a;
		else
			return -EINVAL;
	}
	if (val == NULL || mnl_attr_get_payload_len(val) == 0 ||
	    mnl_attr_get_payload_len(val) > CTL_DATA_MAXLEN)
		return -EINVAL;
	if (mnl_attr_get_payload_len(val) != len)
		return -EINVAL;
	memcpy(out, mnl_attr_get_payload(val), len);
	return 0;
}

/* nft_verdict_init(): the verdict code and, for jump/goto, the chain. */
static int parse_verdict(struct ctl_set *s, const struct nlattr *nest, struct ctl_chain **chain)
{
	const struct nlattr *a, *v = NULL, *code = NULL, *cname = NULL;
	int32_t verdict;

	mnl_attr_for_each_nested(a, nest)
	{
		if (mnl_attr_get_type(a) == NFTA_DATA_VERDICT)
			v = a;
		else
			return -EINVAL;
	}
	if (v == NULL)
		return -EINVAL;
	mnl_attr_for_each_nested(a, v)
	{
		switch (mnl_attr_get_type(a)) {
		case NFTA_VERDICT_CODE:
			code = a;
			break;
		case NFTA_VERDICT_CHAIN:
			cname = a;
			break;
		case NFTA_VERDICT_CHAIN_ID:
			break;
		default:
			return -EINVAL;
		}
	}
	if (code == NULL || mnl_attr_validate(code, MNL_TYPE_U32) < 0)
		return -EINVAL;
	verdict = (int32_t)ntohl(mnl_attr_get_u32(code));
	switch (verdict) {
	case NF_ACCEPT:
	case NF_DROP:
	case NFT_CONTINUE:
	case NFT_BREAK:
	case NFT_RETURN:
		return 0;
	case NFT_JUMP:
	case NFT_GOTO:
		if (cname == NULL || mnl_attr_validate(cname, MNL_TYPE_NUL_STRING) < 0)
			return -EINVAL;
		*chain = ctl_chain_lookup(s->table, mnl_attr_get_str(cname));
		if (*chain == NULL)
			return -ENOENT;
		if ((*chain)->base)
			return -EOPNOTSUPP;
		/* NFT_DATA_DESC_SETELEM: no element jumps to a binding chain */
		if ((*chain)->binding)
			return -EINVAL;
		return 0;
	default:
		if ((verdict & NF_VERDICT_MASK) == NF_QUEUE)
			return -EINVAL;
		return -EINVAL;
	}
}

/* Whether element expressions x (NFTA_SET_ELEM_EXPR: one, or
 * NFTA_SET_ELEM_EXPRESSIONS: a list) hold a connlimit (`ct count`). */
static bool exprs_have_connlimit(const struct nlattr *x)
{
	const struct nlattr *y, *z;

	mnl_attr_for_each_nested(y, x)
	{
		if (mnl_attr_get_type(x) == NFTA_SET_ELEM_EXPR) {
			if (mnl_attr_get_type(y) == NFTA_EXPR_NAME &&
			    strcmp(mnl_attr_get_str(y), "connlimit") == 0)
				return true;
			continue;
		}
		mnl_attr_for_each_nested(z, y) if (mnl_attr_get_type(z) == NFTA_EXPR_NAME &&
						   strcmp(mnl_attr_get_str(z), "connlimit") ==
						       0) return true;
	}
	return false;
}

/* Parse one NFTA_LIST_ELEM of NFTA_SET_ELEM_LIST_ELEMENTS into e. */
static int elem_parse(struct ctl_set *s, const struct nlattr *elem, struct ctl_elem *e,
		      bool for_delete)
{
	const struct nlattr *tb[NFTA_SET_ELEM_MAX + 1] = {0};
	const struct nlattr *a;
	int err;

	/* the kernel does not check the type of the list's elements (libnftnl
	 * numbers them 1, 2, 3, ...) */
	if (mnl_attr_validate(elem, MNL_TYPE_NESTED) < 0)
		return -EINVAL;
	mnl_attr_for_each_nested(a, elem)
	{
		uint16_t type = mnl_attr_get_type(a);

		if (type == 0 || type > NFTA_SET_ELEM_MAX || type == NFTA_SET_ELEM_PAD)
			return -EINVAL;
		tb[type] = a;
	}
	if (tb[NFTA_SET_ELEM_FLAGS]) {
		if (mnl_attr_validate(tb[NFTA_SET_ELEM_FLAGS], MNL_TYPE_U32) < 0)
			return -EINVAL;
		e->flags = ntohl(mnl_attr_get_u32(tb[NFTA_SET_ELEM_FLAGS]));
		if (e->flags & ~(NFT_SET_ELEM_INTERVAL_END | NFT_SET_ELEM_CATCHALL))
			return -EOPNOTSUPP;
		if (!(s->flags & NFT_SET_INTERVAL) && (e->flags & NFT_SET_ELEM_INTERVAL_END))
			return -EINVAL;
	}
	if (e->flags & NFT_SET_ELEM_CATCHALL) {
		if (tb[NFTA_SET_ELEM_KEY] || tb[NFTA_SET_ELEM_KEY_END])
			return -EINVAL;
	} else {
		if (tb[NFTA_SET_ELEM_KEY] == NULL)
			return -EINVAL;
		err = parse_value(tb[NFTA_SET_ELEM_KEY], e->key, s->klen);
		if (err < 0)
			return err;
		e->klen = s->klen;
	}
	if (tb[NFTA_SET_ELEM_KEY_END]) {
		if (!(s->flags & NFT_SET_INTERVAL) && !(s->flags & NFT_SET_CONCAT))
			return -EINVAL;
		err = parse_value(tb[NFTA_SET_ELEM_KEY_END], e->key_end, s->klen);
		if (err < 0)
			return err;
		e->kelen = s->klen;
	}
	if (for_delete)
		return 0;

	if (s->flags & NFT_SET_MAP) {
		if (tb[NFTA_SET_ELEM_DATA] == NULL && !(e->flags & NFT_SET_ELEM_INTERVAL_END))
			return -EINVAL;
	} else if (tb[NFTA_SET_ELEM_DATA]) {
		return -EINVAL;
	}
	if (s->flags & NFT_SET_OBJECT) {
		if (tb[NFTA_SET_ELEM_OBJREF] == NULL && !(e->flags & NFT_SET_ELEM_INTERVAL_END))
			return -EINVAL;
	} else if (tb[NFTA_SET_ELEM_OBJREF]) {
		return -EINVAL;
	}
	if (tb[NFTA_SET_ELEM_TIMEOUT]) {
		if (!(s->flags & NFT_SET_TIMEOUT) ||
		    mnl_attr_validate(tb[NFTA_SET_ELEM_TIMEOUT], MNL_TYPE_U64) < 0)
			return -EINVAL;
		e->timeout = be64toh(mnl_attr_get_u64(tb[NFTA_SET_ELEM_TIMEOUT]));
	} else if ((s->flags & NFT_SET_TIMEOUT) && !(e->flags & NFT_SET_ELEM_INTERVAL_END)) {
		e->timeout = s->timeout;
	}
	if (e->timeout) {
		uint64_t expires = e->timeout;

		if (tb[NFTA_SET_ELEM_EXPIRATION]) {
			if (mnl_attr_validate(tb[NFTA_SET_ELEM_EXPIRATION], MNL_TYPE_U64) < 0)
				return -EINVAL;
			expires = be64toh(mnl_attr_get_u64(tb[NFTA_SET_ELEM_EXPIRATION]));
			if (expires > e->timeout)
				return -ERANGE;
		}
		e->expires_at = nftdp_now_ms() + expires;
	} else if (tb[NFTA_SET_ELEM_EXPIRATION]) {
		return -EINVAL;
	}
	if (tb[NFTA_SET_ELEM_DATA] && !(e->flags & NFT_SET_ELEM_INTERVAL_END)) {
		if (s->dtype == NFT_DATA_VERDICT) {
			err = parse_verdict(s, tb[NFTA_SET_ELEM_DATA], &e->chain_ref);
		} else {
			uint8_t tmp[CTL_DATA_MAXLEN];

			err = parse_value(tb[NFTA_SET_ELEM_DATA], tmp, s->dlen);
		}
		if (err < 0)
			return err;
		e->data = dup_payload(tb[NFTA_SET_ELEM_DATA], &e->datalen);
		if (e->data == NULL)
			return -ENOMEM;
	}
	if (tb[NFTA_SET_ELEM_OBJREF] && !(e->flags & NFT_SET_ELEM_INTERVAL_END)) {
		if (mnl_attr_validate(tb[NFTA_SET_ELEM_OBJREF], MNL_TYPE_NUL_STRING) < 0)
			return -EINVAL;
		e->obj_ref = ctl_obj_lookup(s->table, mnl_attr_get_str(tb[NFTA_SET_ELEM_OBJREF]),
					    s->objtype);
		if (e->obj_ref == NULL)
			return -ENOENT;
		e->objref = strdup(mnl_attr_get_str(tb[NFTA_SET_ELEM_OBJREF]));
		if (e->objref == NULL)
			return -ENOMEM;
	}
	if (tb[NFTA_SET_ELEM_USERDATA]) {
		if (mnl_attr_get_payload_len(tb[NFTA_SET_ELEM_USERDATA]) > CTL_USERDATA_MAXLEN)
			return -ERANGE;
		e->udata = dup_payload(tb[NFTA_SET_ELEM_USERDATA], &e->udlen);
		if (e->udata == NULL)
			return -ENOMEM;
	}
	if (tb[NFTA_SET_ELEM_EXPR] || tb[NFTA_SET_ELEM_EXPRESSIONS]) {
		const struct nlattr *x =
		    tb[NFTA_SET_ELEM_EXPR] ? tb[NFTA_SET_ELEM_EXPR] : tb[NFTA_SET_ELEM_EXPRESSIONS];

		/* nft_set_elem_expr_alloc: NFT_EXPR_GC (connlimit) on a set
		 * with timeouts */
		if ((s->flags & NFT_SET_TIMEOUT) && exprs_have_connlimit(x))
			return -EOPNOTSUPP;
		e->expr_type = mnl_attr_get_type(x);
		e->expr = ctl_expr_payload_canon(e->expr_type, mnl_attr_get_payload(x),
						 mnl_attr_get_payload_len(x), &e->exprlen);
		if (e->expr == NULL)
			return -ENOMEM;
	} else if (s->elem_expr && !(e->flags & NFT_SET_ELEM_INTERVAL_END)) {
		e->expr_type = s->elem_expr_type;
		e->exprlen = s->elem_exprlen;
		e->expr = malloc(e->exprlen ? e->exprlen : 1);
		if (e->expr == NULL)
			return -ENOMEM;
		memcpy(e->expr, s->elem_expr, e->exprlen);
	}
	return 0;
}

static bool elem_same_data(const struct ctl_elem *a, const struct ctl_elem *b)
{
	if (a->datalen != b->datalen || (a->datalen && memcmp(a->data, b->data, a->datalen)))
		return false;
	if ((a->objref == NULL) != (b->objref == NULL))
		return false;
	if (a->objref && strcmp(a->objref, b->objref) != 0)
		return false;
	if (a->kelen != b->kelen || memcmp(a->key_end, b->key_end, a->kelen) != 0)
		return false;
	return true;
}

/* Concatenated ranges (key_end given): the same start with another end is
 * an overlap for nft_pipapo_insert (-ENOTEMPTY, which nft_add_set_elem
 * reports as -EEXIST whatever NLM_F_EXCL says), before data is compared.
 * An element without key_end ends where it starts. */
static bool elem_other_end(const struct ctl_elem *a, const struct ctl_elem *b)
{
	const uint8_t *ea = a->kelen ? a->key_end : a->key;
	const uint8_t *eb = b->kelen ? b->key_end : b->key;

	if (!a->kelen && !b->kelen)
		return false;
	return a->klen != b->klen || memcmp(ea, eb, a->klen) != 0;
}

static int set_for_msg(struct ctl_msg *m, struct ctl_table **tp, struct ctl_set **sp)
{
	struct ctl_table *t;
	struct ctl_set *s = NULL;
	int err;

	t = ctl_table_lookup(m, m->tb[NFTA_SET_ELEM_LIST_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_SET_ELEM_LIST_SET])
		s = ctl_set_lookup(t, mnl_attr_get_str(m->tb[NFTA_SET_ELEM_LIST_SET]));
	if (s == NULL && m->batch && m->tb[NFTA_SET_ELEM_LIST_SET_ID])
		s = ctl_set_lookup_id(m->st, t,
				      ntohl(mnl_attr_get_u32(m->tb[NFTA_SET_ELEM_LIST_SET_ID])));
	if (s == NULL) {
		m->bad_attr = m->tb[NFTA_SET_ELEM_LIST_SET] ? m->tb[NFTA_SET_ELEM_LIST_SET]
							    : m->tb[NFTA_SET_ELEM_LIST_SET_ID];
		return m->bad_attr ? -ENOENT : -EINVAL;
	}
	*tp = t;
	*sp = s;
	return 0;
}

static bool elem_expired(const struct ctl_elem *e, uint64_t now);
static int del_elem(struct ctl_msg *m, struct ctl_set *s, struct ctl_elem *e, bool quiet);

static unsigned int concat_range_fields(const struct ctl_set *s, const uint8_t **fields);
static struct ctl_elem *concat_range_find(const struct ctl_set *s, const uint8_t *fields,
					  unsigned int nfields, const uint8_t *key,
					  unsigned int klen, uint64_t now);

/* nft_pipapo_insert at the element's message: its start in an element other
 * than itself, or its end in any, is -ENOTEMPTY, reported by
 * nft_add_set_elem as -EEXIST at the element. O(elements), as a get. */
#define CONCAT_OVERLAP_SCAN_MAX 2048

static int concat_range_overlap(const struct ctl_set *s, const struct ctl_elem *e)
{
	const uint8_t *fields = NULL, *end = e->kelen ? e->key_end : e->key;
	unsigned int nfields = concat_range_fields(s, &fields);
	uint64_t now = nftdp_now_ms();
	struct ctl_elem *x;

	/* quadratic for a batch: above this the dataplane's set finds the
	 * overlap at commit (-EEXIST too, at the command, not the element) */
	if (!nfields || (e->flags & ELEM_ID_FLAGS) || s->nelems > CONCAT_OVERLAP_SCAN_MAX)
		return 0;
	x = concat_range_find(s, fields, nfields, e->key, e->klen, now);
	if (x && (memcmp(x->key, e->key, e->klen) != 0 || elem_other_end(x, e)))
		return -EEXIST;
	if (!x && concat_range_find(s, fields, nfields, end, e->klen, now))
		return -EEXIST;
	return 0;
}

static int add_elem(struct ctl_msg *m, struct ctl_set *s, const struct nlattr *attr)
{
	struct ctl_elem *e, *old;
	struct ctl_trans *tr;
	int err;

	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	err = elem_parse(s, attr, e, false);
	if (err < 0)
		goto err_elem;
	e->hash = elem_hash(e->key, e->klen, e->flags);
	err = concat_range_overlap(s, e);
	if (err < 0)
		goto err_elem;
	old = elem_find(s, e->key, e->klen, e->flags, false);
	if (old && elem_expired(old, nftdp_now_ms())) {
		/* an expired element is no longer there for an insert
		 * (nft_rhash_cmp, pipapo_get skip it, the rbtree's insert
		 * collects it): it leaves without an event, as the kernel's
		 * gc takes it, and the new one goes in */
		err = del_elem(m, s, old, true);
		if (err < 0)
			goto err_elem;
		old = NULL;
	}
	if (old) {
		if (elem_other_end(old, e))
			err = -EEXIST; /* pipapo: same start, other end: -ENOTEMPTY */
		else if (m->nlh->nlmsg_flags & NLM_F_EXCL)
			err = -EEXIST;
		else if (!elem_same_data(old, e))
			err = -EBUSY;
		else
			err = 0;
		goto err_elem;
	}
	if (s->size && !(e->flags & NFT_SET_ELEM_CATCHALL) && s->nelems >= s->size) {
		err = -ENFILE;
		goto err_elem;
	}
	tr = ctl_trans_add(m, CTL_TR_NEWSETELEM, s->table, s);
	if (tr == NULL) {
		err = -ENOMEM;
		goto err_elem;
	}
	tr->elem = e;
	if (elem_link(s, e) < 0) {
		ctl_list_del(&tr->list);
		free(tr);
		err = -ENOMEM;
		goto err_elem;
	}
	s->nelems++;
	ctl_elem_refs(e, +1);
	if (e->chain_ref)
		m->st->validate = true;
	return 0;

err_elem:
	ctl_elem_free(e);
	return err;
}

int ctl_newsetelem(struct ctl_msg *m)
{
	const struct nlattr *attr;
	struct ctl_table *t;
	struct ctl_set *s;
	int err;

	err = set_for_msg(m, &t, &s);
	if (err < 0)
		return err;
	if (s->use > 0 && (s->flags & (NFT_SET_CONSTANT | NFT_SET_ANONYMOUS)))
		return -EBUSY;
	if (m->tb[NFTA_SET_ELEM_LIST_ELEMENTS] == NULL)
		return -EINVAL;
	mnl_attr_for_each_nested(attr, m->tb[NFTA_SET_ELEM_LIST_ELEMENTS])
	{
		err = add_elem(m, s, attr);
		if (err < 0) {
			m->bad_attr = attr;
			return err;
		}
	}
	return 0;
}

static int del_elem(struct ctl_msg *m, struct ctl_set *s, struct ctl_elem *e, bool quiet)
{
	struct ctl_trans *tr = ctl_trans_add(m, CTL_TR_DELSETELEM, s->table, s);

	if (tr == NULL)
		return -ENOMEM;
	tr->elem = e;
	tr->quiet = quiet;
	e->dead = true;
	s->nelems--;
	ctl_elem_refs(e, -1);
	return 0;
}

int ctl_delsetelem(struct ctl_msg *m)
{
	const struct nlattr *attr;
	struct ctl_table *t;
	struct ctl_set *s;
	struct ctl_elem *e;
	int err;

	err = set_for_msg(m, &t, &s);
	if (err < 0)
		return err;
	if (s->use > 0 && (s->flags & (NFT_SET_CONSTANT | NFT_SET_ANONYMOUS)))
		return -EBUSY;
	if (m->tb[NFTA_SET_ELEM_LIST_ELEMENTS] == NULL) {
		/* nft_set_flush() */
		ctl_list_for_each_entry(e, &s->elems, list) {
			if (e->dead)
				continue;
			err = del_elem(m, s, e, false);
			if (err < 0)
				return err;
		}
		return 0;
	}
	mnl_attr_for_each_nested(attr, m->tb[NFTA_SET_ELEM_LIST_ELEMENTS])
	{
		struct ctl_elem key = {0};

		err = elem_parse(s, attr, &key, true);
		if (err == 0) {
			e = elem_find(s, key.key, key.klen, key.flags, false);
			/* an expired element is not found (nft_rhash_cmp,
			 * pipapo_get, the rbtree's deactivate skip it) */
			if (e && elem_expired(e, nftdp_now_ms()))
				e = NULL;
			err = e ? del_elem(m, s, e, false) : -ENOENT;
		}
		if (err < 0) {
			m->bad_attr = attr;
			return err;
		}
	}
	return 0;
}

static void put_data_nest(struct nlmsghdr *nlh, uint16_t type, const void *data, size_t len)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);

	mnl_attr_put(nlh, NFTA_DATA_VALUE, len, data);
	mnl_attr_nest_end(nlh, n);
}

static void put_raw_nest(struct nlmsghdr *nlh, uint16_t type, const void *payload, size_t len)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);

	memcpy(mnl_nlmsg_get_payload_tail(nlh), payload, len);
	nlh->nlmsg_len += MNL_ALIGN(len);
	mnl_attr_nest_end(nlh, n);
}

/* nf_tables_fill_setelem() */
static void elem_put(struct nlmsghdr *nlh, const struct ctl_set *s, const struct ctl_elem *e,
		     uint64_t now)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);

	if (!(e->flags & NFT_SET_ELEM_CATCHALL))
		put_data_nest(nlh, NFTA_SET_ELEM_KEY, e->key, e->klen);
	if (e->kelen)
		put_data_nest(nlh, NFTA_SET_ELEM_KEY_END, e->key_end, e->kelen);
	if (e->data)
		put_raw_nest(nlh, NFTA_SET_ELEM_DATA, e->data, e->datalen);
	if (e->expr && !ctl_build_elem_exprs_put_key(s, e, nlh)) {
		size_t at = nlh->nlmsg_len + NLA_HDRLEN;

		put_raw_nest(nlh, e->expr_type, e->expr, e->exprlen);
		if (e->dp_counted)
			ctl_build_elem_stats(s, e, nlh, at);
	}
	if (e->objref)
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_OBJREF, e->objref);
	if (e->flags)
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_FLAGS, htonl(e->flags));
	if (e->timeout) {
		if (e->timeout != s->timeout)
			mnl_attr_put_u64(nlh, NFTA_SET_ELEM_TIMEOUT, htobe64(e->timeout));
		mnl_attr_put_u64(nlh, NFTA_SET_ELEM_EXPIRATION,
				 htobe64(e->expires_at > now ? e->expires_at - now : 0));
	}
	if (e->udata)
		mnl_attr_put(nlh, NFTA_SET_ELEM_USERDATA, e->udlen, e->udata);
	mnl_attr_nest_end(nlh, n);
}

void ctl_elem_fill_one(struct nlmsghdr *nlh, const struct ctl_set *s, const struct ctl_elem *e)
{
	struct nlattr *n;

	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, s->table->name);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
	n = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	elem_put(nlh, s, e, nftdp_now_ms());
	mnl_attr_nest_end(nlh, n);
}

static bool elem_expired(const struct ctl_elem *e, uint64_t now)
{
	return e->expires_at && e->expires_at <= now;
}

#define ELEMS_PER_MSG_BYTES 8192

/* nf_tables_dump_set(): the elements in as many messages as needed. */
static void dump_elems(struct ctl_msg *m, struct ctl_out *o, struct ctl_set *s)
{
	uint64_t now = nftdp_now_ms();
	struct ctl_elem *e = ctl_list_entry(s->elems.next, struct ctl_elem, list);

	while (&e->list != &s->elems) {
		struct nlmsghdr *nlh;
		struct nlattr *n;
		unsigned int count = 0;

		nlh = ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM,
				  s->table->family, NLM_F_MULTI, m->nlh->nlmsg_seq,
				  ctl_session_portid(m->s), m->st->genid & 0xffff);
		if (nlh == NULL)
			return;
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, s->table->name);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
		n = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
		for (; &e->list != &s->elems && nlh->nlmsg_len < ELEMS_PER_MSG_BYTES;
		     e = ctl_list_entry(e->list.next, struct ctl_elem, list)) {
			if (e->dead || elem_expired(e, now))
				continue;
			elem_put(nlh, s, e, now);
			count++;
		}
		mnl_attr_nest_end(nlh, n);
		if (count)
			ctl_out_end(o, nlh);
		else
			ctl_out_cancel(o, nlh);
	}
}

/* Elements the packet path added (dynset) to a dynamic set live only in the
 * dataplane's set: list them after the control plane's own, as the kernel
 * lists every element its set holds. */
struct dp_dump {
	struct ctl_msg *m;
	struct ctl_out *o;
	struct ctl_set *s;
	struct nlmsghdr *nlh;
	struct nlattr *list;
	unsigned int count;
	uint64_t mono_ms;
};

static void dp_dump_close(struct dp_dump *d)
{
	if (!d->nlh)
		return;
	mnl_attr_nest_end(d->nlh, d->list);
	if (d->count)
		ctl_out_end(d->o, d->nlh);
	else
		ctl_out_cancel(d->o, d->nlh);
	d->nlh = NULL;
	d->count = 0;
}

/* nf_tables_fill_setelem() for an element of the dataplane's set only */
static void dp_elem_put(struct nlmsghdr *nlh, const struct ctl_set *s, const void *key,
			const void *data, uint64_t expires_ms, uint64_t timeout_ms, uint64_t now)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);

	put_data_nest(nlh, NFTA_SET_ELEM_KEY, key, s->klen);
	if ((s->flags & NFT_SET_MAP) && s->dtype != NFT_DATA_VERDICT && data)
		put_data_nest(nlh, NFTA_SET_ELEM_DATA, data, s->dlen);
	ctl_build_elem_exprs_put(s, data, nlh);
	/* the timeout when it is not the set's */
	if (expires_ms && timeout_ms && timeout_ms != s->timeout)
		mnl_attr_put_u64(nlh, NFTA_SET_ELEM_TIMEOUT, htobe64(timeout_ms));
	if (expires_ms)
		mnl_attr_put_u64(nlh, NFTA_SET_ELEM_EXPIRATION,
				 htobe64(expires_ms > now ? expires_ms - now : 0));
	mnl_attr_nest_end(nlh, n);
}

static int dp_dump_one(const void *key, const void *key_end, const void *data, uint64_t expires_ms,
		       uint64_t timeout_ms, uint32_t flags, void *arg)
{
	struct dp_dump *d = arg;
	struct ctl_set *s = d->s;

	(void)key_end;
	(void)flags;
	if (elem_find(s, key, s->klen, 0, false))
		return 0; /* the control plane's own: listed already */
	if (d->nlh && d->nlh->nlmsg_len >= ELEMS_PER_MSG_BYTES)
		dp_dump_close(d);
	if (!d->nlh) {
		d->nlh = ctl_out_msg(d->o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM,
				     s->table->family, NLM_F_MULTI, d->m->nlh->nlmsg_seq,
				     ctl_session_portid(d->m->s), d->m->st->genid & 0xffff);
		if (!d->nlh)
			return -ENOMEM;
		mnl_attr_put_strz(d->nlh, NFTA_SET_ELEM_LIST_TABLE, s->table->name);
		mnl_attr_put_strz(d->nlh, NFTA_SET_ELEM_LIST_SET, s->name);
		d->list = mnl_attr_nest_start(d->nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	}
	dp_elem_put(d->nlh, s, key, data, expires_ms, timeout_ms, d->mono_ms);
	d->count++;
	return 0;
}

static void dump_dp_elems(struct ctl_msg *m, struct ctl_out *o, struct ctl_set *s)
{
	struct dp_dump d = {.m = m, .o = o, .s = s};

	if (!s->dp || !(s->flags & NFT_SET_EVAL))
		return;
	d.mono_ms = nftdp_now_ms(); /* the sets' clock */
	nftdp_set_walk(s->dp, dp_dump_one, &d);
	dp_dump_close(&d);
}

/* nft_rbtree_get(): in a single-field interval set, the start element of
 * the interval that holds key (keys compare as bytes, as the rbtree's
 * memcmp). An interval runs up to the next end element, or to the end of
 * the key space when none follows. */
static struct ctl_elem *interval_find(const struct ctl_set *s, const uint8_t *key,
				      unsigned int klen, uint64_t now)
{
	struct ctl_elem *e, *start = NULL;

	ctl_list_for_each_entry(e, &s->elems, list) {
		if (e->dead || elem_expired(e, now) || (e->flags & ELEM_ID_FLAGS) ||
		    e->klen != klen || memcmp(e->key, key, klen) > 0)
			continue;
		if (start == NULL || memcmp(e->key, start->key, klen) > 0)
			start = e;
	}
	if (start == NULL)
		return NULL;
	ctl_list_for_each_entry(e, &s->elems, list) {
		if (e->dead || !(e->flags & NFT_SET_ELEM_INTERVAL_END) || e->klen != klen)
			continue;
		/* an end in (start, key] closes the interval before key */
		if (memcmp(e->key, start->key, klen) > 0 && memcmp(e->key, key, klen) <= 0)
			return NULL;
	}
	return start;
}

/* nft_rbtree_get() asked for an end (NFT_SET_ELEM_INTERVAL_END: the second
 * half of `get element ... { a-b }`, key b + 1): the nearest element at or
 * above key, past a start element at key itself, if it is an end element
 * (the interval that holds key - 1 ends there); else none. */
static struct ctl_elem *interval_end_find(const struct ctl_set *s, const uint8_t *key,
					  unsigned int klen, uint64_t now)
{
	struct ctl_elem *e, *best = NULL;

	ctl_list_for_each_entry(e, &s->elems, list) {
		int d;

		if (e->dead || elem_expired(e, now) || (e->flags & NFT_SET_ELEM_CATCHALL) ||
		    e->klen != klen)
			continue;
		d = memcmp(e->key, key, klen);
		if (d < 0 || (d == 0 && !(e->flags & NFT_SET_ELEM_INTERVAL_END)))
			continue;
		if (best == NULL || memcmp(e->key, best->key, klen) < 0)
			best = e;
	}
	return best && (best->flags & NFT_SET_ELEM_INTERVAL_END) ? best : NULL;
}

/* The field lengths of a set of concatenated ranges (the kernel's pipapo:
 * an interval set of two fields or more), or 0. */
static unsigned int concat_range_fields(const struct ctl_set *s, const uint8_t **fields)
{
	uint32_t n = 0;

	if (!(s->flags & NFT_SET_INTERVAL) || !nftnl_set_is_set(s->nl, NFTNL_SET_DESC_CONCAT))
		return 0;
	*fields = nftnl_set_get_data(s->nl, NFTNL_SET_DESC_CONCAT, &n);
	return *fields && n >= 2 ? n : 0;
}

/* nft_pipapo_get(): the element whose every field's range holds the key's
 * field (the key matched as a lookup does; the kernel ignores the key's
 * end), an element without an end being the range [key, key]. Fields
 * compare as bytes, each at its 32-bit aligned place in the key. */
static struct ctl_elem *concat_range_find(const struct ctl_set *s, const uint8_t *fields,
					  unsigned int nfields, const uint8_t *key,
					  unsigned int klen, uint64_t now)
{
	struct ctl_elem *e;

	ctl_list_for_each_entry(e, &s->elems, list) {
		const uint8_t *end = e->kelen ? e->key_end : e->key;
		unsigned int off = 0, i;

		if (e->dead || elem_expired(e, now) || (e->flags & ELEM_ID_FLAGS) ||
		    e->klen != klen)
			continue;
		for (i = 0; i < nfields; i++) {
			unsigned int fl = fields[i];

			if (off + fl > klen || memcmp(key + off, e->key + off, fl) < 0 ||
			    memcmp(key + off, end + off, fl) > 0)
				break;
			off += (fl + 3) & ~3u;
		}
		if (i == nfields)
			return e;
	}
	return NULL;
}

int ctl_getsetelem(struct ctl_msg *m, struct ctl_out *o)
{
	struct ctl_table *t;
	struct ctl_set *s;
	const struct nlattr *attr;
	int err;

	err = set_for_msg(m, &t, &s);
	if (err < 0)
		return err;
	if (m->nlh->nlmsg_flags & NLM_F_DUMP) {
		dump_elems(m, o, s);
		dump_dp_elems(m, o, s);
		ctl_out_done(o, m->nlh->nlmsg_seq, ctl_session_portid(m->s));
		return -EINTR;
	}
	/* get element: each requested element, found by its key */
	if (m->tb[NFTA_SET_ELEM_LIST_ELEMENTS] == NULL)
		return -EINVAL;
	mnl_attr_for_each_nested(attr, m->tb[NFTA_SET_ELEM_LIST_ELEMENTS])
	{
		struct ctl_elem key = {0}, *e;
		struct nlmsghdr *nlh;
		const uint8_t *fields = NULL;
		unsigned int nfields = concat_range_fields(s, &fields);

		err = elem_parse(s, attr, &key, true);
		if (err < 0) {
			m->bad_attr = attr;
			return err;
		}
		if ((s->flags & NFT_SET_INTERVAL) && !(s->flags & NFT_SET_CONCAT) && !key.kelen &&
		    (key.flags & NFT_SET_ELEM_INTERVAL_END))
			e = interval_end_find(s, key.key, key.klen, nftdp_now_ms());
		else if ((s->flags & NFT_SET_INTERVAL) && !(s->flags & NFT_SET_CONCAT) &&
			 !key.kelen)
			e = interval_find(s, key.key, key.klen, nftdp_now_ms());
		else if (nfields && !(key.flags & NFT_SET_ELEM_CATCHALL))
			e = concat_range_find(s, fields, nfields, key.key, key.klen,
					      nftdp_now_ms());
		else
			e = elem_find(s, key.key, key.klen, key.flags, false);
		if (e == NULL && !key.kelen && s->dp && (s->flags & NFT_SET_EVAL) &&
		    !(s->flags & NFT_SET_INTERVAL)) {
			/* an element the packet path added (dynset) */
			uint64_t expires, timeout;
			const void *data;

			if (nftdp_set_get(s->dp, key.key, &data, &expires, &timeout)) {
				struct nlattr *n;

				nlh =
				    ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM,
						s->table->family, 0, m->nlh->nlmsg_seq,
						ctl_session_portid(m->s), m->st->genid & 0xffff);
				if (nlh == NULL)
					return -ENOMEM;
				mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, s->table->name);
				mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
				n = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
				dp_elem_put(nlh, s, key.key, data, expires, timeout,
					    nftdp_now_ms());
				mnl_attr_nest_end(nlh, n);
				ctl_out_end(o, nlh);
				continue;
			}
		}
		if (e == NULL || elem_expired(e, nftdp_now_ms())) {
			m->bad_attr = attr;
			return -ENOENT;
		}
		nlh = ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM,
				  s->table->family, 0, m->nlh->nlmsg_seq, ctl_session_portid(m->s),
				  m->st->genid & 0xffff);
		if (nlh == NULL)
			return -ENOMEM;
		ctl_elem_fill_one(nlh, s, e);
		ctl_out_end(o, nlh);
	}
	return 0;
}
