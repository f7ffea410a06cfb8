// SPDX-License-Identifier: BSD-3-Clause
/*
 * The kernel's multipath hash policies (net.ipv4 / net.ipv6
 * fib_multipath_hash_policy 0-3 and fib_multipath_hash_fields), as
 * fib_multipath_hash (net/ipv4/route.c) and rt6_multipath_hash
 * (net/ipv6/route.c) compute them: over a packet being forwarded, from
 * the fields the flow dissector (net/core/flow_dissector.c,
 * skb_flow_dissect_flow_keys) finds, or over an output flow. The keys are
 * hashed by nftdp_route_mp_hash32 (route.c) under the seed.
 */
#include <string.h>

#include <netinet/in.h>

#include "route_priv.h"

#define ETH_IP 0x0800u
#define ETH_IPV6 0x86ddu
#define ETH_TEB 0x6558u
#define ETH_VLAN 0x8100u
#define ETH_QINQ 0x88a8u
#define ETH_PPP_GRE 0x880bu
#define MAX_HDRS 15 /* MAX_FLOW_DISSECT_HDRS */

/* the struct flow_keys fields a multipath hash reads */
struct fkeys {
	bool has_addr; /* control.addr_type set */
	bool v6;       /* which: IPV6_ADDRS, else IPV4_ADDRS */
	bool encap;    /* FLOW_DIS_ENCAPSULATION */
	uint8_t saddr[16], daddr[16];
	uint32_t flow_label; /* tags.flow_label: ntohl(ip6_flowlabel()) */
	uint8_t ip_proto;
	uint8_t ports[4]; /* ports.src, ports.dst as the packet has them */
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* proto_ports_offset */
static int ports_offset(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_DCCP:
	case IPPROTO_ESP:
	case IPPROTO_SCTP:
	case IPPROTO_UDPLITE:
		return 0;
	case IPPROTO_AH:
		return 4;
	default:
		return -1;
	}
}

enum ret { OUT, PROTO_AGAIN, IPPROTO_AGAIN, CONTINUE };

/* __skb_flow_dissect_gre: a GRE header at *off (version 0, or PPTP's 1,
 * no routing); *proto the ethertype it carries */
static enum ret gre(const uint8_t *d, size_t len, size_t *off, uint16_t *proto, bool stop,
		    struct fkeys *k)
{
	size_t o = 4;
	uint16_t flags, ver;

	if (*off + 4 > len)
		return OUT;
	flags = be16(d + *off);
	if (flags & 0x4000) /* GRE_ROUTING */
		return OUT;
	ver = flags & 0x0007;
	if (ver > 1)
		return OUT;
	*proto = be16(d + *off + 2);
	if (ver && !(*proto == ETH_PPP_GRE && (flags & 0x2000)))
		return OUT;
	if (flags & 0x8000) /* GRE_CSUM: checksum and reserved1 */
		o += 4;
	if (flags & 0x2000) { /* GRE_KEY: the key id, read */
		if (*off + o + 4 > len)
			return OUT;
		o += 4;
	}
	if (flags & 0x1000) /* GRE_SEQ */
		o += 4;
	if (!ver) {
		if (*proto == ETH_TEB) {
			if (*off + o + 14 > len)
				return OUT;
			*proto = be16(d + *off + o + 12);
			o += 14;
		}
	} else {
		if (flags & 0x0080) /* GRE_ACK */
			o += 4;
		if (*off + o + 4 > len)
			return OUT;
		/* PPP_PROTOCOL: IP and IPv6 looked into, others not */
		if (be16(d + *off + o + 2) == 0x0021)
			*proto = ETH_IP;
		else if (be16(d + *off + o + 2) == 0x0057)
			*proto = ETH_IPV6;
		o += 4;
	}
	*off += o;
	k->encap = true;
	return stop ? OUT : PROTO_AGAIN;
}

/*
 * skb_flow_dissect_flow_keys over a network header of ethertype proto
 * (FLOW_DISSECTOR_F_STOP_AT_ENCAP: stop): the last addresses, flow label
 * and protocol it passes, the ports of that protocol, whether it went
 * through an encapsulation. Nothing is read at or past len.
 */
static void dissect(const uint8_t *d, size_t len, uint16_t proto, bool stop, struct fkeys *k)
{
	size_t off = 0;
	uint8_t ip_proto = 0;
	bool frag = false;
	unsigned int hdrs = 0;
	enum ret r;

	memset(k, 0, sizeof(*k));
proto_again:
	switch (proto) {
	case ETH_IP: {
		unsigned int ihl;

		if (off + 20 > len || (d[off] & 0x0f) < 5)
			goto out;
		ihl = (d[off] & 0x0fu) * 4;
		ip_proto = d[off + 9];
		memset(k->saddr, 0, 16);
		memset(k->daddr, 0, 16);
		memcpy(k->saddr, d + off + 12, 4);
		memcpy(k->daddr, d + off + 16, 4);
		k->has_addr = true;
		k->v6 = false;
		/* a fragment, first or not: no further (no PARSE_1ST_FRAG) */
		if ((d[off + 6] & 0x3f) || d[off + 7])
			goto out;
		off += ihl;
		break;
	}
	case ETH_IPV6: {
		uint32_t label;

		if (off + 40 > len)
			goto out;
		ip_proto = d[off + 6];
		memcpy(k->saddr, d + off + 8, 16);
		memcpy(k->daddr, d + off + 24, 16);
		k->has_addr = true;
		k->v6 = true;
		/* set only where there is one: an inner header without
		 * leaves the outer one's */
		label =
		    (uint32_t)(d[off + 1] & 0x0f) << 16 | (uint32_t)d[off + 2] << 8 | d[off + 3];
		if (label)
			k->flow_label = label;
		off += 40;
		break;
	}
	case ETH_VLAN:
	case ETH_QINQ:
		if (off + 4 > len)
			goto out;
		proto = be16(d + off + 2);
		off += 4;
		if (++hdrs <= MAX_HDRS)
			goto proto_again;
		goto out;
	default: /* MPLS, ARP, PPP and the rest: nothing more of these */
		goto out;
	}
ip_proto_again:
	r = CONTINUE;
	switch (ip_proto) {
	case IPPROTO_GRE:
		r = gre(d, len, &off, &proto, stop, k);
		break;
	case IPPROTO_IPIP:
	case IPPROTO_IPV6:
		proto = ip_proto == IPPROTO_IPIP ? ETH_IP : ETH_IPV6;
		k->encap = true;
		r = stop ? OUT : PROTO_AGAIN;
		break;
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_DSTOPTS:
		if (proto != ETH_IPV6)
			break;
		if (off + 2 > len) {
			r = OUT;
			break;
		}
		ip_proto = d[off];
		off += ((size_t)d[off + 1] + 1) * 8;
		r = IPPROTO_AGAIN;
		break;
	case IPPROTO_FRAGMENT:
		if (proto != ETH_IPV6)
			break;
		if (off + 8 > len) {
			r = OUT;
			break;
		}
		frag = true;
		ip_proto = d[off];
		off += 8;
		r = OUT;
		break;
	default:
		break;
	}
	/* __skb_flow_dissect_ports after each protocol, unless a fragment */
	if (!frag) {
		int po = ports_offset(ip_proto);

		memset(k->ports, 0, 4);
		if (po >= 0 && off + (size_t)po + 4 <= len)
			memcpy(k->ports, d + off + po, 4);
	}
	if (r == PROTO_AGAIN && ++hdrs <= MAX_HDRS)
		goto proto_again;
	if (r == IPPROTO_AGAIN && ++hdrs <= MAX_HDRS)
		goto ip_proto_again;
out:
	k->ip_proto = ip_proto;
}

static bool icmp_err(bool v6, uint8_t type)
{
	if (v6) /* icmpv6_is_err */
		return type >= 1 && type <= 4;
	/* icmp_is_err */
	return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

/* the datagram: len no further than the header's total length (ip_rcv,
 * ipv6_rcv trim the skb to it) */
static size_t datagram_len(bool v6, const uint8_t *ip, size_t len)
{
	size_t tot;

	if (len < (v6 ? 40u : 20u))
		return len;
	tot = v6 ? 40u + be16(ip + 4) : be16(ip + 2);
	return tot < len ? tot : len;
}

/* ip_multipath_l3_keys / ip6_multipath_l3_keys (no early flow keys):
 * the addresses (IPv6: flow label and next header too) of the header, or
 * of the one an ICMP error quotes */
static void l3_keys(bool v6, const uint8_t *ip, size_t len, struct nftdp_route_mp_keys *k)
{
	const uint8_t *key = ip;
	size_t hlen = v6 ? 40 : (size_t)(ip[0] & 0x0f) * 4;

	memset(k, 0, sizeof(*k));
	k->v6 = v6;
	if (ip[v6 ? 6 : 9] == (v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP) &&
	    (v6 || !((ip[6] & 0x1f) || ip[7])) && hlen + 8 + (v6 ? 40 : 20) <= len &&
	    icmp_err(v6, ip[hlen]))
		key = ip + hlen + 8;
	if (!v6) {
		memcpy(k->saddr, key + 12, 4);
		memcpy(k->daddr, key + 16, 4);
		return;
	}
	memcpy(k->saddr, key + 8, 16);
	memcpy(k->daddr, key + 24, 16);
	/* ip6_flowlabel: the label bits where the header has them */
	memcpy(&k->flow_label, key, 4);
	((uint8_t *)&k->flow_label)[0] = 0;
	((uint8_t *)&k->flow_label)[1] &= 0x0f;
	k->ip_proto = key[6];
}

static void set_addrs(const struct fkeys *f, struct nftdp_route_mp_keys *k, bool src, bool dst)
{
	unsigned int n = f->v6 ? 16 : 4;

	k->v6 = f->v6;
	if (src)
		memcpy(k->saddr, f->saddr, n);
	if (dst)
		memcpy(k->daddr, f->daddr, n);
}

static void set_ports(const struct fkeys *f, struct nftdp_route_mp_keys *k, bool src, bool dst)
{
	if (src)
		memcpy(&k->sport, f->ports, 2);
	if (dst)
		memcpy(&k->dport, f->ports + 2, 2);
}

/* jhash_2words(a, b, 0) (include/linux/jhash.h) */
static uint32_t rol32(uint32_t x, unsigned int s)
{
	return (x << s) | (x >> (32 - s));
}

uint32_t nftdp_route_jhash_2words(uint32_t a, uint32_t b, uint32_t initval);
uint32_t nftdp_route_jhash_2words(uint32_t a, uint32_t b, uint32_t initval)
{
	uint32_t c = initval + 0xdeadbeefu + (2u << 2);

	a += c;
	b += c;
	c ^= b;
	c -= rol32(b, 14);
	a ^= c;
	a -= rol32(c, 11);
	b ^= a;
	b -= rol32(a, 25);
	c ^= b;
	c -= rol32(b, 16);
	a ^= c;
	a -= rol32(c, 4);
	b ^= a;
	b -= rol32(a, 14);
	c ^= b;
	c -= rol32(b, 24);
	return c;
}

/* fib_multipath_custom_hash_skb / rt6_multipath_custom_hash_skb */
static uint32_t custom_skb(const struct nftdp_route_mp_conf *c, bool v6, const uint8_t *ip,
			   size_t len)
{
	uint32_t fl = c->fields, outer = 0, inner = 0;
	struct nftdp_route_mp_keys k;
	struct fkeys f;
	bool has_inner = true;

	if (fl & NFTDP_ROUTE_MP_F_OUTER_MASK) {
		dissect(ip, len, v6 ? ETH_IPV6 : ETH_IP, true, &f);
		memset(&k, 0, sizeof(k));
		k.v6 = v6; /* the route's family's addresses */
		if (fl & NFTDP_ROUTE_MP_F_SRC_IP)
			memcpy(k.saddr, f.saddr, v6 ? 16 : 4);
		if (fl & NFTDP_ROUTE_MP_F_DST_IP)
			memcpy(k.daddr, f.daddr, v6 ? 16 : 4);
		if (fl & NFTDP_ROUTE_MP_F_IP_PROTO)
			k.ip_proto = f.ip_proto;
		if (v6 && (fl & NFTDP_ROUTE_MP_F_FLOWLABEL))
			k.flow_label = f.flow_label;
		set_ports(&f, &k, fl & NFTDP_ROUTE_MP_F_SRC_PORT, fl & NFTDP_ROUTE_MP_F_DST_PORT);
		has_inner = f.encap;
		outer = nftdp_route_mp_hash32(c->seed, &k);
	}
	if (has_inner && (fl & NFTDP_ROUTE_MP_F_INNER_MASK)) {
		dissect(ip, len, v6 ? ETH_IPV6 : ETH_IP, false, &f);
		if (f.encap) {
			memset(&k, 0, sizeof(k));
			set_addrs(&f, &k, fl & NFTDP_ROUTE_MP_F_INNER_SRC_IP,
				  fl & NFTDP_ROUTE_MP_F_INNER_DST_IP);
			if (f.v6 && (fl & NFTDP_ROUTE_MP_F_INNER_FLOWLABEL))
				k.flow_label = f.flow_label;
			if (fl & NFTDP_ROUTE_MP_F_INNER_IP_PROTO)
				k.ip_proto = f.ip_proto;
			set_ports(&f, &k, fl & NFTDP_ROUTE_MP_F_INNER_SRC_PORT,
				  fl & NFTDP_ROUTE_MP_F_INNER_DST_PORT);
			inner = nftdp_route_mp_hash32(c->seed, &k);
		}
	}
	return nftdp_route_jhash_2words(outer, inner, 0);
}

uint32_t nftdp_route_mp_hash_skb(const struct nftdp_route_mp_conf *c, bool v6, const uint8_t *ip,
				 size_t len)
{
	struct nftdp_route_mp_keys k;
	struct fkeys f;

	len = datagram_len(v6, ip, len);
	if (len < (v6 ? 40u : 20u))
		return 0; /* not reached: the packet path parsed the header */
	memset(&k, 0, sizeof(k));
	switch (c->policy) {
	case 0:
	default:
		l3_keys(v6, ip, len, &k);
		break;
	case 1: /* the outer flow: addresses, protocol, ports */
		dissect(ip, len, v6 ? ETH_IPV6 : ETH_IP, true, &f);
		k.v6 = v6;
		memcpy(k.saddr, f.saddr, v6 ? 16 : 4);
		memcpy(k.daddr, f.daddr, v6 ? 16 : 4);
		k.ip_proto = f.ip_proto;
		set_ports(&f, &k, true, true);
		break;
	case 2: /* the innermost addresses, of either family */
		dissect(ip, len, v6 ? ETH_IPV6 : ETH_IP, false, &f);
		if (!f.has_addr) {
			l3_keys(v6, ip, len, &k);
			break;
		}
		set_addrs(&f, &k, true, true);
		if (f.v6) {
			k.flow_label = f.flow_label;
			k.ip_proto = f.ip_proto;
		}
		break;
	case 3:
		return custom_skb(c, v6, ip, len) >> 1;
	}
	return nftdp_route_mp_hash32(c->seed, &k) >> 1;
}

uint32_t nftdp_route_mp_hash_flow(const struct nftdp_route_mp_conf *c,
				  const struct nftdp_route_mp_keys *f)
{
	struct nftdp_route_mp_keys k;
	uint32_t fl = c->fields;
	unsigned int n = f->v6 ? 16 : 4;

	memset(&k, 0, sizeof(k));
	k.v6 = f->v6;
	switch (c->policy) {
	case 0:
	case 2:
	default: /* addresses; IPv6: flow label and protocol too */
		memcpy(k.saddr, f->saddr, n);
		memcpy(k.daddr, f->daddr, n);
		if (f->v6) {
			k.flow_label = f->flow_label;
			k.ip_proto = f->ip_proto;
		}
		break;
	case 1:
		memcpy(k.saddr, f->saddr, n);
		memcpy(k.daddr, f->daddr, n);
		k.ip_proto = f->ip_proto;
		k.sport = f->sport;
		k.dport = f->dport;
		break;
	case 3: /* fib_multipath_custom_hash_fl4 / _fl6: the outer fields */
		if (!(fl & NFTDP_ROUTE_MP_F_OUTER_MASK))
			return 0;
		if (fl & NFTDP_ROUTE_MP_F_SRC_IP)
			memcpy(k.saddr, f->saddr, n);
		if (fl & NFTDP_ROUTE_MP_F_DST_IP)
			memcpy(k.daddr, f->daddr, n);
		if (fl & NFTDP_ROUTE_MP_F_IP_PROTO)
			k.ip_proto = f->ip_proto;
		if (f->v6 && (fl & NFTDP_ROUTE_MP_F_FLOWLABEL))
			k.flow_label = f->flow_label;
		if (fl & NFTDP_ROUTE_MP_F_SRC_PORT)
			k.sport = f->sport;
		if (fl & NFTDP_ROUTE_MP_F_DST_PORT)
			k.dport = f->dport;
		break;
	}
	return nftdp_route_mp_hash32(c->seed, &k) >> 1;
}
