/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tables: mirrors nf_tables_newtable, nf_tables_updtable, nf_tables_deltable,
 * nft_flush_table, nft_flush and nf_tables_gettable / nf_tables_dump_tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"
#include <linux/netfilter.h> /* NFPROTO_*, after netinet/in.h */

static struct ctl_table *table_lookup_handle(struct ctl_msg *m, uint64_t handle, int *err)
{
	struct ctl_table *t;

	ctl_list_for_each_entry(t, &m->st->tables, list) {
		if (t->dead || t->handle != handle || t->family != m->family)
			continue;
		if ((t->flags & NFT_TABLE_F_OWNER) && t->nlpid != ctl_session_portid(m->s)) {
			*err = -EPERM;
			return NULL;
		}
		return t;
	}
	*err = -ENOENT;
	return NULL;
}

void ctl_table_fill(struct nlmsghdr *nlh, const struct ctl_table *t)
{
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, t->name);
	mnl_attr_put_u32(nlh, NFTA_TABLE_FLAGS, htonl(t->flags));
	mnl_attr_put_u32(nlh, NFTA_TABLE_USE, htonl(t->use));
	mnl_attr_put_u64(nlh, NFTA_TABLE_HANDLE, htobe64(t->handle));
	if (t->udata)
		mnl_attr_put(nlh, NFTA_TABLE_USERDATA, t->udlen, t->udata);
	if (t->flags & NFT_TABLE_F_OWNER)
		mnl_attr_put_u32(nlh, NFTA_TABLE_OWNER, htonl(t->nlpid));
}

static int table_update(struct ctl_msg *m, struct ctl_table *t)
{
	struct ctl_trans *tr;
	uint32_t flags;

	if (!m->tb[NFTA_TABLE_FLAGS])
		return 0;
	flags = ntohl(mnl_attr_get_u32(m->tb[NFTA_TABLE_FLAGS]));
	if (flags & ~NFT_TABLE_F_MASK)
		return -EOPNOTSUPP;
	if (flags == t->flags)
		return 0;
	if (((t->flags & NFT_TABLE_F_OWNER) && !(flags & NFT_TABLE_F_OWNER)) ||
	    ((flags & NFT_TABLE_F_OWNER) && !(t->flags & NFT_TABLE_F_OWNER)))
		return -EOPNOTSUPP;
	/* one pending update per table per batch, as the kernel's
	 * table->flags & __NFT_TABLE_F_UPDATE check */
	ctl_list_for_each_entry(tr, &m->st->trans, list)
		if (tr->op == CTL_TR_UPDTABLE && tr->table == t)
			return -EINVAL;
	tr = ctl_trans_add(m, CTL_TR_UPDTABLE, t, NULL);
	if (tr == NULL)
		return -ENOMEM;
	tr->old_flags = t->flags;
	if ((t->flags & NFT_TABLE_F_DORMANT) && !(flags & NFT_TABLE_F_DORMANT)) {
		/* waking up registers the hooks anew, in chain order */
		struct ctl_chain *c;

		ctl_list_for_each_entry(c, &t->chains, list)
			if (c->base)
				c->hook_seq = ++m->st->hook_seq;
	}
	t->flags = flags;
	return 0;
}

int ctl_newtable(struct ctl_msg *m)
{
	const struct nlattr *name = m->tb[NFTA_TABLE_NAME];
	struct ctl_table *t;
	uint32_t flags = 0;
	int err;

	t = ctl_table_lookup(m, name, m->family, &err);
	if (t == NULL && err != -ENOENT) {
		m->bad_attr = name;
		return err;
	}
	if (t) {
		if (m->nlh->nlmsg_flags & NLM_F_EXCL) {
			m->bad_attr = name;
			return -EEXIST;
		}
		if (m->nlh->nlmsg_flags & NLM_F_REPLACE)
			return -EOPNOTSUPP;
		return table_update(m, t);
	}
	/* nft_supported_family: inet, ip, arp, netdev, bridge, ip6 */
	switch (m->family) {
	case NFPROTO_INET:
	case NFPROTO_IPV4:
	case NFPROTO_ARP:
	case NFPROTO_NETDEV:
	case NFPROTO_BRIDGE:
	case NFPROTO_IPV6:
		break;
	default:
		m->bad_attr = NULL; /* no extack */
		return -EOPNOTSUPP;
	}
	if (m->tb[NFTA_TABLE_FLAGS]) {
		flags = ntohl(mnl_attr_get_u32(m->tb[NFTA_TABLE_FLAGS]));
		if (flags & ~NFT_TABLE_F_MASK)
			return -EOPNOTSUPP;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->name = strndup(mnl_attr_get_payload(name), mnl_attr_get_payload_len(name));
	if (t->name == NULL)
		goto err_name;
	if (m->tb[NFTA_TABLE_USERDATA]) {
		t->udlen = mnl_attr_get_payload_len(m->tb[NFTA_TABLE_USERDATA]);
		t->udata = malloc(t->udlen ? t->udlen : 1);
		if (t->udata == NULL)
			goto err_udata;
		memcpy(t->udata, mnl_attr_get_payload(m->tb[NFTA_TABLE_USERDATA]), t->udlen);
	}
	t->family = m->family;
	t->flags = flags;
	if (flags & NFT_TABLE_F_OWNER)
		t->nlpid = ctl_session_portid(m->s);
	t->handle = ++m->st->table_handle;
	ctl_list_init(&t->chains);
	ctl_list_init(&t->sets);
	ctl_list_init(&t->objs);
	ctl_list_init(&t->flowtables);
	if (ctl_trans_add(m, CTL_TR_NEWTABLE, t, NULL) == NULL)
		goto err_trans;
	ctl_list_add_tail(&t->list, &m->st->tables);
	return 0;

err_trans:
	free(t->udata);
err_udata:
	free(t->name);
err_name:
	free(t);
	return -ENOMEM;
}

/* nft_flush_table(): rules, sets, flowtables, objects, chains, then the
 * table itself, each as its own transaction step (and notification). */
int ctl_table_flush(struct ctl_msg *m, struct ctl_table *t)
{
	struct ctl_chain *c;
	struct ctl_set *s;
	struct ctl_obj *o;
	struct ctl_flowtable *f;
	int err;

	err = ctl_table_flush_rules(m, t);
	if (err < 0)
		return err;
	ctl_list_for_each_entry(s, &t->sets, list) {
		if (s->dead || s->anonymous)
			continue;
		if (ctl_trans_add(m, CTL_TR_DELSET, t, s) == NULL)
			return -ENOMEM;
		s->dead = true;
		t->use--;
	}
	ctl_list_for_each_entry(f, &t->flowtables, list) {
		if (f->dead)
			continue;
		if (ctl_trans_add(m, CTL_TR_DELFLOWTABLE, t, f) == NULL)
			return -ENOMEM;
		f->dead = true;
		t->use--;
	}
	ctl_list_for_each_entry(o, &t->objs, list) {
		if (o->dead)
			continue;
		if (ctl_trans_add(m, CTL_TR_DELOBJ, t, o) == NULL)
			return -ENOMEM;
		o->dead = true;
		t->use--;
	}
	ctl_list_for_each_entry(c, &t->chains, list) {
		if (c->dead)
			continue;
		if (ctl_trans_add(m, CTL_TR_DELCHAIN, t, c) == NULL)
			return -ENOMEM;
		c->dead = true;
		t->use--;
	}
	if (ctl_trans_add(m, CTL_TR_DELTABLE, t, NULL) == NULL)
		return -ENOMEM;
	t->dead = true;
	return 0;
}

int ctl_deltable(struct ctl_msg *m)
{
	const struct nlattr *attr;
	struct ctl_table *t, *tn;
	int err;

	if (!m->tb[NFTA_TABLE_NAME] && !m->tb[NFTA_TABLE_HANDLE]) {
		/* nft_flush(): every table of the family, all with AF_UNSPEC */
		ctl_list_for_each_entry_safe(t, tn, &m->st->tables, list) {
			if (t->dead)
				continue;
			if (m->family != AF_UNSPEC && t->family != m->family)
				continue;
			if ((t->flags & NFT_TABLE_F_OWNER) && t->nlpid != ctl_session_portid(m->s))
				continue;
			err = ctl_table_flush(m, t);
			if (err < 0)
				return err;
		}
		return 0;
	}
	if (m->tb[NFTA_TABLE_HANDLE]) {
		attr = m->tb[NFTA_TABLE_HANDLE];
		t = table_lookup_handle(m, be64toh(mnl_attr_get_u64(attr)), &err);
	} else {
		attr = m->tb[NFTA_TABLE_NAME];
		t = ctl_table_lookup(m, attr, m->family, &err);
	}
	if (t == NULL) {
		m->bad_attr = attr;
		return err;
	}
	if ((m->nlh->nlmsg_flags & NLM_F_NONREC) && t->use > 0)
		return -EBUSY;
	return ctl_table_flush(m, t);
}

static int table_msg(struct ctl_out *o, const struct ctl_table *t, struct ctl_msg *m,
		     uint16_t flags)
{
	struct nlmsghdr *nlh;

	nlh = ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE, t->family, flags,
			  m->nlh->nlmsg_seq, ctl_session_portid(m->s), m->st->genid & 0xffff);
	if (nlh == NULL)
		return -ENOMEM;
	ctl_table_fill(nlh, t);
	ctl_out_end(o, nlh);
	return 0;
}

int ctl_gettable(struct ctl_msg *m, struct ctl_out *o)
{
	struct ctl_table *t;
	int err;

	if (m->nlh->nlmsg_flags & NLM_F_DUMP) {
		ctl_list_for_each_entry(t, &m->st->tables, list) {
			if (m->family != AF_UNSPEC && t->family != m->family)
				continue;
			table_msg(o, t, m, NLM_F_MULTI);
		}
		ctl_out_done(o, m->nlh->nlmsg_seq, ctl_session_portid(m->s));
		return -EINTR;
	}
	t = ctl_table_lookup(m, m->tb[NFTA_TABLE_NAME], m->family, &err);
	if (t == NULL)
		return err;
	return table_msg(o, t, m, 0);
}
