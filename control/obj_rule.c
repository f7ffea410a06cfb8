/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rules: mirrors nf_tables_newrule, nf_tables_delrule, nf_tables_getrule and
 * the reference keeping of the expressions that name other objects
 * (immediate jump/goto, lookup, dynset, objref, flow_offload).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "ctl_state.h"

#include <libnftnl/expr.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_synproxy.h>
#include <linux/netfilter_bridge.h>
#include <linux/xfrm.h> /* XFRM_POLICY_OUT */

/* Expression types the kernel here knows, per family where it matters
 * (nf_tables_expr_parse -> __nft_expr_type_get). queue is not built in,
 * nor flow_offload (no flowtable types) unless the daemon enables
 * flowtables. */
static const char *const known_exprs[] = {
    "immediate", "cmp",	   "lookup",	"bitwise", "byteorder", "payload", "range",  "meta",
    "rt",	 "exthdr", "ct",	"limit",   "log",	"counter", "quota",  "numgen",
    "hash",	 "fib",	   "nat",	"masq",	   "redir",	"reject",  "dynset", "objref",
    "fwd",	 "dup",	   "connlimit", "tunnel",  "osf",	"socket",  "tproxy", "xfrm",
    "synproxy",	 "last",   "inner",	"match",   "target",	"notrack", NULL,
};

static bool expr_known(const struct nftdp_ctl *ctl, const char *name, uint8_t family)
{
	if (strcmp(name, "flow_offload") == 0)
		return ctl->cfg.flowtables;
	if (strcmp(name, "reject") == 0 && family == NFPROTO_BRIDGE)
		return false;
	/* fib: ip, ip6, inet and netdev types only */
	if (strcmp(name, "fib") == 0 && (family == NFPROTO_BRIDGE || family == NFPROTO_ARP))
		return false;
	for (unsigned int i = 0; known_exprs[i]; i++)
		if (strcmp(known_exprs[i], name) == 0)
			return true;
	return false;
}

/* Walk NFTA_RULE_EXPRESSIONS as nf_tables_expr_parse does: every element
 * must be a nest with a known NFTA_EXPR_NAME. */
/*
 * libnftnl 1.2.4's nftnl_parse_verdict reads an uninitialised attribute
 * table when a jump or goto carries no NFTA_VERDICT_CHAIN (nft sends only
 * NFTA_VERDICT_CHAIN_ID for a binding chain, `jump { accept }`) and
 * crashes in strdup. Such a verdict never reaches libnftnl: neither name
 * nor id is EINVAL (nft_verdict_init); one by id is counted in *nids, and
 * the request is parsed from a copy that names the chain (ids_to_names).
 */
static int imm_verdict_check(struct ctl_msg *m, const struct nlattr *elem, unsigned int *nids)
{
	const struct nlattr *a, *d, *v, *x;

	mnl_attr_for_each_nested(a, elem)
	{
		if (mnl_attr_get_type(a) != NFTA_EXPR_DATA)
			continue;
		mnl_attr_for_each_nested(d, a)
		{
			if (mnl_attr_get_type(d) != NFTA_IMMEDIATE_DATA)
				continue;
			mnl_attr_for_each_nested(v, d)
			{
				bool jump = false, chain = false, id = false;

				if (mnl_attr_get_type(v) != NFTA_DATA_VERDICT)
					continue;
				mnl_attr_for_each_nested(x, v)
				{
					uint16_t t = mnl_attr_get_type(x);

					if (t == NFTA_VERDICT_CODE &&
					    mnl_attr_get_payload_len(x) == 4) {
						int32_t c = (int32_t)ntohl(mnl_attr_get_u32(x));

						jump = c == NFT_JUMP || c == NFT_GOTO;
					} else if (t == NFTA_VERDICT_CHAIN) {
						chain = true;
					} else if (t == NFTA_VERDICT_CHAIN_ID &&
						   mnl_attr_get_payload_len(x) == 4) {
						id = true;
					}
				}
				if (jump && !chain) {
					if (!id) {
						m->bad_attr = elem;
						return -EINVAL;
					}
					(*nids)++;
				}
			}
		}
	}
	return 0;
}

/* The copy a request is parsed from (ids_to_names) is written with checked
 * puts into a buffer of cap bytes, sized from what check_exprs counted: a
 * request whose copy would outgrow that (names counted and names written
 * disagree only for duplicated attributes) is refused, EINVAL, never
 * written past. */
static int put_copy(struct nlmsghdr *dst, size_t cap, const struct nlattr *a)
{
	return mnl_attr_put_check(dst, cap, a->nla_type, mnl_attr_get_payload_len(a),
				  mnl_attr_get_payload(a))
		   ? 0
		   : -EINVAL;
}

static int put_strz(struct nlmsghdr *dst, size_t cap, uint16_t type, const char *str)
{
	return mnl_attr_put_strz_check(dst, cap, type, str) ? 0 : -EINVAL;
}

/* One verdict nest copied into dst; a jump or goto by chain id gets the
 * name of that chain of this batch (nft_chain_lookup_byid), ENOENT if none. */
static int verdict_copy(struct ctl_msg *m, struct ctl_table *t, struct nlmsghdr *dst, size_t cap,
			const struct nlattr *v)
{
	const struct nlattr *x, *id = NULL;
	bool jump = false, chain = false;
	struct nlattr *nest = mnl_attr_nest_start_check(dst, cap, mnl_attr_get_type(v));

	if (nest == NULL)
		return -EINVAL;
	mnl_attr_for_each_nested(x, v)
	{
		uint16_t type = mnl_attr_get_type(x);

		if (type == NFTA_VERDICT_CODE && mnl_attr_get_payload_len(x) == 4) {
			int32_t c = (int32_t)ntohl(mnl_attr_get_u32(x));

			jump = c == NFT_JUMP || c == NFT_GOTO;
		} else if (type == NFTA_VERDICT_CHAIN) {
			chain = true;
		} else if (type == NFTA_VERDICT_CHAIN_ID && mnl_attr_get_payload_len(x) == 4) {
			id = x;
		}
		if (put_copy(dst, cap, x) < 0)
			return -EINVAL;
	}
	if (jump && !chain && id) {
		struct ctl_chain *c = ctl_chain_lookup_id(m->st, t, ntohl(mnl_attr_get_u32(id)));

		if (c == NULL)
			return -ENOENT;
		if (put_strz(dst, cap, NFTA_VERDICT_CHAIN, c->name) < 0)
			return -EINVAL;
	}
	mnl_attr_nest_end(dst, nest);
	return 0;
}

/* The expressions that name a set: by name, by id of a set of this batch,
 * or by the name nft gives an anonymous set before the kernel numbers it,
 * "__set%d" (nf_tables_set_lookup, nft_set_lookup_byid). */
static const struct setref {
	const char *expr;
	uint16_t name, id;
	uint16_t obj_name; /* an object's name beside it, or 0 */
} setrefs[] = {
    {"lookup", NFTA_LOOKUP_SET, NFTA_LOOKUP_SET_ID, 0},
    {"dynset", NFTA_DYNSET_SET_NAME, NFTA_DYNSET_SET_ID, 0},
    {"objref", NFTA_OBJREF_SET_NAME, NFTA_OBJREF_SET_ID, NFTA_OBJREF_IMM_NAME},
};

static const struct setref *setref_of(const char *expr)
{
	for (size_t i = 0; i < sizeof(setrefs) / sizeof(setrefs[0]); i++)
		if (strcmp(setrefs[i].expr, expr) == 0)
			return &setrefs[i];
	return NULL;
}

/* One string attribute copied into dst NUL-terminated (nft sends objref's
 * names without a NUL, which libnftnl's parse would read past); as it
 * came when it does not fit a name. It grows by 4 bytes at most. */
static int str_copy(struct nlmsghdr *dst, size_t cap, const struct nlattr *a)
{
	char str[CTL_NAME_MAXLEN];

	if (ctl_attr_strcpy(a, str, sizeof(str)))
		return put_strz(dst, cap, mnl_attr_get_type(a), str);
	return put_copy(dst, cap, a);
}

/* The data of an expression that names a set, copied into dst with the
 * set's name as it stands in the table (find_set's choice: by name unless
 * the name is a template or names no set, then by id), so that libnftnl
 * parses the name that is stored and dumped, and no setter has to replace
 * it: libnftnl 1.2.4's setters leak the string they replace. */
static int setref_copy(struct ctl_msg *m, struct ctl_table *t, struct nlmsghdr *dst, size_t cap,
		       const struct nlattr *data, const struct setref *ref)
{
	const struct nlattr *x, *name = NULL, *id = NULL;
	struct ctl_set *s = NULL;
	char str[CTL_NAME_MAXLEN];

	mnl_attr_for_each_nested(x, data)
	{
		if (mnl_attr_get_type(x) == ref->name)
			name = x;
		else if (mnl_attr_get_type(x) == ref->id && mnl_attr_get_payload_len(x) == 4)
			id = x;
	}
	if (name && ctl_attr_strcpy(name, str, sizeof(str)) && !strchr(str, '%'))
		s = ctl_set_lookup(t, str);
	if (s == NULL && id)
		s = ctl_set_lookup_id(m->st, t, ntohl(mnl_attr_get_u32(id)));
	mnl_attr_for_each_nested(x, data)
	{
		uint16_t type = mnl_attr_get_type(x);
		int err;

		if (type == ref->name && s)
			continue;
		if (type == ref->name || (ref->obj_name && type == ref->obj_name))
			err = str_copy(dst, cap, x);
		else
			err = put_copy(dst, cap, x);
		if (err < 0)
			return err;
	}
	return s ? put_strz(dst, cap, ref->name, s->name) : 0;
}

/* Copy the nests of src on the way to an immediate's verdict or to the
 * data of an expression that names a set: level 0 the rule's attributes,
 * 1 the expression list, 2 one expression, 3 its data, 4 the immediate's
 * data (holding the verdict). */
static int nest_copy(struct ctl_msg *m, struct ctl_table *t, struct nlmsghdr *dst, size_t cap,
		     const struct nlattr *src, int level)
{
	static const uint16_t into[] = {NFTA_RULE_EXPRESSIONS, NFTA_LIST_ELEM, NFTA_EXPR_DATA,
					NFTA_IMMEDIATE_DATA, NFTA_DATA_VERDICT};
	const struct setref *ref = NULL;
	const struct nlattr *x;
	char name[16];
	bool imm = true;

	if (level == 2) {
		/* only an immediate's data, or a set's namer's, is walked */
		imm = false;
		mnl_attr_for_each_nested(x, src)
		{
			if (mnl_attr_get_type(x) == NFTA_EXPR_NAME &&
			    mnl_attr_get_payload_len(x) < sizeof(name)) {
				memset(name, 0, sizeof(name));
				memcpy(name, mnl_attr_get_payload(x), mnl_attr_get_payload_len(x));
				imm = strcmp(name, "immediate") == 0;
				ref = setref_of(name);
			}
		}
	}
	mnl_attr_for_each_nested(x, src)
	{
		uint16_t type = mnl_attr_get_type(x);
		struct nlattr *nest = NULL;
		int err;

		if ((ref || imm) && type == into[level] && level < 4) {
			nest = mnl_attr_nest_start_check(dst, cap, type);
			if (nest == NULL)
				return -EINVAL;
		}
		if (ref && level == 2 && type == NFTA_EXPR_DATA)
			err = setref_copy(m, t, dst, cap, x, ref);
		else if (imm && type == into[level] && level == 4)
			err = verdict_copy(m, t, dst, cap, x);
		else if (imm && type == into[level])
			err = nest_copy(m, t, dst, cap, x, level + 1);
		else
			err = put_copy(dst, cap, x);
		if (err < 0) {
			if (level == 1)
				m->bad_attr = x; /* the expression */
			return err;
		}
		if (nest)
			mnl_attr_nest_end(dst, nest);
	}
	return 0;
}

/* The request with every verdict by chain id naming its chain and every
 * expression that names a set naming it as stored (nids: how many of
 * both), in a buffer the caller frees; NULL with *err set when a chain id
 * names no chain. Only the expression list libnftnl parses (the last) is
 * rewritten. */
static struct nlmsghdr *ids_to_names(struct ctl_msg *m, struct ctl_table *t, unsigned int nids,
				     int *err)
{
	const struct nlmsghdr *nlh = m->nlh;
	/* a string attribute NUL-terminated grows by at most 4 bytes, its
	 * header's size (str_copy): twice the request bounds them all; each
	 * name added (a chain's, a set's) takes at most a name and a header */
	size_t cap = 2 * (size_t)nlh->nlmsg_len + (size_t)nids * (CTL_NAME_MAXLEN + 8) + 64;
	const struct nlattr *a;
	struct nlmsghdr *dst;
	void *buf = calloc(1, cap);

	if (buf == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	dst = mnl_nlmsg_put_header(buf);
	dst->nlmsg_type = nlh->nlmsg_type;
	dst->nlmsg_flags = nlh->nlmsg_flags;
	dst->nlmsg_seq = nlh->nlmsg_seq;
	dst->nlmsg_pid = nlh->nlmsg_pid;
	memcpy(mnl_nlmsg_put_extra_header(dst, sizeof(struct nfgenmsg)), mnl_nlmsg_get_payload(nlh),
	       sizeof(struct nfgenmsg));
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (a == m->tb[NFTA_RULE_EXPRESSIONS]) {
			struct nlattr *nest =
			    mnl_attr_nest_start_check(dst, cap, NFTA_RULE_EXPRESSIONS);

			*err = nest ? nest_copy(m, t, dst, cap, a, 1) : -EINVAL;
			if (*err < 0) {
				free(buf);
				return NULL;
			}
			mnl_attr_nest_end(dst, nest);
		} else {
			*err = put_copy(dst, cap, a);
			if (*err < 0) {
				free(buf);
				return NULL;
			}
		}
	}
	return dst;
}

static int check_exprs(struct ctl_msg *m, const struct nlattr *exprs, unsigned int *n,
		       unsigned int *nids)
{
	const struct nlattr *elem;

	*n = 0;
	mnl_attr_for_each_nested(elem, exprs)
	{
		const struct nlattr *a, *name = NULL;

		if (mnl_attr_get_type(elem) != NFTA_LIST_ELEM) {
			m->bad_attr = NULL; /* nf_tables_newrule sets no extack here */
			return -EINVAL;
		}
		if (mnl_attr_validate(elem, MNL_TYPE_NESTED) < 0) {
			m->bad_attr = elem;
			return -EINVAL;
		}
		/* nft_expr_policy: NAME an NLA_STRING of 1..NFT_NAME_MAXLEN-1
		 * bytes (a trailing NUL not counted, none required), DATA an
		 * NLA_NESTED empty or at least a header; ERANGE otherwise. A
		 * deep nest where the name belongs is such an over-long name. */
		char str[NFT_NAME_MAXLEN];
		size_t len;

		mnl_attr_for_each_nested(a, elem)
		{
			if (mnl_attr_get_type(a) == NFTA_EXPR_NAME) {
				name = a;
				len = mnl_attr_get_payload_len(a);
				if (len && ((const char *)mnl_attr_get_payload(a))[len - 1] == '\0')
					len--;
				if (mnl_attr_get_payload_len(a) < 1 || len > NFT_NAME_MAXLEN - 1) {
					m->bad_attr = a;
					return -ERANGE;
				}
			} else if (mnl_attr_get_type(a) == NFTA_EXPR_DATA &&
				   mnl_attr_get_payload_len(a) &&
				   mnl_attr_get_payload_len(a) < MNL_ATTR_HDRLEN) {
				m->bad_attr = a;
				return -ERANGE;
			}
		}
		if (name == NULL) { /* nft_expr_type_get(NULL): no offset */
			m->bad_attr = NULL;
			return -EINVAL;
		}
		len = mnl_attr_get_payload_len(name);
		memcpy(str, mnl_attr_get_payload(name), len);
		str[len < sizeof(str) ? len : sizeof(str) - 1] = '\0';
		if (strlen(str) != strnlen(mnl_attr_get_payload(name), len) ||
		    !expr_known(m->ctl, str, m->family)) {
			m->bad_attr = elem;
			return -ENOENT;
		}
		if (++*n > 128) { /* NFT_RULE_MAXEXPRS */
			m->bad_attr = elem;
			return -EINVAL;
		}
		if (strcmp(str, "immediate") == 0) {
			int err = imm_verdict_check(m, elem, nids);

			if (err < 0)
				return err;
		}
		if (setref_of(str))
			(*nids)++; /* its set named as stored (setref_copy) */
	}
	return 0;
}

static const struct nlattr *nth_expr(const struct nlattr *exprs, unsigned int i)
{
	const struct nlattr *elem;

	mnl_attr_for_each_nested(elem, exprs)
	{
		if (i-- == 0)
			return elem;
	}
	return exprs;
}

/* By name, or by id for a set of this batch. The request was parsed from
 * a copy that names the set as the kernel dumps it (setref_copy: anonymous
 * "__set%d" resolved), so what is stored needs no setter. */
static struct ctl_set *find_set(struct ctl_msg *m, struct ctl_table *t, struct nftnl_expr *e,
				uint16_t name_attr, uint16_t id_attr)
{
	struct ctl_set *s = NULL;

	if (nftnl_expr_is_set(e, name_attr) && !strchr(nftnl_expr_get_str(e, name_attr), '%'))
		s = ctl_set_lookup(t, nftnl_expr_get_str(e, name_attr));
	if (s == NULL && nftnl_expr_is_set(e, id_attr))
		s = ctl_set_lookup_id(m->st, t, nftnl_expr_get_u32(e, id_attr));
	return s;
}

/* A string attribute of an expression's data, read with its length: nft
 * sends objref names without a NUL (libnftnl uses mnl_attr_put_str), so
 * libnftnl's own parse of them cannot be trusted. */
static bool expr_raw_str(const struct nlattr *elem, uint16_t type, char *out, size_t size)
{
	const struct nlattr *x, *a;

	mnl_attr_for_each_nested(x, elem)
	{
		if (mnl_attr_get_type(x) != NFTA_EXPR_DATA)
			continue;
		mnl_attr_for_each_nested(a, x)
		{
			if (mnl_attr_get_type(a) == type)
				return ctl_attr_strcpy(a, out, size);
		}
	}
	return false;
}

#define SET_EXPR_MAX 2 /* NFT_SET_EXPR_MAX */

/* The names of the element expressions in a set's stored expression
 * payload (NFTA_SET_EXPR: one; NFTA_SET_EXPRESSIONS: a list), at most max;
 * how many. */
static unsigned int set_expr_names(const struct ctl_set *s, const char **names, unsigned int max)
{
	const struct nlattr *a, *y;
	unsigned int n = 0;

	if (!s->elem_expr)
		return 0;
	for (a = s->elem_expr;
	     mnl_attr_ok(a, (int)((const char *)s->elem_expr + s->elem_exprlen - (const char *)a));
	     a = mnl_attr_next(a)) {
		if (s->elem_expr_type == NFTA_SET_ELEM_EXPR) {
			if (mnl_attr_get_type(a) == NFTA_EXPR_NAME && n < max)
				names[n++] = mnl_attr_get_str(a);
			continue;
		}
		mnl_attr_for_each_nested(y, a)
		{
			if (mnl_attr_get_type(y) == NFTA_EXPR_NAME && n < max)
				names[n++] = mnl_attr_get_str(y);
		}
	}
	return n;
}

static const char *expr_name_of(const struct nlattr *one)
{
	const struct nlattr *y;

	mnl_attr_for_each_nested(y, one)
	{
		if (mnl_attr_get_type(y) == NFTA_EXPR_NAME)
			return mnl_attr_get_str(y);
	}
	return "";
}

/* nft_dynset_init's checks of the element expressions a dynset gives
 * (NFTA_DYNSET_EXPR or NFTA_DYNSET_EXPRESSIONS) against its set. */
static int dynset_exprs_check(const struct ctl_set *s, const struct nlattr *elem)
{
	const struct nlattr *x, *a, *one = NULL, *list = NULL, *y;
	const char *set_names[SET_EXPR_MAX + 1];
	unsigned int set_n = set_expr_names(s, set_names, SET_EXPR_MAX + 1), i = 0;
	uint32_t flags = 0;

	mnl_attr_for_each_nested(x, elem)
	{
		if (mnl_attr_get_type(x) != NFTA_EXPR_DATA)
			continue;
		mnl_attr_for_each_nested(a, x)
		{
			if (mnl_attr_get_type(a) == NFTA_DYNSET_EXPR)
				one = a;
			else if (mnl_attr_get_type(a) == NFTA_DYNSET_EXPRESSIONS)
				list = a;
			else if (mnl_attr_get_type(a) == NFTA_DYNSET_FLAGS &&
				 mnl_attr_get_payload_len(a) == 4)
				flags = ntohl(mnl_attr_get_u32(a));
		}
	}
	if ((one || list) && !(s->flags & NFT_SET_EVAL))
		return -EINVAL;
	/* nft_set_elem_expr_alloc: NFT_EXPR_GC (connlimit) on a set with
	 * timeouts */
	if (s->flags & NFT_SET_TIMEOUT) {
		if (one && strcmp(expr_name_of(one), "connlimit") == 0)
			return -EOPNOTSUPP;
		if (list)
			mnl_attr_for_each_nested(y,
						 list) if (strcmp(expr_name_of(y), "connlimit") ==
							   0) return -EOPNOTSUPP;
	}
	if (one) {
		if (set_n > 1 || (set_n == 1 && strcmp(expr_name_of(one), set_names[0]) != 0))
			return -EOPNOTSUPP;
	} else if (list) {
		if (!(flags & NFT_DYNSET_F_EXPR))
			return -EINVAL;
		mnl_attr_for_each_nested(y, list)
		{
			if (i == SET_EXPR_MAX)
				return -E2BIG;
			if (mnl_attr_get_type(y) != NFTA_LIST_ELEM)
				return -EINVAL;
			if (set_n) {
				if (i >= set_n)
					return -EINVAL;
				if (strcmp(expr_name_of(y), set_names[i]) != 0)
					return -EOPNOTSUPP;
			}
			i++;
		}
		if (set_n && set_n != i)
			return -EOPNOTSUPP;
	}
	return 0;
}

/* nft_dynset_dump: a dynset lists its element expressions only when its
 * set has none of its own. */
static bool dynset_hides_exprs(const struct ctl_rule *r, const struct nlattr *data)
{
	const struct nlattr *a;
	struct ctl_set *s = NULL;
	char name[CTL_NAME_MAXLEN];

	mnl_attr_for_each_nested(a, data)
	{
		if (mnl_attr_get_type(a) == NFTA_DYNSET_SET_NAME &&
		    ctl_attr_strcpy(a, name, sizeof(name)))
			s = ctl_set_lookup(r->chain->table, name);
	}
	return s && s->elem_expr;
}

#define H(x) (1u << NF_INET_##x)

/* an ip, ip6 or inet table */
static bool ip_family(uint8_t family)
{
	return family == NFPROTO_IPV4 || family == NFPROTO_IPV6 || family == NFPROTO_INET;
}

/* Hook constraints the kernel checks when it validates a table
 * (expr->ops->validate): where an expression may run, by family. *nat is set
 * for expressions that need a nat-type chain (nft_chain_validate_dependency). */
static uint32_t expr_hooks(const struct nftnl_expr *e, uint8_t family, bool *nat)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (strcmp(name, "masq") == 0) { /* nft_masq_validate */
		*nat = true;
		return H(POST_ROUTING);
	}
	if (strcmp(name, "redir") == 0) { /* nft_redir_validate */
		*nat = true;
		return H(PRE_ROUTING) | H(LOCAL_OUT);
	}
	if (strcmp(name, "nat") == 0) { /* nft_nat_validate */
		*nat = true;
		if (nftnl_expr_get_u32(e, NFTNL_EXPR_NAT_TYPE) == NFT_NAT_SNAT)
			return H(POST_ROUTING) | H(LOCAL_IN);
		return H(PRE_ROUTING) | H(LOCAL_OUT);
	}
	if (strcmp(name, "tproxy") == 0) /* nft_tproxy_validate */
		return H(PRE_ROUTING);
	if (strcmp(name, "fib") == 0) { /* nft_fib_validate */
		uint32_t result = nftnl_expr_get_u32(e, NFTNL_EXPR_FIB_RESULT);
		uint32_t flags = nftnl_expr_get_u32(e, NFTNL_EXPR_FIB_FLAGS);
		uint32_t hooks;

		if (result == NFT_FIB_RESULT_OIF || result == NFT_FIB_RESULT_OIFNAME)
			hooks = H(PRE_ROUTING) | H(LOCAL_IN) | H(FORWARD);
		else if (flags & NFTA_FIB_F_IIF)
			hooks = H(PRE_ROUTING) | H(LOCAL_IN) | H(FORWARD);
		else if (flags & NFTA_FIB_F_OIF)
			hooks = H(LOCAL_OUT) | H(POST_ROUTING) | H(FORWARD);
		else
			hooks = H(PRE_ROUTING) | H(LOCAL_IN) | H(FORWARD) | H(LOCAL_OUT) |
				H(POST_ROUTING);
		/* never inet ingress; netdev ingress goes as prerouting and
		 * egress as postrouting (what the kernel here accepts) */
		if (family == NFPROTO_NETDEV)
			return ((hooks & H(PRE_ROUTING)) ? 1u << NF_NETDEV_INGRESS : 0) |
			       ((hooks & H(POST_ROUTING)) ? 1u << NF_NETDEV_EGRESS : 0);
		return hooks;
	}

	if (strcmp(name, "meta") == 0 && nftnl_expr_is_set(e, NFTNL_EXPR_META_SREG) &&
	    nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY) == NFT_META_PKTTYPE) {
		/* nft_meta_set_validate */
		switch (family) {
		case NFPROTO_BRIDGE:
			return 1u << NF_BR_PRE_ROUTING;
		case NFPROTO_NETDEV:
			return 1u << NF_NETDEV_INGRESS;
		case NFPROTO_IPV4:
		case NFPROTO_IPV6:
		case NFPROTO_INET:
			return 1u << NF_INET_PRE_ROUTING;
		default:
			return 0;
		}
	}
	/* rt: ip, ip6 and inet tables only (nft_rt_validate) */
	if (strcmp(name, "rt") == 0 && !ip_family(family))
		return 0;
	if (strcmp(name, "xfrm") == 0) { /* nft_xfrm_validate */
		if (nftnl_expr_get_u8(e, NFTNL_EXPR_XFRM_DIR) == XFRM_POLICY_OUT)
			return H(FORWARD) | H(LOCAL_OUT) | H(POST_ROUTING);
		return H(FORWARD) | H(LOCAL_IN) | H(PRE_ROUTING);
	}
	if (strcmp(name, "socket") == 0) /* nft_socket_validate */
		return H(PRE_ROUTING) | H(LOCAL_IN) | H(LOCAL_OUT);
	if (strcmp(name, "rt") == 0 && /* nft_rt_validate */
	    nftnl_expr_get_u32(e, NFTNL_EXPR_RT_KEY) == NFT_RT_TCPMSS)
		return H(FORWARD) | H(LOCAL_OUT) | H(POST_ROUTING);
	if (strcmp(name, "synproxy") == 0) /* nft_synproxy_validate */
		return (1u << NF_INET_LOCAL_IN) | (1u << NF_INET_FORWARD);
	if (strcmp(name, "osf") == 0) { /* nft_osf_validate */
		if (family != NFPROTO_IPV4 && family != NFPROTO_INET)
			return 0;
		return (1u << NF_INET_LOCAL_IN) | (1u << NF_INET_PRE_ROUTING) |
		       (1u << NF_INET_FORWARD);
	}
	return ~0u;
}

/* Errors of an expression's init that depend on its parameters only. */
static int expr_init_check(const struct nftnl_expr *e, uint8_t family)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	/* nft_xfrm_get_init, nft_socket_init: ip, ip6 and inet tables only */
	if ((strcmp(name, "xfrm") == 0 || strcmp(name, "socket") == 0) && !ip_family(family))
		return -EOPNOTSUPP;
	/* nft_ct_get_init, nft_ct_set_init and nft_connlimit_do_init end in
	 * nf_ct_netns_get, which has no nf_conntrack_bridge in this kernel
	 * (CONFIG_NF_CONNTRACK_BRIDGE unset); a ct address key fails first */
	if (family == NFPROTO_BRIDGE && strcmp(name, "ct") == 0) {
		uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_CT_KEY);

		if (nftnl_expr_is_set(e, NFTNL_EXPR_CT_DREG) &&
		    (key == NFT_CT_SRC || key == NFT_CT_DST))
			return -EAFNOSUPPORT;
		return -EPROTO;
	}
	if (family == NFPROTO_BRIDGE && strcmp(name, "connlimit") == 0)
		return -EPROTO;
	/* nft_synproxy_do_init: flags outside NF_SYNPROXY_OPT_MASK, then
	 * nf_ct_netns_get, which fails for netdev, arp and (without
	 * nf_conntrack_bridge) bridge tables */
	if (strcmp(name, "synproxy") == 0) {
		if (nftnl_expr_is_set(e, NFTNL_EXPR_SYNPROXY_FLAGS) &&
		    (nftnl_expr_get_u32(e, NFTNL_EXPR_SYNPROXY_FLAGS) & ~NF_SYNPROXY_OPT_MASK))
			return -EOPNOTSUPP;
		if (!ip_family(family))
			return -EPROTO;
	}
	if (strcmp(name, "meta") == 0) {
		/* the bridge meta keys live in nft_meta_bridge, not built in */
		switch (nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY)) {
		case NFT_META_BRI_IIFNAME:
		case NFT_META_BRI_OIFNAME:
		case NFT_META_BRI_IIFPVID:
		case NFT_META_BRI_IIFVPROTO:
			return -EOPNOTSUPP;
		}
	} else if (strcmp(name, "limit") == 0) {
		return ctl_limit_check(nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_RATE),
				       nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_UNIT),
				       nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_BURST),
				       nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_TYPE) ==
					   NFT_LIMIT_PKT_BYTES);
	}
	return 0;
}

/* Resolve what one expression names (nf_tables_newexpr -> ops->init). */
static int expr_refs(struct ctl_msg *m, struct ctl_table *t, struct nftnl_expr *e,
		     const struct nlattr *elem, struct ctl_ref *ref, bool *has_ref, bool *jumps)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	int err;

	*has_ref = false;
	err = expr_init_check(e, t->family);
	if (err < 0)
		return err;
	ctl_compat_store_info(e, t->family);
	if (strcmp(name, "immediate") == 0 && nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
		int32_t v = (int32_t)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);
		struct ctl_chain *c;

		if (v != NFT_JUMP && v != NFT_GOTO)
			return 0;
		if (!nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN))
			return -EINVAL;
		c = ctl_chain_lookup(t, nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN));
		if (c == NULL)
			return -ENOENT;
		if (c->base)
			return -EOPNOTSUPP;
		/* nft_verdict_init: a bound binding chain is held already */
		if (c->binding && c->bound)
			return -EINVAL;
		ref->kind = CTL_REF_CHAIN;
		ref->obj = c;
		*has_ref = true;
		*jumps = true;
	} else if (strcmp(name, "lookup") == 0) {
		struct ctl_set *s =
		    find_set(m, t, e, NFTNL_EXPR_LOOKUP_SET, NFTNL_EXPR_LOOKUP_SET_ID);

		if (s == NULL)
			return -ENOENT;
		if (nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG)) {
			if (!(s->flags & NFT_SET_MAP))
				return -EINVAL;
			if (s->dtype == NFT_DATA_VERDICT)
				*jumps = true;
		}
		/* an anonymous set binds to one rule only (nf_tables_bind_set) */
		if (s->anonymous && s->use > 0)
			return -EBUSY;
		ref->kind = CTL_REF_SET;
		ref->obj = s;
		*has_ref = true;
	} else if (strcmp(name, "dynset") == 0) {
		struct ctl_set *s =
		    find_set(m, t, e, NFTNL_EXPR_DYNSET_SET_NAME, NFTNL_EXPR_DYNSET_SET_ID);

		if (s == NULL)
			return -ENOENT;
		if (s->flags & NFT_SET_CONSTANT)
			return -EBUSY;
		err = dynset_exprs_check(s, elem);
		if (err < 0)
			return err;
		/* nft_dynset_init: a set filled from the packet path is bounded */
		if (s->size == 0) {
			s->size = 0xffff;
			nftnl_set_set_u32(s->nl, NFTNL_SET_DESC_SIZE, s->size);
		}
		ref->kind = CTL_REF_SET;
		ref->obj = s;
		*has_ref = true;
	} else if (strcmp(name, "objref") == 0) {
		char str[CTL_NAME_MAXLEN];

		if (nftnl_expr_is_set(e, NFTNL_EXPR_OBJREF_IMM_NAME)) {
			struct ctl_obj *o;

			if (!expr_raw_str(elem, NFTA_OBJREF_IMM_NAME, str, sizeof(str)))
				return -EINVAL;
			o = ctl_obj_lookup(t, str,
					   nftnl_expr_get_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE));
			if (o == NULL)
				return -ENOENT;
			ref->kind = CTL_REF_OBJ;
			ref->obj = o;
		} else {
			struct ctl_set *s;

			s = find_set(m, t, e, NFTNL_EXPR_OBJREF_SET_NAME, NFTNL_EXPR_OBJREF_SET_ID);

			if (s == NULL)
				return -ENOENT;
			if (!(s->flags & NFT_SET_OBJECT))
				return -EINVAL;
			ref->kind = CTL_REF_SET;
			ref->obj = s;
		}
		*has_ref = true;
	} else if (strcmp(name, "flow_offload") == 0) {
		struct ctl_flowtable *f;

		if (!nftnl_expr_is_set(e, NFTNL_EXPR_FLOW_TABLE_NAME))
			return -EINVAL;
		f = ctl_flowtable_lookup(t, nftnl_expr_get_str(e, NFTNL_EXPR_FLOW_TABLE_NAME));
		if (f == NULL)
			return -ENOENT;
		ref->kind = CTL_REF_FLOWTABLE;
		ref->obj = f;
		*has_ref = true;
	}
	return 0;
}

/* nft_objref_validate / nft_objref_map_validate (nft_objref_validate_obj_type):
 * a synproxy object, named or from an object map, only at input and
 * forward, as the statement */
static bool objref_synproxy(const struct nftnl_expr *e, const struct ctl_ref *ref)
{
	if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "objref") != 0)
		return false;
	if (ref->kind == CTL_REF_OBJ)
		return ((const struct ctl_obj *)ref->obj)->type == NFT_OBJECT_SYNPROXY;
	if (ref->kind == CTL_REF_SET)
		return ((const struct ctl_set *)ref->obj)->objtype == NFT_OBJECT_SYNPROXY;
	return false;
}

struct stat_list {
	struct ctl_rule_stat *v;
	uint16_t n;
	bool oom;
};

/* Where a counter's or quota's values sit in the blob, so that dumps can
 * write the dataplane's current ones there (ctl_build_rule_stats). */
static void stat_note(struct stat_list *l, struct nlmsghdr *dst, size_t at, size_t hdr,
		      const char *name, uint16_t expr_index)
{
	const struct nlattr *data = (const struct nlattr *)((char *)dst + at), *x;
	struct ctl_rule_stat rs = {.expr_index = expr_index};
	struct ctl_rule_stat *n;

	if (strcmp(name, "counter") == 0)
		rs.kind = CTL_STAT_COUNTER;
	else if (strcmp(name, "quota") == 0)
		rs.kind = CTL_STAT_QUOTA;
	else
		return;
	mnl_attr_for_each_nested(x, data)
	{
		uint32_t off =
		    (uint32_t)((const char *)mnl_attr_get_payload(x) - (char *)dst - hdr);

		if (mnl_attr_get_payload_len(x) != 8)
			continue;
		if (rs.kind == CTL_STAT_COUNTER && mnl_attr_get_type(x) == NFTA_COUNTER_PACKETS)
			rs.off_a = off;
		else if (rs.kind == CTL_STAT_COUNTER && mnl_attr_get_type(x) == NFTA_COUNTER_BYTES)
			rs.off_b = off;
		else if (rs.kind == CTL_STAT_QUOTA && mnl_attr_get_type(x) == NFTA_QUOTA_CONSUMED)
			rs.off_a = off;
	}
	if (!rs.off_a || (rs.kind == CTL_STAT_COUNTER && !rs.off_b))
		return;
	n = realloc(l->v, (l->n + 1u) * sizeof(*n));
	if (!n) {
		l->oom = true;
		return;
	}
	l->v = n;
	l->v[l->n++] = rs;
}

/* Build the dump form of a rule once (ctl_rule_fill copies it). */
static int rule_blob_build(struct ctl_rule *r)
{
	struct stat_list stats = {0};
	uint16_t expr_index = 0;
	size_t size = 1 << 17;
	char *in = malloc(size), *out = malloc(size);
	struct nlmsghdr *src, *dst;
	const struct nlattr *a;
	size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	int err = -ENOMEM;

	if (in == NULL || out == NULL)
		goto out;
	src = mnl_nlmsg_put_header(in);
	mnl_nlmsg_put_extra_header(src, sizeof(struct nfgenmsg));
	nftnl_rule_nlmsg_build_payload(src, r->nl);
	dst = mnl_nlmsg_put_header(out);
	mnl_nlmsg_put_extra_header(dst, sizeof(struct nfgenmsg));
	mnl_attr_for_each(a, src, sizeof(struct nfgenmsg))
	{
		const struct nlattr *elem;
		struct nlattr *list;

		if (mnl_attr_get_type(a) != NFTA_RULE_EXPRESSIONS) {
			ctl_put_attr(dst, a);
			continue;
		}
		list = mnl_attr_nest_start(dst, NFTA_RULE_EXPRESSIONS);
		mnl_attr_for_each_nested(elem, a)
		{
			const struct nlattr *x, *name = NULL;
			struct nlattr *ne = mnl_attr_nest_start(dst, NFTA_LIST_ELEM);

			mnl_attr_for_each_nested(x, elem)
			{
				if (mnl_attr_get_type(x) == NFTA_EXPR_NAME)
					name = x;
			}
			mnl_attr_for_each_nested(x, elem)
			{
				if (mnl_attr_get_type(x) == NFTA_EXPR_DATA && name &&
				    strcmp(mnl_attr_get_str(name), "dynset") == 0 &&
				    dynset_hides_exprs(r, x)) {
					const struct nlattr *y;
					struct nlattr *nd =
					    mnl_attr_nest_start(dst, NFTA_EXPR_DATA);

					mnl_attr_for_each_nested(y, x)
					{
						uint16_t type = mnl_attr_get_type(y);

						if (type != NFTA_DYNSET_SET_ID &&
						    type != NFTA_DYNSET_EXPR &&
						    type != NFTA_DYNSET_EXPRESSIONS)
							ctl_put_attr(dst, y);
					}
					mnl_attr_nest_end(dst, nd);
				} else if (mnl_attr_get_type(x) == NFTA_EXPR_DATA && name) {
					size_t at = dst->nlmsg_len;

					ctl_put_expr_data(dst, x, mnl_attr_get_str(name));
					stat_note(&stats, dst, at, hdr, mnl_attr_get_str(name),
						  expr_index);
				} else {
					ctl_put_attr(dst, x);
				}
			}
			mnl_attr_nest_end(dst, ne);
			expr_index++;
		}
		mnl_attr_nest_end(dst, list);
	}
	free(r->blob);
	r->bloblen = dst->nlmsg_len - hdr;
	r->blob = malloc(r->bloblen ? r->bloblen : 1);
	if (r->blob == NULL)
		goto out;
	memcpy(r->blob, out + hdr, r->bloblen);
	free(r->stats);
	r->stats = stats.v;
	r->nstats = stats.n;
	stats.v = NULL;
	err = stats.oom ? -ENOMEM : 0;
out:
	free(stats.v);
	free(in);
	free(out);
	return err;
}

/* A chain was renamed (at commit): the rules and verdict-map elements that
 * jump there now name it by its new name, as the kernel dumps the name from
 * the chain itself. */
void ctl_chain_renamed(struct ctl_chain *c, const char *old)
{
	struct ctl_table *t = c->table;
	struct ctl_chain *ch;
	struct ctl_set *s;

	ctl_list_for_each_entry(ch, &t->chains, list) {
		struct ctl_rule *r;

		ctl_list_for_each_entry(r, &ch->rules, list) {
			struct nftnl_expr_iter *it;
			struct nftnl_expr *e;

			if (ch == c) {
				nftnl_rule_set_str(r->nl, NFTNL_RULE_CHAIN, c->name);
				rule_blob_build(r);
			}
			if (r->nrefs == 0)
				continue;
			it = nftnl_expr_iter_create(r->nl);
			if (it == NULL)
				continue;
			while ((e = nftnl_expr_iter_next(it)) != NULL) {
				if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "immediate") ==
					0 &&
				    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN) &&
				    strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN), old) == 0)
					nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, c->name);
			}
			nftnl_expr_iter_destroy(it);
			rule_blob_build(r);
		}
	}
	ctl_list_for_each_entry(s, &t->sets, list) {
		struct ctl_elem *e;

		if (s->dtype != NFT_DATA_VERDICT)
			continue;
		ctl_list_for_each_entry(e, &s->elems, list)
			if (e->chain_ref == c)
				ctl_elem_set_verdict_chain(e, c->name);
	}
}

void ctl_rule_fill(struct nlmsghdr *nlh, const struct ctl_rule *r)
{
	size_t at = MNL_ALIGN(nlh->nlmsg_len);

	memcpy(mnl_nlmsg_get_payload_tail(nlh), r->blob, r->bloblen);
	nlh->nlmsg_len += MNL_ALIGN(r->bloblen);
	if (r->nstats)
		ctl_build_rule_stats(r, nlh, at, false);
}

static struct ctl_rule *rule_lookup(struct ctl_chain *c, uint64_t handle)
{
	struct ctl_rule *r;

	ctl_list_for_each_entry(r, &c->rules, list)
		if (!r->dead && r->handle == handle)
			return r;
	return NULL;
}

static struct ctl_rule *rule_lookup_id(struct ctl_state *st, struct ctl_chain *c, uint32_t id)
{
	struct ctl_trans *tr;

	/* newest first: the object is usually created just before its use */
	ctl_list_for_each_entry_reverse(tr, &st->trans, list) {
		struct ctl_rule *r = tr->obj;

		if (tr->op == CTL_TR_NEWRULE && r->chain == c && !r->dead && r->rule_id == id)
			return r;
	}
	return NULL;
}

static struct ctl_chain *rule_chain(struct ctl_msg *m, struct ctl_table *t, int *err)
{
	struct ctl_chain *c;

	if (m->tb[NFTA_RULE_CHAIN]) {
		c = ctl_chain_lookup(t, mnl_attr_get_str(m->tb[NFTA_RULE_CHAIN]));
		if (c == NULL) {
			m->bad_attr = m->tb[NFTA_RULE_CHAIN];
			*err = -ENOENT;
		}
		return c;
	}
	if (m->tb[NFTA_RULE_CHAIN_ID]) {
		c = ctl_chain_lookup_id(m->st, t,
					ntohl(mnl_attr_get_u32(m->tb[NFTA_RULE_CHAIN_ID])));
		if (c == NULL) {
			m->bad_attr = m->tb[NFTA_RULE_CHAIN_ID];
			*err = -ENOENT;
		}
		return c;
	}
	*err = -EINVAL;
	return NULL;
}

int ctl_newrule(struct ctl_msg *m)
{
	uint16_t flags = m->nlh->nlmsg_flags;
	struct ctl_rule *old = NULL, *r;
	struct ctl_table *t;
	struct ctl_chain *c;
	struct nftnl_expr_iter *it;
	struct nftnl_expr *e;
	unsigned int nexprs = 0, nids = 0, i;
	struct nlmsghdr *named = NULL;
	uint64_t handle;
	bool jumps = false;
	int err;

	t = ctl_table_lookup(m, m->tb[NFTA_RULE_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	c = rule_chain(m, t, &err);
	if (c == NULL)
		return err;
	/* a bound binding chain takes no more rules (nf_tables_newrule) */
	if (c->binding && c->bound)
		return -EOPNOTSUPP;

	if (m->tb[NFTA_RULE_HANDLE]) {
		handle = be64toh(mnl_attr_get_u64(m->tb[NFTA_RULE_HANDLE]));
		old = rule_lookup(c, handle);
		if (old == NULL) {
			m->bad_attr = m->tb[NFTA_RULE_HANDLE];
			return -ENOENT;
		}
		if (flags & NLM_F_EXCL) {
			m->bad_attr = m->tb[NFTA_RULE_HANDLE];
			return -EEXIST;
		}
		if (!(flags & NLM_F_REPLACE))
			return -EOPNOTSUPP;
	} else {
		if (!(flags & NLM_F_CREATE) || (flags & NLM_F_REPLACE))
			return -EINVAL;
		handle = ctl_table_alloc_handle(t);
		if (m->tb[NFTA_RULE_POSITION]) {
			old = rule_lookup(c, be64toh(mnl_attr_get_u64(m->tb[NFTA_RULE_POSITION])));
			if (old == NULL) {
				m->bad_attr = m->tb[NFTA_RULE_POSITION];
				return -ENOENT;
			}
		} else if (m->tb[NFTA_RULE_POSITION_ID]) {
			old = rule_lookup_id(m->st, c,
					     ntohl(mnl_attr_get_u32(m->tb[NFTA_RULE_POSITION_ID])));
			if (old == NULL) {
				m->bad_attr = m->tb[NFTA_RULE_POSITION_ID];
				return -ENOENT;
			}
		}
	}

	if (m->tb[NFTA_RULE_EXPRESSIONS]) {
		err = check_exprs(m, m->tb[NFTA_RULE_EXPRESSIONS], &nexprs, &nids);
		if (err < 0)
			return err;
	}
	if (nids) {
		named = ids_to_names(m, t, nids, &err);
		if (named == NULL)
			return err;
	}

	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		free(named);
		return -ENOMEM;
	}
	r->nl = nftnl_rule_alloc();
	if (r->nl)
		err = ctl_parse_rule(named ? named : m->nlh, r->nl);
	free(named);
	if (r->nl == NULL || err < 0) {
		err = -EINVAL;
		goto err_rule;
	}
	r->hook_mask = ~0u;
	r->refs = calloc(nexprs ? nexprs : 1, sizeof(*r->refs));
	if (r->refs == NULL) {
		err = -ENOMEM;
		goto err_rule;
	}
	it = nftnl_expr_iter_create(r->nl);
	if (it == NULL) {
		err = -ENOMEM;
		goto err_rule;
	}
	for (i = 0; (e = nftnl_expr_iter_next(it)) != NULL; i++) {
		bool has_ref;

		err = expr_refs(m, t, e, nth_expr(m->tb[NFTA_RULE_EXPRESSIONS], i),
				&r->refs[r->nrefs], &has_ref, &jumps);
		if (err < 0) {
			m->bad_attr = nth_expr(m->tb[NFTA_RULE_EXPRESSIONS], i);
			nftnl_expr_iter_destroy(it);
			goto err_rule;
		}
		if (has_ref)
			r->nrefs++;
		r->hook_mask &= expr_hooks(e, t->family, &r->need_nat);
		if (has_ref && objref_synproxy(e, &r->refs[r->nrefs - 1]))
			r->hook_mask &= H(LOCAL_IN) | H(FORWARD);
	}
	nftnl_expr_iter_destroy(it);
	if (r->hook_mask != ~0u || r->need_nat)
		jumps = true; /* the table needs validating */

	/* what only the request carries; the handle is ours */
	nftnl_rule_unset(r->nl, NFTNL_RULE_POSITION);
	nftnl_rule_unset(r->nl, NFTNL_RULE_ID);
	nftnl_rule_unset(r->nl, NFTNL_RULE_POSITION_ID);
	nftnl_rule_set_str(r->nl, NFTNL_RULE_CHAIN, c->name);
	nftnl_rule_set_u64(r->nl, NFTNL_RULE_HANDLE, handle);
	nftnl_rule_set_u32(r->nl, NFTNL_RULE_FAMILY, t->family);
	r->handle = handle;
	r->chain = c;
	err = rule_blob_build(r);
	if (err < 0)
		goto err_rule;
	if (m->tb[NFTA_RULE_ID])
		r->rule_id = ntohl(mnl_attr_get_u32(m->tb[NFTA_RULE_ID]));

	if (flags & NLM_F_REPLACE) {
		struct ctl_trans *tr;

		err = ctl_rule_delete(m, old);
		if (err < 0)
			goto err_rule;
		tr = ctl_trans_add(m, CTL_TR_NEWRULE, t, r);
		if (tr == NULL) {
			err = -ENOMEM;
			goto err_rule;
		}
		/* same handle, so the same counter slots: the commit sets them */
		tr->replaced = old;
		ctl_list_add_tail(&r->list, &old->list);
	} else {
		if (ctl_trans_add(m, CTL_TR_NEWRULE, t, r) == NULL) {
			err = -ENOMEM;
			goto err_rule;
		}
		if (flags & NLM_F_APPEND) {
			if (old)
				ctl_list_add(&r->list, &old->list);
			else
				ctl_list_add_tail(&r->list, &c->rules);
		} else {
			if (old)
				ctl_list_add_tail(&r->list, &old->list);
			else
				ctl_list_add(&r->list, &c->rules);
		}
	}
	ctl_refs_get(r->refs, r->nrefs);
	/* nft_immediate_init: the binding chains it jumps to are bound now */
	for (i = 0; i < r->nrefs; i++) {
		struct ctl_chain *b = r->refs[i].obj;

		if (r->refs[i].kind == CTL_REF_CHAIN && b->binding)
			b->bound = true;
	}
	c->use++;
	c->nrules++;
	if (jumps)
		m->st->validate = true;
	return 0;

err_rule:
	if (r->nl)
		nftnl_rule_free(r->nl);
	free(r->blob);
	free(r->refs);
	free(r);
	return err;
}

int ctl_delrule(struct ctl_msg *m)
{
	struct ctl_table *t;
	struct ctl_chain *c = NULL;
	struct ctl_rule *r;
	int err;

	t = ctl_table_lookup(m, m->tb[NFTA_RULE_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	if (m->tb[NFTA_RULE_CHAIN] || m->tb[NFTA_RULE_CHAIN_ID]) {
		c = rule_chain(m, t, &err);
		if (c == NULL)
			return err;
		/* its rules go only with the rule holding it (nf_tables_delrule) */
		if (c->binding)
			return -EOPNOTSUPP;
	}
	if (c) {
		if (m->tb[NFTA_RULE_HANDLE]) {
			r = rule_lookup(c, be64toh(mnl_attr_get_u64(m->tb[NFTA_RULE_HANDLE])));
			if (r == NULL) {
				m->bad_attr = m->tb[NFTA_RULE_HANDLE];
				return -ENOENT;
			}
			return ctl_rule_delete(m, r);
		}
		if (m->tb[NFTA_RULE_ID]) {
			r = rule_lookup_id(m->st, c, ntohl(mnl_attr_get_u32(m->tb[NFTA_RULE_ID])));
			if (r == NULL) {
				m->bad_attr = m->tb[NFTA_RULE_ID];
				return -ENOENT;
			}
			return ctl_rule_delete(m, r);
		}
		return ctl_chain_flush_rules(m, c);
	}
	return ctl_table_flush_rules(m, t); /* flush table */
}

static void rule_msg(struct ctl_out *o, struct ctl_msg *m, const struct ctl_rule *r, uint16_t flags)
{
	struct nlmsghdr *nlh;

	nlh =
	    ctl_out_msg(o, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE, r->chain->table->family,
			flags, m->nlh->nlmsg_seq, ctl_session_portid(m->s), m->st->genid & 0xffff);
	if (nlh == NULL)
		return;
	ctl_rule_fill(nlh, r);
	ctl_out_end(o, nlh);
}

int ctl_getrule(struct ctl_msg *m, struct ctl_out *o)
{
	struct ctl_table *t;
	struct ctl_chain *c;
	struct ctl_rule *r;
	int err;

	if (m->nlh->nlmsg_flags & NLM_F_DUMP) {
		const struct nlattr *tname = m->tb[NFTA_RULE_TABLE];
		const struct nlattr *cname = m->tb[NFTA_RULE_CHAIN];

		ctl_list_for_each_entry(t, &m->st->tables, list) {
			if (!ctl_dump_match(m, t, tname))
				continue;
			ctl_list_for_each_entry(c, &t->chains, list) {
				if (cname && strcmp(mnl_attr_get_str(cname), c->name) != 0)
					continue;
				ctl_list_for_each_entry(r, &c->rules, list)
					rule_msg(o, m, r, NLM_F_MULTI);
			}
		}
		ctl_out_done(o, m->nlh->nlmsg_seq, ctl_session_portid(m->s));
		return -EINTR;
	}
	t = ctl_table_lookup(m, m->tb[NFTA_RULE_TABLE], m->family, &err);
	if (t == NULL)
		return err;
	c = rule_chain(m, t, &err);
	if (c == NULL)
		return err;
	if (m->tb[NFTA_RULE_HANDLE] == NULL)
		return -EINVAL;
	r = rule_lookup(c, be64toh(mnl_attr_get_u64(m->tb[NFTA_RULE_HANDLE])));
	if (r == NULL) {
		m->bad_attr = m->tb[NFTA_RULE_HANDLE];
		return -ENOENT;
	}
	rule_msg(o, m, r, 0);
	return 0;
}
