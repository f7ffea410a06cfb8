// SPDX-License-Identifier: BSD-3-Clause
/*
 * Table-driven VM tests: tests/data/vm/cases.txt holds rules as the kernel's
 * `nft --debug=netlink` printed them, packets.txt the packets. Each bytecode
 * line is turned back into a libnftnl expression, the rule is compiled into a
 * base chain and every expected packet is run through it. A second test runs
 * every case over every truncation of every packet between guard pages
 * (never reads or writes out of bounds; it fails in every build, and ASan
 * adds the uninitialised and use-after-free checks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h> /* after the headers it needs */

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "nftdp_vm.h"

#define MAX_PKTS 64
#define MAX_CASES 256
#define MAX_EXPECT 8

static const char *data_dir = "tests/data/vm";

struct tpkt {
	char name[32];
	uint8_t bytes[2048];
	uint32_t len;
};

struct texpect {
	char pkt[32];
	char verdict[16];
	char checks[256];
};

struct tcase {
	char name[64];
	uint8_t family;
	struct nftnl_rule *rule;
	int n_expect;
	struct texpect expect[MAX_EXPECT];
	int line;
};

static struct tpkt pkts[MAX_PKTS];
static int n_pkts;
static struct tcase cases[MAX_CASES];
static int n_cases;

static const char *const meta_keys[] = {
    "len",	   "protocol",	"priority", "mark",	"iif",	       "oif",
    "iifname",	   "oifname",	"iiftype",  "oiftype",	"skuid",       "skgid",
    "nftrace",	   "rtclassid", "secmark",  "nfproto",	"l4proto",     "bri_iifname",
    "bri_oifname", "pkttype",	"cpu",	    "iifgroup", "oifgroup",    "cgroup",
    "random",	   "secpath",	"iifkind",  "oifkind",	"bri_iifpvid", "bri_iifvproto",
    "time",	   "day",	"hour",	    "sdif",	"sdifname",
};
static const uint8_t meta_len[] = {
    4,	2, 4, 4, 4, 4, 16, 16, 2,  2,  4, 4, 1, 4, 4, 1, 1,  16,
    16, 1, 4, 4, 4, 4, 4,  1,  16, 16, 2, 2, 8, 1, 4, 4, 16,
};

/* the length the last load put in a register: bitwise/cmp/range lines only
 * print whole words, the kernel's expressions carry the byte length */
static uint32_t reg_len[32];

static int parse_words(char **tok, int n, uint8_t *out)
{
	int i;

	for (i = 0; i < n && tok[i] && strncmp(tok[i], "0x", 2) == 0; i++) {
		uint32_t w = (uint32_t)strtoul(tok[i], NULL, 16);

		memcpy(out + i * 4, &w, 4); /* libnftnl prints host-order words */
	}
	return i;
}

static uint32_t data_len(uint32_t reg, int words)
{
	uint32_t l = reg < 32 ? reg_len[reg] : 0;

	if (l && (l + 3) / 4 == (uint32_t)words)
		return l;
	return (uint32_t)words * 4;
}

static struct nftnl_expr *parse_expr(char *line)
{
	char *tok[64], *save = NULL, *t;
	int n = 0;
	struct nftnl_expr *e;

	for (t = strtok_r(line, " \t", &save); t && n < 63; t = strtok_r(NULL, " \t", &save))
		if (strcmp(t, "[") && strcmp(t, "]"))
			tok[n++] = t;
	tok[n] = NULL;
	if (n == 0)
		return NULL;
	e = nftnl_expr_alloc(tok[0]);
	if (!e)
		return NULL;
	if (!strcmp(tok[0], "payload")) {
		int i = 1, base;
		bool write = !strcmp(tok[1], "write");
		uint32_t reg = 0, len, off;

		if (write) {
			reg = (uint32_t)atoi(tok[3]);
			i = 5;
		} else {
			i = 2;
		}
		len = (uint32_t)atoi(tok[i]);
		base = !strcmp(tok[i + 2], "link")	  ? 0
		       : !strcmp(tok[i + 2], "network")	  ? 1
		       : !strcmp(tok[i + 2], "transport") ? 2
							  : 3;
		off = (uint32_t)atoi(tok[i + 5]);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, (uint32_t)base);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
		if (write) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_SREG, reg);
			nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_CSUM_TYPE,
					   (uint32_t)atoi(tok[i + 7]));
			nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_CSUM_OFFSET,
					   (uint32_t)atoi(tok[i + 9]));
			nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_FLAGS,
					   (uint32_t)strtoul(tok[i + 11], NULL, 0));
		} else {
			reg = (uint32_t)atoi(tok[i + 8]);
			nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, reg);
			reg_len[reg] = len;
		}
	} else if (!strcmp(tok[0], "cmp")) {
		static const char *const ops[] = {"eq", "neq", "lt", "lte", "gt", "gte"};
		uint8_t d[64] = {0};
		uint32_t reg = (uint32_t)atoi(tok[3]);
		int w = parse_words(&tok[4], 16, d);

		for (uint32_t o = 0; o < 6; o++)
			if (!strcmp(tok[1], ops[o]))
				nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, o);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, reg);
		nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, d, data_len(reg, w));
	} else if (!strcmp(tok[0], "range")) {
		uint8_t d[64] = {0};
		uint32_t reg = (uint32_t)atoi(tok[3]);
		int w = parse_words(&tok[4], 16, d) / 2;
		uint32_t l = data_len(reg, w);

		nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_OP,
				   strcmp(tok[1], "eq") ? NFT_RANGE_NEQ : NFT_RANGE_EQ);
		nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_SREG, reg);
		nftnl_expr_set(e, NFTNL_EXPR_RANGE_FROM_DATA, d, l);
		nftnl_expr_set(e, NFTNL_EXPR_RANGE_TO_DATA, d + w * 4, l);
	} else if (!strcmp(tok[0], "meta")) {
		uint32_t key = 0;

		for (uint32_t k = 0; k < sizeof(meta_keys) / sizeof(meta_keys[0]); k++)
			if (!strcmp(tok[2], meta_keys[k]))
				key = k;
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
		if (!strcmp(tok[1], "load")) {
			uint32_t reg = (uint32_t)atoi(tok[5]);

			nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, reg);
			reg_len[reg] = meta_len[key];
		} else {
			nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, (uint32_t)atoi(tok[5]));
		}
	} else if (!strcmp(tok[0], "immediate")) {
		uint32_t reg = (uint32_t)atoi(tok[2]);

		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, reg);
		if (reg == 0) {
			static const struct {
				const char *n;
				int v;
			} vs[] = {
			    {"accept", NF_ACCEPT},  {"drop", NF_DROP},	{"continue", NFT_CONTINUE},
			    {"return", NFT_RETURN}, {"jump", NFT_JUMP}, {"goto", NFT_GOTO},
			    {"queue", NF_QUEUE},
			};

			for (size_t k = 0; k < sizeof(vs) / sizeof(vs[0]); k++)
				if (!strcmp(tok[3], vs[k].n))
					nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT,
							   (uint32_t)vs[k].v);
			if (tok[4] && !strcmp(tok[4], "->"))
				nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, tok[5]);
		} else {
			uint8_t d[64] = {0};
			int w = parse_words(&tok[3], 16, d);

			nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, d, (uint32_t)w * 4);
			reg_len[reg] = (uint32_t)w * 4;
		}
	} else if (!strcmp(tok[0], "bitwise")) {
		uint32_t dreg = (uint32_t)atoi(tok[2]), sreg = (uint32_t)atoi(tok[6]);
		uint8_t m[64] = {0}, x[64] = {0};

		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, sreg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, dreg);
		if (!strcmp(tok[7], "&")) {
			int w = parse_words(&tok[8], 16, m);
			uint32_t l = data_len(sreg, w);

			parse_words(&tok[8 + w + 2], 16, x);
			nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_OP, NFT_BITWISE_BOOL);
			nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, l);
			nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, m, l);
			nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, x, l);
			reg_len[dreg] = l;
		} else {
			uint32_t sh = (uint32_t)strtoul(tok[8], NULL, 16);

			nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_OP,
					   !strcmp(tok[7], "<<") ? NFT_BITWISE_LSHIFT
								 : NFT_BITWISE_RSHIFT);
			nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 4);
			nftnl_expr_set(e, NFTNL_EXPR_BITWISE_DATA, &sh, 4);
		}
	} else if (!strcmp(tok[0], "byteorder")) {
		/* reg D = hton(reg S, SIZE, LEN) */
		char op[8] = {0};
		unsigned int d, s, size, len;

		sscanf(tok[4], "%4[a-z]", op);
		d = (unsigned int)atoi(tok[2]);
		s = (unsigned int)atoi(tok[5]);
		size = (unsigned int)atoi(tok[6]);
		len = (unsigned int)atoi(tok[7]);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_DREG, d);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_SREG, s);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_OP,
				   !strcmp(op, "hton") ? NFT_BYTEORDER_HTON : NFT_BYTEORDER_NTOH);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_SIZE, size);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BYTEORDER_LEN, len);
		reg_len[d] = len;
	} else if (!strcmp(tok[0], "exthdr")) {
		bool write = !strcmp(tok[1], "write");
		uint32_t op = !strcmp(tok[2], "ipv6")	  ? NFT_EXTHDR_OP_IPV6
			      : !strcmp(tok[2], "tcpopt") ? NFT_EXTHDR_OP_TCPOPT
							  : NFT_EXTHDR_OP_IPV4;
		int i = write ? 6 : 3;
		uint32_t len = (uint32_t)atoi(tok[i]);

		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, op);
		nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, (uint8_t)atoi(tok[i + 2]));
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OFFSET, (uint32_t)atoi(tok[i + 4]));
		nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, len);
		if (write) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_SREG, (uint32_t)atoi(tok[4]));
		} else {
			int j = i + 5;
			uint32_t reg;

			if (!strcmp(tok[j], "present")) {
				nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_FLAGS,
						   NFT_EXTHDR_F_PRESENT);
				j++;
			}
			reg = (uint32_t)atoi(tok[j + 2]);
			nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_DREG, reg);
			reg_len[reg] = len;
		}
	} else if (!strcmp(tok[0], "counter")) {
		nftnl_expr_set_u64(e, NFTNL_EXPR_CTR_PACKETS, strtoull(tok[2], NULL, 0));
		nftnl_expr_set_u64(e, NFTNL_EXPR_CTR_BYTES, strtoull(tok[4], NULL, 0));
	} else if (!strcmp(tok[0], "ct")) {
		uint32_t reg = (uint32_t)atoi(tok[5]);

		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, reg);
		reg_len[reg] = 4;
	} else if (!strcmp(tok[0], "reject")) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, (uint32_t)atoi(tok[2]));
		nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, (uint8_t)atoi(tok[4]));
	} else if (!strcmp(tok[0], "numgen")) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_NG_DREG, (uint32_t)atoi(tok[2]));
		nftnl_expr_set_u32(e, NFTNL_EXPR_NG_TYPE,
				   !strcmp(tok[4], "inc") ? NFT_NG_INCREMENTAL : NFT_NG_RANDOM);
		nftnl_expr_set_u32(e, NFTNL_EXPR_NG_MODULUS, (uint32_t)atoi(tok[6]));
		if (tok[7] && !strcmp(tok[7], "offset"))
			nftnl_expr_set_u32(e, NFTNL_EXPR_NG_OFFSET, (uint32_t)atoi(tok[8]));
	} else if (!strcmp(tok[0], "hash")) {
		/* reg D = jhash(reg S, LEN, 0xSEED) % mod M */
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_DREG, (uint32_t)atoi(tok[2]));
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_TYPE, NFT_HASH_JENKINS);
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_SREG, (uint32_t)atoi(tok[5]));
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_LEN, (uint32_t)atoi(tok[6]));
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_SEED, (uint32_t)strtoul(tok[7], NULL, 16));
		nftnl_expr_set_u32(e, NFTNL_EXPR_HASH_MODULUS, (uint32_t)atoi(tok[10]));
	}
	return e;
}

static void load_packets(void)
{
	char path[512], line[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/packets.txt", data_dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && n_pkts < MAX_PKTS) {
		char name[32], hex[8000];
		struct tpkt *p = &pkts[n_pkts];

		if (sscanf(line, "%31s %7999s", name, hex) != 2)
			continue;
		snprintf(p->name, sizeof(p->name), "%s", name);
		/* Ethernet: dst 00:11:22:33:44:55 src 66:77:88:99:aa:bb */
		static const uint8_t eth[12] = {0,    0x11, 0x22, 0x33, 0x44, 0x55,
						0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb};
		memcpy(p->bytes, eth, 12);
		p->len = 14;
		for (size_t i = 0; hex[2 * i] && hex[2 * i + 1]; i++) {
			unsigned int b;

			sscanf(&hex[2 * i], "%2x", &b);
			p->bytes[p->len++] = (uint8_t)b;
		}
		p->bytes[12] = (p->bytes[14] >> 4) == 6 ? 0x86 : 0x08;
		p->bytes[13] = (p->bytes[14] >> 4) == 6 ? 0xdd : 0x00;
		n_pkts++;
	}
	fclose(f);
}

static void load_cases(void)
{
	char path[512], line[1024];
	struct tcase *c = NULL;
	int lineno = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cases.txt", data_dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *s = line;

		lineno++;
		s[strcspn(s, "\n")] = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "case ", 5)) {
			assert_true(n_cases < MAX_CASES);
			c = &cases[n_cases++];
			memset(c, 0, sizeof(*c));
			snprintf(c->name, sizeof(c->name), "%s", s + 5);
			c->rule = nftnl_rule_alloc();
			nftnl_rule_set_u64(c->rule, NFTNL_RULE_HANDLE, (uint64_t)n_cases);
			c->family = NFPROTO_IPV4;
			c->line = lineno;
			memset(reg_len, 0, sizeof(reg_len));
		} else if (!strncmp(s, "family ", 7)) {
			c->family = !strcmp(s + 7, "ip6")      ? NFPROTO_IPV6
				    : !strcmp(s + 7, "inet")   ? NFPROTO_INET
				    : !strcmp(s + 7, "netdev") ? NFPROTO_NETDEV
							       : NFPROTO_IPV4;
		} else if (*s == '[') {
			struct nftnl_expr *e = parse_expr(s);

			assert_non_null(e);
			nftnl_rule_add_expr(c->rule, e);
		} else if (!strncmp(s, "expect ", 7)) {
			struct texpect *x = &c->expect[c->n_expect++];
			int off = 0;

			assert_true(c->n_expect <= MAX_EXPECT);
			sscanf(s + 7, "%31s %15s %n", x->pkt, x->verdict, &off);
			snprintf(x->checks, sizeof(x->checks), "%s", off ? s + 7 + off : "");
		} else if (!strcmp(s, "end")) {
			c = NULL;
		}
	}
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	if (getenv("NFTDP_VM_DATA"))
		data_dir = getenv("NFTDP_VM_DATA");
	load_packets();
	load_cases();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < n_cases; i++)
		nftnl_rule_free(cases[i].rule);
	return 0;
}

static const struct tpkt *find_pkt(const char *name)
{
	for (int i = 0; i < n_pkts; i++)
		if (!strcmp(pkts[i].name, name))
			return &pkts[i];
	return NULL;
}

struct harness {
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *chain;
	struct nftdp_vm_ctx ctx;
};

static int build(struct harness *h, const struct tcase *c, struct nftdp_vm_error *err)
{
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 2, .max_counters = 64, .max_cells = 64, .log_ring_size = 16};
	struct nftdp_vm_chain_desc d = {
	    .family = c->family,
	    .table = "t",
	    .name = "c",
	    .base = true,
	    .hook = NF_INET_PRE_ROUTING,
	    .policy = NF_ACCEPT,
	};
	int rc;

	memset(h, 0, sizeof(*h));
	assert_int_equal(nftdp_vm_state_create(&cfg, &h->st), 0);
	nftdp_vm_state_gen_begin(h->st);
	assert_int_equal(nftdp_vm_chain_create(&d, h->st, &h->chain), 0);
	rc = nftdp_vm_chain_add_rule(h->chain, c->rule, NULL, h->st, err);
	h->ctx.state = h->st;
	h->ctx.worker = 1;
	h->ctx.now_real_ns = 1704218400ull * 1000000000ull; /* Tue 2024-01-02 18:00 UTC */
	h->ctx.now_ns = 1000000000ull;
	h->ctx.now_ms = 1000;
	return rc;
}

static void unbuild(struct harness *h)
{
	nftdp_vm_chain_destroy(h->chain);
	nftdp_vm_state_destroy(h->st);
}

static void pkt_setup(struct nftdp_vm_pkt *pkt, uint8_t *buf, uint32_t len)
{
	nftdp_vm_pkt_init(pkt, buf, len, 0, 14);
	nftdp_vm_pkt_parse_ip(pkt);
	pkt->iif = 1;
	pkt->iifname = "dp0";
	pkt->iiftype = 1;
	pkt->hook = NF_INET_PRE_ROUTING;
}

static unsigned int run(struct harness *h, struct nftdp_vm_pkt *pkt, struct nftdp_vm_regs *regs,
			bool *policy)
{
	struct nftdp_vm_counter before, after;
	unsigned int v;

	nftdp_vm_chain_stats(h->chain, h->st, &before);
	v = nftdp_vm_run_chain_regs(h->chain, pkt, &h->ctx, regs);
	nftdp_vm_chain_stats(h->chain, h->st, &after);
	*policy = after.packets != before.packets;
	return v;
}

static int check_one(const struct tcase *c, const struct texpect *x)
{
	const struct tpkt *tp = find_pkt(x->pkt);
	struct nftdp_vm_error err;
	struct nftdp_vm_regs regs;
	struct nftdp_vm_pkt pkt;
	struct harness h;
	uint8_t buf[2048];
	const char *got;
	bool policy;
	unsigned int v;
	int fails = 0;
	char checks[256], *save = NULL;

	if (!tp) {
		print_error("case %s: no packet %s\n", c->name, x->pkt);
		return 1;
	}
	if (build(&h, c, &err) < 0) {
		print_error("case %s (line %d): compile: %s\n", c->name, c->line, err.msg);
		unbuild(&h);
		return 1;
	}
	memcpy(buf, tp->bytes, tp->len);
	pkt_setup(&pkt, buf, tp->len);
	v = run(&h, &pkt, &regs, &policy);
	got = policy	       ? "continue"
	      : v == NF_ACCEPT ? "accept"
	      : v == NF_DROP   ? "drop"
	      : v == NF_STOLEN ? "stolen"
			       : "?";
	if (strcmp(got, x->verdict)) {
		print_error("case %s, %s: verdict %s, expected %s\n", c->name, x->pkt, got,
			    x->verdict);
		fails++;
	}
	snprintf(checks, sizeof(checks), "%s", x->checks);
	for (char *t = strtok_r(checks, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		unsigned int a, b;

		if (sscanf(t, "reg32:%u=%x", &a, &b) == 2) {
			if (regs.data[a] != b) {
				print_error("case %s, %s: reg32:%u = 0x%08x, expected 0x%08x\n",
					    c->name, x->pkt, a, regs.data[a], b);
				fails++;
			}
		} else if (sscanf(t, "mark=%x", &a) == 1) {
			if (pkt.mark != a) {
				print_error("case %s, %s: mark 0x%x, expected 0x%x\n", c->name,
					    x->pkt, pkt.mark, a);
				fails++;
			}
		} else if (sscanf(t, "reject=%u/%u", &a, &b) == 2) {
			if (!pkt.out.reject || pkt.out.reject_type != a ||
			    pkt.out.reject_code != b) {
				print_error("case %s, %s: reject %d %u/%u, expected %u/%u\n",
					    c->name, x->pkt, pkt.out.reject, pkt.out.reject_type,
					    pkt.out.reject_code, a, b);
				fails++;
			}
		} else if (!strcmp(t, "notrack")) {
			if (!pkt.out.notrack) {
				print_error("case %s, %s: not notrack\n", c->name, x->pkt);
				fails++;
			}
		} else if (sscanf(t, "pkt:%u=", &a) == 1) {
			const char *hex = strchr(t, '=') + 1;

			for (size_t i = 0; hex[2 * i]; i++) {
				sscanf(&hex[2 * i], "%2x", &b);
				if (buf[14 + a + i] != b) {
					print_error("case %s, %s: byte %zu = %02x, expected %02x\n",
						    c->name, x->pkt, a + i, buf[14 + a + i], b);
					fails++;
				}
			}
		} else {
			print_error("case %s: unknown check %s\n", c->name, t);
			fails++;
		}
	}
	/* reject and drop without reject agree */
	if (!strcmp(x->verdict, "drop") && !strstr(x->checks, "reject=") && pkt.out.reject &&
	    strcmp(tp->name, "ip4_frag")) {
		print_error("case %s, %s: unexpected reject\n", c->name, x->pkt);
		fails++;
	}
	unbuild(&h);
	return fails;
}

static void test_table(void **state)
{
	int fails = 0, n = 0;

	(void)state;
	assert_true(n_cases > 50);
	for (int i = 0; i < n_cases; i++)
		for (int j = 0; j < cases[i].n_expect; j++, n++)
			fails += check_one(&cases[i], &cases[i].expect[j]);
	print_message("vm table: %d cases, %d packet checks, %d failures\n", n_cases, n, fails);
	assert_int_equal(fails, 0);
}

/* Every case over every truncation of every packet, placed once against
 * the end and once against the start of a page fenced by PROT_NONE pages:
 * any byte read or written past either end faults (SIGSEGV, which cmocka
 * reports as this test failing) in every build, not only under ASan. */
static void test_never_out_of_bounds(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long runs = 0;
	uint8_t *fence;

	(void)state;
	fence = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	assert_true(fence != MAP_FAILED);
	assert_int_equal(mprotect(fence, (size_t)page, PROT_NONE), 0);
	assert_int_equal(mprotect(fence + 2 * page, (size_t)page, PROT_NONE), 0);
	for (int i = 0; i < n_cases; i++) {
		struct nftdp_vm_error err;
		struct harness h;

		assert_int_equal(build(&h, &cases[i], &err), 0);
		for (int p = 0; p < n_pkts; p++) {
			assert_true(pkts[p].len <= (uint32_t)page);
			for (uint32_t len = 0; len <= pkts[p].len; len++)
				for (int at_end = 0; at_end < 2; at_end++) {
					struct nftdp_vm_regs regs;
					struct nftdp_vm_pkt pkt;
					uint8_t *buf =
					    fence + page + (at_end ? (size_t)page - len : 0);
					bool policy;

					memcpy(buf, pkts[p].bytes, len);
					nftdp_vm_pkt_init(&pkt, buf, len, 0, len >= 14 ? 14 : len);
					nftdp_vm_pkt_parse_ip(&pkt);
					if (len < 14)
						pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_L4PROTO;
					/* also claim a transport header there is no room for */
					if (len > 20 && (len & 1)) {
						pkt.flags |= NFTDP_VM_PKT_F_L4PROTO;
						pkt.th_off = len - 1;
					}
					run(&h, &pkt, &regs, &policy);
					runs++;
				}
		}
		unbuild(&h);
	}
	munmap(fence, 3 * (size_t)page);
	print_message("oob: %lu runs\n", runs);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_never_out_of_bounds),
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests_name("vm_table", tests, setup, teardown);
}
