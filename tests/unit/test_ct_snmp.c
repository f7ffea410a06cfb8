// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): SNMP on a NATed connection (helper_snmp.c,
 * nf_nat_snmp_basic). The BER walk over exactly-sized buffers (ASan sees
 * any over-read): SNMPv1 and v2c gets, responses and traps with every
 * IpAddress equal to the originator's translated, the UDP checksum kept
 * right at even and odd offsets and left 0 when it was 0; SNMPv1's
 * Trap-PDU, v3, truncated messages, lengths past their container, long
 * tags and lengths, the kernel's corner cases (differential 289); every
 * strict prefix of a valid message fails; mutated messages end without
 * reading past their end. Then the helpers in the conntrack path: a
 * snat'd agent's traps (snmp_trap), a snat'd manager's get and the
 * agent's response (snmp), no NAT, a bad UDP length.
 * Shared packet and shard fixtures: tests/lib/ct_fixture.h.
 */
#include "ct_fixture.h"

static const struct nftdp_vm_ct_helper trap_h = {NFTDP_VM_CT_HELPER_SNMP_TRAP, IPPROTO_UDP, true,
						 false};
static const struct nftdp_vm_ct_helper snmp_h = {NFTDP_VM_CT_HELPER_SNMP, IPPROTO_UDP, true, false};

/* SNMPv2c trap from 10.1.0.2 (scapy): three IpAddress varbinds, 10.1.0.2,
 * 10.9.9.9, 10.1.0.2; the message length in long form */
static const char V2[] =
    "30818202010104067075626c6963a775020107020100020100306a300e06082b060102010103004302"
    "10923019060a2b060106030101040100060b2b06010401bf08020300013013060b2b06010401bf0802"
    "03020040040a0100023013060b2b06010401bf080203020140040a0909093013060b2b06010401bf08"
    "0203020240040a010002";
/* the same with community "publi": the address at the other parity */
static const char V2_ODD[] =
    "305702010104057075626c69a74b0201070201000201003040300e06082b060102010103004302109230"
    "19060a2b060106030101040100060b2b06010401bf08020300013013060b2b06010401bf0802030200"
    "40040a010002";
/* SNMPv1 Trap-PDU [4], agent-addr 10.1.0.2 */
static const char V1_TRAP[] =
    "303902010004067075626c6963a42c06072b06010401bf0840040a01000202010602010143010a3012"
    "301006082b0601020101050040040a010002";
/* version 3 */
static const char V3[] = "302a02010304067075626c6963a71d0201000201000201003012301006082b060102"
			 "0101050040040a010002";
/* v2c response carrying 10.1.0.1 and 10.2.0.100 */
static const char RESP[] =
    "3041020101040770726976617465a23302010b02010002010030283012060a2b0601020104140101004004"
    "0a0100013012060a2b06010201041401010140040a020064";
/* v1 get carrying 10.1.0.1 */
static const char GET1[] = "302d020100040770726976617465a01f02010c02010002010030143012060a2b0601"
			   "020104140101004004"
			   "0a010001";

static uint8_t *unhex(const char *h, uint32_t *n)
{
	size_t len = strlen(h) / 2;
	uint8_t *b = malloc(len ? len : 1);

	assert_non_null(b);
	for (size_t i = 0; i < len; i++) {
		unsigned int v;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
		b[i] = (uint8_t)v;
	}
	*n = (uint32_t)len;
	return b;
}

static uint32_t ip4(const char *a)
{
	uint32_t v;

	assert_int_equal(inet_pton(AF_INET, a, &v), 1);
	return v;
}

/* the one's complement sum of d folded, with check added: 0xffff when
 * check is d's checksum */
static uint16_t total(const uint8_t *d, uint32_t n, const uint8_t check[2])
{
	uint32_t s = sum16(d, n, (uint32_t)check[0] << 8 | check[1]);

	return (uint16_t)~fold(s);
}

/* walk msg (hex), from 10.1.0.2 to 10.2.0.100; want: the result, out:
 * what the message must become (NULL: unchanged) */
static void walk(const char *msg, int want, const char *out)
{
	uint32_t n, m;
	uint8_t *d = unhex(msg, &n), *o = unhex(out ? out : msg, &m), check[2];
	uint16_t c = fold(sum16(d, n, 0));

	/* a checksum for the payload alone: what the walk keeps right */
	check[0] = (uint8_t)(c >> 8);
	check[1] = (uint8_t)c;
	assert_int_equal(total(d, n, check), 0xffff);
	assert_int_equal(nftdp_ct_snmp_translate(d, n, ip4("10.1.0.2"), ip4("10.2.0.100"), check),
			 want);
	if (want == 0) {
		assert_int_equal(m, n);
		assert_memory_equal(d, o, n);
		assert_int_equal(total(d, n, check), 0xffff);
	}
	free(d);
	free(o);
}

static char *swap_all(const char *msg, const char *a, const char *b)
{
	char *s = strdup(msg), *p;

	assert_non_null(s);
	assert_int_equal(strlen(a), strlen(b));
	while ((p = strstr(s, a)))
		memcpy(p, b, strlen(b));
	return s;
}

static void test_snmp_walk_translates(void **state)
{
	char *v2 = swap_all(V2, "40040a010002", "40040a020064");
	char *odd = swap_all(V2_ODD, "40040a010002", "40040a020064");
	uint32_t n;
	uint8_t *d, zero[2] = {0, 0};

	(void)state;
	walk(V2, 0, v2);
	walk(V2_ODD, 0, odd);
	/* v1 and v2c requests and responses alike; others untouched */
	{
		char *g = swap_all(GET1, "40040a010001", "40040a010002");
		char *want = swap_all(GET1, "40040a010001", "40040a020064");

		walk(g, 0, want);
		free(g);
		free(want);
	}
	walk(RESP, 0, NULL);
	/* no checksum: none made up */
	d = unhex(V2, &n);
	assert_int_equal(nftdp_ct_snmp_translate(d, n, ip4("10.1.0.2"), ip4("10.2.0.100"), zero),
			 0);
	assert_int_equal(zero[0] | zero[1], 0);
	{
		uint32_t m;
		uint8_t *o = unhex(v2, &m);

		assert_memory_equal(d, o, n);
		free(o);
	}
	free(d);
	free(v2);
	free(odd);
}

static void test_snmp_walk_refuses(void **state)
{
	(void)state;
	walk(V1_TRAP, -1, NULL); /* [4] is not among the grammar's PDUs */
	walk(V3, -1, NULL);
	walk("", -1, NULL);
	walk("30", -1, NULL);
	walk("68656c6c6f", -1, NULL);
	/* three length bytes */
	walk("30830000"
	     "0e020101040670"
	     "75626c6963a700",
	     -1, NULL);
	/* an IpAddress of five bytes */
	walk("302402010104067075626c6963a717020107020100020100300c300a06012b40050a010002ff", -1,
	     NULL);
	/* a VarBind longer than its VarBindList, inside the message */
	walk("302402010104067075626c6963a717020107020100020100300b300a06012b40040a01000200", -1,
	     NULL);
}

/* differential 289: what the kernel passes and drops */
static void test_snmp_walk_kernel_corners(void **state)
{
	static const struct {
		const char *msg;
		int rc;
	} c[] = {
	    {"302502010104067075626c6963a7180201070201000201003080300906012b40040a0100020000", 0},
	    {"302102010104067075626c6963a7140201070201000201003009308006012b82000000", 0},
	    {"302402010104067075626c6963a717020107020100020100300c30810906012b40040a010002", 0},
	    {"302502010104067075626c6963a718020107020100020100300d3082000906012b40040a010002", 0},
	    {"302302010104067075626c6963a716020107020100020100300b100906012b40040a010002", 0},
	    {"303b02010104067075626c6963a016020107020100020100300b300906012b40040a010002a2160201070"
	     "2"
	     "0100020100300b300906012b40040a010002",
	     0},
	    {"302602010104067075626c6963a719020107020100020100300e300c06012b40040a010002410105", 0},
	    {"302602010104067075626c6963a719020107020100020100300e300c06012b02010140040a010002", 0},
	    {"302302010004067075626c6963a016020107020100020100300b300906012b40040a010002", 0},
	    {"302302010104067075626c6963a716020107020100020100300b300906012b02040102030400", 0},
	    {"300b02010104067075626c6963", 0},
	    {"301802010104067075626c6963a70b0201070201000201003000", -1},
	    {"303b02010104067075626c6963a216020107020100020100300b300906012b40040a010002a0160201070"
	     "2"
	     "0100020100300b300906012b40040a010002",
	     -1},
	    {"302002010104067075626c6963a7130201070201000201003008300606012b1f0100", -1},
	    {"30240202000104067075626c6963a716020107020100020100300b300906012b40040a010002", -1},
	    {"308002010104067075626c6963a716020107020100020100300b300906012b40040a0100020000", -1},
	    {"302202010104067075626c6963a715020107020100020100300a308006012b0201010000", -1},
	    {"302302010104067075626c6963a716020107020100020100300b300906012b020401", -1},
	    {"301f02010104067075626c6963a7120201070201000201003007300506012b05", -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t n;
		uint8_t *d = unhex(c[i].msg, &n), check[2] = {0x12, 0x34};
		int rc = nftdp_ct_snmp_translate(d, n, ip4("10.1.0.2"), ip4("10.2.0.100"), check);

		if (rc != c[i].rc)
			fail_msg("case %zu: %d, want %d", i, rc, c[i].rc);
		/* the passed ones had the agent's address translated */
		if (rc == 0 && strstr(c[i].msg, "40040a010002"))
			assert_non_null(memmem(d, n, "\x40\x04\x0a\x02\x00\x64", 6));
		free(d);
	}
}

/* every strict prefix fails; every byte set to a few values keeps the walk
 * inside the buffer (ASan) and ends */
static void test_snmp_walk_truncated_and_mutated(void **state)
{
	static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x05, 0x1f, 0x30, 0x40,
				       0x7f, 0x80, 0x81, 0x82, 0x83, 0xa7, 0xff};
	const char *msgs[] = {V2, V2_ODD, V1_TRAP, RESP, GET1};

	(void)state;
	for (size_t k = 0; k < sizeof(msgs) / sizeof(msgs[0]); k++) {
		uint32_t n;
		uint8_t *full = unhex(msgs[k], &n);

		for (uint32_t len = 0; len < n; len++) {
			uint8_t *d = malloc(len ? len : 1), check[2] = {1, 2};

			assert_non_null(d);
			memcpy(d, full, len);
			assert_int_equal(nftdp_ct_snmp_translate(d, len, ip4("10.1.0.2"),
								 ip4("10.2.0.100"), check),
					 -1);
			free(d);
		}
		for (uint32_t i = 0; i < n; i++)
			for (size_t v = 0; v < sizeof(vals); v++) {
				uint8_t *d = malloc(n), check[2] = {1, 2};

				assert_non_null(d);
				memcpy(d, full, n);
				d[i] = vals[v];
				(void)nftdp_ct_snmp_translate(d, n, ip4("10.1.0.2"),
							      ip4("10.2.0.100"), check);
				free(d);
			}
		free(full);
	}
}

/* a UDP datagram sp -> dp carrying msg (hex) */
static void udp_msg(struct tpkt *t, const char *s, const char *d, uint16_t sp, uint16_t dp,
		    const char *msg)
{
	uint8_t h[600] = {(uint8_t)(sp >> 8), (uint8_t)sp, (uint8_t)(dp >> 8), (uint8_t)dp};
	uint32_t n;
	uint8_t *b = unhex(msg, &n);

	assert_true(n + 8 <= sizeof(h));
	h[4] = (uint8_t)((n + 8) >> 8);
	h[5] = (uint8_t)(n + 8);
	memcpy(h + 8, b, n);
	free(b);
	build(t, false, s, d, IPPROTO_UDP, h, n + 8);
}

/* conntrack, the helper on a new connection, snat, confirm: the verdict */
static unsigned int pass(struct env *en, struct tpkt *t, const struct nftdp_vm_ct_helper *h,
			 const struct nftdp_ct_nat_range *snat)
{
	assert_int_equal(nftdp_ct_in(en->s, &t->pkt, en->now), NF_ACCEPT);
	assert_non_null(t->pkt.ct);
	if (h && nftdp_ct_nat_need_chains(&t->pkt, NF_INET_POST_ROUTING))
		nftdp_ct_vm_ops.helper(t->pkt.ct, h);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	if (snat && nftdp_ct_nat_need_chains(&t->pkt, NF_INET_POST_ROUTING))
		assert_int_equal(nftdp_ct_nat_setup(en->s, &t->pkt, snat, NFTDP_CT_MANIP_SRC),
				 NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t->pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	return nftdp_ct_confirm(en->s, &t->pkt, NF_ACCEPT);
}

static void test_snmp_trap_helper(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to("10.2.0.100", 0);
	char *want = swap_all(V2, "40040a010002", "40040a020064");
	uint32_t n;
	uint8_t *w = unhex(want, &n);
	struct tpkt t;

	(void)state;
	/* a snat'd agent's v2c trap: both of its addresses translated */
	udp_msg(&t, "10.1.0.2", "10.2.0.1", 1162, 162, V2);
	assert_int_equal(pass(en, &t, &trap_h, &snat), NF_ACCEPT);
	assert_ip4(t.buf + 12, "10.2.0.100");
	assert_memory_equal(t.buf + 28, w, n);
	assert_csums(&t);
	/* its v1 trap, v3 and garbage: dropped */
	udp_msg(&t, "10.1.0.2", "10.2.0.1", 1162, 162, V1_TRAP);
	assert_int_equal(pass(en, &t, NULL, NULL), NF_DROP);
	udp_msg(&t, "10.1.0.2", "10.2.0.1", 1162, 162, V3);
	assert_int_equal(pass(en, &t, NULL, NULL), NF_DROP);
	/* a UDP length short of the datagram's: dropped */
	udp_msg(&t, "10.1.0.2", "10.2.0.1", 1162, 162, V2);
	t.buf[25]--;
	t.buf[26] = t.buf[27] = 0;
	assert_int_equal(pass(en, &t, NULL, NULL), NF_DROP);
	/* an agent without NAT: its v1 trap passes as it is */
	udp_msg(&t, "10.1.0.3", "10.2.0.1", 1162, 162, V1_TRAP);
	assert_int_equal(pass(en, &t, &trap_h, NULL), NF_ACCEPT);
	{
		uint32_t m;
		uint8_t *v1 = unhex(V1_TRAP, &m);

		assert_memory_equal(t.buf + 28, v1, m);
		free(v1);
	}
	free(w);
	free(want);
	env_free(en);
}

/* an ICMP error related in the original direction: its header read as
 * UDP, the length field (the error's unused bytes) not the datagram's:
 * dropped; one in the reply direction is not helped: passes */
static void test_snmp_trap_icmp(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to("10.2.0.100", 0);
	struct tpkt t, q;

	(void)state;
	udp_msg(&t, "10.1.0.2", "10.2.0.1", 1162, 162, V2);
	assert_int_equal(pass(en, &t, &trap_h, &snat), NF_ACCEPT);
	/* the manager's answer (from 162, reply direction) is walked */
	udp_msg(&q, "10.2.0.1", "10.2.0.100", 162, 1162, RESP);
	assert_int_equal(pass(en, &q, NULL, NULL), NF_ACCEPT);
	assert_ip4(q.buf + 16, "10.1.0.2");
	/* the agent's port unreachable about it */
	icmp(&t, false, "10.1.0.2", "10.2.0.1", 3, 3, 0, q.buf, 48);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_int_equal(nftdp_ct_vm_ops.state(t.pkt.ct), ST_RELATED);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_DROP);
	/* the manager's about the trap: related reply, passes */
	udp_msg(&q, "10.2.0.100", "10.2.0.1", 1162, 162, V2);
	icmp(&t, false, "10.2.0.1", "10.2.0.100", 3, 3, 0, q.buf, 48);
	assert_int_equal(nftdp_ct_in(en->s, &t.pkt, en->now), NF_ACCEPT);
	assert_int_equal(nftdp_ct_vm_ops.state(t.pkt.ct), ST_RELATED);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_PRE_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_nat_packet(en->s, &t.pkt, NF_INET_POST_ROUTING), NF_ACCEPT);
	assert_int_equal(nftdp_ct_confirm(en->s, &t.pkt, NF_ACCEPT), NF_ACCEPT);
	env_free(en);
}

static void test_snmp_helper(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_nat_range snat = nat_to("10.2.0.100", 0);
	char *get = swap_all(GET1, "40040a010001", "40040a010002");
	char *get_nat = swap_all(GET1, "40040a010001", "40040a020064");
	char *resp = swap_all(RESP, "40040a010001", "40040a010002");
	char *resp_nat = swap_all(RESP, "40040a010001", "40040a020064");
	uint32_t n;
	uint8_t *w;
	struct tpkt t;

	(void)state;
	/* a snat'd manager's get: its address in the request translated */
	udp_msg(&t, "10.1.0.2", "10.2.0.5", 2000, 161, get);
	assert_int_equal(pass(en, &t, &snmp_h, &snat), NF_ACCEPT);
	w = unhex(get_nat, &n);
	assert_memory_equal(t.buf + 28, w, n);
	free(w);
	assert_csums(&t);
	/* the agent's response: the same address translated the same way */
	udp_msg(&t, "10.2.0.5", "10.2.0.100", 161, 2000, resp);
	assert_int_equal(pass(en, &t, NULL, NULL), NF_ACCEPT);
	assert_ip4(t.buf + 16, "10.1.0.2");
	w = unhex(resp_nat, &n);
	assert_memory_equal(t.buf + 28, w, n);
	free(w);
	assert_csums(&t);
	/* a response that does not parse: dropped */
	udp_msg(&t, "10.2.0.5", "10.2.0.100", 161, 2000, V1_TRAP);
	assert_int_equal(pass(en, &t, NULL, NULL), NF_DROP);
	/* from port 161 in the original direction: not looked at */
	udp_msg(&t, "10.1.0.2", "10.2.0.6", 161, 161, "68656c6c6f");
	assert_int_equal(pass(en, &t, &snmp_h, &snat), NF_ACCEPT);
	free(get);
	free(get_nat);
	free(resp);
	free(resp_nat);
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_snmp_walk_translates),
	    cmocka_unit_test(test_snmp_walk_refuses),
	    cmocka_unit_test(test_snmp_walk_kernel_corners),
	    cmocka_unit_test(test_snmp_walk_truncated_and_mutated),
	    cmocka_unit_test(test_snmp_trap_helper),
	    cmocka_unit_test(test_snmp_trap_icmp),
	    cmocka_unit_test(test_snmp_helper),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
