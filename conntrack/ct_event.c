// SPDX-License-Identifier: BSD-3-Clause
/*
 * Conntrack events for ctnetlink (conntrack -E), the kernel's
 * nf_conntrack_ecache.c: the packet path caches event bits on the entry
 * (nftdp_ct_event_cache) and nftdp_ct_confirm delivers them when a packet
 * passes; destroy events are delivered when the entry goes. Delivery is a
 * single-producer single-consumer ring per shard: the worker writes an
 * event and publishes it with a release store of head; the control thread
 * reads up to head (acquire) and frees the slots with a release store of
 * tail. A full ring drops the event and counts it (the kernel's "missed").
 * A consumer that cannot deliver (a NETLINK_BROADCAST_ERROR listener's
 * full socket) leaves the rest in the ring (nftdp_ct_events_poll_while).
 */
#include <stdlib.h>

#include "ct_priv.h"

void nftdp_ct_event_push(struct nftdp_ct_shard *s, const struct nftdp_ct_entry *e, uint32_t events)
{
	struct ct_event_ring *r = s->events;
	uint32_t head, tail;
	struct nftdp_ct_event *ev;

	events &= e->eventmask; /* ct event set */
	if (!r || !events || atomic_load_explicit(&r->off, memory_order_relaxed))
		return;
	head = atomic_load_explicit(&r->head, memory_order_relaxed);
	tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - tail > r->mask) {
		atomic_fetch_add_explicit(&r->lost, 1, memory_order_relaxed);
		return;
	}
	ev = &r->ev[head & r->mask];
	ev->events = events;
	nftdp_ct_fill_info(e, s->now_ms, &ev->info);
	/* the event is complete before the consumer can see it */
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

void nftdp_ct_events_enable(struct nftdp_ct_shard *s, bool on)
{
	if (s->events)
		atomic_store_explicit(&s->events->off, !on, memory_order_relaxed);
}

unsigned int nftdp_ct_events_poll(struct nftdp_ct_shard *s,
				  void (*cb)(const struct nftdp_ct_event *ev, void *arg), void *arg,
				  uint64_t *lost)
{
	struct ct_event_ring *r = s->events;
	uint32_t head, tail, n = 0;

	if (lost)
		*lost = r ? atomic_load_explicit(&r->lost, memory_order_relaxed) : 0;
	if (!r)
		return 0;
	tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	head = atomic_load_explicit(&r->head, memory_order_acquire);
	for (; tail != head; tail++, n++)
		cb(&r->ev[tail & r->mask], arg);
	/* the slots are read before the worker may reuse them */
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	return n;
}

unsigned int nftdp_ct_events_poll_while(struct nftdp_ct_shard *s,
					bool (*cb)(const struct nftdp_ct_event *ev, void *arg),
					void *arg)
{
	struct ct_event_ring *r = s->events;
	uint32_t head, tail, n = 0;

	if (!r)
		return 0;
	tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	head = atomic_load_explicit(&r->head, memory_order_acquire);
	/* an event cb refuses stays first in the ring for the next poll */
	for (; tail != head && cb(&r->ev[tail & r->mask], arg); tail++, n++)
		;
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	return n;
}
