// SPDX-License-Identifier: BSD-3-Clause
/*
 * Policy routing: the kernel's `ip rule` lists and the tables they name,
 * and the lookup through them. Mirrors fib_rules_lookup and fib_rule_match
 * (net/core/fib_rules.c), fib4_rule_match / _action / _suppress
 * (net/ipv4/fib_rules.c) and fib6_rule_match / _action / _suppress
 * (net/ipv6/fib6_rules.c). Local and main stay in route.c's rte_fib /
 * rte_fib6; the other tables (and, for IPv4 under custom rules, copies of
 * local and main, which the kernel then no longer merges: fib_unmerge)
 * live here in rte_rib / rte_rib6. The mirror (mirror.c) fills both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_memory.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include "route_priv.h"

/* a rule's blackhole and prohibit actions: no route, but an answer
 * (ip6_blk_hole_entry, ip6_prohibit_entry; -EINVAL, -EACCES for IPv4) */
static const struct nftdp_route_nh nh_blackhole = {.type = RTN_BLACKHOLE};
static const struct nftdp_route_nh nh_prohibit = {.type = RTN_PROHIBIT};

static int fam(int family)
{
	return family == AF_INET ? 0 : family == AF_INET6 ? 1 : -1;
}

int nftdp_route_rule_add(struct nftdp_route_table *t, const struct nftdp_route_rule *r)
{
	int f = fam(r->family);
	struct nftdp_route_rule *n;

	if (f < 0)
		return -EINVAL;
	if (t->n_rules[f] == t->cap_rules[f]) {
		uint32_t cap = t->cap_rules[f] ? t->cap_rules[f] * 2 : 8;

		n = realloc(t->rules[f], cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->rules[f] = n;
		t->cap_rules[f] = cap;
	}
	n = &t->rules[f][t->n_rules[f]++];
	*n = *r;
	n->goto_idx = -1;
	n->xt = -1;
	return 0;
}

int nftdp_route_table_add(struct nftdp_route_table *t, int family, uint32_t table, const void *addr,
			  uint8_t plen, const struct nftdp_route_nh *nh)
{
	unsigned int size = family == AF_INET ? 4 : 16;
	struct nftdp_route_nh n = *nh;
	uint32_t idx;
	int rc;

	if (fam(family) < 0 || plen > size * 8)
		return -EINVAL;
	if (t->n_pend == t->cap_pend) {
		uint32_t cap = t->cap_pend ? t->cap_pend * 2 : 64;
		struct nftdp_route_pend *p = realloc(t->pend, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->pend = p;
		t->cap_pend = cap;
	}
	memset(n.dst, 0, sizeof(n.dst));
	memcpy(n.dst, addr, size);
	nftdp_route_mask_prefix(n.dst, size, plen);
	n.plen = plen;
	n.family = (uint8_t)family;
	n.tbl = NFTDP_ROUTE_TBL_OTHER;
	rc = nftdp_route_nh_add(t, &n, &idx);
	if (rc < 0)
		return rc;
	t->pend[t->n_pend++] = (struct nftdp_route_pend){
	    .table = table, .nh = idx, .family = (uint8_t)family, .plen = plen};
	return 0;
}

void nftdp_route_policy_clear(struct nftdp_route_table *t)
{
	for (uint32_t i = 0; i < t->n_xt; i++) {
		rte_rib_free(t->xt[i].rib4);
		rte_rib6_free(t->xt[i].rib6);
	}
	free(t->xt);
	t->xt = NULL;
	t->n_xt = 0;
	t->n_rules[0] = t->n_rules[1] = 0;
	t->n_pend = 0;
	t->policy[0] = t->policy[1] = false;
	t->xt_default4 = -1;
}

static int32_t xt_find(const struct nftdp_route_table *t, uint8_t family, uint32_t id)
{
	for (uint32_t i = 0; i < t->n_xt; i++)
		if (t->xt[i].family == family && t->xt[i].id == id)
			return (int32_t)i;
	return -1;
}

/* the RIB of each table the pending routes name, sized to its routes */
static int xt_make(struct nftdp_route_table *t)
{
	for (uint32_t i = 0; i < t->n_pend; i++) {
		const struct nftdp_route_pend *p = &t->pend[i];
		struct nftdp_route_xtable *x;
		uint32_t n = 0;
		char name[32];

		if (xt_find(t, p->family, p->table) >= 0)
			continue;
		for (uint32_t j = i; j < t->n_pend; j++)
			n += t->pend[j].family == p->family && t->pend[j].table == p->table;
		x = realloc(t->xt, (t->n_xt + 1) * sizeof(*x));
		if (!x)
			return -ENOMEM;
		t->xt = x;
		x = &t->xt[t->n_xt];
		*x = (struct nftdp_route_xtable){.id = p->table, .family = p->family};
		snprintf(name, sizeof(name), "nftdp_rr_%u_%u", t->seq, t->xt_seq++);
		/* a RIB node per route and one per branch it makes */
		if (p->family == AF_INET) {
			struct rte_rib_conf c = {.ext_sz = 0, .max_nodes = 2 * n + 8};

			x->rib4 = rte_rib_create(name, SOCKET_ID_ANY, &c);
		} else {
			struct rte_rib6_conf c = {.ext_sz = 0, .max_nodes = 2 * n + 8};

			x->rib6 = rte_rib6_create(name, SOCKET_ID_ANY, &c);
		}
		if (!x->rib4 && !x->rib6)
			return rte_errno ? -rte_errno : -ENOMEM;
		t->n_xt++;
	}
	for (uint32_t i = 0; i < t->n_pend; i++) {
		const struct nftdp_route_pend *p = &t->pend[i];
		const struct nftdp_route_xtable *x = &t->xt[xt_find(t, p->family, p->table)];
		const struct nftdp_route_nh *nh = &t->nh[p->nh];

		/* a prefix keeps its first route (the lowest metric) */
		if (x->rib4) {
			uint32_t a;
			struct rte_rib_node *node;

			memcpy(&a, nh->dst, 4);
			a = ntohl(a);
			if (rte_rib_lookup_exact(x->rib4, a, p->plen))
				continue;
			node = rte_rib_insert(x->rib4, a, p->plen);
			if (!node)
				return -ENOSPC;
			rte_rib_set_nh(node, p->nh);
		} else {
			struct rte_rib6_node *node;

			if (rte_rib6_lookup_exact(x->rib6, nh->dst, p->plen))
				continue;
			node = rte_rib6_insert(x->rib6, nh->dst, p->plen);
			if (!node)
				return -ENOSPC;
			rte_rib6_set_nh(node, p->nh);
		}
	}
	t->n_pend = 0;
	return 0;
}

/* the rules a new netns has (fib_default_rules_init, fib6_rules_net_init) */
static bool default_list(const struct nftdp_route_rule *r, uint32_t n, int f)
{
	static const uint32_t pref[3] = {0, 32766, 32767};
	static const uint32_t table[3] = {RT_TABLE_LOCAL, RT_TABLE_MAIN, RT_TABLE_DEFAULT};

	if (n != (f == 0 ? 3u : 2u))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const struct nftdp_route_rule *x = &r[i];

		if (x->pref != pref[i] || x->table != table[i] || x->action != FR_ACT_TO_TBL ||
		    x->invert || x->tos || x->src_len || x->dst_len || x->iif || x->oif ||
		    x->mark_mask || x->ip_proto || x->sport[0] || x->sport[1] || x->dport[0] ||
		    x->dport[1] || x->sport_mask || x->dport_mask || x->dscp_full || x->uid_start ||
		    x->uid_end != UINT32_MAX || x->suppress_prefixlen != -1 ||
		    x->suppress_ifgroup != -1)
			return false;
	}
	return true;
}

int nftdp_route_policy_build(struct nftdp_route_table *t)
{
	int rc = xt_make(t);

	if (rc < 0)
		return rc;
	for (int f = 0; f < 2; f++) {
		uint8_t family = f ? AF_INET6 : AF_INET;

		for (uint32_t i = 0; i < t->n_rules[f]; i++) {
			struct nftdp_route_rule *r = &t->rules[f][i];

			r->xt = xt_find(t, family, r->table);
			r->goto_idx = -1;
			/* fib_nl_newrule: the first rule of the target's pref;
			 * backward jumps are refused, so it comes later */
			if (r->action == FR_ACT_GOTO)
				for (uint32_t j = i + 1; j < t->n_rules[f]; j++)
					if (t->rules[f][j].pref == r->target) {
						r->goto_idx = (int32_t)j;
						break;
					}
		}
		/* no list (no IPv6 in the netns): the tables as they are */
		t->policy[f] = t->n_rules[f] && !default_list(t->rules[f], t->n_rules[f], f);
	}
	t->xt_default4 = xt_find(t, AF_INET, RT_TABLE_DEFAULT);
	return 0;
}

bool nftdp_route_policy_active(const struct nftdp_route_table *t, int family)
{
	int f = fam(family);

	return f >= 0 && t->policy[f];
}

static bool prefix_eq(const uint8_t *a, const uint8_t *p, uint8_t plen)
{
	unsigned int full = plen / 8, rest = plen % 8;

	if (memcmp(a, p, full))
		return false;
	return !rest || ((a[full] ^ p[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

/* fib_rule_port_match: with a mask (FRA_*PORT_MASK, or a single port)
 * the masked bits of the range's start; else an unset range matches any
 * port, a set one its ports */
static bool port_match(const uint16_t range[2], uint16_t mask, uint16_t port)
{
	if (mask)
		return ((range[0] ^ port) & mask) == 0;
	if (!range[0] && !range[1])
		return true;
	return port >= range[0] && port <= range[1];
}

/* fib_rule_match with the family's match (fib4_rule_match, fib6_rule_match) */
static bool rule_match(const struct nftdp_route_rule *r, const struct nftdp_route_flow *fl, bool v4)
{
	bool ret = false;

	if (r->iif && r->iif != fl->iif)
		goto out;
	if (r->oif && r->oif != fl->oif)
		goto out;
	if ((r->mark ^ fl->mark) & r->mark_mask)
		goto out;
	/* flowi_uid: sock_net_uid(net, NULL) for forwarded packets and
	 * nft_fib's lookups, root (0) in the initial user namespace */
	if (r->uid_start > 0)
		goto out;
	if (r->dst_len && !prefix_eq(fl->daddr, r->dst, r->dst_len))
		goto out;
	if (r->src_len) {
		/* IPv4 compares whatever saddr is (0 when none); IPv6 needs
		 * RT6_LOOKUP_F_HAS_SADDR (FIB_RULE_FIND_SADDR aside) */
		if (!v4 && !fl->has_saddr)
			goto out;
		if (!prefix_eq(fl->saddr, r->src, r->src_len))
			goto out;
	}
	/* IPv4: the legacy TOS selector against the TOS bits of the DSCP
	 * (fib_dscp_masked_match, INET_DSCP_LEGACY_TOS_MASK); IPv6: the
	 * whole DSCP (ip6_dscp) */
	if (r->tos && (v4 ? (fl->dscp & 0x1c) : fl->dscp) != r->tos)
		goto out;
	/* FRA_DSCP: the whole DSCP under its mask, both families */
	if (r->dscp_full && ((r->dscp ^ fl->dscp) & r->dscp_mask))
		goto out;
	if (r->ip_proto && r->ip_proto != fl->proto)
		goto out;
	if (!port_match(r->sport, r->sport_mask, fl->sport) ||
	    !port_match(r->dport, r->dport_mask, fl->dport))
		goto out;
	ret = true;
out:
	return r->invert ? !ret : ret;
}

static uint32_t dev_group(const struct nftdp_route_table *t, uint32_t ifindex)
{
	for (unsigned int i = 0; i < t->n_devs; i++)
		if (t->devs[i].ifindex == ifindex)
			return t->devs[i].group;
	return 0;
}

/* fib4_rule_suppress / fib6_rule_suppress: a route found but not taken */
static bool suppress(const struct nftdp_route_table *t, const struct nftdp_route_rule *r,
		     const struct nftdp_route_nh *nh)
{
	if ((int32_t)nh->plen <= r->suppress_prefixlen)
		return true;
	return r->suppress_ifgroup != -1 && nh->n_oif &&
	       dev_group(t, nh->oif[0]) == (uint32_t)r->suppress_ifgroup;
}

static const struct nftdp_route_nh *xt_lookup_addr(const struct nftdp_route_table *t, int32_t xt,
						   const uint8_t *daddr)
{
	const struct nftdp_route_xtable *x = &t->xt[xt];
	uint64_t h = 0;

	if (x->rib4) {
		uint32_t a;
		struct rte_rib_node *n;

		memcpy(&a, daddr, 4);
		n = rte_rib_lookup(x->rib4, ntohl(a));
		if (n)
			rte_rib_get_nh(n, &h);
	} else {
		struct rte_rib6_node *n = rte_rib6_lookup(x->rib6, daddr);

		if (n)
			rte_rib6_get_nh(n, &h);
	}
	return h ? &t->nh[h] : NULL;
}

static const struct nftdp_route_nh *xt_lookup(const struct nftdp_route_table *t, int32_t xt,
					      const struct nftdp_route_flow *fl)
{
	return xt_lookup_addr(t, xt, fl->daddr);
}

/* one table as a rule's lookup sees it: NULL when the table has no route
 * (or does not exist: -EAGAIN, the next rule) */
static const struct nftdp_route_nh *table_lookup(const struct nftdp_route_table *t,
						 const struct nftdp_route_rule *r,
						 const struct nftdp_route_flow *fl, bool v4)
{
	/* IPv6 local and main are route.c's own tables; IPv4's are copied
	 * into policy tables (xt) since the merged rte_fib cannot tell them
	 * apart */
	if (!v4 && (r->table == RT_TABLE_MAIN || r->table == RT_TABLE_LOCAL))
		return nftdp_route_lookup6_tbl(t, fl->daddr, fl->ll_oif,
					       r->table == RT_TABLE_MAIN ? NFTDP_ROUTE_TBL_MAIN
									 : NFTDP_ROUTE_TBL_LOCAL);
	return r->xt >= 0 ? xt_lookup(t, r->xt, fl) : NULL;
}

/* route types whose lookup is an error, which ends the walk
 * (fib_props[].error, ip6_rt_type_to_error): no suppression for them */
static bool error_type(uint8_t type)
{
	return type == RTN_BLACKHOLE || type == RTN_UNREACHABLE || type == RTN_PROHIBIT;
}

/* fib_rules_lookup */
static const struct nftdp_route_nh *rules_lookup(const struct nftdp_route_table *t,
						 const struct nftdp_route_flow *fl, bool v4)
{
	const struct nftdp_route_rule *rules = t->rules[v4 ? 0 : 1];
	uint32_t n = t->n_rules[v4 ? 0 : 1];

	for (uint32_t i = 0; i < n; i++) {
		const struct nftdp_route_rule *r = &rules[i];
		const struct nftdp_route_nh *nh;

		while (r->action == FR_ACT_GOTO && r->goto_idx >= 0 && rule_match(r, fl, v4)) {
			i = (uint32_t)r->goto_idx; /* goto jumped: the target is matched too */
			r = &rules[i];
		}
		if (!rule_match(r, fl, v4))
			continue;
		switch (r->action) {
		case FR_ACT_TO_TBL:
			break;
		case FR_ACT_GOTO: /* unresolved: as if absent */
		case FR_ACT_NOP:
			continue;
		case FR_ACT_UNREACHABLE: /* -ENETUNREACH, ip6_null_entry: no route */
			return NULL;
		case FR_ACT_PROHIBIT:
			return &nh_prohibit;
		default: /* FR_ACT_BLACKHOLE and the rest: -EINVAL */
			return &nh_blackhole;
		}
		nh = table_lookup(t, r, fl, v4);
		/* no route, or a throw route: -EAGAIN, the next rule */
		if (!nh || nh->type == RTN_THROW)
			continue;
		if (!error_type(nh->type) && suppress(t, r, nh))
			continue;
		return nh;
	}
	return NULL; /* -ESRCH, which __fib_lookup makes -ENETUNREACH */
}

const struct nftdp_route_nh *nftdp_route_lookup4_dst(const struct nftdp_route_table *t,
						     const uint8_t daddr[4])
{
	const struct nftdp_route_nh *nh;
	uint32_t a;

	/* the default rules: the merged local and main trie, then table
	 * default when it has routes (fib_lookup without custom rules) */
	memcpy(&a, daddr, 4);
	nh = nftdp_route_lookup4(t, a);
	if (t->xt_default4 >= 0 && (!nh || nh->type == RTN_THROW)) {
		const struct nftdp_route_nh *d = xt_lookup_addr(t, t->xt_default4, daddr);

		if (d && d->type != RTN_THROW)
			return d;
		return NULL;
	}
	return nh;
}

const struct nftdp_route_nh *nftdp_route_lookup4_flow(const struct nftdp_route_table *t,
						      const struct nftdp_route_flow *fl)
{
	if (t->policy[0])
		return rules_lookup(t, fl, true);
	return nftdp_route_lookup4_dst(t, fl->daddr);
}

const struct nftdp_route_nh *nftdp_route_lookup6_flow(const struct nftdp_route_table *t,
						      const struct nftdp_route_flow *fl)
{
	if (t->policy[1])
		return rules_lookup(t, fl, false);
	return nftdp_route_lookup6(t, fl->daddr, fl->ll_oif);
}
