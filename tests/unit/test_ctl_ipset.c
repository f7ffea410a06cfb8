// SPDX-License-Identifier: BSD-3-Clause
/*
 * control/ipset.c: the ipset store and messages without a socket. The
 * session is a stub that keeps every datagram queued; the clock is the
 * test's, so timeouts expire on demand. Checks the IPSET_ERR_* errnos of
 * ip_set_core.c and the types, ranges, hash:net's most specific match,
 * restore's line number, list:set references, malformed input that must
 * change nothing, and the attributes of a listed member.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/ipset/ip_set.h>
#include <linux/netfilter/ipset/ip_set_bitmap.h>
#include <linux/netfilter/ipset/ip_set_hash.h>
#include <linux/netfilter/ipset/ip_set_list.h>
#include <linux/netfilter/nfnetlink.h>

#include "control_priv.h"
#include "nftdp_vm.h"

static char sent[1 << 16];
static size_t sent_len;
static uint64_t now_ms = 1000000;

int ctl_session_send(struct ctl_session *s, const void *buf, size_t len)
{
	(void)s;
	if (sent_len + len <= sizeof(sent)) {
		memcpy(sent + sent_len, buf, len);
		sent_len += len;
	}
	return 0;
}

uint32_t ctl_session_portid(const struct ctl_session *s)
{
	(void)s;
	return 4242;
}

bool ctl_session_cap_ack(const struct ctl_session *s)
{
	(void)s;
	return false;
}

bool ctl_server_multicast(struct ctl_server *srv, unsigned int group, const void *buf, size_t len,
			  const struct ctl_session *skip)
{
	(void)srv;
	(void)group;
	(void)buf;
	(void)len;
	(void)skip;
	return true;
}

static uint64_t fake_clock(void)
{
	return now_ms;
}

static struct nftdp_ctl ctl;
static struct ctl_session *sess = (struct ctl_session *)&ctl; /* never dereferenced */

static struct nlmsghdr *msg(char *buf, uint8_t cmd, uint16_t flags, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_IPSET << 8) | cmd;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = 9;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = NFPROTO_IPV4;
	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTOCOL, IPSET_PROTOCOL);
	if (name)
		mnl_attr_put_strz(nlh, IPSET_ATTR_SETNAME, name);
	return nlh;
}

static int rcv(const struct nlmsghdr *nlh)
{
	const struct nlattr *bad;

	sent_len = 0;
	return ctl_ipset_rcv(&ctl, sess, nlh, &bad);
}

static void put_ip4(struct nlmsghdr *nlh, uint16_t type, const char *ip)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);
	struct in_addr a;

	inet_pton(AF_INET, ip, &a);
	mnl_attr_put_u32(nlh, IPSET_ATTR_IPADDR_IPV4 | NLA_F_NET_BYTEORDER, a.s_addr);
	mnl_attr_nest_end(nlh, n);
}

static uint32_t create_cadt; /* the next create's CADT_FLAGS (0: none) */

static int create(const char *name, const char *type, uint8_t family, uint32_t timeout,
		  uint32_t maxelem)
{
	char buf[512];
	struct nlmsghdr *nlh = msg(buf, IPSET_CMD_CREATE, NLM_F_CREATE | NLM_F_EXCL, name);
	struct nlattr *d;

	mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, type);
	mnl_attr_put_u8(nlh, IPSET_ATTR_REVISION, 3);
	mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, family);
	d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	if (timeout)
		mnl_attr_put_u32(nlh, IPSET_ATTR_TIMEOUT | NLA_F_NET_BYTEORDER, htonl(timeout));
	if (maxelem)
		mnl_attr_put_u32(nlh, IPSET_ATTR_MAXELEM | NLA_F_NET_BYTEORDER, htonl(maxelem));
	if (create_cadt)
		mnl_attr_put_u32(nlh, IPSET_ATTR_CADT_FLAGS | NLA_F_NET_BYTEORDER,
				 htonl(create_cadt));
	if (strcmp(type, "bitmap:port") == 0) {
		mnl_attr_put_u16(nlh, IPSET_ATTR_PORT | NLA_F_NET_BYTEORDER, htons(100));
		mnl_attr_put_u16(nlh, IPSET_ATTR_PORT_TO | NLA_F_NET_BYTEORDER, htons(200));
	}
	mnl_attr_nest_end(nlh, d);
	return rcv(nlh);
}

/* add/del/test of one IPv4 element: ip, optional cidr (0: none), ip_to */
static int adt(uint8_t cmd, const char *set, const char *ip, uint8_t cidr, const char *ip_to,
	       uint32_t cadt, bool exist)
{
	char buf[512];
	struct nlmsghdr *nlh = msg(buf, cmd, exist ? 0 : NLM_F_EXCL, set);
	struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

	put_ip4(nlh, IPSET_ATTR_IP, ip);
	if (cidr)
		mnl_attr_put_u8(nlh, IPSET_ATTR_CIDR, cidr);
	if (ip_to)
		put_ip4(nlh, IPSET_ATTR_IP_TO, ip_to);
	if (cadt)
		mnl_attr_put_u32(nlh, IPSET_ATTR_CADT_FLAGS | NLA_F_NET_BYTEORDER, htonl(cadt));
	mnl_attr_nest_end(nlh, d);
	return rcv(nlh);
}

static int name_cmd(uint8_t cmd, const char *a, const char *b)
{
	char buf[256];
	struct nlmsghdr *nlh = msg(buf, cmd, 0, a);

	if (b)
		mnl_attr_put_strz(nlh, IPSET_ATTR_SETNAME2, b);
	return rcv(nlh);
}

static int list_add(const char *list, const char *member)
{
	char buf[256];
	struct nlmsghdr *nlh = msg(buf, IPSET_CMD_ADD, NLM_F_EXCL, list);
	struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

	mnl_attr_put_strz(nlh, IPSET_ATTR_NAME, member);
	mnl_attr_nest_end(nlh, d);
	return rcv(nlh);
}

/* the number of members the LIST dump of set reports (IPSET_ATTR_ELEMENTS) */
static int elements(const char *set)
{
	char buf[256];
	const struct nlmsghdr *nlh;
	int n = -1;

	assert_int_equal(rcv(msg(buf, IPSET_CMD_LIST, NLM_F_DUMP, set)), -EINTR);
	nlh = (const struct nlmsghdr *)sent;
	assert_int_equal(nlh->nlmsg_type, (NFNL_SUBSYS_IPSET << 8) | IPSET_CMD_LIST);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_MULTI);
	const struct nlattr *a, *x;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(a) != IPSET_ATTR_DATA)
			continue;
		mnl_attr_for_each_nested(x, a) if (mnl_attr_get_type(x) == IPSET_ATTR_ELEMENTS) n =
		    (int)ntohl(mnl_attr_get_u32(x));
	}
	return n;
}

static int setup(void **state)
{
	(void)state;
	memset(&ctl, 0, sizeof(ctl));
	ctl_ipset_clock = fake_clock;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ctl_ipset_destroy(&ctl);
	return 0;
}

static void test_protocol_and_type(void **state)
{
	char buf[256];
	struct nlmsghdr *nlh = msg(buf, IPSET_CMD_TYPE, 0, NULL);
	const struct nlmsghdr *r = (const struct nlmsghdr *)sent;
	const struct nlattr *a;
	int rev = -1;

	(void)state;
	mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, "hash:net,port");
	mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, NFPROTO_IPV6);
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(r->nlmsg_type, (NFNL_SUBSYS_IPSET << 8) | IPSET_CMD_TYPE);
	mnl_attr_for_each(a, r,
			  sizeof(struct nfgenmsg)) if (mnl_attr_get_type(a) == IPSET_ATTR_REVISION)
	    rev = mnl_attr_get_u8(a);
	assert_int_equal(rev, 8); /* the kernel's hash:net,port */
	nlh = msg(buf, IPSET_CMD_TYPE, 0, NULL);
	mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, "bitmap:ip");
	mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, NFPROTO_IPV6);
	assert_int_equal(rcv(nlh), -IPSET_ERR_FIND_TYPE);
	/* protocol below the minimum */
	nlh = msg(buf, IPSET_CMD_LIST, NLM_F_DUMP, NULL);
	((struct nlattr *)((char *)nlh + NLMSG_HDRLEN + sizeof(struct nfgenmsg)))->nla_len = 5;
	*((uint8_t *)nlh + NLMSG_HDRLEN + sizeof(struct nfgenmsg) + 4) = 5;
	assert_int_equal(rcv(nlh), -IPSET_ERR_PROTOCOL);
}

static void test_hash_ip_errnos(void **state)
{
	(void)state;
	assert_int_equal(create("a", "hash:ip", NFPROTO_IPV4, 0, 4), 0);
	assert_int_equal(create("a", "hash:ip", NFPROTO_IPV4, 0, 4), -EEXIST);
	assert_int_equal(create("x", "hash:nope", NFPROTO_IPV4, 0, 0), -IPSET_ERR_FIND_TYPE);
	assert_int_equal(adt(IPSET_CMD_ADD, "a", "1.2.3.4", 0, NULL, 0, false), 0);
	assert_int_equal(adt(IPSET_CMD_ADD, "a", "1.2.3.4", 0, NULL, 0, false), -IPSET_ERR_EXIST);
	assert_int_equal(adt(IPSET_CMD_ADD, "a", "1.2.3.4", 0, NULL, 0, true), 0);
	assert_int_equal(adt(IPSET_CMD_TEST, "a", "1.2.3.4", 0, NULL, 0, false), 0);
	assert_int_equal(adt(IPSET_CMD_TEST, "a", "1.2.3.5", 0, NULL, 0, false), -IPSET_ERR_EXIST);
	assert_int_equal(adt(IPSET_CMD_DEL, "a", "1.2.3.5", 0, NULL, 0, false), -IPSET_ERR_EXIST);
	assert_int_equal(adt(IPSET_CMD_DEL, "a", "1.2.3.5", 0, NULL, 0, true), 0);
	assert_int_equal(adt(IPSET_CMD_ADD, "nope", "1.2.3.5", 0, NULL, 0, false), -ENOENT);
	/* a /30 is four addresses; maxelem 4 then stops the range */
	assert_int_equal(adt(IPSET_CMD_ADD, "a", "10.0.0.0", 30, NULL, 0, false),
			 -IPSET_ERR_HASH_FULL);
	assert_int_equal(elements("a"), 4);
	assert_int_equal(adt(IPSET_CMD_ADD, "a", "10.0.0.0", 33, NULL, 0, false),
			 -IPSET_ERR_INVALID_CIDR);
	/* a timeout on a set without one */
	{
		char buf[256];
		struct nlmsghdr *nlh = msg(buf, IPSET_CMD_ADD, 0, "a");
		struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

		put_ip4(nlh, IPSET_ATTR_IP, "9.9.9.9");
		mnl_attr_put_u32(nlh, IPSET_ATTR_TIMEOUT | NLA_F_NET_BYTEORDER, htonl(5));
		mnl_attr_nest_end(nlh, d);
		assert_int_equal(rcv(nlh), -IPSET_ERR_TIMEOUT);
	}
	assert_int_equal(elements("a"), 4);
}

static void test_malformed_changes_nothing(void **state)
{
	char buf[256];
	struct nlmsghdr *nlh;
	struct nlattr *d;

	(void)state;
	assert_int_equal(create("m", "hash:ip", NFPROTO_IPV4, 0, 0), 0);
	/* the address without NLA_F_NET_BYTEORDER (ip_set_get_ipaddr4) */
	nlh = msg(buf, IPSET_CMD_ADD, 0, "m");
	d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	{
		struct nlattr *n = mnl_attr_nest_start(nlh, IPSET_ATTR_IP);

		mnl_attr_put_u32(nlh, IPSET_ATTR_IPADDR_IPV4, 0x01020304);
		mnl_attr_nest_end(nlh, n);
	}
	mnl_attr_nest_end(nlh, d);
	assert_int_equal(rcv(nlh), -IPSET_ERR_PROTOCOL);
	/* an attribute hash:ip does not take */
	nlh = msg(buf, IPSET_CMD_ADD, 0, "m");
	d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	put_ip4(nlh, IPSET_ATTR_IP, "1.1.1.1");
	mnl_attr_put_strz(nlh, IPSET_ATTR_NAME, "x");
	mnl_attr_nest_end(nlh, d);
	assert_int_equal(rcv(nlh), -IPSET_ERR_PROTOCOL);
	/* DATA without NLA_F_NESTED */
	nlh = msg(buf, IPSET_CMD_ADD, 0, "m");
	mnl_attr_put_u32(nlh, IPSET_ATTR_DATA, 0);
	assert_int_equal(rcv(nlh), -IPSET_ERR_PROTOCOL);
	/* a name without its NUL: nfnetlink's policy (EINVAL), before ipset */
	nlh = msg(buf, IPSET_CMD_DESTROY, 0, NULL);
	mnl_attr_put(nlh, IPSET_ATTR_SETNAME, 1, "m");
	assert_int_equal(rcv(nlh), -EINVAL);
	/* a truncated nest never reads past the message */
	nlh = msg(buf, IPSET_CMD_ADD, 0, "m");
	d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	put_ip4(nlh, IPSET_ATTR_IP, "1.1.1.1");
	mnl_attr_nest_end(nlh, d);
	d->nla_len += 64;
	assert_int_equal(rcv(nlh), -IPSET_ERR_PROTOCOL);
	assert_int_equal(elements("m"), 0);
}

static void test_timeout_expires(void **state)
{
	(void)state;
	assert_int_equal(create("t", "hash:ip", NFPROTO_IPV4, 10, 0), 0);
	assert_int_equal(adt(IPSET_CMD_ADD, "t", "1.1.1.1", 0, NULL, 0, false), 0);
	now_ms += 9999;
	assert_int_equal(adt(IPSET_CMD_TEST, "t", "1.1.1.1", 0, NULL, 0, false), 0);
	now_ms += 1;
	assert_int_equal(adt(IPSET_CMD_TEST, "t", "1.1.1.1", 0, NULL, 0, false), -IPSET_ERR_EXIST);
	/* an expired entry is not there to delete, and adds as new */
	assert_int_equal(adt(IPSET_CMD_DEL, "t", "1.1.1.1", 0, NULL, 0, false), -IPSET_ERR_EXIST);
	assert_int_equal(adt(IPSET_CMD_ADD, "t", "1.1.1.1", 0, NULL, 0, false), 0);
	assert_int_equal(elements("t"), 1);
}

static void test_hash_net(void **state)
{
	(void)state;
	assert_int_equal(create("n", "hash:net", NFPROTO_IPV4, 0, 0), 0);
	assert_int_equal(adt(IPSET_CMD_ADD, "n", "192.168.0.0", 16, NULL, 0, false), 0);
	assert_int_equal(
	    adt(IPSET_CMD_ADD, "n", "192.168.1.0", 24, NULL, IPSET_FLAG_NOMATCH, false), 0);
	assert_int_equal(adt(IPSET_CMD_TEST, "n", "192.168.2.7", 0, NULL, 0, false), 0);
	assert_int_equal(adt(IPSET_CMD_TEST, "n", "192.168.1.7", 0, NULL, 0, false),
			 -IPSET_ERR_EXIST);
	assert_int_equal(
	    adt(IPSET_CMD_TEST, "n", "192.168.1.0", 24, NULL, IPSET_FLAG_NOMATCH, false), 0);
	assert_int_equal(adt(IPSET_CMD_ADD, "n", "10.0.0.0", 0, NULL, 0, false), 0); /* a /32 */
	/* 10.1.0.1-10.1.0.6 is .1/32 .2/31 .4/31 .6/32 */
	assert_int_equal(adt(IPSET_CMD_ADD, "n", "10.1.0.1", 0, "10.1.0.6", 0, false), 0);
	assert_int_equal(elements("n"), 7);
	assert_int_equal(adt(IPSET_CMD_ADD, "n", "0.0.0.0", 0, "255.255.255.255", 0, false),
			 -IPSET_ERR_HASH_RANGE);
	assert_int_equal(adt(IPSET_CMD_ADD, "n", "1.0.0.0", 0, NULL, 0, false), 0);
}

/* hash:ip,port,net: one element, the net ip2/cidr2 (0: none); ip_to and
 * ip2_to ranges, port_to (0: none) */
static int ipn(uint8_t cmd, const char *set, const char *ip, const char *ip_to, uint16_t port,
	       uint16_t port_to, const char *ip2, uint8_t cidr2, const char *ip2_to, uint32_t cadt)
{
	char buf[512];
	struct nlmsghdr *nlh = msg(buf, cmd, NLM_F_EXCL, set);
	struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

	put_ip4(nlh, IPSET_ATTR_IP, ip);
	if (ip_to)
		put_ip4(nlh, IPSET_ATTR_IP_TO, ip_to);
	put_ip4(nlh, IPSET_ATTR_IP2, ip2);
	if (cidr2)
		mnl_attr_put_u8(nlh, IPSET_ATTR_CIDR2, cidr2);
	if (ip2_to)
		put_ip4(nlh, IPSET_ATTR_IP2_TO, ip2_to);
	mnl_attr_put_u16(nlh, IPSET_ATTR_PORT | NLA_F_NET_BYTEORDER, htons(port));
	if (port_to)
		mnl_attr_put_u16(nlh, IPSET_ATTR_PORT_TO | NLA_F_NET_BYTEORDER, htons(port_to));
	mnl_attr_put_u8(nlh, IPSET_ATTR_PROTO, IPPROTO_TCP);
	if (cadt)
		mnl_attr_put_u32(nlh, IPSET_ATTR_CADT_FLAGS | NLA_F_NET_BYTEORDER, htonl(cadt));
	mnl_attr_nest_end(nlh, d);
	return rcv(nlh);
}

/* hash:ip,port,net (hash_ipportnet4_uadt): the net's most specific
 * match on a host test, nomatch, the three ranges expanded (hosts,
 * ports, the largest nets), the kernel's errnos, and the workers' copy
 * (three dimensions, the net prefixes present) */
static void test_hash_ipportnet(void **state)
{
	struct nftdp_vm_ipset *v;

	(void)state;
	assert_int_equal(create("ipn", "hash:ip,port,net", NFPROTO_IPV4, 0, 0), 0);
	assert_int_equal(ipn(IPSET_CMD_ADD, "ipn", "1.1.1.1", NULL, 80, 0, "10.0.0.0", 24, NULL, 0),
			 0);
	assert_int_equal(ipn(IPSET_CMD_ADD, "ipn", "1.1.1.1", NULL, 80, 0, "10.0.0.128", 25, NULL,
			     IPSET_FLAG_NOMATCH),
			 0);
	assert_int_equal(ipn(IPSET_CMD_ADD, "ipn", "1.1.1.1", NULL, 80, 0, "10.0.0.9", 24, NULL, 0),
			 -IPSET_ERR_EXIST);
	assert_int_equal(ipn(IPSET_CMD_TEST, "ipn", "1.1.1.1", NULL, 80, 0, "10.0.0.7", 0, NULL, 0),
			 0);
	assert_int_equal(
	    ipn(IPSET_CMD_TEST, "ipn", "1.1.1.1", NULL, 80, 0, "10.0.0.200", 0, NULL, 0),
	    -IPSET_ERR_EXIST);
	assert_int_equal(ipn(IPSET_CMD_TEST, "ipn", "1.1.1.1", NULL, 81, 0, "10.0.0.7", 0, NULL, 0),
			 -IPSET_ERR_EXIST);
	assert_int_equal(ipn(IPSET_CMD_TEST, "ipn", "1.1.1.2", NULL, 80, 0, "10.0.0.7", 0, NULL, 0),
			 -IPSET_ERR_EXIST);
	assert_int_equal(
	    ipn(IPSET_CMD_TEST, "ipn", "1.1.1.1", NULL, 80, 0, "10.0.0.0", 25, NULL, 0),
	    -IPSET_ERR_EXIST);
	assert_int_equal(elements("ipn"), 2);
	/* 2 hosts x 2 ports x (.1/32 .2/31 .4/31 .6/32) */
	assert_int_equal(
	    ipn(IPSET_CMD_ADD, "ipn", "2.0.0.1", "2.0.0.2", 53, 54, "10.1.0.1", 0, "10.1.0.6", 0),
	    0);
	assert_int_equal(elements("ipn"), 18);
	assert_int_equal(ipn(IPSET_CMD_TEST, "ipn", "2.0.0.2", NULL, 54, 0, "10.1.0.5", 0, NULL, 0),
			 0);
	assert_int_equal(
	    ipn(IPSET_CMD_ADD, "ipn", "3.0.0.1", NULL, 1, 0, "0.0.0.0", 0, "255.255.255.255", 0),
	    -IPSET_ERR_HASH_RANGE);
	assert_int_equal(ipn(IPSET_CMD_ADD, "ipn", "3.0.0.1", NULL, 1, 0, "10.0.0.0", 33, NULL, 0),
			 -IPSET_ERR_INVALID_CIDR);
	assert_int_equal(ipn(IPSET_CMD_ADD, "ipn", "3.0.0.1", NULL, 1, 0, "10.0.0.0", 0, NULL, 0),
			 0);
	assert_int_equal(
	    ipn(IPSET_CMD_DEL, "ipn", "2.0.0.1", "2.0.0.2", 53, 0, "10.1.0.1", 0, "10.1.0.6", 0),
	    0);
	assert_int_equal(elements("ipn"), 11);
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_non_null(v);
	assert_int_equal(v->kind, NFTDP_VM_IPSET_HASH_IPPORTNET);
	assert_int_equal(v->dim, 3);
	assert_true(v->cidrs[24] && v->cidrs[25] && v->cidrs[31] && v->cidrs[32] && !v->cidrs[16]);
	assert_null(nftdp_vm_ipset_publish(0, v));
	/* a bitmap has no second address */
	assert_int_equal(create("bm", "bitmap:port", NFPROTO_IPV4, 0, 0), 0);
	assert_int_equal(ipn(IPSET_CMD_ADD, "bm", "1.1.1.1", NULL, 150, 0, "10.0.0.0", 24, NULL, 0),
			 -IPSET_ERR_PROTOCOL);
}

/* hash:net,iface: one IPv4 element, ip/cidr (0: none, 255: /0), name,
 * CADT flags */
static int nif(uint8_t cmd, const char *set, const char *ip, uint8_t cidr, const char *ip_to,
	       const char *name, uint32_t cadt)
{
	char buf[512];
	struct nlmsghdr *nlh = msg(buf, cmd, NLM_F_EXCL, set);
	struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

	put_ip4(nlh, IPSET_ATTR_IP, ip);
	if (cidr)
		mnl_attr_put_u8(nlh, IPSET_ATTR_CIDR, cidr == 255 ? 0 : cidr);
	if (ip_to)
		put_ip4(nlh, IPSET_ATTR_IP_TO, ip_to);
	mnl_attr_put_strz(nlh, IPSET_ATTR_IFACE, name);
	if (cadt)
		mnl_attr_put_u32(nlh, IPSET_ATTR_CADT_FLAGS | NLA_F_NET_BYTEORDER, htonl(cadt));
	mnl_attr_nest_end(nlh, d);
	return rcv(nlh);
}

/* hash:net,iface (hash_netiface4_uadt): names part of the element,
 * physdev a separate one, /0 allowed, a range split into nets, a
 * wildcard element equal to the names it prefixes (data_equal) */
static void test_hash_netiface(void **state)
{
	struct nftdp_vm_ipset *v;

	(void)state;
	assert_int_equal(create("nif", "hash:net,iface", NFPROTO_IPV4, 0, 0), 0);
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "10.0.0.0", 24, NULL, "eth0", 0), 0);
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "10.0.0.0", 24, NULL, "eth1", 0), 0);
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "10.0.0.9", 24, NULL, "eth1", 0),
			 -IPSET_ERR_EXIST);
	assert_int_equal(
	    nif(IPSET_CMD_ADD, "nif", "10.0.0.0", 24, NULL, "eth1", IPSET_FLAG_PHYSDEV), 0);
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "0.0.0.0", 255, NULL, "wan0", 0), 0);
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "10.0.0.0", 33, NULL, "eth0", 0),
			 -IPSET_ERR_INVALID_CIDR);
	assert_int_equal(nif(IPSET_CMD_TEST, "nif", "10.0.0.7", 0, NULL, "eth1", 0), 0);
	assert_int_equal(nif(IPSET_CMD_TEST, "nif", "10.0.0.7", 0, NULL, "eth2", 0),
			 -IPSET_ERR_EXIST);
	assert_int_equal(nif(IPSET_CMD_TEST, "nif", "9.9.9.9", 0, NULL, "wan0", 0), 0);
	assert_int_equal(nif(IPSET_CMD_TEST, "nif", "9.9.9.9", 0, NULL, "eth0", 0),
			 -IPSET_ERR_EXIST);
	assert_int_equal(
	    nif(IPSET_CMD_DEL, "nif", "10.0.0.0", 24, NULL, "eth1", IPSET_FLAG_PHYSDEV), 0);
	assert_int_equal(
	    nif(IPSET_CMD_DEL, "nif", "10.0.0.0", 24, NULL, "eth1", IPSET_FLAG_PHYSDEV),
	    -IPSET_ERR_EXIST);
	assert_int_equal(elements("nif"), 3);
	/* .1/32 .2/31 .4/31 .6/32 */
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "10.1.0.1", 0, "10.1.0.6", "br0", 0), 0);
	assert_int_equal(elements("nif"), 7);
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "0.0.0.0", 0, "255.255.255.255", "br0", 0),
			 -IPSET_ERR_HASH_RANGE);
	/* a wildcard "veth" holds veth7; a name it prefixes exists already */
	assert_int_equal(
	    nif(IPSET_CMD_ADD, "nif", "10.2.0.0", 16, NULL, "veth", IPSET_FLAG_IFACE_WILDCARD), 0);
	assert_int_equal(nif(IPSET_CMD_TEST, "nif", "10.2.3.4", 0, NULL, "veth7", 0), 0);
	assert_int_equal(nif(IPSET_CMD_TEST, "nif", "10.2.3.4", 0, NULL, "vet", 0),
			 -IPSET_ERR_EXIST);
	assert_int_equal(nif(IPSET_CMD_ADD, "nif", "10.2.0.0", 16, NULL, "veth12", 0),
			 -IPSET_ERR_EXIST);
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_non_null(v);
	assert_int_equal(v->kind, NFTDP_VM_IPSET_HASH_NETIFACE);
	assert_int_equal(v->dim, 2);
	assert_true(v->cidrs[0] && v->cidrs[24] && v->cidrs[16] && !v->cidrs[8]);
	assert_null(nftdp_vm_ipset_publish(0, v));
}

static void test_bitmap_port_range(void **state)
{
	char buf[256];
	struct nlmsghdr *nlh;
	struct nlattr *d;

	(void)state;
	assert_int_equal(create("p", "bitmap:port", NFPROTO_IPV4, 0, 0), 0);
	nlh = msg(buf, IPSET_CMD_ADD, 0, "p");
	d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	mnl_attr_put_u16(nlh, IPSET_ATTR_PORT | NLA_F_NET_BYTEORDER, htons(99));
	mnl_attr_nest_end(nlh, d);
	assert_int_equal(rcv(nlh), -IPSET_ERR_BITMAP_RANGE);
	nlh = msg(buf, IPSET_CMD_ADD, 0, "p");
	d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	mnl_attr_put_u16(nlh, IPSET_ATTR_PORT | NLA_F_NET_BYTEORDER, htons(150));
	mnl_attr_put_u16(nlh, IPSET_ATTR_PORT_TO | NLA_F_NET_BYTEORDER, htons(159));
	mnl_attr_nest_end(nlh, d);
	assert_int_equal(rcv(nlh), 0);
	assert_int_equal(elements("p"), 10);
}

static void test_list_set_refs(void **state)
{
	(void)state;
	assert_int_equal(create("s1", "hash:ip", NFPROTO_IPV4, 0, 0), 0);
	assert_int_equal(create("L", "list:set", NFPROTO_IPV4, 0, 0), 0);
	assert_int_equal(list_add("L", "s1"), 0);
	assert_int_equal(list_add("L", "s1"), -IPSET_ERR_EXIST);
	assert_int_equal(list_add("L", "nope"), -IPSET_ERR_NAME);
	assert_int_equal(list_add("L", "L"), -IPSET_ERR_LOOP);
	assert_int_equal(name_cmd(IPSET_CMD_DESTROY, "s1", NULL), -IPSET_ERR_BUSY);
	assert_int_equal(name_cmd(IPSET_CMD_RENAME, "s1", "s2"), -IPSET_ERR_REFERENCED);
	assert_int_equal(name_cmd(IPSET_CMD_SWAP, "s1", "L"), -IPSET_ERR_TYPE_MISMATCH);
	assert_int_equal(name_cmd(IPSET_CMD_SWAP, "s1", "zz"), -IPSET_ERR_EXIST_SETNAME2);
	assert_int_equal(name_cmd(IPSET_CMD_DESTROY, NULL, NULL), -IPSET_ERR_BUSY);
	assert_int_equal(name_cmd(IPSET_CMD_FLUSH, "L", NULL), 0);
	assert_int_equal(name_cmd(IPSET_CMD_RENAME, "s1", "s2"), 0);
	assert_int_equal(name_cmd(IPSET_CMD_DESTROY, "s2", NULL), 0);
	assert_int_equal(name_cmd(IPSET_CMD_DESTROY, "s2", NULL), -ENOENT);
}

/* restore mode: ADT of several DATA with LINENO; the failing line comes
 * back in the echoed request's LINENO and no ack follows (-EINTR) */
static void test_restore_lineno(void **state)
{
	char buf[512];
	struct nlmsghdr *nlh;
	struct nlattr *adtn, *d;
	const struct nlmsghdr *r = (const struct nlmsghdr *)sent;
	const struct nlmsgerr *e;
	const struct nlattr *a;
	uint32_t line = 0;

	(void)state;
	assert_int_equal(create("r", "hash:ip", NFPROTO_IPV4, 0, 0), 0);
	nlh = msg(buf, IPSET_CMD_ADD, NLM_F_EXCL, "r");
	mnl_attr_put_u32(nlh, IPSET_ATTR_LINENO, 0);
	adtn = mnl_attr_nest_start(nlh, IPSET_ATTR_ADT);
	for (uint32_t i = 0; i < 3; i++) {
		d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
		put_ip4(nlh, IPSET_ATTR_IP, i == 2 ? "7.7.7.1" : i == 1 ? "7.7.7.1" : "7.7.7.0");
		mnl_attr_put_u32(nlh, IPSET_ATTR_LINENO, 5 + i);
		mnl_attr_nest_end(nlh, d);
	}
	mnl_attr_nest_end(nlh, adtn);
	assert_int_equal(rcv(nlh), -EINTR);
	assert_int_equal(r->nlmsg_type, NLMSG_ERROR);
	e = mnl_nlmsg_get_payload(r);
	assert_int_equal(e->error, -IPSET_ERR_EXIST);
	mnl_attr_for_each(a, &e->msg,
			  sizeof(struct nfgenmsg)) if (mnl_attr_get_type(a) == IPSET_ATTR_LINENO)
	    line = mnl_attr_get_u32(a);
	assert_int_equal(line, 7);
	assert_int_equal(elements("r"), 2);
}

/* every change reaches the workers' copy of the set (sync_workers):
 * published after add and del, gone after destroy */
static void test_published_to_workers(void **state)
{
	struct nftdp_vm_ipset *v;

	(void)state;
	assert_int_equal(create("w", "hash:net", NFPROTO_IPV4, 0, 0), 0); /* index 0 */
	assert_int_equal(adt(IPSET_CMD_ADD, "w", "10.0.0.0", 8, NULL, 0, false), 0);
	assert_int_equal(adt(IPSET_CMD_ADD, "w", "10.1.0.0", 16, NULL, IPSET_FLAG_NOMATCH, false),
			 0);
	/* take the copy out to look at it, then put it back */
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_non_null(v);
	assert_int_equal(v->n, 2);
	assert_int_equal(v->kind, NFTDP_VM_IPSET_HASH_NET);
	assert_int_equal(v->dim, 1);
	assert_true(v->cidrs[8] && v->cidrs[16] && !v->cidrs[24]);
	assert_null(nftdp_vm_ipset_publish(0, v));
	assert_int_equal(adt(IPSET_CMD_DEL, "w", "10.0.0.0", 8, NULL, 0, false), 0);
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_non_null(v);
	assert_int_equal(v->n, 1);
	assert_true(v->e[0].nomatch);
	assert_null(nftdp_vm_ipset_publish(0, v));
	assert_int_equal(name_cmd(IPSET_CMD_DESTROY, "w", NULL), 0);
	assert_null(nftdp_vm_ipset_publish(0, NULL));
}

static struct nftdp_vm_ipset_event ev_of(uint16_t id, bool del, const char *ip, uint8_t flags,
					 uint32_t timeout)
{
	struct nftdp_vm_ipset_event ev;

	memset(&ev, 0, sizeof(ev));
	inet_pton(AF_INET, ip, ev.k.ip);
	ev.id = id;
	ev.del = del;
	ev.flags = flags;
	ev.timeout = timeout;
	return ev;
}

/* -j SET: the adds and deletes the workers queue are applied as
 * ip_set_add/ip_set_del (--exist, --timeout, the set's default timeout,
 * list:set's next member only when the last did not take it) and
 * published; ipset sees them */
static void test_packet_adds(void **state)
{
	struct nftdp_vm_ipset_event ev[3];
	struct nftdp_vm_ipset *v;

	(void)state;
	nftdp_vm_ipset_poll(NULL, NULL);
	assert_int_equal(create("p", "hash:ip", NFPROTO_IPV4, 100, 0), 0); /* index 0 */
	assert_int_equal(create("q", "hash:ip", NFPROTO_IPV4, 0, 0), 0);   /* index 1 */
	ev[0] = ev_of(0, false, "10.0.0.5", 0, UINT32_MAX);
	ev[1] = ev_of(0, false, "10.0.0.6", 0, 7);
	assert_true(nftdp_vm_ipset_put(0, ev, 2));
	ctl_ipset_events(&ctl);
	assert_int_equal(elements("p"), 2);
	assert_int_equal(adt(IPSET_CMD_TEST, "p", "10.0.0.6", 0, NULL, 0, false), 0);
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_non_null(v);
	assert_int_equal(v->n, 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(v->e[i].expire_ms,
				 now_ms + (v->e[i].k.ip[3] == 5 ? 100000 : 7000));
	assert_null(nftdp_vm_ipset_publish(0, v));
	/* again without --exist: the timeout stays; with it: refreshed */
	now_ms += 1000;
	ev[0] = ev_of(0, false, "10.0.0.6", 0, 50);
	assert_true(nftdp_vm_ipset_put(0, ev, 1));
	ctl_ipset_events(&ctl);
	v = nftdp_vm_ipset_publish(0, NULL);
	for (uint32_t i = 0; i < v->n; i++)
		if (v->e[i].k.ip[3] == 6)
			assert_int_equal(v->e[i].expire_ms, now_ms - 1000 + 7000);
	assert_null(nftdp_vm_ipset_publish(0, v));
	ev[0].flags = NFTDP_VM_IPSET_EV_EXIST;
	assert_true(nftdp_vm_ipset_put(0, ev, 1));
	ctl_ipset_events(&ctl);
	v = nftdp_vm_ipset_publish(0, NULL);
	for (uint32_t i = 0; i < v->n; i++)
		if (v->e[i].k.ip[3] == 6)
			assert_int_equal(v->e[i].expire_ms, now_ms + 50000);
	assert_null(nftdp_vm_ipset_publish(0, v));
	/* delete */
	ev[0] = ev_of(0, true, "10.0.0.5", 0, UINT32_MAX);
	assert_true(nftdp_vm_ipset_put(0, ev, 1));
	ctl_ipset_events(&ctl);
	assert_int_equal(elements("p"), 1);
	/* list:set's tries: p has .6, so q takes it; then p takes .7 and q
	 * is not tried */
	ev[0] = ev_of(0, false, "10.0.0.6", 0, UINT32_MAX);
	ev[1] = ev_of(1, false, "10.0.0.6", NFTDP_VM_IPSET_EV_ALT, UINT32_MAX);
	assert_true(nftdp_vm_ipset_put(0, ev, 2));
	ev[0] = ev_of(0, false, "10.0.0.7", 0, UINT32_MAX);
	ev[1] = ev_of(1, false, "10.0.0.7", NFTDP_VM_IPSET_EV_ALT, UINT32_MAX);
	assert_true(nftdp_vm_ipset_put(0, ev, 2));
	ctl_ipset_events(&ctl);
	assert_int_equal(elements("p"), 2);
	assert_int_equal(elements("q"), 1);
	assert_int_equal(adt(IPSET_CMD_TEST, "q", "10.0.0.6", 0, NULL, 0, false), 0);
	/* a set destroyed since: nothing */
	ev[0] = ev_of(1, false, "10.0.0.9", 0, UINT32_MAX);
	assert_true(nftdp_vm_ipset_put(0, ev, 1));
	assert_int_equal(name_cmd(IPSET_CMD_DESTROY, "q", NULL), 0);
	ctl_ipset_events(&ctl);
	assert_int_equal(elements("p"), 2);
}

/* bitmap:ip,mac: create a range */
static int create_ipmac(const char *name, const char *from, const char *to, uint32_t timeout)
{
	char buf[512];
	struct nlmsghdr *nlh = msg(buf, IPSET_CMD_CREATE, NLM_F_CREATE | NLM_F_EXCL, name);
	struct nlattr *d;

	mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, "bitmap:ip,mac");
	mnl_attr_put_u8(nlh, IPSET_ATTR_REVISION, 3);
	mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, NFPROTO_IPV4);
	d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
	put_ip4(nlh, IPSET_ATTR_IP, from);
	put_ip4(nlh, IPSET_ATTR_IP_TO, to);
	if (timeout)
		mnl_attr_put_u32(nlh, IPSET_ATTR_TIMEOUT | NLA_F_NET_BYTEORDER, htonl(timeout));
	if (create_cadt)
		mnl_attr_put_u32(nlh, IPSET_ATTR_CADT_FLAGS | NLA_F_NET_BYTEORDER,
				 htonl(create_cadt));
	mnl_attr_nest_end(nlh, d);
	return rcv(nlh);
}

/* add/del/test of ip with mac (NULL: none; maclen: its length) */
static int ipmac(uint8_t cmd, const char *set, const char *ip, const uint8_t *mac, int maclen,
		 uint32_t timeout, bool exist)
{
	char buf[512];
	struct nlmsghdr *nlh = msg(buf, cmd, exist ? 0 : NLM_F_EXCL, set);
	struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

	put_ip4(nlh, IPSET_ATTR_IP, ip);
	if (mac)
		mnl_attr_put(nlh, IPSET_ATTR_ETHER, (size_t)maclen, mac);
	if (timeout)
		mnl_attr_put_u32(nlh, IPSET_ATTR_TIMEOUT | NLA_F_NET_BYTEORDER, htonl(timeout));
	mnl_attr_nest_end(nlh, d);
	return rcv(nlh);
}

/* bitmap:ip,mac as bitmap_ipmac_* on the kernel: at most 65536
 * addresses; an element without a MAC is filled by the next add with
 * one, its timeout starting only then (the one stored at the first add);
 * a MAC once set is replaced only with -exist; test without a MAC or of
 * an element without one is "in the set"; del ignores the MAC; the first
 * packet's event fills the MAC and counts the packet; out of range and a
 * short MAC are refused */
static void test_bitmap_ipmac(void **state)
{
	static const uint8_t ma[6] = {0, 0x11, 0x22, 0x33, 0x44, 0x55};
	static const uint8_t mb[6] = {0, 0x11, 0x22, 0x33, 0x44, 0x66};
	struct nftdp_vm_ipset_event ev;
	struct nftdp_vm_ipset *v;

	(void)state;
	nftdp_vm_ipset_poll(NULL, NULL);
	assert_int_equal(create_ipmac("big", "10.0.0.0", "10.1.0.0", 0),
			 -IPSET_ERR_BITMAP_RANGE_SIZE);
	assert_int_equal(create_ipmac("m", "10.0.0.255", "10.0.0.0", 100), 0); /* index 0 */
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.1.0", NULL, 0, 0, false),
			 -IPSET_ERR_BITMAP_RANGE);
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.1", ma, 5, 0, false),
			 -IPSET_ERR_PROTOCOL);
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.1", NULL, 0, 40, false), 0);
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.1", NULL, 0, 0, false),
			 -IPSET_ERR_EXIST);
	assert_int_equal(ipmac(IPSET_CMD_TEST, "m", "10.0.0.1", mb, 6, 0, false), 0);
	/* the timeout has not started: 200 s later it is still there */
	now_ms += 200000;
	assert_int_equal(elements("m"), 1);
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.1", ma, 6, 0, false), 0);
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.1", mb, 6, 0, false), -IPSET_ERR_EXIST);
	assert_int_equal(ipmac(IPSET_CMD_TEST, "m", "10.0.0.1", mb, 6, 0, false), -IPSET_ERR_EXIST);
	assert_int_equal(ipmac(IPSET_CMD_TEST, "m", "10.0.0.1", ma, 6, 0, false), 0);
	assert_int_equal(ipmac(IPSET_CMD_TEST, "m", "10.0.0.1", NULL, 0, 0, false), 0);
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_non_null(v);
	assert_int_equal(v->kind, NFTDP_VM_IPSET_BITMAP_IPMAC);
	assert_int_equal(v->dim, 2);
	assert_int_equal(v->first, 0x0a000000);
	assert_int_equal(v->last, 0x0a0000ff);
	assert_true(v->e[0].mac_set);
	assert_memory_equal(v->e[0].mac, ma, 6);
	assert_int_equal(v->e[0].expire_ms, now_ms + 40000); /* the stored 40 s */
	assert_null(nftdp_vm_ipset_publish(0, v));
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.1", mb, 6, 0, true), 0);
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_memory_equal(v->e[0].mac, mb, 6);
	assert_int_equal(v->e[0].expire_ms, now_ms + 100000); /* re-added: the set's */
	assert_null(nftdp_vm_ipset_publish(0, v));
	/* expired after 100 s */
	now_ms += 100000;
	assert_int_equal(ipmac(IPSET_CMD_TEST, "m", "10.0.0.1", NULL, 0, 0, false),
			 -IPSET_ERR_EXIST);
	/* del ignores the MAC */
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.2", ma, 6, 0, false), 0);
	assert_int_equal(ipmac(IPSET_CMD_DEL, "m", "10.0.0.2", mb, 6, 0, false), 0);
	assert_int_equal(ipmac(IPSET_CMD_DEL, "m", "10.0.0.2", NULL, 0, 0, false),
			 -IPSET_ERR_EXIST);
	/* a packet fills an element without a MAC */
	assert_int_equal(ipmac(IPSET_CMD_ADD, "m", "10.0.0.3", NULL, 0, 0, false), 0);
	memset(&ev, 0, sizeof(ev));
	inet_pton(AF_INET, "10.0.0.3", ev.k.ip);
	ev.flags = NFTDP_VM_IPSET_EV_MAC;
	ev.timeout = UINT32_MAX;
	ev.len = 60;
	memcpy(ev.mac, mb, 6);
	assert_true(nftdp_vm_ipset_put(0, &ev, 1));
	ctl_ipset_events(&ctl);
	assert_int_equal(ipmac(IPSET_CMD_TEST, "m", "10.0.0.3", mb, 6, 0, false), 0);
	assert_int_equal(ipmac(IPSET_CMD_TEST, "m", "10.0.0.3", ma, 6, 0, false), -IPSET_ERR_EXIST);
	v = nftdp_vm_ipset_publish(0, NULL);
	for (uint32_t i = 0; i < v->n; i++) {
		if (v->e[i].k.ip[3] != 3)
			continue; /* the expired .1 stays until a gc */
		assert_true(v->e[i].mac_set);
		assert_int_equal(v->e[i].expire_ms, now_ms + 100000);
	}
	assert_null(nftdp_vm_ipset_publish(0, v));
}

/* a bitmap with counters keeps an id's counters across del and flush
 * (the kernel's extension memory); what an add gives wins; a hash set's
 * new element starts at zero */
static void test_bitmap_counters_kept(void **state)
{
	struct nftdp_vm_ipset *v;
	const char *sets[] = {"b", "h"};

	(void)state;
	create_cadt = IPSET_FLAG_WITH_COUNTERS;
	assert_int_equal(create_ipmac("b", "10.0.0.0", "10.0.0.255", 0), 0); /* index 0 */
	assert_int_equal(create("h", "hash:ip", NFPROTO_IPV4, 0, 0), 0);     /* index 1 */
	create_cadt = 0;
	for (int i = 0; i < 2; i++) {
		char buf[256];
		struct nlmsghdr *nlh = msg(buf, IPSET_CMD_ADD, NLM_F_EXCL, sets[i]);
		struct nlattr *d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);

		put_ip4(nlh, IPSET_ATTR_IP, "10.0.0.1");
		mnl_attr_put_u64(nlh, IPSET_ATTR_PACKETS | NLA_F_NET_BYTEORDER, htobe64(5));
		mnl_attr_put_u64(nlh, IPSET_ATTR_BYTES | NLA_F_NET_BYTEORDER, htobe64(7));
		mnl_attr_nest_end(nlh, d);
		assert_int_equal(rcv(nlh), 0);
		assert_int_equal(ipmac(IPSET_CMD_DEL, sets[i], "10.0.0.1", NULL, 0, 0, false), 0);
		assert_int_equal(ipmac(IPSET_CMD_ADD, sets[i], "10.0.0.1", NULL, 0, 0, false), 0);
		v = nftdp_vm_ipset_publish((uint16_t)i, NULL);
		assert_non_null(v);
		assert_int_equal(v->n, 1);
		assert_int_equal(v->e[0].packets, i == 0 ? 5 : 0);
		assert_int_equal(v->e[0].bytes, i == 0 ? 7 : 0);
		assert_null(nftdp_vm_ipset_publish((uint16_t)i, v));
	}
	assert_int_equal(name_cmd(IPSET_CMD_FLUSH, "b", NULL), 0);
	assert_int_equal(ipmac(IPSET_CMD_ADD, "b", "10.0.0.1", NULL, 0, 0, false), 0);
	v = nftdp_vm_ipset_publish(0, NULL);
	assert_int_equal(v->e[0].packets, 5);
	assert_null(nftdp_vm_ipset_publish(0, v));
}

/* the element of v with ip's last byte */
static struct nftdp_vm_ipset_elem *elem_of(struct nftdp_vm_ipset *v, uint8_t last)
{
	for (uint32_t i = 0; i < v->n; i++)
		if (v->e[i].k.ip[3] == last)
			return &v->e[i];
	fail();
	return NULL;
}

/* counters: what packets add to the published copy is folded into the
 * set before a command and carried into the next copy, also what came
 * in while the old copy was being replaced; a packet's add starts the
 * element at 1 packet and its length */
static void test_counters_fold(void **state)
{
	struct nftdp_vm_ipset_event ev;
	struct nftdp_vm_ipset *v, *v2;

	(void)state;
	nftdp_vm_ipset_poll(NULL, NULL);
	create_cadt = IPSET_FLAG_WITH_COUNTERS;
	assert_int_equal(create("c", "hash:ip", NFPROTO_IPV4, 0, 0), 0); /* index 0 */
	create_cadt = 0;
	assert_int_equal(adt(IPSET_CMD_ADD, "c", "10.0.0.1", 0, NULL, 0, false), 0);
	v = nftdp_vm_ipset_get(0);
	assert_non_null(v);
	assert_true(v->counters);
	atomic_fetch_add(&elem_of(v, 1)->packets, 3);
	atomic_fetch_add(&elem_of(v, 1)->bytes, 300);
	/* a command: folded first, then the new copy starts from there */
	assert_int_equal(adt(IPSET_CMD_ADD, "c", "10.0.0.2", 0, NULL, 0, false), 0);
	v2 = nftdp_vm_ipset_get(0);
	assert_ptr_not_equal(v, v2);
	assert_int_equal(elem_of(v2, 1)->packets, 3);
	assert_int_equal(elem_of(v2, 1)->bytes, 300);
	assert_int_equal(elem_of(v2, 2)->packets, 0);
	/* a test command folds too; a later change carries 3 + 2 */
	atomic_fetch_add(&elem_of(v2, 1)->packets, 2);
	assert_int_equal(adt(IPSET_CMD_TEST, "c", "10.0.0.1", 0, NULL, 0, false), 0);
	assert_int_equal(elem_of(v2, 1)->base_packets, 5);
	assert_int_equal(adt(IPSET_CMD_DEL, "c", "10.0.0.2", 0, NULL, 0, false), 0);
	v = nftdp_vm_ipset_get(0);
	assert_int_equal(elem_of(v, 1)->packets, 5);
	assert_int_equal(elem_of(v, 1)->bytes, 300);
	/* a packet's add: 1 packet of its length */
	memset(&ev, 0, sizeof(ev));
	inet_pton(AF_INET, "10.0.0.3", ev.k.ip);
	ev.timeout = UINT32_MAX;
	ev.len = 60;
	assert_true(nftdp_vm_ipset_put(0, &ev, 1));
	ctl_ipset_events(&ctl);
	v = nftdp_vm_ipset_get(0);
	assert_int_equal(elem_of(v, 3)->packets, 1);
	assert_int_equal(elem_of(v, 3)->bytes, 60);
	assert_int_equal(elem_of(v, 1)->packets, 5);
}

/* deletes move the last element into the hole: the index stays right
 * over many adds and deletes, and a range of 65536 ports adds and deletes
 * quickly (no per-element rebuild) */
static void test_many_deletes(void **state)
{
	char ip[32];

	(void)state;
	assert_int_equal(create("m", "hash:ip", NFPROTO_IPV4, 0, 0), 0);
	for (int i = 1; i <= 2000; i++) {
		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 256, i % 256);
		assert_int_equal(adt(IPSET_CMD_ADD, "m", ip, 0, NULL, 0, false), 0);
	}
	for (int i = 1; i <= 2000; i += 2) {
		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 256, i % 256);
		assert_int_equal(adt(IPSET_CMD_DEL, "m", ip, 0, NULL, 0, false), 0);
	}
	for (int i = 1; i <= 2000; i++) {
		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 256, i % 256);
		assert_int_equal(adt(IPSET_CMD_TEST, "m", ip, 0, NULL, 0, false),
				 i % 2 ? -IPSET_ERR_EXIST : 0);
	}
	assert_int_equal(elements("m"), 1000);
	{
		char buf[256];
		struct nlmsghdr *nlh;
		struct nlattr *d;
		nlh = msg(buf, IPSET_CMD_CREATE, NLM_F_CREATE | NLM_F_EXCL, "bp");
		mnl_attr_put_strz(nlh, IPSET_ATTR_TYPENAME, "bitmap:port");
		mnl_attr_put_u8(nlh, IPSET_ATTR_REVISION, 3);
		mnl_attr_put_u8(nlh, IPSET_ATTR_FAMILY, NFPROTO_IPV4);
		d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
		mnl_attr_put_u16(nlh, IPSET_ATTR_PORT | NLA_F_NET_BYTEORDER, htons(0));
		mnl_attr_put_u16(nlh, IPSET_ATTR_PORT_TO | NLA_F_NET_BYTEORDER, htons(65535));
		mnl_attr_nest_end(nlh, d);
		assert_int_equal(rcv(nlh), 0);
		for (int del = 0; del < 2; del++) {
			nlh = msg(buf, del ? IPSET_CMD_DEL : IPSET_CMD_ADD, 0, "bp");
			d = mnl_attr_nest_start(nlh, IPSET_ATTR_DATA);
			mnl_attr_put_u16(nlh, IPSET_ATTR_PORT | NLA_F_NET_BYTEORDER,
					 htons(del ? 10 : 0));
			mnl_attr_put_u16(nlh, IPSET_ATTR_PORT_TO | NLA_F_NET_BYTEORDER,
					 htons(65535));
			mnl_attr_nest_end(nlh, d);
			assert_int_equal(rcv(nlh), 0);
		}
		assert_int_equal(elements("bp"), 10);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_protocol_and_type, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hash_ip_errnos, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed_changes_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timeout_expires, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hash_net, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hash_ipportnet, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hash_netiface, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bitmap_port_range, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bitmap_ipmac, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bitmap_counters_kept, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list_set_refs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_restore_lineno, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_published_to_workers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many_deletes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_packet_adds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_counters_fold, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
