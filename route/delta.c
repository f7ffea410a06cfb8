// SPDX-License-Identifier: BSD-3-Clause
/*
 * Route updates as deltas: the route notifications of a burst (a batch)
 * applied to a table no worker reads, one prefix at a time, instead of a
 * refill from a full dump. A message sets its prefix's state (added,
 * replaced, deleted), so a batch applied to a table whose dump already
 * saw some of its messages still ends where a later dump would. What a
 * message alone cannot say asks for a refill (-EAGAIN): a prefix with
 * more than one route (another metric, IPv4 local over main, a dead one:
 * the shadow set), a NEWROUTE that does not replace the route of its
 * prefix (an append, another metric), IPv6 multipath (its siblings come
 * and go one by one), IPv6 link-local and multicast routes (per device),
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

static int apply_one(struct nftdp_route_table *t, const struct nlmsghdr *nlh)
{
	bool del = nlh->nlmsg_type == RTM_DELROUTE;
	struct nftdp_route_msg r;
	struct nftdp_route_nh *cur;
	uint32_t h, idx;
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
	if (r.family == AF_INET6 && (nftdp_route_is_ll6(r.dst, r.plen) || r.multipath))
		return -EAGAIN;
	if (r.dead || nftdp_route_shadow_has(t, r.family, r.tbl, r.dst, r.plen))
		return -EAGAIN;
	h = nftdp_route_exact(t, r.family, r.tbl, r.dst, r.plen);
	cur = h ? &t->nh[h] : NULL;
	r.nh.tbl = (uint8_t)r.tbl;
	if (del) {
		if (!cur)
			return 0; /* gone already (a later dump) */
		if (cur->tbl != r.nh.tbl || !nh_same(cur, &r.nh))
			/* IPv4: not the route of the prefix, and no other
			 * was there: the table is past this message */
			return r.family == AF_INET ? 0 : -EAGAIN;
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
	/* a replace of the prefix's route (same table and metric) takes its
	 * place; an append, another metric or the other table leave two
	 * routes, which only a dump orders */
	if (cur->tbl != r.nh.tbl || cur->metric != r.nh.metric ||
	    !(nlh->nlmsg_flags & NLM_F_REPLACE))
		return -EAGAIN;
	r.nh.family = r.family;
	r.nh.plen = r.plen;
	memset(r.nh.dst, 0, sizeof(r.nh.dst));
	memcpy(r.nh.dst, r.dst, r.family == AF_INET ? 4 : 16);
	rc = nftdp_route_nh_add(t, &r.nh, &idx);
	if (rc < 0)
		return rc;
	rc = fib_set(t, &r, idx); /* the prefix's next hop changes in place */
	if (rc < 0) {
		nftdp_route_nh_free(t, idx);
		return rc;
	}
	nftdp_route_nh_free(t, h);
	return 0;
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
