// SPDX-License-Identifier: BSD-3-Clause
/*
 * Packet view helpers: an IP parser that sets the transport fields as
 * nft_set_pktinfo_ipv4_validate / nft_set_pktinfo_ipv6_validate (with
 * ipv6_find_hdr for the transport protocol) do. The defaults,
 * nftdp_vm_pkt_init, are in line in nftdp_vm.h.
 */
#include <arpa/inet.h>

#include "vm_priv.h"

static bool ipv6_ext(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 59 || nh == 60;
}

void nftdp_vm_pkt_parse_ip(struct nftdp_vm_pkt *pkt)
{
	const uint8_t *p = pkt->data + pkt->nh_off;
	uint32_t avail = pkt->len > pkt->nh_off ? pkt->len - pkt->nh_off : 0;

	pkt->flags &= (uint8_t)~NFTDP_VM_PKT_F_L4PROTO;
	pkt->fragoff = 0;
	if (avail < 1)
		return;
	if ((p[0] >> 4) == 4) {
		uint32_t ihl, tot;

		pkt->protocol = htons(0x0800);
		pkt->nfproto = NFPROTO_IPV4;
		if (avail < 20)
			return;
		ihl = (p[0] & 0xf) * 4u;
		tot = ((uint32_t)p[2] << 8) | p[3];
		if (ihl < 20 || tot < ihl || avail < tot)
			return; /* nft_set_pktinfo_ipv4_validate fails */
		pkt->th_off = pkt->nh_off + ihl;
		pkt->l4proto = p[9];
		pkt->fragoff = (uint16_t)((((uint32_t)p[6] << 8 | p[7]) & 0x1fff) << 3);
		pkt->flags |= NFTDP_VM_PKT_F_L4PROTO;
	} else if ((p[0] >> 4) == 6) {
		uint32_t off = 40, plen;
		uint8_t nh;

		pkt->protocol = htons(0x86dd);
		pkt->nfproto = NFPROTO_IPV6;
		if (avail < 40)
			return;
		plen = ((uint32_t)p[4] << 8) | p[5];
		if (plen + 40 > avail)
			return;
		nh = p[6];
		/*
		 * ipv6_find_hdr(skb, &thoff, -1, &frag_off, &flags) with flags
		 * IP6_FH_F_AUTH, as nft_set_pktinfo_ipv6_validate calls it: the
		 * walk ends at NEXTHDR_NONE and at AH, which become the
		 * transport protocol (59, 51) with thoff at their header.
		 */
		while (ipv6_ext(nh) && nh != 59 && nh != 51) {
			uint32_t hl;

			if (off + 2 > avail)
				return;
			if (nh == 43 && off + 4 > avail)
				return; /* struct ipv6_rt_hdr: -EBADMSG */
			if (nh == 44) {
				uint16_t fo;

				if (off + 4 > avail)
					return; /* frag_off: -EBADMSG */
				fo = (uint16_t)(((uint32_t)p[off + 2] << 8 | p[off + 3]) & ~7u);
				if (fo) {
					if (!ipv6_ext(p[off]) || p[off] == 59) {
						pkt->fragoff = fo;
						nh = p[off];
						off += 8;
						break;
					}
					return;
				}
				hl = 8;
			} else {
				hl = ((uint32_t)p[off + 1] + 1) * 8;
			}
			nh = p[off];
			off += hl;
		}
		/*
		 * ipv6_find_hdr returns a thoff past the end when the last
		 * header's length runs past it, and nft_set_pktinfo_ipv6_validate
		 * keeps it (the L4 protocol still matches, every transport load
		 * breaks). Past the end reads the same as at the end for every
		 * reader, so th_off stops there: no offset points past the packet.
		 */
		if (off > 0xffff)
			return; /* thoff > U16_MAX */
		if (off > avail)
			off = avail;
		pkt->th_off = pkt->nh_off + off;
		pkt->l4proto = nh;
		pkt->flags |= NFTDP_VM_PKT_F_L4PROTO;
	}
}
