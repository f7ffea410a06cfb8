// SPDX-License-Identifier: BSD-3-Clause
/*
 * osf: passive OS fingerprinting of TCP SYNs (nft_osf.c over
 * nfnetlink_osf.c's nf_osf_find and nf_osf_match_one). The fingerprint
 * database is the kernel's struct nf_osf_user_finger records, in two lists
 * by the don't-fragment bit, first match wins. The control thread builds a
 * new immutable database for each change (nftdp_vm_osf_db_add/_remove, as
 * NFNL_SUBSYS_OSF's OSF_MSG_ADD/OSF_MSG_REMOVE) and publishes it with one
 * pointer store; workers read the pointer once per SYN. With no database
 * (none loaded, the kernel's empty lists) every SYN reads "unknown".
 */
#include <stdio.h> /* before libnftnl: it uses FILE */
#include <stdlib.h>

#include <libnftnl/expr.h>
#include <linux/netfilter/nfnetlink_osf.h>

#include "vm_priv.h"

#define OSF_SMART_MSS_1 1460
#define OSF_SMART_MSS_2 1448

struct osf_priv {
	uint8_t dreg;
	uint8_t ttl; /* NF_OSF_TTL_TRUE, _LESS, _NOCHECK */
	uint32_t flags;
};
NFTDP_VM_PRIV_CHECK(struct osf_priv);

/* the database workers read: n[df] fingerprints at f[df] */
struct nftdp_vm_osf_db {
	uint32_t n[2];
	struct nf_osf_user_finger *f[2];
};

static struct nftdp_vm_osf_db *_Atomic osf_db;

/* what nf_osf_hdr_ctx_init takes from the SYN */
struct osf_ctx {
	uint16_t window, totlen;
	const uint8_t *optp;
	uint32_t optsize;
	uint8_t ttl;
};

/* nf_osf_ttl; "loose" (NF_OSF_TTL_LESS) also accepts an equal TTL from a
 * source on one of the host's networks, which a forwarded packet's
 * source never is in wire mode */
static bool osf_ttl(const struct osf_ctx *c, int ttl_check, uint8_t f_ttl)
{
	if (ttl_check == NF_OSF_TTL_TRUE)
		return c->ttl == f_ttl;
	if (ttl_check == NF_OSF_TTL_NOCHECK)
		return true;
	return c->ttl <= f_ttl;
}

/* nf_osf_match_one */
static bool osf_match_one(const struct nf_osf_user_finger *f, int ttl_check,
			  const struct osf_ctx *c)
{
	const uint8_t *optp = c->optp;
	uint32_t foptsize = 0, wss = f->wss.val;
	bool ok = true;
	uint16_t mss = 0;

	if (c->totlen != f->ss || !osf_ttl(c, ttl_check, f->ttl))
		return false;
	if (f->wss.wc >= OSF_WSS_MAX || f->opt_num > MAX_IPOPTLEN)
		return false;
	for (unsigned int i = 0; i < f->opt_num; i++)
		foptsize += f->opt[i].length;
	if (foptsize > MAX_IPOPTLEN || c->optsize > MAX_IPOPTLEN || c->optsize != foptsize)
		return false;
	for (unsigned int i = 0; i < f->opt_num; i++) {
		if (!optp || f->opt[i].kind != *optp) {
			ok = false;
			break;
		}
		if (*optp == OSFOPT_MSS && f->opt[i].length >= 4)
			mss = (uint16_t)(optp[2] << 8 | optp[3]);
		optp += f->opt[i].length;
	}
	if (!ok)
		return false;
	switch (f->wss.wc) {
	case OSF_WSS_PLAIN:
		return wss == 0 || c->window == wss;
	case OSF_WSS_MSS:
		return c->window == wss * mss || c->window == wss * OSF_SMART_MSS_1 ||
		       c->window == wss * OSF_SMART_MSS_2;
	case OSF_WSS_MTU:
		return c->window == wss * (mss + 40u) ||
		       c->window == wss * (OSF_SMART_MSS_1 + 40u) ||
		       c->window == wss * (OSF_SMART_MSS_2 + 40u);
	case OSF_WSS_MODULO:
		return wss && c->window % wss == 0;
	}
	return false;
}

const struct nf_osf_user_finger *nftdp_vm_osf_find(const uint8_t *ip, uint32_t len, int ttl_check)
{
	const struct nftdp_vm_osf_db *db = atomic_load_explicit(&osf_db, memory_order_acquire);
	struct osf_ctx c = {0};
	uint32_t ihl, doff;
	const uint8_t *tcp;
	bool df;

	if (len < 20 || (ihl = (ip[0] & 0xfu) * 4u) < 20 || len < ihl + 20)
		return NULL;
	tcp = ip + ihl;
	if (!(tcp[13] & 0x02)) /* SYN */
		return NULL;
	c.totlen = (uint16_t)(ip[2] << 8 | ip[3]);
	c.ttl = ip[8];
	df = ip[6] & 0x40;
	c.window = (uint16_t)(tcp[14] << 8 | tcp[15]);
	doff = (uint32_t)(tcp[12] >> 4) * 4u;
	if (doff > 20) {
		c.optsize = doff - 20;
		/* skb_header_pointer: options past the packet are no options */
		c.optp = len >= ihl + doff ? tcp + 20 : NULL;
	}
	if (!db)
		return NULL;
	for (uint32_t i = 0; i < db->n[df]; i++)
		if (osf_match_one(&db->f[df][i], ttl_check, &c))
			return &db->f[df][i];
	return NULL;
}

/* nfnl_osf_add_callback's checks of a record */
static int osf_finger_check(const struct nf_osf_user_finger *f)
{
	uint32_t tot = 0;

	if (f->opt_num > MAX_IPOPTLEN)
		return -EINVAL;
	if (!memchr(f->genre, 0, MAXGENRELEN) || !memchr(f->subtype, 0, MAXGENRELEN) ||
	    !memchr(f->version, 0, MAXGENRELEN))
		return -EINVAL;
	for (unsigned int i = 0; i < f->opt_num; i++) {
		if (!f->opt[i].length || f->opt[i].length > MAX_IPOPTLEN)
			return -EINVAL;
		tot += f->opt[i].length;
	}
	return tot > MAX_IPOPTLEN ? -EINVAL : 0;
}

/* the current database with f added (add) or removed, published; the old
 * one is handed back for the caller to free after a grace period */
static int osf_db_change(const struct nf_osf_user_finger *f, bool add, bool excl,
			 struct nftdp_vm_osf_db **old)
{
	struct nftdp_vm_osf_db *cur = atomic_load_explicit(&osf_db, memory_order_relaxed), *nd;
	unsigned int df = !!f->df;
	uint32_t n = cur ? cur->n[df] : 0, at = n;
	size_t fsz = sizeof(*f);

	*old = NULL;
	for (uint32_t i = 0; i < n; i++)
		if (memcmp(&cur->f[df][i], f, fsz) == 0) {
			at = i;
			break;
		}
	if (add && at < n)
		return excl ? -EEXIST : 0;
	if (!add && at == n)
		return -ENOENT;
	nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	for (unsigned int d = 0; d < 2; d++) {
		uint32_t m = cur ? cur->n[d] : 0;
		uint32_t want = d == df ? (add ? m + 1 : m - 1) : m;

		nd->f[d] = calloc(want ? want : 1, fsz);
		if (!nd->f[d])
			goto err;
		if (d != df) {
			if (m)
				memcpy(nd->f[d], cur->f[d], m * fsz);
		} else if (add) {
			if (m)
				memcpy(nd->f[d], cur->f[d], m * fsz);
			nd->f[d][m] = *f; /* list_add_tail_rcu */
		} else {
			memcpy(nd->f[d], cur->f[d], at * fsz);
			memcpy(nd->f[d] + at, cur->f[d] + at + 1, (m - at - 1) * fsz);
		}
		nd->n[d] = want;
	}
	atomic_store_explicit(&osf_db, nd, memory_order_release);
	*old = cur;
	return 0;
err:
	nftdp_vm_osf_db_free(nd);
	return -ENOMEM;
}

int nftdp_vm_osf_db_add(const struct nf_osf_user_finger *f, bool excl, struct nftdp_vm_osf_db **old)
{
	int rc = osf_finger_check(f);

	if (rc < 0) {
		*old = NULL;
		return rc;
	}
	return osf_db_change(f, true, excl, old);
}

int nftdp_vm_osf_db_remove(const struct nf_osf_user_finger *f, struct nftdp_vm_osf_db **old)
{
	return osf_db_change(f, false, false, old);
}

void nftdp_vm_osf_db_free(struct nftdp_vm_osf_db *db)
{
	if (!db)
		return;
	free(db->f[0]);
	free(db->f[1]);
	free(db);
}

/* snprintf(os_match, NFT_OSF_MAXGENRELEN, "%s:%s", genre, version) or
 * strscpy of the genre alone: cut to NFT_OSF_MAXGENRELEN - 1 bytes; dest
 * is zeroed (written without snprintf, whose truncation gcc flags) */
static void osf_match(char *dest, const char *genre, const char *version)
{
	size_t n = 0;

	/* each field stops at its NUL or its MAXGENRELEN bytes */
	for (size_t i = 0; i < MAXGENRELEN && genre[i] && n < NFT_OSF_MAXGENRELEN - 1; i++)
		dest[n++] = genre[i];
	if (!version)
		return;
	if (n < NFT_OSF_MAXGENRELEN - 1)
		dest[n++] = ':';
	for (size_t i = 0; i < MAXGENRELEN && version[i] && n < NFT_OSF_MAXGENRELEN - 1; i++)
		dest[n++] = version[i];
}

/* nft_osf_eval */
static void osf_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		     struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct osf_priv *p = (const void *)op->priv;
	char *dest = (char *)&regs->data[p->dreg];
	const struct nf_osf_user_finger *f;
	const uint8_t *tcp;

	(void)ctx;
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->l4proto != IPPROTO_TCP ||
	    pkt->nfproto != NFPROTO_IPV4 || pkt->len < pkt->th_off + 20) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	tcp = pkt->data + pkt->th_off;
	if (!(tcp[13] & 0x02)) {
		regs->verdict.code = NFT_BREAK;
		return;
	}
	memset(dest, 0, NFT_OSF_MAXGENRELEN);
	f = nftdp_vm_osf_find(pkt->data + pkt->nh_off, pkt->len - pkt->nh_off, p->ttl);
	if (!f)
		memcpy(dest, "unknown", 7);
	else
		osf_match(dest, f->genre, (p->flags & NFT_OSF_F_VERSION) ? f->version : NULL);
}

/* nft_osf_init */
static int osf_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv)
{
	struct osf_priv *p = priv;
	uint32_t flags = 0;

	if (!nftdp_vm_attr(e, NFTNL_EXPR_OSF_DREG))
		return nftdp_vm_errf(cc, -EINVAL, "osf: register missing");
	if (nftdp_vm_attr(e, NFTNL_EXPR_OSF_FLAGS)) {
		flags = nftdp_vm_u32(e, NFTNL_EXPR_OSF_FLAGS);
		if (flags != NFT_OSF_F_VERSION)
			return nftdp_vm_errf(cc, -EINVAL, "osf: flags 0x%x", flags);
	}
	p->flags = flags;
	if (nftdp_vm_attr(e, NFTNL_EXPR_OSF_TTL)) {
		p->ttl = nftnl_expr_get_u8(e, NFTNL_EXPR_OSF_TTL);
		if (p->ttl > 2)
			return nftdp_vm_errf(cc, -EINVAL, "osf: ttl %u", p->ttl);
	}
	return nftdp_vm_parse_reg_store(cc, e, NFTNL_EXPR_OSF_DREG, &p->dreg, NFT_DATA_VALUE,
					NFT_OSF_MAXGENRELEN);
}

const struct nftdp_vm_expr_type nftdp_vm_expr_osf = {
    .name = "osf",
    .ops =
	&(const struct nftdp_vm_expr_ops){
	    .name = "osf",
	    .size = sizeof(struct osf_priv),
	    .init = osf_init,
	    .eval = osf_eval,
	},
};
