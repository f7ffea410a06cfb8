// SPDX-License-Identifier: BSD-3-Clause
/*
 * objref: run a named stateful object (`counter name "c"`), or the object a
 * map gives for the key (`counter name ip saddr map { ... }`). Mirrors
 * nft_objref.c. Also the objects themselves (counter, quota, limit: the
 * kernel's nft_counter_obj, nft_quota_obj, nft_limit_obj); their state is
 * keyed by (family, table, name, type) in the arena. `ct timeout` objects
 * (nft_ct_timeout_obj) hold a policy conntrack copies (nftdp_vm_ct_ops.timeout);
 * `ct helper` objects (nft_ct_helper_obj) name a helper conntrack runs
 * (nftdp_vm_ct_ops.helper); `ct expectation` objects (nft_ct_expect_obj)
 * open an expectation from a new connection (nftdp_vm_ct_ops.expect).
 * An object map's element data is a `const struct nftdp_vm_obj *`.
 */
#include <arpa/inet.h>
#include <stdlib.h>

#include <stdio.h> /* before libnftnl: it uses FILE */

#include <libnftnl/expr.h>
#include <libnftnl/object.h>

#include "vm_priv.h"

void nftdp_vm_obj_eval(const struct nftdp_vm_obj *obj, struct nftdp_vm_regs *regs,
		       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	switch (obj->type) {
	case NFT_OBJECT_COUNTER:
		nftdp_vm_counter_eval_slot(obj->slot, pkt, ctx);
		break;
	case NFT_OBJECT_QUOTA:
		if (nftdp_vm_quota_over(&ctx->state->cells[obj->slot], pkt->skb_len) ^ obj->invert)
			regs->verdict.code = NFT_BREAK;
		break;
	case NFT_OBJECT_LIMIT: {
		uint64_t cost = obj->bytes_mode ? obj->nsecs * pkt->skb_len / obj->rate : obj->cost;

		if (nftdp_vm_limit_eval(&ctx->state->cells[obj->slot], ctx->now_ns, obj->tokens_max,
					cost, obj->invert))
			regs->verdict.code = NFT_BREAK;
		break;
	}
	case NFT_OBJECT_CT_TIMEOUT:
		/* nft_ct_timeout_obj_eval: the packet's protocol only; conntrack
		 * leaves confirmed entries alone */
		if (pkt->ct && pkt->ct_ops && pkt->ct_ops->timeout &&
		    (pkt->flags & NFTDP_VM_PKT_F_L4PROTO) &&
		    pkt->l4proto == obj->ct_timeout.l4proto)
			pkt->ct_ops->timeout(pkt->ct, &obj->ct_timeout);
		break;
	case NFT_OBJECT_CT_HELPER:
		/* nft_ct_helper_obj_eval: conntrack checks confirmed, family,
		 * protocol and an earlier helper */
		if (pkt->ct && pkt->ct_ops && pkt->ct_ops->helper)
			pkt->ct_ops->helper(pkt->ct, &obj->ct_helper);
		break;
	case NFT_OBJECT_CT_EXPECT: {
		int v = pkt->ct && pkt->ct_ops && pkt->ct_ops->expect
			    ? pkt->ct_ops->expect(pkt->ct, &obj->ct_expect)
			    : NFT_BREAK;

		if (v != NFT_CONTINUE)
			regs->verdict.code = (uint32_t)v;
		break;
	}
	case NFT_OBJECT_SYNPROXY:
		nftdp_vm_synproxy_eval(&obj->synproxy, regs, pkt, ctx);
		break;
	}
}

/* Object types the VM runs. */
static bool obj_type_ok(uint32_t type)
{
	return type == NFT_OBJECT_COUNTER || type == NFT_OBJECT_QUOTA || type == NFT_OBJECT_LIMIT ||
	       type == NFT_OBJECT_CT_TIMEOUT || type == NFT_OBJECT_CT_HELPER ||
	       type == NFT_OBJECT_CT_EXPECT || type == NFT_OBJECT_SYNPROXY;
}

static const char *obj_type_name(uint32_t type)
{
	switch (type) {
	case NFT_OBJECT_CT_HELPER:
		return "ct helper";
	case NFT_OBJECT_CT_EXPECT:
		return "ct expectation";
	case NFT_OBJECT_SECMARK:
		return "secmark";
	case NFT_OBJECT_SYNPROXY:
		return "synproxy";
	case NFT_OBJECT_TUNNEL:
		return "tunnel";
	default:
		return NULL;
	}
}

/* Every ct timeout object compiled gets its own id (conntrack keys its copy by it). */
static _Atomic uint64_t ct_timeout_ids;

/*
 * nft_ct_timeout_obj_init / ctnl_timeout_parse_policy: libnftnl's array
 * holds the CTA_TIMEOUT_<proto>_* values in attribute order from 1 (TCP
 * SYN_SENT .. CLOSE, SYN_SENT2, RETRANS, UNACK; UDP UNREPLIED, REPLIED);
 * they go to the kernel's indexes (TCP_CONNTRACK_*, UDP_CT_*). libnftnl
 * and nft carry values for TCP and UDP only; other protocols keep the
 * defaults.
 */
static int ct_timeout_parse(struct nftnl_obj *o, struct nftdp_vm_ct_timeout *t)
{
	static const uint8_t tcp_index[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13};
	uint32_t len = 0;
	const uint32_t *arr;

	memset(t, 0, sizeof(*t));
	if (!nftnl_obj_is_set(o, NFTNL_OBJ_CT_TIMEOUT_L4PROTO))
		return -EINVAL;
	t->l4proto = nftnl_obj_get_u8(o, NFTNL_OBJ_CT_TIMEOUT_L4PROTO);
	t->l3proto = nftnl_obj_is_set(o, NFTNL_OBJ_CT_TIMEOUT_L3PROTO)
			 ? (uint8_t)nftnl_obj_get_u16(o, NFTNL_OBJ_CT_TIMEOUT_L3PROTO)
			 : 0;
	arr = nftnl_obj_get_data(o, NFTNL_OBJ_CT_TIMEOUT_ARRAY, &len);
	if (arr && len >= sizeof(uint32_t)) {
		unsigned int n = len / sizeof(uint32_t);

		if (t->l4proto == IPPROTO_TCP) {
			for (unsigned int i = 0; i < n && i < sizeof(tcp_index); i++) {
				t->val[tcp_index[i]] = arr[i];
				t->given |= 1u << tcp_index[i];
			}
			/* timeouts[CTA_TIMEOUT_TCP_UNSPEC] = timeouts[..._SYN_SENT] */
			t->val[0] = t->val[1]; /* TCP_CONNTRACK_SYN_SENT */
		} else if (t->l4proto == IPPROTO_UDP || t->l4proto == IPPROTO_UDPLITE) {
			for (unsigned int i = 0; i < n && i < 2; i++) {
				t->val[i] = arr[i];
				t->given |= 1u << i;
			}
		}
	}
	t->id = atomic_fetch_add(&ct_timeout_ids, 1) + 1;
	return 0;
}

/*
 * The helpers the kernel here registers, by name, protocol and family
 * (nf_ct_helper_init calls of each nf_conntrack_*.c, nf_nat_snmp_basic's
 * snmp_trap), and the id of those nftdp runs (0: refused by name).
 */
#define HF_4 1u
#define HF_6 2u
static const struct kernel_helper {
	const char *name;
	uint8_t l4proto;
	uint8_t families;
	uint8_t helper;
} kernel_helpers[] = {
    {"ftp", IPPROTO_TCP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_FTP},
    {"tftp", IPPROTO_UDP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_TFTP},
    {"irc", IPPROTO_TCP, HF_4, NFTDP_VM_CT_HELPER_IRC},
    {"amanda", IPPROTO_UDP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_AMANDA},
    {"netbios-ns", IPPROTO_UDP, HF_4, NFTDP_VM_CT_HELPER_NETBIOS_NS},
    {"snmp", IPPROTO_UDP, HF_4, NFTDP_VM_CT_HELPER_SNMP},
    {"snmp_trap", IPPROTO_UDP, HF_4, NFTDP_VM_CT_HELPER_SNMP_TRAP},
    {"pptp", IPPROTO_TCP, HF_4, NFTDP_VM_CT_HELPER_PPTP},
    {"sip", IPPROTO_UDP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_SIP},
    {"sip", IPPROTO_TCP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_SIP},
    {"sane", IPPROTO_TCP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_SANE},
    {"RAS", IPPROTO_UDP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_RAS},
    {"Q.931", IPPROTO_TCP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_Q931},
    /* registered for UDP, though it reads TPKTs of the TCP connections
     * Q.931 expects (on UDP it reads the datagram as a TCP header, as
     * the kernel's h245_help does) */
    {"H.245", IPPROTO_UDP, HF_4 | HF_6, NFTDP_VM_CT_HELPER_H245},
};

/* the kernel's helper of this name and protocol (one at most), or NULL */
static const struct kernel_helper *kernel_helper(const char *name, uint8_t l4proto)
{
	for (size_t i = 0; i < sizeof(kernel_helpers) / sizeof(kernel_helpers[0]); i++)
		if (kernel_helpers[i].l4proto == l4proto && !strcmp(kernel_helpers[i].name, name))
			return &kernel_helpers[i];
	return NULL;
}

uint8_t nftdp_vm_ct_helper_find(const char *name, uint8_t nfproto, uint8_t l4proto)
{
	unsigned int fam = nfproto == NFPROTO_IPV4 ? HF_4 : nfproto == NFPROTO_IPV6 ? HF_6 : 0;
	const struct kernel_helper *k = kernel_helper(name, l4proto);

	return k && (k->families & fam) ? k->helper : NFTDP_VM_CT_HELPER_NONE;
}

unsigned int nftdp_vm_ct_helper_families(const char *name, uint8_t l4proto)
{
	const struct kernel_helper *k = kernel_helper(name, l4proto);

	return k ? k->families : 0;
}

/*
 * nft_ct_helper_obj_init: nf_conntrack_helper_try_module_get(name, family,
 * l4proto) for each family the object serves; -ENOENT when none has it.
 * The helpers the kernel has that nftdp does not run are refused by name.
 */
static int ct_helper_parse(struct nftnl_obj *o, struct nftdp_vm_ct_helper *h, char *msg,
			   size_t msglen)
{
	const struct kernel_helper *k;
	const char *name;
	uint16_t family;
	unsigned int fam;

	memset(h, 0, sizeof(*h));
	if (!nftnl_obj_is_set(o, NFTNL_OBJ_CT_HELPER_NAME) ||
	    !nftnl_obj_is_set(o, NFTNL_OBJ_CT_HELPER_L4PROTO))
		return -EINVAL;
	name = nftnl_obj_get_str(o, NFTNL_OBJ_CT_HELPER_NAME);
	h->l4proto = nftnl_obj_get_u8(o, NFTNL_OBJ_CT_HELPER_L4PROTO);
	family = nftnl_obj_is_set(o, NFTNL_OBJ_CT_HELPER_L3PROTO)
		     ? nftnl_obj_get_u16(o, NFTNL_OBJ_CT_HELPER_L3PROTO)
		     : NFPROTO_INET;
	k = kernel_helper(name, h->l4proto);
	fam = k ? k->families : 0;
	h->v4 = (family == NFPROTO_IPV4 || family == NFPROTO_INET) && (fam & HF_4);
	h->v6 = (family == NFPROTO_IPV6 || family == NFPROTO_INET) && (fam & HF_6);
	if (!h->v4 && !h->v6) {
		snprintf(msg, msglen, "ct helper %s: no such helper for protocol %u", name,
			 h->l4proto);
		return -ENOENT;
	}
	h->helper = k->helper;
	if (!h->helper) {
		snprintf(msg, msglen, "ct helper %s: not supported by nftdp", name);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* nft_ct_expect_obj_init (control/ checked the families and put the
 * l3proto in) */
static int ct_expect_parse(struct nftnl_obj *o, struct nftdp_vm_ct_expect *x)
{
	memset(x, 0, sizeof(*x));
	if (!nftnl_obj_is_set(o, NFTNL_OBJ_CT_EXPECT_L4PROTO) ||
	    !nftnl_obj_is_set(o, NFTNL_OBJ_CT_EXPECT_DPORT) ||
	    !nftnl_obj_is_set(o, NFTNL_OBJ_CT_EXPECT_TIMEOUT) ||
	    !nftnl_obj_is_set(o, NFTNL_OBJ_CT_EXPECT_SIZE))
		return -EINVAL;
	x->l3proto = nftnl_obj_is_set(o, NFTNL_OBJ_CT_EXPECT_L3PROTO)
			 ? (uint8_t)nftnl_obj_get_u16(o, NFTNL_OBJ_CT_EXPECT_L3PROTO)
			 : NFPROTO_INET;
	x->l4proto = nftnl_obj_get_u8(o, NFTNL_OBJ_CT_EXPECT_L4PROTO);
	x->dport_be = htons(nftnl_obj_get_u16(o, NFTNL_OBJ_CT_EXPECT_DPORT));
	x->timeout = nftnl_obj_get_u32(o, NFTNL_OBJ_CT_EXPECT_TIMEOUT);
	x->size = nftnl_obj_get_u8(o, NFTNL_OBJ_CT_EXPECT_SIZE);
	return 0;
}

int nftdp_vm_obj_create(const struct nftnl_obj *co, struct nftdp_vm_state *st,
			struct nftdp_vm_error *err, struct nftdp_vm_obj **out)
{
	/* libnftnl 1.2.4's object getters take a non-const pointer */
	struct nftnl_obj *o = (struct nftnl_obj *)(uintptr_t)co;
	struct nftdp_vm_obj *obj;
	struct nftdp_vm_cell *c;
	const char *table, *name;
	char key[600];
	bool created;
	uint32_t type, family;
	int rc;

	if (err) {
		memset(err, 0, sizeof(*err));
		err->expr_index = -1;
	}
	if (!o || !st || !nftnl_obj_is_set(o, NFTNL_OBJ_TABLE) ||
	    !nftnl_obj_is_set(o, NFTNL_OBJ_NAME) || !nftnl_obj_is_set(o, NFTNL_OBJ_TYPE))
		return -EINVAL;
	table = nftnl_obj_get_str(o, NFTNL_OBJ_TABLE);
	name = nftnl_obj_get_str(o, NFTNL_OBJ_NAME);
	type = nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE);
	family = nftnl_obj_is_set(o, NFTNL_OBJ_FAMILY) ? nftnl_obj_get_u32(o, NFTNL_OBJ_FAMILY) : 0;
	if (!obj_type_ok(type)) {
		if (err) {
			err->err = -EOPNOTSUPP;
			if (obj_type_name(type))
				snprintf(err->msg, sizeof(err->msg),
					 "object type %u (%s): not supported by nftdp", type,
					 obj_type_name(type));
			else
				snprintf(err->msg, sizeof(err->msg),
					 "object type %u: not supported by nftdp", type);
		}
		return -EOPNOTSUPP;
	}
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return -ENOMEM;
	obj->type = type;
	if (type == NFT_OBJECT_CT_TIMEOUT) {
		/* stateless: no slot, nothing to keep across generations */
		rc = ct_timeout_parse(o, &obj->ct_timeout);
		if (rc < 0)
			goto err_params;
		*out = obj;
		return 0;
	}
	if (type == NFT_OBJECT_CT_EXPECT) {
		rc = ct_expect_parse(o, &obj->ct_expect);
		if (rc < 0)
			goto err_params;
		*out = obj;
		return 0;
	}
	if (type == NFT_OBJECT_SYNPROXY) {
		/* nft_synproxy_obj_init */
		rc = nftdp_vm_synproxy_params(nftnl_obj_is_set(o, NFTNL_OBJ_SYNPROXY_MSS)
						  ? nftnl_obj_get_u16(o, NFTNL_OBJ_SYNPROXY_MSS)
						  : 0,
					      nftnl_obj_is_set(o, NFTNL_OBJ_SYNPROXY_WSCALE)
						  ? nftnl_obj_get_u8(o, NFTNL_OBJ_SYNPROXY_WSCALE)
						  : 0,
					      nftnl_obj_is_set(o, NFTNL_OBJ_SYNPROXY_FLAGS)
						  ? nftnl_obj_get_u32(o, NFTNL_OBJ_SYNPROXY_FLAGS)
						  : 0,
					      &obj->synproxy);
		if (rc < 0)
			goto err_params;
		*out = obj;
		return 0;
	}
	if (type == NFT_OBJECT_CT_HELPER) {
		char msg[NFTDP_VM_ERRLEN];

		rc = ct_helper_parse(o, &obj->ct_helper, msg, sizeof(msg));
		if (rc == -EINVAL)
			goto err_params;
		if (rc < 0) {
			if (err) {
				err->err = rc;
				snprintf(err->msg, sizeof(err->msg), "%s", msg);
			}
			free(obj);
			return rc;
		}
		*out = obj;
		return 0;
	}
	obj->slot_kind = type == NFT_OBJECT_COUNTER ? NFTDP_VM_SLOT_COUNTER : NFTDP_VM_SLOT_CELL;
	if (type == NFT_OBJECT_LIMIT) {
		uint32_t ltype = nftnl_obj_is_set(o, NFTNL_OBJ_LIMIT_TYPE)
				     ? nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_TYPE)
				     : NFT_LIMIT_PKTS;
		uint32_t flags = nftnl_obj_is_set(o, NFTNL_OBJ_LIMIT_FLAGS)
				     ? nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_FLAGS)
				     : 0;

		rc = -EINVAL;
		if (ltype > NFT_LIMIT_PKT_BYTES || (flags & ~(uint32_t)NFT_LIMIT_F_INV) ||
		    !nftnl_obj_is_set(o, NFTNL_OBJ_LIMIT_RATE) ||
		    !nftnl_obj_is_set(o, NFTNL_OBJ_LIMIT_UNIT))
			goto err_params;
		obj->rate = nftnl_obj_get_u64(o, NFTNL_OBJ_LIMIT_RATE);
		rc = nftdp_vm_limit_params(obj->rate, nftnl_obj_get_u64(o, NFTNL_OBJ_LIMIT_UNIT),
					   nftnl_obj_is_set(o, NFTNL_OBJ_LIMIT_BURST)
					       ? nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_BURST)
					       : 0,
					   ltype, &obj->tokens_max, &obj->nsecs, &obj->cost);
		if (rc < 0)
			goto err_params;
		obj->bytes_mode = ltype == NFT_LIMIT_PKT_BYTES;
		obj->invert = flags & NFT_LIMIT_F_INV;
	} else if (type == NFT_OBJECT_QUOTA) {
		uint32_t flags = nftnl_obj_is_set(o, NFTNL_OBJ_QUOTA_FLAGS)
				     ? nftnl_obj_get_u32(o, NFTNL_OBJ_QUOTA_FLAGS)
				     : 0;

		rc = -EINVAL;
		if (flags & ~(uint32_t)(NFT_QUOTA_F_INV | NFT_QUOTA_F_DEPLETED))
			goto err_params;
		obj->quota_bytes = nftnl_obj_get_u64(o, NFTNL_OBJ_QUOTA_BYTES);
		rc = -EOVERFLOW;
		if (obj->quota_bytes > INT64_MAX)
			goto err_params;
		obj->invert = flags & NFT_QUOTA_F_INV;
	}
	snprintf(key, sizeof(key), "o\n%u\n%s\n%s\n%u", family, table, name, type);
	rc = nftdp_vm_state_get_slot(st, key, obj->slot_kind, &obj->slot, &created);
	if (rc < 0)
		goto err_params;
	obj->key = strdup(key);
	rc = -ENOMEM;
	if (!obj->key)
		goto err_params;
	if (type == NFT_OBJECT_COUNTER) {
		if (created) {
			struct nftdp_vm_counter *ctr = nftdp_vm_counter_slot(st, 0, obj->slot);

			ctr->packets = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_PKTS);
			ctr->bytes = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_BYTES);
		}
	} else {
		c = &st->cells[obj->slot];
		c->type = type;
		if (type == NFT_OBJECT_QUOTA) {
			c->quota.bytes = obj->quota_bytes;
			if (created)
				atomic_store(&c->quota.consumed,
					     nftnl_obj_get_u64(o, NFTNL_OBJ_QUOTA_CONSUMED));
		}
	}
	*out = obj;
	return 0;

err_params:
	if (err) {
		err->err = rc;
		snprintf(err->msg, sizeof(err->msg), "object %s: invalid parameters", name);
	}
	free(obj);
	return rc;
}

void nftdp_vm_obj_destroy(struct nftdp_vm_obj *obj)
{
	if (obj)
		free(obj->key);
	free(obj);
}

int nftdp_vm_obj_keep(struct nftdp_vm_state *st, const struct nftdp_vm_obj *obj)
{
	uint32_t slot;
	bool created;
	int rc;

	if (!obj->key)
		return 0; /* no state (ct timeout) */
	rc = nftdp_vm_state_get_slot(st, obj->key, obj->slot_kind, &slot, &created);
	if (rc < 0)
		return rc;
	/* the slot is the object's for as long as some generation keeps it */
	return slot == obj->slot ? 0 : -ESTALE;
}

struct objref_priv {
	const struct nftdp_vm_obj *obj; /* named form */
	struct nftdp_set *set;		/* map form */
	const struct nftdp_vm_set_ops *ops;
	uint8_t sreg;
};
NFTDP_VM_PRIV_CHECK(struct objref_priv);

static void objref_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct objref_priv *p = (const void *)op->priv;

	nftdp_vm_obj_eval(p->obj, regs, pkt, ctx);
}

static void objref_map_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct objref_priv *p = (const void *)op->priv;
	const void *data = NULL;
	const struct nftdp_vm_obj *obj;

	if (!vm_set_lookup(p->ops, p->set, &regs->data[p->sreg], &data, ctx) || !data) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	memcpy(&obj, data, sizeof(obj));
	if (!obj) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	nftdp_vm_obj_eval(obj, regs, pkt, ctx);
}

static int objref_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct objref_priv *p = priv;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_OBJREF_IMM_NAME);
	uint32_t type = nftdp_vm_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE);

	if (!obj_type_ok(type))
		return nftdp_vm_errf(
		    cc, -EOPNOTSUPP, "objref: object type %u%s%s%s not supported by nftdp", type,
		    obj_type_name(type) ? " (" : "", obj_type_name(type) ? obj_type_name(type) : "",
		    obj_type_name(type) ? ")" : "");
	if (cc->res && cc->res->obj)
		p->obj = cc->res->obj(cc->res->opaque, cc->chain->table, name, type);
	if (!p->obj)
		return nftdp_vm_errf(cc, -ENOENT, "objref: object %s not found", name);
	cc->needs_synproxy = type == NFT_OBJECT_SYNPROXY;
	/* h323's call forwarding looks up routes (callforward_filter): the
	 * Q.931 helper, or RAS, whose expectations give calls Q.931 */
	if (type == NFT_OBJECT_CT_HELPER && (p->obj->ct_helper.helper == NFTDP_VM_CT_HELPER_Q931 ||
					     p->obj->ct_helper.helper == NFTDP_VM_CT_HELPER_RAS))
		cc->needs_routes = true;
	if (type == NFT_OBJECT_SYNPROXY)
		return nftdp_vm_synproxy_host_check(cc, "synproxy object");
	return 0;
}

static int objref_map_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct objref_priv *p = priv;
	struct nftdp_vm_set_info si;
	int rc;

	rc = nftdp_vm_resolve_set(cc, e, NFTNL_EXPR_OBJREF_SET_NAME, NFTNL_EXPR_OBJREF_SET_ID, &si);
	if (rc < 0)
		return rc;
	if (!(si.flags & NFT_SET_OBJECT))
		return nftdp_vm_errf(cc, -EINVAL, "objref: set is no object map");
	if (!obj_type_ok(si.objtype))
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "objref: object type %u not supported by nftdp", si.objtype);
	if (si.objtype == NFT_OBJECT_SYNPROXY) {
		rc = nftdp_vm_synproxy_host_check(cc, "synproxy object map");
		if (rc < 0)
			return rc;
	}
	p->set = si.set;
	p->ops = si.ops;
	cc->needs_synproxy = si.objtype == NFT_OBJECT_SYNPROXY;
	/* a map of helpers may give Q.931 (call forwarding's routes) */
	if (si.objtype == NFT_OBJECT_CT_HELPER)
		cc->needs_routes = true;
	return nftdp_vm_parse_reg_load(cc, e, NFTNL_EXPR_OBJREF_SET_SREG, &p->sreg, si.klen);
}

/* a named counter charges the same slot on a flow-cache hit; quota and
 * limit change their answer over time */
static uint8_t objref_flow_level(const void *priv)
{
	const struct objref_priv *p = priv;

	return p->obj && p->obj->type == NFT_OBJECT_COUNTER ? NFTDP_VM_FLOW_LVL_ALWAYS
							    : NFTDP_VM_FLOW_LVL_NEVER;
}

static const struct nftdp_vm_expr_ops objref_ops = {
    .name = "objref",
    .size = sizeof(struct objref_priv),
    .init = objref_init,
    .eval = objref_eval,
    .flow = NFTDP_VM_FLOW_OBJREF,
    .flow_level = objref_flow_level,
};
static const struct nftdp_vm_expr_ops objref_map_ops = {
    .name = "objref",
    .size = sizeof(struct objref_priv),
    .init = objref_map_init,
    .eval = objref_map_eval,
};

/* nft_objref_select_ops */
static const struct nftdp_vm_expr_ops *objref_select_ops(struct nftdp_vm_cctx *cc,
							 const struct nftnl_expr *e)
{
	if (nftdp_vm_attr(e, NFTNL_EXPR_OBJREF_SET_SREG) &&
	    (nftdp_vm_attr(e, NFTNL_EXPR_OBJREF_SET_NAME) ||
	     nftdp_vm_attr(e, NFTNL_EXPR_OBJREF_SET_ID)))
		return &objref_map_ops;
	if (nftdp_vm_attr(e, NFTNL_EXPR_OBJREF_IMM_NAME) &&
	    nftdp_vm_attr(e, NFTNL_EXPR_OBJREF_IMM_TYPE))
		return &objref_ops;
	nftdp_vm_errf(cc, -EINVAL, "objref: neither name nor map");
	return NULL;
}

const struct nftdp_vm_expr_type nftdp_vm_expr_objref = {
    .name = "objref",
    .select_ops = objref_select_ops,
};
