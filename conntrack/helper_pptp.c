// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pptp helper (nf_conntrack_pptp.c): it reads the PPTP control
 * messages of a TCP connection (port 1723, RFC 2637), follows the session
 * and call state of the connection's one call, and when a call is set up
 * (Outgoing-Call-Reply with "connected", Incoming-Call-Connected) expects
 * its GRE traffic both ways with the call ids as keys (exp_gre) and fills
 * the GRE keymaps (ct_gre.c); Call-Disconnect-Notify and the control
 * connection's end kill the call's GRE connection or remove what is still
 * expected (pptp_destroy_siblings). As the kernel's, it assumes the client
 * (PNS) opened the control connection.
 *
 * On a NATed control connection it does what nf_nat_pptp adds: the PNS's
 * call id of an Outgoing-Call-Request becomes the control connection's
 * translated source port (pptp_outbound_pkt), the PAC's messages get the
 * PNS's own call id back (pptp_inbound_pkt), the GRE expectations carry
 * the translated keys (pptp_exp_gre) and the GRE connection is translated
 * by pptp_nat_expected (expect.c); nat.c rewrites the call id of the GRE
 * packets that come back (nf_nat_proto.c's gre_manip_pkt).
 */
#include <netinet/in.h>

#include "ct_priv.h"

/* struct nf_ct_pptp_master's states (linux/netfilter/nf_conntrack_pptp.h) */
enum {
	PPTP_SESSION_NONE,
	PPTP_SESSION_ERROR,
	PPTP_SESSION_STOPREQ,
	PPTP_SESSION_REQUESTED,
	PPTP_SESSION_CONFIRMED,
};
enum {
	PPTP_CALL_NONE,
	PPTP_CALL_ERROR,
	PPTP_CALL_OUT_REQ,
	PPTP_CALL_OUT_CONF,
	PPTP_CALL_IN_REQ,
	PPTP_CALL_IN_REP,
	PPTP_CALL_IN_CONF,
	PPTP_CALL_CLEAR_REQ,
};

#define PPTP_PACKET_CONTROL 1
#define PPTP_MAGIC_COOKIE 0x1a2b3c4du

/* PptpControlMessageType */
#define PPTP_START_SESSION_REQUEST 1
#define PPTP_START_SESSION_REPLY 2
#define PPTP_STOP_SESSION_REQUEST 3
#define PPTP_STOP_SESSION_REPLY 4
#define PPTP_ECHO_REQUEST 5
#define PPTP_ECHO_REPLY 6
#define PPTP_OUT_CALL_REQUEST 7
#define PPTP_OUT_CALL_REPLY 8
#define PPTP_IN_CALL_REQUEST 9
#define PPTP_IN_CALL_REPLY 10
#define PPTP_IN_CALL_CONNECT 11
#define PPTP_CALL_CLEAR_REQUEST 12
#define PPTP_CALL_DISCONNECT_NOTIFY 13
#define PPTP_WAN_ERROR_NOTIFY 14
#define PPTP_SET_LINK_INFO 15
#define PPTP_MSG_MAX 15

#define PPTP_START_OK 1
#define PPTP_STOP_OK 1
#define PPTP_OUTCALL_CONNECT 1
#define PPTP_INCALL_ACCEPT 1

/* pptp_msg_size: sizeof the message structs (0: echo, no minimum) */
static const uint16_t pptp_msg_size[PPTP_MSG_MAX + 1] = {
    [PPTP_START_SESSION_REQUEST] = 144,	 [PPTP_START_SESSION_REPLY] = 144,
    [PPTP_STOP_SESSION_REQUEST] = 4,	 [PPTP_STOP_SESSION_REPLY] = 4,
    [PPTP_OUT_CALL_REQUEST] = 156,	 [PPTP_OUT_CALL_REPLY] = 20,
    [PPTP_IN_CALL_REQUEST] = 208,	 [PPTP_IN_CALL_REPLY] = 12,
    [PPTP_IN_CALL_CONNECT] = 16,	 [PPTP_CALL_CLEAR_REQUEST] = 4,
    [PPTP_CALL_DISCONNECT_NOTIFY] = 136, [PPTP_WAN_ERROR_NOTIFY] = 28,
    [PPTP_SET_LINK_INFO] = 12,
};
#define PPTP_REQ_MAX 208 /* sizeof(union pptp_ctrl_union) */

int nftdp_ct_pptp_parse(const uint8_t *d, uint32_t n, uint16_t *msg, const uint8_t **req,
			uint32_t *reqlen)
{
	uint32_t len;
	uint16_t m;

	/* struct pptp_pkt_hdr: length (not checked), type, magic cookie */
	if (n < 8)
		return 0;
	if (((uint32_t)d[2] << 8 | d[3]) != PPTP_PACKET_CONTROL ||
	    ((uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 | (uint32_t)d[6] << 8 | d[7]) !=
		PPTP_MAGIC_COOKIE)
		return 0;
	/* struct PptpControlHeader: type, reserved */
	if (n < 12)
		return 0;
	m = (uint16_t)(d[8] << 8 | d[9]);
	len = n - 12;
	if (m > 0 && m <= PPTP_MSG_MAX && len < pptp_msg_size[m])
		return 0;
	if (len > PPTP_REQ_MAX)
		len = PPTP_REQ_MAX;
	*msg = m;
	*req = d + 12;
	*reqlen = len;
	return 1;
}

static uint16_t be16_at(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v; /* network order */
}

/* exp_gre: GRE from PNS to PAC keyed by the PAC's call id, and back */
static void exp_gre(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, uint16_t callid,
		    uint16_t peer_callid)
{
	const struct nftdp_ct_tuple *o = &e->tuple[IP_CT_DIR_ORIGINAL];
	const struct nftdp_ct_tuple *r = &e->tuple[IP_CT_DIR_REPLY];
	struct ct_help *h = &s->help[e - s->entries];
	struct ct_expect xo, xr;

	nftdp_ct_expect_init(&xo, o->l3proto, &o->src, &o->dst, IPPROTO_GRE, peer_callid, callid);
	nftdp_ct_expect_init(&xr, r->l3proto, &r->src, &r->dst, IPPROTO_GRE, callid, peer_callid);
	/* nf_ct_expect_init: a given source "port" is matched even if 0 */
	xo.mask.sport = xr.mask.sport = 0xffff;
	if (e->status & IPS_NAT_MASK) {
		/* pptp_exp_gre: the PNS sends with its own call id, the PAC
		 * to the translated one; each keeps the other's key to map to */
		h->pptp.nat_pac_call_id = h->pptp.pac_call_id;
		nftdp_ct_expect_set_nat(&xo, e, IP_CT_DIR_ORIGINAL, h->pptp.pns_call_id);
		xo.tuple.sport = h->pptp.nat_pns_call_id;
		xo.tuple.dport = h->pptp.pac_call_id;
		nftdp_ct_expect_set_nat(&xr, e, IP_CT_DIR_REPLY, h->pptp.nat_pns_call_id);
		xr.tuple.sport = h->pptp.nat_pac_call_id;
		xr.tuple.dport = h->pptp.pns_call_id;
		xo.nat_pptp = xr.nat_pptp = true;
	}
	if (nftdp_ct_expect_related(s, e, &xo, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_PPTP, 0),
				    nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_PPTP, 0)) != 0)
		return;
	if (nftdp_ct_expect_related(s, e, &xr, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_PPTP, 0),
				    nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_PPTP, 0)) != 0)
		goto out_unexpect_orig;
	if (!nftdp_ct_gre_keymap_add(s, e, &xo.tuple, &xr.tuple))
		goto out_unexpect_both;
	return;
out_unexpect_both:
	nftdp_ct_expect_delete(s, &xr.tuple, xr.id);
out_unexpect_orig:
	nftdp_ct_expect_delete(s, &xo.tuple, xo.id);
}

/* destroy_sibling_or_exp: the call's GRE connection in this direction, if
 * it is this worker's, else what is still expected of it */
static void destroy_sibling_or_exp(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t)
{
	struct nftdp_ct_entry *sib;
	int dir;

	sib = nftdp_ct_find(s, t, nftdp_ct_tuple_hash(s, t), &dir, s->now_ms);
	if (sib) {
		nftdp_ct_kill(s, sib);
		return;
	}
	nftdp_ct_expect_unexpect_tuple(s, t);
}

void nftdp_ct_pptp_destroy_siblings(struct nftdp_ct_shard *s, struct nftdp_ct_entry *master)
{
	const struct ct_help *h = &s->help[master - s->entries];
	struct nftdp_ct_tuple t;

	nftdp_ct_gre_keymap_destroy(s, s->cfg.shard_id, (uint32_t)(master - s->entries),
				    master->id);
	/* original (pns -> pac), then reply (pac -> pns) */
	t = master->tuple[IP_CT_DIR_ORIGINAL];
	t.l4proto = IPPROTO_GRE;
	t.sport = h->pptp.pns_call_id;
	t.dport = h->pptp.pac_call_id;
	destroy_sibling_or_exp(s, &t);
	t = master->tuple[IP_CT_DIR_REPLY];
	t.l4proto = IPPROTO_GRE;
	t.sport = h->pptp.pac_call_id;
	t.dport = h->pptp.pns_call_id;
	destroy_sibling_or_exp(s, &t);
}

void nftdp_ct_pptp_expectfn(struct nftdp_ct_shard *s, const struct ct_expect *x)
{
	struct nftdp_ct_tuple inv;

	/* the GRE connection covers both directions: the other expectation
	 * goes ("obviously this tuple inversion only works until you do NAT") */
	if (!x->nat_pptp) {
		if (!nftdp_ct_tuple_invert(&x->tuple, &inv))
			return;
	} else {
		/* pptp_nat_expected: the other one, between the master's
		 * tuple[!exp->dir] addresses (nat_dst to nat_src), with the
		 * call ids as pptp_exp_gre saved them (the kernel reads the
		 * master's current ones: the same unless a call came between) */
		memset(&inv, 0, sizeof(inv));
		inv.l3proto = x->tuple.l3proto;
		inv.l4proto = IPPROTO_GRE;
		inv.src = x->nat_dst;
		inv.dst = x->nat_src;
		if (x->nat_dir == IP_CT_DIR_ORIGINAL) {
			inv.sport = x->tuple.dport; /* pac_call_id */
			inv.dport = x->nat_port;    /* the translated pns_call_id */
		} else {
			inv.sport = x->nat_port;    /* the PNS's own call id */
			inv.dport = x->tuple.sport; /* pac_call_id */
		}
	}
	inv.zone = x->tuple.zone;
	nftdp_ct_expect_unexpect_tuple(s, &inv);
}

/* pptp_inbound_pkt: PAC -> PNS; false: an invalid message (no NAT hook) */
static bool inbound(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, struct ct_help *h,
		    uint16_t msg, const uint8_t *req)
{
	uint16_t cid, pcid;

	switch (msg) {
	case PPTP_START_SESSION_REPLY:
		if (h->pptp.sstate < PPTP_SESSION_REQUESTED)
			return false;
		h->pptp.sstate =
		    req[2] == PPTP_START_OK ? PPTP_SESSION_CONFIRMED : PPTP_SESSION_ERROR;
		break;
	case PPTP_STOP_SESSION_REPLY:
		if (h->pptp.sstate > PPTP_SESSION_STOPREQ)
			return false;
		h->pptp.sstate = req[0] == PPTP_STOP_OK ? PPTP_SESSION_NONE : PPTP_SESSION_ERROR;
		break;
	case PPTP_OUT_CALL_REPLY:
		/* server accepted call, we now expect GRE frames */
		if (h->pptp.sstate != PPTP_SESSION_CONFIRMED)
			return false;
		if (h->pptp.cstate != PPTP_CALL_OUT_REQ && h->pptp.cstate != PPTP_CALL_OUT_CONF)
			return false;
		cid = be16_at(req);
		pcid = be16_at(req + 2);
		if (h->pptp.pns_call_id != pcid)
			return false;
		if (req[4] == PPTP_OUTCALL_CONNECT) {
			h->pptp.cstate = PPTP_CALL_OUT_CONF;
			h->pptp.pac_call_id = cid;
			exp_gre(s, e, cid, pcid);
		} else {
			h->pptp.cstate = PPTP_CALL_NONE;
		}
		break;
	case PPTP_IN_CALL_REQUEST:
		if (h->pptp.sstate != PPTP_SESSION_CONFIRMED)
			return false;
		h->pptp.cstate = PPTP_CALL_IN_REQ;
		h->pptp.pac_call_id = be16_at(req);
		break;
	case PPTP_IN_CALL_CONNECT:
		if (h->pptp.sstate != PPTP_SESSION_CONFIRMED)
			return false;
		if (h->pptp.cstate != PPTP_CALL_IN_REP && h->pptp.cstate != PPTP_CALL_IN_CONF)
			return false;
		pcid = be16_at(req);
		cid = h->pptp.pac_call_id;
		if (h->pptp.pns_call_id != pcid)
			return false;
		h->pptp.cstate = PPTP_CALL_IN_CONF;
		exp_gre(s, e, cid, pcid);
		break;
	case PPTP_CALL_DISCONNECT_NOTIFY:
		/* untrack this call id, unexpect GRE packets */
		h->pptp.cstate = PPTP_CALL_NONE;
		nftdp_ct_pptp_destroy_siblings(s, e);
		break;
	case PPTP_WAN_ERROR_NOTIFY:
	case PPTP_SET_LINK_INFO:
	case PPTP_ECHO_REQUEST:
	case PPTP_ECHO_REPLY:
		break;
	default:
		return false;
	}
	return true;
}

/* pptp_outbound_pkt: PNS -> PAC; false: an invalid message (no NAT hook) */
static bool outbound(struct ct_help *h, uint16_t msg, const uint8_t *req)
{
	switch (msg) {
	case PPTP_START_SESSION_REQUEST:
		if (h->pptp.sstate != PPTP_SESSION_NONE)
			return false;
		h->pptp.sstate = PPTP_SESSION_REQUESTED;
		break;
	case PPTP_STOP_SESSION_REQUEST:
		h->pptp.sstate = PPTP_SESSION_STOPREQ;
		break;
	case PPTP_OUT_CALL_REQUEST:
		if (h->pptp.sstate != PPTP_SESSION_CONFIRMED)
			return false;
		h->pptp.cstate = PPTP_CALL_OUT_REQ;
		h->pptp.pns_call_id = be16_at(req); /* track PNS call id */
		break;
	case PPTP_IN_CALL_REPLY:
		if (h->pptp.cstate != PPTP_CALL_IN_REQ && h->pptp.cstate != PPTP_CALL_IN_REP)
			return false;
		if (h->pptp.pac_call_id != be16_at(req + 2))
			return false;
		if (req[4] == PPTP_INCALL_ACCEPT) {
			h->pptp.cstate = PPTP_CALL_IN_REP;
			h->pptp.pns_call_id = be16_at(req);
		} else {
			h->pptp.cstate = PPTP_CALL_NONE;
		}
		break;
	case PPTP_CALL_CLEAR_REQUEST:
		if (h->pptp.sstate != PPTP_SESSION_CONFIRMED)
			return false;
		h->pptp.cstate = PPTP_CALL_CLEAR_REQ;
		break;
	case PPTP_SET_LINK_INFO:
	case PPTP_ECHO_REQUEST:
	case PPTP_ECHO_REPLY:
		break;
	default:
		return false;
	}
	return true;
}

/* the call id at off of the control message (after its 12-byte headers)
 * becomes id (network order): nf_nat_mangle_tcp_packet, same length */
static unsigned int nat_mangle_cid(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				   struct nftdp_vm_pkt *pkt, int dir, uint32_t off, uint16_t id)
{
	char rep[2];

	memcpy(rep, &id, 2);
	return nftdp_ct_nat_mangle_tcp(s, e, pkt, dir, 12 + off, 2, rep, 2) ? NF_ACCEPT : NF_DROP;
}

/* nf_nat_pptp's pptp_outbound_pkt: the PNS's call id */
static unsigned int nat_outbound(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				 struct ct_help *h, struct nftdp_vm_pkt *pkt, uint16_t msg)
{
	uint16_t new_callid = h->pptp.pns_call_id;

	switch (msg) {
	case PPTP_OUT_CALL_REQUEST:
		/* one call per control connection: its translated source
		 * port (tuple[REPLY].dst, the packet is not mangled yet) */
		h->pptp.nat_pns_call_id = h->pptp.pns_call_id;
		new_callid = e->tuple[IP_CT_DIR_REPLY].dport;
		h->pptp.pns_call_id = new_callid;
		break;
	case PPTP_IN_CALL_REPLY:      /* icack.callID */
	case PPTP_CALL_CLEAR_REQUEST: /* clrreq.callID */
		break;
	default:
		return NF_ACCEPT;
	}
	return nat_mangle_cid(s, e, pkt, IP_CT_DIR_ORIGINAL, 0, new_callid);
}

/* nf_nat_pptp's pptp_inbound_pkt: the PNS's own call id back */
static unsigned int nat_inbound(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				const struct ct_help *h, struct nftdp_vm_pkt *pkt, uint16_t msg)
{
	uint32_t pcid_off;

	switch (msg) {
	case PPTP_OUT_CALL_REPLY:
		pcid_off = 2; /* ocack.peersCallID */
		break;
	case PPTP_IN_CALL_CONNECT:	  /* iccon.peersCallID */
	case PPTP_WAN_ERROR_NOTIFY:	  /* wanerr.peersCallID */
	case PPTP_CALL_DISCONNECT_NOTIFY: /* disc.callID (sic) */
	case PPTP_SET_LINK_INFO:	  /* setlink.peersCallID */
		pcid_off = 0;
		break;
	default:
		return NF_ACCEPT;
	}
	return nat_mangle_cid(s, e, pkt, IP_CT_DIR_REPLY, pcid_off, h->pptp.nat_pns_call_id);
}

/* conntrack_pptp_help */
unsigned int nftdp_ct_pptp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	const uint8_t *th = pkt->data + pkt->th_off, *req;
	uint32_t tcplen = nftdp_ct_l4len(pkt), doff, reqlen;
	struct ct_help *h = &s->help[e - s->entries];
	uint16_t msg;

	/* don't do any tracking before tcp handshake complete */
	if (ctinfo != IP_CT_ESTABLISHED && ctinfo != IP_CT_ESTABLISHED_REPLY)
		return NF_ACCEPT;
	if (pkt->l4proto != IPPROTO_TCP || tcplen < 20)
		return NF_ACCEPT;
	doff = (uint32_t)(th[12] >> 4) * 4;
	if (doff > tcplen)
		return NF_ACCEPT;
	if (!nftdp_ct_pptp_parse(th + doff, tcplen - doff, &msg, &req, &reqlen))
		return NF_ACCEPT;
	(void)reqlen;
	if (ctinfo == IP_CT_ESTABLISHED) {
		/* client -> server (PNS -> PAC) */
		if (outbound(h, msg, req) && (e->status & IPS_NAT_MASK))
			return nat_outbound(s, e, h, pkt, msg);
	} else if (inbound(s, e, h, msg, req) && (e->status & IPS_NAT_MASK)) {
		/* server -> client (PAC -> PNS) */
		return nat_inbound(s, e, h, pkt, msg);
	}
	return NF_ACCEPT;
}
