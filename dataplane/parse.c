/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame parsing and the kernel's own checks around the netfilter hooks, on
 * bytes only (no mbuf, no EAL): Ethernet and VLAN tags as
 * __netif_receive_skb_core() leaves them, ip_rcv_core() / ip6_rcv_core()
 * (with ipv6_parse_hopopts) before prerouting, and the routing/forwarding
 * checks of ip_route_input, ip_rcv_options (ip_options_compile), ip_forward
 * and ip6_forward before the forward hook, with ip_forward_options; the
 * parameter problems they send are built by nftdp_dp_icmp_build.
 */
#define NFTDP_DP_BYTES_ONLY
#include "dataplane_priv.h"

#include <string.h>

const char *const nftdp_dp_drop_names[NFTDP_DP_DROP_MAX] = {
    [NFTDP_DP_DROP_RUNT] = "runt",
    [NFTDP_DP_DROP_MULTISEG] = "multiseg",
    [NFTDP_DP_DROP_OTHERHOST] = "otherhost",
    [NFTDP_DP_DROP_IP_HDR] = "ip_hdr",
    [NFTDP_DP_DROP_IP_CSUM] = "ip_csum",
    [NFTDP_DP_DROP_IP_LEN] = "ip_len",
    [NFTDP_DP_DROP_IP6_HDR] = "ip6_hdr",
    [NFTDP_DP_DROP_IP6_LEN] = "ip6_len",
    [NFTDP_DP_DROP_IP6_ADDR] = "ip6_addr",
    [NFTDP_DP_DROP_TTL] = "ttl_exceeded",
    [NFTDP_DP_DROP_MARTIAN] = "martian",
    [NFTDP_DP_DROP_NOT_FORWARDED] = "not_forwarded",
    [NFTDP_DP_DROP_TX_FULL] = "tx_full",
    [NFTDP_DP_DROP_NO_MBUF] = "no_mbuf",
    [NFTDP_DP_DROP_FRAG] = "frag_reasm",
    [NFTDP_DP_DROP_FRAG_TOOBIG] = "frag_too_big",
    [NFTDP_DP_DROP_CT_CLASH] = "ct_insert_failed",
    [NFTDP_DP_DROP_IP6_HBH] = "ip6_hbh",
    [NFTDP_DP_DROP_IP6_HBH_OPT] = "ip6_hbh_option",
    [NFTDP_DP_DROP_IP6_SRC_ANY] = "ip6_src_any",
    [NFTDP_DP_DROP_IP_OPTIONS] = "ip_options",
    [NFTDP_DP_DROP_IP_SRR] = "ip_source_route",
    [NFTDP_DP_DROP_OWN_SRC] = "own_source",
    [NFTDP_DP_DROP_L2_NOT_HOST] = "l2_not_host",
    [NFTDP_DP_DROP_NO_ROUTE] = "no_route",
    [NFTDP_DP_DROP_ROUTE_NOT_PORT] = "route_not_port",
    [NFTDP_DP_DROP_NEIGH_UNRESOLVED] = "neigh_unresolved",
    [NFTDP_DP_DROP_HOST_LIMIT] = "host_limit",
    [NFTDP_DP_DROP_DUP_NO_ROUTE] = "dup_no_route",
};

static void icmp_set(struct nftdp_dp_icmp *icmp, uint8_t type, uint8_t code, uint32_t info)
{
	*icmp = (struct nftdp_dp_icmp){.type = type, .code = code, .info = info};
}

/* ip6_tlvopt_unknown: an option nobody handles, by its type's top two bits:
 * skip, drop, drop with a parameter problem, the same unless the
 * destination is multicast */
static enum nftdp_dp_drop ip6_tlvopt_unknown(const uint8_t *d, uint32_t off,
					     struct nftdp_dp_icmp *icmp)
{
	switch (d[off] >> 6) {
	case 0:
		return NFTDP_DP_DROP_MAX;
	case 1:
		break;
	case 3:
		if (d[24] == 0xff)
			break;
		/* fall through */
	case 2:
		icmp_set(icmp, 4, 2, off); /* ICMPV6_PARAMPROB, ICMPV6_UNK_OPTION */
		break;
	}
	return NFTDP_DP_DROP_IP6_HBH_OPT;
}

/* ipv6_hop_jumbo: the only jumbogram that passes is longer than 65535 and
 * has payload length 0; none fits a frame here, but the checks come in
 * the kernel's order because each sends its own parameter problem */
static enum nftdp_dp_drop ip6_hop_jumbo(const uint8_t *d, uint32_t off, uint32_t *ip_len,
					uint32_t avail, struct nftdp_dp_icmp *icmp)
{
	uint32_t pkt_len;

	if (d[off + 1] != 4 || (off & 3) != 2)
		return NFTDP_DP_DROP_IP6_HBH_OPT;
	pkt_len = nftdp_rd32(d + off + 2);
	if (pkt_len <= 65535) {
		icmp_set(icmp, 4, 0, off + 2); /* ICMPV6_HDR_FIELD */
		return NFTDP_DP_DROP_IP6_HBH_OPT;
	}
	if (nftdp_rd16(d + 4) != 0) {
		icmp_set(icmp, 4, 0, off);
		return NFTDP_DP_DROP_IP6_HBH_OPT;
	}
	if (pkt_len > avail - 40)
		return NFTDP_DP_DROP_IP6_HBH_OPT;
	*ip_len = pkt_len + 40; /* pskb_trim_rcsum */
	return NFTDP_DP_DROP_MAX;
}

#define IP6_MAX_HBH_OPTS 8 /* net.ipv6.max_hbh_opts_number, default */

/* ipv6_parse_hopopts and ip6_parse_tlv(hopbyhop) over the first *ip_len
 * bytes (the packet as ip6_rcv_core trimmed it) */
static enum nftdp_dp_drop ip6_parse_hopopts(const uint8_t *d, uint32_t *ip_len, uint32_t avail,
					    struct nftdp_dp_icmp *icmp)
{
	uint32_t off = 42, len, count = 0, padlen = 0;
	enum nftdp_dp_drop why;

	/* pskb_may_pull(40 + 8), then (hdrlen + 1) * 8 */
	if (*ip_len < 48 || *ip_len < 40 + ((uint32_t)d[41] + 1) * 8)
		return NFTDP_DP_DROP_IP6_HBH;
	len = ((uint32_t)d[41] + 1) * 8 - 2;
	while (len > 0) {
		uint32_t optlen;

		if (d[off] == 0) { /* Pad1 */
			if (++padlen > 7)
				return NFTDP_DP_DROP_IP6_HBH;
			off++;
			len--;
			continue;
		}
		if (len < 2)
			return NFTDP_DP_DROP_IP6_HBH;
		optlen = (uint32_t)d[off + 1] + 2;
		if (optlen > len)
			return NFTDP_DP_DROP_IP6_HBH;
		if (d[off] == 1) { /* PadN: at most 7 bytes of padding, all zero */
			padlen += optlen;
			if (padlen > 7)
				return NFTDP_DP_DROP_IP6_HBH;
			for (uint32_t i = 2; i < optlen; i++)
				if (d[off + i] != 0)
					return NFTDP_DP_DROP_IP6_HBH;
		} else {
			if (++count > IP6_MAX_HBH_OPTS)
				return NFTDP_DP_DROP_IP6_HBH;
			switch (d[off]) {
			case 5: /* ipv6_hop_ra */
				why =
				    d[off + 1] == 2 ? NFTDP_DP_DROP_MAX : NFTDP_DP_DROP_IP6_HBH_OPT;
				break;
			case 0x31: /* ipv6_hop_ioam: 4n-aligned; ioam6_enabled 0 ignores it */
				why = (off & 3) ? NFTDP_DP_DROP_IP6_HBH_OPT : NFTDP_DP_DROP_MAX;
				break;
			case 0xc2:
				why = ip6_hop_jumbo(d, off, ip_len, avail, icmp);
				break;
			default:
				why = ip6_tlvopt_unknown(d, off, icmp);
				break;
			}
			if (why != NFTDP_DP_DROP_MAX)
				return why;
			padlen = 0;
		}
		off += optlen;
		len -= optlen;
	}
	return NFTDP_DP_DROP_MAX;
}

enum nftdp_dp_drop nftdp_dp_ip6_rcv_icmp(const uint8_t *d, uint32_t avail, uint32_t *ip_len,
					 struct nftdp_dp_icmp *icmp)
{
	enum nftdp_dp_drop why;

	icmp->type = 0;
	why = nftdp_dp_ip6_rcv_core(d, avail, ip_len);
	if (why == NFTDP_DP_DROP_MAX && d[6] == 0)
		return ip6_parse_hopopts(d, ip_len, avail, icmp);
	return why;
}

enum nftdp_dp_drop nftdp_dp_ip6_rcv(const uint8_t *d, uint32_t avail, uint32_t *ip_len)
{
	struct nftdp_dp_icmp icmp;

	return nftdp_dp_ip6_rcv_icmp(d, avail, ip_len, &icmp);
}

bool nftdp_dp_own_add(struct nftdp_dp_own *own, bool v4, const uint8_t *addr)
{
	if ((v4 ? own->n4 : own->n6) == NFTDP_DP_OWN_MAX)
		return false;
	if (v4)
		memcpy(own->addr4[own->n4++], addr, 4);
	else
		memcpy(own->addr6[own->n6++], addr, 16);
	return true;
}

static bool own_has(const struct nftdp_dp_own *own, bool v4, const uint8_t *a)
{
	if (!own)
		return false;
	for (unsigned int i = 0; i < (v4 ? own->n4 : own->n6); i++)
		if (memcmp(a, v4 ? own->addr4[i] : own->addr6[i], v4 ? 4 : 16) == 0)
			return true;
	return false;
}

/* __ip_options_compile on a received packet: 0, or the offset (from the IP
 * header) of the byte it refuses; *srr: a source route option is there */
static uint32_t ip_options_compile(const uint8_t *iph, uint32_t hl, bool *srr)
{
	bool rr = false, ts = false;
	uint32_t off = 20;

	*srr = false;
	while (off < hl) {
		uint32_t l = hl - off, optlen;
		const uint8_t *o = iph + off;

		if (o[0] == 0) /* IPOPT_END: the rest is (made) padding */
			return 0;
		if (o[0] == 1) { /* IPOPT_NOOP */
			off++;
			continue;
		}
		if (l < 2)
			return off;
		optlen = o[1];
		if (optlen < 2 || optlen > l)
			return off;
		switch (o[0]) {
		case 131: /* IPOPT_LSRR */
		case 137: /* IPOPT_SSRR */
			if (optlen < 3)
				return off + 1;
			if (o[2] < 4)
				return off + 2;
			if (*srr) /* RFC 1812 5.2.4.1: one source route */
				return off;
			*srr = true;
			break;
		case 7: /* IPOPT_RR */
			if (rr)
				return off;
			if (optlen < 3)
				return off + 1;
			if (o[2] < 4)
				return off + 2;
			if (o[2] <= optlen && o[2] + 3u > optlen)
				return off + 2;
			rr = true;
			break;
		case 68: /* IPOPT_TIMESTAMP */
			if (ts)
				return off;
			if (optlen < 4)
				return off + 1;
			if (o[2] < 5)
				return off + 2;
			if (o[2] <= optlen) {
				if (o[2] + 3u > optlen)
					return off + 2;
				if (((o[3] & 0xf) == 1 || (o[3] & 0xf) == 3) && o[2] + 7u > optlen)
					return off + 2;
			} else if ((o[3] & 0xf) != 3 && (o[3] >> 4) == 15) {
				return off + 3; /* overflow counter full */
			}
			ts = true;
			break;
		case 148: /* IPOPT_RA */
			if (optlen < 4)
				return off + 1;
			break;
		default: /* the kernel keeps what it does not know */
			break;
		}
		off += optlen;
	}
	return 0;
}

void nftdp_dp_ip_forward_options(uint8_t *iph, const uint8_t *addr4)
{
	uint32_t hl = (iph[0] & 0xfu) * 4, off = 20;
	bool changed = false;

	/* the options passed ip_options_compile: every length is sane */
	while (off + 1 < hl && iph[off] != 0) {
		uint8_t *o = iph + off;

		if (o[0] == 1) {
			off++;
			continue;
		}
		if (o[1] < 2 || off + o[1] > hl)
			return;
		if (o[0] == 7 && o[1] >= 3 && o[2] >= 4 && o[2] + 3u <= o[1]) {
			/* IPOPT_RR: ip_rt_get_source at the pointer, pointer += 4 */
			memcpy(o + o[2] - 1, addr4, 4);
			o[2] += 4;
			changed = true;
		} else if (o[0] == 68 && o[1] >= 4 && o[2] > o[1] && (o[3] & 0xf) != 3 &&
			   (o[3] >> 4) < 15) {
			/* IPOPT_TIMESTAMP without room: count the overflow */
			o[3] = (uint8_t)((o[3] & 0xf) | (((o[3] >> 4) + 1) << 4));
			changed = true;
		}
		off += o[1];
	}
	if (changed) { /* ip_send_check */
		iph[10] = iph[11] = 0;
		nftdp_st16(iph + 10, nftdp_ip_fast_csum(iph, hl));
	}
}

enum nftdp_dp_drop nftdp_dp_ip_route_input(const uint8_t *iph, uint32_t ip_len, bool v4,
					   bool l2_host, const struct nftdp_dp_own *own,
					   struct nftdp_dp_icmp *icmp)
{
	icmp->type = 0;
	if (v4) {
		uint32_t s = nftdp_rd32(iph + 12), dst = nftdp_rd32(iph + 16);
		uint32_t hl = (iph[0] & 0xfu) * 4, bad;
		bool srr;

		/* ip_route_input_slow: martians (nftdp_dp_ip_forward names them
		 * too), then fib_validate_source: a source that is ours */
		if ((s >> 28) == 0xe || s == 0xffffffffu || (s >> 24) == 0 || (s >> 24) == 127 ||
		    (dst >> 24) == 0 || (dst >> 24) == 127)
			return NFTDP_DP_DROP_MARTIAN;
		if (own_has(own, true, iph + 12))
			return NFTDP_DP_DROP_OWN_SRC;
		/* ip_rcv_finish_core: ip_rcv_options */
		if (hl > 20 && hl <= ip_len) {
			bad = ip_options_compile(iph, hl, &srr);
			if (bad) {
				/* icmp_send(ICMP_PARAMETERPROB, 0, pointer << 24) */
				icmp_set(icmp, 12, 0, bad << 24);
				return NFTDP_DP_DROP_IP_OPTIONS;
			}
			if (srr)
				return NFTDP_DP_DROP_IP_SRR;
		}
	}
	/* ip_forward / ip6_forward: skb->pkt_type != PACKET_HOST */
	if (!l2_host)
		return NFTDP_DP_DROP_L2_NOT_HOST;
	return NFTDP_DP_DROP_MAX;
}

uint32_t nftdp_dp_icmp_build(const uint8_t *frame, uint32_t ip_off, uint32_t ip_len,
			     const struct nftdp_dp_icmp *icmp, uint16_t ip_id,
			     const uint8_t *icmp_src, uint8_t *out, uint32_t cap)
{
	uint32_t n, at;
	uint8_t *check;

	if (!icmp->type)
		return 0;
	n = nftdp_dp_reject_build(frame, ip_off, ip_len, false, icmp->type, icmp->code, ip_id,
				  icmp_src, out, cap);
	if (!n)
		return 0;
	/* the builder leaves the four bytes after the checksum zero: put the
	 * pointer there and fold it into the checksum (RFC 1624) */
	at = ip_off + ((out[ip_off] >> 4) == 4 ? 20 : 40);
	out[at + 4] = (uint8_t)(icmp->info >> 24);
	out[at + 5] = (uint8_t)(icmp->info >> 16);
	out[at + 6] = (uint8_t)(icmp->info >> 8);
	out[at + 7] = (uint8_t)icmp->info;
	check = out + at + 2;
	nftdp_st16(check, nftdp_csum_fold(nftdp_csum_add((uint16_t)~nftdp_ld16(check),
							 nftdp_csum_partial(out + at + 4, 4, 0))));
	return n;
}

enum nftdp_dp_drop nftdp_dp_ip_forward(uint8_t *iph, uint32_t ip_len)
{
	uint32_t s = nftdp_rd32(iph + 12), dst = nftdp_rd32(iph + 16);
	uint32_t check;

	(void)ip_len;
	/* ip_route_input_slow: martian sources, then what is not forwarded */
	if ((s >> 28) == 0xe || s == 0xffffffffu || (s >> 24) == 0 || (s >> 24) == 127)
		return NFTDP_DP_DROP_MARTIAN;
	if ((dst >> 24) == 0 || (dst >> 24) == 127)
		return NFTDP_DP_DROP_MARTIAN;
	if (dst == 0xffffffffu || (dst >> 28) == 0xe)
		return NFTDP_DP_DROP_NOT_FORWARDED;
	/* ip_forward: too_many_hops */
	if (iph[8] <= 1)
		return NFTDP_DP_DROP_TTL;
	/* ip_decrease_ttl: incremental checksum update */
	check = nftdp_rd16(iph + 10);
	check += 0x0100;
	check += check >= 0xffff;
	nftdp_wr16(iph + 10, (uint16_t)check);
	iph[8]--;
	return NFTDP_DP_DROP_MAX;
}

enum nftdp_dp_drop nftdp_dp_ip6_forward(uint8_t *ip6h, uint32_t ip_len)
{
	static const uint8_t any[16];
	const uint8_t *s = ip6h + 8, *dst = ip6h + 24;

	(void)ip_len;
	/* multicast destinations go to ip6_mc_input, link-local and the
	 * unspecified address are never forwarded */
	if (dst[0] == 0xff)
		return NFTDP_DP_DROP_NOT_FORWARDED;
	if ((dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80) || memcmp(dst, any, 16) == 0)
		return NFTDP_DP_DROP_NOT_FORWARDED;
	/* ip6_forward: hop limit first, then the unspecified and link-local
	 * sources; icmpv6_send sends nothing to ::, and nothing to a
	 * link-local address without one of its own to send from (nftdp has
	 * none; docs/differences.md), so both are dropped silently whatever
	 * the hop limit (differential 162, 166) */
	if (memcmp(s, any, 16) == 0)
		return NFTDP_DP_DROP_IP6_SRC_ANY;
	if (s[0] == 0xfe && (s[1] & 0xc0) == 0x80)
		return NFTDP_DP_DROP_MARTIAN;
	if (ip6h[7] <= 1)
		return NFTDP_DP_DROP_TTL;
	ip6h[7]--;
	return NFTDP_DP_DROP_MAX;
}
