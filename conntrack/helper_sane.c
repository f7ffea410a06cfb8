// SPDX-License-Identifier: BSD-3-Clause
/*
 * The sane helper (nf_conntrack_sane.c): a SANE_NET_START request from
 * the client, answered with SANE_STATUS_SUCCESS and a data port, expects
 * the client's TCP connection to the server at that port (from any
 * source port). No NAT helper exists for it, on the kernel as here.
 */
#include "ct_priv.h"

#define SANE_NET_START 7
#define SANE_STATUS_SUCCESS 0
#define SANE_REQUEST_LEN 8 /* struct sane_request: RPC_code, handle */
#define SANE_REPLY_LEN 8   /* struct sane_reply_net_start: status, zero, port */

unsigned int nftdp_ct_sane_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				const struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	struct ct_help *h = &s->help[e - s->entries];
	const struct nftdp_ct_tuple *o = &e->tuple[IP_CT_DIR_ORIGINAL];
	uint32_t l4len = nftdp_ct_l4len(pkt), doff, len;
	const uint8_t *p = pkt->data + pkt->th_off, *d;
	struct ct_expect x;
	uint16_t port;

	/* until there has been traffic both ways, packets are not read */
	if (ctinfo != IP_CT_ESTABLISHED && ctinfo != IP_CT_ESTABLISHED_REPLY)
		return NF_ACCEPT;
	if (pkt->l4proto != IPPROTO_TCP || l4len < 20)
		return NF_ACCEPT;
	doff = (uint32_t)(p[12] >> 4) * 4;
	if (doff >= l4len) /* no data (or a header past the segment) */
		return NF_ACCEPT;
	d = p + doff;
	len = l4len - doff;
	if (ctinfo == IP_CT_ESTABLISHED) {
		if (len != SANE_REQUEST_LEN)
			return NF_ACCEPT;
		/* a start request makes the next reply interesting, any other
		 * command makes it not */
		h->sane_start_requested = nftdp_rd32(d) == SANE_NET_START;
		return NF_ACCEPT;
	}
	if (!h->sane_start_requested)
		return NF_ACCEPT;
	h->sane_start_requested = false; /* this is the reply to it */
	if (len < SANE_REPLY_LEN || nftdp_rd32(d) != SANE_STATUS_SUCCESS ||
	    nftdp_rd16(d + 4) != 0) /* refused, or not a valid reply */
		return NF_ACCEPT;
	memcpy(&port, d + 6, 2);
	nftdp_ct_expect_init(&x, o->l3proto, &o->src, &o->dst, IPPROTO_TCP, 0, port);
	if (nftdp_ct_expect_related(s, e, &x, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_SANE, 0),
				    nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_SANE, 0)) != 0)
		return NF_DROP; /* "cannot add expectation" */
	return NF_ACCEPT;
}
