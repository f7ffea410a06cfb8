/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp daemon entry point: EAL, ports, the control thread.
 *
 * The main lcore is the control thread: it serves the nfnetlink control
 * socket (control/). Worker lcores run the dataplane once it exists.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "nftdp_control.h"

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

struct opts {
	const char *socket_path;
	const char *ruleset;
	const char *ifname[RTE_MAX_ETHPORTS];
	bool flowtables;
	bool control_only;
};

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL args] -- [--socket PATH] [--ruleset FILE] [--ifname P=NAME]...\n"
		"  --socket PATH    control socket (default /run/nftdp/nfnetlink.sock)\n"
		"  --ruleset FILE   load FILE with nft through the control socket at start\n"
		"  --ifname P=NAME  name port P NAME (default dpP)\n"
		"  --flowtables     accept flowtables (the reference kernel has none)\n"
		"  --control-only   store rulesets without compiling them for the workers\n"
		"                   (for testing the control plane against the kernel)\n",
		prog);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"ruleset", required_argument, NULL, 'r'},
		{"ifname", required_argument, NULL, 'i'},
		{"flowtables", no_argument, NULL, 'F'},
		{"control-only", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
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
		case 'i': {
			char *eq = strchr(optarg, '=');
			char *end;
			unsigned long p;

			if (eq == NULL)
				goto bad;
			p = strtoul(optarg, &end, 10);
			if (end != eq || p >= RTE_MAX_ETHPORTS || strlen(eq + 1) == 0 ||
			    strlen(eq + 1) >= NFTDP_CTL_IFNAMSIZ)
				goto bad;
			o->ifname[p] = eq + 1;
			break;
		bad:
			fprintf(stderr, "nftdp: bad --ifname '%s' (want PORT=NAME)\n", optarg);
			return -1;
		}
		case 'F':
			o->flowtables = true;
			break;
		case 'C':
			o->control_only = true;
			break;
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

/* Load the ruleset with the stock nft through our own socket, serving the
 * control socket while nft runs. */
static int load_ruleset(struct nftdp_ctl *ctl, const char *sock, const char *file)
{
	char dir[PATH_MAX], wrapper[PATH_MAX + 16];
	int status;
	pid_t pid;

	if (self_dir(dir, sizeof(dir)) < 0)
		return -1;
	snprintf(wrapper, sizeof(wrapper), "%s/nftdp-nft", dir);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setenv("NFTDP_SOCKET", sock, 1);
		execl(wrapper, wrapper, "-f", file, (char *)NULL);
		fprintf(stderr, "nftdp: cannot run %s: %s\n", wrapper, strerror(errno));
		_exit(127);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (quit) {
			kill(pid, SIGTERM);
			waitpid(pid, &status, 0);
			return -1;
		}
		nftdp_ctl_poll(ctl, 10);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "nftdp: loading ruleset %s failed\n", file);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct nftdp_ctl_config cfg = {0};
	struct opts o = {.socket_path = "/run/nftdp/nfnetlink.sock"};
	struct nftdp_ctl *ctl;
	struct sigaction sa;
	uint16_t port;
	int ret, n;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "nftdp: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	argv[0] = (char *)"nftdp";
	if (parse_args(argc, argv, &o) < 0) {
		rte_eal_cleanup();
		return 2;
	}

	RTE_ETH_FOREACH_DEV(port) {
		struct nftdp_ctl_iface *ifc;

		if (cfg.n_ifaces == NFTDP_CTL_MAX_IFACES)
			break;
		ifc = &cfg.ifaces[cfg.n_ifaces++];
		if (o.ifname[port])
			snprintf(ifc->name, sizeof(ifc->name), "%s", o.ifname[port]);
		else
			snprintf(ifc->name, sizeof(ifc->name), "dp%u", port);
		ifc->ifindex = port + 1;
	}
	cfg.socket_path = o.socket_path;
	cfg.flowtables = o.flowtables;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = nftdp_ctl_create(&cfg, &ctl);
	if (ret < 0) {
		fprintf(stderr, "nftdp: control socket %s: %s\n", o.socket_path, strerror(-ret));
		rte_eal_cleanup();
		return 1;
	}
	if (o.ruleset && load_ruleset(ctl, o.socket_path, o.ruleset) < 0) {
		nftdp_ctl_destroy(ctl);
		rte_eal_cleanup();
		return 1;
	}

	while (!quit) {
		ret = nftdp_ctl_poll(ctl, 100);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "nftdp: control socket: %s\n", strerror(-ret));
			break;
		}
	}

	nftdp_ctl_destroy(ctl);
	rte_eal_cleanup();
	return ret < 0 && ret != -EINTR ? 1 : 0;
}
