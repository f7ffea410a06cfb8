// SPDX-License-Identifier: BSD-3-Clause
/*
 * The irc helper (nf_conntrack_irc.c, IPv4): a client's PRIVMSG whose
 * message is a DCC CHAT/SEND/MOVE/TSEND/SCHAT offer ("\1DCC SEND name
 * ADDR PORT\1\n") expects a TCP connection from anywhere to the address
 * and port offered. Only the first 4095 bytes of a segment are read, and
 * every read stays inside the segment. On a NATed connection the offer is
 * rewritten as nf_nat_irc does: the client's address beyond the NAT and
 * the port expected there, with the sequence adjustment (seqadj.c).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <strings.h>

#include "ct_priv.h"

#define IRC_MAX_SEARCH 4095 /* MAX_SEARCH_SIZE */
#define IRC_MINMATCHLEN 5

static const struct {
	const char *s;
	uint32_t len;
} dccprotos[] = {{"SEND ", 5}, {"CHAT ", 5}, {"MOVE ", 5}, {"TSEND ", 6}, {"SCHAT ", 6}};

/* parse_dcc: from i (after the DCC type) "ARG ADDR PORT" before a \n of
 * the segment; 0 and the values, or -1 */
static int parse_dcc(const char *d, uint32_t n, uint32_t i, uint32_t *ip, uint16_t *port,
		     uint32_t *beg, uint32_t *end)
{
	uint32_t t;

	if (i >= n)
		return -1;
	/* at least 12 bytes after the argument: "AAAAAAAA P\1\n" */
	while (d[i++] != ' ')
		if (i + 12 > n)
			return -1;
	/* the kernel also looks one byte past the segment; nftdp does not */
	for (t = i; t < n && d[t] != '\n'; t++)
		;
	if (t == n)
		return -1;
	*beg = i;
	*ip = nftdp_ct_strtou32(d, n, &i);
	while (d[i] == ' ')
		i++; /* stops at the \n at the latest */
	*port = (uint16_t)nftdp_ct_strtou32(d, n, &i);
	*end = i;
	return 0;
}

/* nf_nat_irc: the data connection comes from the server, NATed as the
 * master (nf_nat_follow_master); the offer names the client's address as
 * the server sees it and the port found free there */
static unsigned int nat_irc(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			    struct nftdp_vm_pkt *pkt, const struct ct_irc_dcc *dcc,
			    struct ct_expect *x)
{
	char buf[sizeof("4294967296 65635")];
	uint16_t port;
	int n;

	nftdp_ct_expect_set_nat(x, e, IP_CT_DIR_REPLY, htons(dcc->port));
	port = nftdp_ct_nat_exp_find_port(s, e, x, dcc->port,
					  nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_IRC, 0),
					  nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_IRC, 0));
	if (!port)
		return NF_DROP; /* "all ports in use" */
	n = snprintf(buf, sizeof(buf), "%u %u", ntohl(e->tuple[IP_CT_DIR_REPLY].dst.ip), port);
	if (n > 0 && (size_t)n < sizeof(buf) &&
	    nftdp_ct_nat_mangle_tcp(s, e, pkt, IP_CT_DIR_ORIGINAL, dcc->beg, dcc->end - dcc->beg,
				    buf, (uint32_t)n))
		return NF_ACCEPT;
	/* "cannot mangle packet": nf_ct_unexpect_related */
	nftdp_ct_expect_delete(s, &x->tuple, x->id);
	return NF_DROP;
}

int nftdp_ct_irc_parse(const char *d, uint32_t n, uint32_t ip1, uint32_t ip2,
		       struct ct_irc_dcc *out)
{
	uint32_t i = 0;

	/* skip blanks, then the message must be a PRIVMSG */
	while (i + 10 < n && (d[i] == ' ' || d[i] == '\r' || d[i] == '\n'))
		i++;
	if (i + 10 < n) {
		if (strncasecmp("PRIVMSG ", d + i, 8))
			return 0;
		i += 8;
	}
	/* strlen(" :\1DCC SENT t AAAAAAAA P\1\n") = 26 */
	while (i + 21 + IRC_MINMATCHLEN < n) {
		if (memcmp(d + i, " :", 2)) {
			i++;
			continue;
		}
		i += 2;
		/* the message starts there or it is not a DCC */
		if (memcmp(d + i, "\1DCC ", 5))
			return 0;
		i += 5;
		for (unsigned int k = 0; k < sizeof(dccprotos) / sizeof(dccprotos[0]); k++) {
			/* past the segment: the kernel compares stale buffer
			 * bytes there, nftdp no match */
			if (i + dccprotos[k].len > n ||
			    memcmp(d + i, dccprotos[k].s, dccprotos[k].len))
				continue;
			/* as the kernel: the position stays past a type that
			 * then fails to parse */
			i += dccprotos[k].len;
			if (parse_dcc(d, n, i, &out->ip, &out->port, &out->beg, &out->end))
				continue;
			out->ip = htonl(out->ip);
			/* another address than the client's (either side of
			 * a NAT), or port 0: forged, the kernel goes on */
			if ((out->ip != ip1 && out->ip != ip2) || out->port == 0)
				continue;
			return 1;
		}
	}
	return 0;
}

unsigned int nftdp_ct_irc_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	uint32_t l4len = nftdp_ct_l4len(pkt), dataoff, n;
	const uint8_t *th = pkt->data + pkt->th_off;
	const struct nftdp_ct_tuple *o = &e->tuple[IP_CT_DIR_ORIGINAL];
	const struct nftdp_ct_tuple *r = &e->tuple[IP_CT_DIR_REPLY];
	struct ct_irc_dcc dcc;
	struct ct_expect x;
	const char *d;

	/* only the client's messages, once there has been traffic both ways */
	if (ctinfo != IP_CT_ESTABLISHED)
		return NF_ACCEPT;
	if (pkt->l4proto != IPPROTO_TCP || l4len < 20)
		return NF_ACCEPT;
	dataoff = (uint32_t)(th[12] >> 4) * 4;
	if (dataoff >= l4len)
		return NF_ACCEPT;
	n = l4len - dataoff;
	if (n > IRC_MAX_SEARCH)
		n = IRC_MAX_SEARCH;
	d = (const char *)th + dataoff;
	memset(&dcc, 0, sizeof(dcc));
	if (nftdp_ct_irc_parse(d, n, o->src.ip, r->dst.ip, &dcc) != 1)
		return NF_ACCEPT;
	nftdp_ct_expect_init(&x, r->l3proto, NULL, &r->dst, IPPROTO_TCP, 0, htons(dcc.port));
	if (e->status & IPS_NAT_MASK)
		return nat_irc(s, e, pkt, &dcc, &x);
	if (nftdp_ct_expect_related(s, e, &x, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_IRC, 0),
				    nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_IRC, 0)) != 0)
		return NF_DROP; /* "cannot add expectation" */
	return NF_ACCEPT;
}
