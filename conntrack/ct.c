// SPDX-License-Identifier: BSD-3-Clause
/*
 * The shard: preallocated entries, the hash table of both directions'
 * tuples, nf_conntrack_in (lookup or new entry, ICMP errors as related, the
 * protocol's state machine), __nf_conntrack_confirm, early drop when the
 * table is full, incremental timeout reaping, and the control-plane walk,
 * get, delete and flush. Mirrors nf_conntrack_core.c.
 *
 * Entries are referenced by index. The table is chained: buckets[] holds
 * the first node of each chain, node 2*i+dir is tuple[dir] of entry i and
 * entry i's hnext[dir] the next node. A new entry goes into the table at
 * once, unconfirmed, so that later packets of the same burst find it; it
 * becomes confirmed when one of its packets is accepted at the end of
 * postrouting and is freed when all of them were dropped. refs counts the
 * packets between nftdp_ct_in() and nftdp_ct_confirm(); a killed entry
 * (RST, reopen, delete) leaves the table at once and returns to the free
 * list when refs reaches zero, as the kernel's last nf_ct_put frees it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "ct_priv.h"

#define CT_MAX_ENTRIES (1u << 28)

void nftdp_ct_timeouts_default(struct nftdp_ct_timeouts *t)
{
	memset(t, 0, sizeof(*t));
	t->tcp[TCP_CONNTRACK_SYN_SENT] = 120;
	t->tcp[TCP_CONNTRACK_SYN_RECV] = 60;
	t->tcp[TCP_CONNTRACK_ESTABLISHED] = 5 * 24 * 3600;
	t->tcp[TCP_CONNTRACK_FIN_WAIT] = 120;
	t->tcp[TCP_CONNTRACK_CLOSE_WAIT] = 60;
	t->tcp[TCP_CONNTRACK_LAST_ACK] = 30;
	t->tcp[TCP_CONNTRACK_TIME_WAIT] = 120;
	t->tcp[TCP_CONNTRACK_CLOSE] = 10;
	t->tcp[TCP_CONNTRACK_SYN_SENT2] = 120;
	t->tcp[TCP_CONNTRACK_RETRANS] = 300;
	t->tcp[TCP_CONNTRACK_UNACK] = 300;
	t->udp_unreplied = 30;
	t->udp_replied = 120;
	t->icmp = 30;
	t->icmpv6 = 30;
	t->generic = 600;
	t->gre_unreplied = 30;
	t->gre_replied = 180;
	/* nf_conntrack_proto_sctp.c; [0], unused as a state, is CLOSED's */
	t->sctp[SCTP_CONNTRACK_NONE] = 10;
	t->sctp[SCTP_CONNTRACK_CLOSED] = 10;
	t->sctp[SCTP_CONNTRACK_COOKIE_WAIT] = 3;
	t->sctp[SCTP_CONNTRACK_COOKIE_ECHOED] = 3;
	t->sctp[SCTP_CONNTRACK_ESTABLISHED] = 210;
	t->sctp[SCTP_CONNTRACK_SHUTDOWN_SENT] = 3;
	t->sctp[SCTP_CONNTRACK_SHUTDOWN_RECD] = 3;
	t->sctp[SCTP_CONNTRACK_SHUTDOWN_ACK_SENT] = 3;
	t->sctp[SCTP_CONNTRACK_HEARTBEAT_SENT] = 30;
}

/*
 * The entry array and the buckets are hundreds of megabytes read at random:
 * with 4 KB pages nearly every lookup is a TLB miss as well as a cache miss.
 * They are mapped 2 MB-aligned and marked for transparent huge pages (THP in
 * "madvise" mode is Debian's default), which needs neither the EAL nor
 * hugetlbfs; the mapping comes zeroed.
 */
#define CT_HUGE (2u << 20)

static void *table_alloc(size_t size, size_t *mapped)
{
	size_t len = (size + CT_HUGE - 1) & ~(size_t)(CT_HUGE - 1);
	uint8_t *p, *a;

	p = mmap(NULL, len + CT_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* trim to a 2 MB-aligned range: THP maps only whole aligned 2 MB pages */
	a = (uint8_t *)(((uintptr_t)p + CT_HUGE - 1) & ~(uintptr_t)(CT_HUGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + len + CT_HUGE)
		munmap(a + len, (size_t)(p + len + CT_HUGE - (a + len)));
	(void)madvise(a, len, MADV_HUGEPAGE); /* a hint: without THP, small pages */
	*mapped = len;
	return a;
}

static void table_free(void *p, size_t mapped)
{
	if (p)
		munmap(p, mapped);
}

unsigned int nftdp_ct_entry_size(void)
{
	return sizeof(struct nftdp_ct_entry);
}

int nftdp_ct_shard_create(const struct nftdp_ct_config *cfg, struct nftdp_ct_shard **out)
{
	struct nftdp_ct_shard *s;
	uint32_t nb = 16, i;

	if (!cfg || !cfg->max_entries || cfg->max_entries > CT_MAX_ENTRIES)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	if (cfg->timeouts)
		s->tmo = *cfg->timeouts;
	else
		nftdp_ct_timeouts_default(&s->tmo);
	s->cfg.timeouts = &s->tmo;
	while (nb < 2 * cfg->max_entries)
		nb <<= 1;
	s->entries = table_alloc((size_t)cfg->max_entries * sizeof(*s->entries), &s->entries_len);
	if (!s->entries)
		goto err_entries;
	s->buckets = table_alloc((size_t)nb * sizeof(*s->buckets), &s->buckets_len);
	if (!s->buckets)
		goto err_buckets;
	s->carry = table_alloc((size_t)cfg->max_entries * sizeof(*s->carry), &s->carry_len);
	if (!s->carry)
		goto err_carry;
	memset(s->carry, 0, (size_t)cfg->max_entries * sizeof(*s->carry)); /* faulted now */
	/* every page is touched here, at start: no faults on the packet path */
	for (i = 0; i < nb; i++)
		s->buckets[i] = CT_NIL;
	s->bucket_mask = nb - 1;
	s->n_entries = cfg->max_entries;
	for (i = 0; i < s->n_entries; i++)
		s->entries[i].free_next = i + 1 < s->n_entries ? i + 1 : CT_NIL;
	s->free_head = 0;
	if (nftdp_ct_expect_shard_init(s) < 0)
		goto err_events;
	if (cfg->event_ring_size) {
		uint32_t n = cfg->event_ring_size;

		if (n & (n - 1))
			goto err_events;
		s->events = calloc(1, sizeof(*s->events) + (size_t)n * sizeof(s->events->ev[0]));
		if (!s->events)
			goto err_events;
		s->events->mask = n - 1;
	}
	s->st.max = cfg->max_entries;
	s->prng = ((uint64_t)cfg->hash_seed << 32 | cfg->shard_id) | 1;
	{
		/* the hash key from the seed (splitmix64) */
		uint64_t x = (uint64_t)cfg->hash_seed << 32 | 0x5bd1e995u;

		for (i = 0; i < 10; i++) {
			uint64_t z = (x += 0x9e3779b97f4a7c15ull);

			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			s->hkey[i] = (uint32_t)(z ^ (z >> 31));
		}
	}
	nftdp_ct_reg_add(s);
	*out = s;
	return 0;

err_events:
	nftdp_ct_expect_shard_fini(s);
	table_free(s->carry, s->carry_len);
err_carry:
	table_free(s->buckets, s->buckets_len);
	table_free(s->entries, s->entries_len);
	free(s);
	return cfg->event_ring_size & (cfg->event_ring_size - 1) ? -EINVAL : -ENOMEM;
err_buckets:
	table_free(s->entries, s->entries_len);
err_entries:
	free(s);
	return -ENOMEM;
}

void nftdp_ct_shard_destroy(struct nftdp_ct_shard *s)
{
	if (!s)
		return;
	nftdp_ct_reg_del(s);
	free(s->events);
	nftdp_ct_expect_shard_fini(s);
	table_free(s->carry, s->carry_len);
	table_free(s->buckets, s->buckets_len);
	table_free(s->entries, s->entries_len);
	free(s);
}

void nftdp_ct_stats(const struct nftdp_ct_shard *s, struct nftdp_ct_stats *out)
{
	*out = s->st;
}

static inline uint32_t entry_index(const struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e)
{
	return (uint32_t)(e - s->entries);
}

/* orig_hash: the hash of e->tuple[0], which the lookup before the entry's
 * creation worked out already */
static void hash_link(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, uint32_t orig_hash)
{
	uint32_t idx = entry_index(s, e);
	uint32_t b0 = orig_hash & s->bucket_mask;
	uint32_t b1 = nftdp_ct_tuple_hash(s, &e->tuple[1]) & s->bucket_mask;

	/* original then reply: a reply tuple in the original's bucket goes
	 * ahead of it, as the loop over the directions put it */
	e->hnext[0] = s->buckets[b0];
	s->buckets[b0] = idx * 2;
	e->hnext[1] = s->buckets[b1];
	s->buckets[b1] = idx * 2 + 1;
	s->links++;
}

static void hash_unlink(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e)
{
	uint32_t node = entry_index(s, e) * 2;
	int d;

	for (d = 0; d < 2; d++, node++) {
		uint32_t b = nftdp_ct_tuple_hash(s, &e->tuple[d]) & s->bucket_mask;
		uint32_t *link = &s->buckets[b];

		while (*link != CT_NIL && *link != node)
			link = &s->entries[*link >> 1].hnext[*link & 1];
		if (*link == node)
			*link = e->hnext[d];
	}
}

static void node_unlink(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, int d)
{
	uint32_t node = entry_index(s, e) * 2 + (uint32_t)d;
	uint32_t *link = &s->buckets[nftdp_ct_tuple_hash(s, &e->tuple[d]) & s->bucket_mask];

	while (*link != CT_NIL && *link != node)
		link = &s->entries[*link >> 1].hnext[*link & 1];
	if (*link == node)
		*link = e->hnext[d];
}

/* nf_conntrack_alter_reply: NAT changed the reply tuple of a new entry */
void nftdp_ct_alter_reply(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			  const struct nftdp_ct_tuple *reply)
{
	uint32_t b;

	node_unlink(s, e, 1);
	e->tuple[1] = *reply;
	b = nftdp_ct_tuple_hash(s, reply) & s->bucket_mask;
	e->hnext[1] = s->buckets[b];
	s->buckets[b] = entry_index(s, e) * 2 + 1;
	s->links++;
}

/* the entry no longer uses its `ct timeout` policy */
static void policy_put(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e)
{
	if (e->tmo_slot)
		s->pol[e->tmo_slot - 1].refs--;
	e->tmo_slot = 0;
	e->tmo = &s->tmo;
}

/* the policy's values over the shard's defaults, for its protocol */
static void policy_merge(const struct nftdp_ct_shard *s, const struct nftdp_vm_ct_timeout *pol,
			 struct nftdp_ct_timeouts *t)
{
	unsigned int i;

	*t = s->tmo;
	switch (pol->l4proto) {
	case IPPROTO_TCP:
		for (i = 1; i < TCP_CONNTRACK_TIMEOUT_MAX && i < NFTDP_VM_CT_TIMEOUT_MAX; i++)
			if (pol->given & (1u << i))
				t->tcp[i] = pol->val[i];
		break;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
		if (pol->given & 1u)
			t->udp_unreplied = pol->val[0];
		if (pol->given & 2u)
			t->udp_replied = pol->val[1];
		break;
	case IPPROTO_ICMP:
		if (pol->given & 1u)
			t->icmp = pol->val[0];
		break;
	case IPPROTO_ICMPV6:
		if (pol->given & 1u)
			t->icmpv6 = pol->val[0];
		break;
	case IPPROTO_GRE:
		if (pol->given & 1u)
			t->gre_unreplied = pol->val[0];
		if (pol->given & 2u)
			t->gre_replied = pol->val[1];
		break;
	case IPPROTO_SCTP:
		for (i = 0; i < SCTP_CONNTRACK_MAX && i < NFTDP_VM_CT_TIMEOUT_MAX; i++)
			if (pol->given & (1u << i))
				t->sctp[i] = pol->val[i];
		break;
	default:
		if (pol->given & 1u)
			t->generic = pol->val[0];
		break;
	}
}

/* timeouts[0] of the kernel's per-protocol array: what a new entry gets */
static uint32_t policy_first(const struct nftdp_ct_timeouts *t, uint8_t l4proto)
{
	switch (l4proto) {
	case IPPROTO_TCP:
		return t->tcp[TCP_CONNTRACK_SYN_SENT]; /* timeouts[UNSPEC] = SYN_SENT */
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
		return t->udp_unreplied;
	case IPPROTO_ICMP:
		return t->icmp;
	case IPPROTO_ICMPV6:
		return t->icmpv6;
	case IPPROTO_GRE:
		return t->gre_unreplied;
	case IPPROTO_SCTP:
		return t->sctp[SCTP_CONNTRACK_CLOSED]; /* timeouts[UNSPEC] = CLOSED */
	default:
		return t->generic;
	}
}

/*
 * nft_ct_timeout_obj_eval on an unconfirmed entry: it takes the policy (the
 * shard's copy of it, found by id or made in a free slot) and
 * nf_ct_refresh(ct, values[0]). With every slot in use by other policies
 * the entry keeps the defaults (policy_full counts it; the kernel would drop
 * when it cannot allocate the extension).
 */
void nftdp_ct_set_policy(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			 const struct nftdp_vm_ct_timeout *pol)
{
	int slot = -1, free_slot = -1;

	if (e->status & IPS_CONFIRMED)
		return;
	for (int i = 0; i < CT_POLICIES; i++) {
		if (s->pol[i].id == pol->id) { /* ids start at 1: 0 is a never-used slot */
			slot = i;
			break;
		}
		if (!s->pol[i].refs && free_slot < 0)
			free_slot = i;
	}
	if (slot < 0) {
		if (free_slot < 0) {
			s->policy_full++;
			return;
		}
		slot = free_slot;
		s->pol[slot].id = pol->id;
		policy_merge(s, pol, &s->pol[slot].tmo);
	}
	policy_put(s, e);
	s->pol[slot].refs++;
	e->tmo_slot = (uint8_t)(slot + 1);
	e->tmo = &s->pol[slot].tmo;
	if (!(e->status & IPS_FIXED_TIMEOUT))
		e->expires_ms =
		    s->now_ms + (uint64_t)policy_first(e->tmo, e->tuple[0].l4proto) * 1000u;
}

static void entry_free(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e)
{
	if ((e->status & IPS_EXPECTED) && e->tuple[0].l4proto == IPPROTO_GRE)
		nftdp_ct_gre_destroy(s, e); /* nf_ct_destroy's destroy_gre_conntrack */
	policy_put(s, e);
	e->in_use = 0;
	e->status = 0;
	e->free_next = s->free_head;
	s->free_head = entry_index(s, e);
	s->st.count--;
}

/* nf_ct_kill: out of the table now, freed once no packet holds it. */
void nftdp_ct_kill(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e)
{
	if (e->status & IPS_DYING)
		return;
	hash_unlink(s, e);
	e->status |= IPS_DYING;
	if (e->helper == NFTDP_VM_CT_HELPER_PPTP) /* helper->destroy */
		nftdp_ct_pptp_destroy_siblings(s, e);
	if (e->helper) /* nf_ct_remove_expectations */
		nftdp_ct_expect_remove_master(s, e);
	if (e->status & IPS_CONFIRMED)
		nftdp_ct_event_push(s, e, 1u << IPCT_DESTROY); /* nf_ct_delete */
	e->ev_pending = 0;
	if (!e->refs)
		entry_free(s, e);
}

static bool expired(const struct nftdp_ct_entry *e, uint64_t now_ms)
{
	return (e->status & IPS_CONFIRMED) && e->expires_ms <= now_ms;
}

/* ____nf_conntrack_find: expired confirmed entries met on the way are reaped. */
struct nftdp_ct_entry *nftdp_ct_find(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
				     uint32_t hash, int *dir, uint64_t now_ms)
{
	uint32_t node = s->buckets[hash & s->bucket_mask];

	while (node != CT_NIL) {
		struct nftdp_ct_entry *e = &s->entries[node >> 1];
		int d = (int)(node & 1);
		bool match =
		    e->in_use && !(e->status & IPS_DYING) && !memcmp(&e->tuple[d], t, sizeof(*t));

		/* a live match is returned without reading its link (line 1
		 * of an original tuple's entry) */
		if (match && !expired(e, now_ms)) {
			*dir = d;
			return e;
		}
		/* a node of an entry killed during this walk: its links stay valid */
		node = e->hnext[d];
		if (match) {
			s->st.expired++;
			nftdp_ct_kill(s, e);
		}
	}
	return NULL;
}

/*
 * early_drop: evict the unassured confirmed entries of the first of
 * CT_EVICTION_RANGE buckets from the new tuple's that has any.
 */
static bool early_drop(struct nftdp_ct_shard *s, uint32_t hash, uint64_t now_ms)
{
	unsigned int i;

	for (i = 0; i < CT_EVICTION_RANGE; i++) {
		uint32_t node = s->buckets[(hash + i) & s->bucket_mask];
		unsigned int drops = 0;

		while (node != CT_NIL) {
			struct nftdp_ct_entry *e = &s->entries[node >> 1];

			node = e->hnext[node & 1];
			if (!e->in_use || (e->status & IPS_DYING))
				continue;
			if (expired(e, now_ms) && !e->refs) {
				s->st.expired++;
				nftdp_ct_kill(s, e);
				drops++; /* a free slot either way */
				continue;
			}
			if ((e->status & (IPS_ASSURED | IPS_DYING)) ||
			    !(e->status & IPS_CONFIRMED) || e->refs)
				continue;
			nftdp_ct_kill(s, e);
			s->st.early_drop++;
			drops++;
		}
		if (drops)
			return true;
	}
	return false;
}

/* the lines of the entry an established packet of node's direction
 * reads: 0 (the lookup, status, timeout), 2 (the protocol's state, the
 * original's packet counter) and for the reply tuple 1 (the tuple and
 * the reply's counters); the original's byte counter is in its carried
 * result, which the caller prefetches */
static inline void prefetch_node(const struct nftdp_ct_shard *s, uint32_t node)
{
	const uint8_t *e = (const uint8_t *)&s->entries[node >> 1];

	__builtin_prefetch(e);
	__builtin_prefetch(e + 128);
	if (node & 1)
		__builtin_prefetch(e + 64);
}

/* all four lines of entry idx, for writing: it is about to be
 * initialised (written out: the loop with its read/write branch stayed a
 * loop at -O2) */
static inline void prefetch_entry(const struct nftdp_ct_shard *s, uint32_t idx)
{
	const uint8_t *e = (const uint8_t *)&s->entries[idx];

	static_assert(sizeof(struct nftdp_ct_entry) == 4 * 64, "four lines");
	__builtin_prefetch(e, 1);
	__builtin_prefetch(e + 64, 1);
	__builtin_prefetch(e + 128, 1);
	__builtin_prefetch(e + 192, 1);
}

static struct nftdp_ct_entry *entry_alloc(struct nftdp_ct_shard *s, uint32_t hash, uint64_t now_ms)
{
	struct nftdp_ct_entry *e;

	if (s->free_head == CT_NIL && !early_drop(s, hash, now_ms)) {
		/* "nf_conntrack: table full, dropping packet" */
		s->st.table_full_events++;
		s->gc_early_drop = true;
		return NULL;
	}
	if (s->free_head == CT_NIL)
		return NULL;
	e = &s->entries[s->free_head];
	s->free_head = e->free_next;
	s->st.count++;
	if (s->free_head != CT_NIL)
		prefetch_entry(s, s->free_head); /* the next new connection's, cold */
	return e;
}

static void entry_init(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
		       const struct nftdp_ct_tuple *orig, const struct nftdp_ct_tuple *reply)
{
	uint32_t n = ++s->next_id;

	memset(e, 0, sizeof(*e));
	/* no result of the slot's last connection carries over; the original
	 * direction's byte counter (its owner word) starts at 0 */
	memset(s->carry[e - s->entries], 0, sizeof(s->carry[0]));
	e->tuple[0] = *orig;
	e->tuple[1] = *reply;
	e->in_use = 1;
	e->tmo = &s->tmo;
	e->shard = s;
	e->eventmask = ~0u; /* every event until `ct event set` says otherwise */
	/* unique in the shard (odd multiplier: a bijection), spread like the
	 * kernel's hashed ids, and never 0 */
	e->id = (n * 2654435761u) ^ ((uint32_t)s->cfg.shard_id << 24);
	if (!e->id)
		e->id = 1;
}

/* ct_inject.c: an entry for ctnetlink, in the table, not confirmed */
struct nftdp_ct_entry *nftdp_ct_entry_new(struct nftdp_ct_shard *s,
					  const struct nftdp_ct_tuple *orig,
					  const struct nftdp_ct_tuple *reply, uint64_t now_ms)
{
	uint32_t hash = nftdp_ct_tuple_hash(s, orig);
	struct nftdp_ct_entry *e = entry_alloc(s, hash, now_ms);

	if (!e)
		return NULL;
	entry_init(s, e, orig, reply);
	hash_link(s, e, hash);
	return e;
}

static inline void *ct_ref(struct nftdp_ct_entry *e, unsigned int ctinfo)
{
	e->refs++;
	return (void *)((uintptr_t)e | ctinfo);
}

/* ICMP types the kernel's icmp_is_err() lists */
static bool icmp_is_err(uint8_t type)
{
	return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

/* ICMPv6 neighbour discovery and MLD: never tracked (noct_valid_new) */
static bool icmpv6_noct(uint8_t type)
{
	return (type >= 130 && type <= 136) || type == 143;
}

enum { ICMP_GO_ON, ICMP_DONE, ICMP_INVALID };

/*
 * nf_conntrack_icmpv4_error / icmpv6_error and nf_conntrack_inet_error: an
 * ICMP error quoting a packet of a tracked flow is related to it. The quoted
 * packet was sent by one end, so its inverse is the entry's tuple in the
 * direction the error travels, and that tuple's destination must be the
 * error's destination.
 */
static __attribute__((noinline)) int handle_icmp(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
						 uint64_t now_ms)
{
	const uint8_t *l4 = pkt->data + pkt->th_off, *nh = pkt->data + pkt->nh_off;
	uint32_t l4len = nftdp_ct_l4len(pkt), off;
	struct nftdp_ct_tuple orig, inner;
	union nftdp_ct_addr outer_daddr;
	struct nftdp_ct_entry *e;
	bool v4 = pkt->nfproto == NFPROTO_IPV4;
	unsigned int ctinfo;
	int dir;

	if (l4len < 8)
		return ICMP_INVALID; /* short packet */
	if (!s->cfg.no_checksum && !nftdp_ct_l4_csum_ok(pkt, l4, l4len))
		return ICMP_INVALID;
	memset(&outer_daddr, 0, sizeof(outer_daddr));
	if (v4) {
		if (!icmp_is_err(l4[0]))
			return ICMP_GO_ON;
		memcpy(&outer_daddr.ip, nh + 16, 4);
	} else {
		if (icmpv6_noct(l4[0])) {
			pkt->ct_untracked = true;
			s->st.ignore++;
			return ICMP_DONE;
		}
		if (l4[0] >= 128)
			return ICMP_GO_ON;
		memcpy(outer_daddr.u8, nh + 24, 16);
	}
	if (!nftdp_ct_tuple_from(l4 + 8, l4len - 8, true, pkt->nfproto, &orig, &off))
		return ICMP_INVALID;
	if (orig.l4proto == IPPROTO_GRE)
		nftdp_ct_gre_keymap_lookup(s, l4 + 8 + off, l4len - 8 - off, &orig);
	if (!nftdp_ct_tuple_invert(&orig, &inner))
		return ICMP_INVALID;
	inner.zone = nftdp_ct_pkt_zone(pkt, IP_CT_DIR_ORIGINAL); /* the error's own zone */
	e = nftdp_ct_find(s, &inner, nftdp_ct_tuple_hash(s, &inner), &dir, now_ms);
	if (!e ||
	    (dir == IP_CT_DIR_REPLY && nftdp_ct_pkt_zone(pkt, IP_CT_DIR_REPLY) != e->tuple[1].zone))
		return ICMP_INVALID;
	if (memcmp(&outer_daddr, &e->tuple[dir].dst, sizeof(outer_daddr)))
		return ICMP_INVALID; /* outer daddr != inner */
	ctinfo = IP_CT_RELATED + (dir == IP_CT_DIR_REPLY ? IP_CT_IS_REPLY : 0);
	pkt->ct = ct_ref(e, ctinfo);
	pkt->ct_ops = &nftdp_ct_vm_ops;
	s->st.related++;
	return ICMP_DONE;
}

/* l4_packet's protocols other than TCP and UDP, out of line: their
 * registers and stack are paid by their own packets */
static __attribute__((noinline)) enum ct_verdict l4_other(struct nftdp_ct_shard *s,
							  struct nftdp_ct_entry *e, bool new,
							  const struct ct_l4pkt *p, int dir,
							  uint64_t now_ms)
{
	bool csum = !s->cfg.no_checksum;

	switch (e->tuple[0].l4proto) {
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return nftdp_ct_icmp_packet(s, e, p, dir, now_ms);
	case IPPROTO_GRE:
		return nftdp_ct_gre_packet(s, e, p, dir, now_ms);
	case IPPROTO_SCTP:
		if (nftdp_ct_sctp_error(p, csum))
			return CT_INVALID;
		return nftdp_ct_sctp_packet(s, e, new, p, dir, now_ms);
	default:
		return nftdp_ct_generic_packet(s, e, p, dir, now_ms);
	}
}

static enum ct_verdict l4_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, bool new,
				 const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	bool csum = !s->cfg.no_checksum;

	switch (e->tuple[0].l4proto) {
	case IPPROTO_TCP:
		if (nftdp_ct_tcp_error(p, csum))
			return CT_INVALID;
		if (new && !nftdp_ct_tcp_new(s, e, p))
			return CT_INVALID;
		return nftdp_ct_tcp_packet(s, e, p, dir, now_ms);
	case IPPROTO_UDP:
		if (nftdp_ct_udp_error(p, csum))
			return CT_INVALID;
		return nftdp_ct_udp_packet(s, e, p, dir, now_ms);
	default:
		return l4_other(s, e, new, p, dir, now_ms);
	}
}

/* the last packet reference is gone: free what nothing keeps */
static void ct_put(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e)
{
	if (--e->refs)
		return;
	if (e->status & IPS_DYING) {
		entry_free(s, e);
	} else if (!(e->status & IPS_CONFIRMED)) {
		s->st.unconfirmed_freed++;
		hash_unlink(s, e);
		entry_free(s, e);
	}
}

/*
 * The part of nf_conntrack_in before the lookup: untracked packets, what
 * cannot be tracked, ICMP errors. CT_GO_ON: *tp is the tuple to look up:
 * the one lk holds, or t worked out here.
 */
enum { CT_GO_ON, CT_DONE, CT_BAD };

/* ct_pre's tuple where no probe's is held: worked out, the GRE source key
 * and the zone added, hashed */
static __attribute__((noinline)) int ct_pre_tuple(struct nftdp_ct_shard *s,
						  struct nftdp_vm_pkt *pkt,
						  struct nftdp_ct_tuple *t, uint32_t *hash,
						  uint32_t *l4len)
{
	*l4len = nftdp_ct_l4len(pkt);
	if (!nftdp_ct_pkt_tuple_len(pkt, *l4len, t))
		return CT_BAD;
	if (t->l4proto == IPPROTO_GRE) /* gre_pkt_to_tuple's source key */
		nftdp_ct_gre_keymap_lookup(s, pkt->data + pkt->th_off, *l4len, t);
	/* the lookup keys the zone of the original direction
	 * (hash_conntrack_raw(tuple, nf_ct_zone_id(zone, IP_CT_DIR_ORIGINAL))) */
	t->zone = nftdp_ct_pkt_zone(pkt, IP_CT_DIR_ORIGINAL);
	*hash = nftdp_ct_tuple_hash(s, t);
	return CT_GO_ON;
}

/* in line in its three callers, the tuple's and ICMP's parts out of line */
static inline __attribute__((always_inline)) int
ct_pre(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms,
       struct nftdp_ct_tuple *t, const struct nftdp_ct_tuple **tp, uint32_t *hash, uint32_t *node,
       uint32_t *l4len, const struct nftdp_ct_lookup *lk)
{
	*node = CT_NIL;
	if (pkt->ct_seen)
		return CT_DONE;
	if (pkt->ct || pkt->ct_untracked || pkt->out.notrack) {
		if (!pkt->ct) {
			pkt->ct_untracked = true;
			s->st.ignore++;
		}
		return CT_DONE;
	}
	if (!(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->fragoff ||
	    (pkt->nfproto != NFPROTO_IPV4 && pkt->nfproto != NFPROTO_IPV6))
		return CT_BAD;
	/* nf_ct_zone_tmpl: a CT --zone mark template takes the mark now */
	if (pkt->ct_tmpl_flags & NFTDP_VM_CT_TMPL_ZONE_MARK)
		pkt->ct_zone = (uint16_t)pkt->mark;
	if ((pkt->l4proto == IPPROTO_ICMP && pkt->nfproto == NFPROTO_IPV4) ||
	    (pkt->l4proto == IPPROTO_ICMPV6 && pkt->nfproto == NFPROTO_IPV6)) {
		int rc = handle_icmp(s, pkt, now_ms);

		if (rc == ICMP_DONE)
			return CT_DONE;
		if (rc == ICMP_INVALID)
			return CT_BAD;
	}
	if (pkt->ct_zone_dir)
		s->zones_seen = true; /* confirm checks for clashes from now on */
	/* the probe's, for the same bytes and zone */
	if (lk && lk->data == pkt->data && lk->len == pkt->len &&
	    lk->t.zone == nftdp_ct_pkt_zone(pkt, IP_CT_DIR_ORIGINAL)) {
		*tp = &lk->t; /* read in place: no copy */
		*hash = lk->hash;
		*l4len = lk->l4len;
		if (lk->links == s->links)
			*node = lk->node;
		return CT_GO_ON;
	}
	*tp = t;
	return ct_pre_tuple(s, pkt, t, hash, l4len);
}

/* init_conntrack's use of an xtables CT template (pkt->ct_tmpl_*): the
 * ecache extension's event mask, and the template's helper where no
 * expectation matched (__nf_ct_try_assign_helper) */
static __attribute__((noinline)) void ct_from_template(struct nftdp_ct_shard *s,
						       struct nftdp_ct_entry *e,
						       const struct nftdp_vm_pkt *pkt,
						       unsigned int ctinfo)
{
	if (pkt->ct_tmpl_flags & NFTDP_VM_CT_TMPL_EVENTS)
		e->eventmask = pkt->ct_tmpl_events;
	if (pkt->ct_tmpl_helper && ctinfo != IP_CT_RELATED)
		nftdp_ct_helper_assign(s, e, pkt->ct_tmpl_helper);
}

/* resolve_normal_ct's ctinfo for a packet of a found entry e in direction
 * dir */
static inline unsigned int found_ctinfo(const struct nftdp_ct_entry *e, int dir)
{
	if (dir == IP_CT_DIR_REPLY)
		return IP_CT_ESTABLISHED_REPLY;
	if (e->status & IPS_SEEN_REPLY)
		return IP_CT_ESTABLISHED;
	if (e->status & IPS_EXPECTED)
		return IP_CT_RELATED;
	return IP_CT_NEW;
}

/*
 * nf_conntrack_in once the entry is known (found, or new and set up): the
 * protocol's step, then the packet's reference. Not CT_ACCEPT: the packet
 * has none (CT_REPEAT: e was killed, look up again).
 */
static inline __attribute__((always_inline)) enum ct_verdict
ct_in_entry(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, struct nftdp_ct_entry *e, bool new,
	    int dir, unsigned int ctinfo, const struct ct_l4pkt *p, uint32_t hash, uint64_t now_ms)
{
	enum ct_verdict v;

	e->refs++; /* held while the protocol runs: it may kill the entry */
	v = l4_packet(s, e, new, p, dir, now_ms);
	if (v != CT_ACCEPT) {
		e->refs--;
		if (new) {
			entry_free(s, e); /* never in the table */
		} else if (v == CT_REPEAT) {
			s->st.deleted++;
			nftdp_ct_kill(s, e); /* frees it unless packets hold it */
		} else if (!e->refs && (e->status & IPS_DYING)) {
			entry_free(s, e);
		}
		return v;
	}
	if (new && !(e->status & IPS_DYING)) {
		hash_link(s, e, hash); /* e->tuple[0] is the looked-up tuple */
		s->st.new_++;
		if (e->status & IPS_EXPECTED) /* init_conntrack's exp->expectfn */
			nftdp_ct_expect_nat_follow(s, e);
	}
	if (ctinfo == IP_CT_ESTABLISHED_REPLY && !(e->status & IPS_SEEN_REPLY)) {
		e->status |= IPS_SEEN_REPLY;
		nftdp_ct_event_cache(e, IPCT_REPLY);
	}
	pkt->ct = (void *)((uintptr_t)e | ctinfo); /* keeps the reference taken above */
	pkt->ct_ops = &nftdp_ct_vm_ops;
	return CT_ACCEPT;
}

/* nf_conntrack_in from the lookup on (resolve_normal_ct, l4proto->packet);
 * tries: lookups repeated already (one at most) */
static unsigned int ct_in_tuple(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				const struct nftdp_ct_tuple *tp, uint32_t hash, uint32_t node,
				uint32_t l4len, uint64_t now_ms, unsigned int tries)
{
	struct nftdp_ct_tuple r;
	struct nftdp_ct_entry *e;
	struct ct_l4pkt p;
	unsigned int ctinfo;
	enum ct_verdict v;
	bool new;
	int dir;

	p.l4 = pkt->data + pkt->th_off;
	p.l4len = l4len; /* nftdp_ct_l4len(pkt), from ct_pre */
	p.pkt = pkt;
repeat:
	e = NULL;
	if (node == NFTDP_CT_LOOKUP_MISS) {
		/* the probe walked the chain and no entry had the tuple;
		 * nothing was linked since, and kills only unlink */
		node = CT_NIL;
	} else {
		if (node != CT_NIL) {
			/* the probe's find: nothing was linked since, so the
			 * first live match of the chain is still this one
			 * unless it died */
			e = &s->entries[node >> 1];
			dir = (int)(node & 1);
			node = CT_NIL;
			if (!e->in_use || (e->status & IPS_DYING) || expired(e, now_ms))
				e = NULL;
		}
		if (!e)
			e = nftdp_ct_find(s, tp, hash, &dir, now_ms);
	}
	/* nf_ct_zone_equal in the direction found: a reply-direction match
	 * needs the packet's reply zone to be the entry's */
	if (e && dir == IP_CT_DIR_REPLY &&
	    nftdp_ct_pkt_zone(pkt, IP_CT_DIR_REPLY) != e->tuple[1].zone)
		e = NULL;
	if (!e && nftdp_ct_pkt_zone(pkt, IP_CT_DIR_REPLY) != tp->zone) {
		/* resolve_normal_ct's second lookup with the reply zone id of a
		 * directional zone: only a reply tuple can match it */
		struct nftdp_ct_tuple t2 = *tp;

		t2.zone = nftdp_ct_pkt_zone(pkt, IP_CT_DIR_REPLY);
		e = nftdp_ct_find(s, &t2, nftdp_ct_tuple_hash(s, &t2), &dir, now_ms);
		if (e && dir != IP_CT_DIR_REPLY)
			e = NULL;
	}
	new = !e;
	if (new) {
		/* init_conntrack */
		if (!nftdp_ct_tuple_invert(tp, &r))
			goto invalid;
		r.zone = nftdp_ct_pkt_zone(pkt, IP_CT_DIR_REPLY);
		e = entry_alloc(s, hash, now_ms);
		if (!e) {
			s->st.drop++;
			return NF_DROP;
		}
		entry_init(s, e, tp, &r);
		e->zone_dir = pkt->ct_zone_dir ? pkt->ct_zone_dir : NFTDP_VM_CT_ZONE_DIR_BOTH;
		dir = IP_CT_DIR_ORIGINAL;
		ctinfo = IP_CT_NEW;
		if (nftdp_ct_expect_any(s) && nftdp_ct_expect_init_conntrack(s, e, now_ms))
			ctinfo = IP_CT_RELATED;
		if (pkt->ct_tmpl_flags | pkt->ct_tmpl_helper) /* a CT target's template */
			ct_from_template(s, e, pkt, ctinfo);
	} else {
		s->st.found++;
		ctinfo = found_ctinfo(e, dir);
	}
	v = ct_in_entry(s, pkt, e, new, dir, ctinfo, &p, hash, now_ms);
	if (v == CT_ACCEPT)
		return NF_ACCEPT;
	if (v == CT_REPEAT && !tries++)
		goto repeat;

invalid:
	s->st.invalid++;
	return NF_ACCEPT;
}

unsigned int nftdp_ct_in(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms)
{
	const struct nftdp_ct_tuple *tp;
	struct nftdp_ct_tuple t;
	uint32_t hash, node, l4len;

	s->now_ms = now_ms;
	switch (ct_pre(s, pkt, now_ms, &t, &tp, &hash, &node, &l4len, NULL)) {
	case CT_DONE:
		return NF_ACCEPT;
	case CT_BAD:
		s->st.invalid++;
		return NF_ACCEPT;
	default:
		return ct_in_tuple(s, pkt, tp, hash, node, l4len, now_ms, 0);
	}
}

/* the packets conntrack's probe may look up at all (nftdp_ct_probe's
 * checks before the tuple) */
static inline bool probe_may(const struct nftdp_vm_pkt *pkt)
{
	return !(pkt->ct || pkt->ct_untracked || pkt->ct_seen || pkt->out.notrack ||
		 !(pkt->flags & NFTDP_VM_PKT_F_L4PROTO) || pkt->fragoff ||
		 (pkt->nfproto != NFPROTO_IPV4 && pkt->nfproto != NFPROTO_IPV6) ||
		 pkt->l4proto == IPPROTO_ICMP || pkt->l4proto == IPPROTO_ICMPV6);
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* a tuple's first four words, its addresses, from the network header nh
 * (an IPv4 address followed by 12 zero bytes) */
static inline void addr_words(const uint8_t *nh, bool v4, uint64_t w[4])
{
	if (v4) {
		w[0] = nftdp_ld32(nh + 12);
		w[1] = 0;
		w[2] = nftdp_ld32(nh + 16);
		w[3] = 0;
	} else {
		w[0] = nftdp_ld64(nh + 8);
		w[1] = nftdp_ld64(nh + 16);
		w[2] = nftdp_ld64(nh + 24);
		w[3] = nftdp_ld64(nh + 32);
	}
}
#endif

/*
 * nftdp_ct_pkt_tuple_len for a packet probe_may admits: TCP and UDP over
 * IPv4 and IPv6 (almost every packet) in line, the tuple's five words
 * stored once each; the rest, and what fails a check, out of line.
 */
static inline bool probe_tuple(const struct nftdp_vm_pkt *pkt, uint32_t l4len,
			       struct nftdp_ct_tuple *t)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint8_t *nh = pkt->data + pkt->nh_off, *th = pkt->data + pkt->th_off;
	bool v4 = pkt->nfproto == NFPROTO_IPV4;
	uint64_t w[5];

	static_assert(offsetof(struct nftdp_ct_tuple, dst) == 16 &&
			  offsetof(struct nftdp_ct_tuple, sport) == 32 &&
			  offsetof(struct nftdp_ct_tuple, dport) == 34 &&
			  offsetof(struct nftdp_ct_tuple, l3proto) == 36 &&
			  offsetof(struct nftdp_ct_tuple, l4proto) == 37,
		      "probe_tuple's words");
	if ((pkt->l4proto == IPPROTO_TCP || pkt->l4proto == IPPROTO_UDP) && l4len >= 4 &&
	    pkt->len >= pkt->th_off && pkt->th_off >= pkt->nh_off &&
	    pkt->th_off - pkt->nh_off >= (v4 ? 20u : 40u)) {
		addr_words(nh, v4, w);
		/* the ports, l3proto, l4proto, zone 0 */
		w[4] = nftdp_ld32(th) | (uint64_t)pkt->nfproto << 32 | (uint64_t)pkt->l4proto << 40;
		memcpy(t, w, sizeof(w));
		return true;
	}
#endif
	return nftdp_ct_pkt_tuple_len(pkt, l4len, t);
}

/* lk holds pkt's tuple and hash (nftdp_ct_prefetch_burst or an earlier
 * probe of the same bytes and zone); a GRE tuple is worked out again, as
 * its key depends on keymaps an earlier packet may have added */
static inline bool lookup_holds(const struct nftdp_ct_lookup *lk, const struct nftdp_vm_pkt *pkt)
{
	return lk->data == pkt->data && lk->len == pkt->len && lk->t.l4proto != IPPROTO_GRE &&
	       lk->t.zone == nftdp_ct_pkt_zone(pkt, IP_CT_DIR_ORIGINAL);
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * nftdp_ct_probe for what almost every packet is, with no lookup held: a
 * TCP or UDP view that probe_may admits and whose headers probe_tuple
 * reads in line. Its tuple stays in five words: hashed, stored into lk and
 * compared with each entry's from them. NULL with *done false: not that
 * case, nothing changed.
 */
static inline __attribute__((always_inline)) const void *
probe_words(const struct nftdp_ct_shard *s, const struct nftdp_vm_pkt *pkt, uint64_t now_ms,
	    struct nftdp_ct_lookup *lk, bool *done)
{
	const uint8_t *nh = pkt->data + pkt->nh_off, *th = pkt->data + pkt->th_off;
	bool v4 = pkt->nfproto == NFPROTO_IPV4;
	uint32_t l4len, node, hash;
	uint64_t w[5];

	*done = false;
	if ((pkt->l4proto != IPPROTO_TCP && pkt->l4proto != IPPROTO_UDP) || !probe_may(pkt))
		return NULL;
	l4len = nftdp_ct_l4len(pkt);
	/* probe_tuple's own checks */
	if (l4len < 4 || pkt->len < pkt->th_off || pkt->th_off < pkt->nh_off ||
	    pkt->th_off - pkt->nh_off < (v4 ? 20u : 40u))
		return NULL;
	*done = true;
	addr_words(nh, v4, w);
	/* the ports, l3proto, l4proto, the zone */
	w[4] = nftdp_ld32(th) | (uint64_t)pkt->nfproto << 32 | (uint64_t)pkt->l4proto << 40 |
	       (uint64_t)nftdp_ct_pkt_zone(pkt, IP_CT_DIR_ORIGINAL) << 48;
	hash = nftdp_ct_words_hash(s, w);
	memcpy(&lk->t, w, sizeof(w));
	lk->data = pkt->data;
	lk->len = pkt->len;
	lk->hash = hash;
	lk->l4len = l4len;
	lk->node = CT_NIL;
	/* nftdp_ct_find without its side effects */
	node = s->buckets[hash & s->bucket_mask];
	while (node != CT_NIL) {
		const struct nftdp_ct_entry *e = &s->entries[node >> 1];
		int d = (int)(node & 1);
		const uint8_t *et = (const uint8_t *)&e->tuple[d];
		uint64_t x = (nftdp_ld64(et) ^ w[0]) | (nftdp_ld64(et + 8) ^ w[1]) |
			     (nftdp_ld64(et + 16) ^ w[2]) | (nftdp_ld64(et + 24) ^ w[3]) |
			     (nftdp_ld64(et + 32) ^ w[4]);

		/* the link only past an entry that does not match */
		if (x || !e->in_use || (e->status & IPS_DYING)) {
			node = e->hnext[d];
			continue;
		}
		if (!(e->status & IPS_CONFIRMED) || expired(e, now_ms))
			return NULL;
		lk->node = node;
		lk->links = s->links;
		return e;
	}
	/* no entry has the tuple: nftdp_ct_find would find none either
	 * (and reap none) until a node is linked */
	lk->node = NFTDP_CT_LOOKUP_MISS;
	lk->links = s->links;
	return NULL;
}
#endif

const void *nftdp_ct_probe(const struct nftdp_ct_shard *s, const struct nftdp_vm_pkt *pkt,
			   uint64_t now_ms, struct nftdp_ct_lookup *lk)
{
	struct nftdp_ct_tuple own;
	const struct nftdp_ct_tuple *tp;
	uint32_t node, hash;
	bool held = lk && lk->data && lookup_holds(lk, pkt);

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (lk && !lk->data) {
		bool done;
		const void *e = probe_words(s, pkt, now_ms, lk, &done);

		if (done)
			return e;
	}
#endif
	if (lk) {
		lk->node = CT_NIL;
		if (!held)
			lk->data = NULL;
	}
	if (!probe_may(pkt)) {
		if (lk)
			lk->data = NULL;
		return NULL;
	}
	if (held) {
		/* the prefetch's tuple and hash: its bucket and entry are on
		 * their way */
		tp = &lk->t;
		hash = lk->hash;
	} else {
		/* worked out where the lookup keeps it (lk->data is NULL
		 * until it is whole) */
		struct nftdp_ct_tuple *t = lk ? &lk->t : &own;
		uint32_t l4len = nftdp_ct_l4len(pkt);

		if (!probe_tuple(pkt, l4len, t))
			return NULL;
		if (t->l4proto == IPPROTO_GRE)
			nftdp_ct_gre_keymap_lookup(s, pkt->data + pkt->th_off, l4len, t);
		t->zone = nftdp_ct_pkt_zone(pkt, IP_CT_DIR_ORIGINAL);
		hash = nftdp_ct_tuple_hash(s, t);
		if (lk) {
			lk->data = pkt->data;
			lk->len = pkt->len;
			lk->hash = hash;
			lk->l4len = l4len;
		}
		tp = t;
	}
	/* nftdp_ct_find without its side effects */
	node = s->buckets[hash & s->bucket_mask];
	while (node != CT_NIL) {
		const struct nftdp_ct_entry *e = &s->entries[node >> 1];
		int d = (int)(node & 1);

		/* the link only past an entry that does not match */
		if (!e->in_use || (e->status & IPS_DYING) ||
		    memcmp(&e->tuple[d], tp, sizeof(*tp))) {
			node = e->hnext[d];
			continue;
		}
		if (!(e->status & IPS_CONFIRMED) || expired(e, now_ms))
			return NULL;
		if (lk) {
			lk->node = (uint32_t)(e - s->entries) * 2 + (uint32_t)d;
			lk->links = s->links;
		}
		return e;
	}
	/* no entry has the tuple: nftdp_ct_find would find none either
	 * (and reap none) until a node is linked */
	if (lk) {
		lk->node = NFTDP_CT_LOOKUP_MISS;
		lk->links = s->links;
	}
	return NULL;
}

/*
 * The probe's first two steps over a burst, so that their cache misses
 * overlap (a table of a million entries is beyond every cache: each
 * packet's bucket, entry and carried result are misses): every packet's
 * tuple and hash, prefetching its bucket; then every bucket's first node,
 * prefetching that entry's four lines and the carried result of the
 * node's direction. What it works out stays in lk[i] for the probe and
 * nftdp_ct_in_burst (lookup_holds).
 */
void nftdp_ct_prefetch_burst(const struct nftdp_ct_shard *s, struct nftdp_vm_pkt *const *pkts,
			     unsigned int n, struct nftdp_ct_lookup *const *lk)
{
	unsigned int i;

	if (n > NFTDP_VM_BURST_MAX)
		n = NFTDP_VM_BURST_MAX;
	for (i = 0; i < n; i++) {
		const struct nftdp_vm_pkt *pkt = pkts[i];
		struct nftdp_ct_lookup *l = lk[i];

		if (!pkt || !l)
			continue;
		l->data = NULL;
		l->node = CT_NIL;
		if (!probe_may(pkt))
			continue;
		l->l4len = nftdp_ct_l4len(pkt);
		if (!nftdp_ct_pkt_tuple_len(pkt, l->l4len, &l->t) || l->t.l4proto == IPPROTO_GRE)
			continue;
		l->t.zone = nftdp_ct_pkt_zone(pkt, IP_CT_DIR_ORIGINAL);
		l->hash = nftdp_ct_tuple_hash(s, &l->t);
		l->data = pkt->data;
		l->len = pkt->len;
		__builtin_prefetch(&s->buckets[l->hash & s->bucket_mask]);
	}
	for (i = 0; i < n; i++) {
		const struct nftdp_ct_lookup *l = lk[i];
		uint32_t first;

		if (!pkts[i] || !l || !l->data)
			continue;
		first = s->buckets[l->hash & s->bucket_mask];
		if (first == CT_NIL)
			continue;
		prefetch_node(s, first);
		__builtin_prefetch(&s->carry[first >> 1][first & 1]);
	}
}

/*
 * Three passes so that the cache misses of a burst overlap: tuples and
 * hashes, prefetching the buckets; the first node of each bucket,
 * prefetching its entry; then the lookups and state machines.
 */
void nftdp_ct_in_burst(struct nftdp_ct_shard *s, struct nftdp_vm_pkt **pkts, unsigned int n,
		       unsigned int *verdicts, uint64_t now_ms,
		       const struct nftdp_ct_lookup *const *lk)
{
	struct nftdp_ct_tuple t[NFTDP_VM_BURST_MAX];
	const struct nftdp_ct_tuple *tp[NFTDP_VM_BURST_MAX];
	uint32_t hash[NFTDP_VM_BURST_MAX], node[NFTDP_VM_BURST_MAX], l4len[NFTDP_VM_BURST_MAX];
	uint8_t go[NFTDP_VM_BURST_MAX];
	unsigned int i;

	s->now_ms = now_ms;
	for (i = 0; i < n; i++) {
		const struct nftdp_vm_pkt *pk = pkts[i];
		int rc;

		verdicts[i] = NF_ACCEPT;
		if (pk->l4proto == IPPROTO_ICMP || pk->l4proto == IPPROTO_ICMPV6) {
			go[i] = 2; /* errors may refer to flows this burst creates: in order */
			continue;
		}
		rc = ct_pre(s, pkts[i], now_ms, &t[i], &tp[i], &hash[i], &node[i], &l4len[i],
			    lk ? lk[i] : NULL);
		go[i] = rc == CT_GO_ON;
		if (rc == CT_BAD)
			s->st.invalid++;
		if (!go[i] || node[i] != CT_NIL)
			continue; /* the probe's entry: its lines were just read */
		__builtin_prefetch(&s->buckets[hash[i] & s->bucket_mask]);
	}
	for (i = 0; i < n; i++) {
		uint32_t first;

		if (go[i] != 1 || node[i] != CT_NIL)
			continue;
		first = s->buckets[hash[i] & s->bucket_mask];
		if (first == CT_NIL)
			continue;
		prefetch_node(s, first);
		if (!(first & 1)) /* the original's byte counter */
			__builtin_prefetch(&s->carry[first >> 1][0]);
	}
	for (i = 0; i < n; i++) {
		if (go[i] == 1)
			verdicts[i] =
			    ct_in_tuple(s, pkts[i], tp[i], hash[i], node[i], l4len[i], now_ms, 0);
		else if (go[i] == 2)
			verdicts[i] = nftdp_ct_in(s, pkts[i], now_ms);
	}
}

/* nf_conntrack_in of pkt whose lookup ct_in_tuple would find the live
 * entry lk->node: the rest (the zone note, the reply zone's check) */
static inline __attribute__((always_inline)) unsigned int in_found(struct nftdp_ct_shard *s,
								   struct nftdp_vm_pkt *pkt,
								   uint64_t now_ms,
								   const struct nftdp_ct_lookup *lk)
{
	struct nftdp_ct_entry *e = &s->entries[lk->node >> 1];
	int dir = (int)(lk->node & 1);
	struct ct_l4pkt p;
	enum ct_verdict v;

	s->now_ms = now_ms;
	if (pkt->ct_zone_dir)
		s->zones_seen = true;
	/* found by its reply tuple: of the packet's reply zone, or
	 * ct_in_tuple looks again */
	if (dir == IP_CT_DIR_REPLY && nftdp_ct_pkt_zone(pkt, IP_CT_DIR_REPLY) != e->tuple[1].zone)
		return ct_in_tuple(s, pkt, &lk->t, lk->hash, lk->node, lk->l4len, now_ms, 0);
	s->st.found++;
	p.l4 = pkt->data + pkt->th_off;
	p.l4len = lk->l4len;
	p.pkt = pkt;
	v = ct_in_entry(s, pkt, e, false, dir, found_ctinfo(e, dir), &p, lk->hash, now_ms);
	if (v == CT_ACCEPT)
		return NF_ACCEPT;
	if (v == CT_REPEAT) /* its second lookup */
		return ct_in_tuple(s, pkt, &lk->t, lk->hash, CT_NIL, lk->l4len, now_ms, 1);
	s->st.invalid++;
	return NF_ACCEPT;
}

unsigned int nftdp_ct_in_probed(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms,
				const struct nftdp_ct_lookup *lk)
{
	const struct nftdp_ct_entry *e;

	/* the probe found an entry for these bytes, so probe_may held:
	 * ct_pre would take the CT_GO_ON branch with lk's tuple, hash,
	 * length and node; of its steps only the zone note is left */
	if (!lk || lk->data != pkt->data || lk->len != pkt->len || lk->links != s->links ||
	    lk->node >= NFTDP_CT_LOOKUP_MISS)
		return nftdp_ct_in_hinted(s, pkt, now_ms, lk);
	/* ct_in_tuple's find would return the probe's entry while it lives */
	e = &s->entries[lk->node >> 1];
	if (!e->in_use || (e->status & IPS_DYING) || expired(e, now_ms)) {
		s->now_ms = now_ms;
		if (pkt->ct_zone_dir)
			s->zones_seen = true;
		return ct_in_tuple(s, pkt, &lk->t, lk->hash, lk->node, lk->l4len, now_ms, 0);
	}
	return in_found(s, pkt, now_ms, lk);
}

unsigned int nftdp_ct_in_found(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms,
			       const struct nftdp_ct_lookup *lk)
{
	/* nothing ran since the probe found the live confirmed entry
	 * lk->node for pkt: nftdp_ct_in_probed's checks hold */
	return in_found(s, pkt, now_ms, lk);
}

unsigned int nftdp_ct_in_hinted(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms,
				const struct nftdp_ct_lookup *lk)
{
	const struct nftdp_ct_tuple *tp;
	struct nftdp_ct_tuple t;
	uint32_t hash, node, l4len;

	/* nftdp_ct_in_burst's steps for one packet, without its loops */
	s->now_ms = now_ms;
	if (pkt->l4proto == IPPROTO_ICMP || pkt->l4proto == IPPROTO_ICMPV6)
		return nftdp_ct_in(s, pkt, now_ms);
	switch (ct_pre(s, pkt, now_ms, &t, &tp, &hash, &node, &l4len, lk)) {
	case CT_GO_ON:
		return ct_in_tuple(s, pkt, tp, hash, node, l4len, now_ms, 0);
	case CT_BAD:
		s->st.invalid++;
		return NF_ACCEPT;
	default:
		return NF_ACCEPT;
	}
}

/*
 * __nf_conntrack_confirm's check, and nf_conntrack_hash_check_insert's for
 * entries ctnetlink makes: another entry already has tuple t (after NAT
 * chose the tuples). Only zones make that possible here: NAT picks
 * tuples no one uses, and without zones a packet whose tuple is another
 * entry's reply finds that entry.
 */
bool nftdp_ct_tuple_taken(const struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e,
			  const struct nftdp_ct_tuple *t)
{
	uint32_t node = s->buckets[nftdp_ct_tuple_hash(s, t) & s->bucket_mask];

	while (node != CT_NIL) {
		const struct nftdp_ct_entry *o = &s->entries[node >> 1];
		int d = (int)(node & 1);

		node = o->hnext[d];
		if (o != e && o->in_use && !(o->status & IPS_DYING) &&
		    !memcmp(&o->tuple[d], t, sizeof(*t)))
			return true;
	}
	return false;
}

/* nftdp_ct_confirm past its first case, out of line so that the first
 * case pays no registers saved for the rest */
static __attribute__((noinline)) unsigned int
confirm_slow(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, struct nftdp_ct_entry *e,
	     unsigned int ctinfo, unsigned int verdict)
{
	bool seqadj = e->status & IPS_SEQ_ADJUST;

	if (verdict == NF_ACCEPT && s->zones_seen && !(e->status & (IPS_CONFIRMED | IPS_DYING)) &&
	    (nftdp_ct_tuple_taken(s, e, &e->tuple[0]) ||
	     nftdp_ct_tuple_taken(s, e, &e->tuple[1]))) {
		/* nf_ct_resolve_clash finds nothing to merge with: NF_DROP */
		s->st.insert_failed++;
		nftdp_ct_kill(s, e);
		ct_put(s, e);
		return NF_DROP;
	}
	/* nf_confirm: the helper sees every accepted packet of its connection */
	if (e->helper && verdict == NF_ACCEPT && !(e->status & IPS_DYING) &&
	    nftdp_ct_help(s, e, pkt, ctinfo) != NF_ACCEPT) {
		ct_put(s, e);
		return NF_DROP;
	}
	/* then nf_ct_seq_adjust (seqadj_needed was read before the helper ran) */
	if (seqadj && verdict == NF_ACCEPT && ctinfo != IP_CT_RELATED_REPLY &&
	    !nftdp_ct_seq_adjust(s, e, pkt, ctinfo >= IP_CT_IS_REPLY)) {
		s->st.drop++;
		ct_put(s, e);
		return NF_DROP;
	}
	/* only a packet of the original direction confirms: a reply attached
	 * to a new connection (nf_ct_attach) leaves it as it was */
	if (verdict == NF_ACCEPT && ctinfo < IP_CT_IS_REPLY &&
	    !(e->status & (IPS_CONFIRMED | IPS_DYING))) {
		e->status |= IPS_CONFIRMED;
		s->st.insert++;
		nftdp_ct_event_cache(e, IPCT_NEW);
	}
	/* nf_ct_deliver_cached_events: with a packet that got through */
	if (verdict == NF_ACCEPT && e->ev_pending && (e->status & IPS_CONFIRMED) &&
	    !(e->status & IPS_DYING)) {
		nftdp_ct_event_push(s, e, e->ev_pending);
		e->ev_pending = 0;
	}
	ct_put(s, e);
	return verdict;
}

unsigned int nftdp_ct_confirm(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
			      unsigned int verdict)
{
	struct nftdp_ct_entry *e;
	unsigned int ctinfo;

	if (!pkt->ct)
		return verdict;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	pkt->ct = NULL;
	/* nf_confirm without a helper or sequence adjustment calls
	 * nf_conntrack_confirm, which for a confirmed entry only delivers
	 * the cached events (nf_ct_deliver_cached_events, with a packet that
	 * got through: a state change's, an established packet's every few
	 * segments); all that is left is ct_put's reference, which cannot be
	 * the last one that frees a live confirmed entry */
	if ((e->status & (IPS_CONFIRMED | IPS_DYING | IPS_SEQ_ADJUST)) == IPS_CONFIRMED &&
	    !e->helper) {
		if (e->ev_pending && verdict == NF_ACCEPT) {
			nftdp_ct_event_push(s, e, e->ev_pending);
			e->ev_pending = 0;
		}
		e->refs--;
		return verdict;
	}
	return confirm_slow(s, pkt, e, ctinfo, verdict);
}

struct nftdp_vm_flow_carry *nftdp_ct_carry(const struct nftdp_ct_shard *s, const void *ct)
{
	unsigned int ctinfo;
	struct nftdp_ct_entry *e = nftdp_ct_entry_of(ct, &ctinfo);

	/* the shard from the caller: e->shard is in the entry's last line,
	 * which an established packet of the reply direction never reads */
	return &s->carry[e - s->entries][ctinfo >= IP_CT_IS_REPLY];
}

bool nftdp_ct_pkt_plain(const struct nftdp_vm_pkt *pkt)
{
	const struct nftdp_ct_entry *e;
	unsigned int ctinfo;

	if (!pkt->ct)
		return true;
	e = nftdp_ct_entry_of(pkt->ct, &ctinfo);
	return (e->status & (IPS_CONFIRMED | IPS_DYING)) == IPS_CONFIRMED && !e->helper;
}

void nftdp_ct_attach(struct nftdp_vm_pkt *nskb, const struct nftdp_vm_pkt *skb)
{
	struct nftdp_ct_entry *e;
	unsigned int ctinfo;

	if (!skb->ct)
		return;
	e = nftdp_ct_entry_of(skb->ct, &ctinfo);
	/* __nf_conntrack_attach: the answer travels the other way */
	ctinfo = ctinfo < IP_CT_IS_REPLY ? IP_CT_RELATED_REPLY : IP_CT_RELATED;
	nskb->ct = ct_ref(e, ctinfo);
	nskb->ct_ops = &nftdp_ct_vm_ops;
	nskb->ct_untracked = false;
}

void nftdp_ct_confirm_burst(struct nftdp_ct_shard *s, struct nftdp_vm_pkt **pkts, unsigned int n,
			    const unsigned int *verdicts)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		nftdp_ct_confirm(s, pkts[i], verdicts[i]);
}

/* gc_worker_can_early_drop: under pressure the gc also evicts these */
static bool gc_can_early_drop(const struct nftdp_ct_entry *e)
{
	if (!(e->status & IPS_ASSURED))
		return true;
	if (e->tuple[0].l4proto == IPPROTO_SCTP)
		return nftdp_ct_sctp_can_early_drop(e);
	return e->tuple[0].l4proto == IPPROTO_TCP && nftdp_ct_tcp_can_early_drop(e);
}

unsigned int nftdp_ct_gc(struct nftdp_ct_shard *s, uint64_t now_ms, unsigned int budget)
{
	/* gc_worker: once the table was full, above nf_conntrack_max95 the
	 * unassured and closing entries go too, until the sweep ends */
	bool pressure =
	    s->gc_early_drop && (uint64_t)s->st.count * 100 > (uint64_t)s->n_entries * 95;
	unsigned int freed = 0;

	nftdp_ct_expect_gc(s, now_ms);
	if (s->st.count == 0)
		return 0; /* nothing to reap: leave the cache alone */
	if (budget > s->n_entries)
		budget = s->n_entries;
	while (budget--) {
		struct nftdp_ct_entry *e = &s->entries[s->gc_cursor];

		if (++s->gc_cursor == s->n_entries) {
			s->gc_cursor = 0;
			s->gc_early_drop = false;
		}
		if (!e->in_use || (e->status & IPS_DYING) || !(e->status & IPS_CONFIRMED))
			continue;
		if (e->expires_ms <= now_ms) {
			s->st.expired++;
		} else if (pressure && !e->refs && gc_can_early_drop(e)) {
			s->st.early_drop++;
		} else {
			continue;
		}
		nftdp_ct_kill(s, e);
		freed++;
	}
	return freed;
}

void nftdp_ct_fill_info(const struct nftdp_ct_entry *e, uint64_t now_ms, struct nftdp_ct_info *o)
{
	uint32_t sp[3];

	memset(o, 0, sizeof(*o));
	o->tuple[0] = e->tuple[0];
	o->tuple[1] = e->tuple[1];
	o->status = e->status;
	o->expires_ms = e->expires_ms;
	o->timeout_s = e->expires_ms > now_ms ? (uint32_t)((e->expires_ms - now_ms) / 1000) : 0;
	o->mark = e->mark;
	o->secmark = e->secmark;
	o->id = e->id;
	o->use = 1u + e->refs;
	o->zone = nftdp_ct_entry_zone(e);
	for (int d = 0; d < 2; d++) {
		struct ct_acct a = nftdp_ct_acct_get(e->shard, e, d);

		o->packets[d] = a.packets;
		o->bytes[d] = a.bytes;
	}
	memcpy(o->labels, e->labels, sizeof(o->labels));
	o->helper = nftdp_ct_helper_name(e->helper);
	/* ctnetlink_dump_ct_seq_adj: IPS_SEQ_ADJUST and the extension */
	o->seqadj = (e->status & IPS_SEQ_ADJUST) && nftdp_ct_seqadj_ext(e->shard, e);
	if (o->seqadj)
		memcpy(o->seq, e->shard->help[e - e->shard->entries].seq, sizeof(o->seq));
	o->synproxy = nftdp_ct_synproxy_info(e, sp);
	if (o->synproxy) {
		o->synproxy_isn = sp[0];
		o->synproxy_its = sp[1];
		o->synproxy_tsoff = sp[2];
	}
	if (e->tuple[0].l4proto == IPPROTO_TCP) {
		o->tcp.state = e->proto.tcp.state;
		o->tcp.wscale[0] = e->proto.tcp.seen[0].td_scale;
		o->tcp.wscale[1] = e->proto.tcp.seen[1].td_scale;
		o->tcp.flags[0] = e->proto.tcp.seen[0].flags;
		o->tcp.flags[1] = e->proto.tcp.seen[1].flags;
	} else if (e->tuple[0].l4proto == IPPROTO_SCTP) {
		o->sctp.state = e->proto.sctp.state;
		o->sctp.vtag[0] = e->proto.sctp.vtag[0];
		o->sctp.vtag[1] = e->proto.sctp.vtag[1];
	}
}

static bool listed(const struct nftdp_ct_entry *e, uint64_t now_ms)
{
	return e->in_use && (e->status & IPS_CONFIRMED) && !(e->status & IPS_DYING) &&
	       e->expires_ms > now_ms;
}

int nftdp_ct_walk(struct nftdp_ct_shard *s, uint64_t now_ms,
		  int (*cb)(const struct nftdp_ct_info *info, void *arg), void *arg)
{
	struct nftdp_ct_info info;
	uint32_t i;
	int rc;

	for (i = 0; i < s->n_entries; i++) {
		if (!listed(&s->entries[i], now_ms))
			continue;
		nftdp_ct_fill_info(&s->entries[i], now_ms, &info);
		rc = cb(&info, arg);
		if (rc)
			return rc;
	}
	return 0;
}

int nftdp_ct_get(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint64_t now_ms,
		 struct nftdp_ct_info *out)
{
	struct nftdp_ct_entry *e;
	int dir;

	e = nftdp_ct_find(s, t, nftdp_ct_tuple_hash(s, t), &dir, now_ms);
	if (!e || !(e->status & IPS_CONFIRMED))
		return -ENOENT;
	nftdp_ct_fill_info(e, now_ms, out);
	return 0;
}

int nftdp_ct_delete(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id)
{
	struct nftdp_ct_entry *e;
	int dir;

	e = nftdp_ct_find(s, t, nftdp_ct_tuple_hash(s, t), &dir, s->now_ms);
	if (!e || !(e->status & IPS_CONFIRMED) || (id && e->id != id))
		return -ENOENT;
	s->st.deleted++;
	nftdp_ct_kill(s, e);
	return 0;
}

unsigned int nftdp_ct_flush(struct nftdp_ct_shard *s)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < s->n_entries; i++) {
		struct nftdp_ct_entry *e = &s->entries[i];

		if (!e->in_use || (e->status & IPS_DYING) || !(e->status & IPS_CONFIRMED))
			continue;
		nftdp_ct_kill(s, e);
		n++;
	}
	s->st.deleted += n;
	return n;
}
