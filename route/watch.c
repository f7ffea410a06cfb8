// SPDX-License-Identifier: BSD-3-Clause
/*
 * Live updates: a non-blocking rtnetlink socket in the groups the mirror
 * copies (links, IPv4/IPv6 addresses, routes and rules). It says
 * "something changed": the caller coalesces a burst of notifications (a
 * routing daemon sends thousands) into one update and, when it asked for
 * them (nftdp_route_watch_collect), gets the route messages as a batch of
 * deltas (delta.c); a link, address or rule change, or ENOBUFS (the
 * kernel dropped notifications), asks for a new dump. Neighbours
 * (RTNLGRP_NEIGH, router forwarding only) are told apart from the rest:
 * their table is small and rebuilt on its own (dataplane/nexthop.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "route_priv.h"

#define WATCH_RCVBUF (8 << 20) /* a full BGP table's worth of notifications */

struct nftdp_route_watch {
	struct mnl_socket *nl;
	bool neigh;			 /* in RTNLGRP_NEIGH */
	struct nftdp_route_batch *batch; /* where route messages go, or NULL */
};

void nftdp_route_watch_collect(struct nftdp_route_watch *w, struct nftdp_route_batch *b)
{
	w->batch = b;
}

int nftdp_route_watch_open(struct nftdp_route_watch **out)
{
	static const unsigned int groups[] = {
	    RTNLGRP_LINK,	RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE,
	    RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV4_RULE,   RTNLGRP_IPV6_RULE,
	};
	struct nftdp_route_watch *w = calloc(1, sizeof(*w));
	int rc, sz = WATCH_RCVBUF;

	if (!w)
		return -ENOMEM;
	w->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!w->nl) {
		rc = -errno;
		free(w);
		return rc;
	}
	if (mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto err;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		unsigned int g = groups[i];

		/* IPv6 may be off in the netns: its groups still exist */
		if (mnl_socket_setsockopt(w->nl, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0)
			goto err;
	}
	/* past rmem_max when privileged; a smaller buffer only means more
	 * ENOBUFS, each a full dump */
	if (setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(mnl_socket_get_fd(w->nl), SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	*out = w;
	return 0;
err:
	rc = -errno;
	mnl_socket_close(w->nl);
	free(w);
	return rc;
}

int nftdp_route_watch_fd(const struct nftdp_route_watch *w)
{
	return mnl_socket_get_fd(w->nl);
}

int nftdp_route_watch_neigh(struct nftdp_route_watch *w)
{
	unsigned int g = RTNLGRP_NEIGH;

	if (mnl_socket_setsockopt(w->nl, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0)
		return -errno;
	w->neigh = true;
	return 0;
}

/* what one notification changes of what the mirrors hold (a mask) */
static int relevant(const struct nlmsghdr *nlh)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		return NFTDP_ROUTE_WATCH_NEIGH;
	case RTM_NEWROUTE:
	case RTM_DELROUTE: {
		const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
			return NFTDP_ROUTE_WATCH_ROUTES;
		/* IPv6 route cache (exceptions) entries are no routes */
		return rtm->rtm_flags & RTM_F_CLONED ? 0 : NFTDP_ROUTE_WATCH_ROUTES;
	}
	case RTM_NEWLINK:
	case RTM_DELLINK:
	case RTM_NEWADDR:
	case RTM_DELADDR:
	case RTM_NEWRULE:
	case RTM_DELRULE:
		return NFTDP_ROUTE_WATCH_ROUTES;
	default:
		return 0;
	}
}

int nftdp_route_watch_read(struct nftdp_route_watch *w)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int changed = 0;

	for (;;) {
		ssize_t n = mnl_socket_recvfrom(w->nl, buf, sizeof(buf));
		const struct nlmsghdr *nlh;
		int len;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return changed;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* lost some: only a new dump is right; keep
				 * draining what is queued */
				changed = NFTDP_ROUTE_WATCH_ROUTES |
					  (w->neigh ? NFTDP_ROUTE_WATCH_NEIGH : 0);
				if (w->batch)
					nftdp_route_batch_set_full(w->batch);
				continue;
			}
			return -errno;
		}
		len = (int)n;
		for (nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			int r = relevant(nlh);

			changed |= r;
			if (!w->batch || !(r & NFTDP_ROUTE_WATCH_ROUTES))
				continue;
			/* a route or link: kept as a delta; an address or
			 * rule: a refill (batch_add marks the batch full) */
			nftdp_route_batch_add(w->batch, nlh, nlh->nlmsg_len);
		}
	}
}

void nftdp_route_watch_close(struct nftdp_route_watch *w)
{
	if (!w)
		return;
	mnl_socket_close(w->nl);
	free(w);
}
