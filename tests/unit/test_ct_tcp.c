// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL):
 * the TCP state machine: the transition table (an independent
 * transcription of the kernel's tcp_conntracks, checked entry by entry
 * through the packet path), handshakes, window checks, RST, invalid
 * segments and simultaneous open.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

/*
 * The kernel's tcp_conntracks, transcribed here independently from
 * nf_conntrack_proto_tcp.c as strings: rows syn, synack, fin, ack, rst,
 * none; columns sNO sSS sSR sES sFW sCW sLA sTW sCL sS2.
 */
static const char *const kernel_table[2][6] = {
    {
	"SS SS IG IG IG IG IG SS SS S2",
	"IV IV SR IV IV IV IV IV IV SR",
	"IV IV FW FW LA LA LA TW CL IV",
	"ES IV ES ES CW CW TW TW CL IV",
	"IV CL CL CL CL CL CL CL CL CL",
	"IV IV IV IV IV IV IV IV IV IV",
    },
    {
	"IV S2 IV IV IV IV IV SS IV S2",
	"IV SR IG IG IG IG IG IG IG SR",
	"IV IV FW FW LA LA LA TW CL IV",
	"IV IG SR ES CW CW TW TW CL IG",
	"IV CL CL CL CL CL CL CL CL CL",
	"IV IV IV IV IV IV IV IV IV IV",
    },
};

static bool after32(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

static int state_code(const char *s)
{
	static const char *const names[] = {"NO", "SS", "SR", "ES", "FW", "CW",
					    "LA", "TW", "CL", "S2", "IV", "IG"};

	for (int i = 0; i < 12; i++)
		if (!strncmp(s, names[i], 2))
			return i;
	fail();
	return -1;
}

static int kernel_next(int dir, int index, int old)
{
	return state_code(kernel_table[dir][index] + 3 * old);
}

static void test_tcp_table_transcription(void **state)
{
	(void)state;
	for (int d = 0; d < 2; d++)
		for (int i = 0; i < 6; i++)
			for (int o = 0; o < TCP_CONNTRACK_MAX; o++)
				assert_int_equal(nftdp_ct_tcp_table(d, i, o), kernel_next(d, i, o));
}

/* tcp_error's flag check for each of the 256 flag bytes, against the
 * kernel's tcp_valid_flags switch written out here */
static void test_tcp_valid_flags(void **state)
{
	uint8_t th[20] = {0};
	struct nftdp_vm_pkt pkt = {0};
	struct ct_l4pkt p = {.l4 = th, .l4len = sizeof(th), .pkt = &pkt};

	(void)state;
	th[12] = 5 << 4;
	for (unsigned int f = 0; f < 256; f++) {
		bool valid;

		switch (f & ~0xc8u) { /* PSH, ECE and CWR are always valid */
		case 0x02:	      /* SYN */
		case 0x22:	      /* SYN URG */
		case 0x12:	      /* SYN ACK */
		case 0x04:	      /* RST */
		case 0x14:	      /* RST ACK */
		case 0x11:	      /* FIN ACK */
		case 0x31:	      /* FIN ACK URG */
		case 0x10:	      /* ACK */
		case 0x30:	      /* ACK URG */
			valid = true;
			break;
		default:
			valid = false;
		}
		th[13] = (uint8_t)f;
		assert_int_equal(nftdp_ct_tcp_error(&p, false), !valid);
	}
}

/*
 * Every cell of the table through the packet path: an established flow is
 * put into the old state, a segment of the flag class is sent in the
 * direction, and the state afterwards must be the table's (liberal window
 * tracking, so only the state machine decides). sIV: invalid, state kept;
 * sIG: passes, state kept; SYN on TIME_WAIT/CLOSE after a close: a new
 * connection replaces the entry.
 */
static void test_tcp_every_transition(void **state)
{
	static const uint8_t flags[6] = {TS, TS | TA, TF | TA, TA, TR, 0};
	int cells = 0;

	(void)state;
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < 6; i++) {
			for (int o = 0; o < TCP_CONNTRACK_MAX; o++) {
				struct env *en = env_new(64, true);
				struct tflow f = {false, "10.0.0.1", "10.0.0.2", 40000,
						  80,	 1000,	     5000};
				struct nftdp_ct_entry *e = handshake(en, &f), *e2;
				int want = kernel_next(d, i, o);
				uint32_t seq = d ? f.bseq : f.aseq, ack = d ? f.aseq : f.bseq, st;
				struct tpkt t;

				e->proto.tcp.state = (uint8_t)o;
				e->proto.tcp.last_index = 5; /* TCP_NONE_SET */
				if (o >= TCP_CONNTRACK_TIME_WAIT && o != TCP_CONNTRACK_SYN_SENT2)
					e->proto.tcp.seen[0].flags |= IP_CT_TCP_FLAG_CLOSE_INIT;
				if (i == 4 &&
				    (e->proto.tcp.seen[!d].flags & IP_CT_TCP_FLAG_MAXACK_SET))
					seq = e->proto.tcp.seen[!d].td_maxack;
				seg(&t, &f, d, flags[i], seq, (flags[i] & TA) ? ack : 0, 0);
				st = xmit(en, &t, &e2);
				if (want == TCP_CONNTRACK_MAX) {
					assert_int_equal(st, ST_INVALID);
					assert_int_equal(e->proto.tcp.state, o);
				} else if (want == TCP_CONNTRACK_IGNORE) {
					assert_ptr_equal(e2, e);
					assert_int_equal(e->proto.tcp.state, o);
				} else if (want == TCP_CONNTRACK_SYN_SENT &&
					   o >= TCP_CONNTRACK_TIME_WAIT) {
					/* reopened: the old entry is gone */
					assert_int_equal(st, ST_NEW);
					assert_int_equal(e2->proto.tcp.state,
							 TCP_CONNTRACK_SYN_SENT);
					assert_int_equal(en->s->st.count, 1);
					assert_int_equal(en->s->st.deleted, 1);
				} else {
					assert_ptr_equal(e2, e);
					assert_int_equal(e->proto.tcp.state, want);
				}
				cells++;
				env_free(en);
			}
		}
	}
	assert_int_equal(cells, 2 * 6 * TCP_CONNTRACK_MAX);
}

static void test_tcp_lifecycle(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "192.0.2.1", "198.51.100.7", 33000, 443, 0xfffffff0u, 77};
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;
	unsigned int ctinfo;

	(void)state;
	assert_int_equal(tx(en, &f, 0, TS, 0, &e), ST_NEW);
	assert_int_equal(left_s(en, e), 120);
	assert_true(e->status & IPS_CONFIRMED);
	assert_false(e->status & IPS_SEEN_REPLY);
	/* SYN retransmit: still new, timeout not renewed */
	en->now += 5000;
	seg(&t, &f, 0, TS, f.aseq - 1, 0, 0);
	assert_int_equal(xmit(en, &t, &e2), ST_NEW);
	assert_int_equal(left_s(en, e), 115);
	assert_int_equal(tx(en, &f, 1, TS | TA, 0, NULL), ST_ESTABLISHED);
	assert_true(e->status & IPS_SEEN_REPLY);
	assert_false(e->status & IPS_ASSURED);
	assert_int_equal(left_s(en, e), 60);
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 0);
	assert_int_equal(xmit_v(en, &t, NF_ACCEPT, NULL, &ctinfo), ST_ESTABLISHED);
	assert_int_equal(ctinfo, IP_CT_ESTABLISHED);
	assert_true(e->status & IPS_ASSURED);
	assert_int_equal(left_s(en, e), 5 * 24 * 3600);
	/* data both ways (the sequence numbers wrap) */
	assert_int_equal(tx(en, &f, 0, TA, 100, NULL), ST_ESTABLISHED);
	assert_int_equal(left_s(en, e), 300); /* unacknowledged data */
	seg(&t, &f, 1, TA, f.bseq, f.aseq, 50);
	assert_int_equal(xmit_v(en, &t, NF_ACCEPT, NULL, &ctinfo), ST_ESTABLISHED);
	assert_int_equal(ctinfo, IP_CT_ESTABLISHED_REPLY);
	f.bseq += 50;
	assert_int_equal(tx(en, &f, 0, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(left_s(en, e), 5 * 24 * 3600);
	/* counters (the SYN retransmit returned before nf_ct_refresh_acct) */
	assert_int_equal(nftdp_ct_acct_get(e->shard, e, 0).packets, 4);
	assert_int_equal(nftdp_ct_acct_get(e->shard, e, 1).packets, 2);
	assert_int_equal(nftdp_ct_acct_get(e->shard, e, 0).bytes, 40 * 3 + 140);
	/* close: FIN, ACK, FIN, ACK */
	assert_int_equal(tx(en, &f, 0, TF | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_FIN_WAIT);
	assert_true(e->proto.tcp.seen[0].flags & IP_CT_TCP_FLAG_CLOSE_INIT);
	assert_int_equal(tx(en, &f, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_CLOSE_WAIT);
	assert_int_equal(left_s(en, e), 60);
	assert_int_equal(tx(en, &f, 1, TF | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_LAST_ACK);
	assert_int_equal(left_s(en, e), 30);
	assert_int_equal(tx(en, &f, 0, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_TIME_WAIT);
	assert_int_equal(left_s(en, e), 120);
	/* reopen from TIME_WAIT with a new SYN: a new connection */
	f.aseq += 100000;
	assert_int_equal(tx(en, &f, 0, TS, 0, &e2), ST_NEW);
	assert_int_equal(e2->proto.tcp.state, TCP_CONNTRACK_SYN_SENT);
	assert_int_equal(en->s->st.count, 1);
	env_free(en);
}

static void test_tcp_window(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.1.0.1", "10.1.0.2", 1234, 80, 1000, 90000};
	struct nftdp_ct_entry *e = handshake(en, &f);
	struct tpkt t;
	uint32_t end0;

	(void)state;
	/* I: data far beyond what the receiver allowed */
	seg(&t, &f, 0, TA, f.aseq + 10000000, f.bseq, 10);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* III: acknowledging data the server never sent */
	seg(&t, &f, 0, TA, f.aseq, f.bseq + 500000, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	/* II: an old retransmission far below the window: passes, ignored */
	end0 = e->proto.tcp.seen[0].td_end;
	seg(&t, &f, 0, TA, f.aseq - 3000000, f.bseq, 10);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.seen[0].td_end, end0);
	/* in window: fine */
	assert_int_equal(tx(en, &f, 0, TA, 1000, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.seen[0].td_end, end0 + 1000);
	env_free(en);

	/* liberal: window checks pass everything */
	en = env_new(64, true);
	f = (struct tflow){false, "10.1.0.1", "10.1.0.2", 1234, 80, 1000, 90000};
	handshake(en, &f);
	seg(&t, &f, 0, TA, f.aseq + 10000000, f.bseq, 10);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	env_free(en);
}

static void test_tcp_rst(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {true, "2001:db8::1", "2001:db8::2", 5555, 22, 10, 20};
	struct nftdp_ct_entry *e = handshake(en, &f), *e2;
	struct tpkt t;

	(void)state;
	/* RST with a sequence number below what the peer acknowledged */
	seg(&t, &f, 1, TR, f.bseq - 100, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	/* in-window RST */
	seg(&t, &f, 1, TR, f.bseq, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_CLOSE);
	assert_int_equal(left_s(en, e), 10);
	env_free(en);

	/* RST answering a SYN (no reply seen): the entry goes at once */
	en = env_new(64, false);
	f = (struct tflow){false, "10.2.0.1", "10.2.0.2", 999, 25, 100, 0};
	assert_int_equal(tx(en, &f, 0, TS, 0, &e), ST_NEW);
	seg(&t, &f, 1, TR | TA, 0, f.aseq, 0);
	assert_int_equal(xmit(en, &t, &e2), ST_ESTABLISHED);
	assert_ptr_equal(e, e2);
	assert_int_equal(en->s->st.count, 0);
	env_free(en);
}

static void test_tcp_invalid(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.3.0.1", "10.3.0.2", 2000, 80, 1, 1};
	struct tpkt t;
	uint8_t h[64];

	(void)state;
	/* unsolicited SYN/ACK, FIN, RST: invalid, no entry */
	seg(&t, &f, 0, TS | TA, 1, 1, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	seg(&t, &f, 0, TF | TA, 1, 1, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	seg(&t, &f, 0, TR, 1, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* impossible flags */
	seg(&t, &f, 0, TS | TF, 1, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	seg(&t, &f, 0, 0, 1, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(en->s->st.count, 0);
	/* truncated header: ports there, the rest not */
	tcp_hdr(h, 1, 2, 3, 4, TS, 100, 0);
	build(&t, false, "10.3.0.1", "10.3.0.2", IPPROTO_TCP, h, 12);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* data offset beyond the segment */
	tcp_hdr(h, 1, 2, 3, 4, TS, 100, 0);
	h[12] = 15 << 4;
	build(&t, false, "10.3.0.1", "10.3.0.2", IPPROTO_TCP, h, 20);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* bad checksum */
	seg(&t, &f, 0, TS, 1, 0, 0);
	t.buf[20 + 16] ^= 0xff;
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_int_equal(en->s->st.count, 0);
	/* every length and both families: the 8-byte-step sum agrees with the
	 * byte-pair reference of build(), and one changed byte is caught */
	for (uint32_t n = 8; n < 80; n++) {
		uint8_t u[80];

		for (uint32_t k = 0; k < n; k++)
			u[k] = (uint8_t)(k * 37 + n);
		u[6] = u[7] = 0;
		build(&t, n & 1, (n & 1) ? "fd00::1" : "10.9.0.1", (n & 1) ? "fd00::2" : "10.9.0.2",
		      IPPROTO_UDP, u, n);
		assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
		t.buf[(n & 1 ? 40 : 20) + n - 1] ^= 0x10;
		assert_false(nftdp_ct_l4_checksum_ok(&t.pkt));
	}
	/* long segments of 0xff bytes: the most carries a sum can have */
	for (uint32_t n = 20; n < 1500; n += 73) {
		uint8_t u[1500];

		memset(u, 0xff, n);
		u[6] = u[7] = 0;
		build(&t, n & 1, (n & 1) ? "ffff::ffff" : "255.255.255.254",
		      (n & 1) ? "ffff::fffe" : "255.255.255.255", IPPROTO_UDP, u, n);
		assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
		t.buf[(n & 1 ? 40 : 20) + n / 2] ^= 0x01;
		assert_false(nftdp_ct_l4_checksum_ok(&t.pkt));
	}
	/* pseudo-random bytes, TCP and UDP: build()'s 16-bit reference
	 * agrees; the sum does not see the order of 16-bit words; a byte one
	 * more, or a word 0x0000 made 0xffff (the same in ones' complement
	 * but for an all-zero sum), is seen as such */
	for (uint32_t n = 20, x = 1; n < 300; n += 7) {
		uint8_t u[300], *l4;
		uint8_t proto = n & 2 ? IPPROTO_TCP : IPPROTO_UDP;
		uint32_t hl = n & 1 ? 40 : 20, c = proto == IPPROTO_TCP ? 16 : 6;

		for (uint32_t k = 0; k < n; k++) {
			x = x * 1103515245u + 12345u;
			u[k] = (uint8_t)(x >> 16);
		}
		u[0] = u[1] = 0; /* a word 0x0000 */
		build(&t, n & 1, (n & 1) ? "2001:db8::9" : "192.0.2.9",
		      (n & 1) ? "2001:db8:ffff::1" : "198.51.100.200", proto, u, n);
		l4 = t.buf + hl;
		assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
		l4[0] = l4[1] = 0xff;
		assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
		l4[0] = l4[1] = 0;
		/* two words swapped */
		memcpy(u, l4 + 8, 2);
		memcpy(l4 + 8, l4 + 10, 2);
		memcpy(l4 + 10, u, 2);
		assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
		l4[n - 1 == c ? n - 2 : n - 1]++;
		assert_false(nftdp_ct_l4_checksum_ok(&t.pkt));
	}
	seg(&t, &f, 0, TS, 1, 0, 0);
	t.buf[20 + 16] ^= 0xff;
	/* the same bytes, but the NIC verified the checksum (CHECKSUM_UNNECESSARY):
	 * nf_checksum trusts it */
	t.pkt.flags |= NFTDP_VM_PKT_F_CSUM_OK;
	assert_true(nftdp_ct_l4_checksum_ok(&t.pkt));
	t.pkt.flags &= (uint8_t)~NFTDP_VM_PKT_F_CSUM_OK;
	assert_false(nftdp_ct_l4_checksum_ok(&t.pkt));
	/* a bare ACK with no entry is picked up (loose) as new */
	seg(&t, &f, 0, TA, 500, 700, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_NEW);
	assert_int_equal(en->s->st.count, 1);
	/* a non-first fragment cannot be tracked */
	seg(&t, &f, 0, TS, 1, 0, 0);
	t.pkt.fragoff = 8;
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	env_free(en);

	/* no loose pickup; no checksum verification */
	{
		struct nftdp_ct_config cfg = {
		    .max_entries = 8, .tcp_no_loose = true, .no_checksum = true};
		struct env e2 = {.now = 5000};

		assert_int_equal(nftdp_ct_shard_create(&cfg, &e2.s), 0);
		seg(&t, &f, 0, TA, 500, 700, 0);
		assert_int_equal(xmit(&e2, &t, NULL), ST_INVALID);
		seg(&t, &f, 0, TS, 1, 0, 0);
		t.buf[20 + 16] ^= 0xff;
		assert_int_equal(xmit(&e2, &t, NULL), ST_NEW);
		nftdp_ct_shard_destroy(e2.s);
	}
}

static void test_tcp_simultaneous_open(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.4.0.1", "10.4.0.2", 7000, 7001, 100, 900};
	struct nftdp_ct_entry *e;

	(void)state;
	assert_int_equal(tx(en, &f, 0, TS, 0, &e), ST_NEW);
	assert_int_equal(tx(en, &f, 1, TS, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_SENT2);
	assert_true(e->proto.tcp.last_flags & IP_CT_TCP_SIMULTANEOUS_OPEN);
	/* the client's SYN/ACK repeats its SYN's sequence number */
	f.aseq--;
	assert_int_equal(tx(en, &f, 0, TS | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_RECV);
	/* the reply ACK completes the simultaneous open */
	assert_int_equal(tx(en, &f, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	env_free(en);
}

/* a segment with window win and, when sack is set, NOP NOP SACK [sack - 100, sack) */
/* the random tests' segment from v: seq and ack moved out of window (or
 * to its edges) in one case of 16, a window, a SACK block in one of two;
 * returns the window */
static uint16_t perturb(uint32_t v, const struct nftdp_ct_entry *e, int dir, uint32_t *seq,
			uint32_t *ack, uint32_t *sack)
{
	switch ((v >> 13) & 15) {
	case 0:
		*seq += (v >> 17) * 37u; /* anywhere */
		break;
	case 1:
		*seq -= (v >> 17) % 300000u; /* old data */
		break;
	case 2:
		*ack += (v >> 17) % 200000u; /* acks the future */
		break;
	case 3:
		*ack -= (v >> 17) % 300000u; /* old ack */
		break;
	case 4:
		*seq = e->proto.tcp.seen[dir].td_maxend + ((v >> 17) & 3) - 1;
		break;
	case 5:
		*ack = e->proto.tcp.seen[!dir].td_end + ((v >> 17) & 3) - 1;
		break;
	default:
		break;
	}
	if ((v >> 22) & 1)
		*sack = *ack + ((v >> 23) & 1 ? 100 : 100000);
	return (v >> 20) & 1 ? (uint16_t)(v >> 8) : ((v >> 21) & 1 ? 0 : 65535);
}

static void wseg(struct tpkt *t, const struct tflow *f, int dir, uint8_t flags, uint32_t seq,
		 uint32_t ack, uint16_t win, uint32_t payload, uint32_t sack)
{
	uint8_t h[1600];
	uint32_t opt = sack ? 12 : 0;

	tcp_hdr(h, dir ? f->bp : f->ap, dir ? f->ap : f->bp, seq, ack, flags, win, 0);
	memset(h + 20, 0, opt + payload);
	if (sack) {
		h[12] = 8 << 4;
		h[20] = h[21] = 1;
		h[22] = 5;
		h[23] = 10;
		put32(h + 24, sack - 100);
		put32(h + 28, sack);
	}
	build(t, f->v6, dir ? f->b : f->a, dir ? f->a : f->b, IPPROTO_TCP, h, 20 + opt + payload);
}

static void assert_tcp_same(const struct nftdp_ct_entry *a, const struct nftdp_ct_entry *b)
{
	const struct ct_tcp *x = &a->proto.tcp, *y = &b->proto.tcp;

	for (int d = 0; d < 2; d++) {
		assert_int_equal(x->seen[d].td_end, y->seen[d].td_end);
		assert_int_equal(x->seen[d].td_maxend, y->seen[d].td_maxend);
		assert_int_equal(x->seen[d].td_maxwin, y->seen[d].td_maxwin);
		assert_int_equal(x->seen[d].td_maxack, y->seen[d].td_maxack);
		assert_int_equal(x->seen[d].td_scale, y->seen[d].td_scale);
		assert_int_equal(x->seen[d].flags, y->seen[d].flags);
		assert_int_equal(nftdp_ct_acct_get(a->shard, a, d).packets,
				 nftdp_ct_acct_get(b->shard, b, d).packets);
		assert_int_equal(nftdp_ct_acct_get(a->shard, a, d).bytes,
				 nftdp_ct_acct_get(b->shard, b, d).bytes);
	}
	assert_int_equal(x->state, y->state);
	assert_int_equal(x->last_dir, y->last_dir);
	assert_int_equal(x->retrans, y->retrans);
	assert_int_equal(x->last_index, y->last_index);
	assert_int_equal(x->last_seq, y->last_seq);
	assert_int_equal(x->last_ack, y->last_ack);
	assert_int_equal(x->last_end, y->last_end);
	assert_int_equal(x->last_win, y->last_win);
	assert_int_equal(a->expires_ms, b->expires_ms);
	assert_int_equal(a->status & ~(uint32_t)IPS_SEQ_ADJUST,
			 b->status & ~(uint32_t)IPS_SEQ_ADJUST);
}

/*
 * The ESTABLISHED ACK fast path against the general code: the same random
 * ACK segments (sequence and acknowledgment numbers around and beyond
 * every window bound, windows with scaling, zero windows, SACK blocks,
 * retransmissions) go to two entries; one has IPS_SEQ_ADJUST with zero
 * offsets, which only the general code handles. State, window data,
 * verdicts, timeouts and counters must agree after every segment.
 */
static void test_tcp_fast_path_same(void **state)
{
	uint64_t r = 0x9e3779b97f4a7c15ull;
	unsigned int fast = 0, bad = 0;

	(void)state;
	for (int run = 0; run < 24; run++) {
		struct env *en[2] = {env_new(64, run & 1), env_new(64, run & 1)};
		struct tflow f = {run & 2,
				  (run & 2) ? "2001:db8::a" : "10.7.0.1",
				  (run & 2) ? "2001:db8::b" : "10.7.0.2",
				  (uint16_t)(40000 + run),
				  80,
				  0xffffff00u + (uint32_t)run * 977u,
				  0x7fffff00u};
		struct tflow f1 = f;
		struct nftdp_ct_entry *e[2] = {handshake(en[0], &f), handshake(en[1], &f1)};
		uint32_t next[2] = {f.aseq, f.bseq};

		e[1]->status |= IPS_SEQ_ADJUST;
		for (int k = 0; k < 2; k++) {
			for (int d = 0; d < 2; d++) {
				e[k]->proto.tcp.seen[d].td_scale = (uint8_t)(run % 15);
				if (run & 4)
					e[k]->proto.tcp.seen[d].flags |= IP_CT_TCP_FLAG_SACK_PERM;
			}
		}
		for (int i = 0; i < 400; i++) {
			uint32_t v, seq, ack, pay, sack = 0, st[2];
			int dir;
			uint16_t win;
			struct tpkt t;

			r = r * 6364136223846793005ull + 1442695040888963407ull;
			v = (uint32_t)(r >> 32);
			dir = v & 1;
			pay = (v >> 1) & 1 ? (v >> 2) % 1400 : 0;
			seq = next[dir];
			ack = next[!dir];
			win = perturb(v, e[0], dir, &seq, &ack, &sack);
			for (int k = 0; k < 2; k++) {
				wseg(&t, &f, dir, TA | ((v >> 24) & 1 ? 0x08 : 0), seq, ack, win,
				     pay, sack);
				en[k]->now += (v >> 25) & 7;
				st[k] = xmit(en[k], &t, NULL);
			}
			assert_int_equal(st[0], st[1]);
			assert_tcp_same(e[0], e[1]);
			if (st[0] == ST_INVALID)
				bad++;
			else if (seq == next[dir] && ack == next[!dir])
				fast++;
			if (st[0] != ST_INVALID && after32(seq + pay, next[dir]))
				next[dir] = seq + pay;
		}
		env_free(en[0]);
		env_free(en[1]);
	}
	assert_true(fast > 1000);
	assert_true(bad > 100);
}

/*
 * The in-window transitions (the handshake's last ACK, FIN and ACK up to
 * TIME_WAIT and CLOSE) against the general code, as above: random ACK and
 * FIN segments, in and out of window, from SYN_RECV or ESTABLISHED, go to
 * two entries, one of them with IPS_SEQ_ADJUST (zero offsets), which only
 * the general code handles. State, window data, verdicts, timeouts,
 * counters and cached events must agree after every segment.
 */
static void test_tcp_close_fast_same(void **state)
{
	uint64_t r = 0x2545f4914f6cdd1dull;
	unsigned int moved = 0, fins = 0, bad = 0;

	(void)state;
	for (int run = 0; run < 48; run++) {
		struct env *en[2] = {env_new(64, run & 1), env_new(64, run & 1)};
		struct tflow f[2];
		struct nftdp_ct_entry *e[2];
		uint32_t next[2];

		for (int k = 0; k < 2; k++) {
			f[k] = (struct tflow){run & 2,
					      (run & 2) ? "2001:db8::c" : "10.9.0.1",
					      (run & 2) ? "2001:db8::d" : "10.9.0.2",
					      (uint16_t)(41000 + run),
					      443,
					      0xfffff000u + (uint32_t)run * 7919u,
					      0x10000u * (uint32_t)run};
			/* SYN and SYN-ACK: the entry in SYN_RECV, then (runs
			 * with bit 3) the last ACK of the handshake */
			assert_int_equal(tx(en[k], &f[k], 0, TS, 0, &e[k]), ST_NEW);
			assert_int_equal(tx(en[k], &f[k], 1, TS | TA, 0, NULL), ST_ESTABLISHED);
			if (run & 8)
				assert_int_equal(tx(en[k], &f[k], 0, TA, 0, NULL), ST_ESTABLISHED);
		}
		e[1]->status |= IPS_SEQ_ADJUST;
		next[0] = f[0].aseq;
		next[1] = f[0].bseq;
		for (int k = 0; k < 2; k++)
			for (int d = 0; d < 2; d++)
				if (run & 4)
					e[k]->proto.tcp.seen[d].flags |= IP_CT_TCP_FLAG_SACK_PERM;
		for (int i = 0; i < 60; i++) {
			uint32_t v, seq, ack, pay, sack = 0, st[2];
			uint8_t flags, old = e[0]->proto.tcp.state;
			int dir;
			uint16_t win;
			struct tpkt t;

			r = r * 6364136223846793005ull + 1442695040888963407ull;
			v = (uint32_t)(r >> 32);
			dir = v & 1;
			pay = (v >> 1) & 1 ? (v >> 2) % 600 : 0;
			flags = TA | ((v >> 11) % 5 == 0 ? TF : 0) | ((v >> 24) & 1 ? 0x08 : 0);
			seq = next[dir];
			ack = next[!dir];
			win = perturb(v, e[0], dir, &seq, &ack, &sack);
			for (int k = 0; k < 2; k++) {
				wseg(&t, &f[0], dir, flags, seq, ack, win, pay, sack);
				en[k]->now += (v >> 25) & 7;
				st[k] = xmit(en[k], &t, NULL);
			}
			assert_int_equal(st[0], st[1]);
			assert_tcp_same(e[0], e[1]);
			assert_int_equal(e[0]->proto.tcp.last_flags, e[1]->proto.tcp.last_flags);
			assert_int_equal(e[0]->ev_pending, e[1]->ev_pending);
			if (st[0] == ST_INVALID)
				bad++;
			if (e[0]->proto.tcp.state != old)
				moved++;
			if (st[0] != ST_INVALID && (flags & TF))
				fins++;
			if (st[0] != ST_INVALID && after32(seq + pay + !!(flags & TF), next[dir]))
				next[dir] = seq + pay + !!(flags & TF);
		}
		env_free(en[0]);
		env_free(en[1]);
	}
	/* the transitions were taken, not only refused */
	assert_true(moved > 100);
	assert_true(fins > 100);
	assert_true(bad > 50);
}

/* the fast path's edges, each as the general code has it */
static void test_tcp_fast_path_edges(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.8.0.1", "10.8.0.2", 3333, 80, 5000, 9000};
	struct nftdp_ct_entry *e = handshake(en, &f);
	struct ct_tcp_state *c = &e->proto.tcp.seen[0], *sv = &e->proto.tcp.seen[1];
	struct ct_tcp before_ = e->proto.tcp;
	struct tpkt t;

	(void)state;
	/* past the receiver's window (I) by more than its largest window:
	 * invalid, nothing changes */
	seg(&t, &f, 0, TA, c->td_maxend + sv->td_maxwin, f.bseq, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	assert_memory_equal(&e->proto.tcp, &before_, sizeof(before_));
	/* an ACK one past what the server sent (III): invalid */
	seg(&t, &f, 0, TA, f.aseq, sv->td_end + 1, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_INVALID);
	/* retransmissions of the same segment: counted, and past
	 * tcp_max_retrans (3) the timeout drops to RETRANS (300 s) */
	for (int i = 0; i < 4; i++) {
		seg(&t, &f, 0, TA, f.aseq, f.bseq, 10);
		assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
		assert_int_equal(e->proto.tcp.retrans, i);
	}
	assert_int_equal(left_s(en, e), 300);
	/* a new segment: the count starts again */
	f.aseq += 10;
	assert_int_equal(tx(en, &f, 1, TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.retrans, 0);
	assert_int_equal(left_s(en, e), 5 * 24 * 3600);
	/* window scaling: the server's window of 1000 << 7 moves the
	 * client's upper bound */
	sv->td_scale = 7;
	wseg(&t, &f, 1, TA, f.bseq, f.aseq, 1000, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(c->td_maxend, f.aseq + (1000u << 7));
	/* FIN and RST in ESTABLISHED take the general way */
	assert_int_equal(tx(en, &f, 0, TF | TA, 0, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_FIN_WAIT);
	seg(&t, &f, 1, TR, f.bseq, 0, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_CLOSE);
	env_free(en);

	/* just past the window (I), by less than the receiver's window: a
	 * peer sending more than it was allowed; accepted, not checked
	 * further, its end noted as unacknowledged */
	en = env_new(64, false);
	f = (struct tflow){false, "10.8.0.1", "10.8.0.2", 3334, 80, 5000, 9000};
	e = handshake(en, &f);
	c = &e->proto.tcp.seen[0];
	sv = &e->proto.tcp.seen[1];
	before_ = e->proto.tcp;
	seg(&t, &f, 0, TA, c->td_maxend + 1, f.bseq, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(c->td_end, before_.seen[0].td_maxend + 1);
	assert_int_equal(e->proto.tcp.last_seq, before_.last_seq); /* not in window */
	/* at the bound: in window (the fast path) */
	seg(&t, &f, 0, TA, c->td_maxend, f.bseq, 0);
	assert_int_equal(xmit(en, &t, NULL), ST_ESTABLISHED);
	assert_int_equal(e->proto.tcp.last_seq, before_.seen[0].td_maxend);
	assert_true(c->flags & IP_CT_TCP_FLAG_DATA_UNACKNOWLEDGED);
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tcp_table_transcription),
	    cmocka_unit_test(test_tcp_valid_flags),
	    cmocka_unit_test(test_tcp_every_transition),
	    cmocka_unit_test(test_tcp_lifecycle),
	    cmocka_unit_test(test_tcp_window),
	    cmocka_unit_test(test_tcp_rst),
	    cmocka_unit_test(test_tcp_invalid),
	    cmocka_unit_test(test_tcp_simultaneous_open),
	    cmocka_unit_test(test_tcp_fast_path_same),
	    cmocka_unit_test(test_tcp_fast_path_edges),
	    cmocka_unit_test(test_tcp_close_fast_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
