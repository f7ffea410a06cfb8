/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dataplane/frag_cut.c without EAL: how a reassembled datagram is cut again
 * (the kernel's fast path keeps the received fragments, the slow path cuts
 * multiples of 8), and which IPv4 options later fragments keep.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define NFTDP_DP_BYTES_ONLY
#include "dataplane_priv.h"

/* 3008 bytes received as 1480 + 1480 + 48: they fit 1480, so kept */
static void fast_path_kept(void **state)
{
	const uint16_t geo[] = {1480, 1480, 48};
	uint16_t len[8];
	bool fast;

	(void)state;
	assert_int_equal(nftdp_dp_frag_plan(geo, 3, 3008, 1480, len, 8, &fast), 3);
	assert_true(fast);
	assert_memory_equal(len, geo, sizeof(geo));
	/* unequal pieces too, as long as each fits and is a multiple of 8 */
	{
		const uint16_t g2[] = {480, 1480, 1048};

		assert_int_equal(nftdp_dp_frag_plan(g2, 3, 3008, 1480, len, 8, &fast), 3);
		assert_true(fast);
		assert_memory_equal(len, g2, sizeof(g2));
	}
}

/* a received piece bigger than the room: equal cuts of (room & ~7) */
static void slow_path_when_too_big(void **state)
{
	const uint16_t geo[] = {1480, 1480, 48};
	uint16_t len[8];
	bool fast;

	(void)state;
	assert_int_equal(nftdp_dp_frag_plan(geo, 3, 3008, 1283, len, 8, &fast), 3);
	assert_false(fast);
	assert_int_equal(len[0], 1280);
	assert_int_equal(len[1], 1280);
	assert_int_equal(len[2], 448);
}

/* a non-last piece that is no multiple of 8 forces the slow path */
static void slow_path_when_unaligned(void **state)
{
	const uint16_t geo[] = {1004, 1004};
	uint16_t len[8];
	bool fast;

	(void)state;
	assert_int_equal(nftdp_dp_frag_plan(geo, 2, 2008, 1480, len, 8, &fast), 2);
	assert_false(fast);
	assert_int_equal(len[0], 1480);
	assert_int_equal(len[1], 528);
}

/* geometry that does not add up (or none) is not trusted */
static void slow_path_without_geometry(void **state)
{
	const uint16_t geo[] = {1480, 1480};
	uint16_t len[8];
	bool fast;

	(void)state;
	assert_int_equal(nftdp_dp_frag_plan(geo, 2, 3008, 1480, len, 8, &fast), 3);
	assert_false(fast);
	assert_int_equal(nftdp_dp_frag_plan(NULL, 0, 100, 1480, len, 8, &fast), 1);
	assert_false(fast);
	assert_int_equal(len[0], 100);
}

/* more pieces than the caller can take, or no room: nothing */
static void too_many_pieces(void **state)
{
	uint16_t len[4];
	bool fast;

	(void)state;
	assert_int_equal(nftdp_dp_frag_plan(NULL, 0, 8 * 5, 8, len, 4, &fast), 0);
	assert_int_equal(nftdp_dp_frag_plan(NULL, 0, 8 * 4, 8, len, 4, &fast), 4);
	assert_int_equal(nftdp_dp_frag_plan(NULL, 0, 100, 7, len, 4, &fast), 0);
}

/* pieces always add up to the payload, all but the last multiples of 8 */
static void pieces_cover_payload(void **state)
{
	uint16_t len[64];
	bool fast;

	(void)state;
	for (uint32_t payload = 1; payload < 9000; payload += 37) {
		for (uint32_t room = 8; room < 1500; room += 91) {
			unsigned int n = nftdp_dp_frag_plan(NULL, 0, payload, room, len, 64, &fast);
			uint32_t sum = 0;

			if (n == 0) {
				assert_true(payload > 64 * (room & ~7u));
				continue;
			}
			for (unsigned int i = 0; i < n; i++) {
				assert_true(len[i] > 0 && len[i] <= room);
				if (i + 1 < n)
					assert_int_equal(len[i] & 7, 0);
				sum += len[i];
			}
			assert_int_equal(sum, payload);
		}
	}
}

/* copied options (bit 0x80) stay, the rest turn into NOOPs; a broken
 * option list is left alone from where it breaks */
static void options_of_later_fragments(void **state)
{
	uint8_t h[60] = {0x4f};
	/* record route (7, not copied), 7 bytes; security (130, copied), 11
	 * bytes; NOOP; timestamp (68, not copied), 8 bytes; EOL */
	const uint8_t opts[] = {7, 7, 4, 0, 0, 0,  0, 130, 11, 1, 2, 3, 4, 5,
				6, 7, 8, 9, 1, 68, 8, 5,   0,  0, 0, 0, 0, 0};
	uint8_t want[40];

	(void)state;
	memcpy(h + 20, opts, sizeof(opts));
	memcpy(want, opts, sizeof(opts));
	memset(want, 1, 7);
	memset(want + 19, 1, 8);
	memset(want + sizeof(opts), 0, sizeof(want) - sizeof(opts));
	nftdp_dp_ip_options_fragment(h, 60);
	assert_memory_equal(h + 20, want, 40);
	assert_int_equal(h[0], 0x4f); /* the header keeps its length */

	/* an option whose length runs past the header: left as it is */
	memset(h + 20, 0, 40);
	h[20] = 7;
	h[21] = 50;
	nftdp_dp_ip_options_fragment(h, 60);
	assert_int_equal(h[20], 7);
	assert_int_equal(h[21], 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fast_path_kept),
	    cmocka_unit_test(slow_path_when_too_big),
	    cmocka_unit_test(slow_path_when_unaligned),
	    cmocka_unit_test(slow_path_without_geometry),
	    cmocka_unit_test(too_many_pieces),
	    cmocka_unit_test(pieces_cover_payload),
	    cmocka_unit_test(options_of_later_fragments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
