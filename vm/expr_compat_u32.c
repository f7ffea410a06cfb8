// SPDX-License-Identifier: BSD-3-Clause
/*
 * The u32 match (xt_u32.c, rev 0): up to 11 tests, each reading a 32-bit
 * word of the packet at an offset from the network header, then &, <<,
 * >> and @ (move on by the value and read again) operands, the result
 * compared with up to 11 ranges; all tests must hold, then invert. Every
 * read is bounded as u32_match_it bounds it (skb->len: the IP packet, not
 * the frame's padding; a read past it, or an offset that overflows, is no
 * match), so nothing is read past the packet's end.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_u32.h>

#include "compat.h"

struct u32_priv {
	const struct xt_u32 *info; /* a blob of the chain */
};
NFTDP_VM_PRIV_CHECK(struct u32_priv);

/* u32_mt_checkentry */
int nftdp_vm_compat_u32_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_u32 *i = par->info;
	struct u32_priv *p = priv;
	void *b;

	if (i->ntests > XT_U32_MAXSIZE + 1)
		return nftdp_vm_errf(cc, -EINVAL, "match u32: %u tests", i->ntests);
	for (unsigned int t = 0; t < i->ntests; t++)
		if (i->tests[t].nnums > XT_U32_MAXSIZE + 1 ||
		    i->tests[t].nvalues > XT_U32_MAXSIZE + 1)
			return nftdp_vm_errf(cc, -EINVAL, "match u32: test %u too long", t);
	b = nftdp_vm_blob(cc, sizeof(*i));
	if (!b)
		return nftdp_vm_errf(cc, -ENOMEM, "match u32: no memory");
	memcpy(b, i, sizeof(*i));
	p->info = b;
	return 0;
}

static uint32_t word_at(const uint8_t *d)
{
	return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
}

/* u32_match_it over the IP packet at data, len bytes (skb->len) */
static bool u32_match_it(const struct xt_u32 *data, const uint8_t *d, uint32_t len)
{
	for (unsigned int t = 0; t < data->ntests; t++) {
		const struct xt_u32_test *ct = &data->tests[t];
		uint32_t pos = ct->location[0].number, at = 0, val;
		unsigned int i;

		if (len < 4 || pos > len - 4)
			return false;
		val = word_at(d + pos);
		for (i = 1; i < ct->nnums; i++) {
			uint32_t number = ct->location[i].number;

			switch (ct->location[i].nextop) {
			case XT_U32_AND:
				val &= number;
				break;
			case XT_U32_LEFTSH:
				val <<= number & 31; /* x86's shift: the count mod 32 */
				break;
			case XT_U32_RIGHTSH:
				val >>= number & 31;
				break;
			case XT_U32_AT:
				if (at + val < at)
					return false;
				at += val;
				pos = number;
				if (at + 4 < at || len < at + 4 || pos > len - at - 4)
					return false;
				val = word_at(d + at + pos);
				break;
			}
		}
		for (i = 0; i < ct->nvalues; i++)
			if (ct->value[i].min <= val && val <= ct->value[i].max)
				break;
		if (i >= ct->nvalues)
			return false;
	}
	return true;
}

static void u32_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct u32_priv *p = (const void *)op->priv;
	uint32_t len = pkt->skb_len;

	(void)ctx;
	if (pkt->nh_off > pkt->len)
		len = 0;
	else if (len > pkt->len - pkt->nh_off)
		len = pkt->len - pkt->nh_off;
	compat_match_result(regs, u32_match_it(p->info, pkt->data + pkt->nh_off, len) ^
				      !!p->info->invert);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_u32_ops = {
    .name = "match u32",
    .size = sizeof(struct u32_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = u32_eval,
};
