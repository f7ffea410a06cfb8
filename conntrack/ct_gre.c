// SPDX-License-Identifier: BSD-3-Clause
/*
 * GRE version 1 keys (nf_conntrack_proto_gre.c): PPTP's enhanced GRE
 * (RFC 2637) carries only the receiver's call id, so a packet's tuple takes
 * it as the destination key and the source key from a keymap the pptp
 * helper filled when the call was set up (gre_pkt_to_tuple,
 * gre_keymap_lookup). The keys live in the tuple's port fields, as the
 * kernel's union does; ct_tuple.c reads the destination key, this file the
 * keymaps. ct_other.c has the GRE timeouts.
 *
 * The keymaps are in the expectation table (expect.c), one array per part:
 * the master's worker writes its own part, every worker reads (a GRE
 * connection hashes to any worker), and any worker frees a master's
 * keymaps with a compare and swap when its GRE connection goes.
 */
#include <netinet/in.h>

#include "ct_priv.h"

static inline uint32_t km_seq(uint32_t w)
{
	return w >> 2;
}

static inline uint32_t km_make(uint32_t seq, uint32_t st)
{
	return seq << 2 | st;
}

/* gre_key_cmpfn: family, addresses, protocol and destination key (no zone) */
static bool gre_key_cmp(const struct nftdp_ct_tuple *km, const struct nftdp_ct_tuple *t)
{
	return km->l3proto == t->l3proto && !memcmp(&km->src, &t->src, sizeof(t->src)) &&
	       !memcmp(&km->dst, &t->dst, sizeof(t->dst)) && km->l4proto == t->l4proto &&
	       km->dport == t->dport;
}

static struct ct_expect_part *part_of(const struct nftdp_ct_shard *s, uint16_t shard_id)
{
	if (s->exp_own)
		return &s->exp->part[0];
	return shard_id < s->exp->n_parts ? &s->exp->part[shard_id] : NULL;
}

void nftdp_ct_gre_keymap_lookup(const struct nftdp_ct_shard *s, const uint8_t *l4, uint32_t l4len,
				struct nftdp_ct_tuple *t)
{
	const struct nftdp_ct_expect_table *tb = s->exp;

	/* version 0 and short version 1 headers have no keys */
	if (l4len < 8 || (l4[1] & 7) != 1 ||
	    !atomic_load_explicit(&tb->km_live, memory_order_relaxed))
		return;
	for (uint16_t i = 0; i < tb->n_parts; i++) {
		const struct ct_expect_part *q = &tb->part[i];
		uint32_t hi;

		if (!atomic_load_explicit(&q->km_live, memory_order_relaxed))
			continue;
		hi = atomic_load_explicit(&q->km_hi, memory_order_acquire);
		for (uint32_t j = 0; j < hi && j < tb->per_part; j++) {
			const struct ct_gre_keymap *k = &q->km[j];
			uint32_t w = atomic_load_explicit(&k->state, memory_order_acquire);
			struct nftdp_ct_tuple kt;

			if ((w & 3) != CT_EXP_LIVE)
				continue;
			memcpy(&kt, &k->tuple, sizeof(kt));
			if (atomic_load_explicit(&k->state, memory_order_acquire) != w)
				continue; /* freed or refilled while read */
			if (gre_key_cmp(&kt, t)) {
				t->sport = kt.sport;
				return;
			}
		}
	}
}

static bool km_is(const struct ct_gre_keymap *k, uint16_t shard, uint32_t idx, uint32_t id)
{
	return k->master_shard == shard && k->master_idx == idx && k->master_id == id;
}

bool nftdp_ct_gre_keymap_add(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *m,
			     const struct nftdp_ct_tuple *orig, const struct nftdp_ct_tuple *repl)
{
	struct ct_expect_part *p = part_of(s, s->cfg.shard_id);
	uint32_t idx = (uint32_t)(m - s->entries), n_free = 0, hi;
	struct ct_gre_keymap *have[2] = {NULL, NULL}, *free_slot[2] = {NULL, NULL};
	const struct nftdp_ct_tuple *want[2] = {orig, repl};

	if (!p || (m->status & IPS_DYING))
		return false;
	for (uint32_t j = 0; j < s->exp->per_part; j++) {
		struct ct_gre_keymap *k = &p->km[j];
		uint32_t w = atomic_load_explicit(&k->state, memory_order_acquire);

		if ((w & 3) == CT_EXP_LIVE && km_is(k, s->cfg.shard_id, idx, m->id))
			have[k->dir & 1] = k;
		else if ((w & 3) == CT_EXP_FREE && n_free < 2)
			free_slot[n_free++] = k;
	}
	/* nf_ct_gre_km_acceptable: the same pair again is a retransmission,
	 * another pair (or half of one) is refused */
	if (have[0] && have[1])
		return gre_key_cmp(&have[0]->tuple, orig) && gre_key_cmp(&have[1]->tuple, repl);
	if (have[0] || have[1] || n_free < 2)
		return false;
	hi = atomic_load_explicit(&p->km_hi, memory_order_relaxed);
	for (int d = 0; d < 2; d++) {
		struct ct_gre_keymap *k = free_slot[d];
		uint32_t w = atomic_load_explicit(&k->state, memory_order_relaxed);
		uint32_t j = (uint32_t)(k - p->km);

		k->dir = (uint8_t)d;
		k->master_shard = s->cfg.shard_id;
		k->master_idx = idx;
		k->master_id = m->id;
		k->tuple = *want[d];
		if (j + 1 > hi)
			hi = j + 1;
		atomic_store_explicit(&p->km_hi, hi, memory_order_release);
		atomic_fetch_add_explicit(&p->km_live, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->exp->km_live, 1, memory_order_relaxed);
		atomic_store_explicit(&k->state, km_make(km_seq(w) + 1, CT_EXP_LIVE),
				      memory_order_release);
	}
	return true;
}

void nftdp_ct_gre_keymap_destroy(struct nftdp_ct_shard *s, uint16_t master_shard,
				 uint32_t master_idx, uint32_t master_id)
{
	struct ct_expect_part *p = part_of(s, master_shard);
	uint32_t hi;

	if (!p || !atomic_load_explicit(&p->km_live, memory_order_relaxed))
		return;
	hi = atomic_load_explicit(&p->km_hi, memory_order_acquire);
	for (uint32_t j = 0; j < hi && j < s->exp->per_part; j++) {
		struct ct_gre_keymap *k = &p->km[j];
		uint32_t w = atomic_load_explicit(&k->state, memory_order_acquire);

		if ((w & 3) != CT_EXP_LIVE || !km_is(k, master_shard, master_idx, master_id))
			continue;
		/* the owner never writes a live slot: only one freer wins */
		if (!atomic_compare_exchange_strong_explicit(
			&k->state, &w, km_make(km_seq(w) + 1, CT_EXP_FREE), memory_order_acq_rel,
			memory_order_relaxed))
			continue;
		atomic_fetch_sub_explicit(&p->km_live, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&s->exp->km_live, 1, memory_order_relaxed);
	}
}
