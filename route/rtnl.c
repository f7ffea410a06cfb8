// SPDX-License-Identifier: BSD-3-Clause
/*
 * One request to the kernel's rtnetlink and its answers, for the route
 * mirror (mirror.c: links, addresses, routes, rules) and the neighbour
 * mirror (neigh.c: the neighbour dump, a resolution request). watch.c
 * keeps its own socket: it joins groups and is read without blocking.
 */
#include <errno.h>
#include <time.h>

#include "route_priv.h"

struct mnl_socket *nftdp_route_rtnl_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	int err;

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = errno;
		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	return nl;
}

int nftdp_route_rtnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data,
			  const int *cb_err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = (uint32_t)time(NULL) + nlh->nlmsg_type;
	uint32_t portid = mnl_socket_get_portid(nl);

	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		int rc;

		if (n < 0)
			return -errno;
		/* STOP: the dump's NLMSG_DONE or an ack without error */
		rc = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
		if (rc == MNL_CB_STOP)
			return 0;
		if (rc < 0)
			return cb_err && *cb_err ? *cb_err : -errno;
	}
}
