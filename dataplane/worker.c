/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Workers: the burst loop. Each worker polls its rx queues; per burst it
 * loads the current generation once, runs the hook pipeline, transmits, and
 * reports a quiescent state (vm/generation.c's reader protocol). With conntrack
 * on and several workers, packets whose connection another worker's shard
 * owns go to that worker first (steer.c), and each poll runs what the other
 * workers steered here. No locks,
 * syscalls or allocations per packet: the clock is rte_rdtsc mapped onto
 * CLOCK_MONOTONIC / CLOCK_REALTIME at start, refreshed once per burst.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "dataplane_priv.h"

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int nftdp_dp_workers_init(struct nftdp_dp *dp, const unsigned int *lcores)
{
	struct tm tm;
	time_t now = time(NULL);
	int32_t tz;
	uint64_t seed = (uint64_t)now ^ clock_ns(CLOCK_MONOTONIC);
	int ret;

	localtime_r(&now, &tm);
	tz = (int32_t)(-tm.tm_gmtoff / 60);
	dp->w = rte_zmalloc("nftdp_workers", sizeof(*dp->w) * dp->n_workers, RTE_CACHE_LINE_SIZE);
	if (dp->w == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_dp_worker *w = &dp->w[i];
		int socket;

		w->id = i;
		w->lcore = lcores[i];
		w->dp = dp;
		socket = (int)rte_lcore_to_socket_id(w->lcore);
		/* replies and dups come from the pool of the worker's socket,
		 * else any port's */
		for (uint16_t p = 0; p < dp->n_ports; p++) {
			if (dp->port[p].pool && (w->pool == NULL || dp->port[p].socket == socket))
				w->pool = dp->port[p].pool;
		}
		w->ctx.worker = i;
		w->ctx.state = dp->state;
		w->ctx.tz_minuteswest = tz;
		w->ctx.prng = splitmix64(&seed) | 1;
		/* a worker's own verdict cache: no sharing, no locks (NULL: off) */
		if (dp->flow_cache) {
			ret = nftdp_vm_flowcache_create(dp->flow_cache, &w->ctx.flow);
			if (ret < 0)
				return ret;
			nftdp_vm_flowcache_verify(w->ctx.flow, dp->flow_verify);
		}
		for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
			w->txq[p] = NFTDP_DP_NO_PORT;
	}
	ret = nftdp_dp_queues_assign(dp);
	return ret < 0 ? ret : nftdp_dp_steer_init(dp);
}

void nftdp_dp_workers_free(struct nftdp_dp *dp)
{
	if (dp->w == NULL)
		return;
	nftdp_dp_steer_free(dp);
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
			rte_ring_free(dp->w[i].handoff[p]);
		if (dp->w[i].ctx.flow)
			nftdp_vm_flowcache_destroy(dp->w[i].ctx.flow);
	}
	rte_free(dp->w);
	dp->w = NULL;
}

static inline void clock_update(struct nftdp_dp_worker *w)
{
	uint64_t d = rte_rdtsc() - w->tsc0;
	uint64_t ns = (uint64_t)(((unsigned __int128)d * w->ns_mult) >> 32);

	w->ctx.now_ns = w->mono0_ns + ns;
	w->ctx.now_ms = w->ctx.now_ns / 1000000ull;
	w->ctx.now_real_ns = w->real0_ns + ns;
}

void nftdp_dp_worker_begin(struct nftdp_dp_worker *w)
{
	w->ns_mult = (uint64_t)(((unsigned __int128)1000000000ull << 32) / rte_get_tsc_hz());
	w->ms_tsc = rte_get_tsc_hz() / 1000;
	w->tsc0 = rte_rdtsc();
	w->mono0_ns = clock_ns(CLOCK_MONOTONIC);
	w->real0_ns = clock_ns(CLOCK_REALTIME);
	w->last_busy_tsc = w->tsc0;
	w->last_poll_tsc = w->tsc0;
	clock_update(w);
	nftdp_vm_gen_reader_register(w->dp->dom, w->id);
}

void nftdp_dp_worker_end(struct nftdp_dp_worker *w)
{
	nftdp_dp_tx_flush(w);
	nftdp_vm_gen_reader_unregister(w->dp->dom, w->id);
	w->done = true;
}

/* One rx burst of one port through the pipeline, which keeps the kernel's
 * one-packet-at-a-time order where it matters (pipeline.c, one_at_a_time). */
static void pipeline_split(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen, uint16_t port,
			   struct rte_mbuf **m, unsigned int n)
{
	/* an rx burst may be longer than the pipeline's views */
	for (unsigned int i = 0; i < n; i += NFTDP_VM_BURST_MAX)
		nftdp_dp_pipeline_burst(w, gen, port, m + i,
					RTE_MIN(n - i, (unsigned int)NFTDP_VM_BURST_MAX));
}

/* Run packets other workers steered to us: bursts of one rx port each. */
static unsigned int steered_in(struct nftdp_dp_worker *w, const struct nftdp_vm_gen *gen,
			       struct rte_mbuf **m, unsigned int n)
{
	for (unsigned int i = 0; i < n;) {
		unsigned int j = i + 1;

		while (j < n && m[j]->port == m[i]->port)
			j++;
		pipeline_split(w, gen, m[i]->port, m + i, j - i);
		i = j;
	}
	w->st.steered_in += n;
	return n;
}

/*
 * Offline replay of several captures (dp->rx_merge, one worker): each rx
 * queue keeps a look-ahead of packets read from its capture, and the
 * packets go through the pipeline in capture-time order across ports
 * (ties: the earlier queue first), each run of one port's packets as one
 * burst of at most dp->burst. A queue that reads nothing is at the end of
 * its capture. One worker only, so the look-ahead is file-local.
 */
#define MERGE_LOOKAHEAD 32

static struct {
	struct rte_mbuf *m[NFTDP_DP_MAX_RXQ][MERGE_LOOKAHEAD];
	uint16_t head[NFTDP_DP_MAX_RXQ], n[NFTDP_DP_MAX_RXQ];
	uint32_t taken[NFTDP_DP_MAX_RXQ]; /* packets of the queue so far */
} la;

static inline uint64_t rx_time(const struct nftdp_dp *dp, const struct rte_mbuf *m)
{
	static bool said;

	if (!(m->ol_flags & dp->ts_flag)) {
		if (!said) /* once: the order between ports is lost from here */
			fprintf(stderr,
				"nftdp: port %u gives no capture times: the capture-time order "
				"between ports is not kept\n",
				m->port);
		said = true;
		return 0;
	}
	return *RTE_MBUF_DYNFIELD(m, dp->ts_off, const rte_mbuf_timestamp_t *);
}

static void merged_run(struct nftdp_dp_worker *w, uint16_t port, struct rte_mbuf **m,
		       unsigned int n)
{
	const struct nftdp_vm_gen *gen;

	clock_update(w);
	gen = nftdp_vm_gen_acquire(w->dp->dom);
	pipeline_split(w, gen, port, m, n);
	nftdp_vm_gen_quiesce(w->dp->dom, w->id);
	w->st.bursts++;
}

static unsigned int rx_merged(struct nftdp_dp_worker *w)
{
	struct nftdp_dp *dp = w->dp;
	struct rte_mbuf *seg[NFTDP_DP_RX_BURST_MAX];
	bool end[NFTDP_DP_MAX_RXQ] = {false};
	unsigned int total = 0, n_seg = 0;
	uint16_t seg_port = 0;

	/* a bounded amount per poll: commits and the exit check go on */
	while (total < NFTDP_DP_RX_BURST_MAX) {
		unsigned int best = UINT32_MAX;
		uint64_t best_t = 0;
		struct rte_mbuf *m;
		uint16_t port;

		for (unsigned int q = 0; q < w->n_rxq; q++) {
			if (la.head[q] == la.n[q] && !end[q]) {
				la.head[q] = 0;
				la.n[q] = rte_eth_rx_burst(w->rxq[q].port, w->rxq[q].queue, la.m[q],
							   MERGE_LOOKAHEAD);
				end[q] = la.n[q] == 0;
			}
			if (la.head[q] < la.n[q]) {
				uint64_t t = rx_time(dp, la.m[q][la.head[q]]);

				if (best == UINT32_MAX || t < best_t) {
					best = q;
					best_t = t;
				}
			}
		}
		if (best == UINT32_MAX)
			break;
		m = la.m[best][la.head[best]++];
		port = w->rxq[best].port;
		/* a pcapng capture of several interfaces: each packet arrives
		 * on its interface's port (port.c, pcapng_map) */
		if (dp->port[port].replay_port) {
			if (la.taken[best] < dp->port[port].replay_n)
				port = dp->port[port].replay_port[la.taken[best]];
			m->port = port;
		}
		la.taken[best]++;
		if (n_seg && (port != seg_port || n_seg == dp->burst)) {
			merged_run(w, seg_port, seg, n_seg);
			n_seg = 0;
		}
		seg_port = port;
		seg[n_seg++] = m;
		total++;
	}
	if (n_seg)
		merged_run(w, seg_port, seg, n_seg);
	return total;
}

unsigned int nftdp_dp_worker_poll(struct nftdp_dp_worker *w)
{
	struct nftdp_dp *dp = w->dp;
	struct rte_mbuf *m[NFTDP_DP_RX_BURST_MAX];
	unsigned int total = 0;
	uint64_t now;

	if (dp->rx_merge)
		total = rx_merged(w);
	/* --route --host-ports: next hops the host resolved since (unres.c),
	 * before this poll's packets to them */
	if (w->n_unres)
		nftdp_dp_unres_flush(w);
	for (unsigned int q = 0; !dp->rx_merge && q < w->n_rxq; q++) {
		const struct nftdp_dp_rxq *rq = &w->rxq[q];
		const struct nftdp_vm_gen *gen;
		uint16_t n;
		unsigned int k;

		/* an outgoing steering ring without room for a burst: the rx
		 * queues keep their packets until its owner has drained it, so
		 * steer_burst never finds a ring full */
		if (dp->n_workers > 1 && !nftdp_dp_steer_room(w)) {
			w->st.steer_wait++;
			w->last_busy_tsc = rte_rdtsc();
			break;
		}
		n = rte_eth_rx_burst(rq->port, rq->queue, m, (uint16_t)dp->burst);
		if (n == 0)
			continue;
		total += n;
		clock_update(w);
		/* one generation pointer for the whole burst */
		gen = nftdp_vm_gen_acquire(dp->dom);
		if (nftdp_dp_steer_active(dp, gen)) {
			/* steering works on at most NFTDP_VM_BURST_MAX at a time */
			for (unsigned int i = 0; i < n; i += NFTDP_VM_BURST_MAX) {
				unsigned int c = RTE_MIN(n - i, (unsigned int)NFTDP_VM_BURST_MAX);

				k = nftdp_dp_steer_burst(w, rq->port, m + i, c);
				if (k)
					pipeline_split(w, gen, rq->port, m + i, k);
			}
		} else {
			pipeline_split(w, gen, rq->port, m, n);
		}
		nftdp_vm_gen_quiesce(dp->dom, w->id);
		w->st.bursts++;
	}
	/* what other workers received for our shard */
	for (unsigned int f = 0; f < dp->n_workers; f++) {
		const struct nftdp_vm_gen *gen;
		unsigned int n;

		if (w->steer_in[f] == NULL)
			continue;
		n = rte_ring_sc_dequeue_burst(w->steer_in[f], (void **)m, dp->burst, NULL);
		if (n == 0)
			continue;
		total += n;
		clock_update(w);
		gen = nftdp_vm_gen_acquire(dp->dom);
		steered_in(w, gen, m, n);
		nftdp_vm_gen_quiesce(dp->dom, w->id);
		w->st.bursts++;
	}
	/* transmit for workers without a tx queue on ports we own */
	for (unsigned int r = 0; r < w->n_drain; r++) {
		struct rte_mbuf *h[NFTDP_VM_BURST_MAX];
		unsigned int n =
		    rte_ring_sc_dequeue_burst(w->drain[r], (void **)h, NFTDP_VM_BURST_MAX, NULL);

		for (unsigned int i = 0; i < n; i++)
			nftdp_dp_tx_stage(w, w->drain_port[r], h[i]);
	}
	nftdp_dp_tx_flush(w);
	nftdp_dp_ct_gc(w);
	now = rte_rdtsc();
	if (total)
		__atomic_store_n(&w->last_busy_tsc, now, __ATOMIC_RELEASE);
	else
		nftdp_vm_gen_quiesce(dp->dom, w->id); /* idle: let commits finish */
	__atomic_store_n(&w->last_poll_tsc, now, __ATOMIC_RELEASE);
	/* --idle-sleep: after a millisecond without a packet, give the core
	 * away between polls (quiescent already: a commit does not wait on
	 * the sleep); traffic never pays it, a burst after a pause at most
	 * one sleep */
	if (!total && dp->idle_sleep_us && now - w->last_busy_tsc > w->ms_tsc)
		rte_delay_us_sleep(dp->idle_sleep_us);
	return total;
}

void nftdp_dp_workers_drain(struct nftdp_dp *dp)
{
	/* packets steered to a worker that stopped before it saw them: the
	 * main thread runs them on that worker's shard (none is running, and
	 * no generation is reclaimed meanwhile); what they send goes into the
	 * hand-off rings drained below */
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_dp_worker *w = &dp->w[i];

		for (unsigned int f = 0; f < dp->n_workers; f++) {
			struct rte_mbuf *m[NFTDP_VM_BURST_MAX];
			unsigned int n;

			while (w->steer_in[f] &&
			       (n = rte_ring_sc_dequeue_burst(w->steer_in[f], (void **)m,
							      NFTDP_VM_BURST_MAX, NULL)) > 0)
				steered_in(w, nftdp_vm_gen_acquire(dp->dom), m, n);
		}
		nftdp_dp_tx_flush(w);
	}
	/* every worker has stopped and flushed into its hand-off rings; the
	 * owners may have stopped first, so the main thread sends the rest on
	 * their queues (no worker uses them any more) */
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_dp_worker *w = &dp->w[i];

		for (unsigned int r = 0; r < w->n_drain; r++) {
			struct rte_mbuf *h[NFTDP_VM_BURST_MAX];
			unsigned int n;

			while ((n = rte_ring_sc_dequeue_burst(w->drain[r], (void **)h,
							      NFTDP_VM_BURST_MAX, NULL)) > 0)
				for (unsigned int k = 0; k < n; k++)
					nftdp_dp_tx_stage(w, w->drain_port[r], h[k]);
		}
		nftdp_dp_tx_flush(w);
	}
}

int nftdp_dp_worker_main(void *arg)
{
	struct nftdp_dp_worker *w = arg;

	nftdp_dp_worker_begin(w);
	while (!w->dp->stop)
		nftdp_dp_worker_poll(w);
	nftdp_dp_worker_end(w);
	return 0;
}
