/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp_common.h: the small helpers every module shares, each written once.
 * Byte access (the kernel's get/put_unaligned_be16/32 of
 * include/linux/unaligned.h), the Internet checksum (csum_partial, csum_fold,
 * csum_add, csum_replace2/4 and nft_csum_replace of net/checksum.h and
 * net/netfilter/nft_payload.c), CRC32c (crc32c() of lib/crc32.c, as
 * sctp_compute_cksum uses it) and the monotonic millisecond clock
 * (ktime_get_ns()/NSEC_PER_MSEC; the sets', conntrack's and control's
 * clock). No structs, no state, no DPDK header: vm/'s public header stays
 * DPDK-free. common.c holds the two loops (checksum and CRC32c).
 */
#ifndef NFTDP_COMMON_H
#define NFTDP_COMMON_H

#include <arpa/inet.h> /* htons: the pseudo-header's words */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* ---- byte access: big-endian (network order), any alignment ---- */

/* get_unaligned_be16 */
static inline uint16_t nftdp_rd16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)((uint16_t)b[0] << 8 | b[1]);
}

/* get_unaligned_be32 */
static inline uint32_t nftdp_rd32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* put_unaligned_be16 */
static inline void nftdp_wr16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/* put_unaligned_be32 */
static inline void nftdp_wr32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

/* get_unaligned_cpu16/32: memory order, as a checksum field is stored */
static inline uint16_t nftdp_ld16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t nftdp_ld32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t nftdp_ld64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* put_unaligned_cpu16/32 */
static inline void nftdp_st16(void *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static inline void nftdp_st32(void *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* ---- the Internet checksum (RFC 1071), on memory-order 16-bit words ---- */

/*
 * csum_partial: sum plus the one's complement sum of len bytes read as
 * memory-order 16-bit words (an odd last byte as the first byte of a word).
 * One's complement addition is byte-order independent, so the folded result
 * is stored back as it is. Not folded; see nftdp_csum_fold.
 */
uint32_t nftdp_csum_partial(const void *buf, uint32_t len, uint32_t sum);

/* one's complement addition of 64-bit words: the carry out goes back in
 * (2^64 is 1 modulo 0xffff, so the folded sum is the 16-bit one's) */
static inline uint64_t nftdp_csum_add64(uint64_t s, uint64_t v)
{
	s += v;
	return s + (s < v);
}

/* a 64-bit sum as a 32-bit partial sum */
static inline uint32_t nftdp_csum_from64(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

/*
 * The partial sum of the pseudo-header (RFC 793; RFC 8200 8.1) of a
 * transport segment of l4len bytes, proto, after the IPv4 (v6 false) or
 * IPv6 header at ip: addresses, length and protocol, the last two added as
 * the big-endian words they are on the wire. An IP datagram's segment is
 * shorter than 64 KiB, so IPv6's 32-bit length sums as IPv4's 16 bits do.
 */
static inline uint32_t nftdp_csum_pseudo(const uint8_t *ip, bool v6, uint8_t proto, uint16_t l4len)
{
	uint64_t s;

	if (v6) {
		s = nftdp_csum_add64(nftdp_ld64(ip + 8), nftdp_ld64(ip + 16));
		s = nftdp_csum_add64(s, nftdp_ld64(ip + 24));
		s = nftdp_csum_add64(s, nftdp_ld64(ip + 32));
	} else {
		s = nftdp_ld64(ip + 12);
	}
	s = nftdp_csum_add64(s, (uint64_t)htons(l4len) + htons(proto));
	return nftdp_csum_from64(s);
}

/* csum_add: one's complement addition of two 32-bit partial sums */
static inline uint32_t nftdp_csum_add(uint32_t a, uint32_t b)
{
	uint32_t r = a + b;

	return r + (r < b);
}

/* csum_fold: the complemented 16-bit checksum of a partial sum */
static inline uint16_t nftdp_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* ip_fast_csum: the header checksum to store (memory order); the common
 * 20-byte header without a call or a loop */
static inline uint16_t nftdp_ip_fast_csum(const void *iph, uint32_t ihl_bytes)
{
	if (ihl_bytes == 20) {
		const uint8_t *p = iph;
		uint64_t a, b, s;
		uint32_t c;

		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(&c, p + 16, 4);
		s = (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) + c;
		s = (s & 0xffffffffu) + (s >> 32);
		s = (s & 0xffffffffu) + (s >> 32);
		return nftdp_csum_fold((uint32_t)s);
	}
	return nftdp_csum_fold(nftdp_csum_partial(iph, ihl_bytes, 0));
}

/*
 * inet_proto_csum_replace_by_diff / csum_replace (RFC 1624): the 16-bit
 * checksum at field (memory order), updated for data whose partial sum
 * changes from fsum to tsum. Without CSUM_MANGLED_0.
 */
static inline void nftdp_csum_replace(uint8_t *field, uint32_t fsum, uint32_t tsum)
{
	uint16_t sum = nftdp_ld16(field);

	sum = nftdp_csum_fold(nftdp_csum_add(nftdp_csum_add((uint16_t)~sum, ~fsum), tsum));
	nftdp_st16(field, sum);
}

/* inet_proto_csum_replace2/4/16: field's checksum for len bytes from -> to */
static inline void nftdp_inet_csum_replace(uint8_t *field, const void *from, const void *to,
					   uint32_t len)
{
	nftdp_csum_replace(field, nftdp_csum_partial(from, len, 0), nftdp_csum_partial(to, len, 0));
}

/* ---- CRC32c (Castagnoli, reflected, polynomial 0x82f63b78) ---- */

/*
 * crc32c(crc, p, len) of lib/crc32.c: no pre- or post-inversion; SCTP's
 * sctp_compute_cksum is ~crc32c(~0, ...) with the checksum field as zero.
 */
uint32_t nftdp_crc32c(uint32_t crc, const void *p, size_t len);

/* ---- the clock ---- */

/* CLOCK_MONOTONIC in milliseconds: the sets' timeouts, conntrack's expiry */
static inline uint64_t nftdp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
