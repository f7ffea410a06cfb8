// SPDX-License-Identifier: BSD-3-Clause
/*
 * Small xtables matches: statistic (xt_statistic.c), ttl and hl
 * (xt_hl.c), dscp and tos (xt_dscp.c), ecn (xt_ecn.c), tcp, udp and
 * udplite (xt_tcpudp.c), quota (xt_quota.c), and socket (xt_socket.c)
 * and policy (xt_policy.c), which see no socket and no IPsec here. Each
 * mirrors the kernel's checkentry (with its errno) and match function.
 */
#include <arpa/inet.h> /* before the linux headers: netinet/in.h first */
#include <stdio.h>     /* before libnftnl: it uses FILE */

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_dscp.h>
#include <linux/netfilter/xt_ecn.h>
#include <linux/netfilter/xt_policy.h>
#include <linux/netfilter/xt_quota.h>
#include <linux/netfilter/xt_socket.h>
#include <linux/netfilter/xt_statistic.h>
#include <linux/netfilter/xt_tcpudp.h>
#include <linux/netfilter_ipv4/ipt_ttl.h>
#include <linux/netfilter_ipv6/ip6t_hl.h>

#include "compat.h"

/* ---- statistic (rev 0) ---- */

struct statistic_priv {
	uint32_t slot; /* nth: the rule's counter (info->master) */
	uint32_t probability, every;
	uint16_t mode;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct statistic_priv);

int nftdp_vm_compat_statistic_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				    void *priv)
{
	const struct xt_statistic_info *i = par->info;
	struct statistic_priv *p = priv;
	bool created;
	int rc;

	/* statistic_mt_check */
	if (i->mode > XT_STATISTIC_MODE_MAX || (i->flags & ~XT_STATISTIC_MASK))
		return nftdp_vm_errf(cc, -EINVAL, "match statistic: mode %u, flags 0x%x", i->mode,
				     i->flags);
	p->mode = i->mode;
	p->invert = i->flags & XT_STATISTIC_INVERT;
	p->probability = i->u.random.probability;
	p->every = i->u.nth.every;
	/* the counter starts at u.nth.count (in any mode) when the rule is
	 * made, and lives as long as the rule */
	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_CELL, &p->slot, &created);
	if (rc < 0)
		return rc;
	cc->st->cells[p->slot].type = NFTDP_VM_CELL_XT;
	if (created)
		atomic_store_explicit(&cc->st->cells[p->slot].xt.word, i->u.nth.count,
				      memory_order_relaxed);
	return 0;
}

/* statistic_mt: random compares 31 random bits with the probability
 * (get_random_u32() & 0x7FFFFFFF); nth steps the rule's counter from 0 to
 * every and matches where it comes back to 0 */
static void statistic_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct statistic_priv *p = (const void *)op->priv;
	bool ret = p->invert;

	(void)pkt;
	if (p->mode == XT_STATISTIC_MODE_RANDOM) {
		if ((nftdp_vm_prandom(ctx) & 0x7FFFFFFFu) < p->probability)
			ret = !ret;
	} else {
		_Atomic uint64_t *w = &ctx->state->cells[p->slot].xt.word;
		uint64_t old = atomic_load_explicit(w, memory_order_relaxed);
		uint32_t nval;

		do
			nval = (uint32_t)old == p->every ? 0 : (uint32_t)old + 1;
		while (!atomic_compare_exchange_weak_explicit(w, &old, nval, memory_order_relaxed,
							      memory_order_relaxed));
		if (nval == 0)
			ret = !ret;
	}
	compat_match_result(regs, ret);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_statistic_ops = {
    .name = "match statistic",
    .size = sizeof(struct statistic_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = statistic_eval,
};

/* ---- ttl (ipv4) and hl (ipv6), rev 0: no checkentry ---- */

struct hl_priv {
	uint8_t mode, value;
};
NFTDP_VM_PRIV_CHECK(struct hl_priv);

int nftdp_vm_compat_hl_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const uint8_t *i = par->info; /* ipt_ttl_info / ip6t_hl_info: mode, value */
	struct hl_priv *p = priv;

	(void)cc;
	p->mode = i[0];
	p->value = i[1];
	return 0;
}

/* ttl_mt / hl_mt6: the IPv4 TTL or the IPv6 hop limit (IPT_TTL_* and
 * IP6T_HL_* have the same values); an unknown mode never matches */
static void hl_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct hl_priv *p = (const void *)op->priv;
	uint32_t at = pkt->nh_off + (pkt->nfproto == NFPROTO_IPV4 ? 8 : 7);
	bool ret = false;
	uint8_t v;

	(void)ctx;
	if (at >= pkt->len) {
		compat_match_result(regs, false);
		return;
	}
	v = pkt->data[at];
	switch (p->mode) {
	case IPT_TTL_EQ:
		ret = v == p->value;
		break;
	case IPT_TTL_NE:
		ret = v != p->value;
		break;
	case IPT_TTL_LT:
		ret = v < p->value;
		break;
	case IPT_TTL_GT:
		ret = v > p->value;
		break;
	}
	compat_match_result(regs, ret);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_hl_ops = {
    .name = "match ttl",
    .size = sizeof(struct hl_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = hl_eval,
};

/* ---- dscp (rev 0) and tos (rev 1) ---- */

/* the DS field: the IPv4 TOS byte, IPv6's traffic class (ipv6_get_dsfield) */
static bool dsfield(const struct nftdp_vm_pkt *pkt, uint8_t *ds)
{
	const uint8_t *ip = pkt->data + pkt->nh_off;

	if (pkt->nh_off + 2 > pkt->len)
		return false;
	if (pkt->nfproto == NFPROTO_IPV4)
		*ds = ip[1];
	else
		*ds = (uint8_t)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
	return true;
}

struct ds_priv {
	uint8_t mask, value;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct ds_priv);

int nftdp_vm_compat_dscp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_dscp_info *i = par->info;
	struct ds_priv *p = priv;

	/* dscp_mt_check */
	if (i->dscp > XT_DSCP_MAX)
		return nftdp_vm_errf(cc, -EDOM, "match dscp: %u out of range", i->dscp);
	/* dscp_mt: (dsfield >> XT_DSCP_SHIFT) == dscp */
	p->mask = XT_DSCP_MASK;
	p->value = (uint8_t)(i->dscp << XT_DSCP_SHIFT);
	p->invert = i->invert != 0;
	return 0;
}

int nftdp_vm_compat_tos_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_tos_match_info *i = par->info;
	struct ds_priv *p = priv;

	(void)cc; /* no checkentry */
	p->mask = i->tos_mask;
	p->value = i->tos_value;
	p->invert = i->invert != 0;
	return 0;
}

/* dscp_mt(6) / tos_mt: (dsfield & mask) == value, then invert */
static void ds_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ds_priv *p = (const void *)op->priv;
	uint8_t ds;

	(void)ctx;
	if (!dsfield(pkt, &ds)) {
		compat_match_result(regs, false);
		return;
	}
	compat_match_result(regs, ((ds & p->mask) == p->value) ^ p->invert);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_ds_ops = {
    .name = "match dscp",
    .size = sizeof(struct ds_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = ds_eval,
};

/* ---- ecn (rev 0) ---- */

struct ecn_priv {
	uint8_t operation, invert, ip_ect;
};
NFTDP_VM_PRIV_CHECK(struct ecn_priv);

int nftdp_vm_compat_ecn_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_ecn_info *i = par->info;
	struct ecn_priv *p = priv;

	/* ecn_mt_check4 / ecn_mt_check6 */
	if ((i->operation & XT_ECN_OP_MATCH_MASK) || (i->invert & XT_ECN_OP_MATCH_MASK))
		return nftdp_vm_errf(cc, -EINVAL, "match ecn: operation 0x%x, invert 0x%x",
				     i->operation, i->invert);
	if ((i->operation & (XT_ECN_OP_MATCH_ECE | XT_ECN_OP_MATCH_CWR)) &&
	    (par->proto != IPPROTO_TCP || par->inv_proto))
		return nftdp_vm_errf(cc, -EINVAL, "match ecn: TCP bits need -p tcp");
	p->operation = i->operation;
	p->invert = i->invert;
	p->ip_ect = i->ip_ect;
	return 0;
}

/* ecn_mt4 / ecn_mt6: the IP ECT bits, then TCP's ECE and CWR (match_tcp:
 * no TCP header in the packet is no match) */
static void ecn_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ecn_priv *p = (const void *)op->priv;
	uint8_t ds, fl;

	(void)ctx;
	if (p->operation & XT_ECN_OP_MATCH_IP) {
		if (!dsfield(pkt, &ds) ||
		    !(((ds & XT_ECN_IP_MASK) == p->ip_ect) ^ !!(p->invert & XT_ECN_OP_MATCH_IP))) {
			compat_match_result(regs, false);
			return;
		}
	}
	if (p->operation & (XT_ECN_OP_MATCH_ECE | XT_ECN_OP_MATCH_CWR)) {
		if (pkt->th_off + 20 > pkt->len) {
			compat_match_result(regs, false);
			return;
		}
		fl = pkt->data[pkt->th_off + 13];
		if ((p->operation & XT_ECN_OP_MATCH_ECE) &&
		    !!(fl & 0x40) == !!(p->invert & XT_ECN_OP_MATCH_ECE)) {
			compat_match_result(regs, false);
			return;
		}
		if ((p->operation & XT_ECN_OP_MATCH_CWR) &&
		    !!(fl & 0x80) == !!(p->invert & XT_ECN_OP_MATCH_CWR)) {
			compat_match_result(regs, false);
			return;
		}
	}
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_ecn_ops = {
    .name = "match ecn",
    .size = sizeof(struct ecn_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = ecn_eval,
};

/* ---- tcp, udp and udplite (xt_tcpudp.c, rev 0) ---- */

/* iptables-nft sends `-p tcp -m tcp` as this match where it has nothing
 * to translate (no port, no flags: kube-proxy's DNAT rules) */

struct tcpudp_priv {
	uint16_t spts[2], dpts[2];
	uint8_t option, flg_mask, flg_cmp, invflags;
	bool tcp;
};
NFTDP_VM_PRIV_CHECK(struct tcpudp_priv);

int nftdp_vm_compat_tcp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_tcp *i = par->info;
	struct tcpudp_priv *p = priv;

	if (i->invflags & ~XT_TCP_INV_MASK) /* tcp_mt_check */
		return nftdp_vm_errf(cc, -EINVAL, "match tcp: invflags 0x%x", i->invflags);
	*p = (struct tcpudp_priv){.spts = {i->spts[0], i->spts[1]},
				  .dpts = {i->dpts[0], i->dpts[1]},
				  .option = i->option,
				  .flg_mask = i->flg_mask,
				  .flg_cmp = i->flg_cmp,
				  .invflags = i->invflags,
				  .tcp = true};
	return 0;
}

int nftdp_vm_compat_udp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_udp *i = par->info;
	struct tcpudp_priv *p = priv;

	if (i->invflags & ~XT_UDP_INV_MASK) /* udp_mt_check */
		return nftdp_vm_errf(cc, -EINVAL, "match udp: invflags 0x%x", i->invflags);
	*p = (struct tcpudp_priv){.spts = {i->spts[0], i->spts[1]},
				  .dpts = {i->dpts[0], i->dpts[1]},
				  .invflags = i->invflags};
	return 0;
}

static bool port_in(const uint16_t r[2], uint16_t port, bool invert)
{
	return (port >= r[0] && port <= r[1]) ^ invert;
}

/* tcp_find_option over the optlen option bytes after the fixed header */
static bool tcp_has_option(const uint8_t *op, uint32_t optlen, uint8_t option, bool invert)
{
	for (uint32_t i = 0; i < optlen;) {
		if (op[i] == option)
			return !invert;
		if (op[i] < 2)
			i++;
		else if (i + 1 < optlen)
			i += op[i + 1] ? op[i + 1] : 1;
		else
			i++; /* i + op[i + 1] >= optlen too: the walk ends */
	}
	return invert;
}

/* tcp_mt / udp_mt: no later fragment; a header that cannot be read, an
 * IPv4 fragment at offset 8 (TCP) or a data offset below 5 with an
 * option asked for drops the packet (hotdrop) */
static void tcpudp_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct tcpudp_priv *p = (const void *)op->priv;
	const uint8_t *th = pkt->data + pkt->th_off;
	uint32_t need = p->tcp ? 20 : 8, doff;

	(void)ctx;
	if (pkt->fragoff) {
		/* xtables' fragoff is IPv4's in 8-byte units, IPv6's in bytes */
		if (p->tcp && pkt->nfproto == NFPROTO_IPV4 && pkt->fragoff == 8)
			regs->verdict.code = NF_DROP;
		else
			compat_match_result(regs, false);
		return;
	}
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->th_off + need > pkt->len) {
		regs->verdict.code = NF_DROP;
		return;
	}
	if (!port_in(p->spts, (uint16_t)(th[0] << 8 | th[1]), p->invflags & XT_TCP_INV_SRCPT) ||
	    !port_in(p->dpts, (uint16_t)(th[2] << 8 | th[3]), p->invflags & XT_TCP_INV_DSTPT)) {
		compat_match_result(regs, false);
		return;
	}
	if (!p->tcp)
		return;
	if (((th[13] & p->flg_mask) == p->flg_cmp) == !!(p->invflags & XT_TCP_INV_FLAGS)) {
		compat_match_result(regs, false);
		return;
	}
	if (!p->option)
		return;
	doff = (uint32_t)(th[12] >> 4) * 4;
	if (doff < 20) {
		regs->verdict.code = NF_DROP;
		return;
	}
	if (doff > 20 && pkt->th_off + doff > pkt->len) { /* skb_header_pointer fails */
		regs->verdict.code = NF_DROP;
		return;
	}
	if (!tcp_has_option(th + 20, doff - 20, p->option, p->invflags & XT_TCP_INV_OPTION))
		compat_match_result(regs, false);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_tcpudp_ops = {
    .name = "match tcp",
    .size = sizeof(struct tcpudp_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = tcpudp_eval,
};

/* ---- quota (rev 0) ---- */

struct xquota_priv {
	uint32_t slot; /* the bytes left (q->master->quota) */
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct xquota_priv);

int nftdp_vm_compat_quota_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_quota_info *i = par->info;
	struct xquota_priv *p = priv;
	bool created;
	int rc;

	if (i->flags & ~XT_QUOTA_MASK) /* quota_mt_check */
		return nftdp_vm_errf(cc, -EINVAL, "match quota: flags 0x%x", i->flags);
	p->invert = i->flags & XT_QUOTA_INVERT;
	/* the rule's own quota, from --quota when the rule is made */
	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_CELL, &p->slot, &created);
	if (rc < 0)
		return rc;
	cc->st->cells[p->slot].type = NFTDP_VM_CELL_XT;
	if (created)
		atomic_store_explicit(&cc->st->cells[p->slot].xt.word, i->quota,
				      memory_order_relaxed);
	return 0;
}

/* quota_mt: a packet of skb->len that fits takes its bytes and matches;
 * one that does not empties the quota (no small packet passes after) */
static void xquota_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct xquota_priv *p = (const void *)op->priv;
	_Atomic uint64_t *w = &ctx->state->cells[p->slot].xt.word;
	uint64_t old = atomic_load_explicit(w, memory_order_relaxed), nw;
	bool fits;

	do {
		fits = old >= pkt->skb_len;
		nw = fits ? old - pkt->skb_len : 0;
	} while (!atomic_compare_exchange_weak_explicit(w, &old, nw, memory_order_relaxed,
							memory_order_relaxed));
	compat_match_result(regs, fits ^ p->invert);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_quota_ops = {
    .name = "match quota",
    .size = sizeof(struct xquota_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = xquota_eval,
};

/* ---- socket (rev 0-3) and policy (rev 0): no socket, no secpath ---- */

/* socket_mt_v1/v2/v3_check: the revision's flags (EINVAL) */
static int socket_flags(struct nftdp_vm_cctx *cc, const struct compat_par *par, uint8_t allowed)
{
	const uint8_t *flags = par->info;

	if (flags[0] & ~allowed)
		return nftdp_vm_errf(cc, -EINVAL, "match socket: unknown flags 0x%x",
				     flags[0] & ~allowed);
	return 0;
}

int nftdp_vm_compat_socket_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	(void)cc, (void)par, (void)priv; /* rev 0: no info */
	return 0;
}

int nftdp_vm_compat_socket1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	(void)priv;
	return socket_flags(cc, par, XT_SOCKET_FLAGS_V1);
}

int nftdp_vm_compat_socket2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	(void)priv;
	return socket_flags(cc, par, XT_SOCKET_FLAGS_V2);
}

int nftdp_vm_compat_socket3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	(void)priv;
	return socket_flags(cc, par, XT_SOCKET_FLAGS_V3);
}

/* socket_match: the packet's socket, or one nf_sk_lookup finds; nftdp
 * has no local stack, so there is none and the match is false (xt_socket
 * has no invert) */
static void socket_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)op, (void)pkt, (void)ctx;
	compat_match_result(regs, false);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_socket_ops = {
    .name = "match socket",
    .init = nftdp_vm_compat_match_init,
    .eval = socket_eval,
};

struct policy_priv {
	bool none; /* XT_POLICY_MATCH_NONE */
};
NFTDP_VM_PRIV_CHECK(struct policy_priv);

int nftdp_vm_compat_policy_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_policy_info *i = par->info;
	const uint32_t in_hooks = COMPAT_HOOK(NF_INET_PRE_ROUTING) | COMPAT_HOOK(NF_INET_LOCAL_IN);
	const uint32_t out_hooks =
	    COMPAT_HOOK(NF_INET_POST_ROUTING) | COMPAT_HOOK(NF_INET_LOCAL_OUT);

	/* policy_mt_check */
	if (!(i->flags & (XT_POLICY_MATCH_IN | XT_POLICY_MATCH_OUT)))
		return nftdp_vm_errf(cc, -EINVAL,
				     "match policy: neither incoming nor outgoing policy selected");
	if ((par->hook_mask & in_hooks) && (i->flags & XT_POLICY_MATCH_OUT))
		return nftdp_vm_errf(
		    cc, -EINVAL, "match policy: output policy not valid in PREROUTING and INPUT");
	if ((par->hook_mask & out_hooks) && (i->flags & XT_POLICY_MATCH_IN))
		return nftdp_vm_errf(
		    cc, -EINVAL, "match policy: input policy not valid in POSTROUTING and OUTPUT");
	if (i->len > XT_POLICY_MAX_ELEM)
		return nftdp_vm_errf(cc, -EINVAL, "match policy: too many policy elements");
	((struct policy_priv *)priv)->none = i->flags & XT_POLICY_MATCH_NONE;
	return 0;
}

/* policy_mt: no packet has a secpath (in) or an xfrm route (out) here,
 * so match_policy_in/out answer -1: a match exactly for --pol none */
static void policy_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	(void)pkt, (void)ctx;
	compat_match_result(regs, ((const struct policy_priv *)op->priv)->none);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_policy_ops = {
    .name = "match policy",
    .size = sizeof(struct policy_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = policy_eval,
};
