// SPDX-License-Identifier: BSD-3-Clause
/*
 * --ct-sysctl NAME=VALUE: conntrack's tunables under the names the kernel's
 * net.netfilter sysctls have, so a kernel firewall's sysctl.conf lines carry
 * over. Timeouts are in seconds, booleans 0 or 1. No EAL: unit-tested alone.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane_priv.h"
#include "nftdp_conntrack.h"

enum knob_kind { K_TIMEOUT, K_BOOL, K_BOOL_INVERTED, K_U8 };

struct knob {
	const char *name;
	enum knob_kind kind;
	size_t off; /* into struct nftdp_ct_timeouts or struct nftdp_ct_config */
};

#define TMO(name, field)                                                                           \
	{                                                                                          \
		name, K_TIMEOUT, offsetof(struct nftdp_ct_timeouts, field)                         \
	}
#define TCP(name, state) TMO("nf_conntrack_tcp_timeout_" name, tcp[TCP_CONNTRACK_##state])
#define SCTP(name, state) TMO("nf_conntrack_sctp_timeout_" name, sctp[SCTP_CONNTRACK_##state])
#define CFG(name, kind, field)                                                                     \
	{                                                                                          \
		name, kind, offsetof(struct nftdp_ct_config, field)                                \
	}

static const struct knob knobs[] = {
    TCP("syn_sent", SYN_SENT),
    TCP("syn_recv", SYN_RECV),
    TCP("established", ESTABLISHED),
    TCP("fin_wait", FIN_WAIT),
    TCP("close_wait", CLOSE_WAIT),
    TCP("last_ack", LAST_ACK),
    TCP("time_wait", TIME_WAIT),
    TCP("close", CLOSE),
    TCP("max_retrans", RETRANS),
    TCP("unacknowledged", UNACK),
    TMO("nf_conntrack_udp_timeout", udp_unreplied),
    TMO("nf_conntrack_udp_timeout_stream", udp_replied),
    TMO("nf_conntrack_icmp_timeout", icmp),
    TMO("nf_conntrack_icmpv6_timeout", icmpv6),
    TMO("nf_conntrack_generic_timeout", generic),
    TMO("nf_conntrack_gre_timeout", gre_unreplied),
    TMO("nf_conntrack_gre_timeout_stream", gre_replied),
    SCTP("closed", CLOSED),
    SCTP("cookie_wait", COOKIE_WAIT),
    SCTP("cookie_echoed", COOKIE_ECHOED),
    SCTP("established", ESTABLISHED),
    SCTP("shutdown_sent", SHUTDOWN_SENT),
    SCTP("shutdown_recd", SHUTDOWN_RECD),
    SCTP("shutdown_ack_sent", SHUTDOWN_ACK_SENT),
    SCTP("heartbeat_sent", HEARTBEAT_SENT),
    CFG("nf_conntrack_tcp_be_liberal", K_BOOL, tcp_be_liberal),
    CFG("nf_conntrack_tcp_loose", K_BOOL_INVERTED, tcp_no_loose),
    CFG("nf_conntrack_tcp_max_retrans", K_U8, tcp_max_retrans),
    CFG("nf_conntrack_checksum", K_BOOL_INVERTED, no_checksum),
    CFG("nf_conntrack_acct", K_BOOL, acct),
};

int nftdp_dp_ct_sysctl(struct nftdp_ct_config *cfg, struct nftdp_ct_timeouts *tmo, const char *arg)
{
	static const char prefix[] = "net.netfilter.";
	const char *eq = strchr(arg, '='), *name = arg;
	size_t len;
	unsigned long v;
	char *end;

	if (eq == NULL || eq[1] == '\0')
		return -EINVAL;
	if (strncmp(name, prefix, sizeof(prefix) - 1) == 0)
		name += sizeof(prefix) - 1;
	len = (size_t)(eq - name);
	errno = 0;
	v = strtoul(eq + 1, &end, 10);
	if (errno || *end || eq[1] == '-')
		return -EINVAL;
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		const struct knob *k = &knobs[i];

		if (strlen(k->name) != len || strncmp(k->name, name, len) != 0)
			continue;
		switch (k->kind) {
		case K_TIMEOUT:
			/* the kernel keeps jiffies in an int: seconds up to INT_MAX / HZ */
			if (v > 2147483u)
				return -ERANGE;
			*(uint32_t *)(void *)((char *)tmo + k->off) = (uint32_t)v;
			return 0;
		case K_BOOL:
		case K_BOOL_INVERTED:
			if (v > 1)
				return -ERANGE;
			*(bool *)((char *)cfg + k->off) = (v == 1) == (k->kind == K_BOOL);
			return 0;
		case K_U8:
			/* 0 in the config means the default (3) */
			if (v == 0 || v > 255)
				return -ERANGE;
			*(uint8_t *)((char *)cfg + k->off) = (uint8_t)v;
			return 0;
		}
	}
	return -ENOENT;
}
