/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stateful arena (vm/state.c): slots grow with use up to a ceiling that
 * costs only address space, freed slots are reused, and a generation that is
 * never built gives back every slot it created.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vm_priv.h"

static struct nftdp_vm_state *make(unsigned int counters, unsigned int cells, unsigned int workers)
{
	struct nftdp_vm_state_config cfg = {
	    .n_workers = workers, .max_counters = counters, .max_cells = cells};
	struct nftdp_vm_state *st = NULL;

	assert_int_equal(nftdp_vm_state_create(&cfg, &st), 0);
	return st;
}

static int slot(struct nftdp_vm_state *st, unsigned int i, uint8_t kind, uint32_t *out)
{
	char key[32];
	bool created;

	snprintf(key, sizeof(key), "k%u", i);
	return nftdp_vm_state_get_slot(st, key, kind, out, &created);
}

/* 200 000 counters and cells (the old fixed arrays held 65 536 and 16 384),
 * each its own slot, counted per worker and read back. */
static void test_grows_past_old_limits(void **state)
{
	struct nftdp_vm_state *st = make(1u << 24, 1u << 22, 4);
	const unsigned int n = 200000;
	uint32_t s;

	(void)state;
	nftdp_vm_state_gen_begin(st);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(slot(st, i, NFTDP_VM_SLOT_COUNTER, &s), 0);
		assert_int_equal(s, i); /* compact: the touched prefix is what is used */
		nftdp_vm_counter_slot(st, 3, s)->packets = i;
	}
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(slot(st, n + i, NFTDP_VM_SLOT_CELL, &s), 0);
		assert_int_equal(s, i);
	}
	for (unsigned int i = 0; i < n; i += 997) {
		struct nftdp_vm_stateful_val v;
		char key[32];

		snprintf(key, sizeof(key), "k%u", i);
		assert_int_equal(nftdp_vm_state_read_key(st, key, false, &v), 0);
		assert_int_equal(v.packets, i);
	}
	/* found again, same slot */
	assert_int_equal(slot(st, 12345, NFTDP_VM_SLOT_COUNTER, &s), 0);
	assert_int_equal(s, 12345);
	nftdp_vm_state_destroy(st);
}

/* The ceiling is ENOSPC; a sweep frees slots for reuse. */
static void test_ceiling_and_sweep(void **state)
{
	struct nftdp_vm_state *st = make(8, 8, 1);
	uint64_t g;
	uint32_t s;

	(void)state;
	g = nftdp_vm_state_gen_begin(st);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(slot(st, i, NFTDP_VM_SLOT_COUNTER, &s), 0);
	assert_int_equal(slot(st, 8, NFTDP_VM_SLOT_COUNTER, &s), -ENOSPC);
	/* the next generation keeps k0 only */
	g = nftdp_vm_state_gen_begin(st);
	assert_int_equal(slot(st, 0, NFTDP_VM_SLOT_COUNTER, &s), 0);
	assert_int_equal(nftdp_vm_state_sweep(st, g), 7);
	for (unsigned int i = 100; i < 107; i++)
		assert_int_equal(slot(st, i, NFTDP_VM_SLOT_COUNTER, &s), 0);
	assert_int_equal(slot(st, 200, NFTDP_VM_SLOT_COUNTER, &s), -ENOSPC);
	nftdp_vm_state_destroy(st);
}

/* A failed batch: the generation is never built; what it created goes back
 * at once, what it found stays. */
static void test_gen_abort_releases(void **state)
{
	struct nftdp_vm_state *st = make(16, 16, 2);
	uint64_t g;
	uint32_t s;

	(void)state;
	nftdp_vm_state_gen_begin(st);
	assert_int_equal(slot(st, 0, NFTDP_VM_SLOT_COUNTER, &s), 0); /* published */
	g = nftdp_vm_state_gen_begin(st);
	assert_int_equal(slot(st, 0, NFTDP_VM_SLOT_COUNTER, &s), 0);
	for (unsigned int i = 1; i < 16; i++)
		assert_int_equal(slot(st, i, NFTDP_VM_SLOT_COUNTER, &s), 0);
	assert_int_equal(slot(st, 99, NFTDP_VM_SLOT_COUNTER, &s), -ENOSPC);
	assert_int_equal(nftdp_vm_state_gen_abort(st, g), 15);
	/* the next batch: a one-counter rule gets a slot, k0 kept its own */
	nftdp_vm_state_gen_begin(st);
	assert_int_equal(slot(st, 0, NFTDP_VM_SLOT_COUNTER, &s), 0);
	assert_int_equal(s, 0);
	for (unsigned int i = 50; i < 65; i++)
		assert_int_equal(slot(st, i, NFTDP_VM_SLOT_COUNTER, &s), 0);
	nftdp_vm_state_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grows_past_old_limits),
	    cmocka_unit_test(test_ceiling_and_sweep),
	    cmocka_unit_test(test_gen_abort_releases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
