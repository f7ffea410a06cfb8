// SPDX-License-Identifier: BSD-3-Clause
/*
 * --route with --host-ports: a packet whose next hop has no neighbour
 * entry waits for one, as the kernel queues it on the neighbour
 * (neigh->arp_queue, __neigh_event_send) while ARP or ND resolves it.
 * Each worker keeps up to UNRES_MAX next hops being resolved, each with
 * its last UNRES_QLEN packets (a full queue drops its oldest, as
 * neigh_event_send does). The first packet to a next hop asks the control
 * thread, through one MP/SC ring, to have the host kernel resolve it: an
 * RTM_NEWNEIGH with NTF_USE on the port's host interface (`ip neigh
 * replace ADDR dev IF use`, route/neigh.c), so neigh_event_send sends the
 * ARP request or neighbour solicitation out of the host interface, which
 * nftdp sends out of the port (host.c), and the answer comes back to the
 * host the same way. The neighbour mirror then learns the entry
 * (nexthop.c) and the worker sends the queued packets at its next poll,
 * through netdev egress: each is forwarded once, by nftdp, after the
 * chains judged it. Unanswered after UNRES_TIMEOUT_MS (the kernel's three
 * probes a second apart) the packets are dropped as neigh_invalidate
 * drops them (counted neigh_unresolved), each answered as the kernel's
 * error_report does (arp_error_report / ndisc_error_report ->
 * dst_link_failure): ICMP host unreachable (ICMPv6 address unreachable)
 * quoting the packet as it was queued (after postrouting), sent like
 * nftdp's other ICMP errors: by the route to the sender, through output,
 * postrouting and netdev egress.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "dataplane_priv.h"
#include "nftdp_route.h"

#define UNRES_MAX 16 /* next hops being resolved, per worker */
#define UNRES_QLEN 3 /* packets queued on each (unres_qlen's old default) */
/* room behind a queue whose next hop resolved since the poll began: the
 * packets of that poll join it rather than overtake it */
#define UNRES_BEHIND 32
#define UNRES_TIMEOUT_MS 3000u /* mcast_solicit 3 x retrans_time 1 s */
#define SOLICIT_RING 1024u

struct nftdp_dp_unres {
	uint64_t expire_tsc; /* 0: a free slot */
	bool asked;	     /* the request reached the control thread's ring */
	uint8_t family;
	uint8_t n; /* packets queued, oldest first */
	uint16_t tx_port;
	uint8_t addr[16];
	struct rte_mbuf *q[UNRES_QLEN + UNRES_BEHIND];
	uint16_t rx_port[UNRES_QLEN + UNRES_BEHIND];
};

/* one request on dp->solicit (a multiple of 4 bytes: rte_ring_elem) */
struct solicit_req {
	uint16_t tx_port;
	uint8_t family;
	uint8_t pad;
	uint8_t addr[16];
};

int nftdp_dp_unres_init(struct nftdp_dp *dp)
{
	if (!dp->route || !dp->host)
		return 0;
	dp->solicit = rte_ring_create_elem("nftdp_solicit", sizeof(struct solicit_req),
					   SOLICIT_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (!dp->solicit)
		return -ENOMEM;
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_dp_worker *w = &dp->w[i];

		w->unres =
		    rte_zmalloc_socket("nftdp_unres", UNRES_MAX * sizeof(*w->unres),
				       RTE_CACHE_LINE_SIZE, rte_lcore_to_socket_id(w->lcore));
		if (!w->unres)
			return -ENOMEM;
	}
	return 0;
}

/* the source of an ICMP error sent out of port: its --ifaddr, if any */
static const uint8_t *icmp_src(const struct nftdp_dp_port *pt, bool v4)
{
	if (v4)
		return pt->has_addr4 ? pt->addr4 : NULL;
	return pt->has_addr6 ? pt->addr6 : NULL;
}

/*
 * neigh_invalidate: the neighbour failed; each queued packet gets its
 * error report (ipv4_link_failure: ICMP_HOST_UNREACH; ip6_link_failure:
 * ICMPV6_ADDR_UNREACH), then all are dropped. The errors are locally
 * generated packets: the route back to the sender, output, postrouting,
 * the neighbour step and netdev egress.
 */
static void link_failure(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			 struct nftdp_dp_unres *u)
{
	struct nftdp_vm_pkt *act[UNRES_QLEN + UNRES_BEHIND], *all[UNRES_QLEN + UNRES_BEHIND];
	bool v4 = u->family == AF_INET;
	unsigned int n = 0, na;

	w->gen = gen;
	w->n_reply = 0;
	w->n_emit = 0;
	w->emit_unordered = false;
	/* as a burst: the memos of the last one may name freed or changed
	 * tables now */
	w->nb_memo[0].t = w->nb_memo[1].t = NULL;
	w->rt_memo[0].t = w->rt_memo[1].t = NULL;
	for (unsigned int i = 0; i < u->n; i++) {
		unsigned int idx = NFTDP_VM_BURST_MAX + n;
		struct rte_mbuf *mb = u->q[i], *r;
		uint8_t *d = rte_pktmbuf_mtod(mb, uint8_t *);
		struct nftdp_dp_l2 l2;
		uint32_t len = 0;
		char *o;

		if (nftdp_dp_parse_l2(d, rte_pktmbuf_data_len(mb), &l2))
			len = nftdp_dp_reject_build(
			    d, l2.ip_off, rte_pktmbuf_data_len(mb) - l2.ip_off, false, v4 ? 3 : 1,
			    v4 ? 1 : 3, w->ip_id++, icmp_src(&w->dp->port[u->rx_port[i]], v4),
			    w->reply, sizeof(w->reply));
		rte_pktmbuf_free(mb);
		w->st.drop[NFTDP_DP_DROP_NEIGH_UNRESOLVED]++;
		if (!len)
			continue;
		r = rte_pktmbuf_alloc(w->pool);
		if (r == NULL || (o = rte_pktmbuf_append(r, (uint16_t)len)) == NULL) {
			rte_pktmbuf_free(r);
			w->st.drop[NFTDP_DP_DROP_NO_MBUF]++;
			continue;
		}
		memcpy(o, w->reply, len);
		w->st.replies++;
		nftdp_dp_parse_l2((uint8_t *)o, len, &l2);
		if (!nftdp_dp_view_host(w, idx, r, &l2)) {
			rte_pktmbuf_free(r);
			continue;
		}
		act[n++] = &w->view[idx];
	}
	u->n = 0;
	u->expire_tsc = 0;
	w->n_unres--;
	if (!n)
		return;
	/* rejects of the chains below take the slots after these */
	w->n_reply = n;
	memcpy(all, act, n * sizeof(*act));
	na = nftdp_dp_nexthop_replies(w, act, n);
	na = nftdp_dp_hook_run(w, gen, NFTDP_DP_ST_OUTPUT, NF_INET_LOCAL_OUT, act, na,
			       u->rx_port[0]);
	na = nftdp_dp_hook_run(w, gen, NFTDP_DP_ST_POSTROUTING, NF_INET_POST_ROUTING, act, na,
			       u->rx_port[0]);
	if (w->ct) {
		nftdp_dp_ct_confirm(w, act, na, NF_ACCEPT);
		nftdp_dp_ct_confirm(w, all, n, NF_DROP);
	}
	for (unsigned int i = 0; i < na; i++) {
		unsigned int idx = (unsigned int)(act[i] - w->view);
		struct nftdp_vm_pkt *p = act[i];

		/* an unresolved way back queues the error in its turn */
		if (nftdp_dp_nexthop_output(w, p, &w->meta[idx], &w->nh[idx], w->mb[idx]))
			nftdp_dp_egress(w, gen, &p, 1, w->nh[idx].tx_port, u->rx_port[0]);
	}
	/* the copies output chains made of the errors (dup to ADDR) */
	nftdp_dp_send_copies(w, gen, n, u->rx_port[0]);
	nftdp_dp_emit_flush(w);
}

static void drop_all(struct nftdp_dp_worker *w, struct nftdp_dp_unres *u)
{
	for (unsigned int i = 0; i < u->n; i++)
		rte_pktmbuf_free(u->q[i]);
	w->st.drop[NFTDP_DP_DROP_NEIGH_UNRESOLVED] += u->n;
	u->n = 0;
	u->expire_tsc = 0;
	w->n_unres--;
}

void nftdp_dp_unres_fini(struct nftdp_dp *dp)
{
	for (unsigned int i = 0; dp->w && i < dp->n_workers; i++) {
		struct nftdp_dp_worker *w = &dp->w[i];

		for (unsigned int k = 0; w->unres && k < UNRES_MAX; k++)
			if (w->unres[k].expire_tsc)
				drop_all(w, &w->unres[k]);
		rte_free(w->unres);
		w->unres = NULL;
	}
	rte_ring_free(dp->solicit);
	dp->solicit = NULL;
}

static void ask(struct nftdp_dp_worker *w, struct nftdp_dp_unres *u)
{
	struct solicit_req r = {.tx_port = u->tx_port, .family = u->family};

	memcpy(r.addr, u->addr, sizeof(r.addr));
	/* a full ring: asked again at the next poll */
	u->asked = rte_ring_mp_enqueue_elem(w->dp->solicit, &r, sizeof(r)) == 0;
	w->st.neigh_asked += u->asked;
}

void nftdp_dp_unres_queue(struct nftdp_dp_worker *w, struct rte_mbuf *mb, uint16_t tx_port,
			  uint16_t rx_port, int family, const uint8_t *nexthop)
{
	unsigned int alen = family == AF_INET ? 4 : 16, cap;
	struct nftdp_dp_unres *u = NULL, *free_slot = NULL;

	if (!w->unres || !w->dp->port[tx_port].has_host) {
		nftdp_dp_nexthop_unresolved(w, mb);
		return;
	}
	for (unsigned int k = 0; k < UNRES_MAX && !u; k++) {
		struct nftdp_dp_unres *e = &w->unres[k];

		if (!e->expire_tsc) {
			if (!free_slot)
				free_slot = e;
		} else if (e->tx_port == tx_port && e->family == family &&
			   memcmp(e->addr, nexthop, alen) == 0) {
			u = e;
		}
	}
	if (!u) {
		if (!free_slot) { /* as many next hops unresolved as we follow */
			nftdp_dp_nexthop_unresolved(w, mb);
			return;
		}
		u = free_slot;
		*u = (struct nftdp_dp_unres){.expire_tsc = rte_rdtsc() + rte_get_tsc_hz() / 1000 *
									     UNRES_TIMEOUT_MS,
					     .family = (uint8_t)family,
					     .tx_port = tx_port};
		memcpy(u->addr, nexthop, alen);
		w->n_unres++;
		ask(w, u);
	}
	/* a queue whose next hop resolved since the poll began goes out at
	 * the next poll whole: room behind it; else the oldest goes at the
	 * limit, as neigh's queue */
	cap = UNRES_QLEN;
	if (u->n && nftdp_route_neigh_lookup(nftdp_dp_nexthop_table(w->dp), family,
					     w->dp->port[tx_port].ifindex, nexthop))
		cap = UNRES_QLEN + UNRES_BEHIND;
	if (u->n >= cap) {
		rte_pktmbuf_free(u->q[0]);
		w->st.drop[NFTDP_DP_DROP_NEIGH_UNRESOLVED]++;
		memmove(u->q, u->q + 1, (u->n - 1) * sizeof(u->q[0]));
		memmove(u->rx_port, u->rx_port + 1, (u->n - 1) * sizeof(u->rx_port[0]));
		u->n--;
	}
	u->q[u->n] = mb;
	u->rx_port[u->n++] = rx_port;
	w->st.neigh_queued++;
}

bool nftdp_dp_unres_waiting(const struct nftdp_dp_worker *w, uint16_t tx_port, int family,
			    const uint8_t *nexthop)
{
	unsigned int alen = family == AF_INET ? 4 : 16;

	for (unsigned int k = 0; w->unres && k < UNRES_MAX; k++) {
		const struct nftdp_dp_unres *e = &w->unres[k];

		if (e->expire_tsc && e->n && e->tx_port == tx_port && e->family == family &&
		    memcmp(e->addr, nexthop, alen) == 0)
			return true;
	}
	return false;
}

/* neigh_update to a valid state: the queue goes out (neigh->output) */
static void send_queue(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
		       struct nftdp_dp_unres *u, const uint8_t *lladdr)
{
	const struct nftdp_dp_port *tx = &w->dp->port[u->tx_port];

	w->gen = gen;
	w->n_reply = 0;
	w->n_emit = 0;
	w->emit_unordered = false;
	for (unsigned int i = 0; i < u->n; i++) {
		struct rte_mbuf *mb = u->q[i];
		uint8_t *d = rte_pktmbuf_mtod(mb, uint8_t *);
		struct nftdp_vm_pkt *p = &w->view[i];
		struct nftdp_dp_l2 l2;

		memcpy(d, lladdr, 6);
		memcpy(d + 6, tx->mac.addr_bytes, 6);
		/* it was parsed on the way in: this cannot fail */
		if (!nftdp_dp_parse_l2(d, rte_pktmbuf_data_len(mb), &l2)) {
			rte_pktmbuf_free(mb);
			w->st.drop[NFTDP_DP_DROP_RUNT]++;
			continue;
		}
		nftdp_dp_view_frame(w, i, mb, &l2);
		nftdp_dp_egress(w, gen, &p, 1, u->tx_port, u->rx_port[i]);
		w->st.neigh_sent++;
	}
	nftdp_dp_emit_flush(w);
	u->n = 0;
	u->expire_tsc = 0;
	w->n_unres--;
}

void nftdp_dp_unres_flush(struct nftdp_dp_worker *w)
{
	struct nftdp_dp *dp = w->dp;
	const struct nftdp_route_neigh *t = nftdp_dp_nexthop_table(dp);
	const struct nftdp_vm_gen *gen = NULL;
	uint64_t now = rte_rdtsc();

	for (unsigned int k = 0; k < UNRES_MAX && w->n_unres; k++) {
		struct nftdp_dp_unres *u = &w->unres[k];
		const uint8_t *lladdr;

		if (!u->expire_tsc)
			continue;
		if (!u->asked)
			ask(w, u);
		lladdr =
		    nftdp_route_neigh_lookup(t, u->family, dp->port[u->tx_port].ifindex, u->addr);
		if (lladdr) {
			/* netdev egress chains of the generation of now */
			if (!gen)
				gen = nftdp_vm_gen_acquire(dp->dom);
			send_queue(w, gen, u, lladdr);
		} else if (now >= u->expire_tsc) {
			if (!gen)
				gen = nftdp_vm_gen_acquire(dp->dom);
			link_failure(w, gen, u);
		}
	}
	if (gen)
		nftdp_vm_gen_quiesce(dp->dom, w->id);
}

void nftdp_dp_unres_solicit(struct nftdp_dp *dp)
{
	static bool said;
	struct solicit_req r;

	if (!dp->solicit)
		return;
	while (rte_ring_sc_dequeue_elem(dp->solicit, &r, sizeof(r)) == 0) {
		const struct nftdp_dp_port *pt = &dp->port[r.tx_port];
		int ret = nftdp_route_neigh_resolve(dp->port[pt->host_peer].name, r.family, r.addr);

		if (ret < 0 && !said) { /* once: the packets wait and are dropped */
			fprintf(stderr, "nftdp: asking the host to resolve a next hop on %s: %s\n",
				dp->port[pt->host_peer].name, strerror(-ret));
			said = true;
		}
	}
}

bool nftdp_dp_unres_pending(const struct nftdp_dp *dp)
{
	return dp->solicit && !rte_ring_empty(dp->solicit);
}
