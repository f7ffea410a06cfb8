/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sets and maps: mirrors nf_tables_newset, nf_tables_delset,
 * nf_tables_getset and nf_tables_set_alloc_name. The elements live in
 * obj_elem.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"

#define SET_FLAGS_KNOWN                                                                            \
	(NFT_SET_ANONYMOUS | NFT_SET_CONSTANT | NFT_SET_INTERVAL | NFT_SET_TIMEOUT | NFT_SET_MAP | \
	 NFT_SET_EVAL | NFT_SET_OBJECT | NFT_SET_CONCAT | NFT_SET_EXPR)

static struct ctl_set *set_lookup_handle(struct ctl_table *t, uint64_t handle)
{
	struct ctl_set *s;

	ctl_list_for_each_entry(s, &t->sets, list)
		if (!s->dead && s->handle == handle)
			return s;
	return NULL;
}

void ctl_set_fill(struct nlmsghdr *nlh, const struct ctl_set *s)
{
	nftnl_set_nlmsg_build_payload(nlh, s->nl);
}

/* nf_tables_set_alloc_name(): "__set%d" takes the lowest free number,
 * found in a per-table bitmap so that naming the 10 000th anonymous set of
 * a batch costs no more than the first. */
static int set_alloc_name(struct ctl_table *t, const char *tmpl, char *out, size_t size,
			  int32_t *num)
{
	const char *p = strchr(tmpl, '%');
	uint32_t w;

	*num = -1;
	if (p == NULL) {
		snprintf(out, size, "%s", tmpl);
		return 0;
	}
	if (p[1] != 'd' || strchr(p + 2, '%'))
		return -EINVAL;
	for (w = 0; w < t->anon_words && t->anon_used[w] == ~0ull; w++)
		;
	if (w == t->anon_words) {
		uint32_t nw = t->anon_words ? t->anon_words * 2 : 4;
		uint64_t *nb = realloc(t->anon_used, nw * sizeof(*nb));

		if (nb == NULL)
			return -ENOMEM;
		memset(nb + t->anon_words, 0, (nw - t->anon_words) * sizeof(*nb));
		t->anon_used = nb;
		t->anon_words = nw;
	}
	*num = (int32_t)(w * 64 + __builtin_ctzll(~t->anon_used[w]));
	snprintf(out, size, tmpl, *num);
	return 0;
}

static int parse_desc(const struct nlattr *desc, uint32_t *size)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, desc)
	{
		switch (mnl_attr_get_type(a)) {
		case NFTA_SET_DESC_SIZE:
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				return -EINVAL;
			*size = ntohl(mnl_attr_get_u32(a));
			break;
		case NFTA_SET_DESC_CONCAT: {
			const struct nlattr *f;
			unsigned int n = 0;

			mnl_attr_for_each_nested(f, a)
			{
				if (++n > 16) /* NFT_REG32_COUNT */
					return -E2BIG;
			}
			break;
		}
		default:
			return -EINVAL;
		}
	}
	return 0;
}

/* The default expressions of the set's elements (NFTA_SET_EXPR[ESSIONS]),
 * kept as the element attribute that carries them in dumps. */
static int save_elem_expr(struct ctl_set *s, const struct nlattr *one, const struct nlattr *list)
{
	const struct nlattr *a = one ? one : list;

	if (a == NULL)
		return 0;
	s->elem_expr_type = one ? NFTA_SET_ELEM_EXPR : NFTA_SET_ELEM_EXPRESSIONS;
	s->elem_expr = ctl_expr_payload_canon(s->elem_expr_type, mnl_attr_get_payload(a),
					      mnl_attr_get_payload_len(a), &s->elem_exprlen);
	if (s->elem_expr == NULL)
		return -ENOMEM;
	return 0;
}

int ctl_newset(struct ctl_msg *m)
{
	const struct nlattr **tb = m->tb;
	uint32_t flags = 0, klen, dtype = 0, dlen = 0, objtype = 0, size = 0;
	char name[CTL_NAME_MAXLEN];
	struct ctl_table *t;
	struct ctl_set *s;
	int err;

	t = ctl_table_lookup(m, tb[NFTA_SET_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (!tb[NFTA_SET_NAME] || !tb[NFTA_SET_KEY_LEN] || !tb[NFTA_SET_ID])
		return -EINVAL;
	klen = ntohl(mnl_attr_get_u32(tb[NFTA_SET_KEY_LEN]));
	if (klen == 0 || klen > CTL_DATA_MAXLEN)
		return -EINVAL;
	if (tb[NFTA_SET_FLAGS]) {
		flags = ntohl(mnl_attr_get_u32(tb[NFTA_SET_FLAGS]));
		if (flags & ~SET_FLAGS_KNOWN)
			return -EOPNOTSUPP;
		if ((flags & (NFT_SET_MAP | NFT_SET_OBJECT)) == (NFT_SET_MAP | NFT_SET_OBJECT))
			return -EOPNOTSUPP;
		if ((flags & (NFT_SET_EVAL | NFT_SET_OBJECT)) == (NFT_SET_EVAL | NFT_SET_OBJECT))
			return -EOPNOTSUPP;
		if ((flags & (NFT_SET_ANONYMOUS | NFT_SET_TIMEOUT | NFT_SET_EVAL)) ==
		    (NFT_SET_ANONYMOUS | NFT_SET_TIMEOUT))
			return -EOPNOTSUPP;
	}
	if (tb[NFTA_SET_DATA_TYPE]) {
		if (!(flags & NFT_SET_MAP))
			return -EINVAL;
		dtype = ntohl(mnl_attr_get_u32(tb[NFTA_SET_DATA_TYPE]));
		if (dtype != NFT_DATA_VERDICT) {
			if (!tb[NFTA_SET_DATA_LEN])
				return -EINVAL;
			dlen = ntohl(mnl_attr_get_u32(tb[NFTA_SET_DATA_LEN]));
			if (dlen == 0 || dlen > CTL_DATA_MAXLEN)
				return -EINVAL;
		} else {
			dlen = 16; /* sizeof(struct nft_verdict) */
		}
	} else if (flags & NFT_SET_MAP) {
		return -EINVAL;
	}
	if (tb[NFTA_SET_OBJ_TYPE]) {
		if (!(flags & NFT_SET_OBJECT))
			return -EINVAL;
		objtype = ntohl(mnl_attr_get_u32(tb[NFTA_SET_OBJ_TYPE]));
		if (objtype == NFT_OBJECT_UNSPEC || objtype > NFT_OBJECT_MAX)
			return -EOPNOTSUPP;
	} else if (flags & NFT_SET_OBJECT) {
		return -EINVAL;
	}
	if ((tb[NFTA_SET_TIMEOUT] || tb[NFTA_SET_GC_INTERVAL]) && !(flags & NFT_SET_TIMEOUT))
		return -EINVAL;
	if (tb[NFTA_SET_POLICY]) {
		uint32_t pol = ntohl(mnl_attr_get_u32(tb[NFTA_SET_POLICY]));

		if (pol != NFT_SET_POL_PERFORMANCE && pol != NFT_SET_POL_MEMORY)
			return -EOPNOTSUPP;
	}
	if (tb[NFTA_SET_DESC]) {
		err = parse_desc(tb[NFTA_SET_DESC], &size);
		if (err < 0)
			return err;
	}

	s = strchr(mnl_attr_get_str(tb[NFTA_SET_NAME]), '%')
		? NULL
		: ctl_set_lookup(t, mnl_attr_get_str(tb[NFTA_SET_NAME]));
	if (s) {
		if (m->nlh->nlmsg_flags & NLM_F_EXCL) {
			m->bad_attr = tb[NFTA_SET_NAME];
			return -EEXIST;
		}
		if (m->nlh->nlmsg_flags & NLM_F_REPLACE)
			return -EOPNOTSUPP;
		if (s->flags != flags || s->klen != klen || s->dlen != dlen || s->dtype != dtype ||
		    s->objtype != objtype) {
			m->bad_attr = tb[NFTA_SET_NAME];
			return -EEXIST;
		}
		return 0;
	}
	if (!(m->nlh->nlmsg_flags & NLM_F_CREATE))
		return -ENOENT;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	err = set_alloc_name(t, mnl_attr_get_str(tb[NFTA_SET_NAME]), name, sizeof(name),
			     &s->anon_num);
	if (err < 0) {
		free(s);
		return err;
	}
	ctl_list_init(&s->elems);
	s->nl = nftnl_set_alloc();
	if (s->nl)
		err = ctl_parse_set(m->nlh, s->nl);
	if (s->nl == NULL || err < 0) {
		err = -EINVAL;
		goto err_set;
	}
	err = save_elem_expr(s, tb[NFTA_SET_EXPR], tb[NFTA_SET_EXPRESSIONS]);
	if (err < 0)
		goto err_set;
	nftnl_set_unset(s->nl, NFTNL_SET_ID);
	nftnl_set_set_str(s->nl, NFTNL_SET_NAME, name);
	/* nf_tables_fill_set dumps the length it keeps: a verdict map's is
	 * sizeof(struct nft_verdict) whatever nft sent (nft 1.0.6 sends 0 and
	 * reads the dumped one back to size the data of concatenated ranges) */
	if (flags & NFT_SET_MAP)
		nftnl_set_set_u32(s->nl, NFTNL_SET_DATA_LEN, dlen);
	if (tb[NFTA_SET_POLICY] &&
	    ntohl(mnl_attr_get_u32(tb[NFTA_SET_POLICY])) == NFT_SET_POL_PERFORMANCE)
		nftnl_set_unset(s->nl, NFTNL_SET_POLICY);
	s->name = nftnl_set_get_str(s->nl, NFTNL_SET_NAME);
	s->table = t;
	s->set_id = ntohl(mnl_attr_get_u32(tb[NFTA_SET_ID]));
	s->flags = flags;
	s->klen = klen;
	s->dlen = dlen;
	s->dtype = dtype;
	s->objtype = objtype;
	s->size = size;
	if (tb[NFTA_SET_TIMEOUT])
		s->timeout = be64toh(mnl_attr_get_u64(tb[NFTA_SET_TIMEOUT]));
	s->anonymous = (flags & NFT_SET_ANONYMOUS) != 0;
	s->handle = ctl_table_alloc_handle(t);
	nftnl_set_set_u64(s->nl, NFTNL_SET_HANDLE, s->handle);
	nftnl_set_set_u32(s->nl, NFTNL_SET_FAMILY, t->family);
	if (ctl_set_link(t, s) < 0) {
		err = -ENOMEM;
		goto err_set;
	}
	if (ctl_trans_add(m, CTL_TR_NEWSET, t, s) == NULL) {
		ctl_set_unlink(s);
		err = -ENOMEM;
		goto err_set;
	}
	if (s->anon_num >= 0)
		t->anon_used[s->anon_num / 64] |= 1ull << (s->anon_num % 64);
	t->use++;
	return 0;

err_set:
	if (s->nl)
		nftnl_set_free(s->nl);
	free(s->elem_expr);
	free(s);
	return err;
}

int ctl_delset(struct ctl_msg *m)
{
	const struct nlattr *attr;
	struct ctl_table *t;
	struct ctl_set *s;
	int err;

	t = ctl_table_lookup(m, m->tb[NFTA_SET_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_SET_HANDLE]) {
		attr = m->tb[NFTA_SET_HANDLE];
		s = set_lookup_handle(t, be64toh(mnl_attr_get_u64(attr)));
	} else {
		attr = m->tb[NFTA_SET_NAME];
		if (attr == NULL)
			return -EINVAL;
		s = ctl_set_lookup(t, mnl_attr_get_str(attr));
	}
	if (s == NULL) {
		m->bad_attr = attr;
		return -ENOENT;
	}
	if (s->use > 0 || ((m->nlh->nlmsg_flags & NLM_F_NONREC) && s->nelems > 0)) {
		m->bad_attr = attr;
		return -EBUSY;
	}
	if (ctl_trans_add(m, CTL_TR_DELSET, t, s) == NULL)
		return -ENOMEM;
	s->dead = true;
	t->use--;
	return 0;
}

static void set_msg(struct ctl_out *o, struct ctl_msg *m, const struct ctl_set *s, uint16_t flags)
{
	struct nlmsghdr *nlh;

	nlh = ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSET, s->table->family, flags,
			  m->nlh->nlmsg_seq, ctl_session_portid(m->s), m->st->genid & 0xffff);
	if (nlh == NULL)
		return;
	ctl_set_fill(nlh, s);
	ctl_out_end(o, nlh);
}

int ctl_getset(struct ctl_msg *m, struct ctl_out *o)
{
	struct ctl_table *t;
	struct ctl_set *s;
	int err;

	if (m->nlh->nlmsg_flags & NLM_F_DUMP) {
		const struct nlattr *tname = m->tb[NFTA_SET_TABLE];

		ctl_list_for_each_entry(t, &m->st->tables, list) {
			if (!ctl_dump_match(m, t, tname))
				continue;
			ctl_list_for_each_entry(s, &t->sets, list)
				set_msg(o, m, s, NLM_F_MULTI);
		}
		ctl_out_done(o, m->nlh->nlmsg_seq, ctl_session_portid(m->s));
		return -EINTR;
	}
	t = ctl_table_lookup(m, m->tb[NFTA_SET_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_SET_NAME] == NULL)
		return -EINVAL;
	s = ctl_set_lookup(t, mnl_attr_get_str(m->tb[NFTA_SET_NAME]));
	if (s == NULL) {
		m->bad_attr = m->tb[NFTA_SET_NAME];
		return -ENOENT;
	}
	set_msg(o, m, s, 0);
	return 0;
}
