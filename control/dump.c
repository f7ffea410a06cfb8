/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dump plumbing the obj_*.c files share (nf_tables_dump_* helpers): the
 * table filter of a dump, and expressions as the kernel dumps them (no
 * transaction-local set ids, counters and quotas with every value, strings
 * NUL-terminated) for rules' dump blobs and set-element expressions.
 * Packing messages into datagrams is reply.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl_state.h"

bool ctl_dump_match(const struct ctl_msg *m, const struct ctl_table *t, const struct nlattr *tname)
{
	if (m->family != AF_UNSPEC && t->family != m->family)
		return false;
	return tname == NULL || strcmp(mnl_attr_get_str(tname), t->name) == 0;
}

/* The kernel dumps a set reference by name only: rebuild the rule without
 * the transaction-local set ids (NFTA_{LOOKUP,DYNSET,OBJREF}_SET_ID), which
 * nft would otherwise try to resolve when it reads the dump. */
static int id_attr_of(const char *expr)
{
	if (strcmp(expr, "lookup") == 0)
		return NFTA_LOOKUP_SET_ID;
	if (strcmp(expr, "dynset") == 0)
		return NFTA_DYNSET_SET_ID;
	if (strcmp(expr, "objref") == 0)
		return NFTA_OBJREF_SET_ID;
	return -1;
}

/* The u64 attribute type of data, or 0. */
static uint64_t nested_u64(const struct nlattr *data, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, data) if (mnl_attr_get_type(a) == type &&
					      mnl_attr_get_payload_len(a) ==
						  8) return be64toh(mnl_attr_get_u64(a));
	return 0;
}

/* Counters and quotas as the kernel dumps them (nft_counter_do_dump,
 * nft_quota_do_dump): every value present, in its order, whatever nft sent,
 * so that dumps can put the dataplane's values in place. */
static bool put_stateful_data(struct nlmsghdr *nlh, const struct nlattr *data, const char *name)
{
	struct nlattr *nd;

	if (strcmp(name, "counter") == 0) {
		nd = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES,
				 htobe64(nested_u64(data, NFTA_COUNTER_BYTES)));
		mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS,
				 htobe64(nested_u64(data, NFTA_COUNTER_PACKETS)));
		mnl_attr_nest_end(nlh, nd);
		return true;
	}
	if (strcmp(name, "quota") == 0) {
		const struct nlattr *a;
		uint32_t flags = 0;

		mnl_attr_for_each_nested(a, data) if (mnl_attr_get_type(a) == NFTA_QUOTA_FLAGS &&
						      mnl_attr_get_payload_len(a) == 4) flags =
		    ntohl(mnl_attr_get_u32(a));
		nd = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
		mnl_attr_put_u64(nlh, NFTA_QUOTA_BYTES,
				 htobe64(nested_u64(data, NFTA_QUOTA_BYTES)));
		mnl_attr_put_u64(nlh, NFTA_QUOTA_CONSUMED,
				 htobe64(nested_u64(data, NFTA_QUOTA_CONSUMED)));
		mnl_attr_put_u32(nlh, NFTA_QUOTA_FLAGS, htonl(flags));
		mnl_attr_nest_end(nlh, nd);
		return true;
	}
	return false;
}

/* A ct load of the (l3) protocol takes a direction "for compatibility"
 * (nft sends one for `ct original protocol`) but nft_ct_get_dump never
 * dumps it: the listing says `ct protocol`. Every other key either refuses
 * a direction or dumps the one it got. */
static bool ct_dir_hidden(const struct nlattr *data)
{
	const struct nlattr *a;
	bool load = false;
	uint32_t key = UINT32_MAX;

	mnl_attr_for_each_nested(a, data)
	{
		if (mnl_attr_get_type(a) == NFTA_CT_DREG)
			load = true;
		else if (mnl_attr_get_type(a) == NFTA_CT_KEY && mnl_attr_get_payload_len(a) == 4)
			key = ntohl(mnl_attr_get_u32(a));
	}
	return load && (key == NFT_CT_L3PROTOCOL || key == NFT_CT_PROTOCOL);
}

/* The expression data as the kernel dumps it: no set id, the objref
 * set name NUL-terminated (libnftnl 1.2.4 builds it without the NUL, which
 * the kernel tolerates on input but never sends back), no direction on a
 * ct protocol load. */
void ctl_put_expr_data(struct nlmsghdr *nlh, const struct nlattr *data, const char *name)
{
	int skip = id_attr_of(name);
	bool objref = strcmp(name, "objref") == 0;
	const struct nlattr *a;
	struct nlattr *nd;

	if (put_stateful_data(nlh, data, name))
		return;
	if (strcmp(name, "ct") == 0 && ct_dir_hidden(data))
		skip = NFTA_CT_DIRECTION;
	nd = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);

	mnl_attr_for_each_nested(a, data)
	{
		uint16_t type = mnl_attr_get_type(a);

		if (type == skip)
			continue;
		if (objref && (type == NFTA_OBJREF_SET_NAME || type == NFTA_OBJREF_IMM_NAME))
			ctl_put_strz_of(nlh, a);
		else
			ctl_put_attr(nlh, a);
	}
	mnl_attr_nest_end(nlh, nd);
}

/* One expression's attributes (name, data) as a dump carries them. */
static void put_expr_attrs(struct nlmsghdr *nlh, const struct nlattr *first, const char *end)
{
	const struct nlattr *x, *name = NULL;

	for (x = first; mnl_attr_ok(x, (int)(end - (const char *)x)); x = mnl_attr_next(x))
		if (mnl_attr_get_type(x) == NFTA_EXPR_NAME)
			name = x;
	for (x = first; mnl_attr_ok(x, (int)(end - (const char *)x)); x = mnl_attr_next(x)) {
		if (mnl_attr_get_type(x) == NFTA_EXPR_DATA && name)
			ctl_put_expr_data(nlh, x, mnl_attr_get_str(name));
		else
			ctl_put_attr(nlh, x);
	}
}

void *ctl_expr_payload_canon(uint16_t type, const void *payload, uint16_t len, uint16_t *outlen)
{
	char *buf = malloc((size_t)len * 2 + 512);
	const char *end = (const char *)payload + len;
	struct nlmsghdr *nlh;
	void *out;

	if (!buf)
		return NULL;
	nlh = mnl_nlmsg_put_header(buf);
	if (type == NFTA_SET_ELEM_EXPRESSIONS) {
		const struct nlattr *a;

		for (a = payload; mnl_attr_ok(a, (int)(end - (const char *)a));
		     a = mnl_attr_next(a)) {
			struct nlattr *n = mnl_attr_nest_start(nlh, mnl_attr_get_type(a));

			put_expr_attrs(nlh, mnl_attr_get_payload(a),
				       (const char *)mnl_attr_get_payload(a) +
					   mnl_attr_get_payload_len(a));
			mnl_attr_nest_end(nlh, n);
		}
	} else {
		put_expr_attrs(nlh, payload, end);
	}
	*outlen = (uint16_t)(nlh->nlmsg_len - NLMSG_HDRLEN);
	out = malloc(*outlen ? *outlen : 1);
	if (out)
		memcpy(out, buf + NLMSG_HDRLEN, *outlen);
	free(buf);
	return out;
}
