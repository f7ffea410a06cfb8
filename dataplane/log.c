/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `log` statements: the control thread drains every worker's log ring
 * (nftdp_vm_log_poll) and prints each event the way the kernel's nf_log
 * does (net/netfilter/nf_log_syslog.c, dump_ipv4_packet / dump_ipv6_packet),
 * one line on stdout. The event holds the packet from its network header,
 * so no MAC= field is printed.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter/nf_log.h>

#include "dataplane_priv.h"

struct line {
	char buf[1024];
	size_t n;
};

__attribute__((format(printf, 2, 3))) static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (l->n >= sizeof(l->buf))
		return;
	va_start(ap, fmt);
	r = vsnprintf(l->buf + l->n, sizeof(l->buf) - l->n, fmt, ap);
	va_end(ap);
	if (r > 0)
		l->n += (size_t)r;
}

static const char *ifname(const struct nftdp_dp *dp, uint32_t ifindex)
{
	if (ifindex >= 1 && ifindex <= dp->n_ports)
		return dp->port[ifindex - 1].name;
	return "";
}

static void l4(struct line *l, uint8_t proto, const uint8_t *t, uint32_t avail, bool frag,
	       uint32_t logflags)
{
	if (frag)
		return;
	switch (proto) {
	case IPPROTO_TCP:
		put(l, "PROTO=TCP ");
		if (avail < 20) {
			put(l, "INCOMPLETE [%u bytes] ", avail);
			return;
		}
		put(l, "SPT=%u DPT=%u ", nftdp_rd16(t), nftdp_rd16(t + 2));
		if (logflags & NF_LOG_TCPSEQ)
			put(l, "SEQ=%u ACK=%u ", nftdp_rd32(t + 4), nftdp_rd32(t + 8));
		put(l, "WINDOW=%u RES=0x%02x ", nftdp_rd16(t + 14), (t[12] & 0x0e) >> 1);
		{
			static const char *const names[] = {"CWR ", "ECE ", "URG ", "ACK ",
							    "PSH ", "RST ", "SYN ", "FIN "};
			for (unsigned int i = 0; i < 8; i++)
				if (t[13] & (0x80 >> i))
					put(l, "%s", names[i]);
		}
		put(l, "URGP=%u ", nftdp_rd16(t + 18));
		break;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
		put(l, "PROTO=%s ", proto == IPPROTO_UDP ? "UDP" : "UDPLITE");
		if (avail < 8) {
			put(l, "INCOMPLETE [%u bytes] ", avail);
			return;
		}
		put(l, "SPT=%u DPT=%u LEN=%u ", nftdp_rd16(t), nftdp_rd16(t + 2),
		    nftdp_rd16(t + 4));
		break;
	case IPPROTO_ICMP:
		put(l, "PROTO=ICMP ");
		if (avail < 4) {
			put(l, "INCOMPLETE [%u bytes] ", avail);
			return;
		}
		put(l, "TYPE=%u CODE=%u ", t[0], t[1]);
		if ((t[0] == 0 || t[0] == 8) && avail >= 8)
			put(l, "ID=%u SEQ=%u ", nftdp_rd16(t + 4), nftdp_rd16(t + 6));
		break;
	case IPPROTO_ICMPV6:
		put(l, "PROTO=ICMPv6 ");
		if (avail < 4) {
			put(l, "INCOMPLETE [%u bytes] ", avail);
			return;
		}
		put(l, "TYPE=%u CODE=%u ", t[0], t[1]);
		if ((t[0] == 128 || t[0] == 129) && avail >= 8)
			put(l, "ID=%u SEQ=%u ", nftdp_rd16(t + 4), nftdp_rd16(t + 6));
		break;
	default:
		put(l, "PROTO=%u ", proto);
		break;
	}
}

static void print_event(const struct nftdp_vm_log_event *ev, void *arg)
{
	const struct nftdp_dp *dp = arg;
	const uint8_t *p = ev->pkt;
	uint32_t cap = ev->caplen < sizeof(ev->pkt) ? ev->caplen : sizeof(ev->pkt);
	struct line l = {.n = 0};
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	if (ev->flags & NFTDP_VM_LOG_F_EBT) { /* ebtables' log: ebt_log_packet's line */
		l.n = nftdp_vm_ebt_log_line(ev, ifname(dp, ev->iif), ifname(dp, ev->oif), l.buf,
					    sizeof(l.buf));
		printf("%.*s\n", (int)l.n, l.buf);
		return;
	}
	put(&l, "%sIN=%s OUT=%s ", ev->prefix, ifname(dp, ev->iif), ifname(dp, ev->oif));
	if (cap >= 20 && (p[0] >> 4) == 4) {
		uint32_t ihl = (p[0] & 0xfu) * 4, fo = nftdp_rd16(p + 6);

		inet_ntop(AF_INET, p + 12, a, sizeof(a));
		inet_ntop(AF_INET, p + 16, b, sizeof(b));
		put(&l, "SRC=%s DST=%s LEN=%u TOS=0x%02X PREC=0x%02X TTL=%u ID=%u ", a, b,
		    nftdp_rd16(p + 2), p[1] & 0x1e, p[1] & 0xe0, p[8], nftdp_rd16(p + 4));
		if (fo & 0x8000)
			put(&l, "CE ");
		if (fo & 0x4000)
			put(&l, "DF ");
		if (fo & 0x2000)
			put(&l, "MF ");
		if (fo & 0x1fff)
			put(&l, "FRAG:%u ", fo & 0x1fff);
		if (cap > ihl)
			l4(&l, p[9], p + ihl, cap - ihl, (fo & 0x1fff) != 0, ev->flags);
		else
			put(&l, "PROTO=%u ", p[9]);
	} else if (cap >= 40 && (p[0] >> 4) == 6) {
		inet_ntop(AF_INET6, p + 8, a, sizeof(a));
		inet_ntop(AF_INET6, p + 24, b, sizeof(b));
		put(&l, "SRC=%s DST=%s LEN=%u TC=%u HOPLIMIT=%u FLOWLBL=%u ", a, b,
		    nftdp_rd16(p + 4) + 40u, (unsigned int)((nftdp_rd32(p) >> 20) & 0xff), p[7],
		    nftdp_rd32(p) & 0xfffff);
		/* extension headers are not walked: the next header as given */
		l4(&l, p[6], p + 40, cap - 40, false, ev->flags);
	}
	if (ev->mark)
		put(&l, "MARK=0x%x ", ev->mark);
	printf("%.*s\n", (int)l.n, l.buf);
}

void nftdp_dp_log_drain(struct nftdp_dp *dp)
{
	bool any = false;

	for (unsigned int i = 0; i < dp->n_workers; i++)
		any |= nftdp_vm_log_poll(dp->state, i, print_event, dp, NULL) > 0;
	if (any)
		fflush(stdout);
	nftdp_dp_ct_log_table_full(dp); /* the kernel's conntrack line, stats.c */
}
