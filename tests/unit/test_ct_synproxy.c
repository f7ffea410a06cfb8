// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): synproxy's conntrack side
 * (conntrack/ct_synproxy.c, nf_synproxy_core.c's ipv4/ipv6_synproxy_hook):
 * the SYN the proxy sends makes an entry with the extension and records
 * the proxy's ISN and timestamp; the server's SYN-ACK is taken with the
 * options the ACK to the server carries and the timestamp offset; the
 * sequence offset then moves the server's segments into the proxy's
 * sequence space and the client's acks back, and timestamps both ways,
 * with the checksums kept right; an entry without the extension is left
 * alone.
 */
#include <linux/netfilter/nf_synproxy.h>

#include "ct_fixture.h"

#define CI 1000u       /* the client's ISN */
#define PI 0x50000000u /* the proxy's (the cookie) */
#define SI 0x90000000u /* the server's */
#define CT 7000u       /* the proxy's timestamp in its SYN-ACK (its) */
#define ST 900000u     /* the server's timestamp */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* a segment with NOP NOP TS(tsval, tsecr) and, with mss, MSS first */
static void ts_seg(struct tpkt *t, bool v6, int dir, uint8_t flags, uint32_t seq, uint32_t ack,
		   uint32_t tsval, uint32_t tsecr, bool mss, uint32_t payload)
{
	const char *c = v6 ? "2001:db8::1" : "10.0.0.1", *s = v6 ? "2001:db8::2" : "10.0.0.2";
	uint8_t h[200];
	uint32_t o = 20;

	tcp_hdr(h, dir ? 80 : 40000, dir ? 40000 : 80, seq, ack, flags, 29200, 0);
	if (mss) {
		h[o] = 2, h[o + 1] = 4, h[o + 2] = 0x05, h[o + 3] = 0xb4;
		o += 4;
	}
	h[o] = 1, h[o + 1] = 1, h[o + 2] = 8, h[o + 3] = 10;
	put32(h + o + 4, tsval);
	put32(h + o + 8, tsecr);
	o += 12;
	h[12] = (uint8_t)((o / 4) << 4);
	memset(h + o, 'x', payload);
	build(t, v6, dir ? s : c, dir ? c : s, IPPROTO_TCP, h, o + payload);
}

static enum nftdp_ct_synproxy_act hook(struct env *en, struct tpkt *t,
				       struct nftdp_vm_synproxy_opts *o, uint16_t *maxwin)
{
	struct nftdp_vm_synproxy_stats st = {0};

	return nftdp_ct_synproxy_hook(en->s, &t->pkt, o, maxwin, &st);
}

static void run(bool v6)
{
	struct env *en = env_new(64, false);
	struct nftdp_vm_synproxy_opts o;
	struct nftdp_ct_entry *e;
	struct tpkt syn, synack, ack, t;
	uint32_t info[3];
	uint16_t maxwin = 0;
	int32_t off;

	/* the SYN to the server: seq the client's ISN, ack the cookie */
	ts_seg(&syn, v6, 0, TS, CI, PI, 100, CT, true, 0);
	assert_int_equal(nftdp_ct_in(en->s, &syn.pkt, en->now), NF_ACCEPT);
	assert_true(nftdp_ct_synproxy_new(en->s, &syn.pkt));
	assert_int_equal(hook(en, &syn, &o, &maxwin), NFTDP_CT_SYNPROXY_ACCEPT);
	e = (struct nftdp_ct_entry *)((uintptr_t)syn.pkt.ct & ~(uintptr_t)7);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_SENT);
	assert_true(e->ev_pending & (1u << IPCT_SYNPROXY));
	assert_int_equal(nftdp_ct_confirm(en->s, &syn.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_true(nftdp_ct_synproxy_info(e, info));
	assert_int_equal(info[0], PI);
	assert_int_equal(info[1], CT);
	assert_int_equal(info[2], 0);
	assert_true(e->in_use & CT_IN_USE_SEQADJ_EXT);

	/* the server's SYN-ACK: taken, with the ACK's options */
	ts_seg(&synack, v6, 1, TS | TA, SI, CI + 1, ST, 100, true, 0);
	assert_int_equal(nftdp_ct_in(en->s, &synack.pkt, en->now), NF_ACCEPT);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_RECV);
	assert_int_equal(hook(en, &synack, &o, &maxwin), NFTDP_CT_SYNPROXY_SYNACK);
	assert_int_equal(o.options, NF_SYNPROXY_OPT_TIMESTAMP);
	assert_int_equal(o.tsval, ST);
	assert_int_equal(o.tsecr, 100);
	assert_int_equal(maxwin, 29200);
	assert_true(nftdp_ct_synproxy_info(e, info));
	assert_int_equal(info[2], ST - CT);
	{
		struct nftdp_ct_info ci;

		nftdp_ct_fill_info(e, en->now, &ci); /* CTA_SYNPROXY's values */
		assert_true(ci.synproxy);
		assert_int_equal(ci.synproxy_isn, PI);
		assert_int_equal(ci.synproxy_its, CT);
		assert_int_equal(ci.synproxy_tsoff, ST - CT);
	}
	/* the ACK to the server passes conntrack before the offset is set
	 * and is confirmed after it (the dataplane's replies): its events
	 * go out first, IPCT_SEQADJ waits alone; its ack, moved by the
	 * offset first, leaves as the server expects */
	ts_seg(&ack, v6, 0, TA, CI + 1, SI + 1, 100, ST, false, 0);
	assert_int_equal(nftdp_ct_in(en->s, &ack.pkt, en->now), NF_ACCEPT);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	assert_true(e->ev_pending & (1u << IPCT_PROTOINFO));
	off = nftdp_ct_synproxy_seqadj(en->s, &synack.pkt);
	assert_int_equal(off, (int32_t)(PI - SI));
	assert_true(e->status & IPS_SEQ_ADJUST);
	assert_int_equal(e->ev_pending, 1u << IPCT_SEQADJ);
	put32(ack.buf + (v6 ? 40 : 20) + 8, SI + 1 + (uint32_t)off);
	assert_int_equal(nftdp_ct_confirm(en->s, &ack.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_int_equal(rd32(ack.buf + (v6 ? 40 : 20) + 8), SI + 1);
	nftdp_ct_confirm(en->s, &synack.pkt, NF_DROP); /* stolen */

	/* the server's data: into the proxy's sequence and timestamps */
	ts_seg(&t, v6, 1, TA, SI + 1, CI + 1, ST + 5, 100, false, 10);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_int_equal(hook(en, &t, &o, &maxwin), NFTDP_CT_SYNPROXY_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_int_equal(rd32(t.buf + (v6 ? 40 : 20) + 4), PI + 1);
	assert_int_equal(rd32(t.buf + (v6 ? 40 : 20) + 24), CT + 5);
	assert_csums(&t);
	/* the client's answer: back into the server's */
	ts_seg(&t, v6, 0, TA, CI + 1, PI + 11, 101, CT + 5, false, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_non_null(t.pkt.ct); /* in window: the offset is taken back */
	assert_int_equal(hook(en, &t, &o, &maxwin), NFTDP_CT_SYNPROXY_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_int_equal(rd32(t.buf + (v6 ? 40 : 20) + 8), SI + 11);
	assert_int_equal(rd32(t.buf + (v6 ? 40 : 20) + 28), ST + 5);
	assert_csums(&t);
	env_free(en);
}

static void test_v4(void **state)
{
	(void)state;
	run(false);
}

static void test_v6(void **state)
{
	(void)state;
	run(true);
}

/* the server answers the SYN with a RST: its sequence number moves into
 * the proxy's, so that the client takes it */
static void test_rst(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_vm_synproxy_opts o;
	struct tpkt syn, t;
	uint16_t maxwin;

	(void)state;
	ts_seg(&syn, false, 0, TS, CI, PI, 100, CT, true, 0);
	assert_int_equal(nftdp_ct_in(en->s, &syn.pkt, en->now), NF_ACCEPT);
	assert_true(nftdp_ct_synproxy_new(en->s, &syn.pkt));
	assert_int_equal(hook(en, &syn, &o, &maxwin), NFTDP_CT_SYNPROXY_ACCEPT);
	nftdp_ct_confirm(en->s, &syn.pkt, NF_ACCEPT);
	ts_seg(&t, false, 1, TR | TA, 0, CI + 1, ST, 100, false, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_non_null(t.pkt.ct);
	assert_int_equal(hook(en, &t, &o, &maxwin), NFTDP_CT_SYNPROXY_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	/* offset isn - seq + 1 from seq 0: the client sees isn + 1 */
	assert_int_equal(rd32(t.buf + 24), PI + 1);
	assert_csums(&t);
	env_free(en);
}

/* a connection synproxy did not open is left as it is */
static void test_plain(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.1", "10.0.0.2", 40000, 80, 5000, 9000};
	struct nftdp_vm_synproxy_opts o;
	struct nftdp_ct_entry *e = handshake(en, &f);
	struct tpkt t, before;
	uint32_t info[3];
	uint16_t maxwin;

	(void)state;
	assert_false(nftdp_ct_synproxy_info(e, info));
	{
		struct nftdp_ct_info ci;

		nftdp_ct_fill_info(e, en->now, &ci);
		assert_false(ci.synproxy);
	}
	ts_seg(&t, false, 1, TA, f.bseq, f.aseq, ST, 100, false, 4);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	/* an established entry takes no template */
	assert_false(nftdp_ct_synproxy_new(en->s, &t.pkt));
	memcpy(&before, &t, sizeof(t));
	assert_int_equal(hook(en, &t, &o, &maxwin), NFTDP_CT_SYNPROXY_ACCEPT);
	assert_memory_equal(before.buf, t.buf, t.len);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v4),
	    cmocka_unit_test(test_v6),
	    cmocka_unit_test(test_rst),
	    cmocka_unit_test(test_plain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
