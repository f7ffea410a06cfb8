/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conntrack/ internals: the entry (struct nf_conn's fields nftdp keeps), the
 * shard, the per-packet L4 view and the protocol ops, one file per protocol
 * (ct_tcp.c, ct_udp.c, ct_icmp.c, ct_other.c) as nf_conntrack_l4proto.
 */
#ifndef NFTDP_CT_PRIV_H
#define NFTDP_CT_PRIV_H

#include <ctype.h>
#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#include "nftdp_common.h"
#include "nftdp_conntrack.h"

#define CT_NIL UINT32_MAX
#define CT_EVICTION_RANGE 8 /* NF_CT_EVICTION_RANGE */
#define CT_CTINFO_MASK 7u   /* ctinfo lives in the low bits of pkt->ct, as skb->_nfct */
/* in_use bit: the entry has the seqadj extension whatever its helper and
 * NAT (ctnetlink_create_conntrack's nfct_seqadj_ext_add); seqadj.c */
#define CT_IN_USE_SEQADJ_EXT 2u
/* in_use bit: the entry has the synproxy extension (made by the SYN
 * synproxy sends to the server, from its template); ct_synproxy.c */
#define CT_IN_USE_SYNPROXY_EXT 4u

/* The kernel's ip_ct_tcp_state: one direction's window data. Packed (18
 * bytes, not 20) so that the entry's line 2 has room for the original
 * direction's packet counter beside the TCP state. */
struct __attribute__((packed, aligned(2))) ct_tcp_state {
	uint32_t td_end;    /* max of seq + len */
	uint32_t td_maxend; /* max of ack + max(win, 1) */
	uint32_t td_maxwin; /* max(win) */
	uint32_t td_maxack; /* max of ack */
	uint8_t td_scale;   /* window scale factor */
	uint8_t flags;	    /* IP_CT_TCP_FLAG_* */
};
static_assert(sizeof(struct ct_tcp_state) == 18, "packed");

/* The kernel's struct ip_ct_tcp. */
struct ct_tcp {
	struct ct_tcp_state seen[2];
	uint8_t state;
	uint8_t last_dir;   /* direction of the last packet (sIG/in-window) */
	uint8_t retrans;    /* retransmissions of the same ACK */
	uint8_t last_index; /* TCP_*_SET of the last packet */
	uint32_t last_seq;
	uint32_t last_ack;
	uint32_t last_end;
	uint16_t last_win;
	uint8_t last_wscale; /* of an ignored SYN */
	uint8_t last_flags;  /* of an ignored SYN */
};
static_assert(sizeof(struct ct_tcp) == 56, "the TCP state leaves 8 bytes of line 2");

/* The kernel's struct ip_ct_sctp. */
struct ct_sctp {
	uint32_t vtag[2]; /* verification tag each direction must carry (network order) */
	uint8_t state;	  /* SCTP_CONNTRACK_* */
	uint8_t flags;	  /* SCTP_FLAG_HEARTBEAT_VTAG_FAILED */
	uint8_t last_dir; /* of the heartbeat whose tag failed */
	uint8_t init[2];  /* an INIT was seen in this direction */
};

/* one direction's nf_conn_counter (the reply's; the original's is split
 * over the lines its packets read: nftdp_ct_acct) */
struct ct_acct {
	uint64_t packets, bytes;
};

/*
 * One connection. Both tuples are in the hash table: node 2*i+dir is
 * tuple[dir] of entry i. Aligned so that pkt->ct can carry the ctinfo in
 * its low bits.
 *
 * Laid out for an established packet of a table beyond the caches, which
 * reads two or three of the four lines and its direction's carried
 * result (s->carry[i][dir], the flow cache's line beside the entry):
 * line 0 has what every packet's lookup and state read and write (status,
 * timeout, references, pending events, helper, timeout policy slot) and
 * the original tuple; line 1 the reply tuple, the chain links (read only
 * past an entry that does not match) and the reply direction's counters;
 * line 2 the protocol's state (TCP's window fields) and the original
 * direction's packet counter, whose byte counter is its carried result's
 * owner word; line 3 what no packet of an established connection reads.
 * A packet of the original direction so reads lines 0 and 2 and its
 * carried result, one of the reply lines 0, 1 and 2 and its carried
 * result.
 */
struct nftdp_ct_entry {
	/* line 0 */
	alignas(64) uint32_t status; /* IPS_* */
	uint16_t refs;		     /* packets between nftdp_ct_in() and nftdp_ct_confirm() */
	uint16_t ev_pending;	     /* 1 << IPCT_*: cached until the packet is confirmed */
	uint64_t expires_ms;	     /* absolute; meaningful once confirmed */
	uint8_t in_use;		     /* 1, | CT_IN_USE_SEQADJ_EXT */
	uint8_t zone_dir;	     /* NFTDP_VM_CT_ZONE_DIR_*: the tuples the zone keys */
	uint8_t tmo_slot;   /* 1 + the shard's policy slot e->tmo is, 0: the shard's defaults */
	uint8_t helper;	    /* NFTDP_VM_CT_HELPER_*: its state is s->help[index] */
	uint32_t free_next; /* free list */
	struct nftdp_ct_tuple tuple[2]; /* [0] ends line 0, [1] starts line 1 */
	/* line 1, after tuple[1] */
	uint32_t hnext[2]; /* next node in the bucket (kept while freed) */
	struct ct_acct acct_reply;
	/* line 2 */
	union {
		struct ct_tcp tcp;
		struct ct_sctp sctp;
		struct {
			uint64_t stream_ms; /* UDP: 2 s after creation */
		} udp;
	} proto;
	uint64_t orig_packets; /* the original direction's (nftdp_ct_acct) */
	/* line 3 */
	uint8_t labels[16];
	const struct nftdp_ct_timeouts *tmo; /* the timeout policy (ct timeout objects later) */
	struct nftdp_ct_shard *shard;
	uint32_t mark;
	uint32_t secmark;
	uint32_t id;
	uint32_t eventmask;
};
static_assert(sizeof(struct nftdp_ct_entry) == 256, "an entry is four cache lines");
#define CT_LINE(f) (offsetof(struct nftdp_ct_entry, f) / 64)
#define CT_IN_LINE(f, l)                                                                           \
	(CT_LINE(f) == (l) &&                                                                      \
	 (offsetof(struct nftdp_ct_entry, f) + sizeof(((struct nftdp_ct_entry *)0)->f) - 1) /      \
		 64 ==                                                                             \
	     (l))
static_assert(CT_IN_LINE(status, 0) && CT_IN_LINE(refs, 0) && CT_IN_LINE(ev_pending, 0) &&
		  CT_IN_LINE(expires_ms, 0) && CT_IN_LINE(in_use, 0) && CT_IN_LINE(helper, 0) &&
		  CT_IN_LINE(tmo_slot, 0) && CT_IN_LINE(tuple[0], 0),
	      "an established packet's lookup and state are in line 0");
static_assert(CT_IN_LINE(tuple[1], 1) && CT_IN_LINE(hnext, 1) && CT_IN_LINE(acct_reply, 1),
	      "the reply tuple, the links and the reply's counters are in line 1");
static_assert(CT_IN_LINE(proto, 2) && CT_IN_LINE(orig_packets, 2),
	      "the protocol's state and the original's packet counter are line 2");

/* single-producer (worker), single-consumer (control thread) event ring */
struct ct_event_ring {
	_Atomic uint32_t head; /* written by the worker */
	_Atomic uint32_t tail; /* written by the consumer */
	uint32_t mask;
	_Atomic uint64_t lost;
	_Atomic bool off; /* nobody listens: events are not built (nftdp_ct_events_enable) */
	struct nftdp_ct_event ev[];
};

/*
 * A `ct timeout` policy as the shard keeps it: the object's values over the
 * shard's defaults, copied on the packet path when a rule first gives it to
 * an entry, kept while entries point to it (refs), matched by the object's
 * id. The shard owns the copy, so no object or generation has to outlive
 * the entries (the kernel keeps a reference to the object instead).
 */
#define CT_POLICIES 32
struct ct_policy {
	uint64_t id; /* nftdp_vm_ct_timeout.id */
	uint32_t refs;
	struct nftdp_ct_timeouts tmo;
};

/*
 * What the kernel keeps in the helper extension (nf_conn_help: the ftp
 * helper's nf_ct_ftp_master) and ct->master of an expected connection. One
 * per entry in s->help, beside the entries so that an entry stays four
 * cache lines; its pages are touched only by connections that use them.
 */
struct ct_help {
	uint32_t seq_aft_nl[2][2]; /* ftp: sequence numbers just after a \n, per direction */
	uint8_t seq_aft_nl_num[2];
	uint8_t master_helper; /* IPS_EXPECTED: the master's helper (`ct helper`) */
	bool nat_follow;       /* nf_nat_follow_master once the entry is in the table */
	bool nat_proto_src;    /* pptp_nat_expected, exp->dir original: the saved key is
				* the source's, the destination keeps its own */
	uint16_t nat_port;     /* exp->saved_proto (network order) */
	union nftdp_ct_addr nat_src, nat_dst; /* the master's tuple[!exp->dir] dst, src */
	uint16_t master_shard;		      /* IPS_EXPECTED: the master (shard, index, id) */
	uint32_t master_idx, master_id;
	/* nf_conn_seqadj, per direction; meaningful while IPS_SEQ_ADJUST
	 * (zeroed when the bit is first set: seqadj.c) */
	struct nftdp_ct_seqadj seq[2];
	/* pptp: nf_ct_pptp_master (its keymaps are in the expectation
	 * table's part, found by master: ct_gre.c) */
	struct {
		uint8_t sstate, cstate;		   /* enum pptp_ctrlsess_state, _ctrlcall_state */
		uint16_t pac_call_id, pns_call_id; /* network order */
		/* nf_nat_pptp: the call ids as the PNS knows them */
		uint16_t nat_pac_call_id, nat_pns_call_id;
	} pptp;
	/* sip: nf_ct_sip_master's CSeq of the last INVITE and REGISTER */
	uint32_t sip_invite_cseq, sip_register_cseq;
	/* sip: forced_dport, the Via port of a request sent from another
	 * port (network order; nf_nat_sip sends the replies there) */
	uint16_t sip_forced_dport;
	/* h323: get_tpkt_data's tpkt_len, per direction (helper_h323.c) */
	uint16_t h323_tpkt_len[2];
	uint32_t h323_timeout; /* RAS: the registration's time to live, seconds */
	/* nf_nat_h323: the H.245 port and RTP ports as each side knows
	 * them (network order; nf_ct_h323_master's sig_port, rtp_port) */
	uint16_t h323_sig_port[2], h323_rtp_port[4][2];
	/* sane: nf_ct_sane_master's state, SANE_STATE_START_REQUESTED */
	bool sane_start_requested;
	/* struct nf_conn_synproxy: meaningful while CT_IN_USE_SYNPROXY_EXT */
	struct {
		uint32_t isn, its, tsoff;
	} synproxy;
};

/* An expectation (struct nf_conntrack_expect), in a part of the shared table. */
enum { CT_EXP_FREE, CT_EXP_LIVE, CT_EXP_CLAIMED };
struct ct_expect {
	/* sequence << 2 | CT_EXP_*: the owner writes a FREE slot and publishes
	 * it LIVE (release); anybody takes a LIVE one with a compare and swap
	 * of the whole word, so a slot refilled meanwhile is never taken for
	 * the one read */
	_Atomic uint32_t state;
	uint32_t id;
	struct nftdp_ct_tuple tuple, mask; /* mask: src address and port bits that must match */
	struct nftdp_ct_tuple master_tuple;
	uint64_t expires_ms;
	uint32_t master_idx, master_id;		/* in the owner's shard */
	const struct nftdp_ct_shard *master_sh; /* the owner: the master's mark when taken */
	uint32_t seq;		/* the table's creation order: newest matches first */
	uint32_t mark, secmark; /* the master's when created (taken: its current ones) */
	uint32_t flags;		/* NF_CT_EXPECT_* */
	uint16_t master_shard;
	uint8_t helper; /* the master's */
	uint8_t class;
	uint8_t exp_helper;		      /* exp->helper: the expected connection's */
	bool nat_follow;		      /* exp->expectfn = nf_nat_follow_master */
	bool nat_pptp;			      /* pptp_expectfn with nf_nat_pptp's half */
	bool nat_sip;			      /* nf_nat_sip_expected: its saved address
					       * (nat_dst) dumped, CTA_EXPECT_FN "sip" */
	bool nat_q931;			      /* ip_nat_q931_expect (RAS's RRQ): as
					       * nat_follow, CTA_EXPECT_FN "Q.931" */
	bool nat_callfwd;		      /* ip_nat_callforwarding_expect: the same,
					       * "callforwarding" (helper_h323.c) */
	uint8_t nat_dir;		      /* exp->dir */
	uint16_t nat_port;		      /* exp->saved_proto */
	union nftdp_ct_addr nat_src, nat_dst; /* see ct_help */
};

/*
 * A GRE keymap entry (nf_ct_gre_keymap): the tuple of one direction of a
 * PPTP call's GRE traffic, whose source key a GRE version 1 packet with the
 * same addresses and destination key (call id) takes (gre_keymap_lookup).
 * Written like expectations: the master's worker fills a free slot of its
 * part and publishes it; any worker frees one with a compare and swap
 * (the GRE connection's death, on whatever worker it lives).
 */
struct ct_gre_keymap {
	_Atomic uint32_t state; /* sequence << 2 | CT_EXP_FREE or CT_EXP_LIVE */
	uint8_t dir;		/* the master's keymap[dir] */
	uint16_t master_shard;
	uint32_t master_idx, master_id;
	struct nftdp_ct_tuple tuple;
};

struct ct_expect_part {
	alignas(64) _Atomic uint32_t n_live;
	uint32_t next_id;
	struct ct_expect *slot;
	struct ct_gre_keymap *km; /* per_part slots */
	_Atomic uint32_t km_live;
	_Atomic uint32_t km_hi; /* slots at and past it were never used: lookups stop there */
};

struct nftdp_ct_expect_table {
	alignas(64) _Atomic uint32_t n_live; /* over all parts: 0 lets new connections skip */
	_Atomic uint32_t seq;		     /* creation order over all parts (ct_expect.seq) */
	_Atomic uint32_t km_live;	     /* GRE keymaps over all parts: 0 skips the lookup */
	uint16_t n_parts;
	uint32_t per_part;
	struct ct_expect_part part[];
};

struct nftdp_ct_shard {
	struct nftdp_ct_config cfg;
	struct nftdp_ct_timeouts tmo;
	struct ct_policy pol[CT_POLICIES];
	uint64_t policy_full; /* `ct timeout set` that found every slot in use */
	bool zones_seen;      /* a packet had a zone: confirm looks for tuple clashes */
	uint64_t links;	      /* entries linked into buckets: a probe's node holds until then */
	struct nftdp_ct_entry *entries;
	size_t entries_len, buckets_len; /* the mappings (table_alloc) */
	uint32_t hkey[10];		 /* the table hash's secret key, one word per tuple word */
	uint32_t n_entries;
	uint32_t free_head;
	uint32_t *buckets;
	uint32_t bucket_mask;
	uint32_t gc_cursor;
	bool gc_early_drop; /* the table was full: the gc evicts above 95 % until a sweep ends */
	uint32_t next_id;
	uint64_t now_ms; /* of the last nftdp_ct_in(): expiration for the VM */
	uint64_t prng;	 /* NAT port offsets (get_random_u16) */
	struct nftdp_ct_stats st;
	struct ct_event_ring *events; /* NULL: no events */
	struct ct_help *help;	      /* per entry (helper state, master), see ct_help */
	/* per entry and direction: the flow cache's carried result (the
	 * pipeline's established pass), cleared with each new connection */
	struct nftdp_vm_flow_carry (*carry)[2];
	size_t carry_len; /* its mapping (table_alloc) */
	struct nftdp_ct_expect_table *exp;
	bool exp_own; /* a private table (cfg.expect was NULL) */
	uint8_t reg;  /* 1 + its slot in the shard registry (ct_vm.c), 0: none */
};

/* e->tmo found from line 0 (its slot) and the shard: the packet path's
 * way to it, which leaves line 3 alone */
static inline const struct nftdp_ct_timeouts *nftdp_ct_policy(const struct nftdp_ct_shard *s,
							      const struct nftdp_ct_entry *e)
{
	return e->tmo_slot ? &s->pol[e->tmo_slot - 1].tmo : &s->tmo;
}

/* The original direction's byte counter: its carried result's owner word
 * (struct nftdp_vm_flow_carry), in the line its packets read anyway;
 * cleared with the record when the entry is made */
static inline uint64_t *nftdp_ct_orig_bytes(const struct nftdp_ct_shard *s,
					    const struct nftdp_ct_entry *e)
{
	return &s->carry[e - s->entries][IP_CT_DIR_ORIGINAL].owner;
}

/* one direction's counters (nf_conn_counter) of an entry of s */
static inline struct ct_acct nftdp_ct_acct_get(const struct nftdp_ct_shard *s,
					       const struct nftdp_ct_entry *e, int dir)
{
	if (dir)
		return e->acct_reply;
	return (struct ct_acct){.packets = e->orig_packets, .bytes = *nftdp_ct_orig_bytes(s, e)};
}

/* both directions' counters back to 0 (ctnetlink's get and zero) */
static inline void nftdp_ct_acct_zero(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e)
{
	e->orig_packets = 0;
	*nftdp_ct_orig_bytes(s, e) = 0;
	memset(&e->acct_reply, 0, sizeof(e->acct_reply));
}

/* ct_vm.c: the registry that lets connlimit keys name any shard's entry
 * (per-element `ct count` is shared by the workers) */
void nftdp_ct_reg_add(struct nftdp_ct_shard *s);
void nftdp_ct_reg_del(struct nftdp_ct_shard *s);

/* nf_ct_zone_id of a packet's template: the zone in direction dir, else 0 */
static inline uint16_t nftdp_ct_pkt_zone(const struct nftdp_vm_pkt *pkt, int dir)
{
	return (pkt->ct_zone_dir & (1u << dir)) ? pkt->ct_zone : 0;
}

/* the entry's zone id (nf_ct_zone(ct)->id), whatever its directions */
static inline uint16_t nftdp_ct_entry_zone(const struct nftdp_ct_entry *e)
{
	return e->tuple[(e->zone_dir & NFTDP_VM_CT_ZONE_DIR_ORIG) ? 0 : 1].zone;
}

/* Result of a protocol's packet step (the kernel's verdict / -NF_ACCEPT). */
enum ct_verdict {
	CT_ACCEPT,  /* tracked: packet belongs to the entry */
	CT_INVALID, /* -NF_ACCEPT: packet invalid, entry unchanged */
	CT_REPEAT,  /* -NF_REPEAT: entry killed, look up again */
};

/* What a protocol sees of a packet: the L4 header and the length to the
 * end of the IP datagram (skb->len - dataoff). */
struct ct_l4pkt {
	const uint8_t *l4;
	uint32_t l4len;
	const struct nftdp_vm_pkt *pkt;
};

/*
 * Bytes from the transport header to the end of the IP datagram, by the IP
 * header's length (the kernel's skb is trimmed to it; trailing Ethernet
 * padding must not count, even if pkt->len includes it).
 */
static inline uint32_t nftdp_ct_l4len(const struct nftdp_vm_pkt *pkt)
{
	const uint8_t *nh = pkt->data + pkt->nh_off;
	uint32_t end = pkt->len;

	if (pkt->nfproto == NFPROTO_IPV4 && pkt->len >= pkt->nh_off + 20)
		end = pkt->nh_off + ((uint32_t)nh[2] << 8 | nh[3]);
	else if (pkt->nfproto == NFPROTO_IPV6 && pkt->len >= pkt->nh_off + 40)
		end = pkt->nh_off + 40 + ((uint32_t)nh[4] << 8 | nh[5]);
	if (end > pkt->len)
		end = pkt->len;
	return end > pkt->th_off ? end - pkt->th_off : 0;
}

/* ct_event.c */
void nftdp_ct_event_push(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e, uint32_t events);
void nftdp_ct_fill_info(const struct nftdp_ct_entry *e, uint64_t now_ms, struct nftdp_ct_info *o);

/* nf_conntrack_event_cache: remembered until the packet is confirmed */
static inline void nftdp_ct_event_cache(struct nftdp_ct_entry *e, unsigned int ev)
{
	e->ev_pending |= (uint16_t)(1u << ev);
}

/* helper.c, expect.c, helper_*.c: nf_conntrack_helper, _expect and the helpers */
/* Text scanning for the helpers' parsers (packet path; never past limit
 * or n): how many bytes from p are letters (sip's string_len), or decimal
 * digits (digits_len); the value of the decimal digits of d from *i, *i
 * moved past them, modulo 2^32 as the kernel's simple_strtoul callers
 * truncate it (irc's parse_dcc, amanda's ports, sip's port). */
static inline uint32_t nftdp_ct_alpha_len(const char *p, const char *limit)
{
	const char *q = p;

	while (q < limit && isalpha((unsigned char)*q))
		q++;
	return (uint32_t)(q - p);
}

static inline uint32_t nftdp_ct_digits_len(const char *p, const char *limit)
{
	const char *q = p;

	while (q < limit && isdigit((unsigned char)*q))
		q++;
	return (uint32_t)(q - p);
}

static inline uint32_t nftdp_ct_strtou32(const char *d, uint32_t n, uint32_t *i)
{
	uint32_t v = 0;

	while (*i < n && d[*i] >= '0' && d[*i] <= '9')
		v = v * 10u + (uint32_t)(d[(*i)++] - '0');
	return v;
}

void nftdp_ct_helper_assign(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, uint8_t helper);
/* a helper's nf_conntrack_expect_policy: at most max_expected live
 * expectations of one master and class (0: no limit), each timeout_s */
struct ct_exp_policy {
	uint32_t max_expected, timeout_s;
};
/* the helper's policy for class (its last class's past expect_class_max);
 * NULL for no helper */
const struct ct_exp_policy *nftdp_ct_exp_policy(uint8_t helper, uint8_t class);
/* the helper's expect_class_max (0 for all but sip) */
uint8_t nftdp_ct_exp_class_max(uint8_t helper);
static inline uint32_t nftdp_ct_exp_max(uint8_t helper, uint8_t class)
{
	return nftdp_ct_exp_policy(helper, class)->max_expected;
}
static inline uint32_t nftdp_ct_exp_timeout(uint8_t helper, uint8_t class)
{
	return nftdp_ct_exp_policy(helper, class)->timeout_s;
}
/* pkt is writable: a NAT helper may rewrite it (nf_nat_ftp) */
unsigned int nftdp_ct_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			   struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* init_conntrack's lookup: whether new entry e (not yet in the table) is
 * expected; if so it takes IPS_EXPECTED, its master and the master's mark */
bool nftdp_ct_expect_init_conntrack(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    uint64_t now_ms);
static inline bool nftdp_ct_expect_any(const struct nftdp_ct_shard *s)
{
	return atomic_load_explicit(&s->exp->n_live, memory_order_relaxed) != 0;
}
/* nft_ct_expect_obj_eval on unconfirmed e, dir the packet's: NFT_CONTINUE,
 * NFT_BREAK (e holds size expectations) or NF_DROP (a clash, no room) */
int nftdp_ct_expect_from_obj(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, int dir,
			     const struct nftdp_vm_ct_expect *o);
/* nf_ct_expect_related: 0, -EBUSY (another master's clash), -EMFILE (full) */
int nftdp_ct_expect_related(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
			    struct ct_expect *x, uint32_t max_expected, uint32_t timeout_s);
/* nf_ct_expect_related(exp, NF_CT_EXP_F_SKIP_MASTER): an identical
 * expectation of another master or class is -EALREADY, not a clash */
#define CT_EXP_F_SKIP_MASTER 1u
int nftdp_ct_expect_related_flags(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
				  struct ct_expect *x, uint32_t max_expected, uint32_t timeout_s,
				  unsigned int flags);
/* __nf_ct_expect_find: a live expectation (any part) that tuple t
 * matches under its mask (the zone included), copied into *copy */
bool nftdp_ct_expect_find(const struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
			  struct ct_expect *copy);
/* nf_ct_unexpect_related: the master's expectation with x's tuple and mask */
void nftdp_ct_expect_unexpect(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
			      const struct ct_expect *x);
/* sip's flush_expectations: every expectation of the master of a class
 * other than 0 (media), or one of class 0 (!media) */
void nftdp_ct_expect_flush_class(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master,
				 bool media);
/* sip's refresh_signalling_expectation: the master's live class 0
 * expectation to addr, proto, port (network order) runs expires_s from now
 * and is active; whether there was one */
bool nftdp_ct_expect_refresh_signalling(struct nftdp_ct_shard *s,
					const struct nftdp_ct_entry *master,
					const union nftdp_ct_addr *addr, uint8_t proto,
					uint16_t port, uint32_t expires_s);
/* nf_ct_expect_init: src address may be NULL, src port 0 = any */
void nftdp_ct_expect_init(struct ct_expect *x, uint8_t l3proto, const union nftdp_ct_addr *saddr,
			  const union nftdp_ct_addr *daddr, uint8_t l4proto, uint16_t sport_be,
			  uint16_t dport_be);
/* nf_nat_follow_master for new expected entry e, now in the table */
void nftdp_ct_expect_nat_follow(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e);
/* the master's NAT for an expectation in direction exp_dir, the port the
 * data connection must reach (nf_nat_ftp, nf_nat_tftp) */
void nftdp_ct_expect_set_nat(struct ct_expect *x, const struct nftdp_ct_entry *master, int exp_dir,
			     uint16_t saved_port_be);
unsigned int nftdp_ct_nat_setup_entry(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				      const struct nftdp_ct_nat_range *range,
				      enum nftdp_ct_manip manip);
void nftdp_ct_expect_remove_master(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *master);
void nftdp_ct_expect_gc(struct nftdp_ct_shard *s, uint64_t now_ms);
int nftdp_ct_expect_shard_init(struct nftdp_ct_shard *s);
void nftdp_ct_expect_shard_fini(struct nftdp_ct_shard *s);

/* the ftp helper's parser (nf_conntrack_ftp.c's find_pattern over search[dir]) */
enum ct_ftp_type { CT_FTP_PORT, CT_FTP_PASV, CT_FTP_EPRT, CT_FTP_EPSV };
struct ct_ftp_cmd {
	uint8_t l3proto;	     /* in: the connection's family */
	union nftdp_ct_addr u3;	     /* in: the sender's address; out: the one given */
	uint16_t port;		     /* out, network order */
	enum ct_ftp_type type;	     /* out */
	uint32_t matchoff, matchlen; /* out: the address/port text */
};
/* 1: a command, 0: none, -1: a partial one (the kernel drops the packet) */
int nftdp_ct_ftp_parse(const char *data, uint32_t dlen, int dir, struct ct_ftp_cmd *cmd);
unsigned int nftdp_ct_ftp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* nf_nat_ftp_fmt_cmd: the text's length (without a NUL), 0 if it does not fit */
int nftdp_ct_ftp_fmt_cmd(uint8_t l3proto, enum ct_ftp_type type, char *buf, size_t size,
			 const union nftdp_ct_addr *addr, uint16_t port);
/* irc: a DCC offer in a client's PRIVMSG (nf_conntrack_irc.c's help loop);
 * offers of another address than ip1 or ip2 (network order) or of port 0
 * are skipped as there. 1 and the offer, or 0 */
struct ct_irc_dcc {
	uint32_t ip;	   /* network order */
	uint16_t port;	   /* host order */
	uint32_t beg, end; /* the "ADDR PORT" text */
};
int nftdp_ct_irc_parse(const char *d, uint32_t n, uint32_t ip1, uint32_t ip2,
		       struct ct_irc_dcc *out);
unsigned int nftdp_ct_irc_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* amanda: the ports of "CONNECT ... DATA p MESG p INDEX p\n" (nf_conntrack_amanda.c);
 * ports[i] for DATA, MESG, INDEX in that order (host order), offs/lens of
 * their text; the number found (the kernel stops at the first bad one) */
struct ct_amanda_port {
	uint16_t port;
	uint32_t off, len;
};
unsigned int nftdp_ct_amanda_parse(const char *d, uint32_t n, struct ct_amanda_port ports[3]);
unsigned int nftdp_ct_amanda_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				  struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* pptp (helper_pptp.c, nf_conntrack_pptp.c): one control message at the
 * start of a TCP payload of n bytes. 1 and its type, the message body and
 * its length (at most the largest message's, 208), or 0: not a control
 * message, or one shorter than its type's (pptp_msg_size) */
int nftdp_ct_pptp_parse(const uint8_t *d, uint32_t n, uint16_t *msg, const uint8_t **req,
			uint32_t *reqlen);
unsigned int nftdp_ct_pptp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* helper->destroy = pptp_destroy_siblings: the master is going */
void nftdp_ct_pptp_destroy_siblings(struct nftdp_ct_shard *s, struct nftdp_ct_entry *master);
/* pptp_expectfn for new GRE entry e that took expectation x (any worker) */
void nftdp_ct_pptp_expectfn(struct nftdp_ct_shard *s, const struct ct_expect *x);
/* nf_ct_unexpect_related of the live expectation t matches (any part,
 * any worker); whether there was one */
bool nftdp_ct_expect_unexpect_tuple(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t);

/* ct_gre.c (nf_conntrack_proto_gre.c): GRE version 1 keys. The source key
 * of t from the keymaps, for the GRE header at l4 (l4len bytes): only for
 * version 1 packets (gre_pkt_to_tuple); any worker */
void nftdp_ct_gre_keymap_lookup(const struct nftdp_ct_shard *s, const uint8_t *l4, uint32_t l4len,
				struct nftdp_ct_tuple *t);
/* nf_ct_gre_keymap_add: both directions of master m's call, or a
 * retransmission of the same; false: m has others, or no room. Owner. */
bool nftdp_ct_gre_keymap_add(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *m,
			     const struct nftdp_ct_tuple *orig, const struct nftdp_ct_tuple *repl);
/* nf_ct_gre_keymap_destroy of the master (shard, idx, id); any worker */
void nftdp_ct_gre_keymap_destroy(struct nftdp_ct_shard *s, uint16_t master_shard,
				 uint32_t master_idx, uint32_t master_id);
/* destroy_gre_conntrack: e is an expected GRE entry going away */
static inline void nftdp_ct_gre_destroy(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e)
{
	const struct ct_help *h = &s->help[e - s->entries];

	if (atomic_load_explicit(&s->exp->km_live, memory_order_relaxed))
		nftdp_ct_gre_keymap_destroy(s, h->master_shard, h->master_idx, h->master_id);
}

/* netbios-ns, snmp: the broadcast helper, which serves only local sockets */
unsigned int nftdp_ct_bcast_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				 const struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* snmp on a NATed connection and snmp_trap (helper_snmp.c,
 * nf_nat_snmp_basic); the BER walk: every IpAddress equal to from (network
 * order) becomes to in d[0, n), the checksum at check adjusted unless it is
 * 0; -1 where the kernel's decoder fails (or would read past n) */
int nftdp_ct_snmp_translate(uint8_t *d, uint32_t n, uint32_t from, uint32_t to, uint8_t *check);
unsigned int nftdp_ct_snmp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
unsigned int nftdp_ct_snmp_trap_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				     struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
unsigned int nftdp_ct_tftp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				const struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* helper_sane.c: nf_conntrack_sane's help() */
unsigned int nftdp_ct_sane_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				const struct nftdp_vm_pkt *pkt, unsigned int ctinfo);

/* sip (helper_sip.c): the kernel's header tables, its parsers for the
 * unit tests, and the help function */
enum ct_sip_hdr {
	CT_SIP_HDR_CSEQ,
	CT_SIP_HDR_FROM,
	CT_SIP_HDR_TO,
	CT_SIP_HDR_CONTACT,
	CT_SIP_HDR_VIA_UDP,
	CT_SIP_HDR_VIA_TCP,
	CT_SIP_HDR_EXPIRES,
	CT_SIP_HDR_CONTENT_LENGTH,
};
enum ct_sdp_hdr {
	CT_SDP_HDR_UNSPEC,
	CT_SDP_HDR_VERSION,
	CT_SDP_HDR_OWNER,
	CT_SDP_HDR_CONNECTION,
	CT_SDP_HDR_MEDIA,
};
/* sip_expectation_classes */
enum {
	CT_SIP_EXPECT_SIGNALLING,
	CT_SIP_EXPECT_AUDIO,
	CT_SIP_EXPECT_VIDEO,
	CT_SIP_EXPECT_IMAGE,
	CT_SIP_EXPECT_MAX = CT_SIP_EXPECT_IMAGE,
};
/* sip_strtouint: digits within len, 0 and *endp = cp past UINT_MAX */
uint32_t nftdp_ct_sip_strtouint(const char *cp, uint32_t len, const char **endp);
/* ct_sip_get_header from off: 1 and the value's offset and length, 0
 * (none), -1 (found but not parsable) */
int nftdp_ct_sip_get_header(uint8_t l3, const char *d, uint32_t off, uint32_t dlen,
			    enum ct_sip_hdr type, uint32_t *matchoff, uint32_t *matchlen);
/* ct_sip_parse_header_uri: the address and port of the header's sip: URI;
 * a list is walked with off and in_header */
int nftdp_ct_sip_parse_header_uri(uint8_t l3, const char *d, uint32_t *off, uint32_t dlen,
				  enum ct_sip_hdr type, int *in_header, uint32_t *matchoff,
				  uint32_t *matchlen, union nftdp_ct_addr *addr, uint16_t *port);
/* ct_sip_parse_request: the address and port of the Request-URI */
int nftdp_ct_sip_parse_request(uint8_t l3, const char *d, uint32_t dlen, uint32_t *matchoff,
			       uint32_t *matchlen, union nftdp_ct_addr *addr, uint16_t *port);
/* ct_sip_get_sdp_header: type's line from off, stopping at a term line */
int nftdp_ct_sip_get_sdp_header(uint8_t l3, const char *d, uint32_t off, uint32_t dlen,
				enum ct_sdp_hdr type, enum ct_sdp_hdr term, uint32_t *matchoff,
				uint32_t *matchlen);
unsigned int nftdp_ct_sip_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
/* %pI6c: an IPv6 address as the kernel prints it compressed (at most 45
 * characters and a NUL); its length */
int nftdp_ct_sip_fmt_ip6(char *buf, const uint8_t *a);
/* helper_h323.c: Q.931 and H.245 (the decoder: helper_h323.h) */
unsigned int nftdp_ct_q931_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
unsigned int nftdp_ct_h245_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo);
unsigned int nftdp_ct_ras_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			       struct nftdp_vm_pkt *pkt, unsigned int ctinfo);

/* seqadj.c: nf_conntrack_seqadj.c. The pure parts work on a struct
 * ct_seqadj and a TCP header so that the unit tests can reach them. */
void nftdp_ct_seqadj_record(struct nftdp_ct_seqadj *this_way, uint32_t seq, int32_t off);
int32_t nftdp_ct_seqadj_offset(const struct nftdp_ct_seqadj *this_way, uint32_t seq);
/* nf_ct_seq_adjust on a TCP header of doff*4 bytes: false for a partial
 * option (the kernel drops the packet) */
bool nftdp_ct_seqadj_tcp(uint8_t *th, const struct nftdp_ct_seqadj *this_way,
			 const struct nftdp_ct_seqadj *other_way);
/* nfct_seqadj(ct) != NULL */
bool nftdp_ct_seqadj_ext(const struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e);
/* nf_ct_seqadj_set for the packet's direction dir (seq host order) */
void nftdp_ct_seqadj_set(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, int dir, uint32_t seq,
			 int32_t off);
/* nf_ct_seq_offset: 0 without IPS_SEQ_ADJUST */
int32_t nftdp_ct_seq_offset(const struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e, int dir,
			    uint32_t seq);
/* nf_confirm's nf_ct_seq_adjust: false drops the packet */
bool nftdp_ct_seq_adjust(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			 struct nftdp_vm_pkt *pkt, int dir);
/* __nf_nat_mangle_tcp_packet: replace match_len bytes at match_off of the
 * TCP payload by rep, fix lengths and checksums, record the seqadj. false:
 * no room (the packet is dropped) */
bool nftdp_ct_nat_mangle_tcp(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			     struct nftdp_vm_pkt *pkt, int dir, uint32_t match_off,
			     uint32_t match_len, const char *rep, uint32_t rep_len);
/* the same with __nf_nat_mangle_tcp_packet's adjust: false records no
 * seqadj (nf_nat_sip adjusts once for the whole segment) */
bool nftdp_ct_nat_mangle_tcp_adj(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				 struct nftdp_vm_pkt *pkt, int dir, uint32_t match_off,
				 uint32_t match_len, const char *rep, uint32_t rep_len,
				 bool adjust);
/* nf_nat_mangle_udp_packet: the same in the UDP payload; the datagram's
 * lengths follow, its checksum is recomputed unless it had none */
bool nftdp_ct_nat_mangle_udp(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint32_t match_off,
			     uint32_t match_len, const char *rep, uint32_t rep_len);
/* nf_nat_exp_find_port: x (its destination port set from port) related
 * at port, else at up to 128 random others above it on a clash; the port
 * or 0 */
uint16_t nftdp_ct_nat_exp_find_port(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e,
				    struct ct_expect *x, uint16_t port, uint32_t max_expected,
				    uint32_t timeout_s);

/* ct_tuple.c */
bool nftdp_ct_tuple_from(const uint8_t *nh, uint32_t avail, bool inner, uint8_t l3proto,
			 struct nftdp_ct_tuple *t, uint32_t *th_off);
/* nftdp_ct_pkt_tuple with l4len, nftdp_ct_l4len(pkt), worked out already */
bool nftdp_ct_pkt_tuple_len(const struct nftdp_vm_pkt *pkt, uint32_t l4len,
			    struct nftdp_ct_tuple *out);
bool nftdp_ct_l4_checksum_ok(const struct nftdp_vm_pkt *pkt);
/* the same for the l4len bytes at l4, pkt's transport header and length
 * (nftdp_ct_l4len) as the caller has them */
bool nftdp_ct_l4_csum_ok(const struct nftdp_vm_pkt *pkt, const uint8_t *l4, uint32_t l4len);

/* ct.c */
void nftdp_ct_set_policy(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			 const struct nftdp_vm_ct_timeout *pol);
void nftdp_ct_kill(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e);
struct nftdp_ct_entry *nftdp_ct_find(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
				     uint32_t hash, int *dir, uint64_t now_ms);
/*
 * The table hash: NH (the almost-universal hash of UMAC) over the tuple's ten
 * words with a secret key made from the shard's seed, then a 64-bit
 * finaliser so that the low bits (the bucket) depend on every input bit.
 * Keyed like the kernel's siphash: without the key nobody can pick tuples
 * that share a chain; an unkeyed CRC would allow that. Five multiplies.
 */
static inline uint32_t nftdp_ct_words_hash(const struct nftdp_ct_shard *s, const uint64_t *w)
{
	const uint32_t *k = s->hkey;
	uint64_t h;

	/* written out: a loop that -O2 keeps rolled copies the tuple to the
	 * stack and pays its counter. w: the tuple's five 8-byte words as
	 * loaded (nftdp_ld64); each one's halves in memory order */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CT_H0(x) ((uint32_t)(x))
#define CT_H1(x) ((uint32_t)((x) >> 32))
#else
#define CT_H0(x) ((uint32_t)((x) >> 32))
#define CT_H1(x) ((uint32_t)(x))
#endif
#define CT_HW(i)                                                                                   \
	((uint64_t)(uint32_t)(CT_H0(w[i]) + k[2 * (i)]) * (uint32_t)(CT_H1(w[i]) + k[2 * (i) + 1]))
	h = CT_HW(0) + CT_HW(1) + CT_HW(2) + CT_HW(3) + CT_HW(4);
#undef CT_HW
#undef CT_H0
#undef CT_H1
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static inline uint32_t nftdp_ct_tuple_hash(const struct nftdp_ct_shard *s,
					   const struct nftdp_ct_tuple *t)
{
	const uint8_t *b = (const uint8_t *)t;
	uint64_t w[5];

	static_assert(sizeof(*t) == 40, "the tuple is ten words");
	/* each word loaded in place */
	for (unsigned int i = 0; i < 5; i++)
		w[i] = nftdp_ld64(b + 8 * i);
	return nftdp_ct_words_hash(s, w);
}
/* another live entry than e has tuple t in either direction (the clash
 * checks of __nf_conntrack_confirm and nf_conntrack_hash_check_insert) */
bool nftdp_ct_tuple_taken(const struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e,
			  const struct nftdp_ct_tuple *t);
void nftdp_ct_alter_reply(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			  const struct nftdp_ct_tuple *reply);
/* a new entry with these tuples, linked but not confirmed (ct_inject.c);
 * NULL: the table is full */
struct nftdp_ct_entry *nftdp_ct_entry_new(struct nftdp_ct_shard *s,
					  const struct nftdp_ct_tuple *orig,
					  const struct nftdp_ct_tuple *reply, uint64_t now_ms);

static inline struct nftdp_ct_entry *nftdp_ct_entry_of(const void *ct, unsigned int *ctinfo)
{
	*ctinfo = (unsigned int)((uintptr_t)ct & CT_CTINFO_MASK);
	return (struct nftdp_ct_entry *)((uintptr_t)ct & ~(uintptr_t)CT_CTINFO_MASK);
}

/* nf_ct_acct_update: counters are kept always (see docs/conntrack.md);
 * the original's where its packets read (nftdp_ct_acct_get) */
static inline void nftdp_ct_acct(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				 const struct ct_l4pkt *p, int dir)
{
	if (dir) {
		e->acct_reply.packets++;
		e->acct_reply.bytes += p->pkt->skb_len;
	} else {
		e->orig_packets++;
		*nftdp_ct_orig_bytes(s, e) += p->pkt->skb_len;
	}
}

/* nf_ct_refresh_acct: new timeout from now, and count the packet */
static inline void nftdp_ct_refresh_acct(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
					 const struct ct_l4pkt *p, int dir, uint64_t now_ms,
					 uint32_t timeout_s)
{
	if (!(e->status & IPS_FIXED_TIMEOUT))
		e->expires_ms = now_ms + (uint64_t)timeout_s * 1000u;
	nftdp_ct_acct(s, e, p, dir);
}

/* protocols */
bool nftdp_ct_tcp_error(const struct ct_l4pkt *p, bool checksum);
bool nftdp_ct_tcp_new(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, const struct ct_l4pkt *p);
enum ct_verdict nftdp_ct_tcp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    const struct ct_l4pkt *p, int dir, uint64_t now_ms);
/* tcp_conntracks[dir][index][state], for the unit test's own transcription */
uint8_t nftdp_ct_tcp_table(int dir, int index, int state);
bool nftdp_ct_tcp_can_early_drop(const struct nftdp_ct_entry *e);

bool nftdp_ct_udp_error(const struct ct_l4pkt *p, bool checksum);
enum ct_verdict nftdp_ct_udp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    const struct ct_l4pkt *p, int dir, uint64_t now_ms);

bool nftdp_ct_icmp_new(const struct nftdp_ct_tuple *t);
enum ct_verdict nftdp_ct_icmp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				     const struct ct_l4pkt *p, int dir, uint64_t now_ms);

bool nftdp_ct_sctp_error(const struct ct_l4pkt *p, bool checksum);
/* CRC32c of an SCTP packet (common header from l4) as sctp_compute_cksum,
 * the checksum field read as zero; stored little-endian */
uint32_t nftdp_ct_sctp_crc32c(const uint8_t *l4, uint32_t len);
enum ct_verdict nftdp_ct_sctp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, bool new,
				     const struct ct_l4pkt *p, int dir, uint64_t now_ms);
bool nftdp_ct_sctp_can_early_drop(const struct nftdp_ct_entry *e);
/* sctp_conntracks[dir][row][state], for the unit test's own transcription */
uint8_t nftdp_ct_sctp_table(int dir, int row, int state);

enum ct_verdict nftdp_ct_gre_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    const struct ct_l4pkt *p, int dir, uint64_t now_ms);
enum ct_verdict nftdp_ct_generic_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
					const struct ct_l4pkt *p, int dir, uint64_t now_ms);

#endif /* NFTDP_CT_PRIV_H */
