// SPDX-License-Identifier: BSD-3-Clause
/*
 * The tftp helper (nf_conntrack_tftp.c): a read or write request (RRQ,
 * WRQ) expects the server's answer, from any port, to the client's port.
 */
#include "ct_priv.h"

#define TFTP_OPCODE_READ 1
#define TFTP_OPCODE_WRITE 2

unsigned int nftdp_ct_tftp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				const struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	const struct nftdp_ct_tuple *r = &e->tuple[IP_CT_DIR_REPLY];
	uint32_t l4len = nftdp_ct_l4len(pkt);
	const uint8_t *p = pkt->data + pkt->th_off;
	struct ct_expect x;
	uint16_t op;

	(void)ctinfo;
	if (pkt->l4proto != IPPROTO_UDP || l4len < 8 + 2)
		return NF_ACCEPT;
	op = (uint16_t)(p[8] << 8 | p[9]);
	if (op != TFTP_OPCODE_READ && op != TFTP_OPCODE_WRITE)
		return NF_ACCEPT;
	nftdp_ct_expect_init(&x, r->l3proto, &r->src, &r->dst, IPPROTO_UDP, 0, r->dport);
	/* nf_nat_tftp: the reply goes back to the client's own port */
	if (e->status & IPS_NAT_MASK)
		nftdp_ct_expect_set_nat(&x, e, IP_CT_DIR_REPLY, e->tuple[IP_CT_DIR_ORIGINAL].sport);
	if (nftdp_ct_expect_related(s, e, &x, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_TFTP, 0),
				    nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_TFTP, 0)) != 0)
		return NF_DROP; /* "cannot add expectation" */
	return NF_ACCEPT;
}
