// SPDX-License-Identifier: BSD-3-Clause
/*
 * The H.323 helpers (nf_conntrack_h323_main.c) without NAT: Q.931 (the
 * call signalling over TCP, `ct helper "Q.931"`) and H.245, the helper
 * Q.931's expectation gives the H.245 connection it announces. Each
 * segment is read as the TPKTs it holds (a TPKT header alone announces
 * the data of the next segment, as NetMeeting sends them); each TPKT is
 * decoded (helper_h323_asn1.c) and, only when the whole message decodes,
 * its addresses are expected in the kernel's order:
 * - an UUIE's h245Address (Setup, CallProceeding, Connect, Alerting,
 *   Facility, Progress): the H.245 TCP connection, helper H.245;
 * - each OpenLogicalChannel (fastStart, tunnelled h245Control, or on the
 *   H.245 connection) and OpenLogicalChannelAck: its H.225.0 media and
 *   media control channels, an RTP (even port) and RTCP (odd port) UDP
 *   pair each; its T.120 separate LAN stack (PERMANENT, TCP).
 * An address must be the sender's own and its port not 0. The kernel's
 * policies: 20 (Q.931) and 18 (H.245) expectations, 240 seconds.
 * On an IPv4 connection whose addresses NAT changes, nf_nat_h323's
 * nat_h245, nat_rtp_rtcp and nat_t120: the address is rewritten in place
 * to the one beyond the NAT with a free port (RTP/RTCP pairs remembered
 * per channel), expected there and NATed back (nf_nat_follow_master).
 * and a Setup's destination and source call signalling addresses
 * rewritten to the real peer's and the sender's beyond the NAT. RAS on
 * an IPv4 NATed connection: set_ras_addr (GRQ, RRQ, LRQ, IRR),
 * set_sig_addr (RCF, URQ, an answering ACF, IRR), nat_q931 (RRQ's calls
 * expected beyond the NAT, NATed back) and ARQ's addresses.
 * A Facility forwarding the call (reason callForwarded) expects only the
 * peer's second call to its alternativeAddress (helper Q.931), unless
 * callforward_filter's route lookups (the shard's same_route: the
 * dataplane's copy of the kernel's routes) find that address and the
 * peer on one device and next hop; through NAT (nat_callforwarding) the
 * address becomes the one beyond the NAT with a free port, and the call
 * there goes to the forward-to party (ip_nat_callforwarding_expect).
 * RAS (`ct helper "RAS"`, UDP): a RegistrationRequest expects calls
 * (Q.931, PERMANENT, helper Q.931) from the gatekeeper to the first
 * callSignalAddress of the sender's own; its Confirm sets the RAS
 * connection's timeout to the registration's time to live (RRQ's or
 * RCF's timeToLive, else 300 s); an UnregistrationRequest removes the
 * connection's expectations and gives it 30 s; a GatekeeperConfirm
 * naming another RAS address expects it (helper RAS) unless the
 * connection was itself expected; AdmissionConfirm and LocationConfirm
 * expect the call to their callSignalAddress (Q.931, PERMANENT). Policy:
 * 32 expectations, 240 seconds.
 */
#include "helper_h323.h"
#include "ct_priv.h"

#define H323_RTP_CHANNEL_MAX 4
/* every h323 helper's expectations live this long (helper.c's policies) */
#define H323_EXP_TIMEOUT_S nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_RAS, 0)
/* default_rrq_ttl: a RegistrationRequest's time to live without its own */
static const uint32_t default_rrq_ttl = 300;

/* the h323-message-body choices the kernel processes */
enum { BODY_SETUP, BODY_CALLPROC, BODY_CONNECT, BODY_ALERTING, BODY_FACILITY = 6, BODY_PROGRESS };
#define FACILITY_CALL_FORWARDED 1
#define DATATYPE_DATA 4
#define APP_T120 1
#define DPC_SEPARATE_LAN_STACK 10 /* an extension alternative */
#define NETADDR_LOCAL_AREA 2

struct h323_ctx {
	struct nftdp_ct_shard *s;
	struct nftdp_ct_entry *e;
	struct nftdp_vm_pkt *pkt; /* TCP (Q.931, H.245) for nf_nat_h323, else NULL */
	uint32_t doff;		  /* the TPKT payload's offset in the TCP payload */
	int dir;
	uint32_t max_expected;
	const uint8_t *data; /* the TPKT's payload */
	uint32_t len;
};

/* get_h225_addr / get_h245_addr: the address at an event's offset, its
 * port after it, in the connection's family; false otherwise */
static bool read_addr(const struct h323_ctx *c, const struct h323_event *ev,
		      union nftdp_ct_addr *addr, uint16_t *port_be)
{
	uint32_t n = ev->tag == H323_EV_IP4 ? 4 : 16;
	uint8_t l3 = c->e->tuple[0].l3proto;

	if ((ev->tag == H323_EV_IP4) != (l3 == NFPROTO_IPV4))
		return false;
	if (ev->val > c->len || c->len - ev->val < n + 2)
		return false;
	memset(addr, 0, sizeof(*addr));
	memcpy(addr->u8, c->data + ev->val, n);
	memcpy(port_be, c->data + ev->val + n, 2);
	return true;
}

static bool own_addr(const struct h323_ctx *c, const union nftdp_ct_addr *a)
{
	return !memcmp(a, &c->e->tuple[c->dir].src, sizeof(*a));
}

/* whether nf_nat_h323 rewrites what this direction announces */
static bool nat_needed(const struct h323_ctx *c)
{
	const struct nftdp_ct_entry *e = c->e;

	return memcmp(&e->tuple[c->dir].src, &e->tuple[!c->dir].dst, sizeof(e->tuple[0].src)) &&
	       e->tuple[0].l3proto == NFPROTO_IPV4 && (e->status & IPS_NAT_MASK);
}

static void init_exp(const struct h323_ctx *c, struct ct_expect *x, uint8_t proto, uint16_t port_be)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[!c->dir];

	nftdp_ct_expect_init(x, t->l3proto, &t->src, &t->dst, proto, 0, port_be);
}

static int related(const struct h323_ctx *c, struct ct_expect *x)
{
	return nftdp_ct_expect_related(c->s, c->e, x, c->max_expected, H323_EXP_TIMEOUT_S) ? -1 : 0;
}

/* nf_nat_h323's set_addr: the address and port at ip's offset become
 * addr:port (same length, in place); 0 or -1 */
static int set_addr(const struct h323_ctx *c, const struct h323_event *ip,
		    const union nftdp_ct_addr *addr, uint16_t port_be)
{
	char buf[6];

	memcpy(buf, &addr->ip, 4);
	memcpy(buf + 4, &port_be, 2);
	if (c->pkt && c->pkt->l4proto == IPPROTO_UDP) {
		if (!nftdp_ct_nat_mangle_udp(c->s, c->pkt, c->doff + ip->val, sizeof(buf), buf,
					     sizeof(buf)))
			return -1; /* "nf_nat_mangle_udp_packet error" */
		return 0;
	}
	if (!c->pkt || !nftdp_ct_nat_mangle_tcp(c->s, c->e, c->pkt, c->dir, c->doff + ip->val,
						sizeof(buf), buf, sizeof(buf)))
		return -1; /* "nf_nat_mangle_tcp_packet error" */
	return 0;
}

/* nf_nat_exp_find_port (nat_h245, nat_t120, nat_q931,
 * nat_callforwarding): the port, else up to 128 random ones above it;
 * the port or 0 */
static uint16_t nat_find_port(const struct h323_ctx *c, struct ct_expect *x, uint16_t nated)
{
	return nftdp_ct_nat_exp_find_port(c->s, c->e, x, nated, c->max_expected,
					  H323_EXP_TIMEOUT_S);
}

/* nat_h245: expected at the address beyond the NAT, a free port from
 * the announced one (the one given before for the same port), NATed back
 * to the sender (nf_nat_follow_master); the message rewritten */
static int nat_h245(const struct h323_ctx *c, const struct h323_event *ip, uint16_t port,
		    struct ct_expect *x)
{
	struct ct_help *h = &c->s->help[c->e - c->s->entries];
	uint16_t nated = ntohs(port);

	nftdp_ct_expect_set_nat(x, c->e, !c->dir, port);
	if (h->h323_sig_port[c->dir] == port)
		nated = ntohs(h->h323_sig_port[!c->dir]);
	nated = nat_find_port(c, x, nated);
	if (!nated)
		return 0; /* "out of TCP ports" */
	if (set_addr(c, ip, &c->e->tuple[!c->dir].dst, htons(nated))) {
		nftdp_ct_expect_unexpect(c->s, c->e, x);
		return -1;
	}
	h->h323_sig_port[c->dir] = port;
	h->h323_sig_port[!c->dir] = htons(nated);
	return 0;
}

/* nat_t120 */
static int nat_t120(const struct h323_ctx *c, const struct h323_event *ip, uint16_t port,
		    struct ct_expect *x)
{
	uint16_t nated;

	nftdp_ct_expect_set_nat(x, c->e, !c->dir, port);
	nated = nat_find_port(c, x, ntohs(port));
	if (!nated)
		return 0;
	if (set_addr(c, ip, &c->e->tuple[!c->dir].dst, htons(nated))) {
		nftdp_ct_expect_unexpect(c->s, c->e, x);
		return -1;
	}
	return 0;
}

/* nat_rtp_rtcp: the pair at the ports given before for the same RTP port
 * (up to 4 channels per direction), else a free even/odd pair from the
 * announced one; the address the master sends to beyond the NAT */
static int nat_rtp_rtcp(const struct h323_ctx *c, const struct h323_event *ip, uint16_t port,
			uint16_t rtp_port, struct ct_expect *rtp, struct ct_expect *rtcp)
{
	struct ct_help *h = &c->s->help[c->e - c->s->entries];
	uint16_t nated;
	int i;

	nftdp_ct_expect_set_nat(rtp, c->e, !c->dir, rtp->tuple.dport);
	nftdp_ct_expect_set_nat(rtcp, c->e, !c->dir, rtcp->tuple.dport);
	for (i = 0; i < H323_RTP_CHANNEL_MAX; i++) {
		if (h->h323_rtp_port[i][c->dir] == rtp_port) {
			/* the ports given before: the expectations refreshed */
			rtp->tuple.dport = h->h323_rtp_port[i][!c->dir];
			rtcp->tuple.dport = htons(ntohs(h->h323_rtp_port[i][!c->dir]) + 1);
			break;
		}
		if (h->h323_rtp_port[i][c->dir] == 0)
			break;
	}
	if (i >= H323_RTP_CHANNEL_MAX)
		return 0; /* "out of expectations" */
	for (nated = ntohs(rtp->tuple.dport); nated != 0; nated += 2) {
		int rc;

		rtp->tuple.dport = htons(nated);
		rc = nftdp_ct_expect_related(c->s, c->e, rtp, c->max_expected, H323_EXP_TIMEOUT_S);
		if (rc == 0) {
			rtcp->tuple.dport = htons((uint16_t)(nated + 1));
			rc = nftdp_ct_expect_related(c->s, c->e, rtcp, c->max_expected,
						     H323_EXP_TIMEOUT_S);
			if (rc == 0)
				break;
			if (rc != -EBUSY) {
				nftdp_ct_expect_unexpect(c->s, c->e, rtp);
				nated = 0;
				break;
			}
		} else if (rc != -EBUSY) {
			nated = 0;
			break;
		}
	}
	if (nated == 0)
		return 0; /* "out of RTP ports" */
	if (set_addr(c, ip, &c->e->tuple[!c->dir].dst,
		     htons((port & htons(1)) ? (uint16_t)(nated + 1) : nated))) {
		nftdp_ct_expect_unexpect(c->s, c->e, rtp);
		nftdp_ct_expect_unexpect(c->s, c->e, rtcp);
		return -1;
	}
	h->h323_rtp_port[i][c->dir] = rtp_port;
	h->h323_rtp_port[i][!c->dir] = htons(nated);
	return 0;
}

/* callforward_filter (the module parameter, on by default) and
 * callforward_do_filter: the caller and the forward-to party on the same
 * side (the output routes to both leave by the same device to the same
 * next hop): the second call is not tracked */
static bool callforward_filtered(const struct h323_ctx *c, const union nftdp_ct_addr *to)
{
	const struct nftdp_ct_config *cfg = &c->s->cfg;

	return cfg->same_route && cfg->same_route(cfg->same_route_arg, c->e->tuple[0].l3proto, to,
						  &c->e->tuple[!c->dir].src);
}

/* nat_callforwarding: expected at the address beyond the NAT, a free port
 * from the announced one; the call that comes there goes to the
 * forward-to party at its port and, from where the master sends to
 * (ip_nat_callforwarding_expect: the new connection's tuple of direction
 * dir, its own source when the Facility came in the original direction,
 * else the address it called); the message rewritten */
static int nat_callforwarding(const struct h323_ctx *c, const struct h323_event *ip, uint16_t port,
			      struct ct_expect *x)
{
	union nftdp_ct_addr to = x->tuple.dst;
	uint16_t nated;

	nftdp_ct_expect_set_nat(x, c->e, !c->dir, port);
	x->tuple.dst = c->e->tuple[!c->dir].dst;
	x->nat_callfwd = true;
	x->nat_dst = to;
	x->nat_src = c->dir == IP_CT_DIR_ORIGINAL ? x->tuple.src : x->tuple.dst;
	nated = nat_find_port(c, x, ntohs(port));
	if (!nated)
		return 0; /* "out of TCP ports" */
	if (set_addr(c, ip, &c->e->tuple[!c->dir].dst, htons(nated))) {
		nftdp_ct_expect_unexpect(c->s, c->e, x);
		return -1;
	}
	return 0;
}

/* expect_callforwarding: a Facility forwarding the call expects the
 * second call from the peer to its alternativeAddress (helper Q.931) */
static int expect_callforwarding(const struct h323_ctx *c, const struct h323_event *ip)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[!c->dir];
	union nftdp_ct_addr a;
	struct ct_expect x;
	uint16_t port;

	if (!read_addr(c, ip, &a, &port) || !port)
		return 0;
	if (callforward_filtered(c, &a))
		return 0; /* "Call Forwarding not tracked" */
	nftdp_ct_expect_init(&x, t->l3proto, &t->src, &a, IPPROTO_TCP, 0, port);
	x.exp_helper = NFTDP_VM_CT_HELPER_Q931;
	if (nat_needed(c))
		return nat_callforwarding(c, ip, port, &x);
	return related(c, &x);
}

/* process_setup's set_h225_addr under NAT: the destination's call
 * signalling address as the sender sees it becomes the peer's real one,
 * the source's the sender's beyond the NAT */
static int set_call_signal_addr(const struct h323_ctx *c, const struct h323_event *ip, bool dest)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[!c->dir];
	const union nftdp_ct_addr *to = dest ? &t->src : &t->dst;
	union nftdp_ct_addr a;
	uint16_t port;

	if (t->l3proto != NFPROTO_IPV4 || !(c->e->status & IPS_NAT_MASK) || !c->pkt ||
	    !read_addr(c, ip, &a, &port) || !memcmp(&a, to, sizeof(a)))
		return 0;
	return set_addr(c, ip, to, dest ? t->sport : t->dport);
}

/* expect_h245 */
static int expect_h245(const struct h323_ctx *c, const struct h323_event *ip)
{
	union nftdp_ct_addr a;
	struct ct_expect x;
	uint16_t port;

	if (!read_addr(c, ip, &a, &port) || !own_addr(c, &a) || !port)
		return 0;
	init_exp(c, &x, IPPROTO_TCP, port);
	x.exp_helper = NFTDP_VM_CT_HELPER_H245;
	if (nat_needed(c))
		return nat_h245(c, ip, port, &x);
	return related(c, &x);
}

/* expect_rtp_rtcp */
static int expect_rtp_rtcp(const struct h323_ctx *c, const struct h323_event *ip)
{
	union nftdp_ct_addr a;
	struct ct_expect rtp, rtcp;
	uint16_t port;

	if (!read_addr(c, ip, &a, &port) || !own_addr(c, &a) || !port)
		return 0;
	init_exp(c, &rtp, IPPROTO_UDP, port & ~htons(1));
	init_exp(c, &rtcp, IPPROTO_UDP, port | htons(1));
	if (nat_needed(c))
		return nat_rtp_rtcp(c, ip, port, port & ~htons(1), &rtp, &rtcp);
	if (related(c, &rtp))
		return -1;
	if (related(c, &rtcp)) {
		nftdp_ct_expect_unexpect(c->s, c->e, &rtp);
		return -1;
	}
	return 0;
}

/* expect_t120 */
static int expect_t120(const struct h323_ctx *c, const struct h323_event *ip)
{
	union nftdp_ct_addr a;
	struct ct_expect x;
	uint16_t port;

	if (!read_addr(c, ip, &a, &port) || !own_addr(c, &a) || !port)
		return 0;
	init_exp(c, &x, IPPROTO_TCP, port);
	x.flags = NF_CT_EXPECT_PERMANENT;
	if (nat_needed(c))
		return nat_t120(c, ip, port, &x);
	return related(c, &x);
}

/* the address events that follow a TransportAddress' choice event at i:
 * the one of its choice, if it is an IP one (H.225: ipAddress 0,
 * ip6Address 3; H.245: unicastAddress 0 then iPAddress 0, iP6Address 2) */
static const struct h323_event *addr_after(const struct h323_events *ev, uint32_t i, bool h245)
{
	if (h245) {
		if (ev->ev[i].val != 0 || i + 1 >= ev->n || ev->ev[i + 1].tag != H323_EV_UNICAST)
			return NULL;
		i++;
		if (ev->ev[i].val != 0 && ev->ev[i].val != 2)
			return NULL;
	} else if (ev->ev[i].val != 0 && ev->ev[i].val != 3) {
		return NULL;
	}
	if (i + 1 < ev->n && (ev->ev[i + 1].tag == H323_EV_IP4 || ev->ev[i + 1].tag == H323_EV_IP6))
		return &ev->ev[i + 1];
	return NULL;
}

/* process_q931 / process_h245 over the decoded events: < 0 drops */
static int process(const struct h323_ctx *c, const struct h323_events *ev)
{
	uint32_t body = UINT32_MAX, reason = UINT32_MAX;
	const struct h323_event *altaddr = NULL; /* Facility's alternativeAddress */
	uint32_t datatype = UINT32_MAX, app = UINT32_MAX, dpc = UINT32_MAX;
	/* the current OpenLogicalChannel(Ack), its T.120 address (expected
	 * after its media channels, as process_olc/process_olca do) */
	bool olc = false, olca = false, t120 = false, skip = false;
	const struct h323_event *ip, *t120_ip = NULL;

	for (uint32_t i = 0; i <= ev->n; i++) {
		const struct h323_event *v = i < ev->n ? &ev->ev[i] : NULL;
		uint8_t tag = v ? v->tag : H323_EV_NONE;

		if (t120_ip &&
		    (!v || tag == H323_EV_OLC || tag == H323_EV_OLCA || tag == H323_EV_TUNNEL)) {
			if (expect_t120(c, t120_ip) < 0)
				return -1;
			t120_ip = NULL;
		}
		if (skip && tag != H323_EV_TUNNEL)
			continue;
		switch (tag) {
		case H323_EV_BODY:
			body = v->val;
			break;
		case H323_EV_ALTADDR:
			altaddr = addr_after(ev, i, false);
			break;
		case H323_EV_REASON:
			/* a Facility forwarding the call: its alternativeAddress,
			 * nothing else of its body */
			reason = v->val;
			skip = body == BODY_FACILITY && reason == FACILITY_CALL_FORWARDED;
			if (skip && altaddr && expect_callforwarding(c, altaddr) < 0)
				return -1;
			break;
		case H323_EV_TUNNEL:
			skip = false;
			break;
		case H323_EV_H245ADDR:
			ip = addr_after(ev, i, false);
			if (ip && expect_h245(c, ip) < 0)
				return -1;
			break;
		case H323_EV_DESTCSA:
		case H323_EV_SRCCSA:
			ip = addr_after(ev, i, false);
			if (ip && set_call_signal_addr(c, ip, tag == H323_EV_DESTCSA) < 0)
				return -1;
			break;
		case H323_EV_OLC:
		case H323_EV_OLCA:
			olc = tag == H323_EV_OLC;
			olca = !olc;
			datatype = app = dpc = UINT32_MAX;
			t120 = false;
			break;
		case H323_EV_DATATYPE:
			datatype = v->val;
			break;
		case H323_EV_APP:
			app = v->val;
			break;
		case H323_EV_T120:
			dpc = v->val;
			break;
		case H323_EV_SEPSTACK:
			t120 = olca || (olc && datatype == DATATYPE_DATA && app == APP_T120 &&
					dpc == DPC_SEPARATE_LAN_STACK);
			break;
		case H323_EV_NETADDR:
			if (v->val != NETADDR_LOCAL_AREA)
				t120 = false;
			break;
		case H323_EV_LAN:
			if (t120)
				t120_ip = addr_after(ev, i, true);
			break;
		case H323_EV_MEDIA:
		case H323_EV_MEDIACTL:
			ip = addr_after(ev, i, true);
			if (ip && expect_rtp_rtcp(c, ip) < 0)
				return -1;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* get_tpkt_data: the next TPKT of the segment from *off; its payload in
 * *doff, *dlen; false when there is none (tpkt_len[dir] as the kernel's) */
static bool next_tpkt(struct ct_help *h, int dir, const uint8_t *d, uint32_t n, bool first,
		      uint32_t *off, uint32_t *doff, uint32_t *dlen)
{
	uint32_t tpktlen, rest;
	const uint8_t *t;

	if (n == 0)
		goto clear;
	if (first) {
		if (n < 4 || d[0] != 0x03 || d[1] != 0) {
			if (h->h323_tpkt_len[dir] > 0) {
				if (h->h323_tpkt_len[dir] <= n) {
					*doff = 0;
					*dlen = h->h323_tpkt_len[dir];
					h->h323_tpkt_len[dir] = 0;
					return true;
				}
				goto clear; /* a fragmented TPKT */
			}
			return false;
		}
		*off = 0;
	} else {
		*off = *doff + *dlen;
		if (*off >= n || n - *off <= 4)
			goto clear;
		if (d[*off] != 0x03 || d[*off + 1] != 0)
			goto clear;
	}
	rest = n - *off;
	t = d + *off;
	tpktlen = (uint32_t)t[2] << 8 | t[3];
	if (tpktlen < 4)
		goto clear;
	if (tpktlen > rest) {
		if (rest == 4) { /* a TPKT header alone: its data follows */
			h->h323_tpkt_len[dir] = (uint16_t)(tpktlen - 4);
			return false;
		}
		goto clear;
	}
	*doff = *off + 4;
	*dlen = tpktlen - 4;
	h->h323_tpkt_len[dir] = 0;
	return true;
clear:
	h->h323_tpkt_len[dir] = 0;
	return false;
}

/* q931_help and h245_help */
static unsigned int h323_tcp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				  struct nftdp_vm_pkt *pkt, unsigned int ctinfo, bool q931)
{
	uint32_t l4len = nftdp_ct_l4len(pkt), dataoff, n, off = 0, doff = 0, dlen = 0;
	const uint8_t *th = pkt->data + pkt->th_off;
	struct ct_help *h = &s->help[e - s->entries];
	struct h323_events ev;
	struct h323_ctx c;
	bool first = true;

	if (ctinfo != IP_CT_ESTABLISHED && ctinfo != IP_CT_ESTABLISHED_REPLY)
		return NF_ACCEPT;
	/* skb_header_pointer of a TCP header: an H.245 object on a UDP
	 * connection reads the datagram so, as the kernel */
	if (l4len < 20)
		return NF_ACCEPT;
	dataoff = (uint32_t)(th[12] >> 4) * 4;
	/* no data (the header's length past the packet too): no TPKT, and a
	 * TPKT header seen before is forgotten */
	n = dataoff < l4len ? l4len - dataoff : 0;
	c.s = s;
	c.e = e;
	c.pkt = pkt->l4proto == IPPROTO_TCP ? pkt : NULL;
	c.dir = ctinfo == IP_CT_ESTABLISHED_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
	c.max_expected =
	    nftdp_ct_exp_max(q931 ? NFTDP_VM_CT_HELPER_Q931 : NFTDP_VM_CT_HELPER_H245, 0);
	while (next_tpkt(h, c.dir, th + dataoff, n, first, &off, &doff, &dlen)) {
		int rc;

		first = false;
		c.data = th + dataoff + doff;
		c.doff = doff;
		c.len = dlen;
		rc = q931 ? nftdp_h323_decode_q931(c.data, dlen, &ev)
			  : nftdp_h323_decode_h245(c.data, dlen, &ev);
		if (rc < H323_OK)
			break; /* "We don't drop when decoding error" */
		if (process(&c, &ev) < 0)
			return NF_DROP;
	}
	return NF_ACCEPT;
}

unsigned int nftdp_ct_q931_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	return h323_tcp_help(s, e, pkt, ctinfo, true);
}

unsigned int nftdp_ct_h245_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	return h323_tcp_help(s, e, pkt, ctinfo, false);
}

/* the RasMessage choices the kernel processes */
enum {
	RAS_GRQ = 0,
	RAS_GCF = 1,
	RAS_RRQ = 3,
	RAS_RCF = 4,
	RAS_URQ = 6,
	RAS_ARQ = 9,
	RAS_ACF = 10,
	RAS_LRQ = 18,
	RAS_LCF = 19,
	RAS_IRR = 22
};
#define RAS_ITEMS 10 /* a SEQUENCE OF TransportAddress the kernel keeps */

/* nf_nat_h323 applies to RAS on any IPv4 NATed connection */
static bool ras_nat(const struct h323_ctx *c)
{
	return c->e->tuple[0].l3proto == NFPROTO_IPV4 && (c->e->status & IPS_NAT_MASK);
}

/* the TransportAddresses of a tag in order: each one's address event
 * (NULL when not an IP one); their number */
static uint32_t items(const struct h323_events *ev, uint8_t tag, const struct h323_event **out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ev->n && n < RAS_ITEMS; i++)
		if (ev->ev[i].tag == tag)
			out[n++] = addr_after(ev, i, false);
	return n;
}

static bool is_loopback(const struct h323_ctx *c, const struct h323_event *ip)
{
	union nftdp_ct_addr a;
	uint16_t port;

	return ip && read_addr(c, ip, &a, &port) && (ntohl(a.ip) & 0xff000000) == 0x7f000000;
}

/* set_ras_addr: the first one that is the sender's own address and port
 * becomes the address and port beyond the NAT */
static int set_ras_addr(const struct h323_ctx *c, const struct h323_event **it, uint32_t n)
{
	const struct nftdp_ct_tuple *t = c->e->tuple;
	union nftdp_ct_addr a;
	uint16_t port;

	for (uint32_t i = 0; i < n; i++)
		if (it[i] && read_addr(c, it[i], &a, &port) && a.ip == t[c->dir].src.ip &&
		    port == t[c->dir].sport)
			return set_addr(c, it[i], &t[!c->dir].dst, t[!c->dir].dport);
	return 0;
}

/* set_sig_addr: the first call signalling address at the port the
 * registration announced, as the other side knows it */
static int set_sig_addr(const struct h323_ctx *c, const struct h323_event **it, uint32_t n)
{
	const struct ct_help *h = &c->s->help[c->e - c->s->entries];
	const struct nftdp_ct_tuple *t = c->e->tuple;
	union nftdp_ct_addr a;
	uint16_t port;

	for (uint32_t i = 0; i < n; i++) {
		if (!it[i] || !read_addr(c, it[i], &a, &port) || port != h->h323_sig_port[c->dir])
			continue;
		if (a.ip == t[c->dir].src.ip) { /* GW->GK */
			/* "Fix for Gnomemeeting": a loopback first address */
			if (i > 0 && is_loopback(c, it[0]))
				i = 0;
			return set_addr(c, it[i], &t[!c->dir].dst, h->h323_sig_port[!c->dir]);
		}
		if (a.ip == t[c->dir].dst.ip) /* GK->GW */
			return set_addr(c, it[i], &t[!c->dir].src, h->h323_sig_port[!c->dir]);
	}
	return 0;
}

/* nat_q931: the RRQ's call signalling address beyond the NAT, a free
 * port from it (the one given before for the same port), the calls NATed
 * back (ip_nat_q931_expect with gkrouted_only: nf_nat_follow_master) */
static int nat_q931(const struct h323_ctx *c, const struct h323_event **it, uint32_t idx,
		    uint16_t port)
{
	struct ct_help *h = &c->s->help[c->e - c->s->entries];
	const struct nftdp_ct_tuple *t = c->e->tuple;
	uint16_t nated = ntohs(port);
	struct ct_expect x;

	nftdp_ct_expect_init(&x, t[0].l3proto, &t[!c->dir].src, &t[!c->dir].dst, IPPROTO_TCP, 0,
			     port);
	x.exp_helper = NFTDP_VM_CT_HELPER_Q931;
	x.flags = NF_CT_EXPECT_PERMANENT;
	nftdp_ct_expect_set_nat(&x, c->e, !c->dir, port);
	x.nat_q931 = true; /* ip_nat_q931_expect: a gatekeeper's call follows */
	if (h->h323_sig_port[c->dir] == port)
		nated = ntohs(h->h323_sig_port[!c->dir]);
	nated = nat_find_port(c, &x, nated);
	if (!nated)
		return 0; /* "out of TCP ports" */
	if (set_addr(c, it[idx], &t[!c->dir].dst, htons(nated))) {
		nftdp_ct_expect_unexpect(c->s, c->e, &x);
		return -1;
	}
	h->h323_sig_port[c->dir] = port;
	h->h323_sig_port[!c->dir] = htons(nated);
	/* "Fix for Gnomemeeting" */
	if (idx > 0 && is_loopback(c, it[0]))
		set_addr(c, it[0], &t[!c->dir].dst, h->h323_sig_port[!c->dir]);
	return 0;
}

/* an expectation of the call signalling (Q.931) from the other side's
 * address (or any) to addr, port: expect_q931, process_acf, process_lcf */
static int expect_call(const struct h323_ctx *c, const union nftdp_ct_addr *src,
		       const union nftdp_ct_addr *dst, uint16_t port)
{
	struct ct_expect x;

	nftdp_ct_expect_init(&x, c->e->tuple[0].l3proto, src, dst, IPPROTO_TCP, 0, port);
	x.exp_helper = NFTDP_VM_CT_HELPER_Q931;
	x.flags = NF_CT_EXPECT_PERMANENT;
	return related(c, &x);
}

static void refresh(const struct h323_ctx *c, uint32_t timeout_s)
{
	if (!(c->e->status & IPS_FIXED_TIMEOUT))
		c->e->expires_ms = c->s->now_ms + (uint64_t)timeout_s * 1000u;
}

/* process_ras over the decoded events: < 0 drops */
static int process_ras(const struct h323_ctx *c, const struct h323_events *ev)
{
	const struct nftdp_ct_tuple *t = c->e->tuple;
	struct ct_help *h = &c->s->help[c->e - c->s->entries];
	uint32_t msg = ev->n && ev->ev[0].tag == H323_EV_RAS ? ev->ev[0].val : UINT32_MAX;
	const struct h323_event *it[RAS_ITEMS], *ras[RAS_ITEMS], *ip = NULL;
	uint32_t n, nras, ttl = 0;
	union nftdp_ct_addr a;
	struct ct_expect x;
	bool has_ttl = false;
	uint16_t port;

	for (uint32_t i = 0; i < ev->n; i++) {
		if (ev->ev[i].tag == H323_EV_TTL) {
			ttl = ev->ev[i].val;
			has_ttl = true;
		}
	}
	nras = items(ev, H323_EV_RASNAT, ras);
	switch (msg) {
	case RAS_GRQ:
	case RAS_LRQ:
		return ras_nat(c) ? set_ras_addr(c, ras, nras) : 0;
	case RAS_GCF:
		n = items(ev, H323_EV_RASADDR, it);
		if (!n || !it[0] || !read_addr(c, it[0], &a, &port))
			return 0;
		/* the registration port is the discovery port */
		if (own_addr(c, &a) && port == t[c->dir].sport)
			return 0;
		/* no RAS expectation loops: a GCF is never expected */
		if (c->e->status & IPS_EXPECTED)
			return 0;
		nftdp_ct_expect_init(&x, t[0].l3proto, &t[!c->dir].src, &a, IPPROTO_UDP, 0, port);
		x.exp_helper = NFTDP_VM_CT_HELPER_RAS;
		return related(c, &x);
	case RAS_RRQ: {
		uint32_t k;

		/* expect_q931: the first callSignalAddress of the sender's */
		n = items(ev, H323_EV_RASADDR, it);
		for (k = 0; k < n; k++)
			if (it[k] && read_addr(c, it[k], &a, &port) && own_addr(c, &a) && port)
				break;
		if (k < n) {
			if (ras_nat(c)) {
				if (nat_q931(c, it, k, port) < 0)
					return -1;
			} else {
				/* gkrouted_only: only from the gatekeeper */
				if (expect_call(c, &t[!c->dir].src, &t[!c->dir].dst, port) < 0)
					return -1;
				h->h323_sig_port[c->dir] = port;
			}
		}
		if (ras_nat(c) && set_ras_addr(c, ras, nras) < 0)
			return -1;
		h->h323_timeout = has_ttl ? ttl : default_rrq_ttl;
		return 0;
	}
	case RAS_RCF:
		n = items(ev, H323_EV_SIGADDR, it);
		if (ras_nat(c) && set_sig_addr(c, it, n) < 0)
			return -1;
		if (has_ttl)
			h->h323_timeout = ttl;
		/* the kernel also looks for the Q.931 expectation by a tuple
		 * without the gatekeeper's address, which the expectation
		 * (gkrouted_only) never matches: its timeout stays */
		if (h->h323_timeout > 0)
			refresh(c, h->h323_timeout);
		return 0;
	case RAS_URQ:
		n = items(ev, H323_EV_SIGADDR, it);
		if (ras_nat(c) && set_sig_addr(c, it, n) < 0)
			return -1;
		nftdp_ct_expect_remove_master(c->s, c->e);
		h->h323_sig_port[0] = h->h323_sig_port[1] = 0;
		refresh(c, 30);
		return 0;
	case RAS_ARQ:
		if (!ras_nat(c))
			return 0;
		/* an answering ARQ: the destination is the sender at its
		 * registered port; a calling one: the source is the sender */
		if (items(ev, H323_EV_DESTCSA, it) && it[0] && read_addr(c, it[0], &a, &port) &&
		    a.ip == t[c->dir].src.ip && port == h->h323_sig_port[c->dir])
			return set_addr(c, it[0], &t[!c->dir].dst, h->h323_sig_port[!c->dir]);
		if (items(ev, H323_EV_SRCCSA, it) && it[0] && read_addr(c, it[0], &a, &port) &&
		    a.ip == t[c->dir].src.ip)
			return set_addr(c, it[0], &t[!c->dir].dst, port);
		return 0;
	case RAS_ACF:
	case RAS_LCF:
		n = items(ev, H323_EV_RASADDR, it);
		if (!n || !it[0] || !read_addr(c, it[0], &a, &port))
			return 0;
		ip = it[0];
		/* an answering ACF: only NAT has to do with it */
		if (msg == RAS_ACF && !memcmp(&a, &t[c->dir].dst, sizeof(a)))
			return ras_nat(c) ? set_sig_addr(c, &ip, 1) : 0;
		return expect_call(c, &t[!c->dir].src, &a, port);
	case RAS_IRR:
		if (!ras_nat(c))
			return 0;
		if (set_ras_addr(c, ras, nras) < 0)
			return -1;
		n = items(ev, H323_EV_SIGADDR, it);
		return set_sig_addr(c, it, n) < 0 ? -1 : 0;
	default:
		return 0;
	}
}

/* ras_help: every packet's UDP payload */
unsigned int nftdp_ct_ras_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	uint32_t l4len = nftdp_ct_l4len(pkt);
	struct h323_events ev;
	struct h323_ctx c;

	if (pkt->l4proto != IPPROTO_UDP || l4len <= 8)
		return NF_ACCEPT;
	c.s = s;
	c.e = e;
	c.pkt = pkt;
	c.doff = 0;
	c.dir = ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
	c.max_expected = nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_RAS, 0);
	c.data = pkt->data + pkt->th_off + 8;
	c.len = l4len - 8;
	if (nftdp_h323_decode_ras(c.data, c.len, &ev) < H323_OK)
		return NF_ACCEPT;
	return process_ras(&c, &ev) < 0 ? NF_DROP : NF_ACCEPT;
}
