/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the nfnetlink parser and the nf_tables object store:
 * each input is the bytes of one sendmsg to the control plane (a batch or
 * plain requests). The store persists across inputs so that later inputs
 * meet the objects earlier ones made; every 64 inputs a full dump of every
 * object kind runs over it. A stand-in session replaces the unix socket
 * (server.c): answers are built and dropped. Commits compile and publish
 * generations (control/build.c, vm/, sets/) as in the daemon, into a domain
 * without readers.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

struct ctl_session {
	int unused;
};

static struct ctl_session session;
static struct nftdp_ctl ctl;
static struct nftdp_vm_state *vm;
static struct nftdp_vm_gen_domain *dom;

static void reclaim_set(struct nftdp_set *s, void *arg)
{
	(void)arg;
	nftdp_set_reclaim(s);
}

static int start(void)
{
	struct nftdp_vm_state_config sc = {
	    .n_workers = 1, .max_counters = 4096, .max_cells = 1024, .log_ring_size = 64};
	struct nftdp_vm_gen_domain_config dc = {.max_readers = 1, .set_reclaim = reclaim_set};

	if (nftdp_vm_state_create(&sc, &vm) < 0)
		return -1;
	dc.state = vm;
	if (nftdp_vm_gen_domain_create(&dc, &dom) < 0)
		return -1;
	ctl.cfg.n_ifaces = 1;
	strcpy(ctl.cfg.ifaces[0].name, "dp0");
	ctl.cfg.ifaces[0].ifindex = 1;
	ctl.cfg.vm_state = vm;
	ctl.cfg.gen_dom = dom;
	if (ctl_state_create(&ctl) < 0 || ctl_build_create(&ctl) < 0)
		return -1;
	return 0;
}

static void stop(void)
{
	if (!ctl.state)
		return;
	ctl_build_destroy(&ctl);
	ctl_state_destroy(&ctl);
	nftdp_vm_gen_domain_destroy(dom);
	nftdp_vm_state_destroy(vm);
}

uint32_t ctl_session_portid(const struct ctl_session *s)
{
	(void)s;
	return 4242;
}

pid_t ctl_session_pid(const struct ctl_session *s)
{
	(void)s;
	return 4242;
}

const char *ctl_session_comm(const struct ctl_session *s)
{
	(void)s;
	return "fuzz";
}

bool ctl_session_privileged(const struct ctl_session *s)
{
	(void)s;
	return true;
}

bool ctl_session_ext_ack(const struct ctl_session *s)
{
	(void)s;
	return true;
}

bool ctl_session_cap_ack(const struct ctl_session *s)
{
	(void)s;
	return false;
}

bool ctl_session_in_group(const struct ctl_session *s, unsigned int group)
{
	(void)s;
	(void)group;
	return true;
}

int ctl_session_send(struct ctl_session *s, const void *buf, size_t len)
{
	(void)s;
	/* every datagram must hold whole messages: walk them */
	for (size_t off = 0; off + sizeof(struct nlmsghdr) <= len;) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)((const char *)buf + off);

		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len - off)
			__builtin_trap();
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return 0;
}

bool ctl_server_has_listeners(const struct ctl_server *srv, unsigned int group)
{
	(void)srv;
	(void)group;
	return true;
}

void ctl_server_multicast(struct ctl_server *srv, unsigned int group, const void *buf, size_t len,
			  const struct ctl_session *skip)
{
	(void)srv;
	(void)group;
	(void)skip;
	ctl_session_send(&session, buf, len);
}

static void dump_all(void)
{
	static const uint8_t types[] = {NFT_MSG_GETTABLE, NFT_MSG_GETCHAIN, NFT_MSG_GETRULE,
					NFT_MSG_GETSET,	  NFT_MSG_GETOBJ,   NFT_MSG_GETFLOWTABLE};
	char buf[64];

	for (size_t i = 0; i < sizeof(types); i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct nfgenmsg *nfg;

		nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | types[i];
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
		nfg->nfgen_family = AF_UNSPEC;
		ctl_nfnl_rcv(&ctl, &session, buf, nlh->nlmsg_len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned int n;

	if (ctl.state == NULL) {
		if (start() < 0)
			__builtin_trap();
		/* the slot map lives in reserved (mmap'd) memory that LeakSanitizer
		 * does not scan: tear down before its exit check, or every live
		 * slot key reads as leaked */
		if (!n)
			atexit(stop);
	}
	ctl_nfnl_rcv(&ctl, &session, data, size);
	if (++n % 64 == 0)
		dump_all();
	if (n % 4096 == 0) {
		/* start over now and then, so memory stays bounded */
		stop();
	}
	return 0;
}
