/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nf_tables object store of the control plane and its transaction log.
 *
 * Theory of operation. The store is what the kernel keeps per netns: a list
 * of tables, each with chains (and their rules), sets (and their elements),
 * stateful objects and flowtables, in creation order, which is also dump
 * order. Only the control thread touches it: workers see compiled
 * generations, never these objects.
 *
 * A batch is applied to the store in place, as the kernel applies it to its
 * "next generation": a new object is linked at once (flagged fresh), a
 * deleted one stays linked but is flagged dead so that later messages of the
 * batch no longer find it, an update saves the old value. Every change is
 * recorded in the transaction log (ctl_trans). Commit walks the log forward:
 * notifications and echoes in message order, dead objects freed. Abort walks
 * it backwards and undoes each step, so a failed batch leaves the store
 * exactly as it was. Handle counters are never rolled back, as in the kernel.
 */
#ifndef NFTDP_CTL_STATE_H
#define NFTDP_CTL_STATE_H

#include <arpa/inet.h>
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/flowtable.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "control_priv.h"
#include "ctl_list.h"

#define CTL_NAME_MAXLEN 256 /* NFT_NAME_MAXLEN */
#define CTL_USERDATA_MAXLEN 256
#define CTL_JUMP_STACK_SIZE 16 /* NFT_JUMP_STACK_SIZE */
#define CTL_DATA_MAXLEN 64     /* NFT_DATA_VALUE_MAXLEN */

struct ctl_table {
	struct ctl_list list;
	struct ctl_list chains, sets, objs, flowtables;
	char *name;
	uint8_t family;
	uint32_t flags; /* NFT_TABLE_F_* */
	uint32_t nlpid; /* owner port id with NFT_TABLE_F_OWNER */
	uint64_t handle;
	uint64_t hgenerator;	   /* per-table handle counter: chains, rules, sets, ... */
	uint64_t *anon_used;	   /* bitmap of the numbers "__set%d" names use */
	struct ctl_set **set_htab; /* sets by name, so that a dump of each of
				    * 20 000 anonymous sets stays linear */
	uint32_t set_hsize, set_hcount;
	uint32_t anon_words;
	void *udata;
	uint32_t udlen;
	uint32_t use;
	bool dead;
};

struct ctl_chain {
	struct ctl_list list;
	struct ctl_table *table;
	struct nftnl_chain *nl; /* what dumps replay: name, hook, type, policy, ... */
	const char *name;	/* owned by nl */
	uint64_t handle;
	uint32_t chain_id; /* NFTA_CHAIN_ID within the open batch */
	bool base;
	uint32_t hooknum;
	int32_t prio;
	struct ctl_list rules;
	uint32_t use; /* rules + jumps, gotos and vmap elements naming it */
	uint32_t nrules;
	uint32_t dp_id; /* index in every generation's chain table (build.c), 0: none yet */
	struct nftdp_vm_chain *dp_build; /* in the generation being built */
	struct nftdp_vm_chain *dp_cur;	 /* in the published one */
	uint64_t hook_seq;		 /* when its hook was registered: among base chains of
					  * equal priority the kernel runs the latest first */
	bool dp_dirty;			 /* must be compiled again */
	bool binding;			 /* NFT_CHAIN_BINDING: nft's `jump { ... }` */
	bool bound;			 /* a rule's verdict holds it (nft_chain_is_bound) */
	bool dead;
	/* NFTA_CHAIN_COUNTERS: the chain has stats while nl holds
	 * NFTNL_CHAIN_PACKETS/BYTES (the values the request gave); pending
	 * until the commit sets the dataplane's counter to them */
	bool stats_pending;
};

/* What a rule or element refers to, so use counts follow it. */
struct nftdp_set;
struct nftdp_vm_chain;
struct nftdp_vm_obj;

/* One stateful expression of a rule, as the dump patches it. */
struct ctl_rule_stat {
	uint16_t expr_index;
	uint16_t kind;	       /* CTL_STAT_COUNTER, CTL_STAT_QUOTA */
	uint32_t off_a, off_b; /* counter: packets, bytes; quota: consumed, - */
};
enum { CTL_STAT_COUNTER = 1, CTL_STAT_QUOTA = 2 };

struct ctl_ref {
	enum { CTL_REF_CHAIN, CTL_REF_SET, CTL_REF_OBJ, CTL_REF_FLOWTABLE } kind;
	void *obj;
};

struct ctl_rule {
	struct ctl_list list;
	struct ctl_chain *chain;
	struct nftnl_rule *nl; /* for the compiler and for edits */
	void *blob;	       /* the attributes a dump sends, built from nl */
	uint32_t bloblen;
	uint64_t handle;
	uint32_t rule_id;
	unsigned int nrefs;
	struct ctl_ref *refs;
	/* hooks this rule may run at (ops->validate), ~0: any; 0: none */
	uint32_t hook_mask;
	/* stateful expressions in the blob whose values a dump reads from the
	 * VM arena: blob offsets of their u64 attributes (build.c) */
	struct ctl_rule_stat *stats;
	uint16_t nstats;
	bool need_nat; /* only in nat-type chains */
	bool dead;
};

struct ctl_elem {
	struct ctl_elem *hnext; /* hash chain */
	struct ctl_list list;	/* insertion order, for dumps */
	uint32_t hash;
	uint32_t flags; /* NFT_SET_ELEM_* */
	uint8_t klen, kelen;
	uint8_t key[CTL_DATA_MAXLEN];
	uint8_t key_end[CTL_DATA_MAXLEN];
	uint16_t datalen, udlen, exprlen;
	uint16_t expr_type; /* NFTA_SET_ELEM_EXPR or NFTA_SET_ELEM_EXPRESSIONS */
	void *data;	    /* payload of NFTA_SET_ELEM_DATA (a nest), or NULL */
	void *udata;
	void *expr; /* payload of the expression attribute */
	char *objref;
	uint64_t timeout;	     /* ms, 0: none */
	uint64_t expires_at;	     /* ms since the control plane's epoch, 0: never */
	struct ctl_chain *chain_ref; /* verdict data jumping to a chain */
	void *obj_ref;		     /* struct ctl_obj of an object map element */
	bool dp_ranged;		     /* interval start: key_end holds the range end given to
				      * the dataplane set (kelen stays 0: not dumped) */
	bool dp_counted;	     /* has a pinned counter slot in the VM arena */
	bool dp_ranged_new;	     /* being placed by this batch (build.c) */
	bool dead;
};

struct ctl_set {
	struct ctl_list list;
	struct ctl_set *hnext; /* table's name hash chain */
	uint32_t hash;
	struct ctl_table *table;
	struct nftnl_set *nl; /* attributes only, never elements */
	const char *name;     /* owned by nl */
	uint64_t handle;
	uint32_t set_id;
	uint32_t flags;
	uint32_t klen, dlen, dtype, objtype;
	uint32_t size; /* NFTA_SET_DESC_SIZE, 0: no limit */
	uint64_t timeout;
	uint32_t use; /* rules bound to it */
	uint32_t nelems;
	/* elements */
	struct ctl_elem **htab;
	uint32_t hsize, nhashed;
	struct ctl_list elems;
	/* the set's element expressions (NFTA_SET_EXPR[ESSIONS]) that every
	 * element without its own gets, as the element attribute */
	void *elem_expr;
	uint16_t elem_exprlen, elem_expr_type;
	int32_t anon_num;	 /* N of "__setN", -1 for other names */
	struct nftdp_set *dp;	 /* the dataplane's copy of the elements (build.c) */
	uint32_t dp_counter_at;	 /* elements have counters: 1 + their slot's offset */
	uint32_t dp_expr_at;	 /* elements have expressions: 1 + their offset in the data */
	void *dp_expr_tmpl;	 /* the set's expressions in that form, or NULL */
	bool dp_connlimit;	 /* an element had `ct count` (conntrack on for lookups) */
	bool dp_touched;	 /* has pending changes in the open batch */
	uint32_t dp_batch_elems; /* elements the open batch adds (sizing) */
	bool dp_jumps_changed;	 /* the batch adds or deletes a jump element (build.c) */
	/* made again with room for element expressions in the open batch
	 * (build.c set_regrow): the copy it replaces */
	struct nftdp_set *dp_prev;
	bool anonymous;
	bool dead;
};

struct ctl_obj {
	struct ctl_list list;
	struct ctl_table *table;
	struct nftnl_obj *nl;
	const char *name;
	uint32_t type;
	uint64_t handle;
	uint32_t use;
	struct nftdp_vm_obj *dp;     /* compiled object, shared by generations */
	struct nftdp_vm_obj *dp_old; /* replaced in the open batch */
	bool dead;
};

struct ctl_flowtable {
	struct ctl_list list;
	struct ctl_table *table;
	struct nftnl_flowtable *nl;
	const char *name;
	uint64_t handle;
	uint32_t use;
	bool dead;
};

enum ctl_trans_op {
	CTL_TR_NEWTABLE,
	CTL_TR_UPDTABLE,
	CTL_TR_DELTABLE,
	CTL_TR_NEWCHAIN,
	CTL_TR_UPDCHAIN,
	CTL_TR_DELCHAIN,
	CTL_TR_NEWRULE,
	CTL_TR_DELRULE,
	CTL_TR_NEWSET,
	CTL_TR_DELSET,
	CTL_TR_NEWSETELEM,
	CTL_TR_DELSETELEM,
	CTL_TR_NEWOBJ,
	CTL_TR_UPDOBJ,
	CTL_TR_DELOBJ,
	CTL_TR_NEWFLOWTABLE,
	CTL_TR_UPDFLOWTABLE,
	CTL_TR_DELFLOWTABLE,
};

struct ctl_trans {
	struct ctl_list list;
	enum ctl_trans_op op;
	uint8_t family;
	uint32_t portid;
	uint32_t seq;
	uint16_t nlflags; /* of the request: NLM_F_CREATE/EXCL/ECHO/APPEND/REPLACE */
	struct ctl_session *session;
	struct ctl_table *table;
	void *obj; /* chain, rule, set, obj, flowtable */
	struct ctl_elem *elem;
	/* saved state for updates, restored by abort */
	uint32_t old_flags;
	struct nftnl_chain *old_chain;
	struct nftnl_obj *old_obj;
	struct nftnl_flowtable *old_flowtable;
	const char *old_name;
	/* the rule this one replaced (NEWRULE with NLM_F_REPLACE) */
	struct ctl_rule *replaced;
	/* the request, valid while its batch is processed (dataplane errors) */
	const struct nlmsghdr *req;
	/* a step the kernel takes without a transaction of its own (a binding
	 * chain and its rules going with the rule that held it): no event */
	bool quiet;
};

struct ctl_state {
	struct ctl_list tables;
	struct ctl_list trans; /* the open batch */
	uint32_t genid;
	uint64_t table_handle;
	bool validate;	   /* the open batch added jumps: validate before commit */
	uint64_t hook_seq; /* base-chain hook registrations so far */
	uint64_t epoch_ms;
	uint64_t binding_seq; /* N of the last "__chainN" (the kernel's chain_id) */
};

/* What one message handler works with. */
struct ctl_msg {
	struct nftdp_ctl *ctl;
	struct ctl_state *st;
	struct ctl_session *s;
	const struct nlmsghdr *nlh;
	uint8_t family;
	const struct nlattr **tb;      /* attributes by type, validated by the policy */
	const struct nlattr *bad_attr; /* extended ack: the offending attribute */
	bool batch;
};

/* ---- nftnl_guard.c: libnftnl's parsers, made safe on bad input ----
 * Each returns what nftnl_*_nlmsg_parse returns, or -1 where libnftnl would
 * have called exit() (see nftnl_guard.c). */
int ctl_parse_chain(const struct nlmsghdr *nlh, struct nftnl_chain *c);
int ctl_parse_rule(const struct nlmsghdr *nlh, struct nftnl_rule *r);
int ctl_parse_set(const struct nlmsghdr *nlh, struct nftnl_set *s);
int ctl_parse_obj(const struct nlmsghdr *nlh, struct nftnl_obj *o);
int ctl_parse_flowtable(const struct nlmsghdr *nlh, struct nftnl_flowtable *f);

/* ---- reply.c: message building for answers, dumps and notifications ---- */
struct ctl_out {
	struct ctl_session *s; /* unicast target, or NULL for multicast */
	struct nftdp_ctl *ctl;
	unsigned int mcast_group;	/* with s NULL: NFNLGRP_* to send to */
	const struct ctl_session *skip; /* multicast skips this session */
	char *buf;
	size_t len, cap;
};
void ctl_out_init(struct ctl_out *o, struct nftdp_ctl *ctl, struct ctl_session *s);
/* Start a message in the output, returns the header; flush as needed. */
struct nlmsghdr *ctl_out_msg(struct ctl_out *o, uint16_t type, uint8_t family, uint16_t flags,
			     uint32_t seq, uint32_t portid, uint16_t res_id);
/* The message just built is complete (its nlmsg_len set by libmnl). */
void ctl_out_end(struct ctl_out *o, struct nlmsghdr *nlh);
/* Drop the message just started. */
void ctl_out_cancel(struct ctl_out *o, struct nlmsghdr *nlh);
void ctl_out_flush(struct ctl_out *o);
void ctl_out_flush_each(struct ctl_out *o);
void ctl_out_done(struct ctl_out *o, uint32_t seq, uint32_t portid);
void ctl_out_free(struct ctl_out *o);
/* Append attribute a to nlh as it is. */
void ctl_put_attr(struct nlmsghdr *nlh, const struct nlattr *a);
/* A string attribute, which may lack its NUL (the kernel's NLA_STRING allows
 * that, libnftnl 1.2.4 sends some so), as a C string; false if it had to be
 * cut to size. */
bool ctl_attr_strcpy(const struct nlattr *a, char *out, size_t size);
/* Append string attribute a again, NUL-terminated, as the kernel dumps it. */
void ctl_put_strz_of(struct nlmsghdr *nlh, const struct nlattr *a);
/* Room left in the scratch area for the message being built. */
size_t ctl_out_room(const struct ctl_out *o, const struct nlmsghdr *nlh);

/* Error and ack answers (netlink_ack). */
void ctl_ack(struct ctl_out *o, const struct nlmsghdr *req, int err, const struct nlattr *bad_attr,
	     bool ext_ack);
/* ctl_ack() that also carries msg as NLMSGERR_ATTR_MSG (with ext_ack) */
void ctl_ack_msg(struct ctl_out *o, const struct nlmsghdr *req, int err,
		 const struct nlattr *bad_attr, bool ext_ack, const char *msg);

/* ---- state.c: the store's shared helpers (no obj_*.c file calls another) ---- */
/* Record one step of the open batch (nft_trans_alloc); NULL when out of memory. */
struct ctl_trans *ctl_trans_add(struct ctl_msg *m, enum ctl_trans_op op, struct ctl_table *t,
				void *obj);
uint64_t ctl_table_alloc_handle(struct ctl_table *t);
struct ctl_table *ctl_table_lookup(struct ctl_msg *m, const struct nlattr *name, uint8_t family,
				   int *err);
struct ctl_chain *ctl_chain_lookup(struct ctl_table *t, const char *name);
struct ctl_chain *ctl_chain_lookup_id(struct ctl_state *st, struct ctl_table *t, uint32_t id);
struct ctl_chain *ctl_chain_lookup_handle(struct ctl_table *t, uint64_t handle);
struct ctl_set *ctl_set_lookup(struct ctl_table *t, const char *name);
struct ctl_set *ctl_set_lookup_id(struct ctl_state *st, struct ctl_table *t, uint32_t id);
struct ctl_obj *ctl_obj_lookup(struct ctl_table *t, const char *name, uint32_t type);
struct ctl_flowtable *ctl_flowtable_lookup(struct ctl_table *t, const char *name);
/* Link/unlink a set in its table's list and name hash. */
int ctl_set_link(struct ctl_table *t, struct ctl_set *s);
void ctl_set_unlink(struct ctl_set *s);
/* Whether name is one of the dataplane's ports (a device nft may name). */
bool ctl_iface_exists(const struct nftdp_ctl *ctl, const char *name);
/* A chain's index in every generation's chain table (build.c): 0 when out
 * of memory, else unique while it is not put back. */
uint32_t ctl_chain_id_get(void);
void ctl_chain_id_put(uint32_t id);
void ctl_refs_get(struct ctl_ref *refs, unsigned int n);
void ctl_refs_put(struct ctl_ref *refs, unsigned int n);
void ctl_elem_refs(struct ctl_elem *e, int delta);
void ctl_table_free(struct ctl_table *t);
void ctl_chain_free(struct ctl_chain *c);
void ctl_rule_free(struct ctl_rule *r);
void ctl_set_free(struct ctl_set *s);
void ctl_set_elem_unlink(struct ctl_set *set, struct ctl_elem *e);
void ctl_elem_free(struct ctl_elem *e);
void ctl_obj_free(struct ctl_obj *o);
void ctl_flowtable_free(struct ctl_flowtable *f);
/* Delete r (nft_delrule) with the anonymous sets only it bound, recording
 * each step; every live rule of a chain or of a table likewise. */
int ctl_rule_delete(struct ctl_msg *m, struct ctl_rule *r);
int ctl_chain_flush_rules(struct ctl_msg *m, struct ctl_chain *c);
int ctl_table_flush_rules(struct ctl_msg *m, struct ctl_table *t);
/* Rebuild the verdict data of e naming chain name (a chain renamed). */
void ctl_elem_set_verdict_chain(struct ctl_elem *e, const char *name);
/* nft_limit_init's overflow checks: 0 or -EOVERFLOW. */
int ctl_limit_check(uint64_t rate, uint64_t unit, uint32_t burst, bool bytes);

/* ---- dump.c: dump plumbing the obj_*.c files share ---- */
/* A dump's table filter: the message's family (AF_UNSPEC: all) and, when
 * given, the table name. */
bool ctl_dump_match(const struct ctl_msg *m, const struct ctl_table *t, const struct nlattr *tname);
/* One expression's NFTA_EXPR_DATA as the kernel dumps it, appended to nlh:
 * no set id, counters and quotas with every value, objref names with a NUL. */
void ctl_put_expr_data(struct nlmsghdr *nlh, const struct nlattr *data, const char *name);
/* Set-element expressions (payload of NFTA_SET_ELEM_EXPR or _EXPRESSIONS,
 * given as type) rebuilt as the kernel dumps them: counters and quotas with
 * every value present. malloc'd, or NULL. */
void *ctl_expr_payload_canon(uint16_t type, const void *payload, uint16_t len, uint16_t *outlen);

/* ---- the commit (trans.c) ---- */
/* What the batch asks of its commit. */
struct ctl_commit_req {
	bool echo_gen;		      /* NEWGEN echoed to the sender */
	bool check;		      /* no BATCH_END (nft -c): phases 1-2, then abort */
	const struct nlmsghdr *last;  /* BATCH_END (or the last message) */
	const struct nlmsghdr *first; /* the message after BATCH_BEGIN */
};
/* The commit (trans.c), nf_tables_commit's phases: validate, prepare,
 * publish, notify, release. 0, -EAGAIN (validation failed: replay the batch
 * checking every message), or -errno from prepare with *bad the request to
 * blame (NULL: the batch) and why the reason. Every failure has undone the
 * batch; with req->check a success has too. */
int ctl_commit(struct nftdp_ctl *ctl, struct ctl_session *s, const struct ctl_commit_req *req,
	       const struct nlmsghdr **bad, char *why, size_t whylen);
void ctl_trans_abort(struct nftdp_ctl *ctl);
/* Every live table (nf_tables_validate): 0 or the first table's error. */
int ctl_validate(struct ctl_state *st);
/* Jump depth from every base chain of t (nft_table_validate): 0 or -EMLINK. */
int ctl_table_validate(struct ctl_table *t);

/* ---- obj_*.c, besides the handlers below ---- */
/* A chain was renamed at commit: its rules and the jumps to it name it anew
 * (obj_rule.c). */
void ctl_chain_renamed(struct ctl_chain *c, const char *old);
/* Delete everything in t (nft_flush_table), recording each step (obj_table.c). */
int ctl_table_flush(struct ctl_msg *m, struct ctl_table *t);

/* ---- build.c: the dataplane's generation, built at every commit ---- */
/* Create the dataplane side (ctl->cfg.vm_state and gen_dom set) or nothing. */
int ctl_build_create(struct nftdp_ctl *ctl);
/* Hand every dataplane handle to the last generation, free the rest. */
void ctl_build_destroy(struct nftdp_ctl *ctl);
/* Before commit: apply the batch to the dataplane sets and objects and
 * compile the next generation. 0, or -errno with *req the request to blame
 * (NULL: the batch) and msg the compiler's reason. Nothing is visible to
 * workers until ctl_build_commit(). */
int ctl_build_prepare(struct nftdp_ctl *ctl, const struct nlmsghdr **req, char *msg, size_t msglen);
/* After ctl_build_prepare() failed at a rule of *req (a NEWRULE): the index
 * of the expression the dataplane cannot run, -1 when none is to blame. */
int ctl_build_bad_expr(const struct nftdp_ctl *ctl);
/* No expression to blame (a failure before the build ran). */
void ctl_build_clear_bad(struct nftdp_ctl *ctl);
/* Phase 3 of ctl_commit: publish what ctl_build_prepare() built. Cannot fail. */
void ctl_build_commit(struct nftdp_ctl *ctl);
/* Undo what ctl_build_prepare() did; before ctl_trans_abort(). */
void ctl_build_abort(struct nftdp_ctl *ctl);
/* Current values of a rule's stateful expressions into its dump (nlh holds
 * the rule's blob at blob_off); reset: read and zero (GETRULE_RESET). */
/* A base chain's statistics as the workers counted them; false where no
 * generation runs it (no dataplane, a dormant table). */
bool ctl_build_chain_stats(const struct ctl_chain *c, uint64_t *packets, uint64_t *bytes);
void ctl_build_rule_stats(const struct ctl_rule *r, struct nlmsghdr *nlh, size_t blob_off,
			  bool reset);
/* Current values of a named counter or quota into o->nl before a dump. */
void ctl_build_obj_stats(struct ctl_obj *o, bool reset);
/* The element's counter values into its expression attribute, which nlh
 * holds at offset at (payload of NFTA_SET_ELEM_EXPR[ESSIONS]). */
void ctl_build_elem_stats(const struct ctl_set *s, const struct ctl_elem *e, struct nlmsghdr *nlh,
			  size_t at);
/* The live per-element expressions of a set with them (dp_expr_at): from
 * an element's dataplane data, or found by the control element's key;
 * appended to nlh as the kernel dumps them. false: nothing to say (the
 * caller lists what it stored). */
bool ctl_build_elem_exprs_put(const struct ctl_set *s, const void *data, struct nlmsghdr *nlh);
bool ctl_build_elem_exprs_put_key(const struct ctl_set *s, const struct ctl_elem *e,
				  struct nlmsghdr *nlh);
/* Periodic work: element expiry of dataplane sets. */
void ctl_build_tick(struct nftdp_ctl *ctl);

/* ---- building messages for dumps and notifications ---- */
void ctl_table_fill(struct nlmsghdr *nlh, const struct ctl_table *t);
void ctl_chain_fill(struct nlmsghdr *nlh, const struct ctl_chain *c);
void ctl_rule_fill(struct nlmsghdr *nlh, const struct ctl_rule *r);
void ctl_set_fill(struct nlmsghdr *nlh, const struct ctl_set *s);
void ctl_elem_fill_one(struct nlmsghdr *nlh, const struct ctl_set *set, const struct ctl_elem *e);
void ctl_obj_fill(struct nlmsghdr *nlh, const struct ctl_obj *o);
void ctl_flowtable_fill(struct nlmsghdr *nlh, const struct ctl_flowtable *f);

/* ---- message handlers ---- */
int ctl_newtable(struct ctl_msg *m);
int ctl_deltable(struct ctl_msg *m);
int ctl_gettable(struct ctl_msg *m, struct ctl_out *o);
int ctl_newchain(struct ctl_msg *m);
int ctl_delchain(struct ctl_msg *m);
int ctl_getchain(struct ctl_msg *m, struct ctl_out *o);
int ctl_newrule(struct ctl_msg *m);
int ctl_delrule(struct ctl_msg *m);
int ctl_getrule(struct ctl_msg *m, struct ctl_out *o);
int ctl_newset(struct ctl_msg *m);
int ctl_delset(struct ctl_msg *m);
int ctl_getset(struct ctl_msg *m, struct ctl_out *o);
int ctl_newsetelem(struct ctl_msg *m);
int ctl_delsetelem(struct ctl_msg *m);
int ctl_getsetelem(struct ctl_msg *m, struct ctl_out *o);
int ctl_newobj(struct ctl_msg *m);
int ctl_delobj(struct ctl_msg *m);
int ctl_getobj(struct ctl_msg *m, struct ctl_out *o);
int ctl_newflowtable(struct ctl_msg *m);
int ctl_delflowtable(struct ctl_msg *m);
int ctl_getflowtable(struct ctl_msg *m, struct ctl_out *o);

/* Attribute offsets for the extended ack: NULL when the attribute is absent. */
static inline uint32_t ctl_attr_offset(const struct nlmsghdr *nlh, const struct nlattr *a)
{
	return (uint32_t)((const char *)a - (const char *)nlh);
}

#endif
