/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in daemon for the shim tests: control/server.c with a trivial
 * nfnetlink side that answers every netlink message of a sendmsg with an
 * ACK (NLMSG_ERROR, error 0, the request header echoed), and multicasts a
 * copy of each message's header to group 7 (NFNLGRP_NFTABLES) listeners.
 * Usage: ack_server SOCKET_PATH; runs until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "control_priv.h"

static struct ctl_server *srv;
static volatile sig_atomic_t stop;

static int ack_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const void *buf, size_t len)
{
	const char *p = buf;

	(void)ctl;
	while (len >= sizeof(struct nlmsghdr)) {
		struct {
			struct nlmsghdr nlh;
			struct nlmsgerr err;
		} ack;
		struct nlmsghdr req;

		memcpy(&req, p, sizeof(req));
		if (req.nlmsg_len < sizeof(req) || req.nlmsg_len > len)
			break;
		memset(&ack, 0, sizeof(ack));
		ack.nlh.nlmsg_len = sizeof(ack);
		ack.nlh.nlmsg_type = NLMSG_ERROR;
		ack.nlh.nlmsg_flags = NLM_F_CAPPED;
		ack.nlh.nlmsg_seq = req.nlmsg_seq;
		ack.nlh.nlmsg_pid = ctl_session_portid(s);
		ack.err.msg = req;
		ctl_session_send(s, &ack, sizeof(ack));
		ctl_server_multicast(srv, 7, &req, sizeof(req), s);
		len -= NLMSG_ALIGN(req.nlmsg_len) < len ? NLMSG_ALIGN(req.nlmsg_len) : len;
		p += NLMSG_ALIGN(req.nlmsg_len);
	}
	return 0;
}

static void ack_closed(struct nftdp_ctl *ctl, struct ctl_session *s)
{
	(void)ctl;
	(void)s;
}

static const struct ctl_server_ops ack_ops = {.rcv = ack_rcv, .closed = ack_closed};

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct nftdp_ctl ctl = {0};
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET_PATH\n", argv[0]);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	ret = ctl_server_open(&ctl, argv[1], &ack_ops, &srv);
	if (ret < 0) {
		fprintf(stderr, "ack_server: %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	while (!stop) {
		ret = ctl_server_poll(srv, 100);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "ack_server: poll: %s\n", strerror(-ret));
			break;
		}
	}
	ctl_server_close(srv);
	return ret < 0 && ret != -EINTR ? 1 : 0;
}
