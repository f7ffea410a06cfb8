/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp control plane: the kernel's side of nf_tables netlink.
 *
 * The control plane listens on a unix socket that the LD_PRELOAD shim
 * (control/shim) connects the stock nft to. It answers every nfnetlink
 * nf_tables message the way the Linux kernel does: batches are one
 * transaction, dumps end in NLMSG_DONE, errors carry the kernel's errno and
 * extended-ack offset, and nft monitor gets the kernel's notifications.
 *
 * Usage: nftdp_ctl_create() once, then nftdp_ctl_poll() in a loop on the
 * control thread, then nftdp_ctl_destroy(). Everything here is control-path
 * and single-threaded: only the thread that called nftdp_ctl_create() may call
 * the others. No function here is packet-path.
 */
#ifndef NFTDP_CONTROL_H
#define NFTDP_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nftdp_vm_ct_ops;

#define NFTDP_CTL_MAX_IFACES 64
#define NFTDP_CTL_IFNAMSIZ 16

struct nftdp_ctl;
struct nftdp_vm_state;	    /* vm/include/nftdp_vm.h */
struct nftdp_vm_gen_domain; /* vm/include/nftdp_vm.h */
struct nftdp_ct_tuple;	    /* conntrack/include/nftdp_conntrack.h */
struct nftdp_ct_info;
struct nftdp_ct_event;
struct nftdp_ct_stats;
struct nftdp_ct_expect_info;
struct nftdp_ct_change;
struct nftdp_ct_expect_new;

/** The interfaces the dataplane has, as netdev chains and flowtables see them. */
struct nftdp_ctl_iface {
	char name[NFTDP_CTL_IFNAMSIZ];
	uint32_t ifindex;
};

/**
 * The connection table behind NFNL_SUBSYS_CTNETLINK (conntrack -L/-G/-D/-F/
 * -E/-C/-S), provided by the embedding process. The table is split in
 * n_shards shards (one per worker). Every callback is called on the control
 * thread; how it reaches a shard its worker owns is the provider's business
 * (the daemon posts the call to the worker, dataplane/ct_ctl.c). Callbacks
 * returning int give 0 (or a count) or -errno.
 */
struct nftdp_ctl_ct_ops {
	unsigned int n_shards;
	bool acct; /**< nf_conntrack_acct: dumps carry CTA_COUNTERS_* */
	void *arg;
	/** Copy up to max confirmed entries of shard into out, skipping the
	 * first skip of them (a dump resumes where the last chunk stopped).
	 * @return entries copied (< max: the shard is done), or -errno. */
	int (*dump)(void *arg, unsigned int shard, unsigned int skip, struct nftdp_ct_info *out,
		    unsigned int max);
	/** The entry with tuple t (either direction), whichever shard holds it.
	 * 0 or -ENOENT. */
	int (*get)(void *arg, const struct nftdp_ct_tuple *t, struct nftdp_ct_info *out);
	/** Delete the entry with tuple t; id non-zero must match. 0, -ENOENT. */
	int (*del)(void *arg, const struct nftdp_ct_tuple *t, uint32_t id);
	/** Delete every entry; returns how many, or -errno. */
	int (*flush)(void *arg);
	/** A shard's counters (any time). */
	void (*stats)(void *arg, unsigned int shard, struct nftdp_ct_stats *out);
	/** Hand shard's pending events to cb, oldest first, until cb returns
	 * false: that event and the later ones stay pending for the next poll
	 * (a NETLINK_BROADCAST_ERROR listener's queue is full). The number cb
	 * took. */
	unsigned int (*events_poll)(void *arg, unsigned int shard,
				    bool (*cb)(const struct nftdp_ct_event *ev, void *cb_arg),
				    void *cb_arg);
	/** Optional: whether anyone listens to conntrack events now (called
	 * when that changes, first at the first event pump); the embedder
	 * stops building events while nobody does. */
	void (*events_listen)(void *arg, bool on);
	/** Optional: copy up to max expectations of shard (its masters') into
	 * out (conntrack -L expect); the number copied, or -errno. */
	int (*exp_dump)(void *arg, unsigned int shard, struct nftdp_ct_expect_info *out,
			unsigned int max);
	/** Optional (NULL: EOPNOTSUPP): IPCTNL_MSG_CT_NEW. The entry c's lookup
	 * tuple finds on any shard is changed (nftdp_ct_update); none and
	 * NFTDP_CT_CHG_CREATE: it is made on the shard that owns its original
	 * tuple (nftdp_ct_create). 0 or -errno; the entry queues its event. */
	int (*change)(void *arg, const struct nftdp_ct_change *c);
	/** Optional (NULL: EOPNOTSUPP): CTRZERO, the entry with tuple t (id
	 * non-zero must match) into out, then its counters zeroed.
	 * 0 or -ENOENT. */
	int (*get_zero)(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
			struct nftdp_ct_info *out);
	/** Optional (NULL: EOPNOTSUPP), expectations: the one tuple t matches
	 * (id non-zero must match) on any shard; 0 or -ENOENT. */
	int (*exp_get)(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
		       struct nftdp_ct_expect_info *out);
	/** Remove it; 0 or -ENOENT. */
	int (*exp_del)(void *arg, const struct nftdp_ct_tuple *t, uint32_t id);
	/** Remove every one whose master's helper is helper (NULL: all). */
	int (*exp_flush)(void *arg, const char *helper);
	/** Its timeout from now; 0 or -ENOENT. */
	int (*exp_timeout)(void *arg, const struct nftdp_ct_tuple *t, uint32_t timeout_s);
	/** Create one for master n->master, on the master's shard
	 * (nftdp_ct_expect_create's errnos). */
	int (*exp_new)(void *arg, const struct nftdp_ct_expect_new *n);
	/** Optional: the VM's conntrack ops, for the set gc of elements with
	 * `ct count` (conn_live with ct NULL, any thread). */
	const struct nftdp_vm_ct_ops *vm_ops;
};

struct nftdp_ctl_config {
	const char *socket_path; /**< unix socket to listen on */
	bool flowtables;	 /**< accept flowtables (the reference kernel has none) */
	unsigned int n_ifaces;
	struct nftdp_ctl_iface ifaces[NFTDP_CTL_MAX_IFACES];
	/**
	 * Where commits go. With both set, every commit compiles the whole
	 * ruleset into a generation (vm/) and publishes it into gen_dom; a
	 * batch the VM cannot compile fails with the compiler's errno
	 * (EOPNOTSUPP for unsupported expressions) and changes nothing.
	 * Counters in dumps are read from vm_state. Both NULL: control only
	 * (nothing is compiled; counters list as stored). The caller creates
	 * both and destroys them after nftdp_ctl_destroy().
	 */
	struct nftdp_vm_state *vm_state;
	struct nftdp_vm_gen_domain *gen_dom;
	/**
	 * The connection table for ctnetlink (copied pointer: the table must
	 * outlive the control plane). NULL: CTNETLINK messages get EOPNOTSUPP,
	 * as from a kernel without nf_conntrack_netlink.
	 */
	const struct nftdp_ctl_ct_ops *ct;
	/**
	 * Optional: called during a commit whose generation has a fib
	 * expression, before anything is published, so that no fib rule runs
	 * without a route table (the dataplane mirrors the kernel's routes
	 * on the first such call). first: the running generation has no fib
	 * (this commit brings it). 0, or -errno: the commit fails with it and
	 * changes nothing; msg (msglen bytes) may say why.
	 */
	int (*fib_prepare)(void *arg, bool first, char *msg, size_t msglen);
	void *fib_arg;
};

/**
 * Create the control plane and start listening.
 *
 * @param cfg  socket path and interface table (copied).
 * @param out  the new control plane.
 * @return 0, or -errno (-EADDRINUSE when another daemon serves the socket,
 *         -ENOMEM, or the errno of socket/bind/listen).
 * Control-path. Not thread-safe.
 */
int nftdp_ctl_create(const struct nftdp_ctl_config *cfg, struct nftdp_ctl **out);

/**
 * Serve control-socket events for at most timeout_ms milliseconds
 * (0: only what is pending, -1: until something happened).
 *
 * @return 0, or -errno on a fatal error of the listening socket; -EINTR
 *         when a signal interrupted the wait.
 * Control-path. Not thread-safe.
 */
int nftdp_ctl_poll(struct nftdp_ctl *ctl, int timeout_ms);

/**
 * The file descriptor that becomes readable when nftdp_ctl_poll() has work,
 * for callers that wait on several things.
 */
int nftdp_ctl_fd(const struct nftdp_ctl *ctl);

/**
 * Whether nftdp_ctl_poll() has work that no descriptor shows: a listener
 * owed ENOBUFS, or a dump waiting for its reader to make room. A caller
 * that polls only when nftdp_ctl_fd() is readable must poll then too.
 */
bool nftdp_ctl_pending(const struct nftdp_ctl *ctl);

/** The current nf_tables generation id (what GETGEN answers). */
uint32_t nftdp_ctl_genid(const struct nftdp_ctl *ctl);

/**
 * Deliver pending conntrack events (cfg.ct->events_poll) to the sessions
 * that joined NFNLGRP_CONNTRACK_NEW / _UPDATE / _DESTROY (conntrack -E);
 * without listeners they are dropped, as the kernel generates none. While a
 * listener with NETLINK_BROADCAST_ERROR has no room, they wait. Call it
 * often (every millisecond or so); nftdp_ctl_poll() calls it too.
 * @return events delivered or dropped. Control-path. Not thread-safe.
 */
unsigned int nftdp_ctl_ct_events(struct nftdp_ctl *ctl);

/**
 * Deliver pending trace events (`meta nftrace set 1`) as NFT_MSG_TRACE to
 * the sessions that joined NFNLGRP_NFTRACE (`nft monitor trace`), and turn
 * the workers' event recording on or off as such sessions come and go.
 * Call it often; nftdp_ctl_poll() calls it too.
 * @return events drained. Control-path. Not thread-safe.
 */
unsigned int nftdp_ctl_trace_events(struct nftdp_ctl *ctl);

/**
 * Deliver pending `log group N` events as NFULNL_MSG_PACKET to the
 * instance bound to N (nfnetlink_log), batched as the kernel batches them,
 * and send the batches whose flush timeout passed. Call it often;
 * nftdp_ctl_poll() calls it too.
 * @return events drained. Control-path. Not thread-safe.
 */
unsigned int nftdp_ctl_nflog_events(struct nftdp_ctl *ctl);

/** Stop listening, close every session, free the ruleset. NULL is ignored. */
void nftdp_ctl_destroy(struct nftdp_ctl *ctl);

#endif
