// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL):
 * NAT on the packet path: SNAT, DNAT with ports, masquerade,
 * ICMP errors quoting a NATed flow (IPv4 and IPv6), the shard that owns a
 * NATed connection, SCTP's CRC32c after a port change, and zone clashes
 * resolved by the null binding; the established pass's bindings alone
 * (nftdp_ct_nat_bound, nftdp_ct_nat_apply), which NAT's step then skips.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

static void test_nat_snat_tcp(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 0);
	struct tflow f = {false, "10.0.0.1", "198.51.100.7", 40000, 80, 100, 7000};
	struct tflow g = {false, "10.0.0.2", "198.51.100.7", 40000, 80, 100, 7000};
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;

	(void)state;
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, &sn, &e), ST_NEW);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_equal(port_at(t.buf + 20), 40000); /* the port is free: kept */
	assert_csums(&t);
	assert_true(e->status & IPS_SRC_NAT);
	assert_true(e->status & IPS_SRC_NAT_DONE);
	assert_true(e->status & IPS_DST_NAT_DONE); /* null binding at prerouting */
	assert_false(e->status & IPS_DST_NAT);
	f.aseq++;
	/* the reply is addressed to the NAT address and goes back to the client */
	{
		struct tflow r = {false, "203.0.113.5", "198.51.100.7", 40000, 80, f.aseq, f.bseq};

		seg(&t, &r, 1, TS | TA, f.bseq, f.aseq, 0);
		assert_int_equal(nat_path(en, &t, NULL, &sn, &e2), ST_ESTABLISHED);
		assert_ptr_equal(e, e2);
		assert_ip4(t.buf + 16, "10.0.0.1");
		assert_int_equal(port_at(t.buf + 22), 40000);
		assert_csums(&t);
		f.bseq++;
	}
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_SYN_RECV);
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 10);
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_ESTABLISHED);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_csums(&t);
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	/* a second client with the same port: the source port must move */
	seg(&t, &g, 0, TS, g.aseq, 0, 0);
	assert_int_equal(nat_path(en, &t, NULL, &sn, &e2), ST_NEW);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_not_equal(port_at(t.buf + 20), 40000);
	assert_true(port_at(t.buf + 20) >= 1024);
	assert_int_equal(ntohs(e2->tuple[1].dport), port_at(t.buf + 20));
	assert_csums(&t);
	env_free(en);
}

/* the established pass's NAT: the binding alone, once, as nf_nat_packet */
static void test_nat_bound_apply(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 0);
	struct nftdp_ct_nat_range dn = nat_to("192.0.2.20", 8080);
	struct tflow f = {false, "10.0.0.1", "198.51.100.7", 40000, 80, 100, 7000};
	struct tflow r = {false, "203.0.113.5", "192.0.2.20", 40000, 8080, 0, 0};
	uint8_t before[128], manips = 0;
	struct tpkt t;

	(void)state;
	seg(&t, &f, 0, TS, f.aseq, 0, 0);
	assert_int_equal(nat_path(en, &t, &dn, &sn, NULL), ST_NEW);
	f.aseq++;
	seg(&t, &r, 1, TS | TA, f.bseq, f.aseq, 0);
	assert_int_equal(nat_path(en, &t, &dn, &sn, NULL), ST_ESTABLISHED);
	f.bseq++;
	/* the client's ACK: both bindings apply, nothing else */
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 10);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_true(nftdp_ct_nat_bound(&t.pkt, &manips));
	assert_int_equal(manips, 1u << NFTDP_CT_MANIP_DST | 1u << NFTDP_CT_MANIP_SRC);
	assert_true(nftdp_ct_nat_apply(&t.pkt, NFTDP_CT_MANIP_DST));
	assert_ip4(t.buf + 16, "192.0.2.20");
	assert_int_equal(port_at(t.buf + 22), 8080);
	/* the pipeline's step after it leaves the packet alone (a marker in
	 * the destination it would overwrite, then the packet back) */
	memcpy(before, t.buf, sizeof(before));
	t.buf[19] ^= 0xff;
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(t.buf[19], before[19] ^ 0xff);
	memcpy(t.buf, before, sizeof(before));
	assert_true(nftdp_ct_nat_apply(&t.pkt, NFTDP_CT_MANIP_SRC));
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_equal(port_at(t.buf + 20), 40000);
	assert_csums(&t);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	/* the server's reply: un-DNAT and un-SNAT */
	seg(&t, &r, 1, TA, f.bseq, f.aseq + 10, 10);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_true(nftdp_ct_nat_bound(&t.pkt, &manips));
	assert_int_equal(manips, 1u << NFTDP_CT_MANIP_DST | 1u << NFTDP_CT_MANIP_SRC);
	assert_true(nftdp_ct_nat_apply(&t.pkt, NFTDP_CT_MANIP_DST));
	assert_true(nftdp_ct_nat_apply(&t.pkt, NFTDP_CT_MANIP_SRC));
	assert_ip4(t.buf + 12, "198.51.100.7");
	assert_int_equal(port_at(t.buf + 20), 80);
	assert_ip4(t.buf + 16, "10.0.0.1");
	assert_int_equal(port_at(t.buf + 22), 40000);
	assert_csums(&t);
	nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT);
	env_free(en);
}

static void test_nat_dnat_port(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range dn = nat_to("10.0.0.80", 8080);
	struct nftdp_ct_entry *e, *e2;
	struct tpkt t;

	(void)state;
	udp(&t, false, "192.0.2.9", "203.0.113.5", 5555, 80, 30);
	assert_int_equal(nat_path(en, &t, &dn, NULL, &e), ST_NEW);
	assert_ip4(t.buf + 16, "10.0.0.80");
	assert_int_equal(port_at(t.buf + 22), 8080);
	assert_csums(&t);
	assert_true(e->status & IPS_DST_NAT);
	/* the server's reply leaves as if from the public address */
	udp(&t, false, "10.0.0.80", "192.0.2.9", 8080, 5555, 30);
	assert_int_equal(nat_path(en, &t, &dn, NULL, &e2), ST_ESTABLISHED);
	assert_ptr_equal(e, e2);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_equal(port_at(t.buf + 20), 80);
	assert_csums(&t);
	/* IPv4 UDP without a checksum keeps none */
	udp(&t, false, "192.0.2.10", "203.0.113.5", 5555, 80, 30);
	t.buf[26] = t.buf[27] = 0;
	assert_int_equal(nat_path(en, &t, &dn, NULL, NULL), ST_NEW);
	assert_int_equal(t.buf[26] | t.buf[27], 0);
	assert_ip4(t.buf + 16, "10.0.0.80");
	env_free(en);
}

static void test_nat_masquerade_icmp(void **state)
{
	struct nftdp_ct_config cfg = {.max_entries = 16, .ifaddr = test_ifaddr};
	struct nftdp_ct_nat_range none = {0};
	struct env en = {.now = 5000};
	struct tpkt t;

	(void)state;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	icmp(&t, false, "10.0.0.1", "198.51.100.1", 8, 0, 0x99, NULL, 0);
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	t.pkt.oif = 2;
	assert_true(nftdp_ct_nat_need_chains(&t.pkt, NF_INET_POST_ROUTING));
	assert_int_equal(nftdp_ct_nat_masquerade(en.s, &t.pkt, &none), NF_ACCEPT);
	assert_false(nftdp_ct_nat_need_chains(&t.pkt, NF_INET_POST_ROUTING));
	assert_int_equal(nftdp_ct_nat_packet(en.s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	nftdp_ct_confirm(en.s, &t.pkt, NF_ACCEPT);
	assert_ip4(t.buf + 12, "192.0.2.254");
	assert_csums(&t);
	/* the echo reply comes back to the client */
	icmp(&t, false, "198.51.100.1", "192.0.2.254", 0, 0, 0x99, NULL, 0);
	assert_int_equal(nat_path(&en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	assert_ip4(t.buf + 16, "10.0.0.1");
	assert_int_equal(port_at(t.buf + 24), 0x99);
	assert_csums(&t);
	/* a port without an address: the new connection is dropped */
	icmp(&t, false, "10.0.0.1", "198.51.100.1", 8, 0, 0x9a, NULL, 0);
	assert_int_equal(nftdp_ct_in(en.s, &t.pkt, en.now), NF_ACCEPT);
	t.pkt.oif = 3;
	assert_int_equal(nftdp_ct_nat_masquerade(en.s, &t.pkt, &none), NF_DROP);
	nftdp_ct_confirm(en.s, &t.pkt, NF_DROP);
	nftdp_ct_shard_destroy(en.s);
}

/* an ICMP error about a source-NATed flow: the quoted packet is translated */
static void nat_icmp_error_case(bool v6)
{
	const char *cli = v6 ? "fd00::1" : "10.0.0.1", *srv = v6 ? "2001:db8::53" : "198.51.100.53";
	const char *pub = v6 ? "2001:db8:ff::5" : "203.0.113.5",
		   *rtr = v6 ? "2001:db8::fe" : "198.51.100.254";
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range sn = nat_to(pub, 6000);
	uint32_t hl = v6 ? 40 : 20;
	struct nftdp_vm_pkt inner;
	struct tpkt t, q;
	uint8_t want[16];

	udp(&t, v6, cli, srv, 5000, 53, 10);
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_NEW);
	assert_int_equal(port_at(t.buf + hl), 6000);
	/* what the server side sees, quoted back to the public address */
	udp(&q, v6, pub, srv, 6000, 53, 10);
	icmp(&t, v6, rtr, pub, v6 ? 1 : 3, v6 ? 4 : 3, 0, q.buf, q.len);
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_RELATED);
	assert_csums(&t);
	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, cli, want), 1);
	/* outer destination and quoted source are the client now */
	assert_memory_equal(t.buf + (v6 ? 24 : 16), want, v6 ? 16 : 4);
	assert_memory_equal(t.buf + hl + 8 + (v6 ? 8 : 12), want, v6 ? 16 : 4);
	if (!v6)
		assert_int_equal(fold(sum16(t.buf + hl + 8, 20, 0)), 0);
	assert_int_equal(port_at(t.buf + 2 * hl + 8), 5000);
	/* the quoted UDP checksum follows its new source */
	nftdp_vm_pkt_init(&inner, t.buf + hl + 8, q.len, -1, 0);
	nftdp_vm_pkt_parse_ip(&inner);
	assert_true(nftdp_ct_l4_checksum_ok(&inner));
	env_free(en);
}

static void test_nat_icmp_error_ipv4(void **state)
{
	(void)state;
	nat_icmp_error_case(false);
}

static void test_nat_icmp_error_ipv6(void **state)
{
	(void)state;
	nat_icmp_error_case(true);
}

static void test_nat_shard_owner(void **state)
{
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 0);
	struct nftdp_ct_tuple tu;
	struct tpkt t;

	(void)state;
	for (uint16_t sp = 2000; sp < 2016; sp++) {
		struct nftdp_ct_config cfg = {.max_entries = 16, .n_shards = 4};
		struct env en = {.now = 1000};
		struct nftdp_ct_entry *e;

		udp(&t, false, "10.0.0.1", "198.51.100.7", sp, 53, 0);
		assert_true(nftdp_ct_pkt_tuple(&t.pkt, &tu));
		cfg.shard_id = (uint16_t)nftdp_ct_tuple_owner(&tu, 4);
		assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
		assert_int_equal(nat_path(&en, &t, NULL, &sn, &e), ST_NEW);
		/* the reply to the translated tuple hashes to this shard */
		assert_int_equal(nftdp_ct_tuple_owner(&e->tuple[1], 4), cfg.shard_id);
		assert_csums(&t);
		nftdp_ct_shard_destroy(en.s);
	}
}

/* the CRC32c of an SCTP packet with its checksum field read as zero */
static uint32_t test_crc32c_zeroed(const uint8_t *l4, uint32_t n)
{
	uint8_t tmp[512];

	assert_true(n <= sizeof(tmp));
	memcpy(tmp, l4, n);
	memset(tmp + 8, 0, 4);
	return test_crc32c(tmp, n);
}

/* SCTP through source NAT to a fixed port: the port changes and the CRC32c
 * is computed again, over the datagram and not the link padding after it */
static void test_nat_sctp_crc(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range sn = nat_to("203.0.113.5", 7777);
	struct tpkt t;
	uint8_t c[32], *th;
	uint32_t n, crc, want;

	(void)state;
	n = init_chunk(c, 1, 0x01020304);
	sctp_pkt(&t, false, 0, 5000, 0, c, n);
	th = t.buf + 20;
	memset(t.buf + t.len, 0xee, 6); /* link padding, not part of the datagram */
	t.pkt.len = t.len + 6;
	assert_int_equal(nat_path(en, &t, NULL, &sn, NULL), ST_NEW);
	assert_int_equal(port_at(th), 7777);
	assert_ip4(t.buf + 12, "203.0.113.5");
	crc = test_crc32c_zeroed(th, 12 + n);
	want = (uint32_t)th[8] | (uint32_t)th[9] << 8 | (uint32_t)th[10] << 16 |
	       (uint32_t)th[11] << 24;
	assert_int_equal(crc, want);
	env_free(en);
}

/* With zones in use confirm looks for clashes; a NATed connection's reply
 * tuple that a direct connection would take is resolved by the null
 * binding before confirm, so nothing is dropped. */
static void test_zone_clash_after_nat(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range dn = nat_to("10.0.0.80", 8080);
	struct nftdp_ct_entry *e1, *e2;
	struct tpkt t;

	(void)state;
	udp(&t, false, "192.0.2.9", "203.0.113.5", 5555, 80, 0);
	t.pkt.ct_zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH; /* zone 0, but a zone was set */
	assert_int_equal(nat_path(en, &t, &dn, NULL, &e1), ST_NEW);
	assert_true(en->s->zones_seen);
	/* the client straight to the server: its reply tuple is e1's */
	udp(&t, false, "192.0.2.9", "10.0.0.80", 5555, 8080, 0);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &e2), ST_NEW);
	assert_ptr_not_equal(e1, e2);
	assert_int_equal(en->s->st.insert_failed, 0);
	assert_int_equal(en->s->st.count, 2);
	assert_true(e2->status & IPS_CONFIRMED);
	assert_int_not_equal(e2->tuple[1].dport, htons(5555)); /* the null binding moved it */
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nat_bound_apply),	cmocka_unit_test(test_nat_snat_tcp),
	    cmocka_unit_test(test_nat_dnat_port),	cmocka_unit_test(test_nat_masquerade_icmp),
	    cmocka_unit_test(test_nat_icmp_error_ipv4), cmocka_unit_test(test_nat_icmp_error_ipv6),
	    cmocka_unit_test(test_nat_shard_owner),	cmocka_unit_test(test_zone_clash_after_nat),
	    cmocka_unit_test(test_nat_sctp_crc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
