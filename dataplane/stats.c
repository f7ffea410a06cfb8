/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Statistics: per-worker counters (one writer each) summed on read, for
 * --stats-period lines (testpmd-like Mpps), --stats-json at exit and the
 * DPDK telemetry command /nftdp/stats (dpdk-telemetry.py); the conntrack
 * shards' and the per-flow verdict caches' counters, synproxy's, trace events lost,
 * and the kernel's "table full" log line.
 */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "dataplane_priv.h"
#include "nftdp_conntrack.h"

void nftdp_dp_stats_sum(const struct nftdp_dp *dp, struct nftdp_dp_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		const struct nftdp_dp_stats *s = &dp->w[i].st;

		for (unsigned int p = 0; p < RTE_MAX_ETHPORTS; p++) {
			out->rx[p] += s->rx[p];
			out->tx[p] += s->tx[p];
			out->tx_drop[p] += s->tx_drop[p];
		}
		for (unsigned int h = 0; h < NFTDP_DP_ST_MAX; h++)
			for (unsigned int v = 0; v < NFTDP_DP_V_MAX; v++)
				out->hook[h][v] += s->hook[h][v];
		for (unsigned int d = 0; d < NFTDP_DP_DROP_MAX; d++)
			out->drop[d] += s->drop[d];
		out->replies += s->replies;
		out->replies_out += s->replies_out;
		out->dups += s->dups;
		out->bursts += s->bursts;
		for (unsigned int k = 0; k < NFTDP_DP_PASSES; k++)
			out->pass[k] += s->pass[k];
		out->steered += s->steered;
		out->steered_in += s->steered_in;
		out->steer_full += s->steer_full;
		out->steer_wait += s->steer_wait;
		out->host_in += s->host_in;
		out->host_out += s->host_out;
		out->neigh_queued += s->neigh_queued;
		out->neigh_sent += s->neigh_sent;
		out->neigh_asked += s->neigh_asked;
	}
}

/* Worker i's flow cache counters (all 0 with --flow-cache 0), and every
 * worker's summed when i is n_workers (nftdp_vm_flowcache_stats: any thread). */
static void fc_stats(const struct nftdp_dp *dp, unsigned int i, struct nftdp_vm_flow_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int k = 0; dp->w && k < dp->n_workers; k++) {
		struct nftdp_vm_flow_stats f;

		if ((i < dp->n_workers && k != i) || dp->w[k].ctx.flow == NULL)
			continue;
		nftdp_vm_flowcache_stats(dp->w[k].ctx.flow, &f);
		out->hits += f.hits;
		out->misses += f.misses;
		out->inserts += f.inserts;
		out->uncacheable += f.uncacheable;
		out->mismatches += f.mismatches;
		out->carried += f.carried;
		out->unkeyed += f.unkeyed;
	}
}

/* Every shard's conntrack counters summed (nftdp_ct_stats: any thread). */
static void ct_sum(const struct nftdp_dp *dp, struct nftdp_ct_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; dp->w && i < dp->n_workers; i++) {
		struct nftdp_ct_stats c;

		if (dp->w[i].ct == NULL)
			continue;
		nftdp_ct_stats(dp->w[i].ct, &c);
		out->found += c.found;
		out->new_ += c.new_;
		out->insert += c.insert;
		out->invalid += c.invalid;
		out->ignore += c.ignore;
		out->drop += c.drop;
		out->early_drop += c.early_drop;
		out->expired += c.expired;
		out->deleted += c.deleted;
		out->unconfirmed_freed += c.unconfirmed_freed;
		out->related += c.related;
		out->table_full_events += c.table_full_events;
		out->count += c.count;
		out->max += c.max;
	}
}

/*
 * The kernel's "nf_conntrack: table full, dropping packet"
 * (net_warn_ratelimited in __nf_conntrack_alloc): the control thread prints
 * it when a shard refused a new connection since the last look, at most
 * once a second, with how many refusals it stands for.
 */
void nftdp_dp_ct_log_table_full(const struct nftdp_dp *dp)
{
	static uint64_t seen, next_tsc;
	struct nftdp_ct_stats c;
	uint64_t now;

	ct_sum(dp, &c);
	if (c.table_full_events == seen)
		return;
	now = rte_rdtsc();
	if (now < next_tsc)
		return;
	printf("nftdp: nf_conntrack: table full, dropping packet (%lu new connections refused, "
	       "%u/%u entries)\n",
	       c.table_full_events - seen, c.count, c.max);
	fflush(stdout);
	seen = c.table_full_events;
	next_tsc = now + rte_get_tsc_hz();
}

/* Packets that left the pipeline with each final outcome. */
struct outcome {
	uint64_t rx, tx, accepted, dropped, rejected, stolen, queued, pre_drop;
};

static void outcome_of(const struct nftdp_dp *dp, const struct nftdp_dp_stats *s, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		o->rx += s->rx[p];
		o->tx += s->tx[p];
	}
	for (unsigned int h = 0; h < NFTDP_DP_ST_MAX; h++) {
		o->dropped += s->hook[h][NFTDP_DP_V_DROP];
		o->rejected += s->hook[h][NFTDP_DP_V_REJECT];
		o->stolen += s->hook[h][NFTDP_DP_V_STOLEN];
		o->queued += s->hook[h][NFTDP_DP_V_QUEUE];
	}
	/* accepted: through netdev egress, the last hook every packet passes
	 * (replies pass it too: not counted) */
	o->accepted = s->hook[NFTDP_DP_ST_NETDEV_EGRESS][NFTDP_DP_V_ACCEPT] - s->replies_out;
	for (unsigned int d = 0; d < NFTDP_DP_DROP_MAX; d++)
		if (d != NFTDP_DP_DROP_TX_FULL && d != NFTDP_DP_DROP_NO_MBUF)
			o->pre_drop += s->drop[d];
	o->pre_drop += s->steer_full; /* never reached the pipeline */
}

int nftdp_dp_stats_json(const struct nftdp_dp *dp, const char *file, double run_s)
{
	struct nftdp_dp_stats s;
	struct outcome o;
	FILE *f = fopen(file, "w");

	if (f == NULL)
		return -1;
	nftdp_dp_stats_sum(dp, &s);
	outcome_of(dp, &s, &o);
	fprintf(f, "{\n  \"run_time_s\": %.6f,\n  \"workers\": %u,\n", run_s, dp->n_workers);
	fprintf(f, "  \"router\": %s,\n", dp->router ? "true" : "false");
	/* bursts by the pass they took (pipeline.c) */
	fprintf(f,
		"  \"passes\": {\"full\": %lu, \"empty\": %lu, \"cached\": %lu, \"tracked\": %lu, "
		"\"established\": %lu},\n",
		s.pass[0], s.pass[1], s.pass[2], s.pass[3], s.pass[4]);
	fprintf(f,
		"  \"packets\": {\"rx\": %lu, \"tx\": %lu, \"accepted\": %lu, \"dropped\": %lu, "
		"\"rejected\": %lu, \"stolen\": %lu, \"queued\": %lu, \"dropped_before_rules\": "
		"%lu, \"replies_sent\": %lu, \"dups_sent\": %lu},\n",
		o.rx, o.tx, o.accepted, o.dropped, o.rejected, o.stolen, o.queued, o.pre_drop,
		s.replies_out, s.dups);
	fprintf(f, "  \"ports\": [");
	for (uint16_t p = 0, first = 1; p < dp->n_ports; p++) {
		struct rte_eth_stats es = {0};

		if (!dp->port[p].used)
			continue;
		rte_eth_stats_get(p, &es);
		fprintf(f,
			"%s\n    {\"port\": %u, \"name\": \"%s\", \"rx\": %lu, \"tx\": %lu, "
			"\"tx_drop\": %lu, \"rx_missed\": %lu, \"rx_nombuf\": %lu}",
			first ? "" : ",", p, dp->port[p].name, s.rx[p], s.tx[p], s.tx_drop[p],
			es.imissed, es.rx_nombuf);
		first = 0;
	}
	fprintf(f, "\n  ],\n  \"hooks\": {");
	for (unsigned int h = 0; h < NFTDP_DP_ST_MAX; h++) {
		fprintf(f, "%s\n    \"%s\": {", h ? "," : "", nftdp_dp_stage_names[h]);
		for (unsigned int v = 0; v < NFTDP_DP_V_MAX; v++)
			fprintf(f, "%s\"%s\": %lu", v ? ", " : "", nftdp_dp_vclass_names[v],
				s.hook[h][v]);
		fprintf(f, "}");
	}
	fprintf(f, "\n  },\n  \"drops\": {");
	for (unsigned int d = 0; d < NFTDP_DP_DROP_MAX; d++)
		fprintf(f, "%s\"%s\": %lu", d ? ", " : "", nftdp_dp_drop_names[d], s.drop[d]);
	{
		/* the VM's own impossible-state drops (nftdp_vm_ctx.drops) */
		static const char *const vm_names[NFTDP_VM_DROP_MAX] = {
		    [NFTDP_VM_DROP_JUMPSTACK] = "jumpstack",
		    [NFTDP_VM_DROP_VMAP_CHAIN] = "vmap_chain",
		    [NFTDP_VM_DROP_BAD_VERDICT] = "bad_verdict",
		};

		for (unsigned int d = 0; d < NFTDP_VM_DROP_MAX; d++) {
			uint64_t sum = 0;

			for (unsigned int i = 0; i < dp->n_workers; i++)
				sum += dp->w[i].ctx.drops[d];
			fprintf(f, ", \"vm_%s\": %lu", vm_names[d], sum);
		}
	}
	fprintf(f, "},\n");
	/* trace events lost on full rings (packets are never lost for them) */
	fprintf(f, "  \"trace\": {\"lost\": %lu},\n",
		dp->state ? nftdp_vm_trace_lost(dp->state) : 0);
	/* nflog events (log group) lost on full rings, likewise */
	fprintf(f, "  \"nflog\": {\"lost\": %lu},\n",
		dp->state ? nftdp_vm_nflog_lost(dp->state) : 0);
	{
		/* /proc/net/stat/synproxy, summed over the workers */
		struct nftdp_vm_synproxy_stats sp = {0};

		for (unsigned int i = 0; i < dp->n_workers; i++) {
			const struct nftdp_vm_synproxy_stats *x = &dp->w[i].ctx.synproxy;

			sp.syn_received += x->syn_received;
			sp.cookie_invalid += x->cookie_invalid;
			sp.cookie_valid += x->cookie_valid;
			sp.cookie_retrans += x->cookie_retrans;
			sp.conn_reopened += x->conn_reopened;
		}
		fprintf(
		    f,
		    "  \"synproxy\": {\"syn_received\": %lu, \"cookie_invalid\": %lu, "
		    "\"cookie_valid\": %lu, \"cookie_retrans\": %lu, \"conn_reopened\": %lu},\n",
		    sp.syn_received, sp.cookie_invalid, sp.cookie_valid, sp.cookie_retrans,
		    sp.conn_reopened);
	}
	fprintf(f,
		"  \"steering\": {\"steered\": %lu, \"steered_in\": %lu, \"ring_full\": %lu, "
		"\"backpressure_polls\": %lu},\n",
		s.steered, s.steered_in, s.steer_full, s.steer_wait);
	/* the exception path (host.c) */
	fprintf(f,
		"  \"host\": {\"to_host\": %lu, \"from_host\": %lu, \"limited\": %lu, "
		"\"neigh_queued\": %lu, \"neigh_sent\": %lu, \"neigh_asked\": %lu},\n",
		s.host_in, s.host_out, s.drop[NFTDP_DP_DROP_HOST_LIMIT], s.neigh_queued,
		s.neigh_sent, s.neigh_asked);
	{
		struct nftdp_ct_stats c;

		ct_sum(dp, &c);
		fprintf(f,
			"  \"conntrack\": {\"count\": %u, \"max\": %u, \"found\": %lu, \"new\": "
			"%lu, \"insert\": %lu, \"invalid\": %lu, \"ignore\": %lu, \"drop\": %lu, "
			"\"early_drop\": %lu, \"table_full\": %lu, \"expired\": %lu, \"deleted\": "
			"%lu, \"unconfirmed_freed\": %lu, \"related\": %lu},\n",
			c.count, c.max, c.found, c.new_, c.insert, c.invalid, c.ignore, c.drop,
			c.early_drop, c.table_full_events, c.expired, c.deleted,
			c.unconfirmed_freed, c.related);
	}
	{
		struct nftdp_vm_flow_stats fc;

		fc_stats(dp, dp->n_workers, &fc);
		fprintf(f,
			"  \"flow_cache\": {\"entries\": %u, \"hits\": %lu, \"misses\": %lu, "
			"\"inserts\": %lu, \"uncacheable\": %lu, \"mismatches\": %lu, "
			"\"carried\": %lu, \"unkeyed\": %lu},\n",
			dp->flow_cache, fc.hits, fc.misses, fc.inserts, fc.uncacheable,
			fc.mismatches, fc.carried, fc.unkeyed);
	}
	fprintf(f, "  \"per_worker\": [");
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_vm_flow_stats fc;
		uint64_t rx = 0, tx = 0;

		for (uint16_t p = 0; p < dp->n_ports; p++) {
			rx += dp->w[i].st.rx[p];
			tx += dp->w[i].st.tx[p];
		}
		fc_stats(dp, i, &fc);
		fprintf(f,
			"%s\n    {\"worker\": %u, \"lcore\": %u, \"rx\": %lu, \"tx\": %lu, "
			"\"bursts\": %lu, \"steered\": %lu, \"steered_in\": %lu, \"flow_cache\": "
			"{\"hits\": %lu, \"misses\": %lu, \"inserts\": %lu, \"uncacheable\": %lu, "
			"\"mismatches\": %lu, \"carried\": %lu, \"unkeyed\": %lu}}",
			i ? "," : "", i, dp->w[i].lcore, rx, tx, dp->w[i].st.bursts,
			dp->w[i].st.steered, dp->w[i].st.steered_in, fc.hits, fc.misses, fc.inserts,
			fc.uncacheable, fc.mismatches, fc.carried, fc.unkeyed);
	}
	fprintf(f, "\n  ]\n}\n");
	return fclose(f) == 0 ? 0 : -1;
}

/* testpmd-like rates since the previous call */
void nftdp_dp_stats_print(const struct nftdp_dp *dp, double period_s)
{
	static uint64_t prx[RTE_MAX_ETHPORTS], ptx[RTE_MAX_ETHPORTS];
	static uint64_t pwrx[NFTDP_DP_MAX_WORKERS], pwtx[NFTDP_DP_MAX_WORKERS];
	struct nftdp_dp_stats s;

	if (period_s <= 0)
		return;
	nftdp_dp_stats_sum(dp, &s);
	for (uint16_t p = 0; p < dp->n_ports; p++) {
		if (!dp->port[p].used)
			continue;
		printf("nftdp: port %u %-8s rx %12lu (%8.3f Mpps)  tx %12lu (%8.3f Mpps)  "
		       "tx-drop %lu\n",
		       p, dp->port[p].name, s.rx[p], (double)(s.rx[p] - prx[p]) / period_s / 1e6,
		       s.tx[p], (double)(s.tx[p] - ptx[p]) / period_s / 1e6, s.tx_drop[p]);
		prx[p] = s.rx[p];
		ptx[p] = s.tx[p];
	}
	for (unsigned int i = 0; i < dp->n_workers && i < NFTDP_DP_MAX_WORKERS; i++) {
		uint64_t rx = 0, tx = 0;

		for (uint16_t p = 0; p < dp->n_ports; p++) {
			rx += dp->w[i].st.rx[p];
			tx += dp->w[i].st.tx[p];
		}
		printf("nftdp: worker %u lcore %-3u rx %8.3f Mpps  tx %8.3f Mpps", i,
		       dp->w[i].lcore, (double)(rx - pwrx[i]) / period_s / 1e6,
		       (double)(tx - pwtx[i]) / period_s / 1e6);
		if (dp->flow_cache) {
			struct nftdp_vm_flow_stats fc;

			fc_stats(dp, i, &fc);
			printf("  flow cache hits %lu misses %lu inserts %lu uncacheable %lu",
			       fc.hits, fc.misses, fc.inserts, fc.uncacheable);
			if (dp->flow_verify)
				printf(" mismatches %lu", fc.mismatches);
		}
		printf("\n");
		pwrx[i] = rx;
		pwtx[i] = tx;
	}
	if (dp->flow_cache) {
		struct nftdp_vm_flow_stats fc;

		fc_stats(dp, dp->n_workers, &fc);
		printf("nftdp: flow cache hits %lu misses %lu inserts %lu uncacheable %lu "
		       "carried %lu unkeyed %lu (%.1f%% hits)",
		       fc.hits, fc.misses, fc.inserts, fc.uncacheable, fc.carried, fc.unkeyed,
		       fc.hits + fc.misses ? 100.0 * (double)fc.hits / (double)(fc.hits + fc.misses)
					   : 0.0);
		if (dp->flow_verify)
			printf(" mismatches %lu", fc.mismatches);
		printf("\n");
	}
	fflush(stdout);
}

/* read by the telemetry thread; cleared before the workers are freed */
static struct nftdp_dp *tel_dp;

void nftdp_dp_telemetry_stop(void)
{
	__atomic_store_n(&tel_dp, NULL, __ATOMIC_RELEASE);
}

static int tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nftdp_dp *dp = __atomic_load_n(&tel_dp, __ATOMIC_ACQUIRE);
	struct nftdp_dp_stats s;
	struct outcome o;

	(void)cmd;
	(void)params;
	if (dp == NULL)
		return -1;
	nftdp_dp_stats_sum(dp, &s);
	outcome_of(dp, &s, &o);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx", o.rx);
	rte_tel_data_add_dict_u64(d, "tx", o.tx);
	rte_tel_data_add_dict_u64(d, "accepted", o.accepted);
	rte_tel_data_add_dict_u64(d, "dropped", o.dropped);
	rte_tel_data_add_dict_u64(d, "rejected", o.rejected);
	rte_tel_data_add_dict_u64(d, "stolen", o.stolen);
	rte_tel_data_add_dict_u64(d, "dropped_before_rules", o.pre_drop);
	rte_tel_data_add_dict_u64(d, "replies_sent", s.replies_out);
	rte_tel_data_add_dict_u64(d, "steered", s.steered);
	rte_tel_data_add_dict_u64(d, "steer_ring_full", s.steer_full);
	rte_tel_data_add_dict_u64(d, "host_in", s.host_in);
	rte_tel_data_add_dict_u64(d, "host_out", s.host_out);
	rte_tel_data_add_dict_u64(d, "host_limited", s.drop[NFTDP_DP_DROP_HOST_LIMIT]);
	rte_tel_data_add_dict_u64(d, "neigh_queued", s.neigh_queued);
	rte_tel_data_add_dict_u64(d, "neigh_sent", s.neigh_sent);
	rte_tel_data_add_dict_u64(d, "neigh_asked", s.neigh_asked);
	rte_tel_data_add_dict_u64(d, "trace_lost", dp->state ? nftdp_vm_trace_lost(dp->state) : 0);
	rte_tel_data_add_dict_u64(d, "nflog_lost", dp->state ? nftdp_vm_nflog_lost(dp->state) : 0);
	{
		struct nftdp_ct_stats c;

		ct_sum(dp, &c);
		rte_tel_data_add_dict_u64(d, "ct_count", c.count);
		rte_tel_data_add_dict_u64(d, "ct_max", c.max);
		rte_tel_data_add_dict_u64(d, "ct_new", c.new_);
		rte_tel_data_add_dict_u64(d, "ct_invalid", c.invalid);
		rte_tel_data_add_dict_u64(d, "ct_drop", c.drop);
		rte_tel_data_add_dict_u64(d, "ct_early_drop", c.early_drop);
		rte_tel_data_add_dict_u64(d, "ct_table_full", c.table_full_events);
	}
	{
		/* an object, as in --stats-json; freed with d (keep 0) */
		struct rte_tel_data *c = rte_tel_data_alloc();
		struct nftdp_vm_flow_stats fc;

		fc_stats(dp, dp->n_workers, &fc);
		if (c) {
			rte_tel_data_start_dict(c);
			rte_tel_data_add_dict_u64(c, "entries", dp->flow_cache);
			rte_tel_data_add_dict_u64(c, "hits", fc.hits);
			rte_tel_data_add_dict_u64(c, "misses", fc.misses);
			rte_tel_data_add_dict_u64(c, "inserts", fc.inserts);
			rte_tel_data_add_dict_u64(c, "uncacheable", fc.uncacheable);
			rte_tel_data_add_dict_u64(c, "mismatches", fc.mismatches);
			rte_tel_data_add_dict_u64(c, "carried", fc.carried);
			rte_tel_data_add_dict_u64(c, "unkeyed", fc.unkeyed);
			if (rte_tel_data_add_dict_container(d, "flow_cache", c, 0) < 0)
				rte_tel_data_free(c);
		}
	}
	for (unsigned int x = 0; x < NFTDP_DP_DROP_MAX; x++) {
		char k[48];

		snprintf(k, sizeof(k), "drop_%s", nftdp_dp_drop_names[x]);
		rte_tel_data_add_dict_u64(d, k, s.drop[x]);
	}
	for (unsigned int h = 0; h < NFTDP_DP_ST_MAX; h++) {
		for (unsigned int v = 0; v < NFTDP_DP_V_MAX; v++) {
			char k[64];

			snprintf(k, sizeof(k), "%s_%s", nftdp_dp_stage_names[h],
				 nftdp_dp_vclass_names[v]);
			rte_tel_data_add_dict_u64(d, k, s.hook[h][v]);
		}
	}
	return 0;
}

static int tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nftdp_dp *tdp = __atomic_load_n(&tel_dp, __ATOMIC_ACQUIRE);
	struct nftdp_dp_stats s;

	(void)cmd;
	(void)params;
	if (tdp == NULL)
		return -1;
	nftdp_dp_stats_sum(tdp, &s);
	rte_tel_data_start_dict(d);
	for (uint16_t p = 0; p < tdp->n_ports; p++) {
		char k[48];

		if (!tdp->port[p].used)
			continue;
		snprintf(k, sizeof(k), "%s_rx", tdp->port[p].name);
		rte_tel_data_add_dict_u64(d, k, s.rx[p]);
		snprintf(k, sizeof(k), "%s_tx", tdp->port[p].name);
		rte_tel_data_add_dict_u64(d, k, s.tx[p]);
		snprintf(k, sizeof(k), "%s_tx_drop", tdp->port[p].name);
		rte_tel_data_add_dict_u64(d, k, s.tx_drop[p]);
	}
	return 0;
}

int nftdp_dp_telemetry_register(struct nftdp_dp *dp)
{
	int ret;

	__atomic_store_n(&tel_dp, dp, __ATOMIC_RELEASE);
	ret = rte_telemetry_register_cmd("/nftdp/stats", tel_stats,
					 "Packet outcomes, drop reasons and per-hook verdicts");
	if (ret == 0)
		ret = rte_telemetry_register_cmd("/nftdp/ports", tel_ports,
						 "Per-port rx, tx and tx drops");
	return ret;
}
