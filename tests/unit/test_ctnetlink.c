/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control/ctnetlink.c without a socket: requests built with libmnl go to
 * ctl_ctnetlink_rcv() against a fake two-shard connection table; the
 * session and multicast calls are stand-ins that keep every datagram. The
 * checks: attribute order and nesting as the kernel's ctnetlink_fill_info
 * and ctnetlink_conntrack_event build them, dump datagrams that fit the
 * conntrack tool's 4096-byte buffer, filters, the kernel's errnos for
 * malformed requests, and that a refused request changes nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "control_priv.h"
#include "nftdp_conntrack.h"

/* ---- stand-ins for server.c ---- */

struct ctl_session {
	int unused;
};

#define MAX_DGRAMS 512
static struct dgram {
	size_t len;
	unsigned int group; /* 0: unicast */
	char buf[4096];
} sent[MAX_DGRAMS];
static unsigned int n_sent;
static bool listening = true;
static unsigned int block_at; /* non-zero: a BROADCAST_ERROR listener is full
			       * once this many datagrams were sent */

static void keep(const void *buf, size_t len, unsigned int group)
{
	assert_true(len <= sizeof(sent[0].buf)); /* MNL_SOCKET_BUFFER_SIZE */
	assert_true(n_sent < MAX_DGRAMS);
	sent[n_sent].len = len;
	sent[n_sent].group = group;
	memcpy(sent[n_sent].buf, buf, len);
	n_sent++;
}

int ctl_session_send(struct ctl_session *s, const void *buf, size_t len)
{
	(void)s;
	keep(buf, len, 0);
	return 0;
}

uint32_t ctl_session_portid(const struct ctl_session *s)
{
	(void)s;
	return 4242;
}

static bool exp_listening; /* NFNLGRP_CONNTRACK_EXP_* have members */
static bool exp_gone;	   /* f_exp_dump: shard 1's expectation is not there */

bool ctl_server_has_listeners(const struct ctl_server *srv, unsigned int group)
{
	(void)srv;
	if (group == NFNLGRP_CONNTRACK_EXP_NEW || group == NFNLGRP_CONNTRACK_EXP_DESTROY)
		return exp_listening;
	return listening;
}

bool ctl_server_group_blocked(const struct ctl_server *srv, unsigned int group)
{
	(void)srv;
	(void)group;
	return block_at && n_sent >= block_at;
}

bool ctl_server_multicast(struct ctl_server *srv, unsigned int group, const void *buf, size_t len,
			  const struct ctl_session *skip)
{
	(void)srv;
	(void)skip;
	keep(buf, len, group);
	return true;
}

/* ---- a fake table: entries in two shards ---- */

#define MAX_ENTRIES 5000
static struct entry {
	bool used;
	unsigned int shard;
	struct nftdp_ct_info ci;
} tab[MAX_ENTRIES];
static unsigned int n_tab;
static struct nftdp_ct_event evq[64];
static unsigned int n_ev;

static void push_event(uint32_t events, const struct nftdp_ct_info *ci)
{
	evq[n_ev].events = events;
	evq[n_ev].info = *ci;
	n_ev++;
}

static int f_dump(void *arg, unsigned int shard, unsigned int skip, struct nftdp_ct_info *out,
		  unsigned int max)
{
	unsigned int seen = 0, n = 0;

	(void)arg;
	for (unsigned int i = 0; i < n_tab && n < max; i++) {
		if (!tab[i].used || tab[i].shard != shard)
			continue;
		if (seen++ < skip)
			continue;
		out[n++] = tab[i].ci;
	}
	return (int)n;
}

static struct entry *find(const struct nftdp_ct_tuple *t)
{
	for (unsigned int i = 0; i < n_tab; i++)
		if (tab[i].used && (!memcmp(&tab[i].ci.tuple[0], t, sizeof(*t)) ||
				    !memcmp(&tab[i].ci.tuple[1], t, sizeof(*t))))
			return &tab[i];
	return NULL;
}

static int f_get(void *arg, const struct nftdp_ct_tuple *t, struct nftdp_ct_info *out)
{
	struct entry *e = find(t);

	(void)arg;
	if (!e)
		return -ENOENT;
	*out = e->ci;
	return 0;
}

static void kill_entry(struct entry *e)
{
	e->used = false;
	e->ci.status |= IPS_DYING;
	push_event(1u << IPCT_DESTROY, &e->ci);
}

static int f_del(void *arg, const struct nftdp_ct_tuple *t, uint32_t id)
{
	struct entry *e = find(t);

	(void)arg;
	if (!e || (id && e->ci.id != id))
		return -ENOENT;
	kill_entry(e);
	return 0;
}

static int f_flush(void *arg)
{
	int n = 0;

	(void)arg;
	for (unsigned int i = 0; i < n_tab; i++)
		if (tab[i].used) {
			kill_entry(&tab[i]);
			n++;
		}
	return n;
}

static void f_stats(void *arg, unsigned int shard, struct nftdp_ct_stats *out)
{
	(void)arg;
	memset(out, 0, sizeof(*out));
	out->max = 1000;
	out->insert = 10 + shard;
	for (unsigned int i = 0; i < n_tab; i++)
		out->count += tab[i].used && tab[i].shard == shard;
}

static unsigned int f_events(void *arg, unsigned int shard,
			     bool (*cb)(const struct nftdp_ct_event *ev, void *cb_arg),
			     void *cb_arg)
{
	unsigned int n = 0;

	(void)arg;
	if (shard != 0)
		return 0;
	while (n < n_ev && cb(&evq[n], cb_arg))
		n++;
	/* what cb refused stays queued, first */
	memmove(evq, evq + n, (n_ev - n) * sizeof(evq[0]));
	n_ev -= n;
	return n;
}

/* shard 1 holds one expectation (an ftp data connection, NAT following) */
static bool exp_pptp; /* f_exp_dump gives nf_nat_pptp's expectation */

static int f_exp_dump(void *arg, unsigned int shard, struct nftdp_ct_expect_info *out,
		      unsigned int max)
{
	(void)arg;
	if (shard != 1 || !max || exp_gone)
		return 0;
	memset(out, 0, sizeof(*out));
	out->tuple.l3proto = out->master.l3proto = NFPROTO_IPV4;
	out->tuple.l4proto = out->master.l4proto = IPPROTO_TCP;
	inet_pton(AF_INET, "10.1.0.1", &out->tuple.src.ip);
	inet_pton(AF_INET, "10.2.0.1", &out->tuple.dst.ip);
	out->tuple.dport = htons(50000);
	out->mask = out->tuple;
	memset(&out->mask.src, 0xff, 4);
	memset(&out->mask.dst, 0xff, 4);
	out->mask.sport = 0;
	out->mask.dport = 0xffff;
	out->master = out->tuple;
	out->master.sport = htons(40000);
	out->master.dport = htons(21);
	out->timeout_s = 299;
	out->id = 9;
	out->helper = "ftp";
	out->nat = true;
	out->nat_dir = 0;
	out->nat_port = htons(50000);
	if (exp_pptp) {
		/* nf_nat_pptp's: GRE keys, saved key, pptp_expectfn */
		out->tuple.l4proto = IPPROTO_GRE;
		out->tuple.sport = htons(0x4a01);
		out->tuple.dport = htons(0x7b02);
		out->mask.sport = 0xffff;
		out->master.dport = htons(1723);
		out->helper = "pptp";
		out->nat_port = htons(40000);
		out->nat_pptp = true;
	}
	return 1;
}

/* CT_NEW: the parsed request is kept; an existing entry gets its mark,
 * else chg_rc (the table's answer) */
static struct nftdp_ct_change last_chg;
static unsigned int n_chg;
static int chg_rc;

static int f_change(void *arg, const struct nftdp_ct_change *c)
{
	const struct nftdp_ct_tuple *t = &c->tuple[(c->has & NFTDP_CT_CHG_ORIG) ? 0 : 1];
	struct entry *e = find(t);

	(void)arg;
	last_chg = *c;
	n_chg++;
	if (chg_rc)
		return chg_rc;
	if (!e)
		return -ENOENT;
	if (c->has & NFTDP_CT_CHG_MARK)
		e->ci.mark = c->mark;
	push_event(1u << IPCT_MARK, &e->ci);
	return 0;
}

/* CTRZERO: the entry as it was, then its counters zeroed */
static int f_get_zero(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
		      struct nftdp_ct_info *out)
{
	struct entry *e = find(t);

	(void)arg;
	if (!e || (id && e->ci.id != id))
		return -ENOENT;
	*out = e->ci;
	memset(e->ci.packets, 0, sizeof(e->ci.packets));
	memset(e->ci.bytes, 0, sizeof(e->ci.bytes));
	return 0;
}

/* expectation requests: what reached the table */
static struct nftdp_ct_expect_new last_exp;
static struct nftdp_ct_tuple last_exp_t;
static char last_flush[16];
static unsigned int n_exp_calls;
static bool exp_exists;

static int f_exp_get(void *arg, const struct nftdp_ct_tuple *t, uint32_t id,
		     struct nftdp_ct_expect_info *out)
{
	(void)id;
	last_exp_t = *t;
	if (!exp_exists)
		return -ENOENT;
	return f_exp_dump(arg, 1, out, 1) == 1 ? 0 : -ENOENT;
}

static int f_exp_del(void *arg, const struct nftdp_ct_tuple *t, uint32_t id)
{
	(void)arg;
	(void)id;
	last_exp_t = *t;
	n_exp_calls++;
	return exp_exists ? 0 : -ENOENT;
}

static int f_exp_flush(void *arg, const char *helper)
{
	(void)arg;
	snprintf(last_flush, sizeof(last_flush), "%s", helper ? helper : "(all)");
	n_exp_calls++;
	return 0;
}

static int f_exp_timeout(void *arg, const struct nftdp_ct_tuple *t, uint32_t timeout_s)
{
	(void)arg;
	(void)t;
	n_exp_calls++;
	return (int)timeout_s == 77 ? 0 : -EINVAL;
}

static int f_exp_new(void *arg, const struct nftdp_ct_expect_new *n)
{
	(void)arg;
	last_exp = *n;
	n_exp_calls++;
	return 0;
}

static struct nftdp_ctl_ct_ops ops = {
    .exp_get = f_exp_get,
    .exp_del = f_exp_del,
    .exp_flush = f_exp_flush,
    .exp_timeout = f_exp_timeout,
    .exp_new = f_exp_new,
    .n_shards = 2,
    .change = f_change,
    .get_zero = f_get_zero,
    .exp_dump = f_exp_dump,
    .dump = f_dump,
    .get = f_get,
    .del = f_del,
    .flush = f_flush,
    .stats = f_stats,
    .events_poll = f_events,
};

static struct nftdp_ctl ctl;
static struct ctl_session sess;

static struct nftdp_ct_info *add4(const char *src, const char *dst, uint8_t l4, uint16_t sport,
				  uint16_t dport, unsigned int shard)
{
	struct entry *e = &tab[n_tab++];
	struct nftdp_ct_tuple *o = &e->ci.tuple[0], *r = &e->ci.tuple[1];

	memset(e, 0, sizeof(*e));
	e->used = true;
	e->shard = shard;
	o->l3proto = r->l3proto = NFPROTO_IPV4;
	o->l4proto = r->l4proto = l4;
	inet_pton(AF_INET, src, &o->src.ip);
	inet_pton(AF_INET, dst, &o->dst.ip);
	r->src = o->dst;
	r->dst = o->src;
	if (l4 == IPPROTO_ICMP) {
		uint8_t *tc = (uint8_t *)&o->dport, *rtc = (uint8_t *)&r->dport;

		o->sport = r->sport = htons(sport);
		tc[0] = 8;
		rtc[0] = 0;
	} else {
		o->sport = r->dport = htons(sport);
		o->dport = r->sport = htons(dport);
	}
	e->ci.status = IPS_CONFIRMED;
	e->ci.timeout_s = 30;
	e->ci.id = 0x1000 + n_tab;
	e->ci.use = 1;
	if (l4 == IPPROTO_TCP) {
		e->ci.tcp.state = TCP_CONNTRACK_ESTABLISHED;
		e->ci.tcp.wscale[0] = e->ci.tcp.wscale[1] = 7;
		e->ci.tcp.flags[0] = e->ci.tcp.flags[1] = 0x23;
	}
	return &e->ci;
}

static struct nftdp_ct_info *add6(const char *src, const char *dst, uint16_t sport, uint16_t dport)
{
	struct nftdp_ct_info *ci = add4("0.0.0.0", "0.0.0.0", IPPROTO_UDP, sport, dport, 1);

	for (int d = 0; d < 2; d++) {
		ci->tuple[d].l3proto = NFPROTO_IPV6;
		inet_pton(AF_INET6, d ? dst : src, &ci->tuple[d].src);
		inet_pton(AF_INET6, d ? src : dst, &ci->tuple[d].dst);
	}
	return ci;
}

static int setup(void **state)
{
	(void)state;
	memset(&ctl, 0, sizeof(ctl));
	ctl.cfg.ct = &ops;
	n_tab = n_sent = n_ev = n_chg = n_exp_calls = 0;
	exp_exists = false;
	chg_rc = 0;
	ops.acct = false;
	listening = true;
	block_at = 0;
	exp_listening = exp_gone = false;
	add4("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80, 0)->status |=
	    IPS_SEEN_REPLY | IPS_ASSURED;
	add4("10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53, 1)->mark = 7;
	add4("10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 99, 0, 0);
	add6("fd00::1", "fd00::2", 6000, 53);
	return 0;
}

static unsigned int n_used(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < n_tab; i++)
		n += tab[i].used;
	return n;
}

/* ---- request building ---- */

static char rbuf[2048];

static struct nlmsghdr *req(uint8_t type, uint16_t flags, uint8_t family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(rbuf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = 77;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	return nlh;
}

static void put_tuple4(struct nlmsghdr *nlh, uint16_t type, const char *src, const char *dst,
		       uint8_t l4, uint16_t sport, uint16_t dport)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type), *m;
	uint32_t a;

	m = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	inet_pton(AF_INET, src, &a);
	mnl_attr_put_u32(nlh, CTA_IP_V4_SRC, a);
	inet_pton(AF_INET, dst, &a);
	mnl_attr_put_u32(nlh, CTA_IP_V4_DST, a);
	mnl_attr_nest_end(nlh, m);
	m = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, l4);
	if (l4 == IPPROTO_ICMP) {
		mnl_attr_put_u16(nlh, CTA_PROTO_ICMP_ID, htons(sport));
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMP_TYPE, (uint8_t)dport);
		mnl_attr_put_u8(nlh, CTA_PROTO_ICMP_CODE, 0);
	} else if (sport || dport) {
		mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(sport));
		mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(dport));
	}
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, n);
}

static const struct nlattr *bad;

static void ctl_put_attr_copy(struct nlmsghdr *nlh, const struct nlattr *a)
{
	memcpy(mnl_nlmsg_get_payload_tail(nlh), a, a->nla_len);
	nlh->nlmsg_len += MNL_ALIGN(a->nla_len);
}

static int rcv(const struct nlmsghdr *nlh)
{
	bad = NULL;
	return ctl_ctnetlink_rcv(&ctl, &sess, nlh, &bad);
}

/* ---- answer reading ---- */

/* every message of every unicast datagram, in order */
static unsigned int collect(const struct nlmsghdr **out, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int d = 0; d < n_sent; d++) {
		size_t off = 0;

		if (sent[d].group)
			continue;
		while (off + sizeof(struct nlmsghdr) <= sent[d].len && n < max) {
			const struct nlmsghdr *nlh = (const void *)(sent[d].buf + off);

			assert_true(nlh->nlmsg_len >= sizeof(*nlh));
			assert_true(nlh->nlmsg_len <= sent[d].len - off);
			out[n++] = nlh;
			off += NLMSG_ALIGN(nlh->nlmsg_len);
		}
	}
	return n;
}

/* the top-level attribute types of a ctnetlink message, in order */
static unsigned int attr_types(const struct nlmsghdr *nlh, uint16_t *types, unsigned int max)
{
	const struct nlattr *a;
	unsigned int n = 0;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (n < max)
			types[n] = mnl_attr_get_type(a);
		n++;
	}
	return n;
}

static const struct nlattr *attr(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(a) == type)
			return a;
	}
	return NULL;
}

static uint32_t attr_u32(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *a = attr(nlh, type);

	assert_non_null(a);
	return ntohl(mnl_attr_get_u32(a));
}

static uint8_t family_of(const struct nlmsghdr *nlh)
{
	return ((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->nfgen_family;
}

/* ---- tests ---- */

/* a pptp expectation under NAT lists its saved key (CTA_EXPECT_NAT) but
 * no CTA_EXPECT_FN: pptp_expectfn has no registered name */
static void test_exp_dump_pptp_nat(void **state)
{
	const struct nlmsghdr *m[8];
	struct nlmsghdr *nlh;
	uint16_t ty[16];
	unsigned int n;

	(void)state;
	exp_pptp = true;
	nlh = req(IPCTNL_MSG_EXP_GET, NLM_F_DUMP, AF_UNSPEC);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_GET;
	bad = NULL;
	assert_int_equal(ctl_ctnetlink_exp_rcv(&ctl, &sess, nlh, &bad), -EINTR);
	exp_pptp = false;
	n = collect(m, 8);
	assert_int_equal(n, 2);
	n = attr_types(m[0], ty, 16);
	assert_int_equal(n, 9);
	assert_int_equal(ty[3], CTA_EXPECT_NAT);
	assert_int_equal(ty[8], CTA_EXPECT_HELP_NAME);
	assert_null(attr(m[0], CTA_EXPECT_FN));
	assert_string_equal(mnl_attr_get_str(attr(m[0], CTA_EXPECT_HELP_NAME)), "pptp");
}

/* conntrack -L expect: IPCTNL_MSG_EXP_GET dump on NFNL_SUBSYS_CTNETLINK_EXP */
static void test_exp_dump(void **state)
{
	const struct nlmsghdr *m[8];
	struct nlmsghdr *nlh;
	const struct nlattr *a, *in;
	uint16_t ty[16];
	unsigned int n;

	(void)state;
	nlh = req(IPCTNL_MSG_EXP_GET, NLM_F_DUMP, AF_UNSPEC);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_GET;
	bad = NULL;
	assert_int_equal(ctl_ctnetlink_exp_rcv(&ctl, &sess, nlh, &bad), -EINTR);
	n = collect(m, 8);
	assert_int_equal(n, 2);
	assert_int_equal(m[1]->nlmsg_type, NLMSG_DONE);
	assert_int_equal(m[0]->nlmsg_type, (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_NEW);
	assert_int_equal(family_of(m[0]), NFPROTO_IPV4);
	/* ctnetlink_exp_dump_expect's order */
	n = attr_types(m[0], ty, 16);
	assert_int_equal(n, 10);
	assert_int_equal(ty[0], CTA_EXPECT_TUPLE);
	assert_int_equal(ty[1], CTA_EXPECT_MASK);
	assert_int_equal(ty[2], CTA_EXPECT_MASTER);
	assert_int_equal(ty[3], CTA_EXPECT_NAT);
	assert_int_equal(ty[4], CTA_EXPECT_TIMEOUT);
	assert_int_equal(ty[8], CTA_EXPECT_HELP_NAME);
	assert_int_equal(ty[9], CTA_EXPECT_FN);
	assert_int_equal(attr_u32(m[0], CTA_EXPECT_TIMEOUT), 299);
	assert_int_equal(attr_u32(m[0], CTA_EXPECT_ID), 9);
	assert_string_equal(mnl_attr_get_str(attr(m[0], CTA_EXPECT_HELP_NAME)), "ftp");
	assert_string_equal(mnl_attr_get_str(attr(m[0], CTA_EXPECT_FN)), "nat-follow-master");
	/* the mask: the destination all ones, the source port as masked */
	a = attr(m[0], CTA_EXPECT_MASK);
	mnl_attr_for_each_nested(in, a)
	{
		const struct nlattr *x;

		if (mnl_attr_get_type(in) != CTA_TUPLE_PROTO)
			continue;
		mnl_attr_for_each_nested(x, in)
		{
			if (mnl_attr_get_type(x) == CTA_PROTO_SRC_PORT)
				assert_int_equal(mnl_attr_get_u16(x), 0);
			if (mnl_attr_get_type(x) == CTA_PROTO_DST_PORT)
				assert_int_equal(mnl_attr_get_u16(x), 0xffff);
		}
	}
	/* other expectation requests, from a table without their calls */
	n_sent = 0;
	ops.exp_del = NULL;
	nlh = req(IPCTNL_MSG_EXP_DELETE, 0, AF_INET);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_DELETE;
	assert_int_equal(ctl_ctnetlink_exp_rcv(&ctl, &sess, nlh, &bad), -EOPNOTSUPP);
	ops.exp_del = f_exp_del;
	/* the family filter */
	nlh = req(IPCTNL_MSG_EXP_GET, NLM_F_DUMP, AF_INET6);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_GET;
	assert_int_equal(ctl_ctnetlink_exp_rcv(&ctl, &sess, nlh, &bad), -EINTR);
	assert_int_equal(collect(m, 8), 1); /* NLMSG_DONE only */
}

static void test_dump_all(void **state)
{
	const struct nlmsghdr *m[16];
	uint16_t ty[16];
	unsigned int n;
	bool seen_tcp = false;

	(void)state;
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC)), -EINTR);
	n = collect(m, 16);
	assert_int_equal(n, 5);
	/* NLMSG_DONE in a datagram of its own, as netlink_dump sends it */
	assert_int_equal(m[4]->nlmsg_type, NLMSG_DONE);
	assert_int_equal(sent[n_sent - 1].len, NLMSG_HDRLEN + 4);
	for (unsigned int i = 0; i < 4; i++) {
		assert_int_equal(m[i]->nlmsg_type,
				 (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW);
		assert_int_equal(m[i]->nlmsg_flags, NLM_F_MULTI); /* no filter */
		assert_int_equal(m[i]->nlmsg_seq, 77);
		assert_int_equal(m[i]->nlmsg_pid, 4242);
		if (family_of(m[i]) == AF_INET && attr(m[i], CTA_PROTOINFO)) {
			/* ctnetlink_fill_info: tuples, then dump_info's order */
			static const uint16_t want[] = {CTA_TUPLE_ORIG, CTA_TUPLE_REPLY, CTA_STATUS,
							CTA_MARK,	CTA_ID,		 CTA_USE,
							CTA_TIMEOUT,	CTA_PROTOINFO};
			const struct nlattr *pi = attr(m[i], CTA_PROTOINFO), *tcp;

			assert_int_equal(attr_types(m[i], ty, 16), 8);
			assert_memory_equal(ty, want, sizeof(want));
			assert_true(pi->nla_type & NLA_F_NESTED);
			tcp = mnl_attr_get_payload(pi);
			assert_int_equal(mnl_attr_get_type(tcp), CTA_PROTOINFO_TCP);
			/* the kernel's nest of 0x2c bytes: three u8 and two 2-byte flag attrs */
			assert_int_equal(mnl_attr_get_payload_len(tcp), 5 * 8);
			assert_int_equal(attr_u32(m[i], CTA_STATUS),
					 IPS_CONFIRMED | IPS_SEEN_REPLY | IPS_ASSURED);
			seen_tcp = true;
		}
	}
	assert_true(seen_tcp);
}

/* the nesting of a tuple: CTA_TUPLE_IP {V4_SRC, V4_DST}, CTA_TUPLE_PROTO
 * {NUM, ICMP_ID, ICMP_TYPE, ICMP_CODE} */
static void test_dump_icmp_tuple(void **state)
{
	const struct nlmsghdr *m[16];
	unsigned int n;
	int checked = 0;

	(void)state;
	rcv(req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_INET));
	n = collect(m, 16);
	assert_int_equal(n, 4); /* three IPv4 entries and DONE */
	for (unsigned int i = 0; i + 1 < n; i++) {
		const struct nlattr *orig = attr(m[i], CTA_TUPLE_ORIG), *a, *ip = NULL, *pr = NULL;
		uint16_t ty[8];
		unsigned int k = 0;

		assert_int_equal(m[i]->nlmsg_flags, NLM_F_MULTI | NLM_F_DUMP_FILTERED);
		assert_int_equal(family_of(m[i]), AF_INET);
		mnl_attr_for_each_nested(a, orig)
		{
			if (mnl_attr_get_type(a) == CTA_TUPLE_IP)
				ip = a;
			if (mnl_attr_get_type(a) == CTA_TUPLE_PROTO)
				pr = a;
		}
		assert_non_null(ip);
		assert_non_null(pr);
		mnl_attr_for_each_nested(a, pr) ty[k++ & 7] = mnl_attr_get_type(a);
		if (*(const uint8_t *)mnl_attr_get_payload(mnl_attr_get_payload(pr)) !=
		    IPPROTO_ICMP)
			continue;
		assert_int_equal(k, 4);
		assert_int_equal(ty[0], CTA_PROTO_NUM);
		assert_int_equal(ty[1], CTA_PROTO_ICMP_ID);
		assert_int_equal(ty[2], CTA_PROTO_ICMP_TYPE);
		assert_int_equal(ty[3], CTA_PROTO_ICMP_CODE);
		assert_false(attr(m[i], CTA_PROTOINFO)); /* only TCP has one */
		checked++;
	}
	assert_int_equal(checked, 1);
}

static void test_dump_filters(void **state)
{
	const struct nlmsghdr *m[16];
	struct nlmsghdr *nlh;

	(void)state;
	/* -f ipv6 */
	rcv(req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_INET6));
	assert_int_equal(collect(m, 16), 2);
	assert_int_equal(family_of(m[0]), AF_INET6);
	/* -m 7 */
	n_sent = 0;
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(7));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(0xffffffff));
	assert_int_equal(rcv(nlh), -EINTR);
	assert_int_equal(collect(m, 16), 2);
	assert_int_equal(attr_u32(m[0], CTA_MARK), 7);
	/* --status ASSURED */
	n_sent = 0;
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(IPS_ASSURED));
	mnl_attr_put_u32(nlh, CTA_STATUS_MASK, htonl(IPS_ASSURED));
	rcv(nlh);
	assert_int_equal(collect(m, 16), 2);
	assert_true(attr_u32(m[0], CTA_STATUS) & IPS_ASSURED);
	/* ctnetlink_filter_parse_mark / _status errors: EINVAL, nothing sent */
	n_sent = 0;
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(1));
	mnl_attr_put_u32(nlh, CTA_ZONE, 0); /* a filter without CTA_MARK */
	assert_int_equal(rcv(nlh), -EINVAL);
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	mnl_attr_put_u32(nlh, CTA_STATUS, 0);
	assert_int_equal(rcv(nlh), -EINVAL); /* status mask 0 */
	{
		struct nlattr *f;

		nlh = req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
		f = mnl_attr_nest_start(nlh, CTA_FILTER);
		mnl_attr_put_u32(nlh, CTA_FILTER_ORIG_FLAGS, 1u); /* CTA_FILTER_F_CTA_IP_SRC */
		mnl_attr_nest_end(nlh, f);
		assert_int_equal(rcv(nlh), -EOPNOTSUPP); /* tuple filters: not here */
	}
	assert_int_equal(n_sent, 0);
	/* an empty CTA_FILTER filters nothing, as in the kernel */
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	mnl_attr_nest_end(nlh, mnl_attr_nest_start(nlh, CTA_FILTER));
	assert_int_equal(rcv(nlh), -EINTR);
	assert_int_equal(collect(m, 16), 5);
}

/* a dump of many entries: every datagram holds whole messages, fits the
 * 4096-byte buffer, and every entry comes exactly once across chunks */
static void test_dump_big(void **state)
{
	static const struct nlmsghdr *m[MAX_ENTRIES + 8];
	unsigned int n, ids = 0;

	(void)state;
	while (n_tab < 4500) /* two chunks of 2048 in each shard */
		add4("10.9.0.1", "10.9.0.2", IPPROTO_UDP, (uint16_t)(1000 + n_tab), 53, n_tab % 2);
	rcv(req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC));
	assert_true(n_sent > 10);
	for (unsigned int d = 0; d < n_sent; d++)
		assert_true(sent[d].len <= 3776);
	n = collect(m, MAX_ENTRIES + 8);
	assert_int_equal(n, 4501);
	static bool seen[MAX_ENTRIES + 1];

	memset(seen, 0, sizeof(seen));
	for (unsigned int i = 0; i + 1 < n; i++) {
		uint32_t id = attr_u32(m[i], CTA_ID) - 0x1000;

		assert_true(id >= 1 && id <= 4500 && !seen[id]); /* each once */
		seen[id] = true;
		ids++;
	}
	assert_int_equal(ids, 4500);
}

static void test_get(void **state)
{
	const struct nlmsghdr *m[4];
	struct nlmsghdr *nlh;

	(void)state;
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(collect(m, 4), 1);
	assert_int_equal(m[0]->nlmsg_flags, NLM_F_MULTI); /* portid set: as the kernel */
	assert_int_equal(attr_u32(m[0], CTA_USE), 2);	  /* + the reference of the get */
	assert_int_equal(attr_u32(m[0], CTA_MARK), 7);
	/* by the reply tuple */
	n_sent = 0;
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_REPLY, "10.0.0.3", "10.0.0.1", IPPROTO_UDP, 53, 5000);
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(n_sent, 1);
	/* ICMP echo by id and type */
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 99, 8);
	assert_int_equal(rcv(nlh), 0);
	/* unknown: ENOENT */
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5001, 53);
	assert_int_equal(rcv(nlh), -ENOENT);
	/* no tuple: EINVAL */
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET)), -EINVAL);
}

static void test_malformed(void **state)
{
	struct nlmsghdr *nlh;
	struct nlattr *n;

	(void)state;
	/* ports missing: EINVAL */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 0, 0);
	assert_int_equal(rcv(nlh), -EINVAL);
	/* an ICMP type without a tuple (destination unreachable): EINVAL */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 99, 3);
	assert_int_equal(rcv(nlh), -EINVAL);
	/* CTA_STATUS of two bytes: ERANGE, the attribute in the extended ack */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	mnl_attr_put_u16(nlh, CTA_STATUS, 1);
	assert_int_equal(rcv(nlh), -ERANGE);
	assert_non_null(bad);
	assert_int_equal(mnl_attr_get_type(bad), CTA_STATUS);
	/* a nested attribute too short for a header inside the tuple */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	mnl_attr_put_u16(nlh, CTA_TUPLE_IP, 0);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -ERANGE);
	/* an IPv6 address of 8 bytes */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET6);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	{
		struct nlattr *ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
		uint64_t half = 0;

		mnl_attr_put(nlh, CTA_IP_V6_SRC, 8, &half);
		mnl_attr_put(nlh, CTA_IP_V6_DST, 8, &half);
		mnl_attr_nest_end(nlh, ip);
	}
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -ERANGE);
	/* a family without tuples: EOPNOTSUPP */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_UNSPEC);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	assert_int_equal(rcv(nlh), -EOPNOTSUPP);
	/* trailing bytes that are no attribute end the parse (deprecated
	 * nla_parse): the tuple before them still counts */
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	memset((char *)nlh + nlh->nlmsg_len, 0xff, 4);
	nlh->nlmsg_len += 4;
	assert_int_equal(rcv(nlh), 0);
	/* CT_NEW without a tuple: EINVAL to create, else ENOENT; a table that
	 * cannot change entries, and one that cannot zero counters:
	 * EOPNOTSUPP; past the table EINVAL */
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_NEW, NLM_F_ACK | NLM_F_CREATE, AF_INET)), -EINVAL);
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET)), -ENOENT);
	ops.change = NULL;
	ops.get_zero = NULL;
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK | NLM_F_CREATE, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.9", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	assert_int_equal(rcv(nlh), -EOPNOTSUPP);
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_GET_CTRZERO, NLM_F_DUMP, AF_INET)), -EOPNOTSUPP);
	ops.change = f_change;
	ops.get_zero = f_get_zero;
	/* GET_STATS_CPU without the dump flag: nfnetlink acks */
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_GET_STATS_CPU, NLM_F_ACK, AF_UNSPEC)), 0);
	assert_int_equal(rcv(req(IPCTNL_MSG_MAX, NLM_F_DUMP, AF_INET)), -EINVAL);
	/* nothing of it deleted anything or sent an event */
	assert_int_equal(n_used(), 4);
	assert_int_equal(n_ev, 0);
}

static void test_delete(void **state)
{
	struct nlmsghdr *nlh;
	const struct nlmsghdr *ev;
	uint16_t ty[16];

	(void)state;
	/* a wrong CTA_ID: ENOENT, nothing deleted */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	mnl_attr_put_u32(nlh, CTA_ID, htonl(0x9999));
	assert_int_equal(rcv(nlh), -ENOENT);
	assert_int_equal(n_used(), 4);
	/* as conntrack -D sends it: tuples, status, timeout, mark */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	put_tuple4(nlh, CTA_TUPLE_REPLY, "10.0.0.3", "10.0.0.1", IPPROTO_UDP, 53, 5000);
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(IPS_CONFIRMED));
	mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(29));
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(7));
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(n_used(), 3);
	/* the destroy event, to NFNLGRP_CONNTRACK_DESTROY, with the deleter's
	 * port id (conntrack -E prints [USERSPACE] portid=...) */
	assert_int_equal(n_sent, 1);
	assert_int_equal(sent[0].group, NFNLGRP_CONNTRACK_DESTROY);
	ev = (const void *)sent[0].buf;
	assert_int_equal(ev->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE);
	assert_int_equal(ev->nlmsg_flags, 0);
	assert_int_equal(ev->nlmsg_seq, 0);
	assert_int_equal(ev->nlmsg_pid, 4242);
	{
		static const uint16_t want[] = {CTA_TUPLE_ORIG, CTA_TUPLE_REPLY, CTA_ID,
						CTA_STATUS,	CTA_TIMEOUT,	 CTA_MARK};

		assert_int_equal(attr_types(ev, ty, 16), 6);
		assert_memory_equal(ty, want, sizeof(want));
		assert_true(attr_u32(ev, CTA_STATUS) & IPS_DYING);
	}
	/* again: ENOENT */
	n_sent = 0;
	assert_int_equal(rcv(nlh), -ENOENT);
	assert_int_equal(n_sent, 0);
}

static void test_flush(void **state)
{
	struct nlmsghdr *nlh;

	(void)state;
	/* the family filters a flush only with nfgenmsg version 1 */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET6);
	((struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->version = 1;
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(n_used(), 3);
	assert_int_equal(n_sent, 1);
	/* by mark */
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_UNSPEC);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(7));
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(n_used(), 2);
	assert_int_equal(n_sent, 2);
	/* conntrack -F -f ipv6 (version 0): everything, as this kernel does */
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET6)), 0);
	assert_int_equal(n_used(), 0);
	assert_int_equal(n_sent, 4);
	for (unsigned int i = 0; i < n_sent; i++)
		assert_int_equal(sent[i].group, NFNLGRP_CONNTRACK_DESTROY);
}

static void test_stats(void **state)
{
	const struct nlmsghdr *m[8];

	(void)state;
	/* conntrack -C: GET_STATS, no dump flag */
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_GET_STATS, 0, AF_UNSPEC)), 0);
	assert_int_equal(collect(m, 8), 1);
	assert_int_equal(m[0]->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET_STATS);
	assert_int_equal(attr_u32(m[0], CTA_STATS_GLOBAL_ENTRIES), 4);
	assert_int_equal(attr_u32(m[0], CTA_STATS_GLOBAL_MAX_ENTRIES), 2000);
	/* conntrack -S: one message per shard, res_id the shard */
	n_sent = 0;
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_GET_STATS_CPU, NLM_F_DUMP, AF_UNSPEC)), -EINTR);
	assert_int_equal(collect(m, 8), 3);
	for (unsigned int i = 0; i < 2; i++) {
		const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(m[i]);

		assert_int_equal(ntohs(nfg->res_id), i);
		assert_int_equal(attr_u32(m[i], CTA_STATS_INSERT), 10 + i);
	}
	assert_int_equal(m[2]->nlmsg_type, NLMSG_DONE);
}

static void test_events(void **state)
{
	struct nftdp_ct_info ci = tab[0].ci;
	const struct nlmsghdr *ev;
	uint16_t ty[16];

	(void)state;
	ci.status = IPS_CONFIRMED;
	ci.tcp.state = TCP_CONNTRACK_SYN_SENT;
	push_event((1u << IPCT_NEW) | (1u << IPCT_PROTOINFO), &ci);
	ci.status |= IPS_SEEN_REPLY;
	push_event(1u << IPCT_REPLY, &ci);
	ci.mark = 5;
	push_event(1u << IPCT_MARK, &ci);
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 3);
	assert_int_equal(n_sent, 3);
	/* new: CREATE|EXCL to NFNLGRP_CONNTRACK_NEW, protoinfo with the state */
	ev = (const void *)sent[0].buf;
	assert_int_equal(sent[0].group, NFNLGRP_CONNTRACK_NEW);
	assert_int_equal(ev->nlmsg_flags, NLM_F_CREATE | NLM_F_EXCL);
	{
		static const uint16_t want[] = {CTA_TUPLE_ORIG, CTA_TUPLE_REPLY, CTA_ID,
						CTA_STATUS,	CTA_TIMEOUT,	 CTA_PROTOINFO};

		assert_int_equal(attr_types(ev, ty, 16), 6);
		assert_memory_equal(ty, want, sizeof(want));
	}
	/* a reply seen: an update without protoinfo or mark */
	ev = (const void *)sent[1].buf;
	assert_int_equal(sent[1].group, NFNLGRP_CONNTRACK_UPDATE);
	assert_int_equal(ev->nlmsg_flags, 0);
	assert_null(attr(ev, CTA_PROTOINFO));
	assert_null(attr(ev, CTA_MARK));
	/* a mark set: the mark comes last */
	ev = (const void *)sent[2].buf;
	assert_int_equal(attr_types(ev, ty, 16), 6);
	assert_int_equal(ty[5], CTA_MARK);
	/* nobody listening: nothing built or sent, the ring still drained */
	n_sent = 0;
	listening = false;
	push_event(1u << IPCT_REPLY, &ci);
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 1);
	assert_int_equal(n_sent, 0);
	assert_int_equal(n_ev, 0);
}

/* NETLINK_BROADCAST_ERROR: while such a listener has no room the events
 * wait in their ring, in order, and go out once it has */
static void test_events_blocked(void **state)
{
	struct nftdp_ct_info ci = tab[0].ci;

	(void)state;
	for (uint32_t m = 1; m <= 3; m++) {
		ci.mark = m;
		push_event(1u << IPCT_MARK, &ci);
	}
	block_at = 1;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 1);
	assert_int_equal(n_sent, 1);
	assert_int_equal(n_ev, 2);
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 0); /* still full */
	assert_int_equal(n_ev, 2);
	block_at = 0;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 2);
	assert_int_equal(n_sent, 3);
	assert_int_equal(n_ev, 0);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(attr_u32((const void *)sent[i].buf, CTA_MARK), i + 1);
}

/* expectation events: nothing for what was there when the listener came,
 * then IPCTNL_MSG_EXP_DELETE when one goes and EXP_NEW (CREATE|EXCL) when
 * one comes, to their groups, with the dump's attributes */
static void test_exp_events(void **state)
{
	const struct nlmsghdr *m;

	(void)state;
	exp_listening = true;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 0);
	assert_int_equal(n_sent, 0);
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 0); /* no change */
	exp_gone = true;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 1);
	assert_int_equal(n_sent, 1);
	m = (const void *)sent[0].buf;
	assert_int_equal(sent[0].group, NFNLGRP_CONNTRACK_EXP_DESTROY);
	assert_int_equal(m->nlmsg_type, (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_DELETE);
	assert_int_equal(m->nlmsg_flags, 0);
	assert_int_equal(attr_u32(m, CTA_EXPECT_ID), 9);
	exp_gone = false;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 1);
	m = (const void *)sent[1].buf;
	assert_int_equal(sent[1].group, NFNLGRP_CONNTRACK_EXP_NEW);
	assert_int_equal(m->nlmsg_type, (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_NEW);
	assert_int_equal(m->nlmsg_flags, NLM_F_CREATE | NLM_F_EXCL);
	assert_non_null(attr(m, CTA_EXPECT_MASTER));
	assert_int_equal(attr_u32(m, CTA_EXPECT_TIMEOUT), 299);
	/* the listener leaves: the snapshot goes; a new one learns again */
	exp_listening = false;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 0);
	assert_null(ctl.exp_snap);
	exp_listening = true;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 0);
	exp_listening = false;
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 0);
	assert_int_equal(n_sent, 2);
}

/* sctp_to_nlattr: state and both verification tags; a destroy only the state */
static void test_sctp_protoinfo(void **state)
{
	struct nftdp_ct_info *ci = add4("10.0.0.1", "10.0.0.2", IPPROTO_SCTP, 7000, 9899, 0);
	const struct nlmsghdr *m;
	const struct nlattr *pi, *sctp, *a;
	uint16_t ty[8];
	unsigned int k = 0;
	char buf[1024];
	struct nftdp_ct_event ev;
	unsigned int group;

	(void)state;
	ci->sctp.state = SCTP_CONNTRACK_ESTABLISHED;
	ci->sctp.vtag[0] = htonl(0x11111111);
	ci->sctp.vtag[1] = htonl(0x22222222);
	ctl_ctnetlink_fill_info(buf, 1, 4242, 0, ci, false);
	m = (const void *)buf;
	pi = attr(m, CTA_PROTOINFO);
	assert_non_null(pi);
	sctp = mnl_attr_get_payload(pi);
	assert_int_equal(mnl_attr_get_type(sctp), CTA_PROTOINFO_SCTP);
	mnl_attr_for_each_nested(a, sctp) ty[k++ & 7] = mnl_attr_get_type(a);
	assert_int_equal(k, 3);
	assert_int_equal(ty[0], CTA_PROTOINFO_SCTP_STATE);
	assert_int_equal(ty[1], CTA_PROTOINFO_SCTP_VTAG_ORIGINAL);
	assert_int_equal(ty[2], CTA_PROTOINFO_SCTP_VTAG_REPLY);
	ev.events = 1u << IPCT_DESTROY;
	ev.info = *ci;
	assert_true(ctl_ctnetlink_fill_event(buf, 0, &ev, false, &group) > 0);
	assert_int_equal(group, NFNLGRP_CONNTRACK_DESTROY);
	sctp = mnl_attr_get_payload(attr(m, CTA_PROTOINFO));
	assert_int_equal(mnl_attr_get_payload_len(sctp), 8); /* the state alone */
}

/* ctnetlink_dump_ct_seq_adj: in a listing after the labels
 * (ctnetlink_dump_extinfo), in an event with IPCT_SEQADJ after them too;
 * nothing without IPS_SEQ_ADJUST */
static void test_seqadj_dump(void **state)
{
	static const uint16_t want[] = {CTA_TUPLE_ORIG,
					CTA_TUPLE_REPLY,
					CTA_STATUS,
					CTA_MARK,
					CTA_ID,
					CTA_USE,
					CTA_TIMEOUT,
					CTA_PROTOINFO,
					CTA_LABELS,
					CTA_NAT_SEQ_ADJ_ORIG,
					CTA_NAT_SEQ_ADJ_REPLY};
	struct nftdp_ct_info *ci = add4("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 7000, 21, 0);
	const struct nlmsghdr *m;
	const struct nlattr *a, *b;
	struct nftdp_ct_event ev;
	unsigned int group;
	uint16_t ty[16];
	char buf[1024];

	(void)state;
	ci->labels[0] = 1;
	ctl_ctnetlink_fill_info(buf, 1, 4242, 0, ci, false);
	m = (const void *)buf;
	assert_null(attr(m, CTA_NAT_SEQ_ADJ_ORIG));
	ci->status |= IPS_SEQ_ADJUST;
	ci->seqadj = true;
	ci->seq[0] = (struct nftdp_ct_seqadj){0xfffffff0u, 0, 4};
	ci->seq[1] = (struct nftdp_ct_seqadj){5000, 2, -2};
	ctl_ctnetlink_fill_info(buf, 1, 4242, 0, ci, false);
	assert_int_equal(attr_types(m, ty, 16), 11);
	assert_memory_equal(ty, want, sizeof(want));
	a = attr(m, CTA_NAT_SEQ_ADJ_REPLY);
	assert_true(a->nla_type & NLA_F_NESTED);
	b = mnl_attr_get_payload(a);
	assert_int_equal(mnl_attr_get_type(b), CTA_SEQADJ_CORRECTION_POS);
	assert_int_equal(ntohl(mnl_attr_get_u32(b)), 5000);
	b = mnl_attr_next(b);
	b = mnl_attr_next(b);
	assert_int_equal(mnl_attr_get_type(b), CTA_SEQADJ_OFFSET_AFTER);
	assert_int_equal((int32_t)ntohl(mnl_attr_get_u32(b)), -2);
	/* an event: only with IPCT_SEQADJ */
	ev.info = *ci;
	ev.events = 1u << IPCT_MARK;
	assert_true(ctl_ctnetlink_fill_event(buf, 0, &ev, false, &group) > 0);
	assert_null(attr(m, CTA_NAT_SEQ_ADJ_ORIG));
	ev.events = (1u << IPCT_SEQADJ) | (1u << IPCT_LABEL);
	assert_true(ctl_ctnetlink_fill_event(buf, 0, &ev, false, &group) > 0);
	assert_non_null(attr(m, CTA_NAT_SEQ_ADJ_ORIG));
	assert_non_null(attr(m, CTA_NAT_SEQ_ADJ_REPLY));
}

/* ctnetlink_dump_ct_synproxy: CTA_SYNPROXY (isn, its, tsoff) after the
 * sequence adjustment in a listing, in an event only with IPCT_SYNPROXY;
 * nothing for an entry without the extension */
static void test_synproxy_dump(void **state)
{
	struct nftdp_ct_info *ci = add4("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 7001, 80, 0);
	const struct nlmsghdr *m;
	const struct nlattr *a, *b;
	struct nftdp_ct_event ev;
	unsigned int group, n;
	uint16_t ty[16];
	char buf[1024];

	(void)state;
	ctl_ctnetlink_fill_info(buf, 1, 4242, 0, ci, false);
	m = (const void *)buf;
	assert_null(attr(m, CTA_SYNPROXY));
	ci->status |= IPS_SEQ_ADJUST;
	ci->seqadj = true;
	ci->synproxy = true;
	ci->synproxy_isn = 0x50000000u;
	ci->synproxy_its = 7000;
	ci->synproxy_tsoff = 0xfffffff0u;
	ctl_ctnetlink_fill_info(buf, 1, 4242, 0, ci, false);
	n = attr_types(m, ty, 16);
	assert_int_equal(ty[n - 3], CTA_NAT_SEQ_ADJ_ORIG);
	assert_int_equal(ty[n - 1], CTA_SYNPROXY);
	a = attr(m, CTA_SYNPROXY);
	assert_true(a->nla_type & NLA_F_NESTED);
	assert_int_equal(mnl_attr_get_payload_len(a), 24);
	b = mnl_attr_get_payload(a);
	assert_int_equal(mnl_attr_get_type(b), CTA_SYNPROXY_ISN);
	assert_int_equal(ntohl(mnl_attr_get_u32(b)), 0x50000000u);
	b = mnl_attr_next(b);
	assert_int_equal(mnl_attr_get_type(b), CTA_SYNPROXY_ITS);
	assert_int_equal(ntohl(mnl_attr_get_u32(b)), 7000);
	b = mnl_attr_next(b);
	assert_int_equal(mnl_attr_get_type(b), CTA_SYNPROXY_TSOFF);
	assert_int_equal(ntohl(mnl_attr_get_u32(b)), 0xfffffff0u);
	ev.info = *ci;
	ev.events = 1u << IPCT_SEQADJ;
	assert_true(ctl_ctnetlink_fill_event(buf, 0, &ev, false, &group) > 0);
	assert_null(attr(m, CTA_SYNPROXY));
	ev.events = (1u << IPCT_NEW) | (1u << IPCT_SYNPROXY);
	assert_true(ctl_ctnetlink_fill_event(buf, 0, &ev, false, &group) > 0);
	assert_non_null(attr(m, CTA_SYNPROXY));
}

/* Valid requests with random bytes changed after the nfnetlink header (the
lengths nfnl.c checks are kept): no crash, no read past the message (run
it under ASan), every answer whole and within 4096 bytes. */
static void test_mutations(void **state)
{
	static char seeds[6][512];
	static size_t seed_len[6];
	struct nlmsghdr *nlh;
	struct nlattr *n1, *n2;
	uint8_t fl[2] = {1, 1}, lab[16] = {1};
	uint32_t rnd = 12345;

	(void)state;
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.3", IPPROTO_UDP, 5000, 53);
	put_tuple4(nlh, CTA_TUPLE_REPLY, "10.0.0.3", "10.0.0.1", IPPROTO_UDP, 53, 5000);
	mnl_attr_put_u32(nlh, CTA_ID, htonl(0x1002));
	memcpy(seeds[0], nlh, seed_len[0] = nlh->nlmsg_len);
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 99, 8);
	mnl_attr_put_u16(nlh, CTA_ZONE, 0);
	memcpy(seeds[1], nlh, seed_len[1] = nlh->nlmsg_len);
	nlh = req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(7));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(0xff));
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(IPS_CONFIRMED));
	mnl_attr_nest_end(nlh, mnl_attr_nest_start(nlh, CTA_FILTER));
	memcpy(seeds[2], nlh, seed_len[2] = nlh->nlmsg_len);
	nlh = req(IPCTNL_MSG_CT_DELETE, NLM_F_ACK, AF_UNSPEC);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(7));
	memcpy(seeds[3], nlh, seed_len[3] = nlh->nlmsg_len);
	/* CT_NEW with every part it reads (issue 16) */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK | NLM_F_CREATE, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	put_tuple4(nlh, CTA_TUPLE_REPLY, "10.0.0.2", "10.0.0.1", IPPROTO_TCP, 80, 4000);
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(IPS_CONFIRMED));
	mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(30));
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(3));
	mnl_attr_put(nlh, CTA_LABELS, sizeof(lab), lab);
	n1 = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	n2 = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, 3);
	mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, 2, fl);
	mnl_attr_nest_end(nlh, n2);
	mnl_attr_nest_end(nlh, n1);
	n1 = mnl_attr_nest_start(nlh, CTA_HELP);
	mnl_attr_put_strz(nlh, CTA_HELP_NAME, "ftp");
	mnl_attr_nest_end(nlh, n1);
	n1 = mnl_attr_nest_start(nlh, CTA_NAT_SRC);
	mnl_attr_put_u32(nlh, CTA_NAT_V4_MINIP, htonl(0x0a000009));
	n2 = mnl_attr_nest_start(nlh, CTA_NAT_PROTO);
	mnl_attr_put_u16(nlh, CTA_PROTONAT_PORT_MIN, htons(1024));
	mnl_attr_nest_end(nlh, n2);
	mnl_attr_nest_end(nlh, n1);
	n1 = mnl_attr_nest_start(nlh, CTA_NAT_SEQ_ADJ_ORIG);
	mnl_attr_put_u32(nlh, CTA_SEQADJ_CORRECTION_POS, 0);
	mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_BEFORE, 0);
	mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_AFTER, 0);
	mnl_attr_nest_end(nlh, n1);
	memcpy(seeds[4], nlh, seed_len[4] = nlh->nlmsg_len);
	/* EXP_NEW with a NAT part */
	nlh = req(IPCTNL_MSG_EXP_NEW, NLM_F_ACK | NLM_F_CREATE, AF_INET);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_NEW;
	put_tuple4(nlh, CTA_EXPECT_TUPLE, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 0, 50000);
	put_tuple4(nlh, CTA_EXPECT_MASK, "255.255.255.255", "255.255.255.255", IPPROTO_TCP, 0,
		   0xffff);
	put_tuple4(nlh, CTA_EXPECT_MASTER, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 40000, 21);
	mnl_attr_put_strz(nlh, CTA_EXPECT_HELP_NAME, "ftp");
	mnl_attr_put_strz(nlh, CTA_EXPECT_FN, "nat-follow-master");
	n1 = mnl_attr_nest_start(nlh, CTA_EXPECT_NAT);
	mnl_attr_put_u32(nlh, CTA_EXPECT_NAT_DIR, htonl(1));
	put_tuple4(nlh, CTA_EXPECT_NAT_TUPLE, "10.9.0.1", "0.0.0.0", IPPROTO_TCP, 50001, 0);
	mnl_attr_nest_end(nlh, n1);
	memcpy(seeds[5], nlh, seed_len[5] = nlh->nlmsg_len);

	for (unsigned int it = 0; it < 30000; it++) {
		unsigned int k = it % 6, flips;
		const size_t hdr = NLMSG_HDRLEN + sizeof(struct nfgenmsg);

		memcpy(rbuf, seeds[k], seed_len[k]);
		nlh = (struct nlmsghdr *)rbuf;
		rnd = rnd * 1103515245u + 12345u;
		flips = 1 + (rnd >> 28) % 4;
		for (unsigned int f = 0; f < flips; f++) {
			size_t at;

			rnd = rnd * 1103515245u + 12345u;
			at = hdr + (rnd >> 8) % (seed_len[k] - hdr);
			rnd = rnd * 1103515245u + 12345u;
			rbuf[at] = (char)(rnd >> 24);
		}
		if ((it & 7) == 7) { /* and shortened, as a message cut anywhere */
			rnd = rnd * 1103515245u + 12345u;
			nlh->nlmsg_len = (uint32_t)(hdr + (rnd >> 8) % (seed_len[k] - hdr));
		}
		{
			/* an exact-size copy: ASan sees any read past its end */
			struct nlmsghdr *exact = malloc(nlh->nlmsg_len);

			assert_non_null(exact);
			memcpy(exact, nlh, nlh->nlmsg_len);
			if ((exact->nlmsg_type >> 8) == NFNL_SUBSYS_CTNETLINK_EXP)
				ctl_ctnetlink_exp_rcv(&ctl, &sess, exact, &bad);
			else
				rcv(exact);
			free(exact);
		}
		if (n_sent > MAX_DGRAMS - 16 || n_used() < 4 || (it & 63) == 63) {
			const struct nlmsghdr *m[64];

			collect(m, 64); /* whole messages only */
			setup(NULL);
		}
	}
}

/* ctnetlink_dump_zone_id: CTA_ZONE after the tuples for a zone of both
 * directions, CTA_TUPLE_ZONE last in the one tuple of a directional zone */
static void test_zones(void **state)
{
	struct nftdp_ct_info *ci = add4("10.0.0.1", "10.0.0.9", IPPROTO_UDP, 1, 2, 0);
	const struct nlmsghdr *m;
	const struct nlattr *a, *last;
	char buf[1024];
	uint16_t ty[16];

	(void)state;
	ci->zone = ci->tuple[0].zone = ci->tuple[1].zone = 7;
	ctl_ctnetlink_fill_info(buf, 1, 4242, 0, ci, false);
	m = (const void *)buf;
	attr_types(m, ty, 16);
	assert_int_equal(ty[2], CTA_ZONE);
	assert_int_equal(ntohs(mnl_attr_get_u16(attr(m, CTA_ZONE))), 7);
	/* original direction only */
	ci->tuple[1].zone = 0;
	ctl_ctnetlink_fill_info(buf, 1, 4242, 0, ci, false);
	assert_null(attr(m, CTA_ZONE));
	last = NULL;
	mnl_attr_for_each_nested(a, attr(m, CTA_TUPLE_ORIG)) last = a;
	assert_int_equal(mnl_attr_get_type(last), CTA_TUPLE_ZONE);
	mnl_attr_for_each_nested(a, attr(m, CTA_TUPLE_REPLY)) last = a;
	assert_int_equal(mnl_attr_get_type(last), CTA_TUPLE_PROTO);
	/* a get by that tuple and its zone (CTA_TUPLE_ZONE in the request) */
	{
		struct nlmsghdr *nlh = req(IPCTNL_MSG_CT_GET, NLM_F_ACK, AF_INET);
		struct nlattr *n;
		char tmp[256];
		struct nlmsghdr *t = mnl_nlmsg_put_header(tmp);

		put_tuple4(t, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.9", IPPROTO_UDP, 1, 2);
		/* the same nest with the zone appended */
		n = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
		mnl_attr_for_each_nested(a, (const struct nlattr *)mnl_nlmsg_get_payload(t))
		    ctl_put_attr_copy(nlh, a);
		mnl_attr_put_u16(nlh, CTA_TUPLE_ZONE, htons(7));
		mnl_attr_nest_end(nlh, n);
		assert_int_equal(rcv(nlh), 0);
	}
}

/* without a table: the kernel without nf_conntrack_netlink */
static void test_no_table(void **state)
{
	(void)state;
	ctl.cfg.ct = NULL;
	assert_int_equal(rcv(req(IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC)), -EOPNOTSUPP);
	assert_int_equal(nftdp_ctl_ct_events(&ctl), 0);
	assert_int_equal(n_sent, 0);
}

/* IPCTNL_MSG_CT_NEW: every attribute parsed into struct nftdp_ct_change */
static void test_new_parse(void **state)
{
	struct nlmsghdr *nlh;
	struct nlattr *n, *m;
	uint8_t fl[2] = {IP_CT_TCP_FLAG_WINDOW_SCALE, 0xff}, lab[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint32_t a;

	(void)state;
	chg_rc = -EEXIST;
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.9.0.9", IPPROTO_TCP, 4000, 80);
	put_tuple4(nlh, CTA_TUPLE_REPLY, "10.0.0.2", "10.0.0.1", IPPROTO_TCP, 8080, 4000);
	mnl_attr_put_u32(nlh, CTA_STATUS, htonl(IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED));
	mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(300));
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(0x42));
	mnl_attr_put_u16(nlh, CTA_ZONE, htons(7));
	mnl_attr_put(nlh, CTA_LABELS, sizeof(lab), lab);
	n = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	m = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_WSCALE_ORIGINAL, 7);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_WSCALE_REPLY, 9);
	mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, 2, fl);
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, CTA_HELP);
	mnl_attr_put_strz(nlh, CTA_HELP_NAME, "ftp");
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, CTA_NAT_DST);
	inet_pton(AF_INET, "10.0.0.2", &a);
	mnl_attr_put_u32(nlh, CTA_NAT_V4_MINIP, a);
	m = mnl_attr_nest_start(nlh, CTA_NAT_PROTO);
	mnl_attr_put_u16(nlh, CTA_PROTONAT_PORT_MIN, htons(8080));
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, n);
	/* an FTP control connection whose client's PORT grew by 4 */
	n = mnl_attr_nest_start(nlh, CTA_NAT_SEQ_ADJ_ORIG);
	mnl_attr_put_u32(nlh, CTA_SEQADJ_CORRECTION_POS, htonl(0xfffffff0u));
	mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_BEFORE, htonl(0));
	mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_AFTER, htonl((uint32_t)-3));
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -EEXIST); /* the table's answer */
	assert_true(last_chg.has & NFTDP_CT_CHG_SEQADJ);
	assert_int_equal(last_chg.seqadj_dirs, 1);
	assert_int_equal(last_chg.seqadj[0].correction_pos, 0xfffffff0u);
	assert_int_equal(last_chg.seqadj[0].offset_before, 0);
	assert_int_equal(last_chg.seqadj[0].offset_after, -3);
	assert_int_equal(last_chg.has & (NFTDP_CT_CHG_CREATE | NFTDP_CT_CHG_EXCL),
			 NFTDP_CT_CHG_CREATE | NFTDP_CT_CHG_EXCL);
	assert_int_equal(last_chg.status, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED);
	assert_int_equal(last_chg.timeout_s, 300);
	assert_int_equal(last_chg.mark, 0x42);
	assert_int_equal(last_chg.mark_mask, 0);
	/* CTA_ZONE keys both directions */
	assert_int_equal(last_chg.zone_dir, NFTDP_VM_CT_ZONE_DIR_BOTH);
	assert_int_equal(last_chg.tuple[0].zone, 7);
	assert_int_equal(last_chg.tuple[1].zone, 7);
	assert_int_equal(ntohs(last_chg.tuple[1].sport), 8080);
	assert_int_equal(last_chg.labels_words, 2);
	assert_int_equal(last_chg.labels_err, 0);
	assert_memory_equal(last_chg.labels, lab, 8);
	assert_true(last_chg.has & NFTDP_CT_CHG_TCP_STATE);
	assert_int_equal(last_chg.tcp_state, TCP_CONNTRACK_ESTABLISHED);
	assert_true(last_chg.has & NFTDP_CT_CHG_TCP_WSCALE);
	assert_int_equal(last_chg.tcp_wscale[1], 9);
	assert_int_equal(last_chg.tcp_flags[0], IP_CT_TCP_FLAG_WINDOW_SCALE);
	assert_int_equal(last_chg.tcp_flags_mask[0], 0xff);
	assert_int_equal(last_chg.tcp_flags_mask[1], 0);
	assert_string_equal(last_chg.helper, "ftp");
	assert_true(last_chg.has & NFTDP_CT_CHG_NAT_DST);
	assert_false(last_chg.has & NFTDP_CT_CHG_NAT_SRC);
	assert_int_equal(last_chg.nat[NFTDP_CT_MANIP_DST].flags,
			 NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED);
	assert_int_equal(last_chg.nat[NFTDP_CT_MANIP_DST].min_addr.ip, a);
	assert_int_equal(last_chg.nat[NFTDP_CT_MANIP_DST].max_addr.ip, a);
	assert_int_equal(ntohs(last_chg.nat[NFTDP_CT_MANIP_DST].max_proto), 8080);
	/* a reply-direction zone keys the reply tuple only */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_UDP, 4000, 53);
	put_tuple4(nlh, CTA_TUPLE_REPLY, "10.0.0.2", "10.0.0.1", IPPROTO_UDP, 53, 4000);
	/* CTA_TUPLE_ZONE inside the reply nest, the message's last attribute */
	n = (struct nlattr *)((char *)nlh + nlh->nlmsg_len -
			      NLA_ALIGN(attr(nlh, CTA_TUPLE_REPLY)->nla_len));
	mnl_attr_put_u16(nlh, CTA_TUPLE_ZONE, htons(9));
	n->nla_len += 8;
	assert_int_equal(rcv(nlh), -EEXIST);
	assert_int_equal(last_chg.zone_dir, NFTDP_VM_CT_ZONE_DIR_REPL);
	assert_int_equal(last_chg.tuple[0].zone, 0);
	assert_int_equal(last_chg.tuple[1].zone, 9);
	assert_false(last_chg.has & NFTDP_CT_CHG_CREATE);
	/* labels that are no whole words: the table decides (create ignores) */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_UDP, 4000, 53);
	mnl_attr_put(nlh, CTA_LABELS, 3, lab);
	assert_int_equal(rcv(nlh), -EEXIST);
	assert_int_equal(last_chg.labels_err, -EINVAL);
	assert_int_equal(n_chg, 3);
}

/* CT_NEW's own errors, before the table sees the request */
static void test_new_malformed(void **state)
{
	struct nlmsghdr *nlh;
	struct nlattr *n, *m;
	char name[20];

	(void)state;
	/* a TCP state past TCP_CONNTRACK_MAX (nlattr_to_tcp) */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	n = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	m = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, TCP_CONNTRACK_MAX);
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -EINVAL);
	/* TCP flags shorter than struct nf_ct_tcp_flags: ERANGE */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	n = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	m = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, 1);
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -ERANGE);
	/* SCTP protoinfo needs the state and both tags */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_SCTP, 4000, 80);
	n = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	m = mnl_attr_nest_start(nlh, CTA_PROTOINFO_SCTP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_SCTP_STATE, 3);
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -EINVAL);
	/* a helper without a name, one not NUL-terminated, one too long */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	n = mnl_attr_nest_start(nlh, CTA_HELP);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -EINVAL);
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	n = mnl_attr_nest_start(nlh, CTA_HELP);
	mnl_attr_put(nlh, CTA_HELP_NAME, 3, "ftp");
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -EINVAL);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	n = mnl_attr_nest_start(nlh, CTA_HELP);
	mnl_attr_put_strz(nlh, CTA_HELP_NAME, name);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -ERANGE);
	/* a sequence adjustment needs all three parts (an update writes
	 * those before the missing one: the table's part) */
	for (int miss = 0; miss < 3; miss++) {
		nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK | NLM_F_CREATE, AF_INET);
		put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
		n = mnl_attr_nest_start(nlh, CTA_NAT_SEQ_ADJ_REPLY);
		for (int i = 0; i < 3; i++)
			if (i != miss)
				mnl_attr_put_u32(nlh, CTA_SEQADJ_CORRECTION_POS + i, htonl(5));
		mnl_attr_nest_end(nlh, n);
		assert_int_equal(rcv(nlh), -EINVAL);
	}
	/* a NAT address shorter than its type when creating */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK | NLM_F_CREATE, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	n = mnl_attr_nest_start(nlh, CTA_NAT_SRC);
	mnl_attr_put_u16(nlh, CTA_NAT_V4_MINIP, 1);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(rcv(nlh), -ERANGE);
	/* none reached the table */
	assert_int_equal(n_chg, 0);
	assert_int_equal(n_ev, 0);
}

/* CT_NEW on an existing entry: its events carry the requester's port id */
static void test_new_update_event(void **state)
{
	struct nlmsghdr *nlh;
	const struct nlmsghdr *ev;

	(void)state;
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_REPLY, "10.0.0.3", "10.0.0.1", IPPROTO_UDP, 53, 5000);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(9));
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(tab[1].ci.mark, 9);
	assert_int_equal(n_sent, 1);
	assert_int_equal(sent[0].group, NFNLGRP_CONNTRACK_UPDATE);
	ev = (const void *)sent[0].buf;
	assert_int_equal(ev->nlmsg_pid, 4242);
	assert_int_equal(attr_u32(ev, CTA_MARK), 9);
	/* a missing entry without NLM_F_CREATE: the table's ENOENT */
	nlh = req(IPCTNL_MSG_CT_NEW, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.99", IPPROTO_UDP, 5000, 53);
	assert_int_equal(rcv(nlh), -ENOENT);
	assert_int_equal(n_sent, 1);
}

/* CTRZERO: counters reported, then zeroed, for what the filter picks */
static void test_ctrzero(void **state)
{
	const struct nlmsghdr *msgs[16];
	struct nlmsghdr *nlh;
	const struct nlattr *c;
	unsigned int n;

	(void)state;
	ops.acct = true;
	for (unsigned int i = 0; i < n_tab; i++) {
		tab[i].ci.packets[0] = 3;
		tab[i].ci.bytes[0] = 300;
	}
	/* a dump of mark 7 only: that entry is zeroed, the others are not */
	nlh = req(IPCTNL_MSG_CT_GET_CTRZERO, NLM_F_DUMP, AF_INET);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(7));
	assert_int_equal(rcv(nlh), -EINTR);
	n = collect(msgs, 16);
	assert_int_equal(n, 2); /* the entry, NLMSG_DONE */
	assert_int_equal(msgs[0]->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW);
	c = attr(msgs[0], CTA_COUNTERS_ORIG);
	assert_non_null(c);
	assert_int_equal(be64toh(mnl_attr_get_u64(mnl_attr_get_payload(c))), 3);
	assert_int_equal(tab[1].ci.packets[0], 0);
	assert_int_equal(tab[1].ci.bytes[0], 0);
	assert_int_equal(tab[0].ci.packets[0], 3);
	/* a get zeroes its entry */
	n_sent = 0;
	nlh = req(IPCTNL_MSG_CT_GET_CTRZERO, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	assert_int_equal(rcv(nlh), 0);
	n = collect(msgs, 16);
	assert_int_equal(n, 1);
	c = attr(msgs[0], CTA_COUNTERS_ORIG);
	assert_int_equal(be64toh(mnl_attr_get_u64(mnl_attr_get_payload(c))), 3);
	assert_int_equal(tab[0].ci.packets[0], 0);
	/* without accounting there is nothing to zero (no acct extension) */
	ops.acct = false;
	tab[0].ci.packets[0] = 4;
	nlh = req(IPCTNL_MSG_CT_GET_CTRZERO, NLM_F_ACK, AF_INET);
	put_tuple4(nlh, CTA_TUPLE_ORIG, "10.0.0.1", "10.0.0.2", IPPROTO_TCP, 4000, 80);
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(tab[0].ci.packets[0], 4);
}

static struct nlmsghdr *exp_req(uint8_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = req(type, flags, AF_INET);

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | type;
	return nlh;
}

static int exp_rcv(const struct nlmsghdr *nlh)
{
	bad = NULL;
	return ctl_ctnetlink_exp_rcv(&ctl, &sess, nlh, &bad);
}

/* conntrack -G/-D/-I expect: ctnetlink_get/del/new_expect's attributes */
static void test_exp_requests(void **state)
{
	const struct nlmsghdr *m[4];
	struct nlmsghdr *nlh;
	struct nlattr *n;

	(void)state;
	/* get: a tuple (or the master's), else EINVAL; the zone keys it */
	assert_int_equal(exp_rcv(exp_req(IPCTNL_MSG_EXP_GET, NLM_F_ACK)), -EINVAL);
	nlh = exp_req(IPCTNL_MSG_EXP_GET, NLM_F_ACK);
	put_tuple4(nlh, CTA_EXPECT_MASTER, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 40000, 21);
	mnl_attr_put_u16(nlh, CTA_EXPECT_ZONE, htons(3));
	assert_int_equal(exp_rcv(nlh), -ENOENT);
	assert_int_equal(ntohs(last_exp_t.dport), 21);
	assert_int_equal(last_exp_t.zone, 3);
	exp_exists = true;
	nlh = exp_req(IPCTNL_MSG_EXP_GET, NLM_F_ACK);
	put_tuple4(nlh, CTA_EXPECT_TUPLE, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 1, 50000);
	assert_int_equal(exp_rcv(nlh), 0);
	assert_int_equal(collect(m, 4), 1);
	assert_int_equal(m[0]->nlmsg_type, (NFNL_SUBSYS_CTNETLINK_EXP << 8) | IPCTNL_MSG_EXP_NEW);
	/* delete by tuple, by helper name, all */
	nlh = exp_req(IPCTNL_MSG_EXP_DELETE, NLM_F_ACK);
	put_tuple4(nlh, CTA_EXPECT_TUPLE, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 1, 50000);
	assert_int_equal(exp_rcv(nlh), 0);
	nlh = exp_req(IPCTNL_MSG_EXP_DELETE, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTA_EXPECT_HELP_NAME, "ftp");
	assert_int_equal(exp_rcv(nlh), 0);
	assert_string_equal(last_flush, "ftp");
	nlh = exp_req(IPCTNL_MSG_EXP_DELETE, NLM_F_ACK);
	mnl_attr_put(nlh, CTA_EXPECT_HELP_NAME, 3, "ftp"); /* not NUL-terminated */
	assert_int_equal(exp_rcv(nlh), -EINVAL);
	assert_int_equal(exp_rcv(exp_req(IPCTNL_MSG_EXP_DELETE, NLM_F_ACK)), 0);
	assert_string_equal(last_flush, "(all)");
	/* new: tuple, mask and master are required */
	nlh = exp_req(IPCTNL_MSG_EXP_NEW, NLM_F_ACK | NLM_F_CREATE);
	put_tuple4(nlh, CTA_EXPECT_TUPLE, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 0, 50000);
	assert_int_equal(exp_rcv(nlh), -EINVAL);
	/* an existing one: EEXIST with EXCL, else its timeout changes */
	put_tuple4(nlh, CTA_EXPECT_MASK, "255.255.255.255", "255.255.255.255", IPPROTO_TCP, 0,
		   0xffff);
	put_tuple4(nlh, CTA_EXPECT_MASTER, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 40000, 21);
	nlh->nlmsg_flags |= NLM_F_EXCL;
	assert_int_equal(exp_rcv(nlh), -EEXIST);
	nlh->nlmsg_flags &= (uint16_t)~NLM_F_EXCL;
	mnl_attr_put_u32(nlh, CTA_EXPECT_TIMEOUT, htonl(77));
	assert_int_equal(exp_rcv(nlh), 0);
	/* none: ENOENT without CREATE, else the table gets it parsed */
	exp_exists = false;
	nlh->nlmsg_flags &= (uint16_t)~NLM_F_CREATE;
	assert_int_equal(exp_rcv(nlh), -ENOENT);
	nlh->nlmsg_flags |= NLM_F_CREATE;
	mnl_attr_put_strz(nlh, CTA_EXPECT_HELP_NAME, "ftp");
	mnl_attr_put_u32(nlh, CTA_EXPECT_FLAGS, htonl(1));
	mnl_attr_put_strz(nlh, CTA_EXPECT_FN, "nat-follow-master");
	n = mnl_attr_nest_start(nlh, CTA_EXPECT_NAT);
	mnl_attr_put_u32(nlh, CTA_EXPECT_NAT_DIR, htonl(1));
	put_tuple4(nlh, CTA_EXPECT_NAT_TUPLE, "10.9.0.1", "0.0.0.0", IPPROTO_TCP, 50001, 0);
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(exp_rcv(nlh), 0);
	assert_string_equal(last_exp.helper, "ftp");
	assert_int_equal(last_exp.flags, 1);
	assert_true(last_exp.follow);
	assert_false(last_exp.fn_unknown);
	assert_int_equal(last_exp.nat_dir, 1);
	assert_int_equal(ntohs(last_exp.nat_port), 50001);
	assert_int_equal(ntohs(last_exp.master.dport), 21);
	assert_int_equal(last_exp.mask.sport, 0);
	assert_int_equal(last_exp.mask.src.ip, 0xffffffffu);
	/* an expectation NAT without its tuple */
	nlh = exp_req(IPCTNL_MSG_EXP_NEW, NLM_F_ACK | NLM_F_CREATE);
	put_tuple4(nlh, CTA_EXPECT_TUPLE, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 0, 50000);
	put_tuple4(nlh, CTA_EXPECT_MASK, "255.255.255.255", "255.255.255.255", IPPROTO_TCP, 0,
		   0xffff);
	put_tuple4(nlh, CTA_EXPECT_MASTER, "10.1.0.1", "10.2.0.1", IPPROTO_TCP, 40000, 21);
	n = mnl_attr_nest_start(nlh, CTA_EXPECT_NAT);
	mnl_attr_put_u32(nlh, CTA_EXPECT_NAT_DIR, htonl(1));
	mnl_attr_nest_end(nlh, n);
	assert_int_equal(exp_rcv(nlh), -EINVAL);
	assert_int_equal(n_exp_calls, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_dump_all, setup),
	    cmocka_unit_test_setup(test_exp_dump, setup),
	    cmocka_unit_test_setup(test_exp_dump_pptp_nat, setup),
	    cmocka_unit_test_setup(test_dump_icmp_tuple, setup),
	    cmocka_unit_test_setup(test_dump_filters, setup),
	    cmocka_unit_test_setup(test_dump_big, setup),
	    cmocka_unit_test_setup(test_get, setup),
	    cmocka_unit_test_setup(test_malformed, setup),
	    cmocka_unit_test_setup(test_delete, setup),
	    cmocka_unit_test_setup(test_flush, setup),
	    cmocka_unit_test_setup(test_stats, setup),
	    cmocka_unit_test_setup(test_events, setup),
	    cmocka_unit_test_setup(test_events_blocked, setup),
	    cmocka_unit_test_setup(test_exp_events, setup),
	    cmocka_unit_test_setup(test_sctp_protoinfo, setup),
	    cmocka_unit_test_setup(test_seqadj_dump, setup),
	    cmocka_unit_test_setup(test_synproxy_dump, setup),
	    cmocka_unit_test_setup(test_zones, setup),
	    cmocka_unit_test_setup(test_mutations, setup),
	    cmocka_unit_test_setup(test_no_table, setup),
	    cmocka_unit_test_setup(test_new_parse, setup),
	    cmocka_unit_test_setup(test_new_malformed, setup),
	    cmocka_unit_test_setup(test_new_update_event, setup),
	    cmocka_unit_test_setup(test_ctrzero, setup),
	    cmocka_unit_test_setup(test_exp_requests, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
