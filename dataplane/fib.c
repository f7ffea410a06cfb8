// SPDX-License-Identifier: BSD-3-Clause
/*
 * The fib expression's route table, live: a mirror of the kernel's routes
 * and addresses of the netns nftdp runs in (route/), made when the first
 * commit whose generation uses fib is prepared (or at start with
 * --mirror-routes), then kept up to date from rtnetlink's notifications.
 * Two tables: a burst of route notifications (a batch) is applied as
 * deltas to the spare one, which is swapped in like a generation
 * (workers load the current table per lookup); one grace period of the
 * generation domain's QSBR variable later the old one takes the same
 * batch and is the spare. A change deltas cannot apply (links,
 * addresses, rules, lost notifications, route/delta.c's other cases)
 * makes a full refill from a new dump instead, and the other table is
 * refilled once it is free. The callbacks give the table to the VM (nftdp_vm_fib_ops),
 * which does not depend on route/.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/rtnetlink.h>

#include "dataplane_priv.h"
#include "nftdp_route.h"

#define QUIET_NS 1000000ull	 /* a burst is over after 1 ms without a notification */
#define MAX_DELAY_NS 50000000ull /* but a steady stream waits at most 50 ms */
#define RETRY_NS 100000000ull	 /* a failed rebuild is tried again after 100 ms */
#define MAX_ROUTES (1u << 22)	 /* the table grows up to 4M routes */

struct retired {
	struct nftdp_route_table *t;
	uint64_t token;
};

struct nftdp_dp_fib {
	/* first: ctx.fib points here; the one word workers load */
	_Atomic(struct nftdp_route_table *) cur;
	struct nftdp_route_watch *watch;
	bool dirty;		    /* a notification since the last dump */
	uint64_t first_ns, last_ns; /* of the pending burst */
	uint64_t next_ok_ns;	    /* updates take at most a third of the time: */
	uint64_t next_refill_ns;    /* deltas by their own time, refills by theirs */
	uint64_t next_log_ns;	    /* one log line a second at most */
	unsigned long n_builds, n_unlogged;
	uint64_t build_ns, swap_ns; /* the last rebuild's dump+build and publish */
	bool custom_logged;
	struct retired *ret;
	unsigned int n_ret, cap_ret;
	struct nftdp_route_table *spare;   /* read by no worker: the next rebuild's */
	bool spare_stale;		   /* the spare needs a refill, not deltas */
	struct nftdp_route_batch *batch;   /* route messages since the last update */
	struct nftdp_route_batch *owed;	   /* applied to cur, not yet to the retired one */
	bool owed_full;			   /* the retired one needs a refill */
	unsigned long n_deltas, n_refills; /* updates since the last log line, by kind */
	unsigned int max_routes;	   /* the size tables are made with (0: default) */
	const struct nftdp_dp *dp;	   /* mp_select's multipath hash settings */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the table a worker reads now: valid until its next quiescent state */
static const struct nftdp_route_table *cur(const void *fib)
{
	struct nftdp_dp_fib *f = (struct nftdp_dp_fib *)(uintptr_t)fib;

	return atomic_load_explicit(&f->cur, memory_order_acquire);
}

const struct nftdp_route_table *nftdp_dp_fib_table(const struct nftdp_dp *dp)
{
	return dp->fib ? cur(dp->fib) : NULL;
}

int nftdp_dp_fib_watch_neigh(struct nftdp_dp *dp)
{
	if (!dp->fib || !dp->fib->watch)
		return -ENOTCONN;
	return nftdp_route_watch_neigh(dp->fib->watch);
}

static void to_vm(const struct nftdp_route_table *t, const struct nftdp_route_nh *nh,
		  struct nftdp_vm_fib_route *out)
{
	static_assert(NFTDP_ROUTE_MAX_PATHS == NFTDP_VM_FIB_MAX_PATHS, "same paths kept");
	out->type = nh->type;
	out->n_oif = nh->n_oif;
	out->plen = nh->plen;
	out->gateway = nh->gateway;
	memcpy(out->dst, nh->dst, sizeof(out->dst));
	memcpy(out->gw, nh->gw, sizeof(out->gw));
	memcpy(out->oif, nh->oif, sizeof(out->oif));
	out->sel = 0;
	out->rt = nh;
	/* dst_mtu: the metric, else the device's (the kernel's learned
	 * path mtus are not mirrored) */
	out->mtu = nh->mtu ? nh->mtu : nh->n_oif ? nftdp_route_dev_mtu(t, nh->oif[0]) : 0;
}

static bool fib_route4(const void *fib, uint32_t daddr, struct nftdp_vm_fib_route *out)
{
	const struct nftdp_route_table *t = cur(fib);
	const struct nftdp_route_nh *nh = t ? nftdp_route_lookup4(t, daddr) : NULL;

	if (!nh)
		return false;
	to_vm(t, nh, out);
	return true;
}

static bool fib_route6(const void *fib, const uint8_t daddr[16], uint32_t oif,
		       struct nftdp_vm_fib_route *out)
{
	const struct nftdp_route_table *t = cur(fib);
	const struct nftdp_route_nh *nh = t ? nftdp_route_lookup6(t, daddr, oif) : NULL;

	if (!nh)
		return false;
	to_vm(t, nh, out);
	return true;
}

/* nft_fib's flowi as route/ takes it: lo is the host's (LOOPBACK_IFINDEX,
 * a device that is no port) */
static void to_route_flow(const struct nftdp_vm_fib_flow *v, struct nftdp_route_flow *fl)
{
	memcpy(fl->daddr, v->daddr, 16);
	memcpy(fl->saddr, v->saddr, 16);
	fl->has_saddr = v->has_saddr;
	fl->dscp = v->dscp;
	fl->proto = v->proto;
	fl->sport = fl->dport = 0;
	fl->iif = v->iif == NFTDP_VM_FIB_IIF_LOOPBACK ? NFTDP_ROUTE_IFINDEX_FOREIGN + 1 : v->iif;
	fl->oif = v->oif;
	fl->ll_oif = v->oif;
	fl->mark = v->mark;
}

/* one family's policy lookup (route/: through ip rule) as the VM's answer */
static bool route_flow(const void *fib, const struct nftdp_vm_fib_flow *v,
		       struct nftdp_vm_fib_route *out,
		       const struct nftdp_route_nh *(*lookup)(const struct nftdp_route_table *,
							      const struct nftdp_route_flow *))
{
	const struct nftdp_route_table *t = cur(fib);
	const struct nftdp_route_nh *nh;
	struct nftdp_route_flow fl;

	if (!t)
		return false;
	to_route_flow(v, &fl);
	nh = lookup(t, &fl);
	if (!nh)
		return false;
	to_vm(t, nh, out);
	return true;
}

static bool fib_route4_flow(const void *fib, const struct nftdp_vm_fib_flow *v,
			    struct nftdp_vm_fib_route *out)
{
	return route_flow(fib, v, out, nftdp_route_lookup4_flow);
}

static bool fib_route6_flow(const void *fib, const struct nftdp_vm_fib_flow *v,
			    struct nftdp_vm_fib_route *out)
{
	return route_flow(fib, v, out, nftdp_route_lookup6_flow);
}

static bool fib_addr6_on(const void *fib, const uint8_t addr[16], uint32_t ifindex)
{
	const struct nftdp_route_table *t = cur(fib);

	return t && nftdp_route_addr6_on(t, addr, ifindex);
}

static const char *fib_ifname(const void *fib, uint32_t ifindex)
{
	const struct nftdp_route_table *t = cur(fib);

	return t ? nftdp_route_dev_name(t, ifindex) : NULL;
}

/* r takes path `path` of its route nh: the dst of that nexthop */
static void take_path(const void *fib, const struct nftdp_route_nh *nh, int path,
		      struct nftdp_vm_fib_route *r)
{
	const struct nftdp_route_table *t;

	if (path <= 0 || path >= nh->n_oif)
		return;
	r->sel = (uint8_t)path;
	/* rt_nexthop / rt6_nexthop: that path's gateway, if it has one */
	memcpy(r->gw, nh->path_gw[path], sizeof(r->gw));
	r->gateway = false;
	for (unsigned int i = 0; i < sizeof(r->gw); i++)
		r->gateway |= r->gw[i] != 0;
	/* dst_mtu: the route's metric (all paths share it), else the
	 * device of this path (ipv4_mtu's dst->dev, ip6_mtu's idev) */
	t = cur(fib);
	if (!nh->mtu && t)
		r->mtu = nftdp_route_dev_mtu(t, nh->oif[path]);
}

/* the path the packet's multipath hash picks, as nexthop.c forwards it */
static void fib_mp_select(const void *fib, const struct nftdp_vm_pkt *pkt, bool v4,
			  struct nftdp_vm_fib_route *r)
{
	const struct nftdp_dp_fib *f = fib;
	const struct nftdp_route_nh *nh = r->rt;

	if (!nh || !f->dp)
		return;
	take_path(fib, nh, nftdp_dp_nexthop_path(f->dp, pkt, v4, nh), r);
}

/* the path an output route to daddr takes (nexthop.c) */
static void fib_mp_select_out(const void *fib, const uint8_t *daddr, bool v4,
			      struct nftdp_vm_fib_route *r)
{
	const struct nftdp_dp_fib *f = fib;
	const struct nftdp_route_nh *nh = r->rt;

	if (!nh || !f->dp)
		return;
	take_path(fib, nh, nftdp_dp_nexthop_path_out(f->dp, v4, daddr, nh), r);
}

static const struct nftdp_vm_fib_ops fib_ops = {
    .route4 = fib_route4,
    .route6 = fib_route6,
    .addr6_on = fib_addr6_on,
    .ifname = fib_ifname,
    .route4_flow = fib_route4_flow,
    .route6_flow = fib_route6_flow,
    .mp_select = fib_mp_select,
    .mp_select_out = fib_mp_select_out,
};

/* Fill a table from one dump of the kernel's netns: the spare one (a
 * table no worker reads any more, emptied) if there is one, else a new
 * one (rte_fib's DIR24/TRIE: ~100 MiB to allocate and clear). */
static int build(struct nftdp_dp *dp, struct nftdp_route_table **out)
{
	struct nftdp_dp_fib *f = dp->fib;
	struct nftdp_route_port ports[RTE_MAX_ETHPORTS];
	unsigned int n = 0;
	bool reused = false;
	int ret = -1;

	for (uint16_t p = 0; p < dp->n_ports; p++) {
		const struct nftdp_dp_port *pt = &dp->port[p];

		/* a host interface (--host-ports) is its data port to the host:
		 * routes through it go out of that port */
		if (pt->used)
			ports[n++] = (struct nftdp_route_port){
			    .name = pt->name,
			    .ifindex = pt->is_host ? dp->port[pt->host_peer].ifindex : pt->ifindex};
	}
	if (dp->host)
		nftdp_dp_host_addrs(dp); /* redirect's addresses, from the same netns */
	*out = f->spare;
	f->spare = NULL;
	if (*out) {
		/* a spare made before the table had to grow is too small */
		ret = nftdp_route_capacity(*out) >= f->max_routes ? nftdp_route_table_reset(*out)
								  : -ENOSPC;
		if (ret < 0)
			nftdp_route_table_destroy(*out);
		else
			reused = true;
	}
	for (;;) {
		if (!reused) {
			ret = nftdp_route_table_create_sized(out, f->max_routes);
			if (ret < 0)
				return ret;
		}
		ret = nftdp_route_mirror(*out, ports, n);
		if (ret == 0)
			return 0;
		nftdp_route_table_destroy(*out);
		*out = NULL;
		/* full (rte_fib's RIB says EINVAL, next hops ENOSPC): rte_fib6's
		 * TRIE does not give every tbl8 group back on delete, so a
		 * refilled table may run out where a new one fits; a new one
		 * that runs out doubles (4-byte next hops past 65,536): a table
		 * of 1M routes takes 1.2 GiB, one of 4M 4.2 GiB, and there
		 * are two */
		if (ret != -ENOSPC && ret != -EINVAL)
			return ret;
		if (!reused) {
			if (f->max_routes >= MAX_ROUTES)
				return ret;
			f->max_routes = f->max_routes < 65536 ? 262144 : f->max_routes * 2;
		}
		reused = false;
	}
}

static void log_custom(struct nftdp_dp_fib *f, const struct nftdp_route_table *t)
{
	const char *why;

	if (!nftdp_route_policy_custom(t, &why)) {
		f->custom_logged = false;
		return;
	}
	if (f->custom_logged)
		return;
	f->custom_logged = true;
	fprintf(stderr,
		"nftdp: routes: %s: nftdp's policy routing does not evaluate it; a commit that "
		"brings fib in is refused while it lasts, and fib rules already running treat "
		"the selector as absent\n",
		why);
}

/* Make the first table and start watching; the watch first, so that no
 * change slips in between the dump and the subscription. */
static int start(struct nftdp_dp *dp)
{
	struct nftdp_dp_fib *f = dp->fib;
	struct nftdp_route_table *t;
	unsigned int n4, n6;
	uint64_t t0 = now_ns(), t1;
	int ret;

	if ((!f->batch && nftdp_route_batch_create(&f->batch) < 0) ||
	    (!f->owed && nftdp_route_batch_create(&f->owed) < 0))
		return -ENOMEM;
	nftdp_route_batch_clear(f->batch);
	nftdp_route_batch_clear(f->owed);
	f->owed_full = false;
	ret = nftdp_route_watch_open(&f->watch);
	if (ret < 0) {
		fprintf(stderr, "nftdp: routes: rtnetlink notifications: %s\n", strerror(-ret));
		return ret;
	}
	/* the route notifications as deltas; those the dump already saw
	 * change nothing when applied */
	nftdp_route_watch_collect(f->watch, f->batch);
	ret = build(dp, &t);
	if (ret < 0) {
		fprintf(stderr, "nftdp: routes: mirror: %s\n", strerror(-ret));
		nftdp_route_watch_close(f->watch);
		f->watch = NULL;
		return ret;
	}
	/* nobody read a table before: no grace period */
	atomic_store_explicit(&f->cur, t, memory_order_release);
	t1 = now_ns();
	/* the second buffer now, while a commit waits anyway: the first
	 * change then costs a refill, not a new table (without one it is
	 * made then) */
	if (nftdp_route_table_create_sized(&f->spare, f->max_routes) < 0)
		f->spare = NULL;
	f->spare_stale = true; /* empty: refilled once the control thread is idle */
	nftdp_route_count(t, &n4, &n6);
	printf("nftdp: mirrored %u IPv4 and %u IPv6 routes in %.1f ms (and a spare table in "
	       "%.1f ms), following changes\n",
	       n4, n6, (double)(t1 - t0) / 1e6, (double)(now_ns() - t1) / 1e6);
	log_custom(f, t);
	return 0;
}

int nftdp_dp_fib_init(struct nftdp_dp *dp, bool mirror_now)
{
	dp->fib = calloc(1, sizeof(*dp->fib));
	if (!dp->fib)
		return -ENOMEM;
	dp->fib->dp = dp;
	/* every worker reads through the same slot, NULL until a table is made */
	for (unsigned int i = 0; i < dp->n_workers; i++) {
		dp->w[i].ctx.fib_ops = &fib_ops;
		dp->w[i].ctx.fib = dp->fib;
	}
	if (mirror_now)
		return start(dp);
	return 0;
}

int nftdp_dp_fib_prepare(void *arg, bool first, char *msg, size_t msglen)
{
	struct nftdp_dp *dp = arg;
	const struct nftdp_route_table *t;
	const char *why;
	int ret;

	if (!dp->fib)
		return 0;
	if (!atomic_load_explicit(&dp->fib->cur, memory_order_relaxed)) {
		ret = start(dp);
		if (ret < 0) {
			snprintf(msg, msglen, "fib: cannot mirror the kernel's routes: %s",
				 strerror(-ret));
			/* no fib rule runs without a table: the commit fails
			 * with an errno the kernel gives for want of resources */
			return -ENOMEM;
		}
	}
	/* the neighbours beside the routes (--route made them at start):
	 * `dup to ADDR` sends its copies by them. Without them a copy is not
	 * sent (dup_no_route); the commit goes on, as the kernel's would */
	if (!dp->nexthop && nftdp_dp_nexthop_init(dp) < 0)
		nftdp_dp_nexthop_fini(dp);
	t = atomic_load_explicit(&dp->fib->cur, memory_order_relaxed);
	/* refused when a commit brings fib in; once fib runs, commits that
	 * change something else go through (the rebuild logged the rules) */
	if (first && nftdp_route_policy_custom(t, &why)) {
		snprintf(msg, msglen, "fib: %s: not mirrored", why);
		fprintf(stderr, "nftdp: commit refused: %s\n", msg);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void reclaim(struct nftdp_dp *dp)
{
	struct nftdp_dp_fib *f = dp->fib;
	unsigned int k = 0;

	/* tokens grow along the list: free the prefix that has passed */
	while (k < f->n_ret && nftdp_vm_gen_grace_passed(dp->dom, f->ret[k].token)) {
		/* the first one free becomes the spare: it takes what cur
		 * took since (deltas), or is refilled */
		if (!f->spare) {
			f->spare = f->ret[k].t;
			f->spare_stale = f->owed_full || nftdp_route_apply(f->spare, f->owed) < 0;
			nftdp_route_batch_clear(f->owed);
			f->owed_full = false;
		} else {
			nftdp_route_table_destroy(f->ret[k].t);
		}
		k++;
	}
	if (k) {
		memmove(f->ret, f->ret + k, (f->n_ret - k) * sizeof(*f->ret));
		f->n_ret -= k;
	}
}

/*
 * The rebuilds since the last line, at most a line a second; the last
 * rebuild of a burst is logged by a later tick once the second is over,
 * so the line always ends with the table in use.
 */
static void log_rebuilds(struct nftdp_dp_fib *f, uint64_t now)
{
	unsigned int n4, n6;

	if (!f->n_unlogged || now < f->next_log_ns)
		return;
	nftdp_route_count(atomic_load_explicit(&f->cur, memory_order_relaxed), &n4, &n6);
	printf("nftdp: routes: %u IPv4 and %u IPv6 routes, rebuilt in %.2f ms, swapped in "
	       "%.3f ms (%lu rebuild%s: %lu by deltas, %lu refilled)\n",
	       n4, n6, (double)f->build_ns / 1e6, (double)f->swap_ns / 1e6, f->n_unlogged,
	       f->n_unlogged == 1 ? "" : "s", f->n_deltas, f->n_refills);
	f->n_unlogged = 0;
	f->n_deltas = f->n_refills = 0;
	f->next_log_ns = now + 1000000000ull;
}

/* A new table in place of the current one; the old one waits a grace period. */
static void rebuild(struct nftdp_dp *dp, uint64_t now)
{
	struct nftdp_dp_fib *f = dp->fib;
	struct nftdp_route_table *t = NULL, *old;
	uint64_t t1, t2;
	bool delta = false;
	int ret = 0;

	if (f->n_ret == f->cap_ret) {
		unsigned int cap = f->cap_ret ? f->cap_ret * 2 : 4;
		struct retired *r = realloc(f->ret, cap * sizeof(*r));

		if (!r) {
			f->next_ok_ns = now + RETRY_NS;
			return;
		}
		f->ret = r;
		f->cap_ret = cap;
	}
	f->dirty = false;
	/* the batch as deltas on the spare, when it is as current as cur
	 * (a refill that fails half way leaves it to a refill) */
	if (f->spare && !f->spare_stale && !nftdp_route_batch_full(f->batch) &&
	    nftdp_route_capacity(f->spare) >= f->max_routes) {
		ret = nftdp_route_apply(f->spare, f->batch);
		if (ret == 0) {
			t = f->spare;
			f->spare = NULL;
			delta = true;
		} else {
			f->spare_stale = true;
			if (ret != -EAGAIN)
				fprintf(stderr, "nftdp: routes: deltas: %s; refilling\n",
					strerror(-ret));
		}
	}
	if (!delta) {
		nftdp_route_batch_clear(f->batch); /* the dump holds it */
		ret = build(dp, &t);
	}
	t1 = now_ns();
	if (ret < 0) {
		/* the old table stays; a later notification or the retry
		 * builds again, from a dump */
		fprintf(stderr, "nftdp: routes: rebuild: %s; keeping the previous table\n",
			strerror(-ret));
		nftdp_route_batch_set_full(f->batch);
		f->dirty = true;
		f->next_ok_ns = f->next_refill_ns = t1 + RETRY_NS;
		return;
	}
	old = atomic_exchange_explicit(&f->cur, t, memory_order_release);
	f->ret[f->n_ret++] = (struct retired){.t = old, .token = nftdp_vm_gen_grace_start(dp->dom)};
	if (delta) {
		/* the old table takes the same batch once free (reclaim) */
		struct nftdp_route_batch *b = f->owed;

		f->owed = f->batch;
		f->batch = b;
		nftdp_route_batch_clear(f->batch);
		nftdp_route_watch_collect(f->watch, f->batch);
		f->owed_full = false;
		f->n_deltas++;
	} else {
		nftdp_route_batch_clear(f->owed);
		f->owed_full = true;
		f->n_refills++;
	}
	t2 = now_ns();
	f->build_ns = t1 - now;
	f->swap_ns = t2 - t1;
	/* the next delta after twice this one's time; a refill (seconds at
	 * 1M routes) holds back the next refill, not the deltas */
	if (delta)
		f->next_ok_ns = t2 + 2 * (t2 - now);
	else
		f->next_ok_ns = f->next_refill_ns = t2 + 2 * (t2 - now);
	f->n_builds++;
	f->n_unlogged++;
	log_rebuilds(f, t2);
	log_custom(f, t);
}

/* Refill the spare from a dump (it is then ahead of cur: the batch
 * applied to it next changes nothing it already holds). */
static void refill_spare(struct nftdp_dp *dp, uint64_t now)
{
	struct nftdp_dp_fib *f = dp->fib;
	struct nftdp_route_table *t;
	int ret = build(dp, &t);
	uint64_t t1 = now_ns();

	if (ret < 0) {
		/* build() gave the spare up: the next update makes a table */
		fprintf(stderr, "nftdp: routes: refilling the spare table: %s\n", strerror(-ret));
		f->next_refill_ns = t1 + RETRY_NS;
		return;
	}
	f->spare = t;
	f->spare_stale = false;
	f->next_refill_ns = t1 + 2 * (t1 - now);
	/* once a refill: the next changes are deltas again */
	printf("nftdp: routes: spare table refilled in %.1f ms\n", (double)(t1 - now) / 1e6);
}

void nftdp_dp_fib_tick(struct nftdp_dp *dp)
{
	struct nftdp_dp_fib *f = dp->fib;
	uint64_t now;
	int ret;

	if (!f || !f->watch)
		return;
	if (f->n_ret)
		reclaim(dp);
	ret = nftdp_route_watch_read(f->watch);
	now = now_ns();
	log_rebuilds(f, now);
	/* --route: neighbours are dumped again on their own, at once */
	nftdp_dp_nexthop_tick(dp, ret > 0 && (ret & NFTDP_ROUTE_WATCH_NEIGH));
	if (ret > 0 && (ret & NFTDP_ROUTE_WATCH_ROUTES)) {
		if (!f->dirty)
			f->first_ns = now;
		f->dirty = true;
		f->last_ns = now;
	} else if (ret < 0) {
		fprintf(stderr, "nftdp: routes: rtnetlink: %s\n", strerror(-ret));
	}
	/* a stale spare is refilled while nothing is pending, so that the
	 * next change is a delta */
	if (f->spare && f->spare_stale && !f->dirty && now >= f->next_refill_ns) {
		refill_spare(dp, now);
		return;
	}
	/* no spare yet but an old table in its grace period: it is the spare
	 * within a worker burst, far sooner than a new 100 MiB table (and
	 * workers that stopped quiescing do not pile tables up) */
	if (!f->dirty || now < f->next_ok_ns || (!f->spare && f->n_ret))
		return;
	/* an update that must refill waits for the refills' own pace */
	if ((!f->spare || f->spare_stale || nftdp_route_batch_full(f->batch)) &&
	    now < f->next_refill_ns)
		return;
	if (now - f->last_ns >= QUIET_NS || now - f->first_ns >= MAX_DELAY_NS)
		rebuild(dp, now);
}

int nftdp_dp_fib_wait(struct nftdp_dp *dp, int ctl_fd, int max_ms)
{
	struct nftdp_dp_fib *f = dp->fib;
	struct pollfd pfd[2];
	int ms = max_ms;

	if (!f || !f->watch)
		return max_ms;
	if (f->dirty)
		ms = 1; /* the burst's end is measured in milliseconds */
	else if ((f->n_ret || nftdp_dp_nexthop_pending(dp)) && ms > 1)
		ms = 1; /* a retired table: free it soon */
	pfd[0] = (struct pollfd){.fd = ctl_fd, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = nftdp_route_watch_fd(f->watch), .events = POLLIN};
	poll(pfd, 2, ms);
	return 0;
}

void nftdp_dp_fib_fini(struct nftdp_dp *dp)
{
	struct nftdp_dp_fib *f = dp->fib;

	if (!f)
		return;
	/* no worker runs any more */
	for (unsigned int i = 0; i < f->n_ret; i++)
		nftdp_route_table_destroy(f->ret[i].t);
	nftdp_route_table_destroy(atomic_load_explicit(&f->cur, memory_order_relaxed));
	nftdp_route_table_destroy(f->spare);
	nftdp_route_watch_close(f->watch);
	nftdp_route_batch_destroy(f->batch);
	nftdp_route_batch_destroy(f->owed);
	free(f->ret);
	free(f);
	dp->fib = NULL;
}

bool nftdp_dp_fib_local(const struct nftdp_dp *dp, bool v4, const uint8_t *daddr)
{
	const struct nftdp_route_table *t = dp->fib ? cur(dp->fib) : NULL;
	const struct nftdp_route_nh *nh;
	uint32_t a;

	if (!t)
		return false;
	if (v4) {
		memcpy(&a, daddr, 4);
		nh = nftdp_route_lookup4(t, a);
	} else {
		nh = nftdp_route_lookup6(t, daddr, 0);
	}
	/* the kernel's local table: an address of ours, a broadcast of ours */
	return nh && (nh->type == RTN_LOCAL || nh->type == RTN_BROADCAST);
}

/* nf_ip_route / nf_ip6_route of a flow with only a destination: the
 * device (0: the loopback, a local route's) and next hop (rt_nexthop,
 * rt6_nexthop: the path's gateway, else the destination); false where
 * the kernel's lookup fails (no route, an error route) */
static bool out_hop(const struct nftdp_dp *dp, const struct nftdp_route_table *t, bool v4,
		    const uint8_t *daddr, uint32_t *dev, uint8_t hop[16])
{
	static const uint8_t zero[16];
	const struct nftdp_route_nh *nh;
	uint8_t a[16] = {0};
	int path;

	memcpy(a, daddr, v4 ? 4 : 16);
	if (v4) {
		uint32_t d;

		memcpy(&d, a, 4);
		if (d == 0) { /* ip_route_output_key_hash_rcu: the loopback */
			*dev = 0;
			a[0] = 127;
			a[3] = 1;
			memcpy(hop, a, 16);
			return true;
		}
		nh = nftdp_route_lookup4(t, d);
	} else {
		nh = nftdp_route_lookup6(t, a, 0);
	}
	if (!nh)
		return false;
	switch (nh->type) {
	case RTN_LOCAL:
	case RTN_ANYCAST: /* an address of this host's: dst.dev is the loopback */
		*dev = 0;
		memcpy(hop, a, 16);
		return true;
	case RTN_UNICAST:
	case RTN_BROADCAST:
	case RTN_MULTICAST:
		break;
	default: /* blackhole, unreachable, prohibit, throw: the lookup fails */
		return false;
	}
	path = nftdp_dp_nexthop_path_out(dp, v4, a, nh);
	if (path < 0)
		return false;
	*dev = nh->oif[path];
	if (memcmp(nh->path_gw[path], zero, 16))
		memcpy(hop, nh->path_gw[path], 16);
	else if (path == 0 && nh->gateway)
		memcpy(hop, nh->gw, 16);
	else
		memcpy(hop, a, 16);
	return true;
}

bool nftdp_dp_fib_same_route(const struct nftdp_dp *dp, bool v4, const uint8_t *a, const uint8_t *b)
{
	const struct nftdp_route_table *t = dp->fib ? cur(dp->fib) : NULL;
	uint8_t ha[16], hb[16];
	uint32_t da, db;

	return t && out_hop(dp, t, v4, a, &da, ha) && out_hop(dp, t, v4, b, &db, hb) && da == db &&
	       !memcmp(ha, hb, 16);
}
