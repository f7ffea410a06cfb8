// SPDX-License-Identifier: BSD-3-Clause
/*
 * Generic tracking (nf_conntrack_proto_generic.c): one timeout, 600 s,
 * refreshed by every packet. nftdp also tracks SCTP, DCCP and UDP-Lite this
 * way, with their ports in the tuple but no protocol state machine (see
 * docs/conntrack.md). GRE has the kernel's GRE timeouts (its version 0
 * packets carry no keys, so their tuple is the protocol's, as the kernel's
 * gre_pkt_to_tuple does for them; PPTP's version 1 keys: ct_tuple.c and
 * ct_gre.c). The pptp helper's expectfn raises the timeouts of its GRE
 * connections, but nf_conntrack_gre_packet sets them back to these for an
 * unconfirmed entry, after it ran: the kernel's GRE calls time out at 30 s
 * and 180 s as well.
 */
#include "ct_priv.h"

enum ct_verdict nftdp_ct_generic_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
					const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	(void)s;
	nftdp_ct_refresh_acct(s, e, p, dir, now_ms, e->tmo->generic);
	return CT_ACCEPT;
}

/* nf_conntrack_gre_packet: unreplied 30 s; replied 180 s and ASSURED */
enum ct_verdict nftdp_ct_gre_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	(void)s;
	if (e->status & IPS_SEEN_REPLY) {
		nftdp_ct_refresh_acct(s, e, p, dir, now_ms, e->tmo->gre_replied);
		if (!(e->status & IPS_ASSURED)) {
			e->status |= IPS_ASSURED;
			nftdp_ct_event_cache(e, IPCT_ASSURED);
		}
	} else {
		nftdp_ct_refresh_acct(s, e, p, dir, now_ms, e->tmo->gre_unreplied);
	}
	return CT_ACCEPT;
}
