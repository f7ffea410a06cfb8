// SPDX-License-Identifier: BSD-3-Clause
/*
 * The amanda helper (nf_conntrack_amanda.c): the server's UDP request
 * (port 10080) is answered by the client with "CONNECT DATA p MESG p
 * INDEX p\n"; each port announced expects a TCP connection from the server
 * to the client. Replies keep the request 300 s (master_timeout).
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "ct_priv.h"

static const uint32_t amanda_max_expected = 3, amanda_timeout_s = 180; /* amanda_exp_policy */
static const uint32_t amanda_master_timeout_s = 300;

/* skb_find_text: the first whole occurrence of pat in d[from, to), or -1 */
static int64_t find_text(const char *d, uint32_t from, uint32_t to, const char *pat, uint32_t plen)
{
	for (uint32_t i = from; i + plen <= to; i++)
		if (!memcmp(d + i, pat, plen))
			return i;
	return -1;
}

unsigned int nftdp_ct_amanda_parse(const char *d, uint32_t n, struct ct_amanda_port ports[3])
{
	static const struct {
		const char *s;
		uint32_t len;
	} kw[3] = {{"DATA ", 5}, {"MESG ", 5}, {"INDEX ", 6}};
	int64_t start, stop, off;
	unsigned int found = 0;

	start = find_text(d, 0, n, "CONNECT ", 8);
	if (start < 0)
		return 0;
	start += 8;
	stop = find_text(d, (uint32_t)start, n, "\n", 1);
	if (stop < 0)
		return 0;
	for (unsigned int i = 0; i < 3; i++) {
		uint32_t j, len, v;

		off = find_text(d, (uint32_t)start, (uint32_t)stop, kw[i].s, kw[i].len);
		if (off < 0)
			continue;
		off += kw[i].len;
		/* at most 5 characters, simple_strtoul, the port's 16 bits */
		len = (uint32_t)(stop - off) < 5 ? (uint32_t)(stop - off) : 5;
		j = 0;
		v = nftdp_ct_strtou32(d + off, len, &j);
		if ((uint16_t)v == 0)
			break;
		ports[found].port = (uint16_t)v;
		ports[found].off = (uint32_t)off;
		ports[found].len = j;
		found++;
	}
	return found;
}

/* the text nf_nat_amanda writes: "%u" of the port */
static bool nat_text_same(const char *d, const struct ct_amanda_port *p)
{
	char buf[sizeof("65535")];
	int len = snprintf(buf, sizeof(buf), "%u", p->port);

	return len > 0 && (uint32_t)len == p->len && !memcmp(d + p->off, buf, (size_t)len);
}

unsigned int nftdp_ct_amanda_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				  const struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	const struct nftdp_ct_tuple *o = &e->tuple[IP_CT_DIR_ORIGINAL];
	uint32_t l4len = nftdp_ct_l4len(pkt);
	struct ct_amanda_port ports[3];
	unsigned int ret = NF_ACCEPT, n;
	const char *d;
	struct ct_expect x;

	/* only the client's answers */
	if (ctinfo < IP_CT_IS_REPLY)
		return NF_ACCEPT;
	/* nf_ct_refresh: the client may answer the server late */
	if (!(e->status & IPS_FIXED_TIMEOUT))
		e->expires_ms = s->now_ms + (uint64_t)amanda_master_timeout_s * 1000u;
	if (pkt->l4proto != IPPROTO_UDP || l4len <= 8)
		return NF_ACCEPT;
	d = (const char *)pkt->data + pkt->th_off + 8;
	n = nftdp_ct_amanda_parse(d, l4len - 8, ports);
	for (unsigned int i = 0; i < n; i++) {
		nftdp_ct_expect_init(&x, o->l3proto, &o->src, &o->dst, IPPROTO_TCP, 0,
				     htons(ports[i].port));
		if (o->l3proto == NFPROTO_IPV4 && (e->status & IPS_NAT_MASK)) {
			/* nf_nat_amanda rewrites the port it gets; nftdp
			 * does not rewrite, so it follows only where the
			 * text stays as it is */
			if (!nat_text_same(d, &ports[i]))
				continue;
			nftdp_ct_expect_set_nat(&x, e, IP_CT_DIR_ORIGINAL, htons(ports[i].port));
		}
		if (nftdp_ct_expect_related(s, e, &x, amanda_max_expected, amanda_timeout_s) != 0)
			ret = NF_DROP;
	}
	return ret;
}
