/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's live mode on DPDK ports: prebuilt frames are copied into
 * mbufs, stamped with a sequence number and the TSC, and sent on one port
 * at a rate; a sink on another (or the same) port counts what comes back
 * and measures latency from the stamps.
 *
 * With a worker lcore, the worker transmits and the main lcore receives;
 * with the main lcore alone, one loop does both and never blocks on a full
 * tx queue (a net_ring looped back in the same thread would deadlock).
 * TSC is invariant across cores and processes on the machines we use, so
 * stamps taken in one process are read in another (memif).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "gen_priv.h"

#define NB_DESC 1024
#define POOL_SIZE 16383

struct templ {
	uint8_t *blob;
	size_t *off;
	struct nftdp_gen_meta *meta;
	int32_t *dport; /* by_dport index of each frame (gen_result), -1 if none */
	uint32_t len;
};

struct tx_state {
	const struct gen_live *live;
	const struct templ *t;
	struct rte_mempool *pool;
	volatile int *quit;
	uint64_t t0, deadline, per_pkt_tsc_x1k; /* rate: TSC per packet * 1024 */
	uint64_t sent, bytes, next_seq;
	uint64_t *tx_by_dport;
	struct rte_mbuf *pend[GEN_BURST_MAX];
	uint64_t pend_seq; /* sequence number of pend[0] */
	unsigned int npend, pos;
	volatile int done;
};

static int build_templates(const struct nftdp_gen_cfg *cfg, const struct gen_live *live,
			   struct templ *t)
{
	uint64_t want = live->templates;
	size_t cap = 0, used = 0;
	uint8_t frame[NFTDP_GEN_FRAME_MAX];

	if (want == 0) {
		/* every flow through at least one whole round, capped at 4 Mi */
		uint64_t steps = cfg->data + 6u;

		if (cfg->replies && ((cfg->protos & NFTDP_GEN_ICMP) || cfg->mid_stream) &&
		    2u * cfg->data > steps)
			steps = 2u * cfg->data;
		want = (uint64_t)cfg->flows * steps;
		if (want < 65536)
			want = 65536;
		if (want > (1u << 22))
			want = 1u << 22;
	}
	if (live->count != 0 && live->count < want)
		want = live->count;
	t->len = (uint32_t)want;
	t->off = calloc(t->len, sizeof(*t->off));
	t->meta = calloc(t->len, sizeof(*t->meta));
	t->dport = calloc(t->len, sizeof(*t->dport));
	if (t->off == NULL || t->meta == NULL || t->dport == NULL)
		return -ENOMEM;
	t->blob = NULL;
	for (uint32_t i = 0; i < t->len; i++) {
		uint16_t len = nftdp_gen_build(cfg, i, frame, sizeof(frame), &t->meta[i]);
		struct nftdp_gen_rx rx;

		nftdp_gen_parse(frame, len, &rx);
		t->dport[i] = rx.l4proto == IPPROTO_TCP	  ? rx.dport
			      : rx.l4proto == IPPROTO_UDP ? 65536 + rx.dport
							  : -1;

		if (used + len > cap) {
			size_t ncap = cap ? cap * 2 : (size_t)1 << 20;
			uint8_t *nb = realloc(t->blob, ncap);

			if (nb == NULL)
				return -ENOMEM;
			t->blob = nb;
			cap = ncap;
		}
		memcpy(t->blob + used, frame, len);
		t->off[i] = used;
		used += len;
	}
	return 0;
}

static void free_templates(struct templ *t)
{
	free(t->blob);
	free(t->off);
	free(t->meta);
	free(t->dport);
}

/*
 * One step of the transmitter: refill the pending burst if it is empty
 * (respecting count and rate), then offer it to the port once.
 */
static void tx_step(struct tx_state *s)
{
	const struct gen_live *live = s->live;
	uint64_t now = rte_rdtsc();

	if (s->npend == 0) {
		unsigned int n = live->burst;

		if (live->count != 0 && live->count - s->next_seq < n)
			n = (unsigned int)(live->count - s->next_seq);
		if (s->per_pkt_tsc_x1k != 0) {
			uint64_t due = (now - s->t0) * 1024 / s->per_pkt_tsc_x1k + 1;

			if (due <= s->next_seq)
				return;
			if (due - s->next_seq < n)
				n = (unsigned int)(due - s->next_seq);
		}
		if (n == 0 || rte_pktmbuf_alloc_bulk(s->pool, s->pend, n) != 0)
			return;
		for (unsigned int i = 0; i < n; i++) {
			uint64_t seq = s->next_seq + i;
			uint32_t k = (uint32_t)(seq % s->t->len);
			const struct nftdp_gen_meta *m = &s->t->meta[k];
			uint8_t *d = rte_pktmbuf_mtod(s->pend[i], uint8_t *);

			rte_memcpy(d, s->t->blob + s->t->off[k], m->len);
			s->pend[i]->data_len = m->len;
			s->pend[i]->pkt_len = m->len;
			nftdp_gen_stamp(d, m, seq, now);
			s->bytes += m->len;
			if (s->t->dport[k] >= 0)
				s->tx_by_dport[s->t->dport[k]]++;
		}
		s->pend_seq = s->next_seq;
		s->next_seq += n;
		s->npend = n;
		s->pos = 0;
	}
	s->pos += rte_eth_tx_burst((uint16_t)live->tx_port, 0, s->pend + s->pos,
				   (uint16_t)(s->npend - s->pos));
	if (s->pos == s->npend) {
		s->sent += s->npend;
		s->npend = 0;
	}
}

static bool tx_finished(const struct tx_state *s, uint64_t now)
{
	if (*s->quit)
		return true;
	if (s->live->count != 0 && s->sent >= s->live->count)
		return true;
	return s->deadline != 0 && now >= s->deadline && s->npend == 0;
}

static void tx_close(struct tx_state *s)
{
	/* what the port never took was not sent */
	if (s->npend != 0) {
		for (unsigned int i = s->pos; i < s->npend; i++) {
			uint32_t k = (uint32_t)((s->pend_seq + i) % s->t->len);

			s->bytes -= s->pend[i]->pkt_len;
			if (s->t->dport[k] >= 0)
				s->tx_by_dport[s->t->dport[k]]--;
		}
		s->sent += s->pos;
		rte_pktmbuf_free_bulk(s->pend + s->pos, s->npend - s->pos);
		s->npend = 0;
	}
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

static int tx_lcore(void *arg)
{
	struct tx_state *s = arg;

	while (!tx_finished(s, rte_rdtsc()))
		tx_step(s);
	tx_close(s);
	return 0;
}

static uint16_t rx_burst(const struct gen_live *live, struct gen_result *res, uint64_t *last_seq,
			 uint64_t *last_rx, double ns_per_tsc)
{
	struct rte_mbuf *m[GEN_BURST_MAX];
	uint16_t n = rte_eth_rx_burst((uint16_t)live->rx_port, 0, m, (uint16_t)live->burst);
	uint64_t now;

	if (n == 0)
		return 0;
	now = rte_rdtsc();
	if (res->rx_packets == 0)
		res->rx_tsc = now; /* start of the rx window, replaced at the end */
	*last_rx = now;
	for (uint16_t i = 0; i < n; i++) {
		struct nftdp_gen_rx rx;

		res->rx_packets++;
		res->rx_bytes += m[i]->pkt_len;
		if (!nftdp_gen_parse(rte_pktmbuf_mtod(m[i], const uint8_t *), m[i]->data_len,
				     &rx)) {
			res->rx_other++;
			continue;
		}
		if (rx.l4proto == IPPROTO_TCP)
			res->rx_tcp++;
		else if (rx.l4proto == IPPROTO_UDP)
			res->rx_udp++;
		else if (rx.l4proto == IPPROTO_ICMP || rx.l4proto == IPPROTO_ICMPV6)
			res->rx_icmp++;
		if (rx.l4proto == IPPROTO_TCP)
			res->by_dport[rx.dport]++;
		else if (rx.l4proto == IPPROTO_UDP)
			res->by_dport[65536 + rx.dport]++;
		if (rx.stamped && rx.tsc != 0 && rx.tsc <= now) {
			res->rx_stamped++;
			if (rx.seq < *last_seq)
				res->reordered++;
			*last_seq = rx.seq;
			nftdp_gen_hist_add(&res->hist,
					   (uint64_t)((double)(now - rx.tsc) * ns_per_tsc));
		}
	}
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

static int port_setup(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc != 0)
		return rc;
	rc = rte_eth_rx_queue_setup(port, 0, NB_DESC, rte_eth_dev_socket_id(port), NULL, pool);
	if (rc != 0)
		return rc;
	rc = rte_eth_tx_queue_setup(port, 0, NB_DESC, rte_eth_dev_socket_id(port), NULL);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		return rc;
	/* not every vdev has a promiscuous mode; frames are ours anyway */
	(void)rte_eth_promiscuous_enable(port);
	return 0;
}

static int wait_link(uint16_t port, unsigned int ms, volatile int *quit)
{
	struct rte_eth_link link;
	uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * ms;

	do {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status)
			return 0;
		rte_delay_ms(10);
	} while (rte_rdtsc() < end && !*quit);
	return -ENOLINK;
}

int gen_ring_pair_create(void)
{
	struct rte_ring *ab, *ba;
	int a, b;

	/* what port a sends, port b receives, and back */
	ab = rte_ring_create("gen_ring_ab", 4096, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	ba = rte_ring_create("gen_ring_ba", 4096, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ab == NULL || ba == NULL)
		return -rte_errno;
	a = rte_eth_from_rings("gen_ring_a", &ba, 1, &ab, 1, rte_socket_id());
	if (a < 0)
		return -rte_errno;
	b = rte_eth_from_rings("gen_ring_b", &ab, 1, &ba, 1, rte_socket_id());
	if (b < 0)
		return -rte_errno;
	return 0;
}

int gen_live_run(const struct nftdp_gen_cfg *cfg, const struct gen_live *live, volatile int *quit,
		 struct gen_result *res)
{
	struct templ t = {0};
	struct tx_state *s;
	struct rte_mempool *pool;
	uint64_t hz = rte_get_tsc_hz(), last_seq = 0, last_rx = 0, tx_end = 0;
	double ns_per_tsc = 1e9 / (double)hz;
	unsigned int worker = RTE_MAX_LCORE;
	int ports[2] = {live->tx_port, live->rx_port};
	struct timespec ts;
	int rc;

	for (int i = 0; i < 2; i++)
		if (ports[i] >= 0 && !rte_eth_dev_is_valid_port((uint16_t)ports[i])) {
			fprintf(stderr, "nftdp-gen: no port %d (%u ports)\n", ports[i],
				rte_eth_dev_count_avail());
			return -ENODEV;
		}
	pool = rte_pktmbuf_pool_create("gen_pool", POOL_SIZE, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	if (pool == NULL)
		return -rte_errno;
	for (int i = 0; i < 2; i++) {
		if (ports[i] < 0 || (i == 1 && ports[1] == ports[0]))
			continue;
		rc = port_setup((uint16_t)ports[i], pool);
		if (rc != 0) {
			fprintf(stderr, "nftdp-gen: port %d: %s\n", ports[i], strerror(-rc));
			return rc;
		}
	}
	for (int i = 0; i < 2; i++)
		if (ports[i] >= 0 && wait_link((uint16_t)ports[i], live->link_wait_ms, quit) != 0) {
			fprintf(stderr, "nftdp-gen: port %d: link down after %u ms\n", ports[i],
				live->link_wait_ms);
			return -ENOLINK;
		}

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	nftdp_gen_hist_reset(&res->hist);
	res->tsc_hz = hz;
	rc = live->tx_port >= 0 ? build_templates(cfg, live, &t) : 0;
	if (rc != 0)
		goto out;
	s->live = live;
	s->t = &t;
	s->pool = pool;
	s->quit = quit;
	s->tx_by_dport = res->tx_by_dport;
	if (live->rate_mpps > 0)
		s->per_pkt_tsc_x1k = (uint64_t)((double)hz * 1024 / (live->rate_mpps * 1e6));
	s->t0 = rte_rdtsc();
	clock_gettime(CLOCK_REALTIME, &ts);
	res->tx_start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (live->duration_s > 0)
		s->deadline = s->t0 + (uint64_t)(live->duration_s * (double)hz);
	s->done = live->tx_port < 0;

	if (live->tx_port >= 0 && live->rx_port >= 0) {
		worker = rte_get_next_lcore(-1, 1, 0);
		if (worker < RTE_MAX_LCORE)
			rc = rte_eal_remote_launch(tx_lcore, s, worker);
		if (worker >= RTE_MAX_LCORE || rc != 0)
			worker = RTE_MAX_LCORE; /* both on this lcore */
	} else if (live->tx_port >= 0) {
		tx_lcore(s);
	}

	for (;;) {
		uint64_t now = rte_rdtsc();
		bool txd;

		if (live->tx_port >= 0 && live->rx_port >= 0 && worker == RTE_MAX_LCORE &&
		    !s->done) {
			if (tx_finished(s, now))
				tx_close(s);
			else
				tx_step(s);
		}
		if (live->rx_port < 0)
			break;
		/*
		 * Drain what is waiting (bounded): taking one burst per burst
		 * sent would keep any backlog, and its latency, forever.
		 */
		for (int k = 0; k < 16; k++)
			if (rx_burst(live, res, &last_seq, &last_rx, ns_per_tsc) < live->burst)
				break;
		txd = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
		if (txd && tx_end == 0)
			tx_end = rte_rdtsc();
		if (*quit)
			break;
		if (live->tx_port < 0 && s->deadline != 0 && now >= s->deadline)
			break;
		/* drain: after tx (or, as a pure sink, after the first packet) */
		if (txd && (live->tx_port >= 0 || res->rx_packets != 0)) {
			uint64_t since = last_rx > tx_end ? last_rx : tx_end;

			if (now > since && now - since > hz / 1000 * live->drain_ms)
				break;
		}
	}
	if (worker < RTE_MAX_LCORE)
		rte_eal_wait_lcore(worker);
	res->tx_packets = s->sent;
	res->tx_bytes = s->bytes;
	res->tx_tsc = (tx_end ? tx_end : rte_rdtsc()) - s->t0;
	res->rx_tsc = res->rx_packets ? last_rx - res->rx_tsc : 0;
	rc = 0;
out:
	free_templates(&t);
	free(s);
	/* the ports stay up: main.c stops them, after --linger-ms */
	return rc;
}
