/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * route/ private: the table's insides (route.c) that the mirror (mirror.c)
 * fills through the public calls.
 */
#ifndef NFTDP_ROUTE_PRIV_H
#define NFTDP_ROUTE_PRIV_H

#include <libmnl/libmnl.h>
#include <linux/if.h>

#include "nftdp_route.h"

struct rte_fib;
struct rte_fib6;

struct nftdp_route_addr6 {
	uint32_t ifindex;
	uint8_t addr[16];
};

struct nftdp_route_dev {
	uint32_t ifindex;
	uint32_t mtu;
	uint32_t group; /* IFLA_GROUP */
	uint32_t kidx;	/* the kernel's ifindex (0: not from a dump) */
	uint32_t flags; /* ifi_flags & NFTDP_ROUTE_LINK_FLAGS */
	char name[NFTDP_ROUTE_IFNAMSIZ];
};

/* a table that rules name, in rte_rib / rte_rib6 (longest prefix, no
 * DIR24/TRIE: policy tables are small; rule.c) */
struct nftdp_route_xtable {
	uint32_t id;
	uint8_t family;
	struct rte_rib *rib4;
	struct rte_rib6 *rib6;
};

/* a route waiting for its table's RIB (nftdp_route_policy_build) */
struct nftdp_route_pend {
	uint32_t table, nh;
	uint8_t family, plen;
};

struct nftdp_route_table {
	unsigned int seq;
	struct rte_fib *fib4;
	struct rte_fib6 *fib6[2];  /* by enum nftdp_route_tbl */
	struct nftdp_route_nh *nh; /* [0]: no route */
	uint32_t n_nh, cap_nh, nh_max;
	unsigned int max_routes;   /* rte_fib's size (nftdp_route_table_create_sized) */
	struct nftdp_route_nh *ll; /* link-local IPv6 routes, per device */
	uint32_t n_ll;
	struct nftdp_route_addr6 *addr6;
	uint32_t n_addr6;
	struct nftdp_route_dev *devs;
	uint32_t n_devs;
	unsigned int n4, n6;
	/* what the kernel's lookup would consult beyond tables local and main
	 * (a non-default `ip rule`, a route in table default): mirror.c */
	unsigned int n_custom;
	char custom_why[128];
	/* policy routing (rule.c): by family, 0 IPv4, 1 IPv6 */
	struct nftdp_route_rule *rules[2];
	uint32_t n_rules[2], cap_rules[2];
	bool policy[2];	     /* the rules are not the default ones */
	int32_t xt_default4; /* IPv4 table default (253) when it has routes, -1 */
	struct nftdp_route_xtable *xt;
	uint32_t n_xt;
	struct nftdp_route_pend *pend;
	uint32_t n_pend, cap_pend;
	unsigned int xt_seq; /* unique rte_rib names */
	/* deltas (delta.c): next hops given back by a delete or a replace,
	 * reused before the table grows */
	uint32_t *nh_free;
	uint32_t n_free, cap_free;
	/* prefixes the kernel holds more than one route of (a higher
	 * metric, IPv4 local over main, a dead route): a delta there cannot
	 * say which one answers, only a refill can */
	struct nftdp_route_shadow *shadow;
	uint32_t n_shadow, cap_shadow; /* cap: a power of two, or 0 */
};

/* a prefix in the shadow set (IPv4: tbl 0, local and main are merged) */
#define NFTDP_ROUTE_SHADOW_ALTS 4
struct nftdp_route_shadow {
	uint8_t used, family, tbl, plen;
	uint8_t dst[16]; /* the key ends here */
	/* IPv4: every route of the prefix, all of one table, none dead, in
	 * the kernel's order (by metric; TOS routes are not mirrored): the
	 * next hops in t->nh, alt[0] the one rte_fib answers with. A delta
	 * there can say which route answers (delta.c). */
	bool exact;
	uint8_t n_alt;
	uint32_t alt[NFTDP_ROUTE_SHADOW_ALTS];
};

/* one RTM_NEWROUTE / RTM_DELROUTE as the mirror reads it (mirror.c) */
struct nftdp_route_msg {
	bool skip;	      /* nothing the mirror keeps (cloned, TOS, not IP) */
	bool dead;	      /* IPv4: every path dead (fib_table_lookup skips it) */
	bool multipath;	      /* RTA_MULTIPATH */
	unsigned int n_paths; /* its rtnexthops, also those past NFTDP_ROUTE_MAX_PATHS */
	uint8_t family, plen;
	uint32_t table;		  /* the kernel's id */
	enum nftdp_route_tbl tbl; /* main, local or other */
	uint8_t dst[16];
	struct nftdp_route_nh nh; /* metric: RTA_PRIORITY */
};

/* mirror.c: parse a route message; devices by t's map. 0 (r->skip says
 * whether it matters), -EINVAL (malformed). */
int nftdp_route_msg_parse(const struct nftdp_route_table *t, const struct nlmsghdr *nlh,
			  struct nftdp_route_msg *r);
/* the link flags routes depend on (IPv4 marks or flushes routes of a
 * device down or without carrier without a route notification) */
#define NFTDP_ROUTE_LINK_FLAGS (IFF_UP | IFF_RUNNING | IFF_LOWER_UP)
/* mirror.c: whether an RTM_NEWLINK changes nothing t mirrors (name, mtu,
 * group, NFTDP_ROUTE_LINK_FLAGS): promiscuity, statistics and the like */
bool nftdp_route_link_same(const struct nftdp_route_table *t, const struct nlmsghdr *nlh);
/* mirror.c: whether a route of this table goes into a policy table (rule.c) */
bool nftdp_route_table_kept(const struct nftdp_route_table *t, uint8_t family, uint32_t table);

/* route.c: the shadow set, and the next hop at a prefix of local/main */
int nftdp_route_shadow_add(struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
			   const uint8_t *dst, uint8_t plen);
bool nftdp_route_shadow_has(const struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
			    const uint8_t *dst, uint8_t plen);
/* the prefix's entry, NULL if none; shadow_new4 makes an exact one of
 * the route at h alone (NULL: no memory) */
struct nftdp_route_shadow *nftdp_route_shadow_get(struct nftdp_route_table *t, int family,
						  enum nftdp_route_tbl tbl, const uint8_t *dst,
						  uint8_t plen);
struct nftdp_route_shadow *nftdp_route_shadow_new4(struct nftdp_route_table *t,
						   enum nftdp_route_tbl tbl, const uint8_t *dst,
						   uint8_t plen, uint32_t h);
void nftdp_route_nh_free(struct nftdp_route_table *t, uint32_t idx);
uint32_t nftdp_route_exact(struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
			   const uint8_t *dst, uint8_t plen);
bool nftdp_route_is_ll6(const uint8_t *dst, uint8_t plen);

/* rtnl.c: a NETLINK_ROUTE socket bound to an automatic port id (NULL with
 * errno set), and one request on it: nlh (its seq set here) sent, every
 * answer given to cb (may be NULL) until the dump's NLMSG_DONE or the
 * request's ack. 0, or -errno: the kernel's error, or *cb_err where cb
 * failed and set it. Control path. */
struct mnl_socket *nftdp_route_rtnl_open(void);
int nftdp_route_rtnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data,
			  const int *cb_err);

/* route.c, for rule.c */
int nftdp_route_nh_add(struct nftdp_route_table *t, const struct nftdp_route_nh *nh, uint32_t *idx);
void nftdp_route_mask_prefix(uint8_t *a, unsigned int size, uint8_t plen);
const struct nftdp_route_nh *nftdp_route_lookup6_tbl(const struct nftdp_route_table *t,
						     const uint8_t daddr[16], uint32_t oif,
						     enum nftdp_route_tbl tbl);

/* rule.c: forget rules and policy tables (reset, destroy) */
void nftdp_route_policy_clear(struct nftdp_route_table *t);

#endif /* NFTDP_ROUTE_PRIV_H */
