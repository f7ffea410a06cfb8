/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software steering to the owning worker. Each worker owns one conntrack
 * shard, and a connection belongs to the shard rss % n_workers, where rss is
 * the symmetric Toeplitz hash a NIC computes for it (nftdp_ct_pkt_rss; for
 * an ICMP error, the quoted packet's). Ports with RSS have their RETA set so
 * that queue q, polled by worker q, gets exactly those hashes; ports without
 * (vdevs, single-queue ports) deliver anything anywhere, so the receiving
 * worker hashes each packet and passes those of other shards to their owner
 * through one single-producer single-consumer rte_ring per (from, to) pair.
 * The owner drains its rings every poll and runs what it finds through the
 * pipeline as bursts received on mbuf->port (worker.c).
 *
 * Only while conntrack is active (a rule needs it) and there are several
 * workers. A steered packet is never steered again. Before polling its rx
 * queues a worker checks that each of its outgoing rings has room for a
 * burst, otherwise it leaves the packets in the NIC queue for this poll
 * (backpressure instead of a drop; the rings stay SP/SC, no one waits).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane_priv.h"
#include "nftdp_conntrack.h"

#define STEER_RING_SIZE 1024 /* entries per (from, to) ring; > NFTDP_VM_BURST_MAX */
#define RETA_MAX 2048	     /* the largest redirection table we program (ice) */
#define FRAG_SLOTS 1024	     /* datagrams in flight whose fragments we steer, per worker */

/*
 * Fragments: only the first one has ports, yet the datagram must be
 * reassembled on the worker owning its connection (defrag.c runs before
 * conntrack). The receiving worker remembers the first fragment's hash by
 * (addresses, protocol, id) and steers the later fragments of that datagram
 * with it; a fragment that comes before its first one goes by its
 * addresses. All fragments of a datagram reach one receiving worker: one
 * queue on a port without RSS, or the NIC's address-only fragment hash.
 * Direct-mapped, one writer (the receiving worker), no expiry needed: a
 * slot is only ever matched by the same 4-tuple and id.
 */
struct frag_slot {
	uint8_t src[16], dst[16];
	uint32_t id;
	uint32_t rss;
	uint8_t proto;
	bool v4, used;
};

struct frag_table {
	struct frag_slot slot[FRAG_SLOTS];
};

/* per receiving worker, written by it alone */
static struct frag_table *frag_tab[NFTDP_DP_MAX_WORKERS];

int nftdp_dp_steer_init(struct nftdp_dp *dp)
{
	if (dp->n_workers < 2)
		return 0;
	for (unsigned int f = 0; f < dp->n_workers; f++) {
		frag_tab[f] = rte_zmalloc_socket("nftdp_steer_frag", sizeof(struct frag_table),
						 RTE_CACHE_LINE_SIZE,
						 (int)rte_lcore_to_socket_id(dp->w[f].lcore));
		if (frag_tab[f] == NULL)
			return -ENOMEM;
		for (unsigned int t = 0; t < dp->n_workers; t++) {
			struct nftdp_dp_worker *to = &dp->w[t];
			char name[RTE_RING_NAMESIZE];
			ssize_t size = rte_ring_get_memsize(STEER_RING_SIZE);
			struct rte_ring *r;
			int ret;

			if (f == t)
				continue;
			if (size < 0)
				return (int)size;
			/* rte_ring_init on our own memory: no memzone per ring (64
			 * workers would need 4032 of them) */
			r = rte_zmalloc_socket("nftdp_steer", (size_t)size, RTE_CACHE_LINE_SIZE,
					       (int)rte_lcore_to_socket_id(to->lcore));
			if (r == NULL)
				return -ENOMEM;
			snprintf(name, sizeof(name), "nftdp_st_%u_%u", f % 64, t % 64);
			ret =
			    rte_ring_init(r, name, STEER_RING_SIZE, RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (ret < 0) {
				rte_free(r);
				return ret;
			}
			dp->w[f].steer_out[t] = r;
			to->steer_in[f] = r;
		}
	}
	return 0;
}

void nftdp_dp_steer_free(struct nftdp_dp *dp)
{
	for (unsigned int f = 0; dp->w && f < dp->n_workers; f++) {
		rte_free(frag_tab[f]);
		frag_tab[f] = NULL;
		for (unsigned int t = 0; t < dp->n_workers; t++) {
			struct rte_ring *r = dp->w[f].steer_out[t];
			void *m[NFTDP_VM_BURST_MAX];
			unsigned int n;

			if (r == NULL)
				continue;
			while ((n = rte_ring_sc_dequeue_burst(r, m, NFTDP_VM_BURST_MAX, NULL)) > 0)
				rte_pktmbuf_free_bulk((struct rte_mbuf **)m, n);
			rte_free(r);
			dp->w[f].steer_out[t] = NULL;
			dp->w[t].steer_in[f] = NULL;
		}
	}
}

bool nftdp_dp_steer_active(const struct nftdp_dp *dp, const struct nftdp_vm_gen *gen)
{
	return dp->n_workers > 1 && gen &&
	       (nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV4) || nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV6));
}

bool nftdp_dp_steer_room(const struct nftdp_dp_worker *w)
{
	const struct nftdp_dp *dp = w->dp;

	for (unsigned int t = 0; t < dp->n_workers; t++)
		if (w->steer_out[t] && rte_ring_free_count(w->steer_out[t]) < dp->burst)
			return false;
	return true;
}

/* The fragment slot of a datagram, and whether it holds that datagram. */
static struct frag_slot *frag_slot(struct frag_table *ft, const uint8_t *ip, bool v4, uint8_t proto,
				   uint32_t id, bool *match)
{
	uint32_t a = 0, b = 0, h;
	const uint8_t *src = ip + (v4 ? 12 : 8), *dst = ip + (v4 ? 16 : 24);
	unsigned int alen = v4 ? 4 : 16;
	struct frag_slot *fs;

	for (unsigned int i = 0; i < alen; i += 4) {
		uint32_t x, y;

		memcpy(&x, src + i, 4);
		memcpy(&y, dst + i, 4);
		a = a * 31 + x;
		b = b * 31 + y;
	}
	h = (a * 0x9e3779b1u) ^ (b * 0x85ebca6bu) ^ (id * 0xc2b2ae35u) ^ proto;
	fs = &ft->slot[(h ^ (h >> 16)) % FRAG_SLOTS];
	*match = fs->used && fs->v4 == v4 && fs->proto == proto && fs->id == id &&
		 memcmp(fs->src, src, alen) == 0 && memcmp(fs->dst, dst, alen) == 0;
	return fs;
}

/* A fragment's place in its datagram (defrag.c's notion of a fragment:
 * IPv4 MF or offset; IPv6 a fragment header right after the fixed one,
 * not an atomic fragment). false: not a fragment. */
static bool frag_info(const uint8_t *ip, uint32_t avail, bool v4, uint8_t *proto, uint32_t *id,
		      bool *first)
{
	if (v4) {
		uint16_t fo;

		if (avail < 20)
			return false;
		fo = nftdp_rd16(ip + 6);
		if ((fo & 0x3fff) == 0)
			return false;
		*proto = ip[9];
		*id = nftdp_rd16(ip + 4);
		*first = (fo & 0x1fff) == 0;
		return true;
	}
	if (avail < 48 || ip[6] != IPPROTO_FRAGMENT || (nftdp_rd16(ip + 42) & 0xfff9) == 0)
		return false;
	*proto = ip[40];
	*id = nftdp_ld32(ip + 44);
	*first = (nftdp_rd16(ip + 42) & 0xfff8) == 0;
	return true;
}

/* A datagram's addresses-only hash: what a NIC gives a fragment. */
static uint32_t addr_rss(const uint8_t *ip, bool v4)
{
	struct nftdp_ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3proto = v4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
	if (v4) {
		memcpy(&t.src.ip, ip + 12, 4);
		memcpy(&t.dst.ip, ip + 16, 4);
	} else {
		memcpy(t.src.ip6, ip + 8, 16);
		memcpy(t.dst.ip6, ip + 24, 16);
	}
	return nftdp_ct_tuple_rss(&t); /* l4proto 0: addresses only */
}

/*
 * The hash a NIC would steer the IP packet at d + l2->ip_off by, computed
 * in software; for fragments the hash of their datagram's connection (see
 * frag_table). false: conntrack cannot track it (no L4 header): every
 * shard calls it invalid, it stays where it is.
 */
static bool sw_rss(struct frag_table *ft, const uint8_t *d, uint32_t len,
		   const struct nftdp_dp_l2 *l2, uint32_t *rss)
{
	bool v4 = l2->ip_proto == NFTDP_DP_ETH_P_IP, first = false, match;
	const uint8_t *ip = d + l2->ip_off;
	uint32_t avail = len - l2->ip_off, id = 0;
	struct nftdp_vm_pkt v;
	struct frag_slot *fs;
	uint8_t proto = 0;
	bool frag = frag_info(ip, avail, v4, &proto, &id, &first);

	if (frag && !first) {
		fs = frag_slot(ft, ip, v4, proto, id, &match);
		*rss = match ? fs->rss : addr_rss(ip, v4);
		return true;
	}
	nftdp_vm_pkt_init(&v, (uint8_t *)(uintptr_t)d,
			  l2->ip_off + nftdp_dp_ip_len_clip(ip, avail, v4), 0, l2->ip_off);
	v.protocol = htons(l2->ip_proto);
	nftdp_vm_pkt_parse_ip(&v);
	if (v.nfproto != NFPROTO_IPV4 && v.nfproto != NFPROTO_IPV6)
		return false;
	if (!nftdp_ct_pkt_rss(&v, rss)) {
		if (!frag)
			return false;
		*rss = addr_rss(ip, v4); /* a first fragment without its ports */
	}
	if (frag) {
		/* the first fragment: its datagram's later fragments follow it */
		fs = frag_slot(ft, ip, v4, proto, id, &match);
		memcpy(fs->src, ip + (v4 ? 12 : 8), v4 ? 4 : 16);
		memcpy(fs->dst, ip + (v4 ? 16 : 24), v4 ? 4 : 16);
		fs->id = id;
		fs->proto = proto;
		fs->v4 = v4;
		fs->rss = *rss;
		fs->used = true;
	}
	return true;
}

/*
 * Whether the NIC's own hash can be trusted for this packet: not for what
 * may be an ICMP error (hashed by its outer addresses, it belongs to the
 * quoted flow), nor for IPv6 with extension headers (which may hide one).
 */
static bool nic_hash_fits(const uint8_t *ip, uint32_t avail, bool v4)
{
	if (v4) /* not ICMP, not a fragment */
		return avail >= 20 && ip[9] != IPPROTO_ICMP && ((ip[6] & 0x3f) | ip[7]) == 0;
	return avail >= 40 &&
	       (ip[6] == IPPROTO_TCP || ip[6] == IPPROTO_UDP || ip[6] == IPPROTO_SCTP);
}

/* The worker whose shard owns the packet's connection. */
static unsigned int owner_of(const struct nftdp_dp *dp, const struct nftdp_dp_port *pt,
			     const struct rte_mbuf *m, unsigned int self)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), rss;
	struct nftdp_dp_l2 l2;

	if (!nftdp_dp_parse_l2(d, len, &l2) ||
	    (l2.ip_proto != NFTDP_DP_ETH_P_IP && l2.ip_proto != NFTDP_DP_ETH_P_IPV6))
		return self; /* not tracked: stays */
	if (pt->rss && (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) &&
	    nic_hash_fits(d + l2.ip_off, len - l2.ip_off, l2.ip_proto == NFTDP_DP_ETH_P_IP))
		return m->hash.rss % dp->n_workers;
	if (!sw_rss(frag_tab[self], d, len, &l2, &rss))
		return self;
	return rss % dp->n_workers;
}

unsigned int nftdp_dp_steer_burst(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf **m,
				  unsigned int n)
{
	const struct nftdp_dp *dp = w->dp;
	const struct nftdp_dp_port *pt = &dp->port[port];
	uint8_t own[NFTDP_VM_BURST_MAX];
	uint64_t away = 0;
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		own[i] = (uint8_t)owner_of(dp, pt, m[i], w->id);
		if (own[i] != w->id)
			away |= 1ull << own[i];
	}
	if (away == 0)
		return n;
	/* one enqueue per owner, each owner's packets in arrival order */
	while (away) {
		unsigned int t = (unsigned int)__builtin_ctzll(away), c = 0, sent;
		struct rte_mbuf *out[NFTDP_VM_BURST_MAX];

		away &= away - 1;
		for (unsigned int i = 0; i < n; i++) {
			if (own[i] != t)
				continue;
			m[i]->port = port; /* the owner runs it as received there */
			out[c++] = m[i];
		}
		sent = rte_ring_sp_enqueue_burst(w->steer_out[t], (void **)out, c, NULL);
		w->st.steered += sent;
		if (sent < c) {
			/* cannot happen after nftdp_dp_steer_room(); counted as
			 * received and dropped before the rules */
			w->st.steer_full += c - sent;
			w->st.rx[port] += c - sent;
			rte_pktmbuf_free_bulk(out + sent, c - sent);
		}
	}
	for (unsigned int i = 0; i < n; i++)
		if (own[i] == w->id)
			m[k++] = m[i];
	return k;
}

/*
 * Whether the port hashes with the symmetric key we gave it: a driver that
 * kept its own key would split a flow's directions over two workers, so
 * its hash cannot be trusted (the software hash is used instead).
 */
static bool key_symmetric(uint16_t pid)
{
	uint8_t key[64];
	struct rte_eth_rss_conf rc = {.rss_key = key, .rss_key_len = sizeof(key)};

	if (rte_eth_dev_rss_hash_conf_get(pid, &rc) < 0)
		return true; /* cannot tell: trust what we configured */
	for (unsigned int i = 0; i < rc.rss_key_len && i < sizeof(key); i++)
		if (key[i] != (i % 2 ? 0x5a : 0x6d))
			return false;
	return true;
}

int nftdp_dp_reta_program(struct nftdp_dp *dp, uint16_t pid)
{
	struct nftdp_dp_port *pt = &dp->port[pid];
	struct rte_eth_rss_reta_entry64 reta[RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];
	struct rte_eth_dev_info info;
	int ret;

	if (!key_symmetric(pid)) {
		pt->rss = false;
		printf("nftdp: port %u: the driver did not take the symmetric RSS key: "
		       "workers steer by the software hash\n",
		       pid);
	}
	ret = rte_eth_dev_info_get(pid, &info);
	if (ret < 0)
		return ret;
	if (info.reta_size == 0 || info.reta_size > RETA_MAX ||
	    info.reta_size % RTE_ETH_RETA_GROUP_SIZE)
		return -ENOTSUP;
	memset(reta, 0, sizeof(reta));
	/* entry i to queue i % n_rxq: with n_rxq == n_workers and n_workers
	 * dividing the table, hash h lands on queue h % n_workers, the worker
	 * owning h's shard; otherwise the worker re-steers (steer_burst) */
	for (unsigned int i = 0; i < info.reta_size; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
		    (uint16_t)(i % pt->n_rxq);
	}
	ret = rte_eth_dev_rss_reta_update(pid, reta, info.reta_size);
	if (ret < 0)
		return ret;
	pt->reta_size = info.reta_size;
	return 0;
}
