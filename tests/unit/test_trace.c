// SPDX-License-Identifier: BSD-3-Clause
/*
 * Tracing (`meta nftrace set 1`, `nft monitor trace`): which events the VM
 * records for a traced packet, in which order, with what (vm/trace.c, as
 * the kernel's nft_do_chain and nft_trace_notify make them), that untraced
 * packets and runs without a listener record nothing, that a full ring
 * loses events but no packet, and the NFT_MSG_TRACE that control/trace.c
 * builds, read back with libnftnl's trace parser as nft reads it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libmnl/libmnl.h>
#include <libnftnl/rule.h>
#include <libnftnl/trace.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "control_priv.h"
#include "nft_build.h"
#include "nftdp_vm.h"

/* control/trace.c's server calls: no sessions here */
bool ctl_server_multicast(struct ctl_server *srv, unsigned int group, const void *buf, size_t len,
			  const struct ctl_session *skip)
{
	(void)srv, (void)group, (void)buf, (void)len, (void)skip;
	return true;
}

bool ctl_server_has_listeners(const struct ctl_server *srv, unsigned int group)
{
	(void)srv, (void)group;
	return false;
}

#define MAX_CHAINS 8
#define MAX_EV 64

struct world {
	struct nftdp_vm_state *st;
	struct nftdp_vm_chain *chains[MAX_CHAINS];
	const char *names[MAX_CHAINS];
	int n_chains;
	struct nftdp_vm_resolver res;
	struct nftdp_vm_ctx ctx;
	struct nftdp_vm_error err;
	struct nftdp_vm_trace_event ev[MAX_EV];
	unsigned int n_ev;
};

static struct nftdp_vm_chain *res_chain(void *o, const char *table, const char *name, uint32_t id)
{
	struct world *w = o;

	(void)table, (void)id;
	for (int i = 0; i < w->n_chains; i++)
		if (name && !strcmp(w->names[i], name))
			return w->chains[i];
	return NULL;
}

static int setup_ring(void **state, unsigned int ring)
{
	struct world *w = calloc(1, sizeof(*w));
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 2, .max_counters = 64, .max_cells = 64, .trace_ring_size = ring};

	assert_int_equal(nftdp_vm_state_create(&cfg, &w->st), 0);
	nftdp_vm_state_gen_begin(w->st);
	w->res = (struct nftdp_vm_resolver){w, res_chain, NULL, NULL};
	w->ctx.state = w->st;
	w->ctx.prng = 1;
	*state = w;
	return 0;
}

static int setup(void **state)
{
	return setup_ring(state, 0);
}

static int setup_small(void **state)
{
	return setup_ring(state, 4);
}

static int teardown(void **state)
{
	struct world *w = *state;

	for (int i = 0; i < w->n_chains; i++)
		nftdp_vm_chain_destroy(w->chains[i]);
	nftdp_vm_state_destroy(w->st);
	free(w);
	return 0;
}

static struct nftdp_vm_chain *chain(struct world *w, const char *name, bool base, uint32_t policy)
{
	struct nftdp_vm_chain_desc d = {.family = NFPROTO_INET,
					.table = "t",
					.name = name,
					.base = base,
					.hook = NF_INET_FORWARD,
					.policy = policy,
					.chain_id = (uint32_t)w->n_chains};
	struct nftdp_vm_chain *c;

	assert_int_equal(nftdp_vm_chain_create(&d, w->st, &c), 0);
	w->names[w->n_chains] = name;
	w->chains[w->n_chains++] = c;
	return c;
}

static void add(struct world *w, struct nftdp_vm_chain *c, uint64_t handle, ...)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e;
	va_list ap;

	nftnl_rule_set_u64(r, NFTNL_RULE_HANDLE, handle);
	va_start(ap, handle);
	while ((e = va_arg(ap, struct nftnl_expr *)))
		nftnl_rule_add_expr(r, e);
	va_end(ap);
	assert_int_equal(nftdp_vm_chain_add_rule(c, r, &w->res, w->st, &w->err), 0);
	nftnl_rule_free(r);
}

struct tpkt {
	uint8_t buf[128];
	struct nftdp_vm_pkt pkt;
};

/* IPv4 TCP 10.0.0.1:1234 -> 10.0.0.2:dport behind a 14-byte Ethernet header,
 * 4 bytes of payload */
static struct nftdp_vm_pkt *tcp4(struct tpkt *t, uint16_t dport)
{
	static const uint8_t hdr[] = {
	    0,	1,    2,    3,	  4,	5,    6, 7,  8, 9,    10,   11,	  0x08, 0x00, 0x45,
	    0,	0,    44,   0,	  1,	0,    0, 64, 6, 0,    0,    10,	  0,	0,    1,
	    10, 0,    0,    2,	  0x04, 0xd2, 0, 0,  0, 0,    0,    1,	  0,	0,    0,
	    0,	0x50, 0x02, 0xff, 0xff, 0,    0, 0,  0, 0xaa, 0xbb, 0xcc, 0xdd,
	};

	memset(t, 0, sizeof(*t));
	memcpy(t->buf, hdr, sizeof(hdr));
	t->buf[36] = (uint8_t)(dport >> 8);
	t->buf[37] = (uint8_t)dport;
	nftdp_vm_pkt_init(&t->pkt, t->buf, sizeof(hdr), 0, 14);
	nftdp_vm_pkt_parse_ip(&t->pkt);
	t->pkt.iif = 1;
	t->pkt.iiftype = 1;
	t->pkt.oif = 2;
	t->pkt.oiftype = 1;
	return &t->pkt;
}

static const uint8_t one = 1;
#define NFTRACE_SET imm(NFT_REG32_15, &one, 1), meta_set(NFT_META_NFTRACE, NFT_REG32_15)
#define DPORT(p)                                                                                   \
	payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1), cmp(NFT_CMP_EQ, NFT_REG_1, &(p), 2)
static const uint16_t be22 = 0x1600, be80 = 0x5000;

static void collect(const struct nftdp_vm_trace_event *ev, void *arg)
{
	struct world *w = arg;

	assert_true(w->n_ev < MAX_EV);
	w->ev[w->n_ev++] = *ev;
}

static unsigned int drain(struct world *w)
{
	w->n_ev = 0;
	return nftdp_vm_trace_poll(w->st, collect, w);
}

/* one expected event: type, chain, handle (0: none), verdict, with packet */
static void expect(const struct world *w, unsigned int i, uint32_t type, const char *chain,
		   uint64_t handle, uint32_t verdict, const char *target, bool packet)
{
	const struct nftdp_vm_trace_event *ev = &w->ev[i];

	assert_true(i < w->n_ev);
	assert_int_equal(ev->type, type);
	assert_string_equal(ev->table, "t");
	assert_string_equal(ev->chain, chain);
	assert_int_equal(ev->has_handle, handle != 0);
	if (handle)
		assert_int_equal(ev->handle, handle);
	assert_int_equal(ev->has_verdict, type != NFT_TRACETYPE_POLICY);
	assert_int_equal(ev->has_policy, type == NFT_TRACETYPE_POLICY);
	if (type == NFT_TRACETYPE_POLICY)
		assert_int_equal(ev->policy, verdict);
	else
		assert_int_equal(ev->verdict, verdict);
	assert_string_equal(ev->target, target ? target : "");
	assert_int_equal(ev->packet, packet);
	assert_int_equal(ev->family, NFPROTO_INET);
	assert_int_equal(ev->nfproto, NFPROTO_IPV4);
	assert_int_equal(ev->id, w->ev[0].id);
}

/* base: 1 nftrace set; 2 jump sub; 3 dport 80 goto g; 4 dport 22 accept;
 * sub: 1 dport 22 return; 2 mark set 7 (continue); g: 1 dport 80 drop if
 * mark 7... (g drops) */
static struct nftdp_vm_chain *ruleset(struct world *w, uint32_t policy)
{
	struct nftdp_vm_chain *base = chain(w, "base", true, policy);
	struct nftdp_vm_chain *sub = chain(w, "sub", false, 0);
	struct nftdp_vm_chain *g = chain(w, "g", false, 0);

	add(w, sub, 11, DPORT(be22), verdict(NFT_RETURN, NULL), NULL);
	add(w, sub, 12, imm32(NFT_REG_1, 7), meta_set(NFT_META_MARK, NFT_REG_1), NULL);
	add(w, g, 21, DPORT(be80), verdict(NF_DROP, NULL), NULL);
	add(w, base, 1, NFTRACE_SET, NULL);
	add(w, base, 2, verdict(NFT_JUMP, "sub"), NULL);
	add(w, base, 3, DPORT(be80), verdict(NFT_GOTO, "g"), NULL);
	add(w, base, 4, DPORT(be22), verdict(NF_ACCEPT, NULL), NULL);
	assert_int_equal(nftdp_vm_validate(base, &w->err), 0);
	return base;
}

static void test_events_accept_return(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *base = ruleset(w, NF_DROP);
	struct tpkt t;

	nftdp_vm_trace_listen(w->st, true);
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 22), &w->ctx), NF_ACCEPT);
	assert_int_equal(drain(w), 4);
	expect(w, 0, NFT_TRACETYPE_RULE, "base", 1, (uint32_t)NFT_CONTINUE, NULL, true);
	expect(w, 1, NFT_TRACETYPE_RULE, "base", 2, (uint32_t)NFT_JUMP, "sub", false);
	expect(w, 2, NFT_TRACETYPE_RULE, "sub", 11, (uint32_t)NFT_RETURN, NULL, false);
	expect(w, 3, NFT_TRACETYPE_RULE, "base", 4, NF_ACCEPT, NULL, false);
	assert_int_not_equal(w->ev[0].id, 0);
	assert_int_equal(w->ev[0].id, t.pkt.trace_id);
	/* the first event carries the devices and the headers, as the kernel
	 * copies them: 14 bytes of link layer, the IP header, 20 of TCP */
	assert_int_equal(w->ev[0].iif, 1);
	assert_int_equal(w->ev[0].oif, 2);
	assert_int_equal(w->ev[0].ll_len, 14);
	assert_int_equal(w->ev[0].nh_len, 20);
	assert_int_equal(w->ev[0].th_len, 20);
	assert_memory_equal(w->ev[0].ll, t.buf, 14);
	assert_memory_equal(w->ev[0].nh, t.buf + 14, 20);
	assert_memory_equal(w->ev[0].th, t.buf + 34, 20);
	assert_int_equal(w->ev[1].ll_len + w->ev[1].nh_len + w->ev[1].th_len, 0);
	assert_int_equal(w->ev[0].mark, 0);
}

static void test_events_goto_drop_end(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *base = ruleset(w, NF_DROP);
	struct tpkt t;

	nftdp_vm_trace_listen(w->st, true);
	/* 80: sub sets mark 7 and ends (a rule event, then its end: no
	 * handle), goto g, which drops; the mark goes with every event */
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 80), &w->ctx), NF_DROP);
	assert_int_equal(drain(w), 6);
	expect(w, 0, NFT_TRACETYPE_RULE, "base", 1, (uint32_t)NFT_CONTINUE, NULL, true);
	expect(w, 1, NFT_TRACETYPE_RULE, "base", 2, (uint32_t)NFT_JUMP, "sub", false);
	expect(w, 2, NFT_TRACETYPE_RULE, "sub", 12, (uint32_t)NFT_CONTINUE, NULL, false);
	expect(w, 3, NFT_TRACETYPE_RULE, "sub", 0, (uint32_t)NFT_CONTINUE, NULL, false);
	expect(w, 4, NFT_TRACETYPE_RULE, "base", 3, (uint32_t)NFT_GOTO, "g", false);
	expect(w, 5, NFT_TRACETYPE_RULE, "g", 21, NF_DROP, NULL, false);
	assert_int_equal(w->ev[1].mark, 0);
	assert_int_equal(w->ev[2].mark, 7);
	assert_int_equal(w->ev[5].mark, 7);

	/* 99: nothing matches after the jump; base ends: its end, then policy */
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 99), &w->ctx), NF_DROP);
	assert_int_equal(drain(w), 6);
	expect(w, 3, NFT_TRACETYPE_RULE, "sub", 0, (uint32_t)NFT_CONTINUE, NULL, false);
	expect(w, 4, NFT_TRACETYPE_RULE, "base", 0, (uint32_t)NFT_CONTINUE, NULL, false);
	expect(w, 5, NFT_TRACETYPE_POLICY, "base", 0, NF_DROP, NULL, false);
	assert_int_equal(w->ev[5].mark, 7);
}

/* a packet traced by an earlier chain is traced from the start of the
 * next; each base chain's first event carries the packet again; the id
 * stays the packet's */
static void test_traced_from_start(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *first = ruleset(w, NF_ACCEPT);
	struct nftdp_vm_chain *next = chain(w, "next", true, NF_ACCEPT);
	struct tpkt t;
	uint32_t id;

	nftdp_vm_trace_listen(w->st, true);
	assert_int_equal(nftdp_vm_run_chain(first, tcp4(&t, 99), &w->ctx), NF_ACCEPT);
	assert_int_equal(drain(w), 6);
	id = w->ev[0].id;
	assert_int_equal(nftdp_vm_run_chain(next, &t.pkt, &w->ctx), NF_ACCEPT);
	assert_int_equal(drain(w), 2);
	expect(w, 0, NFT_TRACETYPE_RULE, "next", 0, (uint32_t)NFT_CONTINUE, NULL, true);
	expect(w, 1, NFT_TRACETYPE_POLICY, "next", 0, NF_ACCEPT, NULL, false);
	assert_int_equal(w->ev[0].id, id);
	/* another packet gets another id */
	assert_int_equal(nftdp_vm_run_chain(first, tcp4(&t, 22), &w->ctx), NF_ACCEPT);
	assert_int_equal(drain(w), 4);
	assert_int_not_equal(w->ev[0].id, id);
}

static void test_untraced_and_unheard(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *plain = chain(w, "plain", true, NF_ACCEPT);
	struct nftdp_vm_chain *base;
	struct tpkt t;

	add(w, plain, 1, DPORT(be22), verdict(NF_DROP, NULL), NULL);
	base = ruleset(w, NF_DROP);
	/* nobody listens: the packet is traced (meta nftrace reads 1) but
	 * nothing is recorded, as the kernel builds nothing without listeners */
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 22), &w->ctx), NF_ACCEPT);
	assert_int_equal(t.pkt.nftrace, 1);
	assert_int_equal(drain(w), 0);
	/* listening, an untraced packet records nothing */
	nftdp_vm_trace_listen(w->st, true);
	assert_int_equal(nftdp_vm_run_chain(plain, tcp4(&t, 22), &w->ctx), NF_DROP);
	assert_int_equal(nftdp_vm_run_chain(plain, tcp4(&t, 99), &w->ctx), NF_ACCEPT);
	assert_int_equal(drain(w), 0);
	assert_int_equal(nftdp_vm_trace_lost(w->st), 0);
}

/* ring of 4: the fifth and later events of a run are lost and counted;
 * verdicts are what they are without tracing */
static void test_ring_overflow(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *base = ruleset(w, NF_DROP);
	struct tpkt t;

	nftdp_vm_trace_listen(w->st, true);
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 80), &w->ctx), NF_DROP); /* 6 events */
	assert_int_equal(nftdp_vm_trace_lost(w->st), 2);
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 22), &w->ctx), NF_ACCEPT); /* 4 more */
	assert_int_equal(nftdp_vm_trace_lost(w->st), 6);
	assert_int_equal(drain(w), 4);
	expect(w, 0, NFT_TRACETYPE_RULE, "base", 1, (uint32_t)NFT_CONTINUE, NULL, true);
	expect(w, 3, NFT_TRACETYPE_RULE, "sub", 0, (uint32_t)NFT_CONTINUE, NULL, false);
	/* drained: room again; another worker has its own ring */
	w->ctx.worker = 1;
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 22), &w->ctx), NF_ACCEPT);
	w->ctx.worker = 0;
	assert_int_equal(nftdp_vm_run_chain(base, tcp4(&t, 22), &w->ctx), NF_ACCEPT);
	assert_int_equal(nftdp_vm_trace_lost(w->st), 6);
	assert_int_equal(drain(w), 8);
}

/* control/trace.c's message, parsed by libnftnl as nft parses it */
static void test_msg(void **state)
{
	struct world *w = *state;
	struct nftdp_vm_chain *base = ruleset(w, NF_DROP);
	alignas(8) char buf[2048];
	struct nftnl_trace *tr;
	struct tpkt t;
	uint32_t len;
	int n;

	nftdp_vm_trace_listen(w->st, true);
	tcp4(&t, 80)->mark = 0x42;
	assert_int_equal(nftdp_vm_run_chain(base, &t.pkt, &w->ctx), NF_DROP);
	assert_int_equal(drain(w), 6);

	n = ctl_trace_fill(buf, &w->ev[0]);
	assert_true(n > 0 && n <= (int)sizeof(buf));
	tr = nftnl_trace_alloc();
	assert_int_equal(nftnl_trace_nlmsg_parse((const struct nlmsghdr *)buf, tr), 0);
	assert_int_equal(((const struct nlmsghdr *)buf)->nlmsg_type,
			 (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_TRACE);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_FAMILY), NFPROTO_INET);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_NFPROTO), NFPROTO_IPV4);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_TYPE), NFT_TRACETYPE_RULE);
	/* the kernel puts the id in host order (nla_put_u32); nft reads it as big endian */
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_ID), ntohl(w->ev[0].id));
	assert_string_equal(nftnl_trace_get_str(tr, NFTNL_TRACE_TABLE), "t");
	assert_string_equal(nftnl_trace_get_str(tr, NFTNL_TRACE_CHAIN), "base");
	assert_int_equal(nftnl_trace_get_u64(tr, NFTNL_TRACE_RULE_HANDLE), 1);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_VERDICT), (uint32_t)NFT_CONTINUE);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_MARK), 0x42);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_IIF), 1);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_OIF), 2);
	assert_int_equal(nftnl_trace_get_u16(tr, NFTNL_TRACE_IIFTYPE), 1);
	nftnl_trace_get_data(tr, NFTNL_TRACE_LL_HEADER, &len);
	assert_int_equal(len, 14);
	nftnl_trace_get_data(tr, NFTNL_TRACE_NETWORK_HEADER, &len);
	assert_int_equal(len, 20);
	nftnl_trace_get_data(tr, NFTNL_TRACE_TRANSPORT_HEADER, &len);
	assert_int_equal(len, 20);
	assert_false(nftnl_trace_is_set(tr, NFTNL_TRACE_POLICY));
	nftnl_trace_free(tr);

	/* the goto: its target; no packet */
	n = ctl_trace_fill(buf, &w->ev[4]);
	tr = nftnl_trace_alloc();
	assert_int_equal(nftnl_trace_nlmsg_parse((const struct nlmsghdr *)buf, tr), 0);
	assert_int_equal(nftnl_trace_get_u32(tr, NFTNL_TRACE_VERDICT), (uint32_t)NFT_GOTO);
	assert_string_equal(nftnl_trace_get_str(tr, NFTNL_TRACE_JUMP_TARGET), "g");
	assert_false(nftnl_trace_is_set(tr, NFTNL_TRACE_IIF));
	assert_false(nftnl_trace_is_set(tr, NFTNL_TRACE_NETWORK_HEADER));
	nftnl_trace_free(tr);

	/* a chain's end: no handle */
	n = ctl_trace_fill(buf, &w->ev[3]);
	tr = nftnl_trace_alloc();
	assert_int_equal(nftnl_trace_nlmsg_parse((const struct nlmsghdr *)buf, tr), 0);
	assert_false(nftnl_trace_is_set(tr, NFTNL_TRACE_RULE_HANDLE));
	nftnl_trace_free(tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_events_accept_return, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_events_goto_drop_end, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_traced_from_start, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_untraced_and_unheard, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ring_overflow, setup_small, teardown),
	    cmocka_unit_test_setup_teardown(test_msg, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
