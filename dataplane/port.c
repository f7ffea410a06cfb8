/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports: configure every DPDK port (PCI or vdev) with one rx and one tx
 * queue per worker where it has that many, RSS with a symmetric Toeplitz
 * key where it supports RSS, promiscuous mode, --mtu, NUMA-local mempools;
 * then map queues onto workers. A port with fewer queues than workers gets
 * its rx queues spread round-robin, and its tx queues owned by the first
 * workers: the others hand their packets for it to the owner through an
 * SP/SC ring, so no tx queue is ever shared (no locks). The RETA of an RSS
 * port sends hash h to queue h % n_rxq (steer.c), the queue worker
 * h % n_workers polls when the sizes agree.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

#include "dataplane_priv.h"

#define NB_RXD 1024
#define NB_TXD 1024
#define POOL_CACHE 256

/* 0x6d5a repeated: Toeplitz hashing gives the same value for both
 * directions of a flow (Woo and Park, "Scalable TCP Session Monitoring
 * with Symmetric Receive-side Scaling") */
static uint8_t sym_key[64];

static struct rte_mempool *pool_for_socket(struct nftdp_dp *dp, int socket, unsigned int n_mbufs,
					   uint16_t data_room)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	snprintf(name, sizeof(name), "nftdp_mbuf_s%d", socket < 0 ? 0 : socket);
	mp = rte_mempool_lookup(name);
	if (mp)
		return mp;
	(void)dp;
	mp = rte_pktmbuf_pool_create(name, n_mbufs, POOL_CACHE, 0, data_room, socket);
	if (mp == NULL && socket != SOCKET_ID_ANY) /* no memory on that node */
		mp =
		    rte_pktmbuf_pool_create(name, n_mbufs, POOL_CACHE, 0, data_room, SOCKET_ID_ANY);
	return mp;
}

static int port_init(struct nftdp_dp *dp, uint16_t pid)
{
	struct nftdp_dp_port *pt = &dp->port[pid];
	struct rte_eth_conf conf = {0};
	struct rte_eth_dev_info info;
	struct rte_eth_link link;
	char link_str[RTE_ETH_LINK_MAX_STR_LEN];
	uint16_t nrxd = NB_RXD, ntxd = NB_TXD;
	unsigned int n_mbufs;
	uint16_t room;
	int ret;

	ret = rte_eth_dev_info_get(pid, &info);
	if (ret < 0)
		return ret;
	pt->n_rxq = (uint16_t)RTE_MIN(dp->n_workers, info.max_rx_queues);
	pt->n_txq = (uint16_t)RTE_MIN(dp->n_workers, info.max_tx_queues);
	if (pt->n_rxq == 0 || pt->n_txq == 0)
		return -ENOTSUP;
	pt->socket = rte_eth_dev_socket_id(pid);
	if (pt->n_rxq > 1 && info.flow_type_rss_offloads) {
		memset(sym_key, 0, sizeof(sym_key));
		for (unsigned int i = 0; i < sizeof(sym_key); i += 2) {
			sym_key[i] = 0x6d;
			sym_key[i + 1] = 0x5a;
		}
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = sym_key;
		conf.rx_adv_conf.rss_conf.rss_key_len =
		    info.hash_key_size && info.hash_key_size <= sizeof(sym_key) ? info.hash_key_size
										: 40;
		conf.rx_adv_conf.rss_conf.rss_hf =
		    (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_SCTP) &
		    info.flow_type_rss_offloads;
		pt->rss = conf.rx_adv_conf.rss_conf.rss_hf != 0;
		if (!pt->rss)
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
		/* the hash in each mbuf lets a worker check it owns the flow */
		else if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
	}
	/* a port that checks L4 checksums spares conntrack the work
	 * (CHECKSUM_UNNECESSARY); ip_rcv checks the IPv4 header in any case */
	conf.rxmode.offloads |=
	    info.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_TCP_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
				    RTE_ETH_RX_OFFLOAD_SCTP_CKSUM);
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	/* offline replay: net_pcap puts each packet's capture time in the rx
	 * timestamp dynfield (with the offload on), which orders the captures
	 * of several ports (nftdp_dp_replay_order) */
	if (strcmp(info.driver_name, "net_pcap") == 0) {
		const struct rte_devargs *da = rte_dev_devargs(info.device);

		pt->rx_file = da && da->args && strstr(da->args, "rx_pcap=") != NULL;
		/* DPDK 22.11's net_pcap stamps every packet it reads from a
		 * file (microseconds) and advertises no offload; later ones
		 * stamp only with the offload on */
		if (pt->rx_file && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
		pt->rx_stamped = pt->rx_file;
	}
	if (dp->mtu)
		conf.rxmode.mtu = dp->mtu;
	ret = rte_eth_dev_configure(pid, pt->n_rxq, pt->n_txq, &conf);
	if (ret < 0)
		return ret;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nrxd, &ntxd);
	if (ret < 0)
		return ret;
	if (dp->mtu) {
		ret = rte_eth_dev_set_mtu(pid, dp->mtu);
		if (ret < 0 && ret != -ENOTSUP)
			return ret;
	}
	/* every descriptor, the tx staging of every worker, caches, replies */
	n_mbufs = (unsigned int)dp->n_ports * (nrxd * pt->n_rxq + ntxd * pt->n_txq) +
		  dp->n_workers * (NFTDP_DP_TXBUF * dp->n_ports + 2 * POOL_CACHE + 1024) + 8192;
	if (dp->n_mbufs) {
		/* fewer could starve rx of mbufs held in rings and caches */
		if (dp->n_mbufs < n_mbufs) {
			fprintf(stderr,
				"nftdp: port %u: --mbufs %u is below the %u mbufs its queues, "
				"the workers' tx staging and the pool caches need\n",
				pid, dp->n_mbufs, n_mbufs);
			return -EINVAL;
		}
		n_mbufs = dp->n_mbufs;
	}
	room = dp->mbuf_size ? dp->mbuf_size
			     : (uint16_t)RTE_MAX((unsigned int)RTE_MBUF_DEFAULT_BUF_SIZE,
						 NFTDP_DP_MTU_ROOM(dp->mtu));
	pt->pool = pool_for_socket(dp, pt->socket, n_mbufs, room);
	if (pt->pool == NULL)
		return -rte_errno;
	for (uint16_t q = 0; q < pt->n_rxq; q++) {
		ret = rte_eth_rx_queue_setup(pid, q, nrxd, pt->socket, NULL, pt->pool);
		if (ret < 0)
			return ret;
	}
	for (uint16_t q = 0; q < pt->n_txq; q++) {
		struct rte_eth_txconf txc = info.default_txconf;

		txc.offloads = conf.txmode.offloads;
		ret = rte_eth_tx_queue_setup(pid, q, ntxd, pt->socket, &txc);
		if (ret < 0)
			return ret;
	}
	ret = rte_eth_dev_start(pid);
	if (ret < 0)
		return ret;
	/* queue q (worker q's) gets the hashes of shard q: steer.c */
	if (pt->rss) {
		ret = nftdp_dp_reta_program(dp, pid);
		if (ret < 0)
			fprintf(stderr,
				"nftdp: port %u: RETA not set (%s): workers re-steer by the hash\n",
				pid, strerror(-ret));
		else if (pt->n_rxq != dp->n_workers || pt->reta_size % dp->n_workers)
			printf("nftdp: port %u: %u-entry RETA over %u queues for %u workers: "
			       "workers re-steer by the hash\n",
			       pid, pt->reta_size, pt->n_rxq, dp->n_workers);
	}
	ret = rte_eth_promiscuous_enable(pid);
	if (ret < 0 && ret != -ENOTSUP)
		fprintf(stderr, "nftdp: port %u: promiscuous mode: %s\n", pid, strerror(-ret));
	rte_eth_macaddr_get(pid, &pt->mac);
	rte_eth_link_get_nowait(pid, &link);
	if (link.link_status)
		snprintf(link_str, sizeof(link_str), "link up %u Mbps %s-duplex", link.link_speed,
			 link.link_duplex ? "full" : "half");
	else
		snprintf(link_str, sizeof(link_str), "link down");
	printf("nftdp: port %u %s (%s): %u rx / %u tx queues%s, socket %d, " RTE_ETHER_ADDR_PRT_FMT
	       ", %s\n",
	       pid, pt->name, info.driver_name, pt->n_rxq, pt->n_txq, pt->rss ? ", rss" : "",
	       pt->socket, RTE_ETHER_ADDR_BYTES(&pt->mac), link_str);
	return 0;
}

int nftdp_dp_ports_init(struct nftdp_dp *dp)
{
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		int ret;

		if (!dp->port[p].used)
			continue;
		ret = port_init(dp, p);
		if (ret < 0) {
			fprintf(stderr, "nftdp: port %u: %s\n", p, strerror(-ret));
			return ret;
		}
	}
	nftdp_dp_replay_order(dp);
	return 0;
}

/* pcapng (draft-ietf-opsawg-pcapng): block type, total length, body */
#define PCAPNG_SHB 0x0a0d0d0au
#define PCAPNG_IDB 1u
#define PCAPNG_PB 2u
#define PCAPNG_SPB 3u
#define PCAPNG_EPB 6u
#define PCAPNG_MAX_IF 256

static uint32_t ng32(const uint8_t *b, bool swap)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* the port an interface of a pcapng capture read on port self goes to: the
 * port named like it (--ifname), else the port of its number, else self */
static uint16_t if_port(const struct nftdp_dp *dp, uint16_t self, unsigned int idx,
			const char *name)
{
	for (uint16_t p = 0; name[0] && p < dp->n_ports; p++)
		if (dp->port[p].used && strcmp(dp->port[p].name, name) == 0)
			return p;
	if (idx < dp->n_ports && dp->port[idx].used)
		return (uint16_t)idx;
	return self;
}

/* The capture of port self, when it is a pcapng of interfaces that go to
 * more than one port: pt->replay_port[k] = the port of its k-th packet
 * (the order net_pcap's libpcap reads them in). */
static void pcapng_map(const struct nftdp_dp *dp, uint16_t self, struct nftdp_dp_port *pt,
		       const char *path)
{
	uint16_t ifp[PCAPNG_MAX_IF];
	unsigned int n_if = 0, cap = 0;
	uint16_t *map = NULL;
	uint32_t n = 0;
	bool swap = false, several = false, first = true;
	uint8_t h[12];
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return;
	while (fread(h, 1, 12, f) == 12) {
		uint32_t type, len;
		long body = ftell(f) - 4; /* after type and length */

		memcpy(&type, h, 4);
		if (type == PCAPNG_SHB) { /* a section: byte order, interfaces anew */
			uint32_t bom;

			memcpy(&bom, h + 8, 4);
			swap = bom != 0x1a2b3c4du;
			n_if = 0;
		} else if (first) {
			break; /* not pcapng */
		}
		first = false;
		type = ng32(h, swap);
		len = ng32(h + 4, swap);
		if (len < 12 || len % 4)
			break;
		if (type == PCAPNG_IDB && n_if < PCAPNG_MAX_IF) {
			/* linktype, reserved, snaplen, then options: if_name (2) */
			char name[64] = "";
			uint8_t o[4];

			if (fseek(f, body + 8, SEEK_SET) != 0)
				break;
			for (long at = body + 8; at + 4 <= body + (long)len - 12;) {
				uint16_t code, olen;

				if (fread(o, 1, 4, f) != 4)
					break;
				memcpy(&code, o, 2);
				memcpy(&olen, o + 2, 2);
				if (swap) {
					code = __builtin_bswap16(code);
					olen = __builtin_bswap16(olen);
				}
				if (code == 0)
					break;
				if (code == 2 && olen < sizeof(name)) {
					if (fread(name, 1, olen, f) != olen)
						break;
					name[olen] = '\0';
					break;
				}
				at += 4 + ((olen + 3u) & ~3u);
				if (fseek(f, at, SEEK_SET) != 0)
					break;
			}
			ifp[n_if] = if_port(dp, self, n_if, name);
			several |= ifp[n_if] != ifp[0];
			n_if++;
		} else if (type == PCAPNG_EPB || type == PCAPNG_PB || type == PCAPNG_SPB) {
			uint32_t idx = 0;

			if (type != PCAPNG_SPB) {
				idx = type == PCAPNG_EPB ? ng32(h + 8, swap)
							 : (swap ? (uint32_t)h[8] << 8 | h[9]
								 : (uint32_t)h[9] << 8 | h[8]);
			}
			if (n == cap) {
				uint16_t *m;

				cap = cap ? 2 * cap : 4096;
				m = realloc(map, cap * sizeof(*m));
				if (m == NULL)
					break;
				map = m;
			}
			map[n++] = idx < n_if ? ifp[idx] : self;
		}
		if (fseek(f, body - 8 + (long)len, SEEK_SET) != 0) /* the next block */
			break;
	}
	fclose(f);
	if (!several || n == 0) {
		free(map);
		return;
	}
	pt->replay_port = map;
	pt->replay_n = n;
	for (unsigned int i = 0; i < n_if; i++)
		printf("nftdp: port %u: %s interface %u -> port %u (%s)\n", self, path, i, ifp[i],
		       dp->port[ifp[i]].name);
}

void nftdp_dp_replay_order(struct nftdp_dp *dp)
{
	unsigned int files = 0, stamped = 0, mapped = 0;

	for (uint16_t p = 0; p < dp->n_ports; p++) {
		struct nftdp_dp_port *pt = &dp->port[p];
		struct rte_eth_dev_info info;
		const struct rte_devargs *da;
		const char *a;
		char path[PATH_MAX];

		if (!pt->used || !pt->rx_file || rte_eth_dev_info_get(p, &info) < 0)
			continue;
		da = rte_dev_devargs(info.device);
		a = da && da->args ? strstr(da->args, "rx_pcap=") : NULL;
		if (a == NULL)
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(a + 8, ","), a + 8);
		pcapng_map(dp, p, pt, path);
		mapped += pt->replay_port != NULL;
	}
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		files += dp->port[p].used && dp->port[p].rx_file;
		stamped += dp->port[p].used && dp->port[p].rx_stamped;
	}
	dp->rx_merge = false;
	if (files < 2 && mapped == 0)
		return; /* one capture is read in its own order */
	if (stamped == files &&
	    rte_mbuf_dyn_rx_timestamp_register(&dp->ts_off, &dp->ts_flag) == 0) {
		if (dp->n_workers == 1) {
			dp->rx_merge = true;
			printf("nftdp: offline replay of %u captures in capture-time order\n",
			       files);
			return;
		}
		printf("nftdp: offline replay of %u captures with %u workers: the capture-time "
		       "order between ports is not kept, and a pcapng's interfaces all arrive "
		       "on its port (both are with --workers 1)\n",
		       files, dp->n_workers);
		return;
	}
	printf("nftdp: offline replay of %u captures: a port gives no capture times, so the "
	       "capture-time order between ports is not kept\n",
	       files);
}

void nftdp_dp_ports_close(struct nftdp_dp *dp)
{
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		if (!dp->port[p].used)
			continue;
		/* stopping flushes what net_pcap buffered into its tx file */
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
		free(dp->port[p].replay_port);
		dp->port[p].replay_port = NULL;
	}
}

int nftdp_dp_queues_assign(struct nftdp_dp *dp)
{
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		const struct nftdp_dp_port *pt = &dp->port[p];

		if (!pt->used)
			continue;
		for (uint16_t q = 0; q < pt->n_rxq; q++) {
			/* spread starved ports' queues over different workers */
			unsigned int wi = pt->n_rxq < dp->n_workers ? (q + p) % dp->n_workers : q;
			struct nftdp_dp_worker *w = &dp->w[wi];

			if (w->n_rxq == NFTDP_DP_MAX_RXQ)
				return -ENOSPC;
			w->rxq[w->n_rxq].port = p;
			w->rxq[w->n_rxq++].queue = q;
		}
		for (unsigned int wi = 0; wi < dp->n_workers; wi++) {
			struct nftdp_dp_worker *w = &dp->w[wi], *owner;
			char name[RTE_RING_NAMESIZE];

			if (wi < pt->n_txq) {
				w->txq[p] = (uint16_t)wi;
				continue;
			}
			owner = &dp->w[wi % pt->n_txq];
			if (owner->n_drain == NFTDP_DP_MAX_WORKERS)
				return -ENOSPC;
			snprintf(name, sizeof(name), "nftdp_ho_%u_%u", wi, p);
			w->handoff[p] =
			    rte_ring_create(name, 4096, pt->socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (w->handoff[p] == NULL)
				return -rte_errno;
			owner->drain[owner->n_drain] = w->handoff[p];
			owner->drain_port[owner->n_drain++] = p;
		}
	}
	return 0;
}
