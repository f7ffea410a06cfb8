// SPDX-License-Identifier: BSD-3-Clause
/*
 * The amanda helper (nf_conntrack_amanda.c): the server's UDP request
 * (port 10080) is answered by the client with "CONNECT DATA p MESG p
 * INDEX p\n"; each port announced expects a TCP connection from the server
 * to the client. Replies keep the request 300 s (master_timeout). On a
 * NATed connection each port is rewritten as nf_nat_amanda does: the port
 * announced, or another found free, the datagram's length following
 * (nftdp_ct_nat_mangle_udp); each keyword is searched in the payload as
 * the previous rewrites left it, up to the line end found before them.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "ct_priv.h"

static const uint32_t amanda_master_timeout_s = 300;

/* skb_find_text: the first whole occurrence of pat in d[from, to), or -1 */
static int64_t find_text(const char *d, uint32_t from, uint32_t to, const char *pat, uint32_t plen)
{
	for (uint32_t i = from; i + plen <= to; i++)
		if (!memcmp(d + i, pat, plen))
			return i;
	return -1;
}

static const struct {
	const char *s;
	uint32_t len;
} amanda_kw[3] = {{"DATA ", 5}, {"MESG ", 5}, {"INDEX ", 6}};

/* the text between "CONNECT " and the next \n: false when there is none */
static bool amanda_bounds(const char *d, uint32_t n, uint32_t *start, uint32_t *stop)
{
	int64_t a, b;

	a = find_text(d, 0, n, "CONNECT ", 8);
	if (a < 0)
		return false;
	a += 8;
	b = find_text(d, (uint32_t)a, n, "\n", 1);
	if (b < 0)
		return false;
	*start = (uint32_t)a;
	*stop = (uint32_t)b;
	return true;
}

/* keyword i's port in d[start, stop): 1, 0 without the keyword, -1 for a
 * bad port (the list ends there) */
static int amanda_port(const char *d, uint32_t start, uint32_t stop, unsigned int i,
		       struct ct_amanda_port *p)
{
	uint32_t j, len, v;
	int64_t off;

	off = find_text(d, start, stop, amanda_kw[i].s, amanda_kw[i].len);
	if (off < 0)
		return 0;
	off += amanda_kw[i].len;
	/* at most 5 characters, simple_strtoul, the port's 16 bits */
	len = (uint32_t)(stop - off) < 5 ? (uint32_t)(stop - off) : 5;
	j = 0;
	v = nftdp_ct_strtou32(d + off, len, &j);
	if ((uint16_t)v == 0)
		return -1;
	p->port = (uint16_t)v;
	p->off = (uint32_t)off;
	p->len = j;
	return 1;
}

unsigned int nftdp_ct_amanda_parse(const char *d, uint32_t n, struct ct_amanda_port ports[3])
{
	uint32_t start, stop;
	unsigned int found = 0;

	if (!amanda_bounds(d, n, &start, &stop))
		return 0;
	for (unsigned int i = 0; i < 3; i++) {
		int rc = amanda_port(d, start, stop, i, &ports[found]);

		if (rc < 0)
			break;
		found += (unsigned int)rc;
	}
	return found;
}

/* nf_nat_amanda: the port announced, else another one found free
 * (nf_nat_exp_find_port), written in its place */
static unsigned int nat_amanda(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, const struct ct_amanda_port *p,
			       struct ct_expect *x)
{
	char buf[sizeof("65535")];
	uint16_t port;
	int n;

	nftdp_ct_expect_set_nat(x, e, IP_CT_DIR_ORIGINAL, htons(p->port));
	port = nftdp_ct_nat_exp_find_port(s, e, x, p->port,
					  nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_AMANDA, 0),
					  nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_AMANDA, 0));
	if (port == 0)
		return NF_DROP; /* "all ports in use" */
	n = snprintf(buf, sizeof(buf), "%u", port);
	if (n > 0 && (size_t)n < sizeof(buf) &&
	    nftdp_ct_nat_mangle_udp(s, pkt, p->off, p->len, buf, (uint32_t)n))
		return NF_ACCEPT;
	/* "cannot mangle packet": nf_ct_unexpect_related */
	nftdp_ct_expect_delete(s, &x->tuple, x->id);
	return NF_DROP;
}

unsigned int nftdp_ct_amanda_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				  struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	const struct nftdp_ct_tuple *o = &e->tuple[IP_CT_DIR_ORIGINAL];
	uint32_t l4len = nftdp_ct_l4len(pkt), start, stop;
	unsigned int ret = NF_ACCEPT;
	struct ct_amanda_port p;
	struct ct_expect x;

	/* only the client's answers */
	if (ctinfo < IP_CT_IS_REPLY)
		return NF_ACCEPT;
	/* nf_ct_refresh: the client may answer the server late */
	if (!(e->status & IPS_FIXED_TIMEOUT))
		e->expires_ms = s->now_ms + (uint64_t)amanda_master_timeout_s * 1000u;
	if (pkt->l4proto != IPPROTO_UDP || l4len <= 8)
		return NF_ACCEPT;
	if (!amanda_bounds((const char *)pkt->data + pkt->th_off + 8, l4len - 8, &start, &stop))
		return NF_ACCEPT;
	for (unsigned int i = 0; i < 3; i++) {
		/* each keyword is searched in the payload as the rewrites
		 * left it, up to the line end found before them (the
		 * kernel's stale stop) */
		const char *d = (const char *)pkt->data + pkt->th_off + 8;
		uint32_t n = nftdp_ct_l4len(pkt) - 8;
		int rc = amanda_port(d, start, stop < n ? stop : n, i, &p);

		if (rc < 0)
			break;
		if (rc == 0)
			continue;
		nftdp_ct_expect_init(&x, o->l3proto, &o->src, &o->dst, IPPROTO_TCP, 0,
				     htons(p.port));
		if (o->l3proto == NFPROTO_IPV4 && (e->status & IPS_NAT_MASK)) {
			/* ret = nf_nat_amanda(): the last port's verdict */
			ret = nat_amanda(s, e, pkt, &p, &x);
			continue;
		}
		if (nftdp_ct_expect_related(
			s, e, &x, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_AMANDA, 0),
			nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_AMANDA, 0)) != 0)
			ret = NF_DROP;
	}
	return ret;
}
