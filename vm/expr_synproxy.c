// SPDX-License-Identifier: BSD-3-Clause
/*
 * synproxy: answer a client's SYN with a syncookie SYN-ACK and check the
 * cookie of its ACK. Mirrors nft_synproxy.c (nft_synproxy_do_init,
 * nft_synproxy_do_eval, nft_synproxy_eval_v4/v6, nft_synproxy_tcp_options);
 * the object type (NFT_OBJECT_SYNPROXY) runs the same eval from
 * expr_objref.c. The cookies and options are vm/synproxy.c's; the
 * dataplane builds and sends the SYN-ACK (out.synproxy), as it does
 * reject's replies.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <linux/netfilter/nf_synproxy.h>

#include "vm_priv.h"

NFTDP_VM_PRIV_CHECK(struct nftdp_vm_synproxy_info);

int nftdp_vm_synproxy_params(uint32_t mss, uint8_t wscale, uint32_t flags,
			     struct nftdp_vm_synproxy_info *info)
{
	/* nft_synproxy_do_init */
	if (flags & ~(uint32_t)NF_SYNPROXY_OPT_MASK)
		return -EOPNOTSUPP;
	info->mss = (uint16_t)mss;
	info->wscale = wscale;
	info->options = (uint8_t)flags;
	nftdp_vm_synproxy_init();
	return 0;
}

/*
 * The checksum check before anything else. xt_SYNPROXY's IPv6 target uses
 * nf_ip6_checksum; nft_synproxy_do_eval uses nf_ip_checksum for both
 * families, which reads an IPv6 header as an IPv4 one (the "addresses" at
 * bytes 12-19): unless the NIC verified the checksum (CHECKSUM_UNNECESSARY,
 * here NFTDP_VM_PKT_F_CSUM_OK), the kernel's statement drops IPv6 segments.
 * nftdp does the same (docs/vm.md).
 */
static bool tcp_csum_ok(const struct nftdp_vm_pkt *pkt, uint32_t l4len, bool xt)
{
	const uint8_t *ip = pkt->data + pkt->nh_off;
	bool v6 = pkt->nfproto == NFPROTO_IPV6 && xt;

	if (pkt->flags & NFTDP_VM_PKT_F_CSUM_OK)
		return true;
	return nftdp_csum_fold(nftdp_csum_partial(
		   pkt->data + pkt->th_off, l4len,
		   nftdp_csum_pseudo(ip, v6, IPPROTO_TCP, (uint16_t)l4len))) == 0;
}

/* nft_synproxy_do_eval, or xt_SYNPROXY's synproxy_tg4/6 (xt): the target
 * answers only a SYN without ACK, FIN or RST and checks only an ACK without
 * FIN, RST or SYN; anything else continues (XT_CONTINUE) */
static void synproxy_do_eval(const struct nftdp_vm_synproxy_info *info, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx, bool xt)
{
	struct nftdp_vm_synproxy_opts opts = {0};
	const uint8_t *th, *ip;
	uint32_t l4len;
	bool v6 = pkt->nfproto == NFPROTO_IPV6;
	uint8_t fl;

	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->l4proto != IPPROTO_TCP ||
	    (pkt->nfproto != NFPROTO_IPV4 && !v6)) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	l4len = pkt->th_off <= pkt->len ? pkt->len - pkt->th_off : 0;
	/* skb_header_pointer of the TCP header fails; the checksum before it */
	if (pkt->fragoff || !tcp_csum_ok(pkt, l4len, xt) || l4len < 20) {
		regs->verdict.code = NF_DROP;
		return;
	}
	th = pkt->data + pkt->th_off;
	ip = pkt->data + pkt->nh_off;
	if (!nftdp_vm_synproxy_parse_options(th, l4len, &opts)) {
		regs->verdict.code = NF_DROP;
		return;
	}
	fl = th[13];
	if (xt ? (fl & 0x02) && !(fl & 0x15) : (fl & 0x02)) {
		/* SYN: initial SYN from the client */
		ctx->synproxy.syn_received++;
		/* the options are chosen where the SYN-ACK is built
		 * (nftdp_vm_synproxy_answer): a pointer keeps out small */
		pkt->out.synproxy = info;
		regs->verdict.code = NF_STOLEN;
	} else if (xt ? (fl & 0x10) && !(fl & 0x07) : (fl & 0x10)) {
		/* ACK from the client: synproxy_recv_client_ack */
		if (!nftdp_vm_synproxy_cookie_check(ip, v6, th, (uint32_t)(ctx->now_ms / 60000))) {
			ctx->synproxy.cookie_invalid++;
			regs->verdict.code = NF_DROP;
			return;
		}
		ctx->synproxy.cookie_valid++;
		/* synproxy_send_server_syn: the dataplane sends the SYN to the
		 * server (nftdp_vm_synproxy_server_syn) and the ACK goes no
		 * further: stolen, or dropped by the target */
		pkt->out.synproxy = info;
		regs->verdict.code = xt ? NF_DROP : NF_STOLEN;
	}
	/* neither: the rule goes on */
}

void nftdp_vm_synproxy_eval(const struct nftdp_vm_synproxy_info *info, struct nftdp_vm_regs *regs,
			    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	synproxy_do_eval(info, regs, pkt, ctx, false);
}

void nftdp_vm_synproxy_eval_xt(const struct nftdp_vm_synproxy_info *info,
			       struct nftdp_vm_regs *regs, struct nftdp_vm_pkt *pkt,
			       struct nftdp_vm_ctx *ctx)
{
	synproxy_do_eval(info, regs, pkt, ctx, true);
}

static void synproxy_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	nftdp_vm_synproxy_eval((const void *)op->priv, regs, pkt, ctx);
}

/*
 * synproxy in front of a server on the box itself (an input base chain
 * with --host-ports) is refused: there the kernel's SYN to the server,
 * the server's SYN-ACK and the ACK answering it travel its loopback
 * (ip_local_out, output, postrouting, lo, prerouting, input), which the
 * exception path does not model; nftdp would send the SYN on out of the
 * wire partner and swallow the host's SYN-ACK (docs/differences.md).
 */
int nftdp_vm_synproxy_host_check(struct nftdp_vm_cctx *cc, const char *what)
{
	if (cc->st && cc->st->local_stack && cc->chain->base && cc->chain->hook == NF_INET_LOCAL_IN)
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "%s: not for a server on the box (input with --host-ports)",
				     what);
	return 0;
}

static int synproxy_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	uint32_t mss = nftdp_vm_attr(e, NFTNL_EXPR_SYNPROXY_MSS)
			   ? nftnl_expr_get_u16(e, NFTNL_EXPR_SYNPROXY_MSS)
			   : 0;
	uint8_t wscale = nftdp_vm_attr(e, NFTNL_EXPR_SYNPROXY_WSCALE)
			     ? nftnl_expr_get_u8(e, NFTNL_EXPR_SYNPROXY_WSCALE)
			     : 0;
	uint32_t flags = nftdp_vm_attr(e, NFTNL_EXPR_SYNPROXY_FLAGS)
			     ? nftdp_vm_u32(e, NFTNL_EXPR_SYNPROXY_FLAGS)
			     : 0;

	if (nftdp_vm_synproxy_params(mss, wscale, flags, priv) < 0)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "synproxy: flags 0x%x", flags);
	cc->needs_synproxy = true;
	/* nft_synproxy_validate */
	if (cc->chain->base && cc->chain->hook != NF_INET_LOCAL_IN &&
	    cc->chain->hook != NF_INET_FORWARD)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "synproxy: not valid in this hook");
	return nftdp_vm_synproxy_host_check(cc, "synproxy");
}

const struct nftdp_vm_expr_type nftdp_vm_expr_synproxy = {
    .name = "synproxy",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "synproxy",
	    .size = sizeof(struct nftdp_vm_synproxy_info),
	    .init = synproxy_init,
	    .eval = synproxy_eval,
	},
};
