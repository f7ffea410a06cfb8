/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/ internals shared by its files: the byte-level parser and the
 * kernel's input/forward checks (parse.c, no EAL needed), reply builders
 * (reject.c), ports (port.c), the hook pipeline (pipeline.c), workers
 * (worker.c), statistics and telemetry (stats.c), nf_log printing (log.c).
 *
 * Threading: one struct nftdp_dp_worker per worker, written only by its
 * worker (its stats included: the control thread and telemetry read them
 * without locks, as the kernel reads per-cpu counters). struct nftdp_dp is
 * set up by main before workers start and read-only afterwards, except
 * `stop`.
 */
#ifndef NFTDP_DATAPLANE_PRIV_H
#define NFTDP_DATAPLANE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nftdp_common.h"
#include "nftdp_vm.h"

/* ------------------------------------------------------------------ */
/* parse.c: bytes only, no DPDK (unit-tested without EAL)              */

#define NFTDP_DP_ETH_HLEN 14
#define NFTDP_DP_VLAN_HLEN 4
#define NFTDP_DP_ETH_P_IP 0x0800
#define NFTDP_DP_ETH_P_IPV6 0x86dd
#define NFTDP_DP_ETH_P_ARP 0x0806
#define NFTDP_DP_ETH_P_8021Q 0x8100
#define NFTDP_DP_ETH_P_8021AD 0x88a8

/** Why a packet was dropped outside the ruleset; one counter each per worker. */
enum nftdp_dp_drop {
	NFTDP_DP_DROP_RUNT,	     /**< shorter than an Ethernet header */
	NFTDP_DP_DROP_MULTISEG,	     /**< chained mbuf that could not be linearized */
	NFTDP_DP_DROP_OTHERHOST,     /**< --router: VLAN id != 0 (the kernel's PACKET_OTHERHOST) */
	NFTDP_DP_DROP_IP_HDR,	     /**< ip_rcv: version, ihl, header past the end */
	NFTDP_DP_DROP_IP_CSUM,	     /**< ip_rcv: header checksum */
	NFTDP_DP_DROP_IP_LEN,	     /**< ip_rcv: total length vs frame */
	NFTDP_DP_DROP_IP6_HDR,	     /**< ipv6_rcv: version, header past the end */
	NFTDP_DP_DROP_IP6_LEN,	     /**< ipv6_rcv: payload length vs frame */
	NFTDP_DP_DROP_IP6_ADDR,	     /**< ipv6_rcv: multicast or loopback source, loopback dest */
	NFTDP_DP_DROP_TTL,	     /**< --router: TTL / hop limit <= 1 (time exceeded sent) */
	NFTDP_DP_DROP_MARTIAN,	     /**< --router: martian source or destination */
	NFTDP_DP_DROP_NOT_FORWARDED, /**< --router: broadcast/multicast, not forwarded */
	NFTDP_DP_DROP_TX_FULL,	     /**< tx queue or hand-off ring full */
	NFTDP_DP_DROP_NO_MBUF,	     /**< no mbuf for a reply or a dup */
	NFTDP_DP_DROP_FRAG,	     /**< defrag.c: fragments given up (bad, timed out, no room) */
	NFTDP_DP_DROP_FRAG_TOOBIG,   /**< defrag.c: DF datagram too big for the egress MTU */
	NFTDP_DP_DROP_CT_CLASH, /**< confirm: the reply tuple is another entry's (insert_failed) */
	NFTDP_DP_DROP_IP6_HBH,	/**< ipv6_parse_hopopts: hop-by-hop header bad or past the end */
	NFTDP_DP_DROP_IP6_HBH_OPT, /**< ip6_tlvopt_unknown, ipv6_hop_jumbo: an option says drop */
	NFTDP_DP_DROP_IP6_SRC_ANY, /**< --router: ip6_forward, source :: */
	NFTDP_DP_DROP_IP_OPTIONS,  /**< --router: ip_options_compile refused the options */
	NFTDP_DP_DROP_IP_SRR,	   /**< --router: LSRR/SSRR, accept_source_route 0 */
	NFTDP_DP_DROP_OWN_SRC, /**< --router: source is one of our --ifaddr (fib_validate_source) */
	NFTDP_DP_DROP_L2_NOT_HOST, /**< --router: IP unicast in an L2 broadcast/multicast frame */
	NFTDP_DP_DROP_NO_ROUTE,	   /**< --route: no route, unreachable, prohibit, blackhole */
	NFTDP_DP_DROP_ROUTE_NOT_PORT,	/**< --route: the route's device is not a port */
	NFTDP_DP_DROP_NEIGH_UNRESOLVED, /**< --route: no usable neighbour entry (nexthop.c) */
	NFTDP_DP_DROP_HOST_LIMIT,	/**< host.c: over the exception path's rate (--host-rate) */
	NFTDP_DP_DROP_DUP_NO_ROUTE, /**< a `dup to ADDR` copy: no route, or not through a port */
	NFTDP_DP_DROP_MAX
};

extern const char *const nftdp_dp_drop_names[NFTDP_DP_DROP_MAX];

/** What the link layer says about a frame. */
struct nftdp_dp_l2 {
	uint16_t proto;	   /**< ethertype after the outer tag (skb->protocol), host order */
	uint16_t nh_off;   /**< network header as the kernel sets it: after the outer tag */
	uint16_t ip_proto; /**< ethertype after every tag (up to two), host order */
	uint16_t ip_off;   /**< where that header starts */
	uint16_t vid;	   /**< outer VLAN id, 0 if untagged */
	uint8_t n_vlan;	   /**< tags seen (0..2) */
};

/**
 * Parse Ethernet and up to two 802.1Q/802.1ad tags of a frame of len bytes.
 * The kernel untags the outer tag before netdev ingress (skb_vlan_untag):
 * nh_off and proto describe that view, the VM still finds the tag bytes in
 * the data where nft's `vlan` payload expects them.
 * @return false when the frame is shorter than its headers.
 */
static inline bool nftdp_dp_parse_l2(const uint8_t *d, uint32_t len, struct nftdp_dp_l2 *l2)
{
	uint32_t off = NFTDP_DP_ETH_HLEN;
	uint16_t t, proto, nh_off = NFTDP_DP_ETH_HLEN, vid = 0;
	uint8_t n_vlan = 0;

	/* inline, and the result written once: the caller's reads of l2 must
	 * not wait on several narrow stores (no store-to-load forwarding) */
	if (len < NFTDP_DP_ETH_HLEN) {
		memset(l2, 0, sizeof(*l2));
		return false;
	}
	t = nftdp_rd16(d + 12);
	/* the common case, untagged: constant offsets, no loop */
	if (t != NFTDP_DP_ETH_P_8021Q && t != NFTDP_DP_ETH_P_8021AD) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* two stores: the struct literal takes a dozen instructions */
		uint64_t w = t | (uint64_t)NFTDP_DP_ETH_HLEN << 16 | (uint64_t)t << 32 |
			     (uint64_t)NFTDP_DP_ETH_HLEN << 48;
		uint32_t z = 0;

		_Static_assert(offsetof(struct nftdp_dp_l2, nh_off) == 2 &&
				   offsetof(struct nftdp_dp_l2, ip_proto) == 4 &&
				   offsetof(struct nftdp_dp_l2, ip_off) == 6 &&
				   offsetof(struct nftdp_dp_l2, vid) == 8 &&
				   offsetof(struct nftdp_dp_l2, n_vlan) == 10 &&
				   sizeof(struct nftdp_dp_l2) == 12,
			       "nftdp_dp_l2's layout");
		memcpy(l2, &w, 8);
		memcpy((uint8_t *)l2 + 8, &z, 4);
#else
		*l2 = (struct nftdp_dp_l2){.proto = t,
					   .nh_off = NFTDP_DP_ETH_HLEN,
					   .ip_proto = t,
					   .ip_off = NFTDP_DP_ETH_HLEN};
#endif
		return true;
	}
	proto = t;
	/* up to two tags; skb_vlan_untag() pulls only the outer one */
	while ((t == NFTDP_DP_ETH_P_8021Q || t == NFTDP_DP_ETH_P_8021AD) && n_vlan < 2) {
		if (len < off + NFTDP_DP_VLAN_HLEN) {
			memset(l2, 0, sizeof(*l2));
			return false;
		}
		t = nftdp_rd16(d + off + 2);
		if (n_vlan == 0) {
			vid = (uint16_t)(nftdp_rd16(d + off) & 0x0fff);
			proto = t;
			nh_off = (uint16_t)(off + NFTDP_DP_VLAN_HLEN);
		}
		off += NFTDP_DP_VLAN_HLEN;
		n_vlan++;
	}
	*l2 = (struct nftdp_dp_l2){.proto = proto,
				   .nh_off = nh_off,
				   .ip_proto = t,
				   .ip_off = (uint16_t)off,
				   .vid = vid,
				   .n_vlan = n_vlan};
	return true;
}

/**
 * The IP datagram's declared length (IPv4 total length, IPv6 40 + payload
 * length) clipped to the avail bytes the frame holds from ip: the length
 * the hooks before ip_rcv see (pipeline.c) and steering hashes (steer.c).
 * Nothing is validated: a header too short for its length field gives
 * avail, a declared length below the header's is kept, and an IPv6
 * jumbogram (payload length 0) gives 40.
 */
static inline uint32_t nftdp_dp_ip_len_clip(const uint8_t *ip, uint32_t avail, bool v4)
{
	uint32_t l;

	if (v4)
		l = avail >= 4 ? nftdp_rd16(ip + 2) : avail;
	else
		l = avail >= 6 ? 40 + (uint32_t)nftdp_rd16(ip + 4) : avail;
	return l < avail ? l : avail;
}

/**
 * Whether the 20-byte IPv4 header at d sums right: ip_fast_csum(d, 5) == 0,
 * i.e. its 16-bit one's complement sum is 0xffff. Two adds with carry, then
 * each fold (64 to 32, 32 to 16 bits) the high half of the value plus
 * itself rotated by half: about half the instructions of the sum of five
 * 32-bit words and csum_fold. The same answer for every header.
 */
static inline __attribute__((always_inline)) bool nftdp_dp_ip_csum20_ok(const uint8_t *d)
{
	uint64_t a = nftdp_ld64(d), b = nftdp_ld64(d + 8), s;
	uint32_t c = nftdp_ld32(d + 16), t;

	s = a + b;
	s += s < b;
	s += c;
	s += s < c;
	s += s >> 32 | s << 32;
	t = (uint32_t)(s >> 32);
	t += t >> 16 | t << 16;
	return t >> 16 == 0xffff;
}

/**
 * ip_rcv_core()'s checks on the IPv4 header at d + off (avail bytes to the
 * end of the frame): version, ihl, header checksum, total length. Inline:
 * every packet of every pass takes it. csum_good: the port verified the
 * header checksum (RTE_MBUF_F_RX_IP_CKSUM_GOOD), the sum is not redone;
 * the kernel's sum gives the same answer.
 * @return NFTDP_DP_DROP_MAX when the packet passes, and *ip_len = total
 *   length (the frame is trimmed to it); else the drop reason.
 */
static inline __attribute__((always_inline)) enum nftdp_dp_drop
nftdp_dp_ip_rcv_hw(const uint8_t *d, uint32_t avail, uint32_t *ip_len, bool csum_good)
{
	uint32_t ihl, tot;

	/* the common case first: version 4 without options, which is all
	 * ip_rcv_core's version and ihl checks ask */
	if (avail >= 20 && d[0] == 0x45) {
		if (!csum_good && !nftdp_dp_ip_csum20_ok(d))
			return NFTDP_DP_DROP_IP_CSUM;
		tot = nftdp_rd16(d + 2);
		if (avail < tot || tot < 20)
			return NFTDP_DP_DROP_IP_LEN;
		*ip_len = tot;
		return NFTDP_DP_DROP_MAX;
	}
	/* ip_rcv_core: pskb_may_pull(iphdr), ihl >= 5, version 4 */
	if (avail < 20 || (uint8_t)(d[0] - 0x45) > 0xa)
		return NFTDP_DP_DROP_IP_HDR;
	ihl = (d[0] & 0xfu) * 4;
	if (ihl == 20) {
		if (!csum_good && !nftdp_dp_ip_csum20_ok(d))
			return NFTDP_DP_DROP_IP_CSUM;
	} else {
		if (avail < ihl)
			return NFTDP_DP_DROP_IP_HDR;
		if (!csum_good && nftdp_ip_fast_csum(d, ihl) != 0)
			return NFTDP_DP_DROP_IP_CSUM;
	}
	tot = nftdp_rd16(d + 2);
	/* skb->len < len: truncated; len < ihl: inhdr error */
	if (avail < tot || tot < ihl)
		return NFTDP_DP_DROP_IP_LEN;
	*ip_len = tot; /* pskb_trim_rcsum: padding goes */
	return NFTDP_DP_DROP_MAX;
}

/** nftdp_dp_ip_rcv_hw for a port that says nothing of the checksum. */
static inline enum nftdp_dp_drop nftdp_dp_ip_rcv(const uint8_t *d, uint32_t avail, uint32_t *ip_len)
{
	return nftdp_dp_ip_rcv_hw(d, avail, ip_len, false);
}

/** The same for ipv6_rcv()/ip6_rcv_core(): *ip_len = 40 + payload length. */
enum nftdp_dp_drop nftdp_dp_ip6_rcv(const uint8_t *d, uint32_t avail, uint32_t *ip_len);

/**
 * ip6_rcv_core()'s checks before a hop-by-hop header: version, the
 * multicast and loopback addresses, the payload length; nftdp_dp_ip6_rcv
 * is this, then ipv6_parse_hopopts when d[6] is 0. Inline, the address
 * tests on words: an IPv6 packet without hop-by-hop header takes only
 * this on every pass.
 */
static inline enum nftdp_dp_drop nftdp_dp_ip6_rcv_core(const uint8_t *d, uint32_t avail,
						       uint32_t *ip_len)
{
	/* ::1 in memory order, as the second word of an address */
	const uint64_t one = nftdp_ld64((const uint8_t[8]){[7] = 1});
	uint64_t s0, s1, d0, d1;
	uint32_t plen;

	if (avail < 40 || (d[0] >> 4) != 6)
		return NFTDP_DP_DROP_IP6_HDR;
	/* multicast source; loopback either side from a non-loopback device;
	 * interface-local (scope 1) and scope 0 multicast destinations. Each
	 * needs an address that starts with 0x00 (::1) or 0xff: without
	 * one (the common case), two byte tests say none holds */
	if ((uint8_t)(d[8] + 1) <= 1 || (uint8_t)(d[24] + 1) <= 1) {
		s0 = nftdp_ld64(d + 8);
		s1 = nftdp_ld64(d + 16);
		d0 = nftdp_ld64(d + 24);
		d1 = nftdp_ld64(d + 32);
		if ((d[8] == 0xff) | ((s0 | (s1 ^ one)) == 0) | ((d0 | (d1 ^ one)) == 0) |
		    ((d[24] == 0xff) & ((d[25] & 0xe) == 0)))
			return NFTDP_DP_DROP_IP6_ADDR;
	}
	plen = nftdp_rd16(d + 4);
	/* payload length 0 before a hop-by-hop header: a jumbogram, neither
	 * checked nor trimmed until ipv6_hop_jumbo */
	if (plen == 0 && d[6] == 0) {
		*ip_len = avail;
	} else {
		if (plen + 40 > avail)
			return NFTDP_DP_DROP_IP6_LEN;
		*ip_len = plen + 40;
	}
	return NFTDP_DP_DROP_MAX;
}

/** An ICMP error the kernel sends about a packet it drops on receive. */
struct nftdp_dp_icmp {
	uint8_t type; /**< 0: none */
	uint8_t code;
	uint32_t info; /**< the four bytes after the checksum (a pointer), host order */
};

/**
 * nftdp_dp_ip6_rcv, then ipv6_parse_hopopts() on a hop-by-hop header
 * (ip6_parse_tlv: Pad1/PadN, at most 8 options, router alert, jumbo, and
 * what an unknown option's top two bits ask for). The kernel runs it in
 * ip6_rcv_core, before prerouting, router or not. *icmp says which
 * parameter problem is due with a drop (type 0: none); *ip_len is set
 * whenever the length check passed, for the quote.
 */
enum nftdp_dp_drop nftdp_dp_ip6_rcv_icmp(const uint8_t *d, uint32_t avail, uint32_t *ip_len,
					 struct nftdp_dp_icmp *icmp);

#define NFTDP_DP_OWN_MAX 64

/** The box's own addresses (every --ifaddr), as route lookups see them. */
struct nftdp_dp_own {
	uint16_t n4, n6;
	uint8_t addr4[NFTDP_DP_OWN_MAX][4];
	uint8_t addr6[NFTDP_DP_OWN_MAX][16];
};

/** Add a (4 or 16 byte) address to own; false when full. */
bool nftdp_dp_own_add(struct nftdp_dp_own *own, bool v4, const uint8_t *addr);

/**
 * --router: the checks between prerouting and ip_forward()'s TTL check, in
 * the kernel's order. IPv4: ip_route_input_slow's martians and
 * fib_validate_source (a source that is one of own), ip_rcv_options
 * (ip_options_compile, then source routes with accept_source_route 0),
 * and ip_forward's skb->pkt_type != PACKET_HOST. IPv6: ip6_forward's
 * pkt_type check. l2_host: the frame's Ethernet destination was unicast.
 * @return NFTDP_DP_DROP_MAX to go on, else the reason, with *icmp the
 *   parameter problem due (type 0: none).
 */
enum nftdp_dp_drop nftdp_dp_ip_route_input(const uint8_t *iph, uint32_t ip_len, bool v4,
					   bool l2_host, const struct nftdp_dp_own *own,
					   struct nftdp_dp_icmp *icmp);

/**
 * --router, a forwarded IPv4 packet: what ip_options_compile and
 * ip_forward_options write into options that passed (record route: addr4,
 * the outgoing port's address, in the next free slot; a full timestamp
 * option's overflow count), header checksum updated. Timestamps proper
 * are left as they are.
 */
void nftdp_dp_ip_forward_options(uint8_t *iph, const uint8_t *addr4);

/**
 * The frame of the ICMP error icmp about the packet at frame + ip_off
 * (as nftdp_dp_reject_build, with icmp->info after the checksum).
 * @return its length, 0 when the kernel sends nothing.
 */
uint32_t nftdp_dp_icmp_build(const uint8_t *frame, uint32_t ip_off, uint32_t ip_len,
			     const struct nftdp_dp_icmp *icmp, uint16_t ip_id,
			     const uint8_t *icmp_src, uint8_t *out, uint32_t cap);

/**
 * The kernel's forwarding step before the forward hook (ip_route_input
 * martians, ip_forward's TTL check and ip_decrease_ttl; ip6_forward's).
 * Decrements TTL / hop limit in place (incremental checksum, as
 * ip_decrease_ttl). @return NFTDP_DP_DROP_MAX to forward, else the reason;
 * NFTDP_DP_DROP_TTL means a time-exceeded reply is due.
 */
enum nftdp_dp_drop nftdp_dp_ip_forward(uint8_t *iph, uint32_t ip_len);
enum nftdp_dp_drop nftdp_dp_ip6_forward(uint8_t *ip6h, uint32_t ip_len);

/* ------------------------------------------------------------------ */
/* reject.c: reply frames (bytes only)                                  */

#define NFTDP_DP_REPLY_MAX 1294 /**< 14 + 1280 (IPv6 minimum MTU) */

/**
 * Build the frame nf_reject / icmp_send would send in answer to the IP
 * packet at frame + ip_off (ip_len bytes, already trimmed): a TCP RST
 * (type NFT_REJECT_TCP_RST) or an ICMP/ICMPv6 error with icmp_type/code.
 * MACs swapped and VLAN tags kept, TTL / hop limit 64. icmp_src (4 or 16
 * bytes, the family's) is the source of ICMP errors, as icmp_send picks the
 * address of the interface towards the sender; NULL: the original
 * destination. A TCP RST always comes from the original destination.
 * @return the frame length, 0 when the kernel sends nothing (fragment, RST,
 *   ICMP error, multicast, bad L4 checksum, too short).
 */
uint32_t nftdp_dp_reject_build(const uint8_t *frame, uint32_t ip_off, uint32_t ip_len, bool tcp_rst,
			       uint8_t icmp_type, uint8_t icmp_code, uint16_t ip_id,
			       const uint8_t *icmp_src, uint8_t *out, uint32_t cap);

/**
 * The reply ebtables' arpreply asked for (o->arpreply): arp_send's
 * ARPOP_REPLY frame for an Ethernet device, from arpreply_sha/sip to
 * arpreply_tha/tip, 42 bytes (no padding). @return its length, 0 when
 * none was asked for or cap is too small.
 */
uint32_t nftdp_dp_arpreply_build(const struct nftdp_vm_pkt_out *o, uint8_t *out, uint32_t cap);

/**
 * synproxy's SYN-ACK (synproxy_send_client_synack) answering the TCP SYN
 * at frame + ip_off that a synproxy with info stole (out.synproxy), at
 * now_ms (nftdp_vm_synproxy_answer); Ethernet addresses swapped as for
 * reject. @return the frame length, 0 when nothing is sent.
 */
struct nftdp_dp;
struct nftdp_dp_worker;
struct nftdp_dp_meta;
/* pipeline.c: a frame nftdp built (in w->reply, len bytes) because of orig
 * goes into this burst's replies, out of rx_port, or onward out of its
 * wire partner; no connection attached. NULL when there is no room. */
struct nftdp_vm_pkt *nftdp_dp_send_built(struct nftdp_dp_worker *w, uint16_t rx_port, bool onward,
					 uint32_t len, const struct nftdp_vm_pkt *orig);
/* synproxy.c: synproxy's server side (nf_synproxy_core.c). client_ack:
 * the client's cookie ACK p (stolen) becomes the SYN to the server, which
 * makes the connection's entry; the step: ipv4/ipv6_synproxy_hook at
 * postrouting and input, before confirm */
void nftdp_dp_synproxy_client_ack(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
				  const struct nftdp_dp_meta *mt, uint16_t rx_port);
int nftdp_dp_synproxy_init(struct nftdp_dp *dp);
uint32_t nftdp_dp_synproxy_build(const uint8_t *frame, uint32_t ip_off, uint32_t ip_len,
				 const struct nftdp_vm_synproxy_info *info, uint64_t now_ms,
				 uint8_t *out, uint32_t cap);

/* ------------------------------------------------------------------ */
/* ct_conf.c: conntrack tunables by their kernel sysctl names           */

struct nftdp_ct_config;
struct nftdp_ct_timeouts;

/**
 * Apply one --ct-sysctl NAME=VALUE (the kernel's net.netfilter name, with or
 * without that prefix: nf_conntrack_tcp_timeout_established=3600,
 * nf_conntrack_tcp_be_liberal=1, ...) to cfg and tmo.
 * @return 0, -EINVAL (not NAME=number), -ENOENT (no such name), -ERANGE.
 */
int nftdp_dp_ct_sysctl(struct nftdp_ct_config *cfg, struct nftdp_ct_timeouts *tmo, const char *arg);

/* ------------------------------------------------------------------ */
/* frag_cut.c: how defrag.c cuts a datagram again (bytes only)          */

/**
 * The pieces of a datagram of payload bytes (after the IP header), each at
 * most room bytes: the n_geo payload lengths it was received in (geo) when
 * every one fits and all but the last are multiples of 8 (*fast: the
 * kernel's frag_list fast path), else room rounded down to a multiple of 8
 * (the slow path). Writes len[0..n); returns n, 0 when more than cap.
 */
unsigned int nftdp_dp_frag_plan(const uint16_t *geo, unsigned int n_geo, uint32_t payload,
				uint32_t room, uint16_t *len, unsigned int cap, bool *fast);

/** ip_options_fragment on the IPv4 header iph of hl bytes, in place. */
void nftdp_dp_ip_options_fragment(uint8_t *iph, uint32_t hl);

/* ------------------------------------------------------------------ */
/* host.c: the exception path's rate limit (bytes only)                */

/**
 * A token bucket counted in clock cycles (GCRA): each packet costs cost
 * cycles of credit, credit grows with time up to cap. No division per
 * packet. cost 0: no limit.
 */
struct nftdp_dp_tb {
	uint64_t cost;	 /**< cycles per packet: hz / rate */
	uint64_t cap;	 /**< the most credit: cost * burst */
	uint64_t credit; /**< cycles of credit now */
	uint64_t last;	 /**< the clock at the last take */
};

/** rate packets/s (0: unlimited), up to burst at once, with a clock of hz. */
static inline void nftdp_dp_tb_init(struct nftdp_dp_tb *tb, uint64_t rate, uint64_t burst,
				    uint64_t hz, uint64_t now)
{
	tb->cost = rate ? (hz / rate ? hz / rate : 1) : 0;
	tb->cap = tb->cost * (burst ? burst : 1);
	tb->credit = tb->cap;
	tb->last = now;
}

/** Whether one more packet may pass at time now (now never goes back). */
static inline bool nftdp_dp_tb_take(struct nftdp_dp_tb *tb, uint64_t now)
{
	if (tb->cost == 0)
		return true;
	if (now > tb->last) {
		uint64_t add = now - tb->last;

		tb->credit = add >= tb->cap - tb->credit ? tb->cap : tb->credit + add;
		tb->last = now;
	}
	if (tb->credit < tb->cost)
		return false;
	tb->credit -= tb->cost;
	return true;
}

#ifndef NFTDP_DP_BYTES_ONLY
/* ------------------------------------------------------------------ */
/* Everything below needs DPDK.                                         */

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#define NFTDP_DP_MAX_WORKERS 64
#define NFTDP_DP_MAX_RXQ 64 /**< rx queues one worker polls */
#define NFTDP_DP_TXBUF 256  /**< staged tx per port per worker (flushed when full) */
#define NFTDP_DP_NO_PORT UINT16_MAX

/** Pipeline stages, for per-hook counters. */
enum nftdp_dp_stage {
	NFTDP_DP_ST_OUTPUT, /**< replies nftdp sends (reject, time exceeded) */
	NFTDP_DP_ST_NETDEV_INGRESS,
	NFTDP_DP_ST_INET_INGRESS,
	NFTDP_DP_ST_PREROUTING,
	NFTDP_DP_ST_FORWARD,
	NFTDP_DP_ST_POSTROUTING,
	NFTDP_DP_ST_NETDEV_EGRESS,
	NFTDP_DP_ST_INPUT,	   /**< host.c: packets for the box, before the host gets them */
	NFTDP_DP_ST_BR_PREROUTING, /**< bridge.c: the bridge family's hooks */
	NFTDP_DP_ST_BR_FORWARD,
	NFTDP_DP_ST_BR_POSTROUTING,
	NFTDP_DP_ST_MAX
};
extern const char *const nftdp_dp_stage_names[NFTDP_DP_ST_MAX];

/** Verdicts counted per stage. */
enum nftdp_dp_vclass {
	NFTDP_DP_V_ACCEPT,
	NFTDP_DP_V_DROP,
	NFTDP_DP_V_REJECT, /**< drop with a reply */
	NFTDP_DP_V_STOLEN, /**< fwd */
	NFTDP_DP_V_QUEUE,
	NFTDP_DP_V_MAX
};
extern const char *const nftdp_dp_vclass_names[NFTDP_DP_V_MAX];

#define NFTDP_DP_PASSES 5 /**< nftdp_dp_stats.pass: full, empty, cached, tracked, established */

struct nftdp_dp_stats {
	uint64_t rx[RTE_MAX_ETHPORTS];
	uint64_t tx[RTE_MAX_ETHPORTS];
	uint64_t tx_drop[RTE_MAX_ETHPORTS];
	uint64_t hook[NFTDP_DP_ST_MAX][NFTDP_DP_V_MAX];
	uint64_t drop[NFTDP_DP_DROP_MAX];
	uint64_t replies;     /**< rejects and time-exceeded built */
	uint64_t replies_out; /**< of those, sent (passed output, postrouting, egress) */
	uint64_t dups;
	uint64_t bursts;
	/* pipeline.c: received bursts by the pass they took: full pipeline,
	 * empty, cached, tracked; and of the tracked, those that took the
	 * established pass first (docs/dataplane.md) */
	uint64_t pass[NFTDP_DP_PASSES];
	/* steer.c: packets passed to their owning worker, taken from other
	 * workers, dropped for a full ring, polls that left rx for later */
	uint64_t steered, steered_in, steer_full, steer_wait;
	/* host.c: the exception path: frames given to the host interfaces,
	 * frames the host sent out of a port (after output and postrouting) */
	uint64_t host_in, host_out;
	/* unres.c: packets queued for a next hop being resolved, sent once
	 * it was, and resolutions asked of the host */
	uint64_t neigh_queued, neigh_sent, neigh_asked;
} __rte_cache_aligned;

struct nftdp_dp_rxq {
	uint16_t port;
	uint16_t queue;
};

struct nftdp_dp_txbuf {
	uint16_t n;
	struct rte_mbuf *m[NFTDP_DP_TXBUF];
};

/** What the pipeline keeps per packet besides the VM's view. */
struct nftdp_dp_meta {
	uint16_t ip_off;   /**< IP header after every tag */
	uint16_t l2_nh;	   /**< network header as netdev hooks see it */
	uint16_t l2_proto; /**< skb->protocol at netdev hooks, host order */
	uint16_t ip_proto; /**< ethertype after every tag, host order */
	uint32_t ip_len;   /**< IP datagram length (clipped to the frame until ip_rcv) */
	uint16_t vid;
	uint16_t origin; /**< a reply: the view index of the packet it answers */
	/** defrag.c: a reassembled datagram's largest fragment (the kernel's
	 * IPCB/IP6CB frag_max_size), 0 for any other packet */
	uint16_t frag_max;
	/** a reply sent on, out of the rx port's --wire partner: synproxy's
	 * SYN and ACK to the server, its window update to the client */
	uint8_t onward;
	/** a copy `dup to ADDR` made (nf_dup_ipv4/6): routed already, dups
	 * no further (nf_skb_duplicated), leaves before its original */
	uint8_t dup;
	uint32_t frag_id; /**< defrag.c: the reassembled datagram's IPv6 fragment id */
};

/** --route (nexthop.c): the route a view leaves by; apart from the meta so
 * that wire mode's per-packet state stays as small as it was */
struct nftdp_dp_nh {
	const void *rt;	    /**< a struct nftdp_route_nh of the table the burst reads */
	uint16_t tx_port;   /**< the port of the path's device */
	uint8_t path;	    /**< the path taken (ECMP) */
	bool dup;	    /**< a dup copy: the neighbour is dup_nh (rt may be NULL) */
	uint8_t dup_nh[16]; /**< a dup copy's next hop: the route's gateway, else ADDR */
	/** a fast pass's forwarded packet (pipeline.c fast_route): the next
	 * hop's lladdr, found when routed; the pass's own bytes to undo */
	const uint8_t *lladdr;
	uint32_t undo;
};

/** A frame the burst sends, keyed by the received packet it comes from. */
struct nftdp_dp_emit {
	uint16_t key;
	uint16_t port;
	bool early; /**< before the rest of its key: a dup copy (sent at its hook) */
	struct rte_mbuf *m;
};
#define NFTDP_DP_EMIT_MAX (NFTDP_VM_BURST_MAX * (2 + NFTDP_VM_MAX_DUP))

/* views 0..BURST_MAX-1: received packets; from BURST_MAX on: replies;
 * from NFTDP_DP_FRAG_VIEW0 on: the fragments of one refragmented datagram */
#define NFTDP_DP_FRAG_VIEW0 (2 * NFTDP_VM_BURST_MAX)
#define NFTDP_DP_FRAG_VIEWS NFTDP_VM_BURST_MAX
#define NFTDP_DP_VIEWS (NFTDP_DP_FRAG_VIEW0 + NFTDP_DP_FRAG_VIEWS)

/** built-in steps a hook at most (nftdp_dp_step_add) */
#define NFTDP_DP_STEPS_MAX 3

/**
 * One entry of a hook's walk (pipeline.c, walk_plan): a run of base chains,
 * those at indexes [first[f], first[f] + n[f]) of the VM's hook list of
 * IPv4 (f = 0) and IPv6 (f = 1), or one built-in step, dp->builtin[hook][step].
 */
struct nftdp_dp_walk_entry {
	int8_t step; /**< -1: a run of chains */
	uint32_t first[2], n[2];
};

/* the most entries of a walk: the steps, a run of chains around each, and
 * prerouting's run cut at conntrack's priority */
#define NFTDP_DP_WALK_MAX (2 * NFTDP_DP_STEPS_MAX + 2)

/**
 * What a hook runs for one generation, in the kernel's order
 * (nf_hook_entries): the active built-in steps among the runs of base
 * chains, by priority, a step before the chains of its own priority.
 * Worked out once per generation for each worker (pipeline.c).
 */
struct nftdp_dp_walk {
	uint8_t n;
	/** prerouting: the first entry at or above NF_IP_PRI_CONNTRACK, where
	 * BURST_PRE_CT's second part starts (n elsewhere) */
	uint8_t ct_at;
	bool steps; /**< an entry is a step */
	struct nftdp_dp_walk_entry e[NFTDP_DP_WALK_MAX];
};

struct nftdp_dp;

/** A worker's own state; one writer. */
struct nftdp_ct_lookup;

struct nftdp_dp_worker {
	unsigned int id;
	unsigned int lcore;
	struct nftdp_dp *dp;
	struct nftdp_vm_ctx ctx;
	struct rte_mempool *pool; /**< replies and dups, on this worker's socket */
	unsigned int n_rxq;
	struct nftdp_dp_rxq rxq[NFTDP_DP_MAX_RXQ];
	/** tx queue of each port this worker owns, NFTDP_DP_NO_PORT: hand off */
	uint16_t txq[RTE_MAX_ETHPORTS];
	/** ring to the owner of a queue-starved port (single producer: us) */
	struct rte_ring *handoff[RTE_MAX_ETHPORTS];
	/** rings this worker drains for ports it transmits for (single consumer) */
	unsigned int n_drain;
	struct rte_ring *drain[NFTDP_DP_MAX_WORKERS];
	uint16_t drain_port[NFTDP_DP_MAX_WORKERS];
	struct nftdp_dp_txbuf tx[RTE_MAX_ETHPORTS];
	uint16_t ip_id;
	/** steer.c: SP/SC rings to each other worker (we produce) and from
	 * each (we consume); NULL for ourselves and with one worker */
	struct rte_ring *steer_out[NFTDP_DP_MAX_WORKERS];
	struct rte_ring *steer_in[NFTDP_DP_MAX_WORKERS];
	struct nftdp_ct_shard *ct;	/**< this worker's conntrack shard, or NULL */
	struct nftdp_dp_defrag *defrag; /**< defrag.c: reassembly table, jumbo pool */
	unsigned int ct_gc_tick;
	const struct nftdp_vm_gen *gen; /**< the generation of the burst in flight */
	/* pipeline.c: the pass of the last generation seen (its id + 1, 0: none) */
	uint64_t plan_gen;
	uint8_t plan_kind;
	bool plan_router;      /* dp->router when the plan was worked out */
	bool plan_headers;     /* PLAN_CACHED probes header views (burst_cached) */
	bool plan_established; /* PLAN_TRACKED bursts take burst_established */
	uint8_t plan_nat;      /* burst_established applies NAT: bit 0 IPv4, bit 1 IPv6 */
	bool plan_bridge;      /* bridge.c: the generation has bridge chains wire mode runs */
	/* pipeline.c: bit s of step_on[hook]: dp->builtin[hook][s] acts */
	uint8_t step_on[NFTDP_VM_GEN_HOOK_MAX];
	/* pipeline.c: each hook's walk for the generation walk_gen (its id + 1,
	 * UINT64_MAX: none; 0: not worked out yet) */
	uint64_t walk_gen;
	struct nftdp_dp_walk walk[NFTDP_VM_GEN_HOOK_MAX];
	/* ct_step.c: what the probe of view i found out (PLAN_TRACKED), for
	 * the conntrack step while ct_lk_on; NFTDP_VM_BURST_MAX of them
	 * with conntrack, else NULL */
	bool ct_lk_on;
	struct nftdp_ct_lookup *ct_lk;
	/* clock: rte_rdtsc mapped onto CLOCK_MONOTONIC / CLOCK_REALTIME */
	uint64_t tsc0, mono0_ns, real0_ns;
	uint64_t ns_mult; /* ns per TSC cycle, 32.32 fixed point: no division per burst */
	uint64_t ms_tsc;  /* TSC cycles in a millisecond: --idle-sleep's wait */
	volatile uint64_t last_busy_tsc; /**< last non-empty rx, read by main */
	volatile uint64_t last_poll_tsc; /**< end of the last poll, busy or not */
	volatile bool done;
	struct nftdp_dp_stats st;
	/* per-burst scratch */
	struct nftdp_vm_pkt view[NFTDP_DP_VIEWS];
	struct rte_mbuf *mb[NFTDP_DP_VIEWS];
	struct nftdp_dp_meta meta[NFTDP_DP_VIEWS];
	struct nftdp_dp_nh nh[NFTDP_DP_VIEWS]; /**< --route only */
	/* nexthop.c: the burst's last neighbour lookup of a fast pass per
	 * family, [0] IPv6, [1] IPv4 (nftdp_dp_nexthop_lladdr); t NULL: none.
	 * Reset per burst: a table is freed only after the worker left its
	 * burst */
	struct {
		const void *t;
		const uint8_t *lladdr;
		uint16_t port;
		uint8_t addr[16];
	} nb_memo[2];
	/* nexthop.c: the burst's last route lookup per family by the
	 * destination alone (the `ip rule`s a new netns has), [0] IPv6,
	 * [1] IPv4 (nftdp_dp_nexthop_route); t NULL: none. IPv6 keys the
	 * input device too (link-local routes are per device). Reset per
	 * burst, as nb_memo: a table changes only after a grace period */
	struct {
		const void *t;
		const void *nh; /* the answer: a route, or NULL (none) */
		uint32_t iif;
		uint8_t daddr[16];
	} rt_memo[2];
	unsigned int n_reply; /**< replies of this burst, at view[BURST_MAX..] */
	/* what the burst sends, put in the kernel's order (by received packet,
	 * then as it happened) before it is staged for tx */
	unsigned int n_emit;
	/** datagrams defrag.c reassembled this burst: 0 skips the refragment pass */
	unsigned int n_reasm;
	bool emit_unordered; /* an emit came before an earlier packet's */
	struct nftdp_dp_emit emit[NFTDP_DP_EMIT_MAX];
	struct nftdp_dp_emit emit_sorted[NFTDP_DP_EMIT_MAX];
	uint8_t reply[NFTDP_DP_REPLY_MAX];
	struct nftdp_dp_tb host_tb; /**< host.c: the exception path's rate */
	/** unres.c: next hops being resolved (--route --host-ports), NULL
	 * otherwise; n_unres of them in use */
	struct nftdp_dp_unres *unres;
	unsigned int n_unres;
} __rte_cache_aligned;

struct nftdp_dp_port {
	uint16_t port_id;
	bool used;
	uint32_t ifindex; /**< port id + 1 */
	char name[16];
	struct rte_ether_addr mac;
	uint16_t n_rxq, n_txq;
	bool rss;
	uint16_t reta_size; /**< RETA programmed by steer.c, 0: none */
	int socket;
	struct rte_mempool *pool;
	/* --ifaddr: the source of ICMP errors sent out of this port, and what
	 * --router does not forward (own addresses, the subnet broadcast) */
	bool has_addr4, has_addr6;
	uint8_t addr4[4], addr6[16];
	uint8_t plen4;
	bool rx_file;	 /**< net_pcap reading a capture (rx_pcap=): offline replay */
	bool rx_stamped; /**< its packets carry their capture time (rx timestamp offload) */
	/** a pcapng capture of several interfaces: the port each of its
	 * packets arrives on, in file order (port.c), NULL otherwise */
	uint16_t *replay_port;
	uint32_t replay_n;
	/* host.c, --host-ports: is_host, the port is a host interface of
	 * host_peer's (no --ifname of its own, never an nft device); has_host,
	 * host_peer is its host interface */
	bool is_host, has_host;
	uint16_t host_peer;
	/** has_host: the host interface's primary IPv4 address (network
	 * order, 0: none) for redirect; the control thread stores it whole
	 * (one aligned word), workers load it */
	uint32_t host_addr4;
};

/**
 * A built-in step between the base chains of one ip/ip6/inet hook: fn runs
 * over the packets that the chains with priority < prio accepted, writing a
 * verdict for each (NF_ACCEPT moves on to the chains from prio up). The
 * place for conntrack (issue 5): nf_conntrack_in at NF_IP_PRI_CONNTRACK
 * (-200) in prerouting, confirm at INT32_MAX in postrouting. Packet-path.
 * At most NFTDP_DP_STEPS_MAX of them a hook.
 */

/* the step's function: pkts are IPv4 and IPv6 packets in arrival order,
 * each of its own family (pkt->nfproto) */
typedef void nftdp_dp_step_fn(struct nftdp_dp_worker *w, uint8_t hook, struct nftdp_vm_pkt **pkts,
			      unsigned int n, unsigned int *verdicts);

struct nftdp_dp_builtin {
	int32_t prio;
	nftdp_dp_step_fn *fn;
	/** whether fn has work with this generation; NULL: always */
	bool (*active)(const struct nftdp_vm_gen *gen);
};

/** --burst's ceiling: an rx burst is cut into pipeline bursts of
 * NFTDP_VM_BURST_MAX (views, steering) */
#define NFTDP_DP_RX_BURST_MAX 256

struct nftdp_dp_fib;	 /* fib.c */
struct nftdp_dp_nexthop; /* nexthop.c */

/** The whole dataplane: set up by main, read-only once workers run. */
struct nftdp_dp {
	unsigned int burst;
	bool ifaddrs; /**< some port has an --ifaddr address (pipeline.c local_dest) */
	struct nftdp_ct_expect_table *ct_exp; /**< expectations, shared by the shards */
	unsigned int flow_cache;	      /**< --flow-cache: entries per worker, 0: off */
	bool flow_verify;		      /**< --flow-cache-verify */
	unsigned int idle_sleep_us;	      /**< --idle-sleep: 0, poll without pause */
	bool router;
	bool route; /**< --route: forward by the mirrored routes and neighbours (nexthop.c) */
	bool host;  /**< --host-ports: the exception path (host.c) */
	uint64_t host_rate, host_burst;	 /**< its rate limit per worker, packets/s */
	uint16_t mtu;			 /**< 0: leave the port's */
	unsigned int n_mbufs;		 /**< --mbufs: mbufs per pool, 0: computed */
	uint16_t mbuf_size;		 /**< --mbuf-size: data room per mbuf, 0: computed */
	uint16_t wire[RTE_MAX_ETHPORTS]; /**< tx port of each rx port */
	uint16_t n_ports;
	struct nftdp_dp_port port[RTE_MAX_ETHPORTS];
	struct nftdp_dp_own own; /**< every port's --ifaddr */
	/** the kernel's routes for fib (fib.c): the slot workers read */
	struct nftdp_dp_fib *fib;
	/** --route: the neighbour table workers read (nexthop.c) */
	struct nftdp_dp_nexthop *nexthop;
	/** unres.c: next hops workers want resolved, to the control thread
	 * (MP/SC); NULL unless --route with --host-ports */
	struct rte_ring *solicit;
	/** offline replay over several captures, one worker: the worker reads
	 * them merged by capture time (worker.c; port.c decides) */
	bool rx_merge;
	int ts_off;	  /**< the mbuf rx timestamp dynfield */
	uint64_t ts_flag; /**< and its ol_flags bit */
	unsigned int n_workers;
	bool main_is_worker; /**< no worker lcores: the main lcore runs worker 0 */
	struct nftdp_dp_worker *w;
	struct nftdp_vm_gen_domain *dom;
	struct nftdp_vm_state *state;
	volatile bool stop;
	uint64_t start_tsc;
	/** built-in steps by NF_INET_* hook, in priority order (conntrack at
	 * -200 and NAT at -100 in prerouting, NAT at 100 in postrouting) */
	struct nftdp_dp_builtin builtin[NFTDP_VM_GEN_HOOK_MAX][NFTDP_DP_STEPS_MAX];
	unsigned int n_builtin[NFTDP_VM_GEN_HOOK_MAX];
};

/* fib.c: the route table the fib expression reads, mirrored from the
 * kernel at the first commit that uses fib (mirror_now: at start, for
 * --mirror-routes) and rebuilt when rtnetlink says something changed */
int nftdp_dp_fib_init(struct nftdp_dp *dp, bool mirror_now);
/* nftdp_ctl_config.fib_prepare, arg the dp: a table before fib runs */
int nftdp_dp_fib_prepare(void *arg, bool first, char *msg, size_t msglen);
/* control loop: read notifications, rebuild and swap, free old tables */
void nftdp_dp_fib_tick(struct nftdp_dp *dp);
/* control loop: wait up to max_ms for ctl_fd or a route notification;
 * returns the ms left for nftdp_ctl_poll (0 once it waited here) */
int nftdp_dp_fib_wait(struct nftdp_dp *dp, int ctl_fd, int max_ms);
void nftdp_dp_fib_fini(struct nftdp_dp *dp);
/* the route table workers read now (acquire), NULL before the first;
 * valid until the caller's next quiescent state. Packet-path. */
struct nftdp_route_table;
const struct nftdp_route_table *nftdp_dp_fib_table(const struct nftdp_dp *dp);
/* neighbour notifications on the fib's watch too. 0 or a negative errno */
int nftdp_dp_fib_watch_neigh(struct nftdp_dp *dp);

/* nexthop.c: --route, forwarding by route (docs/dataplane.md "Router
 * mode"): the route lookup after prerouting, ECMP, the neighbour mirror
 * and the MAC rewrite before netdev egress */
/* after nftdp_dp_fib_init(dp, true): the first neighbour dump, and the
 * watch's neighbour group. 0 or a negative errno */
int nftdp_dp_nexthop_init(struct nftdp_dp *dp);
/* control loop (from nftdp_dp_fib_tick): neighbours changed (changed),
 * rebuild; free tables past their grace period */
void nftdp_dp_nexthop_tick(struct nftdp_dp *dp, bool changed);
/* whether the control loop should come back within a millisecond */
bool nftdp_dp_nexthop_pending(const struct nftdp_dp *dp);
void nftdp_dp_nexthop_fini(struct nftdp_dp *dp);
struct nftdp_route_nh; /* route/ */
/*
 * The path of route nh (v4: an IPv4 route) a packet takes: fib_select_path
 * / fib6_select_path with the packet's multipath hash, the kernel's
 * (nftdp_route_mp_hash_skb, every policy) while
 * net.ipv4.fib_multipath_hash_seed is set, else nftdp's own flow hash over
 * the addresses (and ports); the first live path when p is no IP packet of
 * that family or there is no neighbour mirror. -1: the route has no
 * device. Packet-path.
 */
int nftdp_dp_nexthop_path(const struct nftdp_dp *dp, const struct nftdp_vm_pkt *p, bool v4,
			  const struct nftdp_route_nh *nh);
/*
 * The same for an output route to daddr with nothing else in its flow
 * (nf_route's, get_tcpmss's route back to the source):
 * nftdp_route_mp_hash_flow under the seed, else nftdp's hash of daddr.
 */
int nftdp_dp_nexthop_path_out(const struct nftdp_dp *dp, bool v4, const uint8_t *daddr,
			      const struct nftdp_route_nh *nh);
/*
 * ip_route_input / ip6_route_input for a packet about to be forwarded:
 * the route of its destination, the path (ECMP by the flow hash) and its
 * port into mt. NFTDP_DP_DROP_MAX: forward; else why not, with *icmp the
 * error ip_error / ip6_pkt_discard sends (type 0: none). Packet-path.
 */
enum nftdp_dp_drop nftdp_dp_nexthop_route(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
					  struct nftdp_dp_nh *nh, struct nftdp_dp_icmp *icmp);
/*
 * The next hop's lladdr for a packet (network header iph) leaving by
 * out's route, as nftdp_dp_nexthop_output would find it: NULL where that
 * would queue or drop it (unresolved, or packets queued on the neighbour
 * still to go). Looks only. Packet-path.
 */
const uint8_t *nftdp_dp_nexthop_lladdr(struct nftdp_dp_worker *w, const struct nftdp_dp_nh *out,
				       const uint8_t *iph, bool v4);
/*
 * ip_finish_output2's neighbour step for a packet leaving by mt's route:
 * source MAC = the port's, destination = the next hop's lladdr. false:
 * no usable neighbour; the packet went to nftdp_dp_nexthop_unresolved().
 * Packet-path.
 */
struct rte_mbuf;
bool nftdp_dp_nexthop_output(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
			     const struct nftdp_dp_meta *mt, const struct nftdp_dp_nh *nh,
			     struct rte_mbuf *mb);
/*
 * nf_dup_ipv4_route / nf_dup_ipv6_route: the output route of a copy to the
 * gateway gw (4 or 16 bytes) through device oif (nftdp ifindex, 0: any),
 * FLOWI_FLAG_KNOWN_NH: the next hop is the route's gateway, else gw.
 * dscp / flowlabel: the packet's. false: no route (the kernel frees the
 * copy). Packet-path.
 */
struct nftdp_vm_gen;
/* host.c, unres.c: the dup copies among the replies from index `from` on
 * (made by output or postrouting chains there) through output,
 * postrouting and netdev egress by their routes; others are left */
void nftdp_dp_send_copies(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			  unsigned int from, uint16_t rx_port);
bool nftdp_dp_nexthop_dup_route(const struct nftdp_dp_worker *w, bool v4, const uint8_t *gw,
				uint32_t oif, const uint8_t *iph, struct nftdp_dp_nh *nh);
/*
 * nft_fwd_neigh_eval's neigh_xmit for `fwd ip|ip6 to ADDR device DEV` at
 * netdev ingress/egress: TTL / hop limit one less (ip_decrease_ttl), a
 * plain Ethernet header from the port's MAC to ADDR's lladdr by the
 * neighbour mirror. false: the packet was consumed (no usable neighbour:
 * queued with --route --host-ports, else dropped as neigh_unresolved; or
 * no IP header: dropped). Packet-path.
 */
bool nftdp_dp_nexthop_fwd(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
			  const struct nftdp_dp_meta *mt, struct rte_mbuf *mb, uint16_t rx_port);
/* the replies of a burst (rejects, ICMP errors): each by the route to its
 * destination, as icmp_send's route lookup: port and oif set; one with no
 * route is counted (no_route) and freed. Returns those kept, in order. */
unsigned int nftdp_dp_nexthop_replies(struct nftdp_dp_worker *w, struct nftdp_vm_pkt **act,
				      unsigned int n);
/* a packet whose next hop has no neighbour entry: counted and freed (the
 * host path will take it for resolution: issue 15 part 1) */
void nftdp_dp_nexthop_unresolved(struct nftdp_dp_worker *w, struct rte_mbuf *mb);
/* the neighbour table workers read now (packet-path, any thread) */
const struct nftdp_route_neigh *nftdp_dp_nexthop_table(const struct nftdp_dp *dp);

/* service.c: nftdp.service (docs/appliance.md). sd_notify(state), a no-op
 * unless $NOTIFY_SOCKET is set; 0 or -errno */
int nftdp_dp_sd_notify(const char *state);
/* a temporary file (its name in path) holding `flush ruleset` and an
 * include of ruleset, for one nft -f transaction; 0 or -errno */
int nftdp_dp_reload_file(const char *ruleset, char *path, size_t size);

/* unres.c: --route with --host-ports, next hops waiting for the host to
 * resolve them (docs/dataplane.md "Unresolved next hops") */
struct nftdp_dp_unres;
/* the per-worker queues and the ring to the control thread; 0 or -ENOMEM */
int nftdp_dp_unres_init(struct nftdp_dp *dp);
/* after the workers stopped: what is still queued is freed */
void nftdp_dp_unres_fini(struct nftdp_dp *dp);
/* mb (routed out of tx_port, received on rx_port) has no neighbour entry
 * for nexthop (4 or 16 bytes by family): queue it on that next hop, ask
 * the host to resolve it; the packet is consumed. Packet-path. */
void nftdp_dp_unres_queue(struct nftdp_dp_worker *w, struct rte_mbuf *mb, uint16_t tx_port,
			  uint16_t rx_port, int family, const uint8_t *nexthop);
/* whether packets wait on that next hop still (its entry may have come
 * since the last poll: a new packet then queues behind them, as
 * neigh_update sends the queue before anything new). Packet-path. */
bool nftdp_dp_unres_waiting(const struct nftdp_dp_worker *w, uint16_t tx_port, int family,
			    const uint8_t *nexthop);
/* worker poll, while w->n_unres: send what waited on a next hop the
 * neighbour mirror now has, drop what waited too long */
void nftdp_dp_unres_flush(struct nftdp_dp_worker *w);
/* control loop: pass the workers' requests to the kernel; whether any
 * request is still waiting */
void nftdp_dp_unres_solicit(struct nftdp_dp *dp);
bool nftdp_dp_unres_pending(const struct nftdp_dp *dp);

/* ct_step.c: conntrack in the pipeline */
struct nftdp_ct_shard;
/* shards of ct_max entries in all; tmpl: tunables, timeouts (copied) */
int nftdp_dp_ct_init(struct nftdp_dp *dp, uint32_t ct_max, const struct nftdp_ct_config *tmpl);
void nftdp_dp_ct_fini(struct nftdp_dp *dp);
/* confirm (or, for verdict NF_DROP, forget) the entries of pkts */
/* a reply nftdp made for orig joins orig's connection (nf_ct_attach) */
void nftdp_dp_ct_attach(struct nftdp_vm_pkt *reply, const struct nftdp_vm_pkt *orig);
/* confirm accepted pkts at the end of postrouting; those confirm drops
 * are freed and counted; returns the rest, compacted in order */
unsigned int nftdp_dp_ct_confirm_accepted(struct nftdp_dp_worker *w, struct nftdp_vm_pkt **pkts,
					  unsigned int n);
void nftdp_dp_ct_confirm(struct nftdp_dp_worker *w, struct nftdp_vm_pkt **pkts, unsigned int n,
			 unsigned int verdict);
void nftdp_dp_ct_gc(struct nftdp_dp_worker *w);
/* the confirmed connection conntrack would find for pkt, changing nothing
 * (nftdp_ct_probe), NULL for none; pkt is view i of the burst (its lookup
 * kept in w->ct_lk[i]), or no view (i = NFTDP_VM_BURST_MAX) */
const void *nftdp_dp_ct_probe(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *pkt,
			      unsigned int i);
/* conntrack's probe of views pkts[i] with ready[i] (prerouting views
 * of the burst, w->meta[] filled) begun over the whole burst, their table
 * lines prefetched (nftdp_ct_prefetch_burst); needs nftdp_dp_ct_lookups on */
void nftdp_dp_ct_prefetch(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *const *pkts,
			  const bool *ready, unsigned int n);
/* on: the probes of views 0..n-1 are kept for the conntrack step from now
 * (none yet); off: no longer */
void nftdp_dp_ct_lookups(struct nftdp_dp_worker *w, unsigned int n, bool on);
/* while lookups are kept: whether packets of new connections may share a
 * segment (no NAT, no chain whose state shows packet order, room in the
 * table for a burst of them without early drop) */
bool nftdp_dp_ct_group_new(const struct nftdp_dp_worker *w);
/* while lookups are kept: no chain whose state shows packet order, room
 * in the table for a burst of new connections without early drop (what
 * the established pass needs: it decides no new connection) */
bool nftdp_dp_ct_room(const struct nftdp_dp_worker *w);
/* whether NAT is registered for nfproto in gen (a nat-type chain of the
 * family: nf_nat_register_fn) with conntrack on, so that its steps
 * translate that family's packets */
bool nftdp_dp_nat_on(const struct nftdp_vm_gen *gen, uint8_t nfproto);
/* whether fn is the NAT step (nf_nat_inet_fn at prerouting, postrouting,
 * output and input) */
bool nftdp_dp_step_is_nat(nftdp_dp_step_fn *fn);
/* the established pass, for a packet of a family NAT is on for after
 * nftdp_dp_ct_in_one: false when NAT would do more than apply its
 * connection's bindings (nftdp_ct_nat_bound; the pipeline's way, p left
 * as it was); else its destination rewritten as NAT's prerouting step
 * would (p->nat_done), *snat whether its postrouting step rewrites the
 * source */
bool nftdp_dp_nat_dst(struct nftdp_vm_pkt *p, bool *snat);
/* that source rewrite (p->nat_done); false: NAT's drop */
bool nftdp_dp_nat_src(struct nftdp_vm_pkt *p);
/* the established pass (pipeline.c): nf_conntrack_in for view p = i of the
 * burst right after its probe found an entry (p unchanged since: its
 * lookup goes straight to that entry), marked as run (ct_seen); *plain: what it
 * gave reaches no other connection (nftdp_ct_pkt_plain); *carry: then the
 * carried result of p's connection and direction (NULL without an entry) */
unsigned int nftdp_dp_ct_in_one(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, unsigned int i,
				bool *plain, struct nftdp_vm_flow_carry **carry);
/* a bit (of 64) for the connection of view i's kept lookup, the same for
 * both directions; 0 when there is none */
uint64_t nftdp_dp_ct_conn_bit(const struct nftdp_dp_worker *w, unsigned int i);

/* port.c */
/** mbuf data room for a frame of mtu bytes: headroom, Ethernet, two VLAN tags */
#define NFTDP_DP_MTU_ROOM(mtu) ((unsigned int)(mtu) + RTE_ETHER_HDR_LEN + 8 + RTE_PKTMBUF_HEADROOM)
int nftdp_dp_ports_init(struct nftdp_dp *dp);
/** Whether the workers read several captures merged by capture time
 * (dp->rx_merge), said on stdout either way; called by ports_init. */
void nftdp_dp_replay_order(struct nftdp_dp *dp);
void nftdp_dp_ports_close(struct nftdp_dp *dp);
int nftdp_dp_queues_assign(struct nftdp_dp *dp);

/* worker.c */
int nftdp_dp_workers_init(struct nftdp_dp *dp, const unsigned int *lcores);
int nftdp_dp_worker_main(void *arg);
void nftdp_dp_worker_begin(struct nftdp_dp_worker *w);
/** One pass over the worker's rx queues; returns packets received. */
unsigned int nftdp_dp_worker_poll(struct nftdp_dp_worker *w);
void nftdp_dp_worker_end(struct nftdp_dp_worker *w);

/*
 * Whether w's own polls found every rx queue empty for at least cycles
 * (--exit-on-idle). Measured between the worker's stamps, never against
 * the reader's clock: a worker the host has not scheduled since it began
 * (or since its last busy poll) has seen nothing yet, and is not idle.
 * The worker stamps last_busy_tsc before last_poll_tsc; reading them in
 * the other order never pairs a new poll stamp with an old busy one.
 */
static inline bool nftdp_dp_worker_idle_for(const struct nftdp_dp_worker *w, uint64_t cycles)
{
	uint64_t polled = __atomic_load_n(&w->last_poll_tsc, __ATOMIC_ACQUIRE);
	uint64_t busy = __atomic_load_n(&w->last_busy_tsc, __ATOMIC_ACQUIRE);

	return polled > busy && polled - busy >= cycles;
}
/** After the workers stopped: transmit what is left in hand-off rings. Main thread. */
void nftdp_dp_workers_drain(struct nftdp_dp *dp);
void nftdp_dp_workers_free(struct nftdp_dp *dp);

/* steer.c: software steering to the worker owning a packet's connection */
int nftdp_dp_steer_init(struct nftdp_dp *dp); /* rings, after the workers */
void nftdp_dp_steer_free(struct nftdp_dp *dp);
/** Whether packets must be steered with gen: conntrack on, several workers. */
bool nftdp_dp_steer_active(const struct nftdp_dp *dp, const struct nftdp_vm_gen *gen);
/** Whether every outgoing ring has room for a burst (else leave rx for later). */
bool nftdp_dp_steer_room(const struct nftdp_dp_worker *w);
/**
 * Pass the packets of m[0..n) (received on port) that another worker's
 * shard owns to that worker; keep the rest, in order, in m. Returns how
 * many are kept. Packet-path, the worker's own.
 */
unsigned int nftdp_dp_steer_burst(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf **m,
				  unsigned int n);
/** Program a started RSS port's RETA: entry i to queue i % n_rxq; a port
 * that did not take the symmetric key loses its rss flag (software hash). */
int nftdp_dp_reta_program(struct nftdp_dp *dp, uint16_t pid);

/* defrag.c: fragments with conntrack (reassembly at -400 in prerouting,
 * the forward path's MTU check, refragmentation before netdev egress) */
struct nftdp_dp_defrag;
int nftdp_dp_defrag_init(struct nftdp_dp *dp);	/* after the workers; adds the step */
void nftdp_dp_defrag_fini(struct nftdp_dp *dp); /* before the ports close */
uint16_t nftdp_dp_defrag_mtu(const struct nftdp_dp_worker *w, uint16_t port);
/* whether defrag's step would take the datagram at iph (ip_len bytes) */
bool nftdp_dp_defrag_is_fragment(const uint8_t *iph, uint32_t ip_len, bool v4);
/* the step's timekeeping (expired datagrams freed), for a burst that
 * decides its packets without the step */
void nftdp_dp_defrag_tick(struct nftdp_dp_worker *w);
/** --router, before the forward hook: whether a reassembled datagram
 * (frag_max != 0) gets ICMP fragmentation needed / packet too big with *mtu */
bool nftdp_dp_defrag_too_big(const struct nftdp_dp_worker *w, const uint8_t *iph, bool v4,
			     uint16_t frag_max, uint16_t tx_port, uint32_t *mtu);
/** That ICMP error into w->reply; returns its length, 0: none is sent. */
uint32_t nftdp_dp_defrag_frag_needed(struct nftdp_dp_worker *w, const uint8_t *frame,
				     uint32_t ip_off, uint32_t ip_len, uint32_t mtu,
				     const uint8_t *icmp_src);
/**
 * Cut the reassembled datagram of view idx for tx_port into fragments
 * (fresh mbufs in out[0..cap), L2 header copied); consumes w->mb[idx].
 * Returns how many; 0 when it is dropped (too big with DF, no mbuf).
 */
unsigned int nftdp_dp_defrag_out(struct nftdp_dp_worker *w, unsigned int idx, uint16_t tx_port,
				 struct rte_mbuf **out, unsigned int cap);

/* pipeline.c */
/** Add a built-in step at prio of hook, kept in priority order. */
int nftdp_dp_step_add(struct nftdp_dp *dp, uint8_t hook, int32_t prio, nftdp_dp_step_fn *fn,
		      bool (*active)(const struct nftdp_vm_gen *));
void nftdp_dp_pipeline_burst(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			     uint16_t rx_port, struct rte_mbuf **m, unsigned int n);
/** Stage m for transmission on port (flushes when the buffer is full). */
void nftdp_dp_tx_stage(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *m);
void nftdp_dp_tx_flush(struct nftdp_dp_worker *w);

/* host.c: the exception path to the host stack (--host-ports) */
enum nftdp_dp_host_pmd { NFTDP_DP_HOST_TAP, NFTDP_DP_HOST_VIRTIO };
/** Create a host interface per data port (names[P]: its name, NULL: P's
 * name), after the data ports are known and before ports_init. */
int nftdp_dp_host_setup(struct nftdp_dp *dp, enum nftdp_dp_host_pmd pmd, const char *const *names);
/** Read the host interfaces' primary IPv4 addresses (getifaddrs) into
 * host_addr4. Control thread (fib.c, with each route mirror). */
void nftdp_dp_host_addrs(struct nftdp_dp *dp);
/** Each worker's rate limit, once the workers exist. */
void nftdp_dp_host_workers(struct nftdp_dp *dp);
/** --router with a host: whether the IP packet at iph is for the box
 * (a local address or broadcast per route/'s local table, an --ifaddr,
 * multicast, IPv6 link-local). Packet-path. */
bool nftdp_dp_host_local(const struct nftdp_dp *dp, bool v4, const uint8_t *iph);
/** Packets for the box after the routing decision: input, then the host
 * interface of rx_port. Packet-path. */
void nftdp_dp_host_input(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			 struct nftdp_vm_pkt **pkts, unsigned int n, uint16_t rx_port,
			 bool tracking);
/** A non-IP frame (ARP) received on rx_port: to the host. Packet-path. */
void nftdp_dp_host_l2(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, uint16_t rx_port);
/** A burst the host sent on host interface rx_port: output, postrouting,
 * out of its data port. Packet-path. */
void nftdp_dp_host_output(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			  uint16_t rx_port, struct rte_mbuf **m, unsigned int n, bool tracking);
/* pipeline.c for host.c: the burst's hook walker, netdev egress and emit */
unsigned int nftdp_dp_hook_run(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			       enum nftdp_dp_stage stage, uint8_t hook, struct nftdp_vm_pkt **act,
			       unsigned int n, uint16_t rx_port);
void nftdp_dp_egress(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
		     struct nftdp_vm_pkt **act, unsigned int n, uint16_t tx_port, uint16_t rx_port);
void nftdp_dp_emit(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *m,
		   const struct nftdp_vm_pkt *p);
/** Stage what was emitted outside a pipeline burst for tx (unres.c). */
void nftdp_dp_emit_flush(struct nftdp_dp_worker *w);
/** View i of this burst for frame mb, as netdev ingress on port 0 sees it
 * (host.c then makes it the view it needs), its meta from l2. */
void nftdp_dp_view_frame(struct nftdp_dp_worker *w, unsigned int i, struct rte_mbuf *mb,
			 const struct nftdp_dp_l2 *l2);
/** View i of this burst for an IP frame mb the host sent (no iif), its
 * meta from l2; false when its IP header fails ip_rcv's checks. */
bool nftdp_dp_view_host(struct nftdp_dp_worker *w, unsigned int i, struct rte_mbuf *mb,
			const struct nftdp_dp_l2 *l2);
/* pipeline.c: act on one hook's verdicts (drop, reject, fwd, dup), keep
 * the accepted in act and return how many; counted at stage. Packet-path. */
unsigned int nftdp_dp_settle(struct nftdp_dp_worker *w, enum nftdp_dp_stage stage,
			     struct nftdp_vm_pkt **act, unsigned int n, const unsigned int *v,
			     uint16_t rx_port);

/* bridge.c: the bridge family in wire mode */
/* linux/netfilter_bridge.h's values: the header clashes with DPDK's
 * net/if_arp.h */
#ifndef NF_BR_PRE_ROUTING
#define NF_BR_PRE_ROUTING 0
#define NF_BR_LOCAL_IN 1
#define NF_BR_FORWARD 2
#define NF_BR_LOCAL_OUT 3
#define NF_BR_POST_ROUTING 4
#define NF_BR_PRI_BRNF 0
#endif
/** Whether gen has bridge base chains that wire mode runs (not --router):
 * the plan's flag, computed once per generation. */
bool nftdp_dp_bridge_on(const struct nftdp_dp *dp, const struct nftdp_vm_gen *gen);
/** meta pkttype as the bridge over ports a and b sees a frame whose
 * destination is d: the bridge's address is the smaller of theirs. */
uint8_t nftdp_dp_bridge_pkttype(const struct nftdp_dp_port *a, const struct nftdp_dp_port *b,
				const uint8_t *d);
/** ebtables' arpreply answered p (p->out.arpreply): the reply, built
 * as arp_send builds it, goes out of rx_port; clears the request.
 * Packet-path. */
void nftdp_dp_bridge_arpreply(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, uint16_t rx_port);
/** Make p the view of the bridge family at hook for a frame that came
 * in on rx_port and leaves by tx_port. Packet-path. */
void nftdp_dp_bridge_view(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, uint8_t hook,
			  uint16_t rx_port, uint16_t tx_port);
/** The bridge base chains of hook with prio_min <= priority <= prio_max
 * over every frame of ipl[0..*nip) and other[0..*nother) (received views,
 * each list in arrival order) in arrival order; what they accept goes
 * back to its list with its own view. Packet-path. */
void nftdp_dp_bridge_hook(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint8_t hook,
			  int32_t prio_min, int32_t prio_max, struct nftdp_vm_pkt **ipl,
			  unsigned int *nip, struct nftdp_vm_pkt **other, unsigned int *nother,
			  uint16_t rx_port);

/* fib.c: whether route/'s local table says daddr is local or broadcast */
bool nftdp_dp_fib_local(const struct nftdp_dp *dp, bool v4, const uint8_t *daddr);
/* nf_conntrack_h323's callforward_do_filter over the route mirror: the
 * output routes to a and b both found, by the same device to the same
 * next hop; false without a table. Packet-path. */
bool nftdp_dp_fib_same_route(const struct nftdp_dp *dp, bool v4, const uint8_t *a,
			     const uint8_t *b);

/* stats.c */
void nftdp_dp_stats_sum(const struct nftdp_dp *dp, struct nftdp_dp_stats *out);
int nftdp_dp_stats_json(const struct nftdp_dp *dp, const char *file, double run_s);
void nftdp_dp_stats_print(const struct nftdp_dp *dp, double period_s);
int nftdp_dp_telemetry_register(struct nftdp_dp *dp);
/** Print "nf_conntrack: table full, dropping packet" when shards refused new
 * connections since the last call (at most once a second). Control thread. */
void nftdp_dp_ct_log_table_full(const struct nftdp_dp *dp);
/** Telemetry commands answer nothing from here on (before workers are freed). */
void nftdp_dp_telemetry_stop(void);

/* log.c */
void nftdp_dp_log_drain(struct nftdp_dp *dp);
#endif /* NFTDP_DP_BYTES_ONLY */

#endif /* NFTDP_DATAPLANE_PRIV_H */
