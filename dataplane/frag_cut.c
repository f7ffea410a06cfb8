// SPDX-License-Identifier: BSD-3-Clause
/*
 * How a reassembled datagram is cut again (defrag.c), in bytes only so the
 * unit test needs no EAL: the pieces (the kernel's frag_list fast path or
 * its slow path) and the options a later IPv4 fragment carries.
 */
#include <string.h>

#include "dataplane_priv.h"

unsigned int nftdp_dp_frag_plan(const uint16_t *geo, unsigned int n_geo, uint32_t payload,
				uint32_t room, uint16_t *len, unsigned int cap, bool *fast)
{
	unsigned int k = 0;
	uint32_t sum = 0;

	/* ip_do_fragment / ip6_fragment: the received fragments are sent as
	 * they are when each fits and all but the last are multiples of 8 */
	*fast = n_geo > 0;
	for (unsigned int i = 0; i < n_geo && *fast; i++) {
		sum += geo[i];
		if (geo[i] == 0 || geo[i] > room || (i + 1 < n_geo && (geo[i] & 7)))
			*fast = false;
	}
	if (*fast && sum == payload && n_geo <= cap) {
		memcpy(len, geo, n_geo * sizeof(*len));
		return n_geo;
	}
	/* the slow path: pieces of room bytes, a multiple of 8 but the last */
	*fast = false;
	if (payload > room)
		room &= ~7u;
	if (room == 0)
		return 0;
	for (uint32_t left = payload; left > 0; left -= len[k++]) {
		if (k == cap)
			return 0;
		len[k] = (uint16_t)(left > room ? room : left);
	}
	return k;
}

void nftdp_dp_ip_options_fragment(uint8_t *iph, uint32_t hl)
{
	/* ip_options_fragment: options without the copied flag become NOOPs,
	 * the header keeps its length */
	for (uint32_t i = 20; i < hl;) {
		uint8_t t = iph[i];
		uint32_t l;

		if (t == 0) /* end of options */
			break;
		if (t == 1) {
			i++;
			continue;
		}
		if (i + 1 >= hl || iph[i + 1] < 2 || i + iph[i + 1] > hl)
			break;
		l = iph[i + 1];
		if (!(t & 0x80))
			memset(iph + i, 1, l);
		i += l;
	}
}
