// SPDX-License-Identifier: BSD-3-Clause
/*
 * conntrack unit tests (no EAL): entries made and changed by ctnetlink
 * (conntrack/ct_inject.c, the kernel's ctnetlink_new_conntrack): create's
 * requirements and errnos, NAT bindings that translate packets like those
 * made by traffic (dnat, snat, a TCP connection picked up established),
 * change_conntrack's rules (status bits, fixed timeout, NAT and helper on
 * an existing entry), events, and CTRZERO.
 */
#include "ct_fixture.h"

#include <linux/netfilter/nf_conntrack_tcp.h>

/* conntrack -I: orig given, the reply its inverse (the tool's SETUP_REPLY) */
static void chg_new(struct nftdp_ct_change *c, uint8_t l4, const char *s, uint16_t sp,
		    const char *d, uint16_t dp)
{
	memset(c, 0, sizeof(*c));
	tuple4(&c->tuple[0], l4, s, sp, d, dp);
	tuple4(&c->tuple[1], l4, d, dp, s, sp);
	c->has = NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_CREATE |
		 NFTDP_CT_CHG_TIMEOUT | NFTDP_CT_CHG_STATUS;
	c->timeout_s = 100;
	c->status = IPS_CONFIRMED;
	c->zone_dir = NFTDP_VM_CT_ZONE_DIR_BOTH;
}

static void test_create_rules(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_change c;
	struct nftdp_ct_info ci;
	struct nftdp_ct_stats st;

	(void)state;
	chg_new(&c, IPPROTO_UDP, "10.0.0.1", 5000, "10.0.0.2", 53);
	/* CTA_TIMEOUT is required, both tuples too, of one protocol */
	c.has &= ~(uint32_t)NFTDP_CT_CHG_TIMEOUT;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EINVAL);
	c.has |= NFTDP_CT_CHG_TIMEOUT;
	c.has &= ~(uint32_t)NFTDP_CT_CHG_REPLY;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EINVAL);
	c.has |= NFTDP_CT_CHG_REPLY;
	c.tuple[1].l4proto = IPPROTO_TCP;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EINVAL);
	c.tuple[1].l4proto = IPPROTO_UDP;
	/* status: CONFIRMED must be as created (the tool always sets it),
	 * EXPECTED cannot be set; the NAT bits are ignored */
	c.status = 0;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EBUSY);
	c.status = IPS_CONFIRMED | IPS_EXPECTED;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EBUSY);
	/* a helper this protocol does not have (ftp is TCP's) */
	c.status = IPS_CONFIRMED | IPS_SRC_NAT | IPS_ASSURED;
	c.has |= NFTDP_CT_CHG_HELPER;
	strcpy(c.helper, "ftp");
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EOPNOTSUPP);
	strcpy(c.helper, "irc"); /* TCP's, IPv4 */
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EOPNOTSUPP);
	strcpy(c.helper, "sane");
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EOPNOTSUPP);
	strcpy(c.helper, "tftp");
	/* a master that does not exist */
	c.has |= NFTDP_CT_CHG_MASTER;
	tuple4(&c.master, IPPROTO_UDP, "10.0.0.1", 1, "10.0.0.2", 69);
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -ENOENT);
	c.has &= ~(uint32_t)NFTDP_CT_CHG_MASTER;
	/* nothing of that is left */
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 0);
	c.mark = 0x11;
	c.has |= NFTDP_CT_CHG_MARK;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, &ci), 0);
	assert_int_equal(ci.status, IPS_CONFIRMED | IPS_ASSURED | IPS_HELPER);
	assert_int_equal(ci.timeout_s, 100);
	assert_int_equal(ci.mark, 0x11);
	assert_string_equal(ci.helper, "tftp");
	/* the same tuples again: EEXIST; one taken by the reply tuple too */
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EEXIST);
	chg_new(&c, IPPROTO_UDP, "10.0.0.2", 53, "10.0.0.1", 5000);
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), -EEXIST);
	nftdp_ct_stats(en->s, &st);
	assert_int_equal(st.count, 1);
	assert_int_equal(st.insert, 1);
	/* listed like an entry made by traffic */
	assert_int_equal(nftdp_ct_get(en->s, &c.tuple[1], en->now, &ci), 0);
	env_free(en);
}

/* --dst-nat: the reply tuple moves, packets translate both ways */
static void test_create_dnat_translates(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_change c;
	struct nftdp_ct_info ci;
	struct nftdp_ct_entry *e;
	struct tpkt t;

	(void)state;
	chg_new(&c, IPPROTO_UDP, "192.0.2.9", 5555, "203.0.113.5", 53);
	c.has |= NFTDP_CT_CHG_NAT_DST;
	c.nat[NFTDP_CT_MANIP_DST] = nat_to("10.0.0.80", 5353);
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, &ci), 0);
	assert_true(ci.status & IPS_DST_NAT);
	assert_false(ci.status & IPS_SRC_NAT);
	assert_int_equal(ci.status & IPS_NAT_DONE_MASK, IPS_NAT_DONE_MASK);
	assert_ip4((const uint8_t *)&ci.tuple[1].src.ip, "10.0.0.80");
	assert_int_equal(ntohs(ci.tuple[1].sport), 5353);
	/* the client's next packet: rewritten, no new binding (no rule here) */
	udp(&t, false, "192.0.2.9", "203.0.113.5", 5555, 53, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &e), ST_NEW); /* not yet replied */
	assert_ip4(t.buf + 16, "10.0.0.80");
	assert_int_equal(port_at(t.buf + 22), 5353);
	assert_csums(&t);
	/* the server's answer leaves from the original destination */
	udp(&t, false, "10.0.0.80", "192.0.2.9", 5353, 5555, 20);
	assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_equal(port_at(t.buf + 20), 53);
	assert_csums(&t);
	assert_true(e->status & IPS_SEEN_REPLY);
	env_free(en);
}

/* --src-nat of a TCP connection synced established: the data continues */
static void test_create_snat_tcp_established(void **state)
{
	struct env *en = env_new(64, false);
	struct tflow f = {false, "10.0.0.1", "198.51.100.7", 40000, 80, 1000, 9000};
	struct nftdp_ct_change c;
	struct nftdp_ct_info ci;
	struct nftdp_ct_entry *e;
	struct tpkt t;

	(void)state;
	chg_new(&c, IPPROTO_TCP, f.a, f.ap, f.b, f.bp);
	c.has |= NFTDP_CT_CHG_NAT_SRC | NFTDP_CT_CHG_PROTOINFO | NFTDP_CT_CHG_TCP_STATE;
	c.nat[NFTDP_CT_MANIP_SRC] = nat_to("203.0.113.5", 0);
	c.status = IPS_CONFIRMED | IPS_ASSURED | IPS_SEEN_REPLY;
	c.tcp_state = TCP_CONNTRACK_ESTABLISHED;
	c.timeout_s = 432000;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, &ci), 0);
	assert_true(ci.status & IPS_SRC_NAT);
	assert_int_equal(ci.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	/* mid-stream data from the client: established, source rewritten */
	seg(&t, &f, 0, TA, f.aseq, f.bseq, 100);
	assert_int_equal(nat_path(en, &t, NULL, NULL, &e), ST_ESTABLISHED);
	assert_ip4(t.buf + 12, "203.0.113.5");
	assert_int_equal(port_at(t.buf + 20), 40000);
	assert_csums(&t);
	f.aseq += 100;
	{
		struct tflow r = {false, "203.0.113.5", "198.51.100.7", 40000, 80, f.aseq, f.bseq};

		seg(&t, &r, 1, TA, r.bseq, r.aseq, 50);
		assert_int_equal(nat_path(en, &t, NULL, NULL, NULL), ST_ESTABLISHED);
		assert_ip4(t.buf + 16, "10.0.0.1");
		assert_csums(&t);
	}
	assert_int_equal(e->proto.tcp.state, TCP_CONNTRACK_ESTABLISHED);
	env_free(en);
}

/* CTA_HELP_NAME: every helper nftdp runs, by the name, family and
 * protocol the kernel registers it with (__nf_conntrack_helper_find) */
static void test_create_helpers(void **state)
{
	static const struct {
		const char *name;
		uint8_t l4;
		int err;
	} v4[] = {
	    {"sip", IPPROTO_UDP, 0},
	    {"sip", IPPROTO_TCP, 0},
	    {"Q.931", IPPROTO_TCP, 0},
	    {"RAS", IPPROTO_UDP, 0},
	    {"H.245", IPPROTO_UDP, 0},
	    {"irc", IPPROTO_TCP, 0},
	    {"amanda", IPPROTO_UDP, 0},
	    {"sane", IPPROTO_TCP, 0},
	    {"snmp", IPPROTO_UDP, 0},
	    {"netbios-ns", IPPROTO_UDP, 0},
	    {"H.245", IPPROTO_TCP, -EOPNOTSUPP},
	    {"sane", IPPROTO_UDP, -EOPNOTSUPP},
	    {"nosuch", IPPROTO_TCP, -EOPNOTSUPP},
	};
	struct env *en = env_new(64, false);
	struct nftdp_ct_change c;
	struct nftdp_ct_info ci;

	(void)state;
	for (unsigned int i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		chg_new(&c, v4[i].l4, "10.0.0.1", (uint16_t)(30000 + i), "10.0.0.2", 5060);
		c.has |= NFTDP_CT_CHG_HELPER;
		strcpy(c.helper, v4[i].name);
		assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), v4[i].err);
		if (v4[i].err)
			continue;
		assert_int_equal(nftdp_ct_get(en->s, &c.tuple[0], en->now, &ci), 0);
		assert_non_null(ci.helper);
		assert_string_equal(ci.helper, v4[i].name);
	}
	env_free(en);
}

static void test_update_rules(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_change c, u;
	struct nftdp_ct_info ci;

	(void)state;
	chg_new(&c, IPPROTO_TCP, "10.0.0.1", 4000, "10.0.0.2", 80);
	c.has |= NFTDP_CT_CHG_PROTOINFO | NFTDP_CT_CHG_TCP_STATE;
	c.tcp_state = TCP_CONNTRACK_ESTABLISHED;
	c.status = IPS_CONFIRMED | IPS_ASSURED | IPS_SEEN_REPLY;
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), 0);
	/* lookup by the reply tuple alone */
	memset(&u, 0, sizeof(u));
	u.tuple[1] = c.tuple[1];
	u.has = NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_MARK;
	u.mark = 0xf0;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, &ci), 0);
	assert_int_equal(ci.mark, 0xf0);
	/* CTA_MARK_MASK keeps the bits outside it */
	u.mark = 0x01;
	u.mark_mask = 0x0f;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, &ci), 0);
	assert_int_equal(ci.mark, 0xf1);
	/* NLM_F_EXCL on an existing entry */
	u.has |= NFTDP_CT_CHG_EXCL;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), -EEXIST);
	/* NAT and a master only for new entries */
	u.has = NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_NAT_SRC;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), -EOPNOTSUPP);
	u.has = NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_MASTER;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), -EOPNOTSUPP);
	/* a helper cannot be given to an existing entry; "" removes none */
	u.has = NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_HELPER;
	strcpy(u.helper, "ftp");
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), -EOPNOTSUPP);
	u.helper[0] = 0;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), 0);
	/* ASSURED and SEEN_REPLY can only be set */
	u.has = NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_STATUS;
	u.status = IPS_CONFIRMED | IPS_SEEN_REPLY;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), -EBUSY);
	/* FIXED_TIMEOUT can; then a timeout is EPERM */
	u.status = IPS_CONFIRMED | IPS_SEEN_REPLY | IPS_ASSURED | IPS_FIXED_TIMEOUT;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), 0);
	u.has = NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_TIMEOUT;
	u.timeout_s = 5;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, &ci), -EPERM);
	/* protoinfo: the state, the flags under their mask */
	u.has = NFTDP_CT_CHG_REPLY | NFTDP_CT_CHG_PROTOINFO | NFTDP_CT_CHG_TCP_STATE;
	u.tcp_state = TCP_CONNTRACK_TIME_WAIT;
	u.tcp_flags[0] = IP_CT_TCP_FLAG_CLOSE_INIT;
	u.tcp_flags_mask[0] = IP_CT_TCP_FLAG_CLOSE_INIT;
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, &ci), 0);
	assert_int_equal(ci.tcp.state, TCP_CONNTRACK_TIME_WAIT);
	assert_int_equal(ci.tcp.flags[0], IP_CT_TCP_FLAG_CLOSE_INIT);
	assert_int_equal(ci.timeout_s, 100);
	/* a missing entry */
	tuple4(&u.tuple[1], IPPROTO_TCP, "10.0.0.9", 80, "10.0.0.1", 4000);
	assert_int_equal(nftdp_ct_update(en->s, &u, en->now, NULL), -ENOENT);
	env_free(en);
}

static struct nftdp_ct_event ev[8];
static unsigned int n;

static void keep_event(const struct nftdp_ct_event *e, void *arg)
{
	(void)arg;
	if (n < 8)
		ev[n++] = *e;
}

static void test_events_and_zero(void **state)
{
	struct nftdp_ct_config cfg = {.max_entries = 16, .hash_seed = 1, .event_ring_size = 16};
	struct env en = {.now = 5000};
	struct nftdp_ct_change c;
	struct nftdp_ct_info ci;
	struct tpkt t;

	(void)state;
	assert_int_equal(nftdp_ct_shard_create(&cfg, &en.s), 0);
	chg_new(&c, IPPROTO_UDP, "10.0.0.1", 5000, "10.0.0.2", 53);
	assert_int_equal(nftdp_ct_create(en.s, &c, en.now, NULL), 0);
	c.has = NFTDP_CT_CHG_ORIG | NFTDP_CT_CHG_MARK;
	c.mark = 3;
	assert_int_equal(nftdp_ct_update(en.s, &c, en.now, NULL), 0);
	nftdp_ct_events_poll(en.s, keep_event, NULL, NULL);
	assert_int_equal(n, 2);
	assert_true(ev[0].events & (1u << IPCT_NEW));
	assert_int_equal(ev[0].info.timeout_s, 100); /* the request's clock */
	assert_false(ev[1].events & ((1u << IPCT_NEW) | (1u << IPCT_DESTROY)));
	assert_true(ev[1].events & (1u << IPCT_MARK));
	assert_int_equal(ev[1].info.mark, 3);
	/* traffic counts, CTRZERO reports and zeroes */
	udp(&t, false, "10.0.0.1", "10.0.0.2", 5000, 53, 10);
	xmit(&en, &t, NULL);
	assert_int_equal(nftdp_ct_get_zero(en.s, &c.tuple[0], 0, en.now, &ci), 0);
	assert_int_equal(ci.packets[0], 1);
	assert_int_equal(nftdp_ct_get_zero(en.s, &c.tuple[0], ci.id + 1, en.now, &ci), -ENOENT);
	assert_int_equal(nftdp_ct_get_zero(en.s, &c.tuple[0], ci.id, en.now, &ci), 0);
	assert_int_equal(ci.packets[0], 0);
	assert_int_equal(ci.bytes[0], 0);
	nftdp_ct_shard_destroy(en.s);
}

/* an expectation request: master's original tuple, and any source port
 * of esrc to edst:edport */
static void exp_req(struct nftdp_ct_expect_new *n, uint8_t l4, const char *msrc, uint16_t msport,
		    const char *mdst, uint16_t mdport, const char *esrc, const char *edst,
		    uint16_t edport)
{
	memset(n, 0, sizeof(*n));
	tuple4(&n->master, l4, msrc, msport, mdst, mdport);
	tuple4(&n->tuple, l4, esrc, 0, edst, edport);
	n->mask = n->tuple;
	memset(&n->mask.src, 0xff, 4);
	n->mask.sport = 0;
}

/* ctnetlink's expectations: create on a helped master, get, timeout, delete, flush */
static void test_expectations(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_change c;
	struct nftdp_ct_expect_new n;
	struct nftdp_ct_expect_info x;
	struct nftdp_ct_tuple data;

	(void)state;
	exp_req(&n, IPPROTO_TCP, "10.0.0.1", 40000, "10.0.0.2", 21, "10.0.0.2", "10.0.0.1", 50000);
	/* no master: ENOENT; a master without a helper: EOPNOTSUPP */
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -ENOENT);
	chg_new(&c, IPPROTO_TCP, "10.0.0.1", 40000, "10.0.0.2", 21);
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), 0);
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -EOPNOTSUPP);
	/* the master with ftp (given at creation) */
	chg_new(&c, IPPROTO_TCP, "10.0.0.1", 40001, "10.0.0.2", 21);
	c.has |= NFTDP_CT_CHG_HELPER;
	strcpy(c.helper, "ftp");
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), 0);
	n.master.sport = htons(40001);
	strcpy(n.helper, "tftp"); /* not TCP's */
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -EOPNOTSUPP);
	strcpy(n.helper, "ftp");
	n.class = 1;
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -EINVAL);
	n.class = 0;
	n.fn_unknown = true;
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -EINVAL);
	n.fn_unknown = false;
	n.follow = true;
	n.nat_port = htons(50001);
	n.flags = NF_CT_EXPECT_PERMANENT | NF_CT_EXPECT_USERSPACE;
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	/* a data connection's tuple finds it (any source port), with the
	 * master's helper's timeout, USERSPACE dropped */
	tuple4(&data, IPPROTO_TCP, "10.0.0.2", 20, "10.0.0.1", 50000);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), 0);
	assert_int_equal(x.timeout_s, 300);
	assert_int_equal(x.flags, NF_CT_EXPECT_PERMANENT);
	assert_string_equal(x.helper, "ftp");
	assert_true(x.nat);
	assert_int_equal(ntohs(x.nat_port), 50001);
	assert_int_equal(ntohs(x.master.sport), 40001);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, x.id + 1, en->now, &x), -ENOENT);
	/* the same again: it replaces the master's own (max_expected 1) */
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	/* a new timeout */
	assert_int_equal(nftdp_ct_expect_set_timeout(en->s, &data, 20, en->now), 0);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), 0);
	assert_int_equal(x.timeout_s, 20);
	/* delete by tuple with a wrong id, then the right one */
	assert_int_equal(nftdp_ct_expect_delete(en->s, &data, x.id + 1), -ENOENT);
	assert_int_equal(nftdp_ct_expect_delete(en->s, &data, x.id), 0);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), -ENOENT);
	/* flush by the master's helper name, then all */
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	assert_int_equal(nftdp_ct_expect_flush(en->s, "tftp"), 0);
	assert_int_equal(nftdp_ct_expect_flush(en->s, "ftp"), 1);
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	assert_int_equal(nftdp_ct_expect_flush(en->s, NULL), 1);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), -ENOENT);
	env_free(en);
}

/* expectations by any helper's name (conntrackd's ExpectationSync): the
 * class up to the named helper's expect_class_max, the master's helper's
 * policy for that class (its limit, its timeout) */
static void test_expectations_by_name(void **state)
{
	struct env *en = env_new(64, false);
	struct nftdp_ct_change c;
	struct nftdp_ct_expect_new n;
	struct nftdp_ct_expect_info x;
	struct nftdp_ct_tuple data;

	(void)state;
	chg_new(&c, IPPROTO_UDP, "10.0.0.1", 5060, "10.0.0.2", 5060);
	c.has |= NFTDP_CT_CHG_HELPER;
	strcpy(c.helper, "sip");
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), 0);
	exp_req(&n, IPPROTO_UDP, "10.0.0.1", 5060, "10.0.0.2", 5060, "10.0.0.2", "10.0.0.1", 20000);
	strcpy(n.helper, "ftp"); /* not UDP's */
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -EOPNOTSUPP);
	strcpy(n.helper, "sip");
	n.class = 4; /* past SIP_EXPECT_MAX */
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), -EINVAL);
	/* audio (1): 4 at most, the oldest evicted by the fifth */
	n.class = 1;
	for (uint16_t i = 0; i < 5; i++) {
		n.tuple.dport = htons((uint16_t)(20000 + 2 * i));
		assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	}
	tuple4(&data, IPPROTO_UDP, "10.0.0.2", 7000, "10.0.0.1", 20000);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), -ENOENT);
	for (uint16_t i = 1; i < 5; i++) {
		data.dport = htons((uint16_t)(20000 + 2 * i));
		assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), 0);
		assert_int_equal(x.class, 1);
		assert_int_equal(x.timeout_s, 180);
		assert_string_equal(x.helper, "sip");
	}
	/* without a helper named, CTA_EXPECT_CLASS does not count */
	n.helper[0] = 0;
	n.class = 9;
	n.tuple.dport = htons(30000);
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	data.dport = htons(30000);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), 0);
	assert_int_equal(x.class, 0);
	/* irc's policy: 300 s */
	chg_new(&c, IPPROTO_TCP, "10.0.0.1", 40000, "10.0.0.2", 6667);
	c.has |= NFTDP_CT_CHG_HELPER;
	strcpy(c.helper, "irc");
	assert_int_equal(nftdp_ct_create(en->s, &c, en->now, NULL), 0);
	exp_req(&n, IPPROTO_TCP, "10.0.0.1", 40000, "10.0.0.2", 6667, "10.0.0.2", "10.0.0.1", 5000);
	strcpy(n.helper, "irc");
	assert_int_equal(nftdp_ct_expect_create(en->s, &n, en->now), 0);
	tuple4(&data, IPPROTO_TCP, "10.0.0.2", 1234, "10.0.0.1", 5000);
	assert_int_equal(nftdp_ct_expect_get(en->s, &data, 0, en->now, &x), 0);
	assert_int_equal(x.timeout_s, 300);
	assert_string_equal(x.helper, "irc");
	env_free(en);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_rules),
	    cmocka_unit_test(test_create_dnat_translates),
	    cmocka_unit_test(test_create_snat_tcp_established),
	    cmocka_unit_test(test_create_helpers),
	    cmocka_unit_test(test_update_rules),
	    cmocka_unit_test(test_events_and_zero),
	    cmocka_unit_test(test_expectations),
	    cmocka_unit_test(test_expectations_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
