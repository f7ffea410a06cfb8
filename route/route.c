// SPDX-License-Identifier: BSD-3-Clause
/*
 * The route table: rte_fib (IPv4, local and main merged) and rte_fib6
 * (IPv6, local then main), a next-hop table they index, IPv6 addresses by
 * device and device names. Link-local and multicast IPv6 routes live in a
 * short list beside rte_fib6: the kernel keeps fe80::/64 and ff00::/8 once
 * per device and picks the one of the packet's device
 * (RT6_LOOKUP_F_IFACE), which one longest-prefix table cannot hold. The mirror (mirror.c) fills it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_memory.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include "route_priv.h"

#define NH_MAX_2B 65535u /* 2-byte next hops; 0 is "no route" */
#define FIB_ROUTES 65536 /* the default size; bigger ones take 4-byte next hops */
#define FIB_TBL8 4096
/* a grown table: an IPv4 tbl8 group (a /24 with longer prefixes in it,
 * 1 KiB with 4-byte next hops) for every 32 routes of its size: 32 MiB at
 * 1M routes, room for the /25-/32s a full table and its local routes have */
#define FIB_TBL8_PER_ROUTES 32u
#define FIB6_TBL8 16384 /* a /64 takes up to 5 groups of the TRIE: ~3000 of them */
/* a grown table: a group for every 8 routes of its size (1 KiB each with
 * 4-byte next hops: 512 MiB a TRIE at 4M routes), room for 100k /64s */
#define FIB6_TBL8_PER_ROUTES 8u

static unsigned int fib_seq; /* control thread only: unique rte_fib names */

int nftdp_route_table_create(struct nftdp_route_table **out)
{
	return nftdp_route_table_create_sized(out, 0);
}

int nftdp_route_table_create_sized(struct nftdp_route_table **out, unsigned int max_routes)
{
	bool big = max_routes > FIB_ROUTES;
	struct rte_fib_conf c4 = {
	    .type = RTE_FIB_DIR24_8,
	    .default_nh = 0,
	    .max_routes = big ? (int)max_routes : FIB_ROUTES,
	    .dir24_8 = {.nh_sz = big ? RTE_FIB_DIR24_8_4B : RTE_FIB_DIR24_8_2B,
			.num_tbl8 = big ? max_routes / FIB_TBL8_PER_ROUTES : FIB_TBL8},
	};
	struct rte_fib6_conf c6 = {
	    .type = RTE_FIB6_TRIE,
	    .default_nh = 0,
	    .max_routes = big ? (int)max_routes : FIB_ROUTES,
	    .trie = {.nh_sz = big ? RTE_FIB6_TRIE_4B : RTE_FIB6_TRIE_2B,
		     .num_tbl8 = big ? max_routes / FIB6_TBL8_PER_ROUTES : FIB6_TBL8},
	};
	struct nftdp_route_table *t;
	char name[32];
	int rc;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->max_routes = big ? max_routes : FIB_ROUTES;
	/* next hops are shared by both families: one per route */
	t->nh_max = big ? max_routes : NH_MAX_2B;
	t->seq = fib_seq++;
	snprintf(name, sizeof(name), "nftdp_rt4_%u", t->seq);
	t->fib4 = rte_fib_create(name, SOCKET_ID_ANY, &c4);
	if (!t->fib4)
		goto err_fib;
	for (int i = 0; i < 2; i++) {
		/* the local table holds the box's own addresses: the default
		 * size, with the next hop size of the whole */
		struct rte_fib6_conf c6l = c6;

		c6l.max_routes = FIB_ROUTES;
		c6l.trie.num_tbl8 = FIB6_TBL8;
		snprintf(name, sizeof(name), "nftdp_rt6%c_%u", i ? 'l' : 'm', t->seq);
		t->fib6[i] = rte_fib6_create(name, SOCKET_ID_ANY, i ? &c6l : &c6);
		if (!t->fib6[i])
			goto err_fib;
	}
	/* next hop 0: the lookups' "no route" */
	t->nh = calloc(1, sizeof(*t->nh));
	if (!t->nh) {
		nftdp_route_table_destroy(t);
		return -ENOMEM;
	}
	t->n_nh = t->cap_nh = 1;
	t->xt_default4 = -1;
	*out = t;
	return 0;

err_fib:
	rc = rte_errno ? -rte_errno : -ENOMEM;
	nftdp_route_table_destroy(t);
	return rc;
}

void nftdp_route_table_destroy(struct nftdp_route_table *t)
{
	if (!t)
		return;
	rte_fib_free(t->fib4);
	rte_fib6_free(t->fib6[0]);
	rte_fib6_free(t->fib6[1]);
	nftdp_route_policy_clear(t);
	free(t->rules[0]);
	free(t->rules[1]);
	free(t->pend);
	free(t->nh_free);
	free(t->shadow);
	free(t->nh);
	free(t->ll);
	free(t->addr6);
	free(t->devs);
	free(t);
}

int nftdp_route_table_reset(struct nftdp_route_table *t)
{
	/* every route the tables hold has its next hop here (ll ones aside):
	 * delete them one by one, far cheaper than a new DIR24/TRIE */
	for (uint32_t i = 1; i < t->n_nh; i++) {
		const struct nftdp_route_nh *n = &t->nh[i];
		int rc;

		/* in a policy table's RIB, or given back by a delta */
		if (n->tbl == NFTDP_ROUTE_TBL_OTHER || n->family == AF_UNSPEC)
			continue;
		if (n->family == AF_INET) {
			uint32_t a;

			memcpy(&a, n->dst, 4);
			rc = rte_fib_delete(t->fib4, ntohl(a), n->plen);
		} else {
			rc = rte_fib6_delete(t->fib6[n->tbl], n->dst, n->plen);
		}
		/* a local route that replaced main's at the prefix (one
		 * rte_fib entry for both) is gone already */
		if (rc < 0 && rc != -ENOENT)
			return rc;
	}
	t->n_nh = 1;
	t->n_free = 0;
	if (t->n_shadow) {
		memset(t->shadow, 0, t->cap_shadow * sizeof(*t->shadow));
		t->n_shadow = 0;
	}
	t->n_ll = 0;
	t->n_addr6 = 0;
	t->n_devs = 0;
	t->n4 = t->n6 = 0;
	t->n_custom = 0;
	t->custom_why[0] = '\0';
	nftdp_route_policy_clear(t);
	return 0;
}

int nftdp_route_nh_add(struct nftdp_route_table *t, const struct nftdp_route_nh *nh, uint32_t *idx)
{
	struct nftdp_route_nh *n;

	if (t->n_free) { /* one a delta gave back */
		*idx = t->nh_free[--t->n_free];
		t->nh[*idx] = *nh;
		return 0;
	}
	if (t->n_nh >= t->nh_max)
		return -ENOSPC;
	if (t->n_nh == t->cap_nh) {
		uint32_t cap = t->cap_nh < 64 ? 64 : t->cap_nh * 2;

		n = realloc(t->nh, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->nh = n;
		t->cap_nh = cap;
	}
	t->nh[t->n_nh] = *nh;
	*idx = t->n_nh++;
	return 0;
}

void nftdp_route_nh_free(struct nftdp_route_table *t, uint32_t idx)
{
	if (t->n_free == t->cap_free) {
		uint32_t cap = t->cap_free ? t->cap_free * 2 : 64;
		uint32_t *f = realloc(t->nh_free, cap * sizeof(*f));

		if (!f) /* not reused then; a refill compacts */
			goto mark;
		t->nh_free = f;
		t->cap_free = cap;
	}
	t->nh_free[t->n_free++] = idx;
mark:
	t->nh[idx].family = AF_UNSPEC; /* nftdp_route_table_reset skips it */
}

/* the shadow set: open addressing, linear probing, at most half full */
static uint32_t shadow_hash(int family, unsigned int tbl, const uint8_t *dst, uint8_t plen)
{
	uint32_t h = 2166136261u;

	h = (h ^ (uint32_t)family) * 16777619u;
	h = (h ^ tbl) * 16777619u;
	h = (h ^ plen) * 16777619u;
	for (int i = 0; i < 16; i++)
		h = (h ^ dst[i]) * 16777619u;
	return h;
}

static void shadow_key(struct nftdp_route_shadow *k, int family, enum nftdp_route_tbl tbl,
		       const uint8_t *dst, uint8_t plen)
{
	memset(k, 0, sizeof(*k));
	k->used = 1;
	k->family = (uint8_t)family;
	k->tbl = family == AF_INET ? 0 : (uint8_t)tbl; /* IPv4: one merged table */
	k->plen = plen;
	memcpy(k->dst, dst, family == AF_INET ? 4 : 16);
	nftdp_route_mask_prefix(k->dst, 16, plen);
}

static struct nftdp_route_shadow *shadow_slot(struct nftdp_route_shadow *set, uint32_t cap,
					      const struct nftdp_route_shadow *k)
{
	uint32_t i = shadow_hash(k->family, k->tbl, k->dst, k->plen) & (cap - 1);

	while (set[i].used && memcmp(&set[i], k, offsetof(struct nftdp_route_shadow, exact)) != 0)
		i = (i + 1) & (cap - 1);
	return &set[i];
}

/* the prefix's entry, made (not exact, no routes) if new: 0, -ENOMEM */
static int shadow_put(struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
		      const uint8_t *dst, uint8_t plen, struct nftdp_route_shadow **out,
		      bool *fresh)
{
	struct nftdp_route_shadow k, *s;

	shadow_key(&k, family, tbl, dst, plen);
	if ((t->n_shadow + 1) * 2 > t->cap_shadow) {
		uint32_t cap = t->cap_shadow ? t->cap_shadow * 2 : 64;
		struct nftdp_route_shadow *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (uint32_t i = 0; i < t->cap_shadow; i++)
			if (t->shadow[i].used)
				*shadow_slot(n, cap, &t->shadow[i]) = t->shadow[i];
		free(t->shadow);
		t->shadow = n;
		t->cap_shadow = cap;
	}
	s = shadow_slot(t->shadow, t->cap_shadow, &k);
	*fresh = !s->used;
	if (!s->used) {
		*s = k;
		t->n_shadow++;
	}
	*out = s;
	return 0;
}

int nftdp_route_shadow_add(struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
			   const uint8_t *dst, uint8_t plen)
{
	struct nftdp_route_shadow *s;
	bool fresh;
	int rc = shadow_put(t, family, tbl, dst, plen, &s, &fresh);

	if (rc == 0)
		s->exact = false; /* a route no list says the place of */
	return rc;
}

struct nftdp_route_shadow *nftdp_route_shadow_get(struct nftdp_route_table *t, int family,
						  enum nftdp_route_tbl tbl, const uint8_t *dst,
						  uint8_t plen)
{
	struct nftdp_route_shadow k, *s;

	if (!t->n_shadow)
		return NULL;
	shadow_key(&k, family, tbl, dst, plen);
	s = shadow_slot(t->shadow, t->cap_shadow, &k);
	return s->used ? s : NULL;
}

struct nftdp_route_shadow *nftdp_route_shadow_new4(struct nftdp_route_table *t,
						   enum nftdp_route_tbl tbl, const uint8_t *dst,
						   uint8_t plen, uint32_t h)
{
	struct nftdp_route_shadow *s;
	bool fresh;

	if (shadow_put(t, AF_INET, tbl, dst, plen, &s, &fresh) < 0)
		return NULL;
	s->exact = true;
	s->n_alt = 1;
	s->alt[0] = h;
	return s;
}

bool nftdp_route_shadow_has(const struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
			    const uint8_t *dst, uint8_t plen)
{
	struct nftdp_route_shadow k;

	if (!t->n_shadow)
		return false;
	shadow_key(&k, family, tbl, dst, plen);
	return shadow_slot(t->shadow, t->cap_shadow, &k)->used;
}

/* the next hop at this exact prefix (the RIB under the FIB), 0 if none */
static uint64_t fib4_exact(struct nftdp_route_table *t, uint32_t a, uint8_t plen)
{
	struct rte_rib_node *n = rte_rib_lookup_exact(rte_fib_get_rib(t->fib4), a, plen);
	uint64_t h = 0;

	if (n)
		rte_rib_get_nh(n, &h);
	return h;
}

static uint64_t fib6_exact(struct nftdp_route_table *t, int i, const uint8_t *a, uint8_t plen)
{
	struct rte_rib6_node *n = rte_rib6_lookup_exact(rte_fib6_get_rib(t->fib6[i]), a, plen);
	uint64_t h = 0;

	if (n)
		rte_rib6_get_nh(n, &h);
	return h;
}

/* fe80::/10 and ff00::/8: the kernel keeps these routes once per device */
static bool per_dev6(const uint8_t *a)
{
	return (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || a[0] == 0xff;
}

/* a prefix (masked) of the per-device list */
bool nftdp_route_is_ll6(const uint8_t *dst, uint8_t plen)
{
	return plen >= 8 && per_dev6(dst) && (dst[0] == 0xff || plen >= 10);
}

uint32_t nftdp_route_exact(struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
			   const uint8_t *dst, uint8_t plen)
{
	uint32_t a;

	if (family == AF_INET) {
		memcpy(&a, dst, 4);
		return (uint32_t)fib4_exact(t, ntohl(a), plen);
	}
	return (uint32_t)fib6_exact(t, (int)tbl, dst, plen);
}

void nftdp_route_mask_prefix(uint8_t *a, unsigned int size, uint8_t plen)
{
	for (unsigned int i = 0; i < size; i++) {
		unsigned int bits = plen > i * 8 ? plen - i * 8 : 0;

		if (bits < 8)
			a[i] &= (uint8_t)(0xff00u >> bits);
	}
}

int nftdp_route_add(struct nftdp_route_table *t, int family, enum nftdp_route_tbl tbl,
		    const void *addr, uint8_t plen, const struct nftdp_route_nh *nh)
{
	struct nftdp_route_nh n = *nh;
	uint32_t idx;
	int rc;

	memset(n.dst, 0, sizeof(n.dst));
	n.tbl = (uint8_t)tbl;
	n.family = (uint8_t)family;
	if (family == AF_INET) {
		uint32_t a;
		uint64_t h = 0;

		if (plen > 32)
			return -EINVAL;
		memcpy(n.dst, addr, 4);
		nftdp_route_mask_prefix(n.dst, 4, plen);
		n.plen = plen;
		memcpy(&a, n.dst, 4);
		a = ntohl(a);
		/* a prefix keeps its first route, but local's wins over main's:
		 * the merged trie lists local's entries of a prefix first */
		h = fib4_exact(t, a, plen);
		if (h) {
			/* two routes of the prefix: the shadow set lists them
			 * in the dump's order, the kernel's (by metric), so a
			 * delta can tell which one answers once one goes
			 * (delta.c); other tables or an order it cannot
			 * keep: a refill then */
			struct nftdp_route_shadow *s;
			bool fresh;

			rc = shadow_put(t, family, tbl, n.dst, plen, &s, &fresh);
			if (rc < 0)
				return rc;
			if (fresh) {
				s->exact = true;
				s->n_alt = 1;
				s->alt[0] = (uint32_t)h;
			}
			if (!s->exact || !s->n_alt || t->nh[h].tbl != tbl ||
			    s->n_alt >= NFTDP_ROUTE_SHADOW_ALTS ||
			    t->nh[s->alt[s->n_alt - 1]].metric >= n.metric) {
				s->exact = false;
			} else {
				rc = nftdp_route_nh_add(t, &n, &idx);
				if (rc < 0)
					return rc;
				s->alt[s->n_alt++] = idx;
			}
			if (!(tbl == NFTDP_ROUTE_TBL_LOCAL && t->nh[h].tbl == NFTDP_ROUTE_TBL_MAIN))
				return -EEXIST;
		}
		rc = nftdp_route_nh_add(t, &n, &idx);
		if (rc < 0)
			return rc;
		rc = rte_fib_add(t->fib4, a, plen, idx);
		if (rc < 0)
			return rc;
		t->n4++;
		return 0;
	}
	if (family != AF_INET6 || plen > 128)
		return -EINVAL;
	memcpy(n.dst, addr, 16);
	nftdp_route_mask_prefix(n.dst, 16, plen);
	n.plen = plen;
	if (nftdp_route_is_ll6(n.dst, plen)) {
		struct nftdp_route_nh *l = realloc(t->ll, (t->n_ll + 1) * sizeof(*l));

		if (!l)
			return -ENOMEM;
		t->ll = l;
		t->ll[t->n_ll++] = n;
		t->n6++;
		return 0;
	}
	if (fib6_exact(t, (int)tbl, n.dst, plen)) {
		rc = nftdp_route_shadow_add(t, family, tbl, n.dst, plen);
		return rc < 0 ? rc : -EEXIST;
	}
	rc = nftdp_route_nh_add(t, &n, &idx);
	if (rc < 0)
		return rc;
	rc = rte_fib6_add(t->fib6[tbl], n.dst, plen, idx);
	if (rc < 0)
		return rc;
	t->n6++;
	return 0;
}

int nftdp_route_addr6_add(struct nftdp_route_table *t, uint32_t ifindex, const uint8_t addr[16])
{
	struct nftdp_route_addr6 *a = realloc(t->addr6, (t->n_addr6 + 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	t->addr6 = a;
	a[t->n_addr6].ifindex = ifindex;
	memcpy(a[t->n_addr6].addr, addr, 16);
	t->n_addr6++;
	return 0;
}

int nftdp_route_dev_add(struct nftdp_route_table *t, uint32_t ifindex, const char *name,
			uint32_t mtu)
{
	struct nftdp_route_dev *d = realloc(t->devs, (t->n_devs + 1) * sizeof(*d));

	if (!d)
		return -ENOMEM;
	t->devs = d;
	d[t->n_devs].ifindex = ifindex;
	d[t->n_devs].mtu = mtu;
	d[t->n_devs].group = 0;
	memset(d[t->n_devs].name, 0, sizeof(d[t->n_devs].name));
	snprintf(d[t->n_devs].name, sizeof(d[t->n_devs].name), "%s", name);
	t->n_devs++;
	return 0;
}

const struct nftdp_route_nh *nftdp_route_lookup4(const struct nftdp_route_table *t, uint32_t daddr)
{
	uint32_t a = ntohl(daddr);
	uint64_t h = 0;

	rte_fib_lookup_bulk(t->fib4, &a, &h, 1);
	return h ? &t->nh[h] : NULL;
}

static bool prefix_match(const uint8_t *a, const uint8_t *p, uint8_t plen)
{
	unsigned int full = plen / 8, rest = plen % 8;

	if (memcmp(a, p, full))
		return false;
	return !rest || ((a[full] ^ p[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

/* link-local or multicast: the longest route of device oif (any device
 * when 0, the first listed) in table tbl */
static const struct nftdp_route_nh *ll_lookup(const struct nftdp_route_table *t,
					      const uint8_t *daddr, uint32_t oif, uint8_t tbl)
{
	const struct nftdp_route_nh *best = NULL;

	for (unsigned int i = 0; i < t->n_ll; i++) {
		const struct nftdp_route_nh *n = &t->ll[i];

		if (n->tbl != tbl || !prefix_match(daddr, n->dst, n->plen))
			continue;
		if (oif && (!n->n_oif || n->oif[0] != oif))
			continue;
		if (!best || n->plen > best->plen)
			best = n;
	}
	return best;
}

const struct nftdp_route_nh *nftdp_route_lookup6_tbl(const struct nftdp_route_table *t,
						     const uint8_t daddr[16], uint32_t oif,
						     enum nftdp_route_tbl tbl)
{
	uint64_t h = 0;

	if (per_dev6(daddr))
		return ll_lookup(t, daddr, oif, (uint8_t)tbl);
	/* the address in place: a one-row array of it */
	rte_fib6_lookup_bulk(t->fib6[tbl], (uint8_t(*)[RTE_FIB6_IPV6_ADDR_SIZE])(uintptr_t)daddr,
			     &h, 1);
	return h ? &t->nh[h] : NULL;
}

const struct nftdp_route_nh *nftdp_route_lookup6(const struct nftdp_route_table *t,
						 const uint8_t daddr[16], uint32_t oif)
{
	const struct nftdp_route_nh *n =
	    nftdp_route_lookup6_tbl(t, daddr, oif, NFTDP_ROUTE_TBL_LOCAL);

	return n ? n : nftdp_route_lookup6_tbl(t, daddr, oif, NFTDP_ROUTE_TBL_MAIN);
}

bool nftdp_route_addr6_on(const struct nftdp_route_table *t, const uint8_t addr[16],
			  uint32_t ifindex)
{
	for (unsigned int i = 0; i < t->n_addr6; i++)
		if (t->addr6[i].ifindex == ifindex && memcmp(t->addr6[i].addr, addr, 16) == 0)
			return true;
	return false;
}

const char *nftdp_route_dev_name(const struct nftdp_route_table *t, uint32_t ifindex)
{
	for (unsigned int i = 0; i < t->n_devs; i++)
		if (t->devs[i].ifindex == ifindex)
			return t->devs[i].name;
	return NULL;
}

void nftdp_route_dev_group(struct nftdp_route_table *t, uint32_t ifindex, uint32_t group)
{
	for (unsigned int i = 0; i < t->n_devs; i++)
		if (t->devs[i].ifindex == ifindex)
			t->devs[i].group = group;
}

uint32_t nftdp_route_dev_mtu(const struct nftdp_route_table *t, uint32_t ifindex)
{
	for (unsigned int i = 0; i < t->n_devs; i++)
		if (t->devs[i].ifindex == ifindex)
			return t->devs[i].mtu;
	return 0;
}

unsigned int nftdp_route_capacity(const struct nftdp_route_table *t)
{
	return t->max_routes;
}

void nftdp_route_count(const struct nftdp_route_table *t, unsigned int *n4, unsigned int *n6)
{
	*n4 = t->n4;
	*n6 = t->n6;
}

bool nftdp_route_policy_custom(const struct nftdp_route_table *t, const char **why)
{
	if (why)
		*why = t->n_custom ? t->custom_why : NULL;
	return t->n_custom != 0;
}

int nftdp_route_path_select(const struct nftdp_route_nh *nh, uint32_t hash)
{
	uint32_t total = 0, x;

	/* fib_select_multipath's hash-threshold: each live path owns a share
	 * of the hash space by its weight, so a flow stays on its path while
	 * the route stands (the kernel's bounds, not its hash) */
	for (unsigned int i = 0; i < nh->n_oif; i++)
		if (!(nh->path_dead & (1u << i)))
			total += nh->path_weight[i] ? nh->path_weight[i] : 1;
	if (!total)
		return nh->n_oif ? 0 : -1; /* all dead: FIB_RES_DEV's first */
	x = (uint32_t)(((uint64_t)hash * total) >> 32);
	for (unsigned int i = 0; i < nh->n_oif; i++) {
		uint32_t w;

		if (nh->path_dead & (1u << i))
			continue;
		w = nh->path_weight[i] ? nh->path_weight[i] : 1;
		if (x < w)
			return (int)i;
		x -= w;
	}
	return 0;
}

/* SipHash-2-4 (include/linux/siphash.h, lib/siphash.c): 64-bit key words,
 * message words read little-endian, 2 compression and 4 finalization rounds */
#define SIPROUND(v0, v1, v2, v3)                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = (v1 << 13) | (v1 >> 51);                                                      \
		v1 ^= v0;                                                                          \
		v0 = (v0 << 32) | (v0 >> 32);                                                      \
		v2 += v3;                                                                          \
		v3 = (v3 << 16) | (v3 >> 48);                                                      \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = (v3 << 21) | (v3 >> 43);                                                      \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = (v1 << 17) | (v1 >> 47);                                                      \
		v1 ^= v2;                                                                          \
		v2 = (v2 << 32) | (v2 >> 32);                                                      \
	} while (0)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t nftdp_route_siphash(const void *data, size_t len, uint64_t k0, uint64_t k1);
uint64_t nftdp_route_siphash(const void *data, size_t len, uint64_t k0, uint64_t k1)
{
	const uint8_t *d = data;
	uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
	uint64_t b = (uint64_t)len << 56, m;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		m = le64(d + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)d[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

uint32_t nftdp_route_mp_hash(uint32_t seed, const struct nftdp_route_mp_keys *k)
{
	return nftdp_route_mp_hash32(seed, k) >> 1;
}

uint32_t nftdp_route_mp_hash32(uint32_t seed, const struct nftdp_route_mp_keys *k)
{
	/* struct flow_keys on 64-bit: control (8 bytes, not hashed), then
	 * from FLOW_KEYS_HASH_OFFSET 8: basic {n_proto, ip_proto, pad} at 8,
	 * tags.flow_label at 12, vlan and cvlan (8 each), keyid at 32, ports
	 * at 36, icmp at 40, addrs at 44 (v4: 8 bytes, v6: 32); 80 bytes in
	 * all. flow_keys_hash_length: 48 bytes for IPv4, 72 for IPv6 */
	uint8_t f[80];
	uint64_t key = (uint64_t)seed << 32 | seed; /* fib_multipath_hash_construct_key */
	uint32_t h;

	memset(f, 0, sizeof(f));
	f[10] = k->ip_proto;
	memcpy(f + 12, &k->flow_label, 4);
	memcpy(f + 36, &k->sport, 2);
	memcpy(f + 38, &k->dport, 2);
	if (!k->v6) {
		uint32_t s, d;

		memcpy(&s, k->saddr, 4);
		memcpy(&d, k->daddr, 4);
		/* __flow_hash_consistentify: raw u32 and u16 compares */
		if (d < s) {
			memcpy(f + 44, k->daddr, 4);
			memcpy(f + 48, k->saddr, 4);
		} else {
			memcpy(f + 44, k->saddr, 4);
			memcpy(f + 48, k->daddr, 4);
		}
	} else if (memcmp(k->daddr, k->saddr, 16) < 0) {
		memcpy(f + 44, k->daddr, 16);
		memcpy(f + 60, k->saddr, 16);
	} else {
		memcpy(f + 44, k->saddr, 16);
		memcpy(f + 60, k->daddr, 16);
	}
	if (k->dport < k->sport) {
		memcpy(f + 36, &k->dport, 2);
		memcpy(f + 38, &k->sport, 2);
	}
	h = (uint32_t)nftdp_route_siphash(f + 8, k->v6 ? 72 : 48, key, key);
	if (!h)
		h = 1;
	return h;
}

int nftdp_route_path_select_kernel(const struct nftdp_route_nh *nh, uint32_t hash31)
{
	uint64_t total = 0, w = 0;
	int first = -1;

	for (unsigned int i = 0; i < nh->n_oif; i++)
		if (!(nh->path_dead & (1u << i)))
			total += nh->path_weight[i] ? nh->path_weight[i] : 1;
	if (!total)
		return nh->n_oif ? 0 : -1;
	for (unsigned int i = 0; i < nh->n_oif; i++) {
		uint64_t bound;

		if (nh->path_dead & (1u << i))
			continue;
		if (first < 0)
			first = (int)i;
		w += nh->path_weight[i] ? nh->path_weight[i] : 1;
		/* DIV_ROUND_CLOSEST_ULL(w << 31, total) - 1 */
		bound = ((w << 31) + total / 2) / total - 1;
		if (hash31 <= bound)
			return (int)i;
	}
	return first; /* not reached: the last bound is 2^31 - 1 */
}
