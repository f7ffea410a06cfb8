// SPDX-License-Identifier: BSD-3-Clause
/*
 * The xtables rate matches: limit (xt_limit.c, rev 0) and hashlimit
 * (xt_hashlimit.c, rev 1, 2, 3). Both count credits in jiffies of the
 * kernel's HZ, as the kernel computes them, so the same packets pass.
 * limit keeps {prev, credit} of its rule in one shared cell word; a
 * hashlimit table is shared by every rule naming it (per name and family,
 * as htable_find_get), lives as long as a rule uses it, and holds at most
 * htable-max buckets. Workers update both with CAS, never a lock.
 * hashlimit counts packets (credits per jiffy, as limit), bytes
 * (--hashlimit-mode ... --hashlimit-upto 1kb/s: 16-byte chunks against a
 * second's worth of credit, refilled --hashlimit-burst times) or, rev 3
 * with --hashlimit-rate-match, packets or bytes per --hashlimit-rate-
 * interval against the rate of the interval before.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h> /* before libnftnl: it uses FILE */
#include <stdlib.h>

#include <libnftnl/expr.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_hashlimit.h>
#include <linux/netfilter/xt_limit.h>

#include "compat.h"

/* ---- jiffies ---- */

/* CONFIG_HZ of Debian's kernels (and of the 6.18 kernel nftdp is compared
 * against): credits are counted per jiffy, so HZ shows in which packets
 * pass */
#define XT_HZ 250u
#define XT_NSEC_PER_JIFFY (1000000000ull / XT_HZ)

static uint64_t jiffies_of(uint64_t now_ns)
{
	return now_ns / XT_NSEC_PER_JIFFY;
}

/* msecs_to_jiffies for HZ dividing 1000: rounded up */
static uint64_t msecs_to_jiffies(uint32_t ms)
{
	return ((uint64_t)ms + 1000 / XT_HZ - 1) / (1000 / XT_HZ);
}

/* the largest power of two not above x (POW2_BELOW32/64) */
static uint64_t pow2_below(uint64_t x)
{
	return x ? 1ull << (63 - __builtin_clzll(x)) : 0;
}

/* ---- limit (xt_limit.c) ---- */

/* MAX_CPJ: a rate as low as one a day fits 32 bits of credit */
#define LIMIT_CPJ ((uint32_t)pow2_below(0xFFFFFFFFu / (XT_HZ * 60 * 60 * 24)))

/* user2credits: the kernel's u32 arithmetic, overflow included */
static uint32_t limit_user2credits(uint32_t user)
{
	if (user > 0xFFFFFFFFu / (XT_HZ * LIMIT_CPJ))
		return (user / XT_LIMIT_SCALE) * XT_HZ * LIMIT_CPJ;
	return (user * XT_HZ * LIMIT_CPJ) / XT_LIMIT_SCALE;
}

struct xlimit_priv {
	uint32_t slot;
	uint32_t credit_full; /* credit at checkentry */
	uint32_t credit_cap, cost;
};
NFTDP_VM_PRIV_CHECK(struct xlimit_priv);

int nftdp_vm_compat_limit_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_rateinfo *r = par->info;
	struct xlimit_priv *p = priv;
	bool created;
	int rc;

	/* limit_mt_check */
	if (r->burst == 0 || limit_user2credits(r->avg * r->burst) < limit_user2credits(r->avg))
		return nftdp_vm_errf(cc, -ERANGE, "match limit: overflow, try lower: %u/%u", r->avg,
				     r->burst);
	p->credit_full = limit_user2credits(r->avg * r->burst);
	if (r->cost == 0) {
		p->credit_cap = p->credit_full;
		p->cost = limit_user2credits(r->avg);
	} else { /* as sent: the kernel trusts a non-zero cost */
		p->credit_cap = r->credit_cap;
		p->cost = r->cost;
	}
	rc = nftdp_vm_state_rule_slot(cc, NFTDP_VM_SLOT_CELL, &p->slot, &created);
	if (rc < 0)
		return rc;
	cc->st->cells[p->slot].type = NFTDP_VM_CELL_XT;
	return 0;
}

/*
 * limit_mt on one word: credit in the high 32 bits, prev (jiffies, low 32
 * bits) in the low. Credit grows by (now - prev) * CPJ in u32, which wraps
 * exactly as the kernel's does however many bits of prev are kept, since
 * CPJ is a power of two. 0 is a cell nothing ran yet: full credit then
 * (the kernel sets prev at checkentry, and credit is capped anyway).
 */
static void xlimit_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct xlimit_priv *p = (const void *)op->priv;
	_Atomic uint64_t *w = &ctx->state->cells[p->slot].xt.word;
	uint32_t now = (uint32_t)jiffies_of(ctx->now_ns), credit;
	uint64_t old = atomic_load_explicit(w, memory_order_relaxed), nw;
	bool ok;

	(void)pkt;
	do {
		if (old == 0) {
			credit = p->credit_full;
		} else {
			credit = (uint32_t)(old >> 32) + (now - (uint32_t)old) * LIMIT_CPJ;
			if (credit > p->credit_cap)
				credit = p->credit_cap;
		}
		ok = credit >= p->cost;
		if (ok)
			credit -= p->cost;
		nw = (uint64_t)credit << 32 | now;
		if (nw == 0)
			nw = 1; /* not "never ran": one jiffy off, once in 199 days */
	} while (!atomic_compare_exchange_weak_explicit(w, &old, nw, memory_order_relaxed,
							memory_order_relaxed));
	compat_match_result(regs, ok);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_limit_ops = {
    .name = "match limit", /* no .flow: each packet spends credit */
    .size = sizeof(struct xlimit_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = xlimit_eval,
};

/* ---- hashlimit (xt_hashlimit.c) ---- */

#define HASHLIMIT_MAX_SIZE 1048576u
/* htable_create's default size on a machine of more than 1 GiB */
#define HASHLIMIT_DEFAULT_SIZE 8192u
#define XT_HASHLIMIT_ALL                                                                           \
	(XT_HASHLIMIT_HASH_DIP | XT_HASHLIMIT_HASH_DPT | XT_HASHLIMIT_HASH_SIP |                   \
	 XT_HASHLIMIT_HASH_SPT | XT_HASHLIMIT_INVERT | XT_HASHLIMIT_BYTES |                        \
	 XT_HASHLIMIT_RATE_MATCH)

/* CREDITS_PER_JIFFY_v1 (u32 credit) and CREDITS_PER_JIFFY (u64, rev 2+) */
static uint64_t hl_cpj(int revision)
{
	if (revision == 1)
		return pow2_below(0xFFFFFFFFu / (XT_HZ * 60 * 60 * 24));
	return pow2_below(0xFFFFFFFFFFFFFFFFull / (XT_HZ * 60 * 60 * 24));
}

/* user2credits of 6.x: the constants divided first */
static uint64_t hl_user2credits(uint64_t user, int revision)
{
	uint64_t scale = revision == 1 ? XT_HASHLIMIT_SCALE : XT_HASHLIMIT_SCALE_v2;
	uint64_t hzcpj = XT_HZ * hl_cpj(revision);

	if (scale >= hzcpj)
		return user / (scale / hzcpj);
	return user * (hzcpj / scale);
}

/* the byte mode's credit: one second's worth, CREDITS_PER_JIFFY_BYTES a
 * jiffy (u32 arithmetic, as the kernel's constants) */
#define HL_CPJ_BYTES ((uint32_t)pow2_below(0xFFFFFFFFu / XT_HZ))
#define HL_BYTES_FULL ((uint32_t)(HL_CPJ_BYTES * XT_HZ))

/* user2credits_byte */
static uint32_t hl_user2credits_byte(uint32_t user)
{
	return (uint32_t)(((uint64_t)user * HL_BYTES_FULL) >> 32);
}

/* user2rate_bytes */
static uint64_t hl_user2rate_bytes(uint32_t user)
{
	uint64_t r = user ? UINT32_MAX / user : UINT32_MAX;

	return (r - 1) << XT_HASHLIMIT_BYTE_SHIFT;
}

/* struct dsthash_dst: what a bucket is keyed on */
struct hl_key {
	uint32_t src[4], dst[4];
	uint16_t sport, dport;
};

/*
 * One bucket, one cache line. state: version << 2 | EMPTY/BUSY/READY; a
 * worker claims an empty slot (or an expired one, for another key) with a
 * CAS to BUSY, writes the key and state, then publishes READY with the
 * next version. Slots never become empty again, so a key is always before
 * the first empty slot of its probe sequence. credit is in the form of
 * nft_limit's bucket (expr_limit.c): empty = now * CPJ - credit, all mod
 * 2^64, which is the kernel's u64 arithmetic of rateinfo_recalc exactly.
 * The byte mode keeps credit << 32 | prev (jiffies, 32 bits) in empty and
 * the refills left (credit_cap) in aux; rate-match keeps current_rate in
 * empty and prev << 1 | prev_window in aux (prev in 31 bits: a bucket
 * idle that long, 99 days, has expired).
 */
enum { HL_EMPTY = 0, HL_BUSY = 1, HL_READY = 2 };

struct hl_ent {
	alignas(64) _Atomic uint64_t state;
	struct hl_key key;
	_Atomic uint32_t aux;
	_Atomic uint64_t empty;
	_Atomic uint64_t expires; /* jiffies */
};
static_assert(sizeof(struct hl_ent) == 64, "a bucket is one cache line");

struct hl_table {
	struct hl_table *next;
	char name[NAME_MAX + 1];
	uint8_t family;
	uint32_t use;
	/* the first rule's config, as the kernel keeps it (hinfo->cfg) */
	uint64_t avg, burst;
	uint32_t mode, size, max, expire, interval;
	uint8_t srcmask, dstmask;
	uint32_t seed;
	uint32_t mask;		    /* slots - 1 */
	_Atomic uint32_t count;	    /* buckets held */
	_Atomic uint32_t gc_cursor; /* where hl_gc goes on */
	struct hl_ent *ent;
};

/* htables of every rule: control thread (compile and chain destroy) */
static pthread_mutex_t hl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hl_table *hl_tables;

/* how the table's buckets count (the first rule's mode, as rateinfo_init) */
enum { HL_PACKETS, HL_BYTES, HL_RATE, HL_RATE_BYTES };

/* packets: cpj, cost and cap as rateinfo_init; bytes: cost is the
 * cost of a chunk, cap the refills (--hashlimit-burst); rate-match: cost
 * is the rate, cap the burst, cpj the interval in jiffies */
struct hl_priv {
	struct hl_table *t;
	uint64_t cpj, cost, cap;
	bool invert;
	uint8_t kind;
};
NFTDP_VM_PRIV_CHECK(struct hl_priv);

static int hl_table_get(const char *name, uint8_t family, const struct hashlimit_cfg3 *cfg,
			struct hl_table **out)
{
	struct hl_table *t;
	size_t slots = 16;

	pthread_mutex_lock(&hl_lock);
	for (t = hl_tables; t; t = t->next)
		if (t->family == family && strcmp(t->name, name) == 0) {
			t->use++;
			pthread_mutex_unlock(&hl_lock);
			*out = t;
			return 0;
		}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto err_alloc;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->family = family;
	t->use = 1;
	t->avg = cfg->avg;
	t->burst = cfg->burst;
	t->mode = cfg->mode;
	t->expire = cfg->expire;
	t->interval = cfg->interval;
	t->srcmask = cfg->srcmask;
	t->dstmask = cfg->dstmask;
	/* htable_create: size, and max (8 * size, at least size) */
	t->size = cfg->size ? cfg->size : HASHLIMIT_DEFAULT_SIZE;
	if (cfg->max == 0)
		t->max = 8 * t->size;
	else
		t->max = cfg->max < t->size ? t->size : cfg->max;
	/* twice max, so a probe finds an empty slot soon; calloc'd pages
	 * appear as buckets are used */
	while (slots < 2 * (size_t)t->max)
		slots *= 2;
	t->mask = (uint32_t)(slots - 1);
	t->seed = (uint32_t)random();
	t->ent = calloc(slots, sizeof(*t->ent));
	if (!t->ent)
		goto err_ent;
	t->next = hl_tables;
	hl_tables = t;
	pthread_mutex_unlock(&hl_lock);
	*out = t;
	return 0;
err_ent:
	free(t);
err_alloc:
	pthread_mutex_unlock(&hl_lock);
	return -ENOMEM;
}

/* htable_put: after the grace period (the chain is being freed) */
static void hl_destroy(void *priv)
{
	struct hl_priv *p = priv;
	struct hl_table **pp;

	if (!p->t)
		return;
	pthread_mutex_lock(&hl_lock);
	if (--p->t->use == 0) {
		for (pp = &hl_tables; *pp && *pp != p->t; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = p->t->next;
		free(p->t->ent);
		free(p->t);
	}
	pthread_mutex_unlock(&hl_lock);
	p->t = NULL;
}

/* xt_check_proc_name */
static int check_proc_name(const char *name, size_t size)
{
	if (name[0] == '\0')
		return -EINVAL;
	if (strnlen(name, size) == size)
		return -ENAMETOOLONG;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strchr(name, '/'))
		return -EINVAL;
	return 0;
}

/* hashlimit_mt_check_common, for cfg in the form of rev 3 */
static int hl_check_common(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv,
			   struct hashlimit_cfg3 *cfg, const char *name, size_t name_size,
			   int revision)
{
	struct hl_priv *p = priv;
	int rc;

	rc = check_proc_name(name, name_size);
	if (rc < 0)
		return nftdp_vm_errf(cc, rc, "match hashlimit: bad name");
	if (cfg->gc_interval == 0 || cfg->expire == 0)
		return nftdp_vm_errf(cc, -EINVAL, "match hashlimit: zero gc interval or expire");
	if (cfg->srcmask > (par->family == NFPROTO_IPV4 ? 32 : 128) ||
	    cfg->dstmask > (par->family == NFPROTO_IPV4 ? 32 : 128))
		return nftdp_vm_errf(cc, -EINVAL, "match hashlimit: mask too long");
	if (cfg->mode & ~XT_HASHLIMIT_ALL)
		return nftdp_vm_errf(cc, -EINVAL, "match hashlimit: unknown mode mask %x",
				     cfg->mode);
	if (revision >= 3 && (cfg->mode & XT_HASHLIMIT_RATE_MATCH)) {
		if (cfg->avg == 0 || cfg->avg > UINT32_MAX)
			return nftdp_vm_errf(cc, -ERANGE, "match hashlimit: invalid rate");
		if (cfg->interval == 0)
			return nftdp_vm_errf(cc, -EINVAL, "match hashlimit: invalid interval");
	} else if (cfg->mode & XT_HASHLIMIT_BYTES) {
		/* user2credits_byte(avg) == 0 is EINVAL in the kernel */
		uint64_t us = (uint32_t)cfg->avg * (XT_HZ * pow2_below(0xFFFFFFFFu / XT_HZ));

		if ((uint32_t)(us >> 32) == 0)
			return nftdp_vm_errf(cc, -EINVAL, "match hashlimit: rate too high");
	} else if (cfg->burst == 0 || hl_user2credits(cfg->avg * cfg->burst, revision) <
					  hl_user2credits(cfg->avg, revision)) {
		return nftdp_vm_errf(cc, -ERANGE, "match hashlimit: overflow, try lower");
	}
	/* the kernel reads rate-match's fields of a rev 1/2 rule's bucket as
	 * the other modes' (a union): nftdp does not run that */
	if (revision < 3 && (cfg->mode & XT_HASHLIMIT_RATE_MATCH))
		return nftdp_vm_errf(cc, -EOPNOTSUPP, "match hashlimit: rate-match in revision %d",
				     revision);
	if (cfg->size > HASHLIMIT_MAX_SIZE)
		cfg->size = HASHLIMIT_MAX_SIZE;
	if (cfg->max > HASHLIMIT_MAX_SIZE)
		cfg->max = HASHLIMIT_MAX_SIZE;
	rc = hl_table_get(name, par->family, cfg, &p->t);
	if (rc < 0)
		return nftdp_vm_errf(cc, rc, "match hashlimit: no memory for table %s", name);
	/* the kernel's buckets keep one mode's fields (a union), set up by the
	 * table's mode and spent by the rule's: nftdp runs rules of the
	 * table's mode only */
	if ((p->t->mode ^ cfg->mode) & (XT_HASHLIMIT_BYTES | XT_HASHLIMIT_RATE_MATCH)) {
		hl_destroy(p);
		return nftdp_vm_errf(cc, -EOPNOTSUPP,
				     "match hashlimit: %s counts in another mode (bytes, "
				     "rate-match) than this rule",
				     name);
	}
	/* rateinfo_init/recalc: the table's rate, this rule's revision */
	p->invert = cfg->mode & XT_HASHLIMIT_INVERT;
	if (p->t->mode & XT_HASHLIMIT_RATE_MATCH) {
		bool bytes = p->t->mode & XT_HASHLIMIT_BYTES;

		p->kind = bytes ? HL_RATE_BYTES : HL_RATE;
		/* u32 * HZ in the kernel's int arithmetic */
		p->cpj = (uint32_t)(p->t->interval * XT_HZ);
		if (bytes) {
			p->cost = hl_user2rate_bytes((uint32_t)p->t->avg);
			p->cap = p->t->burst ? p->t->burst * p->cost : p->cost;
		} else {
			p->cost = XT_HASHLIMIT_SCALE_v2 / p->t->avg; /* user2rate */
			p->cap = p->t->burst + p->cost;
		}
	} else if (p->t->mode & XT_HASHLIMIT_BYTES) {
		p->kind = HL_BYTES;
		p->cost = hl_user2credits_byte((uint32_t)p->t->avg);
		/* refills: a u32 here, 4e9 of them are as many as the u64's */
		p->cap = p->t->burst > UINT32_MAX ? UINT32_MAX : p->t->burst;
	} else {
		p->kind = HL_PACKETS;
		p->cpj = hl_cpj(revision);
		p->cap = hl_user2credits(p->t->avg * p->t->burst, revision);
		p->cost = hl_user2credits(p->t->avg, revision);
	}
	return 0;
}

int nftdp_vm_compat_hashlimit1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv)
{
	const struct xt_hashlimit_mtinfo1 *i = par->info;
	struct hashlimit_cfg3 cfg = {.mode = i->cfg.mode,
				     .avg = i->cfg.avg,
				     .burst = i->cfg.burst,
				     .size = i->cfg.size,
				     .max = i->cfg.max,
				     .gc_interval = i->cfg.gc_interval,
				     .expire = i->cfg.expire,
				     .srcmask = i->cfg.srcmask,
				     .dstmask = i->cfg.dstmask};

	return hl_check_common(cc, par, priv, &cfg, i->name, sizeof(i->name), 1);
}

int nftdp_vm_compat_hashlimit2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv)
{
	const struct xt_hashlimit_mtinfo2 *i = par->info;
	struct hashlimit_cfg3 cfg = {.mode = i->cfg.mode,
				     .avg = i->cfg.avg,
				     .burst = i->cfg.burst,
				     .size = i->cfg.size,
				     .max = i->cfg.max,
				     .gc_interval = i->cfg.gc_interval,
				     .expire = i->cfg.expire,
				     .srcmask = i->cfg.srcmask,
				     .dstmask = i->cfg.dstmask};

	return hl_check_common(cc, par, priv, &cfg, i->name, sizeof(i->name), 2);
}

int nftdp_vm_compat_hashlimit3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv)
{
	const struct xt_hashlimit_mtinfo3 *i = par->info;
	struct hashlimit_cfg3 cfg = i->cfg;

	return hl_check_common(cc, par, priv, &cfg, i->name, sizeof(i->name), 3);
}

/* maskl / hashlimit_ipv6_mask: the first bits of an address */
static void mask_addr(uint32_t *a, unsigned int words, unsigned int bits)
{
	for (unsigned int w = 0; w<words; w++, bits = bits> 32 ? bits - 32 : 0) {
		if (bits >= 32)
			continue;
		a[w] = bits ? htonl(ntohl(a[w]) & (~0u << (32 - bits))) : 0;
	}
}

/* proto_ports_offset */
static int ports_offset(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_DCCP:
	case IPPROTO_ESP: /* SPI */
	case IPPROTO_SCTP:
	case IPPROTO_UDPLITE:
		return 0;
	case IPPROTO_AH: /* SPI */
		return 4;
	}
	return -1;
}

/* hashlimit_init_dst: false when the ports cannot be read (hotdrop) */
static bool hl_init_dst(const struct hl_table *t, struct hl_key *k, const struct nftdp_vm_pkt *pkt)
{
	bool v4 = pkt->nfproto == NFPROTO_IPV4;
	unsigned int words = v4 ? 1 : 4;
	uint16_t ports[2] = {0, 0};
	int poff;

	memset(k, 0, sizeof(*k));
	if (t->mode & XT_HASHLIMIT_HASH_DIP) {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + (v4 ? 16 : 24), k->dst, 4 * words);
		mask_addr(k->dst, words, t->dstmask);
	}
	if (t->mode & XT_HASHLIMIT_HASH_SIP) {
		nftdp_vm_copy_bits(pkt, pkt->nh_off + (v4 ? 12 : 8), k->src, 4 * words);
		mask_addr(k->src, words, t->srcmask);
	}
	if (!(t->mode & (XT_HASHLIMIT_HASH_DPT | XT_HASHLIMIT_HASH_SPT)))
		return true;
	/* ipv6_skip_exthdr failing (no transport header found) hotdrops */
	if (!v4 && !(pkt->flags & NFTDP_VM_PKT_F_L4PROTO))
		return false;
	poff = ports_offset(pkt->l4proto);
	if (poff >= 0 && !nftdp_vm_copy_bits(pkt, (int64_t)pkt->th_off + poff, ports, 4))
		return false;
	if (t->mode & XT_HASHLIMIT_HASH_SPT)
		k->sport = ports[0];
	if (t->mode & XT_HASHLIMIT_HASH_DPT)
		k->dport = ports[1];
	return true;
}

#define HL_WINDOW 16  /* a key lives in one of the 16 slots from its home */
#define HL_GC_STEP 4  /* slots a new bucket sweeps for expired ones */
#define HL_GC_FULL 64 /* ... and when the table is full */

static bool hl_expired(struct hl_ent *e, uint64_t now)
{
	return (int64_t)(now - atomic_load_explicit(&e->expires, memory_order_relaxed)) >= 0;
}

/* htable_gc in small steps: free expired buckets from a moving cursor */
static void hl_gc(struct hl_table *t, uint64_t now, uint32_t n)
{
	uint32_t at = atomic_fetch_add_explicit(&t->gc_cursor, n, memory_order_relaxed);

	for (uint32_t i = 0; i < n; i++) {
		struct hl_ent *e = &t->ent[(at + i) & t->mask];
		uint64_t st = atomic_load_explicit(&e->state, memory_order_acquire);

		if ((st & 3) == HL_READY && hl_expired(e, now) &&
		    atomic_compare_exchange_strong_explicit(&e->state, &st, (st & ~3ull) + 4,
							    memory_order_relaxed,
							    memory_order_relaxed))
			atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
	}
}

/* rateinfo_init, for the table's mode */
static void hl_rateinfo_init(struct hl_ent *e, uint64_t now, const struct hl_priv *p)
{
	uint64_t empty = 0;
	uint32_t aux = 0;

	switch (p->kind) {
	case HL_PACKETS:
		empty = now * p->cpj - p->cap;
		break;
	case HL_BYTES:
		empty = (uint64_t)HL_BYTES_FULL << 32 | (uint32_t)now;
		aux = (uint32_t)p->cap;
		break;
	default: /* rate-match: no rate yet, no window over */
		aux = (uint32_t)now << 1;
		break;
	}
	atomic_store_explicit(&e->empty, empty, memory_order_relaxed);
	atomic_store_explicit(&e->aux, aux, memory_order_relaxed);
}

/* dsthash_find, or dsthash_alloc_init (a fresh bucket: rateinfo_init);
 * NULL when the table holds max buckets (the kernel hotdrops) */
static struct hl_ent *hl_find_or_add__(struct hl_table *t, const struct hl_key *k, uint64_t now,
				       const struct hl_priv *p, bool *lost, bool *created)
{
	uint32_t h = nftdp_vm_jhash(k, sizeof(*k), t->seed);
	struct hl_ent *free_ent = NULL, *old_ent = NULL;
	uint64_t st, free_st = 0, old_st = 0;

	for (uint32_t i = 0; i < HL_WINDOW; i++) {
		struct hl_ent *e = &t->ent[(h + i) & t->mask];

		st = atomic_load_explicit(&e->state, memory_order_acquire);
		if ((st & 3) == HL_EMPTY) {
			if (!free_ent) {
				free_ent = e;
				free_st = st;
			}
			continue;
		}
		if ((st & 3) != HL_READY)
			continue;
		if (memcmp(&e->key, k, sizeof(*k)) == 0 &&
		    atomic_load_explicit(&e->state, memory_order_acquire) == st)
			return e;
		/* an expired bucket the kernel's gc would have freed */
		if (!old_ent && hl_expired(e, now)) {
			old_ent = e;
			old_st = st;
		}
	}
	if (old_ent) { /* taken over in place: the count stays */
		free_ent = old_ent;
		st = old_st;
	} else if (free_ent) {
		if (atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed) >= t->max) {
			atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
			return NULL;
		}
		st = free_st;
	} else {
		return NULL;
	}
	/* another worker took it first: it may hold our key now */
	if (!atomic_compare_exchange_strong_explicit(&free_ent->state, &st, (st & ~3ull) | HL_BUSY,
						     memory_order_acquire, memory_order_relaxed)) {
		if (!old_ent)
			atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
		*lost = true;
		return NULL;
	}
	free_ent->key = *k;
	atomic_store_explicit(&free_ent->expires, now + msecs_to_jiffies(t->expire),
			      memory_order_relaxed);
	hl_rateinfo_init(free_ent, now, p);
	*created = true;
	atomic_store_explicit(&free_ent->state, (st & ~3ull) + 4 + HL_READY, memory_order_release);
	return free_ent;
}

static struct hl_ent *hl_find_or_add(struct hl_table *t, const struct hl_key *k, uint64_t now,
				     const struct hl_priv *p, bool *created)
{
	struct hl_ent *e;
	bool lost;

	for (int tries = 0; tries < 4; tries++) {
		lost = false;
		e = hl_find_or_add__(t, k, now, p, &lost, created);
		if (e)
			return e;
		if (!lost && tries > 0)
			return NULL;
		/* no room: sweep harder once, then look again (a lost race
		 * for a slot: look again, the winner may hold our key) */
		if (!lost)
			hl_gc(t, now, HL_GC_FULL);
	}
	return NULL;
}

/* rateinfo_recalc and hashlimit_byte_cost of the byte mode: credit in
 * 16-byte chunks, a second's worth at most; a packet that finds too little
 * takes a full second's worth while refills (credit_cap) are left */
static bool hl_bytes(struct hl_ent *dh, uint64_t now, const struct hl_priv *p, uint32_t len)
{
	uint64_t cost = ((uint64_t)(len >> XT_HASHLIMIT_BYTE_SHIFT) + 1) * p->cost;
	uint64_t old = atomic_load_explicit(&dh->empty, memory_order_relaxed), nw, credit;
	uint32_t prev, delta, cap;
	bool refilled = false, ok;

	if (cost > HL_BYTES_FULL)
		cost = HL_BYTES_FULL;
	do {
		credit = old >> 32;
		prev = (uint32_t)old;
		delta = (uint32_t)now - prev;
		if (delta) {
			credit += (uint64_t)HL_CPJ_BYTES * delta;
			if (credit > HL_BYTES_FULL)
				credit = HL_BYTES_FULL;
			prev = (uint32_t)now;
		}
		if (credit < cost) {
			/* one refill per packet, however often the CAS retries */
			cap = atomic_load_explicit(&dh->aux, memory_order_relaxed);
			while (!refilled && cap &&
			       !atomic_compare_exchange_weak_explicit(&dh->aux, &cap, cap - 1,
								      memory_order_relaxed,
								      memory_order_relaxed))
				;
			if (cap)
				refilled = true;
			if (refilled)
				credit = HL_BYTES_FULL;
		}
		ok = credit >= cost;
		if (ok)
			credit -= cost;
		nw = credit << 32 | prev;
	} while (!atomic_compare_exchange_weak_explicit(&dh->empty, &old, nw, memory_order_relaxed,
							memory_order_relaxed));
	return ok;
}

/* rev 3 --hashlimit-rate-match (rateinfo_recalc, hashlimit_mt_common):
 * packets (or bytes) are summed over an interval; at the first packet
 * after it, prev_window says whether that interval's rate was over, and
 * while it was, or this interval's sum is over the burst, the rate is */
static bool hl_rate_match(struct hl_ent *dh, uint64_t now, const struct hl_priv *p, uint32_t len)
{
	uint32_t a = atomic_load_explicit(&dh->aux, memory_order_relaxed), na, delta;
	uint64_t cur;

	for (;;) {
		delta = ((uint32_t)now - (a >> 1)) & 0x7fffffffu;
		if (delta == 0 || delta < p->cpj)
			break;
		cur = atomic_load_explicit(&dh->empty, memory_order_relaxed);
		na = (uint32_t)now << 1 | (cur * p->cpj > (uint64_t)delta * p->cost);
		if (atomic_compare_exchange_weak_explicit(&dh->aux, &a, na, memory_order_relaxed,
							  memory_order_relaxed)) {
			atomic_store_explicit(&dh->empty, 0, memory_order_relaxed);
			a = na;
			break;
		}
	}
	cur = atomic_fetch_add_explicit(&dh->empty, p->kind == HL_RATE_BYTES ? len : 1,
					memory_order_relaxed) +
	      (p->kind == HL_RATE_BYTES ? len : 1);
	return !(a & 1) && cur <= p->cap;
}

static void hashlimit_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct hl_priv *p = (const void *)op->priv;
	struct hl_table *t = p->t;
	uint64_t now = jiffies_of(ctx->now_ns), e, ne, credit;
	struct hl_ent *dh;
	struct hl_key k;
	bool ok, created = false;

	if (!hl_init_dst(t, &k, pkt))
		goto hotdrop;
	dh = hl_find_or_add(t, &k, now, p, &created);
	if (!dh)
		goto hotdrop;
	if (created)
		hl_gc(t, now, HL_GC_STEP); /* a new bucket pays for the gc */
	atomic_store_explicit(&dh->expires, now + msecs_to_jiffies(t->expire),
			      memory_order_relaxed);
	if (p->kind == HL_BYTES)
		ok = hl_bytes(dh, now, p, pkt->skb_len);
	else if (p->kind != HL_PACKETS)
		ok = hl_rate_match(dh, now, p, pkt->skb_len);
	else
		goto packets;
	compat_match_result(regs, ok ^ p->invert);
	return;
packets:
	e = atomic_load_explicit(&dh->empty, memory_order_relaxed);
	do {
		/* rateinfo_recalc: credit += delta * cpj, capped */
		credit = now * p->cpj - e;
		if (credit > p->cap)
			credit = p->cap;
		ok = credit >= p->cost;
		ne = now * p->cpj - (ok ? credit - p->cost : credit);
	} while (!atomic_compare_exchange_weak_explicit(&dh->empty, &e, ne, memory_order_relaxed,
							memory_order_relaxed));
	compat_match_result(regs, ok ^ p->invert);
	return;
hotdrop:
	regs->verdict.code = NF_DROP;
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_hashlimit_ops = {
    .name = "match hashlimit", /* no .flow: each packet spends credit */
    .size = sizeof(struct hl_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = hashlimit_eval,
    .destroy = hl_destroy,
};
