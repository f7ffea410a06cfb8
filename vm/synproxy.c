// SPDX-License-Identifier: BSD-3-Clause
/*
 * SYNPROXY's pieces that need no conntrack: TCP option parsing, the
 * syncookie (MSS index in the sequence number) and the timestamp cookie
 * (window scale, SACK-permitted and ECN in the low bits of TSval), and the
 * SYN-ACK sent back to a client. Mirrors nf_synproxy_core.c
 * (synproxy_parse_options, synproxy_options_size, synproxy_build_options,
 * synproxy_init/check_timestamp_cookie, synproxy_send_client_synack) and
 * net/ipv4/syncookies.c, net/ipv6/syncookies.c (__cookie_v4/v6_init_sequence,
 * __cookie_v4/v6_check). The cookie hash is SipHash-2-4 with nftdp's own
 * secret, so cookies differ from the kernel's by design; the layout is the
 * kernel's: hash1 + seq + (minute << 24) + ((hash2(minute) + mssind) & 2^24-1).
 */
#include <arpa/inet.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/random.h>

#include <linux/netfilter/nf_synproxy.h>

#include "vm_priv.h"

#define COOKIEBITS 24
#define COOKIEMASK ((1u << COOKIEBITS) - 1)
#define MAX_SYNCOOKIE_AGE 2 /* minutes */

/* net/ipv4/syncookies.c msstab, net/ipv6/syncookies.c msstab */
static const uint16_t msstab4[] = {536, 1300, 1440, 1460};
static const uint16_t msstab6[] = {1280 - 60, 1480 - 60, 1500 - 60, 9000 - 60};

/* two SipHash keys (syncookie_secret[2]); set once, read by every worker */
static uint64_t secret[2][2];
static atomic_int secret_state; /* 0 unset, 1 being set, 2 set */

void nftdp_vm_synproxy_set_secret(const uint8_t key[32])
{
	memcpy(secret, key, sizeof(secret));
	atomic_store_explicit(&secret_state, 2, memory_order_release);
}

void nftdp_vm_synproxy_init(void)
{
	uint8_t key[32];
	int expect = 0;

	if (!atomic_compare_exchange_strong(&secret_state, &expect, 1))
		return;
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		/* no entropy source: still a per-process key */
		uint64_t x = (uint64_t)(uintptr_t)&key ^ 0x9e3779b97f4a7c15ull;

		for (unsigned int i = 0; i < sizeof(key); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			key[i] = (uint8_t)(x >> 56);
		}
	}
	nftdp_vm_synproxy_set_secret(key);
}

static inline uint64_t rotl(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl(v1, 13);                                                                 \
		v1 ^= v0;                                                                          \
		v0 = rotl(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = rotl(v3, 16);                                                                 \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = rotl(v3, 21);                                                                 \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = rotl(v1, 17);                                                                 \
		v1 ^= v2;                                                                          \
		v2 = rotl(v2, 32);                                                                 \
	} while (0)

/* SipHash-2-4 of len bytes (lib/siphash.c's siphash) */
static uint64_t siphash(const uint8_t *m, size_t len, const uint64_t k[2])
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k[0], v1 = 0x646f72616e646f6dull ^ k[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ k[0], v3 = 0x7465646279746573ull ^ k[1];
	uint64_t b = (uint64_t)len << 56, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, m + i, 8);
		v3 ^= w;
		SIPROUND;
		SIPROUND;
		v0 ^= w;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)m[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* cookie_hash: addresses, ports and count under secret c */
static uint32_t cookie_hash(const uint8_t *ip, bool v6, const uint8_t *th, uint32_t count, int c)
{
	uint8_t m[40];
	size_t n;

	if (!v6) {
		memcpy(m, ip + 12, 8); /* saddr, daddr */
		memcpy(m + 8, th, 4);  /* sport, dport */
		memcpy(m + 12, &count, 4);
		n = 16;
	} else {
		memcpy(m, ip + 8, 32);
		memcpy(m + 32, &count, 4);
		memcpy(m + 36, th, 4);
		n = 40;
	}
	return (uint32_t)siphash(m, n, secret[c]);
}

uint32_t nftdp_vm_synproxy_cookie_init(const uint8_t *ip, bool v6, const uint8_t *th, uint16_t *mss,
				       uint32_t minute)
{
	const uint16_t *tab = v6 ? msstab6 : msstab4;
	uint32_t mssind, sseq = nftdp_rd32(th + 4);

	for (mssind = 3; mssind; mssind--)
		if (*mss >= tab[mssind])
			break;
	*mss = tab[mssind];
	/* secure_tcp_syn_cookie */
	return cookie_hash(ip, v6, th, 0, 0) + sseq + (minute << COOKIEBITS) +
	       ((cookie_hash(ip, v6, th, minute, 1) + mssind) & COOKIEMASK);
}

uint16_t nftdp_vm_synproxy_cookie_check(const uint8_t *ip, bool v6, const uint8_t *th,
					uint32_t minute)
{
	uint32_t cookie = nftdp_rd32(th + 8) - 1, sseq = nftdp_rd32(th + 4) - 1, diff, mssind;

	/* check_tcp_syn_cookie */
	cookie -= cookie_hash(ip, v6, th, 0, 0) + sseq;
	diff = (minute - (cookie >> COOKIEBITS)) & (0xffffffffu >> COOKIEBITS);
	if (diff >= MAX_SYNCOOKIE_AGE)
		return 0;
	mssind = (cookie - cookie_hash(ip, v6, th, minute - diff, 1)) & COOKIEMASK;
	if (mssind >= 4)
		return 0;
	return (v6 ? msstab6 : msstab4)[mssind];
}

bool nftdp_vm_synproxy_parse_options(const uint8_t *th, uint32_t avail,
				     struct nftdp_vm_synproxy_opts *opts)
{
	int length;
	const uint8_t *ptr;

	if (avail < 20)
		return false;
	length = (th[12] >> 4) * 4 - 20;
	/* skb_header_pointer of the option bytes: all of them, or nothing */
	if (length < 0 || (uint32_t)length > avail - 20)
		return false;
	ptr = th + 20;
	opts->options = 0;
	while (length > 0) {
		int opcode = *ptr++, opsize;

		switch (opcode) {
		case 0: /* TCPOPT_EOL */
			return true;
		case 1: /* TCPOPT_NOP */
			length--;
			continue;
		default:
			if (length < 2)
				return true;
			opsize = *ptr++;
			if (opsize < 2 || opsize > length)
				return true;
			switch (opcode) {
			case 2: /* TCPOPT_MSS */
				if (opsize == 4) {
					opts->mss_option = nftdp_rd16(ptr);
					opts->options |= NF_SYNPROXY_OPT_MSS;
				}
				break;
			case 3: /* TCPOPT_WINDOW */
				if (opsize == 3) {
					opts->wscale = *ptr > 14 ? 14 : *ptr; /* TCP_MAX_WSCALE */
					opts->options |= NF_SYNPROXY_OPT_WSCALE;
				}
				break;
			case 8: /* TCPOPT_TIMESTAMP */
				if (opsize == 10) {
					opts->tsval = nftdp_rd32(ptr);
					opts->tsecr = nftdp_rd32(ptr + 4);
					opts->options |= NF_SYNPROXY_OPT_TIMESTAMP;
				}
				break;
			case 4: /* TCPOPT_SACK_PERM */
				if (opsize == 2)
					opts->options |= NF_SYNPROXY_OPT_SACK_PERM;
				break;
			}
			ptr += opsize - 2;
			length -= opsize;
		}
	}
	return true;
}

void nftdp_vm_synproxy_init_timestamp_cookie(const struct nftdp_vm_synproxy_info *info,
					     struct nftdp_vm_synproxy_opts *opts, uint64_t now_ms)
{
	opts->tsecr = opts->tsval;
	opts->tsval = (uint32_t)now_ms & ~0x3fu;
	if (opts->options & NF_SYNPROXY_OPT_WSCALE) {
		opts->tsval |= opts->wscale;
		opts->wscale = info->wscale;
	} else {
		opts->tsval |= 0xf;
	}
	if (opts->options & NF_SYNPROXY_OPT_SACK_PERM)
		opts->tsval |= 1 << 4;
	if (opts->options & NF_SYNPROXY_OPT_ECN)
		opts->tsval |= 1 << 5;
}

void nftdp_vm_synproxy_check_timestamp_cookie(struct nftdp_vm_synproxy_opts *opts)
{
	opts->wscale = opts->tsecr & 0xf;
	if (opts->wscale != 0xf)
		opts->options |= NF_SYNPROXY_OPT_WSCALE;
	opts->options |= (opts->tsecr & (1 << 4)) ? NF_SYNPROXY_OPT_SACK_PERM : 0;
	opts->options |= (opts->tsecr & (1 << 5)) ? NF_SYNPROXY_OPT_ECN : 0;
}

void nftdp_vm_synproxy_tcp_options(const struct nftdp_vm_synproxy_info *info, const uint8_t *th,
				   struct nftdp_vm_synproxy_opts *opts, uint64_t now_ms)
{
	/* nft_synproxy_tcp_options, after syn_received is counted */
	if ((th[13] & 0x40) && (th[13] & 0x80)) /* ECE and CWR */
		opts->options |= NF_SYNPROXY_OPT_ECN;
	opts->options &= info->options;
	opts->mss_encode = opts->mss_option;
	opts->mss_option = info->mss;
	if (opts->options & NF_SYNPROXY_OPT_TIMESTAMP)
		nftdp_vm_synproxy_init_timestamp_cookie(info, opts, now_ms);
	else
		opts->options &= (uint8_t) ~(NF_SYNPROXY_OPT_WSCALE | NF_SYNPROXY_OPT_SACK_PERM |
					     NF_SYNPROXY_OPT_ECN);
}

uint32_t nftdp_vm_synproxy_options_size(const struct nftdp_vm_synproxy_opts *opts)
{
	uint32_t size = 0;

	if (opts->options & NF_SYNPROXY_OPT_MSS)
		size += 4;
	if (opts->options & NF_SYNPROXY_OPT_TIMESTAMP)
		size += 12;
	else if (opts->options & NF_SYNPROXY_OPT_SACK_PERM)
		size += 4;
	if (opts->options & NF_SYNPROXY_OPT_WSCALE)
		size += 4;
	return size;
}

void nftdp_vm_synproxy_build_options(uint8_t *th, const struct nftdp_vm_synproxy_opts *opts)
{
	uint8_t *p = th + 20;
	uint8_t o = opts->options;

	if (o & NF_SYNPROXY_OPT_MSS) {
		nftdp_wr32(p, (2u << 24) | (4u << 16) | opts->mss_option);
		p += 4;
	}
	if (o & NF_SYNPROXY_OPT_TIMESTAMP) {
		if (o & NF_SYNPROXY_OPT_SACK_PERM)
			nftdp_wr32(p, (4u << 24) | (2u << 16) | (8u << 8) | 10u);
		else
			nftdp_wr32(p, (1u << 24) | (1u << 16) | (8u << 8) | 10u);
		nftdp_wr32(p + 4, opts->tsval);
		nftdp_wr32(p + 8, opts->tsecr);
		p += 12;
	} else if (o & NF_SYNPROXY_OPT_SACK_PERM) {
		nftdp_wr32(p, (1u << 24) | (1u << 16) | (4u << 8) | 2u);
		p += 4;
	}
	if (o & NF_SYNPROXY_OPT_WSCALE)
		nftdp_wr32(p, (1u << 24) | (3u << 16) | (3u << 8) | opts->wscale);
}

/* synproxy_build_ip / synproxy_build_ip_ipv6 with addresses src, dst and
 * a TCP segment of thlen, then the TCP header: everything but the
 * options and the checksum */
struct seg {
	const uint8_t *src, *dst, *sport, *dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window;
};

static uint32_t seg_build(bool v6, const struct seg *s, const struct nftdp_vm_synproxy_opts *opts,
			  uint8_t *out, uint32_t cap)
{
	uint32_t thlen = 20 + nftdp_vm_synproxy_options_size(opts), iplen = v6 ? 40 : 20;
	uint8_t *nth = out + iplen;

	if (cap < iplen + thlen)
		return 0;
	memset(out, 0, iplen + thlen);
	if (!v6) {
		out[0] = 0x45;
		nftdp_wr16(out + 2, (uint16_t)(iplen + thlen));
		nftdp_wr16(out + 6, 0x4000); /* DF, id 0 */
		out[8] = 64;		     /* sysctl_ip_default_ttl */
		out[9] = IPPROTO_TCP;
		memcpy(out + 12, s->src, 4);
		memcpy(out + 16, s->dst, 4);
		nftdp_st16(out + 10, nftdp_ip_fast_csum(out, 20));
	} else {
		out[0] = 0x60;
		nftdp_wr16(out + 4, (uint16_t)thlen);
		out[6] = IPPROTO_TCP;
		out[7] = 64; /* devconf_all->hop_limit */
		memcpy(out + 8, s->src, 16);
		memcpy(out + 24, s->dst, 16);
	}
	memcpy(nth, s->sport, 2);
	memcpy(nth + 2, s->dport, 2);
	nftdp_wr32(nth + 4, s->seq);
	nftdp_wr32(nth + 8, s->ack);
	nth[12] = (uint8_t)((thlen / 4) << 4);
	nth[13] = s->flags;
	nftdp_wr16(nth + 14, s->window);
	nftdp_vm_synproxy_build_options(nth, opts);
	nftdp_st16(nth + 16,
		   nftdp_csum_fold(nftdp_csum_partial(
		       nth, thlen, nftdp_csum_pseudo(out, v6, IPPROTO_TCP, (uint16_t)thlen))));
	return iplen + thlen;
}

/* the source and destination address of the packet under ip */
static const uint8_t *saddr(const uint8_t *ip, bool v6)
{
	return ip + (v6 ? 8 : 12);
}

static const uint8_t *daddr(const uint8_t *ip, bool v6)
{
	return ip + (v6 ? 24 : 16);
}

uint32_t nftdp_vm_synproxy_synack_build(const uint8_t *ip, bool v6, const uint8_t *th,
					const struct nftdp_vm_synproxy_opts *opts, uint32_t minute,
					uint8_t *out, uint32_t cap)
{
	uint16_t mss = opts->mss_encode;
	struct seg sa = {.src = daddr(ip, v6),
			 .dst = saddr(ip, v6),
			 .sport = th + 2,
			 .dport = th,
			 .seq = nftdp_vm_synproxy_cookie_init(ip, v6, th, &mss, minute),
			 .ack = nftdp_rd32(th + 4) + 1,
			 /* SYN|ACK, ECE with ECN; window 0 */
			 .flags =
			     (uint8_t)(0x12 | (opts->options & NF_SYNPROXY_OPT_ECN ? 0x40 : 0))};

	return seg_build(v6, &sa, opts, out, cap);
}

uint32_t nftdp_vm_synproxy_server_syn_build(const uint8_t *ip, bool v6, const uint8_t *th,
					    const struct nftdp_vm_synproxy_opts *opts,
					    uint32_t recv_seq, uint8_t *out, uint32_t cap)
{
	struct seg s = {.src = saddr(ip, v6),
			.dst = daddr(ip, v6),
			.sport = th,
			.dport = th + 2,
			.seq = recv_seq - 1,
			.ack = nftdp_rd32(th + 8) - 1,
			.flags = 0x02, /* SYN */
			.window = nftdp_rd16(th + 14)};

	if (opts->options & NF_SYNPROXY_OPT_ECN)
		s.flags |= 0x40 | 0x80; /* ECE, CWR */
	return seg_build(v6, &s, opts, out, cap);
}

uint32_t nftdp_vm_synproxy_server_ack_build(const uint8_t *ip, bool v6, const uint8_t *th,
					    const struct nftdp_vm_synproxy_opts *opts,
					    uint16_t maxwin, uint8_t *out, uint32_t cap)
{
	struct seg s = {.src = daddr(ip, v6),
			.dst = saddr(ip, v6),
			.sport = th + 2,
			.dport = th,
			.seq = nftdp_rd32(th + 8),
			.ack = nftdp_rd32(th + 4) + 1,
			.flags = 0x10, /* ACK */
			.window = maxwin};

	return seg_build(v6, &s, opts, out, cap);
}

uint32_t nftdp_vm_synproxy_client_ack_build(const uint8_t *ip, bool v6, const uint8_t *th,
					    const struct nftdp_vm_synproxy_opts *opts, uint8_t *out,
					    uint32_t cap)
{
	struct seg s = {.src = saddr(ip, v6),
			.dst = daddr(ip, v6),
			.sport = th,
			.dport = th + 2,
			.seq = nftdp_rd32(th + 4) + 1,
			.ack = nftdp_rd32(th + 8),
			.flags = 0x10, /* ACK */
			.window = (uint16_t)(nftdp_rd16(th + 14) >> opts->wscale)};

	return seg_build(v6, &s, opts, out, cap);
}

bool nftdp_vm_synproxy_tstamp_adjust(uint8_t *th, uint32_t thlen, bool reply, uint32_t tsoff)
{
	uint32_t off = 20, end;

	if (tsoff == 0)
		return true;
	if (thlen < 20 || (end = (uint32_t)(th[12] >> 4) * 4) > thlen)
		return false;
	while (off < end) {
		uint8_t *op = th + off;

		if (op[0] == 0) /* EOL */
			return true;
		if (op[0] == 1) { /* NOP */
			off++;
			continue;
		}
		if (off + 1 == end || op[1] < 2 || off + op[1] > end)
			return false;
		if (op[0] == 8 && op[1] == 10) {
			uint8_t *p = reply ? op + 2 : op + 6;
			uint8_t old[4];

			memcpy(old, p, 4);
			nftdp_wr32(p, reply ? nftdp_rd32(old) - tsoff : nftdp_rd32(old) + tsoff);
			nftdp_inet_csum_replace(th + 16, old, p, 4); /* inet_proto_csum_replace4 */
			return true;
		}
		off += op[1];
	}
	return true;
}

uint32_t nftdp_vm_synproxy_answer(const uint8_t *ip, bool v6, const uint8_t *th, uint32_t thlen,
				  const struct nftdp_vm_synproxy_info *info, uint64_t now_ms,
				  uint8_t *out, uint32_t cap)
{
	struct nftdp_vm_synproxy_opts opts = {0};

	if (!nftdp_vm_synproxy_parse_options(th, thlen, &opts))
		return 0;
	nftdp_vm_synproxy_tcp_options(info, th, &opts, now_ms);
	return nftdp_vm_synproxy_synack_build(ip, v6, th, &opts, (uint32_t)(now_ms / 60000), out,
					      cap);
}

uint32_t nftdp_vm_synproxy_server_syn(const uint8_t *ip, bool v6, const uint8_t *th, uint32_t thlen,
				      uint32_t seq_add, uint64_t now_ms, uint8_t *out, uint32_t cap)
{
	struct nftdp_vm_synproxy_opts opts = {0};
	uint16_t mss;

	if (!nftdp_vm_synproxy_parse_options(th, thlen, &opts))
		return 0;
	/* synproxy_recv_client_ack */
	mss = nftdp_vm_synproxy_cookie_check(ip, v6, th, (uint32_t)(now_ms / 60000));
	if (!mss)
		return 0;
	opts.mss_option = mss;
	opts.options |= NF_SYNPROXY_OPT_MSS;
	if (opts.options & NF_SYNPROXY_OPT_TIMESTAMP)
		nftdp_vm_synproxy_check_timestamp_cookie(&opts);
	return nftdp_vm_synproxy_server_syn_build(ip, v6, th, &opts, nftdp_rd32(th + 4) + seq_add,
						  out, cap);
}
