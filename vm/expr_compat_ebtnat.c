// SPDX-License-Identifier: BSD-3-Clause
/*
 * ebtables' nat table targets as ebtables-nft sends them (target
 * expressions of the bridge family): dnat, snat, redirect and arpreply
 * (net/bridge/netfilter/ebt_dnat.c, ebt_snat.c, ebt_redirect.c,
 * ebt_arpreply.c). Each is checked at commit as xt_check_target and its
 * checkentry do under nft_compat (BASE_CHAIN is never set there: hook_mask
 * is the base chain's one hook bit, 0 in a user chain; the table is the nft
 * table's name), and runs in bridge chains (wire mode) on the frame the
 * bridge forwards: a MAC written there is the MAC that goes out. arpreply
 * leaves its answer's fields in pkt->out (arpreply) for the dataplane,
 * which sends the reply out of the receiving port (dataplane/bridge.c).
 * The verdict is nft_target_eval_bridge's mapping of the target's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_bridge.h>
#include <linux/netfilter_bridge/ebt_arpreply.h>
#include <linux/netfilter_bridge/ebt_nat.h>
#include <linux/netfilter_bridge/ebt_redirect.h>
#include <linux/netfilter_bridge/ebtables.h>
#include <string.h>

#include "compat.h"
#include "vm_priv.h"

NFTDP_VM_PRIV_CHECK(struct ebt_nat_info);
NFTDP_VM_PRIV_CHECK(struct ebt_redirect_info);
NFTDP_VM_PRIV_CHECK(struct ebt_arpreply_info);

#define HK(h) COMPAT_HOOK(h)

/* ebt_invalid_target */
static bool invalid_target(int target)
{
	return target < -NUM_STANDARD_TARGETS || target >= 0;
}

static int bad(struct nftdp_vm_cctx *cc, const char *name, const char *why)
{
	return nftdp_vm_errf(cc, -EINVAL, "ebtables %s: %s", name, why);
}

/* the table and hook test of ebt_dnat_tg_check and ebt_redirect_tg_check:
 * the nat table in the hooks nat_hooks, or broute at BROUTING */
static bool table_hook_ok(struct nftdp_vm_cctx *cc, const struct compat_par *par,
			  uint32_t nat_hooks)
{
	const char *table = cc->chain->table;
	uint32_t hook_mask = par->hook_mask & ~HK(NF_BR_NUMHOOKS);

	return (strcmp(table, "nat") == 0 && !(hook_mask & ~nat_hooks)) ||
	       (strcmp(table, "broute") == 0 && !(hook_mask & ~HK(NF_BR_BROUTING)));
}

/* ebt_dnat_tg_check */
int nftdp_vm_compat_ebt_dnat_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv)
{
	const struct ebt_nat_info *i = par->info;

	if (priv)
		memcpy(priv, i, sizeof(*i));
	if (!table_hook_ok(cc, par, HK(NF_BR_PRE_ROUTING) | HK(NF_BR_LOCAL_OUT)))
		return bad(cc, "dnat", "only in nat PREROUTING/OUTPUT or broute BROUTING");
	if (invalid_target(i->target))
		return bad(cc, "dnat", "invalid --dnat-target");
	return 0;
}

/* ebt_snat_tg_check: a standard verdict, no other bit than NAT_ARP_BIT */
int nftdp_vm_compat_ebt_snat_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv)
{
	const struct ebt_nat_info *i = par->info;

	if (priv)
		memcpy(priv, i, sizeof(*i));
	if (invalid_target(i->target | ~EBT_VERDICT_BITS))
		return bad(cc, "snat", "invalid --snat-target");
	if (((i->target | EBT_VERDICT_BITS) & ~NAT_ARP_BIT) != ~NAT_ARP_BIT)
		return bad(cc, "snat", "invalid options");
	return 0;
}

/* ebt_redirect_tg_check */
int nftdp_vm_compat_ebt_redirect_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				       void *priv)
{
	const struct ebt_redirect_info *i = par->info;

	if (priv)
		memcpy(priv, i, sizeof(*i));
	if (!table_hook_ok(cc, par, HK(NF_BR_PRE_ROUTING)))
		return bad(cc, "redirect", "only in nat PREROUTING or broute BROUTING");
	if (invalid_target(i->target))
		return bad(cc, "redirect", "invalid --redirect-target");
	return 0;
}

/* ebt_arpreply_tg_check: the entry's -p ARP, not inverted (nft_compat's
 * entry: NFTA_RULE_COMPAT) */
int nftdp_vm_compat_ebt_arpreply_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				       void *priv)
{
	const struct ebt_arpreply_info *i = par->info;

	if (priv)
		memcpy(priv, i, sizeof(*i));
	if (par->proto != htons(ETH_P_ARP) || par->inv_proto)
		return bad(cc, "arpreply", "needs -p ARP");
	if (invalid_target(i->target))
		return bad(cc, "arpreply", "invalid --arpreply-target");
	return 0;
}

/* nft_target_eval_bridge: the ebtables verdict as the rule's */
static void ebt_verdict(struct nftdp_vm_regs *regs, int target)
{
	switch (target) {
	case EBT_ACCEPT:
		regs->verdict.code = NF_ACCEPT;
		break;
	case EBT_DROP:
		regs->verdict.code = NF_DROP;
		break;
	case EBT_CONTINUE:
		break;
	case EBT_RETURN:
		regs->verdict.code = (uint32_t)NFT_RETURN;
		break;
	default:
		regs->verdict.code = NF_DROP;
		break;
	}
}

/* skb_ensure_writable on the link-layer header */
static bool mac_writable(const struct nftdp_vm_pkt *pkt)
{
	return (pkt->flags & NFTDP_VM_PKT_F_WRITABLE) && pkt->mac_off >= 0 &&
	       (uint64_t)pkt->mac_off + ETH_HLEN <= pkt->len;
}

/* ebt_dnat_tg: the destination MAC, then the packet type it makes */
static void dnat_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	static const uint8_t bcast[ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const struct ebt_nat_info *i = (const void *)op->priv;

	(void)ctx;
	if (!mac_writable(pkt)) {
		regs->verdict.code = NF_DROP;
		return;
	}
	memcpy(pkt->data + pkt->mac_off, i->mac, ETH_ALEN);
	if (i->mac[0] & 1)
		pkt->pkttype =
		    memcmp(i->mac, bcast, ETH_ALEN) == 0 ? PACKET_BROADCAST : PACKET_MULTICAST;
	else if (pkt->hook == NF_BR_PRE_ROUTING && pkt->br_addr) /* the bridge's device */
		pkt->pkttype =
		    memcmp(i->mac, pkt->br_addr, ETH_ALEN) == 0 ? PACKET_HOST : PACKET_OTHERHOST;
	ebt_verdict(regs, i->target);
}

/* ebt_snat_tg: the source MAC, and unless --snat-arp is off the ARP
 * sender's hardware address of an ARP frame (the ethertype the bridge
 * sees, after an outer tag) with 6-byte hardware addresses */
static void snat_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_nat_info *i = (const void *)op->priv;
	uint8_t ah[8];

	(void)ctx;
	if (!mac_writable(pkt) || pkt->nh_off < (uint32_t)pkt->mac_off + ETH_HLEN) {
		regs->verdict.code = NF_DROP;
		return;
	}
	memcpy(pkt->data + pkt->mac_off + ETH_ALEN, i->mac, ETH_ALEN);
	if (!(i->target & NAT_ARP_BIT) && pkt->data[pkt->nh_off - 2] == 0x08 &&
	    pkt->data[pkt->nh_off - 1] == 0x06) {
		if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, ah, sizeof(ah))) {
			regs->verdict.code = NF_DROP;
			return;
		}
		if (ah[4] == ETH_ALEN) {
			if ((uint64_t)pkt->nh_off + sizeof(ah) + ETH_ALEN > pkt->len) {
				regs->verdict.code = NF_DROP; /* skb_store_bits fails */
				return;
			}
			memcpy(pkt->data + pkt->nh_off + sizeof(ah), i->mac, ETH_ALEN);
		}
	}
	ebt_verdict(regs, i->target | ~EBT_VERDICT_BITS);
}

/* ebt_redirect_tg: to the bridge device's address, for the host */
static void redirect_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_redirect_info *i = (const void *)op->priv;

	(void)ctx;
	/* no bridge (netdev_master_upper_dev_get_rcu is NULL): drop */
	if (!mac_writable(pkt) || !pkt->br_addr) {
		regs->verdict.code = NF_DROP;
		return;
	}
	memcpy(pkt->data + pkt->mac_off, pkt->br_addr, ETH_ALEN);
	pkt->pkttype = PACKET_HOST;
	ebt_verdict(regs, i->target);
}

/* ebt_arpreply_tg: an ARP request for an IPv4 address with 6-byte
 * hardware addresses gets a reply from --arpreply-mac (arp_send out of
 * the input port, done by the dataplane from pkt->out); anything else
 * goes on */
static void arpreply_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct ebt_arpreply_info *i = (const void *)op->priv;
	uint8_t ah[8], sha[ETH_ALEN], sip[4], dip[4];

	(void)ctx;
	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, ah, sizeof(ah))) {
		regs->verdict.code = NF_DROP;
		return;
	}
	/* ar_op REQUEST, ar_hln 6, ar_pro IPv4, ar_pln 4 */
	if (ah[6] != 0 || ah[7] != 1 || ah[4] != ETH_ALEN || ah[2] != 0x08 || ah[3] != 0x00 ||
	    ah[5] != 4)
		return; /* EBT_CONTINUE */
	if (!nftdp_vm_copy_bits(pkt, (int64_t)pkt->nh_off + 8, sha, ETH_ALEN) ||
	    !nftdp_vm_copy_bits(pkt, (int64_t)pkt->nh_off + 14, sip, 4) ||
	    !nftdp_vm_copy_bits(pkt, (int64_t)pkt->nh_off + 24, dip, 4)) {
		regs->verdict.code = NF_DROP;
		return;
	}
	pkt->out.arpreply = true;
	memcpy(pkt->out.arpreply_sha, i->mac, ETH_ALEN);
	memcpy(pkt->out.arpreply_tha, sha, ETH_ALEN);
	memcpy(pkt->out.arpreply_sip, dip, 4);
	memcpy(pkt->out.arpreply_tip, sip, 4);
	ebt_verdict(regs, i->target);
}

#define EBT_NAT_OPS(nm, info, fn)                                                                  \
	const struct nftdp_vm_expr_ops nm = {                                                      \
	    .name = "target (ebtables) " #fn,                                                      \
	    .size = sizeof(info),                                                                  \
	    .init = nftdp_vm_compat_target_init,                                                   \
	    .eval = fn,                                                                            \
	}
EBT_NAT_OPS(nftdp_vm_compat_ebt_dnat_ops, struct ebt_nat_info, dnat_eval);
EBT_NAT_OPS(nftdp_vm_compat_ebt_snat_ops, struct ebt_nat_info, snat_eval);
EBT_NAT_OPS(nftdp_vm_compat_ebt_redirect_ops, struct ebt_redirect_info, redirect_eval);
EBT_NAT_OPS(nftdp_vm_compat_ebt_arpreply_ops, struct ebt_arpreply_info, arpreply_eval);
