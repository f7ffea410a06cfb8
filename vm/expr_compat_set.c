// SPDX-License-Identifier: BSD-3-Clause
/*
 * xt_set's set match (net/netfilter/xt_set.c, revisions 1-4) over the
 * ipset sets control/ipset.c keeps: each set's contents are published
 * here as an immutable struct nftdp_vm_ipset, replaced whole on every
 * change and freed after a grace period, so workers read without locks.
 * The lookup is the types' kadt with IPSET_TEST (ip_set_test): the
 * packet's addresses and ports by the rule's per-dimension src/dst
 * flags, hash:net's most specific net (mtype_test_cidrs), nomatch
 * entries and --return-nomatch, timeouts, list:set's members in order.
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

/* 1: in the set, 0: not, -1: a nomatch entry (-ENOTEMPTY) */
static int lookup(const struct nftdp_vm_ipset *s, const struct nftdp_vm_ipset_key *k, uint64_t now)
{
	int32_t i = s->head[nftdp_vm_ipset_hash(k) & (s->nhead - 1)];

	for (; i >= 0; i = s->e[i].next) {
		const struct nftdp_vm_ipset_elem *e = &s->e[i];

		if (memcmp(&e->k, k, sizeof(*k)) != 0)
			continue;
		if (e->expire_ms && e->expire_ms <= now)
			return 0;
		return e->nomatch ? -1 : 1;
	}
	return 0;
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

struct set_opt {
	uint8_t dim, flags; /* IPSET_DIM_*_SRC */
	bool return_nomatch;
};

/* the type's kadt(IPSET_TEST): 1, 0, or -1 for a nomatch entry */
static int kadt_test(const struct nftdp_vm_ipset *s, const struct nftdp_vm_pkt *pkt,
		     const struct set_opt *o, uint64_t now)
{
	struct nftdp_vm_ipset_key k;
	unsigned int bytes = pkt->nfproto == NFPROTO_IPV4 ? 4 : 16;
	bool src1 = o->flags & IPSET_DIM_ONE_SRC, src2 = o->flags & IPSET_DIM_TWO_SRC;

	memset(&k, 0, sizeof(k));
	switch (s->kind) {
	case NFTDP_VM_IPSET_BITMAP_PORT:
		if (!get_port(pkt, src1, &k.port, &k.proto))
			return 0;
		if (k.port < s->first || k.port > s->last)
			return 0;
		k.proto = 0;
		return lookup(s, &k, now);
	case NFTDP_VM_IPSET_BITMAP_IP: {
		uint32_t v;

		get_ip(pkt, src1, k.ip);
		memcpy(&v, k.ip, 4);
		v = ntohl(v);
		if (v < s->first || v > s->last)
			return 0;
		mask_ip(k.ip, 4, s->netmask);
		return lookup(s, &k, now);
	}
	case NFTDP_VM_IPSET_HASH_IP:
		get_ip(pkt, src1, k.ip);
		mask_ip(k.ip, bytes, s->netmask);
		return lookup(s, &k, now);
	case NFTDP_VM_IPSET_HASH_IPPORT:
	case NFTDP_VM_IPSET_HASH_IPPORTIP:
		get_ip(pkt, src1, k.ip);
		if (!get_port(pkt, src2, &k.port, &k.proto))
			return 0;
		if (s->kind == NFTDP_VM_IPSET_HASH_IPPORTIP)
			get_ip(pkt, o->flags & IPSET_DIM_THREE_SRC, k.ip2);
		return lookup(s, &k, now);
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
			r = lookup(s, &k, now);
			if (r)
				return r;
		}
		return 0;
	}
	default:
		return 0;
	}
}

/* ip_set_test: 1 when the packet is in set id */
static bool set_test(uint16_t id, const struct nftdp_vm_pkt *pkt, const struct set_opt *o,
		     uint64_t now, int depth)
{
	const struct nftdp_vm_ipset *s =
	    id < IPSET_SLOTS ? __atomic_load_n(&ipsets[id], __ATOMIC_ACQUIRE) : NULL;
	int r;

	if (s == NULL || o->dim < s->dim ||
	    !(s->family == NFPROTO_UNSPEC || s->family == pkt->nfproto))
		return false;
	if (s->kind == NFTDP_VM_IPSET_LIST_SET) {
		if (depth)
			return false;
		for (uint32_t i = 0; i < s->n; i++) {
			if (s->e[i].expire_ms && s->e[i].expire_ms <= now)
				continue;
			if (set_test(s->e[i].k.id, pkt, o, now, depth + 1))
				return true;
		}
		return false;
	}
	r = kadt_test(s, pkt, o, now);
	/* --return-nomatch on a type with nomatch entries inverts the
	 * answer: a nomatch entry matches, a plain one does not */
	if (o->return_nomatch &&
	    (s->kind == NFTDP_VM_IPSET_HASH_NET || s->kind == NFTDP_VM_IPSET_HASH_NETPORT))
		return r < 0;
	return r > 0;
}

struct set_priv {
	uint16_t index;
	struct set_opt opt;
	bool inv;
};

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
	if (rev == 3)
		cmdflags = ((const struct xt_set_info_match_v3 *)par->info)->flags;
	else if (rev == 4)
		cmdflags = ((const struct xt_set_info_match_v4 *)par->info)->flags;
	if (cmdflags & IPSET_FLAG_MATCH_COUNTERS)
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "match set: --packets-*/--bytes-* (set counters are not "
				     "counted by nftdp)");
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

	compat_match_result(regs, set_test(p->index, pkt, &p->opt, ctx->now_ms, 0) ^ p->inv);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_set_ops = {
    .name = "match set",
    .flow = NFTDP_VM_FLOW_NEVER, /* the set changes under the flow cache */
    .size = sizeof(struct set_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = set_eval,
};
