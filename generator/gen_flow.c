/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's traffic model: configuration defaults and checks, which
 * flow has which 5-tuple, the deterministic hash behind every "random"
 * choice, and IMIX. gen_pkt.c turns (flow, step) into bytes.
 */
#include <errno.h>
#include <string.h>

#include "gen_priv.h"

void nftdp_gen_cfg_init(struct nftdp_gen_cfg *cfg)
{
	static const uint8_t src6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	static const uint8_t dst6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1};
	/* locally administered, unicast */
	static const uint8_t smac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
	static const uint8_t dmac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};

	memset(cfg, 0, sizeof(*cfg));
	cfg->flows = 1;
	cfg->families = NFTDP_GEN_IPV4;
	cfg->protos = NFTDP_GEN_UDP;
	cfg->size = 64;
	cfg->data = 1;
	cfg->replies = true;
	cfg->seed = 1;
	cfg->src4 = 0x0a000001; /* 10.0.0.1 */
	cfg->dst4 = 0x0a010001; /* 10.1.0.1 */
	cfg->src4_len = 1;
	cfg->dst4_len = 1;
	memcpy(cfg->src6.base, src6, 16);
	cfg->src6.len = 1;
	memcpy(cfg->dst6.base, dst6, 16);
	cfg->dst6.len = 1;
	cfg->sport = 1024;
	cfg->sport_len = 1;
	cfg->dport = 5000;
	cfg->dport_len = 1;
	memcpy(cfg->src_mac, smac, 6);
	memcpy(cfg->dst_mac, dmac, 6);
	cfg->ttl = 64;
}

int nftdp_gen_cfg_check(const struct nftdp_gen_cfg *cfg, const char **why)
{
	const char *w = NULL;

	if (cfg->flows == 0)
		w = "flows must be at least 1";
	else if ((cfg->families & (NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6)) == 0 ||
		 (cfg->families & ~(NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6)) != 0)
		w = "family must be 4, 6 or 46";
	else if ((cfg->protos & (NFTDP_GEN_TCP | NFTDP_GEN_UDP | NFTDP_GEN_ICMP)) == 0 ||
		 (cfg->protos & ~(NFTDP_GEN_TCP | NFTDP_GEN_UDP | NFTDP_GEN_ICMP)) != 0)
		w = "protocols must be some of tcp, udp, icmp";
	else if (!cfg->imix && (cfg->size < NFTDP_GEN_FRAME_MIN || cfg->size > NFTDP_GEN_FRAME_MAX))
		w = "size must be 60..1514";
	else if (cfg->data == 0 || cfg->data > NFTDP_GEN_DATA_MAX)
		w = "data packets per flow must be 1..64";
	else if (cfg->src4_len == 0 || cfg->dst4_len == 0 || cfg->src6.len == 0 ||
		 cfg->dst6.len == 0 || cfg->sport_len == 0 || cfg->dport_len == 0)
		w = "empty address or port range";
	else if ((uint32_t)cfg->sport + cfg->sport_len > 65536 ||
		 (uint32_t)cfg->dport + cfg->dport_len > 65536)
		w = "port range past 65535";
	else if (cfg->ttl == 0)
		w = "ttl must be at least 1";
	else if (cfg->syn_flood && cfg->mid_stream)
		w = "syn-flood and mid-stream exclude each other";
	if (why != NULL)
		*why = w;
	return w != NULL ? -EINVAL : 0;
}

uint64_t nftdp_gen_hash(uint64_t a, uint64_t b)
{
	uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint16_t nftdp_gen_imix(uint64_t r)
{
	/* 7:4:1 out of 12; use the high bits, the low ones feed other choices */
	unsigned int k = (unsigned int)((r >> 32) % 12);

	if (k < 7)
		return 64;
	if (k < 11)
		return 576;
	return 1500;
}

static unsigned int nbits(uint8_t mask)
{
	return (unsigned int)__builtin_popcount(mask);
}

/* the n-th set bit of mask */
static uint8_t nth_bit(uint8_t mask, unsigned int n)
{
	for (unsigned int b = 0; b < 8; b++) {
		if ((mask & (1u << b)) == 0)
			continue;
		if (n-- == 0)
			return (uint8_t)(1u << b);
	}
	return 0;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* base plus off in the low 32 bits of an IPv6 address (wrapping there) */
static void addr6(uint8_t *out, const struct nftdp_gen_range6 *r, uint32_t off)
{
	memcpy(out, r->base, 16);
	put_be32(out + 12, get_be32(r->base + 12) + off);
}

uint16_t gen_flow_steps(const struct nftdp_gen_cfg *cfg, uint8_t proto)
{
	switch (proto) {
	case NFTDP_GEN_TCP:
		if (cfg->syn_flood)
			return 1; /* step 0: the SYN */
		/* mid-stream: each data segment, then the server's ACK of it */
		if (cfg->mid_stream)
			return (uint16_t)(cfg->replies ? 2 * cfg->data : cfg->data);
		return (uint16_t)(cfg->data + (cfg->replies ? 6 : 3));
	case NFTDP_GEN_ICMP:
		return (uint16_t)(cfg->replies ? 2 * cfg->data : cfg->data);
	default:
		return cfg->data;
	}
}

void nftdp_gen_flow(const struct nftdp_gen_cfg *cfg, uint32_t i, struct nftdp_gen_flow *f)
{
	unsigned int nfam = nbits(cfg->families), nproto = nbits(cfg->protos);
	uint64_t t;
	uint32_t s, d;

	i %= cfg->flows;
	memset(f, 0, sizeof(*f));
	f->family = nth_bit(cfg->families, i % nfam);
	f->proto = nth_bit(cfg->protos, (i / nfam) % nproto);
	/* every (family, protocol) pair walks the same odometer of tuples */
	t = i / (nfam * nproto);
	f->sport = (uint16_t)(cfg->sport + t % cfg->sport_len);
	t /= cfg->sport_len;
	f->dport = (uint16_t)(cfg->dport + t % cfg->dport_len);
	t /= cfg->dport_len;
	if (f->family == NFTDP_GEN_IPV4) {
		s = (uint32_t)(t % cfg->src4_len);
		t /= cfg->src4_len;
		d = (uint32_t)(t % cfg->dst4_len);
		put_be32(f->src, cfg->src4 + s);
		put_be32(f->dst, cfg->dst4 + d);
	} else {
		s = (uint32_t)(t % cfg->src6.len);
		t /= cfg->src6.len;
		d = (uint32_t)(t % cfg->dst6.len);
		addr6(f->src, &cfg->src6, s);
		addr6(f->dst, &cfg->dst6, d);
	}
	if (f->proto == NFTDP_GEN_ICMP)
		f->dport = 0; /* the echo id is in sport */
	f->steps = gen_flow_steps(cfg, f->proto);
}
