/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The private wire protocol between the netlink shim (control/shim) and the
 * daemon's control socket. Shared by shim.c and server.c only.
 *
 * One SOCK_STREAM unix connection per emulated netlink socket. Every frame is
 * a ctl_wire_hdr followed by len payload bytes. Every shim->daemon frame is
 * answered by exactly one CTL_WIRE_DONE frame. Netlink answers do not travel
 * on the stream: the shim hands the daemon (SCM_RIGHTS, with HELLO) one end of
 * a SOCK_DGRAM socketpair whose other end is the fd nft holds, and the daemon
 * writes each answer datagram straight into it. Because the daemon writes all
 * answers before it writes DONE, they are queued on nft's fd by the time the
 * shim's sendmsg returns -- which is what nft's zero-timeout select() needs.
 * Multicast notifications (nft monitor) are written to the same fd at any time.
 */
#ifndef NFTDP_CTL_WIRE_H
#define NFTDP_CTL_WIRE_H

#include <stdint.h>

/* The datagram the daemon queues on the answer fd after it dropped
 * notifications for a full queue (netlink_overrun): shorter than any netlink
 * message; the shim's recvmsg turns it into -1/ENOBUFS. */
#define CTL_WIRE_OVERRUN "NFTDPOVR"
#define CTL_WIRE_OVERRUN_LEN 8

#define NFTDP_CTL_DEFAULT_SOCKET "/run/nftdp/nfnetlink.sock"
#define NFTDP_CTL_WIRE_VERSION 1

enum ctl_wire_type {
	/* shim->daemon: struct ctl_wire_hello, SCM_RIGHTS carries the answer fd.
	 * DONE payload: struct ctl_wire_hello_done. */
	CTL_WIRE_HELLO = 1,
	/* shim->daemon: the bytes of one sendmsg/sendto, iovecs concatenated.
	 * DONE payload: int32 status (0 or -errno, what sendmsg reports). */
	CTL_WIRE_NLMSG = 2,
	/* shim->daemon: struct ctl_wire_sockopt (SOL_NETLINK options). */
	CTL_WIRE_SOCKOPT = 3,
	/* shim->daemon: uint32 nl_groups bitmask from bind(). */
	CTL_WIRE_BIND = 4,
	/* daemon->shim: the answer to one frame. */
	CTL_WIRE_DONE = 5,
	/* shim->daemon, no payload: the peer found its queue empty (EAGAIN);
	 * queue more of a dump in progress, as netlink_recvmsg calls
	 * netlink_dump. DONE payload: int32 1 if anything is pending, else 0. */
	CTL_WIRE_PULL = 6,
};

struct ctl_wire_hdr {
	uint32_t type;
	uint32_t len; /* payload bytes following this header */
};

struct ctl_wire_hello {
	uint32_t version;  /* NFTDP_CTL_WIRE_VERSION */
	uint32_t protocol; /* NETLINK_NETFILTER */
};

struct ctl_wire_hello_done {
	int32_t status;	 /* 0 or -errno */
	uint32_t portid; /* the netlink port id the daemon assigned */
};

struct ctl_wire_sockopt {
	int32_t level;
	int32_t name;
	int32_t value;
};

#endif
