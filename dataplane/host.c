/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exception path (--host-ports, docs/dataplane.md "The exception
 * path"): each data port gets a kernel interface of its MAC (net_tap, or
 * net_virtio_user over /dev/vhost-net), an extra DPDK port this file owns.
 * Packets for the box leave pipeline.c at the routing decision "local" and
 * run the input hook (ip_local_deliver) before the host gets them; what
 * the host sends runs output and postrouting (__ip_local_out, ip_output)
 * and leaves by the data port. A token bucket per worker bounds what goes
 * to the host, so a flood at the box costs tx to the host nothing beyond
 * the limit and never blocks the worker.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h> /* after netinet/in.h */
#include <linux/netfilter_arp.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dataplane_priv.h"

int nftdp_dp_host_setup(struct nftdp_dp *dp, enum nftdp_dp_host_pmd pmd, const char *const *names)
{
	uint16_t n_data = dp->n_ports;

	for (uint16_t p = 0; p < n_data; p++) {
		struct nftdp_dp_port *pt = &dp->port[p];
		struct rte_ether_addr mac;
		char dev[RTE_DEV_NAME_MAX_LEN], args[256], devargs[320];
		char macs[RTE_ETHER_ADDR_FMT_SIZE];
		const char *name;
		uint16_t h;
		int ret;

		if (!pt->used)
			continue;
		name = names[p] ? names[p] : pt->name;
		ret = rte_eth_macaddr_get(p, &mac);
		if (ret < 0)
			return ret;
		rte_ether_format_addr(macs, sizeof(macs), &mac);
		if (pmd == NFTDP_DP_HOST_VIRTIO) {
			/* vhost-net does the copies in the kernel: no syscall per packet */
			snprintf(dev, sizeof(dev), "net_virtio_user_nftdp%u", p);
			snprintf(args, sizeof(args),
				 "path=/dev/vhost-net,iface=%s,mac=%s,queues=%u,queue_size=1024",
				 name, macs, dp->n_workers ? dp->n_workers : 1);
		} else {
			snprintf(dev, sizeof(dev), "net_tap_nftdp%u", p);
			snprintf(args, sizeof(args), "iface=%s,mac=%s", name, macs);
		}
		/* rte_dev_probe: the vdev bus by the name (no link to it) */
		snprintf(devargs, sizeof(devargs), "%s,%s", dev, args);
		ret = rte_dev_probe(devargs);
		if (ret < 0) {
			fprintf(stderr, "nftdp: host interface %s for port %u (%s %s): %s\n", name,
				p, dev, args, strerror(-ret));
			return ret;
		}
		ret = rte_eth_dev_get_port_by_name(dev, &h);
		if (ret < 0 || h >= RTE_MAX_ETHPORTS)
			return ret < 0 ? ret : -ENOSPC;
		dp->port[h] = (struct nftdp_dp_port){
		    .port_id = h, .used = true, .ifindex = h + 1u, .is_host = true, .host_peer = p};
		snprintf(dp->port[h].name, sizeof(dp->port[h].name), "%s", name);
		pt->has_host = true;
		pt->host_peer = h;
		dp->wire[h] = p;
		if (h + 1u > dp->n_ports)
			dp->n_ports = (uint16_t)(h + 1u);
		printf("nftdp: host interface %s (%s, %s) for port %u %s\n", name,
		       pmd == NFTDP_DP_HOST_VIRTIO ? "virtio-user" : "tap", macs, p, pt->name);
	}
	dp->host = true;
	return 0;
}

void nftdp_dp_host_addrs(struct nftdp_dp *dp)
{
	struct ifaddrs *ifa, *i;

	if (getifaddrs(&ifa) < 0)
		return;
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		struct nftdp_dp_port *pt = &dp->port[p];
		const char *name;
		uint32_t a = 0;

		if (!pt->used || !pt->has_host)
			continue;
		name = dp->port[pt->host_peer].name;
		/* the kernel lists a device's primary address first */
		for (i = ifa; i && !a; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    strcmp(i->ifa_name, name) == 0)
				a = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		__atomic_store_n(&pt->host_addr4, a, __ATOMIC_RELAXED);
	}
	freeifaddrs(ifa);
}

void nftdp_dp_host_workers(struct nftdp_dp *dp)
{
	uint64_t hz = rte_get_tsc_hz(), now = rte_rdtsc();

	for (unsigned int i = 0; i < dp->n_workers; i++)
		nftdp_dp_tb_init(&dp->w[i].host_tb, dp->host_rate, dp->host_burst, hz, now);
}

static bool own_has(const struct nftdp_dp *dp, bool v4, const uint8_t *a)
{
	if (v4) {
		for (uint16_t i = 0; i < dp->own.n4; i++)
			if (memcmp(dp->own.addr4[i], a, 4) == 0)
				return true;
	} else {
		for (uint16_t i = 0; i < dp->own.n6; i++)
			if (memcmp(dp->own.addr6[i], a, 16) == 0)
				return true;
	}
	return false;
}

bool nftdp_dp_host_local(const struct nftdp_dp *dp, bool v4, const uint8_t *iph)
{
	const uint8_t *dst = iph + (v4 ? 16 : 24);

	if (v4) {
		/* multicast and limited broadcast: the host filters groups */
		if ((dst[0] & 0xf0) == 0xe0 ||
		    (dst[0] == 0xff && dst[1] == 0xff && dst[2] == 0xff && dst[3] == 0xff))
			return true;
	} else if (dst[0] == 0xff || (dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80)) {
		/* multicast (ND, MLD) and link-local, never forwarded */
		return true;
	}
	return own_has(dp, v4, dst) || nftdp_dp_fib_local(dp, v4, dst);
}

/* hand m (view p, received on rx_port) to rx_port's host interface */
static void to_host(struct nftdp_dp_worker *w, struct rte_mbuf *m, const struct nftdp_vm_pkt *p,
		    uint16_t rx_port, uint64_t now)
{
	const struct nftdp_dp_port *pt = &w->dp->port[rx_port];

	if (!pt->has_host || !nftdp_dp_tb_take(&w->host_tb, now)) {
		w->st.drop[NFTDP_DP_DROP_HOST_LIMIT]++;
		rte_pktmbuf_free(m);
		return;
	}
	w->st.host_in++;
	/* staged and sent as a burst; a full tap queue drops (tx_full) */
	nftdp_dp_emit(w, pt->host_peer, m, p);
}

void nftdp_dp_host_input(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			 struct nftdp_vm_pkt **pkts, unsigned int n, uint16_t rx_port,
			 bool tracking)
{
	uint64_t now;

	/* ip_local_deliver: input with no output device */
	for (unsigned int i = 0; i < n; i++) {
		pkts[i]->oif = 0;
		pkts[i]->oifname = NULL;
		pkts[i]->oiftype = 0;
	}
	n = nftdp_dp_hook_run(w, gen, NFTDP_DP_ST_INPUT, NF_INET_LOCAL_IN, pkts, n, rx_port);
	/* ipv4_confirm / ipv6_confirm, last at LOCAL_IN */
	if (tracking)
		n = nftdp_dp_ct_confirm_accepted(w, pkts, n);
	now = n ? rte_rdtsc() : 0;
	for (unsigned int i = 0; i < n; i++)
		to_host(w, w->mb[pkts[i] - w->view], pkts[i], rx_port, now);
}

/*
 * arp_rcv / arp_xmit: an untagged ARP frame through the arp family's
 * NF_ARP_IN or NF_ARP_OUT chains (network header: the ARP header; in:
 * iif the port, skb->len from the ARP header; out: oif the port,
 * skb->len from the Ethernet header). Returns whether it goes on; a dropped
 * frame is counted at the stage and freed.
 */
/* arp_rcv's tests before NF_ARP_IN on an Ethernet device: the header
 * and both address pairs there (arp_hdr_len: 28 bytes), 6-byte hardware
 * and 4-byte protocol addresses; another ARP never meets the chains */
static bool arp_rcv_ok(const uint8_t *arp, uint32_t len)
{
	return len >= 28 && arp[4] == 6 && arp[5] == 4;
}

static bool arp_hook(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, uint8_t hook,
		     const struct nftdp_dp_port *port)
{
	const struct nftdp_dp_meta *mt = &w->meta[p - w->view];
	enum nftdp_dp_stage st = hook == NF_ARP_IN ? NFTDP_DP_ST_INPUT : NFTDP_DP_ST_OUTPUT;
	struct rte_mbuf *mb = w->mb[p - w->view];
	unsigned int v;

	if (!w->gen || mt->l2_proto != NFTDP_DP_ETH_P_ARP || mt->vid != 0 ||
	    nftdp_vm_gen_hook_len(w->gen, NFPROTO_ARP, hook) == 0)
		return true;
	if (hook == NF_ARP_IN && !arp_rcv_ok(rte_pktmbuf_mtod(mb, const uint8_t *) + mt->l2_nh,
					     rte_pktmbuf_data_len(mb) - mt->l2_nh))
		return true; /* to the host, whose arp_rcv drops it */
	p->nfproto = NFPROTO_ARP;
	p->hook = hook;
	p->mac_off = 0;
	p->nh_off = mt->l2_nh;
	p->len = rte_pktmbuf_data_len(mb);
	if (hook == NF_ARP_IN) {
		/* arp_rcv: skb->data at the ARP header */
		p->skb_len = p->len - mt->l2_nh;
		p->oif = 0;
		p->oifname = NULL;
	} else {
		/* arp_create pushed the link-layer header before arp_xmit:
		 * skb->len (meta length, counters) is the whole frame's */
		p->skb_len = p->len;
		p->iif = 0;
		p->iifname = NULL;
		p->oif = port->ifindex;
		p->oifname = port->name;
		p->oiftype = 1; /* ARPHRD_ETHER */
	}
	nftdp_vm_gen_run_hook_burst(w->gen, NFPROTO_ARP, hook, &p, 1, &v, &w->ctx);
	if (v == NF_ACCEPT) {
		w->st.hook[st][NFTDP_DP_V_ACCEPT]++;
		return true;
	}
	w->st.hook[st][v == NF_DROP ? NFTDP_DP_V_DROP : NFTDP_DP_V_QUEUE]++;
	rte_pktmbuf_free(mb);
	return false;
}

void nftdp_dp_host_l2(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, uint16_t rx_port)
{
	/* ARP (through the arp family's input chains), LLDP and the like:
	 * the host's */
	if (!arp_hook(w, p, NF_ARP_IN, &w->dp->port[rx_port]))
		return;
	to_host(w, w->mb[p - w->view], p, rx_port, rte_rdtsc());
}

void nftdp_dp_host_output(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			  uint16_t rx_port, struct rte_mbuf **m, unsigned int n, bool tracking)
{
	const struct nftdp_dp_port *hp = &w->dp->port[rx_port];
	const struct nftdp_dp_port *tx = &w->dp->port[hp->host_peer];
	struct nftdp_vm_pkt *act[NFTDP_VM_BURST_MAX], *all[NFTDP_VM_BURST_MAX];
	unsigned int na = 0, n_all;

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *mb = m[i];
		struct nftdp_vm_pkt *p = &w->view[i];
		struct nftdp_dp_l2 l2;

		w->mb[i] = mb;
		if (mb->nb_segs > 1 && rte_pktmbuf_linearize(mb) < 0) {
			w->st.drop[NFTDP_DP_DROP_MULTISEG]++;
			rte_pktmbuf_free(mb);
			continue;
		}
		if (!nftdp_dp_parse_l2(rte_pktmbuf_mtod(mb, uint8_t *), rte_pktmbuf_data_len(mb),
				       &l2)) {
			w->st.drop[NFTDP_DP_DROP_RUNT]++;
			rte_pktmbuf_free(mb);
			continue;
		}
		if (l2.ip_proto != NFTDP_DP_ETH_P_IP && l2.ip_proto != NFTDP_DP_ETH_P_IPV6) {
			/* ARP of the host: the arp family's output chains, then
			 * out; anything else straight out */
			nftdp_dp_view_frame(w, i, mb, &l2);
			if (!arp_hook(w, p, NF_ARP_OUT, tx))
				continue;
			w->st.host_out++;
			nftdp_dp_emit(w, tx->port_id, mb, p);
			continue;
		}
		if (!nftdp_dp_view_host(w, i, mb, &l2)) {
			rte_pktmbuf_free(mb);
			continue;
		}
		p->oif = tx->ifindex;
		p->oifname = tx->name;
		p->oiftype = 1; /* ARPHRD_ETHER */
		act[na++] = p;
	}
	memcpy(all, act, na * sizeof(*act));
	n_all = na;
	/* __ip_local_out: output (conntrack at -200, DNAT at -100, chains) */
	na = nftdp_dp_hook_run(w, gen, NFTDP_DP_ST_OUTPUT, NF_INET_LOCAL_OUT, act, na, rx_port);
	/* ip_output: postrouting, the input device none */
	na = nftdp_dp_hook_run(w, gen, NFTDP_DP_ST_POSTROUTING, NF_INET_POST_ROUTING, act, na,
			       rx_port);
	if (tracking)
		na = nftdp_dp_ct_confirm_accepted(w, act, na);
	w->st.host_out += na;
	nftdp_dp_egress(w, gen, act, na, tx->port_id, rx_port);
	/* rejects of output chains answer the host (icmp_send to a local
	 * sender is delivered locally) */
	for (unsigned int r = 0, n_rep = w->n_reply; r < n_rep; r++) {
		struct nftdp_vm_pkt *p = &w->view[NFTDP_VM_BURST_MAX + r];

		if (w->meta[NFTDP_VM_BURST_MAX + r].dup)
			continue; /* dup to ADDR: by its route, below */
		if (tracking) {
			nftdp_dp_ct_confirm(w, &p, 1, NF_ACCEPT);
			nftdp_dp_ct_confirm(w, &p, 1, NF_DROP);
		}
		nftdp_dp_emit(w, rx_port, w->mb[NFTDP_VM_BURST_MAX + r], p);
	}
	nftdp_dp_send_copies(w, gen, 0, rx_port);
	if (tracking)
		nftdp_dp_ct_confirm(w, all, n_all, NF_DROP);
}
