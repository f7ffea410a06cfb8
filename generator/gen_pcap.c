/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The generator's offline mode: the stream written to a pcap file through
 * libpcap, for net_pcap replay (bench/, tests) and for inspection.
 */
#include <errno.h>
#include <stdio.h>

#include <pcap/pcap.h>

#include "nftdp_gen.h"

int nftdp_gen_write_pcap(const struct nftdp_gen_cfg *cfg, uint64_t count, const char *path)
{
	uint8_t buf[NFTDP_GEN_FRAME_MAX];
	struct nftdp_gen_meta meta;
	struct pcap_pkthdr hdr;
	pcap_dumper_t *d;
	pcap_t *p;
	int rc = 0;

	p = pcap_open_dead(DLT_EN10MB, 65535);
	if (p == NULL)
		return -ENOMEM;
	d = pcap_dump_open(p, path);
	if (d == NULL) {
		fprintf(stderr, "nftdp-gen: %s: %s\n", path, pcap_geterr(p));
		pcap_close(p);
		return -EIO;
	}
	for (uint64_t j = 0; j < count; j++) {
		uint16_t len = nftdp_gen_build(cfg, j, buf, sizeof(buf), &meta);

		hdr.ts.tv_sec = (time_t)(j / 1000000);
		hdr.ts.tv_usec = (suseconds_t)(j % 1000000);
		hdr.caplen = len;
		hdr.len = len;
		pcap_dump((u_char *)d, &hdr, buf);
	}
	if (pcap_dump_flush(d) != 0) {
		fprintf(stderr, "nftdp-gen: %s: write failed\n", path);
		rc = -EIO;
	}
	pcap_dump_close(d);
	pcap_close(p);
	return rc;
}
