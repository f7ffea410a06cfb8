// SPDX-License-Identifier: BSD-3-Clause
/*
 * log: record an event in the worker's log ring; the control thread prints
 * it (stdout/syslog). `log group N` goes to nfnetlink_log instead
 * (nflog.c), and only while an instance is bound to N. Workers never write
 * anything. Attribute rules mirror nft_log_init.
 */
#include <linux/netfilter/nf_log.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct log_priv {
	const char *prefix; /* blob owned by the chain */
	uint32_t level, flags, snaplen;
	uint16_t group, qthreshold;
	bool group_set, snaplen_set;
};
NFTDP_VM_PRIV_CHECK(struct log_priv);

static void log_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct log_priv *p = (const void *)op->priv;
	struct nftdp_vm_log_event ev;
	uint32_t avail = pkt->len > pkt->nh_off ? pkt->len - pkt->nh_off : 0;

	(void)regs;
	if (!ctx->state)
		return;
	if (p->group_set) {
		/* nf_log_packet -> nfulnl_log_packet: nothing without an instance */
		if (nftdp_vm_nflog_bound(ctx->state, p->group)) {
			const struct nftdp_vm_nflog_params np = {
			    .prefix = p->prefix,
			    .copy_len = p->snaplen_set ? p->snaplen : UINT32_MAX,
			    .group = p->group,
			    .qthreshold = p->qthreshold,
			};

			nftdp_vm_nflog_record(&np, pkt, ctx);
		}
		return;
	}
	memcpy(ev.prefix, p->prefix, sizeof(ev.prefix));
	ev.level = p->level;
	ev.group = p->group;
	ev.group_set = p->group_set;
	ev.flags = p->flags;
	ev.snaplen = p->snaplen;
	ev.family = pkt->nfproto;
	ev.hook = pkt->hook;
	ev.iif = pkt->iif;
	ev.oif = pkt->oif;
	ev.mark = pkt->mark;
	ev.caplen = (uint16_t)(avail < sizeof(ev.pkt) ? avail : sizeof(ev.pkt));
	memcpy(ev.pkt, pkt->data + pkt->nh_off, ev.caplen);
	nftdp_vm_log_record(ctx->state, ctx->worker, &ev);
}

static int log_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct log_priv *p = priv;
	char *prefix;

	if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_LEVEL) && nftdp_vm_attr(e, NFTNL_EXPR_LOG_GROUP))
		return nftdp_vm_errf(cc, -EINVAL, "log: both level and group");
	prefix = nftdp_vm_blob(cc, NFTDP_VM_LOG_PREFIXLEN);
	if (!prefix)
		return -ENOMEM;
	if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_PREFIX)) {
		const char *s = nftnl_expr_get_str(e, NFTNL_EXPR_LOG_PREFIX);

		if (strlen(s) > NFTDP_VM_LOG_PREFIXLEN - 1)
			return nftdp_vm_errf(cc, -ERANGE, "log: prefix longer than %d",
					     NFTDP_VM_LOG_PREFIXLEN - 1);
		memcpy(prefix, s, strlen(s));
	}
	p->prefix = prefix;
	if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_GROUP)) {
		p->group_set = true;
		p->group = nftnl_expr_get_u16(e, NFTNL_EXPR_LOG_GROUP);
		if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_FLAGS))
			return nftdp_vm_errf(cc, -EINVAL, "log: flags with a group");
		/* NF_LOG_F_COPY_LEN */
		if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_SNAPLEN)) {
			p->snaplen = nftdp_vm_u32(e, NFTNL_EXPR_LOG_SNAPLEN);
			p->snaplen_set = true;
		}
		if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_QTHRESHOLD))
			p->qthreshold = nftnl_expr_get_u16(e, NFTNL_EXPR_LOG_QTHRESHOLD);
		return 0;
	}
	p->level = NFT_LOGLEVEL_WARNING;
	if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_LEVEL))
		p->level = nftdp_vm_u32(e, NFTNL_EXPR_LOG_LEVEL);
	if (p->level > NFT_LOGLEVEL_AUDIT)
		return nftdp_vm_errf(cc, -EINVAL, "log: level %u", p->level);
	if (nftdp_vm_attr(e, NFTNL_EXPR_LOG_FLAGS)) {
		p->flags = nftdp_vm_u32(e, NFTNL_EXPR_LOG_FLAGS);
		if (p->flags & ~(uint32_t)NF_LOG_MASK)
			return nftdp_vm_errf(cc, -EINVAL, "log: flags 0x%x", p->flags);
	}
	return 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_log = {
    .name = "log",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "log",
	    .size = sizeof(struct log_priv),
	    .init = log_init,
	    .eval = log_eval,
	},
};
