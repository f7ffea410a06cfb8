// SPDX-License-Identifier: BSD-3-Clause
/*
 * The recent match (xt_recent.c, rev 0 and 1): lists of addresses with
 * the times they were seen, named and shared by every rule naming them
 * (recent_table_lookup: by name, either family). A list holds at most
 * ip_list_tot (100) addresses, the least recently updated one making room
 * for a new one, and ip_pkt_list_tot (20, rounded up to 32) stamps each,
 * the module parameters' defaults. No /proc/net/xt_recent: lists are not
 * read or written from outside. Workers update a list with atomics, never
 * a lock: two workers on one address at once may each keep a stamp in
 * the same slot or see the other's half done, where the kernel serialises
 * them (recent_lock).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h> /* before libnftnl: it uses FILE */
#include <stdlib.h>

#include <libnftnl/expr.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_recent.h>

#include "compat.h"

#define XT_HZ 250u /* as expr_compat_rate.c: the kernel's CONFIG_HZ */
#define IP_LIST_TOT 100u
#define IP_PKT_LIST_TOT 20u
#define XT_RECENT_MAX_NSTAMPS 256u /* xt_recent.c: stamps an entry can hold */
#define RC_SLOTS 256u		   /* a power of two, twice ip_list_tot and more */
#define RC_WINDOW 16u		   /* an address lives in one of 16 slots from its home */

enum { RC_EMPTY = 0, RC_BUSY = 1, RC_READY = 2 };

struct rc_ent {
	alignas(64) _Atomic uint64_t state; /* version << 2 | RC_* */
	uint32_t addr[4];
	uint8_t family;
	_Atomic uint8_t ttl;
	_Atomic uint64_t lru; /* the table's sequence at the last init or update */
	_Atomic uint32_t index, nstamps;
	_Atomic uint32_t stamps[XT_RECENT_MAX_NSTAMPS]; /* jiffies, low 32 bits */
};

struct rc_table {
	struct rc_table *next;
	char name[XT_RECENT_NAME_LEN];
	uint32_t use;
	uint32_t mask[4]; /* the first rule's --mask */
	_Atomic uint32_t nstamps_max_mask;
	_Atomic uint32_t entries;
	_Atomic uint64_t seq;
	uint32_t seed;
	struct rc_ent *ent;
};

static pthread_mutex_t rc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rc_table *rc_tables;

struct rc_priv {
	struct rc_table *t;
	uint32_t seconds, hit_count;
	uint8_t check_set, side;
	bool invert;
};
NFTDP_VM_PRIV_CHECK(struct rc_priv);

static uint32_t roundup_pow2(uint32_t x)
{
	uint32_t r = 1;

	while (r < x)
		r <<= 1;
	return r;
}

/* recent_table_flush: every entry goes */
static void rc_flush(struct rc_table *t)
{
	for (uint32_t i = 0; i < RC_SLOTS; i++) {
		uint64_t st = atomic_load_explicit(&t->ent[i].state, memory_order_relaxed);

		if ((st & 3) == RC_READY &&
		    atomic_compare_exchange_strong(&t->ent[i].state, &st, (st & ~3ull) + 4))
			atomic_fetch_sub(&t->entries, 1);
	}
}

/* recent_mt_check */
static int recent_check(struct nftdp_vm_cctx *cc, const struct xt_recent_mtinfo_v1 *i, void *priv)
{
	uint8_t ops =
	    i->check_set & (XT_RECENT_SET | XT_RECENT_REMOVE | XT_RECENT_CHECK | XT_RECENT_UPDATE);
	struct rc_priv *p = priv;
	struct rc_table *t;
	uint32_t nstamp_mask;

	if (i->check_set & ~XT_RECENT_VALID_FLAGS)
		return nftdp_vm_errf(cc, -EINVAL, "match recent: unsupported flags 0x%x",
				     i->check_set);
	if (__builtin_popcount(ops) != 1)
		return nftdp_vm_errf(cc, -EINVAL,
				     "match recent: one of --set, --rcheck, --update, --remove");
	if ((i->check_set & (XT_RECENT_SET | XT_RECENT_REMOVE)) &&
	    (i->seconds || i->hit_count || (i->check_set & XT_RECENT_MODIFIERS)))
		return nftdp_vm_errf(cc, -EINVAL, "match recent: --set/--remove take no options");
	if ((i->check_set & XT_RECENT_REAP) && !i->seconds)
		return nftdp_vm_errf(cc, -EINVAL, "match recent: --reap needs --seconds");
	if (i->hit_count >= XT_RECENT_MAX_NSTAMPS)
		return nftdp_vm_errf(cc, -EINVAL, "match recent: hitcount %u too large",
				     i->hit_count);
	if (i->name[0] == '\0' || strcmp(i->name, ".") == 0 || strcmp(i->name, "..") == 0 ||
	    strchr(i->name, '/'))
		return nftdp_vm_errf(cc, -EINVAL, "match recent: bad name");
	if (strnlen(i->name, sizeof(i->name)) == sizeof(i->name))
		return nftdp_vm_errf(cc, -ENAMETOOLONG, "match recent: name too long");
	if (i->hit_count < IP_PKT_LIST_TOT)
		nstamp_mask = roundup_pow2(IP_PKT_LIST_TOT) - 1;
	else if (i->hit_count)
		nstamp_mask = roundup_pow2(i->hit_count) - 1;
	else
		nstamp_mask = 32 - 1;

	pthread_mutex_lock(&rc_lock);
	for (t = rc_tables; t; t = t->next)
		if (strcmp(t->name, i->name) == 0)
			break;
	if (t) {
		if (nstamp_mask > t->nstamps_max_mask) {
			rc_flush(t);
			t->nstamps_max_mask = nstamp_mask;
		}
		t->use++;
	} else {
		t = calloc(1, sizeof(*t));
		if (t)
			t->ent = calloc(RC_SLOTS, sizeof(*t->ent));
		if (!t || !t->ent) {
			free(t);
			pthread_mutex_unlock(&rc_lock);
			return nftdp_vm_errf(cc, -ENOMEM, "match recent: no memory");
		}
		snprintf(t->name, sizeof(t->name), "%s", i->name);
		memcpy(t->mask, &i->mask, sizeof(t->mask));
		t->use = 1;
		t->nstamps_max_mask = nstamp_mask;
		t->seed = (uint32_t)random();
		t->next = rc_tables;
		rc_tables = t;
	}
	pthread_mutex_unlock(&rc_lock);
	p->t = t;
	p->seconds = i->seconds;
	p->hit_count = i->hit_count;
	p->check_set = i->check_set;
	p->side = i->side;
	p->invert = i->invert;
	return 0;
}

int nftdp_vm_compat_recent0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	struct xt_recent_mtinfo_v1 i;

	/* recent_mt_check_v0: revision 0 masks nothing */
	memcpy(&i, par->info, sizeof(struct xt_recent_mtinfo));
	memset(&i.mask, 0xff, sizeof(i.mask));
	return recent_check(cc, &i, priv);
}

int nftdp_vm_compat_recent1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv)
{
	return recent_check(cc, par->info, priv);
}

/* recent_mt_destroy: after the grace period */
static void recent_destroy(void *priv)
{
	struct rc_priv *p = priv;
	struct rc_table **pp;

	if (!p->t)
		return;
	pthread_mutex_lock(&rc_lock);
	if (--p->t->use == 0) {
		for (pp = &rc_tables; *pp && *pp != p->t; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = p->t->next;
		free(p->t->ent);
		free(p->t);
	}
	pthread_mutex_unlock(&rc_lock);
	p->t = NULL;
}

static void rc_remove(struct rc_table *t, struct rc_ent *e)
{
	uint64_t st = atomic_load_explicit(&e->state, memory_order_relaxed);

	if ((st & 3) == RC_READY &&
	    atomic_compare_exchange_strong(&e->state, &st, (st & ~3ull) + 4))
		atomic_fetch_sub(&t->entries, 1);
}

/* the head of the kernel's lru_list: the least recently updated entry */
static struct rc_ent *rc_oldest(struct rc_table *t)
{
	struct rc_ent *old = NULL;
	uint64_t min = UINT64_MAX;

	for (uint32_t i = 0; i < RC_SLOTS; i++) {
		struct rc_ent *e = &t->ent[i];
		uint64_t lru;

		if ((atomic_load_explicit(&e->state, memory_order_acquire) & 3) != RC_READY)
			continue;
		lru = atomic_load_explicit(&e->lru, memory_order_relaxed);
		if (lru < min) {
			min = lru;
			old = e;
		}
	}
	return old;
}

/* recent_entry_lookup: address and family, and the TTL if both have one */
static struct rc_ent *rc_lookup(struct rc_table *t, const uint32_t *addr, uint8_t family,
				uint8_t ttl, uint32_t h)
{
	for (uint32_t i = 0; i < RC_WINDOW; i++) {
		struct rc_ent *e = &t->ent[(h + i) & (RC_SLOTS - 1)];
		uint64_t st = atomic_load_explicit(&e->state, memory_order_acquire);
		uint8_t ettl;

		if ((st & 3) != RC_READY || e->family != family || memcmp(e->addr, addr, 16) != 0)
			continue;
		ettl = atomic_load_explicit(&e->ttl, memory_order_relaxed);
		if ((ttl == ettl || ttl == 0 || ettl == 0) &&
		    atomic_load_explicit(&e->state, memory_order_acquire) == st)
			return e;
	}
	return NULL;
}

/* recent_entry_init: NULL when no slot is free (the kernel's kmalloc
 * failing: hotdrop) */
static struct rc_ent *rc_init(struct rc_table *t, const uint32_t *addr, uint8_t family, uint8_t ttl,
			      uint32_t h, uint32_t now)
{
	if (atomic_load_explicit(&t->entries, memory_order_relaxed) >= IP_LIST_TOT) {
		struct rc_ent *old = rc_oldest(t);

		if (old)
			rc_remove(t, old);
	}
	for (uint32_t i = 0; i < RC_WINDOW; i++) {
		struct rc_ent *e = &t->ent[(h + i) & (RC_SLOTS - 1)];
		uint64_t st = atomic_load_explicit(&e->state, memory_order_relaxed);

		if ((st & 3) != RC_EMPTY ||
		    !atomic_compare_exchange_strong_explicit(
			&e->state, &st, st | RC_BUSY, memory_order_acquire, memory_order_relaxed))
			continue;
		memcpy(e->addr, addr, 16);
		e->family = family;
		atomic_store_explicit(&e->ttl, ttl, memory_order_relaxed);
		atomic_store_explicit(&e->stamps[0], now, memory_order_relaxed);
		atomic_store_explicit(&e->nstamps, 1, memory_order_relaxed);
		atomic_store_explicit(&e->index, 1, memory_order_relaxed);
		atomic_store_explicit(&e->lru, atomic_fetch_add(&t->seq, 1) + 1,
				      memory_order_relaxed);
		atomic_fetch_add(&t->entries, 1);
		atomic_store_explicit(&e->state, (st & ~3ull) + 4 + RC_READY, memory_order_release);
		return e;
	}
	return NULL;
}

/* recent_entry_update */
static void rc_update(struct rc_table *t, struct rc_ent *e, uint32_t now)
{
	uint32_t mask = atomic_load_explicit(&t->nstamps_max_mask, memory_order_relaxed);
	uint32_t idx = atomic_load_explicit(&e->index, memory_order_relaxed) & mask, n;

	atomic_store_explicit(&e->stamps[idx], now, memory_order_relaxed);
	atomic_store_explicit(&e->index, idx + 1, memory_order_relaxed);
	n = atomic_load_explicit(&e->nstamps, memory_order_relaxed);
	if (idx + 1 > n)
		atomic_store_explicit(&e->nstamps, idx + 1, memory_order_relaxed);
	atomic_store_explicit(&e->lru, atomic_fetch_add(&t->seq, 1) + 1, memory_order_relaxed);
}

/* time_after(a, b) on 32 bits of jiffies */
static bool after32(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}

/* recent_mt */
static void recent_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct rc_priv *p = (const void *)op->priv;
	struct rc_table *t = p->t;
	uint32_t now = (uint32_t)(ctx->now_ns / (1000000000ull / XT_HZ));
	bool v4 = pkt->nfproto == NFPROTO_IPV4, ret = p->invert;
	uint32_t addr[4] = {0, 0, 0, 0}, h;
	uint8_t ttl = 0;
	struct rc_ent *e;

	if (v4) {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + (p->side == XT_RECENT_DEST ? 16 : 12), addr,
				   4);
		nftdp_vm_copy_bits(pkt, pkt->nh_off + 8, &ttl, 1);
	} else {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + (p->side == XT_RECENT_DEST ? 24 : 8), addr,
				   16);
		nftdp_vm_copy_bits(pkt, pkt->nh_off + 7, &ttl, 1);
	}
	/* the TTL as seen before forwarding: an output device and no local
	 * socket (nftdp has none) */
	if (pkt->hook == NF_INET_FORWARD || pkt->hook == NF_INET_POST_ROUTING ||
	    pkt->hook == NF_INET_LOCAL_OUT)
		ttl++;
	for (int i = 0; i < 4; i++)
		addr[i] &= t->mask[i]; /* nf_inet_addr_mask */
	h = nftdp_vm_jhash(addr, 16, t->seed ^ pkt->nfproto);
	e = rc_lookup(t, addr, pkt->nfproto, (p->check_set & XT_RECENT_TTL) ? ttl : 0, h);
	if (!e) {
		if (!(p->check_set & XT_RECENT_SET))
			goto out;
		if (!rc_init(t, addr, pkt->nfproto, ttl, h, now)) {
			regs->verdict.code = NF_DROP; /* hotdrop */
			return;
		}
		ret = !ret;
		goto out;
	}
	if (p->check_set & XT_RECENT_SET) {
		ret = !ret;
	} else if (p->check_set & XT_RECENT_REMOVE) {
		rc_remove(t, e);
		ret = !ret;
	} else if (p->check_set & (XT_RECENT_CHECK | XT_RECENT_UPDATE)) {
		uint32_t time = now - p->seconds * XT_HZ, hits = 0;
		uint32_t n = atomic_load_explicit(&e->nstamps, memory_order_relaxed);

		for (uint32_t i = 0; i < n && i < XT_RECENT_MAX_NSTAMPS; i++) {
			if (p->seconds && after32(time, atomic_load_explicit(&e->stamps[i],
									     memory_order_relaxed)))
				continue;
			if (!p->hit_count || ++hits >= p->hit_count) {
				ret = !ret;
				break;
			}
		}
		if (p->check_set & XT_RECENT_REAP) { /* recent_entry_reap */
			struct rc_ent *old = rc_oldest(t);
			uint32_t last;

			if (old && !(old == e && (p->check_set & XT_RECENT_UPDATE) && ret)) {
				last = atomic_load_explicit(&old->index, memory_order_relaxed) - 1;
				if (after32(time,
					    atomic_load_explicit(
						&old->stamps[last & (XT_RECENT_MAX_NSTAMPS - 1)],
						memory_order_relaxed)))
					rc_remove(t, old);
			}
		}
	}
	if ((p->check_set & XT_RECENT_SET) || ((p->check_set & XT_RECENT_UPDATE) && ret)) {
		rc_update(t, e, now);
		atomic_store_explicit(&e->ttl, ttl, memory_order_relaxed);
	}
out:
	compat_match_result(regs, ret);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_recent_ops = {
    .name = "match recent", /* no .flow: packets change the lists */
    .size = sizeof(struct rc_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = recent_eval,
    .destroy = recent_destroy,
};
