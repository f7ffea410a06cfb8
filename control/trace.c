// SPDX-License-Identifier: BSD-3-Clause
/*
 * NFT_MSG_TRACE to `nft monitor trace`: mirrors nft_trace_notify
 * (nf_tables_trace.c). Workers record trace events in vm/'s per-worker
 * rings; here the control thread drains them and multicasts each as the
 * kernel's message (attributes in its order) to the sessions that joined
 * NFNLGRP_NFTRACE. Recording is on only while some session listens
 * (nfnetlink_has_listeners), so nobody listening costs the packet path
 * nothing.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include "control_priv.h"
#include "nftdp_vm.h"

/* the kernel's size estimate of one message, with every name at its longest */
#define TRACE_MSG_MAX 2048

int ctl_trace_fill(void *buf, const struct nftdp_vm_trace_event *ev)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	uint64_t handle;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_TRACE;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = ev->family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;

	mnl_attr_put_u32(nlh, NFTA_TRACE_NFPROTO, htonl(ev->nfproto));
	mnl_attr_put_u32(nlh, NFTA_TRACE_TYPE, htonl(ev->type));
	mnl_attr_put_u32(nlh, NFTA_TRACE_ID, ev->id);
	mnl_attr_put_strz(nlh, NFTA_TRACE_CHAIN, ev->chain);
	mnl_attr_put_strz(nlh, NFTA_TRACE_TABLE, ev->table);
	if (ev->has_handle) {
		handle = htobe64(ev->handle);
		mnl_attr_put(nlh, NFTA_TRACE_RULE_HANDLE, sizeof(handle), &handle);
	}
	if (ev->has_verdict) {
		/* nft_verdict_dump */
		struct nlattr *nest = mnl_attr_nest_start(nlh, NFTA_TRACE_VERDICT);

		mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, htonl(ev->verdict));
		if (ev->target[0])
			mnl_attr_put_strz(nlh, NFTA_VERDICT_CHAIN, ev->target);
		mnl_attr_nest_end(nlh, nest);
	}
	if (ev->has_policy)
		mnl_attr_put_u32(nlh, NFTA_TRACE_POLICY, htonl(ev->policy));
	if (ev->mark)
		mnl_attr_put_u32(nlh, NFTA_TRACE_MARK, htonl(ev->mark));
	if (ev->packet) {
		/* nf_trace_fill_dev_info, then nf_trace_fill_pkt_info */
		if (ev->iif) {
			mnl_attr_put_u32(nlh, NFTA_TRACE_IIF, htonl(ev->iif));
			mnl_attr_put_u16(nlh, NFTA_TRACE_IIFTYPE, htons(ev->iiftype));
		}
		if (ev->oif) {
			mnl_attr_put_u32(nlh, NFTA_TRACE_OIF, htonl(ev->oif));
			mnl_attr_put_u16(nlh, NFTA_TRACE_OIFTYPE, htons(ev->oiftype));
		}
		if (ev->nh_len)
			mnl_attr_put(nlh, NFTA_TRACE_NETWORK_HEADER, ev->nh_len, ev->nh);
		if (ev->th_len)
			mnl_attr_put(nlh, NFTA_TRACE_TRANSPORT_HEADER, ev->th_len, ev->th);
		if (ev->ll_len)
			mnl_attr_put(nlh, NFTA_TRACE_LL_HEADER, ev->ll_len, ev->ll);
	}
	return (int)nlh->nlmsg_len;
}

static void send_event(const struct nftdp_vm_trace_event *ev, void *arg)
{
	struct nftdp_ctl *ctl = arg;
	alignas(8) char buf[TRACE_MSG_MAX];
	int len;

	/* recorded before the last listener left: the kernel would not have
	 * built it */
	if (!ctl->trace_listening)
		return;
	len = ctl_trace_fill(buf, ev);
	ctl_server_multicast(ctl->server, NFNLGRP_NFTRACE, buf, (size_t)len, NULL);
}

unsigned int nftdp_ctl_trace_events(struct nftdp_ctl *ctl)
{
	struct nftdp_vm_state *st = ctl->cfg.vm_state;
	bool on;

	if (!st)
		return 0;
	on = ctl_server_has_listeners(ctl->server, NFNLGRP_NFTRACE);
	if (on != ctl->trace_listening) {
		nftdp_vm_trace_listen(st, on);
		ctl->trace_listening = on;
	}
	return nftdp_vm_trace_poll(st, send_event, ctl);
}
