/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Answer building: netlink messages packed into datagrams for one session,
 * as the kernel packs dump skbs. A message is built in place at the end of
 * the buffer; when the buffer would pass CTL_OUT_DGRAM the finished messages
 * go out as one datagram first. nft reads with a 69631-byte buffer, so no
 * datagram may be larger than that.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/common.h>
#include <linux/netlink.h>

#include "ctl_state.h"

#define CTL_OUT_DGRAM 16384   /* pack finished messages up to this size */
#define CTL_OUT_MSG_MAX 65536 /* room reserved for one message being built */

void ctl_out_init(struct ctl_out *o, struct nftdp_ctl *ctl, struct ctl_session *s)
{
	o->ctl = ctl;
	o->s = s;
	o->mcast_group = 0;
	o->skip = NULL;
	o->buf = NULL;
	o->len = 0;
	o->cap = 0;
}

void ctl_out_flush(struct ctl_out *o)
{
	if (o->len == 0)
		return;
	if (o->s)
		ctl_session_send(o->s, o->buf, o->len);
	else if (o->mcast_group)
		ctl_server_multicast(o->ctl->server, o->mcast_group, o->buf, o->len, o->skip);
	o->len = 0;
}

static int reserve(struct ctl_out *o, size_t need)
{
	char *nb;
	size_t cap;

	if (o->len + need <= o->cap)
		return 0;
	cap = o->cap ? o->cap : CTL_OUT_DGRAM + CTL_OUT_MSG_MAX;
	while (cap < o->len + need)
		cap *= 2;
	nb = realloc(o->buf, cap);
	if (nb == NULL)
		return -ENOMEM;
	o->buf = nb;
	o->cap = cap;
	return 0;
}

struct nlmsghdr *ctl_out_msg(struct ctl_out *o, uint16_t type, uint8_t family, uint16_t flags,
			     uint32_t seq, uint32_t portid, uint16_t res_id)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	if (o->len >= CTL_OUT_DGRAM)
		ctl_out_flush(o);
	if (reserve(o, CTL_OUT_MSG_MAX) < 0)
		return NULL;
	nlh = mnl_nlmsg_put_header(o->buf + o->len);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = portid;
	if (type != NLMSG_ERROR && type != NLMSG_DONE) {
		nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
		nfg->nfgen_family = family;
		nfg->version = NFNETLINK_V0;
		nfg->res_id = htons(res_id);
	}
	return nlh;
}

size_t ctl_out_room(const struct ctl_out *o, const struct nlmsghdr *nlh)
{
	size_t used = (const char *)nlh - o->buf + nlh->nlmsg_len;

	return o->cap - used;
}

void ctl_out_end(struct ctl_out *o, struct nlmsghdr *nlh)
{
	size_t end = (char *)nlh - o->buf + NLMSG_ALIGN(nlh->nlmsg_len);

	/* A message that grew the datagram past the packing size goes out
	 * with what came before it unless it is alone. */
	if (end > CTL_OUT_DGRAM && (char *)nlh != o->buf) {
		size_t start = (char *)nlh - o->buf;
		size_t mlen = end - start;

		o->len = start;
		ctl_out_flush(o);
		memmove(o->buf, o->buf + start, mlen);
		o->len = mlen;
		return;
	}
	o->len = end;
}

/* Send every message as a datagram of its own, as the kernel sends each
 * error of a batch in its own skb: libmnl stops reading a buffer at the
 * first error, so packed errors would hide all but the first. */
void ctl_out_flush_each(struct ctl_out *o)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= o->len) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(o->buf + off);
		size_t mlen = NLMSG_ALIGN(nlh->nlmsg_len);

		if (o->s)
			ctl_session_send(o->s, nlh, nlh->nlmsg_len);
		off += mlen;
	}
	o->len = 0;
}

void ctl_out_cancel(struct ctl_out *o, struct nlmsghdr *nlh)
{
	o->len = (char *)nlh - o->buf;
}

void ctl_out_done(struct ctl_out *o, uint32_t seq, uint32_t portid)
{
	struct nlmsghdr *nlh = ctl_out_msg(o, NLMSG_DONE, 0, NLM_F_MULTI, seq, portid, 0);
	int32_t *v;

	if (nlh == NULL)
		return;
	v = mnl_nlmsg_put_extra_header(nlh, sizeof(*v));
	*v = 0;
	ctl_out_end(o, nlh);
}

void ctl_out_free(struct ctl_out *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

void ctl_put_attr(struct nlmsghdr *nlh, const struct nlattr *a)
{
	memcpy(mnl_nlmsg_get_payload_tail(nlh), a, a->nla_len);
	nlh->nlmsg_len += MNL_ALIGN(a->nla_len);
}

bool ctl_attr_strcpy(const struct nlattr *a, char *out, size_t size)
{
	size_t len = mnl_attr_get_payload_len(a);
	const char *p = mnl_attr_get_payload(a);
	bool fits;

	if (len && p[len - 1] == '\0')
		len--;
	fits = len < size;
	if (!fits)
		len = size - 1;
	memcpy(out, p, len);
	out[len] = '\0';
	return fits;
}

void ctl_put_strz_of(struct nlmsghdr *nlh, const struct nlattr *a)
{
	char str[CTL_NAME_MAXLEN];

	ctl_attr_strcpy(a, str, sizeof(str));
	mnl_attr_put_strz(nlh, mnl_attr_get_type(a), str);
}

/* netlink_ack(): an error (or ack) answering req. With NETLINK_EXT_ACK and
 * an offending attribute, the whole request is echoed (unless CAP_ACK) and
 * NLMSGERR_ATTR_OFFS points at the attribute. */
void ctl_ack(struct ctl_out *o, const struct nlmsghdr *req, int err, const struct nlattr *bad_attr,
	     bool ext_ack)
{
	ctl_ack_msg(o, req, err, bad_attr, ext_ack, NULL);
}

/* ctl_ack() with the extack message (NLMSGERR_ATTR_MSG, before the offset
 * as netlink_ack_tlv_fill puts them) when the requester asked for
 * NETLINK_EXT_ACK: why nftdp refused what the kernel would run. */
void ctl_ack_msg(struct ctl_out *o, const struct nlmsghdr *req, int err,
		 const struct nlattr *bad_attr, bool ext_ack, const char *msg)
{
	bool capped = err == 0 || (o->s && ctl_session_cap_ack(o->s));
	size_t payload = capped ? sizeof(struct nlmsghdr) : req->nlmsg_len;
	struct nlmsgerr *e;
	struct nlmsghdr *nlh;
	uint16_t flags = 0;
	uint32_t portid = o->s ? ctl_session_portid(o->s) : 0;
	bool tlv = ext_ack && err && (bad_attr != NULL || (msg && msg[0]));
	size_t msg_size = tlv && msg ? MNL_ALIGN(MNL_ATTR_HDRLEN + strlen(msg) + 1) : 0;

	if (capped)
		flags |= NLM_F_CAPPED;
	if (tlv)
		flags |= NLM_F_ACK_TLVS;
	if (o->len >= CTL_OUT_DGRAM)
		ctl_out_flush(o);
	if (reserve(o, NLMSG_ALIGN(sizeof(*nlh) + sizeof(int) + payload) + 64 + msg_size) < 0)
		return;
	nlh = mnl_nlmsg_put_header(o->buf + o->len);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = portid;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(int) + payload);
	e->error = err;
	memcpy(&e->msg, req, payload);
	if (!capped)
		e->msg.nlmsg_len = req->nlmsg_len;
	if (msg_size)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, msg);
	if (tlv && bad_attr)
		mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS, ctl_attr_offset(req, bad_attr));
	ctl_out_end(o, nlh);
}
