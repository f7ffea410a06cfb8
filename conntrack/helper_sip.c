// SPDX-License-Identifier: BSD-3-Clause
/*
 * The sip helper (nf_conntrack_sip.c, defaults sip_direct_signalling=1,
 * sip_direct_media=1, sip_timeout=3600): SIP requests and responses over
 * UDP, and over TCP one message after another by Content-Length, as the
 * kernel walks them. An SDP body (INVITE, UPDATE, ACK, PRACK and their 1xx
 * and 2xx responses) expects RTP and RTCP from the peer to the address and
 * even/odd ports of each audio, video or image `m=` line (`c=` of the media
 * or of the session); a failure response to the INVITE and a BYE remove
 * them. A REGISTER expects the registrar's calls to the Contact address,
 * inactive until a 2xx response activates it for its Expires time.
 * Every read stays inside the message: the kernel's parsers look at most
 * one byte past some headers' ends (skb tailroom); nftdp stops there.
 * nf_nat_sip on a NAT'd connection: the Request-URI, the topmost Via (and
 * its maddr=, received=, rport=), every Contact, From and To that name an
 * address and port of the connection's are written as the other side
 * sees them; over TCP the segment's growth is one sequence adjustment.
 * Its SDP half: the media is expected at the address the peer sees (a free
 * even port pair from the announced one on), NATed back when it comes;
 * the m= port if it moved, each media's c=, the session's o= and c= and
 * the Content-Length are written again; a REGISTER's calls are expected
 * at the NAT address, its Contact written so. Another call's expectation
 * of the same media stands for it, or under NAT sends the media directly
 * to that one's saved address and port (direct RTP; docs/conntrack.md).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <strings.h>

#include "ct_priv.h"

#define SIP_PORT 5060
#define SIP_TIMEOUT_S 3600 /* sip_timeout */

/* sip_exp_policy (helper.c): the same timeout for every class */
#define SIP_EXP_TIMEOUT_S nftdp_ct_exp_timeout(NFTDP_VM_CT_HELPER_SIP, 0)

/* ---- scanning helpers (string_len, digits_len: ct_priv.h) ---- */

/* media_len: "type port" */
static uint32_t media_len(const char *p, const char *limit)
{
	uint32_t n = nftdp_ct_alpha_len(p, limit);

	p += n;
	if (p >= limit || *p != ' ')
		return 0;
	return n + 1 + nftdp_ct_digits_len(p + 1, limit);
}

uint32_t nftdp_ct_sip_strtouint(const char *cp, uint32_t len, const char **endp)
{
	uint32_t max = sizeof("4294967295"), olen = len;
	const char *s = cp;
	uint64_t v = 0;

	if (len > max)
		len = max;
	while (olen > 0 && isdigit((unsigned char)*s)) {
		if (len == 0)
			goto err;
		v = v * 10u + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			goto err;
		s++;
		len--;
		olen--;
	}
	if (endp)
		*endp = s;
	return (uint32_t)v;
err:
	if (endp)
		*endp = cp;
	return 0;
}

/*
 * in4_pton(cp, limit - cp, .., -1, end): dotted quad; any character that is
 * no hex digit, dot or colon (or the end) ends it after four numbers, a hex
 * letter fails it.
 */
static bool in4_parse(const char *s, const char *limit, uint8_t *dst, const char **end)
{
	uint8_t buf[4];
	uint32_t w = 0;
	bool seen = false, ok = false;
	int i = 0;

	for (;; s++) {
		char c = s < limit ? *s : '\0';

		if (c >= '0' && c <= '9') {
			w = w * 10u + (uint32_t)(c - '0');
			if (w > 255)
				break;
			seen = true;
		} else if (isxdigit((unsigned char)c)) {
			break;
		} else {
			if (!seen)
				break;
			buf[i++] = (uint8_t)w;
			w = 0;
			seen = false;
			if (c != '.') {
				ok = i == 4;
				break;
			}
		}
		if (i >= 4)
			break;
	}
	if (ok)
		memcpy(dst, buf, 4);
	if (end)
		*end = s;
	return ok;
}

/* in6_pton(cp, limit - cp, .., -1, end): the run of hex digits, colons
 * and dots there, as an IPv6 address */
static bool in6_parse(const char *s, const char *limit, uint8_t *dst, const char **end)
{
	char buf[INET6_ADDRSTRLEN + 1];
	uint32_t n = 0;

	while (s + n < limit && (isxdigit((unsigned char)s[n]) || s[n] == ':' || s[n] == '.')) {
		if (n >= INET6_ADDRSTRLEN)
			return false;
		buf[n] = s[n];
		n++;
	}
	buf[n] = 0;
	if (end)
		*end = s + n;
	return n && inet_pton(AF_INET6, buf, dst) == 1;
}

/* sip_parse_addr: an IPv6 address of a SIP header in brackets (delim) */
static bool sip_parse_addr(uint8_t l3, const char *cp, const char **endp, union nftdp_ct_addr *a,
			   const char *limit, bool delim)
{
	const char *end;

	memset(a, 0, sizeof(*a));
	if (l3 == NFPROTO_IPV4)
		return in4_parse(cp, limit, a->u8, endp);
	if (cp < limit && *cp == '[')
		cp++;
	else if (delim)
		return false;
	if (!in6_parse(cp, limit, a->u8, &end))
		return false;
	if (end < limit && *end == ']')
		end++;
	else if (delim)
		return false;
	if (endp)
		*endp = end;
	return true;
}

/* sip_parse_port: ":port" (1024-65535) or nothing (5060) */
static bool sip_parse_port(const char *p, const char **endp, const char *limit, uint16_t *port)
{
	uint32_t v, n = 0;

	if (p >= limit)
		return false;
	if (*p != ':') {
		if (port)
			*port = htons(SIP_PORT);
		if (endp)
			*endp = p;
		return true;
	}
	p++;
	/* at most five digits: the kernel's simple_strtoul, then its range */
	if (nftdp_ct_digits_len(p, limit) > 5)
		return false;
	v = nftdp_ct_strtou32(p, (uint32_t)(limit - p), &n);
	p += n;
	if (n == 0 || p >= limit || v < 1024 || v > 65535)
		return false;
	if (port)
		*port = htons((uint16_t)v);
	if (endp)
		*endp = p;
	return true;
}

/* epaddr_len: address and port */
static uint32_t epaddr_len(uint8_t l3, const char *p, const char *limit)
{
	union nftdp_ct_addr a;
	const char *q;

	if (!sip_parse_addr(l3, p, &q, &a, limit, true) || !sip_parse_port(q, &q, limit, NULL))
		return 0;
	return (uint32_t)(q - p);
}

/* skp_epaddr_len: skip "user@" on the line */
static uint32_t skp_epaddr_len(uint8_t l3, const char *p, const char *limit, uint32_t *shift)
{
	const char *q = p;
	uint32_t s = 0;

	while (q < limit && *q != '@' && *q != '\r' && *q != '\n') {
		q++;
		s++;
	}
	if (q < limit && *q == '@') {
		p = q + 1;
		*shift += s + 1;
	}
	return epaddr_len(l3, p, limit);
}

/* sdp_parse_addr: no brackets */
static bool sdp_parse_addr(uint8_t l3, const char *cp, const char **endp, union nftdp_ct_addr *a,
			   const char *limit)
{
	memset(a, 0, sizeof(*a));
	if (l3 == NFPROTO_IPV4)
		return in4_parse(cp, limit, a->u8, endp);
	return in6_parse(cp, limit, a->u8, endp);
}

static uint32_t sdp_addr_len(uint8_t l3, const char *p, const char *limit)
{
	union nftdp_ct_addr a;
	const char *q;

	return sdp_parse_addr(l3, p, &q, &a, limit) ? (uint32_t)(q - p) : 0;
}

/* ---- SIP headers (ct_sip_hdrs) ---- */

enum { ML_DIGITS, ML_SKP_EPADDR, ML_EPADDR, ML_MEDIA, ML_SDP_ADDR };
static const struct {
	const char *name, *cname, *search;
	uint32_t len, clen, slen;
	uint8_t ml;
} sip_hdrs[] = {
    [CT_SIP_HDR_CSEQ] = {"CSeq", NULL, NULL, 4, 0, 0, ML_DIGITS},
    [CT_SIP_HDR_FROM] = {"From", "f", "sip:", 4, 1, 4, ML_SKP_EPADDR},
    [CT_SIP_HDR_TO] = {"To", "t", "sip:", 2, 1, 4, ML_SKP_EPADDR},
    [CT_SIP_HDR_CONTACT] = {"Contact", "m", "sip:", 7, 1, 4, ML_SKP_EPADDR},
    [CT_SIP_HDR_VIA_UDP] = {"Via", "v", "UDP ", 3, 1, 4, ML_EPADDR},
    [CT_SIP_HDR_VIA_TCP] = {"Via", "v", "TCP ", 3, 1, 4, ML_EPADDR},
    [CT_SIP_HDR_EXPIRES] = {"Expires", NULL, NULL, 7, 0, 0, ML_DIGITS},
    [CT_SIP_HDR_CONTENT_LENGTH] = {"Content-Length", "l", NULL, 14, 1, 0, ML_DIGITS},
};

static uint32_t match_len(uint8_t ml, uint8_t l3, const char *p, const char *limit, uint32_t *shift)
{
	switch (ml) {
	case ML_DIGITS:
		return nftdp_ct_digits_len(p, limit);
	case ML_SKP_EPADDR:
		return skp_epaddr_len(l3, p, limit, shift);
	case ML_EPADDR:
		return epaddr_len(l3, p, limit);
	case ML_MEDIA:
		return media_len(p, limit);
	default:
		return sdp_addr_len(l3, p, limit);
	}
}

/* sip_follow_continuation: past a line end into a folded line, or NULL */
static const char *follow_continuation(const char *p, const char *limit)
{
	if (++p >= limit)
		return NULL;
	if (p[-1] == '\r' && *p == '\n' && ++p >= limit)
		return NULL;
	if (*p != ' ' && *p != '\t')
		return NULL;
	while (p < limit && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *skip_whitespace(const char *p, const char *limit)
{
	for (; p < limit; p++) {
		if (*p == ' ' || *p == '\t')
			continue;
		if (*p != '\r' && *p != '\n')
			break;
		return follow_continuation(p, limit);
	}
	return p;
}

/* ct_sip_header_search: needle in a header value, folded lines included;
 * as the kernel, a needle must end before limit */
static const char *header_search(const char *p, const char *limit, const char *needle, uint32_t len)
{
	if (limit - p <= (ptrdiff_t)len)
		return NULL;
	limit -= len;
	for (; p < limit; p++) {
		if (*p == '\r' || *p == '\n') {
			p = follow_continuation(p, limit);
			if (!p)
				break;
			continue;
		}
		if (!strncasecmp(p, needle, len))
			return p;
	}
	return NULL;
}

int nftdp_ct_sip_get_header(uint8_t l3, const char *d, uint32_t off, uint32_t dlen,
			    enum ct_sip_hdr type, uint32_t *matchoff, uint32_t *matchlen)
{
	const char *p, *limit = d + dlen;
	uint32_t shift = 0;

	for (p = d + off; p < limit; p++) {
		/* a line start */
		if (*p != '\r' && *p != '\n')
			continue;
		if (++p >= limit)
			break;
		if (p[-1] == '\r' && *p == '\n' && ++p >= limit)
			break;
		if (*p == ' ' || *p == '\t')
			continue; /* a folded line */
		/* the name, or the compact form followed by no letter */
		if (limit - p >= (ptrdiff_t)sip_hdrs[type].len &&
		    !strncasecmp(p, sip_hdrs[type].name, sip_hdrs[type].len))
			p += sip_hdrs[type].len;
		else if (sip_hdrs[type].cname && limit - p >= (ptrdiff_t)sip_hdrs[type].clen + 1 &&
			 !strncasecmp(p, sip_hdrs[type].cname, sip_hdrs[type].clen) &&
			 !isalpha((unsigned char)p[sip_hdrs[type].clen]))
			p += sip_hdrs[type].clen;
		else
			continue;
		p = skip_whitespace(p, limit);
		/* the kernel reads the byte at limit here; nftdp ends */
		if (!p || p >= limit || *p != ':' || ++p >= limit)
			break;
		p = skip_whitespace(p, limit);
		if (!p)
			break;
		*matchoff = (uint32_t)(p - d);
		if (sip_hdrs[type].search) {
			p = header_search(p, limit, sip_hdrs[type].search, sip_hdrs[type].slen);
			if (!p)
				return -1;
			p += sip_hdrs[type].slen;
		}
		*matchlen = match_len(sip_hdrs[type].ml, l3, p, limit, &shift);
		if (!*matchlen)
			return -1;
		*matchoff = (uint32_t)(p - d) + shift;
		return 1;
	}
	return 0;
}

/* ct_sip_next_header: the next value of a comma separated list */
static int next_header(uint8_t l3, const char *d, uint32_t off, uint32_t dlen, enum ct_sip_hdr type,
		       uint32_t *matchoff, uint32_t *matchlen)
{
	const char *p, *limit = d + dlen;
	uint32_t shift = 0;

	p = header_search(d + off, limit, ",", 1);
	if (!p)
		return 0;
	p = header_search(p, limit, sip_hdrs[type].search, sip_hdrs[type].slen);
	if (!p)
		return 0;
	p += sip_hdrs[type].slen;
	*matchoff = (uint32_t)(p - d);
	*matchlen = match_len(sip_hdrs[type].ml, l3, p, limit, &shift);
	if (!*matchlen)
		return -1;
	*matchoff += shift;
	return 1;
}

/* ct_sip_walk_headers */
static int walk_headers(uint8_t l3, const char *d, uint32_t off, uint32_t dlen,
			enum ct_sip_hdr type, int *in_header, uint32_t *matchoff,
			uint32_t *matchlen)
{
	int ret;

	if (in_header && *in_header) {
		for (;;) {
			ret = next_header(l3, d, off, dlen, type, matchoff, matchlen);
			if (ret > 0)
				return ret;
			if (ret == 0)
				break;
			off = *matchoff;
		}
		*in_header = 0;
	}
	for (;;) {
		ret = nftdp_ct_sip_get_header(l3, d, off, dlen, type, matchoff, matchlen);
		if (ret > 0)
			break;
		if (ret == 0)
			return 0;
		off = *matchoff;
	}
	if (in_header)
		*in_header = 1;
	return 1;
}

int nftdp_ct_sip_parse_header_uri(uint8_t l3, const char *d, uint32_t *off, uint32_t dlen,
				  enum ct_sip_hdr type, int *in_header, uint32_t *matchoff,
				  uint32_t *matchlen, union nftdp_ct_addr *addr, uint16_t *port)
{
	const char *c, *limit = d + dlen;

	if (!walk_headers(l3, d, off ? *off : 0, dlen, type, in_header, matchoff, matchlen))
		return 0;
	if (!sip_parse_addr(l3, d + *matchoff, &c, addr, limit, true))
		return -1;
	if (!sip_parse_port(c, &c, limit, port))
		return -1;
	if (off)
		*off = (uint32_t)(c - d);
	return 1;
}

/* ct_sip_parse_param: "name" up to the next ';' within this list value */
static int parse_param(const char *d, uint32_t off, uint32_t dlen, const char *name,
		       uint32_t *matchoff, uint32_t *matchlen)
{
	const char *limit = d + dlen, *start, *end;
	uint32_t n = (uint32_t)strlen(name);

	limit = header_search(d + off, limit, ",", 1);
	if (!limit)
		limit = d + dlen;
	start = header_search(d + off, limit, name, n);
	if (!start)
		return 0;
	start += n;
	end = header_search(start, limit, ";", 1);
	if (!end)
		end = limit;
	*matchoff = (uint32_t)(start - d);
	*matchlen = (uint32_t)(end - start);
	return 1;
}

/* ct_sip_parse_numerical_param: 1 and the value (and where its digits
 * are, when matchoff), 0 (none) or -1 (no digits) */
static int parse_numerical_param_at(const char *d, uint32_t off, uint32_t dlen, const char *name,
				    uint32_t *matchoff, uint32_t *matchlen, uint32_t *val)
{
	const char *limit = d + dlen, *start, *end;
	uint32_t n = (uint32_t)strlen(name);

	limit = header_search(d + off, limit, ",", 1);
	if (!limit)
		limit = d + dlen;
	start = header_search(d + off, limit, name, n);
	if (!start)
		return 0;
	start += n;
	*val = nftdp_ct_sip_strtouint(start, (uint32_t)(limit - start), &end);
	if (start == end)
		return -1;
	if (matchoff) {
		*matchoff = (uint32_t)(start - d);
		*matchlen = (uint32_t)(end - start);
	}
	return 1;
}

static int parse_numerical_param(const char *d, uint32_t off, uint32_t dlen, const char *name,
				 uint32_t *val)
{
	return parse_numerical_param_at(d, off, dlen, name, NULL, NULL, val);
}

/* ct_sip_parse_address_param: the address after name= within this list
 * value; delim: an IPv6 one in brackets */
static int parse_address_param(uint8_t l3, const char *d, uint32_t off, uint32_t dlen,
			       const char *name, uint32_t *matchoff, uint32_t *matchlen,
			       union nftdp_ct_addr *addr, bool delim)
{
	const char *limit = d + dlen, *start, *end;
	uint32_t n = (uint32_t)strlen(name);

	limit = header_search(d + off, limit, ",", 1);
	if (!limit)
		limit = d + dlen;
	start = header_search(d + off, limit, name, n);
	if (!start)
		return 0;
	start += n;
	if (!sip_parse_addr(l3, start, &end, addr, limit, delim))
		return 0;
	*matchoff = (uint32_t)(start - d);
	*matchlen = (uint32_t)(end - start);
	return 1;
}

int nftdp_ct_sip_parse_request(uint8_t l3, const char *d, uint32_t dlen, uint32_t *matchoff,
			       uint32_t *matchlen, union nftdp_ct_addr *addr, uint16_t *port)
{
	const char *p = d, *limit = d + dlen, *end;
	uint32_t n, shift = 0;

	/* the method and the space after it */
	n = nftdp_ct_alpha_len(p, limit);
	if (!n)
		return 0;
	p += n;
	if (++p >= limit)
		return 0;
	/* the sip: URI on this line; without one the kernel goes on from
	 * four bytes before the end */
	for (; limit - p > 4; p++) {
		if (*p == '\r' || *p == '\n')
			return -1;
		if (!strncasecmp(p, "sip:", 4)) {
			p += 4;
			break;
		}
	}
	if (!skp_epaddr_len(l3, p, limit, &shift))
		return 0;
	p += shift;
	if (!sip_parse_addr(l3, p, &end, addr, limit, true))
		return -1;
	if (!sip_parse_port(end, &end, limit, port))
		return -1;
	if (end == p)
		return 0;
	*matchoff = (uint32_t)(p - d);
	*matchlen = (uint32_t)(end - p);
	return 1;
}

/* ct_sip_parse_transport: 0 if a transport= names another protocol */
static int parse_transport(uint8_t l4, const char *d, uint32_t off, uint32_t dlen, uint8_t *proto)
{
	uint32_t mo, ml;

	if (parse_param(d, off, dlen, "transport=", &mo, &ml)) {
		/* the kernel compares 3 bytes whatever the value's length */
		if (dlen - mo >= 3 && !strncasecmp(d + mo, "TCP", 3))
			*proto = IPPROTO_TCP;
		else if (dlen - mo >= 3 && !strncasecmp(d + mo, "UDP", 3))
			*proto = IPPROTO_UDP;
		else
			return 0;
		if (*proto != l4)
			return 0;
	} else {
		*proto = l4;
	}
	return 1;
}

/* ---- SDP (ct_sdp_hdrs_v4/_v6) ---- */

static const struct {
	const char *name, *search4, *search6;
	uint32_t len;
	uint8_t ml;
} sdp_hdrs[] = {
    [CT_SDP_HDR_VERSION] = {"v=", NULL, NULL, 2, ML_DIGITS},
    [CT_SDP_HDR_OWNER] = {"o=", "IN IP4 ", "IN IP6 ", 2, ML_SDP_ADDR},
    [CT_SDP_HDR_CONNECTION] = {"c=", "IN IP4 ", "IN IP6 ", 2, ML_SDP_ADDR},
    [CT_SDP_HDR_MEDIA] = {"m=", NULL, NULL, 2, ML_MEDIA},
};

/* ct_sdp_header_search: within the line, case-sensitive */
static const char *sdp_header_search(const char *p, const char *limit, const char *needle,
				     uint32_t len)
{
	if (limit - p <= (ptrdiff_t)len)
		return NULL;
	for (limit -= len; p < limit; p++) {
		if (*p == '\r' || *p == '\n')
			break;
		if (!strncmp(p, needle, len))
			return p;
	}
	return NULL;
}

int nftdp_ct_sip_get_sdp_header(uint8_t l3, const char *d, uint32_t off, uint32_t dlen,
				enum ct_sdp_hdr type, enum ct_sdp_hdr term, uint32_t *matchoff,
				uint32_t *matchlen)
{
	const char *p, *limit = d + dlen, *search;
	uint32_t shift = 0;

	search = l3 == NFPROTO_IPV4 ? sdp_hdrs[type].search4 : sdp_hdrs[type].search6;
	for (p = d + off; p < limit; p++) {
		if (*p != '\r' && *p != '\n')
			continue;
		if (++p >= limit)
			break;
		if (p[-1] == '\r' && *p == '\n' && ++p >= limit)
			break;
		if (term != CT_SDP_HDR_UNSPEC && limit - p >= (ptrdiff_t)sdp_hdrs[term].len &&
		    !strncasecmp(p, sdp_hdrs[term].name, sdp_hdrs[term].len))
			break;
		if (limit - p >= (ptrdiff_t)sdp_hdrs[type].len &&
		    !strncasecmp(p, sdp_hdrs[type].name, sdp_hdrs[type].len))
			p += sdp_hdrs[type].len;
		else
			continue;
		*matchoff = (uint32_t)(p - d);
		if (search) {
			uint32_t slen = (uint32_t)strlen(search);

			p = sdp_header_search(p, limit, search, slen);
			if (!p)
				return -1;
			p += slen;
		}
		*matchlen = match_len(sdp_hdrs[type].ml, l3, p, limit, &shift);
		if (!*matchlen)
			return -1;
		*matchoff = (uint32_t)(p - d) + shift;
		return 1;
	}
	return 0;
}

static int parse_sdp_addr(uint8_t l3, const char *d, uint32_t off, uint32_t dlen,
			  uint32_t *matchoff, uint32_t *matchlen, union nftdp_ct_addr *addr)
{
	int ret = nftdp_ct_sip_get_sdp_header(l3, d, off, dlen, CT_SDP_HDR_CONNECTION,
					      CT_SDP_HDR_MEDIA, matchoff, matchlen);

	if (ret <= 0)
		return ret;
	if (!sdp_parse_addr(l3, d + *matchoff, NULL, addr, d + *matchoff + *matchlen))
		return -1;
	return 1;
}

/* ---- the helper ---- */

struct sip_ctx {
	struct nftdp_ct_shard *s;
	struct nftdp_ct_entry *e;
	struct nftdp_vm_pkt *pkt;
	int dir; /* CTINFO2DIR */
	uint8_t l3, l4;
	const char *d; /* the message */
	uint32_t dlen;
	uint32_t hlen;	 /* the transport header's length */
	uint32_t msgoff; /* d's offset in the transport payload */
};

static struct ct_help *help_of(struct sip_ctx *c)
{
	return &c->s->help[c->e - c->s->entries];
}

static bool addr_eq(const union nftdp_ct_addr *a, const union nftdp_ct_addr *b, uint8_t l3)
{
	return !memcmp(a, b, l3 == NFPROTO_IPV4 ? 4 : 16);
}

/* ---- nf_nat_sip ---- */

int nftdp_ct_sip_fmt_ip6(char *buf, const uint8_t *a)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t w2 = (uint32_t)a[8] << 24 | (uint32_t)a[9] << 16 | (uint32_t)a[10] << 8 | a[11];
	bool v4 = false, needcolon = false;
	int zero[8] = {0}, longest = 1, colonpos = -1, range, n = 0;

	/* ipv6_addr_v4mapped or ipv6_addr_is_isatap: the last 32 bits dotted */
	if (!memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) || (w2 | 0x02000000u) == 0x02005efeu)
		v4 = true;
	range = v4 ? 6 : 8;
	for (int i = 0; i < range; i++)
		for (int j = i; j < range && !a[2 * j] && !a[2 * j + 1]; j++)
			zero[i]++;
	/* the first longest run of two or more zero words */
	for (int i = 0; i < range; i++)
		if (zero[i] > longest) {
			longest = zero[i];
			colonpos = i;
		}
	for (int i = 0; i < range; i++) {
		unsigned int hi = a[2 * i], lo = a[2 * i + 1];

		if (i == colonpos) {
			if (needcolon || i == 0)
				buf[n++] = ':';
			buf[n++] = ':';
			needcolon = false;
			i += longest - 1;
			continue;
		}
		if (needcolon)
			buf[n++] = ':';
		if (hi) {
			if (hi > 0x0f)
				buf[n++] = hex[hi >> 4];
			buf[n++] = hex[hi & 15];
			buf[n++] = hex[lo >> 4];
			buf[n++] = hex[lo & 15];
		} else {
			if (lo > 0x0f)
				buf[n++] = hex[lo >> 4];
			buf[n++] = hex[lo & 15];
		}
		needcolon = true;
	}
	if (v4) {
		if (needcolon)
			buf[n++] = ':';
		n += snprintf(buf + n, 16, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
	}
	buf[n] = 0;
	return n;
}

/* sip_sprintf_addr: %pI4, or %pI6c, in brackets with delim */
static uint32_t sprintf_addr(uint8_t l3, char *buf, const union nftdp_ct_addr *a, bool delim)
{
	int n = 0;

	if (l3 == NFPROTO_IPV4)
		return (uint32_t)snprintf(buf, 16, "%u.%u.%u.%u", a->u8[0], a->u8[1], a->u8[2],
					  a->u8[3]);
	if (delim)
		buf[n++] = '[';
	n += nftdp_ct_sip_fmt_ip6(buf + n, a->u8);
	if (delim) {
		buf[n++] = ']';
		buf[n] = 0;
	}
	return (uint32_t)n;
}

/* sip_sprintf_addr_port */
static uint32_t sprintf_addr_port(uint8_t l3, char *buf, const union nftdp_ct_addr *a,
				  uint16_t port)
{
	uint32_t n = sprintf_addr(l3, buf, a, l3 != NFPROTO_IPV4);

	return n + (uint32_t)snprintf(buf + n, sizeof(":65535"), ":%u", port);
}

/* mangle_packet: matchlen bytes at matchoff of the message become buf;
 * TCP records no seqadj here (nf_nat_sip_seq_adjust does, once) */
static bool sip_mangle(struct sip_ctx *c, uint32_t matchoff, uint32_t matchlen, const char *buf,
		       uint32_t buflen)
{
	bool ok;

	if (c->l4 == IPPROTO_TCP)
		ok = nftdp_ct_nat_mangle_tcp_adj(c->s, c->e, c->pkt, c->dir, c->msgoff + matchoff,
						 matchlen, buf, buflen, false);
	else
		ok = nftdp_ct_nat_mangle_udp(c->s, c->pkt, c->msgoff + matchoff, matchlen, buf,
					     buflen);
	if (!ok)
		return false;
	c->d = (const char *)c->pkt->data + c->pkt->th_off + c->hlen + c->msgoff;
	c->dlen = c->dlen + buflen - matchlen;
	return true;
}

#define SIP_ADDR_BUF (INET6_ADDRSTRLEN + sizeof("[]:nnnnn"))

/* map_addr: an address and port of this connection's as the other side
 * sees it */
static bool map_addr(struct sip_ctx *c, uint32_t matchoff, uint32_t matchlen,
		     const union nftdp_ct_addr *addr, uint16_t port)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[c->dir], *r = &c->e->tuple[!c->dir];
	union nftdp_ct_addr newaddr;
	char buf[SIP_ADDR_BUF];
	uint16_t newport;

	if (addr_eq(&t->src, addr, c->l3) && t->sport == port) {
		newaddr = r->dst;
		newport = r->dport;
	} else if (addr_eq(&t->dst, addr, c->l3) && t->dport == port) {
		newaddr = r->src;
		newport = help_of(c)->sip_forced_dport ? help_of(c)->sip_forced_dport : r->sport;
	} else {
		return true;
	}
	if (addr_eq(&newaddr, addr, c->l3) && newport == port)
		return true;
	return sip_mangle(c, matchoff, matchlen, buf,
			  sprintf_addr_port(c->l3, buf, &newaddr, ntohs(newport)));
}

/* map_sip_addr: the first header of the type */
static bool map_sip_addr(struct sip_ctx *c, enum ct_sip_hdr type)
{
	uint32_t matchoff, matchlen;
	union nftdp_ct_addr addr;
	uint16_t port;

	if (nftdp_ct_sip_parse_header_uri(c->l3, c->d, NULL, c->dlen, type, NULL, &matchoff,
					  &matchlen, &addr, &port) <= 0)
		return true;
	return map_addr(c, matchoff, matchlen, &addr, port);
}

/* nf_nat_sip_via: the topmost Via of this connection and its maddr=,
 * received= and rport= parameters */
static bool nat_sip_via(struct sip_ctx *c, bool request)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[c->dir], *r = &c->e->tuple[!c->dir];
	enum ct_sip_hdr hdr = c->l4 == IPPROTO_TCP ? CT_SIP_HDR_VIA_TCP : CT_SIP_HDR_VIA_UDP;
	uint32_t matchoff, matchlen, matchend, olen, poff, plen, n;
	union nftdp_ct_addr addr;
	char buf[SIP_ADDR_BUF];
	uint16_t port;

	if (nftdp_ct_sip_parse_header_uri(c->l3, c->d, NULL, c->dlen, hdr, NULL, &matchoff,
					  &matchlen, &addr, &port) <= 0)
		return true;
	/* only a Via of this connection's */
	if (request ? !addr_eq(&addr, &t->src, c->l3) || port != t->sport
		    : !addr_eq(&addr, &t->dst, c->l3) || port != t->dport)
		return true;
	olen = c->dlen;
	if (!map_addr(c, matchoff, matchlen, &addr, port))
		return false; /* "cannot mangle Via header" */
	matchend = matchoff + matchlen + c->dlen - olen;
	/* maddr= (RFC 2361): where to send the reply */
	if (parse_address_param(c->l3, c->d, matchend, c->dlen, "maddr=", &poff, &plen, &addr,
				true) > 0 &&
	    addr_eq(&addr, &t->src, c->l3) && !addr_eq(&addr, &r->dst, c->l3) &&
	    !sip_mangle(c, poff, plen, buf, sprintf_addr(c->l3, buf, &r->dst, true)))
		return false; /* "cannot mangle maddr" */
	/* received= (RFC 2361): where the server got the request from */
	if (parse_address_param(c->l3, c->d, matchend, c->dlen, "received=", &poff, &plen, &addr,
				false) > 0 &&
	    addr_eq(&addr, &t->dst, c->l3) && !addr_eq(&addr, &r->src, c->l3) &&
	    !sip_mangle(c, poff, plen, buf, sprintf_addr(c->l3, buf, &r->src, false)))
		return false; /* "cannot mangle received" */
	/* rport= (RFC 3581): the port the server got the request from */
	if (parse_numerical_param_at(c->d, matchend, c->dlen, "rport=", &poff, &plen, &n) > 0 &&
	    n >= 1024 && n <= 65535 && htons((uint16_t)n) == t->dport &&
	    htons((uint16_t)n) != r->sport &&
	    !sip_mangle(c, poff, plen, buf,
			(uint32_t)snprintf(buf, sizeof(buf), "%u", (unsigned int)ntohs(r->sport))))
		return false; /* "cannot mangle rport" */
	return true;
}

/* nf_nat_sip: the Request-URI, the topmost Via, every Contact, From and
 * To; NF_ACCEPT or NF_DROP */
static unsigned int nat_sip(struct sip_ctx *c)
{
	uint32_t matchoff, matchlen, coff = 0;
	union nftdp_ct_addr addr;
	int in_header = 0;
	bool request;
	uint16_t port;

	/* "SIP/2.0" without the space that process_sip_msg looks for */
	request = c->dlen < 7 || strncasecmp(c->d, "SIP/2.0", 7);
	if (request &&
	    nftdp_ct_sip_parse_request(c->l3, c->d, c->dlen, &matchoff, &matchlen, &addr, &port) >
		0 &&
	    !map_addr(c, matchoff, matchlen, &addr, port))
		return NF_DROP; /* "cannot mangle SIP message" */
	if (!nat_sip_via(c, request))
		return NF_DROP;
	while (nftdp_ct_sip_parse_header_uri(c->l3, c->d, &coff, c->dlen, CT_SIP_HDR_CONTACT,
					     &in_header, &matchoff, &matchlen, &addr, &port) > 0)
		if (!map_addr(c, matchoff, matchlen, &addr, port))
			return NF_DROP; /* "cannot mangle contact" */
	if (!map_sip_addr(c, CT_SIP_HDR_FROM) || !map_sip_addr(c, CT_SIP_HDR_TO))
		return NF_DROP; /* "cannot mangle SIP from/to" */
	/* the reply to where a Cisco phone listens, not where it sent from;
	 * nf_nat_mangle_udp_packet of nothing recomputes the checksum */
	if (c->dir == IP_CT_DIR_REPLY && help_of(c)->sip_forced_dport) {
		uint8_t *th = c->pkt->data + c->pkt->th_off;

		/* "forced_dport only expected with UDP": a TCP connection's
		 * (a request over TCP whose Via names UDP and another port)
		 * replies are dropped, as this kernel (6.18.y, with the
		 * stable fix) does; older ones wrote the port and a UDP
		 * length and checksum into the TCP header */
		if (c->l4 != IPPROTO_UDP)
			return NF_DROP;
		memcpy(th + 2, &help_of(c)->sip_forced_dport, 2);
		if (!nftdp_ct_nat_mangle_udp(c->s, c->pkt, 0, 0, "", 0))
			return NF_DROP; /* "cannot mangle packet" */
		c->d = (const char *)c->pkt->data + c->pkt->th_off + c->hlen + c->msgoff;
	}
	return NF_ACCEPT;
}

/* ---- nf_nat_sip's SDP half ---- */

static bool nat_on(const struct sip_ctx *c)
{
	return (c->e->status & IPS_NAT_MASK) != 0;
}

/* mangle_content_len: the body's length from its v= line on */
static bool mangle_content_len(struct sip_ctx *c)
{
	uint32_t matchoff, matchlen, clen;
	char buf[sizeof("65536")];

	if (nftdp_ct_sip_get_sdp_header(c->l3, c->d, 0, c->dlen, CT_SDP_HDR_VERSION,
					CT_SDP_HDR_UNSPEC, &matchoff, &matchlen) <= 0)
		return false;
	clen = c->dlen - matchoff + 2;
	if (nftdp_ct_sip_get_header(c->l3, c->d, 0, c->dlen, CT_SIP_HDR_CONTENT_LENGTH, &matchoff,
				    &matchlen) <= 0)
		return false;
	return sip_mangle(c, matchoff, matchlen, buf,
			  (uint32_t)snprintf(buf, sizeof(buf), "%u", clen));
}

/* mangle_sdp_packet: 0, -ENOENT (no such line) or -EINVAL */
static int mangle_sdp_packet(struct sip_ctx *c, uint32_t sdpoff, enum ct_sdp_hdr type,
			     enum ct_sdp_hdr term, const char *buf, uint32_t buflen)
{
	uint32_t matchoff, matchlen;

	if (nftdp_ct_sip_get_sdp_header(c->l3, c->d, sdpoff, c->dlen, type, term, &matchoff,
					&matchlen) <= 0)
		return -ENOENT;
	return sip_mangle(c, matchoff, matchlen, buf, buflen) ? 0 : -EINVAL;
}

/* nf_nat_sdp_addr: a media's c= */
static unsigned int nat_sdp_addr(struct sip_ctx *c, uint32_t sdpoff, enum ct_sdp_hdr type,
				 enum ct_sdp_hdr term, const union nftdp_ct_addr *addr)
{
	char buf[SIP_ADDR_BUF];

	if (mangle_sdp_packet(c, sdpoff, type, term, buf, sprintf_addr(c->l3, buf, addr, false)))
		return NF_DROP;
	return mangle_content_len(c) ? NF_ACCEPT : NF_DROP;
}

/* nf_nat_sdp_port: an m= line's port */
static bool nat_sdp_port(struct sip_ctx *c, uint32_t matchoff, uint32_t matchlen, uint16_t port)
{
	char buf[sizeof("nnnnn")];

	return sip_mangle(c, matchoff, matchlen, buf,
			  (uint32_t)snprintf(buf, sizeof(buf), "%u", port)) &&
	       mangle_content_len(c);
}

/* nf_nat_sdp_session: the session's o= (which must be there) and c= */
static unsigned int nat_sdp_session(struct sip_ctx *c, uint32_t sdpoff,
				    const union nftdp_ct_addr *addr)
{
	char buf[SIP_ADDR_BUF];
	uint32_t n = sprintf_addr(c->l3, buf, addr, false);

	if (mangle_sdp_packet(c, sdpoff, CT_SDP_HDR_OWNER, CT_SDP_HDR_MEDIA, buf, n))
		return NF_DROP;
	/* RFC 2327: the session's c= may be left out */
	if (mangle_sdp_packet(c, sdpoff, CT_SDP_HDR_CONNECTION, CT_SDP_HDR_MEDIA, buf, n) ==
	    -EINVAL)
		return NF_DROP;
	return mangle_content_len(c) ? NF_ACCEPT : NF_DROP;
}

/*
 * nf_nat_sdp_media: the media is expected at the address the peer sees
 * (the NAT's, unless this direction is not NATed), at the announced port
 * pair or the next free even one (EBUSY), NATed back to the announced
 * address and port when it comes (nf_nat_sip_expected, as
 * nf_nat_follow_master here: with sip_direct_media the expected source
 * is the master's peer, so its source condition always holds); a moved
 * port is written into the m= line. *rtp_addr: the address announced now.
 */
static unsigned int nat_sdp_media(struct sip_ctx *c, struct ct_expect *rtp, struct ct_expect *rtcp,
				  uint32_t mediaoff, uint32_t medialen,
				  union nftdp_ct_addr *rtp_addr)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[c->dir], *r = &c->e->tuple[!c->dir];
	uint16_t saved = rtp->tuple.dport, port;
	uint32_t max = nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_SIP, rtp->class);
	int ret;

	if (addr_eq(&t->src, &r->dst, c->l3))
		*rtp_addr = rtp->tuple.dst; /* "connection will come from reply" */
	else
		*rtp_addr = r->dst;
	nftdp_ct_expect_set_nat(rtp, c->e, !c->dir, rtp->tuple.dport);
	rtp->tuple.dst = *rtp_addr;
	rtp->nat_sip = true;
	nftdp_ct_expect_set_nat(rtcp, c->e, !c->dir, rtcp->tuple.dport);
	rtcp->tuple.dst = *rtp_addr;
	rtcp->nat_sip = true;
	for (port = ntohs(saved); port != 0; port = (uint16_t)(port + 2)) {
		rtp->tuple.dport = htons(port);
		ret = nftdp_ct_expect_related_flags(c->s, c->e, rtp, max, SIP_EXP_TIMEOUT_S,
						    CT_EXP_F_SKIP_MASTER);
		if (ret == -EBUSY)
			continue;
		if (ret < 0) {
			port = 0;
			break;
		}
		rtcp->tuple.dport = htons((uint16_t)(port + 1));
		ret = nftdp_ct_expect_related_flags(c->s, c->e, rtcp, max, SIP_EXP_TIMEOUT_S,
						    CT_EXP_F_SKIP_MASTER);
		if (ret == 0)
			break;
		nftdp_ct_expect_unexpect(c->s, c->e, rtp);
		if (ret != -EBUSY) {
			port = 0;
			break;
		}
	}
	if (!port)
		return NF_DROP; /* "all ports in use for SDP media" */
	if (rtp->tuple.dport != saved && !nat_sdp_port(c, mediaoff, medialen, port)) {
		nftdp_ct_expect_unexpect(c->s, c->e, rtp);
		nftdp_ct_expect_unexpect(c->s, c->e, rtcp);
		return NF_DROP; /* "cannot mangle SDP message" */
	}
	return NF_ACCEPT;
}

/*
 * __nf_ct_expect_find's search in set_expected_rtp_rtcp: another master's
 * expectation of this helper and class that the media tuple matches.
 * Under NAT, one whose saved address or port differs from its tuple's
 * destination (one nf_nat_sdp_media made at the NAT address or at a moved
 * port, or one made without NAT, whose saved address and port are 0)
 * means both calls are NATed: the media goes directly to its saved
 * address and port (direct RTP), searched once more; any other found
 * one stands for this media (skip). 1: skip, 0: make the pair at *daddr
 * and *port (network order), which direct RTP changed (*direct).
 */
static int sip_media_search(struct sip_ctx *c, union nftdp_ct_addr *daddr, uint16_t *port,
			    uint8_t class, bool *direct)
{
	struct nftdp_ct_tuple q;
	struct ct_expect y;

	memset(&q, 0, sizeof(q));
	q.l3proto = c->l3;
	q.l4proto = IPPROTO_UDP;
	q.src = c->e->tuple[!c->dir].src;
	q.dst = *daddr;
	q.dport = *port;
	q.zone = nftdp_ct_entry_zone(c->e);
	*direct = false;
	for (;;) {
		union nftdp_ct_addr saved;
		uint16_t saved_port;

		/* the helper is one per family and protocol, as the
		 * kernel's sip[i][j] */
		if (!nftdp_ct_expect_find(c->s, &q, &y) ||
		    (y.master_shard == c->s->cfg.shard_id &&
		     y.master_idx == (uint32_t)(c->e - c->s->entries) && y.master_id == c->e->id) ||
		    y.helper != c->e->helper ||
		    y.master_tuple.l4proto != c->e->tuple[IP_CT_DIR_ORIGINAL].l4proto ||
		    y.class != class)
			return 0;
		memset(&saved, 0, sizeof(saved));
		saved_port = 0;
		if (y.nat_sip) {
			saved = y.nat_dst;
			saved_port = y.nat_port;
		}
		if (*direct || !nat_on(c) ||
		    (addr_eq(&saved, &y.tuple.dst, c->l3) && saved_port == y.tuple.dport))
			return 1;
		*daddr = saved;
		q.dst = saved;
		q.dport = saved_port;
		*port = saved_port;
		*direct = true;
	}
}

/* set_expected_rtp_rtcp with sip_direct_media; under NAT through
 * nf_nat_sdp_media, or direct RTP, either of which may change *daddr */
static unsigned int set_expected_rtp_rtcp(struct sip_ctx *c, union nftdp_ct_addr *daddr,
					  uint16_t port, uint8_t class, uint32_t mediaoff,
					  uint32_t medialen)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[c->dir];
	const union nftdp_ct_addr *saddr = &c->e->tuple[!c->dir].src;
	uint16_t base, port_be = htons(port);
	struct ct_expect rtp, rtcp;
	bool direct;
	int skip, errp, errcp;

	/* media between the signalling endpoints only */
	if (!addr_eq(daddr, &t->src, c->l3))
		return NF_ACCEPT;
	/* the same media of another call (several endpoints receiving one
	 * call, or two NATed calls of the same media) */
	skip = sip_media_search(c, daddr, &port_be, class, &direct);
	base = (uint16_t)(ntohs(port_be) & ~1u);
	if (direct && !nat_sdp_port(c, mediaoff, medialen, base))
		return NF_DROP; /* "cannot add expectation for voice" */
	if (skip)
		return NF_ACCEPT;
	nftdp_ct_expect_init(&rtp, c->l3, saddr, daddr, IPPROTO_UDP, 0, htons(base));
	rtp.class = class;
	nftdp_ct_expect_init(&rtcp, c->l3, saddr, daddr, IPPROTO_UDP, 0,
			     htons((uint16_t)(base + 1)));
	rtcp.class = class;
	if (nat_on(c) && !direct)
		return nat_sdp_media(c, &rtp, &rtcp, mediaoff, medialen, daddr);
	/* an identical expectation of another master (or class) stands for
	 * this one (NF_CT_EXP_F_SKIP_MASTER, -EALREADY) */
	errp = nftdp_ct_expect_related_flags(c->s, c->e, &rtp,
					     nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_SIP, class),
					     SIP_EXP_TIMEOUT_S, CT_EXP_F_SKIP_MASTER);
	if (errp == 0 || errp == -EALREADY) {
		errcp = nftdp_ct_expect_related_flags(
		    c->s, c->e, &rtcp, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_SIP, class),
		    SIP_EXP_TIMEOUT_S, CT_EXP_F_SKIP_MASTER);
		if (errcp == 0 || errcp == -EALREADY)
			return NF_ACCEPT;
		if (errp == 0)
			nftdp_ct_expect_unexpect(c->s, c->e, &rtp);
	}
	return NF_DROP; /* "cannot add expectation for voice" */
}

static const struct {
	const char *name;
	uint32_t len;
	uint8_t class;
} sdp_media_types[] = {
    {"audio ", 6, CT_SIP_EXPECT_AUDIO},
    {"video ", 6, CT_SIP_EXPECT_VIDEO},
    {"image ", 6, CT_SIP_EXPECT_IMAGE},
};

/* process_sdp; under NAT each media's c=, then the session's o= and c=
 * are written as the address announced (nf_nat_sdp_addr,
 * nf_nat_sdp_session), the Content-Length after each */
static unsigned int process_sdp(struct sip_ctx *c, uint32_t cseq)
{
	uint32_t matchoff, matchlen, mediaoff, medialen, sdpoff, caddr_len = 0, maddr_len;
	union nftdp_ct_addr caddr, maddr, rtp_addr;
	unsigned int i = 0, ret = NF_ACCEPT;
	bool have_rtp_addr = false;

	(void)cseq;
	/* the session description starts at v= */
	if (nftdp_ct_sip_get_sdp_header(c->l3, c->d, 0, c->dlen, CT_SDP_HDR_VERSION,
					CT_SDP_HDR_UNSPEC, &matchoff, &matchlen) <= 0)
		return NF_ACCEPT;
	sdpoff = matchoff;
	/* the session's c= (up to the first m=) */
	if (parse_sdp_addr(c->l3, c->d, sdpoff, c->dlen, &matchoff, &matchlen, &caddr) > 0) {
		caddr_len = matchlen;
		rtp_addr = caddr;
		have_rtp_addr = true;
	}
	mediaoff = sdpoff;
	while (i < sizeof(sdp_media_types) / sizeof(sdp_media_types[0])) {
		unsigned int k, t = ~0u;
		const char *end;
		uint32_t port;

		if (nftdp_ct_sip_get_sdp_header(c->l3, c->d, mediaoff, c->dlen, CT_SDP_HDR_MEDIA,
						CT_SDP_HDR_UNSPEC, &mediaoff, &medialen) <= 0)
			break;
		for (k = 0; k < sizeof(sdp_media_types) / sizeof(sdp_media_types[0]); k++)
			if (medialen >= sdp_media_types[k].len &&
			    !strncmp(c->d + mediaoff, sdp_media_types[k].name,
				     sdp_media_types[k].len)) {
				t = k;
				break;
			}
		if (t == ~0u) {
			mediaoff += medialen;
			continue;
		}
		mediaoff += sdp_media_types[t].len;
		medialen -= sdp_media_types[t].len;
		/* port 0: an inactive stream */
		port = nftdp_ct_sip_strtouint(c->d + mediaoff, c->dlen - mediaoff, &end);
		if (port == 0 || end == c->d + mediaoff)
			continue;
		if (port < 1024 || port > 65535)
			return NF_DROP; /* "wrong port" */
		/* the media's c= overrides the session's */
		maddr_len = 0;
		if (parse_sdp_addr(c->l3, c->d, mediaoff, c->dlen, &matchoff, &matchlen, &maddr) >
		    0) {
			maddr_len = matchlen;
			rtp_addr = maddr;
			have_rtp_addr = true;
		} else if (caddr_len) {
			rtp_addr = caddr;
			have_rtp_addr = true;
		} else {
			return NF_DROP; /* "cannot parse SDP message" */
		}
		ret = set_expected_rtp_rtcp(c, &rtp_addr, (uint16_t)port, sdp_media_types[t].class,
					    mediaoff, medialen);
		if (ret != NF_ACCEPT)
			return ret;
		/* the media's own c=, as announced */
		if (maddr_len && nat_on(c)) {
			ret = nat_sdp_addr(c, mediaoff, CT_SDP_HDR_CONNECTION, CT_SDP_HDR_MEDIA,
					   &rtp_addr);
			if (ret != NF_ACCEPT)
				return ret; /* "cannot mangle SDP" */
		}
		i++;
	}
	/* the session's o= and c=: as the last media's address, else the
	 * session's c=, else (no address at all) left alone */
	if (nat_on(c) && have_rtp_addr)
		ret = nat_sdp_session(c, sdpoff, &rtp_addr);
	return ret;
}

/* process_invite_response, process_update_response, process_prack_response */
static unsigned int process_sdp_response(struct sip_ctx *c, uint32_t cseq, uint32_t code)
{
	if ((code >= 100 && code <= 199) || (code >= 200 && code <= 299))
		return process_sdp(c, cseq);
	if (help_of(c)->sip_invite_cseq == cseq)
		nftdp_ct_expect_flush_class(c->s, c->e, true);
	return NF_ACCEPT;
}

static unsigned int process_invite_request(struct sip_ctx *c, uint32_t cseq)
{
	unsigned int ret;

	nftdp_ct_expect_flush_class(c->s, c->e, true);
	ret = process_sdp(c, cseq);
	if (ret == NF_ACCEPT)
		help_of(c)->sip_invite_cseq = cseq;
	return ret;
}

static unsigned int process_bye_request(struct sip_ctx *c, uint32_t cseq)
{
	(void)cseq;
	nftdp_ct_expect_flush_class(c->s, c->e, true);
	return NF_ACCEPT;
}

/*
 * nf_nat_sip_expect: the registrar's calls are expected at the address it
 * sees (the NAT's, unless this direction is not NATed) and at the port
 * it sees when the Contact names the port the request came from, else at
 * the Contact's, or a random free one above (nf_nat_exp_find_port, as
 * nf_nat_ftp's); NATed back to the
 * Contact (nf_nat_sip_expected, as nf_nat_follow_master: the expected
 * source is the registrar). A Contact that moved is written again.
 */
static unsigned int nat_sip_expect(struct sip_ctx *c, struct ct_expect *x, uint32_t matchoff,
				   uint32_t matchlen)
{
	const struct nftdp_ct_tuple *t = &c->e->tuple[c->dir], *r = &c->e->tuple[!c->dir];
	uint16_t srcport = help_of(c)->sip_forced_dport ? help_of(c)->sip_forced_dport : t->sport;
	union nftdp_ct_addr newaddr, saved = x->tuple.dst;
	uint16_t saved_port = x->tuple.dport, port;
	char buf[SIP_ADDR_BUF];

	newaddr = addr_eq(&t->src, &r->dst, c->l3) ? x->tuple.dst : r->dst;
	port = x->tuple.dport == srcport ? ntohs(r->dport) : ntohs(x->tuple.dport);
	nftdp_ct_expect_set_nat(x, c->e, !c->dir, saved_port);
	x->tuple.dst = newaddr;
	x->nat_sip = true;
	/* nf_nat_exp_find_port: the port, else up to 128 random ones above
	 * it on a clash */
	port = nftdp_ct_nat_exp_find_port(
	    c->s, c->e, x, port, nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_SIP, CT_SIP_EXPECT_SIGNALLING),
	    SIP_EXP_TIMEOUT_S);
	if (!port)
		return NF_DROP; /* "all ports in use for SIP" */
	if ((!addr_eq(&x->tuple.dst, &saved, c->l3) || x->tuple.dport != saved_port) &&
	    !sip_mangle(c, matchoff, matchlen, buf,
			sprintf_addr_port(c->l3, buf, &newaddr, port))) {
		nftdp_ct_expect_unexpect(c->s, c->e, x);
		return NF_DROP; /* "cannot mangle packet" */
	}
	return NF_ACCEPT;
}

/* process_register_request: a permanent, inactive expectation for calls
 * from the registrar to the Contact address */
static unsigned int process_register_request(struct sip_ctx *c, uint32_t cseq)
{
	uint32_t matchoff, matchlen, expires = 0;
	union nftdp_ct_addr daddr;
	struct ct_expect x;
	uint16_t port;
	uint8_t proto;
	int ret;

	if (c->e->status & IPS_EXPECTED)
		return NF_ACCEPT; /* expected connections do not register again */
	if (nftdp_ct_sip_get_header(c->l3, c->d, 0, c->dlen, CT_SIP_HDR_EXPIRES, &matchoff,
				    &matchlen) > 0)
		expires = nftdp_ct_sip_strtouint(c->d + matchoff, c->dlen - matchoff, NULL);
	ret = nftdp_ct_sip_parse_header_uri(c->l3, c->d, NULL, c->dlen, CT_SIP_HDR_CONTACT, NULL,
					    &matchoff, &matchlen, &daddr, &port);
	if (ret < 0)
		return NF_DROP; /* "cannot parse contact" */
	if (ret == 0)
		return NF_ACCEPT;
	/* no third-party registrations */
	if (!addr_eq(&c->e->tuple[c->dir].src, &daddr, c->l3))
		return NF_ACCEPT;
	if (!parse_transport(c->l4, c->d, matchoff + matchlen, c->dlen, &proto))
		return NF_ACCEPT;
	if (parse_numerical_param(c->d, matchoff + matchlen, c->dlen, "expires=", &expires) < 0)
		return NF_DROP; /* "cannot parse expires" */
	if (expires == 0) {
		help_of(c)->sip_register_cseq = cseq;
		return NF_ACCEPT;
	}
	/* sip_direct_signalling: only from the registrar */
	nftdp_ct_expect_init(&x, c->l3, &c->e->tuple[!c->dir].src, &daddr, proto, 0, port);
	x.class = CT_SIP_EXPECT_SIGNALLING;
	x.flags = NF_CT_EXPECT_PERMANENT | NF_CT_EXPECT_INACTIVE;
	x.exp_helper = NFTDP_VM_CT_HELPER_SIP;
	/* nf_ct_expect_insert gives it the class's timeout, not sip_timeout */
	if (nat_on(c)) {
		unsigned int v = nat_sip_expect(c, &x, matchoff, matchlen);

		if (v != NF_ACCEPT)
			return v;
	} else if (nftdp_ct_expect_related(
		       c->s, c->e, &x,
		       nftdp_ct_exp_max(NFTDP_VM_CT_HELPER_SIP, CT_SIP_EXPECT_SIGNALLING),
		       SIP_EXP_TIMEOUT_S) != 0) {
		return NF_DROP; /* "cannot add expectation" */
	}
	help_of(c)->sip_register_cseq = cseq;
	return NF_ACCEPT;
}

/* process_register_response: a 2xx activates the expectation for the
 * Contact's expiry; anything else removes it */
static unsigned int process_register_response(struct sip_ctx *c, uint32_t cseq, uint32_t code)
{
	uint32_t matchoff, matchlen, coff = 0, expires = 0;
	union nftdp_ct_addr addr;
	int in_contact = 0, ret;
	uint16_t port;
	uint8_t proto;

	/* late responses to an older request */
	if (help_of(c)->sip_register_cseq != cseq)
		return NF_ACCEPT;
	if (code >= 100 && code <= 199)
		return NF_ACCEPT;
	if (code < 200 || code > 299)
		goto flush;
	if (nftdp_ct_sip_get_header(c->l3, c->d, 0, c->dlen, CT_SIP_HDR_EXPIRES, &matchoff,
				    &matchlen) > 0)
		expires = nftdp_ct_sip_strtouint(c->d + matchoff, c->dlen - matchoff, NULL);
	for (;;) {
		uint32_t c_expires = expires;

		ret =
		    nftdp_ct_sip_parse_header_uri(c->l3, c->d, &coff, c->dlen, CT_SIP_HDR_CONTACT,
						  &in_contact, &matchoff, &matchlen, &addr, &port);
		if (ret < 0)
			return NF_DROP; /* "cannot parse contact" */
		if (ret == 0)
			break;
		if (!addr_eq(&c->e->tuple[c->dir].dst, &addr, c->l3))
			continue;
		if (!parse_transport(c->l4, c->d, matchoff + matchlen, c->dlen, &proto))
			continue;
		ret = parse_numerical_param(c->d, matchoff + matchlen, c->dlen,
					    "expires=", &c_expires);
		if (ret < 0)
			return NF_DROP; /* "cannot parse expires" */
		if (c_expires == 0)
			break;
		if (nftdp_ct_expect_refresh_signalling(c->s, c->e, &addr, proto, port, c_expires))
			return NF_ACCEPT;
	}
flush:
	nftdp_ct_expect_flush_class(c->s, c->e, false);
	return NF_ACCEPT;
}

enum { H_INVITE, H_UPDATE, H_ACK, H_PRACK, H_BYE, H_REGISTER, H_MAX };
static const struct {
	const char *method;
	uint32_t len;
	bool request, response;
} sip_handlers[H_MAX] = {
    [H_INVITE] = {"INVITE", 6, true, true}, [H_UPDATE] = {"UPDATE", 6, true, true},
    [H_ACK] = {"ACK", 3, true, false},	    [H_PRACK] = {"PRACK", 5, true, true},
    [H_BYE] = {"BYE", 3, true, false},	    [H_REGISTER] = {"REGISTER", 8, true, true},
};

static unsigned int process_sip_response(struct sip_ctx *c)
{
	uint32_t matchoff, matchlen, matchend, code, cseq;
	const char *end;

	if (c->dlen < sizeof("SIP/2.0 200") - 1)
		return NF_ACCEPT;
	code = nftdp_ct_sip_strtouint(c->d + 8, c->dlen - 8, NULL);
	if (!code)
		return NF_DROP; /* "cannot get code" */
	if (nftdp_ct_sip_get_header(c->l3, c->d, 0, c->dlen, CT_SIP_HDR_CSEQ, &matchoff,
				    &matchlen) <= 0)
		return NF_DROP; /* "cannot parse cseq" */
	cseq = nftdp_ct_sip_strtouint(c->d + matchoff, c->dlen - matchoff, &end);
	if (end == c->d + matchoff)
		return NF_DROP; /* "cannot get cseq" */
	matchend = matchoff + matchlen + 1;
	for (unsigned int h = 0; h < H_MAX; h++) {
		if (!sip_handlers[h].response)
			continue;
		if (c->dlen < matchend + sip_handlers[h].len ||
		    strncasecmp(c->d + matchend, sip_handlers[h].method, sip_handlers[h].len))
			continue;
		if (h == H_REGISTER)
			return process_register_response(c, cseq, code);
		return process_sdp_response(c, cseq, code);
	}
	return NF_ACCEPT;
}

static unsigned int process_sip_request(struct sip_ctx *c)
{
	uint32_t matchoff, matchlen, cseq;
	const char *end;

	union nftdp_ct_addr addr;
	uint16_t port;

	/* a Cisco phone sends from a high port and listens at its Via's:
	 * nf_nat_sip sends the replies there */
	if (nftdp_ct_sip_parse_header_uri(c->l3, c->d, NULL, c->dlen, CT_SIP_HDR_VIA_UDP, NULL,
					  &matchoff, &matchlen, &addr, &port) > 0 &&
	    port != c->e->tuple[c->dir].sport && addr_eq(&addr, &c->e->tuple[c->dir].src, c->l3))
		help_of(c)->sip_forced_dport = port;
	for (unsigned int h = 0; h < H_MAX; h++) {
		uint32_t n = sip_handlers[h].len;

		if (c->dlen < n + 2 || strncasecmp(c->d, sip_handlers[h].method, n))
			continue;
		if (c->d[n] != ' ' || !isalpha((unsigned char)c->d[n + 1]))
			continue;
		if (nftdp_ct_sip_get_header(c->l3, c->d, 0, c->dlen, CT_SIP_HDR_CSEQ, &matchoff,
					    &matchlen) <= 0)
			return NF_DROP; /* "cannot parse cseq" */
		cseq = nftdp_ct_sip_strtouint(c->d + matchoff, c->dlen - matchoff, &end);
		if (end == c->d + matchoff)
			return NF_DROP; /* "cannot get cseq" */
		switch (h) {
		case H_INVITE:
			return process_invite_request(c, cseq);
		case H_BYE:
			return process_bye_request(c, cseq);
		case H_REGISTER:
			return process_register_request(c, cseq);
		default:
			return process_sdp(c, cseq);
		}
	}
	return NF_ACCEPT;
}

static unsigned int process_sip_msg(struct sip_ctx *c)
{
	unsigned int ret;

	if (strncasecmp(c->d, "SIP/2.0 ", 8))
		ret = process_sip_request(c);
	else
		ret = process_sip_response(c);
	/* nf_nat_sip_hooks->msg: "cannot NAT SIP message" */
	if (ret == NF_ACCEPT && (c->e->status & IPS_NAT_MASK))
		ret = nat_sip(c);
	return ret;
}

unsigned int nftdp_ct_sip_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	uint32_t l4len = nftdp_ct_l4len(pkt), dataoff, datalen, tdiff = 0;
	const uint8_t *th = pkt->data + pkt->th_off;
	struct sip_ctx c = {
	    s, e, pkt, ctinfo >= IP_CT_IS_REPLY, e->tuple[0].l3proto, pkt->l4proto, NULL, 0, 0, 0};
	unsigned int ret = NF_ACCEPT;

	if (pkt->l4proto == IPPROTO_UDP) {
		dataoff = 8;
	} else if (pkt->l4proto == IPPROTO_TCP) {
		if (ctinfo != IP_CT_ESTABLISHED && ctinfo != IP_CT_ESTABLISHED_REPLY)
			return NF_ACCEPT;
		if (l4len < 20)
			return NF_ACCEPT;
		dataoff = (uint32_t)(th[12] >> 4) * 4;
	} else {
		return NF_ACCEPT;
	}
	/* no data */
	if (dataoff >= l4len)
		return NF_ACCEPT;
	/* nf_ct_refresh */
	if (!(e->status & IPS_FIXED_TIMEOUT))
		e->expires_ms = s->now_ms + (uint64_t)SIP_TIMEOUT_S * 1000u;
	c.hlen = dataoff;
	c.d = (const char *)th + dataoff;
	c.dlen = l4len - dataoff;
	if (c.dlen < sizeof("SIP/2.0 200") - 1)
		return NF_ACCEPT;
	if (pkt->l4proto == IPPROTO_UDP)
		return process_sip_msg(&c);
	/* sip_help_tcp: each message that ends by its Content-Length; a
	 * rewrite moves what follows, the offsets go on from the new end */
	datalen = c.dlen;
	for (;;) {
		const char *d = (const char *)pkt->data + pkt->th_off + dataoff + c.msgoff;
		uint32_t matchoff, matchlen, clen, msglen;
		const char *end;
		bool term = false;

		if (nftdp_ct_sip_get_header(c.l3, d, 0, datalen, CT_SIP_HDR_CONTENT_LENGTH,
					    &matchoff, &matchlen) <= 0)
			break;
		clen = nftdp_ct_sip_strtouint(d + matchoff, datalen - matchoff, &end);
		if (end == d + matchoff)
			break;
		for (; end + 4 <= d + datalen; end++)
			if (end[0] == '\r' && end[1] == '\n' && end[2] == '\r' && end[3] == '\n') {
				term = true;
				break;
			}
		if (!term)
			break;
		if ((uint64_t)(end + 4 - d) + clen > datalen)
			return NF_ACCEPT; /* the message goes on in a later segment (no
					   * seq adjust for what was rewritten before) */
		msglen = (uint32_t)(end + 4 - d) + clen;
		c.d = d;
		c.dlen = msglen;
		ret = process_sip_msg(&c);
		if (ret != NF_ACCEPT)
			break;
		tdiff += c.dlen - msglen;
		c.msgoff += c.dlen;
		datalen -= msglen;
	}
	/* nf_nat_sip_seq_adjust: the segment's growth, as an s16 */
	if (ret == NF_ACCEPT && (e->status & IPS_NAT_MASK) && (int16_t)tdiff != 0)
		nftdp_ct_seqadj_set(s, e, c.dir, nftdp_rd32(pkt->data + pkt->th_off + 4),
				    (int16_t)tdiff);
	return ret;
}
