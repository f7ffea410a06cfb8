// SPDX-License-Identifier: BSD-3-Clause
/*
 * The mirror: one dump of the kernel's devices, IPv6 addresses and routes
 * (tables local and main) of the netns nftdp runs in, over rtnetlink with
 * libmnl, into a route table (route.c). Devices named like a port become
 * that port's ifindex; the others keep their names under
 * NFTDP_ROUTE_IFINDEX_FOREIGN + their kernel ifindex. Also dumps the
 * `ip rule`s, to tell whether the kernel's lookup goes beyond local and
 * main (nftdp_route_policy_custom). Live updates: watch.c says when to
 * dump again.
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

struct kdev {
	uint32_t kidx; /* kernel ifindex */
	uint32_t idx;  /* nftdp's */
};

struct mirror {
	struct nftdp_route_table *t;
	const struct nftdp_route_port *ports;
	unsigned int n_ports;
	struct kdev *devs;
	unsigned int n_devs;
	int err;
};

static uint32_t map_dev(const struct mirror *m, uint32_t kidx)
{
	for (unsigned int i = 0; i < m->n_devs; i++)
		if (m->devs[i].kidx == kidx)
			return m->devs[i].idx;
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
	struct kdev *d;
	uint32_t idx;

	mnl_attr_parse(nlh, sizeof(*ifi), link_attr, tb);
	if (!tb[IFLA_IFNAME])
		return MNL_CB_OK;
	name = mnl_attr_get_str(tb[IFLA_IFNAME]);
	idx = NFTDP_ROUTE_IFINDEX_FOREIGN + (uint32_t)ifi->ifi_index;
	for (unsigned int i = 0; i < m->n_ports; i++)
		if (strncmp(m->ports[i].name, name, IFNAMSIZ) == 0)
			idx = m->ports[i].ifindex;
	d = realloc(m->devs, (m->n_devs + 1) * sizeof(*d));
	if (!d) {
		m->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	m->devs = d;
	d[m->n_devs++] = (struct kdev){.kidx = (uint32_t)ifi->ifi_index, .idx = idx};
	if (nftdp_route_dev_add(m->t, idx, name,
				tb[IFLA_MTU] && mnl_attr_get_payload_len(tb[IFLA_MTU]) == 4
				    ? mnl_attr_get_u32(tb[IFLA_MTU])
				    : 0) < 0) {
		m->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
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
	if (nftdp_route_addr6_add(m->t, map_dev(m, ifa->ifa_index),
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

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mirror *m = data;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[RTA_MAX + 1] = {0};
	struct nftdp_route_nh nh = {0};
	uint8_t dst[16] = {0};
	unsigned int alen = rtm->rtm_family == AF_INET ? 4 : 16;
	uint32_t table;
	enum nftdp_route_tbl tbl;
	int rc;

	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return MNL_CB_OK;
	/* cached clones are no routes; a TOS route only serves packets of
	 * that TOS, which fib's lookup would have to carry (not mirrored) */
	if ((rtm->rtm_flags & RTM_F_CLONED) || rtm->rtm_tos)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr, tb);
	table = tb[RTA_TABLE] ? mnl_attr_get_u32(tb[RTA_TABLE]) : rtm->rtm_table;
	if (table == RT_TABLE_MAIN)
		tbl = NFTDP_ROUTE_TBL_MAIN;
	else if (table == RT_TABLE_LOCAL)
		tbl = NFTDP_ROUTE_TBL_LOCAL;
	else {
		/* other tables are reached only through rules (rule_cb), but
		 * table default is behind a default IPv4 rule */
		if (table == RT_TABLE_DEFAULT && rtm->rtm_family == AF_INET)
			custom(m, "a route in table default", AF_INET, table, rtm->rtm_dst_len);
		return MNL_CB_OK;
	}
	/* an IPv4 route whose every path is dead is skipped by
	 * fib_table_lookup (fi->fib_flags & RTNH_F_DEAD): the next route of
	 * the prefix, or a shorter prefix, answers */
	if (rtm->rtm_family == AF_INET && (rtm->rtm_flags & RTNH_F_DEAD))
		return MNL_CB_OK;
	if (tb[RTA_DST]) {
		if (mnl_attr_get_payload_len(tb[RTA_DST]) != alen)
			return MNL_CB_OK;
		memcpy(dst, mnl_attr_get_payload(tb[RTA_DST]), alen);
	}
	nh.type = rtm->rtm_type;
	if (tb[RTA_OIF])
		nh.oif[nh.n_oif++] = map_dev(m, mnl_attr_get_u32(tb[RTA_OIF]));
	if (tb[RTA_GATEWAY] && mnl_attr_get_payload_len(tb[RTA_GATEWAY]) == alen) {
		nh.gateway = true;
		memcpy(nh.gw, mnl_attr_get_payload(tb[RTA_GATEWAY]), alen);
	}
	if (tb[RTA_METRICS])
		nh.mtu = metric_mtu(tb[RTA_METRICS]);
	if (nh.gateway)
		memcpy(nh.path_gw[0], nh.gw, alen);
	nh.path_weight[0] = 1;
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

		while (len >= (int)sizeof(*rtnh) && rtnh->rtnh_len >= sizeof(*rtnh) &&
		       rtnh->rtnh_len <= len) {
			bool dead = rtnh->rtnh_flags & RTNH_F_DEAD;

			if (n < NFTDP_ROUTE_MAX_PATHS) {
				memset(path[n].gw, 0, sizeof(path[n].gw));
				path[n].dev = map_dev(m, (uint32_t)rtnh->rtnh_ifindex);
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
				nh.gateway = true;
				if (!live && !dead)
					path_gw(rtnh, alen, nh.gw);
			}
			live |= !dead;
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
			if (nh.n_oif >= NFTDP_ROUTE_MAX_PATHS)
				break;
			nh.oif[nh.n_oif] = path[from].dev;
			memcpy(nh.path_gw[nh.n_oif], path[from].gw, 16);
			nh.path_weight[nh.n_oif] = path[from].weight;
			if (path[from].dead)
				nh.path_dead |= (uint8_t)(1u << nh.n_oif);
			nh.n_oif++;
		}
	}
	rc = nftdp_route_add(m->t, rtm->rtm_family, tbl, dst, rtm->rtm_dst_len, &nh);
	if (rc < 0 && rc != -EEXIST) {
		m->err = rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* The rules fib_rules installs in a new netns (fib_default_rules_init,
 * fib6_rules_net_init): pref 0 local, 32766 main, and for IPv4 32767
 * default. Any other rule, or one with a selector, steers some lookups
 * elsewhere. */
static bool default_rule(uint8_t family, uint32_t prio, uint32_t table)
{
	return (prio == 0 && table == RT_TABLE_LOCAL) ||
	       (prio == 32766 && table == RT_TABLE_MAIN) ||
	       (family == AF_INET && prio == 32767 && table == RT_TABLE_DEFAULT);
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mirror *m = data;
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	uint32_t prio = 0, table = frh->table;
	bool selector = frh->src_len || frh->dst_len || frh->tos ||
			(frh->flags & FIB_RULE_INVERT) || frh->action != FR_ACT_TO_TBL;

	if (frh->family != AF_INET && frh->family != AF_INET6)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*frh))
	{
		switch (mnl_attr_get_type(a)) {
		case FRA_PRIORITY:
			prio = mnl_attr_get_u32(a);
			break;
		case FRA_TABLE:
			table = mnl_attr_get_u32(a);
			break;
		case FRA_PROTOCOL: /* who added it: no selector */
		case FRA_PAD:
			break;
		case FRA_SUPPRESS_PREFIXLEN: /* -1: none (fib_nl_fill_rule puts it always) */
		case FRA_SUPPRESS_IFGROUP:
			selector |=
			    mnl_attr_get_payload_len(a) < 4 || mnl_attr_get_u32(a) != UINT32_MAX;
			break;
		default: /* iif, oif, fwmark, uid, ports, l3mdev ... */
			selector = true;
			break;
		}
	}
	if (selector || !default_rule(frh->family, prio, table))
		custom(m, "an ip rule (pref, table)", frh->family, prio, table);
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
	if (rc == 0)
		rc = dump(nl, RTM_GETROUTE, AF_INET, sizeof(struct rtmsg), route_cb, &m);
	if (rc == 0)
		rc = dump(nl, RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg), route_cb, &m);
	if (rc == 0)
		rc = dump(nl, RTM_GETRULE, AF_INET, sizeof(struct fib_rule_hdr), rule_cb, &m);
	/* no IPv6 in the netns: no IPv6 rules to dump */
	if (rc == 0) {
		rc = dump(nl, RTM_GETRULE, AF_INET6, sizeof(struct fib_rule_hdr), rule_cb, &m);
		if (rc == -EAFNOSUPPORT)
			rc = 0;
	}
	free(m.devs);
	mnl_socket_close(nl);
	return rc;
}
