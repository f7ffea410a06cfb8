// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_vm: ns per packet for the nftdp VM on chains of 1, 10, 100 and 1000
 * realistic rules (ip saddr, ip daddr /24, tcp dport; no conntrack), and in
 * the same run DPDK rte_acl classifying the equivalent rules over the same
 * trace. Prints a table; never fails on a time.
 *
 *   bench_vm [--no-huge -m 512 --no-pci]   (EAL arguments; those are the defaults)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <rte_acl.h>
#include <rte_eal.h>

#include "nft_build.h"
#include "nftdp_vm.h"

#define TRACE 4096
#define BURST 64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t rnd_state = 1;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8 ^ rnd_state << 13;
}

struct brule {
	uint32_t saddr; /* host order, /32 */
	uint32_t daddr; /* host order, /24 */
	uint16_t dport;
};

/* ip saddr S ip daddr D/24 tcp dport P accept, as nft 1.0.6 emits it */
static struct nftnl_rule *make_rule(const struct brule *r, uint64_t handle)
{
	struct nftnl_rule *nr = nftnl_rule_alloc();
	uint8_t s[4] = {r->saddr >> 24, r->saddr >> 16, r->saddr >> 8, r->saddr};
	uint8_t d[3] = {r->daddr >> 24, r->daddr >> 16, r->daddr >> 8};
	uint8_t p[2] = {r->dport >> 8, r->dport};
	uint8_t tcp = 6;

	nftnl_rule_set_u64(nr, NFTNL_RULE_HANDLE, handle);
	nftnl_rule_add_expr(nr, payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 4, NFT_REG_1));
	nftnl_rule_add_expr(nr, cmp(NFT_CMP_EQ, NFT_REG_1, s, 4));
	nftnl_rule_add_expr(nr, payload(NFT_PAYLOAD_NETWORK_HEADER, 16, 3, NFT_REG_1));
	nftnl_rule_add_expr(nr, cmp(NFT_CMP_EQ, NFT_REG_1, d, 3));
	nftnl_rule_add_expr(nr, meta(NFT_META_L4PROTO, NFT_REG_1));
	nftnl_rule_add_expr(nr, cmp(NFT_CMP_EQ, NFT_REG_1, &tcp, 1));
	nftnl_rule_add_expr(nr, payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1));
	nftnl_rule_add_expr(nr, cmp(NFT_CMP_EQ, NFT_REG_1, p, 2));
	nftnl_rule_add_expr(nr, verdict(NF_ACCEPT, NULL));
	return nr;
}

/* rte_acl: the classic IPv4 5-tuple layout, offsets from the IP header */
enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, NUM_FIELDS };
static struct rte_acl_field_def acl_defs[NUM_FIELDS] = {
    {.type = RTE_ACL_FIELD_TYPE_BITMASK,
     .size = 1,
     .field_index = F_PROTO,
     .input_index = 0,
     .offset = 9},
    {.type = RTE_ACL_FIELD_TYPE_MASK,
     .size = 4,
     .field_index = F_SRC,
     .input_index = 1,
     .offset = 12},
    {.type = RTE_ACL_FIELD_TYPE_MASK,
     .size = 4,
     .field_index = F_DST,
     .input_index = 2,
     .offset = 16},
    {.type = RTE_ACL_FIELD_TYPE_RANGE,
     .size = 2,
     .field_index = F_SPORT,
     .input_index = 3,
     .offset = 20},
    {.type = RTE_ACL_FIELD_TYPE_RANGE,
     .size = 2,
     .field_index = F_DPORT,
     .input_index = 3,
     .offset = 22},
};
RTE_ACL_RULE_DEF(acl_rule, NUM_FIELDS);

static struct rte_acl_ctx *build_acl(const struct brule *rules, unsigned int n, int id)
{
	struct rte_acl_param prm = {
	    .socket_id = SOCKET_ID_ANY,
	    .rule_size = RTE_ACL_RULE_SZ(NUM_FIELDS),
	    .max_rule_num = n,
	};
	struct rte_acl_config cfg = {.num_categories = 1, .num_fields = NUM_FIELDS};
	struct rte_acl_ctx *ctx;
	char name[32];

	snprintf(name, sizeof(name), "bench%d", id);
	prm.name = name;
	ctx = rte_acl_create(&prm);
	if (!ctx)
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		struct acl_rule r = {0};

		r.data.category_mask = 1;
		r.data.priority = (int32_t)(n - i); /* first match wins, as nft */
		r.data.userdata = i + 1;
		r.field[F_PROTO].value.u8 = 6;
		r.field[F_PROTO].mask_range.u8 = 0xff;
		r.field[F_SRC].value.u32 = rules[i].saddr;
		r.field[F_SRC].mask_range.u32 = 32;
		r.field[F_DST].value.u32 = rules[i].daddr;
		r.field[F_DST].mask_range.u32 = 24;
		r.field[F_SPORT].value.u16 = 0;
		r.field[F_SPORT].mask_range.u16 = 0xffff;
		r.field[F_DPORT].value.u16 = rules[i].dport;
		r.field[F_DPORT].mask_range.u16 = rules[i].dport;
		if (rte_acl_add_rules(ctx, (struct rte_acl_rule *)&r, 1) < 0)
			goto err;
	}
	memcpy(cfg.defs, acl_defs, sizeof(acl_defs));
	if (rte_acl_build(ctx, &cfg) != 0)
		goto err;
	return ctx;
err:
	rte_acl_free(ctx);
	return NULL;
}

static uint8_t frames[TRACE][64];
static struct nftdp_vm_pkt pkts[TRACE];
static const uint8_t *acl_data[TRACE];

static void make_trace(const struct brule *rules, unsigned int n)
{
	for (int i = 0; i < TRACE; i++) {
		uint8_t *f = frames[i], *ip = f + 14;
		uint32_t s, d;
		uint16_t dp, sp = (uint16_t)(1024 + rnd() % 60000);
		uint8_t proto = 6;

		memset(f, 0, sizeof(frames[i]));
		if (rnd() % 2) { /* hits some rule */
			const struct brule *r = &rules[rnd() % n];

			s = r->saddr;
			d = r->daddr | (rnd() & 0xff);
			dp = r->dport;
		} else { /* misses: another source, or udp */
			s = 0xc0000000u | (rnd() & 0xffffff);
			d = 0x0a000000u | (rnd() & 0xffffff);
			dp = (uint16_t)(rnd() % 1024);
			if (rnd() % 4 == 0)
				proto = 17;
		}
		f[12] = 0x08;
		ip[0] = 0x45;
		ip[3] = 40;
		ip[8] = 64;
		ip[9] = proto;
		for (int k = 0; k < 4; k++) {
			ip[12 + k] = (uint8_t)(s >> (24 - 8 * k));
			ip[16 + k] = (uint8_t)(d >> (24 - 8 * k));
		}
		ip[20] = (uint8_t)(sp >> 8);
		ip[21] = (uint8_t)sp;
		ip[22] = (uint8_t)(dp >> 8);
		ip[23] = (uint8_t)dp;
		ip[32] = 0x50;
		nftdp_vm_pkt_init(&pkts[i], f, 54, 0, 14);
		nftdp_vm_pkt_parse_ip(&pkts[i]);
		acl_data[i] = ip;
	}
}

int main(int argc, char **argv)
{
	static const unsigned int sizes[] = {1, 10, 100, 1000};
	char *defargv[] = {argv[0], "--no-huge", "-m", "512", "--no-pci", "--log-level=3", NULL};
	struct nftdp_vm_state_config scfg = {
	    .n_workers = 1, .max_counters = 16, .max_cells = 16, .log_ring_size = 16};
	struct nftdp_vm_state *st;
	unsigned int iters = 200;

	if (argc > 1) {
		if (rte_eal_init(argc, argv) < 0)
			return 1;
	} else if (rte_eal_init(6, defargv) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	if (getenv("BENCH_ITERS"))
		iters = (unsigned int)atoi(getenv("BENCH_ITERS"));
	if (nftdp_vm_state_create(&scfg, &st) < 0)
		return 1;

	printf("trace: %d packets (half hit a rule), bursts of %d, %u passes\n", TRACE, BURST,
	       iters);
	printf("%6s %10s %12s %12s %10s %8s\n", "rules", "vm ops", "vm ns/pkt", "acl ns/pkt",
	       "vm/acl", "agree");
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		unsigned int n = sizes[si], agree = 0, accepted = 0;
		struct brule *rules = calloc(n, sizeof(*rules));
		struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4,
						.table = "filter",
						.name = "forward",
						.base = true,
						.hook = NF_INET_FORWARD,
						.policy = NF_DROP};
		struct nftdp_vm_chain *chain;
		struct nftdp_vm_ctx ctx = {.state = st};
		struct rte_acl_ctx *acl;
		unsigned int verdicts[BURST];
		static uint32_t results[TRACE];
		uint64_t t0, t_vm, t_acl;

		for (unsigned int i = 0; i < n; i++) {
			rules[i].saddr = 0x0a000000u | (rnd() & 0xffffff);
			rules[i].daddr = 0xac100000u | ((rnd() & 0xfff) << 8);
			rules[i].dport = (uint16_t)(1 + rnd() % 65000);
		}
		nftdp_vm_chain_create(&d, st, &chain);
		for (unsigned int i = 0; i < n; i++) {
			struct nftnl_rule *r = make_rule(&rules[i], i + 1);

			if (nftdp_vm_chain_add_rule(chain, r, NULL, st, NULL) < 0)
				return 1;
			nftnl_rule_free(r);
		}
		acl = build_acl(rules, n, (int)si);
		if (!acl) {
			fprintf(stderr, "rte_acl build failed\n");
			return 1;
		}
		make_trace(rules, n);

		/* agreement: every packet accepted by the VM iff rte_acl matched */
		for (int i = 0; i < TRACE; i++)
			rte_acl_classify(acl, &acl_data[i], &results[i], 1, 1);
		for (int i = 0; i < TRACE; i += BURST) {
			struct nftdp_vm_pkt *pp[BURST];

			for (int k = 0; k < BURST; k++)
				pp[k] = &pkts[i + k];
			nftdp_vm_run_burst(chain, pp, BURST, verdicts, &ctx);
			for (int k = 0; k < BURST; k++) {
				accepted += verdicts[k] == NF_ACCEPT;
				agree += (verdicts[k] == NF_ACCEPT) == (results[i + k] != 0);
			}
		}

		unsigned int vm_iters = n >= 1000 ? iters / 10 + 1 : iters;
		t0 = now_ns();
		for (unsigned int it = 0; it < vm_iters; it++) {
			for (int i = 0; i < TRACE; i += BURST) {
				struct nftdp_vm_pkt *pp[BURST];

				for (int k = 0; k < BURST; k++)
					pp[k] = &pkts[i + k];
				nftdp_vm_run_burst(chain, pp, BURST, verdicts, &ctx);
			}
		}
		t_vm = now_ns() - t0;
		t0 = now_ns();
		for (unsigned int it = 0; it < iters; it++)
			for (int i = 0; i < TRACE; i += BURST)
				rte_acl_classify(acl, &acl_data[i], &results[i], BURST, 1);
		t_acl = now_ns() - t0;

		double vm_ns = (double)t_vm / ((double)vm_iters * TRACE);
		double acl_ns = (double)t_acl / ((double)iters * TRACE);

		printf("%6u %10u %12.1f %12.1f %10.1f %7.1f%%   (accepted %u of %d)\n", n,
		       nftdp_vm_chain_n_ops(chain), vm_ns, acl_ns, vm_ns / acl_ns,
		       100.0 * agree / TRACE, accepted, TRACE);
		rte_acl_free(acl);
		nftdp_vm_chain_destroy(chain);
		free(rules);
	}
	nftdp_vm_state_destroy(st);
	rte_eal_cleanup();
	return 0;
}
