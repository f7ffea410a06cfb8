// SPDX-License-Identifier: BSD-3-Clause
/*
 * SCTP tracking, as nf_conntrack_proto_sctp.c: the chunks of a packet are
 * checked (non-empty, COOKIE_ECHO / COOKIE_ACK first, INIT / INIT_ACK /
 * SHUTDOWN_COMPLETE alone), then each chunk moves the connection through
 * the kernel's sctp_conntracks[dir][chunk][state] table (CLOSED,
 * COOKIE_WAIT, COOKIE_ECHOED, ESTABLISHED, SHUTDOWN_SENT, SHUTDOWN_RECD,
 * SHUTDOWN_ACK_SENT, HEARTBEAT_SENT), with the verification tag checks of
 * RFC 9260 section 8.5: the tags come from INIT and INIT_ACK (or from the
 * first packet of a connection picked up), ABORT and SHUTDOWN_COMPLETE
 * carry their own or (T flag) the peer's, HEARTBEATs may learn a tag on a
 * secondary path. ESTABLISHED makes the entry ASSURED. The CRC32c is
 * checked as the kernel does at prerouting.
 */
#include <netinet/in.h>

#include "ct_priv.h"

#include <linux/netfilter/nf_conntrack_sctp.h>

enum {
	CID_DATA = 0,
	CID_INIT = 1,
	CID_INIT_ACK = 2,
	CID_HEARTBEAT = 4,
	CID_HEARTBEAT_ACK = 5,
	CID_ABORT = 6,
	CID_SHUTDOWN = 7,
	CID_SHUTDOWN_ACK = 8,
	CID_ERROR = 9,
	CID_COOKIE_ECHO = 10,
	CID_COOKIE_ACK = 11,
	CID_SHUTDOWN_COMPLETE = 14,
};

#define CHUNK_FLAG_T 0x01		/* SCTP_CHUNK_FLAG_T */
#define FLAG_HEARTBEAT_VTAG_FAILED 0x01 /* SCTP_FLAG_HEARTBEAT_VTAG_FAILED */
#define SCTP_HDR 12
#define CHUNK_HDR 4
#define INIT_HDR 16 /* struct sctp_inithdr */

#define sNO SCTP_CONNTRACK_NONE
#define sCL SCTP_CONNTRACK_CLOSED
#define sCW SCTP_CONNTRACK_COOKIE_WAIT
#define sCE SCTP_CONNTRACK_COOKIE_ECHOED
#define sES SCTP_CONNTRACK_ESTABLISHED
#define sSS SCTP_CONNTRACK_SHUTDOWN_SENT
#define sSR SCTP_CONNTRACK_SHUTDOWN_RECD
#define sSA SCTP_CONNTRACK_SHUTDOWN_ACK_SENT
#define sHS SCTP_CONNTRACK_HEARTBEAT_SENT
#define sIV SCTP_CONNTRACK_MAX

/*
 * The kernel's sctp_conntracks: rows init, init_ack, abort, shutdown,
 * shutdown_ack, error, cookie_echo, cookie_ack, shutdown_complete,
 * heartbeat, heartbeat_ack; columns sNO sCL sCW sCE sES sSS sSR sSA sHS.
 */
static const uint8_t sctp_table[2][11][9] = {
    {
	/* original */
	{sCL, sCL, sCW, sCE, sES, sCL, sCL, sSA, sCW},
	{sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sCL},
	{sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL},
	{sCL, sCL, sCW, sCE, sSS, sSS, sSR, sSA, sCL},
	{sSA, sCL, sCW, sCE, sES, sSA, sSA, sSA, sSA},
	{sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sCL},
	{sCL, sCL, sCE, sCE, sES, sSS, sSR, sSA, sCL},
	{sCL, sCL, sCW, sES, sES, sSS, sSR, sSA, sCL},
	{sCL, sCL, sCW, sCE, sES, sSS, sSR, sCL, sCL},
	{sHS, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS},
	{sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS},
    },
    {
	/* reply */
	{sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sIV},
	{sIV, sCW, sCW, sCE, sES, sSS, sSR, sSA, sIV},
	{sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sIV},
	{sIV, sCL, sCW, sCE, sSR, sSS, sSR, sSA, sIV},
	{sIV, sCL, sCW, sCE, sES, sSA, sSA, sSA, sIV},
	{sIV, sCL, sCW, sCL, sES, sSS, sSR, sSA, sIV},
	{sIV, sCL, sCE, sCE, sES, sSS, sSR, sSA, sIV},
	{sIV, sCL, sCW, sES, sES, sSS, sSR, sSA, sIV},
	{sIV, sCL, sCW, sCE, sES, sSS, sSR, sCL, sIV},
	{sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS},
	{sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sES},
    },
};

uint8_t nftdp_ct_sctp_table(int dir, int row, int state)
{
	return sctp_table[dir][row][state];
}

/* sctp_new_state: the table's answer, or the state unchanged for chunks
 * that do not move it (DATA, SACK, ...) */
static uint8_t new_state(int dir, uint8_t cur, uint8_t type)
{
	static const int8_t row[15] = {-1, 0, 1, -1, 9, 10, 2, 3, 4, 5, 6, 7, -1, -1, 8};

	if (type >= sizeof(row) || row[type] < 0)
		return cur;
	if (cur >= 9)
		return sIV; /* HEARTBEAT_ACKED: no longer a state */
	return sctp_table[dir][row[type]][cur];
}

/* ---- sctp_compute_cksum: CRC32c (common/'s crc32c), field as zero ---- */

uint32_t nftdp_ct_sctp_crc32c(const uint8_t *l4, uint32_t len)
{
	static const uint8_t zero[4];
	uint32_t crc = nftdp_crc32c(~0u, l4, len < 8 ? len : 8);

	if (len > 8) /* the checksum field as zero */
		crc = nftdp_crc32c(crc, zero, len < 12 ? len - 8 : 4);
	if (len > 12)
		crc = nftdp_crc32c(crc, l4 + 12, len - 12);
	return ~crc;
}

static bool crc_ok(const uint8_t *l4, uint32_t len)
{
	/* stored little-endian (cpu_to_le32 of the value) */
	uint32_t want = (uint32_t)l4[8] | (uint32_t)l4[9] << 8 | (uint32_t)l4[10] << 16 |
			(uint32_t)l4[11] << 24;

	return nftdp_ct_sctp_crc32c(l4, len) == want;
}

/* sctp_error: short header, bad CRC (checked only for CHECKSUM_NONE: not
 * when the NIC verified it) */
bool nftdp_ct_sctp_error(const struct ct_l4pkt *p, bool checksum)
{
	if (p->l4len < SCTP_HDR)
		return true;
	return checksum && !(p->pkt->flags & NFTDP_VM_PKT_F_CSUM_OK) && !crc_ok(p->l4, p->l4len);
}

/* the chunks, as for_each_sctp_chunk: a header must fit, steps of the
 * rounded-up length */
struct chunk_it {
	uint32_t off, count;
};

static bool chunk_next(const struct ct_l4pkt *p, struct chunk_it *it, const uint8_t **ch)
{
	if (it->count) {
		uint16_t clen = (uint16_t)(p->l4[it->off + 2] << 8 | p->l4[it->off + 3]);

		it->off += ((uint32_t)clen + 3u) & ~3u;
	}
	if (it->off >= p->l4len || p->l4len - it->off < CHUNK_HDR)
		return false;
	*ch = p->l4 + it->off;
	it->count++;
	return true;
}

/* do_basic_checks; map gets a bit per chunk type seen. true: invalid */
static bool basic_checks(const struct ct_l4pkt *p, uint64_t map[4])
{
	struct chunk_it it = {SCTP_HDR, 0};
	const uint8_t *ch;
	bool only = false;

	memset(map, 0, 4 * sizeof(uint64_t));
	while (chunk_next(p, &it, &ch)) {
		uint8_t type = ch[0];
		uint16_t clen = (uint16_t)(ch[2] << 8 | ch[3]);

		if (type == CID_INIT || type == CID_INIT_ACK || type == CID_SHUTDOWN_COMPLETE)
			only = true;
		if (((type == CID_COOKIE_ACK || type == CID_COOKIE_ECHO || only) &&
		     it.count != 1) ||
		    !clen)
			return true;
		map[type >> 6] |= 1ull << (type & 63);
	}
	return it.count == 0;
}

static inline bool has(const uint64_t map[4], uint8_t type)
{
	return map[type >> 6] & (1ull << (type & 63));
}

/* sctp_new: the first packet of a connection, vtags from its chunks */
static bool sctp_new(struct nftdp_ct_entry *e, const struct ct_l4pkt *p)
{
	struct chunk_it it = {SCTP_HDR, 0};
	const uint8_t *ch;
	uint32_t vtag = nftdp_ld32(p->l4 + 4);

	memset(&e->proto.sctp, 0, sizeof(e->proto.sctp));
	while (chunk_next(p, &it, &ch)) {
		uint8_t st = new_state(IP_CT_DIR_ORIGINAL, sNO, ch[0]);

		if (st == sNO || st == sIV)
			return false;
		if (ch[0] == CID_INIT) {
			if (vtag) /* 8.5.1 (A) */
				return false;
			if (p->l4len - it.off < CHUNK_HDR + INIT_HDR)
				return false;
			e->proto.sctp.vtag[IP_CT_DIR_REPLY] = nftdp_ld32(ch + CHUNK_HDR);
		} else if (ch[0] == CID_HEARTBEAT) {
			e->proto.sctp.vtag[IP_CT_DIR_ORIGINAL] = vtag;
		} else {
			/* out of the blue: the answer (SHUTDOWN_COMPLETE or
			 * ABORT, 8.4) carries this tag */
			e->proto.sctp.vtag[IP_CT_DIR_REPLY] = vtag;
		}
		e->proto.sctp.state = sNO;
	}
	return true;
}

/* nf_conntrack_sctp_packet */
enum ct_verdict nftdp_ct_sctp_packet(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e, bool new,
				     const struct ct_l4pkt *p, int dir, uint64_t now_ms)
{
	struct ct_sctp *sc = &e->proto.sctp;
	uint32_t vtag = nftdp_ld32(p->l4 + 4);
	uint8_t old = sNO, st = sNO;
	struct chunk_it it = {SCTP_HDR, 0};
	const uint8_t *ch;
	uint64_t map[4];
	bool ignore = false;

	(void)s;
	if (basic_checks(p, map))
		return CT_INVALID;
	if (new) {
		/* an out-of-the-blue packet with these is discarded (8.4) */
		if (has(map, CID_ABORT) || has(map, CID_SHUTDOWN_COMPLETE) ||
		    has(map, CID_COOKIE_ACK))
			return CT_INVALID;
		if (!sctp_new(e, p))
			return CT_INVALID;
	}
	/* verification tag (8.5), except for the chunks checked one by one */
	if (!has(map, CID_INIT) && !has(map, CID_SHUTDOWN_COMPLETE) && !has(map, CID_COOKIE_ECHO) &&
	    !has(map, CID_ABORT) && !has(map, CID_SHUTDOWN_ACK) && !has(map, CID_HEARTBEAT) &&
	    !has(map, CID_HEARTBEAT_ACK) && vtag != sc->vtag[dir])
		return CT_INVALID;
	while (chunk_next(p, &it, &ch)) {
		uint8_t type = ch[0], fl = ch[1];

		if (type == CID_INIT) {
			if (vtag) /* (A) */
				return CT_INVALID;
		} else if (type == CID_ABORT || type == CID_SHUTDOWN_COMPLETE) {
			/* (B), (C): own tag, or the peer's with the T flag */
			if (vtag != sc->vtag[(fl & CHUNK_FLAG_T) ? !dir : dir])
				return CT_INVALID;
		} else if (type == CID_COOKIE_ECHO) {
			if (vtag != sc->vtag[dir]) /* (D) */
				return CT_INVALID;
		} else if (type == CID_COOKIE_ACK) {
			sc->init[0] = sc->init[1] = 0;
		} else if (type == CID_HEARTBEAT) {
			if (!sc->vtag[dir]) {
				sc->vtag[dir] = vtag;
			} else if (vtag != sc->vtag[dir]) {
				if (has(map, CID_DATA) || ignore)
					return CT_INVALID;
				sc->flags |= FLAG_HEARTBEAT_VTAG_FAILED;
				sc->last_dir = (uint8_t)dir;
				ignore = true;
				continue;
			} else {
				sc->flags &= (uint8_t)~FLAG_HEARTBEAT_VTAG_FAILED;
			}
		} else if (type == CID_HEARTBEAT_ACK) {
			if (!sc->vtag[dir]) {
				sc->vtag[dir] = vtag;
			} else if (vtag != sc->vtag[dir]) {
				if (has(map, CID_DATA) || ignore)
					return CT_INVALID;
				if (!(sc->flags & FLAG_HEARTBEAT_VTAG_FAILED) ||
				    sc->last_dir == dir)
					return CT_INVALID;
				/* the peer moved to another path: take its tag */
				sc->flags &= (uint8_t)~FLAG_HEARTBEAT_VTAG_FAILED;
				sc->vtag[dir] = vtag;
				sc->vtag[!dir] = 0;
			} else {
				sc->flags &= (uint8_t)~FLAG_HEARTBEAT_VTAG_FAILED;
			}
		}
		old = sc->state;
		st = new_state(dir, old, type);
		if (st == sIV)
			return CT_INVALID;
		if (type == CID_INIT) {
			if (p->l4len - it.off < CHUNK_HDR + INIT_HDR)
				return CT_INVALID;
			if (sc->init[dir] && sc->init[!dir])
				sc->init[!dir] = 0;
			sc->init[dir] = 1;
			sc->vtag[!dir] = nftdp_ld32(ch + CHUNK_HDR);
			/* an INIT retransmit does not renew a closed entry */
			if (st == sCL && old == sCL && !new)
				ignore = true;
		} else if (type == CID_INIT_ACK) {
			uint32_t tag, peer = sc->vtag[!dir];

			if (p->l4len - it.off < CHUNK_HDR + INIT_HDR)
				return CT_INVALID;
			tag = nftdp_ld32(ch + CHUNK_HDR);
			if (!sc->init[!dir] && peer && peer != tag)
				return CT_INVALID;
			if (sc->init[dir] && sc->init[!dir] && peer != tag)
				return CT_INVALID; /* collision */
			sc->vtag[!dir] = tag;
		}
		sc->state = st;
		if (old != st) {
			nftdp_ct_event_cache(e, IPCT_PROTOINFO);
			if (st == sES && !(e->status & IPS_ASSURED)) {
				e->status |= IPS_ASSURED;
				nftdp_ct_event_cache(e, IPCT_ASSURED);
			}
		}
	}
	if (ignore)
		return CT_ACCEPT; /* allowed, timeout not renewed, not counted */
	nftdp_ct_refresh_acct(s, e, p, dir, now_ms, e->tmo->sctp[st]);
	return CT_ACCEPT;
}

/* sctp_can_early_drop */
bool nftdp_ct_sctp_can_early_drop(const struct nftdp_ct_entry *e)
{
	uint8_t st = e->proto.sctp.state;

	return st == sSS || st == sSR || st == sSA;
}
