// SPDX-License-Identifier: BSD-3-Clause
/*
 * IP fragments with conntrack, as nf_defrag_ipv4/ipv6 and the output path
 * handle them (docs/dataplane.md "Fragments"):
 *
 * - reassembly in prerouting at NF_IP_PRI_CONNTRACK_DEFRAG (-400), only for
 *   a family whose generation uses conntrack (nf_defrag is pulled in by
 *   nf_ct_netns_get). DPDK's librte_ip_frag keeps a per-worker table of
 *   datagrams being reassembled (30 s, the kernel's ipfrag_time); a held
 *   fragment is consumed (NF_STOLEN), and the fragment that completes a
 *   datagram becomes the whole datagram, copied into one contiguous mbuf
 *   of the worker's jumbo pool, so the VM sees it as the kernel's skb;
 * - the forward path's MTU check (ip_exceeds_mtu, ip6_pkt_too_big): a
 *   datagram whose largest fragment does not fit the egress MTU gets ICMP
 *   fragmentation needed / packet too big when DF (always for IPv6);
 * - refragmentation before netdev egress (ip_do_fragment, ip6_fragment's
 *   slow path): pieces of at most the largest fragment received
 *   (IPCB/IP6CB frag_max_size) and the egress MTU, IPv6 at least 1280.
 *
 * Per packet: no locks, no syscalls, no heap allocation; mbufs come from
 * the worker's pools only.
 */
/* rte_ip_frag_table_del_expired_entries is still experimental in 22.11 */
#define ALLOW_EXPERIMENTAL_API

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dataplane_priv.h"

#include <linux/netfilter_ipv4.h> /* NF_IP_PRI_CONNTRACK_DEFRAG */

#define FRAG_TIMEOUT_S 30	 /* net.ipv4.ipfrag_time, ip6frag_time */
#define FRAG_BUCKETS 1024	 /* hash buckets of a worker's table */
#define FRAG_BUCKET_ENTRIES 8	 /* associativity (a power of 2) */
#define FRAG_MAX_DATAGRAMS 4096	 /* datagrams in reassembly per worker */
#define FRAG_EXPIRE_EVERY_MS 100 /* how often timed-out datagrams are freed */
#define JUMBO_MBUFS (2 * NFTDP_VM_BURST_MAX)
#define JUMBO_ROOM UINT16_MAX /* data room of a jumbo mbuf (headroom included) */
#define IPV6_MIN_MTU 1280
/* one reassembly call puts at most a stale datagram, a failed one and the
 * fragment itself on the death row */
#define DR_PER_CALL (2 * RTE_LIBRTE_IP_FRAG_MAX_FRAG + 1)

/* what a held fragment remembers for the datagram (mbuf hash.usr) */
#define INFO_DF (1u << 16)

struct nftdp_dp_defrag {
	struct rte_ip_frag_tbl *tbl;
	struct rte_mempool *jumbo;
	uint64_t next_expire_tsc;
	uint64_t expire_every_tsc;
	uint16_t mtu[RTE_MAX_ETHPORTS];
	/* the payload lengths of the fragments a burst's datagram came in, in
	 * offset order (the skb's frag_list), by view */
	uint8_t n_geo[NFTDP_VM_BURST_MAX];
	uint16_t geo[NFTDP_VM_BURST_MAX][RTE_LIBRTE_IP_FRAG_MAX_FRAG];
	struct rte_ip_frag_death_row dr;
};

/* ip_send_check */
static void ip4_csum(uint8_t *iph, uint32_t hl)
{
	nftdp_wr16(iph + 10, 0);
	nftdp_st16(iph + 10, nftdp_ip_fast_csum(iph, hl));
}

/* fragments go to the death row; count them, then free */
static void dr_flush(struct nftdp_dp_worker *w, struct nftdp_dp_defrag *df)
{
	if (df->dr.cnt == 0)
		return;
	w->st.drop[NFTDP_DP_DROP_FRAG] += df->dr.cnt;
	rte_ip_frag_free_death_row(&df->dr, 3);
}

/* the fragment IP header at iph (ip_len bytes, checked by ip_rcv) */
bool nftdp_dp_defrag_is_fragment(const uint8_t *iph, uint32_t ip_len, bool v4)
{
	if (v4)
		return (nftdp_rd16(iph + 6) & 0x3fff) != 0;
	/* only a fragment header right after the IPv6 header (what
	 * librte_ip_frag reassembles); an atomic fragment is passed as is */
	return iph[6] == IPPROTO_FRAGMENT && ip_len >= 48 && (nftdp_rd16(iph + 42) & 0xfff9) != 0;
}

/*
 * The datagram r (a chain of the fragments' mbufs, the first one's headers
 * on top) becomes view idx: one contiguous jumbo mbuf, DF as ip_frag_reasm
 * sets it, frag_max as IPCB(skb)->frag_max_size.
 */
static unsigned int adopt(struct nftdp_dp_worker *w, struct nftdp_dp_defrag *df,
			  struct nftdp_vm_pkt *p, unsigned int idx, struct rte_mbuf *r, bool v4)
{
	struct nftdp_dp_meta *mt = &w->meta[idx];
	uint32_t len = r->pkt_len, max_size = 0, max_df = 0, k = 0;
	struct rte_mbuf *j;
	const void *src;
	uint8_t *d;

	for (const struct rte_mbuf *s = r; s; s = s->next, k++) {
		uint32_t sz = s->hash.usr & 0xffff;

		if (k < RTE_LIBRTE_IP_FRAG_MAX_FRAG)
			df->geo[idx][k] =
			    (uint16_t)(s == r ? s->data_len - r->l2_len - (v4 ? r->l3_len : 40u)
					      : s->data_len);
		if (sz > max_size)
			max_size = sz;
		if ((s->hash.usr & INFO_DF) && sz > max_df)
			max_df = sz;
	}
	j = rte_pktmbuf_alloc(df->jumbo);
	if (j == NULL || len > rte_pktmbuf_tailroom(j) || len < (uint32_t)mt->ip_off + 20) {
		rte_pktmbuf_free(j);
		rte_pktmbuf_free(r);
		w->st.drop[NFTDP_DP_DROP_FRAG]++;
		return NF_STOLEN;
	}
	d = (uint8_t *)rte_pktmbuf_append(j, (uint16_t)len);
	src = rte_pktmbuf_read(r, 0, len, d);
	if (src != d)
		memcpy(d, src, len);
	j->port = r->port;
	rte_pktmbuf_free(r);
	if (v4) {
		uint8_t *iph = d + mt->ip_off;

		/* DF only when the largest fragment had it (ip_frag_reasm) */
		nftdp_wr16(iph + 6, max_df && max_df == max_size ? 0x4000 : 0);
		ip4_csum(iph, (iph[0] & 15) * 4u);
	}
	df->n_geo[idx] = k <= RTE_LIBRTE_IP_FRAG_MAX_FRAG ? (uint8_t)k : 0;
	w->mb[idx] = j;
	mt->ip_len = len - mt->ip_off;
	mt->frag_max = (uint16_t)max_size;
	w->n_reasm++;
	p->data = d;
	p->len = len;
	p->skb_len = mt->ip_len;
	p->inner_off = -1;
	p->flags = (uint8_t)((p->flags & ~NFTDP_VM_PKT_F_INNER) | NFTDP_VM_PKT_F_WRITABLE);
	nftdp_vm_pkt_parse_ip(p);
	return NF_ACCEPT;
}

static unsigned int reassemble(struct nftdp_dp_worker *w, struct nftdp_dp_defrag *df,
			       struct nftdp_vm_pkt *p, unsigned int idx, bool v4, uint64_t tsc)
{
	struct nftdp_dp_meta *mt = &w->meta[idx];
	struct rte_mbuf *mb = w->mb[idx], *r;
	uint8_t *iph = p->data + mt->ip_off;
	uint32_t ip_len = mt->ip_len, hl, ofs, plen, info, id;

	if (v4) {
		hl = (iph[0] & 15) * 4u;
		ofs = (nftdp_rd16(iph + 6) & 0x1fffu) * 8u;
		info = ip_len | ((iph[6] & 0x40) ? INFO_DF : 0);
		id = nftdp_rd16(iph + 4);
	} else {
		hl = 48; /* IPv6 header and the fragment header */
		ofs = nftdp_rd16(iph + 42) & 0xfff8u;
		info = ip_len;
		id = nftdp_rd32(iph + 44);
	}
	plen = ip_len - hl;
	/* no payload, or past the largest datagram: never a datagram */
	if (ip_len <= hl || ofs + plen + (v4 ? hl : 0) > UINT16_MAX ||
	    rte_pktmbuf_pkt_len(mb) != mt->ip_off + ip_len) {
		rte_pktmbuf_free(mb);
		w->mb[idx] = NULL;
		w->st.drop[NFTDP_DP_DROP_FRAG]++;
		return NF_STOLEN;
	}
	if (df->dr.cnt + DR_PER_CALL > RTE_IP_FRAG_DEATH_ROW_MBUF_LEN)
		dr_flush(w, df);
	mb->l2_len = mt->ip_off;
	mb->l3_len = hl;
	mb->hash.usr = info;
	/* the library owns the fragment from here: held, on the death row, or
	 * the head of the datagram it completes */
	w->mb[idx] = NULL;
	if (v4)
		r = rte_ipv4_frag_reassemble_packet(df->tbl, &df->dr, mb, tsc,
						    (struct rte_ipv4_hdr *)iph);
	else
		r = rte_ipv6_frag_reassemble_packet(df->tbl, &df->dr, mb, tsc,
						    (struct rte_ipv6_hdr *)iph,
						    (struct rte_ipv6_fragment_ext *)(iph + 40));
	if (r == NULL)
		return NF_STOLEN;
	/* every fragment of the datagram carries its id: keep it for
	 * refragmenting */
	mt->frag_id = id;
	return adopt(w, df, p, idx, r, v4);
}

/* nf_defrag_ipv4 / nf_defrag_ipv6 at -400 in prerouting */
/* what the step does for time, once per burst */
static void expire(struct nftdp_dp_worker *w, struct nftdp_dp_defrag *df, uint64_t tsc)
{
	if (tsc >= df->next_expire_tsc) {
		/* datagrams not completed in time free their fragments (no ICMP:
		 * the kernel sends none for conntrack's defrag users) */
		dr_flush(w, df);
		rte_ip_frag_table_del_expired_entries(df->tbl, &df->dr, tsc);
		df->next_expire_tsc = tsc + df->expire_every_tsc;
	}
	dr_flush(w, df);
}

static void defrag_step(struct nftdp_dp_worker *w, uint8_t hook, struct nftdp_vm_pkt **pkts,
			unsigned int n, unsigned int *verdicts)
{
	struct nftdp_dp_defrag *df = w->defrag;
	uint64_t tsc = rte_rdtsc();

	(void)hook;
	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *p = pkts[i];
		unsigned int idx = (unsigned int)(p - w->view);
		const struct nftdp_dp_meta *mt = &w->meta[idx];
		bool v4 = p->nfproto == NFPROTO_IPV4;

		verdicts[i] = NF_ACCEPT;
		/* only for a family conntrack tracks */
		if (!nftdp_vm_gen_uses_ct(w->gen, p->nfproto) || idx >= NFTDP_VM_BURST_MAX ||
		    !nftdp_dp_defrag_is_fragment(p->data + mt->ip_off, mt->ip_len, v4))
			continue;
		verdicts[i] = reassemble(w, df, p, idx, v4, tsc);
	}
	expire(w, df, tsc);
}

void nftdp_dp_defrag_tick(struct nftdp_dp_worker *w)
{
	expire(w, w->defrag, rte_rdtsc());
}

static bool defrag_active(const struct nftdp_vm_gen *gen)
{
	return nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV4) || nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV6);
}

int nftdp_dp_defrag_init(struct nftdp_dp *dp)
{
	uint64_t hz = rte_get_tsc_hz();
	uint16_t mtu[RTE_MAX_ETHPORTS];

	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (p >= dp->n_ports || rte_eth_dev_get_mtu(p, &mtu[p]) < 0 || mtu[p] == 0)
			mtu[p] = RTE_ETHER_MTU;
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_dp_worker *w = &dp->w[i];
		int socket = (int)rte_lcore_to_socket_id(w->lcore);
		char name[RTE_MEMPOOL_NAMESIZE];
		struct nftdp_dp_defrag *df;

		df = rte_zmalloc_socket("nftdp_defrag", sizeof(*df), RTE_CACHE_LINE_SIZE, socket);
		if (df == NULL)
			return -ENOMEM;
		w->defrag = df;
		memcpy(df->mtu, mtu, sizeof(mtu));
		df->expire_every_tsc = hz / 1000 * FRAG_EXPIRE_EVERY_MS;
		df->tbl = rte_ip_frag_table_create(FRAG_BUCKETS, FRAG_BUCKET_ENTRIES,
						   FRAG_MAX_DATAGRAMS, hz * FRAG_TIMEOUT_S, socket);
		snprintf(name, sizeof(name), "nftdp_jumbo_%u", i);
		df->jumbo = rte_pktmbuf_pool_create(name, JUMBO_MBUFS, 0, 0, JUMBO_ROOM, socket);
		if (df->jumbo == NULL)
			df->jumbo = rte_pktmbuf_pool_create(name, JUMBO_MBUFS, 0, 0, JUMBO_ROOM,
							    SOCKET_ID_ANY);
		if (df->tbl == NULL || df->jumbo == NULL) {
			fprintf(stderr, "nftdp: worker %u: fragment reassembly: %s\n", i,
				rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	return nftdp_dp_step_add(dp, NF_INET_PRE_ROUTING, NF_IP_PRI_CONNTRACK_DEFRAG, defrag_step,
				 defrag_active);
}

void nftdp_dp_defrag_fini(struct nftdp_dp *dp)
{
	for (unsigned int i = 0; dp->w && i < dp->n_workers; i++) {
		struct nftdp_dp_defrag *df = dp->w[i].defrag;

		if (df == NULL)
			continue;
		rte_ip_frag_free_death_row(&df->dr, 0);
		rte_ip_frag_table_destroy(df->tbl); /* frees the held fragments */
		rte_mempool_free(df->jumbo);
		rte_free(df);
		dp->w[i].defrag = NULL;
	}
}

uint16_t nftdp_dp_defrag_mtu(const struct nftdp_dp_worker *w, uint16_t port)
{
	return w->defrag ? w->defrag->mtu[port] : RTE_ETHER_MTU;
}

bool nftdp_dp_defrag_too_big(const struct nftdp_dp_worker *w, const uint8_t *iph, bool v4,
			     uint16_t frag_max, uint16_t tx_port, uint32_t *mtu)
{
	uint16_t m = nftdp_dp_defrag_mtu(w, tx_port);

	/* the TTL check comes first (ip_forward, ip6_forward) */
	if (frag_max == 0 || (v4 ? iph[8] : iph[7]) <= 1)
		return false;
	if (!v4 && m < IPV6_MIN_MTU)
		m = IPV6_MIN_MTU;
	*mtu = m;
	/* ip_exceeds_mtu: DF and the largest fragment too big; IPv6 routers
	 * never fragment what they did not reassemble bigger */
	return frag_max > m && (!v4 || (iph[6] & 0x40));
}

uint32_t nftdp_dp_defrag_frag_needed(struct nftdp_dp_worker *w, const uint8_t *frame,
				     uint32_t ip_off, uint32_t ip_len, uint32_t mtu,
				     const uint8_t *icmp_src)
{
	bool v4 = (frame[ip_off] >> 4) == 4;
	uint32_t n, at;
	uint8_t *check;

	/* ICMP_DEST_UNREACH/ICMP_FRAG_NEEDED, ICMPV6_PKT_TOOBIG, the MTU in
	 * the header's second word */
	n = nftdp_dp_reject_build(frame, ip_off, ip_len, false, v4 ? 3 : 2, v4 ? 4 : 0, w->ip_id++,
				  icmp_src, w->reply, sizeof(w->reply));
	if (n == 0)
		return 0;
	at = ip_off + (v4 ? 20 : 40);
	nftdp_wr32(w->reply + at + 4, mtu);
	/* the field was zero: add it to the checksum (RFC 1624) */
	check = w->reply + at + 2;
	nftdp_st16(check,
		   nftdp_csum_fold(nftdp_csum_add((uint16_t)~nftdp_ld16(check),
						  nftdp_csum_partial(w->reply + at + 4, 4, 0))));
	return n;
}

unsigned int nftdp_dp_defrag_out(struct nftdp_dp_worker *w, unsigned int idx, uint16_t tx_port,
				 struct rte_mbuf **out, unsigned int cap)
{
	struct nftdp_dp_meta *mt = &w->meta[idx];
	struct rte_mbuf *big = w->mb[idx];
	const uint8_t *d = rte_pktmbuf_mtod(big, const uint8_t *);
	const uint8_t *ip = d + mt->ip_off;
	uint32_t ip_len = mt->ip_len, mtu = nftdp_dp_defrag_mtu(w, tx_port), eff, hl, fh = 0;
	uint32_t ofs = 0, id = mt->frag_id;
	bool v4 = (ip[0] >> 4) == 4, df_bit = v4 && (ip[6] & 0x40), fast;
	uint16_t len[NFTDP_DP_FRAG_VIEWS];
	uint8_t hdr_later[60];
	unsigned int n;

	w->mb[idx] = NULL;
	if (cap > NFTDP_DP_FRAG_VIEWS)
		cap = NFTDP_DP_FRAG_VIEWS;
	if (v4) {
		hl = (ip[0] & 15) * 4u;
		if (df_bit && mt->frag_max > mtu)
			goto too_big;
		eff = mt->frag_max < mtu ? mt->frag_max : mtu;
		memcpy(hdr_later, ip, hl);
		nftdp_dp_ip_options_fragment(hdr_later, hl);
	} else {
		hl = 40;
		fh = 8;
		if (mt->frag_max > mtu)
			goto too_big;
		if (ip_len <= mt->frag_max) {
			fh = 0; /* ip6_finish_output: no bigger than received, sent whole */
			eff = ip_len;
		} else {
			/* don't send fragments larger than what we received */
			eff = mt->frag_max < IPV6_MIN_MTU ? IPV6_MIN_MTU : mt->frag_max;
		}
	}
	if (eff < hl + fh + 8)
		goto too_big;
	if (fh == 0 && !v4) {
		n = 1;
		len[0] = (uint16_t)(ip_len - hl);
		fast = false;
	} else {
		n = nftdp_dp_frag_plan(w->defrag->geo[idx], w->defrag->n_geo[idx], ip_len - hl,
				       eff - hl - fh, len, cap, &fast);
	}
	if (n == 0)
		goto too_big;
	/* the fast path writes MF and the offset only: DF goes */
	if (fast)
		df_bit = false;
	for (unsigned int k = 0; k < n; k++) {
		uint32_t plen = len[k], flen = mt->ip_off + hl + fh + plen;
		bool more = k + 1 < n;
		struct rte_mbuf *f = rte_pktmbuf_alloc(w->pool);
		uint8_t *o, *fip;

		if (f == NULL || flen > rte_pktmbuf_tailroom(f)) {
			rte_pktmbuf_free(f);
			rte_pktmbuf_free_bulk(out, k);
			rte_pktmbuf_free(big);
			w->st.drop[NFTDP_DP_DROP_NO_MBUF]++;
			return 0;
		}
		o = (uint8_t *)rte_pktmbuf_append(f, (uint16_t)flen);
		memcpy(o, d, mt->ip_off);
		fip = o + mt->ip_off;
		memcpy(fip, v4 && ofs ? hdr_later : ip, hl);
		memcpy(fip + hl + fh, ip + hl + ofs, plen);
		if (v4) {
			nftdp_wr16(fip + 2, (uint16_t)(hl + plen));
			nftdp_wr16(fip + 6, (uint16_t)((ofs >> 3) | (df_bit ? 0x4000 : 0) |
						       (more ? 0x2000 : 0)));
			ip4_csum(fip, hl);
		} else if (fh) {
			nftdp_wr16(fip + 4, (uint16_t)(fh + plen));
			fip[6] = IPPROTO_FRAGMENT;
			fip[40] = ip[6]; /* the datagram's first header follows */
			fip[41] = 0;
			nftdp_wr16(fip + 42, (uint16_t)(ofs | (more ? 1 : 0)));
			nftdp_wr32(fip + 44, id);
		}
		out[k] = f;
		ofs += plen;
	}
	rte_pktmbuf_free(big);
	return n;
too_big:
	/* wire mode has no ICMP of its own here (--router sent it before the
	 * forward hook) */
	rte_pktmbuf_free(big);
	w->st.drop[NFTDP_DP_DROP_FRAG_TOOBIG]++;
	return 0;
}
