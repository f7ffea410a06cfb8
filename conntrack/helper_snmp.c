// SPDX-License-Identifier: BSD-3-Clause
/*
 * SNMP on a NATed connection (nf_nat_snmp_basic): the `snmp` helper's
 * packets (port 161, through nf_conntrack_snmp's nf_nat_snmp_hook) and the
 * `snmp_trap` helper's (port 162) have every IpAddress in the message that
 * equals the originator's address before NAT replaced by its address after
 * NAT, the UDP checksum adjusted in place (the kernel's fast_csum, nothing
 * when the datagram has no checksum). A message the kernel's BER decoder
 * rejects is dropped ("parser failed").
 *
 * The kernel decodes with lib/asn1_decoder.c over the bytecode
 * asn1_compiler makes of nf_nat_snmp_basic.asn1; the decoder's checks,
 * not the grammar's intent, decide which packets pass, so the walk below
 * is that decoder's semantics over the grammar's operations, written out
 * by hand as snmp_prog:
 * - a version other than 0 or 1 (SNMPv1, v2c) fails the packet;
 * - the PDUs are the grammar's [0] [1] [5] [2] [3] [6] [7] [8], each tried
 *   in that order after the previous one (a message may carry several in
 *   ascending order); SNMPv1's Trap-PDU [4] is not among them, so a v1
 *   trap fails;
 * - after a VarBind's value the remaining value alternatives that are not
 *   conditional still read what follows inside the VarBind;
 * - a length has at most two bytes after 0x8N and fits its container
 *   (the kernel here drops a message whose short-form length runs past
 *   the datagram, differential 289); an indefinite length ends at an EOC;
 * - nothing after the message is looked at.
 * So every byte read lies inside the datagram.
 */
#include <arpa/inet.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "ct_priv.h"

enum {
	SNMP_PORT = 161,
	SNMP_TRAP_PORT = 162,
};

enum snmp_op_kind {
	OP_MATCH,    /* match a tag (flags below) */
	OP_END,	     /* end of a SEQUENCE */
	OP_END_OF,   /* end of a SEQUENCE OF: loop to arg while data remains */
	OP_NEED_HIT, /* fail unless the last tag read matched (a CHOICE) */
	OP_RETURN,   /* back from a jump */
	OP_DONE,
};

#define F_SKIP 0x01    /* a mismatch goes on to the next op */
#define F_COND 0x02    /* skipped when the previous op matched */
#define F_CONS 0x04    /* constructed: opens a container */
#define F_JUMP 0x08    /* after the match, run the ops at arg, then return */
#define F_VERSION 0x10 /* the version check */
#define F_IPADDR 0x20  /* an IpAddress: translated */

struct snmp_op {
	uint8_t kind, tag, flags, arg;
};

#define PDU_AT 14
#define VARBIND_AT 18

static const struct snmp_op snmp_prog[] = {
    /* Message ::= SEQUENCE { version, community, pdu PDUs } */
    [0] = {OP_MATCH, 0x30, F_CONS, 0},
    [1] = {OP_MATCH, 0x02, F_VERSION, 0},
    [2] = {OP_MATCH, 0x04, 0, 0},
    /* PDUs: each alternative an OPTIONAL implicitly tagged PDU */
    [3] = {OP_MATCH, 0xa0, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [4] = {OP_MATCH, 0xa1, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [5] = {OP_MATCH, 0xa5, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [6] = {OP_MATCH, 0xa2, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [7] = {OP_MATCH, 0xa3, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [8] = {OP_MATCH, 0xa6, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [9] = {OP_MATCH, 0xa7, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [10] = {OP_MATCH, 0xa8, F_CONS | F_SKIP | F_JUMP, PDU_AT},
    [11] = {OP_NEED_HIT, 0, 0, 0},
    [12] = {OP_END, 0, 0, 0},
    [13] = {OP_DONE, 0, 0, 0},
    /* PDU ::= SEQUENCE { request-id, error-status, error-index,
     * variable-bindings SEQUENCE OF VarBind } */
    [PDU_AT] = {OP_MATCH, 0x02, 0, 0},
    [15] = {OP_MATCH, 0x02, 0, 0},
    [16] = {OP_MATCH, 0x02, 0, 0},
    [17] = {OP_MATCH, 0x30, F_CONS, 0},
    /* VarBind ::= SEQUENCE { name OBJECT IDENTIFIER, CHOICE {...} } */
    [VARBIND_AT] = {OP_MATCH, 0x30, F_CONS, 0},
    [19] = {OP_MATCH, 0x06, 0, 0},
    /* SimpleSyntax: INTEGER, OCTET STRING, OBJECT IDENTIFIER */
    [20] = {OP_MATCH, 0x02, F_SKIP, 0},
    [21] = {OP_MATCH, 0x04, F_SKIP | F_COND, 0},
    [22] = {OP_MATCH, 0x06, F_SKIP | F_COND, 0},
    /* ApplicationSyntax: IpAddress, Counter32, TimeTicks, Opaque,
     * Counter64, Unsigned32 (implicit tags: not conditional) */
    [23] = {OP_MATCH, 0x40, F_SKIP | F_IPADDR, 0},
    [24] = {OP_MATCH, 0x41, F_SKIP, 0},
    [25] = {OP_MATCH, 0x43, F_SKIP, 0},
    [26] = {OP_MATCH, 0x44, F_SKIP, 0},
    [27] = {OP_MATCH, 0x46, F_SKIP, 0},
    [28] = {OP_MATCH, 0x42, F_SKIP, 0},
    /* unSpecified NULL, noSuchObject, noSuchInstance, endOfMibView */
    [29] = {OP_MATCH, 0x05, F_SKIP | F_COND, 0},
    [30] = {OP_MATCH, 0x80, F_SKIP | F_COND, 0},
    [31] = {OP_MATCH, 0x81, F_SKIP | F_COND, 0},
    [32] = {OP_MATCH, 0x82, F_SKIP | F_COND, 0},
    [33] = {OP_NEED_HIT, 0, 0, 0},
    [34] = {OP_END, 0, 0, 0},
    [35] = {OP_END_OF, 0, 0, VARBIND_AT},
    [36] = {OP_END, 0, 0, 0},
    [37] = {OP_RETURN, 0, 0, 0},
};

/* the decoder's stack depths */
#define SNMP_CONS_DEPTH 10
#define SNMP_JUMP_DEPTH 10

/* fast_csum: the incremental checksum change of from's 4 bytes becoming
 * to's at payload offset off (by its parity) */
static void snmp_csum(uint8_t *check, uint32_t off, const uint8_t from[4], const uint8_t to[4])
{
	uint8_t b[12] = {0};
	uint32_t size;
	uint16_t c;

	if (off & 1) {
		b[0] = 0xff;
		for (unsigned int i = 0; i < 4; i++) {
			b[1 + i] = (uint8_t)~from[i];
			b[7 + i] = to[i];
		}
		b[5] = 0xff;
		size = 12;
	} else {
		for (unsigned int i = 0; i < 4; i++) {
			b[i] = (uint8_t)~from[i];
			b[4 + i] = to[i];
		}
		size = 8;
	}
	memcpy(&c, check, 2);
	c = nftdp_csum_fold(nftdp_csum_partial(b, size, ~(uint32_t)c));
	memcpy(check, &c, 2);
}

int nftdp_ct_snmp_translate(uint8_t *d, uint32_t n, uint32_t from, uint32_t to, uint8_t *check)
{
	uint16_t cons_end[SNMP_CONS_DEPTH];
	uint8_t jump[SNMP_JUMP_DEPTH];
	unsigned int csp = 0, jsp = 0, pc = 0;
	uint32_t dp = 0, end = n, len = 0;
	bool hit = false;

	if (n > 65535)
		return -1;
	for (;;) {
		const struct snmp_op *op = &snmp_prog[pc];
		bool indef = false;
		uint32_t cur;
		uint8_t tag;

		switch (op->kind) {
		case OP_MATCH:
			if (((op->flags & F_COND) && hit) || dp == end) {
				pc++;
				continue;
			}
			hit = false;
			/* the tag and a length byte inside the container */
			if (dp >= end - 1)
				return -1;
			tag = d[dp++];
			if ((tag & 0x1f) == 0x1f)
				return -1; /* long tags are not supported */
			/* a constructed op takes either form */
			if ((tag ^ op->tag) & ~(op->flags & F_CONS ? 0x20 : 0)) {
				if (!(op->flags & F_SKIP))
					return -1;
				dp--;
				pc++;
				continue;
			}
			hit = true;
			len = d[dp++];
			if (len == 0x80) {
				if (!(tag & 0x20) || 2 > end - dp)
					return -1;
				indef = true;
			} else if (len > 0x80) {
				uint32_t k = len - 0x80;

				if (k > 2 || dp >= end - k)
					return -1;
				for (len = 0; k > 0; k--)
					len = len << 8 | d[dp++];
			}
			if (!indef && len > end - dp)
				return -1;
			if (op->flags & F_CONS) {
				if (csp >= SNMP_CONS_DEPTH)
					return -1;
				/* the enclosing end; 0 marks an indefinite
				 * length */
				cons_end[csp++] = indef ? 0 : (uint16_t)end;
				if (!indef)
					end = dp + len;
			} else {
				/* a primitive: never indefinite here, its
				 * tag equals the op's */
				if (op->flags & F_VERSION) {
					/* snmp_version: one byte, 0 or 1 */
					if (len != 1 || d[dp] > 1)
						return -1;
				} else if (op->flags & F_IPADDR) {
					/* snmp_helper */
					if (len != 4)
						return -1;
					if (!memcmp(d + dp, &from, 4)) {
						if (check[0] || check[1])
							snmp_csum(check, dp, d + dp,
								  (const uint8_t *)&to);
						memcpy(d + dp, &to, 4);
					}
				}
				dp += len;
			}
			if (op->flags & F_JUMP) {
				if (jsp >= SNMP_JUMP_DEPTH)
					return -1;
				jump[jsp++] = (uint8_t)(pc + 1);
				pc = op->arg;
			} else {
				pc++;
			}
			continue;
		case OP_END:
		case OP_END_OF:
			if (csp == 0)
				return -1;
			csp--;
			cur = end;
			end = cons_end[csp];
			if (end == 0) {
				/* indefinite: an EOC ends it */
				end = cur;
				if (end - dp < 2)
					return -1;
				if (d[dp] != 0) {
					if (op->kind != OP_END_OF)
						return -1;
					csp++;
					pc = op->arg;
					continue;
				}
				dp++;
				if (d[dp] != 0)
					return -1;
				dp++;
			} else {
				if (dp < cur && op->kind == OP_END_OF) {
					end = cur;
					csp++;
					pc = op->arg;
					continue;
				}
				if (dp != cur)
					return -1;
			}
			pc++;
			continue;
		case OP_NEED_HIT:
			if (!hit)
				return -1;
			pc++;
			continue;
		case OP_RETURN:
			if (jsp == 0)
				return -1;
			pc = jump[--jsp];
			hit = true;
			continue;
		case OP_DONE:
		default:
			return csp == 0 && jsp == 0 ? 0 : -1;
		}
	}
}

/* nf_nat_snmp_basic's help(): the snmp helper calls it for a NATed
 * connection, snmp_trap is it */
static unsigned int snmp_nat_help(struct nftdp_ct_entry *e, struct nftdp_vm_pkt *pkt,
				  unsigned int ctinfo)
{
	uint32_t l4len = nftdp_ct_l4len(pkt), from, to;
	bool reply = ctinfo >= IP_CT_IS_REPLY;
	uint8_t *th = pkt->data + pkt->th_off;
	uint16_t udplen;

	/* the kernel reads a UDP header where the transport header is
	 * (an ICMP error's too); the IP header guaranteed 8 bytes */
	if (l4len < 8 || pkt->th_off + 8 > pkt->len)
		return NF_ACCEPT;
	/* SNMP replies and originating SNMP traps get mangled */
	if (nftdp_rd16(th) == SNMP_PORT && !reply)
		return NF_ACCEPT;
	if (nftdp_rd16(th + 2) == SNMP_TRAP_PORT && reply)
		return NF_ACCEPT;
	if (!(e->status & IPS_NAT_MASK))
		return NF_ACCEPT;
	udplen = nftdp_rd16(th + 4);
	if (udplen != l4len)
		return NF_DROP; /* "dropping malformed packet" */
	if (pkt->th_off + l4len > pkt->len)
		return NF_DROP;
	/* the originator's address, before and after NAT */
	from = e->tuple[IP_CT_DIR_ORIGINAL].src.ip;
	to = e->tuple[IP_CT_DIR_REPLY].dst.ip;
	if (from == to)
		return NF_ACCEPT;
	if (nftdp_ct_snmp_translate(th + 8, (uint16_t)(udplen - 8), from, to, th + 6) < 0)
		return NF_DROP; /* "parser failed" */
	return NF_ACCEPT;
}

unsigned int nftdp_ct_snmp_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	/* snmp_conntrack_help: the broadcast part, then the NAT part */
	(void)nftdp_ct_bcast_help(s, e, pkt, ctinfo);
	if (!(e->status & IPS_NAT_MASK))
		return NF_ACCEPT;
	return snmp_nat_help(e, pkt, ctinfo);
}

unsigned int nftdp_ct_snmp_trap_help(struct nftdp_ct_shard *s, struct nftdp_ct_entry *e,
				     struct nftdp_vm_pkt *pkt, unsigned int ctinfo)
{
	(void)s;
	return snmp_nat_help(e, pkt, ctinfo);
}
