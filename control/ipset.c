// SPDX-License-Identifier: BSD-3-Clause
/*
 * NFNL_SUBSYS_IPSET: the ipset tool's side of nfnetlink, as
 * net/netfilter/ipset/ip_set_core.c answers it (protocol, type, create,
 * destroy, flush, rename, swap, list/save, add/del/test, header, get by
 * name/index) with the kernel's IPSET_ERR_* errnos, for the types
 * hash:ip, hash:net, hash:ip,port, hash:net,port, hash:ip,port,ip,
 * hash:ip,port,net, hash:net,iface,
 * bitmap:ip, bitmap:ip,mac, bitmap:port and list:set, with the timeout, counters,
 * comment and skbinfo extensions. Headers and members are sent with the
 * attributes, flags and order the kernel's mtype_head/mtype_list put, so
 * `ipset list` and `ipset save` print what they print on the kernel.
 *
 * The sets live on the control thread; the workers read published
 * copies (-m set, --map-set) and ask for adds and deletes (-j SET)
 * through rings that ctl_ipset_events drains (vm/expr_compat_set.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/ipset/ip_set.h>
#include <linux/netfilter/ipset/ip_set_bitmap.h>
#include <linux/netfilter/ipset/ip_set_hash.h>
#include <linux/netfilter/ipset/ip_set_list.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/xt_set.h>
#include <linux/netlink.h>

#include "control_priv.h"
#include "ctl_state.h"
#include "nftdp_vm.h"

#ifndef NFNL_SUBSYS_IPSET
#define NFNL_SUBSYS_IPSET 6
#endif

#define IPSET_MAX_SETS 65534	   /* IPSET_INVALID_ID - 1 */
#define IPSET_MAX_TIMEOUT 2147483u /* (UINT_MAX >> 1) / MSEC_PER_SEC */
#define IPSET_ELEMS_MAX (1u << 22) /* every set together: bounded memory */
#define IPSET_DEFAULT_MAXELEM 65536u
#define IPSET_DEFAULT_HASHSIZE 1024u
#define IPSET_BITMAP_MAX_RANGE 0x10000u
#define IPSET_MSG_ROOM 3800u /* ipset reads 4096-byte datagrams */

enum ipset_kind {
	K_HASH_IP,
	K_HASH_NET,
	K_HASH_IPPORT,
	K_HASH_NETPORT,
	K_HASH_IPPORTIP,
	K_BITMAP_IP,
	K_BITMAP_PORT,
	K_LIST_SET,
	K_HASH_IPPORTNET,
	K_HASH_NETIFACE,
	K_BITMAP_IPMAC
};

/* type features (ip_set.h's IPSET_TYPE_*): swap needs equal ones */
#define F_IP 1
#define F_PORT 2
#define F_MAC 4
#define F_IP2 8
#define F_NAME 32
#define F_IFACE 64
#define F_NOMATCH 512
#define F_DUMP_LAST 128

static const struct ipset_type {
	const char *name;
	enum ipset_kind kind;
	uint8_t family; /* NFPROTO_UNSPEC: both */
	uint8_t rev_max;
	uint16_t features;
} types[] = {
    {"hash:ip", K_HASH_IP, NFPROTO_UNSPEC, 6, F_IP},
    {"hash:net", K_HASH_NET, NFPROTO_UNSPEC, 7, F_IP | F_NOMATCH},
    {"hash:ip,port", K_HASH_IPPORT, NFPROTO_UNSPEC, 7, F_IP | F_PORT},
    {"hash:net,port", K_HASH_NETPORT, NFPROTO_UNSPEC, 8, F_IP | F_PORT | F_NOMATCH},
    {"hash:ip,port,ip", K_HASH_IPPORTIP, NFPROTO_UNSPEC, 6, F_IP | F_PORT | F_IP2},
    {"bitmap:ip", K_BITMAP_IP, NFPROTO_IPV4, 3, F_IP},
    {"bitmap:ip,mac", K_BITMAP_IPMAC, NFPROTO_IPV4, 3, F_IP | F_MAC},
    {"bitmap:port", K_BITMAP_PORT, NFPROTO_UNSPEC, 3, F_PORT},
    {"list:set", K_LIST_SET, NFPROTO_UNSPEC, 3, F_NAME | F_DUMP_LAST},
    {"hash:ip,port,net", K_HASH_IPPORTNET, NFPROTO_UNSPEC, 8, F_IP | F_PORT | F_IP2 | F_NOMATCH},
    {"hash:net,iface", K_HASH_NETIFACE, NFPROTO_UNSPEC, 8, F_IP | F_IFACE | F_NOMATCH},
};

/* an element's key is the workers' (nftdp_vm.h), hashed alike */
#define ipset_key nftdp_vm_ipset_key
_Static_assert((int)K_LIST_SET == (int)NFTDP_VM_IPSET_LIST_SET &&
		   (int)K_BITMAP_IP == (int)NFTDP_VM_IPSET_BITMAP_IP &&
		   (int)K_HASH_IPPORTNET == (int)NFTDP_VM_IPSET_HASH_IPPORTNET &&
		   (int)K_HASH_NETIFACE == (int)NFTDP_VM_IPSET_HASH_NETIFACE &&
		   (int)K_BITMAP_IPMAC == (int)NFTDP_VM_IPSET_BITMAP_IPMAC,
	       "control's kinds are the VM's");

struct ipset_elem {
	struct ipset_key k;
	uint64_t expire_ms; /* 0: permanent */
	uint64_t packets, bytes;
	char *comment;
	uint32_t skbmark, skbmarkmask, skbprio;
	uint16_t skbqueue;
	bool nomatch;
	/* bitmap:ip,mac: the MAC, once known (MAC_FILLED); an element
	 * without one (MAC_UNSET) keeps its timeout unstarted in
	 * plain_timeout and never expires */
	bool mac_set;
	uint8_t mac[6];
	uint32_t plain_timeout;
	int32_t next; /* hash chain */
};

struct ipset {
	char name[IPSET_MAXNAMELEN];
	const struct ipset_type *type;
	uint8_t family, revision;
	uint32_t cadt_flags; /* WITH_COUNTERS, WITH_COMMENT, WITH_SKBINFO, WITH_FORCEADD */
	bool with_timeout;
	uint32_t timeout;
	uint32_t hashsize, maxelem, initval;
	uint8_t bucketsize, netmask;
	uint32_t first, last; /* bitmap range, host order */
	uint32_t size;	      /* list:set */
	/* a bitmap with counters: the packets and bytes of each id whose
	 * element went (del, flush, expiry), which a new element of that
	 * id starts from, as the kernel's bitmaps keep the counters in
	 * their extension memory; allocated at the first such removal */
	uint64_t (*kept)[2];
	uint32_t ref; /* list:set members naming it */
	bool dirty;   /* changed since last published to the workers */
	struct ipset_elem *e;
	uint32_t n, cap;
	int32_t *head;
	uint32_t nhead;
};

struct ctl_ipset {
	struct ipset **sets;
	bool *pub;    /* slot i published to the workers */
	uint32_t max; /* slots in sets[] (grows by 64 as the kernel's) */
	uint32_t elems;
	uint32_t kept; /* ids in every set's kept[] (bounded as elements are) */
};

static uint64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t (*ctl_ipset_clock)(void) = clock_ms;

/* ---- the store ---- */

static uint32_t key_hash(const struct ipset_key *k)
{
	return nftdp_vm_ipset_hash(k);
}

static bool expired(const struct ipset *set, const struct ipset_elem *e, uint64_t now)
{
	return set->with_timeout && e->expire_ms && e->expire_ms <= now;
}

static void index_rebuild(struct ipset *set)
{
	uint32_t want = 64;

	while (want < set->n * 2 && want < (1u << 24))
		want <<= 1;
	if (want != set->nhead) {
		int32_t *h = malloc(want * sizeof(*h));

		if (h == NULL)
			return; /* keep the old index: still correct, only slower */
		free(set->head);
		set->head = h;
		set->nhead = want;
	}
	for (uint32_t i = 0; i < set->nhead; i++)
		set->head[i] = -1;
	for (uint32_t i = 0; i < set->n; i++) {
		uint32_t b = key_hash(&set->e[i].k) & (set->nhead - 1);

		set->e[i].next = set->head[b];
		set->head[b] = (int32_t)i;
	}
}

static int32_t find_exact(const struct ipset *set, const struct ipset_key *k)
{
	if (set->nhead == 0)
		return -1;
	for (int32_t i = set->head[key_hash(k) & (set->nhead - 1)]; i >= 0; i = set->e[i].next)
		if (memcmp(&set->e[i].k, k, sizeof(*k)) == 0)
			return i;
	return -1;
}

/* hash:net,iface's data_equal: a stored wildcard element (proto 1)
 * equals any name it is a prefix of, whatever the asked one's flag */
static int32_t find(const struct ipset *set, const struct ipset_key *k)
{
	struct ipset_key w;
	int32_t i = find_exact(set, k);

	if (i >= 0 || set->type->kind != K_HASH_NETIFACE)
		return i;
	w = *k;
	w.proto = (uint8_t)!k->proto;
	if ((i = find_exact(set, &w)) >= 0)
		return i;
	w.proto = 1;
	for (size_t l = strnlen((const char *)k->ip2, 16); l-- > 1;) {
		w.ip2[l] = 0;
		if ((i = find_exact(set, &w)) >= 0)
			return i;
	}
	return -1;
}

static uint32_t ip4(const uint8_t ip[16]);

static bool is_bitmap(const struct ipset *set)
{
	return set->type->kind == K_BITMAP_IP || set->type->kind == K_BITMAP_IPMAC ||
	       set->type->kind == K_BITMAP_PORT;
}

/* a bitmap's number of elements (map->elements) */
static uint32_t bitmap_ids(const struct ipset *set)
{
	if (set->type->kind == K_BITMAP_PORT)
		return set->last - set->first + 1;
	return ((set->last - set->first) >> (32 - set->netmask)) + 1;
}

/* a bitmap element's index (ip_to_id / the port's offset) */
static uint32_t bitmap_id(const struct ipset *set, const struct ipset_key *k)
{
	if (set->type->kind == K_BITMAP_PORT)
		return (uint32_t)(k->port - set->first);
	return (ip4(k->ip) - set->first) >> (32 - set->netmask);
}

static void elem_release(struct ctl_ipset *st, struct ipset *set, struct ipset_elem *e)
{
	if (is_bitmap(set) && (set->cadt_flags & IPSET_FLAG_WITH_COUNTERS)) {
		uint32_t n = bitmap_ids(set), id = bitmap_id(set, &e->k);

		if (set->kept == NULL && st->kept + n <= IPSET_ELEMS_MAX &&
		    (set->kept = calloc(n, sizeof(*set->kept))) != NULL)
			st->kept += n;
		if (set->kept && id < n) { /* past the bound: they start at zero */
			set->kept[id][0] = e->packets;
			set->kept[id][1] = e->bytes;
		}
	}
	free(e->comment);
	e->comment = NULL;
	if (set->type->kind == K_LIST_SET && e->k.id < st->max && st->sets[e->k.id])
		st->sets[e->k.id]->ref--;
	st->elems--;
}

/* Remove element i keeping the order (bitmaps and lists print in order). */
/* the link that points at element i in its bucket's chain */
static int32_t *link_of(struct ipset *set, uint32_t i)
{
	int32_t *l = &set->head[key_hash(&set->e[i].k) & (set->nhead - 1)];

	while (*l >= 0 && *l != (int32_t)i)
		l = &set->e[*l].next;
	return l;
}

/* Remove element i. list:set keeps its order (a member's position is
 * its meaning); the other types move the last element into the hole
 * (bitmaps are sorted when listed), in O(chain) */
static void elem_remove(struct ctl_ipset *st, struct ipset *set, uint32_t i)
{
	uint32_t last = set->n - 1;

	set->dirty = true;
	elem_release(st, set, &set->e[i]);
	if (set->type->kind == K_LIST_SET || set->nhead == 0) {
		memmove(&set->e[i], &set->e[i + 1], (set->n - i - 1) * sizeof(set->e[0]));
		set->n--;
		index_rebuild(set);
		return;
	}
	*link_of(set, i) = set->e[i].next;
	if (i != last) {
		*link_of(set, last) = (int32_t)i;
		set->e[i] = set->e[last];
	}
	set->n--;
}

static void gc(struct ctl_ipset *st, struct ipset *set)
{
	uint64_t now = ctl_ipset_clock();
	uint32_t j = 0;

	if (!set->with_timeout)
		return;
	for (uint32_t i = 0; i < set->n; i++) {
		if (expired(set, &set->e[i], now)) {
			elem_release(st, set, &set->e[i]);
			continue;
		}
		set->e[j++] = set->e[i];
	}
	if (j != set->n) {
		set->n = j;
		index_rebuild(set);
	}
}

static void set_flush(struct ctl_ipset *st, struct ipset *set)
{
	set->dirty = true;
	for (uint32_t i = 0; i < set->n; i++)
		elem_release(st, set, &set->e[i]);
	set->n = 0;
	index_rebuild(set);
}

static void set_free(struct ctl_ipset *st, struct ipset *set)
{
	set_flush(st, set);
	if (set->kept)
		st->kept -= bitmap_ids(set);
	free(set->kept);
	free(set->e);
	free(set->head);
	free(set);
}

static struct ipset *find_set(struct ctl_ipset *st, const char *name, uint16_t *id)
{
	for (uint32_t i = 0; i < st->max; i++)
		if (st->sets[i] && strncmp(st->sets[i]->name, name, IPSET_MAXNAMELEN) == 0) {
			if (id)
				*id = (uint16_t)i;
			return st->sets[i];
		}
	return NULL;
}

static struct ctl_ipset *store(struct nftdp_ctl *ctl)
{
	if (ctl->ipset == NULL) {
		ctl->ipset = calloc(1, sizeof(*ctl->ipset));
		if (ctl->ipset == NULL)
			return NULL;
		ctl->ipset->max = 256; /* CONFIG_IP_SET_MAX */
		ctl->ipset->sets = calloc(ctl->ipset->max, sizeof(struct ipset *));
		ctl->ipset->pub = calloc(ctl->ipset->max, sizeof(bool));
		if (ctl->ipset->sets == NULL || ctl->ipset->pub == NULL) {
			free(ctl->ipset->sets);
			free(ctl->ipset->pub);
			free(ctl->ipset);
			ctl->ipset = NULL;
		}
	}
	return ctl->ipset;
}

void ctl_ipset_destroy(struct nftdp_ctl *ctl)
{
	struct ctl_ipset *st = ctl->ipset;

	if (st == NULL)
		return;
	for (uint32_t i = 0; i < st->max; i++)
		if (st->sets[i] && st->sets[i]->type->kind == K_LIST_SET)
			set_flush(st, st->sets[i]);
	for (uint32_t i = 0; i < st->max; i++) {
		if (st->pub[i])
			nftdp_vm_ipset_free(nftdp_vm_ipset_publish((uint16_t)i, NULL));
		if (st->sets[i])
			set_free(st, st->sets[i]);
	}
	free(st->sets);
	free(st->pub);
	free(st);
	ctl->ipset = NULL;
}

/* ---- attributes ---- */

typedef const struct nlattr *tb_t;

static bool netorder(const struct nlattr *a)
{
	return a == NULL || (a->nla_type & NLA_F_NET_BYTEORDER);
}

static uint32_t get_h32(const struct nlattr *a)
{
	return ntohl(mnl_attr_get_u32(a));
}

/* Parse a nest into tb[0..max] with expected payload sizes (0: any,
 * 0xffff: NUL string up to IPSET_MAXNAMELEN - 1, 0xfffe: comment). An
 * attribute the policy lacks or of the wrong size: IPSET_ERR_PROTOCOL. */
static int parse_nest(const struct nlattr *nest, tb_t *tb, unsigned int max, const uint16_t *pol)
{
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	if (!(nest->nla_type & NLA_F_NESTED))
		return -IPSET_ERR_PROTOCOL;
	mnl_attr_for_each_nested(a, nest)
	{
		uint16_t t = mnl_attr_get_type(a);
		uint16_t len = mnl_attr_get_payload_len(a);
		const char *p = mnl_attr_get_payload(a);

		if (t > max || pol[t] == 0)
			return -IPSET_ERR_PROTOCOL;
		if (pol[t] == 0xffff || pol[t] == 0xfffe) {
			size_t lim =
			    pol[t] == 0xffff ? IPSET_MAXNAMELEN - 1 : IPSET_MAX_COMMENT_SIZE;

			if (len == 0 || strnlen(p, len) == len || strnlen(p, len) > lim)
				return -IPSET_ERR_PROTOCOL;
		} else if (pol[t] == 0xfffd) { /* nested */
			if (!(a->nla_type & NLA_F_NESTED))
				return -IPSET_ERR_PROTOCOL;
		} else if (len < pol[t]) {
			return -IPSET_ERR_PROTOCOL;
		}
		tb[t] = a;
	}
	return 0;
}

#define P_STR 0xffff
#define P_COMMENT 0xfffe
#define P_NEST 0xfffd

/* ip_set_get_ipaddr4/6: a nest holding the family's address, in network order */
static int get_ipaddr(const struct nlattr *nest, uint8_t family, uint8_t out[16])
{
	static const uint16_t pol[IPSET_ATTR_IPADDR_MAX + 1] = {
	    [IPSET_ATTR_IPADDR_IPV4] = 4, [IPSET_ATTR_IPADDR_IPV6] = 16};
	tb_t tb[IPSET_ATTR_IPADDR_MAX + 1];
	int t = family == NFPROTO_IPV6 ? IPSET_ATTR_IPADDR_IPV6 : IPSET_ATTR_IPADDR_IPV4;

	if (parse_nest(nest, tb, IPSET_ATTR_IPADDR_MAX, pol) < 0 || tb[t] == NULL ||
	    !netorder(tb[t]))
		return -IPSET_ERR_PROTOCOL;
	memset(out, 0, 16);
	memcpy(out, mnl_attr_get_payload(tb[t]), t == IPSET_ATTR_IPADDR_IPV6 ? 16 : 4);
	return 0;
}

static void put_ipaddr(struct nlmsghdr *nlh, uint16_t type, uint8_t family, const uint8_t ip[16])
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);

	if (family == NFPROTO_IPV6)
		mnl_attr_put(nlh, IPSET_ATTR_IPADDR_IPV6, 16, ip);
	else
		mnl_attr_put(nlh, IPSET_ATTR_IPADDR_IPV4, 4, ip);
	mnl_attr_nest_end(nlh, n);
}

static void put_net32(struct nlmsghdr *nlh, uint16_t type, uint32_t v)
{
	mnl_attr_put_u32(nlh, type | NLA_F_NET_BYTEORDER, htonl(v));
}

static void put_net16(struct nlmsghdr *nlh, uint16_t type, uint16_t v)
{
	mnl_attr_put_u16(nlh, type | NLA_F_NET_BYTEORDER, htons(v));
}

static void put_net64(struct nlmsghdr *nlh, uint16_t type, uint64_t v)
{
	uint64_t be = ((uint64_t)htonl((uint32_t)v) << 32) | htonl((uint32_t)(v >> 32));

	mnl_attr_put_u64(nlh, type | NLA_F_NET_BYTEORDER, be);
}

static uint64_t get_net64(const struct nlattr *a)
{
	uint64_t v = mnl_attr_get_u64(a);

	return ((uint64_t)ntohl((uint32_t)v) << 32) | ntohl((uint32_t)(v >> 32));
}

static void mask_ip(uint8_t ip[16], uint8_t family, uint8_t cidr)
{
	unsigned int bits = family == NFPROTO_IPV6 ? 128 : 32;

	for (unsigned int i = 0; i < bits / 8; i++) {
		int keep = (int)cidr - (int)i * 8;

		if (keep <= 0)
			ip[i] = 0;
		else if (keep < 8)
			ip[i] &= (uint8_t)(0xff << (8 - keep));
	}
}

static uint32_t ip4(const uint8_t ip[16])
{
	uint32_t v;

	memcpy(&v, ip, 4);
	return ntohl(v);
}

static void set_ip4(uint8_t ip[16], uint32_t v)
{
	memset(ip, 0, 16);
	v = htonl(v);
	memcpy(ip, &v, 4);
}

/* An element's IPv4 range as the ip_set types' uadt take it: ip alone,
 * ip to IP_TO (either order) or ip's CIDR (1-32) block. */
static int elem_range4(tb_t *tb, uint32_t ip, uint32_t *from, uint32_t *to)
{
	*from = *to = ip;
	if (tb[IPSET_ATTR_IP_TO]) {
		uint8_t b[16];

		if (get_ipaddr(tb[IPSET_ATTR_IP_TO], NFPROTO_IPV4, b) < 0)
			return -IPSET_ERR_PROTOCOL;
		*to = ip4(b);
		if (*from > *to) {
			*to = *from;
			*from = ip4(b);
		}
	} else if (tb[IPSET_ATTR_CIDR]) {
		uint8_t c = mnl_attr_get_u8(tb[IPSET_ATTR_CIDR]);

		if (c == 0 || c > 32)
			return -IPSET_ERR_INVALID_CIDR;
		if (c < 32) {
			*from &= ~(0xffffffffu >> c);
			*to = *from | (0xffffffffu >> c);
		}
	}
	return 0;
}

/* ---- create ---- */

static const uint16_t create_pol[IPSET_ATTR_CREATE_MAX + 1] = {
    [IPSET_ATTR_IP] = P_NEST,	 [IPSET_ATTR_IP_TO] = P_NEST, [IPSET_ATTR_CIDR] = 1,
    [IPSET_ATTR_PORT] = 2,	 [IPSET_ATTR_PORT_TO] = 2,    [IPSET_ATTR_TIMEOUT] = 4,
    [IPSET_ATTR_PROTO] = 1,	 [IPSET_ATTR_CADT_FLAGS] = 4, [IPSET_ATTR_INITVAL] = 4,
    [IPSET_ATTR_HASHSIZE] = 4,	 [IPSET_ATTR_MAXELEM] = 4,    [IPSET_ATTR_NETMASK] = 1,
    [IPSET_ATTR_BUCKETSIZE] = 1, [IPSET_ATTR_RESIZE] = 1,     [IPSET_ATTR_SIZE] = 4,
    [IPSET_ATTR_LINENO] = 4,
};

static const struct ipset_type *type_find(const char *name, uint8_t family, bool *name_known)
{
	*name_known = false;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(types[i].name, name) != 0)
			continue;
		*name_known = true;
		if (types[i].family == NFPROTO_UNSPEC || types[i].family == family)
			return &types[i];
	}
	return NULL;
}
/* A bitmap's address range at create: IP and IP_TO (either order) or
 * IP/CIDR, as bitmap_ip_create and bitmap_ipmac_create take it */
static int bitmap_range(tb_t *tb, uint32_t *first, uint32_t *last)
{
	uint8_t a[16], b[16];

	if (!tb[IPSET_ATTR_IP] || get_ipaddr(tb[IPSET_ATTR_IP], NFPROTO_IPV4, a) < 0)
		return -IPSET_ERR_PROTOCOL;
	*first = ip4(a);
	if (tb[IPSET_ATTR_IP_TO]) {
		if (get_ipaddr(tb[IPSET_ATTR_IP_TO], NFPROTO_IPV4, b) < 0)
			return -IPSET_ERR_PROTOCOL;
		*last = ip4(b);
		if (*first > *last) {
			uint32_t t = *first;

			*first = *last;
			*last = t;
		}
		return 0;
	}
	if (tb[IPSET_ATTR_CIDR]) {
		uint8_t cidr = mnl_attr_get_u8(tb[IPSET_ATTR_CIDR]);

		if (cidr >= 32)
			return -IPSET_ERR_INVALID_CIDR;
		*first &= cidr ? ~(0xffffffffu >> cidr) : 0;
		*last = *first | (0xffffffffu >> cidr);
		return 0;
	}
	return -IPSET_ERR_PROTOCOL;
}

static int create_data(struct ipset *set, tb_t *tb)
{
	uint32_t cadt = 0;

	if (!netorder(tb[IPSET_ATTR_HASHSIZE]) || !netorder(tb[IPSET_ATTR_MAXELEM]) ||
	    !netorder(tb[IPSET_ATTR_TIMEOUT]) || !netorder(tb[IPSET_ATTR_CADT_FLAGS]) ||
	    !netorder(tb[IPSET_ATTR_PORT]) || !netorder(tb[IPSET_ATTR_PORT_TO]) ||
	    !netorder(tb[IPSET_ATTR_SIZE]) || !netorder(tb[IPSET_ATTR_INITVAL]))
		return -IPSET_ERR_PROTOCOL;
	if (tb[IPSET_ATTR_CADT_FLAGS])
		cadt = get_h32(tb[IPSET_ATTR_CADT_FLAGS]);
	set->cadt_flags = cadt & (IPSET_FLAG_WITH_COUNTERS | IPSET_FLAG_WITH_COMMENT |
				  IPSET_FLAG_WITH_SKBINFO | IPSET_FLAG_WITH_FORCEADD);
	if (tb[IPSET_ATTR_TIMEOUT]) {
		set->with_timeout = true;
		set->timeout = get_h32(tb[IPSET_ATTR_TIMEOUT]);
		if (set->timeout > IPSET_MAX_TIMEOUT)
			set->timeout = IPSET_MAX_TIMEOUT;
	}
	switch (set->type->kind) {
	case K_BITMAP_IP: {
		uint32_t first, last;
		int rc = bitmap_range(tb, &first, &last);

		if (rc < 0)
			return rc;
		set->netmask = 32;
		if (tb[IPSET_ATTR_NETMASK]) {
			set->netmask = mnl_attr_get_u8(tb[IPSET_ATTR_NETMASK]);
			if (set->netmask > 32)
				return -IPSET_ERR_INVALID_NETMASK;
			if (set->netmask == 0)
				return -IPSET_ERR_INVALID_NETMASK;
			first &= set->netmask ? ~(0xffffffffu >> set->netmask) : 0;
			last |= 0xffffffffu >> set->netmask;
		}
		if (((uint64_t)last - first + 1) >> (32 - set->netmask) > IPSET_BITMAP_MAX_RANGE &&
		    set->netmask == 32)
			return -IPSET_ERR_BITMAP_RANGE_SIZE;
		if ((((uint64_t)last - first) >> (32 - set->netmask)) + 1 > IPSET_BITMAP_MAX_RANGE)
			return -IPSET_ERR_BITMAP_RANGE_SIZE;
		set->first = first;
		set->last = last;
		break;
	}
	case K_BITMAP_IPMAC: {
		/* bitmap_ipmac_create: no netmask; up to 65536 addresses */
		uint32_t first, last;
		int rc;

		set->cadt_flags &= ~(uint32_t)IPSET_FLAG_WITH_FORCEADD;
		rc = bitmap_range(tb, &first, &last);
		if (rc < 0)
			return rc;
		if ((uint64_t)last - first + 1 > IPSET_BITMAP_MAX_RANGE)
			return -IPSET_ERR_BITMAP_RANGE_SIZE;
		set->netmask = 32;
		set->first = first;
		set->last = last;
		break;
	}
	case K_BITMAP_PORT: {
		uint16_t a, b;

		if (!tb[IPSET_ATTR_PORT] || !tb[IPSET_ATTR_PORT_TO])
			return -IPSET_ERR_PROTOCOL;
		a = ntohs(mnl_attr_get_u16(tb[IPSET_ATTR_PORT]));
		b = ntohs(mnl_attr_get_u16(tb[IPSET_ATTR_PORT_TO]));
		set->first = a < b ? a : b;
		set->last = a < b ? b : a;
		break;
	}
	case K_LIST_SET:
		set->size = 8;
		if (tb[IPSET_ATTR_SIZE])
			set->size = get_h32(tb[IPSET_ATTR_SIZE]);
		if (set->size < 4) /* IP_SET_LIST_MIN_SIZE */
			set->size = 4;
		if (set->size > IPSET_ELEMS_MAX)
			return -ENOMEM;
		break;
	default: {
		uint32_t hs = IPSET_DEFAULT_HASHSIZE;

		if (set->family != NFPROTO_IPV4 && set->family != NFPROTO_IPV6)
			return -IPSET_ERR_INVALID_FAMILY;
		if (tb[IPSET_ATTR_HASHSIZE]) {
			hs = get_h32(tb[IPSET_ATTR_HASHSIZE]);
			if (hs < 64) /* IPSET_MIMINAL_HASHSIZE */
				hs = 64;
		}
		if (hs > (1u << 31))
			return -ENOMEM;
		set->hashsize = 64;
		while (set->hashsize < hs)
			set->hashsize <<= 1;
		set->maxelem = IPSET_DEFAULT_MAXELEM;
		if (tb[IPSET_ATTR_MAXELEM])
			set->maxelem = get_h32(tb[IPSET_ATTR_MAXELEM]);
		set->bucketsize = 12; /* AHASH_MAX_SIZE */
		if (tb[IPSET_ATTR_BUCKETSIZE]) {
			uint8_t bs = mnl_attr_get_u8(tb[IPSET_ATTR_BUCKETSIZE]);

			set->bucketsize = bs < 4 ? 4 : bs > 12 ? 12 : (uint8_t)(bs + (bs & 1));
		}
		if (tb[IPSET_ATTR_INITVAL])
			set->initval = get_h32(tb[IPSET_ATTR_INITVAL]);
		else
			set->initval = (uint32_t)random() ^ (uint32_t)ctl_ipset_clock();
		set->netmask = set->family == NFPROTO_IPV6 ? 128 : 32;
		if (tb[IPSET_ATTR_NETMASK]) {
			uint8_t nm = mnl_attr_get_u8(tb[IPSET_ATTR_NETMASK]);

			if (set->type->kind != K_HASH_IP || nm == 0 || nm > set->netmask)
				return -IPSET_ERR_INVALID_NETMASK;
			set->netmask = nm;
		}
		break;
	}
	}
	return 0;
}

static bool same_set(const struct ipset *a, const struct ipset *b)
{
	return a->type == b->type && a->family == b->family && a->cadt_flags == b->cadt_flags &&
	       a->with_timeout == b->with_timeout && a->timeout == b->timeout &&
	       a->hashsize == b->hashsize && a->maxelem == b->maxelem && a->netmask == b->netmask &&
	       a->first == b->first && a->last == b->last && a->size == b->size;
}

static int ipset_create(struct ctl_ipset *st, const struct nlmsghdr *nlh, tb_t *attr)
{
	tb_t tb[IPSET_ATTR_CREATE_MAX + 1] = {0};
	const struct ipset_type *type;
	struct ipset *set, *clash;
	bool known;
	uint8_t family, rev;
	uint32_t slot = UINT32_MAX;
	int err;

	if (!attr[IPSET_ATTR_SETNAME] || !attr[IPSET_ATTR_TYPENAME] || !attr[IPSET_ATTR_REVISION] ||
	    !attr[IPSET_ATTR_FAMILY] ||
	    (attr[IPSET_ATTR_DATA] && !(attr[IPSET_ATTR_DATA]->nla_type & NLA_F_NESTED)))
		return -IPSET_ERR_PROTOCOL;
	family = mnl_attr_get_u8(attr[IPSET_ATTR_FAMILY]);
	rev = mnl_attr_get_u8(attr[IPSET_ATTR_REVISION]);
	type = type_find(mnl_attr_get_str(attr[IPSET_ATTR_TYPENAME]), family, &known);
	if (type == NULL || rev > type->rev_max)
		return -IPSET_ERR_FIND_TYPE;
	if (attr[IPSET_ATTR_DATA] &&
	    parse_nest(attr[IPSET_ATTR_DATA], tb, IPSET_ATTR_CREATE_MAX, create_pol) < 0)
		return -IPSET_ERR_PROTOCOL;
	set = calloc(1, sizeof(*set));
	if (set == NULL)
		return -ENOMEM;
	snprintf(set->name, sizeof(set->name), "%s", mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]));
	set->type = type;
	set->family = family;
	set->revision = rev;
	err = create_data(set, tb);
	if (err < 0)
		goto fail;
	clash = NULL;
	for (uint32_t i = 0; i < st->max; i++) {
		if (st->sets[i] == NULL) {
			if (slot == UINT32_MAX)
				slot = i;
		} else if (strncmp(st->sets[i]->name, set->name, IPSET_MAXNAMELEN) == 0) {
			clash = st->sets[i];
		}
	}
	if (clash) {
		err = -EEXIST;
		if (!(nlh->nlmsg_flags & NLM_F_EXCL) && same_set(set, clash))
			err = 0;
		goto fail;
	}
	if (slot == UINT32_MAX) {
		uint32_t nmax = st->max + 64;
		struct ipset **n;

		if (nmax > IPSET_MAX_SETS) {
			err = -IPSET_ERR_MAX_SETS;
			goto fail;
		}
		n = realloc(st->sets, nmax * sizeof(*n));
		if (n == NULL) {
			err = -IPSET_ERR_MAX_SETS;
			goto fail;
		}
		memset(n + st->max, 0, 64 * sizeof(*n));
		st->sets = n;
		{
			bool *p = realloc(st->pub, nmax * sizeof(*p));

			if (p == NULL) {
				err = -IPSET_ERR_MAX_SETS;
				goto fail;
			}
			memset(p + st->max, 0, 64 * sizeof(*p));
			st->pub = p;
		}
		slot = st->max;
		st->max = nmax;
	}
	index_rebuild(set);
	st->sets[slot] = set;
	return 0;
fail:
	free(set);
	return err;
}

/* ---- add, del, test ---- */

static const uint16_t adt_pol[IPSET_ATTR_ADT_MAX + 1] = {
    [IPSET_ATTR_IP] = P_NEST,	  [IPSET_ATTR_IP_TO] = P_NEST,
    [IPSET_ATTR_CIDR] = 1,	  [IPSET_ATTR_PORT] = 2,
    [IPSET_ATTR_PORT_TO] = 2,	  [IPSET_ATTR_TIMEOUT] = 4,
    [IPSET_ATTR_PROTO] = 1,	  [IPSET_ATTR_CADT_FLAGS] = 4,
    [IPSET_ATTR_LINENO] = 4,	  [IPSET_ATTR_IP2] = P_NEST,
    [IPSET_ATTR_CIDR2] = 1,	  [IPSET_ATTR_NAME] = P_STR,
    [IPSET_ATTR_NAMEREF] = P_STR, [IPSET_ATTR_BYTES] = 8,
    [IPSET_ATTR_PACKETS] = 8,	  [IPSET_ATTR_COMMENT] = P_COMMENT,
    [IPSET_ATTR_SKBMARK] = 8,	  [IPSET_ATTR_SKBPRIO] = 4,
    [IPSET_ATTR_SKBQUEUE] = 2,	  [IPSET_ATTR_IP2_TO] = P_NEST,
    [IPSET_ATTR_IFACE] = P_STR,	  [IPSET_ATTR_ETHER] = 1,
};

/* which ADT attributes each kind takes (the type's adt_policy) */
static bool adt_allowed(enum ipset_kind k, unsigned int t)
{
	switch (t) {
	case IPSET_ATTR_TIMEOUT:
	case IPSET_ATTR_CADT_FLAGS:
	case IPSET_ATTR_LINENO:
	case IPSET_ATTR_BYTES:
	case IPSET_ATTR_PACKETS:
	case IPSET_ATTR_COMMENT:
	case IPSET_ATTR_SKBMARK:
	case IPSET_ATTR_SKBPRIO:
	case IPSET_ATTR_SKBQUEUE:
		return true;
	case IPSET_ATTR_IP:
	case IPSET_ATTR_IP_TO:
	case IPSET_ATTR_CIDR:
		return k != K_BITMAP_PORT && k != K_LIST_SET;
	case IPSET_ATTR_PORT:
	case IPSET_ATTR_PORT_TO:
		return k == K_HASH_IPPORT || k == K_HASH_NETPORT || k == K_HASH_IPPORTIP ||
		       k == K_HASH_IPPORTNET || k == K_BITMAP_PORT;
	case IPSET_ATTR_PROTO:
		return k == K_HASH_IPPORT || k == K_HASH_NETPORT || k == K_HASH_IPPORTIP ||
		       k == K_HASH_IPPORTNET || k == K_BITMAP_PORT;
	case IPSET_ATTR_IP2:
	case IPSET_ATTR_CIDR2:
		return k == K_HASH_IPPORTIP || k == K_HASH_IPPORTNET;
	case IPSET_ATTR_IP2_TO:
		return k == K_HASH_IPPORTNET;
	case IPSET_ATTR_IFACE:
		return k == K_HASH_NETIFACE;
	case IPSET_ATTR_ETHER:
		return k == K_BITMAP_IPMAC;
	case IPSET_ATTR_NAME:
	case IPSET_ATTR_NAMEREF:
		return k == K_LIST_SET;
	default:
		return false;
	}
}

struct ext {
	bool has_timeout, has_packets, has_bytes, has_skb;
	uint32_t timeout;
	uint64_t packets, bytes;
	const char *comment;
	uint32_t skbmark, skbmarkmask, skbprio;
	uint16_t skbqueue;
};

/* ip_set_get_extensions */
static int get_ext(const struct ipset *set, tb_t *tb, struct ext *x)
{
	memset(x, 0, sizeof(*x));
	if (!netorder(tb[IPSET_ATTR_TIMEOUT]) || !netorder(tb[IPSET_ATTR_PACKETS]) ||
	    !netorder(tb[IPSET_ATTR_BYTES]) || !netorder(tb[IPSET_ATTR_SKBMARK]) ||
	    !netorder(tb[IPSET_ATTR_SKBPRIO]) || !netorder(tb[IPSET_ATTR_SKBQUEUE]))
		return -IPSET_ERR_PROTOCOL;
	if (tb[IPSET_ATTR_TIMEOUT]) {
		if (!set->with_timeout)
			return -IPSET_ERR_TIMEOUT;
		x->has_timeout = true;
		x->timeout = get_h32(tb[IPSET_ATTR_TIMEOUT]);
		if (x->timeout > IPSET_MAX_TIMEOUT)
			x->timeout = IPSET_MAX_TIMEOUT;
	}
	if (tb[IPSET_ATTR_BYTES] || tb[IPSET_ATTR_PACKETS]) {
		if (!(set->cadt_flags & IPSET_FLAG_WITH_COUNTERS))
			return -IPSET_ERR_COUNTER;
		if (tb[IPSET_ATTR_BYTES]) {
			x->has_bytes = true;
			x->bytes = get_net64(tb[IPSET_ATTR_BYTES]);
		}
		if (tb[IPSET_ATTR_PACKETS]) {
			x->has_packets = true;
			x->packets = get_net64(tb[IPSET_ATTR_PACKETS]);
		}
	}
	if (tb[IPSET_ATTR_COMMENT]) {
		if (!(set->cadt_flags & IPSET_FLAG_WITH_COMMENT))
			return -IPSET_ERR_COMMENT;
		x->comment = mnl_attr_get_str(tb[IPSET_ATTR_COMMENT]);
	}
	if (tb[IPSET_ATTR_SKBMARK] || tb[IPSET_ATTR_SKBPRIO] || tb[IPSET_ATTR_SKBQUEUE]) {
		if (!(set->cadt_flags & IPSET_FLAG_WITH_SKBINFO))
			return -IPSET_ERR_SKBINFO;
		x->has_skb = true;
		if (tb[IPSET_ATTR_SKBMARK]) {
			uint64_t m = get_net64(tb[IPSET_ATTR_SKBMARK]);

			x->skbmark = (uint32_t)(m >> 32);
			x->skbmarkmask = (uint32_t)m;
		}
		if (tb[IPSET_ATTR_SKBPRIO])
			x->skbprio = get_h32(tb[IPSET_ATTR_SKBPRIO]);
		if (tb[IPSET_ATTR_SKBQUEUE])
			x->skbqueue = ntohs(mnl_attr_get_u16(tb[IPSET_ATTR_SKBQUEUE]));
	}
	return 0;
}

/* the overwrite_extensions of mtype_add */
static int put_ext(const struct ipset *set, struct ipset_elem *e, const struct ext *x, bool fresh)
{
	if (set->with_timeout) {
		uint32_t t = x->has_timeout ? x->timeout : set->timeout;

		e->expire_ms = t ? ctl_ipset_clock() + (uint64_t)t * 1000 : 0;
	}
	if (fresh) {
		e->packets = 0;
		e->bytes = 0;
	}
	if (x->has_packets)
		e->packets = x->packets;
	if (x->has_bytes)
		e->bytes = x->bytes;
	if (set->cadt_flags & IPSET_FLAG_WITH_COMMENT) {
		char *c = NULL;

		if (x->comment && x->comment[0]) {
			c = strdup(x->comment);
			if (c == NULL)
				return -ENOMEM;
		}
		free(e->comment);
		e->comment = c;
	}
	if (set->cadt_flags & IPSET_FLAG_WITH_SKBINFO) {
		e->skbmark = x->skbmark;
		e->skbmarkmask = x->skbmarkmask;
		e->skbprio = x->skbprio;
		e->skbqueue = x->skbqueue;
	}
	return 0;
}

static uint32_t limit(const struct ipset *set)
{
	switch (set->type->kind) {
	case K_LIST_SET:
		return set->size;
	case K_BITMAP_IP:
	case K_BITMAP_IPMAC:
	case K_BITMAP_PORT:
		return IPSET_BITMAP_MAX_RANGE;
	default:
		return set->maxelem;
	}
}

static int do_add(struct ctl_ipset *st, struct ipset *set, const struct ipset_key *k,
		  const struct ext *x, bool nomatch, uint32_t flags, int before_of)
{
	int32_t i = find(set, k);
	struct ipset_elem *e;
	uint32_t pos;
	int err;

	set->dirty = true;

	if (i >= 0 && !expired(set, &set->e[i], ctl_ipset_clock())) {
		if (!(flags & IPSET_FLAG_EXIST))
			return -IPSET_ERR_EXIST;
		set->e[i].nomatch = nomatch;
		return put_ext(set, &set->e[i], x, false);
	}
	if (i >= 0) { /* expired: reused as a new one (a bitmap's counters stay) */
		set->e[i].nomatch = nomatch;
		return put_ext(set, &set->e[i], x, !is_bitmap(set));
	}
	if (set->n >= limit(set)) /* make room: the kernel's gc would have */
		gc(st, set);
	if (set->n >= limit(set)) {
		if (set->type->kind == K_LIST_SET)
			return -IPSET_ERR_LIST_FULL;
		if (!(set->cadt_flags & IPSET_FLAG_WITH_FORCEADD) || set->n == 0)
			return -IPSET_ERR_HASH_FULL;
		elem_remove(st, set, 0); /* forceadd: one goes */
	}
	if (st->elems >= IPSET_ELEMS_MAX)
		return -ENOMEM;
	if (set->n == set->cap) {
		uint32_t cap = set->cap ? set->cap * 2 : 16;
		struct ipset_elem *n = realloc(set->e, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		set->e = n;
		set->cap = cap;
	}
	/* list:set keeps its position; the others append (bitmaps are
	 * sorted when listed) */
	pos = set->n;
	if (before_of >= 0)
		pos = (uint32_t)before_of;
	memmove(&set->e[pos + 1], &set->e[pos], (set->n - pos) * sizeof(*e));
	e = &set->e[pos];
	memset(e, 0, sizeof(*e));
	e->k = *k;
	e->nomatch = nomatch;
	set->n++;
	st->elems++;
	err = put_ext(set, e, x, true);
	if (set->kept && bitmap_id(set, k) < bitmap_ids(set)) {
		/* the kernel's ip_set_init_counter sets only what is given */
		if (!x->has_packets)
			e->packets = set->kept[bitmap_id(set, k)][0];
		if (!x->has_bytes)
			e->bytes = set->kept[bitmap_id(set, k)][1];
	}
	if (set->type->kind == K_LIST_SET && st->sets[k->id])
		st->sets[k->id]->ref++;
	if (pos == set->n - 1 && set->nhead && set->n * 2 <= set->nhead) {
		uint32_t b = key_hash(k) & (set->nhead - 1);

		e->next = set->head[b];
		set->head[b] = (int32_t)pos;
	} else {
		index_rebuild(set);
	}
	return err;
}

/* one element: 0, 1 (test: in the set), or -errno */
static int adt_one(struct ctl_ipset *st, struct ipset *set, enum ipset_adt adt,
		   const struct ipset_key *k, const struct ext *x, bool nomatch, uint32_t flags,
		   int before_of)
{
	int32_t i;

	if (adt == IPSET_ADD)
		return do_add(st, set, k, x, nomatch, flags, before_of);
	i = find(set, k);
	if (i >= 0 && expired(set, &set->e[i], ctl_ipset_clock()))
		i = -1;
	if (adt == IPSET_DEL) {
		if (i < 0)
			return -IPSET_ERR_EXIST;
		elem_remove(st, set, (uint32_t)i);
		return 0;
	}
	if (i < 0)
		return 0;
	return set->e[i].nomatch ? -ENOTEMPTY : 1;
}

/* bitmap:ip,mac's add, del and test of k (bitmap_ipmac_do_* under the
 * bitmap's mtype_add/del/test): mac is the element's MAC, NULL without.
 * An element added without a MAC keeps its timeout unstarted until a
 * MAC fills it (a later add, or the first packet matching it); an
 * expired element is gone, as after the kernel's gc. 0, 1 (test: in
 * the set) or -errno. */
static int adt_ipmac(struct ctl_ipset *st, struct ipset *set, enum ipset_adt adt,
		     const struct ipset_key *k, const uint8_t *mac, const struct ext *x,
		     uint32_t flags)
{
	uint64_t now = ctl_ipset_clock();
	int32_t i = find(set, k);
	struct ipset_elem *e;
	uint32_t stored = 0, t;
	bool fill = false;
	int err;

	if (i >= 0 && expired(set, &set->e[i], now)) {
		if (adt == IPSET_TEST)
			return 0;
		elem_remove(st, set, (uint32_t)i);
		i = -1;
	}
	if (adt == IPSET_TEST) {
		if (i < 0)
			return 0;
		e = &set->e[i];
		if (mac && e->mac_set)
			return memcmp(mac, e->mac, 6) == 0;
		return 1; /* -EAGAIN: ip_set_utest answers "in the set" */
	}
	if (adt == IPSET_DEL) {
		if (i < 0)
			return -IPSET_ERR_EXIST;
		elem_remove(st, set, (uint32_t)i);
		return 0;
	}
	if (i >= 0) {
		e = &set->e[i];
		if (e->mac_set) {
			/* -exist replaces the MAC; the element is re-added */
			if (!(flags & IPSET_FLAG_EXIST))
				return -IPSET_ERR_EXIST;
			if (mac)
				memcpy(e->mac, mac, 6);
		} else if (mac == NULL) {
			if (!(flags & IPSET_FLAG_EXIST))
				return -IPSET_ERR_EXIST;
		} else {
			memcpy(e->mac, mac, 6);
			e->mac_set = true;
			fill = true; /* IPSET_ADD_START_STORED_TIMEOUT */
		}
		stored = e->plain_timeout;
		set->dirty = true;
		err = put_ext(set, e, x, false);
	} else {
		err = do_add(st, set, k, x, false, flags, -1);
		if (err < 0 || (i = find(set, k)) < 0)
			return err;
		e = &set->e[i];
		e->mac_set = mac != NULL;
		if (mac)
			memcpy(e->mac, mac, 6);
	}
	if (set->with_timeout) {
		t = x->has_timeout ? x->timeout : set->timeout;
		if (fill) {
			/* bitmap_ipmac_add_timeout: no timeout given: the stored one */
			if (t == set->timeout)
				t = stored;
			e->expire_ms = t ? now + (uint64_t)t * 1000 : 0;
		} else if (mac) {
			e->expire_ms = t ? now + (uint64_t)t * 1000 : 0;
		} else {
			/* the plain value stored; a filled element re-added
			 * without a MAC reads it as a running timer long
			 * expired, as the kernel's does */
			e->plain_timeout = t;
			e->expire_ms = e->mac_set ? 1 : 0;
		}
	}
	return err;
}

/* hash:net's, hash:net,port's and hash:ip,port,net's test of a host:
 * the most specific net holding it (mtype_test_cidrs); the net is ip2
 * in hash:ip,port,net */
static int test_cidrs(struct ipset *set, struct ipset_key k)
{
	unsigned int bits = set->family == NFPROTO_IPV6 ? 128 : 32;
	uint8_t *net = set->type->kind == K_HASH_IPPORTNET ? k.ip2 : k.ip;
	uint8_t ip[16];
	uint64_t now = ctl_ipset_clock();

	memcpy(ip, net, 16);
	for (int c = (int)bits; c >= (set->type->kind == K_HASH_NETIFACE ? 0 : 1); c--) {
		int32_t i;

		memcpy(net, ip, 16);
		mask_ip(net, set->family, (uint8_t)c);
		k.cidr = (uint8_t)c;
		i = find(set, &k);
		if (i >= 0 && !expired(set, &set->e[i], now))
			return set->e[i].nomatch ? -ENOTEMPTY : 1;
	}
	return 0;
}

/* ip_set_range_to_cidr: the largest net starting at from within to */
static uint8_t range_to_cidr(uint32_t from, uint32_t to, uint32_t *last)
{
	for (uint8_t c = 1; c <= 32; c++) {
		uint32_t mask = c == 32 ? 0xffffffffu : ~(0xffffffffu >> c);
		uint32_t l = from | ~mask;

		if ((from & mask) == from && l <= to) {
			*last = l;
			return c;
		}
	}
	*last = from;
	return 32;
}

/* adt_one over ports pfrom..pto: the last answer, the first error
 * (an existing element with --exist is none) */
static int adt_ports(struct ctl_ipset *st, struct ipset *set, enum ipset_adt adt,
		     struct ipset_key *k, const struct ext *x, bool nomatch, uint32_t flags,
		     uint16_t pfrom, uint16_t pto)
{
	int ret = 0;

	for (uint32_t p = pfrom; p <= pto; p++) {
		k->port = (uint16_t)p;
		ret = adt_one(st, set, adt, k, x, nomatch, flags, -1);
		if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
			ret = 0;
		if (ret < 0 || adt == IPSET_TEST)
			return ret;
	}
	return ret;
}

/* hash_ipportnet4_uadt / hash_ipportnet6_uadt: k holds ip, ip2, port
 * and proto; the net is ip2/CIDR2, stored with its prefix in k.cidr. An
 * IPv4 add or del expands IP_TO or CIDR (hosts), PORT_TO and IP2_TO
 * (the largest nets covering it) */
static int uadt_ipportnet(struct ctl_ipset *st, struct ipset *set, tb_t *tb, enum ipset_adt adt,
			  uint32_t flags, struct ipset_key *k, const struct ext *x, bool nomatch,
			  uint16_t pfrom, uint16_t pto)
{
	unsigned int bits = set->family == NFPROTO_IPV6 ? 128 : 32;
	uint32_t from, to, from2, to2, last2;
	int ret = 0;

	k->cidr = (uint8_t)bits;
	if (tb[IPSET_ATTR_CIDR2]) {
		k->cidr = mnl_attr_get_u8(tb[IPSET_ATTR_CIDR2]);
		if (k->cidr == 0 || k->cidr > bits)
			return -IPSET_ERR_INVALID_CIDR;
	}
	if (set->family == NFPROTO_IPV6) {
		if (tb[IPSET_ATTR_IP_TO] || tb[IPSET_ATTR_IP2_TO])
			return -IPSET_ERR_HASH_RANGE_UNSUPPORTED;
		if (tb[IPSET_ATTR_CIDR] && mnl_attr_get_u8(tb[IPSET_ATTR_CIDR]) != 128)
			return -IPSET_ERR_INVALID_CIDR;
	}
	if (adt == IPSET_TEST || set->family == NFPROTO_IPV6 ||
	    !(tb[IPSET_ATTR_CIDR] || tb[IPSET_ATTR_IP_TO] || pto != pfrom ||
	      tb[IPSET_ATTR_IP2_TO])) {
		mask_ip(k->ip2, set->family, k->cidr);
		if (adt == IPSET_TEST && k->cidr == bits)
			return test_cidrs(set, *k);
		return adt_ports(st, set, adt, k, x, nomatch, flags, pfrom, pto);
	}
	ret = elem_range4(tb, ip4(k->ip), &from, &to);
	if (ret < 0)
		return ret;
	from2 = to2 = ip4(k->ip2);
	if (tb[IPSET_ATTR_IP2_TO]) {
		uint8_t b[16];

		if (get_ipaddr(tb[IPSET_ATTR_IP2_TO], NFPROTO_IPV4, b) < 0)
			return -IPSET_ERR_PROTOCOL;
		to2 = ip4(b);
		if (from2 > to2) {
			uint32_t t = from2;

			from2 = to2;
			to2 = t;
		}
		if (from2 == 0 && to2 == 0xffffffffu)
			return -IPSET_ERR_HASH_RANGE;
	} else if (k->cidr < 32) {
		from2 &= ~(0xffffffffu >> k->cidr);
		to2 = from2 | (0xffffffffu >> k->cidr);
	}
	for (uint64_t a = from; a <= to; a++) {
		set_ip4(k->ip, (uint32_t)a);
		for (uint32_t p = pfrom; p <= pto; p++) {
			k->port = (uint16_t)p;
			for (uint64_t b = from2; b <= to2; b = (uint64_t)last2 + 1) {
				uint8_t ip[16];

				k->cidr = range_to_cidr((uint32_t)b, to2, &last2);
				set_ip4(ip, (uint32_t)b);
				memcpy(k->ip2, ip, 16);
				ret = adt_one(st, set, adt, k, x, nomatch, flags, -1);
				if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
					ret = 0;
				if (ret < 0)
					return ret;
			}
		}
	}
	return ret;
}

/* hash_netiface4_uadt / hash_netiface6_uadt: ip/CIDR (0 allowed), the
 * name in ip2 (NUL padded), physdev in port, the wildcard flag in proto;
 * an IPv4 add or del splits IP_TO into nets */
static int uadt_netiface(struct ctl_ipset *st, struct ipset *set, tb_t *tb, enum ipset_adt adt,
			 uint32_t flags, struct ipset_key *k, const struct ext *x, bool nomatch)
{
	unsigned int bits = set->family == NFPROTO_IPV6 ? 128 : 32;
	const char *name;
	uint32_t from, to, last;
	int ret = 0;

	if (!tb[IPSET_ATTR_IFACE])
		return -IPSET_ERR_PROTOCOL;
	if (set->family == NFPROTO_IPV6 && tb[IPSET_ATTR_IP_TO])
		return -IPSET_ERR_HASH_RANGE_UNSUPPORTED;
	k->cidr = (uint8_t)bits;
	if (tb[IPSET_ATTR_CIDR]) {
		k->cidr = mnl_attr_get_u8(tb[IPSET_ATTR_CIDR]);
		if (k->cidr > bits)
			return -IPSET_ERR_INVALID_CIDR;
	}
	name = mnl_attr_get_str(tb[IPSET_ATTR_IFACE]);
	if (strlen(name) > 15)
		return -IPSET_ERR_PROTOCOL;
	memset(k->ip2, 0, 16);
	memcpy(k->ip2, name, strlen(name));
	if (tb[IPSET_ATTR_CADT_FLAGS]) {
		uint32_t cf = get_h32(tb[IPSET_ATTR_CADT_FLAGS]);

		k->port = (cf & IPSET_FLAG_PHYSDEV) ? 1 : 0;
		k->proto = (cf & IPSET_FLAG_IFACE_WILDCARD) ? 1 : 0;
	}
	if (adt == IPSET_TEST || !tb[IPSET_ATTR_IP_TO]) {
		mask_ip(k->ip, set->family, k->cidr);
		if (adt == IPSET_TEST && k->cidr == bits)
			return test_cidrs(set, *k);
		ret = adt_one(st, set, adt, k, x, nomatch, flags, -1);
		return ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST) ? 0 : ret;
	}
	{
		uint8_t b[16];

		if (get_ipaddr(tb[IPSET_ATTR_IP_TO], NFPROTO_IPV4, b) < 0)
			return -IPSET_ERR_PROTOCOL;
		from = ip4(k->ip);
		to = ip4(b);
	}
	if (from > to) {
		uint32_t t = from;

		from = to;
		to = t;
	}
	if (from == 0 && to == 0xffffffffu)
		return -IPSET_ERR_HASH_RANGE;
	for (uint64_t a = from; a <= to; a = (uint64_t)last + 1) {
		k->cidr = range_to_cidr((uint32_t)a, to, &last);
		set_ip4(k->ip, (uint32_t)a);
		ret = adt_one(st, set, adt, k, x, nomatch, flags, -1);
		if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
			ret = 0;
		if (ret < 0)
			return ret;
	}
	return ret;
}

/* The uadt of the set's type: one DATA nest. */
static int uadt(struct ctl_ipset *st, struct ipset *set, tb_t *tb, enum ipset_adt adt,
		uint32_t flags, uint32_t *lineno)
{
	enum ipset_kind kind = set->type->kind;
	struct ipset_key k;
	struct ext x;
	bool nomatch = false;
	uint32_t from, to;
	uint16_t pfrom, pto;
	bool with_ports = true;
	int ret = 0;
	int before_of = -1;

	for (unsigned int t = 1; t <= IPSET_ATTR_ADT_MAX; t++)
		if (tb[t] && !adt_allowed(kind, t))
			return -IPSET_ERR_PROTOCOL;
	if (tb[IPSET_ATTR_LINENO] && lineno)
		*lineno = mnl_attr_get_u32(tb[IPSET_ATTR_LINENO]);
	if (!netorder(tb[IPSET_ATTR_PORT]) || !netorder(tb[IPSET_ATTR_PORT_TO]) ||
	    !netorder(tb[IPSET_ATTR_CADT_FLAGS]))
		return -IPSET_ERR_PROTOCOL;
	ret = get_ext(set, tb, &x);
	if (ret < 0)
		return ret;
	if (tb[IPSET_ATTR_CADT_FLAGS]) {
		uint32_t cf = get_h32(tb[IPSET_ATTR_CADT_FLAGS]);

		if ((cf & IPSET_FLAG_NOMATCH) && (set->type->features & F_NOMATCH))
			nomatch = true;
	}
	memset(&k, 0, sizeof(k));

	if (kind == K_LIST_SET) {
		uint16_t id, refid;
		struct ipset *m, *ref = NULL;
		bool before = false;

		if (!tb[IPSET_ATTR_NAME])
			return -IPSET_ERR_PROTOCOL;
		m = find_set(st, mnl_attr_get_str(tb[IPSET_ATTR_NAME]), &id);
		if (m == NULL)
			return -IPSET_ERR_NAME;
		if (m->type->kind == K_LIST_SET)
			return -IPSET_ERR_LOOP;
		k.id = id;
		if (tb[IPSET_ATTR_CADT_FLAGS])
			before = get_h32(tb[IPSET_ATTR_CADT_FLAGS]) & IPSET_FLAG_BEFORE;
		if (tb[IPSET_ATTR_NAMEREF]) {
			int32_t ri;

			ref = find_set(st, mnl_attr_get_str(tb[IPSET_ATTR_NAMEREF]), &refid);
			if (ref == NULL)
				return -IPSET_ERR_NAMEREF;
			struct ipset_key rk = {.id = refid};

			ri = find(set, &rk);
			if (adt == IPSET_ADD) {
				if (ri < 0)
					return -IPSET_ERR_NAMEREF;
				before_of = before ? ri : ri + 1;
				if (find(set, &k) >= 0 && !(flags & IPSET_FLAG_EXIST))
					return -IPSET_ERR_EXIST;
			} else {
				int32_t ci = find(set, &k);

				if (ci < 0 || ri < 0)
					return adt == IPSET_TEST ? 0 : -IPSET_ERR_EXIST;
				if (before ? ci + 1 != ri : ri + 1 != ci)
					return adt == IPSET_TEST ? 0 : -IPSET_ERR_REF_EXIST;
			}
		}
		return adt_one(st, set, adt, &k, &x, false, flags, before_of);
	}

	if (kind == K_BITMAP_PORT) {
		if (!tb[IPSET_ATTR_PORT])
			return -IPSET_ERR_PROTOCOL;
		pfrom = ntohs(mnl_attr_get_u16(tb[IPSET_ATTR_PORT]));
		pto = pfrom;
		if (tb[IPSET_ATTR_PORT_TO] && adt != IPSET_TEST) {
			pto = ntohs(mnl_attr_get_u16(tb[IPSET_ATTR_PORT_TO]));
			if (pfrom > pto) {
				uint16_t t = pfrom;

				pfrom = pto;
				pto = t;
			}
		}
		if (pfrom < set->first || pto > set->last)
			return -IPSET_ERR_BITMAP_RANGE;
		for (uint32_t p = pfrom; p <= pto; p++) {
			k.port = (uint16_t)p;
			ret = adt_one(st, set, adt, &k, &x, false, flags, -1);
			if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
				ret = 0;
			if (ret < 0 || adt == IPSET_TEST)
				return ret;
		}
		return ret;
	}

	if (!tb[IPSET_ATTR_IP] || get_ipaddr(tb[IPSET_ATTR_IP], set->family, k.ip) < 0)
		return -IPSET_ERR_PROTOCOL;

	if (kind == K_BITMAP_IPMAC) {
		/* bitmap_ipmac_uadt: one address (IP_TO and CIDR ignored) */
		const uint8_t *mac = NULL;

		if (ip4(k.ip) < set->first || ip4(k.ip) > set->last)
			return -IPSET_ERR_BITMAP_RANGE;
		if (tb[IPSET_ATTR_ETHER]) {
			if (mnl_attr_get_payload_len(tb[IPSET_ATTR_ETHER]) != 6)
				return -IPSET_ERR_PROTOCOL;
			mac = mnl_attr_get_payload(tb[IPSET_ATTR_ETHER]);
		}
		ret = adt_ipmac(st, set, adt, &k, mac, &x, flags);
		if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
			ret = 0;
		return ret;
	}

	if ((kind == K_HASH_IPPORTIP || kind == K_HASH_IPPORTNET) &&
	    (!tb[IPSET_ATTR_IP2] || get_ipaddr(tb[IPSET_ATTR_IP2], set->family, k.ip2) < 0))
		return -IPSET_ERR_PROTOCOL;
	if (kind == K_HASH_IPPORT || kind == K_HASH_NETPORT || kind == K_HASH_IPPORTIP ||
	    kind == K_HASH_IPPORTNET) {
		if (!tb[IPSET_ATTR_PORT])
			return -IPSET_ERR_PROTOCOL;
		k.port = ntohs(mnl_attr_get_u16(tb[IPSET_ATTR_PORT]));
		if (!tb[IPSET_ATTR_PROTO])
			return -IPSET_ERR_MISSING_PROTO;
		k.proto = mnl_attr_get_u8(tb[IPSET_ATTR_PROTO]);
		if (k.proto == 0)
			return -IPSET_ERR_INVALID_PROTO;
		with_ports = k.proto == IPPROTO_TCP || k.proto == IPPROTO_UDP ||
			     k.proto == IPPROTO_SCTP || k.proto == IPPROTO_UDPLITE;
		if (!with_ports && k.proto != IPPROTO_ICMP && k.proto != IPPROTO_ICMPV6)
			k.port = 0;
	}
	pfrom = pto = k.port;
	if (tb[IPSET_ATTR_PORT_TO] && with_ports && adt != IPSET_TEST) {
		pto = ntohs(mnl_attr_get_u16(tb[IPSET_ATTR_PORT_TO]));
		if (pfrom > pto) {
			uint16_t t = pfrom;

			pfrom = pto;
			pto = t;
		}
	}

	if (kind == K_BITMAP_IP) {
		from = to = ip4(k.ip);
		if (adt != IPSET_TEST) {
			ret = elem_range4(tb, ip4(k.ip), &from, &to);
			if (ret < 0)
				return ret;
		}
		if (from < set->first || to > set->last)
			return -IPSET_ERR_BITMAP_RANGE;
		for (uint64_t a = from; a <= to; a++) {
			uint32_t v = (uint32_t)a;

			if (set->netmask < 32)
				v &= ~(0xffffffffu >> set->netmask);
			set_ip4(k.ip, v);
			ret = adt_one(st, set, adt, &k, &x, false, flags, -1);
			if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
				ret = 0;
			if (ret < 0 || adt == IPSET_TEST)
				return ret;
			if (set->netmask < 32)
				a = (uint64_t)(v | (0xffffffffu >> set->netmask));
		}
		return ret;
	}

	if (kind == K_HASH_IPPORTNET)
		return uadt_ipportnet(st, set, tb, adt, flags, &k, &x, nomatch, pfrom, pto);
	if (kind == K_HASH_NETIFACE)
		return uadt_netiface(st, set, tb, adt, flags, &k, &x, nomatch);

	if (kind == K_HASH_NET || kind == K_HASH_NETPORT) {
		unsigned int bits = set->family == NFPROTO_IPV6 ? 128 : 32;

		k.cidr = (uint8_t)bits;
		if (tb[IPSET_ATTR_CIDR]) {
			k.cidr = mnl_attr_get_u8(tb[IPSET_ATTR_CIDR]);
			if (k.cidr == 0 || k.cidr > bits)
				return -IPSET_ERR_INVALID_CIDR;
		}
		if (set->family == NFPROTO_IPV6 && tb[IPSET_ATTR_IP_TO])
			return -IPSET_ERR_HASH_RANGE_UNSUPPORTED;
		if (adt == IPSET_TEST || !tb[IPSET_ATTR_IP_TO]) {
			mask_ip(k.ip, set->family, k.cidr);
			if (adt == IPSET_TEST && k.cidr == bits)
				return test_cidrs(set, k);
			for (uint32_t p = pfrom; p <= pto; p++) {
				k.port = (uint16_t)p;
				ret = adt_one(st, set, adt, &k, &x, nomatch, flags, -1);
				if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
					ret = 0;
				if (ret < 0 || adt == IPSET_TEST)
					return ret;
			}
			return ret;
		}
		{
			uint8_t b[16];
			uint32_t last;

			if (get_ipaddr(tb[IPSET_ATTR_IP_TO], NFPROTO_IPV4, b) < 0)
				return -IPSET_ERR_PROTOCOL;
			from = ip4(k.ip);
			to = ip4(b);
			if (from > to) {
				uint32_t t = from;

				from = to;
				to = t;
			}
			if (from == 0 && to == 0xffffffffu)
				return -IPSET_ERR_HASH_RANGE;
			for (uint64_t a = from; a <= to; a = (uint64_t)last + 1) {
				k.cidr = range_to_cidr((uint32_t)a, to, &last);
				set_ip4(k.ip, (uint32_t)a);
				for (uint32_t p = pfrom; p <= pto; p++) {
					k.port = (uint16_t)p;
					ret = adt_one(st, set, adt, &k, &x, nomatch, flags, -1);
					if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
						ret = 0;
					if (ret < 0)
						return ret;
				}
			}
			return ret;
		}
	}

	/* hash:ip, hash:ip,port, hash:ip,port,ip */
	if (kind == K_HASH_IP) {
		/* hash_ip4/6_uadt: the (masked) first address may not be zero */
		uint8_t m[16], zero[16] = {0};

		memcpy(m, k.ip, 16);
		mask_ip(m, set->family, set->netmask);
		if (memcmp(m, zero, 16) == 0)
			return -IPSET_ERR_HASH_ELEM;
	}
	if (set->family == NFPROTO_IPV6 || adt == IPSET_TEST) {
		if (set->family == NFPROTO_IPV6 && adt != IPSET_TEST) {
			if (tb[IPSET_ATTR_IP_TO])
				return -IPSET_ERR_HASH_RANGE_UNSUPPORTED;
			if (tb[IPSET_ATTR_CIDR] && mnl_attr_get_u8(tb[IPSET_ATTR_CIDR]) != 128)
				return -IPSET_ERR_INVALID_CIDR;
		}
		mask_ip(k.ip, set->family, kind == K_HASH_IP ? set->netmask : 128);
		for (uint32_t p = pfrom; p <= pto; p++) {
			k.port = (uint16_t)p;
			ret = adt_one(st, set, adt, &k, &x, false, flags, -1);
			if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
				ret = 0;
			if (ret < 0 || adt == IPSET_TEST)
				return ret;
		}
		return ret;
	}
	ret = elem_range4(tb, ip4(k.ip), &from, &to);
	if (ret < 0)
		return ret;
	if (kind == K_HASH_IP && set->netmask < 32) {
		from &= ~(0xffffffffu >> set->netmask);
		to |= 0xffffffffu >> set->netmask;
	}
	for (uint64_t a = from; a <= to; a++) {
		uint32_t v = (uint32_t)a;

		if (kind == K_HASH_IP && set->netmask < 32) {
			a = v | (0xffffffffu >> set->netmask);
		}
		set_ip4(k.ip, v);
		for (uint32_t p = pfrom; p <= pto; p++) {
			k.port = (uint16_t)p;
			ret = adt_one(st, set, adt, &k, &x, false, flags, -1);
			if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
				ret = 0;
			if (ret < 0)
				return ret;
		}
	}
	return ret;
}

/* The references a SET target holds on set index id: its add, del and
 * (rev 3) map sets (set_target_v*_checkentry) */
static uint32_t target_refs(const struct nftnl_expr *e, uint16_t id)
{
	const void *info;
	uint32_t len = 0, rev, n = 0;

	if (!nftnl_expr_is_set(e, NFTNL_EXPR_TG_NAME) ||
	    strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_TG_NAME), "SET") != 0)
		return 0;
	info = nftnl_expr_get(e, NFTNL_EXPR_TG_INFO, &len);
	rev = nftnl_expr_get_u32(e, NFTNL_EXPR_TG_REV);
	if (info == NULL)
		return 0;
	if (rev == 0) {
		const struct xt_set_info_target_v0 *t = info;

		if (len < sizeof(*t))
			return 0;
		return (t->add_set.index == id) + (t->del_set.index == id);
	}
	if (len >= sizeof(struct xt_set_info_target_v1)) {
		const struct xt_set_info_target_v1 *t = info;

		n = (t->add_set.index == id) + (t->del_set.index == id);
	}
	if (rev == 3 && len >= sizeof(struct xt_set_info_target_v3))
		n += ((const struct xt_set_info_target_v3 *)info)->map_set.index == id;
	return n;
}

/* The rules naming set index id in a set match (the references
 * set_match_v*_checkentry takes, ip_set_nfnl_get_byindex): the kernel's
 * set->ref counts them beside list:set members. */
static uint32_t rule_refs(struct nftdp_ctl *ctl, uint16_t id)
{
	struct ctl_table *t;
	struct ctl_chain *c;
	struct ctl_rule *r;
	uint32_t n = 0;

	if (ctl->state == NULL)
		return 0;
	ctl_list_for_each_entry(t, &ctl->state->tables, list) {
		if (t->family != NFPROTO_IPV4 && t->family != NFPROTO_IPV6)
			continue;
		ctl_list_for_each_entry(c, &t->chains, list) {
			ctl_list_for_each_entry(r, &c->rules, list) {
				struct nftnl_expr_iter *it;
				struct nftnl_expr *e;

				if (r->dead || r->nl == NULL)
					continue;
				it = nftnl_expr_iter_create(r->nl);
				if (it == NULL)
					continue;
				while ((e = nftnl_expr_iter_next(it)) != NULL) {
					const char *kind = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
					const struct xt_set_info *info;
					uint32_t len = 0;

					if (kind && strcmp(kind, "target") == 0) {
						n += target_refs(e, id);
						continue;
					}
					if (kind == NULL || strcmp(kind, "match") != 0 ||
					    !nftnl_expr_is_set(e, NFTNL_EXPR_MT_NAME) ||
					    strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_MT_NAME),
						   "set") != 0)
						continue;
					info = nftnl_expr_get(e, NFTNL_EXPR_MT_INFO, &len);
					if (info && len >= sizeof(*info) &&
					    nftnl_expr_get_u32(e, NFTNL_EXPR_MT_REV) >= 1 &&
					    info->index == id)
						n++;
				}
				nftnl_expr_iter_destroy(it);
			}
		}
	}
	return n;
}

/* ---- messages ---- */

static struct nlmsghdr *start_msg(struct ctl_out *o, const struct nlmsghdr *req, uint16_t flags,
				  uint8_t cmd)
{
	return ctl_out_msg(o, (NFNL_SUBSYS_IPSET << 8) | cmd, NFPROTO_IPV4, flags, req->nlmsg_seq,
			   o->s ? ctl_session_portid(o->s) : 0, 0);
}

static void put_flags(struct nlmsghdr *nlh, const struct ipset *set)
{
	if (set->with_timeout)
		put_net32(nlh, IPSET_ATTR_TIMEOUT, set->timeout);
	if (set->cadt_flags)
		put_net32(nlh, IPSET_ATTR_CADT_FLAGS, set->cadt_flags);
}

static uint32_t memsize(const struct ipset *set)
{
	size_t sz = sizeof(*set) + set->n * sizeof(struct ipset_elem) + set->nhead * 4;

	for (uint32_t i = 0; i < set->n; i++)
		if (set->e[i].comment)
			sz += strlen(set->e[i].comment) + 1;
	return (uint32_t)sz;
}

static void put_head(struct nlmsghdr *nlh, const struct ipset *set, uint32_t refs)
{
	struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

	switch (set->type->kind) {
	case K_BITMAP_IP:
	case K_BITMAP_IPMAC: {
		uint8_t a[16];

		set_ip4(a, set->first);
		put_ipaddr(nlh, IPSET_ATTR_IP, NFPROTO_IPV4, a);
		set_ip4(a, set->last);
		put_ipaddr(nlh, IPSET_ATTR_IP_TO, NFPROTO_IPV4, a);
		/* bitmap:ip,mac has no netmask */
		if (set->type->kind == K_BITMAP_IP && set->netmask != 32)
			mnl_attr_put_u8(nlh, IPSET_ATTR_NETMASK, set->netmask);
		break;
	}
	case K_BITMAP_PORT:
		put_net16(nlh, IPSET_ATTR_PORT, (uint16_t)set->first);
		put_net16(nlh, IPSET_ATTR_PORT_TO, (uint16_t)set->last);
		break;
	case K_LIST_SET:
		put_net32(nlh, IPSET_ATTR_SIZE, set->size);
		break;
	default:
		put_net32(nlh, IPSET_ATTR_HASHSIZE, set->hashsize);
		put_net32(nlh, IPSET_ATTR_MAXELEM, set->maxelem);
		if (set->netmask != (set->family == NFPROTO_IPV6 ? 128 : 32))
			mnl_attr_put_u8(nlh, IPSET_ATTR_NETMASK, set->netmask);
		mnl_attr_put_u8(nlh, IPSET_ATTR_BUCKETSIZE, set->bucketsize);
		put_net32(nlh, IPSET_ATTR_INITVAL, set->initval);
		break;
	}
	put_net32(nlh, IPSET_ATTR_REFERENCES, set->ref + refs);
	put_net32(nlh, IPSET_ATTR_MEMSIZE, memsize(set));
	put_net32(nlh, IPSET_ATTR_ELEMENTS, set->n);
	put_flags(nlh, set);
	mnl_attr_nest_end(nlh, d);
}

static void put_elem(struct nlmsghdr *nlh, struct ctl_ipset *st, const struct ipset *set,
		     const struct ipset_elem *e, uint64_t now)
{
	struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	enum ipset_kind kind = set->type->kind;

	switch (kind) {
	case K_BITMAP_PORT:
		put_net16(nlh, IPSET_ATTR_PORT, e->k.port);
		break;
	case K_LIST_SET:
		mnl_attr_put_strz(nlh, IPSET_ATTR_NAME,
				  e->k.id < st->max && st->sets[e->k.id] ? st->sets[e->k.id]->name
									 : "");
		break;
	case K_BITMAP_IP:
		put_ipaddr(nlh, IPSET_ATTR_IP, NFPROTO_IPV4, e->k.ip);
		break;
	case K_BITMAP_IPMAC:
		put_ipaddr(nlh, IPSET_ATTR_IP, NFPROTO_IPV4, e->k.ip);
		if (e->mac_set)
			mnl_attr_put(nlh, IPSET_ATTR_ETHER, 6, e->mac);
		break;
	default:
		put_ipaddr(nlh, IPSET_ATTR_IP, set->family, e->k.ip);
		if (kind == K_HASH_IPPORTIP || kind == K_HASH_IPPORTNET)
			put_ipaddr(nlh, IPSET_ATTR_IP2, set->family, e->k.ip2);
		if (kind == K_HASH_IPPORT || kind == K_HASH_NETPORT || kind == K_HASH_IPPORTIP ||
		    kind == K_HASH_IPPORTNET)
			put_net16(nlh, IPSET_ATTR_PORT, e->k.port);
		if (kind == K_HASH_NET || kind == K_HASH_NETPORT || kind == K_HASH_NETIFACE)
			mnl_attr_put_u8(nlh, IPSET_ATTR_CIDR, e->k.cidr);
		if (kind == K_HASH_NETIFACE) {
			char name[17] = {0};
			uint32_t f = (e->k.port ? IPSET_FLAG_PHYSDEV : 0) |
				     (e->k.proto ? IPSET_FLAG_IFACE_WILDCARD : 0) |
				     (e->nomatch ? IPSET_FLAG_NOMATCH : 0);

			memcpy(name, e->k.ip2, 16);
			mnl_attr_put_strz(nlh, IPSET_ATTR_IFACE, name);
			if (f)
				put_net32(nlh, IPSET_ATTR_CADT_FLAGS, f);
			break;
		}
		if (kind == K_HASH_IPPORTNET)
			mnl_attr_put_u8(nlh, IPSET_ATTR_CIDR2, e->k.cidr);
		if (kind == K_HASH_IPPORT || kind == K_HASH_NETPORT || kind == K_HASH_IPPORTIP ||
		    kind == K_HASH_IPPORTNET)
			mnl_attr_put_u8(nlh, IPSET_ATTR_PROTO, e->k.proto);
		if (e->nomatch)
			put_net32(nlh, IPSET_ATTR_CADT_FLAGS, IPSET_FLAG_NOMATCH);
		break;
	}
	if (set->with_timeout) {
		uint32_t left = 0;

		if (kind == K_BITMAP_IPMAC && !e->mac_set)
			left = e->plain_timeout; /* not started */
		else if (e->expire_ms) {
			left = (uint32_t)((e->expire_ms - now) / 1000);
			if (left == 0)
				left = 1;
		}
		put_net32(nlh, IPSET_ATTR_TIMEOUT, left);
	}
	if (set->cadt_flags & IPSET_FLAG_WITH_COUNTERS) {
		put_net64(nlh, IPSET_ATTR_BYTES, e->bytes);
		put_net64(nlh, IPSET_ATTR_PACKETS, e->packets);
	}
	if ((set->cadt_flags & IPSET_FLAG_WITH_COMMENT) && e->comment)
		mnl_attr_put_strz(nlh, IPSET_ATTR_COMMENT, e->comment);
	if (set->cadt_flags & IPSET_FLAG_WITH_SKBINFO) {
		if (e->skbmark || e->skbmarkmask)
			put_net64(nlh, IPSET_ATTR_SKBMARK,
				  ((uint64_t)e->skbmark << 32) | e->skbmarkmask);
		if (e->skbprio)
			put_net32(nlh, IPSET_ATTR_SKBPRIO, e->skbprio);
		if (e->skbqueue)
			put_net16(nlh, IPSET_ATTR_SKBQUEUE, e->skbqueue);
	}
	mnl_attr_nest_end(nlh, d);
}

static int bitmap_cmp(const void *a, const void *b)
{
	const struct ipset_elem *x = a, *y = b;
	uint32_t u = x->k.port, v = y->k.port;

	if (u == v) { /* bitmap:ip: ports are 0 */
		u = ip4(x->k.ip);
		v = ip4(y->k.ip);
	}
	return u < v ? -1 : u > v;
}

/* a bitmap lists in ascending order, as the kernel walks its bits */
static void bitmap_sort(struct ipset *set)
{
	for (uint32_t i = 1; i < set->n; i++)
		if (bitmap_cmp(&set->e[i - 1], &set->e[i]) > 0) {
			qsort(set->e, set->n, sizeof(set->e[0]), bitmap_cmp);
			index_rebuild(set);
			return;
		}
}

/* ip_set_dump_start: one set, its header then members, in messages of
 * at most IPSET_MSG_ROOM bytes (each its own datagram) */
static void dump_set(struct ctl_out *o, const struct nlmsghdr *req, struct ctl_ipset *st,
		     uint16_t id, uint8_t proto, uint32_t dflags)
{
	struct ipset *set = st->sets[id];
	uint64_t now = ctl_ipset_clock();
	struct nlmsghdr *nlh;
	struct nlattr *adt;
	uint32_t i = 0;
	bool first = true;

	gc(st, set);
	if (set->type->kind == K_BITMAP_IP || set->type->kind == K_BITMAP_PORT ||
	    set->type->kind == K_BITMAP_IPMAC)
		bitmap_sort(set);
	do {
		nlh = start_msg(o, req, NLM_F_MULTI, IPSET_CMD_LIST);
		if (nlh == NULL)
			return;
		mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, proto);
		mnl_attr_put_strz(nlh, IPSET_ATTR_SETNAME, set->name);
		if (dflags & IPSET_FLAG_LIST_SETNAME)
			goto end;
		if (first) {
			mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, set->type->name);
			mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, set->family);
			mnl_attr_put_u8(nlh, IPSET_ATTR_REVISION, set->revision);
			if (proto > IPSET_PROTOCOL_MIN)
				put_net16(nlh, IPSET_ATTR_INDEX, id);
			put_head(nlh, set, o->ctl ? rule_refs(o->ctl, id) : 0);
			first = false;
			if (dflags & IPSET_FLAG_LIST_HEADER)
				goto end;
		}
		adt = mnl_attr_nest_start(nlh, IPSET_ATTR_ADT);
		for (; i < set->n && nlh->nlmsg_len < IPSET_MSG_ROOM; i++)
			put_elem(nlh, st, set, &set->e[i], now);
		mnl_attr_nest_end(nlh, adt);
	end:
		ctl_out_end(o, nlh);
		ctl_out_flush(o);
	} while (i < set->n && !(dflags & (IPSET_FLAG_LIST_SETNAME | IPSET_FLAG_LIST_HEADER)));
}

static int ipset_dump(struct ctl_ipset *st, struct ctl_out *o, const struct nlmsghdr *req,
		      tb_t *attr)
{
	uint8_t proto = mnl_attr_get_u8(attr[IPSET_ATTR_PROTOCOL]);
	uint32_t dflags = 0;
	uint16_t id;

	if (attr[IPSET_ATTR_FLAGS])
		dflags = get_h32(attr[IPSET_ATTR_FLAGS]);
	if (attr[IPSET_ATTR_SETNAME]) {
		if (find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), &id) == NULL)
			return -ENOENT;
		dump_set(o, req, st, id, proto, dflags);
	} else {
		for (int last = 0; last < 2; last++)
			for (uint32_t i = 0; i < st->max; i++)
				if (st->sets[i] &&
				    !!(st->sets[i]->type->features & F_DUMP_LAST) == !!last)
					dump_set(o, req, st, (uint16_t)i, proto, dflags);
	}
	ctl_out_done(o, req->nlmsg_seq, o->s ? ctl_session_portid(o->s) : 0);
	ctl_out_flush(o);
	return -EINTR;
}

/* call_ad's restore-mode error: the request echoed with its LINENO
 * attribute set to the failing line */
static void lineno_error(struct ctl_out *o, const struct nlmsghdr *req, int err, uint32_t lineno)
{
	struct nlmsghdr *nlh = ctl_out_msg(o, NLMSG_ERROR, 0, 0, req->nlmsg_seq,
					   o->s ? ctl_session_portid(o->s) : 0, 0);
	struct nlmsgerr *e;
	struct nlattr *a;

	if (nlh == NULL)
		return;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(int) + req->nlmsg_len);
	e->error = err;
	memcpy(&e->msg, req, req->nlmsg_len);
	mnl_attr_for_each(a, &e->msg, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(a) == IPSET_ATTR_LINENO && mnl_attr_get_payload_len(a) >= 4)
			memcpy(mnl_attr_get_payload(a), &lineno, 4);
	}
	ctl_out_end(o, nlh);
	ctl_out_flush(o);
}

static int ipset_adt(struct ctl_ipset *st, struct ctl_out *o, const struct nlmsghdr *req,
		     tb_t *attr, enum ipset_adt adt)
{
	uint32_t flags = (req->nlmsg_flags & NLM_F_EXCL) ? 0 : IPSET_FLAG_EXIST;
	tb_t tb[IPSET_ATTR_ADT_MAX + 1];
	struct ipset *set;
	uint32_t lineno = 0;
	int ret = 0;

	if (!attr[IPSET_ATTR_SETNAME])
		return -IPSET_ERR_PROTOCOL;
	if (adt == IPSET_TEST) {
		if (!attr[IPSET_ATTR_DATA] || !(attr[IPSET_ATTR_DATA]->nla_type & NLA_F_NESTED))
			return -IPSET_ERR_PROTOCOL;
	} else if (!((attr[IPSET_ATTR_DATA] != NULL) ^ (attr[IPSET_ATTR_ADT] != NULL)) ||
		   (attr[IPSET_ATTR_DATA] && !(attr[IPSET_ATTR_DATA]->nla_type & NLA_F_NESTED)) ||
		   (attr[IPSET_ATTR_ADT] && (!(attr[IPSET_ATTR_ADT]->nla_type & NLA_F_NESTED) ||
					     !attr[IPSET_ATTR_LINENO]))) {
		return -IPSET_ERR_PROTOCOL;
	}
	set = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), NULL);
	if (set == NULL)
		return -ENOENT;
	if (adt == IPSET_TEST) {
		if (parse_nest(attr[IPSET_ATTR_DATA], tb, IPSET_ATTR_ADT_MAX, adt_pol) < 0)
			return -IPSET_ERR_PROTOCOL;
		ret = uadt(st, set, tb, IPSET_TEST, 0, NULL);
		if (ret == -ENOTEMPTY && tb[IPSET_ATTR_CADT_FLAGS] &&
		    (get_h32(tb[IPSET_ATTR_CADT_FLAGS]) & IPSET_FLAG_NOMATCH))
			ret = 1; /* ip_set_enomatch: asked for the nomatch entry */
		return ret > 0 ? 0 : ret == -IPSET_ERR_PROTOCOL ? ret : -IPSET_ERR_EXIST;
	}
	if (attr[IPSET_ATTR_DATA]) {
		if (parse_nest(attr[IPSET_ATTR_DATA], tb, IPSET_ATTR_ADT_MAX, adt_pol) < 0)
			return -IPSET_ERR_PROTOCOL;
		ret = uadt(st, set, tb, adt, flags, &lineno);
		if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
			ret = 0;
		if (ret < 0 && lineno && attr[IPSET_ATTR_LINENO]) {
			lineno_error(o, req, ret, lineno);
			return -EINTR;
		}
		return ret < 0 ? ret : 0;
	}
	{
		const struct nlattr *n;

		mnl_attr_for_each_nested(n, attr[IPSET_ATTR_ADT])
		{
			if (mnl_attr_get_type(n) != IPSET_ATTR_DATA ||
			    parse_nest(n, tb, IPSET_ATTR_ADT_MAX, adt_pol) < 0)
				return -IPSET_ERR_PROTOCOL;
			lineno = 0;
			ret = uadt(st, set, tb, adt, flags, &lineno);
			if (ret == -IPSET_ERR_EXIST && (flags & IPSET_FLAG_EXIST))
				ret = 0;
			if (ret < 0) {
				if (lineno) {
					lineno_error(o, req, ret, lineno);
					return -EINTR;
				}
				return ret;
			}
		}
	}
	return 0;
}

static int simple_reply(struct ctl_out *o, const struct nlmsghdr *req, uint8_t cmd,
			void (*fill)(struct nlmsghdr *, const void *), const void *arg)
{
	struct nlmsghdr *nlh = start_msg(o, req, 0, cmd);

	if (nlh == NULL)
		return -ENOMEM;
	fill(nlh, arg);
	ctl_out_end(o, nlh);
	ctl_out_flush(o);
	return 0;
}

struct reply_args {
	tb_t *attr;
	const struct ipset *set;
	const char *typename;
	uint8_t family, max;
	uint16_t id;
};

static void fill_protocol(struct nlmsghdr *nlh, const void *arg)
{
	(void)arg;
	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, IPSET_PROTOCOL);
	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL_MIN, IPSET_PROTOCOL_MIN);
}

static void fill_type(struct nlmsghdr *nlh, const void *arg)
{
	const struct reply_args *r = arg;

	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, mnl_attr_get_u8(r->attr[IPSET_ATTR_PROTOCOL]));
	mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, r->typename);
	mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, r->family);
	mnl_attr_put_u8(nlh, IPSET_ATTR_REVISION, r->max);
	mnl_attr_put_u8(nlh, IPSET_ATTR_REVISION_MIN, 0);
}

static void fill_header(struct nlmsghdr *nlh, const void *arg)
{
	const struct reply_args *r = arg;

	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, mnl_attr_get_u8(r->attr[IPSET_ATTR_PROTOCOL]));
	mnl_attr_put_strz(nlh, IPSET_ATTR_SETNAME, r->set->name);
	mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, r->set->type->name);
	mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, r->set->family);
	mnl_attr_put_u8(nlh, IPSET_ATTR_REVISION, r->set->revision);
}

static void fill_byname(struct nlmsghdr *nlh, const void *arg)
{
	const struct reply_args *r = arg;

	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, mnl_attr_get_u8(r->attr[IPSET_ATTR_PROTOCOL]));
	mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, r->set->family);
	put_net16(nlh, IPSET_ATTR_INDEX, r->id);
}

static void fill_byindex(struct nlmsghdr *nlh, const void *arg)
{
	const struct reply_args *r = arg;

	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, mnl_attr_get_u8(r->attr[IPSET_ATTR_PROTOCOL]));
	mnl_attr_put_strz(nlh, IPSET_ATTR_SETNAME, r->set->name);
}

/* nfnetlink's lenient parse of the command attributes (ip_set_*_policy,
 * nla_parse_deprecated: EINVAL, ERANGE as validate_nla) */
static int parse_cmd(const struct nlmsghdr *nlh, tb_t *attr, const struct nlattr **bad)
{
	static const uint16_t pol[IPSET_ATTR_CMD_MAX + 1] = {
	    [IPSET_ATTR_PROTOCOL] = 1,	   [IPSET_ATTR_SETNAME] = P_STR,
	    [IPSET_ATTR_TYPENAME] = P_STR, [IPSET_ATTR_REVISION] = 1,
	    [IPSET_ATTR_FAMILY] = 1,	   [IPSET_ATTR_FLAGS] = 4,
	    [IPSET_ATTR_DATA] = 4,	   [IPSET_ATTR_ADT] = 4,
	    [IPSET_ATTR_LINENO] = 4,	   [IPSET_ATTR_PROTOCOL_MIN] = 1,
	    [IPSET_ATTR_INDEX] = 2,
	};
	const struct nlattr *a;

	memset(attr, 0, sizeof(*attr) * (IPSET_ATTR_CMD_MAX + 1));
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		uint16_t t = mnl_attr_get_type(a);
		uint16_t len = mnl_attr_get_payload_len(a);
		const char *p = mnl_attr_get_payload(a);

		if (t > IPSET_ATTR_CMD_MAX || pol[t] == 0)
			continue;
		if (t == IPSET_ATTR_DATA || t == IPSET_ATTR_ADT) {
			attr[t] = a;
			continue;
		}
		if (pol[t] == P_STR) {
			/* validate_nla's NLA_NUL_STRING, .len IPSET_MAXNAMELEN - 1 */
			size_t minlen = len < IPSET_MAXNAMELEN ? len : IPSET_MAXNAMELEN;
			size_t l = len;

			*bad = a; /* the extended ack's offset, as validate_nla */
			if (minlen == 0 || memchr(p, '\0', minlen) == NULL)
				return -EINVAL;
			if (p[l - 1] == '\0')
				l--;
			if (l > IPSET_MAXNAMELEN - 1)
				return -ERANGE;
			*bad = NULL;
		} else if (len < pol[t]) {
			*bad = a;
			return -ERANGE; /* nla_attr_minlen */
		}
		attr[t] = a;
	}
	return 0;
}

/* ---- what the workers read (xt_set: vm/expr_compat_set.c) ---- */

static uint8_t dim_of(enum ipset_kind k)
{
	return k == K_HASH_IPPORTIP || k == K_HASH_IPPORTNET ? 3
	       : (k == K_HASH_IPPORT || k == K_HASH_NETPORT || k == K_HASH_NETIFACE ||
		  k == K_BITMAP_IPMAC)
		   ? 2
		   : 1;
}

/* the set as an immutable copy for the workers; NULL when out of memory */
static struct nftdp_vm_ipset *snapshot(const struct ipset *set)
{
	uint32_t nhead = 16;
	struct nftdp_vm_ipset *v;

	while (nhead < set->n * 2 && nhead < (1u << 24))
		nhead <<= 1;
	v = nftdp_vm_ipset_alloc(set->n, nhead);
	if (v == NULL)
		return NULL;
	v->kind = (uint8_t)set->type->kind;
	v->family = set->type->kind == K_BITMAP_PORT || set->type->kind == K_LIST_SET
			? NFPROTO_UNSPEC
			: set->family;
	v->netmask = set->netmask;
	v->dim = dim_of(set->type->kind);
	v->skbinfo = (set->cadt_flags & IPSET_FLAG_WITH_SKBINFO) != 0;
	v->counters = (set->cadt_flags & IPSET_FLAG_WITH_COUNTERS) != 0;
	v->owner = set;
	v->first = set->first;
	v->last = set->last;
	for (uint32_t i = 0; i < set->n; i++) {
		struct nftdp_vm_ipset_elem *e = &v->e[i];
		uint32_t b = nftdp_vm_ipset_hash(&set->e[i].k) & (nhead - 1);

		e->k = set->e[i].k;
		e->expire_ms = set->with_timeout ? set->e[i].expire_ms : 0;
		e->nomatch = set->e[i].nomatch;
		e->skbmark = set->e[i].skbmark;
		e->skbmarkmask = set->e[i].skbmarkmask;
		e->skbprio = set->e[i].skbprio;
		e->skbqueue = set->e[i].skbqueue;
		e->mac_set = set->e[i].mac_set;
		memcpy(e->mac, set->e[i].mac, 6);
		atomic_init(&e->packets, set->e[i].packets);
		atomic_init(&e->bytes, set->e[i].bytes);
		e->base_packets = set->e[i].packets;
		e->base_bytes = set->e[i].bytes;
		e->next = v->head[b];
		v->head[b] = (int32_t)i;
		if (set->type->kind == K_HASH_NET || set->type->kind == K_HASH_NETPORT ||
		    set->type->kind == K_HASH_IPPORTNET || set->type->kind == K_HASH_NETIFACE)
			v->cidrs[e->k.cidr <= 128 ? e->k.cidr : 128] = true;
	}
	return v;
}

/* Fold what packets counted into the published copy v since the last
 * fold into set's own counters (into also's, the copy that replaced v,
 * where it is given): the workers add to v's counters, the control
 * thread remembers what it has taken in base_*. */
static void pull_counters(struct ipset *set, struct nftdp_vm_ipset *v, struct nftdp_vm_ipset *also)
{
	if (set == NULL || v == NULL || !v->counters || v->owner != set)
		return;
	for (uint32_t i = 0; i < v->n; i++) {
		struct nftdp_vm_ipset_elem *e = &v->e[i];
		uint64_t dp =
		    atomic_load_explicit(&e->packets, memory_order_relaxed) - e->base_packets;
		uint64_t db = atomic_load_explicit(&e->bytes, memory_order_relaxed) - e->base_bytes;
		int32_t j;

		if (dp == 0 && db == 0)
			continue;
		e->base_packets += dp;
		e->base_bytes += db;
		j = find(set, &e->k);
		if (j >= 0) {
			set->e[j].packets += dp;
			set->e[j].bytes += db;
		}
		if (also && also->counters && also->owner == set) {
			int32_t x = also->head[nftdp_vm_ipset_hash(&e->k) & (also->nhead - 1)];

			for (; x >= 0; x = also->e[x].next)
				if (memcmp(&also->e[x].k, &e->k, sizeof(e->k)) == 0)
					break;
			if (x >= 0) {
				atomic_fetch_add_explicit(&also->e[x].packets, dp,
							  memory_order_relaxed);
				atomic_fetch_add_explicit(&also->e[x].bytes, db,
							  memory_order_relaxed);
				also->e[x].base_packets += dp;
				also->e[x].base_bytes += db;
			}
		}
	}
}

/* every published set's counters into the sets, before a command reads
 * or sets them */
static void pull_all(struct ctl_ipset *st)
{
	for (uint32_t i = 0; i < st->max; i++)
		if (st->pub[i] && st->sets[i])
			pull_counters(st->sets[i], nftdp_vm_ipset_get((uint16_t)i), NULL);
}

struct retired {
	struct nftdp_vm_ipset *old;
	uint32_t slot;
};

/* after a grace period: what packets counted into the replaced copies
 * since they were folded goes to the set and its new copy; then free */
static void retire(struct ctl_ipset *st, struct retired *r, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		uint32_t i = r[k].slot;

		if (i < st->max && st->sets[i])
			pull_counters(st->sets[i], r[k].old, nftdp_vm_ipset_get((uint16_t)i));
		nftdp_vm_ipset_free(r[k].old);
	}
}

/* Publish every set changed by the last command (and unpublish destroyed
 * ones); the replaced copies are freed after one grace period. */
static void sync_workers(struct nftdp_ctl *ctl, struct ctl_ipset *st)
{
	struct retired olds[16];
	unsigned int nold = 0;

	for (uint32_t i = 0; i < st->max; i++) {
		struct ipset *set = st->sets[i];
		struct nftdp_vm_ipset *v = NULL, *old;

		if (set ? !set->dirty && st->pub[i] : !st->pub[i])
			continue;
		if (set) {
			pull_counters(set, nftdp_vm_ipset_get((uint16_t)i), NULL);
			v = snapshot(set);
			if (v == NULL) {
				fprintf(stderr,
					"nftdp: ipset %s: out of memory, rules see it as it was\n",
					set->name);
				continue;
			}
			set->dirty = false;
		}
		old = nftdp_vm_ipset_publish((uint16_t)i, v);
		st->pub[i] = v != NULL;
		if (old == NULL)
			continue;
		if (nold == sizeof(olds) / sizeof(olds[0])) {
			if (ctl->cfg.gen_dom)
				nftdp_vm_gen_synchronize(ctl->cfg.gen_dom);
			retire(st, olds, nold);
			nold = 0;
		}
		olds[nold].old = old;
		olds[nold++].slot = i;
	}
	if (nold && ctl->cfg.gen_dom)
		nftdp_vm_gen_synchronize(ctl->cfg.gen_dom);
	retire(st, olds, nold);
}

/* -j SET: one add or delete a packet asked for, as ip_set_add /
 * ip_set_del apply it (the type's kadt built the key on the worker):
 * 0 when it changed the set */
struct ev_ctx {
	struct ctl_ipset *st;
	bool pulled;
};

static int apply_event(const struct nftdp_vm_ipset_event *ev, void *arg)
{
	struct ev_ctx *c = arg;
	struct ctl_ipset *st = c->st;
	struct ipset *set = ev->id < st->max ? st->sets[ev->id] : NULL;
	struct ipset_key k = ev->k;
	struct ext x;

	/* the worker read the set before a swap or destroy: the kernel's
	 * kadt would have seen the set now at that index */
	if (set == NULL || set->type->kind == K_LIST_SET)
		return -IPSET_ERR_TYPE_MISMATCH;
	if (!c->pulled) { /* the counters as they are before the first change */
		pull_all(st);
		c->pulled = true;
	}
	switch (set->type->kind) {
	case K_BITMAP_IP:
		mask_ip(k.ip, NFPROTO_IPV4, set->netmask);
		if (ip4(k.ip) < set->first || ip4(k.ip) > set->last)
			return -IPSET_ERR_BITMAP_RANGE;
		break;
	case K_BITMAP_PORT:
		if (k.port < set->first || k.port > set->last)
			return -IPSET_ERR_BITMAP_RANGE;
		break;
	case K_BITMAP_IPMAC:
		if (ip4(k.ip) < set->first || ip4(k.ip) > set->last)
			return -IPSET_ERR_BITMAP_RANGE;
		break;
	case K_HASH_IP:
		mask_ip(k.ip, set->family, set->netmask);
		break;
	default:
		break;
	}
	memset(&x, 0, sizeof(x));
	if (!ev->del && ev->timeout != UINT32_MAX) {
		x.has_timeout = true;
		x.timeout = ev->timeout;
	}
	/* IP_SET_INIT_KEXT: the adding packet is the element's count */
	x.has_packets = x.has_bytes = !ev->del;
	x.packets = 1;
	x.bytes = ev->len;
	if (set->type->kind == K_BITMAP_IPMAC) /* the kadt always has a MAC */
		return adt_ipmac(st, set, ev->del ? IPSET_DEL : IPSET_ADD, &k,
				 (ev->flags & NFTDP_VM_IPSET_EV_MAC) ? ev->mac : NULL, &x,
				 (ev->flags & NFTDP_VM_IPSET_EV_EXIST) ? IPSET_FLAG_EXIST : 0);
	return adt_one(st, set, ev->del ? IPSET_DEL : IPSET_ADD, &k, &x, false,
		       (ev->flags & NFTDP_VM_IPSET_EV_EXIST) ? IPSET_FLAG_EXIST : 0, -1);
}

void ctl_ipset_events(struct nftdp_ctl *ctl)
{
	struct ctl_ipset *st = ctl->ipset;

	if (st == NULL) {
		nftdp_vm_ipset_poll(NULL, NULL);
		return;
	}
	struct ev_ctx c = {st, false};

	if (nftdp_vm_ipset_poll(apply_event, &c))
		sync_workers(ctl, st);
}

int ctl_ipset_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		  const struct nlattr **bad)
{
	uint8_t cmd = nlh->nlmsg_type & 0xff;
	tb_t attr[IPSET_ATTR_CMD_MAX + 1];
	struct ctl_ipset *st;
	struct ctl_out o;
	struct reply_args r = {0};
	struct ipset *set, *set2;
	uint16_t id, id2;
	int ret = 0;

	*bad = NULL;
	if (cmd >= IPSET_MSG_MAX)
		return -EINVAL;
	if (cmd == IPSET_CMD_NONE)
		return -EOPNOTSUPP;
	ret = parse_cmd(nlh, attr, bad);
	if (ret < 0)
		return ret;
	st = store(ctl);
	if (st == NULL)
		return -ENOMEM;
	r.attr = attr;
	ctl_out_init(&o, ctl, s);
	if (cmd == IPSET_CMD_PROTOCOL) {
		ret = attr[IPSET_ATTR_PROTOCOL] ? simple_reply(&o, nlh, cmd, fill_protocol, NULL)
						: -IPSET_ERR_PROTOCOL;
		goto out;
	}
	/* protocol_min_failed, protocol_failed for the by-name/index queries */
	if (!attr[IPSET_ATTR_PROTOCOL] ||
	    mnl_attr_get_u8(attr[IPSET_ATTR_PROTOCOL]) <
		((cmd == IPSET_CMD_GET_BYNAME || cmd == IPSET_CMD_GET_BYINDEX)
		     ? IPSET_PROTOCOL
		     : IPSET_PROTOCOL_MIN) ||
	    ((cmd == IPSET_CMD_GET_BYNAME || cmd == IPSET_CMD_GET_BYINDEX) &&
	     mnl_attr_get_u8(attr[IPSET_ATTR_PROTOCOL]) != IPSET_PROTOCOL)) {
		ret = -IPSET_ERR_PROTOCOL;
		goto out;
	}
	/* what packets counted, before the command lists or sets counters */
	if (cmd != IPSET_CMD_TYPE && cmd != IPSET_CMD_GET_BYNAME && cmd != IPSET_CMD_GET_BYINDEX)
		pull_all(st);
	switch (cmd) {
	case IPSET_CMD_TYPE: {
		bool known;
		const struct ipset_type *t;

		if (!attr[IPSET_ATTR_TYPENAME] || !attr[IPSET_ATTR_FAMILY]) {
			ret = -IPSET_ERR_PROTOCOL;
			break;
		}
		r.family = mnl_attr_get_u8(attr[IPSET_ATTR_FAMILY]);
		r.typename = mnl_attr_get_str(attr[IPSET_ATTR_TYPENAME]);
		t = type_find(r.typename, r.family, &known);
		if (t == NULL) {
			ret = -IPSET_ERR_FIND_TYPE;
			break;
		}
		r.max = t->rev_max;
		ret = simple_reply(&o, nlh, cmd, fill_type, &r);
		break;
	}
	case IPSET_CMD_CREATE:
		ret = ipset_create(st, nlh, attr);
		break;
	case IPSET_CMD_DESTROY:
		if (!attr[IPSET_ATTR_SETNAME]) {
			for (uint32_t i = 0; i < st->max; i++)
				if (st->sets[i] &&
				    (st->sets[i]->ref || rule_refs(ctl, (uint16_t)i))) {
					ret = -IPSET_ERR_BUSY;
					goto out;
				}
			for (uint32_t i = 0; i < st->max; i++)
				if (st->sets[i] && st->sets[i]->type->kind == K_LIST_SET)
					set_flush(st, st->sets[i]);
			for (uint32_t i = 0; i < st->max; i++)
				if (st->sets[i]) {
					set_free(st, st->sets[i]);
					st->sets[i] = NULL;
				}
			break;
		}
		set = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), &id);
		if (set == NULL) {
			ret = -ENOENT;
		} else if (set->ref || rule_refs(ctl, id)) {
			ret = -IPSET_ERR_BUSY;
		} else {
			set_free(st, set);
			st->sets[id] = NULL;
		}
		break;
	case IPSET_CMD_FLUSH:
		if (!attr[IPSET_ATTR_SETNAME]) {
			for (uint32_t i = 0; i < st->max; i++)
				if (st->sets[i])
					set_flush(st, st->sets[i]);
			break;
		}
		set = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), NULL);
		if (set == NULL)
			ret = -ENOENT;
		else
			set_flush(st, set);
		break;
	case IPSET_CMD_RENAME:
		if (!attr[IPSET_ATTR_SETNAME] || !attr[IPSET_ATTR_SETNAME2]) {
			ret = -IPSET_ERR_PROTOCOL;
			break;
		}
		set = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), &id);
		if (set == NULL)
			ret = -ENOENT;
		else if (set->ref || rule_refs(ctl, id))
			ret = -IPSET_ERR_REFERENCED;
		else if (find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME2]), NULL))
			ret = -IPSET_ERR_EXIST_SETNAME2;
		else
			snprintf(set->name, sizeof(set->name), "%s",
				 mnl_attr_get_str(attr[IPSET_ATTR_SETNAME2]));
		break;
	case IPSET_CMD_SWAP: {
		char tmp[IPSET_MAXNAMELEN];
		uint32_t ref;

		if (!attr[IPSET_ATTR_SETNAME] || !attr[IPSET_ATTR_SETNAME2]) {
			ret = -IPSET_ERR_PROTOCOL;
			break;
		}
		set = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), &id);
		if (set == NULL) {
			ret = -ENOENT;
			break;
		}
		set2 = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME2]), &id2);
		if (set2 == NULL) {
			ret = -IPSET_ERR_EXIST_SETNAME2;
			break;
		}
		if (set->type->features != set2->type->features || set->family != set2->family) {
			ret = -IPSET_ERR_TYPE_MISMATCH;
			break;
		}
		memcpy(tmp, set->name, sizeof(tmp));
		memcpy(set->name, set2->name, sizeof(tmp));
		memcpy(set2->name, tmp, sizeof(tmp));
		ref = set->ref;
		set->ref = set2->ref;
		set2->ref = ref;
		st->sets[id] = set2;
		st->sets[id2] = set;
		set->dirty = set2->dirty = true;
		break;
	}
	case IPSET_CMD_LIST:
	case IPSET_CMD_SAVE:
		ret = ipset_dump(st, &o, nlh, attr);
		break;
	case IPSET_CMD_ADD:
		ret = ipset_adt(st, &o, nlh, attr, IPSET_ADD);
		break;
	case IPSET_CMD_DEL:
		ret = ipset_adt(st, &o, nlh, attr, IPSET_DEL);
		break;
	case IPSET_CMD_TEST:
		ret = ipset_adt(st, &o, nlh, attr, IPSET_TEST);
		break;
	case IPSET_CMD_HEADER:
		if (!attr[IPSET_ATTR_SETNAME]) {
			ret = -IPSET_ERR_PROTOCOL;
			break;
		}
		r.set = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), NULL);
		ret = r.set ? simple_reply(&o, nlh, cmd, fill_header, &r) : -ENOENT;
		break;
	case IPSET_CMD_GET_BYNAME:
		if (!attr[IPSET_ATTR_SETNAME]) {
			ret = -IPSET_ERR_PROTOCOL;
			break;
		}
		r.set = find_set(st, mnl_attr_get_str(attr[IPSET_ATTR_SETNAME]), &r.id);
		ret = r.set ? simple_reply(&o, nlh, cmd, fill_byname, &r) : -ENOENT;
		break;
	case IPSET_CMD_GET_BYINDEX:
		if (!attr[IPSET_ATTR_INDEX]) {
			ret = -IPSET_ERR_PROTOCOL;
			break;
		}
		id = ntohs(mnl_attr_get_u16(attr[IPSET_ATTR_INDEX])); /* ip_set_get_h16 */
		r.set = id < st->max ? st->sets[id] : NULL;
		ret = r.set ? simple_reply(&o, nlh, cmd, fill_byindex, &r) : -ENOENT;
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
out:
	sync_workers(ctl, st);
	ctl_out_flush(&o);
	ctl_out_free(&o);
	return ret;
}
