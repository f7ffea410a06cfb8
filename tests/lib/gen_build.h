/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generations in unit tests: a VM state and context (gen_fix), a chain of
 * a generation builder, a rule of NULL-terminated expressions
 * (tests/lib/nft_build.h builds them) compiled into it, the build, and an
 * IPv4 TCP packet view without a link header. Header-only;
 * include it after <cmocka.h> (the chain asserts through it).
 */
#ifndef NFTDP_TESTS_GEN_BUILD_H
#define NFTDP_TESTS_GEN_BUILD_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/rule.h>

#include "nftdp_vm.h"

/* compile handle's rule of the expressions in ap into chain c; the
 * result, with the reason on stderr when it fails */
static inline int gen_rule_v(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain *c,
			     uint64_t handle, va_list ap)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftdp_vm_error err;
	struct nftnl_expr *e;
	int rc;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, handle);
	while ((e = va_arg(ap, struct nftnl_expr *)))
		nftnl_rule_add_expr(r, e);
	rc = nftdp_vm_gen_add_rule(b, c, r, &err);
	nftnl_rule_free(r);
	if (rc)
		fprintf(stderr, "rule %llu: %s\n", (unsigned long long)handle, err.msg);
	return rc;
}

/* compile handle's rule of NULL-terminated expressions into chain c; the
 * result */
static inline int gen_rule(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain *c,
			   uint64_t handle, ...)
{
	va_list ap;
	int rc;

	va_start(ap, handle);
	rc = gen_rule_v(b, c, handle, ap);
	va_end(ap);
	return rc;
}

/* b built into a generation, which must succeed */
static inline struct nftdp_vm_gen *gen_build_ok(struct nftdp_vm_gen_builder *b)
{
	struct nftdp_vm_error err;
	struct nftdp_vm_gen *gen = NULL;

	assert_int_equal(nftdp_vm_gen_build(b, &gen, &err), 0);
	assert_non_null(gen);
	return gen;
}

/* a VM state of n_workers workers and an evaluation context on it */
struct gen_fix {
	struct nftdp_vm_state *st;
	struct nftdp_vm_ctx ctx;
};

static inline struct gen_fix *gen_fix_new(unsigned int n_workers)
{
	struct gen_fix *f = calloc(1, sizeof(*f));
	struct nftdp_vm_state_config cfg = {
	    .n_workers = n_workers, .max_counters = 64, .max_cells = 64, .log_ring_size = 8};

	assert_non_null(f);
	assert_int_equal(nftdp_vm_state_create(&cfg, &f->st), 0);
	f->ctx.state = f->st;
	f->ctx.prng = 1;
	return f;
}

static inline void gen_fix_free(struct gen_fix *f)
{
	nftdp_vm_state_destroy(f->st);
	free(f);
}

/* chain name of table "t" in b; id: its chain id (verdict maps name it) */
static inline struct nftdp_vm_chain *gen_chain(struct nftdp_vm_gen_builder *b, uint8_t family,
					       const char *name, bool base, uint8_t hook,
					       int32_t prio, uint32_t policy, uint32_t id)
{
	struct nftdp_vm_chain_desc d = {.family = family,
					.table = "t",
					.name = name,
					.base = base,
					.hook = hook,
					.policy = policy,
					.chain_id = id};
	struct nftdp_vm_chain *c = NULL;

	assert_int_equal(nftdp_vm_gen_chain_create(b, &d, prio, &c), 0);
	return c;
}

struct gen_tpkt {
	uint8_t buf[64];
	struct nftdp_vm_pkt pkt;
};

/* IPv4 TCP 10.0.0.1:1234 -> 10.0.0.2:80 (a SYN), no link header */
static inline struct nftdp_vm_pkt *gen_tcp4(struct gen_tpkt *t)
{
	static const uint8_t hdr[] = {
	    0x45, 0,	0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10,   0,    0,	  1,	10, 0, 0, 2,
	    0x04, 0xd2, 0, 80, 0, 0, 0, 1, 0,  0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0,  0, 0, 0,
	};

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, hdr, sizeof(hdr));
	nftdp_vm_pkt_init(&t->pkt, t->buf, sizeof(hdr), -1, 0);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	return &t->pkt;
}

#endif /* NFTDP_TESTS_GEN_BUILD_H */
