// SPDX-License-Identifier: BSD-3-Clause
/*
 * xtables matches the match expression runs (expr_compat.c does the
 * generic checks). One block per extension, each mirroring its
 * net/netfilter/xt_<name>.c (or ipv4/ipv6 ip*t_*.c): checkentry as
 * <name>_check, the match function as <name>_eval. No allocation on the
 * packet path: what a match needs beyond the op's 40 bytes is a blob of
 * the chain, made at compile.
 */
#include <arpa/inet.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <linux/if_packet.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_addrtype.h>
#include <linux/netfilter/xt_comment.h>
#include <linux/netfilter/xt_connlimit.h>
#include <linux/netfilter/xt_connmark.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_dscp.h>
#include <linux/netfilter/xt_ecn.h>
#include <linux/netfilter/xt_hashlimit.h>
#include <linux/netfilter/xt_helper.h>
#include <linux/netfilter/xt_iprange.h>
#include <linux/netfilter/xt_length.h>
#include <linux/netfilter/xt_limit.h>
#include <linux/netfilter/xt_mac.h>
#include <linux/netfilter/xt_mark.h>
#include <linux/netfilter/xt_multiport.h>
#include <linux/netfilter/xt_owner.h>
#include <linux/netfilter/xt_physdev.h>
#include <linux/netfilter/xt_pkttype.h>
#include <linux/netfilter/xt_policy.h>
#include <linux/netfilter/xt_quota.h>
#include <linux/netfilter/xt_recent.h>
#include <linux/netfilter/xt_rpfilter.h>
#include <linux/netfilter/xt_set.h>
#include <linux/netfilter/xt_socket.h>
#include <linux/netfilter/xt_state.h>
#include <linux/netfilter/xt_statistic.h>
#include <linux/netfilter/xt_string.h>
#include <linux/netfilter/xt_tcpmss.h>
#include <linux/netfilter/xt_tcpudp.h>
#include <linux/netfilter/xt_time.h>
#include <linux/netfilter/xt_u32.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv4/ipt_ttl.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/netfilter_ipv6/ip6t_frag.h>
#include <linux/netfilter_ipv6/ip6t_hl.h>
#include <linux/netfilter_ipv6/ip6t_ipv6header.h>
#include <linux/netfilter_ipv6/ip6t_opts.h>
#include <linux/netfilter_ipv6/ip6t_rt.h>
#include <linux/rtnetlink.h>

#include "compat.h"

#define HOOKS_ALL 0
#define SOCKET_HOOKS (COMPAT_HOOK(NF_INET_PRE_ROUTING) | COMPAT_HOOK(NF_INET_LOCAL_IN))

/* ---- comment (xt_comment.c): always true ---- */

static void comment_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)op, (void)regs, (void)pkt, (void)ctx;
}

static const struct nftdp_vm_expr_ops comment_ops = {
    .name = "match comment",
    .flow = NFTDP_VM_FLOW_REGS, /* reads nothing */
    .init = nftdp_vm_compat_match_init,
    .eval = comment_eval,
};

/* ---- mark (xt_mark.c, rev 1) and connmark (xt_connmark.c, rev 1) ---- */

struct mark_priv {
	uint32_t mark, mask;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct mark_priv);

static int mark_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_mark_mtinfo1 *i = par->info;
	struct mark_priv *p = priv;

	(void)cc;
	p->mark = i->mark;
	p->mask = i->mask;
	p->invert = i->invert;
	return 0;
}

static void mark_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct mark_priv *p = (const void *)op->priv;

	(void)ctx;
	compat_match_result(regs, ((pkt->mark & p->mask) == p->mark) ^ p->invert);
}

static const struct nftdp_vm_expr_ops mark_ops = {
    .name = "match mark",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct mark_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = mark_eval,
};

static void connmark_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct mark_priv *p = (const void *)op->priv;
	uint32_t ctmark = 0;

	(void)ctx;
	if (!pkt->ct || !pkt->ct_ops ||
	    !pkt->ct_ops->get(pkt->ct, NFT_CT_MARK, IP_CT_DIR_ORIGINAL, &ctmark, 4)) {
		compat_match_result(regs, false);
		return;
	}
	compat_match_result(regs, ((ctmark & p->mask) == p->mark) ^ p->invert);
}

static const struct nftdp_vm_expr_ops connmark_ops = {
    .name = "match connmark",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct mark_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = connmark_eval,
};

/* ---- conntrack (xt_conntrack.c, rev 3) and state (xt_state.c) ---- */

struct conntrack_priv {
	uint16_t match_flags, invert_flags, state_mask, status_mask;
	bool state; /* the state match: its own untracked bit, no NAT bits */
};
NFTDP_VM_PRIV_CHECK(struct conntrack_priv);

#define CONNTRACK_RUN (XT_CONNTRACK_STATE | XT_CONNTRACK_STATUS | XT_CONNTRACK_STATE_ALIAS)

static int conntrack_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_conntrack_mtinfo3 *i = par->info;
	struct conntrack_priv *p = priv;

	if (i->match_flags & ~CONNTRACK_RUN)
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "match conntrack: only --ctstate and --ctstatus are supported "
				     "by nftdp (flags 0x%x)",
				     i->match_flags);
	p->match_flags = i->match_flags;
	p->invert_flags = i->invert_flags;
	p->state_mask = i->state_mask;
	p->status_mask = i->status_mask;
	return 0;
}

static int state_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_state_info *i = par->info;
	struct conntrack_priv *p = priv;

	(void)cc;
	p->match_flags = XT_CONNTRACK_STATE;
	p->state_mask = (uint16_t)i->statemask;
	p->state = true;
	return 0;
}

/* XT_CONNTRACK_STATE_BIT(ctinfo) of the packet, as ct state reads it
 * (the same bits as NF_CT_STATE_BIT); untracked is bit 6 for state
 * (XT_STATE_UNTRACKED) but bit 8 for conntrack, whose bits 6 and 7 are
 * SNAT and DNAT */
static uint32_t ct_statebit(const struct nftdp_vm_pkt *pkt, uint32_t untracked)
{
	if (pkt->ct && pkt->ct_ops && pkt->ct_ops->state)
		return pkt->ct_ops->state(pkt->ct);
	if (pkt->ct_zone_dir)
		return XT_STATE_BIT(IP_CT_NEW);
	if (pkt->ct_untracked)
		return untracked;
	return XT_STATE_INVALID;
}

static void conntrack_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct conntrack_priv *p = (const void *)op->priv;
	bool tracked = pkt->ct && pkt->ct_ops;
	uint32_t statebit =
	    ct_statebit(pkt, p->state ? XT_STATE_UNTRACKED : XT_CONNTRACK_STATE_UNTRACKED);
	uint32_t status = 0;

	(void)ctx;
	if (tracked)
		pkt->ct_ops->get(pkt->ct, NFT_CT_STATUS, IP_CT_DIR_ORIGINAL, &status, 4);
	if (p->match_flags & XT_CONNTRACK_STATE) {
		if (p->state)
			status = 0; /* state_mt has no NAT bits */
		if (status & IPS_SRC_NAT)
			statebit |= XT_CONNTRACK_STATE_SNAT;
		if (status & IPS_DST_NAT)
			statebit |= XT_CONNTRACK_STATE_DNAT;
		if (!!(p->state_mask & statebit) ^ !(p->invert_flags & XT_CONNTRACK_STATE)) {
			compat_match_result(regs, false);
			return;
		}
	}
	if (!tracked) {
		compat_match_result(regs, p->match_flags & XT_CONNTRACK_STATE);
		return;
	}
	if ((p->match_flags & XT_CONNTRACK_STATUS) &&
	    (!!(p->status_mask & status) ^ !(p->invert_flags & XT_CONNTRACK_STATUS))) {
		compat_match_result(regs, false);
		return;
	}
}

static const struct nftdp_vm_expr_ops conntrack_ops = {
    .name = "match conntrack",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct conntrack_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = conntrack_eval,
};

/* ---- pkttype (xt_pkttype.c) ---- */

struct pkttype_priv {
	int32_t pkttype;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct pkttype_priv);

static int pkttype_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_pkttype_info *i = par->info;
	struct pkttype_priv *p = priv;

	(void)cc;
	p->pkttype = i->pkttype;
	p->invert = i->invert != 0;
	return 0;
}

static void pkttype_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct pkttype_priv *p = (const void *)op->priv;
	uint8_t daddr0 = 0;
	int type;

	(void)ctx;
	if (pkt->pkttype != PACKET_LOOPBACK)
		type = pkt->pkttype;
	else if (pkt->nfproto == NFPROTO_IPV4 &&
		 nftdp_vm_copy_bits(pkt, pkt->nh_off + 16, &daddr0, 1) && (daddr0 & 0xf0) == 0xe0)
		type = PACKET_MULTICAST;
	else if (pkt->nfproto == NFPROTO_IPV6)
		type = PACKET_MULTICAST;
	else
		type = PACKET_BROADCAST;
	compat_match_result(regs, (type == p->pkttype) ^ p->invert);
}

static const struct nftdp_vm_expr_ops pkttype_ops = {
    .name = "match pkttype",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct pkttype_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = pkttype_eval,
};

/* ---- length (xt_length.c) ---- */

struct length_priv {
	uint16_t min, max;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct length_priv);

static int length_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_length_info *i = par->info;
	struct length_priv *p = priv;

	(void)cc;
	p->min = i->min;
	p->max = i->max;
	p->invert = i->invert != 0;
	return 0;
}

static void length_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct length_priv *p = (const void *)op->priv;
	uint16_t be = 0;
	uint32_t len;

	(void)ctx;
	/* length_mt: the IP header's total length, ipv6 payload + 40 */
	if (pkt->nfproto == NFPROTO_IPV4) {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + 2, &be, 2);
		len = ntohs(be);
	} else {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + 4, &be, 2);
		len = ntohs(be) + 40u;
	}
	compat_match_result(regs, (len >= p->min && len <= p->max) ^ p->invert);
}

static const struct nftdp_vm_expr_ops length_ops = {
    .name = "match length",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct length_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = length_eval,
};

/* ---- mac (xt_mac.c) ---- */

struct mac_priv {
	uint8_t src[6];
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct mac_priv);

static int mac_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_mac_info *i = par->info;
	struct mac_priv *p = priv;

	(void)cc;
	memcpy(p->src, i->srcaddr, 6);
	p->invert = i->invert != 0;
	return 0;
}

static void mac_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct mac_priv *p = (const void *)op->priv;
	uint8_t src[6];

	(void)ctx;
	/* mac_mt: an Ethernet device with a whole link-layer header */
	if (pkt->iiftype != 1 /* ARPHRD_ETHER */ || pkt->mac_off < 0 ||
	    !nftdp_vm_copy_bits(pkt, pkt->mac_off + 6, src, 6) ||
	    (uint32_t)pkt->mac_off + 14 > pkt->nh_off) {
		compat_match_result(regs, false);
		return;
	}
	compat_match_result(regs, (memcmp(src, p->src, 6) == 0) ^ p->invert);
}

static const struct nftdp_vm_expr_ops mac_ops = {
    .name = "match mac",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct mac_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = mac_eval,
};

/* ---- the info itself, in a blob of the chain (multiport, iprange) ---- */

struct blob_priv {
	const void *info;
};
NFTDP_VM_PRIV_CHECK(struct blob_priv);

static int blob_keep(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
		     size_t size)
{
	struct blob_priv *p = priv;
	void *b = nftdp_vm_blob(cc, size);

	if (!b)
		return -ENOMEM;
	memcpy(b, par->info, size);
	p->info = b;
	return 0;
}

/* ---- multiport (xt_multiport.c, rev 1) ---- */

static int multiport_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_multiport_v1 *i = par->info;

	/* check(): a protocol with ports, not inverted; flags and count */
	switch (par->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		if (!par->inv_proto)
			break;
		/* fall through */
	default:
		return nftdp_vm_errf(cc, -EINVAL, "match multiport: needs -p tcp/udp/...");
	}
	if ((i->flags != XT_MULTIPORT_SOURCE && i->flags != XT_MULTIPORT_DESTINATION &&
	     i->flags != XT_MULTIPORT_EITHER) ||
	    i->count > XT_MULTI_PORTS)
		return nftdp_vm_errf(cc, -EINVAL, "match multiport: bad flags or count");
	return blob_keep(cc, par, priv, sizeof(*i));
}

/* ports_match_v1 */
static bool ports_match(const struct xt_multiport_v1 *m, uint16_t src, uint16_t dst)
{
	for (unsigned int i = 0; i < m->count; i++) {
		uint16_t s = m->ports[i];

		if (m->pflags[i]) {
			uint16_t e = m->ports[++i];

			if ((m->flags == XT_MULTIPORT_SOURCE && src >= s && src <= e) ||
			    (m->flags == XT_MULTIPORT_DESTINATION && dst >= s && dst <= e) ||
			    (m->flags == XT_MULTIPORT_EITHER &&
			     ((dst >= s && dst <= e) || (src >= s && src <= e))))
				return !m->invert;
		} else if ((m->flags == XT_MULTIPORT_SOURCE && src == s) ||
			   (m->flags == XT_MULTIPORT_DESTINATION && dst == s) ||
			   (m->flags == XT_MULTIPORT_EITHER && (src == s || dst == s))) {
			return !m->invert;
		}
	}
	return m->invert;
}

static void multiport_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct blob_priv *p = (const void *)op->priv;
	uint16_t pp[2];

	(void)ctx;
	if (pkt->fragoff) {
		compat_match_result(regs, false);
		return;
	}
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) ||
	    !nftdp_vm_copy_bits(pkt, pkt->th_off, pp, 4)) {
		regs->verdict.code = NF_DROP; /* hotdrop: a header too short for ports */
		return;
	}
	compat_match_result(regs, ports_match(p->info, ntohs(pp[0]), ntohs(pp[1])));
}

static const struct nftdp_vm_expr_ops multiport_ops = {
    .name = "match multiport",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct blob_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = multiport_eval,
};

/* ---- iprange (xt_iprange.c, rev 1) ---- */

static int iprange_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return blob_keep(cc, par, priv, sizeof(struct xt_iprange_mtinfo));
}

/* iprange_ipv6_lt: a < b in network byte order, as numbers */
static int addr_cmp(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n);
}

static void iprange_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct blob_priv *p = (const void *)op->priv;
	const struct xt_iprange_mtinfo *i = p->info;
	bool v4 = pkt->nfproto == NFPROTO_IPV4;
	size_t n = v4 ? 4 : 16;
	uint8_t a[16] = {0};
	bool m;

	(void)ctx;
	if (i->flags & IPRANGE_SRC) {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + (v4 ? 12 : 8), a, (uint32_t)n);
		m = addr_cmp(a, &i->src_min, n) < 0 || addr_cmp(a, &i->src_max, n) > 0;
		m ^= !!(i->flags & IPRANGE_SRC_INV);
		if (m) {
			compat_match_result(regs, false);
			return;
		}
	}
	if (i->flags & IPRANGE_DST) {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + (v4 ? 16 : 24), a, (uint32_t)n);
		m = addr_cmp(a, &i->dst_min, n) < 0 || addr_cmp(a, &i->dst_max, n) > 0;
		m ^= !!(i->flags & IPRANGE_DST_INV);
		if (m)
			compat_match_result(regs, false);
	}
}

static const struct nftdp_vm_expr_ops iprange_ops = {
    .name = "match iprange",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct blob_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = iprange_eval,
};

/* ---- icmp (ip_tables.c icmp_match) and icmp6 (ip6_tables.c) ---- */

struct icmp_priv {
	uint8_t type, code_min, code_max;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct icmp_priv);

static int icmp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct ipt_icmp *i = par->info;
	struct icmp_priv *p = priv;

	/* icmp_checkentry: IPT_ICMP_INV and IP6T_ICMP_INV are both 1 */
	if (i->invflags & ~IPT_ICMP_INV)
		return nftdp_vm_errf(cc, -EINVAL, "match icmp: unknown flags 0x%x", i->invflags);
	p->type = i->type;
	p->code_min = i->code[0];
	p->code_max = i->code[1];
	p->invert = i->invflags & IPT_ICMP_INV;
	return 0;
}

static void icmp_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct icmp_priv *p = (const void *)op->priv;
	uint8_t tc[2];
	bool m;

	(void)ctx;
	if (pkt->fragoff) {
		compat_match_result(regs, false);
		return;
	}
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) ||
	    !nftdp_vm_copy_bits(pkt, pkt->th_off, tc, 2)) {
		regs->verdict.code = NF_DROP; /* hotdrop: a truncated ICMP header */
		return;
	}
	/* icmp_type_code_match: type 0xff is any */
	m = p->type == 0xff || (tc[0] == p->type && tc[1] >= p->code_min && tc[1] <= p->code_max);
	compat_match_result(regs, m ^ p->invert);
}

static const struct nftdp_vm_expr_ops icmp_ops = {
    .name = "match icmp",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct icmp_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = icmp_eval,
};

/* ---- tcpmss (xt_tcpmss.c) ---- */

static int tcpmss_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_tcpmss_match_info *i = par->info;
	struct length_priv *p = priv;

	(void)cc;
	p->min = i->mss_min;
	p->max = i->mss_max;
	p->invert = i->invert != 0;
	return 0;
}

static void tcpmss_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct length_priv *p = (const void *)op->priv;
	uint8_t th[20], opt[40];
	uint32_t optlen;

	(void)ctx;
	/* tcpmss_mt: a SYN with an MSS option in range; no SYN: invert;
	 * a header that cannot be read: hotdrop */
	if (!nftdp_vm_has_l4(pkt) || !nftdp_vm_copy_bits(pkt, pkt->th_off, th, 20))
		goto dropit;
	if (!(th[13] & 0x02)) {
		compat_match_result(regs, p->invert);
		return;
	}
	if ((th[12] >> 4) * 4u < 20)
		goto dropit;
	optlen = (th[12] >> 4) * 4u - 20;
	if (!nftdp_vm_copy_bits(pkt, pkt->th_off + 20, opt, optlen))
		goto dropit;
	for (uint32_t i = 0; i < optlen;) {
		if (opt[i] == 2 /* TCPOPT_MSS */ && optlen - i >= 4 && opt[i + 1] == 4) {
			uint16_t mss = (uint16_t)(opt[i + 2] << 8 | opt[i + 3]);

			compat_match_result(regs, (mss >= p->min && mss <= p->max) ^ p->invert);
			return;
		}
		if (opt[i] < 2)
			i++;
		else
			i += opt[i + 1] ? opt[i + 1] : 1;
	}
	compat_match_result(regs, p->invert);
	return;
dropit:
	regs->verdict.code = NF_DROP;
}

static const struct nftdp_vm_expr_ops tcpmss_ops = {
    .name = "match tcpmss",
    .flow = NFTDP_VM_FLOW_PRED, /* the flow cache keys on its outcome */
    .size = sizeof(struct length_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = tcpmss_eval,
};

/* ---- addrtype (xt_addrtype.c, rev 1, ipv4) ---- */

struct addrtype_priv {
	uint16_t source, dest;
	uint32_t flags;
};
NFTDP_VM_PRIV_CHECK(struct addrtype_priv);

static int addrtype_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_addrtype_info_v1 *i = par->info;
	struct addrtype_priv *p = priv;

	if (i->flags & (XT_ADDRTYPE_LIMIT_IFACE_IN | XT_ADDRTYPE_LIMIT_IFACE_OUT))
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "match addrtype: --limit-iface-in/out not supported by nftdp");
	p->source = i->source;
	p->dest = i->dest;
	p->flags = i->flags;
	return 0;
}

/* inet_dev_addr_type(net, NULL, addr): what the local table says of an
 * address; anything it holds no route for is unicast */
static unsigned int addr_type4(const struct nftdp_vm_ctx *ctx, uint32_t addr)
{
	const uint8_t *b = (const uint8_t *)&addr;
	struct nftdp_vm_fib_route r;

	if (addr == 0 || addr == 0xffffffffu)
		return RTN_BROADCAST;
	if ((b[0] & 0xf0) == 0xe0)
		return RTN_MULTICAST;
	if (ctx->fib_ops && ctx->fib_ops->route4(ctx->fib, addr, &r) &&
	    (r.type == RTN_LOCAL || r.type == RTN_BROADCAST))
		return r.type;
	return RTN_UNICAST;
}

static void addrtype_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct addrtype_priv *p = (const void *)op->priv;
	uint32_t a[2] = {0, 0};
	bool ret = true;

	nftdp_vm_copy_bits(pkt, pkt->nh_off + 12, a, 8);
	if (p->source)
		ret &= !!(p->source & (1u << addr_type4(ctx, a[0]))) ^
		       !!(p->flags & XT_ADDRTYPE_INVERT_SOURCE);
	if (ret && p->dest)
		ret &= !!(p->dest & (1u << addr_type4(ctx, a[1]))) ^
		       !!(p->flags & XT_ADDRTYPE_INVERT_DEST);
	compat_match_result(regs, ret);
}

static const struct nftdp_vm_expr_ops addrtype_ops = {
    .name = "match addrtype",
    .size = sizeof(struct addrtype_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = addrtype_eval,
};

/* clang-format off */
const struct compat_ext nftdp_vm_compat_matches[] = {
    {"comment", 0, NFPROTO_UNSPEC, sizeof(struct xt_comment_info), HOOKS_ALL, NULL, 0, 0,
     NULL, &comment_ops},
    {"mark", 1, NFPROTO_UNSPEC, sizeof(struct xt_mark_mtinfo1), HOOKS_ALL, NULL, 0, 0,
     mark_check, &mark_ops},
    {"connmark", 1, NFPROTO_UNSPEC, sizeof(struct xt_connmark_mtinfo1), HOOKS_ALL, NULL, 0,
     COMPAT_F_CT, mark_check, &connmark_ops},
    {"conntrack", 3, NFPROTO_UNSPEC, sizeof(struct xt_conntrack_mtinfo3), HOOKS_ALL, NULL, 0,
     COMPAT_F_CT, conntrack_check, &conntrack_ops},
    {"state", 0, NFPROTO_UNSPEC, sizeof(struct xt_state_info), HOOKS_ALL, NULL, 0,
     COMPAT_F_CT, state_check, &conntrack_ops},
    {"pkttype", 0, NFPROTO_UNSPEC, sizeof(struct xt_pkttype_info), HOOKS_ALL, NULL, 0, 0,
     pkttype_check, &pkttype_ops},
    {"length", 0, NFPROTO_UNSPEC, sizeof(struct xt_length_info), HOOKS_ALL, NULL, 0, 0,
     length_check, &length_ops},
    {"mac", 0, NFPROTO_UNSPEC, sizeof(struct xt_mac_info),
     COMPAT_HOOK(NF_INET_PRE_ROUTING) | COMPAT_HOOK(NF_INET_LOCAL_IN) |
	 COMPAT_HOOK(NF_INET_FORWARD),
     NULL, 0, 0, mac_check, &mac_ops},
    {"multiport", 1, NFPROTO_UNSPEC, sizeof(struct xt_multiport_v1), HOOKS_ALL, NULL, 0, 0,
     multiport_check, &multiport_ops},
    {"iprange", 1, NFPROTO_UNSPEC, sizeof(struct xt_iprange_mtinfo), HOOKS_ALL, NULL, 0, 0,
     iprange_check, &iprange_ops},
    {"icmp", 0, NFPROTO_IPV4, sizeof(struct ipt_icmp), HOOKS_ALL, NULL, IPPROTO_ICMP, 0,
     icmp_check, &icmp_ops},
    {"icmp6", 0, NFPROTO_IPV6, sizeof(struct ip6t_icmp), HOOKS_ALL, NULL, IPPROTO_ICMPV6, 0,
     icmp_check, &icmp_ops},
    {"tcpmss", 0, NFPROTO_UNSPEC, sizeof(struct xt_tcpmss_match_info), HOOKS_ALL, NULL,
     IPPROTO_TCP, 0, tcpmss_check, &tcpmss_ops},
    {"addrtype", 1, NFPROTO_IPV4, sizeof(struct xt_addrtype_info_v1), HOOKS_ALL, NULL, 0, 0,
     addrtype_check, &addrtype_ops},
    {"limit", 0, NFPROTO_UNSPEC, sizeof(struct xt_rateinfo), HOOKS_ALL, NULL, 0, COMPAT_F_STATE,
     nftdp_vm_compat_limit_check, &nftdp_vm_compat_limit_ops},
    {"hashlimit", 1, NFPROTO_UNSPEC, sizeof(struct xt_hashlimit_mtinfo1), HOOKS_ALL, NULL, 0,
     COMPAT_F_STATE | COMPAT_F_NAMED, nftdp_vm_compat_hashlimit1_check,
     &nftdp_vm_compat_hashlimit_ops},
    {"hashlimit", 2, NFPROTO_UNSPEC, sizeof(struct xt_hashlimit_mtinfo2), HOOKS_ALL, NULL, 0,
     COMPAT_F_STATE | COMPAT_F_NAMED, nftdp_vm_compat_hashlimit2_check,
     &nftdp_vm_compat_hashlimit_ops},
    {"hashlimit", 3, NFPROTO_UNSPEC, sizeof(struct xt_hashlimit_mtinfo3), HOOKS_ALL, NULL, 0,
     COMPAT_F_STATE | COMPAT_F_NAMED, nftdp_vm_compat_hashlimit3_check,
     &nftdp_vm_compat_hashlimit_ops},
    {"recent", 0, NFPROTO_UNSPEC, sizeof(struct xt_recent_mtinfo), HOOKS_ALL, NULL, 0,
     COMPAT_F_STATE | COMPAT_F_NAMED, nftdp_vm_compat_recent0_check, &nftdp_vm_compat_recent_ops},
    {"recent", 1, NFPROTO_UNSPEC, sizeof(struct xt_recent_mtinfo_v1), HOOKS_ALL, NULL, 0,
     COMPAT_F_STATE | COMPAT_F_NAMED, nftdp_vm_compat_recent1_check, &nftdp_vm_compat_recent_ops},
    {"owner", 1, NFPROTO_UNSPEC, sizeof(struct xt_owner_match_info),
     COMPAT_HOOK(NF_INET_LOCAL_OUT) | COMPAT_HOOK(NF_INET_POST_ROUTING), NULL, 0, 0,
     nftdp_vm_compat_owner_check, &nftdp_vm_compat_owner_ops},
    {"physdev", 0, NFPROTO_UNSPEC, sizeof(struct xt_physdev_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_physdev_check, &nftdp_vm_compat_physdev_ops},
    {"set", 1, NFPROTO_UNSPEC, sizeof(struct xt_set_info_match_v1), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_set1_check, &nftdp_vm_compat_set_ops},
    {"set", 2, NFPROTO_UNSPEC, sizeof(struct xt_set_info_match_v1), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_set1_check, &nftdp_vm_compat_set_ops},
    {"set", 3, NFPROTO_UNSPEC, sizeof(struct xt_set_info_match_v3), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_set3_check, &nftdp_vm_compat_set_ops},
    {"set", 4, NFPROTO_UNSPEC, sizeof(struct xt_set_info_match_v4), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_set4_check, &nftdp_vm_compat_set_ops},
    {"helper", 0, NFPROTO_UNSPEC, sizeof(struct xt_helper_info), HOOKS_ALL, NULL, 0, COMPAT_F_CT,
     nftdp_vm_compat_helper_check, &nftdp_vm_compat_helper_ops},
    {"statistic", 0, NFPROTO_UNSPEC, sizeof(struct xt_statistic_info), HOOKS_ALL, NULL, 0,
     COMPAT_F_STATE, nftdp_vm_compat_statistic_check, &nftdp_vm_compat_statistic_ops},
    {"ttl", 0, NFPROTO_IPV4, sizeof(struct ipt_ttl_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_hl_check, &nftdp_vm_compat_hl_ops},
    {"hl", 0, NFPROTO_IPV6, sizeof(struct ip6t_hl_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_hl_check, &nftdp_vm_compat_hl_ops},
    {"dscp", 0, NFPROTO_UNSPEC, sizeof(struct xt_dscp_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_dscp_check, &nftdp_vm_compat_ds_ops},
    {"tos", 1, NFPROTO_UNSPEC, sizeof(struct xt_tos_match_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_tos_check, &nftdp_vm_compat_ds_ops},
    {"ecn", 0, NFPROTO_UNSPEC, sizeof(struct xt_ecn_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_ecn_check, &nftdp_vm_compat_ecn_ops},
    {"tcp", 0, NFPROTO_UNSPEC, sizeof(struct xt_tcp), HOOKS_ALL, NULL, IPPROTO_TCP, 0,
     nftdp_vm_compat_tcp_check, &nftdp_vm_compat_tcpudp_ops},
    {"udp", 0, NFPROTO_UNSPEC, sizeof(struct xt_udp), HOOKS_ALL, NULL, IPPROTO_UDP, 0,
     nftdp_vm_compat_udp_check, &nftdp_vm_compat_tcpudp_ops},
    {"udplite", 0, NFPROTO_UNSPEC, sizeof(struct xt_udp), HOOKS_ALL, NULL, IPPROTO_UDPLITE, 0,
     nftdp_vm_compat_udp_check, &nftdp_vm_compat_tcpudp_ops},
    {"quota", 0, NFPROTO_UNSPEC, sizeof(struct xt_quota_info), HOOKS_ALL, NULL, 0, COMPAT_F_STATE,
     nftdp_vm_compat_quota_check, &nftdp_vm_compat_quota_ops},
    {"socket", 0, NFPROTO_IPV4, 0, SOCKET_HOOKS, NULL, 0, 0, nftdp_vm_compat_socket_check,
     &nftdp_vm_compat_socket_ops},
    {"socket", 1, NFPROTO_UNSPEC, sizeof(struct xt_socket_mtinfo1), SOCKET_HOOKS, NULL, 0, 0,
     nftdp_vm_compat_socket1_check, &nftdp_vm_compat_socket_ops},
    {"socket", 2, NFPROTO_UNSPEC, sizeof(struct xt_socket_mtinfo2), SOCKET_HOOKS, NULL, 0, 0,
     nftdp_vm_compat_socket2_check, &nftdp_vm_compat_socket_ops},
    {"socket", 3, NFPROTO_UNSPEC, sizeof(struct xt_socket_mtinfo3), SOCKET_HOOKS, NULL, 0, 0,
     nftdp_vm_compat_socket3_check, &nftdp_vm_compat_socket_ops},
    {"policy", 0, NFPROTO_UNSPEC, sizeof(struct xt_policy_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_policy_check, &nftdp_vm_compat_policy_ops},
    {"rpfilter", 0, NFPROTO_UNSPEC, sizeof(struct xt_rpfilter_info),
     COMPAT_HOOK(NF_INET_PRE_ROUTING), NULL, 0, 0, nftdp_vm_compat_rpfilter_check,
     &nftdp_vm_compat_rpfilter_ops},
    {"connlimit", 1, NFPROTO_UNSPEC, sizeof(struct xt_connlimit_info), HOOKS_ALL, NULL, 0,
     COMPAT_F_CT | COMPAT_F_STATE, nftdp_vm_compat_connlimit_check,
     &nftdp_vm_compat_connlimit_ops},
    {"rt", 0, NFPROTO_IPV6, sizeof(struct ip6t_rt), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_rt_check, &nftdp_vm_compat_rt_ops},
    {"frag", 0, NFPROTO_IPV6, sizeof(struct ip6t_frag), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_frag_check, &nftdp_vm_compat_frag_ops},
    {"hbh", 0, NFPROTO_IPV6, sizeof(struct ip6t_opts), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_hbh_check, &nftdp_vm_compat_opts_ops},
    {"dst", 0, NFPROTO_IPV6, sizeof(struct ip6t_opts), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_dst_check, &nftdp_vm_compat_opts_ops},
    {"ipv6header", 0, NFPROTO_IPV6, sizeof(struct ip6t_ipv6header_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_ipv6header_check, &nftdp_vm_compat_ipv6header_ops},
    {"time", 0, NFPROTO_UNSPEC, sizeof(struct xt_time_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_time_check, &nftdp_vm_compat_time_ops},
    {"string", 1, NFPROTO_UNSPEC, sizeof(struct xt_string_info), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_string_check, &nftdp_vm_compat_string_ops},
    {"u32", 0, NFPROTO_UNSPEC, sizeof(struct xt_u32), HOOKS_ALL, NULL, 0, 0,
     nftdp_vm_compat_u32_check, &nftdp_vm_compat_u32_ops},
    {NULL, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL},
};
/* clang-format on */
