// SPDX-License-Identifier: BSD-3-Clause
/*
 * arptables' mangle target as arptables-nft sends it (a target expression
 * of the arp family; net/ipv4/netfilter/arpt_mangle.c). Checked at commit
 * as its checkentry does; in arp chains (which run with --host-ports: the
 * ARP frames to the box at input, the host's at output) it rewrites the
 * ARP payload in place as the kernel's target does: the sender hardware
 * address, sender IP, target hardware address, target IP, each at the
 * offset the frame's own ar_hln and ar_pln give, ar_hln bytes of the
 * rule's address (at most 16, ARPT_DEV_ADDR_LEN_MAX) and ar_pln bytes of
 * its IPv4 address (at most 4, ARPT_MANGLE_ADDR_LEN_MAX); a field that is
 * longer than that or runs past the frame's end drops it (what was
 * written before stays). ar_hrd and ar_pro are not looked at. The verdict
 * is the rule's --mangle-target (nft_target_eval_xt: XT_CONTINUE goes on).
 */
/* glibc's struct in_addr before the linux headers */
#include <arpa/inet.h>

#include <errno.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_arp/arpt_mangle.h>
#include <string.h>

#include "compat.h"
#include "vm_priv.h"

/* the info (44 bytes) does not fit an op: a copy in a blob of the chain */
NFTDP_VM_PRIV_CHECK(const struct arpt_mangle *);

/* sizeof(struct arphdr): ar_hrd, ar_pro, ar_hln, ar_pln, ar_op */
#define ARP_HDR_LEN 8

/* checkentry of arpt_mangle.c: something to mangle, nothing unknown, a
 * verdict of DROP, ACCEPT or CONTINUE */
int nftdp_vm_compat_arp_mangle_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv)
{
	const struct arpt_mangle *m = par->info;

	if ((m->flags & ~ARPT_MANGLE_MASK) || !(m->flags & ARPT_MANGLE_MASK))
		return nftdp_vm_errf(cc, -EINVAL, "arptables mangle: invalid options");
	if (m->target != NF_DROP && m->target != NF_ACCEPT &&
	    (unsigned int)m->target != XT_CONTINUE)
		return nftdp_vm_errf(cc, -EINVAL, "arptables mangle: invalid verdict");
	if (priv) {
		struct arpt_mangle *b = nftdp_vm_blob(cc, sizeof(*b));

		if (!b)
			return -ENOMEM;
		memcpy(b, m, sizeof(*b));
		*(const struct arpt_mangle **)priv = b;
	}
	return 0;
}

/* one field: len bytes of src at *off when flag is set, then *off moves
 * past the field whether written or not; false: the frame is dropped */
static bool put(struct nftdp_vm_pkt *pkt, uint64_t *off, const struct arpt_mangle *m, uint8_t flag,
		const void *src, unsigned int len, unsigned int max)
{
	if (m->flags & flag) {
		if (len > max || *off + len > pkt->len)
			return false;
		memcpy(pkt->data + *off, src, len);
	}
	*off += len;
	return true;
}

/* arpt_mangle.c's target() */
static void mangle_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct arpt_mangle *m = *(const struct arpt_mangle *const *)op->priv;
	uint64_t off = (uint64_t)pkt->nh_off + ARP_HDR_LEN;
	unsigned int hln, pln;

	(void)ctx;
	/* the kernel's ARP always has its header here (arp_rcv pulls it,
	 * arp_create builds it); a shorter frame from the host is dropped */
	if (!(pkt->flags & NFTDP_VM_PKT_F_WRITABLE) || off > pkt->len) {
		regs->verdict.code = NF_DROP;
		return;
	}
	hln = pkt->data[pkt->nh_off + 4];
	pln = pkt->data[pkt->nh_off + 5];
	if (!put(pkt, &off, m, ARPT_MANGLE_SDEV, m->src_devaddr, hln, ARPT_DEV_ADDR_LEN_MAX) ||
	    !put(pkt, &off, m, ARPT_MANGLE_SIP, &m->u_s.src_ip, pln, ARPT_MANGLE_ADDR_LEN_MAX) ||
	    !put(pkt, &off, m, ARPT_MANGLE_TDEV, m->tgt_devaddr, hln, ARPT_DEV_ADDR_LEN_MAX) ||
	    !put(pkt, &off, m, ARPT_MANGLE_TIP, &m->u_t.tgt_ip, pln, ARPT_MANGLE_ADDR_LEN_MAX)) {
		regs->verdict.code = NF_DROP;
		return;
	}
	if ((unsigned int)m->target != XT_CONTINUE)
		regs->verdict.code = (uint32_t)m->target;
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_arp_mangle_ops = {
    .name = "target (arptables) mangle",
    .size = sizeof(const struct arpt_mangle *),
    .init = nftdp_vm_compat_target_init,
    .eval = mangle_eval,
};
