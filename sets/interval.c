/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nf_tables interval elements into ranges. nft sends a one-field interval
 * set's ranges as points, as the kernel's rbtree (nft_set_rbtree.c) keeps
 * them: a start element, and an end element (NFT_SET_ELEM_INTERVAL_END) one
 * past the range's last key, none where a range ends just below the next
 * start or at the top of the key space. The backends (set_interval.c,
 * set_concat.c) hold ranges with an inclusive end, so each start is paired
 * with the next element in key order. The rbtree matches a key when the
 * greatest element at or below it is a start, which is what the pairing
 * gives.
 */
#include <stdlib.h>
#include <string.h>

#include "nftdp_sets.h"

static int cmp_elem(const void *a, const void *b, void *arg)
{
	const struct nftdp_set_interval_elem *x = a, *y = b;
	int c = memcmp(x->key, y->key, *(const uint32_t *)arg);

	if (c)
		return c;
	/* at one key the end of the range below sorts before the next start */
	return (int)y->end - (int)x->end;
}

/* key - 1 in network byte order (end elements are exclusive) */
static void key_dec(uint8_t *k, uint32_t len)
{
	for (uint32_t i = len; i-- > 0;)
		if (k[i]-- != 0)
			break;
}

void nftdp_set_interval_ranges(struct nftdp_set_interval_elem *v, size_t n, uint32_t key_size,
			       nftdp_set_interval_above_cb above, void *arg)
{
	if (n)
		qsort_r(v, n, sizeof(*v), cmp_elem, &key_size);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *next;

		if (v[i].end)
			continue;
		next = i + 1 < n ? v[i + 1].key : above ? above(v[i].key, arg) : NULL;
		if (next) {
			memcpy(v[i].last, next, key_size);
			key_dec(v[i].last, key_size);
		} else {
			memset(v[i].last, 0xff, key_size);
		}
	}
}
