// SPDX-License-Identifier: BSD-3-Clause
/*
 * Route-table rebuild cost, for the live mirror (dataplane/fib.c): in the
 * netns it runs in (bench/route/run.sh fills one), time a new table
 * (rte_fib/rte_fib6 create), a dump into it, a reset of a full table and
 * a refill (what a live update costs with the spare table), and lookups.
 * usage: bench_route [ROUNDS]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/socket.h>

#include <rte_eal.h>

#include "nftdp_route.h"

static double ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
	char *eal[] = {argv[0],	      "--no-huge",     "-m", "2048", "--no-pci",
		       "--no-shconf", "--log-level=3", NULL};
	static const struct nftdp_route_port ports[] = {{"dp0", 1}, {"dp1", 2}};
	struct nftdp_route_table *t;
	struct timespec t0;
	unsigned int n4, n6, rounds = argc > 1 ? (unsigned int)atoi(argv[1]) : 5, size = 0;
	double create = 0, dump = 0, reset = 0, refill = 0, look, look_flow;
	volatile unsigned int hit = 0, hit2 = 0;
	int rc;

	if (rte_eal_init(7, eal) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	/* as dataplane/fib.c: the default size, grown fourfold while full */
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = nftdp_route_table_create_sized(&t, size);
		create = ms_since(&t0);
		if (rc < 0) {
			fprintf(stderr, "create: %s\n", strerror(-rc));
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = nftdp_route_mirror(t, ports, 2);
		dump = ms_since(&t0);
		if (rc == 0)
			break;
		nftdp_route_table_destroy(t);
		if ((rc != -ENOSPC && rc != -EINVAL) || size >= (1u << 22)) {
			fprintf(stderr, "mirror: %s\n", strerror(-rc));
			return 1;
		}
		size = size < 65536 ? 262144 : size * 4;
	}
	nftdp_route_count(t, &n4, &n6);
	for (unsigned int r = 0; r < rounds; r++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = nftdp_route_table_reset(t);
		reset += ms_since(&t0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc |= nftdp_route_mirror(t, ports, 2);
		refill += ms_since(&t0);
		if (rc < 0) {
			/* what dataplane/fib.c does: a new table instead */
			printf("refill %u: %s; a new table instead\n", r, strerror(-rc));
			nftdp_route_table_destroy(t);
			if ((rc = nftdp_route_table_create_sized(&t, size)) < 0 ||
			    (rc = nftdp_route_mirror(t, ports, 2)) < 0) {
				fprintf(stderr, "new table: %s\n", strerror(-rc));
				return 1;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < 1000000; i++)
		hit +=
		    nftdp_route_lookup4(t, __builtin_bswap32(0x0a000000u + i * 2654435761u)) != 0;
	look = ms_since(&t0);
	/* the same through the flow lookup fib and --route use: one branch
	 * more while the rules are the default ones, the rule walk if not */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < 1000000; i++) {
		struct nftdp_route_flow fl = {.iif = 1};
		uint32_t a = __builtin_bswap32(0x0a000000u + i * 2654435761u);

		memcpy(fl.daddr, &a, 4);
		hit2 += nftdp_route_lookup4_flow(t, &fl) != 0;
	}
	look_flow = ms_since(&t0);
	printf("routes: %u IPv4, %u IPv6 (table size %u)\n", n4, n6, nftdp_route_capacity(t));
	printf("new table (create): %.1f ms\n", create);
	printf("dump into a new table: %.1f ms\n", dump);
	printf("reset of a full table: %.1f ms (mean of %u)\n", reset / rounds, rounds);
	printf("refill (dump into the reset table): %.1f ms (mean of %u)\n", refill / rounds,
	       rounds);
	printf("IPv4 lookup: %.1f ns each, one at a time (%u hits)\n", look, hit);
	printf("IPv4 flow lookup (%s rules): %.1f ns each (%u hits)\n",
	       nftdp_route_policy_active(t, AF_INET) ? "custom" : "default", look_flow, hit2);
	nftdp_route_table_destroy(t);
	rte_eal_cleanup();
	return 0;
}
