// SPDX-License-Identifier: BSD-3-Clause
/*
 * synproxy's conntrack side (nf_synproxy_core.c): the synproxy extension
 * (struct nf_conn_synproxy: isn, its, tsoff) that the SYN synproxy sends to
 * the server gives its new entry, and ipv4_synproxy_hook /
 * ipv6_synproxy_hook, which run on every packet of such an entry at
 * postrouting and input, just before confirm (NF_IP_PRI_CONNTRACK_CONFIRM
 * - 1): they note the proxy's ISN and timestamp from that SYN, take the
 * server's SYN-ACK (the dataplane answers it with the ACK to the server and
 * the window update to the client, vm/synproxy.c's builders), set the
 * sequence offset of the reply direction (nf_ct_seqadj_init; seqadj.c
 * applies it at confirm) and move TCP timestamps by the timestamp offset.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/netfilter/nf_synproxy.h>

#include "ct_priv.h"

bool nftdp_ct_synproxy_new(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt)
{
	struct nftdp_ct_entry *e;
	unsigned int ctinfo;

	if (!pkt->ct)
		return false;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	/* the template's extensions go to a new entry only (init_conntrack) */
	if (ctinfo != IP_CT_NEW || (e->status & IPS_CONFIRMED))
		return false;
	/* nfct_seqadj_ext_add and nfct_synproxy_ext_add: both start zeroed */
	e->in_use |= CT_IN_USE_SEQADJ_EXT | CT_IN_USE_SYNPROXY_EXT;
	memset(&s->help[e - s->entries].synproxy, 0, sizeof(s->help[0].synproxy));
	return true;
}

void nftdp_ct_synproxy_join(struct nftdp_vm_pkt *nskb, const struct nftdp_vm_pkt *skb)
{
	struct nftdp_ct_entry *e;
	unsigned int ctinfo;

	if (!skb->ct)
		return;
	e = nftdp_ct_entry_of(skb->ct, &ctinfo);
	/* synproxy_send_client_ack: skb_nfct(skb), IP_CT_ESTABLISHED_REPLY */
	e->refs++;
	nskb->ct = (void *)((uintptr_t)e | IP_CT_ESTABLISHED_REPLY);
	nskb->ct_ops = skb->ct_ops;
	nskb->ct_untracked = false;
}

/* nf_ct_seqadj_init: the offset of ctinfo's direction, from the start */
static void seqadj_init(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, int dir, int32_t off)
{
	struct ct_help *h = &s->help[e - s->entries];

	if (off == 0)
		return;
	if (!(e->status & IPS_SEQ_ADJUST))
		memset(h->seq, 0, sizeof(h->seq));
	e->status |= IPS_SEQ_ADJUST;
	h->seq[dir].offset_before = off;
	h->seq[dir].offset_after = off;
}

enum nftdp_ct_synproxy_act nftdp_ct_synproxy_hook(struct nftdp_ct_shard *s,
						  struct nftdp_vm_pkt *pkt,
						  struct nftdp_vm_synproxy_opts *opts,
						  uint16_t *maxwin,
						  struct nftdp_vm_synproxy_stats *st)
{
	struct nftdp_ct_entry *e;
	struct ct_help *h;
	unsigned int ctinfo;
	uint32_t l4len;
	uint8_t *th, fl;
	int dir;

	if (!pkt->ct)
		return NFTDP_CT_SYNPROXY_ACCEPT;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	if (!(e->in_use & CT_IN_USE_SYNPROXY_EXT) || pkt->l4proto != IPPROTO_TCP ||
	    e->tuple[0].l4proto != IPPROTO_TCP)
		return NFTDP_CT_SYNPROXY_ACCEPT;
	l4len = nftdp_ct_l4len(pkt);
	/* skb_header_pointer of the TCP header */
	if (pkt->fragoff || l4len < 20)
		return NFTDP_CT_SYNPROXY_DROP;
	h = &s->help[e - s->entries];
	th = pkt->data + pkt->th_off;
	fl = th[13];
	dir = ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
	memset(opts, 0, sizeof(*opts));
	switch (e->proto.tcp.state) {
	case TCP_CONNTRACK_CLOSE:
		if ((fl & 0x04) && dir != IP_CT_DIR_ORIGINAL) {
			/* the server's RST instead of its SYN-ACK */
			seqadj_init(s, e, dir, (int32_t)(h->synproxy.isn - nftdp_rd32(th + 4) + 1));
			break;
		}
		if (!(fl & 0x02) || (fl & 0x10) || dir != IP_CT_DIR_ORIGINAL)
			break;
		/* reopened: the adjustments start again with the new SYN
		 * (nf_ct_seqadj_init with 0 leaves the old offsets) */
		h->synproxy.tsoff = 0;
		st->conn_reopened++;
		/* fall through */
	case TCP_CONNTRACK_SYN_SENT:
		if (!nftdp_vm_synproxy_parse_options(th, l4len, opts))
			return NFTDP_CT_SYNPROXY_DROP;
		if (!(fl & 0x02) && (fl & 0x10) && dir == IP_CT_DIR_ORIGINAL)
			/* the client's ACK again: synproxy_recv_client_ack
			 * with seq + 1 (a keep-alive's SND.NXT - 1) */
			return NFTDP_CT_SYNPROXY_RETRANS;
		h->synproxy.isn = nftdp_rd32(th + 8);
		if (opts->options & NF_SYNPROXY_OPT_TIMESTAMP)
			h->synproxy.its = opts->tsecr;
		nftdp_ct_event_cache(e, IPCT_SYNPROXY);
		break;
	case TCP_CONNTRACK_SYN_RECV:
		if (!(fl & 0x02) || !(fl & 0x10))
			break;
		if (!nftdp_vm_synproxy_parse_options(th, l4len, opts))
			return NFTDP_CT_SYNPROXY_DROP;
		if (opts->options & NF_SYNPROXY_OPT_TIMESTAMP) {
			h->synproxy.tsoff = opts->tsval - h->synproxy.its;
			nftdp_ct_event_cache(e, IPCT_SYNPROXY);
		}
		opts->options &= (uint8_t) ~(NF_SYNPROXY_OPT_MSS | NF_SYNPROXY_OPT_WSCALE |
					     NF_SYNPROXY_OPT_SACK_PERM);
		*maxwin = (uint16_t)e->proto.tcp.seen[IP_CT_DIR_ORIGINAL].td_maxwin;
		/* the caller sends the ACK to the server first (it passes
		 * conntrack before the offset is set), then the window update
		 * to the client, which the offset moves at confirm */
		return NFTDP_CT_SYNPROXY_SYNACK;
	default:
		break;
	}
	/* synproxy_tstamp_adjust */
	if (!nftdp_vm_synproxy_tstamp_adjust(th, l4len, dir == IP_CT_DIR_REPLY, h->synproxy.tsoff))
		return NFTDP_CT_SYNPROXY_DROP;
	return NFTDP_CT_SYNPROXY_ACCEPT;
}

int32_t nftdp_ct_synproxy_seqadj(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt)
{
	struct nftdp_ct_entry *e;
	unsigned int ctinfo;
	const uint8_t *th = pkt->data + pkt->th_off;
	int32_t off;

	if (!pkt->ct)
		return 0;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	/* the kernel's ACK to the server went through confirm, its events
	 * delivered (nf_ct_deliver_cached_events), before the offset was
	 * set; nftdp's waits in this burst's replies: deliver them now, so
	 * that IPCT_SEQADJ comes in an event of its own as the kernel's */
	if (e->ev_pending && (e->status & IPS_CONFIRMED) && !(e->status & IPS_DYING)) {
		nftdp_ct_event_push(s, e, e->ev_pending);
		e->ev_pending = 0;
	}
	off = (int32_t)(s->help[e - s->entries].synproxy.isn - nftdp_rd32(th + 4));
	seqadj_init(s, e, ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL, off);
	nftdp_ct_event_cache(e, IPCT_SEQADJ);
	return off;
}

bool nftdp_ct_synproxy_info(const struct nftdp_ct_entry *e, uint32_t out[3])
{
	const struct ct_help *h;

	if (!(e->in_use & CT_IN_USE_SYNPROXY_EXT))
		return false;
	h = &e->shard->help[e - e->shard->entries];
	out[0] = h->synproxy.isn;
	out[1] = h->synproxy.its;
	out[2] = h->synproxy.tsoff;
	return true;
}
