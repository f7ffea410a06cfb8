// SPDX-License-Identifier: BSD-3-Clause
/*
 * ct_replay: run IP packets (one hex line each, from the IP header on)
 * through one conntrack shard as the kernel's forward path would (conntrack
 * at prerouting, every packet accepted and confirmed) and print the ct
 * state each packet had: new, established, related, invalid, untracked.
 * The kernel-differential test (ct_kernel.py) compares these lines with
 * what the kernel's `ct state` counters saw for the same packets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nftdp_conntrack.h"

static int unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (s[0] && s[1] && s[0] != '\n' && n < max) {
		unsigned int v;

		if (sscanf(s, "%2x", &v) != 1)
			return -1;
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return (int)n;
}

static const char *state_name(uint32_t st)
{
	switch (st) {
	case 1u << 0: return "invalid";
	case 1u << 1: return "established";
	case 1u << 2: return "related";
	case 1u << 3: return "new";
	case 1u << 6: return "untracked";
	default: return "?";
	}
}

int main(int argc, char **argv)
{
	struct nftdp_ct_config cfg = {.max_entries = 4096, .hash_seed = 1};
	struct nftdp_ct_shard *s;
	static char line[8192];
	static uint8_t buf[4096];
	uint64_t now = 1000;
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: ct_replay PACKETS.hex\n");
		return 2;
	}
	if (nftdp_ct_shard_create(&cfg, &s))
		return 1;
	while (fgets(line, sizeof(line), f)) {
		struct nftdp_vm_pkt pkt;
		int n = unhex(line, buf, sizeof(buf));
		uint32_t st;

		if (n <= 0)
			continue;
		nftdp_vm_pkt_init(&pkt, buf, (uint32_t)n, -1, 0);
		nftdp_vm_pkt_parse_ip(&pkt);
		pkt.hook = NF_INET_PRE_ROUTING;
		nftdp_ct_in(s, &pkt, now);
		if (pkt.ct)
			st = pkt.ct_ops->state(pkt.ct);
		else
			st = pkt.ct_untracked ? 1u << 6 : 1u << 0;
		printf("%s\n", state_name(st));
		nftdp_ct_confirm(s, &pkt, NF_ACCEPT);
		now += 10;
	}
	fclose(f);
	nftdp_ct_shard_destroy(s);
	return 0;
}
