// SPDX-License-Identifier: BSD-3-Clause
/*
 * common/ (nftdp_common.h): byte access, the Internet checksum against a
 * plain RFC 1071 reference at every length and offset, the incremental
 * update against a full recomputation, CRC32c against known vectors and a
 * bitwise reference, and the clock's monotonicity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nftdp_common.h"

/* RFC 1071, the obvious way: big-endian 16-bit words, folded at the end */
static uint16_t ref_csum(const uint8_t *p, uint32_t len)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* the memory-order result as the big-endian value it stores */
static uint16_t stored_be(uint16_t mem)
{
	uint8_t b[2];

	nftdp_st16(b, mem);
	return nftdp_rd16(b);
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
}

static void test_bytes(void **state)
{
	uint8_t b[7] = {0};

	(void)state;
	nftdp_wr16(b + 1, 0x1234);
	assert_int_equal(b[1], 0x12);
	assert_int_equal(b[2], 0x34);
	assert_int_equal(nftdp_rd16(b + 1), 0x1234);
	nftdp_wr32(b + 3, 0xa1b2c3d4u);
	assert_memory_equal(b + 3, ((uint8_t[]){0xa1, 0xb2, 0xc3, 0xd4}), 4);
	assert_int_equal(nftdp_rd32(b + 3), 0xa1b2c3d4u);
	nftdp_st32(b + 1, 0x01020304u); /* unaligned, memory order */
	assert_int_equal(nftdp_ld32(b + 1), 0x01020304u);
	nftdp_st16(b + 5, 0xbeef);
	assert_int_equal(nftdp_ld16(b + 5), 0xbeef);
}

static void test_csum_all_lengths_offsets(void **state)
{
	static uint8_t buf[1600 + 8];

	(void)state;
	fill(buf, sizeof(buf), 1);
	for (uint32_t off = 0; off < 8; off++)
		for (uint32_t len = 0; len <= 1600; len += len < 80 ? 1 : 37)
			assert_int_equal(
			    stored_be(nftdp_csum_fold(nftdp_csum_partial(buf + off, len, 0))),
			    ref_csum(buf + off, len));
	/* all ones: the sum stays 0xffff, the checksum 0 */
	memset(buf, 0xff, 64);
	assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(buf, 64, 0)), 0);
	assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(buf, 0, 0)), 0xffff);
}

/* the pseudo-header sum equals the sum of the pseudo-header written out
 * (IPv4: addresses, zero, protocol, 16-bit length; IPv6: addresses,
 * 32-bit length, three zeros, next header) */
static void test_csum_pseudo(void **state)
{
	uint8_t ip[40], ph[40];

	(void)state;
	for (int i = 0; i < 40; i++)
		ip[i] = (uint8_t)(i * 53 + 7);
	for (uint32_t len = 0; len < 65536; len += 977) {
		memset(ph, 0, sizeof(ph));
		memcpy(ph, ip + 12, 8);
		ph[9] = 6;
		ph[10] = (uint8_t)(len >> 8);
		ph[11] = (uint8_t)len;
		assert_int_equal(nftdp_csum_fold(nftdp_csum_pseudo(ip, false, 6, (uint16_t)len)),
				 nftdp_csum_fold(nftdp_csum_partial(ph, 12, 0)));
		memset(ph, 0, sizeof(ph));
		memcpy(ph, ip + 8, 32);
		nftdp_wr32(ph + 32, len);
		ph[39] = 17;
		assert_int_equal(nftdp_csum_fold(nftdp_csum_pseudo(ip, true, 17, (uint16_t)len)),
				 nftdp_csum_fold(nftdp_csum_partial(ph, 40, 0)));
	}
}

static void test_csum_chained(void **state)
{
	uint8_t buf[301];

	(void)state;
	fill(buf, sizeof(buf), 7);
	/* even splits chain: the sum of parts is the sum of the whole */
	for (uint32_t cut = 0; cut <= 300; cut += 2) {
		uint32_t s = nftdp_csum_partial(buf, cut, 0);

		s = nftdp_csum_partial(buf + cut, sizeof(buf) - cut, s);
		assert_int_equal(stored_be(nftdp_csum_fold(s)), ref_csum(buf, sizeof(buf)));
	}
	/* a large carried-in sum is folded, not lost */
	assert_int_equal(nftdp_csum_fold(nftdp_csum_partial(buf, 0, 0xffffffffu)),
			 nftdp_csum_fold(0xffffffffu));
	assert_int_equal(nftdp_csum_add(0xffffffffu, 1), 1);
}

static void test_ip_header(void **state)
{
	/* the well-known example header, checksum 0xb861 */
	uint8_t ip[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			  0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

	(void)state;
	nftdp_st16(ip + 10, nftdp_ip_fast_csum(ip, 20));
	assert_int_equal(nftdp_rd16(ip + 10), 0xb861);
	assert_int_equal(nftdp_ip_fast_csum(ip, 20), 0);
	/* the 20-byte path gives what the general one gives, carries included */
	uint8_t buf[24 + 4];

	for (uint32_t seed = 1; seed < 400; seed++) {
		fill(buf, sizeof(buf), seed);
		if (seed % 5 == 0)
			memset(buf, 0xff, sizeof(buf));
		for (uint32_t off = 0; off < 4; off++) {
			assert_int_equal(nftdp_ip_fast_csum(buf + off, 20),
					 nftdp_csum_fold(nftdp_csum_partial(buf + off, 20, 0)));
			assert_int_equal(stored_be(nftdp_ip_fast_csum(buf + off, 20)),
					 ref_csum(buf + off, 20));
			assert_int_equal(nftdp_ip_fast_csum(buf + off, 24),
					 nftdp_csum_fold(nftdp_csum_partial(buf + off, 24, 0)));
		}
	}
}

static void test_csum_replace(void **state)
{
	uint8_t buf[64], field[2];

	(void)state;
	for (uint32_t seed = 1; seed < 200; seed++) {
		uint32_t at, len = (seed & 1) ? 4 : 16;
		uint8_t to[16];

		fill(buf, sizeof(buf), seed);
		fill(to, sizeof(to), seed * 31);
		at = (seed * 2) % (sizeof(buf) - 16) & ~1u;
		nftdp_st16(field, nftdp_csum_fold(nftdp_csum_partial(buf, sizeof(buf), 0)));
		nftdp_inet_csum_replace(field, buf + at, to, len);
		memcpy(buf + at, to, len);
		/* the updated checksum verifies the changed data */
		assert_int_equal(nftdp_csum_fold(nftdp_csum_add(
				     nftdp_csum_partial(buf, sizeof(buf), 0), nftdp_ld16(field))),
				 0);
	}
}

static uint32_t ref_crc32c(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return crc;
}

static void test_crc32c(void **state)
{
	static const uint8_t zeros[32], ones[32] = {[0 ... 31] = 0xff};
	uint8_t inc[32], buf[300];

	(void)state;
	for (int i = 0; i < 32; i++)
		inc[i] = (uint8_t)i;
	/* the check value, and RFC 3720 B.4's vectors */
	assert_int_equal(~nftdp_crc32c(~0u, "123456789", 9), 0xe3069283u);
	assert_int_equal(~nftdp_crc32c(~0u, zeros, 32), 0x8a9136aau);
	assert_int_equal(~nftdp_crc32c(~0u, ones, 32), 0x62a8ab43u);
	assert_int_equal(~nftdp_crc32c(~0u, inc, 32), 0x46dd794eu);
	assert_int_equal(nftdp_crc32c(0x1234u, "", 0), 0x1234u);
	fill(buf, sizeof(buf), 3);
	for (uint32_t off = 0; off < 8; off++)
		for (uint32_t len = 0; len + off <= sizeof(buf); len += 7) {
			uint32_t half = len / 3;

			assert_int_equal(nftdp_crc32c(~0u, buf + off, len),
					 ref_crc32c(~0u, buf + off, len));
			assert_int_equal(nftdp_crc32c(nftdp_crc32c(~0u, buf + off, half),
						      buf + off + half, len - half),
					 ref_crc32c(~0u, buf + off, len));
		}
}

static void test_clock(void **state)
{
	uint64_t a = nftdp_now_ms(), b;
	struct timespec ts = {0, 3 * 1000 * 1000};

	(void)state;
	assert_true(a > 0);
	for (int i = 0; i < 1000; i++) {
		b = nftdp_now_ms();
		assert_true(b >= a);
		a = b;
	}
	nanosleep(&ts, NULL);
	b = nftdp_now_ms();
	assert_true(b >= a + 2 && b < a + 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bytes),	 cmocka_unit_test(test_csum_all_lengths_offsets),
	    cmocka_unit_test(test_csum_chained), cmocka_unit_test(test_csum_pseudo),
	    cmocka_unit_test(test_ip_header),	 cmocka_unit_test(test_csum_replace),
	    cmocka_unit_test(test_crc32c),	 cmocka_unit_test(test_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
