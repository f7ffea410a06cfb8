/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the generator's files; not part of nftdp_gen.h. */
#ifndef NFTDP_GEN_PRIV_H
#define NFTDP_GEN_PRIV_H

#include "nftdp_gen.h"

/* packets in one round of a flow of protocol proto (NFTDP_GEN_*) */
uint16_t gen_flow_steps(const struct nftdp_gen_cfg *cfg, uint8_t proto);

/* live mode (gen_port.c): what main.c asks for */
struct gen_live {
	int tx_port, rx_port;  /* -1: none */
	double rate_mpps;      /* 0: as fast as the port takes them */
	uint64_t count;	       /* packets to send, 0: until duration */
	double duration_s;     /* 0: until count */
	unsigned int burst;    /* <= GEN_BURST_MAX */
	unsigned int drain_ms; /* stop once rx was idle this long after tx */
	unsigned int link_wait_ms;
	uint32_t templates; /* prebuilt frames; 0: derive */
};

#define GEN_BURST_MAX 256

/* what the live run measured */
struct gen_result {
	uint64_t tx_packets, tx_bytes, tx_tsc;
	uint64_t rx_packets, rx_bytes, rx_tsc;
	uint64_t rx_stamped, rx_other, reordered;
	uint64_t rx_tcp, rx_udp, rx_icmp;
	uint64_t tsc_hz;
	uint64_t tx_start_ns; /* CLOCK_REALTIME when sending began */
	struct nftdp_gen_hist hist;
	/* by destination port: [port] TCP, [65536 + port] UDP */
	uint64_t by_dport[2 * 65536];	 /* received */
	uint64_t tx_by_dport[2 * 65536]; /* sent */
};

/* two ports joined back to back by rings, in this process; 0 or -errno */
int gen_ring_pair_create(void);

/* run the live mode after rte_eal_init(); 0 or a negative errno */
int gen_live_run(const struct nftdp_gen_cfg *cfg, const struct gen_live *live, volatile int *quit,
		 struct gen_result *res);

#endif
