// SPDX-License-Identifier: BSD-3-Clause
/*
 * --route: forwarding by the kernel's routes and neighbours. After
 * prerouting a packet's destination is looked up in the mirrored route
 * table (fib.c owns it) as ip_route_input / ip6_route_input would; a
 * multipath route picks its path by the flow hash (fib_multipath_hash /
 * rt6_multipath_hash under the family's fib_multipath_hash_policy,
 * route/mphash.c); the route's
 * device is the output port. Before netdev egress the MACs are rewritten
 * as ip_finish_output2 / neigh_output would: source the port's, destination
 * the next hop's lladdr from the neighbour mirror (route/neigh.c), a table
 * rebuilt from one RTM_GETNEIGH dump whenever rtnetlink reports a
 * neighbour change and swapped in like the route table (one release
 * store, old one freed a grace period of the generation domain later).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <rte_jhash.h>
#include <rte_mbuf.h>

#include "dataplane_priv.h"
#include "nftdp_route.h"

#define RET_MAX 8	      /* neighbour tables in their grace period */
#define RETRY_NS 100000000ull /* a failed neighbour dump is tried again after 100 ms */

struct nftdp_dp_nexthop {
	/* first: the one word workers load */
	_Atomic(struct nftdp_route_neigh *) cur;
	bool dirty;   /* a neighbour notification since the last dump */
	bool l4_hash; /* fib_multipath_hash_policy 1: ports too */
	/* net.ipv4.fib_multipath_hash_seed (0: the kernel's key is random)
	 * and each family's policy; read at start and at each neighbour
	 * dump. Workers read them as plain words: a stale value for a burst
	 * only picks the other hash */
	uint32_t mp_seed;
	uint8_t policy4, policy6;
	uint32_t fields4, fields6; /* fib_multipath_hash_fields (policy 3) */
	uint64_t retry_ns;	   /* no dump before: a failed one's retry, or pacing */
	unsigned int n_ret;
	struct {
		struct nftdp_route_neigh *t;
		uint64_t token;
	} ret[RET_MAX];
	unsigned long n_builds;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned long read_sysctl(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* net.ipv4.fib_multipath_hash_policy of the netns: 1 and 3 hash ports
 * (without a seed nftdp's own hash: 3 as 1); the seed (6.11+) and both
 * families' policies and custom fields for the kernel's own hash */
struct mp_conf {
	uint32_t seed;
	uint8_t policy4, policy6;
	uint32_t fields4, fields6;
	bool l4;
};

static struct mp_conf read_mp_conf(void)
{
	struct mp_conf c;

	c.policy4 = (uint8_t)read_sysctl("/proc/sys/net/ipv4/fib_multipath_hash_policy");
	c.policy6 = (uint8_t)read_sysctl("/proc/sys/net/ipv6/fib_multipath_hash_policy");
	c.seed = (uint32_t)read_sysctl("/proc/sys/net/ipv4/fib_multipath_hash_seed");
	c.fields4 = (uint32_t)read_sysctl("/proc/sys/net/ipv4/fib_multipath_hash_fields");
	c.fields6 = (uint32_t)read_sysctl("/proc/sys/net/ipv6/fib_multipath_hash_fields");
	c.l4 = c.policy4 == 1 || c.policy4 == 3;
	return c;
}

/* workers load these relaxed: a stale value for a burst only picks the
 * other hash */
static void set_mp_conf(struct nftdp_dp_nexthop *h, const struct mp_conf *c)
{
	__atomic_store_n(&h->l4_hash, c->l4, __ATOMIC_RELAXED);
	__atomic_store_n(&h->mp_seed, c->seed, __ATOMIC_RELAXED);
	__atomic_store_n(&h->policy4, c->policy4, __ATOMIC_RELAXED);
	__atomic_store_n(&h->policy6, c->policy6, __ATOMIC_RELAXED);
	__atomic_store_n(&h->fields4, c->fields4, __ATOMIC_RELAXED);
	__atomic_store_n(&h->fields6, c->fields6, __ATOMIC_RELAXED);
}

/* the family's settings as route/ hashes with them; false: no seed, the
 * kernel's key is random */
static bool mp_conf_of(const struct nftdp_dp_nexthop *h, bool v4, struct nftdp_route_mp_conf *c)
{
	c->seed = __atomic_load_n(&h->mp_seed, __ATOMIC_RELAXED);
	c->policy = v4 ? __atomic_load_n(&h->policy4, __ATOMIC_RELAXED)
		       : __atomic_load_n(&h->policy6, __ATOMIC_RELAXED);
	c->fields = v4 ? __atomic_load_n(&h->fields4, __ATOMIC_RELAXED)
		       : __atomic_load_n(&h->fields6, __ATOMIC_RELAXED);
	return c->seed != 0;
}

static int dump(struct nftdp_dp *dp, struct nftdp_route_neigh **out)
{
	struct nftdp_route_port ports[RTE_MAX_ETHPORTS];
	unsigned int n = 0;
	int ret;

	/* a host interface (--host-ports) is its data port to the host: its
	 * neighbours are the port's, as its routes are (fib.c) */
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		const struct nftdp_dp_port *pt = &dp->port[p];

		if (pt->used)
			ports[n++] = (struct nftdp_route_port){
			    .name = pt->name,
			    .ifindex = pt->is_host ? dp->port[pt->host_peer].ifindex : pt->ifindex};
	}
	ret = nftdp_route_neigh_create(out);
	if (ret < 0)
		return ret;
	ret = nftdp_route_neigh_mirror(*out, ports, n);
	if (ret < 0) {
		nftdp_route_neigh_destroy(*out);
		*out = NULL;
	}
	return ret;
}

int nftdp_dp_nexthop_init(struct nftdp_dp *dp)
{
	struct nftdp_dp_nexthop *h;
	struct nftdp_route_neigh *t;
	int ret;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	dp->nexthop = h;
	{
		struct mp_conf c = read_mp_conf();

		set_mp_conf(h, &c);
	}
	/* subscribed before the dump: no change slips in between */
	ret = nftdp_dp_fib_watch_neigh(dp);
	if (ret == 0)
		ret = dump(dp, &t);
	if (ret < 0) {
		fprintf(stderr, "nftdp: neighbours: %s\n", strerror(-ret));
		return ret;
	}
	atomic_store_explicit(&h->cur, t, memory_order_release);
	printf("nftdp: %s: %u neighbours, ECMP hash %s, following changes\n",
	       dp->route ? "route mode" : "dup to an address", nftdp_route_neigh_count(t),
	       h->l4_hash ? "L4" : "L3");
	return 0;
}

static void reclaim(struct nftdp_dp *dp)
{
	struct nftdp_dp_nexthop *h = dp->nexthop;
	unsigned int k = 0;

	while (k < h->n_ret && nftdp_vm_gen_grace_passed(dp->dom, h->ret[k].token))
		nftdp_route_neigh_destroy(h->ret[k++].t);
	if (k) {
		memmove(h->ret, h->ret + k, (h->n_ret - k) * sizeof(h->ret[0]));
		h->n_ret -= k;
	}
}

void nftdp_dp_nexthop_tick(struct nftdp_dp *dp, bool changed)
{
	struct nftdp_dp_nexthop *h = dp->nexthop;
	struct nftdp_route_neigh *t, *old;
	uint64_t now;
	int ret;

	if (!h)
		return;
	nftdp_dp_unres_solicit(dp); /* next hops workers wait on (unres.c) */
	if (h->n_ret)
		reclaim(dp);
	h->dirty |= changed;
	/* a full ring of old tables waits for the workers' next burst */
	if (!h->dirty || h->n_ret == RET_MAX)
		return;
	now = now_ns();
	if (now < h->retry_ns)
		return;
	/* neighbours are few: every change is a new dump at once, so a
	 * resolved next hop is used within a millisecond or so; a storm of
	 * state changes (a large L2 segment) gets dumps at most a third of
	 * the control thread's time, as route rebuilds */
	h->dirty = false;
	/* the hash sysctls with the neighbours */
	{
		struct mp_conf c = read_mp_conf();

		set_mp_conf(h, &c);
	}
	ret = dump(dp, &t);
	if (ret == 0) {
		uint64_t end = now_ns();

		h->retry_ns = end + 2 * (end - now);
	}
	if (ret < 0) {
		fprintf(stderr, "nftdp: neighbours: dump: %s; keeping the previous table\n",
			strerror(-ret));
		h->dirty = true;
		h->retry_ns = now + RETRY_NS;
		return;
	}
	old = atomic_exchange_explicit(&h->cur, t, memory_order_release);
	h->ret[h->n_ret].t = old;
	h->ret[h->n_ret++].token = nftdp_vm_gen_grace_start(dp->dom);
	h->n_builds++;
}

bool nftdp_dp_nexthop_pending(const struct nftdp_dp *dp)
{
	const struct nftdp_dp_nexthop *h = dp->nexthop;

	return h && (h->dirty || h->n_ret || nftdp_dp_unres_pending(dp));
}

void nftdp_dp_nexthop_fini(struct nftdp_dp *dp)
{
	struct nftdp_dp_nexthop *h = dp->nexthop;

	if (!h)
		return;
	/* no worker runs any more */
	for (unsigned int i = 0; i < h->n_ret; i++)
		nftdp_route_neigh_destroy(h->ret[i].t);
	nftdp_route_neigh_destroy(atomic_load_explicit(&h->cur, memory_order_relaxed));
	free(h);
	dp->nexthop = NULL;
}

/* fib_multipath_hash's fields without its key: addresses (and for IPv6
 * the flow label and next header), with policy 1 the transport ports and
 * protocol too. Used while no seed is set (the kernel's key is then
 * random): the spread differs from the kernel's but each flow keeps one
 * path (kernel_hash() below otherwise) */
static uint32_t flow_hash(const struct nftdp_vm_pkt *p, bool l4)
{
	const uint8_t *iph = p->data + p->nh_off;
	uint32_t k[11], n;

	if (p->nfproto == NFPROTO_IPV4) {
		memcpy(&k[0], iph + 12, 8); /* saddr, daddr */
		n = 2;
	} else {
		memcpy(&k[0], iph + 8, 32);
		k[8] = ((uint32_t)(iph[1] & 0x0f) << 16 | (uint32_t)iph[2] << 8 | iph[3]);
		n = 9;
		if (!l4)
			k[n++] = iph[6];
	}
	if (l4) {
		k[n] = p->l4proto;
		k[n + 1] = 0;
		if ((p->flags & NFTDP_VM_PKT_F_L4PROTO) && !p->fragoff &&
		    (p->l4proto == IPPROTO_TCP || p->l4proto == IPPROTO_UDP ||
		     p->l4proto == IPPROTO_SCTP || p->l4proto == IPPROTO_UDPLITE) &&
		    p->th_off + 4 <= p->len)
			memcpy(&k[n + 1], p->data + p->th_off, 4);
		n += 2;
	}
	return rte_jhash_32b(k, n, 0x6e667464u);
}

/*
 * The kernel's multipath hash of a packet to forward (fib_multipath_hash /
 * rt6_multipath_hash with the skb, route/mphash.c), possible while the
 * seed is set: false otherwise (the kernel's key is random). Every policy:
 * 0 the L3 keys, 1 the outer flow, 2 the innermost addresses through
 * IPIP and GRE, 3 the custom fields; under policy 1 the kernel takes an
 * skb's L4 hash where it already has one (a NIC's RSS hash), which nftdp
 * cannot know.
 */
static bool kernel_hash(const struct nftdp_dp_nexthop *h, const struct nftdp_vm_pkt *p,
			uint32_t *out)
{
	bool v4 = p->nfproto == NFPROTO_IPV4;
	struct nftdp_route_mp_conf c;

	if (!mp_conf_of(h, v4, &c) || p->nh_off >= p->len)
		return false;
	*out = nftdp_route_mp_hash_skb(&c, !v4, p->data + p->nh_off, p->len - p->nh_off);
	return true;
}

int nftdp_dp_nexthop_path(const struct nftdp_dp *dp, const struct nftdp_vm_pkt *p, bool v4,
			  const struct nftdp_route_nh *nh)
{
	uint32_t hash;

	if (nh->n_oif < 2)
		return nh->n_oif ? 0 : -1;
	/* no neighbour mirror (it failed to start), or no IP packet of the
	 * route's family (a netdev table's): the first path */
	if (!dp->nexthop || p->nfproto != (v4 ? NFPROTO_IPV4 : NFPROTO_IPV6))
		return nftdp_route_path_select_kernel(nh, 0);
	/* the kernel's choice where its key is known (the seed set) */
	if (kernel_hash(dp->nexthop, p, &hash))
		return nftdp_route_path_select_kernel(nh, hash);
	return nftdp_route_path_select(
	    nh, flow_hash(p, __atomic_load_n(&dp->nexthop->l4_hash, __ATOMIC_RELAXED)));
}

int nftdp_dp_nexthop_path_out(const struct nftdp_dp *dp, bool v4, const uint8_t *daddr,
			      const struct nftdp_route_nh *nh)
{
	struct nftdp_route_mp_conf c;
	struct nftdp_route_mp_keys k = {.v6 = !v4};

	if (nh->n_oif < 2)
		return nh->n_oif ? 0 : -1;
	if (!dp->nexthop)
		return nftdp_route_path_select_kernel(nh, 0);
	if (!mp_conf_of(dp->nexthop, v4, &c))
		return nftdp_route_path_select(nh, rte_jhash(daddr, v4 ? 4 : 16, 0x64757021u));
	memcpy(k.daddr, daddr, v4 ? 4 : 16);
	return nftdp_route_path_select_kernel(nh, nftdp_route_mp_hash_flow(&c, &k));
}

/* ip_error (IPv4) / ip6_pkt_discard and friends (IPv6): what a packet
 * with route type `type` (RTN_*; RTN_UNSPEC: no route at all) gets */
static void route_error(bool v4, uint8_t type, struct nftdp_dp_icmp *icmp)
{
	*icmp = (struct nftdp_dp_icmp){0};
	switch (type) {
	case RTN_BLACKHOLE: /* -EINVAL: dropped without a word */
		return;
	case RTN_UNREACHABLE: /* -EHOSTUNREACH / ip6_pkt_discard */
		icmp->type = v4 ? 3 : 1;
		icmp->code = v4 ? 1 : 0; /* ICMP_HOST_UNREACH / ICMPV6_NOROUTE */
		return;
	case RTN_PROHIBIT: /* -EACCES / ip6_pkt_prohibit */
		icmp->type = v4 ? 3 : 1;
		icmp->code = v4 ? 13 : 1; /* ICMP_PKT_FILTERED / ICMPV6_ADM_PROHIBITED */
		return;
	default: /* no route, or throw out of main: -ENETUNREACH */
		icmp->type = v4 ? 3 : 1;
		icmp->code = 0; /* ICMP_NET_UNREACH / ICMPV6_NOROUTE */
		return;
	}
}

/* ip_route_input_slow's flowi4 / ip6_route_input's flowi6, what the `ip
 * rule`s see of a packet to forward: the input device, the mark, the
 * DSCP, both addresses, and the protocol and ports (the early flow
 * dissection that rules with ipproto or ports ask for; unused otherwise) */
static void input_flow(const struct nftdp_vm_pkt *p, const uint8_t *iph, bool v4,
		       struct nftdp_route_flow *fl)
{
	memset(fl, 0, sizeof(*fl));
	/* nftdp's own replies (no input device): an output route's lo */
	fl->iif = p->iif ? p->iif : NFTDP_ROUTE_IFINDEX_FOREIGN + 1;
	fl->mark = p->mark;
	if (v4) {
		memcpy(fl->daddr, iph + 16, 4);
		memcpy(fl->saddr, iph + 12, 4);
		fl->dscp = iph[1] & 0xfc;
	} else {
		memcpy(fl->daddr, iph + 24, 16);
		memcpy(fl->saddr, iph + 8, 16);
		fl->has_saddr = true;
		fl->dscp = (uint8_t)(((iph[0] << 4) | (iph[1] >> 4)) & 0xfc);
		/* a link-scope destination: the routes of the receiving
		 * device (RT6_LOOKUP_F_IFACE with the input device) */
		fl->ll_oif = p->iif;
	}
	if (!(p->flags & NFTDP_VM_PKT_F_L4PROTO))
		return;
	fl->proto = p->l4proto;
	switch (p->l4proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		if (!p->fragoff && (uint64_t)p->th_off + 4 <= p->len) {
			fl->sport = (uint16_t)(p->data[p->th_off] << 8 | p->data[p->th_off + 1]);
			fl->dport =
			    (uint16_t)(p->data[p->th_off + 2] << 8 | p->data[p->th_off + 3]);
		}
		break;
	default:
		break;
	}
}

/* a and b (4 or 16 bytes) equal: word compares, no call */
static inline bool addr_eq(const uint8_t *a, const uint8_t *b, bool v4)
{
	if (v4) {
		uint32_t x, y;

		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		return x == y;
	} else {
		uint64_t x[2], y[2];

		memcpy(x, a, 16);
		memcpy(y, b, 16);
		return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
	}
}

/* a (4 or 16 bytes) all zero: word tests, no loop */
static inline bool addr_zero(const uint8_t *a, bool v4)
{
	if (v4) {
		uint32_t x;

		memcpy(&x, a, 4);
		return x == 0;
	} else {
		uint64_t x[2];

		memcpy(x, a, 16);
		return (x[0] | x[1]) == 0;
	}
}

/*
 * The route of a destination while the family's `ip rule`s are a new
 * netns' (nothing but the destination decides, and for IPv6 the input
 * device of a link-local one): the same destination as the family's
 * lookup before in this burst, from the same table, has its answer.
 */
static const struct nftdp_route_nh *route_by_dst(struct nftdp_dp_worker *w,
						 const struct nftdp_route_table *t,
						 const uint8_t *daddr, uint32_t iif, bool v4)
{
	__typeof__(w->rt_memo[0]) *m = &w->rt_memo[v4];
	const struct nftdp_route_nh *nh;

	if (m->t == t && addr_eq(m->daddr, daddr, v4) && (v4 || m->iif == iif))
		return m->nh;
	nh = v4 ? nftdp_route_lookup4_dst(t, daddr) : nftdp_route_lookup6(t, daddr, iif);
	m->t = t;
	m->nh = nh;
	m->iif = iif;
	memcpy(m->daddr, daddr, v4 ? 4 : 16);
	return nh;
}

enum nftdp_dp_drop nftdp_dp_nexthop_route(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
					  struct nftdp_dp_nh *out, struct nftdp_dp_icmp *icmp)
{
	const struct nftdp_dp *dp = w->dp;
	const struct nftdp_route_table *t = nftdp_dp_fib_table(dp);
	const uint8_t *iph = p->data + p->nh_off;
	bool v4 = p->nfproto == NFPROTO_IPV4;
	const struct nftdp_route_nh *nh = NULL;
	uint32_t oif;
	int path;

	icmp->type = 0;
	if (t && !nftdp_route_policy_active(t, v4 ? AF_INET : AF_INET6)) {
		/* input_flow's daddr and ll_oif: all the lookup reads */
		nh = route_by_dst(w, t, iph + (v4 ? 16 : 24), p->iif, v4);
	} else if (t) {
		struct nftdp_route_flow fl;

		input_flow(p, iph, v4, &fl);
		nh = v4 ? nftdp_route_lookup4_flow(t, &fl) : nftdp_route_lookup6_flow(t, &fl);
	}
	if (!nh) {
		route_error(v4, RTN_UNSPEC, icmp);
		return NFTDP_DP_DROP_NO_ROUTE;
	}
	switch (nh->type) {
	case RTN_UNICAST:
		break;
	case RTN_LOCAL:
	case RTN_BROADCAST:
	case RTN_MULTICAST:
	case RTN_ANYCAST:
		/* local delivery: the host path's (issue 15 part 1) */
		return NFTDP_DP_DROP_NOT_FORWARDED;
	default:
		route_error(v4, nh->type, icmp);
		return NFTDP_DP_DROP_NO_ROUTE;
	}
	/* one path: no hash (nftdp_dp_nexthop_path's first answer) */
	path = nh->n_oif == 1 ? 0 : nftdp_dp_nexthop_path(dp, p, v4, nh);
	if (path < 0) {
		route_error(v4, RTN_UNSPEC, icmp);
		return NFTDP_DP_DROP_NO_ROUTE;
	}
	oif = nh->oif[path];
	if (oif < 1 || oif > dp->n_ports || !dp->port[oif - 1].used)
		return NFTDP_DP_DROP_ROUTE_NOT_PORT;
	out->rt = nh;
	out->path = (uint8_t)path;
	out->tx_port = (uint16_t)(oif - 1);
	out->dup = false;
	return NFTDP_DP_DROP_MAX;
}

static bool all_zero(const uint8_t *a, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (a[i])
			return false;
	return true;
}

bool nftdp_dp_nexthop_dup_route(const struct nftdp_dp_worker *w, bool v4, const uint8_t *gw,
				uint32_t oif, const uint8_t *iph, struct nftdp_dp_nh *out)
{
	const struct nftdp_dp *dp = w->dp;
	const struct nftdp_route_table *t = nftdp_dp_fib_table(dp);
	const struct nftdp_route_nh *nh = NULL;
	unsigned int alen = v4 ? 4 : 16;
	struct nftdp_route_flow fl;
	int path = -1;

	/* the neighbour table is made with the route table (fib.c) */
	if (!t || !dp->nexthop || !nftdp_dp_nexthop_table(dp))
		return false;
	/* ip_route_output_key / ip6_route_output: an output flow (iif lo,
	 * no mark, no source), the DSCP (IPv6: the flow label is not a
	 * selector nftdp mirrors), the device the statement names */
	memset(&fl, 0, sizeof(fl));
	memcpy(fl.daddr, gw, alen);
	fl.iif = NFTDP_ROUTE_IFINDEX_FOREIGN + 1;
	fl.oif = oif;
	if (v4) {
		fl.dscp = iph[1] & 0xfc;
	} else {
		fl.dscp = (uint8_t)(((iph[0] << 4) | (iph[1] >> 4)) & 0xfc);
		fl.ll_oif = oif;
	}
	nh = v4 ? nftdp_route_lookup4_flow(t, &fl) : nftdp_route_lookup6_flow(t, &fl);
	if (nh && nh->type != RTN_UNICAST)
		return false; /* local delivery, or an error route: not sent out */
	if (nh && oif) {
		/* fib_table_lookup / rt6_device_match skip paths through
		 * other devices */
		for (unsigned int i = 0; i < nh->n_oif; i++)
			if (nh->oif[i] == oif) {
				path = (int)i;
				break;
			}
	} else if (nh && nh->n_oif) {
		/* fib_select_path over the gateway (without a seed the
		 * kernel's hash of the output flow is keyed per boot: the
		 * spread is nftdp's) */
		struct nftdp_route_mp_conf c;
		struct nftdp_route_mp_keys k = {.v6 = !v4};

		/* fib_multipath_hash / rt6_multipath_hash of the output flow
		 * {daddr gw} where the key is known. nf_dup_ipv6_route's
		 * flowlabel is the header's label bytes as a host-order
		 * number in a __be32, which flowi6_get_flowlabel masks with
		 * the network-order label mask: of the little-endian words
		 * the kernel runs on, bytes 1 and 2 (the low nibbles of the
		 * label's middle and top bytes) stay */
		memcpy(k.daddr, gw, alen);
		if (!v4) {
			uint8_t *lb = (uint8_t *)&k.flow_label;

			lb[1] = iph[2] & 0x0f;
			lb[2] = iph[1] & 0x0f;
		}
		if (nh->n_oif < 2)
			path = 0;
		else if (mp_conf_of(dp->nexthop, v4, &c))
			path = nftdp_route_path_select_kernel(nh, nftdp_route_mp_hash_flow(&c, &k));
		else
			path = nftdp_route_path_select(nh, rte_jhash(gw, alen, 0x64757021u));
	}
	if (path < 0) {
		/* IPv4 with a device and no route through it: ip_route_output's
		 * "assume the destination is on link"; IPv6 has no such rule */
		if (!v4 || !oif)
			return false;
		nh = NULL;
	}
	if (nh)
		oif = nh->oif[path];
	if (oif < 1 || oif > dp->n_ports || !dp->port[oif - 1].used)
		return false;
	out->rt = nh;
	out->path = (uint8_t)(path < 0 ? 0 : path);
	out->tx_port = (uint16_t)(oif - 1);
	out->dup = true;
	/* FLOWI_FLAG_KNOWN_NH: rt_set_nexthop's uncached route (rt_gw4 =
	 * daddr) and ip6_pol_route's RTF_CACHE clone: the gateway of the
	 * path if it has one, else the dup's address itself */
	memset(out->dup_nh, 0, sizeof(out->dup_nh));
	if (nh && nh->gateway && !all_zero(nh->path_gw[path], alen))
		memcpy(out->dup_nh, nh->path_gw[path], alen);
	else
		memcpy(out->dup_nh, gw, alen);
	return true;
}

const struct nftdp_route_neigh *nftdp_dp_nexthop_table(const struct nftdp_dp *dp)
{
	return atomic_load_explicit(&dp->nexthop->cur, memory_order_acquire);
}

void nftdp_dp_nexthop_unresolved(struct nftdp_dp_worker *w, struct rte_mbuf *mb)
{
	/* without a host to resolve it (--host-ports), or with more next hops
	 * waiting than unres.c follows: dropped */
	w->st.drop[NFTDP_DP_DROP_NEIGH_UNRESOLVED]++;
	rte_pktmbuf_free(mb);
}

/* rt_nexthop(): the path's gateway, else the destination now in the
 * header (after any rewrite on the way); a dup copy's was chosen with its
 * route */
static const uint8_t *next_hop(const struct nftdp_dp_nh *out, const uint8_t *iph, bool v4)
{
	const struct nftdp_route_nh *nh = out->rt;

	if (out->dup)
		return out->dup_nh;
	if (nh->gateway && !addr_zero(nh->path_gw[out->path], v4))
		return nh->path_gw[out->path];
	return iph + (v4 ? 16 : 24);
}

/* the lladdr of nexthop on port in neighbour table t: the same next
 * hop as the family's lookup before in this burst (a gateway's), from
 * the same table, has its answer */
static inline const uint8_t *neigh_memo(struct nftdp_dp_worker *w,
					const struct nftdp_route_neigh *t, uint16_t port,
					const uint8_t *nexthop, bool v4)
{
	__typeof__(w->nb_memo[0]) *m = &w->nb_memo[v4];
	const uint8_t *lladdr;

	if (t && m->t == t && m->port == port && addr_eq(m->addr, nexthop, v4))
		return m->lladdr;
	lladdr = nftdp_route_neigh_lookup(t, v4 ? AF_INET : AF_INET6, w->dp->port[port].ifindex,
					  nexthop);
	m->t = t;
	m->port = port;
	memcpy(m->addr, nexthop, v4 ? 4 : 16);
	m->lladdr = lladdr;
	return lladdr;
}

/* the next hop's lladdr on its port, NULL while unresolved or while
 * packets queued on it (resolved since this poll began) are still to go:
 * behind them, as neigh_update sends its queue before anything new */
static const uint8_t *neigh_of(struct nftdp_dp_worker *w, const struct nftdp_dp_nh *out,
			       const uint8_t *nexthop, bool v4, bool queue_first)
{
	const struct nftdp_route_neigh *t =
	    atomic_load_explicit(&w->dp->nexthop->cur, memory_order_acquire);
	const uint8_t *lladdr = neigh_memo(w, t, out->tx_port, nexthop, v4);

	if (lladdr && w->n_unres && queue_first &&
	    nftdp_dp_unres_waiting(w, out->tx_port, v4 ? AF_INET : AF_INET6, nexthop))
		return NULL;
	return lladdr;
}

const uint8_t *nftdp_dp_nexthop_lladdr(struct nftdp_dp_worker *w, const struct nftdp_dp_nh *out,
				       const uint8_t *iph, bool v4)
{
	const struct nftdp_route_neigh *t =
	    atomic_load_explicit(&w->dp->nexthop->cur, memory_order_acquire);
	const uint8_t *nexthop = next_hop(out, iph, v4);
	const uint8_t *lladdr = neigh_memo(w, t, out->tx_port, nexthop, v4);

	/* behind the packets queued on it, as neigh_of */
	if (lladdr && w->n_unres &&
	    nftdp_dp_unres_waiting(w, out->tx_port, v4 ? AF_INET : AF_INET6, nexthop))
		return NULL;
	return lladdr;
}

bool nftdp_dp_nexthop_output(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
			     const struct nftdp_dp_meta *mt, const struct nftdp_dp_nh *out,
			     struct rte_mbuf *mb)
{
	const struct nftdp_dp_port *pt = &w->dp->port[out->tx_port];
	bool v4 = mt->ip_proto == NFTDP_DP_ETH_P_IP;
	const uint8_t *nexthop, *lladdr;
	uint8_t *d = p->data;

	nexthop = next_hop(out, d + mt->ip_off, v4);
	lladdr = neigh_of(w, out, nexthop, v4, !mt->frag_max);
	if (!lladdr) {
		/* the kernel queues it on the neighbour and solicits (unres.c);
		 * a reassembled datagram would leave unfragmented: dropped */
		if (w->unres && !mt->frag_max)
			nftdp_dp_unres_queue(w, mb, out->tx_port,
					     p->iif ? (uint16_t)(p->iif - 1) : out->tx_port,
					     v4 ? AF_INET : AF_INET6, nexthop);
		else
			nftdp_dp_nexthop_unresolved(w, mb);
		return false;
	}
	memcpy(d, lladdr, 6);
	memcpy(d + 6, pt->mac.addr_bytes, 6);
	return true;
}

bool nftdp_dp_nexthop_fwd(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
			  const struct nftdp_dp_meta *mt, struct rte_mbuf *mb, uint16_t rx_port)
{
	const struct nftdp_dp *dp = w->dp;
	const struct nftdp_dp_port *pt = &dp->port[p->out.fwd_oif - 1];
	bool v4 = p->out.fwd_nfproto == NFPROTO_IPV4;
	const struct nftdp_route_neigh *t = dp->nexthop ? nftdp_dp_nexthop_table(dp) : NULL;
	uint8_t *d = rte_pktmbuf_mtod(mb, uint8_t *), *iph = d + mt->ip_off;
	const uint8_t *lladdr;

	/* skb_try_make_writable(sizeof(*iph)): the header must be there */
	if (mb->nb_segs != 1 || mt->ip_off < 14 ||
	    (uint32_t)mt->ip_off + (v4 ? 20u : 40u) > rte_pktmbuf_data_len(mb)) {
		rte_pktmbuf_free(mb);
		return false;
	}
	if (v4) {
		/* ip_decrease_ttl: the checksum updated as it does */
		uint32_t check = (uint32_t)iph[10] << 8 | iph[11];

		check += 0x0100;
		check += check >= 0xffff;
		iph[10] = (uint8_t)(check >> 8);
		iph[11] = (uint8_t)check;
		iph[8]--;
	} else {
		iph[7]--;
	}
	/* neigh_xmit's dev_hard_header: a plain Ethernet header in front of
	 * the network header (tags the frame came with are not sent on) */
	if (mt->ip_off > 14) {
		d = (uint8_t *)rte_pktmbuf_adj(mb, (uint16_t)(mt->ip_off - 14));
		d[12] = v4 ? 0x08 : 0x86;
		d[13] = v4 ? 0x00 : 0xdd;
	}
	memcpy(d + 6, pt->mac.addr_bytes, 6);
	lladdr =
	    t ? nftdp_route_neigh_lookup(t, v4 ? AF_INET : AF_INET6, pt->ifindex, p->out.fwd_addr)
	      : NULL;
	if (lladdr && w->n_unres &&
	    nftdp_dp_unres_waiting(w, (uint16_t)(p->out.fwd_oif - 1), v4 ? AF_INET : AF_INET6,
				   p->out.fwd_addr))
		lladdr = NULL;
	if (!lladdr) {
		/* __neigh_event_send queues it and solicits (unres.c) */
		if (w->unres)
			nftdp_dp_unres_queue(w, mb, (uint16_t)(p->out.fwd_oif - 1), rx_port,
					     v4 ? AF_INET : AF_INET6, p->out.fwd_addr);
		else
			nftdp_dp_nexthop_unresolved(w, mb);
		return false;
	}
	memcpy(d, lladdr, 6);
	return true;
}

unsigned int nftdp_dp_nexthop_replies(struct nftdp_dp_worker *w, struct nftdp_vm_pkt **act,
				      unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = act[i];
		unsigned int idx = (unsigned int)(p - w->view);
		struct nftdp_dp_icmp icmp;
		const struct nftdp_dp_port *o;

		if (w->meta[idx].dup) { /* routed when it was made */
			act[k++] = p;
			continue;
		}
		w->nh[idx].dup = false;
		if (nftdp_dp_nexthop_route(w, p, &w->nh[idx], &icmp) != NFTDP_DP_DROP_MAX) {
			w->st.drop[NFTDP_DP_DROP_NO_ROUTE]++;
			rte_pktmbuf_free(w->mb[idx]);
			continue;
		}
		o = &w->dp->port[w->nh[idx].tx_port];
		p->oif = o->ifindex;
		p->oifname = o->name;
		act[k++] = p;
	}
	return k;
}
