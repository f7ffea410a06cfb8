// SPDX-License-Identifier: BSD-3-Clause
/*
 * The fib expression's route table: --mirror-routes dumps the kernel's
 * routes and addresses of the netns nftdp runs in into route/ once at
 * start, and these callbacks give it to the VM (nftdp_vm_fib_ops), which
 * does not depend on route/. Without the option, workers get no table and
 * fib finds no route.
 */
#include <stdio.h>
#include <string.h>

#include "dataplane_priv.h"
#include "nftdp_route.h"

static void to_vm(const struct nftdp_route_nh *nh, struct nftdp_vm_fib_route *out)
{
	static_assert(NFTDP_ROUTE_MAX_PATHS == NFTDP_VM_FIB_MAX_PATHS, "same paths kept");
	out->type = nh->type;
	out->n_oif = nh->n_oif;
	out->plen = nh->plen;
	out->gateway = nh->gateway;
	memcpy(out->dst, nh->dst, sizeof(out->dst));
	memcpy(out->oif, nh->oif, sizeof(out->oif));
}

static bool fib_route4(const void *fib, uint32_t daddr, struct nftdp_vm_fib_route *out)
{
	const struct nftdp_route_nh *nh = nftdp_route_lookup4(fib, daddr);

	if (!nh)
		return false;
	to_vm(nh, out);
	return true;
}

static bool fib_route6(const void *fib, const uint8_t daddr[16], uint32_t oif,
		       struct nftdp_vm_fib_route *out)
{
	const struct nftdp_route_nh *nh = nftdp_route_lookup6(fib, daddr, oif);

	if (!nh)
		return false;
	to_vm(nh, out);
	return true;
}

static bool fib_addr6_on(const void *fib, const uint8_t addr[16], uint32_t ifindex)
{
	return nftdp_route_addr6_on(fib, addr, ifindex);
}

static const char *fib_ifname(const void *fib, uint32_t ifindex)
{
	return nftdp_route_dev_name(fib, ifindex);
}

static const struct nftdp_vm_fib_ops fib_ops = {
    .route4 = fib_route4,
    .route6 = fib_route6,
    .addr6_on = fib_addr6_on,
    .ifname = fib_ifname,
};

int nftdp_dp_fib_init(struct nftdp_dp *dp)
{
	struct nftdp_route_port ports[RTE_MAX_ETHPORTS];
	unsigned int n = 0, n4, n6;
	int ret;

	ret = nftdp_route_table_create(&dp->routes);
	if (ret < 0) {
		fprintf(stderr, "nftdp: route table: %s\n", strerror(-ret));
		return ret;
	}
	for (uint16_t p = 0; p < dp->n_ports; p++)
		if (dp->port[p].used)
			ports[n++] = (struct nftdp_route_port){.name = dp->port[p].name,
							       .ifindex = dp->port[p].ifindex};
	ret = nftdp_route_mirror(dp->routes, ports, n);
	if (ret < 0) {
		fprintf(stderr, "nftdp: --mirror-routes: %s\n", strerror(-ret));
		nftdp_route_table_destroy(dp->routes);
		dp->routes = NULL;
		return ret;
	}
	nftdp_route_count(dp->routes, &n4, &n6);
	printf("nftdp: mirrored %u IPv4 and %u IPv6 routes\n", n4, n6);
	/* built once, read-only from here: workers read it without locks */
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		dp->w[i].ctx.fib_ops = &fib_ops;
		dp->w[i].ctx.fib = dp->routes;
	}
	return 0;
}

void nftdp_dp_fib_fini(struct nftdp_dp *dp)
{
	nftdp_route_table_destroy(dp->routes);
	dp->routes = NULL;
}
