// SPDX-License-Identifier: BSD-3-Clause
/*
 * NAT bindings and packet rewriting; mirrors nf_nat_core.c (setup_info,
 * get_unique_tuple, find_best_ips_proto, nf_nat_l4proto_unique_tuple,
 * nf_nat_packet, nf_nat_alloc_null_binding), nf_nat_proto.c (the L3/L4
 * manip functions and nf_nat_icmp_reply_translation) and
 * nf_nat_masquerade.c.
 *
 * A binding changes the entry's reply tuple, so the replies are found by the
 * translated addresses; every later packet is rewritten to look like the
 * inverse of the other direction's tuple. Checksums are updated
 * incrementally (RFC 1624), the L4 ones including the pseudo-header; the
 * ICMP checksum of a translated error is recomputed over the message.
 * With several shards, source NAT only picks reply tuples this shard owns
 * (nftdp_ct_tuple_owner), so the NIC's symmetric RSS brings replies back.
 * The kernel's bysource table (reuse a source's earlier mapping) is not
 * kept: a source NAT keeps the original port when it is free, else it
 * searches like the kernel. GRE version 1 keys (PPTP's call ids) are
 * translated as nf_nat_proto.c does: only for an expected connection (the
 * pptp helper's), only the destination key in the packet (the source key
 * is not in it).
 */
#include <arpa/inet.h>
#include <linux/netfilter/nf_nat.h>
#include <netinet/in.h>

#include <rte_jhash.h>

#include "ct_priv.h"

#define NAT_MAX_ATTEMPTS 128 /* NF_NAT_MAX_ATTEMPTS */

static uint16_t nat_random16(struct nftdp_ct_shard *s)
{
	/* xorshift64*: get_random_u16 without a syscall */
	s->prng ^= s->prng >> 12;
	s->prng ^= s->prng << 25;
	s->prng ^= s->prng >> 27;
	return (uint16_t)((s->prng * 2685821657736338717ull) >> 48);
}

static bool is_icmp(const struct nftdp_ct_tuple *t)
{
	return (t->l4proto == IPPROTO_ICMP && t->l3proto == NFPROTO_IPV4) ||
	       (t->l4proto == IPPROTO_ICMPV6 && t->l3proto == NFPROTO_IPV6);
}

static bool has_ports(uint8_t p)
{
	return p == IPPROTO_TCP || p == IPPROTO_UDP || p == IPPROTO_UDPLITE || p == IPPROTO_SCTP ||
	       p == IPPROTO_DCCP;
}

/* nf_conntrack_tuple_taken: another entry already has this tuple */
static bool tuple_taken(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
			const struct nftdp_ct_entry *ignore)
{
	uint32_t node = s->buckets[nftdp_ct_tuple_hash(s, t) & s->bucket_mask];

	while (node != CT_NIL) {
		const struct nftdp_ct_entry *e = &s->entries[node >> 1];
		int d = (int)(node & 1);

		node = e->hnext[d];
		if (e == ignore || !e->in_use || (e->status & IPS_DYING))
			continue;
		if (!memcmp(&e->tuple[d], t, sizeof(*t)))
			return true;
	}
	return false;
}

/* nf_nat_used_tuple, plus: a source NAT reply must come back to this shard */
static bool used_tuple(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
		       const struct nftdp_ct_entry *e, enum nftdp_ct_manip manip)
{
	struct nftdp_ct_tuple reply;

	if (!nftdp_ct_tuple_invert(t, &reply))
		return true;
	if (manip == NFTDP_CT_MANIP_SRC && s->cfg.n_shards > 1 &&
	    nftdp_ct_tuple_owner(&reply, s->cfg.n_shards) != s->cfg.shard_id)
		return true;
	return tuple_taken(s, &reply, e);
}

static int addr_cmp(const union nftdp_ct_addr *a, const union nftdp_ct_addr *b, uint8_t l3)
{
	unsigned int i, n = l3 == NFPROTO_IPV4 ? 1 : 4;

	for (i = 0; i < n; i++) {
		uint32_t x = ntohl(a->ip6[i]), y = ntohl(b->ip6[i]);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* l4proto_in_range */
static bool l4_in_range(const struct nftdp_ct_tuple *t, enum nftdp_ct_manip manip, uint16_t min,
			uint16_t max)
{
	uint16_t v;

	if (is_icmp(t))
		v = ntohs(t->sport);
	else if (has_ports(t->l4proto) || t->l4proto == IPPROTO_GRE)
		v = ntohs(manip == NFTDP_CT_MANIP_SRC ? t->sport : t->dport);
	else
		return true;
	return v >= ntohs(min) && v <= ntohs(max);
}

/* nf_in_range: the source part of t lies in range */
static bool in_range(const struct nftdp_ct_tuple *t, const struct nftdp_ct_nat_range *r)
{
	if ((r->flags & NF_NAT_RANGE_MAP_IPS) && (addr_cmp(&t->src, &r->min_addr, t->l3proto) < 0 ||
						  addr_cmp(&t->src, &r->max_addr, t->l3proto) > 0))
		return false;
	return !(r->flags & NF_NAT_RANGE_PROTO_SPECIFIED) ||
	       l4_in_range(t, NFTDP_CT_MANIP_SRC, r->min_proto, r->max_proto);
}

static uint32_t reciprocal_scale(uint32_t val, uint32_t ep_ro)
{
	return (uint32_t)(((uint64_t)val * ep_ro) >> 32);
}

/* find_best_ips_proto: a hash of the source (and destination unless
 * persistent) picks the address inside the range, as the kernel does */
static void find_best_ips(struct nftdp_ct_tuple *t, const struct nftdp_ct_nat_range *r,
			  enum nftdp_ct_manip manip)
{
	union nftdp_ct_addr *var = manip == NFTDP_CT_MANIP_SRC ? &t->src : &t->dst;
	unsigned int i, max = t->l3proto == NFPROTO_IPV4 ? 0 : 3;
	bool full_range = false;
	uint32_t j, minip, dist;

	if (!(r->flags & NF_NAT_RANGE_MAP_IPS))
		return;
	if (!addr_cmp(&r->min_addr, &r->max_addr, t->l3proto)) {
		*var = r->min_addr;
		return;
	}
	j = rte_jhash_32b(t->src.ip6, 4,
			  (r->flags & NF_NAT_RANGE_PERSISTENT) ? 0 : t->dst.ip6[max] ^ t->zone);
	for (i = 0; i <= max; i++) {
		/* while the leading words are at the maximum, use the distance */
		if (!full_range) {
			minip = ntohl(r->min_addr.ip6[i]);
			dist = ntohl(r->max_addr.ip6[i]) - minip + 1;
		} else {
			minip = 0;
			dist = ~0u;
		}
		var->ip6[i] = htonl(minip + reciprocal_scale(j, dist));
		if (var->ip6[i] != r->max_addr.ip6[i])
			full_range = true;
		if (!(r->flags & NF_NAT_RANGE_PERSISTENT))
			j ^= t->dst.ip6[i];
	}
}

/* nf_nat_l4proto_unique_tuple */
static void unique_l4(struct nftdp_ct_shard *s, struct nftdp_ct_tuple *t,
		      const struct nftdp_ct_nat_range *r, enum nftdp_ct_manip manip,
		      const struct nftdp_ct_entry *e)
{
	unsigned int range_size, min, max, attempts, i;
	uint16_t *key, off;

	if (is_icmp(t)) {
		key = &t->sport; /* the id is the same in both directions */
		if (!(r->flags & NF_NAT_RANGE_PROTO_SPECIFIED)) {
			min = 0;
			range_size = 65536;
		} else {
			min = ntohs(r->min_proto);
			range_size = ntohs(r->max_proto) - min + 1;
		}
	} else if (has_ports(t->l4proto)) {
		key = manip == NFTDP_CT_MANIP_SRC ? &t->sport : &t->dport;
		if (!(r->flags & NF_NAT_RANGE_PROTO_SPECIFIED)) {
			unsigned int port = ntohs(*key);

			if (manip == NFTDP_CT_MANIP_DST)
				return; /* a destination port is not changed */
			/* loose convention: < 512 credential passing, < 1024 privileged */
			if (port < 1024) {
				min = port < 512 ? 1 : 600;
				range_size = (port < 512 ? 511 : 1023) - min + 1;
			} else {
				min = 1024;
				range_size = 65535 - 1024 + 1;
			}
		} else {
			min = ntohs(r->min_proto);
			max = ntohs(r->max_proto);
			if (max < min) {
				unsigned int x = max;

				max = min;
				min = x;
			}
			range_size = max - min + 1;
		}
	} else if (t->l4proto == IPPROTO_GRE) {
		/* no master: not PPTP, the keys stay */
		if (!(e->status & IPS_EXPECTED))
			return;
		key = manip == NFTDP_CT_MANIP_SRC ? &t->sport : &t->dport;
		if (!(r->flags & NF_NAT_RANGE_PROTO_SPECIFIED)) {
			min = 1;
			range_size = 65535;
		} else {
			min = ntohs(r->min_proto);
			range_size = (unsigned int)((int)ntohs(r->max_proto) - (int)min + 1);
			if (!range_size)
				return;
		}
	} else {
		return;
	}
	if ((r->flags & NF_NAT_RANGE_PROTO_RANDOM_ALL) || manip != NFTDP_CT_MANIP_DST)
		off = nat_random16(s);
	else
		off = 0;
	attempts = range_size < NAT_MAX_ATTEMPTS ? range_size : NAT_MAX_ATTEMPTS;
	for (;;) {
		for (i = 0; i < attempts; i++, off++) {
			*key = htons((uint16_t)(min + off % range_size));
			if (!used_tuple(s, t, e, manip))
				return;
		}
		/* restart from a new offset with half as many tries */
		if (attempts >= range_size || attempts < 16)
			return;
		attempts /= 2;
		off = nat_random16(s);
	}
}

/* get_unique_tuple */
static void get_unique_tuple(struct nftdp_ct_shard *s, struct nftdp_ct_tuple *t,
			     const struct nftdp_ct_tuple *orig, const struct nftdp_ct_nat_range *r,
			     const struct nftdp_ct_entry *e, enum nftdp_ct_manip manip)
{
	/* 1) source NAT: the original tuple, if it is in range and free */
	if (manip == NFTDP_CT_MANIP_SRC && !(r->flags & NF_NAT_RANGE_PROTO_RANDOM_ALL) &&
	    in_range(orig, r) && !used_tuple(s, orig, e, manip)) {
		*t = *orig;
		return;
	}
	/* 2) the addresses */
	*t = *orig;
	find_best_ips(t, r, manip);
	/* 3) the L4 part, only if not already in range and unique */
	if (!(r->flags & NF_NAT_RANGE_PROTO_RANDOM_ALL)) {
		if (r->flags & NF_NAT_RANGE_PROTO_SPECIFIED) {
			if (l4_in_range(t, manip, r->min_proto, r->max_proto) &&
			    (r->min_proto == r->max_proto || !used_tuple(s, t, e, manip)))
				return;
		} else if (!used_tuple(s, t, e, manip)) {
			return;
		}
	}
	unique_l4(s, t, r, manip, e);
}

static bool initialized(const struct nftdp_ct_entry *e, enum nftdp_ct_manip manip)
{
	return e->status & (manip == NFTDP_CT_MANIP_SRC ? IPS_SRC_NAT_DONE : IPS_DST_NAT_DONE);
}

static unsigned int setup_info(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       const struct nftdp_ct_nat_range *r, enum nftdp_ct_manip manip)
{
	struct nftdp_ct_tuple curr, t, reply;

	if (e->status & IPS_CONFIRMED)
		return NF_ACCEPT;
	/* what we have looks like the inverse of the reply */
	if (!nftdp_ct_tuple_invert(&e->tuple[IP_CT_DIR_REPLY], &curr))
		return NF_DROP;
	get_unique_tuple(s, &t, &curr, r, e, manip);
	if (memcmp(&t, &curr, sizeof(t))) {
		if (!nftdp_ct_tuple_invert(&t, &reply))
			return NF_DROP;
		nftdp_ct_alter_reply(s, e, &reply);
		e->status |= manip == NFTDP_CT_MANIP_SRC ? IPS_SRC_NAT : IPS_DST_NAT;
	}
	e->status |= manip == NFTDP_CT_MANIP_SRC ? IPS_SRC_NAT_DONE : IPS_DST_NAT_DONE;
	return NF_ACCEPT;
}

unsigned int nftdp_ct_nat_setup(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				const struct nftdp_ct_nat_range *range, enum nftdp_ct_manip manip)
{
	unsigned int ctinfo;

	if (!pkt->ct)
		return NF_DROP;
	return setup_info(s, nftdp_ct_entry_of(pkt->ct, &ctinfo), range, manip);
}

unsigned int nftdp_ct_nat_setup_entry(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				      const struct nftdp_ct_nat_range *range,
				      enum nftdp_ct_manip manip)
{
	return setup_info(s, e, range, manip);
}

/* range with its address the one of device ifindex (the configured
 * ifaddr), for manip; no address: drop */
static unsigned int nat_to_ifaddr(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				  const struct nftdp_ct_nat_range *range, uint32_t ifindex,
				  enum nftdp_ct_manip manip)
{
	struct nftdp_ct_nat_range r = *range;
	union nftdp_ct_addr a;

	if (!pkt->ct || !s->cfg.ifaddr)
		return NF_DROP;
	memset(&a, 0, sizeof(a));
	if (!s->cfg.ifaddr(s->cfg.ifaddr_arg, ifindex, pkt->nfproto, a.u8))
		return NF_DROP;
	r.flags |= NF_NAT_RANGE_MAP_IPS;
	r.min_addr = r.max_addr = a;
	return nftdp_ct_nat_setup(s, pkt, &r, manip);
}

unsigned int nftdp_ct_nat_masquerade(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				     const struct nftdp_ct_nat_range *range)
{
	/* the output device's address; none: "ate my IP address" */
	return nat_to_ifaddr(s, pkt, range, pkt->oif, NFTDP_CT_MANIP_SRC);
}

unsigned int nftdp_ct_nat_redirect(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				   const struct nftdp_ct_nat_range *range)
{
	/* nf_nat_redirect_ipv4/6: the incoming device's (primary) address */
	return nat_to_ifaddr(s, pkt, range, pkt->iif, NFTDP_CT_MANIP_DST);
}

bool nftdp_ct_nat_need_chains(const struct nftdp_vm_pkt *pkt, uint8_t hook)
{
	const struct nftdp_ct_entry *e;
	unsigned int ctinfo;

	if (!pkt->ct)
		return false;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	if (ctinfo != IP_CT_NEW && ctinfo != IP_CT_RELATED && ctinfo != IP_CT_RELATED_REPLY)
		return false;
	return !initialized(e, nftdp_ct_hook2manip(hook));
}

/* ---- packet rewriting ---- */

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* RFC 1624: HC' = ~(~HC + ~m + m') over the changed 16-bit words */
/* the one's complement sum of what replacing from by to (len bytes, even)
 * adds to a checksum: the kernel's csum_sub and csum_add of them */
static inline uint32_t csum_delta(const void *from, const void *to, uint32_t len)
{
	const uint8_t *f = from, *t = to;
	uint32_t sum = 0;

	for (uint32_t i = 0; i < len; i += 2) {
		sum += (uint16_t)~rd16(f + i);
		sum += rd16(t + i);
	}
	return sum;
}

/* the checksum at field updated by a delta (csum_delta), folded once: the
 * same value as the updates one after another (each fold is the same sum
 * modulo 0xffff, zero only where every term is) */
static void csum_apply(uint8_t *field, uint32_t delta)
{
	uint64_t sum = (uint64_t)(uint16_t)~rd16(field) + delta;

	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = (uint16_t)~sum;
	field[0] = (uint8_t)(sum >> 8);
	field[1] = (uint8_t)sum;
}

static void csum_replace(uint8_t *field, const void *from, const void *to, uint32_t len)
{
	const uint8_t *f = from, *t = to;
	uint32_t sum = (uint16_t)~rd16(field), i;

	for (i = 0; i < len; i += 2) {
		sum += (uint16_t)~rd16(f + i);
		sum += rd16(t + i);
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = (uint16_t)~sum;
	field[0] = (uint8_t)(sum >> 8);
	field[1] = (uint8_t)sum;
}

static uint16_t csum_full(const uint8_t *p, uint32_t len, uint32_t sum)
{
	for (; len > 1; p += 2, len -= 2)
		sum += rd16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static bool icmp_query(uint8_t l4proto, uint8_t type)
{
	if (l4proto == IPPROTO_ICMP)
		return type == 0 || type == 8 || type == 13 || type == 14 || type == 15 ||
		       type == 16 || type == 17 || type == 18;
	return type == 128 || type == 129 || type == 139 || type == 140;
}

/*
 * nf_nat_ipv4_manip_pkt / nf_nat_ipv6_manip_pkt: make the packet at nh
 * (avail bytes, transport header at thoff) carry target's source
 * (manip SRC) or destination. A truncated L4 header (inside an ICMP error)
 * gets its ports changed but keeps its checksum, as the kernel does.
 * False (drop) where the kernel's l4proto manip fails: a GRE header
 * shorter than 8 bytes, a GRE version other than 0 and 1 to translate.
 */
static bool manip_pkt(uint8_t *nh, uint32_t avail, uint8_t l3, uint32_t thoff, uint8_t l4proto,
		      const struct nftdp_ct_tuple *target, enum nftdp_ct_manip manip)
{
	bool src = manip == NFTDP_CT_MANIP_SRC, v4 = l3 == NFPROTO_IPV4;
	uint32_t alen = v4 ? 4 : 16, l4avail = avail > thoff ? avail - thoff : 0;
	uint8_t *addr = nh + (v4 ? (src ? 12 : 16) : (src ? 8 : 24));
	const uint8_t *naddr = src ? target->src.u8 : target->dst.u8;
	uint8_t *th = nh + thoff;

	if (avail < (v4 ? 20u : 40u) || thoff < (v4 ? 20u : 40u))
		return true; /* callers validated the header; never write past it */
	if (l4proto == IPPROTO_GRE) {
		/* gre_manip_pkt: skb_ensure_writable of the 8 bytes up to the
		 * call id; the destination key is the version 1 call id */
		if (l4avail < 8)
			return false;
		if (!src) {
			if ((th[1] & 7) == 1)
				memcpy(th + 6, &target->dport, 2);
			else if ((th[1] & 7) != 0)
				return false;
		}
	}
	if (has_ports(l4proto) && l4avail >= 4) {
		uint8_t *port = th + (src ? 0 : 2);
		const uint16_t nport = src ? target->sport : target->dport;
		uint8_t *csum = NULL;

		if (l4proto == IPPROTO_TCP && l4avail >= 18)
			csum = th + 16;
		else if ((l4proto == IPPROTO_UDP || l4proto == IPPROTO_UDPLITE) && l4avail >= 8 &&
			 (!v4 || th[6] || th[7]))
			csum = th + 6; /* IPv4 UDP without checksum stays so */
		if (csum) {
			/* inet_proto_csum_replace16/4 and _replace2 in one */
			csum_apply(csum,
				   csum_delta(addr, naddr, alen) + csum_delta(port, &nport, 2));
			if (l4proto == IPPROTO_UDP && !csum[0] && !csum[1])
				csum[0] = csum[1] = 0xff; /* CSUM_MANGLED_0 */
		}
		memcpy(port, &nport, 2);
		if (l4proto == IPPROTO_SCTP && l4avail >= 12) {
			/* sctp_manip_pkt: the CRC32c to the end of the datagram
			 * (not link padding) or of the quote (one shorter than
			 * the common header keeps its own) */
			uint32_t end = v4 ? (uint32_t)nh[2] << 8 | nh[3]
					  : 40u + ((uint32_t)nh[4] << 8 | nh[5]);
			uint32_t crc;

			if (end > avail)
				end = avail;
			if (end >= thoff + 12) {
				crc = nftdp_ct_sctp_crc32c(th, end - thoff);
				th[8] = (uint8_t)crc;
				th[9] = (uint8_t)(crc >> 8);
				th[10] = (uint8_t)(crc >> 16);
				th[11] = (uint8_t)(crc >> 24);
			}
		}
	} else if ((l4proto == IPPROTO_ICMP || l4proto == IPPROTO_ICMPV6) && l4avail >= 8 &&
		   icmp_query(l4proto, th[0])) {
		/* the query id (both directions keep the source's) */
		if (l4proto == IPPROTO_ICMPV6)
			csum_replace(th + 2, addr, naddr, alen);
		csum_replace(th + 2, th + 4, &target->sport, 2);
		memcpy(th + 4, &target->sport, 2);
	}
	if (v4)
		csum_replace(nh + 10, addr, naddr, 4);
	memcpy(addr, naddr, alen);
	return true;
}

/* nf_nat_manip_pkt: look like the inverse of the other direction */
static bool nat_manip(struct nftdp_ct_entry *e, struct nftdp_vm_pkt *pkt, enum nftdp_ct_manip manip,
		      int dir)
{
	struct nftdp_ct_tuple target;

	if (!nftdp_ct_tuple_invert(&e->tuple[!dir], &target))
		return true;
	return manip_pkt(pkt->data + pkt->nh_off, pkt->len - pkt->nh_off, pkt->nfproto,
			 pkt->th_off - pkt->nh_off, pkt->l4proto, &target, manip);
}

static unsigned long statusbit_for(enum nftdp_ct_manip manip, int dir)
{
	unsigned long bit = manip == NFTDP_CT_MANIP_SRC ? IPS_SRC_NAT : IPS_DST_NAT;

	return dir == IP_CT_DIR_REPLY ? bit ^ IPS_NAT_MASK : bit; /* inverted for replies */
}

static bool icmp_error_type(uint8_t l4proto, uint8_t type)
{
	if (l4proto == IPPROTO_ICMP)
		return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
	return type < 128;
}

/* nf_nat_icmp_reply_translation / nf_nat_icmpv6_reply_translation */
static bool icmp_reply_translation(struct nftdp_ct_entry *e, struct nftdp_vm_pkt *pkt,
				   unsigned int ctinfo, enum nftdp_ct_manip manip)
{
	uint8_t *nh = pkt->data + pkt->nh_off, *icmp = pkt->data + pkt->th_off;
	uint32_t ilen = nftdp_ct_l4len(pkt), inner_thoff;
	int dir = ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
	struct nftdp_ct_tuple target, inner;
	uint16_t c;

	if (ilen < 8)
		return false;
	if (pkt->l4proto == IPPROTO_ICMP && icmp[0] == 5) {
		/* redirects on non-null NATs must be dropped */
		if ((e->status & IPS_NAT_DONE_MASK) != IPS_NAT_DONE_MASK ||
		    (e->status & IPS_NAT_MASK))
			return false;
	}
	if (!(e->status & statusbit_for(manip, dir)))
		return true;
	if (!nftdp_ct_tuple_from(icmp + 8, ilen - 8, true, pkt->nfproto, &inner, &inner_thoff))
		return false;
	/* the quoted packet went the other way: the other manip */
	if (!manip_pkt(icmp + 8, ilen - 8, pkt->nfproto, inner_thoff, inner.l4proto,
		       &e->tuple[!dir],
		       manip == NFTDP_CT_MANIP_SRC ? NFTDP_CT_MANIP_DST : NFTDP_CT_MANIP_SRC))
		return false;
	/* the outer header looks like the reply to an incoming packet */
	if (!nftdp_ct_tuple_invert(&e->tuple[!dir], &target))
		return false;
	if (!manip_pkt(nh, pkt->len - pkt->nh_off, pkt->nfproto, pkt->th_off - pkt->nh_off,
		       pkt->l4proto, &target, manip))
		return false;
	icmp[2] = icmp[3] = 0;
	if (pkt->l4proto == IPPROTO_ICMP) {
		c = csum_full(icmp, ilen, 0);
	} else {
		uint32_t sum = 0, i;

		for (i = 0; i < 32; i += 2)
			sum += rd16(nh + 8 + i);
		sum += ilen + IPPROTO_ICMPV6;
		c = csum_full(icmp, ilen, sum);
	}
	icmp[2] = (uint8_t)(c >> 8);
	icmp[3] = (uint8_t)c;
	return true;
}

unsigned int nftdp_ct_nat_packet(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint8_t hook)
{
	enum nftdp_ct_manip manip = nftdp_ct_hook2manip(hook);
	struct nftdp_ct_entry *e;
	unsigned int ctinfo;
	int dir;

	/* the established pass applied it already (a flow-cache miss it
	 * left to the pipeline) */
	if (!pkt->ct || (pkt->nat_done & (1u << manip)))
		return NF_ACCEPT;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	dir = ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
	if ((ctinfo == IP_CT_RELATED || ctinfo == IP_CT_RELATED_REPLY) &&
	    (pkt->l4proto == IPPROTO_ICMP || pkt->l4proto == IPPROTO_ICMPV6) &&
	    pkt->len >= pkt->th_off + 8 && icmp_error_type(pkt->l4proto, pkt->data[pkt->th_off]))
		return icmp_reply_translation(e, pkt, ctinfo, manip) ? NF_ACCEPT : NF_DROP;
	if ((ctinfo == IP_CT_NEW || ctinfo == IP_CT_RELATED || ctinfo == IP_CT_RELATED_REPLY) &&
	    !initialized(e, manip)) {
		/* nf_nat_alloc_null_binding: this address, the protocol
		 * decides the rest (a clashing source port still moves) */
		struct nftdp_ct_nat_range r = {.flags = NF_NAT_RANGE_MAP_IPS};

		r.min_addr = r.max_addr =
		    manip == NFTDP_CT_MANIP_SRC ? e->tuple[1].dst : e->tuple[1].src;
		if (setup_info(s, e, &r, manip) != NF_ACCEPT)
			return NF_DROP;
	}
	if ((e->status & statusbit_for(manip, dir)) && !nat_manip(e, pkt, manip, dir))
		return NF_DROP;
	return NF_ACCEPT;
}

bool nftdp_ct_nat_bound(const struct nftdp_vm_pkt *pkt, uint8_t *manips)
{
	const struct nftdp_ct_entry *e;
	unsigned int ctinfo;
	int dir;

	*manips = 0;
	if (!pkt->ct)
		return true; /* untracked: nf_nat_inet_fn leaves it alone */
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	/* an ICMP error's inner header (nf_nat_icmp_reply_translation), a
	 * related connection's first packet, sequence adjustment: the
	 * pipeline's way */
	if (ctinfo == IP_CT_RELATED || ctinfo == IP_CT_RELATED_REPLY ||
	    (e->status & IPS_SEQ_ADJUST))
		return false;
	/* nf_nat_inet_fn runs a hook's nat-type chains for a packet of state
	 * NEW whose binding of that type is not set (an entry confirmed
	 * under another generation, without NAT then) */
	if (ctinfo == IP_CT_NEW && (e->status & IPS_NAT_DONE_MASK) != IPS_NAT_DONE_MASK)
		return false;
	/* manip_pkt's protocols that cannot fail (GRE can) */
	switch (pkt->l4proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		break;
	default:
		if (e->status & IPS_NAT_MASK)
			return false;
	}
	dir = ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
	if (e->status & statusbit_for(NFTDP_CT_MANIP_DST, dir))
		*manips |= 1u << NFTDP_CT_MANIP_DST;
	if (e->status & statusbit_for(NFTDP_CT_MANIP_SRC, dir))
		*manips |= 1u << NFTDP_CT_MANIP_SRC;
	return true;
}

bool nftdp_ct_nat_apply(struct nftdp_vm_pkt *pkt, enum nftdp_ct_manip manip)
{
	struct nftdp_ct_entry *e;
	unsigned int ctinfo;

	if (!pkt->ct)
		return true;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	if (!nat_manip(e, pkt, manip,
		       ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL))
		return false;
	pkt->nat_done |= (uint8_t)(1u << manip);
	return true;
}
