/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flowtables: mirrors nf_tables_newflowtable, nf_tables_delflowtable and
 * nf_tables_getflowtable. Devices must be ports the dataplane has, as the
 * kernel wants existing net devices (ENOENT otherwise). Off by default
 * (ENOENT for every flowtable), as on the reference kernel, which has no
 * flowtable types built in; the daemon's --flowtables turns them on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"

#include <linux/netfilter.h>

#define FLOWTABLE_FLAGS (NFT_FLOWTABLE_HW_OFFLOAD | NFT_FLOWTABLE_COUNTER)

static struct ctl_flowtable *flowtable_lookup_handle(struct ctl_table *t, uint64_t handle)
{
	struct ctl_flowtable *f;

	ctl_list_for_each_entry(f, &t->flowtables, list)
		if (!f->dead && f->handle == handle)
			return f;
	return NULL;
}

void ctl_flowtable_fill(struct nlmsghdr *nlh, const struct ctl_flowtable *f)
{
	nftnl_flowtable_set_u32(f->nl, NFTNL_FLOWTABLE_USE, f->use);
	nftnl_flowtable_nlmsg_build_payload(nlh, f->nl);
}

/* nft_flowtable_parse_hook(): ingress only, a priority, existing devices. */
static int parse_hook(struct ctl_msg *m, bool need)
{
	const struct nlattr *a, *num = NULL, *prio = NULL, *devs = NULL;

	if (m->tb[NFTA_FLOWTABLE_HOOK] == NULL)
		return need ? -EINVAL : 0;
	mnl_attr_for_each_nested(a, m->tb[NFTA_FLOWTABLE_HOOK])
	{
		switch (mnl_attr_get_type(a)) {
		case NFTA_FLOWTABLE_HOOK_NUM:
			num = a;
			break;
		case NFTA_FLOWTABLE_HOOK_PRIORITY:
			prio = a;
			break;
		case NFTA_FLOWTABLE_HOOK_DEVS:
			devs = a;
			break;
		default:
			return -EINVAL;
		}
	}
	if (need && (num == NULL || prio == NULL))
		return -EINVAL;
	if (num && ntohl(mnl_attr_get_u32(num)) != NF_NETDEV_INGRESS)
		return -EOPNOTSUPP;
	if (devs) {
		mnl_attr_for_each_nested(a, devs)
		{
			if (mnl_attr_get_type(a) != NFTA_DEVICE_NAME ||
			    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
				return -EINVAL;
			if (!ctl_iface_exists(m->ctl, mnl_attr_get_str(a)))
				return -ENOENT;
		}
	}
	return 0;
}

int ctl_newflowtable(struct ctl_msg *m)
{
	struct ctl_table *t;
	struct ctl_flowtable *f;
	int err;

	if (!m->tb[NFTA_FLOWTABLE_TABLE] || !m->tb[NFTA_FLOWTABLE_NAME])
		return -EINVAL;
	/* nft_flowtable_type_get(): the reference kernel has no flowtable
	 * type for any family; nftdp matches it unless told otherwise */
	if (!m->ctl->cfg.flowtables)
		return -ENOENT;
	t = ctl_table_lookup(m, m->tb[NFTA_FLOWTABLE_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_FLOWTABLE_FLAGS]) {
		uint32_t flags = ntohl(mnl_attr_get_u32(m->tb[NFTA_FLOWTABLE_FLAGS]));

		if (flags & ~FLOWTABLE_FLAGS)
			return -EOPNOTSUPP;
		if (flags & NFT_FLOWTABLE_HW_OFFLOAD)
			return -EOPNOTSUPP;
	}
	f = ctl_flowtable_lookup(t, mnl_attr_get_str(m->tb[NFTA_FLOWTABLE_NAME]));
	if (f) {
		struct nftnl_flowtable *nl;
		struct ctl_trans *tr;

		if (m->nlh->nlmsg_flags & NLM_F_EXCL) {
			m->bad_attr = m->tb[NFTA_FLOWTABLE_NAME];
			return -EEXIST;
		}
		if (m->nlh->nlmsg_flags & NLM_F_REPLACE)
			return -EOPNOTSUPP;
		err = parse_hook(m, false);
		if (err < 0)
			return err;
		if (m->tb[NFTA_FLOWTABLE_HOOK] == NULL)
			return 0;
		nl = nftnl_flowtable_alloc();
		if (nl)
			err = ctl_parse_flowtable(m->nlh, nl);
		if (nl == NULL || err < 0) {
			nftnl_flowtable_free(nl);
			return -EINVAL;
		}
		if (nftnl_flowtable_get_u32(nl, NFTNL_FLOWTABLE_PRIO) !=
		    nftnl_flowtable_get_u32(f->nl, NFTNL_FLOWTABLE_PRIO)) {
			nftnl_flowtable_free(nl);
			return -EOPNOTSUPP;
		}
		tr = ctl_trans_add(m, CTL_TR_UPDFLOWTABLE, t, f);
		if (tr == NULL) {
			nftnl_flowtable_free(nl);
			return -ENOMEM;
		}
		nftnl_flowtable_set_u64(nl, NFTNL_FLOWTABLE_HANDLE, f->handle);
		nftnl_flowtable_set_u32(nl, NFTNL_FLOWTABLE_FAMILY, t->family);
		tr->old_flowtable = f->nl;
		f->nl = nl;
		f->name = nftnl_flowtable_get_str(nl, NFTNL_FLOWTABLE_NAME);
		return 0;
	}
	err = parse_hook(m, true);
	if (err < 0)
		return err;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->nl = nftnl_flowtable_alloc();
	if (f->nl)
		err = ctl_parse_flowtable(m->nlh, f->nl);
	if (f->nl == NULL || err < 0) {
		nftnl_flowtable_free(f->nl);
		free(f);
		return -EINVAL;
	}
	f->table = t;
	f->name = nftnl_flowtable_get_str(f->nl, NFTNL_FLOWTABLE_NAME);
	f->handle = ctl_table_alloc_handle(t);
	nftnl_flowtable_set_u64(f->nl, NFTNL_FLOWTABLE_HANDLE, f->handle);
	nftnl_flowtable_set_u32(f->nl, NFTNL_FLOWTABLE_FAMILY, t->family);
	if (ctl_trans_add(m, CTL_TR_NEWFLOWTABLE, t, f) == NULL) {
		ctl_flowtable_free(f);
		return -ENOMEM;
	}
	ctl_list_add_tail(&f->list, &t->flowtables);
	t->use++;
	return 0;
}

int ctl_delflowtable(struct ctl_msg *m)
{
	const struct nlattr *attr;
	struct ctl_table *t;
	struct ctl_flowtable *f;
	int err;

	t = ctl_table_lookup(m, m->tb[NFTA_FLOWTABLE_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_FLOWTABLE_HANDLE]) {
		attr = m->tb[NFTA_FLOWTABLE_HANDLE];
		f = flowtable_lookup_handle(t, be64toh(mnl_attr_get_u64(attr)));
	} else {
		attr = m->tb[NFTA_FLOWTABLE_NAME];
		if (attr == NULL)
			return -EINVAL;
		f = ctl_flowtable_lookup(t, mnl_attr_get_str(attr));
	}
	if (f == NULL) {
		m->bad_attr = attr;
		return -ENOENT;
	}
	if (f->use > 0) {
		m->bad_attr = attr;
		return -EBUSY;
	}
	if (ctl_trans_add(m, CTL_TR_DELFLOWTABLE, t, f) == NULL)
		return -ENOMEM;
	f->dead = true;
	t->use--;
	return 0;
}

int ctl_getflowtable(struct ctl_msg *m, struct ctl_out *o)
{
	struct ctl_table *t;
	struct ctl_flowtable *f;
	struct nlmsghdr *nlh;
	int err;

	if (m->nlh->nlmsg_flags & NLM_F_DUMP) {
		const struct nlattr *tname = m->tb[NFTA_FLOWTABLE_TABLE];

		ctl_list_for_each_entry(t, &m->st->tables, list) {
			if (!ctl_dump_match(m, t, tname))
				continue;
			ctl_list_for_each_entry(f, &t->flowtables, list) {
				nlh = ctl_out_msg(
				    o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWFLOWTABLE,
				    t->family, NLM_F_MULTI, m->nlh->nlmsg_seq,
				    ctl_session_portid(m->s), m->st->genid & 0xffff);
				if (nlh == NULL)
					break;
				ctl_flowtable_fill(nlh, f);
				ctl_out_end(o, nlh);
			}
		}
		ctl_out_done(o, m->nlh->nlmsg_seq, ctl_session_portid(m->s));
		return -EINTR;
	}
	t = ctl_table_lookup(m, m->tb[NFTA_FLOWTABLE_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_FLOWTABLE_NAME] == NULL)
		return -EINVAL;
	f = ctl_flowtable_lookup(t, mnl_attr_get_str(m->tb[NFTA_FLOWTABLE_NAME]));
	if (f == NULL) {
		m->bad_attr = m->tb[NFTA_FLOWTABLE_NAME];
		return -ENOENT;
	}
	nlh = ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWFLOWTABLE, t->family, 0,
			  m->nlh->nlmsg_seq, ctl_session_portid(m->s), m->st->genid & 0xffff);
	if (nlh == NULL)
		return -ENOMEM;
	ctl_flowtable_fill(nlh, f);
	ctl_out_end(o, nlh);
	return 0;
}
