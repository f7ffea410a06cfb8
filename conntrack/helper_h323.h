/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The H.323 helpers' bounded PER decoder (helper_h323_asn1.c): the
 * parts of the H.225.0 Q.931 user-user information and of H.245's
 * MultimediaSystemControlMessage the kernel decodes
 * (nf_conntrack_h323_asn1.c), as a list of events in decoding order.
 */
#ifndef NFTDP_HELPER_H323_H
#define NFTDP_HELPER_H323_H

#include <stdint.h>

/* results: the kernel's H323_ERROR_* (STOP is a success), and one of
 * nftdp's own for a type it does not describe (the message is then
 * treated as one the kernel cannot decode: nothing is expected) */
#define H323_OK 0
#define H323_STOP 1
#define H323_BOUND (-1)
#define H323_RANGE (-2)
#define H323_UNSUP (-3)

/* event tags */
enum {
	H323_EV_NONE,
	H323_EV_BODY,	  /* h323-message-body: the choice */
	H323_EV_H245ADDR, /* an UUIE's h245Address (TransportAddress): the choice */
	H323_EV_REASON,	  /* Facility's reason */
	H323_EV_ALTADDR,  /* Facility's alternativeAddress: the choice */
	H323_EV_IP4,	  /* the last address' 4 bytes: their offset */
	H323_EV_IP6,	  /* 16 bytes */
	H323_EV_OLC,	  /* an OpenLogicalChannel starts */
	H323_EV_OLCA,	  /* an OpenLogicalChannelAck starts */
	H323_EV_DATATYPE, /* the forward DataType: the choice */
	H323_EV_APP,	  /* DataApplicationCapability's application */
	H323_EV_T120,	  /* its t120 DataProtocolCapability */
	H323_EV_MEDIA,	  /* an H2250 mediaChannel (H.245 TransportAddress) */
	H323_EV_MEDIACTL, /* an H2250 mediaControlChannel */
	H323_EV_UNICAST,  /* the UnicastAddress choice of the last one */
	H323_EV_SEPSTACK, /* separateStack starts */
	H323_EV_NETADDR,  /* its networkAddress: the choice */
	H323_EV_LAN,	  /* its localAreaAddress (H.245 TransportAddress) */
	H323_EV_TUNNEL,	  /* the UUIE's h245Control (tunnelled H.245) starts */
	H323_EV_RAS,	  /* RasMessage: the choice */
	H323_EV_RASADDR,  /* the RAS message's TransportAddress (RRQ: each
			   * callSignalAddress; GCF: rasAddress; ACF:
			   * destCallSignalAddress; LCF: callSignalAddress) */
	H323_EV_TTL,	  /* RRQ's, RCF's timeToLive: the value */
	H323_EV_DESTCSA,  /* Setup's destCallSignalAddress: the choice */
	H323_EV_SRCCSA,	  /* Setup's sourceCallSignalAddress: the choice (and
			   * ARQ's destCallSignalAddress, srcCallSignalAddress) */
	H323_EV_RASNAT,	  /* GRQ's, RRQ's, IRR's rasAddress, LRQ's replyAddress */
	H323_EV_SIGADDR,  /* RCF's, URQ's, IRR's callSignalAddress items */
};

#define H323_MAX_EVENTS 1024

struct h323_event {
	uint8_t tag;
	uint32_t val; /* the choice, or an offset from the start of the buffer */
};

struct h323_events {
	uint32_t n;
	struct h323_event ev[H323_MAX_EVENTS];
};

/* DecodeQ931: a Q.931 message (the TPKT's payload) and its user-user
 * information element's H323-UserInformation; offsets are from buf */
int nftdp_h323_decode_q931(const uint8_t *buf, uint32_t len, struct h323_events *out);
/* DecodeRasMessage */
int nftdp_h323_decode_ras(const uint8_t *buf, uint32_t len, struct h323_events *out);
/* DecodeMultimediaSystemControlMessage */
int nftdp_h323_decode_h245(const uint8_t *buf, uint32_t len, struct h323_events *out);

#endif
