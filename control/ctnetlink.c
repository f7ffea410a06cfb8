/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NFNL_SUBSYS_CTNETLINK: the conntrack tool's side of nfnetlink, as the
 * kernel's net/netfilter/nf_conntrack_netlink.c answers it (conntrack -L,
 * -G, -D, -F, -C, -S, -E). The connection table itself is the embedding
 * process's (struct nftdp_ctl_ct_ops): this file only parses requests into
 * tuples and filters and builds the kernel's messages from struct
 * nftdp_ct_info, attribute for attribute in the kernel's order
 * (ctnetlink_fill_info, ctnetlink_conntrack_event).
 *
 * Datagrams: libnetfilter_conntrack reads with a 4096-byte buffer
 * (MNL_SOCKET_BUFFER_SIZE), so dump parts are packed into datagrams of at
 * most NLMSG_GOODSIZE bytes as the kernel's dump skbs are, and NLMSG_DONE
 * goes in a datagram of its own, as netlink_dump sends it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_conntrack_sctp.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include "control_priv.h"
#include "nftdp_conntrack.h"

/* SKB_WITH_OVERHEAD(PAGE_SIZE) on x86_64: what one dump skb holds */
#define CTN_DGRAM 3776
/* one conntrack message is at most ~500 bytes (two IPv6 tuples, TCP
 * protoinfo, counters, labels) */
#define CTN_MSG_MAX 1024
/* entries fetched from a shard per dump callback (~400 KB): a chunk
 * resumes by entry count, so each costs a scan of the shard's slots up to
 * it; 20000 entries list in 0.1 s */
#define CTN_CHUNK 2048

/* ---- attribute validation: nla_parse_deprecated as nfnetlink calls it ---- */

enum ctn_nla { N_NONE, N_U8, N_U16, N_U32, N_NESTED, N_MINLEN, N_BINARY };

struct ctn_pol {
	uint8_t type;
	uint8_t len; /* N_MINLEN: at least; N_BINARY: at most */
};

/* ct_nla_policy */
static const struct ctn_pol ct_policy[CTA_MAX + 1] = {
    [CTA_TUPLE_ORIG] = {N_NESTED, 0},
    [CTA_TUPLE_REPLY] = {N_NESTED, 0},
    [CTA_STATUS] = {N_U32, 0},
    [CTA_PROTOINFO] = {N_NESTED, 0},
    [CTA_HELP] = {N_NESTED, 0},
    [CTA_NAT_SRC] = {N_NESTED, 0},
    [CTA_TIMEOUT] = {N_U32, 0},
    [CTA_MARK] = {N_U32, 0},
    [CTA_ID] = {N_U32, 0},
    [CTA_NAT_DST] = {N_NESTED, 0},
    [CTA_TUPLE_MASTER] = {N_NESTED, 0},
    [CTA_NAT_SEQ_ADJ_ORIG] = {N_NESTED, 0},
    [CTA_NAT_SEQ_ADJ_REPLY] = {N_NESTED, 0},
    [CTA_ZONE] = {N_U16, 0},
    [CTA_MARK_MASK] = {N_U32, 0},
    [CTA_LABELS] = {N_BINARY, 16},
    [CTA_LABELS_MASK] = {N_BINARY, 16},
    [CTA_SYNPROXY] = {N_NESTED, 0},
    [CTA_FILTER] = {N_NESTED, 0},
    [CTA_STATUS_MASK] = {N_U32, 0},
};

/* tuple_nla_policy */
static const struct ctn_pol tuple_policy[CTA_TUPLE_MAX + 1] = {
    [CTA_TUPLE_IP] = {N_NESTED, 0},
    [CTA_TUPLE_PROTO] = {N_NESTED, 0},
    [CTA_TUPLE_ZONE] = {N_U16, 0},
};

/* cta_ip_nla_policy */
static const struct ctn_pol ip_policy[CTA_IP_MAX + 1] = {
    [CTA_IP_V4_SRC] = {N_U32, 0},
    [CTA_IP_V4_DST] = {N_U32, 0},
    [CTA_IP_V6_SRC] = {N_MINLEN, 16},
    [CTA_IP_V6_DST] = {N_MINLEN, 16},
};

/* proto_nla_policy merged with the l4 protocols' (ports, icmp, icmpv6):
 * nla_validate_nested runs both over the same nest */
static const struct ctn_pol proto_policy[CTA_PROTO_MAX + 1] = {
    [CTA_PROTO_NUM] = {N_U8, 0},	 [CTA_PROTO_SRC_PORT] = {N_U16, 0},
    [CTA_PROTO_DST_PORT] = {N_U16, 0},	 [CTA_PROTO_ICMP_ID] = {N_U16, 0},
    [CTA_PROTO_ICMP_TYPE] = {N_U8, 0},	 [CTA_PROTO_ICMP_CODE] = {N_U8, 0},
    [CTA_PROTO_ICMPV6_ID] = {N_U16, 0},	 [CTA_PROTO_ICMPV6_TYPE] = {N_U8, 0},
    [CTA_PROTO_ICMPV6_CODE] = {N_U8, 0},
};

/*
 * The deprecated (liberal) nla_parse: parsing stops at the first attribute
 * header that does not fit, types past the policy are ignored, a typed
 * attribute shorter than its type is ERANGE (longer ones pass, with the
 * kernel's warning), a nest that is neither empty nor holds a header is
 * ERANGE. *bad gets the offending attribute.
 */
static int ctn_parse(const void *data, size_t len, const struct ctn_pol *pol, unsigned int max,
		     const struct nlattr **tb, const struct nlattr **bad)
{
	const char *p = data;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= sizeof(struct nlattr)) {
		const struct nlattr *a = (const struct nlattr *)p;
		uint16_t type = a->nla_type & NLA_TYPE_MASK;
		size_t alen, step;
		static const uint8_t minlen[] = {[N_U8] = 1, [N_U16] = 2, [N_U32] = 4};

		if (a->nla_len < sizeof(*a) || a->nla_len > len)
			break;
		alen = a->nla_len - sizeof(*a);
		if (type > 0 && type <= max) {
			const struct ctn_pol *pt = &pol[type];

			switch (pt->type) {
			case N_U8:
			case N_U16:
			case N_U32:
				if (alen < minlen[pt->type])
					goto err_range;
				break;
			case N_NESTED:
				if (alen != 0 && alen < sizeof(struct nlattr))
					goto err_range;
				break;
			case N_MINLEN:
				if (alen < pt->len)
					goto err_range;
				break;
			case N_BINARY:
				if (alen > pt->len)
					goto err_range;
				break;
			default:
				break;
			}
			tb[type] = a;
		}
		step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
err_range:
	*bad = (const struct nlattr *)p;
	return -ERANGE;
}

static int ctn_parse_nested(const struct nlattr *nest, const struct ctn_pol *pol, unsigned int max,
			    const struct nlattr **tb, const struct nlattr **bad)
{
	return ctn_parse(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), pol, max, tb,
			 bad);
}

static uint8_t get_u8(const struct nlattr *a)
{
	return *(const uint8_t *)mnl_attr_get_payload(a);
}

static uint16_t get_be16(const struct nlattr *a) /* network order, as stored */
{
	uint16_t v;

	memcpy(&v, mnl_attr_get_payload(a), 2);
	return v;
}

static uint32_t get_be32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, mnl_attr_get_payload(a), 4);
	return v;
}

/* nf_conntrack_proto_icmp.c / icmpv6.c invmap: the types that have a tuple */
static bool icmp_has_tuple(uint8_t l4, uint8_t type)
{
	if (l4 == IPPROTO_ICMP)
		return type == 0 || type == 8 || (type >= 13 && type <= 18);
	return type == 128 || type == 129 || type == 139 || type == 140;
}

/* ctnetlink_parse_tuple (CTA_FILTER_FLAG(ALL)): every part is required. */
static int parse_tuple(const struct nlattr *nest, uint8_t l3num, struct nftdp_ct_tuple *t,
		       const struct nlattr **bad)
{
	const struct nlattr *tb[CTA_TUPLE_MAX + 1], *ip[CTA_IP_MAX + 1], *pr[CTA_PROTO_MAX + 1];
	int err;

	memset(t, 0, sizeof(*t));
	err = ctn_parse_nested(nest, tuple_policy, CTA_TUPLE_MAX, tb, bad);
	if (err < 0)
		return err;
	if (l3num != NFPROTO_IPV4 && l3num != NFPROTO_IPV6)
		return -EOPNOTSUPP;
	t->l3proto = l3num;
	if (!tb[CTA_TUPLE_IP])
		return -EINVAL;
	err = ctn_parse_nested(tb[CTA_TUPLE_IP], ip_policy, CTA_IP_MAX, ip, bad);
	if (err < 0)
		return err;
	if (l3num == NFPROTO_IPV4) {
		if (!ip[CTA_IP_V4_SRC] || !ip[CTA_IP_V4_DST])
			return -EINVAL;
		t->src.ip = get_be32(ip[CTA_IP_V4_SRC]);
		t->dst.ip = get_be32(ip[CTA_IP_V4_DST]);
	} else {
		if (!ip[CTA_IP_V6_SRC] || !ip[CTA_IP_V6_DST])
			return -EINVAL;
		memcpy(t->src.u8, mnl_attr_get_payload(ip[CTA_IP_V6_SRC]), 16);
		memcpy(t->dst.u8, mnl_attr_get_payload(ip[CTA_IP_V6_DST]), 16);
	}
	if (!tb[CTA_TUPLE_PROTO])
		return -EINVAL;
	err = ctn_parse_nested(tb[CTA_TUPLE_PROTO], proto_policy, CTA_PROTO_MAX, pr, bad);
	if (err < 0)
		return err;
	if (!pr[CTA_PROTO_NUM])
		return -EINVAL;
	t->l4proto = get_u8(pr[CTA_PROTO_NUM]);
	switch (t->l4proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
	case IPPROTO_GRE:
		if (!pr[CTA_PROTO_SRC_PORT] || !pr[CTA_PROTO_DST_PORT])
			return -EINVAL;
		t->sport = get_be16(pr[CTA_PROTO_SRC_PORT]);
		t->dport = get_be16(pr[CTA_PROTO_DST_PORT]);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		bool v4 = t->l4proto == IPPROTO_ICMP;
		const struct nlattr *ty = pr[v4 ? CTA_PROTO_ICMP_TYPE : CTA_PROTO_ICMPV6_TYPE];
		const struct nlattr *co = pr[v4 ? CTA_PROTO_ICMP_CODE : CTA_PROTO_ICMPV6_CODE];
		const struct nlattr *id = pr[v4 ? CTA_PROTO_ICMP_ID : CTA_PROTO_ICMPV6_ID];
		uint8_t *tc = (uint8_t *)&t->dport;

		if (!ty || !co || !id)
			return -EINVAL;
		tc[0] = get_u8(ty);
		tc[1] = get_u8(co);
		if (!icmp_has_tuple(t->l4proto, tc[0]))
			return -EINVAL;
		t->sport = get_be16(id);
		break;
	}
	default:
		break;
	}
	if (tb[CTA_TUPLE_ZONE])
		t->zone = ntohs(get_be16(tb[CTA_TUPLE_ZONE]));
	return 0;
}

/* ---- message building ---- */

/* tuple_zone: CTA_TUPLE_ZONE in the nest (a zone keying this direction only) */
static void put_tuple(struct nlmsghdr *nlh, uint16_t type, const struct nftdp_ct_tuple *t,
		      uint16_t tuple_zone)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type), *n2;

	n2 = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	if (t->l3proto == NFPROTO_IPV6) {
		mnl_attr_put(nlh, CTA_IP_V6_SRC, 16, t->src.u8);
		mnl_attr_put(nlh, CTA_IP_V6_DST, 16, t->dst.u8);
	} else {
		mnl_attr_put_u32(nlh, CTA_IP_V4_SRC, t->src.ip);
		mnl_attr_put_u32(nlh, CTA_IP_V4_DST, t->dst.ip);
	}
	mnl_attr_nest_end(nlh, n2);
	n2 = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, t->l4proto);
	switch (t->l4proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
	case IPPROTO_GRE:
		mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, t->sport);
		mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, t->dport);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		bool v4 = t->l4proto == IPPROTO_ICMP;
		const uint8_t *tc = (const uint8_t *)&t->dport;

		/* icmp_tuple_to_nlattr: id, type, code */
		mnl_attr_put_u16(nlh, v4 ? CTA_PROTO_ICMP_ID : CTA_PROTO_ICMPV6_ID, t->sport);
		mnl_attr_put_u8(nlh, v4 ? CTA_PROTO_ICMP_TYPE : CTA_PROTO_ICMPV6_TYPE, tc[0]);
		mnl_attr_put_u8(nlh, v4 ? CTA_PROTO_ICMP_CODE : CTA_PROTO_ICMPV6_CODE, tc[1]);
		break;
	}
	default:
		break;
	}
	mnl_attr_nest_end(nlh, n2);
	if (tuple_zone)
		mnl_attr_put_u16(nlh, CTA_TUPLE_ZONE, htons(tuple_zone));
	mnl_attr_nest_end(nlh, nest);
}

/* ctnetlink_dump_zone_id for both tuples and CTA_ZONE: a zone of both
 * directions is CTA_ZONE, a directional one CTA_TUPLE_ZONE in its tuple
 * (the tuples carry the zone only in the directions it keys) */
static void put_tuples(struct nlmsghdr *nlh, const struct nftdp_ct_info *ci)
{
	bool orig = ci->zone && ci->tuple[0].zone == ci->zone;
	bool repl = ci->zone && ci->tuple[1].zone == ci->zone;
	bool both = orig && repl;

	put_tuple(nlh, CTA_TUPLE_ORIG, &ci->tuple[0], orig && !both ? ci->zone : 0);
	put_tuple(nlh, CTA_TUPLE_REPLY, &ci->tuple[1], repl && !both ? ci->zone : 0);
	if (both)
		mnl_attr_put_u16(nlh, CTA_ZONE, htons(ci->zone));
}

/* tcp_to_nlattr, sctp_to_nlattr; with destroy only the state */
static void put_protoinfo(struct nlmsghdr *nlh, const struct nftdp_ct_info *ci, bool destroy)
{
	struct nlattr *nest, *tcp;
	uint8_t fl[2] = {0, 0}; /* struct nf_ct_tcp_flags: flags, mask 0 */

	if (ci->tuple[0].l4proto == IPPROTO_SCTP) {
		struct nlattr *sctp;

		nest = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
		sctp = mnl_attr_nest_start(nlh, CTA_PROTOINFO_SCTP);
		mnl_attr_put_u8(nlh, CTA_PROTOINFO_SCTP_STATE, ci->sctp.state);
		if (!destroy) {
			mnl_attr_put_u32(nlh, CTA_PROTOINFO_SCTP_VTAG_ORIGINAL, ci->sctp.vtag[0]);
			mnl_attr_put_u32(nlh, CTA_PROTOINFO_SCTP_VTAG_REPLY, ci->sctp.vtag[1]);
		}
		mnl_attr_nest_end(nlh, sctp);
		mnl_attr_nest_end(nlh, nest);
		return;
	}
	if (ci->tuple[0].l4proto != IPPROTO_TCP)
		return;
	nest = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	tcp = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, ci->tcp.state);
	if (!destroy) {
		mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_WSCALE_ORIGINAL, ci->tcp.wscale[0]);
		mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_WSCALE_REPLY, ci->tcp.wscale[1]);
		fl[0] = ci->tcp.flags[0];
		mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, sizeof(fl), fl);
		fl[0] = ci->tcp.flags[1];
		mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_REPLY, sizeof(fl), fl);
	}
	mnl_attr_nest_end(nlh, tcp);
	mnl_attr_nest_end(nlh, nest);
}

static void put_counters(struct nlmsghdr *nlh, const struct nftdp_ct_info *ci)
{
	for (int d = 0; d < 2; d++) {
		struct nlattr *n =
		    mnl_attr_nest_start(nlh, d ? CTA_COUNTERS_REPLY : CTA_COUNTERS_ORIG);

		/* nla_put_be64 needs no pad attribute on x86_64 */
		mnl_attr_put_u64(nlh, CTA_COUNTERS_PACKETS, htobe64(ci->packets[d]));
		mnl_attr_put_u64(nlh, CTA_COUNTERS_BYTES, htobe64(ci->bytes[d]));
		mnl_attr_nest_end(nlh, n);
	}
}

/* ctnetlink_dump_helpinfo: the helper's name (no helper data: ftp and
 * tftp have no to_nlattr) */
static void put_helpinfo(struct nlmsghdr *nlh, const struct nftdp_ct_info *ci)
{
	struct nlattr *nest;

	if (!ci->helper)
		return;
	nest = mnl_attr_nest_start(nlh, CTA_HELP);
	mnl_attr_put_strz(nlh, CTA_HELP_NAME, ci->helper);
	mnl_attr_nest_end(nlh, nest);
}

static bool labels_set(const struct nftdp_ct_info *ci)
{
	for (unsigned int i = 0; i < sizeof(ci->labels); i++)
		if (ci->labels[i])
			return true;
	return false;
}

static struct nlmsghdr *msg_start(void *buf, uint16_t type, uint16_t flags, uint32_t seq,
				  uint32_t portid, uint8_t family, uint16_t res_id)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = portid;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(res_id);
	return nlh;
}

/* ctnetlink_dump_ct_seq_adj */
static void put_seqadj(struct nlmsghdr *nlh, const struct nftdp_ct_info *ci)
{
	for (int d = 0; d < 2; d++) {
		struct nlattr *nest =
		    mnl_attr_nest_start(nlh, d ? CTA_NAT_SEQ_ADJ_REPLY : CTA_NAT_SEQ_ADJ_ORIG);

		mnl_attr_put_u32(nlh, CTA_SEQADJ_CORRECTION_POS, htonl(ci->seq[d].correction_pos));
		mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_BEFORE,
				 htonl((uint32_t)ci->seq[d].offset_before));
		mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_AFTER,
				 htonl((uint32_t)ci->seq[d].offset_after));
		mnl_attr_nest_end(nlh, nest);
	}
}

/* ctnetlink_dump_ct_synproxy */
static void put_synproxy(struct nlmsghdr *nlh, const struct nftdp_ct_info *ci)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, CTA_SYNPROXY);

	mnl_attr_put_u32(nlh, CTA_SYNPROXY_ISN, htonl(ci->synproxy_isn));
	mnl_attr_put_u32(nlh, CTA_SYNPROXY_ITS, htonl(ci->synproxy_its));
	mnl_attr_put_u32(nlh, CTA_SYNPROXY_TSOFF, htonl(ci->synproxy_tsoff));
	mnl_attr_nest_end(nlh, nest);
}

int ctl_ctnetlink_fill_info(void *buf, uint32_t seq, uint32_t portid, uint16_t flags,
			    const struct nftdp_ct_info *ci, bool acct)
{
	struct nlmsghdr *nlh = msg_start(buf, IPCTNL_MSG_CT_NEW, flags | (portid ? NLM_F_MULTI : 0),
					 seq, portid, ci->tuple[0].l3proto, 0);

	put_tuples(nlh, ci);
	/* ctnetlink_dump_info */
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(ci->status));
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(ci->mark));
	mnl_attr_put_u32(nlh, CTA_ID, htonl(ci->id));
	mnl_attr_put_u32(nlh, CTA_USE, htonl(ci->use));
	mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(ci->timeout_s));
	put_protoinfo(nlh, ci, false);
	put_helpinfo(nlh, ci);
	/* ctnetlink_dump_extinfo */
	if (acct)
		put_counters(nlh, ci);
	if (labels_set(ci))
		mnl_attr_put(nlh, CTA_LABELS, sizeof(ci->labels), ci->labels);
	if (ci->seqadj)
		put_seqadj(nlh, ci);
	if (ci->synproxy)
		put_synproxy(nlh, ci);
	return (int)nlh->nlmsg_len;
}

static unsigned int event_group(uint32_t e)
{
	if (e & (1u << IPCT_DESTROY))
		return NFNLGRP_CONNTRACK_DESTROY;
	if (e & ((1u << IPCT_NEW) | (1u << IPCT_RELATED)))
		return NFNLGRP_CONNTRACK_NEW;
	return e ? NFNLGRP_CONNTRACK_UPDATE : 0;
}

int ctl_ctnetlink_fill_event(void *buf, uint32_t portid, const struct nftdp_ct_event *ev, bool acct,
			     unsigned int *group)
{
	const struct nftdp_ct_info *ci = &ev->info;
	uint32_t e = ev->events;
	uint16_t type, flags = 0;
	struct nlmsghdr *nlh;

	if (e & (1u << IPCT_DESTROY)) {
		type = IPCTNL_MSG_CT_DELETE;
		*group = NFNLGRP_CONNTRACK_DESTROY;
	} else if (e & ((1u << IPCT_NEW) | (1u << IPCT_RELATED))) {
		type = IPCTNL_MSG_CT_NEW;
		flags = NLM_F_CREATE | NLM_F_EXCL;
		*group = NFNLGRP_CONNTRACK_NEW;
	} else if (e) {
		type = IPCTNL_MSG_CT_NEW;
		*group = NFNLGRP_CONNTRACK_UPDATE;
	} else {
		return 0;
	}
	nlh = msg_start(buf, type, flags, 0, portid, ci->tuple[0].l3proto, 0);
	put_tuples(nlh, ci);
	mnl_attr_put_u32(nlh, CTA_ID, htonl(ci->id));
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(ci->status));
	if (e & (1u << IPCT_DESTROY)) {
		if (ci->timeout_s)
			mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(ci->timeout_s));
		if (acct)
			put_counters(nlh, ci);
		put_protoinfo(nlh, ci, true);
	} else {
		mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(ci->timeout_s));
		if (e & (1u << IPCT_PROTOINFO))
			put_protoinfo(nlh, ci, false);
		put_helpinfo(nlh, ci); /* (IPCT_HELPER or nfct_help) */
		if ((e & (1u << IPCT_LABEL)) && labels_set(ci))
			mnl_attr_put(nlh, CTA_LABELS, sizeof(ci->labels), ci->labels);
		if ((e & (1u << IPCT_SEQADJ)) && ci->seqadj)
			put_seqadj(nlh, ci);
		if ((e & (1u << IPCT_SYNPROXY)) && ci->synproxy)
			put_synproxy(nlh, ci);
	}
	if ((e & (1u << IPCT_MARK)) || ci->mark)
		mnl_attr_put_u32(nlh, CTA_MARK, htonl(ci->mark));
	return (int)nlh->nlmsg_len;
}

/* ---- answers: datagrams of at most CTN_DGRAM bytes ---- */

struct ctn_tx {
	struct ctl_session *s;
	size_t len;
	char buf[CTN_DGRAM];
};

static void tx_flush(struct ctn_tx *tx)
{
	if (tx->len)
		ctl_session_send(tx->s, tx->buf, tx->len);
	tx->len = 0;
}

static void tx_put(struct ctn_tx *tx, const void *msg, size_t len)
{
	len = NLMSG_ALIGN(len);
	if (tx->len + len > sizeof(tx->buf))
		tx_flush(tx);
	memcpy(tx->buf + tx->len, msg, len);
	tx->len += len;
}

static void send_done(struct ctl_session *s, uint32_t seq, int err)
{
	char buf[NLMSG_HDRLEN + sizeof(int32_t)];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	int32_t *v;

	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = ctl_session_portid(s);
	v = mnl_nlmsg_put_extra_header(nlh, sizeof(*v));
	*v = err;
	ctl_session_send(s, buf, nlh->nlmsg_len);
}

/* ---- dump filters (struct ctnetlink_filter without CTA_FILTER) ---- */

struct ctn_filter {
	bool on;
	uint8_t family;
	bool zone_set;
	uint16_t zone;
	uint32_t mark_val, mark_mask;
	uint32_t status_val, status_mask;
};

static int filter_parse(const struct nlattr **cda, uint8_t family, struct ctn_filter *f)
{
	memset(f, 0, sizeof(*f));
	/* ctnetlink_needs_filter */
	f->on = family || cda[CTA_MARK] || cda[CTA_FILTER] || cda[CTA_STATUS] || cda[CTA_ZONE];
	if (!f->on)
		return 0;
	if (cda[CTA_FILTER]) {
		/* ctnetlink_parse_filter: per-tuple filters (flags) are not
		 * supported here; conntrack 1.4.7 sends none */
		const struct nlattr *tb[CTA_FILTER_MAX + 1];
		static const struct ctn_pol filter_policy[CTA_FILTER_MAX + 1] = {
		    [CTA_FILTER_ORIG_FLAGS] = {N_U32, 0},
		    [CTA_FILTER_REPLY_FLAGS] = {N_U32, 0},
		};
		const struct nlattr *bad;
		int err =
		    ctn_parse_nested(cda[CTA_FILTER], filter_policy, CTA_FILTER_MAX, tb, &bad);

		if (err < 0)
			return err;
		for (int i = CTA_FILTER_ORIG_FLAGS; i <= CTA_FILTER_REPLY_FLAGS; i++)
			if (tb[i] && mnl_attr_get_u32(tb[i]))
				return -EOPNOTSUPP;
	}
	f->family = family;
	if (cda[CTA_MARK]) {
		f->mark_val = ntohl(get_be32(cda[CTA_MARK]));
		f->mark_mask = cda[CTA_MARK_MASK] ? ntohl(get_be32(cda[CTA_MARK_MASK])) : ~0u;
	} else if (cda[CTA_MARK_MASK]) {
		return -EINVAL;
	}
	if (cda[CTA_STATUS]) {
		f->status_val = ntohl(get_be32(cda[CTA_STATUS]));
		f->status_mask =
		    cda[CTA_STATUS_MASK] ? ntohl(get_be32(cda[CTA_STATUS_MASK])) : f->status_val;
		if (f->status_mask == 0)
			return -EINVAL;
	} else if (cda[CTA_STATUS_MASK]) {
		return -EINVAL;
	}
	if (cda[CTA_ZONE]) {
		f->zone_set = true;
		f->zone = ntohs(get_be16(cda[CTA_ZONE]));
	}
	return 0;
}

static bool filter_match(const struct ctn_filter *f, const struct nftdp_ct_info *ci)
{
	if (!f->on)
		return true;
	if (f->family && ci->tuple[0].l3proto != f->family)
		return false;
	if (f->zone_set && ci->zone != f->zone)
		return false;
	if ((ci->mark & f->mark_mask) != f->mark_val)
		return false;
	return (ci->status & f->status_mask) == f->status_val;
}

/* Walk every shard's entries in chunks; fn returns non-zero to stop. */
static int walk_all(const struct nftdp_ctl_ct_ops *ops,
		    int (*fn)(const struct nftdp_ct_info *ci, void *arg), void *arg)
{
	struct nftdp_ct_info *buf = malloc(CTN_CHUNK * sizeof(*buf));
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (unsigned int sh = 0; sh < ops->n_shards && rc == 0; sh++) {
		unsigned int skip = 0;

		for (;;) {
			int n = ops->dump(ops->arg, sh, skip, buf, CTN_CHUNK);

			if (n < 0) {
				rc = n;
				break;
			}
			for (int i = 0; i < n && rc == 0; i++)
				rc = fn(&buf[i], arg);
			if (rc || n < CTN_CHUNK)
				break;
			skip += (unsigned int)n;
		}
	}
	free(buf);
	return rc;
}

/* ---- events (conntrack -E) ---- */

struct ev_ctx {
	struct nftdp_ctl *ctl;
	uint32_t portid;		 /* destroys a request caused: its port id */
	const struct nftdp_ct_tuple *by; /* ... of this tuple; NULL: every destroy */
	bool blocked;			 /* a BROADCAST_ERROR listener is full */
};

static bool tuple_eq(const struct nftdp_ct_tuple *a, const struct nftdp_ct_tuple *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* false: not delivered, the event stays in its ring */
static bool ev_cb(const struct nftdp_ct_event *ev, void *arg)
{
	struct ev_ctx *c = arg;
	char buf[CTN_MSG_MAX];
	unsigned int group = 0;
	uint32_t portid = 0;
	int len;

	/* nf_conntrack_eventmask_report(..., portid): the events a request
	 * caused carry its port id (a flush: every destroy) */
	if (c->portid &&
	    (c->by ? tuple_eq(c->by, &ev->info.tuple[0]) || tuple_eq(c->by, &ev->info.tuple[1])
		   : (ev->events & (1u << IPCT_DESTROY)) != 0))
		portid = c->portid;
	/* nfnetlink_has_listeners: nobody listening, nothing built or sent */
	if (!ctl_server_has_listeners(c->ctl->server, event_group(ev->events)))
		return true;
	len = ctl_ctnetlink_fill_event(buf, portid, ev, c->ctl->cfg.ct->acct, &group);
	if (len <= 0)
		return true;
	/* netlink_broadcast's delivery_failure: the kernel keeps the event
	 * (nf_conntrack_ecache) and sends it again later, to everyone */
	if (ctl_server_group_blocked(c->ctl->server, group) ||
	    !ctl_server_multicast(c->ctl->server, group, buf, (size_t)len, NULL)) {
		c->blocked = true;
		return false;
	}
	return true;
}

static unsigned int pump_events(struct nftdp_ctl *ctl, uint32_t portid,
				const struct nftdp_ct_tuple *by)
{
	const struct nftdp_ctl_ct_ops *ops = ctl->cfg.ct;
	struct ev_ctx c = {.ctl = ctl, .portid = portid, .by = by};
	unsigned int n = 0;

	if (!ops || !ops->events_poll)
		return 0;
	for (unsigned int sh = 0; sh < ops->n_shards && !c.blocked; sh++)
		n += ops->events_poll(ops->arg, sh, ev_cb, &c);
	return n;
}

/* ---- expectation events (nf_ct_expect_event_report) ----
 *
 * The helpers make and take expectations on the workers, which send no
 * event for them; while someone listens to NFNLGRP_CONNTRACK_EXP_NEW or
 * _DESTROY (conntrackd's ExpectationSync), each pump compares the
 * expectation table with the last pump's: one that appeared is IPEXP_NEW,
 * one that went (taken, expired, deleted) IPEXP_DESTROY, as the kernel
 * reports them from nf_ct_expect_related_report and
 * nf_ct_unlink_expect_report. One that comes and goes between two pumps
 * (a millisecond) is not reported. */

struct ctn_exp_snap {
	uint64_t key; /* shard << 32 | id */
	struct nftdp_ct_expect_info x;
};

void ctl_ctnetlink_exp_reset(struct nftdp_ctl *ctl)
{
	free(ctl->exp_snap);
	ctl->exp_snap = NULL;
	ctl->n_exp_snap = 0;
}

static int snap_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct ctn_exp_snap *)a)->key,
		 y = ((const struct ctn_exp_snap *)b)->key;

	return x < y ? -1 : x > y;
}

static int exp_fill(void *buf, uint32_t seq, uint32_t portid, const struct nftdp_ct_expect_info *x);

/* ctnetlink_expect_event */
static void exp_event(struct nftdp_ctl *ctl, const struct nftdp_ct_expect_info *x, bool created)
{
	char msg[CTN_MSG_MAX];
	struct nlmsghdr *nlh = (struct nlmsghdr *)msg;
	int len = exp_fill(msg, 0, 0, x);

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) |
			  (created ? IPCTNL_MSG_EXP_NEW : IPCTNL_MSG_EXP_DELETE);
	nlh->nlmsg_flags = created ? NLM_F_CREATE | NLM_F_EXCL : 0;
	ctl_server_multicast(ctl->server,
			     created ? NFNLGRP_CONNTRACK_EXP_NEW : NFNLGRP_CONNTRACK_EXP_DESTROY,
			     msg, (size_t)len, NULL);
}

#define CTN_EXP_CHUNK 256

static unsigned int exp_events(struct nftdp_ctl *ctl)
{
	const struct nftdp_ctl_ct_ops *ops = ctl->cfg.ct;
	struct nftdp_ct_expect_info *buf;
	struct ctn_exp_snap *cur, *prev = ctl->exp_snap;
	unsigned int n = 0, i = 0, j = 0, sent = 0;

	if (!ops->exp_dump ||
	    (!ctl_server_has_listeners(ctl->server, NFNLGRP_CONNTRACK_EXP_NEW) &&
	     !ctl_server_has_listeners(ctl->server, NFNLGRP_CONNTRACK_EXP_DESTROY))) {
		ctl_ctnetlink_exp_reset(ctl);
		return 0;
	}
	cur = malloc(((size_t)ops->n_shards * CTN_EXP_CHUNK + 1) * sizeof(*cur));
	buf = malloc(CTN_EXP_CHUNK * sizeof(*buf));
	if (!cur || !buf) {
		free(cur);
		free(buf);
		return 0;
	}
	for (unsigned int sh = 0; sh < ops->n_shards; sh++) {
		int k = ops->exp_dump(ops->arg, sh, buf, CTN_EXP_CHUNK);

		for (int e = 0; e < k; e++, n++) {
			cur[n].key = (uint64_t)sh << 32 | buf[e].id;
			cur[n].x = buf[e];
		}
	}
	free(buf);
	qsort(cur, n, sizeof(*cur), snap_cmp);
	/* the first pump with a listener only learns the table */
	while (prev && (i < ctl->n_exp_snap || j < n)) {
		if (j == n || (i < ctl->n_exp_snap && prev[i].key < cur[j].key)) {
			exp_event(ctl, &prev[i++].x, false);
			sent++;
		} else if (i == ctl->n_exp_snap || cur[j].key < prev[i].key) {
			exp_event(ctl, &cur[j++].x, true);
			sent++;
		} else {
			i++;
			j++;
		}
	}
	free(prev);
	ctl->exp_snap = cur;
	ctl->n_exp_snap = n;
	return sent;
}

unsigned int nftdp_ctl_ct_events(struct nftdp_ctl *ctl)
{
	const struct nftdp_ctl_ct_ops *ops = ctl->cfg.ct;

	if (ops && ops->events_listen) {
		int on = ctl_server_has_listeners(ctl->server, NFNLGRP_CONNTRACK_NEW) ||
			 ctl_server_has_listeners(ctl->server, NFNLGRP_CONNTRACK_UPDATE) ||
			 ctl_server_has_listeners(ctl->server, NFNLGRP_CONNTRACK_DESTROY);

		if (on != ctl->ct_listening) {
			ops->events_listen(ops->arg, on);
			ctl->ct_listening = on;
		}
	}
	return pump_events(ctl, 0, NULL) + (ops ? exp_events(ctl) : 0);
}

/* ---- requests ---- */

struct req {
	struct nftdp_ctl *ctl;
	const struct nftdp_ctl_ct_ops *ops;
	struct ctl_session *s;
	const struct nlmsghdr *nlh;
	uint8_t family;
	uint8_t version; /* nfgenmsg.version */
	bool zero;	 /* IPCTNL_MSG_CT_GET_CTRZERO */
	const struct nlattr **cda;
	const struct nlattr **bad;
};

struct dump_ctx {
	struct req *r;
	struct ctn_filter f;
	struct ctn_tx *tx;
};

static int dump_one(const struct nftdp_ct_info *ci, void *arg)
{
	struct dump_ctx *d = arg;
	char buf[CTN_MSG_MAX];
	int len;

	if (!filter_match(&d->f, ci))
		return 0;
	if (d->r->zero && d->r->ops->acct) {
		/* dump_counters' atomic64_xchg: the shard reads and zeroes the
		 * entry the filter picked (gone meanwhile: not listed) */
		struct nftdp_ct_info z;

		if (d->r->ops->get_zero(d->r->ops->arg, &ci->tuple[0], ci->id, &z) < 0)
			return 0;
		len =
		    ctl_ctnetlink_fill_info(buf, d->r->nlh->nlmsg_seq, ctl_session_portid(d->r->s),
					    d->f.on ? NLM_F_DUMP_FILTERED : 0, &z, true);
		tx_put(d->tx, buf, (size_t)len);
		return 0;
	}
	len = ctl_ctnetlink_fill_info(buf, d->r->nlh->nlmsg_seq, ctl_session_portid(d->r->s),
				      d->f.on ? NLM_F_DUMP_FILTERED : 0, ci, d->r->ops->acct);
	tx_put(d->tx, buf, (size_t)len);
	return 0;
}

/* ctnetlink_dump_table */
static int ct_dump(struct req *r)
{
	struct dump_ctx d = {.r = r};
	int err = filter_parse(r->cda, r->family, &d.f);

	if (err < 0)
		return err;
	d.tx = malloc(sizeof(*d.tx));
	if (!d.tx)
		return -ENOMEM;
	d.tx->s = r->s;
	d.tx->len = 0;
	err = walk_all(r->ops, dump_one, &d);
	tx_flush(d.tx);
	free(d.tx);
	send_done(r->s, r->nlh->nlmsg_seq, err);
	return -EINTR; /* answered: no ack */
}

static int req_tuple(struct req *r, struct nftdp_ct_tuple *t)
{
	const struct nlattr *a =
	    r->cda[CTA_TUPLE_ORIG] ? r->cda[CTA_TUPLE_ORIG] : r->cda[CTA_TUPLE_REPLY];
	int err;

	if (!a)
		return -EINVAL;
	err = parse_tuple(a, r->family, t, r->bad);
	if (err < 0)
		return err;
	/* ctnetlink_parse_zone: CTA_ZONE is the zone of both directions */
	if (r->cda[CTA_ZONE])
		t->zone = ntohs(get_be16(r->cda[CTA_ZONE]));
	return 0;
}

/* ctnetlink_get_conntrack */
static int ct_get(struct req *r)
{
	struct nftdp_ct_tuple t;
	struct nftdp_ct_info ci;
	char buf[CTN_MSG_MAX];
	int err, len;

	if (r->nlh->nlmsg_flags & NLM_F_DUMP)
		return ct_dump(r);
	err = req_tuple(r, &t);
	if (err < 0)
		return err;
	if (r->zero && r->ops->acct) /* zeroed after reporting, by the shard */
		err = r->ops->get_zero(r->ops->arg, &t, 0, &ci);
	else
		err = r->ops->get(r->ops->arg, &t, &ci);
	if (err < 0)
		return err;
	ci.use++; /* the reference the kernel holds while it answers */
	len = ctl_ctnetlink_fill_info(buf, r->nlh->nlmsg_seq, ctl_session_portid(r->s), 0, &ci,
				      r->ops->acct);
	ctl_session_send(r->s, buf, (size_t)len);
	return 0;
}

struct flush_ctx {
	struct req *r;
	struct ctn_filter f;
	unsigned int n, cap;
	struct nftdp_ct_info *victims;
};

static int flush_pick(const struct nftdp_ct_info *ci, void *arg)
{
	struct flush_ctx *c = arg;

	if (!filter_match(&c->f, ci))
		return 0;
	if (c->n == c->cap) {
		unsigned int cap = c->cap ? c->cap * 2 : 64;
		struct nftdp_ct_info *v = realloc(c->victims, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->victims = v;
		c->cap = cap;
	}
	c->victims[c->n++] = *ci;
	return 0;
}

/* ctnetlink_flush_conntrack: everything, or what the filter picks */
static int ct_flush(struct req *r)
{
	struct flush_ctx c = {.r = r};
	/* ctnetlink_del_conntrack: the family filters a flush only with
	 * version > 0 or CTA_FILTER (conntrack -F -f ipv6 flushes all) */
	uint8_t u3 = r->version || r->cda[CTA_FILTER] ? r->family : AF_UNSPEC;
	int err = filter_parse(r->cda, u3, &c.f);

	if (err < 0)
		return err;
	if (!c.f.on) {
		err = r->ops->flush(r->ops->arg);
		pump_events(r->ctl, ctl_session_portid(r->s), NULL);
		return err < 0 ? err : 0;
	}
	err = walk_all(r->ops, flush_pick, &c);
	for (unsigned int i = 0; err == 0 && i < c.n; i++)
		r->ops->del(r->ops->arg, &c.victims[i].tuple[0], c.victims[i].id);
	free(c.victims);
	pump_events(r->ctl, ctl_session_portid(r->s), NULL);
	return err;
}

/* ctnetlink_del_conntrack */
static int ct_delete(struct req *r)
{
	struct nftdp_ct_tuple t;
	uint32_t id = 0;
	int err;

	if (!r->cda[CTA_TUPLE_ORIG] && !r->cda[CTA_TUPLE_REPLY])
		return ct_flush(r);
	err = req_tuple(r, &t);
	if (err < 0)
		return err;
	if (r->cda[CTA_ID])
		id = ntohl(get_be32(r->cda[CTA_ID]));
	err = r->ops->del(r->ops->arg, &t, id);
	if (err == 0)
		pump_events(r->ctl, ctl_session_portid(r->s), &t);
	return err;
}

static void sum_stats(const struct nftdp_ctl_ct_ops *ops, unsigned int sh,
		      struct nftdp_ct_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (ops->stats)
		ops->stats(ops->arg, sh, st);
}

/* ctnetlink_stat_ct: entries and nf_conntrack_max */
static int ct_stats(struct req *r)
{
	char buf[CTN_MSG_MAX];
	struct nlmsghdr *nlh;
	uint32_t count = 0, max = 0;

	for (unsigned int sh = 0; sh < r->ops->n_shards; sh++) {
		struct nftdp_ct_stats st;

		sum_stats(r->ops, sh, &st);
		count += st.count;
		max += st.max;
	}
	nlh = msg_start(buf, IPCTNL_MSG_CT_GET_STATS, NLM_F_MULTI, r->nlh->nlmsg_seq,
			ctl_session_portid(r->s), AF_UNSPEC, 0);
	mnl_attr_put_u32(nlh, CTA_STATS_GLOBAL_ENTRIES, htonl(count));
	mnl_attr_put_u32(nlh, CTA_STATS_GLOBAL_MAX_ENTRIES, htonl(max));
	ctl_session_send(r->s, buf, nlh->nlmsg_len);
	return 0;
}

/* ctnetlink_ct_stat_cpu_dump: one message per shard, res_id = the shard */
static int ct_stats_cpu(struct req *r)
{
	struct ctn_tx *tx;

	if (!(r->nlh->nlmsg_flags & NLM_F_DUMP))
		return 0; /* no doit: nfnetlink just acks */
	tx = malloc(sizeof(*tx));
	if (!tx)
		return -ENOMEM;
	tx->s = r->s;
	tx->len = 0;
	for (unsigned int sh = 0; sh < r->ops->n_shards; sh++) {
		char buf[CTN_MSG_MAX];
		struct nftdp_ct_stats st;
		struct nlmsghdr *nlh;

		sum_stats(r->ops, sh, &st);
		nlh = msg_start(buf, IPCTNL_MSG_CT_GET_STATS_CPU, NLM_F_MULTI, r->nlh->nlmsg_seq,
				ctl_session_portid(r->s), AF_UNSPEC, (uint16_t)sh);
		mnl_attr_put_u32(nlh, CTA_STATS_FOUND, htonl((uint32_t)st.found));
		mnl_attr_put_u32(nlh, CTA_STATS_INVALID, htonl((uint32_t)st.invalid));
		mnl_attr_put_u32(nlh, CTA_STATS_INSERT, htonl((uint32_t)st.insert));
		mnl_attr_put_u32(nlh, CTA_STATS_INSERT_FAILED, htonl((uint32_t)st.insert_failed));
		mnl_attr_put_u32(nlh, CTA_STATS_DROP, htonl((uint32_t)st.drop));
		mnl_attr_put_u32(nlh, CTA_STATS_EARLY_DROP, htonl((uint32_t)st.early_drop));
		mnl_attr_put_u32(nlh, CTA_STATS_ERROR, 0);
		mnl_attr_put_u32(nlh, CTA_STATS_SEARCH_RESTART, 0);
		mnl_attr_put_u32(nlh, CTA_STATS_CLASH_RESOLVE, 0);
		mnl_attr_put_u32(nlh, CTA_STATS_CHAIN_TOOLONG, 0);
		tx_put(tx, buf, nlh->nlmsg_len);
	}
	tx_flush(tx);
	free(tx);
	send_done(r->s, r->nlh->nlmsg_seq, 0);
	return -EINTR;
}

/* the dying and unconfirmed lists: outside a burst nftdp has neither
 * (entries are freed when their last packet leaves) */
static int ct_empty_dump(struct req *r)
{
	if (!(r->nlh->nlmsg_flags & NLM_F_DUMP))
		return 0;
	send_done(r->s, r->nlh->nlmsg_seq, 0);
	return -EINTR;
}

/* ---- IPCTNL_MSG_CT_NEW: ctnetlink_new_conntrack's attributes ---- */

static const struct ctn_pol protoinfo_policy[CTA_PROTOINFO_MAX + 1] = {
    [CTA_PROTOINFO_TCP] = {N_NESTED, 0},
    [CTA_PROTOINFO_SCTP] = {N_NESTED, 0},
};

/* tcp_nla_policy: the flags are struct nf_ct_tcp_flags */
static const struct ctn_pol tcp_policy[CTA_PROTOINFO_TCP_MAX + 1] = {
    [CTA_PROTOINFO_TCP_STATE] = {N_U8, 0},
    [CTA_PROTOINFO_TCP_WSCALE_ORIGINAL] = {N_U8, 0},
    [CTA_PROTOINFO_TCP_WSCALE_REPLY] = {N_U8, 0},
    [CTA_PROTOINFO_TCP_FLAGS_ORIGINAL] = {N_MINLEN, 2},
    [CTA_PROTOINFO_TCP_FLAGS_REPLY] = {N_MINLEN, 2},
};

static const struct ctn_pol sctp_policy[CTA_PROTOINFO_SCTP_MAX + 1] = {
    [CTA_PROTOINFO_SCTP_STATE] = {N_U8, 0},
    [CTA_PROTOINFO_SCTP_VTAG_ORIGINAL] = {N_U32, 0},
    [CTA_PROTOINFO_SCTP_VTAG_REPLY] = {N_U32, 0},
};

/* nat_nla_policy */
static const struct ctn_pol nat_policy[CTA_NAT_MAX + 1] = {
    [CTA_NAT_V4_MINIP] = {N_U32, 0},	 [CTA_NAT_V4_MAXIP] = {N_U32, 0},
    [CTA_NAT_V6_MINIP] = {N_MINLEN, 16}, [CTA_NAT_V6_MAXIP] = {N_MINLEN, 16},
    [CTA_NAT_PROTO] = {N_NESTED, 0},
};

static const struct ctn_pol protonat_policy[CTA_PROTONAT_MAX + 1] = {
    [CTA_PROTONAT_PORT_MIN] = {N_U16, 0},
    [CTA_PROTONAT_PORT_MAX] = {N_U16, 0},
};

static const struct ctn_pol seqadj_policy[CTA_SEQADJ_MAX + 1] = {
    [CTA_SEQADJ_CORRECTION_POS] = {N_U32, 0},
    [CTA_SEQADJ_OFFSET_BEFORE] = {N_U32, 0},
    [CTA_SEQADJ_OFFSET_AFTER] = {N_U32, 0},
};

static const struct ctn_pol help_policy[CTA_HELP_MAX + 1] = {
    [CTA_HELP_NAME] = {N_NONE, 0}, /* NLA_NUL_STRING: checked below */
};

/* nfnetlink_parse_nat (nf_nat_ipv4/6_nlattr_to_range, nfnetlink_parse_nat_proto) */
static int parse_nat(const struct nlattr *nest, uint8_t l3, struct nftdp_ct_nat_range *r,
		     const struct nlattr **bad)
{
	const struct nlattr *tb[CTA_NAT_MAX + 1], *pt[CTA_PROTONAT_MAX + 1];
	int err = ctn_parse_nested(nest, nat_policy, CTA_NAT_MAX, tb, bad);

	memset(r, 0, sizeof(*r));
	if (err < 0)
		return err;
	if (l3 == NFPROTO_IPV4) {
		if (tb[CTA_NAT_V4_MINIP]) {
			r->min_addr.ip = get_be32(tb[CTA_NAT_V4_MINIP]);
			r->flags |= NF_NAT_RANGE_MAP_IPS;
		}
		r->max_addr.ip =
		    tb[CTA_NAT_V4_MAXIP] ? get_be32(tb[CTA_NAT_V4_MAXIP]) : r->min_addr.ip;
	} else {
		if (tb[CTA_NAT_V6_MINIP]) {
			memcpy(r->min_addr.u8, mnl_attr_get_payload(tb[CTA_NAT_V6_MINIP]), 16);
			r->flags |= NF_NAT_RANGE_MAP_IPS;
		}
		if (tb[CTA_NAT_V6_MAXIP])
			memcpy(r->max_addr.u8, mnl_attr_get_payload(tb[CTA_NAT_V6_MAXIP]), 16);
		else
			r->max_addr = r->min_addr;
	}
	if (!tb[CTA_NAT_PROTO])
		return 0;
	err = ctn_parse_nested(tb[CTA_NAT_PROTO], protonat_policy, CTA_PROTONAT_MAX, pt, bad);
	if (err < 0)
		return err;
	if (pt[CTA_PROTONAT_PORT_MIN]) {
		r->min_proto = r->max_proto = get_be16(pt[CTA_PROTONAT_PORT_MIN]);
		r->flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
	}
	if (pt[CTA_PROTONAT_PORT_MAX]) {
		r->max_proto = get_be16(pt[CTA_PROTONAT_PORT_MAX]);
		r->flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
	}
	return 0;
}

/* change_seq_adj: all three parts, each -EINVAL when missing; the parts
 * given are kept (*parts, bit i for CTA_SEQADJ_CORRECTION_POS + i), since
 * an update writes those before the missing one fails it */
static int parse_seqadj(const struct nlattr *nest, struct nftdp_ct_seqadj *o, uint8_t *parts,
			const struct nlattr **bad)
{
	const struct nlattr *tb[CTA_SEQADJ_MAX + 1];
	int err = ctn_parse_nested(nest, seqadj_policy, CTA_SEQADJ_MAX, tb, bad);

	if (err < 0)
		return err;
	*parts = 0;
	for (int i = CTA_SEQADJ_CORRECTION_POS; i <= CTA_SEQADJ_OFFSET_AFTER; i++)
		if (tb[i])
			*parts |= (uint8_t)(1u << (i - CTA_SEQADJ_CORRECTION_POS));
	if (tb[CTA_SEQADJ_CORRECTION_POS])
		o->correction_pos = ntohl(get_be32(tb[CTA_SEQADJ_CORRECTION_POS]));
	if (tb[CTA_SEQADJ_OFFSET_BEFORE])
		o->offset_before = (int32_t)ntohl(get_be32(tb[CTA_SEQADJ_OFFSET_BEFORE]));
	if (tb[CTA_SEQADJ_OFFSET_AFTER])
		o->offset_after = (int32_t)ntohl(get_be32(tb[CTA_SEQADJ_OFFSET_AFTER]));
	return *parts == 7 ? 0 : -EINVAL;
}

/* ctnetlink_change_protoinfo for the entry's protocol: nlattr_to_tcp,
 * nlattr_to_sctp */
static int parse_protoinfo(const struct nlattr *nest, uint8_t l4, struct nftdp_ct_change *c,
			   const struct nlattr **bad)
{
	const struct nlattr *tb[CTA_PROTOINFO_MAX + 1];
	int err = ctn_parse_nested(nest, protoinfo_policy, CTA_PROTOINFO_MAX, tb, bad);

	if (err < 0)
		return err;
	if (l4 == IPPROTO_TCP && tb[CTA_PROTOINFO_TCP]) {
		const struct nlattr *t[CTA_PROTOINFO_TCP_MAX + 1];

		err = ctn_parse_nested(tb[CTA_PROTOINFO_TCP], tcp_policy, CTA_PROTOINFO_TCP_MAX, t,
				       bad);
		if (err < 0)
			return err;
		if (t[CTA_PROTOINFO_TCP_STATE]) {
			c->tcp_state = get_u8(t[CTA_PROTOINFO_TCP_STATE]);
			if (c->tcp_state >= TCP_CONNTRACK_MAX)
				return -EINVAL;
			c->has |= NFTDP_CT_CHG_TCP_STATE;
		}
		for (int d = 0; d < 2; d++) {
			const struct nlattr *f =
			    t[d ? CTA_PROTOINFO_TCP_FLAGS_REPLY : CTA_PROTOINFO_TCP_FLAGS_ORIGINAL];

			if (f) {
				const uint8_t *fl = mnl_attr_get_payload(f);

				c->tcp_flags[d] = fl[0];
				c->tcp_flags_mask[d] = fl[1];
			}
		}
		if (t[CTA_PROTOINFO_TCP_WSCALE_ORIGINAL] && t[CTA_PROTOINFO_TCP_WSCALE_REPLY]) {
			c->tcp_wscale[0] = get_u8(t[CTA_PROTOINFO_TCP_WSCALE_ORIGINAL]);
			c->tcp_wscale[1] = get_u8(t[CTA_PROTOINFO_TCP_WSCALE_REPLY]);
			c->has |= NFTDP_CT_CHG_TCP_WSCALE;
		}
	} else if (l4 == IPPROTO_SCTP && tb[CTA_PROTOINFO_SCTP]) {
		const struct nlattr *t[CTA_PROTOINFO_SCTP_MAX + 1];

		err = ctn_parse_nested(tb[CTA_PROTOINFO_SCTP], sctp_policy, CTA_PROTOINFO_SCTP_MAX,
				       t, bad);
		if (err < 0)
			return err;
		if (!t[CTA_PROTOINFO_SCTP_STATE] || !t[CTA_PROTOINFO_SCTP_VTAG_ORIGINAL] ||
		    !t[CTA_PROTOINFO_SCTP_VTAG_REPLY])
			return -EINVAL;
		c->sctp_state = get_u8(t[CTA_PROTOINFO_SCTP_STATE]);
		/* nftdp: a state past the table would index past it */
		if (c->sctp_state >= SCTP_CONNTRACK_MAX)
			return -EINVAL;
		c->sctp_vtag[0] = get_be32(t[CTA_PROTOINFO_SCTP_VTAG_ORIGINAL]);
		c->sctp_vtag[1] = get_be32(t[CTA_PROTOINFO_SCTP_VTAG_REPLY]);
		c->has |= NFTDP_CT_CHG_SCTP;
	}
	c->has |= NFTDP_CT_CHG_PROTOINFO;
	return 0;
}

/* ctnetlink_parse_help: CTA_HELP_NAME, an NLA_NUL_STRING of at most 15 */
static int parse_help(const struct nlattr *nest, char *name, const struct nlattr **bad)
{
	const struct nlattr *tb[CTA_HELP_MAX + 1];
	int err = ctn_parse_nested(nest, help_policy, CTA_HELP_MAX, tb, bad);
	const char *p;
	uint16_t len;

	if (err < 0)
		return err;
	if (!tb[CTA_HELP_NAME])
		return -EINVAL;
	p = mnl_attr_get_payload(tb[CTA_HELP_NAME]);
	len = mnl_attr_get_payload_len(tb[CTA_HELP_NAME]);
	if (len == 0 || p[len - 1] != '\0') {
		*bad = tb[CTA_HELP_NAME];
		return -EINVAL;
	}
	if (strlen(p) > 15) {
		*bad = tb[CTA_HELP_NAME];
		return -ERANGE;
	}
	memcpy(name, p, strlen(p) + 1);
	return 0;
}

/* whether a tuple nest carries CTA_TUPLE_ZONE (a zone of that direction) */
static bool tuple_zoned(const struct nlattr *nest)
{
	const struct nlattr *tb[CTA_TUPLE_MAX + 1], *bad;

	return ctn_parse_nested(nest, tuple_policy, CTA_TUPLE_MAX, tb, &bad) == 0 &&
	       tb[CTA_TUPLE_ZONE];
}

/* ctnetlink_new_conntrack */
static int ct_new(struct req *r)
{
	const struct nlattr **cda = r->cda;
	struct nftdp_ct_change *c;
	uint16_t zone = 0;
	uint8_t l4;
	int err = 0;

	if (!r->ops->change)
		return -EOPNOTSUPP;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* ctnetlink_parse_zone; a CTA_TUPLE_ZONE makes it one direction's */
	c->zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
	if (cda[CTA_ZONE])
		zone = ntohs(get_be16(cda[CTA_ZONE]));
	for (int d = 0; d < 2; d++) {
		const struct nlattr *a = cda[d ? CTA_TUPLE_REPLY : CTA_TUPLE_ORIG];

		if (!a)
			continue;
		err = parse_tuple(a, r->family, &c->tuple[d], r->bad);
		if (err < 0)
			goto out;
		c->has |= d ? NFTDP_CT_CHG_REPLY : NFTDP_CT_CHG_ORIG;
		if (tuple_zoned(a)) {
			zone = c->tuple[d].zone;
			c->zone_dir = d ? NFTDP_VM_CT_ZONE_DIR_REPL : NFTDP_VM_CT_ZONE_DIR_ORIG;
		}
	}
	if (!(c->has & (NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_REPLY))) {
		/* nothing to look up: no entry */
		err = (r->nlh->nlmsg_flags & NLM_F_CREATE) ? -EINVAL : -ENOENT;
		goto out;
	}
	c->tuple[0].zone = (c->zone_dir & NFTDP_VM_CT_ZONE_DIR_ORIG) ? zone : 0;
	c->tuple[1].zone = (c->zone_dir & NFTDP_VM_CT_ZONE_DIR_REPL) ? zone : 0;
	l4 = c->tuple[(c->has & NFTDP_CT_CHG_ORIG) ? 0 : 1].l4proto;
	if (r->nlh->nlmsg_flags & NLM_F_CREATE)
		c->has |= NFTDP_CT_CHG_CREATE;
	if (r->nlh->nlmsg_flags & NLM_F_EXCL)
		c->has |= NFTDP_CT_CHG_EXCL;
	if (cda[CTA_STATUS]) {
		c->status = ntohl(get_be32(cda[CTA_STATUS]));
		c->has |= NFTDP_CT_CHG_STATUS;
	}
	if (cda[CTA_TIMEOUT]) {
		c->timeout_s = ntohl(get_be32(cda[CTA_TIMEOUT]));
		c->has |= NFTDP_CT_CHG_TIMEOUT;
	}
	if (cda[CTA_MARK]) {
		c->mark = ntohl(get_be32(cda[CTA_MARK]));
		c->mark_mask = cda[CTA_MARK_MASK] ? ntohl(get_be32(cda[CTA_MARK_MASK])) : 0;
		c->has |= NFTDP_CT_CHG_MARK;
	}
	if (cda[CTA_LABELS]) {
		/* ctnetlink_attach_labels */
		uint16_t len = mnl_attr_get_payload_len(cda[CTA_LABELS]);

		c->has |= NFTDP_CT_CHG_LABELS;
		if (len & 3) {
			c->labels_err = -EINVAL;
		} else if (cda[CTA_LABELS_MASK] &&
			   (mnl_attr_get_payload_len(cda[CTA_LABELS_MASK]) == 0 ||
			    mnl_attr_get_payload_len(cda[CTA_LABELS_MASK]) != len)) {
			c->labels_err = -EINVAL;
		} else {
			c->labels_words = (uint8_t)(len / 4);
			memcpy(c->labels, mnl_attr_get_payload(cda[CTA_LABELS]), len);
			if (cda[CTA_LABELS_MASK]) {
				c->labels_masked = true;
				memcpy(c->labels_mask, mnl_attr_get_payload(cda[CTA_LABELS_MASK]),
				       len);
			}
		}
	}
	if (cda[CTA_PROTOINFO]) {
		err = parse_protoinfo(cda[CTA_PROTOINFO], l4, c, r->bad);
		if (err < 0)
			goto out;
	}
	if (cda[CTA_HELP]) {
		err = parse_help(cda[CTA_HELP], c->helper, r->bad);
		if (err < 0)
			goto out;
		c->has |= NFTDP_CT_CHG_HELPER;
	}
	for (int m = NFTDP_CT_MANIP_SRC; m <= NFTDP_CT_MANIP_DST; m++) {
		const struct nlattr *a = cda[m == NFTDP_CT_MANIP_SRC ? CTA_NAT_SRC : CTA_NAT_DST];

		if (!a)
			continue;
		c->has |= m == NFTDP_CT_MANIP_SRC ? NFTDP_CT_CHG_NAT_SRC : NFTDP_CT_CHG_NAT_DST;
		/* on an existing entry NAT is refused before it is read */
		if (!(c->has & NFTDP_CT_CHG_CREATE))
			continue;
		err = parse_nat(a, r->family, &c->nat[m], r->bad);
		if (err < 0)
			goto out;
	}
	for (int d = 0; d < 2; d++) {
		const struct nlattr *a = cda[d ? CTA_NAT_SEQ_ADJ_REPLY : CTA_NAT_SEQ_ADJ_ORIG];

		if (!a)
			continue;
		err = parse_seqadj(a, &c->seqadj[d], &c->seqadj_parts[d], r->bad);
		/* an update applies what came before the missing part */
		if (err < 0 && (err != -EINVAL || (c->has & NFTDP_CT_CHG_CREATE)))
			goto out;
		c->has |= NFTDP_CT_CHG_SEQADJ;
		c->seqadj_dirs |= (uint8_t)(1u << d);
	}
	if (cda[CTA_TUPLE_MASTER]) {
		c->has |= NFTDP_CT_CHG_MASTER;
		if (c->has & NFTDP_CT_CHG_CREATE) {
			err = parse_tuple(cda[CTA_TUPLE_MASTER], r->family, &c->master, r->bad);
			if (err < 0)
				goto out;
			c->master.zone = c->tuple[0].zone;
		}
	}
	err = r->ops->change(r->ops->arg, c);
	if (err == 0)
		pump_events(r->ctl, ctl_session_portid(r->s),
			    &c->tuple[(c->has & NFTDP_CT_CHG_ORIG) ? 0 : 1]);
out:
	free(c);
	return err;
}

int ctl_ctnetlink_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		      const struct nlattr **bad)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	const size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const struct nlattr *cda[CTA_MAX + 1];
	struct req r = {.ctl = ctl, .ops = ctl->cfg.ct, .s = s, .nlh = nlh, .cda = cda, .bad = bad};
	uint8_t type = nlh->nlmsg_type & 0xff;
	int err;

	if (!r.ops)
		return -EOPNOTSUPP; /* no nf_conntrack_netlink */
	/* nfnetlink_find_client: past the callback table */
	if (type >= IPCTNL_MSG_MAX)
		return -EINVAL;
	r.family = nfg->nfgen_family;
	r.version = nfg->version;
	err = ctn_parse((const char *)nlh + off, nlh->nlmsg_len > off ? nlh->nlmsg_len - off : 0,
			ct_policy, CTA_MAX, cda, bad);
	if (err < 0)
		return err;
	switch (type) {
	case IPCTNL_MSG_CT_GET:
		return ct_get(&r);
	case IPCTNL_MSG_CT_DELETE:
		return ct_delete(&r);
	case IPCTNL_MSG_CT_GET_STATS:
		return ct_stats(&r);
	case IPCTNL_MSG_CT_GET_STATS_CPU:
		return ct_stats_cpu(&r);
	case IPCTNL_MSG_CT_GET_DYING:
	case IPCTNL_MSG_CT_GET_UNCONFIRMED:
		return ct_empty_dump(&r);
	case IPCTNL_MSG_CT_NEW:
		return ct_new(&r);
	case IPCTNL_MSG_CT_GET_CTRZERO:
		if (!r.ops->get_zero)
			return -EOPNOTSUPP;
		r.zero = true;
		return ct_get(&r);
	default:
		return -EOPNOTSUPP;
	}
}

/* ---- expectations (NFNL_SUBSYS_CTNETLINK_EXP) ---- */

/* ctnetlink_exp_dump_mask: the mask as a tuple, the rest all ones */
static void put_exp_mask(struct nlmsghdr *nlh, const struct nftdp_ct_expect_info *x)
{
	struct nftdp_ct_tuple m;

	memset(&m, 0xff, sizeof(m));
	m.src = x->mask.src;
	m.sport = x->mask.sport;
	m.l3proto = x->tuple.l3proto;
	m.l4proto = x->tuple.l4proto;
	m.zone = 0;
	put_tuple(nlh, CTA_EXPECT_MASK, &m, 0);
}

/* ctnetlink_exp_fill_info / ctnetlink_exp_dump_expect */
static int exp_fill(void *buf, uint32_t seq, uint32_t portid, const struct nftdp_ct_expect_info *x)
{
	struct nlmsghdr *nlh =
	    msg_start(buf, IPCTNL_MSG_EXP_NEW, NLM_F_MULTI, seq, portid, x->tuple.l3proto, 0);

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_NEW;
	put_tuple(nlh, CTA_EXPECT_TUPLE, &x->tuple, 0);
	put_exp_mask(nlh, x);
	put_tuple(nlh, CTA_EXPECT_MASTER, &x->master, 0);
	if (x->nat) {
		struct nlattr *nest = mnl_attr_nest_start(nlh, CTA_EXPECT_NAT);
		struct nftdp_ct_tuple nt;

		/* the saved address (none: nf_nat_ftp and nf_nat_tftp keep
		 * only the port) and port */
		memset(&nt, 0, sizeof(nt));
		nt.l3proto = x->master.l3proto;
		nt.l4proto = x->master.l4proto;
		nt.sport = x->nat_port;
		if (x->nat_sip || x->nat_callfwd) /* nf_nat_sip, nf_nat_h323's call
						   * forwarding keep the address too */
			nt.src = x->nat_saved;
		mnl_attr_put_u32(nlh, CTA_EXPECT_NAT_DIR, htonl(x->nat_dir));
		put_tuple(nlh, CTA_EXPECT_NAT_TUPLE, &nt, 0);
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_put_u32(nlh, CTA_EXPECT_TIMEOUT, htonl(x->timeout_s));
	mnl_attr_put_u32(nlh, CTA_EXPECT_ID, htonl(x->id));
	mnl_attr_put_u32(nlh, CTA_EXPECT_FLAGS, htonl(x->flags));
	mnl_attr_put_u32(nlh, CTA_EXPECT_CLASS, htonl(x->class));
	if (x->helper)
		mnl_attr_put_strz(nlh, CTA_EXPECT_HELP_NAME, x->helper);
	if (x->nat && !x->nat_pptp) /* pptp_expectfn has no registered name */
		mnl_attr_put_strz(nlh, CTA_EXPECT_FN,
				  x->nat_sip	   ? "sip"
				  : x->nat_callfwd ? "callforwarding"
				  : x->nat_q931	   ? "Q.931"
						   : "nat-follow-master");
	return (int)nlh->nlmsg_len;
}

/* ctnetlink_exp_dump_table */
static int exp_dump(struct req *r)
{
	struct nftdp_ct_expect_info *buf = malloc(CTN_EXP_CHUNK * sizeof(*buf));
	struct ctn_tx *tx = malloc(sizeof(*tx));
	int err = 0;

	if (!buf || !tx) {
		free(buf);
		free(tx);
		return -ENOMEM;
	}
	tx->s = r->s;
	tx->len = 0;
	for (unsigned int sh = 0; r->ops->exp_dump && sh < r->ops->n_shards; sh++) {
		int n = r->ops->exp_dump(r->ops->arg, sh, buf, CTN_EXP_CHUNK);

		if (n < 0) {
			err = n;
			break;
		}
		for (int i = 0; i < n; i++) {
			char msg[CTN_MSG_MAX];
			int len;

			/* the dump's family filter (nfgen_family, 0: all) */
			if (r->family && r->family != buf[i].tuple.l3proto)
				continue;
			len = exp_fill(msg, r->nlh->nlmsg_seq, ctl_session_portid(r->s), &buf[i]);
			tx_put(tx, msg, (size_t)len);
		}
	}
	tx_flush(tx);
	free(tx);
	free(buf);
	send_done(r->s, r->nlh->nlmsg_seq, err);
	return -EINTR; /* answered: no ack */
}

/* exp_nla_policy (the strings are checked where they are read) */
static const struct ctn_pol exp_policy[CTA_EXPECT_MAX + 1] = {
    [CTA_EXPECT_MASTER] = {N_NESTED, 0}, [CTA_EXPECT_TUPLE] = {N_NESTED, 0},
    [CTA_EXPECT_MASK] = {N_NESTED, 0},	 [CTA_EXPECT_TIMEOUT] = {N_U32, 0},
    [CTA_EXPECT_ID] = {N_U32, 0},	 [CTA_EXPECT_ZONE] = {N_U16, 0},
    [CTA_EXPECT_FLAGS] = {N_U32, 0},	 [CTA_EXPECT_CLASS] = {N_U32, 0},
    [CTA_EXPECT_NAT] = {N_NESTED, 0},
};

static const struct ctn_pol exp_nat_policy[CTA_EXPECT_NAT_MAX + 1] = {
    [CTA_EXPECT_NAT_DIR] = {N_U32, 0},
    [CTA_EXPECT_NAT_TUPLE] = {N_NESTED, 0},
};

/* an NLA_NUL_STRING of at most max characters into out (max + 1 bytes) */
static int nul_string(const struct nlattr *a, char *out, size_t max, const struct nlattr **bad)
{
	const char *p = mnl_attr_get_payload(a);
	uint16_t len = mnl_attr_get_payload_len(a);

	if (len == 0 || p[len - 1] != '\0') {
		*bad = a;
		return -EINVAL;
	}
	if (strlen(p) > max) {
		*bad = a;
		return -ERANGE;
	}
	memcpy(out, p, strlen(p) + 1);
	return 0;
}

/* ctnetlink_parse_tuple of an expectation attribute, in CTA_EXPECT_ZONE */
static int exp_tuple(struct req *r, uint16_t type, struct nftdp_ct_tuple *t)
{
	int err = parse_tuple(r->cda[type], r->family, t, r->bad);

	if (err < 0)
		return err;
	t->zone = r->cda[CTA_EXPECT_ZONE] ? ntohs(get_be16(r->cda[CTA_EXPECT_ZONE])) : 0;
	return 0;
}

static uint32_t exp_id(struct req *r)
{
	return r->cda[CTA_EXPECT_ID] ? ntohl(get_be32(r->cda[CTA_EXPECT_ID])) : 0;
}

/* ctnetlink_get_expect: by CTA_EXPECT_TUPLE, else CTA_EXPECT_MASTER */
static int exp_get(struct req *r)
{
	struct nftdp_ct_expect_info x;
	struct nftdp_ct_tuple t;
	char buf[CTN_MSG_MAX];
	int err, len;

	if (!r->cda[CTA_EXPECT_TUPLE] && !r->cda[CTA_EXPECT_MASTER])
		return -EINVAL;
	err = exp_tuple(r, r->cda[CTA_EXPECT_TUPLE] ? CTA_EXPECT_TUPLE : CTA_EXPECT_MASTER, &t);
	if (err < 0)
		return err;
	err = r->ops->exp_get(r->ops->arg, &t, exp_id(r), &x);
	if (err < 0)
		return err;
	len = exp_fill(buf, r->nlh->nlmsg_seq, ctl_session_portid(r->s), &x);
	ctl_session_send(r->s, buf, (size_t)len);
	return 0;
}

/* ctnetlink_del_expect: by tuple, by the master's helper, or all */
static int exp_delete(struct req *r)
{
	struct nftdp_ct_tuple t;
	char name[16];
	int err;

	if (r->cda[CTA_EXPECT_TUPLE]) {
		err = exp_tuple(r, CTA_EXPECT_TUPLE, &t);
		if (err < 0)
			return err;
		return r->ops->exp_del(r->ops->arg, &t, exp_id(r));
	}
	if (r->cda[CTA_EXPECT_HELP_NAME]) {
		err = nul_string(r->cda[CTA_EXPECT_HELP_NAME], name, 15, r->bad);
		if (err < 0)
			return err;
		err = r->ops->exp_flush(r->ops->arg, name);
	} else {
		err = r->ops->exp_flush(r->ops->arg, NULL);
	}
	return err < 0 ? err : 0;
}

/* ctnetlink_new_expect, ctnetlink_create_expect's attributes */
static int exp_new(struct req *r)
{
	struct nftdp_ct_expect_new n;
	struct nftdp_ct_expect_info x;
	int err;

	if (!r->cda[CTA_EXPECT_TUPLE] || !r->cda[CTA_EXPECT_MASK] || !r->cda[CTA_EXPECT_MASTER])
		return -EINVAL;
	memset(&n, 0, sizeof(n));
	err = exp_tuple(r, CTA_EXPECT_TUPLE, &n.tuple);
	if (err < 0)
		return err;
	if (r->ops->exp_get(r->ops->arg, &n.tuple, 0, &x) == 0) {
		/* ctnetlink_change_expect */
		if (r->nlh->nlmsg_flags & NLM_F_EXCL)
			return -EEXIST;
		if (!r->cda[CTA_EXPECT_TIMEOUT])
			return 0;
		return r->ops->exp_timeout(r->ops->arg, &n.tuple,
					   ntohl(get_be32(r->cda[CTA_EXPECT_TIMEOUT])));
	}
	if (!(r->nlh->nlmsg_flags & NLM_F_CREATE))
		return -ENOENT;
	err = exp_tuple(r, CTA_EXPECT_MASK, &n.mask);
	if (err < 0)
		return err;
	err = exp_tuple(r, CTA_EXPECT_MASTER, &n.master);
	if (err < 0)
		return err;
	if (r->cda[CTA_EXPECT_HELP_NAME]) {
		err = nul_string(r->cda[CTA_EXPECT_HELP_NAME], n.helper, 15, r->bad);
		if (err < 0)
			return err;
	}
	if (r->cda[CTA_EXPECT_CLASS])
		n.class = ntohl(get_be32(r->cda[CTA_EXPECT_CLASS]));
	if (r->cda[CTA_EXPECT_FLAGS])
		n.flags = ntohl(get_be32(r->cda[CTA_EXPECT_FLAGS]));
	if (r->cda[CTA_EXPECT_FN]) {
		char fn[32];

		err = nul_string(r->cda[CTA_EXPECT_FN], fn, sizeof(fn) - 1, r->bad);
		if (err < 0)
			return err;
		/* nf_ct_helper_expectfn_find_by_name: nf_nat registers this one */
		n.follow = !strcmp(fn, "nat-follow-master");
		n.fn_unknown = !n.follow;
	}
	if (r->cda[CTA_EXPECT_NAT]) {
		/* ctnetlink_parse_expect_nat */
		const struct nlattr *tb[CTA_EXPECT_NAT_MAX + 1];
		struct nftdp_ct_tuple nt;

		err = ctn_parse_nested(r->cda[CTA_EXPECT_NAT], exp_nat_policy, CTA_EXPECT_NAT_MAX,
				       tb, r->bad);
		if (err < 0)
			return err;
		if (!tb[CTA_EXPECT_NAT_DIR] || !tb[CTA_EXPECT_NAT_TUPLE])
			return -EINVAL;
		err = parse_tuple(tb[CTA_EXPECT_NAT_TUPLE], r->family, &nt, r->bad);
		if (err < 0)
			return err;
		n.nat_dir = ntohl(get_be32(tb[CTA_EXPECT_NAT_DIR])) ? 1 : 0;
		n.nat_port = nt.sport;
	}
	return r->ops->exp_new(r->ops->arg, &n);
}

int ctl_ctnetlink_exp_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
			  const struct nlattr **bad)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	struct req r = {.ctl = ctl, .ops = ctl->cfg.ct, .s = s, .nlh = nlh, .bad = bad};
	const size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const struct nlattr *cda[CTA_EXPECT_MAX + 1];
	uint8_t type = nlh->nlmsg_type & 0xff;
	int err;

	if (!r.ops)
		return -EOPNOTSUPP;
	if (type >= IPCTNL_MSG_EXP_MAX)
		return -EINVAL;
	r.family = nfg->nfgen_family;
	r.version = nfg->version;
	if (type == IPCTNL_MSG_EXP_GET && (nlh->nlmsg_flags & NLM_F_DUMP))
		return exp_dump(&r);
	if (!r.ops->exp_get || !r.ops->exp_del || !r.ops->exp_flush || !r.ops->exp_new ||
	    !r.ops->exp_timeout)
		return -EOPNOTSUPP;
	err = ctn_parse((const char *)nlh + off, nlh->nlmsg_len > off ? nlh->nlmsg_len - off : 0,
			exp_policy, CTA_EXPECT_MAX, cda, bad);
	if (err < 0)
		return err;
	r.cda = cda;
	switch (type) {
	case IPCTNL_MSG_EXP_GET:
		return exp_get(&r);
	case IPCTNL_MSG_EXP_DELETE:
		return exp_delete(&r);
	case IPCTNL_MSG_EXP_NEW:
		return exp_new(&r);
	default:
		return -EOPNOTSUPP;
	}
}
