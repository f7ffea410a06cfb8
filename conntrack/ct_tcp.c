// SPDX-License-Identifier: BSD-3-Clause
/*
 * TCP connection tracking; mirrors nf_conntrack_proto_tcp.c so the two can
 * be read side by side (same names: tcp_conntracks, tcp_in_window,
 * tcp_new, nf_conntrack_tcp_packet).
 *
 * Theory of operation. conntrack is the man in the middle: it sees every
 * segment but cannot know which ones reached the peer. Each entry keeps a
 * state (TCP_CONNTRACK_*) driven by a table indexed by direction, the
 * segment's flag class (SYN, SYN/ACK, FIN, ACK, RST, none) and the old
 * state, and for each direction the window data of Guido van Rooij's
 * "Real Stateful TCP Packet Filtering": td_end (highest seq + len sent),
 * td_maxend (highest ack + window seen from the peer), td_maxwin (largest
 * window), td_maxack. A segment is in window when
 *   I.   seq <= sender.td_maxend
 *   II.  seq + len >= sender.td_end - receiver.td_maxwin
 *   III. sack <= receiver.td_end
 *   IV.  sack >= receiver.td_end - MAXACKWINDOW(sender)
 * A segment that fails I or III is invalid; one that fails II or IV is
 * accepted but ignored (no state change). Liberal mode (per config, or
 * per direction for picked-up connections) accepts them all. sIG marks
 * segments that may signal a connection conntrack is out of sync with
 * (a SYN on an established entry, ...): they pass without a state change
 * and are remembered so that the peer's answer can resync the entry.
 * Sequence comparisons are modulo 2^32 (before/after).
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "ct_priv.h"

#define sNO TCP_CONNTRACK_NONE
#define sSS TCP_CONNTRACK_SYN_SENT
#define sSR TCP_CONNTRACK_SYN_RECV
#define sES TCP_CONNTRACK_ESTABLISHED
#define sFW TCP_CONNTRACK_FIN_WAIT
#define sCW TCP_CONNTRACK_CLOSE_WAIT
#define sLA TCP_CONNTRACK_LAST_ACK
#define sTW TCP_CONNTRACK_TIME_WAIT
#define sCL TCP_CONNTRACK_CLOSE
#define sS2 TCP_CONNTRACK_SYN_SENT2
#define sIV TCP_CONNTRACK_MAX
#define sIG TCP_CONNTRACK_IGNORE

/* What TCP flags are set from RST/SYN/FIN/ACK (tcp_bit_set). */
enum { TCP_SYN_SET, TCP_SYNACK_SET, TCP_FIN_SET, TCP_ACK_SET, TCP_RST_SET, TCP_NONE_SET };

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20
#define TH_ECE 0x40
#define TH_CWR 0x80

/* The kernel's transition table: [direction][flag class][old state]. */
/* clang-format off */
static const uint8_t tcp_conntracks[2][6][TCP_CONNTRACK_MAX] = {
	{
		/* ORIGINAL
		 *	     sNO, sSS, sSR, sES, sFW, sCW, sLA, sTW, sCL, sS2 */
		/*syn*/	   { sSS, sSS, sIG, sIG, sIG, sIG, sIG, sSS, sSS, sS2 },
		/*synack*/ { sIV, sIV, sSR, sIV, sIV, sIV, sIV, sIV, sIV, sSR },
		/*fin*/	   { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
		/*ack*/	   { sES, sIV, sES, sES, sCW, sCW, sTW, sTW, sCL, sIV },
		/*rst*/	   { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
		/*none*/   { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
	{
		/* REPLY
		 *	     sNO, sSS, sSR, sES, sFW, sCW, sLA, sTW, sCL, sS2 */
		/*syn*/	   { sIV, sS2, sIV, sIV, sIV, sIV, sIV, sSS, sIV, sS2 },
		/*synack*/ { sIV, sSR, sIG, sIG, sIG, sIG, sIG, sIG, sIG, sSR },
		/*fin*/	   { sIV, sIV, sFW, sFW, sLA, sLA, sLA, sTW, sCL, sIV },
		/*ack*/	   { sIV, sIG, sSR, sES, sCW, sCW, sTW, sTW, sCL, sIG },
		/*rst*/	   { sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
		/*none*/   { sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV, sIV },
	},
};
/* clang-format on */

uint8_t nftdp_ct_tcp_table(int dir, int index, int state)
{
	return tcp_conntracks[dir][index][state];
}

enum tcp_action { TCP_IGNORE, TCP_INVALID, TCP_ACCEPT };

static inline bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}
#define after(a, b) before(b, a)

/* The segment as the functions below read it. */
struct tcp_seg {
	const uint8_t *th;
	uint32_t l4len;
	uint32_t doff; /* header bytes */
	uint8_t flags;
	uint32_t seq, ack;
	int32_t recv_off; /* the receiver's seqadj at ack - 1 */
	uint16_t win;
};

static inline __attribute__((always_inline)) void seg_read(const struct ct_l4pkt *p,
							   struct tcp_seg *g)
{
	g->th = p->l4;
	g->l4len = p->l4len;
	g->doff = (uint32_t)(p->l4[12] >> 4) * 4u;
	g->flags = p->l4[13];
	g->seq = nftdp_rd32(p->l4 + 4);
	g->ack = nftdp_rd32(p->l4 + 8);
	g->win = (uint16_t)(p->l4[14] << 8 | p->l4[15]);
}

static unsigned int get_conntrack_index(uint8_t f)
{
	if (f & TH_RST)
		return TCP_RST_SET;
	if (f & TH_SYN)
		return (f & TH_ACK) ? TCP_SYNACK_SET : TCP_SYN_SET;
	if (f & TH_FIN)
		return TCP_FIN_SET;
	if (f & TH_ACK)
		return TCP_ACK_SET;
	return TCP_NONE_SET;
}

static uint32_t segment_seq_plus_len(const struct tcp_seg *g)
{
	return g->seq + (g->l4len - g->doff) + ((g->flags & TH_SYN) ? 1 : 0) +
	       ((g->flags & TH_FIN) ? 1 : 0);
}

#define MAXACKWINCONST 66000
#define MAXACKWINDOW(sender)                                                                       \
	((sender)->td_maxwin > MAXACKWINCONST ? (sender)->td_maxwin : MAXACKWINCONST)
#define TCP_MAX_WSCALE 14

/* tcp_options: window scale and SACK-permitted of a SYN. */
static void tcp_options(const struct tcp_seg *g, struct ct_tcp_state *st)
{
	const uint8_t *ptr = g->th + 20;
	int length = (int)g->doff - 20;

	if (!length)
		return;
	st->td_scale = 0;
	st->flags &= IP_CT_TCP_FLAG_BE_LIBERAL;
	while (length > 0) {
		int opcode = *ptr++, opsize;

		switch (opcode) {
		case 0: /* EOL */
			return;
		case 1: /* NOP */
			length--;
			continue;
		default:
			if (length < 2)
				return;
			opsize = *ptr++;
			if (opsize < 2 || opsize > length)
				return;
			if (opcode == 4 && opsize == 2) {
				st->flags |= IP_CT_TCP_FLAG_SACK_PERM;
			} else if (opcode == 3 && opsize == 3) {
				st->td_scale = *ptr;
				if (st->td_scale > TCP_MAX_WSCALE)
					st->td_scale = TCP_MAX_WSCALE;
				st->flags |= IP_CT_TCP_FLAG_WINDOW_SCALE;
			}
			ptr += opsize - 2;
			length -= opsize;
		}
	}
}

/* tcp_sack: the highest right edge of the SACK blocks. */
static void tcp_sack(const struct tcp_seg *g, uint32_t *sack)
{
	const uint8_t *ptr = g->th + 20;
	int length = (int)g->doff - 20;

	if (!length)
		return;
	/* fast path: timestamp only (NOP NOP TS 10) */
	if (length == 12 && ptr[0] == 1 && ptr[1] == 1 && ptr[2] == 8 && ptr[3] == 10)
		return;
	while (length > 0) {
		int opcode = *ptr++, opsize, i;

		switch (opcode) {
		case 0:
			return;
		case 1:
			length--;
			continue;
		default:
			if (length < 2)
				return;
			opsize = *ptr++;
			if (opsize < 2 || opsize > length)
				return;
			if (opcode == 5 && opsize >= 2 + 8 && !((opsize - 2) % 8)) {
				for (i = 0; i < opsize - 2; i += 8) {
					uint32_t tmp = nftdp_rd32(ptr + i + 4);

					if (after(tmp, *sack))
						*sack = tmp;
				}
				return;
			}
			ptr += opsize - 2;
			length -= opsize;
		}
	}
}

static void tcp_init_sender(struct ct_tcp_state *sender, struct ct_tcp_state *receiver,
			    const struct tcp_seg *g, uint32_t end, uint32_t win, int dir)
{
	sender->td_end = sender->td_maxend = end;
	sender->td_maxwin = win == 0 ? 1 : win;
	tcp_options(g, sender);
	/* RFC 1323: both sides must send the window scale option */
	if (dir == IP_CT_DIR_REPLY && !(sender->flags & IP_CT_TCP_FLAG_WINDOW_SCALE &&
					receiver->flags & IP_CT_TCP_FLAG_WINDOW_SCALE)) {
		sender->td_scale = 0;
		receiver->td_scale = 0;
	}
}

/* nf_tcp_log_invalid without the log: liberal mode accepts. */
static enum tcp_action tcp_invalid(const struct nftdp_ct_shard *s,
				   const struct ct_tcp_state *sender, enum tcp_action ret)
{
	if ((sender->flags & IP_CT_TCP_FLAG_BE_LIBERAL) || s->cfg.tcp_be_liberal)
		return TCP_ACCEPT;
	return ret;
}

/*
 * tcp_in_window's updates of an accepted segment's sender and receiver:
 * win already scaled, has_ack the segment's ACK flag. Inline: the
 * established fast path (tcp_in_window_ack) runs it too.
 */
static inline __attribute__((always_inline)) void
window_update(struct ct_tcp_state *sender, struct ct_tcp_state *receiver, uint32_t end,
	      uint32_t ack, uint32_t sack, uint32_t win, bool has_ack)
{
	uint32_t swin = win + (sack - ack);

	/* sender */
	if (sender->td_maxwin < swin)
		sender->td_maxwin = swin;
	if (after(end, sender->td_end)) {
		sender->td_end = end;
		sender->flags |= IP_CT_TCP_FLAG_DATA_UNACKNOWLEDGED;
	}
	if (has_ack) {
		if (!(sender->flags & IP_CT_TCP_FLAG_MAXACK_SET)) {
			sender->td_maxack = ack;
			sender->flags |= IP_CT_TCP_FLAG_MAXACK_SET;
		} else if (after(ack, sender->td_maxack)) {
			sender->td_maxack = ack;
		}
	}
	/* receiver */
	if (receiver->td_maxwin != 0 && after(end, sender->td_maxend))
		receiver->td_maxwin += end - sender->td_maxend;
	if (after(sack + win, receiver->td_maxend - 1)) {
		receiver->td_maxend = sack + win;
		if (win == 0)
			receiver->td_maxend++;
	}
	if (ack == receiver->td_end)
		receiver->flags &= (uint8_t)~IP_CT_TCP_FLAG_DATA_UNACKNOWLEDGED;
}

/* tcp_in_window's retransmission count of an accepted ACK: the same
 * segment (direction, seq, ack, end, unscaled window) again, or a new
 * last one */
static inline __attribute__((always_inline)) void retrans_note(struct ct_tcp *state, int dir,
							       uint32_t seq, uint32_t ack,
							       uint32_t end, uint16_t win_raw)
{
	if (state->last_dir == dir && state->last_seq == seq && state->last_ack == ack &&
	    state->last_end == end && state->last_win == win_raw) {
		state->retrans++;
		return;
	}
	state->last_dir = (uint8_t)dir;
	state->last_seq = seq;
	state->last_ack = ack;
	state->last_end = end;
	state->last_win = win_raw;
	state->retrans = 0;
}

static enum tcp_action tcp_in_window(struct nftdp_ct_shard *s, struct ct_tcp *state, int dir,
				     unsigned int index, const struct tcp_seg *g)
{
	struct ct_tcp_state *sender = &state->seen[dir];
	struct ct_tcp_state *receiver = &state->seen[!dir];
	uint32_t seq, ack, sack, end, win, swin;
	bool in_recv_win, seq_ok;
	uint16_t win_raw;

	seq = g->seq;
	ack = sack = g->ack;
	win_raw = g->win;
	win = win_raw;
	end = segment_seq_plus_len(g);

	if (receiver->flags & IP_CT_TCP_FLAG_SACK_PERM)
		tcp_sack(g, &sack);

	/* NAT sequence number mangling (nf_ct_seq_offset) */
	ack -= (uint32_t)g->recv_off;
	sack -= (uint32_t)g->recv_off;

	if (sender->td_maxwin == 0) {
		/* initialise sender data */
		if (g->flags & TH_SYN) {
			tcp_init_sender(sender, receiver, g, end, win, dir);
			if (!(g->flags & TH_ACK))
				return TCP_ACCEPT; /* simultaneous open */
		} else {
			/* mid-connection: use the data from the packet */
			sender->td_end = end;
			swin = win << sender->td_scale;
			sender->td_maxwin = swin == 0 ? 1 : swin;
			sender->td_maxend = end + sender->td_maxwin;
			if (receiver->td_maxwin == 0) {
				/* nothing seen the other way yet: pass III and IV */
				receiver->td_end = receiver->td_maxend = sack;
			} else if (sack == receiver->td_end + 1) {
				/* likely a reply to a keepalive (III) */
				receiver->td_end++;
			}
		}
	} else if ((g->flags & TH_SYN) && after(end, sender->td_end) &&
		   (state->state == TCP_CONNTRACK_SYN_SENT ||
		    state->state == TCP_CONNTRACK_SYN_RECV)) {
		/* RFC 793: a reinitialised TCP uses larger sequence numbers;
		 * re-init this direction as for the first SYN(-ACK) */
		tcp_init_sender(sender, receiver, g, end, win, dir);
		if (dir == IP_CT_DIR_REPLY && !(g->flags & TH_ACK))
			return TCP_ACCEPT;
	}

	if (!(g->flags & TH_ACK)) {
		ack = sack = receiver->td_end; /* no ACK: pretend it was set and OK */
	} else if ((g->flags & (TH_ACK | TH_RST)) == (TH_ACK | TH_RST) && ack == 0) {
		ack = sack = receiver->td_end; /* broken stacks: RST|ACK with ack 0 */
	}

	if ((g->flags & TH_RST) && seq == 0 && state->state == TCP_CONNTRACK_SYN_SENT)
		seq = end = sender->td_end; /* RST answering a SYN */

	seq_ok = before(seq, sender->td_maxend + 1);
	if (!seq_ok) {
		uint32_t overshot = end - sender->td_maxend + 1;
		bool ack_ok;

		ack_ok = after(sack, receiver->td_end - MAXACKWINDOW(sender) - 1);
		in_recv_win =
		    receiver->td_maxwin && after(end, sender->td_end - receiver->td_maxwin - 1);
		if (in_recv_win && ack_ok && overshot <= receiver->td_maxwin &&
		    before(sack, receiver->td_end + 1)) {
			/* peers that send more than the window: let an ACK
			 * for this data update the state later */
			sender->td_end = end;
			sender->flags |= IP_CT_TCP_FLAG_DATA_UNACKNOWLEDGED;
			return tcp_invalid(s, sender, TCP_IGNORE);
		}
		return tcp_invalid(s, sender, TCP_INVALID); /* SEQ over upper bound */
	}

	if (!before(sack, receiver->td_end + 1))
		return tcp_invalid(s, sender, TCP_INVALID); /* ACK over upper bound */

	in_recv_win = !receiver->td_maxwin || after(end, sender->td_end - receiver->td_maxwin - 1);
	if (!in_recv_win)
		return tcp_invalid(s, sender, TCP_IGNORE); /* SEQ under lower bound */
	if (!after(sack, receiver->td_end - MAXACKWINDOW(sender) - 1))
		return tcp_invalid(s, sender, TCP_IGNORE); /* ACK under lower bound */

	/* window scaling (RFC 1323) */
	if (!(g->flags & TH_SYN))
		win <<= sender->td_scale;

	window_update(sender, receiver, end, ack, sack, win, g->flags & TH_ACK);

	if (index == TCP_ACK_SET)
		retrans_note(state, dir, seq, ack, end, win_raw);
	return TCP_ACCEPT;
}

/*
 * tcp_in_window for the segments connections are made of once both
 * directions' window data is set: an ACK, or a FIN with ACK (index
 * TCP_ACK_SET or TCP_FIN_SET: no SYN, no RST), in a direction whose
 * window data is set (td_maxwin != 0), without NAT sequence adjustment
 * (recv_off 0). When all four bounds hold it does exactly what
 * tcp_in_window does for it and returns true. Otherwise it returns false
 * having changed nothing, and the general code decides (and, in liberal
 * mode, accepts).
 */
static inline __attribute__((always_inline)) bool
tcp_in_window_ack(struct ct_tcp *state, int dir, const struct tcp_seg *g, unsigned int index)
{
	struct ct_tcp_state *sender = &state->seen[dir];
	struct ct_tcp_state *receiver = &state->seen[!dir];
	uint32_t seq = g->seq, ack = g->ack, sack = g->ack, end, win;

	if (sender->td_maxwin == 0)
		return false;
	if ((receiver->flags & IP_CT_TCP_FLAG_SACK_PERM) && g->doff > 20)
		tcp_sack(g, &sack);
	/* segment_seq_plus_len without SYN */
	end = seq + (g->l4len - g->doff) + (g->flags & TH_FIN ? 1 : 0);
	/* I (seq over the upper bound) and III (ack over it) */
	if (!before(seq, sender->td_maxend + 1) || !before(sack, receiver->td_end + 1))
		return false;
	/* II and IV: the lower bounds */
	if (receiver->td_maxwin && !after(end, sender->td_end - receiver->td_maxwin - 1))
		return false;
	if (!after(sack, receiver->td_end - MAXACKWINDOW(sender) - 1))
		return false;

	win = (uint32_t)g->win << sender->td_scale;
	window_update(sender, receiver, end, ack, sack, win, true);
	if (index == TCP_ACK_SET)
		retrans_note(state, dir, seq, ack, end, g->win);
	return true;
}

/* nf_tcp_handle_invalid: an out-of-window FIN/RST answering the peer's
 * FIN/RST shortens an assured entry's timeout to UNACK. */
static void tcp_handle_invalid(struct nftdp_ct_entry *e, int dir, unsigned int index,
			       uint64_t now_ms)
{
	struct ct_tcp *t = &e->proto.tcp;
	uint64_t expires, timeout;

	if (!(e->status & IPS_ASSURED) || (e->status & IPS_FIXED_TIMEOUT))
		return;
	if (index != TCP_RST_SET && index != TCP_FIN_SET)
		return;
	if (t->last_dir != dir && (t->last_index == TCP_FIN_SET || t->last_index == TCP_RST_SET)) {
		expires = e->expires_ms > now_ms ? e->expires_ms - now_ms : 0;
		if (expires < 120 * 1000)
			return;
		timeout = (uint64_t)e->tmo->tcp[TCP_CONNTRACK_UNACK] * 1000;
		if (expires > timeout)
			e->expires_ms = now_ms + timeout;
	} else {
		t->last_index = (uint8_t)index;
		t->last_dir = (uint8_t)dir;
	}
}

/* tcp_valid_flags: PUSH, ECE and CWR are always valid; the others (FIN,
 * SYN, RST, ACK, URG: a value below 64) must be one of tcp_valid_flags'
 * combinations, a bit each in one word */
#define TCP_VALID(f) (1ull << (f))
static const uint64_t tcp_valid_combos =
    TCP_VALID(TH_SYN) | TCP_VALID(TH_SYN | TH_URG) | TCP_VALID(TH_SYN | TH_ACK) |
    TCP_VALID(TH_RST) | TCP_VALID(TH_RST | TH_ACK) | TCP_VALID(TH_FIN | TH_ACK) |
    TCP_VALID(TH_FIN | TH_ACK | TH_URG) | TCP_VALID(TH_ACK) | TCP_VALID(TH_ACK | TH_URG);
#undef TCP_VALID

static inline bool tcp_valid_flags(uint8_t f)
{
	return (tcp_valid_combos >> (f & (uint8_t) ~(TH_ECE | TH_CWR | TH_PSH))) & 1;
}

/* tcp_error: truncated header, bad checksum, impossible flags. */
bool nftdp_ct_tcp_error(const struct ct_l4pkt *p, bool checksum)
{
	uint32_t doff;

	if (p->l4len < 20)
		return true;
	doff = (uint32_t)(p->l4[12] >> 4) * 4u;
	if (doff < 20 || p->l4len < doff)
		return true;
	if (checksum && !nftdp_ct_l4_csum_ok(p->pkt, p->l4, p->l4len))
		return true;
	return !tcp_valid_flags(p->l4[13]);
}

bool nftdp_ct_tcp_new(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, const struct ct_l4pkt *p)
{
	struct ct_tcp *t = &e->proto.tcp;
	struct tcp_seg g;
	uint8_t new_state;

	seg_read(p, &g);
	new_state = tcp_conntracks[0][get_conntrack_index(g.flags)][TCP_CONNTRACK_NONE];
	if (new_state >= TCP_CONNTRACK_MAX)
		return false;
	memset(t, 0, sizeof(*t));
	t->seen[0].td_end = segment_seq_plus_len(&g);
	t->seen[0].td_maxwin = g.win ? g.win : 1;
	if (new_state == TCP_CONNTRACK_SYN_SENT) {
		t->seen[0].td_maxend = t->seen[0].td_end;
		tcp_options(&g, &t->seen[0]);
	} else if (s->cfg.tcp_no_loose) {
		return false; /* don't pick up connections */
	} else {
		/* mid-connection pickup: history lost; assume SACK and be
		 * liberal to cope with window scaling we never saw */
		t->seen[0].td_maxend = t->seen[0].td_end + t->seen[0].td_maxwin;
		t->seen[0].flags = t->seen[1].flags =
		    IP_CT_TCP_FLAG_SACK_PERM | IP_CT_TCP_FLAG_BE_LIBERAL;
	}
	t->last_index = TCP_NONE_SET;
	return true;
}

bool nftdp_ct_tcp_can_early_drop(const struct nftdp_ct_entry *e)
{
	switch (e->proto.tcp.state) {
	case TCP_CONNTRACK_FIN_WAIT:
	case TCP_CONNTRACK_LAST_ACK:
	case TCP_CONNTRACK_TIME_WAIT:
	case TCP_CONNTRACK_CLOSE:
	case TCP_CONNTRACK_CLOSE_WAIT:
		return true;
	default:
		return false;
	}
}

static bool tcp_established(const struct nftdp_ct_entry *e)
{
	return e->proto.tcp.state == TCP_CONNTRACK_ESTABLISHED && (e->status & IPS_ASSURED);
}

static void tcp_state_reset(struct ct_tcp_state *st)
{
	st->td_end = st->td_maxend = st->td_maxwin = st->td_maxack = 0;
	st->td_scale = 0;
	st->flags &= IP_CT_TCP_FLAG_BE_LIBERAL;
}

/*
 * nf_conntrack_tcp_packet from in_window on: the packet is in window (or
 * exempt from the check); the new state, the timeout, assured. Inline
 * with constant states and index for the established fast path, so that
 * it is the general path's own code folded, not a copy.
 */
static inline __attribute__((always_inline)) enum ct_verdict
tcp_accepted(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, const struct ct_l4pkt *p, int dir,
	     uint64_t now_ms, uint8_t old_state, uint8_t new_state, unsigned int index)
{
	const uint32_t *timeouts = nftdp_ct_policy(s, e)->tcp;
	struct ct_tcp *t = &e->proto.tcp;
	unsigned int max_retrans;
	uint32_t timeout;

	/* from here on the packet is in window */
	t->last_index = (uint8_t)index;
	t->last_dir = (uint8_t)dir;
	t->state = new_state;
	if (old_state != new_state && new_state == TCP_CONNTRACK_FIN_WAIT)
		t->seen[dir].flags |= IP_CT_TCP_FLAG_CLOSE_INIT;
	if (old_state != new_state)
		nftdp_ct_event_cache(e, IPCT_PROTOINFO);

	max_retrans = s->cfg.tcp_max_retrans ? s->cfg.tcp_max_retrans : 3;
	if (t->retrans >= max_retrans && timeouts[new_state] > timeouts[TCP_CONNTRACK_RETRANS])
		timeout = timeouts[TCP_CONNTRACK_RETRANS];
	else if (index == TCP_RST_SET)
		timeout = timeouts[TCP_CONNTRACK_CLOSE];
	else if (((t->seen[0].flags | t->seen[1].flags) & IP_CT_TCP_FLAG_DATA_UNACKNOWLEDGED) &&
		 timeouts[new_state] > timeouts[TCP_CONNTRACK_UNACK])
		timeout = timeouts[TCP_CONNTRACK_UNACK];
	else if (t->last_win == 0 && timeouts[new_state] > timeouts[TCP_CONNTRACK_RETRANS])
		timeout = timeouts[TCP_CONNTRACK_RETRANS];
	else
		timeout = timeouts[new_state];

	if (!(e->status & IPS_SEEN_REPLY)) {
		/* only reply an RST: not a connection, delete it now */
		if (index == TCP_RST_SET) { /* g.flags & TH_RST */
			nftdp_ct_acct(s, e, p, dir);
			nftdp_ct_kill(s, e);
			return CT_ACCEPT;
		}
		/* a SYN retransmit does not renew the timeout (port reuse
		 * could keep the entry alive forever) */
		if (index == TCP_SYN_SET && old_state == TCP_CONNTRACK_SYN_SENT)
			return CT_ACCEPT;
		/* picked up mid-stream, no reply yet: no long timeout */
		if (new_state == TCP_CONNTRACK_ESTABLISHED &&
		    timeout > timeouts[TCP_CONNTRACK_UNACK])
			timeout = timeouts[TCP_CONNTRACK_UNACK];
	} else if (!(e->status & IPS_ASSURED) &&
		   (old_state == TCP_CONNTRACK_SYN_RECV ||
		    old_state == TCP_CONNTRACK_ESTABLISHED) &&
		   new_state == TCP_CONNTRACK_ESTABLISHED) {
		/* a valid ACK in ESTABLISHED after SYN_RECV, or a valid
		 * answer on a picked-up connection */
		e->status |= IPS_ASSURED;
		nftdp_ct_event_cache(e, IPCT_ASSURED);
	}
	nftdp_ct_refresh_acct(s, e, p, dir, now_ms, timeout);
	return CT_ACCEPT;
}

/* nf_conntrack_tcp_packet past the established fast path (below), out of
 * line: its registers and stack are paid by the segments that take it */
static __attribute__((noinline)) enum ct_verdict
tcp_packet_slow(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, const struct ct_l4pkt *p,
		int dir, uint64_t now_ms, const struct tcp_seg *seg, uint8_t old_state,
		unsigned int index)
{
	struct ct_tcp *t = &e->proto.tcp;
	struct tcp_seg g = *seg;
	enum tcp_action res;
	uint8_t new_state;

	new_state = tcp_conntracks[dir][index][old_state];

	switch (new_state) {
	case TCP_CONNTRACK_SYN_SENT:
		if (old_state < TCP_CONNTRACK_TIME_WAIT)
			break;
		/* RFC 1122: a SYN may reopen from TIME_WAIT; and aborted
		 * connections: the client restarts what we and the server
		 * still hold */
		if (((t->seen[dir].flags | t->seen[!dir].flags) & IP_CT_TCP_FLAG_CLOSE_INIT) ||
		    (t->last_dir == dir && t->last_index == TCP_RST_SET))
			return CT_REPEAT; /* delete this entry and look up again */
					  /* fall through */
	case TCP_CONNTRACK_IGNORE:
		/* Ignored packets: the entry may be out of sync; (a) SYN in
		 * ORIGINAL, (b) SYN/ACK in REPLY, (c) ACK in REPLY after the
		 * initial SYN. An invalid one draws an RST we catch below. */
		if (index == TCP_SYNACK_SET && t->last_index == TCP_SYN_SET && t->last_dir != dir &&
		    g.ack == t->last_end) {
			/* (b) acknowledges a SYN we ignored: client and
			 * server are in sync, we are not; resync from the
			 * values annotated then */
			struct ct_tcp_state *ls = &t->seen[t->last_dir];

			old_state = TCP_CONNTRACK_SYN_SENT;
			new_state = TCP_CONNTRACK_SYN_RECV;
			ls->td_end = t->last_end;
			ls->td_maxend = t->last_end;
			ls->td_maxwin = t->last_win == 0 ? 1 : t->last_win;
			ls->td_scale = t->last_wscale;
			t->last_flags &= (uint8_t)~IP_CT_EXP_CHALLENGE_ACK;
			ls->flags = t->last_flags;
			tcp_state_reset(&t->seen[dir]);
			break;
		}
		t->last_index = (uint8_t)index;
		t->last_dir = (uint8_t)dir;
		t->last_seq = g.seq;
		t->last_end = segment_seq_plus_len(&g);
		t->last_win = g.win;
		/* (a) annotate the SYN's options; the server answers with a
		 * SYN/ACK (resync above) or an RFC 5961 challenge ACK */
		if (index == TCP_SYN_SET && dir == IP_CT_DIR_ORIGINAL) {
			struct ct_tcp_state seen = {0};

			t->last_flags = t->last_wscale = 0;
			tcp_options(&g, &seen);
			if (seen.flags & IP_CT_TCP_FLAG_WINDOW_SCALE) {
				t->last_flags |= IP_CT_TCP_FLAG_WINDOW_SCALE;
				t->last_wscale = seen.td_scale;
			}
			if (seen.flags & IP_CT_TCP_FLAG_SACK_PERM)
				t->last_flags |= IP_CT_TCP_FLAG_SACK_PERM;
			/* LAST_ACK: an ACK would be read as ACKing the FIN */
			if (old_state == TCP_CONNTRACK_LAST_ACK)
				t->last_flags |= IP_CT_EXP_CHALLENGE_ACK;
		}
		/* possible challenge ACK answering a SYN */
		if (old_state == TCP_CONNTRACK_SYN_SENT && index == TCP_ACK_SET &&
		    dir == IP_CT_DIR_REPLY)
			t->last_ack = g.ack;
		return CT_ACCEPT;
	case TCP_CONNTRACK_MAX:
		return CT_INVALID; /* invalid transition (no SYN proxy here) */
	case TCP_CONNTRACK_TIME_WAIT:
		/* RFC 5961 challenge ACK must not count as the last ACK */
		if (old_state == TCP_CONNTRACK_LAST_ACK && index == TCP_ACK_SET &&
		    t->last_dir != dir && t->last_index == TCP_SYN_SET &&
		    (t->last_flags & IP_CT_EXP_CHALLENGE_ACK)) {
			t->last_flags &= (uint8_t)~IP_CT_EXP_CHALLENGE_ACK;
			return CT_ACCEPT; /* don't change state */
		}
		break;
	case TCP_CONNTRACK_SYN_SENT2:
		/* the table alone cannot handle simultaneous open */
		t->last_flags |= IP_CT_TCP_SIMULTANEOUS_OPEN;
		break;
	case TCP_CONNTRACK_SYN_RECV:
		if (dir == IP_CT_DIR_REPLY && index == TCP_ACK_SET &&
		    (t->last_flags & IP_CT_TCP_SIMULTANEOUS_OPEN))
			new_state = TCP_CONNTRACK_ESTABLISHED;
		break;
	case TCP_CONNTRACK_CLOSE:
		if (index != TCP_RST_SET)
			break;
		/* closing: the tuple may be reused already; skip checks */
		if (nftdp_ct_tcp_can_early_drop(e))
			goto in_window;
		/* td_maxack may be stale if we let a SYN through earlier */
		if ((t->seen[!dir].flags & IP_CT_TCP_FLAG_MAXACK_SET) &&
		    t->last_index != TCP_SYN_SET) {
			uint32_t seq = g.seq;

			/* SEQ 0 outside established: answer to a SYN we let go */
			if (seq == 0 && !tcp_established(e))
				break;
			if (before(seq, t->seen[!dir].td_maxack))
				return CT_INVALID; /* invalid RST */
			if (!tcp_established(e) || seq == t->seen[!dir].td_maxack)
				break;
			/* RST as part of a train: data, then RST at its end */
			if (t->last_index == TCP_ACK_SET && t->last_dir == dir &&
			    seq == t->last_end)
				break;
			/* RST seq not exact: keep the state, allow a challenge ACK */
			new_state = old_state;
		}
		if ((((e->status & IPS_SEEN_REPLY) && t->last_index == TCP_SYN_SET) ||
		     (!(e->status & IPS_ASSURED) && t->last_index == TCP_ACK_SET)) &&
		    g.ack == t->last_end) {
			/* RST to an invalid SYN or ACK we let through at (a)
			 * or (c): skip window checks, it may ACK what we
			 * ignored */
			goto in_window;
		}
		/* reset answering a challenge ACK we let through */
		if (old_state == TCP_CONNTRACK_SYN_SENT && t->last_index == TCP_ACK_SET &&
		    t->last_dir == IP_CT_DIR_REPLY && g.seq == t->last_ack)
			goto in_window;
		break;
	default:
		break;
	}

	g.recv_off = 0;
	if (e->status & IPS_SEQ_ADJUST)
		g.recv_off = nftdp_ct_seq_offset(s, e, !dir, g.ack - 1);
	res = tcp_in_window(s, t, dir, index, &g);
	switch (res) {
	case TCP_IGNORE:
		return CT_ACCEPT;
	case TCP_INVALID:
		tcp_handle_invalid(e, dir, index, now_ms);
		return CT_INVALID;
	case TCP_ACCEPT:
		break;
	}
in_window:
	return tcp_accepted(s, e, p, dir, now_ms, old_state, new_state, index);
}

/* nf_conntrack_tcp_packet. The caller ran nftdp_ct_tcp_error() and, for an
 * unconfirmed entry, nftdp_ct_tcp_new(). */
enum ct_verdict nftdp_ct_tcp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				    const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	struct ct_tcp *t = &e->proto.tcp;
	uint8_t old_state = t->state;
	unsigned int index;
	struct tcp_seg g;

	seg_read(p, &g);
	index = get_conntrack_index(g.flags);
	/* ESTABLISHED stays so on an in-window ACK (both directions' table
	 * entry); the transitions and the NAT offset have nothing to do */
	if (old_state == TCP_CONNTRACK_ESTABLISHED && index == TCP_ACK_SET &&
	    !(e->status & IPS_SEQ_ADJUST) && tcp_in_window_ack(t, dir, &g, TCP_ACK_SET))
		return tcp_accepted(s, e, p, dir, now_ms, TCP_CONNTRACK_ESTABLISHED,
				    TCP_CONNTRACK_ESTABLISHED, TCP_ACK_SET);
	/* the handshake's last ACK and the close (ACK or FIN with ACK) in
	 * window: a transition tcp_packet_slow's switch leaves to
	 * tcp_in_window as it is (ESTABLISHED to CLOSE; not TIME_WAIT while
	 * a challenge ACK is expected, whose check it makes first) */
	if ((index == TCP_ACK_SET || index == TCP_FIN_SET) && (g.flags & TH_ACK) &&
	    !(e->status & IPS_SEQ_ADJUST) && !(t->last_flags & IP_CT_EXP_CHALLENGE_ACK)) {
		uint8_t new_state = tcp_conntracks[dir][index][old_state];

		if (new_state >= TCP_CONNTRACK_ESTABLISHED && new_state <= TCP_CONNTRACK_CLOSE &&
		    tcp_in_window_ack(t, dir, &g, index))
			return tcp_accepted(s, e, p, dir, now_ms, old_state, new_state, index);
	}
	return tcp_packet_slow(s, e, p, dir, now_ms, &g, old_state, index);
}
