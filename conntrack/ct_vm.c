// SPDX-License-Identifier: BSD-3-Clause
/*
 * The VM's view of an entry (struct nftdp_vm_ct_ops): ct keys as
 * nft_ct_get_eval / nft_ct_set_eval read and write them. pkt->ct is the
 * entry with the packet's ctinfo in its low bits, as the kernel's
 * skb->_nfct.
 */
#include <netinet/in.h>

#include "ct_priv.h"

static inline const struct nftdp_ct_entry *entry_of(const void *ct, unsigned int *ctinfo)
{
	*ctinfo = (unsigned int)((uintptr_t)ct & CT_CTINFO_MASK);
	return (const struct nftdp_ct_entry *)((uintptr_t)ct & ~(uintptr_t)CT_CTINFO_MASK);
}

static uint32_t ct_state(const void *ct)
{
	unsigned int ctinfo;

	(void)entry_of(ct, &ctinfo);
	return NF_CT_STATE_BIT(ctinfo);
}

/* nft_ct_get_eval_counter: one direction, or both summed */
static uint64_t counter(const struct nftdp_ct_entry *e, int dir, bool packets)
{
	const struct ct_acct o = nftdp_ct_acct_get(e->shard, e, IP_CT_DIR_ORIGINAL);
	const struct ct_acct r = nftdp_ct_acct_get(e->shard, e, IP_CT_DIR_REPLY);

	if (dir >= 0)
		return packets ? (dir ? r : o).packets : (dir ? r : o).bytes;
	return packets ? o.packets + r.packets : o.bytes + r.bytes;
}

static void put64(void *dest, uint64_t v)
{
	memcpy(dest, &v, 8);
}

static bool ct_get(const void *ct, uint32_t key, int dir, void *dest, uint32_t len)
{
	unsigned int ctinfo;
	const struct nftdp_ct_entry *e = entry_of(ct, &ctinfo);
	const struct nftdp_ct_tuple *t = &e->tuple[dir > 0 ? 1 : 0];
	uint8_t *d = dest;

	switch (key) {
	case NFT_CT_DIRECTION:
		d[0] = ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL;
		return true;
	case NFT_CT_STATUS:
		nftdp_st32(dest, e->status);
		return true;
	case NFT_CT_MARK:
		nftdp_st32(dest, e->mark);
		return true;
	case NFT_CT_SECMARK:
		nftdp_st32(dest, e->secmark);
		return true;
	case NFT_CT_EXPIRATION: {
		/* jiffies_to_msecs(nf_ct_expires(ct)) */
		uint64_t now = e->shard->now_ms;

		nftdp_st32(dest, e->expires_ms > now ? (uint32_t)(e->expires_ms - now) : 0);
		return true;
	}
	case NFT_CT_HELPER: {
		/* nft_ct_get_eval: the helper of ct->master, NUL-padded to
		 * NF_CT_HELPER_NAME_LEN; so only an expected connection has one */
		const char *name =
		    (e->status & IPS_EXPECTED)
			? nftdp_ct_helper_name(e->shard->help[e - e->shard->entries].master_helper)
			: NULL;

		if (!name)
			return false; /* no master or no helper: the kernel breaks */
		memset(dest, 0, len);
		memcpy(dest, name, strlen(name) < len ? strlen(name) : len);
		return true;
	}
	case NFT_CT_L3PROTOCOL:
		d[0] = e->tuple[0].l3proto;
		return true;
	case NFT_CT_PROTOCOL:
		d[0] = t->l4proto;
		return true;
	case NFT_CT_ZONE:
		/* with a direction, nf_ct_zone_id(zone, dir): the zone of that tuple */
		nftdp_st16(dest, dir >= 0 ? t->zone : nftdp_ct_entry_zone(e));
		return true;
	case NFT_CT_ID:
		nftdp_st32(dest, e->id);
		return true;
	case NFT_CT_LABELS:
		memcpy(dest, e->labels, len < 16 ? len : 16);
		return true;
	case NFT_CT_BYTES:
		put64(dest, counter(e, dir, false));
		return true;
	case NFT_CT_PKTS:
		put64(dest, counter(e, dir, true));
		return true;
	case NFT_CT_AVGPKT: {
		uint64_t pc = counter(e, dir, true), bc = counter(e, dir, false);

		put64(dest, pc ? bc / pc : 0);
		return true;
	}
	case NFT_CT_SRC:
		memcpy(dest, t->src.u8, len < 16 ? len : 16);
		return true;
	case NFT_CT_DST:
		memcpy(dest, t->dst.u8, len < 16 ? len : 16);
		return true;
	case NFT_CT_SRC_IP:
	case NFT_CT_DST_IP:
		if (e->tuple[0].l3proto != NFPROTO_IPV4)
			return false;
		memcpy(dest, key == NFT_CT_SRC_IP ? &t->src.ip : &t->dst.ip, 4);
		return true;
	case NFT_CT_SRC_IP6:
	case NFT_CT_DST_IP6:
		if (e->tuple[0].l3proto != NFPROTO_IPV6)
			return false;
		memcpy(dest, key == NFT_CT_SRC_IP6 ? t->src.u8 : t->dst.u8, 16);
		return true;
	case NFT_CT_PROTO_SRC:
		memcpy(dest, &t->sport, 2);
		return true;
	case NFT_CT_PROTO_DST:
		memcpy(dest, &t->dport, 2);
		return true;
	default:
		return false;
	}
}

static void ct_set(void *ct, uint32_t key, int dir, const void *src, uint32_t len)
{
	unsigned int ctinfo;
	struct nftdp_ct_entry *e = (struct nftdp_ct_entry *)entry_of(ct, &ctinfo);

	(void)dir;
	uint32_t v;

	switch (key) {
	case NFT_CT_MARK:
		memcpy(&v, src, 4);
		if (e->mark != v) {
			e->mark = v;
			nftdp_ct_event_cache(e, IPCT_MARK);
		}
		break;
	case NFT_CT_SECMARK:
		memcpy(&v, src, 4);
		if (e->secmark != v) {
			e->secmark = v;
			nftdp_ct_event_cache(e, IPCT_SECMARK);
		}
		break;
	case NFT_CT_EVENTMASK:
		memcpy(&e->eventmask, src, 4);
		break;
	case NFT_CT_LABELS:
		if (memcmp(e->labels, src, len < 16 ? len : 16)) {
			memcpy(e->labels, src, len < 16 ? len : 16);
			nftdp_ct_event_cache(e, IPCT_LABEL);
		}
		break;
	default:
		/* NFT_CT_ZONE: the kernel sets the zone of a template before
		 * conntrack runs; an entry's zone never changes */
		break;
	}
}

/* nft_nat_eval / nft_masq_eval: the range the VM built, bound by nat.c */
static unsigned int ct_nat(void *ct, struct nftdp_vm_pkt *pkt, enum nftdp_vm_nat_kind kind,
			   const struct nftdp_vm_nat_range *range)
{
	unsigned int ctinfo;
	struct nftdp_ct_entry *e = nftdp_ct_entry_of(ct, &ctinfo);
	struct nftdp_ct_nat_range r;

	memset(&r, 0, sizeof(r));
	r.flags = range->flags;
	memcpy(r.min_addr.u8, range->min_addr, 16);
	memcpy(r.max_addr.u8, range->max_addr, 16);
	r.min_proto = range->min_proto;
	r.max_proto = range->max_proto;
	switch (kind) {
	case NFTDP_VM_NAT_SNAT:
		return nftdp_ct_nat_setup(e->shard, pkt, &r, NFTDP_CT_MANIP_SRC);
	case NFTDP_VM_NAT_DNAT:
		return nftdp_ct_nat_setup(e->shard, pkt, &r, NFTDP_CT_MANIP_DST);
	case NFTDP_VM_NAT_MASQ:
		return nftdp_ct_nat_masquerade(e->shard, pkt, &r);
	case NFTDP_VM_NAT_REDIR:
		return nftdp_ct_nat_redirect(e->shard, pkt, &r);
	}
	return NF_DROP;
}

/* ct timeout set "name" */
static void ct_timeout(void *ct, const struct nftdp_vm_ct_timeout *policy)
{
	unsigned int ctinfo;
	struct nftdp_ct_entry *e = nftdp_ct_entry_of(ct, &ctinfo);

	nftdp_ct_set_policy(e->shard, e, policy);
}

/* ct helper set "name": nft_ct_helper_obj_eval */
static void ct_helper(void *ct, const struct nftdp_vm_ct_helper *h)
{
	unsigned int ctinfo;
	struct nftdp_ct_entry *e = nftdp_ct_entry_of(ct, &ctinfo);
	uint8_t l3 = e->tuple[0].l3proto;

	if ((e->status & IPS_CONFIRMED) || h->l4proto != e->tuple[0].l4proto)
		return;
	if (!(l3 == NFPROTO_IPV4 ? h->v4 : l3 == NFPROTO_IPV6 && h->v6))
		return;
	if (e->status & IPS_HELPER)
		return;
	nftdp_ct_helper_assign(e->shard, e, h->helper);
}

/* nft_ct_expect_obj_eval: a new connection only */
static int ct_expect(void *ct, const struct nftdp_vm_ct_expect *x)
{
	unsigned int ctinfo;
	struct nftdp_ct_entry *e = nftdp_ct_entry_of(ct, &ctinfo);

	if (e->status & IPS_CONFIRMED)
		return NFT_BREAK;
	return nftdp_ct_expect_from_obj(
	    e->shard, e, ctinfo >= IP_CT_IS_REPLY ? IP_CT_DIR_REPLY : IP_CT_DIR_ORIGINAL, x);
}

/*
 * connlimit keys: bit 63 set (0 is "no key" in per-element lists), the
 * shard's registry number (6 bits, 0: unregistered, then only its own shard
 * can judge the key), the entry's index (28 bits) and the low 29 bits of
 * its id (ids grow per shard: one comes back after 2^29 new connections).
 * Per-element `ct count` lists are shared by the workers, so a worker must
 * be able to tell whether another shard's connection is still there: the
 * registry names every shard, and the fields read are single words the
 * owner writes (a stale read errs for one packet, as the kernel's
 * lockless find_or_evict may).
 */
#define CT_REG_MAX 63
static struct nftdp_ct_shard *_Atomic ct_reg[CT_REG_MAX];

void nftdp_ct_reg_add(struct nftdp_ct_shard *s)
{
	for (unsigned int i = 0; i < CT_REG_MAX; i++) {
		struct nftdp_ct_shard *none = NULL;

		if (atomic_compare_exchange_strong(&ct_reg[i], &none, s)) {
			s->reg = (uint8_t)(i + 1);
			return;
		}
	}
	s->reg = 0;
}

void nftdp_ct_reg_del(struct nftdp_ct_shard *s)
{
	if (s->reg)
		atomic_store(&ct_reg[s->reg - 1], NULL);
	s->reg = 0;
}

static uint64_t ct_conn_key(const void *ct, bool *confirmed)
{
	unsigned int ctinfo;
	const struct nftdp_ct_entry *e = entry_of(ct, &ctinfo);

	*confirmed = e->status & IPS_CONFIRMED;
	return 1ull << 63 | (uint64_t)e->shard->reg << 57 |
	       (uint64_t)(uint32_t)(e - e->shard->entries) << 29 | (e->id & 0x1fffffffu);
}

/* nf_conncount's find_or_evict + already_closed; an unconfirmed entry of
 * this burst is live (the kernel's EAGAIN: not confirmed yet) */
static bool ct_conn_live(const void *ct, uint64_t key)
{
	unsigned int ctinfo;
	const struct nftdp_ct_shard *s = ct ? entry_of(ct, &ctinfo)->shard : NULL;
	unsigned int reg = (unsigned int)(key >> 57) & 0x3f;
	uint32_t idx = (uint32_t)(key >> 29) & 0xfffffff;
	const struct nftdp_ct_entry *e;
	uint32_t status;

	if (!s && !reg)
		return true; /* an unregistered shard's: only its worker can tell */
	if (!s || reg != s->reg) {
		s = reg ? atomic_load_explicit(&ct_reg[reg - 1], memory_order_acquire) : NULL;
		if (!s)
			return false;
	}
	if (idx >= s->n_entries)
		return false;
	e = &s->entries[idx];
	status = __atomic_load_n(&e->status, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&e->in_use, __ATOMIC_RELAXED) ||
	    (__atomic_load_n(&e->id, __ATOMIC_RELAXED) & 0x1fffffffu) !=
		(uint32_t)(key & 0x1fffffffu) ||
	    (status & IPS_DYING))
		return false;
	if ((status & IPS_CONFIRMED) && __atomic_load_n(&e->expires_ms, __ATOMIC_RELAXED) <=
					    __atomic_load_n(&s->now_ms, __ATOMIC_RELAXED))
		return false;
	if (e->tuple[0].l4proto == IPPROTO_TCP) {
		uint8_t st = __atomic_load_n(&e->proto.tcp.state, __ATOMIC_RELAXED);

		if (st == TCP_CONNTRACK_TIME_WAIT || st == TCP_CONNTRACK_CLOSE)
			return false;
	}
	return true;
}

const struct nftdp_vm_ct_ops nftdp_ct_vm_ops = {
    .get = ct_get,
    .set = ct_set,
    .state = ct_state,
    .nat = ct_nat,
    .timeout = ct_timeout,
    .helper = ct_helper,
    .expect = ct_expect,
    .conn_key = ct_conn_key,
    .conn_live = ct_conn_live,
};
