// SPDX-License-Identifier: BSD-3-Clause
/*
 * Expectations (nf_conntrack_expect.c): the connections a helper announces
 * (an FTP data connection, a TFTP reply), each a tuple and a mask, with a
 * master, a timeout and NF_CT_EXPECT_* flags. A new connection that matches
 * one becomes related to the master (IPS_EXPECTED, `ct state related`).
 *
 * Workers: a data connection hashes to any worker, not the master's. So the
 * table is shared by every shard of a dataplane: one part per shard, which
 * only the master's worker writes (create, remove on timeout, master gone,
 * max_expected eviction), and which every worker reads when it creates a
 * connection while any expectation is live (one relaxed load otherwise). A
 * slot's state word carries a sequence number: the owner fills a free slot
 * and publishes it with a release store; the worker that matches takes it
 * with a compare and swap of the word it read (so a slot removed and
 * refilled meanwhile is not taken), copies it, and frees it. No locks; an
 * expectation carries what the data connection needs of its master (tuple,
 * NAT, helper); the master's mark, secmark and state are read from its
 * shard when the expectation is taken (single words the owner writes, as
 * the kernel's init_conntrack reads exp->master's).
 *
 * Which one a new connection takes: the kernel walks the destination's
 * hash bucket (nf_ct_expect_dst_hash: destination address, port, protocol
 * and family, so every expectation that can match a tuple is in its
 * bucket), newest first (nf_ct_expect_insert adds at the head), and takes
 * the first that matches. Its __nf_ct_expect_check refuses (-EBUSY) an
 * expectation that clashes with a live one of another master, so there at
 * most one matches any tuple, in a netns and zone, whatever the bucket's
 * order or its per-boot hash seed. nftdp checks the same clash, but two
 * workers may make clashing ones at the same moment (no lock); then the
 * newest in the table's creation order is taken, as the kernel's bucket
 * order would have it.
 */
#include <stdlib.h>

#include <arpa/inet.h>
#include <linux/netfilter/nf_nat.h>

#include "ct_priv.h"

#define CT_EXPECT_DEFAULT 256

static inline uint32_t st_seq(uint32_t w)
{
	return w >> 2;
}

static inline uint32_t st_make(uint32_t seq, uint32_t st)
{
	return seq << 2 | st;
}

int nftdp_ct_expect_table_create(uint16_t n_shards, uint32_t per_shard,
				 struct nftdp_ct_expect_table **out)
{
	struct nftdp_ct_expect_table *t;

	if (!n_shards || per_shard > 65536)
		return -EINVAL;
	if (!per_shard)
		per_shard = CT_EXPECT_DEFAULT;
	t = aligned_alloc(64, (sizeof(*t) + n_shards * sizeof(t->part[0]) + 63) / 64 * 64);
	if (!t)
		return -ENOMEM;
	memset(t, 0, sizeof(*t) + n_shards * sizeof(t->part[0]));
	t->n_parts = n_shards;
	t->per_part = per_shard;
	for (uint16_t i = 0; i < n_shards; i++) {
		t->part[i].slot = calloc(per_shard, sizeof(struct ct_expect));
		t->part[i].km = calloc(per_shard, sizeof(struct ct_gre_keymap));
		if (!t->part[i].slot || !t->part[i].km) {
			nftdp_ct_expect_table_destroy(t);
			return -ENOMEM;
		}
	}
	*out = t;
	return 0;
}

void nftdp_ct_expect_table_destroy(struct nftdp_ct_expect_table *t)
{
	if (!t)
		return;
	for (uint16_t i = 0; i < t->n_parts; i++) {
		free(t->part[i].slot);
		free(t->part[i].km);
	}
	free(t);
}

int nftdp_ct_expect_shard_init(struct nftdp_ct_shard *s)
{
	int rc;

	/* calloc of this size maps zero pages: only helper connections touch them */
	s->help = calloc(s->n_entries, sizeof(*s->help));
	if (!s->help)
		return -ENOMEM;
	if (s->cfg.expect) {
		if (s->cfg.shard_id >= s->cfg.expect->n_parts)
			return -EINVAL;
		s->exp = s->cfg.expect;
		return 0;
	}
	rc = nftdp_ct_expect_table_create(1, 0, &s->exp);
	if (rc < 0)
		return rc;
	s->exp_own = true;
	return 0;
}

void nftdp_ct_expect_shard_fini(struct nftdp_ct_shard *s)
{
	if (s->exp_own)
		nftdp_ct_expect_table_destroy(s->exp);
	s->exp = NULL;
	free(s->help);
	s->help = NULL;
}

static struct ct_expect_part *own_part(struct nftdp_ct_shard *s)
{
	return &s->exp->part[s->exp_own ? 0 : s->cfg.shard_id];
}

void nftdp_ct_expect_init(struct ct_expect *x, uint8_t l3proto, const union nftdp_ct_addr *saddr,
			  const union nftdp_ct_addr *daddr, uint8_t l4proto, uint16_t sport_be,
			  uint16_t dport_be)
{
	memset(x, 0, sizeof(*x));
	x->tuple.l3proto = l3proto;
	x->tuple.l4proto = l4proto;
	x->mask.l3proto = 0xff;
	x->mask.l4proto = 0xff;
	if (saddr) {
		x->tuple.src = *saddr;
		memset(&x->mask.src, 0xff, l3proto == NFPROTO_IPV4 ? 4 : 16);
	}
	x->tuple.sport = sport_be;
	x->mask.sport = sport_be ? 0xffff : 0;
	x->tuple.dst = *daddr;
	memset(&x->mask.dst, 0xff, l3proto == NFPROTO_IPV4 ? 4 : 16);
	x->tuple.dport = dport_be;
	x->mask.dport = 0xffff;
}

/* nf_ct_tuple_mask_cmp, and the zone (nf_ct_zone_equal_any) */
static bool tuple_mask_cmp(const struct nftdp_ct_tuple *t, const struct ct_expect *x)
{
	for (int i = 0; i < 4; i++) {
		if ((t->src.ip6[i] ^ x->tuple.src.ip6[i]) & x->mask.src.ip6[i])
			return false;
		if ((t->dst.ip6[i] ^ x->tuple.dst.ip6[i]) & x->mask.dst.ip6[i])
			return false;
	}
	return !((t->sport ^ x->tuple.sport) & x->mask.sport) &&
	       !((t->dport ^ x->tuple.dport) & x->mask.dport) && t->l3proto == x->tuple.l3proto &&
	       t->l4proto == x->tuple.l4proto && t->zone == x->tuple.zone;
}

/* expect_matches: the same tuple and mask */
static bool expect_matches(const struct ct_expect *a, const struct ct_expect *b)
{
	return !memcmp(&a->tuple, &b->tuple, sizeof(a->tuple)) &&
	       !memcmp(&a->mask, &b->mask, sizeof(a->mask));
}

/* expect_clash: each matches the other's tuple under both masks */
static bool expect_clash(const struct ct_expect *a, const struct ct_expect *b)
{
	struct ct_expect m = *b;

	for (int i = 0; i < 4; i++) {
		m.mask.src.ip6[i] &= a->mask.src.ip6[i];
		m.mask.dst.ip6[i] &= a->mask.dst.ip6[i];
	}
	m.mask.sport &= a->mask.sport;
	m.mask.dport &= a->mask.dport;
	return tuple_mask_cmp(&a->tuple, &m);
}

/* owner only: LIVE -> FREE unless another worker took it first */
static bool slot_remove(struct nftdp_ct_shard *s, struct ct_expect_part *p, struct ct_expect *x)
{
	uint32_t w = atomic_load_explicit(&x->state, memory_order_relaxed);

	if ((w & 3) != CT_EXP_LIVE || !atomic_compare_exchange_strong_explicit(
					  &x->state, &w, st_make(st_seq(w) + 1, CT_EXP_FREE),
					  memory_order_acq_rel, memory_order_relaxed))
		return false;
	atomic_fetch_sub_explicit(&p->n_live, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&s->exp->n_live, 1, memory_order_relaxed);
	s->st.expect_delete++;
	return true;
}

/* a is newer than b in the table's creation order (wrapping) */
static inline bool seq_newer(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/*
 * nf_ct_find_expectation's and __nf_ct_expect_find's walk: the newest live
 * expectation that tup matches under its mask (active: not
 * NF_CT_EXPECT_INACTIVE, as nf_ct_find_expectation skips those), copied
 * into *copy with the state word it had (*word).
 */
static struct ct_expect *find_newest(struct nftdp_ct_expect_table *t,
				     const struct nftdp_ct_tuple *tup, uint64_t now_ms, bool active,
				     struct ct_expect *copy, uint32_t *word,
				     struct ct_expect_part **part)
{
	struct ct_expect *best = NULL;

	for (uint16_t i = 0; i < t->n_parts; i++) {
		struct ct_expect_part *q = &t->part[i];

		if (!atomic_load_explicit(&q->n_live, memory_order_relaxed))
			continue;
		for (uint32_t j = 0; j < t->per_part; j++) {
			struct ct_expect *y = &q->slot[j];
			uint32_t w = atomic_load_explicit(&y->state, memory_order_acquire);
			struct ct_expect c;

			if ((w & 3) != CT_EXP_LIVE)
				continue;
			memcpy(&c, y, sizeof(c));
			if (atomic_load_explicit(&y->state, memory_order_acquire) != w)
				continue; /* changed while read */
			if (c.expires_ms <= now_ms ||
			    (active && (c.flags & NF_CT_EXPECT_INACTIVE)) ||
			    !tuple_mask_cmp(tup, &c))
				continue;
			if (best && !seq_newer(c.seq, copy->seq))
				continue;
			best = y;
			*copy = c;
			*word = w;
			*part = q;
		}
	}
	return best;
}

/*
 * The master as nf_ct_find_expectation and init_conntrack see it: not yet
 * confirmed or dying, the expectation is not taken (false; the kernel
 * returns NULL, it does not look further); else its mark and secmark now.
 * A master gone meanwhile (its owner removes its expectations) is not
 * taken either.
 */
static bool master_takes(const struct ct_expect *c, uint32_t *mark, uint32_t *secmark)
{
	const struct nftdp_ct_shard *ms = c->master_sh;
	const struct nftdp_ct_entry *m;
	uint32_t st, mk, sm;

	*mark = c->mark;
	*secmark = c->secmark;
	if (!ms || c->master_idx >= ms->n_entries)
		return true;
	m = &ms->entries[c->master_idx];
	st = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE);
	mk = __atomic_load_n(&m->mark, __ATOMIC_RELAXED);
	sm = __atomic_load_n(&m->secmark, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&m->in_use, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&m->id, __ATOMIC_ACQUIRE) != c->master_id)
		return false;
	if (!(st & IPS_CONFIRMED) || (st & IPS_DYING))
		return false;
	*mark = mk;
	*secmark = sm;
	return true;
}

static bool master_is(const struct ct_expect *x, const struct nftdp_ct_shard *s,
		      const struct nftdp_ct_entry *m)
{
	return x->master_shard == s->cfg.shard_id && x->master_idx == (uint32_t)(m - s->entries) &&
	       x->master_id == m->id;
}

/* What master m holds of class in part p (help->expecting[class]), the
 * oldest of those, and p's first free slot (NULL: none). */
static uint32_t part_scan(const struct nftdp_ct_shard *s, struct ct_expect_part *p,
			  const struct nftdp_ct_entry *m, uint8_t class, struct ct_expect **oldest,
			  struct ct_expect **free_slot)
{
	uint32_t mine = 0;

	*oldest = *free_slot = NULL;
	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_expect *y = &p->slot[j];
		uint32_t w = atomic_load_explicit(&y->state, memory_order_acquire);

		if ((w & 3) == CT_EXP_FREE) {
			if (!*free_slot)
				*free_slot = y;
			continue;
		}
		if ((w & 3) == CT_EXP_LIVE && master_is(y, s, m) && y->class == class) {
			mine++;
			if (!*oldest || y->id - (*oldest)->id > 0x80000000u)
				*oldest = y;
		}
	}
	return mine;
}

int nftdp_ct_expect_related(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
			    struct ct_expect *x, uint32_t max_expected, uint32_t timeout_s)
{
	return nftdp_ct_expect_related_flags(s, master, x, max_expected, timeout_s, 0);
}

int nftdp_ct_expect_related_flags(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
				  struct ct_expect *x, uint32_t max_expected, uint32_t timeout_s,
				  unsigned int flags)
{
	struct nftdp_ct_expect_table *t = s->exp;
	struct ct_expect_part *p = own_part(s);
	struct ct_expect *free_slot, *oldest;
	uint32_t mine;

	x->tuple.zone = nftdp_ct_entry_zone(master);
	x->master_shard = s->cfg.shard_id;
	x->master_idx = (uint32_t)(master - s->entries);
	x->master_id = master->id;
	x->master_sh = s;
	x->master_tuple = master->tuple[IP_CT_DIR_ORIGINAL];
	x->helper = master->helper;
	x->mark = master->mark;
	x->secmark = master->secmark;
	x->expires_ms = s->now_ms + (uint64_t)timeout_s * 1000u;
	/* __nf_ct_expect_check: the same expectation of this master and
	 * class is replaced, of this master and another class -EALREADY;
	 * another master's is a clash (-EBUSY), or with
	 * CT_EXP_F_SKIP_MASTER -EALREADY */
	for (uint16_t i = 0; i < t->n_parts; i++) {
		struct ct_expect_part *q = &t->part[i];

		if (!atomic_load_explicit(&q->n_live, memory_order_relaxed))
			continue;
		for (uint32_t j = 0; j < t->per_part; j++) {
			struct ct_expect *y = &q->slot[j];
			uint32_t w = atomic_load_explicit(&y->state, memory_order_acquire);
			bool mastered, match, clash;

			if ((w & 3) != CT_EXP_LIVE)
				continue;
			mastered = q == p && master_is(y, s, master);
			match = expect_matches(y, x);
			clash = !match && expect_clash(y, x);
			if (atomic_load_explicit(&y->state, memory_order_acquire) != w)
				continue; /* changed while read */
			if (match && (mastered || (flags & CT_EXP_F_SKIP_MASTER))) {
				if (!mastered || y->class != x->class)
					return -EALREADY;
				slot_remove(s, p, y);
				continue;
			}
			if (match || clash)
				return -EBUSY;
		}
	}
	mine = part_scan(s, p, master, x->class, &oldest, &free_slot);
	/* max_expected reached: evict_oldest_expect */
	if (max_expected && mine >= max_expected && oldest) {
		if (slot_remove(s, p, oldest) && !free_slot)
			free_slot = oldest;
	}
	if (!free_slot)
		return -EMFILE; /* "nf_conntrack: expectation table full" */
	{
		uint32_t w = atomic_load_explicit(&free_slot->state, memory_order_relaxed);

		x->id = ++p->next_id;
		x->seq = atomic_fetch_add_explicit(&t->seq, 1, memory_order_relaxed);
		x->state = 0;
		/* copy all but the state word, then publish */
		memcpy((uint8_t *)free_slot + sizeof(free_slot->state),
		       (const uint8_t *)x + sizeof(x->state), sizeof(*x) - sizeof(x->state));
		atomic_fetch_add_explicit(&p->n_live, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&t->n_live, 1, memory_order_relaxed);
		atomic_store_explicit(&free_slot->state, st_make(st_seq(w) + 1, CT_EXP_LIVE),
				      memory_order_release);
	}
	s->st.expect_create++;
	return 0;
}

int nftdp_ct_expect_from_obj(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, int dir,
			     const struct nftdp_vm_ct_expect *o)
{
	const struct nftdp_ct_tuple *r = &e->tuple[!dir];
	uint8_t l3 = o->l3proto == NFPROTO_INET ? e->tuple[0].l3proto : o->l3proto;
	struct ct_expect x, *oldest, *free_slot;

	/* help->expecting[NF_CT_EXPECT_CLASS_DEFAULT] >= priv->size */
	if (part_scan(s, own_part(s), e, 0, &oldest, &free_slot) >= o->size)
		return NFT_BREAK;
	/* from the peer (the reply tuple's source) to us, any source port */
	nftdp_ct_expect_init(&x, l3, &r->src, &r->dst, o->l4proto, 0, o->dport_be);
	if (l3 == NFPROTO_IPV4) { /* nf_ct_expect_init copies 4 bytes, zeroes the rest */
		memset(&x.tuple.src.u8[4], 0, 12);
		memset(&x.tuple.dst.u8[4], 0, 12);
	}
	return nftdp_ct_expect_related(s, e, &x, 0, o->timeout) < 0 ? NF_DROP : NFT_CONTINUE;
}

bool nftdp_ct_expect_init_conntrack(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    uint64_t now_ms)
{
	struct nftdp_ct_expect_table *t = s->exp;
	struct nftdp_ct_tuple tup = e->tuple[IP_CT_DIR_ORIGINAL];
	uint32_t mark, secmark;
	struct ct_expect c;
	struct ct_help *h;

	/* nf_ct_zone_equal_any: the template zone's id, whatever its
	 * directions (a reply-only zone is not in the original tuple) */
	tup.zone = nftdp_ct_entry_zone(e);
	/* nf_ct_find_expectation: the newest that matches; a slot taken or
	 * changed under us is looked for again, a few times */
	for (int tries = 0;; tries++) {
		struct ct_expect_part *q;
		uint32_t w;
		struct ct_expect *y = find_newest(t, &tup, now_ms, true, &c, &w, &q);

		if (!y || tries == 4 || !master_takes(&c, &mark, &secmark))
			return false;
		if (c.flags & NF_CT_EXPECT_PERMANENT) {
			if (atomic_load_explicit(&y->state, memory_order_acquire) == w)
				break;
			continue;
		}
		/* take it; a failed swap: somebody else did, or it changed */
		if (!atomic_compare_exchange_strong_explicit(
			&y->state, &w, st_make(st_seq(w), CT_EXP_CLAIMED), memory_order_acq_rel,
			memory_order_relaxed))
			continue;
		atomic_fetch_sub_explicit(&q->n_live, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&t->n_live, 1, memory_order_relaxed);
		atomic_store_explicit(&y->state, st_make(st_seq(w) + 1, CT_EXP_FREE),
				      memory_order_release);
		break;
	}
	/* init_conntrack: "Welcome, Mr. Bond" */
	e->status |= IPS_EXPECTED;
	e->mark = mark;
	e->secmark = secmark;
	h = &s->help[e - s->entries];
	memset(h, 0, sizeof(*h));
	h->master_helper = c.helper;
	h->nat_follow = c.nat_follow;
	h->nat_proto_src = c.nat_pptp && c.nat_dir == IP_CT_DIR_ORIGINAL;
	h->nat_port = c.nat_port;
	h->nat_src = c.nat_src;
	h->nat_dst = c.nat_dst;
	h->master_shard = c.master_shard;
	h->master_idx = c.master_idx;
	h->master_id = c.master_id;
	/* exp->helper: the connection gets it, IPS_HELPER not */
	if (c.exp_helper)
		e->helper = c.exp_helper;
	s->st.expect_new++;
	if (c.helper == NFTDP_VM_CT_HELPER_PPTP) /* exp->expectfn */
		nftdp_ct_pptp_expectfn(s, &c);
	return true;
}

void nftdp_ct_expect_set_nat(struct ct_expect *x, const struct nftdp_ct_entry *master, int exp_dir,
			     uint16_t saved_port_be)
{
	x->nat_follow = true;
	x->nat_dir = (uint8_t)exp_dir;
	x->nat_port = saved_port_be;
	x->nat_src = master->tuple[!exp_dir].dst;
	x->nat_dst = master->tuple[!exp_dir].src;
}

/*
 * nf_nat_follow_master: the source becomes where the master sends to, the
 * destination the master's peer at the expected port. Run once the entry
 * is in the table (a binding may move its reply tuple). pptp_nat_expected
 * is the same but for a GRE connection the PNS starts (exp->dir original):
 * there the saved key is the source's and the destination keeps its own.
 */
void nftdp_ct_expect_nat_follow(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e)
{
	const struct ct_help *h = &s->help[e - s->entries];
	struct nftdp_ct_nat_range r;

	if (!h->nat_follow)
		return;
	memset(&r, 0, sizeof(r));
	r.flags = NF_NAT_RANGE_MAP_IPS;
	r.min_addr = r.max_addr = h->nat_src;
	r.min_proto = r.max_proto = h->nat_port;
	if (h->nat_proto_src)
		r.flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
	nftdp_ct_nat_setup_entry(s, e, &r, NFTDP_CT_MANIP_SRC);
	r.flags = NF_NAT_RANGE_MAP_IPS;
	if (!h->nat_proto_src)
		r.flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
	r.min_addr = r.max_addr = h->nat_dst;
	nftdp_ct_nat_setup_entry(s, e, &r, NFTDP_CT_MANIP_DST);
}

/* nf_ct_remove_expectations: the master is gone */
void nftdp_ct_expect_remove_master(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master)
{
	struct ct_expect_part *p = own_part(s);

	if (!atomic_load_explicit(&p->n_live, memory_order_relaxed))
		return;
	for (uint32_t j = 0; j < s->exp->per_part; j++)
		if ((atomic_load_explicit(&p->slot[j].state, memory_order_relaxed) & 3) ==
			CT_EXP_LIVE &&
		    master_is(&p->slot[j], s, master))
			slot_remove(s, p, &p->slot[j]);
}

bool nftdp_ct_expect_unexpect_tuple(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t)
{
	struct nftdp_ct_expect_table *tb = s->exp;

	/* __nf_ct_expect_find + nf_ct_unexpect_related: the newest that t
	 * matches; a compare and swap as nftdp_ct_expect_init_conntrack's
	 * claim, so any worker may */
	for (int tries = 0; tries < 4; tries++) {
		struct ct_expect_part *q;
		struct ct_expect c;
		uint32_t w;
		struct ct_expect *y = find_newest(tb, t, s->now_ms, false, &c, &w, &q);

		if (!y)
			return false;
		if (!atomic_compare_exchange_strong_explicit(
			&y->state, &w, st_make(st_seq(w) + 1, CT_EXP_FREE), memory_order_acq_rel,
			memory_order_relaxed))
			continue;
		atomic_fetch_sub_explicit(&q->n_live, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&tb->n_live, 1, memory_order_relaxed);
		s->st.expect_delete++;
		return true;
	}
	return false;
}

bool nftdp_ct_expect_find(const struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
			  struct ct_expect *copy)
{
	struct ct_expect_part *q;
	uint32_t w;

	/* __nf_ct_expect_find: the newest live expectation t matches under
	 * its mask, inactive ones too */
	if (!atomic_load_explicit(&s->exp->n_live, memory_order_relaxed))
		return false;
	return find_newest(s->exp, t, s->now_ms, false, copy, &w, &q) != NULL;
}

void nftdp_ct_expect_unexpect(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
			      const struct ct_expect *x)
{
	struct ct_expect_part *p = own_part(s);

	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_expect *y = &p->slot[j];

		if ((atomic_load_explicit(&y->state, memory_order_relaxed) & 3) == CT_EXP_LIVE &&
		    master_is(y, s, master) && y->class == x->class && expect_matches(y, x)) {
			slot_remove(s, p, y);
			return;
		}
	}
}

void nftdp_ct_expect_flush_class(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
				 bool media)
{
	struct ct_expect_part *p = own_part(s);

	if (!atomic_load_explicit(&p->n_live, memory_order_relaxed))
		return;
	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_expect *y = &p->slot[j];

		if ((atomic_load_explicit(&y->state, memory_order_relaxed) & 3) != CT_EXP_LIVE ||
		    !master_is(y, s, master) || (y->class != 0) != media)
			continue;
		/* a timer already run: the gc's */
		if (y->expires_ms <= s->now_ms)
			continue;
		if (slot_remove(s, p, y) && !media)
			return;
	}
}

bool nftdp_ct_expect_refresh_signalling(struct nftdp_ct_shard *s,
					const struct nftdp_ct_entry *master,
					const union nftdp_ct_addr *addr, uint8_t proto,
					uint16_t port, uint32_t expires_s)
{
	struct ct_expect_part *p = own_part(s);
	size_t alen = master->tuple[0].l3proto == NFPROTO_IPV4 ? 4 : 16;

	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_expect *y = &p->slot[j];

		if ((atomic_load_explicit(&y->state, memory_order_relaxed) & 3) != CT_EXP_LIVE ||
		    !master_is(y, s, master) || y->class != 0 ||
		    memcmp(&y->tuple.dst, addr, alen) || y->tuple.l4proto != proto ||
		    y->tuple.dport != port)
			continue;
		/* mod_timer_pending: only a timer that has not run */
		if (y->expires_ms <= s->now_ms)
			continue;
		/* the owner writes its own slot; readers copy it (a reader
		 * that sees it still inactive does not take it) */
		y->expires_ms = s->now_ms + (uint64_t)expires_s * 1000u;
		y->flags &= ~(uint32_t)NF_CT_EXPECT_INACTIVE;
		return true;
	}
	return false;
}

/* the expectations' timers */
void nftdp_ct_expect_gc(struct nftdp_ct_shard *s, uint64_t now_ms)
{
	struct ct_expect_part *p = own_part(s);

	if (!atomic_load_explicit(&p->n_live, memory_order_relaxed))
		return;
	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_expect *x = &p->slot[j];

		if ((atomic_load_explicit(&x->state, memory_order_relaxed) & 3) == CT_EXP_LIVE &&
		    x->expires_ms <= now_ms)
			slot_remove(s, p, x);
	}
}

int nftdp_ct_expect_walk(struct nftdp_ct_shard *s, uint64_t now_ms,
			 int (*fn)(const struct nftdp_ct_expect_info *x, void *arg), void *arg)
{
	struct ct_expect_part *p = own_part(s);

	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		const struct ct_expect *y = &p->slot[j];
		uint32_t w = atomic_load_explicit(&y->state, memory_order_acquire);
		struct nftdp_ct_expect_info o;
		struct ct_expect x;
		int rc;

		if ((w & 3) != CT_EXP_LIVE)
			continue;
		memcpy(&x, y, sizeof(x));
		if (atomic_load_explicit(&y->state, memory_order_acquire) != w)
			continue; /* taken or replaced meanwhile */
		if (x.expires_ms <= now_ms)
			continue;
		memset(&o, 0, sizeof(o));
		o.tuple = x.tuple;
		o.mask = x.mask;
		o.master = x.master_tuple;
		o.timeout_s = (uint32_t)((x.expires_ms - now_ms) / 1000u);
		o.id = x.id;
		o.flags = x.flags;
		o.class = x.class;
		o.helper = nftdp_ct_helper_name(x.helper);
		o.nat = x.nat_follow;
		o.nat_dir = x.nat_dir;
		o.nat_port = x.nat_port;
		o.nat_pptp = x.nat_pptp;
		o.nat_sip = x.nat_sip;
		o.nat_callfwd = x.nat_callfwd;
		o.nat_q931 = x.nat_q931;
		o.nat_saved = x.nat_dst;
		rc = fn(&o, arg);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- ctnetlink's expectation requests (ctnetlink_get/del/new_expect) ---- */

/* a live slot of s's part that t matches, copied into *copy */
static struct ct_expect *find_live(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
				   uint32_t id, struct ct_expect *copy)
{
	struct ct_expect_part *p = own_part(s);

	if (!atomic_load_explicit(&p->n_live, memory_order_relaxed))
		return NULL;
	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_expect *y = &p->slot[j];
		uint32_t w = atomic_load_explicit(&y->state, memory_order_acquire);

		if ((w & 3) != CT_EXP_LIVE)
			continue;
		memcpy(copy, y, sizeof(*copy));
		if (atomic_load_explicit(&y->state, memory_order_acquire) != w)
			continue;
		if (tuple_mask_cmp(t, copy) && (!id || copy->id == id))
			return y;
	}
	return NULL;
}

int nftdp_ct_expect_get(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id,
			uint64_t now_ms, struct nftdp_ct_expect_info *out)
{
	struct ct_expect x;

	if (!find_live(s, t, id, &x) || x.expires_ms <= now_ms)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->tuple = x.tuple;
	out->mask = x.mask;
	out->master = x.master_tuple;
	out->timeout_s = (uint32_t)((x.expires_ms - now_ms) / 1000u);
	out->id = x.id;
	out->flags = x.flags;
	out->class = x.class;
	out->helper = nftdp_ct_helper_name(x.helper);
	out->nat = x.nat_follow;
	out->nat_dir = x.nat_dir;
	out->nat_port = x.nat_port;
	out->nat_pptp = x.nat_pptp;
	out->nat_sip = x.nat_sip;
	out->nat_callfwd = x.nat_callfwd;
	out->nat_q931 = x.nat_q931;
	out->nat_saved = x.nat_dst;
	return 0;
}

int nftdp_ct_expect_delete(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id)
{
	struct ct_expect x, *y = find_live(s, t, id, &x);

	if (!y || !slot_remove(s, own_part(s), y))
		return -ENOENT;
	return 0;
}

int nftdp_ct_expect_set_timeout(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
				uint32_t timeout_s, uint64_t now_ms)
{
	struct ct_expect x, *y = find_live(s, t, 0, &x);

	if (!y)
		return -ENOENT;
	/* the owner writes its own slot; readers copy and recheck the state */
	y->expires_ms = now_ms + (uint64_t)timeout_s * 1000u;
	return 0;
}

unsigned int nftdp_ct_expect_flush(struct nftdp_ct_shard *s, const char *helper)
{
	struct ct_expect_part *p = own_part(s);
	unsigned int n = 0;

	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_expect *y = &p->slot[j];
		const char *name;

		if ((atomic_load_explicit(&y->state, memory_order_relaxed) & 3) != CT_EXP_LIVE)
			continue;
		/* expect_iter_name: the master's helper */
		name = nftdp_ct_helper_name(y->helper);
		if (helper && (!name || strcmp(name, helper)))
			continue;
		n += slot_remove(s, p, y);
	}
	return n;
}

int nftdp_ct_expect_create(struct nftdp_ct_shard *s, const struct nftdp_ct_expect_new *n,
			   uint64_t now_ms)
{
	uint8_t named = NFTDP_VM_CT_HELPER_NONE;
	struct nftdp_ct_entry *m;
	struct ct_expect x;
	int dir;

	m = nftdp_ct_find(s, &n->master, nftdp_ct_tuple_hash(s, &n->master), &dir, now_ms);
	if (!m || !(m->status & IPS_CONFIRMED))
		return -ENOENT;
	if (n->helper[0]) {
		/* __nf_conntrack_helper_find(name, u3, the master's protocol):
		 * the expected connection's helper (exp->helper) */
		named =
		    nftdp_vm_ct_helper_find(n->helper, m->tuple[0].l3proto, m->tuple[0].l4proto);
		if (named == NFTDP_VM_CT_HELPER_NONE)
			return -EOPNOTSUPP;
	}
	if (!m->helper)
		return -EOPNOTSUPP; /* ctnetlink_alloc_expect: no nfct_help */
	/* CTA_EXPECT_CLASS counts only with a helper named, up to its
	 * expect_class_max; no expectfn of that name */
	if ((named && n->class > nftdp_ct_exp_class_max(named)) || n->fn_unknown)
		return -EINVAL;
	nftdp_ct_expect_init(&x, n->tuple.l3proto, &n->tuple.src, &n->tuple.dst, n->tuple.l4proto,
			     n->tuple.sport, n->tuple.dport);
	x.mask.src = n->mask.src;
	x.mask.sport = n->mask.sport;
	x.class = (uint8_t)(named ? n->class : 0);
	x.exp_helper = named;
	x.flags = n->flags & ~(uint32_t)NF_CT_EXPECT_USERSPACE;
	if (n->follow) {
		nftdp_ct_expect_set_nat(&x, m, n->nat_dir, n->nat_port);
	} else {
		x.nat_dir = n->nat_dir;
		x.nat_port = n->nat_port;
	}
	if (now_ms > s->now_ms)
		s->now_ms = now_ms;
	/* __nf_ct_expect_check and nf_ct_expect_insert: the master's helper's
	 * policy for the class (its limit, and its timeout over CTA_EXPECT_TIMEOUT) */
	return nftdp_ct_expect_related(s, m, &x, nftdp_ct_exp_max(m->helper, x.class),
				       nftdp_ct_exp_timeout(m->helper, x.class));
}
