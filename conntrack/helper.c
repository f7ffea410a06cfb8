// SPDX-License-Identifier: BSD-3-Clause
/*
 * Conntrack helpers (nf_conntrack_helper.c): the helper a `ct helper set`
 * rule gives a new connection (nft_ct_helper_obj_eval, through
 * nftdp_vm_ct_ops.helper), and the call of its help function for every
 * accepted packet of the connection at confirm time, as nf_confirm does.
 * The helpers: helper_ftp.c, helper_tftp.c, helper_irc.c, helper_amanda.c,
 * helper_bcast.c (netbios-ns, snmp), helper_snmp.c (snmp's NAT part,
 * snmp_trap), helper_pptp.c, helper_sip.c, helper_h323.c (Q.931, H.245, RAS),
 * helper_sane.c; expectations: expect.c.
 */
#include "ct_priv.h"

static const char *const helper_names[NFTDP_VM_CT_HELPER_MAX] = {
    [NFTDP_VM_CT_HELPER_FTP] = "ftp",
    [NFTDP_VM_CT_HELPER_TFTP] = "tftp",
    [NFTDP_VM_CT_HELPER_IRC] = "irc",
    [NFTDP_VM_CT_HELPER_AMANDA] = "amanda",
    [NFTDP_VM_CT_HELPER_NETBIOS_NS] = "netbios-ns",
    [NFTDP_VM_CT_HELPER_SNMP] = "snmp",
    [NFTDP_VM_CT_HELPER_PPTP] = "pptp",
    [NFTDP_VM_CT_HELPER_SIP] = "sip",
    [NFTDP_VM_CT_HELPER_SNMP_TRAP] = "snmp_trap",
    [NFTDP_VM_CT_HELPER_Q931] = "Q.931",
    [NFTDP_VM_CT_HELPER_H245] = "H.245",
    [NFTDP_VM_CT_HELPER_RAS] = "RAS",
    [NFTDP_VM_CT_HELPER_SANE] = "sane",
};

const char *nftdp_ct_helper_name(uint8_t helper)
{
	return helper < NFTDP_VM_CT_HELPER_MAX ? helper_names[helper] : NULL;
}

/* H323_RTP_CHANNEL_MAX (nf_conntrack_h323_main.c) */
#define H323_CHANNELS 4

/*
 * Each helper's expect_policy array, as the kernel's modules declare it
 * (module parameters at their defaults: irc's max_dcc_channels and
 * dcc_timeout, netbios-ns's and snmp's timeout); sip's by
 * sip_expectation_classes.
 */
static const struct ct_exp_policy exp_policies[NFTDP_VM_CT_HELPER_MAX][CT_SIP_EXPECT_MAX + 1] =
    {
	[NFTDP_VM_CT_HELPER_FTP] = {{1, 5 * 60}},
	[NFTDP_VM_CT_HELPER_TFTP] = {{1, 5 * 60}},
	[NFTDP_VM_CT_HELPER_IRC] = {{8, 300}},
	[NFTDP_VM_CT_HELPER_AMANDA] = {{3, 180}},
	[NFTDP_VM_CT_HELPER_NETBIOS_NS] = {{1, 3}},
	[NFTDP_VM_CT_HELPER_SNMP] = {{1, 30}},
	[NFTDP_VM_CT_HELPER_SNMP_TRAP] = {{0, 180}},
	[NFTDP_VM_CT_HELPER_PPTP] = {{2, 5 * 60}},
	[NFTDP_VM_CT_HELPER_SIP] =
	    {
		[CT_SIP_EXPECT_SIGNALLING] = {1, 3 * 60},
		[CT_SIP_EXPECT_AUDIO] = {4, 3 * 60},
		[CT_SIP_EXPECT_VIDEO] = {4, 3 * 60},
		[CT_SIP_EXPECT_IMAGE] = {2, 3 * 60},
	    },
	[NFTDP_VM_CT_HELPER_Q931] = {{H323_CHANNELS * 4 + 4, 240}}, /* + T.120 and H.245 */
	[NFTDP_VM_CT_HELPER_H245] = {{H323_CHANNELS * 4 + 2, 240}}, /* + T.120 */
	[NFTDP_VM_CT_HELPER_RAS] = {{32, 240}},
	[NFTDP_VM_CT_HELPER_SANE] = {{1, 5 * 60}},
};

uint8_t nftdp_ct_exp_class_max(uint8_t helper)
{
	return helper == NFTDP_VM_CT_HELPER_SIP ? CT_SIP_EXPECT_MAX : 0;
}

const struct ct_exp_policy *nftdp_ct_exp_policy(uint8_t helper, uint8_t class)
{
	uint8_t max = nftdp_ct_exp_class_max(helper);

	if (helper == NFTDP_VM_CT_HELPER_NONE || helper >= NFTDP_VM_CT_HELPER_MAX)
		return NULL;
	return &exp_policies[helper][class > max ? max : class];
}

/* nf_ct_helper_ext_add + rcu_assign_pointer(help->helper) + IPS_HELPER */
void nftdp_ct_helper_assign(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, uint8_t helper)
{
	struct ct_help *h = &s->help[e - s->entries];

	/* an expected connection keeps its master link */
	memset(h->seq_aft_nl, 0, sizeof(h->seq_aft_nl));
	memset(h->seq_aft_nl_num, 0, sizeof(h->seq_aft_nl_num));
	memset(&h->pptp, 0, sizeof(h->pptp));
	h->sip_invite_cseq = h->sip_register_cseq = 0;
	h->sip_forced_dport = 0;
	h->h323_tpkt_len[0] = h->h323_tpkt_len[1] = 0;
	h->h323_timeout = 0;
	h->sane_start_requested = false;
	memset(h->h323_sig_port, 0, sizeof(h->h323_sig_port));
	memset(h->h323_rtp_port, 0, sizeof(h->h323_rtp_port));
	e->helper = helper;
	e->status |= IPS_HELPER;
}

/* nf_confirm's helper->help(); NF_ACCEPT or NF_DROP */
unsigned int nftdp_ct_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			   struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	unsigned int v = NF_ACCEPT;

	if (ctinfo == IP_CT_RELATED_REPLY)
		return NF_ACCEPT;
	switch (e->helper) {
	case NFTDP_VM_CT_HELPER_FTP:
		v = nftdp_ct_ftp_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_TFTP:
		v = nftdp_ct_tftp_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_IRC:
		v = nftdp_ct_irc_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_AMANDA:
		v = nftdp_ct_amanda_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_NETBIOS_NS:
		v = nftdp_ct_bcast_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_SNMP:
		v = nftdp_ct_snmp_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_SNMP_TRAP:
		v = nftdp_ct_snmp_trap_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_PPTP:
		v = nftdp_ct_pptp_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_SIP:
		v = nftdp_ct_sip_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_Q931:
		v = nftdp_ct_q931_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_H245:
		v = nftdp_ct_h245_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_RAS:
		v = nftdp_ct_ras_help(s, e, pkt, ctinfo);
		break;
	case NFTDP_VM_CT_HELPER_SANE:
		v = nftdp_ct_sane_help(s, e, pkt, ctinfo);
		break;
	}
	if (v != NF_ACCEPT)
		s->st.helper_drop++;
	return v;
}
