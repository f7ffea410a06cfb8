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

#include "dataplane_priv.h"
#include "nftdp_conntrack.h"

#include <linux/netfilter_ipv4.h> /* after netinet/in.h: NF_IP_PRI_CONNTRACK */

#define CT_GC_BUDGET 64 /* entry slots looked at between bursts */

static void ct_in_step(struct nftdp_dp_worker *w, uint8_t nfproto, uint8_t hook,
		       struct nftdp_vm_pkt **pkts, unsigned int n, unsigned int *verdicts)
{
	(void)hook;
	if (!nftdp_vm_gen_uses_ct(w->gen, nfproto)) {
		for (unsigned int i = 0; i < n; i++)
			verdicts[i] = NF_ACCEPT;
		return;
	}
	/* a raw-priority notrack made the packet untracked */
	for (unsigned int i = 0; i < n; i++)
		if (pkts[i]->out.notrack)
			pkts[i]->ct_untracked = true;
	nftdp_ct_in_burst(w->ct, pkts, n, verdicts, w->ctx.now_ms);
}

static bool ct_active(const struct nftdp_vm_gen *gen)
{
	return nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV4) || nftdp_vm_gen_uses_ct(gen, NFPROTO_IPV6);
}

int nftdp_dp_ct_init(struct nftdp_dp *dp, uint32_t ct_max)
{
	uint32_t per = ct_max / (dp->n_workers ? dp->n_workers : 1);

	if (per == 0)
		per = 1;
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		struct nftdp_ct_config cfg = {
		    .max_entries = per,
		    .shard_id = (uint16_t)i,
		    .n_shards = (uint16_t)dp->n_workers,
		    .hash_seed = 0x9e3779b9u * (i + 1),
		};
		int rc = nftdp_ct_shard_create(&cfg, &dp->w[i].ct);

		if (rc < 0) {
			fprintf(stderr, "nftdp: conntrack shard of %u entries: %d\n", per, rc);
			return rc;
		}
	}
	dp->builtin[NF_INET_PRE_ROUTING] =
	    (struct nftdp_dp_builtin){.prio = NF_IP_PRI_CONNTRACK, .fn = ct_in_step,
				      .active = ct_active};
	return 0;
}

void nftdp_dp_ct_fini(struct nftdp_dp *dp)
{
	for (unsigned int i = 0; dp->w && i < dp->n_workers; i++) {
		nftdp_ct_shard_destroy(dp->w[i].ct);
		dp->w[i].ct = NULL;
	}
}

void nftdp_dp_ct_confirm(struct nftdp_dp_worker *w, struct nftdp_vm_pkt **pkts, unsigned int n,
			 unsigned int verdict)
{
	for (unsigned int i = 0; i < n; i++)
		if (pkts[i]->ct)
			nftdp_ct_confirm(w->ct, pkts[i], verdict);
}

void nftdp_dp_ct_gc(struct nftdp_dp_worker *w)
{
	if (w->ct)
		nftdp_ct_gc(w->ct, w->ctx.now_ms, CT_GC_BUDGET);
}
