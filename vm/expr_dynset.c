// SPDX-License-Identifier: BSD-3-Clause
/*
 * dynset: add, update or delete a set element from the packet path
 * (`add @s { ip saddr timeout 10s }`). Mirrors nft_dynset.c; the element
 * store is sets/' nftdp_set_dp_update (or a test stand-in's callbacks).
 * Per-element expressions (NFTA_DYNSET_EXPR[ESSIONS], meters: `update @m
 * { ip saddr limit rate 10/second }`) are cloned into each element the
 * dynset creates and run on the element it adds or finds (elem_expr.c).
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>

#include "vm_priv.h"

struct dynset_priv {
	struct nftdp_set *set;
	const struct nftdp_vm_set_ops *ops;
	uint64_t timeout_ms;
	uint8_t sreg_key, sreg_data, op;
	bool invert, has_data;
	uint8_t dlen;	  /* map data bytes */
	uint16_t expr_at; /* 1 + offset of the element expressions in the data, 0: none */
	const void *tmpl; /* a new element's expressions (nft_dynset_expr_setup), or NULL */
};
NFTDP_VM_PRIV_CHECK(struct dynset_priv);

/* nft_dynset_eval with element expressions: the new element starts with
 * the dynset's (p->tmpl, after its map data), and the element added or
 * found runs them (nft_set_elem_update_expr), which may break the rule. */
static void dynset_eval_exprs(const struct dynset_priv *p, const void *key,
			      struct nftdp_vm_regs *regs, struct nftdp_vm_pkt *pkt,
			      struct nftdp_vm_ctx *ctx)
{
	uint8_t buf[NFTDP_SET_DATA_MAX];
	uint32_t at = p->expr_at - 1u;
	const void *data = NULL; /* sets/ zeroes a new element's data */
	void *elem = NULL;
	int rc;

	if (p->has_data || p->tmpl) {
		/* the registers hold only the map data */
		memset(buf, 0, at);
		if (p->has_data)
			memcpy(buf, &regs->data[p->sreg_data], p->dlen);
		if (p->tmpl)
			memcpy(buf + at, p->tmpl, NFTDP_VM_ELEM_EXPR_SIZE);
		else
			memset(buf + at, 0, NFTDP_VM_ELEM_EXPR_SIZE);
		data = buf;
	}
	rc = nftdp_set_dp_update_elem(
	    p->set, key, data, p->timeout_ms, ctx->now_ms,
	    p->op == NFT_DYNSET_OP_UPDATE ? NFTDP_SET_DP_UPDATE : NFTDP_SET_DP_ADD, &elem);
	if (rc == -EAGAIN || (rc == 0 && !elem)) {
		/* lost a race with another worker adding the key: it is
		 * there, out of this packet's reach */
		if (p->invert)
			regs->verdict.code = NFT_BREAK;
		return;
	}
	if (rc < 0) {
		if (!p->invert)
			regs->verdict.code = NFT_BREAK;
		return;
	}
	if (nftdp_vm_elem_expr_eval((uint8_t *)elem + at, pkt, ctx) || p->invert)
		regs->verdict.code = NFT_BREAK;
}

static void dynset_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct dynset_priv *p = (const void *)op->priv;
	const void *key = &regs->data[p->sreg_key];

	if (p->op == NFT_DYNSET_OP_DELETE) {
		vm_set_remove(p->ops, p->set, key, ctx->now_ms);
		return;
	}
	if (p->expr_at) {
		dynset_eval_exprs(p, key, regs, pkt, ctx);
		return;
	}
	if (vm_set_update(p->ops, p->set, key, p->has_data ? &regs->data[p->sreg_data] : NULL,
			  p->timeout_ms, p->op == NFT_DYNSET_OP_UPDATE, ctx->now_ms)) {
		if (p->invert)
			regs->verdict.code = NFT_BREAK;
		return;
	}
	if (!p->invert)
		regs->verdict.code = NFT_BREAK;
}

static int count_expr(struct nftnl_expr *e, void *arg)
{
	(void)e;
	(*(int *)arg)++;
	return 0;
}

struct exprs_parse {
	struct nftdp_vm_elem_expr v[NFTDP_VM_ELEM_EXPR_MAX];
	unsigned int n;
	int err;
	const char *why;
};

/* nft_set_elem_expr_alloc: stateful expressions only, at most
 * NFT_SET_EXPR_MAX of them */
static int parse_expr(struct nftnl_expr *e, void *arg)
{
	struct exprs_parse *x = arg;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	struct nftdp_vm_elem_expr *v;

	if (x->n == NFTDP_VM_ELEM_EXPR_MAX) {
		x->err = -E2BIG;
		x->why = "dynset: more than 2 element expressions";
		return -1;
	}
	v = &x->v[x->n];
	memset(v, 0, sizeof(*v));
	if (name && strcmp(name, "counter") == 0) {
		v->type = NFTDP_VM_ELEM_EXPR_COUNTER;
		v->packets = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_PACKETS);
		v->bytes = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_BYTES);
	} else if (name && strcmp(name, "quota") == 0) {
		v->type = NFTDP_VM_ELEM_EXPR_QUOTA;
		v->quota = nftnl_expr_get_u64(e, NFTNL_EXPR_QUOTA_BYTES);
		v->consumed = nftnl_expr_get_u64(e, NFTNL_EXPR_QUOTA_CONSUMED);
		v->flags = nftnl_expr_get_u32(e, NFTNL_EXPR_QUOTA_FLAGS);
	} else if (name && strcmp(name, "limit") == 0) {
		v->type = NFTDP_VM_ELEM_EXPR_LIMIT;
		v->rate = nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_RATE);
		v->unit = nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_UNIT);
		v->burst = nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_BURST);
		v->limit_type = nftnl_expr_is_set(e, NFTNL_EXPR_LIMIT_TYPE)
				    ? nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_TYPE)
				    : NFT_LIMIT_PKTS;
		v->flags = nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_FLAGS);
	} else if (name && strcmp(name, "connlimit") == 0) {
		v->type = NFTDP_VM_ELEM_EXPR_CONNLIMIT;
		v->count = nftnl_expr_get_u32(e, NFTNL_EXPR_CONNLIMIT_COUNT);
		v->flags = nftnl_expr_get_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS);
	} else if (name && strcmp(name, "last") == 0) {
		v->type = NFTDP_VM_ELEM_EXPR_LAST;
		v->last_set = nftnl_expr_get_u32(e, NFTNL_EXPR_LAST_SET);
		v->last_msecs = nftnl_expr_get_u64(e, NFTNL_EXPR_LAST_MSECS);
	} else {
		/* not NFT_EXPR_STATEFUL */
		x->err = -EOPNOTSUPP;
		x->why = "dynset: element expression is not stateful";
		return -1;
	}
	x->n++;
	return 0;
}

/* The dynset's element expressions (its own, else the set's) as the
 * template a new element starts from. */
static int dynset_exprs(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e,
			const struct nftdp_vm_set_info *si, struct dynset_priv *p)
{
	struct nftdp_vm_elem_expr set_v[NFTDP_VM_ELEM_EXPR_MAX];
	struct exprs_parse x = {.n = 0};
	unsigned int set_n = 0;
	void *tmpl;
	int rc;

	nftnl_expr_expr_foreach(e, parse_expr, &x);
	if (x.err)
		return nftdp_vm_errf(cc, x.err, "%s", x.why);
	cc->needs_ct |= si->elem_uses_ct;
	for (unsigned int i = 0; i < x.n; i++)
		if (x.v[i].type == NFTDP_VM_ELEM_EXPR_CONNLIMIT && (si->flags & NFT_SET_TIMEOUT))
			/* nft_set_elem_expr_alloc: NFT_EXPR_GC on a set with timeouts */
			return nftdp_vm_errf(cc, -EOPNOTSUPP,
					     "dynset: ct count on a set with timeouts");
	if (x.n && !(si->flags & NFT_SET_EVAL))
		return nftdp_vm_errf(cc, -EINVAL,
				     "dynset: element expressions on a set that is "
				     "not dynamic");
	if (!si->elem_expr_at) {
		if (x.n)
			return nftdp_vm_errf(cc, -EOPNOTSUPP,
					     "dynset: set without room for element expressions");
		return 0;
	}
	if (si->elem_expr_at - 1 > NFTDP_SET_DATA_MAX - NFTDP_VM_ELEM_EXPR_SIZE ||
	    (p->has_data && p->dlen > si->elem_expr_at - 1))
		return nftdp_vm_errf(cc, -EINVAL, "dynset: element expression offset");
	if (si->elem_expr_tmpl)
		set_n = nftdp_vm_elem_expr_read(si->elem_expr_tmpl, set_v);
	/* nft_dynset_init: the dynset's own must be the set's, in order */
	if (x.n && set_n) {
		if (x.n != set_n)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: not the set's expressions");
		for (unsigned int i = 0; i < x.n; i++)
			if (x.v[i].type != set_v[i].type)
				return nftdp_vm_errf(cc, -EOPNOTSUPP,
						     "dynset: not the set's expressions");
	}
	/* an element the control plane added may carry expressions of its
	 * own, which an add or update runs whatever the dynset's */
	p->expr_at = (uint16_t)si->elem_expr_at;
	if (!x.n && !set_n)
		return 0;
	tmpl = nftdp_vm_blob(cc, NFTDP_VM_ELEM_EXPR_SIZE);
	if (!tmpl)
		return -ENOMEM;
	if (x.n) {
		rc = nftdp_vm_elem_expr_init(tmpl, x.v, x.n);
		if (rc < 0)
			return nftdp_vm_errf(cc, rc, "dynset: element expression");
	} else {
		memcpy(tmpl, si->elem_expr_tmpl, NFTDP_VM_ELEM_EXPR_SIZE);
	}
	/* a `ct count` too long for the element: blocks of the set's */
	rc = nftdp_vm_elem_expr_bind(tmpl, p->set, si->elem_expr_at - 1);
	if (rc < 0)
		return nftdp_vm_errf(cc, rc, "dynset: ct count list");
	p->tmpl = tmpl;
	/* connlimit's init: nf_ct_netns_get */
	cc->needs_ct |= nftdp_vm_elem_expr_uses_ct(tmpl);
	return 0;
}

static int dynset_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct dynset_priv *p = priv;
	struct nftdp_vm_set_info si;
	uint32_t flags = 0, op;
	int rc;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_SREG_KEY) ||
	    !nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_OP))
		return nftdp_vm_errf(cc, -EINVAL, "dynset: key register or operation missing");
	if (nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_FLAGS))
		flags = nftdp_vm_u32(e, NFTNL_EXPR_DYNSET_FLAGS);
	if (flags & ~(uint32_t)(NFT_DYNSET_F_INV | NFT_DYNSET_F_EXPR))
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: flags 0x%x", flags);
	p->invert = flags & NFT_DYNSET_F_INV;
	rc = nftdp_vm_resolve_set(cc, e, NFTNL_EXPR_DYNSET_SET_NAME, NFTNL_EXPR_DYNSET_SET_ID, &si);
	if (rc < 0)
		return rc;
	if (si.flags & NFT_SET_OBJECT)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: object maps");
	if (si.ops && (!si.ops->update || !si.ops->remove))
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: set cannot be updated");
	if (si.flags & NFT_SET_CONSTANT)
		return nftdp_vm_errf(cc, -EBUSY, "dynset: constant set");
	p->set = si.set;
	p->ops = si.ops;
	op = nftdp_vm_u32(e, NFTNL_EXPR_DYNSET_OP);
	if (op > NFT_DYNSET_OP_DELETE)
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: operation %u", op);
	p->op = (uint8_t)op;
	if (nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_TIMEOUT)) {
		if (!(si.flags & NFT_SET_TIMEOUT))
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: timeout on a set without");
		p->timeout_ms = nftnl_expr_get_u64(e, NFTNL_EXPR_DYNSET_TIMEOUT);
	}
	if (!p->timeout_ms)
		p->timeout_ms = si.timeout_ms;
	rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DYNSET_SREG_KEY, &p->sreg_key, si.klen);
	if (rc < 0)
		return rc;
	if (nftdp_vm_attr(e, NFTNL_EXPR_DYNSET_SREG_DATA)) {
		if (!(si.flags & NFT_SET_MAP))
			return nftdp_vm_errf(cc, -EINVAL, "dynset: data for a set that is no map");
		if (si.dtype == NFT_DATA_VERDICT)
			return nftdp_vm_errf(cc, -EOPNOTSUPP, "dynset: verdict data");
		rc = nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_DYNSET_SREG_DATA, &p->sreg_data,
					     si.dlen);
		if (rc < 0)
			return rc;
		p->has_data = true;
		p->dlen = (uint8_t)si.dlen;
	} else if (si.flags & NFT_SET_MAP) {
		return nftdp_vm_errf(cc, -EINVAL, "dynset: map without data");
	}
	if (si.ops) {
		/* a test's stand-in holds no element expressions */
		int n = 0;

		nftnl_expr_expr_foreach(e, count_expr, &n);
		if (n)
			return nftdp_vm_errf(cc, -EOPNOTSUPP,
					     "dynset: element expressions need a sets/ set");
		return 0;
	}
	return dynset_exprs(cc, e, &si, p);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_dynset = {
    .name = "dynset",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "dynset",
	    .size = sizeof(struct dynset_priv),
	    .init = dynset_init,
	    .eval = dynset_eval,
	    .flow = NFTDP_VM_FLOW_DYNSET,
	},
};
