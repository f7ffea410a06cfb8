// SPDX-License-Identifier: BSD-3-Clause
/*
 * xt_set's set match (net/netfilter/xt_set.c, revisions 1-4) over the
 * ipset sets control/ipset.c keeps: each set's contents are published
 * here as a struct nftdp_vm_ipset, replaced whole on every change and
 * freed after a grace period, so workers read without locks; only the
 * elements' counters change in place (relaxed atomic adds, folded back
 * by the control thread). The lookup is the types' kadt with IPSET_TEST
 * (ip_set_test): the packet's addresses and ports by the rule's
 * per-dimension src/dst flags, hash:net's most specific net
 * (mtype_test_cidrs), nomatch entries and --return-nomatch, timeouts,
 * counters and the --packets-* and --bytes-* tests (ip_set_match_extensions),
 * list:set's members in order.
 *
 * The SET target (xt_SET rev 0-3): adds and deletes build the kadt's
 * element here and go to the control thread on the worker's ring
 * (nftdp_vm_ipset_put); --map-set is a test that applies skbinfo.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_set.h>

#include "compat.h"

#define IPSET_SLOTS 65535

/* published sets by index; written by the control thread only */
static struct nftdp_vm_ipset *ipsets[IPSET_SLOTS];

struct nftdp_vm_ipset *nftdp_vm_ipset_alloc(uint32_t n, uint32_t nhead)
{
	struct nftdp_vm_ipset *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->n = n;
	s->nhead = nhead;
	s->head = malloc((size_t)nhead * sizeof(*s->head));
	s->e = calloc(n ? n : 1, sizeof(*s->e));
	if (s->head == NULL || s->e == NULL) {
		nftdp_vm_ipset_free(s);
		return NULL;
	}
	for (uint32_t i = 0; i < nhead; i++)
		s->head[i] = -1;
	return s;
}

void nftdp_vm_ipset_free(struct nftdp_vm_ipset *s)
{
	if (s == NULL)
		return;
	free(s->head);
	free(s->e);
	free(s);
}

struct nftdp_vm_ipset *nftdp_vm_ipset_publish(uint16_t id, struct nftdp_vm_ipset *s)
{
	struct nftdp_vm_ipset *old;

	if (id >= IPSET_SLOTS)
		return s;
	old = __atomic_load_n(&ipsets[id], __ATOMIC_RELAXED);
	__atomic_store_n(&ipsets[id], s, __ATOMIC_RELEASE);
	return old;
}

struct set_opt {
	uint64_t pkt_val, byte_val;
	uint8_t pkt_op, byte_op; /* IPSET_COUNTER_*, NONE: no counter match */
	uint8_t dim, flags;	 /* IPSET_DIM_*_SRC */
	bool return_nomatch;
	bool skip_update;    /* ! --update-counters (IPSET_FLAG_SKIP_COUNTER_UPDATE) */
	bool skip_subupdate; /* ! --update-subcounters */
};

static bool counter_match(uint64_t v, uint8_t op, uint64_t want)
{
	switch (op) {
	case IPSET_COUNTER_NONE:
		return true;
	case IPSET_COUNTER_EQ:
		return v == want;
	case IPSET_COUNTER_NE:
		return v != want;
	case IPSET_COUNTER_LT:
		return v < want;
	case IPSET_COUNTER_GT:
		return v > want;
	default:
		return false;
	}
}

/* ip_set_match_extensions' counters: the packet counts first (unless
 * skipped), then the --packets-* and --bytes-* tests; false: no match */
static bool count_and_match(const struct nftdp_vm_ipset *s, const struct nftdp_vm_ipset_elem *e,
			    const struct nftdp_vm_pkt *pkt, const struct set_opt *o, bool skip)
{
	struct nftdp_vm_ipset_elem *m = (struct nftdp_vm_ipset_elem *)e; /* the counters */
	uint64_t p, b;

	if (!s->counters)
		return true;
	if (!skip) {
		p = atomic_fetch_add_explicit(&m->packets, 1, memory_order_relaxed) + 1;
		b = atomic_fetch_add_explicit(&m->bytes, pkt->skb_len, memory_order_relaxed) +
		    pkt->skb_len;
	} else {
		p = atomic_load_explicit(&m->packets, memory_order_relaxed);
		b = atomic_load_explicit(&m->bytes, memory_order_relaxed);
	}
	return counter_match(p, o->pkt_op, o->pkt_val) && counter_match(b, o->byte_op, o->byte_val);
}

struct nftdp_vm_ipset *nftdp_vm_ipset_get(uint16_t id)
{
	return id < IPSET_SLOTS ? __atomic_load_n(&ipsets[id], __ATOMIC_RELAXED) : NULL;
}

/* 1: in the set (*hit: the element), 0: not, -1: a nomatch entry (-ENOTEMPTY) */
static int lookup(const struct nftdp_vm_ipset *s, const struct nftdp_vm_ipset_key *k,
		  const struct nftdp_vm_pkt *pkt, const struct set_opt *o, bool skip, uint64_t now,
		  const struct nftdp_vm_ipset_elem **hit)
{
	int32_t i = s->head[nftdp_vm_ipset_hash(k) & (s->nhead - 1)];

	for (; i >= 0; i = s->e[i].next) {
		const struct nftdp_vm_ipset_elem *e = &s->e[i];

		if (memcmp(&e->k, k, sizeof(*k)) != 0)
			continue;
		if (e->expire_ms && e->expire_ms <= now)
			return 0;
		/* mtype_data_match: the extensions before nomatch */
		if (!count_and_match(s, e, pkt, o, skip))
			return 0;
		*hit = e;
		return e->nomatch ? -1 : 1;
	}
	return 0;
}

/* hash:net,iface's data_equal: the name exactly, or a wildcard element
 * (proto 1) whose name is a prefix of it */
static int lookup_iface(const struct nftdp_vm_ipset *s, const struct nftdp_vm_ipset_key *k,
			const struct nftdp_vm_pkt *pkt, const struct set_opt *o, bool skip,
			uint64_t now, const struct nftdp_vm_ipset_elem **hit)
{
	struct nftdp_vm_ipset_key w = *k;
	int r = lookup(s, &w, pkt, o, skip, now, hit);

	w.proto = 1;
	for (size_t l = strnlen((const char *)k->ip2, 16); !r && l >= 1; l--) {
		r = lookup(s, &w, pkt, o, skip, now, hit);
		w.ip2[l - 1] = 0;
	}
	return r;
}

static void mask_ip(uint8_t ip[16], unsigned int bytes, unsigned int cidr)
{
	for (unsigned int i = 0; i < bytes; i++) {
		int keep = (int)cidr - (int)i * 8;

		if (keep <= 0)
			ip[i] = 0;
		else if (keep < 8)
			ip[i] &= (uint8_t)(0xff << (8 - keep));
	}
}

/* ip_set_get_ip4_port / ip_set_get_ip6_port: false where the kernel
 * returns -EINVAL (a later fragment of a protocol with ports, a header
 * cut short) */
static bool get_port(const struct nftdp_vm_pkt *pkt, bool src, uint16_t *port, uint8_t *proto)
{
	uint8_t b[4];

	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
		return false;
	*proto = pkt->l4proto;
	*port = 0;
	switch (pkt->l4proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
		if (pkt->fragoff || !nftdp_vm_copy_bits(pkt, pkt->th_off, b, 4))
			return false;
		*port = (uint16_t)(src ? (b[0] << 8 | b[1]) : (b[2] << 8 | b[3]));
		return true;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (pkt->fragoff || !nftdp_vm_copy_bits(pkt, pkt->th_off, b, 2))
			return false;
		*port = (uint16_t)(b[0] << 8 | b[1]);
		return true;
	default:
		return true;
	}
}

static void get_ip(const struct nftdp_vm_pkt *pkt, bool src, uint8_t ip[16])
{
	bool v4 = pkt->nfproto == NFPROTO_IPV4;

	memset(ip, 0, 16);
	nftdp_vm_copy_bits(pkt, pkt->nh_off + (v4 ? (src ? 12 : 16) : (src ? 8 : 24)), ip,
			   v4 ? 4 : 16);
}

/* a bitmap's IPv4 address of the packet into ip; false outside the
 * bitmap's range (-IPSET_ERR_BITMAP_RANGE) */
static bool bitmap_ip(const struct nftdp_vm_ipset *s, const struct nftdp_vm_pkt *pkt, bool src,
		      uint8_t ip[16])
{
	uint32_t v;

	get_ip(pkt, src, ip);
	memcpy(&v, ip, 4);
	v = ntohl(v);
	return v >= s->first && v <= s->last;
}

/* bitmap_ipmac_kadt's MAC: the source with the second dimension's src
 * flag, else the destination; false (-EINVAL) without a whole Ethernet
 * header before the network header, or for a zero MAC */
static bool pkt_mac(const struct nftdp_vm_pkt *pkt, bool src, uint8_t mac[6])
{
	static const uint8_t zero[6];

	if (pkt->mac_off < 0 || (uint32_t)pkt->mac_off + 14 > pkt->nh_off ||
	    !nftdp_vm_copy_bits(pkt, (uint32_t)pkt->mac_off + (src ? 6 : 0), mac, 6))
		return false;
	return memcmp(mac, zero, 6) != 0;
}

/* the type's kadt(IPSET_TEST): 1, 0, or -1 for a nomatch entry; 2 for a
 * bitmap:ip,mac element without a MAC (-EAGAIN: ip_set_test adds the
 * packet's MAC and answers 1), *fill then holds its key and the MAC */
static int kadt_test(const struct nftdp_vm_ipset *s, const struct nftdp_vm_pkt *pkt,
		     const struct set_opt *o, bool skip, uint64_t now,
		     const struct nftdp_vm_ipset_elem **hit, struct nftdp_vm_ipset_event *fill)
{
	struct nftdp_vm_ipset_key k;
	unsigned int bytes = pkt->nfproto == NFPROTO_IPV4 ? 4 : 16;
	bool src1 = o->flags & IPSET_DIM_ONE_SRC, src2 = o->flags & IPSET_DIM_TWO_SRC;

	memset(&k, 0, sizeof(k));
	switch (s->kind) {
	case NFTDP_VM_IPSET_BITMAP_PORT:
		/* ip_set_get_ip_port: TCP and UDP only */
		if (!get_port(pkt, src1, &k.port, &k.proto) ||
		    (k.proto != IPPROTO_TCP && k.proto != IPPROTO_UDP))
			return 0;
		if (k.port < s->first || k.port > s->last)
			return 0;
		k.proto = 0;
		return lookup(s, &k, pkt, o, skip, now, hit);
	case NFTDP_VM_IPSET_BITMAP_IP:
		if (!bitmap_ip(s, pkt, src1, k.ip))
			return 0;
		mask_ip(k.ip, 4, s->netmask);
		return lookup(s, &k, pkt, o, skip, now, hit);
	case NFTDP_VM_IPSET_BITMAP_IPMAC: {
		/* bitmap_ipmac_do_test, then mtype_test's timeout and
		 * counters */
		uint8_t mac[6];
		int32_t i;

		if (!bitmap_ip(s, pkt, src1, k.ip) || !pkt_mac(pkt, src2, mac))
			return 0;
		i = s->head[nftdp_vm_ipset_hash(&k) & (s->nhead - 1)];
		for (; i >= 0; i = s->e[i].next)
			if (memcmp(&s->e[i].k, &k, sizeof(k)) == 0)
				break;
		if (i < 0)
			return 0;
		if (!s->e[i].mac_set) {
			fill->k = k;
			memcpy(fill->mac, mac, 6);
			return 2;
		}
		if (memcmp(s->e[i].mac, mac, 6) != 0 ||
		    (s->e[i].expire_ms && s->e[i].expire_ms <= now) ||
		    !count_and_match(s, &s->e[i], pkt, o, skip))
			return 0;
		*hit = &s->e[i];
		return 1;
	}
	case NFTDP_VM_IPSET_HASH_IP:
		get_ip(pkt, src1, k.ip);
		mask_ip(k.ip, bytes, s->netmask);
		return lookup(s, &k, pkt, o, skip, now, hit);
	case NFTDP_VM_IPSET_HASH_IPPORT:
	case NFTDP_VM_IPSET_HASH_IPPORTIP:
		get_ip(pkt, src1, k.ip);
		if (!get_port(pkt, src2, &k.port, &k.proto))
			return 0;
		if (s->kind == NFTDP_VM_IPSET_HASH_IPPORTIP)
			get_ip(pkt, o->flags & IPSET_DIM_THREE_SRC, k.ip2);
		return lookup(s, &k, pkt, o, skip, now, hit);
	case NFTDP_VM_IPSET_HASH_NET:
	case NFTDP_VM_IPSET_HASH_NETPORT: {
		uint8_t ip[16];

		get_ip(pkt, src1, ip);
		if (s->kind == NFTDP_VM_IPSET_HASH_NETPORT &&
		    !get_port(pkt, src2, &k.port, &k.proto))
			return 0;
		/* mtype_test_cidrs: the most specific net holding it */
		for (int c = (int)bytes * 8; c >= 1; c--) {
			int r;

			if (!s->cidrs[c])
				continue;
			memcpy(k.ip, ip, 16);
			mask_ip(k.ip, bytes, (unsigned int)c);
			k.cidr = (uint8_t)c;
			r = lookup(s, &k, pkt, o, skip, now, hit);
			if (r)
				return r;
		}
		return 0;
	}
	case NFTDP_VM_IPSET_HASH_NETIFACE: {
		/* hash_netiface*_kadt: the address's most specific net (/0
		 * too) with the in (second dimension src) or out device's
		 * name; none: no match. physdev is a bridge's: not here */
		const char *dev = (o->flags & IPSET_DIM_TWO_SRC) ? (pkt->iif ? pkt->iifname : NULL)
								 : (pkt->oif ? pkt->oifname : NULL);
		uint8_t ip[16];
		size_t l;

		if (dev == NULL || (l = strnlen(dev, 15)) == 0)
			return 0;
		get_ip(pkt, src1, ip);
		memcpy(k.ip2, dev, l);
		for (int c = (int)bytes * 8; c >= 0; c--) {
			int r;

			if (!s->cidrs[c])
				continue;
			memcpy(k.ip, ip, 16);
			mask_ip(k.ip, bytes, (unsigned int)c);
			k.cidr = (uint8_t)c;
			r = lookup_iface(s, &k, pkt, o, skip, now, hit);
			if (r)
				return r;
		}
		return 0;
	}
	case NFTDP_VM_IPSET_HASH_IPPORTNET: {
		/* hash_ipportnet*_kadt: the most specific net holding the
		 * third dimension's address */
		uint8_t ip2[16];

		get_ip(pkt, src1, k.ip);
		if (!get_port(pkt, src2, &k.port, &k.proto))
			return 0;
		get_ip(pkt, o->flags & IPSET_DIM_THREE_SRC, ip2);
		for (int c = (int)bytes * 8; c >= 1; c--) {
			int r;

			if (!s->cidrs[c])
				continue;
			memcpy(k.ip2, ip2, 16);
			mask_ip(k.ip2, bytes, (unsigned int)c);
			k.cidr = (uint8_t)c;
			r = lookup(s, &k, pkt, o, skip, now, hit);
			if (r)
				return r;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static const struct nftdp_vm_ipset *set_of(uint16_t id)
{
	return id < IPSET_SLOTS ? __atomic_load_n(&ipsets[id], __ATOMIC_ACQUIRE) : NULL;
}

/* ip_set_test: 1 when the packet is in set id; *hit, *in: the element
 * found and its set (for --map-set's skbinfo). A bitmap:ip,mac element
 * without a MAC matches and takes the packet's: the add goes to the
 * control thread on worker's ring (the kernel's kadt IPSET_ADD), so
 * until it is published the element matches any MAC. */
static bool set_test(uint16_t id, const struct nftdp_vm_pkt *pkt, const struct set_opt *o,
		     uint64_t now, unsigned int worker, int depth,
		     const struct nftdp_vm_ipset_elem **hit, const struct nftdp_vm_ipset **in)
{
	struct nftdp_vm_ipset_event fill;
	const struct nftdp_vm_ipset *s = set_of(id);
	bool skip = o->skip_update;
	int r;

	if (s == NULL || o->dim < s->dim ||
	    !(s->family == NFPROTO_UNSPEC || s->family == pkt->nfproto))
		return false;
	if (s->kind == NFTDP_VM_IPSET_LIST_SET) {
		/* list_set_ktest: the members without counter matches, their
		 * counters skipped with ! --update-subcounters; then the
		 * list's own element counts and compares */
		struct set_opt sub = *o;

		if (depth)
			return false;
		sub.pkt_op = sub.byte_op = IPSET_COUNTER_NONE;
		if (o->skip_subupdate)
			sub.skip_update = true;
		for (uint32_t i = 0; i < s->n; i++) {
			if (s->e[i].expire_ms && s->e[i].expire_ms <= now)
				continue;
			if (!set_test(s->e[i].k.id, pkt, &sub, now, worker, depth + 1, hit, in))
				continue;
			if (count_and_match(s, &s->e[i], pkt, o, skip))
				return true;
		}
		return false;
	}
	*hit = NULL;
	r = kadt_test(s, pkt, o, skip, now, hit, &fill);
	*in = s;
	if (r == 2) {
		/* IP_SET_INIT_KEXT: the set's timeout, the packet counted */
		fill.id = id;
		fill.del = 0;
		fill.flags = NFTDP_VM_IPSET_EV_MAC;
		fill.timeout = UINT32_MAX;
		fill.len = pkt->skb_len;
		nftdp_vm_ipset_put(worker, &fill, 1);
		return true;
	}
	/* --return-nomatch on a type with nomatch entries inverts the
	 * answer: a nomatch entry matches, a plain one does not */
	if (o->return_nomatch &&
	    (s->kind == NFTDP_VM_IPSET_HASH_NET || s->kind == NFTDP_VM_IPSET_HASH_NETPORT ||
	     s->kind == NFTDP_VM_IPSET_HASH_IPPORTNET || s->kind == NFTDP_VM_IPSET_HASH_NETIFACE))
		return r < 0;
	return r > 0;
}

struct set_priv {
	struct set_opt opt;
	uint16_t index;
	bool inv;
};
NFTDP_VM_PRIV_CHECK(struct set_priv);

/* set_match_v1_checkentry / set_match_v3_checkentry / _v4 */
static int set_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
		     unsigned int rev)
{
	struct set_priv *p = priv;
	const struct xt_set_info *ms = par->info; /* first in every revision */
	uint32_t cmdflags = 0;

	if (ms->index >= IPSET_SLOTS ||
	    __atomic_load_n(&ipsets[ms->index], __ATOMIC_RELAXED) == NULL)
		return nftdp_vm_errf(cc, -ENOENT, "match set: cannot find set identified by id %u",
				     ms->index);
	if (ms->dim > IPSET_DIM_MAX)
		return nftdp_vm_errf(cc, -ERANGE, "match set: bad dimension %u", ms->dim);
	memset(&p->opt, 0, sizeof(p->opt));
	if (rev == 3) {
		const struct xt_set_info_match_v3 *i = par->info;

		cmdflags = i->flags;
		p->opt.pkt_op = i->packets.op;
		p->opt.pkt_val = i->packets.value;
		p->opt.byte_op = i->bytes.op;
		p->opt.byte_val = i->bytes.value;
	} else if (rev == 4) {
		const struct xt_set_info_match_v4 *i = par->info;

		cmdflags = i->flags;
		p->opt.pkt_op = i->packets.op;
		p->opt.pkt_val = i->packets.value;
		p->opt.byte_op = i->bytes.op;
		p->opt.byte_val = i->bytes.value;
	}
	p->opt.skip_update = cmdflags & IPSET_FLAG_SKIP_COUNTER_UPDATE;
	p->opt.skip_subupdate = cmdflags & IPSET_FLAG_SKIP_SUBCOUNTER_UPDATE;
	p->index = ms->index;
	p->inv = ms->flags & IPSET_INV_MATCH;
	p->opt.dim = ms->dim;
	p->opt.flags = ms->flags;
	p->opt.return_nomatch = rev <= 2 ? (ms->flags & IPSET_RETURN_NOMATCH) != 0
					 : (cmdflags & IPSET_FLAG_RETURN_NOMATCH) != 0;
	return 0;
}

int nftdp_vm_compat_set1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return set_check(cc, par, priv, 1);
}

int nftdp_vm_compat_set3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return set_check(cc, par, priv, 3);
}

int nftdp_vm_compat_set4_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return set_check(cc, par, priv, 4);
}

static void set_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct set_priv *p = (const void *)op->priv;

	const struct nftdp_vm_ipset_elem *hit;
	const struct nftdp_vm_ipset *in;

	compat_match_result(
	    regs,
	    set_test(p->index, pkt, &p->opt, ctx->now_ms, ctx->worker, 0, &hit, &in) ^ p->inv);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_set_ops = {
    .name = "match set",
    .flow = NFTDP_VM_FLOW_NEVER, /* the set changes under the flow cache */
    .size = sizeof(struct set_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = set_eval,
};

/* ---- the SET target (xt_SET rev 0-3) ---- */

#define IPSET_RING 1024u	/* events per worker, a power of two */
#define IPSET_RING_WORKERS 128u /* workers with a ring; the others lose theirs (counted) */
#define IPSET_LIST_TRIES 16u	/* list:set members one packet tries */

struct ipset_ring {
	alignas(64) _Atomic uint32_t head; /* the worker's */
	alignas(64) _Atomic uint32_t tail; /* the control thread's */
	_Atomic uint64_t lost;
	struct nftdp_vm_ipset_event ev[IPSET_RING];
};

/* touched only by the workers that add (bss until then) */
static struct ipset_ring rings[IPSET_RING_WORKERS];
static _Atomic uint64_t lost_other;

uint64_t nftdp_vm_ipset_lost(void)
{
	uint64_t n = atomic_load_explicit(&lost_other, memory_order_relaxed);

	for (unsigned int w = 0; w < IPSET_RING_WORKERS; w++)
		n += atomic_load_explicit(&rings[w].lost, memory_order_relaxed);
	return n;
}

bool nftdp_vm_ipset_put(unsigned int worker, const struct nftdp_vm_ipset_event *ev, unsigned int n)
{
	struct ipset_ring *r;
	uint32_t head, tail;

	if (n == 0)
		return true;
	if (worker >= IPSET_RING_WORKERS) {
		atomic_fetch_add_explicit(&lost_other, 1, memory_order_relaxed);
		return false;
	}
	r = &rings[worker];
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (IPSET_RING - (head - tail) < n) {
		atomic_fetch_add_explicit(&r->lost, 1, memory_order_relaxed);
		return false;
	}
	for (unsigned int i = 0; i < n; i++)
		r->ev[(head + i) & (IPSET_RING - 1)] = ev[i];
	atomic_store_explicit(&r->head, head + n, memory_order_release);
	return true;
}

unsigned int nftdp_vm_ipset_poll(int (*cb)(const struct nftdp_vm_ipset_event *ev, void *arg),
				 void *arg)
{
	unsigned int n = 0;

	for (unsigned int w = 0; w < IPSET_RING_WORKERS; w++) {
		struct ipset_ring *r = &rings[w];
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		int last = -1;

		for (; tail != head; tail++, n++) {
			const struct nftdp_vm_ipset_event *ev = &r->ev[tail & (IPSET_RING - 1)];

			/* a list:set member after one that took it */
			if ((ev->flags & NFTDP_VM_IPSET_EV_ALT) && last == 0)
				continue;
			last = cb ? cb(ev, arg) : -1;
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	return n;
}

/* The key the type's kadt builds for IPSET_ADD / IPSET_DEL; false where
 * it returns an error (no port, out of the bitmap's range, a zero
 * address) and changes nothing. */
static bool kadt_key(const struct nftdp_vm_ipset *s, const struct nftdp_vm_pkt *pkt,
		     const struct set_opt *o, struct nftdp_vm_ipset_key *k)
{
	unsigned int bytes = pkt->nfproto == NFPROTO_IPV4 ? 4 : 16;
	bool src1 = o->flags & IPSET_DIM_ONE_SRC, src2 = o->flags & IPSET_DIM_TWO_SRC;
	static const uint8_t zero[16];

	memset(k, 0, sizeof(*k));
	switch (s->kind) {
	case NFTDP_VM_IPSET_BITMAP_PORT:
		if (!get_port(pkt, src1, &k->port, &k->proto) ||
		    (k->proto != IPPROTO_TCP && k->proto != IPPROTO_UDP))
			return false;
		k->proto = 0;
		return k->port >= s->first && k->port <= s->last;
	case NFTDP_VM_IPSET_BITMAP_IP:
		if (!bitmap_ip(s, pkt, src1, k->ip))
			return false;
		mask_ip(k->ip, 4, s->netmask);
		return true;
	case NFTDP_VM_IPSET_BITMAP_IPMAC:
		return bitmap_ip(s, pkt, src1, k->ip);
	case NFTDP_VM_IPSET_HASH_IP:
		/* hash_ip4_kadt / hash_ip6_kadt: a masked zero address is -EINVAL */
		get_ip(pkt, src1, k->ip);
		mask_ip(k->ip, bytes, s->netmask);
		return memcmp(k->ip, zero, 16) != 0;
	case NFTDP_VM_IPSET_HASH_IPPORT:
	case NFTDP_VM_IPSET_HASH_IPPORTIP:
		get_ip(pkt, src1, k->ip);
		if (!get_port(pkt, src2, &k->port, &k->proto))
			return false;
		if (s->kind == NFTDP_VM_IPSET_HASH_IPPORTIP)
			get_ip(pkt, o->flags & IPSET_DIM_THREE_SRC, k->ip2);
		return true;
	case NFTDP_VM_IPSET_HASH_NET:
	case NFTDP_VM_IPSET_HASH_NETPORT: {
		/* the net of the largest prefix in the set (h->nets[0]), the
		 * host without one */
		int c = (int)bytes * 8;

		while (c > 1 && !s->cidrs[c])
			c--;
		if (!s->cidrs[c])
			c = (int)bytes * 8;
		get_ip(pkt, src1, k->ip);
		if (s->kind == NFTDP_VM_IPSET_HASH_NETPORT &&
		    !get_port(pkt, src2, &k->port, &k->proto))
			return false;
		mask_ip(k->ip, bytes, (unsigned int)c);
		k->cidr = (uint8_t)c;
		return true;
	}
	case NFTDP_VM_IPSET_HASH_NETIFACE: {
		/* hash_netiface*_kadt: the net of the largest prefix in the
		 * set, the host without one; the device's name */
		const char *dev = (o->flags & IPSET_DIM_TWO_SRC) ? (pkt->iif ? pkt->iifname : NULL)
								 : (pkt->oif ? pkt->oifname : NULL);
		int c = (int)bytes * 8;
		size_t l;

		if (dev == NULL || (l = strnlen(dev, 15)) == 0)
			return false;
		while (c > 0 && !s->cidrs[c])
			c--;
		if (c == 0 && s->cidrs[0])
			return false; /* only /0: e.cidr 0 is -EINVAL */
		if (!s->cidrs[c])
			c = (int)bytes * 8;
		get_ip(pkt, src1, k->ip);
		mask_ip(k->ip, bytes, (unsigned int)c);
		k->cidr = (uint8_t)c;
		memcpy(k->ip2, dev, l);
		return true;
	}
	case NFTDP_VM_IPSET_HASH_IPPORTNET: {
		/* the net of the largest prefix in the set, the host
		 * without one (hash_ipportnet*_kadt) */
		int c = (int)bytes * 8;

		while (c > 1 && !s->cidrs[c])
			c--;
		if (!s->cidrs[c])
			c = (int)bytes * 8;
		get_ip(pkt, src1, k->ip);
		if (!get_port(pkt, src2, &k->port, &k->proto))
			return false;
		get_ip(pkt, o->flags & IPSET_DIM_THREE_SRC, k->ip2);
		mask_ip(k->ip2, bytes, (unsigned int)c);
		k->cidr = (uint8_t)c;
		return true;
	}
	default:
		return false;
	}
}

/* ip_set_add / ip_set_del from the packet: the events for set id (one,
 * or one per member of a list:set, each tried until one takes it) */
static unsigned int adt_events(uint16_t id, const struct nftdp_vm_pkt *pkt, const struct set_opt *o,
			       bool del, uint8_t flags, uint32_t timeout, uint64_t now,
			       struct nftdp_vm_ipset_event *ev)
{
	const struct nftdp_vm_ipset *s = set_of(id);
	unsigned int n = 0;

	if (s == NULL || o->dim < s->dim ||
	    !(s->family == NFPROTO_UNSPEC || s->family == pkt->nfproto))
		return 0;
	if (s->kind != NFTDP_VM_IPSET_LIST_SET) {
		if (!kadt_key(s, pkt, o, &ev->k))
			return 0;
		ev->id = id;
		ev->del = del;
		ev->flags = flags;
		if (s->kind == NFTDP_VM_IPSET_BITMAP_IPMAC) {
			if (!pkt_mac(pkt, o->flags & IPSET_DIM_TWO_SRC, ev->mac))
				return 0;
			ev->flags |= NFTDP_VM_IPSET_EV_MAC;
		}
		ev->timeout = timeout;
		ev->len = pkt->skb_len;
		return 1;
	}
	/* list_set_kadd / list_set_kdel: the members in order, until one
	 * succeeds (the control thread skips the rest) */
	for (uint32_t i = 0; i < s->n && n < IPSET_LIST_TRIES; i++) {
		const struct nftdp_vm_ipset *m = set_of(s->e[i].k.id);

		if (s->e[i].expire_ms && s->e[i].expire_ms <= now)
			continue;
		if (m == NULL || m->kind == NFTDP_VM_IPSET_LIST_SET || o->dim < m->dim ||
		    !(m->family == NFPROTO_UNSPEC || m->family == pkt->nfproto) ||
		    !kadt_key(m, pkt, o, &ev[n].k))
			continue;
		ev[n].flags = (uint8_t)(flags | (n ? NFTDP_VM_IPSET_EV_ALT : 0));
		if (m->kind == NFTDP_VM_IPSET_BITMAP_IPMAC) {
			if (!pkt_mac(pkt, o->flags & IPSET_DIM_TWO_SRC, ev[n].mac))
				continue;
			ev[n].flags |= NFTDP_VM_IPSET_EV_MAC;
		}
		ev[n].id = s->e[i].k.id;
		ev[n].del = del;
		ev[n].timeout = timeout;
		ev[n].len = pkt->skb_len;
		n++;
	}
	return n;
}

#define IPSET_INVALID_ID 65535

/* a set's dimension and src/dst flags (the rest of struct set_opt is
 * zero for a target) */
struct set_dim {
	uint8_t dim, flags;
};

struct set_tg_priv {
	uint16_t add, del, map; /* IPSET_INVALID_ID: none */
	uint8_t flags;		/* NFTDP_VM_IPSET_EV_EXIST */
	bool map_inv;
	uint32_t map_flags; /* IPSET_FLAG_MAP_SKB* */
	uint32_t timeout;   /* UINT32_MAX: the set's */
	struct set_dim add_opt, del_opt, map_opt;
};
NFTDP_VM_PRIV_CHECK(struct set_tg_priv);

static struct set_opt opt_from(struct set_dim d)
{
	struct set_opt o;

	memset(&o, 0, sizeof(o));
	o.dim = d.dim;
	o.flags = d.flags;
	return o;
}

static bool have_set(uint16_t id)
{
	return id < IPSET_SLOTS && __atomic_load_n(&ipsets[id], __ATOMIC_RELAXED) != NULL;
}

static void opt_of(struct set_dim *o, const struct xt_set_info *i)
{
	o->dim = i->dim;
	o->flags = i->flags;
}

/* set_target_v0 keeps the old flags array: compat_flags */
static void opt_of_v0(struct set_dim *o, const struct xt_set_info_v0 *i)
{
	o->dim = 0;
	o->flags = 0;
	for (unsigned int d = 0; d < IPSET_DIM_MAX - 1 && i->u.flags[d]; d++) {
		o->dim++;
		if (i->u.flags[d] & IPSET_SRC)
			o->flags |= (uint8_t)(1u << o->dim);
	}
}

/* set_target_v0/v1/v3_checkentry */
static int set_tg_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
			unsigned int rev)
{
	struct set_tg_priv *p = priv;

	memset(p, 0, sizeof(*p));
	p->timeout = UINT32_MAX;
	p->map = IPSET_INVALID_ID;
	if (rev == 0) {
		const struct xt_set_info_target_v0 *i = par->info;

		p->add = i->add_set.index;
		p->del = i->del_set.index;
		if (i->add_set.u.flags[IPSET_DIM_MAX - 1] || i->del_set.u.flags[IPSET_DIM_MAX - 1])
			goto dim;
		opt_of_v0(&p->add_opt, &i->add_set);
		opt_of_v0(&p->del_opt, &i->del_set);
	} else {
		/* v1, v2 and v3 begin alike */
		const struct xt_set_info_target_v3 *i = par->info;

		p->add = i->add_set.index;
		p->del = i->del_set.index;
		opt_of(&p->add_opt, &i->add_set);
		opt_of(&p->del_opt, &i->del_set);
		if (rev >= 2) {
			p->flags = (i->flags & IPSET_FLAG_EXIST) ? NFTDP_VM_IPSET_EV_EXIST : 0;
			p->timeout = i->timeout;
			/* set_target_v2: normalised to fit into jiffies */
			if (p->timeout != UINT32_MAX && p->timeout > UINT32_MAX / 1000)
				p->timeout = UINT32_MAX / 1000;
		}
		if (rev == 3) {
			p->map = i->map_set.index;
			opt_of(&p->map_opt, &i->map_set);
			p->map_inv = i->map_set.flags & IPSET_INV_MATCH;
			p->map_flags = i->flags & (IPSET_FLAG_MAP_SKBMARK | IPSET_FLAG_MAP_SKBPRIO |
						   IPSET_FLAG_MAP_SKBQUEUE);
		}
	}
	if (p->add != IPSET_INVALID_ID && !have_set(p->add))
		return nftdp_vm_errf(cc, -ENOENT, "SET: cannot find add_set index %u as target",
				     p->add);
	if (p->del != IPSET_INVALID_ID && !have_set(p->del))
		return nftdp_vm_errf(cc, -ENOENT, "SET: cannot find del_set index %u as target",
				     p->del);
	if (p->map != IPSET_INVALID_ID) {
		if (strcmp(cc->chain->table, "mangle") != 0)
			return nftdp_vm_errf(cc, -EINVAL,
					     "SET: --map-set only usable from mangle table");
		if ((p->map_flags & (IPSET_FLAG_MAP_SKBPRIO | IPSET_FLAG_MAP_SKBQUEUE)) &&
		    !(par->hook_mask &
		      (COMPAT_HOOK(NF_INET_FORWARD) | COMPAT_HOOK(NF_INET_LOCAL_OUT) |
		       COMPAT_HOOK(NF_INET_POST_ROUTING))))
			return nftdp_vm_errf(cc, -EINVAL,
					     "SET: mapping of prio or/and queue is allowed only "
					     "from OUTPUT/FORWARD/POSTROUTING chains");
		if (!have_set(p->map))
			return nftdp_vm_errf(cc, -ENOENT,
					     "SET: cannot find map_set index %u as target", p->map);
	}
	if (rev > 0) {
		const struct xt_set_info_target_v3 *i = par->info;

		if (i->add_set.dim > IPSET_DIM_MAX || i->del_set.dim > IPSET_DIM_MAX ||
		    (rev == 3 && i->map_set.dim > IPSET_DIM_MAX))
			goto dim;
	}
	return 0;
dim:
	return nftdp_vm_errf(cc, -ERANGE, "SET: target dimension is over the limit");
}

int nftdp_vm_compat_settg0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return set_tg_check(cc, par, priv, 0);
}

int nftdp_vm_compat_settg1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return set_tg_check(cc, par, priv, 1);
}

int nftdp_vm_compat_settg2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return set_tg_check(cc, par, priv, 2);
}

int nftdp_vm_compat_settg3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return set_tg_check(cc, par, priv, 3);
}

/* set_target_v3 (the older revisions have no map_set): XT_CONTINUE */
static void set_tg_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct set_tg_priv *p = (const void *)op->priv;
	struct nftdp_vm_ipset_event ev[2 * IPSET_LIST_TRIES];
	unsigned int n = 0;
	struct set_opt o;

	(void)regs;
	if (p->add != IPSET_INVALID_ID) {
		o = opt_from(p->add_opt);
		n += adt_events(p->add, pkt, &o, false, p->flags, p->timeout, ctx->now_ms, ev);
	}
	if (p->del != IPSET_INVALID_ID) {
		o = opt_from(p->del_opt);
		n += adt_events(p->del, pkt, &o, true, 0, UINT32_MAX, ctx->now_ms, ev + n);
	}
	nftdp_vm_ipset_put(ctx->worker, ev, n);
	if (p->map != IPSET_INVALID_ID) {
		const struct nftdp_vm_ipset_elem *hit = NULL;
		const struct nftdp_vm_ipset *in = NULL;
		uint32_t mark = 0, mask = 0, prio = 0;

		o = opt_from(p->map_opt);
		if (!(set_test(p->map, pkt, &o, ctx->now_ms, ctx->worker, 0, &hit, &in) ^
		      p->map_inv))
			return;
		/* ip_set_get_skbinfo: the element's, zero from a set without */
		if (hit && in && in->skbinfo) {
			mark = hit->skbmark;
			mask = hit->skbmarkmask;
			prio = hit->skbprio;
		}
		if (p->map_flags & IPSET_FLAG_MAP_SKBMARK)
			pkt->mark = (pkt->mark & ~mask) ^ mark;
		if (p->map_flags & IPSET_FLAG_MAP_SKBPRIO)
			pkt->priority = prio;
		/* IPSET_FLAG_MAP_SKBQUEUE: the kernel's queue_mapping picks
		 * the tx queue; a worker sends on its own queue */
	}
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_settg_ops = {
    .name = "target",
    .flow = NFTDP_VM_FLOW_NEVER, /* every packet adds, deletes, maps */
    .size = sizeof(struct set_tg_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = set_tg_eval,
};
