/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp-gen: the traffic generator and sink that bench/ and the VNF tests
 * use instead of identical null packets.
 *
 * What it does: a configuration (struct nftdp_gen_cfg) describes a set of
 * flows (IPv4 and/or IPv6; TCP connections with handshake, data and FIN,
 * or picked up mid-stream; UDP datagrams, ICMP echo), their address and
 * port ranges and their packet sizes (fixed or IMIX). The stream is a pure
 * function of the configuration and packet index: packet j is step
 * (j / flows) of flow (j % flows), so the same configuration and seed always
 * give the same bytes, and a test can derive what a ruleset must pass from
 * the configuration alone.
 *
 * Usage:
 *   nftdp_gen_cfg_init(&cfg);  (set fields)  nftdp_gen_cfg_check(&cfg);
 *   for each j: nftdp_gen_build(&cfg, j, buf, sizeof(buf), &meta);
 *   live tx: nftdp_gen_stamp(buf, &meta, seq, tsc) just before sending;
 *   sink:    nftdp_gen_parse(buf, len, &rx) on what comes back;
 *            nftdp_gen_hist_add() / nftdp_gen_hist_quantile() for latency.
 *
 * Threading: everything here is pure and re-entrant; the configuration is
 * read-only once checked. A histogram has one writer. None of these calls
 * needs the DPDK EAL (they are unit-tested without it); the live part,
 * ports and lcores, is in gen_port.c and main.c.
 */
#ifndef NFTDP_GEN_H
#define NFTDP_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/** Protocol mask bits of nftdp_gen_cfg.protos. */
#define NFTDP_GEN_TCP 0x1
#define NFTDP_GEN_UDP 0x2
#define NFTDP_GEN_ICMP 0x4

/** Family mask bits of nftdp_gen_cfg.families. */
#define NFTDP_GEN_IPV4 0x1
#define NFTDP_GEN_IPV6 0x2

/** Largest frame built (no jumbo frames), without FCS. */
#define NFTDP_GEN_FRAME_MAX 1514
/** Smallest Ethernet frame without FCS; shorter frames are zero-padded. */
#define NFTDP_GEN_FRAME_MIN 60
/** Most data packets per flow (keeps a TCP sequence number O(1)-ish). */
#define NFTDP_GEN_DATA_MAX 64

/** The stamp at the start of the L4 payload: magic, sequence, TSC. */
#define NFTDP_GEN_STAMP_MAGIC 0x4e46474eu /* "NFGN" */
#define NFTDP_GEN_STAMP_SIZE 20

/** An address range: base and number of consecutive addresses (>= 1). */
struct nftdp_gen_range6 {
	uint8_t base[16];
	uint32_t len;
};

/** Traffic description; nftdp_gen_cfg_init() fills the defaults. */
struct nftdp_gen_cfg {
	uint32_t flows;	     /**< distinct flows (>= 1) */
	uint8_t families;    /**< NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6 */
	uint8_t protos;	     /**< NFTDP_GEN_TCP | _UDP | _ICMP */
	bool imix;	     /**< data packet sizes 7:4:1 of 64/576/1500 */
	uint16_t size;	     /**< fixed data frame size (bytes, no FCS) */
	uint16_t data;	     /**< data packets per flow, 1..NFTDP_GEN_DATA_MAX */
	bool replies;	     /**< also the server's packets (SYN-ACK, FIN, echo reply) */
	bool syn_flood;	     /**< a TCP round is its SYN alone (a new source each flow) */
	bool mid_stream;     /**< TCP without handshake or FIN: data and the server's ACKs */
	uint64_t seed;	     /**< payload bytes, ISNs, IMIX choices, IP ids */
	uint32_t src4, dst4; /**< IPv4 range bases, host order */
	uint32_t src4_len, dst4_len;	    /**< IPv4 range lengths */
	struct nftdp_gen_range6 src6, dst6; /**< IPv6 ranges (low 32 bits vary) */
	uint16_t sport, sport_len;	    /**< source port base and count */
	uint16_t dport, dport_len;	    /**< destination port base and count */
	uint8_t src_mac[6], dst_mac[6];
	uint8_t ttl; /**< IPv4 TTL and IPv6 hop limit */
};

/** The 5-tuple and kind of one flow (nftdp_gen_flow()). */
struct nftdp_gen_flow {
	uint8_t family;	       /**< NFTDP_GEN_IPV4 or NFTDP_GEN_IPV6 */
	uint8_t proto;	       /**< NFTDP_GEN_TCP, _UDP or _ICMP */
	uint8_t src[16];       /**< client address; IPv4 in the first 4 bytes */
	uint8_t dst[16];       /**< server address */
	uint16_t sport, dport; /**< host order; ICMP: id in sport, 0 in dport */
	uint16_t steps;	       /**< packets in one round of this flow */
};

/** Where the builder put things, for nftdp_gen_stamp(). */
struct nftdp_gen_meta {
	uint16_t len;	    /**< frame length */
	uint16_t stamp_off; /**< offset of the stamp, 0 if none fits */
	uint16_t csum_off;  /**< offset of the L4 checksum */
	bool udp;	    /**< a computed 0 checksum is sent as 0xffff */
	bool reply;	    /**< server-to-client packet */
	uint32_t flow;	    /**< flow index */
	uint16_t step;	    /**< step within the flow's round */
};

/** What the sink learned from one received frame (nftdp_gen_parse()). */
struct nftdp_gen_rx {
	uint8_t family;	 /**< 0 if not IPv4/IPv6 */
	uint8_t l4proto; /**< IP protocol number */
	uint16_t dport;	 /**< TCP/UDP destination port, host order; 0 otherwise */
	bool stamped;	 /**< a valid stamp was found */
	uint64_t seq, tsc;
};

/**
 * Fill @p cfg with the defaults: 1 flow, IPv4 UDP, 64-byte frames, one data
 * packet per flow, replies on, seed 1, 10.0.0.1 -> 10.1.0.1, ports 1024 ->
 * 5000, 2001:db8::1 -> 2001:db8:1::1, ttl 64, locally administered MACs.
 * Control path.
 */
void nftdp_gen_cfg_init(struct nftdp_gen_cfg *cfg);

/**
 * Validate @p cfg.
 * @return 0, or -EINVAL with a reason in @p why (may be NULL).
 */
int nftdp_gen_cfg_check(const struct nftdp_gen_cfg *cfg, const char **why);

/**
 * The flow with index @p i (taken modulo cfg->flows). Family and protocol
 * alternate with i; ports and addresses count up like an odometer: sport
 * fastest, then dport, then source, then destination address.
 */
void nftdp_gen_flow(const struct nftdp_gen_cfg *cfg, uint32_t i, struct nftdp_gen_flow *f);

/**
 * Build stream packet @p j into @p buf (@p size bytes, at least
 * NFTDP_GEN_FRAME_MAX). Checksums are valid; a stamp area, if it fits, holds
 * sequence j and TSC 0.
 * @return frame length, or 0 if @p size is too small. Thread-safe.
 */
uint16_t nftdp_gen_build(const struct nftdp_gen_cfg *cfg, uint64_t j, uint8_t *buf, size_t size,
			 struct nftdp_gen_meta *meta);

/**
 * Write @p seq and @p tsc into the stamp of a frame built by
 * nftdp_gen_build() (whose stamp still holds what the builder put there, or
 * an earlier stamp) and fix the L4 checksum incrementally (RFC 1624).
 * No-op if the frame has no stamp. Packet path.
 */
void nftdp_gen_stamp(uint8_t *buf, const struct nftdp_gen_meta *meta, uint64_t seq, uint64_t tsc);

/**
 * Parse a received frame of @p len bytes: Ethernet (with up to two VLAN
 * tags), IPv4 or IPv6 (no extension headers), TCP/UDP/ICMP/ICMPv6 and the
 * stamp. Never reads past @p len. Packet path.
 * @return true if the frame is IPv4 or IPv6.
 */
bool nftdp_gen_parse(const uint8_t *buf, uint32_t len, struct nftdp_gen_rx *rx);

/** Frame size of IMIX choice @p r (any 64-bit value): 7:4:1 of 64/576/1500. */
uint16_t nftdp_gen_imix(uint64_t r);

/** A 64-bit mix of @p a and @p b (splitmix64 finaliser); deterministic. */
uint64_t nftdp_gen_hash(uint64_t a, uint64_t b);

/*
 * Latency histogram: log-linear buckets, 32 per power of two above 64 ns,
 * so a reported quantile is within 1/32 of the true value.
 */
#define NFTDP_GEN_HIST_BUCKETS 1280

struct nftdp_gen_hist {
	uint64_t count, sum, min, max;
	uint64_t bucket[NFTDP_GEN_HIST_BUCKETS];
};

/** Empty @p h. */
void nftdp_gen_hist_reset(struct nftdp_gen_hist *h);
/** Add one sample of @p ns nanoseconds. Packet path, one writer. */
void nftdp_gen_hist_add(struct nftdp_gen_hist *h, uint64_t ns);
/** Merge @p from into @p into. */
void nftdp_gen_hist_merge(struct nftdp_gen_hist *into, const struct nftdp_gen_hist *from);
/**
 * The @p q quantile (0 < q <= 1) in ns: the midpoint of the bucket that
 * holds it, clipped to [min, max]. 0 for an empty histogram.
 */
uint64_t nftdp_gen_hist_quantile(const struct nftdp_gen_hist *h, double q);

/**
 * Write packets [0, @p count) of @p cfg to the pcap file @p path (Ethernet,
 * microsecond timestamps 1 us apart).
 * @return 0 or a negative errno (-EIO with a message on stderr).
 */
int nftdp_gen_write_pcap(const struct nftdp_gen_cfg *cfg, uint64_t count, const char *path);

#endif
