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
#include <stdio.h>
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
	conf.rxmode.offloads |= info.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_TCP_CKSUM |
							 RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
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

void nftdp_dp_replay_order(struct nftdp_dp *dp)
{
	unsigned int files = 0, stamped = 0;

	for (uint16_t p = 0; p < dp->n_ports; p++) {
		files += dp->port[p].used && dp->port[p].rx_file;
		stamped += dp->port[p].used && dp->port[p].rx_stamped;
	}
	dp->rx_merge = false;
	if (files < 2)
		return; /* one capture is read in its own order */
	if (stamped == files &&
	    rte_mbuf_dyn_rx_timestamp_register(&dp->ts_off, &dp->ts_flag) == 0) {
		if (dp->n_workers == 1) {
			dp->rx_merge = true;
			printf("nftdp: offline replay of %u captures in capture-time order\n", files);
			return;
		}
		printf("nftdp: offline replay of %u captures with %u workers: the capture-time "
		       "order between ports is not kept (it is with --workers 1)\n",
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
