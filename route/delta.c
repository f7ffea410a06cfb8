// SPDX-License-Identifier: BSD-3-Clause
/*
 * Route updates as deltas: the route notifications of a burst (a batch)
 * applied to a table no worker reads, one prefix at a time, instead of a
 * refill from a full dump. A message sets its prefix's state (added,
 * replaced, deleted), so a batch applied to a table whose dump already
 * saw some of its messages still ends where a later dump would. What a
 * message alone cannot say asks for a refill (-EAGAIN): a prefix with
 * more than one route (another metric, IPv4 local over main, a dead one:
 * the shadow set; IPv4 routes of one table and distinct metrics are
 * listed there and kept: alt4), a NEWROUTE that does not replace the route of its
 * prefix (an IPv4 append, another metric), an IPv6 multipath message
 * that does not say the kernel's order of the paths (below: append6,
 * del_path6), IPv6 link-local and multicast routes (per device),
 * every route of a table an `ip rule` names, and a link notification
 * that changes what the mirror holds of the device (a promiscuity change
 * from tcpdump does not).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include "route_priv.h"

#define BATCH_MAX (32u << 20) /* bytes of messages; past it a refill is cheaper */

struct nftdp_route_batch {
	uint8_t *buf;
	size_t len, cap;
	unsigned int n;
	bool full;
};

int nftdp_route_batch_create(struct nftdp_route_batch **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void nftdp_route_batch_destroy(struct nftdp_route_batch *b)
{
	if (!b)
		return;
	free(b->buf);
	free(b);
}

void nftdp_route_batch_clear(struct nftdp_route_batch *b)
{
	b->len = 0;
	b->n = 0;
	b->full = false;
}

unsigned int nftdp_route_batch_count(const struct nftdp_route_batch *b)
{
	return b->n;
}

bool nftdp_route_batch_full(const struct nftdp_route_batch *b)
{
	return b->full;
}

void nftdp_route_batch_set_full(struct nftdp_route_batch *b)
{
	/* the messages no longer matter: a refill covers them */
	b->full = true;
	b->len = 0;
	b->n = 0;
}

int nftdp_route_batch_add(struct nftdp_route_batch *b, const void *msg, unsigned int len)
{
	const struct nlmsghdr *nlh = msg;
	size_t need = NLMSG_ALIGN(len);

	if (b->full)
		return 0;
	if (len < sizeof(*nlh) || nlh->nlmsg_len != len ||
	    (nlh->nlmsg_type != RTM_NEWROUTE && nlh->nlmsg_type != RTM_DELROUTE &&
	     nlh->nlmsg_type != RTM_NEWLINK) ||
	    b->len + need > BATCH_MAX) {
		nftdp_route_batch_set_full(b);
		return 0;
	}
	if (b->len + need > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64 * 1024;
		uint8_t *n;

		while (cap < b->len + need)
			cap *= 2;
		n = realloc(b->buf, cap);
		if (!n) {
			nftdp_route_batch_set_full(b);
			return -ENOMEM;
		}
		b->buf = n;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, msg, len);
	memset(b->buf + b->len + len, 0, need - len);
	b->len += need;
	b->n++;
	return 0;
}

/* the fields a lookup answers with (a message's next hop against the
 * table's, or two tables'): dst, plen, family and tbl are the prefix's */
static bool nh_same(const struct nftdp_route_nh *a, const struct nftdp_route_nh *b)
{
	if (a->type != b->type || a->n_oif != b->n_oif || a->gateway != b->gateway ||
	    a->mtu != b->mtu || a->metric != b->metric || a->path_dead != b->path_dead ||
	    memcmp(a->gw, b->gw, sizeof(a->gw)) != 0)
		return false;
	for (unsigned int i = 0; i < a->n_oif && i < NFTDP_ROUTE_MAX_PATHS; i++)
		if (a->oif[i] != b->oif[i] || a->path_weight[i] != b->path_weight[i] ||
		    memcmp(a->path_gw[i], b->path_gw[i], 16) != 0)
			return false;
	return true;
}

static int fib_set(struct nftdp_route_table *t, const struct nftdp_route_msg *r, uint32_t idx)
{
	uint32_t a;

	if (r->family == AF_INET) {
		memcpy(&a, r->dst, 4);
		return rte_fib_add(t->fib4, ntohl(a), r->plen, idx);
	}
	return rte_fib6_add(t->fib6[r->tbl], r->dst, r->plen, idx);
}

static int fib_unset(struct nftdp_route_table *t, const struct nftdp_route_msg *r)
{
	uint32_t a;

	if (r->family == AF_INET) {
		memcpy(&a, r->dst, 4);
		return rte_fib_delete(t->fib4, ntohl(a), r->plen);
	}
	return rte_fib6_delete(t->fib6[r->tbl], r->dst, r->plen);
}

/* IPv6 multipath (net/ipv6/route.c): the kernel keeps each next hop as a
 * route of its own (a sibling) and says so one message at a time. Adds,
 * replaces and appends with RTA_MULTIPATH (ip6_route_mpath_notify) and a
 * whole route's delete give every path from the first; a single next hop
 * appended (`ip -6 route append`, or an add without NLM_F_EXCL) gives
 * the new sibling first, then the others from the first
 * (fib6_add_rt2node: rt6_fill_node from the new route, which the sibling
 * list holds last), flags CREATE|APPEND or CREATE alone, as a multipath
 * append's; one next hop deleted (`ip -6 route del ... via`) gives that
 * route alone (fib6_del_route). So an append is read against the table:
 * the prefix's paths followed by the message's new ones (a multipath
 * append), or the message's paths after its first followed by the first
 * (a single one); the two cannot both fit, since the kernel refuses a
 * duplicate next hop (rt6_duplicate_nexthop). */

/* path i of a set as the refill reads it */
static bool path_same(const struct nftdp_route_nh *a, unsigned int i,
		      const struct nftdp_route_nh *b, unsigned int j)
{
	return a->oif[i] == b->oif[j] && memcmp(a->path_gw[i], b->path_gw[j], 16) == 0 &&
	       a->path_weight[i] == b->path_weight[j] &&
	       !!(a->path_dead & (1u << i)) == !!(b->path_dead & (1u << j));
}

/* nh's paths as the kernel lists them from[0..n): one path is a plain
 * route (weight 1, its gateway the route's), several a multipath one
 * (the route's gateway the first live path's), as mirror.c parses them */
static void set_paths(struct nftdp_route_nh *nh, const struct nftdp_route_nh *from,
		      const unsigned int *order, unsigned int n)
{
	struct nftdp_route_nh p = *from;
	bool live = false;

	nh->n_oif = (uint8_t)n;
	nh->path_dead = 0;
	memset(nh->gw, 0, sizeof(nh->gw));
	memset(nh->oif, 0, sizeof(nh->oif));
	memset(nh->path_gw, 0, sizeof(nh->path_gw));
	memset(nh->path_weight, 0, sizeof(nh->path_weight));
	nh->path_weight[0] = 1;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int o = order[i];

		nh->oif[i] = p.oif[o];
		memcpy(nh->path_gw[i], p.path_gw[o], 16);
		nh->path_weight[i] = p.path_weight[o];
		if (p.path_dead & (1u << o))
			nh->path_dead |= (uint8_t)(1u << i);
	}
	if (n == 1) {
		static const uint8_t zero[16];

		nh->path_weight[0] = 1;
		nh->path_dead = 0;
		memcpy(nh->gw, nh->path_gw[0], 16);
		nh->gateway = memcmp(nh->gw, zero, 16) != 0;
		return;
	}
	for (unsigned int i = 0; i < n && !live; i++)
		if (!(nh->path_dead & (1u << i))) {
			memcpy(nh->gw, nh->path_gw[i], 16);
			live = true;
		}
}

/* nh as the route of r's prefix */
static void nh_place(const struct nftdp_route_msg *r, struct nftdp_route_nh *nh)
{
	nh->family = r->family;
	nh->plen = r->plen;
	nh->tbl = (uint8_t)r->tbl;
	memset(nh->dst, 0, sizeof(nh->dst));
	memcpy(nh->dst, r->dst, r->family == AF_INET ? 4 : 16);
}

/* the prefix's route set to nh in place (the same table and metric) */
static int nh_swap(struct nftdp_route_table *t, const struct nftdp_route_msg *r, uint32_t h,
		   struct nftdp_route_nh *nh)
{
	uint32_t idx;
	int rc;

	nh_place(r, nh);
	rc = nftdp_route_nh_add(t, nh, &idx);
	if (rc < 0)
		return rc;
	rc = fib_set(t, r, idx); /* the prefix's next hop changes in place */
	if (rc < 0) {
		nftdp_route_nh_free(t, idx);
		return rc;
	}
	nftdp_route_nh_free(t, h);
	return 0;
}

/* an IPv6 NEWROUTE with several paths and no NLM_F_REPLACE at a prefix
 * whose route (cur, same table and metric) it extends: 0, or -EAGAIN
 * where the message does not say the kernel's order */
static int append6(struct nftdp_route_table *t, const struct nftdp_route_msg *r, uint32_t h)
{
	const struct nftdp_route_nh *cur = &t->nh[h];
	unsigned int n = r->nh.n_oif, order[NFTDP_ROUTE_MAX_PATHS], k = cur->n_oif;
	struct nftdp_route_nh as_is = r->nh, rot = r->nh;
	bool prefix1 = true, prefix2 = true;

	if (r->n_paths != n || n < 2 || cur->type != r->nh.type)
		return -EAGAIN; /* paths past those kept: the order is unknown */
	for (unsigned int i = 0; i < n; i++)
		order[i] = i;
	set_paths(&as_is, &r->nh, order, n);
	for (unsigned int i = 0; i < n; i++)
		order[i] = (i + 1) % n;
	set_paths(&rot, &r->nh, order, n);
	as_is.tbl = rot.tbl = cur->tbl;
	/* a single next hop appended: the metrics in the message are the
	 * new route's, the table's the first's */
	rot.mtu = cur->mtu;
	if (nh_same(cur, &as_is) || nh_same(cur, &rot))
		return 0; /* already so: a later dump saw it */
	if (k >= n)
		return -EAGAIN;
	for (unsigned int i = 0; i < k; i++) {
		prefix1 &= path_same(cur, i, &as_is, i);
		prefix2 &= path_same(cur, i, &rot, i);
	}
	if (prefix1 && cur->mtu == as_is.mtu)
		return nh_swap(t, r, h, &as_is);
	if (prefix2 && k + 1 == n && r->nh.mtu == cur->mtu)
		return nh_swap(t, r, h, &rot);
	return -EAGAIN;
}

/* an IPv6 DELROUTE of one path (no RTA_MULTIPATH) at a prefix whose
 * route (same table and metric) has several: that path leaves, the
 * others keep their order */
static int del_path6(struct nftdp_route_table *t, const struct nftdp_route_msg *r, uint32_t h)
{
	const struct nftdp_route_nh *cur = &t->nh[h];
	unsigned int order[NFTDP_ROUTE_MAX_PATHS], n = 0, i, at = cur->n_oif;
	struct nftdp_route_nh nh = *cur;

	/* a route of more paths than kept: which remain is unknown */
	if (cur->n_oif >= NFTDP_ROUTE_MAX_PATHS || r->nh.n_oif != 1)
		return -EAGAIN;
	for (i = 0; i < cur->n_oif; i++)
		if (cur->oif[i] == r->nh.oif[0] && memcmp(cur->path_gw[i], r->nh.gw, 16) == 0)
			at = i;
		else
			order[n++] = i;
	if (at == cur->n_oif)
		return 0; /* gone already (a later dump) */
	/* the metrics shown are the first sibling's: past it, unknown */
	if (at == 0 && cur->mtu)
		return -EAGAIN;
	set_paths(&nh, cur, order, n);
	return nh_swap(t, r, h, &nh);
}

/* IPv4 routes of one prefix, listed in the shadow set in the kernel's
 * order (fib_table_insert keeps a prefix's aliases by TOS, then
 * priority; TOS routes are not mirrored): a route of another metric
 * takes its place in the list, a replace or delete changes the route of
 * its metric, and rte_fib answers with the first. Two routes of one
 * metric (an append) or of other tables: a refill. */
static int alt4(struct nftdp_route_table *t, const struct nlmsghdr *nlh,
		const struct nftdp_route_msg *r, struct nftdp_route_shadow *s)
{
	unsigned int at = s->n_alt, i;
	struct nftdp_route_nh nh = r->nh;
	uint32_t idx, old;
	int rc;

	if (s->n_alt && t->nh[s->alt[0]].tbl != r->nh.tbl)
		return -EAGAIN;
	for (i = 0; i < s->n_alt; i++)
		if (t->nh[s->alt[i]].metric == r->nh.metric) {
			at = i;
			break;
		}
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		if (at == s->n_alt || !nh_same(&t->nh[s->alt[at]], &r->nh))
			return 0; /* not there: the table is past this message */
		old = s->alt[at];
		memmove(&s->alt[at], &s->alt[at + 1], (s->n_alt - at - 1) * sizeof(s->alt[0]));
		s->n_alt--;
		if (at == 0) {
			rc = s->n_alt ? fib_set(t, r, s->alt[0]) : fib_unset(t, r);
			if (rc < 0)
				return rc;
			if (!s->n_alt)
				t->n4--;
		}
		nftdp_route_nh_free(t, old);
		return 0;
	}
	if (at < s->n_alt) {
		if (nh_same(&t->nh[s->alt[at]], &r->nh))
			return 0; /* already so */
		if (!(nlh->nlmsg_flags & NLM_F_REPLACE))
			return -EAGAIN; /* a second route of the metric */
	} else if (s->n_alt == NFTDP_ROUTE_SHADOW_ALTS) {
		return -EAGAIN;
	}
	nh_place(r, &nh);
	rc = nftdp_route_nh_add(t, &nh, &idx);
	if (rc < 0)
		return rc;
	if (at < s->n_alt) { /* the route of the metric replaced */
		old = s->alt[at];
		s->alt[at] = idx;
	} else { /* a new one, by its metric */
		old = 0;
		for (at = 0; at < s->n_alt && t->nh[s->alt[at]].metric < r->nh.metric; at++)
			;
		memmove(&s->alt[at + 1], &s->alt[at], (s->n_alt - at) * sizeof(s->alt[0]));
		s->alt[at] = idx;
		s->n_alt++;
		if (s->n_alt == 1)
			t->n4++;
	}
	if (at == 0) {
		rc = fib_set(t, r, idx);
		if (rc < 0)
			return rc;
	}
	if (old)
		nftdp_route_nh_free(t, old);
	return 0;
}

static int apply_one(struct nftdp_route_table *t, const struct nlmsghdr *nlh)
{
	bool del = nlh->nlmsg_type == RTM_DELROUTE;
	struct nftdp_route_msg r;
	struct nftdp_route_nh *cur;
	bool mp6;
	uint32_t h;
	int rc;

	if (nlh->nlmsg_type == RTM_NEWLINK) /* a flag routes do not depend on */
		return nftdp_route_link_same(t, nlh) ? 0 : -EAGAIN;
	if (nftdp_route_msg_parse(t, nlh, &r) < 0)
		return -EAGAIN;
	if (r.skip)
		return 0; /* nothing the mirror keeps either */
	if (r.tbl == NFTDP_ROUTE_TBL_OTHER)
		return nftdp_route_table_kept(t, r.family, r.table) ? -EAGAIN : 0;
	/* IPv4 local and main have copies of their own under custom rules */
	if (r.family == AF_INET && t->policy[0])
		return -EAGAIN;
	nftdp_route_mask_prefix(r.dst, r.family == AF_INET ? 4 : 16, r.plen);
	if (r.family == AF_INET6 && nftdp_route_is_ll6(r.dst, r.plen))
		return -EAGAIN;
	if (r.dead)
		return -EAGAIN;
	if (r.family == AF_INET) {
		struct nftdp_route_shadow *s =
		    nftdp_route_shadow_get(t, r.family, r.tbl, r.dst, r.plen);

		r.nh.tbl = (uint8_t)r.tbl;
		if (s)
			return s->exact ? alt4(t, nlh, &r, s) : -EAGAIN;
	} else if (nftdp_route_shadow_has(t, r.family, r.tbl, r.dst, r.plen)) {
		return -EAGAIN;
	}
	h = nftdp_route_exact(t, r.family, r.tbl, r.dst, r.plen);
	cur = h ? &t->nh[h] : NULL;
	r.nh.tbl = (uint8_t)r.tbl;
	/* IPv4: a route of another metric beside the prefix's one */
	if (!del && r.family == AF_INET && cur && cur->tbl == r.nh.tbl &&
	    cur->metric != r.nh.metric) {
		struct nftdp_route_shadow *s = nftdp_route_shadow_new4(t, r.tbl, r.dst, r.plen, h);

		return s ? alt4(t, nlh, &r, s) : -ENOMEM;
	}
	/* IPv6 siblings: the prefix's route of this table and metric has
	 * several paths, or the message does */
	mp6 = r.family == AF_INET6 && cur && cur->tbl == r.nh.tbl && cur->metric == r.nh.metric &&
	      (cur->n_oif > 1 || r.multipath);
	if (del) {
		if (!cur)
			return 0; /* gone already (a later dump) */
		if (mp6 && !r.multipath && cur->n_oif > 1)
			return del_path6(t, &r, h);
		/* a sibling of a route that a later dump saw with one path
		 * left (a second route of the metric would be shadowed) */
		if (r.family == AF_INET6 && cur->tbl == r.nh.tbl && cur->metric == r.nh.metric &&
		    !r.multipath && r.nh.gateway && cur->gateway && cur->n_oif == 1 &&
		    !nh_same(cur, &r.nh))
			return 0;
		/* the whole route (__ip6_del_rt_siblings: every sibling) */
		if (mp6 && r.multipath)
			goto unset;
		if (cur->tbl != r.nh.tbl || !nh_same(cur, &r.nh))
			/* IPv4: not the route of the prefix, and no other
			 * was there: the table is past this message */
			return r.family == AF_INET ? 0 : -EAGAIN;
	unset:
		rc = fib_unset(t, &r);
		if (rc < 0)
			return rc;
		nftdp_route_nh_free(t, h);
		if (r.family == AF_INET)
			t->n4--;
		else
			t->n6--;
		return 0;
	}
	if (!cur)
		return nftdp_route_add(t, r.family, r.tbl, r.dst, r.plen, &r.nh);
	if (cur->tbl == r.nh.tbl && nh_same(cur, &r.nh))
		return 0; /* already so */
	if (mp6 && !(nlh->nlmsg_flags & NLM_F_REPLACE)) {
		if (r.multipath)
			return append6(t, &r, h);
		/* one path, no replace, where the route has several: only
		 * the add that made its first path (an append would have
		 * said the siblings), which a later dump saw */
		if (cur->n_oif > 1 && r.nh.n_oif == 1 && cur->oif[0] == r.nh.oif[0] &&
		    memcmp(cur->path_gw[0], r.nh.gw, 16) == 0 && cur->mtu == r.nh.mtu &&
		    cur->type == r.nh.type)
			return 0;
		return -EAGAIN;
	}
	/* a replace of the prefix's route (same table and metric) takes its
	 * place; an append, another metric or the other table leave two
	 * routes, which only a dump orders */
	if (cur->tbl != r.nh.tbl || cur->metric != r.nh.metric ||
	    !(nlh->nlmsg_flags & NLM_F_REPLACE))
		return -EAGAIN;
	return nh_swap(t, &r, h, &r.nh);
}

int nftdp_route_apply(struct nftdp_route_table *t, const struct nftdp_route_batch *b)
{
	size_t off = 0;

	if (b->full)
		return -EAGAIN;
	while (off < b->len) {
		const struct nlmsghdr *nlh = (const void *)(b->buf + off);
		int rc = apply_one(t, nlh);

		if (rc < 0)
			return rc;
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return 0;
}

static bool differ(char *why, unsigned int len, const char *what, int family, const uint8_t *dst,
		   uint8_t plen)
{
	if (why && len) {
		if (family == AF_INET)
			snprintf(why, len, "%s: %u.%u.%u.%u/%u", what, dst[0], dst[1], dst[2],
				 dst[3], plen);
		else
			snprintf(why, len, "%s: %02x%02x:%02x%02x:%02x%02x:%02x%02x::/%u", what,
				 dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6], dst[7],
				 plen);
	}
	return false;
}

static bool same_nh4(const struct nftdp_route_table *a, const struct nftdp_route_table *b,
		     uint64_t ha, uint64_t hb)
{
	return nh_same(&a->nh[ha], &b->nh[hb]) && a->nh[ha].tbl == b->nh[hb].tbl;
}

/* every route of a's IPv4 table is b's, with the same next hop; *n counts them */
static bool same4(const struct nftdp_route_table *a, const struct nftdp_route_table *b,
		  unsigned int *n, char *why, unsigned int len)
{
	struct rte_rib *ra = rte_fib_get_rib(a->fib4), *rb = rte_fib_get_rib(b->fib4);
	struct rte_rib_node *node = rte_rib_lookup_exact(ra, 0, 0), *o;
	uint64_t ha = 0, hb = 0;

	*n = 0;
	/* the default route: get_nxt gives only longer prefixes than 0/0 */
	if (node) {
		o = rte_rib_lookup_exact(rb, 0, 0);
		rte_rib_get_nh(node, &ha);
		if (o)
			rte_rib_get_nh(o, &hb);
		if (!o || !same_nh4(a, b, ha, hb))
			return differ(why, len, "IPv4 default route differs", AF_INET,
				      (const uint8_t[4]){0}, 0);
		(*n)++;
	}
	for (node = NULL;;) {
		uint32_t ip = 0;
		uint8_t depth = 0, d[4];

		node = rte_rib_get_nxt(ra, 0, 0, node, RTE_RIB_GET_NXT_ALL);
		if (!node)
			return true;
		rte_rib_get_ip(node, &ip);
		rte_rib_get_depth(node, &depth);
		rte_rib_get_nh(node, &ha);
		d[0] = (uint8_t)(ip >> 24);
		d[1] = (uint8_t)(ip >> 16);
		d[2] = (uint8_t)(ip >> 8);
		d[3] = (uint8_t)ip;
		o = rte_rib_lookup_exact(rb, ip, depth);
		if (!o)
			return differ(why, len, "IPv4 route only in one", AF_INET, d, depth);
		rte_rib_get_nh(o, &hb);
		if (!same_nh4(a, b, ha, hb))
			return differ(why, len, "IPv4 next hops differ", AF_INET, d, depth);
		(*n)++;
	}
}

static bool same6(const struct nftdp_route_table *a, const struct nftdp_route_table *b, int tbl,
		  unsigned int *n, char *why, unsigned int len)
{
	static const uint8_t zero[16];
	struct rte_rib6 *ra = rte_fib6_get_rib(a->fib6[tbl]), *rb = rte_fib6_get_rib(b->fib6[tbl]);
	struct rte_rib6_node *node = rte_rib6_lookup_exact(ra, zero, 0), *o;
	uint64_t ha = 0, hb = 0;

	*n = 0;
	if (node) {
		o = rte_rib6_lookup_exact(rb, zero, 0);
		rte_rib6_get_nh(node, &ha);
		if (o)
			rte_rib6_get_nh(o, &hb);
		if (!o || !nh_same(&a->nh[ha], &b->nh[hb]))
			return differ(why, len, "IPv6 default route differs", AF_INET6, zero, 0);
		(*n)++;
	}
	for (node = NULL;;) {
		uint8_t ip[16] = {0}, depth = 0;

		node = rte_rib6_get_nxt(ra, zero, 0, node, RTE_RIB6_GET_NXT_ALL);
		if (!node)
			return true;
		rte_rib6_get_ip(node, ip);
		rte_rib6_get_depth(node, &depth);
		rte_rib6_get_nh(node, &ha);
		o = rte_rib6_lookup_exact(rb, ip, depth);
		if (!o)
			return differ(why, len, "IPv6 route only in one", AF_INET6, ip, depth);
		rte_rib6_get_nh(o, &hb);
		if (!nh_same(&a->nh[ha], &b->nh[hb]))
			return differ(why, len, "IPv6 next hops differ", AF_INET6, ip, depth);
		(*n)++;
	}
}

bool nftdp_route_table_same(const struct nftdp_route_table *a, const struct nftdp_route_table *b,
			    char *why, unsigned int why_len)
{
	unsigned int na, nb;

	if (why && why_len)
		why[0] = '\0';
	if (!same4(a, b, &na, why, why_len) || !same4(b, a, &nb, why, why_len))
		return false;
	if (na != nb)
		return differ(why, why_len, "IPv4 route counts differ", AF_INET,
			      (const uint8_t[4]){0}, 0);
	for (int i = 0; i < 2; i++) {
		if (!same6(a, b, i, &na, why, why_len) || !same6(b, a, i, &nb, why, why_len))
			return false;
		if (na != nb)
			return differ(why, why_len, "IPv6 route counts differ", AF_INET6,
				      (const uint8_t[16]){0}, 0);
	}
	if (a->n4 != b->n4 || a->n6 != b->n6) {
		if (why && why_len)
			snprintf(why, why_len,
				 "route counts differ: IPv4 %u and %u, IPv6 %u and %u", a->n4,
				 b->n4, a->n6, b->n6);
		return false;
	}
	if (a->n_ll != b->n_ll || a->n_devs != b->n_devs || a->n_addr6 != b->n_addr6)
		return differ(why, why_len, "link-local routes, devices or addresses differ",
			      AF_INET6, (const uint8_t[16]){0}, 0);
	for (uint32_t i = 0; i < a->n_ll; i++)
		if (!nh_same(&a->ll[i], &b->ll[i]) || memcmp(a->ll[i].dst, b->ll[i].dst, 16) != 0)
			return differ(why, why_len, "link-local route differs", AF_INET6,
				      a->ll[i].dst, a->ll[i].plen);
	for (uint32_t i = 0; i < a->n_devs; i++)
		if (a->devs[i].ifindex != b->devs[i].ifindex ||
		    strcmp(a->devs[i].name, b->devs[i].name) != 0)
			return differ(why, why_len, "devices differ", AF_INET,
				      (const uint8_t[4]){0}, 0);
	for (uint32_t i = 0; i < a->n_addr6; i++)
		if (a->addr6[i].ifindex != b->addr6[i].ifindex ||
		    memcmp(a->addr6[i].addr, b->addr6[i].addr, 16) != 0)
			return differ(why, why_len, "IPv6 addresses differ", AF_INET6,
				      a->addr6[i].addr, 128);
	return true;
}
