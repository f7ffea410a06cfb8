// SPDX-License-Identifier: BSD-3-Clause
/*
 * The stand-in session and server of ctl_stub.h, and its batch builder.
 * The errors answered are kept in ctl_stub_errs; what else a test or
 * fuzzer wants to see of the answers it reads in ctl_stub.on_msg. A
 * datagram that does not hold whole messages aborts.
 */
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>

#include "control_priv.h"
#include "ctl_stub.h"

struct ctl_session {
	int unused;
};

struct ctl_stub_config ctl_stub = {.comm = "test"};
struct ctl_session ctl_stub_session;
struct ctl_stub_errs ctl_stub_errs;

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
	return ctl_stub.comm;
}

bool ctl_session_privileged(const struct ctl_session *s)
{
	(void)s;
	return true;
}

bool ctl_session_ext_ack(const struct ctl_session *s)
{
	(void)s;
	return ctl_stub.ext_ack;
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
	return ctl_stub.listeners;
}

int ctl_session_send(struct ctl_session *s, const void *buf, size_t len)
{
	(void)s;
	/* every datagram must hold whole messages: walk them */
	for (size_t off = 0; off + sizeof(struct nlmsghdr) <= len;) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)((const char *)buf + off);

		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len - off)
			abort();
		if (nlh->nlmsg_type == NLMSG_ERROR &&
		    nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (e->error && ctl_stub_errs.n < 16) {
				ctl_stub_errs.err[ctl_stub_errs.n] = -e->error;
				ctl_stub_errs.seq[ctl_stub_errs.n] = e->msg.nlmsg_seq;
			}
			if (e->error)
				ctl_stub_errs.n++;
		}
		if (ctl_stub.on_msg)
			ctl_stub.on_msg(nlh, ctl_stub.arg);
		off += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return 0;
}

bool ctl_server_has_listeners(const struct ctl_server *srv, unsigned int group)
{
	(void)srv;
	(void)group;
	return ctl_stub.listeners;
}

/* the stand-in session always takes what it is sent */
bool ctl_server_group_blocked(const struct ctl_server *srv, unsigned int group)
{
	(void)srv;
	(void)group;
	return false;
}

bool ctl_server_multicast(struct ctl_server *srv, unsigned int group, const void *buf, size_t len,
			  const struct ctl_session *skip)
{
	(void)srv;
	(void)group;
	(void)skip;
	if (ctl_stub.listeners)
		ctl_session_send(&ctl_stub_session, buf, len);
	return true;
}

/* ---- batches ---- */

static char bbuf[16384];
static size_t blen;
static uint32_t bseq;

static struct nlmsghdr *put(uint16_t type, uint16_t flags, uint8_t family)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	/* room for the largest message a test builds, and the batch end */
	if (blen + 4096 > sizeof(bbuf))
		abort();
	nlh = mnl_nlmsg_put_header(bbuf + blen);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = bseq++;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->res_id = htons(NFNL_SUBSYS_NFTABLES);
	return nlh;
}

void ctl_batch_done(struct nlmsghdr *nlh)
{
	blen += NLMSG_ALIGN(nlh->nlmsg_len);
}

void ctl_batch_begin(void)
{
	blen = 0;
	bseq = 0;
	ctl_batch_done(put(NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC));
}

struct nlmsghdr *ctl_batch_put(uint8_t type, uint16_t flags, uint8_t family)
{
	return put((NFNL_SUBSYS_NFTABLES << 8) | type, flags, family);
}

void ctl_batch_send(struct nftdp_ctl *ctl)
{
	ctl_batch_done(put(NFNL_MSG_BATCH_END, 0, AF_UNSPEC));
	memset(&ctl_stub_errs, 0, sizeof(ctl_stub_errs));
	ctl_nfnl_rcv(ctl, &ctl_stub_session, bbuf, blen);
}
