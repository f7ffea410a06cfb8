/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bridge family in wire mode (docs/dataplane.md "The bridge family"):
 * the two ports of a --wire pair act as a bridge over them, and the
 * bridge-family base chains run where br_handle_frame, __br_forward and
 * br_forward_finish run NF_BR_PRE_ROUTING, NF_BR_FORWARD and
 * NF_BR_POST_ROUTING for every frame crossing it, whatever its ethertype.
 *
 * The ip/inet hooks of wire mode stay where they are: this kernel has
 * br_netfilter built in (bridge-nf-call-iptables=1), which runs them from
 * inside the bridge hooks: ip prerouting after the bridge prerouting
 * chains of priority <= NF_BR_PRI_BRNF (0; br_nf_pre_routing sits at 0
 * and chains registered after it at 0 go before it), ip forward after the
 * bridge forward chains of priority <= 0 (br_nf_forward at -1, resumed by
 * br_nf_hook_thresh past 0), ip postrouting after every bridge
 * postrouting chain (NF_BR_PRI_LAST); measured on this kernel. So the
 * pipeline splits each bridge hook there around the matching ip hook
 * (nftdp_dp_bridge_hook with a priority range).
 */
#include <arpa/inet.h>
#include <linux/if_arp.h>
#include <linux/if_packet.h>
#include <string.h>

#include <rte_mbuf.h>

#include "dataplane_priv.h"

bool nftdp_dp_bridge_on(const struct nftdp_dp *dp, const struct nftdp_vm_gen *gen)
{
	if (!gen || dp->router)
		return false;
	return nftdp_vm_gen_hook_len(gen, NFPROTO_BRIDGE, NF_BR_PRE_ROUTING) ||
	       nftdp_vm_gen_hook_len(gen, NFPROTO_BRIDGE, NF_BR_FORWARD) ||
	       nftdp_vm_gen_hook_len(gen, NFPROTO_BRIDGE, NF_BR_POST_ROUTING);
}

/* What a bridge hook's view changes of an IP packet's view, put back
 * after it: the rest (mark, priority, nftrace, payload writes) is the
 * skb's and stays, as in the kernel. */
struct ip_geom {
	uint32_t len, nh_off, th_off, skb_len;
	int32_t mac_off, inner_off;
	uint16_t protocol, fragoff;
	uint8_t l4proto, nfproto, hook, flags, pkttype;
};

static void geom_save(struct ip_geom *g, const struct nftdp_vm_pkt *p)
{
	g->len = p->len;
	g->nh_off = p->nh_off;
	g->th_off = p->th_off;
	g->skb_len = p->skb_len;
	g->mac_off = p->mac_off;
	g->inner_off = p->inner_off;
	g->protocol = p->protocol;
	g->fragoff = p->fragoff;
	g->l4proto = p->l4proto;
	g->nfproto = p->nfproto;
	g->hook = p->hook;
	g->flags = p->flags;
	g->pkttype = p->pkttype;
}

static void geom_restore(struct nftdp_vm_pkt *p, const struct ip_geom *g)
{
	p->len = g->len;
	p->nh_off = g->nh_off;
	p->th_off = g->th_off;
	p->skb_len = g->skb_len;
	p->mac_off = g->mac_off;
	p->inner_off = g->inner_off;
	p->protocol = g->protocol;
	p->fragoff = g->fragoff;
	p->l4proto = g->l4proto;
	p->nfproto = g->nfproto;
	p->hook = g->hook;
	/* writability is the mbuf's; the rest is the IP view's */
	p->flags = (uint8_t)((g->flags & (uint8_t)~NFTDP_VM_PKT_F_WRITABLE) |
			     (p->flags & NFTDP_VM_PKT_F_WRITABLE));
	/* br_netfilter's setup_pre_routing: PACKET_OTHERHOST shows as
	 * PACKET_HOST to the ip hooks */
	p->pkttype = g->pkttype;
}

/* the bridge's address: the smallest of its ports' (br_stp_recalculate_bridge_id) */
static const uint8_t *bridge_addr(const struct nftdp_dp_port *a, const struct nftdp_dp_port *b)
{
	return memcmp(a->mac.addr_bytes, b->mac.addr_bytes, 6) <= 0 ? a->mac.addr_bytes
								    : b->mac.addr_bytes;
}

uint8_t nftdp_dp_bridge_pkttype(const struct nftdp_dp_port *a, const struct nftdp_dp_port *b,
				const uint8_t *d)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const uint8_t *br = bridge_addr(a, b);

	if (d[0] & 1)
		return memcmp(d, bcast, 6) == 0 ? PACKET_BROADCAST : PACKET_MULTICAST;
	/* eth_type_trans on a port gives PACKET_OTHERHOST to a frame for
	 * another station; br_handle_frame makes one for the bridge's own
	 * address PACKET_HOST */
	return memcmp(d, br, 6) == 0 ? PACKET_HOST : PACKET_OTHERHOST;
}

void nftdp_dp_bridge_view(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, uint8_t hook,
			  uint16_t rx_port, uint16_t tx_port)
{
	unsigned int idx = (unsigned int)(p - w->view);
	const struct nftdp_dp_meta *mt = &w->meta[idx];
	const struct nftdp_dp_port *rx = &w->dp->port[rx_port];
	const struct nftdp_dp_port *tx = &w->dp->port[tx_port];

	/* the skb as the bridge has it: data at the network header after the
	 * outer tag (skb_vlan_untag), skb->len from there, padding kept; the
	 * VM reads the tag where it is, as nft_payload_copy_vlan rebuilds it */
	p->mac_off = 0;
	p->nh_off = mt->l2_nh;
	/* the whole frame (a reassembled datagram's is one linear mbuf) */
	if (w->mb[idx])
		p->len = rte_pktmbuf_data_len(w->mb[idx]);
	p->skb_len = p->len > mt->l2_nh ? p->len - mt->l2_nh : 0;
	p->protocol = htons(mt->l2_proto);
	p->inner_off = -1;
	p->th_off = p->nh_off;
	p->l4proto = 0;
	p->fragoff = 0;
	p->flags &= (uint8_t) ~(NFTDP_VM_PKT_F_L4PROTO | NFTDP_VM_PKT_F_INNER);
	/* nft_do_chain_bridge: nft_set_pktinfo_ipv4/6_validate by skb->protocol */
	if (mt->l2_proto == NFTDP_DP_ETH_P_IP || mt->l2_proto == NFTDP_DP_ETH_P_IPV6)
		nftdp_vm_pkt_parse_ip(p);
	p->nfproto = NFPROTO_BRIDGE;
	p->hook = hook;
	p->pkttype = nftdp_dp_bridge_pkttype(rx, tx, p->data);
	p->br_addr = bridge_addr(rx, tx); /* ebtables' dnat and redirect */
	p->iif = rx->ifindex;
	p->iifname = rx->name;
	p->iiftype = ARPHRD_ETHER;
	if (hook == NF_BR_PRE_ROUTING) {
		p->oif = 0;
		p->oifname = NULL;
		p->oiftype = 0;
	} else {
		p->oif = tx->ifindex;
		p->oifname = tx->name;
		p->oiftype = ARPHRD_ETHER;
	}
}

static enum nftdp_dp_stage stage_of(uint8_t hook)
{
	switch (hook) {
	case NF_BR_PRE_ROUTING:
		return NFTDP_DP_ST_BR_PREROUTING;
	case NF_BR_FORWARD:
		return NFTDP_DP_ST_BR_FORWARD;
	default:
		return NFTDP_DP_ST_BR_POSTROUTING;
	}
}

void nftdp_dp_bridge_hook(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint8_t hook,
			  int32_t prio_min, int32_t prio_max, struct nftdp_vm_pkt **ipl,
			  unsigned int *nip, struct nftdp_vm_pkt **other, unsigned int *nother,
			  uint16_t rx_port)
{
	struct nftdp_vm_pkt *all[NFTDP_VM_BURST_MAX];
	struct ip_geom geom[NFTDP_VM_BURST_MAX];
	unsigned int v[NFTDP_VM_BURST_MAX];
	unsigned int n = 0, k, ni = 0, no = 0;

	if (!nftdp_vm_gen_hook_has_prio(gen, NFPROTO_BRIDGE, hook, prio_min, prio_max))
		return;
	/* every frame crossing the bridge, in arrival order (views are
	 * indexed by arrival) */
	for (unsigned int i = 0, j = 0; i < *nip || j < *nother;) {
		struct nftdp_vm_pkt *p =
		    (j >= *nother || (i < *nip && ipl[i] < other[j])) ? ipl[i++] : other[j++];

		geom_save(&geom[p - w->view], p);
		nftdp_dp_bridge_view(w, p, hook, rx_port, w->dp->wire[rx_port]);
		all[n++] = p;
	}
	if (n == 0)
		return;
	nftdp_vm_gen_run_hook_burst_prio(gen, NFPROTO_BRIDGE, hook, prio_min, prio_max, all, n, v,
					 &w->ctx);
	k = nftdp_dp_settle(w, stage_of(hook), all, n, v, rx_port);
	/* back into the IP packets and the rest, each with its own view */
	for (unsigned int i = 0; i < k; i++) {
		struct nftdp_vm_pkt *p = all[i];
		const struct nftdp_dp_meta *mt = &w->meta[p - w->view];

		geom_restore(p, &geom[p - w->view]);
		if (mt->ip_proto == NFTDP_DP_ETH_P_IP || mt->ip_proto == NFTDP_DP_ETH_P_IPV6)
			ipl[ni++] = p;
		else
			other[no++] = p;
	}
	*nip = ni;
	*nother = no;
}

void nftdp_dp_bridge_arpreply(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, uint16_t rx_port)
{
	uint32_t n = nftdp_dp_arpreply_build(&p->out, w->reply, sizeof(w->reply));

	p->out.arpreply = false;
	if (n && p < &w->view[NFTDP_VM_BURST_MAX]) /* nftdp's own frames get none */
		nftdp_dp_send_built(w, rx_port, false, n, p);
}
