// SPDX-License-Identifier: BSD-3-Clause
/*
 * The per-flow verdict cache: an exact-match cache per worker in front of a
 * hook's base chains (docs/vm.md "Flow cache"; OVS's megaflow cache is the
 * model, with one mask per family and transport protocol instead of one per
 * path).
 *
 * A plan, built with the generation, says for each transport protocol class
 * of a hook which packet fields its rules can read: payload loads of the
 * link, network and transport header, and meta keys. Rules that start with
 * a meta nfproto / l4proto test the class fails are left out, so an inet
 * chain's `tcp flags` rule does not make UDP payload bytes part of the key.
 * The key is those fields' bytes, with how many of each were in the packet,
 * and the class; the value is the hook's verdict and the counter slots the
 * run charged, tagged with the generation and set generation.
 *
 * A miss runs the chains with the run recorded (ctx->flow_rec) and op
 * levels checked (vm.c: an op below ctx->flow_need taints the run). Only an
 * untainted accept or drop is stored. A hit charges the recorded counters
 * with this packet's length; everything else the chains would have done
 * is nothing, which is what untainted means.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif
#ifdef __SSE4_1__
#include <smmintrin.h>
#endif

#include "flowcache.h"
#include "vm_priv.h"

#define FC_FIELDS_MAX 16
#define FC_KEY_MAX 80		     /* bytes, a multiple of 8 */
#define FC_HDR 8		     /* nfproto, hook, class, flags, l4proto, layout, 2 zero */
#define FC_HDR_PACKED (1ull << 40)   /* the key has the packed layout */
#define FC_HDR_WINDOW (1ull << 41)   /* the key has the window layout */
#define FC_VALS_MAX NFTDP_VM_IX_VALS /* l4proto values with a class of their own */
#define FC_CHAINS_MAX 256
#define FC_CHUNKS_MAX 24 /* 8-byte moves of a template's payload fields */
/* fc_entry.conn, nftdp_vm_flow_carry.g_at: a carried result may be made
 * (FC_CONN_OK); its guard's 8 bytes are in the transport header (FC_CONN_TH,
 * else the network header), from the offset in the low 6 bits */
#define FC_CONN_OK 0x80u
#define FC_CONN_TH 0x40u
#define FC_CONN_OFF 0x3fu

/* FF_OP: a meta or ct get, read by running the op (priv: key, reg, len, dir);
 * FF_PRED: a pure test, run for its outcome (one byte: go on, break, drop) */
enum fc_kind { FF_LL, FF_NH, FF_TH, FF_OP, FF_PRED };

struct fc_field {
	uint8_t kind;
	uint8_t off;
	uint8_t len;
	uint8_t at;    /* key offset of its status byte; the bytes follow */
	bool masked;   /* a load of <= 4 bytes every reader masks (bitwise) */
	uint32_t mask; /* then only these bits count (0: none, the bounds still do) */
	const struct nftdp_vm_op *op;
};

struct fc_tmpl {
	/* the key's header word less what varies per packet (the fragment
	 * bit, l4proto): family, hook, class and whether it has l4proto */
	uint64_t hdr;
	bool ok;
	bool fast; /* no link-layer field: the in-bounds case is one test */
	uint8_t n;
	uint8_t key_len;
	uint16_t nh_need, th_need; /* header bytes every field fits in; 0: none */
	struct fc_field f[FC_FIELDS_MAX];
	/* the fast case packed (tmpl_pack): each payload field in pieces of
	 * up to 8 bytes, each read as the 8 bytes that end where it ends,
	 * shifted, masked and placed into a key word; no status bytes (every
	 * field is in the packet); the meta / ct fields after the words */
	bool packed;
	uint8_t n_chunk, n_word, pk_len;
	struct fc_chunk {
		uint8_t th;    /* from the transport header, else the network header */
		uint8_t end;   /* header offset just past the piece */
		uint8_t word;  /* key word it goes to (1..n_word) */
		uint8_t shift; /* right shift of the 8 bytes read: 64 - 8 * length */
		uint8_t pos;   /* left shift into its word */
		uint64_t mask; /* its bits that count */
	} c[FC_CHUNKS_MAX];
	/* the window case (tmpl_window): the transport header where the
	 * family's fixed header ends (IPv4 without options, IPv6 without
	 * extension headers), so every payload field has one place relative
	 * to the network header. The key is the header word (with
	 * FC_HDR_WINDOW), the n_win words read from nh_off + win_start on,
	 * each under its win_mask (0 where no field is), then the meta / ct
	 * fields as packed keys have them (op_rel). */
	bool window;
	int8_t win_start; /* from the network header; >= -8 */
	uint8_t win_end;  /* bytes past the network header every field fits in */
	uint8_t win_th;	  /* where the transport header must be; 0: no field in it */
	uint8_t n_win;	  /* 1..FC_KEY_MAX / 8 - 1 */
	uint8_t win_len;  /* the key's length */
	/* win_end where window is set, else more than any packet has */
	uint32_t win_need;
	uint64_t win_mask[FC_KEY_MAX / 8 - 1];
	/* the meta / ct fields and tests of the packed and window layouts,
	 * after their words: each one's status byte at op_rel from the area's
	 * start (tmpl_layout) */
	uint8_t n_opf, op_bytes;
	uint8_t opf[FC_FIELDS_MAX];
	uint8_t op_rel[FC_FIELDS_MAX];
	/* the key of a packet with every field in bounds, header and bytes 0 */
	alignas(8) uint8_t image[FC_KEY_MAX];
	/* a run that ended at a base chain rule below this (the policy: past
	 * the last rule), without a jump, read only what a connection fixes
	 * (conn_read); 0: none did. One that ended from guard_from on needs
	 * the guard (guard_conn, guard_bytes: fc_entry.conn, .g_bytes). */
	uint32_t conn_lim, guard_from;
	uint8_t guard_conn, guard_bytes;
};

struct nftdp_vm_flow_plan {
	uint8_t need;	 /* ctx->flow_need while a miss runs */
	uint8_t hook;	 /* its flood guard: nftdp_vm_flowcache.g[hook] */
	bool conn;	 /* one base chain: a run's end says what it read */
	bool reads_meta; /* some template keys a meta / ct field or a test */
	uint8_t class_of[256];
	uint8_t class_none;
	uint8_t n_tmpl;
	struct fc_tmpl t[FC_VALS_MAX + 2];
	/* a packet's template and its key's header word but the fragment
	 * bit, in one line (key_build): cls_of[l4proto] (&t[class_of[l4proto]],
	 * l4proto in the header), cls_none (&t[class_none]) */
	struct fc_cls {
		const struct fc_tmpl *t;
		uint64_t hdr;
	} cls_of[256], cls_none;
};

/* one entry, two cache lines */
struct fc_entry {
	uint64_t gen; /* generation id + 1; 0: empty */
	uint64_t set_gen;
	uint32_t hash;
	uint32_t verdict;
	uint8_t key_len, n_ctr;
	/* the run read only what the packet's connection fixes and the
	 * guard (FC_CONN_*: 0, it read more) */
	uint8_t conn;
	uint8_t g_bytes; /* the guard's bytes, a bit each (0: none) */
	uint32_t ctr[NFTDP_VM_FLOW_CTRS];
	uint8_t key[FC_KEY_MAX];
};
_Static_assert(sizeof(struct fc_entry) == 128, "a cache entry is two lines");

/* a hook's flood guard: its window, its sample */
struct fc_guard {
	uint32_t probes, hits, tick;
	bool sparse; /* keys a sample only */
};

struct nftdp_vm_flowcache {
	uint32_t mask; /* entries - 1; buckets are pairs */
	bool verify;
	/* one per hook: a hook whose keys never repeat (prerouting keyed on
	 * the source under a flood) goes sparse while another's keep hitting
	 * (forward keyed on ct state) */
	struct fc_guard g[NFTDP_VM_GEN_HOOK_MAX];
	struct nftdp_vm_flow_stats st;
	struct fc_entry *e;
};

/*
 * The flood guard. A cache that keeps missing (new flows, scans, floods)
 * costs every packet a key, a probe and an insert for nothing, and its
 * inserts evict the flows that do repeat. So, as OVS's exact-match cache
 * inserts with a probability: when fewer than 1 in FC_GUARD_ENTER of a
 * window of FC_GUARD_WINDOW probes hit, the worker keys 1 packet in
 * FC_GUARD_SAMPLE only (the others run the chains as without a cache:
 * the same verdicts and effects), until its sampled probes hit 1 in
 * FC_GUARD_LEAVE again. Each hook has its own guard. Verify mode keys
 * every packet.
 */
#define FC_GUARD_WINDOW 4096u
#define FC_GUARD_ENTER 16u
#define FC_GUARD_LEAVE 8u
#define FC_GUARD_SAMPLE 8u

/* a burst's probes and hits at hook into its guard's window; at its end,
 * the mode */
static inline void guard_note(struct nftdp_vm_flowcache *fc, uint8_t hook, unsigned int probes,
			      unsigned int hits)
{
	struct fc_guard *g = &fc->g[hook];
	/* sparse: a window of as many packets, fewer of them probed */
	uint32_t window;

	if (!probes)
		return; /* also: no cache (verify's probe without plans) */
	window = g->sparse ? FC_GUARD_WINDOW / FC_GUARD_SAMPLE : FC_GUARD_WINDOW;
	g->hits += hits;
	g->probes += probes;
	if (g->probes < window)
		return;
	if (!fc->verify)
		g->sparse = g->hits * (g->sparse ? FC_GUARD_LEAVE : FC_GUARD_ENTER) < g->probes;
	g->probes = 0;
	g->hits = 0;
}

/* ---------- the plan (control thread) ---------- */

static bool tmpl_add(struct fc_tmpl *t, uint8_t kind, uint32_t off, uint32_t len,
		     const struct nftdp_vm_op *op, bool masked, uint32_t mask)
{
	if (len == 0 || off + len > 255 || (masked && len > 4)) {
		t->ok = false;
		return false;
	}
	for (unsigned int i = 0; i < t->n; i++) {
		struct fc_field *f = &t->f[i];

		if (kind == FF_OP) {
			/* the same key (and ct direction) of the same expression */
			if (f->kind == FF_OP && f->op->ops->flow == op->ops->flow &&
			    f->op->priv[0] == op->priv[0] && f->op->priv[3] == op->priv[3])
				return true;
			continue;
		}
		if (kind == FF_PRED) {
			if (f->kind == FF_PRED && f->op == op)
				return true;
			continue;
		}
		if (f->kind != kind)
			continue;
		if (masked) {
			/* the same masked load: either mask's bits count */
			if (f->masked && f->off == off && f->len == len) {
				f->mask |= mask;
				return true;
			}
			/* inside a whole range: covered */
			if (!f->masked && f->off <= off && off + len <= (uint32_t)f->off + f->len)
				return true;
			continue;
		}
		/* overlapping or touching whole ranges of one header merge */
		if (!f->masked && off <= (uint32_t)f->off + f->len && f->off <= off + len) {
			uint32_t lo = off < f->off ? off : f->off;
			uint32_t end = (uint32_t)f->off + f->len;
			uint32_t hi = off + len > end ? off + len : end;

			f->off = (uint8_t)lo;
			f->len = (uint8_t)(hi - lo);
			return true;
		}
	}
	if (t->n == FC_FIELDS_MAX) {
		t->ok = false;
		return false;
	}
	t->f[t->n++] = (struct fc_field){.kind = kind,
					 .off = (uint8_t)off,
					 .len = (uint8_t)len,
					 .masked = masked,
					 .mask = mask,
					 .op = op};
	return true;
}

/*
 * The fields op reads into t; false if t can no longer be cached. next is
 * the rule's op after it, or NULL: a short load that a bitwise op masks in
 * place (`tcp flags & (syn | rst)`) only keys on the mask's bits, so ACK
 * and PSH do not split a flow.
 */
static bool op_fields(struct fc_tmpl *t, const struct nftdp_vm_op *op,
		      const struct nftdp_vm_op *next)
{
	const struct nftdp_vm_payload *p = (const void *)op->priv;
	const struct nftdp_vm_meta *m = (const void *)op->priv;
	const struct nftdp_vm_bitwise_fast *b = next ? (const void *)next->priv : NULL;
	static const uint8_t kinds[] = {
	    [NFT_PAYLOAD_LL_HEADER] = FF_LL,
	    [NFT_PAYLOAD_NETWORK_HEADER] = FF_NH,
	    [NFT_PAYLOAD_TRANSPORT_HEADER] = FF_TH,
	};
	uint32_t mask = 0;
	bool masked = false;

	if (op->flow == NFTDP_VM_FLOW_LVL_NEVER)
		return true; /* a run that gets here is not cached */
	switch (op->fast) {
	case NFTDP_VM_FAST_META:
	case NFTDP_VM_FAST_META_CMP:
		return true; /* nfproto / l4proto: in the key's header */
	}
	switch (op->ops->flow) {
	case NFTDP_VM_FLOW_PAYLOAD:
		if (p->base > NFT_PAYLOAD_TRANSPORT_HEADER)
			return false;
		if (op->fast != NFTDP_VM_FAST_PAYLOAD_CMP && p->len <= 4 && next &&
		    next->fast == NFTDP_VM_FAST_BITWISE && b->sreg == p->dreg &&
		    b->dreg == p->dreg) {
			uint8_t mb[4] = {0};

			memcpy(mb, &b->mask, p->len);
			memcpy(&mask, mb, 4);
			masked = true; /* a mask of 0 still breaks out of bounds */
		}
		return tmpl_add(t, kinds[p->base], p->offset, p->len, NULL, masked, mask);
	case NFTDP_VM_FLOW_META:
		if (m->key == NFT_META_NFPROTO || m->key == NFT_META_L4PROTO)
			return true;
		return tmpl_add(t, FF_OP, 0, m->len, op, false, 0);
	case NFTDP_VM_FLOW_CT:
		return tmpl_add(t, FF_OP, 0, m->len, op, false, 0);
	case NFTDP_VM_FLOW_PRED:
		return tmpl_add(t, FF_PRED, 0, 1, op, false, 0);
	}
	return true;
}

/* the fields of every rule of ch (and the chains it jumps to) a packet of
 * class c can reach */
struct fc_walk {
	uint8_t nfproto;
	const struct nftdp_vm_l4class *c;
	const struct nftdp_vm_chain **seen;
	unsigned int n_seen;
	const struct nftdp_vm_chain *const *all; /* the generation's chains */
	unsigned int n_all;
};

static void walk(struct fc_tmpl *t, const struct nftdp_vm_chain *ch, struct fc_walk *wk)
{
	const struct nftdp_vm_chain *tg[64];

	for (unsigned int i = 0; i < wk->n_seen; i++)
		if (wk->seen[i] == ch)
			return;
	if (wk->n_seen == FC_CHAINS_MAX) {
		t->ok = false;
		return;
	}
	wk->seen[wk->n_seen++] = ch;
	for (uint32_t r = 0; r < ch->n_rules && t->ok; r++) {
		const struct nftdp_vm_rule *rule = &ch->rules[r];

		if (nftdp_vm_rule_pruned(ch, rule, wk->nfproto, wk->c))
			continue;
		for (uint32_t i = 0; i < rule->n_ops && t->ok; i++) {
			const struct nftdp_vm_op *op = &ch->ops[rule->first_op + i];
			int nt;

			if (!op_fields(t, op, i + 1 < rule->n_ops ? op + 1 : NULL)) {
				t->ok = false;
				break;
			}
			if (nftdp_vm_lookup_is_vmap(op)) {
				/* any regular chain of the generation */
				for (unsigned int j = 0; j < wk->n_all && t->ok; j++)
					if (wk->all[j] && !wk->all[j]->base)
						walk(t, wk->all[j], wk);
				continue;
			}
			if (!op->ops->targets)
				continue;
			nt = op->ops->targets(op->priv, tg, 64);
			if (nt >= 64) {
				t->ok = false; /* more targets than we looked at */
				break;
			}
			for (int j = 0; j < nt; j++)
				if (tg[j])
					walk(t, tg[j], wk);
		}
	}
}

/* status byte + bytes of each field after the header, 8-byte multiple */
static void tmpl_layout(struct fc_tmpl *t)
{
	uint32_t at = FC_HDR;

	for (unsigned int i = 0; i < t->n && t->ok; i++) {
		t->f[i].at = (uint8_t)at;
		at += 1u + t->f[i].len;
		if (at > FC_KEY_MAX)
			t->ok = false;
	}
	t->key_len = (uint8_t)((at + 7) & ~7u);
	if (t->key_len > FC_KEY_MAX) {
		t->ok = false;
		return;
	}
	/* the op area of the packed and window layouts */
	t->n_opf = 0;
	at = 0;
	for (unsigned int i = 0; i < t->n; i++) {
		if (t->f[i].kind != FF_OP && t->f[i].kind != FF_PRED)
			continue;
		t->opf[t->n_opf] = (uint8_t)i;
		t->op_rel[t->n_opf++] = (uint8_t)at;
		at += 1u + t->f[i].len;
	}
	t->op_bytes = (uint8_t)at; /* < FC_KEY_MAX: the full layout holds them */
	t->fast = true;
	for (unsigned int i = 0; i < t->n; i++) {
		const struct fc_field *f = &t->f[i];
		uint16_t end = (uint16_t)(f->off + f->len);

		switch (f->kind) {
		case FF_NH:
			t->nh_need = end > t->nh_need ? end : t->nh_need;
			t->image[f->at] = (uint8_t)(f->len + 1);
			break;
		case FF_TH:
			t->th_need = end > t->th_need ? end : t->th_need;
			t->image[f->at] = (uint8_t)(f->len + 1);
			break;
		case FF_LL:
			t->fast = false;
			break;
		}
	}
}

/*
 * The packed fast case (little-endian hosts; docs/vm.md "Flow cache"): a
 * packet with every field in bounds and its network header 8 or more
 * bytes into the frame gets the header word (with FC_HDR_PACKED) and
 * then words of field pieces, first fit; the 8 bytes read for a piece end
 * where the piece ends, so no read passes a field's end or starts before
 * the frame. Meta and ct fields follow the words as in the full layout.
 */
static void tmpl_pack(struct fc_tmpl *t)
{
	uint8_t used[FC_KEY_MAX / 8] = {0}; /* bytes taken in each word */
	unsigned int at;

	t->packed = false;
	if (!t->ok || !t->fast || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return;
	t->n_chunk = 0;
	t->n_word = 1; /* the header */
	for (unsigned int i = 0; i < t->n; i++) {
		const struct fc_field *f = &t->f[i];

		if (f->kind == FF_OP || f->kind == FF_PRED)
			continue; /* in the op area after the words */
		for (unsigned int o = 0; o < f->len; o += 8) {
			unsigned int len = f->len - o < 8 ? f->len - o : 8, w = 1;
			struct fc_chunk *c;
			uint64_t mask = 0;

			while (w < t->n_word && used[w] + len > 8)
				w++;
			if (t->n_chunk == FC_CHUNKS_MAX || w >= FC_KEY_MAX / 8)
				return;
			if (w == t->n_word)
				t->n_word++;
			c = &t->c[t->n_chunk++];
			c->th = f->kind == FF_TH;
			c->end = (uint8_t)(f->off + o + len);
			c->word = (uint8_t)w;
			c->shift = (uint8_t)(64 - 8 * len);
			c->pos = (uint8_t)(8 * used[w]);
			if (f->masked)
				memcpy(&mask, &f->mask, 4); /* masked fields are <= 4 bytes */
			else
				mask = len == 8 ? ~0ull : (1ull << (8 * len)) - 1;
			c->mask = mask;
			used[w] = (uint8_t)(used[w] + len);
		}
	}
	at = (8u * t->n_word + t->op_bytes + 7) & ~7u;
	if (at > FC_KEY_MAX)
		return;
	t->pk_len = (uint8_t)at;
	t->packed = true;
}

/*
 * The window case (little-endian hosts): for nfproto's plain header length
 * hl (20, 40), the bytes [win_start, win_end) past the network header hold
 * every payload field when the transport header is at hl, read as whole
 * words and masked: a load, an and and a store a word instead of a piece
 * each. The words end where the last field ends, so no read passes it; a
 * window starting up to 8 bytes before the network header reads the link
 * header, which the mask then clears.
 */
static void tmpl_window(struct fc_tmpl *t, uint8_t nfproto)
{
	uint32_t hl = nfproto == NFPROTO_IPV4 ? 20 : nfproto == NFPROTO_IPV6 ? 40 : 0;
	uint32_t lo = UINT32_MAX, hi = 0, at;
	int32_t start;

	t->window = false;
	if (!t->ok || !t->fast || !hl || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return;
	t->win_th = 0;
	for (unsigned int i = 0; i < t->n; i++) {
		const struct fc_field *f = &t->f[i];
		uint32_t off;

		if (f->kind != FF_NH && f->kind != FF_TH)
			continue;
		off = f->off + (f->kind == FF_TH ? hl : 0);
		if (f->kind == FF_TH)
			t->win_th = (uint8_t)hl;
		lo = off < lo ? off : lo;
		hi = off + f->len > hi ? off + f->len : hi;
	}
	if (!hi)
		return; /* no payload field: the packed key is as short */
	t->n_win = (uint8_t)((hi - lo + 7) / 8);
	start = (int32_t)hi - 8 * t->n_win;
	if (hi > 255 || 8u * (1u + t->n_win) > FC_KEY_MAX)
		return;
	memset(t->win_mask, 0, sizeof(t->win_mask));
	for (unsigned int i = 0; i < t->n; i++) {
		const struct fc_field *f = &t->f[i];
		uint8_t *mb = (uint8_t *)t->win_mask;
		uint8_t fm[4];
		int32_t pos;

		if (f->kind != FF_NH && f->kind != FF_TH)
			continue;
		pos = (int32_t)(f->off + (f->kind == FF_TH ? hl : 0)) - start;
		memcpy(fm, &f->mask, 4);
		for (unsigned int j = 0; j < f->len; j++)
			mb[pos + (int32_t)j] |= f->masked ? fm[j] : 0xff;
	}
	at = (8u * (1u + t->n_win) + t->op_bytes + 7) & ~7u;
	if (at > FC_KEY_MAX)
		return;
	t->win_start = (int8_t)start;
	t->win_end = (uint8_t)hi;
	t->win_len = (uint8_t)at;
	t->window = true;
}

/* what an op reads of the packets of one connection (conn_read) */
enum conn_read {
	CONN_FIXED, /* what the connection fixes */
	CONN_GUARD, /* header bytes a carried result compares (*base, *span) */
	CONN_MORE,  /* anything else */
};

/* header bytes 0..FC_GUARD_END of the network or transport header a
 * guard may cover */
#define FC_GUARD_END 64

/*
 * What op reads of a packet, for a carried result (docs/vm.md "Flow
 * cache"). Fixed: every packet of one connection, direction and ctinfo,
 * through one input device, gives op the same input: the network header's
 * protocol and addresses, the ports of a transport with ports, `meta`'s
 * family, protocols and devices, `ct state`, `direction`, `l3proto` and
 * `protocol`, and registers (what such ops loaded). Guard: a load of other
 * bytes of the network header, or of the transport header of a class with
 * one protocol, within the first FC_GUARD_END bytes (`ip ttl`, `ip
 * frag-off`, `ip6 hoplimit`, `tcp flags`): *base is its header
 * (NFT_PAYLOAD_NETWORK_HEADER or _TRANSPORT_HEADER), *span gets a bit per
 * byte it reads; a packet whose bytes there equal the carrying packet's
 * gives the op the same input (a load reads nothing else). An op whose
 * level taints a run never has its result stored, whatever this says.
 */
static enum conn_read conn_read(const struct nftdp_vm_op *op, uint8_t nfproto,
				const struct nftdp_vm_l4class *c, uint8_t *base, uint64_t *span)
{
	const struct nftdp_vm_payload *p = (const void *)op->priv;
	const struct nftdp_vm_meta *m = (const void *)op->priv;
	uint32_t end = (uint32_t)p->offset + p->len;

	switch (op->fast) {
	case NFTDP_VM_FAST_META:
	case NFTDP_VM_FAST_META_CMP:
		return CONN_FIXED; /* nfproto / l4proto */
	}
	switch (op->ops->flow) {
	case NFTDP_VM_FLOW_REGS:
	case NFTDP_VM_FLOW_COUNTER:
	case NFTDP_VM_FLOW_LOOKUP:
	case NFTDP_VM_FLOW_OBJREF:
		return CONN_FIXED;
	case NFTDP_VM_FLOW_PAYLOAD: {
		bool th = p->base == NFT_PAYLOAD_TRANSPORT_HEADER && c->kind == NFTDP_VM_L4_VAL;

		if (p->base == NFT_PAYLOAD_NETWORK_HEADER && nfproto == NFPROTO_IPV4 &&
		    ((p->offset == 9 && end == 10) || (p->offset >= 12 && end <= 20)))
			return CONN_FIXED;
		if (p->base == NFT_PAYLOAD_NETWORK_HEADER && nfproto == NFPROTO_IPV6 &&
		    p->offset >= 8 && end <= 40)
			return CONN_FIXED;
		if (th && end <= 4 &&
		    (c->val == IPPROTO_TCP || c->val == IPPROTO_UDP || c->val == IPPROTO_UDPLITE ||
		     c->val == IPPROTO_SCTP || c->val == IPPROTO_DCCP))
			return CONN_FIXED;
		if ((p->base != NFT_PAYLOAD_NETWORK_HEADER && !th) || p->len == 0 || p->len > 8 ||
		    end > FC_GUARD_END)
			return CONN_MORE;
		*base = p->base;
		*span |= (~0ull >> (64 - p->len)) << p->offset;
		return CONN_GUARD;
	}
	case NFTDP_VM_FLOW_META:
		switch (m->key) {
		case NFT_META_NFPROTO:
		case NFT_META_L4PROTO:
		case NFT_META_PROTOCOL:
		case NFT_META_IIF:
		case NFT_META_IIFNAME:
		case NFT_META_IIFTYPE:
		case NFT_META_OIF:
		case NFT_META_OIFNAME:
		case NFT_META_OIFTYPE:
			return CONN_FIXED;
		}
		return CONN_MORE;
	case NFTDP_VM_FLOW_CT:
		switch (m->key) {
		case NFT_CT_STATE:
		case NFT_CT_DIRECTION:
		case NFT_CT_L3PROTOCOL:
		case NFT_CT_PROTOCOL:
			return CONN_FIXED;
		}
		return CONN_MORE;
	}
	return CONN_MORE;
}

/* whether the bytes span has a bit for fit in one 8-byte guard */
static bool guard_fits(uint64_t span)
{
	return !span || 64 - __builtin_clzll(span) - __builtin_ctzll(span) <= 8;
}

/* the guard of span in base: the entry's conn byte (FC_CONN_*, with the
 * guard's offset) and its byte mask; the 8 bytes end where span does */
static void guard_encode(uint8_t base, uint64_t span, uint8_t *conn, uint8_t *bytes)
{
	unsigned int hi = span ? 64u - (unsigned int)__builtin_clzll(span) : 0;
	unsigned int off = hi > 8 ? hi - 8 : 0;

	*conn = (uint8_t)(FC_CONN_OK | off |
			  (span && base == NFT_PAYLOAD_TRANSPORT_HEADER ? FC_CONN_TH : 0));
	*bytes = (uint8_t)(span >> off);
}

/* t->conn_lim, t->guard_from and the guard for the one base chain ch and
 * class c: the first rule a packet of c can reach that reads more than its
 * connection fixes and one guard covers */
static void tmpl_conn(struct fc_tmpl *t, const struct nftdp_vm_chain *ch, uint8_t nfproto,
		      const struct nftdp_vm_l4class *c)
{
	uint64_t span = 0;
	uint8_t base = 0;
	uint32_t r;

	t->conn_lim = 0;
	t->guard_from = NFTDP_VM_FLOW_END_POLICY + 1u;
	t->guard_conn = FC_CONN_OK;
	t->guard_bytes = 0;
	if (ch->n_rules >= NFTDP_VM_FLOW_END_POLICY)
		return; /* rule numbers do not fit the record */
	for (r = 0; r < ch->n_rules; r++) {
		const struct nftdp_vm_rule *rule = &ch->rules[r];
		uint64_t s = span;
		uint8_t b = base;
		bool fixed = true;

		if (nftdp_vm_rule_pruned(ch, rule, nfproto, c))
			continue;
		for (uint32_t i = 0; i < rule->n_ops && fixed; i++) {
			uint8_t ob = 0;

			switch (conn_read(&ch->ops[rule->first_op + i], nfproto, c, &ob, &s)) {
			case CONN_FIXED:
				break;
			case CONN_GUARD:
				fixed = !b || b == ob; /* one header */
				b = ob;
				break;
			case CONN_MORE:
				fixed = false;
				break;
			}
		}
		if (!fixed || !guard_fits(s))
			break;
		if (s != span && t->guard_from > r)
			t->guard_from = r;
		span = s;
		base = b;
	}
	/* every rule: a verdict by the policy too */
	t->conn_lim = r == ch->n_rules ? NFTDP_VM_FLOW_END_POLICY + 1u : r;
	guard_encode(base, span, &t->guard_conn, &t->guard_bytes);
}

struct nftdp_vm_flow_plan *nftdp_vm_flow_plan_build(const struct nftdp_vm_chain *const *base,
						    unsigned int n_base, uint8_t nfproto,
						    uint8_t hook, bool writes_sets,
						    const struct nftdp_vm_chain *const *all,
						    unsigned int n_all)
{
	struct nftdp_vm_flow_plan *fp;
	const struct nftdp_vm_chain **seen;
	uint8_t vals[FC_VALS_MAX];
	unsigned int n_vals = 0;

	if (n_base == 0)
		return NULL;
	fp = calloc(1, sizeof(*fp));
	seen = calloc(FC_CHAINS_MAX, sizeof(*seen));
	if (!fp || !seen) {
		free(fp);
		free(seen);
		return NULL;
	}
	fp->need = writes_sets ? NFTDP_VM_FLOW_LVL_ALWAYS : NFTDP_VM_FLOW_LVL_NO_DYNSET;
	fp->hook = hook < NFTDP_VM_GEN_HOOK_MAX ? hook : 0;
	fp->conn = n_base == 1;
	/* the l4proto values rules test: each gets a class (in the chains a
	 * base chain reaches: every chain of the table is enough) */
	for (unsigned int b = 0; b < n_base; b++) {
		struct fc_tmpl scratch = {.ok = true};
		struct nftdp_vm_l4class any = {.kind = NFTDP_VM_L4_OTHER};
		struct fc_walk wk = {nfproto, &any, seen, 0, all, n_all};

		walk(&scratch, base[b], &wk);
		for (unsigned int i = 0; i < wk.n_seen; i++)
			nftdp_vm_l4_vals(seen[i], vals, &n_vals, FC_VALS_MAX);
	}
	fp->n_tmpl = (uint8_t)(n_vals + 2);
	for (unsigned int k = 0; k < fp->n_tmpl; k++) {
		struct nftdp_vm_l4class c;
		struct fc_tmpl *t = &fp->t[k];
		struct fc_walk wk = {nfproto, &c, seen, 0, all, n_all};

		nftdp_vm_l4class_of(&c, k, vals, n_vals);
		t->ok = true;
		for (unsigned int b = 0; b < n_base && t->ok; b++)
			walk(t, base[b], &wk);
		tmpl_layout(t);
		tmpl_pack(t);
		tmpl_window(t, nfproto);
		if (fp->conn)
			tmpl_conn(t, base[0], nfproto, &c);
		for (unsigned int i = 0; t->ok && i < t->n; i++)
			fp->reads_meta |= t->f[i].kind == FF_OP || t->f[i].kind == FF_PRED;
	}
	memset(fp->class_of, n_vals, sizeof(fp->class_of));
	for (unsigned int k = 0; k < n_vals; k++)
		fp->class_of[vals[k]] = (uint8_t)k;
	fp->class_none = (uint8_t)(n_vals + 1);
	/* a packet without l4proto has no transport header: the window
	 * case, which takes one at a fixed place, is not its */
	if (fp->t[fp->class_none].win_th)
		fp->t[fp->class_none].window = false;
	/* a packet with l4proto takes a class of class_of, one without it
	 * class_none: the class says which */
	for (unsigned int k = 0; k < fp->n_tmpl; k++) {
		fp->t[k].hdr = (uint64_t)nfproto | (uint64_t)hook << 8 | (uint64_t)k << 16 |
			       (uint64_t)(k != fp->class_none) << 24;
		fp->t[k].win_need = fp->t[k].window ? fp->t[k].win_end : UINT32_MAX;
	}
	for (unsigned int v = 0; v < 256; v++) {
		const struct fc_tmpl *t = &fp->t[fp->class_of[v]];

		fp->cls_of[v] = (struct fc_cls){t, t->hdr | (uint64_t)v << 32};
	}
	fp->cls_none = (struct fc_cls){&fp->t[fp->class_none], fp->t[fp->class_none].hdr};
	free(seen);
	return fp;
}

void nftdp_vm_flow_plan_free(struct nftdp_vm_flow_plan *fp)
{
	free(fp);
}

bool nftdp_vm_flow_plan_reads_meta(const struct nftdp_vm_flow_plan *fp)
{
	return fp && fp->reads_meta;
}

bool nftdp_vm_flow_plan_usable(const struct nftdp_vm_flow_plan *fp)
{
	for (unsigned int k = 0; fp && k < fp->n_tmpl; k++)
		if (fp->t[k].ok)
			return true;
	return false;
}

/* ---------- the cache ---------- */

int nftdp_vm_flowcache_create(unsigned int entries, struct nftdp_vm_flowcache **out)
{
	struct nftdp_vm_flowcache *fc;
	uint32_t n = 2;

	if (!out || entries == 0 || entries > (1u << 24))
		return -EINVAL;
	while (n < entries)
		n <<= 1;
	fc = calloc(1, sizeof(*fc));
	if (!fc)
		return -ENOMEM;
	fc->e = aligned_alloc(64, (size_t)n * sizeof(*fc->e));
	if (!fc->e) {
		free(fc);
		return -ENOMEM;
	}
	memset(fc->e, 0, (size_t)n * sizeof(*fc->e));
	fc->mask = n - 1;
	*out = fc;
	return 0;
}

void nftdp_vm_flowcache_destroy(struct nftdp_vm_flowcache *fc)
{
	if (!fc)
		return;
	free(fc->e);
	free(fc);
}

void nftdp_vm_flowcache_verify(struct nftdp_vm_flowcache *fc, bool on)
{
	if (fc)
		fc->verify = on;
}

bool nftdp_vm_flowcache_verifying(const struct nftdp_vm_flowcache *fc)
{
	return fc->verify;
}

bool nftdp_vm_flowcache_sparse(const struct nftdp_vm_flowcache *fc)
{
	if (!fc)
		return false;
	for (unsigned int h = 0; h < NFTDP_VM_GEN_HOOK_MAX; h++)
		if (fc->g[h].sparse)
			return true;
	return false;
}

void nftdp_vm_flowcache_stats(const struct nftdp_vm_flowcache *fc, struct nftdp_vm_flow_stats *out)
{
	if (!fc) {
		memset(out, 0, sizeof(*out));
		return;
	}
	out->hits = __atomic_load_n(&fc->st.hits, __ATOMIC_RELAXED);
	out->misses = __atomic_load_n(&fc->st.misses, __ATOMIC_RELAXED);
	out->inserts = __atomic_load_n(&fc->st.inserts, __ATOMIC_RELAXED);
	out->uncacheable = __atomic_load_n(&fc->st.uncacheable, __ATOMIC_RELAXED);
	out->mismatches = __atomic_load_n(&fc->st.mismatches, __ATOMIC_RELAXED);
	out->carried = __atomic_load_n(&fc->st.carried, __ATOMIC_RELAXED);
	out->unkeyed = __atomic_load_n(&fc->st.unkeyed, __ATOMIC_RELAXED);
}

/* ---------- packet path ---------- */

/* memcpy of up to 255 bytes without a call: overlapping fixed-size moves */
static inline void copy_small(uint8_t *d, const uint8_t *s, uint32_t n)
{
	if (n >= 8) {
		uint32_t i = 0;

		for (; i + 8 <= n; i += 8)
			memcpy(d + i, s + i, 8);
		if (i < n)
			memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n >= 2) {
		memcpy(d, s, 2);
		memcpy(d + n - 2, s + n - 2, 2);
	} else if (n) {
		*d = *s;
	}
}

/* a meta or ct key field: the op's own eval, and whether it broke */
static inline void op_field(const struct fc_field *f, unsigned int at, struct nftdp_vm_pkt *pkt,
			    struct nftdp_vm_ctx *ctx, uint8_t *key)
{
	const struct nftdp_vm_meta *m = (const void *)f->op->priv;
	struct nftdp_vm_regs regs;

	regs.verdict.code = NFT_CONTINUE;
	f->op->eval(f->op, &regs, pkt, ctx);
	if (f->kind == FF_PRED) {
		key[at] = 1;
		key[at + 1] = regs.verdict.code == (uint32_t)NFT_CONTINUE ? 0
			      : regs.verdict.code == (uint32_t)NFT_BREAK  ? 1
									  : 2;
		return;
	}
	if (regs.verdict.code == (uint32_t)NFT_CONTINUE) {
		key[at] = 1;
		copy_small(key + at + 1, (const uint8_t *)&regs.data[m->reg], f->len);
	} else {
		key[at] = 0;
		memset(key + at + 1, 0, f->len);
	}
}

/* a masked load keys on its mask's bits only */
static inline void mask_field(const struct fc_field *f, uint8_t *key, uint32_t n)
{
	uint8_t mb[4];

	memcpy(mb, &f->mask, 4);
	for (uint32_t j = 0; j < n; j++)
		key[f->at + 1 + j] &= mb[j];
}

/* the key hash, a word at a time: one crc32 instruction a word */
static inline uint64_t hash_step(uint64_t h, uint64_t w)
{
#ifdef __SSE4_2__
	return _mm_crc32_u64(h, w);
#else
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
#endif
}

#ifdef __SSE4_2__
#define HASH_SEED 0xffffffffu
#else
#define HASH_SEED 0x9e3779b97f4a7c15ull
#endif

static inline uint32_t key_hash(const uint8_t *key, unsigned int len)
{
	uint64_t h = HASH_SEED;

	for (unsigned int i = 0; i < len; i += 8) {
		uint64_t w;

		memcpy(&w, key + i, 8);
		h = hash_step(h, w);
	}
	return (uint32_t)h;
}

/* len, with the hash of key's len bytes into *h */
static inline unsigned int hashed(const uint8_t *key, unsigned int len, uint32_t *h)
{
	*h = key_hash(key, len);
	return len;
}

/* The key of pkt into key (FC_KEY_MAX bytes) and its hash into *h; its
 * length, 0 when pkt's class is not cached. */
static inline __attribute__((always_inline)) unsigned int
key_build(const struct nftdp_vm_flow_plan *fp, struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx,
	  uint8_t *key, uint32_t *h)
{
	bool l4 = pkt->flags & NFTDP_VM_PKT_F_L4PROTO;
	const struct fc_cls *c = l4 ? &fp->cls_of[pkt->l4proto] : &fp->cls_none;
	const struct fc_tmpl *t = c->t;
	uint64_t hdr = c->hdr | (pkt->fragoff ? 2ull << 24 : 0);

	/* a window template is a usable one (tmpl_window), so its test
	 * comes first (win_need: whether it is one); a template with win_th
	 * is never the one of a packet without l4proto
	 * (nftdp_vm_flow_plan_build) */
	if ((uint64_t)pkt->nh_off + t->win_need <= pkt->len && pkt->nh_off >= 8 &&
	    (!t->win_th || pkt->th_off == pkt->nh_off + t->win_th)) {
		const uint8_t *s = pkt->data + pkt->nh_off + t->win_start;
		uint64_t kw0 = hdr | FC_HDR_WINDOW, hv = hash_step(HASH_SEED, kw0);

		memcpy(key, &kw0, 8);
		/* unrolled: a load, an and, a store and a crc32 a word; a
		 * test per word past the first rather than a switch, whose
		 * indirect jump mispredicts wherever templates of different
		 * lengths alternate (IPv4 and IPv6 keys): a conditional
		 * branch follows the branches before it */
#define WIN_WORD(w)                                                                                \
	do {                                                                                       \
		uint64_t v;                                                                        \
		memcpy(&v, s + 8 * (w), 8);                                                        \
		v &= t->win_mask[w];                                                               \
		memcpy(key + 8 * ((w) + 1), &v, 8);                                                \
		hv = hash_step(hv, v);                                                             \
	} while (0)
		WIN_WORD(0);
#define WIN_NEXT(w)                                                                                \
	do {                                                                                       \
		if (t->n_win <= (w))                                                               \
			goto win_done;                                                             \
		WIN_WORD(w);                                                                       \
	} while (0)
		_Static_assert(FC_KEY_MAX / 8 - 1 == 9, "the window has nine words at most");
		WIN_NEXT(1);
		WIN_NEXT(2);
		WIN_NEXT(3);
		WIN_NEXT(4);
		WIN_NEXT(5);
		WIN_NEXT(6);
		WIN_NEXT(7);
		WIN_NEXT(8);
	win_done:
#undef WIN_NEXT
#undef WIN_WORD
		if (t->n_opf) {
			unsigned int w = 1u + t->n_win;

			for (unsigned int x = 8 * w; x < t->win_len; x += 8)
				memset(key + x, 0, 8);
			for (unsigned int i = 0; i < t->n_opf; i++)
				op_field(&t->f[t->opf[i]], 8 * w + t->op_rel[i], pkt, ctx, key);
			for (; 8 * w < t->win_len; w++) {
				uint64_t v;

				memcpy(&v, key + 8 * w, 8);
				hv = hash_step(hv, v);
			}
		}
		*h = (uint32_t)hv;
		return t->win_len;
	}
	if (!t->ok)
		return 0;
	if (t->fast && (uint64_t)pkt->nh_off + t->nh_need <= pkt->len &&
	    (!t->th_need || (l4 && (uint64_t)pkt->th_off + t->th_need <= pkt->len))) {
		if (t->packed && pkt->nh_off >= 8) {
			const uint8_t *hb[2] = {pkt->data + pkt->nh_off, pkt->data + pkt->th_off};
			/* fixed sizes: zeroing and the copy out stay inline */
			uint64_t kw[FC_KEY_MAX / 8] = {0};

			kw[0] = hdr | FC_HDR_PACKED;
			for (unsigned int i = 0; i < t->n_chunk; i++) {
				const struct fc_chunk *c = &t->c[i];
				uint64_t v;

				memcpy(&v, hb[c->th] + c->end - 8, 8);
				kw[c->word] |= ((v >> c->shift) & c->mask) << c->pos;
			}
			memcpy(key, kw, sizeof(kw));
			for (unsigned int i = 0; i < t->n_opf; i++)
				op_field(&t->f[t->opf[i]], 8u * t->n_word + t->op_rel[i], pkt, ctx,
					 key);
			return hashed(key, t->pk_len, h);
		}
		/* every field in the packet: the image's status bytes hold */
		for (unsigned int i = 0; i < t->key_len; i += 8)
			memcpy(key + i, t->image + i, 8);
		memcpy(key, &hdr, sizeof(hdr));
		for (unsigned int i = 0; i < t->n; i++) {
			const struct fc_field *f = &t->f[i];

			if (f->kind == FF_OP || f->kind == FF_PRED) {
				op_field(f, f->at, pkt, ctx, key);
				continue;
			}
			copy_small(key + f->at + 1,
				   pkt->data + (f->kind == FF_NH ? pkt->nh_off : pkt->th_off) +
				       f->off,
				   f->len);
			if (f->masked)
				mask_field(f, key, f->len);
		}
		return hashed(key, t->key_len, h);
	}
	for (unsigned int i = 0; i < t->key_len; i += 8)
		memset(key + i, 0, 8);
	memcpy(key, &hdr, sizeof(hdr));
	for (unsigned int i = 0; i < t->n; i++) {
		const struct fc_field *f = &t->f[i];
		int64_t base;
		uint64_t off;
		uint32_t avail;

		switch (f->kind) {
		case FF_NH:
			base = pkt->nh_off;
			break;
		case FF_TH:
			/* payload_fast wants the flag, payload_eval no fragoff
			 * too: both are in the header */
			base = l4 ? (int64_t)pkt->th_off : -1;
			break;
		case FF_LL:
			/* payload_base: loads need a mac header of non-zero length */
			base = pkt->mac_off >= 0 && (uint32_t)pkt->mac_off != pkt->nh_off
				   ? pkt->mac_off
				   : -1;
			break;
		default:
			op_field(f, f->at, pkt, ctx, key);
			continue;
		}
		if (base < 0)
			continue;
		off = (uint64_t)base + f->off;
		if (off >= pkt->len)
			continue;
		avail = pkt->len - (uint32_t)off < f->len ? pkt->len - (uint32_t)off : f->len;
		key[f->at] = (uint8_t)(avail + 1);
		copy_small(key + f->at + 1, pkt->data + off, avail);
		if (f->masked)
			mask_field(f, key, avail);
	}
	return hashed(key, t->key_len, h);
}

/* keys are 8 to FC_KEY_MAX bytes, a multiple of 8. SSE4.1: 16 bytes a
 * step, the last step the 16 bytes that end the key (overlapping the one
 * before where the length is an odd number of words), a test per step past
 * the first rather than a switch (an indirect jump that mispredicts where
 * keys of different lengths alternate); the entry's generation and set
 * generation (tg: tag, set_gen) in the same sum of differences, one test
 * for all; else a word a step the same way */
#ifdef __SSE4_1__
typedef __m128i fc_tagv;

static inline fc_tagv tagv_of(uint64_t tag, uint64_t set_gen)
{
	return _mm_set_epi64x((long long)set_gen, (long long)tag);
}

static inline bool entry_eq(const struct fc_entry *e, fc_tagv tg, const uint8_t *b,
			    unsigned int len)
{
	const uint8_t *a = e->key;
	__m128i d;

	_Static_assert(offsetof(struct fc_entry, set_gen) == offsetof(struct fc_entry, gen) + 8 &&
			   offsetof(struct fc_entry, gen) % 16 == 0,
		       "an entry's generations are one aligned 16 bytes");
	_Static_assert(FC_KEY_MAX == 80, "entry_eq: five steps at most");
	d = _mm_xor_si128(_mm_load_si128((const __m128i *)(const void *)&e->gen), tg);
	if (len < 16) {
		uint64_t x, y;

		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return _mm_testz_si128(d, d) && x == y;
	}
	d = _mm_or_si128(
	    d, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(a + len - 16)),
			     _mm_loadu_si128((const __m128i *)(const void *)(b + len - 16))));
#define EQ_STEP(s)                                                                                 \
	do {                                                                                       \
		if (len <= 16 * (s) + 16)                                                          \
			goto eq_done;                                                              \
		d = _mm_or_si128(                                                                  \
		    d, _mm_xor_si128(                                                              \
			   _mm_loadu_si128((const __m128i *)(const void *)(a + 16 * (s))),         \
			   _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * (s)))));       \
	} while (0)
	EQ_STEP(0);
	EQ_STEP(1);
	EQ_STEP(2);
	EQ_STEP(3);
eq_done:
#undef EQ_STEP
	return _mm_testz_si128(d, d);
}
#else
typedef struct {
	uint64_t tag, set_gen;
} fc_tagv;

static inline fc_tagv tagv_of(uint64_t tag, uint64_t set_gen)
{
	return (fc_tagv){tag, set_gen};
}

static inline bool entry_eq(const struct fc_entry *e, fc_tagv tg, const uint8_t *b,
			    unsigned int len)
{
	const uint8_t *a = e->key;
	unsigned int n = len / 8;
	uint64_t d = (e->gen ^ tg.tag) | (e->set_gen ^ tg.set_gen);

#define EQ_WORD(w)                                                                                 \
	do {                                                                                       \
		uint64_t x, y;                                                                     \
		memcpy(&x, a + 8 * (w), 8);                                                        \
		memcpy(&y, b + 8 * (w), 8);                                                        \
		d |= x ^ y;                                                                        \
	} while (0)
	_Static_assert(FC_KEY_MAX == 80, "entry_eq: ten words at most");
	EQ_WORD(0);
#define EQ_NEXT(w)                                                                                 \
	do {                                                                                       \
		if (n <= (w))                                                                      \
			goto eq_done;                                                              \
		EQ_WORD(w);                                                                        \
	} while (0)
	EQ_NEXT(1);
	EQ_NEXT(2);
	EQ_NEXT(3);
	EQ_NEXT(4);
	EQ_NEXT(5);
	EQ_NEXT(6);
	EQ_NEXT(7);
	EQ_NEXT(8);
	EQ_NEXT(9);
eq_done:
#undef EQ_NEXT
#undef EQ_WORD
	return d == 0;
}
#endif

/* a burst's hold of the table: its entries and the mask of a bucket's
 * first entry, read once a burst into locals (a store into a key may
 * alias the cache's fields, so they would be read again per packet) */
struct fc_tab {
	struct fc_entry *e;
	uint32_t bm;
};

static inline struct fc_tab tab_of(const struct nftdp_vm_flowcache *fc)
{
	return (struct fc_tab){fc->e, fc->mask & ~1u};
}

static inline struct fc_entry *probe(struct fc_tab tb, uint32_t h, fc_tagv tg, const uint8_t *key,
				     unsigned int len)
{
	struct fc_entry *e = &tb.e[h & tb.bm];

	/* no test of e->key_len: a key's first word holds its template's
	 * class and layout (FC_HDR_*), which with the generation fix its
	 * length, so an entry of the generation whose first word is key's
	 * has key's length */
	if (e[0].hash == h && entry_eq(&e[0], tg, key, len))
		return &e[0];
	if (e[1].hash == h && entry_eq(&e[1], tg, key, len))
		return &e[1];
	return NULL;
}

/* the newest result goes first in its pair; the older one moves second */
static void insert(struct nftdp_vm_flowcache *fc, uint32_t h, uint64_t tag, uint64_t set_gen,
		   const uint8_t *key, unsigned int len, unsigned int verdict,
		   const struct nftdp_vm_flow_rec *rec, uint16_t conn)
{
	struct fc_entry *e = &fc->e[h & fc->mask & ~1u];

	if (e[0].gen == tag && e[0].set_gen == set_gen)
		e[1] = e[0];
	e[0].gen = tag;
	e[0].set_gen = set_gen;
	e[0].hash = h;
	e[0].verdict = verdict;
	e[0].key_len = (uint8_t)len;
	e[0].n_ctr = (uint8_t)rec->n;
	e[0].conn = (uint8_t)conn;
	e[0].g_bytes = (uint8_t)(conn >> 8);
	memcpy(e[0].ctr, rec->slot, sizeof(e[0].ctr));
	memcpy(e[0].key, key, len);
	fc->st.inserts++;
}

/* The keys of a burst, their lengths (0: not cached) and hashes. */
struct fc_keys {
	alignas(8) uint8_t key[NFTDP_VM_BURST_MAX][FC_KEY_MAX];
	unsigned int len[NFTDP_VM_BURST_MAX];
	uint32_t hash[NFTDP_VM_BURST_MAX];
	uint64_t unkeyed; /* a bit per packet the flood guard left out */
};

/* packet i's key under fp and its hash into k, its bucket on the way; its
 * length (0: not keyed). sparse: fp's hook's guard is sparse (read once
 * a burst: only guard_note, after the burst, changes it). */
static inline __attribute__((always_inline)) unsigned int
key_prepare(struct nftdp_vm_flowcache *fc, struct fc_tab tb, const struct nftdp_vm_flow_plan *fp,
	    struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx, struct fc_keys *k, unsigned int i,
	    bool sparse)
{
	unsigned int len;
	uint32_t h = 0; /* key_build sets it only for a key */

	/* a traced packet (meta nftrace set by an earlier hook) runs the
	 * chains: each of them emits its trace events */
	if (pkt->nftrace)
		return 0;
	/* the flood guard's sparse mode keys 1 packet in FC_GUARD_SAMPLE */
	if (__builtin_expect(sparse, 0) && (++fc->g[fp->hook].tick & (FC_GUARD_SAMPLE - 1))) {
		k->unkeyed |= 1ull << i;
		fc->st.unkeyed++;
		return 0;
	}
	len = key_build(fp, pkt, ctx, k->key[i], &h);
	k->hash[i] = h;
	if (len)
		__builtin_prefetch(&tb.e[h & tb.bm]);
	return len;
}

/* whether the run rec recorded for pkt read only what pkt's connection
 * fixes and a guard (fc_tmpl.conn_lim): 0 if not, else fc_entry.conn, with
 * .g_bytes in the high byte */
static inline uint16_t conn_run(const struct nftdp_vm_flow_plan *fp, const struct nftdp_vm_pkt *pkt,
				const struct nftdp_vm_flow_rec *rec)
{
	bool l4 = pkt->flags & NFTDP_VM_PKT_F_L4PROTO;
	const struct fc_tmpl *t = &fp->t[l4 ? fp->class_of[pkt->l4proto] : fp->class_none];

	if (!fp->conn || !pkt->ct || rec->jumped || rec->end >= t->conn_lim)
		return 0;
	if (rec->end < t->guard_from)
		return FC_CONN_OK; /* it read nothing the guard covers */
	return (uint16_t)(t->guard_conn | t->guard_bytes << 8);
}

/* The chains over pkt with what they charge recorded into rec and ops
 * below need tainting the run (ctx->flow_taint afterwards). */
static unsigned int run_recorded(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				 struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx, uint8_t need,
				 struct nftdp_vm_flow_rec *rec)
{
	unsigned int v;

	ctx->flow_rec = rec;
	ctx->flow_need = need;
	ctx->flow_taint = 0;
	v = nftdp_vm_gen_run_hook(gen, nfproto, hook, pkt, ctx);
	ctx->flow_rec = NULL;
	ctx->flow_need = 0;
	return v;
}

/* a hit's counters, charged with pkt's length: what each counter op of
 * the recorded run would have added (nftdp_vm_counter_eval_slot, without
 * the recording a hit never has) */
static inline void charge(const struct fc_entry *e, const struct nftdp_vm_pkt *pkt,
			  struct nftdp_vm_ctx *ctx)
{
	for (unsigned int i = 0; i < e->n_ctr; i++) {
		struct nftdp_vm_counter *c =
		    nftdp_vm_counter_slot(ctx->state, ctx->worker, e->ctr[i]);

		/* one writer per row: plain read, relaxed store */
		__atomic_store_n(&c->packets, c->packets + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&c->bytes, c->bytes + pkt->skb_len, __ATOMIC_RELAXED);
	}
}

/* verify mode: the chains judge a hit; the entry must agree with them */
static unsigned int verify_hit(struct nftdp_vm_flowcache *fc, const struct fc_entry *e,
			       const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
			       struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx, uint8_t need)
{
	struct nftdp_vm_flow_rec rec = {0};
	unsigned int v;

	fc->st.hits++;
	v = run_recorded(gen, nfproto, hook, pkt, ctx, need, &rec);
	/* a tainted run did what a hit would have skipped */
	if (ctx->flow_taint || v != e->verdict || rec.n != e->n_ctr ||
	    memcmp(rec.slot, e->ctr, rec.n * sizeof(rec.slot[0])) != 0)
		fc->st.mismatches++;
	return v;
}

void nftdp_vm_flow_run(const struct nftdp_vm_flow_plan *fp, const struct nftdp_vm_gen *gen,
		       uint8_t nfproto, uint8_t hook, struct nftdp_vm_pkt **pkts, unsigned int n,
		       unsigned int *verdicts, struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_flowcache *fc = ctx->flow;
	struct fc_tab tb = tab_of(fc);
	uint64_t tag = nftdp_vm_gen_id(gen) + 1, set_gen = ctx->set_gen;
	fc_tagv tg = tagv_of(tag, set_gen);
	/* set contents that follow the sets' current generation change
	 * without a new rule generation: lookups then taint */
	uint8_t need = set_gen ? fp->need : NFTDP_VM_FLOW_LVL_ALWAYS;
	struct fc_keys k;
	unsigned int probes = 0, hits = 0;
	bool sparse;

	if (n > NFTDP_VM_BURST_MAX)
		n = NFTDP_VM_BURST_MAX;
	k.unkeyed = 0;
	sparse = fc->g[fp->hook].sparse;
	for (unsigned int i = 0; i < n; i++)
		k.len[i] = key_prepare(fc, tb, fp, pkts[i], ctx, &k, i, sparse);
	for (unsigned int i = 0; i < n; i++) {
		struct nftdp_vm_pkt *pkt = pkts[i];
		struct nftdp_vm_flow_rec rec = {0};
		const struct fc_entry *e;
		unsigned int v;

		if (k.len[i]) {
			e = probe(tb, k.hash[i], tg, k.key[i], k.len[i]);
			probes++;
			if (e && fc->verify) {
				verdicts[i] = verify_hit(fc, e, gen, nfproto, hook, pkt, ctx, need);
				continue;
			}
			if (e) {
				charge(e, pkt, ctx);
				verdicts[i] = e->verdict;
				fc->st.hits++;
				hits++;
				continue;
			}
		}
		fc->st.misses++;
		v = run_recorded(gen, nfproto, hook, pkt, ctx, need, &rec);
		verdicts[i] = v;
		if (k.len[i] && !ctx->flow_taint && (v == NF_ACCEPT || v == NF_DROP) &&
		    !pkt->out.reject && !pkt->out.fwd_oif && !pkt->out.n_dup && !pkt->out.notrack)
			insert(fc, k.hash[i], tag, set_gen, k.key[i], k.len[i], v, &rec,
			       conn_run(fp, pkt, &rec));
		else if (!(k.unkeyed >> i & 1))
			fc->st.uncacheable++;
	}
	guard_note(fc, fp->hook, probes, hits);
}

/* a hit, as the packet path sees it: the entry itself */
struct nftdp_vm_flow_hit {
	struct fc_entry e;
};

/* a hook without chains: accept, nothing to charge */
static const struct nftdp_vm_flow_hit hook_empty = {.e = {.verdict = NF_ACCEPT}};

void nftdp_vm_flow_probe(struct nftdp_vm_flow_plan *const *plan, const bool *empty,
			 const struct nftdp_vm_gen *gen, struct nftdp_vm_pkt **pkts, unsigned int n,
			 const struct nftdp_vm_flow_hit **hits, struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_flowcache *fc = ctx->flow;
	/* fc is NULL without a cache (then no plan is passed) */
	struct fc_tab tb = fc ? tab_of(fc) : (struct fc_tab){NULL, 0};
	fc_tagv tg = tagv_of(nftdp_vm_gen_id(gen) + 1, ctx->set_gen);
	struct fc_keys k;
	unsigned int probes = 0, found = 0;
	uint8_t hook = 0; /* every plan's: one hook a call */
	bool sparse = false;

	if (n > NFTDP_VM_BURST_MAX)
		n = NFTDP_VM_BURST_MAX;
	k.unkeyed = 0;
	for (unsigned int f = 0; f < NFTDP_VM_GEN_NFPROTO_MAX; f++)
		if (plan[f]) {
			hook = plan[f]->hook;
			sparse = fc->g[hook].sparse;
			break;
		}
	for (unsigned int i = 0; i < n; i++) {
		uint8_t nf = pkts[i]->nfproto;
		unsigned int len = 0;

		hits[i] = NULL;
		if (nf < NFTDP_VM_GEN_NFPROTO_MAX) {
			if (empty[nf])
				hits[i] = &hook_empty;
			else if (plan[nf])
				len = key_prepare(fc, tb, plan[nf], pkts[i], ctx, &k, i, sparse);
		}
		k.len[i] = len;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (!k.len[i])
			continue;
		hits[i] =
		    (const struct nftdp_vm_flow_hit *)probe(tb, k.hash[i], tg, k.key[i], k.len[i]);
		probes++;
		found += hits[i] != NULL;
	}
	guard_note(fc, hook, probes, found);
}

unsigned int nftdp_vm_flow_hit_verdict(const struct nftdp_vm_flow_hit *hit)
{
	return hit->e.verdict;
}

void nftdp_vm_flow_charge(const struct nftdp_vm_flow_hit *hit, struct nftdp_vm_pkt *pkt,
			  struct nftdp_vm_ctx *ctx)
{
	if (hit == &hook_empty)
		return;
	charge(&hit->e, pkt, ctx);
	ctx->flow->st.hits++;
}

struct nftdp_vm_counter *nftdp_vm_flow_row(const struct nftdp_vm_ctx *ctx)
{
	return nftdp_vm_counter_slot(ctx->state, ctx->worker, 0);
}

unsigned int nftdp_vm_flow_charge_row(const struct nftdp_vm_flow_hit *hit, uint32_t bytes,
				      struct nftdp_vm_counter *row)
{
	const struct fc_entry *e = &hit->e;
	unsigned int n = e->n_ctr;
	struct nftdp_vm_counter *c;

	/* hook_empty has no counter and no generation (an entry's is id + 1) */
	if (!n)
		return e->gen != 0;
	/* the common case, one counter (`counter accept`), without the loop */
	c = row + e->ctr[0];
	/* one writer per row: plain read, relaxed store */
	__atomic_store_n(&c->packets, c->packets + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->bytes, c->bytes + bytes, __ATOMIC_RELAXED);
#pragma GCC unroll 1
	for (unsigned int i = 1; i < n; i++) {
		c = row + e->ctr[i];
		__atomic_store_n(&c->packets, c->packets + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&c->bytes, c->bytes + bytes, __ATOMIC_RELAXED);
	}
	return 1;
}

void nftdp_vm_flow_count_hits(struct nftdp_vm_ctx *ctx, unsigned int n)
{
	ctx->flow->st.hits += n;
}

_Static_assert(sizeof(struct nftdp_vm_flow_carry) == 64, "a carried result is one cache line");

/* the 64-bit mask of a guard's byte mask: 0xff for each bit */
static inline uint64_t guard_mask(uint8_t bytes)
{
	/* bits 0..6 to the low bit of bytes 0..6 (no two products meet),
	 * bit 7 alone */
	return ((bytes & 0x7full) * 0x2040810204081ull & 0x0101010101010101ull) * 0xff |
	       (uint64_t)(bytes >> 7) * 0xff << 56;
}

/* the 8 bytes of p the guard at (at, FC_CONN_*) covers; false when they
 * are not all in the packet */
static inline bool guard_load(const struct nftdp_vm_pkt *p, uint8_t at, uint64_t *v)
{
	uint32_t off = at & FC_CONN_OFF;

	if (at & FC_CONN_TH) {
		if (!nftdp_vm_has_l4(p))
			return false;
		off += p->th_off;
	} else {
		off += p->nh_off;
	}
	if ((uint64_t)off + 8 > p->len)
		return false;
	memcpy(v, p->data + off, 8);
	return true;
}

bool nftdp_vm_flow_carry_make(struct nftdp_vm_flow_carry *c, const void *ct, uint32_t iif,
			      const struct nftdp_vm_flow_hit *const *hits, unsigned int n,
			      unsigned int last, const struct nftdp_vm_pkt *p)
{
	struct nftdp_vm_flow_carry r = {
	    .iif = iif, .last = (uint8_t)last, .ctinfo = (uintptr_t)ct & NFTDP_VM_CT_CTINFO_MASK};
	unsigned int end = last < n ? last + 1 : n;
	uint64_t span = 0, v;
	uint8_t base = 0;

	if (!ct || n > UINT8_MAX)
		return false;
	for (unsigned int h = 0; h < end; h++) {
		const struct fc_entry *e = hits[h] ? &hits[h]->e : NULL;

		if (!e || hits[h] == &hook_empty)
			continue;
		if (!e->conn || r.n_ctr + e->n_ctr > NFTDP_VM_FLOW_CARRY_CTRS ||
		    (r.tag && (r.tag != e->gen || r.set_gen != e->set_gen)))
			return false;
		if (e->g_bytes) {
			/* the hooks' guards: one 8 bytes of one header */
			uint8_t b = e->conn & FC_CONN_TH ? NFT_PAYLOAD_TRANSPORT_HEADER
							 : NFT_PAYLOAD_NETWORK_HEADER;

			if (span && base != b)
				return false;
			base = b;
			span |= (uint64_t)e->g_bytes << (e->conn & FC_CONN_OFF);
			if (!guard_fits(span))
				return false;
		}
		r.tag = e->gen;
		r.set_gen = e->set_gen;
		memcpy(&r.ctr[r.n_ctr], e->ctr, e->n_ctr * sizeof(e->ctr[0]));
		r.n_ctr = (uint8_t)(r.n_ctr + e->n_ctr);
	}
	if (!r.tag)
		return false; /* nothing cached decided it */
	if (span) {
		guard_encode(base, span, &r.g_at, &r.g_bytes);
		if (!p || !guard_load(p, r.g_at, &v))
			return false;
		r.g_val = v & guard_mask(r.g_bytes);
	}
	r.owner = c->owner;
	*c = r;
	return true;
}

bool nftdp_vm_flow_carried(const struct nftdp_vm_flow_carry *c, uint64_t tag, uint64_t set_gen,
			   const struct nftdp_vm_pkt *p, const struct nftdp_vm_ctx *ctx,
			   unsigned int *last)
{
	uint64_t v;

	/* a later fragment has no transport header: ports and guards of it
	 * would break the rule that reads them */
	if (c->tag != tag || c->set_gen != set_gen ||
	    c->ctinfo != ((uintptr_t)p->ct & NFTDP_VM_CT_CTINFO_MASK) || !p->ct ||
	    c->iif != p->iif || p->nftrace || p->fragoff || !ctx->flow || ctx->flow->verify)
		return false;
	if (c->g_bytes && (!guard_load(p, c->g_at, &v) || (v & guard_mask(c->g_bytes)) != c->g_val))
		return false;
	*last = c->last;
	return true;
}

void nftdp_vm_flow_carry_charge(const struct nftdp_vm_flow_carry *c, const struct nftdp_vm_pkt *p,
				struct nftdp_vm_ctx *ctx)
{
	for (unsigned int i = 0; i < c->n_ctr; i++) {
		struct nftdp_vm_counter *k =
		    nftdp_vm_counter_slot(ctx->state, ctx->worker, c->ctr[i]);

		/* one writer per row: plain read, relaxed store */
		__atomic_store_n(&k->packets, k->packets + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&k->bytes, k->bytes + p->skb_len, __ATOMIC_RELAXED);
	}
	ctx->flow->st.carried++;
}

bool nftdp_vm_flow_writes_sets(const struct nftdp_vm_chain *chain)
{
	for (uint32_t i = 0; chain && i < chain->n_ops; i++)
		if (chain->ops[i].ops->flow == NFTDP_VM_FLOW_DYNSET)
			return true;
	return false;
}
