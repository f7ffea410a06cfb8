// SPDX-License-Identifier: BSD-3-Clause
/*
 * ICMP and ICMPv6 queries (nf_conntrack_proto_icmp.c, _icmpv6.c): only a
 * request (echo, timestamp, info, address mask; ICMPv6 echo and node
 * information) may create an entry; its reply tuple is the matching reply
 * type with the same id. ICMP errors are handled in ct.c (related).
 */
#include <netinet/in.h>

#include "ct_priv.h"

bool nftdp_ct_icmp_new(const struct nftdp_ct_tuple *t)
{
	uint8_t type = (uint8_t)(*(const uint8_t *)&t->dport);

	if (t->l4proto == IPPROTO_ICMP)
		return type == 8 || type == 13 || type == 15 || type == 17;
	return type == 128 || type == 139;
}

enum ct_verdict nftdp_ct_icmp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				     const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	(void)s;
	/* can't create a new ICMP `conn' with anything but a request */
	if (!nftdp_ct_icmp_new(&e->tuple[IP_CT_DIR_ORIGINAL]))
		return CT_INVALID;
	nftdp_ct_refresh_acct(s, e, p, dir, now_ms,
			      e->tuple[0].l4proto == IPPROTO_ICMP ? e->tmo->icmp : e->tmo->icmpv6);
	return CT_ACCEPT;
}
