/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NFNL_SUBSYS_NFT_COMPAT: the revision queries iptables-nft sends before
 * it uses an xtables extension in a match or target expression. Mirrors
 * nfnl_compat_get_rcu (net/netfilter/nft_compat.c); the extensions and
 * their revisions are the VM's (nftdp_vm_compat_revision), so a query
 * succeeds exactly for what a rule can then run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h> /* before libnftnl: it uses FILE */
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_compat.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter_bridge/ebt_log.h>
#include <linux/netfilter_bridge/ebt_nflog.h>
#include <linux/netfilter_bridge/ebt_vlan.h>
#include <linux/netlink.h>

#include "control_priv.h"
#include "nftdp_vm.h"

/* nfnl_compat_policy_get, parsed as nfnetlink_rcv_msg does (deprecated
 * parsing: unknown attributes are ignored) */
static int parse(const struct nlmsghdr *nlh, const struct nlattr *tb[NFTA_COMPAT_MAX + 1],
		 const struct nlattr **bad)
{
	const size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * (NFTA_COMPAT_MAX + 1));
	if (nlh->nlmsg_len < off)
		return 0;
	mnl_attr_for_each(a, nlh, off - NLMSG_HDRLEN)
	{
		uint16_t type = mnl_attr_get_type(a);
		uint16_t len = mnl_attr_get_payload_len(a);

		if (type > NFTA_COMPAT_MAX || type == NFTA_COMPAT_UNSPEC)
			continue;
		if (type == NFTA_COMPAT_NAME) {
			/* NLA_NUL_STRING, .len NFT_COMPAT_NAME_MAX - 1: a NUL
			 * within the first len + 1 bytes */
			const char *p = mnl_attr_get_payload(a);

			if (len == 0 || strnlen(p, len) == len ||
			    strnlen(p, len) > NFT_COMPAT_NAME_MAX - 1) {
				*bad = a;
				return len == 0 || strnlen(p, len) == len ? -EINVAL : -ERANGE;
			}
		} else if (len < 4) { /* NLA_U32 */
			*bad = a;
			return -ERANGE;
		}
		tb[type] = a;
	}
	return 0;
}

/*
 * What an ebtables extension's checkentry writes into the info the kernel
 * then keeps and dumps: ebt_vlan_mt_check drops EBT_VLAN_PRIO when a VLAN
 * id is given, ebt_log_tg_check and ebt_nflog_tg_check end the prefix.
 * With apply false, says whether there is anything to write.
 */
static bool kernel_rewrite(uint8_t family, const char *name, bool target, uint8_t *info, bool apply)
{
	if (family != NFPROTO_BRIDGE)
		return false;
	if (!target && strcmp(name, "vlan") == 0) {
		struct ebt_vlan_info *v = (struct ebt_vlan_info *)info;

		if (!(v->bitmask & EBT_VLAN_ID) || v->id == 0 || !(v->bitmask & EBT_VLAN_PRIO))
			return false;
		if (apply)
			v->bitmask &= ~EBT_VLAN_PRIO;
		return true;
	}
	if (target && strcmp(name, "log") == 0) {
		struct ebt_log_info *l = (struct ebt_log_info *)info;

		if (l->prefix[EBT_LOG_PREFIX_SIZE - 1] == 0)
			return false;
		if (apply)
			l->prefix[EBT_LOG_PREFIX_SIZE - 1] = 0;
		return true;
	}
	if (target && strcmp(name, "nflog") == 0) {
		struct ebt_nflog_info *n = (struct ebt_nflog_info *)info;

		if (n->prefix[EBT_NFLOG_PREFIX_SIZE - 1] == 0)
			return false;
		if (apply)
			n->prefix[EBT_NFLOG_PREFIX_SIZE - 1] = 0;
		return true;
	}
	return false;
}

void ctl_compat_store_info(struct nftnl_expr *e, uint8_t family)
{
	const char *kind = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	bool target = kind && strcmp(kind, "target") == 0;
	uint16_t a_info = target ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO;
	const uint8_t *info;
	const char *name;
	uint32_t len = 0;
	size_t aligned;
	bool rewrite;
	uint8_t *copy;
	int size;

	if (!target && (!kind || strcmp(kind, "match") != 0))
		return;
	if (!nftnl_expr_is_set(e, NFTNL_EXPR_MT_NAME) || !nftnl_expr_is_set(e, NFTNL_EXPR_MT_REV))
		return; /* TG_NAME and TG_REV are the same attributes */
	name = nftnl_expr_get_str(e, NFTNL_EXPR_MT_NAME);
	size = nftdp_vm_compat_info_size(family, name, nftnl_expr_get_u32(e, NFTNL_EXPR_MT_REV),
					 target);
	info = nftnl_expr_get(e, a_info, &len);
	if (size < 0 || info == NULL || len < (uint32_t)size)
		return; /* refused at commit */
	/* match_compat_from_user: matchsize bytes, zero padding to XT_ALIGN;
	 * the dump puts XT_ALIGN(matchsize) bytes */
	aligned = XT_ALIGN((size_t)size);
	rewrite = kernel_rewrite(family, name, target, (uint8_t *)(uintptr_t)info, false);
	if (len == aligned && !rewrite) {
		size_t i;

		for (i = (size_t)size; i < aligned && info[i] == 0; i++)
			;
		if (i == aligned)
			return;
	}
	copy = calloc(1, aligned);
	if (copy == NULL)
		return;
	memcpy(copy, info, (size_t)size);
	if (rewrite)
		kernel_rewrite(family, name, target, copy, true);
	nftnl_expr_set(e, a_info, copy, (uint32_t)aligned); /* libnftnl owns copy */
}

int ctl_compat_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		   const struct nlattr **bad)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NFTA_COMPAT_MAX + 1];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *out;
	struct nfgenmsg *ofg;
	const char *name;
	uint32_t rev, target;
	int err;

	(void)ctl;
	/* nfnetlink_find_client: past the callback table */
	if ((nlh->nlmsg_type & 0xff) >= NFNL_MSG_COMPAT_MAX)
		return -EINVAL;
	err = parse(nlh, tb, bad);
	if (err < 0)
		return err;
	if (!tb[NFTA_COMPAT_NAME] || !tb[NFTA_COMPAT_REV] || !tb[NFTA_COMPAT_TYPE])
		return -EINVAL;
	name = mnl_attr_get_str(tb[NFTA_COMPAT_NAME]);
	rev = ntohl(mnl_attr_get_u32(tb[NFTA_COMPAT_REV]));
	target = ntohl(mnl_attr_get_u32(tb[NFTA_COMPAT_TYPE]));
	switch (nfg->nfgen_family) {
	case NFPROTO_IPV4:
	case NFPROTO_IPV6:
	case NFPROTO_BRIDGE: /* ebtables and arptables: the ones nftdp stores */
	case NFPROTO_ARP:
		/* xt_find_revision compares a u8 revision */
		err = nftdp_vm_compat_revision(nfg->nfgen_family, name, rev & 0xff, target == 1);
		break;
	default:
		return -EINVAL;
	}
	if (err < 0)
		return err;
	/* nfnl_compat_fill_info: the best revision, NLM_F_MULTI as the
	 * sender has a port id */
	out = mnl_nlmsg_put_header(buf);
	out->nlmsg_type = (NFNL_SUBSYS_NFT_COMPAT << 8) | NFNL_MSG_COMPAT_GET;
	out->nlmsg_flags = NLM_F_MULTI;
	out->nlmsg_seq = nlh->nlmsg_seq;
	out->nlmsg_pid = ctl_session_portid(s);
	ofg = mnl_nlmsg_put_extra_header(out, sizeof(*ofg));
	ofg->nfgen_family = nfg->nfgen_family;
	ofg->version = NFNETLINK_V0;
	ofg->res_id = 0;
	mnl_attr_put_strz(out, NFTA_COMPAT_NAME, name);
	mnl_attr_put_u32(out, NFTA_COMPAT_REV, htonl((uint32_t)err));
	mnl_attr_put_u32(out, NFTA_COMPAT_TYPE, htonl(target));
	err = ctl_session_send(s, buf, out->nlmsg_len);
	return err == -EAGAIN ? -ENOBUFS : 0;
}
