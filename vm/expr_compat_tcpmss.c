// SPDX-License-Identifier: BSD-3-Clause
/*
 * The TCPMSS target (xt_TCPMSS.c, rev 0, ipv4 and ipv6): --set-mss lowers
 * the MSS option of a SYN, never raises it, and updates the TCP checksum
 * as exthdr's writes do. --clamp-mss-to-pmtu takes the lower of the mtus
 * of the packet's route and of the route back to its source, from the
 * route table fib and rt mtu read (no route to daddr, which the kernel
 * would not have forwarded: the packet passes unchanged). A SYN without an
 * MSS option passes unchanged: the kernel grows it by the option, nftdp
 * does not grow packets.
 */
#include <arpa/inet.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_TCPMSS.h>

#include "compat.h"

#define TCPOPT_MSS 2
#define TCPOLEN_MSS 4

struct tcpmss_priv {
	uint16_t mss;
	bool clamp; /* --clamp-mss-to-pmtu */
};
NFTDP_VM_PRIV_CHECK(struct tcpmss_priv);

/* tcpmss_tg4_check / tcpmss_tg6_check (nft_compat: no SYN match needed) */
int nftdp_vm_compat_tcpmss_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_tcpmss_info *i = par->info;
	struct tcpmss_priv *p = priv;

	if (i->mss == XT_TCPMSS_CLAMP_PMTU) {
		if (par->hook_mask &
		    ~(COMPAT_HOOK(NF_INET_FORWARD) | COMPAT_HOOK(NF_INET_LOCAL_OUT) |
		      COMPAT_HOOK(NF_INET_POST_ROUTING)))
			return nftdp_vm_errf(cc, -EINVAL,
					     "target TCPMSS: path-MTU clamping only supported in "
					     "FORWARD, OUTPUT and POSTROUTING hooks");
		p->clamp = true;
		cc->needs_routes = true;
	}
	p->mss = i->mss;
	return 0;
}

/* optlen of xt_TCPMSS.c: NOP and END are one byte, a zero length one */
static uint32_t optlen(const uint8_t *opt, uint32_t offset)
{
	if (opt[offset] <= 1 || opt[offset + 1] == 0)
		return 1;
	return opt[offset + 1];
}

/* tcpmss_mangle_packet, less adding an option */
static void tcpmss_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct tcpmss_priv *p = (const void *)op->priv;
	uint32_t end = pkt->len, len, hdrlen, newmss = p->mss;
	uint8_t *th;

	/* a fragment has no TCP header */
	if (pkt->fragoff || !(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
		return;
	if (!(pkt->flags & NFTDP_VM_PKT_F_WRITABLE))
		return;
	/* skb->len - tcphoff: the IP packet's end, not Ethernet padding */
	if (pkt->nh_off + pkt->skb_len < end)
		end = pkt->nh_off + pkt->skb_len;
	len = end > pkt->th_off ? end - pkt->th_off : 0;
	if (len < 20)
		goto drop;
	th = pkt->data + pkt->th_off;
	hdrlen = (th[12] >> 4) * 4u;
	if (len < hdrlen || hdrlen < 20)
		goto drop;
	if (p->clamp) {
		uint32_t minlen = pkt->nfproto == NFPROTO_IPV6 ? 60 : 40, mtu, back;

		if (!nftdp_vm_route_mtus(ctx, pkt, &mtu, &back))
			return;
		mtu = back < mtu ? back : mtu;
		if (mtu <= minlen)
			goto drop; /* "unknown or invalid path-MTU" */
		newmss = (uint16_t)(mtu - minlen);
	}
	for (uint32_t i = 20; i + TCPOLEN_MSS <= hdrlen; i += optlen(th, i)) {
		if (th[i] == TCPOPT_MSS && th[i + 1] == TCPOLEN_MSS) {
			uint16_t oldmss = (uint16_t)(th[i + 2] << 8 | th[i + 3]);
			uint8_t o[2] = {th[i + 2], th[i + 3]};

			/* never increase the MSS, even when setting it */
			if (oldmss <= newmss)
				return;
			th[i + 2] = (uint8_t)(newmss >> 8);
			th[i + 3] = (uint8_t)newmss;
			nftdp_inet_csum_replace(th + 16, o, th + i + 2, 2);
			return;
		}
	}
	return;
drop:
	regs->verdict.code = NF_DROP;
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_tcpmss_ops = {
    .name = "target TCPMSS",
    .size = sizeof(struct tcpmss_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = tcpmss_eval,
};
