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
#include <stdint.h>

#define NFTDP_CTL_MAX_IFACES 64
#define NFTDP_CTL_IFNAMSIZ 16

struct nftdp_ctl;
struct nftdp_vm_state;      /* vm/nftdp_vm.h */
struct nftdp_vm_gen_domain; /* vm/nftdp_vm.h */

/** The interfaces the dataplane has, as netdev chains and flowtables see them. */
struct nftdp_ctl_iface {
	char name[NFTDP_CTL_IFNAMSIZ];
	uint32_t ifindex;
};

struct nftdp_ctl_config {
	const char *socket_path; /**< unix socket to listen on */
	bool flowtables;         /**< accept flowtables (the reference kernel has none) */
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

/** The current nf_tables generation id (what GETGEN answers). */
uint32_t nftdp_ctl_genid(const struct nftdp_ctl *ctl);

/** Stop listening, close every session, free the ruleset. NULL is ignored. */
void nftdp_ctl_destroy(struct nftdp_ctl *ctl);

#endif
