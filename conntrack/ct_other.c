// SPDX-License-Identifier: BSD-3-Clause
/*
 * Generic tracking (nf_conntrack_proto_generic.c): one timeout, 600 s,
 * refreshed by every packet. nftdp also tracks SCTP, DCCP and UDP-Lite this
 * way, with their ports in the tuple but no protocol state machine (see
 * docs/conntrack.md).
 */
#include "ct_priv.h"

enum ct_verdict nftdp_ct_generic_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
					const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	(void)s;
	nftdp_ct_refresh_acct(e, p, dir, now_ms, e->tmo->generic);
	return CT_ACCEPT;
}
