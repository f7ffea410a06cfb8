// SPDX-License-Identifier: BSD-3-Clause
/*
 * xtables targets the target expression runs (expr_compat.c does the
 * generic checks). One block per extension, mirroring its
 * net/netfilter/xt_<NAME>.c or ipv4/ipv6 ip*t_<NAME>.c: checkentry as
 * <name>_check, the target function as <name>_eval. REJECT and LOG run
 * as the native reject and log expressions (nftdp_vm_compat_become),
 * which do what the xtables targets do; the
 * NAT targets (REDIRECT too) ask conntrack/ for the binding as nat, masq
 * and redir do. CT and NOTRACK: expr_compat_ct.c.
 */
#include <arpa/inet.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_log.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_CHECKSUM.h>
#include <linux/netfilter/xt_CLASSIFY.h>
#include <linux/netfilter/xt_CT.h>
#include <linux/netfilter/xt_DSCP.h>
#include <linux/netfilter/xt_LOG.h>
#include <linux/netfilter/xt_MARK.h>
#include <linux/netfilter/xt_NFLOG.h>
#include <linux/netfilter/xt_SYNPROXY.h>
#include <linux/netfilter/xt_TCPMSS.h>
#include <linux/netfilter/xt_connmark.h>
#include <linux/netfilter/xt_set.h>
#include <linux/netfilter_ipv4/ipt_REJECT.h>
#include <linux/netfilter_ipv4/ipt_TTL.h>
#include <linux/netfilter_ipv6/ip6t_HL.h>
#include <linux/netfilter_ipv6/ip6t_REJECT.h>

#include "compat.h"

#include <linux/netfilter/nf_nat.h> /* after netinet/in.h (vm_priv.h) */

#define HOOKS_FILTER                                                                               \
	(COMPAT_HOOK(NF_INET_LOCAL_IN) | COMPAT_HOOK(NF_INET_FORWARD) |                            \
	 COMPAT_HOOK(NF_INET_LOCAL_OUT))

/* ---- REJECT (ipt_REJECT.c, ip6t_REJECT.c) as reject ---- */

static int reject_become(struct nftdp_vm_cctx *cc, void *priv, uint32_t type, uint8_t code)
{
	struct nftnl_expr *e = nftnl_expr_alloc("reject");

	if (!e)
		return -ENOMEM;
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
	return nftdp_vm_compat_become(cc, priv, &nftdp_vm_expr_reject, e);
}

static int reject4_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	static const uint8_t icmp_code[] = {
	    [IPT_ICMP_NET_UNREACHABLE] = 0,   [IPT_ICMP_HOST_UNREACHABLE] = 1,
	    [IPT_ICMP_PROT_UNREACHABLE] = 2,  [IPT_ICMP_PORT_UNREACHABLE] = 3,
	    [IPT_ICMP_NET_PROHIBITED] = 9,    [IPT_ICMP_HOST_PROHIBITED] = 10,
	    [IPT_ICMP_ADMIN_PROHIBITED] = 13,
	};
	const struct ipt_reject_info *i = par->info;

	/* reject_tg_check */
	if (i->with == IPT_ICMP_ECHOREPLY)
		return nftdp_vm_errf(cc, -EINVAL, "target REJECT: echo-reply is obsolete");
	if (i->with == IPT_TCP_RESET) {
		if (par->proto != IPPROTO_TCP || par->inv_proto)
			return nftdp_vm_errf(cc, -EINVAL, "target REJECT: tcp-reset needs -p tcp");
		return reject_become(cc, priv, NFT_REJECT_TCP_RST, 0);
	}
	if (i->with > IPT_ICMP_ADMIN_PROHIBITED)
		/* reject_tg: an unknown type drops without an answer */
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "target REJECT: type %u", i->with);
	return reject_become(cc, priv, NFT_REJECT_ICMP_UNREACH, icmp_code[i->with]);
}

static int reject6_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	static const uint8_t icmp6_code[] = {
	    [IP6T_ICMP6_NO_ROUTE] = 0,	    [IP6T_ICMP6_ADM_PROHIBITED] = 1,
	    [IP6T_ICMP6_NOT_NEIGHBOUR] = 2, [IP6T_ICMP6_ADDR_UNREACH] = 3,
	    [IP6T_ICMP6_PORT_UNREACH] = 4,  [IP6T_ICMP6_POLICY_FAIL] = 5,
	    [IP6T_ICMP6_REJECT_ROUTE] = 6,
	};
	const struct ip6t_reject_info *i = par->info;

	if (i->with == IP6T_ICMP6_ECHOREPLY)
		return nftdp_vm_errf(cc, -EINVAL, "target REJECT: echo-reply is obsolete");
	if (i->with == IP6T_TCP_RESET) {
		if (par->proto != IPPROTO_TCP || par->inv_proto)
			return nftdp_vm_errf(cc, -EINVAL, "target REJECT: tcp-reset needs -p tcp");
		return reject_become(cc, priv, NFT_REJECT_TCP_RST, 0);
	}
	if (i->with > IP6T_ICMP6_REJECT_ROUTE)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "target REJECT: type %u", i->with);
	return reject_become(cc, priv, NFT_REJECT_ICMP_UNREACH, icmp6_code[i->with]);
}

/* ---- LOG (xt_LOG.c) as log ---- */

static int log_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_log_info *i = par->info;
	struct nftnl_expr *e;

	/* log_tg_check */
	if (i->level >= 8)
		return nftdp_vm_errf(cc, -EINVAL, "target LOG: level %u", i->level);
	if (i->prefix[sizeof(i->prefix) - 1] != '\0')
		return nftdp_vm_errf(cc, -EINVAL, "target LOG: prefix not terminated");
	if (i->logflags & XT_LOG_NFLOG)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "target LOG: --log-nflog");
	e = nftnl_expr_alloc("log");
	if (!e)
		return -ENOMEM;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_LEVEL, i->level);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_FLAGS, i->logflags & NF_LOG_MASK);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, i->prefix);
	return nftdp_vm_compat_become(cc, priv, &nftdp_vm_expr_log, e);
}

/* ---- NFLOG (xt_NFLOG.c) as log group ---- */

struct nftnl_expr *nftdp_vm_compat_group_log(uint16_t group, uint16_t threshold, const char *prefix)
{
	struct nftnl_expr *e = nftnl_expr_alloc("log");

	if (!e)
		return NULL;
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, group);
	if (threshold)
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_QTHRESHOLD, threshold);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
	return e;
}

static int nflog_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_nflog_info *i = par->info;
	struct nftnl_expr *e;

	/* nflog_tg_check */
	if (i->flags & ~XT_NFLOG_MASK)
		return nftdp_vm_errf(cc, -EINVAL, "target NFLOG: flags 0x%x", i->flags);
	if (i->prefix[sizeof(i->prefix) - 1] != '\0')
		return nftdp_vm_errf(cc, -EINVAL, "target NFLOG: prefix not terminated");
	/* nflog_tg: li.u.ulog's group, qthreshold, and copy_len with
	 * NF_LOG_F_COPY_LEN only when XT_NFLOG_F_COPY_LEN says so */
	e = nftdp_vm_compat_group_log(i->group, i->threshold, i->prefix);
	if (!e)
		return -ENOMEM;
	if (i->flags & XT_NFLOG_F_COPY_LEN)
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, i->len);
	return nftdp_vm_compat_become(cc, priv, &nftdp_vm_expr_log, e);
}

/* ---- MARK (xt_mark.c, rev 2) ---- */

struct mark_priv {
	uint32_t mark, mask;
};
NFTDP_VM_PRIV_CHECK(struct mark_priv);

static int mark_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_mark_tginfo2 *i = par->info;
	struct mark_priv *p = priv;

	(void)cc;
	p->mark = i->mark;
	p->mask = i->mask;
	return 0;
}

static void mark_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct mark_priv *p = (const void *)op->priv;

	(void)regs, (void)ctx;
	pkt->mark = (pkt->mark & ~p->mask) ^ p->mark;
}

static const struct nftdp_vm_expr_ops mark_ops = {
    .name = "target MARK",
    .size = sizeof(struct mark_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = mark_eval,
};

/* ---- CONNMARK (xt_connmark.c, rev 1 and 2) ---- */

struct connmark_priv {
	uint32_t ctmark, ctmask, nfmask;
	uint8_t shift_dir, shift_bits, mode;
};
NFTDP_VM_PRIV_CHECK(struct connmark_priv);

static int connmark1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_connmark_tginfo1 *i = par->info;
	struct connmark_priv *p = priv;

	(void)cc;
	*p = (struct connmark_priv){
	    .ctmark = i->ctmark, .ctmask = i->ctmask, .nfmask = i->nfmask, .mode = i->mode};
	return 0;
}

static int connmark2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_connmark_tginfo2 *i = par->info;
	struct connmark_priv *p = priv;

	(void)cc;
	*p = (struct connmark_priv){.ctmark = i->ctmark,
				    .ctmask = i->ctmask,
				    .nfmask = i->nfmask,
				    .shift_dir = i->shift_dir,
				    .shift_bits = i->shift_bits,
				    .mode = i->mode};
	return 0;
}

static uint32_t shift(const struct connmark_priv *p, uint32_t v)
{
	unsigned int n = p->shift_bits & 31; /* as the CPU shifts a 32-bit word */

	return p->shift_dir == D_SHIFT_RIGHT ? v >> n : v << n;
}

/* connmark_tg_shift */
static void connmark_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct connmark_priv *p = (const void *)op->priv;
	uint32_t ctmark = 0, newmark;

	(void)regs, (void)ctx;
	if (!pkt->ct || !pkt->ct_ops || !pkt->ct_ops->set ||
	    !pkt->ct_ops->get(pkt->ct, NFT_CT_MARK, IP_CT_DIR_ORIGINAL, &ctmark, 4))
		return;
	switch (p->mode) {
	case XT_CONNMARK_SET:
		newmark = shift(p, (ctmark & ~p->ctmask) ^ p->ctmark);
		if (newmark != ctmark)
			pkt->ct_ops->set(pkt->ct, NFT_CT_MARK, IP_CT_DIR_ORIGINAL, &newmark, 4);
		break;
	case XT_CONNMARK_SAVE:
		newmark = (ctmark & ~p->ctmask) ^ shift(p, pkt->mark & p->nfmask);
		if (newmark != ctmark)
			pkt->ct_ops->set(pkt->ct, NFT_CT_MARK, IP_CT_DIR_ORIGINAL, &newmark, 4);
		break;
	case XT_CONNMARK_RESTORE:
		pkt->mark = (pkt->mark & ~p->nfmask) ^ shift(p, ctmark & p->ctmask);
		break;
	}
}

static const struct nftdp_vm_expr_ops connmark_ops = {
    .name = "target CONNMARK",
    .size = sizeof(struct connmark_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = connmark_eval,
};

/* ---- SNAT, DNAT, MASQUERADE (xt_nat.c, xt_MASQUERADE.c) ---- */

struct nat_priv {
	const struct nftdp_vm_nat_range *range; /* a blob of the chain */
	uint8_t kind;
};
NFTDP_VM_PRIV_CHECK(struct nat_priv);

#define NAT_FLAGS_SUPPORTED                                                                        \
	(NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED | NF_NAT_RANGE_PROTO_RANDOM |         \
	 NF_NAT_RANGE_PERSISTENT | NF_NAT_RANGE_PROTO_RANDOM_FULLY)

static int nat_keep(struct nftdp_vm_cctx *cc, void *priv, const struct nftdp_vm_nat_range *r,
		    enum nftdp_vm_nat_kind kind, const char *name)
{
	struct nat_priv *p = priv;
	struct nftdp_vm_nat_range *b;

	if (r->flags & ~NAT_FLAGS_SUPPORTED)
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "target %s: flags 0x%x not supported by nftdp", name,
				     r->flags);
	b = nftdp_vm_blob(cc, sizeof(*b));
	if (!b)
		return -ENOMEM;
	*b = *r;
	p->range = b;
	p->kind = (uint8_t)kind;
	return 0;
}

/* xt_nat_convert_range: the one range of a rev 0 (ipv4) target */
static int nat_v0(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
		  enum nftdp_vm_nat_kind kind, const char *name)
{
	const struct nf_nat_ipv4_multi_range_compat *mr = par->info;
	struct nftdp_vm_nat_range r = {0};

	if (mr->rangesize != 1)
		return nftdp_vm_errf(cc, -EINVAL, "target %s: %u ranges", name, mr->rangesize);
	if (kind == NFTDP_VM_NAT_MASQ && (mr->range[0].flags & NF_NAT_RANGE_MAP_IPS))
		return nftdp_vm_errf(cc, -EINVAL, "target MASQUERADE: with addresses");
	r.flags = mr->range[0].flags;
	memcpy(r.min_addr, &mr->range[0].min_ip, 4);
	memcpy(r.max_addr, &mr->range[0].max_ip, 4);
	memcpy(&r.min_proto, &mr->range[0].min, 2);
	memcpy(&r.max_proto, &mr->range[0].max, 2);
	return nat_keep(cc, priv, &r, kind, name);
}

/* rev 1 (struct nf_nat_range) and rev 2 (nf_nat_range2, the same start) */
static int nat_v1(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
		  enum nftdp_vm_nat_kind kind, const char *name)
{
	const struct nf_nat_range *nr = par->info;
	struct nftdp_vm_nat_range r = {0};

	if (kind == NFTDP_VM_NAT_MASQ && (nr->flags & NF_NAT_RANGE_MAP_IPS))
		return nftdp_vm_errf(cc, -EINVAL, "target MASQUERADE: with addresses");
	r.flags = nr->flags;
	memcpy(r.min_addr, &nr->min_addr, 16);
	memcpy(r.max_addr, &nr->max_addr, 16);
	memcpy(&r.min_proto, &nr->min_proto, 2);
	memcpy(&r.max_proto, &nr->max_proto, 2);
	return nat_keep(cc, priv, &r, kind, name);
}

static int snat0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return nat_v0(cc, par, priv, NFTDP_VM_NAT_SNAT, "SNAT");
}
static int dnat0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return nat_v0(cc, par, priv, NFTDP_VM_NAT_DNAT, "DNAT");
}
static int masq0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return nat_v0(cc, par, priv, NFTDP_VM_NAT_MASQ, "MASQUERADE");
}
static int snat1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return nat_v1(cc, par, priv, NFTDP_VM_NAT_SNAT, "SNAT");
}
static int dnat1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return nat_v1(cc, par, priv, NFTDP_VM_NAT_DNAT, "DNAT");
}
static int masq6_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	return nat_v1(cc, par, priv, NFTDP_VM_NAT_MASQ, "MASQUERADE");
}

/* ---- REDIRECT (xt_REDIRECT.c) as redir does: only with a local stack ---- */

/* what vm/expr_redir.c refuses, for the same reasons, after the kernel's
 * own checks (so a malformed target still gets EINVAL) */
static int redirect_local(struct nftdp_vm_cctx *cc, const struct compat_par *par)
{
	if (!cc->st || !cc->st->local_stack)
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "target REDIRECT: no local stack (only with --host-ports)");
	/* nf_nat_redirect at LOCAL_OUT maps to 127.0.0.1 / ::1: no loopback */
	if (par->hook_mask & COMPAT_HOOK(NF_INET_LOCAL_OUT))
		return nftdp_vm_errf(
		    cc, -EOPNOTSUPP,
		    "target REDIRECT: only at prerouting (no loopback for output)");
	return 0;
}

static int redirect4_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct nf_nat_ipv4_multi_range_compat *mr = par->info;
	int rc;

	/* redirect_tg4_check */
	if (mr->range[0].flags & NF_NAT_RANGE_MAP_IPS)
		return nftdp_vm_errf(cc, -EINVAL, "target REDIRECT: with addresses");
	if (mr->rangesize != 1)
		return nftdp_vm_errf(cc, -EINVAL, "target REDIRECT: %u ranges", mr->rangesize);
	rc = redirect_local(cc, par);
	return rc < 0 ? rc : nat_v0(cc, par, priv, NFTDP_VM_NAT_REDIR, "REDIRECT");
}

static int redirect6_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct nf_nat_range *nr = par->info;
	int rc;

	/* redirect_tg6_checkentry */
	if (nr->flags & NF_NAT_RANGE_MAP_IPS)
		return nftdp_vm_errf(cc, -EINVAL, "target REDIRECT: with addresses");
	rc = redirect_local(cc, par);
	return rc < 0 ? rc : nat_v1(cc, par, priv, NFTDP_VM_NAT_REDIR, "REDIRECT");
}

static void nat_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nat_priv *p = (const void *)op->priv;

	(void)ctx;
	if (!pkt->ct || !pkt->ct_ops || !pkt->ct_ops->nat)
		return; /* nat chains never see untracked packets */
	regs->verdict.code =
	    pkt->ct_ops->nat(pkt->ct, pkt, (enum nftdp_vm_nat_kind)p->kind, p->range);
}

static const struct nftdp_vm_expr_ops nat_ops = {
    .name = "target NAT",
    .size = sizeof(struct nat_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = nat_eval,
};

/* ---- NETMAP (xt_NETMAP.c, rev 0): 1:1 prefix mapping ---- */

/* netmap_tg4_check / netmap_tg6_checkentry: MAP_IPS (and one range) */
static int netmap4_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct nf_nat_ipv4_multi_range_compat *mr = par->info;

	if (!(mr->range[0].flags & NF_NAT_RANGE_MAP_IPS))
		return nftdp_vm_errf(cc, -EINVAL, "target NETMAP: bad MAP_IPS");
	if (mr->rangesize != 1)
		return nftdp_vm_errf(cc, -EINVAL, "target NETMAP: bad rangesize %u", mr->rangesize);
	return nat_v0(cc, par, priv, NFTDP_VM_NAT_SNAT, "NETMAP");
}

static int netmap6_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct nf_nat_range *nr = par->info;

	if (!(nr->flags & NF_NAT_RANGE_MAP_IPS))
		return nftdp_vm_errf(cc, -EINVAL, "target NETMAP: bad MAP_IPS");
	return nat_v1(cc, par, priv, NFTDP_VM_NAT_SNAT, "NETMAP");
}

/* netmap_tg4 / netmap_tg6: the packet's destination (PREROUTING,
 * OUTPUT) or source (POSTROUTING, INPUT) keeps its bits where the range's
 * ends differ and takes the others from the range; the connection is
 * NATed to that one address (HOOK2MANIP: destination before routing,
 * source after), the ports as the range gives them */
static void netmap_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct nat_priv *p = (const void *)op->priv;
	bool dst = pkt->hook == NF_INET_PRE_ROUTING || pkt->hook == NF_INET_LOCAL_OUT;
	struct nftdp_vm_nat_range r = *p->range;
	unsigned int len = pkt->nfproto == NFPROTO_IPV4 ? 4 : 16;
	uint32_t off = pkt->nfproto == NFPROTO_IPV4 ? (dst ? 16 : 12) : (dst ? 24 : 8);
	uint8_t addr[16];

	(void)ctx;
	if (!pkt->ct || !pkt->ct_ops || !pkt->ct_ops->nat)
		return; /* nat chains never see untracked packets */
	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + off, addr, len))
		return;
	for (unsigned int i = 0; i < len; i++) {
		uint8_t netmask = (uint8_t) ~(p->range->min_addr[i] ^ p->range->max_addr[i]);

		addr[i] =
		    (uint8_t)((addr[i] & (uint8_t)~netmask) | (p->range->min_addr[i] & netmask));
	}
	memcpy(r.min_addr, addr, len);
	memcpy(r.max_addr, addr, len);
	r.flags |= NF_NAT_RANGE_MAP_IPS;
	regs->verdict.code =
	    pkt->ct_ops->nat(pkt->ct, pkt, dst ? NFTDP_VM_NAT_DNAT : NFTDP_VM_NAT_SNAT, &r);
}

static const struct nftdp_vm_expr_ops netmap_ops = {
    .name = "target NETMAP",
    .size = sizeof(struct nat_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = netmap_eval,
};

/* ---- SYNPROXY (xt_SYNPROXY.c) ---- */

/* synproxy_tg4_check / synproxy_tg6_check: -p tcp (the table's proto),
 * then nf_ct_netns_get (COMPAT_F_CT) */
static int synproxy_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_synproxy_info *i = par->info;
	int rc = nftdp_vm_synproxy_host_check(cc, "target SYNPROXY");

	if (rc < 0)
		return rc;
	/* no flag check: the target takes any options byte as it is */
	((struct nftdp_vm_synproxy_info *)priv)->mss = i->mss;
	((struct nftdp_vm_synproxy_info *)priv)->wscale = i->wscale;
	((struct nftdp_vm_synproxy_info *)priv)->options = i->options;
	nftdp_vm_synproxy_init();
	cc->needs_synproxy = true;
	return 0;
}

static void synproxy_tg_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	nftdp_vm_synproxy_eval_xt((const void *)op->priv, regs, pkt, ctx);
}

static const struct nftdp_vm_expr_ops synproxy_ops = {
    .name = "target",
    .size = sizeof(struct nftdp_vm_synproxy_info),
    .init = nftdp_vm_compat_target_init,
    .eval = synproxy_tg_eval,
};

/* the ops of a target that becomes another expression: init only */
static const struct nftdp_vm_expr_ops become_ops = {
    .name = "target",
    .init = nftdp_vm_compat_target_init,
};

#define H(h) COMPAT_HOOK(NF_INET_##h)
#define V4 NFPROTO_IPV4
#define V6 NFPROTO_IPV6
#define ANY NFPROTO_UNSPEC

/* clang-format off */
const struct compat_ext nftdp_vm_compat_targets[] = {
    {"REJECT", 0, V4, sizeof(struct ipt_reject_info), HOOKS_FILTER, "filter", 0, 0,
     reject4_check, &become_ops},
    {"REJECT", 0, V6, sizeof(struct ip6t_reject_info), HOOKS_FILTER, "filter", 0, 0,
     reject6_check, &become_ops},
    {"LOG", 0, ANY, sizeof(struct xt_log_info), 0, NULL, 0, COMPAT_F_LOG, log_check,
     &become_ops},
    {"NFLOG", 0, ANY, sizeof(struct xt_nflog_info), 0, NULL, 0, COMPAT_F_LOG, nflog_check,
     &become_ops},
    {"CT", 0, ANY, sizeof(struct xt_ct_target_info), 0, "raw", 0, COMPAT_F_CT,
     nftdp_vm_compat_ct0_check, &nftdp_vm_compat_ct_ops},
    {"CT", 1, ANY, sizeof(struct xt_ct_target_info_v1), 0, "raw", 0, COMPAT_F_CT,
     nftdp_vm_compat_ct1_check, &nftdp_vm_compat_ct_ops},
    {"CT", 2, ANY, sizeof(struct xt_ct_target_info_v1), 0, "raw", 0, COMPAT_F_CT,
     nftdp_vm_compat_ct2_check, &nftdp_vm_compat_ct_ops},
    {"NOTRACK", 0, ANY, 0, 0, "raw", 0, COMPAT_F_CT, nftdp_vm_compat_notrack_check,
     &nftdp_vm_compat_ct_ops},
    {"MARK", 2, ANY, sizeof(struct xt_mark_tginfo2), 0, NULL, 0, 0, mark_check, &mark_ops},
    {"CONNMARK", 1, ANY, sizeof(struct xt_connmark_tginfo1), 0, NULL, 0, COMPAT_F_CT,
     connmark1_check, &connmark_ops},
    {"CONNMARK", 2, ANY, sizeof(struct xt_connmark_tginfo2), 0, NULL, 0, COMPAT_F_CT,
     connmark2_check, &connmark_ops},
    {"SNAT", 0, V4, sizeof(struct nf_nat_ipv4_multi_range_compat),
     H(POST_ROUTING) | H(LOCAL_IN), "nat", 0, COMPAT_F_CT, snat0_check, &nat_ops},
    {"DNAT", 0, V4, sizeof(struct nf_nat_ipv4_multi_range_compat),
     H(PRE_ROUTING) | H(LOCAL_OUT), "nat", 0, COMPAT_F_CT, dnat0_check, &nat_ops},
    {"SNAT", 1, ANY, sizeof(struct nf_nat_range), H(POST_ROUTING) | H(LOCAL_IN), "nat", 0,
     COMPAT_F_CT, snat1_check, &nat_ops},
    {"DNAT", 1, ANY, sizeof(struct nf_nat_range), H(PRE_ROUTING) | H(LOCAL_OUT), "nat", 0,
     COMPAT_F_CT, dnat1_check, &nat_ops},
    {"SNAT", 2, ANY, sizeof(struct nf_nat_range2), H(POST_ROUTING) | H(LOCAL_IN), "nat", 0,
     COMPAT_F_CT, snat1_check, &nat_ops},
    {"DNAT", 2, ANY, sizeof(struct nf_nat_range2), H(PRE_ROUTING) | H(LOCAL_OUT), "nat", 0,
     COMPAT_F_CT, dnat1_check, &nat_ops},
    {"MASQUERADE", 0, V4, sizeof(struct nf_nat_ipv4_multi_range_compat), H(POST_ROUTING), "nat",
     0, COMPAT_F_CT, masq0_check, &nat_ops},
    {"MASQUERADE", 0, V6, sizeof(struct nf_nat_range), H(POST_ROUTING), "nat", 0, COMPAT_F_CT,
     masq6_check, &nat_ops},
    {"REDIRECT", 0, V4, sizeof(struct nf_nat_ipv4_multi_range_compat),
     H(PRE_ROUTING) | H(LOCAL_OUT), "nat", 0, COMPAT_F_CT, redirect4_check, &nat_ops},
    {"REDIRECT", 0, V6, sizeof(struct nf_nat_range), H(PRE_ROUTING) | H(LOCAL_OUT), "nat", 0,
     COMPAT_F_CT, redirect6_check, &nat_ops},
    {"NETMAP", 0, V4, sizeof(struct nf_nat_ipv4_multi_range_compat),
     H(PRE_ROUTING) | H(POST_ROUTING) | H(LOCAL_OUT) | H(LOCAL_IN), "nat", 0, COMPAT_F_CT,
     netmap4_check, &netmap_ops},
    {"NETMAP", 0, V6, sizeof(struct nf_nat_range),
     H(PRE_ROUTING) | H(POST_ROUTING) | H(LOCAL_OUT) | H(LOCAL_IN), "nat", 0, COMPAT_F_CT,
     netmap6_check, &netmap_ops},
    {"SYNPROXY", 0, V4, sizeof(struct xt_synproxy_info), H(LOCAL_IN) | H(FORWARD), NULL,
     IPPROTO_TCP, COMPAT_F_CT, synproxy_check, &synproxy_ops},
    {"SYNPROXY", 0, V6, sizeof(struct xt_synproxy_info), H(LOCAL_IN) | H(FORWARD), NULL,
     IPPROTO_TCP, COMPAT_F_CT, synproxy_check, &synproxy_ops},
    {"SET", 0, ANY, sizeof(struct xt_set_info_target_v0), 0, NULL, 0, 0,
     nftdp_vm_compat_settg0_check, &nftdp_vm_compat_settg_ops},
    {"SET", 1, ANY, sizeof(struct xt_set_info_target_v1), 0, NULL, 0, 0,
     nftdp_vm_compat_settg1_check, &nftdp_vm_compat_settg_ops},
    {"SET", 2, ANY, sizeof(struct xt_set_info_target_v2), 0, NULL, 0, 0,
     nftdp_vm_compat_settg2_check, &nftdp_vm_compat_settg_ops},
    {"SET", 3, ANY, sizeof(struct xt_set_info_target_v3), 0, NULL, 0, 0,
     nftdp_vm_compat_settg3_check, &nftdp_vm_compat_settg_ops},
    {"TCPMSS", 0, V4, sizeof(struct xt_tcpmss_info), 0, NULL, IPPROTO_TCP, 0,
     nftdp_vm_compat_tcpmss_check, &nftdp_vm_compat_tcpmss_ops},
    {"TCPMSS", 0, V6, sizeof(struct xt_tcpmss_info), 0, NULL, IPPROTO_TCP, 0,
     nftdp_vm_compat_tcpmss_check, &nftdp_vm_compat_tcpmss_ops},
    {"CLASSIFY", 0, ANY, sizeof(struct xt_classify_target_info),
     H(LOCAL_OUT) | H(FORWARD) | H(POST_ROUTING), NULL, 0, 0, nftdp_vm_compat_classify_check,
     &nftdp_vm_compat_classify_ops},
    {"TTL", 0, V4, sizeof(struct ipt_TTL_info), 0, "mangle", 0, 0, nftdp_vm_compat_hltg_check,
     &nftdp_vm_compat_hltg_ops},
    {"HL", 0, V6, sizeof(struct ip6t_HL_info), 0, "mangle", 0, 0, nftdp_vm_compat_hltg_check,
     &nftdp_vm_compat_hltg_ops},
    {"DSCP", 0, ANY, sizeof(struct xt_DSCP_info), 0, "mangle", 0, 0,
     nftdp_vm_compat_dscptg_check, &nftdp_vm_compat_dstg_ops},
    {"TOS", 1, ANY, sizeof(struct xt_tos_target_info), 0, "mangle", 0, 0,
     nftdp_vm_compat_tostg_check, &nftdp_vm_compat_dstg_ops},
    {"CHECKSUM", 0, ANY, sizeof(struct xt_CHECKSUM_info), 0, "mangle", 0, 0,
     nftdp_vm_compat_checksum_check, &nftdp_vm_compat_checksum_ops},
    {NULL, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL},
};
/* clang-format on */
