// SPDX-License-Identifier: BSD-3-Clause
/*
 * Checksum and hash helpers: the internet checksum in the form the kernel's
 * csum_partial/csum_fold/nft_csum_replace use it, CRC32c for SCTP, and the
 * Jenkins hash of linux/jhash.h (lookup3), which nft_hash must reproduce
 * bit for bit.
 */
#include "vm_priv.h"

/* Sum of memory-order 16-bit words; one's complement addition is byte-order
 * independent, so the result can be stored back as it is. */
uint32_t nftdp_vm_csum_partial(const void *buf, uint32_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	uint64_t acc = sum;
	uint16_t w;

	while (len >= 2) {
		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		uint8_t last[2] = {*p, 0};

		memcpy(&w, last, 2);
		acc += w;
	}
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

static uint32_t csum_add(uint32_t a, uint32_t b)
{
	uint32_t r = a + b;

	return r + (r < b);
}

uint16_t nftdp_vm_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* nft_csum_replace: field holds a 16-bit checksum in memory order */
void nftdp_vm_csum_replace(uint8_t *field, uint32_t fsum, uint32_t tsum)
{
	uint16_t sum;

	memcpy(&sum, field, 2);
	sum = nftdp_vm_csum_fold(csum_add(csum_add((uint16_t)~sum, ~fsum), tsum));
	if (sum == 0)
		sum = 0xffff; /* CSUM_MANGLED_0 */
	memcpy(field, &sum, 2);
}

/* inet_proto_csum_replace2/4 without CSUM_MANGLED_0 (as the kernel) */
void nftdp_vm_inet_csum_replace(uint8_t *field, const void *from, const void *to, uint32_t len)
{
	uint32_t fsum = nftdp_vm_csum_partial(from, len, 0);
	uint32_t tsum = nftdp_vm_csum_partial(to, len, 0);
	uint16_t sum;

	memcpy(&sum, field, 2);
	sum = nftdp_vm_csum_fold(csum_add(csum_add((uint16_t)~sum, ~fsum), tsum));
	memcpy(field, &sum, 2);
}

uint32_t nftdp_vm_crc32c(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return crc;
}

/* ---- jhash (lookup3, as linux/jhash.h) ---- */

static inline uint32_t rol32(uint32_t w, unsigned int s)
{
	return (w << s) | (w >> (32 - s));
}

#define JHASH_MIX(a, b, c)                                                                         \
	do {                                                                                       \
		a -= c;                                                                            \
		a ^= rol32(c, 4);                                                                  \
		c += b;                                                                            \
		b -= a;                                                                            \
		b ^= rol32(a, 6);                                                                  \
		a += c;                                                                            \
		c -= b;                                                                            \
		c ^= rol32(b, 8);                                                                  \
		b += a;                                                                            \
		a -= c;                                                                            \
		a ^= rol32(c, 16);                                                                 \
		c += b;                                                                            \
		b -= a;                                                                            \
		b ^= rol32(a, 19);                                                                 \
		a += c;                                                                            \
		c -= b;                                                                            \
		c ^= rol32(b, 4);                                                                  \
		b += a;                                                                            \
	} while (0)

#define JHASH_FINAL(a, b, c)                                                                       \
	do {                                                                                       \
		c ^= b;                                                                            \
		c -= rol32(b, 14);                                                                 \
		a ^= c;                                                                            \
		a -= rol32(c, 11);                                                                 \
		b ^= a;                                                                            \
		b -= rol32(a, 25);                                                                 \
		c ^= b;                                                                            \
		c -= rol32(b, 16);                                                                 \
		a ^= c;                                                                            \
		a -= rol32(c, 4);                                                                  \
		b ^= a;                                                                            \
		b -= rol32(a, 14);                                                                 \
		c ^= b;                                                                            \
		c -= rol32(b, 24);                                                                 \
	} while (0)

#define JHASH_INITVAL 0xdeadbeef

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4); /* get_unaligned_cpu32 */
	return v;
}

uint32_t nftdp_vm_jhash(const void *key, uint32_t length, uint32_t initval)
{
	const uint8_t *k = key;
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + length + initval;
	while (length > 12) {
		a += get32(k);
		b += get32(k + 4);
		c += get32(k + 8);
		JHASH_MIX(a, b, c);
		length -= 12;
		k += 12;
	}
	switch (length) {
	case 12:
		c += (uint32_t)k[11] << 24; /* fall through */
	case 11:
		c += (uint32_t)k[10] << 16; /* fall through */
	case 10:
		c += (uint32_t)k[9] << 8; /* fall through */
	case 9:
		c += k[8]; /* fall through */
	case 8:
		b += (uint32_t)k[7] << 24; /* fall through */
	case 7:
		b += (uint32_t)k[6] << 16; /* fall through */
	case 6:
		b += (uint32_t)k[5] << 8; /* fall through */
	case 5:
		b += k[4]; /* fall through */
	case 4:
		a += (uint32_t)k[3] << 24; /* fall through */
	case 3:
		a += (uint32_t)k[2] << 16; /* fall through */
	case 2:
		a += (uint32_t)k[1] << 8; /* fall through */
	case 1:
		a += k[0];
		JHASH_FINAL(a, b, c);
		break;
	case 0:
		break;
	}
	return c;
}
