// SPDX-License-Identifier: BSD-3-Clause
/*
 * The xtables CT target (xt_CT.c, revisions 0, 1, 2) and NOTRACK. The
 * kernel's checkentry builds a template conntrack (zone, ecache event
 * masks, helper, timeout policy) that xt_ct_target attaches to a packet
 * not yet tracked; conntrack's init_conntrack then gives a new connection
 * the template's zone, events and helper. nftdp keeps the template in the
 * rule (struct cttg_priv) and attaches it as the packet's ct_zone /
 * ct_zone_dir (what `ct zone set` attaches too) and ct_tmpl_* fields,
 * which conntrack/ct.c reads when it makes the entry.
 */
#include <arpa/inet.h>
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_CT.h>
#include <linux/netfilter/xt_helper.h>

#include "compat.h"

#include <linux/netfilter/nf_conntrack_tuple_common.h> /* after netinet/in.h */

struct cttg_priv {
	uint16_t zone;
	uint16_t events; /* the template's ecache ctmask */
	uint8_t zone_dir;
	uint8_t helper;
	uint8_t flags; /* NFTDP_VM_CT_TMPL_* */
	bool notrack;
};
NFTDP_VM_PRIV_CHECK(struct cttg_priv);

/* xt_ct_find_proto: the rule's -p, 0 when inverted or absent */
static uint8_t ct_proto(const struct compat_par *par)
{
	return par->inv_proto ? 0 : (uint8_t)par->proto;
}

/* xt_ct_set_helper: nf_conntrack_helper_try_module_get(name, family, proto) */
static int ct_set_helper(struct nftdp_vm_cctx *cc, const struct compat_par *par,
			 struct cttg_priv *p, const char *name)
{
	uint8_t proto = ct_proto(par);
	unsigned int fam;

	if (!proto)
		return nftdp_vm_errf(cc, -ENOENT, "target CT: --helper needs -p (not inverted)");
	fam = nftdp_vm_ct_helper_families(name, proto);
	if (!(fam & (par->family == NFPROTO_IPV4 ? 1u : 2u)))
		return nftdp_vm_errf(cc, -ENOENT, "target CT: no such helper \"%s\"", name);
	p->helper = nftdp_vm_ct_helper_find(name, par->family, proto);
	if (!p->helper)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "target CT: helper %s not supported by nftdp",
				     name);
	/* h323's call forwarding looks up routes (callforward_filter) */
	if (p->helper == NFTDP_VM_CT_HELPER_Q931 || p->helper == NFTDP_VM_CT_HELPER_RAS)
		cc->needs_routes = true;
	return 0;
}

/* xt_ct_tg_check on the rev 1 layout (rev 0's copied into it) */
static int ct_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
		    const struct xt_ct_target_info_v1 *i)
{
	struct cttg_priv *p = priv;
	int rc;

	memset(p, 0, sizeof(*p));
	if (i->flags & XT_CT_NOTRACK) {
		p->notrack = true;
		return 0;
	}
	p->zone = i->zone;
	switch (i->flags & (XT_CT_ZONE_DIR_ORIG | XT_CT_ZONE_DIR_REPL)) { /* xt_ct_flags_to_dir */
	case XT_CT_ZONE_DIR_ORIG:
		p->zone_dir = NFTDP_VM_CT_ZONE_DIR_ORIG;
		break;
	case XT_CT_ZONE_DIR_REPL:
		p->zone_dir = NFTDP_VM_CT_ZONE_DIR_REPL;
		break;
	default:
		p->zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
	}
	if (i->flags & XT_CT_ZONE_MARK)
		p->flags |= NFTDP_VM_CT_TMPL_ZONE_MARK;
	/* nf_ct_ecache_ext_add: masks of 16 bits; it cannot fail here */
	if (i->ct_events || i->exp_events) {
		p->flags |= NFTDP_VM_CT_TMPL_EVENTS;
		p->events = (uint16_t)i->ct_events;
	}
	if (i->helper[0]) {
		if (strnlen(i->helper, sizeof(i->helper)) == sizeof(i->helper))
			return nftdp_vm_errf(cc, -ENAMETOOLONG, "target CT: helper name too long");
		rc = ct_set_helper(cc, par, p, i->helper);
		if (rc < 0)
			return rc;
	}
	if (i->timeout[0]) {
		if (strnlen(i->timeout, sizeof(i->timeout)) == sizeof(i->timeout))
			return nftdp_vm_errf(cc, -ENAMETOOLONG, "target CT: timeout name too long");
		/* xt_ct_set_timeout, then nf_ct_set_timeout: the policies are
		 * nfnetlink_cttimeout's (`nfct add timeout`), a subsystem nftdp
		 * does not have, so none by that name exists */
		if (!ct_proto(par))
			return nftdp_vm_errf(cc, -EINVAL,
					     "target CT: --timeout needs -p (not inverted)");
		return nftdp_vm_errf(cc, -ENOENT, "target CT: no timeout policy \"%s\"",
				     i->timeout);
	}
	return 0;
}

int nftdp_vm_compat_ct0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_ct_target_info *i0 = par->info;
	struct xt_ct_target_info_v1 i = {
	    .flags = i0->flags,
	    .zone = i0->zone,
	    .ct_events = i0->ct_events,
	    .exp_events = i0->exp_events,
	};

	/* xt_ct_tg_check_v0 */
	if (i0->flags & ~XT_CT_NOTRACK)
		return nftdp_vm_errf(cc, -EINVAL, "target CT: flags 0x%x", i0->flags);
	memcpy(i.helper, i0->helper, sizeof(i0->helper));
	return ct_check(cc, par, priv, &i);
}

int nftdp_vm_compat_ct1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_ct_target_info_v1 *i = par->info;

	if (i->flags & ~XT_CT_NOTRACK) /* xt_ct_tg_check_v1 */
		return nftdp_vm_errf(cc, -EINVAL, "target CT: flags 0x%x", i->flags);
	return ct_check(cc, par, priv, i);
}

int nftdp_vm_compat_ct2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_ct_target_info_v1 *i = par->info;

	if (i->flags & ~XT_CT_MASK) /* xt_ct_tg_check_v2 */
		return nftdp_vm_errf(cc, -EINVAL, "target CT: flags 0x%x", i->flags);
	return ct_check(cc, par, priv, i);
}

/* notrack_chk: nothing to check (the deprecation warning aside) */
int nftdp_vm_compat_notrack_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	struct cttg_priv *p = priv;

	(void)cc, (void)par;
	memset(p, 0, sizeof(*p));
	p->notrack = true;
	return 0;
}

/*
 * xt_ct_target / notrack_tg: a packet that has a conntrack already (an
 * entry, untracked, or a template from an earlier CT or `ct zone set`)
 * is left alone; otherwise it gets the untracked conntrack or the
 * rule's template. XT_CONTINUE either way.
 */
static void cttg_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct cttg_priv *p = (const void *)op->priv;

	(void)regs, (void)ctx;
	if (pkt->ct || pkt->ct_untracked || pkt->ct_zone_dir)
		return;
	if (p->notrack) {
		pkt->ct_untracked = true;
		pkt->out.notrack = true;
		return;
	}
	pkt->ct_zone = p->zone;
	pkt->ct_zone_dir = p->zone_dir;
	pkt->ct_tmpl_helper = p->helper;
	pkt->ct_tmpl_flags = p->flags;
	pkt->ct_tmpl_events = p->events;
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_ct_ops = {
    .name = "target CT",
    .size = sizeof(struct cttg_priv),
    .init = nftdp_vm_compat_target_init,
    .eval = cttg_eval,
};

/* ---- the helper match (xt_helper.c, rev 0) ---- */

struct helper_mt_priv {
	char name[30]; /* terminated at checkentry */
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct helper_mt_priv);

int nftdp_vm_compat_helper_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_helper_info *i = par->info;
	struct helper_mt_priv *p = priv;

	/* helper_mt_check: nf_ct_netns_get (COMPAT_F_CT), the name cut */
	(void)cc;
	memcpy(p->name, i->name, sizeof(p->name));
	p->name[sizeof(p->name) - 1] = '\0';
	p->invert = i->invert != 0;
	return 0;
}

/*
 * helper_mt: the helper of the connection's master (an expected
 * connection's); no connection, no master or a master without helper is
 * no match (invert: a match). An empty name matches any helper, another
 * compares the helper's name's length of it (strncmp(helper->name,
 * info->name, strlen(helper->name)): "ftp" matches "ftp" and "ftpx").
 */
static void helper_mt_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct helper_mt_priv *p = (const void *)op->priv;
	char name[16]; /* NF_CT_HELPER_NAME_LEN */
	bool ret = p->invert;

	(void)ctx;
	memset(name, 0, sizeof(name));
	if (pkt->ct && pkt->ct_ops &&
	    pkt->ct_ops->get(pkt->ct, NFT_CT_HELPER, IP_CT_DIR_ORIGINAL, name, sizeof(name))) {
		if (p->name[0] == '\0')
			ret = !ret;
		else
			ret ^= strncmp(name, p->name, strnlen(name, sizeof(name))) == 0;
	}
	compat_match_result(regs, ret);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_helper_ops = {
    .name = "match helper",
    .size = sizeof(struct helper_mt_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = helper_mt_eval,
};
