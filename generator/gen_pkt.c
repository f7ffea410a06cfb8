/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's packets: stream index -> (flow, step) -> frame bytes with
 * valid checksums (DPDK's rte_ip.h helpers), the live-mode stamp with its
 * incremental checksum fix, and the sink's bounds-checked parser.
 *
 * A TCP round with replies is SYN, SYN-ACK, ACK, data..., FIN-ACK (client),
 * FIN-ACK (server), ACK; without replies SYN, ACK, data..., FIN-ACK.
 * Mid-stream, a round is each data segment followed by the server's ACK of
 * it, and the connection never ends: the next round goes on from where this
 * one stopped. An ICMP round is echo request (and reply) per data packet; a
 * UDP round is its datagrams. Sequence numbers, ids and sizes follow from the seed, the
 * flow, the round number and the step, so packet j can be built alone.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "gen_priv.h"

#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129

/* what one step of a flow is */
struct step {
	bool reply;
	int data; /* data packet index, -1 for TCP control packets */
	uint8_t tcp_flags;
	uint32_t seq, ack; /* TCP */
	uint8_t icmp_type;
};

static uint16_t l3_size(uint8_t family)
{
	return family == NFTDP_GEN_IPV4 ? sizeof(struct rte_ipv4_hdr) : sizeof(struct rte_ipv6_hdr);
}

static uint16_t l4_size(uint8_t proto)
{
	return proto == NFTDP_GEN_TCP ? sizeof(struct rte_tcp_hdr) : 8;
}

/* payload bytes of data packet k of the flow's round */
static uint16_t data_payload(const struct nftdp_gen_cfg *cfg, const struct nftdp_gen_flow *f,
			     uint64_t fkey, uint64_t round, int k)
{
	uint16_t hdr = (uint16_t)(RTE_ETHER_HDR_LEN + l3_size(f->family) + l4_size(f->proto));
	uint16_t frame =
	    cfg->imix ? nftdp_gen_imix(nftdp_gen_hash(fkey, round << 8 | (uint64_t)k)) : cfg->size;

	return frame > hdr ? (uint16_t)(frame - hdr) : 0;
}

static void tcp_step(const struct nftdp_gen_cfg *cfg, const struct nftdp_gen_flow *f, uint64_t fkey,
		     uint64_t round, unsigned int n, struct step *s)
{
	unsigned int d = cfg->data;
	uint32_t cisn = (uint32_t)nftdp_gen_hash(fkey, round << 2 | 1);
	uint32_t sisn = (uint32_t)nftdp_gen_hash(fkey, round << 2 | 2);
	uint32_t off = 0, tot = 0;

	/* number the steps as with replies; without, skip SYN-ACK */
	if (!cfg->replies && n >= 1)
		n++;
	if (n >= 3) {
		unsigned int upto = n - 3 < d ? n - 3 : d;

		for (unsigned int k = 0; k < d; k++) {
			uint16_t p = data_payload(cfg, f, fkey, round, (int)k);

			if (k < upto)
				off += p;
			tot += p;
		}
	}
	s->data = -1;
	if (n == 0) {
		s->tcp_flags = RTE_TCP_SYN_FLAG;
		s->seq = cisn;
	} else if (n == 1) {
		s->reply = true;
		s->tcp_flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG;
		s->seq = sisn;
		s->ack = cisn + 1;
	} else if (n == 2) {
		s->tcp_flags = RTE_TCP_ACK_FLAG;
		s->seq = cisn + 1;
		s->ack = sisn + 1;
	} else if (n < 3 + d) {
		s->data = (int)(n - 3);
		s->tcp_flags = RTE_TCP_PSH_FLAG | RTE_TCP_ACK_FLAG;
		s->seq = cisn + 1 + off;
		s->ack = sisn + 1;
	} else if (n == 3 + d) {
		s->tcp_flags = RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG;
		s->seq = cisn + 1 + tot;
		s->ack = sisn + 1;
	} else if (n == 4 + d) {
		s->reply = true;
		s->tcp_flags = RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG;
		s->seq = sisn + 1;
		s->ack = cisn + 2 + tot;
	} else {
		s->tcp_flags = RTE_TCP_ACK_FLAG;
		s->seq = cisn + 2 + tot;
		s->ack = sisn + 2;
	}
}

/*
 * A TCP flow picked up mid-stream (nf_conntrack_tcp_loose): step 2k is data
 * segment k (PSH|ACK), step 2k+1 the server's pure ACK of it; without
 * replies only the segments. One endless connection: the ISNs of round 0,
 * and every round has the same segment sizes (data_payload of round 0), so
 * sequence numbers go on across rounds in O(data).
 */
static void tcp_mid_step(const struct nftdp_gen_cfg *cfg, const struct nftdp_gen_flow *f,
			 uint64_t fkey, uint64_t round, unsigned int n, struct step *s)
{
	unsigned int k = cfg->replies ? n / 2 : n;
	uint32_t cseq = (uint32_t)nftdp_gen_hash(fkey, 1);
	uint32_t sseq = (uint32_t)nftdp_gen_hash(fkey, 2);
	uint32_t off = 0, tot = 0;

	for (unsigned int i = 0; i < cfg->data; i++) {
		uint16_t p = data_payload(cfg, f, fkey, 0, (int)i);

		if (i < k)
			off += p;
		tot += p;
	}
	cseq += (uint32_t)(round * tot) + off;
	if (cfg->replies && (n & 1)) {
		s->reply = true;
		s->data = -1;
		s->tcp_flags = RTE_TCP_ACK_FLAG;
		s->seq = sseq;
		s->ack = cseq + data_payload(cfg, f, fkey, 0, (int)k);
	} else {
		s->data = (int)k;
		s->tcp_flags = RTE_TCP_PSH_FLAG | RTE_TCP_ACK_FLAG;
		s->seq = cseq;
		s->ack = sseq;
	}
}

static void fill_payload(uint8_t *p, uint16_t len, uint64_t key)
{
	for (uint16_t i = 0; i < len; i += 8) {
		uint64_t r = nftdp_gen_hash(key, i);
		uint16_t n = len - i < 8 ? (uint16_t)(len - i) : 8;

		memcpy(p + i, &r, n);
	}
}

uint16_t nftdp_gen_build(const struct nftdp_gen_cfg *cfg, uint64_t j, uint8_t *buf, size_t size,
			 struct nftdp_gen_meta *meta)
{
	uint32_t fi = (uint32_t)(j % cfg->flows);
	uint64_t rounds = j / cfg->flows;
	uint64_t fkey = nftdp_gen_hash(cfg->seed, fi);
	struct nftdp_gen_flow f;
	struct step s = {.data = 0};
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	uint16_t l3off = RTE_ETHER_HDR_LEN, l4off, poff, payload = 0, len;
	uint64_t round, size_round;
	unsigned int n;
	const uint8_t *a, *b;
	uint16_t pa, pb;

	if (size < NFTDP_GEN_FRAME_MAX)
		return 0;
	nftdp_gen_flow(cfg, fi, &f);
	n = (unsigned int)(rounds % f.steps);
	round = rounds / f.steps;
	size_round = round;

	if (f.proto == NFTDP_GEN_TCP && cfg->mid_stream) {
		tcp_mid_step(cfg, &f, fkey, round, n, &s);
		size_round = 0; /* every round the same sizes: tcp_mid_step */
	} else if (f.proto == NFTDP_GEN_TCP) {
		tcp_step(cfg, &f, fkey, round, n, &s);
	} else if (f.proto == NFTDP_GEN_ICMP) {
		s.data = (int)(cfg->replies ? n / 2 : n);
		s.reply = cfg->replies && (n & 1);
		if (f.family == NFTDP_GEN_IPV4)
			s.icmp_type = s.reply ? RTE_IP_ICMP_ECHO_REPLY : RTE_IP_ICMP_ECHO_REQUEST;
		else
			s.icmp_type = s.reply ? ICMP6_ECHO_REPLY : ICMP6_ECHO_REQUEST;
	} else {
		s.data = (int)n;
	}
	if (s.data >= 0)
		payload = data_payload(cfg, &f, fkey, size_round, s.data);

	l4off = (uint16_t)(l3off + l3_size(f.family));
	poff = (uint16_t)(l4off + l4_size(f.proto));
	len = (uint16_t)(poff + payload);
	memset(buf, 0, len < NFTDP_GEN_FRAME_MIN ? NFTDP_GEN_FRAME_MIN : len);

	/* a reply swaps addresses, ports and MACs */
	a = s.reply ? f.dst : f.src;
	b = s.reply ? f.src : f.dst;
	pa = s.reply ? f.dport : f.sport;
	pb = s.reply ? f.sport : f.dport;
	memcpy(eth->src_addr.addr_bytes, s.reply ? cfg->dst_mac : cfg->src_mac, 6);
	memcpy(eth->dst_addr.addr_bytes, s.reply ? cfg->src_mac : cfg->dst_mac, 6);

	meta->len = len < NFTDP_GEN_FRAME_MIN ? NFTDP_GEN_FRAME_MIN : len;
	meta->stamp_off = payload >= NFTDP_GEN_STAMP_SIZE ? poff : 0;
	meta->udp = f.proto == NFTDP_GEN_UDP;
	meta->reply = s.reply;
	meta->flow = fi;
	meta->step = (uint16_t)n;

	if (payload > 0) {
		uint8_t *p = buf + poff;
		uint16_t skip = 0;

		if (meta->stamp_off != 0) {
			uint32_t magic = rte_cpu_to_be_32(NFTDP_GEN_STAMP_MAGIC);
			uint64_t seq = rte_cpu_to_be_64(j);

			memcpy(p, &magic, 4);
			memcpy(p + 4, &seq, 8); /* TSC stays 0 until stamped */
			skip = NFTDP_GEN_STAMP_SIZE;
		}
		/* the same bytes in an echo request and its reply */
		fill_payload(p + skip, (uint16_t)(payload - skip),
			     nftdp_gen_hash(fkey, round << 8 | (uint64_t)s.data));
	}

	if (f.proto == NFTDP_GEN_TCP) {
		struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(buf + l4off);

		tcp->src_port = rte_cpu_to_be_16(pa);
		tcp->dst_port = rte_cpu_to_be_16(pb);
		tcp->sent_seq = rte_cpu_to_be_32(s.seq);
		tcp->recv_ack = rte_cpu_to_be_32(s.ack);
		tcp->data_off = (sizeof(*tcp) / 4) << 4;
		tcp->tcp_flags = s.tcp_flags;
		tcp->rx_win = rte_cpu_to_be_16(65535);
		meta->csum_off = (uint16_t)(l4off + offsetof(struct rte_tcp_hdr, cksum));
	} else if (f.proto == NFTDP_GEN_UDP) {
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(buf + l4off);

		udp->src_port = rte_cpu_to_be_16(pa);
		udp->dst_port = rte_cpu_to_be_16(pb);
		udp->dgram_len = rte_cpu_to_be_16((uint16_t)(8 + payload));
		meta->csum_off = (uint16_t)(l4off + offsetof(struct rte_udp_hdr, dgram_cksum));
	} else {
		struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(buf + l4off);

		icmp->icmp_type = s.icmp_type;
		icmp->icmp_ident = rte_cpu_to_be_16(f.sport);
		icmp->icmp_seq_nb =
		    rte_cpu_to_be_16((uint16_t)(round * cfg->data + (uint64_t)s.data));
		meta->csum_off = (uint16_t)(l4off + offsetof(struct rte_icmp_hdr, icmp_cksum));
	}

	if (f.family == NFTDP_GEN_IPV4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + l3off);
		uint16_t csum;

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(len - l3off));
		ip->packet_id = rte_cpu_to_be_16((uint16_t)nftdp_gen_hash(fkey, j));
		ip->time_to_live = cfg->ttl;
		ip->next_proto_id = f.proto == NFTDP_GEN_TCP   ? IPPROTO_TCP
				    : f.proto == NFTDP_GEN_UDP ? IPPROTO_UDP
							       : IPPROTO_ICMP;
		memcpy(&ip->src_addr, a, 4);
		memcpy(&ip->dst_addr, b, 4);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		if (f.proto == NFTDP_GEN_ICMP)
			csum = (uint16_t)~rte_raw_cksum(buf + l4off, (size_t)(len - l4off));
		else
			csum = rte_ipv4_udptcp_cksum(ip, buf + l4off);
		memcpy(buf + meta->csum_off, &csum, 2);
	} else {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(buf + l3off);
		uint16_t csum;

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)(fkey & 0xfffff));
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)(len - l4off));
		ip6->proto = f.proto == NFTDP_GEN_TCP	? IPPROTO_TCP
			     : f.proto == NFTDP_GEN_UDP ? IPPROTO_UDP
							: IPPROTO_ICMPV6;
		ip6->hop_limits = cfg->ttl;
		memcpy(ip6->src_addr, a, 16);
		memcpy(ip6->dst_addr, b, 16);
		/* the pseudo-header takes proto from the header: right for ICMPv6 too */
		csum = rte_ipv6_udptcp_cksum(ip6, buf + l4off);
		memcpy(buf + meta->csum_off, &csum, 2);
	}
	return meta->len;
}

void nftdp_gen_stamp(uint8_t *buf, const struct nftdp_gen_meta *meta, uint64_t seq, uint64_t tsc)
{
	uint8_t *p = buf + meta->stamp_off + 4;
	uint64_t v[2] = {rte_cpu_to_be_64(seq), rte_cpu_to_be_64(tsc)};
	uint16_t hc, oldw[8], neww[8];
	uint32_t sum;

	if (meta->stamp_off == 0)
		return;
	/*
	 * RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), over the 8 words that
	 * change. The stamp starts at an even offset from the L4 header, so
	 * native-order words sum consistently with the field itself.
	 */
	memcpy(oldw, p, 16);
	memcpy(neww, v, 16);
	memcpy(&hc, buf + meta->csum_off, 2);
	sum = (uint16_t)~hc;
	for (int i = 0; i < 8; i++)
		sum += (uint16_t)~oldw[i] + (uint32_t)neww[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	hc = (uint16_t)~sum;
	if (hc == 0 && meta->udp)
		hc = 0xffff; /* 0 would mean "no checksum" */
	memcpy(p, v, 16);
	memcpy(buf + meta->csum_off, &hc, 2);
}

bool nftdp_gen_parse(const uint8_t *buf, uint32_t len, struct nftdp_gen_rx *rx)
{
	uint32_t off = RTE_ETHER_HDR_LEN, end = len, l4 = 0, hl;
	uint16_t type;

	memset(rx, 0, sizeof(*rx));
	if (len < RTE_ETHER_HDR_LEN)
		return false;
	memcpy(&type, buf + 12, 2);
	for (int tags = 0; tags < 2; tags++) {
		if (type != rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN) &&
		    type != rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ))
			break;
		if (len < off + 4)
			return false;
		memcpy(&type, buf + off + 2, 2);
		off += 4;
	}
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip = (const void *)(buf + off);
		uint32_t tot;

		if (len < off + sizeof(*ip) || (ip->version_ihl >> 4) != 4)
			return false;
		hl = (uint32_t)(ip->version_ihl & 0xf) * 4;
		tot = rte_be_to_cpu_16(ip->total_length);
		if (hl < sizeof(*ip) || tot < hl || len < off + tot)
			return false;
		rx->family = NFTDP_GEN_IPV4;
		rx->l4proto = ip->next_proto_id;
		end = off + tot; /* Ethernet padding is not payload */
		/* a non-first fragment has no L4 header */
		if ((rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK) != 0)
			return true;
		l4 = off + hl;
	} else if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		const struct rte_ipv6_hdr *ip6 = (const void *)(buf + off);

		if (len < off + sizeof(*ip6))
			return false;
		end = off + sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len);
		if (end > len)
			return false;
		rx->family = NFTDP_GEN_IPV6;
		rx->l4proto = ip6->proto;
		l4 = off + sizeof(*ip6);
	} else {
		return false;
	}

	switch (rx->l4proto) {
	case IPPROTO_TCP:
		if (end < l4 + sizeof(struct rte_tcp_hdr))
			return true;
		hl = (uint32_t)(buf[l4 + 12] >> 4) * 4;
		if (hl < sizeof(struct rte_tcp_hdr) || end < l4 + hl)
			return true;
		break;
	case IPPROTO_UDP:
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		hl = 8;
		if (end < l4 + hl)
			return true;
		break;
	default:
		return true;
	}
	if (rx->l4proto == IPPROTO_TCP || rx->l4proto == IPPROTO_UDP)
		rx->dport = (uint16_t)(buf[l4 + 2] << 8 | buf[l4 + 3]);
	if (end >= l4 + hl + NFTDP_GEN_STAMP_SIZE) {
		const uint8_t *p = buf + l4 + hl;
		uint32_t magic;
		uint64_t v;

		memcpy(&magic, p, 4);
		if (magic == rte_cpu_to_be_32(NFTDP_GEN_STAMP_MAGIC)) {
			rx->stamped = true;
			memcpy(&v, p + 4, 8);
			rx->seq = rte_be_to_cpu_64(v);
			memcpy(&v, p + 12, 8);
			rx->tsc = rte_be_to_cpu_64(v);
		}
	}
	return true;
}
