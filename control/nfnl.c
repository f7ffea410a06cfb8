/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nfnetlink side of the control plane: what net/netfilter/nfnetlink.c
 * and the top of nf_tables_api.c do. A sendmsg's bytes are either one batch
 * (first message NFNL_MSG_BATCH_BEGIN: nfnetlink_rcv_batch) or a sequence of
 * plain requests (netlink_rcv_skb: GETGEN, dumps, gets). Every attribute is
 * checked against its message's policy before a handler sees it, with the
 * kernel's strict nla_parse rules.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/common.h>
#include <linux/netlink.h>

#include "ctl_state.h"
#include "nftdp_vm.h"

#ifndef NFNL_MSG_BATCH_BEGIN
#define NFNL_MSG_BATCH_BEGIN NLMSG_MIN_TYPE
#define NFNL_MSG_BATCH_END (NLMSG_MIN_TYPE + 1)
#endif

enum ctl_nla_type {
	P_NONE = 0, /* not in the policy: rejected (strict NLA_UNSPEC) */
	P_U32,
	P_U64,
	P_STRING, /* len: max chars */
	P_NESTED,
	P_BINARY, /* len: max bytes */
};

struct ctl_policy {
	uint8_t type;
	uint16_t len;
};

#define NAMELEN (CTL_NAME_MAXLEN - 1)

static const struct ctl_policy table_policy[NFTA_TABLE_MAX + 1] = {
    [NFTA_TABLE_NAME] = {P_STRING, NAMELEN},
    [NFTA_TABLE_FLAGS] = {P_U32, 0},
    [NFTA_TABLE_HANDLE] = {P_U64, 0},
    [NFTA_TABLE_USERDATA] = {P_BINARY, CTL_USERDATA_MAXLEN},
    [NFTA_TABLE_OWNER] = {P_U32, 0},
};

static const struct ctl_policy chain_policy[NFTA_CHAIN_MAX + 1] = {
    [NFTA_CHAIN_TABLE] = {P_STRING, NAMELEN},
    [NFTA_CHAIN_HANDLE] = {P_U64, 0},
    [NFTA_CHAIN_NAME] = {P_STRING, NAMELEN},
    [NFTA_CHAIN_HOOK] = {P_NESTED, 0},
    [NFTA_CHAIN_POLICY] = {P_U32, 0},
    [NFTA_CHAIN_TYPE] = {P_STRING, 45},
    [NFTA_CHAIN_COUNTERS] = {P_NESTED, 0},
    [NFTA_CHAIN_FLAGS] = {P_U32, 0},
    [NFTA_CHAIN_ID] = {P_U32, 0},
    [NFTA_CHAIN_USERDATA] = {P_BINARY, CTL_USERDATA_MAXLEN},
};

static const struct ctl_policy rule_policy[NFTA_RULE_MAX + 1] = {
    [NFTA_RULE_TABLE] = {P_STRING, NAMELEN},
    [NFTA_RULE_CHAIN] = {P_STRING, NAMELEN},
    [NFTA_RULE_HANDLE] = {P_U64, 0},
    [NFTA_RULE_EXPRESSIONS] = {P_NESTED, 0},
    [NFTA_RULE_COMPAT] = {P_NESTED, 0},
    [NFTA_RULE_POSITION] = {P_U64, 0},
    [NFTA_RULE_USERDATA] = {P_BINARY, CTL_USERDATA_MAXLEN},
    [NFTA_RULE_ID] = {P_U32, 0},
    [NFTA_RULE_POSITION_ID] = {P_U32, 0},
    [NFTA_RULE_CHAIN_ID] = {P_U32, 0},
};

static const struct ctl_policy set_policy[NFTA_SET_MAX + 1] = {
    [NFTA_SET_TABLE] = {P_STRING, NAMELEN},
    [NFTA_SET_NAME] = {P_STRING, NAMELEN},
    [NFTA_SET_FLAGS] = {P_U32, 0},
    [NFTA_SET_KEY_TYPE] = {P_U32, 0},
    [NFTA_SET_KEY_LEN] = {P_U32, 0},
    [NFTA_SET_DATA_TYPE] = {P_U32, 0},
    [NFTA_SET_DATA_LEN] = {P_U32, 0},
    [NFTA_SET_POLICY] = {P_U32, 0},
    [NFTA_SET_DESC] = {P_NESTED, 0},
    [NFTA_SET_ID] = {P_U32, 0},
    [NFTA_SET_TIMEOUT] = {P_U64, 0},
    [NFTA_SET_GC_INTERVAL] = {P_U32, 0},
    [NFTA_SET_USERDATA] = {P_BINARY, CTL_USERDATA_MAXLEN},
    [NFTA_SET_OBJ_TYPE] = {P_U32, 0},
    [NFTA_SET_HANDLE] = {P_U64, 0},
    [NFTA_SET_EXPR] = {P_NESTED, 0},
    [NFTA_SET_EXPRESSIONS] = {P_NESTED, 0},
};

static const struct ctl_policy setelem_list_policy[NFTA_SET_ELEM_LIST_MAX + 1] = {
    [NFTA_SET_ELEM_LIST_TABLE] = {P_STRING, NAMELEN},
    [NFTA_SET_ELEM_LIST_SET] = {P_STRING, NAMELEN},
    [NFTA_SET_ELEM_LIST_ELEMENTS] = {P_NESTED, 0},
    [NFTA_SET_ELEM_LIST_SET_ID] = {P_U32, 0},
};

static const struct ctl_policy obj_policy[NFTA_OBJ_MAX + 1] = {
    [NFTA_OBJ_TABLE] = {P_STRING, NAMELEN}, [NFTA_OBJ_NAME] = {P_STRING, NAMELEN},
    [NFTA_OBJ_TYPE] = {P_U32, 0},	    [NFTA_OBJ_DATA] = {P_NESTED, 0},
    [NFTA_OBJ_HANDLE] = {P_U64, 0},	    [NFTA_OBJ_USERDATA] = {P_BINARY, CTL_USERDATA_MAXLEN},
};

static const struct ctl_policy flowtable_policy[NFTA_FLOWTABLE_MAX + 1] = {
    [NFTA_FLOWTABLE_TABLE] = {P_STRING, NAMELEN}, [NFTA_FLOWTABLE_NAME] = {P_STRING, NAMELEN},
    [NFTA_FLOWTABLE_HOOK] = {P_NESTED, 0},	  [NFTA_FLOWTABLE_HANDLE] = {P_U64, 0},
    [NFTA_FLOWTABLE_FLAGS] = {P_U32, 0},
};

static const struct ctl_policy gen_policy[NFTA_GEN_MAX + 1] = {
    [NFTA_GEN_ID] = {P_U32, 0},
};

typedef int (*ctl_batch_fn)(struct ctl_msg *m);
typedef int (*ctl_get_fn)(struct ctl_msg *m, struct ctl_out *o);

struct ctl_cb {
	ctl_batch_fn batch; /* NFNL_CB_BATCH */
	ctl_get_fn get;	    /* NFNL_CB_RCU */
	const struct ctl_policy *policy;
	unsigned int maxattr;
};

static int ctl_getgen(struct ctl_msg *m, struct ctl_out *o);

#define CB_BATCH(fn, pol)                                                                          \
	{                                                                                          \
		fn, NULL, pol, sizeof(pol) / sizeof(pol[0]) - 1                                    \
	}
#define CB_GET(fn, pol)                                                                            \
	{                                                                                          \
		NULL, fn, pol, sizeof(pol) / sizeof(pol[0]) - 1                                    \
	}

/* Mirrors nf_tables_cb[]. */
static const struct ctl_cb ctl_cbs[NFT_MSG_MAX] = {
    [NFT_MSG_NEWTABLE] = CB_BATCH(ctl_newtable, table_policy),
    [NFT_MSG_GETTABLE] = CB_GET(ctl_gettable, table_policy),
    [NFT_MSG_DELTABLE] = CB_BATCH(ctl_deltable, table_policy),
    [NFT_MSG_NEWCHAIN] = CB_BATCH(ctl_newchain, chain_policy),
    [NFT_MSG_GETCHAIN] = CB_GET(ctl_getchain, chain_policy),
    [NFT_MSG_DELCHAIN] = CB_BATCH(ctl_delchain, chain_policy),
    [NFT_MSG_NEWRULE] = CB_BATCH(ctl_newrule, rule_policy),
    [NFT_MSG_GETRULE] = CB_GET(ctl_getrule, rule_policy),
    [NFT_MSG_DELRULE] = CB_BATCH(ctl_delrule, rule_policy),
    [NFT_MSG_NEWSET] = CB_BATCH(ctl_newset, set_policy),
    [NFT_MSG_GETSET] = CB_GET(ctl_getset, set_policy),
    [NFT_MSG_DELSET] = CB_BATCH(ctl_delset, set_policy),
    [NFT_MSG_NEWSETELEM] = CB_BATCH(ctl_newsetelem, setelem_list_policy),
    [NFT_MSG_GETSETELEM] = CB_GET(ctl_getsetelem, setelem_list_policy),
    [NFT_MSG_DELSETELEM] = CB_BATCH(ctl_delsetelem, setelem_list_policy),
    [NFT_MSG_GETGEN] = CB_GET(ctl_getgen, gen_policy),
    [NFT_MSG_NEWOBJ] = CB_BATCH(ctl_newobj, obj_policy),
    [NFT_MSG_GETOBJ] = CB_GET(ctl_getobj, obj_policy),
    [NFT_MSG_DELOBJ] = CB_BATCH(ctl_delobj, obj_policy),
    [NFT_MSG_GETOBJ_RESET] = CB_GET(ctl_getobj, obj_policy),
    [NFT_MSG_NEWFLOWTABLE] = CB_BATCH(ctl_newflowtable, flowtable_policy),
    [NFT_MSG_GETFLOWTABLE] = CB_GET(ctl_getflowtable, flowtable_policy),
    [NFT_MSG_DELFLOWTABLE] = CB_BATCH(ctl_delflowtable, flowtable_policy),
};

/* nla_parse() as nfnetlink calls it on this kernel: attribute types past
 * the policy are skipped, fixed-size types must have their size (short:
 * ERANGE), strings their maximum length; the offending attribute goes into
 * the extended ack. */
static int parse_attrs(const struct nlmsghdr *nlh, const struct ctl_cb *cb,
		       const struct nlattr **tb, const struct nlattr **bad)
{
	size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const char *p = (const char *)nlh + off;
	size_t rem = nlh->nlmsg_len > off ? nlh->nlmsg_len - off : 0;

	memset(tb, 0, sizeof(*tb) * (cb->maxattr + 1));
	while (rem >= sizeof(struct nlattr)) {
		const struct nlattr *a = (const struct nlattr *)p;
		uint16_t type = a->nla_type & NLA_TYPE_MASK;
		size_t alen;
		const struct ctl_policy *pol;

		if (a->nla_len < sizeof(*a) || a->nla_len > rem)
			return -EINVAL;
		alen = a->nla_len - sizeof(*a);
		*bad = a;
		if (type == 0 || type > cb->maxattr)
			goto next;
		pol = &cb->policy[type];
		switch (pol->type) {
		case P_NONE:
			break;
		case P_U32:
			if (alen < 4)
				return -ERANGE;
			if (alen != 4)
				return -EINVAL;
			break;
		case P_U64:
			if (alen < 8)
				return -ERANGE;
			if (alen != 8)
				return -EINVAL;
			break;
		case P_STRING: {
			const char *str = (const char *)(a + 1);
			size_t slen = alen;

			if (slen < 1)
				return -ERANGE;
			if (str[slen - 1] == '\0')
				slen--;
			if (pol->len && slen > pol->len)
				return -ERANGE;
			if (memchr(str, '\0', slen) != NULL)
				return -EINVAL;
			break;
		}
		case P_NESTED:
			if (alen != 0 && alen < sizeof(struct nlattr))
				return -ERANGE;
			break;
		case P_BINARY:
			if (pol->len && alen > pol->len)
				return -ERANGE;
			break;
		}
		tb[type] = a;
	next:
		rem -= (size_t)NLA_ALIGN(a->nla_len) < rem ? (size_t)NLA_ALIGN(a->nla_len) : rem;
		p += NLA_ALIGN(a->nla_len);
	}
	*bad = NULL;
	return 0;
}

static int ctl_getgen(struct ctl_msg *m, struct ctl_out *o)
{
	struct nlmsghdr *nlh;
	uint32_t genid = m->st->genid;

	nlh = ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN, AF_UNSPEC, 0,
			  m->nlh->nlmsg_seq, ctl_session_portid(m->s), genid & 0xffff);
	if (nlh == NULL)
		return -ENOMEM;
	mnl_attr_put_u32(nlh, NFTA_GEN_ID, htonl(genid));
	mnl_attr_put_u32(nlh, NFTA_GEN_PROC_PID, htonl((uint32_t)ctl_session_pid(m->s)));
	mnl_attr_put_strz(nlh, NFTA_GEN_PROC_NAME, ctl_session_comm(m->s));
	ctl_out_end(o, nlh);
	return 0;
}

static void msg_init(struct ctl_msg *m, struct nftdp_ctl *ctl, struct ctl_session *s,
		     const struct nlmsghdr *nlh, const struct nlattr **tb, bool batch)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);

	m->ctl = ctl;
	m->st = ctl->state;
	m->s = s;
	m->nlh = nlh;
	m->family = nfg->nfgen_family;
	m->tb = tb;
	m->bad_attr = NULL;
	m->batch = batch;
}

struct batch_run {
	bool failed, done, echo;
	const struct nlmsghdr *last;
};

/* One pass over the messages of a batch (the loop of nfnetlink_rcv_batch).
 * With validate_each, the jump depth is checked after every message that
 * may add a jump, so the error lands on the message that caused it. */
static void batch_pass(struct nftdp_ctl *ctl, struct ctl_session *s, const char *buf, size_t len,
		       size_t off, uint16_t subsys, struct ctl_out *errs, bool validate_each,
		       struct batch_run *br)
{
	const struct nlattr *tb[64];

	while (len - off >= NLMSG_HDRLEN) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(buf + off);
		const struct ctl_cb *cb;
		struct ctl_msg m;
		uint16_t type;
		int err = 0;

		m.bad_attr = NULL;
		if (nlh->nlmsg_len < NLMSG_HDRLEN || len - off < nlh->nlmsg_len ||
		    nlh->nlmsg_len - NLMSG_HDRLEN < sizeof(struct nfgenmsg)) {
			/* malformed: forget the errors so far, abort */
			errs->len = 0;
			br->failed = true;
			return;
		}
		if (!(nlh->nlmsg_flags & NLM_F_REQUEST)) {
			err = -EINVAL;
			goto ack;
		}
		type = nlh->nlmsg_type;
		if (type == NFNL_MSG_BATCH_BEGIN) {
			errs->len = 0;
			br->failed = true;
			return;
		} else if (type == NFNL_MSG_BATCH_END) {
			br->done = true;
			br->last = nlh;
			return;
		} else if (type < NLMSG_MIN_TYPE) {
			err = -EINVAL;
			goto ack;
		}
		if ((type >> 8) != subsys || (type & 0xff) >= NFT_MSG_MAX) {
			err = -EINVAL;
			goto ack;
		}
		cb = &ctl_cbs[type & 0xff];
		if (cb->policy == NULL) {
			err = -EINVAL;
			goto ack;
		}
		err = parse_attrs(nlh, cb, tb, &m.bad_attr);
		if (err < 0)
			goto ack;
		if (cb->batch == NULL)
			goto ack; /* a GET inside a batch: nfnetlink has no call_batch */
		msg_init(&m, ctl, s, nlh, tb, true);
		err = cb->batch(&m);
		if (err == 0 && validate_each && ctl->state->validate &&
		    ((type & 0xff) == NFT_MSG_NEWRULE || (type & 0xff) == NFT_MSG_NEWSETELEM))
			err = ctl_validate(ctl->state);
		if (nlh->nlmsg_flags & NLM_F_ECHO)
			br->echo = true;
	ack:
		if ((nlh->nlmsg_flags & NLM_F_ACK) || err) {
			ctl_ack(errs, nlh, err, err ? m.bad_attr : NULL, ctl_session_ext_ack(s));
			if (err)
				br->failed = true;
		}
		off += NLMSG_ALIGN(nlh->nlmsg_len);
		if (off > len)
			off = len;
	}
}

/* nfnetlink_rcv_batch(): runs every message, collects every error, then
 * commits or aborts the whole batch. */
/* The NFTA_LIST_ELEM of expression i (0-based) of a NEWRULE message, where
 * the caret of a refusal belongs; NULL for anything else. */
static const struct nlattr *rule_expr_attr(const struct nlmsghdr *nlh, int i)
{
	const struct nlattr *a, *x;

	if (i < 0 || (nlh->nlmsg_type & 0xff) != NFT_MSG_NEWRULE ||
	    nlh->nlmsg_type >> 8 != NFNL_SUBSYS_NFTABLES)
		return NULL;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(a) != NFTA_RULE_EXPRESSIONS)
			continue;
		mnl_attr_for_each_nested(x, a) if (i-- == 0) return x;
	}
	return NULL;
}

static void rcv_batch(struct nftdp_ctl *ctl, struct ctl_session *s, const char *buf, size_t len,
		      const struct nlmsghdr *begin, struct ctl_out *o)
{
	const struct nfgenmsg *bnfg = mnl_nlmsg_get_payload(begin);
	size_t boff = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	struct batch_run br = {0};
	struct ctl_out errs;
	uint32_t genid = 0;
	uint16_t subsys;
	size_t off;

	if (begin->nlmsg_len < NLMSG_HDRLEN + sizeof(struct nfgenmsg))
		return;
	if (begin->nlmsg_len > boff) {
		const struct nlattr *a;

		mnl_attr_for_each(a, begin, sizeof(struct nfgenmsg))
		{
			if (mnl_attr_get_type(a) != NFNL_BATCH_GENID ||
			    mnl_attr_get_payload_len(a) != 4) {
				ctl_ack(o, begin, -EINVAL, NULL, false);
				return;
			}
			genid = ntohl(mnl_attr_get_u32(a));
		}
	}
	/* nfnetlink_rcv_skb_batch: old nft sent res_id in host order */
	subsys = bnfg->res_id == NFNL_SUBSYS_NFTABLES ? NFNL_SUBSYS_NFTABLES : ntohs(bnfg->res_id);
	if (subsys >= NFNL_SUBSYS_COUNT) {
		ctl_ack(o, begin, -EINVAL, NULL, false);
		return;
	}
	if (subsys != NFNL_SUBSYS_NFTABLES) {
		ctl_ack(o, begin, -EOPNOTSUPP, NULL, false);
		return;
	}
	if (genid && genid != ctl->state->genid) {
		ctl_ack(o, begin, -ERESTART, NULL, false);
		return;
	}

	ctl_out_init(&errs, ctl, s);
	off = NLMSG_ALIGN(begin->nlmsg_len);
	if (off > len)
		off = len;
	batch_pass(ctl, s, buf, len, off, subsys, &errs, false, &br);
	if (!br.failed) {
		/* A batch without BATCH_END is what nft -c sends: the kernel
		 * runs it, validates (NFNL_ABORT_VALIDATE) and aborts. Here it
		 * runs every phase of the commit up to publish, then aborts. */
		struct ctl_commit_req req = {
		    .echo_gen = br.echo,
		    .check = !br.done,
		    .last = br.last,
		    .first = off < len ? (const struct nlmsghdr *)(buf + off) : begin};
		const struct nlmsghdr *bad;
		char why[NFTDP_VM_ERRLEN];
		int err = ctl_commit(ctl, s, &req, &bad, why, sizeof(why));

		if (err == -EAGAIN) {
			/* as the kernel's -EAGAIN replay: run again checking
			 * after every message, report where it broke */
			errs.len = 0;
			memset(&br, 0, sizeof(br));
			batch_pass(ctl, s, buf, len, off, subsys, &errs, true, &br);
			if (!br.failed) /* cannot happen: the messages passed one by one */
				ctl_ack(&errs, begin, -EMLINK, NULL, false);
			ctl_trans_abort(ctl);
		} else if (err < 0) {
			/* the dataplane cannot run it: the batch fails at the
			 * message that brought it (the caret under the
			 * expression nftdp cannot run, as the kernel points at
			 * one it lacks), nothing changed; the reason goes in
			 * the extended ack (nft 1.0.6 does not print it) and,
			 * once per commit, to the daemon's stderr */
			ctl_ack_msg(&errs, bad ? bad : begin, err,
				    bad ? rule_expr_attr(bad, ctl_build_bad_expr(ctl)) : NULL,
				    ctl_session_ext_ack(s), why);
			if (why[0])
				fprintf(stderr, "nftdp: commit refused: %s\n", why);
		}
	} else {
		ctl_trans_abort(ctl);
	}
	/* nfnl_err_deliver: errors go out after the commit's echoes */
	ctl_out_flush(o);
	ctl_out_flush_each(&errs);
	ctl_out_free(&errs);
}

int ctl_nfnl_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const void *data, size_t len)
{
	const char *buf = data;
	const struct nlmsghdr *nlh = data;
	const struct nlattr *tb[64];
	struct ctl_out o;
	size_t off = 0;

	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN || len < nlh->nlmsg_len)
		return 0;
	ctl_out_init(&o, ctl, s);
	if (!ctl_session_privileged(s)) {
		ctl_ack(&o, nlh, -EPERM, NULL, false);
		goto out;
	}
	if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN) {
		rcv_batch(ctl, s, buf, len, nlh, &o);
		goto out;
	}

	/* netlink_rcv_skb() */
	while (len - off >= NLMSG_HDRLEN) {
		const struct ctl_cb *cb;
		struct ctl_msg m;
		int err = 0;
		uint16_t type;

		nlh = (const struct nlmsghdr *)(buf + off);
		m.bad_attr = NULL;
		if (nlh->nlmsg_len < NLMSG_HDRLEN || len - off < nlh->nlmsg_len)
			break;
		if (!(nlh->nlmsg_flags & NLM_F_REQUEST))
			goto ack;
		type = nlh->nlmsg_type;
		if (type < NLMSG_MIN_TYPE)
			goto ack;
		/* nfnetlink_rcv_msg() */
		if (nlh->nlmsg_len - NLMSG_HDRLEN < sizeof(struct nfgenmsg)) {
			err = -EINVAL;
			goto ack;
		}
		if ((type >> 8) == NFNL_SUBSYS_CTNETLINK) {
			/* conntrack -L/-D/-F/-E (ctnetlink.c) */
			err = ctl_ctnetlink_rcv(ctl, s, nlh, &m.bad_attr);
			if (err == -EINTR)
				goto next;
			goto ack;
		}
		if ((type >> 8) == NFNL_SUBSYS_NFT_COMPAT) {
			err = ctl_compat_rcv(ctl, s, nlh, &m.bad_attr);
			goto ack;
		}
		if ((type >> 8) == NFNL_SUBSYS_ULOG) {
			/* nfnetlink_log: listeners bind groups (nflog.c) */
			err = ctl_nflog_rcv(ctl, s, nlh, &m.bad_attr);
			goto ack;
		}
		if ((type >> 8) == NFNL_SUBSYS_OSF) {
			/* nfnl_osf: the fingerprints osf matches (osf.c) */
			err = ctl_osf_rcv(ctl, s, nlh, &m.bad_attr);
			goto ack;
		}
		if ((type >> 8) == NFNL_SUBSYS_IPSET) {
			/* the ipset tool (ipset.c) */
			err = ctl_ipset_rcv(ctl, s, nlh, &m.bad_attr);
			if (err == -EINTR)
				goto next;
			goto ack;
		}
		if ((type >> 8) == NFNL_SUBSYS_CTNETLINK_EXP) {
			/* conntrack -L expect (ctnetlink.c) */
			err = ctl_ctnetlink_exp_rcv(ctl, s, nlh, &m.bad_attr);
			if (err == -EINTR)
				goto next;
			goto ack;
		}
		if ((type >> 8) != NFNL_SUBSYS_NFTABLES) {
			err = (type >> 8) >= NFNL_SUBSYS_COUNT ? -EINVAL : -EOPNOTSUPP;
			goto ack;
		}
		if ((type & 0xff) >= NFT_MSG_MAX || ctl_cbs[type & 0xff].policy == NULL) {
			err = -EINVAL;
			goto ack;
		}
		cb = &ctl_cbs[type & 0xff];
		err = parse_attrs(nlh, cb, tb, &m.bad_attr);
		if (err < 0)
			goto ack;
		if (cb->get == NULL) {
			/* a batch-only message outside a batch */
			err = -EINVAL;
			goto ack;
		}
		msg_init(&m, ctl, s, nlh, tb, false);
		err = cb->get(&m, &o);
		if (err == -EINTR) /* a dump: it ended with NLMSG_DONE, no ack */
			goto next;
	ack:
		if ((nlh->nlmsg_flags & NLM_F_ACK) || err)
			ctl_ack(&o, nlh, err, m.bad_attr, ctl_session_ext_ack(s));
	next:
		ctl_out_flush(&o); /* each request's answers in datagrams of their own */
		off += NLMSG_ALIGN(nlh->nlmsg_len);
		if (off > len)
			break;
	}
out:
	ctl_out_flush(&o);
	ctl_out_free(&o);
	return 0;
}
