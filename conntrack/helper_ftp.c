// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ftp helper (nf_conntrack_ftp.c): reads the control connection's
 * commands (PORT, EPRT from the client; 227 and 229 replies from the
 * server) at the start of a segment that follows a line end, and expects
 * the data connection they announce. Every read stays inside the segment.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "ct_priv.h"

#define NUM_SEQ_TO_REMEMBER 2

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static bool prefix_nocase(const char *d, const char *pat, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)d[i]) != lower((unsigned char)pat[i]))
			return false;
	return true;
}

/* try_number: array_size numbers split by sep, ended by term (any char when 0) */
static uint32_t try_number(const char *data, size_t dlen, uint32_t *array, int array_size, char sep,
			   char term)
{
	uint32_t i, len;

	memset(array, 0, sizeof(array[0]) * (size_t)array_size);
	for (i = 0, len = 0; len < dlen && i < (uint32_t)array_size; len++, data++) {
		if (is_digit(*data))
			array[i] = array[i] * 10 + (uint32_t)(*data - '0');
		else if (*data == sep)
			i++;
		else if ((*data == term || !term) && i == (uint32_t)array_size - 1)
			return len;
		else
			return 0;
	}
	return 0;
}

/* try_rfc959: 192,168,1,1,5,6 */
static uint32_t try_rfc959(const char *data, size_t dlen, struct ct_ftp_cmd *cmd, char term,
			   uint32_t *offset)
{
	uint32_t a[6], length;

	(void)offset;
	length = try_number(data, dlen, a, 6, ',', term);
	if (!length)
		return 0;
	cmd->u3.ip = htonl(a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]);
	cmd->port = htons((uint16_t)(a[4] << 8 | a[5]));
	return length;
}

/* try_rfc1123: a 227 reply's numbers start at its first digit */
static uint32_t try_rfc1123(const char *data, size_t dlen, struct ct_ftp_cmd *cmd, char term,
			    uint32_t *offset)
{
	size_t i;

	(void)term;
	for (i = 0; i < dlen; i++)
		if (is_digit(data[i]))
			break;
	if (i == dlen)
		return 0;
	*offset += (uint32_t)i;
	return try_rfc959(data + i, dlen - i, cmd, 0, offset);
}

/* get_port: a number up to delim; the index after it, or 0 */
static uint32_t get_port(const char *data, size_t start, size_t dlen, char delim, uint16_t *port)
{
	uint16_t tmp = 0;

	for (size_t i = start; i < dlen; i++) {
		if (data[i] == delim) {
			if (!tmp)
				break;
			*port = htons(tmp);
			return (uint32_t)i + 1;
		} else if (is_digit(data[i])) {
			tmp =
			    (uint16_t)(tmp * 10 + (data[i] - '0')); /* wraps as the kernel's u16 */
		} else {
			break;
		}
	}
	return 0;
}

/* get_ipv6_addr: in6_pton up to term, within dlen; the length parsed or 0 */
static uint32_t get_ipv6_addr(const char *src, size_t dlen, uint8_t *dst, char term)
{
	char buf[64];
	size_t n;

	for (n = 0; n < dlen && src[n] != term; n++)
		if (n >= sizeof(buf) - 1)
			return 0;
	if (n == dlen || n == 0)
		return 0;
	memcpy(buf, src, n);
	buf[n] = 0;
	return inet_pton(AF_INET6, buf, dst) == 1 ? (uint32_t)n : 0;
}

/* try_eprt: |1|132.235.1.2|6275| or |2|3ffe::1|6275| */
static uint32_t try_eprt(const char *data, size_t dlen, struct ct_ftp_cmd *cmd, char term,
			 uint32_t *offset)
{
	uint32_t length;
	char delim;

	(void)term;
	(void)offset;
	if (dlen <= 3)
		return 0;
	delim = data[0];
	if (is_digit(delim) || delim < 33 || delim > 126 || data[2] != delim)
		return 0;
	if ((cmd->l3proto == NFPROTO_IPV4 && data[1] != '1') ||
	    (cmd->l3proto == NFPROTO_IPV6 && data[1] != '2'))
		return 0;
	if (data[1] == '1') {
		uint32_t a[4];

		length = try_number(data + 3, dlen - 3, a, 4, '.', delim);
		if (length)
			cmd->u3.ip = htonl(a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]);
	} else {
		length = get_ipv6_addr(data + 3, dlen - 3, cmd->u3.u8, delim);
	}
	if (!length)
		return 0;
	return get_port(data, 3 + length + 1, dlen, delim, &cmd->port);
}

/* try_epsv_response: |||6446| */
static uint32_t try_epsv_response(const char *data, size_t dlen, struct ct_ftp_cmd *cmd, char term,
				  uint32_t *offset)
{
	char delim;

	(void)term;
	(void)offset;
	if (dlen <= 3)
		return 0;
	delim = data[0];
	if (is_digit(delim) || delim < 33 || delim > 126 || data[1] != delim || data[2] != delim)
		return 0;
	return get_port(data, 3, dlen, delim, &cmd->port);
}

struct ftp_search {
	const char *pattern;
	size_t plen;
	char skip, term;
	enum ct_ftp_type type;
	uint32_t (*getnum)(const char *, size_t, struct ct_ftp_cmd *, char, uint32_t *);
};

static const struct ftp_search search[2][2] = {
    [IP_CT_DIR_ORIGINAL] =
	{
	    {"PORT", 4, ' ', '\r', CT_FTP_PORT, try_rfc959},
	    {"EPRT", 4, ' ', '\r', CT_FTP_EPRT, try_eprt},
	},
    [IP_CT_DIR_REPLY] =
	{
	    {"227 ", 4, 0, 0, CT_FTP_PASV, try_rfc1123},
	    {"229 ", 4, '(', ')', CT_FTP_EPSV, try_epsv_response},
	},
};

/* find_pattern: 1 match, 0 none, -1 partial */
static int find_pattern(const char *data, size_t dlen, const struct ftp_search *sp,
			struct ct_ftp_cmd *cmd)
{
	size_t i = sp->plen;

	if (dlen <= sp->plen)
		return prefix_nocase(data, sp->pattern, dlen) ? -1 : 0;
	if (!prefix_nocase(data, sp->pattern, sp->plen))
		return 0;
	if (sp->skip) {
		for (i = sp->plen; data[i] != sp->skip; i++)
			if (i == dlen - 1)
				return -1;
		i++;
	}
	cmd->matchoff = (uint32_t)i;
	cmd->matchlen = sp->getnum(data + i, dlen - i, cmd, sp->term, &cmd->matchoff);
	return cmd->matchlen ? 1 : -1;
}

int nftdp_ct_ftp_parse(const char *data, uint32_t dlen, int dir, struct ct_ftp_cmd *cmd)
{
	int found = 0;

	if (!dlen)
		return 0;
	for (unsigned int i = 0; i < 2; i++) {
		found = find_pattern(data, dlen, &search[dir][i], cmd);
		if (found) {
			cmd->type = search[dir][i].type;
			break;
		}
	}
	return found;
}

static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static bool find_nl_seq(uint32_t seq, const struct ct_help *h, int dir)
{
	for (unsigned int i = 0; i < h->seq_aft_nl_num[dir]; i++)
		if (h->seq_aft_nl[dir][i] == seq)
			return true;
	return false;
}

/* update_nl_seq: the two latest sequence numbers after a line end */
static void update_nl_seq(uint32_t nl_seq, struct ct_help *h, int dir)
{
	unsigned int i, oldest;

	for (i = 0; i < h->seq_aft_nl_num[dir]; i++)
		if (h->seq_aft_nl[dir][i] == nl_seq)
			return;
	if (h->seq_aft_nl_num[dir] < NUM_SEQ_TO_REMEMBER) {
		h->seq_aft_nl[dir][h->seq_aft_nl_num[dir]++] = nl_seq;
		return;
	}
	oldest = before(h->seq_aft_nl[dir][0], h->seq_aft_nl[dir][1]) ? 0 : 1;
	if (before(h->seq_aft_nl[dir][oldest], nl_seq)) /* after(nl_seq, oldest) */
		h->seq_aft_nl[dir][oldest] = nl_seq;
}

/* nf_nat_ftp_fmt_cmd: the address and port as the command writes them */
int nftdp_ct_ftp_fmt_cmd(uint8_t l3proto, enum ct_ftp_type type, char *buf, size_t size,
			 const union nftdp_ct_addr *addr, uint16_t port)
{
	const uint8_t *a = addr->u8;
	int n = 0;

	switch (type) {
	case CT_FTP_PORT:
	case CT_FTP_PASV:
		n = snprintf(buf, size, "%u,%u,%u,%u,%u,%u", a[0], a[1], a[2], a[3], port >> 8,
			     port & 0xff);
		break;
	case CT_FTP_EPRT:
		if (l3proto == NFPROTO_IPV4) {
			n = snprintf(buf, size, "|1|%u.%u.%u.%u|%u|", a[0], a[1], a[2], a[3], port);
		} else {
			/* %pI6: eight groups of four lower-case digits, not compressed */
			n = snprintf(buf, size, "|2|");
			for (unsigned int i = 0; i < 16 && n > 0 && (size_t)n < size; i += 2)
				n += snprintf(buf + n, size - (size_t)n, "%02x%02x%s", a[i],
					      a[i + 1], i < 14 ? ":" : "");
			if (n > 0 && (size_t)n < size)
				n += snprintf(buf + n, size - (size_t)n, "|%u|", port);
		}
		break;
	case CT_FTP_EPSV:
		n = snprintf(buf, size, "|||%u|", port);
		break;
	}
	return n > 0 && (size_t)n < size ? n : 0;
}

static uint16_t random16(struct nftdp_ct_shard *s)
{
	/* xorshift64* on the shard's state, as nat.c's: get_random_u32_below */
	s->prng ^= s->prng >> 12;
	s->prng ^= s->prng << 25;
	s->prng ^= s->prng >> 27;
	return (uint16_t)((s->prng * 2685821657736338717ull) >> 48);
}

uint16_t nftdp_ct_nat_exp_find_port(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e,
				    struct ct_expect *x, uint16_t port, uint32_t max_expected,
				    uint32_t timeout_s)
{
	int range = 65535 - port, attempts_left = range > 128 ? 128 : range;
	uint16_t min = port;

	for (;;) {
		int res;

		x->tuple.dport = htons(port);
		res = nftdp_ct_expect_related(s, e, x, max_expected, timeout_s);
		if (res == 0)
			return port;
		if (res != -EBUSY || --attempts_left < 0)
			break;
		port = (uint16_t)(min + (uint16_t)(random16(s) % (uint32_t)range));
	}
	return 0;
}

/* nf_nat_ftp: the data connection is NATed as the master
 * (nf_nat_follow_master) and the command names the address the sender has
 * beyond the NAT (tuple[!dir].dst) */
static unsigned int nat_ftp(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			    struct nftdp_vm_pkt *pkt, int dir, const struct ct_ftp_cmd *cmd,
			    struct ct_expect *x)
{
	char buf[sizeof("|1||65535|") + 46];
	uint16_t port;
	int n;

	nftdp_ct_expect_set_nat(x, e, !dir, cmd->port);
	port = nftdp_ct_nat_exp_find_port(s, e, x, ntohs(cmd->port),
					  nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_FTP, 0),
					  nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_FTP, 0));
	if (!port)
		return NF_DROP; /* "all ports in use" */
	n = nftdp_ct_ftp_fmt_cmd(e->tuple[0].l3proto, cmd->type, buf, sizeof(buf),
				 &e->tuple[!dir].dst, port);
	if (n &&
	    nftdp_ct_nat_mangle_tcp(s, e, pkt, dir, cmd->matchoff, cmd->matchlen, buf, (uint32_t)n))
		return NF_ACCEPT;
	/* "cannot mangle packet": nf_ct_unexpect_related (max_expected is
	 * 1, so the master's only one) */
	nftdp_ct_expect_remove_master(s, e);
	return NF_DROP;
}

/* help() */
unsigned int nftdp_ct_ftp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	struct ct_help *h = &s->help[e - s->entries];
	int dir = ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
	uint32_t l4len = nftdp_ct_l4len(pkt), dataoff, datalen, seq;
	const uint8_t *th = pkt->data + pkt->th_off;
	struct ct_ftp_cmd cmd;
	struct ct_expect x;
	unsigned int ret = NF_ACCEPT;
	bool ends_in_nl;
	int found;

	/* until there has been traffic both ways, don't look in packets */
	if (ctinfo != IP_CT_ESTABLISHED && ctinfo != IP_CT_ESTABLISHED_REPLY)
		return NF_ACCEPT;
	if (pkt->l4proto != IPPROTO_TCP || l4len < 20)
		return NF_ACCEPT;
	dataoff = (uint32_t)(th[12] >> 4) * 4;
	if (dataoff >= l4len)
		return NF_ACCEPT; /* no data */
	datalen = l4len - dataoff;
	ends_in_nl = th[dataoff + datalen - 1] == '\n';
	seq = ((uint32_t)th[4] << 24 | (uint32_t)th[5] << 16 | (uint32_t)th[6] << 8 | th[7]);
	if (!find_nl_seq(seq, h, dir))
		goto out_update_nl; /* not just after a line end */
	memset(&cmd, 0, sizeof(cmd));
	cmd.l3proto = e->tuple[0].l3proto;
	cmd.u3 = e->tuple[dir].src; /* EPSV names no address */
	found = nftdp_ct_ftp_parse((const char *)th + dataoff, datalen, dir, &cmd);
	if (found < 0)
		return NF_DROP; /* "partial matching": nl seq not updated */
	if (!found)
		goto out_update_nl;
	if (memcmp(&cmd.u3, &e->tuple[dir].src, sizeof(cmd.u3)))
		goto out_update_nl; /* loose = 0: another address than the sender's */
	nftdp_ct_expect_init(&x, cmd.l3proto, &e->tuple[!dir].src, &e->tuple[!dir].dst, IPPROTO_TCP,
			     0, cmd.port);
	if (e->status & IPS_NAT_MASK)
		ret = nat_ftp(s, e, pkt, dir, &cmd, &x);
	else if (nftdp_ct_expect_related(s, e, &x, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_FTP, 0),
					 nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_FTP, 0)) != 0)
		ret = NF_DROP; /* "cannot add expectation" */
out_update_nl:
	/* seq and datalen as the segment came: the sequence space of this
	 * direction before the adjustment confirm applies */
	if (ends_in_nl)
		update_nl_seq(seq + datalen, h, dir);
	return ret;
}
