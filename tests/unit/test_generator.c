/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the generator's EAL-free part (generator/include/nftdp_gen.h):
 * checksums (checked here by an independent RFC 1071 sum), the stamp and its
 * incremental checksum, the TCP round (with handshake, and mid-stream), flow
 * iteration over ranges, IMIX, determinism, the sink parser on truncated
 * frames, the latency histogram and the pcap writer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "nftdp_common.h"
#include "nftdp_gen.h"

/* RFC 1071 one's complement sum of big-endian words */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* every checksum of the frame verifies; returns the L4 protocol */
static int check_frame(const uint8_t *f, uint16_t len)
{
	unsigned int type = nftdp_rd16(f + 12);
	const uint8_t *l4;
	unsigned int l4len, proto;
	uint32_t s = 0;

	assert_true(len >= NFTDP_GEN_FRAME_MIN && len <= NFTDP_GEN_FRAME_MAX);
	if (type == 0x0800) {
		const uint8_t *ip = f + 14;
		unsigned int tot = nftdp_rd16(ip + 2);

		assert_int_equal(ip[0], 0x45);
		assert_int_equal(fold(sum16(ip, 20, 0)), 0xffff);
		assert_true(14 + tot <= len);
		proto = ip[9];
		l4 = ip + 20;
		l4len = tot - 20;
		if (proto != 1) {
			s = sum16(ip + 12, 8, 0);
			s += proto + l4len;
		}
	} else {
		const uint8_t *ip6 = f + 14;

		assert_int_equal(type, 0x86dd);
		assert_int_equal(ip6[0] >> 4, 6);
		proto = ip6[6];
		l4 = ip6 + 40;
		l4len = nftdp_rd16(ip6 + 4);
		assert_true(14 + 40 + l4len <= len);
		s = sum16(ip6 + 8, 32, 0);
		s += proto + l4len;
	}
	if (proto == 17)
		assert_int_not_equal(nftdp_rd16(l4 + 6), 0); /* always sent with a checksum */
	assert_int_equal(fold(sum16(l4, l4len, s)), 0xffff);
	return (int)proto;
}

static void test_checksums(void **state)
{
	static const uint8_t fams[] = {NFTDP_GEN_IPV4, NFTDP_GEN_IPV6};
	static const uint8_t protos[] = {NFTDP_GEN_TCP, NFTDP_GEN_UDP, NFTDP_GEN_ICMP};
	static const uint16_t sizes[] = {60, 64, 65, 128, 577, 1514};
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta m;
	struct nftdp_gen_cfg cfg;

	(void)state;
	for (unsigned int a = 0; a < 2; a++)
		for (unsigned int p = 0; p < 3; p++)
			for (unsigned int z = 0; z <= 6; z++) {
				nftdp_gen_cfg_init(&cfg);
				cfg.families = fams[a];
				cfg.protos = protos[p];
				cfg.flows = 7;
				cfg.data = 3;
				cfg.sport_len = 7;
				if (z == 6)
					cfg.imix = true;
				else
					cfg.size = sizes[z];
				assert_int_equal(nftdp_gen_cfg_check(&cfg, NULL), 0);
				for (uint64_t j = 0; j < 200; j++) {
					uint16_t len =
					    nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);
					int want = protos[p] == NFTDP_GEN_TCP	? 6
						   : protos[p] == NFTDP_GEN_UDP ? 17
						   : a == 0			? 1
										: 58;

					assert_int_equal(len, m.len);
					assert_int_equal(check_frame(buf, len), want);
					if (!cfg.imix && m.stamp_off != 0)
						assert_int_equal(len, cfg.size);
				}
			}
}

static void test_stamp(void **state)
{
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta m;
	struct nftdp_gen_cfg cfg;
	struct nftdp_gen_rx rx;
	unsigned int stamped = 0;

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	cfg.families = NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6;
	cfg.protos = NFTDP_GEN_TCP | NFTDP_GEN_UDP | NFTDP_GEN_ICMP;
	cfg.flows = 60;
	cfg.size = 128;
	for (uint64_t j = 0; j < 600; j++) {
		uint16_t len = nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);

		assert_true(nftdp_gen_parse(buf, len, &rx));
		assert_int_equal(rx.stamped, m.stamp_off != 0);
		if (m.stamp_off == 0)
			continue;
		stamped++;
		assert_int_equal(rx.seq, j);
		assert_int_equal(rx.tsc, 0);
		/* twice, so the second fix starts from a stamped frame */
		nftdp_gen_stamp(buf, &m, j * 977 + 12345, 0x0123456789abcdefull + j);
		check_frame(buf, len);
		nftdp_gen_stamp(buf, &m, ~j, UINT64_MAX - j);
		check_frame(buf, len);
		assert_true(nftdp_gen_parse(buf, len, &rx));
		assert_true(rx.stamped);
		assert_int_equal(rx.seq, ~j);
		assert_int_equal(rx.tsc, UINT64_MAX - j);
	}
	/* UDP and ICMP data and the TCP data segments: 1 + 1 + 1 of every 7 */
	assert_true(stamped > 200);
}

/* find a UDP stamp whose checksum comes out 0 and check it is sent as 0xffff */
static void test_stamp_udp_zero(void **state)
{
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta m;
	struct nftdp_gen_cfg cfg;
	bool hit = false;

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	cfg.size = 100;
	nftdp_gen_build(&cfg, 0, buf, sizeof(buf), &m);
	assert_true(m.udp && m.stamp_off != 0);
	for (uint64_t t = 1; t < 300000 && !hit; t++) {
		nftdp_gen_stamp(buf, &m, 0, t);
		check_frame(buf, m.len);
		hit = nftdp_rd16(buf + m.csum_off) == 0xffff;
	}
	assert_true(hit);
}

static void test_tcp_round(void **state)
{
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta m;
	struct nftdp_gen_cfg cfg;
	/* SYN, SYN-ACK, ACK, PSH-ACK x2, FIN-ACK, FIN-ACK, ACK */
	static const uint8_t flags[] = {0x02, 0x12, 0x10, 0x18, 0x18, 0x11, 0x11, 0x10};
	static const bool reply[] = {false, true, false, false, false, false, true, false};
	uint32_t seq[8], ack[8], plen[8];

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	cfg.protos = NFTDP_GEN_TCP;
	cfg.data = 2;
	cfg.imix = true;
	for (uint64_t j = 0; j < 8; j++) {
		uint16_t len = nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);
		const uint8_t *tcp = buf + 34;

		check_frame(buf, len);
		assert_int_equal(tcp[13], flags[j]);
		assert_int_equal(m.reply, reply[j]);
		assert_int_equal(nftdp_rd16(tcp + (reply[j] ? 2 : 0)), 1024);
		seq[j] = (uint32_t)nftdp_rd16(tcp + 4) << 16 | nftdp_rd16(tcp + 6);
		ack[j] = (uint32_t)nftdp_rd16(tcp + 8) << 16 | nftdp_rd16(tcp + 10);
		plen[j] = nftdp_rd16(buf + 16) - 40;
	}
	assert_int_equal(ack[1], seq[0] + 1);
	assert_int_equal(seq[2], seq[0] + 1);
	assert_int_equal(ack[2], seq[1] + 1);
	assert_int_equal(seq[3], seq[2]);
	assert_int_equal(seq[4], seq[3] + plen[3]);
	assert_int_equal(seq[5], seq[4] + plen[4]);
	assert_int_equal(ack[6], seq[5] + 1);
	assert_int_equal(seq[7], seq[5] + 1);
	assert_int_equal(ack[7], seq[6] + 1);
	/* the next round is a new connection */
	nftdp_gen_build(&cfg, 8, buf, sizeof(buf), &m);
	assert_int_equal(buf[34 + 13], 0x02);
	assert_int_not_equal((uint32_t)nftdp_rd16(buf + 38) << 16 | nftdp_rd16(buf + 40), seq[0]);

	/* without replies: SYN, ACK, data, data, FIN-ACK */
	cfg.replies = false;
	for (uint64_t j = 0; j < 5; j++) {
		static const uint8_t f2[] = {0x02, 0x10, 0x18, 0x18, 0x11};

		nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);
		assert_int_equal(buf[34 + 13], f2[j]);
		assert_false(m.reply);
	}

	/* --syn-flood: every packet a SYN, one per flow, a new ISN each round */
	cfg.replies = true;
	cfg.syn_flood = true;
	cfg.flows = 3;
	cfg.sport_len = 3;
	for (uint64_t j = 0; j < 6; j++) {
		nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);
		check_frame(buf, m.len);
		assert_int_equal(buf[34 + 13], 0x02);
		assert_false(m.reply);
		assert_int_equal(nftdp_rd16(buf + 34), 1024 + j % 3);
		seq[j % 3] = (uint32_t)nftdp_rd16(buf + 38) << 16 | nftdp_rd16(buf + 40);
		if (j >= 3)
			assert_int_not_equal(seq[j % 3], ack[j % 3]);
		ack[j % 3] = seq[j % 3];
	}
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)nftdp_rd16(p) << 16 | nftdp_rd16(p + 2);
}

/* --mid-stream: per data step, every flow's segment, then every flow's ACK
 * of it; sequence numbers go on across rounds; no SYN, FIN or RST */
static void test_tcp_mid_stream(void **state)
{
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta m;
	struct nftdp_gen_cfg cfg;
	uint32_t cseq[3], sseq[3];
	const char *why;

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	cfg.protos = NFTDP_GEN_TCP;
	cfg.mid_stream = true;
	cfg.flows = 3;
	cfg.sport_len = 3;
	cfg.data = 3;
	cfg.imix = true;
	assert_int_equal(nftdp_gen_cfg_check(&cfg, NULL), 0);
	/* two rounds of 3 x (segment, ACK) per flow */
	for (uint64_t j = 0; j < 2 * 3 * 6; j++) {
		uint16_t len = nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);
		const uint8_t *tcp = buf + 34;
		unsigned int f = (unsigned int)(j % 3), step = (unsigned int)(j / 3) % 6;
		bool reply = step & 1;
		uint32_t seq = be32(tcp + 4), ack = be32(tcp + 8), plen = nftdp_rd16(buf + 16) - 40;

		assert_int_equal(check_frame(buf, len), 6);
		assert_int_equal(m.reply, reply);
		assert_int_equal(nftdp_rd16(tcp + (reply ? 2 : 0)), 1024 + f);
		if (reply) {
			/* a pure ACK of everything the client sent */
			assert_int_equal(tcp[13], 0x10);
			assert_int_equal(plen, 0);
			assert_int_equal(seq, sseq[f]);
			assert_int_equal(ack, cseq[f]);
			continue;
		}
		assert_int_equal(tcp[13], 0x18);
		if (j < 3) {
			sseq[f] = ack;
		} else {
			assert_int_equal(seq, cseq[f]); /* continues, also into round 2 */
			assert_int_equal(ack, sseq[f]);
		}
		cseq[f] = seq + plen;
	}

	/* without replies: the segments alone */
	cfg.replies = false;
	for (uint64_t j = 0; j < 9; j++) {
		nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);
		check_frame(buf, m.len);
		assert_int_equal(buf[34 + 13], 0x18);
		assert_false(m.reply);
	}
	/* a SYN flood has no stream to join */
	cfg.syn_flood = true;
	assert_int_equal(nftdp_gen_cfg_check(&cfg, &why), -EINVAL);
	assert_non_null(why);
}

static void test_flows(void **state)
{
	struct nftdp_gen_cfg cfg;
	struct nftdp_gen_flow f;
	static uint8_t seen[2][4][5][3][2];
	unsigned int distinct = 0, v4 = 0, udp = 0;

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	cfg.families = NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6;
	cfg.protos = NFTDP_GEN_UDP | NFTDP_GEN_TCP;
	cfg.sport_len = 2;
	cfg.dport = 80;
	cfg.dport_len = 5;
	cfg.src4_len = 3;
	cfg.src6.len = 3;
	cfg.dst4_len = 2;
	cfg.dst6.len = 2;
	cfg.flows = 2 * 2 * 2 * 5 * 3 * 2;
	for (uint32_t i = 0; i < cfg.flows; i++) {
		unsigned int fam, pr, sp, dp, s, d;

		nftdp_gen_flow(&cfg, i, &f);
		fam = f.family == NFTDP_GEN_IPV4 ? 0 : 1;
		pr = f.proto == NFTDP_GEN_UDP ? 1 : 0;
		sp = f.sport - 1024u;
		dp = f.dport - 80u;
		assert_true(sp < 2 && dp < 5);
		if (fam == 0) {
			s = f.src[3] - 1u;
			d = f.dst[3] - 1u;
			assert_int_equal(f.src[0], 10);
			assert_int_equal(f.dst[1], 1);
			v4++;
		} else {
			s = f.src[15] - 1u;
			d = f.dst[15] - 1u;
			assert_int_equal(f.src[0], 0x20);
		}
		udp += pr;
		assert_true(s < 3 && d < 2);
		assert_int_equal(f.steps, pr ? 1 : 7);
		if (!seen[fam][pr + 2 * sp][dp][s][d]++)
			distinct++;
	}
	assert_int_equal(distinct, cfg.flows);
	assert_int_equal(v4, cfg.flows / 2);
	assert_int_equal(udp, cfg.flows / 2);
	/* flow indices wrap */
	nftdp_gen_flow(&cfg, cfg.flows + 3, &f);
	{
		struct nftdp_gen_flow g;

		nftdp_gen_flow(&cfg, 3, &g);
		assert_memory_equal(&f, &g, sizeof(f));
	}
}

static void test_imix(void **state)
{
	unsigned int n64 = 0, n576 = 0, n1500 = 0;

	(void)state;
	for (uint64_t i = 0; i < 120000; i++) {
		uint16_t s = nftdp_gen_imix(nftdp_gen_hash(42, i));

		if (s == 64)
			n64++;
		else if (s == 576)
			n576++;
		else if (s == 1500)
			n1500++;
		else
			fail();
	}
	/* 70000 : 40000 : 10000, within 2% */
	assert_true(n64 > 68600 && n64 < 71400);
	assert_true(n576 > 39200 && n576 < 40800);
	assert_true(n1500 > 9800 && n1500 < 10200);
}

static void test_determinism(void **state)
{
	uint8_t a[NFTDP_GEN_FRAME_MAX], b[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta ma, mb;
	struct nftdp_gen_cfg cfg;
	unsigned int differ = 0;

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	cfg.protos = NFTDP_GEN_TCP | NFTDP_GEN_UDP;
	cfg.imix = true;
	cfg.flows = 10;
	for (uint64_t j = 0; j < 100; j++) {
		nftdp_gen_build(&cfg, j, a, sizeof(a), &ma);
		nftdp_gen_build(&cfg, j, b, sizeof(b), &mb);
		assert_int_equal(ma.len, mb.len);
		assert_memory_equal(a, b, ma.len);
	}
	for (uint64_t j = 0; j < 100; j++) {
		nftdp_gen_build(&cfg, j, a, sizeof(a), &ma);
		cfg.seed = 2;
		nftdp_gen_build(&cfg, j, b, sizeof(b), &mb);
		cfg.seed = 1;
		if (ma.len != mb.len || memcmp(a, b, ma.len) != 0)
			differ++;
	}
	assert_true(differ > 90);
	/* a buffer too small is refused */
	assert_int_equal(nftdp_gen_build(&cfg, 0, a, 100, &ma), 0);
}

static void test_parse_truncated(void **state)
{
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta m;
	struct nftdp_gen_cfg cfg;
	struct nftdp_gen_rx rx;

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	cfg.families = NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6;
	cfg.protos = NFTDP_GEN_TCP | NFTDP_GEN_UDP | NFTDP_GEN_ICMP;
	cfg.flows = 6;
	cfg.size = 200;
	for (uint64_t j = 0; j < 36; j++) {
		uint16_t len = nftdp_gen_build(&cfg, j, buf, sizeof(buf), &m);

		/* an exact-size heap copy: ASan catches any read past its end */
		for (uint16_t l = 0; l <= len; l++) {
			uint8_t *p = malloc(l ? l : 1);
			bool ok;

			memcpy(p, buf, l);
			ok = nftdp_gen_parse(p, l, &rx);
			if (l < len)
				assert_false(ok && rx.stamped &&
					     l < m.stamp_off + NFTDP_GEN_STAMP_SIZE);
			free(p);
		}
	}
	/* not IP */
	memset(buf, 0, 64);
	buf[12] = 0x08;
	buf[13] = 0x06;
	assert_false(nftdp_gen_parse(buf, 64, &rx));
	/* IPv4 with a total length past the frame */
	nftdp_gen_cfg_init(&cfg);
	nftdp_gen_build(&cfg, 0, buf, sizeof(buf), &m);
	buf[16] = 0x05;
	assert_false(nftdp_gen_parse(buf, m.len, &rx));
	/* under a VLAN tag */
	nftdp_gen_build(&cfg, 0, buf, sizeof(buf), &m);
	memmove(buf + 16, buf + 12, m.len - 12);
	buf[12] = 0x81;
	buf[13] = 0x00;
	buf[14] = 0;
	buf[15] = 7;
	assert_true(nftdp_gen_parse(buf, m.len + 4u, &rx));
	assert_true(rx.stamped);
	assert_int_equal(rx.dport, 5000);
	assert_int_equal(rx.l4proto, 17);
}

static void test_hist(void **state)
{
	struct nftdp_gen_hist h, g;
	uint64_t q;

	(void)state;
	nftdp_gen_hist_reset(&h);
	assert_int_equal(nftdp_gen_hist_quantile(&h, 0.5), 0);
	for (uint64_t v = 1; v <= 100000; v++)
		nftdp_gen_hist_add(&h, v);
	q = nftdp_gen_hist_quantile(&h, 0.5);
	assert_true(q > 50000 * 0.97 && q < 50000 * 1.03);
	q = nftdp_gen_hist_quantile(&h, 0.99);
	assert_true(q > 99000 * 0.97 && q < 99000 * 1.03);
	q = nftdp_gen_hist_quantile(&h, 0.999);
	assert_true(q > 99900 * 0.97 && q <= 100000);
	assert_int_equal(nftdp_gen_hist_quantile(&h, 1.0), 100000);
	assert_int_equal(h.min, 1);
	/* small values are exact */
	nftdp_gen_hist_reset(&g);
	for (int i = 0; i < 10; i++)
		nftdp_gen_hist_add(&g, 37);
	nftdp_gen_hist_add(&g, 1ull << 50); /* past the last bucket: clamped */
	assert_int_equal(nftdp_gen_hist_quantile(&g, 0.5), 37);
	assert_int_equal(nftdp_gen_hist_quantile(&g, 1.0), 1ull << 50);
	nftdp_gen_hist_merge(&h, &g);
	assert_int_equal(h.count, 100011);
	assert_int_equal(h.max, 1ull << 50);
}

static void test_pcap(void **state)
{
	char path[] = "/tmp/nftdp-test-gen-XXXXXX";
	char err[PCAP_ERRBUF_SIZE];
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta m;
	struct nftdp_gen_cfg cfg;
	struct pcap_pkthdr *hdr;
	const u_char *data;
	uint64_t n = 0;
	pcap_t *p;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	nftdp_gen_cfg_init(&cfg);
	cfg.families = NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6;
	cfg.protos = NFTDP_GEN_TCP | NFTDP_GEN_ICMP;
	cfg.imix = true;
	cfg.flows = 33;
	assert_int_equal(nftdp_gen_write_pcap(&cfg, 1000, path), 0);
	p = pcap_open_offline(path, err);
	assert_non_null(p);
	assert_int_equal(pcap_datalink(p), DLT_EN10MB);
	while (pcap_next_ex(p, &hdr, &data) == 1) {
		uint16_t len = nftdp_gen_build(&cfg, n, buf, sizeof(buf), &m);

		assert_int_equal(hdr->caplen, len);
		assert_memory_equal(data, buf, len);
		n++;
	}
	pcap_close(p);
	unlink(path);
	assert_int_equal(n, 1000);
	assert_int_equal(nftdp_gen_write_pcap(&cfg, 1, "/nonexistent/dir/x.pcap"), -EIO);
}

static void test_cfg_check(void **state)
{
	struct nftdp_gen_cfg cfg;
	const char *why = NULL;

	(void)state;
	nftdp_gen_cfg_init(&cfg);
	assert_int_equal(nftdp_gen_cfg_check(&cfg, &why), 0);
	assert_null(why);
	cfg.flows = 0;
	assert_int_equal(nftdp_gen_cfg_check(&cfg, &why), -EINVAL);
	assert_non_null(why);
	nftdp_gen_cfg_init(&cfg);
	cfg.size = 59;
	assert_int_equal(nftdp_gen_cfg_check(&cfg, NULL), -EINVAL);
	cfg.imix = true; /* size is unused with IMIX */
	assert_int_equal(nftdp_gen_cfg_check(&cfg, NULL), 0);
	nftdp_gen_cfg_init(&cfg);
	cfg.dport = 65535;
	cfg.dport_len = 2;
	assert_int_equal(nftdp_gen_cfg_check(&cfg, NULL), -EINVAL);
	nftdp_gen_cfg_init(&cfg);
	cfg.protos = 0x8;
	assert_int_equal(nftdp_gen_cfg_check(&cfg, NULL), -EINVAL);
	nftdp_gen_cfg_init(&cfg);
	cfg.data = NFTDP_GEN_DATA_MAX + 1;
	assert_int_equal(nftdp_gen_cfg_check(&cfg, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_checksums),	   cmocka_unit_test(test_stamp),
	    cmocka_unit_test(test_stamp_udp_zero), cmocka_unit_test(test_tcp_round),
	    cmocka_unit_test(test_flows),	   cmocka_unit_test(test_imix),
	    cmocka_unit_test(test_determinism),	   cmocka_unit_test(test_parse_truncated),
	    cmocka_unit_test(test_hist),	   cmocka_unit_test(test_pcap),
	    cmocka_unit_test(test_cfg_check),	   cmocka_unit_test(test_tcp_mid_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
