/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reply frames for reject and for --router's time exceeded, on bytes only.
 * Mirrors nf_send_reset / nf_send_unreach (net/ipv4/netfilter/
 * nf_reject_ipv4.c), their IPv6 twins (nf_reject_ipv6.c), and the parts of
 * icmp_send / icmpv6_send that decide whether and what to send. nftdp has no
 * address of its own: the reply's source is the original destination (as
 * the bridge/netdev reject paths of the kernel do).
 */
#define NFTDP_DP_BYTES_ONLY
#include "dataplane_priv.h"

#include <string.h>

#define REPLY_TTL 64 /* net.ipv4.ip_default_ttl, net.ipv6.conf.*.hop_limit */

/* the transport checksum over the pseudo header and len bytes at th */
static uint16_t l4_csum(const uint8_t *ip, bool v4, uint8_t proto, const uint8_t *th, uint32_t len)
{
	return nftdp_csum_fold(
	    nftdp_csum_partial(th, len, nftdp_csum_pseudo(ip, !v4, proto, (uint16_t)len)));
}

/* nf_reject_verify_csum() then nf_ip_checksum() / nf_ip6_checksum() */
static bool l4_csum_ok(const uint8_t *ip, bool v4, uint8_t proto, const uint8_t *th, uint32_t l4len)
{
	switch (proto) {
	case IPPROTO_UDP:
		if (l4len < 8)
			return false;
		/* a zero checksum: disabled */
		if (nftdp_rd16(th + 6) == 0)
			return true;
		/* fall through */
	case IPPROTO_TCP:
	case IPPROTO_ICMPV6:
		return l4_csum(ip, v4, proto, th, l4len) == 0;
	case IPPROTO_ICMP:
		return nftdp_csum_fold(nftdp_csum_partial(th, l4len, 0)) == 0;
	default:
		return true; /* GRE, AH, ESP, SCTP, UDP-Lite, DCCP, others: not checked */
	}
}

/* icmp_pointers[type].error: never answer an ICMP error with one */
static bool icmp_is_error(uint8_t type)
{
	return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

static uint32_t eth_put(const uint8_t *frame, uint32_t ip_off, uint16_t ethertype, uint8_t *out)
{
	memcpy(out, frame + 6, 6);		   /* to the sender */
	memcpy(out + 6, frame, 6);		   /* from whom it was sent to */
	memcpy(out + 12, frame + 12, ip_off - 12); /* tags and ethertype as they came */
	nftdp_wr16(out + ip_off - 2, ethertype);
	return ip_off;
}

static void ip4_put(uint8_t *iph, const uint8_t *oiph, uint8_t proto, uint32_t tot, uint8_t tos,
		    uint16_t frag_off, uint16_t id)
{
	memset(iph, 0, 20);
	iph[0] = 0x45;
	iph[1] = tos;
	nftdp_wr16(iph + 2, (uint16_t)tot);
	nftdp_wr16(iph + 4, id);
	nftdp_wr16(iph + 6, frag_off);
	iph[8] = REPLY_TTL;
	iph[9] = proto;
	memcpy(iph + 12, oiph + 16, 4);
	memcpy(iph + 16, oiph + 12, 4);
	nftdp_st16(iph + 10, nftdp_ip_fast_csum(iph, 20));
}

static void ip6_put(uint8_t *ip6h, const uint8_t *oip6h, uint8_t nexthdr, uint32_t plen)
{
	memset(ip6h, 0, 40);
	ip6h[0] = 0x60;
	nftdp_wr16(ip6h + 4, (uint16_t)plen);
	ip6h[6] = nexthdr;
	ip6h[7] = REPLY_TTL;
	memcpy(ip6h + 8, oip6h + 24, 16);
	memcpy(ip6h + 24, oip6h + 8, 16);
}

/* nf_reject_ip_tcphdr_put / nf_reject_ip6_tcphdr_put */
static void tcp_rst_put(uint8_t *th, const uint8_t *oth, uint32_t odatalen)
{
	memset(th, 0, 20);
	memcpy(th, oth + 2, 2);
	memcpy(th + 2, oth, 2);
	th[12] = 5 << 4;
	if (oth[13] & 0x10) { /* ACK: RST with seq = their ack */
		memcpy(th + 4, oth + 8, 4);
		th[13] = 0x04;
	} else {
		uint32_t ack =
		    nftdp_rd32(oth + 4) + odatalen + !!(oth[13] & 0x02) + !!(oth[13] & 0x01);

		nftdp_wr32(th + 8, ack);
		th[13] = 0x14; /* RST|ACK */
	}
}

uint32_t nftdp_dp_reject_build(const uint8_t *frame, uint32_t ip_off, uint32_t ip_len, bool tcp_rst,
			       uint8_t icmp_type, uint8_t icmp_code, uint16_t ip_id,
			       const uint8_t *icmp_src, uint8_t *out, uint32_t cap)
{
	const uint8_t *ip = frame + ip_off, *th;
	struct nftdp_vm_pkt p;
	uint32_t l4len, n;
	bool v4, fwd_err;

	if (ip_off < 14 || cap < NFTDP_DP_REPLY_MAX)
		return 0;
	nftdp_vm_pkt_init(&p, (uint8_t *)frame, ip_off + ip_len, 0, ip_off);
	nftdp_vm_pkt_parse_ip(&p);
	v4 = p.nfproto == NFPROTO_IPV4;
	if (!v4 && p.nfproto != NFPROTO_IPV6)
		return 0;
	if (ip_len < (v4 ? 20u : 40u))
		return 0;
	/* time exceeded comes from ip_forward / ip6_forward, parameter
	 * problem from ip_options_compile / ip6_parse_tlv, through icmp_send /
	 * icmpv6_send, which check no transport checksum; reject's
	 * unreachable and reset (nf_send_unreach*, nf_send_reset*) do */
	fwd_err = !tcp_rst && (icmp_type == (v4 ? 11 : 3) || icmp_type == (v4 ? 12 : 4));
	/* non-first fragments get nothing (IP_OFFSET; reject6_csum_ok); only
	 * icmpv6_send answers them */
	if (p.fragoff && (v4 || !fwd_err))
		return 0;
	if (!(p.flags & NFTDP_VM_PKT_F_L4PROTO))
		return 0;
	/* the parser keeps th_off inside the packet: a header that claims more
	 * than is there leaves no transport bytes (l4len 0) */
	if (p.th_off > ip_off + ip_len)
		return 0;
	th = frame + p.th_off;
	l4len = ip_off + ip_len - p.th_off;
	/* reject6_csum_ok / nf_reject_ip6_tcphdr_get: thoff >= skb->len, nothing */
	if (!fwd_err && l4len == 0)
		return 0;

	if (tcp_rst) {
		uint32_t odata;

		if (p.l4proto != IPPROTO_TCP || l4len < 20 || (th[13] & 0x04))
			return 0; /* nf_reject_ip_tcphdr_get: short, or an RST */
		if (!l4_csum_ok(ip, v4, IPPROTO_TCP, th, l4len))
			return 0;
		odata = l4len - (th[12] >> 4) * 4u;
		if ((th[12] >> 4) * 4u > l4len)
			return 0;
		n = eth_put(frame, ip_off, v4 ? NFTDP_DP_ETH_P_IP : NFTDP_DP_ETH_P_IPV6, out);
		if (v4) {
			/* nf_reject_iphdr_put: tos 0, DF, id 0 */
			ip4_put(out + n, ip, IPPROTO_TCP, 40, 0, 0x4000, 0);
			tcp_rst_put(out + n + 20, th, odata);
			nftdp_st16(out + n + 20 + 16,
				   l4_csum(out + n, true, IPPROTO_TCP, out + n + 20, 20));
			return n + 40;
		}
		ip6_put(out + n, ip, IPPROTO_TCP, 20);
		tcp_rst_put(out + n + 40, th, odata);
		nftdp_st16(out + n + 40 + 16,
			   l4_csum(out + n, false, IPPROTO_TCP, out + n + 40, 20));
		return n + 60;
	}

	if (v4) {
		uint32_t dst = nftdp_rd32(ip + 16), quote;

		/* icmp_send: not for broadcast/multicast, not for ICMP errors */
		if (dst == 0xffffffffu || (dst >> 28) == 0xe)
			return 0;
		if (p.l4proto == IPPROTO_ICMP && (l4len < 1 || icmp_is_error(th[0])))
			return 0;
		if (!fwd_err && !l4_csum_ok(ip, true, p.l4proto, th, l4len))
			return 0;
		/* as much of the original as fits in 576 bytes */
		quote = ip_len < 576 - 28 ? ip_len : 576 - 28;
		n = eth_put(frame, ip_off, NFTDP_DP_ETH_P_IP, out);
		/* tos: RT_TOS(orig) | IPTOS_PREC_INTERNETCONTROL; icmp sockets don't set DF */
		ip4_put(out + n, ip, IPPROTO_ICMP, 28 + quote, (uint8_t)((ip[1] & 0x1e) | 0xc0), 0,
			ip_id);
		if (icmp_src) {
			memcpy(out + n + 12, icmp_src, 4);
			nftdp_wr16(out + n + 10, 0);
			nftdp_st16(out + n + 10, nftdp_ip_fast_csum(out + n, 20));
		}
		memset(out + n + 20, 0, 8);
		out[n + 20] = icmp_type;
		out[n + 21] = icmp_code;
		memcpy(out + n + 28, ip, quote);
		nftdp_st16(out + n + 22,
			   nftdp_csum_fold(nftdp_csum_partial(out + n + 20, 8 + quote, 0)));
		return n + 28 + quote;
	} else {
		uint32_t quote;

		/* icmpv6_send: not for multicast destinations (but an unknown
		 * option's parameter problem, ip6_tlvopt_unknown class 10:
		 * opt_unrec), not for errors */
		if (ip[24] == 0xff && !(icmp_type == 4 && icmp_code == 2))
			return 0;
		/* is_ineligible: an ICMPv6 error, or an ICMPv6 header that is
		 * not there (unless a non-first fragment) */
		if (p.l4proto == IPPROTO_ICMPV6 && l4len < 1 && !p.fragoff)
			return 0;
		if (p.l4proto == IPPROTO_ICMPV6 && l4len >= 1 && th[0] < 128)
			return 0;
		if (!fwd_err && !l4_csum_ok(ip, false, p.l4proto, th, l4len))
			return 0;
		/* as much as fits in the minimum MTU */
		quote = ip_len < 1280 - 48 ? ip_len : 1280 - 48;
		n = eth_put(frame, ip_off, NFTDP_DP_ETH_P_IPV6, out);
		ip6_put(out + n, ip, IPPROTO_ICMPV6, 8 + quote);
		if (icmp_src)
			memcpy(out + n + 8, icmp_src, 16);
		memset(out + n + 40, 0, 8);
		out[n + 40] = icmp_type;
		out[n + 41] = icmp_code;
		memcpy(out + n + 48, ip, quote);
		nftdp_st16(out + n + 42,
			   l4_csum(out + n, false, IPPROTO_ICMPV6, out + n + 40, 8 + quote));
		return n + 48 + quote;
	}
}

uint32_t nftdp_dp_synproxy_build(const uint8_t *frame, uint32_t ip_off, uint32_t ip_len,
				 const struct nftdp_vm_synproxy_info *info, uint64_t now_ms,
				 uint8_t *out, uint32_t cap)
{
	struct nftdp_vm_pkt p;
	uint32_t n, len;
	bool v4;

	if (ip_off < 14 || cap < NFTDP_DP_REPLY_MAX)
		return 0;
	nftdp_vm_pkt_init(&p, (uint8_t *)frame, ip_off + ip_len, 0, ip_off);
	nftdp_vm_pkt_parse_ip(&p);
	v4 = p.nfproto == NFPROTO_IPV4;
	if ((!v4 && p.nfproto != NFPROTO_IPV6) || !(p.flags & NFTDP_VM_PKT_F_L4PROTO) ||
	    p.l4proto != IPPROTO_TCP || p.fragoff || p.th_off + 20 > ip_off + ip_len)
		return 0;
	n = eth_put(frame, ip_off, v4 ? NFTDP_DP_ETH_P_IP : NFTDP_DP_ETH_P_IPV6, out);
	len = nftdp_vm_synproxy_answer(frame + ip_off, !v4, frame + p.th_off,
				       ip_off + ip_len - p.th_off, info, now_ms, out + n, cap - n);
	return len ? n + len : 0;
}

uint32_t nftdp_dp_arpreply_build(const struct nftdp_vm_pkt_out *o, uint8_t *out, uint32_t cap)
{
	if (!o->arpreply || cap < 42)
		return 0;
	/* arp_create for an Ethernet device: to the asker from
	 * --arpreply-mac, hardware type the device's, no padding (veth
	 * sends the 42 bytes; a NIC pads them) */
	memcpy(out, o->arpreply_tha, 6);
	memcpy(out + 6, o->arpreply_sha, 6);
	out[12] = 0x08, out[13] = 0x06;
	out[14] = 0, out[15] = 1; /* ARPHRD_ETHER */
	out[16] = 0x08, out[17] = 0x00;
	out[18] = 6, out[19] = 4;
	out[20] = 0, out[21] = 2; /* ARPOP_REPLY */
	memcpy(out + 22, o->arpreply_sha, 6);
	memcpy(out + 28, o->arpreply_sip, 4);
	memcpy(out + 32, o->arpreply_tha, 6);
	memcpy(out + 38, o->arpreply_tip, 4);
	return 42;
}
