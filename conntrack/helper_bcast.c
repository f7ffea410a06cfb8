// SPDX-License-Identifier: BSD-3-Clause
/*
 * The netbios-ns and snmp helpers (nf_conntrack_netbios_ns.c,
 * nf_conntrack_snmp.c over nf_conntrack_broadcast.c). The broadcast helper
 * expects the answers to a request a local socket broadcast on its
 * subnet; a forwarded packet has no socket (skb->sk is NULL), so the
 * kernel creates nothing for it, and nftdp, which only forwards, neither.
 * snmp's NAT part (nf_nat_snmp_basic) is helper_snmp.c.
 */
#include "ct_priv.h"

unsigned int nftdp_ct_bcast_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				 const struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	(void)s;
	(void)e;
	(void)pkt;
	(void)ctinfo;
	return NF_ACCEPT;
}
