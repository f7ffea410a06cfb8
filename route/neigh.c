// SPDX-License-Identifier: BSD-3-Clause
/*
 * The neighbour mirror: the kernel's ARP and ND entries (RTM_GETNEIGH,
 * net/core/neighbour.c) of the devices named like a port, in an
 * open-addressing table keyed by {family, port ifindex, address} that
 * workers read without locks once it is published. Only entries the
 * kernel would send to are kept: a state in NUD_VALID (reachable, stale,
 * delay, probe, permanent, noarp) with a 6-byte lladdr, as neigh_output
 * takes the fast path only for a connected neighbour. Live updates:
 * watch.c says when (RTNLGRP_NEIGH), dataplane/nexthop.c dumps again into
 * a new table and swaps it in.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "route_priv.h"

struct neigh_entry {
	uint32_t ifindex; /* 0: empty slot */
	uint8_t family;
	uint8_t lladdr[NFTDP_ROUTE_ALEN];
	uint8_t addr[16];
};

struct nftdp_route_neigh {
	uint32_t mask; /* slots - 1, a power of two minus one */
	uint32_t n;
	struct neigh_entry *e;
};

#define NEIGH_SLOTS0 64u

int nftdp_route_neigh_create(struct nftdp_route_neigh **out)
{
	struct nftdp_route_neigh *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->e = calloc(NEIGH_SLOTS0, sizeof(*t->e));
	if (!t->e) {
		free(t);
		return -ENOMEM;
	}
	t->mask = NEIGH_SLOTS0 - 1;
	*out = t;
	return 0;
}

void nftdp_route_neigh_destroy(struct nftdp_route_neigh *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}

unsigned int nftdp_route_neigh_count(const struct nftdp_route_neigh *t)
{
	return t->n;
}

static uint32_t neigh_hash(uint8_t family, uint32_t ifindex, const uint8_t *addr)
{
	/* FNV-1a over what the key holds: the table is small and built once */
	uint32_t h = 2166136261u ^ family;
	unsigned int alen = family == AF_INET ? 4 : 16;

	h = (h ^ ifindex) * 16777619u;
	for (unsigned int i = 0; i < alen; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h ^ (h >> 15);
}

static struct neigh_entry *slot(const struct nftdp_route_neigh *t, uint8_t family, uint32_t ifindex,
				const uint8_t *addr, bool *found)
{
	unsigned int alen = family == AF_INET ? 4 : 16;
	uint32_t i = neigh_hash(family, ifindex, addr) & t->mask;

	/* at most half full: an empty slot ends every probe */
	for (;; i = (i + 1) & t->mask) {
		struct neigh_entry *e = &t->e[i];

		if (!e->ifindex) {
			*found = false;
			return e;
		}
		if (e->ifindex == ifindex && e->family == family &&
		    memcmp(e->addr, addr, alen) == 0) {
			*found = true;
			return e;
		}
	}
}

static int grow(struct nftdp_route_neigh *t)
{
	struct neigh_entry *old = t->e;
	uint32_t n_old = t->mask + 1;
	struct neigh_entry *e = calloc((size_t)n_old * 2, sizeof(*e));

	if (!e)
		return -ENOMEM;
	t->e = e;
	t->mask = n_old * 2 - 1;
	for (uint32_t i = 0; i < n_old; i++) {
		bool found;

		if (old[i].ifindex)
			*slot(t, old[i].family, old[i].ifindex, old[i].addr, &found) = old[i];
	}
	free(old);
	return 0;
}

int nftdp_route_neigh_add(struct nftdp_route_neigh *t, int family, uint32_t ifindex,
			  const void *addr, const uint8_t lladdr[NFTDP_ROUTE_ALEN])
{
	struct neigh_entry *e;
	bool found;

	if ((family != AF_INET && family != AF_INET6) || ifindex == 0)
		return -EINVAL;
	if ((t->n + 1) * 2 > t->mask + 1 && grow(t) < 0)
		return -ENOMEM;
	e = slot(t, (uint8_t)family, ifindex, addr, &found);
	if (!found) {
		e->ifindex = ifindex;
		e->family = (uint8_t)family;
		memset(e->addr, 0, sizeof(e->addr));
		memcpy(e->addr, addr, family == AF_INET ? 4 : 16);
		t->n++;
	}
	memcpy(e->lladdr, lladdr, NFTDP_ROUTE_ALEN);
	return 0;
}

const uint8_t *nftdp_route_neigh_lookup(const struct nftdp_route_neigh *t, int family,
					uint32_t ifindex, const void *addr)
{
	const struct neigh_entry *e;
	bool found;

	if (!t || t->n == 0)
		return NULL;
	e = slot(t, (uint8_t)family, ifindex, addr, &found);
	return found ? e->lladdr : NULL;
}

bool nftdp_route_neigh_state_usable(uint16_t state)
{
	/* NUD_VALID: what neigh_output / neigh_resolve_output send to at once */
	return (state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT |
			 NUD_NOARP)) != 0;
}

/* the dump's state */
struct neigh_dump {
	struct nftdp_route_neigh *t;
	uint32_t kidx[NFTDP_ROUTE_NEIGH_PORTS]; /* kernel ifindex of each port's device */
	uint32_t idx[NFTDP_ROUTE_NEIGH_PORTS];	/* its nftdp ifindex */
	unsigned int n;
	int err;
};

static int neigh_attr(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_type_valid(a, NDA_MAX) > 0)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	struct neigh_dump *d = data;
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NDA_MAX + 1] = {0};
	unsigned int alen;
	uint32_t idx = 0;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ndm)))
		return MNL_CB_OK;
	if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6)
		return MNL_CB_OK;
	if ((ndm->ndm_flags & NTF_PROXY) || !nftdp_route_neigh_state_usable(ndm->ndm_state))
		return MNL_CB_OK;
	for (unsigned int i = 0; i < d->n; i++)
		if (d->kidx[i] == (uint32_t)ndm->ndm_ifindex)
			idx = d->idx[i];
	if (!idx)
		return MNL_CB_OK; /* not a port's device */
	mnl_attr_parse(nlh, sizeof(*ndm), neigh_attr, tb);
	alen = ndm->ndm_family == AF_INET ? 4 : 16;
	if (!tb[NDA_DST] || mnl_attr_get_payload_len(tb[NDA_DST]) != alen || !tb[NDA_LLADDR] ||
	    mnl_attr_get_payload_len(tb[NDA_LLADDR]) != NFTDP_ROUTE_ALEN)
		return MNL_CB_OK;
	if (nftdp_route_neigh_add(d->t, ndm->ndm_family, idx, mnl_attr_get_payload(tb[NDA_DST]),
				  mnl_attr_get_payload(tb[NDA_LLADDR])) < 0) {
		d->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

int nftdp_route_neigh_mirror(struct nftdp_route_neigh *t, const struct nftdp_route_port *ports,
			     unsigned int n_ports)
{
	struct neigh_dump d = {.t = t};
	uint32_t buf[16]; /* the header and ndmsg */
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;
	int rc;

	/* a port's device by name now: a rename shows as RTM_NEWLINK, which
	 * makes the route mirror dump again, not this one (docs/route.md) */
	for (unsigned int i = 0; i < n_ports && d.n < NFTDP_ROUTE_NEIGH_PORTS; i++) {
		unsigned int k = if_nametoindex(ports[i].name);

		if (k) {
			d.kidx[d.n] = k;
			d.idx[d.n++] = ports[i].ifindex;
		}
	}
	if (!d.n)
		return 0;
	nl = nftdp_route_rtnl_open();
	if (!nl)
		return -errno;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_UNSPEC; /* ARP and ND in one dump */
	rc = nftdp_route_rtnl_talk(nl, nlh, neigh_cb, &d, &d.err);
	mnl_socket_close(nl);
	return rc;
}

int nftdp_route_neigh_resolve(const char *ifname, int family, const void *addr)
{
	uint32_t buf[32]; /* the header, ndmsg and NDA_DST */
	unsigned int k = if_nametoindex(ifname);
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;
	int rc;

	if (!k)
		return -ENODEV;
	if (family != AF_INET && family != AF_INET6)
		return -EINVAL;
	nl = nftdp_route_rtnl_open();
	if (!nl)
		return -errno;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWNEIGH;
	/* neigh_add creates only with NLM_F_CREATE; NTF_USE leaves the state
	 * alone and starts resolution (neigh_event_send) */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (uint8_t)family;
	ndm->ndm_ifindex = (int)k;
	ndm->ndm_state = NUD_NONE;
	ndm->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, family == AF_INET ? 4 : 16, addr);
	rc = nftdp_route_rtnl_talk(nl, nlh, NULL, NULL, NULL);
	mnl_socket_close(nl);
	return rc;
}
