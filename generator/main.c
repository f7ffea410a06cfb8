/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp-gen: command line, modes and reports. --pcap-out writes the stream
 * to a file without starting the EAL (no hugepages, no ports); otherwise the
 * EAL starts and gen_port.c sends and receives on ports.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "gen_priv.h"

static volatile int quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void usage(const char *prog)
{
	fprintf(
	    stderr,
	    "usage: %s [EAL args] -- [traffic] (--pcap-out FILE --count N | [live])\n"
	    "traffic:\n"
	    "  --flows N            distinct flows (1)\n"
	    "  --family 4|6|46      address families, alternating per flow (4)\n"
	    "  --proto LIST         some of tcp,udp,icmp, alternating per flow (udp)\n"
	    "  --size N|imix        data frame bytes without FCS, 60..1514 (64)\n"
	    "  --data N             data packets per flow round, 1..64 (1)\n"
	    "  --no-replies         no server-side packets (SYN-ACK, FIN, echo reply)\n"
	    "  --syn-flood          TCP flows send their SYN only, never completing\n"
	    "  --mid-stream         TCP flows without handshake or FIN, as conntrack picks them\n"
	    "                       up: each data segment, then the server's ACK of it\n"
	    "  --seed N             payload, ISNs, IMIX choices (1)\n"
	    "  --src A[-B] --dst A[-B]     IPv4 ranges (10.0.0.1, 10.1.0.1)\n"
	    "  --src6 A[-B] --dst6 A[-B]   IPv6 ranges, low 32 bits (2001:db8::1, 2001:db8:1::1)\n"
	    "  --sport L[-H] --dport L[-H] port ranges (1024, 5000)\n"
	    "  --src-mac M --dst-mac M --ttl N\n"
	    "offline:\n"
	    "  --pcap-out FILE --count N   write packets 0..N-1 to FILE (no EAL)\n"
	    "live:\n"
	    "  --tx-port P|none --rx-port P|none   (0; 1 if there are two ports, else 0)\n"
	    "  --rate MPPS|max      transmit rate (max)\n"
	    "  --count N            packets to send (0: until --duration)\n"
	    "  --duration S         seconds to send (or, as a pure sink, to listen)\n"
	    "  --burst N            (32)     --drain-ms MS  idle rx before the end (200)\n"
	    "  --link-wait-ms MS    wait for links up (5000)\n"
	    "  --templates N        prebuilt frames, packet j uses frame j %% N\n"
	    "  --json FILE          write the report as JSON\n"
	    "  --ring-pair          add two ports joined by rings (tx on one, rx on the other)\n"
	    "  --linger-ms MS       after the report, keep the ports open, unpolled, for MS ms\n"
	    "                       or until SIGTERM (the peer can stop first; see docs)\n",
	    prog);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v > max || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

/* "A" or "A-B" of IPv4 addresses */
static int parse_range4(const char *s, uint32_t *base, uint32_t *len)
{
	char buf[64], *dash;
	struct in_addr a, b;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash != NULL)
		*dash++ = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	b = a;
	if (dash != NULL && inet_pton(AF_INET, dash, &b) != 1)
		return -EINVAL;
	if (ntohl(b.s_addr) < ntohl(a.s_addr))
		return -EINVAL;
	*base = ntohl(a.s_addr);
	*len = ntohl(b.s_addr) - ntohl(a.s_addr) + 1;
	return *len == 0 ? -EINVAL : 0; /* the whole space does not fit */
}

/* "A" or "A-B" of IPv6 addresses that differ in the low 32 bits only */
static int parse_range6(const char *s, struct nftdp_gen_range6 *r)
{
	char buf[128], *dash;
	uint8_t a[16], b[16];
	uint32_t lo, hi;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	/* IPv6 has no '-', so the first one separates */
	dash = strchr(buf, '-');
	if (dash != NULL)
		*dash++ = '\0';
	if (inet_pton(AF_INET6, buf, a) != 1)
		return -EINVAL;
	memcpy(b, a, 16);
	if (dash != NULL && inet_pton(AF_INET6, dash, b) != 1)
		return -EINVAL;
	if (memcmp(a, b, 12) != 0)
		return -EINVAL;
	lo = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
	hi = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
	if (hi < lo || hi - lo == UINT32_MAX)
		return -EINVAL;
	memcpy(r->base, a, 16);
	r->len = hi - lo + 1;
	return 0;
}

static int parse_ports(const char *s, uint16_t *base, uint16_t *len)
{
	char *end;
	unsigned long lo, hi;

	errno = 0;
	lo = strtoul(s, &end, 10);
	hi = lo;
	if (*end == '-')
		hi = strtoul(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || lo > 65535 || hi > 65535 || hi < lo)
		return -EINVAL;
	*base = (uint16_t)lo;
	*len = (uint16_t)(hi - lo + 1 > 65535 ? 65535 : hi - lo + 1);
	return 0;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int v[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

static int parse_protos(const char *s, uint8_t *mask)
{
	char buf[64], *tok, *save;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "tcp") == 0)
			*mask |= NFTDP_GEN_TCP;
		else if (strcmp(tok, "udp") == 0)
			*mask |= NFTDP_GEN_UDP;
		else if (strcmp(tok, "icmp") == 0)
			*mask |= NFTDP_GEN_ICMP;
		else
			return -EINVAL;
	}
	return *mask ? 0 : -EINVAL;
}

static int parse_port_id(const char *s, int *port)
{
	uint64_t v;

	if (strcmp(s, "none") == 0) {
		*port = -1;
		return 0;
	}
	if (parse_u64(s, RTE_MAX_ETHPORTS - 1, &v) != 0)
		return -EINVAL;
	*port = (int)v;
	return 0;
}

struct opts {
	struct nftdp_gen_cfg cfg;
	struct gen_live live;
	const char *pcap_out, *json;
	unsigned int linger_ms;
	bool tx_set, rx_set, ring_pair;
};

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
	    {"flows", required_argument, NULL, 'f'},
	    {"family", required_argument, NULL, 'F'},
	    {"proto", required_argument, NULL, 'p'},
	    {"size", required_argument, NULL, 'z'},
	    {"imix", no_argument, NULL, 'I'},
	    {"data", required_argument, NULL, 'D'},
	    {"no-replies", no_argument, NULL, 'R'},
	    {"syn-flood", no_argument, NULL, 'Y'},
	    {"mid-stream", no_argument, NULL, 'K'},
	    {"seed", required_argument, NULL, 'S'},
	    {"src", required_argument, NULL, 's'},
	    {"dst", required_argument, NULL, 'd'},
	    {"src6", required_argument, NULL, '6'},
	    {"dst6", required_argument, NULL, '7'},
	    {"sport", required_argument, NULL, 'a'},
	    {"dport", required_argument, NULL, 'b'},
	    {"src-mac", required_argument, NULL, 'm'},
	    {"dst-mac", required_argument, NULL, 'M'},
	    {"ttl", required_argument, NULL, 'T'},
	    {"pcap-out", required_argument, NULL, 'o'},
	    {"count", required_argument, NULL, 'c'},
	    {"tx-port", required_argument, NULL, 't'},
	    {"rx-port", required_argument, NULL, 'r'},
	    {"rate", required_argument, NULL, 'x'},
	    {"duration", required_argument, NULL, 'u'},
	    {"burst", required_argument, NULL, 'B'},
	    {"drain-ms", required_argument, NULL, 'w'},
	    {"link-wait-ms", required_argument, NULL, 'l'},
	    {"templates", required_argument, NULL, 'L'},
	    {"json", required_argument, NULL, 'j'},
	    {"ring-pair", no_argument, NULL, 'P'},
	    {"linger-ms", required_argument, NULL, 'G'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct nftdp_gen_cfg *cfg = &o->cfg;
	struct gen_live *live = &o->live;
	const char *why;
	uint64_t v;
	int c, li = 0, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
		switch (c) {
		case 'f':
			rc = parse_u64(optarg, UINT32_MAX, &v);
			cfg->flows = (uint32_t)v;
			break;
		case 'F':
			if (strcmp(optarg, "4") == 0)
				cfg->families = NFTDP_GEN_IPV4;
			else if (strcmp(optarg, "6") == 0)
				cfg->families = NFTDP_GEN_IPV6;
			else if (strcmp(optarg, "46") == 0)
				cfg->families = NFTDP_GEN_IPV4 | NFTDP_GEN_IPV6;
			else
				rc = -EINVAL;
			break;
		case 'p':
			rc = parse_protos(optarg, &cfg->protos);
			break;
		case 'z':
			if (strcmp(optarg, "imix") == 0) {
				cfg->imix = true;
			} else {
				rc = parse_u64(optarg, NFTDP_GEN_FRAME_MAX, &v);
				cfg->size = (uint16_t)v;
				cfg->imix = false;
			}
			break;
		case 'I':
			cfg->imix = true;
			break;
		case 'D':
			rc = parse_u64(optarg, NFTDP_GEN_DATA_MAX, &v);
			cfg->data = (uint16_t)v;
			break;
		case 'R':
			cfg->replies = false;
			break;
		case 'Y':
			cfg->syn_flood = true;
			break;
		case 'K':
			cfg->mid_stream = true;
			break;
		case 'S':
			rc = parse_u64(optarg, UINT64_MAX, &cfg->seed);
			break;
		case 's':
			rc = parse_range4(optarg, &cfg->src4, &cfg->src4_len);
			break;
		case 'd':
			rc = parse_range4(optarg, &cfg->dst4, &cfg->dst4_len);
			break;
		case '6':
			rc = parse_range6(optarg, &cfg->src6);
			break;
		case '7':
			rc = parse_range6(optarg, &cfg->dst6);
			break;
		case 'a':
			rc = parse_ports(optarg, &cfg->sport, &cfg->sport_len);
			break;
		case 'b':
			rc = parse_ports(optarg, &cfg->dport, &cfg->dport_len);
			break;
		case 'm':
			rc = parse_mac(optarg, cfg->src_mac);
			break;
		case 'M':
			rc = parse_mac(optarg, cfg->dst_mac);
			break;
		case 'T':
			rc = parse_u64(optarg, 255, &v);
			cfg->ttl = (uint8_t)v;
			break;
		case 'o':
			o->pcap_out = optarg;
			break;
		case 'c':
			rc = parse_u64(optarg, UINT64_MAX, &live->count);
			break;
		case 't':
			rc = parse_port_id(optarg, &live->tx_port);
			o->tx_set = true;
			break;
		case 'r':
			rc = parse_port_id(optarg, &live->rx_port);
			o->rx_set = true;
			break;
		case 'x': {
			char *end;

			if (strcmp(optarg, "max") == 0) {
				live->rate_mpps = 0;
				break;
			}
			live->rate_mpps = strtod(optarg, &end);
			if (*end != '\0' || !(live->rate_mpps > 0))
				rc = -EINVAL;
			break;
		}
		case 'u': {
			char *end;

			live->duration_s = strtod(optarg, &end);
			if (*end != '\0' || !(live->duration_s >= 0))
				rc = -EINVAL;
			break;
		}
		case 'B':
			rc = parse_u64(optarg, GEN_BURST_MAX, &v);
			live->burst = (unsigned int)v;
			if (v == 0)
				rc = -EINVAL;
			break;
		case 'w':
			rc = parse_u64(optarg, 3600000, &v);
			live->drain_ms = (unsigned int)v;
			break;
		case 'l':
			rc = parse_u64(optarg, 3600000, &v);
			live->link_wait_ms = (unsigned int)v;
			break;
		case 'L':
			rc = parse_u64(optarg, 1u << 24, &v);
			live->templates = (uint32_t)v;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'P':
			o->ring_pair = true;
			break;
		case 'G':
			rc = parse_u64(optarg, 3600000, &v);
			o->linger_ms = (unsigned int)v;
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -EINVAL;
		}
		if (rc != 0) {
			fprintf(stderr, "nftdp-gen: bad value '%s' for --%s\n", optarg,
				longopts[li].name);
			return rc;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nftdp-gen: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (nftdp_gen_cfg_check(cfg, &why) != 0) {
		fprintf(stderr, "nftdp-gen: %s\n", why);
		return -EINVAL;
	}
	if (o->pcap_out != NULL && live->count == 0) {
		fprintf(stderr, "nftdp-gen: --pcap-out needs --count\n");
		return -EINVAL;
	}
	return 0;
}

/* "name": {"port": count, ...} of the non-zero counts */
static void dport_map(FILE *f, const char *name, const uint64_t *c, const char *sep)
{
	bool first = true;

	fprintf(f, "    \"%s\": {", name);
	for (unsigned int p = 0; p < 65536; p++) {
		if (c[p] == 0)
			continue;
		fprintf(f, "%s\"%u\": %" PRIu64, first ? "" : ", ", p, c[p]);
		first = false;
	}
	fprintf(f, "}%s\n", sep);
}

static void report(FILE *f, const struct opts *o, const struct gen_result *r, bool json)
{
	double hz = (double)r->tsc_hz;
	double txs = (double)r->tx_tsc / hz, rxs = (double)r->rx_tsc / hz;
	double txm = txs > 0 ? (double)r->tx_packets / txs / 1e6 : 0;
	double rxm = rxs > 0 ? (double)r->rx_packets / rxs / 1e6 : 0;
	int64_t lost = o->live.rx_port >= 0 && o->live.tx_port >= 0
			   ? (int64_t)r->tx_packets - (int64_t)r->rx_packets
			   : 0;
	const struct nftdp_gen_hist *h = &r->hist;

	if (!json) {
		fprintf(f,
			"tx %" PRIu64 " packets %" PRIu64 " bytes %.3f s %.3f Mpps\n"
			"rx %" PRIu64 " packets %" PRIu64 " bytes %.3f s %.3f Mpps\n"
			"lost %" PRId64 " reordered %" PRIu64 " other %" PRIu64 "\n"
			"latency ns: samples %" PRIu64 " min %" PRIu64 " p50 %" PRIu64
			" p99 %" PRIu64 " p99.9 %" PRIu64 " max %" PRIu64 "\n",
			r->tx_packets, r->tx_bytes, txs, txm, r->rx_packets, r->rx_bytes, rxs, rxm,
			lost, r->reordered, r->rx_other, h->count, h->count ? h->min : 0,
			nftdp_gen_hist_quantile(h, 0.5), nftdp_gen_hist_quantile(h, 0.99),
			nftdp_gen_hist_quantile(h, 0.999), h->max);
		return;
	}
	fprintf(f,
		"{\n  \"tx_start_ns\": %" PRIu64 ",\n"
		"  \"tx_packets\": %" PRIu64 ", \"tx_bytes\": %" PRIu64
		", \"tx_seconds\": %.6f, \"tx_mpps\": %.4f,\n"
		"  \"rx_packets\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
		", \"rx_seconds\": %.6f, \"rx_mpps\": %.4f,\n"
		"  \"lost\": %" PRId64 ", \"loss_ratio\": %.9f, \"reordered\": %" PRIu64
		", \"rx_other\": %" PRIu64 ",\n"
		"  \"rx_by_proto\": {\"tcp\": %" PRIu64 ", \"udp\": %" PRIu64 ", \"icmp\": %" PRIu64
		"},\n"
		"  \"latency_ns\": {\"samples\": %" PRIu64 ", \"min\": %" PRIu64
		", \"mean\": %.1f, \"p50\": %" PRIu64 ", \"p99\": %" PRIu64 ", \"p99.9\": %" PRIu64
		", \"max\": %" PRIu64 "},\n"
		"  \"by_dport\": {\n",
		r->tx_start_ns, r->tx_packets, r->tx_bytes, txs, txm, r->rx_packets, r->rx_bytes,
		rxs, rxm, lost, r->tx_packets ? (double)lost / (double)r->tx_packets : 0.0,
		r->reordered, r->rx_other, r->rx_tcp, r->rx_udp, r->rx_icmp, h->count,
		h->count ? h->min : 0, h->count ? (double)h->sum / (double)h->count : 0.0,
		nftdp_gen_hist_quantile(h, 0.5), nftdp_gen_hist_quantile(h, 0.99),
		nftdp_gen_hist_quantile(h, 0.999), h->max);
	dport_map(f, "tx_tcp", r->tx_by_dport, ",");
	dport_map(f, "tx_udp", r->tx_by_dport + 65536, ",");
	dport_map(f, "rx_tcp", r->by_dport, ",");
	dport_map(f, "rx_udp", r->by_dport + 65536, "");
	fprintf(f, "  }\n}\n");
}

/* FILE.tmp, then renamed: whoever waits for FILE sees it whole */
static int write_json(const struct opts *o, const struct gen_result *res)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o->json) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (f == NULL) {
		perror(tmp);
		return -errno;
	}
	report(f, o, res, true);
	if (fclose(f) != 0 || rename(tmp, o->json) != 0) {
		perror(o->json);
		return -EIO;
	}
	return 0;
}

/* the arguments after "--", or all of them if there is none */
static int after_dashes(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct gen_result *res;
	bool offline = false;
	int dash = after_dashes(argc, argv), n, rc;

	memset(&o, 0, sizeof(o));
	nftdp_gen_cfg_init(&o.cfg);
	o.live.tx_port = 0;
	o.live.rx_port = 0;
	o.live.burst = 32;
	o.live.drain_ms = 200;
	o.live.link_wait_ms = 5000;
	for (int i = dash + 1; i < argc; i++)
		if (strcmp(argv[i], "--pcap-out") == 0 || strncmp(argv[i], "--pcap-out=", 11) == 0)
			offline = true;

	if (offline) {
		/* no EAL: argv[dash] becomes the program name for getopt */
		argv[dash] = argv[0];
		if (parse_args(argc - dash, argv + dash, &o) != 0)
			return 2;
		rc = nftdp_gen_write_pcap(&o.cfg, o.live.count, o.pcap_out);
		return rc == 0 ? 0 : 1;
	}

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "nftdp-gen: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argv[n] = argv[0];
	if (parse_args(argc - n, argv + n, &o) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	if (o.ring_pair && (rc = gen_ring_pair_create()) != 0) {
		fprintf(stderr, "nftdp-gen: ring pair: %s\n", strerror(-rc));
		rte_eal_cleanup();
		return 1;
	}
	if (!o.rx_set && rte_eth_dev_count_avail() >= 2)
		o.live.rx_port = 1;
	if (o.live.tx_port < 0 && o.live.rx_port < 0) {
		fprintf(stderr, "nftdp-gen: neither --tx-port nor --rx-port\n");
		rte_eal_cleanup();
		return 2;
	}
	if (o.live.tx_port >= 0 && o.live.count == 0 && o.live.duration_s == 0) {
		fprintf(stderr, "nftdp-gen: live tx needs --count or --duration\n");
		rte_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	res = calloc(1, sizeof(*res));
	if (res == NULL) {
		rte_eal_cleanup();
		return 1;
	}
	rc = gen_live_run(&o.cfg, &o.live, &quit, res);
	if (rc == 0) {
		report(stdout, &o, res, false);
		if (o.json != NULL && write_json(&o, res) != 0)
			rc = -EIO;
	}
	free(res);
	fflush(stdout);
	/*
	 * A memif peer that polls while we disconnect can fault on rings
	 * being unmapped; lingering lets the peer stop first. Nothing polls
	 * our ports meanwhile, so its disconnect is safe for us.
	 */
	for (unsigned int ms = 0; ms < o.linger_ms && !quit; ms += 10)
		rte_delay_us_sleep(10000);
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (rte_eth_dev_is_valid_port(p)) {
			rte_eth_dev_stop(p);
			rte_eth_dev_close(p);
		}
	rte_eal_cleanup();
	return rc == 0 ? 0 : 1;
}
