// SPDX-License-Identifier: BSD-3-Clause
/*
 * Entries that ctnetlink makes and changes (conntrack -I/-U, conntrackd's
 * state sync) and CTRZERO: the table side of the kernel's
 * ctnetlink_new_conntrack (nf_conntrack_netlink.c): ctnetlink_create_conntrack
 * with nf_conntrack_hash_check_insert, ctnetlink_change_conntrack and its
 * change_helper/timeout/status/protoinfo/mark/labels, nf_ct_change_status_common,
 * nfnetlink_parse_nat_setup (nf_nat_core.c) and nlattr_to_tcp/sctp.
 * Runs on the shard's worker (the mailbox of dataplane/ct_ctl.c), never on
 * the packet path. A NAT binding is what the packet path makes: the reply
 * tuple and IPS_{SRC,DST}_NAT{,_DONE} (nat.c), so an injected NAT'd entry
 * translates like one made by traffic.
 */
#include <arpa/inet.h>
#include <linux/netfilter/nf_nat.h>

#include "ct_priv.h"

/* __nf_ct_set_timeout clamps the jiffies to INT_MAX; HZ=250 (Debian) */
#define CT_INJECT_MAX_TIMEOUT_S (0x7fffffffu / 250u)

static void set_timeout(struct nftdp_ct_entry *e, uint32_t timeout_s, uint64_t now_ms)
{
	if (timeout_s > CT_INJECT_MAX_TIMEOUT_S)
		timeout_s = CT_INJECT_MAX_TIMEOUT_S;
	e->expires_ms = now_ms + (uint64_t)timeout_s * 1000u;
}

/* nf_ct_change_status_common (with __nf_ct_change_status(ct, status, 0)) */
static int change_status(struct nftdp_ct_entry *e, uint32_t status)
{
	uint32_t d = e->status ^ status;

	if (d & (IPS_EXPECTED | IPS_CONFIRMED | IPS_DYING))
		return -EBUSY; /* unchangeable */
	if ((d & IPS_SEEN_REPLY) && !(status & IPS_SEEN_REPLY))
		return -EBUSY; /* can only be set */
	if ((d & IPS_ASSURED) && !(status & IPS_ASSURED))
		return -EBUSY;
	e->status |= status & ~(uint32_t)IPS_UNCHANGEABLE_MASK & ((1u << __IPS_MAX_BIT) - 1);
	return 0;
}

/* nlattr_to_tcp / nlattr_to_sctp (the parser checked the ranges) */
static void change_protoinfo(struct nftdp_ct_entry *e, const struct nftdp_ct_change *c)
{
	if (e->tuple[0].l4proto == IPPROTO_TCP) {
		struct ct_tcp *t = &e->proto.tcp;

		if (c->has & NFTDP_CT_CHG_TCP_STATE)
			t->state = c->tcp_state;
		for (int d = 0; d < 2; d++) {
			t->seen[d].flags &= (uint8_t)~c->tcp_flags_mask[d];
			t->seen[d].flags |= c->tcp_flags[d] & c->tcp_flags_mask[d];
		}
		if ((c->has & NFTDP_CT_CHG_TCP_WSCALE) &&
		    (t->seen[0].flags & IP_CT_TCP_FLAG_WINDOW_SCALE) &&
		    (t->seen[1].flags & IP_CT_TCP_FLAG_WINDOW_SCALE)) {
			t->seen[0].td_scale = c->tcp_wscale[0];
			t->seen[1].td_scale = c->tcp_wscale[1];
		}
	} else if (e->tuple[0].l4proto == IPPROTO_SCTP && (c->has & NFTDP_CT_CHG_SCTP)) {
		e->proto.sctp.state = c->sctp_state;
		e->proto.sctp.vtag[0] = c->sctp_vtag[0];
		e->proto.sctp.vtag[1] = c->sctp_vtag[1];
	}
}

/* ctnetlink_change_mark */
static void change_mark(struct nftdp_ct_entry *e, const struct nftdp_ct_change *c)
{
	e->mark = (e->mark & ~c->mark_mask) ^ c->mark;
}

/* nf_connlabels_replace; true when a label changed (IPCT_LABEL) */
static bool replace_labels(struct nftdp_ct_entry *e, const struct nftdp_ct_change *c)
{
	bool changed = false;

	for (unsigned int w = 0; w < 4; w++) {
		uint32_t old, data = 0, keep = 0, v;

		memcpy(&old, e->labels + 4 * w, 4);
		if (w < c->labels_words) {
			memcpy(&data, c->labels + 4 * w, 4);
			if (c->labels_masked) {
				memcpy(&keep, c->labels_mask + 4 * w, 4);
				keep = ~keep;
			}
		}
		v = (old & keep) ^ data;
		if (v != old) {
			memcpy(e->labels + 4 * w, &v, 4);
			changed = true;
		}
	}
	return changed;
}

/* __nf_conntrack_helper_find by name for the entry's family and protocol:
 * every helper nftdp runs, as the kernel registers it */
static uint8_t helper_find(const char *name, uint8_t l3proto, uint8_t l4proto)
{
	return nftdp_vm_ct_helper_find(name, l3proto, l4proto);
}

/* ctnetlink_change_helper */
static int change_helper(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			 const struct nftdp_ct_change *c)
{
	uint8_t h;

	if (e->status & IPS_EXPECTED) /* a sibling keeps its helper */
		return e->helper && !strcmp(nftdp_ct_helper_name(e->helper), c->helper) ? 0
											: -EBUSY;
	if (!c->helper[0]) {
		if (e->helper) {
			nftdp_ct_expect_remove_master(s, e);
			e->helper = NFTDP_VM_CT_HELPER_NONE;
		}
		return 0;
	}
	h = helper_find(c->helper, e->tuple[0].l3proto, e->tuple[0].l4proto);
	if (!h)
		return -EOPNOTSUPP;
	if (!e->helper)
		return -EOPNOTSUPP; /* no helper for an existing entry */
	return e->helper == h ? 0 : -EBUSY;
}

#define CT_INJECT_EVENTS                                                                           \
	((1u << IPCT_REPLY) | (1u << IPCT_ASSURED) | (1u << IPCT_HELPER) |                         \
	 (1u << IPCT_PROTOINFO) | (1u << IPCT_SEQADJ) | (1u << IPCT_MARK) | (1u << IPCT_SYNPROXY))

static struct nftdp_ct_entry *lookup(struct nftdp_ct_shard *s, const struct nftdp_ct_change *c,
				     uint64_t now_ms)
{
	const struct nftdp_ct_tuple *t =
	    &c->tuple[(c->has & NFTDP_CT_CHG_ORIG) ? IP_CT_DIR_ORIGINAL : IP_CT_DIR_REPLY];
	struct nftdp_ct_entry *e;
	int dir;

	e = nftdp_ct_find(s, t, nftdp_ct_tuple_hash(s, t), &dir, now_ms);
	return e && (e->status & IPS_CONFIRMED) ? e : NULL;
}

/* ctnetlink_change_seq_adj: nothing without the extension (a connection
 * from traffic that no helper translates); the bit set for each direction
 * given whole, even with zero offsets. A missing part fails the request
 * with what came before it written, as change_seq_adj does. */
static int change_seq_adj(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
			  const struct nftdp_ct_change *c)
{
	struct ct_help *h = &s->help[e - s->entries];

	if (!nftdp_ct_seqadj_ext(s, e))
		return 0;
	if (!(e->status & IPS_SEQ_ADJUST))
		memset(h->seq, 0, sizeof(h->seq)); /* the extension starts zeroed */
	for (int d = 0; d < 2; d++) {
		uint8_t parts = c->seqadj_parts[d];

		if (!(c->seqadj_dirs & (1u << d)))
			continue;
		if (parts & 1)
			h->seq[d].correction_pos = c->seqadj[d].correction_pos;
		if ((parts & 3) == 3)
			h->seq[d].offset_before = c->seqadj[d].offset_before;
		if (parts != 7)
			return -EINVAL;
		h->seq[d].offset_after = c->seqadj[d].offset_after;
		e->status |= IPS_SEQ_ADJUST;
	}
	return 0;
}

int nftdp_ct_update(struct nftdp_ct_shard *s, const struct nftdp_ct_change *c, uint64_t now_ms,
		    struct nftdp_ct_info *out)
{
	struct nftdp_ct_entry *e = lookup(s, c, now_ms);
	int err;

	if (!e)
		return -ENOENT;
	if (now_ms > s->now_ms)
		s->now_ms = now_ms; /* an idle worker's clock: the events' timeouts */
	if (c->has & NFTDP_CT_CHG_EXCL)
		return -EEXIST;
	/* ctnetlink_change_conntrack: NAT and master only for new entries */
	if (c->has & (NFTDP_CT_CHG_NAT_SRC | NFTDP_CT_CHG_NAT_DST | NFTDP_CT_CHG_MASTER))
		return -EOPNOTSUPP;
	if (c->has & NFTDP_CT_CHG_HELPER) {
		err = change_helper(s, e, c);
		if (err < 0)
			return err;
	}
	if (c->has & NFTDP_CT_CHG_TIMEOUT) {
		/* __nf_ct_change_timeout */
		if (e->status & IPS_FIXED_TIMEOUT)
			return -EPERM;
		set_timeout(e, c->timeout_s, now_ms);
	}
	if (c->has & NFTDP_CT_CHG_STATUS) {
		err = change_status(e, c->status);
		if (err < 0)
			return err;
	}
	if (c->has & NFTDP_CT_CHG_PROTOINFO)
		change_protoinfo(e, c);
	if (c->has & NFTDP_CT_CHG_MARK)
		change_mark(e, c);
	if (c->has & NFTDP_CT_CHG_SEQADJ) {
		err = change_seq_adj(s, e, c);
		if (err < 0)
			return err;
	}
	if (c->has & NFTDP_CT_CHG_LABELS) {
		if (c->labels_err)
			return c->labels_err;
		replace_labels(e, c);
	}
	nftdp_ct_event_push(s, e, CT_INJECT_EVENTS | (1u << IPCT_LABEL));
	if (out)
		nftdp_ct_fill_info(e, now_ms, out);
	return 0;
}

/* nfnetlink_parse_nat_setup: the range given, or the null binding */
static int setup_nat(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
		     const struct nftdp_ct_change *c, enum nftdp_ct_manip manip)
{
	struct nftdp_ct_nat_range r;

	if (c->has & (manip == NFTDP_CT_MANIP_SRC ? NFTDP_CT_CHG_NAT_SRC : NFTDP_CT_CHG_NAT_DST)) {
		r = c->nat[manip];
	} else {
		/* __nf_nat_alloc_null_binding */
		memset(&r, 0, sizeof(r));
		r.flags = NF_NAT_RANGE_MAP_IPS;
		r.min_addr = r.max_addr =
		    manip == NFTDP_CT_MANIP_SRC ? e->tuple[1].dst : e->tuple[1].src;
	}
	return nftdp_ct_nat_setup_entry(s, e, &r, manip) == NF_ACCEPT ? 0 : -ENOMEM;
}

int nftdp_ct_create(struct nftdp_ct_shard *s, const struct nftdp_ct_change *c, uint64_t now_ms,
		    struct nftdp_ct_info *out)
{
	struct nftdp_ct_entry *e;
	uint32_t events;
	int err;

	if ((c->has & (NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_REPLY)) !=
		(NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_REPLY) ||
	    c->tuple[0].l4proto != c->tuple[1].l4proto)
		return -EINVAL;
	if (!(c->has & NFTDP_CT_CHG_TIMEOUT))
		return -EINVAL;
	if (c->has & NFTDP_CT_CHG_HELPER) {
		if (!helper_find(c->helper, c->tuple[0].l3proto, c->tuple[0].l4proto))
			return -EOPNOTSUPP; /* no such helper (module) */
	}
	if (now_ms > s->now_ms)
		s->now_ms = now_ms;
	e = nftdp_ct_entry_new(s, &c->tuple[0], &c->tuple[1], now_ms);
	if (!e)
		return -ENOMEM;
	e->zone_dir = c->zone_dir ? c->zone_dir : NFTDP_VM_CT_ZONE_DIR_BOTH;
	if (c->has & NFTDP_CT_CHG_HELPER)
		nftdp_ct_helper_assign(
		    s, e, helper_find(c->helper, c->tuple[0].l3proto, c->tuple[0].l4proto));
	/* ctnetlink_setup_nat: destination first, each or its null binding */
	if (c->has & (NFTDP_CT_CHG_NAT_SRC | NFTDP_CT_CHG_NAT_DST)) {
		err = setup_nat(s, e, c, NFTDP_CT_MANIP_DST);
		if (!err)
			err = setup_nat(s, e, c, NFTDP_CT_MANIP_SRC);
		if (err)
			goto fail;
	}
	e->status |= IPS_CONFIRMED;
	set_timeout(e, c->timeout_s, now_ms);
	if (c->has & NFTDP_CT_CHG_STATUS) {
		err = change_status(e, c->status);
		if (err)
			goto fail;
	}
	/* nfct_seqadj_ext_add: every entry ctnetlink makes has one */
	e->in_use |= CT_IN_USE_SEQADJ_EXT;
	if (c->has & NFTDP_CT_CHG_SEQADJ) {
		err = change_seq_adj(s, e, c);
		if (err)
			goto fail;
	}
	memset(&e->proto, 0, sizeof(e->proto));
	if (c->has & NFTDP_CT_CHG_PROTOINFO)
		change_protoinfo(e, c);
	if (c->has & NFTDP_CT_CHG_MARK)
		change_mark(e, c);
	if (c->has & NFTDP_CT_CHG_MASTER) {
		struct nftdp_ct_entry *m;
		int dir;

		m = nftdp_ct_find(s, &c->master, nftdp_ct_tuple_hash(s, &c->master), &dir, now_ms);
		if (!m || !(m->status & IPS_CONFIRMED) || m == e) {
			err = -ENOENT;
			goto fail;
		}
		e->status |= IPS_EXPECTED;
		s->help[e - s->entries].master_shard = s->cfg.shard_id;
		s->help[e - s->entries].master_idx = (uint32_t)(m - s->entries);
		s->help[e - s->entries].master_id = m->id;
		s->help[e - s->entries].master_helper = m->helper;
	}
	if (nftdp_ct_tuple_taken(s, e, &e->tuple[0]) || nftdp_ct_tuple_taken(s, e, &e->tuple[1])) {
		err = -EEXIST;
		goto fail;
	}
	s->st.insert++;
	events = (e->status & IPS_EXPECTED) ? 1u << IPCT_RELATED : 1u << IPCT_NEW;
	/* ctnetlink_attach_labels after the insert: its error is ignored */
	if ((c->has & NFTDP_CT_CHG_LABELS) && !c->labels_err) {
		replace_labels(e, c);
		events |= 1u << IPCT_LABEL;
	}
	nftdp_ct_event_push(s, e, CT_INJECT_EVENTS | events);
	if (out)
		nftdp_ct_fill_info(e, now_ms, out);
	return 0;
fail:
	e->status &= ~(uint32_t)IPS_CONFIRMED; /* never in the table: no event */
	nftdp_ct_kill(s, e);
	return err;
}

int nftdp_ct_get_zero(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id,
		      uint64_t now_ms, struct nftdp_ct_info *out)
{
	struct nftdp_ct_entry *e;
	int dir;

	e = nftdp_ct_find(s, t, nftdp_ct_tuple_hash(s, t), &dir, now_ms);
	if (!e || !(e->status & IPS_CONFIRMED) || (id && e->id != id))
		return -ENOENT;
	nftdp_ct_fill_info(e, now_ms, out);
	nftdp_ct_acct_zero(s, e);
	return 0;
}
