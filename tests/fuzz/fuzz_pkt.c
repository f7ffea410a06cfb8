/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the whole packet path: each input is a short
 * sequence of frames fed as bursts through nftdp_dp_pipeline_burst(), the
 * worker's entry (dataplane/pipeline.c), with conntrack, NAT, defrag and
 * --router steps on, under one ruleset (fuzz_pkt.nft) that uses every
 * expression the VM runs at every hook (FUZZ_PKT_RULESET names another:
 * tools/test.sh also runs fuzz_pkt_stateless.nft, which takes the cached
 * pass). State (connections, NAT bindings,
 * held fragments, sets, limits, quotas) persists across inputs, as in a
 * daemon that runs for a long time; a virtual clock that the input advances
 * makes timeouts happen.
 *
 * Set-up mirrors dataplane/main.c: EAL (no hugepages, two net_null ports),
 * VM state and generation domain, ports, one worker on the main lcore,
 * conntrack, defrag, and the control plane on a private socket. The
 * ruleset is loaded once by the stock nft with the control shim preloaded
 * (a copy built without sanitizers: tests/fuzz/meson.build), as the
 * daemon's --ruleset does.
 *
 * Input: byte 0 is flags (bit 0: --router, else wire mode; bit 1: the
 * per-flow cache in verify mode, where a hit the chains judge otherwise
 * traps), then
 * records, each
 *
 *   hdr(1) len(2, big endian, & 0x7ff) bytes(len, clipped to what is left)
 *
 * hdr bit 0: rx port; bit 1: end the burst after this frame; bits 2-3:
 * advance the clock (0, 10 ms, 1 s, 200 s) before the frame's burst;
 * bit 4: the bytes are an IP packet, nftdp prepends an Ethernet header
 * (bit 5: IPv6 ethertype, else IPv4); bit 6: fix the IP lengths and the
 * IPv4 header, TCP, UDP and ICMP checksums, so that most frames pass
 * ip_rcv and conntrack's checksum check.
 *
 *   build-fuzz/tests/fuzz/fuzz_pkt -max_total_time=60 tests/fuzz/corpus/pkt
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "ct_ctl.h"
#include "dataplane_priv.h"
#include "nftdp_conntrack.h"
#include "nftdp_control.h"
#include "nftdp_sets.h"

#ifndef FUZZ_PKT_SHIM
#define FUZZ_PKT_SHIM "libnftdp_shim_plain.so"
#endif
#ifndef FUZZ_PKT_RULESET
#define FUZZ_PKT_RULESET "fuzz_pkt.nft"
#endif

#define MAX_FRAMES 64
#define FRAME_MAX 2047

static struct nftdp_dp dp;
static struct nftdp_ctl *ctl;
static char sock_path[108];
static uint64_t vnow_ns, vreal_ns;
static unsigned int pool_size;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_pkt: %s\n", what);
	exit(1);
}

static void set_reclaim(struct nftdp_set *s, void *arg)
{
	(void)arg;
	nftdp_set_reclaim(s);
}

static void cleanup(void)
{
	if (sock_path[0])
		unlink(sock_path);
	rmdir(rte_eal_get_runtime_dir()); /* empty with --no-shconf */
}

/* main.c's run_nft: nft -f FILE with the shim, serving the socket meanwhile */
static void load_ruleset(const char *file)
{
	const char *shim = getenv("FUZZ_PKT_SHIM") ? getenv("FUZZ_PKT_SHIM") : FUZZ_PKT_SHIM;
	const char *nft = getenv("NFTDP_NFT") ? getenv("NFTDP_NFT") : "/usr/sbin/nft";
	int status;
	pid_t pid;

	/* ld.so ignores a preload it cannot open, and nft would then program
	 * the host's kernel: never run it without the shim */
	if (access(shim, R_OK) != 0) {
		fprintf(stderr, "fuzz_pkt: %s missing (ninja -C BUILD %s): not running nft\n", shim,
			"tests/fuzz/libnftdp_shim_plain.so");
		exit(1);
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* and where we may, in a network namespace of its own, so that
		 * even then no host ruleset is touched */
		if (unshare(CLONE_NEWNET) != 0 && errno != EPERM)
			_exit(126);
		closefrom(STDERR_FILENO + 1);
		setenv("NFTDP_SOCKET", sock_path, 1);
		setenv("LD_PRELOAD", shim, 1);
		unsetenv("ASAN_OPTIONS");
		execl(nft, nft, "-f", file, (char *)NULL);
		_exit(127);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			die("waitpid");
		nftdp_ctl_poll(ctl, 10);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fuzz_pkt: nft -f %s failed (status %d; shim %s)\n", file, status,
			shim);
		exit(1);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char prefix[64];
	char *eal[] = {"fuzz_pkt",
		       "-l",
		       "0",
		       "--no-huge",
		       "-m",
		       "512",
		       "--no-pci",
		       "--no-shconf",
		       "--no-telemetry",
		       "--log-level=error",
		       "--vdev=net_null0",
		       "--vdev=net_null1",
		       prefix};
	struct nftdp_vm_state_config scfg = {0};
	struct nftdp_vm_gen_domain_config dcfg = {0};
	struct nftdp_ct_config ct_cfg = {0};
	static struct nftdp_ct_timeouts tmo;
	struct nftdp_ctl_config cfg = {0};
	const char *ruleset = getenv("FUZZ_PKT_RULESET");
	unsigned int lcore;
	uint16_t port;

	(void)argc;
	(void)argv;
	snprintf(prefix, sizeof(prefix), "--file-prefix=nftdp-fuzz-pkt-%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0)
		die("EAL init failed");

	dp.burst = 32;
	dp.router = true;
	dp.n_mbufs = 0; /* computed per port, as the daemon does */
	RTE_ETH_FOREACH_DEV(port)
	{
		struct nftdp_dp_port *pt = &dp.port[port];
		struct nftdp_ctl_iface *ifc = &cfg.ifaces[cfg.n_ifaces++];

		pt->used = true;
		pt->port_id = port;
		pt->ifindex = port + 1u;
		snprintf(pt->name, sizeof(pt->name), "dp%u", port);
		snprintf(ifc->name, sizeof(ifc->name), "%s", pt->name);
		ifc->ifindex = pt->ifindex;
		dp.n_ports = (uint16_t)(port + 1u);
	}
	if (dp.n_ports != 2)
		die("want two net_null ports");
	/* a router between two subnets: --wire 0:1, --ifaddr on both */
	dp.wire[0] = 1;
	dp.wire[1] = 0;
	memcpy(dp.port[0].addr4, (const uint8_t[]){10, 1, 255, 254}, 4);
	dp.port[0].has_addr4 = true;
	dp.port[0].plen4 = 16;
	memcpy(dp.port[1].addr4, (const uint8_t[]){10, 2, 255, 254}, 4);
	dp.port[1].has_addr4 = true;
	dp.port[1].plen4 = 16;
	memcpy(dp.port[0].addr6,
	       (const uint8_t[]){0x20, 0x01, 0x0d, 0xb8, 0, 1, [14] = 0xff, [15] = 0xff}, 16);
	dp.port[0].has_addr6 = true;

	dp.n_workers = 1;
	dp.main_is_worker = true;
	lcore = rte_get_main_lcore();
	scfg.n_workers = 1;
	scfg.max_counters = 1u << 12;
	scfg.max_cells = 1u << 10;
	scfg.log_ring_size = 256;
	scfg.hash_seed = 1;
	if (nftdp_vm_state_create(&scfg, &dp.state) < 0)
		die("VM state");
	dcfg.max_readers = 1;
	dcfg.state = dp.state;
	dcfg.set_reclaim = set_reclaim;
	if (nftdp_vm_gen_domain_create(&dcfg, &dp.dom) < 0)
		die("generation domain");
	if (nftdp_dp_ports_init(&dp) < 0)
		die("ports");
	/* a small per-flow cache, so evictions happen too */
	dp.flow_cache = 256;
	if (nftdp_dp_workers_init(&dp, &lcore) < 0)
		die("workers");
	nftdp_ct_timeouts_default(&tmo);
	ct_cfg.timeouts = &tmo;
	ct_cfg.event_ring_size = 64;
	if (nftdp_dp_ct_init(&dp, 2048, &ct_cfg) < 0)
		die("conntrack");
	if (nftdp_dp_defrag_init(&dp) < 0)
		die("defrag");
	if (nftdp_dp_synproxy_init(&dp) < 0)
		die("synproxy");
	if (nftdp_dp_ct_ctl_init(&dp, true, false, &cfg.ct) < 0)
		die("ctnetlink");

	snprintf(sock_path, sizeof(sock_path), "/tmp/nftdp-fuzz-pkt-%d.sock", (int)getpid());
	cfg.socket_path = sock_path;
	cfg.vm_state = dp.state;
	cfg.gen_dom = dp.dom;
	atexit(cleanup);
	if (nftdp_ctl_create(&cfg, &ctl) < 0)
		die("control socket");
	load_ruleset(ruleset ? ruleset : FUZZ_PKT_RULESET);
	nftdp_vm_gen_reclaim(dp.dom);

	nftdp_dp_worker_begin(&dp.w[0]);
	{
		const struct nftdp_vm_gen *gen = nftdp_vm_gen_acquire(dp.dom);

		/* every ruleset has prerouting chains; fuzz_pkt.nft netdev ones too */
		if (!gen || !nftdp_vm_gen_hook_len(gen, NFPROTO_IPV4, NF_INET_PRE_ROUTING) ||
		    (!ruleset && !nftdp_vm_gen_hook_len(gen, NFPROTO_NETDEV, NF_NETDEV_INGRESS)))
			die("the ruleset did not reach nftdp");
		nftdp_vm_gen_quiesce(dp.dom, 0);
	}
	vnow_ns = dp.w[0].ctx.now_ns;
	vreal_ns = dp.w[0].ctx.now_real_ns;
	pool_size = dp.w[0].pool->size;
	/* log statements print on stdout: keep libFuzzer's stderr readable */
	fflush(stdout);
	{
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
	}
	return 0;
}

/* the transport checksum at th (l4len bytes) with the pseudo header sum s */
static void l4_fix(uint8_t *th, uint32_t l4len, uint8_t proto, uint32_t s, bool v6)
{
	uint32_t off;

	switch (proto) {
	case IPPROTO_TCP:
		off = 16;
		break;
	case IPPROTO_UDP:
		off = 6;
		break;
	case IPPROTO_ICMP:
		off = 2;
		s = 0; /* no pseudo header */
		break;
	case IPPROTO_ICMPV6:
		off = 2;
		break;
	default:
		return;
	}
	(void)v6;
	if (l4len < off + 2)
		return;
	nftdp_wr16(th + off, 0);
	nftdp_st16(th + off, nftdp_csum_fold(nftdp_csum_partial(th, l4len, s)));
}

/* lengths and checksums of the IP packet at ip (len bytes) made right */
static void ip_fix(uint8_t *ip, uint32_t len)
{
	uint8_t ph[8] = {0};
	uint32_t s;

	if (len >= 20 && (ip[0] >> 4) == 4) {
		uint32_t ihl = (ip[0] & 0xfu) * 4u;

		if (ihl < 20) {
			ip[0] = 0x45;
			ihl = 20;
		}
		if (ihl > len)
			return;
		nftdp_wr16(ip + 2, (uint16_t)len);
		nftdp_wr16(ip + 10, 0);
		nftdp_st16(ip + 10, nftdp_csum_fold(nftdp_csum_partial(ip, ihl, 0)));
		if (nftdp_rd16(ip + 6) & 0x3fff)
			return; /* a fragment: its checksum is the datagram's */
		ph[1] = ip[9];
		nftdp_wr16(ph + 2, (uint16_t)(len - ihl));
		s = nftdp_csum_partial(ip + 12, 8, 0);
		s = nftdp_csum_partial(ph, 4, s);
		l4_fix(ip + ihl, len - ihl, ip[9], s, false);
	} else if (len >= 40 && (ip[0] >> 4) == 6) {
		nftdp_wr16(ip + 4, (uint16_t)(len - 40));
		nftdp_wr16(ph + 2, (uint16_t)(len - 40));
		ph[7] = ip[6];
		s = nftdp_csum_partial(ip + 8, 32, 0);
		s = nftdp_csum_partial(ph, 8, s);
		l4_fix(ip + 40, len - 40, ip[6], s, true);
	}
}

static void run_burst(struct rte_mbuf **m, unsigned int n, uint16_t port)
{
	struct nftdp_dp_worker *w = &dp.w[0];
	const struct nftdp_vm_gen *gen;

	if (n == 0)
		return;
	gen = nftdp_vm_gen_acquire(dp.dom);
	nftdp_dp_pipeline_burst(w, gen, port, m, n);
	nftdp_vm_gen_quiesce(dp.dom, w->id);
	nftdp_dp_tx_flush(w);
	nftdp_dp_ct_gc(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t step_ns[4] = {0, 10000000ull, 1000000000ull, 200000000000ull};
	struct nftdp_dp_worker *w = &dp.w[0];
	struct rte_mbuf *m[NFTDP_VM_BURST_MAX];
	unsigned int n = 0, frames = 0;
	uint16_t port = 0;
	size_t off = 1;

	if (size < 1)
		return 0;
	dp.router = data[0] & 1;
	/* bit 1: the flow cache's verify mode (hits judged by the chains too) */
	nftdp_vm_flowcache_verify(w->ctx.flow, data[0] & 2);
	while (off + 3 <= size && frames < MAX_FRAMES) {
		uint8_t hdr = data[off];
		uint32_t len = nftdp_rd16(data + off + 1) & FRAME_MAX, l2 = 0;
		uint16_t rx = hdr & 1;
		struct rte_mbuf *mb;
		uint8_t *d;

		off += 3;
		if (len > size - off)
			len = (uint32_t)(size - off);
		/* a burst is of one rx port, and at most dp.burst long */
		if (n && (rx != port || n == dp.burst)) {
			run_burst(m, n, port);
			n = 0;
		}
		if (n == 0 && (hdr >> 2) & 3) {
			vnow_ns += step_ns[(hdr >> 2) & 3];
			vreal_ns += step_ns[(hdr >> 2) & 3];
			w->ctx.now_ns = vnow_ns;
			w->ctx.now_ms = vnow_ns / 1000000ull;
			w->ctx.now_real_ns = vreal_ns;
		}
		port = rx;
		mb = rte_pktmbuf_alloc(w->pool);
		if (mb == NULL)
			__builtin_trap(); /* every mbuf is in use: a leak */
		if (hdr & 0x10)
			l2 = 14;
		d = (uint8_t *)rte_pktmbuf_append(mb, (uint16_t)(l2 + len));
		if (d == NULL) {
			rte_pktmbuf_free(mb);
			off += len;
			continue;
		}
		if (l2) {
			static const uint8_t macs[12] = {2, 0, 0, 0, 0, 0x10, 2, 0, 0, 0, 1, 0x10};

			memcpy(d, macs, 12);
			d[5] = (uint8_t)(0x10 + rx);
			d[11] = (uint8_t)(0x10 + rx);
			nftdp_wr16(d + 12, (hdr & 0x20) ? 0x86dd : 0x0800);
		}
		memcpy(d + l2, data + off, len);
		if (l2 && (hdr & 0x40))
			ip_fix(d + l2, len);
		mb->port = rx;
		off += len;
		m[n++] = mb;
		frames++;
		if (hdr & 2) {
			run_burst(m, n, port);
			n = 0;
		}
	}
	run_burst(m, n, port);
	nftdp_dp_log_drain(&dp);
	if (getenv("FUZZ_PKT_STATS")) {
		/* what became of the input's frames, for debugging a seed */
		fprintf(stderr, "fuzz_pkt: rx %lu replies %lu tx %lu %lu",
			w->st.rx[0] + w->st.rx[1], w->st.replies, w->st.tx[0], w->st.tx[1]);
		for (unsigned int d = 0; d < NFTDP_DP_DROP_MAX; d++)
			if (w->st.drop[d])
				fprintf(stderr, " %s %lu", nftdp_dp_drop_names[d], w->st.drop[d]);
		fprintf(stderr, "\n");
	}
	{
		struct nftdp_vm_flow_stats fs;

		/* a hit the chains judged otherwise is a cache bug */
		nftdp_vm_flowcache_stats(w->ctx.flow, &fs);
		if (fs.mismatches)
			__builtin_trap();
	}
	/* what the pipeline holds between inputs is bounded (defrag queues,
	 * nothing else): most of the pool must be back */
	if (rte_mempool_in_use_count(w->pool) > pool_size - pool_size / 8)
		__builtin_trap();
	return 0;
}

/* What Initialize creates lives as long as the process, pointed to from
 * DPDK memory that LeakSanitizer does not scan: no leak reports. A leak of
 * mbufs shows as a pool running dry (the check above). */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
