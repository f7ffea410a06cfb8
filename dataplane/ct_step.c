// SPDX-License-Identifier: BSD-3-Clause
/*
 * Connection tracking in the hook pipeline (conntrack/): each worker owns a
 * shard. nf_conntrack_in runs in prerouting at NF_IP_PRI_CONNTRACK (-200),
 * between the base chains below and above it; a packet's entry is confirmed
 * at the end of postrouting if it got that far, and a packet dropped
 * anywhere on the way confirms with NF_DROP, so a dropped first packet
 * leaves no entry. Tracking is on for a family only while the generation has
 * a rule that needs it, as nf_ct_netns_get turns it on in the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_random.h>

#include "ct_ctl.h"
#include "dataplane_priv.h"
#include "nftdp_conntrack.h"

#include <linux/netfilter_ipv4.h> /* after netinet/in.h: NF_IP_PRI_CONNTRACK */

#define CT_GC_BUDGET 256 /* entry slots looked at every CT_GC_EVERY polls */
#define CT_GC_EVERY 16

static void ct_in_step(struct nftdp_dp_worker *w, uint8_t hook, struct nftdp_vm_pkt **pkts,
		       unsigned int n, unsigned int *verdicts)
{
	struct nftdp_vm_pkt *sub[NFTDP_VM_BURST_MAX];
	const struct nftdp_ct_lookup *lk[NFTDP_VM_BURST_MAX];
	unsigned int pos[NFTDP_VM_BURST_MAX], sv[NFTDP_VM_BURST_MAX], k = 0;

	(void)hook;
	/* the packets of families conntrack tracks, in order, with what
	 * their probe found out (a reply nftdp made is no view of the burst) */
	for (unsigned int i = 0; i < n; i++) {
		unsigned int v = (unsigned int)(pkts[i] - w->view);

		verdicts[i] = NF_ACCEPT;
		if (!nftdp_vm_gen_uses_ct(w->gen, pkts[i]->nfproto))
			continue;
		/* a raw-priority notrack made the packet untracked */
		if (pkts[i]->out.notrack)
			pkts[i]->ct_untracked = true;
		pos[k] = i;
		lk[k] = w->ct_lk_on && v < NFTDP_VM_BURST_MAX ? &w->ct_lk[v] : NULL;
		sub[k++] = pkts[i];
	}
	if (k == n) {
		nftdp_ct_in_burst(w->ct, pkts, n, verdicts, w->ctx.now_ms, lk);
		return;
	}
	if (k == 0)
		return;
	nftdp_ct_in_burst(w->ct, sub, k, sv, w->ctx.now_ms, lk);
	for (unsigned int j = 0; j < k; j++)
		verdicts[pos[j]] = sv[j];
}

static bool ct_active(const struct nftdp_vm_gen *gen)
{
	return nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV4) || nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV6);
}

/*
 * ipv4_conntrack_local / ipv6_conntrack_local at LOCAL_OUT: what the host
 * sends (views of the burst) is tracked; nftdp's own replies (views from
 * NFTDP_VM_BURST_MAX) already joined their connection (nf_ct_attach), and
 * nf_conntrack_in lets a packet with a connection pass.
 */
static void ct_local_step(struct nftdp_dp_worker *w, uint8_t hook, struct nftdp_vm_pkt **pkts,
			  unsigned int n, unsigned int *verdicts)
{
	struct nftdp_vm_pkt *sub[NFTDP_VM_BURST_MAX];
	unsigned int pos[NFTDP_VM_BURST_MAX], sv[NFTDP_VM_BURST_MAX], k = 0;

	for (unsigned int i = 0; i < n; i++) {
		verdicts[i] = NF_ACCEPT;
		if (pkts[i] - w->view < NFTDP_VM_BURST_MAX) {
			pos[k] = i;
			sub[k++] = pkts[i];
		}
	}
	if (k == 0)
		return;
	ct_in_step(w, hook, sub, k, sv);
	for (unsigned int j = 0; j < k; j++)
		verdicts[pos[j]] = sv[j];
}

/* A connection's binding of the hook's manip type is set: the walk stops. */
static bool nat_bound(const struct nftdp_vm_pkt *pkt, uint8_t hook)
{
	return !nftdp_ct_nat_need_chains(pkt, hook);
}

/*
 * nf_nat_inet_fn at NF_IP_PRI_NAT_DST / _SRC: a connection being set up runs
 * the hook's nat-type chains until one binds it (else the null binding);
 * then every packet of a NATed connection is rewritten (nf_nat_packet).
 */
/*
 * nf_nat_register_fn: the first nat-type chain of a family, at any hook,
 * registers NAT at every hook of that family (inet chains count for both);
 * without one, connections get no null binding and no rewrite.
 */
static bool nat_registered(const struct nftdp_vm_gen *gen, uint8_t nfproto)
{
	static const uint8_t hooks[] = {NF_INET_PRE_ROUTING, NF_INET_LOCAL_IN, NF_INET_LOCAL_OUT,
					NF_INET_POST_ROUTING};

	for (unsigned int i = 0; i < sizeof(hooks); i++)
		if (nftdp_vm_gen_nat_len(gen, nfproto, hooks[i]))
			return true;
	return false;
}

static void nat_step(struct nftdp_dp_worker *w, uint8_t hook, struct nftdp_vm_pkt **pkts,
		     unsigned int n, unsigned int *verdicts)
{
	/* whether NAT is registered for IPv4, for IPv6 */
	bool reg[2] = {nat_registered(w->gen, NFPROTO_IPV4), nat_registered(w->gen, NFPROTO_IPV6)};

	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = pkts[i];
		unsigned int v = NF_ACCEPT;

		if (!reg[p->nfproto == NFPROTO_IPV6]) {
			verdicts[i] = NF_ACCEPT;
			continue;
		}
		if (p->ct && nftdp_ct_nat_need_chains(p, hook)) {
			p->hook = hook;
			v = nftdp_vm_gen_run_nat(w->gen, p->nfproto, hook, p, &w->ctx, nat_bound);
		}
		if (v == NF_ACCEPT && p->ct)
			v = nftdp_ct_nat_packet(w->ct, p, hook);
		verdicts[i] = v;
	}
}

/* no nat-type chain in either family: NAT has nothing to do (nat_step
 * would accept every packet) */
static bool nat_active(const struct nftdp_vm_gen *gen)
{
	return ct_active(gen) &&
	       (nat_registered(gen, NFPROTO_IPV4) || nat_registered(gen, NFPROTO_IPV6));
}

bool nftdp_dp_nat_on(const struct nftdp_vm_gen *gen, uint8_t nfproto)
{
	return gen && ct_active(gen) && nat_registered(gen, nfproto);
}

bool nftdp_dp_step_is_nat(nftdp_dp_step_fn *fn)
{
	return fn == nat_step;
}

bool nftdp_dp_nat_dst(struct nftdp_vm_pkt *p, bool *snat)
{
	uint8_t manips;

	*snat = false;
	if (!nftdp_ct_nat_bound(p, &manips))
		return false;
	if ((manips & 1u << NFTDP_CT_MANIP_DST) && !nftdp_ct_nat_apply(p, NFTDP_CT_MANIP_DST))
		return false;
	*snat = manips & 1u << NFTDP_CT_MANIP_SRC;
	return true;
}

bool nftdp_dp_nat_src(struct nftdp_vm_pkt *p)
{
	return nftdp_ct_nat_apply(p, NFTDP_CT_MANIP_SRC);
}

/* masquerade: the --ifaddr of the port (ifindex = port id + 1) */
static bool port_addr(void *arg, uint32_t ifindex, uint8_t nfproto, void *addr16)
{
	const struct nftdp_dp *dp = arg;
	const struct nftdp_dp_port *p;

	if (ifindex == 0 || ifindex > dp->n_ports)
		return false;
	p = &dp->port[ifindex - 1];
	memset(addr16, 0, 16);
	if (nfproto == NFPROTO_IPV4 && p->has_addr4) {
		memcpy(addr16, p->addr4, 4);
		return true;
	}
	if (nfproto == NFPROTO_IPV4 && p->has_host) {
		/* the exception path: the host interface's primary address */
		uint32_t a = __atomic_load_n(&p->host_addr4, __ATOMIC_RELAXED);

		memcpy(addr16, &a, 4);
		return a != 0;
	}
	if (nfproto == NFPROTO_IPV6 && p->has_addr6) {
		memcpy(addr16, p->addr6, 16);
		return true;
	}
	return false;
}

/*
 * nf_nat_mangle_tcp_packet's skb_put / __skb_trim for a view of the burst:
 * its mbuf grows into its tailroom (the kernel would reallocate; nftdp
 * drops, the brief's choice for a packet that already fills its buffer)
 * or shrinks, and the datagram length the later hooks use follows.
 */
static bool pkt_resize(void *arg, struct nftdp_vm_pkt *p, uint32_t len)
{
	struct nftdp_dp_worker *w = arg;
	unsigned int idx = (unsigned int)(p - w->view);
	struct rte_mbuf *mb;
	int64_t delta = (int64_t)len - p->len;

	if (idx >= NFTDP_DP_VIEWS || !(mb = w->mb[idx]) || mb->nb_segs != 1)
		return false;
	if (delta > 0 && rte_pktmbuf_append(mb, (uint16_t)delta) == NULL)
		return false;
	if (delta < 0 && rte_pktmbuf_trim(mb, (uint16_t)-delta) < 0)
		return false;
	w->meta[idx].ip_len = (uint32_t)((int64_t)w->meta[idx].ip_len + delta);
	p->len = len;
	p->skb_len = (uint32_t)((int64_t)p->skb_len + delta);
	return true;
}

/* the h323 helper's callforward_filter: the route mirror's output routes */
static bool same_route(void *arg, uint8_t nfproto, const void *a16, const void *b16)
{
	return nftdp_dp_fib_same_route(arg, nfproto == NFPROTO_IPV4, a16, b16);
}

int nftdp_dp_ct_init(struct nftdp_dp *dp, uint32_t ct_max, const struct nftdp_ct_config *tmpl)
{
	uint32_t per = ct_max / (dp->n_workers ? dp->n_workers : 1);

	int rc;

	if (per == 0)
		per = 1;
	/* one table for every shard: an expected data connection may hash to
	 * another worker than its master (docs/conntrack.md, "Expectations") */
	rc = nftdp_ct_expect_table_create((uint16_t)(dp->n_workers ? dp->n_workers : 1), 0,
					  &dp->ct_exp);
	if (rc < 0)
		return rc;
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_ct_config cfg = *tmpl; /* --ct-sysctl tunables and timeouts */

		cfg.max_entries = per;
		cfg.shard_id = (uint16_t)i;
		cfg.n_shards = (uint16_t)dp->n_workers;
		/* secret, as the kernel's get_random_bytes seed: a known seed
		 * lets anybody send tuples that share one chain */
		cfg.hash_seed = (uint32_t)rte_rand();
		cfg.ifaddr = port_addr;
		cfg.ifaddr_arg = dp;
		cfg.expect = dp->ct_exp;
		cfg.pkt_resize = pkt_resize;
		cfg.pkt_resize_arg = &dp->w[i];
		cfg.same_route = same_route;
		cfg.same_route_arg = dp;
		rc = nftdp_ct_shard_create(&cfg, &dp->w[i].ct);
		if (rc < 0) {
			fprintf(stderr, "nftdp: conntrack shard of %u entries: %d\n", per, rc);
			return rc;
		}
		dp->w[i].ct_lk = calloc(NFTDP_VM_BURST_MAX, sizeof(*dp->w[i].ct_lk));
		if (!dp->w[i].ct_lk)
			return -ENOMEM;
	}
	nftdp_dp_step_add(dp, NF_INET_PRE_ROUTING, NF_IP_PRI_CONNTRACK, ct_in_step, ct_active);
	nftdp_dp_step_add(dp, NF_INET_PRE_ROUTING, NF_IP_PRI_NAT_DST, nat_step, nat_active);
	nftdp_dp_step_add(dp, NF_INET_POST_ROUTING, NF_IP_PRI_NAT_SRC, nat_step, nat_active);
	/* nftdp's own replies (reject, time exceeded) leave through output:
	 * NAT translates them there and at postrouting with their connection */
	nftdp_dp_step_add(dp, NF_INET_LOCAL_OUT, NF_IP_PRI_NAT_DST, nat_step, nat_active);
	if (dp->host) {
		/* the exception path (host.c): ipv4_conntrack_local for what
		 * the host sends, NAT at input (SNAT) as the kernel has it */
		nftdp_dp_step_add(dp, NF_INET_LOCAL_OUT, NF_IP_PRI_CONNTRACK, ct_local_step,
				  ct_active);
		nftdp_dp_step_add(dp, NF_INET_LOCAL_IN, NF_IP_PRI_NAT_SRC, nat_step, nat_active);
	}
	return 0;
}

void nftdp_dp_ct_fini(struct nftdp_dp *dp)
{
	for (unsigned int i = 0; dp->w && i < dp->n_workers; i++) {
		nftdp_ct_shard_destroy(dp->w[i].ct);
		dp->w[i].ct = NULL;
		free(dp->w[i].ct_lk);
		dp->w[i].ct_lk = NULL;
	}
	nftdp_ct_expect_table_destroy(dp->ct_exp);
	dp->ct_exp = NULL;
}

void nftdp_dp_ct_confirm(struct nftdp_dp_worker *w, struct nftdp_vm_pkt **pkts, unsigned int n,
			 unsigned int verdict)
{
	for (unsigned int i = 0; i < n; i++)
		if (pkts[i]->ct)
			nftdp_ct_confirm(w->ct, pkts[i], verdict);
}

const void *nftdp_dp_ct_probe(struct nftdp_dp_worker *w, const struct nftdp_vm_pkt *pkt,
			      unsigned int i)
{
	/* only lookups this burst reset (nftdp_dp_ct_lookups): an older one
	 * of the same mbuf bytes and length would pass for this packet's */
	return nftdp_ct_probe(w->ct, pkt, w->ctx.now_ms,
			      w->ct_lk_on && i < NFTDP_VM_BURST_MAX ? &w->ct_lk[i] : NULL);
}

bool nftdp_dp_ct_room(const struct nftdp_dp_worker *w)
{
	struct nftdp_ct_stats st;

	if (!w->ct_lk_on || !nftdp_vm_gen_order_free(w->gen))
		return false;
	nftdp_ct_stats(w->ct, &st);
	return st.max - st.count >= NFTDP_VM_BURST_MAX;
}

bool nftdp_dp_ct_group_new(const struct nftdp_dp_worker *w)
{
	return !nat_active(w->gen) && nftdp_dp_ct_room(w);
}

unsigned int nftdp_dp_ct_in_one(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *p, unsigned int i,
				bool *plain, struct nftdp_vm_flow_carry **carry)
{
	const struct nftdp_ct_lookup *lk =
	    w->ct_lk_on && i < NFTDP_VM_BURST_MAX ? &w->ct_lk[i] : NULL;
	unsigned int v;

	/* right after its probe found the entry (burst_established) */
	v = lk ? nftdp_ct_in_found(w->ct, p, w->ctx.now_ms, lk)
	       : nftdp_ct_in_hinted(w->ct, p, w->ctx.now_ms, NULL);
	p->ct_seen = true;
	*plain = nftdp_ct_pkt_plain(p);
	*carry = *plain && p->ct ? nftdp_ct_carry(w->ct, p->ct) : NULL;
	return v;
}

uint64_t nftdp_dp_ct_conn_bit(const struct nftdp_dp_worker *w, unsigned int i)
{
	const struct nftdp_ct_lookup *lk = &w->ct_lk[i];
	const struct nftdp_ct_tuple *t = &lk->t;
	uint64_t a = 0, b = 0;

	if (!w->ct_lk_on || !lk->data)
		return 0;
	/* symmetric in the two ends: a tuple and its reply share the bit */
	for (unsigned int k = 0; k < 4; k++) {
		a = a * 31 + t->src.ip6[k];
		b = b * 31 + t->dst.ip6[k];
	}
	a = (a * 31 + t->sport) * 0x9e3779b97f4a7c15ull;
	b = (b * 31 + t->dport) * 0x9e3779b97f4a7c15ull;
	return 1ull << (((a + b) >> 58) & 63);
}

void nftdp_dp_ct_lookups(struct nftdp_dp_worker *w, unsigned int n, bool on)
{
	w->ct_lk_on = on && w->ct_lk;
	for (unsigned int i = 0; w->ct_lk_on && i < n; i++)
		w->ct_lk[i].data = NULL;
}

/* entries (256 bytes each) from which a shard's table outgrows the caches */
#define CT_PREFETCH_MIN 32768u

void nftdp_dp_ct_prefetch(struct nftdp_dp_worker *w, struct nftdp_vm_pkt *const *pkts,
			  const bool *ready, unsigned int n)
{
	struct nftdp_vm_pkt *p[NFTDP_VM_BURST_MAX];
	struct nftdp_ct_lookup *lk[NFTDP_VM_BURST_MAX];
	/* whether conntrack tracks IPv4, IPv6 (views are one or the other) */
	bool on[2] = {nftdp_vm_gen_uses_ct(w->gen, NFPROTO_IPV4),
		      nftdp_vm_gen_uses_ct(w->gen, NFPROTO_IPV6)};

	struct nftdp_ct_stats st;

	if (!w->ct_lk_on || n > NFTDP_VM_BURST_MAX)
		return;
	/* a table that stays in the caches gains nothing from prefetching
	 * and pays the pass over the burst (about 80 instructions a packet
	 * at 256 connections); the probe works the tuple out itself */
	nftdp_ct_stats(w->ct, &st);
	if (st.count < CT_PREFETCH_MIN)
		return;
	/* a first fragment is prefetched too: its reassembled datagram is
	 * longer, so the probe and conntrack work its tuple out again */
	for (unsigned int i = 0; i < n; i++) {
		unsigned int v = (unsigned int)(pkts[i] - w->view);

		p[i] = NULL;
		lk[i] = NULL;
		if (!ready[i] || v >= NFTDP_VM_BURST_MAX || !on[pkts[i]->nfproto == NFPROTO_IPV6])
			continue;
		p[i] = pkts[i];
		lk[i] = &w->ct_lk[v];
	}
	nftdp_ct_prefetch_burst(w->ct, p, n, lk);
}

void nftdp_dp_ct_attach(struct nftdp_vm_pkt *reply, const struct nftdp_vm_pkt *orig)
{
	nftdp_ct_attach(reply, orig);
}

unsigned int nftdp_dp_ct_confirm_accepted(struct nftdp_dp_worker *w, struct nftdp_vm_pkt **pkts,
					  unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = pkts[i];

		/* a new connection whose reply tuple another entry holds (zones,
		 * NAT) is dropped here, as __nf_conntrack_confirm does */
		if (p->ct && nftdp_ct_confirm(w->ct, p, NF_ACCEPT) != NF_ACCEPT) {
			w->st.drop[NFTDP_DP_DROP_CT_CLASH]++;
			rte_pktmbuf_free(w->mb[p - w->view]);
			continue;
		}
		pkts[k++] = p;
	}
	return k;
}

void nftdp_dp_ct_gc(struct nftdp_dp_worker *w)
{
	nftdp_dp_ct_ctl_service(w); /* conntrack -L/-D/-F between bursts */
	if (w->ct && ++w->ct_gc_tick % CT_GC_EVERY == 0)
		nftdp_ct_gc(w->ct, w->ctx.now_ms, CT_GC_BUDGET);
}
