// SPDX-License-Identifier: BSD-3-Clause
/*
 * Trace events: mirrors nf_tables_trace.c (nft_trace_notify, nft_trace_init)
 * and the nft_trace_packet / nft_trace_verdict calls of nft_do_chain as the
 * kernel of the test machine (6.18) makes them. vm.c calls in here only from
 * its traced variant of the eval loop; events go to one single-producer ring
 * per worker that control/ drains (nftdp_vm_trace_poll) into NFT_MSG_TRACE.
 */
#include <stdlib.h>

#include "vm_priv.h"

int nftdp_vm_trace_rings_create(struct nftdp_vm_state *st, unsigned int ring_size)
{
	st->trace_ring_size = ring_size ? ring_size : 512;
	st->traces = nftdp_vm_worker_rings_alloc(
	    st->n_workers, sizeof(*st->traces), offsetof(struct nftdp_vm_trace_ring, ev),
	    st->trace_ring_size * sizeof(struct nftdp_vm_trace_event));
	return st->traces ? 0 : -ENOMEM;
}

void nftdp_vm_trace_rings_destroy(struct nftdp_vm_state *st)
{
	nftdp_vm_worker_rings_free(st->traces, st->n_workers, sizeof(*st->traces),
				   offsetof(struct nftdp_vm_trace_ring, ev));
	st->traces = NULL;
}

void nftdp_vm_trace_listen(struct nftdp_vm_state *st, bool on)
{
	atomic_store_explicit(&st->trace_on, on, memory_order_relaxed);
}

uint64_t nftdp_vm_trace_lost(const struct nftdp_vm_state *st)
{
	uint64_t n = 0;

	for (unsigned int w = 0; w < st->n_workers; w++)
		n += atomic_load_explicit(&st->traces[w].lost, memory_order_relaxed);
	return n;
}

unsigned int nftdp_vm_trace_poll(struct nftdp_vm_state *st,
				 void (*cb)(const struct nftdp_vm_trace_event *ev, void *arg),
				 void *arg)
{
	unsigned int n = 0;

	for (unsigned int w = 0; w < st->n_workers; w++) {
		struct nftdp_vm_trace_ring *r = &st->traces[w];
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

		for (; tail != head; tail++, n++)
			cb(&r->ev[tail & (st->trace_ring_size - 1)], arg);
		/* the slots are the worker's again only after cb read them */
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	return n;
}

static void copy_name(char *dst, const char *src)
{
	size_t n = strnlen(src, NFTDP_VM_TRACE_NAMELEN - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static uint8_t copy_hdr(uint8_t *dst, const struct nftdp_vm_pkt *pkt, uint32_t off, uint32_t end,
			uint32_t max)
{
	uint32_t len;

	if (end > pkt->len)
		end = pkt->len;
	if (off >= end)
		return 0;
	len = end - off < max ? end - off : max;
	memcpy(dst, pkt->data + off, len);
	return (uint8_t)len;
}

/* nf_trace_fill_dev_info + nf_trace_fill_pkt_info: the network header up to
 * the transport header (or the end without one), 40 bytes at most; the
 * transport header, 20 at most, only with NFT_PKTINFO_L4PROTO; the link
 * layer from the mac header to the network header, 20 at most (an in-band
 * 802.1Q tag gives the 18 bytes of the kernel's vlan_ethhdr). */
static void fill_packet(struct nftdp_vm_trace_event *ev, const struct nftdp_vm_pkt *pkt)
{
	bool l4 = pkt->flags & NFTDP_VM_PKT_F_L4PROTO;

	ev->packet = true;
	ev->iif = pkt->iif;
	ev->iiftype = pkt->iiftype;
	ev->oif = pkt->oif;
	ev->oiftype = pkt->oiftype;
	ev->nh_len = copy_hdr(ev->nh, pkt, pkt->nh_off, l4 ? pkt->th_off : pkt->len,
			      NFTDP_VM_TRACE_NETWORK_HSIZE);
	ev->th_len =
	    l4 ? copy_hdr(ev->th, pkt, pkt->th_off, pkt->len, NFTDP_VM_TRACE_TRANSPORT_HSIZE) : 0;
	ev->ll_len = pkt->mac_off >= 0 ? copy_hdr(ev->ll, pkt, (uint32_t)pkt->mac_off, pkt->nh_off,
						  NFTDP_VM_TRACE_LL_HSIZE)
				       : 0;
}

/* nft_trace_init's id: one per packet. The kernel hashes the skb's address,
 * flow hash and iif with a boot-time key; any per-packet value will do, so
 * a worker numbers its traced packets (mixed, so ids look unrelated). */
static uint32_t trace_id(struct nftdp_vm_trace_ring *r, struct nftdp_vm_pkt *pkt,
			 unsigned int worker)
{
	uint32_t id;

	if (pkt->trace_id)
		return pkt->trace_id;
	id = (++r->seq * 0x9e3779b1u) ^ (worker * 0x85ebca6bu);
	pkt->trace_id = id ? id : 1;
	return pkt->trace_id;
}

/* nft_trace_notify: the event goes straight into the ring's next slot */
static void notify(struct nftdp_vm_traceinfo *info, struct nftdp_vm_pkt *pkt,
		   const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_chain *chain,
		   const struct nftdp_vm_rule *rule, const struct nftdp_vm_verdict *verdict,
		   uint32_t type)
{
	struct nftdp_vm_state *st = ctx->state;
	struct nftdp_vm_trace_ring *r;
	struct nftdp_vm_trace_event *ev;
	uint32_t head, tail, mark = 0;

	if (ctx->worker >= st->n_workers)
		return;
	r = &st->traces[ctx->worker];
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - tail >= st->trace_ring_size) {
		/* the event is lost, never the packet */
		atomic_store_explicit(&r->lost,
				      atomic_load_explicit(&r->lost, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		return;
	}
	ev = &r->ev[head & (st->trace_ring_size - 1)];
	ev->id = trace_id(r, pkt, ctx->worker);
	ev->type = type;
	ev->family = info->basechain->family;
	ev->nfproto = pkt->nfproto;
	copy_name(ev->table, chain->table);
	copy_name(ev->chain, chain->name);
	/* nf_trace_fill_rule_info: no handle at a chain's end or a policy */
	ev->has_handle = rule != NULL;
	ev->handle = rule ? rule->handle : 0;
	ev->has_verdict = false;
	ev->has_policy = false;
	ev->target[0] = '\0';
	if (type == NFT_TRACETYPE_POLICY) {
		ev->has_policy = true;
		ev->policy = info->basechain->policy;
		mark = pkt->mark;
	} else {
		ev->has_verdict = true;
		ev->verdict = verdict->code;
		if ((verdict->code == (uint32_t)NFT_JUMP || verdict->code == (uint32_t)NFT_GOTO) &&
		    verdict->chain)
			copy_name(ev->target, verdict->chain->name);
		/* the skb is gone after NF_STOLEN: neither its mark nor its headers */
		if ((verdict->code & NF_VERDICT_MASK) == NF_STOLEN)
			info->packet_dumped = true;
		else
			mark = pkt->mark;
	}
	ev->mark = mark;
	ev->packet = false;
	ev->ll_len = ev->nh_len = ev->th_len = 0;
	ev->iif = ev->oif = 0;
	if (!info->packet_dumped) {
		fill_packet(ev, pkt);
		info->packet_dumped = true;
	}
	/* publish the event before the index that makes it visible */
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

void nftdp_vm_trace_rule(struct nftdp_vm_traceinfo *info, struct nftdp_vm_pkt *pkt,
			 const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_chain *chain,
			 const struct nftdp_vm_rule *rule)
{
	static const struct nftdp_vm_verdict cont = {.code = (uint32_t)NFT_CONTINUE};

	info->nf_trace = pkt->nftrace;
	if (info->nf_trace)
		notify(info, pkt, ctx, chain, rule, &cont, NFT_TRACETYPE_RULE);
}

/*
 * __nft_trace_verdict. The kernel here switches on `code & NF_VERDICT_MASK`
 * and so never matches its NFT_CONTINUE / NFT_RETURN cases: every verdict,
 * a chain's end included, goes out as NFT_TRACETYPE_RULE, and a chain's end
 * without a rule handle (nft 1.0.6 prints nothing for it, unless it carries
 * the packet). 6.1 sent NFT_TRACETYPE_RETURN there (docs/differences.md).
 */
void nftdp_vm_trace_verdict(struct nftdp_vm_traceinfo *info, struct nftdp_vm_pkt *pkt,
			    const struct nftdp_vm_ctx *ctx, const struct nftdp_vm_chain *chain,
			    const struct nftdp_vm_rule *rule,
			    const struct nftdp_vm_verdict *verdict)
{
	if ((verdict->code & NF_VERDICT_MASK) != NF_STOLEN)
		info->nf_trace = pkt->nftrace;
	if (info->nf_trace)
		notify(info, pkt, ctx, chain, rule, verdict, NFT_TRACETYPE_RULE);
}

void nftdp_vm_trace_policy(struct nftdp_vm_traceinfo *info, struct nftdp_vm_pkt *pkt,
			   const struct nftdp_vm_ctx *ctx)
{
	info->nf_trace = pkt->nftrace;
	if (info->nf_trace)
		notify(info, pkt, ctx, info->basechain, NULL, NULL, NFT_TRACETYPE_POLICY);
}
