// SPDX-License-Identifier: BSD-3-Clause
/* dataplane/ct_conf.c: --ct-sysctl names, values and errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane_priv.h"
#include "nftdp_conntrack.h"

static void test_timeouts(void **st)
{
	struct nftdp_ct_config cfg = {0};
	struct nftdp_ct_timeouts t, d;

	(void)st;
	nftdp_ct_timeouts_default(&t);
	d = t;
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_timeout_established=3600"),
			 0);
	assert_int_equal(t.tcp[TCP_CONNTRACK_ESTABLISHED], 3600);
	assert_int_equal(
	    nftdp_dp_ct_sysctl(&cfg, &t, "net.netfilter.nf_conntrack_udp_timeout_stream=180"), 0);
	assert_int_equal(t.udp_replied, 180);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_timeout_max_retrans=7"), 0);
	assert_int_equal(t.tcp[TCP_CONNTRACK_RETRANS], 7);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_timeout_unacknowledged=8"),
			 0);
	assert_int_equal(t.tcp[TCP_CONNTRACK_UNACK], 8);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_icmpv6_timeout=9"), 0);
	assert_int_equal(t.icmpv6, 9);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_sctp_timeout_established=11"),
			 0);
	assert_int_equal(t.sctp[SCTP_CONNTRACK_ESTABLISHED], 11);
	assert_int_equal(
	    nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_sctp_timeout_heartbeat_sent=12"), 0);
	assert_int_equal(t.sctp[SCTP_CONNTRACK_HEARTBEAT_SENT], 12);
	/* nothing else moved */
	d.tcp[TCP_CONNTRACK_ESTABLISHED] = 3600;
	d.udp_replied = 180;
	d.tcp[TCP_CONNTRACK_RETRANS] = 7;
	d.tcp[TCP_CONNTRACK_UNACK] = 8;
	d.icmpv6 = 9;
	d.sctp[SCTP_CONNTRACK_ESTABLISHED] = 11;
	d.sctp[SCTP_CONNTRACK_HEARTBEAT_SENT] = 12;
	assert_memory_equal(&t, &d, sizeof(t));
}

static void test_switches(void **st)
{
	struct nftdp_ct_config cfg = {0};
	struct nftdp_ct_timeouts t;

	(void)st;
	nftdp_ct_timeouts_default(&t);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_be_liberal=1"), 0);
	assert_true(cfg.tcp_be_liberal);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_loose=0"), 0);
	assert_true(cfg.tcp_no_loose);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_loose=1"), 0);
	assert_false(cfg.tcp_no_loose);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_checksum=0"), 0);
	assert_true(cfg.no_checksum);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_acct=1"), 0);
	assert_true(cfg.acct);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_max_retrans=5"), 0);
	assert_int_equal(cfg.tcp_max_retrans, 5);
}

static void test_errors(void **st)
{
	struct nftdp_ct_config cfg = {0}, c0 = {0};
	struct nftdp_ct_timeouts t, t0;

	(void)st;
	nftdp_ct_timeouts_default(&t);
	t0 = t;
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_timeout_established"),
			 -EINVAL);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_udp_timeout="), -EINVAL);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_udp_timeout=-1"), -EINVAL);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_udp_timeout=12x"), -EINVAL);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_udp_timeou=1"), -ENOENT);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_udp_timeout_streamx=1"),
			 -ENOENT);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "net.ipv4.ip_forward=1"), -ENOENT);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_be_liberal=2"), -ERANGE);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_max_retrans=256"), -ERANGE);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_tcp_max_retrans=0"), -ERANGE);
	assert_int_equal(nftdp_dp_ct_sysctl(&cfg, &t, "nf_conntrack_icmp_timeout=99999999"),
			 -ERANGE);
	/* a refused value changes nothing */
	assert_memory_equal(&t, &t0, sizeof(t));
	assert_memory_equal(&cfg, &c0, sizeof(cfg));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_timeouts),
	    cmocka_unit_test(test_switches),
	    cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
