// SPDX-License-Identifier: BSD-3-Clause
/*
 * ebtables' log and nflog watchers, as ebtables-nft sends them (target
 * expressions of the bridge family; net/bridge/netfilter/ebt_log.c,
 * ebt_nflog.c). nflog runs as the native `log group` (nf_log_packet with
 * NFPROTO_BRIDGE and NF_LOG_TYPE_ULOG, what nft's log does in a bridge
 * chain): nfnetlink_log delivers it (nflog.c). log prints ebt_log_packet's
 * own line, not nf_log's: the worker records the link-layer header and
 * the network header in its log ring (NFTDP_VM_LOG_F_EBT) and the control
 * thread formats the line (nftdp_vm_ebt_log_line). Both go on
 * (EBT_CONTINUE).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nf_log.h>
#include <linux/netfilter_bridge/ebt_log.h>
#include <linux/netfilter_bridge/ebt_nflog.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h> /* before libnftnl: it uses FILE */
#include <string.h>

#include <libnftnl/expr.h>

#include "compat.h"
#include "vm_priv.h"

/* the info as ebt_log_tg_check leaves it (prefix ended), in a blob */
struct ebt_log_priv {
	const struct ebt_log_info *info;
};
NFTDP_VM_PRIV_CHECK(struct ebt_log_priv);

/* ebt_log_tg_check: known flags (EBT_LOG_NFLOG is not among them), a
 * syslog level, the prefix ended */
int nftdp_vm_compat_ebt_log_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	const struct ebt_log_info *i = par->info;
	struct ebt_log_info *b;

	if ((i->bitmask & ~EBT_LOG_MASK) || i->loglevel >= 8)
		return nftdp_vm_errf(cc, -EINVAL, "ebtables log: invalid options");
	if (!priv)
		return 0;
	b = nftdp_vm_blob(cc, sizeof(*b));
	if (!b)
		return -ENOMEM;
	*b = *i;
	b->prefix[EBT_LOG_PREFIX_SIZE - 1] = 0;
	((struct ebt_log_priv *)priv)->info = b;
	return 0;
}

/* ebt_log_tg: the frame's MAC header (the ethertype the bridge sees,
 * after an outer tag) and network header into the log ring */
static void ebt_log_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_log_info *i = ((const struct ebt_log_priv *)(const void *)op->priv)->info;
	struct nftdp_vm_log_event ev;
	uint32_t avail = pkt->len > pkt->nh_off ? pkt->len - pkt->nh_off : 0;
	uint32_t room = sizeof(ev.pkt) - 14;

	(void)regs;
	if (!ctx->state || pkt->mac_off < 0 || pkt->nh_off < (uint32_t)pkt->mac_off + 14)
		return;
	memset(ev.prefix, 0, sizeof(ev.prefix));
	memcpy(ev.prefix, i->prefix, EBT_LOG_PREFIX_SIZE);
	ev.level = i->loglevel;
	ev.group = 0;
	ev.group_set = false;
	ev.flags = i->bitmask | NFTDP_VM_LOG_F_EBT;
	ev.snaplen = avail; /* the network header's bytes in the frame */
	ev.family = pkt->nfproto;
	ev.hook = pkt->hook;
	ev.iif = pkt->iif;
	ev.oif = pkt->oif;
	ev.mark = pkt->mark;
	memcpy(ev.pkt, pkt->data + pkt->mac_off, 12);	     /* h_dest, h_source */
	memcpy(ev.pkt + 12, pkt->data + pkt->nh_off - 2, 2); /* h_proto */
	ev.caplen = (uint16_t)(14 + (avail < room ? avail : room));
	memcpy(ev.pkt + 14, pkt->data + pkt->nh_off, ev.caplen - 14u);
	nftdp_vm_log_record(ctx->state, ctx->worker, &ev);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_log_ops = {
    .name = "target (ebtables) log",
    .size = sizeof(struct ebt_log_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = ebt_log_eval,
};

/* ebt_nflog_tg_check, then ebt_nflog_tg as `log group`: group, queue
 * threshold and prefix; copy_len is not used (li.u.ulog.flags 0) */
int nftdp_vm_compat_ebt_nflog_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				    void *priv)
{
	const struct ebt_nflog_info *i = par->info;
	char prefix[EBT_NFLOG_PREFIX_SIZE];
	struct nftnl_expr *e;

	if (i->flags & ~EBT_NFLOG_MASK)
		return nftdp_vm_errf(cc, -EINVAL, "ebtables nflog: invalid options");
	if (!priv)
		return 0;
	memcpy(prefix, i->prefix, sizeof(prefix));
	prefix[sizeof(prefix) - 1] = 0;
	e = nftdp_vm_compat_group_log(i->group, i->threshold, prefix);
	if (!e)
		return -ENOMEM;
	return nftdp_vm_compat_become(cc, priv, &nftdp_vm_expr_log, e);
}

/* the ops of nflog until it becomes log: init only */
const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_nflog_ops = {
    .name = "target (ebtables) nflog",
    .init = nftdp_vm_compat_target_init,
};

/* ---- the line (control thread) ---- */

struct line {
	char *buf;
	size_t size, n;
};

__attribute__((format(printf, 2, 3))) static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (l->n >= l->size)
		return;
	va_start(ap, fmt);
	r = vsnprintf(l->buf + l->n, l->size - l->n, fmt, ap);
	va_end(ap);
	if (r > 0)
		l->n = l->n + (size_t)r < l->size ? l->n + (size_t)r : l->size - 1;
}

/* %pM */
static void put_mac(struct line *l, const uint8_t *m)
{
	put(l, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* %pI4 */
static void put_ip4(struct line *l, const uint8_t *a)
{
	put(l, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

/* %pI6: eight groups of four hex digits, not compressed */
static void put_ip6(struct line *l, const uint8_t *a)
{
	for (unsigned int k = 0; k < 16; k += 2)
		put(l, "%s%02x%02x", k ? ":" : "", a[k], a[k + 1]);
}

/* print_ports; off from the network header; net: the network header's
 * recorded bytes, len: the frame's */
static void put_ports(struct line *l, uint8_t proto, uint32_t off, const uint8_t *net, uint32_t cap,
		      uint32_t len)
{
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP && proto != IPPROTO_UDPLITE &&
	    proto != IPPROTO_SCTP && proto != IPPROTO_DCCP)
		return;
	if ((uint64_t)off + 4 > len || (uint64_t)off + 4 > cap) {
		/* past the frame; past the recorded bytes (a long chain of
		 * extension headers) reads the same (docs/differences.md) */
		put(l, " INCOMPLETE TCP/UDP header");
		return;
	}
	put(l, " SPT=%u DPT=%u", (unsigned int)(net[off] << 8 | net[off + 1]),
	    (unsigned int)(net[off + 2] << 8 | net[off + 3]));
}

size_t nftdp_vm_ebt_log_line(const struct nftdp_vm_log_event *ev, const char *in, const char *out,
			     char *buf, size_t size)
{
	struct line l = {.buf = buf, .size = size, .n = 0};
	uint32_t caplen = ev->caplen < sizeof(ev->pkt) ? ev->caplen : sizeof(ev->pkt);
	const uint8_t *net = ev->pkt + 14;
	uint32_t cap = caplen > 14 ? caplen - 14 : 0, len = ev->snaplen;
	uint32_t bitmask = ev->flags & ~NFTDP_VM_LOG_F_EBT;
	uint16_t proto;
	char prefix[EBT_LOG_PREFIX_SIZE];

	if (size == 0)
		return 0;
	buf[0] = 0;
	if (caplen < 14)
		return 0;
	memcpy(prefix, ev->prefix, sizeof(prefix));
	prefix[sizeof(prefix) - 1] = 0;
	proto = (uint16_t)(ev->pkt[12] << 8 | ev->pkt[13]);
	put(&l, "%s IN=%s OUT=%s MAC source = ", prefix, in ? in : "", out ? out : "");
	put_mac(&l, ev->pkt + 6);
	put(&l, " MAC dest = ");
	put_mac(&l, ev->pkt);
	put(&l, " proto = 0x%04x", proto);
	if (len > cap && cap < sizeof(ev->pkt) - 14)
		len = cap; /* never read past what was recorded */
	if ((bitmask & EBT_LOG_IP) && proto == 0x0800) {
		if (len < 20 || cap < 20) {
			put(&l, " INCOMPLETE IP header");
			return l.n;
		}
		put(&l, " IP SRC=");
		put_ip4(&l, net + 12);
		put(&l, " IP DST=");
		put_ip4(&l, net + 16);
		put(&l, ", IP tos=0x%02X, IP proto=%d", net[1], net[9]);
		put_ports(&l, net[9], (net[0] & 0xfu) * 4u, net, cap, len);
		return l.n;
	}
	if ((bitmask & EBT_LOG_IP6) && proto == 0x86dd) {
		struct nftdp_vm_pkt p;
		uint8_t nexthdr;
		int off;

		if (len < 40 || cap < 40) {
			put(&l, " INCOMPLETE IPv6 header");
			return l.n;
		}
		put(&l, " IPv6 SRC=");
		put_ip6(&l, net + 8);
		put(&l, " IPv6 DST=");
		put_ip6(&l, net + 24);
		put(&l, ", IPv6 priority=0x%01X, Next Header=%d", net[0] & 0xfu, net[6]);
		/* ipv6_skip_exthdr over the recorded bytes */
		memset(&p, 0, sizeof(p));
		p.data = (uint8_t *)(uintptr_t)net;
		p.len = cap;
		p.nh_off = 0;
		nexthdr = net[6];
		off = nftdp_vm_ebt_ipv6_skip(&p, &nexthdr);
		if (off < 0)
			return l.n;
		put_ports(&l, nexthdr, (uint32_t)off, net, cap, len);
		return l.n;
	}
	if ((bitmask & EBT_LOG_ARP) && (proto == 0x0806 || proto == 0x8035)) {
		if (len < 8 || cap < 8) {
			put(&l, " INCOMPLETE ARP header");
			return l.n;
		}
		put(&l, " ARP HTYPE=%d, PTYPE=0x%04x, OPCODE=%d", net[0] << 8 | net[1],
		    (unsigned int)(net[2] << 8 | net[3]), net[6] << 8 | net[7]);
		if (net[0] == 0 && net[1] == 1 && net[4] == 6 && net[5] == 4) {
			if (len < 28 || cap < 28) {
				put(&l, " INCOMPLETE ARP payload");
				return l.n;
			}
			put(&l, " ARP MAC SRC=");
			put_mac(&l, net + 8);
			put(&l, " ARP IP SRC=");
			put_ip4(&l, net + 14);
			put(&l, " ARP MAC DST=");
			put_mac(&l, net + 18);
			put(&l, " ARP IP DST=");
			put_ip4(&l, net + 24);
		}
	}
	return l.n;
}
