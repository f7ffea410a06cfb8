// SPDX-License-Identifier: BSD-3-Clause
/*
 * The mirror: one dump of the kernel's devices, IPv6 addresses and routes
 * (tables local and main) of the netns nftdp runs in, over rtnetlink with
 * libmnl, into a route table (route.c). Devices named like a port become
 * that port's ifindex; the others keep their names under
 * NFTDP_ROUTE_IFINDEX_FOREIGN + their kernel ifindex. No live updates yet.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
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
	if (nftdp_route_dev_add(m->t, idx, name) < 0) {
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
	else
		return MNL_CB_OK; /* no `ip rule` is mirrored: other tables are unused */
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
	if (tb[RTA_MULTIPATH]) {
		const struct rtnexthop *rtnh = mnl_attr_get_payload(tb[RTA_MULTIPATH]);
		int len = (int)mnl_attr_get_payload_len(tb[RTA_MULTIPATH]);

		while (len >= (int)sizeof(*rtnh) && rtnh->rtnh_len >= sizeof(*rtnh) &&
		       rtnh->rtnh_len <= len) {
			if (nh.n_oif < NFTDP_ROUTE_MAX_PATHS)
				nh.oif[nh.n_oif++] = map_dev(m, (uint32_t)rtnh->rtnh_ifindex);
			/* a path with a gateway: the route has one (RTF_GATEWAY) */
			if (rtnh->rtnh_len > sizeof(*rtnh))
				nh.gateway = true;
			len -= RTNH_ALIGN(rtnh->rtnh_len);
			rtnh = RTNH_NEXT(rtnh);
		}
	}
	rc = nftdp_route_add(m->t, rtm->rtm_family, tbl, dst, rtm->rtm_dst_len, &nh);
	if (rc < 0 && rc != -EEXIST) {
		m->err = rc;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* one dump request and its answers, each given to cb */
static int dump(struct mnl_socket *nl, uint16_t type, uint8_t family, size_t hdrlen, mnl_cb_t cb,
		struct mirror *m)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	uint32_t seq = (uint32_t)time(NULL) + type, portid = mnl_socket_get_portid(nl);
	struct rtgenmsg *g;
	ssize_t n;
	int rc;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	g->rtgen_family = family; /* first byte of ifinfomsg, ifaddrmsg, rtmsg */
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		rc = mnl_cb_run(buf, (size_t)n, seq, portid, cb, m);
		if (rc == MNL_CB_STOP)
			return 0;
		if (rc < 0)
			return m->err ? m->err : -errno;
	}
}

int nftdp_route_mirror(struct nftdp_route_table *t, const struct nftdp_route_port *ports,
		       unsigned int n_ports)
{
	struct mirror m = {.t = t, .ports = ports, .n_ports = n_ports};
	struct mnl_socket *nl;
	int rc;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		goto out;
	}
	rc = dump(nl, RTM_GETLINK, AF_UNSPEC, sizeof(struct ifinfomsg), link_cb, &m);
	if (rc == 0)
		rc = dump(nl, RTM_GETADDR, AF_INET6, sizeof(struct ifaddrmsg), addr_cb, &m);
	if (rc == 0)
		rc = dump(nl, RTM_GETROUTE, AF_INET, sizeof(struct rtmsg), route_cb, &m);
	if (rc == 0)
		rc = dump(nl, RTM_GETROUTE, AF_INET6, sizeof(struct rtmsg), route_cb, &m);
out:
	free(m.devs);
	mnl_socket_close(nl);
	return rc;
}
