/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/ internal: the connection table as the control plane's
 * ctnetlink sees it (struct nftdp_ctl_ct_ops, ct_ctl.c). A request for a
 * shard is posted to its worker's mailbox and run by that worker between
 * bursts (nftdp_dp_ct_ctl_service from nftdp_dp_ct_gc); when no worker
 * thread runs the shard (the main lcore is the worker, --control-only, the
 * workers stopped) the control thread calls conntrack/ itself.
 */
#ifndef NFTDP_DP_CT_CTL_H
#define NFTDP_DP_CT_CTL_H

#include <stdbool.h>

struct nftdp_dp;
struct nftdp_dp_worker;
struct nftdp_ctl_ct_ops;

/**
 * Set up the mailboxes of dp's workers (after nftdp_dp_ct_init) and return
 * the ops for nftdp_ctl_config.ct. direct: the shards are only ever run on
 * the control thread (main lcore as worker, --control-only). acct:
 * nf_conntrack_acct. 0 or -ENOMEM. Main thread, once.
 */
int nftdp_dp_ct_ctl_init(struct nftdp_dp *dp, bool direct, bool acct,
			 const struct nftdp_ctl_ct_ops **ops);

/** Worker threads run (true, before they are launched) or have all
 * stopped (false, after they were joined). Main thread. */
void nftdp_dp_ct_ctl_live(bool live);

/** Run the request posted to w's mailbox, if any. Between bursts, w's own
 * thread; one atomic load when there is none. */
void nftdp_dp_ct_ctl_service(struct nftdp_dp_worker *w);

/** Free what init set up; no request may be in flight. Main thread. */
void nftdp_dp_ct_ctl_fini(void);

#endif
