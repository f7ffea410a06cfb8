/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The xtables extensions the match and target expressions run
 * (expr_compat.c), one table entry per (name, revision, family) as
 * x_tables.c registers them. expr_compat_match.c and expr_compat_target.c
 * fill the tables; expr_compat.c does what nft_compat.c and
 * xt_check_match/xt_check_target do before an extension's own check.
 */
#ifndef NFTDP_VM_COMPAT_H
#define NFTDP_VM_COMPAT_H

#include "vm_priv.h"

/* what xt_mtchk_param / xt_tgchk_param give checkentry */
struct compat_par {
	const void *info; /* XT_ALIGN(size) bytes, as sent */
	uint8_t family;	  /* NFPROTO_IPV4 / NFPROTO_IPV6 */
	uint16_t proto;	  /* NFTA_RULE_COMPAT_PROTO (ipt_entry.ip.proto) */
	bool inv_proto;	  /* NFT_RULE_COMPAT_F_INV */
	uint32_t hook_mask;
};

struct compat_ext {
	const char *name;
	uint8_t rev;
	uint8_t family;	   /* NFPROTO_UNSPEC: both */
	uint16_t size;	   /* matchsize / targetsize (unaligned) */
	uint32_t hooks;	   /* 0: any */
	const char *table; /* NULL: any */
	uint16_t proto;	   /* 0: any */
	uint8_t flags;	   /* COMPAT_F_* */
	/* checkentry, and the op's priv from the info; NULL: nothing */
	int (*check)(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
	const struct nftdp_vm_expr_ops *ops;
};

#define COMPAT_F_CT 0x01  /* needs connection tracking (nf_ct_netns_get) */
#define COMPAT_F_LOG 0x02 /* writes log lines: shares state, as log does */
/* state earlier packets move: the rule's own (limit), shared by name with
 * other rules (hashlimit, recent: COMPAT_F_STATE | COMPAT_F_NAMED) */
#define COMPAT_F_STATE 0x04
#define COMPAT_F_NAMED 0x08

#define COMPAT_HOOK(h) (1u << (h))

/* every extension's init: the generic checks, then its check() */
int nftdp_vm_compat_match_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv);
int nftdp_vm_compat_target_init(struct nftdp_vm_cctx *cc, const struct nftnl_expr *e, void *priv);

/* a match's result: false breaks the rule (nft_match_eval) */
static inline void compat_match_result(struct nftdp_vm_regs *regs, bool ret)
{
	if (!ret)
		regs->verdict.code = NFT_BREAK;
}

/* check() of a target that runs as another expression (REJECT as reject,
 * LOG as log): init that expression from attributes of ours and make the
 * op that one (its ops, eval), as if the rule had carried it */
int nftdp_vm_compat_become(struct nftdp_vm_cctx *cc, void *priv,
			   const struct nftdp_vm_expr_type *type, struct nftnl_expr *e);
/* the `log group` expression NFLOG and ebtables' nflog become: group,
 * queue threshold (0: none) and prefix; NULL without memory
 * (expr_compat_target.c) */
struct nftnl_expr *nftdp_vm_compat_group_log(uint16_t group, uint16_t threshold,
					     const char *prefix);

/* the rate matches (expr_compat_rate.c) and recent (expr_compat_recent.c):
 * state that packets move, so never cached (no .flow) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_limit_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_hashlimit_ops;
int nftdp_vm_compat_limit_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_hashlimit1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv);
int nftdp_vm_compat_hashlimit2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv);
int nftdp_vm_compat_hashlimit3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv);

extern const struct nftdp_vm_expr_ops nftdp_vm_compat_recent_ops;
/* xt_set's set match, revisions 1 (and 2), 3, 4 (expr_compat_set.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_set_ops;
int nftdp_vm_compat_set1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_set3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_set4_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
/* owner rev 1 and physdev rev 0 (expr_compat_owner.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_owner_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_physdev_ops;
int nftdp_vm_compat_owner_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_physdev_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);
/* xt_SET's SET target, revisions 0-3 (expr_compat_set.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_settg_ops;
int nftdp_vm_compat_settg0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
int nftdp_vm_compat_settg1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
int nftdp_vm_compat_settg2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
int nftdp_vm_compat_settg3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
int nftdp_vm_compat_recent0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);
int nftdp_vm_compat_recent1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);

/* the CT target, revisions 0-2, and NOTRACK (expr_compat_ct.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ct_ops;
int nftdp_vm_compat_ct0_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_ct1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_ct2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_notrack_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);

/* the helper match (expr_compat_ct.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_helper_ops;
int nftdp_vm_compat_helper_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
/* statistic, ttl/hl, dscp/tos, ecn (expr_compat_more.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_statistic_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_hl_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ds_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ecn_ops;
int nftdp_vm_compat_statistic_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				    void *priv);
int nftdp_vm_compat_hl_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_dscp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_tos_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_ecn_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
/* quota (expr_compat_more.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_quota_ops;
int nftdp_vm_compat_quota_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
/* socket and policy (expr_compat_more.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_socket_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_policy_ops;
int nftdp_vm_compat_socket_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
int nftdp_vm_compat_socket1_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);
int nftdp_vm_compat_socket2_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);
int nftdp_vm_compat_socket3_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);
int nftdp_vm_compat_policy_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
/* tcp, udp, udplite (expr_compat_more.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_tcpudp_ops;
int nftdp_vm_compat_tcp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_udp_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);

/* rpfilter, ipv4 and ipv6 (expr_compat_rpfilter.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_rpfilter_ops;
int nftdp_vm_compat_rpfilter_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv);

/* connlimit rev 1 (expr_compat_connlimit.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_connlimit_ops;
int nftdp_vm_compat_connlimit_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				    void *priv);

/* ip6tables' rt, frag, hbh, dst and ipv6header (expr_compat_ip6ext.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_rt_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_frag_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_opts_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ipv6header_ops;
int nftdp_vm_compat_rt_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_frag_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_hbh_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_dst_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_ipv6header_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv);

/* time rev 0 and string rev 1 (expr_compat_text.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_time_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_string_ops;
int nftdp_vm_compat_time_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_string_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);

/* u32 rev 0 (expr_compat_u32.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_u32_ops;
int nftdp_vm_compat_u32_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);

/* CLASSIFY, TTL/HL, DSCP/TOS targets (expr_compat_mangle.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_checksum_ops;
int nftdp_vm_compat_checksum_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv);
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_classify_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_hltg_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_dstg_ops;
int nftdp_vm_compat_classify_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv);
int nftdp_vm_compat_hltg_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);
int nftdp_vm_compat_dscptg_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);
int nftdp_vm_compat_tostg_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv);

/* the TCPMSS target (expr_compat_tcpmss.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_tcpmss_ops;
int nftdp_vm_compat_tcpmss_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				 void *priv);

/* ebtables' log and nflog watchers (expr_compat_ebtlog.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_log_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_nflog_ops;
int nftdp_vm_compat_ebt_log_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				  void *priv);
int nftdp_vm_compat_ebt_nflog_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				    void *priv);
/* ebtables' nat targets dnat, snat, redirect, arpreply (expr_compat_ebtnat.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_dnat_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_snat_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_redirect_ops;
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_ebt_arpreply_ops;
int nftdp_vm_compat_ebt_dnat_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv);
int nftdp_vm_compat_ebt_snat_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				   void *priv);
int nftdp_vm_compat_ebt_redirect_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				       void *priv);
int nftdp_vm_compat_ebt_arpreply_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				       void *priv);
/* arptables' mangle (expr_compat_arpmangle.c) */
extern const struct nftdp_vm_expr_ops nftdp_vm_compat_arp_mangle_ops;
int nftdp_vm_compat_arp_mangle_check(struct nftdp_vm_cctx *cc, const struct compat_par *par,
				     void *priv);
/* ipv6_skip_exthdr from pkt's network header (expr_compat_bridge.c) */
int nftdp_vm_ebt_ipv6_skip(const struct nftdp_vm_pkt *pkt, uint8_t *nexthdr);

extern const struct compat_ext nftdp_vm_compat_matches[];
extern const struct compat_ext nftdp_vm_compat_targets[];
/* ebtables and arptables (expr_compat_bridge.c) */
extern const struct compat_ext nftdp_vm_compat_br_matches[];
extern const struct compat_ext nftdp_vm_compat_br_targets[];

#endif
