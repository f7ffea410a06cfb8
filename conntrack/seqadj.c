// SPDX-License-Identifier: BSD-3-Clause
/*
 * TCP sequence adjustment (nf_conntrack_seqadj.c) and the NAT helpers'
 * packet mangling (nf_nat_helper.c's __nf_nat_mangle_tcp_packet). When a
 * helper changes the length of a TCP payload (nf_nat_ftp writing another
 * address), every later sequence number of that direction, and every ack
 * and SACK block the peer sends back, is off by the difference: the
 * correction is kept per direction in the entry's ct_help (the kernel's
 * seqadj extension) and applied at confirm, after the helper, as nf_confirm
 * does. ct_tcp.c's window check takes the peer's acks back by the same
 * offset (nf_ct_seq_offset in tcp_in_window).
 */
#include <arpa/inet.h>
#include <netinet/tcp.h>

#include "ct_priv.h"

static bool after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* nf_ct_seqadj_set's update: a second change before the first one's
 * position (a retransmission) is not recorded again */
void nftdp_ct_seqadj_record(struct nftdp_ct_seqadj *this_way, uint32_t seq, int32_t off)
{
	if (this_way->offset_before == this_way->offset_after ||
	    before(this_way->correction_pos, seq)) {
		this_way->correction_pos = seq;
		this_way->offset_before = this_way->offset_after;
		this_way->offset_after =
		    (int32_t)((uint32_t)this_way->offset_after + (uint32_t)off);
	}
}

int32_t nftdp_ct_seqadj_offset(const struct nftdp_ct_seqadj *this_way, uint32_t seq)
{
	return after(seq, this_way->correction_pos) ? this_way->offset_after
						    : this_way->offset_before;
}

/* the 32-bit field at p becomes v, the TCP checksum follows (inet_proto_csum_replace4) */
static void replace4(uint8_t *th, uint8_t *p, uint32_t v)
{
	uint8_t to[4];

	nftdp_wr32(to, v);
	nftdp_inet_csum_replace(th + 16, p, to, 4);
	memcpy(p, to, 4);
}

/* nf_ct_sack_block_adjust: the peer's SACK blocks are in the sequence
 * space after the correction of the other direction */
static void sack_block_adjust(uint8_t *th, uint32_t off, uint32_t end,
			      const struct nftdp_ct_seqadj *seq)
{
	for (; off < end; off += 8) {
		for (unsigned int k = 0; k < 8; k += 4) {
			uint32_t v = nftdp_rd32(th + off + k);

			if (after(v - (uint32_t)seq->offset_before, seq->correction_pos))
				v -= (uint32_t)seq->offset_after;
			else
				v -= (uint32_t)seq->offset_before;
			replace4(th, th + off + k, v);
		}
	}
}

/* nf_ct_sack_adjust */
static bool sack_adjust(uint8_t *th, const struct nftdp_ct_seqadj *other_way)
{
	uint32_t optoff = 20, optend = (uint32_t)(th[12] >> 4) * 4;

	while (optoff < optend) {
		const uint8_t *op = th + optoff;

		switch (op[0]) {
		case TCPOPT_EOL:
			return true;
		case TCPOPT_NOP:
			optoff++;
			continue;
		default:
			/* no partial options */
			if (optoff + 1 == optend || optoff + op[1] > optend || op[1] < 2)
				return false;
			if (op[0] == TCPOPT_SACK && op[1] >= 2 + 8 && ((op[1] - 2) % 8) == 0)
				sack_block_adjust(th, optoff + 2, optoff + op[1], other_way);
			optoff += op[1];
		}
	}
	return true;
}

bool nftdp_ct_seqadj_tcp(uint8_t *th, const struct nftdp_ct_seqadj *this_way,
			 const struct nftdp_ct_seqadj *other_way)
{
	uint32_t seq = nftdp_rd32(th + 4), ack = nftdp_rd32(th + 8);
	int32_t seqoff, ackoff;

	seqoff = nftdp_ct_seqadj_offset(this_way, seq);
	replace4(th, th + 4, seq + (uint32_t)seqoff);
	if (!(th[13] & TH_ACK))
		return true;
	if (after(ack - (uint32_t)other_way->offset_before, other_way->correction_pos))
		ackoff = other_way->offset_after;
	else
		ackoff = other_way->offset_before;
	replace4(th, th + 8, ack - (uint32_t)ackoff);
	return sack_adjust(th, other_way);
}

bool nftdp_ct_seqadj_ext(const struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e)
{
	(void)s;
	/* nf_nat_setup_info adds it to a helper's connection it translates,
	 * nft_ct_helper_obj_eval to a translated connection it gives a
	 * helper, ctnetlink to every entry it makes */
	return (e->in_use & CT_IN_USE_SEQADJ_EXT) || (e->status & IPS_SEQ_ADJUST) ||
	       (e->helper && (e->status & IPS_NAT_MASK));
}

void nftdp_ct_seqadj_set(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, int dir, uint32_t seq,
			 int32_t off)
{
	struct ct_help *h = &s->help[e - s->entries];

	if (off == 0 || !nftdp_ct_seqadj_ext(s, e))
		return; /* the kernel WARNs "Missing nfct_seqadj_ext_add()" */
	if (!(e->status & IPS_SEQ_ADJUST))
		memset(h->seq, 0, sizeof(h->seq)); /* the extension starts zeroed */
	e->status |= IPS_SEQ_ADJUST;
	nftdp_ct_seqadj_record(&h->seq[dir], seq, off);
}

int32_t nftdp_ct_seq_offset(const struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e, int dir,
			    uint32_t seq)
{
	if (!(e->status & IPS_SEQ_ADJUST))
		return 0;
	return nftdp_ct_seqadj_offset(&s->help[e - s->entries].seq[dir], seq);
}

bool nftdp_ct_seq_adjust(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			 struct nftdp_vm_pkt *pkt, int dir)
{
	const struct ct_help *h = &s->help[e - s->entries];
	uint32_t l4len = nftdp_ct_l4len(pkt);
	uint8_t *th = pkt->data + pkt->th_off;

	/* an ICMP error related to the connection: the kernel would read its
	 * header as a TCP one; nftdp leaves it alone (docs/differences.md) */
	if (pkt->l4proto != IPPROTO_TCP)
		return true;
	/* skb_ensure_writable(protoff + sizeof(tcph)), then of the options */
	if (l4len < 20 || (uint32_t)(th[12] >> 4) * 4 > l4len)
		return false;
	return nftdp_ct_seqadj_tcp(th, &h->seq[dir], &h->seq[!dir]);
}

/* __skb_trim after a shorter replacement: the packet ends at len */
static bool shrink_to(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint32_t len)
{
	if (s->cfg.pkt_resize)
		return s->cfg.pkt_resize(s->cfg.pkt_resize_arg, pkt, len);
	pkt->skb_len -= pkt->len - len;
	pkt->len = len;
	return true;
}

/* the IP header's length for a datagram now ending at len (and the IPv4
 * header checksum) */
static void ip_len_set(struct nftdp_vm_pkt *pkt, uint32_t len, bool v6)
{
	uint8_t *nh = pkt->data + pkt->nh_off;

	if (!v6) {
		nftdp_wr16(nh + 2, (uint16_t)(len - pkt->nh_off));
		nh[10] = nh[11] = 0;
		nftdp_st16(nh + 10, nftdp_ip_fast_csum(nh, (uint32_t)(nh[0] & 15) * 4));
	} else {
		nftdp_wr16(nh + 4, (uint16_t)(len - pkt->nh_off - 40));
	}
}

bool nftdp_ct_nat_mangle_tcp(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			     struct nftdp_vm_pkt *pkt, int dir, uint32_t match_off,
			     uint32_t match_len, const char *rep, uint32_t rep_len)
{
	return nftdp_ct_nat_mangle_tcp_adj(s, e, pkt, dir, match_off, match_len, rep, rep_len,
					   true);
}

bool nftdp_ct_nat_mangle_tcp_adj(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				 struct nftdp_vm_pkt *pkt, int dir, uint32_t match_off,
				 uint32_t match_len, const char *rep, uint32_t rep_len, bool adjust)
{
	uint32_t l4len = nftdp_ct_l4len(pkt), end = pkt->th_off + l4len, dataoff, len;
	uint8_t *nh = pkt->data + pkt->nh_off, *th, *d;
	bool v6 = e->tuple[0].l3proto == NFPROTO_IPV6;
	uint32_t datalen;

	th = pkt->data + pkt->th_off;
	dataoff = (uint32_t)(th[12] >> 4) * 4;
	if (dataoff + match_off + match_len > l4len)
		return false;
	len = end - match_len + rep_len;
	/* enlarge_skb: an IP datagram stays below 64 KiB */
	if (rep_len > match_len && len - pkt->nh_off > 65535)
		return false;
	d = th + dataoff + match_off;
	if (rep_len > match_len) {
		if (!s->cfg.pkt_resize || !s->cfg.pkt_resize(s->cfg.pkt_resize_arg, pkt, len))
			return false;
		nh = pkt->data + pkt->nh_off;
		th = pkt->data + pkt->th_off;
		d = th + dataoff + match_off;
	}
	/* mangle_contents: move what follows, write the replacement */
	memmove(d + rep_len, d + match_len, end - (uint32_t)(d + match_len - pkt->data));
	memcpy(d, rep, rep_len);
	if (rep_len < match_len) {
		if (!shrink_to(s, pkt, len))
			return false;
		nh = pkt->data + pkt->nh_off;
		th = pkt->data + pkt->th_off;
	}
	ip_len_set(pkt, len, v6);
	/* nf_nat_csum_recalc on a forwarded packet: the whole segment again */
	datalen = len - pkt->th_off;
	th[16] = th[17] = 0;
	nftdp_st16(th + 16,
		   nftdp_csum_fold(nftdp_csum_partial(
		       th, datalen, nftdp_csum_pseudo(nh, v6, IPPROTO_TCP, (uint16_t)datalen))));
	if (adjust && rep_len != match_len)
		nftdp_ct_seqadj_set(s, e, dir, nftdp_rd32(th + 4),
				    (int32_t)rep_len - (int32_t)match_len);
	return true;
}

bool nftdp_ct_nat_mangle_udp(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint32_t match_off,
			     uint32_t match_len, const char *rep, uint32_t rep_len)
{
	uint32_t l4len = nftdp_ct_l4len(pkt), end = pkt->th_off + l4len, len, datalen;
	bool v6 = pkt->nfproto == NFPROTO_IPV6;
	uint8_t *nh, *th, *d;
	uint16_t c;

	if (l4len < 8 || 8 + match_off + match_len > l4len)
		return false;
	len = end - match_len + rep_len;
	/* enlarge_skb: an IP datagram stays below 64 KiB */
	if (rep_len > match_len && len - pkt->nh_off > 65535)
		return false;
	if (rep_len > match_len &&
	    (!s->cfg.pkt_resize || !s->cfg.pkt_resize(s->cfg.pkt_resize_arg, pkt, len)))
		return false;
	th = pkt->data + pkt->th_off;
	d = th + 8 + match_off;
	/* mangle_contents: move what follows, write the replacement */
	memmove(d + rep_len, d + match_len, end - (uint32_t)(d + match_len - pkt->data));
	memcpy(d, rep, rep_len);
	if (rep_len < match_len && !shrink_to(s, pkt, len))
		return false;
	nh = pkt->data + pkt->nh_off;
	th = pkt->data + pkt->th_off;
	ip_len_set(pkt, len, v6);
	datalen = len - pkt->th_off;
	nftdp_wr16(th + 4, (uint16_t)datalen);
	/* fix the checksum only if there was one */
	if (!th[6] && !th[7])
		return true;
	th[6] = th[7] = 0;
	c = nftdp_csum_fold(nftdp_csum_partial(
	    th, datalen, nftdp_csum_pseudo(nh, v6, IPPROTO_UDP, (uint16_t)datalen)));
	if (!c)
		c = 0xffff; /* CSUM_MANGLED_0 */
	nftdp_st16(th + 6, c);
	return true;
}
