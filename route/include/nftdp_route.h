/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp route table: the kernel's IPv4 and IPv6 routes and addresses, as
 * the fib expression asks for them (net/ipv4/fib_trie.c, net/ipv6/route.c).
 *
 * IPv4 keeps one longest-prefix table over the kernel's local and main
 * tables, as the kernel's merged trie does while no `ip rule` was added (a
 * local entry wins a prefix both have). IPv6 keeps two, local and main,
 * looked up in that order (fib6_rule_lookup without custom rules). Both are
 * DPDK's rte_fib / rte_fib6; a lookup gives an index into a small table of
 * next hops: {type (RTN_*), output devices, gateway}. Devices are named by
 * the ifindex nftdp gives ports (port P is P + 1); a device that is not a
 * port gets NFTDP_ROUTE_IFINDEX_FOREIGN + its kernel ifindex, so a lookup
 * that leads to it is still "some other device" and its name still known.
 *
 * Usage (control thread, before workers start):
 *   nftdp_route_table_create()
 *   nftdp_route_add() / nftdp_route_addr6_add() / nftdp_route_dev_add(),
 *   or nftdp_route_mirror() that dumps the running kernel's netns into them
 *   publish the pointer; workers call nftdp_route_lookup4/6(),
 *   nftdp_route_addr6_on(), nftdp_route_dev_name()
 *   nftdp_route_table_destroy() once no worker reads it.
 *
 * Threading: a table is filled by one thread and read-only once published:
 * any number of workers read it without locks. Live updates swap whole
 * tables (dataplane/fib.c): nftdp_route_watch_*() say when to dump again,
 * nftdp_route_table_reset() empties a table no worker reads any more.
 */
#ifndef NFTDP_ROUTE_H
#define NFTDP_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

#define NFTDP_ROUTE_MAX_PATHS 4			/**< devices kept per multipath route */
#define NFTDP_ROUTE_IFINDEX_FOREIGN 0x40000000u /**< + kernel ifindex: not a port */
#define NFTDP_ROUTE_IFNAMSIZ 16

enum nftdp_route_tbl {
	NFTDP_ROUTE_TBL_MAIN = 0, /**< RT_TABLE_MAIN (254) */
	NFTDP_ROUTE_TBL_LOCAL,	  /**< RT_TABLE_LOCAL (255) */
	NFTDP_ROUTE_TBL_OTHER,	  /**< a table only rules reach (policy routing) */
};

/** A route's next hop, as a lookup returns it. */
struct nftdp_route_nh {
	uint8_t type;	 /**< RTN_UNICAST, RTN_LOCAL, RTN_BROADCAST, RTN_ANYCAST,
			      RTN_MULTICAST, RTN_BLACKHOLE, RTN_UNREACHABLE, RTN_PROHIBIT, RTN_THROW */
	uint8_t n_oif;	 /**< devices in oif[] (a reject route may have none) */
	uint8_t plen;	 /**< the route's prefix length */
	bool gateway;	 /**< via a gateway (RTF_GATEWAY) */
	uint8_t tbl;	 /**< enum nftdp_route_tbl it came from (set by nftdp_route_add;
			      NFTDP_ROUTE_TBL_OTHER: nftdp_route_table_add) */
	uint8_t family;	 /**< AF_INET or AF_INET6 (set by nftdp_route_add) */
	uint8_t dst[16]; /**< the route's prefix (IPv4 in the first 4 bytes) */
	uint8_t gw[16];	 /**< gateway address (IPv4 in the first 4 bytes); multipath:
			      the first live path's */
	uint32_t mtu;	 /**< the route's mtu metric (RTAX_MTU), 0: the device's */
	uint32_t metric; /**< its priority (RTA_PRIORITY): which route of a prefix
			      answers; deltas compare it */
	uint32_t oif[NFTDP_ROUTE_MAX_PATHS]; /**< nftdp ifindex of each path */
	/** each path's gateway (zeros: none, the destination is on link), in
	 * the order of oif[]: router forwarding's next hop */
	uint8_t path_gw[NFTDP_ROUTE_MAX_PATHS][16];
	uint8_t path_weight[NFTDP_ROUTE_MAX_PATHS]; /**< rtnh_hops + 1 (1: single path) */
	uint8_t path_dead; /**< bit i: path i is dead or its link down (RTNH_F_DEAD, _LINKDOWN) */
};

struct nftdp_route_table;

/**
 * An empty table (no route, no address, no device). 0, -ENOMEM, or the
 * negative rte_errno of rte_fib_create (DPDK's memory must be up: EAL).
 * Control-path.
 */
int nftdp_route_table_create(struct nftdp_route_table **out);
/**
 * The same with room for max_routes routes (IPv4 and IPv6 together, and
 * per family in rte_fib's RIB); above 65536 the next hops take 4 bytes
 * (rte_fib DIR24_8_4B / TRIE_4B: about 200 MiB a table instead of 100).
 * 0: the default size. Control-path.
 */
int nftdp_route_table_create_sized(struct nftdp_route_table **out, unsigned int max_routes);
/** The max_routes a table was made for. */
unsigned int nftdp_route_capacity(const struct nftdp_route_table *t);
/** Free a table no worker reads any more. NULL is a no-op. Control-path. */
void nftdp_route_table_destroy(struct nftdp_route_table *t);

/**
 * Empty t again (no route, address, device or policy note), keeping its
 * rte_fib / rte_fib6: refilling a table no worker reads any more costs
 * its routes, not the ~100 MiB of a new one. 0, or rte_fib's negative
 * errno (t is then unusable: destroy it). Control-path.
 */
int nftdp_route_table_reset(struct nftdp_route_table *t);

/**
 * Add a route: family AF_INET (addr 4 bytes) or AF_INET6 (16), prefix
 * length plen, to table tbl. The first route of a prefix stays (the dump
 * gives the lowest metric first). 0, -EEXIST (prefix already there),
 * -EINVAL, -ENOSPC (next-hop table full), -ENOMEM. Control-path.
 */
int nftdp_route_add(struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
		    const void *addr, uint8_t plen, const struct nftdp_route_nh *nh);

/** An IPv6 address configured on device ifindex (nf_ipv6_chk_addr). 0, -ENOMEM. */
int nftdp_route_addr6_add(struct nftdp_route_table *t, uint32_t ifindex, const uint8_t addr[16]);
/** A device's name, for oifname results, and its mtu. 0, -ENOMEM. Control-path. */
int nftdp_route_dev_add(struct nftdp_route_table *t, uint32_t ifindex, const char *name,
			uint32_t mtu);

/**
 * Longest-prefix match of daddr (network byte order) over local and main
 * (fib_lookup / the merged trie). NULL: no route. Packet-path, any thread.
 */
const struct nftdp_route_nh *nftdp_route_lookup4(const struct nftdp_route_table *t, uint32_t daddr);
/**
 * IPv6 route for daddr: local table, then main. A link-local or multicast
 * daddr looks only at routes of device oif (RT6_LOOKUP_F_IFACE; oif 0:
 * any device's). NULL: no route.
 * Packet-path, any thread.
 */
const struct nftdp_route_nh *nftdp_route_lookup6(const struct nftdp_route_table *t,
						 const uint8_t daddr[16], uint32_t oif);
/** Whether addr is configured on device ifindex. Packet-path, any thread. */
bool nftdp_route_addr6_on(const struct nftdp_route_table *t, const uint8_t addr[16],
			  uint32_t ifindex);
/** Device ifindex's name, NULL if unknown. Packet-path, any thread. */
const char *nftdp_route_dev_name(const struct nftdp_route_table *t, uint32_t ifindex);
/** Device ifindex's mtu, 0 if unknown. Packet-path, any thread. */
uint32_t nftdp_route_dev_mtu(const struct nftdp_route_table *t, uint32_t ifindex);

/**
 * The path of a multipath route a flow of hash `hash` takes: hash-threshold
 * over the live paths by weight (fib_select_multipath). A single-path
 * route gives 0; -1: the route has no device. Packet-path, any thread.
 */
int nftdp_route_path_select(const struct nftdp_route_nh *nh, uint32_t hash);

/** The keys of the kernel's multipath hash (the fields of struct
 * flow_keys that fib_multipath_hash / rt6_multipath_hash fill). */
struct nftdp_route_mp_keys {
	bool v6;
	uint8_t saddr[16], daddr[16]; /**< IPv4 in the first 4 bytes */
	uint32_t flow_label;	      /**< IPv6: as ip6_flowlabel() reads it (memory order) */
	uint8_t ip_proto;
	uint16_t sport, dport; /**< network order, as flow_keys holds them */
};

/**
 * fib_multipath_hash_from_keys: SipHash-2-4 of the keys laid out as
 * struct flow_keys (made symmetric by __flow_hash_consistentify) under
 * the key net.ipv4.fib_multipath_hash_seed makes, then `>> 1` as
 * fib_multipath_hash / rt6_multipath_hash return it (31 bits). Packet-path.
 */
uint32_t nftdp_route_mp_hash(uint32_t seed, const struct nftdp_route_mp_keys *k);
/** The same before `>> 1`: flow_hash_from_keys_seed's 32 bits (never 0). */
uint32_t nftdp_route_mp_hash32(uint32_t seed, const struct nftdp_route_mp_keys *k);

/** fib_multipath_hash_fields bits (FIB_MULTIPATH_HASH_FIELD_*) */
#define NFTDP_ROUTE_MP_F_SRC_IP 0x001u
#define NFTDP_ROUTE_MP_F_DST_IP 0x002u
#define NFTDP_ROUTE_MP_F_IP_PROTO 0x004u
#define NFTDP_ROUTE_MP_F_FLOWLABEL 0x008u
#define NFTDP_ROUTE_MP_F_SRC_PORT 0x010u
#define NFTDP_ROUTE_MP_F_DST_PORT 0x020u
#define NFTDP_ROUTE_MP_F_INNER_SRC_IP 0x040u
#define NFTDP_ROUTE_MP_F_INNER_DST_IP 0x080u
#define NFTDP_ROUTE_MP_F_INNER_IP_PROTO 0x100u
#define NFTDP_ROUTE_MP_F_INNER_FLOWLABEL 0x200u
#define NFTDP_ROUTE_MP_F_INNER_SRC_PORT 0x400u
#define NFTDP_ROUTE_MP_F_INNER_DST_PORT 0x800u
#define NFTDP_ROUTE_MP_F_OUTER_MASK 0x03fu
#define NFTDP_ROUTE_MP_F_INNER_MASK 0xfc0u

/** One family's multipath hash settings (the netns's sysctls). */
struct nftdp_route_mp_conf {
	uint32_t seed;	 /**< net.ipv4.fib_multipath_hash_seed (both families) */
	uint8_t policy;	 /**< net.ipv{4,6}.fib_multipath_hash_policy: 0-3 */
	uint32_t fields; /**< net.ipv{4,6}.fib_multipath_hash_fields (policy 3) */
};

/**
 * fib_multipath_hash / rt6_multipath_hash of a packet being forwarded (the
 * skb, no flow keys from the rules' early dissection), 31 bits: `ip` is
 * the network header of a packet of the route's family (v6: IPv6), `len`
 * the bytes there from it (the datagram; never read past). Policy 0: the
 * L3 keys (an ICMP error's quoted header); 1: the flow dissector's
 * addresses, protocol and ports, stopping at an encapsulation; 2: the
 * innermost addresses the dissector finds through IPIP, IPv6-in-IP and
 * GRE (IPv6 ones with the flow label and protocol); 3: the fields
 * conf->fields names of the outer and of the inner flow, joined by
 * jhash_2words. Packet-path.
 */
uint32_t nftdp_route_mp_hash_skb(const struct nftdp_route_mp_conf *conf, bool v6, const uint8_t *ip,
				 size_t len);
/**
 * The same of a flow without a packet (an output route: dup's, the route
 * back to the source that get_tcpmss asks for): f's addresses, flow label
 * (memory order, as flowi6_get_flowlabel reads it), protocol and ports,
 * each where the policy hashes it (3: the outer fields; a source port as
 * given). Packet-path.
 */
uint32_t nftdp_route_mp_hash_flow(const struct nftdp_route_mp_conf *conf,
				  const struct nftdp_route_mp_keys *f);

/**
 * fib_select_multipath / fib6_select_path over fib_rebalance's upper
 * bounds: the first live path whose bound (round(cumulative weight *
 * 2^31 / total) - 1) is at least hash31. -1: no device. Packet-path.
 */
int nftdp_route_path_select_kernel(const struct nftdp_route_nh *nh, uint32_t hash31);

/*
 * Policy routing (net/core/fib_rules.c, fib4_rules.c, fib6_rules.c): the
 * kernel's `ip rule` list of each family, in its order, and every table a
 * rule names. While a family's list is the one a new netns has (IPv4: pref
 * 0 local, 32766 main, 32767 default; IPv6: 0 local, 32766 main) the flow
 * lookups below are one branch away from nftdp_route_lookup4/6; otherwise
 * they walk the rules as fib_rules_lookup does.
 */
#define NFTDP_ROUTE_IFINDEX_NONE 0xffffffffu /**< a rule's device that is not there */

/** A rule (struct fib_rule with its family's selectors). */
struct nftdp_route_rule {
	uint32_t pref;	 /**< FRA_PRIORITY */
	uint32_t table;	 /**< FR_ACT_TO_TBL: the kernel's table id */
	uint32_t target; /**< FR_ACT_GOTO: the pref it jumps to */
	uint8_t family;	 /**< AF_INET or AF_INET6 */
	uint8_t action;	 /**< FR_ACT_* */
	bool invert;	 /**< FIB_RULE_INVERT (`not`) */
	uint8_t tos;	 /**< legacy tos selector (frh->tos), 0: none */
	uint8_t src_len, dst_len;
	uint8_t src[16], dst[16];	 /**< prefixes (IPv4 in the first 4 bytes) */
	uint32_t iif, oif;		 /**< nftdp ifindex, 0: any, NFTDP_ROUTE_IFINDEX_NONE */
	uint32_t mark, mark_mask;	 /**< FRA_FWMARK / FRA_FWMASK */
	uint32_t uid_start, uid_end;	 /**< FRA_UID_RANGE (unset: 0..~0) */
	uint8_t ip_proto;		 /**< FRA_IP_PROTO, 0: any */
	uint16_t sport[2], dport[2];	 /**< FRA_SPORT/DPORT_RANGE, {0, 0}: any */
	uint16_t sport_mask, dport_mask; /**< FRA_SPORT/DPORT_MASK (a single port: 0xffff) */
	bool dscp_full;			 /**< FRA_DSCP given: dscp and dscp_mask compare */
	uint8_t dscp, dscp_mask;	 /**< as in the tos byte (DSCP << 2); mask default 0xfc */
	int32_t suppress_prefixlen;	 /**< -1: none */
	int32_t suppress_ifgroup;	 /**< -1: none */
	/* filled by nftdp_route_policy_build(): */
	int32_t goto_idx; /**< the rule a goto lands on, -1: unresolved */
	int32_t xt;	  /**< the table looked up (internal), -1: none */
};

/** What a policy lookup is asked about (struct flowi4 / flowi6). */
struct nftdp_route_flow {
	uint8_t daddr[16]; /**< IPv4 in the first 4 bytes, network order */
	uint8_t saddr[16];
	bool has_saddr;		 /**< IPv6: RT6_LOOKUP_F_HAS_SADDR (IPv4: saddr 0 is none) */
	uint8_t dscp;		 /**< the tos / traffic class byte & 0xfc */
	uint8_t proto;		 /**< flowi_proto, 0: none */
	uint16_t sport, dport;	 /**< host order, 0: none */
	uint32_t iif, oif, mark; /**< flowi_iif / flowi_oif (nftdp ifindex), flowi_mark */
	uint32_t ll_oif;	 /**< IPv6 link-scope daddr: routes of this device, 0: any */
};

/**
 * Append a rule of its family's list (the kernel's order: call in dump
 * order). 0, -EINVAL (family), -ENOMEM. Control-path.
 */
int nftdp_route_rule_add(struct nftdp_route_table *t, const struct nftdp_route_rule *r);
/**
 * A route of a table other than local and main (or, for IPv4 under
 * custom rules, a copy of one of theirs): kept for rules that name the
 * table, looked up once nftdp_route_policy_build() ran. 0, -EINVAL,
 * -ENOSPC, -ENOMEM. Control-path.
 */
int nftdp_route_table_add(struct nftdp_route_table *t, int family, uint32_t table, const void *addr,
			  uint8_t plen, const struct nftdp_route_nh *nh);
/**
 * After the rules and routes: the tables they name, goto targets, and
 * whether each family's list differs from the default one. 0, -ENOMEM,
 * or rte_rib's negative errno. Control-path.
 */
int nftdp_route_policy_build(struct nftdp_route_table *t);
/** Whether family's rules differ from a new netns' (the flow lookups walk them). */
bool nftdp_route_policy_active(const struct nftdp_route_table *t, int family);
/** Set a device's group (IFLA_GROUP, suppress_ifgroup). Control-path. */
void nftdp_route_dev_group(struct nftdp_route_table *t, uint32_t ifindex, uint32_t group);

/**
 * fib_lookup for an IPv4 flow: the rules in order (selectors, goto, nop,
 * blackhole / unreachable / prohibit, lookup table, suppress_*), each
 * table longest prefix first. NULL: no route (-ENETUNREACH, also a rule's
 * `unreachable`); a rule's blackhole or prohibit gives a next hop of that
 * type without devices. Packet-path, any thread.
 */
const struct nftdp_route_nh *nftdp_route_lookup4_flow(const struct nftdp_route_table *t,
						      const struct nftdp_route_flow *fl);
/*
 * nftdp_route_lookup4_flow() where the IPv4 rules are a new netns' (not
 * nftdp_route_policy_active()): only the destination (network byte order)
 * decides. Packet-path, any thread.
 */
const struct nftdp_route_nh *nftdp_route_lookup4_dst(const struct nftdp_route_table *t,
						     const uint8_t daddr[4]);
/** The same for IPv6 (fib6_rule_lookup; fl->ll_oif as nftdp_route_lookup6's oif). */
const struct nftdp_route_nh *nftdp_route_lookup6_flow(const struct nftdp_route_table *t,
						      const struct nftdp_route_flow *fl);

/** A port as nftdp numbers it, for the mirror. */
struct nftdp_route_port {
	const char *name;
	uint32_t ifindex;
};

/**
 * Fill t from the kernel's network namespace this process runs in:
 * RTM_GETLINK (device names), RTM_GETADDR (IPv6 addresses), RTM_GETRULE
 * (the rules), RTM_GETROUTE of tables local and main for IPv4 and IPv6
 * and of the tables the rules name (nftdp_route_policy_build). A device named like a port
 * maps to the port's ifindex, any other to NFTDP_ROUTE_IFINDEX_FOREIGN +
 * its kernel ifindex. 0 or a negative errno (socket, netlink). Control-path.
 */
int nftdp_route_mirror(struct nftdp_route_table *t, const struct nftdp_route_port *ports,
		       unsigned int n_ports);

/**
 * Whether an `ip rule` of the mirrored netns has a selector the policy
 * lookup does not evaluate (tunnel id, l3mdev, IPv6 flow label): then the flow lookups cannot give
 * the kernel's answers. *why (optional) names the first, NULL if none. Set by nftdp_route_mirror().
 * Control-path.
 */
bool nftdp_route_policy_custom(const struct nftdp_route_table *t, const char **why);

/**
 * Live updates: a non-blocking rtnetlink socket subscribed to links,
 * IPv4/IPv6 addresses, routes and rules of the netns nftdp runs in. Open
 * it before the dump it guards, so that no change slips between them.
 * Control-path; one thread.
 */
struct nftdp_route_watch;

/** 0, or a negative errno (socket, bind, setsockopt). */
int nftdp_route_watch_open(struct nftdp_route_watch **out);
/** The socket, for poll(2): readable when a notification waits. */
int nftdp_route_watch_fd(const struct nftdp_route_watch *w);
/**
 * Read every pending notification without blocking. A mask of
 * NFTDP_ROUTE_WATCH_*: what changed (routes: something the table mirrors;
 * neighbours: a neighbour, once subscribed), both when messages were lost
 * (ENOBUFS): dump again; 0: nothing did; a negative errno on another
 * socket error.
 */
int nftdp_route_watch_read(struct nftdp_route_watch *w);
/** Close it; NULL is a no-op. */
void nftdp_route_watch_close(struct nftdp_route_watch *w);

/*
 * Route updates as deltas (delta.c): the watch keeps the route
 * notifications it reads in a batch; the batch is applied to a table no
 * worker reads (the spare), which is swapped in, and once the grace
 * period passed the same batch is replayed on the other table. A batch
 * holding anything a delta cannot apply exactly (a change of a link's
 * name, mtu, group or up/carrier flags, an address or rule change, lost
 * notifications, a prefix with more than one route, IPv6
 * multipath, policy tables) asks for a full refill instead.
 */
struct nftdp_route_batch;

/** An empty batch. 0 or -ENOMEM. Control-path. */
int nftdp_route_batch_create(struct nftdp_route_batch **out);
/** Free it; NULL is a no-op. */
void nftdp_route_batch_destroy(struct nftdp_route_batch *b);
/** Empty it (no messages, no refill asked). */
void nftdp_route_batch_clear(struct nftdp_route_batch *b);
/** Route messages held. */
unsigned int nftdp_route_batch_count(const struct nftdp_route_batch *b);
/** Whether only a full dump is right (see above; also past 32 MiB of messages). */
bool nftdp_route_batch_full(const struct nftdp_route_batch *b);
/** Mark it so (a refill is due whatever it holds). */
void nftdp_route_batch_set_full(struct nftdp_route_batch *b);
/**
 * Append one netlink message (RTM_NEWROUTE, RTM_DELROUTE, RTM_NEWLINK;
 * any other type marks the batch full). Its messages stay bounded: past 32 MiB it
 * forgets them and is full. 0 or -ENOMEM (then full too).
 */
int nftdp_route_batch_add(struct nftdp_route_batch *b, const void *nlh, unsigned int len);
/**
 * Collect what w reads into b (NULL: stop): route and link messages are
 * kept, addresses, rules, link deletions and ENOBUFS mark it full. Neighbours are not
 * kept (their table is dumped on its own).
 */
void nftdp_route_watch_collect(struct nftdp_route_watch *w, struct nftdp_route_batch *b);
/**
 * Apply b's messages in order to t, a table no worker reads: a route
 * added, replaced or deleted in tables local or main, as a refill from a
 * dump taken after them would hold it. Messages the table already
 * reflects (a dump that came after them) change nothing, as do link
 * messages that change nothing it holds of the device (promiscuity).
 * 0; -EAGAIN: b holds something only a refill gets right (b full, a
 * prefix with other routes, an `ip rule` table, IPv6 multipath or
 * link-local, a link change); -ENOSPC /
 * -EINVAL: the table is full (rte_fib's tbl8 groups or RIB, next hops);
 * -ENOMEM. On any error t is half changed: refill it before use.
 * Control-path.
 */
int nftdp_route_apply(struct nftdp_route_table *t, const struct nftdp_route_batch *b);
/**
 * Whether a and b answer alike: the same routes with the same next hops
 * in tables local and main (IPv4, IPv6 and the per-device list), the
 * same devices and IPv6 addresses. For tests and checks; control-path,
 * walks every route. On a difference, *why (optional) says where.
 */
bool nftdp_route_table_same(const struct nftdp_route_table *a, const struct nftdp_route_table *b,
			    char *why, unsigned int why_len);

/** Which notifications nftdp_route_watch_read() saw (a mask). */
#define NFTDP_ROUTE_WATCH_ROUTES 1 /**< links, addresses, routes, rules */
#define NFTDP_ROUTE_WATCH_NEIGH 2  /**< neighbours (after nftdp_route_watch_neigh) */

/**
 * Subscribe w to neighbour notifications too (RTNLGRP_NEIGH): router
 * forwarding's MAC rewrite follows them. 0 or a negative errno.
 */
int nftdp_route_watch_neigh(struct nftdp_route_watch *w);

/*
 * Neighbours: the kernel's ARP and ND entries on the devices named like a
 * port, as {family, port ifindex, address} -> lladdr. Built by the control
 * thread, read-only once published: workers look it up without locks;
 * live updates swap whole tables (dataplane/nexthop.c).
 */
#define NFTDP_ROUTE_ALEN 6	   /**< Ethernet lladdr */
#define NFTDP_ROUTE_NEIGH_PORTS 64 /**< port devices one mirror follows */

struct nftdp_route_neigh;

/** An empty neighbour table. 0 or -ENOMEM. Control-path. */
int nftdp_route_neigh_create(struct nftdp_route_neigh **out);
/** Free a table no worker reads any more; NULL is a no-op. Control-path. */
void nftdp_route_neigh_destroy(struct nftdp_route_neigh *t);
/**
 * Add (or replace) the lladdr of addr (4 or 16 bytes by family) on port
 * ifindex. 0, -EINVAL (family, ifindex 0), -ENOMEM. Control-path.
 */
int nftdp_route_neigh_add(struct nftdp_route_neigh *t, int family, uint32_t ifindex,
			  const void *addr, const uint8_t lladdr[NFTDP_ROUTE_ALEN]);
/**
 * The lladdr of addr on port ifindex, NULL when the kernel has no usable
 * entry (t NULL: none). Packet-path, any thread.
 */
const uint8_t *nftdp_route_neigh_lookup(const struct nftdp_route_neigh *t, int family,
					uint32_t ifindex, const void *addr);
/** Entries held. */
unsigned int nftdp_route_neigh_count(const struct nftdp_route_neigh *t);
/** Whether a neighbour in NUD state `state` is sent to (NUD_VALID). */
bool nftdp_route_neigh_state_usable(uint16_t state);
/**
 * Fill t from one RTM_GETNEIGH dump (IPv4 and IPv6) of the netns this
 * process runs in: usable entries with a 6-byte lladdr on the devices
 * named like ports (at most NFTDP_ROUTE_NEIGH_PORTS), proxies left out.
 * 0 or a negative errno (socket, netlink, -ENOMEM). Control-path.
 */
int nftdp_route_neigh_mirror(struct nftdp_route_neigh *t, const struct nftdp_route_port *ports,
			     unsigned int n_ports);

/**
 * Ask the kernel to resolve addr (4 or 16 bytes by family) on the device
 * named ifname: RTM_NEWNEIGH with NTF_USE, as `ip neigh replace ADDR dev
 * IF use`, which makes neigh_add create the entry if need be and call
 * neigh_event_send (an ARP request or neighbour solicitation unless the
 * entry is already usable). 0 or a negative errno (-ENODEV: no such
 * device, socket and netlink errors, the kernel's answer). Control-path.
 */
int nftdp_route_neigh_resolve(const char *ifname, int family, const void *addr);

/** Routes added so far (IPv4, IPv6), for the start-up log. */
void nftdp_route_count(const struct nftdp_route_table *t, unsigned int *n4, unsigned int *n6);

#endif /* NFTDP_ROUTE_H */
