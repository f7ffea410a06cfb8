// SPDX-License-Identifier: BSD-3-Clause
/*
 * Per-element expressions (meters) through the VM and a real sets/ set:
 * the element state's layout (init, read, eval through rules), dynset
 * cloning its expressions or the set's into new elements and running
 * them (a limit over its rate breaks the rule), lookups charging the
 * element's counter and quota, nft_dynset_init's checks, and exact
 * counters with several workers updating one element.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>

#include "nft_build.h"
#include "nftdp_common.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

#define NSEC 1000000000ull

struct world {
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *chains[8];
	int n_chains;
	struct nftdp_vm_set_info sets[4];
	const char *set_names[4];
	int n_sets;
	struct nftdp_vm_resolver res;
	struct nftdp_vm_ctx ctx;
	struct nftdp_vm_error err;
};

static int res_set(void *o, const char *table, const char *name, uint32_t id,
		   struct nftdp_vm_set_info *out)
{
	struct world *w = o;

	(void)table;
	(void)id;
	for (int i = 0; i < w->n_sets; i++) {
		if (name && !strcmp(w->set_names[i], name)) {
			*out = w->sets[i];
			return 0;
		}
	}
	return -ENOENT;
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct nftdp_vm_state_config cfg = {.n_workers = 4,
					    .max_counters = 64,
					    .max_cells = 64,
					    .log_ring_size = 8,
					    .hash_seed = 7};

	assert_int_equal(nftdp_vm_state_create(&cfg, &w->st), 0);
	nftdp_vm_state_gen_begin(w->st);
	w->res = (struct nftdp_vm_resolver){.opaque = w, .set = res_set};
	w->ctx.state = w->st;
	w->ctx.now_ns = 10 * NSEC;
	w->ctx.now_ms = 10000;
	w->ctx.prng = 1;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	for (int i = 0; i < w->n_chains; i++)
		nftdp_vm_chain_destroy(w->chains[i]);
	for (int i = 0; i < w->n_sets; i++)
		nftdp_set_destroy(w->sets[i].set);
	nftdp_vm_state_destroy(w->st);
	free(w);
	return 0;
}

/* a dynamic hash set of IPv4 addresses whose elements carry expressions
 * (96 bytes of data at offset 0), with the set's own (tmpl) or none */
static struct nftdp_set *add_set(struct world *w, const char *name, uint32_t flags,
				 const void *tmpl)
{
	struct nftdp_set_desc d = {
	    .flags = flags, .key_size = 4, .data_size = NFTDP_VM_ELEM_EXPR_SIZE, .max_elems = 1024};
	struct nftdp_set *s;

	assert_int_equal(nftdp_set_create(&d, &s), 0);
	w->sets[w->n_sets] = (struct nftdp_vm_set_info){
	    .set = s, .flags = flags, .klen = 4, .elem_expr_at = 1, .elem_expr_tmpl = tmpl};
	w->set_names[w->n_sets++] = name;
	return s;
}

static struct nftdp_vm_chain *chain(struct world *w)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_IPV4,
					.table = "t",
					.name = "c",
					.base = true,
					.hook = NF_INET_FORWARD,
					.policy = NF_ACCEPT,
					.chain_id = (uint32_t)w->n_chains};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c), 0);
	w->chains[w->n_chains++] = c;
	return c;
}

static int add(struct world *w, struct nftdp_vm_chain *c, ...)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e;
	va_list ap;
	int rc;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, 1);
	va_start(ap, c);
	while ((e = va_arg(ap, struct nftnl_expr *)))
		nftnl_rule_add_expr(r, e);
	va_end(ap);
	rc = nftdp_vm_chain_add_rule(c, r, &w->res, w->st, &w->err);
	nftnl_rule_free(r);
	return rc;
}

struct tpkt {
	uint8_t buf[64];
	struct nftdp_vm_pkt pkt;
};

/* IPv4 TCP from 10.0.0.<src> behind an ethernet header: 40 bytes at L3 */
static struct nftdp_vm_pkt *tcp4(struct tpkt *t, uint8_t src)
{
	static const uint8_t hdr[] = {
	    0, 1,  2, 3, 4,  5, 6, 7, 8,  9, 10,   11,	 0x08, 0x00, 0x45, 0, 0,    40,
	    0, 1,  0, 0, 64, 6, 0, 0, 10, 0, 0,	   1,	 10,   0,    0,	   2, 0x04, 0xd2,
	    0, 22, 0, 0, 0,  0, 0, 0, 0,  0, 0x50, 0x02, 0xff, 0xff, 0,	   0, 0,    0,
	};

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, hdr, sizeof(hdr));
	t->buf[29] = src;
	nftdp_vm_pkt_init(&t->pkt, t->buf, sizeof(hdr), 0, 14);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	return &t->pkt;
}

#define SADDR payload(NFT_PAYLOAD_NETWORK_HEADER, 12, 4, NFT_REG_1)

static struct nftnl_expr *dynset(const char *set, uint32_t op, uint32_t flags, ...)
{
	struct nftnl_expr *e = ex("dynset"), *x;
	va_list ap;

	nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, op);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG_1);
	if (flags)
		nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_FLAGS, flags);
	va_start(ap, flags);
	while ((x = va_arg(ap, struct nftnl_expr *)))
		nftnl_expr_add_expr(e, NFTNL_EXPR_DYNSET_EXPRESSIONS, x);
	va_end(ap);
	return e;
}

static struct nftnl_expr *limit(uint64_t rate, uint32_t burst, bool over)
{
	struct nftnl_expr *e = ex("limit");

	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, rate);
	nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, burst);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_FLAGS, over ? NFT_LIMIT_F_INV : 0);
	return e;
}

static struct nftnl_expr *quota(uint64_t bytes, bool over)
{
	struct nftnl_expr *e = ex("quota");

	nftnl_expr_set_u64(e, NFTNL_EXPR_QUOTA_BYTES, bytes);
	nftnl_expr_set_u32(e, NFTNL_EXPR_QUOTA_FLAGS, over ? NFT_QUOTA_F_INV : 0);
	return e;
}

/* the expressions of the element with key 10.0.0.<src> */
static unsigned int elem_read(struct nftdp_set *s, uint8_t src,
			      struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX])
{
	const uint8_t key[4] = {10, 0, 0, src};
	const void *data = NULL;

	if (!nftdp_set_lookup(s, key, &data, 10000))
		return 99;
	return nftdp_vm_elem_expr_read(data, v);
}

static void test_area(void **state)
{
	struct nftdp_vm_elem_expr in[3] = {
	    {.type = NFTDP_VM_ELEM_EXPR_COUNTER, .packets = 3, .bytes = 300},
	    {.type = NFTDP_VM_ELEM_EXPR_LIMIT,
	     .rate = 10,
	     .unit = 60,
	     .limit_type = NFT_LIMIT_PKTS},
	    {.type = NFTDP_VM_ELEM_EXPR_QUOTA, .quota = 5},
	};
	struct nftdp_vm_elem_expr out[NFTDP_VM_ELEM_EXPR_MAX];
	_Alignas(8) uint8_t area[NFTDP_VM_ELEM_EXPR_SIZE];

	(void)state;
	assert_int_equal(nftdp_vm_elem_expr_init(area, in, 2), 0);
	assert_int_equal(nftdp_vm_elem_expr_read(area, out), 2);
	assert_int_equal(out[0].type, NFTDP_VM_ELEM_EXPR_COUNTER);
	assert_int_equal(out[0].packets, 3);
	assert_int_equal(out[0].bytes, 300);
	assert_int_equal(out[1].type, NFTDP_VM_ELEM_EXPR_LIMIT);
	assert_int_equal(out[1].rate, 10);
	assert_int_equal(out[1].unit, 60);
	assert_int_equal(out[1].burst, 5); /* the kernel's default packet burst */
	assert_int_equal(nftdp_vm_elem_expr_init(area, in, 3), -E2BIG);
	assert_int_equal(nftdp_vm_elem_expr_init(area, in + 2, 1), 0);
	assert_int_equal(nftdp_vm_elem_expr_read(area, out), 1);
	assert_int_equal(out[0].quota, 5);
	assert_int_equal(nftdp_vm_elem_expr_init(area, NULL, 0), 0);
	assert_int_equal(nftdp_vm_elem_expr_read(area, out), 0);
	in[1].rate = 0;
	assert_int_equal(nftdp_vm_elem_expr_init(area, in + 1, 1), -EINVAL);
	in[2].flags = 0x80;
	assert_int_equal(nftdp_vm_elem_expr_init(area, in + 2, 1), -EINVAL);
}

/* update @m { ip saddr limit rate over 1/second burst 2 packets counter } drop */
static void test_dynset_limit(void **state)
{
	struct world *w = *state;
	struct nftdp_set *s = add_set(w, "m", NFT_SET_EVAL, NULL);
	struct nftdp_vm_chain *c = chain(w);
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	struct tpkt t;

	assert_int_equal(
	    add(w, c, SADDR,
		dynset("m", NFT_DYNSET_OP_ADD, 0, limit(1, 2, true), ex("counter"), NULL),
		verdict(NF_DROP, NULL), NULL),
	    0);
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_ACCEPT);
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_ACCEPT);
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_DROP);
	/* another source has its own bucket */
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 2), &w->ctx), NF_ACCEPT);
	/* a second later the bucket holds one packet again */
	w->ctx.now_ns += NSEC;
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_ACCEPT);
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_DROP);
	assert_int_equal(elem_read(s, 1, v), 2);
	assert_int_equal(v[0].type, NFTDP_VM_ELEM_EXPR_LIMIT);
	assert_int_equal(v[0].rate, 1);
	assert_int_equal(v[0].burst, 2);
	assert_int_equal(v[0].flags, NFT_LIMIT_F_INV);
	/* the counter runs after the limit, which breaks (over: within the
	 * rate) before it: it counts the packets over the rate */
	assert_int_equal(v[1].type, NFTDP_VM_ELEM_EXPR_COUNTER);
	assert_int_equal(v[1].packets, 2);
	assert_int_equal(elem_read(s, 2, v), 2);
}

/* add @s { ip saddr } on a set with `counter`: the set's expressions;
 * add @q { ip saddr quota over 80 bytes } drop */
static void test_dynset_set_exprs(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_elem_expr ctr = {.type = NFTDP_VM_ELEM_EXPR_COUNTER};
	_Alignas(8) uint8_t tmpl[NFTDP_VM_ELEM_EXPR_SIZE];
	struct nftdp_set *s, *q;
	struct nftdp_vm_chain *c = chain(w);
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	struct tpkt t;

	assert_int_equal(nftdp_vm_elem_expr_init(tmpl, &ctr, 1), 0);
	s = add_set(w, "s", NFT_SET_EVAL, tmpl);
	q = add_set(w, "q", NFT_SET_EVAL, NULL);
	assert_int_equal(add(w, c, SADDR, dynset("s", NFT_DYNSET_OP_ADD, 0, NULL), NULL), 0);
	assert_int_equal(add(w, c, SADDR, dynset("q", NFT_DYNSET_OP_ADD, 0, quota(80, true), NULL),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx),
				 i < 2 ? NF_ACCEPT : NF_DROP);
	assert_int_equal(elem_read(s, 1, v), 1);
	assert_int_equal(v[0].packets, 3);
	assert_int_equal(v[0].bytes, 120);
	assert_int_equal(elem_read(q, 1, v), 1);
	assert_int_equal(v[0].consumed, 120);
	assert_int_equal(v[0].quota, 80);
	/* the dynset's own must be the set's (nft_dynset_init) */
	assert_int_equal(
	    add(w, c, SADDR, dynset("s", NFT_DYNSET_OP_ADD, 0, quota(1, 0), NULL), NULL),
	    -EOPNOTSUPP);
	assert_int_equal(add(w, c, SADDR,
			     dynset("s", NFT_DYNSET_OP_ADD, 0, ex("counter"), ex("counter"), NULL),
			     NULL),
			 -EOPNOTSUPP);
	assert_int_equal(
	    add(w, c, SADDR, dynset("s", NFT_DYNSET_OP_ADD, 0, ex("counter"), NULL), NULL), 0);
	/* stateful expressions only, at most two */
	assert_int_equal(add(w, c, SADDR,
			     dynset("q", NFT_DYNSET_OP_ADD, 0, ex("counter"), ex("counter"),
				    ex("counter"), NULL),
			     NULL),
			 -E2BIG);
	assert_int_equal(
	    add(w, c, SADDR, dynset("q", NFT_DYNSET_OP_ADD, 0, ex("payload"), NULL), NULL),
	    -EOPNOTSUPP);
	/* ct count (connlimit) in a dynset: any count (nft_connlimit_do_init's
	 * u32), a long list in the set's blocks */
	assert_int_equal(
	    add(w, c, SADDR, dynset("q", NFT_DYNSET_OP_ADD, 0, ex("connlimit"), NULL), NULL), 0);
	for (unsigned int i = 0; i < 2; i++) {
		struct nftnl_expr *cl = ex("connlimit");

		nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_COUNT,
				   i ? UINT32_MAX : NFTDP_VM_ELEM_CONNLIMIT_MAX + 1);
		assert_int_equal(
		    add(w, c, SADDR, dynset("q", NFT_DYNSET_OP_ADD, 0, cl, NULL), NULL), 0);
	}
}

/* ip saddr @l drop, where the element carries a quota: the lookup runs it */
static void test_lookup_runs_exprs(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_elem_expr v[2] = {{.type = NFTDP_VM_ELEM_EXPR_COUNTER},
					  {.type = NFTDP_VM_ELEM_EXPR_QUOTA, .quota = 80}};
	_Alignas(8) uint8_t data[NFTDP_VM_ELEM_EXPR_SIZE];
	const uint8_t key[4] = {10, 0, 0, 1};
	struct nftdp_set *l = add_set(w, "l", 0, NULL);
	struct nftdp_vm_chain *c = chain(w);
	struct nftnl_expr *lk = ex("lookup");
	struct tpkt t;

	assert_int_equal(nftdp_vm_elem_expr_init(data, v, 2), 0);
	assert_int_equal(nftdp_set_insert(l, key, NULL, data, 0, 0, false), 0);
	nftdp_set_commit(l);
	nftnl_expr_set_str(lk, NFTNL_EXPR_LOOKUP_SET, "l");
	nftnl_expr_set_u32(lk, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	assert_int_equal(add(w, c, SADDR, lk, verdict(NF_DROP, NULL), NULL), 0);
	/* the quota (until 80 bytes) breaks the rule once over */
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_DROP);
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_DROP);
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_ACCEPT);
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 9), &w->ctx), NF_ACCEPT);
	assert_int_equal(elem_read(l, 1, v), 2);
	assert_int_equal(v[0].packets, 3);
	assert_int_equal(v[1].consumed, 120);
}

/* ip saddr @l drop, where the element carries a counter and `last`
 * (nft_last): a lookup stamps it, the dump gives the milliseconds since;
 * one restored as used 5 s ago reads so before any packet, one never used
 * reads unset, and a stamp after the reader's now reads unset too */
static void test_lookup_runs_last(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_elem_expr v[2] = {{.type = NFTDP_VM_ELEM_EXPR_COUNTER},
					  {.type = NFTDP_VM_ELEM_EXPR_LAST}};
	_Alignas(8) uint8_t data[NFTDP_VM_ELEM_EXPR_SIZE];
	const uint8_t k1[4] = {10, 0, 0, 1}, k2[4] = {10, 0, 0, 2};
	struct nftdp_set *l = add_set(w, "l", 0, NULL);
	struct nftdp_vm_chain *c = chain(w);
	struct nftnl_expr *lk = ex("lookup");
	uint64_t now = nftdp_now_ms();
	struct tpkt t;

	assert_int_equal(nftdp_vm_elem_expr_init(data, v, 2), 0);
	assert_int_equal(nftdp_set_insert(l, k1, NULL, data, 0, 0, false), 0);
	v[1].last_set = 1;
	v[1].last_msecs = 5000;
	assert_int_equal(nftdp_vm_elem_expr_init(data, v, 2), 0);
	assert_int_equal(nftdp_set_insert(l, k2, NULL, data, 0, 0, false), 0);
	nftdp_set_commit(l);
	assert_int_equal(elem_read(l, 1, v), 2);
	assert_int_equal(v[1].type, NFTDP_VM_ELEM_EXPR_LAST);
	assert_int_equal(v[1].last_set, 0);
	assert_int_equal(v[1].last_msecs, 0);
	assert_int_equal(elem_read(l, 2, v), 2);
	assert_int_equal(v[1].last_set, 1);
	assert_true(v[1].last_msecs >= 5000 && v[1].last_msecs < 5500);

	nftnl_expr_set_str(lk, NFTNL_EXPR_LOOKUP_SET, "l");
	nftnl_expr_set_u32(lk, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	assert_int_equal(add(w, c, SADDR, lk, verdict(NF_DROP, NULL), NULL), 0);
	/* the packet 2 s before the read */
	w->ctx.now_ms = now - 2000;
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx), NF_DROP);
	assert_int_equal(elem_read(l, 1, v), 2);
	assert_int_equal(v[0].packets, 1);
	assert_int_equal(v[1].last_set, 1);
	assert_true(v[1].last_msecs >= 2000 && v[1].last_msecs < 2500);
	/* `last` never breaks the rule; a stamp from the future reads unset */
	w->ctx.now_ms = now + 100000;
	assert_int_equal(nftdp_vm_run_chain(c, tcp4(&t, 2), &w->ctx), NF_DROP);
	assert_int_equal(elem_read(l, 2, v), 2);
	assert_int_equal(v[1].last_set, 0);
	assert_int_equal(v[1].last_msecs, 0);
}

/* add @s { ip saddr } without expressions still runs those of an element
 * the control plane added with its own (nft_set_elem_update_expr) */
static void test_dynset_runs_elem_exprs(void **state)
{
	struct world *w = *state;
	/* elem_read fills up to NFTDP_VM_ELEM_EXPR_MAX */
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX] = {
	    {.type = NFTDP_VM_ELEM_EXPR_COUNTER, .packets = 5}};
	_Alignas(8) uint8_t data[NFTDP_VM_ELEM_EXPR_SIZE];
	const uint8_t key[4] = {10, 0, 0, 1};
	struct nftdp_set *s = add_set(w, "s", NFT_SET_EVAL, NULL);
	struct nftdp_vm_chain *c = chain(w);
	struct tpkt t;

	assert_int_equal(nftdp_vm_elem_expr_init(data, v, 1), 0);
	assert_int_equal(nftdp_set_insert(s, key, NULL, data, 0, 0, false), 0);
	nftdp_set_commit(s);
	assert_int_equal(add(w, c, SADDR, dynset("s", NFT_DYNSET_OP_ADD, 0, NULL), NULL), 0);
	nftdp_vm_run_chain(c, tcp4(&t, 1), &w->ctx);
	nftdp_vm_run_chain(c, tcp4(&t, 2), &w->ctx);
	assert_int_equal(elem_read(s, 1, v), 1);
	assert_int_equal(v[0].packets, 6);
	assert_int_equal(v[0].bytes, 40);
	/* the new element has none */
	assert_int_equal(elem_read(s, 2, v), 0);
}

struct worker_arg {
	struct world *w;
	struct nftdp_vm_chain *c;
	unsigned int id;
};

#define PER_WORKER 20000

static void *worker(void *p)
{
	struct worker_arg *a = p;
	struct nftdp_vm_ctx ctx = a->w->ctx;
	struct tpkt t;

	ctx.worker = a->id;
	for (int i = 0; i < PER_WORKER; i++)
		nftdp_vm_run_chain(a->c, tcp4(&t, (uint8_t)(1 + i % 2)), &ctx);
	return NULL;
}

/* four workers on the same elements: counters and quotas stay exact */
static void test_workers_exact(void **state)
{
	struct world *w = *state;
	struct nftdp_set *s = add_set(w, "s", NFT_SET_EVAL, NULL);
	struct nftdp_vm_chain *c = chain(w);
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	struct worker_arg a[4];
	pthread_t th[4];

	assert_int_equal(
	    add(w, c, SADDR,
		dynset("s", NFT_DYNSET_OP_ADD, 0, ex("counter"), quota(1ull << 40, false), NULL),
		NULL),
	    0);
	for (unsigned int i = 0; i < 4; i++) {
		a[i] = (struct worker_arg){w, c, i};
		assert_int_equal(pthread_create(&th[i], NULL, worker, &a[i]), 0);
	}
	for (unsigned int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (uint8_t src = 1; src <= 2; src++) {
		assert_int_equal(elem_read(s, src, v), 2);
		assert_int_equal(v[0].packets, 2 * PER_WORKER);
		assert_int_equal(v[0].bytes, 2 * PER_WORKER * 40);
		assert_int_equal(v[1].consumed, 2 * PER_WORKER * 40);
	}
}

/* a stand-in conntrack for `ct count`: a connection is its key, live
 * once confirmed (its packet accepted), gone when dropped */
#define CL_KEYS 4096
static _Atomic bool cl_live[CL_KEYS];

struct cl_conn {
	uint64_t key;
	bool confirmed;
};

static uint64_t cl_key(const void *ct, bool *confirmed)
{
	const struct cl_conn *c = ct;

	*confirmed = c->confirmed;
	return c->key;
}

static bool cl_is_live(const void *ct, uint64_t key)
{
	(void)ct;
	return key < CL_KEYS && atomic_load(&cl_live[key]);
}

static const struct nftdp_vm_ct_ops cl_ops = {.conn_key = cl_key, .conn_live = cl_is_live};

/* a new connection's first packet through c: true when accepted (then
 * confirmed and live), false when dropped (never confirmed: gone) */
static bool cl_open(struct nftdp_vm_chain *c, struct nftdp_vm_ctx *ctx, uint8_t src, uint64_t key)
{
	struct cl_conn conn = {.key = key};
	struct tpkt t;
	bool ok;

	tcp4(&t, src);
	t.pkt.ct = &conn;
	t.pkt.ct_ops = &cl_ops;
	/* live from the start, as conntrack's unconfirmed entry is for the
	 * other workers (ct_conn_live: in use, not dying) */
	atomic_store(&cl_live[key], true);
	ok = nftdp_vm_run_chain(c, &t.pkt, ctx) == NF_ACCEPT;
	atomic_store(&cl_live[key], ok);
	return ok;
}

struct cl_worker_arg {
	struct world *w;
	struct nftdp_vm_chain *c;
	unsigned int id;
	unsigned int passed[2];
};

#define CL_PER_WORKER 100

static void *cl_worker(void *p)
{
	struct cl_worker_arg *a = p;
	struct nftdp_vm_ctx ctx = a->w->ctx;

	ctx.worker = a->id;
	for (unsigned int i = 0; i < CL_PER_WORKER; i++) {
		uint8_t src = (uint8_t)(1 + i % 2);

		a->passed[i % 2] += cl_open(a->c, &ctx, src, 1 + a->id * CL_PER_WORKER + i);
	}
	return NULL;
}

/* add @s { ip saddr ct count over 20 } drop: four workers open 100
 * connections each on two elements at once; each element admits at most
 * 20, and once the workers stop, exactly 20 in all (no key lost or
 * doubled): the list lives in a block of the set's store */
static void test_workers_ct_count(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w);
	struct nftnl_expr *cl = ex("connlimit");
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	struct cl_worker_arg a[4];
	pthread_t th[4];
	uint64_t next = 1 + 4 * CL_PER_WORKER;

	add_set(w, "s", NFT_SET_EVAL, NULL);
	nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_COUNT, 20);
	nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_FLAGS, NFT_CONNLIMIT_F_INV);
	assert_int_equal(add(w, c, SADDR, dynset("s", NFT_DYNSET_OP_ADD, 0, cl, NULL),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	for (unsigned int i = 0; i < 4; i++) {
		a[i] = (struct cl_worker_arg){.w = w, .c = c, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, cl_worker, &a[i]), 0);
	}
	for (unsigned int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (unsigned int e = 0; e < 2; e++) {
		unsigned int passed = 0;

		for (unsigned int i = 0; i < 4; i++)
			passed += a[i].passed[e];
		assert_true(passed >= 1 && passed <= 20);
		/* one at a time now: exactly up to 20 */
		while (cl_open(c, &w->ctx, (uint8_t)(1 + e), next++))
			passed++;
		assert_int_equal(passed, 20);
		assert_int_equal(elem_read(w->sets[0].set, (uint8_t)(1 + e), v), 1);
		assert_int_equal(v[0].count, 20);
		assert_int_equal(v[0].flags, NFT_CONNLIMIT_F_INV);
	}
	/* all go: 20 fit again, the 21st is over */
	atomic_store(&cl_live[1], false);
	atomic_store(&cl_live[2], false);
	for (uint64_t k = 3; k < next; k++)
		atomic_store(&cl_live[k], false);
	for (unsigned int i = 0; i < 20; i++)
		assert_true(cl_open(c, &w->ctx, 1, next++));
	assert_false(cl_open(c, &w->ctx, 1, next++));
}

/* add @s { ip saddr ct count 100000 } drop: 65536-key blocks, so the
 * set's store holds 512 (256 MiB) for its 1024 elements; the 513th source
 * finds none, counts nothing and breaks (accepted) */
static void test_ct_count_store_full(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *c = chain(w);
	struct nftnl_expr *cl = ex("connlimit");
	const uint32_t blocks = (uint32_t)(NFTDP_VM_ELEM_LISTS_BYTES / 8 / 65536);

	add_set(w, "s", NFT_SET_EVAL, NULL);
	nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_COUNT, 100000);
	assert_int_equal(add(w, c, SADDR, dynset("s", NFT_DYNSET_OP_ADD, 0, cl, NULL),
			     verdict(NF_DROP, NULL), NULL),
			 0);
	assert_int_equal(blocks, 512);
	for (uint32_t i = 0; i <= blocks; i++) {
		struct cl_conn conn = {.key = 1 + i};
		struct tpkt t;

		tcp4(&t, (uint8_t)i);
		t.buf[28] = (uint8_t)(i >> 8);
		t.pkt.ct = &conn;
		t.pkt.ct_ops = &cl_ops;
		atomic_store(&cl_live[1 + i], true);
		assert_int_equal(nftdp_vm_run_chain(c, &t.pkt, &w->ctx),
				 i < blocks ? NF_DROP : NF_ACCEPT);
	}
	for (uint32_t i = 0; i <= blocks; i++)
		atomic_store(&cl_live[1 + i], false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_area),
	    cmocka_unit_test_setup_teardown(test_dynset_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dynset_set_exprs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lookup_runs_exprs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lookup_runs_last, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dynset_runs_elem_exprs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_workers_exact, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_workers_ct_count, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ct_count_store_full, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
