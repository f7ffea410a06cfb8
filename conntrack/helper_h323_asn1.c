// SPDX-License-Identifier: BSD-3-Clause
/*
 * A bounded decoder of the aligned PER (X.691) the H.323 helpers read:
 * the H.225.0 user-user information of Q.931 (Setup, CallProceeding,
 * Connect, Alerting, Facility, Progress and the tunnelled H.245 messages)
 * and H.245's OpenLogicalChannel and OpenLogicalChannelAck, with the
 * kernel's decoding rules (nf_conntrack_h323_asn1.c): its bound checks,
 * its range errors, the fields after which it stops (STOP: a success),
 * extension additions skipped by their length, the first 30 fastStart
 * and 4 h245Control items decoded, the others skipped. Every read is
 * inside the buffer: a read the kernel makes past its end is an error
 * here (H323_BOUND).
 *
 * The types are described below in the decoder's own tables, written
 * from the ASN.1 of H.225.0 v4, H.235 and H.245 v7 as the kernel reads
 * them (the same alternatives, optional fields and extension points,
 * every root field the kernel walks). A type left undescribed would make
 * the message H323_UNSUP (the helper then expects nothing, as for a
 * message the kernel cannot decode): UNSUP entries stand only where the
 * kernel skips by length or stops.
 */
#include <stddef.h>
#include <string.h>

#include "helper_h323.h"

/* field types */
enum { NUL, BOOL, OID, INT, ENUM, BITSTR, NUMSTR, OCTSTR, BMPSTR, SEQ, SEQOF, CHOICE, UNSUP };
/* size codes: 0 fixed, 1-8 a bit field of that width, then */
#define FIXD 0
#define BYTE 9
#define WORD 10
#define CONS 11
#define SEMI 12
#define UNCO 13
/* attributes */
#define STOP 1u
#define DEC 2u
#define EXT 4u
#define OPEN 8u
#define OPT 16u

struct pf {
	uint8_t type, sz, lb, ub; /* SEQ: sz optional bits, lb root fields, ub all known */
	uint8_t attr, tag;	  /* tag: the event a decoded field gives */
	const struct pf *sub;
};

#define NF(t, sz, lb, ub, attr, tag, sub)                                                          \
	{                                                                                          \
		t, sz, lb, ub, attr, tag, sub                                                      \
	}
#define N_(n) (sizeof(n) / sizeof((n)[0]))

struct bs {
	const uint8_t *buf;
	size_t cur, end; /* byte offsets in buf; cur may pass end (then an error) */
	unsigned int bit;
	struct h323_events *ev;
	int full;
};

static int emit(struct bs *b, uint8_t tag, uint32_t val)
{
	if (!tag)
		return 0;
	if (b->ev->n >= H323_MAX_EVENTS) {
		b->full = 1;
		return -1;
	}
	b->ev->ev[b->ev->n].tag = tag;
	b->ev->ev[b->ev->n++].val = val;
	return 0;
}

/* nf_h323_error_boundary: whether bytes and bits from here pass the end */
static int oob(const struct bs *b, size_t bytes, size_t bits)
{
	bits += b->bit;
	bytes += bits / 8 + (bits % 8 ? 1 : 0);
	return b->cur > b->end || bytes > b->end - b->cur;
}

static unsigned int byte_at(const struct bs *b, size_t i)
{
	return i < b->end ? b->buf[i] : 0;
}

static void inc_bits(struct bs *b, unsigned int n)
{
	b->bit += n;
	b->cur += b->bit >> 3;
	b->bit &= 7;
}

static void align(struct bs *b)
{
	if (b->bit) {
		b->cur++;
		b->bit = 0;
	}
}

/* a length determinant (aligned, < 16384); -1 past the end */
static long get_len(struct bs *b)
{
	unsigned int v;

	if (b->cur >= b->end)
		return -1;
	v = b->buf[b->cur++];
	if (v & 0x80) {
		if (b->cur >= b->end)
			return -1;
		v = (v & 0x3f) << 8 | b->buf[b->cur++];
	}
	return v;
}

static unsigned int get_bits(struct bs *b, unsigned int n)
{
	unsigned int v = 0;

	for (unsigned int i = 0; i < n; i++) {
		v = v << 1 | ((byte_at(b, b->cur) >> (7 - b->bit)) & 1);
		inc_bits(b, 1);
	}
	return v;
}

/* get_bitmap: n bits as the top bits of a word */
static uint32_t get_bitmap(struct bs *b, unsigned int n)
{
	return n ? get_bits(b, n) << (32 - n) : 0;
}

static int decode(struct bs *b, const struct pf *f, int dec);

static int dec_int(struct bs *b, const struct pf *f, int dec)
{
	long len;

	switch (f->sz) {
	case BYTE:
		align(b);
		b->cur++;
		break;
	case WORD:
		align(b);
		b->cur += 2;
		break;
	case CONS:
		if (oob(b, 0, 2))
			return H323_BOUND;
		len = get_bits(b, 2) + 1;
		align(b);
		if (dec && (f->attr & DEC) && f->tag) { /* timeToLive */
			uint32_t v = 0;

			if (oob(b, (size_t)len, 0))
				return H323_BOUND;
			for (long k = 0; k < len; k++)
				v = v << 8 | b->buf[b->cur + (size_t)k];
			if (emit(b, f->tag, v + f->lb))
				return H323_UNSUP;
			/* as the kernel: get_uint steps over the value, then
			 * the length is added again (a value at the end of
			 * the message is then out of bound) */
			b->cur += (size_t)len;
		}
		b->cur += (size_t)len;
		break;
	case UNCO:
		align(b);
		if (oob(b, 2, 0))
			return H323_BOUND;
		len = get_len(b);
		if (len < 0)
			return H323_BOUND;
		b->cur += (size_t)len;
		break;
	default:
		inc_bits(b, f->sz);
		break;
	}
	return oob(b, 0, 0) ? H323_BOUND : H323_OK;
}

static int dec_simple(struct bs *b, const struct pf *f, int dec)
{
	long len = 0;

	switch (f->type) {
	case NUL:
		return H323_OK;
	case BOOL:
		inc_bits(b, 1);
		break;
	case OID:
		align(b);
		if (oob(b, 1, 0))
			return H323_BOUND;
		len = b->buf[b->cur++];
		b->cur += (size_t)len;
		break;
	case INT:
		return dec_int(b, f, dec);
	case ENUM:
		if ((f->attr & EXT) && !oob(b, 0, 1) && get_bits(b, 1))
			inc_bits(b, 7);
		else
			inc_bits(b, f->sz);
		break;
	case BITSTR:
		align(b);
		if (f->sz == FIXD) {
			len = f->lb;
		} else if (f->sz == WORD) {
			if (oob(b, 2, 0))
				return H323_BOUND;
			len = (long)(b->buf[b->cur] << 8 | b->buf[b->cur + 1]) + f->lb;
			b->cur += 2;
		} else if (f->sz == SEMI) {
			if (oob(b, 2, 0))
				return H323_BOUND;
			len = get_len(b);
			if (len < 0)
				return H323_BOUND;
		}
		b->cur += (size_t)len >> 3;
		b->bit = (unsigned int)len & 7;
		break;
	case NUMSTR:
		if (oob(b, 0, f->sz))
			return H323_BOUND;
		len = get_bits(b, f->sz) + f->lb;
		align(b);
		inc_bits(b, (unsigned int)len << 2);
		break;
	case OCTSTR:
		switch (f->sz) {
		case FIXD:
			if (f->lb > 2) {
				align(b);
				if (dec && (f->attr & DEC) && emit(b, f->tag, (uint32_t)b->cur))
					return H323_UNSUP;
			}
			len = f->lb;
			break;
		case BYTE:
			align(b);
			if (oob(b, 1, 0))
				return H323_BOUND;
			len = b->buf[b->cur++] + f->lb;
			break;
		case SEMI:
			align(b);
			if (oob(b, 2, 0))
				return H323_BOUND;
			len = get_len(b);
			if (len < 0)
				return H323_BOUND;
			len += f->lb;
			break;
		default:
			if (oob(b, 0, f->sz))
				return H323_BOUND;
			len = get_bits(b, f->sz) + f->lb;
			align(b);
			break;
		}
		b->cur += (size_t)len;
		break;
	case BMPSTR:
		if (f->sz == BYTE) {
			align(b);
			if (oob(b, 1, 0))
				return H323_BOUND;
			len = b->buf[b->cur++] + f->lb;
		} else {
			if (oob(b, 0, f->sz))
				return H323_BOUND;
			len = get_bits(b, f->sz) + f->lb;
			align(b);
		}
		b->cur += (size_t)len << 1;
		break;
	default:
		return H323_UNSUP;
	}
	return oob(b, 0, 0) ? H323_BOUND : H323_OK;
}

/* an open type or an extension: its length, checked; -1 past the end */
static long open_len(struct bs *b)
{
	long len;

	if (oob(b, 2, 0))
		return -1;
	len = get_len(b);
	if (len < 0 || oob(b, (size_t)len, 0))
		return -1;
	return len;
}

/* decode f inside an open type of len bytes from here */
static int dec_open(struct bs *b, const struct pf *f, int dec, long len)
{
	size_t beg = b->cur;
	int err;

	if (!dec || !(f->attr & DEC)) {
		b->cur += (size_t)len;
		return H323_OK;
	}
	err = decode(b, f, dec);
	if (err < H323_OK)
		return err;
	b->cur = beg + (size_t)len;
	b->bit = 0;
	return H323_OK;
}

static int dec_seq(struct bs *b, const struct pf *f, int dec)
{
	unsigned int ext = 0, i, opt, n2;
	uint32_t bmp, bmp2;
	const struct pf *son;
	long len;
	int err;

	dec = dec && (f->attr & DEC);
	if (dec && emit(b, f->tag, 0))
		return H323_UNSUP;
	if (oob(b, 0, 1))
		return H323_BOUND;
	if (f->attr & EXT)
		ext = get_bits(b, 1);
	if (oob(b, 0, f->sz))
		return H323_BOUND;
	bmp = get_bitmap(b, f->sz);
	for (i = opt = 0; i < f->lb; i++) {
		son = &f->sub[i];
		if (son->attr & STOP)
			return H323_STOP;
		if ((son->attr & OPT) && !((0x80000000u >> opt++) & bmp))
			continue;
		if (son->attr & OPEN) {
			len = open_len(b);
			if (len < 0)
				return H323_BOUND;
			err = dec_open(b, son, dec, len);
		} else {
			err = decode(b, son, dec);
		}
		if (err < H323_OK)
			return err;
	}
	if (!ext)
		return H323_OK;
	if (oob(b, 0, 7))
		return H323_BOUND;
	n2 = get_bits(b, 7) + 1;
	if (oob(b, 0, n2))
		return H323_BOUND;
	/* up to 128 extension bits: the kernel keeps the first 32 */
	bmp2 = n2 > 32 ? get_bitmap(b, 32) : get_bitmap(b, n2);
	if (n2 > 32)
		inc_bits(b, n2 - 32);
	align(b);
	for (opt = 0; opt < n2; opt++, i++) {
		if (i >= f->ub) { /* a newer version's: every one has its length */
			len = open_len(b);
			if (len < 0)
				return H323_BOUND;
			b->cur += (size_t)len;
			continue;
		}
		son = &f->sub[i];
		if (son->attr & STOP)
			return H323_STOP;
		if (opt >= 32 || !((0x80000000u >> opt) & bmp2))
			continue;
		len = open_len(b);
		if (len < 0)
			return H323_BOUND;
		err = dec_open(b, son, dec, len);
		if (err < H323_OK)
			return err;
	}
	return H323_OK;
}

static int dec_seqof(struct bs *b, const struct pf *f, int dec)
{
	unsigned int count, i;
	long len;
	int err;

	dec = dec && (f->attr & DEC);
	if (dec && emit(b, f->tag, 0))
		return H323_UNSUP;
	switch (f->sz) {
	case BYTE:
		align(b);
		if (oob(b, 1, 0))
			return H323_BOUND;
		count = b->buf[b->cur++];
		break;
	case WORD:
		align(b);
		if (oob(b, 2, 0))
			return H323_BOUND;
		count = (unsigned int)(b->buf[b->cur] << 8 | b->buf[b->cur + 1]);
		b->cur += 2;
		break;
	case SEMI:
		align(b);
		if (oob(b, 2, 0))
			return H323_BOUND;
		len = get_len(b);
		if (len < 0)
			return H323_BOUND;
		count = (unsigned int)len;
		break;
	default:
		if (oob(b, 0, f->sz))
			return H323_BOUND;
		count = get_bits(b, f->sz);
		break;
	}
	count += f->lb;
	for (i = 0; i < count; i++) {
		/* the items past ub are not decoded (kernel: effective_count) */
		int d = dec && i < f->ub;

		if (f->sub->attr & OPEN) {
			align(b);
			len = open_len(b);
			if (len < 0)
				return H323_BOUND;
			err = dec_open(b, f->sub, d, len);
		} else {
			err = decode(b, f->sub, d);
		}
		if (err < H323_OK)
			return err;
	}
	return H323_OK;
}

static int dec_choice(struct bs *b, const struct pf *f, int dec)
{
	unsigned int type, ext = 0;
	const struct pf *son;
	long len;
	int err;

	dec = dec && (f->attr & DEC);
	if (oob(b, 0, 1))
		return H323_BOUND;
	if ((f->attr & EXT) && get_bits(b, 1)) {
		ext = 1;
		if (oob(b, 0, 7))
			return H323_BOUND;
		type = get_bits(b, 7) + f->lb;
	} else {
		if (oob(b, 0, f->sz))
			return H323_BOUND;
		type = get_bits(b, f->sz);
		if (type >= f->lb)
			return H323_RANGE;
	}
	if (dec && emit(b, f->tag, type))
		return H323_UNSUP;
	if (type >= f->ub) { /* a newer version's */
		align(b);
		len = open_len(b);
		if (len < 0)
			return H323_BOUND;
		b->cur += (size_t)len;
		return H323_OK;
	}
	son = &f->sub[type];
	if (son->attr & STOP)
		return H323_STOP;
	if (ext || (son->attr & OPEN)) {
		align(b);
		/* the kernel reads this length without a bound check */
		if (b->cur >= b->end)
			return H323_BOUND;
		len = get_len(b);
		if (len < 0 || oob(b, (size_t)len, 0))
			return H323_BOUND;
		return dec_open(b, son, dec, len);
	}
	err = decode(b, son, dec);
	return err < H323_OK ? err : H323_OK;
}

static int decode(struct bs *b, const struct pf *f, int dec)
{
	switch (f->type) {
	case SEQ:
		if (!f->sub && f->lb)
			return H323_UNSUP;
		return dec_seq(b, f, dec);
	case SEQOF:
		if (!f->sub)
			return H323_UNSUP;
		return dec_seqof(b, f, dec);
	case CHOICE:
		if (!f->sub)
			return H323_UNSUP;
		return dec_choice(b, f, dec);
	default:
		return dec_simple(b, f, dec);
	}
}

/*
 * The types. X: an extension the decoder skips by its length (it would
 * be H323_UNSUP in a root position, where none is left); XS: where the
 * kernel stops decoding.
 */
#define X NF(UNSUP, 0, 0, 0, 0, 0, NULL)
#define XS NF(UNSUP, 0, 0, 0, STOP, 0, NULL)
#define F_NUL NF(NUL, FIXD, 0, 0, 0, 0, NULL)
#define F_BOOL NF(BOOL, FIXD, 0, 0, 0, 0, NULL)
#define F_BOOLO NF(BOOL, FIXD, 0, 0, OPT, 0, NULL)
#define F_OID NF(OID, BYTE, 0, 0, 0, 0, NULL)
#define F_BYTE NF(INT, BYTE, 0, 0, 0, 0, NULL)
#define F_WORD NF(INT, WORD, 0, 0, 0, 0, NULL)
#define F_WORDO NF(INT, WORD, 0, 0, OPT, 0, NULL)
#define F_CONS NF(INT, CONS, 0, 0, 0, 0, NULL)
#define F_OCT(n) NF(OCTSTR, FIXD, n, 0, 0, 0, NULL)
#define F_OCTSEMI(a) NF(OCTSTR, SEMI, 0, 0, a, 0, NULL)

/* H.225.0 */
static const struct pf h221[] = {F_BYTE, F_BYTE, F_WORD};
static const struct pf nsid[] = {F_OID, NF(SEQ, 0, 3, 3, EXT, 0, h221)};
static const struct pf nsp[] = {NF(CHOICE, 1, 2, 2, EXT, 0, nsid), F_OCTSEMI(0)};
#define F_NSP(a) NF(SEQ, 0, 2, 2, a, 0, nsp)

static const struct pf ta_ip[] = {NF(OCTSTR, FIXD, 4, 0, DEC, H323_EV_IP4, NULL), F_WORD};
static const struct pf oct4_item[] = {F_OCT(4)};
static const struct pf two_nul[] = {F_NUL, F_NUL};
static const struct pf three_nul[] = {F_NUL, F_NUL, F_NUL};
static const struct pf ta_sroute[] = {F_OCT(4), F_WORD, NF(SEQOF, SEMI, 0, 0, 0, 0, oct4_item),
				      NF(CHOICE, 1, 2, 2, EXT, 0, two_nul)};
static const struct pf ta_ipx[] = {F_OCT(6), F_OCT(4), F_OCT(2)};
static const struct pf ta_ip6[] = {NF(OCTSTR, FIXD, 16, 0, DEC, H323_EV_IP6, NULL), F_WORD};
static const struct pf ta[] = {
    NF(SEQ, 0, 2, 2, DEC, 0, ta_ip),
    NF(SEQ, 0, 4, 4, EXT, 0, ta_sroute),
    NF(SEQ, 0, 3, 3, 0, 0, ta_ipx),
    NF(SEQ, 0, 2, 2, DEC | EXT, 0, ta_ip6),
    F_OCT(16),
    NF(OCTSTR, 5, 1, 0, 0, 0, NULL),
    F_NSP(0),
};
#define F_TA(a, tag) NF(CHOICE, 3, 7, 7, EXT | (a), tag, ta)

static const struct pf alias[] = {
    NF(NUMSTR, 7, 1, 0, 0, 0, NULL), NF(BMPSTR, BYTE, 1, 0, 0, 0, NULL), X, X, X, X, X};
static const struct pf alias_item[] = {NF(CHOICE, 1, 2, 7, EXT, 0, alias)};
#define F_ALIASES(a) NF(SEQOF, SEMI, 0, 0, a, 0, alias_item)

static const struct pf vendor[] = {NF(SEQ, 0, 3, 3, EXT, 0, h221),
				   NF(OCTSTR, BYTE, 1, 0, OPT, 0, NULL),
				   NF(OCTSTR, BYTE, 1, 0, OPT, 0, NULL)};
static const struct pf nsp_info[] = {F_NSP(OPT), X, X}; /* GatekeeperInfo, McuInfo, H310Caps.. */
static const struct pf protocols[] = {
    F_NSP(0),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    NF(SEQ, 1, 1, 3, EXT, 0, nsp_info),
    X,
    X,
};
static const struct pf protocol_item[] = {NF(CHOICE, 4, 9, 11, EXT, 0, protocols)};
static const struct pf gateway[] = {NF(SEQOF, SEMI, 0, 0, OPT, 0, protocol_item), F_NSP(OPT)};
static const struct pf ept[] = {
    F_NSP(OPT),
    NF(SEQ, 2, 3, 3, EXT | OPT, 0, vendor),
    NF(SEQ, 1, 1, 1, EXT | OPT, 0, nsp_info),
    NF(SEQ, 2, 2, 2, EXT | OPT, 0, gateway),
    NF(SEQ, 1, 1, 2, EXT | OPT, 0, nsp_info),
    NF(SEQ, 1, 1, 1, EXT | OPT, 0, nsp_info),
    F_BOOL,
    F_BOOL,
    X,
    X,
};
#define F_EPT NF(SEQ, 6, 8, 10, EXT, 0, ept)

static const struct pf q954[] = {F_BOOL, F_BOOL};
static const struct pf qseries[] = {F_BOOL, F_BOOL, F_BOOL, F_BOOL,
				    F_BOOL, F_BOOL, F_BOOL, NF(SEQ, 0, 2, 2, EXT, 0, q954)};
static const struct pf word_item[] = {F_WORD};
static const struct pf goal[] = {F_NUL, F_NUL, F_NUL, X, X};
static const struct pf four_nul[] = {F_NUL, F_NUL, F_NUL, F_NUL};

/* H.245 */
static const struct pf h245_nsid[] = {F_OID, NF(SEQ, 0, 3, 3, 0, 0, h221)};
static const struct pf h245_nsp[] = {NF(CHOICE, 1, 2, 2, 0, 0, h245_nsid), F_OCTSEMI(0)};
#define F_H245NSP(a) NF(SEQ, 0, 2, 2, a, 0, h245_nsp)
static const struct pf h245_nsp_item[] = {F_H245NSP(0)};

static const struct pf h261[] = {
    NF(INT, 2, 1, 0, OPT, 0, NULL), NF(INT, 2, 1, 0, OPT, 0, NULL), F_BOOL, F_WORD, F_BOOL, X};
#define F_CONSO NF(INT, CONS, 0, 0, OPT, 0, NULL)
static const struct pf h262[] = {
    F_BOOL,  F_BOOL, F_BOOL, F_BOOL,  F_BOOL,  F_BOOL,	F_BOOL,	 F_BOOL,
    F_BOOL,  F_BOOL, F_BOOL, F_CONSO, F_CONSO, F_WORDO, F_WORDO, NF(INT, 4, 0, 0, OPT, 0, NULL),
    F_CONSO, X};
static const struct pf h263[] = {
    NF(INT, 5, 1, 0, OPT, 0, NULL),
    NF(INT, 5, 1, 0, OPT, 0, NULL),
    NF(INT, 5, 1, 0, OPT, 0, NULL),
    NF(INT, 5, 1, 0, OPT, 0, NULL),
    NF(INT, 5, 1, 0, OPT, 0, NULL),
    F_CONS,
    F_BOOL,
    F_BOOL,
    F_BOOL,
    F_BOOL,
    F_BOOL,
    F_CONSO,
    F_WORDO,
    X,
    X,
    X,
    X,
    X,
    X,
    X,
    X,
};
static const struct pf is11172v[] = {
    F_BOOL, F_CONSO, F_CONSO, F_WORDO, F_WORDO, NF(INT, 4, 0, 0, OPT, 0, NULL), F_CONSO, X};
static const struct pf video[] = {F_H245NSP(0),
				  NF(SEQ, 2, 5, 6, EXT, 0, h261),
				  NF(SEQ, 6, 17, 18, EXT, 0, h262),
				  NF(SEQ, 7, 13, 21, EXT, 0, h263),
				  NF(SEQ, 6, 7, 8, EXT, 0, is11172v),
				  X};

static const struct pf g7231[] = {F_BYTE, F_BOOL};
static const struct pf is11172a[] = {F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL,
				     F_BOOL, F_BOOL, F_BOOL, F_WORD};
static const struct pf is13818a[] = {F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL,
				     F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL,
				     F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_WORD};
static const struct pf audio[] = {
    F_H245NSP(0),
    F_BYTE,
    F_BYTE,
    F_BYTE,
    F_BYTE,
    F_BYTE,
    F_BYTE,
    F_BYTE,
    NF(SEQ, 0, 2, 2, 0, 0, g7231),
    F_BYTE,
    F_BYTE,
    F_BYTE,
    NF(SEQ, 0, 9, 9, EXT, 0, is11172a),
    NF(SEQ, 0, 21, 21, EXT, 0, is13818a),
    X,
    X,
    X,
    X,
    X,
    X,
    X,
    X,
};

static const struct pf dpc[] = {
    F_H245NSP(0), F_NUL, F_NUL, F_NUL, F_NUL, F_NUL, F_NUL, X, X, X, X, X, X, X};
#define F_DPC NF(CHOICE, 3, 7, 14, EXT, 0, dpc)
static const struct pf t84r[] = {F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL,
				 F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL,
				 F_BOOL, F_BOOL, F_BOOL, F_BOOL, F_BOOL};
static const struct pf t84profile[] = {F_NUL, NF(SEQ, 0, 19, 19, EXT, 0, t84r)};
static const struct pf t84[] = {F_DPC, NF(CHOICE, 1, 2, 2, 0, 0, t84profile)};
static const struct pf nlpid[] = {F_DPC, F_OCTSEMI(0)};
static const struct pf app[] = {
    F_H245NSP(0),
    NF(CHOICE, 3, 7, 14, DEC | EXT, H323_EV_T120, dpc),
    F_DPC,
    F_DPC,
    NF(SEQ, 0, 2, 2, 0, 0, t84),
    F_DPC,
    F_DPC,
    NF(SEQ, 0, 2, 2, 0, 0, nlpid),
    F_NUL,
    F_DPC,
    X,
    X,
    X,
    X,
};
static const struct pf dac[] = {NF(CHOICE, 4, 10, 14, DEC | EXT, H323_EV_APP, app), F_CONS};
static const struct pf encmode[] = {F_H245NSP(0), F_NUL};
static const struct pf datatype[] = {
    F_H245NSP(0),
    F_NUL,
    NF(CHOICE, 3, 5, 6, EXT, 0, video),
    NF(CHOICE, 4, 14, 22, EXT, 0, audio),
    NF(SEQ, 0, 2, 2, DEC | EXT, 0, dac),
    NF(CHOICE, 1, 2, 2, EXT, 0, encmode),
    X,
    X,
    X,
};

static const struct pf h222[] = {F_WORD, F_WORD, F_WORDO, F_OCTSEMI(OPT), F_OCTSEMI(OPT)};
static const struct pf al3[] = {NF(INT, 2, 0, 0, 0, 0, NULL), F_CONS};
static const struct pf altype[] = {
    F_H245NSP(0), F_NUL, F_NUL, F_NUL, F_NUL, NF(SEQ, 0, 2, 2, 0, 0, al3), X, X, X};
static const struct pf h223[] = {NF(CHOICE, 3, 6, 9, EXT, 0, altype), F_BOOL};
static const struct pf hdlc[] = {NF(CHOICE, 2, 3, 3, EXT, 0, three_nul), F_WORD, F_BOOL};
static const struct pf erm[] = {NF(INT, 7, 1, 0, 0, 0, NULL),
				NF(CHOICE, 2, 3, 3, EXT, 0, three_nul)};
static const struct pf v76mode[] = {NF(SEQ, 0, 2, 2, EXT, 0, erm), F_NUL};
static const struct pf v75[] = {F_BOOL};
static const struct pf v76[] = {
    NF(SEQ, 0, 3, 3, EXT, 0, hdlc), NF(CHOICE, 2, 3, 3, EXT, 0, three_nul), F_BOOL,
    NF(CHOICE, 1, 2, 2, EXT, 0, v76mode), NF(SEQ, 0, 1, 1, EXT, 0, v75)};
#define F_H222 NF(SEQ, 3, 5, 5, EXT, 0, h222)
#define F_H223 NF(SEQ, 0, 2, 2, EXT, 0, h223)
#define F_V76 NF(SEQ, 0, 5, 5, EXT, 0, v76)

static const struct pf uni_ip[] = {NF(OCTSTR, FIXD, 4, 0, DEC, H323_EV_IP4, NULL), F_WORD};
static const struct pf uni_ipx[] = {F_OCT(6), F_OCT(4), F_OCT(2)};
static const struct pf uni_ip6[] = {NF(OCTSTR, FIXD, 16, 0, DEC, H323_EV_IP6, NULL), F_WORD};
static const struct pf uni_sroute[] = {NF(CHOICE, 1, 2, 2, 0, 0, two_nul), F_OCT(4), F_WORD,
				       NF(SEQOF, SEMI, 0, 0, 0, 0, oct4_item)};
static const struct pf unicast[] = {
    NF(SEQ, 0, 2, 2, DEC | EXT, 0, uni_ip),
    NF(SEQ, 0, 3, 3, EXT, 0, uni_ipx),
    NF(SEQ, 0, 2, 2, DEC | EXT, 0, uni_ip6),
    F_OCT(16),
    NF(SEQ, 0, 4, 4, EXT, 0, uni_sroute),
    X,
    X,
};
static const struct pf multi_ip[] = {F_OCT(4), F_WORD};
static const struct pf multi_ip6[] = {F_OCT(16), F_WORD};
static const struct pf multicast[] = {NF(SEQ, 0, 2, 2, EXT, 0, multi_ip),
				      NF(SEQ, 0, 2, 2, EXT, 0, multi_ip6), X, X};
static const struct pf h245ta[] = {NF(CHOICE, 3, 5, 7, DEC | EXT, H323_EV_UNICAST, unicast),
				   NF(CHOICE, 1, 2, 4, EXT, 0, multicast)};
#define F_H245TA(a, tag) NF(CHOICE, 1, 2, 2, DEC | EXT | (a), tag, h245ta)

static const struct pf h2250[] = {
    NF(SEQOF, SEMI, 0, 0, OPT, 0, h245_nsp_item),
    F_BYTE,
    NF(INT, 8, 1, 0, OPT, 0, NULL),
    F_H245TA(OPT, H323_EV_MEDIA),
    F_BOOLO,
    F_H245TA(OPT, H323_EV_MEDIACTL),
    NF(UNSUP, 0, 0, 0, STOP | OPT, 0, NULL),
};
#define F_H2250 NF(SEQ, 10, 11, 14, DEC | EXT, 0, h2250)
static const struct pf fwdmux[] = {F_H222, F_H223, F_V76, F_H2250, F_NUL};
static const struct pf fwdparams[] = {F_WORDO,
				      NF(CHOICE, 3, 6, 9, DEC | EXT, H323_EV_DATATYPE, datatype),
				      NF(CHOICE, 2, 3, 5, DEC | EXT, 0, fwdmux), X, X};
static const struct pf revmux[] = {F_H223, F_V76, F_H2250};
static const struct pf revparams[] = {NF(CHOICE, 3, 6, 9, EXT, 0, datatype),
				      NF(CHOICE, 1, 2, 3, DEC | EXT | OPT, 0, revmux), X, X};

static const struct pf q2931addr[] = {NF(NUMSTR, 4, 1, 0, 0, 0, NULL),
				      NF(OCTSTR, 5, 1, 0, 0, 0, NULL)};
static const struct pf q2931[] = {NF(CHOICE, 1, 2, 2, EXT, 0, q2931addr),
				  NF(OCTSTR, 5, 1, 0, OPT, 0, NULL)};
static const struct pf netaddr[] = {NF(SEQ, 1, 2, 2, EXT, 0, q2931),
				    NF(NUMSTR, 7, 1, 0, 0, 0, NULL), F_H245TA(0, H323_EV_LAN)};
static const struct pf nap[] = {NF(CHOICE, 1, 2, 2, EXT | OPT, 0, two_nul),
				NF(CHOICE, 2, 3, 3, DEC | EXT, H323_EV_NETADDR, netaddr), F_BOOL,
				NF(OCTSTR, 8, 1, 0, OPT, 0, NULL), X};
#define F_NAP NF(SEQ, 2, 4, 5, DEC | EXT, H323_EV_SEPSTACK, nap)

static const struct pf olc[] = {F_WORD, NF(SEQ, 1, 3, 5, DEC | EXT, 0, fwdparams),
				NF(SEQ, 1, 2, 4, DEC | EXT | OPT, 0, revparams), F_NAP, XS};

static const struct pf ackrevmux[] = {F_H222, F_H2250};
static const struct pf ackrev[] = {F_WORD, F_WORDO,
				   NF(CHOICE, 0, 1, 2, DEC | EXT | OPT, 0, ackrevmux), X};
static const struct pf h2250ack[] = {
    NF(SEQOF, SEMI, 0, 0, OPT, 0, h245_nsp_item),
    NF(INT, 8, 1, 0, OPT, 0, NULL),
    F_H245TA(OPT, H323_EV_MEDIA),
    F_H245TA(OPT, H323_EV_MEDIACTL),
    NF(INT, 5, 96, 0, OPT, 0, NULL),
    X,
    X,
};
static const struct pf fwdack[] = {NF(SEQ, 5, 5, 7, DEC | EXT, 0, h2250ack)};
static const struct pf olca[] = {F_WORD, NF(SEQ, 2, 3, 4, DEC | EXT | OPT, 0, ackrev), F_NAP,
				 NF(CHOICE, 0, 1, 1, DEC | EXT | OPT, 0, fwdack), XS};

static const struct pf request[] = {
    XS, XS, XS, NF(SEQ, 1, 3, 5, DEC | EXT, H323_EV_OLC, olc), XS, XS, XS, XS, XS, XS, XS, XS,
    XS, XS, XS};
static const struct pf response[] = {
    XS, XS, XS, XS, XS, NF(SEQ, 1, 2, 5, DEC | EXT, H323_EV_OLCA, olca),
    XS, XS, XS, XS, XS, XS,
    XS, XS, XS, XS, XS, XS,
    XS, XS, XS, XS, XS, XS};
static const struct pf mscm[] = {NF(CHOICE, 4, 11, 15, DEC | EXT, 0, request),
				 NF(CHOICE, 5, 19, 24, DEC | EXT, 0, response), XS, XS};
static const struct pf mscm_root = NF(CHOICE, 2, 4, 4, DEC | EXT, 0, mscm);
static const struct pf mscm_item[] = {NF(CHOICE, 2, 4, 4, DEC | OPEN | EXT, 0, mscm)};

/* H.225.0 messages */
static const struct pf olc_item[] = {NF(SEQ, 1, 3, 5, DEC | OPEN | EXT, H323_EV_OLC, olc)};
#define F_FASTSTART NF(SEQOF, SEMI, 0, 30, DEC | OPT, 0, olc_item)
#define F_H245ADDR F_TA(DEC | OPT, H323_EV_H245ADDR)

static const struct pf setup[] = {
    F_OID,
    F_H245ADDR,
    F_ALIASES(OPT),
    F_EPT,
    F_ALIASES(OPT),
    F_TA(DEC | OPT, H323_EV_DESTCSA),
    F_ALIASES(OPT),
    NF(SEQOF, SEMI, 0, 0, OPT, 0, word_item),
    F_BOOL,
    F_OCT(16),
    NF(CHOICE, 2, 3, 5, EXT, 0, goal),
    NF(SEQ, 0, 8, 8, EXT | OPT, 0, qseries),
    NF(CHOICE, 2, 4, 4, EXT, 0, four_nul),
    /* extensions: sourceCallSignalAddress .. cryptoTokens, fastStart,
     * mediaWaitForConnect, canOverlapSend, then endpointIdentifier */
    F_TA(DEC | OPT, H323_EV_SRCCSA),
    X,
    X,
    X,
    X,
    X,
    F_FASTSTART,
    X,
    X,
    XS,
};
static const struct pf callproc[] = {F_OID, F_EPT, F_H245ADDR, X, X, X, X, F_FASTSTART, X, X, X, X};
static const struct pf connect[] = {
    F_OID, F_H245ADDR, F_EPT, F_OCT(16), X, X, X, X, F_FASTSTART, X, X, X, X, X, X, X, X, X, X};
/* Alerting: protocolIdentifier, destinationInfo, h245Address (as
 * CallProceeding); extensions: callIdentifier .. cryptoTokens, fastStart */
static const struct pf alerting[] = {F_OID, F_EPT, F_H245ADDR, X, X, X, X, F_FASTSTART, X, X,
				     X,	    X,	   X,	       X, X, X, X};
static const struct pf information[] = {F_OID, X, X, X, X, X, X};
static const struct pf relreason[] = {F_NUL, F_NUL, F_NUL, F_NUL, F_NUL, F_NUL, F_NUL, F_NUL,
				      F_NUL, F_NUL, F_NUL, F_NUL, X,	 X,	X,     X,
				      X,     X,	    X,	   X,	  X,	 X};
static const struct pf release[] = {
    F_OID, NF(CHOICE, 4, 12, 22, EXT | OPT, 0, relreason), X, X, X, X, X, X, X, X, X};
static const struct pf freason[] = {F_NUL, F_NUL, F_NUL, F_NUL, X, X, X, X, X, X, X};
static const struct pf facility[] = {
    F_OID,
    F_TA(DEC | OPT, H323_EV_ALTADDR),
    F_ALIASES(OPT),
    NF(OCTSTR, FIXD, 16, 0, OPT, 0, NULL),
    NF(CHOICE, 2, 4, 11, DEC | EXT, H323_EV_REASON, freason),
    /* extensions: callIdentifier .. conferences, h245Address, fastStart */
    X,
    X,
    X,
    X,
    X,
    X,
    F_H245ADDR,
    F_FASTSTART,
    X,
    X,
    X,
    X,
    X,
    X,
    X,
    X,
};
static const struct pf guid[] = {F_OCT(16)};
static const struct pf secmode[] = {F_NSP(0), F_NUL, F_NUL};
static const struct pf seccaps[] = {F_NSP(OPT), NF(CHOICE, 2, 3, 3, EXT, 0, secmode),
				    NF(CHOICE, 2, 3, 3, EXT, 0, secmode),
				    NF(CHOICE, 2, 3, 3, EXT, 0, secmode)};
static const struct pf h245sec[] = {F_NSP(0), F_NUL, NF(SEQ, 1, 4, 4, EXT, 0, seccaps),
				    NF(SEQ, 1, 4, 4, EXT, 0, seccaps)};
/* H.235 tokens */
static const struct pf bitstr3[] = {NF(BITSTR, WORD, 0, 0, 0, 0, NULL),
				    NF(BITSTR, WORD, 0, 0, 0, 0, NULL),
				    NF(BITSTR, WORD, 0, 0, 0, 0, NULL)};
static const struct pf oid_oct[] = {F_OID, F_OCTSEMI(0)};
static const struct pf cleartoken[] = {
    F_OID,
    F_CONSO,
    NF(BMPSTR, 7, 1, 0, OPT, 0, NULL),
    NF(SEQ, 0, 3, 3, EXT | OPT, 0, bitstr3),
    NF(OCTSTR, 7, 8, 0, OPT, 0, NULL),
    NF(INT, UNCO, 0, 0, OPT, 0, NULL),
    NF(SEQ, 0, 2, 2, EXT | OPT, 0, oid_oct),
    NF(BMPSTR, 7, 1, 0, OPT, 0, NULL),
    NF(SEQ, 0, 2, 2, OPT, 0, oid_oct),
    X,
    X,
};
#define F_CLEARTOKEN NF(SEQ, 8, 9, 11, EXT, 0, cleartoken)
static const struct pf cleartoken_item[] = {F_CLEARTOKEN};
static const struct pf params[] = {NF(INT, UNCO, 0, 0, OPT, 0, NULL),
				   NF(OCTSTR, FIXD, 8, 0, OPT, 0, NULL), X};
#define F_PARAMS NF(SEQ, 2, 2, 3, EXT, 0, params)
#define F_BITSEMI NF(BITSTR, SEMI, 0, 0, 0, 0, NULL)
#define F_TOBESIGNED NF(SEQ, 8, 9, 11, OPEN | EXT, 0, NULL)
static const struct pf hashtok[] = {F_OID, F_PARAMS, F_BITSEMI};
static const struct pf encrtok[] = {F_OID, F_PARAMS, F_OCTSEMI(0)};
static const struct pf signtok[] = {F_TOBESIGNED, F_OID, F_PARAMS, F_BITSEMI};
static const struct pf eppwdhash[] = {NF(CHOICE, 1, 2, 7, EXT, 0, alias), F_CONS,
				      NF(SEQ, 0, 3, 3, 0, 0, hashtok)};
static const struct pf gkpwdhash[] = {NF(BMPSTR, 7, 1, 0, 0, 0, NULL), F_CONS,
				      NF(SEQ, 0, 3, 3, 0, 0, hashtok)};
static const struct pf ct_encrypted[] = {F_OID, NF(SEQ, 0, 3, 3, 0, 0, encrtok)};
static const struct pf ct_signed[] = {F_OID, NF(SEQ, 0, 4, 4, 0, 0, signtok)};
static const struct pf ct_hashed[] = {F_OID, F_CLEARTOKEN, NF(SEQ, 0, 3, 3, 0, 0, hashtok)};
static const struct pf cryptotoken[] = {
    NF(SEQ, 0, 2, 2, 0, 0, ct_encrypted), NF(SEQ, 0, 2, 2, 0, 0, ct_signed),
    NF(SEQ, 0, 3, 3, 0, 0, ct_hashed), NF(SEQ, 0, 3, 3, 0, 0, encrtok)};
static const struct pf crypto323[] = {
    NF(SEQ, 0, 3, 3, 0, 0, eppwdhash), NF(SEQ, 0, 3, 3, 0, 0, gkpwdhash),
    NF(SEQ, 0, 3, 3, 0, 0, encrtok),   NF(SEQ, 0, 3, 3, 0, 0, encrtok),
    NF(SEQ, 0, 4, 4, 0, 0, signtok),   NF(SEQ, 0, 4, 4, 0, 0, signtok),
    NF(SEQ, 0, 4, 4, 0, 0, signtok),   NF(CHOICE, 2, 4, 4, EXT, 0, cryptotoken),
};
static const struct pf crypto323_item[] = {NF(CHOICE, 3, 8, 8, EXT, 0, crypto323)};
static const struct pf progress[] = {
    F_OID,
    F_EPT,
    F_H245ADDR,
    NF(SEQ, 0, 1, 1, EXT, 0, guid),
    NF(CHOICE, 2, 4, 4, EXT | OPT, 0, h245sec),
    NF(SEQOF, SEMI, 0, 0, OPT, 0, cleartoken_item),
    NF(SEQOF, SEMI, 0, 0, OPT, 0, crypto323_item),
    F_FASTSTART,
    X,
    X,
    X,
};
static const struct pf body[] = {
    NF(SEQ, 7, 13, 39, DEC | EXT, 0, setup),
    NF(SEQ, 1, 3, 12, DEC | EXT, 0, callproc),
    NF(SEQ, 1, 4, 19, DEC | EXT, 0, connect),
    NF(SEQ, 1, 3, 17, DEC | EXT, 0, alerting),
    NF(SEQ, 0, 1, 7, EXT, 0, information),
    NF(SEQ, 1, 2, 11, EXT, 0, release),
    NF(SEQ, 3, 5, 21, DEC | EXT, 0, facility),
    NF(SEQ, 5, 8, 11, DEC | EXT, 0, progress),
    X,
    X,
    X,
    X,
    X,
};
static const struct pf uupdu[] = {
    NF(CHOICE, 3, 7, 13, DEC | EXT, H323_EV_BODY, body),
    F_NSP(OPT),
    /* extensions: h4501SupplementaryService, h245Tunneling, h245Control,
     * then the kernel stops */
    X,
    X,
    NF(SEQOF, SEMI, 0, 4, DEC | OPT, H323_EV_TUNNEL, mscm_item),
    XS,
};
static const struct pf uuinfo[] = {NF(SEQ, 1, 2, 11, DEC | EXT, 0, uupdu), XS};
static const struct pf uuinfo_root = NF(SEQ, 1, 2, 2, DEC | EXT, 0, uuinfo);

static int run(const struct pf *root, const uint8_t *buf, size_t beg, size_t end,
	       struct h323_events *out)
{
	struct bs b = {buf, beg, end, 0, out, 0};
	int rc;

	out->n = 0;
	rc = decode(&b, root, 1);
	if (b.full)
		return H323_UNSUP;
	return rc;
}

/* RAS */
static const struct pf ta_item_ras[] = {F_TA(DEC, H323_EV_RASADDR)};
static const struct pf ta_item_rasnat[] = {F_TA(DEC, H323_EV_RASNAT)};
static const struct pf ta_item_sig[] = {F_TA(DEC, H323_EV_SIGADDR)};
static const struct pf grq[] = {F_WORD, F_OID, F_NSP(OPT), F_TA(DEC, H323_EV_RASNAT), XS};
static const struct pf gcf[] = {
    F_WORD, F_OID, F_NSP(OPT), NF(BMPSTR, 7, 1, 0, OPT, 0, NULL), F_TA(DEC, H323_EV_RASADDR), XS};
static const struct pf rrq[] = {
    F_WORD,
    F_OID,
    F_NSP(OPT),
    F_BOOL,
    NF(SEQOF, SEMI, 0, 10, DEC, 0, ta_item_ras),
    NF(SEQOF, SEMI, 0, 10, DEC, 0, ta_item_rasnat),
    F_EPT,
    F_ALIASES(OPT),
    NF(BMPSTR, 7, 1, 0, OPT, 0, NULL),
    NF(SEQ, 2, 3, 3, EXT, 0, vendor),
    /* extensions: alternateEndpoints, timeToLive, then the kernel stops */
    X,
    NF(INT, CONS, 1, 0, DEC | OPT, H323_EV_TTL, NULL),
    XS,
};
static const struct pf rcf[] = {
    F_WORD,
    F_OID,
    F_NSP(OPT),
    NF(SEQOF, SEMI, 0, 10, DEC, 0, ta_item_sig),
    F_ALIASES(OPT),
    NF(BMPSTR, 7, 1, 0, OPT, 0, NULL),
    NF(BMPSTR, 7, 1, 0, 0, 0, NULL),
    /* extensions: alternateGatekeeper, timeToLive, then the kernel stops */
    X,
    NF(INT, CONS, 1, 0, DEC | OPT, H323_EV_TTL, NULL),
    XS,
};
static const struct pf urq[] = {F_WORD, NF(SEQOF, SEMI, 0, 10, DEC, 0, ta_item_sig), XS};
static const struct pf arq[] = {
    F_WORD,
    NF(CHOICE, 2, 4, 4, EXT, 0, four_nul),
    NF(CHOICE, 1, 2, 2, EXT | OPT, 0, two_nul),
    NF(BMPSTR, 7, 1, 0, 0, 0, NULL),
    F_ALIASES(OPT),
    F_TA(DEC | OPT, H323_EV_DESTCSA),
    F_ALIASES(OPT),
    F_ALIASES(0),
    F_TA(DEC | OPT, H323_EV_SRCCSA),
    XS,
};
static const struct pf acf[] = {F_WORD, F_CONS, NF(CHOICE, 1, 2, 2, EXT, 0, two_nul),
				F_TA(DEC, H323_EV_RASADDR), XS};
static const struct pf lrq[] = {F_WORD,	    NF(BMPSTR, 7, 1, 0, OPT, 0, NULL), F_ALIASES(0),
				F_NSP(OPT), F_TA(DEC, H323_EV_RASNAT),	       XS};
static const struct pf lcf[] = {F_WORD, F_TA(DEC, H323_EV_RASADDR), F_TA(DEC, 0), XS};
static const struct pf irr[] = {F_NSP(OPT),
				F_WORD,
				F_EPT,
				NF(BMPSTR, 7, 1, 0, 0, 0, NULL),
				F_TA(DEC, H323_EV_RASNAT),
				NF(SEQOF, SEMI, 0, 10, DEC, 0, ta_item_sig),
				XS};
static const struct pf ras[] = {
    NF(SEQ, 4, 8, 18, DEC | EXT, 0, grq),
    NF(SEQ, 2, 5, 14, DEC | EXT, 0, gcf),
    XS,
    NF(SEQ, 3, 10, 31, DEC | EXT, 0, rrq),
    NF(SEQ, 3, 7, 24, DEC | EXT, 0, rcf),
    XS,
    NF(SEQ, 3, 5, 15, DEC | EXT, 0, urq),
    XS,
    XS,
    NF(SEQ, 7, 16, 34, DEC | EXT, 0, arq),
    NF(SEQ, 2, 6, 27, DEC | EXT, 0, acf),
    XS,
    XS,
    XS,
    XS,
    XS,
    XS,
    XS,
    NF(SEQ, 2, 5, 17, DEC | EXT, 0, lrq),
    NF(SEQ, 1, 4, 19, DEC | EXT, 0, lcf),
    XS,
    XS,
    NF(SEQ, 3, 8, 16, DEC | EXT, 0, irr),
    XS,
    XS,
    XS,
    XS,
    XS,
    XS,
    XS,
    XS,
    XS,
};
static const struct pf ras_root = NF(CHOICE, 5, 24, 32, DEC | EXT, H323_EV_RAS, ras);

int nftdp_h323_decode_ras(const uint8_t *buf, uint32_t len, struct h323_events *out)
{
	return run(&ras_root, buf, 0, len, out);
}

int nftdp_h323_decode_h245(const uint8_t *buf, uint32_t len, struct h323_events *out)
{
	return run(&mscm_root, buf, 0, len, out);
}

/* DecodeQ931: the protocol discriminator, the call reference, the message
 * type, then the information elements up to the user-user one */
int nftdp_h323_decode_q931(const uint8_t *buf, uint32_t sz, struct h323_events *out)
{
	uint32_t p = 0, len;

	out->n = 0;
	if (sz < 1)
		return H323_BOUND;
	if (buf[p] != 0x08)
		return H323_RANGE;
	p++;
	sz--;
	if (sz < 1)
		return H323_BOUND;
	len = buf[p++];
	sz--;
	if (sz < len)
		return H323_BOUND;
	p += len;
	sz -= len;
	if (sz < 2)
		return H323_BOUND;
	p++; /* the message type */
	sz--;
	if (buf[p] & 0x80) {
		p++;
		sz--;
	}
	while (sz > 0) {
		if (buf[p] == 0x7e) {
			if (sz < 3)
				break;
			len = (uint32_t)buf[p + 1] << 8 | buf[p + 2];
			p += 3;
			sz -= 3;
			/* the kernel then reads the protocol discriminator
			 * byte without a check: none left is an error here */
			if (sz < len || len < 1)
				break;
			return run(&uuinfo_root, buf, p + 1, p + len, out);
		}
		p++;
		sz--;
		if (sz < 1)
			break;
		len = buf[p++];
		sz--;
		if (sz < len)
			break;
		p += len;
		sz -= len;
	}
	return H323_BOUND;
}
