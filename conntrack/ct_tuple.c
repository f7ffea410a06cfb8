// SPDX-License-Identifier: BSD-3-Clause
/*
 * Tuples: a packet's original-direction tuple (nf_ct_get_tuple and the
 * protocols' pkt_to_tuple; GRE version 1's destination key, its source key
 * is ct_gre.c's), its inverse (nf_ct_invert_tuple, with the ICMP
 * type maps of icmp_invert_tuple / icmpv6_invert_tuple), the inner tuple of
 * an ICMP error (nf_ct_get_tuplepr), L4 checksum verification as
 * nf_checksum does at prerouting, and the symmetric RSS hash for steering.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rte_ip.h>
#include <rte_thash.h>

#include "ct_priv.h"

static bool has_ports(uint8_t l4proto)
{
	return l4proto == IPPROTO_TCP || l4proto == IPPROTO_UDP || l4proto == IPPROTO_UDPLITE ||
	       l4proto == IPPROTO_SCTP || l4proto == IPPROTO_DCCP;
}

/* The L4 part of a tuple from the transport header (avail bytes of it). */
static bool l4_tuple(const uint8_t *th, uint32_t avail, struct nftdp_ct_tuple *t)
{
	if (has_ports(t->l4proto)) {
		/* nf_ct_get_tuple_ports: the first four bytes only */
		if (avail < 4)
			return false;
		memcpy(&t->sport, th, 2);
		memcpy(&t->dport, th + 2, 2);
		return true;
	}
	if ((t->l4proto == IPPROTO_ICMP && t->l3proto == NFPROTO_IPV4) ||
	    (t->l4proto == IPPROTO_ICMPV6 && t->l3proto == NFPROTO_IPV6)) {
		/* icmp_pkt_to_tuple / icmpv6_pkt_to_tuple: the 8-byte header */
		if (avail < 8)
			return false;
		memcpy(&t->sport, th + 4, 2); /* echo id */
		t->dport = 0;
		memcpy(&t->dport, th, 2); /* type, code */
		return true;
	}
	if (t->l4proto == IPPROTO_GRE) {
		/* gre_pkt_to_tuple: version 0 (and anything shorter than a
		 * version 1 header) is tracked like generic; version 1 must
		 * carry PPP (0x880b), its call id is the destination key and
		 * the source key comes from the keymaps (ct_gre.c) */
		if (avail < 8 || (th[1] & 7) != 1)
			return true;
		if (th[2] != 0x88 || th[3] != 0x0b)
			return false;
		memcpy(&t->dport, th + 6, 2);
		return true;
	}
	return true; /* generic: protocol only */
}

static bool ipv6_ext(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60;
}

/*
 * Tuple of the IP packet at nh (avail bytes). inner: a packet quoted in an
 * ICMP error, which may be truncated (its length fields are not checked,
 * only what is there); non-first fragments cannot be tracked
 * (ipv4_get_l4proto / ipv6_get_l4proto).
 */
bool nftdp_ct_tuple_from(const uint8_t *nh, uint32_t avail, bool inner, uint8_t l3proto,
			 struct nftdp_ct_tuple *t, uint32_t *th_off)
{
	uint32_t off;

	(void)inner;
	memset(t, 0, sizeof(*t));
	t->l3proto = l3proto;
	if (l3proto == NFPROTO_IPV4) {
		if (avail < 20 || (nh[0] >> 4) != 4)
			return false;
		off = (nh[0] & 0xfu) * 4u;
		if (off < 20 || off > avail)
			return false;
		if (((uint32_t)nh[6] << 8 | nh[7]) & 0x1fff)
			return false;
		memcpy(&t->src.ip, nh + 12, 4);
		memcpy(&t->dst.ip, nh + 16, 4);
		t->l4proto = nh[9];
	} else if (l3proto == NFPROTO_IPV6) {
		uint8_t next;

		if (avail < 40 || (nh[0] >> 4) != 6)
			return false;
		memcpy(t->src.u8, nh + 8, 16);
		memcpy(t->dst.u8, nh + 24, 16);
		next = nh[6];
		off = 40;
		/* ipv6_skip_exthdr */
		while (ipv6_ext(next)) {
			uint32_t hl;

			if (off + 8 > avail)
				return false;
			if (next == 44) {
				if (((uint32_t)nh[off + 2] << 8 | nh[off + 3]) & ~7u)
					return false;
				hl = 8;
			} else if (next == 51) {
				hl = ((uint32_t)nh[off + 1] + 2) * 4;
			} else {
				hl = ((uint32_t)nh[off + 1] + 1) * 8;
			}
			next = nh[off];
			off += hl;
		}
		if (next == 59 || off > avail)
			return false;
		t->l4proto = next;
	} else {
		return false;
	}
	*th_off = off;
	return l4_tuple(nh + off, avail - off, t);
}

bool nftdp_ct_pkt_tuple(const struct nftdp_vm_pkt *pkt, struct nftdp_ct_tuple *out)
{
	return nftdp_ct_pkt_tuple_len(pkt, nftdp_ct_l4len(pkt), out);
}

bool nftdp_ct_pkt_tuple_len(const struct nftdp_vm_pkt *pkt, uint32_t l4len,
			    struct nftdp_ct_tuple *out)
{
	const uint8_t *nh = pkt->data + pkt->nh_off;

	memset(out, 0, sizeof(*out));
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->fragoff)
		return false;
	if (pkt->len < pkt->th_off || pkt->th_off < pkt->nh_off)
		return false;
	out->l3proto = pkt->nfproto;
	if (pkt->nfproto == NFPROTO_IPV4) {
		if (pkt->th_off - pkt->nh_off < 20)
			return false;
		memcpy(&out->src.ip, nh + 12, 4);
		memcpy(&out->dst.ip, nh + 16, 4);
	} else if (pkt->nfproto == NFPROTO_IPV6) {
		if (pkt->th_off - pkt->nh_off < 40)
			return false;
		memcpy(out->src.u8, nh + 8, 16);
		memcpy(out->dst.u8, nh + 24, 16);
	} else {
		return false;
	}
	out->l4proto = pkt->l4proto;
	if (out->l4proto == IPPROTO_TCP || out->l4proto == IPPROTO_UDP) {
		/* l4_tuple's ports, in line for the common case */
		if (l4len < 4)
			return false;
		memcpy(&out->sport, pkt->data + pkt->th_off, 2);
		memcpy(&out->dport, pkt->data + pkt->th_off + 2, 2);
		return true;
	}
	return l4_tuple(pkt->data + pkt->th_off, l4len, out);
}

/* icmp_invert_tuple's invmap, as type + 1 (0: no inverse) */
static uint8_t icmp_inverse(uint8_t type)
{
	switch (type) {
	case 8:
		return 0 + 1; /* echo -> echo reply */
	case 0:
		return 8 + 1;
	case 13:
		return 14 + 1; /* timestamp */
	case 14:
		return 13 + 1;
	case 15:
		return 16 + 1; /* information */
	case 16:
		return 15 + 1;
	case 17:
		return 18 + 1; /* address mask */
	case 18:
		return 17 + 1;
	default:
		return 0;
	}
}

static uint8_t icmpv6_inverse(uint8_t type)
{
	switch (type) {
	case 128:
		return 129 + 1; /* echo request -> reply */
	case 129:
		return 128 + 1;
	case 139:
		return 140 + 1; /* node information query -> reply */
	case 140:
		return 139 + 1;
	default:
		return 0;
	}
}

bool nftdp_ct_tuple_invert(const struct nftdp_ct_tuple *t, struct nftdp_ct_tuple *out)
{
	struct nftdp_ct_tuple r = *t;

	r.src = t->dst;
	r.dst = t->src;
	if ((t->l4proto == IPPROTO_ICMP && t->l3proto == NFPROTO_IPV4) ||
	    (t->l4proto == IPPROTO_ICMPV6 && t->l3proto == NFPROTO_IPV6)) {
		uint8_t tc[2], inv;

		memcpy(tc, &t->dport, 2);
		inv = t->l4proto == IPPROTO_ICMP ? icmp_inverse(tc[0]) : icmpv6_inverse(tc[0]);
		if (!inv)
			return false;
		tc[0] = (uint8_t)(inv - 1);
		memcpy(&r.dport, tc, 2);
		r.sport = t->sport; /* the id stays */
	} else {
		r.sport = t->dport;
		r.dport = t->sport;
	}
	*out = r;
	return true;
}

/*
 * nf_checksum at prerouting: the L4 checksum over the pseudo-header (none
 * for ICMPv4) and the whole L4 segment (l4len bytes from l4) must fold to
 * 0xffff. Sums are in host order: the fields added by value go in as the
 * big-endian words they are on the wire.
 *
 * One add chain of 64-bit words with the carry added back (an add and an
 * add with carry a word): the pseudo-header's addresses, length and
 * protocol, then the first 20 bytes (TCP's header, UDP's and 12 more)
 * without a loop, then the rest. No fold at the end: as 2^16 = 1 modulo
 * 0xffff, the sum is the 16-bit ones' complement sum modulo 0xffff, and
 * that folds to 0xffff exactly when it is a non-zero multiple of 0xffff
 * (a non-zero sum never folds to 0, 0 folds to 0).
 */
static inline uint64_t csum_add(uint64_t s, uint64_t v)
{
	s += v;
	return s + (s < v);
}

bool nftdp_ct_l4_csum_ok(const struct nftdp_vm_pkt *pkt, const uint8_t *l4, uint32_t l4len)
{
	const uint8_t *nh = pkt->data + pkt->nh_off;
	uint64_t s = 0;

	if (pkt->flags & NFTDP_VM_PKT_F_CSUM_OK)
		return true; /* CHECKSUM_UNNECESSARY: the NIC checked it */
	if (pkt->l4proto != IPPROTO_ICMP) {
		s = (uint64_t)htons((uint16_t)l4len) + htons(pkt->l4proto);
		if (pkt->nfproto == NFPROTO_IPV6) {
			s = csum_add(s, nftdp_ld64(nh + 8));
			s = csum_add(s, nftdp_ld64(nh + 16));
			s = csum_add(s, nftdp_ld64(nh + 24));
			s = csum_add(s, nftdp_ld64(nh + 32));
		} else {
			s = csum_add(s, nftdp_ld64(nh + 12));
		}
	}
	if (l4len >= 20) {
		s = csum_add(s, nftdp_ld64(l4));
		s = csum_add(s, nftdp_ld64(l4 + 8));
		s = csum_add(s, nftdp_ld32(l4 + 16));
		l4 += 20;
		l4len -= 20;
	}
	for (; l4len >= 8; l4 += 8, l4len -= 8)
		s = csum_add(s, nftdp_ld64(l4));
	if (l4len >= 4) {
		s = csum_add(s, nftdp_ld32(l4));
		l4 += 4;
		l4len -= 4;
	}
	if (l4len >= 2) {
		s = csum_add(s, nftdp_ld16(l4));
		l4 += 2;
		l4len -= 2;
	}
	if (l4len) {
		uint8_t last[2] = {*l4, 0}; /* the odd byte first in its word */

		s = csum_add(s, nftdp_ld16(last));
	}
	return s && s % 0xffff == 0;
}

bool nftdp_ct_l4_checksum_ok(const struct nftdp_vm_pkt *pkt)
{
	return nftdp_ct_l4_csum_ok(pkt, pkt->data + pkt->th_off, nftdp_ct_l4len(pkt));
}

/* 0x6d5a repeated: the symmetric RSS key (both directions hash alike). */
static const uint8_t rss_key_sym[40] = {
    0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
    0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
    0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

uint32_t nftdp_ct_tuple_rss(const struct nftdp_ct_tuple *t)
{
	/* rte_ipv4_tuple / rte_ipv6_tuple layout: host-order words, then
	 * sport << 16 | dport */
	uint32_t in[9], n = 0, i;

	if (t->l3proto == NFPROTO_IPV6) {
		for (i = 0; i < 4; i++)
			in[n++] = ntohl(t->src.ip6[i]);
		for (i = 0; i < 4; i++)
			in[n++] = ntohl(t->dst.ip6[i]);
	} else {
		in[n++] = ntohl(t->src.ip);
		in[n++] = ntohl(t->dst.ip);
	}
	if (has_ports(t->l4proto))
		in[n++] = (uint32_t)ntohs(t->sport) << 16 | ntohs(t->dport);
	return rte_softrss(in, n, rss_key_sym);
}

bool nftdp_ct_pkt_rss(const struct nftdp_vm_pkt *pkt, uint32_t *rss)
{
	const uint8_t *l4 = pkt->data + pkt->th_off;
	uint32_t l4len = nftdp_ct_l4len(pkt), off;
	struct nftdp_ct_tuple t;
	bool err = false;

	if ((pkt->flags & NFTDP_VM_PKT_F_L4PROTO) && !pkt->fragoff && l4len >= 8) {
		if (pkt->nfproto == NFPROTO_IPV4 && pkt->l4proto == IPPROTO_ICMP)
			err = l4[0] == 3 || l4[0] == 4 || l4[0] == 5 || l4[0] == 11 || l4[0] == 12;
		else if (pkt->nfproto == NFPROTO_IPV6 && pkt->l4proto == IPPROTO_ICMPV6)
			err = l4[0] < 128;
	}
	if (err) {
		/* the quoted packet's tuple: symmetric, so no need to invert it */
		if (!nftdp_ct_tuple_from(l4 + 8, l4len - 8, true, pkt->nfproto, &t, &off))
			return false;
	} else if (!nftdp_ct_pkt_tuple(pkt, &t)) {
		return false;
	}
	*rss = nftdp_ct_tuple_rss(&t);
	return true;
}
