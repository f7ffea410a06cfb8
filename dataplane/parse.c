/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame parsing and the kernel's own checks around the netfilter hooks, on
 * bytes only (no mbuf, no EAL): Ethernet and VLAN tags as
 * __netif_receive_skb_core() leaves them, ip_rcv_core() / ip6_rcv_core()
 * before prerouting, and the routing/forwarding checks of ip_route_input,
 * ip_forward and ip6_forward before the forward hook.
 */
#define NFTDP_DP_BYTES_ONLY
#include "dataplane_priv.h"

#include <string.h>

#include <rte_ip.h>

const char *const nftdp_dp_drop_names[NFTDP_DP_DROP_MAX] = {
    [NFTDP_DP_DROP_RUNT] = "runt",	     [NFTDP_DP_DROP_MULTISEG] = "multiseg",
    [NFTDP_DP_DROP_OTHERHOST] = "otherhost", [NFTDP_DP_DROP_IP_HDR] = "ip_hdr",
    [NFTDP_DP_DROP_IP_CSUM] = "ip_csum",     [NFTDP_DP_DROP_IP_LEN] = "ip_len",
    [NFTDP_DP_DROP_IP6_HDR] = "ip6_hdr",     [NFTDP_DP_DROP_IP6_LEN] = "ip6_len",
    [NFTDP_DP_DROP_IP6_ADDR] = "ip6_addr",   [NFTDP_DP_DROP_TTL] = "ttl_exceeded",
    [NFTDP_DP_DROP_MARTIAN] = "martian",     [NFTDP_DP_DROP_NOT_FORWARDED] = "not_forwarded",
    [NFTDP_DP_DROP_TX_FULL] = "tx_full",     [NFTDP_DP_DROP_NO_MBUF] = "no_mbuf",
    [NFTDP_DP_DROP_FRAG] = "frag_reasm",     [NFTDP_DP_DROP_FRAG_TOOBIG] = "frag_too_big",
    [NFTDP_DP_DROP_CT_CLASH] = "ct_insert_failed",
};

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint32_t nftdp_dp_csum_add(uint32_t sum, const void *buf, uint32_t len)
{
	const uint8_t *p = buf;
	uint64_t s = sum;

	for (; len >= 2; p += 2, len -= 2)
		s += rd16(p);
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

uint16_t nftdp_dp_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

enum nftdp_dp_drop nftdp_dp_ip_rcv(const uint8_t *d, uint32_t avail, uint32_t *ip_len)
{
	uint32_t ihl, tot;

	/* ip_rcv_core: pskb_may_pull(iphdr), ihl >= 5, version 4 */
	if (avail < 20 || (d[0] >> 4) != 4 || (d[0] & 0xf) < 5)
		return NFTDP_DP_DROP_IP_HDR;
	ihl = (d[0] & 0xfu) * 4;
	if (avail < ihl)
		return NFTDP_DP_DROP_IP_HDR;
	if (rte_raw_cksum(d, ihl) != 0xffff)
		return NFTDP_DP_DROP_IP_CSUM;
	tot = rd16(d + 2);
	/* skb->len < len: truncated; len < ihl: inhdr error */
	if (avail < tot || tot < ihl)
		return NFTDP_DP_DROP_IP_LEN;
	*ip_len = tot; /* pskb_trim_rcsum: padding goes */
	return NFTDP_DP_DROP_MAX;
}

static bool ip6_is_loopback(const uint8_t *a)
{
	static const uint8_t lo[16] = {[15] = 1};

	return memcmp(a, lo, 16) == 0;
}

enum nftdp_dp_drop nftdp_dp_ip6_rcv(const uint8_t *d, uint32_t avail, uint32_t *ip_len)
{
	uint32_t plen;

	if (avail < 40 || (d[0] >> 4) != 6)
		return NFTDP_DP_DROP_IP6_HDR;
	/* ip6_rcv_core: multicast source; loopback either side from a non-loopback
	 * device; interface-local (scope 1) multicast and scope 0 multicast */
	if (d[8] == 0xff || ip6_is_loopback(d + 8) || ip6_is_loopback(d + 24))
		return NFTDP_DP_DROP_IP6_ADDR;
	if (d[24] == 0xff && ((d[25] & 0xf) == 0 || (d[25] & 0xf) == 1))
		return NFTDP_DP_DROP_IP6_ADDR;
	plen = rd16(d + 4);
	if (plen + 40 > avail)
		return NFTDP_DP_DROP_IP6_LEN;
	*ip_len = plen + 40;
	return NFTDP_DP_DROP_MAX;
}

enum nftdp_dp_drop nftdp_dp_ip_forward(uint8_t *iph, uint32_t ip_len)
{
	uint32_t s = rd32(iph + 12), dst = rd32(iph + 16);
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
	check = rd16(iph + 10);
	check += 0x0100;
	check += check >= 0xffff;
	iph[10] = (uint8_t)(check >> 8);
	iph[11] = (uint8_t)check;
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
	/* ip6_forward: hop limit first, then link-local sources */
	if (ip6h[7] <= 1)
		return NFTDP_DP_DROP_TTL;
	if (s[0] == 0xfe && (s[1] & 0xc0) == 0x80)
		return NFTDP_DP_DROP_MARTIAN;
	ip6h[7]--;
	return NFTDP_DP_DROP_MAX;
}
