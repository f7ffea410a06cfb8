// SPDX-License-Identifier: BSD-3-Clause
/*
 * nfnetlink_log (control/nflog.c, vm/nflog.c): the NFULNL_MSG_CONFIG
 * state machine with nfulnl_recv_config's errnos, instances going with
 * their socket, the NFULNL_MSG_PACKET layout of __build_packet_message,
 * batching by queue threshold and flush timeout (NLMSG_DONE after two or
 * more), and the worker rings (unbound groups record nothing, a full ring
 * loses and counts events).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libmnl/libmnl.h>
#include <linux/if_arp.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>

#include "control_priv.h"
#include "nftdp_vm.h"
#include "vm_priv.h"

#define ENOTSUPP 524

/* control/nflog.c's server calls, against fake sessions */
struct ctl_session {
	uint32_t portid;
	unsigned int n_dgrams;
	char last[65536 * 2];
	size_t last_len;
	unsigned int msgs_in_last;
};

uint32_t ctl_session_portid(const struct ctl_session *s)
{
	return s->portid;
}

int ctl_session_send(struct ctl_session *s, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh;
	int left = (int)len;

	assert_true(len <= sizeof(s->last));
	memcpy(s->last, buf, len);
	s->last_len = len;
	s->n_dgrams++;
	s->msgs_in_last = 0;
	for (nlh = buf; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		s->msgs_in_last++;
	assert_int_equal(left, 0);
	return 0;
}

struct world {
	struct nftdp_vm_state *st;
	struct nftdp_ctl ctl;
	struct ctl_session a, b;
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct nftdp_vm_state_config cfg = {
	    .n_workers = 1, .max_counters = 64, .max_cells = 64, .nflog_ring_size = 8192};

	assert_int_equal(nftdp_vm_state_create(&cfg, &w->st), 0);
	w->ctl.cfg.vm_state = w->st;
	w->a.portid = 100;
	w->b.portid = 200;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	ctl_nflog_destroy(&w->ctl);
	nftdp_vm_state_destroy(w->st);
	free(w);
	return 0;
}

/* one NFULNL_MSG_CONFIG for group, with a command (0: none) and optional
 * attributes; returns what nfulnl_recv_config returns */
struct cfg {
	uint8_t family; /* 0: AF_INET */
	/* each value plus one (V()): 0 leaves the attribute out */
	int cmd, mode;
	uint32_t range;
	int64_t qthresh, timeout, nlbufsiz;
	int32_t flags;
	bool short_mode;
};

static int config(struct world *w, struct ctl_session *s, uint16_t group, struct cfg c,
		  const struct nlattr **bad)
{
	static alignas(8) char buf[512]; /* bad points into it after the call */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	const struct nlattr *b = NULL;
	int err;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = c.family ? c.family : AF_INET;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(group);
	if (c.cmd) {
		struct nfulnl_msg_config_cmd cmd = {.command = (uint8_t)(c.cmd - 1)};

		mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(cmd), &cmd);
	}
	if (c.mode) {
		struct nfulnl_msg_config_mode m = {.copy_range = htonl(c.range),
						   .copy_mode = (uint8_t)(c.mode - 1)};

		mnl_attr_put(nlh, NFULA_CFG_MODE, c.short_mode ? 4 : sizeof(m), &m);
	}
	if (c.nlbufsiz)
		mnl_attr_put_u32(nlh, NFULA_CFG_NLBUFSIZ, htonl((uint32_t)(c.nlbufsiz - 1)));
	if (c.timeout)
		mnl_attr_put_u32(nlh, NFULA_CFG_TIMEOUT, htonl((uint32_t)(c.timeout - 1)));
	if (c.qthresh)
		mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl((uint32_t)(c.qthresh - 1)));
	if (c.flags)
		mnl_attr_put_u16(nlh, NFULA_CFG_FLAGS, htons((uint16_t)(c.flags - 1)));
	err = ctl_nflog_rcv(&w->ctl, s, nlh, &b);
	if (bad)
		*bad = b;
	return err;
}

#define CFG(...) ((struct cfg){__VA_ARGS__})
#define V(x) ((x) + 1)

static void test_config_errnos(void **state)
{
	struct world *w = *state;
	const struct nlattr *bad;

	/* nothing bound yet: config without a command, unbind */
	assert_int_equal(config(w, &w->a, 1, CFG(.qthresh = V(1)), NULL), -ENODEV);
	assert_int_equal(config(w, &w->a, 1, CFG(.cmd = V(NFULNL_CFG_CMD_UNBIND)), NULL), -ENODEV);
	/* commands without queue context */
	assert_int_equal(config(w, &w->a, 0, CFG(.cmd = V(NFULNL_CFG_CMD_PF_UNBIND)), NULL), 0);
	assert_int_equal(config(w, &w->a, 0, CFG(.cmd = V(NFULNL_CFG_CMD_PF_BIND)), NULL), 0);
	assert_int_equal(
	    config(w, &w->a, 0, CFG(.family = 13, .cmd = V(NFULNL_CFG_CMD_PF_BIND)), NULL),
	    -EINVAL);
	assert_false(nftdp_vm_nflog_bound(w->st, 1));

	assert_int_equal(config(w, &w->a, 1, CFG(.cmd = V(NFULNL_CFG_CMD_BIND)), NULL), 0);
	assert_true(nftdp_vm_nflog_bound(w->st, 1));
	assert_false(nftdp_vm_nflog_bound(w->st, 2));
	assert_false(nftdp_vm_nflog_bound(w->st, 257));
	/* bound again by its owner: EBUSY; by another port id: EPERM */
	assert_int_equal(config(w, &w->a, 1, CFG(.cmd = V(NFULNL_CFG_CMD_BIND)), NULL), -EBUSY);
	assert_int_equal(config(w, &w->b, 1, CFG(.cmd = V(NFULNL_CFG_CMD_BIND)), NULL), -EPERM);
	assert_int_equal(config(w, &w->b, 1, CFG(.qthresh = V(5)), NULL), -EPERM);
	assert_int_equal(config(w, &w->b, 1, CFG(.cmd = V(NFULNL_CFG_CMD_UNBIND)), NULL), -EPERM);
	/* an unknown command */
	assert_int_equal(config(w, &w->a, 1, CFG(.cmd = V(9)), NULL), -ENOTSUPP);
	assert_int_equal(config(w, &w->a, 7, CFG(.cmd = V(9)), NULL), -ENOTSUPP);
	/* the policy: short attributes ERANGE, with the attribute for the
	 * extended ack */
	assert_int_equal(config(w, &w->a, 1, CFG(.mode = V(2), .short_mode = true), &bad), -ERANGE);
	assert_non_null(bad);
	assert_int_equal(mnl_attr_get_type(bad), NFULA_CFG_MODE);
	/* 6.18 takes reserved flag bits (differential 250) */
	assert_int_equal(config(w, &w->a, 1, CFG(.flags = V(8)), &bad), 0);
	/* out-of-range values are ignored, as the kernel ignores them */
	assert_int_equal(config(w, &w->a, 1, CFG(.mode = V(7), .nlbufsiz = V(1)), NULL), 0);
	assert_int_equal(
	    config(w, &w->a, 1,
		   CFG(.mode = V(NFULNL_COPY_PACKET), .range = 100, .flags = V(7), .qthresh = V(1)),
		   NULL),
	    0);

	/* the socket closes: its instances go, another may bind */
	ctl_nflog_session_closed(&w->ctl, &w->a);
	assert_false(nftdp_vm_nflog_bound(w->st, 1));
	assert_int_equal(config(w, &w->b, 1, CFG(.cmd = V(NFULNL_CFG_CMD_BIND)), NULL), 0);
	assert_int_equal(config(w, &w->b, 1, CFG(.cmd = V(NFULNL_CFG_CMD_UNBIND)), NULL), 0);
	assert_false(nftdp_vm_nflog_bound(w->st, 1));
	assert_int_equal(config(w, &w->b, 1, CFG(.qthresh = V(1)), NULL), -ENODEV);
}

static void test_other_messages(void **state)
{
	struct world *w = *state;
	alignas(8) char buf[64];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	const struct nlattr *bad;

	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nfgenmsg));
	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
	assert_int_equal(ctl_nflog_rcv(&w->ctl, &w->a, nlh, &bad), -ENOTSUPP);
	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_MAX;
	assert_int_equal(ctl_nflog_rcv(&w->ctl, &w->a, nlh, &bad), -EINVAL);
}

/* a forwarded TCP SYN at ip forward: dp0 (1) -> dp1 (2), mark 7 */
static const uint8_t frame[] = {
    0x02, 0,	0,   0,	 0, 0x10, 0x02, 0, 0,  0, 1, 0x10, 0x08, 0x00, /* eth */
    0x45, 0,	0,   40, 0, 1,	  0,	0, 63, 6, 0, 0,	   192,	 168,
    1,	  1,	172, 16, 0, 1, /* ip */
    0x03, 0xe8, 0,   80, 0, 0,	  0,	1, 0,  0, 0, 0,	   0x50, 0x02,
    0x20, 0,	0,   0,	 0, 0, /* tcp */
};

static void record(struct world *w, uint16_t group, const char *prefix, uint32_t copy_len,
		   uint16_t qthreshold, uint8_t hook)
{
	static uint8_t data[sizeof(frame)];
	struct nftdp_vm_pkt pkt;
	struct nftdp_vm_ctx ctx = {.worker = 0, .state = w->st, .now_real_ns = 1234567891000ull};
	struct nftdp_vm_nflog_params p = {
	    .prefix = prefix, .copy_len = copy_len, .group = group, .qthreshold = qthreshold};

	memcpy(data, frame, sizeof(frame));
	nftdp_vm_pkt_init(&pkt, data, sizeof(data), 0, 14);
	nftdp_vm_pkt_parse_ip(&pkt);
	pkt.hook = hook;
	pkt.iif = 1;
	pkt.oif = 2;
	pkt.iiftype = pkt.oiftype = ARPHRD_ETHER;
	pkt.mark = 7;
	nftdp_vm_nflog_record(&p, &pkt, &ctx);
}

struct seen {
	const struct nlattr *tb[NFULA_MAX + 1];
	uint16_t order[NFULA_MAX + 1];
	unsigned int n;
};

static int attr_cb(const struct nlattr *a, void *data)
{
	struct seen *s = data;

	assert_true(mnl_attr_get_type(a) <= NFULA_MAX);
	s->tb[mnl_attr_get_type(a)] = a;
	s->order[s->n++] = mnl_attr_get_type(a);
	return MNL_CB_OK;
}

static void test_packet_layout(void **state)
{
	struct world *w = *state;
	const struct nlmsghdr *nlh = (const void *)w->a.last;
	const struct nfgenmsg *nfg;
	const struct nfulnl_msg_packet_hdr *ph;
	const struct nfulnl_msg_packet_hw *hw;
	const struct nfulnl_msg_packet_timestamp *ts;
	struct seen s = {.n = 0};
	static const uint16_t order[] = {NFULA_PACKET_HDR,     NFULA_PREFIX, NFULA_IFINDEX_INDEV,
					 NFULA_IFINDEX_OUTDEV, NFULA_MARK,   NFULA_HWADDR,
					 NFULA_HWTYPE,	       NFULA_HWLEN,  NFULA_HWHEADER,
					 NFULA_TIMESTAMP,      NFULA_SEQ,    NFULA_SEQ_GLOBAL,
					 NFULA_PAYLOAD};

	assert_int_equal(config(w, &w->a, 5,
				CFG(.cmd = V(NFULNL_CFG_CMD_BIND), .qthresh = V(1),
				    .flags = V(NFULNL_CFG_F_SEQ | NFULNL_CFG_F_SEQ_GLOBAL)),
				NULL),
			 0);
	record(w, 5, "pfx ", 24, 0, NF_INET_FORWARD);
	record(w, 6, "", UINT32_MAX, 0, NF_INET_FORWARD); /* nobody: dropped */
	assert_int_equal(nftdp_ctl_nflog_events(&w->ctl), 2);
	assert_int_equal(w->a.n_dgrams, 1);
	assert_int_equal(w->a.msgs_in_last, 1);
	assert_int_equal(nlh->nlmsg_type, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET);
	assert_int_equal(nlh->nlmsg_flags, 0);
	assert_int_equal(nlh->nlmsg_seq, 0);
	assert_int_equal(nlh->nlmsg_pid, 0);
	nfg = mnl_nlmsg_get_payload(nlh);
	assert_int_equal(nfg->nfgen_family, NFPROTO_IPV4);
	assert_int_equal(ntohs(nfg->res_id), 5);
	assert_int_equal(mnl_attr_parse(nlh, sizeof(*nfg), attr_cb, &s), MNL_CB_OK);
	assert_int_equal(s.n, sizeof(order) / sizeof(order[0]));
	for (unsigned int i = 0; i < s.n; i++)
		assert_int_equal(s.order[i], order[i]);
	ph = mnl_attr_get_payload(s.tb[NFULA_PACKET_HDR]);
	assert_int_equal(ntohs(ph->hw_protocol), 0x0800);
	assert_int_equal(ph->hook, NF_INET_FORWARD);
	assert_int_equal(mnl_attr_get_payload_len(s.tb[NFULA_PREFIX]), 5);
	assert_string_equal(mnl_attr_get_str(s.tb[NFULA_PREFIX]), "pfx ");
	assert_int_equal(ntohl(mnl_attr_get_u32(s.tb[NFULA_IFINDEX_INDEV])), 1);
	assert_int_equal(ntohl(mnl_attr_get_u32(s.tb[NFULA_IFINDEX_OUTDEV])), 2);
	assert_int_equal(ntohl(mnl_attr_get_u32(s.tb[NFULA_MARK])), 7);
	hw = mnl_attr_get_payload(s.tb[NFULA_HWADDR]);
	assert_int_equal(ntohs(hw->hw_addrlen), 6);
	assert_memory_equal(hw->hw_addr, frame + 6, 6);
	assert_int_equal(ntohs(mnl_attr_get_u16(s.tb[NFULA_HWTYPE])), ARPHRD_ETHER);
	assert_int_equal(ntohs(mnl_attr_get_u16(s.tb[NFULA_HWLEN])), 14);
	assert_memory_equal(mnl_attr_get_payload(s.tb[NFULA_HWHEADER]), frame, 14);
	/* its padding is zero, as nla_put leaves it */
	assert_int_equal(((const uint8_t *)mnl_attr_get_payload(s.tb[NFULA_HWHEADER]))[14], 0);
	assert_int_equal(((const uint8_t *)mnl_attr_get_payload(s.tb[NFULA_HWHEADER]))[15], 0);
	ts = mnl_attr_get_payload(s.tb[NFULA_TIMESTAMP]);
	assert_int_equal(be64toh(ts->sec), 1234);
	assert_int_equal(be64toh(ts->usec), 567891);
	assert_int_equal(ntohl(mnl_attr_get_u32(s.tb[NFULA_SEQ])), 0);
	assert_int_equal(ntohl(mnl_attr_get_u32(s.tb[NFULA_SEQ_GLOBAL])), 1);
	/* snaplen 24 of a 40-byte packet, from the network header */
	assert_int_equal(mnl_attr_get_payload_len(s.tb[NFULA_PAYLOAD]), 24);
	assert_memory_equal(mnl_attr_get_payload(s.tb[NFULA_PAYLOAD]), frame + 14, 24);

	/* postrouting: no timestamp; copy mode meta: no payload */
	assert_int_equal(config(w, &w->a, 5, CFG(.mode = V(NFULNL_COPY_META), .flags = V(0)), NULL),
			 0);
	record(w, 5, "", UINT32_MAX, 0, NF_INET_POST_ROUTING);
	assert_int_equal(nftdp_ctl_nflog_events(&w->ctl), 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(mnl_attr_parse(nlh, sizeof(*nfg), attr_cb, &s), MNL_CB_OK);
	assert_null(s.tb[NFULA_TIMESTAMP]);
	assert_null(s.tb[NFULA_PAYLOAD]);
	assert_null(s.tb[NFULA_SEQ]);
	assert_int_equal(mnl_attr_get_payload_len(s.tb[NFULA_PREFIX]), 1);
}

static void test_batching(void **state)
{
	struct world *w = *state;
	const struct nlmsghdr *nlh;
	int left;

	assert_int_equal(
	    config(w, &w->a, 9, CFG(.cmd = V(NFULNL_CFG_CMD_BIND), .qthresh = V(3)), NULL), 0);
	/* two messages wait for the threshold or the timer (1 s) */
	record(w, 9, "", UINT32_MAX, 0, NF_INET_FORWARD);
	record(w, 9, "", UINT32_MAX, 0, NF_INET_FORWARD);
	assert_int_equal(nftdp_ctl_nflog_events(&w->ctl), 2);
	assert_int_equal(w->a.n_dgrams, 0);
	/* the third fills the queue: three messages and NLMSG_DONE */
	record(w, 9, "", UINT32_MAX, 0, NF_INET_FORWARD);
	assert_int_equal(nftdp_ctl_nflog_events(&w->ctl), 1);
	assert_int_equal(w->a.n_dgrams, 1);
	assert_int_equal(w->a.msgs_in_last, 4);
	left = (int)w->a.last_len;
	nlh = (const void *)w->a.last;
	for (int i = 0; i < 3; i++)
		nlh = mnl_nlmsg_next(nlh, &left);
	assert_int_equal(nlh->nlmsg_type, NLMSG_DONE);
	assert_int_equal(nlh->nlmsg_flags, 0);
	assert_int_equal(nlh->nlmsg_len, NLMSG_LENGTH(sizeof(struct nfgenmsg)));
	assert_int_equal(ntohs(((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->res_id), 9);

	/* the rule's queue-threshold 1 overrides the instance's 3 */
	record(w, 9, "", UINT32_MAX, 1, NF_INET_FORWARD);
	assert_int_equal(nftdp_ctl_nflog_events(&w->ctl), 1);
	assert_int_equal(w->a.n_dgrams, 2);
	assert_int_equal(w->a.msgs_in_last, 1);

	/* a timeout of 0: the next poll flushes one message, no DONE */
	assert_int_equal(config(w, &w->a, 9, CFG(.timeout = V(0)), NULL), 0);
	record(w, 9, "", UINT32_MAX, 0, NF_INET_FORWARD);
	nftdp_ctl_nflog_events(&w->ctl);
	if (w->a.n_dgrams == 2)
		nftdp_ctl_nflog_events(&w->ctl);
	assert_int_equal(w->a.n_dgrams, 3);
	assert_int_equal(w->a.msgs_in_last, 1);

	/* unbind flushes what waits */
	assert_int_equal(config(w, &w->a, 9, CFG(.timeout = V(1000)), NULL), 0);
	record(w, 9, "", UINT32_MAX, 0, NF_INET_FORWARD);
	nftdp_ctl_nflog_events(&w->ctl);
	assert_int_equal(w->a.n_dgrams, 3);
	assert_int_equal(config(w, &w->a, 9, CFG(.cmd = V(NFULNL_CFG_CMD_UNBIND)), NULL), 0);
	assert_int_equal(w->a.n_dgrams, 4);

	/* a full buffer (nlbufsiz) is sent before the message that does not fit */
	assert_int_equal(
	    config(w, &w->a, 9, CFG(.cmd = V(NFULNL_CFG_CMD_BIND), .qthresh = V(1000)), NULL), 0);
	for (int i = 0; i < 40; i++) {
		record(w, 9, "", UINT32_MAX, 0, NF_INET_FORWARD);
		nftdp_ctl_nflog_events(&w->ctl);
	}
	assert_int_equal(w->a.n_dgrams, 5);
	assert_true(w->a.last_len <= 3776);
	assert_true(w->a.msgs_in_last > 10);
}

static void test_ring_full(void **state)
{
	struct world *w = *state;
	unsigned int n = 0;

	assert_int_equal(config(w, &w->a, 3, CFG(.cmd = V(NFULNL_CFG_CMD_BIND)), NULL), 0);
	/* 8192-byte ring, about 150 bytes a record */
	for (int i = 0; i < 100; i++)
		record(w, 3, "", UINT32_MAX, 0, NF_INET_FORWARD);
	assert_true(nftdp_vm_nflog_lost(w->st) > 0);
	n = nftdp_ctl_nflog_events(&w->ctl);
	assert_int_equal(n + nftdp_vm_nflog_lost(w->st), 100);
	/* the ring wraps: still whole records */
	for (int r = 0; r < 10; r++) {
		for (int i = 0; i < 17; i++)
			record(w, 3, "wrap", UINT32_MAX, 0, NF_INET_FORWARD);
		assert_int_equal(nftdp_ctl_nflog_events(&w->ctl), 17);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_config_errnos, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_other_messages, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_packet_layout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batching, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ring_full, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
