/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp daemon entry point: EAL, ports, workers, the control thread.
 *
 * The main lcore is the control thread: it serves the nfnetlink control
 * socket (control/), frees retired generations, prints log events and
 * statistics. Every other EAL lcore is a worker (dataplane/worker.c); with
 * none, the main lcore runs the burst loop itself between control polls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "ct_ctl.h"
#include "dataplane_priv.h"
#include "nftdp_conntrack.h"
#include "nftdp_control.h"
#include "nftdp_sets.h"

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static volatile sig_atomic_t reload; /* SIGHUP: load the ruleset file again */

static void on_hup(int sig)
{
	(void)sig;
	reload = 1;
}

struct opts {
	const char *socket_path;
	const char *ruleset;
	const char *iptables; /* --iptables-restore: an iptables-restore file */
	const char *ipset;    /* --ipset-restore: an `ipset save` file */
	const char *ifname[RTE_MAX_ETHPORTS];
	bool flowtables;
	bool control_only;
	int wire[RTE_MAX_ETHPORTS][2];
	unsigned int n_wire;
	unsigned int workers; /* 0: every worker lcore */
	unsigned int burst;
	unsigned int flow_cache; /* entries per worker, 0: off */
	bool flow_verify;
	unsigned int mtu;
	unsigned int mbufs;	/* 0: computed per port */
	unsigned int mbuf_size; /* 0: computed from the MTU */
	bool router;
	bool route; /* --route: forward by route (implies --router, --mirror-routes) */
	bool mirror_routes;
	bool host_ports;			   /* --host-ports: the exception path */
	const char *host_ifname[RTE_MAX_ETHPORTS]; /* --host-ifname P=NAME */
	bool host_virtio;			   /* --host-pmd virtio */
	unsigned long host_rate;		   /* --host-rate, packets/s per worker */
	double stats_period;
	long exit_on_idle_ms; /* < 0: never */
	unsigned int idle_sleep_us;
	const char *listing;
	const char *listing_json;
	const char *stats_json;
	const char *ifaddr[64];
	unsigned int n_ifaddr;
	unsigned long conntrack_max;
	long conntrack_events;	       /* event ring per shard; < 0: the default */
	struct nftdp_ct_config ct_cfg; /* --ct-sysctl */
	struct nftdp_ct_timeouts ct_tmo;
};

static void usage(const char *prog)
{
	fprintf(
	    stderr,
	    "usage: %s [EAL args] -- [options]\n"
	    "  --socket PATH       control socket (default /run/nftdp/nfnetlink.sock)\n"
	    "  --ruleset FILE      load FILE with nft through the control socket at start\n"
	    "  --iptables-restore FILE  load FILE with iptables-nft-restore (ip6tables-nft-\n"
	    "                      restore for FILE ending in .v6, ebtables-nft-restore\n"
	    "                      for .eb) at start, after --ruleset\n"
	    "  --ipset-restore FILE  load FILE with `ipset restore` at start, before\n"
	    "                      --iptables-restore\n"
	    "  --ifname P=NAME     name port P NAME (default dpP; ifindex is P+1)\n"
	    "  --flowtables        accept flowtables (the reference kernel has none)\n"
	    "  --control-only      store rulesets without compiling them for the workers\n"
	    "                      (for testing the control plane against the kernel)\n"
	    "  --wire A:B          pair ports A and B, both directions (repeatable); a port\n"
	    "                      in no pair sends out where it received\n"
	    "  --ifaddr P=ADDR[/LEN]  port P's IPv4 or IPv6 address (repeatable): the source\n"
	    "                      of ICMP errors sent out of P; with --router, packets to\n"
	    "                      it or to its subnet broadcast are not forwarded\n"
	    "  --router            forward as the kernel's ip_forward: martians and TTL <= 1\n"
	    "                      dropped (time exceeded sent), TTL/hop limit decremented\n"
	    "  --route             --router and --mirror-routes, and forward by route: the\n"
	    "                      output port is the port of the route's device (ECMP by\n"
	    "                      flow hash), MACs from the port and the kernel's\n"
	    "                      neighbour table; no route: ICMP unreachable (--wire\n"
	    "                      is not used)\n"
	    "  --mirror-routes     copy the routes (tables local and main, IPv4 and IPv6)\n"
	    "                      and addresses of the network namespace nftdp runs in at\n"
	    "                      start, for the fib expression (without it: at the first\n"
	    "                      commit that uses fib); either way the copy follows the\n"
	    "                      kernel's changes. Routes through a device named like a\n"
	    "                      port (--ifname) go out of that port\n"
	    "  --host-ports        the exception path: a kernel interface per port (P's\n"
	    "                      name and MAC) for the host stack; packets for the box\n"
	    "                      run input, the host's output and postrouting (implies\n"
	    "                      --router and --mirror-routes)\n"
	    "  --host-ifname P=NAME  name port P's host interface NAME (default: P's name)\n"
	    "  --host-pmd tap|virtio  host interfaces by net_tap (default) or by\n"
	    "                      net_virtio_user over /dev/vhost-net\n"
	    "  --host-rate N       packets/s each worker gives the host at most (default\n"
	    "                      20000; 0: no limit), bursts of up to N/10 (at least 64)\n"
	    "  --conntrack-max N   connections tracked, split over the workers' shards\n"
	    "                      (default 262144)\n"
	    "  --conntrack-events N  events kept per worker for conntrack -E (a power of\n"
	    "                      two, default 4096; 0: no events)\n"
	    "  --ct-sysctl NAME=V  a conntrack tunable by its net.netfilter sysctl name\n"
	    "                      (repeatable): nf_conntrack_tcp_timeout_established=3600,\n"
	    "                      nf_conntrack_tcp_be_liberal=1, nf_conntrack_tcp_loose=0,\n"
	    "                      nf_conntrack_udp_timeout_stream=180, ... (docs/conntrack.md)\n"
	    "  --workers N         use at most N worker lcores (default: every one)\n"
	    "  --burst N           rx burst size, 1..256 (default 32)\n"
	    "  --flow-cache N      per-flow verdict cache entries per worker (default\n"
	    "                      65536, at most 16777216; 0: off, every packet runs\n"
	    "                      the chains and every burst the whole pipeline)\n"
	    "  --flow-cache-verify every cache hit runs the chains too, which judge it;\n"
	    "                      a disagreement counts as flow_cache.mismatches (tests)\n"
	    "  --mtu N             set every port's MTU\n"
	    "  --mbufs N           mbufs in each port pool (default: what the queues and\n"
	    "                      workers need; at least that): net_pcap's infinite_rx\n"
	    "                      holds a whole capture in the pool\n"
	    "  --mbuf-size N       data room of each mbuf in bytes, headroom included\n"
	    "                      (default %u, more if --mtu needs it; at least %u and\n"
	    "                      --mtu's frame); longer frames arrive chained\n"
	    "  --stats-period S    print per-port and per-worker rates every S seconds\n"
	    "  --exit-on-idle MS   exit once every rx queue has been empty for MS ms\n"
	    "  --idle-sleep US     a worker whose rx queues have been empty for 1 ms\n"
	    "                      sleeps US microseconds between polls until traffic\n"
	    "                      returns (default 0: it polls without pause; at most\n"
	    "                      10000; a core shared with other work, and tests;\n"
	    "                      NFTDP_IDLE_SLEEP_US in the environment sets the default)\n"
	    "  --listing FILE      at exit, write `nft list ruleset` (with counters) to FILE\n"
	    "  --listing-json FILE at exit, write `nft -j list ruleset` to FILE\n"
	    "  --stats-json FILE   at exit, write packet, port, hook and drop counts as JSON\n"
	    "Telemetry: /nftdp/stats and /nftdp/ports (dpdk-telemetry.py).\n",
	    prog, RTE_MBUF_DEFAULT_BUF_SIZE, RTE_PKTMBUF_HEADROOM + 64);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return (errno || end == s || *end || *out > max) ? -1 : 0;
}

#define IDLE_SLEEP_MAX_US 10000

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"ruleset", required_argument, NULL, 'r'},
	    {"iptables-restore", required_argument, NULL, 'I'},
	    {"ipset-restore", required_argument, NULL, 'U'},
	    {"ifname", required_argument, NULL, 'i'},
	    {"flowtables", no_argument, NULL, 'F'},
	    {"control-only", no_argument, NULL, 'C'},
	    {"wire", required_argument, NULL, 'w'},
	    {"router", no_argument, NULL, 'R'},
	    {"mirror-routes", no_argument, NULL, 'M'},
	    {"route", no_argument, NULL, 'G'},
	    {"host-ports", no_argument, NULL, 'H'},
	    {"host-ifname", required_argument, NULL, 'n'},
	    {"host-pmd", required_argument, NULL, 'P'},
	    {"host-rate", required_argument, NULL, 'L'},
	    {"conntrack-max", required_argument, NULL, 'T'},
	    {"conntrack-events", required_argument, NULL, 'V'},
	    {"ct-sysctl", required_argument, NULL, 'X'},
	    {"ifaddr", required_argument, NULL, 'A'},
	    {"workers", required_argument, NULL, 'W'},
	    {"burst", required_argument, NULL, 'b'},
	    {"flow-cache", required_argument, NULL, 'f'},
	    {"flow-cache-verify", no_argument, NULL, 'Y'},
	    {"mtu", required_argument, NULL, 'm'},
	    {"mbufs", required_argument, NULL, 'N'},
	    {"mbuf-size", required_argument, NULL, 'Z'},
	    {"stats-period", required_argument, NULL, 'S'},
	    {"exit-on-idle", required_argument, NULL, 'e'},
	    {"idle-sleep", required_argument, NULL, 'z'},
	    {"listing", required_argument, NULL, 'l'},
	    {"listing-json", required_argument, NULL, 'j'},
	    {"stats-json", required_argument, NULL, 'J'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	unsigned long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket_path = optarg;
			break;
		case 'r':
			o->ruleset = optarg;
			break;
		case 'I':
			o->iptables = optarg;
			break;
		case 'U':
			o->ipset = optarg;
			break;
		case 'i': {
			char *eq = strchr(optarg, '=');
			char *end;
			unsigned long p;

			if (eq == NULL)
				goto bad_ifname;
			p = strtoul(optarg, &end, 10);
			if (end != eq || p >= RTE_MAX_ETHPORTS || strlen(eq + 1) == 0 ||
			    strlen(eq + 1) >= NFTDP_CTL_IFNAMSIZ)
				goto bad_ifname;
			o->ifname[p] = eq + 1;
			break;
		bad_ifname:
			fprintf(stderr, "nftdp: bad --ifname '%s' (want PORT=NAME)\n", optarg);
			return -1;
		}
		case 'F':
			o->flowtables = true;
			break;
		case 'C':
			o->control_only = true;
			break;
		case 'w': {
			unsigned int a, b;
			int n = 0;

			if (sscanf(optarg, "%u:%u%n", &a, &b, &n) != 2 || optarg[n] != '\0' ||
			    a >= RTE_MAX_ETHPORTS || b >= RTE_MAX_ETHPORTS ||
			    o->n_wire == RTE_MAX_ETHPORTS) {
				fprintf(stderr, "nftdp: bad --wire '%s' (want A:B)\n", optarg);
				return -1;
			}
			o->wire[o->n_wire][0] = (int)a;
			o->wire[o->n_wire++][1] = (int)b;
			break;
		}
		case 'R':
			o->router = true;
			break;
		case 'M':
			o->mirror_routes = true;
			break;
		case 'G':
			o->route = o->router = o->mirror_routes = true;
			break;
		case 'H':
			o->host_ports = true;
			break;
		case 'n': {
			char *eq = strchr(optarg, '=');
			char *end;
			unsigned long p;

			p = strtoul(optarg, &end, 10);
			if (eq == NULL || end != eq || p >= RTE_MAX_ETHPORTS ||
			    strlen(eq + 1) == 0 || strlen(eq + 1) >= NFTDP_CTL_IFNAMSIZ) {
				fprintf(stderr, "nftdp: bad --host-ifname '%s' (want PORT=NAME)\n",
					optarg);
				return -1;
			}
			o->host_ifname[p] = eq + 1;
			break;
		}
		case 'P':
			if (strcmp(optarg, "tap") != 0 && strcmp(optarg, "virtio") != 0) {
				fprintf(stderr, "nftdp: --host-pmd tap or virtio\n");
				return -1;
			}
			o->host_virtio = strcmp(optarg, "virtio") == 0;
			break;
		case 'L':
			if (parse_uint(optarg, 1000000000ul, &v) < 0)
				goto bad_num;
			o->host_rate = v;
			break;
		case 'T':
			if (parse_uint(optarg, 1ul << 26, &v) < 0 || v == 0)
				goto bad_num;
			o->conntrack_max = v;
			break;
		case 'V':
			if (parse_uint(optarg, 1ul << 20, &v) < 0 || (v & (v - 1)))
				goto bad_num;
			o->conntrack_events = (long)v;
			break;
		case 'X': {
			int err = nftdp_dp_ct_sysctl(&o->ct_cfg, &o->ct_tmo, optarg);

			if (err < 0) {
				fprintf(stderr, "nftdp: --ct-sysctl '%s': %s\n", optarg,
					err == -ENOENT	 ? "no such conntrack sysctl"
					: err == -ERANGE ? "value out of range"
							 : "want NAME=NUMBER");
				return -1;
			}
			break;
		}
		case 'A':
			if (o->n_ifaddr == RTE_DIM(o->ifaddr)) {
				fprintf(stderr, "nftdp: too many --ifaddr\n");
				return -1;
			}
			o->ifaddr[o->n_ifaddr++] = optarg;
			break;
		case 'W':
			if (parse_uint(optarg, NFTDP_DP_MAX_WORKERS, &v) < 0 || v == 0)
				goto bad_num;
			o->workers = (unsigned int)v;
			break;
		case 'b':
			if (parse_uint(optarg, NFTDP_DP_RX_BURST_MAX, &v) < 0 || v == 0)
				goto bad_num;
			o->burst = (unsigned int)v;
			break;
		case 'f':
			/* nftdp_vm_flowcache_create's ceiling (1 << 24) */
			if (parse_uint(optarg, 1ul << 24, &v) < 0) {
				fprintf(stderr,
					"nftdp: --flow-cache '%s': want 0..%lu entries per worker "
					"(0: off)\n",
					optarg, 1ul << 24);
				return -1;
			}
			o->flow_cache = (unsigned int)v;
			break;
		case 'Y':
			o->flow_verify = true;
			break;
		case 'm':
			if (parse_uint(optarg, 9600, &v) < 0 || v < 68)
				goto bad_num;
			o->mtu = (unsigned int)v;
			break;
		case 'N':
			if (parse_uint(optarg, UINT32_MAX, &v) < 0 || v == 0)
				goto bad_num;
			o->mbufs = (unsigned int)v;
			break;
		case 'Z':
			/* headroom and a minimal frame; the pool's room is 16 bits */
			if (parse_uint(optarg, UINT16_MAX, &v) < 0 ||
			    v < RTE_PKTMBUF_HEADROOM + 64) {
				fprintf(stderr, "nftdp: --mbuf-size '%s': want %u..%u\n", optarg,
					RTE_PKTMBUF_HEADROOM + 64, UINT16_MAX);
				return -1;
			}
			o->mbuf_size = (unsigned int)v;
			break;
		case 'S': {
			char *end;

			o->stats_period = strtod(optarg, &end);
			if (end == optarg || *end || o->stats_period <= 0)
				goto bad_num;
			break;
		}
		case 'e':
			if (parse_uint(optarg, 86400000, &v) < 0)
				goto bad_num;
			o->exit_on_idle_ms = (long)v;
			break;
		case 'z':
			if (parse_uint(optarg, IDLE_SLEEP_MAX_US, &v) < 0)
				goto bad_num;
			o->idle_sleep_us = (unsigned int)v;
			break;
		case 'l':
			o->listing = optarg;
			break;
		case 'j':
			o->listing_json = optarg;
			break;
		case 'J':
			o->stats_json = optarg;
			break;
		bad_num:
			fprintf(stderr, "nftdp: bad value '%s'\n", optarg);
			return -1;
		case 'h':
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (optind != argc) {
		usage(argv[0]);
		return -1;
	}
	if (o->mbuf_size && o->mtu && o->mbuf_size < NFTDP_DP_MTU_ROOM(o->mtu)) {
		fprintf(stderr,
			"nftdp: --mbuf-size %u cannot hold a frame of --mtu %u (needs %u)\n",
			o->mbuf_size, o->mtu, NFTDP_DP_MTU_ROOM(o->mtu));
		return -1;
	}
	return 0;
}

/* The directory of this executable: nftdp-nft lives beside it. */
static int self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	return 0;
}

/* Run the stock nft (nftdp-nft) on our own socket with up to three
 * arguments, stdout to out_file when given, serving the control socket
 * while it runs. */
/* run_nft's standard input when set: ebtables-nft-restore reads its
 * rules from there and takes no file argument */
static const char *nft_stdin;

static int run_nft(struct nftdp_ctl *ctl, const char *sock, const char *out_file, const char *a1,
		   const char *a2, const char *a3)
{
	char dir[PATH_MAX], wrapper[PATH_MAX + 16];
	int status;
	pid_t pid;

	if (self_dir(dir, sizeof(dir)) < 0)
		return -1;
	snprintf(wrapper, sizeof(wrapper), "%s/nftdp-nft", dir);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* its own process group: a signal to ours (the terminal's ^C,
		 * timeout(1) passing on a SIGTERM) is for the daemon, which then
		 * still wants this nft to finish the listing */
		setpgid(0, 0);
		if (out_file) {
			int fd = open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
				fprintf(stderr, "nftdp: %s: %s\n", out_file, strerror(errno));
				_exit(126);
			}
			close(fd);
		}
		if (nft_stdin) {
			int fd = open(nft_stdin, O_RDONLY);

			if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) {
				fprintf(stderr, "nftdp: %s: %s\n", nft_stdin, strerror(errno));
				_exit(126);
			}
			close(fd);
		}
		/* none of ours is nft's business: the EAL keeps a descriptor
		 * per hugepage, and nft's select() aborts on a socket numbered
		 * past FD_SETSIZE (1024), as with a pool of 2M mbufs */
		closefrom(STDERR_FILENO + 1);
		setenv("NFTDP_SOCKET", sock, 1);
		execl(wrapper, wrapper, a1, a2, a3, (char *)NULL);
		fprintf(stderr, "nftdp: cannot run %s: %s\n", wrapper, strerror(errno));
		_exit(127);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (quit && out_file == NULL) {
			kill(pid, SIGTERM);
			waitpid(pid, &status, 0);
			return -1;
		}
		nftdp_ctl_poll(ctl, 10);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "nftdp: nft %s %s %s: killed by signal %d\n", a1 ? a1 : "",
				a2 ? a2 : "", a3 ? a3 : "", WTERMSIG(status));
		else
			fprintf(stderr, "nftdp: nft %s %s %s failed (exit %d)\n", a1 ? a1 : "",
				a2 ? a2 : "", a3 ? a3 : "", WEXITSTATUS(status));
		return -1;
	}
	return 0;
}

/* SIGHUP (systemctl reload): the ruleset file again, flushing the old one
 * in the same transaction; a bad file leaves the old ruleset (nft says
 * why on stderr, the journal) */
static void reload_ruleset(struct nftdp_ctl *ctl, const char *sock, const char *ruleset,
			   struct nftdp_dp *dp)
{
	char tmp[PATH_MAX];
	int ret;

	if (!ruleset) {
		fprintf(stderr, "nftdp: SIGHUP: no --ruleset to load again\n");
		return;
	}
	nftdp_dp_sd_notify("RELOADING=1");
	ret = nftdp_dp_reload_file(ruleset, tmp, sizeof(tmp));
	if (ret < 0) {
		fprintf(stderr, "nftdp: reload: %s: %s; the ruleset stays as it was\n", ruleset,
			strerror(-ret));
		nftdp_dp_sd_notify("READY=1");
		return;
	}
	/* the main lcore's worker (if it is one) waits: no grace period on it */
	if (dp->main_is_worker)
		nftdp_vm_gen_reader_offline(dp->dom, 0);
	ret = run_nft(ctl, sock, NULL, "-f", tmp, NULL);
	if (dp->main_is_worker)
		nftdp_vm_gen_reader_online(dp->dom, 0);
	unlink(tmp);
	if (ret < 0)
		fprintf(stderr, "nftdp: reload: loading %s failed; the ruleset stays as it was\n",
			ruleset);
	else
		printf("nftdp: reload: %s loaded\n", ruleset);
	fflush(stdout);
	nftdp_dp_sd_notify("READY=1");
}

static void set_reclaim(struct nftdp_set *s, void *arg)
{
	(void)arg;
	nftdp_set_reclaim(s);
}

static bool ctl_readable(const struct nftdp_ctl *ctl)
{
	struct pollfd pfd = {.fd = nftdp_ctl_fd(ctl), .events = POLLIN};

	return poll(&pfd, 1, 0) > 0;
}

static bool all_idle(const struct nftdp_dp *dp, long ms)
{
	uint64_t lim = rte_get_tsc_hz() / 1000 * (uint64_t)ms;

	for (unsigned int i = 0; i < dp->n_workers; i++)
		if (!nftdp_dp_worker_idle_for(&dp->w[i], lim))
			return false;
	return true;
}

static int setup_ports(struct nftdp_dp *dp, const struct opts *o, struct nftdp_ctl_config *cfg)
{
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port)
	{
		struct nftdp_dp_port *pt = &dp->port[port];
		struct nftdp_ctl_iface *ifc;

		if (cfg->n_ifaces == NFTDP_CTL_MAX_IFACES)
			break;
		pt->used = true;
		pt->port_id = port;
		pt->ifindex = port + 1u;
		if (o->ifname[port])
			snprintf(pt->name, sizeof(pt->name), "%s", o->ifname[port]);
		else
			snprintf(pt->name, sizeof(pt->name), "dp%u", port);
		ifc = &cfg->ifaces[cfg->n_ifaces++];
		snprintf(ifc->name, sizeof(ifc->name), "%s", pt->name);
		ifc->ifindex = pt->ifindex;
		if (port + 1u > dp->n_ports)
			dp->n_ports = (uint16_t)(port + 1u);
		dp->wire[port] = port;
	}
	if (dp->n_ports == 0) {
		fprintf(stderr, "nftdp: no ports (give --vdev=... or a PCI device)\n");
		return -1;
	}
	for (unsigned int i = 0; i < o->n_ifaddr; i++) {
		char buf[INET6_ADDRSTRLEN + 8], *eq, *sl, *end;
		unsigned long p, plen = 0;
		struct nftdp_dp_port *pt;

		snprintf(buf, sizeof(buf), "%s", o->ifaddr[i]);
		eq = strchr(buf, '=');
		if (eq == NULL)
			goto bad_addr;
		*eq = '\0';
		p = strtoul(buf, &end, 10);
		if (*end || end == buf || p >= dp->n_ports || !dp->port[p].used)
			goto bad_addr;
		pt = &dp->port[p];
		sl = strchr(eq + 1, '/');
		if (sl) {
			*sl = '\0';
			plen = strtoul(sl + 1, &end, 10);
			if (*end || end == sl + 1)
				goto bad_addr;
		}
		if (inet_pton(AF_INET, eq + 1, pt->addr4) == 1 && plen <= 32) {
			pt->has_addr4 = true;
			pt->plen4 = (uint8_t)(sl ? plen : 32);
			dp->ifaddrs = true;
		} else if (inet_pton(AF_INET6, eq + 1, pt->addr6) == 1 && plen <= 128) {
			pt->has_addr6 = true;
			dp->ifaddrs = true;
		} else {
			goto bad_addr;
		}
		/* what route lookups treat as ours (o->ifaddr holds at most
		 * NFTDP_DP_OWN_MAX) */
		nftdp_dp_own_add(&dp->own, strchr(eq + 1, ':') == NULL,
				 strchr(eq + 1, ':') ? pt->addr6 : pt->addr4);
		continue;
	bad_addr:
		fprintf(stderr, "nftdp: bad --ifaddr '%s' (want PORT=ADDR[/LEN])\n", o->ifaddr[i]);
		return -1;
	}
	for (unsigned int i = 0; i < o->n_wire; i++) {
		int a = o->wire[i][0], b = o->wire[i][1];

		if (a >= dp->n_ports || b >= dp->n_ports || !dp->port[a].used ||
		    !dp->port[b].used) {
			fprintf(stderr, "nftdp: --wire %d:%d: no such port\n", a, b);
			return -1;
		}
		dp->wire[a] = (uint16_t)b;
		dp->wire[b] = (uint16_t)a;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct nftdp_ctl_config cfg = {0};
	struct opts o = {.socket_path = "/run/nftdp/nfnetlink.sock",
			 .exit_on_idle_ms = -1,
			 .conntrack_max = 262144,
			 .flow_cache = 65536,
			 .conntrack_events = -1,
			 .host_rate = 20000};
	struct nftdp_vm_state_config scfg = {0};
	struct nftdp_vm_gen_domain_config dcfg = {0};
	static struct nftdp_dp dp;
	unsigned int lcores[NFTDP_DP_MAX_WORKERS], lc;
	struct nftdp_ctl *ctl = NULL;
	struct sigaction sa;
	uint64_t hz, next_stats, next_ctl = 0, ctl_hot_until = 0, t_start;
	bool run_workers;
	int ret, n, rc = 1;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "nftdp: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	argv[0] = (char *)"nftdp";
	nftdp_ct_timeouts_default(&o.ct_tmo);
	/* --idle-sleep's default from the environment: a test suite sets it
	 * once for every daemon it starts */
	{
		const char *e = getenv("NFTDP_IDLE_SLEEP_US");
		unsigned long v;

		if (e && *e) {
			if (parse_uint(e, IDLE_SLEEP_MAX_US, &v) < 0) {
				fprintf(stderr, "nftdp: NFTDP_IDLE_SLEEP_US=%s: not 0-%u\n", e,
					IDLE_SLEEP_MAX_US);
				rte_eal_cleanup();
				return 2;
			}
			o.idle_sleep_us = (unsigned int)v;
		}
	}
	if (parse_args(argc, argv, &o) < 0) {
		rte_eal_cleanup();
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	dp.burst = o.burst ? o.burst : 32;
	dp.flow_cache = o.flow_cache;
	dp.flow_verify = o.flow_verify;
	dp.idle_sleep_us = o.idle_sleep_us;
	dp.router = o.router || o.host_ports;
	nftdp_vm_physdev_bridged(!dp.router); /* xt_physdev: wire mode bridges */
	dp.route = o.route && !o.control_only;
	dp.mtu = (uint16_t)o.mtu;
	dp.n_mbufs = o.mbufs;
	dp.mbuf_size = (uint16_t)o.mbuf_size;
	if (setup_ports(&dp, &o, &cfg) < 0)
		goto out_eal;

	/* every worker lcore is a worker, --workers N the first N of them */
	RTE_LCORE_FOREACH_WORKER(lc)
	{
		if (dp.n_workers == NFTDP_DP_MAX_WORKERS ||
		    (o.workers && dp.n_workers == o.workers))
			break;
		lcores[dp.n_workers++] = lc;
	}
	if (dp.n_workers == 0) {
		dp.main_is_worker = true;
		dp.n_workers = 1;
		lcores[0] = rte_get_main_lcore();
	}

	scfg.n_workers = dp.n_workers;
	/* ceilings, reserved as address space only: memory follows the
	 * ruleset (docs/vm.md) */
	scfg.max_counters = 1u << 24;
	scfg.max_cells = 1u << 22;
	scfg.log_ring_size = 1024;
	scfg.hash_seed = (uint32_t)rte_rdtsc();
	scfg.local_stack = o.host_ports; /* redirect reaches the host */
	ret = nftdp_vm_state_create(&scfg, &dp.state);
	if (ret < 0) {
		fprintf(stderr, "nftdp: VM state: %s\n", strerror(-ret));
		goto out_eal;
	}
	dcfg.max_readers = dp.n_workers;
	dcfg.state = dp.state;
	dcfg.set_reclaim = set_reclaim;
	ret = nftdp_vm_gen_domain_create(&dcfg, &dp.dom);
	if (ret < 0) {
		fprintf(stderr, "nftdp: generation domain: %s\n", strerror(-ret));
		goto out_state;
	}
	if (o.host_ports) {
		/* host interfaces are extra ports: before the queues are made */
		dp.host_rate = o.host_rate;
		dp.host_burst = o.host_rate / 10 > 64 ? o.host_rate / 10 : 64;
		if (nftdp_dp_host_setup(&dp,
					o.host_virtio ? NFTDP_DP_HOST_VIRTIO : NFTDP_DP_HOST_TAP,
					o.host_ifname) < 0)
			goto out_ports;
	}
	if (nftdp_dp_ports_init(&dp) < 0)
		goto out_ports;
	ret = nftdp_dp_workers_init(&dp, lcores);
	if (ret < 0) {
		fprintf(stderr, "nftdp: workers: %s\n", strerror(-ret));
		goto out_workers;
	}
	/* fib's table: now with --mirror-routes, else at the first commit
	 * that uses fib (cfg.fib_prepare); --control-only runs no fib and
	 * has no quiescing worker to free old tables behind */
	if (nftdp_dp_fib_init(&dp, (o.mirror_routes || o.host_ports) && !o.control_only) < 0)
		goto out_workers;
	/* --route: the neighbours beside the routes */
	if (dp.route && nftdp_dp_nexthop_init(&dp) < 0)
		goto out_workers;
	/* --route --host-ports: unresolved next hops wait for the host */
	if (nftdp_dp_unres_init(&dp) < 0) {
		fprintf(stderr, "nftdp: next hop queues: %s\n", strerror(ENOMEM));
		goto out_workers;
	}
	if (dp.host)
		nftdp_dp_host_workers(&dp);
	o.ct_cfg.timeouts = &o.ct_tmo;
	/* conntrack -E: each new connection, change and end is copied into the
	 * worker's ring whether or not anybody listens */
	o.ct_cfg.event_ring_size = o.conntrack_events < 0 ? 4096 : (uint32_t)o.conntrack_events;
	ret = nftdp_dp_ct_init(&dp, (uint32_t)o.conntrack_max, &o.ct_cfg);
	if (ret < 0)
		goto out_workers;
	ret = nftdp_dp_defrag_init(&dp); /* fragments with conntrack */
	if (ret < 0)
		goto out_workers;
	ret = nftdp_dp_synproxy_init(&dp); /* synproxy's hook before confirm */
	if (ret < 0)
		goto out_workers;
	if (nftdp_dp_telemetry_register(&dp) < 0)
		fprintf(stderr, "nftdp: telemetry commands not registered\n");

	cfg.socket_path = o.socket_path;
	cfg.flowtables = o.flowtables;
	/* --control-only: no generations, workers see no base chains */
	cfg.vm_state = o.control_only ? NULL : dp.state;
	cfg.gen_dom = o.control_only ? NULL : dp.dom;
	cfg.fib_prepare = nftdp_dp_fib_prepare;
	cfg.fib_arg = &dp;
	/* ctnetlink: requests run on the worker owning the shard, or here when
	 * the main lcore is the worker or none runs */
	ret =
	    nftdp_dp_ct_ctl_init(&dp, dp.main_is_worker || o.control_only, o.ct_cfg.acct, &cfg.ct);
	if (ret < 0)
		goto out_workers;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = nftdp_ctl_create(&cfg, &ctl);
	if (ret < 0) {
		fprintf(stderr, "nftdp: control socket %s: %s\n", o.socket_path, strerror(-ret));
		goto out_workers;
	}
	/* the ruleset is in place before the first packet is read */
	if (o.ruleset && run_nft(ctl, o.socket_path, NULL, "-f", o.ruleset, NULL) < 0) {
		fprintf(stderr, "nftdp: loading ruleset %s failed\n", o.ruleset);
		goto out_ctl;
	}
	if (o.ipset) {
		/* the sets iptables' set match names exist before its rules */
		setenv("NFTDP_NFT", "/usr/sbin/ipset", 1);
		nft_stdin = o.ipset;
		ret = run_nft(ctl, o.socket_path, NULL, "restore", NULL, NULL);
		nft_stdin = NULL;
		unsetenv("NFTDP_NFT");
		if (ret < 0) {
			fprintf(stderr, "nftdp: loading %s failed\n", o.ipset);
			goto out_ctl;
		}
	}
	if (o.iptables) {
		size_t n = strlen(o.iptables);
		bool v6 = n > 3 && strcmp(o.iptables + n - 3, ".v6") == 0;
		bool eb = n > 3 && strcmp(o.iptables + n - 3, ".eb") == 0;

		/* nftdp-nft runs $NFTDP_NFT instead of nft */
		setenv("NFTDP_NFT",
		       eb   ? "/usr/sbin/ebtables-nft-restore"
		       : v6 ? "/usr/sbin/ip6tables-nft-restore"
			    : "/usr/sbin/iptables-nft-restore",
		       1);
		nft_stdin = eb ? o.iptables : NULL;
		ret = run_nft(ctl, o.socket_path, NULL, eb ? NULL : o.iptables, NULL, NULL);
		nft_stdin = NULL;
		unsetenv("NFTDP_NFT");
		if (ret < 0) {
			fprintf(stderr, "nftdp: loading %s failed\n", o.iptables);
			goto out_ctl;
		}
	}

	{
		char fc[16] = "off";

		if (dp.flow_cache)
			snprintf(fc, sizeof(fc), "%u", dp.flow_cache);
		/* tests wait for the " mode" at the end of this line */
		printf("nftdp: %u worker%s%s, burst %u, flow cache %s, %s mode\n", dp.n_workers,
		       dp.n_workers == 1 ? "" : "s",
		       dp.main_is_worker ? " (on the main lcore)" : "", dp.burst, fc,
		       dp.route	   ? "route"
		       : dp.router ? "router"
				   : "wire");
	}
	hz = rte_get_tsc_hz();
	dp.start_tsc = t_start = rte_rdtsc();
	next_stats = t_start + (uint64_t)(o.stats_period * (double)hz);
	/* --control-only forwards nothing: no worker polls (a net_null port
	 * would keep one busy for nothing) */
	run_workers = !o.control_only;
	nftdp_dp_ct_ctl_live(run_workers && !dp.main_is_worker);
	for (unsigned int i = 0; i < dp.n_workers; i++) {
		if (dp.main_is_worker || !run_workers)
			break;
		ret = rte_eal_remote_launch(nftdp_dp_worker_main, &dp.w[i], dp.w[i].lcore);
		if (ret < 0) {
			fprintf(stderr, "nftdp: lcore %u: %s\n", dp.w[i].lcore, strerror(-ret));
			quit = 1;
		}
	}
	if (dp.main_is_worker && run_workers)
		nftdp_dp_worker_begin(&dp.w[0]);
	fflush(stdout);
	nftdp_dp_sd_notify("READY=1"); /* nftdp.service: started */

	ret = 0;
	while (!quit) {
		uint64_t now;

		if (dp.main_is_worker && run_workers) {
			/* the burst loop, with a control poll every millisecond */
			nftdp_dp_worker_poll(&dp.w[0]);
			now = rte_rdtsc();
			/* every millisecond, and on every pass for 20 ms after the
			 * socket had work (an nft dump is many round trips) */
			if (now < next_ctl && now >= ctl_hot_until)
				continue;
			next_ctl = now + hz / 1000;
			/* a listener owed ENOBUFS shows no descriptor */
			if (ctl_readable(ctl) || nftdp_ctl_pending(ctl)) {
				ctl_hot_until = now + hz / 50;
				nftdp_vm_gen_reader_offline(dp.dom, 0);
				ret = nftdp_ctl_poll(ctl, 0);
				nftdp_vm_gen_reader_online(dp.dom, 0);
			}
		} else {
			ret = nftdp_ctl_poll(ctl, nftdp_dp_fib_wait(&dp, nftdp_ctl_fd(ctl), 10));
		}
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "nftdp: control socket: %s\n", strerror(-ret));
			break;
		}
		ret = 0;
		if (reload) {
			reload = 0;
			reload_ruleset(ctl, o.socket_path, o.ruleset, &dp);
		}
		nftdp_vm_gen_reclaim(dp.dom);
		nftdp_dp_fib_tick(&dp); /* route changes: a new table for fib */
		nftdp_dp_log_drain(&dp);
		nftdp_ctl_ct_events(ctl);    /* conntrack -E, also when the socket is quiet */
		nftdp_ctl_trace_events(ctl); /* nft monitor trace, likewise */
		nftdp_ctl_nflog_events(ctl); /* log group N: packets and flush timers */
		now = rte_rdtsc();
		if (o.stats_period > 0 && now >= next_stats) {
			nftdp_dp_stats_print(&dp, o.stats_period);
			next_stats = now + (uint64_t)(o.stats_period * (double)hz);
		}
		if (o.exit_on_idle_ms >= 0 && all_idle(&dp, o.exit_on_idle_ms))
			break;
	}

	dp.stop = true;
	if (dp.main_is_worker && run_workers)
		nftdp_dp_worker_end(&dp.w[0]);
	else
		rte_eal_mp_wait_lcore();
	nftdp_dp_ct_ctl_live(false); /* the shards are the main thread's now */
	if (run_workers)
		nftdp_dp_workers_drain(&dp);
	nftdp_dp_log_drain(&dp);
	{
		double run_s = (double)(rte_rdtsc() - t_start) / (double)hz;

		rc = ret < 0 ? 1 : 0;
		/* counters live in the arena: list them while it exists */
		if (o.listing &&
		    run_nft(ctl, o.socket_path, o.listing, "list", "ruleset", NULL) < 0)
			rc = 1;
		if (o.listing_json &&
		    run_nft(ctl, o.socket_path, o.listing_json, "-j", "list", "ruleset") < 0)
			rc = 1;
		if (o.stats_json && nftdp_dp_stats_json(&dp, o.stats_json, run_s) < 0) {
			fprintf(stderr, "nftdp: %s: %s\n", o.stats_json, strerror(errno));
			rc = 1;
		}
	}
out_ctl:
	nftdp_ctl_destroy(ctl);
out_workers:
	nftdp_dp_ct_ctl_fini();
	nftdp_dp_telemetry_stop();
	nftdp_dp_defrag_fini(&dp); /* held fragments go back to the port pools */
	nftdp_dp_unres_fini(&dp);  /* packets still waiting on a next hop too */
	nftdp_dp_ports_close(&dp);
	nftdp_dp_ct_fini(&dp);
	nftdp_dp_workers_free(&dp);
	nftdp_dp_nexthop_fini(&dp);
	nftdp_dp_fib_fini(&dp);
	nftdp_vm_gen_domain_destroy(dp.dom);
	goto out_state;
out_ports:
	nftdp_dp_ports_close(&dp);
	nftdp_vm_gen_domain_destroy(dp.dom);
out_state:
	nftdp_vm_state_destroy(dp.state);
out_eal:
	rte_eal_cleanup();
	return rc;
}
