// SPDX-License-Identifier: BSD-3-Clause
/*
 * The time match (xt_time.c, rev 0) and the string match (xt_string.c,
 * rev 1).
 *
 * time reads the wall clock (ktime_get_real_seconds: ctx->now_real_ns,
 * not the packet's stamp), less the kernel's sys_tz with --kerneltz, and
 * breaks it down with xt_time's own tables (localtime_1/2/3), so
 * --datestart/--datestop, --timestart/--timestop (past midnight when
 * start > stop, --contiguous), --weekdays and --monthdays hold when they
 * hold on the kernel.
 *
 * string looks for the pattern in the packet from --from to --to
 * (offsets from the network header, the end bounded by the packet's, as
 * skb_find_text), bm and kmp alike (both find the first occurrence; a
 * linear skb is what bm needs to find every one), --icase with the
 * kernel's toupper (ISO-8859-1 letters too). A bounded search: at most
 * 65535 positions of at most 128 bytes each, never past the packet.
 */
#include <stdio.h> /* before libnftnl: it uses FILE */

#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_string.h>
#include <linux/netfilter/xt_time.h>

#include "compat.h"

/* ---- time ---- */

struct time_priv {
	uint32_t date_start, date_stop, daytime_start, daytime_stop, monthdays;
	uint8_t weekdays, flags;
};
NFTDP_VM_PRIV_CHECK(struct time_priv);

int nftdp_vm_compat_time_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_time_info *i = par->info;
	struct time_priv *p = priv;

	/* time_mt_check */
	if (i->daytime_start > XT_TIME_MAX_DAYTIME || i->daytime_stop > XT_TIME_MAX_DAYTIME)
		return nftdp_vm_errf(cc, -EDOM,
				     "match time: invalid argument - start or stop time greater "
				     "than 23:59:59");
	if (i->flags & ~XT_TIME_ALL_FLAGS)
		return nftdp_vm_errf(cc, -EINVAL, "match time: unknown flags 0x%x",
				     i->flags & ~XT_TIME_ALL_FLAGS);
	if ((i->flags & XT_TIME_CONTIGUOUS) && i->daytime_start < i->daytime_stop)
		return nftdp_vm_errf(cc, -EINVAL, "match time: --contiguous with start < stop");
	*p = (struct time_priv){.date_start = i->date_start,
				.date_stop = i->date_stop,
				.daytime_start = i->daytime_start,
				.daytime_stop = i->daytime_stop,
				.monthdays = i->monthdays_match,
				.weekdays = i->weekdays_match,
				.flags = i->flags};
	return 0;
}

#define SECONDS_PER_DAY 86400
#define DSE_FIRST 2039

static const uint16_t days_since_year[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
static const uint16_t days_since_leapyear[] = {0,   31,	 60,  91,  121, 152,
					       182, 213, 244, 274, 305, 335};
/* xt_time's days_since_epoch: 2039 down to 1970 */
static const uint16_t days_since_epoch[] = {
    25202, 24837, 24472, 24106, 23741, 23376, 23011, 22645, 22280, 21915, 21550, 21184,
    20819, 20454, 20089, 19723, 19358, 18993, 18628, 18262, 17897, 17532, 17167, 16801,
    16436, 16071, 15706, 15340, 14975, 14610, 14245, 13879, 13514, 13149, 12784, 12418,
    12053, 11688, 11323, 10957, 10592, 10227, 9862,  9496,  9131,  8766,  8401,	 8035,
    7670,  7305,  6940,	 6574,	6209,  5844,  5479,  5113,  4748,  4383,  4018,	 3652,
    3287,  2922,  2557,	 2191,	1826,  1461,  1096,  730,   365,   0,
};

static bool is_leap(unsigned int y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* localtime_3: the day of the month of day dse */
static unsigned int monthday(unsigned int dse)
{
	unsigned int year = DSE_FIRST, i = 0, w = dse;
	const uint16_t *dsy;

	while (i + 1 < sizeof(days_since_epoch) / sizeof(days_since_epoch[0]) &&
	       days_since_epoch[i] > w) {
		i++;
		year--;
	}
	w -= days_since_epoch[i];
	dsy = is_leap(year) ? days_since_leapyear : days_since_year;
	for (i = 11; i > 0 && dsy[i] > w; --i)
		;
	return w - dsy[i] + 1;
}

/* time_mt at wall-clock second now (tz: sys_tz's minutes west) */
static bool time_match(const struct time_priv *p, int64_t stamp, int32_t tz_minuteswest)
{
	unsigned int packet_time, weekday, dse;

	if (p->flags & XT_TIME_LOCAL_TZ)
		stamp -= 60 * (int64_t)tz_minuteswest;
	if (stamp < p->date_start || stamp > p->date_stop)
		return false;
	/* localtime_1 (div_u64_rem of the unsigned stamp) */
	packet_time = (unsigned int)((uint64_t)stamp % SECONDS_PER_DAY);
	if (p->daytime_start < p->daytime_stop) {
		if (packet_time < p->daytime_start || packet_time > p->daytime_stop)
			return false;
	} else {
		if (packet_time < p->daytime_start && packet_time > p->daytime_stop)
			return false;
		/* --contiguous: after midnight is still the day before */
		if ((p->flags & XT_TIME_CONTIGUOUS) && packet_time <= p->daytime_stop)
			stamp -= SECONDS_PER_DAY;
	}
	/* localtime_2: 1970-01-01 was a Thursday (4), Sunday is 7 */
	dse = (unsigned int)((uint64_t)stamp / SECONDS_PER_DAY);
	weekday = (4 + dse - 1) % 7 + 1;
	if (!(p->weekdays & (1u << weekday)))
		return false;
	if (p->monthdays != XT_TIME_ALL_MONTHDAYS && !(p->monthdays & (1u << monthday(dse))))
		return false;
	return true;
}

static void time_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
		      struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct time_priv *p = (const void *)op->priv;

	(void)pkt;
	compat_match_result(
	    regs, time_match(p, (int64_t)(ctx->now_real_ns / 1000000000ull), ctx->tz_minuteswest));
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_time_ops = {
    .name = "match time",
    .size = sizeof(struct time_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = time_eval,
};

/* ---- string ---- */

struct string_priv {
	const uint8_t *pattern; /* patlen bytes, upper case with --icase */
	uint16_t from, to;
	uint8_t patlen;
	bool icase, invert;
};
NFTDP_VM_PRIV_CHECK(struct string_priv);

/* the kernel's toupper (lib/ctype.c: ISO-8859-1, 0xdf-0xf6 and 0xf8-0xff
 * are lower case) */
static inline uint8_t k_toupper(uint8_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 0xdf && c <= 0xf6) || c >= 0xf8)
		return (uint8_t)(c - ('a' - 'A'));
	return c;
}

int nftdp_vm_compat_string_check(struct nftdp_vm_cctx *cc, const struct compat_par *par, void *priv)
{
	const struct xt_string_info *i = par->info;
	struct string_priv *p = priv;
	uint8_t *pat;

	/* string_mt_check */
	if (i->from_offset > i->to_offset)
		return nftdp_vm_errf(cc, -EINVAL, "match string: --from past --to");
	if (i->algo[XT_STRING_MAX_ALGO_NAME_SIZE - 1] != '\0')
		return nftdp_vm_errf(cc, -EINVAL, "match string: algorithm name unterminated");
	if (i->patlen > XT_STRING_MAX_PATTERN_SIZE)
		return nftdp_vm_errf(cc, -EINVAL, "match string: pattern of %u bytes", i->patlen);
	if (i->u.v1.flags & ~(XT_STRING_FLAG_IGNORECASE | XT_STRING_FLAG_INVERT))
		return nftdp_vm_errf(cc, -EINVAL, "match string: flags 0x%x", i->u.v1.flags);
	/* textsearch_prepare */
	if (i->patlen == 0)
		return nftdp_vm_errf(cc, -EINVAL, "match string: empty pattern");
	if (strcmp(i->algo, "bm") != 0 && strcmp(i->algo, "kmp") != 0) {
		if (strcmp(i->algo, "fsm") == 0)
			return nftdp_vm_errf(cc, -EOPNOTSUPP,
					     "match string: algorithm fsm not supported by nftdp");
		return nftdp_vm_errf(cc, -ENOENT, "match string: no algorithm %s", i->algo);
	}
	pat = nftdp_vm_blob(cc, i->patlen);
	if (!pat)
		return nftdp_vm_errf(cc, -ENOMEM, "match string: no memory");
	p->icase = i->u.v1.flags & XT_STRING_FLAG_IGNORECASE;
	for (unsigned int k = 0; k < i->patlen; k++)
		pat[k] = p->icase ? k_toupper((uint8_t)i->pattern[k]) : (uint8_t)i->pattern[k];
	p->pattern = pat;
	p->patlen = i->patlen;
	p->from = i->from_offset;
	p->to = i->to_offset;
	p->invert = i->u.v1.flags & XT_STRING_FLAG_INVERT;
	return 0;
}

/* skb_find_text: an occurrence wholly within [from, to) of the packet
 * (from the network header, to bounded by skb->len) */
static bool string_found(const struct string_priv *p, const struct nftdp_vm_pkt *pkt)
{
	uint32_t end = pkt->nh_off + pkt->skb_len, start = pkt->nh_off + p->from;
	const uint8_t *t;

	if (end > pkt->len)
		end = pkt->len;
	if (pkt->nh_off + p->to < end)
		end = pkt->nh_off + p->to;
	if (start >= end || end - start < p->patlen)
		return false;
	t = pkt->data;
	for (uint32_t pos = start; pos + p->patlen <= end; pos++) {
		uint32_t k = 0;

		if (p->icase)
			while (k < p->patlen && k_toupper(t[pos + k]) == p->pattern[k])
				k++;
		else
			while (k < p->patlen && t[pos + k] == p->pattern[k])
				k++;
		if (k == p->patlen)
			return true;
	}
	return false;
}

static void string_eval(const struct nftdp_vm_op *op, struct nftdp_vm_regs *regs,
			struct nftdp_vm_pkt *pkt, struct nftdp_vm_ctx *ctx)
{
	const struct string_priv *p = (const void *)op->priv;

	(void)ctx;
	compat_match_result(regs, string_found(p, pkt) ^ p->invert);
}

const struct nftdp_vm_expr_ops nftdp_vm_compat_string_ops = {
    .name = "match string",
    .size = sizeof(struct string_priv),
    .init = nftdp_vm_compat_match_init,
    .eval = string_eval,
};
