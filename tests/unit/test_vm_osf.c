// SPDX-License-Identifier: BSD-3-Clause
/*
 * osf (vm/expr_osf.c): the fingerprint database as OSF_MSG_ADD/_REMOVE
 * change it (nfnl_osf_add_callback's checks and errnos), nf_osf_find's
 * matching of a SYN against a record (size, TTL modes, options in order,
 * window by MSS).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h> /* after the headers it needs */

#include <libnftnl/expr.h>
#include <linux/netfilter/nfnetlink_osf.h>

#include "vm_priv.h"

/* pf.os "S10:64:1:60:M*,S,T,N,W7:.:Linux:3.11 and newer" */
static struct nf_osf_user_finger linux_finger(void)
{
	struct nf_osf_user_finger f;
	static const uint8_t kinds[] = {OSFOPT_MSS, OSFOPT_SACKP, OSFOPT_TS, OSFOPT_NOP,
					OSFOPT_WSO};
	static const uint8_t lens[] = {4, 2, 10, 1, 3};

	memset(&f, 0, sizeof(f));
	f.wss.wc = OSF_WSS_MSS;
	f.wss.val = 10;
	f.ttl = 64;
	f.df = 1;
	f.ss = 60;
	f.opt_num = 5;
	for (int i = 0; i < 5; i++) {
		f.opt[i].kind = kinds[i];
		f.opt[i].length = lens[i];
	}
	strcpy(f.genre, "Linux");
	strcpy(f.version, "3.11 and newer");
	return f;
}

/* an IPv4 SYN with those options: MSS mss, window win, TTL ttl */
static void syn(uint8_t *p, uint16_t win, uint8_t ttl, bool df, uint16_t mss)
{
	static const uint8_t opts[20] = {2, 4, 0, 0, 4, 2, 8, 10, 0, 0,
					 0, 1, 0, 0, 0, 0, 1, 3,  3, 7};

	memset(p, 0, 60);
	p[0] = 0x45;
	p[3] = 60;
	p[6] = df ? 0x40 : 0;
	p[8] = ttl;
	p[9] = 6;
	p[32] = 0xa0; /* doff 10 */
	p[33] = 0x02; /* SYN */
	p[34] = (uint8_t)(win >> 8);
	p[35] = (uint8_t)win;
	memcpy(p + 40, opts, 20);
	p[42] = (uint8_t)(mss >> 8);
	p[43] = (uint8_t)mss;
}

static void test_osf_db_and_match(void **state)
{
	struct nf_osf_user_finger f = linux_finger(), bad;
	const struct nf_osf_user_finger *m;
	struct nftdp_vm_osf_db *old;
	uint8_t p[60];

	(void)state;
	syn(p, 14600, 64, true, 1460);
	/* no database: nothing matches (nft_osf: "unknown") */
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	assert_int_equal(nftdp_vm_osf_db_add(&f, true, &old), 0);
	assert_null(old);
	m = nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE);
	assert_non_null(m);
	assert_string_equal(m->genre, "Linux");
	/* the window by MSS: the packet's MSS, 1460 or 1448 times 10 */
	syn(p, 13360, 64, true, 1336);
	assert_non_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	syn(p, 14480, 64, true, 1336);
	assert_non_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	syn(p, 14601, 64, true, 1460);
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	/* TTL: equal (true), not above (loose), any (skip) */
	syn(p, 14600, 63, true, 1460);
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	assert_non_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_LESS));
	syn(p, 14600, 65, true, 1460);
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_LESS));
	assert_non_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_NOCHECK));
	/* the don't-fragment list, options in order, a SYN only, a whole header */
	syn(p, 14600, 64, false, 1460);
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	syn(p, 14600, 64, true, 1460);
	p[44] = OSFOPT_TS;
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	syn(p, 14600, 64, true, 1460);
	p[33] = 0x10;
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_TRUE));
	syn(p, 14600, 64, true, 1460);
	assert_null(nftdp_vm_osf_find(p, 39, NF_OSF_TTL_TRUE));
	assert_null(nftdp_vm_osf_find(p, 50, NF_OSF_TTL_TRUE)); /* options cut */
	/* nfnl_osf_add_callback: an identical record is there (EEXIST with
	 * NLM_F_EXCL), bad records EINVAL; nfnl_osf_remove_callback */
	assert_int_equal(nftdp_vm_osf_db_add(&f, false, &old), 0);
	assert_null(old);
	assert_int_equal(nftdp_vm_osf_db_add(&f, true, &old), -EEXIST);
	bad = f;
	memset(bad.genre, 'x', MAXGENRELEN);
	assert_int_equal(nftdp_vm_osf_db_add(&bad, false, &old), -EINVAL);
	bad = f;
	bad.opt_num = MAX_IPOPTLEN + 1;
	assert_int_equal(nftdp_vm_osf_db_add(&bad, false, &old), -EINVAL);
	bad = f;
	bad.opt[1].length = 0;
	assert_int_equal(nftdp_vm_osf_db_add(&bad, false, &old), -EINVAL);
	bad = f;
	strcpy(bad.genre, "Other");
	bad.ttl = 128;
	assert_int_equal(nftdp_vm_osf_db_add(&bad, false, &old), 0);
	nftdp_vm_osf_db_free(old);
	syn(p, 14600, 64, true, 1460);
	assert_string_equal(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_NOCHECK)->genre, "Linux");
	assert_int_equal(nftdp_vm_osf_db_remove(&f, &old), 0);
	nftdp_vm_osf_db_free(old);
	assert_string_equal(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_NOCHECK)->genre, "Other");
	assert_int_equal(nftdp_vm_osf_db_remove(&f, &old), -ENOENT);
	assert_int_equal(nftdp_vm_osf_db_remove(&bad, &old), 0);
	nftdp_vm_osf_db_free(old);
	assert_null(nftdp_vm_osf_find(p, 60, NF_OSF_TTL_NOCHECK));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_osf_db_and_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
