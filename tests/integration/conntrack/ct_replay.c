// SPDX-License-Identifier: BSD-3-Clause
/*
 * ct_replay: run IP packets (one hex line each, from the IP header on)
 * through one conntrack shard as the kernel's forward path would (conntrack
 * at prerouting, every packet accepted and confirmed) and print the ct
 * state each packet had: new, established, related, invalid, untracked.
 * The kernel-differential test (ct_kernel.py) compares these lines with
 * what the kernel's `ct state` counters saw for the same packets.
 *
 * With --burst N the packets go through nftdp_ct_in_burst and
 * nftdp_ct_confirm_burst N at a time (states only, one clock per burst).
 * A line "sleep MS" advances the clock, "at MS" sets it (ms after start). With --table each line
 * also lists the whole table after the packet, as /proc/net/nf_conntrack shows it (protocol, TCP
 * state, timeout, tuples, [UNREPLIED], [ASSURED]), entries separated by " ; ".
 *
 * With --nat it also runs the NAT steps of a router with the ruleset of
 * ct_nat_kernel.py and prints the packet as it leaves:
 *   prerouting:  ip daddr 10.2.0.100 tcp dport 80 dnat to 10.2.0.2:8080
 *                ip6 daddr fd02::100 tcp dport 80 dnat to [fd02::2]:8080
 *   postrouting: ip saddr 10.1.0.0/24 oif "f1" masquerade   (f1: 10.2.0.1)
 *                ip6 saddr fd01::/64 oif "f1" masquerade    (f1: fd02::1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <linux/netfilter/nf_nat.h>

#include "nftdp_conntrack.h"

static bool f1_addr(void *arg, uint32_t ifindex, uint8_t nfproto, void *addr16)
{
	(void)arg;
	if (ifindex != 2)
		return false;
	if (nfproto == NFPROTO_IPV6)
		return inet_pton(AF_INET6, "fd02::1", addr16) == 1;
	return inet_pton(AF_INET, "10.2.0.1", addr16) == 1;
}

/* the ruleset's nat chains, for a packet whose connection is new */
static unsigned int nat_steps(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt)
{
	const uint8_t *ip = pkt->data + pkt->nh_off, *th = pkt->data + pkt->th_off;
	bool v6 = pkt->nfproto == NFPROTO_IPV6;
	const uint8_t *saddr = ip + (v6 ? 8 : 12), *daddr = ip + (v6 ? 24 : 16);
	uint8_t vip[16], client_net[16], server_net[16];
	int af = v6 ? AF_INET6 : AF_INET;
	size_t net_len = v6 ? 8 : 3;
	unsigned int v;

	inet_pton(af, v6 ? "fd02::100" : "10.2.0.100", vip);
	inet_pton(af, v6 ? "fd01::" : "10.1.0.0", client_net);
	inet_pton(af, v6 ? "fd02::" : "10.2.0.0", server_net);
	if (nftdp_ct_nat_need_chains(pkt, NF_INET_PRE_ROUTING) &&
	    !memcmp(daddr, vip, v6 ? 16 : 4) && pkt->l4proto == IPPROTO_TCP && th[2] == 0 &&
	    th[3] == 80) {
		struct nftdp_ct_nat_range r = {.flags = NF_NAT_RANGE_MAP_IPS |
							NF_NAT_RANGE_PROTO_SPECIFIED};

		inet_pton(af, v6 ? "fd02::2" : "10.2.0.2", r.min_addr.u8);
		r.max_addr = r.min_addr;
		r.min_proto = r.max_proto = htons(8080);
		if (nftdp_ct_nat_setup(s, pkt, &r, NFTDP_CT_MANIP_DST) != NF_ACCEPT)
			return NF_DROP;
	}
	v = nftdp_ct_nat_packet(s, pkt, NF_INET_PRE_ROUTING);
	if (v != NF_ACCEPT)
		return v;
	/* routing: the server network leaves on f1 (ifindex 2) */
	pkt->oif = !memcmp(daddr, server_net, net_len) ? 2 : 1;
	if (nftdp_ct_nat_need_chains(pkt, NF_INET_POST_ROUTING) &&
	    !memcmp(saddr, client_net, net_len) && pkt->oif == 2) {
		struct nftdp_ct_nat_range r = {0};

		if (nftdp_ct_nat_masquerade(s, pkt, &r) != NF_ACCEPT)
			return NF_DROP;
	}
	return nftdp_ct_nat_packet(s, pkt, NF_INET_POST_ROUTING);
}

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
	case 1u << 0:
		return "invalid";
	case 1u << 1:
		return "established";
	case 1u << 2:
		return "related";
	case 1u << 3:
		return "new";
	case 1u << 6:
		return "untracked";
	default:
		return "?";
	}
}

static const char *proto_name(uint8_t p)
{
	switch (p) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_GRE:
		return "gre";
	case IPPROTO_SCTP:
		return "sctp";
	default:
		return "unknown";
	}
}

static const char *const tcp_names[] = {"NONE",	    "SYN_SENT",	  "SYN_RECV", "ESTABLISHED",
					"FIN_WAIT", "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT",
					"CLOSE",    "SYN_SENT2"};

static void print_tuple(const struct nftdp_ct_tuple *t)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	int af = t->l3proto == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
	uint8_t tc[2];

	inet_ntop(af, t->src.u8, a, sizeof(a));
	inet_ntop(af, t->dst.u8, b, sizeof(b));
	printf(" src=%s dst=%s", a, b);
	memcpy(tc, &t->dport, 2);
	if (t->l4proto == IPPROTO_ICMP || t->l4proto == IPPROTO_ICMPV6)
		printf(" type=%u code=%u id=%u", tc[0], tc[1], ntohs(t->sport));
	else if (t->l4proto == IPPROTO_TCP || t->l4proto == IPPROTO_UDP ||
		 t->l4proto == IPPROTO_SCTP)
		printf(" sport=%u dport=%u", ntohs(t->sport), ntohs(t->dport));
}

static int print_entry(const struct nftdp_ct_info *info, void *arg)
{
	(void)arg;
	printf(" ; %s %u", proto_name(info->tuple[0].l4proto), info->timeout_s);
	if (info->tuple[0].l4proto == IPPROTO_TCP)
		printf(" %s", tcp_names[info->tcp.state]);
	print_tuple(&info->tuple[0]);
	if (!(info->status & IPS_SEEN_REPLY))
		printf(" [UNREPLIED]");
	print_tuple(&info->tuple[1]);
	if (info->status & IPS_ASSURED)
		printf(" [ASSURED]");
	return 0;
}

/* the same packets, n at a time through the burst calls */
static int run_bursts(struct nftdp_ct_shard *s, FILE *f, unsigned int n)
{
	static uint8_t bufs[NFTDP_VM_BURST_MAX][4096];
	static char line[8192];
	struct nftdp_vm_pkt pkts[NFTDP_VM_BURST_MAX], *pp[NFTDP_VM_BURST_MAX];
	unsigned int verdicts[NFTDP_VM_BURST_MAX], k = 0, i;
	uint64_t now = 1000, next = 1000;
	bool more = true;

	for (i = 0; i < n; i++)
		pp[i] = &pkts[i];
	while (more) {
		more = fgets(line, sizeof(line), f) != NULL;
		if (more && !strncmp(line, "at ", 3)) {
			next = 1000 + strtoull(line + 3, NULL, 10);
			continue;
		}
		if (more) {
			int len = unhex(line, bufs[k], sizeof(bufs[k]));

			if (len <= 0)
				continue;
			if (!k)
				now = next;
			nftdp_vm_pkt_init(&pkts[k], bufs[k], (uint32_t)len, -1, 0);
			nftdp_vm_pkt_parse_ip(&pkts[k]);
			pkts[k].hook = NF_INET_PRE_ROUTING;
			if (++k < n)
				continue;
		}
		if (!k)
			break;
		nftdp_ct_in_burst(s, pp, k, verdicts, now);
		for (i = 0; i < k; i++) {
			uint32_t st = pkts[i].ct	     ? pkts[i].ct_ops->state(pkts[i].ct)
				      : pkts[i].ct_untracked ? 1u << 6
							     : 1u << 0;

			printf("%s\n", state_name(st));
			verdicts[i] = NF_ACCEPT;
		}
		nftdp_ct_confirm_burst(s, pp, k, verdicts);
		k = 0;
	}
	fclose(f);
	nftdp_ct_shard_destroy(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct nftdp_ct_config cfg = {.max_entries = 4096, .hash_seed = 1, .ifaddr = f1_addr};
	bool nat = argc == 3 && !strcmp(argv[1], "--nat");
	bool table = argc == 3 && !strcmp(argv[1], "--table");
	unsigned int burst = argc == 4 && !strcmp(argv[1], "--burst") ? (unsigned)atoi(argv[2]) : 0;
	struct nftdp_ct_shard *s;
	static char line[8192];
	static uint8_t buf[4096];
	uint64_t now = 1000;
	FILE *f;

	if ((argc != 2 && !nat && !table && !(burst && burst <= NFTDP_VM_BURST_MAX)) ||
	    !(f = fopen(argv[argc - 1], "r"))) {
		fprintf(stderr, "usage: ct_replay [--nat|--table|--burst N] PACKETS.hex\n");
		return 2;
	}
	if (nftdp_ct_shard_create(&cfg, &s))
		return 1;
	if (burst)
		return run_bursts(s, f, burst);
	while (fgets(line, sizeof(line), f)) {
		struct nftdp_vm_pkt pkt;
		int n = unhex(line, buf, sizeof(buf));
		uint32_t st;

		if (!strncmp(line, "sleep ", 6)) {
			now += strtoull(line + 6, NULL, 10); /* the kernel side waits as long */
			continue;
		}
		if (!strncmp(line, "at ", 3)) {
			/* when the kernel saw the next packet, ms after the first */
			now = 1000 + strtoull(line + 3, NULL, 10);
			continue;
		}
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
		if (nat) {
			unsigned int v = nat_steps(s, &pkt);

			printf("%s ", state_name(st));
			if (v != NF_ACCEPT)
				printf("dropped");
			for (int i = 0; v == NF_ACCEPT && i < n; i++)
				printf("%02x", buf[i]);
			nftdp_ct_confirm(s, &pkt, v);
			nftdp_ct_walk(s, now, print_entry, NULL);
			printf("\n");
		} else {
			printf("%s", state_name(st));
			nftdp_ct_confirm(s, &pkt, NF_ACCEPT);
			if (table)
				nftdp_ct_walk(s, now, print_entry, NULL);
			printf("\n");
		}
		now += 10;
	}
	fclose(f);
	nftdp_ct_shard_destroy(s);
	return 0;
}
