// SPDX-License-Identifier: BSD-3-Clause
/*
 * The mirror: one dump of the kernel's devices, IPv6 addresses and routes
 * (tables local and main) of the netns nftdp runs in, over rtnetlink with
 * libmnl, into a route table (route.c). Devices named like a port become
 * that port's ifindex; the others keep their names under
 * NFTDP_ROUTE_IFINDEX_FOREIGN + their kernel ifindex. Also dumps the
 * `ip rule`s first, then keeps the routes of every table they name
 * (rule.c), and notes rule selectors it cannot evaluate
 * (nftdp_route_policy_custom). Live updates: watch.c says when to dump
 * again.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "route_priv.h"

/* newer than this system's linux/fib_rules.h (uapi numbering) */
#define NFTDP_FRA_DSCP 25
#define NFTDP_FRA_SPORT_MASK 28
#define NFTDP_FRA_DPORT_MASK 29
#define NFTDP_FRA_DSCP_MASK 30

struct mirror {
	struct nftdp_route_table *t;
	const struct nftdp_route_port *ports;
	unsigned int n_ports;
	int err;
};

/* a kernel ifindex as nftdp names the device (link_cb kept the map) */
static uint32_t map_dev(const struct nftdp_route_table *t, uint32_t kidx)
{
	for (unsigned int i = 0; i < t->n_devs; i++)
		if (t->devs[i].kidx == kidx)
			return t->devs[i].ifindex;
	return NFTDP_ROUTE_IFINDEX_FOREIGN + kidx;
}

/* something the kernel's lookup consults besides local and main */
static void custom(struct mirror *m, const char *what, int family, uint32_t a, uint32_t b)
{
	if (m->t->n_custom++ == 0)
		snprintf(m->t->custom_why, sizeof(m->t->custom_why), "%s (%s, %u, %u)", what,
			 family == AF_INET6 ? "IPv6" : "IPv4", a, b);
}

static int link_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(a, IFLA_MAX) > 0)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mirror *m = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[IFLA_MAX + 1] = {0};
	const char *name;
	uint32_t idx;

	mnl_attr_parse(nlh, sizeof(*ifi), link_attr, tb);
	if (!tb[IFLA_IFNAME])
		return MNL_CB_OK;
	name = mnl_attr_get_str(tb[IFLA_IFNAME]);
	idx = NFTDP_ROUTE_IFINDEX_FOREIGN + (uint32_t)ifi->ifi_index;
	for (unsigned int i = 0; i < m->n_ports; i++)
		if (strncmp(m->ports[i].name, name, IFNAMSIZ) == 0)
			idx = m->ports[i].ifindex;
	if (nftdp_route_dev_add(m->t, idx, name,
				tb[IFLA_MTU] && mnl_attr_get_payload_len(tb[IFLA_MTU]) == 4
				    ? mnl_attr_get_u32(tb[IFLA_MTU])
				    : 0) < 0) {
		m->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	/* the kernel's ifindex: route messages name devices by it */
	m->t->devs[m->t->n_devs - 1].kidx = (uint32_t)ifi->ifi_index;
	m->t->devs[m->t->n_devs - 1].flags = ifi->ifi_flags & NFTDP_ROUTE_LINK_FLAGS;
	/* suppress_ifgroup compares the route's device's group */
	if (tb[IFLA_GROUP] && mnl_attr_get_payload_len(tb[IFLA_GROUP]) == 4)
		nftdp_route_dev_group(m->t, idx, mnl_attr_get_u32(tb[IFLA_GROUP]));
	return MNL_CB_OK;
}

bool nftdp_route_link_same(const struct nftdp_route_table *t, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[IFLA_MAX + 1] = {0};
	const struct nftdp_route_dev *d = NULL;
	uint32_t mtu = 0, group = 0;
	const char *name;
	size_t len;

	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) ||
	    mnl_attr_parse(nlh, sizeof(*ifi), link_attr, tb) < 0 || !tb[IFLA_IFNAME])
		return false;
	for (unsigned int i = 0; i < t->n_devs && !d; i++)
		if (t->devs[i].kidx == (uint32_t)ifi->ifi_index)
			d = &t->devs[i];
	if (!d)
		return false; /* a new device */
	if (tb[IFLA_MTU] && mnl_attr_get_payload_len(tb[IFLA_MTU]) == 4)
		mtu = mnl_attr_get_u32(tb[IFLA_MTU]);
	if (tb[IFLA_GROUP] && mnl_attr_get_payload_len(tb[IFLA_GROUP]) == 4)
		group = mnl_attr_get_u32(tb[IFLA_GROUP]);
	/* the name within its attribute (no NUL needed to stop) */
	name = mnl_attr_get_payload(tb[IFLA_IFNAME]);
	len = strnlen(name, mnl_attr_get_payload_len(tb[IFLA_IFNAME]));
	return len == strnlen(d->name, sizeof(d->name)) && memcmp(d->name, name, len) == 0 &&
	       d->mtu == mtu && d->group == group &&
	       d->flags == (ifi->ifi_flags & NFTDP_ROUTE_LINK_FLAGS);
}

static int addr_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(a, IFA_MAX) > 0)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mirror *m = data;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[IFA_MAX + 1] = {0};
	uint32_t flags = ifa->ifa_flags;

	if (ifa->ifa_family != AF_INET6)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*ifa), addr_attr, tb);
	if (tb[IFA_FLAGS])
		flags = mnl_attr_get_u32(tb[IFA_FLAGS]);
	/* ipv6_chk_addr skips tentative addresses unless optimistic */
	if ((flags & IFA_F_TENTATIVE) && !(flags & IFA_F_OPTIMISTIC))
		return MNL_CB_OK;
	if (!tb[IFA_ADDRESS] || mnl_attr_get_payload_len(tb[IFA_ADDRESS]) != 16)
		return MNL_CB_OK;
	if (nftdp_route_addr6_add(m->t, map_dev(m->t, ifa->ifa_index),
				  mnl_attr_get_payload(tb[IFA_ADDRESS])) < 0) {
		m->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int route_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(a, RTA_MAX) > 0)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

/* RTA_METRICS: the RTAX_MTU metric, 0 if none */
static uint32_t metric_mtu(const struct nlattr *metrics)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, metrics) if (mnl_attr_get_type(a) == RTAX_MTU &&
						 mnl_attr_get_payload_len(a) ==
						     4) return mnl_attr_get_u32(a);
	return 0;
}

/* a multipath path's RTA_GATEWAY (the attributes after its rtnexthop) */
static void path_gw(const struct rtnexthop *rtnh, unsigned int alen, uint8_t gw[16])
{
	const struct nlattr *a = (const void *)((const uint8_t *)rtnh + RTNH_ALIGN(sizeof(*rtnh)));
	int left = (int)rtnh->rtnh_len - (int)RTNH_ALIGN(sizeof(*rtnh));

	while (mnl_attr_ok(a, left)) {
		if (mnl_attr_get_type(a) == RTA_GATEWAY && mnl_attr_get_payload_len(a) == alen) {
			memcpy(gw, mnl_attr_get_payload(a), alen);
			return;
		}
		left -= (int)MNL_ALIGN(a->nla_len);
		a = mnl_attr_next(a);
	}
}

bool nftdp_route_table_kept(const struct nftdp_route_table *t, uint8_t family, uint32_t table)
{
	int f = family == AF_INET ? 0 : 1;

	if (family == AF_INET && table == RT_TABLE_DEFAULT)
		return true;				       /* the default rule's, or a rule's */
	if (table == RT_TABLE_MAIN || table == RT_TABLE_LOCAL) /* IPv6's are route.c's */
		return family == AF_INET && t->policy[0];
	for (uint32_t i = 0; i < t->n_rules[f]; i++)
		if (t->rules[f][i].action == FR_ACT_TO_TBL && t->rules[f][i].table == table)
			return true;
	return false;
}

int nftdp_route_msg_parse(const struct nftdp_route_table *t, const struct nlmsghdr *nlh,
			  struct nftdp_route_msg *r)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[RTA_MAX + 1] = {0};
	struct nftdp_route_nh *nh = &r->nh;
	unsigned int alen;

	memset(r, 0, sizeof(*r));
	r->skip = true;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EINVAL;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return 0;
	/* cached clones are no routes; a TOS route only serves packets of
	 * that TOS, which fib's lookup would have to carry (not mirrored) */
	if ((rtm->rtm_flags & RTM_F_CLONED) || rtm->rtm_tos)
		return 0;
	alen = rtm->rtm_family == AF_INET ? 4 : 16;
	if (mnl_attr_parse(nlh, sizeof(*rtm), route_attr, tb) < 0)
		return -EINVAL;
	r->family = rtm->rtm_family;
	r->plen = rtm->rtm_dst_len;
	if (r->plen > alen * 8)
		return -EINVAL;
	r->table = tb[RTA_TABLE] && mnl_attr_get_payload_len(tb[RTA_TABLE]) == 4
		       ? mnl_attr_get_u32(tb[RTA_TABLE])
		       : rtm->rtm_table;
	if (r->table == RT_TABLE_MAIN)
		r->tbl = NFTDP_ROUTE_TBL_MAIN;
	else if (r->table == RT_TABLE_LOCAL)
		r->tbl = NFTDP_ROUTE_TBL_LOCAL;
	else
		r->tbl = NFTDP_ROUTE_TBL_OTHER;
	/* an IPv4 route whose every path is dead is skipped by
	 * fib_table_lookup (fi->fib_flags & RTNH_F_DEAD): the next route of
	 * the prefix, or a shorter prefix, answers */
	r->dead = rtm->rtm_family == AF_INET && (rtm->rtm_flags & RTNH_F_DEAD);
	if (tb[RTA_DST]) {
		if (mnl_attr_get_payload_len(tb[RTA_DST]) != alen)
			return 0;
		memcpy(r->dst, mnl_attr_get_payload(tb[RTA_DST]), alen);
	}
	r->skip = false;
	nh->type = rtm->rtm_type;
	if (tb[RTA_PRIORITY] && mnl_attr_get_payload_len(tb[RTA_PRIORITY]) == 4)
		nh->metric = mnl_attr_get_u32(tb[RTA_PRIORITY]);
	if (tb[RTA_OIF] && mnl_attr_get_payload_len(tb[RTA_OIF]) == 4)
		nh->oif[nh->n_oif++] = map_dev(t, mnl_attr_get_u32(tb[RTA_OIF]));
	if (tb[RTA_GATEWAY] && mnl_attr_get_payload_len(tb[RTA_GATEWAY]) == alen) {
		nh->gateway = true;
		memcpy(nh->gw, mnl_attr_get_payload(tb[RTA_GATEWAY]), alen);
	}
	if (tb[RTA_METRICS])
		nh->mtu = metric_mtu(tb[RTA_METRICS]);
	if (nh->gateway)
		memcpy(nh->path_gw[0], nh->gw, alen);
	nh->path_weight[0] = 1;
	if (tb[RTA_MULTIPATH]) {
		const struct rtnexthop *rtnh = mnl_attr_get_payload(tb[RTA_MULTIPATH]);
		int len = (int)mnl_attr_get_payload_len(tb[RTA_MULTIPATH]);
		struct {
			uint32_t dev;
			uint8_t gw[16], weight;
			bool dead;
		} path[NFTDP_ROUTE_MAX_PATHS];
		unsigned int n = 0, first_live = NFTDP_ROUTE_MAX_PATHS;
		bool live = false;

		r->multipath = true;
		while (len >= (int)sizeof(*rtnh) && rtnh->rtnh_len >= sizeof(*rtnh) &&
		       rtnh->rtnh_len <= len) {
			bool dead = rtnh->rtnh_flags & RTNH_F_DEAD;

			if (n < NFTDP_ROUTE_MAX_PATHS) {
				memset(path[n].gw, 0, sizeof(path[n].gw));
				path[n].dev = map_dev(t, (uint32_t)rtnh->rtnh_ifindex);
				path[n].weight = (uint8_t)(rtnh->rtnh_hops + 1);
				path[n].dead = dead;
				if (rtnh->rtnh_len > sizeof(*rtnh))
					path_gw(rtnh, alen, path[n].gw);
				if (!dead && first_live == NFTDP_ROUTE_MAX_PATHS)
					first_live = n;
				n++;
			}
			/* a path with a gateway: the route has one (RTF_GATEWAY);
			 * the gateway kept is the first live path's */
			if (rtnh->rtnh_len > sizeof(*rtnh)) {
				nh->gateway = true;
				if (!live && !dead)
					path_gw(rtnh, alen, nh->gw);
			}
			live |= !dead;
			r->n_paths++;
			len -= RTNH_ALIGN(rtnh->rtnh_len);
			rtnh = RTNH_NEXT(rtnh);
		}
		/* fib_table_lookup's res.nh_sel is the first path not dead
		 * (IPv4; FIB_LOOKUP_IGNORE_LINKSTATE keeps linkdown ones):
		 * FIB_RES_DEV is oif[0], the others follow in order.
		 * fib_info_nh_uses_dev looks at every path, dead or not: all
		 * are kept. */
		for (unsigned int i = 0; i < n; i++) {
			unsigned int from = i;

			if (rtm->rtm_family == AF_INET && first_live < n)
				from = i == 0 ? first_live : i <= first_live ? i - 1 : i;
			if (nh->n_oif >= NFTDP_ROUTE_MAX_PATHS)
				break;
			nh->oif[nh->n_oif] = path[from].dev;
			memcpy(nh->path_gw[nh->n_oif], path[from].gw, 16);
			nh->path_weight[nh->n_oif] = path[from].weight;
			if (path[from].dead)
				nh->path_dead |= (uint8_t)(1u << nh->n_oif);
			nh->n_oif++;
		}
	}
	return 0;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mirror *m = data;
	struct nftdp_route_msg r;
	bool other;
	int rc;

	if (nftdp_route_msg_parse(m->t, nlh, &r) < 0 || r.skip)
		return MNL_CB_OK;
	/* other tables are reached through rules (and IPv4's table default
	 * through the default rule): kept when a rule names them. Under
	 * custom rules the kernel no longer merges IPv4 local and main
	 * (fib_unmerge): each also gets a table of its own. */
	other = nftdp_route_table_kept(m->t, r.family, r.table);
	if (r.tbl == NFTDP_ROUTE_TBL_OTHER && !other)
		return MNL_CB_OK;
	if (r.dead) {
		/* a live route of the prefix may come later: a delta at this
		 * prefix cannot tell which one answers (delta.c) */
		rc = r.tbl == NFTDP_ROUTE_TBL_OTHER
			 ? 0
			 : nftdp_route_shadow_add(m->t, r.family, r.tbl, r.dst, r.plen);
		if (rc < 0) {
			m->err = rc;
			return MNL_CB_ERROR;
		}
		return MNL_CB_OK;
	}
	if (other) {
		rc = nftdp_route_table_add(m->t, r.family, r.table, r.dst, r.plen, &r.nh);
		if (rc < 0) {
			m->err = rc;
			return MNL_CB_ERROR;
		}
	}
	if (r.tbl == NFTDP_ROUTE_TBL_OTHER)
		return MNL_CB_OK;
	rc = nftdp_route_add(m->t, r.family, r.tbl, r.dst, r.plen, &r.nh);
	if (rc < 0 && rc != -EEXIST) {
		m->err = rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* a rule's device by name (the kernel keeps the name and resolves it as
 * devices come and go): nftdp's ifindex, NONE when absent */
static uint32_t dev_by_name(const struct nftdp_route_table *t, const struct nlattr *a)
{
	char name[NFTDP_ROUTE_IFNAMSIZ] = {0};

	memcpy(name, mnl_attr_get_payload(a),
	       mnl_attr_get_payload_len(a) < sizeof(name) - 1 ? mnl_attr_get_payload_len(a)
							      : sizeof(name) - 1);
	for (unsigned int i = 0; i < t->n_devs; i++)
		if (strncmp(t->devs[i].name, name, sizeof(name)) == 0)
			return t->devs[i].ifindex;
	return NFTDP_ROUTE_IFINDEX_NONE;
}

static void port_range(const struct nlattr *a, uint16_t range[2])
{
	const struct fib_rule_port_range *p = mnl_attr_get_payload(a);

	if (mnl_attr_get_payload_len(a) >= sizeof(*p)) {
		range[0] = p->start;
		range[1] = p->end;
	}
}

/* one rule of the dump (fib_nl_fill_rule and the family's fill), in the
 * list's order; a selector nftdp does not evaluate is noted (custom) */
static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mirror *m = data;
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	unsigned int alen = frh->family == AF_INET ? 4 : 16;
	struct nftdp_route_rule r = {
	    .family = frh->family,
	    .action = frh->action,
	    .table = frh->table,
	    .invert = frh->flags & FIB_RULE_INVERT,
	    .tos = frh->tos,
	    .src_len = frh->src_len,
	    .dst_len = frh->dst_len,
	    .uid_end = UINT32_MAX,
	    .suppress_prefixlen = -1,
	    .suppress_ifgroup = -1,
	};
	const struct nlattr *a;
	bool fwmask = false, dscp_mask = false;

	if (frh->family != AF_INET && frh->family != AF_INET6)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*frh))
	{
		uint16_t len = mnl_attr_get_payload_len(a);

		switch (mnl_attr_get_type(a)) {
		case FRA_PRIORITY:
			r.pref = mnl_attr_get_u32(a);
			break;
		case FRA_TABLE:
			r.table = mnl_attr_get_u32(a);
			break;
		case FRA_GOTO:
			r.target = mnl_attr_get_u32(a);
			break;
		case FRA_SRC:
			if (len == alen)
				memcpy(r.src, mnl_attr_get_payload(a), alen);
			break;
		case FRA_DST:
			if (len == alen)
				memcpy(r.dst, mnl_attr_get_payload(a), alen);
			break;
		case FRA_IIFNAME:
			r.iif = dev_by_name(m->t, a);
			break;
		case FRA_OIFNAME:
			r.oif = dev_by_name(m->t, a);
			break;
		case FRA_FWMARK:
			/* a non-zero mark without a mask compares all bits */
			r.mark = mnl_attr_get_u32(a);
			if (r.mark && !fwmask)
				r.mark_mask = UINT32_MAX;
			break;
		case FRA_FWMASK:
			r.mark_mask = mnl_attr_get_u32(a);
			fwmask = true;
			break;
		case FRA_SUPPRESS_PREFIXLEN:
			r.suppress_prefixlen = (int32_t)mnl_attr_get_u32(a);
			break;
		case FRA_SUPPRESS_IFGROUP:
			r.suppress_ifgroup = (int32_t)mnl_attr_get_u32(a);
			break;
		case FRA_IP_PROTO:
			r.ip_proto = mnl_attr_get_u8(a);
			break;
		case FRA_SPORT_RANGE:
			port_range(a, r.sport);
			break;
		case FRA_DPORT_RANGE:
			port_range(a, r.dport);
			break;
		case NFTDP_FRA_SPORT_MASK:
			if (len == 2)
				r.sport_mask = mnl_attr_get_u16(a);
			break;
		case NFTDP_FRA_DPORT_MASK:
			if (len == 2)
				r.dport_mask = mnl_attr_get_u16(a);
			break;
		case NFTDP_FRA_DSCP: /* the DSCP value, 0-63 */
			r.dscp_full = true;
			r.dscp = (uint8_t)(mnl_attr_get_u8(a) << 2);
			if (!dscp_mask)
				r.dscp_mask = 0xfc;
			break;
		case NFTDP_FRA_DSCP_MASK:
			r.dscp_mask = (uint8_t)(mnl_attr_get_u8(a) << 2);
			dscp_mask = true;
			break;
		case FRA_UID_RANGE:
			if (len >= sizeof(struct fib_rule_uid_range)) {
				const struct fib_rule_uid_range *u = mnl_attr_get_payload(a);

				r.uid_start = u->start;
				r.uid_end = u->end;
			}
			break;
		case FRA_PROTOCOL: /* who added it */
		case FRA_PAD:
		case FRA_FLOW: /* IPv4 realms: an attribute of the result */
			break;
		case FRA_L3MDEV:
			if (len >= 1 && mnl_attr_get_u8(a) == 0)
				break;
			/* fall through */
		default: /* tunnel id, l3mdev, the IPv6 flow label: not evaluated */
			custom(m, "an ip rule selector nftdp does not evaluate (pref, attribute)",
			       frh->family, r.pref, mnl_attr_get_type(a));
			break;
		}
	}
	if (nftdp_route_rule_add(m->t, &r) < 0) {
		m->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* one dump request and its answers, each given to cb */
static int dump(struct mnl_socket *nl, uint16_t type, uint8_t family, size_t hdrlen, mnl_cb_t cb,
		struct mirror *m)
{
	uint32_t buf[32]; /* the header and the largest family header */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	g = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	g->rtgen_family = family; /* first byte of ifinfomsg, ifaddrmsg, rtmsg */
	return nftdp_route_rtnl_talk(nl, nlh, cb, m, &m->err);
}

int nftdp_route_mirror(struct nftdp_route_table *t, const struct nftdp_route_port *ports,
		       unsigned int n_ports)
{
	struct mirror m = {.t = t, .ports = ports, .n_ports = n_ports};
	struct mnl_socket *nl;
	int rc;

	nl = nftdp_route_rtnl_open();
	if (!nl)
		return -errno;
	rc = dump(nl, RTM_GETLINK, AF_UNSPEC, sizeof(struct ifinfomsg), link_cb, &m);
	if (rc == 0)
		rc = dump(nl, RTM_GETADDR, AF_INET6, sizeof(struct ifaddrmsg), addr_cb, &m);
	/* the rules before the routes: they say which tables to keep */
	if (rc == 0)
		rc = dump(nl, RTM_GETRULE, AF_INET, sizeof(struct fib_rule_hdr), rule_cb, &m);
	/* no IPv6 in the netns: no IPv6 rules to dump */
	if (rc == 0) {
		rc = dump(nl, RTM_GETRULE, AF_INET6, sizeof(struct fib_rule_hdr), rule_cb, &m);
		if (rc == -EAFNOSUPPORT)
			rc = 0;
	}
	if (rc == 0)
		rc = nftdp_route_policy_build(t);
	if (rc == 0)
		rc = dump(nl, RTM_GETROUTE, AF_INET, sizeof(struct rtmsg), route_cb, &m);
	if (rc == 0)
		rc = dump(nl, RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg), route_cb, &m);
	if (rc == 0)
		rc = nftdp_route_policy_build(t);
	mnl_socket_close(nl);
	return rc;
}
