// SPDX-License-Identifier: BSD-3-Clause
/*
 * Checksum and hash helpers: nft_csum_replace on common/'s Internet checksum
 * (nftdp_common.h, which also has CRC32c for SCTP), and the Jenkins hash
 * of linux/jhash.h (lookup3), which nft_hash must reproduce bit for bit.
 */
#include "vm_priv.h"

/* nft_csum_replace: field holds a 16-bit checksum in memory order; a result
 * of 0 is stored as CSUM_MANGLED_0 */
void nftdp_vm_csum_replace(uint8_t *field, uint32_t fsum, uint32_t tsum)
{
	nftdp_csum_replace(field, fsum, tsum);
	if (nftdp_ld16(field) == 0)
		nftdp_st16(field, 0xffff); /* CSUM_MANGLED_0 */
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

uint32_t nftdp_vm_jhash(const void *key, uint32_t length, uint32_t initval)
{
	const uint8_t *k = key;
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + length + initval;
	while (length > 12) {
		a += nftdp_ld32(k);
		b += nftdp_ld32(k + 4);
		c += nftdp_ld32(k + 8);
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
