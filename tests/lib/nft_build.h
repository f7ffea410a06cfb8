/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libnftnl expression builders shared by the unit tests, the conntrack replay
 * tool and bench/vm: each returns one expression as nft would put it in a
 * rule (the kernel's nft_*_init attributes), for nftnl_rule_add_expr.
 * Header-only (static inline): include it after <libnftnl/expr.h>'s users'
 * headers; the test's meson entry adds tests/lib to its include path.
 *
 * Registers are the kernel's (NFT_REG_1..4, NFT_REG32_00..15); data is in
 * the byte order the kernel's registers hold (network order for header
 * fields, host order for meta/ct keys that are host order in the kernel).
 */
#ifndef NFTDP_TESTS_NFT_BUILD_H
#define NFTDP_TESTS_NFT_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <libnftnl/expr.h>
#include <linux/netfilter/nf_tables.h>

/* an expression of this type; a library that does not know it is fatal */
static inline struct nftnl_expr *ex(const char *name)
{
	struct nftnl_expr *e = nftnl_expr_alloc(name);

	if (!e) {
		fprintf(stderr, "nftnl_expr_alloc(\"%s\") failed\n", name);
		abort();
	}
	return e;
}

/* payload load: @len bytes at @off from header @base into @dreg */
static inline struct nftnl_expr *payload(uint32_t base, uint32_t off, uint32_t len, uint32_t dreg)
{
	struct nftnl_expr *e = ex("payload");

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
	return e;
}

/* cmp: @sreg @op the @len bytes at @data */
static inline struct nftnl_expr *cmp(uint32_t op, uint32_t sreg, const void *data, uint32_t len)
{
	struct nftnl_expr *e = ex("cmp");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, sreg);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	return e;
}

static inline struct nftnl_expr *cmp32(uint32_t op, uint32_t sreg, uint32_t v)
{
	return cmp(op, sreg, &v, 4);
}

/* immediate verdict; @chain for NFT_JUMP/NFT_GOTO, else NULL */
static inline struct nftnl_expr *verdict(int code, const char *chain)
{
	struct nftnl_expr *e = ex("immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)code);
	if (chain)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
	return e;
}

/* immediate data: @len bytes at @data into @dreg */
static inline struct nftnl_expr *imm(uint32_t dreg, const void *data, uint32_t len)
{
	struct nftnl_expr *e = ex("immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, dreg);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, data, len);
	return e;
}

static inline struct nftnl_expr *imm32(uint32_t dreg, uint32_t v)
{
	return imm(dreg, &v, 4);
}

/* meta load: key @key into @dreg */
static inline struct nftnl_expr *meta(uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = ex("meta");

	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
	return e;
}

/* meta set: key @key from @sreg */
static inline struct nftnl_expr *meta_set(uint32_t key, uint32_t sreg)
{
	struct nftnl_expr *e = ex("meta");

	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, sreg);
	return e;
}

/* ct load: key @key into @dreg; @dir an IP_CT_DIR_*, or -1 for none */
static inline struct nftnl_expr *ct_get(uint32_t key, int dir, uint32_t dreg)
{
	struct nftnl_expr *e = ex("ct");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, dreg);
	if (dir >= 0)
		nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, (uint8_t)dir);
	return e;
}

/* ct set: key @key from @sreg; @dir an IP_CT_DIR_*, or -1 for none */
static inline struct nftnl_expr *ct_set_dir(uint32_t key, uint32_t sreg, int dir)
{
	struct nftnl_expr *e = ex("ct");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, sreg);
	if (dir >= 0)
		nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, (uint8_t)dir);
	return e;
}

static inline struct nftnl_expr *ct_set(uint32_t key, uint32_t sreg)
{
	return ct_set_dir(key, sreg, -1);
}

/* bitwise: @reg = @reg & mask ^ 0 over @len (<= 4) bytes; the mask's bytes
 * are @mask's as it lies in memory (host order) */
static inline struct nftnl_expr *bitwise_and(uint32_t reg, uint32_t len, uint32_t mask)
{
	struct nftnl_expr *e = ex("bitwise");
	uint32_t zero = 0;

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, reg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, reg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, len);
	return e;
}

#endif /* NFTDP_TESTS_NFT_BUILD_H */
