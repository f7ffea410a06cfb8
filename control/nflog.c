// SPDX-License-Identifier: BSD-3-Clause
/*
 * NFNL_SUBSYS_ULOG: nfnetlink_log (net/netfilter/nfnetlink_log.c). A
 * listener (ulogd2, libnetfilter_log, a raw socket) binds a group with
 * NFULNL_MSG_CONFIG; `log group N` events that workers record (vm/nflog.c)
 * are drained here and built into NFULNL_MSG_PACKET messages, batched per
 * instance as nfulnl_log_packet batches them (qthreshold, flush timeout,
 * a buffer of nlbufsiz) and unicast to the instance's port id. The
 * instance goes away with its socket (nfulnl_rcv_nl_event).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/if_arp.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>

#include "control_priv.h"
#include "nftdp_vm.h"

#define ENOTSUPP 524 /* the kernel's internal errno, as nfulnl returns it */

#define NFULNL_COPY_DISABLED 0xff
#define NFULNL_NLBUFSIZ_DEFAULT 3776u /* NLMSG_GOODSIZE: SKB_WITH_OVERHEAD(4096) */
#define NFULNL_TIMEOUT_DEFAULT 100u   /* 1/100 s */
#define NFULNL_QTHRESH_DEFAULT 100u
#define NFULNL_COPY_RANGE_MAX (0xffffu - NLA_HDRLEN)
#define SKB_SHINFO_SIZE 320u /* SKB_DATA_ALIGN(sizeof(struct skb_shared_info)), x86-64 */
#define ETH_HLEN_ 14u

#define INSTANCE_BUCKETS 16

struct ctl_nflog_inst {
	struct ctl_nflog_inst *next;
	struct ctl_session *s;
	uint32_t peer_portid;
	uint16_t group_num;
	uint16_t flags;
	uint8_t copy_mode;
	uint32_t copy_range;
	uint32_t flushtimeout; /* 1/100 s */
	uint32_t nlbufsiz;
	uint32_t qthreshold;
	uint32_t seq;
	/* the pending skb: whole messages, qlen of them, room for tailroom */
	char *skb;
	size_t len, tailroom;
	unsigned int qlen;
	bool timer;
	uint64_t expires_ns;
};

struct ctl_nflog {
	struct ctl_nflog_inst *table[INSTANCE_BUCKETS];
	uint32_t global_seq;
	unsigned int n;
};

static unsigned int instance_hashfn(uint16_t group_num)
{
	return (group_num & 0xff) % INSTANCE_BUCKETS;
}

static struct ctl_nflog *nflog_of(struct nftdp_ctl *ctl)
{
	if (!ctl->nflog)
		ctl->nflog = calloc(1, sizeof(*ctl->nflog));
	return ctl->nflog;
}

static struct ctl_nflog_inst *instance_lookup(const struct ctl_nflog *log, uint16_t group_num)
{
	struct ctl_nflog_inst *inst;

	if (!log)
		return NULL;
	for (inst = log->table[instance_hashfn(group_num)]; inst; inst = inst->next)
		if (inst->group_num == group_num)
			return inst;
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* __nfulnl_send: the batch in one datagram, NLMSG_DONE after two or more */
static void nfulnl_send(struct ctl_nflog_inst *inst)
{
	if (inst->qlen > 1) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)(void *)(inst->skb + inst->len);
		struct nfgenmsg *nfg;

		nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*nfg));
		nlh->nlmsg_type = NLMSG_DONE;
		nlh->nlmsg_flags = 0;
		nlh->nlmsg_seq = 0;
		nlh->nlmsg_pid = 0;
		nfg = NLMSG_DATA(nlh);
		nfg->nfgen_family = AF_UNSPEC;
		nfg->version = NFNETLINK_V0;
		nfg->res_id = htons(inst->group_num);
		inst->len += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	if (inst->s)
		(void)ctl_session_send(inst->s, inst->skb, inst->len); /* full: lost, ENOBUFS */
	free(inst->skb);
	inst->skb = NULL;
	inst->len = 0;
	inst->qlen = 0;
}

/* __nfulnl_flush */
static void nfulnl_flush(struct ctl_nflog_inst *inst)
{
	inst->timer = false;
	if (inst->skb)
		nfulnl_send(inst);
}

static void instance_destroy(struct nftdp_ctl *ctl, struct ctl_nflog_inst *inst)
{
	struct ctl_nflog *log = ctl->nflog;
	struct ctl_nflog_inst **pp = &log->table[instance_hashfn(inst->group_num)];

	while (*pp != inst)
		pp = &(*pp)->next;
	*pp = inst->next;
	log->n--;
	if (ctl->cfg.vm_state)
		nftdp_vm_nflog_bind(ctl->cfg.vm_state, inst->group_num, false);
	nfulnl_flush(inst);
	free(inst);
}

static int instance_create(struct nftdp_ctl *ctl, struct ctl_session *s, uint16_t group_num,
			   struct ctl_nflog_inst **out)
{
	struct ctl_nflog *log = nflog_of(ctl);
	struct ctl_nflog_inst *inst;

	if (!log)
		return -ENOMEM;
	inst = calloc(1, sizeof(*inst));
	if (!inst)
		return -ENOMEM;
	inst->s = s;
	inst->peer_portid = ctl_session_portid(s);
	inst->group_num = group_num;
	inst->qthreshold = NFULNL_QTHRESH_DEFAULT;
	inst->flushtimeout = NFULNL_TIMEOUT_DEFAULT;
	inst->nlbufsiz = NFULNL_NLBUFSIZ_DEFAULT;
	inst->copy_mode = NFULNL_COPY_PACKET;
	inst->copy_range = NFULNL_COPY_RANGE_MAX;
	inst->next = log->table[instance_hashfn(group_num)];
	log->table[instance_hashfn(group_num)] = inst;
	log->n++;
	if (ctl->cfg.vm_state)
		nftdp_vm_nflog_bind(ctl->cfg.vm_state, group_num, true);
	*out = inst;
	return 0;
}

/* nfulnl_set_mode: an unknown mode is refused here, and the caller ignores it */
static void set_mode(struct ctl_nflog_inst *inst, uint8_t mode, uint32_t range)
{
	switch (mode) {
	case NFULNL_COPY_NONE:
	case NFULNL_COPY_META:
		inst->copy_mode = mode;
		inst->copy_range = 0;
		break;
	case NFULNL_COPY_PACKET:
		inst->copy_mode = mode;
		if (range == 0)
			range = NFULNL_COPY_RANGE_MAX;
		inst->copy_range = range < NFULNL_COPY_RANGE_MAX ? range : NFULNL_COPY_RANGE_MAX;
		break;
	default:
		break;
	}
}

/* nfula_cfg_policy through nla_parse_deprecated: short attributes are
 * -ERANGE, unknown types ignored. The policy's NLA_POLICY_MASK on the
 * flags is not enforced by the test machine's kernel (6.18): flags 8 is
 * accepted there (differential 250), so here too. */
static int parse_cfg(const struct nlmsghdr *nlh, const struct nlattr **tb,
		     const struct nlattr **bad)
{
	static const uint16_t minlen[NFULA_CFG_MAX + 1] = {
	    [NFULA_CFG_CMD] = sizeof(struct nfulnl_msg_config_cmd),
	    [NFULA_CFG_MODE] = sizeof(struct nfulnl_msg_config_mode),
	    [NFULA_CFG_NLBUFSIZ] = 4,
	    [NFULA_CFG_TIMEOUT] = 4,
	    [NFULA_CFG_QTHRESH] = 4,
	    [NFULA_CFG_FLAGS] = 2,
	};
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		uint16_t type = mnl_attr_get_type(a);

		if (type == 0 || type > NFULA_CFG_MAX)
			continue;
		if (mnl_attr_get_payload_len(a) < minlen[type]) {
			*bad = a;
			return -ERANGE;
		}
		tb[type] = a;
	}
	return 0;
}

/* nfulnl_recv_config */
static int recv_config(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		       const struct nlattr **bad)
{
	const struct nfgenmsg *nfmsg = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NFULA_CFG_MAX + 1] = {NULL};
	uint16_t group_num = ntohs(nfmsg->res_id);
	const struct nfulnl_msg_config_cmd *cmd = NULL;
	struct ctl_nflog_inst *inst;
	int err;

	err = parse_cfg(nlh, tb, bad);
	if (err < 0)
		return err;
	if (tb[NFULA_CFG_CMD]) {
		cmd = mnl_attr_get_payload(tb[NFULA_CFG_CMD]);
		/* commands without queue context: nf_log_bind_pf and
		 * nf_log_unbind_pf, which choose the logger of calls without
		 * their own (none in nftdp: every log statement names its type) */
		switch (cmd->command) {
		case NFULNL_CFG_CMD_PF_BIND:
			return nfmsg->nfgen_family >= NFPROTO_NUMPROTO ? -EINVAL : 0;
		case NFULNL_CFG_CMD_PF_UNBIND:
			return 0;
		}
	}

	inst = instance_lookup(ctl->nflog, group_num);
	if (inst && inst->peer_portid != ctl_session_portid(s))
		return -EPERM;

	/* NFULNL_CFG_F_CONNTRACK needs nfnl_ct_hook: ctnetlink is built in */

	if (cmd) {
		switch (cmd->command) {
		case NFULNL_CFG_CMD_BIND:
			if (inst)
				return -EBUSY;
			err = instance_create(ctl, s, group_num, &inst);
			if (err < 0)
				return err;
			break;
		case NFULNL_CFG_CMD_UNBIND:
			if (!inst)
				return -ENODEV;
			instance_destroy(ctl, inst);
			return 0;
		default:
			return -ENOTSUPP;
		}
	} else if (!inst) {
		return -ENODEV;
	}

	if (tb[NFULA_CFG_MODE]) {
		const struct nfulnl_msg_config_mode *m = mnl_attr_get_payload(tb[NFULA_CFG_MODE]);
		uint32_t range;

		memcpy(&range, &m->copy_range, sizeof(range));
		set_mode(inst, m->copy_mode, ntohl(range));
	}
	if (tb[NFULA_CFG_TIMEOUT])
		inst->flushtimeout = ntohl(mnl_attr_get_u32(tb[NFULA_CFG_TIMEOUT]));
	if (tb[NFULA_CFG_NLBUFSIZ]) {
		/* nfulnl_set_nlbufsiz: out of range is ignored */
		uint32_t n = ntohl(mnl_attr_get_u32(tb[NFULA_CFG_NLBUFSIZ]));

		if (n >= NFULNL_NLBUFSIZ_DEFAULT && n <= 131072)
			inst->nlbufsiz = n;
	}
	if (tb[NFULA_CFG_QTHRESH])
		inst->qthreshold = ntohl(mnl_attr_get_u32(tb[NFULA_CFG_QTHRESH]));
	if (tb[NFULA_CFG_FLAGS])
		inst->flags = ntohs(mnl_attr_get_u16(tb[NFULA_CFG_FLAGS]));
	return 0;
}

int ctl_nflog_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const struct nlmsghdr *nlh,
		  const struct nlattr **bad)
{
	*bad = NULL;
	switch (nlh->nlmsg_type & 0xff) {
	case NFULNL_MSG_PACKET:
		return -ENOTSUPP; /* nfulnl_recv_unsupp */
	case NFULNL_MSG_CONFIG:
		return recv_config(ctl, s, nlh, bad);
	default:
		return -EINVAL; /* no such callback */
	}
}

void ctl_nflog_session_closed(struct nftdp_ctl *ctl, struct ctl_session *s)
{
	struct ctl_nflog *log = ctl->nflog;

	if (!log)
		return;
	/* nfulnl_rcv_nl_event: every instance of this port id */
	for (unsigned int i = 0; i < INSTANCE_BUCKETS; i++) {
		struct ctl_nflog_inst *inst = log->table[i], *next;

		for (; inst; inst = next) {
			next = inst->next;
			if (inst->s == s) {
				inst->s = NULL; /* nothing to flush to */
				instance_destroy(ctl, inst);
			}
		}
	}
}

void ctl_nflog_destroy(struct nftdp_ctl *ctl)
{
	struct ctl_nflog *log = ctl->nflog;

	if (!log)
		return;
	for (unsigned int i = 0; i < INSTANCE_BUCKETS; i++) {
		while (log->table[i]) {
			log->table[i]->s = NULL;
			instance_destroy(ctl, log->table[i]);
		}
	}
	free(log);
	ctl->nflog = NULL;
}

static uint32_t nla_total(uint32_t n)
{
	return NLA_ALIGN(NLA_HDRLEN + n);
}

/* the device skb->dev is at this hook: the input device until the output
 * path sets the route's */
static uint16_t dev_type(const struct nftdp_vm_nflog_event *ev)
{
	bool out_path = ev->family != NFPROTO_NETDEV && ev->family != NFPROTO_BRIDGE &&
			(ev->hook == NF_INET_POST_ROUTING || ev->hook == NF_INET_LOCAL_OUT);

	return out_path && ev->oif ? ev->oiftype : ev->iiftype;
}

static bool l2_family(uint8_t pf)
{
	return pf == NFPROTO_NETDEV || pf == NFPROTO_BRIDGE;
}

/* nfulnl_log_packet's size estimate, with its FIXME: every optional
 * attribute counted (CONFIG_BRIDGE_NETFILTER: two more ifindexes) */
static uint32_t size_estimate(const struct ctl_nflog_inst *inst,
			      const struct nftdp_vm_nflog_event *ev, uint32_t data_len)
{
	uint32_t size = NLMSG_ALIGN(NLMSG_LENGTH(sizeof(struct nfgenmsg))) +
			nla_total(sizeof(struct nfulnl_msg_packet_hdr)) + 4 * nla_total(4) +
			nla_total(4) /* mark */ + 2 * nla_total(4) /* uid, gid */ +
			nla_total(ev->prefix_len) + nla_total(sizeof(struct nfulnl_msg_packet_hw)) +
			nla_total(sizeof(struct nfulnl_msg_packet_timestamp)) +
			NLMSG_ALIGN(NLMSG_LENGTH(sizeof(struct nfgenmsg))); /* NLMSG_DONE */

	if (ev->iif && ev->mac_set)
		size += nla_total(ETH_HLEN_) + 2 * nla_total(2);
	if (inst->flags & NFULNL_CFG_F_SEQ)
		size += nla_total(4);
	if (inst->flags & NFULNL_CFG_F_SEQ_GLOBAL)
		size += nla_total(4);
	if (l2_family(ev->family) && ev->mac_set && ev->mac_len)
		size += nla_total(ev->mac_len); /* nfulnl_get_bridge_size */
	if (data_len)
		size += nla_total(data_len);
	return size;
}

/* alloc_skb(n)'s tailroom: the data area is a kmalloc of
 * SKB_DATA_ALIGN(n) + the shared info, rounded up to its slab size */
static size_t skb_tailroom_for(uint32_t n)
{
	size_t want = (((size_t)n + 63) & ~(size_t)63) + SKB_SHINFO_SIZE, slab = 64;

	while (slab < want)
		slab <<= 1;
	return slab - SKB_SHINFO_SIZE;
}

int ctl_nflog_fill(void *buf, uint16_t group, uint16_t flags, uint32_t seq, uint32_t global_seq,
		   const struct nftdp_vm_nflog_event *ev, uint32_t data_len)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfulnl_msg_packet_hdr pmsg;
	struct nfgenmsg *nfg;
	const uint8_t *payload = ev->data + ev->prefix_len;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = ev->family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(group);

	memset(&pmsg, 0, sizeof(pmsg));
	pmsg.hw_protocol = ev->hw_protocol;
	pmsg.hook = ev->hook;
	mnl_attr_put(nlh, NFULA_PACKET_HDR, sizeof(pmsg), &pmsg);
	mnl_attr_put(nlh, NFULA_PREFIX, ev->prefix_len, ev->data);
	if (ev->iif)
		mnl_attr_put_u32(nlh, NFULA_IFINDEX_INDEV, htonl(ev->iif));
	if (ev->oif)
		mnl_attr_put_u32(nlh, NFULA_IFINDEX_OUTDEV, htonl(ev->oif));
	if (ev->mark)
		mnl_attr_put_u32(nlh, NFULA_MARK, htonl(ev->mark));
	if (ev->iif && ev->mac_set && ev->mac_len >= ETH_HLEN_ && dev_type(ev) == ARPHRD_ETHER) {
		/* dev_parse_header: eth_header_parse, the source address */
		struct nfulnl_msg_packet_hw phw;

		memset(&phw, 0, sizeof(phw));
		phw.hw_addrlen = htons(6);
		memcpy(phw.hw_addr, ev->mac + 6, 6);
		mnl_attr_put(nlh, NFULA_HWADDR, sizeof(phw), &phw);
	}
	if (ev->iif && ev->mac_set) {
		uint8_t hwhdr[ETH_HLEN_] = {0};

		mnl_attr_put_u16(nlh, NFULA_HWTYPE, htons(dev_type(ev)));
		mnl_attr_put_u16(nlh, NFULA_HWLEN, htons(ETH_HLEN_));
		memcpy(hwhdr, ev->mac, ev->mac_len < ETH_HLEN_ ? ev->mac_len : ETH_HLEN_);
		mnl_attr_put(nlh, NFULA_HWHEADER, ETH_HLEN_, hwhdr);
	}
	if (ev->hook <= NF_INET_FORWARD) {
		struct nfulnl_msg_packet_timestamp ts;

		ts.sec = htobe64(ev->tstamp_ns / 1000000000ull);
		ts.usec = htobe64((ev->tstamp_ns % 1000000000ull) / 1000);
		mnl_attr_put(nlh, NFULA_TIMESTAMP, sizeof(ts), &ts);
	}
	if (flags & NFULNL_CFG_F_SEQ)
		mnl_attr_put_u32(nlh, NFULA_SEQ, htonl(seq));
	if (flags & NFULNL_CFG_F_SEQ_GLOBAL)
		mnl_attr_put_u32(nlh, NFULA_SEQ_GLOBAL, htonl(global_seq));
	/* NFULA_CT / NFULA_CT_INFO (NFULNL_CFG_F_CONNTRACK): not built */
	if (l2_family(ev->family) && ev->mac_set && ev->mac_len)
		mnl_attr_put(nlh, NFULA_L2HDR, ev->mac_len, ev->mac);
	if (data_len)
		mnl_attr_put(nlh, NFULA_PAYLOAD, data_len, payload);
	return (int)nlh->nlmsg_len;
}

/* nfulnl_log_packet, from the instance lookup on */
static void log_packet(const struct nftdp_vm_nflog_event *ev, void *arg)
{
	struct nftdp_ctl *ctl = arg;
	struct ctl_nflog *log = ctl->nflog;
	struct ctl_nflog_inst *inst = instance_lookup(log, ev->group);
	uint32_t qthreshold, data_len, size, global_seq = 0;
	int len;

	/* recorded before its instance went: the kernel would not have */
	if (!inst || !inst->s)
		return;
	qthreshold = inst->qthreshold;
	/* per-rule qthreshold overrides per-instance */
	if (ev->qthreshold && qthreshold > ev->qthreshold)
		qthreshold = ev->qthreshold;
	switch (inst->copy_mode) {
	case NFULNL_COPY_META:
	case NFULNL_COPY_NONE:
		data_len = 0;
		break;
	case NFULNL_COPY_PACKET:
		data_len = inst->copy_range;
		if (ev->copy_len < data_len)
			data_len = ev->copy_len;
		if (data_len > ev->data_len)
			data_len = ev->data_len; /* skb->len, or what the ring kept */
		break;
	default:
		return;
	}
	size = size_estimate(inst, ev, data_len);
	if (inst->skb && size > inst->tailroom - inst->len)
		nfulnl_flush(inst); /* no room left: flush to userspace */
	if (!inst->skb) {
		uint32_t n = inst->nlbufsiz > size ? inst->nlbufsiz : size;

		inst->tailroom = skb_tailroom_for(n);
		/* the estimate bounds what is built; the slack is for safety.
		 * Zeroed: attribute padding goes out as the kernel's nla_put
		 * writes it (libmnl before 1.0.5 leaves it as it finds it) */
		inst->skb = calloc(1, inst->tailroom + 256);
		if (!inst->skb)
			return;
		inst->len = 0;
	}
	inst->qlen++;
	if (inst->flags & NFULNL_CFG_F_SEQ_GLOBAL)
		global_seq = ++log->global_seq;
	len = ctl_nflog_fill(inst->skb + inst->len, inst->group_num, inst->flags, inst->seq,
			     global_seq, ev, data_len);
	if (inst->flags & NFULNL_CFG_F_SEQ)
		inst->seq++;
	inst->len += NLMSG_ALIGN((uint32_t)len);
	if (inst->qlen >= qthreshold) {
		nfulnl_flush(inst);
	} else if (!inst->timer) {
		inst->timer = true;
		inst->expires_ns = now_ns() + (uint64_t)inst->flushtimeout * 10000000ull;
	}
}

unsigned int nftdp_ctl_nflog_events(struct nftdp_ctl *ctl)
{
	struct nftdp_vm_state *st = ctl->cfg.vm_state;
	struct ctl_nflog *log = ctl->nflog;
	unsigned int n;
	uint64_t now;

	if (!st)
		return 0;
	/* without instances this only drops what was recorded before the
	 * last one went */
	n = nftdp_vm_nflog_poll(st, log_packet, ctl);
	if (!log)
		return n;
	/* nfulnl_timer */
	now = now_ns();
	for (unsigned int i = 0; i < INSTANCE_BUCKETS; i++)
		for (struct ctl_nflog_inst *inst = log->table[i]; inst; inst = inst->next)
			if (inst->timer && now >= inst->expires_ns) {
				inst->timer = false;
				if (inst->skb)
					nfulnl_send(inst);
			}
	return n;
}
