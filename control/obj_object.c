/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stateful objects (counter, quota, limit, ct helper/timeout/expectation,
 * synproxy, secmark, connlimit): mirrors nf_tables_newobj, nf_tables_delobj
 * and nf_tables_getobj(_reset).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"
#include "nftdp_vm.h"

#include <linux/netfilter.h> /* after netinet/in.h (ctl_state.h) */
#include <linux/netfilter/nf_synproxy.h>

static struct ctl_obj *obj_lookup_handle(struct ctl_table *t, uint64_t handle)
{
	struct ctl_obj *o;

	ctl_list_for_each_entry(o, &t->objs, list)
		if (!o->dead && o->handle == handle)
			return o;
	return NULL;
}

/* libnftnl 1.2.4 puts the ct helper name without its NUL; the kernel
 * dumps it with one, and nft's reader relies on that. */
static void ct_helper_fixup(struct nlmsghdr *nlh, size_t start)
{
	char tmp[2048];
	struct nlmsghdr *t = (struct nlmsghdr *)tmp;
	const struct nlattr *a, *x;
	size_t len = nlh->nlmsg_len - start;

	if (len > sizeof(tmp) - NLMSG_HDRLEN)
		return;
	memcpy(tmp + NLMSG_HDRLEN, (char *)nlh + start, len);
	t->nlmsg_len = NLMSG_HDRLEN + len;
	nlh->nlmsg_len = start;
	mnl_attr_for_each(a, t, 0)
	{
		struct nlattr *nd;

		if (mnl_attr_get_type(a) != NFTA_OBJ_DATA) {
			ctl_put_attr(nlh, a);
			continue;
		}
		nd = mnl_attr_nest_start(nlh, NFTA_OBJ_DATA);
		mnl_attr_for_each_nested(x, a)
		{
			if (mnl_attr_get_type(x) == NFTA_CT_HELPER_NAME)
				ctl_put_strz_of(nlh, x);
			else
				ctl_put_attr(nlh, x);
		}
		mnl_attr_nest_end(nlh, nd);
	}
}

void ctl_obj_fill(struct nlmsghdr *nlh, const struct ctl_obj *o)
{
	size_t start = nlh->nlmsg_len;

	nftnl_obj_set_u32(o->nl, NFTNL_OBJ_USE, o->use);
	nftnl_obj_nlmsg_build_payload(nlh, o->nl);
	if (o->type == NFT_OBJECT_CT_HELPER)
		ct_helper_fixup(nlh, start);
}

/* The helper name as sent, read with its length (see ct_helper_fixup). */
static void ct_helper_name(struct ctl_msg *m, struct nftnl_obj *nl)
{
	const struct nlattr *a;

	if (m->tb[NFTA_OBJ_DATA] == NULL)
		return;
	mnl_attr_for_each_nested(a, m->tb[NFTA_OBJ_DATA])
	{
		char name[64];

		if (mnl_attr_get_type(a) != NFTA_CT_HELPER_NAME)
			continue;
		ctl_attr_strcpy(a, name, sizeof(name));
		nftnl_obj_set_str(nl, NFTNL_OBJ_CT_HELPER_NAME, name);
	}
}

/*
 * nft_ct_helper_obj_init's address family: the object's l3proto, else the
 * table's. ip in an ip6 table (or ip6 in an ip table) is EINVAL; inet,
 * bridge and netdev mean both (helper4 and helper6), which a dump shows as
 * inet when the kernel has the helper for both (irc, pptp, snmp are IPv4
 * only: ip); anything else is EAFNOSUPPORT, a helper the kernel lacks for
 * every family asked ENOENT. The family goes into the object, so a listing
 * shows what the kernel's shows.
 */
/*
 * nft_ct_expect_obj_init: protocol, port, timeout and size are needed; the
 * l3proto given, else the table's, must be ip or ip6 and fit the table (an
 * inet table takes either); the protocol must have ports. The family goes
 * into the object, so a listing shows what the kernel's dump shows.
 */
static int ct_expect_family(struct nftnl_obj *nl, uint8_t table_family)
{
	uint16_t family = table_family;

	if (!nftnl_obj_is_set(nl, NFTNL_OBJ_CT_EXPECT_L4PROTO) ||
	    !nftnl_obj_is_set(nl, NFTNL_OBJ_CT_EXPECT_DPORT) ||
	    !nftnl_obj_is_set(nl, NFTNL_OBJ_CT_EXPECT_TIMEOUT) ||
	    !nftnl_obj_is_set(nl, NFTNL_OBJ_CT_EXPECT_SIZE))
		return -EINVAL;
	if (nftnl_obj_is_set(nl, NFTNL_OBJ_CT_EXPECT_L3PROTO))
		family = nftnl_obj_get_u16(nl, NFTNL_OBJ_CT_EXPECT_L3PROTO);
	switch (family) {
	case NFPROTO_IPV4:
	case NFPROTO_IPV6:
		if (family != table_family && table_family != NFPROTO_INET)
			return -EINVAL;
		break;
	default: /* inet too: an expectation's tuple has one family */
		return -EAFNOSUPPORT;
	}
	switch (nftnl_obj_get_u8(nl, NFTNL_OBJ_CT_EXPECT_L4PROTO)) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_DCCP:
	case IPPROTO_SCTP:
		break;
	default:
		return -EOPNOTSUPP;
	}
	nftnl_obj_set_u16(nl, NFTNL_OBJ_CT_EXPECT_L3PROTO, family);
	return 0;
}

static int ct_helper_family(struct nftnl_obj *nl, uint8_t table_family)
{
	uint16_t family = table_family;
	unsigned int fam, found = 0;

	if (!nftnl_obj_is_set(nl, NFTNL_OBJ_CT_HELPER_NAME) ||
	    !nftnl_obj_is_set(nl, NFTNL_OBJ_CT_HELPER_L4PROTO))
		return -EINVAL;
	if (nftnl_obj_get_u8(nl, NFTNL_OBJ_CT_HELPER_L4PROTO) == 0)
		return -ENOENT;
	if (nftnl_obj_is_set(nl, NFTNL_OBJ_CT_HELPER_L3PROTO))
		family = nftnl_obj_get_u16(nl, NFTNL_OBJ_CT_HELPER_L3PROTO);
	switch (family) {
	case NFPROTO_IPV4:
		if (table_family == NFPROTO_IPV6)
			return -EINVAL;
		break;
	case NFPROTO_IPV6:
		if (table_family == NFPROTO_IPV4)
			return -EINVAL;
		break;
	case NFPROTO_NETDEV:
	case NFPROTO_BRIDGE:
	case NFPROTO_INET:
		family = NFPROTO_INET;
		break;
	default:
		return -EAFNOSUPPORT;
	}
	/* the helper for each family it serves; a dump names the ones found
	 * (nft_ct_helper_obj_dump: inet for both, else ip6 or ip) */
	fam = nftdp_vm_ct_helper_families(nftnl_obj_get_str(nl, NFTNL_OBJ_CT_HELPER_NAME),
					  nftnl_obj_get_u8(nl, NFTNL_OBJ_CT_HELPER_L4PROTO));
	if (family != NFPROTO_IPV6)
		found |= fam & 1u;
	if (family != NFPROTO_IPV4)
		found |= fam & 2u;
	if (!found)
		return -ENOENT;
	family = found == 3u ? NFPROTO_INET : found == 2u ? NFPROTO_IPV6 : NFPROTO_IPV4;
	nftnl_obj_set_u16(nl, NFTNL_OBJ_CT_HELPER_L3PROTO, family);
	return 0;
}

/* The object types this kernel registers (nft_obj_type_get): no tunnel,
 * no secmark. */
static bool obj_type_known(uint32_t type)
{
	return type >= NFT_OBJECT_COUNTER && type <= NFT_OBJECT_MAX && type != NFT_OBJECT_TUNNEL &&
	       type != NFT_OBJECT_SECMARK;
}

static int obj_check(struct nftnl_obj *nl, uint32_t type)
{
	if (type != NFT_OBJECT_LIMIT)
		return 0;
	return ctl_limit_check(nftnl_obj_get_u64(nl, NFTNL_OBJ_LIMIT_RATE),
			       nftnl_obj_get_u64(nl, NFTNL_OBJ_LIMIT_UNIT),
			       nftnl_obj_get_u32(nl, NFTNL_OBJ_LIMIT_BURST),
			       nftnl_obj_get_u32(nl, NFTNL_OBJ_LIMIT_TYPE) == NFT_LIMIT_PKT_BYTES);
}

/* nft_synproxy_do_init: flags outside NF_SYNPROXY_OPT_MASK */
static bool synproxy_flags_bad(struct nftnl_obj *nl)
{
	return nftnl_obj_is_set(nl, NFTNL_OBJ_SYNPROXY_FLAGS) &&
	       (nftnl_obj_get_u32(nl, NFTNL_OBJ_SYNPROXY_FLAGS) & ~NF_SYNPROXY_OPT_MASK);
}

int ctl_newobj(struct ctl_msg *m)
{
	struct ctl_table *t;
	struct ctl_obj *o;
	uint32_t type;
	int err;

	if (!m->tb[NFTA_OBJ_TYPE] || !m->tb[NFTA_OBJ_NAME] || !m->tb[NFTA_OBJ_DATA])
		return -EINVAL;
	t = ctl_table_lookup(m, m->tb[NFTA_OBJ_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	type = ntohl(mnl_attr_get_u32(m->tb[NFTA_OBJ_TYPE]));
	o = ctl_obj_lookup(t, mnl_attr_get_str(m->tb[NFTA_OBJ_NAME]), type);
	if (o) {
		if (m->nlh->nlmsg_flags & NLM_F_EXCL) {
			m->bad_attr = m->tb[NFTA_OBJ_NAME];
			return -EEXIST;
		}
		if (m->nlh->nlmsg_flags & NLM_F_REPLACE)
			return -EOPNOTSUPP;
		/* nft_obj_update(): only quota, limit and synproxy take new
		 * parameters; the stored attributes are what a dump shows */
		if (type == NFT_OBJECT_QUOTA || type == NFT_OBJECT_LIMIT ||
		    type == NFT_OBJECT_SYNPROXY) {
			struct nftnl_obj *nl = nftnl_obj_alloc();
			struct ctl_trans *tr;

			if (nl)
				err = ctl_parse_obj(m->nlh, nl);
			if (nl == NULL || err < 0) {
				nftnl_obj_free(nl);
				return -EINVAL;
			}
			/* nf_tables_updobj -> nft_synproxy_obj_init's flags */
			if (type == NFT_OBJECT_SYNPROXY && synproxy_flags_bad(nl)) {
				nftnl_obj_free(nl);
				return -EOPNOTSUPP;
			}
			tr = ctl_trans_add(m, CTL_TR_UPDOBJ, t, o);
			if (tr == NULL) {
				nftnl_obj_free(nl);
				return -ENOMEM;
			}
			nftnl_obj_set_u64(nl, NFTNL_OBJ_HANDLE, o->handle);
			nftnl_obj_set_u32(nl, NFTNL_OBJ_FAMILY, t->family);
			tr->old_obj = o->nl;
			o->nl = nl;
			o->name = nftnl_obj_get_str(nl, NFTNL_OBJ_NAME);
		}
		return 0;
	}
	if (!obj_type_known(type)) {
		m->bad_attr = m->tb[NFTA_OBJ_TYPE];
		return -ENOENT;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return -ENOMEM;
	o->nl = nftnl_obj_alloc();
	if (o->nl)
		err = ctl_parse_obj(m->nlh, o->nl);
	if (o->nl == NULL || err < 0) {
		nftnl_obj_free(o->nl);
		free(o);
		return -EINVAL;
	}
	if (type == NFT_OBJECT_CT_HELPER) {
		ct_helper_name(m, o->nl);
		err = ct_helper_family(o->nl, t->family);
		if (err < 0) {
			ctl_obj_free(o);
			return err;
		}
	}
	if (type == NFT_OBJECT_CT_EXPECT) {
		err = ct_expect_family(o->nl, t->family);
		if (err < 0) {
			ctl_obj_free(o);
			return err;
		}
	}
	/* nft_ct_timeout_obj_init: the l3proto given, else the table's
	 * family, is what its dump shows (nft leaves it out unless told) */
	if (type == NFT_OBJECT_CT_TIMEOUT && !nftnl_obj_is_set(o->nl, NFTNL_OBJ_CT_TIMEOUT_L3PROTO))
		nftnl_obj_set_u16(o->nl, NFTNL_OBJ_CT_TIMEOUT_L3PROTO, t->family);
	/* nft_ct_helper_obj_init / nft_ct_timeout_obj_init end in
	 * nf_ct_netns_get: no nf_conntrack_bridge in this kernel */
	if ((type == NFT_OBJECT_CT_HELPER || type == NFT_OBJECT_CT_TIMEOUT) &&
	    t->family == NFPROTO_BRIDGE) {
		ctl_obj_free(o);
		return -EPROTO;
	}
	/* nft_synproxy_obj_init: nft_synproxy_do_init's flags, then
	 * nf_ct_netns_get (no netdev, arp or bridge conntrack here) */
	if (type == NFT_OBJECT_SYNPROXY) {
		if (synproxy_flags_bad(o->nl)) {
			ctl_obj_free(o);
			return -EOPNOTSUPP;
		}
		if (t->family != NFPROTO_IPV4 && t->family != NFPROTO_IPV6 &&
		    t->family != NFPROTO_INET) {
			ctl_obj_free(o);
			return -EPROTO;
		}
	}
	err = obj_check(o->nl, type);
	if (err < 0) {
		ctl_obj_free(o);
		return err;
	}
	o->table = t;
	o->type = type;
	o->name = nftnl_obj_get_str(o->nl, NFTNL_OBJ_NAME);
	o->handle = ctl_table_alloc_handle(t);
	nftnl_obj_set_u64(o->nl, NFTNL_OBJ_HANDLE, o->handle);
	nftnl_obj_set_u32(o->nl, NFTNL_OBJ_FAMILY, t->family);
	if (ctl_trans_add(m, CTL_TR_NEWOBJ, t, o) == NULL) {
		ctl_obj_free(o);
		return -ENOMEM;
	}
	ctl_list_add_tail(&o->list, &t->objs);
	t->use++;
	return 0;
}

int ctl_delobj(struct ctl_msg *m)
{
	const struct nlattr *attr;
	struct ctl_table *t;
	struct ctl_obj *o;
	int err;

	if (!m->tb[NFTA_OBJ_TYPE] || (!m->tb[NFTA_OBJ_NAME] && !m->tb[NFTA_OBJ_HANDLE]))
		return -EINVAL;
	t = ctl_table_lookup(m, m->tb[NFTA_OBJ_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_OBJ_HANDLE]) {
		attr = m->tb[NFTA_OBJ_HANDLE];
		o = obj_lookup_handle(t, be64toh(mnl_attr_get_u64(attr)));
	} else {
		attr = m->tb[NFTA_OBJ_NAME];
		o = ctl_obj_lookup(t, mnl_attr_get_str(attr),
				   ntohl(mnl_attr_get_u32(m->tb[NFTA_OBJ_TYPE])));
	}
	if (o == NULL) {
		m->bad_attr = attr;
		return -ENOENT;
	}
	if (o->use > 0) {
		m->bad_attr = attr;
		return -EBUSY;
	}
	if (ctl_trans_add(m, CTL_TR_DELOBJ, t, o) == NULL)
		return -ENOMEM;
	o->dead = true;
	t->use--;
	return 0;
}

static void obj_msg(struct ctl_out *o, struct ctl_msg *m, const struct ctl_obj *obj, uint16_t flags)
{
	struct nlmsghdr *nlh;

	nlh =
	    ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWOBJ, obj->table->family, flags,
			m->nlh->nlmsg_seq, ctl_session_portid(m->s), m->st->genid & 0xffff);
	if (nlh == NULL)
		return;
	ctl_build_obj_stats((struct ctl_obj *)obj, false);
	ctl_obj_fill(nlh, obj);
	ctl_out_end(o, nlh);
}

/* nft_reset_obj: after the dump a counter is back to zero and a quota has
 * consumed nothing. */
static void obj_reset(struct ctl_obj *obj)
{
	/* the dataplane's state, when it counts */
	ctl_build_obj_stats(obj, true);
	switch (obj->type) {
	case NFT_OBJECT_COUNTER:
		nftnl_obj_set_u64(obj->nl, NFTNL_OBJ_CTR_PKTS, 0);
		nftnl_obj_set_u64(obj->nl, NFTNL_OBJ_CTR_BYTES, 0);
		break;
	case NFT_OBJECT_QUOTA:
		nftnl_obj_set_u64(obj->nl, NFTNL_OBJ_QUOTA_CONSUMED, 0);
		break;
	}
}

/* GETOBJ_RESET: dumped with the values before the reset. The counting state
 * itself lives in the dataplane; the stored attributes hold the initial
 * values nft gave. */
int ctl_getobj(struct ctl_msg *m, struct ctl_out *o)
{
	bool reset = (m->nlh->nlmsg_type & 0xff) == NFT_MSG_GETOBJ_RESET;
	struct ctl_table *t;
	struct ctl_obj *obj;
	int err;

	if (m->nlh->nlmsg_flags & NLM_F_DUMP) {
		const struct nlattr *tname = m->tb[NFTA_OBJ_TABLE];
		const struct nlattr *type = m->tb[NFTA_OBJ_TYPE];

		ctl_list_for_each_entry(t, &m->st->tables, list) {
			if (!ctl_dump_match(m, t, tname))
				continue;
			ctl_list_for_each_entry(obj, &t->objs, list) {
				if (type && obj->type != ntohl(mnl_attr_get_u32(type)))
					continue;
				obj_msg(o, m, obj, NLM_F_MULTI);
				if (reset)
					obj_reset(obj);
			}
		}
		ctl_out_done(o, m->nlh->nlmsg_seq, ctl_session_portid(m->s));
		return -EINTR;
	}
	if (!m->tb[NFTA_OBJ_NAME] || !m->tb[NFTA_OBJ_TYPE])
		return -EINVAL;
	t = ctl_table_lookup(m, m->tb[NFTA_OBJ_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	obj = ctl_obj_lookup(t, mnl_attr_get_str(m->tb[NFTA_OBJ_NAME]),
			     ntohl(mnl_attr_get_u32(m->tb[NFTA_OBJ_TYPE])));
	if (obj == NULL) {
		m->bad_attr = m->tb[NFTA_OBJ_NAME];
		return -ENOENT;
	}
	obj_msg(o, m, obj, 0);
	if (reset)
		obj_reset(obj);
	return 0;
}
