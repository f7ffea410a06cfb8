// SPDX-License-Identifier: BSD-3-Clause
/*
 * --exit-on-idle's test (nftdp_dp_worker_idle_for): idle is what a
 * worker's own polls saw, so a worker the host has not run yet, however
 * long ago it began, is not idle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the headers it needs */

#include "dataplane_priv.h"

static struct nftdp_dp_worker w;

static void stamp(uint64_t busy, uint64_t polled)
{
	w.last_busy_tsc = busy;
	w.last_poll_tsc = polled;
}

/* begun (both stamps tsc0) and not scheduled since: never idle (before,
 * main compared last_busy_tsc with its own clock and ended the replay
 * before the worker read its first packet) */
static void test_not_polled_yet(void **state)
{
	(void)state;
	stamp(1000, 1000);
	assert_false(nftdp_dp_worker_idle_for(&w, 1));
	assert_false(nftdp_dp_worker_idle_for(&w, 500));
	stamp(0, 0); /* not even begun */
	assert_false(nftdp_dp_worker_idle_for(&w, 1));
}

static void test_idle_after_empty_polls(void **state)
{
	(void)state;
	stamp(1000, 1400); /* empty polls for 400 cycles */
	assert_false(nftdp_dp_worker_idle_for(&w, 500));
	stamp(1000, 1500);
	assert_true(nftdp_dp_worker_idle_for(&w, 500));
	stamp(1600, 1600); /* a busy poll: not idle again */
	assert_false(nftdp_dp_worker_idle_for(&w, 500));
}

/* a busy stamp newer than the poll stamp read (the reader between the
 * worker's two stores) is not idle */
static void test_busy_newer_than_poll(void **state)
{
	(void)state;
	stamp(5000, 1000);
	assert_false(nftdp_dp_worker_idle_for(&w, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_not_polled_yet),
	    cmocka_unit_test(test_idle_after_empty_polls),
	    cmocka_unit_test(test_busy_newer_than_poll),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
