/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hook pipeline of one rx burst, wire mode (docs/dataplane.md):
 *
 *   netdev ingress -> inet ingress -> ip_rcv checks -> prerouting
 *     -> [--router: martians, TTL, decrement] -> forward -> postrouting
 *     -> netdev egress -> staged for tx
 *
 * Each hook runs every base chain of the generation's (nfproto, hook) list
 * over the packets still alive, as one burst per family (ip/inet for IPv4,
 * ip6/inet for IPv6). Accept moves on; drop, reject, fwd (stolen) and queue
 * end the packet here. One struct nftdp_vm_pkt per packet lives through
 * every hook, so what a hook sets (meta mark, priority, payload writes) is
 * seen by the later ones, as skb fields are in the kernel.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_arp.h>
#include <linux/if_packet.h>
#include <string.h>

#include <linux/netfilter_ipv4.h> /* after netinet/in.h: NF_IP_PRI_CONNTRACK */

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "dataplane_priv.h"

const char *const nftdp_dp_stage_names[NFTDP_DP_ST_MAX] = {
    [NFTDP_DP_ST_OUTPUT] = "output",
    [NFTDP_DP_ST_NETDEV_INGRESS] = "netdev_ingress",
    [NFTDP_DP_ST_INET_INGRESS] = "inet_ingress",
    [NFTDP_DP_ST_PREROUTING] = "prerouting",
    [NFTDP_DP_ST_FORWARD] = "forward",
    [NFTDP_DP_ST_POSTROUTING] = "postrouting",
    [NFTDP_DP_ST_NETDEV_EGRESS] = "netdev_egress",
    [NFTDP_DP_ST_INPUT] = "input",
    [NFTDP_DP_ST_BR_PREROUTING] = "bridge_prerouting",
    [NFTDP_DP_ST_BR_FORWARD] = "bridge_forward",
    [NFTDP_DP_ST_BR_POSTROUTING] = "bridge_postrouting",
};

const char *const nftdp_dp_vclass_names[NFTDP_DP_V_MAX] = {
    [NFTDP_DP_V_ACCEPT] = "accept", [NFTDP_DP_V_DROP] = "drop",	  [NFTDP_DP_V_REJECT] = "reject",
    [NFTDP_DP_V_STOLEN] = "stolen", [NFTDP_DP_V_QUEUE] = "queue",
};

void nftdp_dp_tx_flush_port(struct nftdp_dp_worker *w, uint16_t port);

void nftdp_dp_tx_flush_port(struct nftdp_dp_worker *w, uint16_t port)
{
	struct nftdp_dp_txbuf *b = &w->tx[port];
	unsigned int sent;

	if (b->n == 0)
		return;
	if (w->txq[port] != NFTDP_DP_NO_PORT) {
		sent = rte_eth_tx_burst(port, w->txq[port], b->m, b->n);
		w->st.tx[port] += sent;
	} else {
		/* a queue-starved port: its owner transmits for us */
		sent = rte_ring_sp_enqueue_burst(w->handoff[port], (void **)b->m, b->n, NULL);
	}
	if (sent < b->n) {
		w->st.tx_drop[port] += b->n - sent;
		w->st.drop[NFTDP_DP_DROP_TX_FULL] += b->n - sent;
		rte_pktmbuf_free_bulk(b->m + sent, b->n - sent);
	}
	b->n = 0;
}

void nftdp_dp_tx_stage(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *m)
{
	struct nftdp_dp_txbuf *b = &w->tx[port];

	if (b->n == NFTDP_DP_TXBUF)
		nftdp_dp_tx_flush_port(w, port);
	b->m[b->n++] = m;
}

/* nftdp_dp_tx_stage of ms[0..k), in order, a copy per run that fits */
static void tx_stage_bulk(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *const *ms,
			  unsigned int k)
{
	struct nftdp_dp_txbuf *b = &w->tx[port];

	while (k) {
		unsigned int room = NFTDP_DP_TXBUF - b->n, c = k < room ? k : room;

		if (!room) {
			nftdp_dp_tx_flush_port(w, port);
			continue;
		}
		memcpy(&b->m[b->n], ms, c * sizeof(*ms));
		b->n = (uint16_t)(b->n + c);
		ms += c;
		k -= c;
	}
}

void nftdp_dp_tx_flush(struct nftdp_dp_worker *w)
{
	for (uint16_t p = 0; p < w->dp->n_ports; p++)
		nftdp_dp_tx_flush_port(w, p);
}

/* pskb_trim_rcsum for a frame the pipeline linearized: one segment, so
 * the trim is two stores (rte_pktmbuf_trim walks the chain for its end) */
static inline void trim_linear(struct rte_mbuf *mb, uint16_t len)
{
	mb->data_len = (uint16_t)(mb->data_len - len);
	mb->pkt_len -= len;
}

/* The received packet a view stems from: itself, or the one a reply answers. */
static uint16_t key_of(const struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p)
{
	unsigned int idx = (unsigned int)(p - w->view);

	return idx < NFTDP_VM_BURST_MAX ? (uint16_t)idx : w->meta[idx].origin;
}

/*
 * Send m out of port as part of this burst. The kernel handles one packet
 * at a time, so what a packet causes (dups, fwd, its reply, the packet
 * itself) leaves before anything of the next packet; emit keeps that order
 * for flush_emits() to restore.
 */
static void flush_emits(struct nftdp_dp_worker *w);

/* the order within a burst: by key, a packet's dup copies first (the
 * kernel sends them from the hook, before the packet goes on) */
static unsigned int emit_rank(const struct nftdp_dp_emit *e)
{
	return 2u * e->key + !e->early;
}

static inline __attribute__((always_inline)) void
emit_at(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *m, uint16_t key, bool early)
{
	struct nftdp_dp_emit *e;

	/* 2 + MAX_DUP frames per packet, but refragmented datagrams may
	 * give more: send what is there first */
	if (w->n_emit == NFTDP_DP_EMIT_MAX)
		flush_emits(w);
	e = &w->emit[w->n_emit];
	e->key = key;
	e->port = port;
	e->m = m;
	e->early = early;
	if (w->n_emit && emit_rank(e) < emit_rank(&w->emit[w->n_emit - 1]))
		w->emit_unordered = true;
	w->n_emit++;
}

static void emit(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *m, uint16_t key)
{
	emit_at(w, port, m, key, false);
}

/*
 * emit for a packet a pass decided ahead of the pipeline: while nothing
 * with a smaller key is left for the pipeline (first_slow: the smallest
 * key it gets), nothing can come before it, so it joins out[*no], which
 * the pass stages (tx_stage_bulk) before anything it emitted leaves,
 * without the ordering's bookkeeping.
 */
static inline __attribute__((always_inline)) void
emit_decided(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *m, uint16_t key,
	     unsigned int first_slow, struct rte_mbuf **out, unsigned int *no)
{
	if (key < first_slow && !w->n_emit)
		out[(*no)++] = m;
	else
		emit(w, port, m, key);
}

/* stable counting sort by rank, then stage */
static void flush_emits(struct nftdp_dp_worker *w)
{
	unsigned int count[2 * NFTDP_VM_BURST_MAX + 1];

	if (!w->emit_unordered) {
		/* the common case: already in packet order */
		for (unsigned int i = 0; i < w->n_emit; i++)
			nftdp_dp_tx_stage(w, w->emit[i].port, w->emit[i].m);
		w->n_emit = 0;
		return;
	}
	w->emit_unordered = false;
	memset(count, 0, sizeof(count)); /* only here: the common case needs none */
	for (unsigned int i = 0; i < w->n_emit; i++)
		count[emit_rank(&w->emit[i]) + 1]++;
	for (unsigned int k = 1; k <= 2 * NFTDP_VM_BURST_MAX; k++)
		count[k] += count[k - 1];
	for (unsigned int i = 0; i < w->n_emit; i++)
		w->emit_sorted[count[emit_rank(&w->emit[i])]++] = w->emit[i];
	for (unsigned int i = 0; i < w->n_emit; i++)
		nftdp_dp_tx_stage(w, w->emit_sorted[i].port, w->emit_sorted[i].m);
	w->n_emit = 0;
}

static bool port_valid(const struct nftdp_dp *dp, uint32_t ifindex)
{
	return ifindex >= 1 && ifindex <= dp->n_ports && dp->port[ifindex - 1].used;
}

static void view_ip(struct nftdp_vm_pkt *p, const struct nftdp_dp_meta *mt);

/*
 * Turn the reply bytes in w->reply into a packet of this burst's reply list:
 * like the kernel's, it goes through output, postrouting and netdev egress
 * (iif none, oif the port it answers through) before it is sent.
 */
static struct nftdp_vm_pkt *send_frame(struct nftdp_dp_worker *w, uint16_t port, uint32_t len,
				       const struct nftdp_vm_pkt *orig, bool related)
{
	const struct nftdp_dp_port *pt = &w->dp->port[port];
	unsigned int idx = NFTDP_VM_BURST_MAX + w->n_reply;
	struct nftdp_dp_meta *mt = &w->meta[idx];
	struct nftdp_vm_pkt *p = &w->view[idx];
	struct nftdp_dp_l2 l2;
	struct rte_mbuf *r;
	char *d;

	if (w->n_reply == NFTDP_VM_BURST_MAX)
		return NULL; /* at most one reply per received packet */
	r = rte_pktmbuf_alloc(w->pool);
	if (r == NULL || (d = rte_pktmbuf_append(r, (uint16_t)len)) == NULL) {
		rte_pktmbuf_free(r);
		w->st.drop[NFTDP_DP_DROP_NO_MBUF]++;
		return NULL;
	}
	memcpy(d, w->reply, len);
	w->st.replies++;
	nftdp_dp_parse_l2((uint8_t *)d, len, &l2);
	mt->ip_off = l2.ip_off;
	mt->l2_nh = l2.nh_off;
	mt->l2_proto = l2.proto;
	mt->ip_proto = l2.ip_proto;
	mt->vid = l2.vid;
	mt->ip_len = len - l2.ip_off;
	mt->origin = key_of(w, orig);
	mt->frag_max = 0;
	mt->onward = 0;
	mt->dup = 0;
	nftdp_vm_pkt_init(p, (uint8_t *)d, len, 0, l2.ip_off);
	view_ip(p, mt);
	if (w->ct && related)
		nftdp_dp_ct_attach(p, orig); /* nf_ct_attach: related to orig's connection */
	p->pkttype = PACKET_HOST;
	p->cpu = (uint16_t)w->lcore;
	p->oif = pt->ifindex;
	p->oifname = pt->name;
	p->oiftype = ARPHRD_ETHER;
	w->mb[idx] = r;
	w->n_reply++;
	return p;
}

static void send_reply(struct nftdp_dp_worker *w, uint16_t port, uint32_t len,
		       const struct nftdp_vm_pkt *orig)
{
	send_frame(w, port, len, orig, true);
}

struct nftdp_vm_pkt *nftdp_dp_send_built(struct nftdp_dp_worker *w, uint16_t rx_port, bool onward,
					 uint32_t len, const struct nftdp_vm_pkt *orig)
{
	uint16_t port = onward ? w->dp->wire[rx_port] : rx_port;
	struct nftdp_vm_pkt *p = send_frame(w, port, len, orig, false);

	if (p)
		w->meta[p - w->view].onward = onward;
	return p;
}

/* the source of an ICMP error sent out of port: its --ifaddr, if any */
static const uint8_t *icmp_src(const struct nftdp_dp_port *pt, bool v4)
{
	if (v4)
		return pt->has_addr4 ? pt->addr4 : NULL;
	return pt->has_addr6 ? pt->addr6 : NULL;
}

static void reject(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
		   const struct nftdp_dp_meta *mt, uint16_t rx_port)
{
	bool rst = p->out.reject_type == NFT_REJECT_TCP_RST;
	uint32_t n;

	if (mt->ip_proto != NFTDP_DP_ETH_P_IP && mt->ip_proto != NFTDP_DP_ETH_P_IPV6)
		return;
	if (p >= &w->view[NFTDP_VM_BURST_MAX])
		return; /* a reply nftdp built is never answered */
	n = nftdp_dp_reject_build(
	    p->data, mt->ip_off, mt->ip_len, rst, p->out.reject_icmp_type, p->out.reject_icmp_code,
	    w->ip_id++, icmp_src(&w->dp->port[rx_port], mt->ip_proto == NFTDP_DP_ETH_P_IP),
	    w->reply, sizeof(w->reply));
	if (n)
		send_reply(w, rx_port, n, p);
}

/* synproxy_send_client_synack: the cookie SYN-ACK goes back out of rx_port */
static void synproxy_synack(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p,
			    const struct nftdp_dp_meta *mt, uint16_t rx_port)
{
	uint32_t n;

	if (p >= &w->view[NFTDP_VM_BURST_MAX])
		return; /* nftdp's own packets are never answered */
	n = nftdp_dp_synproxy_build(p->data, mt->ip_off, mt->ip_len, p->out.synproxy, w->ctx.now_ms,
				    w->reply, sizeof(w->reply));
	if (n)
		send_reply(w, rx_port, n, p);
}

static bool is_dup_copy(const struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *p)
{
	unsigned int idx = (unsigned int)(p - w->view);

	return idx >= NFTDP_VM_BURST_MAX && idx < NFTDP_VM_BURST_MAX + w->n_reply &&
	       w->meta[idx].dup;
}

/*
 * nf_dup_ipv4 / nf_dup_ipv6: a copy of the packet as it is now, untracked
 * (nf_ct_set IP_CT_UNTRACKED), IPv4 with DF set, TTL / hop limit one less
 * at prerouting and input, routed to the gateway dup i names; it joins
 * this burst's replies, so it goes through output, postrouting and netdev
 * egress (ip_local_out) and leaves before its original. A copy makes no
 * copies of its own (nf_skb_duplicated).
 */
static void dup_addr_out(struct nftdp_dp_worker *w, struct rte_mbuf *mb,
			 const struct nftdp_vm_pkt *p, unsigned int i)
{
	unsigned int idx = NFTDP_VM_BURST_MAX + w->n_reply;
	const struct nftdp_dp_meta *om = &w->meta[p - w->view];
	struct nftdp_dp_meta *mt = &w->meta[idx];
	struct nftdp_vm_pkt *c = &w->view[idx];
	bool v4 = om->ip_proto == NFTDP_DP_ETH_P_IP;
	const struct nftdp_dp_port *pt;
	struct rte_mbuf *m;
	uint8_t *d, *iph;

	if ((v4 ? p->nfproto != NFPROTO_IPV4 : p->nfproto != NFPROTO_IPV6) || mb->nb_segs != 1 ||
	    is_dup_copy(w, p))
		return;
	if (w->n_reply == NFTDP_VM_BURST_MAX) {
		w->st.drop[NFTDP_DP_DROP_NO_MBUF]++;
		return;
	}
	if (!nftdp_dp_nexthop_dup_route(w, v4, p->dup_addr[i], p->out.dup_oif[i],
					p->data + om->ip_off, &w->nh[idx])) {
		w->st.drop[NFTDP_DP_DROP_DUP_NO_ROUTE]++;
		return;
	}
	m = rte_pktmbuf_copy(mb, w->pool, 0, UINT32_MAX);
	if (m == NULL) {
		w->st.drop[NFTDP_DP_DROP_NO_MBUF]++;
		return;
	}
	d = rte_pktmbuf_mtod(m, uint8_t *);
	*mt = *om;
	mt->origin = key_of(w, p);
	mt->frag_max = 0;
	mt->onward = 0;
	mt->dup = 1;
	iph = d + mt->ip_off;
	if (v4) {
		uint16_t sum;

		iph[6] |= 0x40; /* IP_DF */
		if (p->hook == NF_INET_PRE_ROUTING || p->hook == NF_INET_LOCAL_IN)
			iph[8]--;
		/* ip_send_check in __ip_local_out */
		iph[10] = iph[11] = 0;
		sum = nftdp_csum_fold(nftdp_csum_partial(iph, (uint32_t)(iph[0] & 0x0f) * 4, 0));
		memcpy(iph + 10, &sum, 2);
	} else if (p->hook == NF_INET_PRE_ROUTING || p->hook == NF_INET_LOCAL_IN) {
		iph[7]--;
	}
	nftdp_vm_pkt_init(c, d, rte_pktmbuf_data_len(m), 0, mt->ip_off);
	view_ip(c, mt);
	pt = &w->dp->port[w->nh[idx].tx_port];
	c->ct_untracked = true;
	c->mark = p->mark; /* pskb_copy keeps the skb's fields */
	c->priority = p->priority;
	c->pkttype = PACKET_HOST;
	c->cpu = (uint16_t)w->lcore;
	c->oif = pt->ifindex;
	c->oifname = pt->name;
	c->oiftype = ARPHRD_ETHER;
	w->mb[idx] = m;
	w->n_reply++;
	w->st.dups++;
}

static void dup_out(struct nftdp_dp_worker *w, struct rte_mbuf *mb, const struct nftdp_vm_pkt *p)
{
	for (unsigned int i = 0; i < p->out.n_dup && i < NFTDP_VM_MAX_DUP; i++) {
		struct rte_mbuf *c;

		if (p->out.dup_to_addr & (1u << i)) {
			dup_addr_out(w, mb, p, i);
			continue;
		}
		if (!port_valid(w->dp, p->out.dup_oif[i]))
			continue;
		c = rte_pktmbuf_copy(mb, w->pool, 0, UINT32_MAX);
		if (c == NULL) {
			w->st.drop[NFTDP_DP_DROP_NO_MBUF]++;
			continue;
		}
		w->st.dups++;
		emit(w, (uint16_t)(p->out.dup_oif[i] - 1), c, key_of(w, p));
	}
}

/*
 * Act on the verdicts of one hook over act[0..n) and keep the accepted
 * packets in act, in order. Returns how many are left. part: the hook's
 * first part (priorities below conntrack's, BURST_PRE_CT): accepted packets
 * are neither counted nor cleared, the second part settles them.
 */
static unsigned int settle_at(struct nftdp_dp_worker *w, enum nftdp_dp_stage stage,
			      struct nftdp_vm_pkt **act, unsigned int n, const unsigned int *v,
			      const struct nftdp_dp_meta *meta, uint16_t rx_port, bool part)
{
	uint64_t *cnt = w->st.hook[stage];
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = act[i];
		unsigned int idx = (unsigned int)(p - w->view);
		struct rte_mbuf *mb = w->mb[idx];

		/* mb is NULL for a fragment the reassembly holds */
		if (p->out.n_dup && mb)
			dup_out(w, mb, p);
		if (p->out.arpreply) /* ebtables' arpreply, whatever the verdict */
			nftdp_dp_bridge_arpreply(w, p, rx_port);
		if (part && v[i] == NF_ACCEPT) {
			/* the hook goes on later: what the rest of it reads
			 * (notrack) stays, the copies are out, no count yet */
			p->out.n_dup = 0;
			p->out.dup_to_addr = 0;
			act[k++] = p;
			continue;
		}
		/* synproxy took the client's cookie ACK: the SYN to the server */
		if (p->out.synproxy && v[i] != NF_ACCEPT && !(p->data[p->th_off + 13] & 0x02))
			nftdp_dp_synproxy_client_ack(w, p, &meta[idx], rx_port);
		switch (v[i]) {
		case NF_ACCEPT:
			cnt[NFTDP_DP_V_ACCEPT]++;
			memset(&p->out, 0, sizeof(p->out));
			act[k++] = p;
			continue;
		case NF_STOLEN:
			cnt[NFTDP_DP_V_STOLEN]++;
			if (p->out.synproxy && (p->data[p->th_off + 13] & 0x02))
				synproxy_synack(w, p, &meta[idx], rx_port);
			if (mb && p->out.fwd_oif && port_valid(w->dp, p->out.fwd_oif)) {
				/* to a neighbour: its MAC, TTL one less (nexthop.c) */
				if (!p->out.fwd_nfproto ||
				    nftdp_dp_nexthop_fwd(w, p, &meta[idx], mb, rx_port))
					emit(w, (uint16_t)(p->out.fwd_oif - 1), mb, key_of(w, p));
				continue;
			}
			break;
		case NF_DROP:
			if (p->out.reject) {
				cnt[NFTDP_DP_V_REJECT]++;
				reject(w, p, &meta[idx], rx_port);
			} else {
				cnt[NFTDP_DP_V_DROP]++;
			}
			break;
		default:
			cnt[NFTDP_DP_V_QUEUE]++;
			break;
		}
		rte_pktmbuf_free(mb);
	}
	return k;
}

/*
 * Act on the verdicts of one hook over act[0..n) and keep the accepted
 * packets in act, in order. Returns how many are left.
 */
static unsigned int settle(struct nftdp_dp_worker *w, enum nftdp_dp_stage stage,
			   struct nftdp_vm_pkt **act, unsigned int n, const unsigned int *v,
			   const struct nftdp_dp_meta *meta, uint16_t rx_port)
{
	return settle_at(w, stage, act, n, v, meta, rx_port, false);
}

unsigned int nftdp_dp_settle(struct nftdp_dp_worker *w, enum nftdp_dp_stage stage,
			     struct nftdp_vm_pkt **act, unsigned int n, const unsigned int *v,
			     uint16_t rx_port)
{
	return settle(w, stage, act, n, v, w->meta, rx_port);
}

static void all_accept(unsigned int *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		v[i] = NF_ACCEPT;
}

/* Which built-in steps act at each hook for gen: bit s of on[hook] for
 * dp->builtin[hook][s]. Worked out once per generation (walk_plan). */
static void steps_compute(const struct nftdp_dp *dp, const struct nftdp_vm_gen *gen,
			  uint8_t on[NFTDP_VM_GEN_HOOK_MAX])
{
	for (unsigned int h = 0; h < NFTDP_VM_GEN_HOOK_MAX; h++) {
		on[h] = 0;
		for (unsigned int s = 0; s < dp->n_builtin[h]; s++)
			if (!dp->builtin[h][s].active || dp->builtin[h][s].active(gen))
				on[h] |= (uint8_t)(1u << s);
	}
}

/* whether a built-in step acts at hook for the plan's generation */
static bool hook_steps(const struct nftdp_dp_worker *w, uint8_t hook)
{
	return w->step_on[hook] != 0;
}

/* conntrack runs for this burst: only then do packets carry a ct */
static bool ct_tracking(const struct nftdp_vm_gen *gen)
{
	return gen &&
	       (nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV4) || nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV6));
}

/* whether gen has an IPv4 or IPv6 base chain at hook */
static bool hook_chains(const struct nftdp_vm_gen *gen, uint8_t hook)
{
	return gen && (nftdp_vm_gen_hook_len(gen, NFPROTO_IPV4, hook) ||
		       nftdp_vm_gen_hook_len(gen, NFPROTO_IPV6, hook));
}

/* the families of a walk entry's chain runs: IPv4 [0], IPv6 [1] */
static const uint8_t walk_fams[2] = {NFPROTO_IPV4, NFPROTO_IPV6};

static inline unsigned int walk_fam(uint8_t nfproto)
{
	return nfproto == NFPROTO_IPV6;
}

/* A run of the chains of gen at hook, from cur[f] of each family's list on,
 * of priority below `below`, as the next entry of wk: none if no chain. */
static void walk_add_chains(struct nftdp_dp_walk *wk, const struct nftdp_vm_gen *gen, uint8_t hook,
			    uint32_t cur[2], int64_t below)
{
	struct nftdp_dp_walk_entry *e = &wk->e[wk->n];
	uint32_t total = 0;

	for (unsigned int f = 0; f < 2; f++) {
		uint32_t len = gen ? nftdp_vm_gen_hook_len(gen, walk_fams[f], hook) : 0;

		e->first[f] = cur[f];
		while (cur[f] < len &&
		       nftdp_vm_gen_hook_prio(gen, walk_fams[f], hook, cur[f]) < below)
			cur[f]++;
		e->n[f] = cur[f] - e->first[f];
		total += e->n[f];
	}
	if (total) {
		e->step = -1;
		wk->n++;
	}
}

/*
 * Each ip/ip6/inet hook's walk for gen (id: its id + 1, UINT64_MAX for
 * none), as the kernel's nf_hook_entries hold them: the active built-in
 * steps by priority, each after the base chains of lower priority and
 * before those of its own (conntrack registers before any table), the
 * chains between two steps one entry. An inactive step is no entry: the
 * chains around it are one run. In prerouting, ct_at is the first entry at
 * or above NF_IP_PRI_CONNTRACK, the cut between BURST_PRE_CT's two parts:
 * that part is the one with conntrack's step, which is there (the chains
 * are cut at its priority) whenever the dataplane tracks; without an
 * active step from there on, ct_at is the end.
 */
static void walk_plan(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint64_t id)
{
	const struct nftdp_dp *dp = w->dp;

	steps_compute(dp, gen, w->step_on);
	for (uint8_t h = 0; h < NFTDP_VM_GEN_HOOK_MAX; h++) {
		struct nftdp_dp_walk *wk = &w->walk[h];
		uint32_t cur[2] = {0, 0};
		bool cut = h == NF_INET_PRE_ROUTING;

		wk->n = 0;
		wk->steps = false;
		for (unsigned int s = 0; s < dp->n_builtin[h]; s++) {
			const struct nftdp_dp_builtin *b = &dp->builtin[h][s];

			if (!(w->step_on[h] & (1u << s)))
				continue;
			if (cut && b->prio >= NF_IP_PRI_CONNTRACK) {
				walk_add_chains(wk, gen, h, cur, NF_IP_PRI_CONNTRACK);
				wk->ct_at = wk->n;
				cut = false;
			}
			walk_add_chains(wk, gen, h, cur, b->prio);
			wk->e[wk->n++] = (struct nftdp_dp_walk_entry){.step = (int8_t)s};
			wk->steps = true;
		}
		walk_add_chains(wk, gen, h, cur, INT64_MAX);
		if (cut || h != NF_INET_PRE_ROUTING)
			wk->ct_at = wk->n;
	}
	w->walk_gen = id;
}

/* hook's walk for gen, worked out again when gen is not the walk's */
static inline const struct nftdp_dp_walk *walk_of(struct nftdp_dp_worker *w,
						  const struct nftdp_vm_gen *gen, uint8_t hook)
{
	uint64_t id = gen ? nftdp_vm_gen_id(gen) + 1 : UINT64_MAX;

	if (unlikely(w->walk_gen != id))
		walk_plan(w, gen, id);
	return &w->walk[hook];
}

/*
 * A walk entry's run of chains over pkts[0..n), verdicts in out: the
 * chains of each family over that family's packets as one burst. Packets
 * of both families come only where no state shows their order
 * (nftdp_vm_gen_order_free); their families run in order of first
 * appearance, and traffic that alternates families does not run the
 * chains a packet at a time.
 */
static void walk_run(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint8_t hook,
		     const struct nftdp_dp_walk_entry *e, struct nftdp_vm_pkt **pkts,
		     unsigned int n, unsigned int *out)
{
	struct nftdp_vm_pkt *fam[NFTDP_VM_BURST_MAX];
	unsigned int pos[NFTDP_VM_BURST_MAX], fv[NFTDP_VM_BURST_MAX];
	uint8_t f0 = pkts[0]->nfproto;
	unsigned int j = 1;

	while (j < n && pkts[j]->nfproto == f0)
		j++;
	if (j == n) { /* one family: straight into out */
		unsigned int f = walk_fam(f0);

		if (e->n[f])
			nftdp_vm_gen_run_hook_range(gen, f0, hook, e->first[f], e->n[f], pkts, n,
						    out, &w->ctx);
		else
			all_accept(out, n);
		return;
	}
	all_accept(out, n);
	for (unsigned int k = 0; k < 2; k++) {
		uint8_t nfproto = k == 0 ? f0 : walk_fams[!walk_fam(f0)];
		unsigned int f = walk_fam(nfproto), c = 0;

		if (!e->n[f])
			continue;
		for (unsigned int i = 0; i < n; i++) {
			if (pkts[i]->nfproto != nfproto)
				continue;
			pos[c] = i;
			fam[c++] = pkts[i];
		}
		if (!c)
			continue;
		nftdp_vm_gen_run_hook_range(gen, nfproto, hook, e->first[f], e->n[f], fam, c, fv,
					    &w->ctx);
		for (unsigned int i = 0; i < c; i++)
			out[pos[i]] = fv[i];
	}
}

/*
 * The hook walker: entries [from, to) of hook's walk over pkts[0..n) in
 * arrival order, verdicts in v. Each entry runs over the packets every
 * entry before it accepted, in arrival order: a run of chains (walk_run),
 * a built-in step over all of them, as the kernel's hook list interleaves
 * nf_conntrack_in (-200) with nft chains. A verdict other than accept
 * ends the packet's walk.
 */
static void walk_hook(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint8_t hook,
		      unsigned int from, unsigned int to, struct nftdp_vm_pkt **pkts,
		      unsigned int n, unsigned int *v)
{
	const struct nftdp_dp_walk *wk = &w->walk[hook];
	struct nftdp_vm_pkt *sub[NFTDP_VM_BURST_MAX];
	unsigned int idx[NFTDP_VM_BURST_MAX], sv[NFTDP_VM_BURST_MAX], m = n;

	if (n == 0)
		return;
	/* one run of chains (no step acts, the common case): its verdicts
	 * are the hook's */
	if (to - from == 1 && wk->e[from].step < 0) {
		walk_run(w, gen, hook, &wk->e[from], pkts, n, v);
		return;
	}
	all_accept(v, n);
	for (unsigned int i = 0; i < n; i++) {
		sub[i] = pkts[i];
		idx[i] = i;
	}
	for (unsigned int x = from; x < to && m; x++) {
		const struct nftdp_dp_walk_entry *e = &wk->e[x];
		unsigned int k = 0;

		if (e->step < 0)
			walk_run(w, gen, hook, e, sub, m, sv);
		else
			w->dp->builtin[hook][e->step].fn(w, hook, sub, m, sv);
		/* a verdict other than accept is the packet's; the accepted
		 * go on to the next entry, in order */
		for (unsigned int j = 0; j < m; j++) {
			if (sv[j] != NF_ACCEPT) {
				v[idx[j]] = sv[j];
				continue;
			}
			sub[k] = sub[j];
			idx[k++] = idx[j];
		}
		m = k;
	}
}

/* Which part of a hook run_ip_hook_part walks: all of it, or prerouting's
 * part before or from conntrack's priority (BURST_PRE_CT) */
enum hook_part { HOOK_ALL, HOOK_BEFORE_CT, HOOK_FROM_CT };

/*
 * Run one hook of an inet-style family over the packets in act, in arrival
 * order, and settle them. Where some state shows the order of packets,
 * each run of consecutive packets of one family (IPv4: ip and inet chains,
 * IPv6: ip6 and inet) walks the hook as one burst, so state that IPv4 and
 * IPv6 share in an inet chain (quota, limit, sets) sees them in the
 * kernel's order; where none does, the whole burst walks it at once.
 */
static unsigned int run_ip_hook_part(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
				     enum nftdp_dp_stage stage, uint8_t hook,
				     struct nftdp_vm_pkt **act, unsigned int n,
				     const struct nftdp_dp_meta *meta, uint16_t rx_port,
				     enum hook_part part)
{
	const struct nftdp_dp_walk *wk = walk_of(w, gen, hook);
	unsigned int v[NFTDP_VM_BURST_MAX], from = 0, to = wk->n;

	/* nothing at this hook: everything moves on untouched */
	if (to == 0 && part == HOOK_ALL) {
		w->st.hook[stage][NFTDP_DP_V_ACCEPT] += n;
		return n;
	}
	if (part == HOOK_BEFORE_CT)
		to = wk->ct_at;
	else if (part == HOOK_FROM_CT)
		from = wk->ct_at;
	for (unsigned int i = 0; i < n; i++)
		act[i]->hook = hook;
	if (n > 1 && nftdp_vm_gen_order_free(gen)) {
		walk_hook(w, gen, hook, from, to, act, n, v);
	} else {
		for (unsigned int i = 0; i < n;) {
			uint8_t nfproto = act[i]->nfproto;
			unsigned int j = i;

			while (j < n && act[j]->nfproto == nfproto)
				j++;
			walk_hook(w, gen, hook, from, to, act + i, j - i, v + i);
			i = j;
		}
	}
	return settle_at(w, stage, act, n, v, meta, rx_port, part == HOOK_BEFORE_CT);
}

static unsigned int run_ip_hook(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
				enum nftdp_dp_stage stage, uint8_t hook, struct nftdp_vm_pkt **act,
				unsigned int n, const struct nftdp_dp_meta *meta, uint16_t rx_port)
{
	return run_ip_hook_part(w, gen, stage, hook, act, n, meta, rx_port, HOOK_ALL);
}

static unsigned int run_netdev_hook(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
				    enum nftdp_dp_stage stage, uint8_t hook,
				    struct nftdp_vm_pkt **act, unsigned int n,
				    const struct nftdp_dp_meta *meta, uint16_t rx_port)
{
	unsigned int v[NFTDP_VM_BURST_MAX];

	if (n == 0)
		return 0;
	if (!gen || nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, hook) == 0) {
		w->st.hook[stage][NFTDP_DP_V_ACCEPT] += n;
		return n;
	}
	nftdp_vm_gen_run_hook_burst(gen, NFPROTO_NETDEV, hook, act, n, v, &w->ctx);
	return settle(w, stage, act, n, v, meta, rx_port);
}

static uint8_t pkttype_of(const uint8_t *d)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	if (d[0] & 1)
		return memcmp(d, bcast, 6) == 0 ? PACKET_BROADCAST : PACKET_MULTICAST;
	/* every unicast frame is for us: the appliance is the next hop */
	return PACKET_HOST;
}

static bool is_ip(uint16_t ethertype)
{
	return ethertype == NFTDP_DP_ETH_P_IP || ethertype == NFTDP_DP_ETH_P_IPV6;
}

/* ip_forward: skb->priority = rt_tos2priority(iph->tos), before the
 * forward hook (IPv4 only; ip6_forward leaves it) */
static inline void forward_priority(struct nftdp_vm_pkt *p)
{
	static const uint8_t tos2prio[16] = {0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4};

	if (p->nfproto == NFPROTO_IPV4)
		p->priority = tos2prio[(p->data[p->nh_off + 1] & 0x1e) >> 1];
}

/* the view of an IP packet at ip/ip6/inet hooks: trimmed to the datagram */
static void view_ip(struct nftdp_vm_pkt *p, const struct nftdp_dp_meta *mt)
{
	p->mac_off = 0;
	p->nh_off = mt->ip_off;
	p->len = mt->ip_off + mt->ip_len;
	p->skb_len = mt->ip_len;
	p->protocol = htons(mt->ip_proto);
	p->inner_off = -1;
	p->flags &= (uint8_t)~NFTDP_VM_PKT_F_INNER;
	nftdp_vm_pkt_parse_ip(p);
}

/* netdev egress on port tx (the whole frame: skb->len includes the 14
 * bytes), then stage what it accepts */
static void egress(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
		   struct nftdp_vm_pkt **act, unsigned int n, const struct nftdp_dp_port *tx,
		   uint16_t rx_port, bool replies)
{
	/* the netdev egress view, for netdev egress chains only */
	bool chains = gen && nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_EGRESS);

	for (unsigned int i = 0; chains && i < n; i++) {
		struct nftdp_vm_pkt *p = act[i];
		const struct nftdp_dp_meta *mt = &w->meta[p - w->view];

		p->mac_off = 0;
		p->nh_off = mt->l2_nh;
		p->protocol = htons(mt->l2_proto);
		p->len = rte_pktmbuf_data_len(w->mb[p - w->view]);
		p->skb_len = p->len;
		if (is_ip(mt->l2_proto))
			nftdp_vm_pkt_parse_ip(p);
		p->nfproto = NFPROTO_NETDEV;
		p->hook = NF_NETDEV_EGRESS;
		p->iif = 0;
		p->iifname = NULL;
		p->oif = tx->ifindex;
		p->oifname = tx->name;
		p->oiftype = ARPHRD_ETHER;
	}
	n = run_netdev_hook(w, gen, NFTDP_DP_ST_NETDEV_EGRESS, NF_NETDEV_EGRESS, act, n, w->meta,
			    rx_port);
	for (unsigned int i = 0; i < n; i++) {
		bool copy = replies && is_dup_copy(w, act[i]);

		w->st.replies_out += replies && !copy;
		emit_at(w, tx->port_id, w->mb[act[i] - w->view], key_of(w, act[i]), copy);
	}
}

static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned int plen)
{
	unsigned int bytes = plen / 8, bits = plen % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	return bits == 0 || ((a[bytes] ^ b[bytes]) & (0xff00 >> bits)) == 0;
}

/* --router with --ifaddr: what the kernel delivers locally instead of
 * forwarding (an address of ours, a subnet broadcast of ours) */
static enum nftdp_dp_drop local_dest(const struct nftdp_dp *dp, bool v4, const uint8_t *iph)
{
	const uint8_t *dst = iph + (v4 ? 16 : 24);

	if (!dp->ifaddrs)
		return NFTDP_DP_DROP_MAX;
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		const struct nftdp_dp_port *pt = &dp->port[p];

		if (v4 && pt->has_addr4) {
			uint8_t bc[4];

			if (memcmp(dst, pt->addr4, 4) == 0)
				return NFTDP_DP_DROP_NOT_FORWARDED;
			for (unsigned int i = 0; i < 4; i++) {
				unsigned int hb = pt->plen4 >= 8 * (i + 1) ? 0
						  : pt->plen4 <= 8 * i	   ? 8
								       : 8 * (i + 1) - pt->plen4;

				bc[i] = (uint8_t)(pt->addr4[i] | ((1u << hb) - 1));
			}
			if (pt->plen4 < 31 && same_prefix(dst, pt->addr4, pt->plen4) &&
			    memcmp(dst, bc, 4) == 0)
				return NFTDP_DP_DROP_NOT_FORWARDED;
		} else if (!v4 && pt->has_addr6 && memcmp(dst, pt->addr6, 16) == 0) {
			return NFTDP_DP_DROP_NOT_FORWARDED;
		}
	}
	return NFTDP_DP_DROP_MAX;
}

/*
 * --router: ip_forward's MTU check on a reassembled datagram, after the TTL
 * check and before the forward hook. Returns true when it is dropped (with
 * ICMP fragmentation needed / packet too big).
 */
static bool too_big(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p,
		    const struct nftdp_dp_meta *mt, const struct nftdp_dp_port *rx,
		    uint16_t rx_port, uint16_t tx_port)
{
	bool v4 = p->nfproto == NFPROTO_IPV4;
	uint32_t mtu, len;

	if (!nftdp_dp_defrag_too_big(w, p->data + mt->ip_off, v4, mt->frag_max, tx_port, &mtu))
		return false;
	w->st.drop[NFTDP_DP_DROP_FRAG_TOOBIG]++;
	len =
	    nftdp_dp_defrag_frag_needed(w, p->data, mt->ip_off, mt->ip_len, mtu, icmp_src(rx, v4));
	if (len)
		send_reply(w, rx_port, len, p);
	rte_pktmbuf_free(w->mb[p - w->view]);
	return true;
}

/*
 * Step 6 (--router) for a packet a fast pass forwards: what the router
 * step of run_segment_at does when it does nothing but forward it. Not
 * for IPv4 options (ip_rcv_options, ip_forward_options), a destination of
 * the host (--host-ports: ip_local_deliver; --ifaddr: local_dest), an
 * error (martians, TTL, no route: their drops and ICMP), under --route a
 * next hop not resolved (unres.c queues the packet). Otherwise the TTL or
 * hop limit is decremented (ip_decrease_ttl; the bytes kept for
 * route_undo), forward's devices and priority are set, and w->nh[idx]
 * holds the port it leaves by (--route: its route and the next hop's
 * lladdr). false: the pipeline must take it; nothing of the packet
 * changed. p: a prerouting view, or a header view (header: then its iif
 * and mark are set here, as a received packet's). Reassembled datagrams
 * (too_big) never come here.
 */
static inline __attribute__((always_inline)) bool
fast_route(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, unsigned int idx,
	   const struct nftdp_dp_port *rx, bool header)
{
	const struct nftdp_dp *dp = w->dp;
	struct nftdp_dp_nh *nh = &w->nh[idx];
	uint8_t *iph = p->data + p->nh_off;
	uint32_t ip_len = p->len - p->nh_off;
	bool v4 = p->nfproto == NFPROTO_IPV4;
	const struct nftdp_dp_port *o;
	struct nftdp_dp_icmp icmp;

	if ((v4 && iph[0] != 0x45) ||
	    nftdp_dp_ip_route_input(iph, ip_len, v4, pkttype_of(p->data) == PACKET_HOST, &dp->own,
				    &icmp) != NFTDP_DP_DROP_MAX ||
	    (dp->host && nftdp_dp_host_local(dp, v4, iph)) ||
	    local_dest(dp, v4, iph) != NFTDP_DP_DROP_MAX)
		return false;
	if (dp->route) {
		if (header) {
			p->iif = rx->ifindex;
			p->mark = 0;
		}
		if (nftdp_dp_nexthop_route(w, p, nh, &icmp) != NFTDP_DP_DROP_MAX)
			return false;
		nh->lladdr = nftdp_dp_nexthop_lladdr(w, nh, iph, v4);
		if (!nh->lladdr)
			return false;
	} else {
		nh->tx_port = dp->wire[rx->port_id];
	}
	/* ip_forward / ip6_forward change nothing unless they forward */
	memcpy(&nh->undo, iph + (v4 ? 8 : 4), 4);
	if ((v4 ? nftdp_dp_ip_forward(iph, ip_len) : nftdp_dp_ip6_forward(iph, ip_len)) !=
	    NFTDP_DP_DROP_MAX)
		return false;
	o = &dp->port[nh->tx_port];
	forward_priority(p);
	p->oif = o->ifindex;
	p->oifname = o->name;
	p->oiftype = ARPHRD_ETHER;
	return true;
}

/* fast_route undone, for a packet the pipeline takes after all; done
 * again by a second call */
static inline void route_undo(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, unsigned int idx)
{
	uint8_t *at = p->data + p->nh_off + (p->nfproto == NFPROTO_IPV4 ? 8 : 4);
	uint32_t now;

	memcpy(&now, at, 4);
	memcpy(at, &w->nh[idx].undo, 4);
	w->nh[idx].undo = now;
}

/* A packet fast_route forwarded, out: --route: the next hop's MACs
 * (nftdp_dp_nexthop_output); staged now while nothing of a packet before
 * it is left (key < first_slow), else by emit. */
static inline void route_out(struct nftdp_dp_worker *w, unsigned int idx, struct rte_mbuf *mb,
			     unsigned int first_slow)
{
	const struct nftdp_dp_nh *nh = &w->nh[idx];

	if (w->dp->route) {
		uint8_t *d = rte_pktmbuf_mtod(mb, uint8_t *);

		memcpy(d, nh->lladdr, 6);
		memcpy(d + 6, w->dp->port[nh->tx_port].mac.addr_bytes, 6);
	}
	if (idx < first_slow && !w->n_emit)
		nftdp_dp_tx_stage(w, nh->tx_port, mb);
	else
		emit(w, nh->tx_port, mb, (uint16_t)idx);
}

/*
 * The reassembled datagrams among act[0..n) go out as fragments, each
 * through netdev egress as its own packet (views from NFTDP_DP_FRAG_VIEW0,
 * keyed by the datagram); the rest stay in act, in order, for egress().
 */
static unsigned int refragment(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			       struct nftdp_vm_pkt **act, unsigned int n,
			       const struct nftdp_dp_port *tx, uint16_t rx_port)
{
	struct nftdp_vm_pkt *fr[NFTDP_DP_FRAG_VIEWS];
	struct rte_mbuf *out[NFTDP_DP_FRAG_VIEWS];
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = act[i];
		unsigned int idx = (unsigned int)(p - w->view), nf;

		if (idx >= NFTDP_VM_BURST_MAX || w->meta[idx].frag_max == 0) {
			act[k++] = p;
			continue;
		}
		nf = nftdp_dp_defrag_out(w, idx, tx->port_id, out, NFTDP_DP_FRAG_VIEWS);
		for (unsigned int j = 0; j < nf; j++) {
			unsigned int fv = NFTDP_DP_FRAG_VIEW0 + j;

			w->view[fv] = *p;
			w->view[fv].data = rte_pktmbuf_mtod(out[j], uint8_t *);
			w->meta[fv] = w->meta[idx];
			w->meta[fv].origin = (uint16_t)idx;
			w->meta[fv].frag_max = 0;
			w->meta[fv].ip_len = rte_pktmbuf_data_len(out[j]) - w->meta[idx].ip_off;
			w->mb[fv] = out[j];
			fr[j] = &w->view[fv];
		}
		egress(w, gen, fr, nf, tx, rx_port, false);
	}
	return k;
}

/*
 * --route: packets leave by their routes (w->nh[]: port), each with the
 * next hop's MACs (ip_finish_output2); those without a neighbour entry
 * go to nftdp_dp_nexthop_unresolved(). Then netdev egress port by port
 * (emit keeps the packets' order).
 */
static void egress_routed(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			  struct nftdp_vm_pkt **act, unsigned int n, uint16_t rx_port, bool replies)
{
	struct nftdp_vm_pkt *grp[NFTDP_VM_BURST_MAX];
	uint8_t done[NFTDP_VM_BURST_MAX] = {0};
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = act[i];
		unsigned int idx = (unsigned int)(p - w->view);

		if (nftdp_dp_nexthop_output(w, p, &w->meta[idx], &w->nh[idx], w->mb[idx]))
			act[k++] = p;
	}
	for (unsigned int first = 0; first < k; first++) {
		uint16_t port = w->nh[act[first] - w->view].tx_port;
		const struct nftdp_dp_port *tx = &w->dp->port[port];
		unsigned int m = 0;

		if (done[first])
			continue;
		for (unsigned int i = first; i < k; i++) {
			if (done[i] || w->nh[act[i] - w->view].tx_port != port)
				continue;
			done[i] = 1;
			grp[m++] = act[i];
		}
		if (w->n_reasm)
			m = refragment(w, gen, grp, m, tx, rx_port);
		egress(w, gen, grp, m, tx, rx_port, replies);
	}
}

int nftdp_dp_step_add(struct nftdp_dp *dp, uint8_t hook, int32_t prio, nftdp_dp_step_fn *fn,
		      bool (*active)(const struct nftdp_vm_gen *))
{
	unsigned int n = dp->n_builtin[hook];

	if (n == NFTDP_DP_STEPS_MAX)
		return -ENOSPC;
	while (n > 0 && dp->builtin[hook][n - 1].prio > prio) {
		dp->builtin[hook][n] = dp->builtin[hook][n - 1];
		n--;
	}
	dp->builtin[hook][n] = (struct nftdp_dp_builtin){.prio = prio, .fn = fn, .active = active};
	dp->n_builtin[hook]++;
	return 0;
}

/*
 * How the packets of a burst go through the hooks. The kernel takes one
 * packet through every hook before the next, so a packet sees everything
 * the packets before it left. Hook by hook over a burst gives the same
 * only while no packet can see what an earlier one leaves at a later hook.
 * A chain sees the burst in order; counters commute; what is shared across
 * chains is a set a dynset changes, a named quota or limit, the order of
 * log lines, a regular chain's own state (nftdp_vm_gen_shares_state).
 *
 * BURST_WHOLE: no conntrack, and one base chain on each family's path
 *   (netdev ingress and egress, inet ingress, prerouting, forward, output
 *   for replies, postrouting) or nothing shared across chains.
 * BURST_BY_CONNECTION: conntrack, no base chain before the conntrack step
 *   (it could set a zone, notrack or rewrite what conntrack looks up), and
 *   one base chain or nothing shared. A packet of an established connection
 *   leaves state only in its own connection, which the conntrack step
 *   advances in order, so packets of distinct established connections
 *   share a segment. A second packet of a connection starts a new one (a
 *   reply under NAT meets its original in one entry), and a packet that
 *   would create a connection (or be invalid, untracked, an ICMP error or a
 *   fragment) goes alone, so its confirm, NAT binding and NAT port are
 *   there for whatever follows. nat-type chains only run for such packets.
 * BURST_PRE_CT: as BURST_BY_CONNECTION, but base chains run before the
 *   conntrack step (netdev and inet ingress, raw prerouting; no bridge
 *   chain). What they see is the packet and their own state, which they
 *   see in order: nothing a later hook of an earlier packet changes, unless
 *   state is shared across chains (BURST_ONE above) or a rule reads
 *   conntrack's table (ct count: nftdp_vm_gen_reads_ct_table). So they run
 *   over the whole burst first, up to conntrack's step; then the segments
 *   by connection from that step on, probed as those chains left the
 *   packets (zone, notrack). A packet they untracked joins any segment:
 *   conntrack leaves no state for it.
 * BURST_ONE: anything else, one packet at a time.
 */
enum burst_mode { BURST_WHOLE, BURST_BY_CONNECTION, BURST_PRE_CT, BURST_ONE };

static enum burst_mode burst_mode(const struct nftdp_vm_gen *gen, bool tracking)
{
	static const uint8_t hooks[] = {NF_INET_INGRESS, NF_INET_PRE_ROUTING, NF_INET_FORWARD,
					NF_INET_LOCAL_OUT, NF_INET_POST_ROUTING};
	static const uint8_t fams[] = {NFPROTO_IPV4, NFPROTO_IPV6};
	bool shared, pre_ct = false;
	uint32_t netdev, bridge = 0;

	if (!gen)
		return tracking ? BURST_ONE : BURST_WHOLE;
	shared = nftdp_vm_gen_shares_state(gen);
	netdev = nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS) +
		 nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_EGRESS);
	/* bridge chains see every frame, before conntrack too (bridge.c) */
	for (uint8_t h = NF_BR_PRE_ROUTING; h <= NF_BR_POST_ROUTING; h++)
		bridge += nftdp_vm_gen_hook_len(gen, NFPROTO_BRIDGE, h);
	for (unsigned int f = 0; f < sizeof(fams); f++) {
		uint32_t chains = netdev + bridge;

		for (unsigned int h = 0; h < sizeof(hooks); h++)
			chains += nftdp_vm_gen_hook_len(gen, fams[f], hooks[h]);
		if (chains > 1 && shared)
			return BURST_ONE;
		pre_ct |= netdev || nftdp_vm_gen_hook_len(gen, fams[f], NF_INET_INGRESS) ||
			  nftdp_vm_gen_hook_has_prio(gen, fams[f], NF_INET_PRE_ROUTING, INT32_MIN,
						     NF_IP_PRI_CONNTRACK);
	}
	if (!tracking)
		return BURST_WHOLE;
	if (bridge)
		return BURST_ONE;
	if (!pre_ct)
		return BURST_BY_CONNECTION;
	return nftdp_vm_gen_reads_ct_table(gen) ? BURST_ONE : BURST_PRE_CT;
}

/* Which part of the pipeline run_segment_at takes views through */
enum seg_part {
	SEG_ALL,	/* netdev ingress views, steps 2-10 */
	SEG_PREROUTING, /* prerouting views (cached_view), nothing before */
	SEG_BEFORE_CT,	/* netdev ingress views up to prerouting's conntrack step */
	SEG_FROM_CT,	/* SEG_BEFORE_CT's prerouting views, from that step on */
};

static void run_replies(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint16_t rx_port,
			unsigned int r0, bool tracking);

/*
 * Steps 2-10 of the pipeline over seg[0..n_seg), parsed views of packets
 * received on rx_port, in arrival order, or the part of them that part
 * says. SEG_BEFORE_CT leaves the prerouting views still to go on in
 * pre[] and returns their number (non-IP frames have left, and the
 * replies its chains made); every other part returns 0.
 */
static unsigned int run_segment_at(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
				   uint16_t rx_port, struct nftdp_vm_pkt **seg, unsigned int n_seg,
				   bool tracking, enum seg_part part, struct nftdp_vm_pkt **pre)
{
	struct nftdp_dp *dp = w->dp;
	const struct nftdp_dp_port *rx = &dp->port[rx_port];
	uint16_t tx_port = dp->wire[rx_port];
	const struct nftdp_dp_port *tx = &dp->port[tx_port];
	struct nftdp_vm_pkt *act[NFTDP_VM_BURST_MAX], *ipl[NFTDP_VM_BURST_MAX];
	struct nftdp_vm_pkt *other[NFTDP_VM_BURST_MAX];
	struct nftdp_dp_meta *meta = w->meta;
	unsigned int na = n_seg, nip = 0, nother = 0, k, r0 = w->n_reply;
	bool inet_ingress;
	/* the plan's flag: a generation without bridge chains pays this test;
	 * a port without a --wire partner is no bridge */
	bool bridge = w->plan_bridge && tx_port != rx_port;

	if (part == SEG_PREROUTING || part == SEG_FROM_CT) {
		memcpy(ipl, seg, n_seg * sizeof(*ipl));
		nip = n_seg;
		if (part == SEG_PREROUTING) {
			w->st.hook[NFTDP_DP_ST_NETDEV_INGRESS][NFTDP_DP_V_ACCEPT] += n_seg;
			w->st.hook[NFTDP_DP_ST_INET_INGRESS][NFTDP_DP_V_ACCEPT] += n_seg;
		}
		goto prerouting;
	}

	/* 2. netdev ingress */
	memcpy(act, seg, na * sizeof(*act));
	na = run_netdev_hook(w, gen, NFTDP_DP_ST_NETDEV_INGRESS, NF_NETDEV_INGRESS, act, na, meta,
			     rx_port);

	/* 3. IP packets on to the inet stack; the rest straight to egress.
	 * inet ingress (nft_do_chain_inet_ingress) sees them untrimmed,
	 * skb->len as at netdev ingress: their view is set up in the same
	 * pass */
	inet_ingress = walk_of(w, gen, NF_INET_INGRESS)->n != 0;
	for (unsigned int i = 0; i < na; i++) {
		struct nftdp_vm_pkt *p = act[i];
		const struct nftdp_dp_meta *mt = &meta[p - w->view];

		if (!is_ip(mt->ip_proto)) {
			if (dp->router) {
				/* ARP and the like are the host stack's, never forwarded */
				if (dp->host) {
					nftdp_dp_host_l2(w, p, rx_port);
					continue;
				}
				w->st.drop[NFTDP_DP_DROP_NOT_FORWARDED]++;
				rte_pktmbuf_free(w->mb[p - w->view]);
				continue;
			}
			other[nother++] = p;
			continue;
		}
		if (dp->router && mt->vid != 0) {
			/* no VLAN device: PACKET_OTHERHOST, dropped by ip_rcv */
			w->st.drop[NFTDP_DP_DROP_OTHERHOST]++;
			rte_pktmbuf_free(w->mb[p - w->view]);
			continue;
		}
		p->nh_off = mt->ip_off;
		p->protocol = htons(mt->ip_proto);
		p->skb_len = p->len - mt->ip_off;
		if (inet_ingress) {
			nftdp_vm_pkt_parse_ip(p);
		} else {
			/* no chain reads this view: the version check alone */
			uint8_t ver = mt->ip_off < p->len ? p->data[mt->ip_off] >> 4 : 0;

			p->nfproto = mt->ip_proto == NFTDP_DP_ETH_P_IP
					 ? (ver == 4 ? NFPROTO_IPV4 : 0)
					 : (ver == 6 ? NFPROTO_IPV6 : 0);
		}
		if (p->nfproto != NFPROTO_IPV4 && p->nfproto != NFPROTO_IPV6) {
			/* ethertype says IP, version nibble disagrees: ip_rcv drops it */
			w->st.drop[mt->ip_proto == NFTDP_DP_ETH_P_IP ? NFTDP_DP_DROP_IP_HDR
								     : NFTDP_DP_DROP_IP6_HDR]++;
			rte_pktmbuf_free(w->mb[p - w->view]);
			continue;
		}
		ipl[nip++] = p;
	}
	nip =
	    run_ip_hook(w, gen, NFTDP_DP_ST_INET_INGRESS, NF_INET_INGRESS, ipl, nip, meta, rx_port);

	/* bridge prerouting up to br_netfilter's NF_BR_PRI_BRNF (bridge.c) */
	if (bridge)
		nftdp_dp_bridge_hook(w, gen, NF_BR_PRE_ROUTING, INT32_MIN, NF_BR_PRI_BRNF, ipl,
				     &nip, other, &nother, rx_port);

	/* 4. ip_rcv / ipv6_rcv: what the kernel drops before prerouting */
	k = 0;
	for (unsigned int i = 0; i < nip; i++) {
		struct nftdp_vm_pkt *p = ipl[i];
		unsigned int idx = (unsigned int)(p - w->view);
		struct nftdp_dp_meta *mt = &meta[idx];
		uint32_t avail = rte_pktmbuf_data_len(w->mb[idx]) - mt->ip_off;
		enum nftdp_dp_drop why;
		struct nftdp_dp_icmp icmp = {0};

		why = mt->ip_proto == NFTDP_DP_ETH_P_IP
			  ? nftdp_dp_ip_rcv(p->data + mt->ip_off, avail, &mt->ip_len)
			  : nftdp_dp_ip6_rcv_icmp(p->data + mt->ip_off, avail, &mt->ip_len, &icmp);
		if (why != NFTDP_DP_DROP_MAX) {
			uint32_t len =
			    nftdp_dp_icmp_build(p->data, mt->ip_off, mt->ip_len, &icmp, 0,
						icmp_src(rx, false), w->reply, sizeof(w->reply));

			if (len) /* a hop-by-hop option's parameter problem */
				send_reply(w, rx_port, len, p);
			w->st.drop[why]++;
			rte_pktmbuf_free(w->mb[idx]);
			continue;
		}
		view_ip(p, mt);
		/* CHECKSUM_UNNECESSARY: the port verified the L4 checksum, so
		 * conntrack's nf_checksum need not (never for a fragment) */
		if ((w->mb[idx]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
			RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
		    !p->fragoff &&
		    !(mt->ip_proto == NFTDP_DP_ETH_P_IP && (p->data[mt->ip_off + 6] & 0x20)))
			p->flags |= NFTDP_VM_PKT_F_CSUM_OK;
		/* pskb_trim_rcsum: Ethernet padding and trailing bytes go;
		 * not from a tagged frame crossing the bridge, which
		 * br_netfilter leaves alone (brnf_filter_vlan_tagged 0) */
		if (!bridge || mt->l2_nh == 14)
			trim_linear(w->mb[idx],
				    (uint16_t)(rte_pktmbuf_data_len(w->mb[idx]) - p->len));
		ipl[k++] = p;
	}
	nip = k;

prerouting:
	/* 5. prerouting: iif = rx, no oif */
	nip = run_ip_hook_part(w, gen, NFTDP_DP_ST_PREROUTING, NF_INET_PRE_ROUTING, ipl, nip, meta,
			       rx_port,
			       part == SEG_BEFORE_CT ? HOOK_BEFORE_CT
			       : part == SEG_FROM_CT ? HOOK_FROM_CT
						     : HOOK_ALL);
	if (part == SEG_BEFORE_CT) {
		/* non-IP frames leave now, the rest after the burst's first
		 * part; flush_emits() puts them back in arrival order */
		if (nother)
			egress(w, gen, other, nother, tx, rx_port, false);
		run_replies(w, gen, rx_port, r0, tracking);
		memcpy(pre, ipl, nip * sizeof(*ipl));
		return nip;
	}
	if (bridge) /* the rest of bridge prerouting, then forward up to br_nf_forward */
		nftdp_dp_bridge_hook(w, gen, NF_BR_PRE_ROUTING, NF_BR_PRI_BRNF + 1, INT32_MAX, ipl,
				     &nip, other, &nother, rx_port);
	if (bridge)
		nftdp_dp_bridge_hook(w, gen, NF_BR_FORWARD, INT32_MIN, NF_BR_PRI_BRNF, ipl, &nip,
				     other, &nother, rx_port);

	/* 6. --router: the kernel's forwarding step before the forward hook */
	if (dp->router) {
		struct nftdp_vm_pkt *loc[NFTDP_VM_BURST_MAX];
		unsigned int nloc = 0;

		k = 0;
		for (unsigned int i = 0; i < nip; i++) {
			struct nftdp_vm_pkt *p = ipl[i];
			unsigned int idx = (unsigned int)(p - w->view);
			const struct nftdp_dp_meta *mt = &meta[idx];
			uint8_t *iph = p->data + mt->ip_off;
			enum nftdp_dp_drop why;
			struct nftdp_dp_icmp icmp;

			why = nftdp_dp_ip_route_input(iph, mt->ip_len, p->nfproto == NFPROTO_IPV4,
						      p->pkttype == PACKET_HOST, &dp->own, &icmp);
			/* the routing decision "local": ip_local_deliver (host.c) */
			if (dp->host &&
			    (why == NFTDP_DP_DROP_MAX || why == NFTDP_DP_DROP_L2_NOT_HOST) &&
			    nftdp_dp_host_local(dp, p->nfproto == NFPROTO_IPV4, iph)) {
				loc[nloc++] = p;
				continue;
			}
			if (why == NFTDP_DP_DROP_MAX)
				why = local_dest(dp, p->nfproto == NFPROTO_IPV4, iph);
			/* --route: ip_route_input's lookup (nexthop.c) */
			if (why == NFTDP_DP_DROP_MAX && dp->route)
				why = nftdp_dp_nexthop_route(w, p, &w->nh[idx], &icmp);
			if (why == NFTDP_DP_DROP_MAX && mt->frag_max &&
			    too_big(w, p, mt, rx, rx_port,
				    dp->route ? w->nh[idx].tx_port : tx_port))
				continue;
			if (why == NFTDP_DP_DROP_MAX)
				why = p->nfproto == NFPROTO_IPV4
					  ? nftdp_dp_ip_forward(iph, mt->ip_len)
					  : nftdp_dp_ip6_forward(iph, mt->ip_len);
			if (why == NFTDP_DP_DROP_MAX) {
				const struct nftdp_dp_port *o =
				    dp->route ? &dp->port[w->nh[idx].tx_port] : tx;

				if (p->nfproto == NFPROTO_IPV4 && o->has_addr4)
					nftdp_dp_ip_forward_options(iph, o->addr4);
				ipl[k++] = p;
				continue;
			}
			w->st.drop[why]++;
			if (why == NFTDP_DP_DROP_TTL) {
				/* icmp_send(ICMP_TIME_EXCEEDED, ICMP_EXC_TTL) / ICMPV6_TIME_EXCEED
				 */
				uint32_t len = nftdp_dp_reject_build(
				    p->data, mt->ip_off, mt->ip_len, false,
				    p->nfproto == NFPROTO_IPV4 ? 11 : 3, 0, w->ip_id++,
				    icmp_src(rx, p->nfproto == NFPROTO_IPV4), w->reply,
				    sizeof(w->reply));

				if (len)
					send_reply(w, rx_port, len, p);
			} else if (why == NFTDP_DP_DROP_NO_ROUTE && icmp.type) {
				/* ip_error / ip6_pkt_discard: destination unreachable */
				uint32_t len = nftdp_dp_reject_build(
				    p->data, mt->ip_off, mt->ip_len, false, icmp.type, icmp.code,
				    w->ip_id++, icmp_src(rx, p->nfproto == NFPROTO_IPV4), w->reply,
				    sizeof(w->reply));

				if (len)
					send_reply(w, rx_port, len, p);
			} else if (icmp.type) { /* ip_options_compile's parameter problem */
				uint32_t len = nftdp_dp_icmp_build(
				    p->data, mt->ip_off, mt->ip_len, &icmp, w->ip_id++,
				    icmp_src(rx, true), w->reply, sizeof(w->reply));

				if (len)
					send_reply(w, rx_port, len, p);
			}
			rte_pktmbuf_free(w->mb[idx]);
		}
		nip = k;
		if (nloc)
			nftdp_dp_host_input(w, gen, loc, nloc, rx_port, tracking);
	}

	/* 7. forward: iif = rx, oif = tx (--route: the route's port) */
	for (unsigned int i = 0; i < nip; i++) {
		const struct nftdp_dp_port *o =
		    dp->route ? &dp->port[w->nh[ipl[i] - w->view].tx_port] : tx;

		/* ip_forward's; br_netfilter's forward of bridged IP has none */
		if (!bridge)
			forward_priority(ipl[i]);
		ipl[i]->oif = o->ifindex;
		ipl[i]->oifname = o->name;
		ipl[i]->oiftype = ARPHRD_ETHER;
	}
	nip = run_ip_hook(w, gen, NFTDP_DP_ST_FORWARD, NF_INET_FORWARD, ipl, nip, meta, rx_port);
	if (bridge) { /* from br_nf_forward on; postrouting up to br_nf_post_routing (last) */
		nftdp_dp_bridge_hook(w, gen, NF_BR_FORWARD, NF_BR_PRI_BRNF + 1, INT32_MAX, ipl,
				     &nip, other, &nother, rx_port);
		nftdp_dp_bridge_hook(w, gen, NF_BR_POST_ROUTING, INT32_MIN, INT32_MAX, ipl, &nip,
				     other, &nother, rx_port);
	}

	/* 8. postrouting: the kernel's ip_output still passes the input device */
	nip = run_ip_hook(w, gen, NFTDP_DP_ST_POSTROUTING, NF_INET_POST_ROUTING, ipl, nip, meta,
			  rx_port);
	/* __nf_conntrack_confirm, last in postrouting */
	if (tracking)
		nip = nftdp_dp_ct_confirm_accepted(w, ipl, nip);

	/* 9. netdev egress, then tx, in arrival order; reassembled datagrams
	 * leave as fragments (ip_fragment before the device) */
	na = 0;
	for (unsigned int i = 0, j = 0; i < nip || j < nother;)
		act[na++] = (j >= nother || (i < nip && ipl[i] < other[j])) ? ipl[i++] : other[j++];
	if (dp->route) {
		egress_routed(w, gen, act, na, rx_port, false);
	} else {
		if (w->n_reasm)
			na = refragment(w, gen, act, na, tx, rx_port);
		egress(w, gen, act, na, tx, rx_port, false);
	}

	/* 10. the replies of this segment */
	run_replies(w, gen, rx_port, r0, tracking);
	/* whatever was tracked and did not get through postrouting was dropped:
	 * its unconfirmed entry goes (a dropped first packet leaves none) */
	if (tracking)
		nftdp_dp_ct_confirm(w, seg, n_seg, NF_DROP);
	return 0;
}

/*
 * The replies made since reply r0 (rejects, time exceeded): output,
 * postrouting, netdev egress, out of the rx port (--route: by route). dup
 * copies (dup to ADDR) are made here too, and go through output and
 * postrouting as ip_local_out sends them; a reply that output duplicates
 * makes one more round.
 */
static void run_replies(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint16_t rx_port,
			unsigned int r0, bool tracking)
{
	struct nftdp_dp *dp = w->dp;
	const struct nftdp_dp_port *rx = &dp->port[rx_port];
	const struct nftdp_dp_port *tx = &dp->port[dp->wire[rx_port]];
	struct nftdp_vm_pkt *act[NFTDP_VM_BURST_MAX];
	struct nftdp_dp_meta *meta = w->meta;
	unsigned int na, k;

	for (unsigned int r1; (r1 = w->n_reply) > r0; r0 = r1) {
		na = r1 - r0;
		for (unsigned int i = 0; i < na; i++)
			act[i] = &w->view[NFTDP_VM_BURST_MAX + r0 + i];
		if (dp->route) /* by route to the source, as icmp_send */
			na = nftdp_dp_nexthop_replies(w, act, na);
		na = run_ip_hook(w, gen, NFTDP_DP_ST_OUTPUT, NF_INET_LOCAL_OUT, act, na, meta,
				 rx_port);
		/* ip_output passes skb->dev as the input device: for a dup
		 * copy that is the device nf_dup_ipv4_route set, the oif */
		for (unsigned int i = 0; i < na; i++)
			if (meta[act[i] - w->view].dup) {
				act[i]->iif = act[i]->oif;
				act[i]->iifname = act[i]->oifname;
				act[i]->iiftype = act[i]->oiftype;
			}
		na = run_ip_hook(w, gen, NFTDP_DP_ST_POSTROUTING, NF_INET_POST_ROUTING, act, na,
				 meta, rx_port);
		if (tracking) {
			/* give back the connections the replies joined */
			struct nftdp_vm_pkt *all[NFTDP_VM_BURST_MAX];

			nftdp_dp_ct_confirm(w, act, na, NF_ACCEPT);
			for (unsigned int i = 0; i < r1 - r0; i++)
				all[i] = &w->view[NFTDP_VM_BURST_MAX + r0 + i];
			nftdp_dp_ct_confirm(w, all, r1 - r0, NF_DROP);
		}
		if (dp->route) {
			egress_routed(w, gen, act, na, rx_port, true);
		} else {
			/* synproxy's segments sent on leave by the wire partner;
			 * dup copies by their route */
			struct nftdp_vm_pkt *on[NFTDP_VM_BURST_MAX], *cp[NFTDP_VM_BURST_MAX];
			unsigned int non = 0, ncp = 0;

			k = 0;
			for (unsigned int i = 0; i < na; i++) {
				if (meta[act[i] - w->view].dup)
					cp[ncp++] = act[i];
				else if (meta[act[i] - w->view].onward)
					on[non++] = act[i];
				else
					act[k++] = act[i];
			}
			egress(w, gen, act, k, rx, rx_port, true);
			if (non)
				egress(w, gen, on, non, tx, rx_port, true);
			if (ncp)
				egress_routed(w, gen, cp, ncp, rx_port, true);
		}
	}
}

static void run_segment(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint16_t rx_port,
			struct nftdp_vm_pkt **seg, unsigned int n_seg, bool tracking)
{
	run_segment_at(w, gen, rx_port, seg, n_seg, tracking, SEG_ALL, NULL);
}

static inline uint64_t entry_bit(const void *e)
{
	uintptr_t a = (uintptr_t)e;

	return 1ull << ((a ^ (a >> 6) ^ (a >> 12)) & 63);
}

/*
 * BURST_BY_CONNECTION: segments of packets of distinct established
 * connections; a packet conntrack would not find an established entry for
 * runs alone. The probe looks at the table as the segment will find it: a
 * packet that ends a segment is probed again after that segment ran.
 * ready (PLAN_TRACKED): which views cached_view made, prerouting views
 * that are probed in place and enter the pipeline at prerouting; the
 * others run the whole pipeline alone. NULL: every view is a netdev
 * ingress view. from: where ready views enter (SEG_PREROUTING, or
 * SEG_FROM_CT after BURST_PRE_CT's first part).
 *
 * With ready views, first packets of new connections join segments too
 * where nftdp_dp_ct_group_new() allows: without NAT, order-visible chain
 * state or a table near full, what one new connection does shows to
 * another only when one packet's tuple is the other's (or its reply), so
 * such a packet ends the segment; the 64-bit filter over both directions
 * errs towards ending it.
 */
static void run_by_connection(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			      uint16_t rx_port, struct nftdp_vm_pkt **act, const bool *ready,
			      unsigned int na, enum seg_part from)
{
	const void *ent[NFTDP_VM_BURST_MAX];
	unsigned int start = 0, i = 0;
	bool at_pre = ready != NULL;
	bool group_new = at_pre && nftdp_dp_ct_group_new(w);
	/* a bit per entry address hash of the segment's entries (most
	 * packets are told apart without the walk over ent), and one per
	 * connection its new packets start */
	uint64_t seen = 0, fresh = 0;

	while (i < na) {
		unsigned int v = (unsigned int)(act[i] - w->view);
		const struct nftdp_dp_meta *mt = &w->meta[v];
		struct nftdp_vm_pkt probe;
		const void *e = NULL;
		uint64_t conn = 0;
		bool alone = false;

		if (ready && !ready[i]) {
			/* before what it would join: no state is ahead of it */
			if (i > start)
				run_segment_at(w, gen, rx_port, act + start, i - start, true, from,
					       NULL);
			run_segment(w, gen, rx_port, act + i, 1, true);
			start = ++i;
			seen = fresh = 0;
			continue;
		}
		if (at_pre) {
			/* untracked by a chain before conntrack: no state */
			bool untracked = act[i]->out.notrack || act[i]->ct_untracked;

			e = nftdp_dp_ct_probe(w, act[i], v);
			if (!e && group_new && !untracked)
				conn = nftdp_dp_ct_conn_bit(w, v);
			/* new: alone unless it has a tuple no other new packet
			 * of the segment may share */
			alone = !e && !untracked && (!conn || (fresh & conn));
		} else if (is_ip(mt->ip_proto)) {
			/* the prerouting view conntrack will see */
			probe = *act[i];
			view_ip(&probe, mt);
			e = nftdp_dp_ct_probe(w, &probe, NFTDP_VM_BURST_MAX);
			alone = e == NULL;
		}
		/* a second packet of one connection */
		for (unsigned int j = start; e && (seen & entry_bit(e)) && j < i; j++)
			if (ent[j] == e) {
				alone = true;
				break;
			}
		if (!alone) {
			if (e)
				seen |= entry_bit(e);
			fresh |= conn;
			ent[i++] = e; /* NULL: not IP, never tracked, or new */
			continue;
		}
		seen = fresh = 0;
		if (i > start) {
			/* run what came before, then probe this one again */
			run_segment_at(w, gen, rx_port, act + start, i - start, true,
				       at_pre ? from : SEG_ALL, NULL);
			start = i;
			continue;
		}
		run_segment_at(w, gen, rx_port, act + i, 1, true, at_pre ? from : SEG_ALL, NULL);
		start = ++i;
	}
	if (na > start)
		run_segment_at(w, gen, rx_port, act + start, na - start, true,
			       at_pre ? from : SEG_ALL, NULL);
}

/* A frame's meta from its L2 parse (ip_len: its IP datagram's length) */
static inline __attribute__((always_inline)) void
meta_from_l2(struct nftdp_dp_meta *mt, const struct nftdp_dp_l2 *l2, uint32_t ip_len)
{
	mt->ip_off = l2->ip_off;
	mt->l2_nh = l2->nh_off;
	mt->l2_proto = l2->proto;
	mt->ip_proto = l2->ip_proto;
	mt->vid = l2->vid;
	mt->frag_max = 0;
	mt->ip_len = ip_len;
}

/* What a fresh view of mb knows of where it came from; payload writes
 * only on mbufs nobody else holds. */
static inline __attribute__((always_inline)) void
view_rx(const struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, const struct rte_mbuf *mb,
	const uint8_t *d, const struct nftdp_dp_port *rx)
{
	if (!RTE_MBUF_DIRECT(mb) || rte_mbuf_refcnt_read(mb) != 1)
		p->flags &= (uint8_t)~NFTDP_VM_PKT_F_WRITABLE;
	p->iif = rx->ifindex;
	p->iifname = rx->name;
	p->iiftype = ARPHRD_ETHER;
	p->pkttype = pkttype_of(d);
	p->cpu = (uint16_t)w->lcore;
}

/* View i of this burst for the parsed frame mb: the netdev ingress view
 * (skb->len: frame minus 14, padding included; the outer tag untagged as
 * skb_vlan_untag leaves it) and its meta. In line in the passes' per-frame
 * loops: a call a frame was a fifth of its cost. */
static inline __attribute__((always_inline)) void
setup_view(struct nftdp_dp_worker *w, unsigned int i, struct rte_mbuf *mb,
	   const struct nftdp_dp_l2 *l2, const struct nftdp_dp_port *rx, bool nd_ingress)
{
	struct nftdp_dp_meta *mt = &w->meta[i];
	struct nftdp_vm_pkt *p = &w->view[i];
	uint8_t *d = rte_pktmbuf_mtod(mb, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(mb);

	w->mb[i] = mb;
	mt->dup = 0; /* host.c and unres.c make replies with this too */
	meta_from_l2(mt, l2,
		     is_ip(l2->ip_proto) ? nftdp_dp_ip_len_clip(d + l2->ip_off, len - l2->ip_off,
								l2->ip_proto == NFTDP_DP_ETH_P_IP)
					 : 0);
	nftdp_vm_pkt_init(p, d, len, 0, l2->nh_off);
	view_rx(w, p, mb, d, rx);
	p->protocol = htons(l2->proto);
	if (nd_ingress && is_ip(l2->proto))
		nftdp_vm_pkt_parse_ip(p); /* nft_do_chain_netdev's pktinfo */
	p->nfproto = NFPROTO_NETDEV;
	p->hook = NF_NETDEV_INGRESS;
}

/*
 * Frame i of the burst m[0..n) as the pipeline takes it: the one four
 * ahead prefetched, chained mbufs linearized (the VM needs contiguous
 * bytes) or dropped when the first segment has no room, the L2 parse into
 * l2, frames shorter than an Ethernet header dropped. false: dropped,
 * counted and freed.
 */
static inline __attribute__((always_inline)) bool
rx_frame_at(struct nftdp_dp_worker *w, struct rte_mbuf *mb, struct nftdp_dp_l2 *l2)
{
	if (mb->nb_segs > 1 && rte_pktmbuf_linearize(mb) < 0) {
		w->st.drop[NFTDP_DP_DROP_MULTISEG]++;
		rte_pktmbuf_free(mb);
		return false;
	}
	if (!nftdp_dp_parse_l2(rte_pktmbuf_mtod(mb, uint8_t *), rte_pktmbuf_data_len(mb), l2)) {
		w->st.drop[NFTDP_DP_DROP_RUNT]++;
		rte_pktmbuf_free(mb);
		return false;
	}
	return true;
}

static inline __attribute__((always_inline)) bool rx_frame(struct nftdp_dp_worker *w,
							   struct rte_mbuf **m, unsigned int i,
							   unsigned int n, struct nftdp_dp_l2 *l2)
{
	if (i + 4 < n)
		rte_prefetch0(rte_pktmbuf_mtod(m[i + 4], void *));
	return rx_frame_at(w, m[i], l2);
}

/* what nftdp_dp_parse_l2 gives an untagged IPv4 or IPv6 frame: constants
 * the passes' loops are built around (rx_plain) */
static const struct nftdp_dp_l2 l2_ip4 = {.proto = NFTDP_DP_ETH_P_IP,
					  .nh_off = NFTDP_DP_ETH_HLEN,
					  .ip_proto = NFTDP_DP_ETH_P_IP,
					  .ip_off = NFTDP_DP_ETH_HLEN};
static const struct nftdp_dp_l2 l2_ip6 = {.proto = NFTDP_DP_ETH_P_IPV6,
					  .nh_off = NFTDP_DP_ETH_HLEN,
					  .ip_proto = NFTDP_DP_ETH_P_IPV6,
					  .ip_off = NFTDP_DP_ETH_HLEN};

/* the frames of a burst of n whose one four ahead is prefetched: [0, rx_pf(n)) */
static inline unsigned int rx_pf(unsigned int n)
{
	return n > 4 ? n - 4 : 0;
}

/*
 * rx_frame's common case without the parse into a struct: frame i of m[0..n)
 * (the one four ahead prefetched where i < pf, rx_pf(n)) when it is one
 * segment, untagged and IPv4 or IPv6: l2_ip4 or l2_ip6, which is what
 * rx_frame would have parsed;
 * NULL for any other frame (it takes rx_frame_at). The callers' loops
 * have a copy for each, with the offsets constant.
 */
static inline __attribute__((always_inline)) const struct nftdp_dp_l2 *
rx_plain(struct rte_mbuf **m, unsigned int i, unsigned int pf)
{
	struct rte_mbuf *mb = m[i];
	uint16_t t;

	if (i < pf)
		rte_prefetch0(rte_pktmbuf_mtod(m[i + 4], void *));
	if (mb->nb_segs != 1 || rte_pktmbuf_data_len(mb) < NFTDP_DP_ETH_HLEN)
		return NULL;
	t = nftdp_rd16(rte_pktmbuf_mtod(mb, uint8_t *) + 12);
	return t == NFTDP_DP_ETH_P_IP ? &l2_ip4 : t == NFTDP_DP_ETH_P_IPV6 ? &l2_ip6 : NULL;
}

/* Whether the port verified the IPv4 header checksum of mb. Only where
 * nothing ran before ip_rcv (a netdev chain may have rewritten the
 * header): the empty and cached passes. */
static inline bool ip_csum_good(const struct rte_mbuf *mb)
{
	return (mb->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD;
}

/*
 * Whether the generation leaves nothing to do between ip_rcv and the wire
 * but the --router step: no base chain at any hook and no conntrack (so no
 * built-in step). Then a burst takes one pass (burst_empty).
 */
static bool plan_empty(const struct nftdp_dp *dp, const struct nftdp_vm_gen *gen, bool tracking)
{
	static const uint8_t hooks[] = {NF_INET_INGRESS, NF_INET_PRE_ROUTING, NF_INET_FORWARD,
					NF_INET_LOCAL_OUT, NF_INET_POST_ROUTING};
	static const uint8_t fams[] = {NFPROTO_IPV4, NFPROTO_IPV6};

	if (tracking)
		return false;
	if (!gen)
		return true;
	if (nftdp_dp_bridge_on(dp, gen))
		return false;
	if (nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS) ||
	    nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_EGRESS))
		return false;
	for (unsigned int f = 0; f < sizeof(fams); f++)
		for (unsigned int h = 0; h < sizeof(hooks); h++)
			if (nftdp_vm_gen_hook_len(gen, fams[f], hooks[h]))
				return false;
	return true;
}

/* the empty pass's counts of the rare cases (burst_empty_at) and the
 * frames it stages: out[0..no) in the tx buffer's free room (tx_room),
 * made its own by tx_commit */
struct empty_acc {
	unsigned int nother, ndrop, nver, no;
	struct rte_mbuf **out;
};

/* the free room of port's tx buffer, k frames at least (it flushes
 * otherwise): a pass writes frames there without a copy per frame */
static inline struct rte_mbuf **tx_room(struct nftdp_dp_worker *w, uint16_t port, unsigned int k)
{
	struct nftdp_dp_txbuf *b = &w->tx[port];

	_Static_assert(NFTDP_DP_TXBUF >= NFTDP_VM_BURST_MAX, "a burst fits the tx buffer");
	if (NFTDP_DP_TXBUF - (unsigned int)b->n < k)
		nftdp_dp_tx_flush_port(w, port);
	return &b->m[b->n];
}

/* the k frames written at tx_room staged, in order */
static inline void tx_commit(struct nftdp_dp_worker *w, uint16_t port, unsigned int k)
{
	w->tx[port].n = (uint16_t)(w->tx[port].n + k);
}

/*
 * Frame i of the empty pass, mb parsed into l2: passed on (staged, routed,
 * or counted and dropped), or false when the full pipeline must take it.
 * Inline: the loop has a copy for l2_ip4 and l2_ip6 with its offsets
 * constant and one for any other frame.
 */
static inline __attribute__((always_inline)) bool
empty_frame(struct nftdp_dp_worker *w, const struct nftdp_dp_port *rx, struct rte_mbuf *mb,
	    unsigned int i, const struct nftdp_dp_l2 *l2, struct empty_acc *acc, const bool router)
{
	struct nftdp_vm_pkt *p = &w->view[i];
	enum nftdp_dp_drop why;
	struct nftdp_dp_icmp icmp;
	uint32_t len, avail, ip_len;
	const uint8_t *iph;
	uint8_t *d;

	/* --router: not IP (the host's or dropped), or tagged (no VLAN
	 * device); so acc->out (what route_out may stage after) stays
	 * empty */
	if (router && (l2->vid || !is_ip(l2->ip_proto)))
		return false;
	d = rte_pktmbuf_mtod(mb, uint8_t *);
	len = rte_pktmbuf_data_len(mb);
	/* inet ingress's version check, then ip_rcv / ipv6_rcv: one
	 * branch on the family, the checks of each inline. ip_rcv's
	 * own version check drops for the same reason as inet
	 * ingress's: the packet is taken off inet ingress's count on
	 * the drop path, not tested twice (parse_l2: ip_off <= len) */
	iph = d + l2->ip_off;
	avail = len - l2->ip_off;
	if (l2->ip_proto == NFTDP_DP_ETH_P_IP) {
		why = nftdp_dp_ip_rcv_hw(iph, avail, &ip_len, ip_csum_good(mb));
	} else if (l2->ip_proto == NFTDP_DP_ETH_P_IPV6) {
		/* a hop-by-hop header (or a frame too short to say):
		 * ipv6_parse_hopopts, which may answer */
		if (avail < 40 || iph[6] == 0) {
			why = nftdp_dp_ip6_rcv_icmp(iph, avail, &ip_len, &icmp);
			/* answered: the full pipeline, which counts it */
			if (why != NFTDP_DP_DROP_MAX && icmp.type)
				return false;
		} else {
			why = nftdp_dp_ip6_rcv_core(iph, avail, &ip_len);
		}
	} else {
		acc->nother++;
		acc->out[acc->no++] = mb;
		return true;
	}
	if (why != NFTDP_DP_DROP_MAX) {
		/* dropped by inet ingress's version check: not past it */
		if ((why == NFTDP_DP_DROP_IP_HDR || why == NFTDP_DP_DROP_IP6_HDR) &&
		    (!avail || (iph[0] >> 4) != (why == NFTDP_DP_DROP_IP_HDR ? 4 : 6)))
			acc->nver++;
		acc->ndrop++;
		w->st.drop[why]++;
		rte_pktmbuf_free(mb);
		return true;
	}
	if (router) {
		bool plain;

		/* --route looks the flow up: a header view; --router
		 * reads the header alone */
		if (w->dp->route) {
			plain = nftdp_vm_pkt_header_view(p, d, l2->ip_off + ip_len, l2->ip_off) &&
				fast_route(w, p, i, rx, true);
		} else {
			p->data = d;
			p->nh_off = l2->ip_off;
			p->len = l2->ip_off + ip_len;
			p->nfproto =
			    l2->ip_proto == NFTDP_DP_ETH_P_IP ? NFPROTO_IPV4 : NFPROTO_IPV6;
			plain = fast_route(w, p, i, rx, true);
		}
		if (!plain)
			return false;
		trim_linear(mb, (uint16_t)(avail - ip_len));
		route_out(w, i, mb, NFTDP_VM_BURST_MAX);
		return true;
	}
	/* pskb_trim_rcsum */
	trim_linear(mb, (uint16_t)(avail - ip_len));
	acc->out[acc->no++] = mb;
	return true;
}

/*
 * The empty plan in one pass: linearize, the L2 parse, the version check
 * of inet ingress, ip_rcv / ipv6_rcv with their drops, the trim, and out
 * of the wire's port, with the per-hook accept counts the full pipeline
 * would give. A packet ipv6_rcv answers (a hop-by-hop parameter problem)
 * takes the full pipeline alone, so its reply is built the one way. Frames
 * go to the tx buffer directly, in arrival order (no emit bookkeeping):
 * what the full pipeline emitted for an answered packet is staged before
 * the next packet's. --router: the router step too (fast_route), out of
 * the route's port; a frame it leaves (not IP, tagged, not plainly
 * forwarded) takes the full pipeline alone as well. An untagged IPv4 or
 * IPv6 frame of one segment (rx_plain) takes a copy of the frame's step
 * with its L2 offsets constant.
 */
static inline __attribute__((always_inline)) void
burst_empty_at(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint16_t rx_port,
	       struct rte_mbuf **m, unsigned int n, const bool router)
{
	const struct nftdp_dp_port *rx = &w->dp->port[rx_port];
	uint16_t tx_port = w->dp->wire[rx_port];
	/* the hooks' counts from the rare cases' (no count a packet on the
	 * common path): runts, those the full pipeline takes; acc: non-IP,
	 * drops, drops at inet ingress's version check */
	unsigned int nrunt = 0, nfull = 0;
	unsigned int nd, nip, nfw;
	struct empty_acc acc;

	acc.nother = acc.ndrop = acc.nver = acc.no = 0;
	acc.out = tx_room(w, tx_port, n);
	for (unsigned int i = 0, pf = rx_pf(n); i < n; i++) {
		struct rte_mbuf *mb = m[i];
		struct nftdp_vm_pkt *p = &w->view[i];
		const struct nftdp_dp_l2 *l2 = rx_plain(m, i, pf);
		struct nftdp_dp_l2 parsed;

		if (l2 == &l2_ip4) {
			if (empty_frame(w, rx, mb, i, &l2_ip4, &acc, router))
				continue;
		} else if (l2 == &l2_ip6) {
			if (empty_frame(w, rx, mb, i, &l2_ip6, &acc, router))
				continue;
		} else {
			if (!rx_frame_at(w, mb, &parsed)) {
				nrunt++;
				continue;
			}
			l2 = &parsed;
			if (empty_frame(w, rx, mb, i, &parsed, &acc, router))
				continue;
		}
		/* the full pipeline alone, which counts it */
		nfull++;
		tx_commit(w, tx_port, acc.no);
		setup_view(w, i, mb, l2, rx, false);
		run_segment(w, gen, rx_port, &p, 1, false);
		/* its frames now, before the next packet's */
		flush_emits(w);
		acc.no = 0;
		acc.out = tx_room(w, tx_port, n - i);
	}
	tx_commit(w, tx_port, acc.no);
	/* what netdev ingress passed: non-IP, dropped or forwarded */
	nd = n - nrunt - nfull;
	nip = nd - acc.nother - acc.nver;
	nfw = nd - acc.nother - acc.ndrop;
	w->st.hook[NFTDP_DP_ST_NETDEV_INGRESS][NFTDP_DP_V_ACCEPT] += nd;
	w->st.hook[NFTDP_DP_ST_INET_INGRESS][NFTDP_DP_V_ACCEPT] += nip;
	w->st.hook[NFTDP_DP_ST_PREROUTING][NFTDP_DP_V_ACCEPT] += nfw;
	w->st.hook[NFTDP_DP_ST_FORWARD][NFTDP_DP_V_ACCEPT] += nfw;
	w->st.hook[NFTDP_DP_ST_POSTROUTING][NFTDP_DP_V_ACCEPT] += nfw;
	w->st.hook[NFTDP_DP_ST_NETDEV_EGRESS][NFTDP_DP_V_ACCEPT] += nfw + acc.nother;
}

/* wire mode's loop without --router's tests */
static void burst_empty(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint16_t rx_port,
			struct rte_mbuf **m, unsigned int n)
{
	if (w->dp->router)
		burst_empty_at(w, gen, rx_port, m, n, true);
	else
		burst_empty_at(w, gen, rx_port, m, n, false);
}

/*
 * Whether the active steps of hook after conntrack's (prerouting) or all of
 * them (postrouting) are NAT's at most, at nat_prio, with no base chain of
 * the hook before it (prerouting: the chains see the packet NAT rewrote)
 * or from it on (postrouting: the chains see it before): the established
 * pass then rewrites a packet once before its probes (destination) and
 * once after (source), where the pipeline's hook walk would. *nat: NAT's
 * step is active there.
 */
static bool established_steps(const struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			      uint8_t hook, int32_t nat_prio, bool *nat)
{
	static const uint8_t fams[] = {NFPROTO_IPV4, NFPROTO_IPV6};
	const struct nftdp_dp *dp = w->dp;

	*nat = false;
	for (unsigned int s = 0; s < dp->n_builtin[hook]; s++) {
		const struct nftdp_dp_builtin *b = &dp->builtin[hook][s];

		if (!(w->step_on[hook] & (1u << s)) ||
		    (hook == NF_INET_PRE_ROUTING && b->prio <= NF_IP_PRI_CONNTRACK))
			continue;
		if (!nftdp_dp_step_is_nat(b->fn) || b->prio != nat_prio)
			return false;
		*nat = true;
	}
	for (unsigned int f = 0; *nat && f < sizeof(fams); f++)
		if (hook == NF_INET_PRE_ROUTING
			? nftdp_vm_gen_hook_has_prio(gen, fams[f], hook, INT32_MIN, nat_prio - 1)
			: nftdp_vm_gen_hook_has_prio(gen, fams[f], hook, nat_prio, INT32_MAX))
			return false;
	return true;
}

/*
 * Whether PLAN_TRACKED bursts of gen may take the established pass
 * (burst_established): no bridge, no netdev egress chain, no chain whose
 * state shows packet order, no step after conntrack but NAT's
 * (established_steps), and the flow cache serves every chain of
 * prerouting, forward and postrouting (--router: the pass does its step,
 * fast_route). Asked once per generation
 * (pipeline_plan, after steps_compute); *nat: the families whose NAT the
 * pass applies (bit 0 IPv4, bit 1 IPv6).
 */
static bool established_ok(const struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			   uint8_t *nat)
{
	static const uint8_t hooks[] = {NF_INET_PRE_ROUTING, NF_INET_FORWARD, NF_INET_POST_ROUTING};
	const struct nftdp_dp *dp = w->dp;
	bool dnat, snat;

	*nat = 0;
	if (nftdp_dp_bridge_on(dp, gen) || !nftdp_vm_gen_order_free(gen) ||
	    nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_EGRESS))
		return false;
	if (!established_steps(w, gen, NF_INET_PRE_ROUTING, NF_IP_PRI_NAT_DST, &dnat) ||
	    !established_steps(w, gen, NF_INET_POST_ROUTING, NF_IP_PRI_NAT_SRC, &snat) ||
	    hook_steps(w, NF_INET_FORWARD))
		return false;
	for (unsigned int h = 0; h < sizeof(hooks); h++)
		if (!nftdp_vm_gen_flow_serves(gen, hooks[h]))
			return false;
	/* NAT's steps act at both hooks or at neither (nat_active) */
	if (dnat != snat)
		return false;
	if (dnat)
		*nat = (uint8_t)(nftdp_dp_nat_on(gen, NFPROTO_IPV4) |
				 nftdp_dp_nat_on(gen, NFPROTO_IPV6) << 1);
	return true;
}

/*
 * Which pass a burst of gen takes (pipeline_plan caches it per generation):
 * PLAN_EMPTY, nothing to run (burst_empty); PLAN_CACHED, nothing but
 * IP base chains at prerouting, forward and postrouting, with the flow
 * cache (burst_cached); PLAN_TRACKED, conntrack with nothing before it
 * (burst_tracked); PLAN_FULL, the pipeline.
 */
enum plan_kind { PLAN_FULL, PLAN_EMPTY, PLAN_CACHED, PLAN_TRACKED };
/* nftdp_dp_stats.pass: one per plan, then the established pass */
_Static_assert(PLAN_TRACKED + 2 == NFTDP_DP_PASSES, "a pass count per plan");

static enum plan_kind plan_compute(const struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
				   bool tracking)
{
	static const uint8_t hooks[] = {NF_INET_INGRESS, NF_INET_PRE_ROUTING, NF_INET_FORWARD,
					NF_INET_LOCAL_OUT, NF_INET_POST_ROUTING};
	const struct nftdp_dp *dp = w->dp;

	if (plan_empty(dp, gen, tracking))
		return PLAN_EMPTY;
	/* BURST_BY_CONNECTION: no chain before conntrack's step; like the
	 * cached pass, --flow-cache 0 turns it off (A/B runs) */
	if (tracking && w->ctx.flow && burst_mode(gen, true) == BURST_BY_CONNECTION)
		return PLAN_TRACKED;
	if (tracking || !gen || !w->ctx.flow || nftdp_dp_bridge_on(dp, gen))
		return PLAN_FULL;
	if (nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS) ||
	    nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_EGRESS) ||
	    hook_chains(gen, NF_INET_INGRESS))
		return PLAN_FULL;
	for (unsigned int h = 0; h < sizeof(hooks); h++)
		if (hook_steps(w, hooks[h]))
			return PLAN_FULL;
	return PLAN_CACHED;
}

static enum plan_kind pipeline_plan(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
				    bool tracking)
{
	uint64_t id;

	/* ids are never reused, unlike the addresses of freed generations;
	 * UINT64_MAX: no generation */
	id = gen ? nftdp_vm_gen_id(gen) + 1 : UINT64_MAX;
	/* --router is fixed in the daemon; fuzz_pkt flips it per input */
	if (w->plan_gen != id || w->plan_router != w->dp->router) {
		if (w->walk_gen != id)
			walk_plan(w, gen, id);
		w->plan_kind = (uint8_t)plan_compute(w, gen, tracking);
		w->plan_established =
		    w->plan_kind == PLAN_TRACKED && established_ok(w, gen, &w->plan_nat);
		w->plan_bridge = nftdp_dp_bridge_on(w->dp, gen);
		w->plan_headers = gen && nftdp_vm_gen_flow_headers_only(gen, NF_INET_PRE_ROUTING) &&
				  nftdp_vm_gen_flow_headers_only(gen, NF_INET_FORWARD) &&
				  nftdp_vm_gen_flow_headers_only(gen, NF_INET_POST_ROUTING);
		w->plan_gen = id;
		w->plan_router = w->dp->router;
	}
	return (enum plan_kind)w->plan_kind;
}

/*
 * View i, for the IP frame mb, as prerouting sees it when no chain or step
 * runs before it: what setup_view, inet ingress's version check, ip_rcv /
 * ipv6_rcv, view_ip and the trim leave, in one go (and its meta if
 * with_meta: what the pipeline after prerouting reads). header: a header
 * view instead (nftdp_vm_pkt_header_view), what the flow cache's probe
 * reads when its keys hold packet bytes only; a hit decides the packet
 * with it, a miss takes a whole view from setup_view. false: the full
 * pipeline must see it (it drops or answers it there, or, for a header
 * view, it is outside the plain cases: IPv6 extension headers); nothing
 * changed but the view. Inline: both passes' loops are built around it.
 */
static inline __attribute__((always_inline)) bool cached_view(struct nftdp_dp_worker *w,
							      unsigned int i, struct rte_mbuf *mb,
							      const struct nftdp_dp_l2 *l2,
							      const struct nftdp_dp_port *rx,
							      bool with_meta, bool header)
{
	struct nftdp_vm_pkt *p = &w->view[i];
	uint8_t *d = rte_pktmbuf_mtod(mb, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(mb), ip_len, avail;
	bool v4 = l2->ip_proto == NFTDP_DP_ETH_P_IP;
	struct nftdp_dp_icmp icmp;
	enum nftdp_dp_drop why;
	const uint8_t *iph;

	/* --router drops a tagged frame (no VLAN device) where it counts it */
	if (l2->ip_off >= len || (w->dp->router && l2->vid))
		return false;
	iph = d + l2->ip_off;
	avail = len - l2->ip_off;
	/* inet ingress's version check is ip_rcv's / ip6_rcv_core's own; IPv6
	 * without hop-by-hop header: ip6_rcv_core's checks inline */
	if (v4)
		why = nftdp_dp_ip_rcv_hw(iph, avail, &ip_len, ip_csum_good(mb));
	else if (l2->ip_proto != NFTDP_DP_ETH_P_IPV6)
		return false;
	else if (avail < 40 || iph[6] == 0)
		why = nftdp_dp_ip6_rcv_icmp(iph, avail, &ip_len, &icmp);
	else
		why = nftdp_dp_ip6_rcv_core(iph, avail, &ip_len);
	if (why != NFTDP_DP_DROP_MAX)
		return false;
	if (header) {
		if (!nftdp_vm_pkt_header_view_rcv(p, d, l2->ip_off, ip_len, v4))
			return false;
	} else {
		nftdp_vm_pkt_init(p, d, l2->ip_off + ip_len, 0, l2->ip_off);
		view_rx(w, p, mb, d, rx);
		nftdp_vm_pkt_parse_ip_fast(p);
		if ((mb->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
		    !p->fragoff && !(v4 && (d[l2->ip_off + 6] & 0x20)))
			p->flags |= NFTDP_VM_PKT_F_CSUM_OK;
	}
	w->mb[i] = mb;
	if (with_meta)
		meta_from_l2(&w->meta[i], l2, ip_len);
	/* pskb_trim_rcsum */
	trim_linear(mb, (uint16_t)(len - p->len));
	return true;
}

#define CACHED_HOOKS 3

static const uint8_t cached_hooks[CACHED_HOOKS] = {NF_INET_PRE_ROUTING, NF_INET_FORWARD,
						   NF_INET_POST_ROUTING};

/* chains[h]: whether cached hook h has chains; true when exactly one has */
static bool one_chained(const struct nftdp_vm_gen *gen, bool *chains)
{
	unsigned int n = 0;

	for (unsigned int h = 0; h < CACHED_HOOKS; h++)
		n += chains[h] = hook_chains(gen, cached_hooks[h]);
	return n == 1;
}

/*
 * The flow cache's probe of the cached hooks (CACHED_HOOKS) for the fast
 * packets fast[live[0..nl)], each hook over those every earlier hook
 * accepted from cache: hit[h][x] the hit of packet x at hook h, last[x]
 * the hook whose verdict other than accept decided it (left as it was
 * where none did), miss[x] set to 1 where a hook on its path missed (the
 * chains must run; the caller zeroes it); chains[h] whether hook h has chains (none: no
 * probe). views: set the view's hook and forward's devices first (a
 * header view's keys read none of them). --router: the router step
 * (fast_route) between prerouting and forward, whatever has chains: a
 * packet it leaves counts as a miss, routed[x] (zeroed by the caller) set
 * where it forwarded one (route_undo, should the pipeline take it after
 * all); forward's devices are then the route's. live is used up.
 */
static void probe_hooks(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			const struct nftdp_dp_port *rx, const struct nftdp_dp_port *tx,
			struct nftdp_vm_pkt **fast, unsigned int *live, unsigned int nl, bool views,
			const struct nftdp_vm_flow_hit *hit[CACHED_HOOKS][NFTDP_VM_BURST_MAX],
			uint8_t *last, uint8_t *miss, uint8_t *routed, bool *chains)
{
	static const uint8_t hooks[CACHED_HOOKS] = {NF_INET_PRE_ROUTING, NF_INET_FORWARD,
						    NF_INET_POST_ROUTING};
	struct nftdp_vm_pkt *cur[NFTDP_VM_BURST_MAX];
	const struct nftdp_vm_flow_hit *got[NFTDP_VM_BURST_MAX];
	bool router = w->dp->router;
	/* live[j] == j for every j < nl: no hook has left a packet out yet,
	 * so the probe takes fast and writes hit[h] as they are */
	bool ident = true;

	for (unsigned int h = 0; h < CACHED_HOOKS && nl; h++) {
		unsigned int k = 0;
		const struct nftdp_vm_flow_hit **res = got;

		if (router && hooks[h] == NF_INET_FORWARD) {
			for (unsigned int j = 0; j < nl; j++) {
				unsigned int x = live[j];
				struct nftdp_vm_pkt *p = fast[x];

				if (fast_route(w, p, (unsigned int)(p - w->view), rx, !views)) {
					routed[x] = 1;
					live[k++] = x;
				} else {
					miss[x] = 1;
				}
			}
			ident &= nl == k;
			nl = k;
			k = 0;
			if (!nl)
				break;
		}
		chains[h] = hook_chains(gen, hooks[h]);
		if (!chains[h])
			continue;
		if (ident && !views) {
			/* nothing to set and no gaps: the probe's input and
			 * output in place */
			nftdp_vm_gen_flow_probe(gen, hooks[h], fast, nl, hit[h], &w->ctx);
			res = hit[h];
		} else {
			for (unsigned int j = 0; j < nl; j++) {
				struct nftdp_vm_pkt *p = fast[live[j]];

				if (views) {
					p->hook = hooks[h];
					if (hooks[h] == NF_INET_FORWARD && !router) {
						forward_priority(p);
						p->oif = tx->ifindex;
						p->oifname = tx->name;
						p->oiftype = ARPHRD_ETHER;
					}
				}
				cur[j] = p;
			}
			nftdp_vm_gen_flow_probe(gen, hooks[h], cur, nl, got, &w->ctx);
		}
		for (unsigned int j = 0; j < nl; j++) {
			unsigned int x = live[j];
			const struct nftdp_vm_flow_hit *r = res[j];

			hit[h][x] = r;
			if (!r) {
				miss[x] = 1;
				continue;
			}
			if (nftdp_vm_flow_hit_verdict(r) != NF_ACCEPT) {
				last[x] = (uint8_t)h;
				continue;
			}
			live[k++] = x;
		}
		ident &= nl == k;
		nl = k;
	}
}

/* the cached hooks with chains, in order, into with; how many */
static unsigned int chained_hooks(const bool *chains, uint8_t *with)
{
	unsigned int n = 0;

	for (unsigned int h = 0; h < CACHED_HOOKS; h++)
		if (chains[h])
			with[n++] = (uint8_t)h;
	return n;
}

/* packet x's hits charged, hook by hook up to the one that decided it
 * (last: CACHED_HOOKS where none did) */
static inline void
charge_hits(struct nftdp_dp_worker *w,
	    const struct nftdp_vm_flow_hit *hit[CACHED_HOOKS][NFTDP_VM_BURST_MAX], unsigned int x,
	    struct nftdp_vm_pkt *p, const uint8_t *with, unsigned int n_with, uint8_t last)
{
	/* the common case, one hook with chains, without the loop */
	if (n_with == 1) {
		if (with[0] <= last)
			nftdp_vm_flow_charge(hit[with[0]][x], p, &w->ctx);
		return;
	}
	for (unsigned int j = 0; j < n_with && with[j] <= last; j++)
		nftdp_vm_flow_charge(hit[with[j]][x], p, &w->ctx);
}

/*
 * PLAN_CACHED in one pass: parse, ip_rcv and the trim, then the flow
 * cache's verdict of prerouting, forward and postrouting, both families
 * at once; a packet every hook of whose path hits is charged, counted and
 * sent (or freed) here. The rest (misses, non-IP, what ip_rcv drops or
 * answers) runs the full pipeline afterwards, in arrival order; the
 * kernel's order of what leaves is restored by emit's key. A hit touches
 * no state but its counters, so running it before earlier misses shows
 * nowhere.
 */
static void burst_cached(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			 uint16_t rx_port, struct rte_mbuf **m, unsigned int n)
{
	static const uint8_t stages[CACHED_HOOKS] = {NFTDP_DP_ST_PREROUTING, NFTDP_DP_ST_FORWARD,
						     NFTDP_DP_ST_POSTROUTING};
	const struct nftdp_dp_port *rx = &w->dp->port[rx_port];
	const struct nftdp_dp_port *tx = &w->dp->port[w->dp->wire[rx_port]];
	/* each frame's parse: l2_ip4, l2_ip6 or its own in l2 */
	struct nftdp_dp_l2 l2[NFTDP_VM_BURST_MAX];
	const struct nftdp_dp_l2 *l2p[NFTDP_VM_BURST_MAX];
	struct nftdp_vm_pkt *fast[NFTDP_VM_BURST_MAX], *slow[NFTDP_VM_BURST_MAX];
	const struct nftdp_vm_flow_hit *hit[CACHED_HOOKS][NFTDP_VM_BURST_MAX];
	unsigned int live[NFTDP_VM_BURST_MAX];
	/* per fast packet: the hook whose drop decided it (CACHED_HOOKS:
	 * none); whether a hook on its path missed */
	uint8_t last[NFTDP_VM_BURST_MAX], miss[NFTDP_VM_BURST_MAX];
	uint8_t slow_at[NFTDP_VM_BURST_MAX] = {0}, routed[NFTDP_VM_BURST_MAX];
	/* fast packet x is view fidx[x] (no pointer difference to divide) */
	uint8_t fidx[NFTDP_VM_BURST_MAX];
	bool chains[CACHED_HOOKS] = {false}, router = w->dp->router;
	const bool headers = w->plan_headers;
	uint8_t with[CACHED_HOOKS];
	unsigned int nf = 0, ns = 0, nd = 0, n_with, dropped[CACHED_HOOKS] = {0};
	/* the first packet left to the pipeline; what leaves before it */
	unsigned int first_slow = NFTDP_VM_BURST_MAX, no = 0;
	struct rte_mbuf *out[NFTDP_VM_BURST_MAX];

	for (unsigned int i = 0, pf = rx_pf(n); i < n; i++) {
		struct rte_mbuf *mb = m[i];
		struct nftdp_vm_pkt *p = &w->view[i];
		const struct nftdp_dp_l2 *pl = rx_plain(m, i, pf);
		bool ok;

		/* a copy of cached_view with constant offsets for each
		 * family's plain frame */
		if (pl == &l2_ip4) {
			ok = headers ? cached_view(w, i, mb, &l2_ip4, rx, false, true)
				     : cached_view(w, i, mb, &l2_ip4, rx, false, false);
		} else if (pl == &l2_ip6) {
			ok = headers ? cached_view(w, i, mb, &l2_ip6, rx, false, true)
				     : cached_view(w, i, mb, &l2_ip6, rx, false, false);
		} else {
			if (!rx_frame_at(w, mb, &l2[i]))
				continue;
			pl = &l2[i];
			ok = headers ? cached_view(w, i, mb, &l2[i], rx, false, true)
				     : cached_view(w, i, mb, &l2[i], rx, false, false);
		}
		l2p[i] = pl;
		if (!ok) {
			w->mb[i] = mb;
			slow_at[i] = 1;
			if (first_slow == NFTDP_VM_BURST_MAX)
				first_slow = i;
			continue;
		}
		fidx[nf] = (uint8_t)i;
		fast[nf++] = p;
	}
	/* a header view's keys read neither the hook nor the devices */
	if (headers && !router && one_chained(gen, chains)) {
		/* one hook with chains, nothing to set: its probe over fast in
		 * place, then each packet settled in one go */
		unsigned int h = chains[0] ? 0 : chains[1] ? 1 : 2;
		const struct nftdp_vm_flow_hit **hh = hit[h];
		struct nftdp_vm_counter *row = nftdp_vm_flow_row(&w->ctx);
		unsigned int nhit = 0;

		nftdp_vm_gen_flow_probe(gen, cached_hooks[h], fast, nf, hh, &w->ctx);
		for (unsigned int x = 0; x < nf; x++) {
			const struct nftdp_vm_flow_hit *r = hh[x];
			unsigned int idx = fidx[x];

			if (!r) {
				/* the chains must run; fast is in arrival order,
				 * so first_slow is already the least below idx */
				slow_at[idx] = 1;
				if (idx < first_slow)
					first_slow = idx;
				continue;
			}
			nd++;
			nhit += nftdp_vm_flow_charge_row(r, fast[x]->skb_len, row);
			if (nftdp_vm_flow_hit_verdict(r) != NF_ACCEPT) {
				dropped[h]++;
				rte_pktmbuf_free(w->mb[idx]);
				continue;
			}
			/* emit_decided: nothing was emitted before the first
			 * packet at or past first_slow, which only goes down */
			if (idx < first_slow)
				out[no++] = w->mb[idx];
			else
				emit(w, tx->port_id, w->mb[idx], (uint16_t)idx);
		}
		nftdp_vm_flow_count_hits(&w->ctx, nhit);
		goto decided;
	}
	/* the fast packets' state, a burst's worth of each in a few stores */
	for (unsigned int x = 0; x < nf; x++)
		live[x] = x;
	memset(last, CACHED_HOOKS, sizeof(last));
	memset(miss, 0, sizeof(miss));
	memset(routed, 0, sizeof(routed));
	probe_hooks(w, gen, rx, tx, fast, live, nf, !headers, hit, last, miss, routed, chains);
	n_with = chained_hooks(chains, with);
	/* the packets the cache decided: charge, count, send; dropped[h]:
	 * how many hook h dropped. A miss lowers first_slow as it comes:
	 * fast is in arrival order, so a packet after it sees it */
	for (unsigned int x = 0; x < nf; x++) {
		struct nftdp_vm_pkt *p = fast[x];
		unsigned int idx = fidx[x];

		if (miss[x]) {
			slow_at[idx] = 1; /* the chains must run */
			if (idx < first_slow)
				first_slow = idx;
			if (routed[x])
				route_undo(w, p, idx);
			continue;
		}
		nd++;
		charge_hits(w, hit, x, p, with, n_with, last[x]);
		if (last[x] < CACHED_HOOKS) {
			dropped[last[x]]++;
			rte_pktmbuf_free(w->mb[idx]);
			continue;
		}
		if (router)
			route_out(w, idx, w->mb[idx], first_slow);
		else
			emit_decided(w, tx->port_id, w->mb[idx], (uint16_t)idx, first_slow, out,
				     &no);
	}
decided:
	tx_stage_bulk(w, tx->port_id, out, no);
	/* netdev and inet ingress accept all, each hook what reached it less
	 * what it dropped; what is left leaves through netdev egress */
	w->st.hook[NFTDP_DP_ST_NETDEV_INGRESS][NFTDP_DP_V_ACCEPT] += nd;
	w->st.hook[NFTDP_DP_ST_INET_INGRESS][NFTDP_DP_V_ACCEPT] += nd;
	for (unsigned int h = 0; h < CACHED_HOOKS; h++) {
		w->st.hook[stages[h]][NFTDP_DP_V_ACCEPT] += nd - dropped[h];
		w->st.hook[stages[h]][NFTDP_DP_V_DROP] += dropped[h];
		nd -= dropped[h];
	}
	w->st.hook[NFTDP_DP_ST_NETDEV_EGRESS][NFTDP_DP_V_ACCEPT] += nd;

	/* the rest from their netdev ingress view, as if nothing had run;
	 * none when every packet was fast and hit */
	if (first_slow == NFTDP_VM_BURST_MAX)
		return;
	for (unsigned int i = first_slow; i < n; i++) {
		if (!slow_at[i])
			continue;
		setup_view(w, i, w->mb[i], l2p[i], rx, false);
		slow[ns++] = &w->view[i];
	}
	if (!ns)
		return;
	if (burst_mode(gen, false) == BURST_WHOLE) {
		run_segment(w, gen, rx_port, slow, ns, false);
		return;
	}
	for (unsigned int i = 0; i < ns; i++)
		run_segment(w, gen, rx_port, &slow[i], 1, false);
}

/* packet x's carried result from its hits (chains[h]: hook h has chains)
 * into c; false when there is none */
static inline bool carry_make(struct nftdp_vm_flow_carry *c,
			      const struct nftdp_vm_flow_hit *hit[CACHED_HOOKS][NFTDP_VM_BURST_MAX],
			      const bool *chains, unsigned int x, const void *ct,
			      const struct nftdp_vm_pkt *p, uint8_t last)
{
	const struct nftdp_vm_flow_hit *hs[CACHED_HOOKS];

	for (unsigned int h = 0; h < CACHED_HOOKS; h++)
		hs[h] = chains[h] && h <= last ? hit[h][x] : NULL;
	return nftdp_vm_flow_carry_make(c, ct, p->iif, hs, CACHED_HOOKS, last, p);
}

/* what burst_established left to the pipeline, per view */
enum est_how {
	EST_GONE,     /* dropped by the L2 parse */
	EST_DONE,     /* decided in the pass */
	EST_PIPELINE, /* the pipeline runs it whole */
	EST_AFTER_CT, /* the pipeline runs it, conntrack already ran (ct_seen) */
};

/* connections whose later packets must wait for the pipeline: a bit per
 * entry address hash, then the list */
struct est_held {
	uint64_t bits;
	unsigned int n;
	const void *e[NFTDP_VM_BURST_MAX];
};

static __attribute__((noinline)) bool held_scan(const struct est_held *h, const void *e)
{
	for (unsigned int i = 0; i < h->n; i++)
		if (h->e[i] == e)
			return true;
	return false;
}

/* in line: asked twice a packet, and almost always none is held */
static inline __attribute__((always_inline)) bool held_has(const struct est_held *h, const void *e)
{
	/* none held (the common case): no hash of e */
	if (!h->n || !(h->bits & entry_bit(e)))
		return false;
	return held_scan(h, e);
}

static void hold(struct est_held *h, const void *e)
{
	if (held_has(h, e))
		return;
	h->bits |= entry_bit(e);
	h->e[h->n++] = e;
}

/*
 * burst_established: whether the last fast packet (of fast[0..nf)) of
 * entry e left the cache's hooks to the pipeline: its carried result or
 * router step said so already, or the probe of its hooks, made now for it
 * alone (solo[x], so the burst's probe leaves it out) says so.
 */
static bool earlier_missed(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			   const struct nftdp_dp_port *rx, const struct nftdp_dp_port *tx,
			   struct nftdp_vm_pkt **fast, const void *const *ent, unsigned int nf,
			   const void *e, const bool *carried, uint8_t *solo,
			   const struct nftdp_vm_flow_hit *hit[CACHED_HOOKS][NFTDP_VM_BURST_MAX],
			   uint8_t *last, uint8_t *miss, uint8_t *routed, bool *chains)
{
	unsigned int x = nf, one;

	while (x > 0 && ent[x - 1] != e)
		x--;
	if (x-- == 0) /* another entry's bit */
		return false;
	if (!carried[x] && !solo[x] && !miss[x]) {
		one = x;
		probe_hooks(w, gen, rx, tx, fast, &one, 1, true, hit, last, miss, routed, chains);
		solo[x] = 1;
	}
	return miss[x];
}

/*
 * The established pass of PLAN_TRACKED (established_ok): packets of
 * confirmed connections without a helper are decided here in one go: the
 * prerouting view (cached_view), conntrack's probe and nf_conntrack_in in
 * arrival order, then the flow cache's verdicts of prerouting, forward
 * and postrouting over them all, charged, confirmed, counted, sent.
 * Whatever the cache cannot decide goes to the pipeline (how[]), after
 * conntrack when that already ran; so do the later packets of its
 * connection, and every packet after a fragment (its connection is known
 * only once reassembled). Packets of other connections may be decided
 * before it: nothing they touch shows order (no order state, no NAT, no
 * helper, room in the table, entries confirmed), and emit's key restores
 * the order on the wire. ready[i]: view i is a prerouting view.
 */
static void burst_established(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			      uint16_t rx_port, struct rte_mbuf **m, unsigned int n, uint8_t *how,
			      bool *ready)
{
	static const uint8_t stages[CACHED_HOOKS] = {NFTDP_DP_ST_PREROUTING, NFTDP_DP_ST_FORWARD,
						     NFTDP_DP_ST_POSTROUTING};
	const struct nftdp_dp_port *rx = &w->dp->port[rx_port];
	const struct nftdp_dp_port *tx = &w->dp->port[w->dp->wire[rx_port]];
	struct nftdp_vm_pkt *fast[NFTDP_VM_BURST_MAX], *vp[NFTDP_VM_BURST_MAX];
	const struct nftdp_vm_flow_hit *hit[CACHED_HOOKS][NFTDP_VM_BURST_MAX];
	const void *ent[NFTDP_VM_BURST_MAX];
	/* per fast packet: its connection's carried result; whether that
	 * judged it */
	struct nftdp_vm_flow_carry *carry[NFTDP_VM_BURST_MAX];
	const void *ct[NFTDP_VM_BURST_MAX]; /* its pkt->ct, which confirm takes */
	bool carried[NFTDP_VM_BURST_MAX];
	uint8_t routed[NFTDP_VM_BURST_MAX]; /* fast_route forwarded it (--router) */
	bool snat[NFTDP_VM_BURST_MAX];	    /* NAT rewrites its source at postrouting */
	unsigned int live[NFTDP_VM_BURST_MAX], make[NFTDP_VM_BURST_MAX];
	struct nftdp_vm_flow_carry made[NFTDP_VM_BURST_MAX]; /* for carry[make[j]] */
	/* per fast packet: the hook whose drop decided it (CACHED_HOOKS:
	 * none); whether a hook on its path missed */
	uint8_t last[NFTDP_VM_BURST_MAX], miss[NFTDP_VM_BURST_MAX];
	uint8_t vi[NFTDP_VM_BURST_MAX]; /* per fast packet: its view's index */
	/* per fast packet: probed alone, before a later packet of its
	 * connection went through conntrack */
	uint8_t solo[NFTDP_VM_BURST_MAX];
	uint64_t seen = 0; /* entry_bit of every fast packet's entry */
	bool chains[CACHED_HOOKS] = {false}, after_frag = false;
	uint8_t with[CACHED_HOOKS];
	/* entries a packet left to the pipeline: after conntrack, or before it
	 * behind an earlier packet's miss (held), after a miss (missed: only
	 * those, as an earlier packet of an entry held by a later one, a
	 * reopened connection's old one, is decided) */
	struct est_held held = {0}, missed = {0};
	unsigned int nf = 0, nl = 0, nk, nd = 0, nm = 0, ct_drop = 0, nout = 0, n_with;
	unsigned int dropped[CACHED_HOOKS] = {0}, first_slow = NFTDP_VM_BURST_MAX, no = 0;
	struct rte_mbuf *out[NFTDP_VM_BURST_MAX];

	if (w->defrag)
		nftdp_dp_defrag_tick(w);

	/* views; conntrack's lookups begun over them all (its misses
	 * overlap); then probe and conntrack, in arrival order */
	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_dp_l2 l2;

		how[i] = EST_GONE;
		ready[i] = false;
		vp[i] = &w->view[i];
		if (!rx_frame(w, m, i, n, &l2))
			continue;
		how[i] = EST_PIPELINE;
		ready[i] = cached_view(w, i, m[i], &l2, rx, true, false);
		if (!ready[i])
			setup_view(w, i, m[i], &l2, rx, false);
	}
	nftdp_dp_ct_prefetch(w, vp, ready, n);
	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = &w->view[i];
		const struct nftdp_dp_meta *mt = &w->meta[i];
		struct nftdp_vm_flow_carry *c;
		const void *e;
		unsigned int v, l;
		bool plain;

		if (how[i] != EST_PIPELINE)
			continue;
		/* what goes to the pipeline from here: left so here, or a
		 * miss (below) */
		if (!ready[i] || after_frag)
			goto slow;
		if (nftdp_dp_defrag_is_fragment(p->data + mt->ip_off, mt->ip_len,
						p->nfproto == NFPROTO_IPV4)) {
			after_frag = true;
			goto slow;
		}
		e = nftdp_dp_ct_probe(w, p, i);
		if (!e || held_has(&held, e))
			goto slow;
		/* an earlier packet of its connection in this pass: that one's
		 * fate first. Should it miss, its chains run in the pipeline
		 * and read the entry (ct packets, ct expiration) as that packet
		 * left it, so this one's conntrack waits for the pipeline too */
		if ((seen & entry_bit(e)) &&
		    earlier_missed(w, gen, rx, tx, fast, ent, nf, e, carried, solo, hit, last, miss,
				   routed, chains)) {
			hold(&held, e);
			goto slow;
		}
		seen |= entry_bit(e);
		v = nftdp_dp_ct_in_one(w, p, i, &plain, &c);
		if (v != NF_ACCEPT) {
			/* conntrack's drop at prerouting (a reopened connection
			 * finding the table full) */
			how[i] = EST_DONE;
			ct_drop++;
			nftdp_dp_ct_confirm(w, &p, 1, NF_DROP);
			rte_pktmbuf_free(m[i]);
			continue;
		}
		snat[nf] = false;
		/* NAT's step at prerouting, before the chains
		 * (established_steps): the binding alone */
		if (plain && (w->plan_nat >> (p->nfproto == NFPROTO_IPV6) & 1))
			plain = nftdp_dp_nat_dst(p, &snat[nf]);
		if (!plain) {
			how[i] = EST_AFTER_CT;
			hold(&held, e);
			goto slow;
		}
		how[i] = EST_DONE;
		vi[nf] = (uint8_t)i;
		ent[nf] = e;
		last[nf] = CACHED_HOOKS;
		miss[nf] = 0;
		routed[nf] = 0;
		solo[nf] = 0;
		carry[nf] = c;
		ct[nf] = p->ct;
		/* the connection's carried result: no key, no probe. Not under
		 * --route: the route, so the output device, is no part of it */
		if (w->dp->route)
			c = carry[nf] = NULL;
		carried[nf] = c && nftdp_vm_gen_flow_carried(gen, c, p, &w->ctx, &l);
		if (carried[nf]) {
			last[nf] = (uint8_t)l;
			/* --router: its step before forward (probe_hooks does
			 * the probed packets'); one it leaves is a miss */
			if (w->dp->router && l > 0) {
				if (fast_route(w, p, i, rx, false))
					routed[nf] = 1;
				else
					miss[nf] = 1;
			}
		} else {
			live[nl++] = nf;
		}
		fast[nf++] = p;
		continue;
	slow:
		if (first_slow == NFTDP_VM_BURST_MAX)
			first_slow = i;
	}

	/* the rest, less those probed alone */
	nk = 0;
	for (unsigned int j = 0; j < nl; j++)
		if (!solo[live[j]])
			live[nk++] = live[j];
	nl = nk;
	probe_hooks(w, gen, rx, tx, fast, live, nl, true, hit, last, miss, routed, chains);
	n_with = chained_hooks(chains, with);
	/* a miss goes to the pipeline too (a packet held behind one comes
	 * after it) */
	for (unsigned int x = 0; x < nf && vi[x] < first_slow; x++)
		if (miss[x])
			first_slow = vi[x];

	/* in arrival order: a miss, or a packet after one of its
	 * connection, goes to the pipeline; the rest are charged, confirmed
	 * and sent (or freed) */
	for (unsigned int x = 0; x < nf; x++) {
		struct nftdp_vm_pkt *p = fast[x];
		unsigned int idx = vi[x];

		if (miss[x] || held_has(&missed, ent[x])) {
			how[idx] = EST_AFTER_CT;
			hold(&missed, ent[x]);
			if (routed[x]) /* the pipeline's router step does it */
				route_undo(w, p, idx);
			/* it enters at prerouting again: no output device, the
			 * priority it came with (forward's are set again) */
			p->oif = 0;
			p->oifname = NULL;
			p->oiftype = 0;
			p->priority = 0;
			continue;
		}
		nd++;
		if (carried[x]) {
			nftdp_vm_flow_carry_charge(carry[x], p, &w->ctx);
		} else {
			charge_hits(w, hit, x, p, with, n_with, last[x]);
			/* the result for its connection, from the packet as
			 * the hooks saw it (before NAT's source rewrite, whose
			 * failure is the packet's own) */
			if (carry[x]) {
				/* its guard as the next packet's is checked:
				 * before the router step, whose decrement is
				 * a function of the bytes it had */
				if (routed[x])
					route_undo(w, p, idx);
				if (carry_make(&made[nm], hit, chains, x, ct[x], p, last[x]))
					make[nm++] = x;
				if (routed[x])
					route_undo(w, p, idx);
			}
		}
		/* NAT's step at postrouting, after its chains (a failed
		 * rewrite: its drop) */
		if (last[x] == CACHED_HOOKS && snat[x] && !nftdp_dp_nat_src(p))
			last[x] = CACHED_HOOKS - 1;
		if (last[x] < CACHED_HOOKS) {
			dropped[last[x]]++;
			nftdp_dp_ct_confirm(w, &p, 1, NF_DROP);
			rte_pktmbuf_free(w->mb[idx]);
			continue;
		}
		/* __nf_conntrack_confirm, last in postrouting */
		if (!nftdp_dp_ct_confirm_accepted(w, &p, 1))
			continue;
		nout++;
		if (w->dp->router)
			route_out(w, idx, w->mb[idx], first_slow);
		else
			emit_decided(w, tx->port_id, w->mb[idx], (uint16_t)idx, first_slow, out,
				     &no);
	}
	tx_stage_bulk(w, tx->port_id, out, no);
	/* after every carried packet charged what its result said: results
	 * for the connections the cache judged (a run that read more than
	 * its connection fixes makes none) */
	for (unsigned int j = 0; j < nm; j++) {
		/* the record's owner word is conntrack's (the original
		 * direction's byte counter, counted since made[j] was) */
		made[j].owner = carry[make[j]]->owner;
		*carry[make[j]] = made[j];
	}
	/* netdev and inet ingress accept all, prerouting drops conntrack's
	 * drops, each hook what reached it less what it dropped */
	w->st.hook[NFTDP_DP_ST_NETDEV_INGRESS][NFTDP_DP_V_ACCEPT] += nd + ct_drop;
	w->st.hook[NFTDP_DP_ST_INET_INGRESS][NFTDP_DP_V_ACCEPT] += nd + ct_drop;
	w->st.hook[NFTDP_DP_ST_PREROUTING][NFTDP_DP_V_DROP] += ct_drop;
	for (unsigned int h = 0; h < CACHED_HOOKS; h++) {
		w->st.hook[stages[h]][NFTDP_DP_V_ACCEPT] += nd - dropped[h];
		w->st.hook[stages[h]][NFTDP_DP_V_DROP] += dropped[h];
		nd -= dropped[h];
	}
	w->st.hook[NFTDP_DP_ST_NETDEV_EGRESS][NFTDP_DP_V_ACCEPT] += nout;
}

/*
 * PLAN_TRACKED: the pipeline by connection (run_by_connection), with each
 * IP packet's prerouting view made in one go (cached_view) and probed in
 * place, so it enters at prerouting; a frame cached_view leaves (not IP,
 * dropped or answered by ip_rcv, tagged under --router) runs the whole
 * pipeline alone. First, where the generation allows, the established
 * pass decides what it can.
 */
static void burst_tracked(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			  uint16_t rx_port, struct rte_mbuf **m, unsigned int n)
{
	const struct nftdp_dp_port *rx = &w->dp->port[rx_port];
	struct nftdp_vm_pkt *act[NFTDP_VM_BURST_MAX];
	bool ready[NFTDP_VM_BURST_MAX], view_ready[NFTDP_VM_BURST_MAX];
	uint8_t how[NFTDP_VM_BURST_MAX];
	unsigned int na = 0;

	nftdp_dp_ct_lookups(w, n, true);
	if (w->plan_established && nftdp_dp_ct_room(w)) {
		w->st.pass[PLAN_TRACKED + 1]++;
		burst_established(w, gen, rx_port, m, n, how, view_ready);
		for (unsigned int i = 0; i < n; i++) {
			if (how[i] != EST_PIPELINE && how[i] != EST_AFTER_CT)
				continue;
			ready[na] = view_ready[i];
			act[na++] = &w->view[i];
		}
	} else {
		for (unsigned int i = 0; i < n; i++) {
			struct nftdp_dp_l2 l2;

			if (!rx_frame(w, m, i, n, &l2))
				continue;
			ready[na] = cached_view(w, i, m[i], &l2, rx, true, false);
			if (!ready[na])
				setup_view(w, i, m[i], &l2, rx, false);
			act[na++] = &w->view[i];
		}
		nftdp_dp_ct_prefetch(w, act, ready, na);
	}
	if (na)
		run_by_connection(w, gen, rx_port, act, ready, na, SEG_PREROUTING);
	nftdp_dp_ct_lookups(w, n, false);
}

/* host.c's walks through the same hooks, egress and emit order as ours */
unsigned int nftdp_dp_hook_run(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			       enum nftdp_dp_stage stage, uint8_t hook, struct nftdp_vm_pkt **act,
			       unsigned int n, uint16_t rx_port)
{
	return run_ip_hook(w, gen, stage, hook, act, n, w->meta, rx_port);
}

void nftdp_dp_egress(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
		     struct nftdp_vm_pkt **act, unsigned int n, uint16_t tx_port, uint16_t rx_port)
{
	egress(w, gen, act, n, &w->dp->port[tx_port], rx_port, false);
}

void nftdp_dp_emit(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf *m,
		   const struct nftdp_vm_pkt *p)
{
	emit(w, port, m, key_of(w, p));
}

void nftdp_dp_send_copies(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			  unsigned int from, uint16_t rx_port)
{
	struct nftdp_vm_pkt *act[NFTDP_VM_BURST_MAX];

	for (unsigned int r1; (r1 = w->n_reply) > from; from = r1) {
		unsigned int na = 0;

		for (unsigned int r = from; r < r1; r++)
			if (w->meta[NFTDP_VM_BURST_MAX + r].dup)
				act[na++] = &w->view[NFTDP_VM_BURST_MAX + r];
		na = run_ip_hook(w, gen, NFTDP_DP_ST_OUTPUT, NF_INET_LOCAL_OUT, act, na, w->meta,
				 rx_port);
		for (unsigned int i = 0; i < na; i++) { /* ip_output's skb->dev */
			act[i]->iif = act[i]->oif;
			act[i]->iifname = act[i]->oifname;
			act[i]->iiftype = act[i]->oiftype;
		}
		na = run_ip_hook(w, gen, NFTDP_DP_ST_POSTROUTING, NF_INET_POST_ROUTING, act, na,
				 w->meta, rx_port);
		egress_routed(w, gen, act, na, rx_port, true);
	}
}

void nftdp_dp_emit_flush(struct nftdp_dp_worker *w)
{
	flush_emits(w);
}

void nftdp_dp_view_frame(struct nftdp_dp_worker *w, unsigned int i, struct rte_mbuf *mb,
			 const struct nftdp_dp_l2 *l2)
{
	setup_view(w, i, mb, l2, &w->dp->port[0], false);
}

bool nftdp_dp_view_host(struct nftdp_dp_worker *w, unsigned int i, struct rte_mbuf *mb,
			const struct nftdp_dp_l2 *l2)
{
	struct nftdp_vm_pkt *p = &w->view[i];
	struct nftdp_dp_meta *mt = &w->meta[i];
	uint32_t avail = rte_pktmbuf_data_len(mb) - l2->ip_off;
	enum nftdp_dp_drop why;

	setup_view(w, i, mb, l2, &w->dp->port[0], false);
	/* the host's own packets pass ip_rcv's checks; a raw socket's may not */
	why = l2->ip_proto == NFTDP_DP_ETH_P_IP
		  ? nftdp_dp_ip_rcv(p->data + l2->ip_off, avail, &mt->ip_len)
		  : nftdp_dp_ip6_rcv(p->data + l2->ip_off, avail, &mt->ip_len);
	if (why != NFTDP_DP_DROP_MAX) {
		w->st.drop[why]++;
		return false;
	}
	view_ip(p, mt);
	if (p->nfproto != NFPROTO_IPV4 && p->nfproto != NFPROTO_IPV6) {
		w->st.drop[l2->ip_proto == NFTDP_DP_ETH_P_IP ? NFTDP_DP_DROP_IP_HDR
							     : NFTDP_DP_DROP_IP6_HDR]++;
		return false;
	}
	trim_linear(mb, (uint16_t)(rte_pktmbuf_data_len(mb) - p->len));
	/* locally generated: no input device */
	p->iif = 0;
	p->iifname = NULL;
	p->iiftype = 0;
	p->pkttype = PACKET_HOST;
	return true;
}

void nftdp_dp_pipeline_burst(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			     uint16_t rx_port, struct rte_mbuf **m, unsigned int n)
{
	const struct nftdp_dp_port *rx = &w->dp->port[rx_port];
	struct nftdp_vm_pkt *act[NFTDP_VM_BURST_MAX];
	unsigned int na = 0;
	bool tracking = w->ct && ct_tracking(gen);
	/* the netdev view's IP parse serves netdev ingress chains only */
	bool nd_ingress = gen && nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS);

	w->st.rx[rx_port] += n;
	w->gen = gen;
	w->n_reply = 0;
	w->n_emit = 0;
	w->n_reasm = 0;
	w->emit_unordered = false;
	w->nb_memo[0].t = w->nb_memo[1].t = NULL;
	w->rt_memo[0].t = w->rt_memo[1].t = NULL;
	for (unsigned int i = 0; i < n && i < 4; i++)
		rte_prefetch0(rte_pktmbuf_mtod(m[i], void *));
	if (rx->is_host) { /* what the host sent: the exception path's output */
		nftdp_dp_host_output(w, gen, rx_port, m, n, tracking);
		flush_emits(w);
		return;
	}
	switch (pipeline_plan(w, gen, tracking)) {
	case PLAN_EMPTY:
		w->st.pass[PLAN_EMPTY]++;
		burst_empty(w, gen, rx_port, m, n);
		flush_emits(w);
		return;
	case PLAN_CACHED:
		/* the flood guard's sparse mode: the pipeline, whose hook
		 * runs key the guard's sample */
		if (nftdp_vm_flowcache_sparse(w->ctx.flow))
			break;
		w->st.pass[PLAN_CACHED]++;
		burst_cached(w, gen, rx_port, m, n);
		flush_emits(w);
		return;
	case PLAN_TRACKED:
		w->st.pass[PLAN_TRACKED]++;
		burst_tracked(w, gen, rx_port, m, n);
		flush_emits(w);
		return;
	case PLAN_FULL:
		break;
	}
	w->st.pass[PLAN_FULL]++;

	/* 1. parse; the netdev ingress view */
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *mb = m[i];
		struct nftdp_vm_pkt *p = &w->view[i];
		struct nftdp_dp_l2 l2;

		if (!rx_frame(w, m, i, n, &l2))
			continue;
		setup_view(w, i, mb, &l2, rx, nd_ingress);
		act[na++] = p;
	}

	/* 2-10, in segments that keep the kernel's one-at-a-time results */
	switch (burst_mode(gen, tracking)) {
	case BURST_WHOLE:
		run_segment(w, gen, rx_port, act, na, tracking);
		break;
	case BURST_BY_CONNECTION:
		run_by_connection(w, gen, rx_port, act, NULL, na, SEG_ALL);
		break;
	case BURST_PRE_CT: {
		bool ready[NFTDP_VM_BURST_MAX];

		nftdp_dp_ct_lookups(w, n, true);
		na = run_segment_at(w, gen, rx_port, act, na, true, SEG_BEFORE_CT, act);
		memset(ready, 1, na * sizeof(*ready));
		run_by_connection(w, gen, rx_port, act, ready, na, SEG_FROM_CT);
		nftdp_dp_ct_lookups(w, n, false);
		break;
	}
	case BURST_ONE:
		for (unsigned int i = 0; i < na; i++)
			run_segment(w, gen, rx_port, &act[i], 1, tracking);
		break;
	}
	flush_emits(w);
}
