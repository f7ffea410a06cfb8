// SPDX-License-Identifier: BSD-3-Clause
/*
 * exthdr: IPv6 extension headers (ipv6_find_hdr), TCP options (read, write
 * for MSS clamping, strip), IPv4 options (ipv4_find_option) and SCTP
 * chunks. Mirrors nft_exthdr.c; DCCP options are refused (this kernel has
 * no DCCP).
 */
#include <arpa/inet.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct exthdr_priv {
	uint8_t type, offset, len, op, flags, reg;
};
NFTDP_VM_PRIV_CHECK(struct exthdr_priv);

#define TCP_MAX_HDR 60 /* sizeof(struct tcphdr) + MAX_TCP_OPTION_SPACE */

static bool ipv6_ext(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 59 || nh == 60;
}

/* ipv6_find_hdr(skb, &offset, target, NULL, NULL): offset of target or -errno */
int nftdp_vm_ipv6_find_hdr(const struct nftdp_vm_pkt *pkt, uint32_t *offset, int target)
{
	uint8_t ip6[40], hp[2];
	uint32_t start = pkt->nh_off + 40;
	uint8_t nexthdr;
	bool found;

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, ip6, sizeof(ip6)) || (ip6[0] >> 4) != 6)
		return -EBADMSG;
	nexthdr = ip6[6];
	do {
		uint32_t hdrlen;

		found = nexthdr == target;
		if (!ipv6_ext(nexthdr) || nexthdr == 59) {
			if (target < 0 || found)
				break;
			return -ENOENT;
		}
		if (!nftdp_vm_copy_bits(pkt, start, hp, sizeof(hp)))
			return -EBADMSG;
		if (nexthdr == 44) {
			uint8_t fo[2];
			uint16_t frag_off;

			if (!nftdp_vm_copy_bits(pkt, start + 2, fo, sizeof(fo)))
				return -EBADMSG;
			frag_off = (uint16_t)(((uint32_t)fo[0] << 8 | fo[1]) & ~7u);
			if (frag_off) {
				if (target < 0 && (!ipv6_ext(hp[0]) || hp[0] == 59)) {
					*offset = start;
					return hp[0];
				}
				if (!found)
					return -ENOENT;
				break;
			}
			hdrlen = 8;
		} else if (nexthdr == 51) {
			hdrlen = ((uint32_t)hp[1] + 2) << 2;
		} else {
			hdrlen = ((uint32_t)hp[1] + 1) << 3;
		}
		if (!found) {
			nexthdr = hp[0];
			start += hdrlen;
		}
	} while (!found);
	*offset = start;
	return nexthdr;
}

static void exthdr_ipv6_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct exthdr_priv *p = (const void *)op->priv;
	uint32_t *dest = &regs->data[p->reg];
	uint32_t offset = 0;
	int err;

	(void)ctx;
	if (pkt->protocol != htons(0x86dd))
		goto err;
	err = nftdp_vm_ipv6_find_hdr(pkt, &offset, p->type);
	if (p->flags & NFT_EXTHDR_F_PRESENT) {
		*dest = 0;
		*(uint8_t *)dest = err >= 0; /* nft_reg_store8 */
		return;
	} else if (err < 0) {
		goto err;
	}
	offset += p->offset;
	dest[p->len / 4] = 0;
	if (!nftdp_vm_copy_bits(pkt, offset, dest, p->len))
		goto err;
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

/* __ip_options_compile, reduced to what ipv4_find_option needs */
static int ipv4_find_option(const struct nftdp_vm_pkt *pkt, uint32_t *offset, int target)
{
	uint8_t iph[20], opt[40];
	/* as opt->srr, rr, router_alert: offsets from the IP header, 0 = none */
	uint32_t optlen, srr = 0, rr = 0, ra = 0;
	bool strict = false;

	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off, iph, sizeof(iph)))
		return -EBADMSG;
	if ((iph[0] & 0xf) * 4 <= 20)
		return -ENOENT;
	optlen = (iph[0] & 0xf) * 4u - 20;
	if (!nftdp_vm_copy_bits(pkt, pkt->nh_off + 20, opt, optlen))
		return -EBADMSG;
	for (uint32_t l = optlen, i = 0; l > 0;) {
		uint32_t ol;

		switch (opt[i]) {
		case 0: /* IPOPT_END */
			l = 0;
			continue;
		case 1: /* IPOPT_NOOP */
			l--;
			i++;
			continue;
		}
		if (l < 2)
			return -EBADMSG;
		ol = opt[i + 1];
		if (ol < 2 || ol > l)
			return -EBADMSG;
		switch (opt[i]) {
		case 131: /* IPOPT_LSRR */
		case 137: /* IPOPT_SSRR */
			if (ol < 3 || opt[i + 2] < 4 || srr)
				return -EBADMSG;
			srr = 20 + i;
			strict = opt[i] == 137;
			break;
		case 7: /* IPOPT_RR */
			if (ol < 3 || opt[i + 2] < 4 || rr)
				return -EBADMSG;
			rr = 20 + i;
			break;
		case 148: /* IPOPT_RA */
			if (ol != 4)
				return -EBADMSG;
			if (!ra)
				ra = 20 + i;
			break;
		}
		l -= ol;
		i += ol;
	}
	switch (target) {
	case 131:
	case 137:
		if (!srr || (target == 137) != strict)
			return -ENOENT;
		*offset = pkt->nh_off + srr;
		return target;
	case 7:
		if (!rr)
			return -ENOENT;
		*offset = pkt->nh_off + rr;
		return target;
	case 148:
		if (!ra)
			return -ENOENT;
		*offset = pkt->nh_off + ra;
		return target;
	default:
		return -EOPNOTSUPP;
	}
}

static void exthdr_ipv4_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct exthdr_priv *p = (const void *)op->priv;
	uint32_t *dest = &regs->data[p->reg];
	uint32_t offset = 0;
	int err;

	(void)ctx;
	if (pkt->protocol != htons(0x0800))
		goto err;
	err = ipv4_find_option(pkt, &offset, p->type);
	if (p->flags & NFT_EXTHDR_F_PRESENT) {
		*dest = 0;
		*(uint8_t *)dest = err >= 0;
		return;
	} else if (err < 0) {
		goto err;
	}
	offset += p->offset;
	dest[p->len / 4] = 0;
	if (!nftdp_vm_copy_bits(pkt, offset, dest, p->len))
		goto err;
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

/* nft_tcp_header_pointer: the TCP header with options, or NULL */
static uint8_t *tcp_header(struct nftdp_vm_pkt *pkt, uint32_t *hdrlen)
{
	uint8_t *th;

	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->l4proto != IPPROTO_TCP || pkt->fragoff)
		return NULL;
	if ((uint64_t)pkt->th_off + 20 > pkt->len)
		return NULL;
	th = pkt->data + pkt->th_off;
	*hdrlen = (th[12] >> 4) * 4u;
	if (*hdrlen < 20 || *hdrlen > TCP_MAX_HDR)
		return NULL;
	if ((uint64_t)pkt->th_off + *hdrlen > pkt->len)
		return NULL;
	return th;
}

static unsigned int optlen(const uint8_t *opt, unsigned int offset)
{
	/* Beware zero-length options: make finite progress */
	if (opt[offset] <= 1 || opt[offset + 1] == 0)
		return 1;
	return opt[offset + 1];
}

static void exthdr_tcp_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct exthdr_priv *p = (const void *)op->priv;
	uint32_t *dest = &regs->data[p->reg];
	uint32_t hdrlen, i, optl;
	const uint8_t *opt;

	(void)ctx;
	opt = tcp_header(pkt, &hdrlen);
	if (!opt)
		goto err;
	for (i = 20; i < hdrlen - 1; i += optl) {
		optl = optlen(opt, i);
		if (p->type != opt[i])
			continue;
		if (i + optl > hdrlen || (uint32_t)p->len + p->offset > optl)
			goto err;
		if (p->flags & NFT_EXTHDR_F_PRESENT) {
			*dest = 1;
		} else {
			if (p->len % 4)
				dest[p->len / 4] = 0;
			memcpy(dest, opt + i + p->offset, p->len);
		}
		return;
	}
err:
	if (p->flags & NFT_EXTHDR_F_PRESENT)
		*dest = 0;
	else
		regs->verdict.code = NFT_BREAK;
}

static void exthdr_tcp_set_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
				struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct exthdr_priv *p = (const void *)op->priv;
	uint32_t hdrlen, i, optl, offset;
	uint8_t *opt;

	(void)ctx;
	opt = tcp_header(pkt, &hdrlen);
	if (!opt || !(pkt->flags & NFTDP_VM_PKT_F_WRITABLE))
		goto err;
	for (i = 20; i < hdrlen - 1; i += optl) {
		uint8_t old[4], new[4];

		optl = optlen(opt, i);
		if (p->type != opt[i])
			continue;
		if (i + optl > hdrlen || (uint32_t)p->len + p->offset > optl)
			goto err;
		offset = i + p->offset;
		memcpy(old, opt + offset, p->len);
		memcpy(new, &regs->data[p->reg], p->len);
		if (p->len == 2 && p->type == 2 /* TCPOPT_MSS */ &&
		    ((uint32_t)old[0] << 8 | old[1]) <= ((uint32_t) new[0] << 8 | new[1]))
			return; /* increase can cause connection to stall */
		if (memcmp(old, new, p->len) == 0)
			return;
		memcpy(opt + offset, new, p->len);
		nftdp_inet_csum_replace(opt + 16, old, new, p->len);
		return;
	}
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

static void exthdr_tcp_strip_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
				  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct exthdr_priv *p = (const void *)op->priv;
	uint32_t hdrlen, i, optl;
	uint8_t *opt;

	(void)ctx;
	opt = tcp_header(pkt, &hdrlen);
	if (!opt || !(pkt->flags & NFTDP_VM_PKT_F_WRITABLE))
		goto err;
	for (i = 20; i < hdrlen - 1; i += optl) {
		optl = optlen(opt, i);
		if (p->type != opt[i])
			continue;
		if (i + optl > hdrlen)
			goto err;
		for (uint32_t j = 0; j < optl; j++) {
			uint8_t o[2], n[2];
			uint32_t k = i + j;

			/* checksum over aligned 16-bit words */
			o[0] = opt[k & ~1u];
			o[1] = opt[k | 1u];
			opt[k] = 1; /* TCPOPT_NOP */
			n[0] = opt[k & ~1u];
			n[1] = opt[k | 1u];
			nftdp_inet_csum_replace(opt + 16, o, n, 2);
		}
		return;
	}
	return;
err:
	regs->verdict.code = NFT_BREAK;
}

/*
 * nft_exthdr_sctp_eval: walk the chunks after the 12-byte common header,
 * each padded to 4 bytes, for the first of the type; a chunk of length 0
 * or one cut short ends the walk. Offsets here are from the frame, so the
 * packet's end is pkt->len (skb->len from the network header).
 */
static void exthdr_sctp_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct exthdr_priv *p = (const void *)op->priv;
	uint32_t *dest = &regs->data[p->reg];
	uint64_t off = (uint64_t)pkt->th_off + 12;

	(void)ctx;
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->l4proto != IPPROTO_SCTP || pkt->fragoff)
		goto err;
	do {
		uint8_t ch[4];
		uint32_t clen;

		if (!nftdp_vm_copy_bits(pkt, (int64_t)off, ch, sizeof(ch)))
			break;
		clen = (uint32_t)ch[2] << 8 | ch[3];
		if (clen == 0)
			break;
		if (ch[0] == p->type) {
			if (p->flags & NFT_EXTHDR_F_PRESENT) {
				*dest = 1;
				return;
			}
			if ((uint32_t)p->offset + p->len > clen || off + clen > pkt->len)
				break;
			if (p->len % 4)
				dest[p->len / 4] = 0;
			if (!nftdp_vm_copy_bits(pkt, (int64_t)off + p->offset, dest, p->len))
				break;
			return;
		}
		off += (clen + 3u) & ~3u;
	} while (off < pkt->len);
err:
	if (p->flags & NFT_EXTHDR_F_PRESENT)
		*dest = 0;
	else
		regs->verdict.code = NFT_BREAK;
}

static int exthdr_common(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e,
			 struct exthdr_priv *p)
{
	uint32_t offset = 0, len = 0, flags = 0, op = NFT_EXTHDR_OP_IPV6;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_TYPE))
		return nftdp_vm_errf(cc, -EINVAL, "exthdr: type missing");
	p->type = nftnl_expr_get_u8(e, NFTNL_EXPR_EXTHDR_TYPE);
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_OFFSET))
		offset = nftdp_vm_u32(e, NFTNL_EXPR_EXTHDR_OFFSET);
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_LEN))
		len = nftdp_vm_u32(e, NFTNL_EXPR_EXTHDR_LEN);
	if (offset > 255 || len > 255)
		return nftdp_vm_errf(cc, -ERANGE, "exthdr: offset %u / length %u", offset, len);
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_FLAGS))
		flags = nftdp_vm_u32(e, NFTNL_EXPR_EXTHDR_FLAGS);
	if (flags & ~(uint32_t)NFT_EXTHDR_F_PRESENT)
		return nftdp_vm_errf(cc, -EINVAL, "exthdr: flags 0x%x", flags);
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_OP))
		op = nftdp_vm_u32(e, NFTNL_EXPR_EXTHDR_OP);
	p->offset = (uint8_t)offset;
	p->len = (uint8_t)len;
	p->flags = (uint8_t)flags;
	p->op = (uint8_t)op;
	return 0;
}

static int exthdr_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct exthdr_priv *p = priv;
	int rc = exthdr_common(cc, e, p);

	if (rc < 0)
		return rc;
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_EXTHDR_DREG, &p->reg, NFT_DATA_VALUE,
					(p->flags & NFT_EXTHDR_F_PRESENT) ? 1 : p->len);
}

static int exthdr_ipv4_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct exthdr_priv *p = priv;
	int rc = exthdr_init(cc, e, priv);

	if (rc < 0)
		return rc;
	switch (p->type) {
	case 7:
	case 131:
	case 137:
	case 148:
		return 0;
	default:
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "exthdr: ip option %u not supported",
				     p->type);
	}
}

static int exthdr_tcp_set_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct exthdr_priv *p = priv;
	int rc = exthdr_common(cc, e, p);

	if (rc < 0)
		return rc;
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_FLAGS) && p->flags)
		return nftdp_vm_errf(cc, -EINVAL, "exthdr: flags on a write");
	if (p->len != 2 && p->len != 4)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "exthdr: tcp option write of %u bytes",
				     p->len);
	return nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_EXTHDR_SREG, &p->reg, p->len);
}

static int exthdr_strip_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	return exthdr_common(cc, e, priv);
}

#define EXTHDR_OPS(n, i, ev)                                                                       \
	static const struct nftdp_vm_expr_ops n = {                                                \
	    .name = "exthdr",                                                                      \
	    .size = sizeof(struct exthdr_priv),                                                    \
	    .init = i,                                                                             \
	    .eval = ev,                                                                            \
	}
EXTHDR_OPS(exthdr_ipv6_ops, exthdr_init, exthdr_ipv6_eval);
EXTHDR_OPS(exthdr_ipv4_ops, exthdr_ipv4_init, exthdr_ipv4_eval);
EXTHDR_OPS(exthdr_tcp_ops, exthdr_init, exthdr_tcp_eval);
EXTHDR_OPS(exthdr_tcp_set_ops, exthdr_tcp_set_init, exthdr_tcp_set_eval);
EXTHDR_OPS(exthdr_tcp_strip_ops, exthdr_strip_init, exthdr_tcp_strip_eval);
EXTHDR_OPS(exthdr_sctp_ops, exthdr_init, exthdr_sctp_eval);

/* nft_exthdr_select_ops */
static const struct nftdp_vm_expr_ops *exthdr_select_ops(struct nftdp_vm_cctx *cc,
							 const struct nftnl_expr *e)
{
	uint32_t op = NFT_EXTHDR_OP_IPV6;

	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_OP))
		op = nftdp_vm_u32(e, NFTNL_EXPR_EXTHDR_OP);
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_SREG) && nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_DREG)) {
		nftdp_vm_errf(cc, -EINVAL, "exthdr: both source and destination");
		return NULL;
	}
	if (op == NFT_EXTHDR_OP_DCCP) {
		nftdp_vm_errf(cc, -EOPNOTSUPP, "exthdr: dccp options not supported by nftdp");
		return NULL;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_SREG)) {
		if (op == NFT_EXTHDR_OP_TCPOPT)
			return &exthdr_tcp_set_ops;
		nftdp_vm_errf(cc, -EOPNOTSUPP, "exthdr: write supported for tcp options only");
		return NULL;
	}
	if (nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_DREG)) {
		switch (op) {
		case NFT_EXTHDR_OP_IPV6:
			return &exthdr_ipv6_ops;
		case NFT_EXTHDR_OP_TCPOPT:
			return &exthdr_tcp_ops;
		case NFT_EXTHDR_OP_IPV4:
			return &exthdr_ipv4_ops;
		case NFT_EXTHDR_OP_SCTP:
			return &exthdr_sctp_ops;
		}
	} else if (op == NFT_EXTHDR_OP_TCPOPT && nftdp_vm_attr(e, NFTNL_EXPR_EXTHDR_TYPE)) {
		return &exthdr_tcp_strip_ops;
	}
	nftdp_vm_errf(cc, -EOPNOTSUPP, "exthdr: operation %u not supported", op);
	return NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_exthdr = {
    .name = "exthdr",
    .select_ops = exthdr_select_ops,
};
