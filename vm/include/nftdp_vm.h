/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nftdp VM: the nf_tables virtual machine, its compiler and its stateful arena.
 *
 * The control thread compiles every rule of a chain (a libnftnl
 * struct nftnl_rule, as control/ stores it) into a compact program: an array
 * of fixed-size ops (struct nftdp_vm_op, one cache line each) grouped by rule.
 * Workers run a base chain over a packet exactly as the kernel's
 * nft_do_chain() does: rules in order, expressions in order, NFT_BREAK ends a
 * rule, a verdict ends the chain, jump/goto through a stack of
 * NFT_JUMP_STACK_SIZE, return, and the base chain's policy at the end.
 *
 * Usage:
 *   control thread:
 *     nftdp_vm_state_create()            once; survives every generation
 *     nftdp_vm_state_gen_begin()         per commit
 *       nftdp_vm_obj_create()            named counter/quota/limit objects
 *       nftdp_vm_chain_create()          every chain of the next generation
 *       nftdp_vm_chain_add_rule()        every rule, in order
 *       nftdp_vm_validate()              per base chain (ELOOP, EMLINK)
 *     publish (one pointer store), wait for quiescence, then
 *       nftdp_vm_chain_destroy() / nftdp_vm_obj_destroy() on the old ones
 *       nftdp_vm_state_sweep()           releases slots no generation uses
 *     nftdp_vm_state_read_rule() / _read_obj() / nftdp_vm_log_poll()
 *   workers (packet path):
 *     nftdp_vm_run_chain() / nftdp_vm_run_burst()
 *
 * Threading: compiled chains are immutable once published; any number of
 * workers may run them concurrently. Stateful expressions keep their state in
 * struct nftdp_vm_state: counters are per-worker slots (one writer each,
 * summed by the control thread), quota, limit, last and numgen are shared
 * cells updated with atomics. Each worker passes its own struct nftdp_vm_ctx.
 *
 * Packet view: the VM never sees an mbuf. A packet is bytes, offsets and
 * metadata (struct nftdp_vm_pkt); nothing here includes a DPDK header.
 */
#ifndef NFTDP_VM_H
#define NFTDP_VM_H

#include <assert.h>
#include <netinet/in.h> /* before the linux uapi headers (libc-compat) */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

struct nftnl_rule;
struct nftnl_obj;
struct nftdp_set; /* sets/include/nftdp_sets.h */

#define NFTDP_VM_NREG32 16	    /**< NFT_REG32_00 .. NFT_REG32_15 */
#define NFTDP_VM_REG_SIZE 64	    /**< bytes of data registers */
#define NFTDP_VM_JUMP_STACK_SIZE 16 /**< the kernel's NFT_JUMP_STACK_SIZE */
#define NFTDP_VM_IFNAMSIZ 16
#define NFTDP_VM_BURST_MAX 64
#define NFTDP_VM_LOG_PREFIXLEN 128 /**< NF_LOG_PREFIXLEN */
#define NFTDP_VM_ERRLEN 128
#define NFTDP_VM_MAX_DUP 4

/* Verdict codes, the kernel's values (linux/netfilter.h, nf_tables.h):
 * NF_DROP 0, NF_ACCEPT 1, NF_STOLEN 2, NF_QUEUE 3, NFT_CONTINUE -1,
 * NFT_BREAK -2, NFT_JUMP -3, NFT_GOTO -4, NFT_RETURN -5. */

struct nftdp_vm_chain;

/** The verdict register (the kernel's struct nft_verdict). */
struct nftdp_vm_verdict {
	uint32_t code;
	const struct nftdp_vm_chain *chain; /**< for NFT_JUMP / NFT_GOTO */
};

/**
 * The register file, as the kernel's struct nft_regs: the verdict register
 * plus 64 bytes of data, seen as sixteen 4-byte registers (NFT_REG32_00..15)
 * or four 16-byte ones (NFT_REG_1..4). data[] is indexed by the 32-bit
 * register number: NFT_REG_1..4 are data[0], [4], [8], [12]; NFT_REG32_nn is
 * data[nn]. (The kernel indexes the same words from 4, after the verdict.)
 */
struct nftdp_vm_regs {
	struct nftdp_vm_verdict verdict;
	union {
		uint32_t data[NFTDP_VM_NREG32];
		uint8_t bytes[NFTDP_VM_REG_SIZE];
		uint32_t data128[4][4];
	};
};
static_assert(sizeof(struct nftdp_vm_regs) == 80, "register file is the kernel's 80 bytes");

/** netlink register number (NFT_REG_1.. / NFT_REG32_00..) to data[] index, -1 if invalid */
static inline int nftdp_vm_reg_index(uint32_t reg)
{
	if (reg >= NFT_REG_1 && reg <= NFT_REG_4)
		return (int)(reg - NFT_REG_1) * 4;
	if (reg >= NFT_REG32_00 && reg <= NFT_REG32_15)
		return (int)(reg - NFT_REG32_00);
	return -1;
}

/**
 * Conntrack interface, filled in by conntrack/. ct is opaque to the VM.
 * get: copy key (NFT_CT_*) in direction dir (IP_CT_DIR_*, or -1 when the
 * expression has none) into dest (len bytes, zero padded by the VM); return
 * false when the key has no value (the rule breaks).
 * set: store len bytes for key (NFT_CT_MARK, LABELS, EVENTMASK, ZONE...).
 */
struct nftdp_vm_pkt;

/** NAT bindings the nat and masq expressions ask for (nftdp_vm_ct_ops.nat). */
enum nftdp_vm_nat_kind {
	NFTDP_VM_NAT_SNAT,  /**< nf_nat_setup_info, NF_NAT_MANIP_SRC */
	NFTDP_VM_NAT_DNAT,  /**< nf_nat_setup_info, NF_NAT_MANIP_DST */
	NFTDP_VM_NAT_MASQ,  /**< nf_nat_masquerade_ipv4/6 on pkt->oif */
	NFTDP_VM_NAT_REDIR, /**< nf_nat_redirect_ipv4/6: to the address of pkt->iif */
};

/** The kernel's struct nf_nat_range2 as the VM fills it (network byte order). */
struct nftdp_vm_nat_range {
	uint32_t flags;	      /**< NF_NAT_RANGE_* */
	uint8_t min_addr[16]; /**< IPv4 in the first four bytes */
	uint8_t max_addr[16];
	uint16_t min_proto, max_proto;
};

/** Zone directions (the kernel's NF_CT_ZONE_DIR_*): which tuples a zone keys. */
#define NFTDP_VM_CT_ZONE_DIR_ORIG (1u << 0)
#define NFTDP_VM_CT_ZONE_DIR_REPL (1u << 1)
#define NFTDP_VM_CT_ZONE_DIR_BOTH (NFTDP_VM_CT_ZONE_DIR_ORIG | NFTDP_VM_CT_ZONE_DIR_REPL)

/** pkt->ct_tmpl_flags: the zone is the packet's mark when conntrack
 * runs (XT_CT_ZONE_MARK: nf_ct_zone_tmpl) */
#define NFTDP_VM_CT_TMPL_ZONE_MARK 0x01
/** pkt->ct_tmpl_flags: pkt->ct_tmpl_events is the new connection's event
 * mask (--ctevents, or --expevents alone: an empty mask) */
#define NFTDP_VM_CT_TMPL_EVENTS 0x02

#define NFTDP_VM_CT_TIMEOUT_MAX 14 /**< TCP_CONNTRACK_TIMEOUT_MAX: the largest policy */

/**
 * A compiled `ct timeout` object (NFT_OBJECT_CT_TIMEOUT): timeouts in seconds
 * indexed as the kernel's per-protocol arrays (TCP by TCP_CONNTRACK_*, with
 * [0] the SYN_SENT value; UDP [0] unreplied, [1] replied; other protocols
 * [0]). Only the values whose bit is in `given` replace the shard's default.
 * Immutable; id is unique among every policy ever compiled, so conntrack may
 * keep a copy by id that outlives the object.
 */
struct nftdp_vm_ct_timeout {
	uint64_t id;
	uint8_t l3proto; /**< NFPROTO_* (informative: the kernel matches l4proto only) */
	uint8_t l4proto;
	uint32_t given; /**< 1 << index of every value set */
	uint32_t val[NFTDP_VM_CT_TIMEOUT_MAX];
};

/** Conntrack helpers nftdp runs (nf_conntrack_helper); 0: none. */
enum nftdp_vm_ct_helper_id {
	NFTDP_VM_CT_HELPER_NONE,
	NFTDP_VM_CT_HELPER_FTP,	       /**< "ftp", TCP (nf_conntrack_ftp) */
	NFTDP_VM_CT_HELPER_TFTP,       /**< "tftp", UDP (nf_conntrack_tftp) */
	NFTDP_VM_CT_HELPER_IRC,	       /**< "irc", TCP, IPv4 (nf_conntrack_irc) */
	NFTDP_VM_CT_HELPER_AMANDA,     /**< "amanda", UDP (nf_conntrack_amanda) */
	NFTDP_VM_CT_HELPER_NETBIOS_NS, /**< "netbios-ns", UDP, IPv4 (nf_conntrack_netbios_ns) */
	NFTDP_VM_CT_HELPER_SNMP,       /**< "snmp", UDP, IPv4 (nf_conntrack_snmp) */
	NFTDP_VM_CT_HELPER_PPTP,       /**< "pptp", TCP, IPv4 (nf_conntrack_pptp) */
	NFTDP_VM_CT_HELPER_SIP,	       /**< "sip", UDP and TCP (nf_conntrack_sip) */
	NFTDP_VM_CT_HELPER_SNMP_TRAP,  /**< "snmp_trap", UDP, IPv4 (nf_nat_snmp_basic) */
	NFTDP_VM_CT_HELPER_Q931,       /**< "Q.931", TCP (nf_conntrack_h323) */
	NFTDP_VM_CT_HELPER_H245,       /**< "H.245": Q.931's expected connections only */
	NFTDP_VM_CT_HELPER_RAS,	       /**< "RAS", UDP (nf_conntrack_h323) */
	NFTDP_VM_CT_HELPER_SANE,       /**< "sane", TCP (nf_conntrack_sane) */
	NFTDP_VM_CT_HELPER_MAX,
};

/** The helpers this kernel registers (nf_conntrack_helper_try_module_get):
 * for helper `name` and protocol l4proto, bit 0 set if it has an IPv4 one,
 * bit 1 an IPv6 one; 0 if none. nftdp may still refuse the name
 * (nftdp_vm_obj_create). */
unsigned int nftdp_vm_ct_helper_families(const char *name, uint8_t l4proto);
/**
 * __nf_conntrack_helper_find: the helper the kernel registers as name for
 * nfproto (NFPROTO_IPV4/6) and l4proto, if nftdp runs it; else
 * NFTDP_VM_CT_HELPER_NONE.
 */
uint8_t nftdp_vm_ct_helper_find(const char *name, uint8_t nfproto, uint8_t l4proto);

/**
 * A compiled `ct helper` object (NFT_OBJECT_CT_HELPER, nft_ct_helper_obj):
 * the helper, its protocol and the families it serves (the kernel's
 * helper4 / helper6). Immutable.
 */
struct nftdp_vm_ct_helper {
	uint8_t helper;	 /**< NFTDP_VM_CT_HELPER_* */
	uint8_t l4proto; /**< IPPROTO_TCP / IPPROTO_UDP */
	bool v4, v6;	 /**< helper4 / helper6 are set */
};

/**
 * A `ct expectation` object (nft_ct_expect_obj): the expectation a new
 * connection's first packet opens for its peer. Immutable.
 */
struct nftdp_vm_ct_expect {
	uint8_t l3proto;   /**< NFPROTO_IPV4 / NFPROTO_IPV6, or NFPROTO_INET: the connection's */
	uint8_t l4proto;   /**< the expected connection's protocol */
	uint8_t size;	   /**< expectations a connection may hold (help->expecting) */
	uint16_t dport_be; /**< its destination port */
	uint32_t timeout;  /**< seconds (priv->timeout * HZ jiffies) */
};

struct nftdp_vm_ct_ops {
	bool (*get)(const void *ct, uint32_t key, int dir, void *dest, uint32_t len);
	void (*set)(void *ct, uint32_t key, int dir, const void *src, uint32_t len);
	uint32_t (*state)(const void *ct); /**< NF_CT_STATE_*_BIT of this packet */
	/** bind pkt's connection (pkt->ct == ct); returns the verdict the
	 * expression sets: NF_ACCEPT, or NF_DROP (no unique tuple, no address) */
	unsigned int (*nat)(void *ct, struct nftdp_vm_pkt *pkt, enum nftdp_vm_nat_kind kind,
			    const struct nftdp_vm_nat_range *range);
	/** `ct timeout set` (nft_ct_timeout_obj_eval): an unconfirmed entry
	 * takes the policy and the timeout policy->val[0] from now; confirmed
	 * entries are left alone. Optional. */
	void (*timeout)(void *ct, const struct nftdp_vm_ct_timeout *policy);
	/** `ct helper set` (nft_ct_helper_obj_eval): an unconfirmed entry of
	 * the helper's protocol and family without a helper takes it.
	 * Optional. */
	void (*helper)(void *ct, const struct nftdp_vm_ct_helper *h);
	/** nft_ct_expect_obj_eval: open expectation x from ct's peer; the
	 * verdict code (NFT_CONTINUE, NFT_BREAK: a confirmed connection or
	 * size reached; NF_DROP: no room, a clash). Optional (NFT_BREAK). */
	int (*expect)(void *ct, const struct nftdp_vm_ct_expect *x);
	/** connlimit: a key that names ct's connection for as long as it lives
	 * (not reused by another one for a long while), never 0; *confirmed
	 * says whether it is confirmed. Optional (connlimit then counts
	 * nothing). */
	uint64_t (*conn_key)(const void *ct, bool *confirmed);
	/** connlimit: whether the connection key names (of ct's shard or, for
	 * per-element lists that workers share, of another one) is still
	 * tracked and not closed (nf_conncount's find_or_evict and
	 * already_closed: TCP TIME_WAIT / CLOSE count as gone). ct may be
	 * NULL (the set gc, control thread). */
	bool (*conn_live)(const void *ct, uint64_t key);
};

/* ------------------------------------------------------------------ */
/* fib: the route table, through ops the dataplane fills (route/)     */

#define NFTDP_VM_FIB_MAX_PATHS 4

/** A route as the fib expression reads it. */
struct nftdp_vm_fib_route {
	uint8_t type;	 /**< RTN_UNICAST, RTN_LOCAL, RTN_BROADCAST, RTN_ANYCAST, RTN_MULTICAST,
			      RTN_BLACKHOLE, RTN_UNREACHABLE, RTN_PROHIBIT, RTN_THROW */
	uint8_t n_oif;	 /**< devices in oif[] */
	uint8_t plen;	 /**< prefix length */
	bool gateway;	 /**< RTF_GATEWAY */
	uint8_t dst[16]; /**< the route's prefix (IPv4 in the first 4 bytes) */
	uint8_t gw[16];	 /**< the gateway when gateway (IPv4 in the first 4 bytes) */
	uint32_t mtu;	 /**< the route's mtu metric, else its device's (of path sel); 0: unknown */
	uint32_t oif[NFTDP_VM_FIB_MAX_PATHS]; /**< ifindex of each path */
	uint8_t sel;	/**< the path taken (oif[sel]): 0 until mp_select chose */
	const void *rt; /**< the fib ops' own route, for mp_select */
};

/** nft_fib's flowi4 / flowi6: what a fib lookup through `ip rule`s sees. */
struct nftdp_vm_fib_flow {
	uint8_t daddr[16]; /**< looked up (IPv4 in the first 4 bytes, network order) */
	uint8_t saddr[16]; /**< the other address (IPv4: 0 when get_saddr drops it) */
	bool has_saddr;	   /**< IPv6: RT6_LOOKUP_F_HAS_SADDR */
	uint8_t dscp;	   /**< tos / traffic class & 0xfc */
	uint8_t proto;	   /**< flowi_proto (nft_fib6: pkt->tprot; nft_fib4: none) */
	uint32_t iif;	   /**< flowi_iif: an ifindex or NFTDP_VM_FIB_IIF_LOOPBACK */
	uint32_t oif;	   /**< flowi_oif (IPv6: the link-scope lookup's device), 0: none */
	uint32_t mark;	   /**< flowi_mark (NFTA_FIB_F_MARK) */
};
#define NFTDP_VM_FIB_IIF_LOOPBACK 0xfffffffeu /**< LOOPBACK_IFINDEX, the host's lo */

/**
 * The route table the fib expression looks up (nftdp_vm_ctx.fib_ops with
 * nftdp_vm_ctx.fib). All four are packet-path and read-only. route4 and
 * route6 return false when no route matches; an IPv4 daddr is in network
 * byte order. route6 with oif != 0 takes only routes of device oif for a
 * link-local or multicast destination (RT6_LOOKUP_F_IFACE).
 */
struct nftdp_vm_fib_ops {
	bool (*route4)(const void *fib, uint32_t daddr, struct nftdp_vm_fib_route *out);
	bool (*route6)(const void *fib, const uint8_t daddr[16], uint32_t oif,
		       struct nftdp_vm_fib_route *out);
	/** addr is configured on device ifindex (nf_ipv6_chk_addr, strict) */
	bool (*addr6_on)(const void *fib, const uint8_t addr[16], uint32_t ifindex);
	/** device ifindex's name, NULL if unknown */
	const char *(*ifname)(const void *fib, uint32_t ifindex);
	/** fib_lookup / fib6_rule_lookup of a flow, through the `ip rule`s
	 * (NULL: route4 / route6 of fl->daddr, as without rules) */
	bool (*route4_flow)(const void *fib, const struct nftdp_vm_fib_flow *fl,
			    struct nftdp_vm_fib_route *out);
	bool (*route6_flow)(const void *fib, const struct nftdp_vm_fib_flow *fl,
			    struct nftdp_vm_fib_route *out);
	/** the path of multipath route r (from one of the lookups above,
	 * this burst) that packet pkt takes (fib6_select_path, the forward
	 * route's fib_select_multipath): sets r->sel, and r->gateway and
	 * r->gw to that path's. v4: r is an IPv4 route. NULL: the first. */
	void (*mp_select)(const void *fib, const struct nftdp_vm_pkt *pkt, bool v4,
			  struct nftdp_vm_fib_route *r);
	/** the path of multipath route r (route4 / route6 of daddr, this
	 * burst) that an output route to daddr takes (nf_route: the flow
	 * {daddr} through fib_select_path / fib6_select_path): as
	 * mp_select. NULL: the first. */
	void (*mp_select_out)(const void *fib, const uint8_t *daddr, bool v4,
			      struct nftdp_vm_fib_route *r);
};

/* synproxy (vm/synproxy.c; functions below) */
/** struct nf_synproxy_info: a synproxy statement's or object's parameters */
struct nftdp_vm_synproxy_info {
	uint16_t mss;	 /**< MSS announced to the client (host order) */
	uint8_t wscale;	 /**< window scale announced to the client */
	uint8_t options; /**< NF_SYNPROXY_OPT_* */
};

/** struct synproxy_options: what a TCP header carries, and what is sent */
struct nftdp_vm_synproxy_opts {
	uint8_t options; /**< NF_SYNPROXY_OPT_* present */
	uint8_t wscale;
	uint16_t mss_option; /**< MSS option (host order) */
	uint16_t mss_encode; /**< the client's MSS, encoded in the cookie */
	uint32_t tsval, tsecr;
};

/** /proc/net/stat/synproxy, per worker (one writer). */
struct nftdp_vm_synproxy_stats {
	uint64_t syn_received, cookie_invalid, cookie_valid, cookie_retrans, conn_reopened;
};

/** What the VM asks the dataplane to do besides the verdict. */
struct nftdp_vm_pkt_out {
	bool reject;		  /**< verdict is NF_DROP and a reply must be built */
	uint8_t reject_type;	  /**< NFT_REJECT_ICMP_UNREACH, TCP_RST, ICMPX_UNREACH */
	uint8_t reject_code;	  /**< code as given (icmp, icmpv6 or icmpx) */
	uint8_t reject_icmp_type; /**< resolved ICMP/ICMPv6 type (3 / 1), 0 for RST */
	uint8_t reject_icmp_code; /**< resolved ICMP/ICMPv6 code for this family */
	bool notrack;		  /**< notrack ran: conntrack must skip the packet */
	uint32_t fwd_oif;	  /**< fwd: ifindex (verdict NF_STOLEN), 0 if none */
	uint8_t fwd_nfproto;	  /**< fwd with neighbour: NFPROTO_IPV4/6, 0 if none */
	uint8_t fwd_addr[16];
	uint8_t n_dup;
	/** bit i: dup i is to an address (nf_dup_ipv4/6): the gateway in
	 * pkt->dup_addr[i], dup_oif[i] the device or 0 for none */
	uint8_t dup_to_addr;
	uint32_t dup_oif[NFTDP_VM_MAX_DUP];
	/** synproxy answered a SYN (verdict NF_STOLEN): the statement's
	 * parameters, for the SYN-ACK sent back out of the receiving port
	 * (nftdp_vm_synproxy_answer); NULL otherwise. Lives as long as the
	 * generation the packet ran in. */
	const struct nftdp_vm_synproxy_info *synproxy;
	/** ebtables' arpreply answered an ARP request (bridge prerouting,
	 * any verdict): the dataplane sends the reply out of the receiving
	 * port, arp_send(ARPOP_REPLY) from sha/sip to tha/tip */
	bool arpreply;
	uint8_t arpreply_sha[6], arpreply_tha[6];
	uint8_t arpreply_sip[4], arpreply_tip[4];
};

enum {
	NFTDP_VM_PKT_F_L4PROTO = 1 << 0,  /**< l4proto/th_off valid (NFT_PKTINFO_L4PROTO) */
	NFTDP_VM_PKT_F_WRITABLE = 1 << 1, /**< payload/exthdr/meta writes allowed */
	NFTDP_VM_PKT_F_INNER = 1 << 2,	  /**< inner_off computed (NFT_PKTINFO_INNER) */
	NFTDP_VM_PKT_F_CSUM_OK =
	    1 << 3, /**< L4 checksum verified by the NIC (CHECKSUM_UNNECESSARY) */
};

/**
 * A packet as the VM sees it. Offsets are from data; data[0..len) is all the
 * VM may touch. At ip/ip6/inet hooks len should end where the IP datagram
 * ends (padding trimmed), as the kernel's skb does.
 */
struct nftdp_vm_pkt {
	uint8_t *data;
	uint32_t len;
	int32_t mac_off;   /**< link-layer header, -1 if none */
	uint32_t nh_off;   /**< network header */
	uint32_t th_off;   /**< transport header (nft_thoff) */
	int32_t inner_off; /**< inner header, computed lazily as the kernel */
	uint32_t skb_len;  /**< skb->len at this hook: meta len, byte counters, quota */
	uint16_t protocol; /**< skb->protocol: ethertype, network byte order */
	uint16_t fragoff;  /**< IP fragment offset (non-zero: no transport header) */
	uint8_t l4proto;   /**< pkt->tprot */
	uint8_t nfproto;   /**< NFPROTO_* of the hook (nft_pf) */
	uint8_t hook;	   /**< NF_INET_* / NF_NETDEV_* */
	uint8_t flags;	   /**< NFTDP_VM_PKT_F_* */
	/* metadata */
	uint32_t iif, oif;	       /**< ifindex, 0 = no device */
	const char *iifname, *oifname; /**< IFNAMSIZ bytes or NULL */
	uint16_t iiftype, oiftype;     /**< ARPHRD_* */
	uint32_t iifgroup, oifgroup;
	uint32_t mark;
	uint32_t priority;
	uint8_t pkttype; /**< PACKET_HOST .. PACKET_OTHERHOST */
	uint8_t nftrace;
	uint16_t cpu;
	/** the packet's trace id (NFTA_TRACE_ID), given by its first trace
	 * event: keep it across hooks, as the kernel derives it from the skb */
	uint32_t trace_id;
	/** xtables' CT target ran before conntrack (xt_ct_target's template;
	 * ct_zone_dir is set with it): the helper a new connection takes
	 * (NFTDP_VM_CT_HELPER_*, 0: none), NFTDP_VM_CT_TMPL_* flags, and
	 * the event mask it takes (the template's ecache ctmask) where
	 * NFTDP_VM_CT_TMPL_EVENTS is set */
	uint8_t ct_tmpl_helper;
	uint8_t ct_tmpl_flags;
	uint16_t ct_tmpl_events;
	uint64_t tstamp_ns; /**< wall clock (CLOCK_REALTIME) ns; 0: use ctx->now_real_ns */
	/* conntrack */
	void *ct;
	const struct nftdp_vm_ct_ops *ct_ops;
	bool ct_untracked;
	/** nf_conntrack_in already ran for this packet at this hook (the
	 * pipeline's established pass): conntrack leaves it alone, as it
	 * leaves a packet with a ct, whatever that run decided */
	bool ct_seen;
	/** the NAT manips (1 << NFTDP_CT_MANIP_*) the established pass
	 * applied already: nf_nat_packet does not apply them again */
	uint8_t nat_done;
	/** `ct zone set` ran before conntrack (the kernel's template): the
	 * NFTDP_VM_CT_ZONE_DIR_* it keys, 0 when no zone was set */
	uint8_t ct_zone_dir;
	uint16_t ct_zone; /**< that zone id, which conntrack puts into the tuple */
	/** the bridge device's address (bridge hooks in wire mode: the
	 * smaller of the pair's port MACs), NULL where there is no bridge */
	const uint8_t *br_addr;
	/** `dup to ADDR`: the gateways of out.dup_to_addr's dups (IPv4 in
	 * the first 4 bytes); not cleared, read only where that bit is set */
	uint8_t dup_addr[NFTDP_VM_MAX_DUP][16];
	struct nftdp_vm_pkt_out out;
};

/**
 * Fill a packet view with defaults for an IP packet whose network header is
 * at nh_off and transport header at th_off (l4proto valid when has_l4).
 * skb_len becomes len - nh_off, the kernel's skb->len at ip/ip6 hooks.
 */
static inline void nftdp_vm_pkt_init(struct nftdp_vm_pkt *pkt, uint8_t *data, uint32_t len,
				     int32_t mac_off, uint32_t nh_off)
{
	/* all but dup_addr, which is read only where out says it was set;
	 * in line: the packet path's callers know most arguments */
	memset(pkt, 0, offsetof(struct nftdp_vm_pkt, dup_addr));
	memset(&pkt->out, 0, sizeof(*pkt) - offsetof(struct nftdp_vm_pkt, out));
	pkt->data = data;
	pkt->len = len;
	pkt->mac_off = mac_off;
	pkt->nh_off = nh_off;
	pkt->th_off = nh_off <= len ? nh_off : len; /* never past the packet */
	pkt->inner_off = -1;
	pkt->skb_len = len >= nh_off ? len - nh_off : 0;
	pkt->flags = NFTDP_VM_PKT_F_WRITABLE;
}

/**
 * Parse the network and transport headers of pkt (IPv4, IPv6 with extension
 * headers) and set protocol, nfproto, l4proto, th_off, fragoff and
 * NFTDP_VM_PKT_F_L4PROTO as nft_set_pktinfo_ipv4/6 does. Malformed headers
 * leave F_L4PROTO clear. A convenience for tests and the dataplane parser.
 */
void nftdp_vm_pkt_parse_ip(struct nftdp_vm_pkt *pkt);

/**
 * The header view (below) of an IP datagram of ip_len bytes at data + nh_off
 * whose header ip_rcv or ip6_rcv_core already passed (IPv4: 20 <= ihl <=
 * total length = ip_len; IPv6: 40 + payload length = ip_len), without
 * checking those lengths again. false: an IPv6 extension header that
 * ipv6_find_hdr walks (not a plain case).
 */
static inline bool nftdp_vm_pkt_header_view_rcv(struct nftdp_vm_pkt *pkt, uint8_t *data,
						uint32_t nh_off, uint32_t ip_len, bool v4)
{
	const uint8_t *p = data + nh_off;

	if (!v4 && (p[6] == 0 || p[6] == 43 || p[6] == 44 || p[6] == 60))
		return false;
	pkt->data = data;
	pkt->len = nh_off + ip_len;
	pkt->mac_off = 0;
	pkt->nh_off = nh_off;
	pkt->skb_len = ip_len;
	pkt->nftrace = 0;
	pkt->flags = NFTDP_VM_PKT_F_WRITABLE | NFTDP_VM_PKT_F_L4PROTO;
	if (v4) {
		uint16_t frag;

		__builtin_memcpy(&frag, p + 6, sizeof(frag)); /* one load */
		pkt->nfproto = NFPROTO_IPV4;
		pkt->th_off = nh_off + (p[0] & 0xfu) * 4u;
		pkt->l4proto = p[9];
		pkt->fragoff = (uint16_t)((ntohs(frag) & 0x1fff) << 3);
	} else {
		pkt->nfproto = NFPROTO_IPV6;
		pkt->th_off = nh_off + 40;
		pkt->l4proto = p[6];
		pkt->fragoff = 0;
	}
	return true;
}

/**
 * A header view: what nftdp_vm_pkt_init and nftdp_vm_pkt_parse_ip give an
 * IP packet in the fields nftdp_vm_gen_flow_headers_only names, and only
 * those (the rest is left as it was). For a flow cache probe whose result
 * decides the packet without a chain; anything else needs a whole view.
 * false: not one of the plain cases of nftdp_vm_pkt_parse_ip_fast.
 */
static inline bool nftdp_vm_pkt_header_view(struct nftdp_vm_pkt *pkt, uint8_t *data, uint32_t len,
					    uint32_t nh_off)
{
	const uint8_t *p = data + nh_off;
	uint32_t avail = len > nh_off ? len - nh_off : 0;

	if (avail >= 20 && p[0] >= 0x45 && p[0] <= 0x4f) {
		uint32_t ihl = (p[0] & 0xfu) * 4u, tot = (uint32_t)p[2] << 8 | p[3];

		return tot >= ihl && avail >= tot &&
		       nftdp_vm_pkt_header_view_rcv(pkt, data, nh_off, avail, true);
	}
	if (avail < 40 || (p[0] >> 4) != 6 || ((uint32_t)p[4] << 8 | p[5]) + 40 > avail)
		return false;
	return nftdp_vm_pkt_header_view_rcv(pkt, data, nh_off, avail, false);
}

/**
 * nftdp_vm_pkt_parse_ip with its common cases inline, for the packet path:
 * an IPv4 header whose lengths hold, an IPv6 header whose next header is
 * not an extension header that ipv6_find_hdr walks (hop-by-hop, routing,
 * fragment, destination options). Anything else takes the function. The
 * view is the same either way.
 */
static inline void nftdp_vm_pkt_parse_ip_fast(struct nftdp_vm_pkt *pkt)
{
	const uint8_t *p = pkt->data + pkt->nh_off;
	uint32_t avail = pkt->len > pkt->nh_off ? pkt->len - pkt->nh_off : 0;

	if (avail >= 20 && p[0] >= 0x45 && p[0] <= 0x4f) {
		uint32_t ihl = (p[0] & 0xfu) * 4u, tot = (uint32_t)p[2] << 8 | p[3];

		if (tot >= ihl && avail >= tot) {
			pkt->protocol = htons(0x0800);
			pkt->nfproto = NFPROTO_IPV4;
			pkt->th_off = pkt->nh_off + ihl;
			pkt->l4proto = p[9];
			pkt->fragoff = (uint16_t)((((uint32_t)p[6] << 8 | p[7]) & 0x1fff) << 3);
			pkt->flags |= NFTDP_VM_PKT_F_L4PROTO;
			return;
		}
	} else if (avail >= 40 && (p[0] >> 4) == 6 && p[6] != 0 && p[6] != 43 && p[6] != 44 &&
		   p[6] != 60 && ((uint32_t)p[4] << 8 | p[5]) + 40 <= avail) {
		pkt->protocol = htons(0x86dd);
		pkt->nfproto = NFPROTO_IPV6;
		pkt->th_off = pkt->nh_off + 40;
		pkt->l4proto = p[6];
		pkt->fragoff = 0;
		pkt->flags |= NFTDP_VM_PKT_F_L4PROTO;
		return;
	}
	nftdp_vm_pkt_parse_ip(pkt);
}

/* ------------------------------------------------------------------ */
/* Sets: what the VM needs from sets/ (lookup, dynset, objref maps).   */

/** Element data of a verdict map, as the VM reads it. */
struct nftdp_vm_set_verdict {
	uint32_t code;	   /**< NF_ACCEPT, NF_DROP, NFT_JUMP, NFT_GOTO, NFT_RETURN... */
	uint32_t chain_id; /**< for jump/goto: index into nftdp_vm_ctx.chains */
};

/**
 * A stand-in for sets/ (tests): the VM calls sets/ directly for a set whose
 * nftdp_vm_set_info.ops is NULL, and these otherwise. lookup has the
 * signature of sets/' nftdp_set_lookup; update and remove serve dynset.
 * update: add key (with data when a map) if absent, return true if the key is
 * now present (false when the set is full); when refresh is set and the
 * element has a timeout, restart it with timeout_ms.
 */
struct nftdp_vm_set_ops {
	bool (*lookup)(const struct nftdp_set *s, const void *key, const void **data,
		       uint64_t now_ms);
	bool (*update)(struct nftdp_set *s, const void *key, const void *data, uint64_t timeout_ms,
		       bool refresh, uint64_t now_ms);
	void (*remove)(struct nftdp_set *s, const void *key, uint64_t now_ms);
	/** lookup in set generation gen (nftdp_vm_ctx.set_gen, 0: the current
	 * one), sets' nftdp_set_lookup_gen; optional, used instead of lookup */
	bool (*lookup_gen)(const struct nftdp_set *s, const void *key, const void **data,
			   uint64_t now_ms, uint64_t gen);
};

/** What the resolver says about a set; compile validates against it. */
struct nftdp_vm_set_info {
	struct nftdp_set *set;
	const struct nftdp_vm_set_ops *ops; /**< NULL: a sets/ set, called directly */
	uint32_t flags;	     /**< NFT_SET_MAP, NFT_SET_OBJECT, NFT_SET_TIMEOUT, NFT_SET_EVAL... */
	uint32_t klen;	     /**< key bytes (register layout) */
	uint32_t dlen;	     /**< data bytes of a map (16 for verdict maps, as the kernel) */
	uint32_t dtype;	     /**< NFT_DATA_VALUE or NFT_DATA_VERDICT */
	uint32_t objtype;    /**< NFT_OBJECT_* of an object map */
	uint64_t timeout_ms; /**< the set's default timeout */
	/** element counters: 1 + offset in the element data of a uint32_t that
	 * holds 1 + the element's counter slot (0 there: none); 0: the set has
	 * no element counters */
	uint32_t elem_counter_at;
	/** per-element expressions (meters): 1 + offset in the element data
	 * of NFTDP_VM_ELEM_EXPR_SIZE bytes that nftdp_vm_elem_expr_init
	 * filled; 0: the set's elements carry none */
	uint32_t elem_expr_at;
	/** the set's own expressions (NFTA_SET_EXPR[ESSIONS]) in that form,
	 * which dynset clones into the elements it creates when it has none
	 * of its own; NULL: none. Read only during the resolver call. */
	const void *elem_expr_tmpl;
	/** an element carries `ct count`: lookups need conntrack, as the
	 * kernel's connlimit init turns it on (nf_ct_netns_get) */
	bool elem_uses_ct;
	/** the distinct chains the elements of a verdict map jump or goto,
	 * for nftdp_vm_validate (ELOOP, EMLINK, a base chain): chains of the
	 * generation being built. Read only during the resolver call (compile
	 * keeps a copy), so a commit that changes them must compile again
	 * the chains that look the map up. */
	const struct nftdp_vm_chain *const *vchains;
	uint32_t n_vchains;
};

/* ------------------------------------------------------------------ */
/* Per-element expressions (meters: nft_set_elem_expr)                 */

#define NFTDP_VM_ELEM_EXPR_MAX 2   /**< NFT_SET_EXPR_MAX */
#define NFTDP_VM_ELEM_EXPR_SIZE 96 /**< bytes of element data they take */

/** Types of the stateful expressions an element can carry. */
enum nftdp_vm_elem_expr_type {
	NFTDP_VM_ELEM_EXPR_NONE = 0,
	NFTDP_VM_ELEM_EXPR_COUNTER,
	NFTDP_VM_ELEM_EXPR_QUOTA,
	NFTDP_VM_ELEM_EXPR_LIMIT,
	NFTDP_VM_ELEM_EXPR_CONNLIMIT, /**< `ct count`, any N */
	NFTDP_VM_ELEM_EXPR_LAST,      /**< `last`: when the element last matched */
};

/** The largest N of a per-element `ct count [over] N` whose list of
 * connections lives in the element itself (N + 1 of them decide "over
 * N"); with another expression beside it, NFTDP_VM_ELEM_CONNLIMIT_MAX2.
 * A larger N keeps its list in a block of the set's store, bound by
 * nftdp_vm_elem_expr_bind(). */
#define NFTDP_VM_ELEM_CONNLIMIT_MAX 10
#define NFTDP_VM_ELEM_CONNLIMIT_MAX2 4
/** The most keys a `ct count` list keeps: min(N + 1, this); an element
 * with more live connections counts this many (plus a new one). */
#define NFTDP_VM_ELEM_CONNLIMIT_KEYS 65536u
/** The most bytes of blocks one set's store takes (one store per power
 * of two of keys, 16 to 65536; virtual: zero pages until a list uses
 * them); fewer blocks than the set holds elements when its elements
 * times the keys would take more. */
#define NFTDP_VM_ELEM_LISTS_BYTES (256ull << 20)

/** One element expression's parameters and values, as netlink has them. */
struct nftdp_vm_elem_expr {
	uint32_t type;	     /**< enum nftdp_vm_elem_expr_type */
	uint32_t flags;	     /**< NFTA_QUOTA_FLAGS / NFTA_LIMIT_FLAGS */
	uint64_t packets;    /**< counter */
	uint64_t bytes;	     /**< counter */
	uint64_t quota;	     /**< quota: NFTA_QUOTA_BYTES */
	uint64_t consumed;   /**< quota: NFTA_QUOTA_CONSUMED (read: not capped) */
	uint64_t rate;	     /**< limit */
	uint64_t unit;	     /**< limit, seconds */
	uint32_t burst;	     /**< limit (read: 5 for an unset packet burst, as the kernel) */
	uint32_t limit_type; /**< NFT_LIMIT_PKTS / NFT_LIMIT_PKT_BYTES */
	uint32_t count;	     /**< connlimit: NFTA_CONNLIMIT_COUNT (flags: _FLAGS) */
	uint32_t last_set;   /**< last: NFTA_LAST_SET (0: never used) */
	uint64_t last_msecs; /**< last: NFTA_LAST_MSECS, milliseconds since its use */
};

/**
 * Lay out n <= NFTDP_VM_ELEM_EXPR_MAX expressions into area
 * (NFTDP_VM_ELEM_EXPR_SIZE bytes of element data, 8-byte aligned), a new
 * element's state: counters and quotas from their values, limits with a full
 * bucket (nft_limit_init). Control path.
 * A `ct count` above NFTDP_VM_ELEM_CONNLIMIT_MAX[2] needs
 * nftdp_vm_elem_expr_bind() before workers evaluate area.
 * @return 0, -EINVAL (bad quota flags, rate 0), -EOVERFLOW, -EOPNOTSUPP
 *   (limit or connlimit flags), -E2BIG (n too large).
 */
int nftdp_vm_elem_expr_init(void *area, const struct nftdp_vm_elem_expr *v, unsigned int n);

/**
 * Bind area's `ct count` lists too long for the element to set's store of
 * blocks (created on first use, the set's side object, freed with the
 * set), and have sets/ release an element's block when the element is
 * freed (its expressions at off in the element's data). area is an
 * element's data being inserted or a template dynset copies into new
 * elements. Control path. No-op without such a list.
 * @return 0, -ENOMEM, -EOPNOTSUPP (set NULL where a list needs it).
 */
int nftdp_vm_elem_expr_bind(void *area, struct nftdp_set *set, uint32_t off);

/**
 * An element freed for good (its grace period over): give its `ct count`
 * block back to the set's store. Control path (sets/' release hook).
 */
void nftdp_vm_elem_expr_release(void *area);

/**
 * The expressions of area with their live values (nft_set_elem_expr_dump).
 * Control path; safe while workers update area.
 * @return how many (0..NFTDP_VM_ELEM_EXPR_MAX).
 */
unsigned int nftdp_vm_elem_expr_read(const void *area,
				     struct nftdp_vm_elem_expr out[NFTDP_VM_ELEM_EXPR_MAX]);

/* ------------------------------------------------------------------ */
/* synproxy: syncookies and TCP options (vm/synproxy.c)                */
/* ------------------------------------------------------------------ */

/** Pick the cookie secret once per process (getrandom). Control-path, any thread. */
void nftdp_vm_synproxy_init(void);
/** Set the cookie secret (tests). Control-path, before any worker runs. */
void nftdp_vm_synproxy_set_secret(const uint8_t key[32]);
/**
 * synproxy_parse_options over the TCP header th with avail bytes of it in
 * the packet. false when the header or its options are cut short (the
 * kernel's skb_header_pointer failing); opts->options is reset first, the
 * other fields only written for options present. Packet-path.
 */
bool nftdp_vm_synproxy_parse_options(const uint8_t *th, uint32_t avail,
				     struct nftdp_vm_synproxy_opts *opts);
/** nft_synproxy_tcp_options: what the SYN-ACK to a client's SYN th carries. */
void nftdp_vm_synproxy_tcp_options(const struct nftdp_vm_synproxy_info *info, const uint8_t *th,
				   struct nftdp_vm_synproxy_opts *opts, uint64_t now_ms);
/** synproxy_init_timestamp_cookie (now_ms: tcp_clock_ms) */
void nftdp_vm_synproxy_init_timestamp_cookie(const struct nftdp_vm_synproxy_info *info,
					     struct nftdp_vm_synproxy_opts *opts, uint64_t now_ms);
/** synproxy_check_timestamp_cookie: options back from the echoed TSecr */
void nftdp_vm_synproxy_check_timestamp_cookie(struct nftdp_vm_synproxy_opts *opts);
/**
 * __cookie_v4/v6_init_sequence for the SYN th under IP header ip, in
 * minute `minute` (tcp_cookie_time). *mss becomes the table's MSS at or
 * below it (536/1300/1440/1460; IPv6 1220/1420/1440/8940). Packet-path.
 */
uint32_t nftdp_vm_synproxy_cookie_init(const uint8_t *ip, bool v6, const uint8_t *th, uint16_t *mss,
				       uint32_t minute);
/** __cookie_v4/v6_check of the ACK th: the MSS the cookie carries, 0 if invalid. */
uint16_t nftdp_vm_synproxy_cookie_check(const uint8_t *ip, bool v6, const uint8_t *th,
					uint32_t minute);
/** synproxy_options_size / synproxy_build_options (th: the TCP header) */
uint32_t nftdp_vm_synproxy_options_size(const struct nftdp_vm_synproxy_opts *opts);
void nftdp_vm_synproxy_build_options(uint8_t *th, const struct nftdp_vm_synproxy_opts *opts);
/**
 * synproxy_send_client_synack's packet: IP header and TCP SYN-ACK with the
 * cookie, answering the SYN th under ip, into out. @return its length (IP
 * and TCP), 0 when cap is too small. Packet-path.
 */
uint32_t nftdp_vm_synproxy_synack_build(const uint8_t *ip, bool v6, const uint8_t *th,
					const struct nftdp_vm_synproxy_opts *opts, uint32_t minute,
					uint8_t *out, uint32_t cap);
/**
 * The SYN-ACK answering the SYN th (thlen bytes of TCP header and beyond
 * in the packet) under ip that a synproxy with info stole
 * (out.synproxy): its options parsed and chosen as
 * nft_synproxy_tcp_options does at now_ms (the VM's ctx->now_ms clock),
 * the cookie of minute now_ms / 60000, written by
 * nftdp_vm_synproxy_synack_build. @return the length, 0 when the options
 * cannot be parsed or cap is too small. Packet-path.
 */
uint32_t nftdp_vm_synproxy_answer(const uint8_t *ip, bool v6, const uint8_t *th, uint32_t thlen,
				  const struct nftdp_vm_synproxy_info *info, uint64_t now_ms,
				  uint8_t *out, uint32_t cap);

/*
 * The server side's segments (nf_synproxy_core.c), IP header and TCP
 * header with opts' options into out; each @return its length, 0 when cap
 * is too small. Packet-path. Not wired into the dataplane yet: a valid
 * cookie's ACK is still dropped (docs/vm.md).
 *
 * server_syn: synproxy_send_server_syn for the client's ACK th under ip
 * (recv_seq: the ACK's seq + 0, or + 1 for a keep-alive): same addresses
 * and ports, seq recv_seq - 1, ack the cookie (ack - 1) to relay the ISN,
 * SYN (ECE|CWR with ECN), the ACK's window.
 * server_ack: synproxy_send_server_ack for the server's SYN-ACK th under
 * ip: back to the server, seq its ack, ack its seq + 1, window maxwin
 * (the original direction's td_maxwin).
 * client_ack: synproxy_send_client_ack, the window update to the client
 * for the same SYN-ACK: seq + 1, its ack, its window >> opts->wscale.
 */
uint32_t nftdp_vm_synproxy_server_syn_build(const uint8_t *ip, bool v6, const uint8_t *th,
					    const struct nftdp_vm_synproxy_opts *opts,
					    uint32_t recv_seq, uint8_t *out, uint32_t cap);
uint32_t nftdp_vm_synproxy_server_ack_build(const uint8_t *ip, bool v6, const uint8_t *th,
					    const struct nftdp_vm_synproxy_opts *opts,
					    uint16_t maxwin, uint8_t *out, uint32_t cap);
uint32_t nftdp_vm_synproxy_client_ack_build(const uint8_t *ip, bool v6, const uint8_t *th,
					    const struct nftdp_vm_synproxy_opts *opts, uint8_t *out,
					    uint32_t cap);
/**
 * synproxy_tstamp_adjust on the TCP header th (thlen bytes, options
 * included) of a connection whose timestamp offset is tsoff: in the reply
 * direction TSval -= tsoff, else TSecr += tsoff, the checksum updated.
 * @return false for malformed options (nothing changed), else true.
 * Packet-path.
 */
bool nftdp_vm_synproxy_tstamp_adjust(uint8_t *th, uint32_t thlen, bool reply, uint32_t tsoff);
/**
 * synproxy_recv_client_ack and synproxy_send_server_syn: the SYN to the
 * server (IP header and TCP, as nftdp_vm_synproxy_server_syn_build) for
 * the client's ACK th (thlen bytes) under ip, with the MSS its cookie
 * holds and, with timestamps, the window scale, SACK and ECN of its
 * timestamp cookie; its sequence number is th's + seq_add - 1 (seq_add 1
 * for an ACK seen again while the server has not answered). @return the
 * length, 0 when the cookie (at now_ms) or the options are not valid or
 * cap is too small. Packet-path.
 */
uint32_t nftdp_vm_synproxy_server_syn(const uint8_t *ip, bool v6, const uint8_t *th, uint32_t thlen,
				      uint32_t seq_add, uint64_t now_ms, uint8_t *out,
				      uint32_t cap);

/* ------------------------------------------------------------------ */
/* ipset: the sets xt_set matches read (vm/expr_compat_set.c)          */

/** ipset set types nftdp builds (control/ipset.c) */
enum nftdp_vm_ipset_kind {
	NFTDP_VM_IPSET_HASH_IP,
	NFTDP_VM_IPSET_HASH_NET,
	NFTDP_VM_IPSET_HASH_IPPORT,
	NFTDP_VM_IPSET_HASH_NETPORT,
	NFTDP_VM_IPSET_HASH_IPPORTIP,
	NFTDP_VM_IPSET_BITMAP_IP,
	NFTDP_VM_IPSET_BITMAP_PORT,
	NFTDP_VM_IPSET_LIST_SET,
	NFTDP_VM_IPSET_HASH_IPPORTNET, /**< ip2/cidr: the net */
	NFTDP_VM_IPSET_HASH_NETIFACE,  /**< ip2: the name, port: physdev, proto: wildcard */
	NFTDP_VM_IPSET_BITMAP_IPMAC,   /**< ip: the key; e[].mac the element's MAC */
};

/** One element's key; unused fields zero (compared as bytes). */
struct nftdp_vm_ipset_key {
	uint8_t ip[16], ip2[16]; /**< network order, IPv4 in the first 4 bytes */
	uint16_t port;		 /**< host order; ICMP: type << 8 | code */
	uint8_t proto, cidr;
	uint16_t id; /**< list:set: the member set's index */
};

/** FNV-1a of a key: the bucket of a key, in control/ and on workers. */
static inline uint32_t nftdp_vm_ipset_hash(const struct nftdp_vm_ipset_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

struct nftdp_vm_ipset_elem {
	struct nftdp_vm_ipset_key k;
	uint64_t expire_ms; /**< CLOCK_MONOTONIC ms (nftdp_now_ms); 0: never */
	int32_t next;	    /**< next in the bucket, -1: none */
	bool nomatch;
	uint16_t skbqueue; /**< skbinfo (sets created with it): what --map-set applies */
	uint32_t skbmark, skbmarkmask, skbprio;
	/** bitmap:ip,mac: the MAC when mac_set; an element without one is
	 * filled in by the first packet that matches it */
	bool mac_set;
	uint8_t mac[6];
	/** counters (sets created with them): what packets add, shared by
	 * every worker (relaxed atomic adds) */
	_Atomic uint64_t packets, bytes;
	/** the counters the control thread last folded into its own copy
	 * (control path only) */
	uint64_t base_packets, base_bytes;
};

/** One set's contents as workers read them: immutable once published. */
struct nftdp_vm_ipset {
	uint8_t kind, family; /**< enum nftdp_vm_ipset_kind, NFPROTO_* (UNSPEC: any) */
	uint8_t netmask;      /**< hash:ip, bitmap:ip: addresses masked to it */
	uint8_t dim;	      /**< the type's dimension (1..3) */
	bool skbinfo;	      /**< created with skbinfo: elements carry e[].skb* */
	bool counters;	      /**< created with counters: packets count into e[] */
	const void *owner;    /**< the control thread's set it copies (opaque) */
	uint32_t first, last; /**< bitmap range, host order */
	bool cidrs[129];      /**< hash:net*, hash:ip,port,net: prefix lengths present */
	uint32_t n, nhead;    /**< elements, buckets (a power of two) */
	int32_t *head;
	struct nftdp_vm_ipset_elem *e;
};

/**
 * Allocate a set of n elements and nhead (a power of two) empty buckets,
 * e[] and head[] to be filled by the caller. NULL when out of memory.
 * Control path.
 */
struct nftdp_vm_ipset *nftdp_vm_ipset_alloc(uint32_t n, uint32_t nhead);
/** Free a set nftdp_vm_ipset_alloc made. */
void nftdp_vm_ipset_free(struct nftdp_vm_ipset *s);
/**
 * Publish s (or NULL) as set index id for the workers; returns the one it
 * replaces, to be freed after a grace period (nftdp_vm_gen_synchronize).
 * Control path, one thread.
 */
struct nftdp_vm_ipset *nftdp_vm_ipset_publish(uint16_t id, struct nftdp_vm_ipset *s);
/** The set published as index id, or NULL. Control path (the one writer). */
struct nftdp_vm_ipset *nftdp_vm_ipset_get(uint16_t id);

/*
 * -j SET (xt_SET): a packet's add or delete goes to the control thread,
 * which owns the sets, through the worker's single-producer ring (no
 * lock, no allocation on the packet path); a full ring loses the event
 * (counted). The control thread applies them as ip_set_add/ip_set_del
 * would and publishes the changed sets, so every worker and `ipset list`
 * see them after its next poll.
 */
#define NFTDP_VM_IPSET_EV_EXIST 0x01 /**< --exist: re-add refreshes the element */
#define NFTDP_VM_IPSET_EV_ALT 0x02   /**< a list:set member's try: only if the last one failed */
#define NFTDP_VM_IPSET_EV_MAC 0x04   /**< bitmap:ip,mac: mac holds the packet's MAC */

/** One add or delete a packet asked for. */
struct nftdp_vm_ipset_event {
	struct nftdp_vm_ipset_key k;
	uint16_t id;	  /**< the set's index */
	uint8_t del;	  /**< 0: IPSET_ADD, 1: IPSET_DEL */
	uint8_t flags;	  /**< NFTDP_VM_IPSET_EV_* */
	uint32_t timeout; /**< add: seconds, UINT32_MAX: the set's default */
	uint32_t len;	  /**< add: the packet's length (a new element's bytes) */
	uint8_t mac[6];	  /**< NFTDP_VM_IPSET_EV_MAC: bitmap:ip,mac's MAC */
};

/**
 * Queue one packet's n events on worker's ring, all or none; false (and
 * counted lost) when the ring lacks room. Packet path of that worker.
 */
bool nftdp_vm_ipset_put(unsigned int worker, const struct nftdp_vm_ipset_event *ev, unsigned int n);
/**
 * Drain every worker's ring in order, calling cb for each event; cb
 * returns 0 when it changed the set (an ALT event after a success is
 * skipped without a call). Returns the events read. Control path, one
 * reader.
 */
unsigned int nftdp_vm_ipset_poll(int (*cb)(const struct nftdp_vm_ipset_event *ev, void *arg),
				 void *arg);
/** Events lost on full rings since the start, all workers. */
uint64_t nftdp_vm_ipset_lost(void);

/**
 * Whether the ip hooks see bridged IP (wire mode: a --wire pair is a
 * bridge, br_netfilter's view), for xt_physdev: the rx port is the
 * physindev and, at forward and postrouting, the tx port the physoutdev.
 * Off (--router): no packet crossed a bridge. Set before the workers run.
 */
void nftdp_vm_physdev_bridged(bool on);

/* ------------------------------------------------------------------ */
/* osf: the OS fingerprint database (nfnetlink_osf)                    */

struct nf_osf_user_finger;
struct nftdp_vm_osf_db;

/**
 * OSF_MSG_ADD (nfnl_osf_add_callback): publish a database with f appended
 * to its don't-fragment list, unless an identical record is there (then
 * nothing, or -EEXIST with excl: NLM_F_EXCL). *old is the replaced
 * database, to free with nftdp_vm_osf_db_free() after a grace period
 * (NULL: none). Control path, one thread.
 * @return 0, -EINVAL (opt_num, an unterminated string, option lengths),
 *   -EEXIST, -ENOMEM.
 */
int nftdp_vm_osf_db_add(const struct nf_osf_user_finger *f, bool excl,
			struct nftdp_vm_osf_db **old);
/** OSF_MSG_REMOVE: as nftdp_vm_osf_db_add(); -ENOENT when f is not there. */
int nftdp_vm_osf_db_remove(const struct nf_osf_user_finger *f, struct nftdp_vm_osf_db **old);
/** Free a database nftdp_vm_osf_db_add/_remove handed back. */
void nftdp_vm_osf_db_free(struct nftdp_vm_osf_db *db);

/**
 * Whether area (or a set's template in that form) holds a `ct count`.
 * Control path.
 */
bool nftdp_vm_elem_expr_uses_ct(const void *area);

/**
 * The set gc's question to an element's expressions (nft_connlimit_gc):
 * drop the connections of its `ct count` that are gone (ops->conn_live
 * with ct NULL) and say whether none is left, so the element goes.
 * Control path, beside workers that evaluate area.
 * @return true when area holds a `ct count` with an empty list.
 */
bool nftdp_vm_elem_expr_gc(void *area, const struct nftdp_vm_ct_ops *ops);

struct nftdp_vm_obj;

/**
 * How compile resolves names. Every callback is optional; a missing one
 * resolves nothing (-ENOENT). Strings are NUL-terminated.
 */
struct nftdp_vm_resolver {
	void *opaque;
	/** chain by table+name (or by NFTA_IMMEDIATE_CHAIN_ID when name is NULL) */
	struct nftdp_vm_chain *(*chain)(void *opaque, const char *table, const char *name,
					uint32_t chain_id);
	/** set by name, or by transaction id when name is NULL; 0 or -ENOENT */
	int (*set)(void *opaque, const char *table, const char *name, uint32_t set_id,
		   struct nftdp_vm_set_info *out);
	/** named stateful object by name and NFT_OBJECT_* type */
	const struct nftdp_vm_obj *(*obj)(void *opaque, const char *table, const char *name,
					  uint32_t type);
};

/* ------------------------------------------------------------------ */
/* Stateful arena                                                      */

struct nftdp_vm_state;

struct nftdp_vm_state_config {
	unsigned int n_workers;	      /**< worker ids 0 .. n_workers-1 */
	unsigned int max_counters;    /**< counter slots (per worker) */
	unsigned int max_cells;	      /**< shared cells: quota, limit, last, numgen */
	unsigned int log_ring_size;   /**< entries per worker, power of 2 */
	unsigned int trace_ring_size; /**< trace events per worker, power of 2 (0: 512) */
	unsigned int nflog_ring_size; /**< nflog ring bytes per worker, power of 2 (0: 256 KiB) */
	uint32_t hash_seed;	      /**< default seed for hash without NFTA_HASH_SEED */
	/** a host stack beside the dataplane (--host-ports): redirect has
	 * somewhere to go, and compiles */
	bool local_stack;
};

/** One per-worker counter slot. */
struct nftdp_vm_counter {
	uint64_t packets;
	uint64_t bytes;
};

/** Values of a stateful expression or object, as nft lists them. */
struct nftdp_vm_stateful_val {
	uint32_t type;	   /**< NFT_OBJECT_COUNTER, _QUOTA, _LIMIT, or 0x100 for last */
	uint64_t packets;  /**< counter */
	uint64_t bytes;	   /**< counter; quota: limit bytes */
	uint64_t consumed; /**< quota: consumed (not capped; cap when listing) */
	bool last_set;	   /**< last: ever used */
	uint64_t last_ms;  /**< last: time of last use (ctx->now_ms clock) */
};

/**
 * Create the arena. 0, -EINVAL (bad config) or -ENOMEM. Control-path.
 */
int nftdp_vm_state_create(const struct nftdp_vm_state_config *cfg, struct nftdp_vm_state **out);
/** Destroy the arena; no generation may use it any more. Control-path. */
void nftdp_vm_state_destroy(struct nftdp_vm_state *st);

/**
 * Start compiling a new generation: slots used by what is compiled from now
 * on are marked with the returned generation number. Control-path.
 */
uint64_t nftdp_vm_state_gen_begin(struct nftdp_vm_state *st);

/**
 * Release every slot not used by generation keep_gen or later. Call once
 * every worker has quiesced past the older generations. Control-path.
 * @return the number of slots released.
 */
unsigned int nftdp_vm_state_sweep(struct nftdp_vm_state *st, uint64_t keep_gen);

/**
 * The generation gen (the last nftdp_vm_state_gen_begin) will never be
 * published: release the slots it created, so a failed batch gives back all
 * it reserved. Called by nftdp_vm_gen_builder_destroy() for a generation
 * that was not built. Control-path.
 * @return the number of slots released.
 */
unsigned int nftdp_vm_state_gen_abort(struct nftdp_vm_state *st, uint64_t gen);

/**
 * Read (and optionally reset) the state of expression expr_index (0-based,
 * in rule order) of rule handle in family/table. Counters are summed over
 * workers. 0, or -ENOENT when that expression has no state. Control-path;
 * concurrent with workers (counter reads are not atomic snapshots).
 */
int nftdp_vm_state_read_rule(struct nftdp_vm_state *st, uint8_t family, const char *table,
			     uint64_t handle, uint32_t expr_index, bool reset,
			     struct nftdp_vm_stateful_val *out);

/**
 * A counter slot for what lives outside rules and objects (a set element's
 * counter), by a caller-chosen key: created with packets/bytes as its start
 * values, or found; kept until nftdp_vm_state_unpin() (no generation sweep
 * releases it). 0 and *slot, -ENOSPC, -ENOMEM. Control-path.
 */
int nftdp_vm_state_pin_counter(struct nftdp_vm_state *st, const char *key, uint64_t packets,
			       uint64_t bytes, uint32_t *slot);
/** Let the next sweep release a pinned slot (after a grace period: workers
 * may still count into it until then). Control-path. */
void nftdp_vm_state_unpin(struct nftdp_vm_state *st, const char *key);
/** Read (and optionally reset) the slot of key. Control-path. */
int nftdp_vm_state_read_key(struct nftdp_vm_state *st, const char *key, bool reset,
			    struct nftdp_vm_stateful_val *out);

/** The same for a named object (family, table, name, NFT_OBJECT_* type). */
int nftdp_vm_state_read_obj(struct nftdp_vm_state *st, uint8_t family, const char *table,
			    const char *name, uint32_t type, bool reset,
			    struct nftdp_vm_stateful_val *out);

/** Base chain statistics (policy hits): its own counter slot. */
int nftdp_vm_chain_stats(const struct nftdp_vm_chain *chain, struct nftdp_vm_state *st,
			 struct nftdp_vm_counter *out);

/** The same by name (family, table, chain): -ENOENT while no generation
 * runs the chain as a base chain (a dormant table's). Control-path. */
int nftdp_vm_state_read_chain(struct nftdp_vm_state *st, uint8_t family, const char *table,
			      const char *name, struct nftdp_vm_counter *out);

/** Set a base chain's statistics to packets/bytes (nft_chain_stats_replace:
 * a chain update with NFTA_CHAIN_COUNTERS). The workers keep counting on
 * top; -ENOENT as above. Control-path. */
int nftdp_vm_state_set_chain(struct nftdp_vm_state *st, uint8_t family, const char *table,
			     const char *name, uint64_t packets, uint64_t bytes);
/** The same for a rule's counter (family, table, rule handle, expression
 * index): a rule that replaces one (NLM_F_REPLACE keeps the handle, so the
 * slot) starts from its own values. Control-path. */
int nftdp_vm_state_set_rule(struct nftdp_vm_state *st, uint8_t family, const char *table,
			    uint64_t handle, uint32_t expr_index, uint64_t packets, uint64_t bytes);

/** One log event recorded by a worker; the control thread prints it. */
struct nftdp_vm_log_event {
	char prefix[NFTDP_VM_LOG_PREFIXLEN];
	uint32_t level; /**< NFT_LOGLEVEL_*, when !group_set */
	uint16_t group; /**< nflog group, when group_set */
	bool group_set;
	uint32_t flags; /**< NF_LOG_* */
	uint32_t snaplen;
	uint8_t family, hook;
	uint32_t iif, oif;
	uint32_t mark;
	uint16_t caplen;
	uint8_t pkt[128]; /**< first bytes from the network header */
};

/**
 * In a log event's flags: an ebtables log watcher's (ebt_log.c). Its
 * other flags are EBT_LOG_*, level the syslog level, snaplen the frame's
 * bytes from the network header, and pkt the MAC header (destination,
 * source, the ethertype before the network header) then the network
 * header's first bytes.
 */
#define NFTDP_VM_LOG_F_EBT 0x80000000u

/**
 * ebt_log_packet's line for such an event (without its level and
 * newline), in and out the devices' names; returns its length (at most
 * size - 1, NUL-terminated).
 */
size_t nftdp_vm_ebt_log_line(const struct nftdp_vm_log_event *ev, const char *in, const char *out,
			     char *buf, size_t size);

/**
 * Drain worker's log ring, calling cb for each event; returns the number of
 * events handed out. *lost (optional) gets events dropped on a full ring.
 * Control-path; one reader per ring.
 */
unsigned int nftdp_vm_log_poll(struct nftdp_vm_state *st, unsigned int worker,
			       void (*cb)(const struct nftdp_vm_log_event *ev, void *arg),
			       void *arg, uint64_t *lost);

/* ------------------------------------------------------------------ */
/* nfnetlink_log (`log group N`; vm/nflog.c, docs/vm.md "nflog")       */
/*                                                                    */
/* While control/ has an instance bound to group N                    */
/* (nftdp_vm_nflog_bind), a `log group N` records what                */
/* nfulnl_log_packet reads from the skb into the worker's nflog ring, */
/* a single-producer byte ring of variable-size records; the control  */
/* thread drains it (nftdp_vm_nflog_poll) and builds                  */
/* NFULNL_MSG_PACKET. An unbound group costs one bit test; a full     */
/* ring loses the event (counted), never the packet.                  */
/* ------------------------------------------------------------------ */

#define NFTDP_VM_NFLOG_MAC_MAX 32      /**< link-layer header bytes kept */
#define NFTDP_VM_NFLOG_COPY_MAX 65531u /**< NFULNL_COPY_RANGE_MAX */

/** One `log group` event as the control thread reads it. */
struct nftdp_vm_nflog_event {
	uint32_t size;	     /**< bytes of the record, 8-aligned (ring use) */
	uint16_t group;	     /**< li->u.ulog.group */
	uint16_t qthreshold; /**< li->u.ulog.qthreshold, 0: the instance's */
	uint32_t copy_len;   /**< li->u.ulog.copy_len (NF_LOG_F_COPY_LEN), UINT32_MAX: none */
	uint8_t family;	     /**< pf given to nf_log_packet (nft_pf) */
	uint8_t hook;
	uint16_t hw_protocol; /**< skb->protocol, network byte order */
	uint32_t iif, oif;    /**< ifindex, 0: no device */
	uint16_t iiftype, oiftype;
	uint32_t mark;
	uint64_t tstamp_ns; /**< wall clock */
	uint32_t skb_len;   /**< skb->len at the hook */
	uint32_t data_len;  /**< payload bytes recorded (after the prefix) */
	uint8_t mac_len;    /**< mac header to network header, 0: no mac header */
	bool mac_set;	    /**< skb_mac_header_was_set */
	uint8_t prefix_len; /**< prefix bytes with its NUL */
	uint8_t pad;
	uint8_t mac[NFTDP_VM_NFLOG_MAC_MAX];
	uint8_t data[]; /**< prefix (prefix_len), then payload (data_len) from skb->data */
};

/**
 * Tell the workers whether `log group group` has an instance to go to
 * (instance_lookup_get_rcu found one). Control-path; workers see it at
 * their next `log` op.
 */
void nftdp_vm_nflog_bind(struct nftdp_vm_state *st, uint16_t group, bool bound);

/** Whether group is bound (packet path: one relaxed load). */
bool nftdp_vm_nflog_bound(const struct nftdp_vm_state *st, uint16_t group);

/**
 * Drain every worker's nflog ring, calling cb for each event (one worker's
 * in order); returns the number handed out. Control-path; one reader.
 */
unsigned int nftdp_vm_nflog_poll(struct nftdp_vm_state *st,
				 void (*cb)(const struct nftdp_vm_nflog_event *ev, void *arg),
				 void *arg);

/** Events lost on full nflog rings, all workers. Control-path. */
uint64_t nftdp_vm_nflog_lost(const struct nftdp_vm_state *st);

/* ------------------------------------------------------------------ */
/* Tracing (`meta nftrace set 1`, `nft monitor trace`; vm/trace.c)     */
/*                                                                    */
/* While nftdp_vm_trace_listen(st, true) (someone joined              */
/* NFNLGRP_NFTRACE), a chain run of a packet whose nftrace bit is set  */
/* records the events nft_do_chain sends (a rule that ends with        */
/* continue, a rule's verdict or a chain's end, the base chain's      */
/* policy) in the worker's trace ring; the control thread drains the   */
/* rings with nftdp_vm_trace_poll() and sends NFT_MSG_TRACE. A full    */
/* ring loses the event (counted), never the packet.                   */
/* ------------------------------------------------------------------ */

#define NFTDP_VM_TRACE_LL_HSIZE 20	  /**< NFT_TRACETYPE_LL_HSIZE */
#define NFTDP_VM_TRACE_NETWORK_HSIZE 40	  /**< NFT_TRACETYPE_NETWORK_HSIZE */
#define NFTDP_VM_TRACE_TRANSPORT_HSIZE 20 /**< NFT_TRACETYPE_TRANSPORT_HSIZE */
#define NFTDP_VM_TRACE_NAMELEN 256	  /**< NFT_TABLE_MAXNAMELEN / NFT_CHAIN_MAXNAMELEN */

/** One NFT_MSG_TRACE, as nft_trace_notify fills it. */
struct nftdp_vm_trace_event {
	uint32_t id;	  /**< NFTA_TRACE_ID (host order) */
	uint32_t type;	  /**< NFT_TRACETYPE_RULE, _RETURN or _POLICY */
	uint8_t family;	  /**< the base chain's table family (nfgen_family) */
	uint8_t nfproto;  /**< NFTA_TRACE_NFPROTO: the hook's family */
	bool has_handle;  /**< NFTA_TRACE_RULE_HANDLE present */
	bool has_verdict; /**< NFTA_TRACE_VERDICT present (rule and return events) */
	bool has_policy;  /**< NFTA_TRACE_POLICY present (policy events) */
	bool packet;	  /**< the first event of the base chain: devices and headers */
	uint8_t ll_len, nh_len, th_len; /**< header bytes copied, 0: attribute absent */
	uint64_t handle;
	uint32_t verdict; /**< verdict code (NF_ACCEPT, NFT_JUMP ...) */
	uint32_t policy;
	uint32_t mark;	   /**< 0: NFTA_TRACE_MARK absent */
	uint32_t iif, oif; /**< ifindex, 0: no device (attribute absent) */
	uint16_t iiftype, oiftype;
	uint8_t ll[NFTDP_VM_TRACE_LL_HSIZE];
	uint8_t nh[NFTDP_VM_TRACE_NETWORK_HSIZE];
	uint8_t th[NFTDP_VM_TRACE_TRANSPORT_HSIZE];
	char table[NFTDP_VM_TRACE_NAMELEN];
	char chain[NFTDP_VM_TRACE_NAMELEN];
	char target[NFTDP_VM_TRACE_NAMELEN]; /**< jump/goto target, "" otherwise */
};

/**
 * Turn event recording on or off (nfnetlink_has_listeners(NFNLGRP_NFTRACE)):
 * off, traced packets record nothing. Control-path; workers see it at
 * their next chain run.
 */
void nftdp_vm_trace_listen(struct nftdp_vm_state *st, bool on);

/**
 * Drain every worker's trace ring, calling cb for each event (a packet's
 * events come in order: one worker records them all); returns the number
 * handed out. Control-path; one reader.
 */
unsigned int nftdp_vm_trace_poll(struct nftdp_vm_state *st,
				 void (*cb)(const struct nftdp_vm_trace_event *ev, void *arg),
				 void *arg);

/** Trace events lost on full rings, all workers. Safe from any thread. */
uint64_t nftdp_vm_trace_lost(const struct nftdp_vm_state *st);

/* ------------------------------------------------------------------ */
/* Compile                                                             */

/** Where compile failed, for the extack: the expression and a message. */
struct nftdp_vm_error {
	int err;		   /**< the negative errno returned */
	int expr_index;		   /**< failing expression in the rule, -1 if none */
	char msg[NFTDP_VM_ERRLEN]; /**< e.g. "queue: not supported by nftdp" */
};

/** What a chain is: enough to validate hooks and resolve names. */
struct nftdp_vm_chain_desc {
	uint8_t family; /**< NFPROTO_* of the table */
	const char *table;
	const char *name;
	bool base;
	uint8_t hook;	   /**< base chains */
	uint32_t policy;   /**< NF_ACCEPT or NF_DROP, base chains */
	uint32_t chain_id; /**< index in nftdp_vm_ctx.chains (verdict maps) */
	/** devices of a netdev (or inet ingress) base chain, as ifindexes: it
	 * runs only for packets whose iif (ingress) / oif (egress) is one of
	 * them; none (a device that does not exist): it never runs */
	const uint32_t *ifindex;
	uint32_t n_ifindex;
	/** a nat-type base chain: not in the hook's list but in its NAT list,
	 * run by nftdp_vm_gen_run_nat() for connections being set up */
	bool nat;
};

/**
 * Create an empty chain. 0, -EINVAL (policy not accept/drop), -ENOMEM.
 * Control-path. The pointer is stable: rules of other chains may jump to it
 * before it has rules.
 */
int nftdp_vm_chain_create(const struct nftdp_vm_chain_desc *desc, struct nftdp_vm_state *st,
			  struct nftdp_vm_chain **out);

/**
 * xt_find_revision for the xtables extensions the match and target
 * expressions run (NFNL_MSG_COMPAT_GET): family NFPROTO_IPV4 or _IPV6.
 * @return the best revision of name, -EPROTONOSUPPORT if rev is not one of
 *   its revisions, -ENOENT if nftdp runs no extension of that name.
 * Control-path; thread-safe (reads constant tables).
 */
int nftdp_vm_compat_revision(uint8_t family, const char *name, uint32_t rev, bool target);

/**
 * The size of the info (matchsize / targetsize, unaligned) of an extension
 * the match and target expressions run, -ENOENT for any other.
 * Control-path; thread-safe.
 */
int nftdp_vm_compat_info_size(uint8_t family, const char *name, uint32_t rev, bool target);

/**
 * Compile one rule and append it to chain. Stateful expressions get slots in
 * st keyed by (family, table, rule handle, expression index), so a rule
 * compiled again in a later generation keeps its counters.
 * @return 0, or -EOPNOTSUPP (expression or variant not supported, e.g. queue),
 *   -EINVAL / -ERANGE (registers, lengths, attributes as the kernel),
 *   -ENOENT (set, chain or object), -EOVERFLOW, -ENOSPC (arena full),
 *   -ENOMEM. err (optional) names the expression and the reason.
 * Control-path. Not thread-safe; the chain must not be published yet.
 */
int nftdp_vm_chain_add_rule(struct nftdp_vm_chain *chain, const struct nftnl_rule *rule,
			    const struct nftdp_vm_resolver *res, struct nftdp_vm_state *st,
			    struct nftdp_vm_error *err);

/**
 * Validate the jump graph from a base chain as nft_chain_validate: -ELOOP
 * when a chain can reach itself, -EMLINK past NFT_JUMP_STACK_SIZE levels,
 * -EOPNOTSUPP for a jump to a base chain. Control-path.
 */
int nftdp_vm_validate(const struct nftdp_vm_chain *base, struct nftdp_vm_error *err);

/**
 * Whether every jump target of chain (immediate, a verdict map's vchains)
 * is chains[its chain id]: a chain reused from an earlier generation must
 * not jump into a chain the new one replaced (the caller compiles again
 * every chain that jumps to a changed one). 0, or -EINVAL (err names the
 * jump), -ENOMEM. Control-path.
 */
int nftdp_vm_chain_check_targets(const struct nftdp_vm_chain *chain,
				 struct nftdp_vm_chain *const *chains, uint32_t n_chains,
				 struct nftdp_vm_error *err);

/** Drop a reference to a chain (after quiescence); the last one frees it.
 * Control-path. */
void nftdp_vm_chain_destroy(struct nftdp_vm_chain *chain);

/** One more owner (a generation reusing it). Control-path. */
void nftdp_vm_chain_ref(struct nftdp_vm_chain *chain);

/**
 * The generation being built (after nftdp_vm_state_gen_begin) uses chain,
 * compiled for an earlier one: keep the state slots of its expressions from
 * being swept. Control-path.
 */
void nftdp_vm_chain_keep(struct nftdp_vm_state *st, const struct nftdp_vm_chain *chain);

/** NFPROTO_* of the chain's table. Any thread. */
uint8_t nftdp_vm_chain_family(const struct nftdp_vm_chain *chain);

/** Whether a rule of chain needs connection tracking (ct, notrack, nat,
 * masq, redir, connlimit: the kernel's nf_ct_netns_get). Any thread. */
bool nftdp_vm_chain_uses_ct(const struct nftdp_vm_chain *chain);

/** Whether a rule of chain has a fib expression (the route table must
 * exist before the chain runs). Any thread. */
bool nftdp_vm_chain_uses_fib(const struct nftdp_vm_chain *chain);

/** Whether a rule of chain runs synproxy (statement, object, object map
 * of synproxy objects, xt SYNPROXY). Any thread. */
bool nftdp_vm_chain_uses_synproxy(const struct nftdp_vm_chain *chain);

/** Whether a rule of chain may look connections up in conntrack's table
 * (ct count, or a dynset, whose element expressions may hold one). Any
 * thread. */
bool nftdp_vm_chain_reads_ct_table(const struct nftdp_vm_chain *chain);

/** Whether a rule of chain holds state that other rules see: a dynset, an
 * objref other than a counter's, a log (its lines' order). Control path. */
bool nftdp_vm_chain_shares_state(const struct nftdp_vm_chain *chain);
/** Whether some rule of chain has state that earlier packets move (limit,
 * quota, connlimit, numgen, last, dynset, log order, objects but counters),
 * so the order of the packets it sees shows. */
bool nftdp_vm_chain_order_state(const struct nftdp_vm_chain *chain);

/** Number of rules / ops, for tests and listings. */
uint32_t nftdp_vm_chain_n_rules(const struct nftdp_vm_chain *chain);
uint32_t nftdp_vm_chain_n_ops(const struct nftdp_vm_chain *chain);

/**
 * Compile a named object (counter, quota, limit, ct timeout; others
 * -EOPNOTSUPP). Its state slot is keyed by (family, table, name, type).
 * Control-path.
 */
int nftdp_vm_obj_create(const struct nftnl_obj *obj, struct nftdp_vm_state *st,
			struct nftdp_vm_error *err, struct nftdp_vm_obj **out);
void nftdp_vm_obj_destroy(struct nftdp_vm_obj *obj);

/**
 * An object compiled in an earlier generation is used by the one being
 * built (started with nftdp_vm_state_gen_begin): keep its state slot from
 * being swept. 0, or -ESTALE when its slot was already released (compile
 * it again). Control-path.
 */
int nftdp_vm_obj_keep(struct nftdp_vm_state *st, const struct nftdp_vm_obj *obj);

/* ------------------------------------------------------------------ */
/* Run                                                                 */

enum nftdp_vm_drop_reason {
	NFTDP_VM_DROP_JUMPSTACK,   /**< jump past the stack (validated away; WARN in kernel) */
	NFTDP_VM_DROP_VMAP_CHAIN,  /**< verdict map names a chain id not in ctx->chains */
	NFTDP_VM_DROP_BAD_VERDICT, /**< impossible verdict code */
	NFTDP_VM_DROP_MAX
};

/** Per-worker run context; one writer (its worker). */
struct nftdp_vm_ctx {
	unsigned int worker; /**< counter slot row */
	struct nftdp_vm_state *state;
	const struct nftdp_vm_chain *const *chains; /**< by chain_id, for verdict maps */
	uint32_t n_chains;
	uint64_t now_ns;	/**< monotonic ns (limit), per burst */
	uint64_t now_ms;	/**< set timeouts, last */
	uint64_t now_real_ns;	/**< wall clock, meta time */
	int32_t tz_minuteswest; /**< the kernel's sys_tz for meta day/hour */
	uint64_t prng;		/**< meta random / numgen random state; any non-zero seed */
	uint64_t drops[NFTDP_VM_DROP_MAX];
	/** set generation every lookup of the run reads: the one the running
	 * VM generation carries (set by the nftdp_vm_gen_run_* calls), so set
	 * contents switch with the rules; 0: the sets' current one */
	uint64_t set_gen;
	/** this worker's per-flow verdict cache (nftdp_vm_flowcache_create),
	 * NULL: every packet runs the chains */
	struct nftdp_vm_flowcache *flow;
	/* the flow cache's bookkeeping while a miss runs (flowcache.c) */
	uint8_t flow_need;		    /**< op->flow below this taints the run */
	uint8_t flow_taint;		    /**< the run did something not fixed per flow */
	struct nftdp_vm_flow_rec *flow_rec; /**< counters the run charged */
	/** the route table fib reads (nftdp_vm_fib_ops); NULL ops: no
	 * route, no address, no device name */
	const struct nftdp_vm_fib_ops *fib_ops;
	const void *fib;
	struct nftdp_vm_synproxy_stats synproxy; /**< this worker's synproxy counters */
};

/* ------------------------------------------------------------------ */
/* Per-flow verdict cache (vm/flowcache.c, docs/vm.md "Flow cache")    */
/*                                                                    */
/* A worker's exact-match cache in front of a hook's base chains: the  */
/* key is every packet field the hook's rules can read for the         */
/* packet's family and transport protocol, the value the hook's        */
/* verdict and the counters the run charged, tagged with the           */
/* generation and set generation it was made in. A hit charges the     */
/* same counters and skips the chains; anything not fixed per flow     */
/* (limit, quota, log, dynset, ct, nat, writes...) keeps a packet's    */
/* path out of the cache.                                              */
/* ------------------------------------------------------------------ */

struct nftdp_vm_flowcache;

struct nftdp_vm_flow_stats {
	uint64_t hits;	      /**< packets judged from the cache */
	uint64_t misses;      /**< packets that ran the chains */
	uint64_t inserts;     /**< results stored */
	uint64_t uncacheable; /**< misses whose path cannot be cached */
	uint64_t mismatches;  /**< verify mode: hits the chains judged otherwise */
	uint64_t carried;     /**< packets judged by their connection's carried result */
	uint64_t unkeyed;     /**< packets the flood guard ran without a key (flowcache.c) */
};

/**
 * A cache of at least `entries` results (rounded up to a power of two,
 * at least 2). One per worker; never shared. @return 0, -EINVAL (entries
 * 0 or above 1 << 24), -ENOMEM. Control-path.
 */
int nftdp_vm_flowcache_create(unsigned int entries, struct nftdp_vm_flowcache **out);
void nftdp_vm_flowcache_destroy(struct nftdp_vm_flowcache *fc);
/**
 * Verify mode (tests, debugging): a hit runs the chains anyway, which judge
 * the packet, and counts a mismatch when their verdict or counters differ
 * from the entry's. Control-path, before the worker runs.
 */
void nftdp_vm_flowcache_verify(struct nftdp_vm_flowcache *fc, bool on);
/**
 * Whether the flood guard of some hook keys only a sample of packets (its
 * recent probes there kept missing, flowcache.c): a pass built around a
 * probe of every packet then costs more than running the chains. NULL:
 * false.
 * The owning worker.
 */
bool nftdp_vm_flowcache_sparse(const struct nftdp_vm_flowcache *fc);
/** Counters of fc so far. Any thread (plain reads of one writer's words). */
void nftdp_vm_flowcache_stats(const struct nftdp_vm_flowcache *fc, struct nftdp_vm_flow_stats *out);

/**
 * Run base chain over one packet. Returns NF_ACCEPT, NF_DROP, NF_STOLEN (fwd)
 * or NF_QUEUE (never produced: queue is refused at compile). pkt->out says
 * what else to do. Packet-path; safe from several workers with their own ctx.
 */
unsigned int nftdp_vm_run_chain(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt *pkt,
				struct nftdp_vm_ctx *ctx);

/**
 * Run base chain over n packets (n <= NFTDP_VM_BURST_MAX), verdicts[i] for
 * pkts[i]. Packet-path.
 */
void nftdp_vm_run_burst(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt **pkts,
			unsigned int n, unsigned int *verdicts, struct nftdp_vm_ctx *ctx);

/** Debug: run one packet and also return the final registers. Packet-path. */
unsigned int nftdp_vm_run_chain_regs(const struct nftdp_vm_chain *base, struct nftdp_vm_pkt *pkt,
				     struct nftdp_vm_ctx *ctx, struct nftdp_vm_regs *regs_out);

/* ================================================================== */
/* Generations (vm/generation.c)                                              */
/*                                                                    */
/* A generation is the immutable whole of what workers read: per hook */
/* (nfproto x hooknum) the base chains in priority order, the chain    */
/* table verdict maps index, and the set handles the programs use.     */
/* The control thread builds one with a builder, publishes it into a   */
/* domain with one atomic store, and the domain frees the old one once */
/* every registered reader has reported a quiescent state              */
/* (rte_rcu_qsbr; this header still includes no DPDK header).          */
/*                                                                    */
/*   control thread:                                                  */
/*     nftdp_vm_gen_domain_create()        once                       */
/*     nftdp_vm_gen_builder_create()       per commit (gen_begin)     */
/*       nftdp_vm_gen_chain_create()       every chain, before rules  */
/*       nftdp_vm_gen_add_rule()           every rule, in order       */
/*     nftdp_vm_gen_build()                validate: the generation   */
/*     nftdp_vm_gen_publish()              store, token, retire old   */
/*     nftdp_vm_gen_reclaim()              now and then: free retired */
/*   worker (packet path), per burst:                                 */
/*     gen = nftdp_vm_gen_acquire(dom)     once                       */
/*     nftdp_vm_gen_run_hook_burst(gen, ...) per hook                 */
/*     nftdp_vm_gen_quiesce(dom, id)       after the burst            */
/*   and nftdp_vm_gen_reader_offline() before anything that blocks.   */
/* ================================================================== */

#define NFTDP_VM_GEN_NFPROTO_MAX NFPROTO_NUMPROTO /**< hook table rows */
#define NFTDP_VM_GEN_HOOK_MAX 6 /**< NF_INET_PRE_ROUTING..NF_INET_INGRESS; netdev 0, 1 */

struct nftdp_vm_gen;
struct nftdp_vm_gen_builder;
struct nftdp_vm_gen_domain;

/**
 * Start building a generation: calls nftdp_vm_state_gen_begin(st), so the
 * slots its rules use are marked with the new generation number.
 * @param st   the stateful arena (outlives generations); required.
 * @param res  resolver for sets and named objects, optional (chains are
 *   resolved by the builder among the chains created in it; res->chain is
 *   asked for a name it does not know). Sets res->set returns are recorded
 *   as the generation's set handles. Must outlive the builder.
 * @return 0, -EINVAL, -ENOMEM. Control-path; one builder at a time per arena.
 */
int nftdp_vm_gen_builder_create(struct nftdp_vm_state *st, const struct nftdp_vm_resolver *res,
				struct nftdp_vm_gen_builder **out);

/**
 * Create a chain in the generation being built (it owns the chain).
 * desc->chain_id is its index in the chain table (verdict maps); it must be
 * unique in the generation. A base chain (desc->base) is also inserted in
 * the hook list of (desc->family, desc->hook) at priority, after the chains
 * of equal priority already there (as nf_register_net_hook); NFPROTO_INET
 * base chains go into both the NFPROTO_IPV4 and the NFPROTO_IPV6 lists.
 * Create every chain before the rules that jump to it.
 * @return 0, -EINVAL (hook or family out of range, policy), -EEXIST
 *   (chain_id or table+name taken), -ENOMEM. Control-path.
 */
int nftdp_vm_gen_chain_create(struct nftdp_vm_gen_builder *b,
			      const struct nftdp_vm_chain_desc *desc, int32_t priority,
			      struct nftdp_vm_chain **out);

/**
 * Put chain, compiled for an earlier generation and unchanged since, into the
 * one being built instead of compiling it again: as
 * nftdp_vm_gen_chain_create() with an existing chain (shared, reference
 * counted; its state slots kept). Only valid when every chain its rules jump
 * or go to is reused too (compiled jumps point at chains) and desc is the
 * one it was compiled with. @return as nftdp_vm_gen_chain_create().
 * Control-path.
 */
int nftdp_vm_gen_chain_reuse(struct nftdp_vm_gen_builder *b, const struct nftdp_vm_chain_desc *desc,
			     int32_t priority, struct nftdp_vm_chain *chain);

/**
 * Compile one rule into chain (nftdp_vm_chain_add_rule with the builder's
 * resolver). The first failure sticks: nftdp_vm_gen_build() returns it.
 * @return as nftdp_vm_chain_add_rule(). Control-path.
 */
int nftdp_vm_gen_add_rule(struct nftdp_vm_gen_builder *b, struct nftdp_vm_chain *chain,
			  const struct nftnl_rule *rule, struct nftdp_vm_error *err);

/**
 * Finish: validate every base chain (nftdp_vm_validate) and freeze the
 * hook lists. Consumes the builder whatever the result.
 * @return 0 and *out, or the first error of compile or validation:
 *   -EOPNOTSUPP, -ELOOP, -EMLINK, -EINVAL, -ENOENT, -ENOMEM, ...; err
 *   (optional) names it. On error everything built is freed. Control-path.
 */
int nftdp_vm_gen_build(struct nftdp_vm_gen_builder *b, struct nftdp_vm_gen **out,
		       struct nftdp_vm_error *err);

/** Abandon a builder and everything in it. Control-path. */
void nftdp_vm_gen_builder_destroy(struct nftdp_vm_gen_builder *b);

/**
 * Free a generation that was never published (an aborted commit), its
 * chains and on-free callbacks included. Control-path.
 */
void nftdp_vm_gen_destroy(struct nftdp_vm_gen *gen);

/**
 * Register fn(arg) to run when gen is freed: after the grace period that
 * follows its retirement, or at nftdp_vm_gen_destroy(). For what only this
 * generation references (a deleted set, objects). Callbacks run in the
 * order registered, after its chains were destroyed and its sets given to
 * set_reclaim. Control-path; the
 * list is never read by workers, so a published gen may be given one.
 * @return 0, -ENOMEM.
 */
int nftdp_vm_gen_on_free(struct nftdp_vm_gen *gen, void (*fn)(void *arg), void *arg);

/** The arena generation number (nftdp_vm_state_gen_begin) of gen. Any thread. */
uint64_t nftdp_vm_gen_id(const struct nftdp_vm_gen *gen);

/**
 * The table family holds something that needs connection tracking outside
 * any rule: a ct helper, timeout or expectation object (nft_ct_*_obj_init
 * call nf_ct_netns_get). Call for every such object of the whole next
 * generation, not only for those the batch changed. Control-path.
 */
void nftdp_vm_gen_note_ct(struct nftdp_vm_gen_builder *b, uint8_t family);

/**
 * The set generation the generation's lookups read (sets'
 * nftdp_set_gen_next() at prepare): publishing the generation switches
 * set contents together with the rules. 0 (the default): the sets'
 * current generation at lookup time. Control-path.
 */
void nftdp_vm_gen_set_gencursor(struct nftdp_vm_gen_builder *b, uint64_t set_gen);

/** The set generation gen's lookups read (0: current). Any thread. */
uint64_t nftdp_vm_gen_gencursor(const struct nftdp_vm_gen *gen);

/** Whether gen needs connection tracking for nfproto (NFPROTO_IPV4 /
 * _IPV6), as nf_ct_netns_get turns it on: derived at nftdp_vm_gen_build()
 * from every chain linked into gen (compiled or reused: a rule needing ct,
 * a nat-type base chain) and every nftdp_vm_gen_note_ct(). Any thread. */
bool nftdp_vm_gen_uses_ct(const struct nftdp_vm_gen *gen, uint8_t nfproto);

/** Whether any chain linked into gen shares state across rules
 * (nftdp_vm_chain_shares_state): then the order in which two packets
 * pass two chains shows. Derived like uses_ct. Any thread. */
bool nftdp_vm_gen_shares_state(const struct nftdp_vm_gen *gen);

/** Whether any chain linked into gen has a fib expression: the embedder
 * gets its route table ready before publishing gen. Derived like uses_ct.
 * Any thread. */
bool nftdp_vm_gen_uses_fib(const struct nftdp_vm_gen *gen);

/** Whether any chain linked into gen runs synproxy: the kernel's synproxy
 * hooks are registered while one does (nf_synproxy_ipv4_init). Derived
 * like uses_ct. Any thread. */
bool nftdp_vm_gen_uses_synproxy(const struct nftdp_vm_gen *gen);

/** Whether any chain linked into gen may look connections up in
 * conntrack's table (nftdp_vm_chain_reads_ct_table): then what a chain
 * before conntrack finds depends on the connections earlier packets made.
 * Derived like uses_ct. Any thread. */
bool nftdp_vm_gen_reads_ct_table(const struct nftdp_vm_gen *gen);

/**
 * Whether no chain of gen has state that the order of packets shows
 * (nftdp_vm_chain_order_state): then the IPv4 and the IPv6 packets of a
 * burst may run a hook as two bursts instead of in runs of arrival order.
 */
bool nftdp_vm_gen_order_free(const struct nftdp_vm_gen *gen);

/** Number of base chains at (nfproto, hook); 0 when out of range. Any thread. */
unsigned int nftdp_vm_gen_hook_len(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook);

/** Whether (nfproto, hook) has a base chain of priority in [prio_min, prio_max]. Any thread. */
bool nftdp_vm_gen_hook_has_prio(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				int32_t prio_min, int32_t prio_max);

/**
 * The priority of the base chain at index i of (nfproto, hook)'s list, which
 * holds them in priority order (0 <= i < nftdp_vm_gen_hook_len); INT32_MAX
 * out of range. Lets the dataplane place its built-in steps among the
 * chains once per generation. Any thread.
 */
int32_t nftdp_vm_gen_hook_prio(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
			       unsigned int i);

/** The set handles the generation's programs use (*n of them). Any thread. */
struct nftdp_set *const *nftdp_vm_gen_sets(const struct nftdp_vm_gen *gen, unsigned int *n);

/**
 * Run pkt through every base chain of (nfproto, hook) in priority order,
 * as nf_hook_slow: NF_ACCEPT (a rule's or the policy) moves on to the next
 * base chain, NF_DROP, NF_STOLEN and NF_QUEUE end the hook. No base chain:
 * NF_ACCEPT. Sets ctx->chains / n_chains to gen's chain table.
 * Packet-path; safe from several workers, each with its own ctx.
 */
unsigned int nftdp_vm_gen_run_hook(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				   struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx);

/**
 * The same for n <= NFTDP_VM_BURST_MAX packets: each base chain runs as one
 * nftdp_vm_run_burst over the packets still accepted. Packet-path.
 */
void nftdp_vm_gen_run_hook_burst(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				 struct nftdp_vm_pkt **pkts, unsigned int n, unsigned int *verdicts,
				 struct nftdp_vm_ctx *ctx);

/**
 * The same, restricted to the base chains at indexes [first, first + count)
 * of (nfproto, hook)'s list (nftdp_vm_gen_hook_prio; a range past the end
 * is cut there): the dataplane's hook walker runs a built-in step
 * (conntrack at -200) between two ranges. A range that holds the whole
 * list is the whole hook (the flow cache serves it). Packet-path.
 */
void nftdp_vm_gen_run_hook_range(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				 unsigned int first, unsigned int count, struct nftdp_vm_pkt **pkts,
				 unsigned int n, unsigned int *verdicts, struct nftdp_vm_ctx *ctx);

/**
 * The same, restricted to the base chains with prio_min <= priority <=
 * prio_max (bridge.c's split around br_netfilter). Packet-path.
 */
void nftdp_vm_gen_run_hook_burst_prio(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				      int32_t prio_min, int32_t prio_max,
				      struct nftdp_vm_pkt **pkts, unsigned int n,
				      unsigned int *verdicts, struct nftdp_vm_ctx *ctx);

/**
 * A cached hook result (nftdp_vm_gen_flow_probe): the verdict and the
 * counters to charge. Valid until the worker's cache next stores a result
 * (the next chain run through it).
 */
struct nftdp_vm_flow_hit;

/**
 * The flow cache's verdicts of the whole hook of gen for pkts[0..n) (each
 * of its own family, n <= NFTDP_VM_BURST_MAX), without running a chain or
 * charging anything: hits[i] is the result, or NULL where the chains would
 * have to run (a miss, a class or hook the cache cannot serve, no cache,
 * verify mode). A hook without chains for a packet's family gives an
 * accept that charges nothing. The packet path charges the hits it acts on
 * with nftdp_vm_flow_charge(). Packet-path.
 */
void nftdp_vm_gen_flow_probe(const struct nftdp_vm_gen *gen, uint8_t hook,
			     struct nftdp_vm_pkt **pkts, unsigned int n,
			     const struct nftdp_vm_flow_hit **hits, struct nftdp_vm_ctx *ctx);

/**
 * Whether nftdp_vm_gen_flow_probe at hook reads no more of a view than a
 * header view has (nftdp_vm_pkt_header_view): data, len, mac_off, nh_off,
 * th_off, skb_len, nfproto, l4proto, fragoff, flags and nftrace. Otherwise
 * its keys read meta or ct fields, and the view must be whole.
 */
bool nftdp_vm_gen_flow_headers_only(const struct nftdp_vm_gen *gen, uint8_t hook);

/**
 * Whether the flow cache can serve every IPv4 and IPv6 base chain of gen at
 * hook (each family with chains there has a plan), so that a probe can hit
 * for any packet; true when there are none.
 */
bool nftdp_vm_gen_flow_serves(const struct nftdp_vm_gen *gen, uint8_t hook);
/** Counters a carried result charges at most */
#define NFTDP_VM_FLOW_CARRY_CTRS 6
/** pkt->ct's low bits: the ctinfo (the rest: the entry, 8-byte aligned) */
#define NFTDP_VM_CT_CTINFO_MASK 7u
/**
 * A connection direction's carried result (docs/vm.md "Flow cache"): what
 * the flow cache's hits at a pass's hooks gave one packet of it, kept by
 * conntrack beside the entry, so that the next packet of the same entry,
 * ctinfo and input device whose guard bytes are the same is judged
 * without a key or a probe. Made only from hits whose runs read nothing
 * but what the connection fixes and header bytes within 8 of one header
 * (the guard: `ip ttl`, `ip frag-off`, `tcp flags`...); valid in the
 * generation and set generation it was made in. Zeroed: none. The owning
 * worker's alone. One cache line, one per entry and direction: the record
 * is the entry's, so it keeps only pkt->ct's ctinfo.
 */
struct nftdp_vm_flow_carry {
	uint64_t tag;	  /**< generation id + 1 */
	uint64_t set_gen; /**< the generation's set generation */
	/**
	 * The owner's word (conntrack's: a counter of its direction, kept
	 * in the line the packet reads anyway), which the flow cache
	 * neither reads nor writes: nftdp_vm_flow_carry_make leaves it as
	 * it was, and whoever copies a result made elsewhere keeps it.
	 */
	uint64_t owner;
	uint32_t iif;
	uint8_t last; /**< the hook (index into the pass's hooks) whose drop decided; n: accept */
	uint8_t n_ctr : 4; /**< ctr[0..n_ctr): the counter slots of every hook, in order */
	/**
	 * pkt->ct's ctinfo (its low 3 bits); the entry is the one the
	 * record belongs to (whoever keeps it finds it by pkt->ct)
	 */
	uint8_t ctinfo : 4;
	uint8_t g_at;	 /**< the guard's 8 bytes: header and offset (flowcache.c) */
	uint8_t g_bytes; /**< which of them count, a bit each; 0: no guard */
	uint32_t ctr[NFTDP_VM_FLOW_CARRY_CTRS];
	uint64_t g_val; /**< the guard's bytes of the packet that made it, the rest 0 */
};

/**
 * Fill c from hits[0..n) (NULL: a hook without chains) of an untraced
 * packet p of ct (its pkt->ct before confirm) from input device iif, as
 * the hooks saw it, the last one hits[last] when it dropped the packet
 * (last == n: every hook accepted). p gives the guard's bytes (NULL: a
 * result that needs a guard is not made).
 * @return false, and c untouched, when some hit cannot be carried (its run
 * read more than the connection fixes and a guard covers, or too many
 * counters), or p lacks the guard's bytes. Packet-path.
 */
bool nftdp_vm_flow_carry_make(struct nftdp_vm_flow_carry *c, const void *ct, uint32_t iif,
			      const struct nftdp_vm_flow_hit *const *hits, unsigned int n,
			      unsigned int last, const struct nftdp_vm_pkt *p);
/**
 * Whether c judges p in gen (not in verify mode): c is the record of
 * p->ct's entry and direction (the caller's to find), same ctinfo and input
 * device, untraced, no later fragment, the guard's bytes there and equal;
 * if so *last is the hook index as nftdp_vm_flow_carry_make took it.
 * Charges nothing. Packet-path.
 */
bool nftdp_vm_gen_flow_carried(const struct nftdp_vm_gen *gen, const struct nftdp_vm_flow_carry *c,
			       const struct nftdp_vm_pkt *p, const struct nftdp_vm_ctx *ctx,
			       unsigned int *last);
/** Charge p to the counters c carries and count it. Packet-path. */
void nftdp_vm_flow_carry_charge(const struct nftdp_vm_flow_carry *c, const struct nftdp_vm_pkt *p,
				struct nftdp_vm_ctx *ctx);
/** NF_ACCEPT or NF_DROP: the verdict of a hit */
unsigned int nftdp_vm_flow_hit_verdict(const struct nftdp_vm_flow_hit *hit);
/** Charge pkt to the counters hit recorded and count a cache hit. Packet-path. */
void nftdp_vm_flow_charge(const struct nftdp_vm_flow_hit *hit, struct nftdp_vm_pkt *pkt,
			  struct nftdp_vm_ctx *ctx);
/** ctx's worker's row of counters, for nftdp_vm_flow_charge_row: read
 * once a burst (the charges' stores may alias what it reads). */
struct nftdp_vm_counter *nftdp_vm_flow_row(const struct nftdp_vm_ctx *ctx);
/** nftdp_vm_flow_charge of a packet of bytes (its skb_len) into row
 * (nftdp_vm_flow_row) without counting the hit: 1 where it would have
 * counted one, else 0, for nftdp_vm_flow_count_hits. Packet-path. */
unsigned int nftdp_vm_flow_charge_row(const struct nftdp_vm_flow_hit *hit, uint32_t bytes,
				      struct nftdp_vm_counter *row);
/** Count n cache hits (what nftdp_vm_flow_charge_row returned, summed). */
void nftdp_vm_flow_count_hits(struct nftdp_vm_ctx *ctx, unsigned int n);

/**
 * nf_nat_inet_fn's walk: run the nat-type base chains of (nfproto, hook) in
 * priority order over pkt until one ends with a verdict other than accept,
 * or bound(pkt, arg) says the connection got its binding. NF_ACCEPT when
 * none is left. Packet-path.
 */
unsigned int nftdp_vm_gen_run_nat(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook,
				  struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx,
				  bool (*bound)(const struct nftdp_vm_pkt *pkt, uint8_t hook));

/** Number of nat-type base chains at (nfproto, hook). Any thread. */
unsigned int nftdp_vm_gen_nat_len(const struct nftdp_vm_gen *gen, uint8_t nfproto, uint8_t hook);

/** Domain configuration. */
struct nftdp_vm_gen_domain_config {
	unsigned int max_readers;     /**< reader thread ids 0 .. max_readers-1 */
	struct nftdp_vm_state *state; /**< swept after frees; optional */
	/** no longer called: set memory gets grace periods of its own on the
	 * domain's QSBR variable (nftdp_set_grace_begin/_end, batched behind
	 * one token, started after the unlink); kept for source compatibility */
	void (*set_reclaim)(struct nftdp_set *s, void *arg);
	void *set_reclaim_arg;
};

/**
 * Create a publication domain: one current-generation pointer (NULL at
 * first) and an rte_rcu_qsbr variable for max_readers threads. Needs no
 * rte_eal_init(). @return 0, -EINVAL, -ENOMEM. Control-path.
 */
int nftdp_vm_gen_domain_create(const struct nftdp_vm_gen_domain_config *cfg,
			       struct nftdp_vm_gen_domain **out);

/**
 * Free the domain, the current generation and every retired one without
 * waiting: no reader may be online any more. Control-path.
 */
void nftdp_vm_gen_domain_destroy(struct nftdp_vm_gen_domain *dom);

/**
 * Give memory that lives outside generations (sets/: elements that gc,
 * aborts and commits unlink, replaced tables, interval index nodes) grace
 * periods on the domain's QSBR variable. begin(arg, set_gen, cookie)
 * closes what was unlinked so far into one batch (false: nothing waits);
 * set_gen is the set generation the current generation carries, no reader
 * that begins later reads an older one. The domain then takes one token
 * (shared with a publish's) and calls end(arg, cookie) once it has passed,
 * from nftdp_vm_gen_reclaim(); ending a later cookie covers the earlier
 * ones. control/build.c passes sets' nftdp_set_grace_begin/_end. Call it
 * before the first publish (anything queued under earlier hooks is waited
 * for). NULL hooks: none. Control-path.
 */
void nftdp_vm_gen_domain_grace(struct nftdp_vm_gen_domain *dom,
			       bool (*begin)(void *arg, uint64_t set_gen, uint64_t cookie[2]),
			       void (*end)(void *arg, const uint64_t cookie[2]), void *arg);

/**
 * Make gen the current generation with one release store, take a QSBR
 * token and put the previous one (if any) on the deferred-free list behind
 * it; then free whatever retired generations have passed their grace
 * period (nftdp_vm_gen_reclaim). Never waits, cannot fail; the domain owns
 * gen from here on. Control-path; one publisher.
 */
void nftdp_vm_gen_publish(struct nftdp_vm_gen_domain *dom, struct nftdp_vm_gen *gen);

/**
 * Free every retired generation whose token all registered online readers
 * have passed (one rte_rcu_qsbr_check per batch, oldest first), then
 * nftdp_vm_state_sweep() up to the oldest generation still alive. Also ends
 * the set-memory grace periods that passed (nftdp_set_grace_end) and
 * starts one, with a new token, for whatever sets unlinked since (gc,
 * aborts, committed deletions). Call it often: set memory comes back one
 * grace period after its unlink, whether commits pause or not. Never waits.
 * @return the number of generations freed. Control-path.
 */
unsigned int nftdp_vm_gen_reclaim(struct nftdp_vm_gen_domain *dom);

/**
 * Wait until every generation retired so far, and the set memory unlinked
 * so far, can be freed, and free them (committed set deletions that this
 * unlinks wait for the next grace period).
 * Yields the CPU while waiting; readers must keep quiescing or be offline.
 * Control-path.
 */
void nftdp_vm_gen_synchronize(struct nftdp_vm_gen_domain *dom);

/**
 * A grace period on the domain's QSBR variable for memory that lives
 * outside generations and is reached through a pointer readers load
 * within a burst (the dataplane's route table): unlink, then
 * token = nftdp_vm_gen_grace_start(); once nftdp_vm_gen_grace_passed(token)
 * no reader can hold what was unlinked before the start. Never waits.
 * Control-path.
 */
uint64_t nftdp_vm_gen_grace_start(struct nftdp_vm_gen_domain *dom);
bool nftdp_vm_gen_grace_passed(struct nftdp_vm_gen_domain *dom, uint64_t token);

/** Retired generations not yet freed. Control-path. */
unsigned int nftdp_vm_gen_pending(const struct nftdp_vm_gen_domain *dom);

/**
 * Register reader thread_id (< max_readers) and put it online.
 * @return 0, -EINVAL. Call from the reader or before it starts.
 */
int nftdp_vm_gen_reader_register(struct nftdp_vm_gen_domain *dom, unsigned int thread_id);

/** Offline and unregister thread_id. From the reader, after its last burst. */
void nftdp_vm_gen_reader_unregister(struct nftdp_vm_gen_domain *dom, unsigned int thread_id);

/** Back online after an offline period; reload the generation afterwards. Reader thread. */
void nftdp_vm_gen_reader_online(struct nftdp_vm_gen_domain *dom, unsigned int thread_id);

/**
 * Go offline before anything that may block: publishers stop waiting for
 * this thread. No generation pointer may be used until online again.
 */
void nftdp_vm_gen_reader_offline(struct nftdp_vm_gen_domain *dom, unsigned int thread_id);

/**
 * The current generation (load-acquire), or NULL before the first publish.
 * Once per burst: everything the burst does uses this one pointer, valid
 * until this thread's next nftdp_vm_gen_quiesce() or offline. Packet-path;
 * any number of readers.
 */
const struct nftdp_vm_gen *nftdp_vm_gen_acquire(struct nftdp_vm_gen_domain *dom);

/**
 * Report a quiescent state (rte_rcu_qsbr_quiescent): this thread holds no
 * generation pointer any more. Between bursts. Packet-path; thread_id's own.
 */
void nftdp_vm_gen_quiesce(struct nftdp_vm_gen_domain *dom, unsigned int thread_id);

#endif /* NFTDP_VM_H */
