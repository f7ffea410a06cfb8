// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL):
 * the connection table: shard creation and its errors, attach to an
 * existing entry, burst order, the probe's hint (a found entry, a miss)
 * and the burst's prefetch,
 * the single-packet nf_conntrack_in,
 * timeouts and gc, configured timeouts, table
 * full with early drop, gc under pressure, confirm/drop, an established
 * packet's confirm, control-plane
 * walk/get/delete/flush and events, the symmetric RSS hash and the tuple
 * hash's spread.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

/* a burst keeps packet order: an error about a flow its first packet opened */
static void test_burst_order(void **state)
{
	struct env *en = env_new(8, false);
	struct tpkt a, b, q;
	struct nftdp_vm_pkt *pk[2] = {&a.pkt, &b.pkt};
	unsigned int v[2];

	(void)state;
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	udp(&q, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	icmp(&b, false, "10.0.0.254", "10.0.0.1", 3, 3, 0, q.buf, q.len);
	nftdp_ct_in_burst(en->s, pk, 2, v, en->now, NULL);
	assert_int_equal(nftdp_ct_vm_ops.state(a.pkt.ct), ST_NEW);
	assert_non_null(b.pkt.ct);
	assert_int_equal(nftdp_ct_vm_ops.state(b.pkt.ct), ST_RELATED);
	v[0] = v[1] = NF_ACCEPT;
	nftdp_ct_confirm_burst(en->s, pk, 2, v);
	assert_int_equal(en->s->st.count, 1);
	env_free(en);
}

/* what a probe found holds only while no entry was linked: a slot freed
 * and reused in between is another connection */
static void test_probe_hint(void **state)
{
	struct env *en = env_new(8, false);
	struct nftdp_ct_entry *a, *b;
	struct nftdp_ct_lookup lk = {0};
	const struct nftdp_ct_lookup *lks[1] = {&lk};
	struct nftdp_vm_pkt *pk[1];
	struct tpkt t, u;
	unsigned int v[1];

	(void)state;
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(xmit(en, &t, &a), ST_NEW);
	/* found and used as found */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_ptr_equal(nftdp_ct_probe(en->s, &t.pkt, en->now, &lk), a);
	pk[0] = &t.pkt;
	nftdp_ct_in_burst(en->s, pk, 1, v, en->now, lks);
	assert_ptr_equal((void *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7), a);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	/* probed, then the entry goes and its slot holds another flow */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_ptr_equal(nftdp_ct_probe(en->s, &t.pkt, en->now, &lk), a);
	assert_int_equal(nftdp_ct_delete(en->s, &a->tuple[0], 0), 0);
	udp(&u, false, "10.0.0.3", "10.0.0.4", 7, 7, 0);
	assert_int_equal(xmit(en, &u, &b), ST_NEW);
	assert_ptr_equal(b, a); /* the same slot */
	nftdp_ct_in_burst(en->s, pk, 1, v, en->now, lks);
	assert_non_null(t.pkt.ct);
	assert_ptr_not_equal((void *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7), b);
	assert_int_equal(nftdp_ct_vm_ops.state(t.pkt.ct), ST_NEW);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	assert_int_equal(en->s->st.count, 2);
	env_free(en);
}

/* a probe that found no entry with the tuple spares nf_conntrack_in its
 * walk while nothing was linked; once a node is, the walk is made again */
static void test_probe_miss(void **state)
{
	struct env *en = env_new(8, false);
	struct nftdp_ct_entry *a, *b;
	struct nftdp_ct_lookup lk = {0};
	const struct nftdp_ct_lookup *lks[1] = {&lk};
	struct nftdp_vm_pkt *pk[1];
	struct tpkt t, u;
	unsigned int v[1];

	(void)state;
	/* missed, then the same tuple made by another packet: found */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_null(nftdp_ct_probe(en->s, &t.pkt, en->now, &lk));
	assert_int_equal(lk.node, NFTDP_CT_LOOKUP_MISS);
	udp(&u, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(xmit(en, &u, &a), ST_NEW);
	pk[0] = &t.pkt;
	nftdp_ct_in_burst(en->s, pk, 1, v, en->now, lks);
	assert_ptr_equal((void *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7), a);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	assert_int_equal(en->s->st.count, 1);
	/* missed, the entry of another tuple killed meanwhile: still a
	 * miss, a new entry made without a second walk */
	udp(&t, false, "10.0.0.5", "10.0.0.6", 1, 2, 0);
	lk.data = NULL; /* other bytes in the same buffer: a new burst's lookup */
	assert_null(nftdp_ct_probe(en->s, &t.pkt, en->now, &lk));
	assert_int_equal(nftdp_ct_delete(en->s, &a->tuple[0], 0), 0);
	nftdp_ct_in_burst(en->s, pk, 1, v, en->now, lks);
	assert_int_equal(nftdp_ct_vm_ops.state(t.pkt.ct), ST_NEW);
	b = (struct nftdp_ct_entry *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	assert_int_equal(en->s->st.count, 1);
	/* the miss is taken as the walk's answer: a hint forged over a
	 * live entry (which no probe can leave) makes a second one, so
	 * the walk was not made */
	udp(&t, false, "10.0.0.5", "10.0.0.6", 1, 2, 0);
	assert_ptr_equal(nftdp_ct_probe(en->s, &t.pkt, en->now, &lk), b);
	lk.node = NFTDP_CT_LOOKUP_MISS;
	nftdp_ct_in_burst(en->s, pk, 1, v, en->now, lks);
	assert_ptr_not_equal((void *)((uintptr_t)t.pkt.ct & ~(uintptr_t)7), b);
	nftdp_ct_confirm(en->s, &t.pkt, NF_DROP);
	assert_int_equal(en->s->st.count, 1);
	env_free(en);
}

/* the burst's prefetch works out what the probe would (tuple, hash) and
 * leaves it for the probe, which finds the same entries with it; nothing
 * for what cannot be looked up (an ICMP echo); a packet put into another
 * zone since is worked out again */
static void test_prefetch_burst(void **state)
{
	struct env *en = env_new(8, false);
	struct nftdp_ct_entry *a;
	struct nftdp_ct_lookup lk[4], ref;
	struct nftdp_ct_lookup *lkp[4] = {&lk[0], &lk[1], &lk[2], &lk[3]};
	const struct nftdp_ct_lookup *lkc[1] = {&lk[0]};
	struct tpkt t[4];
	struct nftdp_vm_pkt *pk[4] = {&t[0].pkt, &t[1].pkt, &t[2].pkt, &t[3].pkt};
	unsigned int v[1];

	(void)state;
	udp(&t[0], false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(xmit(en, &t[0], &a), ST_NEW);
	udp(&t[0], false, "10.0.0.1", "10.0.0.2", 1000, 53, 0); /* original */
	udp(&t[1], false, "10.0.0.2", "10.0.0.1", 53, 1000, 0); /* its reply */
	udp(&t[2], false, "10.0.0.9", "10.0.0.2", 5, 6, 0);	/* no entry */
	icmp(&t[3], false, "10.0.0.254", "10.0.0.1", 8, 0, 1, NULL, 0);
	memset(lk, 0xa5, sizeof(lk));
	nftdp_ct_prefetch_burst(en->s, pk, 4, lkp);
	for (int i = 0; i < 3; i++) {
		ref.data = NULL;
		assert_ptr_equal(lk[i].data, pk[i]->data);
		assert_int_equal(lk[i].len, pk[i]->len);
		assert_int_equal(lk[i].node, UINT32_MAX);
		(void)nftdp_ct_probe(en->s, pk[i], en->now, &ref);
		assert_int_equal(lk[i].hash, ref.hash);
		assert_memory_equal(&lk[i].t, &ref.t, sizeof(ref.t));
	}
	assert_null(lk[3].data);
	assert_ptr_equal(nftdp_ct_probe(en->s, pk[0], en->now, &lk[0]), a);
	assert_ptr_equal(nftdp_ct_probe(en->s, pk[1], en->now, &lk[1]), a);
	assert_null(nftdp_ct_probe(en->s, pk[2], en->now, &lk[2]));
	assert_null(nftdp_ct_probe(en->s, pk[3], en->now, &lk[3]));
	assert_null(lk[3].data);
	/* prefetched in zone 0, then put into zone 5: not zone 0's entry */
	nftdp_ct_prefetch_burst(en->s, pk, 1, lkp);
	t[0].pkt.ct_zone = 5;
	t[0].pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
	assert_null(nftdp_ct_probe(en->s, pk[0], en->now, &lk[0]));
	assert_int_equal(lk[0].t.zone, 5);
	nftdp_ct_prefetch_burst(en->s, pk, 1, lkp);
	t[0].pkt.ct_zone = 6;
	nftdp_ct_in_burst(en->s, pk, 1, v, en->now, lkc);
	assert_int_equal(nftdp_ct_vm_ops.state(t[0].pkt.ct), ST_NEW);
	assert_ptr_not_equal((void *)((uintptr_t)t[0].pkt.ct & ~(uintptr_t)7), a);
	nftdp_ct_confirm(en->s, &t[0].pkt, NF_ACCEPT);
	assert_int_equal(en->s->st.count, 2);
	env_free(en);
}

/* packet k of test_in_hinted's sequence */
static void hinted_pkt(struct tpkt *t, unsigned int k)
{
	const struct tflow f = {.a = "10.0.1.1", .b = "10.0.1.2", .ap = 4000, .bp = 80};
	struct tpkt q;

	switch (k) {
	case 0: /* new, its reply, the original again */
	case 2:
		udp(t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
		break;
	case 1:
		udp(t, false, "10.0.0.2", "10.0.0.1", 53, 1000, 0);
		break;
	case 3: /* an error about it: related */
		udp(&q, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
		icmp(t, false, "10.0.0.254", "10.0.0.1", 3, 3, 0, q.buf, q.len);
		break;
	case 4: /* a handshake */
		seg(t, &f, 0, TS, 100, 0, 0);
		break;
	case 5:
		seg(t, &f, 1, TS | TA, 500, 101, 0);
		break;
	case 6:
		seg(t, &f, 0, TA, 101, 501, 0);
		break;
	case 7: /* no flags: invalid */
		seg(t, &f, 0, 0, 101, 0, 0);
		break;
	default: /* an echo request */
		icmp(t, false, "10.0.0.1", "10.0.0.2", 8, 0, 7, NULL, 0);
		break;
	}
}

/* the established pass's single-packet nf_conntrack_in gives what the
 * burst's gives a burst of one: verdicts, states, counters */
static void test_in_hinted(void **state)
{
	struct env *a = env_new(8, false), *b = env_new(8, false);

	(void)state;
	for (unsigned int k = 0; k < 9; k++) {
		struct tpkt ta, tb;
		/* reset as the dataplane resets them each burst */
		struct nftdp_ct_lookup la = {0}, lb = {0};
		const struct nftdp_ct_lookup *lka[1] = {&la};
		struct nftdp_vm_pkt *pa[1] = {&ta.pkt};
		unsigned int va, vb;

		hinted_pkt(&ta, k);
		hinted_pkt(&tb, k);
		(void)nftdp_ct_probe(a->s, &ta.pkt, a->now, &la);
		(void)nftdp_ct_probe(b->s, &tb.pkt, b->now, &lb);
		nftdp_ct_in_burst(a->s, pa, 1, &va, a->now, lka);
		vb = nftdp_ct_in_hinted(b->s, &tb.pkt, b->now, &lb);
		assert_int_equal(va, vb);
		assert_int_equal(!ta.pkt.ct, !tb.pkt.ct);
		assert_int_equal(ta.pkt.ct_untracked, tb.pkt.ct_untracked);
		if (ta.pkt.ct)
			assert_int_equal(nftdp_ct_vm_ops.state(ta.pkt.ct),
					 nftdp_ct_vm_ops.state(tb.pkt.ct));
		nftdp_ct_confirm(a->s, &ta.pkt, NF_ACCEPT);
		nftdp_ct_confirm(b->s, &tb.pkt, NF_ACCEPT);
	}
	assert_int_equal(a->s->st.count, 3);
	assert_int_equal(a->s->st.invalid, 1);
	assert_int_equal(a->s->st.related, 1);
	assert_memory_equal(&a->s->st, &b->s->st, sizeof(a->s->st));
	env_free(a);
	env_free(b);
}

/* packet k of test_in_probed's sequence: a TCP connection over IPv4 or
 * IPv6 (handshake, data both ways, a retransmission, a FIN) with a UDP
 * flow beside it */
static void probed_pkt(struct tpkt *t, unsigned int k, bool v6)
{
	struct tflow f = {.v6 = v6, .ap = 4000, .bp = 80};

	f.a = v6 ? "2001:db8::1" : "10.0.1.1";
	f.b = v6 ? "2001:db8::2" : "10.0.1.2";
	switch (k) {
	case 0:
		seg(t, &f, 0, TS, 100, 0, 0);
		break;
	case 1:
		seg(t, &f, 1, TS | TA, 500, 101, 0);
		break;
	case 2:
		seg(t, &f, 0, TA, 101, 501, 0);
		break;
	case 3:
	case 5: /* the same data again: a retransmission */
		seg(t, &f, 0, TA, 101, 501, 10);
		break;
	case 4:
		seg(t, &f, 1, TA, 501, 111, 20);
		break;
	case 6:
		seg(t, &f, 0, TA, 111, 521, 0);
		break;
	case 7: /* out of the window */
		seg(t, &f, 0, TA, 900000, 521, 4);
		break;
	case 8:
		seg(t, &f, 1, TF | TA, 521, 111, 0);
		break;
	case 9:
	case 11:
		udp(t, v6, f.a, f.b, 1000, 53, 8);
		break;
	default:
		udp(t, v6, f.b, f.a, 53, 1000, 8);
		break;
	}
}

/* the established pass's nf_conntrack_in after a probe that found the
 * entry (nftdp_ct_in_probed) gives what nftdp_ct_in_hinted gives:
 * verdicts, states, TCP windows, counters; where the probe found none,
 * or an entry was linked since, it is nftdp_ct_in_hinted. So does
 * nftdp_ct_in_found right after a probe that found one (c) */
static void test_in_probed(void **state)
{
	unsigned int found = 0;

	(void)state;
	for (unsigned int v6 = 0; v6 < 2; v6++) {
		struct env *a = env_new(8, false), *b = env_new(8, false), *c = env_new(8, false);

		for (unsigned int k = 0; k < 13; k++) {
			struct nftdp_ct_lookup la = {0}, lb = {0}, lc = {0};
			struct nftdp_ct_entry *ea, *eb, *ec;
			const void *fa, *fb, *fc;
			struct tpkt ta, tb, tc, u;
			unsigned int va, vb, vc;

			probed_pkt(&ta, k, v6);
			probed_pkt(&tb, k, v6);
			probed_pkt(&tc, k, v6);
			fa = nftdp_ct_probe(a->s, &ta.pkt, a->now, &la);
			fb = nftdp_ct_probe(b->s, &tb.pkt, b->now, &lb);
			fc = nftdp_ct_probe(c->s, &tc.pkt, c->now, &lc);
			assert_int_equal(!fa, !fb);
			assert_int_equal(!fa, !fc);
			if (k == 10) {
				/* an entry linked between the probe and
				 * conntrack: the probe's node no longer holds */
				udp(&u, v6, v6 ? "2001:db8::7" : "10.0.0.7",
				    v6 ? "2001:db8::8" : "10.0.0.8", 7, 7, 0);
				assert_int_equal(xmit(a, &u, NULL), ST_NEW);
				udp(&u, v6, v6 ? "2001:db8::7" : "10.0.0.7",
				    v6 ? "2001:db8::8" : "10.0.0.8", 7, 7, 0);
				assert_int_equal(xmit(b, &u, NULL), ST_NEW);
				udp(&u, v6, v6 ? "2001:db8::7" : "10.0.0.7",
				    v6 ? "2001:db8::8" : "10.0.0.8", 7, 7, 0);
				assert_int_equal(xmit(c, &u, NULL), ST_NEW);
			}
			/* c: nftdp_ct_in_found where nothing ran since its
			 * probe found the entry */
			if (fc && k != 10) {
				vc = nftdp_ct_in_found(c->s, &tc.pkt, c->now, &lc);
				found++;
			} else {
				vc = nftdp_ct_in_hinted(c->s, &tc.pkt, c->now, &lc);
			}
			va = nftdp_ct_in_hinted(a->s, &ta.pkt, a->now, &la);
			vb = nftdp_ct_in_probed(b->s, &tb.pkt, b->now, &lb);
			assert_int_equal(va, vb);
			assert_int_equal(!ta.pkt.ct, !tb.pkt.ct);
			if (ta.pkt.ct) {
				assert_int_equal(nftdp_ct_vm_ops.state(ta.pkt.ct),
						 nftdp_ct_vm_ops.state(tb.pkt.ct));
				ea =
				    (struct nftdp_ct_entry *)((uintptr_t)ta.pkt.ct & ~(uintptr_t)7);
				eb =
				    (struct nftdp_ct_entry *)((uintptr_t)tb.pkt.ct & ~(uintptr_t)7);
				assert_int_equal(ea->status, eb->status);
				assert_int_equal(ea->expires_ms, eb->expires_ms);
				if (k < 9)
					assert_memory_equal(&ea->proto.tcp, &eb->proto.tcp,
							    sizeof(ea->proto.tcp));
				ec =
				    (struct nftdp_ct_entry *)((uintptr_t)tc.pkt.ct & ~(uintptr_t)7);
				assert_int_equal(nftdp_ct_vm_ops.state(ta.pkt.ct),
						 nftdp_ct_vm_ops.state(tc.pkt.ct));
				assert_int_equal(ea->status, ec->status);
				assert_int_equal(ea->expires_ms, ec->expires_ms);
				assert_memory_equal(&ea->proto, &ec->proto, sizeof(ea->proto));
				for (int d = 0; d < 2; d++) {
					struct ct_acct xa = nftdp_ct_acct_get(ea->shard, ea, d),
						       xc = nftdp_ct_acct_get(ec->shard, ec, d);

					assert_int_equal(xa.packets, xc.packets);
					assert_int_equal(xa.bytes, xc.bytes);
				}
			}
			assert_int_equal(va, vc);
			assert_int_equal(!ta.pkt.ct, !tc.pkt.ct);
			nftdp_ct_confirm(a->s, &ta.pkt, NF_ACCEPT);
			nftdp_ct_confirm(b->s, &tb.pkt, NF_ACCEPT);
			nftdp_ct_confirm(c->s, &tc.pkt, NF_ACCEPT);
		}
		assert_int_equal(a->s->st.count, 3);
		assert_int_equal(a->s->st.invalid, 1); /* the segment out of the window */
		assert_memory_equal(&a->s->st, &b->s->st, sizeof(a->s->st));
		assert_memory_equal(&a->s->st, &c->s->st, sizeof(a->s->st));
		env_free(a);
		env_free(b);
		env_free(c);
	}
	assert_true(found >= 16); /* most packets of each family took it */
}

/* the probe's tuple of a TCP or UDP packet over IPv4 or IPv6 (worked out
 * in line) is nftdp_ct_pkt_tuple's, with the packet's zone */
static void test_probe_tuple(void **state)
{
	struct env *en = env_new(8, false);

	(void)state;
	for (unsigned int k = 0; k < 8; k++) {
		const struct tflow f = {.v6 = k & 1,
					.a = k & 1 ? "2001:db8::1:2:3" : "10.1.2.3",
					.b = k & 1 ? "2001:db8::4:5:6" : "10.4.5.6",
					.ap = 0x1234,
					.bp = 0x5678};
		struct nftdp_ct_lookup lk = {0};
		struct nftdp_ct_tuple want;
		struct tpkt t;

		if (k & 2)
			udp(&t, f.v6, f.a, f.b, f.ap, f.bp, 3);
		else
			seg(&t, &f, 0, TS, 100, 0, 0);
		if (k & 4) { /* `ct zone set 9` before conntrack */
			t.pkt.ct_zone = 9;
			t.pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
		}
		assert_true(nftdp_ct_pkt_tuple(&t.pkt, &want));
		want.zone = k & 4 ? 9 : 0;
		assert_null(nftdp_ct_probe(en->s, &t.pkt, en->now, &lk));
		assert_ptr_equal(lk.data, t.pkt.data);
		assert_memory_equal(&lk.t, &want, sizeof(want));
		assert_int_equal(lk.hash, nftdp_ct_tuple_hash(en->s, &want));
	}
	env_free(en);
}

static void test_timeout_gc(void **state)
{
	struct env *en = env_new(16, false);
	struct nftdp_ct_stats st;
	struct tpkt t;
	unsigned int freed = 0;

	(void)state;
	for (int i = 0; i < 5; i++) {
		udp(&t, false, "10.0.0.1", "10.0.0.2", (uint16_t)(1000 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	icmp(&t, false, "10.0.0.1", "10.0.0.2", 8, 0, 1, NULL, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 6);
	en->now += 29999;
	for (int i = 0; i < 16; i++)
		freed += nftdp_ct_gc(en->s, en->now, 4);
	assert_int_equal(freed, 0);
	en->now += 1;
	/* bounded: 4 slots a call */
	freed = nftdp_ct_gc(en->s, en->now, 4);
	assert_true(freed <= 4);
	for (int i = 0; i < 4; i++)
		freed += nftdp_ct_gc(en->s, en->now, 4);
	assert_int_equal(freed, 6);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.expired, 6);
	/* lookups reap expired entries too: a new packet starts afresh */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1000, 53, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	en->now += 31000;
	udp(&t, false, "10.0.0.2", "10.0.0.1", 53, 1000, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW); /* the old entry expired */
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	env_free(en);
}

static void test_configured_timeouts(void **state)
{
	struct nftdp_ct_timeouts tmo;
	struct nftdp_ct_config cfg = {.max_entries = 8, .timeouts = &tmo};
	struct env en = {.now = 100000};
	struct nftdp_ct_entry *e;
	struct tpkt t;

	(void)state;
	nftdp_ct_timeouts_default(&tmo);
	assert_int_equal(tmo.tcp[TCP_CONNTRACK_ESTABLISHED], 432000);
	assert_int_equal(tmo.generic, 600);
	tmo.udp_unreplied = 7;
	tmo.generic = 9;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	udp(&t, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	assert_int_equal(xmit(&en, &t, &e), ST_NEW);
	assert_int_equal(left_s(&en, e), 7);
	{
		uint8_t gre[8] = {0};

		build(&t, false, "10.0.0.1", "10.0.0.2", IPPROTO_ESP, gre, 8);
		assert_int_equal(xmit(&en, &t, &e), ST_NEW);
		assert_int_equal(left_s(&en, e), 9);
		assert_int_equal(e->tuple[0].l4proto, IPPROTO_ESP);
		/* GRE: the kernel's GRE timeouts, assured once replied */
		build(&t, false, "10.0.0.1", "10.0.0.2", IPPROTO_GRE, gre, 8);
		assert_int_equal(xmit(&en, &t, &e), ST_NEW);
		assert_int_equal(left_s(&en, e), 30);
		build(&t, false, "10.0.0.2", "10.0.0.1", IPPROTO_GRE, gre, 8);
		assert_int_equal(xmit(&en, &t, NULL), ST_ESTABLISHED);
		build(&t, false, "10.0.0.1", "10.0.0.2", IPPROTO_GRE, gre, 8);
		assert_int_equal(xmit(&en, &t, NULL), ST_ESTABLISHED);
		assert_int_equal(left_s(&en, e), 180);
		assert_true(e->status & IPS_ASSURED);
	}
	nftdp_ct_shard_destroy(en.s);
}

static void test_table_full(void **state)
{
	struct env *en = env_new(4, false);
	struct tflow f[4];
	struct nftdp_ct_stats st;
	struct tpkt t;

	(void)state;
	/* four assured connections fill the table */
	for (int i = 0; i < 4; i++) {
		f[i] =
		    (struct tflow){false, "10.6.0.1", "10.6.0.2", (uint16_t)(2000 + i), 80, 10, 20};
		handshake(en, &f[i]);
		assert_int_equal(tx(en, &f[i], 0, TA, 0, NULL), ST_ESTABLISHED);
	}
	/* a new connection: nothing to evict, dropped */
	seg(&t, &(struct tflow){false, "10.6.0.1", "10.6.0.2", 3000, 80, 1, 1}, 0, TS, 1, 0, 0);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_DROP);
	assert_null(t.pkt.ct);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.drop, 1);
	assert_int_equal(st.table_full_events, 1);
	/* established ones keep flowing */
	for (int i = 0; i < 4; i++)
		assert_int_equal(tx(en, &f[i], 1, TA, 10, NULL), ST_ESTABLISHED);
	env_free(en);

	/* unassured entries are evicted for new ones */
	en = env_new(8, false);
	for (int i = 0; i < 8; i++) {
		udp(&t, false, "10.7.0.1", "10.7.0.2", (uint16_t)(100 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	{
		int ok = 0;

		for (int i = 0; i < 8; i++) {
			udp(&t, false, "10.7.0.3", "10.7.0.4", (uint16_t)(500 + i), 53, 0);
			if (nftdp_ct_in(en->s, &t.pkt, en->now) == NF_ACCEPT && t.pkt.ct)
				ok++;
			nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
		}
		nftdp_ct_stats(en->s, &st);
		assert_true(ok >= 1);
		assert_true(st.early_drop >= (uint64_t)ok);
		/* a bucket's unassured entries all go at once */
		assert_int_equal(st.count, 8 + ok - (int)st.early_drop);
		assert_int_equal((int)st.drop + ok, 8);
	}
	env_free(en);
}

static void test_gc_pressure(void **state)
{
	struct env *en = env_new(4, false);
	struct tflow f[4];

	(void)state;
	/* full of assured connections in FIN_WAIT: the gc may evict them */
	for (int i = 0; i < 4; i++) {
		f[i] =
		    (struct tflow){false, "10.8.0.1", "10.8.0.2", (uint16_t)(2000 + i), 80, 10, 20};
		handshake(en, &f[i]);
		assert_int_equal(tx(en, &f[i], 0, TA, 0, NULL), ST_ESTABLISHED);
	}
	assert_int_equal(nftdp_ct_gc(en->s, en->now, 4), 0);
	assert_int_equal(tx(en, &f[0], 0, TF | TA, 0, NULL), ST_ESTABLISHED);
	/* full, but no new connection was refused yet: nothing goes */
	assert_int_equal(nftdp_ct_gc(en->s, en->now, 4), 0);
	{
		struct tpkt t;

		seg(&t, &(struct tflow){false, "10.8.0.1", "10.8.0.2", 3000, 80, 1, 1}, 0, TS, 1, 0,
		    0);
		assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_DROP);
	}
	assert_int_equal(nftdp_ct_gc(en->s, en->now, 4), 1);
	assert_int_equal(en->s->st.count, 3);
	env_free(en);
}

static void test_confirm_drop(void **state)
{
	struct env *en = env_new(8, false);
	struct nftdp_ct_stats st;
	struct tpkt a, b, *burst[2] = {&a, &b};
	struct nftdp_vm_pkt *pk[2] = {&a.pkt, &b.pkt};
	unsigned int v[2];

	(void)state;
	/* a dropped first packet leaves no entry */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	assert_int_equal(xmit_v(en, &a, NF_DROP, NULL, NULL), ST_NEW);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.unconfirmed_freed, 1);
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	assert_int_equal(xmit(en, &a, NULL), ST_NEW);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	/* two first packets of one flow in a burst share the entry; the
	 * first dropped, the second accepted: the entry stays */
	udp(&a, false, "10.0.0.5", "10.0.0.6", 1, 2, 0);
	udp(&b, false, "10.0.0.5", "10.0.0.6", 1, 2, 0);
	nftdp_ct_in_burst(en->s, pk, 2, v, en->now, NULL);
	assert_int_equal(v[0], NF_ACCEPT);
	assert_ptr_equal((void *)((uintptr_t)a.pkt.ct & ~(uintptr_t)7),
			 (void *)((uintptr_t)b.pkt.ct & ~(uintptr_t)7));
	v[0] = NF_DROP;
	v[1] = NF_ACCEPT;
	nftdp_ct_confirm_burst(en->s, pk, 2, v);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 2);
	/* both dropped: gone */
	udp(&a, false, "10.0.0.7", "10.0.0.8", 1, 2, 0);
	udp(&b, false, "10.0.0.7", "10.0.0.8", 1, 2, 0);
	nftdp_ct_in_burst(en->s, pk, 2, v, en->now, NULL);
	v[0] = v[1] = NF_DROP;
	nftdp_ct_confirm_burst(en->s, pk, 2, v);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 2);
	(void)burst;
	/* notrack before conntrack: untracked, no entry */
	udp(&a, false, "10.0.0.9", "10.0.0.8", 1, 2, 0);
	a.pkt.out.notrack = true;
	assert_int_equal(xmit(en, &a, NULL), ST_UNTRACKED);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 2);
	env_free(en);
}

/* a confirmed connection's packet gives its reference back at confirm
 * whatever the verdict (nf_conntrack_confirm returns at once for it); a
 * packet holding an entry killed meanwhile frees it there */
static void test_confirm_established(void **state)
{
	struct env *en = env_new(8, false);
	struct tflow f = {false, "10.0.0.1", "10.0.0.2", 1000, 80, 1, 1};
	struct nftdp_ct_entry *e;
	struct nftdp_ct_stats st;
	struct tpkt t;

	(void)state;
	e = handshake(en, &f);
	assert_int_equal(e->refs, 0);
	for (int dir = 0; dir < 2; dir++) {
		assert_int_equal(tx(en, &f, dir, TA, 10, NULL), ST_ESTABLISHED);
		assert_int_equal(e->refs, 0);
		seg(&t, &f, dir, TA, dir ? f.bseq : f.aseq, dir ? f.aseq : f.bseq, 0);
		nftdp_ct_in(en->s, &t.pkt, en->now);
		assert_int_equal(e->refs, 1);
		assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_DROP), NF_DROP);
		assert_null(t.pkt.ct);
		assert_int_equal(e->refs, 0);
	}
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	/* deleted while a packet holds it: freed by that packet's confirm */
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 0);
	nftdp_ct_in(en->s, &t.pkt, en->now);
	assert_int_equal(nftdp_ct_delete(en->s, &e->tuple[0], 0), 0);
	assert_true(e->in_use);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	assert_false(e->in_use);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 0);
	env_free(en);
}

/* nf_ct_attach: a reply nftdp makes joins the connection, related, the
 * other way; it never confirms a new connection, and holds it until given back */
static void test_attach(void **state)
{
	struct env *en = env_new(8, false);
	struct nftdp_ct_stats st;
	struct tpkt a, r;
	unsigned int ctinfo;

	(void)state;
	/* a new connection whose first packet is rejected: the RST or ICMP
	 * error is related-reply, and the entry goes when both are done */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 1, 2, 0);
	nftdp_ct_in(en->s, &a.pkt, en->now);
	assert_non_null(a.pkt.ct);
	udp(&r, false, "10.0.0.2", "10.0.0.1", 2, 1, 0);
	nftdp_ct_attach(&r.pkt, &a.pkt);
	ctinfo = (unsigned int)((uintptr_t)r.pkt.ct & 7);
	assert_int_equal(ctinfo, IP_CT_RELATED_REPLY);
	assert_ptr_equal((void *)((uintptr_t)a.pkt.ct & ~(uintptr_t)7),
			 (void *)((uintptr_t)r.pkt.ct & ~(uintptr_t)7));
	assert_ptr_equal(r.pkt.ct_ops, &nftdp_ct_vm_ops);
	assert_int_equal(nftdp_ct_vm_ops.state(r.pkt.ct), NF_CT_STATE_BIT(IP_CT_RELATED));
	assert_int_equal(nftdp_ct_confirm(en->s, &a.pkt, NF_DROP), NF_DROP);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.unconfirmed_freed, 0); /* the reply still holds it */
	assert_int_equal(nftdp_ct_confirm(en->s, &r.pkt, NF_ACCEPT), NF_ACCEPT);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.insert, 0);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.unconfirmed_freed, 1);
	/* an answer to a reply-direction packet is related, original way */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 3, 4, 0);
	assert_int_equal(xmit(en, &a, NULL), ST_NEW);
	udp(&a, false, "10.0.0.2", "10.0.0.1", 4, 3, 0);
	nftdp_ct_in(en->s, &a.pkt, en->now);
	nftdp_ct_attach(&r.pkt, &a.pkt);
	assert_int_equal((unsigned int)((uintptr_t)r.pkt.ct & 7), IP_CT_RELATED);
	nftdp_ct_confirm(en->s, &a.pkt, NF_ACCEPT);
	nftdp_ct_confirm(en->s, &r.pkt, NF_DROP);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	/* nothing to attach to */
	udp(&a, false, "10.0.0.1", "10.0.0.2", 5, 6, 0);
	a.pkt.ct = NULL;
	r.pkt.ct = NULL;
	nftdp_ct_attach(&r.pkt, &a.pkt);
	assert_null(r.pkt.ct);
	env_free(en);
}

static int count_cb(const struct nftdp_ct_info *info, void *arg)
{
	(*(int *)arg)++;
	assert_true(info->status & IPS_CONFIRMED);
	assert_int_equal(info->use, 1);
	return 0;
}

static void test_walk_get_delete_flush(void **state)
{
	struct env *en = env_new(32, false);
	struct tflow f = {false, "10.9.0.1", "10.9.0.2", 4444, 80, 1, 1};
	struct nftdp_ct_entry *e = handshake(en, &f);
	struct nftdp_ct_info info;
	struct nftdp_ct_tuple rt;
	struct tpkt t;
	int n = 0;

	(void)state;
	for (int i = 0; i < 3; i++) {
		udp(&t, false, "10.9.0.1", "10.9.0.3", (uint16_t)(10 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	assert_int_equal(nftdp_ct_walk(en->s, en->now, count_cb, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(nftdp_ct_get(en->s, &e->tuple[1], en->now, &info), 0);
	assert_int_equal(info.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	assert_int_equal(info.timeout_s, 5 * 24 * 3600);
	assert_int_equal(info.packets[0], 2);
	assert_int_equal(info.packets[1], 1);
	assert_true(info.status & IPS_ASSURED);
	assert_int_equal(info.id, e->id);
	rt = e->tuple[1];
	assert_int_equal(nftdp_ct_delete(en->s, &rt, info.id + 1), -ENOENT);
	assert_int_equal(nftdp_ct_delete(en->s, &rt, info.id), 0);
	assert_int_equal(nftdp_ct_get(en->s, &rt, en->now, &info), -ENOENT);
	assert_int_equal(nftdp_ct_delete(en->s, &rt, 0), -ENOENT);
	assert_int_equal(nftdp_ct_flush(en->s), 3);
	n = 0;
	assert_int_equal(nftdp_ct_walk(en->s, en->now, count_cb, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(en->s->st.count, 0);
	/* the freed slots are reused */
	for (int i = 0; i < 32; i++) {
		udp(&t, false, "10.9.1.1", "10.9.0.3", (uint16_t)(10 + i), 53, 0);
		assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	}
	assert_int_equal(en->s->st.count, 32);
	env_free(en);
}

struct ev_log {
	uint32_t ev[16];
	uint8_t tcp_state[16];
	int n;
};

static void ev_cb(const struct nftdp_ct_event *ev, void *arg)
{
	struct ev_log *l = arg;

	assert_true(l->n < 16);
	l->tcp_state[l->n] = ev->info.tcp.state;
	l->ev[l->n++] = ev->events;
}

/* nftdp_ct_events_poll_while: take at most `room` events, note their ports */
struct ev_take {
	unsigned int room, n;
	uint16_t sport[8];
};

static bool take_cb(const struct nftdp_ct_event *ev, void *arg)
{
	struct ev_take *k = arg;

	if (k->n >= k->room)
		return false;
	k->sport[k->n++] = ntohs(ev->info.tuple[0].sport);
	return true;
}

static void test_events(void **state)
{
	struct nftdp_ct_config cfg = {.max_entries = 16, .event_ring_size = 4};
	struct tflow f = {false, "10.0.0.1", "10.0.0.2", 1000, 80, 1, 1};
	struct env en = {.now = 1000};
	struct nftdp_ct_entry *e;
	struct ev_log l = {0};
	uint64_t lost;
	struct tpkt t;

	(void)state;
	cfg.event_ring_size = 3;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), -EINVAL);
	cfg.event_ring_size = 4;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	/* a dropped first packet: no event */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 7, 7, 0);
	assert_int_equal(xmit_v(&en, &t, NF_DROP, NULL, NULL), ST_NEW);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	e = handshake(&en, &f);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 3);
	assert_int_equal(l.ev[0], 1u << IPCT_NEW | 1u << IPCT_PROTOINFO);
	assert_int_equal(l.tcp_state[0], TCP_CONNTRACK_SYN_SENT);
	assert_int_equal(l.ev[1], 1u << IPCT_REPLY | 1u << IPCT_PROTOINFO);
	assert_int_equal(l.ev[2], 1u << IPCT_ASSURED | 1u << IPCT_PROTOINFO);
	assert_int_equal(l.tcp_state[2], TCP_CONNTRACK_ESTABLISHED);
	/* nothing changes: no event */
	assert_int_equal(tx(&en, &f, 0, TA, 10, NULL), ST_ESTABLISHED);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	/* nobody listening: no events are built, none lost */
	{
		struct tflow g = {false, "10.0.0.3", "10.0.0.2", 1001, 80, 1, 1};

		struct nftdp_ct_entry *ge;

		nftdp_ct_events_enable(en.s, false);
		ge = handshake(&en, &g);
		assert_int_equal(nftdp_ct_delete(en.s, &ge->tuple[0], 0), 0);
		assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
		assert_int_equal(lost, 0);
		nftdp_ct_events_enable(en.s, true);
	}
	/* ct mark set: an update, delivered with the packet that passes */
	seg(&t, &f, 1, TA, f.bseq, f.aseq, 0);
	nftdp_ct_in(en.s, &t.pkt, en.now);
	nftdp_ct_vm_ops.set(t.pkt.ct, NFT_CT_MARK, -1, &(uint32_t){5}, 4);
	nftdp_ct_confirm(en.s, &t.pkt, NF_DROP);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	assert_int_equal(tx(&en, &f, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 1);
	assert_int_equal(l.ev[3], 1u << IPCT_MARK);
	/* delete: destroy */
	assert_int_equal(nftdp_ct_delete(en.s, &e->tuple[0], 0), 0);
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 1);
	assert_int_equal(l.ev[4], 1u << IPCT_DESTROY);
	/* a consumer that stops leaves the rest, in order, for the next poll */
	{
		struct ev_take k = {.room = 1};

		for (uint16_t p = 201; p <= 203; p++) {
			udp(&t, false, "10.0.0.1", "10.0.0.2", p, 9, 0);
			assert_int_equal(xmit(&en, &t, NULL), ST_NEW);
		}
		assert_int_equal(nftdp_ct_events_poll_while(en.s, take_cb, &k), 1);
		assert_int_equal(nftdp_ct_events_poll_while(en.s, take_cb, &k), 0);
		k.room = 8;
		assert_int_equal(nftdp_ct_events_poll_while(en.s, take_cb, &k), 2);
		assert_int_equal(k.sport[0], 201);
		assert_int_equal(k.sport[1], 202);
		assert_int_equal(k.sport[2], 203);
		assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
		assert_int_equal(lost, 0);
	}
	/* a full ring loses events and says so */
	for (uint16_t p = 1; p <= 6; p++) {
		udp(&t, false, "10.0.0.1", "10.0.0.2", p, 9, 0);
		assert_int_equal(xmit(&en, &t, NULL), ST_NEW);
	}
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 4);
	assert_int_equal(lost, 2);
	/* ct event set: only what the mask allows */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 99, 9, 0);
	nftdp_ct_in(en.s, &t.pkt, en.now);
	nftdp_ct_vm_ops.set(t.pkt.ct, NFT_CT_EVENTMASK, -1, &(uint32_t){1u << IPCT_DESTROY}, 4);
	nftdp_ct_confirm(en.s, &t.pkt, NF_ACCEPT);
	l.n = 0;
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 0);
	assert_int_equal(nftdp_ct_flush(en.s), 10); /* 7, and 201-203 */
	assert_int_equal(nftdp_ct_events_poll(en.s, ev_cb, &l, &lost), 4);
	nftdp_ct_shard_destroy(en.s);
}

static void test_rss_symmetric(void **state)
{
	struct nftdp_ct_tuple a, b;
	struct tpkt t;
	uint32_t h[4];

	(void)state;
	udp(&t, false, "10.0.0.1", "192.168.7.9", 1234, 80, 0);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &a));
	assert_true(nftdp_ct_tuple_invert(&a, &b));
	h[0] = nftdp_ct_tuple_rss(&a);
	assert_int_equal(h[0], nftdp_ct_tuple_rss(&b));
	udp(&t, true, "2001:db8::1", "2001:db8:ffff::77", 1234, 80, 0);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &a));
	assert_true(nftdp_ct_tuple_invert(&a, &b));
	h[1] = nftdp_ct_tuple_rss(&a);
	assert_int_equal(h[1], nftdp_ct_tuple_rss(&b));
	udp(&t, false, "10.0.0.1", "192.168.7.9", 1235, 80, 0);
	assert_true(nftdp_ct_pkt_tuple(&t.pkt, &a));
	h[2] = nftdp_ct_tuple_rss(&a);
	assert_int_not_equal(h[0], h[2]);
	assert_int_not_equal(h[0], h[1]);
	assert_int_equal(nftdp_ct_tuple_owner(&a, 4), h[2] % 4);
	/* an ICMP error steers like the flow it quotes */
	{
		struct tpkt q, e;
		uint32_t r1, r2;

		udp(&q, false, "10.0.0.1", "192.168.7.9", 1234, 80, 0);
		assert_true(nftdp_ct_pkt_rss(&q.pkt, &r1));
		assert_int_equal(r1, h[0]);
		icmp(&e, false, "172.16.0.1", "10.0.0.1", 3, 3, 0, q.buf, q.len);
		assert_true(nftdp_ct_pkt_rss(&e.pkt, &r2));
		assert_int_equal(r2, h[0]);
		udp(&q, true, "2001:db8:ffff::77", "2001:db8::1", 80, 1234, 0);
		icmp(&e, true, "2001:db8:9::1", "2001:db8::1", 1, 4, 0, q.buf, q.len);
		assert_true(nftdp_ct_pkt_rss(&e.pkt, &r2));
		assert_int_equal(r2, h[1]);
		q.pkt.fragoff = 8;
		assert_false(nftdp_ct_pkt_rss(&q.pkt, &r2));
	}
	/* hand-computed Toeplitz of one set bit: the input's top bit
	 * selects the key's first 32 bits (0x6d5a6d5a) */
	memset(&a, 0, sizeof(a));
	a.l3proto = NFPROTO_IPV4;
	a.l4proto = IPPROTO_ICMP;
	a.src.ip = htonl(0x80000000u);
	assert_int_equal(nftdp_ct_tuple_rss(&a), 0x6d5a6d5au);
}

static void test_create_errors(void **state)
{
	struct nftdp_ct_config cfg = {0};
	struct nftdp_ct_shard *s;

	(void)state;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &s), -EINVAL);
	assert_int_equal(nftdp_ct_shard_create(NULL, &s), -EINVAL);
	cfg.max_entries = 1u << 29;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &s), -EINVAL);
	assert_true(nftdp_ct_entry_size() % 64 == 0);
}

/*
 * The table hash (NH with a key from the seed): tuples that differ in one
 * field only (the usual flood: one source, counting ports or addresses)
 * spread over the buckets like random ones, and the key is the seed's:
 * another seed puts the same tuples elsewhere.
 */
static void test_table_hash(void **state)
{
	struct env *a = env_new(1 << 16, false), *b;
	struct nftdp_ct_config cfg = {.max_entries = 1 << 16, .hash_seed = 0x4321};
	static uint16_t load[1 << 17];
	unsigned int worst = 0, same = 0;
	const uint32_t n = 1 << 16;

	(void)state;
	b = calloc(1, sizeof(*b));
	assert_non_null(b);
	assert_int_equal(nftdp_ct_shard_create(&cfg, &b->s), 0);
	for (int field = 0; field < 3; field++) {
		memset(load, 0, sizeof(load));
		worst = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct nftdp_ct_tuple t = {.l3proto = NFPROTO_IPV4, .l4proto = IPPROTO_TCP};
			uint32_t h;

			t.src.ip = htonl(0x0a000001);
			t.dst.ip = htonl(0xc0000201);
			t.sport = htons(40000);
			t.dport = htons(80);
			if (field == 0)
				t.src.ip = htonl(0x0a000000 + i);
			else if (field == 1)
				t.sport = htons((uint16_t)i);
			else
				t.dst.ip = htonl(0xc0000000 + i * 256);
			h = nftdp_ct_tuple_hash(a->s, &t) & a->s->bucket_mask;
			if (++load[h] > worst)
				worst = load[h];
			same += h == (nftdp_ct_tuple_hash(b->s, &t) & b->s->bucket_mask);
		}
		/* 64k keys in 128k buckets: a random hash's fullest bucket
		 * holds about 7-8; a weak one gives dozens or hundreds */
		assert_true(worst <= 12);
	}
	/* another key: about one tuple in 128k buckets lands alike */
	assert_true(same < 3 * n / 1000);
	/* the hash written out is the NH sum and finaliser it always was
	 * (tuples of every field, IPv6 and zones included) */
	for (uint32_t i = 0; i < 4096; i++) {
		struct nftdp_ct_tuple t;
		uint32_t w[10], x = i * 2654435761u + 1;
		uint64_t h = 0;

		for (unsigned int j = 0; j < 10; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			w[j] = x;
		}
		memcpy(&t, w, sizeof(t));
		for (unsigned int j = 0; j < 10; j += 2)
			h += (uint64_t)(uint32_t)(w[j] + a->s->hkey[j]) *
			     (uint32_t)(w[j + 1] + a->s->hkey[j + 1]);
		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
		h *= 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 33;
		assert_int_equal(nftdp_ct_tuple_hash(a->s, &t), (uint32_t)h);
	}
	nftdp_ct_shard_destroy(b->s);
	free(b);
	env_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_errors),
	    cmocka_unit_test(test_attach),
	    cmocka_unit_test(test_burst_order),
	    cmocka_unit_test(test_probe_hint),
	    cmocka_unit_test(test_probe_miss),
	    cmocka_unit_test(test_prefetch_burst),
	    cmocka_unit_test(test_in_hinted),
	    cmocka_unit_test(test_in_probed),
	    cmocka_unit_test(test_probe_tuple),
	    cmocka_unit_test(test_timeout_gc),
	    cmocka_unit_test(test_configured_timeouts),
	    cmocka_unit_test(test_table_full),
	    cmocka_unit_test(test_gc_pressure),
	    cmocka_unit_test(test_confirm_drop),
	    cmocka_unit_test(test_walk_get_delete_flush),
	    cmocka_unit_test(test_events),
	    cmocka_unit_test(test_rss_symmetric),
	    cmocka_unit_test(test_table_hash),
	    cmocka_unit_test(test_confirm_established),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
