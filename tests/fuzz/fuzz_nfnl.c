/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the nfnetlink parser and the nf_tables object store:
 * each input is the bytes of one sendmsg to the control plane (a batch or
 * plain requests). The store persists across inputs so that later inputs
 * meet the objects earlier ones made; every 64 inputs a full dump of every
 * object kind runs over it. A stand-in session (tests/lib/ctl_stub.c)
 * replaces the unix socket (server.c): it asks for extended acks, joins
 * every group, and drops the answers it is built. Commits compile and
 * publish generations (control/build.c, vm/, sets/) as in the daemon, into
 * a domain without readers. ctnetlink requests (conntrack -I/-U/-G/-D/-L,
 * expect) reach a stand-in connection table of a few entries (ct_stub
 * below), so their parsing and answers run as against the daemon's.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"
#include "ctl_stub.h"
#include "nftdp_conntrack.h"
#include "nftdp_sets.h"
#include "nftdp_vm.h"

static struct nftdp_ctl ctl;
static struct nftdp_vm_state *vm;
static struct nftdp_vm_gen_domain *dom;

static void reclaim_set(struct nftdp_set *s, void *arg)
{
	(void)arg;
	nftdp_set_reclaim(s);
}

/* ---- a stand-in connection table for ctnetlink ---- */

#define CT_STUB_MAX 8

static struct nftdp_ct_info ct_stub[CT_STUB_MAX];
static unsigned int ct_stub_n;

static int ct_find(const struct nftdp_ct_tuple *t)
{
	for (unsigned int i = 0; i < ct_stub_n; i++)
		if (!memcmp(&ct_stub[i].tuple[0], t, sizeof(*t)) ||
		    !memcmp(&ct_stub[i].tuple[1], t, sizeof(*t)))
			return (int)i;
	return -1;
}

static int stub_dump(void *arg, unsigned int shard, unsigned int skip, struct nftdp_ct_info *out,
		     unsigned int max)
{
	unsigned int n = 0;

	(void)arg;
	(void)shard;
	for (unsigned int i = skip; i < ct_stub_n && n < max; i++)
		out[n++] = ct_stub[i];
	return (int)n;
}

static int stub_get(void *arg, const struct nftdp_ct_tuple *t, struct nftdp_ct_info *out)
{
	int i = ct_find(t);

	(void)arg;
	if (i < 0)
		return -ENOENT;
	*out = ct_stub[i];
	return 0;
}

static int stub_del(void *arg, const struct nftdp_ct_tuple *t, uint32_t id)
{
	int i = ct_find(t);

	(void)arg;
	if (i < 0 || (id && ct_stub[i].id != id))
		return -ENOENT;
	ct_stub[i] = ct_stub[--ct_stub_n];
	return 0;
}

static int stub_flush(void *arg)
{
	int n = (int)ct_stub_n;

	(void)arg;
	ct_stub_n = 0;
	return n;
}

static void stub_stats(void *arg, unsigned int shard, struct nftdp_ct_stats *out)
{
	(void)arg;
	(void)shard;
	memset(out, 0, sizeof(*out));
	out->count = ct_stub_n;
}

static unsigned int stub_events(void *arg, unsigned int shard,
				bool (*cb)(const struct nftdp_ct_event *ev, void *cb_arg),
				void *cb_arg)
{
	(void)arg;
	(void)shard;
	(void)cb;
	(void)cb_arg;
	return 0;
}

static int stub_exp_dump(void *arg, unsigned int shard, struct nftdp_ct_expect_info *out,
			 unsigned int max)
{
	(void)arg;
	(void)shard;
	(void)out;
	(void)max;
	return 0;
}

/* what the table would do with a change: create where asked and there is
 * room, else update the entry found */
static int stub_change(void *arg, const struct nftdp_ct_change *c)
{
	const struct nftdp_ct_tuple *t = &c->tuple[(c->has & NFTDP_CT_CHG_ORIG) ? 0 : 1];
	int i = ct_find(t);

	(void)arg;
	if (i >= 0) {
		if (c->has & NFTDP_CT_CHG_EXCL)
			return -EEXIST;
		if (c->has & NFTDP_CT_CHG_MARK)
			ct_stub[i].mark = (ct_stub[i].mark & ~c->mark_mask) ^ c->mark;
		if (c->has & NFTDP_CT_CHG_TIMEOUT)
			ct_stub[i].timeout_s = c->timeout_s;
		return 0;
	}
	if (!(c->has & NFTDP_CT_CHG_CREATE))
		return -ENOENT;
	if (ct_stub_n == CT_STUB_MAX)
		return -ENOMEM;
	memset(&ct_stub[ct_stub_n], 0, sizeof(ct_stub[0]));
	ct_stub[ct_stub_n].tuple[0] = c->tuple[0];
	ct_stub[ct_stub_n].tuple[1] = c->tuple[1];
	ct_stub[ct_stub_n].status = c->status;
	ct_stub[ct_stub_n].timeout_s = c->timeout_s;
	ct_stub[ct_stub_n].mark = c->mark;
	ct_stub[ct_stub_n].id = ct_stub_n + 1;
	ct_stub[ct_stub_n].use = 1;
	ct_stub_n++;
	return 0;
}

static int stub_get_zero(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
			 struct nftdp_ct_info *out)
{
	int i = ct_find(t);

	(void)arg;
	if (i < 0 || (id && ct_stub[i].id != id))
		return -ENOENT;
	*out = ct_stub[i];
	memset(ct_stub[i].packets, 0, sizeof(ct_stub[i].packets));
	memset(ct_stub[i].bytes, 0, sizeof(ct_stub[i].bytes));
	return 0;
}

static int stub_exp_get(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
			struct nftdp_ct_expect_info *out)
{
	(void)arg;
	(void)t;
	(void)id;
	(void)out;
	return -ENOENT;
}

static int stub_exp_del(void *arg, const struct nftdp_ct_tuple *t, uint32_t id)
{
	(void)arg;
	(void)t;
	(void)id;
	return -ENOENT;
}

static int stub_exp_flush(void *arg, const char *helper)
{
	(void)arg;
	(void)helper;
	return 0;
}

static int stub_exp_timeout(void *arg, const struct nftdp_ct_tuple *t, uint32_t timeout_s)
{
	(void)arg;
	(void)t;
	(void)timeout_s;
	return -ENOENT;
}

/* an expectation needs a master with a helper: none here has one */
static int stub_exp_new(void *arg, const struct nftdp_ct_expect_new *n)
{
	(void)arg;
	(void)n;
	return -EOPNOTSUPP;
}

static const struct nftdp_ctl_ct_ops ct_stub_ops = {
    .n_shards = 1,
    .acct = true,
    .dump = stub_dump,
    .get = stub_get,
    .del = stub_del,
    .flush = stub_flush,
    .stats = stub_stats,
    .events_poll = stub_events,
    .exp_dump = stub_exp_dump,
    .change = stub_change,
    .get_zero = stub_get_zero,
    .exp_get = stub_exp_get,
    .exp_del = stub_exp_del,
    .exp_flush = stub_exp_flush,
    .exp_timeout = stub_exp_timeout,
    .exp_new = stub_exp_new,
};

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
	ctl.cfg.ct = &ct_stub_ops;
	ct_stub_n = 0;
	ctl_stub.comm = "fuzz";
	ctl_stub.ext_ack = true;
	ctl_stub.listeners = true;
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
		ctl_nfnl_rcv(&ctl, &ctl_stub_session, buf, nlh->nlmsg_len);
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
	ctl_nfnl_rcv(&ctl, &ctl_stub_session, data, size);
	if (++n % 64 == 0)
		dump_all();
	if (n % 4096 == 0) {
		/* start over now and then, so memory stays bounded */
		stop();
	}
	return 0;
}
