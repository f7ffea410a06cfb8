// SPDX-License-Identifier: BSD-3-Clause
/*
 * match and target: the xtables extensions iptables-nft sends for what it
 * does not translate to native expressions. Mirrors nft_compat.c
 * (nft_match/target_select_ops, nft_match/target_init, _validate) and the
 * generic checks of x_tables.c (xt_check_match, xt_check_target); each
 * extension's checkentry and match/target function lives in
 * expr_compat_match.c / expr_compat_target.c. The stored rule keeps the
 * info blob as sent, which is what the kernel dumps back.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/x_tables.h>

#include "compat.h"

/* the bridge and arp families have their own extensions (ebtables,
 * arptables: expr_compat_bridge.c), as x_tables.c keeps a list per family */
static const struct compat_ext *tab_of(uint8_t family, bool target)
{
	if (family == NFPROTO_BRIDGE || family == NFPROTO_ARP)
		return target ? nftdp_vm_compat_br_targets : nftdp_vm_compat_br_matches;
	return target ? nftdp_vm_compat_targets : nftdp_vm_compat_matches;
}

static const struct compat_ext *find(const struct compat_ext *tab, const char *name, uint32_t rev,
				     uint8_t family, bool *name_known)
{
	*name_known = false;
	for (const struct compat_ext *x = tab; x->name; x++) {
		if (strcmp(x->name, name) != 0 ||
		    (x->family != NFPROTO_UNSPEC && x->family != family))
			continue;
		*name_known = true;
		if (x->rev == rev)
			return x;
	}
	return NULL;
}

/*
 * Extensions the kernel (6.18, modules loaded on demand) has that nftdp
 * answers revision queries for but does not run as match/target: the ones
 * iptables-nft asks about and then translates to native expressions (tcp,
 * udp, limit, ...), and common ones a rule is refused with (EOPNOTSUPP,
 * naming the extension) rather than iptables warning of a missing module.
 * revs: a bit per revision the kernel registers.
 */
struct compat_known {
	const char *name;
	bool target;
	uint8_t family; /* NFPROTO_UNSPEC: both */
	uint8_t revs;
};

/* clang-format off */
static const struct compat_known kernel_known[] = {
    {"tcp", false, NFPROTO_UNSPEC, 1 << 0},
    {"udp", false, NFPROTO_UNSPEC, 1 << 0},
    {"udplite", false, NFPROTO_UNSPEC, 1 << 0},
    {"limit", false, NFPROTO_UNSPEC, 1 << 0},
    {"addrtype", false, NFPROTO_IPV4, 1 << 0 | 1 << 1},
    {"addrtype", false, NFPROTO_IPV6, 1 << 1},
    {"hashlimit", false, NFPROTO_UNSPEC, 1 << 1 | 1 << 2 | 1 << 3},
    {"recent", false, NFPROTO_UNSPEC, 1 << 0},
    {"owner", false, NFPROTO_UNSPEC, 1 << 1},
    {"physdev", false, NFPROTO_UNSPEC, 1 << 0},
    {"set", false, NFPROTO_UNSPEC, 0x1f},
    {"time", false, NFPROTO_UNSPEC, 1 << 0},
    {"statistic", false, NFPROTO_UNSPEC, 1 << 0},
    {"connlimit", false, NFPROTO_UNSPEC, 1 << 1},
    {"conntrack", false, NFPROTO_UNSPEC, 1 << 1 | 1 << 2 | 1 << 3},
    {"iprange", false, NFPROTO_UNSPEC, 1 << 1},
    {"mark", false, NFPROTO_UNSPEC, 1 << 1},
    {"dscp", false, NFPROTO_UNSPEC, 1 << 0},
    {"tos", false, NFPROTO_UNSPEC, 1 << 1},
    {"ttl", false, NFPROTO_IPV4, 1 << 0},
    {"hl", false, NFPROTO_IPV6, 1 << 0},
    {"helper", false, NFPROTO_UNSPEC, 1 << 0},
    {"policy", false, NFPROTO_UNSPEC, 1 << 0},
    {"quota", false, NFPROTO_UNSPEC, 1 << 0},
    {"socket", false, NFPROTO_UNSPEC, 0x0f},
    {"TCPMSS", true, NFPROTO_UNSPEC, 1 << 0},
    {"NFLOG", true, NFPROTO_UNSPEC, 1 << 0},
    {"NFQUEUE", true, NFPROTO_UNSPEC, 1 << 1 | 1 << 2 | 1 << 3},
    {"TPROXY", true, NFPROTO_UNSPEC, 1 << 1},
    {"CT", true, NFPROTO_UNSPEC, 1 << 0 | 1 << 1 | 1 << 2},
    {"NOTRACK", true, NFPROTO_UNSPEC, 1 << 0},
    {"MARK", true, NFPROTO_UNSPEC, 1 << 2},
    {"CLASSIFY", true, NFPROTO_UNSPEC, 1 << 0},
    {"DSCP", true, NFPROTO_UNSPEC, 1 << 0},
    {"TTL", true, NFPROTO_IPV4, 1 << 0},
    {"HL", true, NFPROTO_IPV6, 1 << 0},
    {"SET", true, NFPROTO_UNSPEC, 0x0f},
    {NULL, false, 0, 0},
};
/* clang-format on */

int nftdp_vm_compat_revision(uint8_t family, const char *name, uint32_t rev, bool target)
{
	const struct compat_ext *tab = tab_of(family, target);
	int best = -1;
	bool have = false;

	/* xt_find_revision: the best revision of that name, EPROTONOSUPPORT
	 * if the one asked for is not among them, ENOENT if none (after
	 * request_module found no module) */
	for (const struct compat_ext *x = tab; x->name; x++) {
		if (strcmp(x->name, name) != 0 ||
		    (x->family != NFPROTO_UNSPEC && x->family != family))
			continue;
		if (x->rev > best)
			best = x->rev;
		if (x->rev == rev)
			have = true;
	}
	for (const struct compat_known *k = kernel_known; k->name; k++) {
		if (family == NFPROTO_BRIDGE || family == NFPROTO_ARP)
			break; /* ebtables/arptables: only the ones stored */
		if (k->target != target || strcmp(k->name, name) != 0 ||
		    (k->family != NFPROTO_UNSPEC && k->family != family))
			continue;
		for (int r = 0; r < 8; r++) {
			if (!(k->revs & (1u << r)))
				continue;
			if (r > best)
				best = r;
			if ((uint32_t)r == rev)
				have = true;
		}
	}
	if (best < 0)
		return -ENOENT;
	return have ? best : -EPROTONOSUPPORT;
}

int nftdp_vm_compat_info_size(uint8_t family, const char *name, uint32_t rev, bool target)
{
	const struct compat_ext *x;
	bool known;

	x = find(tab_of(family, target), name, rev, family, &known);
	return x ? x->size : -ENOENT;
}

static const struct compat_ext *ext_of(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e,
				       bool target)
{
	uint16_t a_name = target ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME;
	uint16_t a_rev = target ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV;
	uint16_t a_info = target ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO;
	const char *kind = target ? "target" : "match";
	const struct compat_ext *x;
	const char *name;
	uint32_t rev, len = 0;
	bool known;

	if (!nftdp_vm_attr(e, a_name) || !nftdp_vm_attr(e, a_rev) || !nftdp_vm_attr(e, a_info)) {
		nftdp_vm_errf(cc, -EINVAL, "%s: name, rev or info missing", kind);
		return NULL;
	}
	name = nftnl_expr_get_str(e, a_name);
	rev = nftdp_vm_u32(e, a_rev);
	if (target && (strcmp(name, XT_ERROR_TARGET) == 0 ||
		       strcmp(name, XT_STANDARD_TARGET) == 0 || strcmp(name, "standard") == 0)) {
		nftdp_vm_errf(cc, -EINVAL, "target %s: not a target", name);
		return NULL;
	}
	if (cc->chain->family != NFPROTO_IPV4 && cc->chain->family != NFPROTO_IPV6 &&
	    cc->chain->family != NFPROTO_BRIDGE && cc->chain->family != NFPROTO_ARP) {
		/* no xtables extension registers for inet or netdev */
		nftdp_vm_errf(cc, -EOPNOTSUPP, "%s %s: not in a table of this family", kind, name);
		return NULL;
	}
	x = find(tab_of(cc->chain->family, target), name, rev, cc->chain->family, &known);
	if (!x && known &&
	    (cc->chain->family == NFPROTO_BRIDGE || cc->chain->family == NFPROTO_ARP)) {
		/* xt_find_match: the name with another revision; ebtables'
		 * and arptables' tables have every revision the kernel has */
		nftdp_vm_errf(cc, -EPROTOTYPE, "%s %s: no revision %u", kind, name, rev);
		return NULL;
	}
	if (!x) {
		/* the kernel would load it (ENOENT only when no module has it);
		 * nftdp does not run it */
		nftdp_vm_errf(cc, -EOPNOTSUPP, "%s %s (revision %u): not supported by nftdp", kind,
			      name, rev);
		return NULL;
	}
	nftnl_expr_get(e, a_info, &len);
	if (x->size > len) { /* nft_match_select_ops */
		nftdp_vm_errf(cc, -EINVAL, "%s %s: info of %u bytes, want %u", kind, name, len,
			      XT_ALIGN(x->size));
		return NULL;
	}
	return x;
}

static const struct nftdp_vm_expr_ops *match_select(struct nftdp_vm_cctx *cc,
						    const struct nftnl_expr *e)
{
	const struct compat_ext *x = ext_of(cc, e, false);

	return x ? x->ops : NULL;
}

static const struct nftdp_vm_expr_ops *target_select(struct nftdp_vm_cctx *cc,
						     const struct nftnl_expr *e)
{
	const struct compat_ext *x = ext_of(cc, e, true);

	return x ? x->ops : NULL;
}

/* xt_check_match / xt_check_target, then the extension's checkentry */
static int compat_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv,
		       bool target)
{
	uint16_t a_info = target ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO;
	const char *kind = target ? "target" : "match";
	const struct compat_ext *x = ext_of(cc, e, target);
	struct compat_par par = {.family = cc->chain->family};
	uint8_t buf[2048]; /* xt_u32 is the largest: 1984 bytes */
	const void *info;
	uint32_t len = 0;

	if (!x)
		return cc->err && cc->err->err ? cc->err->err : -EINVAL;
	info = nftnl_expr_get(e, a_info, &len);
	if (cc->rule && (nftnl_rule_is_set(cc->rule, NFTNL_RULE_COMPAT_PROTO) ||
			 nftnl_rule_is_set(cc->rule, NFTNL_RULE_COMPAT_FLAGS))) {
		uint32_t flags = nftnl_rule_get_u32(cc->rule, NFTNL_RULE_COMPAT_FLAGS);

		/* nft_parse_compat: both attributes, known flags */
		if (!nftnl_rule_is_set(cc->rule, NFTNL_RULE_COMPAT_PROTO) ||
		    !nftnl_rule_is_set(cc->rule, NFTNL_RULE_COMPAT_FLAGS) ||
		    (flags & ~NFT_RULE_COMPAT_F_MASK))
			return nftdp_vm_errf(cc, -EINVAL, "%s %s: bad rule compat flags", kind,
					     x->name);
		par.inv_proto = flags & NFT_RULE_COMPAT_F_INV;
		par.proto = (uint16_t)nftnl_rule_get_u32(cc->rule, NFTNL_RULE_COMPAT_PROTO);
	}
	if (cc->chain->base)
		par.hook_mask = COMPAT_HOOK(cc->chain->hook);
	if ((uint32_t)XT_ALIGN(x->size) != (uint32_t)XT_ALIGN(len))
		return nftdp_vm_errf(cc, -EINVAL, "%s %s: info of %u bytes, want %u", kind, x->name,
				     len, XT_ALIGN(x->size));
	if (x->table && strcmp(x->table, cc->chain->table) != 0)
		return nftdp_vm_errf(cc, -EINVAL, "%s %s: only valid in table %s", kind, x->name,
				     x->table);
	if (x->hooks && (par.hook_mask & ~x->hooks))
		return nftdp_vm_errf(cc, -EINVAL, "%s %s: not valid in this hook", kind, x->name);
	if (x->proto && (x->proto != par.proto || par.inv_proto))
		return nftdp_vm_errf(cc, -EINVAL, "%s %s: only for protocol %u", kind, x->name,
				     x->proto);
	/* the kernel works on a copy padded with zeroes (match_compat_from_user) */
	if ((size_t)XT_ALIGN(x->size) > sizeof(buf))
		return nftdp_vm_errf(cc, -EINVAL, "%s %s: info too large", kind, x->name);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, info, x->size);
	par.info = buf;
	return x->check ? x->check(cc, &par, priv) : 0;
}

int nftdp_vm_compat_match_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	return compat_init(cc, e, priv, false);
}

int nftdp_vm_compat_target_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	return compat_init(cc, e, priv, true);
}

int nftdp_vm_compat_become(struct nftdp_vm_cctx *cc, void *priv,
			   const struct nftdp_vm_expr_type *type, struct nftnl_expr *e)
{
	struct nftdp_vm_op *op = (void *)((char *)priv - offsetof(struct nftdp_vm_op, priv));
	const struct nftdp_vm_expr_ops *ops = type->ops;
	int rc;

	if (!ops)
		ops = type->select_ops(cc, e);
	rc = ops ? ops->init(cc, e, priv) : -EINVAL;
	nftnl_expr_free(e);
	if (rc < 0)
		return rc;
	op->ops = ops;
	op->eval = ops->eval;
	op->fast = ops->fast;
	return 0;
}

bool nftdp_vm_compat_uses_ct(const struct nftnl_expr *e)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	bool target, known;
	const struct compat_ext *x;

	if (!name)
		return false;
	if (!nftnl_expr_is_set(e, NFTNL_EXPR_MT_NAME)) /* TG_NAME: the same attribute */
		return false;
	target = strcmp(name, "target") == 0;
	if (!target && strcmp(name, "match") != 0)
		return false;
	for (uint8_t f = NFPROTO_IPV4; f <= NFPROTO_IPV6; f += NFPROTO_IPV6 - NFPROTO_IPV4) {
		x = find(target ? nftdp_vm_compat_targets : nftdp_vm_compat_matches,
			 nftnl_expr_get_str(e, target ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME),
			 nftnl_expr_get_u32(e, target ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV), f,
			 &known);
		if (x && (x->flags & COMPAT_F_CT))
			return true;
	}
	return false;
}

bool nftdp_vm_compat_shares_state(const struct nftnl_expr *e, bool base)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	const struct compat_ext *x;
	bool known;

	if (!name || strcmp(name, "match") != 0 || !nftnl_expr_is_set(e, NFTNL_EXPR_MT_NAME))
		return false;
	for (uint8_t f = NFPROTO_IPV4; f <= NFPROTO_IPV6; f += NFPROTO_IPV6 - NFPROTO_IPV4) {
		x = find(nftdp_vm_compat_matches, nftnl_expr_get_str(e, NFTNL_EXPR_MT_NAME),
			 nftnl_expr_get_u32(e, NFTNL_EXPR_MT_REV), f, &known);
		if (x && (x->flags & COMPAT_F_STATE) && (!base || (x->flags & COMPAT_F_NAMED)))
			return true;
	}
	return false;
}

bool nftdp_vm_compat_logs(const struct nftnl_expr *e)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	const char *tg;

	if (!name || strcmp(name, "target") != 0 || !nftnl_expr_is_set(e, NFTNL_EXPR_TG_NAME))
		return false;
	tg = nftnl_expr_get_str(e, NFTNL_EXPR_TG_NAME);
	/* LOG, and ebtables' log and nflog (no other family has those names) */
	return strcmp(tg, "LOG") == 0 || strcmp(tg, "log") == 0 || strcmp(tg, "nflog") == 0;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_match = {
    .name = "match",
    .select_ops = match_select,
};

const struct nftdp_vm_expr_type nftdp_vm_expr_target = {
    .name = "target",
    .select_ops = target_select,
};
