// SPDX-License-Identifier: BSD-3-Clause
/*
 * `log group N` toward nfnetlink_log: the packet-path half of
 * nfulnl_log_packet (net/netfilter/nfnetlink_log.c). A worker records what
 * __build_packet_message reads from the skb (devices, mark, the mac header,
 * the timestamp, the payload from skb->data) into its own single-producer
 * byte ring; control/nflog.c drains the rings and builds NFULNL_MSG_PACKET
 * for the instance of the group. Only groups an instance is bound to
 * (nftdp_vm_nflog_bind, the kernel's instance_lookup_get_rcu) record
 * anything, so an unbound group costs one bit test.
 */
#include <stdlib.h>

#include "vm_priv.h"

/* a record that only fills the ring's end: the reader skips it */
#define NFLOG_PAD (1u << 31)
#define NFLOG_ALIGN(n) (((n) + 7u) & ~7u)

int nftdp_vm_nflog_rings_create(struct nftdp_vm_state *st, unsigned int ring_size)
{
	st->nflog_ring_size = ring_size ? ring_size : 256u * 1024;
	if (st->nflog_ring_size < 4096)
		return -EINVAL;
	/* the buffers 64-aligned, so that every record header is 8-aligned */
	st->nflog = nftdp_vm_worker_rings_alloc(st->n_workers, sizeof(*st->nflog),
						offsetof(struct nftdp_vm_nflog_ring, buf),
						st->nflog_ring_size);
	return st->nflog ? 0 : -ENOMEM;
}

void nftdp_vm_nflog_rings_destroy(struct nftdp_vm_state *st)
{
	nftdp_vm_worker_rings_free(st->nflog, st->n_workers, sizeof(*st->nflog),
				   offsetof(struct nftdp_vm_nflog_ring, buf));
	st->nflog = NULL;
}

void nftdp_vm_nflog_bind(struct nftdp_vm_state *st, uint16_t group, bool bound)
{
	uint64_t bit = 1ull << (group & 63);

	if (bound)
		atomic_fetch_or_explicit(&st->nflog_bound[group >> 6], bit, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&st->nflog_bound[group >> 6], ~bit, memory_order_relaxed);
}

bool nftdp_vm_nflog_bound(const struct nftdp_vm_state *st, uint16_t group)
{
	return (atomic_load_explicit(&st->nflog_bound[group >> 6], memory_order_relaxed) >>
		(group & 63)) &
	       1;
}

uint64_t nftdp_vm_nflog_lost(const struct nftdp_vm_state *st)
{
	uint64_t n = 0;

	for (unsigned int w = 0; w < st->n_workers; w++)
		n += atomic_load_explicit(&st->nflog[w].lost, memory_order_relaxed);
	return n;
}

/* Room for size contiguous bytes at the ring's head: a pad record fills
 * the end when the record would wrap. NULL: full. */
static struct nftdp_vm_nflog_event *
reserve(struct nftdp_vm_state *st, struct nftdp_vm_nflog_ring *r, uint32_t size, uint32_t *head_out)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t mask = st->nflog_ring_size - 1, at = head & mask;
	uint32_t pad = st->nflog_ring_size - at < size ? st->nflog_ring_size - at : 0;

	if (st->nflog_ring_size - (head - tail) < pad + size)
		return NULL;
	if (pad) {
		/* the positions are 8-aligned: the pad has room for its size */
		memcpy(r->buf + at, &(uint32_t){pad | NFLOG_PAD}, sizeof(uint32_t));
		head += pad;
		at = 0;
	}
	*head_out = head + size;
	return (struct nftdp_vm_nflog_event *)(void *)(r->buf + at);
}

void nftdp_vm_nflog_record(const struct nftdp_vm_nflog_params *p, const struct nftdp_vm_pkt *pkt,
			   const struct nftdp_vm_ctx *ctx)
{
	struct nftdp_vm_state *st = ctx->state;
	struct nftdp_vm_nflog_ring *r;
	struct nftdp_vm_nflog_event *ev;
	uint32_t off, avail, data_len, plen, size, head, max;

	if (ctx->worker >= st->n_workers)
		return;
	r = &st->nflog[ctx->worker];
	/* skb->data: the network header, the mac header at netdev egress
	 * (the frame is whole there, as skb->len counts it) */
	off = pkt->nh_off;
	if (pkt->nfproto == NFPROTO_NETDEV && pkt->hook == NF_NETDEV_EGRESS && pkt->mac_off >= 0)
		off = (uint32_t)pkt->mac_off;
	avail = pkt->len > off ? pkt->len - off : 0;
	data_len = pkt->skb_len < avail ? pkt->skb_len : avail;
	if (data_len > p->copy_len)
		data_len = p->copy_len;
	plen = (uint32_t)strnlen(p->prefix, NFTDP_VM_LOG_PREFIXLEN - 1) + 1;
	/* at most half the ring, so that any record fits an empty one */
	max = st->nflog_ring_size / 2 - (uint32_t)sizeof(*ev) - plen;
	if (max > NFTDP_VM_NFLOG_COPY_MAX)
		max = NFTDP_VM_NFLOG_COPY_MAX;
	if (data_len > max)
		data_len = max;
	size = NFLOG_ALIGN((uint32_t)sizeof(*ev) + plen + data_len);
	ev = reserve(st, r, size, &head);
	if (!ev) {
		atomic_store_explicit(&r->lost,
				      atomic_load_explicit(&r->lost, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		return;
	}
	ev->size = size;
	ev->group = p->group;
	ev->qthreshold = p->qthreshold;
	ev->copy_len = p->copy_len;
	ev->family = pkt->nfproto;
	ev->hook = pkt->hook;
	ev->hw_protocol = pkt->protocol;
	ev->iif = pkt->iif;
	ev->oif = pkt->oif;
	ev->iiftype = pkt->iiftype;
	ev->oiftype = pkt->oiftype;
	ev->mark = pkt->mark;
	ev->tstamp_ns = pkt->tstamp_ns ? pkt->tstamp_ns : ctx->now_real_ns;
	ev->skb_len = pkt->skb_len;
	ev->data_len = data_len;
	ev->mac_set = pkt->mac_off >= 0;
	ev->mac_len = 0;
	if (pkt->mac_off >= 0 && pkt->nh_off > (uint32_t)pkt->mac_off) {
		uint32_t n = pkt->nh_off - (uint32_t)pkt->mac_off;

		ev->mac_len = (uint8_t)(n < NFTDP_VM_NFLOG_MAC_MAX ? n : NFTDP_VM_NFLOG_MAC_MAX);
		memcpy(ev->mac, pkt->data + pkt->mac_off, ev->mac_len);
	}
	ev->prefix_len = (uint8_t)plen;
	ev->pad = 0;
	memcpy(ev->data, p->prefix, plen - 1);
	ev->data[plen - 1] = '\0';
	memcpy(ev->data + plen, pkt->data + off, data_len);
	/* publish the record before the position that makes it visible */
	atomic_store_explicit(&r->head, head, memory_order_release);
}

unsigned int nftdp_vm_nflog_poll(struct nftdp_vm_state *st,
				 void (*cb)(const struct nftdp_vm_nflog_event *ev, void *arg),
				 void *arg)
{
	unsigned int n = 0;
	uint32_t mask = st->nflog_ring_size - 1;

	for (unsigned int w = 0; w < st->n_workers; w++) {
		struct nftdp_vm_nflog_ring *r = &st->nflog[w];
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

		while (tail != head) {
			const struct nftdp_vm_nflog_event *ev =
			    (const void *)(r->buf + (tail & mask));
			uint32_t size;

			memcpy(&size, ev, sizeof(size));
			if (size & NFLOG_PAD) {
				tail += size & ~NFLOG_PAD;
				continue;
			}
			cb(ev, arg);
			n++;
			tail += size;
		}
		/* the bytes are the worker's again only after cb read them */
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	return n;
}
