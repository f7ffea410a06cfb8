/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Chains: mirrors nf_tables_newchain (nf_tables_addchain, nf_tables_updchain,
 * nft_chain_parse_hook), nf_tables_delchain and nf_tables_getchain.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"

#include <linux/netfilter.h>
#include <linux/netfilter_arp.h>

#define NF_IP_PRI_CONNTRACK (-200)

struct chain_type {
	const char *name;
	uint8_t family;
	uint32_t hook_mask;
};

/* nft_chain_filter_*, nft_chain_nat_*, nft_chain_route_* as this kernel has them */
static const struct chain_type chain_types[] = {
    {"filter", NFPROTO_IPV4, 0x1f},
    {"filter", NFPROTO_IPV6, 0x1f},
    {"filter", NFPROTO_INET, 0x3f},
    {"filter", NFPROTO_ARP, (1 << NF_ARP_IN) | (1 << NF_ARP_OUT)},
    {"filter", NFPROTO_BRIDGE, 0x1f},
    {"filter", NFPROTO_NETDEV, (1 << NF_NETDEV_INGRESS) | (1 << NF_NETDEV_EGRESS)},
    {"nat", NFPROTO_IPV4, 0x1b},
    {"nat", NFPROTO_IPV6, 0x1b},
    {"nat", NFPROTO_INET, 0x1b},
    {"route", NFPROTO_IPV4, 1 << NF_INET_LOCAL_OUT},
    {"route", NFPROTO_IPV6, 1 << NF_INET_LOCAL_OUT},
    {"route", NFPROTO_INET, 1 << NF_INET_LOCAL_OUT},
};

static const struct chain_type *chain_type_lookup(uint8_t family, const char *name)
{
	for (size_t i = 0; i < sizeof(chain_types) / sizeof(chain_types[0]); i++)
		if (chain_types[i].family == family && strcmp(chain_types[i].name, name) == 0)
			return &chain_types[i];
	return NULL;
}

static bool family_known(uint8_t family)
{
	switch (family) {
	case NFPROTO_IPV4:
	case NFPROTO_IPV6:
	case NFPROTO_INET:
	case NFPROTO_ARP:
	case NFPROTO_BRIDGE:
	case NFPROTO_NETDEV:
		return true;
	}
	return false;
}

/* Whether this family/hook takes a device list (nft_base_chain_netdev). */
static bool hook_is_netdev(uint8_t family, uint32_t hooknum)
{
	return family == NFPROTO_NETDEV || (family == NFPROTO_INET && hooknum == NF_INET_INGRESS);
}

/* nf_tables_fill_chain_info: NFTA_CHAIN_COUNTERS (nft_dump_stats) only of a
 * chain with stats, the workers' sums; the request's values until the
 * commit set them, or where no generation runs the chain. */
void ctl_chain_fill(struct nlmsghdr *nlh, const struct ctl_chain *c)
{
	uint64_t pk0, by0, pk, by;

	nftnl_chain_set_u32(c->nl, NFTNL_CHAIN_USE, c->use);
	if (!nftnl_chain_is_set(c->nl, NFTNL_CHAIN_PACKETS)) {
		nftnl_chain_nlmsg_build_payload(nlh, c->nl);
		return;
	}
	pk = pk0 = nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_PACKETS);
	by = by0 = nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_BYTES);
	if (!c->stats_pending)
		ctl_build_chain_stats(c, &pk, &by);
	nftnl_chain_set_u64(c->nl, NFTNL_CHAIN_PACKETS, pk);
	nftnl_chain_set_u64(c->nl, NFTNL_CHAIN_BYTES, by);
	nftnl_chain_nlmsg_build_payload(nlh, c->nl);
	nftnl_chain_set_u64(c->nl, NFTNL_CHAIN_PACKETS, pk0);
	nftnl_chain_set_u64(c->nl, NFTNL_CHAIN_BYTES, by0);
}

/* nft_stats_alloc: NFTA_CHAIN_COUNTERS as nla_parse_nested_deprecated reads
 * it with nft_counter_policy (a value shorter than a u64 is ERANGE, the
 * last of a type counts), and both values needed. */
static int chain_counters(struct ctl_msg *m, uint64_t *packets, uint64_t *bytes)
{
	const struct nlattr *a, *pk = NULL, *by = NULL;

	mnl_attr_for_each_nested(a, m->tb[NFTA_CHAIN_COUNTERS])
	{
		uint16_t type = mnl_attr_get_type(a);

		if (type != NFTA_COUNTER_PACKETS && type != NFTA_COUNTER_BYTES)
			continue;
		if (mnl_attr_get_payload_len(a) < sizeof(uint64_t))
			return -ERANGE;
		if (type == NFTA_COUNTER_PACKETS)
			pk = a;
		else
			by = a;
	}
	if (pk == NULL || by == NULL)
		return -EINVAL;
	*packets = be64toh(mnl_attr_get_u64(pk));
	*bytes = be64toh(mnl_attr_get_u64(by));
	return 0;
}

/* Parse NFTA_CHAIN_HOOK like nft_chain_parse_hook(): the hook number and
 * priority, the chain type, and the device list of netdev hooks. */
struct hook_info {
	uint32_t num;
	int32_t prio;
	const struct chain_type *type;
	bool has_devs;
};

static int parse_hook(struct ctl_msg *m, struct ctl_table *t, struct hook_info *h)
{
	const struct nlattr *ha[NFTA_HOOK_MAX + 1] = {0};
	const struct nlattr *a;
	const char *tname = "filter";

	mnl_attr_for_each_nested(a, m->tb[NFTA_CHAIN_HOOK])
	{
		uint16_t type = mnl_attr_get_type(a);

		if (type <= NFTA_HOOK_MAX)
			ha[type] = a;
	}
	if (ha[NFTA_HOOK_HOOKNUM] == NULL || ha[NFTA_HOOK_PRIORITY] == NULL) {
		m->bad_attr = m->tb[NFTA_CHAIN_NAME];
		return -ENOENT;
	}
	if (mnl_attr_validate(ha[NFTA_HOOK_HOOKNUM], MNL_TYPE_U32) < 0 ||
	    mnl_attr_validate(ha[NFTA_HOOK_PRIORITY], MNL_TYPE_U32) < 0)
		return -EINVAL;
	h->num = ntohl(mnl_attr_get_u32(ha[NFTA_HOOK_HOOKNUM]));
	h->prio = (int32_t)ntohl(mnl_attr_get_u32(ha[NFTA_HOOK_PRIORITY]));
	if (m->tb[NFTA_CHAIN_TYPE])
		tname = mnl_attr_get_str(m->tb[NFTA_CHAIN_TYPE]);
	h->type = chain_type_lookup(t->family, tname);
	if (h->type == NULL) {
		m->bad_attr = m->tb[NFTA_CHAIN_TYPE];
		return -ENOENT;
	}
	if (h->num >= 8 || !(h->type->hook_mask & (1u << h->num)))
		return -EOPNOTSUPP;
	if (strcmp(h->type->name, "nat") == 0 && h->prio <= NF_IP_PRI_CONNTRACK)
		return -EOPNOTSUPP;
	h->has_devs = ha[NFTA_HOOK_DEV] || ha[NFTA_HOOK_DEVS];
	if (hook_is_netdev(t->family, h->num)) {
		if (!h->has_devs)
			return -EINVAL;
		if (ha[NFTA_HOOK_DEVS]) {
			unsigned int n = 0;

			mnl_attr_for_each_nested(a, ha[NFTA_HOOK_DEVS])
			{
				if (mnl_attr_get_type(a) != NFTA_DEVICE_NAME ||
				    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
					return -EINVAL;
				n++;
			}
			if (n == 0)
				return -EINVAL;
		}
	} else if (h->has_devs) {
		return -EOPNOTSUPP;
	}
	return 0;
}

static struct nftnl_chain *chain_parse(const struct nlmsghdr *nlh)
{
	struct nftnl_chain *nc = nftnl_chain_alloc();

	if (nc == NULL)
		return NULL;
	int ret;

	ret = ctl_parse_chain(nlh, nc);
	if (ret < 0) {
		nftnl_chain_free(nc);
		return NULL;
	}
	/* what only the request carries */
	nftnl_chain_unset(nc, NFTNL_CHAIN_ID);
	nftnl_chain_unset(nc, NFTNL_CHAIN_PACKETS);
	nftnl_chain_unset(nc, NFTNL_CHAIN_BYTES);
	return nc;
}

static int chain_policy(struct ctl_msg *m, uint32_t *policy)
{
	*policy = ntohl(mnl_attr_get_u32(m->tb[NFTA_CHAIN_POLICY]));
	if (*policy != NF_DROP && *policy != NF_ACCEPT)
		return -EINVAL;
	return 0;
}

static int chain_add(struct ctl_msg *m, struct ctl_table *t)
{
	struct hook_info h = {0};
	struct ctl_chain *c;
	uint32_t policy = NF_ACCEPT, flags = 0;
	uint64_t pk = 0, by = 0;
	bool stats = false;
	int err;

	if (m->tb[NFTA_CHAIN_FLAGS]) {
		flags = ntohl(mnl_attr_get_u32(m->tb[NFTA_CHAIN_FLAGS]));
		if (flags & ~NFT_CHAIN_FLAGS)
			return -EOPNOTSUPP;
		if (flags & NFT_CHAIN_HW_OFFLOAD)
			return -EOPNOTSUPP;
	}
	if (m->tb[NFTA_CHAIN_HOOK]) {
		if (flags & NFT_CHAIN_BINDING)
			return -EOPNOTSUPP;
		err = parse_hook(m, t, &h);
		if (err < 0)
			return err;
		if (m->tb[NFTA_CHAIN_POLICY]) {
			err = chain_policy(m, &policy);
			if (err < 0)
				return err;
		}
		/* only a base chain has stats: a regular one ignores them */
		if (m->tb[NFTA_CHAIN_COUNTERS]) {
			err = chain_counters(m, &pk, &by);
			if (err < 0)
				return err;
			stats = true;
		}
	} else {
		if (m->tb[NFTA_CHAIN_POLICY])
			return -EOPNOTSUPP;
		if (flags & NFT_CHAIN_BASE)
			return -EOPNOTSUPP;
	}
	/* a binding chain (nft's `jump { ... }`) comes without a name: the
	 * kernel names it "__chain%llu" from one counter for all tables */
	if (!m->tb[NFTA_CHAIN_NAME] && !(flags & NFT_CHAIN_BINDING))
		return -EINVAL;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->nl = chain_parse(m->nlh);
	if (c->nl == NULL) {
		free(c);
		return -EINVAL;
	}
	c->table = t;
	if (!m->tb[NFTA_CHAIN_NAME]) {
		char name[32];

		snprintf(name, sizeof(name), "__chain%llu",
			 (unsigned long long)++m->st->binding_seq);
		nftnl_chain_set_str(c->nl, NFTNL_CHAIN_NAME, name);
	}
	c->binding = (flags & NFT_CHAIN_BINDING) != 0;
	c->name = nftnl_chain_get_str(c->nl, NFTNL_CHAIN_NAME);
	ctl_list_init(&c->rules);
	if (m->tb[NFTA_CHAIN_ID])
		c->chain_id = ntohl(mnl_attr_get_u32(m->tb[NFTA_CHAIN_ID]));
	if (m->tb[NFTA_CHAIN_HOOK]) {
		c->base = true;
		c->hook_seq = ++m->st->hook_seq;
		c->hooknum = h.num;
		c->prio = h.prio;
		nftnl_chain_set_str(c->nl, NFTNL_CHAIN_TYPE, h.type->name);
		nftnl_chain_set_u32(c->nl, NFTNL_CHAIN_POLICY, policy);
		flags |= NFT_CHAIN_BASE;
	}
	if (stats) {
		nftnl_chain_set_u64(c->nl, NFTNL_CHAIN_PACKETS, pk);
		nftnl_chain_set_u64(c->nl, NFTNL_CHAIN_BYTES, by);
		c->stats_pending = true;
	}
	if (flags)
		nftnl_chain_set_u32(c->nl, NFTNL_CHAIN_FLAGS, flags);
	else
		nftnl_chain_unset(c->nl, NFTNL_CHAIN_FLAGS);
	c->handle = ctl_table_alloc_handle(t);
	nftnl_chain_set_u64(c->nl, NFTNL_CHAIN_HANDLE, c->handle);
	nftnl_chain_set_u32(c->nl, NFTNL_CHAIN_FAMILY, t->family);
	if (ctl_trans_add(m, CTL_TR_NEWCHAIN, t, c) == NULL) {
		ctl_chain_free(c);
		return -ENOMEM;
	}
	ctl_list_add_tail(&c->list, &t->chains);
	t->use++;
	return 0;
}

/* nf_tables_updchain(): policy, rename, netdev devices, stats (set or zeroed,
 * made where there were none). A hook that differs from the chain's is
 * EEXIST. */
static int chain_update(struct ctl_msg *m, struct ctl_chain *c)
{
	struct ctl_table *t = c->table;
	struct nftnl_chain *old, *nc;
	struct ctl_trans *tr;
	uint32_t policy = 0;
	uint64_t pk = 0, by = 0;
	bool stats = false;
	int err;

	if (m->tb[NFTA_CHAIN_FLAGS]) {
		uint32_t flags = ntohl(mnl_attr_get_u32(m->tb[NFTA_CHAIN_FLAGS]));
		uint32_t cur = nftnl_chain_is_set(c->nl, NFTNL_CHAIN_FLAGS)
				   ? nftnl_chain_get_u32(c->nl, NFTNL_CHAIN_FLAGS)
				   : 0;

		if (flags & ~NFT_CHAIN_FLAGS)
			return -EOPNOTSUPP;
		if ((flags ^ cur) & ~NFT_CHAIN_BASE)
			return -EOPNOTSUPP;
	}
	if (m->tb[NFTA_CHAIN_HOOK]) {
		struct hook_info h = {0};

		if (!c->base) {
			m->bad_attr = m->tb[NFTA_CHAIN_HOOK];
			return -EEXIST;
		}
		err = parse_hook(m, t, &h);
		if (err < 0)
			return err;
		if (strcmp(h.type->name, nftnl_chain_get_str(c->nl, NFTNL_CHAIN_TYPE)) != 0) {
			m->bad_attr = m->tb[NFTA_CHAIN_TYPE];
			return -EOPNOTSUPP;
		}
		if (h.num != c->hooknum || h.prio != c->prio) {
			m->bad_attr = m->tb[NFTA_CHAIN_HOOK];
			return -EOPNOTSUPP;
		}
	}
	if (m->tb[NFTA_CHAIN_POLICY]) {
		if (!c->base) {
			m->bad_attr = m->tb[NFTA_CHAIN_POLICY];
			return -EOPNOTSUPP;
		}
		err = chain_policy(m, &policy);
		if (err < 0)
			return err;
	}
	if (m->tb[NFTA_CHAIN_HANDLE] && m->tb[NFTA_CHAIN_NAME]) {
		const char *name = mnl_attr_get_str(m->tb[NFTA_CHAIN_NAME]);
		struct ctl_chain *other = ctl_chain_lookup(t, name);

		if (other && other != c) {
			m->bad_attr = m->tb[NFTA_CHAIN_NAME];
			return -EEXIST;
		}
		/* a second rename of the same chain in one batch */
		ctl_list_for_each_entry(tr, &m->st->trans, list) {
			if (tr->op == CTL_TR_UPDCHAIN && tr->obj == c && tr->old_name) {
				m->bad_attr = m->tb[NFTA_CHAIN_NAME];
				return -EEXIST;
			}
		}
	}
	if (m->tb[NFTA_CHAIN_COUNTERS]) {
		if (!c->base)
			return -EOPNOTSUPP;
		err = chain_counters(m, &pk, &by);
		if (err < 0)
			return err;
		stats = true;
	} else if (m->tb[NFTA_CHAIN_HANDLE] && m->tb[NFTA_CHAIN_NAME] &&
		   nftnl_chain_is_set(c->nl, NFTNL_CHAIN_PACKETS)) {
		/* the dataplane keys the chain's counter by name: a rename
		 * carries the values over as the kernel keeps its stats */
		pk = nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_PACKETS);
		by = nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_BYTES);
		if (!c->stats_pending)
			ctl_build_chain_stats(c, &pk, &by);
		stats = true;
	}

	old = c->nl;
	nc = nftnl_chain_alloc();
	if (nc == NULL)
		return -ENOMEM;
	/* start from a copy of the chain as it is */
	{
		char buf[8192];
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

		mnl_nlmsg_put_extra_header(nlh, sizeof(struct nfgenmsg));
		nftnl_chain_nlmsg_build_payload(nlh, old);
		if (nftnl_chain_nlmsg_parse(nlh, nc) < 0) {
			nftnl_chain_free(nc);
			return -ENOMEM;
		}
		nftnl_chain_set_u32(nc, NFTNL_CHAIN_FAMILY, t->family);
	}
	tr = ctl_trans_add(m, CTL_TR_UPDCHAIN, t, c);
	if (tr == NULL) {
		nftnl_chain_free(nc);
		return -ENOMEM;
	}
	tr->old_chain = old;
	if (m->tb[NFTA_CHAIN_POLICY])
		nftnl_chain_set_u32(nc, NFTNL_CHAIN_POLICY, policy);
	if (m->tb[NFTA_CHAIN_HANDLE] && m->tb[NFTA_CHAIN_NAME]) {
		tr->old_name = c->name;
		nftnl_chain_set_str(nc, NFTNL_CHAIN_NAME, mnl_attr_get_str(m->tb[NFTA_CHAIN_NAME]));
	}
	if (stats) {
		nftnl_chain_set_u64(nc, NFTNL_CHAIN_PACKETS, pk);
		nftnl_chain_set_u64(nc, NFTNL_CHAIN_BYTES, by);
		c->stats_pending = true;
	}
	c->nl = nc;
	c->name = nftnl_chain_get_str(nc, NFTNL_CHAIN_NAME);
	return 0;
}

int ctl_newchain(struct ctl_msg *m)
{
	struct ctl_table *t;
	struct ctl_chain *c = NULL;
	int err;

	t = ctl_table_lookup(m, m->tb[NFTA_CHAIN_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_CHAIN_HANDLE]) {
		c = ctl_chain_lookup_handle(t, be64toh(mnl_attr_get_u64(m->tb[NFTA_CHAIN_HANDLE])));
		if (c == NULL) {
			m->bad_attr = m->tb[NFTA_CHAIN_HANDLE];
			return -ENOENT;
		}
	} else if (m->tb[NFTA_CHAIN_NAME]) {
		c = ctl_chain_lookup(t, mnl_attr_get_str(m->tb[NFTA_CHAIN_NAME]));
	} else if (!m->tb[NFTA_CHAIN_FLAGS] ||
		   !(ntohl(mnl_attr_get_u32(m->tb[NFTA_CHAIN_FLAGS])) & NFT_CHAIN_BINDING)) {
		return -EINVAL;
	}
	if (!family_known(t->family))
		return -EOPNOTSUPP;
	if (c) {
		/* a binding chain is neither updated nor renamed */
		if (c->binding)
			return -EINVAL;
		if (m->nlh->nlmsg_flags & NLM_F_EXCL) {
			m->bad_attr = m->tb[NFTA_CHAIN_NAME];
			return -EEXIST;
		}
		if (m->nlh->nlmsg_flags & NLM_F_REPLACE)
			return -EOPNOTSUPP;
		return chain_update(m, c);
	}
	return chain_add(m, t);
}

int ctl_delchain(struct ctl_msg *m)
{
	const struct nlattr *attr;
	struct ctl_table *t;
	struct ctl_chain *c;
	uint32_t use;
	int err;

	t = ctl_table_lookup(m, m->tb[NFTA_CHAIN_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_CHAIN_HANDLE]) {
		attr = m->tb[NFTA_CHAIN_HANDLE];
		c = ctl_chain_lookup_handle(t, be64toh(mnl_attr_get_u64(attr)));
	} else {
		attr = m->tb[NFTA_CHAIN_NAME];
		if (attr == NULL)
			return -EINVAL;
		c = ctl_chain_lookup(t, mnl_attr_get_str(attr));
	}
	if (c == NULL) {
		m->bad_attr = attr;
		return -ENOENT;
	}
	/* a binding chain goes only with the rule that holds it */
	if (c->binding)
		return -EOPNOTSUPP;
	if ((m->nlh->nlmsg_flags & NLM_F_NONREC) && c->use > 0)
		return -EBUSY;
	/* what still names the chain once its own rules are gone */
	use = c->use - c->nrules;
	err = ctl_chain_flush_rules(m, c);
	if (err < 0)
		return err;
	if (use > 0) {
		m->bad_attr = attr;
		return -EBUSY;
	}
	if (ctl_trans_add(m, CTL_TR_DELCHAIN, t, c) == NULL)
		return -ENOMEM;
	c->dead = true;
	t->use--;
	return 0;
}

static void chain_msg(struct ctl_out *o, struct ctl_msg *m, const struct ctl_chain *c,
		      uint16_t flags)
{
	struct nlmsghdr *nlh;

	nlh =
	    ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN, c->table->family, flags,
			m->nlh->nlmsg_seq, ctl_session_portid(m->s), m->st->genid & 0xffff);
	if (nlh == NULL)
		return;
	ctl_chain_fill(nlh, c);
	ctl_out_end(o, nlh);
}

int ctl_getchain(struct ctl_msg *m, struct ctl_out *o)
{
	struct ctl_table *t;
	struct ctl_chain *c;
	int err;

	if (m->nlh->nlmsg_flags & NLM_F_DUMP) {
		const struct nlattr *tname = m->tb[NFTA_CHAIN_TABLE];

		ctl_list_for_each_entry(t, &m->st->tables, list) {
			if (!ctl_dump_match(m, t, tname))
				continue;
			ctl_list_for_each_entry(c, &t->chains, list)
				chain_msg(o, m, c, NLM_F_MULTI);
		}
		ctl_out_done(o, m->nlh->nlmsg_seq, ctl_session_portid(m->s));
		return -EINTR;
	}
	t = ctl_table_lookup(m, m->tb[NFTA_CHAIN_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_CHAIN_NAME] == NULL)
		return -EINVAL;
	c = ctl_chain_lookup(t, mnl_attr_get_str(m->tb[NFTA_CHAIN_NAME]));
	if (c == NULL) {
		m->bad_attr = m->tb[NFTA_CHAIN_NAME];
		return -ENOENT;
	}
	chain_msg(o, m, c, 0);
	return 0;
}
