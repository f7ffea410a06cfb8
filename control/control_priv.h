/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to control/: the transport (server.c: sessions on the unix
 * socket) and the nfnetlink side (nfnl.c and the obj_*.c files) meet here.
 *
 * Threading: everything in control/ runs on the one control thread.
 */
#ifndef NFTDP_CONTROL_PRIV_H
#define NFTDP_CONTROL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nftdp_control.h"

struct ctl_server;
struct ctl_session;
struct ctl_state;

struct nftdp_ctl {
	struct nftdp_ctl_config cfg;
	struct ctl_server *server;
	struct ctl_state *state; /* the nf_tables objects, see ctl_state.h */
	struct ctl_build *bld;	 /* builds the dataplane's generations (build.c), or NULL */
	int ct_listening;	 /* last events_listen() told: -1 never, 0, 1 */
	bool trace_listening;	 /* NFNLGRP_NFTRACE has members: workers record traces */
	struct ctl_nflog *nflog; /* nfnetlink_log instances (nflog.c), NULL: none yet */
	struct ctl_ipset *ipset; /* the ipset sets (ipset.c), NULL: none yet */
	/* expectation events (ctnetlink.c): the expectations at the last
	 * pump, sorted, while someone listens to NFNLGRP_CONNTRACK_EXP_* */
	struct ctn_exp_snap *exp_snap;
	unsigned int n_exp_snap;
};

/* ctnetlink.c: forget the expectation snapshot (nftdp_ctl_destroy) */
void ctl_ctnetlink_exp_reset(struct nftdp_ctl *ctl);

struct ctl_build;

/* ---- trace.c: NFT_MSG_TRACE ---- */
struct nftdp_vm_trace_event;
/* One trace event as the kernel's NFT_MSG_TRACE into buf (2048 bytes);
 * returns its length. */
int ctl_trace_fill(void *buf, const struct nftdp_vm_trace_event *ev);

/* ---- nflog.c: NFNL_SUBSYS_ULOG (nfnetlink_log) ---- */
struct nlmsghdr;
struct nlattr;
struct nftdp_vm_nflog_event;
/* One request of subsystem ULOG from s (NFULNL_MSG_CONFIG); 0 (ack if
 * asked) or -errno, *bad the attribute. */
int ctl_nflog_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		  const struct nlattr **bad);
/* The session is gone: its instances go (nfulnl_rcv_nl_event). */
void ctl_nflog_session_closed(struct nftdp_ctl *ctl, struct ctl_session *s);
/* Free every instance (nftdp_ctl_destroy). */
void ctl_nflog_destroy(struct nftdp_ctl *ctl);
/* One NFULNL_MSG_PACKET (__build_packet_message) into buf (room for the
 * event's prefix and data_len payload bytes plus 256); returns its length. */
int ctl_nflog_fill(void *buf, uint16_t group, uint16_t flags, uint32_t seq, uint32_t global_seq,
		   const struct nftdp_vm_nflog_event *ev, uint32_t data_len);

/* ---- server.c: the unix socket, one session per emulated netlink socket ---- */

/* What the server hands up (nfnetlink's netlink_rcv_skb and its release
 * hook): ctl.c passes ctl_nfnl_rcv and ctl_nfnl_session_closed, a test its
 * doubles, so server.c calls no file above it. */
struct ctl_server_ops {
	int (*rcv)(struct nftdp_ctl *ctl, struct ctl_session *s, const void *buf, size_t len);
	void (*closed)(struct nftdp_ctl *ctl, struct ctl_session *s);
};

int ctl_server_open(struct nftdp_ctl *ctl, const char *path, const struct ctl_server_ops *ops,
		    struct ctl_server **out);
int ctl_server_fd(const struct ctl_server *srv);
/* Listeners owed ENOBUFS or dumps waiting for room (nftdp_ctl_pending). */
bool ctl_server_pending(const struct ctl_server *srv);
/* Serve events for at most timeout_ms; calls ops->rcv per sendmsg. */
int ctl_server_poll(struct ctl_server *srv, int timeout_ms);
void ctl_server_close(struct ctl_server *srv);

/* Send buf (one datagram of whole netlink messages) to every session that
 * joined group (NFNLGRP_*, 1-based), skipping skip (may be NULL). false:
 * a NETLINK_BROADCAST_ERROR listener could not take it (netlink_broadcast's
 * -ENOBUFS); the others got it. */
bool ctl_server_multicast(struct ctl_server *srv, unsigned int group, const void *buf, size_t len,
			  const struct ctl_session *skip);

/* Whether any session joined group (nfnetlink_has_listeners). */
bool ctl_server_has_listeners(const struct ctl_server *srv, unsigned int group);
/* A listener of group with NETLINK_BROADCAST_ERROR has no room for a
 * notification now (netlink_broadcast would fail for it). */
bool ctl_server_group_blocked(const struct ctl_server *srv, unsigned int group);

uint32_t ctl_session_portid(const struct ctl_session *s);
pid_t ctl_session_pid(const struct ctl_session *s);
/* The peer process's name (/proc/PID/comm at connect), for NFTA_GEN_PROC_NAME. */
const char *ctl_session_comm(const struct ctl_session *s);
/* Whether the peer holds CAP_NET_ADMIN (its effective set when it connected). */
bool ctl_session_privileged(const struct ctl_session *s);
/* NETLINK_EXT_ACK / NETLINK_CAP_ACK as set by the peer. */
bool ctl_session_ext_ack(const struct ctl_session *s);
bool ctl_session_cap_ack(const struct ctl_session *s);
bool ctl_session_in_group(const struct ctl_session *s, unsigned int group);
/* Queue one datagram on the peer's netlink fd. 0 or -errno (-ENOBUFS when the
 * peer's queue is full: the answer is lost, as with a kernel socket). */
int ctl_session_send(struct ctl_session *s, const void *buf, size_t len);

/* ---- state.c: the nf_tables object store (ctl_state.h) ---- */

int ctl_state_create(struct nftdp_ctl *ctl);
void ctl_state_destroy(struct nftdp_ctl *ctl);

/* ---- nfnl.c: the nfnetlink side, called by server.c ---- */

/* One sendmsg's bytes from session s. Returns what sendmsg returns to nft
 * (0; the answers themselves are queued with ctl_session_send). */
int ctl_nfnl_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const void *buf, size_t len);
/* The session is gone: release what it owned (tables with the owner flag). */
void ctl_nfnl_session_closed(struct nftdp_ctl *ctl, struct ctl_session *s);

/* ---- ctnetlink.c: NFNL_SUBSYS_CTNETLINK (conntrack -L/-G/-D/-F/-C/-S/-E) ---- */

struct nlmsghdr;
struct nlattr;
struct nftdp_ct_info;
struct nftdp_ct_event;

/* One request of subsystem CTNETLINK from s (cfg.ct set or not). Answers
 * go straight to s; returns 0 (ack if asked), -EINTR (a dump, answered with
 * NLMSG_DONE: no ack) or -errno for the error ack, *bad the attribute. */
int ctl_ctnetlink_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		      const struct nlattr **bad);
/* One request of subsystem OSF (osf.c): OSF_MSG_ADD or OSF_MSG_REMOVE of
 * a fingerprint; 0 (ack if asked) or -errno, *bad the attribute. */
int ctl_osf_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		const struct nlattr **bad);
/* One request of subsystem NFT_COMPAT (compat.c): a revision query,
 * answered straight to s; 0 (ack if asked) or -errno, *bad the attribute. */
int ctl_compat_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		   const struct nlattr **bad);
/* A match or target expression of a new rule: its info as the kernel keeps
 * and dumps it (the extension's size, zero-padded to XT_ALIGN). */
struct nftnl_expr;
void ctl_compat_store_info(struct nftnl_expr *e, uint8_t family);
/* One request of subsystem IPSET (ipset.c): the ipset tool's commands,
 * answered straight to s; 0 (ack if asked), -EINTR (answered: a dump's
 * NLMSG_DONE or a restore line's error, no ack) or -errno (IPSET_ERR_*). */
int ctl_ipset_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		  const struct nlattr **bad);
/* Free every ipset set (nftdp_ctl_destroy). */
void ctl_ipset_destroy(struct nftdp_ctl *ctl);
/* -j SET: apply the adds and deletes the workers asked for, publish */
void ctl_ipset_events(struct nftdp_ctl *ctl);
/* The clock of element timeouts, in ms (CLOCK_MONOTONIC; tests replace it). */
extern uint64_t (*ctl_ipset_clock)(void);
/* NFNL_SUBSYS_CTNETLINK_EXP: conntrack -L expect (ctnetlink.c) */
int ctl_ctnetlink_exp_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
			  const struct nlattr **bad);
/* ctnetlink_fill_info: the IPCTNL_MSG_CT_NEW message of one entry into buf
 * (1024 bytes); returns its length. */
int ctl_ctnetlink_fill_info(void *buf, uint32_t seq, uint32_t portid, uint16_t flags,
			    const struct nftdp_ct_info *ci, bool acct);
/* ctnetlink_conntrack_event: the message of one event into buf (1024
 * bytes) and its NFNLGRP_CONNTRACK_* group; returns its length, 0 for none. */
int ctl_ctnetlink_fill_event(void *buf, uint32_t portid, const struct nftdp_ct_event *ev, bool acct,
			     unsigned int *group);

#endif
