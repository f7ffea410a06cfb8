/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp conntrack: per-worker shards of the connection-tracking table.
 *
 * Each worker owns one shard (struct nftdp_ct_shard): a preallocated array
 * of entries, a free list, and an open hash table in which both directions
 * of every connection are indexed. The shard plays the part of the kernel's
 * nf_conntrack for the packets of its worker: it builds the tuple of a packet
 * (IPv4/IPv6; TCP, UDP, ICMP/ICMPv6, SCTP, any other protocol by number),
 * finds or creates the entry (in the packet's zone: pkt->ct_zone, set by
 * `ct zone set` before conntrack), runs the protocol's state machine (TCP
 * with the kernel's transition table and window tracking, SCTP with its
 * chunk table and verification tags; `ct timeout` policies through
 * nftdp_ct_vm_ops.timeout) and tells the VM,
 * through pkt->ct and nftdp_ct_vm_ops, what `ct state`, `ct mark`, ... are.
 * It also does NAT as nf_nat does (bindings, rewrites, ICMP errors) and
 * keeps the events ctnetlink reports. docs/conntrack.md has the long form.
 *
 * Usage:
 *   control thread, at start:
 *     nftdp_ct_shard_create()       one per worker (--conntrack-max split)
 *   worker (packet path), per burst:
 *     nftdp_ct_pkt_rss()            steering: which worker owns the packet
 *     nftdp_ct_in_burst() / nftdp_ct_in()     prerouting, priority -200
 *     ... the hooks' base chains, the VM reads pkt->ct ...
 *     nftdp_ct_nat_need_chains() / nftdp_ct_nat_packet()
 *                                    prerouting -100 and postrouting 100
 *     nftdp_ct_confirm_burst() / nftdp_ct_confirm()  end of postrouting,
 *                                    for every packet nftdp_ct_in() saw,
 *                                    with its final verdict (confirm may
 *                                    answer NF_DROP: a zone clash)
 *     nftdp_ct_gc()                 between bursts: bounded reaping
 *   control plane (conntrack -L/-D/-F/-E, telemetry):
 *     nftdp_ct_walk(), nftdp_ct_get(), nftdp_ct_delete(), nftdp_ct_flush(),
 *     nftdp_ct_events_poll(), nftdp_ct_stats()
 *   at exit:
 *     nftdp_ct_shard_destroy()
 *
 * Threading: a shard has exactly one writer, its worker; nothing on the
 * packet path takes a lock, makes a syscall or allocates. The control-plane
 * calls (walk, get, delete, flush) modify or read the shard without
 * synchronisation, so they must run on the owning worker between bursts
 * (the dataplane forwards such requests to it) or while the worker is
 * parked. nftdp_ct_stats() may be called from any thread at any time (its
 * counters are single-writer 64-bit words; a read may be a burst behind);
 * nftdp_ct_events_poll() from one consumer thread (a single-producer,
 * single-consumer ring).
 *
 * Steering: both directions of a flow must reach the shard that owns it;
 * nftdp_ct_tuple_rss() gives the symmetric Toeplitz hash a NIC computes with
 * the 0x6d5a key, so the dataplane can steer in software where a port has no
 * RSS.
 *
 * No DPDK EAL is needed: the library works on plain buffers through the VM's
 * packet view (vm/include/nftdp_vm.h) and uses only DPDK's inline header helpers.
 */
#ifndef NFTDP_CONNTRACK_H
#define NFTDP_CONNTRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "nftdp_vm.h"

#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_sctp.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>

/** The kernel's conntrack timeout classes that nftdp has, in seconds. */
struct nftdp_ct_timeouts {
	uint32_t tcp[TCP_CONNTRACK_TIMEOUT_MAX]; /**< indexed by TCP_CONNTRACK_* (RETRANS, UNACK) */
	uint32_t udp_unreplied;			 /**< 30 */
	uint32_t udp_replied;			 /**< 120 (stream) */
	uint32_t icmp;				 /**< 30 */
	uint32_t icmpv6;			 /**< 30 */
	uint32_t generic;	/**< 600 (UDP-Lite, DCCP too, see docs/conntrack.md) */
	uint32_t gre_unreplied; /**< 30 (nf_conntrack_proto_gre.c, GRE v0: no keys) */
	uint32_t gre_replied;	/**< 180, and ASSURED */
	/** by SCTP_CONNTRACK_*: CLOSED 10, COOKIE_WAIT 3, COOKIE_ECHOED 3,
	 * ESTABLISHED 210, SHUTDOWN_* 3, HEARTBEAT_SENT 30 */
	uint32_t sctp[SCTP_CONNTRACK_MAX];
};

/** Fill t with the kernel's defaults (nf_conntrack_proto_*.c). */
void nftdp_ct_timeouts_default(struct nftdp_ct_timeouts *t);

/** Shard configuration (the kernel's sysctls, per shard). */
struct nftdp_ct_config {
	uint32_t max_entries;	 /**< this shard's share of --conntrack-max; > 0 */
	uint16_t shard_id;	 /**< worker id: high bits of entry ids */
	uint32_t hash_seed;	 /**< table hash seed (not the RSS key) */
	bool tcp_be_liberal;	 /**< nf_conntrack_tcp_be_liberal: only out-of-window RST invalid */
	bool tcp_no_loose;	 /**< !nf_conntrack_tcp_loose: never pick up mid-stream */
	uint8_t tcp_max_retrans; /**< nf_conntrack_tcp_max_retrans, 0 = the default 3 */
	bool no_checksum;	 /**< !nf_conntrack_checksum: skip L4 checksum checks */
	bool acct;		 /**< nf_conntrack_acct: counters listed by ctnetlink */
	const struct nftdp_ct_timeouts *timeouts; /**< NULL: the kernel's defaults */
	/** workers sharing the traffic (> 1: source NAT picks reply tuples
	 * whose nftdp_ct_tuple_owner() is shard_id, so replies come back here) */
	uint16_t n_shards;
	/** masquerade and redirect: the address of port ifindex for nfproto
	 * (--ifaddr; with --host-ports its host interface's primary one);
	 * false when it has none. Packet-path, must not block. Optional. */
	bool (*ifaddr)(void *arg, uint32_t ifindex, uint8_t nfproto, void *addr16);
	void *ifaddr_arg;
	/** events for `conntrack -E` (ctnetlink): ring entries, a power of two;
	 * 0: no events */
	uint32_t event_ring_size;
	/** expectations (conntrack helpers): the table every shard of the
	 * dataplane shares (nftdp_ct_expect_table_create with n_shards parts);
	 * NULL: the shard makes a private one of one part */
	struct nftdp_ct_expect_table *expect;
	/** NAT helpers' mangling (nf_nat_ftp): make pkt's IP datagram len
	 * bytes long from pkt->data (skb_put / __skb_trim), the bytes kept;
	 * sets pkt->len and pkt->skb_len. false: no tailroom, nothing
	 * changed (the packet is dropped, as when the kernel cannot enlarge
	 * the skb). Packet-path, must not block. NULL: a packet can only
	 * shrink. */
	bool (*pkt_resize)(void *arg, struct nftdp_vm_pkt *pkt, uint32_t len);
	void *pkt_resize_arg;
	/** nf_conntrack_h323's callforward_do_filter: whether the output
	 * routes to a and to b (addresses of family nfproto, IPv4 in the
	 * first 4 bytes; destination only, as nf_ip_route / nf_ip6_route
	 * look them up) both exist and leave by the same device to the same
	 * next hop (rt_nexthop / rt6_nexthop: the gateway, else the
	 * destination itself). Packet-path, must not block. NULL, or no
	 * route table: false (the forwarded call is tracked). */
	bool (*same_route)(void *arg, uint8_t nfproto, const void *a16, const void *b16);
	void *same_route_arg;
};

struct nftdp_ct_shard;
struct nftdp_ct_expect_table;
struct nftdp_ct_entry;

/** Address as the kernel's union nf_inet_addr: IPv4 in the first word. */
union nftdp_ct_addr {
	uint32_t ip;
	uint32_t ip6[4];
	uint8_t u8[16];
};

/**
 * A connection tuple, the kernel's struct nf_conntrack_tuple plus the zone.
 * Ports in network byte order; ICMP/ICMPv6: sport is the echo id, dport's
 * two bytes are type and code (the kernel's dst.u.icmp). Unused bytes are
 * zero, so tuples compare with memcmp.
 */
struct nftdp_ct_tuple {
	union nftdp_ct_addr src, dst;
	uint16_t sport, dport;
	uint8_t l3proto; /**< NFPROTO_IPV4 / NFPROTO_IPV6 */
	uint8_t l4proto; /**< IPPROTO_* */
	uint16_t zone;
};
static_assert(sizeof(struct nftdp_ct_tuple) == 40, "tuple is ten words");

/** TCP protocol info as ctnetlink dumps it (CTA_PROTOINFO_TCP). */
struct nftdp_ct_tcp_info {
	uint8_t state; /**< TCP_CONNTRACK_* */
	uint8_t wscale[2];
	uint8_t flags[2]; /**< IP_CT_TCP_FLAG_* per direction */
};

/** Everything ctnetlink dumps about one entry (conntrack -L). */
/** struct nf_ct_seqadj: one direction's TCP sequence correction, from
 * correction_pos on offset_after, before it offset_before (host order) */
struct nftdp_ct_seqadj {
	uint32_t correction_pos;
	int32_t offset_before, offset_after;
};

struct nftdp_ct_info {
	struct nftdp_ct_tuple tuple[2]; /**< IP_CT_DIR_ORIGINAL, IP_CT_DIR_REPLY */
	uint32_t status;		/**< IPS_* */
	uint32_t timeout_s;		/**< seconds left (CTA_TIMEOUT) */
	uint64_t expires_ms;		/**< absolute, the now_ms clock */
	uint32_t mark;
	uint32_t secmark;
	uint32_t id;  /**< CTA_ID */
	uint32_t use; /**< CTA_USE: 1 + packets in flight */
	uint16_t zone;
	uint64_t packets[2], bytes[2]; /**< per direction */
	uint8_t labels[16];
	const char *helper;	      /**< CTA_HELP_NAME: the helper's name, NULL: none */
	struct nftdp_ct_tcp_info tcp; /**< valid when l4proto is TCP */
	struct {
		uint8_t state;	  /**< SCTP_CONNTRACK_* */
		uint32_t vtag[2]; /**< per direction, network order (CTA_PROTOINFO_SCTP_VTAG_*) */
	} sctp;			  /**< valid when l4proto is SCTP */
	bool seqadj;		  /**< IPS_SEQ_ADJUST with the extension: seq is dumped */
	struct nftdp_ct_seqadj seq[2]; /**< CTA_NAT_SEQ_ADJ_ORIG, _REPLY */
	bool synproxy;		       /**< the synproxy extension: CTA_SYNPROXY is dumped */
	uint32_t synproxy_isn, synproxy_its, synproxy_tsoff; /**< its fields */
};

/** Shard counters, the kernel's per-cpu nf_conntrack stats plus ours. */
struct nftdp_ct_stats {
	uint64_t found;		    /**< lookups that found an entry */
	uint64_t new_;		    /**< entries created (unconfirmed) */
	uint64_t insert;	    /**< entries confirmed */
	uint64_t invalid;	    /**< packets left invalid */
	uint64_t ignore;	    /**< packets on untracked/notrack */
	uint64_t drop;		    /**< new connections dropped: table full */
	uint64_t early_drop;	    /**< unassured entries evicted for new ones */
	uint64_t expired;	    /**< entries reaped on timeout */
	uint64_t deleted;	    /**< entries removed otherwise (RST, reopen, -D, -F) */
	uint64_t unconfirmed_freed; /**< first packets dropped before confirm */
	uint64_t related;	    /**< ICMP errors matched to an entry */
	uint64_t table_full_events; /**< times "table full, dropping packet" */
	uint64_t insert_failed; /**< accepted new packets dropped at confirm: reply tuple taken */
	uint64_t expect_new;	/**< connections that matched an expectation (related) */
	uint64_t expect_create; /**< expectations this shard's helpers created */
	uint64_t expect_delete; /**< of those, removed unused (timeout, master gone, evicted) */
	uint64_t helper_drop;	/**< packets a helper dropped (ftp: partial command) */
	uint32_t count;		/**< entries in use now */
	uint32_t max;		/**< max_entries */
};

/**
 * Create a shard with max_entries preallocated entries and a hash table of
 * twice that many nodes. 0, -EINVAL (max_entries 0 or too large), -ENOMEM.
 * Control-path; the worker owns the shard afterwards.
 */
int nftdp_ct_shard_create(const struct nftdp_ct_config *cfg, struct nftdp_ct_shard **out);

/** Free a shard; its worker must be stopped. Control-path. */
void nftdp_ct_shard_destroy(struct nftdp_ct_shard *s);

/**
 * Conntrack's prerouting step (the kernel's nf_conntrack_in at priority
 * NF_IP_PRI_CONNTRACK) for one packet whose pkt->nfproto, l4proto, th_off,
 * fragoff and flags were set by nftdp_vm_pkt_parse_ip(); pkt->len must end
 * where the IP datagram ends.
 *
 * Afterwards exactly one of: pkt->ct is set (with pkt->ct_ops =
 * &nftdp_ct_vm_ops) to the entry and this packet's ctinfo; pkt->ct_untracked
 * (notrack ran before, or an ICMPv6 neighbour/MLD message as the kernel
 * leaves untracked); or neither (invalid). Packets that already carry
 * pkt->ct or pkt->ct_untracked are left alone.
 *
 * @return NF_ACCEPT, or NF_DROP when a new connection finds the table full
 *   and nothing can be evicted (stats.drop). Packet-path; shard's worker.
 */
unsigned int nftdp_ct_in(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms);

/**
 * What nftdp_ct_probe() worked out for a packet (its tuple, the tuple's
 * hash, its transport's length and the node it found), which nftdp_ct_in_burst() takes instead of
 * working it out again. It holds while the packet is the bytes it was
 * probed as (data, len); the node, while no entry was linked since (a
 * chain without the tuple has it no sooner than a node is linked).
 */
#define NFTDP_CT_LOOKUP_MISS (UINT32_MAX - 1)
struct nftdp_ct_lookup {
	const uint8_t *data; /**< pkt->data when probed; NULL: nothing held */
	uint32_t len;	     /**< pkt->len when probed */
	uint32_t hash;
	uint32_t node;	/**< the live entry found (index * 2 + dir),
			 * NFTDP_CT_LOOKUP_MISS (no entry of the chain has the
			 * tuple), or ~0 (nothing known) */
	uint32_t l4len; /**< the transport's length by the IP header (nftdp_ct_l4len) */
	uint64_t links; /**< the shard's link count when probed */
	struct nftdp_ct_tuple t;
};

/**
 * Which confirmed connection nftdp_ct_in() would find for pkt, without
 * changing anything (no entry created, no expired entry reaped, no counter
 * moved): what a caller needs to know before it lets packets share a burst.
 * pkt as for nftdp_ct_in(), before any `ct zone set`. lk (or NULL) gets
 * the tuple and hash for nftdp_ct_in_burst(), or data NULL where there are
 * none. lk must come in reset (data NULL) or as nftdp_ct_prefetch_burst()
 * or an earlier probe left it: one whose data and len are pkt's is taken
 * as pkt's tuple and hash (while pkt is the same bytes in the same zone).
 * @return the live confirmed entry (either direction), or NULL where
 *   nftdp_ct_in() would create one, leave the packet untracked or invalid,
 *   or track an ICMP error or a fragment. Packet-path; shard's worker.
 */
const void *nftdp_ct_probe(const struct nftdp_ct_shard *s, const struct nftdp_vm_pkt *pkt,
			   uint64_t now_ms, struct nftdp_ct_lookup *lk);

/**
 * The first steps of nftdp_ct_probe() over a burst, for the misses of a
 * large table to overlap: each pkts[i]'s tuple and hash into *lk[i] (as
 * the probe leaves them; data NULL where the probe would find nothing to
 * look up, or for GRE, whose key the probe works out again), its bucket
 * prefetched; then the first entry of each bucket and its carried result
 * prefetched. pkts[i] or lk[i] NULL: skipped. The probe and
 * nftdp_ct_in_burst() of the same bytes take the tuple and hash from
 * *lk[i]. Packet-path; shard's worker.
 */
void nftdp_ct_prefetch_burst(const struct nftdp_ct_shard *s, struct nftdp_vm_pkt *const *pkts,
			     unsigned int n, struct nftdp_ct_lookup *const *lk);

/**
 * nftdp_ct_in() over n <= NFTDP_VM_BURST_MAX packets; verdicts[i] for
 * pkts[i]. lk: NULL, or per packet what nftdp_ct_probe() left for it (or
 * NULL); one that no longer matches the packet is not used.
 */
void nftdp_ct_in_burst(struct nftdp_ct_shard *s, struct nftdp_vm_pkt **pkts, unsigned int n,
		       unsigned int *verdicts, uint64_t now_ms,
		       const struct nftdp_ct_lookup *const *lk);

/**
 * nftdp_ct_in_burst() of the one packet pkt with its lookup lk (or NULL),
 * without the burst's loops: the established pass's per-packet call.
 */
unsigned int nftdp_ct_in_hinted(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms,
				const struct nftdp_ct_lookup *lk);

/**
 * nftdp_ct_in_hinted() of a packet whose nftdp_ct_probe() with lk just
 * returned an entry, pkt unchanged since: the checks before the lookup
 * are the probe's, so it goes straight to the entry lk holds (where lk no
 * longer holds one for pkt, it is nftdp_ct_in_hinted()).
 */
unsigned int nftdp_ct_in_probed(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms,
				const struct nftdp_ct_lookup *lk);

/**
 * nftdp_ct_in_probed() right after nftdp_ct_probe() of pkt with lk (not
 * NULL) returned an entry, with nothing run on the shard or pkt between
 * the two: its checks that lk still holds that live entry for pkt are
 * left out (the established pass's per-packet call).
 */
unsigned int nftdp_ct_in_found(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint64_t now_ms,
			       const struct nftdp_ct_lookup *lk);

/**
 * Conntrack's confirm step (__nf_conntrack_confirm), last in postrouting.
 * Call it once for every packet nftdp_ct_in() gave a pkt->ct, with the
 * packet's final verdict wherever it ended (NF_DROP for a packet dropped at
 * any hook): a new entry becomes confirmed only when a packet that created
 * or used it is accepted; one whose packets were all dropped is freed, so a
 * dropped first packet leaves no entry. Clears pkt->ct.
 * @return the packet's verdict: verdict, or NF_DROP when the new entry's
 *   reply tuple belongs to another connection (possible with zones; the
 *   kernel's confirm drops such a packet, stats.insert_failed). Packet-path.
 */
unsigned int nftdp_ct_confirm(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
			      unsigned int verdict);

/**
 * Whether what nftdp_ct_in() gave pkt reaches no other connection: no
 * entry (invalid), or a confirmed, live entry without a helper. Then its
 * confirm only delivers the entry's cached events, and the packet may be
 * decided before earlier packets of other connections (the pipeline's
 * established pass). Packet-path.
 */
bool nftdp_ct_pkt_plain(const struct nftdp_vm_pkt *pkt);

/**
 * The carried result of the connection and direction of ct (a packet's
 * pkt->ct): the flow cache's (struct nftdp_vm_flow_carry), kept beside
 * the entry and zeroed for each new connection, in s, the shard that
 * holds the entry. The owning worker's. Its owner word is conntrack's
 * (the original direction's byte counter): whoever writes a result
 * made elsewhere into it keeps that word.
 */
struct nftdp_vm_flow_carry *nftdp_ct_carry(const struct nftdp_ct_shard *s, const void *ct);

/**
 * nf_ct_attach: a packet nftdp makes in answer to skb (reject's RST or ICMP
 * error, time exceeded, packet too big) joins skb's connection as related,
 * in the other direction, so `ct state related` sees it and NAT translates
 * it back; it takes a reference that nftdp_ct_confirm() on nskb (with its
 * verdict) gives back. A reply never confirms a new connection. Nothing
 * when skb has no connection. Packet-path.
 */
void nftdp_ct_attach(struct nftdp_vm_pkt *nskb, const struct nftdp_vm_pkt *skb);

/*
 * synproxy's conntrack side (ct_synproxy.c, nf_synproxy_core.c).
 * nftdp_ct_synproxy_new: pkt, the SYN synproxy sends to the server, just
 * made a new entry (nftdp_ct_in): it gets the synproxy and seqadj
 * extensions, as from synproxy's conntrack template. False when pkt has no
 * new entry. nftdp_ct_synproxy_join: nskb, the window update synproxy sends
 * to the client, joins skb's connection as IP_CT_ESTABLISHED_REPLY.
 * nftdp_ct_synproxy_hook: ipv4/ipv6_synproxy_hook on pkt (postrouting or
 * input, before confirm): _ACCEPT (timestamps adjusted), _DROP, _SYNACK
 * (pkt is the server's SYN-ACK and is stolen: opts are what the ACK to the
 * server carries, maxwin its window; send it, then call
 * nftdp_ct_synproxy_seqadj(pkt), which returns the reply direction's
 * offset, then send the window update to the client with tsval and tsecr
 * swapped back), _RETRANS (the client's ACK again
 * while the server has not answered: check its cookie with seq + 1, and
 * send the SYN again). nftdp_ct_synproxy_info: isn, its, tsoff of an entry
 * with the extension (CTA_SYNPROXY). Packet-path but _info.
 */
enum nftdp_ct_synproxy_act {
	NFTDP_CT_SYNPROXY_ACCEPT,
	NFTDP_CT_SYNPROXY_DROP,
	NFTDP_CT_SYNPROXY_SYNACK,
	NFTDP_CT_SYNPROXY_RETRANS,
};
bool nftdp_ct_synproxy_new(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt);
void nftdp_ct_synproxy_join(struct nftdp_vm_pkt *nskb, const struct nftdp_vm_pkt *skb);
enum nftdp_ct_synproxy_act nftdp_ct_synproxy_hook(struct nftdp_ct_shard *s,
						  struct nftdp_vm_pkt *pkt,
						  struct nftdp_vm_synproxy_opts *opts,
						  uint16_t *maxwin,
						  struct nftdp_vm_synproxy_stats *st);
int32_t nftdp_ct_synproxy_seqadj(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt);
struct nftdp_ct_entry;
bool nftdp_ct_synproxy_info(const struct nftdp_ct_entry *e, uint32_t out[3]);

/** nftdp_ct_confirm() over a burst. Packet-path. */
void nftdp_ct_confirm_burst(struct nftdp_ct_shard *s, struct nftdp_vm_pkt **pkts, unsigned int n,
			    const unsigned int *verdicts);

/**
 * Reap expired entries: look at up to budget entry slots from where the last
 * call stopped, freeing confirmed entries whose timeout passed (the kernel's
 * gc_worker, made incremental). A full sweep takes max_entries / budget
 * calls; lookups also free expired entries they meet.
 * @return entries freed. Packet-path (between bursts); shard's worker.
 */
unsigned int nftdp_ct_gc(struct nftdp_ct_shard *s, uint64_t now_ms, unsigned int budget);

/**
 * Call cb for every confirmed entry (unconfirmed ones are not listed, as in
 * the kernel's dump); stop early when cb returns non-zero and return that.
 * Control-path on the owning worker (see Threading).
 */
int nftdp_ct_walk(struct nftdp_ct_shard *s, uint64_t now_ms,
		  int (*cb)(const struct nftdp_ct_info *info, void *arg), void *arg);

/** Look up a confirmed entry by either of its tuples. 0 or -ENOENT. Control-path. */
int nftdp_ct_get(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint64_t now_ms,
		 struct nftdp_ct_info *out);

/**
 * Delete the confirmed entry with tuple t (either direction); id, when
 * non-zero, must match (ctnetlink's CTA_ID check). 0, -ENOENT. Control-path.
 */
int nftdp_ct_delete(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id);

/** Delete every confirmed entry; returns how many. Control-path (conntrack -F). */
unsigned int nftdp_ct_flush(struct nftdp_ct_shard *s);

/** One conntrack event, as ctnetlink reports it (conntrack -E). */
struct nftdp_ct_event {
	uint32_t events;	   /**< 1 << IPCT_NEW, IPCT_DESTROY, IPCT_REPLY, IPCT_ASSURED,
					IPCT_PROTOINFO, IPCT_MARK, IPCT_SECMARK, IPCT_LABEL */
	struct nftdp_ct_info info; /**< the entry when the event was delivered */
};

/**
 * Hand the shard's pending events to cb, oldest first, the way the
 * kernel's ecache delivers them: IPCT_NEW when a connection is confirmed,
 * the changes a packet made (reply seen, assured, TCP state, mark) when it is
 * confirmed, IPCT_DESTROY when an entry goes. Events an entry's `ct event
 * set` mask excludes are not reported. *lost (optional) gets the events
 * dropped because the ring was full.
 * @return events handed out. One consumer thread (the control thread); safe
 *   concurrently with the shard's worker (single-producer ring).
 */
unsigned int nftdp_ct_events_poll(struct nftdp_ct_shard *s,
				  void (*cb)(const struct nftdp_ct_event *ev, void *arg), void *arg,
				  uint64_t *lost);

/**
 * nftdp_ct_events_poll, but stop at the first event cb returns false for:
 * that one and those after it stay in the ring, for the next poll (the
 * kernel keeps an event a listener with NETLINK_BROADCAST_ERROR could not
 * take and delivers it again; here the worker keeps producing behind it
 * until the ring is full, then counts the rest as lost).
 * @return events cb accepted. Same thread rules as nftdp_ct_events_poll.
 */
unsigned int nftdp_ct_events_poll_while(struct nftdp_ct_shard *s,
					bool (*cb)(const struct nftdp_ct_event *ev, void *arg),
					void *arg);

/**
 * Turn event delivery on or off (on after create): with nobody listening
 * (no `conntrack -E`), the worker builds no events, as the kernel's
 * nf_conntrack_events=2 ("only when a listener exists"). Any thread; the
 * worker sees the change within a burst or two.
 */
void nftdp_ct_events_enable(struct nftdp_ct_shard *s, bool on);

/** Copy the shard's counters. Any thread. */
void nftdp_ct_stats(const struct nftdp_ct_shard *s, struct nftdp_ct_stats *out);

/**
 * Build the original-direction tuple of a packet as nf_ct_get_tuple does
 * (ports, ICMP id/type/code; zone 0). false for packets conntrack cannot
 * track (truncated headers, non-first fragments). Any thread.
 */
bool nftdp_ct_pkt_tuple(const struct nftdp_vm_pkt *pkt, struct nftdp_ct_tuple *out);

/** The reply tuple of t (nf_ct_invert_tuple); false when there is none (ICMP). Any thread. */
bool nftdp_ct_tuple_invert(const struct nftdp_ct_tuple *t, struct nftdp_ct_tuple *out);

/**
 * Symmetric RSS hash of a tuple: rte_softrss() (the software Toeplitz of
 * rte_thash.h) with the 40-byte key 0x6d5a repeated over src, dst and the
 * port word, as a NIC computes it for L3+L4 RSS; both directions of a flow
 * give the same value. Protocols without ports hash addresses only. Any thread.
 */
uint32_t nftdp_ct_tuple_rss(const struct nftdp_ct_tuple *t);

/**
 * The RSS hash that steers pkt to the shard owning its connection: that of
 * its tuple, or for an ICMP/ICMPv6 error that of the quoted packet (a NIC
 * hashes the error's own addresses, which may lead elsewhere, so software
 * steering should re-steer errors with this). false when pkt cannot be
 * tracked (no L4 header, non-first fragment): any shard will call it
 * invalid. Any thread.
 */
bool nftdp_ct_pkt_rss(const struct nftdp_vm_pkt *pkt, uint32_t *rss);

/** The shard (0 .. n_shards-1) that owns a tuple's flow: rss % n_shards. Any thread. */
static inline unsigned int nftdp_ct_tuple_owner(const struct nftdp_ct_tuple *t,
						unsigned int n_shards)
{
	return n_shards ? nftdp_ct_tuple_rss(t) % n_shards : 0;
}

/* ------------------------------------------------------------------ */
/* NAT (conntrack/nat.c), the kernel's nf_nat_core.c                   */
/*                                                                    */
/* At prerouting (destination NAT, after the chains of priority        */
/* -100 and below) and at postrouting (source NAT), per packet:        */
/*   if (nftdp_ct_nat_need_chains(pkt, hook)) run the nat-type base    */
/*     chains of the hook (their nat/masquerade rules call             */
/*     nftdp_ct_nat_setup()/_masquerade() through the VM);             */
/*   verdict = nftdp_ct_nat_packet(shard, pkt, hook);                  */
/* nat-type chains must not run for the other packets of a connection. */

/** A NAT range, as the kernel's struct nf_nat_range2 (network byte order). */
struct nftdp_ct_nat_range {
	uint32_t flags; /**< NF_NAT_RANGE_MAP_IPS, _PROTO_SPECIFIED, _PROTO_RANDOM, ... */
	union nftdp_ct_addr min_addr, max_addr;
	uint16_t min_proto, max_proto; /**< ports, or ICMP ids */
};

enum nftdp_ct_manip { NFTDP_CT_MANIP_SRC, NFTDP_CT_MANIP_DST };

/** HOOK2MANIP: postrouting (and input) change the source, the others the destination. */
static inline enum nftdp_ct_manip nftdp_ct_hook2manip(uint8_t hook)
{
	return hook == NF_INET_POST_ROUTING || hook == NF_INET_LOCAL_IN ? NFTDP_CT_MANIP_SRC
									: NFTDP_CT_MANIP_DST;
}

/**
 * Whether the nat-type chains of hook must run for pkt (nf_nat_inet_fn): its
 * connection is new (or the packet related) and has no binding of the hook's
 * manip type yet. Packet-path.
 */
bool nftdp_ct_nat_need_chains(const struct nftdp_vm_pkt *pkt, uint8_t hook);

/**
 * nf_nat_setup_info: bind the new connection of pkt to range for manip: pick
 * a unique tuple (keeping the original if it is free and in range, else the
 * addresses by the kernel's find_best_ips_proto and a free port, random
 * when asked or for source NAT), change the reply tuple, set IPS_*_NAT and
 * IPS_*_NAT_DONE. Confirmed entries are left alone.
 * @return NF_ACCEPT, or NF_DROP without a ct. Packet-path.
 */
unsigned int nftdp_ct_nat_setup(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				const struct nftdp_ct_nat_range *range, enum nftdp_ct_manip manip);

/**
 * nf_nat_masquerade_ipv4/6: source NAT to the address of pkt->oif (cfg.ifaddr)
 * with range's port part. NF_DROP when the port has no address. Packet-path.
 */
unsigned int nftdp_ct_nat_masquerade(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				     const struct nftdp_ct_nat_range *range);

/**
 * nf_nat_redirect_ipv4/6: destination NAT to the address of pkt->iif
 * (cfg.ifaddr) with range's port part. NF_DROP when the port has no
 * address. Packet-path.
 */
unsigned int nftdp_ct_nat_redirect(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt,
				   const struct nftdp_ct_nat_range *range);

/**
 * After the hook's chains: give a new connection without a binding of this
 * hook's type the null binding, then rewrite the packet as its connection's
 * NAT says (nf_nat_packet; the inner packet of an ICMP error as
 * nf_nat_icmp_reply_translation), with IP, L4 pseudo-header, ICMP checksums.
 * @return NF_ACCEPT, or NF_DROP (no unique tuple; an ICMP redirect on a NATed
 *   connection). Packet-path.
 */
unsigned int nftdp_ct_nat_packet(struct nftdp_ct_shard *s, struct nftdp_vm_pkt *pkt, uint8_t hook);

/**
 * The pipeline's established pass: whether NAT at prerouting and
 * postrouting does nothing to pkt (nf_conntrack_in ran; its entry
 * confirmed) but apply its connection's bindings, as nf_nat_inet_fn ->
 * nf_nat_packet: no nat-type chain runs, no null binding is made, it is no
 * ICMP error (inner headers) nor a related packet, no sequence adjustment,
 * a protocol whose rewrite cannot fail. *manips: then the manips
 * (1 << NFTDP_CT_MANIP_*) whose rewrite changes it. Packet-path.
 */
bool nftdp_ct_nat_bound(const struct nftdp_vm_pkt *pkt, uint8_t *manips);

/**
 * nf_nat_manip_pkt of pkt (one nftdp_ct_nat_bound said is bound) for manip:
 * addresses, ports or query id, IP and L4 checksums, as nftdp_ct_nat_packet
 * rewrites it; marked in pkt->nat_done, which nftdp_ct_nat_packet then
 * leaves alone. @return false where the manip fails (drop). Packet-path.
 */
bool nftdp_ct_nat_apply(struct nftdp_vm_pkt *pkt, enum nftdp_ct_manip manip);

/* ------------------------------------------------------------------ */
/* Entries made and changed by ctnetlink (conntrack -I/-U, conntrackd; */
/* conntrack/ct_inject.c): IPCTNL_MSG_CT_NEW as                       */
/* ctnetlink_new_conntrack, parsed by control/ctnetlink.c.            */
/* ------------------------------------------------------------------ */

/** Which parts of struct nftdp_ct_change a request gave (CTA_*). */
enum {
	NFTDP_CT_CHG_ORIG = 1u << 0,	    /**< CTA_TUPLE_ORIG */
	NFTDP_CT_CHG_REPLY = 1u << 1,	    /**< CTA_TUPLE_REPLY */
	NFTDP_CT_CHG_STATUS = 1u << 2,	    /**< CTA_STATUS */
	NFTDP_CT_CHG_TIMEOUT = 1u << 3,	    /**< CTA_TIMEOUT */
	NFTDP_CT_CHG_MARK = 1u << 4,	    /**< CTA_MARK (with mark_mask) */
	NFTDP_CT_CHG_LABELS = 1u << 5,	    /**< CTA_LABELS */
	NFTDP_CT_CHG_PROTOINFO = 1u << 6,   /**< CTA_PROTOINFO */
	NFTDP_CT_CHG_HELPER = 1u << 7,	    /**< CTA_HELP */
	NFTDP_CT_CHG_NAT_SRC = 1u << 8,	    /**< CTA_NAT_SRC */
	NFTDP_CT_CHG_NAT_DST = 1u << 9,	    /**< CTA_NAT_DST */
	NFTDP_CT_CHG_MASTER = 1u << 10,	    /**< CTA_TUPLE_MASTER */
	NFTDP_CT_CHG_SEQADJ = 1u << 11,	    /**< CTA_NAT_SEQ_ADJ_ORIG and/or _REPLY (seqadj_dirs) */
	NFTDP_CT_CHG_CREATE = 1u << 12,	    /**< NLM_F_CREATE */
	NFTDP_CT_CHG_EXCL = 1u << 13,	    /**< NLM_F_EXCL */
	NFTDP_CT_CHG_TCP_STATE = 1u << 14,  /**< CTA_PROTOINFO_TCP_STATE */
	NFTDP_CT_CHG_TCP_WSCALE = 1u << 15, /**< both CTA_PROTOINFO_TCP_WSCALE_* */
	NFTDP_CT_CHG_SCTP = 1u << 16,	    /**< CTA_PROTOINFO_SCTP (state and both vtags) */
};

/** IPCTNL_MSG_CT_NEW, parsed and validated (the attributes' own errors
 * are the parser's); what is left for the table is the kernel's lookup,
 * create and change. */
struct nftdp_ct_change {
	uint32_t has; /**< NFTDP_CT_CHG_* */
	/** the tuples, with .zone set in the directions the zone keys */
	struct nftdp_ct_tuple tuple[2];
	struct nftdp_ct_tuple master; /**< NFTDP_CT_CHG_MASTER */
	uint8_t zone_dir;	      /**< NFTDP_VM_CT_ZONE_DIR_*: the directions the zone keys */
	uint32_t status;	      /**< host order */
	uint32_t timeout_s;
	uint32_t mark, mark_mask; /**< mark_mask: CTA_MARK_MASK, 0 without one */
	int labels_err;		  /**< ctnetlink_attach_labels' -EINVAL, else 0 */
	uint8_t labels_words;	  /**< CTA_LABELS length / 4 (at most 4) */
	bool labels_masked;
	uint8_t labels[16], labels_mask[16];
	uint8_t tcp_state;
	uint8_t tcp_wscale[2];
	uint8_t tcp_flags[2], tcp_flags_mask[2]; /**< struct nf_ct_tcp_flags; mask 0: none given */
	uint8_t sctp_state;
	uint32_t sctp_vtag[2];		  /**< network order */
	char helper[16];		  /**< CTA_HELP_NAME; "" removes the helper (update) */
	struct nftdp_ct_nat_range nat[2]; /**< [NFTDP_CT_MANIP_SRC], [NFTDP_CT_MANIP_DST] */
	uint8_t seqadj_dirs;		  /**< bit d: CTA_NAT_SEQ_ADJ_ORIG (0), _REPLY (1) given */
	struct nftdp_ct_seqadj seqadj[2]; /**< their values (ctnetlink_change_seq_adj) */
	/** per direction, bit i: part CTA_SEQADJ_CORRECTION_POS + i was given
	 * (an update with one missing writes those before it, then -EINVAL) */
	uint8_t seqadj_parts[2];
};

/**
 * ctnetlink_new_conntrack without NLM_F_CREATE's second half: the
 * confirmed entry with c's lookup tuple (CTA_TUPLE_ORIG, else
 * CTA_TUPLE_REPLY) is changed as ctnetlink_change_conntrack changes it, and
 * an UPDATE event is queued. 0; -ENOENT (none here); -EEXIST (NLM_F_EXCL);
 * -EOPNOTSUPP (NAT or master on an existing entry, an unknown helper);
 * -EBUSY (a status bit that cannot change, another helper); -EPERM
 * (IPS_FIXED_TIMEOUT and a timeout); -EINVAL. A failing change leaves
 * what it changed before failing, as the kernel does. Control-path on
 * the owning worker. out (may be NULL): the entry afterwards.
 */
int nftdp_ct_update(struct nftdp_ct_shard *s, const struct nftdp_ct_change *c, uint64_t now_ms,
		    struct nftdp_ct_info *out);

/**
 * ctnetlink_create_conntrack + nf_conntrack_hash_check_insert: a confirmed
 * entry from c (both tuples, CTA_TIMEOUT required), NAT bindings set up as
 * nf_nat_setup_info would for the given ranges (the null binding for the
 * other manip), and a NEW (RELATED with a master) event queued. 0; -EINVAL;
 * -EOPNOTSUPP (helper unknown for the protocol); -EBUSY (status); -ENOENT
 * (master); -EEXIST (a tuple is taken); -ENOMEM (table full). On an error
 * nothing is left. Control-path on the owning worker.
 */
int nftdp_ct_create(struct nftdp_ct_shard *s, const struct nftdp_ct_change *c, uint64_t now_ms,
		    struct nftdp_ct_info *out);

/**
 * IPCTNL_MSG_CT_GET_CTRZERO for one entry: what nftdp_ct_get reports, then
 * its packet and byte counters are zeroed (atomically with the report: the
 * owning worker runs it). 0 or -ENOENT. Control-path on the owning worker.
 */
int nftdp_ct_get_zero(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id,
		      uint64_t now_ms, struct nftdp_ct_info *out);

/** What the VM calls for ct expressions; pkt->ct_ops after nftdp_ct_in(). */
extern const struct nftdp_vm_ct_ops nftdp_ct_vm_ops;

/** Bytes of one entry (memory per entry for the benchmark report). */
unsigned int nftdp_ct_entry_size(void);

/**
 * The expectation table (nf_conntrack_expect) the shards of a dataplane
 * share: one part per shard, written only by that shard's worker (the
 * master connection's), read by every worker when a new connection starts
 * while any expectation is live; a worker claims one with a compare and
 * swap. Control path; destroy after every shard that uses it.
 * @param n_shards  parts (the workers); > 0
 * @param per_shard expectations a shard may hold at once (0: 256)
 * @return 0, -EINVAL, -ENOMEM
 */
int nftdp_ct_expect_table_create(uint16_t n_shards, uint32_t per_shard,
				 struct nftdp_ct_expect_table **out);
void nftdp_ct_expect_table_destroy(struct nftdp_ct_expect_table *t);

/** One expectation as ctnetlink lists it (conntrack -L expect). */
struct nftdp_ct_expect_info {
	struct nftdp_ct_tuple tuple, mask;
	struct nftdp_ct_tuple master; /**< the master's original tuple */
	uint32_t timeout_s;	      /**< seconds left */
	uint32_t id;
	uint32_t flags;	    /**< NF_CT_EXPECT_* */
	uint8_t class;	    /**< the helper's expectation class (sip: 0-3) */
	const char *helper; /**< the master's helper name */
	bool nat;	    /**< follows the master's NAT (nf_nat_follow_master) */
	uint8_t nat_dir;    /**< exp->dir */
	uint16_t nat_port;  /**< exp->saved_proto, network order */
	bool nat_pptp;	    /**< pptp's expectfn (no CTA_EXPECT_FN), not nat-follow-master */
	bool nat_sip;	    /**< nf_nat_sip_expected: saved address, CTA_EXPECT_FN "sip" */
	/** nf_nat_h323's ip_nat_callforwarding_expect: saved address,
	 * CTA_EXPECT_FN "callforwarding" */
	bool nat_callfwd;
	/** nf_nat_h323's ip_nat_q931_expect (a RegistrationRequest's calls
	 * through NAT): nf_nat_follow_master's NAT, CTA_EXPECT_FN "Q.931" */
	bool nat_q931;
	union nftdp_ct_addr nat_saved; /**< exp->saved_addr (nat_sip, nat_callfwd) */
};

/**
 * Visit the expectations of shard s's part (its masters'). Safe from any
 * thread (a slot that changes while it is read is skipped). Returns the
 * visitor's first non-zero value, or 0.
 */
int nftdp_ct_expect_walk(struct nftdp_ct_shard *s, uint64_t now_ms,
			 int (*fn)(const struct nftdp_ct_expect_info *x, void *arg), void *arg);

/** IPCTNL_MSG_EXP_NEW, parsed (ctnetlink_create_expect's attributes). */
struct nftdp_ct_expect_new {
	struct nftdp_ct_tuple tuple, mask, master; /**< mask: its src address and port count */
	char helper[16];			   /**< CTA_EXPECT_HELP_NAME, "" without */
	uint32_t class;				   /**< CTA_EXPECT_CLASS */
	uint32_t flags;				   /**< CTA_EXPECT_FLAGS */
	bool follow;				   /**< CTA_EXPECT_FN "nat-follow-master" */
	bool fn_unknown;   /**< CTA_EXPECT_FN names another function (EINVAL) */
	uint8_t nat_dir;   /**< CTA_EXPECT_NAT_DIR */
	uint16_t nat_port; /**< CTA_EXPECT_NAT_TUPLE's source port (saved_proto) */
};

/**
 * The live expectation of shard s's part that tuple t matches under its
 * mask (__nf_ct_expect_find); id non-zero must be its id. 0 or -ENOENT.
 * Safe from any thread, like nftdp_ct_expect_walk.
 */
int nftdp_ct_expect_get(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id,
			uint64_t now_ms, struct nftdp_ct_expect_info *out);

/** Remove that expectation (ctnetlink_del_expect by tuple). 0 or -ENOENT.
 * Control-path on the owning worker. */
int nftdp_ct_expect_delete(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t, uint32_t id);

/** ctnetlink_change_expect: a new timeout from now. 0 or -ENOENT. Owner. */
int nftdp_ct_expect_set_timeout(struct nftdp_ct_shard *s, const struct nftdp_ct_tuple *t,
				uint32_t timeout_s, uint64_t now_ms);

/** Remove the expectations of s's part whose master's helper is helper
 * (NULL: all, ctnetlink_del_expect without a tuple); how many. Owner. */
unsigned int nftdp_ct_expect_flush(struct nftdp_ct_shard *s, const char *helper);

/**
 * ctnetlink_create_expect on the shard of its master: -ENOENT (no master
 * here), -EOPNOTSUPP (the master has no helper, the named helper is
 * unknown), -EINVAL (class, expectfn), -EBUSY (clash), -EMFILE (full).
 * The timeout and max_expected are the master's helper's policy, as the
 * kernel's nf_ct_expect_insert takes them. Owner.
 */
int nftdp_ct_expect_create(struct nftdp_ct_shard *s, const struct nftdp_ct_expect_new *n,
			   uint64_t now_ms);

/** The name of helper id (NFTDP_VM_CT_HELPER_*), NULL for none. */
const char *nftdp_ct_helper_name(uint8_t helper);

#endif /* NFTDP_CONNTRACK_H */
