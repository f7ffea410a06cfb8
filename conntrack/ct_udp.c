// SPDX-License-Identifier: BSD-3-Clause
/*
 * UDP tracking; mirrors nf_conntrack_proto_udp.c: a flow stays unreplied
 * (30 s) until a reply is seen; from then on it is a stream, and once it is
 * still active two seconds after it was created it gets the replied
 * timeout (120 s) and becomes ASSURED.
 */
#include <netinet/in.h>

#include "ct_priv.h"

/* udp_error: short or malformed header, bad checksum (0: none, allowed). */
bool nftdp_ct_udp_error(const struct ct_l4pkt *p, bool checksum)
{
	uint32_t ulen;

	if (p->l4len < 8)
		return true;
	ulen = (uint32_t)p->l4[4] << 8 | p->l4[5];
	if (ulen > p->l4len || ulen < 8)
		return true;
	if (!p->l4[6] && !p->l4[7])
		return false;
	return checksum && !nftdp_ct_l4_csum_ok(p->pkt, p->l4, p->l4len);
}

/* nf_conntrack_udp_packet */
enum ct_verdict nftdp_ct_udp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	uint32_t status = e->status;

	(void)s;
	if (!(status & IPS_CONFIRMED))
		e->proto.udp.stream_ms = now_ms + 2000;
	if (status & IPS_SEEN_REPLY) {
		uint32_t extra = nftdp_ct_policy(s, e)->udp_unreplied;
		bool stream = false;

		/* still active after two seconds: a stream */
		if (now_ms > e->proto.udp.stream_ms) {
			extra = nftdp_ct_policy(s, e)->udp_replied;
			stream = !(status & IPS_ASSURED);
		}
		nftdp_ct_refresh_acct(s, e, p, dir, now_ms, extra);
		if (stream) {
			e->status |= IPS_ASSURED;
			nftdp_ct_event_cache(e, IPCT_ASSURED);
		}
	} else {
		nftdp_ct_refresh_acct(s, e, p, dir, now_ms, nftdp_ct_policy(s, e)->udp_unreplied);
	}
	return CT_ACCEPT;
}
